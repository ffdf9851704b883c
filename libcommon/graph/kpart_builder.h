/*
 * kpart_builder: the steps of a partition build (kpart(1)), for the kpart
 * program's driver (cmd/kpart/kpart_build.c, which lists them) and the
 * files that do them: kpart_input.c reads the edges and deals them out
 * (passes 1 and 2), kpart_csc.c turns buckets into CSC and relabels,
 * kpart_devbuild.c does the same on a kpart_device (kpart_dev.h).
 * Not for other callers.
 */
#ifndef KPART_BUILDER_H
#define KPART_BUILDER_H

#include <stdint.h>

#include "kcomm.h"
#include "kedge.h"
#include "kgen.h"
#include "kgen_dev.h"
#include "kpart.h"
#include "kpart_internal.h"

/* n / d by multiplication (one correction step at most): fdiv_q in kpart_input.c */
typedef struct fdiv {
	uint64_t d, m;
} fdiv;

typedef struct plan {
	kpart_grid g;
	int R, C, RC, P, me;
	int keep;           /* -1: this rank counts every part's keys (one process, or
			     * the exchange); else it reads the whole input and keeps
			     * only part keep's (= me: all ranks on one host) */
	int shared;         /* keep -1 on one host (KBFS_KPART_SHARED=1): each rank
			     * reads its slice and drops every part's keys straight
			     * into the owners' buckets in shared memory */
	int rowdeg;         /* several ranks, one column (Rx1): a rank's rows are the
			     * vertices it owns, whose tuple degrees (1) and, with the
			     * degree order, degrees (2) are counted per row as the CSC
			     * is built, instead of summed over the column
			     * (KBFS_KPART_ROWDEG=0: 0, the ablation) */
	fdiv fnb;
	uint32_t *vi, *vj;  /* vertex block -> grid (i, j) of its owner */
	int br, bc, rbits;  /* bits of a local row, column; residual */
	int res64, idx64, off64_all;
	uint64_t nbk, rmask, rowmask;
} plan;

/* Buckets counted: every part's, or the kept part's alone. */
static inline size_t kpart_nhist(const plan *pl)
{
	return (size_t)(pl->keep < 0 ? pl->RC : 1) * pl->nbk;
}

/* One part being built (P(i,j)). */
typedef struct part {
	int p, i, j;
	uint64_t E;       /* keys received */
	uint64_t *bstart; /* nbk + 1 */
	uint64_t *bfill;
	void *res;        /* E residuals */
	uint64_t *pre;    /* ncols: column counts before dedup (NULL with plan.rowdeg & 1) */
	uint64_t *rtd;    /* plan.rowdeg & 1: nrows, row counts before dedup (tdeg) */
	uint64_t *rdeg;   /* plan.rowdeg & 2: nrows, row counts after dedup (degrees) */
	/* plan.shared, pass 2: where this rank's keys of each part and bucket
	 * start (kpart_nhist of them), every part's residuals (P), the window */
	uint64_t *sbase;
	void **speer;
	kcomm_shared *win;
	kpart_block b;
} part;

/* The tuples this rank reads: a slice of a file or chunks held in memory. */
typedef struct source {
	kedge_reader *r;
	uint64_t first, n;
	unsigned char *mem;
	int w;  /* id bytes */
	int fd; /* a file: its own descriptor (pread from any thread), -1 if none */
	uint64_t at, nv; /* the file's first tuple at byte at; ids below nv */
	const char *name;
	void *map;     /* the file mapped (mem its slice), else NULL (KBFS_KPART_MMAP=0, or not mappable) */
	size_t maplen;
	/* kpart -s fed (on the GPUs by default, KBFS_KPART_FEED): the tuples made again for each pass,
	 * chunk after chunk (w 8: the generator's u64 pairs), the chunk being
	 * read at feedp (its first tuple feed_first); crc_w the id width of the
	 * bytes the CRC is taken over (kgen's edge file's), 0: w */
	struct kpart_feed *feed;
	const unsigned char *feedp;
	uint64_t feed_first;
	int crc_w;
} source;

/* Tuples [*first, *first + *n) of ne: rank r's slice of P. */
static inline void kpart_slice(uint64_t ne, int r, int P, uint64_t *first, uint64_t *n)
{
	*first = (uint64_t)((unsigned __int128)ne * (unsigned)r / (unsigned)P);
	*n = (uint64_t)((unsigned __int128)ne * (unsigned)(r + 1) / (unsigned)P) - *first;
}

/* kpart_stage.c: on one host, a stream with a raw payload read by rank 0 (r)
 * into memory that every rank maps (the segments of shared memory files,
 * populated ahead of the reading on rank 0's other threads): s->map and
 * s->mem its first tuple, s->nv, s->w, s->name set, *crc and *size the
 * trailer's (all ranks), *staged 1; the caller then reads it as it would a
 * file.  *staged 0 and nothing read where it cannot be done (several hosts,
 * a compressed payload, KBFS_KPART_STAGE=0, the segments not mapped on
 * some rank): the stream is then dealt out.  Collective. */
int kpart_stage(kcomm *comm, kedge_reader *r, const char *name, const kedge_info *info, source *s, uint32_t *crc,
		uint64_t *size, int *staged);
/* The Kronecker graph g generated where a staged stream would be (the same
 * shared segments; kpart -s), each rank its slice of tuples as idbytes-wide
 * ids (kpart_gen_slice: on dev, or the OpenMP threads): s set as
 * kpart_stage sets it, *staged 1.  Where that cannot be (several hosts,
 * KBFS_KPART_STAGE=0, the segments not mapped) each rank's slice goes to
 * its own memory instead (s->mem, s->n, as a dealt stream's), *staged 0.
 * Either way *crc is the CRC of all tuples' bytes (what kgen's trailer
 * would hold; every rank).  0 or a KEXIT code.  Collective. */
int kpart_stage_gen(kcomm *comm, kgen_device *dev, const kgen_ctx *gen, int idbytes, source *s, uint32_t *crc,
		    int *staged);
/* Tuples [first, first + n) of g as idbytes-wide little-endian ids into
 * dst, *crc extended over their bytes, on the OpenMP threads. */
void kpart_gen_tuples(const kgen_ctx *g, uint64_t first, uint64_t n, int idbytes, unsigned char *dst, uint32_t *crc);
/* The same on dev when not NULL (opened, two slots of KGEN_DEVICE_CHUNK
 * edges allocated, closed again: collective), each chunk encoded while the
 * device makes the next; else kpart_gen_tuples.  0 or a KEXIT code. */
int kpart_gen_slice(kcomm *comm, kgen_device *dev, const kgen_ctx *g, uint64_t first, uint64_t n, int idbytes,
		    unsigned char *dst, uint32_t *crc);
/* kpart -s fed chunk by chunk (the default on the GPUs; KBFS_KPART_FEED): the
 * Kronecker graph g made again for each pass, on dev (opened here, two
 * slots: collective) or on the OpenMP threads, in a multiple of P chunks
 * of at most KGEN_DEVICE_CHUNK tuples (KBFS_KGEN_CHUNK=N: N); no tuples
 * held.  A pass calls kpart_feed_begin, then for each chunk c in order
 * kpart_feed_get (its tuples as u64 pairs, valid until kpart_feed_put(c),
 * which lets the device make chunk c + 2 meanwhile). */
typedef struct kpart_feed kpart_feed;
int kpart_feed_open(kcomm *comm, kgen_device *dev, const kgen_ctx *g, kpart_feed **out);
uint64_t kpart_feed_chunks(const kpart_feed *f);
void kpart_feed_begin(kpart_feed *f);
const uint64_t *kpart_feed_get(kpart_feed *f, uint64_t c, uint64_t *first, uint64_t *n);
void kpart_feed_put(kpart_feed *f, uint64_t c);
double kpart_feed_waited(const kpart_feed *f); /* seconds the gets of this pass waited */
void kpart_feed_close(kpart_feed *f);
/* kpart_input.c */
int kpart_source_file(source *s, const char *input, uint64_t size, uint64_t ne, int idbytes, uint64_t nv);
void kpart_source_close(source *s);
int kpart_slots(const plan *pl);
int kpart_pass1(const plan *pl, kcomm *comm, source *s, uint32_t *crc, uint64_t *hist, uint64_t *ht, int S,
		uint64_t *selfloops);
/* plan.shared: part pt of rank me (of P) sized from every rank's pass-1
 * counts (hist, kpart_nhist entries: every part's keys of this rank's
 * slice), its buckets in a shared window with every part's residuals
 * (pt->speer), where pass 2 drops keys from every rank (collective) */
void kpart_shared_part(const plan *pl, kcomm *comm, const uint64_t *hist, int P, int me, part *pt);
int kpart_pass2(const plan *pl, kcomm *comm, source *s, part *parts, uint64_t *ht, int S, uint64_t round,
		const char *input);
/* kpart_csc.c */
void kpart_build_csc(const plan *pl, part *pt);
/* The block of pt once its nnz rows are packed at the front of pt->res:
 * rowidx (pt->res, shrunk), sizes, grid place; the buckets freed. */
void kpart_csc_done(const plan *pl, part *pt, uint64_t nnz);
void kpart_remap_csc(const plan *pl, kpart_block *b, const uint64_t *colperm, const uint64_t *rowperm);
void kpart_degree_order(const uint64_t *deg, uint64_t nb, uint64_t *newpos);

/* kpart_devbuild.c: steps 5 and 6 on a kpart_device (kpart_dev.h) */
struct kpart_device;
typedef struct kpart_devbuild {
	struct kpart_device *d;
	uint64_t *keys, *tmp; /* a part's deduplicated keys kept on the device, its sort buffer */
	void *scratch;
	uint64_t nkeys, cap;
	int part;             /* whose keys (-1: none) */
	uint64_t pieces;      /* pieces the CSCs were built in */
	int finished;         /* parts whose relabelling and CSR the device made */
	double seconds;       /* host time in these calls */
	int fallback;         /* --engine auto: a part that does not fit is built on the host */
	uint64_t on_host;     /* parts whose CSC the host built that way */
} kpart_devbuild;
/* The CSC of pt (as kpart_build_csc); keep: its keys may stay on the
 * device for kpart_dev_finish.  0 or KEXIT_RESOURCE after kerror() when
 * not even one bucket fits; -1 instead (nothing said, nothing changed)
 * with db->fallback, for the host to build it. */
int kpart_dev_csc(const plan *pl, part *pt, kpart_devbuild *db, int keep);
/* With colperm and rowperm, the CSC renamed (as kpart_remap_csc); then
 * b->rowptr, the CSR's row offsets (as kpart_row_offsets; b->colidx stays
 * NULL: rank files do not store it).  0, or -1 when it does not fit the
 * device: nothing changed, the host does it. */
int kpart_dev_finish(const plan *pl, part *pt, kpart_devbuild *db, const uint64_t *colperm, const uint64_t *rowperm);
/* Free what the device still holds. */
void kpart_devbuild_drop(kpart_devbuild *db);

#endif

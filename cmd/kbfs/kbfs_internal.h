/*
 * kbfs_internal: the state of one kbfs program run, shared by the files of
 * the run driver (kbfs_run.c: the run; kbfs_load.c: the partition and the
 * job; kbfs_plan.c: the CPU engine's --dry-run; kbfs_roots.c: root choice;
 * kbfs_out.c: depth, predecessor and JSON files; kbfs_opts.c: the names
 * of the options' choices).  kbfs_run.c calls the others; they call none
 * of it.  Not for other callers.
 */
#ifndef KBFS_INTERNAL_H
#define KBFS_INTERNAL_H

#include "kbfs_run.h"
#include "kidmap.h"

enum { KBFS_HOST_LEN = 64 }; /* bytes per host name in kbfs_run.hosts */

/* One root and its search's results (times and levels are rank 0's). */
typedef struct kbfs_root {
	uint64_t input, internal, tdeg;
	double time, validate_time;
	double pred_time; /* kbfs_ctx.pred_time of rank 0 */
	uint64_t nedge, reached;
	int maxdepth;
	int valid;
	int device_miss;    /* the device's check failed and handed the tree to kval (with the
			     * engine's check, a root without it was decided on the device) */
	kbfs_level *lv;
	size_t nlv;
} kbfs_root;

typedef struct kbfs_run {
	kcomm *world;
	const kbfs_opts *o;
	kbfs_device *dev; /* the device engine on offer, or NULL */
	const char *dir;
	int rank, size;
	kpart_manifest man;   /* rank 0, from kbfs_check_grid to the end of kbfs_load */
	kpart_block blk;
	int csr_on_device;    /* the CUDA engine makes blk's colidx (kbfs_load leaves it NULL) */
	const kpart_block *b; /* &blk once loaded */
	kbfs_engine eng;
	kbfs_transport tr;
	kbfs_ctx ctx;
	double load_time, construction_time, generation_time;
	int scale;         /* SCALE of the statistics block */
	double edgefactor; /* edgefactor of the statistics block */
	const char *construction_from, *generation_from;
	char *hosts; /* size * KBFS_HOST_LEN bytes */
	int local_ranks, threads;
	int json_stdout;
	int data_stdout;    /* --depth-out - or --pred-out -: the report goes to stderr */
	char started[32];   /* the run's start, UTC (kprov_utc_now) */
	kidmap inv;     /* input id -> local owned vertex (when the block has orig) */
	unsigned char *comp; /* --roots-from largest: nb flags, the owned vertices in the component */
	uint64_t comp_from, comp_size; /* ... the vertex its search started from (input id), vertices reached */
	kbfs_root *res;
	size_t nres;
	uint64_t *mypred;   /* nb packed entries of this rank */
	uint64_t *pred;     /* N entries, block order (all ranks, or rank 0) */
	uint64_t *orig_all; /* rank 0: N input ids (NULL: identity) */
	uint64_t *order;    /* rank 0: real vertices sorted by input id */
	uint64_t nreal;
	size_t *cnt, *dsp;  /* per rank: nb*8 bytes at its block */
	double hmean;
	size_t small_roots;     /* roots whose search reached < KSTAT_SMALL_FRACTION of the widest */
	double largest_reached; /* the widest search's vertices */
} kbfs_run;

/* kbfs_load.c: collective; KEXIT codes */
int kbfs_check_grid(kbfs_run *r);
int kbfs_load(kbfs_run *r);
void kbfs_hosts(kbfs_run *r);
void kbfs_set_threads(kbfs_run *r, int want);
/* what e->setup gets (and --dry-run plans with) */
kbfs_engine_conf kbfs_engine_conf_of(const kbfs_run *r);
/* kbfs_plan.c: --dry-run with the CPU engine; collective */
int kbfs_dry_run_cpu(kbfs_run *r);
/* kbfs_roots.c: fill r->res / r->nres; collective; KEXIT code; with
 * --roots-from largest it searches (untimed), so r->ctx must be ready */
int kbfs_choose_roots(kbfs_run *r);
/* kbfs_out.c (rank 0) */
int kbfs_prepare_files(kbfs_run *r);
int kbfs_write_files(kbfs_run *r, const kbfs_root *rt);
int kbfs_write_json(kbfs_run *r);

#endif

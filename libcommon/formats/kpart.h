/*
 * kpart: the 2D partition of the adjacency matrix (Yoo et al.; Ueno; Bisson).
 *
 * Owns the partition math, the in-memory block of one rank, the rank files
 * and the manifest (documented in kpart(5)).  The builder behind the kpart
 * program writes them through here (cmd/kpart/kpart_build.h); kbfs,
 * kvalidate and kstat read partitions through here.
 *
 * Math.  nv input vertices are padded to N, the smallest multiple of
 * R*C*64 that is >= nv, so every vertex block has nb = N/(R*C) vertices,
 * a multiple of 64 (bitmap words never straddle blocks).  Vertex block b
 * (vertices [b*nb, (b+1)*nb)) is owned by processor P(i,j) with b = j*R + i.
 * MPI rank of P(i,j) is i*C + j (row-major over the grid).
 * Processor column j owns the contiguous range [j*R*nb, (j+1)*R*nb) (N/C
 * vertices); processor row i owns blocks {m*R + i : m = 0..C-1} (N/R
 * vertices, not contiguous).
 * P(i,j) stores every directed edge u -> v with u in column range j and v
 * in row blocks of i.  Local column of u: u - j*R*nb.  Local row of v in
 * block m*R+i: m*nb + (v - (m*R+i)*nb).  So the owner of every local row
 * sits in processor row i at grid column m = local_row / nb.
 *
 * Content.  Every input tuple (u,v) with u != v is stored as u->v and v->u;
 * self-loops are counted, not stored; duplicate directed edges are
 * collapsed (the structure holds the deduplicated set).  For exact TEPS
 * (reference 3.0.1 counting) each rank keeps, for its owned block, tdeg[k]
 * = the number of non-self-loop input tuples incident to owned vertex k
 * with duplicates counted; nedge of a BFS = sum of tdeg over reached
 * vertices / 2.
 * Each block holds CSC (colptr[ncols+1], rowidx[nnz] sorted per column) for
 * top-down and CSR (rowptr[nrows+1], colidx[nnz] sorted per row) for
 * bottom-up, all contiguous so they can be copied straight to a device.
 * A rank file (format 2) stores the CSC and rowptr only: colidx, the
 * transpose of the CSC, is made by the reader (kpart_block_csr, on all
 * threads; the CUDA engine makes it on the device) and checked against
 * the stored rowptr.
 * Local indices are u32 when ncols and nrows fit (idx64 == 0), u64
 * otherwise; offsets are always u64 in memory (u32 on disk when nnz fits).
 *
 * Ids.  An optional relabeling (--relabel degree) permutes ids inside each
 * owned block; orig[k] maps owned vertex k (internal, after relabel) back
 * to the input's own id (the import map applied too).  When the graph has
 * neither map nor relabeling, orig is NULL and ids are their own.
 * Relabelling puts higher (deduplicated) degrees first, ties by id, so
 * padding vertices (ids nv..N-1, no edges, tdeg 0) keep their places and
 * have orig == KPART_NO_VERTEX.
 *
 * Who calls what.  kbfs and kvalidate: kpart_manifest_grid (refuse R*C !=
 * ranks, naming both), kpart_load / kpart_block_free.  kstat: kpart_report,
 * kpart_heatmap_values, kpart_device_bytes.  kpart (the program):
 * kpart_build (cmd/kpart/kpart_build.h), kpart_check, kpart_dump.  Everything returns 0 or a KEXIT_*
 * code after printing one line with kerror().
 */
#ifndef KPART_H
#define KPART_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kcomm.h"

#define KPART_MAJOR 2
#define KPART_MINOR 0

typedef struct kpart_grid {
	int R, C;
	uint64_t nv; /* input vertices */
	uint64_t N;  /* padded: multiple of R*C*64 */
	uint64_t nb; /* N / (R*C) */
} kpart_grid;

/* Fill g for nv vertices on R x C; returns 0 or -1 when impossible. */
int kpart_grid_init(kpart_grid *g, uint64_t nv, int R, int C);
static inline int kpart_rank_of(const kpart_grid *g, int i, int j) { return i * g->C + j; }
static inline uint64_t kpart_block_of(const kpart_grid *g, uint64_t v) { return v / g->nb; }
static inline int kpart_owner_row(const kpart_grid *g, uint64_t v) { return (int)(kpart_block_of(g, v) % (uint64_t)g->R); }
static inline int kpart_owner_col(const kpart_grid *g, uint64_t v) { return (int)(kpart_block_of(g, v) / (uint64_t)g->R); }
static inline int kpart_owner(const kpart_grid *g, uint64_t v) { return kpart_rank_of(g, kpart_owner_row(g, v), kpart_owner_col(g, v)); }
/* first vertex of the block owned by P(i,j) */
static inline uint64_t kpart_owned_first(const kpart_grid *g, int i, int j) { return ((uint64_t)j * g->R + i) * g->nb; }
/* first vertex of processor column j */
static inline uint64_t kpart_col_first(const kpart_grid *g, int j) { return (uint64_t)j * g->R * g->nb; }
/* local row index at P(i,.) of a vertex v owned in processor row i */
static inline uint64_t kpart_local_row(const kpart_grid *g, uint64_t v)
{
	uint64_t b = v / g->nb;
	return (b / (uint64_t)g->R) * g->nb + (v % g->nb);
}
/* global vertex of local row r at processor row i */
static inline uint64_t kpart_row_vertex(const kpart_grid *g, int i, uint64_t r)
{
	uint64_t m = r / g->nb;
	return (m * (uint64_t)g->R + (uint64_t)i) * g->nb + r % g->nb;
}

/* One rank's block, as loaded in memory. */
typedef struct kpart_block {
	kpart_grid g;
	int i, j;         /* grid position; rank = i*C + j */
	uint64_t ncols;   /* N / C */
	uint64_t nrows;   /* N / R */
	uint64_t nnz;     /* stored directed edges */
	int idx64;        /* local indices are u64 (else u32) */
	uint64_t *colptr; /* ncols + 1 */
	void *rowidx;     /* nnz (u32 or u64) */
	uint64_t *rowptr; /* nrows + 1 */
	void *colidx;     /* nnz (u32 or u64) */
	uint64_t *tdeg;   /* nb: tuple degree of each owned vertex (duplicates counted) */
	uint64_t *orig;   /* nb: input id of each owned vertex, or NULL (identity) */
	void *map;        /* KBFS_LOAD_MMAP=1: the rank file's mapping rowidx points into, or NULL */
	size_t maplen;
	/* from the manifest */
	uint64_t ne_input;   /* input tuples */
	uint64_t selfloops;  /* self-loop tuples in the input */
	int relabel;         /* 0 none, 1 degree */
	uint64_t seed1, seed2; /* generator seeds (2, 3 for imported graphs) */
	int scale;           /* Kronecker scale or 0 */
	uint64_t edgefactor;
} kpart_block;

/* Entry k of a local index array (colidx, rowidx): u64 when idx64, else u32. */
static inline uint64_t kpart_idx(const void *a, int idx64, uint64_t k)
{
	return idx64 ? ((const uint64_t *)a)[k] : ((const uint32_t *)a)[k];
}

/* A hash of the ordered pair (a, b) (h(a, b) != h(b, a) in general): the
 * symmetry checks sum h(u, v) and h(v, u) over the stored entries, which
 * agree when every entry has its mirror (kpart_block_symmetric, the CUDA
 * engine's check of a 1x1 block, kstat's check of a whole partition).
 * Host and device alike. */
#ifdef __CUDACC__
#define KPART_HD static __host__ __device__ __forceinline__
#else
#define KPART_HD static inline
#endif
KPART_HD uint64_t kpart_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}
KPART_HD uint64_t kpart_pair_hash(uint64_t a, uint64_t b) { return kpart_mix(kpart_mix(a) ^ b); }

/* Load rank file of P(i,j) of partition DIR (rank = i*C + j).  Checks the
 * manifest, size and CRC.  Returns 0 or a KEXIT code after kerror(). */
int kpart_load(const char *dir, int rank, kpart_block *b);
void kpart_block_free(kpart_block *b);
/* Read only the manifest's grid and sizes (no rank file). */
int kpart_manifest_grid(const char *dir, int *R, int *C, uint64_t *nv);

/* ------------------------------------------------------------------------
 * Everything below extends the contract above without changing it.
 */

enum { KPART_RELABEL_NONE = 0, KPART_RELABEL_DEGREE = 1 };
/* "none", "degree", NULL: by KPART_RELABEL_* */
extern const char *const kpart_relabel_names[];
static inline const char *kpart_relabel_name(int relabel)
{
	return kpart_relabel_names[relabel ? KPART_RELABEL_DEGREE : KPART_RELABEL_NONE];
}

/* The largest grid kpart builds and reads (R*C processors). */
#define KPART_MAX_PROCS (1u << 24)

/* Padding vertices (ids nv .. N-1) have this in orig[]. */
#define KPART_NO_VERTEX UINT64_MAX

/* Rank file "rank-NNNNN.kpart" (kpart(5)), all integers little-endian:
 *   0  magic 89 4B 50 41 52 54 0D 0A ("\x89KPART\r\n")
 *   8  u16 major, u16 minor, u32 flags (KPART_F_*)
 *  16  u32 R, u32 C, u32 i, u32 j
 *  32  u64 nv, N, nb, ncols, nrows, nnz
 *  80  u64 reserved (0)
 *  88  u32 CRC32 of bytes 0..87, u32 zero
 *  96  colptr[ncols+1] (u32, u64 with KPART_F_OFF64), rowidx[nnz] (u32, u64
 *      with KPART_F_IDX64), rowptr[nrows+1], tdeg[nb] (u64), orig[nb]
 *      (u64, only with KPART_F_ORIG); no colidx (format 1 had colidx[nnz]
 *      after rowptr, and is refused: kpart_rebuild_hint)
 *      trailer: "KEND", u64 nnz, u32 CRC32 of every byte before the
 *      trailer, u32 CRC32 of the 16 trailer bytes before it.
 * The manifest records each rank file's size and the CRC32 of all of it. */
#define KPART_MAGIC_LEN 8
/* The rank file's magic, in the header so that kmagic (format detection,
 * which kpart.c's messages use) needs nothing of kpart.c. */
static inline const unsigned char *kpart_magic_bytes(void)
{
	static const unsigned char m[KPART_MAGIC_LEN] = {0x89, 'K', 'P', 'A', 'R', 'T', '\r', '\n'};
	return m;
}
#define kpart_magic (kpart_magic_bytes())
enum {
	KPART_F_IDX64 = 1u << 0,   /* local indices are u64 */
	KPART_F_OFF64 = 1u << 1,   /* offsets are u64 on disk */
	KPART_F_ORIG = 1u << 2,    /* orig[] follows tdeg[] */
	KPART_F_RELABEL = 1u << 3, /* ids were relabelled by degree */
	KPART_HEADER_BYTES = 96,
	KPART_TRAILER_BYTES = 20,
};
/* "rank-00042.kpart" */
void kpart_rank_file(char *buf, size_t len, int rank);

/* ---- the manifest: DIR/manifest, "key = value" lines (kpart(5)) ---- */
typedef struct kpart_rankinfo {
	char *file;
	uint64_t bytes;    /* size of the rank file */
	uint32_t crc;      /* CRC32 of the whole rank file */
	uint64_t nnz;      /* stored directed edges */
	uint64_t cols;     /* non-empty local columns */
	uint64_t rows;     /* non-empty local rows */
	double csr_seconds; /* kpart_write_rank: time spent counting the CSR's row offsets */
	double sync_seconds; /* kpart_write_rank: time spent in fsync(2) */
} kpart_rankinfo;

typedef struct kpart_manifest {
	int major, minor;
	kpart_grid g;
	uint64_t M, selfloops, nnz;
	int relabel, idx64;
	int scale;
	uint64_t edgefactor, seed1, seed2;
	kpart_rankinfo *ranks; /* R*C entries */
	/* every line, in file order (keys[k] = vals[k]) */
	size_t nkeys;
	char **keys, **vals;
} kpart_manifest;

/* Read and check DIR/manifest (its own checksum line included).
 * Returns 0 or a KEXIT code after kerror(). */
int kpart_manifest_read(const char *dir, kpart_manifest *m);
/* The value of key, or NULL. */
const char *kpart_manifest_get(const kpart_manifest *m, const char *key);
void kpart_manifest_free(kpart_manifest *m);

/* Load rank `rank` with a manifest already read (kpart_load reads it). */
int kpart_load_with(const char *dir, const kpart_manifest *m, int rank, kpart_block *b);
/* The same; with KPART_LOAD_NO_COLIDX b->colidx stays NULL (the CUDA
 * engine makes it on the device; kpart_block_csr makes it here later). */
enum { KPART_LOAD_NO_COLIDX = 1 };
int kpart_load_flags(const char *dir, const kpart_manifest *m, int rank, kpart_block *b, int flags);
/* b->colidx as the transpose of b's CSC (kpart_transpose), checked against
 * b->rowptr: 0, or -1 when they disagree (a corrupt block; b unchanged).
 * A 1x1 block (unless KBFS_SYM=0) is checked symmetric instead
 * (kpart_block_symmetric) and colidx is rowidx itself: 0, -1 or -2.
 * b's offsets and indices must be in range (kpart_load checks them). */
int kpart_block_csr(kpart_block *b);
/* Whether a square block is symmetric: 0; -1 when rowptr differs from
 * colptr; -2 when an entry (r, c) lacks its (c, r) (the sums of a hash of
 * (r, c) and of (c, r) over the entries differ).  All threads. */
int kpart_block_symmetric(const kpart_block *b);
/* The one line for kpart_block_csr's failure rc */
const char *kpart_csr_error(int rc);
/* "kpart -R R -C C [--relabel none] --force -o DIR SOURCE": the command that
 * rebuilds the partition of manifest m (at DIR) in this version's format. */
void kpart_rebuild_hint(const kpart_manifest *m, const char *dir, char *buf, size_t len);
/* Only what kpart_load_with checks before the arrays: the rank file's size
 * and its header against the manifest.  0 or a KEXIT code after kerror(). */
int kpart_rank_header_ok(const char *dir, const kpart_manifest *m, int rank);

/* ---- writing (the builder's side of the format) ---- */
/* Append the line "key = value" (printf-style; newlines become spaces). */
void kpart_manifest_add(kpart_manifest *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Write "# comment", m's lines and, when checksum, the closing
 * "checksum = XXXXXXXX" line to PATH; messages name NAME. */
int kpart_manifest_write(const kpart_manifest *m, const char *path, const char *name, const char *comment,
			 int checksum);
/* Write block b (b->relabel and b->orig set the flags) as a rank file at
 * PATH, messages naming NAME; off64 forces 64-bit offsets.  b->colidx is
 * not used (not stored); when b->rowptr is NULL it is counted on the way
 * (kpart_row_offsets).  Fills ri's bytes, crc, nnz, cols and rows. */
int kpart_write_rank(const char *path, const char *name, const kpart_block *b, int off64, kpart_rankinfo *ri);
/* The CSR of b (rowptr[nrows+1], colidx[nnz] of b's index width) as the
 * transpose of its CSC: rows sorted, columns ascending within each row, the
 * same whatever the threads.  With 64-bit indices rowptr[0] = 1 where a
 * column's rows were not sorted (a corrupt block). */
void kpart_transpose(const kpart_block *b, uint64_t *rowptr, void *colidx);
/* rowptr[nrows+1] alone: the rows of b's CSC counted, on all threads. */
void kpart_row_offsets(const kpart_block *b, uint64_t *rowptr);
/* Over ascending offsets off[]: the end of the longest run of whole
 * segments from a that holds at most n entries, the largest b in (a, hi]
 * with off[b] - off[a] <= n, and at least a + 1 (one segment longer than n
 * alone).  Batches of columns or rows of bounded size. */
uint64_t kpart_span_end(const uint64_t *off, uint64_t a, uint64_t hi, uint64_t n);
/* The output directory: strip outdir's trailing slashes (in place), refuse
 * an existing outdir unless force, and then anything but a kbfs partition
 * (a directory of a manifest kpart wrote, build-info and rank files, and
 * nothing else) or an empty directory; make the temporary sibling
 * DIR.kbfs-tmp-XXXXXX with its lock (ktemp_mkdir: registered for removal
 * by kdie(), stale ones of dead runs swept) into tmpdir.  Returns 0 or
 * KEXIT_IO. */
int kpart_dir_begin(char *outdir, int force, char *tmpdir, size_t len);
/* Put the complete tmpdir (synced to disk) in outdir's place: with force
 * an old one (still a partition, looked at again) is swapped out
 * atomically where the system can, then removed;
 * without, an outdir that another process made meanwhile is an error
 * (KEXIT_IO) and left alone. */
int kpart_dir_commit(const char *tmpdir, const char *outdir, int force);

/* The numbers of DIR/build-info (how the partition was built: written
 * beside the manifest and deliberately outside its checksum since timings
 * vary, e.g. construction_time), from one read of the file: found[k] = 1
 * and vals[k] for each of keys[0..n) that a line "key = value" gives as a
 * number >= 0 (the first line of the key), else found[k] = 0.  0, or a
 * KEXIT code after kerror() when the file cannot be read. */
int kpart_build_info_read(const char *dir, const char *const *keys, size_t n, double *vals, int *found);

/* ---- checking and dumping (kpartstat.c) ---- */
/* Verify a partition: manifest checksum, every rank file present, its size
 * and CRC, headers, sorted in-range indices, stored rowptr = the CSC's, no
 * self-loops, tdeg and nnz totals, orig a bijection, global symmetry.
 * One line per problem; returns 0 or KEXIT_DATA (KEXIT_IO: unreadable). */
int kpart_check(const char *dir, int verbose);
/* Print every stored directed edge: "u v" in the input's own ids
 * (layout == 0), or "rank u v" in internal ids (layout != 0). */
int kpart_dump(const char *dir, FILE *out, int layout);

/* ---- reports ---- */
/* Device bytes kbfs needs on one rank (kpart(5) gives the formula):
 *   8*(ncols+1) + 8*(nrows+1) + 2*nnz*w   CSC + CSR, w = 4 or 8 (on a 1x1
 *                                          grid the symmetric block once:
 *                                          8*(ncols+1) + nnz*w)
 *   + 8*nb                                 tdeg
 *   + 4*ncols/8 + 4*nrows/8                 8 bitmaps (4 of N/C, 4 of N/R bits)
 *   + 4*8*nb                                4 nb-sized u64 arrays */
uint64_t kpart_device_bytes(const kpart_grid *g, uint64_t nnz, int idx64);
/* ---- estimates before building (kpart_estimate.c, kpart --dry-run) ---- */
typedef struct kpart_estimate {
	uint64_t nv, M;
	int R, C;
	kpart_grid g;
	int idx64;
	uint64_t nnz_rank;        /* the busiest rank's stored edges (upper estimate) */
	uint64_t rank_file_bytes; /* its rank file (kpart(5)'s size formula) */
	uint64_t edge_file_bytes; /* the kedge file of M tuples */
	uint64_t device_bytes;    /* kpart_device_bytes of the busiest rank */
	uint64_t build_device_bytes; /* kpart --engine cuda: the busiest rank's block in one piece */
	uint64_t host_bytes;      /* kbfs --engine cpu on the busiest rank: its block, the engine's
				   * row and vertex arrays, validation's 13 bytes a vertex */
	uint64_t build_keys_bytes;   /* kpart: the busiest rank's keys on the host (64-bit) */
	uint64_t build_tuples_bytes; /* kpart: the tuples' bytes, held once on a host */
} kpart_estimate;
/* From nv vertices and M tuples on an R x C grid: nnz per rank at most
 * 2M/(R C) (no duplicate or self-loop removed), 15% more on the busiest
 * rank when R C > 1.  0, or -1 when the grid does not fit the graph. */
int kpart_estimate_make(uint64_t nv, uint64_t M, int R, int C, kpart_estimate *e);
/* The most square grid (R <= C) of the fewest ranks, a power of two, whose
 * estimate fits GPUs of gpu_bytes: 0, or -1 when none of up to
 * KPART_MAX_PROCS does. */
int kpart_estimate_fit(uint64_t nv, uint64_t M, uint64_t gpu_bytes, int *R, int *C);
/* Lines in human units under the title what; with gpu_bytes != 0, whether
 * it fits and the fewest GPUs of that size that would. */
void kpart_estimate_print(FILE *fp, const char *what, const kpart_estimate *e, uint64_t gpu_bytes);
/* The same as one JSON object (bytes): nv, M, R, C, nnz_rank_max,
 * index_bits, edge_file_bytes, rank_file_bytes_max, device_bytes_max,
 * build_device_bytes_max, host_bytes_max, host_available_bytes (this
 * machine's, 0 when unknown); with
 * gpu_bytes also fits, fewest_gpus and fewest_grid {R, C}. */
void kpart_estimate_json(FILE *fp, const kpart_estimate *e, uint64_t gpu_bytes);
/* "17.35 GiB", "512 B" (binary units) */
const char *kpart_human_bytes(char *buf, size_t len, uint64_t n);

/* Per-rank table (nb, nnz, non-empty columns and rows, bytes, device
 * bytes), edge imbalance (max/mean); json != 0 writes one JSON document.
 * Every rank file must be present with the manifest's size and CRC and a
 * header that matches the manifest first (KEXIT_DATA naming the file
 * otherwise, and nothing printed). */
int kpart_report(const char *dir, FILE *out, int json);
/* nnz of every block for a heat map: *vals = R*C doubles, row-major
 * (vals[i*C + j] is P(i,j)); the caller frees *vals. */
int kpart_heatmap_values(const char *dir, double **vals, int *R, int *C);

#endif

/*
 * kpart: the 2D partition of the adjacency matrix (Yoo et al.; Ueno; Bisson).
 *
 * Owns the partition math, the in-memory block of one rank, the rank files
 * and the manifest (documented in kpart(5)), and the builder behind the
 * kpart program.  kbfs, kvalidate and kstat read partitions through here.
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
 * Local indices are u32 when ncols and nrows fit (idx64 == 0), u64
 * otherwise; offsets are always u64 in memory (u32 on disk when nnz fits).
 *
 * Ids.  An optional relabeling (--relabel degree) permutes ids inside each
 * owned block; orig[k] maps owned vertex k (internal, after relabel) back
 * to the input's own id (the import map applied too).  When the graph has
 * neither map nor relabeling, orig is NULL and ids are their own.
 */
#ifndef KPART_H
#define KPART_H

#include <stddef.h>
#include <stdint.h>

#define KPART_MAJOR 1
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
	/* from the manifest */
	uint64_t ne_input;   /* input tuples */
	uint64_t selfloops;  /* self-loop tuples in the input */
	int relabel;         /* 0 none, 1 degree */
	uint64_t seed1, seed2; /* generator seeds (2, 3 for imported graphs) */
	int scale;           /* Kronecker scale or 0 */
	uint64_t edgefactor;
} kpart_block;

/* Load rank file of P(i,j) of partition DIR (rank = i*C + j).  Checks the
 * manifest, size and CRC.  Returns 0 or a KEXIT code after kerror(). */
int kpart_load(const char *dir, int rank, kpart_block *b);
void kpart_block_free(kpart_block *b);
/* Read only the manifest's grid and sizes (no rank file). */
int kpart_manifest_grid(const char *dir, int *R, int *C, uint64_t *nv);

#endif

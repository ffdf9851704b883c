/*
 * kgen: the Graph500 Kronecker generator and search-key (root) sampler.
 *
 * Bit-identical to the Graph500 reference generator (v3.x and v2.1.4) for
 * the same parameters: edge i is a pure function of (scale, edgefactor,
 * seeds, version, i), so any process or thread can generate any index range
 * and the result never depends on how the work is split.  See
 * ../shared/GRAPH500.md sections 1 and 2 for the facts it implements.
 * Vertex ids are 64-bit; scales 1..42 are supported, and the edge count
 * edgefactor << scale must fit in an int64 (kgen_nedges() returns 0 and
 * kgen_init() -1 otherwise).  All functions are thread-safe; the skip
 * tables are built once on first use.  kgen_edges() called from inside an
 * OpenMP parallel region runs on the calling thread only.
 */
#ifndef KGEN_H
#define KGEN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGEN_MAX_SCALE 42

typedef struct kgen_params {
	int scale;           /* 1 .. KGEN_MAX_SCALE */
	uint64_t edgefactor; /* edges = edgefactor << scale */
	uint64_t seed1, seed2;
	int version;         /* 3 (reference 3.x) or 2 (reference 2.1.4) */
} kgen_params;

/* The random stream: multiple recursive generator of order 5 mod 2^31-1. */
typedef struct kgen_mrg {
	uint32_t z1, z2, z3, z4, z5;
} kgen_mrg;

typedef struct kgen_ctx {
	kgen_params p;
	kgen_mrg seeded;    /* state after seeding from (seed1, seed2) */
	uint64_t val0, val1; /* scramble keys */
	uint64_t nedges;
} kgen_ctx;

/* Seed a stream from the two user seeds (GRAPH500.md sec. 1 "Seeding"). */
void kgen_mrg_seed(kgen_mrg *s, uint64_t seed1, uint64_t seed2);
/* Skip ahead hi*2^128 + mid*2^64 + lo steps. */
void kgen_mrg_skip(kgen_mrg *s, uint64_t hi, uint64_t mid, uint64_t lo);
/* One step; returns the new value in [0, 2^31-1). */
uint32_t kgen_mrg_next(kgen_mrg *s);

/* Prepare: seed, scramble keys.  Returns 0, or -1 for invalid parameters. */
int kgen_init(kgen_ctx *g, const kgen_params *p);
/* Number of edges (edgefactor << scale), 0 on overflow. */
uint64_t kgen_nedges(const kgen_params *p);
/* The scramble bijection on [0, 2^scale). */
uint64_t kgen_scramble(const kgen_ctx *g, uint64_t v);
/* Edge i before scrambling (src <= tgt). */
void kgen_edge_raw(const kgen_ctx *g, uint64_t i, uint64_t *src, uint64_t *tgt);
/* Edges [first, first+count) scrambled, into uv[2k], uv[2k+1].  Uses the
 * OpenMP threads available; the result does not depend on their number. */
void kgen_edges(const kgen_ctx *g, uint64_t first, uint64_t count, uint64_t *uv);

/* Search keys (GRAPH500.md sec. 2).  Draws candidate roots in the
 * reference's order from the stream seeded by (seed1, seed2); a candidate
 * is accepted when accept(v, arg) says it has a non-self-loop edge and it
 * was not chosen before (or the counter passes 2N, as in the reference).
 * N is the number of vertices (2^scale for Kronecker graphs, any N >= 1 for
 * imported ones).  Writes nroots roots; returns how many were found. */
typedef int (*kgen_accept_fn)(uint64_t v, void *arg);
int kgen_roots(uint64_t seed1, uint64_t seed2, uint64_t N, int nroots, kgen_accept_fn accept, void *arg,
	       uint64_t *roots);
/* The k-th candidate draw (counter = 2k) used by kgen_roots. */
uint64_t kgen_root_candidate(uint64_t seed1, uint64_t seed2, uint64_t N, uint64_t counter);

#ifdef __cplusplus
}
#endif
#endif

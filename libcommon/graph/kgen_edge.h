/*
 * kgen_edge: the generator's arithmetic per edge, one source for the CPU
 * (kgen.c) and the GPU (gpu/kgpu_gen.cu): the MRG step, the skip by a table
 * of matrix powers, the bit choices of an edge, the scramble, and a run of
 * consecutive edges built from them.  Every function is static inline and
 * pure (state in, state out); KGEN_HD makes them __host__ __device__ under
 * nvcc and plain in C, so both compilers build the same lines and the
 * device's edges are the CPU's by construction.  tests/unit/test_kgen_edge.c
 * checks these functions against kgen_edges() on the host.
 *
 * Arithmetic is modulo the Mersenne prime p = 2^31-1, so a 64-bit product
 * x is reduced by folding: x = (x & p) + (x >> 31) keeps x mod p unchanged
 * because 2^31 == 1 (mod p).  The generator state is a column vector
 * z = (z1..z5); one step is z <- A z with the companion matrix A (row 0 =
 * (a1,0,0,0,a5), row i = e_(i-1)); a skip by k steps is z <- A^k z, from a
 * table of A^(2^j) (kgen_pow2_table(), j = 0..191).  Edge i's stream starts
 * at the seeded state times A^(i*2^64) (GRAPH500.md sec. 1).
 */
#ifndef KGEN_EDGE_H
#define KGEN_EDGE_H

#include <stdint.h>

#include "kgen.h"

#ifdef __CUDACC__
#define KGEN_HD static __host__ __device__ __forceinline__
#else
#define KGEN_HD static inline
#endif

#define KGEN_MRG_P 0x7FFFFFFFu
#define KGEN_MRG_A1 107374182u
#define KGEN_MRG_A5 104480u

/* Rejection limits: a draw u < L is redrawn so that u % 10000 is uniform.
 * L = 0x7FFFFFFF mod 10000 in v3.x, 0xFFFFFFFF mod 10000 in v2.1.4 (the
 * latter is not exact for a 31-bit stream, but it is what v2 does). */
#define KGEN_L_V3 3647u
#define KGEN_L_V2 7295u

typedef uint32_t kgen_mat5[5][5];

#ifdef __cplusplus
extern "C" {
#endif
/* A^(2^j) for j = 0..191 (built once, thread-safe).  Edge steps use the
 * entries from 64 on: table + 64 + b is A^(2^b * 2^64). */
const kgen_mat5 *kgen_pow2_table(void);
#ifdef __cplusplus
}
#endif

/* Full reduction of x < 2^63 to [0, p). */
KGEN_HD uint32_t kgen_modp(uint64_t x)
{
	x = (x & KGEN_MRG_P) + (x >> 31); /* < 2^32 + 2^31 */
	x = (x & KGEN_MRG_P) + (x >> 31); /* <= p + 2 */
	if (x >= KGEN_MRG_P)
		x -= KGEN_MRG_P;
	return (uint32_t)x;
}

/* Partial reduction of a product (< 2^62) to < 2^32, same residue: five of
 * these add up without overflow before one full kgen_modp(). */
KGEN_HD uint64_t kgen_fold(uint64_t x) { return (x & KGEN_MRG_P) + (x >> 31); }

/* The MRG step's new value: a1*z1 + a5*z5 < 2^58 + 2^48, so one fold
 * leaves it below 2p and one conditional subtraction finishes. */
KGEN_HD uint32_t kgen_mrg_val(uint32_t z1, uint32_t z5)
{
	uint64_t s = (uint64_t)KGEN_MRG_A1 * z1 + (uint64_t)KGEN_MRG_A5 * z5;
	s = (s & KGEN_MRG_P) + (s >> 31);
	if (s >= KGEN_MRG_P)
		s -= KGEN_MRG_P;
	return (uint32_t)s;
}

/* One step; returns the new value in [0, p). */
KGEN_HD uint32_t kgen_mrg_step(kgen_mrg *s)
{
	uint32_t n = kgen_mrg_val(s->z1, s->z5);
	s->z5 = s->z4;
	s->z4 = s->z3;
	s->z3 = s->z2;
	s->z2 = s->z1;
	s->z1 = n;
	return n;
}

/* z <- M z for one state. */
KGEN_HD void kgen_mat_vec(const kgen_mat5 m, kgen_mrg *s)
{
	const uint32_t z[5] = {s->z1, s->z2, s->z3, s->z4, s->z5};
	uint32_t r[5];
	for (int i = 0; i < 5; i++) {
		uint64_t acc = 0;
		for (int k = 0; k < 5; k++)
			acc += kgen_fold((uint64_t)m[i][k] * z[k]);
		r[i] = kgen_modp(acc);
	}
	s->z1 = r[0], s->z2 = r[1], s->z3 = r[2], s->z4 = r[3], s->z5 = r[4];
}

/* Multiply by tab[b] for the set bits b of w: with tab = table + base,
 * a skip by w * 2^base steps (powers of A commute). */
KGEN_HD void kgen_skip_word(kgen_mrg *s, uint64_t w, const kgen_mat5 *tab)
{
	for (int b = 0; w; b++, w >>= 1)
		if (w & 1)
			kgen_mat_vec(tab[b], s);
}

/* ---- scramble ------------------------------------------------------------ */

KGEN_HD uint64_t kgen_bitrev64(uint64_t v)
{
#ifdef __CUDA_ARCH__
	return __brevll(v);
#else
	v = __builtin_bswap64(v);
	v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
	v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
	v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
	return v;
#endif
}

/* The scramble's keys, derived once so a loop keeps them in registers. */
typedef struct kgen_scr {
	uint64_t add, mul0, mul1;
	int shift;
} kgen_scr;

KGEN_HD kgen_scr kgen_scr_keys(const kgen_ctx *g)
{
	kgen_scr k = {g->val0 + g->val1, g->val0 | 0x4519840211493211ull, g->val1 | 0x3050852102C843A5ull,
		      64 - g->p.scale};
	return k;
}

/* The bijection on [0, 2^scale). */
KGEN_HD uint64_t kgen_scr_apply(const kgen_scr *k, uint64_t v)
{
	v += k->add;
	v *= k->mul0;
	v = kgen_bitrev64(v) >> k->shift;
	v *= k->mul1;
	v = kgen_bitrev64(v) >> k->shift;
	return v;
}

/* ---- one edge -------------------------------------------------------------- */

KGEN_HD uint32_t kgen_limit(int version) { return version == 2 ? KGEN_L_V2 : KGEN_L_V3; }

/* One level of an edge from an accepted draw u (>= the limit): the
 * quadrant's bits appended to *a (source) and *b (target), without
 * branches (the draws are random, so branches would mispredict).  *diag is
 * 1 while a == b: a (1,0) draw there is flipped to (0,1), so src <= tgt. */
KGEN_HD void kgen_level(uint32_t u, uint32_t *diag, uint64_t *a, uint64_t *b)
{
	u %= 10000;
	/* (0,1) u<1900, (1,0) u<3800, (0,0) u<9500, (1,1) else */
	uint32_t hiq = u >= 9500;
	uint32_t row = ((u >= 1900) & (u < 3800)) | hiq;
	uint32_t col = (u < 1900) | hiq;
	uint32_t flip = *diag & row & (col ^ 1); /* (1,0) on the diagonal -> (0,1) */
	row ^= flip;
	col ^= flip;
	*diag &= (row == col);
	*a = (*a << 1) | row;
	*b = (*b << 1) | col;
}

/* One edge before scrambling from its own stream (state consumed). */
KGEN_HD void kgen_edge_from(kgen_mrg *s, int scale, uint32_t lim, uint64_t *src, uint64_t *tgt)
{
	uint64_t a = 0, b = 0;
	uint32_t diag = 1;
	for (int l = 0; l < scale; l++) {
		uint32_t u = kgen_mrg_step(s);
		while (__builtin_expect(u < lim, 0))
			u = kgen_mrg_step(s);
		kgen_level(u, &diag, &a, &b);
	}
	*src = a;
	*tgt = b;
}

/* n consecutive edges, scrambled, into uv[2k], uv[2k+1]; *s is the first
 * edge's stream start and is left at the start of the edge after the run.
 * step is A^(2^64) (kgen_pow2_table() + 64). */
KGEN_HD void kgen_edge_seq(kgen_mrg *s, const kgen_mat5 step, int scale, uint32_t lim, const kgen_scr *k, uint64_t n,
			   uint64_t *uv)
{
	for (uint64_t e = 0; e < n; e++) {
		kgen_mrg t = *s;
		uint64_t a, b;
		kgen_edge_from(&t, scale, lim, &a, &b);
		uv[2 * e] = kgen_scr_apply(k, a);
		uv[2 * e + 1] = kgen_scr_apply(k, b);
		kgen_mat_vec(step, s);
	}
}

/* What a run of edges needs of the generator, by value (a kernel argument). */
typedef struct kgen_job {
	kgen_mrg seeded; /* the stream after seeding */
	kgen_scr keys;
	int scale;
	uint32_t lim;    /* kgen_limit(version) */
} kgen_job;

KGEN_HD kgen_job kgen_job_of(const kgen_ctx *g)
{
	kgen_job j;
	j.seeded = g->seeded;
	j.keys = kgen_scr_keys(g);
	j.scale = g->p.scale;
	j.lim = kgen_limit(g->p.version);
	return j;
}

/* Edges [first, first+n) into uv: skip the seeded stream to edge first,
 * then the run.  tab64 is kgen_pow2_table() + 64 (the 63 entries an index
 * below 2^63 needs, and A^(2^64) for the steps). */
KGEN_HD void kgen_edge_range(const kgen_job *j, const kgen_mat5 *tab64, uint64_t first, uint64_t n, uint64_t *uv)
{
	kgen_mrg s = j->seeded;
	kgen_skip_word(&s, first, tab64);
	kgen_edge_seq(&s, tab64[0], j->scale, j->lim, &j->keys, n, uv);
}

/* Thread t's part of edges [first, first+n) when each thread makes a run
 * of `run` consecutive edges (the GPU kernel is this call): edges
 * [first + t*run, first + min(n, (t+1)*run)) into uv + 2*t*run; nothing
 * when t*run >= n.  uv holds the n edges of the whole launch. */
KGEN_HD void kgen_edge_thread(const kgen_job *j, const kgen_mat5 *tab64, uint64_t first, uint64_t n, uint64_t run,
			      uint64_t t, uint64_t *uv)
{
	if (t >= (n + run - 1) / run)
		return;
	uint64_t lo = t * run;
	uint64_t cnt = n - lo < run ? n - lo : run;
	kgen_edge_range(j, tab64, first + lo, cnt, uv + 2 * lo);
}

#endif

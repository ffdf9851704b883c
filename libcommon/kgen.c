/*
 * kgen.c: the Graph500 Kronecker generator (see kgen.h, GRAPH500.md sec. 1-2).
 *
 * Arithmetic is modulo the Mersenne prime p = 2^31-1, so a 64-bit product
 * x is reduced by folding: x = (x & p) + (x >> 31) keeps x mod p unchanged
 * because 2^31 == 1 (mod p).
 *
 * The generator state is a column vector z = (z1..z5); one step is z <- A z
 * with the companion matrix A (row 0 = (a1,0,0,0,a5), row i = e_(i-1)).  A
 * skip by k steps is z <- A^k z, computed from a table of A^(2^j),
 * j = 0..191, built once (pthread_once) on first use.
 *
 * Edge generation: edge i starts from seeded * A^(i*2^64).  Inside a block
 * of consecutive edges the next start state is one matrix-vector product
 * away, and we work on KGEN_LANES edges at once (A^(LANES*2^64) is again a
 * power of two in the table) so that the serial dependency chains of the
 * independent streams overlap in the CPU pipeline.
 */
#include "kgen.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Root sampling must not fuse a*x + b*y into an FMA (different rounding).
 * GCC ignores (and warns about) this pragma but does not contract in ISO C
 * mode; the volatile temporaries in draw_double() cover every compiler. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define MRG_P 0x7FFFFFFFu
#define MRG_A1 107374182u
#define MRG_A5 104480u

/* number of edges generated side by side; must be a power of two */
#define KGEN_LANES 8
#define KGEN_LANES_LOG2 3

/* Rejection limits: a draw u < L is redrawn so that u % 10000 is uniform.
 * L = 0x7FFFFFFF mod 10000 in v3.x, 0xFFFFFFFF mod 10000 in v2.1.4 (the
 * latter is not exact for a 31-bit stream, but it is what v2 does). */
#define KGEN_L_V3 3647u
#define KGEN_L_V2 7295u

typedef uint32_t mat5[5][5];

static mat5 pow2_tab[192]; /* A^(2^j) */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

/* Full reduction of x < 2^63 to [0, p). */
static inline uint32_t modp(uint64_t x)
{
	x = (x & MRG_P) + (x >> 31); /* < 2^32 + 2^31 */
	x = (x & MRG_P) + (x >> 31); /* <= p + 2 */
	if (x >= MRG_P)
		x -= MRG_P;
	return (uint32_t)x;
}

/* The MRG step's new value: a1*z1 + a5*z5 < 2^58 + 2^48, so one fold
 * leaves it below 2p and one conditional subtraction finishes. */
static inline uint32_t mrg_val(uint32_t z1, uint32_t z5)
{
	uint64_t s = (uint64_t)MRG_A1 * z1 + (uint64_t)MRG_A5 * z5;
	s = (s & MRG_P) + (s >> 31);
	if (s >= MRG_P)
		s -= MRG_P;
	return (uint32_t)s;
}

/* Partial reduction of a product (< 2^62) to < 2^32, same residue: five of
 * these add up without overflow before one full modp(). */
static inline uint64_t fold(uint64_t x) { return (x & MRG_P) + (x >> 31); }

static void mat_mul(mat5 r, const mat5 x, const mat5 y)
{
	mat5 t;
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++) {
			uint64_t acc = 0;
			for (int k = 0; k < 5; k++)
				acc += fold((uint64_t)x[i][k] * y[k][j]);
			t[i][j] = modp(acc);
		}
	memcpy(r, t, sizeof t);
}

/* z <- M z for one state. */
static inline void mat_vec(const mat5 m, kgen_mrg *s)
{
	const uint64_t z[5] = {s->z1, s->z2, s->z3, s->z4, s->z5};
	uint32_t r[5];
	for (int i = 0; i < 5; i++) {
		uint64_t acc = 0;
		for (int k = 0; k < 5; k++)
			acc += fold(m[i][k] * z[k]);
		r[i] = modp(acc);
	}
	s->z1 = r[0], s->z2 = r[1], s->z3 = r[2], s->z4 = r[3], s->z5 = r[4];
}

static void build_tables(void)
{
	mat5 a;
	memset(a, 0, sizeof a);
	a[0][0] = MRG_A1;
	a[0][4] = MRG_A5;
	for (int i = 1; i < 5; i++)
		a[i][i - 1] = 1;
	memcpy(pow2_tab[0], a, sizeof a);
	for (int j = 1; j < 192; j++)
		mat_mul(pow2_tab[j], pow2_tab[j - 1], pow2_tab[j - 1]);
}

static inline void tables_ready(void) { pthread_once(&tab_once, build_tables); }

/* ---- the stream ------------------------------------------------------------ */

void kgen_mrg_seed(kgen_mrg *s, uint64_t seed1, uint64_t seed2)
{
	s->z1 = (uint32_t)((seed1 & 0x3FFFFFFF) + 1);
	s->z2 = (uint32_t)(((seed1 >> 30) & 0x3FFFFFFF) + 1);
	s->z3 = (uint32_t)((seed2 & 0x3FFFFFFF) + 1);
	s->z4 = (uint32_t)(((seed2 >> 30) & 0x3FFFFFFF) + 1);
	s->z5 = (uint32_t)(((seed2 >> 60) << 4) + (seed1 >> 60) + 1);
}

/* Multiply by A^(w*2^base) for the set bits of w (powers of A commute). */
static void skip_word(kgen_mrg *s, uint64_t w, int base)
{
	for (int b = 0; w; b++, w >>= 1)
		if (w & 1)
			mat_vec(pow2_tab[base + b], s);
}

void kgen_mrg_skip(kgen_mrg *s, uint64_t hi, uint64_t mid, uint64_t lo)
{
	tables_ready();
	skip_word(s, lo, 0);
	skip_word(s, mid, 64);
	skip_word(s, hi, 128);
}

static inline uint32_t mrg_step(kgen_mrg *s)
{
	uint32_t n = mrg_val(s->z1, s->z5);
	s->z5 = s->z4;
	s->z4 = s->z3;
	s->z3 = s->z2;
	s->z2 = s->z1;
	s->z1 = n;
	return n;
}

uint32_t kgen_mrg_next(kgen_mrg *s) { return mrg_step(s); }

/* ---- set-up -------------------------------------------------------------- */

uint64_t kgen_nedges(const kgen_params *p)
{
	if (p->scale < 1 || p->scale > KGEN_MAX_SCALE)
		return 0;
	/* keep the count (and edge indices) representable as int64 */
	if (p->edgefactor > ((uint64_t)INT64_MAX >> p->scale))
		return 0;
	return p->edgefactor << p->scale;
}

int kgen_init(kgen_ctx *g, const kgen_params *p)
{
	memset(g, 0, sizeof *g);
	if (p->scale < 1 || p->scale > KGEN_MAX_SCALE || (p->version != 2 && p->version != 3))
		return -1;
	uint64_t m = kgen_nedges(p);
	if (m == 0)
		return -1;
	tables_ready();
	g->p = *p;
	g->nedges = m;
	kgen_mrg_seed(&g->seeded, p->seed1, p->seed2);

	kgen_mrg s = g->seeded;
	kgen_mrg_skip(&s, 50, 7, 0);
	uint64_t u1 = mrg_step(&s), u2 = mrg_step(&s);
	uint64_t u3 = mrg_step(&s), u4 = mrg_step(&s);
	g->val0 = u1 * 0xFFFFFFFFull + u2;
	g->val1 = u3 * 0xFFFFFFFFull + u4;
	return 0;
}

/* ---- scramble ------------------------------------------------------------ */

static inline uint64_t bitrev64(uint64_t v)
{
	v = __builtin_bswap64(v);
	v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
	v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
	v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
	return v;
}

/* Keys derived once per call site so the hot loop has them in registers. */
typedef struct scr_keys {
	uint64_t add, mul0, mul1;
	int shift;
} scr_keys;

static inline scr_keys scr_prepare(const kgen_ctx *g)
{
	scr_keys k = {g->val0 + g->val1, g->val0 | 0x4519840211493211ull, g->val1 | 0x3050852102C843A5ull,
		      64 - g->p.scale};
	return k;
}

static inline uint64_t scr_apply(const scr_keys *k, uint64_t v)
{
	v += k->add;
	v *= k->mul0;
	v = bitrev64(v) >> k->shift;
	v *= k->mul1;
	v = bitrev64(v) >> k->shift;
	return v;
}

uint64_t kgen_scramble(const kgen_ctx *g, uint64_t v)
{
	scr_keys k = scr_prepare(g);
	return scr_apply(&k, v);
}

/* ---- edges ----------------------------------------------------------------- */

static inline uint32_t lim_of(const kgen_ctx *g) { return g->p.version == 2 ? KGEN_L_V2 : KGEN_L_V3; }

/* One edge from its own stream (state consumed).  Quadrant choice is done
 * without branches: the draws are random, so branches would mispredict. */
static inline void edge_from(kgen_mrg *s, int scale, uint32_t lim, uint64_t *src, uint64_t *tgt)
{
	uint64_t a = 0, b = 0;
	uint32_t diag = 1; /* still on the diagonal (a == b) */
	for (int l = 0; l < scale; l++) {
		uint32_t u = mrg_step(s);
		while (__builtin_expect(u < lim, 0))
			u = mrg_step(s);
		u %= 10000;
		/* (0,1) u<1900, (1,0) u<3800, (0,0) u<9500, (1,1) else */
		uint32_t hiq = u >= 9500;
		uint32_t row = ((u >= 1900) & (u < 3800)) | hiq;
		uint32_t col = (u < 1900) | hiq;
		uint32_t flip = diag & row & (col ^ 1); /* (1,0) on the diagonal -> (0,1) */
		row ^= flip;
		col ^= flip;
		diag &= (row == col);
		a = (a << 1) | row;
		b = (b << 1) | col;
	}
	*src = a;
	*tgt = b;
}

void kgen_edge_raw(const kgen_ctx *g, uint64_t i, uint64_t *src, uint64_t *tgt)
{
	kgen_mrg s = g->seeded;
	kgen_mrg_skip(&s, 0, i, 0);
	edge_from(&s, g->p.scale, lim_of(g), src, tgt);
}

/*
 * KGEN_LANES edges at once: lane j uses state st[j] (five words per lane
 * kept in a ring so no shifting is needed).  The per-level loop over the
 * lanes has no dependency between iterations, so the multiply/fold chains
 * of the lanes overlap.  Rejection redraws are rare and handled per lane.
 */
static void edges_lanes(const kgen_mrg st[KGEN_LANES], int scale, uint32_t lim, const scr_keys *k, uint64_t *uv)
{
	uint32_t z[KGEN_LANES][5];
	uint64_t a[KGEN_LANES], b[KGEN_LANES];
	uint32_t diag[KGEN_LANES];
	uint32_t pos[KGEN_LANES]; /* ring index of z1; z5 sits at pos+1 (mod 5) */
	int slow = 0;

	for (int j = 0; j < KGEN_LANES; j++) {
		z[j][0] = st[j].z1, z[j][4] = st[j].z2, z[j][3] = st[j].z3;
		z[j][2] = st[j].z4, z[j][1] = st[j].z5;
		a[j] = b[j] = 0;
		diag[j] = 1;
		pos[j] = 0;
	}
	/*
	 * Ring layout: z1 at pos, z2 at pos-1, ..., z5 at pos-4 == pos+1.
	 * A step writes the new z1 into the z5 slot (pos+1) and advances pos.
	 * While no lane has redrawn, all pos[] are equal and known, which the
	 * fast path below relies on; after a redraw we fall back to per-lane
	 * positions.
	 */
	uint32_t p = 0;
	for (int l = 0; l < scale; l++) {
		uint32_t np = p == 4 ? 0 : p + 1;
		uint32_t u[KGEN_LANES];
		int any = 0;
		if (!slow) {
			for (int j = 0; j < KGEN_LANES; j++) {
				uint32_t n = mrg_val(z[j][p], z[j][np]);
				z[j][np] = n;
				u[j] = n;
				any |= n < lim;
			}
			p = np;
			if (__builtin_expect(any, 0)) {
				for (int j = 0; j < KGEN_LANES; j++)
					pos[j] = p;
				slow = 1;
			}
		} else {
			for (int j = 0; j < KGEN_LANES; j++) {
				uint32_t q = pos[j], nq = q == 4 ? 0 : q + 1;
				uint32_t n = mrg_val(z[j][q], z[j][nq]);
				z[j][nq] = n;
				pos[j] = nq;
				u[j] = n;
				any |= n < lim;
			}
		}
		if (__builtin_expect(any, 0)) {
			for (int j = 0; j < KGEN_LANES; j++)
				while (u[j] < lim) {
					uint32_t q = pos[j], nq = q == 4 ? 0 : q + 1;
					uint32_t n = mrg_val(z[j][q], z[j][nq]);
					z[j][nq] = n;
					pos[j] = nq;
					u[j] = n;
				}
		}
		for (int j = 0; j < KGEN_LANES; j++) {
			uint32_t v = u[j] % 10000;
			uint32_t hiq = v >= 9500;
			uint32_t row = ((v >= 1900) & (v < 3800)) | hiq;
			uint32_t col = (v < 1900) | hiq;
			uint32_t flip = diag[j] & row & (col ^ 1);
			row ^= flip;
			col ^= flip;
			diag[j] &= (row == col);
			a[j] = (a[j] << 1) | row;
			b[j] = (b[j] << 1) | col;
		}
	}
	for (int j = 0; j < KGEN_LANES; j++) {
		uv[2 * j] = scr_apply(k, a[j]);
		uv[2 * j + 1] = scr_apply(k, b[j]);
	}
}

/* Edges [first, first+count) on the calling thread. */
static void edges_block(const kgen_ctx *g, uint64_t first, uint64_t count, uint64_t *uv)
{
	const int scale = g->p.scale;
	const uint32_t lim = lim_of(g);
	const scr_keys k = scr_prepare(g);
	kgen_mrg s = g->seeded;
	kgen_mrg_skip(&s, 0, first, 0);

	uint64_t done = 0;
	if (count >= KGEN_LANES) {
		kgen_mrg st[KGEN_LANES];
		st[0] = s;
		for (int j = 1; j < KGEN_LANES; j++) {
			st[j] = st[j - 1];
			mat_vec(pow2_tab[64], &st[j]);
		}
		const mat5 *stride = &pow2_tab[64 + KGEN_LANES_LOG2]; /* A^(LANES*2^64) */
		for (; count - done >= KGEN_LANES; done += KGEN_LANES) {
			edges_lanes(st, scale, lim, &k, uv + 2 * done);
			for (int j = 0; j < KGEN_LANES; j++)
				mat_vec(*stride, &st[j]);
		}
		s = st[0];
	}
	for (; done < count; done++) {
		kgen_mrg t = s;
		uint64_t a, b;
		edge_from(&t, scale, lim, &a, &b);
		uv[2 * done] = scr_apply(&k, a);
		uv[2 * done + 1] = scr_apply(&k, b);
		mat_vec(pow2_tab[64], &s);
	}
}

void kgen_edges(const kgen_ctx *g, uint64_t first, uint64_t count, uint64_t *uv)
{
	if (count == 0)
		return;
	tables_ready();
#ifdef _OPENMP
	/* Static split into one contiguous block per thread: one full skip per
	 * thread, then cheap stepping.  Each edge depends only on its index, so
	 * the split does not change the output. */
	if (count >= 4096 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
		{
			uint64_t nt = (uint64_t)omp_get_num_threads(), t = (uint64_t)omp_get_thread_num();
			uint64_t per = count / nt, extra = count % nt;
			uint64_t lo = t * per + (t < extra ? t : extra);
			uint64_t n = per + (t < extra);
			if (n)
				edges_block(g, first + lo, n, uv + 2 * lo);
		}
		return;
	}
#endif
	edges_block(g, first, count, uv);
}

/* ---- search keys --------------------------------------------------------- */

/*
 * One uniform double in [0, 1) from two draws, as the reference computes
 * it: a/p + b/p^2 as two separate double products then one addition.  The
 * volatile temporaries keep the compiler from contracting the expression
 * into a fused multiply-add, which would round differently.
 */
static double draw_double(kgen_mrg *s)
{
	static const double inv_p = 1.0 / 2147483647.0;
	static const double inv_p2 = (1.0 / 2147483647.0) * (1.0 / 2147483647.0);
	uint32_t a = mrg_step(s);
	uint32_t b = mrg_step(s);
	volatile double x = (double)a * inv_p;
	volatile double y = (double)b * inv_p2;
	return x + y;
}

uint64_t kgen_root_candidate(uint64_t seed1, uint64_t seed2, uint64_t N, uint64_t counter)
{
	if (N == 0)
		return 0;
	kgen_mrg s;
	kgen_mrg_seed(&s, seed1, seed2);
	kgen_mrg_skip(&s, 2, 0, 2 * counter);
	double d1 = draw_double(&s);
	double d2 = draw_double(&s);
	volatile double x = (d1 + d2) * (double)N;
	/* The reference converts to int64 then takes the remainder; for
	 * x < 2^63 the unsigned conversion is the same.  x < 2N always. */
	uint64_t r;
	if (x < 18446744073709551616.0)
		r = (uint64_t)x;
	else
		r = (uint64_t)(x - (double)N);
	return r % N;
}

int kgen_roots(uint64_t seed1, uint64_t seed2, uint64_t N, int nroots, kgen_accept_fn accept, void *arg,
	       uint64_t *roots)
{
	if (N == 0 || nroots <= 0)
		return 0;
	uint64_t counter = 0;
	for (int r = 0; r < nroots; r++) {
		uint64_t v;
		for (;;) {
			v = kgen_root_candidate(seed1, seed2, N, counter);
			counter += 2;
			/* the reference gives up choosing once counter > 2N
			 * (counter is even, so compare halves: no overflow) */
			if (counter / 2 > N)
				break;
			int dup = 0;
			for (int k = 0; k < r; k++)
				if (roots[k] == v) {
					dup = 1;
					break;
				}
			if (dup)
				continue;
			if (!accept || accept(v, arg))
				break;
		}
		roots[r] = v;
	}
	return nroots;
}

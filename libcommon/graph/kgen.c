/*
 * kgen.c: the Graph500 Kronecker generator (see kgen.h, GRAPH500.md sec. 1-2).
 *
 * The arithmetic of one edge (MRG step and skip, the bit choices, the
 * scramble) is in kgen_edge.h, shared with the GPU generator; here are the
 * skip table (A^(2^j), j = 0..191, built once with pthread_once on first
 * use), the stream functions of kgen.h, and the CPU's bulk path.
 *
 * Edge generation: edge i starts from seeded * A^(i*2^64).  Inside a block
 * of consecutive edges the next start state is one matrix-vector product
 * away, and we work on KGEN_LANES edges at once (A^(LANES*2^64) is again a
 * power of two in the table) so that the serial dependency chains of the
 * independent streams overlap in the CPU pipeline.
 */
#include "kgen.h"
#include "kgen_dev.h"
#include "kgen_edge.h"

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

/* number of edges generated side by side; must be a power of two */
#define KGEN_LANES 8
#define KGEN_LANES_LOG2 3

static kgen_mat5 pow2_tab[192]; /* A^(2^j) */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void mat_mul(kgen_mat5 r, const kgen_mat5 x, const kgen_mat5 y)
{
	kgen_mat5 t;
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++) {
			uint64_t acc = 0;
			for (int k = 0; k < 5; k++)
				acc += kgen_fold((uint64_t)x[i][k] * y[k][j]);
			t[i][j] = kgen_modp(acc);
		}
	memcpy(r, t, sizeof t);
}

static void build_tables(void)
{
	kgen_mat5 a;
	memset(a, 0, sizeof a);
	a[0][0] = KGEN_MRG_A1;
	a[0][4] = KGEN_MRG_A5;
	for (int i = 1; i < 5; i++)
		a[i][i - 1] = 1;
	memcpy(pow2_tab[0], a, sizeof a);
	for (int j = 1; j < 192; j++)
		mat_mul(pow2_tab[j], pow2_tab[j - 1], pow2_tab[j - 1]);
}

static inline void tables_ready(void) { pthread_once(&tab_once, build_tables); }

const kgen_mat5 *kgen_pow2_table(void)
{
	tables_ready();
	return (const kgen_mat5 *)pow2_tab;
}

/* ---- the stream ------------------------------------------------------------ */

void kgen_mrg_seed(kgen_mrg *s, uint64_t seed1, uint64_t seed2)
{
	s->z1 = (uint32_t)((seed1 & 0x3FFFFFFF) + 1);
	s->z2 = (uint32_t)(((seed1 >> 30) & 0x3FFFFFFF) + 1);
	s->z3 = (uint32_t)((seed2 & 0x3FFFFFFF) + 1);
	s->z4 = (uint32_t)(((seed2 >> 30) & 0x3FFFFFFF) + 1);
	s->z5 = (uint32_t)(((seed2 >> 60) << 4) + (seed1 >> 60) + 1);
}

void kgen_mrg_skip(kgen_mrg *s, uint64_t hi, uint64_t mid, uint64_t lo)
{
	tables_ready();
	kgen_skip_word(s, lo, pow2_tab);
	kgen_skip_word(s, mid, pow2_tab + 64);
	kgen_skip_word(s, hi, pow2_tab + 128);
}

uint32_t kgen_mrg_next(kgen_mrg *s) { return kgen_mrg_step(s); }

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
	uint64_t u1 = kgen_mrg_step(&s), u2 = kgen_mrg_step(&s);
	uint64_t u3 = kgen_mrg_step(&s), u4 = kgen_mrg_step(&s);
	g->val0 = u1 * 0xFFFFFFFFull + u2;
	g->val1 = u3 * 0xFFFFFFFFull + u4;
	return 0;
}

uint64_t kgen_scramble(const kgen_ctx *g, uint64_t v)
{
	kgen_scr k = kgen_scr_keys(g);
	return kgen_scr_apply(&k, v);
}

/* ---- edges ----------------------------------------------------------------- */

void kgen_edge_raw(const kgen_ctx *g, uint64_t i, uint64_t *src, uint64_t *tgt)
{
	kgen_mrg s = g->seeded;
	kgen_mrg_skip(&s, 0, i, 0);
	kgen_edge_from(&s, g->p.scale, kgen_limit(g->p.version), src, tgt);
}

/*
 * KGEN_LANES edges at once: lane j uses state st[j] (five words per lane
 * kept in a ring so no shifting is needed).  The per-level loop over the
 * lanes has no dependency between iterations, so the multiply/fold chains
 * of the lanes overlap.  Rejection redraws are rare and handled per lane.
 * Each lane computes what kgen_edge_from() does (kgen_mrg_val is the
 * step's value, kgen_level the bit choice); test_kgen_edge checks them equal.
 */
static void edges_lanes(const kgen_mrg st[KGEN_LANES], int scale, uint32_t lim, const kgen_scr *k, uint64_t *uv)
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
				uint32_t n = kgen_mrg_val(z[j][p], z[j][np]);
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
				uint32_t n = kgen_mrg_val(z[j][q], z[j][nq]);
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
					uint32_t n = kgen_mrg_val(z[j][q], z[j][nq]);
					z[j][nq] = n;
					pos[j] = nq;
					u[j] = n;
				}
		}
		for (int j = 0; j < KGEN_LANES; j++)
			kgen_level(u[j], &diag[j], &a[j], &b[j]);
	}
	for (int j = 0; j < KGEN_LANES; j++) {
		uv[2 * j] = kgen_scr_apply(k, a[j]);
		uv[2 * j + 1] = kgen_scr_apply(k, b[j]);
	}
}

/* Edges [first, first+count) on the calling thread. */
static void edges_block(const kgen_ctx *g, uint64_t first, uint64_t count, uint64_t *uv)
{
	const int scale = g->p.scale;
	const uint32_t lim = kgen_limit(g->p.version);
	const kgen_scr k = kgen_scr_keys(g);
	kgen_mrg s = g->seeded;
	kgen_skip_word(&s, first, pow2_tab + 64);

	uint64_t done = 0;
	if (count >= KGEN_LANES) {
		kgen_mrg st[KGEN_LANES];
		st[0] = s;
		for (int j = 1; j < KGEN_LANES; j++) {
			st[j] = st[j - 1];
			kgen_mat_vec(pow2_tab[64], &st[j]);
		}
		const kgen_mat5 *stride = &pow2_tab[64 + KGEN_LANES_LOG2]; /* A^(LANES*2^64) */
		for (; count - done >= KGEN_LANES; done += KGEN_LANES) {
			edges_lanes(st, scale, lim, &k, uv + 2 * done);
			for (int j = 0; j < KGEN_LANES; j++)
				kgen_mat_vec(*stride, &st[j]);
		}
		s = st[0];
	}
	kgen_edge_seq(&s, pow2_tab[64], scale, lim, &k, count - done, uv + 2 * done);
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
	uint32_t a = kgen_mrg_step(s);
	uint32_t b = kgen_mrg_step(s);
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

uint64_t kgen_device_bytes(uint64_t chunk)
{
	return 2 * (chunk ? chunk : KGEN_DEVICE_CHUNK) * 16 + 64 * sizeof(kgen_mat5) + (UINT64_C(64) << 20);
}

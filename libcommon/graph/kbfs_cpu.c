/*
 * kbfs_cpu: the CPU engine of the 2D BFS (see kengine.h).
 *
 * All buffers are host memory; OpenMP threads share each step.  Top-down
 * claims a local row with a test-and-test-and-set on the visited word
 * (atomic fetch-or), so exactly one thread records its parent; bottom-up
 * gives each thread whole bitmap words, so it needs no atomics.  Blocks
 * with u32 and u64 local indices get their own copies of the hot loops
 * (an always-inline body instantiated twice).  Rows whose local CSR row is
 * empty are skipped by bottom-up through a mask built at setup.
 */
#include "kengine.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define PAR_MIN_WORDS 4096 /* below this, bitmap loops stay serial */

typedef struct cpu_eng {
	const kpart_block *b;
	uint64_t nb, nbw, nrows, ncols, nroww, ncolw;
	uint64_t colfirst, ownfirst;
	int me;
	uint64_t cap;
	size_t nseg_max;
	void *buf[KBFS_NBUF];
	uint64_t *empty; /* nroww words: local row has no CSR entries */
	double mark[KBFS_NMARK]; /* host clock at each mark() */
} cpu_eng;

#define W(c, name) ((uint64_t *)(c)->buf[name])

static void *cpu_buf(kbfs_engine *e, enum kbfs_buf which)
{
	cpu_eng *c = e->impl;
	KASSERT(which < KBFS_NBUF);
	return c->buf[which];
}

static void fill_words(uint64_t *p, uint64_t n, uint64_t v)
{
	if (n < PAR_MIN_WORDS) {
		for (uint64_t k = 0; k < n; k++)
			p[k] = v;
		return;
	}
#pragma omp parallel for schedule(static)
	for (uint64_t k = 0; k < n; k++)
		p[k] = v;
}

static int cpu_setup(kbfs_engine *e, const kpart_block *b, const kbfs_engine_conf *conf)
{
	cpu_eng *c = kcalloc(1, sizeof *c);
	const kpart_grid *g = &b->g;
	c->b = b;
	c->nb = g->nb;
	c->nbw = g->nb / 64;
	c->nrows = b->nrows;
	c->ncols = b->ncols;
	c->nroww = b->nrows / 64;
	c->ncolw = b->ncols / 64;
	c->colfirst = kpart_col_first(g, b->j);
	c->ownfirst = kpart_owned_first(g, b->i, b->j);
	c->me = kpart_rank_of(g, b->i, b->j);
	c->cap = conf->wire_cap;
	c->nseg_max = (size_t)(g->R > g->C ? g->R : g->C);
	KASSERT(c->cap >= c->nbw * 8);
	if (conf->threads > 0) {
#ifdef _OPENMP
		omp_set_num_threads(conf->threads);
#endif
	}
	size_t w8 = 8;
	c->buf[KBFS_FRONT] = kmalloc(kmul(c->nbw, w8));
	c->buf[KBFS_OWNVIS] = kmalloc(kmul(c->nbw, w8));
	c->buf[KBFS_RECV] = kmalloc(kmul(c->nbw, w8));
	c->buf[KBFS_COLFRONT] = kmalloc(kmul(c->ncolw, w8));
	c->buf[KBFS_ROWVIS] = kmalloc(kmul(c->nroww, w8));
	c->buf[KBFS_ROWNEXT] = kmalloc(kmul(c->nroww, w8));
	c->buf[KBFS_XRECV] = kmalloc(kmul(c->nroww, w8));
	c->buf[KBFS_PL] = kmalloc(kmul(c->nrows, w8));
	c->buf[KBFS_PRED] = kmalloc(kmul(c->nb, w8));
	c->buf[KBFS_WSEND] = kmalloc(kmul(c->cap, c->nseg_max));
	c->buf[KBFS_WRECV] = kmalloc(kmul(c->cap, c->nseg_max));
	c->empty = kcalloc(c->nroww ? c->nroww : 1, 8);
	const uint64_t *rp = b->rowptr;
#pragma omp parallel for schedule(static)
	for (uint64_t w = 0; w < c->nroww; w++) {
		uint64_t m = 0;
		for (unsigned k = 0; k < 64; k++) {
			uint64_t r = w * 64 + k;
			if (rp[r] == rp[r + 1])
				m |= UINT64_C(1) << k;
		}
		c->empty[w] = m;
	}
	e->impl = c;
	return 0;
}

static void cpu_teardown(kbfs_engine *e)
{
	cpu_eng *c = e->impl;
	if (!c)
		return;
	for (int k = 0; k < KBFS_NBUF; k++)
		free(c->buf[k]);
	free(c->empty);
	free(c);
	e->impl = NULL;
}

static void cpu_reset(kbfs_engine *e, uint64_t root)
{
	cpu_eng *c = e->impl;
	const kpart_grid *g = &c->b->g;
	fill_words(W(c, KBFS_FRONT), c->nbw, 0);
	fill_words(W(c, KBFS_OWNVIS), c->nbw, 0);
	fill_words(W(c, KBFS_ROWVIS), c->nroww, 0);
	fill_words(W(c, KBFS_PL), c->nrows, KBFS_NONE);
	if (kpart_owner_row(g, root) == c->b->i) {
		uint64_t r = kpart_local_row(g, root);
		W(c, KBFS_ROWVIS)[r >> 6] |= UINT64_C(1) << (r & 63);
		W(c, KBFS_PL)[r] = kbfs_packed(0, root);
	}
	if (kpart_owner(g, root) == c->me) {
		uint64_t k = root - c->ownfirst;
		W(c, KBFS_FRONT)[k >> 6] |= UINT64_C(1) << (k & 63);
		W(c, KBFS_OWNVIS)[k >> 6] |= UINT64_C(1) << (k & 63);
	}
}

/* Top-down over the columns of frontier word w. */
ALWAYS_INLINE void td_word(cpu_eng *c, uint64_t w, uint64_t lvl, uint64_t *found, uint64_t *exam, int is64)
{
	const uint64_t *cp = c->b->colptr;
	const void *ri = c->b->rowidx;
	uint64_t *vis = W(c, KBFS_ROWVIS), *next = W(c, KBFS_ROWNEXT), *pl = W(c, KBFS_PL);
	uint64_t bits = W(c, KBFS_COLFRONT)[w];
	while (bits) {
		uint64_t u = w * 64 + (uint64_t)__builtin_ctzll(bits);
		bits &= bits - 1;
		uint64_t parent = lvl | (c->colfirst + u);
		uint64_t k0 = cp[u], k1 = cp[u + 1];
		*exam += k1 - k0;
		for (uint64_t k = k0; k < k1; k++) {
			uint64_t v = kpart_idx(ri, is64, k);
			uint64_t m = UINT64_C(1) << (v & 63);
			uint64_t *vw = &vis[v >> 6];
			if (__atomic_load_n(vw, __ATOMIC_RELAXED) & m)
				continue;
			if (__atomic_fetch_or(vw, m, __ATOMIC_RELAXED) & m)
				continue;
			__atomic_fetch_or(&next[v >> 6], m, __ATOMIC_RELAXED);
			pl[v] = parent;
			(*found)++;
		}
	}
}

/* Bottom-up over the local rows of word w. */
ALWAYS_INLINE void bu_word(cpu_eng *c, uint64_t w, uint64_t lvl, uint64_t *found, uint64_t *exam, int is64)
{
	const uint64_t *rp = c->b->rowptr, *F = W(c, KBFS_COLFRONT);
	const void *ci = c->b->colidx;
	uint64_t *vis = W(c, KBFS_ROWVIS), *pl = W(c, KBFS_PL);
	uint64_t seen = vis[w];
	uint64_t todo = ~(seen | c->empty[w]), got = 0, ex = 0;
	while (todo) {
		unsigned b = (unsigned)__builtin_ctzll(todo);
		todo &= todo - 1;
		uint64_t v = w * 64 + b;
		uint64_t k0 = rp[v], k1 = rp[v + 1];
		for (uint64_t k = k0; k < k1; k++) {
			uint64_t u = kpart_idx(ci, is64, k);
			if (F[u >> 6] >> (u & 63) & 1) {
				pl[v] = lvl | (c->colfirst + u);
				got |= UINT64_C(1) << b;
				ex += k - k0 + 1;
				goto next_row;
			}
		}
		ex += k1 - k0;
	next_row:;
	}
	W(c, KBFS_ROWNEXT)[w] = got;
	vis[w] = seen | got;
	*found += (uint64_t)__builtin_popcountll(got);
	*exam += ex;
}

#define DEF_STEPS(SUFFIX, IS64)                                                                                \
	static void td_##SUFFIX(cpu_eng *c, uint64_t lvl, kbfs_step *st)                                       \
	{                                                                                                      \
		uint64_t found = 0, exam = 0;                                                                  \
		_Pragma("omp parallel for schedule(dynamic, 64) reduction(+ : found, exam)")                  \
		for (uint64_t w = 0; w < c->ncolw; w++)                                                        \
			td_word(c, w, lvl, &found, &exam, IS64);                                               \
		st->found = found;                                                                             \
		st->examined = exam;                                                                           \
	}                                                                                                      \
	static void bu_##SUFFIX(cpu_eng *c, uint64_t lvl, uint64_t w0, uint64_t w1, kbfs_step *st)            \
	{                                                                                                      \
		uint64_t found = 0, exam = 0;                                                                  \
		_Pragma("omp parallel for schedule(dynamic, 256) reduction(+ : found, exam)")                 \
		for (uint64_t w = w0; w < w1; w++)                                                             \
			bu_word(c, w, lvl, &found, &exam, IS64);                                               \
		st->found = found;                                                                             \
		st->examined = exam;                                                                           \
	}

DEF_STEPS(32, 0)
DEF_STEPS(64, 1)

static void cpu_top_down(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *st)
{
	(void)nf;
	cpu_eng *c = e->impl;
	memset(st, 0, sizeof *st);
	fill_words(W(c, KBFS_ROWNEXT), c->nroww, 0);
	uint64_t lvl = level << KBFS_PARENT_BITS;
	if (c->b->idx64)
		td_64(c, lvl, st);
	else
		td_32(c, lvl, st);
}

static void or_words(uint64_t *d, const uint64_t *s, uint64_t n)
{
#pragma omp parallel for schedule(static) if (n >= PAR_MIN_WORDS)
	for (uint64_t w = 0; w < n; w++)
		d[w] |= s[w];
}

/* Bottom-up over the local rows of words [w0, w1). */
static void bu_rows(cpu_eng *c, uint64_t level, uint64_t w0, uint64_t w1, kbfs_step *st)
{
	memset(st, 0, sizeof *st);
	uint64_t lvl = level << KBFS_PARENT_BITS;
	if (c->b->idx64)
		bu_64(c, lvl, w0, w1, st);
	else
		bu_32(c, lvl, w0, w1, st);
}

static void cpu_bottom_up(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *st)
{
	(void)nf;
	cpu_eng *c = e->impl;
	bu_rows(c, level, 0, c->nroww, st);
}

static void cpu_bu_substep(kbfs_engine *e, uint64_t level, uint64_t nf, int seg, const void *ring, kbfs_step *st)
{
	(void)nf;
	cpu_eng *c = e->impl;
	const uint64_t w0 = (uint64_t)seg * c->nbw;
	if (ring)
		or_words(W(c, KBFS_ROWVIS) + w0, ring, c->nbw);
	bu_rows(c, level, w0, w0 + c->nbw, st);
}

static void cpu_update(kbfs_engine *e, kbfs_step *st)
{
	cpu_eng *c = e->impl;
	uint64_t *recv = W(c, KBFS_RECV), *vis = W(c, KBFS_OWNVIS), *front = W(c, KBFS_FRONT);
	const uint64_t *tdeg = c->b->tdeg;
	uint64_t found = 0, td = 0;
#pragma omp parallel for schedule(static) reduction(+ : found, td) if (c->nbw >= PAR_MIN_WORDS)
	for (uint64_t w = 0; w < c->nbw; w++) {
		uint64_t nw = recv[w] & ~vis[w];
		vis[w] |= nw;
		front[w] = nw;
		found += (uint64_t)__builtin_popcountll(nw);
		while (nw) {
			td += tdeg[w * 64 + (uint64_t)__builtin_ctzll(nw)];
			nw &= nw - 1;
		}
	}
	memset(st, 0, sizeof *st);
	st->found = found;
	st->tdeg = td;
}

static void cpu_pack(kbfs_engine *e, enum kbfs_buf src, size_t nseg, enum kbfs_xmode mode, int compress,
		     kbfs_desc *desc)
{
	cpu_eng *c = e->impl;
	const uint64_t *s = c->buf[src];
	uint8_t *out = c->buf[KBFS_WSEND];
	KASSERT(nseg <= c->nseg_max);
#pragma omp parallel for schedule(dynamic, 1) if (nseg > 1 && c->nbw >= PAR_MIN_WORDS)
	for (size_t k = 0; k < nseg; k++)
		desc[k] = kbfs_encode(s + k * c->nbw, c->nbw, mode, compress, out + k * c->cap, c->cap);
}

static void cpu_unpack(kbfs_engine *e, enum kbfs_buf wire, size_t stride, size_t nseg, const kbfs_desc *desc,
		       enum kbfs_buf dst, enum kbfs_merge merge)
{
	cpu_eng *c = e->impl;
	const uint8_t *in = c->buf[wire];
	uint64_t *d = c->buf[dst];
	if (merge == KBFS_M_OR_ALL) {
		size_t first = 0;
		/* start from a bitmap segment when there is one (a copy, not a clear) */
		for (size_t k = 0; k < nseg; k++)
			if (kbfs_desc_fmt(desc[k]) == KBFS_FMT_BITMAP) {
				first = k;
				break;
			}
		kbfs_decode(in + first * stride, desc[first], d, c->nbw, 1);
		for (size_t k = 0; k < nseg; k++) {
			if (k == first)
				continue;
			if (kbfs_desc_fmt(desc[k]) == KBFS_FMT_BITMAP)
				or_words(d, (const uint64_t *)(const void *)(in + k * stride), c->nbw);
			else
				kbfs_decode(in + k * stride, desc[k], d, c->nbw, 0);
		}
		return;
	}
	int set = merge == KBFS_M_SET;
#pragma omp parallel for schedule(dynamic, 1) if (nseg > 1 && c->nbw >= PAR_MIN_WORDS)
	for (size_t k = 0; k < nseg; k++)
		kbfs_decode(in + k * stride, desc[k], d + k * c->nbw, c->nbw, set);
}

static void cpu_sync(kbfs_engine *e) { (void)e; }
static void cpu_finish(kbfs_engine *e) { (void)e; } /* reset() cleared PL */
/* every call returns with its work done: a mark is the host clock */
static void cpu_mark(kbfs_engine *e, int k)
{
	KASSERT(k >= 0 && k < KBFS_NMARK);
	((cpu_eng *)e->impl)->mark[k] = ktime();
}
static double cpu_elapsed(kbfs_engine *e, int a, int b)
{
	KASSERT(a >= 0 && a < KBFS_NMARK && b >= 0 && b < KBFS_NMARK);
	const cpu_eng *c = e->impl;
	return c->mark[b] - c->mark[a];
}
static void cpu_copy(kbfs_engine *e, void *dst, const void *src, size_t bytes)
{
	(void)e;
	if (dst != src && bytes) /* an empty staged piece may have no buffer */
		memmove(dst, src, bytes);
}

void kbfs_engine_cpu(kbfs_engine *e)
{
	memset(e, 0, sizeof *e);
	e->name = "cpu";
	e->device_memory = 0;
	e->setup = cpu_setup;
	e->teardown = cpu_teardown;
	e->buf = cpu_buf;
	e->reset = cpu_reset;
	e->top_down = cpu_top_down;
	e->bottom_up = cpu_bottom_up;
	e->bu_substep = cpu_bu_substep;
	e->update = cpu_update;
	e->pack = cpu_pack;
	e->unpack = cpu_unpack;
	e->sync = cpu_sync;
	e->finish = cpu_finish;
	e->mark = cpu_mark;
	e->elapsed = cpu_elapsed;
	e->to_host = cpu_copy;
	e->to_device = cpu_copy;
	e->copy = cpu_copy;
}

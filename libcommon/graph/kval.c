#include "kval.h"
#include "kengine.h"
#include "klog.h"
#include "kmem.h"
#include "kpred.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Depth markers: real depths are < VISIT. */
#define UNR UINT32_MAX          /* unreached */
#define PEND (UINT32_MAX - 1)   /* reached, depth not known yet */
#define VISIT (UINT32_MAX - 2)  /* on the current walk (serial pass) */
#define NONE UINT64_MAX
#define KEY_NONE UINT64_MAX
#define KEY_SHIFT 58
/* parallel walks give up after this many parents; the serial pass finishes */
enum { WALK = 64 };

static inline uint32_t ld(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void st(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

/* One failure; the smallest key wins (check priority, then vertex). */
typedef struct fail {
	uint64_t key;
	int64_t check;
	uint64_t vertex, other;
	int64_t vd, od;
} fail;

static int check_prio(int check)
{
	switch (check) {
	case KVAL_PARENT_RANGE: return 0;
	case KVAL_ROOT_RANGE:
	case KVAL_ROOT_PARENT: return 1;
	case KVAL_CYCLE:
	case KVAL_CHAIN: return 2;
	case KVAL_REACH: return 3;
	case KVAL_TREE_EDGE: return 4;
	case KVAL_DEPTH: return 5;
	case KVAL_NEDGE: return 6;
	}
	KBUG("bad check %d", check);
}

static int check_rule(int check)
{
	switch (check) {
	case KVAL_OK: return 0;
	case KVAL_PARENT_RANGE: return 'a';
	case KVAL_ROOT_RANGE:
	case KVAL_ROOT_PARENT: return 'b';
	case KVAL_CYCLE:
	case KVAL_CHAIN:
	case KVAL_TREE_EDGE: return 'c';
	case KVAL_DEPTH: return 'd';
	case KVAL_REACH: return 'e';
	case KVAL_NEDGE: return 'f';
	}
	KBUG("bad check %d", check);
}

static int64_t dep(uint32_t d) { return d < VISIT ? (int64_t)d : -1; }

static void fail_set(fail *f, int check, uint64_t vertex, uint64_t other, int64_t vd, int64_t od)
{
	uint64_t kv = vertex < ((uint64_t)1 << KEY_SHIFT) ? vertex : ((uint64_t)1 << KEY_SHIFT) - 1;
	uint64_t key = ((uint64_t)check_prio(check) << KEY_SHIFT) | kv;
	if (key > f->key || (key == f->key && other >= f->other))
		return;
	f->key = key;
	f->check = check;
	f->vertex = vertex;
	f->other = other;
	f->vd = vd;
	f->od = od;
}

static void fail_merge(fail *dst, const fail *src)
{
	if (src->key < dst->key || (src->key == dst->key && src->other < dst->other))
		*dst = *src;
}

static const fail fail_none = {KEY_NONE, KVAL_OK, NONE, NONE, -1, -1};

/* --------------------------------------------------------------- depths */

/* Cycle through v: report its smallest vertex. */
static void report_cycle(const uint64_t *pred, uint64_t v, fail *f)
{
	uint64_t m = v;
	for (uint64_t x = pred[v]; x != v; x = pred[x])
		if (x < m)
			m = x;
	fail_set(f, KVAL_CYCLE, m, pred[m], -1, -1);
}

/* Finish the depths the parallel pass left pending: memoized walks with
 * on-path markers, O(N) in all.  Stops at the first broken chain. */
static void depth_serial(const uint64_t *pred, uint64_t N, uint32_t *depth, fail *f)
{
	uint64_t *stack = NULL;
	size_t cap = 0;
	for (uint64_t v = 0; v < N; v++) {
		if (depth[v] != PEND)
			continue;
		size_t len = 0;
		uint64_t x = v;
		for (;;) {
			if (len == cap) {
				cap = cap ? 2 * cap : 1024;
				stack = krealloc(stack, kmul(cap, sizeof *stack));
			}
			stack[len++] = x;
			depth[x] = VISIT;
			uint64_t p = pred[x];
			uint32_t dp = depth[p];
			if (dp == PEND) {
				x = p;
				continue;
			}
			if (dp == VISIT) {
				report_cycle(pred, p, f);
				free(stack);
				return;
			}
			if (dp == UNR) {
				fail_set(f, KVAL_CHAIN, x, p, -1, -1);
				free(stack);
				return;
			}
			while (len)
				depth[stack[--len]] = ++dp;
			break;
		}
	}
	free(stack);
}

/* depth[v] for every v < N from pred; rules (a), (b), (c: chains).
 * Deterministic: the same pred gives the same failure on every rank. */
static void depth_compute(const uint64_t *pred, uint64_t N, uint64_t root, uint32_t *depth, fail *f)
{
	KASSERT(N < (uint64_t)VISIT - 1);
	if (root >= N) {
		fail_set(f, KVAL_ROOT_RANGE, root, NONE, -1, -1);
		return;
	}
	uint64_t bad = NONE;
#pragma omp parallel for schedule(static) reduction(min : bad)
	for (uint64_t v = 0; v < N; v++) {
		uint64_t p = pred[v];
		depth[v] = p == NONE ? UNR : PEND;
		if (p != NONE && p >= N && v < bad)
			bad = v;
	}
	if (bad != NONE) {
		fail_set(f, KVAL_PARENT_RANGE, bad, pred[bad], -1, -1);
		return;
	}
	if (pred[root] != root) {
		fail_set(f, KVAL_ROOT_PARENT, root, pred[root], -1, -1);
		return;
	}
	depth[root] = 0;
	/* parallel pass: short walks up to a known depth; races are benign
	 * because a depth, once known, has only one value */
	int pending = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(| : pending)
	for (uint64_t v = 0; v < N; v++) {
		if (ld(&depth[v]) != PEND)
			continue;
		uint64_t path[WALK];
		int len = 0;
		uint64_t x = v;
		uint32_t d;
		for (;;) {
			path[len++] = x;
			uint64_t p = pred[x];
			d = ld(&depth[p]);
			if (d < VISIT)
				break;
			if (d == UNR || len == WALK) {
				d = UNR;
				break;
			}
			x = p;
		}
		if (d == UNR) {
			pending = 1;
			continue;
		}
		while (len)
			st(&depth[path[--len]], ++d);
	}
	if (pending)
		depth_serial(pred, N, depth, f);
}

/* ---------------------------------------------------------- agreement */

/* Every rank ends with the failure of smallest (key, other), so the verdict
 * does not depend on the rank count or thread timing.  Returns 1 if there is
 * one. */
static int agree(kcomm *w, fail *f)
{
	uint64_t key = f->key;
	kcomm_allreduce_u64(w, &key, 1, KCOMM_MIN);
	if (key == KEY_NONE)
		return 0;
	uint64_t other = f->key == key ? f->other : UINT64_MAX;
	kcomm_allreduce_u64(w, &other, 1, KCOMM_MIN);
	uint64_t owner = f->key == key && f->other == other ? (uint64_t)kcomm_rank(w) : UINT64_MAX;
	kcomm_allreduce_u64(w, &owner, 1, KCOMM_MIN);
	uint64_t pack[6] = {f->key, (uint64_t)f->check, f->vertex, f->other, (uint64_t)f->vd, (uint64_t)f->od};
	kcomm_bcast(w, pack, sizeof pack, (int)owner);
	f->key = pack[0];
	f->check = (int64_t)pack[1];
	f->vertex = pack[2];
	f->other = pack[3];
	f->vd = (int64_t)pack[4];
	f->od = (int64_t)pack[5];
	return 1;
}

/* 0, or KEXIT_RESOURCE after kerror() when depths of N vertices do not
 * fit (every rank has the same N, so all refuse together). */
static int too_many(uint64_t N)
{
	if (N < (uint64_t)VISIT - 1)
		return 0;
	kerror("validation handles at most %" PRIu64 " vertices", (uint64_t)VISIT - 2);
	return KEXIT_RESOURCE;
}

/* --------------------------------------------------------------- words */

static void describe(const kval_result *r, const char *vs, const char *os, char *buf, size_t n)
{
	switch (r->check) {
	case KVAL_OK:
		snprintf(buf, n, "valid");
		break;
	case KVAL_PARENT_RANGE:
		snprintf(buf, n, "rule (a): vertex %s has parent %" PRIu64 ", which is neither -1 nor a vertex id", vs,
			 r->other);
		break;
	case KVAL_ROOT_RANGE:
		snprintf(buf, n, "rule (b): the root %s is not a vertex id", vs);
		break;
	case KVAL_ROOT_PARENT:
		if (r->other == NONE)
			snprintf(buf, n, "rule (b): the root %s is not reached (parent -1), it must be its own parent", vs);
		else
			snprintf(buf, n, "rule (b): the root %s has parent %s, it must be its own parent", vs, os);
		break;
	case KVAL_CYCLE:
		snprintf(buf, n, "rule (c): vertex %s lies on a cycle of parents (its parent is %s), not on a path to the root",
			 vs, os);
		break;
	case KVAL_CHAIN:
		snprintf(buf, n, "rule (c): vertex %s has parent %s, which is not reached", vs, os);
		break;
	case KVAL_REACH:
		snprintf(buf, n,
			 "rule (e): vertex %s is not reached but its neighbour %s is (depth %" PRId64
			 "): the reached set is not the root's component",
			 vs, os, r->odepth);
		break;
	case KVAL_TREE_EDGE:
		snprintf(buf, n, "rule (c): vertex %s has parent %s, which is not its neighbour (the tree edge is not in the graph)",
			 vs, os);
		break;
	case KVAL_DEPTH:
		snprintf(buf, n,
			 "rule (d): edge {%s, %s} joins depth %" PRId64 " and depth %" PRId64 ", more than one level apart",
			 vs, os, r->vdepth, r->odepth);
		break;
	case KVAL_NEDGE:
		snprintf(buf, n, "rule (f): the search reported nedge %" PRIu64 ", validation counts %" PRIu64, r->claimed,
			 r->nedge);
		break;
	case KVAL_FILE_VERTEX:
		snprintf(buf, n, "rule (a): vertex %" PRIu64 " (parent %" PRId64 ") is not a vertex of the graph", r->vertex,
			 (int64_t)r->other);
		break;
	case KVAL_FILE_PARENT:
		snprintf(buf, n, "rule (a): vertex %" PRIu64 " has parent %" PRId64 ", which is neither -1 nor a vertex id",
			 r->vertex, (int64_t)r->other);
		break;
	case KVAL_FILE_TWICE:
		snprintf(buf, n, "vertex %" PRIu64 " is listed twice, with different parents", r->vertex);
		break;
	case KVAL_FILE_ROOTS:
		snprintf(buf, n, "rule (b): the file names root %" PRIu64 " but --root is %" PRIu64, r->vertex, r->other);
		break;
	case KVAL_FILE_NOROOT:
		snprintf(buf, n, "rule (b): no vertex is its own parent (give the root with --root)");
		break;
	case KVAL_FILE_ROOT:
		snprintf(buf, n, "rule (b): the root %" PRIu64 " is not a vertex of the graph", r->vertex);
		break;
	default:
		KBUG("bad check %d", r->check);
	}
}

static void id_str(const uint64_t *map, uint64_t x, char *s, size_t n)
{
	if (x == NONE)
		snprintf(s, n, "-1");
	else if (!map)
		snprintf(s, n, "%" PRIu64, x);
	else if (map[x] == UINT64_MAX)
		snprintf(s, n, "internal %" PRIu64, x);
	else
		snprintf(s, n, "%" PRIu64, map[x]);
}

void kval_describe(const kval_result *res, const uint64_t *map, char *buf, size_t n)
{
	char vs[48], os[48];
	/* out-of-range ids cannot go through the map; a file's ids are input ids */
	int vmap = res->check != KVAL_ROOT_RANGE && res->check != KVAL_NEDGE && res->check < KVAL_FILE_VERTEX;
	int omap = vmap && res->check != KVAL_PARENT_RANGE;
	id_str(vmap ? map : NULL, res->vertex, vs, sizeof vs);
	id_str(omap ? map : NULL, res->other, os, sizeof os);
	describe(res, vs, os, buf, n);
}

static void result_init(kval_result *res, uint64_t claimed)
{
	memset(res, 0, sizeof *res);
	res->vertex = res->other = res->vertex_orig = NONE;
	res->vdepth = res->odepth = -1;
	res->claimed = claimed;
}

static void result_fail(kval_result *res, const fail *f)
{
	res->check = (int)f->check;
	res->rule = check_rule(res->check);
	res->vertex = f->vertex;
	res->other = f->other;
	res->vdepth = f->vd;
	res->odepth = f->od;
	res->vertex_orig = f->vertex;
	kval_describe(res, NULL, res->msg, sizeof res->msg);
}

/* ------------------------------------------------------------ partition */

/* 1 if some column of the row has a depth outside [dv-1, dv+1].  Unreached
 * is the type's largest value (UNR, or U8UNR in the compact copy), so a
 * reached/unreached pair fails too and two unreached endpoints pass. */
#define ROW_BAD(NAME, IT, DT)                                                        \
	static int NAME(const IT *c, uint64_t n, const DT *dc, uint64_t dv)          \
	{                                                                            \
		uint64_t bad = 0;                                                    \
		for (uint64_t k = 0; k < n; k++)                                     \
			bad |= ((uint64_t)dc[c[k]] + 1 - dv) > 2;                    \
		return bad != 0;                                                     \
	}
ROW_BAD(row_bad32, uint32_t, uint32_t)
ROW_BAD(row_bad64, uint64_t, uint32_t)
ROW_BAD(row_bad32_8, uint32_t, uint8_t)
ROW_BAD(row_bad64_8, uint64_t, uint8_t)

/* Reached count and largest depth; and the depths in one byte when the tree
 * is shallow (Kronecker trees are), so the gathers of the edge scan hit a 4x
 * smaller array.  Returns that copy or NULL. */
#define U8UNR 255
#define U8MAX 253

static uint8_t *depth_scan(const uint32_t *depth, uint64_t N, kval_result *res)
{
	uint8_t *d8 = kmalloc((size_t)N + 8);
	uint64_t reached = 0;
	uint32_t maxd = 0;
#pragma omp parallel for schedule(static) reduction(+ : reached) reduction(max : maxd)
	for (uint64_t v = 0; v < N; v++) {
		uint32_t d = depth[v];
		if (d != UNR) {
			reached++;
			maxd = d > maxd ? d : maxd;
		}
		d8[v] = (uint8_t)(d == UNR ? U8UNR : d > U8MAX ? U8MAX + 1 : d);
	}
	res->reached = reached;
	res->maxdepth = maxd > INT_MAX ? INT_MAX : (int)maxd;
	if (maxd <= U8MAX)
		return d8;
	free(d8);
	return NULL;
}

/* Classify the edge {v, u} that failed the one-line test. */
static void edge_fail(fail *f, uint64_t v, uint32_t dv, uint64_t u, uint32_t du)
{
	if ((dv == UNR) != (du == UNR)) {
		if (dv == UNR)
			fail_set(f, KVAL_REACH, v, u, -1, dep(du));
		else
			fail_set(f, KVAL_REACH, u, v, -1, dep(dv));
	} else if (dv != UNR) {
		if (dv > du)
			fail_set(f, KVAL_DEPTH, v, u, dv, du);
		else
			fail_set(f, KVAL_DEPTH, u, v, du, dv);
	}
}

static int row_has(const kpart_block *b, uint64_t lo, uint64_t hi, uint64_t c)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint64_t x = kpart_idx(b->colidx, b->idx64, mid);
		if (x == c)
			return 1;
		if (x < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Rows are scanned in chunks; inside a chunk the row's vertex advances by
 * one, restarting at each block boundary (no division per row). */
enum { ROWS = 2048 };

static void check_block(const kpart_block *b, uint64_t root, const uint64_t *pred, const uint32_t *depth,
			const uint8_t *d8, fail *f)
{
	const kpart_grid *g = &b->g;
	uint64_t colbase = kpart_col_first(g, b->j);
	const uint32_t *dc = depth + colbase;
	const uint8_t *dc8 = d8 ? d8 + colbase : NULL;
	uint64_t nchunks = (b->nrows + ROWS - 1) / ROWS;
	fail best = fail_none;
#pragma omp parallel
	{
		fail mine = fail_none;
#pragma omp for schedule(dynamic, 2) nowait
		for (uint64_t c = 0; c < nchunks; c++) {
			uint64_t r0 = c * ROWS, r1 = r0 + ROWS < b->nrows ? r0 + ROWS : b->nrows;
			uint64_t k = r0 % g->nb, v = kpart_row_vertex(g, b->i, r0);
			for (uint64_t r = r0; r < r1; r++, k++, v++) {
				if (k == g->nb) {
					k = 0;
					v = kpart_row_vertex(g, b->i, r);
				}
				uint64_t lo = b->rowptr[r], hi = b->rowptr[r + 1];
				uint32_t dv = depth[v];
				int bad;
				if (dc8) {
					uint64_t dv8 = d8[v];
					bad = b->idx64 ? row_bad64_8((const uint64_t *)b->colidx + lo, hi - lo, dc8, dv8)
						       : row_bad32_8((const uint32_t *)b->colidx + lo, hi - lo, dc8, dv8);
				} else {
					bad = b->idx64 ? row_bad64((const uint64_t *)b->colidx + lo, hi - lo, dc, dv)
						       : row_bad32((const uint32_t *)b->colidx + lo, hi - lo, dc, dv);
				}
				if (bad)
					for (uint64_t e = lo; e < hi; e++) {
						uint64_t u = colbase + kpart_idx(b->colidx, b->idx64, e);
						if (u != v && ((uint64_t)depth[u] + 1 - dv) > 2)
							edge_fail(&mine, v, dv, u, depth[u]);
					}
				if (dv == UNR || v == root)
					continue;
				/* the tree edge pred[v] -> v is ours when pred[v] is in our columns */
				uint64_t p = pred[v], lc = p - colbase;
				if (lc < b->ncols && !row_has(b, lo, hi, lc))
					fail_set(&mine, KVAL_TREE_EDGE, v, p, dv, dep(depth[p]));
			}
		}
#pragma omp critical(kval_merge)
		fail_merge(&best, &mine);
	}
	fail_merge(f, &best);
}

/* ------------------------------------------------------ claimed levels */

/* kbfs's packed entries carry the level at which the search found each
 * vertex.  Taken as a claim, they are checked in one pass over the block:
 * each entry of a reached row is looked up in a bitmap of the columns
 * deeper than the row + 1 (a bit a vertex, so the few bitmaps in use stay
 * in cache where a byte a vertex does not), and each tree edge held here
 * is looked for in its row.  Only the block's rows and columns are read,
 * so no rank repeats another's work. */
enum { LV_MAX = 16 }; /* deeper claims take kval_partition (a bitmap a level) */

/* lv[v] for v in [lo, hi): the claimed level, U8UNR when unreached.  Returns 1
 * when a parent is out of range or a level exceeds LV_MAX; the largest
 * level goes to *maxl. */
static int levels_fill(const uint64_t *ent, uint64_t N, uint64_t lo, uint64_t hi, uint8_t *lv, uint64_t *maxl)
{
	uint64_t m = 0;
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(max : m) reduction(| : bad)
	for (uint64_t v = lo; v < hi; v++) {
		uint64_t e = ent[v];
		if (e == KBFS_NONE) {
			lv[v] = U8UNR;
			continue;
		}
		uint64_t l = e >> KBFS_PARENT_BITS;
		bad |= (e & KBFS_PARENT_MASK) >= N || l > LV_MAX;
		lv[v] = (uint8_t)(l > LV_MAX ? LV_MAX : l);
		m = l > m ? l : m;
	}
	if (m > *maxl)
		*maxl = m;
	return bad;
}

/* 1 if x is in the sorted c[0..n): a branch-free lower bound, then a look. */
#define ROW_FIND(NAME, IT)                                                \
	static inline int NAME(const IT *c, uint64_t n, uint64_t x)       \
	{                                                                 \
		if (!n)                                                   \
			return 0;                                         \
		for (; n > 1; n -= n / 2)                                 \
			c = c[n / 2 - 1] < x ? c + n / 2 : c;             \
		return *c == x;                                           \
	}
ROW_FIND(row_find32, uint32_t)
ROW_FIND(row_find64, uint64_t)

/* 1 when some reached row of rows [r0, r1) has an entry that is unreached or
 * deeper than the row + 1, or its tree edge is held here (the parent is a
 * column) but missing or the parent is not above the row.  deep + k * wc:
 * the columns deeper than k or unreached.  Every edge is stored both ways
 * (kpart(5)), so the other side of each test is the other row's: with
 * every row passing, edges join levels at most one apart or two unreached
 * vertices, and a parent found here at level <= d-1 is at d-1 exactly (its
 * own row holds v at level d).  Reached owned rows are counted into sum[0]
 * and their tuple degrees into sum[1]. */
#define ROWS_CLAIMED(NAME, IT, FIND)                                                                             \
	static int NAME(const kpart_block *b, uint64_t root, const uint64_t *ent, const uint8_t *lv,                \
			const uint64_t *deep, uint64_t wc, uint64_t r0, uint64_t r1, uint64_t sum[2])              \
	{                                                                                                      \
		const kpart_grid *g = &b->g;                                                                   \
		uint64_t colbase = kpart_col_first(g, b->j), own = (uint64_t)b->j * g->nb, miss = 0;           \
		uint64_t k = r0 % g->nb, v = kpart_row_vertex(g, b->i, r0);                                    \
		for (uint64_t r = r0; r < r1; r++, k++, v++) {                                                 \
			if (k == g->nb) {                                                                      \
				k = 0;                                                                         \
				v = kpart_row_vertex(g, b->i, r);                                              \
			}                                                                                      \
			uint64_t d = lv[v];                                                                    \
			if (d == U8UNR)                                                                        \
				continue;                                                                      \
			if (r - own < g->nb) {                                                                 \
				sum[0]++;                                                                      \
				sum[1] += b->tdeg[k];                                                          \
			}                                                                                      \
			const IT *c = (const IT *)b->colidx + b->rowptr[r];                                    \
			const uint64_t *far = deep + (d + 1) * wc;                                             \
			uint64_t n = b->rowptr[r + 1] - b->rowptr[r];                                          \
			for (uint64_t e = 0; e < n; e++)                                                       \
				miss |= far[c[e] >> 6] >> (c[e] & 63);                                         \
			uint64_t lc = (ent[v] & KBFS_PARENT_MASK) - colbase;                                   \
			if (v != root && lc < b->ncols)                                                        \
				miss |= !d || !FIND(c, n, lc) || (deep[(d - 1) * wc + lc / 64] >> (lc & 63) & 1); \
		}                                                                                              \
		return (int)(miss & 1);                                                                        \
	}
ROWS_CLAIMED(rows_claimed32, uint32_t, row_find32)
ROWS_CLAIMED(rows_claimed64, uint64_t, row_find64)

/* 1 when the block agrees with the claimed levels lv (filled for its rows
 * and columns, at most maxl); sum as for ROWS_CLAIMED, over the block. */
static int claimed_block(const kpart_block *b, uint64_t root, const uint64_t *ent, const uint8_t *lv, int maxl,
			 uint64_t sum[2])
{
	uint64_t colbase = kpart_col_first(&b->g, b->j), wc = b->ncols / 64;
	int nd = maxl + 2;
	uint64_t *deep = kmalloc(kmul(kmul((size_t)nd, (size_t)wc), 8) + 8);
#pragma omp parallel for schedule(static)
	for (uint64_t w = 0; w < wc; w++) {
		uint64_t m[64] = {0}, acc = 0;
		const uint8_t *x = lv + colbase + 64 * w;
		for (int k = 0; k < 64; k++)
			m[x[k] & 63] |= (uint64_t)1 << k; /* unreached (255) lands in 63 > nd */
		for (int k = 0; k < nd; k++)
			deep[(size_t)k * wc + w] = ~(acc |= m[k]);
	}
	uint64_t nchunks = (b->nrows + ROWS - 1) / ROWS, reached = 0, tdeg = 0;
	int bad = 0;
#pragma omp parallel for schedule(dynamic, 2) reduction(| : bad) reduction(+ : reached, tdeg)
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t r0 = c * ROWS, r1 = r0 + ROWS < b->nrows ? r0 + ROWS : b->nrows, s[2] = {0, 0};
		if (!bad) /* this thread's: it stops at its first miss */
			bad = b->idx64 ? rows_claimed64(b, root, ent, lv, deep, wc, r0, r1, s)
				       : rows_claimed32(b, root, ent, lv, deep, wc, r0, r1, s);
		reached += s[0];
		tdeg += s[1];
	}
	free(deep);
	sum[0] = reached;
	sum[1] = tdeg;
	return !bad;
}

/* The failure f (if any) into res, with the input ids of its vertices from
 * the ranks that own them.  Collective. */
static int finish(kcomm *world, const kpart_block *b, fail *f, kval_result *res)
{
	const kpart_grid *g = &b->g;
	uint64_t N = g->N;
	if (f->key == KEY_NONE)
		return 0;
	result_fail(res, f);
	/* input ids of the two vertices, from the ranks that own them */
	int any = b->orig != NULL;
	uint64_t any64 = (uint64_t)any;
	kcomm_allreduce_u64(world, &any64, 1, KCOMM_MAX);
	if (any64) {
		uint64_t ids[4] = {0, 0, 0, 0}; /* {found, id} for vertex and other */
		uint64_t xs[2] = {res->vertex, res->other};
		for (int k = 0; k < 2; k++)
			if (xs[k] < N && kpart_owner(g, xs[k]) == kpart_rank_of(g, b->i, b->j) && b->orig) {
				ids[2 * k] = 1;
				ids[2 * k + 1] = b->orig[xs[k] - kpart_owned_first(g, b->i, b->j)];
			}
		kcomm_allreduce_u64(world, ids, 4, KCOMM_SUM);
		if (ids[0])
			res->vertex_orig = ids[1];
		if (res->check != KVAL_PARENT_RANGE && res->check != KVAL_ROOT_RANGE && res->check != KVAL_NEDGE) {
			char vs[64], os[64];
			snprintf(vs, sizeof vs, "%" PRIu64 " (internal %" PRIu64 ")", ids[0] ? ids[1] : res->vertex,
				 res->vertex);
			if (res->other == NONE)
				snprintf(os, sizeof os, "-1");
			else
				snprintf(os, sizeof os, "%" PRIu64 " (internal %" PRIu64 ")", ids[2] ? ids[3] : res->other,
					 res->other);
			describe(res, vs, os, res->msg, sizeof res->msg);
		}
	}
	return 1;
}

/* The start of a check of block b: res cleared, the size refused when too large. */
static int begin_block(const kpart_block *b, uint64_t nedge_claimed, kval_result *res)
{
	result_init(res, nedge_claimed);
	if (too_many(b->g.N))
		return KEXIT_RESOURCE;
	KASSERT(b->tdeg);
	return 0;
}

int kval_partition(kcomm *world, const kpart_block *b, uint64_t root, const uint64_t *pred, uint64_t nedge_claimed,
		   kval_result *res)
{
	const kpart_grid *g = &b->g;
	uint64_t N = g->N;
	if (begin_block(b, nedge_claimed, res))
		return KEXIT_RESOURCE;
	uint32_t *depth = kmalloc(kmul((size_t)N, sizeof *depth) + 4);
	fail f = fail_none;
	depth_compute(pred, N, root, depth, &f);
	if (!agree(world, &f)) {
		uint8_t *d8 = depth_scan(depth, N, res);
		check_block(b, root, pred, depth, d8, &f);
		free(d8);
		uint64_t first = kpart_owned_first(g, b->i, b->j), sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
		for (uint64_t k = 0; k < g->nb; k++)
			if (depth[first + k] != UNR)
				sum += b->tdeg[k];
		kcomm_allreduce_u64(world, &sum, 1, KCOMM_SUM);
		res->nedge = sum / 2;
		if (!agree(world, &f) && nedge_claimed != UINT64_MAX && nedge_claimed != res->nedge)
			fail_set(&f, KVAL_NEDGE, NONE, NONE, -1, -1);
	}
	free(depth);
	return finish(world, b, &f, res);
}

int kval_partition_packed(kcomm *world, const kpart_block *b, uint64_t root, uint64_t *ent, uint64_t nedge_claimed,
			  kval_result *res)
{
	const kpart_grid *g = &b->g;
	uint64_t N = g->N;
	if (begin_block(b, nedge_claimed, res))
		return KEXIT_RESOURCE;
	/* the block's columns, then its row blocks outside them */
	uint8_t *lv = kmalloc((size_t)N + 8);
	uint64_t colbase = kpart_col_first(g, b->j), maxl = 0;
	int bad = root >= N || ent[root] != kbfs_packed(0, root);
	if (!bad)
		bad = levels_fill(ent, N, colbase, colbase + b->ncols, lv, &maxl);
	for (int m = 0; m < g->C && !bad; m++)
		if (m != b->j) {
			uint64_t v0 = ((uint64_t)m * g->R + b->i) * g->nb;
			bad = levels_fill(ent, N, v0, v0 + g->nb, lv, &maxl);
		}
	/* {ranks that disagree, reached owned vertices, their tuple degrees};
	 * the largest level */
	uint64_t red[3] = {1, 0, 0}, top = maxl;
	if (!bad && claimed_block(b, root, ent, lv, (int)maxl, red + 1))
		red[0] = 0;
	free(lv);
	kcomm_allreduce_u64(world, red, 3, KCOMM_SUM);
	if (red[0]) {
		/* the levels are not the tree's depths (or too deep): recompute
		 * them from the parents alone, which also names the failure */
#pragma omp parallel for schedule(static)
		for (uint64_t v = 0; v < N; v++)
			ent[v] = kbfs_packed_parent(ent[v]);
		return kval_partition(world, b, root, ent, nedge_claimed, res);
	}
	kcomm_allreduce_u64(world, &top, 1, KCOMM_MAX);
	res->reached = red[1];
	res->maxdepth = (int)top;
	res->nedge = red[2] / 2;
	fail f = fail_none;
	if (nedge_claimed != UINT64_MAX && nedge_claimed != res->nedge)
		fail_set(&f, KVAL_NEDGE, NONE, NONE, -1, -1);
	return finish(world, b, &f, res);
}

/* ------------------------------------------------------------ edge list */

int kval_edges(kcomm *world, const uint64_t *uv, uint64_t ne_local, uint64_t nv, uint64_t root, const uint64_t *pred,
	       uint64_t nedge_claimed, kval_result *res)
{
	result_init(res, nedge_claimed);
	if (too_many(nv))
		return KEXIT_RESOURCE;
	uint32_t *depth = kmalloc(kmul((size_t)nv, sizeof *depth) + 4);
	fail f = fail_none;
	depth_compute(pred, nv, root, depth, &f);
	if (agree(world, &f))
		goto out;
	uint8_t *d8 = depth_scan(depth, nv, res);
	size_t nw = (size_t)(nv + 63) / 64;
	uint64_t *conf = kcalloc(nw ? nw : 1, sizeof *conf);
	uint64_t cnt = 0;
	fail best = fail_none;
#pragma omp parallel
	{
		fail mine = fail_none;
		uint64_t c = 0;
#pragma omp for schedule(static) nowait
		for (uint64_t k = 0; k < ne_local; k++) {
			uint64_t u = uv[2 * k], v = uv[2 * k + 1];
			if (u == v || u >= nv || v >= nv)
				continue;
			uint64_t du, dv;
			if (d8) {
				du = d8[u];
				dv = d8[v];
				if ((du + 1 - dv) > 2) {
					edge_fail(&mine, v, depth[v], u, depth[u]);
					continue;
				}
				if (du == U8UNR)
					continue;
			} else {
				du = depth[u];
				dv = depth[v];
				if ((du + 1 - dv) > 2) {
					edge_fail(&mine, v, (uint32_t)dv, u, (uint32_t)du);
					continue;
				}
				if (du == UNR)
					continue;
			}
			c++;
			/* a tree edge joins consecutive depths; its child is the deeper end */
			if (dv == du + 1 && pred[v] == u)
				__atomic_fetch_or(&conf[v / 64], (uint64_t)1 << (v % 64), __ATOMIC_RELAXED);
			else if (du == dv + 1 && pred[u] == v)
				__atomic_fetch_or(&conf[u / 64], (uint64_t)1 << (u % 64), __ATOMIC_RELAXED);
		}
#pragma omp atomic
		cnt += c;
#pragma omp critical(kval_merge)
		fail_merge(&best, &mine);
	}
	fail_merge(&f, &best);
	free(d8);
	kcomm_allreduce_u64(world, conf, nw, KCOMM_BOR);
	kcomm_allreduce_u64(world, &cnt, 1, KCOMM_SUM);
	res->nedge = cnt;
	uint64_t miss = NONE;
#pragma omp parallel for schedule(static) reduction(min : miss)
	for (uint64_t v = 0; v < nv; v++)
		if (depth[v] != UNR && v != root && !(conf[v / 64] >> (v % 64) & 1) && v < miss)
			miss = v;
	if (miss != NONE)
		fail_set(&f, KVAL_TREE_EDGE, miss, pred[miss], dep(depth[miss]), dep(depth[pred[miss]]));
	free(conf);
	if (!agree(world, &f) && nedge_claimed != UINT64_MAX && nedge_claimed != res->nedge)
		fail_set(&f, KVAL_NEDGE, NONE, NONE, -1, -1);
out:
	free(depth);
	if (f.key == KEY_NONE)
		return 0;
	result_fail(res, &f);
	return 1;
}

/* ------------------------------------------------------------ files */

/* input id -> internal id, NONE when not a vertex of the graph */
static uint64_t to_internal(const kval_graph *g, uint64_t x)
{
	if (!g->map)
		return x < g->nreal ? x : NONE;
	return kidmap_find(&g->inv, x);
}

static void file_fail(kval_result *res, int check, uint64_t vertex, uint64_t other)
{
	res->check = check;
	res->rule = check == KVAL_FILE_TWICE ? 0 : check == KVAL_FILE_VERTEX || check == KVAL_FILE_PARENT ? 'a' : 'b';
	res->vertex = res->vertex_orig = vertex;
	res->other = other;
	kval_describe(res, NULL, res->msg, sizeof res->msg);
}

int kval_tree_read(const kval_graph *g, const char *path, uint64_t opt_root, uint64_t *pred, uint64_t *root_in,
		   uint64_t *root, kval_result *res)
{
	uint64_t froot, n, *v;
	int64_t *par;
	result_init(res, NONE);
	*root_in = *root = NONE;
	int rc = kpred_read(path, &froot, &n, &v, &par);
	if (rc)
		return rc;
	for (uint64_t x = 0; x < g->N; x++)
		pred[x] = NONE;
	uint64_t self = NONE;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t iv = to_internal(g, v[k]);
		uint64_t ip = par[k] == -1 ? NONE : par[k] < -1 ? NONE - 1 : to_internal(g, (uint64_t)par[k]);
		if (iv == NONE) {
			if (par[k] == -1)
				continue;
			file_fail(res, KVAL_FILE_VERTEX, v[k], (uint64_t)par[k]);
			goto out;
		}
		if (par[k] != -1 && ip >= NONE - 1) {
			file_fail(res, KVAL_FILE_PARENT, v[k], (uint64_t)par[k]);
			goto out;
		}
		if (pred[iv] != NONE && pred[iv] != ip) {
			file_fail(res, KVAL_FILE_TWICE, v[k], NONE);
			goto out;
		}
		pred[iv] = ip;
		if (ip == iv && self == NONE)
			self = v[k];
	}
	*root_in = opt_root != NONE ? opt_root : froot != NONE ? froot : self;
	if (opt_root != NONE && froot != NONE && froot != opt_root)
		file_fail(res, KVAL_FILE_ROOTS, froot, opt_root);
	else if (*root_in == NONE)
		file_fail(res, KVAL_FILE_NOROOT, NONE, NONE);
	else if ((*root = to_internal(g, *root_in)) == NONE)
		file_fail(res, KVAL_FILE_ROOT, *root_in, NONE);
out:
	free(v);
	free(par);
	return 0;
}

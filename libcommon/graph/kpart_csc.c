/*
 * kpart_csc.c: the builder's buckets into blocks (kpart_build.c step 5):
 * radix sorts, sort and dedup of every bucket into the CSC, and the
 * relabelling by degree (the owner's order, the CSC remapped and re-sorted).
 */
#include "kpart.h"
#include "kpart_builder.h"
#include "klog.h"
#include "kmem.h"
#include "ksort.h"

#include <stdlib.h>
#include <string.h>

enum { PACK_PAR = 1 << 20 }; /* bytes: packed on all threads from here */

/* ------------------------------------------------------------ radix sorts */

#define DEFINE_SORT(NAME, T)                                                                            \
	static void NAME(T *a, T *tmp, size_t n, int bits)                                              \
	{                                                                                               \
		if (n <= 48) {                                                                          \
			for (size_t k = 1; k < n; k++) {                                                \
				T x = a[k];                                                             \
				size_t m = k;                                                           \
				for (; m > 0 && a[m - 1] > x; m--)                                      \
					a[m] = a[m - 1];                                                \
				a[m] = x;                                                               \
			}                                                                               \
			return;                                                                         \
		}                                                                                       \
		int lg = kpart_bits_for(n), maxd = lg < 4 ? 4 : lg > 11 ? 11 : lg;                      \
		int passes = bits ? (bits + maxd - 1) / maxd : 1, db = (bits + passes - 1) / passes;   \
		size_t cnt[1 << 11];                                                                    \
		T *src = a, *dst = tmp, mask = (T)(((T)1 << db) - 1);                                   \
		for (int p = 0, sh = 0; p < passes && sh < bits; p++, sh += db) {                       \
			memset(cnt, 0, sizeof(size_t) << db);                                           \
			for (size_t k = 0; k < n; k++)                                                  \
				cnt[(src[k] >> sh) & mask]++;                                           \
			if (cnt[(src[0] >> sh) & mask] == n)                                            \
				continue;                                                               \
			size_t s = 0;                                                                   \
			for (size_t d = 0; d < ((size_t)1 << db); d++) {                                \
				size_t c = cnt[d];                                                      \
				cnt[d] = s;                                                             \
				s += c;                                                                 \
			}                                                                               \
			for (size_t k = 0; k < n; k++) {                                                \
				T x = src[k];                                                           \
				dst[cnt[(x >> sh) & mask]++] = x;                                       \
			}                                                                               \
			T *t = src;                                                                     \
			src = dst;                                                                      \
			dst = t;                                                                        \
		}                                                                                       \
		if (src != a)                                                                           \
			memcpy(a, src, n * sizeof(T));                                                  \
	}
DEFINE_SORT(sort32, uint32_t)
DEFINE_SORT(sort64, uint64_t)

/* --------------------------------------------------------------- blocks */

/* n entries of wi bytes at src to dst as wo-byte ones (8 to 4: each write
 * lands at or before the bytes read for it, so dst may overlap src) */
static void move_run(char *dst, const char *src, uint64_t n, size_t wi, size_t wo)
{
	if (wi == wo)
		memmove(dst, src, (size_t)n * wo);
	else
		for (uint64_t e = 0; e < n; e++)
			((uint32_t *)dst)[e] = (uint32_t)((const uint64_t *)src)[e];
}

/* The buckets' deduplicated runs (dcnt[k] entries of wi bytes at bstart[k])
 * packed to the front as entries of wo <= wi bytes; returns their number.
 * From 4 threads in batches of whole buckets: copied (in parallel) to a
 * buffer, then from it to their place, which ends before the next batch's
 * runs begin (twice the bytes moved, so not worth it on fewer threads). */
static uint64_t pack_runs(char *res, const uint64_t *bstart, const uint64_t *dcnt, uint64_t nbk, size_t wi,
			  size_t wo)
{
	uint64_t *to = kmalloc(kmul((size_t)nbk + 1, 8)), maxr = 0;
	to[0] = 0;
	for (uint64_t k = 0; k < nbk; k++) {
		to[k + 1] = to[k] + dcnt[k];
		maxr = dcnt[k] > maxr ? dcnt[k] : maxr;
	}
	uint64_t nnz = to[nbk], k0 = 0;
	while (k0 < nbk && wi == wo && to[k0] == bstart[k0]) /* in place already */
		k0++;
	size_t cap = (size_t)32 << 20; /* the buffer: 32 MB, or the largest run */
	if (nnz * wo < (uint64_t)PACK_PAR || kpart_nthreads() < 4)
		cap = 0;
	else if (cap < maxr * wo)
		cap = (size_t)maxr * wo;
	if (!cap) {
		for (uint64_t k = k0; k < nbk; k++) /* in order: each run lands before the next one */
			move_run(res + to[k] * wo, res + bstart[k] * wi, dcnt[k], wi, wo);
		free(to);
		return nnz;
	}
	char *buf = kmalloc(cap);
	while (k0 < nbk) {
		uint64_t k1 = k0 + 1;
		while (k1 < nbk && (to[k1 + 1] - to[k0]) * wo <= cap)
			k1++;
#pragma omp parallel for schedule(dynamic, 64)
		for (uint64_t k = k0; k < k1; k++)
			move_run(buf + (to[k] - to[k0]) * wo, res + bstart[k] * wi, dcnt[k], wi, wo);
		size_t n = (size_t)(to[k1] - to[k0]) * wo, T = (size_t)kpart_nthreads();
#pragma omp parallel for schedule(static)
		for (size_t t = 0; t < T; t++)
			memcpy(res + to[k0] * wo + n * t / T, buf + n * t / T, n * (t + 1) / T - n * t / T);
		k0 = k1;
	}
	free(buf);
	free(to);
	return nnz;
}

/* Sort and deduplicate every bucket: the CSC of pt (colptr, rowidx, nnz). */
void kpart_build_csc(const plan *pl, part *pt)
{
	uint64_t ncols = pl->g.N / (uint64_t)pl->C, nbk = pl->nbk, maxb = 0;
	kpart_block *b = &pt->b;
	b->colptr = kcalloc((size_t)ncols + 1, 8);
	pt->pre = pl->rowdeg & 1 ? NULL : kcalloc((size_t)ncols, 8); /* rowdeg: tdeg from rtd instead */
	uint64_t *dcnt = kmalloc(kmul((size_t)nbk, 8));
	for (uint64_t k = 0; k < nbk; k++)
		if (pt->bstart[k + 1] - pt->bstart[k] > maxb)
			maxb = pt->bstart[k + 1] - pt->bstart[k];
	int br = pl->br, rb = pl->rbits, r64 = pl->res64;
	uint64_t rowmask = pl->rowmask, *cnt = b->colptr + 1, *pre = pt->pre, nrows = pl->g.N / (uint64_t)pl->R;
	uint64_t *rtd = pt->rtd = pl->rowdeg & 1 ? kcalloc((size_t)nrows, 8) : NULL;
	uint64_t *rdeg = pt->rdeg = pl->rowdeg & 2 ? kcalloc((size_t)nrows, 8) : NULL;
#pragma omp parallel if (pt->E > 65536)
	{
		void *tmp = kmalloc(kmul((size_t)maxb, r64 ? 8 : 4));
#pragma omp for schedule(dynamic, 8)
		for (uint64_t k = 0; k < nbk; k++) {
			uint64_t s = pt->bstart[k], n = pt->bstart[k + 1] - s, out = s, prev = 0;
			if (r64)
				sort64((uint64_t *)pt->res + s, tmp, (size_t)n, rb);
			else
				sort32((uint32_t *)pt->res + s, tmp, (size_t)n, rb);
			for (uint64_t e = s; e < s + n; e++) {
				uint64_t x = r64 ? ((uint64_t *)pt->res)[e] : ((uint32_t *)pt->res)[e];
				uint64_t kk = k << rb | x, col = kk >> br;
				if (rtd) /* the buckets' rows cross: every thread may meet a row */
					__atomic_fetch_add(&rtd[kk & rowmask], 1, __ATOMIC_RELAXED);
				else
					pre[col]++;
				if (e > s && x == prev)
					continue;
				prev = x;
				cnt[col]++;
				if (rdeg)
					__atomic_fetch_add(&rdeg[kk & rowmask], 1, __ATOMIC_RELAXED);
				if (r64)
					((uint64_t *)pt->res)[out++] = kk & rowmask;
				else
					((uint32_t *)pt->res)[out++] = (uint32_t)(kk & rowmask);
			}
			dcnt[k] = out - s;
		}
		free(tmp);
	}
	KASSERT(r64 || !pl->idx64);
	size_t w = pl->idx64 ? 8 : 4, nnz = (size_t)pack_runs(pt->res, pt->bstart, dcnt, nbk, r64 ? 8 : 4, w);
	kpart_prefix_sum(b->colptr, (size_t)ncols + 1);
	free(dcnt);
	kpart_csc_done(pl, pt, nnz);
}

void kpart_csc_done(const plan *pl, part *pt, uint64_t nnz)
{
	kpart_block *b = &pt->b;
	size_t w = pl->idx64 ? 8 : 4;
	b->rowidx = krealloc(pt->res, nnz ? (size_t)nnz * w : 1);
	pt->res = NULL;
	b->nnz = nnz;
	b->ncols = pl->g.N / (uint64_t)pl->C;
	b->nrows = pl->g.N / (uint64_t)pl->R;
	b->idx64 = pl->idx64;
	b->g = pl->g;
	b->i = pt->i;
	b->j = pt->j;
	free(pt->bstart);
	free(pt->bfill);
	pt->bstart = pt->bfill = NULL;
}

static inline void setx(void *a, int idx64, uint64_t k, uint64_t x)
{
	if (idx64)
		((uint64_t *)a)[k] = x;
	else
		((uint32_t *)a)[k] = (uint32_t)x;
}

/* Sort every column's rows (after a relabelling). */
static void sort_columns(kpart_block *b, int bits)
{
	uint64_t maxc = 0;
	for (uint64_t c = 0; c < b->ncols; c++)
		if (b->colptr[c + 1] - b->colptr[c] > maxc)
			maxc = b->colptr[c + 1] - b->colptr[c];
#pragma omp parallel
	{
		void *tmp = kmalloc(kmul((size_t)maxc, b->idx64 ? 8 : 4));
#pragma omp for schedule(dynamic, 256)
		for (uint64_t c = 0; c < b->ncols; c++) {
			uint64_t s = b->colptr[c], n = b->colptr[c + 1] - s;
			if (b->idx64)
				sort64((uint64_t *)b->rowidx + s, tmp, (size_t)n, bits);
			else
				sort32((uint32_t *)b->rowidx + s, tmp, (size_t)n, bits);
		}
		free(tmp);
	}
}

/* Rename columns and rows (old local index -> new) and re-sort. */
void kpart_remap_csc(const plan *pl, kpart_block *b, const uint64_t *colperm, const uint64_t *rowperm)
{
	uint64_t *np = kcalloc((size_t)b->ncols + 1, 8);
#pragma omp parallel for schedule(static) if (b->ncols > 65536)
	for (uint64_t c = 0; c < b->ncols; c++) /* colperm: a permutation */
		np[colperm[c] + 1] = b->colptr[c + 1] - b->colptr[c];
	kpart_prefix_sum(np, (size_t)b->ncols + 1);
	void *nr = kmalloc(kmul((size_t)b->nnz, b->idx64 ? 8 : 4));
#pragma omp parallel for schedule(dynamic, 1024)
	for (uint64_t c = 0; c < b->ncols; c++) {
		uint64_t d = np[colperm[c]];
		for (uint64_t k = b->colptr[c]; k < b->colptr[c + 1]; k++)
			setx(nr, b->idx64, d++, rowperm[kpart_idx(b->rowidx, b->idx64, k)]);
	}
	free(b->colptr);
	free(b->rowidx);
	b->colptr = np;
	b->rowidx = nr;
	sort_columns(b, pl->br);
}

/* Owner's order of its block: degree descending, then id. newpos[old] = new. */
void kpart_degree_order(const uint64_t *deg, uint64_t nb, uint64_t *newpos)
{
	uint64_t maxd = 0;
#pragma omp parallel for schedule(static) reduction(max : maxd) if (nb > 65536)
	for (uint64_t k = 0; k < nb; k++)
		maxd = deg[k] > maxd ? deg[k] : maxd;
	int db = kpart_bits_for(maxd + 1), kb = kpart_bits_for(nb);
	KASSERT(db + kb <= 64);
	uint64_t *key = kmalloc(kmul((size_t)nb, 16)), *tmp = key + nb;
#pragma omp parallel for schedule(static) if (nb > 65536)
	for (uint64_t k = 0; k < nb; k++)
		key[k] = (maxd - deg[k]) << kb | k;
	ksort_u64(key, tmp, (size_t)nb, db + kb); /* on all threads when large */
	uint64_t kmask = kb == 64 ? UINT64_MAX : (UINT64_C(1) << kb) - 1;
#pragma omp parallel for schedule(static) if (nb > 65536)
	for (uint64_t k = 0; k < nb; k++)
		newpos[key[k] & kmask] = k;
	free(key);
}

#include "kidmap.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* *at = min(*at, k), atomically */
static void store_min(uint64_t *at, uint64_t k)
{
	uint64_t old = __atomic_load_n(at, __ATOMIC_RELAXED);
	while (k < old && !__atomic_compare_exchange_n(at, &old, k, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

/*
 * The dense table is filled on all OpenMP threads (kbfs's roots at scale 29
 * on 4x1: 2^27 ids a rank into a table of 2^29, ~2 s on one thread): each
 * id's lowest position by an atomic minimum, then the repeated id named is
 * the one a sequential walk from the end names, the repeated id whose first
 * position is the lowest (a position whose id's lowest is another is a
 * repeat of the id at that lowest one).
 */
enum { PAR = 1 << 16 };
uint64_t kidmap_build(kidmap *m, const uint64_t *ids, uint64_t n)
{
	uint64_t dup = KIDMAP_NONE;
	memset(m, 0, sizeof *m);
	uint64_t max = 0, have = 0;
#pragma omp parallel for schedule(static) reduction(+ : have) reduction(max : max) if (n > PAR)
	for (uint64_t k = 0; k < n; k++)
		if (ids[k] != KIDMAP_NONE) {
			have++;
			if (ids[k] > max)
				max = ids[k];
		}
	if (!have)
		return dup;
	if (max < 4 * n + 1024) {
		m->ndense = max + 1;
		uint64_t *d = m->dense = kmalloc(kmul((size_t)m->ndense, 8)), nd = m->ndense, first = UINT64_MAX;
#pragma omp parallel for schedule(static) if (nd > PAR)
		for (uint64_t x = 0; x < nd; x++)
			d[x] = KIDMAP_NONE;
#pragma omp parallel for schedule(static) if (n > PAR)
		for (uint64_t k = 0; k < n; k++)
			if (ids[k] != KIDMAP_NONE)
				store_min(&d[ids[k]], k);
#pragma omp parallel for schedule(static) reduction(min : first) if (n > PAR)
		for (uint64_t k = 0; k < n; k++)
			if (ids[k] != KIDMAP_NONE && d[ids[k]] != k && d[ids[k]] < first)
				first = d[ids[k]];
		return first == UINT64_MAX ? KIDMAP_NONE : ids[first];
	}
	m->pairs = kmalloc(kmul((size_t)have, 16));
	for (uint64_t k = 0; k < n; k++)
		if (ids[k] != KIDMAP_NONE) {
			m->pairs[2 * m->npairs] = ids[k];
			m->pairs[2 * m->npairs++ + 1] = k;
		}
	qsort(m->pairs, (size_t)m->npairs, 16, cmp_pair);
	for (uint64_t k = 1; k < m->npairs && dup == KIDMAP_NONE; k++)
		if (m->pairs[2 * k] == m->pairs[2 * k - 2])
			dup = m->pairs[2 * k];
	return dup;
}

uint64_t kidmap_find(const kidmap *m, uint64_t id)
{
	if (m->dense)
		return id < m->ndense ? m->dense[id] : KIDMAP_NONE;
	uint64_t lo = 0, hi = m->npairs;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (m->pairs[2 * mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->npairs && m->pairs[2 * lo] == id ? m->pairs[2 * lo + 1] : KIDMAP_NONE;
}

void kidmap_free(kidmap *m)
{
	free(m->dense);
	free(m->pairs);
	memset(m, 0, sizeof *m);
}

/* test_kidmap: the inverse id map against a plain walk, dense and sparse,
 * small and large enough for the threads (padding entries, repeated ids:
 * the lowest position kept, the repeated id named as the sequential walk
 * names it). */
#include "kidmap.h"
#include "kmem.h"
#include "tap.h"

#include <stdlib.h>

/* The reference: the lowest position of id in ids, or KIDMAP_NONE. */
static uint64_t lowest(const uint64_t *ids, uint64_t n, uint64_t id)
{
	for (uint64_t k = 0; k < n; k++)
		if (ids[k] == id)
			return k;
	return KIDMAP_NONE;
}

/* The repeated id the dense table names (the one whose first position is
 * the lowest), found by sorting positions by id: none when all differ. */
static int cmp_idpos(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}
static void repeats(const uint64_t *ids, uint64_t n, uint64_t *by_first, uint64_t *smallest)
{
	uint64_t *p = kmalloc(n * 16 + 16), np = 0, best = UINT64_MAX;
	for (uint64_t k = 0; k < n; k++)
		if (ids[k] != KIDMAP_NONE) {
			p[2 * np] = ids[k];
			p[2 * np++ + 1] = k;
		}
	qsort(p, (size_t)np, 16, cmp_idpos);
	*smallest = KIDMAP_NONE;
	for (uint64_t k = 1; k < np; k++)
		if (p[2 * k] == p[2 * k - 2]) {
			/* p[2k-2]'s position is not necessarily the id's first: go back */
			uint64_t j = k - 1;
			while (j > 0 && p[2 * j - 2] == p[2 * k])
				j--;
			if (p[2 * j + 1] < best)
				best = p[2 * j + 1];
			if (*smallest == KIDMAP_NONE)
				*smallest = p[2 * k];
		}
	*by_first = best == UINT64_MAX ? KIDMAP_NONE : ids[best];
	free(p);
}

/* n ids below span (a permutation's prefix when span >= n and distinct),
 * every pad-th one padding, rep ids repeated at random positions */
static void check(const char *what, uint64_t n, uint64_t span, uint64_t pad, uint64_t rep)
{
	uint64_t *ids = kmalloc(n * 8 + 8);
	for (uint64_t k = 0; k < n; k++)
		ids[k] = span >= n ? k * (span / n) + (tap_rand() % (span / n)) : tap_rand() % span;
	for (uint64_t k = n; k-- > 1;) { /* shuffle */
		uint64_t j = tap_rand() % (k + 1), t = ids[k];
		ids[k] = ids[j];
		ids[j] = t;
	}
	for (uint64_t r = 0; r < rep; r++)
		ids[tap_rand() % n] = ids[tap_rand() % n];
	if (pad)
		for (uint64_t k = 0; k < n; k += pad)
			ids[k] = KIDMAP_NONE;
	kidmap m;
	uint64_t dup = kidmap_build(&m, ids, n), by_first, smallest;
	repeats(ids, n, &by_first, &smallest);
	is_u64(dup, m.dense ? by_first : smallest, "%s: the repeated id named (%s table)", what,
	       m.dense ? "dense" : "sparse");
	if (rep > 3)
		ok(dup != KIDMAP_NONE, "%s: a repeat is seen", what);
	uint64_t bad = 0;
	for (int t = 0; t < 200; t++) {
		uint64_t k = tap_rand() % n;
		if (ids[k] != KIDMAP_NONE && kidmap_find(&m, ids[k]) != lowest(ids, n, ids[k]))
			bad++;
	}
	is_u64(bad, 0, "%s: 200 ids found at their lowest position", what);
	ok(kidmap_find(&m, span + 5) == KIDMAP_NONE && kidmap_find(&m, KIDMAP_NONE) == KIDMAP_NONE,
	   "%s: an id not there is not found", what);
	kidmap_free(&m);
	free(ids);
}

int main(void)
{
	check("small, dense, distinct", 1000, 1000, 0, 0);
	check("small, dense, repeats", 1000, 2000, 0, 5);
	check("small, sparse, repeats", 1000, 1ull << 40, 7, 5);
	check("large, dense, distinct, padding", 300000, 300000, 13, 0);
	check("large, dense, repeats, padding", 300000, 600000, 13, 40);
	check("large, dense, one repeat", 300000, 300000, 0, 1);
	check("large, sparse, repeats", 300000, 1ull << 50, 0, 40);
	kidmap m;
	uint64_t none[3] = {KIDMAP_NONE, KIDMAP_NONE, KIDMAP_NONE};
	ok(kidmap_build(&m, none, 3) == KIDMAP_NONE && kidmap_find(&m, 0) == KIDMAP_NONE, "all padding: empty");
	kidmap_free(&m);
	return tap_done();
}

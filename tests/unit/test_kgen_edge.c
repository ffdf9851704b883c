/*
 * test_kgen_edge: the generator's shared arithmetic (kgen_edge.h) against
 * kgen_edges().  The GPU kernel (gpu/kgpu_gen.cu) is one call of
 * kgen_edge_thread() per thread, so running that call here for every
 * thread of a launch checks on the host what the device computes: edges
 * at many indices for scales 1..30 (and 40, 42), both generator versions,
 * several edgefactors and seeds, launches of several run lengths over
 * unaligned ranges, and whole graphs up to scale 16.  kgen_edges() takes
 * another path for the bulk (eight streams interleaved, OpenMP blocks), so
 * the comparison is between two implementations of the same edges.
 */
#include "kgen.h"
#include "kgen_edge.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: the indices and ranges the checks pick */
static uint64_t next_rand(void)
{
	static uint64_t x;
	uint64_t z = (x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

static int init(kgen_ctx *g, int scale, uint64_t ef, uint64_t s1, uint64_t s2, int version)
{
	kgen_params p = {.scale = scale, .edgefactor = ef, .seed1 = s1, .seed2 = s2, .version = version};
	if (kgen_init(g, &p)) {
		printf("Bail out! kgen_init (scale %d, edgefactor %" PRIu64 ", v%d)\n", scale, ef, version);
		exit(1);
	}
	return 0;
}

/* Edges [first, first+n) as a launch of threads making `run` edges each
 * (threads in a scrambled order, as a GPU may run them). */
static void launch(const kgen_ctx *g, uint64_t first, uint64_t n, uint64_t run, uint64_t *uv)
{
	kgen_job j = kgen_job_of(g);
	const kgen_mat5 *tab64 = kgen_pow2_table() + 64;
	uint64_t nt = (n + run - 1) / run + 2; /* two threads too many: they must do nothing */
	for (uint64_t k = 0; k < nt; k++)
		kgen_edge_thread(&j, tab64, first, n, run, (k * 7919) % nt, uv);
}

/* 1 when the launch's edges equal kgen_edges' for [first, first+n); the
 * first difference is printed. */
static int same_range(const kgen_ctx *g, uint64_t first, uint64_t n, uint64_t run)
{
	uint64_t *want = xmalloc(16 * n), *got = xmalloc(16 * (n + 1));
	kgen_edges(g, first, n, want);
	memset(got, 0xA5, 16 * (n + 1));
	launch(g, first, n, run, got);
	int same = !memcmp(want, got, 16 * n);
	uint64_t guard;
	memset(&guard, 0xA5, 8);
	if (got[2 * n] != guard || got[2 * n + 1] != guard) {
		printf("#   the launch wrote past its %" PRIu64 " edges\n", n);
		same = 0;
	}
	for (uint64_t e = 0; e < n && !same; e++)
		if (want[2 * e] != got[2 * e] || want[2 * e + 1] != got[2 * e + 1]) {
			printf("#   scale %d v%d edge %" PRIu64 " (run %" PRIu64 "): got (%" PRIu64 ", %" PRIu64
			       "), want (%" PRIu64 ", %" PRIu64 ")\n",
			       g->p.scale, g->p.version, first + e, run, got[2 * e], got[2 * e + 1], want[2 * e],
			       want[2 * e + 1]);
			break;
		}
	free(want);
	free(got);
	return same;
}

/* Single edges at many indices of every scale 1..30, both versions. */
static void check_indices(void)
{
	for (int version = 3; version >= 2; version--)
		for (int scale = 1; scale <= 30; scale++) {
			kgen_ctx g;
			init(&g, scale, 16, 2, 3, version);
			uint64_t M = g.nedges;
			int good = 1, checked = 0;
			uint64_t fixed[] = {0, 1, 2, M / 2, M - 2, M - 1};
			for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++, checked++)
				good &= same_range(&g, fixed[k], 1, 1);
			for (int k = 0; k < 250; k++, checked++)
				good &= same_range(&g, next_rand() % M, 1, 64);
			/* the header's pieces alone: one raw edge, the scramble */
			kgen_job j = kgen_job_of(&g);
			for (int k = 0; k < 20; k++) {
				uint64_t i = next_rand() % M, a, b, ra, rb;
				kgen_mrg s = g.seeded;
				kgen_skip_word(&s, i, kgen_pow2_table() + 64);
				kgen_edge_from(&s, scale, j.lim, &a, &b);
				kgen_edge_raw(&g, i, &ra, &rb);
				good &= a == ra && b == rb && a <= b && b >> scale == 0;
				good &= kgen_scr_apply(&j.keys, a) == kgen_scramble(&g, a);
			}
			ok(good, "v%d scale %d: %d single edges (first, last, middle, random) equal kgen_edges'", version,
			   scale, checked);
		}
}

/* Launches over unaligned ranges: runs of 1, 7, 64 and 1000 edges a thread. */
static void check_launches(void)
{
	static const uint64_t runs[] = {1, 7, 64, 1000};
	for (int version = 3; version >= 2; version--)
		for (int scale = 1; scale <= 30; scale += scale < 20 ? 1 : 2) {
			kgen_ctx g;
			init(&g, scale, 16, 2, 3, version);
			uint64_t M = g.nedges, n = M < 5000 ? M : 5000;
			int good = 1;
			for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
				uint64_t first = M - n ? next_rand() % (M - n) : 0;
				good &= same_range(&g, first, n, runs[r]);
				good &= same_range(&g, M - n, n, runs[r]); /* the end of the index space */
			}
			ok(good, "v%d scale %d: launches of %" PRIu64 " edges (runs of 1, 7, 64, 1000) equal kgen_edges'",
			   version, scale, n);
		}
}

/* Whole graphs: scales 1..16, edgefactors 1, 3 and 16, both versions. */
static void check_whole(void)
{
	static const uint64_t efs[] = {1, 3, 16};
	for (size_t e = 0; e < 3; e++) {
		int good = 1;
		for (int version = 3; version >= 2; version--)
			for (int scale = 1; scale <= (efs[e] == 16 ? 16 : 14); scale++) {
				kgen_ctx g;
				init(&g, scale, efs[e], 2, 3, version);
				good &= same_range(&g, 0, g.nedges, 64);
			}
		ok(good, "edgefactor %" PRIu64 ": every edge of scales 1..%d, v3 and v2, equals kgen_edges'", efs[e],
		   efs[e] == 16 ? 16 : 14);
	}
}

/* The rejection path: at scale 16 draws below the limit occur (more under
 * v2's limit), and the launch follows kgen_edges through them. */
static void check_redraws(void)
{
	uint64_t redraws[2] = {0, 0};
	for (int version = 3; version >= 2; version--) {
		kgen_ctx g;
		init(&g, 16, 16, 2, 3, version);
		uint32_t lim = kgen_limit(version);
		kgen_mrg s = g.seeded;
		for (uint64_t i = 0; i < g.nedges; i++) {
			kgen_mrg t = s;
			for (int l = 0; l < 16; l++) {
				uint32_t u;
				while ((u = kgen_mrg_step(&t)) < lim)
					redraws[version - 2]++;
			}
			kgen_mat_vec(kgen_pow2_table()[64], &s);
		}
	}
	ok(redraws[1] > 0 && redraws[0] > redraws[1],
	   "scale 16: the whole-graph check went through redraws (v3 %" PRIu64 ", v2 %" PRIu64 ")", redraws[1],
	   redraws[0]);
}

/* Other seeds (the seeding and the scramble keys move), and the largest
 * indices (skips by every bit of a 62-bit index). */
static void check_seeds_and_big(void)
{
	static const uint64_t seeds[][2] = {{7, 11}, {0, 0}, {UINT64_MAX, 12345}, {1ull << 61, 1ull << 62}};
	int good = 1;
	for (size_t k = 0; k < 4; k++)
		for (int version = 3; version >= 2; version--) {
			kgen_ctx g;
			init(&g, 12, 16, seeds[k][0], seeds[k][1], version);
			good &= same_range(&g, 0, g.nedges, 64);
			init(&g, 27, 3, seeds[k][0], seeds[k][1], version);
			good &= same_range(&g, next_rand() % (g.nedges - 300), 300, 7);
		}
	ok(good, "seeds (7,11), (0,0), (2^64-1,12345), (2^61,2^62): scale 12 whole and scale 27 ranges equal");

	good = 1;
	for (int version = 3; version >= 2; version--) {
		kgen_ctx g;
		init(&g, 42, 1u << 20, 2, 3, version); /* 2^62 edges */
		good &= g.nedges == 1ull << 62;
		good &= same_range(&g, g.nedges - 100, 100, 64);
		good &= same_range(&g, (1ull << 62) - (1ull << 40) - 33, 77, 7);
		init(&g, 40, 16, 2, 3, version);
		good &= same_range(&g, next_rand() % g.nedges, 50, 64);
	}
	ok(good, "scale 42 with 2^62 edges (indices up to 2^62-1) and scale 40: launches equal kgen_edges'");
}

int main(void)
{
	check_indices();
	check_launches();
	check_whole();
	check_redraws();
	check_seeds_and_big();
	return tap_done();
}

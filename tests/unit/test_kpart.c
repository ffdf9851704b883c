/*
 * test_kpart: the partition math, and partitions built by kpart_build read
 * back with kpart_load against a brute-force reference.
 *
 * Also a helper for the shell tests (not TAP):
 *   test_kpart --print-edges FILE   "u v" per tuple of an edge file
 *   test_kpart --make-edges FILE NV NE SEED [map|zlib]
 *                                   random tuples (duplicates, self-loops)
 */
#include "kcomm.h"
#include "kedge.h"
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "kpart.h"
#include "kpart/kpart_build.h"
#include "tap.h"

#include <fcntl.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

/* Random tuples with hubs, duplicates and self-loops. */
static uint64_t *random_tuples(uint64_t nv, uint64_t ne, uint64_t seed)
{
	uint64_t *uv = malloc(16 * ne + 16), s = seed * 2654435761u + 1;
	for (uint64_t k = 0; k < ne; k++) {
		uint64_t r = rnd(&s);
		uv[2 * k] = (r & 3) ? rnd(&s) % nv : rnd(&s) % (nv < 8 ? nv : 8); /* hubs */
		uv[2 * k + 1] = (r & 12) == 0 ? uv[2 * k] : rnd(&s) % nv;         /* self-loops */
		if ((r & 0x70) == 0 && k)                                          /* duplicates */
			uv[2 * k] = uv[2 * k - 2], uv[2 * k + 1] = uv[2 * k - 1];
	}
	return uv;
}

static int write_edges(const char *path, uint64_t nv, const uint64_t *uv, uint64_t ne, const uint64_t *map,
		       int zlib)
{
	kedge_info info = {.flags = KEDGE_F_UNDIRECTED, .nv = nv, .ne = ne};
	info.prov = "program=test_kpart\nkind=test\nseed1=7\nseed2=9\n";
	kedge_writer *w;
	int rc = kedge_create(path, 1, &info, map, zlib, &w);
	if (!rc)
		rc = kedge_write(w, uv, (size_t)ne);
	if (!rc)
		rc = kedge_finish(w);
	return rc;
}

/* ------------------------------------------------------------------ math */

static void test_math(void)
{
	kpart_grid g;
	ok(kpart_grid_init(&g, 1000, 2, 3) == 0 && g.N == 1152 && g.nb == 192, "1000 vertices on 2x3: N 1152, nb 192");
	ok(kpart_grid_init(&g, 64, 1, 1) == 0 && g.N == 64 && g.nb == 64, "64 vertices on 1x1: no padding");
	ok(kpart_grid_init(&g, 65, 1, 1) == 0 && g.N == 128, "65 vertices pad to 128");
	ok(kpart_grid_init(&g, 5, 2, 3) == -1, "R*C > nv refused");
	ok(kpart_grid_init(&g, 6, 2, 3) == 0 && g.nb == 64, "R*C == nv accepted");
	ok(kpart_grid_init(&g, 100, 0, 1) == -1 && kpart_grid_init(&g, 100, 1, -2) == -1, "R, C <= 0 refused");
	ok(kpart_grid_init(&g, 0, 1, 1) == -1, "no vertices refused");
	ok(kpart_grid_init(&g, UINT64_MAX, 3, 1) == -1, "N overflowing 64 bits refused");
	static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}, {2, 3}, {3, 2}, {3, 5}};
	for (size_t t = 0; t < sizeof grids / sizeof grids[0]; t++) {
		int R = grids[t][0], C = grids[t][1], bad = 0;
		kpart_grid_init(&g, (uint64_t)R * C * 64 * 3 - 17, R, C);
		uint64_t ncols = g.N / C, nrows = g.N / R;
		bad |= g.N % ((uint64_t)R * C * 64) != 0 || g.N < g.nv || g.N - (uint64_t)R * C * 64 >= g.nv;
		for (uint64_t v = 0; v < g.N; v++) {
			int i = kpart_owner_row(&g, v), j = kpart_owner_col(&g, v);
			uint64_t first = kpart_owned_first(&g, i, j), lr = kpart_local_row(&g, v);
			bad |= i < 0 || i >= R || j < 0 || j >= C || kpart_owner(&g, v) != i * C + j;
			bad |= v < first || v >= first + g.nb;                          /* in its owner's block */
			bad |= v < kpart_col_first(&g, j) || v >= kpart_col_first(&g, j) + ncols; /* column range */
			bad |= lr >= nrows || kpart_row_vertex(&g, i, lr) != v || lr / g.nb != (uint64_t)j;
		}
		/* every edge u->v has exactly one home, and local indices fit */
		for (uint64_t u = 0; u < g.N; u += 7)
			for (uint64_t v = 0; v < g.N; v += 5) {
				int i = kpart_owner_row(&g, v), j = kpart_owner_col(&g, u);
				bad |= u - kpart_col_first(&g, j) >= ncols || kpart_local_row(&g, v) >= nrows;
				bad |= kpart_row_vertex(&g, i, kpart_local_row(&g, v)) != v;
			}
		ok(!bad, "%dx%d: owner, block, column range, local rows round-trip", R, C);
	}
}

/* ------------------------------------------------------------ round trips */

typedef struct want {
	uint64_t *e;  /* sorted deduplicated directed edges (pairs) */
	uint64_t ne;
	uint64_t *tdeg;
	uint64_t selfloops;
} want;

static want expected(uint64_t nv, const uint64_t *uv, uint64_t ne)
{
	want w = {.e = malloc(32 * ne + 16), .tdeg = calloc(nv, 8)};
	for (uint64_t k = 0; k < ne; k++) {
		uint64_t u = uv[2 * k], v = uv[2 * k + 1];
		if (u == v) {
			w.selfloops++;
			continue;
		}
		w.tdeg[u]++;
		w.tdeg[v]++;
		w.e[2 * w.ne] = u, w.e[2 * w.ne + 1] = v, w.ne++;
		w.e[2 * w.ne] = v, w.e[2 * w.ne + 1] = u, w.ne++;
	}
	qsort(w.e, w.ne, 16, cmp_pair);
	uint64_t n = 0;
	for (uint64_t k = 0; k < w.ne; k++)
		if (!n || cmp_pair(w.e + 2 * k, w.e + 2 * (n - 1))) {
			w.e[2 * n] = w.e[2 * k], w.e[2 * n + 1] = w.e[2 * k + 1];
			n++;
		}
	w.ne = n;
	return w;
}

static uint64_t at(const void *a, int idx64, uint64_t k)
{
	return idx64 ? ((const uint64_t *)a)[k] : ((const uint32_t *)a)[k];
}

/* Load every rank; compare edges (in input ids), tdeg, CSR, orig. */
static int verify(const char *dir, uint64_t nv, const want *w, const uint64_t *map, const char **why)
{
	int R, C;
	uint64_t nv2;
	*why = "manifest";
	if (kpart_manifest_grid(dir, &R, &C, &nv2) || nv2 != nv)
		return 0;
	kpart_grid g;
	kpart_grid_init(&g, nv, R, C);
	uint64_t *orig = malloc(8 * g.N), *tdeg = calloc(g.N, 8), *got = malloc(16 * w->ne + 16), n = 0;
	kpart_block *b = calloc((size_t)R * C, sizeof *b);
	int good = 1;
	for (int r = 0; r < R * C && good; r++) {
		*why = "load";
		if (kpart_load(dir, r, &b[r]) || b[r].i != r / C || b[r].j != r % C) {
			good = 0;
			break;
		}
		uint64_t first = kpart_owned_first(&g, b[r].i, b[r].j);
		for (uint64_t k = 0; k < g.nb; k++) {
			orig[first + k] = b[r].orig ? b[r].orig[k] : first + k < nv ? first + k : KPART_NO_VERTEX;
			tdeg[first + k] = b[r].tdeg[k];
		}
		/* CSR must be the transpose of CSC, both sorted */
		*why = "CSR is not the transpose of CSC";
		for (uint64_t row = 0; row < b[r].nrows && good; row++)
			for (uint64_t k = b[r].rowptr[row]; k < b[r].rowptr[row + 1]; k++) {
				uint64_t c = at(b[r].colidx, b[r].idx64, k), lo = b[r].colptr[c], hi = b[r].colptr[c + 1];
				if (k > b[r].rowptr[row] && c <= at(b[r].colidx, b[r].idx64, k - 1))
					good = 0;
				while (lo < hi) { /* binary search row in column c */
					uint64_t mid = (lo + hi) / 2;
					if (at(b[r].rowidx, b[r].idx64, mid) < row)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo == b[r].colptr[c + 1] || at(b[r].rowidx, b[r].idx64, lo) != row)
					good = 0;
			}
	}
	for (int r = 0; r < R * C && good; r++) {
		uint64_t col0 = kpart_col_first(&g, b[r].j);
		for (uint64_t c = 0; c < b[r].ncols; c++)
			for (uint64_t k = b[r].colptr[c]; k < b[r].colptr[c + 1]; k++) {
				uint64_t u = col0 + c, v = kpart_row_vertex(&g, b[r].i, at(b[r].rowidx, b[r].idx64, k));
				*why = "an edge in the wrong rank";
				if (kpart_owner_col(&g, u) != b[r].j || kpart_owner_row(&g, v) != b[r].i)
					good = 0;
				*why = "more edges than expected";
				if (n == w->ne) {
					good = 0;
					break;
				}
				got[2 * n] = orig[u], got[2 * n + 1] = orig[v], n++;
			}
	}
	if (good) {
		/* back to the file's ids when a map renamed them */
		if (map)
			for (uint64_t k = 0; k < 2 * n; k++)
				for (uint64_t x = 0; x < nv; x++)
					if (map[x] == got[k]) {
						got[k] = x;
						break;
					}
		qsort(got, n, 16, cmp_pair);
		*why = "edge sets differ";
		good = n == w->ne && !memcmp(got, w->e, 16 * n);
	}
	for (uint64_t v = 0; v < g.N && good; v++) {
		uint64_t x = orig[v];
		if (x == KPART_NO_VERTEX) {
			*why = "a real vertex without an id";
			good = v >= nv && tdeg[v] == 0;
			continue;
		}
		if (map)
			for (uint64_t y = 0; y < nv; y++)
				if (map[y] == x) {
					x = y;
					break;
				}
		*why = "tdeg";
		good = x < nv && tdeg[v] == w->tdeg[x];
	}
	for (int r = 0; r < R * C; r++)
		kpart_block_free(&b[r]);
	free(b);
	free(orig);
	free(tdeg);
	free(got);
	return good;
}

/* expected failures print their one line; keep it off the TAP output */
static int saved_stderr = -1;
static void mute(int on)
{
	fflush(stderr);
	if (on) {
		saved_stderr = dup(2);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
	} else if (saved_stderr >= 0) {
		dup2(saved_stderr, 2);
		close(saved_stderr);
		saved_stderr = -1;
	}
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int same_file(const char *a, const char *b)
{
	char cmd[900];
	snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static int no_leftovers(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls -d %s.kbfs-tmp-* >/dev/null 2>&1", dir);
	return system(cmd) != 0;
}

static void test_builds(void)
{
	static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}, {2, 3}, {3, 2}};
	char edges[300], dir[300];
	snprintf(edges, sizeof edges, "%s/g.kedge", tmp);
	snprintf(dir, sizeof dir, "%s/p", tmp);
	for (int sc = 10; sc <= 12; sc++) {
		uint64_t nv = (UINT64_C(1) << sc) - 37 * (uint64_t)(sc - 9), ne = 12 * nv;
		uint64_t *uv = random_tuples(nv, ne, (uint64_t)sc);
		want w = expected(nv, uv, ne);
		write_edges(edges, nv, uv, ne, NULL, 0);
		for (size_t t = 0; t < sizeof grids / sizeof grids[0]; t++)
			for (int mode = 0; mode < 3; mode++) {
				kpart_opts o = {.input = edges, .outdir = dir, .R = grids[t][0], .C = grids[t][1],
						.force = 1, .relabel = mode == 1, .wide = mode == 2,
						.round_tuples = mode == 2 ? 1000 : 0};
				kpart_build_stats st;
				const char *why = "build";
				int rc = kpart_build(kcomm_world(), &o, &st);
				int good = !rc && st.selfloops == w.selfloops && st.nnz == w.ne && verify(dir, nv, &w, NULL, &why);
				if (good && mode == 0)
					why = "kpart_check", good = kpart_check(dir, 0) == 0;
				ok(good, "%llu vertices on %dx%d%s: edges, owners, tdeg, CSR%s%s",
				   (unsigned long long)nv, o.R, o.C,
				   mode == 1 ? " relabelled" : mode == 2 ? " with 64-bit indices, small rounds" : "",
				   good ? "" : " -- failed: ", good ? "" : why);
			}
		free(uv);
		free(w.e);
		free(w.tdeg);
	}
}

static void test_inputs(void)
{
	char edges[300], dir[300];
	snprintf(edges, sizeof edges, "%s/m.kedge", tmp);
	snprintf(dir, sizeof dir, "%s/m", tmp);
	uint64_t nv = 700, ne = 9000, *uv = random_tuples(nv, ne, 99), *map = malloc(8 * nv);
	for (uint64_t k = 0; k < nv; k++)
		map[k] = 1000003 * k + 11;
	want w = expected(nv, uv, ne);
	const char *why = "";
	kpart_build_stats st;

	write_edges(edges, nv, uv, ne, map, 0);
	kpart_opts o = {.input = edges, .outdir = dir, .R = 2, .C = 2, .force = 1};
	int good = !kpart_build(kcomm_world(), &o, &st) && verify(dir, nv, &w, map, &why) && !kpart_check(dir, 0);
	ok(good, "an imported graph's id map becomes orig[] %s", good ? "" : why);

	write_edges(edges, nv, uv, ne, NULL, 1);
	o.relabel = 1;
	good = !kpart_build(kcomm_world(), &o, &st) && verify(dir, nv, &w, NULL, &why);
	ok(good, "a compressed edge file is read as a stream %s", good ? "" : why);

	write_edges(edges, nv, uv, ne, NULL, 0);
	o.relabel = 0;
	if (freopen(edges, "rb", stdin)) {
		o.input = "-";
		good = !kpart_build(kcomm_world(), &o, &st) && verify(dir, nv, &w, NULL, &why);
		ok(good, "standard input %s", good ? "" : why);
		o.input = edges;
	}

	/* errors: nothing is left behind */
	mute(1);
	char fresh[300];
	snprintf(fresh, sizeof fresh, "%s/fresh", tmp);
	o.outdir = fresh;
	o.R = 30, o.C = 30;
	ok(kpart_build(kcomm_world(), &o, &st) == KEXIT_USAGE && !exists(fresh) && no_leftovers(fresh),
	   "a grid with more blocks than vertices: usage error, nothing left");
	o.R = o.C = 2;
	o.force = 0;
	o.outdir = dir;
	ok(kpart_build(kcomm_world(), &o, &st) == KEXIT_IO && no_leftovers(dir),
	   "an existing directory is refused without force");
	o.outdir = fresh;
	/* flip the low bit of one id (still < nv): only the CRC can tell */
	long off = 44 + 45 + 4 * 20; /* header, provenance, 20 ids */
	FILE *f = fopen(edges, "r+b");
	fseek(f, off, SEEK_SET);
	int c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 1, f);
	fclose(f);
	ok(kpart_build(kcomm_world(), &o, &st) == KEXIT_DATA && !exists(fresh) && no_leftovers(fresh),
	   "a corrupt payload fails the CRC, nothing left");
	if (truncate(edges, 5000) == 0)
		ok(kpart_build(kcomm_world(), &o, &st) == KEXIT_DATA && !exists(fresh) && no_leftovers(fresh),
		   "a truncated edge file is refused, nothing left");
	mute(0);
	free(uv);
	free(map);
	free(w.e);
	free(w.tdeg);

	/* a loaded block written again gives the same bytes, its row offsets
	 * given or counted on the way */
	for (int r = 0; r < 4; r++) {
		kpart_block b;
		kpart_rankinfo ri;
		char orig[400], again[400], file[64];
		kpart_rank_file(file, sizeof file, r);
		snprintf(orig, sizeof orig, "%s/%s", dir, file);
		snprintf(again, sizeof again, "%s/again", tmp);
		int good = !kpart_load(dir, r, &b) && !kpart_write_rank(again, again, &b, 0, &ri) && same_file(orig, again);
		free(b.rowptr);
		b.rowptr = NULL;
		good = good && !kpart_write_rank(again, again, &b, 0, &ri) && same_file(orig, again);
		ok(good, "rank %d: load + write (row offsets given, counted) reproduces the file byte for byte", r);
		kpart_block_free(&b);
	}

	/* the column indices every reader makes: the same on 1 and 2 threads,
	 * with 32- and 64-bit indices, and refused against moved row offsets */
	kpart_manifest mm;
	if (!kpart_manifest_read(dir, &mm)) {
		for (int r = 0; r < 4; r++) {
			kpart_block b, b1;
			int good = !kpart_load(dir, r, &b) && b.colidx;
#ifdef _OPENMP
			int nt = omp_get_max_threads();
			omp_set_num_threads(1);
#endif
			good = good && !kpart_load_flags(dir, &mm, r, &b1, KPART_LOAD_NO_COLIDX) && !b1.colidx;
			good = good && !kpart_block_csr(&b1) && !memcmp(b.colidx, b1.colidx, (size_t)b.nnz * 4);
#ifdef _OPENMP
			omp_set_num_threads(nt);
#endif
			ok(good, "rank %d: column indices made on 1 thread (later, KPART_LOAD_NO_COLIDX) are the loader's", r);
			/* the same block with 64-bit indices */
			uint64_t *ri64 = malloc(8 * b1.nnz + 8);
			for (uint64_t k = 0; k < b1.nnz; k++)
				ri64[k] = ((uint32_t *)b1.rowidx)[k];
			free(b1.rowidx);
			free(b1.colidx);
			b1.rowidx = ri64;
			b1.colidx = NULL;
			b1.idx64 = 1;
			good = !kpart_block_csr(&b1);
			for (uint64_t k = 0; good && k < b.nnz; k++)
				good = ((uint64_t *)b1.colidx)[k] == ((uint32_t *)b.colidx)[k];
			ok(good, "rank %d: and with 64-bit indices", r);
			/* a row offset moved: refused */
			free(b.colidx);
			b.colidx = NULL;
			uint64_t row = 1;
			while (row < b.nrows && b.rowptr[row] == b.rowptr[row + 1])
				row++;
			b.rowptr[row]++;
			ok(kpart_block_csr(&b) == -1 && !b.colidx, "rank %d: a row offset moved: refused", r);
			kpart_block_free(&b);
			kpart_block_free(&b1);
		}
		kpart_manifest_free(&mm);
	}

	double *vals;
	int R, C;
	ok(!kpart_heatmap_values(dir, &vals, &R, &C) && R == 2 && C == 2, "heat map values");
	kpart_manifest m;
	if (!kpart_manifest_read(dir, &m)) {
		double sum = 0;
		for (int k = 0; k < R * C; k++)
			sum += vals[k];
		ok(sum == (double)m.nnz, "heat map values add up to nnz");
		FILE *dn = fopen("/dev/null", "w");
		ok(!kpart_report(dir, dn, 0) && !kpart_report(dir, dn, 1), "kpart_report text and JSON");
		fclose(dn);
		kpart_grid g = m.g;
		uint64_t d = kpart_device_bytes(&g, 1000, 0);
		uint64_t want = 8 * (g.N / 2 + 1) * 2 + 8000 + 8 * g.nb + 4 * (g.N / 2 / 8) * 2 + 32 * g.nb;
		is_u64(d, want, "device bytes follow the documented formula");
		kpart_grid g1 = g;
		g1.R = g1.C = 1;
		g1.nb = g.N;
		is_u64(kpart_device_bytes(&g1, 1000, 0),
		       8 * (g.N + 1) + 4000 + 8 * g.N + 4 * (g.N / 8) * 2 + 32 * g.N,
		       "... on 1x1 the symmetric block once");
		kpart_manifest_free(&m);
	}
	free(vals);
}

/* ----------------------------------------------------------------- helper */

static int helper(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--print-edges")) {
		kedge_info info;
		uint64_t *uv, *map;
		int rc = kedge_load(argv[2], &info, &uv, &map);
		if (rc)
			return rc;
		for (uint64_t k = 0; k < info.ne; k++)
			printf("%llu %llu\n", (unsigned long long)uv[2 * k], (unsigned long long)uv[2 * k + 1]);
		return fclose(stdout) ? KEXIT_IO : 0;
	}
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "--make-edges")) {
		uint64_t nv = strtoull(argv[3], NULL, 10), ne = strtoull(argv[4], NULL, 10);
		uint64_t *uv = random_tuples(nv, ne, strtoull(argv[5], NULL, 10)), *map = NULL;
		int zlib = argc == 7 && !strcmp(argv[6], "zlib");
		if (argc == 7 && !strcmp(argv[6], "map")) {
			map = malloc(8 * nv);
			for (uint64_t k = 0; k < nv; k++)
				map[k] = 1000003 * k + 11;
		}
		return write_edges(argv[2], nv, uv, ne, map, zlib);
	}
	fprintf(stderr, "usage: test_kpart [--print-edges FILE | --make-edges FILE NV NE SEED [map|zlib]]\n");
	return KEXIT_USAGE;
}

/* A block of 2^17 x 2^17 with about a million random entries, in memory:
 * the column indices kpart_block_csr makes, on 1 and 2 threads, 32- and
 * 64-bit, against a plain serial transpose; a column's rows out of order
 * across the threads' row ranges refused (64-bit). */
static void test_transpose(void)
{
	enum { N = 1 << 17 };
	setenv("KBFS_SYM", "0", 1); /* a 1x1 grid whose block is not symmetric: transposed */
	kpart_block b;
	memset(&b, 0, sizeof b);
	kpart_grid_init(&b.g, N, 1, 1);
	b.ncols = b.nrows = N;
	b.colptr = malloc(8 * (N + 1));
	uint32_t *ri = malloc(4 * (size_t)N * 16);
	uint64_t s = 12345, nnz = 0;
	b.colptr[0] = 0;
	for (uint64_t c = 0; c < N; c++) {
		uint64_t r = rnd(&s) % 8;
		for (int k = (int)(rnd(&s) % 16); k > 0 && r < N; k--, r += 1 + rnd(&s) % (c < 64 ? 64 : 32768))
			ri[nnz++] = (uint32_t)r;
		b.colptr[c + 1] = nnz;
	}
	b.nnz = nnz;
	b.rowidx = ri;
	uint64_t *rp = calloc(N + 1, 8), *cur = malloc(8 * N);
	uint32_t *want = malloc(4 * nnz + 4);
	for (uint64_t k = 0; k < nnz; k++)
		rp[ri[k] + 1]++;
	for (uint64_t r = 0; r < N; r++)
		rp[r + 1] += rp[r];
	memcpy(cur, rp, 8 * N);
	for (uint64_t c = 0; c < N; c++)
		for (uint64_t k = b.colptr[c]; k < b.colptr[c + 1]; k++)
			want[cur[ri[k]]++] = (uint32_t)c;
	b.rowptr = rp;
	uint64_t *ri64 = malloc(8 * nnz + 8);
	for (uint64_t k = 0; k < nnz; k++)
		ri64[k] = ri[k];
	for (int t = 1; t <= 2; t++) {
#ifdef _OPENMP
		omp_set_num_threads(t);
#endif
		b.idx64 = 0;
		b.rowidx = ri;
		int good = 1;
		/* the partitioned path, then the batched one (KPART_TEST_TRANSPOSE_BATCHED:
		 * the path of blocks of more than 2^22 rows), each from the stored
		 * rowptr (kpart_block_csr) and counting its own (kpart_transpose) */
		for (int batched = 0; batched < 2; batched++) {
			setenv("KPART_TEST_TRANSPOSE_BATCHED", batched ? "1" : "0", 1);
			uint64_t *rp2 = malloc(8 * (N + 1));
			uint32_t *ci2 = malloc(4 * nnz + 4);
			kpart_transpose(&b, rp2, ci2);
			good = good && !kpart_block_csr(&b) && !memcmp(b.colidx, want, 4 * nnz) &&
			       !memcmp(ci2, want, 4 * nnz) && !memcmp(rp2, rp, 8 * (N + 1));
			free(rp2);
			free(ci2);
			free(b.colidx);
			b.colidx = NULL;
			/* a row offset moved, and the last one short: refused */
			uint64_t r = N / 2;
			while (rp[r] == rp[r + 1])
				r++;
			rp[r]++;
			good = good && kpart_block_csr(&b) == -1 && !b.colidx;
			rp[r]--;
			rp[N]--;
			good = good && kpart_block_csr(&b) == -1 && !b.colidx;
			rp[N]++;
		}
		unsetenv("KPART_TEST_TRANSPOSE_BATCHED");
		b.idx64 = 1;
		b.rowidx = ri64;
		good = good && !kpart_block_csr(&b);
		for (uint64_t k = 0; good && k < nnz; k++)
			good = ((uint64_t *)b.colidx)[k] == want[k];
		free(b.colidx);
		b.colidx = NULL;
		ok(good, "%d thread(s): %llu entries transposed as one thread does (32-bit partitioned and batched, "
			 "64-bit), moved row offsets refused", t,
		   (unsigned long long)nnz);
	}
	/* 2 threads: a column with a row on each side of the rows' halves (by
	 * entries), its two rows swapped: refused, the block unchanged */
	uint64_t half = 0, k = 0;
	while (rp[half] < nnz / 2)
		half++;
	while (k + 1 < nnz && !(ri64[k] < half && ri64[k + 1] >= half)) /* in a column: ascending */
		k++;
	if (k + 1 < nnz) {
		uint64_t x = ri64[k];
		ri64[k] = ri64[k + 1];
		ri64[k + 1] = x;
		ok(kpart_block_csr(&b) == -1 && !b.colidx, "64-bit, 2 threads: a column's rows out of order refused");
	} else {
		ok(0, "no column to swap rows in");
	}
#ifdef _OPENMP
	omp_set_num_threads(2);
#endif
	b.rowidx = ri;
	free(ri64);
	free(want);
	free(cur);
	kpart_block_free(&b);
	unsetenv("KBFS_SYM");
}

/* A 1x1 block is symmetric: kpart_block_csr checks it (offsets equal, an
 * entry's mirror present) and points colidx at rowidx; kpart_block_free
 * frees the array once; an entry moved (-2) or an offset moved (-1) is
 * refused with the block unchanged; KBFS_SYM=0 transposes it, to the same
 * indices. */
static void test_symmetric(void)
{
	enum { N = 1 << 12 };
	uint8_t *adj = calloc((size_t)N * N / 8, 1);
	uint64_t s = 777, nnz = 0;
	for (int e = 0; e < 6 * N; e++) {
		uint64_t u = rnd(&s) % N, v = rnd(&s) % (u < 64 ? 64 : N);
		if (u == v)
			continue;
		adj[(u * N + v) / 8] |= (uint8_t)(1u << ((u * N + v) % 8));
		adj[(v * N + u) / 8] |= (uint8_t)(1u << ((v * N + u) % 8));
	}
	kpart_block b;
	memset(&b, 0, sizeof b);
	kpart_grid_init(&b.g, N, 1, 1);
	b.ncols = b.nrows = N;
	b.colptr = malloc(8 * (N + 1));
	b.rowptr = malloc(8 * (N + 1));
	uint32_t *ri = malloc(4 * (size_t)N * N / 8 + 4);
	b.colptr[0] = 0;
	for (uint64_t c = 0; c < N; c++) {
		for (uint64_t r = 0; r < N; r++)
			if (adj[(c * N + r) / 8] >> ((c * N + r) % 8) & 1)
				ri[nnz++] = (uint32_t)r;
		b.colptr[c + 1] = nnz;
	}
	free(adj);
	memcpy(b.rowptr, b.colptr, 8 * (N + 1));
	b.nnz = nnz;
	b.rowidx = ri;
	ok(kpart_block_symmetric(&b) == 0 && !kpart_block_csr(&b) && b.colidx == b.rowidx,
	   "a symmetric 1x1 block (%llu entries): its CSC serves as its CSR", (unsigned long long)nnz);
	setenv("KBFS_SYM", "0", 1);
	b.colidx = NULL;
	ok(!kpart_block_csr(&b) && b.colidx != b.rowidx && !memcmp(b.colidx, ri, 4 * nnz),
	   "... KBFS_SYM=0: transposed, to the same indices");
	unsetenv("KBFS_SYM");
	free(b.colidx);
	b.colidx = NULL;
	uint64_t k = 0;
	while (k + 1 < nnz && ri[k] + 1 >= ri[k + 1])
		k++;
	ri[k]++;
	ok(kpart_block_symmetric(&b) == -2 && kpart_block_csr(&b) == -2 && !b.colidx,
	   "... an entry moved in its column (offsets unchanged): refused as not symmetric");
	ri[k]--;
	b.rowptr[N / 2]++;
	ok(kpart_block_csr(&b) == -1 && !b.colidx, "... a row offset moved: refused");
	b.rowptr[N / 2]--;
	ok(!kpart_block_csr(&b) && b.colidx == b.rowidx, "... put back: kept once again");
	kpart_block_free(&b); /* rowidx freed once (ASan and valgrind would say otherwise) */
	ok(!b.colidx && !b.rowidx, "kpart_block_free: the shared array freed once");
}

/* kcomm_shared_alloc on one process (kpart's KBFS_KPART_SHARED=1 buckets;
 * t0307 runs it under mpirun): this rank's memory, usable, and none for 0
 * bytes. */
static void test_shared(void)
{
	void *peer[1] = {NULL};
	kcomm_shared *w = kcomm_shared_alloc(kcomm_world(), 4096, peer);
	ok(w && peer[0], "kcomm_shared_alloc: one rank's bytes");
	memset(peer[0], 0xab, 4096);
	ok(((unsigned char *)peer[0])[4095] == 0xab, "... writable to the end");
	/* kmem_populate maps pages, it never writes them (pass 2 of other
	 * ranks may be writing), here and on a block of several pieces */
	int r1 = kmem_populate((char *)peer[0] + 100, 3000);
	ok(((unsigned char *)peer[0])[100] == 0xab && ((unsigned char *)peer[0])[3099] == 0xab,
	   "kmem_populate: the bytes unchanged");
	size_t big = (size_t)130 << 20;
	unsigned char *m = kmalloc(big);
	m[0] = 1, m[big / 2] = 2, m[big - 1] = 3;
	int r2 = kmem_populate(m, big);
	ok(m[0] == 1 && m[big / 2] == 2 && m[big - 1] == 3, "kmem_populate: 130 MiB in pieces, written bytes kept");
	/* kpart's choice of residuals reads the host's available memory */
	uint64_t avail = kmem_available();
	ok(avail >= ((uint64_t)1 << 20) && avail <= (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE),
	   "kmem_available: between 1 MiB and the host's memory (%llu MiB)", (unsigned long long)(avail >> 20));
	ok(kcomm_host_ranks(kcomm_world()) == 1, "kcomm_host_ranks: one process, one rank here");
	/* kpart -v's page faults: 8 MiB of fresh small pages touched one by one
	 * take at least a fault each 2 MiB (one a page without huge pages) */
	uint64_t f0, f1, h0, h1;
	kmem_faults(&f0, &h0);
	size_t fresh = (size_t)8 << 20;
	unsigned char *q = mmap(NULL, fresh, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t k = 0; q != MAP_FAILED && k < fresh; k += 4096)
		q[k] = 1;
	kmem_faults(&f1, &h1);
	ok(q != MAP_FAILED && f1 >= f0 + 4, "kmem_faults: fresh memory's faults counted (%llu)",
	   (unsigned long long)(f1 - f0));
	if (q != MAP_FAILED)
		munmap(q, fresh);
	/* before Linux 5.14 the kernel refuses the advice: -1, nothing done */
	printf("# kmem_populate returned %d and %d\n", r1, r2);
	free(m);
	ok(kmem_populate(NULL, 0) == 0, "... nothing for nothing");
	kcomm_shared_free(kcomm_world(), w);
	peer[0] = (void *)1;
	w = kcomm_shared_alloc(kcomm_world(), 0, peer);
	ok(w && !peer[0], "... 0 bytes: a window, no memory");
	kcomm_shared_free(kcomm_world(), w);
	uint64_t in[3] = {7, 8, 9}, out[3] = {0, 0, 0};
	kcomm_shared_sum_scatter_u64(kcomm_world(), in, out, 3);
	ok(out[0] == 7 && out[1] == 8 && out[2] == 9, "kcomm_shared_sum_scatter_u64 on one rank: its own entries");
	memset(out, 0, sizeof out);
	kcomm_shared_allgather(kcomm_world(), in, sizeof in, out);
	ok(!memcmp(in, out, sizeof in), "kcomm_shared_allgather on one rank: its own bytes");
}

int main(int argc, char **argv)
{
	klog_init("test_kpart");
	if (argc > 1)
		return helper(argc, argv);
	klog_set_quiet(1);
	snprintf(tmp, sizeof tmp, "%s/test_kpart.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		printf("Bail out! cannot make a temporary directory\n");
		return 1;
	}
	test_math();
	test_shared();
	test_builds();
	test_inputs();
	test_transpose();
	test_symmetric();
	kfs_rmtree(tmp);
	return tap_done();
}

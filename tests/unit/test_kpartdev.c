/*
 * test_kpartdev: kpart's device path (kpart_devbuild.c through the
 * kpart_device of kpart_dev.h) without a GPU.  The mock device does each
 * primitive with plain host loops on memory it hands out itself, and
 * checks every call's contract: each array lies inside one live
 * allocation of the mock, inputs said to be sorted are sorted, keys fit
 * the bits given, nothing is left allocated, and no more than its memory
 * limit is ever allocated (alloc fails beyond it, as a GPU's would).
 * Checked: kpart_build with the device gives the CPU path's manifest and
 * rank files byte for byte on the grids and options the kpart tests cover
 * (1x1 .. 3x2 and 1x4, 4x1, relabel degree and none, --wide, an imported
 * graph with an id map, a compressed edge file, standard input), with the
 * whole block on the device, with the CSC in pieces (a small device: the
 * relabelling and CSR then on the host) and in pieces of one bucket; a
 * device too small for one bucket is refused (exit 4, nothing on disk);
 * the engine choice (auto: the device when every rank sees one, a block too
 * large for it on the host; cuda without a device, or
 * in a build without it: exit 4).  Under mpirun (t0302) the grids are the
 * ranks' own.
 */
#include "kcomm.h"
#include "kdev.h"
#include "kfmt.h"
#include "kgen/kgenrun.h"
#include "kimport.h"
#include "klog.h"
#include "kpart.h"
#include "kpart/kpart_build.h"
#include "kpart_dev.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the mock */

enum { MAXA = 64 };
typedef struct mock {
	uint64_t limit, used, peak;
	struct {
		char *p;
		size_t n;
	} a[MAXA];
	uint64_t bad, calls, sorts, swaps, opened, open_fails;
} mock;

static int visible = 1;
static int m_count(void) { return visible; }

static int m_open(kdev *d, kcomm *world)
{
	mock *m = d->impl;
	int rc = kcomm_agree(world, m->open_fails ? KEXIT_RESOURCE : 0);
	if (!rc)
		m->opened++;
	return rc;
}

static void m_close(kdev *d)
{
	mock *m = d->impl;
	for (int k = 0; k < MAXA; k++)
		if (m->a[k].p) { /* the build left something allocated */
			m->bad++;
			free(m->a[k].p);
			m->a[k].p = NULL;
		}
	m->used = 0;
}

static uint64_t m_avail(kpart_device *d)
{
	mock *m = d->base.impl;
	return m->limit > m->used ? m->limit - m->used : 0;
}

static const char *m_where(kpart_device *d) { return "mock device"; }

static void *m_alloc(kpart_device *d, size_t n)
{
	mock *m = d->base.impl;
	if (n == 0 || m->used + n > m->limit)
		return NULL;
	for (int k = 0; k < MAXA; k++)
		if (!m->a[k].p) {
			m->a[k].p = malloc(n);
			memset(m->a[k].p, 0xA5, n); /* garbage, as device memory is */
			m->a[k].n = n;
			m->used += n;
			m->peak = m->used > m->peak ? m->used : m->peak;
			return m->a[k].p;
		}
	m->bad++;
	return NULL;
}

static void m_release(kpart_device *d, void *p)
{
	mock *m = d->base.impl;
	for (int k = 0; k < MAXA; k++)
		if (m->a[k].p == p) {
			m->used -= m->a[k].n;
			free(p);
			m->a[k].p = NULL;
			return;
		}
	m->bad++;
}

/* p .. p+n inside one live allocation (a violation counted otherwise) */
static int in(mock *m, const void *p, uint64_t n)
{
	const char *c = p;
	for (int k = 0; k < MAXA; k++)
		if (m->a[k].p && c >= m->a[k].p && c + n <= m->a[k].p + m->a[k].n)
			return 1;
	m->bad++;
	if (getenv("TEST_KPARTDEV_TRAP"))
		__builtin_trap();
	return 0;
}

#define M ((mock *)d->base.impl)

static void m_put(kpart_device *d, void *dst, const void *host, size_t n)
{
	if (in(M, dst, n))
		memcpy(dst, host, n);
}

static void m_get(kpart_device *d, void *host, const void *src, size_t n)
{
	if (in(M, src, n))
		memcpy(host, src, n);
}

static void m_clear(kpart_device *d, void *p, size_t n)
{
	if (in(M, p, n))
		memset(p, 0, n);
}

static uint64_t m_scratch(kpart_device *d, uint64_t n) { return n / 4 + 64; }

static int sorted(const uint64_t *k, uint64_t n)
{
	for (uint64_t e = 1; e < n; e++)
		if (k[e - 1] > k[e])
			return 0;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* sorted into tmp on every other call: both answers of sort() are used */
static uint64_t *m_sort(kpart_device *d, uint64_t *keys, uint64_t *tmp, uint64_t n, int bits, void *scratch)
{
	M->calls++;
	if (!in(M, keys, 8 * n) || !in(M, tmp, 8 * n) || !in(M, scratch, m_scratch(d, n)) || bits < 1 || bits > 64)
		return keys;
	for (uint64_t e = 0; e < n; e++)
		if (bits < 64 && keys[e] >> bits)
			M->bad++;
	qsort(keys, (size_t)n, 8, cmp_u64);
	if (M->sorts++ & 1)
		return keys;
	memcpy(tmp, keys, (size_t)n * 8);
	memset(keys, 0x5A, (size_t)n * 8);
	return tmp;
}

static uint64_t m_unique(kpart_device *d, const uint64_t *in_, uint64_t *out, uint64_t n, void *scratch)
{
	M->calls++;
	if (!in(M, in_, 8 * n) || !in(M, out, 8 * n) || !in(M, scratch, m_scratch(d, n)) || !sorted(in_, n) ||
	    (n && in_ == out))
		return M->bad++, 0;
	uint64_t u = 0;
	for (uint64_t e = 0; e < n; e++)
		if (e == 0 || in_[e] != in_[e - 1])
			out[u++] = in_[e];
	return u;
}

static void m_scan(kpart_device *d, uint64_t *a, uint64_t n, void *scratch)
{
	M->calls++;
	if (!in(M, a, 8 * n) || !in(M, scratch, m_scratch(d, n)))
		return;
	for (uint64_t k = 1; k < n; k++)
		a[k] += a[k - 1];
}

static void m_count_sorted(kpart_device *d, const uint64_t *keys, uint64_t n, int shift, uint64_t *cnt)
{
	M->calls++;
	if (!in(M, keys, 8 * n) || !sorted(keys, n)) {
		M->bad++;
		return;
	}
	if (n && !in(M, cnt, 8 * ((keys[n - 1] >> shift) + 1)))
		return;
	for (uint64_t k = 0; k < n; k++)
		cnt[keys[k] >> shift]++;
}

static void m_count_low(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, uint64_t *cnt)
{
	M->calls++;
	if (!in(M, keys, 8 * n)) {
		M->bad++;
		return;
	}
	for (uint64_t k = 0; k < n; k++) {
		if (!in(M, &cnt[keys[k] & mask], 8)) {
			M->bad++;
			return;
		}
		cnt[keys[k] & mask]++;
	}
}

static void m_expand(kpart_device *d, const void *x, int w, const uint64_t *start, uint64_t nseg, uint64_t s0,
		     int bits, uint64_t n, uint64_t *keys)
{
	M->calls++;
	if (!in(M, x, n * (uint64_t)w) || !in(M, start, 8 * (nseg + 1)) || !in(M, keys, 8 * n) ||
	    start[nseg] - start[0] != n || (w != 4 && w != 8))
		return;
	for (uint64_t s = 0; s < nseg; s++)
		for (uint64_t e = start[s] - start[0]; e < start[s + 1] - start[0]; e++)
			keys[e] = (s0 + s) << bits | (w == 8 ? ((const uint64_t *)x)[e] : ((const uint32_t *)x)[e]);
}

static void m_remap(kpart_device *d, uint64_t *keys, uint64_t n, int lo, const uint64_t *hi, const uint64_t *low)
{
	M->calls++;
	if (!in(M, keys, 8 * n))
		return;
	uint64_t mask = (UINT64_C(1) << lo) - 1;
	for (uint64_t k = 0; k < n; k++)
		if (in(M, hi + (keys[k] >> lo), 8) && in(M, low + (keys[k] & mask), 8))
			keys[k] = hi[keys[k] >> lo] << lo | low[keys[k] & mask];
}

static void m_swap(kpart_device *d, uint64_t *keys, uint64_t n, int lo, int hibits)
{
	M->calls++;
	M->swaps++;
	if (!in(M, keys, 8 * n))
		return;
	uint64_t mask = (UINT64_C(1) << lo) - 1;
	for (uint64_t k = 0; k < n; k++)
		keys[k] = (keys[k] & mask) << hibits | keys[k] >> lo;
}

static void m_low(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, void *out, int w)
{
	M->calls++;
	if (!in(M, keys, 8 * n) || !in(M, out, n * (uint64_t)w))
		return;
	for (uint64_t k = 0; k < n; k++)
		if (w == 8)
			((uint64_t *)out)[k] = keys[k] & mask;
		else
			((uint32_t *)out)[k] = (uint32_t)(keys[k] & mask);
}

static void m_times(kpart_device *d, double *c, double *k) { *c = *k = 0; }

static void mock_device(kpart_device *d, mock *m, int built, uint64_t limit)
{
	memset(m, 0, sizeof *m);
	m->limit = limit;
	*d = (kpart_device){.base = {.name = "mock", .built = built, .impl = m, .count = m_count, .open = m_open,
				     .close = m_close},
			    .avail = m_avail, .where = m_where, .alloc = m_alloc,
			    .release = m_release, .put = m_put, .get = m_get, .clear = m_clear,
			    .scratch_bytes = m_scratch, .sort = m_sort, .unique = m_unique, .scan = m_scan,
			    .count_sorted = m_count_sorted, .count_low = m_count_low, .expand = m_expand, .remap = m_remap, .swap = m_swap,
			    .low = m_low, .times = m_times};
}

/* ---------------------------------------------------------------- the runs */

static kcomm *world;
static int rank, P;
static char dir[64];

static uint64_t total(uint64_t x)
{
	kcomm_allreduce_u64(world, &x, 1, KCOMM_SUM);
	return x;
}

static uint64_t pieces; /* the last build's CSC pieces, summed over the ranks */
static uint64_t onhost; /* the last build's blocks built on the host by auto's fallback, summed */

static int build(const char *in, const char *out, int R, int C, int relabel, int wide, int engine, kpart_device *d)
{
	kpart_opts o = {.input = in, .outdir = out, .R = R, .C = C, .relabel = relabel, .force = 1, .wide = wide,
			.engine = engine, .dev = d};
	kpart_build_stats st;
	int rc = kpart_build(world, &o, &st);
	pieces = total(st.dev_pieces);
	onhost = total(st.dev_on_host);
	return rc;
}

/* every rank file of A and B, and their manifests when manifest, are
 * the same bytes */
static int same_files(const char *a, const char *b, int RC, int manifest)
{
	uint64_t same = 0;
	if (rank == 0) {
		char x[256], y[256], f[64];
		snprintf(x, sizeof x, "%s/manifest", a);
		snprintf(y, sizeof y, "%s/manifest", b);
		same = !manifest || tap_same_file(x, y);
		for (int r = 0; r < RC && same; r++) {
			kpart_rank_file(f, sizeof f, r);
			snprintf(x, sizeof x, "%s/%s", a, f);
			snprintf(y, sizeof y, "%s/%s", b, f);
			same = tap_same_file(x, y);
		}
	}
	kcomm_bcast(world, &same, sizeof same, 0);
	return (int)same;
}

static int same_part(const char *a, const char *b, int RC) { return same_files(a, b, RC, 1); }

static int exists(const char *p)
{
	uint64_t e = rank == 0 && access(p, F_OK) == 0;
	kcomm_bcast(world, &e, sizeof e, 0);
	return (int)e;
}

enum { BIG = 1 << 30 };

/* kpart of IN on RxC on the CPU and on a mock device of `limit` bytes:
 * the same files; *swaps: parts whose CSR the device made */
static void check(const char *name, const char *in, int R, int C, int relabel, int wide, uint64_t limit,
		  int want_finish)
{
	char a[128], b[128];
	snprintf(a, sizeof a, "%s/cpu", dir);
	snprintf(b, sizeof b, "%s/dev", dir);
	kpart_device d;
	mock m;
	mock_device(&d, &m, 1, limit);
	int rc1 = build(in, a, R, C, relabel, wide, KDEV_ENGINE_CPU, &d);
	uint64_t cpu_calls = total(m.calls);
	int rc2 = build(in, b, R, C, relabel, wide, KDEV_ENGINE_CUDA, &d);
	uint64_t np = pieces, calls = total(m.calls), bad = total(m.bad), swaps = total(m.swaps), opened = total(m.opened);
	int same = rc1 == 0 && rc2 == 0 && same_part(a, b, R * C);
	/* want_finish: 1 every part's CSR on the device (one piece each);
	 * 0 the CSC in more pieces than parts (a part in pieces has its CSR
	 * made on the host, one that fitted in one piece may have it here) */
	int fin = want_finish ? swaps == (uint64_t)(R * C) && np <= (uint64_t)(R * C) : np > (uint64_t)(R * C);
	ok(same && cpu_calls == 0 && calls > 0 && bad == 0 && fin && opened == (uint64_t)P,
	   "%s, %dx%d, relabel %s%s, device of %llu bytes: the device's partition equals the CPU's "
	   "(contract kept; CSC in %llu piece(s), CSR of %llu part(s) on the device)",
	   name, R, C, kpart_relabel_name(relabel), wide ? ", --wide" : "", (unsigned long long)limit,
	   (unsigned long long)np, (unsigned long long)swaps);
	if (!same || bad || !fin)
		printf("#   rc %d %d, calls %llu, violations %llu, swaps %llu, peak %llu\n", rc1, rc2,
		       (unsigned long long)calls, (unsigned long long)bad, (unsigned long long)swaps,
		       (unsigned long long)m.peak);
}

static void quiet(int *saved)
{
	fflush(stderr);
	*saved = dup(2);
	if (!freopen("/dev/null", "w", stderr))
		printf("# cannot silence stderr\n");
}

static void loud(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

static void check_refusals(const char *in, int R, int C)
{
	int err;
	quiet(&err); /* the refusals' messages are expected */
	char b[128];
	snprintf(b, sizeof b, "%s/x", dir);
	kpart_device d;
	mock m;
	mock_device(&d, &m, 1, 4096);
	int rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_CUDA, &d);
	ok(rc == KEXIT_RESOURCE && !exists(b) && total(m.bad) == 0 && total(m.used) == 0,
	   "%dx%d: a device of 4 KB (not one bucket) is refused: exit 4, nothing on disk, nothing left allocated", R,
	   C);
	char a[128];
	snprintf(a, sizeof a, "%s/ref", dir);
	mock_device(&d, &m, 1, BIG);
	int rc0 = build(in, a, R, C, 1, 0, KDEV_ENGINE_CPU, &d);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_AUTO, &d);
	ok(rc0 == 0 && rc == 0 && total(m.calls) > 0 && total(m.opened) == (uint64_t)P && onhost == 0 &&
	       same_part(a, b, R * C),
	   "%dx%d: auto with a device on every rank builds there, the CPU's files", R, C);
	mock_device(&d, &m, 1, 4096);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_AUTO, &d);
	ok(rc == 0 && onhost == (uint64_t)(R * C) && total(m.bad) == 0 && total(m.used) == 0 && same_part(a, b, R * C),
	   "%dx%d: auto with a device of 4 KB builds every block on the host: exit 0, the CPU's files", R, C);
	visible = P > 1 && rank == 0;
	mock_device(&d, &m, 1, BIG);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_AUTO, &d);
	ok(rc == 0 && total(m.opened) == 0 && same_part(a, b, R * C),
	   "%dx%d: auto when a rank sees no device: the CPU, nothing opened", R, C);
	visible = 1;
	visible = P > 1 && rank == 0; /* with one rank: none at all */
	mock_device(&d, &m, 1, BIG);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_CUDA, &d);
	ok(rc == KEXIT_RESOURCE && total(m.opened) == 0, "--engine cuda when a rank sees no device: exit 4");
	visible = 1;
	mock_device(&d, &m, 0, BIG);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_CUDA, &d);
	ok(rc == KEXIT_RESOURCE && total(m.opened) == 0, "--engine cuda in a build without it: exit 4");
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_CUDA, NULL);
	ok(rc == KEXIT_RESOURCE, "--engine cuda with no device handed in: exit 4");
	mock_device(&d, &m, 1, BIG);
	m.open_fails = rank == P - 1;
	snprintf(b, sizeof b, "%s/y", dir);
	rc = build(in, b, R, C, 1, 0, KDEV_ENGINE_CUDA, &d);
	ok(rc == KEXIT_RESOURCE && total(m.calls) == 0 && !exists(b),
	   "the device failing to open on the last rank: exit 4 everywhere, nothing on disk");
	loud(err);
}

static void gen(const char *path, int scale, int compress)
{
	static char *argv[] = {"kgen", NULL};
	kgenrun_opts o = {.p = {.scale = scale, .edgefactor = 16, .seed1 = 2, .seed2 = 3, .version = 3},
			  .format = KFMT_KEDGE, .out = path, .force = 1, .compress = compress, .argc = 1, .argv = argv};
	if (kgenrun_generate(world, &o)) {
		printf("Bail out! kgen -s %d\n", scale);
		exit(3);
	}
}

int main(int argc, char **argv)
{
	klog_init("test_kpartdev");
	klog_set_quiet(1);
	world = kcomm_init(&argc, &argv, 0);
	rank = kcomm_rank(world);
	P = kcomm_size(world);
	if (rank != 0 && !freopen("/dev/null", "w", stdout))
		return 3;
	if (rank == 0 && !mkdtemp(strcpy(dir, "/tmp/test_kpartdev.XXXXXX"))) {
		printf("Bail out! mkdtemp\n");
		return 3;
	}
	kcomm_bcast(world, dir, sizeof dir, 0);
	printf("# %d rank%s\n", P, P == 1 ? "" : "s");
	/* every rank here runs on this host (kpart's narrow_keys counts them) */
	int hr = kcomm_host_ranks(world);
	ok(hr == P, "kcomm_host_ranks: the %d ranks of one host (%d)", P, hr);
	char g10[128], g12[128], gz[128], sp[128], txt[128];
	snprintf(g10, sizeof g10, "%s/g10.kg", dir);
	snprintf(g12, sizeof g12, "%s/g12.kg", dir);
	snprintf(gz, sizeof gz, "%s/gz.kg", dir);
	snprintf(sp, sizeof sp, "%s/sparse.kg", dir);
	snprintf(txt, sizeof txt, "%s/sparse.txt", dir);
	gen(g10, 10, 0);
	gen(g12, 12, 0);
	gen(gz, 11, 1);
	if (rank == 0) { /* sparse ids, a self-loop, a repeated edge: an id map */
		FILE *f = fopen(txt, "w");
		fprintf(f, "7 42\n42 1000000007\n1000000007 7\n7 7\n9 42\n9 42\n123456789012 5\n5 9\n");
		fclose(f);
	}
	kcomm_barrier(world);
	static char *av[] = {"kgen", NULL};
	kgenrun_opts io = {.from = txt, .import_format = KIMPORT_AUTO, .format = KFMT_KEDGE, .out = sp, .force = 1,
			   .argc = 1, .argv = av};
	if (kgenrun_import(world, &io)) {
		printf("Bail out! kgen --from\n");
		return 3;
	}

	/* grids: every one of t0300's on one process, the ranks' own under mpirun */
	static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}, {2, 3}, {3, 2}};
	int ng = (int)(sizeof grids / sizeof grids[0]), done = 0;
	for (int k = 0; k < ng; k++) {
		int R = grids[k][0], C = grids[k][1];
		if (P > 1 && R * C != P)
			continue;
		done++;
		for (int rel = 0; rel < 2; rel++) {
			check("scale 10", g10, R, C, rel, 0, BIG, 1);
			check("scale 12", g12, R, C, rel, 0, BIG, 1);
			/* a small device: the CSC in pieces, the rest on the host */
			check("scale 12, small device", g12, R, C, rel, 0, 200000, 0);
		}
	}
	if (!done) { /* a rank count no grid of the list has: 1 x P */
		check("scale 12", g12, 1, P, 1, 0, BIG, 1);
		check("scale 12", g12, 1, P, 0, 0, BIG, 1);
	}
	int R = P == 1 ? 2 : 1, C = P == 1 ? 2 : P;
	if (P == 4)
		R = C = 2;
	check("scale 12 --wide", g12, R, C, 1, 1, BIG, 1);
	check("scale 12 --wide, small device", g12, R, C, 0, 1, 300000, 0);
	check("scale 12, pieces of about one bucket", g12, P == 1 ? 1 : R, P == 1 ? 1 : C, 1, 0, 170000, 0);
	check("compressed input", gz, R, C, 1, 0, BIG, 1);
	if (P <= 2)
		check("imported ids (a map)", sp, 1, P, 1, 0, BIG, 1);
	if (P == 1) {
		check("imported ids (a map), relabel none", sp, 1, 2, 0, 0, BIG, 1);
		/* standard input: read by rank 0 */
		if (freopen(g10, "rb", stdin)) {
			char a[128], b[128];
			snprintf(a, sizeof a, "%s/p10-2x2", dir);
			snprintf(b, sizeof b, "%s/stdin", dir);
			kpart_device d;
			mock m;
			mock_device(&d, &m, 1, BIG);
			int rc1 = build(g10, a, 2, 2, 1, 0, KDEV_ENGINE_CPU, &d);
			int rc2 = build("-", b, 2, 2, 1, 0, KDEV_ENGINE_CUDA, &d);
			ok(rc1 == 0 && rc2 == 0 && m.bad == 0 && m.swaps == 4 && same_files(a, b, 4, 0),
			   "standard input, 2x2, on the device: the same rank files as the CPU's from the file");
		}
	}
	check_refusals(g10, R, C);

	if (rank == 0) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	kcomm_finalize();
	return tap_done();
}

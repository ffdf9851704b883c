/*
 * test_kgenrun: kgen's generation loop with a device (kgen_dev.h's
 * kgen_device), without a GPU.  The mock device runs the GPU kernel's one
 * call, kgen_edge_thread(), for every thread of each launch on the host,
 * eagerly in start(): its host buffer changes at once, as if the copy had
 * finished before start() returned, so a slot started again before its
 * edges were written or sent would corrupt the file.  Checked: the
 * device's files equal the CPU engine's byte for byte (kedge, text, g500)
 * over chunk sizes that split the graph into 1 to thousands of chunks,
 * the slot protocol (start only on a free slot, wait only on a started
 * one, nothing left started), the engine choice (auto, cuda without a
 * device or without the build: exit 4, no file) and a device that fails
 * to open on one rank; kpart -s fed chunk by chunk (kpart_feed) on the
 * device and on the CPU, over two passes.
 * Run alone by make test, and on 3 ranks by t0100 (mpirun) when MPI is there.
 */
#include "kcomm.h"
#include "kdev.h"
#include "kfmt.h"
#include "kgen_edge.h"
#include "kgen/kgenrun.h"
#include "kpart_builder.h"
#include "klog.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mock {
	kgen_job job;
	uint64_t chunk;
	uint64_t *host[2];
	int pending[2];
	uint64_t starts, waits, edges, bad; /* bad: protocol violations */
	int open_fails_on;                 /* rank whose open fails, -1: none */
	int opened;
} mock;

static int visible = 1;
static int m_count(void) { return visible; }

static int m_open(kdev *d, kcomm *world)
{
	mock *m = d->impl;
	int rc = kcomm_agree(world, kcomm_rank(world) == m->open_fails_on ? KEXIT_RESOURCE : 0);
	if (!rc)
		m->opened++;
	return rc;
}

static int m_alloc(kgen_device *d, kcomm *world, const kgen_ctx *g, uint64_t chunk)
{
	mock *m = d->base.impl;
	m->job = kgen_job_of(g);
	m->chunk = chunk;
	for (int s = 0; s < 2; s++)
		m->host[s] = malloc(16 * chunk);
	return 0;
}

static void m_start(kgen_device *d, int slot, uint64_t first, uint64_t n)
{
	mock *m = d->base.impl;
	if (slot < 0 || slot > 1 || m->pending[slot] || n == 0 || n > m->chunk) {
		m->bad++;
		return;
	}
	const kgen_mat5 *tab64 = kgen_pow2_table() + 64;
	for (uint64_t t = 0; t < (n + 63) / 64; t++)
		kgen_edge_thread(&m->job, tab64, first, n, 64, t, m->host[slot]);
	m->pending[slot] = 1;
	m->starts++;
	m->edges += n;
}

static const uint64_t *m_wait(kgen_device *d, int slot)
{
	mock *m = d->base.impl;
	if (slot < 0 || slot > 1 || !m->pending[slot]) {
		m->bad++;
		return m->host[0];
	}
	m->pending[slot] = 0;
	m->waits++;
	return m->host[slot];
}

static void m_times(kgen_device *d, double *gen_s, double *copy_s) { *gen_s = *copy_s = 0; }

static void m_close(kdev *d)
{
	mock *m = d->impl;
	for (int s = 0; s < 2; s++) {
		free(m->host[s]);
		m->host[s] = NULL;
	}
}

static kcomm *world;
static int rank;
static char dir[64];

static void mock_device(kgen_device *d, mock *m, int built)
{
	memset(m, 0, sizeof *m);
	m->open_fails_on = -1;
	*d = (kgen_device){.base = {.name = "mock", .built = built, .impl = m, .count = m_count, .open = m_open,
				    .close = m_close},
			   .alloc = m_alloc, .start = m_start, .wait = m_wait, .times = m_times};
}

static int run(int engine, kgen_device *d, int scale, uint64_t ef, int version, int format, const char *out)
{
	static char *argv[] = {"kgen", NULL};
	kgenrun_opts o = {.p = {.scale = scale, .edgefactor = ef, .seed1 = 2, .seed2 = 3, .version = version},
			  .format = format, .out = out, .force = 1, .engine = engine, .dev = d, .argc = 1, .argv = argv};
	return kgenrun_generate(world, &o);
}

/* 1 when the files hold the same bytes (rank 0 reads; every rank gets the answer). */
static int same_files(const char *a, const char *b)
{
	uint64_t same = rank == 0 && tap_same_file(a, b);
	kcomm_bcast(world, &same, sizeof same, 0);
	return (int)same;
}

static int exists(const char *p)
{
	uint64_t e = rank == 0 && access(p, F_OK) == 0;
	kcomm_bcast(world, &e, sizeof e, 0);
	return (int)e;
}

/* A counter summed over the ranks. */
static uint64_t total(uint64_t x)
{
	kcomm_allreduce_u64(world, &x, 1, KCOMM_SUM);
	return x;
}

static void set_chunk(uint64_t chunk)
{
	char v[32];
	snprintf(v, sizeof v, "%llu", (unsigned long long)chunk);
	if (chunk)
		setenv("KBFS_KGEN_CHUNK", v, 1);
	else
		unsetenv("KBFS_KGEN_CHUNK");
}

static void check_same(int scale, uint64_t ef, int version, int format, uint64_t chunk)
{
	char a[128], b[128];
	snprintf(a, sizeof a, "%s/cpu", dir);
	snprintf(b, sizeof b, "%s/dev", dir);
	set_chunk(chunk);
	kgen_device d;
	mock m;
	mock_device(&d, &m, 1);
	int rc1 = run(KDEV_ENGINE_CPU, &d, scale, ef, version, format, a);
	uint64_t cpu_starts = total(m.starts);
	int rc2 = run(KDEV_ENGINE_CUDA, &d, scale, ef, version, format, b);
	uint64_t M = ef << scale, c = chunk ? chunk : 1 << 24, nchunks = (M + c - 1) / c;
	uint64_t starts = total(m.starts), waits = total(m.waits), edges = total(m.edges);
	uint64_t bad = total(m.bad + (uint64_t)m.pending[0] + (uint64_t)m.pending[1]);
	static const char *const fmt[] = {"kedge", "text", "g500", "g500v2"};
	ok(rc1 == 0 && rc2 == 0 && cpu_starts == 0 && same_files(a, b) && starts == nchunks && waits == nchunks &&
		   edges == M && bad == 0,
	   "scale %d, edgefactor %llu, v%d, %s, chunks of %llu: the device's file equals the CPU's "
	   "(%llu chunks started and waited for, protocol kept)",
	   scale, (unsigned long long)ef, version, fmt[format], (unsigned long long)c, (unsigned long long)nchunks);
	if (rc1 || rc2 || starts != nchunks || waits != nchunks || edges != M || bad)
		printf("#   rc %d %d, starts %llu, waits %llu, edges %llu of %llu, violations %llu\n", rc1, rc2,
		       (unsigned long long)starts, (unsigned long long)waits, (unsigned long long)edges,
		       (unsigned long long)M, (unsigned long long)bad);
	set_chunk(0);
}

/* kpart -s's slices on the device (kpart_gen_slice): the CPU's bytes and
 * CRC over chunk sizes that split a slice into 1 to many chunks, both id
 * widths, the slot protocol kept, the device closed again */
/* The Graph500 generator at scale (edgefactor 16, seeds 2 and 3), the
 * device's chunks (set_chunk), a fresh mock device. */
static void gen_setup(kgen_ctx *g, int scale, uint64_t chunk, kgen_device *d, mock *m)
{
	kgen_params p = {.scale = scale, .edgefactor = 16, .seed1 = 2, .seed2 = 3, .version = 3};
	kgen_init(g, &p);
	set_chunk(chunk);
	mock_device(d, m, 1);
}

static void check_kpart_slice(uint64_t chunk, int idbytes, uint64_t first, uint64_t n)
{
	kgen_ctx g;
	kgen_device d;
	mock m;
	gen_setup(&g, 12, chunk, &d, &m);
	size_t bytes = (size_t)n * 2 * (size_t)idbytes;
	unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
	uint32_t ca = 0, cb = 0;
	kpart_gen_tuples(&g, first, n, idbytes, a, &ca);
	int rc = kpart_gen_slice(world, &d, &g, first, n, idbytes, b, &cb);
	uint64_t c = chunk ? chunk : KGEN_DEVICE_CHUNK, nch = (n + c - 1) / c;
	ok(rc == 0 && !memcmp(a, b, bytes) && ca == cb && m.starts == nch && m.waits == nch && m.edges == n &&
		   !m.bad && !m.pending[0] && !m.pending[1] && m.host[0] == NULL,
	   "kpart -s on the device: edges %llu+%llu as %d-byte ids in chunks of %llu: the CPU's bytes and CRC "
	   "(%llu chunks, protocol kept, closed)",
	   (unsigned long long)first, (unsigned long long)n, idbytes, (unsigned long long)c, (unsigned long long)nch);
	free(a);
	free(b);
	set_chunk(0);
}

/* kpart -s fed chunk by chunk (kpart_feed, KBFS_KPART_FEED=1): two passes,
 * each chunk's tuples the generator's, the chunks a multiple of the ranks,
 * on the mock device (the slot protocol kept, closed again) and on the CPU */
static void check_feed(uint64_t chunk, int on_dev)
{
	kgen_ctx g;
	kgen_device d;
	mock m;
	gen_setup(&g, 10, chunk, &d, &m);
	kpart_feed *f = NULL;
	int rc = kpart_feed_open(world, on_dev ? &d : NULL, &g, &f), good = !rc;
	uint64_t nch = f ? kpart_feed_chunks(f) : 0, P = (uint64_t)kcomm_size(world), seen = 0;
	uint64_t *want = malloc(16 * (chunk ? chunk : KGEN_DEVICE_CHUNK) + 16);
	for (int pass = 0; pass < 2 && f; pass++) {
		uint64_t next = 0;
		kpart_feed_begin(f);
		for (uint64_t c = 0; c < nch; c++) {
			uint64_t first, n;
			const uint64_t *uv = kpart_feed_get(f, c, &first, &n);
			kgen_edges(&g, first, n, want);
			good &= first == next && (!n || (uv && !memcmp(uv, want, 16 * n)));
			next = first + n;
			seen += n;
			kpart_feed_put(f, c);
		}
		good &= next == g.nedges;
	}
	kpart_feed_close(f);
	ok(good && nch % P == 0 && seen == 2 * g.nedges &&
		   (!on_dev || (m.starts == m.waits && !m.bad && !m.pending[0] && !m.pending[1] && m.host[0] == NULL)),
	   "kpart -s fed on %s in chunks of at most %llu: %llu chunks (a multiple of %llu), two passes of the "
	   "generator's tuples%s",
	   on_dev ? "the device" : "the CPU", (unsigned long long)(chunk ? chunk : KGEN_DEVICE_CHUNK),
	   (unsigned long long)nch, (unsigned long long)P, on_dev ? ", protocol kept, closed" : "");
	free(want);
	set_chunk(0);
}

static void check_choice(void)
{
	/* the refusals' messages are expected: keep them out of the TAP stream */
	fflush(stderr);
	int err = dup(2);
	if (!freopen("/dev/null", "w", stderr))
		printf("# cannot silence stderr\n");
	char a[128], b[128];
	snprintf(a, sizeof a, "%s/cpu", dir);
	snprintf(b, sizeof b, "%s/x", dir);
	kgen_device d;
	mock m;
	mock_device(&d, &m, 1);
	int rc = run(KDEV_ENGINE_CPU, &d, 10, 16, 3, KFMT_KEDGE, a);

	visible = 1;
	rc |= run(KDEV_ENGINE_AUTO, &d, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc == 0 && total(m.starts) > 0 && same_files(a, b), "auto with a device on every rank uses it");

	visible = kcomm_size(world) > 1 && rank == 0; /* with one rank: none at all */
	mock_device(&d, &m, 1);
	unlink(b);
	int rc2 = run(KDEV_ENGINE_AUTO, &d, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc2 == 0 && total(m.starts) == 0 && same_files(a, b),
	   "auto when a rank sees no device runs on the CPU, same file");
	unlink(b);
	rc2 = run(KDEV_ENGINE_CUDA, &d, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc2 == KEXIT_RESOURCE && total(m.opened) == 0 && !exists(b),
	   "--engine cuda when a rank sees no device: exit 4, nothing opened, no file");

	visible = 1;
	mock_device(&d, &m, 0);
	rc2 = run(KDEV_ENGINE_CUDA, &d, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc2 == KEXIT_RESOURCE && total(m.opened) == 0 && !exists(b), "--engine cuda in a build without it: exit 4");
	rc2 = run(KDEV_ENGINE_CUDA, NULL, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc2 == KEXIT_RESOURCE && !exists(b), "--engine cuda with no device handed in: exit 4");

	mock_device(&d, &m, 1);
	m.open_fails_on = kcomm_size(world) - 1;
	rc2 = run(KDEV_ENGINE_CUDA, &d, 10, 16, 3, KFMT_KEDGE, b);
	ok(rc2 == KEXIT_RESOURCE && total(m.starts) == 0 && !exists(b),
	   "the device failing to open on the last rank: exit 4 on every rank, no file");
	fflush(stderr);
	if (err >= 0) {
		dup2(err, 2);
		close(err);
	}
}

int main(int argc, char **argv)
{
	klog_init("test_kgenrun");
	world = kcomm_init(&argc, &argv, 0);
	rank = kcomm_rank(world);
	if (rank != 0 && !freopen("/dev/null", "w", stdout))
		return 3;
	if (rank == 0 && !mkdtemp(strcpy(dir, "/tmp/test_kgenrun.XXXXXX"))) {
		printf("Bail out! mkdtemp\n");
		return 3;
	}
	kcomm_bcast(world, dir, sizeof dir, 0);
	printf("# %d rank%s\n", kcomm_size(world), kcomm_size(world) == 1 ? "" : "s");

	/* chunks: one, a few (remainder), many small (odd size), one per edge */
	check_same(10, 16, 3, KFMT_KEDGE, 0);
	check_same(12, 16, 3, KFMT_KEDGE, 4096);
	check_same(12, 16, 2, KFMT_KEDGE, 5000);
	check_same(12, 3, 3, KFMT_KEDGE, 7);
	check_same(9, 1, 2, KFMT_KEDGE, 1);
	check_same(11, 16, 3, KFMT_TEXT, 999);
	check_same(11, 16, 3, KFMT_G500, 30000);
	check_same(11, 16, 2, KFMT_G500V2, 64);
	check_same(1, 1, 3, KFMT_KEDGE, 0);
	check_kpart_slice(0, 4, 0, 65536);
	check_kpart_slice(4096, 4, 1000, 20000);
	check_kpart_slice(7, 8, 12345, 1000);
	check_kpart_slice(5000, 4, 3, 5000);
	check_kpart_slice(1, 4, 65535, 1);
	check_feed(0, 1);
	check_feed(1000, 1);
	check_feed(7, 1);
	check_feed(1000, 0);
	check_choice();

	if (rank == 0) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	int rc = tap_done();
	kcomm_finalize();
	return rc;
}

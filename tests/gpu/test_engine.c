/*
 * test_engine: the CUDA engine against the CPU engine, search by search,
 * through libcommon's level loop (kbfs_search), without the kbfs program.
 *
 *   [mpirun -np R*C] test_engine [options] DIR
 *     --roots N          roots per configuration (default 4)
 *     --kernels LIST     comma-separated top-down kernels (default all)
 *     --transport T      mpi (default), nccl (NCCL alone) or peer (NCCL with the
 *                        device-resident levels of kgpu_peer.cu; refused where
 *                        they cannot run) for the CUDA engine
 *     --configs C        full (default: every direction x exchange, plus
 *                        no-compress and no-sv variants) or quick
 *     --vbfs-k K, --bu-split N, --bu-batch N, --bu-rows N, --gpu N,
 *     --bu-kernel tile|word, --no-bu-first, --no-td-small, --no-td-lists,
 *     --step-sync        CUDA engine options
 *     --csr-device       the CUDA engine gets the block without its column
 *                        indices and makes them on its GPU (as kbfs does;
 *                        by default it copies the host's)
 *     -v                 per-level tables of both engines
 * For every kernel and configuration and root, both engines search the
 * same partition; the level records (direction, frontier, found,
 * examined, bytes sent per exchange; not the bytes with peer, which
 * counts the words it stores into other GPUs) must be equal (kernel edge: its
 * top-down levels examine every stored edge, at least the CPU's count),
 * every vertex's depth
 * must be equal, and the CUDA tree must pass the Graph500 validation
 * (kval_partition).  Rank 0 prints TAP and a timing line per kernel;
 * exit 1 on any failure.  Built by tests/gpu/build.sh.
 */
#include "kbfs.h"
#include "kcomm.h"
#include "kengine.h"
#include "kgpu.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"
#include "kpart.h"
#include "kval.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	int dir, xchg, compress, sv, sub; /* sub: --bu-substeps */
} cfg;

static const cfg full_cfgs[] = {
	{KBFS_DIR_TD, KBFS_X_BITMAP, 1, 1, 0},   {KBFS_DIR_TD, KBFS_X_LIST, 1, 1, 0},   {KBFS_DIR_TD, KBFS_X_AUTO, 1, 1, 0},
	{KBFS_DIR_BU, KBFS_X_BITMAP, 1, 1, 0},   {KBFS_DIR_BU, KBFS_X_LIST, 1, 1, 0},   {KBFS_DIR_BU, KBFS_X_AUTO, 1, 1, 0},
	{KBFS_DIR_AUTO, KBFS_X_BITMAP, 1, 1, 0}, {KBFS_DIR_AUTO, KBFS_X_LIST, 1, 1, 0}, {KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 1, 0},
	{KBFS_DIR_AUTO, KBFS_X_AUTO, 0, 1, 0},   {KBFS_DIR_AUTO, KBFS_X_LIST, 0, 1, 0}, {KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 0, 0},
	{KBFS_DIR_BU, KBFS_X_LIST, 1, 0, 0},     {KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 1, 1}, {KBFS_DIR_BU, KBFS_X_LIST, 1, 0, 1},
};
static const cfg quick_cfgs[] = {
	{KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 1, 0},
	{KBFS_DIR_TD, KBFS_X_BITMAP, 1, 1, 0},
	{KBFS_DIR_BU, KBFS_X_LIST, 1, 1, 0},
	{KBFS_DIR_AUTO, KBFS_X_LIST, 0, 0, 0},
	{KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 1, 1},
};

typedef struct {
	size_t nlv;
	kbfs_level lv[256];
	uint64_t reached, tdeg_reached;
	uint64_t *pred; /* nb packed entries of this rank */
	double time;
} result;

static int rank0;
static int ntest, nfail;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
	ntest++;
	nfail += !ok;
	if (!rank0)
		return;
	va_list ap;
	printf("%s %d - ", ok ? "ok" : "not ok", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void search(kbfs_ctx *x, kcomm *w, uint64_t root, uint64_t tdeg, result *r)
{
	kcomm_barrier(w);
	double t0 = ktime();
	kbfs_search(x, root, tdeg);
	kbfs_search_finish(x);
	kcomm_barrier(w);
	r->time = ktime() - t0;
	r->nlv = x->nlv < 256 ? x->nlv : 256;
	memcpy(r->lv, x->lv, r->nlv * sizeof *r->lv);
	r->reached = x->reached;
	r->tdeg_reached = x->tdeg_reached;
	x->e->to_host(x->e, r->pred, x->e->buf(x->e, KBFS_PRED), x->b->g.nb * 8);
}

static const char *xname(int x) { return x == KBFS_X_BITMAP ? "bitmap" : x == KBFS_X_LIST ? "list" : "auto"; }

static void print_levels(const char *who, const result *r)
{
	if (!rank0)
		return;
	printf("#   %s: %zu levels, reached %llu, %.6f s\n", who, r->nlv, (unsigned long long)r->reached, r->time);
	for (size_t k = 0; k < r->nlv; k++) {
		const kbfs_level *l = &r->lv[k];
		printf("#     level %u %-9s frontier %10llu found %10llu examined %12llu bytes %llu/%llu/%llu\n", l->level,
		       kbfs_dir_name(l->dir), (unsigned long long)l->frontier, (unsigned long long)l->found,
		       (unsigned long long)l->examined, (unsigned long long)l->bytes[0], (unsigned long long)l->bytes[1],
		       (unsigned long long)l->bytes[2]);
	}
}

/* The first differing level record (SIZE_MAX: equal).  every_edge: b's
 * top-down levels read every stored edge (kernel edge), so they examine
 * more entries than a's (the frontier's), never fewer. */
static size_t level_diff(const result *a, const result *b, int every_edge, int bytes)
{
	size_t n = a->nlv < b->nlv ? a->nlv : b->nlv;
	for (size_t k = 0; k < n; k++) {
		const kbfs_level *x = &a->lv[k], *y = &b->lv[k];
		int ex = every_edge && x->dir == KBFS_DIR_TD ? y->examined < x->examined : x->examined != y->examined;
		if (x->dir != y->dir || x->frontier != y->frontier || x->found != y->found || ex ||
		    (bytes && memcmp(x->bytes, y->bytes, sizeof x->bytes)))
			return k;
	}
	return a->nlv == b->nlv ? SIZE_MAX : n;
}

int main(int argc, char **argv)
{
	klog_init("test_engine");
	kcomm *world = kcomm_init(&argc, &argv, 0);
	int rank = kcomm_rank(world), size = kcomm_size(world);
	rank0 = rank == 0;
	int nroots = 4, nccl = 0, quick = 0, verbose = 0, csr_device = 0;
	const char *kernels = "lb,merrill,vertex,vbfs,edge", *dir = NULL;
	kgpu_opts go;
	kgpu_opts_default(&go);
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		const char *v = k + 1 < argc ? argv[k + 1] : NULL;
		if (!strcmp(a, "--roots") && v)
			nroots = (int)kopt_u64(a, argv[++k], 1, 4096);
		else if (!strcmp(a, "--kernels") && v)
			kernels = argv[++k];
		else if (!strcmp(a, "--transport") && v) {
			const char *tn = argv[++k];
			nccl = !strcmp(tn, "nccl") || !strcmp(tn, "peer");
			go.peer = !strcmp(tn, "peer") ? 2 : 0;
			if (!nccl && strcmp(tn, "mpi"))
				kopt_usage_error("--transport: '%s' is not one of mpi, nccl, peer", tn);
		}
		else if (!strcmp(a, "--configs") && v)
			quick = !strcmp(argv[++k], "quick");
		else if (!strcmp(a, "--vbfs-k") && v)
			go.vbfs_k = (int)kopt_u64(a, argv[++k], 1, 1 << 20);
		else if (!strcmp(a, "--bu-split") && v)
			go.bu_split = (int)kopt_u64(a, argv[++k], 0, 1 << 20);
		else if (!strcmp(a, "--bu-batch") && v)
			go.bu_batch = (int)kopt_u64(a, argv[++k], 1, 8);
		else if (!strcmp(a, "--bu-rows") && v)
			go.bu_rows = (int)kopt_u64(a, argv[++k], 1, 2);
		else if (!strcmp(a, "--bu-kernel") && v && kgpu_bu_kernel_parse(v) >= 0)
			go.bu_kernel = kgpu_bu_kernel_parse(argv[++k]);
		else if (!strcmp(a, "--no-bu-first"))
			go.bu_first = 0;
		else if (!strcmp(a, "--no-td-small"))
			go.td_small = 0;
		else if (!strcmp(a, "--no-td-lists"))
			go.td_lists = 0;
		else if (!strcmp(a, "--step-sync"))
			go.step_sync = 1;
		else if (!strcmp(a, "--csr-device"))
			csr_device = 1;
		else if (!strcmp(a, "--gpu") && v)
			go.gpu = (int)kopt_u64(a, argv[++k], 0, 1024);
		else if (!strcmp(a, "-v"))
			verbose = 1;
		else if (a[0] != '-' && !dir)
			dir = a;
		else
			kopt_usage_error("unknown argument '%s'", a);
	}
	if (!dir)
		kopt_usage_error("give a partition directory");
	if (kgpu_device_count() == 0) {
		if (rank0)
			printf("1..0 # skip no GPU visible\n");
		kcomm_finalize();
		return 0;
	}
	int R, C;
	uint64_t nv;
	if (kpart_manifest_grid(dir, &R, &C, &nv))
		return 1;
	if (R * C != size)
		kdie(KEXIT_USAGE, "'%s' is a %dx%d partition: run with mpirun -np %d", dir, R, C, R * C);
	kpart_block b;
	if (kcomm_agree(world, kpart_load(dir, rank, &b)))
		return 1;
	/* what the CUDA engine gets: b, or b without colidx (--csr-device) */
	kpart_block gb = b;
	if (csr_device)
		gb.colidx = NULL;
	const uint64_t nb = b.g.nb, N = b.g.N, first = kpart_owned_first(&b.g, b.i, b.j);
	if (kgpu_bind(&go))
		return 1;

	/* who runs where, and the memory plan of rank 0 */
	kgpu_devinfo di;
	if (kgpu_device_info(&di))
		return 1;
	char line[512] = {0}, *lines = kcalloc((size_t)size, sizeof line);
	kgpu_devinfo_line(&di, line, sizeof line);
	kcomm_allgather(world, line, sizeof line, lines);
	uint64_t cap = kbfs_wire_cap(&b, KBFS_X_LIST, 1), cap0 = kbfs_wire_cap(&b, KBFS_X_LIST, 0);
	if (cap0 > cap)
		cap = cap0;
	kbfs_engine_conf conf = {.threads = 0, .wire_cap = cap, .device = kcomm_local_rank()};
	kgpu_plan_t plan;
	if (kgpu_plan(&b, &conf, &plan))
		return 1;
	if (rank0) {
		printf("# %s: %dx%d grid, N %llu, nb %llu, %s indices\n", dir, R, C, (unsigned long long)N,
		       (unsigned long long)nb, b.idx64 ? "u64" : "u32");
		for (int r = 0; r < size; r++)
			printf("# %s\n", lines + (size_t)r * sizeof line);
		printf("# device memory plan of rank 0:\n");
		kgpu_plan_print(stdout, &plan);
	}
	free(lines);
	uint64_t fits = plan.total * (uint64_t)plan.sharers <= plan.free_bytes;
	kcomm_allreduce_u64(world, &fits, 1, KCOMM_MIN);
	tap((int)fits, "every rank's plan fits in its GPU's free memory (rank 0: %.1f MiB, %.2f bytes per edge)",
	    plan.total / 1048576.0, plan.bytes_per_edge);

	/* roots: hashed candidates with an edge, answered by their owners */
	uint64_t *roots = kcalloc((size_t)nroots, 8), *rtdeg = kcalloc((size_t)nroots, 8);
	int have = 0;
	for (uint64_t c0 = 0; have < nroots && c0 < 64 * N; c0 += 64) {
		uint64_t cand[64], ans[64];
		for (int k = 0; k < 64; k++) {
			cand[k] = ((c0 + (uint64_t)k + 1) * 0x9E3779B97F4A7C15ull >> 11) % N;
			uint64_t v = cand[k];
			ans[k] = kpart_owner(&b.g, v) == rank && v < b.g.nv && b.tdeg[v - first] ? b.tdeg[v - first] : 0;
		}
		kcomm_allreduce_u64(world, ans, 64, KCOMM_MAX);
		for (int k = 0; k < 64 && have < nroots; k++) {
			int dup = 0;
			for (int q = 0; q < have; q++)
				dup |= roots[q] == cand[k];
			if (ans[k] && !dup) {
				roots[have] = cand[k];
				rtdeg[have++] = ans[k];
			}
		}
	}
	nroots = have;

	/* the reference: CPU engine, MPI transport */
	kbfs_engine ce;
	kbfs_transport ct;
	kbfs_engine_cpu(&ce);
	kbfs_transport_mpi(&ct);
	if (kcomm_agree(world, ce.setup(&ce, &b, &conf)) || kcomm_agree(world, ct.setup(&ct, world, R, C, &ce)))
		return 1;
	kbfs_ctx cx;
	memset(&cx, 0, sizeof cx);
	kbfs_ctx_init(&cx, &b, &ce, &ct);
	cx.wire_cap = cap;

	const cfg *cfgs = quick ? quick_cfgs : full_cfgs;
	size_t ncfg = quick ? sizeof quick_cfgs / sizeof *quick_cfgs : sizeof full_cfgs / sizeof *full_cfgs;
	result rc_, rg_, *rc = &rc_, *rg = &rg_;
	rc->pred = kmalloc(nb * 8);
	rg->pred = kmalloc(nb * 8);
	uint64_t *full = kmalloc(kmul(N, 8));
	size_t *cnt = kmalloc(2 * (size_t)size * sizeof *cnt), *dsp = cnt + size;
	for (int r = 0; r < size; r++) {
		cnt[r] = nb * 8;
		dsp[r] = kpart_owned_first(&b.g, r / C, r % C) * 8;
	}

	char *klist = kstrdup(kernels);
	for (char *kn = strtok(klist, ","); kn; kn = strtok(NULL, ",")) {
		go.kernel = kgpu_kernel_parse(kn);
		if (go.kernel < 0)
			kdie(KEXIT_USAGE, "unknown kernel '%s' (want %s)", kn, kgpu_kernel_names());
		kbfs_engine ge;
		kbfs_transport gt;
		if (kgpu_engine_cuda(&ge, &go))
			return 1;
		if (nccl ? kgpu_transport_nccl(&gt) : (kbfs_transport_mpi(&gt), 0))
			return 1;
		if (kcomm_agree(world, ge.setup(&ge, &gb, &conf)) || kcomm_agree(world, gt.setup(&gt, world, R, C, &ge)))
			return 1;
		kbfs_ctx gx;
		memset(&gx, 0, sizeof gx);
		kbfs_ctx_init(&gx, &b, &ge, &gt);
		gx.wire_cap = cap;
		double tcpu = 0, tgpu = 0;
		for (size_t c = 0; c < ncfg; c++) {
			cx.algo.direction = cfgs[c].dir;
			cx.algo.exchange = cfgs[c].xchg;
			cx.algo.compress = cfgs[c].compress;
			cx.algo.sv = cfgs[c].sv;
			cx.algo.bu_substeps = cfgs[c].sub;
			gx.algo = cx.algo;
			/* the CPU engine's sub-steps only where the device's run too
			 * (not with the device-resident levels), so the counts compare */
			const int sub = kbfs_bu_substeps_on(&gx);
			cx.algo.bu_substeps = sub;
			int lv_bad = 0, depth_bad = 0, invalid = 0;
			char why[512] = "";
			for (int q = 0; q < nroots; q++) {
				cx.root_label = gx.root_label = roots[q];
				search(&cx, world, roots[q], rtdeg[q], rc);
				search(&gx, world, roots[q], rtdeg[q], rg);
				tcpu += rc->time;
				tgpu += rg->time;
				size_t d = level_diff(rc, rg, go.kernel == KGPU_K_EDGE, gt.lv_update == NULL);
				if (d != SIZE_MAX && !lv_bad++)
					snprintf(why, sizeof why, "root %llu: level records differ from level %zu",
						 (unsigned long long)roots[q], d + 1);
				uint64_t bad = UINT64_MAX;
				for (uint64_t k = 0; k < nb && bad == UINT64_MAX; k++)
					if (kbfs_packed_level(rc->pred[k]) != kbfs_packed_level(rg->pred[k]))
						bad = first + k;
				kcomm_allreduce_u64(world, &bad, 1, KCOMM_MIN);
				if (bad != UINT64_MAX && !depth_bad++ && !*why)
					snprintf(why, sizeof why, "root %llu: vertex %llu has another depth",
						 (unsigned long long)roots[q], (unsigned long long)bad);
				kcomm_allgatherv(world, rg->pred, nb * 8, full, cnt, dsp);
				for (uint64_t v = 0; v < N; v++)
					full[v] = kbfs_packed_parent(full[v]);
				kval_result vr;
				if (kval_partition(world, &b, roots[q], full, rg->tdeg_reached / 2, &vr)) {
					if (!invalid++ && !*why)
						snprintf(why, sizeof why, "root %llu: invalid tree: %s",
							 (unsigned long long)roots[q], vr.msg);
				}
				if ((verbose || d != SIZE_MAX) && q < 2) {
					print_levels("cpu ", rc);
					print_levels("cuda", rg);
				}
			}
			tap(!lv_bad && !depth_bad && !invalid,
			    "%dx%d %s: kernel %s, direction %s, exchange %s%s%s%s: %d roots, levels and depths equal the "
			    "CPU engine's, trees valid%s%s",
			    R, C, dir, kn, kbfs_dir_name(cfgs[c].dir), xname(cfgs[c].xchg),
			    cfgs[c].compress ? "" : ", no-compress", cfgs[c].sv ? "" : ", no-sv",
			    sub ? ", bu-substeps" : cfgs[c].sub ? ", bu-substeps asked (not run here)" : "", nroots,
			    *why ? ": " : "", why);
		}
		if (rank0)
			printf("# kernel %s (%s transport): cpu %.4f s, cuda %.4f s over %zu searches\n", kn, gt.name, tcpu,
			       tgpu, ncfg * (size_t)nroots);
		kbfs_ctx_free(&gx);
		gt.teardown(&gt);
		ge.teardown(&ge);
	}
	free(klist);
	kbfs_ctx_free(&cx);
	ct.teardown(&ct);
	ce.teardown(&ce);
	if (rank0) {
		printf("1..%d\n", ntest);
		if (nfail)
			printf("# %d of %d checks failed\n", nfail, ntest);
	}
	free(full);
	free(cnt);
	free(rc->pred);
	free(rg->pred);
	free(roots);
	free(rtdeg);
	kpart_block_free(&b);
	kcomm_finalize();
	return nfail ? 1 : 0;
}

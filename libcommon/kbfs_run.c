/*
 * kbfs_run: the kbfs program around the level loop (see kbfs.h).
 *
 * Order of a run: engine choice (auto: the CUDA engine when it is built
 * and every rank sees a GPU; the GPU is bound then) and transport; the
 * partition's grid checked against the job before anything is loaded;
 * every rank loads its block; threads; --dry-run stops here after printing
 * the memory plan; the inverse id map; roots (given, or the Graph500
 * sampler run collectively: candidates are answered in batches by their
 * owners and combined with one allreduce per batch); engine and transport
 * set-up; the GPU of every rank to rank 0 (-v, JSON); one untimed warm-up
 * search; then per root: the timed search, the statistics, the optional
 * depth and predecessor files, and the untimed validation.  Rank 0 prints
 * the reference's statistics block and writes the JSON record.
 */
#include "kbfs.h"
#include "kbfs_internal.h"
#include "kgpu.h"
#include "klog.h"
#include "kopt.h"
#include "kstat.h"
#include "kval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kbfs_opts_default(kbfs_opts *o)
{
	memset(o, 0, sizeof *o);
	o->direction = KBFS_DIR_AUTO;
	o->alpha = 14;
	o->beta = 24;
	o->exchange = KBFS_X_AUTO;
	o->compress = 1;
	o->sv = 1;
	o->validate = 1;
	o->warmup = 1;
	o->nroots = 64;
	o->engine = KBFS_ENGINE_AUTO;
	kgpu_opts_default(&o->gpu);
	o->transport = KBFS_TRANSPORT_AUTO;
}

/* ---- ids: input id <-> internal id ---- */

static void build_inverse(kbfs_run *r)
{
	if (r->b->orig)
		kidmap_build(&r->inv, r->b->orig, r->b->g.nb);
}

int kbfs_is_real(const kpart_block *b, uint64_t k)
{
	return b->orig ? b->orig[k] != KPART_NO_VERTEX : kpart_owned_first(&b->g, b->i, b->j) + k < b->g.nv;
}

/* Collective: resolve ids (input ids when as_input, else internal ids). */
void kbfs_lookup(kbfs_run *r, const uint64_t *ids, size_t n, int as_input, kbfs_vref *out)
{
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	uint64_t first = kpart_owned_first(g, b->i, b->j);
	uint64_t *a = kcalloc(n ? 3 * n : 1, 8);
	for (size_t k = 0; k < n; k++) {
		uint64_t x = ids[k], loc = UINT64_MAX;
		if (as_input && b->orig)
			loc = kidmap_find(&r->inv, x);
		else if (x < g->N && kpart_owner(g, x) == r->rank && kbfs_is_real(b, x - first))
			loc = x - first;
		if (loc == UINT64_MAX)
			continue;
		a[3 * k] = first + loc + 1;
		a[3 * k + 1] = b->orig ? b->orig[loc] : first + loc;
		a[3 * k + 2] = b->tdeg[loc];
	}
	kcomm_allreduce_u64(r->world, a, 3 * n, KCOMM_MAX);
	for (size_t k = 0; k < n; k++) {
		out[k].found = a[3 * k] != 0;
		out[k].internal = a[3 * k] - 1;
		out[k].input = out[k].found ? a[3 * k + 1] : ids[k];
		out[k].tdeg = a[3 * k + 2];
	}
	free(a);
}

/* ---- engine and grid ---- */

/* The GPUs every rank sees (the smallest count); *without: the ranks that see none. */
static uint64_t gpus_everywhere(kbfs_run *r, uint64_t *without)
{
	uint64_t n = kgpu_built() ? (uint64_t)kgpu_device_count() : 0, none = n == 0;
	kcomm_allreduce_u64(r->world, &n, 1, KCOMM_MIN);
	kcomm_allreduce_u64(r->world, &none, 1, KCOMM_SUM);
	*without = none;
	return n;
}

static int is_cuda(const kbfs_run *r) { return r->eng.name && !strcmp(r->eng.name, "cuda"); }

/* Engine and transport (not set up yet).  Collective; every failure is
 * agreed on, so all ranks stop together. */
static int pick_engine(kbfs_run *r)
{
	const kbfs_opts *o = r->o;
	uint64_t without = 0, ngpu = gpus_everywhere(r, &without);
	char why[96];
	snprintf(why, sizeof why, "no GPU visible");
	if (r->size > 1)
		snprintf(why, sizeof why, "no GPU visible on %llu of the %d ranks", (unsigned long long)without, r->size);
	const char *nogpu = !kgpu_built() ? "this build has no CUDA engine" : !ngpu ? why : NULL;
	int kind = o->engine;
	if (kind == KBFS_ENGINE_AUTO)
		kind = nogpu ? KBFS_ENGINE_CPU : KBFS_ENGINE_CUDA;
	if (kind == KBFS_ENGINE_CPU && o->transport == KBFS_TRANSPORT_NCCL) {
		/* --engine cpu --transport nccl is refused by the option parser;
		 * here auto fell back to the CPU engine */
		if (r->rank == 0)
			kerror("--transport nccl needs the CUDA engine, but %s: use --transport mpi", nogpu);
		return KEXIT_RESOURCE;
	}
	if (kind == KBFS_ENGINE_CUDA) {
		if (nogpu) {
			if (r->rank == 0)
				kerror("%s: use --engine cpu", nogpu);
			return KEXIT_RESOURCE;
		}
		if (o->transport == KBFS_TRANSPORT_NCCL && !kgpu_nccl_built()) {
			if (r->rank == 0)
				kerror("this build has no NCCL (nccl.h was not found when it was built): use --transport mpi");
			return KEXIT_RESOURCE;
		}
		/* the CUDA engine (gpu/); NCCL between GPUs unless --transport mpi */
		int rc = kcomm_agree(r->world, kgpu_bind(&o->gpu));
		if (!rc)
			rc = kcomm_agree(r->world, kgpu_engine_cuda(&r->eng, &o->gpu));
		int nccl = o->transport == KBFS_TRANSPORT_NCCL ||
			   (o->transport == KBFS_TRANSPORT_AUTO && kgpu_nccl_built());
		if (!rc && nccl)
			rc = kcomm_agree(r->world, kgpu_transport_nccl(&r->tr));
		else if (!rc)
			kbfs_transport_mpi(&r->tr);
		return rc;
	}
	kbfs_engine_cpu(&r->eng);
	kbfs_transport_mpi(&r->tr);
	/* test hook (kbfs(1) ENVIRONMENT): treat the CPU engine's buffers as
	 * device memory, so the transport's host staging path runs */
	const char *stage = getenv("KBFS_TEST_STAGE");
	if (stage && !strcmp(stage, "1"))
		r->eng.device_memory = 1;
	return 0;
}

/* What e->setup gets (and --dry-run plans with). */
static kbfs_engine_conf engine_conf(const kbfs_run *r)
{
	kbfs_engine_conf ec = {.threads = r->threads,
			       .wire_cap = kbfs_wire_cap(r->b, r->o->exchange, r->o->compress),
			       .device = kcomm_local_rank()};
	return ec;
}

/* ---- the GPUs of the run (-v, JSON) ---- */

static kgpu_devinfo *run_gpus; /* rank 0: one per rank */
static size_t run_ngpus;

const kgpu_devinfo *kbfs_run_gpus(size_t *n)
{
	*n = run_ngpus;
	return run_gpus;
}

/* Collective (CUDA engine, GPU bound): every rank's GPU to rank 0, which
 * keeps them for the JSON record and with -v prints one line each. */
static int gpu_report(kbfs_run *r, kgpu_devinfo *mine)
{
	int rc = kcomm_agree(r->world, kgpu_device_info(mine));
	if (rc)
		return rc;
	size_t n = (size_t)r->size, *cnt = kmalloc(2 * n * sizeof *cnt), *dsp = cnt + n;
	for (size_t k = 0; k < n; k++) {
		cnt[k] = sizeof *mine;
		dsp[k] = k * sizeof *mine;
	}
	kgpu_devinfo *all = r->rank == 0 ? kcalloc(n, sizeof *all) : NULL;
	kcomm_gatherv(r->world, mine, sizeof *mine, all, cnt, dsp, 0);
	free(cnt);
	if (r->rank == 0) {
		for (size_t k = 0; k < n; k++) {
			char line[512];
			kgpu_devinfo_line(&all[k], line, sizeof line);
			kinfo("%s", line);
		}
		free(run_gpus);
		run_gpus = all;
		run_ngpus = n;
	}
	return 0;
}

/* ---- --dry-run ---- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
	for (size_t k = 0; k < n && s[k]; k++)
		h = (h ^ (unsigned char)s[k]) * UINT64_C(0x100000001b3);
	return h;
}

/* The CUDA engine's device memory plan of every rank, against the free
 * memory of its GPU (the ranks sharing a GPU counted together, as setup
 * counts them).  0 when every rank fits, else KEXIT_RESOURCE. */
static int dry_run_cuda(kbfs_run *r)
{
	kbfs_engine_conf ec = engine_conf(r);
	kgpu_plan_t plan;
	int rc = kcomm_agree(r->world, kgpu_plan(r->b, &ec, &plan));
	kgpu_devinfo d;
	if (!rc)
		rc = gpu_report(r, &d);
	if (rc)
		return rc;
	/* per rank: GPU key (host, UUID), bytes needed, bytes free */
	size_t n = (size_t)r->size;
	uint64_t mine[3] = {fnv1a(fnv1a(UINT64_C(0xcbf29ce484222325), d.host, sizeof d.host), d.uuid, sizeof d.uuid),
			    plan.total, plan.free_bytes};
	uint64_t *all = kmalloc(kmul(n, sizeof mine));
	kcomm_allgather(r->world, mine, sizeof mine, all);
	uint64_t *need = kcalloc(n, sizeof *need); /* every rank on the same GPU */
	int *sh = kcalloc(n, sizeof *sh);
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++)
			if (all[3 * a] == all[3 * b]) {
				need[a] += all[3 * b + 1];
				sh[a]++;
			}
	if (r->rank == 0) {
		const kpart_grid *g = &r->b->g;
		printf("kbfs --dry-run: %s, grid %dx%d, engine cuda, kernel %s, transport %s\n", r->dir, g->R, g->C,
		       kgpu_kernel_name(r->o->gpu.kernel), r->tr.name);
		printf("rank 0 device memory (bytes):\n");
		kgpu_plan_print(stdout, &plan);
		for (size_t k = 0; k < n; k++) {
			const kgpu_devinfo *x = &run_gpus[k];
			char shared[96] = "";
			if (sh[k] > 1)
				snprintf(shared, sizeof shared, " (%llu with the %d ranks on this GPU)",
					 (unsigned long long)need[k], sh[k]);
			printf("rank %zu (%s, GPU %d): needs %llu bytes%s, %llu bytes free: %s\n", k, x->host, x->gpu,
			       (unsigned long long)all[3 * k + 1], shared, (unsigned long long)all[3 * k + 2],
			       need[k] <= all[3 * k + 2] ? "fits" : "does not fit");
		}
		fflush(stdout);
	}
	/* the refusal is printed once per GPU, by its first rank */
	size_t me = (size_t)r->rank, first = me;
	for (size_t k = 0; k < me; k++)
		if (all[3 * k] == all[3 * me]) {
			first = k;
			break;
		}
	rc = need[me] <= plan.free_bytes ? 0 : first == me ? kgpu_plan_check(&plan, need[me]) : KEXIT_RESOURCE;
	free(all);
	free(need);
	free(sh);
	return kcomm_agree(r->world, rc);
}

/* Host memory one rank of the CPU engine needs (an estimate: the
 * partition, the engine's buffers, the predecessor maps and validation's
 * depth arrays). */
static void cpu_estimate(const kbfs_run *r, uint64_t est[3])
{
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	const kbfs_opts *o = r->o;
	uint64_t iw = b->idx64 ? 8 : 4, nbw = g->nb / 64, ncolw = b->ncols / 64, nroww = b->nrows / 64;
	uint64_t nseg = (uint64_t)(g->R > g->C ? g->R : g->C), cap = engine_conf(r).wire_cap;
	int files = o->pred_out || o->depth_out;
	/* partition: CSC, CSR, tdeg, orig (and the inverse id map) */
	est[0] = 8 * (b->ncols + 1) + 8 * (b->nrows + 1) + 2 * b->nnz * iw + 8 * g->nb + (b->orig ? 8 * g->nb + 16 * g->nb : 0);
	/* engine: 3 nb bitmaps, column frontier, 3 row bitmaps and the empty-row
	 * bitmap, PL, PRED and the two wire buffers */
	est[1] = 8 * (3 * nbw + ncolw + 4 * nroww + b->nrows + g->nb) + 2 * nseg * cap;
	/* run: this rank's packed entries; all N on every rank for validation
	 * (and its depths, 5 bytes a vertex), on rank 0 for files; rank 0's
	 * id map and output order */
	est[2] = 0;
	if (o->validate || files)
		est[2] += 8 * g->nb;
	if (o->validate)
		est[2] += 8 * g->N + 5 * g->N;
	else if (files && r->rank == 0)
		est[2] += 8 * g->N;
	if (r->rank == 0 && b->orig && (o->validate || files))
		est[2] += 8 * g->N;
	if (r->rank == 0 && files)
		est[2] += 8 * g->N;
}

static int dry_run_cpu(kbfs_run *r)
{
	enum { HL = 64 };
	size_t n = (size_t)r->size;
	uint64_t mine[4];
	cpu_estimate(r, mine);
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	mine[3] = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	uint64_t *all = kmalloc(kmul(n, sizeof mine));
	kcomm_allgather(r->world, mine, sizeof mine, all);
	if (r->rank == 0) {
		const kpart_grid *g = &r->b->g;
		printf("kbfs --dry-run: %s, grid %dx%d, engine cpu (host memory, estimate)\n", r->dir, g->R, g->C);
		for (size_t k = 0; k < n; k++) {
			const uint64_t *x = all + 4 * k;
			const char *h = r->hosts + k * HL;
			uint64_t host_need = 0;
			int on_host = 0;
			for (size_t q = 0; q < n; q++)
				if (!strncmp(r->hosts + q * HL, h, HL)) {
					host_need += all[4 * q] + all[4 * q + 1] + all[4 * q + 2];
					on_host++;
				}
			printf("rank %zu (%.*s): needs %llu bytes (partition %llu, engine %llu, predecessors and "
			       "validation %llu)",
			       k, HL, h, (unsigned long long)(x[0] + x[1] + x[2]), (unsigned long long)x[0],
			       (unsigned long long)x[1], (unsigned long long)x[2]);
			if (on_host > 1)
				printf(", %llu with the %d ranks on this host", (unsigned long long)host_need, on_host);
			printf(", %llu bytes available\n", (unsigned long long)x[3]);
		}
		fflush(stdout);
	}
	free(all);
	return 0;
}

static int check_grid(kbfs_run *r, const char *dir)
{
	uint64_t h[4] = {0, 0, 0, 0};
	if (r->rank == 0) {
		int R = 0, C = 0;
		uint64_t nv = 0;
		h[0] = (uint64_t)kpart_manifest_grid(dir, &R, &C, &nv);
		h[1] = (uint64_t)R;
		h[2] = (uint64_t)C;
		if (!h[0] && (uint64_t)R * (uint64_t)C != (uint64_t)r->size) {
			kerror("'%s' is partitioned for a %dx%d grid (%d ranks) but this job has %d rank%s; run "
			       "it with mpirun -np %d",
			       dir, R, C, R * C, r->size, r->size == 1 ? "" : "s", R * C);
			h[0] = KEXIT_USAGE;
		}
	}
	kcomm_bcast(r->world, h, sizeof h, 0);
	return (int)h[0];
}

void kbfs_partition_times(const char *dir, double ct[4])
{
	size_t n = strlen(dir) + 16;
	char *path = kmalloc(n);
	snprintf(path, n, "%s/build-info", dir);
	if (!access(path, R_OK) && !kpart_construction_time(dir, &ct[1]))
		ct[0] = 1;
	free(path);
	kpart_manifest m;
	if (!kpart_manifest_read(dir, &m)) {
		const char *v = kpart_manifest_get(&m, "generation_time");
		if (!v)
			v = kpart_manifest_get(&m, "source_generation_time");
		char *end;
		if (v && (ct[3] = strtod(v, &end)) >= 0 && end != v && !*end)
			ct[2] = 1;
		kpart_manifest_free(&m);
	}
}

/* Every rank loads its block; the load time is the slowest rank's. */
static int load(kbfs_run *r, const char *dir)
{
	kcomm_barrier(r->world);
	double t0 = ktime();
	int rc = kpart_load(dir, r->rank, &r->blk);
	rc = kcomm_agree(r->world, rc);
	if (rc)
		return rc;
	double dt = ktime() - t0;
	kcomm_allreduce_double(r->world, &dt, 1, KCOMM_MAX);
	r->b = &r->blk;
	r->load_time = dt;
	r->construction_time = dt;
	r->construction_from = "load";
	/* build-info and the manifest record how long construction and
	 * generation took; without them both fall back to the load time */
	double ct[4] = {0, 0, 0, 0};
	if (r->rank == 0)
		kbfs_partition_times(dir, ct);
	kcomm_bcast(r->world, ct, sizeof ct, 0);
	r->generation_time = dt;
	r->generation_from = "load";
	if (ct[0]) {
		r->construction_time = ct[1];
		r->construction_from = "build-info";
	}
	if (ct[2]) {
		r->generation_time = ct[3];
		r->generation_from = "manifest";
	}
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	/* what the statistics block calls SCALE and edgefactor: the generator's,
	 * or for an imported graph ceil(log2 nv) and tuples per vertex */
	r->scale = b->scale;
	while (!r->scale && (UINT64_C(1) << r->scale) < g->nv && r->scale < 63)
		r->scale++;
	r->edgefactor = b->edgefactor ? (double)b->edgefactor : (double)b->ne_input / (double)g->nv;
	if (g->N > (UINT64_C(1) << KBFS_PARENT_BITS)) {
		if (r->rank == 0)
			kerror("'%s' has %llu vertices; kbfs handles at most 2^%d (scale 47)", dir,
			       (unsigned long long)g->N, KBFS_PARENT_BITS);
		return KEXIT_DATA;
	}
	return 0;
}

/* Hosts of every rank (rank 0 keeps the list) and the ranks on this host. */
static void hosts(kbfs_run *r)
{
	enum { HL = 64 };
	char mine[HL] = {0};
	snprintf(mine, HL, "%s", kcomm_host());
	r->hosts = kcalloc((size_t)r->size, HL);
	kcomm_allgather(r->world, mine, HL, r->hosts);
	r->local_ranks = 0;
	for (int k = 0; k < r->size; k++)
		r->local_ranks += !strncmp(r->hosts + (size_t)k * HL, mine, HL);
}

static void set_threads(kbfs_run *r, int want)
{
	int n = want;
	if (n <= 0 && !getenv("OMP_NUM_THREADS")) {
		int cpus = kopt_max_threads(); /* the cores this rank may use */
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		n = cpus < online ? cpus : cpus / (r->local_ranks > 0 ? r->local_ranks : 1);
		if (n < 1)
			n = 1;
	}
	if (n > 0)
		kopt_set_threads(n);
	r->threads = kopt_max_threads();
	kopt_check_affinity();
}

/* ---- the run ---- */

static void gather_orig(kbfs_run *r)
{
	const kpart_block *b = r->b;
	if (!b->orig)
		return;
	size_t nb8 = (size_t)b->g.nb * 8;
	if (r->rank == 0)
		r->orig_all = kmalloc(kmul((size_t)b->g.N, 8));
	kcomm_gatherv(r->world, b->orig, nb8, r->orig_all, r->cnt, r->dsp, 0);
}

/* Packed entries of all N vertices, on every rank (all) or on rank 0.  For
 * all, each rank's entries go straight to their place in pred and are
 * gathered in place (one copy less; none more on one rank). */
static void collect(kbfs_run *r, int all)
{
	size_t nb8 = (size_t)r->b->g.nb * 8;
	const void *src = r->eng.buf(&r->eng, KBFS_PRED);
	if (all) {
		uint64_t *mine = (uint64_t *)((char *)r->pred + r->dsp[r->rank]);
		r->eng.to_host(&r->eng, mine, src, nb8);
		if (r->size > 1)
			kcomm_allgatherv(r->world, mine, nb8, r->pred, r->cnt, r->dsp);
		return;
	}
	r->eng.to_host(&r->eng, r->mypred, src, nb8);
	kcomm_gatherv(r->world, r->mypred, nb8, r->pred, r->cnt, r->dsp, 0);
}

static void corrupt(kbfs_run *r, uint64_t root)
{
	/* test hook (kbfs(1) ENVIRONMENT): make one reached vertex its own parent */
	for (uint64_t v = 0; v < r->b->g.N; v++)
		if (v != root && r->pred[v] != UINT64_MAX) {
			r->pred[v] = v;
			return;
		}
}

static int run_one(kbfs_run *r, size_t k)
{
	kbfs_root *rt = &r->res[k];
	kbfs_ctx *x = &r->ctx;
	x->root_label = rt->input;
	kcomm_barrier(r->world);
	double t0 = ktime();
	kbfs_search(x, rt->internal, rt->tdeg);
	kcomm_barrier(r->world);
	rt->time = ktime() - t0;
	kbfs_search_finish(x);
	kcomm_bcast(r->world, &rt->time, sizeof rt->time, 0);
	rt->nedge = x->tdeg_reached / 2;
	rt->reached = x->reached;
	rt->maxdepth = x->nlv ? (int)x->nlv - 1 : 0;
	if (r->rank == 0) {
		rt->nlv = x->nlv;
		rt->lv = kmalloc(kmul(x->nlv ? x->nlv : 1, sizeof *rt->lv));
		memcpy(rt->lv, x->lv, x->nlv * sizeof *rt->lv);
	}
	int want_files = r->o->pred_out || r->o->depth_out;
	if (!r->o->validate && !want_files)
		return 0;
	double tv0 = ktime();
	collect(r, r->o->validate);
	double tcollect = ktime() - tv0;
	int rc = 0;
	if (r->rank == 0 && want_files)
		rc = kbfs_write_files(r, rt);
	rc = kcomm_agree(r->world, rc);
	if (rc)
		return rc;
	if (!r->o->validate)
		return 0;
	const char *hook = getenv("KBFS_TEST_CORRUPT_PRED");
	if (hook && !strcmp(hook, "1"))
		corrupt(r, rt->internal);
	kcomm_barrier(r->world);
	double tv1 = ktime();
	kval_result vr;
	/* checks the packed entries as they are (unpacks them only on a miss) */
	int bad = kval_partition_packed(r->world, r->b, rt->internal, r->pred, rt->nedge, &vr);
	rt->validate_time = ktime() - tv1 + tcollect;
	kcomm_bcast(r->world, &rt->validate_time, sizeof rt->validate_time, 0);
	rt->valid = !bad;
	if (bad && r->rank == 0) {
		char msg[512];
		kval_describe(&vr, r->orig_all, msg, sizeof msg);
		kerror("validation failed for root %llu: %s", (unsigned long long)rt->input, msg);
	}
	return 0;
}

static void print_block(kbfs_run *r)
{
	size_t n = r->nres;
	double *t = kmalloc(kmul(n ? n : 1, 3 * sizeof(double))), *ne = t + n, *vt = ne + n;
	for (size_t k = 0; k < n; k++) {
		t[k] = r->res[k].time;
		ne[k] = (double)r->res[k].nedge;
		vt[k] = r->res[k].validate_time;
	}
	kstat_run sr = {
		.scale = r->scale,
		.edgefactor = r->edgefactor,
		.nbfs = (int)n,
		.generation_time = r->generation_time,
		.nproc = r->size,
		.construction_time = r->construction_time,
		.time = t,
		.nedge = ne,
		.validate_time = r->o->validate ? vt : NULL,
	};
	r->hmean = kstat_harmonic_teps(t, ne, n);
	if (!r->json_stdout)
		kstat_print_block(stdout, &sr);
	free(t);
}

static void cleanup(kbfs_run *r)
{
	if (r->ctx.b)
		kbfs_ctx_free(&r->ctx);
	if (r->tr.impl)
		r->tr.teardown(&r->tr);
	if (r->eng.impl)
		r->eng.teardown(&r->eng);
	for (size_t k = 0; k < r->nres; k++)
		free(r->res[k].lv);
	free(r->res);
	kidmap_free(&r->inv);
	free(r->hosts);
	free(r->pred);
	free(r->mypred);
	free(r->orig_all);
	free(r->order);
	free(r->cnt);
	if (r->b)
		kpart_block_free(&r->blk);
	free(run_gpus);
	run_gpus = NULL;
	run_ngpus = 0;
}

int kbfs_main(kcomm *world, const char *dir, const kbfs_opts *o)
{
	kbfs_run run, *r = &run;
	memset(r, 0, sizeof *r);
	r->world = world;
	r->o = o;
	r->rank = kcomm_rank(world);
	r->size = kcomm_size(world);
	r->dir = dir;
	r->json_stdout = o->json && !strcmp(o->json, "-");
	int rc = pick_engine(r);
	if (!rc)
		rc = check_grid(r, dir);
	if (!rc)
		rc = load(r, dir);
	if (rc) {
		cleanup(r);
		return rc;
	}
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	r->cnt = kmalloc(sizeof(size_t) * 2 * (size_t)r->size);
	r->dsp = r->cnt + r->size;
	for (int k = 0; k < r->size; k++) {
		int i = k / g->C, j = k % g->C;
		r->cnt[k] = (size_t)g->nb * 8;
		r->dsp[k] = (size_t)(kpart_owned_first(g, i, j) * 8);
	}
	hosts(r);
	set_threads(r, o->threads);
	if (o->dry_run) {
		/* the memory plan only: no roots, no set-up, no search */
		rc = is_cuda(r) ? dry_run_cuda(r) : dry_run_cpu(r);
		cleanup(r);
		return rc;
	}
	build_inverse(r);
	rc = kbfs_choose_roots(r);
	if (!rc) {
		kbfs_engine_conf ec = engine_conf(r);
		rc = kcomm_agree(world, r->eng.setup(&r->eng, b, &ec));
		if (!rc)
			rc = kcomm_agree(world, r->tr.setup(&r->tr, world, g->R, g->C, &r->eng));
		if (!rc && is_cuda(r)) {
			kgpu_devinfo d;
			rc = gpu_report(r, &d);
		}
		if (!rc) {
			kbfs_ctx *x = &r->ctx;
			kbfs_ctx_init(x, b, &r->eng, &r->tr);
			x->direction = o->direction;
			x->alpha = o->alpha;
			x->beta = o->beta;
			x->exchange = o->exchange;
			x->compress = o->compress;
			x->sv = o->sv;
			x->wire_cap = ec.wire_cap;
		}
	}
	if (rc) {
		cleanup(r);
		return rc;
	}
	if (o->validate || o->pred_out || o->depth_out) {
		r->mypred = kmalloc((size_t)g->nb * 8);
		if (o->validate || r->rank == 0)
			r->pred = kmalloc(kmul((size_t)g->N, 8));
		if (o->pred_out || o->depth_out || o->validate)
			gather_orig(r);
	}
	if (r->rank == 0 && (o->pred_out || o->depth_out))
		rc = kbfs_prepare_files(r);
	rc = kcomm_agree(world, rc);
	if (!rc && o->warmup && r->nres) {
		r->ctx.root_label = r->res[0].input;
		r->ctx.verbose = 0;
		kbfs_search(&r->ctx, r->res[0].internal, r->res[0].tdeg);
		kbfs_search_finish(&r->ctx);
	}
	r->ctx.verbose = o->verbose;
	int failed = 0;
	for (size_t k = 0; k < r->nres && !rc; k++) {
		rc = run_one(r, k);
		failed += !rc && o->validate && !r->res[k].valid;
		if (!rc && r->rank == 0)
			kinfo("root %zu/%zu %llu: %.6f s, nedge %llu, %.4g TEPS%s", k + 1, r->nres,
			      (unsigned long long)r->res[k].input, r->res[k].time,
			      (unsigned long long)r->res[k].nedge,
			      r->res[k].time > 0 ? (double)r->res[k].nedge / r->res[k].time : 0.0,
			      !o->validate ? "" : r->res[k].valid ? ", valid" : ", INVALID");
	}
	if (!rc && r->rank == 0) {
		print_block(r);
		if (o->json)
			rc = kbfs_write_json(r);
		if (!o->validate)
			kinfo("validation skipped (--no-validate)");
		else if (failed)
			kerror("%d of %zu searches failed validation", failed, r->nres);
	}
	rc = kcomm_agree(world, rc);
	if (!rc && failed)
		rc = KEXIT_DATA;
	cleanup(r);
	return rc;
}

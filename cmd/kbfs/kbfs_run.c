/*
 * kbfs_run: the kbfs program around the level loop (see kbfs_run.h).
 *
 * Order of a run: engine choice (auto: the device engine when it is built
 * and every rank sees a device; the device is bound then) and transport;
 * the partition's grid checked against the job before anything is loaded;
 * every rank loads its block; threads (kbfs_load.c); --dry-run stops here
 * after printing the memory plan (kbfs_plan.c, or the device's); roots
 * (kbfs_roots.c); engine and transport set-up; the device of every rank
 * to rank 0 (-v, JSON); one untimed warm-up search; then per root: the
 * timed search, the statistics, the optional depth and predecessor files,
 * and the untimed validation.  Rank 0 prints the reference's statistics
 * block and writes the JSON record (kbfs_out.c).
 */
#include "kbfs_internal.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kpred.h"
#include "kprov.h"
#include "kstat.h"
#include "kval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void kbfs_opts_default(kbfs_opts *o)
{
	memset(o, 0, sizeof *o);
	kbfs_algo_default(&o->algo);
	o->validate = 1;
	o->warmup = 1;
	o->nroots = 64;
	o->engine = KDEV_ENGINE_AUTO;
	o->transport = KBFS_TRANSPORT_AUTO;
}

/* ---- engine ---- */

static int on_device(const kbfs_run *r)
{
	return r->dev && r->eng.name && !strcmp(r->eng.name, r->dev->base.name);
}

/* Engine and transport (not set up yet).  Collective; every failure is
 * agreed on, so all ranks stop together. */
static int pick_engine(kbfs_run *r)
{
	const kbfs_opts *o = r->o;
	kbfs_device *dev = r->dev;
	char nogpu[96];
	int on_dev, rc = kdev_pick(r->world, dev ? &dev->base : NULL, o->engine, &on_dev, nogpu, sizeof nogpu);
	if (rc)
		return rc;
	if (!on_dev && o->validate && o->validator == KBFS_VAL_DEVICE) {
		/* --engine cpu --validator device is refused by the option parser;
		 * here auto fell back to the CPU engine */
		if (r->rank == 0)
			kerror("--validator device needs the CUDA engine, but %s: use --validator host", nogpu);
		return KEXIT_RESOURCE;
	}
	const int want_nccl = o->transport == KBFS_TRANSPORT_NCCL || o->transport == KBFS_TRANSPORT_PEER;
	if (!on_dev && want_nccl) {
		/* --engine cpu --transport nccl|peer is refused by the option
		 * parser; here auto fell back to the CPU engine */
		if (r->rank == 0)
			kerror("--transport %s needs the CUDA engine, but %s: use --transport mpi",
			       kbfs_transport_names[o->transport], nogpu);
		return KEXIT_RESOURCE;
	}
	if (on_dev) {
		if (want_nccl && !dev->nccl_built) {
			if (r->rank == 0)
				kerror("this build has no NCCL (nccl.h was not found when it was built): use --transport mpi");
			return KEXIT_RESOURCE;
		}
		/* the device engine; its transport (NCCL, with the peer-to-peer
		 * levels as the device's options say) unless --transport mpi */
		int nccl = want_nccl || (o->transport == KBFS_TRANSPORT_AUTO && dev->nccl_built);
		if ((rc = kdev_open(&dev->base, r->world)))
			return rc;
		rc = dev->engine(dev, r->world, &r->eng, nccl ? &r->tr : NULL);
		if (rc)
			dev->base.close(&dev->base);
		else if (!nccl)
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

/* Depths from parents alone (pred internal ids, NONE unreached, >= N not a
 * vertex), for the tree of KBFS_TEST_TREE: a vertex whose chain does not
 * reach the root gets level 1 (any level will do: the checks decide on the
 * parents, and claimed levels that are not the depths fail them). */
static void depths_of(const uint64_t *pred, uint64_t N, uint64_t root, uint32_t *lv)
{
	enum { UNKNOWN = 0xFFFFFFFFu, ONSTACK = 0xFFFFFFFEu };
	uint64_t *stack = kmalloc(kmul((size_t)N, 8) + 8);
	for (uint64_t v = 0; v < N; v++)
		lv[v] = UNKNOWN;
	for (uint64_t s = 0; s < N; s++) {
		if (lv[s] != UNKNOWN || pred[s] == UINT64_MAX)
			continue;
		size_t n = 0;
		uint64_t v = s;
		uint32_t base = 0;
		for (;;) {
			if (v == root) {
				lv[v] = 0;
				base = 0;
				break;
			}
			if (pred[v] == UINT64_MAX || pred[v] >= N || lv[v] == ONSTACK) {
				base = UNKNOWN;
				break;
			}
			if (lv[v] != UNKNOWN) {
				base = lv[v];
				break;
			}
			lv[v] = ONSTACK;
			stack[n++] = v;
			v = pred[v];
		}
		while (n) {
			v = stack[--n];
			base = base == UNKNOWN || base >= 0xFFF0u ? UNKNOWN : base + 1;
			lv[v] = base;
		}
	}
	for (uint64_t v = 0; v < N; v++)
		if (lv[v] == UNKNOWN || lv[v] == ONSTACK)
			lv[v] = 1;
	free(stack);
}

/* Test hook KBFS_TEST_TREE=FILE (kbfs(1) ENVIRONMENT): the tree checked is
 * FILE's (a predecessor file in input ids, as kvalidate reads it) instead
 * of the search's, packed with the depths its parents give; a parent that
 * is not a vertex becomes N.  Into r->pred on every rank.  Collective;
 * 0 or a KEXIT code. */
static int tree_from_file(kbfs_run *r, const char *path, uint64_t root)
{
	uint64_t N = r->b->g.N;
	int rc = 0;
	if (r->rank == 0) {
		uint64_t froot, n, *v = NULL;
		int64_t *par = NULL;
		kidmap inv;
		memset(&inv, 0, sizeof inv);
		rc = kpred_read(path, &froot, &n, &v, &par);
		if (!rc) {
			if (r->orig_all)
				kidmap_build(&inv, r->orig_all, N);
			uint64_t *pred = r->pred;
			for (uint64_t x = 0; x < N; x++)
				pred[x] = UINT64_MAX;
			for (uint64_t k = 0; k < n; k++) {
				uint64_t iv = r->orig_all ? kidmap_find(&inv, v[k]) : v[k] < r->b->g.nv ? v[k] : UINT64_MAX;
				if (iv == UINT64_MAX || par[k] == -1)
					continue;
				uint64_t p = par[k] < 0 ? UINT64_MAX
					     : r->orig_all ? kidmap_find(&inv, (uint64_t)par[k])
					     : (uint64_t)par[k] < r->b->g.nv ? (uint64_t)par[k] : UINT64_MAX;
				pred[iv] = p == UINT64_MAX ? N : p;
			}
			uint32_t *lv = kmalloc(kmul((size_t)N, 4) + 4);
			depths_of(pred, N, root, lv);
			for (uint64_t x = 0; x < N; x++)
				if (pred[x] != UINT64_MAX)
					pred[x] = kbfs_packed(lv[x], pred[x]);
			free(lv);
			kidmap_free(&inv);
		}
		free(v);
		free(par);
	}
	rc = kcomm_agree(r->world, rc);
	if (!rc)
		kcomm_bcast(r->world, r->pred, (size_t)N * 8, 0);
	return rc;
}

/* This rank's entries of r->pred into the engine's PRED (after a hook
 * changed them). */
static void tree_to_engine(kbfs_run *r)
{
	kbfs_engine *e = &r->eng;
	e->to_device(e, e->buf(e, KBFS_PRED), (char *)r->pred + r->dsp[r->rank], (size_t)r->b->g.nb * 8);
	e->sync(e);
}

/* The engine's check of the tree (kengine.h tree_check): the columns'
 * claims (packed by the engine) and the rows' entries gathered where the
 * engine keeps them, the check, and the
 * verdict over the ranks.  1 when every rank passed and the edge count is
 * the claimed one (the tree is valid), 0 when kval must decide. */
static int device_check(kbfs_run *r, const kbfs_root *rt, uint64_t claimed)
{
	kbfs_engine *e = &r->eng;
	size_t nb8 = (size_t)r->b->g.nb * 8;
	void *pred = e->buf(e, KBFS_PRED);
	for (int a = 0; a < 2; a++) {
		enum kbfs_axis ax = a ? KBFS_ROW : KBFS_COL;
		void *dst = e->tree_buf(e, ax), *src = pred;
		size_t bytes = nb8;
		if (ax == KBFS_COL)
			e->tree_pack(e, &src, &bytes);
		if (dst != src)
			r->tr.allgather(&r->tr, ax, src, bytes, dst);
	}
	uint64_t red[3];
	e->tree_check(e, rt->internal, red);
	kcomm_allreduce_u64(r->world, red, 3, KCOMM_SUM);
	return red[0] == 0 && red[2] / 2 == claimed;
}

/* The block's column indices on the host, made from its CSC the first time
 * kval needs them where the CUDA engine made its own on the GPU: 0, or
 * KEXIT_DATA after kerror(). */
static int host_csr(kbfs_run *r)
{
	int rc = r->blk.colidx ? 0 : kpart_block_csr(&r->blk);
	if (!rc)
		return 0;
	kerror("'%s': rank %d: %s", r->dir, r->rank, kpart_csr_error(rc));
	return KEXIT_DATA;
}

static int run_one(kbfs_run *r, size_t k)
{
	kbfs_root *rt = &r->res[k];
	kbfs_ctx *x = &r->ctx;
	x->root_label = rt->input;
	kcomm_barrier(r->world);
	double t0 = ktime();
	int rc = kbfs_search(x, rt->internal, rt->tdeg);
	if (rc)
		return rc;
	kcomm_barrier(r->world);
	rt->time = ktime() - t0;
	rt->pred_time = x->pred_time;
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
	/* the tree goes to the host for files and for kval; the device's
	 * check needs it there only when it fails (or a test hook changes it) */
	const char *hook = getenv("KBFS_TEST_CORRUPT_PRED"), *hook_tree = getenv("KBFS_TEST_TREE");
	int corrupt_hook = hook && !strcmp(hook, "1"), tree_hook = hook_tree && *hook_tree;
	int on_device = r->o->validate && r->eng.tree_check != NULL;
	int all = r->o->validate && (!on_device || corrupt_hook || tree_hook);
	double tv0 = ktime();
	if (want_files || all)
		collect(r, all);
	double tcollect = ktime() - tv0;
	if (r->rank == 0 && want_files)
		rc = kbfs_write_files(r, rt);
	rc = kcomm_agree(r->world, rc);
	if (rc)
		return rc;
	if (!r->o->validate)
		return 0;
	if (tree_hook && (rc = tree_from_file(r, hook_tree, rt->internal)))
		return rc;
	if (corrupt_hook)
		corrupt(r, rt->internal);
	if (on_device && (corrupt_hook || tree_hook))
		tree_to_engine(r);
	kcomm_barrier(r->world);
	double tv1 = ktime();
	/* test hook (kbfs(1) ENVIRONMENT): a claimed edge count one too many */
	const char *hook_nedge = getenv("KBFS_TEST_NEDGE_OFF");
	uint64_t claimed = rt->nedge + (hook_nedge && !strcmp(hook_nedge, "1"));
	kval_result vr;
	int bad = 0;
	if (!on_device || !device_check(r, rt, claimed)) {
		if (on_device) {
			/* kval decides and names the failure */
			rt->device_miss = 1;
			if (!all)
				collect(r, 1);
		}
		/* kval reads the CSR on the host: made here where the GPU made its own */
		if ((rc = kcomm_agree(r->world, host_csr(r))))
			return rc;
		/* checks the packed entries as they are (unpacks them only on a miss) */
		bad = kval_partition_packed(r->world, r->b, rt->internal, r->pred, claimed, &vr);
	}
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

/* One search, one line: what a single search (-r) reports instead of the
 * statistics block, and the progress line of each root on a terminal. */
static void root_line(FILE *fp, const kbfs_run *r, size_t k, const char *prefix)
{
	const kbfs_root *rt = &r->res[k];
	fprintf(fp, "%sroot %llu: reached %llu vertices, depth %d, nedge %llu, %.6f s, %.4g TEPS%s\n", prefix,
		(unsigned long long)rt->input, (unsigned long long)rt->reached, rt->maxdepth,
		(unsigned long long)rt->nedge, rt->time, rt->time > 0 ? (double)rt->nedge / rt->time : 0.0,
		!r->o->validate ? ", not validated" : rt->valid ? ", valid" : ", INVALID");
}

/* Rank 0, after root k: -v's line, or on a terminal the same as progress. */
static void root_progress(const kbfs_run *r, size_t k)
{
	if (r->rank != 0 || (!klog_verbose() && !kcomm_progress_ok()))
		return;
	char prefix[96];
	snprintf(prefix, sizeof prefix, "%s: %zu/%zu ", klog_prog(), k + 1, r->nres);
	root_line(stderr, r, k, prefix);
	fflush(stderr);
}

static void print_block(kbfs_run *r)
{
	size_t n = r->nres;
	double *t = kmalloc(kmul(n ? n : 1, 4 * sizeof(double))), *ne = t + n, *vt = ne + n, *rc = vt + n;
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
	for (size_t k = 0; k < n; k++)
		rc[k] = (double)r->res[k].reached;
	r->small_roots = kstat_small_searches(rc, n, &r->largest_reached);
	/* the report goes to stdout, or to stderr when a root's depths or
	 * parents do (-q then silences it); -r searches get a line each */
	FILE *fp = r->data_stdout ? stderr : stdout;
	if (!r->json_stdout && !(r->data_stdout && klog_quiet())) {
		if (!strcmp(r->generation_from, "load"))
			kwarn("graph_generation is the partition's load time: no generation time came with it "
			      "(kgen keeps it as an attribute of the edge file, lost by a copy or a pipe)");
		if (r->o->nroots_given)
			for (size_t k = 0; k < n; k++)
				root_line(fp, r, k, "");
		else
			kstat_print_block(fp, &sr);
	}
	char warn[512];
	kstat_small_warning(warn, sizeof warn, r->small_roots, n, r->largest_reached);
	if (*warn)
		kwarn("%s", warn);
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
	free(r->comp);
	free(r->hosts);
	free(r->pred);
	free(r->mypred);
	free(r->orig_all);
	free(r->order);
	free(r->cnt);
	if (r->b)
		kpart_block_free(&r->blk);
	if (on_device(r))
		r->dev->base.close(&r->dev->base);
}

int kbfs_main(kcomm *world, const char *dir, const kbfs_opts *o, kbfs_device *dev)
{
	kbfs_run run, *r = &run;
	memset(r, 0, sizeof *r);
	r->world = world;
	r->o = o;
	r->dev = dev;
	r->rank = kcomm_rank(world);
	r->size = kcomm_size(world);
	r->dir = dir;
	r->json_stdout = o->json && !strcmp(o->json, "-");
	r->data_stdout = (o->depth_out && !strcmp(o->depth_out, "-")) || (o->pred_out && !strcmp(o->pred_out, "-"));
	kprov_utc_now(r->started, sizeof r->started);
	/* set-up's phases, for -v: started, loaded, engine, transport, roots, ready */
	double ts[6] = {ktime(), 0, 0, 0, 0, 0};
	int rc = pick_engine(r);
	/* the CSR's column indices made on the GPU (scale 26 on an H100: the
	 * load 9.7 s -> 0.65 s), on the host and copied with
	 * KBFS_CUDA_CSR_DEVICE=0; the host validator reads the CSR here: then
	 * the host makes it anyway */
	const char *csr_dev = getenv("KBFS_CUDA_CSR_DEVICE");
	r->csr_on_device = on_device(r) && !(csr_dev && !strcmp(csr_dev, "0")) &&
			   !(o->validate && o->validator == KBFS_VAL_HOST);
	if (!rc)
		rc = kbfs_check_grid(r);
	if (!rc)
		rc = kbfs_load(r);
	if (rc) {
		cleanup(r);
		return rc;
	}
	ts[1] = ktime();
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	r->cnt = kmalloc(sizeof(size_t) * 2 * (size_t)r->size);
	r->dsp = r->cnt + r->size;
	for (int k = 0; k < r->size; k++) {
		int i = k / g->C, j = k % g->C;
		r->cnt[k] = (size_t)g->nb * 8;
		r->dsp[k] = (size_t)(kpart_owned_first(g, i, j) * 8);
	}
	kbfs_hosts(r);
	kbfs_set_threads(r, o->threads);
	if (o->dry_run) {
		/* the memory plan only: no roots, no set-up, no search */
		kbfs_engine_conf ec = kbfs_engine_conf_of(r);
		rc = on_device(r) ? r->dev->dry_run(r->dev, world, dir, b, &ec, r->tr.name) : kbfs_dry_run_cpu(r);
		cleanup(r);
		return rc;
	}
	if (!rc) {
		kbfs_engine_conf ec = kbfs_engine_conf_of(r);
		rc = kcomm_agree(world, r->eng.setup(&r->eng, b, &ec));
		ts[2] = ktime();
		if (!rc)
			rc = kcomm_agree(world, r->tr.setup(&r->tr, world, g->R, g->C, &r->eng));
		ts[3] = ktime();
		if (!rc && on_device(r))
			rc = r->dev->report(r->dev, world);
		if (!rc) {
			kbfs_ctx *x = &r->ctx;
			kbfs_ctx_init(x, b, &r->eng, &r->tr);
			x->algo = o->algo;
			x->wire_cap = ec.wire_cap;
			if (o->algo.bu_substeps && g->C > 1 && !kbfs_bu_substeps_on(x) && r->rank == 0)
				kwarn("--bu-substeps: the %s engine with the %s transport has none: bottom-up levels "
				      "run whole",
				      r->eng.name, r->tr.name);
		}
	}
	/* the roots once the engine is ready (--roots-from largest searches) */
	if (!rc)
		rc = kbfs_choose_roots(r);
	ts[4] = ktime();
	if (!rc && r->data_stdout && r->nres != 1) {
		if (r->rank == 0)
			kerror("--%s-out -: one root's file goes to standard output, and this run has %zu roots; give "
			       "one with -r ROOT",
			       o->depth_out && !strcmp(o->depth_out, "-") ? "depth" : "pred", r->nres);
		rc = KEXIT_USAGE;
	}
	if (!rc && r->rank == 0 && kcomm_progress_ok() && !klog_verbose())
		knote("'%s' (%dx%d) loaded in %.2f s; %zu root%s", dir, g->R, g->C, r->load_time, r->nres,
		      r->nres == 1 ? "" : "s");
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
	/* the run's files (trees, depths, the record) all, or none */
	if (r->rank == 0)
		kio_hold_commits();
	if (r->rank == 0 && (o->pred_out || o->depth_out))
		rc = kbfs_prepare_files(r);
	rc = kcomm_agree(world, rc);
	ts[5] = ktime();
	if (!rc && r->rank == 0)
		kinfo("set-up in %.3f s: load %.3f, engine %.3f (its arrays; the CUDA engine's copy to the GPU), transport %.3f, "
		      "roots %.3f, the rest %.3f (validation's maps, the output files)",
		      ts[5] - ts[0], ts[1] - ts[0], ts[2] - ts[1], ts[3] - ts[2], ts[4] - ts[3], ts[5] - ts[4]);
	if (!rc && o->warmup && r->nres) {
		r->ctx.root_label = r->res[0].input;
		r->ctx.verbose = 0;
		rc = kbfs_search(&r->ctx, r->res[0].internal, r->res[0].tdeg);
		kbfs_search_finish(&r->ctx);
	}
	r->ctx.verbose = o->verbose;
	int failed = 0;
	for (size_t k = 0; k < r->nres && !rc; k++) {
		rc = run_one(r, k);
		failed += !rc && o->validate && !r->res[k].valid;
		if (!rc)
			root_progress(r, k);
	}
	if (!rc && r->rank == 0) {
		print_block(r);
		if (o->json)
			rc = kbfs_write_json(r);
		size_t misses = 0;
		for (size_t k = 0; k < r->nres; k++)
			misses += r->res[k].device_miss;
		if (!o->validate)
			kinfo("validation skipped (--no-validate)");
		else if (r->eng.tree_check)
			kinfo("validation on the device: %zu of %zu trees passed there%s", r->nres - misses, r->nres,
			      misses ? ", the others were decided by the host's validator" : "");
		if (o->validate && failed)
			kerror("%d of %zu searches failed validation", failed, r->nres);
	}
	rc = kcomm_agree(world, rc);
	if (r->rank == 0) {
		/* a search that failed validation is a verdict, not a failed run:
		 * its files are kept (the tree is the evidence) */
		int rc2 = kio_release_commits(!rc);
		rc = rc ? rc : rc2;
	}
	if (!rc && failed)
		rc = KEXIT_DATA;
	cleanup(r);
	return rc;
}

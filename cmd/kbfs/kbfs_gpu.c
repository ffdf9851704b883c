/*
 * kbfs_gpu: the CUDA engine as the kbfs program sees it, a kbfs_device
 * (kbfs_run.h): bind and open the engine and the NCCL transport, the
 * device memory plan of --dry-run, the report of every rank's GPU (-v,
 * JSON) and the CUDA options in the JSON record.  Plain C over kgpu.h, so
 * it is built with or without CUDA (then kgpu_none.c answers the calls).
 * One kbfs run at a time per process: the report is kept here.
 */
#include "kbfs_run.h"
#include "kgpu.h"
#include "klog.h"
#include "kmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpudev {
	const kgpu_opts *o;
	kgpu_devinfo *all; /* rank 0, after report: one per rank */
	size_t n;
} gpudev;

static int open_cuda(kdev *d, kcomm *world)
{
	gpudev *g = d->impl;
	return kcomm_agree(world, kgpu_bind(g->o));
}

static int engine_cuda(kbfs_device *d, kcomm *world, kbfs_engine *e, kbfs_transport *t)
{
	gpudev *g = d->base.impl;
	int rc = kcomm_agree(world, kgpu_engine_cuda(e, g->o));
	if (!rc && t)
		rc = kcomm_agree(world, kgpu_transport_nccl(t));
	return rc;
}

/* Collective (GPU bound): every rank's GPU to rank 0, which keeps them for
 * the JSON record and prints one kinfo() line each; *mine gets this rank's. */
static int report_into(kbfs_device *d, kcomm *world, kgpu_devinfo *mine)
{
	gpudev *g = d->base.impl;
	int rc = kcomm_agree(world, kgpu_device_info(mine));
	if (rc)
		return rc;
	int rank = kcomm_rank(world);
	size_t n = (size_t)kcomm_size(world), *cnt = kmalloc(2 * n * sizeof *cnt), *dsp = cnt + n;
	for (size_t k = 0; k < n; k++) {
		cnt[k] = sizeof *mine;
		dsp[k] = k * sizeof *mine;
	}
	kgpu_devinfo *all = rank == 0 ? kcalloc(n, sizeof *all) : NULL;
	kcomm_gatherv(world, mine, sizeof *mine, all, cnt, dsp, 0);
	free(cnt);
	if (rank == 0) {
		for (size_t k = 0; k < n; k++) {
			char line[512];
			kgpu_devinfo_line(&all[k], line, sizeof line);
			kinfo("%s", line);
		}
		free(g->all);
		g->all = all;
		g->n = n;
	}
	return 0;
}

static int report(kbfs_device *d, kcomm *world)
{
	kgpu_devinfo mine;
	return report_into(d, world, &mine);
}

/* The device memory plan of every rank against the free memory of its
 * GPU (the ranks sharing a GPU counted together, as setup counts them).
 * 0 when every rank fits, else KEXIT_RESOURCE. */
static int dry_run(kbfs_device *d, kcomm *world, const char *dir, const kpart_block *b,
		   const kbfs_engine_conf *conf, const char *transport)
{
	gpudev *g = d->base.impl;
	kgpu_plan_t plan;
	int rc = kcomm_agree(world, kgpu_plan(b, conf, &plan));
	kgpu_devinfo mine;
	if (!rc)
		rc = report_into(d, world, &mine);
	if (rc)
		return rc;
	/* per rank: GPU key, bytes needed, bytes free */
	size_t n = (size_t)kcomm_size(world), me = (size_t)kcomm_rank(world);
	uint64_t row[3] = {mine.key, plan.total, plan.free_bytes};
	uint64_t *all = kmalloc(kmul(n, sizeof row));
	kcomm_allgather(world, row, sizeof row, all);
	uint64_t *need = kcalloc(n, sizeof *need); /* every rank on the same GPU */
	int *sh = kcalloc(n, sizeof *sh);
	for (size_t a = 0; a < n; a++)
		for (size_t c = 0; c < n; c++)
			if (all[3 * a] == all[3 * c]) {
				need[a] += all[3 * c + 1];
				sh[a]++;
			}
	if (me == 0) {
		printf("kbfs --dry-run: %s, grid %dx%d, engine cuda, kernel %s, transport %s\n", dir, b->g.R, b->g.C,
		       kgpu_kernel_name(g->o->kernel), transport);
		printf("rank 0 device memory (bytes):\n");
		kgpu_plan_print(stdout, &plan);
		for (size_t k = 0; k < n; k++) {
			const kgpu_devinfo *x = &g->all[k];
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
	size_t first = me;
	for (size_t k = 0; k < me; k++)
		if (all[3 * k] == all[3 * me]) {
			first = k;
			break;
		}
	rc = need[me] <= plan.free_bytes ? 0 : first == me ? kgpu_plan_check(&plan, need[me]) : KEXIT_RESOURCE;
	free(all);
	free(need);
	free(sh);
	return kcomm_agree(world, rc);
}

static void json_devices(kbfs_device *d, kjson_writer *w)
{
	gpudev *g = d->base.impl;
	for (size_t k = 0; k < g->n; k++) {
		const kgpu_devinfo *x = &g->all[k];
		kjson_begin_object(w);
		kjson_kv_int(w, "rank", x->rank);
		kjson_kv_string(w, "host", x->host);
		kjson_kv_int(w, "gpu", x->gpu);
		kjson_kv_string(w, "name", x->name);
		kjson_kv_string(w, "uuid", x->uuid);
		kjson_kv_string(w, "pci", x->pci);
		kjson_kv_int(w, "sharers", x->sharers);
		kjson_kv_uint(w, "memory_bytes", x->total_bytes);
		kjson_end_object(w);
	}
}

static void json_options(kbfs_device *d, kjson_writer *w)
{
	const kgpu_opts *o = ((gpudev *)d->base.impl)->o;
	kjson_kv_string(w, "kernel", kgpu_kernel_name(o->kernel));
	kjson_kv_int(w, "vbfs_k", o->vbfs_k);
	kjson_kv_int(w, "bu_split", o->bu_split);
	kjson_kv_int(w, "bu_rows", o->bu_rows);
	kjson_kv_int(w, "bu_batch", o->bu_batch);
	kjson_kv_string(w, "bu_kernel", kgpu_bu_kernel_name(o->bu_kernel));
	kjson_kv_bool(w, "bu_first", o->bu_first);
	kjson_kv_bool(w, "td_small", o->td_small);
	kjson_kv_bool(w, "td_lists", o->td_lists);
	kjson_kv_bool(w, "step_sync", o->step_sync);
}

static void release(kdev *d)
{
	gpudev *g = d->impl;
	free(g->all);
	g->all = NULL;
	g->n = 0;
}

void kbfs_gpu_device(kbfs_device *d, const kgpu_opts *o)
{
	static gpudev state;
	state.o = o;
	*d = (kbfs_device){.base = {.name = "cuda",
				    .built = kgpu_built(),
				    .impl = &state,
				    .count = kgpu_device_count,
				    .open = open_cuda,
				    .close = release},
			   .nccl_built = kgpu_nccl_built(),
			   .engine = engine_cuda,
			   .dry_run = dry_run,
			   .report = report,
			   .json_devices = json_devices,
			   .json_options = json_options};
}

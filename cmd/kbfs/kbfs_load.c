/*
 * kbfs_load: the partition and the job of a kbfs run.
 *
 * The partition's grid is checked against the job before anything is
 * loaded (rank 0 reads the manifest); every rank loads its block and the
 * load time is the slowest rank's; the construction and generation times
 * come from build-info and the manifest when they say (else the load
 * time); the hosts of every rank, and the threads of each; the engine's
 * configuration from them (what e->setup gets and --dry-run plans with).
 */
#include "kbfs_internal.h"
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kbfs_check_grid(kbfs_run *r)
{
	const char *dir = r->dir;
	uint64_t h[4] = {0, 0, 0, 0};
	if (r->rank == 0) {
		int R = 0, C = 0;
		uint64_t nv = 0;
		h[0] = (uint64_t)kpart_manifest_grid(dir, &R, &C, &nv);
		h[1] = (uint64_t)R;
		h[2] = (uint64_t)C;
		if (!h[0] && (uint64_t)R * (uint64_t)C != (uint64_t)r->size) {
			if (R * C == 1)
				kerror("'%s' is partitioned for one rank (1x1) but this job has %d ranks; run it "
				       "without mpirun (or with mpirun -np 1)",
				       dir, r->size);
			else
				kerror("'%s' is partitioned for a %dx%d grid (%d ranks) but this job has %d rank%s; "
				       "run it with mpirun -np %d",
				       dir, R, C, R * C, r->size, r->size == 1 ? "" : "s", R * C);
			h[0] = KEXIT_USAGE;
		}
	}
	kcomm_bcast(r->world, h, sizeof h, 0);
	return (int)h[0];
}

/* What the partition says about its making: ct[0], ct[1] construction
 * (build-info); ct[2], ct[3] generation (1: kgen's, kept in build-info by
 * kpart from the edge file's attribute, kprov.h; 2: a manifest's). */
static void partition_times(const char *dir, double ct[4])
{
	char *path = kfs_join(dir, "build-info");
	if (!access(path, R_OK)) {
		if (!kpart_construction_time(dir, &ct[1]))
			ct[0] = 1;
		if (!kpart_build_info_double(dir, "generation_time", &ct[3]))
			ct[2] = 1;
	}
	free(path);
	kpart_manifest m;
	if (!ct[2] && !kpart_manifest_read(dir, &m)) {
		const char *v = kpart_manifest_get(&m, "generation_time");
		if (!v)
			v = kpart_manifest_get(&m, "source_generation_time");
		char *end;
		if (v && (ct[3] = strtod(v, &end)) >= 0 && end != v && !*end)
			ct[2] = 2;
		kpart_manifest_free(&m);
	}
}

/* Every rank loads its block; the load time is the slowest rank's. */
int kbfs_load(kbfs_run *r)
{
	const char *dir = r->dir;
	kcomm_barrier(r->world);
	double t0 = ktime();
	int rc = kpart_load(dir, r->rank, &r->blk);
	rc = kcomm_agree(r->world, rc);
	if (rc) {
		kpart_block_free(&r->blk); /* loaded here, but another rank failed */
		return rc;
	}
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
		partition_times(dir, ct);
	kcomm_bcast(r->world, ct, sizeof ct, 0);
	r->generation_time = dt;
	r->generation_from = "load";
	if (ct[0]) {
		r->construction_time = ct[1];
		r->construction_from = "build-info";
	}
	if (ct[2]) {
		r->generation_time = ct[3];
		r->generation_from = ct[2] == 1 ? "kgen" : "manifest";
	}
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	/* what the statistics block calls SCALE and edgefactor: the generator's,
	 * or for an imported graph ceil(log2 nv) and tuples per vertex */
	r->scale = b->scale;
	if (!b->scale)
		while ((UINT64_C(1) << r->scale) < g->nv && r->scale < 63)
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
void kbfs_hosts(kbfs_run *r)
{
	enum { HL = KBFS_HOST_LEN };
	char mine[HL] = {0};
	snprintf(mine, HL, "%s", kcomm_host());
	r->hosts = kcalloc((size_t)r->size, HL);
	kcomm_allgather(r->world, mine, HL, r->hosts);
	r->local_ranks = 0;
	for (int k = 0; k < r->size; k++)
		r->local_ranks += !strncmp(r->hosts + (size_t)k * HL, mine, HL);
}

void kbfs_set_threads(kbfs_run *r, int want)
{
	r->threads = kopt_threads(want, r->local_ranks);
	kopt_check_affinity();
}

kbfs_engine_conf kbfs_engine_conf_of(const kbfs_run *r)
{
	kbfs_engine_conf ec = {.threads = r->threads,
			       .wire_cap = kbfs_wire_cap(r->b, r->o->algo.exchange, r->o->algo.compress),
			       .device = kcomm_local_rank()};
	return ec;
}

/*
 * kbfs_load: the partition and the job of a kbfs run.
 *
 * The partition's grid is checked against the job before anything is
 * loaded (rank 0 reads the manifest, once for the whole run); every rank
 * loads its block and the load time is the slowest rank's; the
 * construction and generation times come from build-info (read once) and
 * the manifest when they say (else the load time); the hosts of every
 * rank, and the threads of each; the engine's configuration from them
 * (what e->setup gets and --dry-run plans with).
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
	uint64_t rc = 0;
	if (r->rank == 0) {
		/* the manifest is read here, once: kbfs_load uses it too */
		rc = (uint64_t)kpart_manifest_read(dir, &r->man);
		int R = r->man.g.R, C = r->man.g.C;
		if (!rc && (uint64_t)R * (uint64_t)C != (uint64_t)r->size) {
			if (R * C == 1)
				kerror("'%s' is partitioned for one rank (1x1) but this job has %d ranks; run it "
				       "without mpirun (or with mpirun -np 1)",
				       dir, r->size);
			else
				kerror("'%s' is partitioned for a %dx%d grid (%d ranks) but this job has %d rank%s; "
				       "run it with mpirun -np %d",
				       dir, R, C, R * C, r->size, r->size == 1 ? "" : "s", R * C);
			rc = KEXIT_USAGE;
			kpart_manifest_free(&r->man);
		}
	}
	kcomm_bcast(r->world, &rc, sizeof rc, 0);
	return (int)rc;
}

/* What the partition says about its making, from rank 0 to every rank. */
typedef struct times_msg {
	uint64_t construction_from; /* 0: no figure (the load time), 1: build-info */
	uint64_t generation_from;   /* 0: no figure, 1: kgen's (kept in build-info by kpart from the
				     * edge file's attribute, kprov.h), 2: the manifest's */
	double construction, generation;
} times_msg;

/* The times of rank 0's manifest m and of build-info (each read once). */
static void partition_times(const char *dir, const kpart_manifest *m, times_msg *t)
{
	char *path = kfs_join(dir, "build-info");
	if (!access(path, R_OK)) {
		static const char *const keys[2] = {"construction_time", "generation_time"};
		double v[2];
		int found[2];
		if (!kpart_build_info_read(dir, keys, 2, v, found)) {
			if (found[0]) {
				t->construction = v[0];
				t->construction_from = 1;
			} else {
				kerror("'%s': no construction_time", path);
			}
			if (found[1]) {
				t->generation = v[1];
				t->generation_from = 1;
			}
		}
	}
	free(path);
	if (!t->generation_from) {
		const char *v = kpart_manifest_get(m, "generation_time");
		if (!v)
			v = kpart_manifest_get(m, "source_generation_time");
		if (v && !kopt_parse_double(v, 0, 1e12, &t->generation))
			t->generation_from = 2;
	}
}

/* Every rank loads its block (rank 0 with the manifest kbfs_check_grid
 * read); the load time is the slowest rank's. */
int kbfs_load(kbfs_run *r)
{
	const char *dir = r->dir;
	kcomm_barrier(r->world);
	double t0 = ktime();
	/* the CSR's column indices: made here from the CSC, or by the CUDA
	 * engine on its GPU (then never made or copied here) */
	int flags = r->csr_on_device ? KPART_LOAD_NO_COLIDX : 0, rc;
	if (r->rank == 0) {
		rc = kpart_load_flags(dir, &r->man, r->rank, &r->blk, flags);
	} else {
		kpart_manifest m;
		if (!(rc = kpart_manifest_read(dir, &m)))
			rc = kpart_load_flags(dir, &m, r->rank, &r->blk, flags);
		kpart_manifest_free(&m);
	}
	rc = kcomm_agree(r->world, rc);
	if (rc) {
		kpart_block_free(&r->blk); /* loaded here, but another rank failed */
		kpart_manifest_free(&r->man);
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
	times_msg t = {0, 0, 0, 0};
	if (r->rank == 0)
		partition_times(dir, &r->man, &t);
	kpart_manifest_free(&r->man);
	kcomm_bcast(r->world, &t, sizeof t, 0);
	r->generation_time = dt;
	r->generation_from = "load";
	if (t.construction_from) {
		r->construction_time = t.construction;
		r->construction_from = "build-info";
	}
	if (t.generation_from) {
		r->generation_time = t.generation;
		r->generation_from = t.generation_from == 1 ? "kgen" : "manifest";
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

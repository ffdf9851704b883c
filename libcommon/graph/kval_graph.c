/*
 * kval_graph: the graph kvalidate checks trees against (see kval.h): a
 * partition directory, every rank loading its block, or an edge list
 * spread over the ranks by kdist; rank 0 keeps the input ids.
 */
#include "kval.h"
#include "kmagic.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

static int load_partition(kcomm *w, const char *path, kval_graph *g)
{
	int R = 0, C = 0, rank = kcomm_rank(w), P = kcomm_size(w);
	uint64_t nv = 0;
	/* rank 0 reads the manifest (a bad one is one line), then tells all */
	int rc = rank == 0 ? kpart_manifest_grid(path, &R, &C, &nv) : 0;
	rc = kcomm_agree(w, rc);
	if (rc)
		return rc;
	uint64_t grid[3] = {(uint64_t)R, (uint64_t)C, nv};
	kcomm_bcast(w, grid, sizeof grid, 0);
	R = (int)grid[0];
	C = (int)grid[1];
	nv = grid[2];
	if ((long)R * C != P) {
		if (rank == 0)
			kerror("partition '%s' is for %d x %d = %d ranks but this run has %d; run 'mpirun -np %d %s'",
			       path, R, C, R * C, P, R * C, klog_prog());
		return KEXIT_USAGE;
	}
	rc = kcomm_agree(w, kpart_load(path, rank, &g->b));
	if (rc)
		return rc;
	const kpart_grid *pg = &g->b.g;
	g->N = pg->N;
	g->nreal = pg->nv;
	uint64_t any = g->b.orig != NULL;
	kcomm_allreduce_u64(w, &any, 1, KCOMM_MAX);
	if (!any)
		return 0;
	/* gather every block's orig on rank 0, placed at its block */
	uint64_t nb = pg->nb, first = kpart_owned_first(pg, g->b.i, g->b.j);
	uint64_t *mine = kmalloc(kmul((size_t)nb, 8) + 8);
	for (uint64_t k = 0; k < nb; k++)
		mine[k] = g->b.orig ? g->b.orig[k] : first + k;
	size_t *counts = NULL, *displs = NULL;
	if (rank == 0) {
		g->map = kmalloc(kmul((size_t)g->N, 8));
		counts = kmalloc(kmul((size_t)P, sizeof *counts));
		displs = kmalloc(kmul((size_t)P, sizeof *displs));
		for (int r = 0; r < P; r++) {
			counts[r] = (size_t)nb * 8;
			displs[r] = (size_t)kpart_owned_first(pg, r / C, r % C) * 8;
		}
	}
	kcomm_gatherv(w, mine, (size_t)nb * 8, g->map, counts, displs, 0);
	free(mine);
	free(counts);
	free(displs);
	return 0;
}

int kval_graph_load(kcomm *world, const char *path, kval_graph *g)
{
	memset(g, 0, sizeof *g);
	struct {
		uint64_t rc;     /* rank 0's kmagic_detect */
		uint64_t is_dir; /* the graph is a directory (a partition) */
	} h = {0, 0};
	if (kcomm_rank(world) == 0) {
		int kind;
		h.rc = (uint64_t)kmagic_detect(path, &kind);
		h.is_dir = kind == KMAGIC_DIR;
	}
	kcomm_bcast(world, &h, sizeof h, 0);
	if (h.rc)
		return (int)h.rc;
	g->is_part = (int)h.is_dir;
	int rc;
	if (g->is_part) {
		rc = load_partition(world, path, g);
	} else {
		rc = kdist_load(world, path, &g->e);
		g->N = g->nreal = g->e.nv;
		g->map = g->e.map; /* rank 0; owned by g->e */
	}
	if (!rc && g->map && kcomm_rank(world) == 0) {
		uint64_t dup = kidmap_build(&g->inv, g->map, g->N);
		if (dup != KIDMAP_NONE) {
			kerror("'%s': the graph lists input id %llu for two vertices (corrupt %s)", path,
			       (unsigned long long)dup, g->is_part ? "partition" : "edge file");
			rc = KEXIT_DATA;
		}
	}
	return kcomm_agree(world, rc);
}

void kval_graph_free(kval_graph *g)
{
	if (g->is_part) {
		kpart_block_free(&g->b);
		free(g->map);
	}
	kdist_free(&g->e);
	kidmap_free(&g->inv);
	memset(g, 0, sizeof *g);
}

int kval_graph_check(kcomm *world, const kval_graph *g, uint64_t root, const uint64_t *pred, uint64_t nedge_claimed,
		     kval_result *res)
{
	if (g->is_part)
		return kval_partition(world, &g->b, root, pred, nedge_claimed, res);
	return kval_edges(world, g->e.uv, g->e.ne_local, g->N, root, pred, nedge_claimed, res);
}

/*
 * kbfs_plan: kbfs --dry-run with the CPU engine: the host memory each rank
 * needs (an estimate, by part) against the memory available, summed over
 * the ranks of each host.  The CUDA engine's plan is gpu/'s (kbfs_device).
 */
#include "kbfs_internal.h"
#include "klog.h"
#include "kmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Host memory one rank of the CPU engine needs (an estimate, by part) and
 * has: what each rank gives all (an allgather). */
typedef struct plan_msg {
	uint64_t part;   /* the partition: CSC, CSR, tdeg, orig (and the inverse id map) */
	uint64_t engine; /* the engine's bitmaps, PL, PRED, wire buffers */
	uint64_t run;    /* the predecessor maps and validation's depth arrays */
	uint64_t avail;  /* memory available on the host (sysconf) */
} plan_msg;

static void cpu_estimate(const kbfs_run *r, plan_msg *est)
{
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	const kbfs_opts *o = r->o;
	uint64_t iw = b->idx64 ? 8 : 4, nbw = g->nb / 64, ncolw = b->ncols / 64, nroww = b->nrows / 64;
	uint64_t nseg = (uint64_t)(g->R > g->C ? g->R : g->C), cap = kbfs_engine_conf_of(r).wire_cap;
	int files = o->pred_out || o->depth_out;
	/* partition: CSC, CSR, tdeg, orig (and the inverse id map) */
	/* (the CSR's column indices are the CSC's row indices on a 1x1 block) */
	uint64_t ways = b->colidx && b->colidx == b->rowidx ? 1 : 2;
	est->part = 8 * (b->ncols + 1) + 8 * (b->nrows + 1) + ways * b->nnz * iw + 8 * g->nb +
		    (b->orig ? 8 * g->nb + 16 * g->nb : 0);
	/* engine: 3 nb bitmaps, column frontier, 3 row bitmaps and the empty-row
	 * bitmap, PL, PRED and the two wire buffers */
	est->engine = 8 * (3 * nbw + ncolw + 4 * nroww + b->nrows + g->nb) + 2 * nseg * cap;
	/* run: this rank's packed entries; all N on every rank for validation
	 * (and its depths, 5 bytes a vertex), on rank 0 for files; rank 0's
	 * id map and output order */
	est->run = 0;
	if (o->validate || files)
		est->run += 8 * g->nb;
	if (o->validate)
		est->run += 8 * g->N + 5 * g->N;
	else if (files && r->rank == 0)
		est->run += 8 * g->N;
	if (r->rank == 0 && b->orig && (o->validate || files))
		est->run += 8 * g->N;
	if (r->rank == 0 && files)
		est->run += 8 * g->N;
}

int kbfs_dry_run_cpu(kbfs_run *r)
{
	enum { HL = KBFS_HOST_LEN };
	size_t n = (size_t)r->size;
	plan_msg mine;
	cpu_estimate(r, &mine);
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	mine.avail = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	plan_msg *all = kmalloc(kmul(n, sizeof mine));
	kcomm_allgather(r->world, &mine, sizeof mine, all);
	if (r->rank == 0) {
		const kpart_grid *g = &r->b->g;
		printf("kbfs --dry-run: %s, grid %dx%d, engine cpu (host memory, estimate)\n", r->dir, g->R, g->C);
		for (size_t k = 0; k < n; k++) {
			const plan_msg *x = &all[k];
			const char *h = r->hosts + k * HL;
			uint64_t host_need = 0;
			int on_host = 0;
			for (size_t q = 0; q < n; q++)
				if (!strncmp(r->hosts + q * HL, h, HL)) {
					host_need += all[q].part + all[q].engine + all[q].run;
					on_host++;
				}
			char a[32], b[32], c[32], d[32];
			printf("rank %zu (%.*s): needs %s (partition %s, engine %s, predecessors and validation %s)", k,
			       HL, h, kpart_human_bytes(a, sizeof a, x->part + x->engine + x->run),
			       kpart_human_bytes(b, sizeof b, x->part), kpart_human_bytes(c, sizeof c, x->engine),
			       kpart_human_bytes(d, sizeof d, x->run));
			if (on_host > 1)
				printf(", %s with the %d ranks on this host", kpart_human_bytes(a, sizeof a, host_need),
				       on_host);
			printf(", %s available\n", kpart_human_bytes(a, sizeof a, x->avail));
		}
		fflush(stdout);
	}
	free(all);
	return 0;
}

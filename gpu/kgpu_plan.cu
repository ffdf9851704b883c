// kgpu_plan: the device memory one rank's CUDA engine needs, array by array.
//
// kgpu_plan_fill is the single list of device arrays: setup allocates
// exactly these slots, --dry-run prints them, and the fit check runs on
// them before anything is allocated.  Per directed edge the graph costs
// 2 * w bytes (CSC rowidx + CSR colidx, w = 4 with u32 local indices);
// offsets are u32 on the device whenever nnz < 2^32 (4 bytes per column
// and row), tdeg u32 whenever the input has fewer than 2^32 tuples, PRED
// shares PL's memory on one-column grids (where the row reduction is a
// copy); PL itself (8 bytes a local row) is the interface's; everything else is O(N/R + N/C) or a fixed scratch: the
// top-down expansion works on pieces of td_chunk frontier words, so there
// is no per-edge scratch at all.  Making the CSR's column indices at set-up
// (kgpu_csr.cu: rank files do not store them) borrows PL for the rows'
// cursors and, for a moment, at most 64 MiB (or the largest row) and CUB's
// scratch for its sorts, within the reserve.
#include "kgpu_internal.cuh"

#include <stdio.h>
#include <string.h>

void kgpu_geom_init(kgpu_geom *g, const kpart_block *b, const kbfs_engine_conf *conf, const kgpu_opts *o)
{
	memset(g, 0, sizeof *g);
	g->R = b->g.R;
	g->C = b->g.C;
	g->i = b->i;
	g->j = b->j;
	g->rank = kpart_rank_of(&b->g, b->i, b->j);
	g->nb = b->g.nb;
	KASSERT(g->nb % 64 == 0);
	g->nbw = g->nb / 64;
	g->ncols = b->ncols;
	g->nrows = b->nrows;
	g->nnz = b->nnz;
	g->colw = (u64)g->R * g->nbw;
	g->roww = (u64)g->C * g->nbw;
	KASSERT(g->ncols == g->colw * 64 && g->nrows == g->roww * 64);
	if (g->colw >= (1ull << 32))
		kdie(KEXIT_RESOURCE, "cuda: %llu local columns are more than the engine's frontier list can index "
				     "(2^38): use a larger grid", (ull)g->ncols);
	g->col_first = kpart_col_first(&b->g, b->j);
	g->own_first = kpart_owned_first(&b->g, b->i, b->j);
	g->nseg = (u64)(g->R > g->C ? g->R : g->C);
	g->wire_cap = conf && conf->wire_cap ? conf->wire_cap : g->nbw * 8;
	if (g->wire_cap < g->nbw * 8)
		KBUG("wire_cap %llu below the bitmap size %llu", (ull)g->wire_cap, (ull)(g->nbw * 8));
	g->idx64 = b->idx64 != 0;
	g->off64 = o->off64 || g->nnz >= 0xffffffffull;
	// tdeg as u32 when every entry fits: always when the input has fewer
	// than 2^32 tuples, else when the block's largest does (scale 28 and up)
	g->tdeg64 = 0;
	if (!(b->ne_input && b->ne_input < 0xffffffffull)) {
		u64 most = 0;
		for (u64 k = 0; b->tdeg && k < g->nb; k++)
			most = b->tdeg[k] > most ? b->tdeg[k] : most;
		g->tdeg64 = !b->tdeg || most >= 0xffffffffull;
	}
	// a 1x1 block is symmetric (kpart stores each edge both ways, rows and
	// columns the same ids): its CSR is its CSC, kept once
	g->sym = o->sym && g->R == 1 && g->C == 1;
	g->pred_alias = g->C == 1;
	g->colfront_alias = g->R == 1;
	g->recv_alias = g->C == 1;
	g->bu_first = o->bu_first != 0;
	g->pred_finish = o->pred_finish != 0 && g->C > 1;
	u64 w = o->td_chunk ? o->td_chunk : (u64)KGPU_TD_CHUNK;
	g->chunk_words = w < g->colw ? w : g->colw;
	if (g->chunk_words == 0)
		g->chunk_words = 1;
	g->tps = (g->nbw + KGPU_TILE_WORDS - 1) / KGPU_TILE_WORDS;
	g->ntiles = g->nseg * g->tps;
	g->ndchunks = g->nseg * ((g->wire_cap + KGPU_DCHUNK - 1) / KGPU_DCHUNK + 1);
	g->N = b->g.N;
	g->validate = o->validate != 0;
	g->vtiles = (g->nnz + KGPU_VTILE - 1) / KGPU_VTILE;
}

static void put(kgpu_plan_t *p, int slot, const char *name, u64 bytes)
{
	KASSERT(slot < KGPU_PLAN_MAX);
	snprintf(p->a[slot].name, sizeof p->a[slot].name, "%s", name);
	p->a[slot].bytes = (bytes + 255) & ~(u64)255; // allocation granularity
}

void kgpu_plan_fill(const kgpu_geom *g, kgpu_plan_t *p)
{
	memset(p, 0, sizeof *p);
	const u64 ow = g->off64 ? 8 : 4, iw = g->idx64 ? 8 : 4, W = g->chunk_words;
	static const char *const bufname[KBFS_NBUF] = {"FRONT", "OWNVIS", "RECV",  "COLFRONT", "ROWVIS", "ROWNEXT",
						       "XRECV", "PL",     "PRED",  "WSEND",    "WRECV"};
	put(p, KS_COLPTR, "colptr", (g->ncols + 1) * ow);
	put(p, KS_ROWIDX, "rowidx", g->nnz * iw);
	put(p, KS_ROWPTR, g->sym ? "rowptr=colptr" : "rowptr", g->sym ? 0 : (g->nrows + 1) * ow);
	put(p, KS_COLIDX, g->sym ? "colidx=rowidx" : "colidx", g->sym ? 0 : g->nnz * iw);
	put(p, KS_TDEG, "tdeg", g->nb * (g->tdeg64 ? 8 : 4));
	for (int k = 0; k < KBFS_NBUF; k++) {
		u64 n = 0;
		switch (k) {
		case KBFS_FRONT:
		case KBFS_OWNVIS: n = g->nbw * 8; break;
		case KBFS_RECV: n = g->recv_alias ? 0 : g->nbw * 8; break;
		case KBFS_COLFRONT: n = g->colfront_alias ? 0 : g->colw * 8; break;
		case KBFS_ROWVIS:
		case KBFS_ROWNEXT:
		case KBFS_XRECV: n = g->roww * 8; break;
		case KBFS_PL: n = g->nrows * 8; break;
		case KBFS_PRED: n = g->pred_alias ? 0 : g->nb * 8; break;
		case KBFS_WSEND:
		case KBFS_WRECV: n = g->nseg * g->wire_cap; break;
		}
		const char *name = k == KBFS_PRED && g->pred_alias		 ? "PRED=PL"
				   : k == KBFS_COLFRONT && g->colfront_alias ? "COLFRONT=FRONT"
				   : k == KBFS_RECV && g->recv_alias	 ? "RECV=ROWNEXT"
									 : bufname[k];
		put(p, KS_BUF0 + k, name, n);
	}
	put(p, KS_EMPTY, "bu.empty", g->roww * 8);
	put(p, KS_FIRST, "bu.first", g->bu_first ? g->nrows * iw : 0);
	put(p, KS_WLIST, "td.words", g->colw * 4);
	put(p, KS_WCNT, "td.wcount", (W + 1) * 4);
	put(p, KS_CV, "td.verts", 64 * W * iw);
	put(p, KS_CS, "td.scan", (64 * W + 1) * ow);
	put(p, KS_TILES, "codec.tiles", g->ntiles * sizeof(kgpu_vtile));
	put(p, KS_TPRE, "codec.prefix", g->ntiles * sizeof(kgpu_vtile));
	put(p, KS_SEGSTAT, "codec.segstat", g->nseg * sizeof(kgpu_segstat));
	put(p, KS_FORM, "codec.form", g->nseg * sizeof(int));
	put(p, KS_USEG, "codec.useg", g->nseg * sizeof(kgpu_useg));
	put(p, KS_CSUM, "codec.csum", g->ndchunks * 8);
	put(p, KS_CPRE, "codec.cpre", g->ndchunks * 8);
	size_t t1 = kgpu_td_cub_bytes(g), t2 = kgpu_codec_cub_bytes(g);
	put(p, KS_CUB, "cub.temp", t1 > t2 ? t1 : t2);
	put(p, KS_CNT, "counters", sizeof(kgpu_counters));
	static_assert(KS_NSLOT <= KGPU_PLAN_MAX, "kgpu_plan_t holds every slot");
	put(p, KS_RLIST, "td.rowlist", KGPU_LIST_CAP * 4);
	put(p, KS_FLIST, "td.frontlist", (KGPU_LIST_CAP + 1) * 4);
	put(p, KS_LOOP, "td.loop", sizeof(kgpu_loop));
	const int v = g->validate;
	put(p, KS_VOWN, g->R == 1 ? "val.own=levels" : "val.own", v && g->R > 1 ? g->nb * 2 : 0);
	put(p, KS_VROW, g->C == 1 ? "val.rows=PRED" : "val.rows", v && g->C > 1 ? g->nrows * 8 : 0);
	put(p, KS_VLEV, "val.levels", v ? g->ncols * 2 : 0);
	put(p, KS_VTREE, "val.tree", v ? g->roww * 8 : 0);
	put(p, KS_VTROW, "val.tiles", v && g->nnz ? (g->vtiles + 1) * 8 : 0);
	put(p, KS_VOUT, "val.result", v ? kgpu_valid_out_bytes() : 0);
	put(p, KS_OEMPTY, "pred.empty", g->pred_finish ? g->nbw * 8 : 0);
	p->n = KS_NSLOT;
	p->reserve = (256ull << 20) + (32ull << 20) * (u64)(g->R + g->C);
	p->total = p->reserve;
	for (int k = 0; k < p->n; k++)
		p->total += p->a[k].bytes;
	p->graph = p->a[KS_COLPTR].bytes + p->a[KS_ROWIDX].bytes + p->a[KS_ROWPTR].bytes + p->a[KS_COLIDX].bytes;
	p->nnz = g->nnz;
	p->bytes_per_edge = g->nnz ? (double)(p->total - p->reserve) / (double)g->nnz : 0;
	p->off64 = g->off64;
	p->idx64 = g->idx64;
	p->gpu = kgpu_current_gpu();
	p->sharers = kgpu_gpu_sharers();
}

extern "C" int kgpu_plan(const kpart_block *b, const kbfs_engine_conf *conf, kgpu_plan_t *plan)
{
	memset(plan, 0, sizeof *plan);
	int rc = kgpu_bind(NULL);
	if (rc)
		return rc;
	kgpu_geom g;
	kgpu_geom_init(&g, b, conf, kgpu_bound_opts());
	kgpu_plan_fill(&g, plan);
	kgpu_mem_info(&plan->free_bytes, &plan->total_bytes);
	return 0;
}

static const char *human(char *buf, size_t len, u64 n)
{
	if (n >= (1ull << 30))
		snprintf(buf, len, "%.2f GiB", n / 1073741824.0);
	else if (n >= (1ull << 20))
		snprintf(buf, len, "%.1f MiB", n / 1048576.0);
	else if (n >= 1024)
		snprintf(buf, len, "%.1f KiB", n / 1024.0);
	else
		snprintf(buf, len, "%llu B", (ull)n);
	return buf;
}

extern "C" void kgpu_plan_print(FILE *fp, const kgpu_plan_t *p)
{
	char h[32], h2[32];
	for (int k = 0; k < p->n; k++)
		fprintf(fp, "  %-14s %16llu  %s\n", p->a[k].name, (ull)p->a[k].bytes, human(h, sizeof h, p->a[k].bytes));
	fprintf(fp, "  %-14s %16llu  %s (estimate: NCCL buffers, allocator slack)\n", "reserve", (ull)p->reserve,
		human(h, sizeof h, p->reserve));
	fprintf(fp, "  %-14s %16llu  %s (%s offsets, %s indices; %.2f bytes per directed edge, graph %.2f)\n",
		"total", (ull)p->total, human(h, sizeof h, p->total), p->off64 ? "u64" : "u32",
		p->idx64 ? "u64" : "u32", p->bytes_per_edge, p->nnz ? (double)p->graph / (double)p->nnz : 0.0);
	fprintf(fp, "  %-14s %16llu  %s on GPU %d (of %s, shared by %d rank%s)\n", "free", (ull)p->free_bytes,
		human(h, sizeof h, p->free_bytes), p->gpu, human(h2, sizeof h2, p->total_bytes), p->sharers,
		p->sharers == 1 ? "" : "s");
}

extern "C" int kgpu_plan_check(const kgpu_plan_t *p, uint64_t needed)
{
	int sh = p->sharers > 0 ? p->sharers : 1;
	if (needed == 0)
		needed = p->total * (u64)sh;
	if (needed <= p->free_bytes)
		return 0;
	// the first array whose cumulative share no longer fits
	double scale = p->total ? (double)needed / (double)p->total : 1.0;
	u64 cum = p->reserve;
	int bad = p->n - 1;
	for (int k = 0; k < p->n; k++) {
		cum += p->a[k].bytes;
		if ((double)cum * scale > (double)p->free_bytes) {
			bad = k;
			break;
		}
	}
	char a[32], b[32], c[32];
	kerror("cuda: GPU %d on %s has %s free but needs %s (%d rank%s): array '%s' (%s) does not fit; "
	       "use more ranks or a larger grid (kpart -R/-C), or fewer ranks per GPU",
	       p->gpu, kcomm_host(), human(a, sizeof a, p->free_bytes), human(b, sizeof b, needed), sh,
	       sh == 1 ? "" : "s sharing it", p->a[bad].name, human(c, sizeof c, p->a[bad].bytes));
	return KEXIT_RESOURCE;
}

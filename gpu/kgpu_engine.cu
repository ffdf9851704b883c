// kgpu_engine: the CUDA engine behind kengine.h's kbfs_engine.
//
// Owns the engine state: set-up (bind the GPU, check the memory plan on
// every rank before anything is allocated, allocate the plan's slots,
// copy the partition straight into device memory), teardown, buffers,
// reset, the owner update, synchronisation and copies.  The local steps
// live in kgpu_topdown.cu and kgpu_bottomup.cu, the wire forms in
// kgpu_codec.cu.  All work runs in order on one stream per rank; the
// calls that return host values (top_down, bottom_up, update, pack,
// to_host) wait for it, the others return at once.
#include "kgpu_internal.cuh"

#include <stdlib.h>
#include <string.h>

kgpu_state *kgpu_state_of(kbfs_engine *e) { return (kgpu_state *)e->impl; }

// ---- kernels ----------------------------------------------------------------

// Owner update: new = RECV & ~OWNVIS; OWNVIS |= new; FRONT = new, over
// every word (kgpu_update_words).  With td_lists (fl: FRONT's nonzero
// words, fl[0] of them, cap + 1 when more): RECV's words are cleared as
// they are read, a list level whose listed words fit (rl) takes
// kgpu_list_update in block 0, and otherwise the new nonzero words are
// listed as they are found.
template <typename T>
__global__ void k_update(u64 *__restrict__ recv, u64 *__restrict__ ownvis, u64 *__restrict__ front,
			 const T *__restrict__ tdeg, u64 nbw, kgpu_counters *cnt, kgpu_counters *pub,
			 const u32 *__restrict__ rl, u32 *__restrict__ fl, int listlevel, u32 cap, int batch)
{
	ull found = 0, td = 0;
	const bool lm = fl && listlevel && cnt->nwl <= cap && fl[0] <= cap;
	if (lm) {
		// block 0 has the level's few words and publishes alone, without a
		// ticket: the others leave at once (one that starts after block 0 is
		// done still reads lm true: nwl is then 0 and fl[0] <= nw <= cap)
		if (blockIdx.x != 0)
			return;
		kgpu_list_update(recv, ownvis, front, tdeg, rl, fl, (u32)cnt->nwl, found, td);
	} else {
		kgpu_update_words(recv, ownvis, front, tdeg, nbw, fl, cap, cnt, batch, found, td);
	}
	kgpu_count(&cnt->found, found);
	kgpu_count(&cnt->tdeg, td);
	// the last block to finish copies the level's counters to pinned host
	// memory and zeroes them for the next level (no copy or memset queued)
	__shared__ bool last;
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = lm || atomicAdd(&cnt->ticket, 1ull) == gridDim.x - 1;
	__syncthreads();
	if (last && threadIdx.x == 0) {
		__threadfence();
		volatile kgpu_counters *c = cnt;
		pub->found = c->found;
		pub->examined = c->examined;
		pub->tdeg = c->tdeg;
		pub->lfound = c->lfound;
		pub->lovf = 1;
		if (fl) {
			if (!lm)
				fl[0] = c->nfl > cap ? cap + 1 : (u32)c->nfl;
			pub->lovf = !lm && c->nfl > cap;
		}
		kgpu_counters_clear(c);
		__threadfence_system();
	}
}

// A search's start, one pass: FRONT and OWNVIS (nbw words) and ROWVIS (roww
// words) cleared; PL = KBFS_NONE on every row with a CSR entry (the others
// never leave KBFS_NONE but for a root, cleared by k_reset_root); the
// counters zeroed.
__global__ void k_reset(u64 *__restrict__ front, u64 *__restrict__ ownvis, u64 nbw, u64 *__restrict__ rowvis, u64 roww,
			const u64 *__restrict__ empty, u64 *__restrict__ pl, u64 nrows, kgpu_counters *cnt)
{
	const u64 t0 = blockIdx.x * (u64)blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
	for (u64 w = t0; w < nbw; w += stride) {
		front[w] = 0;
		ownvis[w] = 0;
	}
	for (u64 w = t0; w < roww; w += stride)
		rowvis[w] = 0;
	for (u64 r = t0; r < nrows; r += stride) // nrows 0: PL is cleared by k_finish
		if (!((empty[r >> 6] >> (r & 63)) & 1))
			pl[r] = KBFS_NONE;
	if (t0 == 0)
		*cnt = kgpu_counters{};
}

// One-column grids (ROWVIS holds exactly the rows this rank reached): PL =
// KBFS_NONE on the rows with edges that were not reached, after a search
// whose reset left PL as the last search wrote it.
__global__ void k_finish(const u64 *__restrict__ rowvis, const u64 *__restrict__ empty, u64 *__restrict__ pl, u64 roww)
{
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < roww; w += (u64)gridDim.x * blockDim.x)
		for (u64 m = ~(rowvis[w] | empty[w]); m; m &= m - 1)
			pl[w * 64 + (__ffsll((long long)m) - 1)] = KBFS_NONE;
}

// KBFS_CUDA_PRED_FINISH: the owned vertices no search reaches, as bits (nbw
// words): those without a tuple (tdeg 0) and the positions past nb.
template <typename Deg> __global__ void k_own_empty(const Deg *__restrict__ tdeg, u64 nb, u64 nbw, u64 *__restrict__ out)
{
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < nbw; w += (u64)gridDim.x * blockDim.x) {
		u64 e = 0;
		for (int b = 0; b < 64; b++) {
			const u64 v = w * 64 + (u64)b;
			if (v >= nb || tdeg[v] == 0)
				e |= 1ull << b;
		}
		out[w] = e;
	}
}

// KBFS_CUDA_PRED_FINISH on a grid of several columns over the peer transport:
// after the levels, PRED = KBFS_NONE on the owned vertices not reached (the
// update wrote every reached one's entry), but for those that no search
// reaches (oempty), which no search wrote since PRED was last cleared whole;
// and on the last search's root (stale), written by it whatever its degree,
// unless this search reached it.
__global__ void k_pred_finish(const u64 *__restrict__ ownvis, const u64 *__restrict__ oempty, u64 *__restrict__ pred,
			      u64 nbw, u64 stale)
{
	const u64 t0 = blockIdx.x * (u64)blockDim.x + threadIdx.x;
	for (u64 w = t0; w < nbw; w += (u64)gridDim.x * blockDim.x)
		for (u64 m = ~(ownvis[w] | oempty[w]); m; m &= m - 1)
			pred[w * 64 + (__ffsll((long long)m) - 1)] = KBFS_NONE;
	if (t0 == 0 && stale != KBFS_NONE && !((ownvis[stale >> 6] >> (stale & 63)) & 1))
		pred[stale] = KBFS_NONE;
}

// The root: owner marks FRONT and OWNVIS; its processor row marks the local
// row in ROWVIS with PL = (0, root).
__global__ void k_reset_root(u64 *front, u64 *ownvis, u64 *rowvis, u64 *pl, int owner, u64 own_off, int inrow,
			     u64 lrow, u64 packed, u64 prev_lrow, u32 *fl)
{
	if (fl) { // td_lists: FRONT's one nonzero word
		fl[0] = owner;
		fl[1] = (u32)(own_off >> 6);
	}
	if (prev_lrow != KBFS_NONE)
		pl[prev_lrow] = KBFS_NONE; // the last root's row, perhaps one without edges
	if (owner) {
		front[own_off >> 6] |= 1ull << (own_off & 63);
		ownvis[own_off >> 6] |= 1ull << (own_off & 63);
	}
	if (inrow) {
		rowvis[lrow >> 6] |= 1ull << (lrow & 63);
		pl[lrow] = packed;
	}
}

// KBFS_CUDA_SPIN_US: the GPU busy for ns nanoseconds (one thread)
__global__ void k_spin(u64 ns)
{
	const u64 t0 = kgpu_gtime();
	while (kgpu_gtime() - t0 < ns)
		;
}

// empty[w] bit b: local row 64w + b has no CSR entry.
template <typename Off> __global__ void k_empty_rows(const Off *__restrict__ rowptr, u64 *__restrict__ empty, u64 nw)
{
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < nw; w += (u64)gridDim.x * blockDim.x) {
		u64 m = 0;
		for (int b = 0; b < 64; b++)
			m |= (u64)(rowptr[w * 64 + b] == rowptr[w * 64 + b + 1]) << b;
		empty[w] = m;
	}
}

// u64 offsets to u32 on the device (set-up only; nnz < 2^32 checked).
__global__ void k_narrow(const u64 *__restrict__ in, u32 *__restrict__ out, u64 n)
{
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x)
		out[k] = (u32)in[k];
}

// ---- set-up ---------------------------------------------------------------------

// u64 arrays of the block (offsets, tdeg) into a device slot, as they are
// or narrowed to u32 through a bounded device staging area (WRECV, not in
// use yet, or a temporary when it is too small).
static void upload_u64(kgpu_state *st, void *dst, const u64 *src, u64 n, int wide)
{
	if (wide) {
		kgpu_copy_staged(dst, src, n * 8, cudaMemcpyHostToDevice, st->s);
		return;
	}
	u64 stage_n = st->slot_bytes[KS_BUF0 + KBFS_WRECV] / 8;
	u64 *stage = (u64 *)st->slot[KS_BUF0 + KBFS_WRECV];
	if (stage_n < (1u << 20)) {
		stage_n = n < (1u << 20) ? n : (1u << 20);
		CUDA_CHECK(cudaMalloc((void **)&stage, stage_n * 8 + 8));
	}
	for (u64 k = 0; k < n; k += stage_n) {
		u64 m = n - k < stage_n ? n - k : stage_n;
		CUDA_CHECK(cudaMemcpyAsync(stage, src + k, m * 8, cudaMemcpyHostToDevice, st->s));
		k_narrow<<<kgpu_blocks(m, 256, st->grid), 256, 0, st->s>>>(stage, (u32 *)dst + k, m);
		KGPU_LAUNCHED("k_narrow");
		CUDA_CHECK(cudaStreamSynchronize(st->s));
	}
	if (stage != (u64 *)st->slot[KS_BUF0 + KBFS_WRECV])
		CUDA_CHECK(cudaFree(stage));
}

// Buffers that are another buffer's memory on this grid (kgpu_geom).
static int alias_of(const kgpu_geom *g, int slot)
{
	if (slot == KS_COLIDX && g->sym)
		return KS_ROWIDX;
	if (slot == KS_ROWPTR && g->sym)
		return KS_COLPTR;
	if (slot == KS_BUF0 + KBFS_PRED && g->pred_alias)
		return KS_BUF0 + KBFS_PL;
	if (slot == KS_BUF0 + KBFS_COLFRONT && g->colfront_alias)
		return KS_BUF0 + KBFS_FRONT;
	if (slot == KS_BUF0 + KBFS_RECV && g->recv_alias)
		return KS_BUF0 + KBFS_ROWNEXT;
	if (slot == KS_VOWN && g->R == 1) // the column's levels are mine
		return KS_VLEV;
	if (slot == KS_VROW && g->C == 1) // the row segment is my block
		return KS_BUF0 + KBFS_PRED;
	return -1;
}

static void free_all(kgpu_state *st)
{
	kgpu_trace_end(); // before the stream goes
	for (int k = 0; k < KS_NSLOT; k++)
		if (alias_of(&st->g, k) >= 0)
			st->slot[k] = NULL; // another slot's memory, freed as that one
	for (int k = 0; k < KS_NSLOT; k++)
		if (st->slot[k]) {
			CUDA_CHECK(cudaFree(st->slot[k]));
			st->slot[k] = NULL;
		}
	if (st->hcnt)
		CUDA_CHECK(cudaFreeHost(st->hcnt));
	if (st->hpub)
		CUDA_CHECK(cudaFreeHost(st->hpub));
	st->hpub = st->dpub = NULL;
	if (st->hsegstat)
		CUDA_CHECK(cudaFreeHost(st->hsegstat));
	if (st->hform)
		CUDA_CHECK(cudaFreeHost(st->hform));
	if (st->huseg)
		CUDA_CHECK(cudaFreeHost(st->huseg));
	if (st->hvout)
		CUDA_CHECK(cudaFreeHost(st->hvout));
	st->hvout = NULL;
	if (st->hloop)
		CUDA_CHECK(cudaFreeHost(st->hloop));
	st->hloop = NULL;
	st->hcnt = NULL;
	st->hsegstat = NULL;
	st->hform = NULL;
	st->huseg = NULL;
	if (st->s) {
		CUDA_CHECK(cudaStreamDestroy(st->s));
		CUDA_CHECK(cudaEventDestroy(st->useg_done));
		for (int k = 0; k < KBFS_NMARK; k++)
			CUDA_CHECK(cudaEventDestroy(st->mark[k]));
		st->s = 0;
	}
}

static int setup(kbfs_engine *e, const kpart_block *b, const kbfs_engine_conf *conf)
{
	kgpu_state *st = kgpu_state_of(e);
	int rc = kgpu_bind(&st->o);
	if (rc)
		return rc;
	if (!b->colptr || !b->rowptr || (b->nnz && !b->rowidx) || !b->tdeg)
		KBUG("cuda setup: block without arrays");
	st->b = b;
	kgpu_geom_init(&st->g, b, conf, &st->o);
	kgpu_plan_t plan;
	kgpu_plan_fill(&st->g, &plan);
	kgpu_mem_info(&plan.free_bytes, &plan.total_bytes);

	// What every rank on this GPU needs; measured before anyone allocates
	// (the allgather is the barrier).
	kcomm *world = kcomm_world();
	int size = kcomm_size(world);
	u64 mine[2] = {kgpu_gpu_key(), plan.total}, needed = plan.total;
	if (size > 1) {
		u64 *all = (u64 *)kcalloc((size_t)size * 2, sizeof *all);
		kcomm_allgather(world, mine, sizeof mine, all);
		needed = 0;
		for (int r = 0; r < size; r++)
			if (all[2 * r] == mine[0])
				needed += all[2 * r + 1];
		free(all);
	}
	rc = kgpu_plan_check(&plan, needed);
	rc = kcomm_agree(world, rc);
	if (rc)
		return rc;

	CUDA_CHECK(cudaStreamCreateWithFlags(&st->s, cudaStreamNonBlocking));
	kgpu_trace_begin(st->s);
	CUDA_CHECK(cudaEventCreateWithFlags(&st->useg_done, cudaEventDisableTiming));
	for (int k = 0; k < KBFS_NMARK; k++)
		CUDA_CHECK(cudaEventCreate(&st->mark[k]));
	st->grid = kgpu_sm_count() * 8;
	for (int k = 0; k < KS_NSLOT; k++) {
		if (alias_of(&st->g, k) >= 0)
			continue; // set below
		cudaError_t err = cudaMalloc(&st->slot[k], plan.a[k].bytes ? plan.a[k].bytes : 256);
		if (err != cudaSuccess) {
			cudaGetLastError();
			st->slot[k] = NULL;
			kerror("cuda: cannot allocate '%s' (%llu bytes) on GPU %d (%s): use more ranks or a larger grid",
			       plan.a[k].name, (ull)plan.a[k].bytes, kgpu_current_gpu(), cudaGetErrorString(err));
			free_all(st);
			return KEXIT_RESOURCE;
		}
		st->slot_bytes[k] = plan.a[k].bytes;
	}
	for (int k = 0; k < KS_NSLOT; k++)
		if (alias_of(&st->g, k) >= 0)
			st->slot[k] = st->slot[alias_of(&st->g, k)];
	st->cub_bytes = plan.a[KS_CUB].bytes;
	st->cnt = (kgpu_counters *)st->slot[KS_CNT];
	// one rank: this engine's update keeps the frontier's list (the peer
	// transport takes over on one-column grids, kgpu_peer_setup)
	st->lcap = st->o.list_cap ? st->o.list_cap : (u32)KGPU_LIST_CAP;
	st->lists = st->o.td_lists && st->g.R == 1 && st->g.C == 1 && st->g.nbw < (1ull << 32) ? 1 : 0;
	st->llist = (const u32 *)st->slot[KS_FLIST] + 1;
	st->lcnt = (const u32 *)st->slot[KS_FLIST];
	st->lnseg = 1;
	st->lseg = st->g.nbw;
	CUDA_CHECK(cudaMallocHost((void **)&st->hcnt, sizeof *st->hcnt));
	CUDA_CHECK(cudaHostAlloc((void **)&st->hpub, sizeof *st->hpub, cudaHostAllocMapped));
	CUDA_CHECK(cudaHostGetDevicePointer((void **)&st->dpub, st->hpub, 0));
	memset(st->hpub, 0, sizeof *st->hpub);
	st->last_mark = -1;
	CUDA_CHECK(cudaMallocHost((void **)&st->hsegstat, st->g.nseg * sizeof *st->hsegstat));
	CUDA_CHECK(cudaMallocHost((void **)&st->hform, st->g.nseg * sizeof *st->hform));
	CUDA_CHECK(cudaMallocHost((void **)&st->huseg, st->g.nseg * sizeof *st->huseg));
	CUDA_CHECK(cudaMallocHost(&st->hvout, kgpu_valid_out_bytes()));
	// every scratch slot starts defined (sanitizer initcheck, deterministic
	// scans); the graph slots are written whole below, and every copy and
	// kernel of the set-up runs on the engine's stream, in order.
	for (int k = KS_TDEG + 1; k < KS_NSLOT; k++)
		if (st->slot_bytes[k])
			CUDA_CHECK(cudaMemsetAsync(st->slot[k], k == KS_BUF0 + KBFS_PL ? 0xff : 0, st->slot_bytes[k], st->s));
	st->prev_root_row = KBFS_NONE; // PL is all KBFS_NONE: reset() clears only rows a search can reach
	CUDA_CHECK(cudaStreamSynchronize(st->s));

	double t0 = ktime();
	const u64 iw = st->g.idx64 ? 8 : 4;
	// a 1x1 block the host already took as symmetric (kpart_block_csr: its
	// colidx is rowidx) is not checked again
	const int checked = b->colidx && b->colidx == b->rowidx;
	if (st->g.sym && !checked && memcmp(b->rowptr, b->colptr, (st->g.nrows + 1) * 8)) {
		kerror("cuda: rank %d: a 1x1 block whose row offsets differ from its column offsets is not symmetric "
		       "(corrupt rank file)", st->g.rank);
		free_all(st);
		return KEXIT_DATA;
	}
	upload_u64(st, st->slot[KS_COLPTR], b->colptr, st->g.ncols + 1, st->g.off64);
	if (!st->g.sym)
		upload_u64(st, st->slot[KS_ROWPTR], b->rowptr, st->g.nrows + 1, st->g.off64);
	upload_u64(st, st->slot[KS_TDEG], b->tdeg, st->g.nb, st->g.tdeg64);
	// on the engine's stream, finished when they return (staged through
	// pinned buffers when large): the kernels below come after them
	kgpu_copy_staged(st->slot[KS_ROWIDX], b->rowidx, b->nnz * iw, cudaMemcpyHostToDevice, st->s);
	// the CSR's column indices: the CSC's own on a symmetric block (checked
	// so), else made here from the CSC (kbfs's default), or copied where the
	// host made them (KBFS_CUDA_CSR_DEVICE=0)
	if (st->g.sym)
		rc = checked ? 0 : kgpu_sym_check(st);
	else if (b->colidx)
		kgpu_copy_staged(st->slot[KS_COLIDX], b->colidx, b->nnz * iw, cudaMemcpyHostToDevice, st->s);
	else
		rc = kgpu_csr_build(st);
	if (rc) {
		free_all(st);
		return rc;
	}
	const int eb = kgpu_blocks(st->g.roww, 256, st->grid);
	if (st->g.off64)
		k_empty_rows<u64><<<eb, 256, 0, st->s>>>((const u64 *)st->slot[KS_ROWPTR], (u64 *)st->slot[KS_EMPTY],
							 st->g.roww);
	else
		k_empty_rows<u32><<<eb, 256, 0, st->s>>>((const u32 *)st->slot[KS_ROWPTR], (u64 *)st->slot[KS_EMPTY],
							 st->g.roww);
	KGPU_LAUNCHED("k_empty_rows");
	if (st->g.pred_finish) {
		const int ob = kgpu_blocks(st->g.nbw, 256, st->grid);
		if (st->g.tdeg64)
			k_own_empty<u64><<<ob, 256, 0, st->s>>>((const u64 *)st->slot[KS_TDEG], st->g.nb, st->g.nbw,
								(u64 *)st->slot[KS_OEMPTY]);
		else
			k_own_empty<u32><<<ob, 256, 0, st->s>>>((const u32 *)st->slot[KS_TDEG], st->g.nb, st->g.nbw,
								(u64 *)st->slot[KS_OEMPTY]);
		KGPU_LAUNCHED("k_own_empty");
	}
	st->pred_dirty = 1; // the set-up zeroed PRED: the first reset() clears it
	st->prev_root_own = KBFS_NONE;
	if (st->g.bu_first)
		kgpu_first_build(st);
	kgpu_valid_setup(st);
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	kinfo("cuda: GPU %d: %.2f GiB in device memory (%.2f bytes per directed edge, %s offsets, %s indices), "
	      "partition copied in %.3f s (column indices %s); kernel %s, bottom-up %s%s, %s", kgpu_current_gpu(),
	      (plan.total - plan.reserve) / 1073741824.0, plan.bytes_per_edge, st->g.off64 ? "u64" : "u32",
	      st->g.idx64 ? "u64" : "u32", ktime() - t0,
	      st->g.sym ? "the CSC's: the block is symmetric" : b->colidx ? "copied from the host" : "made on the GPU",
	      kgpu_kernel_name(st->o.kernel),
	      kgpu_bu_kernel_name(st->o.bu_kernel), st->g.bu_first ? " with first probes" : "",
	      st->o.step_sync ? "a wait after every step" : "one wait a level");
	return 0;
}

static void teardown(kbfs_engine *e)
{
	kgpu_state *st = kgpu_state_of(e);
	if (!st)
		return;
	if (st->s)
		CUDA_CHECK(cudaStreamSynchronize(st->s));
	free_all(st);
	free(st);
	e->impl = NULL;
}

static void *buf(kbfs_engine *e, enum kbfs_buf which)
{
	KASSERT(which >= 0 && which < KBFS_NBUF);
	return kgpu_state_of(e)->slot[KS_BUF0 + which];
}

// ---- the search -------------------------------------------------------------------

static void reset(kbfs_engine *e, uint64_t root)
{
	kgpu_state *st = kgpu_state_of(e);
	const kpart_grid *g = &st->b->g;
	KASSERT(root < g->N);
	st->root = root;
	const cudaStream_t s = kgpu_queue(st);
	// RECV, COLFRONT, XRECV and ROWNEXT are written whole before they are
	// read; on one-column grids PL is put right by finish() instead
	const u64 plrows = st->g.C == 1 || st->pl_keep ? 0 : st->g.nrows;
	k_reset<<<kgpu_blocks(plrows > st->g.roww ? plrows : st->g.roww, 256, st->grid), 256, 0, s>>>(
		kgpu_buf(st, KBFS_FRONT), kgpu_buf(st, KBFS_OWNVIS), st->g.nbw, kgpu_buf(st, KBFS_ROWVIS), st->g.roww,
		(const u64 *)st->slot[KS_EMPTY], kgpu_buf(st, KBFS_PL), plrows, st->cnt);
	KGPU_LAUNCHED("k_reset");
	// PRED cleared whole, or (pred_finish) only when it holds entries no
	// search wrote: the peer transport's searches put their unreached
	// entries right in finish(), the others' row reduction writes it all
	if (!st->g.pred_alias && (!st->g.pred_finish || st->pred_dirty)) {
		CUDA_CHECK(cudaMemsetAsync(kgpu_buf(st, KBFS_PRED), 0xff, st->g.nb * 8, s));
		st->pred_dirty = 0;
	}
	int owner = kpart_owner(g, root) == st->g.rank;
	int inrow = kpart_owner_row(g, root) == st->g.i;
	k_reset_root<<<1, 1, 0, s>>>(kgpu_buf(st, KBFS_FRONT), kgpu_buf(st, KBFS_OWNVIS), kgpu_buf(st, KBFS_ROWVIS),
				     kgpu_buf(st, KBFS_PL), owner, owner ? root - st->g.own_first : 0, inrow,
				     inrow ? kpart_local_row(g, root) : 0, kbfs_packed(0, root), st->prev_root_row,
				     st->lists == 1 ? (u32 *)st->slot[KS_FLIST] : nullptr);
	st->list_ok = st->lists != 0; // the peer transport's start lists the root's word (kgpu_peer_start)
	st->last_tdeg = ~0ull;
	st->lvl_list = 0;
	KGPU_LAUNCHED("k_reset_root");
	st->prev_root_row = inrow ? kpart_local_row(g, root) : KBFS_NONE;
}

static void finish(kbfs_engine *e)
{
	kgpu_state *st = kgpu_state_of(e);
	kgpu_trace_flush();
	if (st->g.C != 1) {
		// reset() cleared PL (ROWVIS also holds rows other ranks reached);
		// with pred_finish over the peer transport, PRED's unreached entries
		if (st->g.pred_finish && st->pl_keep) {
			k_pred_finish<<<kgpu_blocks(st->g.nbw, 256, st->grid), 256, 0, kgpu_queue(st)>>>(
				kgpu_buf(st, KBFS_OWNVIS), (const u64 *)st->slot[KS_OEMPTY], kgpu_buf(st, KBFS_PRED),
				st->g.nbw, st->prev_root_own);
			KGPU_LAUNCHED("k_pred_finish");
			const kpart_grid *g = &st->b->g;
			st->prev_root_own =
				kpart_owner(g, st->root) == st->g.rank ? st->root - st->g.own_first : KBFS_NONE;
		}
		return;
	}
	k_finish<<<kgpu_blocks(st->g.roww, 256, st->grid), 256, 0, kgpu_queue(st)>>>(
		kgpu_buf(st, KBFS_ROWVIS), (const u64 *)st->slot[KS_EMPTY], kgpu_buf(st, KBFS_PL), st->g.roww);
	KGPU_LAUNCHED("k_finish");
}

void kgpu_counters_read(kgpu_state *st, kgpu_counters *out)
{
	CUDA_CHECK(cudaMemcpyAsync(st->hcnt, st->cnt, sizeof *st->cnt, cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	*out = *st->hcnt;
	CUDA_CHECK(cudaMemsetAsync(st->cnt, 0, sizeof *st->cnt, st->s));
}

static void top_down(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *out)
{
	KASSERT(level >= 1 && level <= KBFS_MAX_LEVEL);
	kgpu_state_of(e)->enq++;
	kgpu_top_down(kgpu_state_of(e), level, nf, out);
}

static int td_run(kbfs_engine *e, uint64_t level, uint64_t nf, uint64_t mu, double alpha, int max, kbfs_lrec *rec)
{
	KASSERT(level >= 1 && level + (uint64_t)max - 1 <= KBFS_MAX_LEVEL);
	return kgpu_td_loop(kgpu_state_of(e), level, nf, mu, alpha, max, rec);
}

static void bottom_up(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *out)
{
	KASSERT(level >= 1 && level <= KBFS_MAX_LEVEL);
	kgpu_state_of(e)->enq++;
	kgpu_state_of(e)->lvl_list = 0;
	kgpu_bottom_up(kgpu_state_of(e), level, nf, out);
}

static void bu_substep(kbfs_engine *e, uint64_t level, uint64_t nf, int seg, const void *ring, kbfs_step *out)
{
	(void)nf;
	KASSERT(level >= 1 && level <= KBFS_MAX_LEVEL);
	kgpu_state_of(e)->enq++;
	kgpu_state_of(e)->lvl_list = 0;
	kgpu_bu_substep(kgpu_state_of(e), level, seg, ring, out);
}

static void update(kbfs_engine *e, kbfs_step *out)
{
	kgpu_state *st = kgpu_state_of(e);
	const cudaStream_t s = kgpu_queue(st);
	const int nbk = kgpu_blocks((st->g.nbw + 31) / 32, 256 / 32, st->grid);
	const u32 *rl = (const u32 *)st->slot[KS_RLIST];
	u32 *fl = st->lists == 1 ? (u32 *)st->slot[KS_FLIST] : nullptr;
	if (st->g.tdeg64)
		k_update<u64><<<nbk, 256, 0, s>>>(kgpu_buf(st, KBFS_RECV), kgpu_buf(st, KBFS_OWNVIS),
						 kgpu_buf(st, KBFS_FRONT), (const u64 *)st->slot[KS_TDEG], st->g.nbw,
						 st->cnt, st->dpub, rl, fl, st->lvl_list, st->lcap, st->o.tdeg_batch);
	else
		k_update<u32><<<nbk, 256, 0, s>>>(kgpu_buf(st, KBFS_RECV), kgpu_buf(st, KBFS_OWNVIS),
						 kgpu_buf(st, KBFS_FRONT), (const u32 *)st->slot[KS_TDEG], st->g.nbw,
						 st->cnt, st->dpub, rl, fl, st->lvl_list, st->lcap, st->o.tdeg_batch);
	KGPU_LAUNCHED("k_update");
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	const volatile kgpu_counters *c = st->hpub;
	out->found = c->found;
	out->examined = c->examined; // the local step's, unless it read them itself (step_sync)
	out->tdeg = c->tdeg;
	st->list_ok = st->lists == 1 && !c->lovf;
	st->last_tdeg = c->tdeg;
	st->lvl_list = 0;
}

static void pack(kbfs_engine *e, enum kbfs_buf src, size_t nseg, enum kbfs_xmode mode, int compress, kbfs_desc *desc)
{
	kgpu_state_of(e)->enq++;
	kgpu_pack(kgpu_state_of(e), src, nseg, mode, compress, desc);
}

static void unpack(kbfs_engine *e, enum kbfs_buf wire, size_t stride, size_t nseg, const kbfs_desc *desc,
		   enum kbfs_buf dst, enum kbfs_merge merge)
{
	kgpu_state_of(e)->enq++;
	kgpu_unpack(kgpu_state_of(e), wire, stride, nseg, desc, dst, merge);
}

static void sync(kbfs_engine *e) { CUDA_CHECK(cudaStreamSynchronize(kgpu_state_of(e)->s)); }

static void mark(kbfs_engine *e, int k)
{
	KASSERT(k >= 0 && k < KBFS_NMARK);
	kgpu_state *st = kgpu_state_of(e);
	if (st->o.spin_us && k % KBFS_MARKS_LEVEL == 0) {
		// a level's start: the GPU spins while the host queues the level
		k_spin<<<1, 1, 0, kgpu_queue(st)>>>((u64)st->o.spin_us * 1000);
		KGPU_LAUNCHED("k_spin");
	}
	if (st->o.no_marks)
		return; // elapsed() reads 0 for every point
	// nothing queued since the last recorded point (earlier in the ring):
	// this point is that one, and no event is recorded
	if (st->enq == st->enq_marked && st->last_mark >= 0 && st->last_mark < k) {
		st->mark_of[k] = st->mark_of[st->last_mark];
		return;
	}
	CUDA_CHECK(cudaEventRecord(st->mark[k], st->s));
	st->mark_of[k] = k;
	st->last_mark = k;
	st->enq_marked = st->enq;
}

static double elapsed(kbfs_engine *e, int a, int b)
{
	KASSERT(a >= 0 && a < KBFS_NMARK && b >= 0 && b < KBFS_NMARK);
	kgpu_state *st = kgpu_state_of(e);
	if (st->o.no_marks || st->mark_of[a] == st->mark_of[b])
		return 0;
	float ms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&ms, st->mark[st->mark_of[a]], st->mark[st->mark_of[b]]));
	return ms / 1e3;
}

static void to_host(kbfs_engine *e, void *host, const void *src, size_t bytes)
{
	kgpu_state *st = kgpu_state_of(e);
	if (!bytes)
		return;
	CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, kgpu_queue(st)));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
}

// dst within PRED (its bytes now no search's: pred_finish's next reset
// clears it whole)
static void pred_written(kgpu_state *st, const void *dst)
{
	const char *p = (const char *)kgpu_buf(st, KBFS_PRED), *d = (const char *)dst;
	if (!st->g.pred_alias && d >= p && d < p + st->g.nb * 8)
		st->pred_dirty = 1;
}

static void to_device(kbfs_engine *e, void *dst, const void *host, size_t bytes)
{
	kgpu_state *st = kgpu_state_of(e);
	if (!bytes)
		return;
	pred_written(st, dst);
	CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, kgpu_queue(st)));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
}

static void *tree_buf(kbfs_engine *e, enum kbfs_axis axis)
{
	KASSERT(axis == KBFS_COL || axis == KBFS_ROW);
	return kgpu_state_of(e)->slot[axis == KBFS_COL ? KS_VLEV : KS_VROW];
}

static void tree_pack(kbfs_engine *e, void **src, size_t *bytes)
{
	kgpu_tree_pack(kgpu_state_of(e), src, bytes);
}

static void tree_check(kbfs_engine *e, uint64_t root, uint64_t out[3])
{
	kgpu_tree_check(kgpu_state_of(e), root, out);
}

static void copy(kbfs_engine *e, void *dst, const void *src, size_t bytes)
{
	if (!bytes || dst == src)
		return;
	pred_written(kgpu_state_of(e), dst);
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, kgpu_queue(kgpu_state_of(e))));
}

extern "C" int kgpu_engine_cuda(kbfs_engine *e, const kgpu_opts *o)
{
	kgpu_opts d;
	kgpu_opts_default(&d);
	if (!o)
		o = &d;
	if (o->kernel < 0 || o->kernel >= KGPU_K_COUNT) {
		kerror("unknown --kernel %d (want one of %s)", o->kernel, kgpu_kernel_names());
		return KEXIT_USAGE;
	}
	if (o->vbfs_k < 1 || o->vbfs_k > (1 << 20)) {
		kerror("--vbfs-k %d out of range (1 to 1048576)", o->vbfs_k);
		return KEXIT_USAGE;
	}
	if (o->bu_split < 0 || o->bu_split > (1 << 20)) {
		kerror("bottom-up split %d out of range (0 to 1048576)", o->bu_split);
		return KEXIT_USAGE;
	}
	if (o->bu_batch != 1 && o->bu_batch != 2 && o->bu_batch != 4 && o->bu_batch != 8) {
		kerror("--bu-batch %d: want 1, 2, 4 or 8", o->bu_batch);
		return KEXIT_USAGE;
	}
	if (o->bu_rows != 1 && o->bu_rows != 2) {
		kerror("--bu-rows %d: want 1 or 2", o->bu_rows);
		return KEXIT_USAGE;
	}
	if (o->bu_kernel < 0 || o->bu_kernel >= KGPU_BU_COUNT) {
		kerror("unknown --bu-kernel %d (want tile or word)", o->bu_kernel);
		return KEXIT_USAGE;
	}
	memset(e, 0, sizeof *e);
	kgpu_state *st = (kgpu_state *)kcalloc(1, sizeof *st);
	st->o = *o;
	e->name = "cuda";
	e->device_memory = 1;
	e->impl = st;
	e->setup = setup;
	e->teardown = teardown;
	e->buf = buf;
	e->reset = reset;
	e->top_down = top_down;
	e->bottom_up = bottom_up;
	e->bu_substep = bu_substep;
	e->update = update;
	if (st->o.td_loop)
		e->td_run = td_run;
	e->pack = pack;
	e->unpack = unpack;
	e->sync = sync;
	e->finish = finish;
	e->mark = mark;
	e->elapsed = elapsed;
	e->to_host = to_host;
	e->to_device = to_device;
	e->copy = copy;
	if (o->validate) {
		e->tree_pack = tree_pack;
		e->tree_buf = tree_buf;
		e->tree_check = tree_check;
	}
	return 0;
}

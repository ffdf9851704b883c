// kgpu_peer: device-resident levels between the GPUs of one host (kengine.h
// lv_*), the exchanges of the level loop as stores into the other GPUs'
// memory, ordered by flags; nothing crosses to the host but the level's
// counters, once.
//
// Set-up (collective): usable when every rank of the job sits on one host,
// each on a GPU of its own, and each GPU can reach the memory of the GPUs
// it exchanges with (cudaDeviceCanAccessPeer).  Every rank then exports
// its window (flags and counters), both COLFRONT buffers, XRECV, ROWVIS,
// WONIN, PARW and RING through CUDA IPC handles (allgathered over MPI) and maps
// those of its column, row and world peers.
//
// A level at P(i,j) (R x C grid, nbw words a segment):
//   local step  the engine's kernels, reading COLFRONT[q'] (q' the parity
//               of the level that sent it) and ROWVIS, writing ROWNEXT;
//               with --bu-substeps a bottom-up level's C sub-steps, one
//               row segment each, between which the segment's ROWVIS words
//               go to the left row neighbour's RING slot (k_ring_give, a
//               flag) and are ORed into its ROWVIS (k_ring_take);
//   fold        every nonzero word of ROWNEXT's segment m (m != j) is
//               stored into XRECV segment j of P(i,m); then the fold flag;
//   update      after the row's fold flags: per owned word, the segments
//               from its own (ROWNEXT, m = j) on along the row (j+1, ...;
//               KBFS_PEER_WON=lowest: m = 0, 1, ...), each word's newly
//               reached bits credited to the first segment that holds them
//               (WON, the finder whose PL has the parent: the owner itself
//               whenever it found the row too, whose parent then does not
//               travel after the search), new = union &
//               ~OWNVIS, OWNVIS |= new, the level into PRED's high bits;
//               XRECV's words are cleared as they are read.  Then the
//               next level's expand: new goes to COLFRONT[q] segment i of
//               every P(r,j), but only the words that differ from what that
//               buffer holds (FRONT of two levels ago, kept in FRONTB[q]),
//               and, with sv, OWNVIS's changed words to ROWVIS segment j of
//               every P(i,m).  The last block sends every rank its counters
//               and the round flag;
//   wait        the last block of the update waits for every rank's round
//               flag and sums the counters into mapped host memory, which
//               the host polls: its one wait a level.
// COLFRONT is double-buffered by level parity, so the next level's expand
// can leave while a peer still reads this level's.  Why the other buffers
// are safe to write: every rank passes a round only when all have finished
// the level before, and a fold is sent only after its sender's local step,
// whose start needs every rank's previous round (the same argument for
// XRECV, ROWVIS, the counters, which are double-buffered by round parity).
//
// After the last level (C > 1; kgpu_peer_pred.cu): each owner sends finder m the rows of its
// segment that m is credited with (WON -> WONIN of m); m writes the
// parents of those rows, in bit order, as local column indices into the
// owner's PARW; the owner decodes them into PRED through the same prefix
// counts (a CUB scan of per-tile popcounts on both sides).  PL is never
// reset: only rows found in this search are read.
//
// Every wait gives up after KBFS_PEER_TIMEOUT seconds (default 120): the
// host then names the rank that did not answer and ends the job.
// KBFS_PEER_TRACE=1 times the predecessor step's kernels and stamps each
// level's update (a line each a search).
#include "kgpu_peer_update.cuh"

#include <stdlib.h>
#include <string.h>

#include "knum.h"

namespace {

// ---- the start of a search: the root's frontier to the column -------------------

__global__ void __launch_bounds__(PB) k_start(peer_dev d, const u64 *__restrict__ front, u64 *__restrict__ frontb,
					      u64 *__restrict__ pred, int owner, u64 root_off, u64 root_packed, u64 round,
					      volatile u64 *hsum)
{
	if (d.lists && blockIdx.x == 0 && threadIdx.x < d.R) { // FRONTB[0]'s one nonzero word, or none
		peer_win *w = d.win[d.colrank[threadIdx.x]];
		w->clist[0][d.i][0] = (u32)(root_off >> 6);
		w->ccount[0][d.i] = owner;
	}
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < d.nbw; w += (u64)gridDim.x * blockDim.x) {
		const u64 n = front[w], o = frontb[w];
		if (d.dense || n != o) {
			frontb[w] = n;
			for (int r = 0; r < d.R; r++)
				if (d.colf[0][r] != frontb)
					d.colf[0][r][(u64)d.i * d.nbw + w] = n;
		}
	}
	if (pred && blockIdx.x == 0 && threadIdx.x == 0)
		pred[root_off] = root_packed;
	if (last_block(d)) {
		raise_flags(d, PK_ROUND, 0, round);
		finish_round(d, round, 0, hsum);
	}
}

// ---- fold: ROWNEXT's segments to their owners --------------------------------------

__global__ void __launch_bounds__(PB) k_fold(peer_dev d, const u64 *__restrict__ rownext, u64 round)
{
	ull bytes = 0;
	const u64 nw = (u64)d.C * d.nbw;
	for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; t < nw; t += (u64)gridDim.x * blockDim.x) {
		const int m = (int)(t / d.nbw);
		if (m == d.j)
			continue;
		const u64 b = rownext[t];
		if (d.dense || b) {
			d.xrecv[m][(u64)d.j * d.nbw + (t - (u64)m * d.nbw)] = b;
			bytes += 8;
		}
	}
	block_add(&d.lvc[1], bytes);
	if (last_block(d))
		raise_flags(d, PK_FOLD, 1, round);
}

// ---- update: merge, owner update, next expand, shared visited, counters ---------

template <typename T>
__global__ void __launch_bounds__(PB) k_update(peer_dev d, u64 level, u64 *__restrict__ rownext,
					       u64 *__restrict__ xrecv, u64 *__restrict__ ownvis, u64 *__restrict__ frontb,
					       u64 *__restrict__ won, u64 *__restrict__ pred, const u64 *__restrict__ pl,
					       const T *__restrict__ tdeg,
					       kgpu_counters *cnt, u64 fold_round, u64 round, u64 examined,
					       volatile u64 *hsum, const u32 *__restrict__ rl, int listlevel)
{
	if (d.ust && threadIdx.x == 0) // the first block to start
		atomicMin((ull *)&ust_row(d, level)[US_START], (ull)kgpu_gtime());
	if (d.C > 1)
		wait_peers(d, PK_FOLD, 1, fold_round);
	const int q = (int)(level & 1);
	ull found = 0, td = 0, be = 0, bs = 0;
	const bool lm = d.lists && listlevel && cnt->nwl <= d.lcap && d.win[d.me]->ccount[q][d.i] <= d.lcap;
	// FRONTB[q ^ 1] zeroed: its list, which the next update reads here as its
	// old words, is empty.  Only this rank's own window: a column peer may
	// still be expanding this level from the lists of parity q ^ 1 in its
	// window (nothing orders its local step before this update on a grid of
	// one column); every update rewrites its list everywhere anyway.
	if (d.clr_fb && d.lists && blockIdx.x == 0 && threadIdx.x == 0)
		d.win[d.me]->ccount[q ^ 1][d.i] = 0;
	if (lm) {
		// block 0 has the level's few words and finishes the round alone,
		// without a ticket (a block that starts after it is done still reads
		// lm true: nwl is then 0 and the new list's count <= nw)
		if (blockIdx.x != 0)
			return;
		peer_list_update(d, q, rownext, ownvis, frontb, tdeg, rl, (u32)cnt->nwl, found, td, be);
		for (u64 w = threadIdx.x; d.clr_fb && w < d.nbw; w += blockDim.x) // as peer_words does
			peer_clear_word(d, w);
	} else {
		peer_words(d, level, rownext, xrecv, ownvis, frontb, won, pred, pl, tdeg, cnt, found, td, be, bs);
	}
	kgpu_count(&cnt->found, found);
	kgpu_count(&cnt->tdeg, td);
	block_add(&d.lvc[0], be);
	block_add(&d.lvc[2], bs);
	if (lm ? only_block() : last_block(d))
		peer_round_end(d, cnt, examined, lm, q, round, hsum, nullptr, level);
}

// ---- bottom-up sub-steps: the ring along the processor row --------------------------

// Sub-step s's row segment seg of ROWVIS to the left neighbour's ring slot
// s, every word (visited rows are most of a bottom-up level's), then the
// ring flag.
__global__ void __launch_bounds__(PB) k_ring_give(peer_dev d, const u64 *__restrict__ rowvis, int s, int seg,
						 u64 round)
{
	u64 *dst = d.ring[(d.j + d.C - 1) % d.C] + (u64)s * d.nbw;
	const u64 *src = rowvis + (u64)seg * d.nbw;
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < d.nbw; w += (u64)gridDim.x * blockDim.x)
		dst[w] = src[w];
	if (last_block(d)) {
		if (threadIdx.x == 0)
			atomicAdd(&d.lvc[1], (ull)(d.nbw * 8));
		raise_flags(d, PK_RING, 1, round);
	}
}

// Before sub-step s: after the right neighbour's ring flag, ROWVIS's
// segment seg |= ring slot s - 1 (the rows the ranks before found).
__global__ void __launch_bounds__(PB) k_ring_take(peer_dev d, u64 *__restrict__ rowvis, const u64 *__restrict__ ring,
						 int s, int seg, u64 round)
{
	if (threadIdx.x == 0)
		wait_flag(d, PK_RING, d.rowrank[(d.j + 1) % d.C], round);
	__syncthreads();
	const u64 *src = ring + (u64)(s - 1) * d.nbw;
	u64 *dst = rowvis + (u64)seg * d.nbw;
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < d.nbw; w += (u64)gridDim.x * blockDim.x)
		dst[w] |= src[w];
}

} // namespace

// ---- host side -------------------------------------------------------------------------

void kgpu_peer_trace_mark(kgpu_peer *p, int k)
{
	if (p->trace)
		CUDA_CHECK(cudaEventRecord(p->ev[k], p->st->s));
}

void kgpu_peer_trace_updates(kgpu_peer *p)
{
	if (!p->trace)
		return;
	kgpu_state *st = p->st;
	CUDA_CHECK(cudaMemcpyAsync(p->hust, p->ust, UST_LEVELS * US_N * sizeof(u64), cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	char line[1024] = "";
	size_t at = 0;
	for (int l = 1; l < UST_LEVELS - 1 && at < sizeof line - 64; l++) {
		const u64 *u = p->hust + (size_t)l * US_N;
		bool all = true;
		for (int k = 0; k < US_N; k++)
			all = all && u[k] != ~0ull;
		if (!all || u[US_END] < u[US_START] || u[US_FLAGS] < u[US_END] || u[US_SEEN] < u[US_FLAGS] ||
		    u[US_SUMS] < u[US_SEEN])
			continue;
		at += (size_t)snprintf(line + at, sizeof line - at, " %d: %.1f/%.1f/%.1f/%.1f", l,
				       (double)(u[US_END] - u[US_START]) * 1e-3, (double)(u[US_FLAGS] - u[US_END]) * 1e-3,
				       (double)(u[US_SEEN] - u[US_FLAGS]) * 1e-3, (double)(u[US_SUMS] - u[US_SEEN]) * 1e-3);
	}
	kinfo("peer transport: update by level (us: the blocks' work, the flags raised, every rank's flag seen, the "
	      "sums written):%s",
	      line);
}

void kgpu_peer_check_err(kgpu_peer *p, const char *where)
{
	if (*(volatile int *)p->herr)
		kdie(KEXIT_RESOURCE, "peer transport: rank %d did not answer within %.0f s (%s): a rank failed or "
				     "stopped; KBFS_PEER_TIMEOUT=S waits longer",
		     *(volatile int *)p->herr - 1, p->timeout_s, where);
}

// KBFS_PEER_UPDATE_BLOCKS / _FOLD_BLOCKS: a kernel's grid at most N blocks
// (1 to the engine's grid), "all" the engine's grid; def without the variable.
static int blocks_knob(const char *name, int def, int grid)
{
	const char *v = getenv(name);
	if (!v)
		return def < grid ? def : grid;
	const char *end;
	u64 n = 0;
	if (!strcmp(v, "all"))
		return grid;
	if (knum_u64(v, &end, &n) == KNUM_OK && !*end && n >= 1 && n <= (u64)grid)
		return (int)n;
	kwarn("ignoring %s='%s' (want 1 to %d, or all)", name, v, grid);
	return def < grid ? def : grid;
}

// KBFS_PEER_CLEAR, _FLAGS, _OWN_PRED, _WON: 1 when the variable names the
// other way (other), 0 when it is unset or names the default (def); a warning
// for anything else.
static int other_knob(const char *name, const char *def, const char *other)
{
	const char *v = getenv(name);
	if (v && !strcmp(v, other))
		return 1;
	if (v && strcmp(v, def))
		kwarn("ignoring %s='%s' (want %s or %s)", name, v, def, other);
	return 0;
}

// Can this rank use the peer transport?  Returns 0 with *why filled when not.
static int usable_here(kcomm *world, int n, char *why, size_t len)
{
	if (n > PEER_MAX) {
		snprintf(why, len, "%d ranks, more than the %d it supports", n, PEER_MAX);
		return 0;
	}
	int dev;
	CUDA_CHECK(cudaGetDevice(&dev));
	char bus[32];
	CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
	struct ident {
		u64 host, key;
		char bus[32];
	} mine, *all = (ident *)kcalloc((size_t)n, sizeof *all);
	memset(&mine, 0, sizeof mine);
	const char *h = kcomm_host() ? kcomm_host() : "";
	mine.host = 0xcbf29ce484222325ull;
	for (const char *c = h; *c; c++)
		mine.host = (mine.host ^ (unsigned char)*c) * 0x100000001b3ull;
	mine.key = kgpu_gpu_key();
	snprintf(mine.bus, sizeof mine.bus, "%s", bus);
	kcomm_allgather(world, &mine, sizeof mine, all);
	int ok = 1;
	for (int r = 0; r < n && ok; r++) {
		if (all[r].host != mine.host) {
			snprintf(why, len, "the ranks are on more than one host");
			ok = 0;
		} else if (r != kcomm_rank(world) && all[r].key == mine.key) {
			snprintf(why, len, "ranks share a GPU");
			ok = 0;
		}
	}
	for (int r = 0; r < n && ok; r++) {
		if (r == kcomm_rank(world))
			continue;
		int other = -1, can = 0;
		if (cudaDeviceGetByPCIBusId(&other, all[r].bus) != cudaSuccess) {
			cudaGetLastError();
			snprintf(why, len, "GPU %s of rank %d is not visible here (CUDA_VISIBLE_DEVICES)", all[r].bus, r);
			ok = 0;
		} else if (cudaDeviceCanAccessPeer(&can, dev, other) != cudaSuccess || !can) {
			cudaGetLastError();
			snprintf(why, len, "GPU %s cannot reach the memory of GPU %s (no peer access)", bus, all[r].bus);
			ok = 0;
		}
	}
	free(all);
	return ok;
}

static void *dalloc(size_t bytes)
{
	void *p;
	CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 256));
	CUDA_CHECK(cudaMemset(p, 0, bytes ? bytes : 256));
	return p;
}

enum { H_WIN, H_COLF0, H_COLF1, H_XRECV, H_ROWVIS, H_WONIN, H_PARW, H_RING, H_N };

int kgpu_peer_setup(kgpu_state *st, kcomm *world, kgpu_peer **out)
{
	*out = NULL;
	const int want = st->o.peer;
	if (!want)
		return 0;
	const int n = kcomm_size(world), me = kcomm_rank(world);
	char why[160] = "";
	int ok = n > 1 && usable_here(world, n, why, sizeof why);
	if (n == 1)
		snprintf(why, sizeof why, "one rank");
	// every rank's verdict, so that rank 0 can name the first reason
	char *whys = (char *)kcalloc((size_t)n, sizeof why);
	why[sizeof why - 1] = 0;
	if (ok)
		why[0] = 0;
	kcomm_allgather(world, why, sizeof why, whys);
	int bad = -1;
	for (int r = 0; r < n && bad < 0; r++)
		if (whys[(size_t)r * sizeof why])
			bad = r;
	if (bad >= 0) {
		if (me == 0) {
			const char *w = whys + (size_t)bad * sizeof why;
			if (want == 2)
				kerror("--transport peer cannot run: %s (rank %d): use --transport nccl", w, bad);
			else
				kinfo("peer transport not used: %s (rank %d)", w, bad);
		}
		free(whys);
		return want == 2 ? KEXIT_USAGE : 0;
	}
	free(whys);
	const kgpu_geom &g = st->g;
	kgpu_peer *p = (kgpu_peer *)kcalloc(1, sizeof *p);
	p->st = st;
	peer_dev &d = p->d;
	d.me = me;
	d.nworld = n;
	d.R = g.R;
	d.C = g.C;
	d.i = g.i;
	d.j = g.j;
	d.nbw = g.nbw;
	d.nb = g.nb;
	d.dense = st->o.dense_push;
	d.tbatch = st->o.tdeg_batch;
	p->clear = other_knob("KBFS_PEER_CLEAR", "0", "1") && g.R > 1 && !d.dense && !st->o.td_loop;
	d.flag_rel = other_knob("KBFS_PEER_FLAGS", "fence", "release");
	d.own_pred = !other_knob("KBFS_PEER_OWN_PRED", "update", "decode");
	d.won_owner = !other_knob("KBFS_PEER_WON", "owner", "lowest");
	// td_lists on a one-column grid: the update lists the new frontier's words
	// for every column peer (the engine's own lists are for one rank only)
	d.lists = st->o.td_lists && !d.dense && g.C == 1 && g.R <= KGPU_LIST_SEGS && g.nbw < (1ull << 32);
	d.lcap = st->lcap;
	st->lists = d.lists ? 2 : 0;
	const char *tr = getenv("KBFS_PEER_TRACE");
	p->trace = tr && !strcmp(tr, "1");
	// the update's grid: two blocks a multiprocessor (one wave: k_update's
	// 72-80 registers a thread let three of 256 threads share one), each
	// taking its turns of words, not one block a 256 words up to the
	// engine's 8 a multiprocessor, each of which starts, fences system-wide
	// and takes the ticket (measured on 4x1 at scale 26, share/bench/NOTES.md)
	p->ublocks = blocks_knob("KBFS_PEER_UPDATE_BLOCKS", 2 * kgpu_sm_count(), st->grid);
	p->fblocks = blocks_knob("KBFS_PEER_FOLD_BLOCKS", st->grid, st->grid);
	p->pblocks = blocks_knob("KBFS_PEER_PRED_BLOCKS", st->grid, st->grid);
	if (p->trace)
		for (int k = 0; k < 8; k++)
			CUDA_CHECK(cudaEventCreate(&p->ev[k]));
	const char *tv = getenv("KBFS_PEER_TIMEOUT");
	const char *tend;
	double t = 0;
	p->timeout_s = tv && knum_double(tv, &tend, &t) == KNUM_OK && !*tend && t > 0 && t < 1e9 ? t : 120.0;
	d.timeout_ns = (u64)(p->timeout_s * 1e9);
	for (int r = 0; r < g.R; r++)
		d.colrank[r] = r * g.C + g.j;
	for (int m = 0; m < g.C; m++) {
		d.rowrank[m] = g.i * g.C + m;
		d.colfirst[m] = (u64)m * (u64)g.R * g.nb;
	}
	// own memory
	p->win = (peer_win *)dalloc(sizeof(peer_win));
	for (int q = 0; q < 2; q++) {
		p->frontb[q] = (u64 *)dalloc(g.nbw * 8);
		p->colfront[q] = g.R > 1 ? (u64 *)dalloc(g.colw * 8) : p->frontb[q];
	}
	if (g.C > 1) {
		p->won = (u64 *)dalloc(g.roww * 8);
		p->wonin = (u64 *)dalloc(g.roww * 8);
		p->parw = (u32 *)dalloc((u64)g.C * g.nb * 4);
		p->ring = (u64 *)dalloc((u64)(g.C - 1) * g.nbw * 8);
		p->tps = (g.nbw + KGPU_TILE_WORDS - 1) / KGPU_TILE_WORDS;
		const u64 nt = 2 * (u64)g.C * p->tps;
		p->tcnt = (u64 *)dalloc(nt * 8);
		p->tpre = (u64 *)dalloc(nt * 8);
		p->cubbytes = kgpu_peer_scan_bytes(p, nt);
		p->cubtmp = dalloc(p->cubbytes);
		st->pl_keep = 1; // only rows found in the search are read (k_emit, k_decode)
	}
	p->ticket = (unsigned *)dalloc(sizeof(unsigned));
	p->lvc = (ull *)dalloc(4 * sizeof(ull));
	CUDA_CHECK(cudaHostAlloc((void **)&p->hsum, 8 * sizeof(u64), cudaHostAllocMapped));
	CUDA_CHECK(cudaHostGetDevicePointer((void **)&p->dhsum, p->hsum, 0));
	CUDA_CHECK(cudaHostAlloc((void **)&p->herr, sizeof(int), cudaHostAllocMapped));
	CUDA_CHECK(cudaHostGetDevicePointer((void **)&p->derr, p->herr, 0));
	*p->herr = 0;
	d.ticket = p->ticket;
	d.lvc = p->lvc;
	d.err = p->derr;
	if (p->trace) {
		p->ust = (u64 *)dalloc(UST_LEVELS * US_N * sizeof(u64));
		p->hust = (u64 *)kmalloc(UST_LEVELS * US_N * sizeof(u64));
	}
	d.ust = p->ust;
	// handles of everything the others write, gathered over the world
	void *mem[H_N] = {p->win,
			  g.R > 1 ? p->colfront[0] : NULL,
			  g.R > 1 ? p->colfront[1] : NULL,
			  g.C > 1 ? st->slot[KS_BUF0 + KBFS_XRECV] : NULL,
			  g.C > 1 ? st->slot[KS_BUF0 + KBFS_ROWVIS] : NULL,
			  p->wonin,
			  p->parw,
			  p->ring};
	cudaIpcMemHandle_t mine[H_N];
	memset(mine, 0, sizeof mine);
	for (int k = 0; k < H_N; k++)
		if (mem[k])
			CUDA_CHECK(cudaIpcGetMemHandle(&mine[k], mem[k]));
	cudaIpcMemHandle_t *all = (cudaIpcMemHandle_t *)kcalloc((size_t)n * H_N, sizeof *all);
	kcomm_allgather(world, mine, sizeof mine, all);
	auto open = [&](int r, int k) -> void * {
		if (r == me)
			return mem[k];
		void *q = NULL;
		CUDA_CHECK(cudaIpcOpenMemHandle(&q, all[(size_t)r * H_N + k], cudaIpcMemLazyEnablePeerAccess));
		p->opened[p->nopened++] = q;
		return q;
	};
	for (int r = 0; r < n; r++)
		d.win[r] = (peer_win *)open(r, H_WIN);
	for (int r = 0; r < g.R; r++)
		for (int q = 0; q < 2; q++)
			d.colf[q][r] = g.R > 1 ? (u64 *)open(d.colrank[r], H_COLF0 + q) : p->frontb[q];
	if (g.C > 1)
		for (int m = 0; m < g.C; m++) {
			d.xrecv[m] = (u64 *)open(d.rowrank[m], H_XRECV);
			d.rowvis[m] = (u64 *)open(d.rowrank[m], H_ROWVIS);
			d.wonin[m] = (u64 *)open(d.rowrank[m], H_WONIN);
			d.parw[m] = (u32 *)open(d.rowrank[m], H_PARW);
			d.ring[m] = (u64 *)open(d.rowrank[m], H_RING);
		}
	free(all);
	p->engine_colfront = st->slot[KS_BUF0 + KBFS_COLFRONT];
	p->grid = st->grid;
	CUDA_CHECK(cudaDeviceSynchronize());
	kcomm_barrier(world);
	*out = p;
	kinfo("peer transport: %d ranks on one host, %d GPUs reached directly (column %d, row %d)%s", n, n - 1,
	      g.R - 1, g.C - 1, d.dense ? ", every word pushed (--dense-push)" : "");
	return 0;
}

void kgpu_peer_teardown(kgpu_peer *p)
{
	if (!p)
		return;
	kgpu_state *st = p->st;
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	st->slot[KS_BUF0 + KBFS_COLFRONT] = p->engine_colfront;
	for (int k = 0; k < p->nopened; k++)
		CUDA_CHECK(cudaIpcCloseMemHandle(p->opened[k]));
	void *own[] = {p->win,  p->frontb[0], p->frontb[1], p->won,	p->wonin, p->parw,
		       p->ring, p->tcnt,      p->tpre,	    p->cubtmp, p->ticket, p->lvc, p->ust};
	for (void *q : own)
		if (q)
			CUDA_CHECK(cudaFree(q));
	if (p->st->g.R > 1)
		for (int q = 0; q < 2; q++)
			CUDA_CHECK(cudaFree(p->colfront[q]));
	CUDA_CHECK(cudaFreeHost(p->hsum));
	CUDA_CHECK(cudaFreeHost(p->herr));
	if (p->trace)
		for (int k = 0; k < 8; k++)
			CUDA_CHECK(cudaEventDestroy(p->ev[k]));
	free(p->hust);
	free(p);
}

// td_lists: the next level's frontier lists are those of COLFRONT[q], here.
void kgpu_peer_lists_of(kgpu_peer *p, int q)
{
	kgpu_state *st = p->st;
	if (st->lists != 2)
		return;
	st->llist = &p->win->clist[q][0][0];
	st->lcnt = &p->win->ccount[q][0];
	st->lnseg = st->g.R;
	st->lseg = st->g.nbw;
}

void kgpu_peer_start(kgpu_peer *p)
{
	kgpu_state *st = p->st;
	const kgpu_geom &g = st->g;
	const cudaStream_t s = kgpu_queue(st);
	const u64 root = st->root;
	const int owner = kpart_owner(&st->b->g, root) == g.rank;
	p->round++;
	p->found_last = 1;
	if (p->trace) // every stamp unset (the start's atomicMin needs the most)
		CUDA_CHECK(cudaMemsetAsync(p->ust, 0xff, UST_LEVELS * US_N * sizeof(u64), s));
	k_start<<<kgpu_peer_blocks(p, g.nbw), PB, 0, s>>>(p->d, kgpu_buf(st, KBFS_FRONT), p->frontb[0],
						   g.C > 1 && owner ? kgpu_buf(st, KBFS_PRED) : nullptr, owner,
						   owner ? root - g.own_first : 0, kbfs_packed(0, root), p->round, p->dhsum);
	KGPU_LAUNCHED("k_start");
	st->slot[KS_BUF0 + KBFS_COLFRONT] = p->colfront[0];
	kgpu_peer_lists_of(p, 0);
}

void kgpu_peer_fold(kgpu_peer *p, u64 level)
{
	(void)level;
	kgpu_state *st = p->st;
	if (st->g.C == 1)
		return;
	p->fold_round++;
	k_fold<<<kgpu_blocks(st->g.roww, PB, p->fblocks), PB, 0, kgpu_queue(st)>>>(p->d, kgpu_buf(st, KBFS_ROWNEXT),
									    p->fold_round);
	KGPU_LAUNCHED("k_fold");
}

void kgpu_peer_update(kgpu_peer *p, u64 level, int sv, u64 examined)
{
	kgpu_state *st = p->st;
	p->d.sv = sv;
	const kgpu_geom &g = st->g;
	const cudaStream_t s = kgpu_queue(st);
	const int q = (int)(level & 1);
	p->round++;
	const int nbk = kgpu_blocks((g.nbw + 31) / 32, PB / 32, p->ublocks);
	u64 *rownext = kgpu_buf(st, KBFS_ROWNEXT);
	const u32 *rl = (const u32 *)st->slot[KS_RLIST];
	// KBFS_PEER_CLEAR: the frontier two levels back (in the other parity's
	// buffers, which the next update overwrites) dense enough that zeroing
	// them here (R + 1 segments, local) costs less than the next update's
	// pushes of a zero for each of its words (more bits a segment than a
	// quarter of its words), or, with td_lists, too large for its list
	// (some rank's overflowed), which keeps the next update from being a
	// list level; the list is then empty (k_update)
	const int clr = p->clear && (p->found_last / ((u64)g.R * g.C) > g.nbw / 4 || (st->lists == 2 && !st->list_ok));
	p->d.clr_cf = clr ? p->colfront[q ^ 1] : nullptr;
	p->d.clr_fb = clr ? p->frontb[q ^ 1] : nullptr;
	if (g.tdeg64)
		k_update<u64><<<nbk, PB, 0, s>>>(p->d, level, rownext, kgpu_buf(st, KBFS_XRECV), kgpu_buf(st, KBFS_OWNVIS),
						p->frontb[q], p->won, kgpu_buf(st, KBFS_PRED), kgpu_buf(st, KBFS_PL),
						(const u64 *)st->slot[KS_TDEG],
						st->cnt, p->fold_round, p->round, examined, p->dhsum, rl, st->lvl_list);
	else
		k_update<u32><<<nbk, PB, 0, s>>>(p->d, level, rownext, kgpu_buf(st, KBFS_XRECV), kgpu_buf(st, KBFS_OWNVIS),
						p->frontb[q], p->won, kgpu_buf(st, KBFS_PRED), kgpu_buf(st, KBFS_PL),
						(const u32 *)st->slot[KS_TDEG],
						st->cnt, p->fold_round, p->round, examined, p->dhsum, rl, st->lvl_list);
	KGPU_LAUNCHED("k_update (peer)");
	p->d.clr_cf = p->d.clr_fb = nullptr;
	st->lvl_list = 0;
	// the next level reads what this one sent
	st->slot[KS_BUF0 + KBFS_COLFRONT] = p->colfront[q];
	kgpu_peer_lists_of(p, q);
}

// The ring of a bottom-up level's sub-steps (kengine.h lv_ring_*): a give
// is the ring_round-th of the search on every rank, so the take after it
// waits for the right neighbour's flag to reach the same count.  A slot is
// written again only in a later level, after every rank's round.
void kgpu_peer_ring_give(kgpu_peer *p, int s, int seg)
{
	kgpu_state *st = p->st;
	p->ring_round++;
	k_ring_give<<<kgpu_peer_blocks(p, st->g.nbw), PB, 0, kgpu_queue(st)>>>(p->d, kgpu_buf(st, KBFS_ROWVIS), s, seg,
									       p->ring_round);
	KGPU_LAUNCHED("k_ring_give");
}

void kgpu_peer_ring_take(kgpu_peer *p, int s, int seg)
{
	kgpu_state *st = p->st;
	k_ring_take<<<kgpu_peer_blocks(p, st->g.nbw), PB, 0, kgpu_queue(st)>>>(p->d, kgpu_buf(st, KBFS_ROWVIS), p->ring, s,
									       seg, p->ring_round);
	KGPU_LAUNCHED("k_ring_take");
}

// Until the last round's sums are in mapped memory: a spin on hsum[7]
// (sooner than the stream's completion), with a look at the stream now and
// then so that a failed kernel is reported rather than waited for.
static void await_round(kgpu_peer *p, const char *where)
{
	volatile u64 *h = p->hsum;
	for (unsigned k = 1; h[7] < p->round; k++) {
		if (k % 4096)
			continue;
		cudaError_t e = cudaStreamQuery(p->st->s);
		if (e == cudaSuccess && h[7] < p->round) {
			kgpu_peer_check_err(p, where);
			KBUG("peer transport: round %llu ended without its sums (%s)", (ull)p->round, where);
		}
		if (e != cudaErrorNotReady)
			CUDA_CHECK(e);
	}
	kgpu_peer_check_err(p, where);
}

void kgpu_peer_counts(kgpu_peer *p, u64 cnt[6])
{
	await_round(p, "a level");
	for (int k = 0; k <= S_BSV; k++)
		cnt[k] = ((volatile u64 *)p->hsum)[k];
	p->st->list_ok = p->st->lists == 2 && ((volatile u64 *)p->hsum)[S_LOVF] == 0;
	p->st->last_tdeg = cnt[S_TDEG];
	p->found_last = cnt[S_FOUND];
}

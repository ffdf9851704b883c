// kgpu_peer.cuh: what the parts of the peer transport share (kgpu_peer.cu:
// set-up and the levels; kgpu_peer_pred.cu: the predecessors after the
// search; kgpu_peer_loop.cu: KBFS_CUDA_TD_LOOP's runs of levels, with
// kgpu_peer_update.cuh's update pieces) and nothing else sees: the window every
// rank exports, the kernels' view of the peers, the flags' helpers and the
// host state.  See kgpu_peer.cu for the protocol.
#ifndef KGPU_PEER_CUH
#define KGPU_PEER_CUH

#include "kgpu_flag.cuh"
#include "kgpu_internal.cuh"

namespace kgpu_peer_dev {


enum { PEER_MAX = 16, NSUM = 7, PB = 256 };
// KBFS_PEER_TRACE=1: each level's update kernel stamped (%globaltimer, ns):
// US_START its first block's start, US_END the last block's start of the
// round's end, US_FLAGS its flags raised, US_SEEN every rank's flag seen,
// US_SUMS the sums written; the levels past UST_LEVELS share the last row
enum { US_START, US_END, US_FLAGS, US_SEEN, US_SUMS, US_N, UST_LEVELS = 64 };
enum peer_kind { PK_ROUND, PK_FOLD, PK_WON, PK_PAR, PK_RING, PK_N };
// the level's sums: the transport's six (kengine.h lv_counts), then the ranks whose
// frontier list overflowed (td_lists: the next level cannot be a list level)
enum { S_FOUND, S_TDEG, S_EXAMINED, S_BEXPAND, S_BFOLD, S_BSV, S_LOVF };
static_assert((int)PEER_MAX <= (int)KGPU_LIST_SEGS, "a list level reads one list a column peer");

// One rank's window: written by the others, read by its owner.
struct peer_win {
	ull flag[PK_N][PEER_MAX];           // the last round of each kind each rank finished here
	u64 sums[2][PEER_MAX][8];           // level counters by round parity and sender
	// td_lists on one-column grids: COLFRONT[q]'s segment r's nonzero words, listed
	// by P(r,j) (ccount > the cap: too many, no list)
	u32 ccount[2][PEER_MAX];
	u32 clist[2][PEER_MAX][KGPU_LIST_CAP];
};

// What the kernels need, by value.
struct peer_dev {
	int me, nworld, R, C, i, j;
	u64 nbw, nb;
	int dense, sv; // sv: set per level (kgpu_peer_update)
	int lists;     // td_lists (C == 1): the update keeps the frontier's lists
	u32 lcap;      // ... of at most lcap words (kgpu_state.lcap)
	int tbatch;    // the update's words a warp takes together (kgpu_opts.tdeg_batch)
	// KBFS_PEER_CLEAR=1, set for one update when the frontier two levels back
	// (what COLFRONT and FRONTB of the other parity hold) was dense: this
	// rank's COLFRONT (all R segments) and FRONTB of parity q ^ 1 zeroed,
	// so that the next update pushes only its new frontier's nonzero words
	// rather than a zero for every word that frontier set (else NULL)
	u64 *clr_cf, *clr_fb;
	int flag_rel;  // KBFS_PEER_FLAGS=release: a release store a flag (the ablation; default: one fence, then all)
	int own_pred;  // C > 1: the rows credited to the owner get their predecessor from its PL in the update
		       // (1, default), or after the search with the others' (0: KBFS_PEER_OWN_PRED=decode)
	int won_owner; // C > 1: a row found by several ranks of the grid row is credited to its owner
		       // first (1, default), or to the lowest column (0: KBFS_PEER_WON=lowest)
	u64 timeout_ns;
	peer_win *win[PEER_MAX];    // every world rank's window as this rank addresses it
	u64 *colf[2][PEER_MAX];     // COLFRONT[q] of P(r,j), by r
	u64 *xrecv[PEER_MAX];       // XRECV of P(i,m), by m
	u64 *rowvis[PEER_MAX];      // ROWVIS of P(i,m), by m
	u64 *wonin[PEER_MAX];       // WONIN of P(i,m), by m
	u32 *parw[PEER_MAX];        // PARW of P(i,m), by m
	u64 *ring[PEER_MAX];        // RING of P(i,m), by m: C - 1 slots of nbw words (bottom-up sub-steps)
	int colrank[PEER_MAX];      // world rank of P(r,j)
	int rowrank[PEER_MAX];      // world rank of P(i,m)
	u64 colfirst[PEER_MAX];     // first global column of P(i,m), by m
	unsigned *ticket;           // blocks done (the last one publishes, then resets it)
	ull *lvc;                   // bytes pushed this level: expand, fold, sv
	int *err;                   // mapped host: 1 + the rank a wait gave up on
	u64 *ust;                   // KBFS_PEER_TRACE=1: the update's stamps, US_N a level (else NULL)
};

// Level's row of the update's stamps (d.ust set).
static __device__ __forceinline__ u64 *ust_row(const peer_dev &d, u64 level)
{
	return d.ust + (level < UST_LEVELS ? level : UST_LEVELS - 1) * US_N;
}

// The update's stamp k of level (KBFS_PEER_TRACE=1; one thread).
static __device__ __forceinline__ void ustamp(const peer_dev &d, u64 level, int k)
{
	if (d.ust)
		ust_row(d, level)[k] = kgpu_gtime();
}

// Wait until rank src's flag of kind k here reaches round (one thread).
static __device__ void wait_flag(const peer_dev &d, int k, int src, u64 round)
{
	ull *f = &d.win[d.me]->flag[k][src];
	if (kgpu_flag_get(f) >= round)
		return;
	const u64 t0 = kgpu_gtime();
	for (unsigned spin = 0; kgpu_flag_get(f) < round; spin++) {
		if ((spin & 1023) == 1023 && kgpu_gtime() - t0 > 1000000) { // past 1 ms: check for a failure elsewhere
			if (*(volatile int *)d.err || kgpu_gtime() - t0 > d.timeout_ns) {
				atomicCAS(d.err, 0, 1 + src);
				return;
			}
		}
	}
}

// The block's thread 0 waits for the flags of kind k of every row peer
// (row) or every world rank; then the block goes on.
static __device__ void wait_peers(const peer_dev &d, int k, int row, u64 round)
{
	if (threadIdx.x == 0) {
		if (row) {
			for (int m = 0; m < d.C; m++)
				if (m != d.j)
					wait_flag(d, k, d.rowrank[m], round);
		} else {
			for (int r = 0; r < d.nworld; r++)
				if (r != d.me)
					wait_flag(d, k, r, round);
		}
	}
	__syncthreads();
}

// Called by every thread at a kernel's end: true in the last block to
// finish, after every block's stores (peer memory included) are visible
// system-wide.  One system fence a block, by its thread 0 after the
// block's barrier (cumulative: it covers what the block's threads stored
// before the barrier, as a grid sync does), not one a thread.
static __device__ bool last_block(const peer_dev &d)
{
	__shared__ bool last;
	__syncthreads();
	if (threadIdx.x == 0) {
		__threadfence_system();
		last = atomicAdd(d.ticket, 1u) == gridDim.x - 1;
		if (last) {
			__threadfence_system();
			*d.ticket = 0;
		}
	}
	__syncthreads();
	return last;
}

// last_block's counterpart for a kernel whose work one block did alone (the
// others left at once): true after the block's stores are visible
// system-wide.
static __device__ bool only_block()
{
	__syncthreads();
	if (threadIdx.x == 0)
		__threadfence_system();
	__syncthreads();
	return true;
}

// Flag kind k = round in every row peer's window (row) or every world
// rank's, by thread 0 after a barrier and one system fence, so that the
// block's stores before the call are seen before the flags; the flags are
// strong stores after that fence, all in flight at once (d.flag_rel: a
// release store each, one fence after another, the ablation).
static __device__ void raise_flags(const peer_dev &d, int k, int row, u64 round)
{
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	__threadfence_system();
	const int n = row ? d.C : d.nworld, self = row ? d.j : d.me;
	for (int x = 0; x < n; x++) {
		if (x == self)
			continue;
		ull *f = &d.win[row ? d.rowrank[x] : x]->flag[k][d.me];
		if (d.flag_rel)
			kgpu_flag_put(f, round);
		else
			kgpu_flag_put_after_fence(f, round);
	}
}

static __device__ __forceinline__ void block_add(ull *ctr, ull v)
{
	v = kgpu_warp_sum(v);
	if (kgpu_lane() == 0 && v)
		atomicAdd(ctr, v);
}

// The last block of a round, after raising its flags: every world rank's
// round flag, then (sum) the counters into mapped host memory, hsum[7] =
// round last, which the host polls (and into gsum, device memory, when not
// NULL: KBFS_CUDA_TD_LOOP's levels read them there).
static __device__ void finish_round(const peer_dev &d, u64 round, int sum, volatile u64 *hsum, u64 *gsum = nullptr,
				    u64 level = 0)
{
	for (int r = threadIdx.x; r < d.nworld; r += blockDim.x)
		if (r != d.me)
			wait_flag(d, PK_ROUND, r, round);
	__syncthreads();
	if (level && threadIdx.x == 0)
		ustamp(d, level, US_SEEN);
	if (sum && threadIdx.x < NSUM) {
		const int par = (int)(round & 1);
		u64 s = 0;
		for (int r = 0; r < d.nworld; r++)
			s += ((volatile u64 *)d.win[d.me]->sums[par][r])[threadIdx.x];
		hsum[threadIdx.x] = s;
		if (gsum)
			gsum[threadIdx.x] = s;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		__threadfence_system();
		hsum[7] = round;
		__threadfence_system();
		if (level)
			ustamp(d, level, US_SUMS);
	}
}

} // namespace kgpu_peer_dev

using namespace kgpu_peer_dev;

// ---- host state -------------------------------------------------------------------------

struct kgpu_peer {
	kgpu_state *st;
	peer_dev d;
	peer_win *win;
	u64 *frontb[2];
	u64 *colfront[2]; // R > 1: own; R == 1: frontb
	u64 *won, *wonin;
	u32 *parw;
	u64 *ring;        // C > 1: the ring slots the right neighbour writes
	u64 *tcnt, *tpre;
	void *cubtmp;
	size_t cubbytes;
	u64 tps;
	unsigned *ticket;
	ull *lvc;
	u64 *hsum;  // mapped host
	u64 *dhsum; // its device address
	int *herr, *derr;
	void *opened[8 * PEER_MAX];
	int nopened;
	void *engine_colfront;
	u64 round, fold_round, won_round, ring_round;
	int grid;
	double timeout_s;
	int ublocks;          // the update's grid at most this (KBFS_PEER_UPDATE_BLOCKS; 2 an SM)
	int fblocks;          // the fold's (KBFS_PEER_FOLD_BLOCKS, an experiment; the engine's grid)
	int pblocks;          // the predecessor step's four kernels' (KBFS_PEER_PRED_BLOCKS, the same)
	int clear;            // KBFS_PEER_CLEAR=1 (an experiment; R > 1, not --dense-push nor TD_LOOP)
	u64 found_last;       // the vertices the last round found (the root's: 1), for clear
	int trace;            // KBFS_PEER_TRACE=1: the predecessor step's kernels timed, a line a search;
			      // the update's stamps (ust), a line a search
	cudaEvent_t ev[8];
	u64 *ust, *hust;      // trace: the update's stamps on the device (d.ust), their copy
};

// With trace, event k of the predecessor step (recorded on the stream).
void kgpu_peer_trace_mark(kgpu_peer *p, int k);
// With trace, at a search's end: its levels' update stamps, a line.
void kgpu_peer_trace_updates(kgpu_peer *p);
// td_lists: the next level's frontier lists (kgpu_state's llist ...) are
// those of COLFRONT[q] (its parity), in this rank's window.
void kgpu_peer_lists_of(kgpu_peer *p, int q);
// A failed or silent rank (a wait gave up): kdie naming it.
void kgpu_peer_check_err(kgpu_peer *p, const char *where);
// The CUB temporary bytes of the predecessor step's scan of n tile counts.
size_t kgpu_peer_scan_bytes(kgpu_peer *p, u64 n);
static inline int kgpu_peer_blocks(kgpu_peer *p, u64 items) { return kgpu_blocks(items, PB, p->grid); }

#endif

// kgpu_internal: what the .cu modules of gpu/ share and nothing outside gpu/ sees.
//
// The engine state (one per rank), the geometry every module derives from
// the block, the checked-call macros, the slots of the device memory plan
// and the entry points of the modules:
//   kgpu_device.cu   binding a GPU, device info, the failure reporter
//   kgpu_plan.cu     the device memory plan (setup allocates exactly it)
//   kgpu_engine.cu   the kbfs_engine functions; reset and update kernels
//   kgpu_csr.cu      the CSR's column indices made from the CSC at set-up
//   kgpu_topdown.cu  frontier word list, frontier pieces, the four expansions
//   kgpu_bottomup.cu bottom-up with early exit, thread- or warp-per-row
//   kgpu_codec.cu    pack / unpack of the wire forms (kgpu_vlq.cuh: the warp codec)
//   kgpu_valid.cu    the Graph500 check of a tree on the device (tree_check)
//   kgpu_nccl.cu     the NCCL transport
//   kgpu_peer.cu     device-resident levels between the GPUs of one host
//   kgpu_peer_pred.cu  ... and their predecessors after the search (kgpu_peer.cuh)
#ifndef KGPU_INTERNAL_CUH
#define KGPU_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kgpu.h"

extern "C" {
#include "kcomm.h"
#include "klog.h"
#include "kmem.h"
#include "kpart.h"
}

typedef uint64_t u64;
typedef uint32_t u32;
typedef unsigned long long ull;

// ---- checked calls -------------------------------------------------------
// A failure names rank, host, GPU, file and line, then kdie(KEXIT_RESOURCE).
[[noreturn]] void kgpu_fail(const char *what, const char *file, int line, const char *why);
static inline void kgpu_cuda_check(cudaError_t rc, const char *what, const char *file, int line)
{
	if (rc != cudaSuccess)
		kgpu_fail(what, file, line, cudaGetErrorString(rc));
}
#define CUDA_CHECK(call) kgpu_cuda_check((call), #call, __FILE__, __LINE__)
// after a kernel launch: launch errors now, execution errors at the next sync
// (and, under KBFS_CUDA_KTRACE=1, an event after it: kgpu_trace_*)
#define KGPU_LAUNCHED(name) \
	(kgpu_cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__), kgpu_trace_launch(name))
// KBFS_CUDA_KTRACE=1 (an experiment): an event after every kernel the
// engine's stream runs; the time from one to the next is booked to the
// later kernel's name (with KBFS_CUDA_SPIN_US, the GPU's time of each
// kernel, the launch gap included), summed per name, printed on stderr by
// every rank at the engine's teardown.  Begin with the stream, flush at a
// search's end, end at teardown.
void kgpu_trace_begin(cudaStream_t s);
void kgpu_trace_launch(const char *name);
void kgpu_trace_flush(void);
void kgpu_trace_end(void);
// Device memory (kgpu_free) or pinned host memory (kgpu_free_host) given
// back, checked, when p holds some; p is NULL after.
template <class T> static inline void kgpu_free(T *&p)
{
	if (p)
		CUDA_CHECK(cudaFree(p));
	p = NULL;
}
template <class T> static inline void kgpu_free_host(T *&p)
{
	if (p)
		CUDA_CHECK(cudaFreeHost(p));
	p = NULL;
}

// The bound device (kgpu_device.cu); -1 before kgpu_bind.
int kgpu_current_gpu(void);
int kgpu_sm_count(void);
// 64-bit key naming this rank's GPU across the job (host and UUID).
u64 kgpu_gpu_key(void);
int kgpu_gpu_sharers(void);
// Free and total bytes of the bound GPU (cudaMemGetInfo); the test hook
// KBFS_CUDA_FREE_BYTES=N lowers the free figure to N.
void kgpu_mem_info(u64 *free_bytes, u64 *total_bytes);
// The options kgpu_bind was first called with (defaults when none).
const kgpu_opts *kgpu_bound_opts(void);
// A copy of `bytes` between pageable host memory and the device (kind
// cudaMemcpyHostToDevice or DeviceToHost), ordered after the work queued
// on stream s and finished when it returns.  Large copies go through two
// pinned staging buffers: the host side on all OpenMP threads (so the page
// faults of fresh memory are taken in parallel), overlapped with the DMA
// of the other buffer; small ones, or KBFS_CUDA_STAGED=0, are one
// cudaMemcpyAsync.  Returns 1 when staged.
int kgpu_copy_staged(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s);

// ---- geometry --------------------------------------------------------------
enum { KGPU_LIST_CAP = 1024, // words a frontier list holds (kgpu_state.lists); more: no list
       KGPU_LIST_SEGS = 16,   // segments (ranks of a grid column) a list level reads at most
       KGPU_LOOP_MAX = 64,    // levels one k_td_loop launch runs at most (KBFS_CUDA_TD_LOOP)
       KGPU_TILE_WORDS = 32,  // words of a bitmap tile (one warp, one word a lane)
       KGPU_DCHUNK = 1024,    // decode work unit: bytes (VLQ), elements (raw) or words (bitmap)
       KGPU_TD_CHUNK = 65536, // default frontier words per top-down piece
       KGPU_VTILE = 1024,     // CSR entries a block of the tree check takes at once
};

struct kgpu_geom {
	int R, C, i, j, rank;
	u64 nb, nbw;          // block vertices and words
	u64 ncols, nrows, nnz;
	u64 colw, roww;       // words of COLFRONT (R*nbw) and of ROWVIS (C*nbw)
	u64 col_first;        // global id of local column 0
	u64 own_first;        // global id of owned vertex 0
	u64 nseg;             // max(R, C): segments WSEND / WRECV hold
	u64 wire_cap;         // bytes per packed segment
	int idx64, off64;     // device index and offset widths
	int tdeg64;           // tdeg kept as u64 (else u32: every tdeg < 2^32, the block's largest or ne_input)
	int sym;              // a 1x1 block kept once: KS_COLIDX is KS_ROWIDX, KS_ROWPTR is KS_COLPTR
	int pred_alias;       // C == 1: PRED is PL (nrows == nb; the row reduction is a copy)
	int colfront_alias;   // R == 1: COLFRONT is FRONT (the expand is a copy)
	int recv_alias;       // C == 1: RECV is ROWNEXT (the fold is a copy)
	int bu_first;         // KS_FIRST is kept
	int pred_finish;      // KBFS_CUDA_PRED_FINISH on a grid of several columns: KS_OEMPTY is kept
	u64 chunk_words;      // frontier words per top-down piece
	u64 tps, ntiles;      // codec: tiles per segment, tiles of nseg segments
	u64 ndchunks;         // codec: decode work units of nseg segments
	u64 N;                // vertices of the grid (padded)
	int validate;         // the tree check's arrays are kept (kgpu_opts.validate)
	u64 vtiles;           // tree check: tiles of KGPU_VTILE CSR entries
};
void kgpu_geom_init(kgpu_geom *g, const kpart_block *b, const kbfs_engine_conf *conf, const kgpu_opts *o);

// ---- the device memory plan --------------------------------------------------
// Slots in allocation order; kgpu_plan.cu names and sizes them.
enum kgpu_slot {
	KS_COLPTR, KS_ROWIDX, KS_ROWPTR, KS_COLIDX, KS_TDEG,
	KS_BUF0, // KS_BUF0 + enum kbfs_buf: the engine buffers
	KS_EMPTY = KS_BUF0 + KBFS_NBUF, // roww words: local row has no CSR entry (bottom-up skips it)
	KS_FIRST, // nrows indices: each local row's first CSR entry (bottom-up's first probe; bu_first)
	KS_WLIST, KS_WCNT, KS_CV, KS_CS,
	KS_TILES, KS_TPRE, KS_SEGSTAT, KS_FORM, KS_USEG, KS_CSUM, KS_CPRE,
	KS_CUB, KS_CNT,
	KS_RLIST, KS_FLIST, // td_lists: ROWNEXT's words a list level turned nonzero; FRONT's nonzero words
	KS_LOOP,  // KBFS_CUDA_TD_LOOP: k_td_loop's barrier, decision and level records
	KS_VOWN, KS_VROW, // validate: the owned vertices' levels (2 bytes; KS_VLEV on a column of one rank), the
			  // rows' packed entries (PRED itself on a row of one rank)
	KS_VLEV, KS_VTREE, KS_VTROW, KS_VOUT, // validate: column levels (gathered), tree edges found, tile rows, result
	KS_OEMPTY, // pred_finish: nbw words, the owned vertices no search reaches (no tuple; past nb)
	KS_NSLOT
};
// Fill plan->a[slot] for every slot (n = KS_NSLOT) and the totals; needs a
// bound GPU (CUB temporary sizes depend on it).
void kgpu_plan_fill(const kgpu_geom *g, kgpu_plan_t *plan);

// ---- codec structures (kgpu_codec.cu, kgpu_vlq.cuh) ----------------------------
// Summary of a run of bitmap tiles of one segment, combined by a segmented
// scan: bytes = VLQ bytes of every gap but the run's first, first/last =
// global bit positions of the run's first and last set bits.
struct kgpu_vtile {
	u64 seg, bytes, count, first, last;
};
struct kgpu_segstat {
	u64 count;  // set bits
	u64 vbytes; // VLQ bytes of the segment as a list
};
struct kgpu_useg {          // one segment to decode
	const uint8_t *src; // wire + s * stride
	u64 bytes;
	u64 dstword;        // first destination word
	u64 chunk_first;    // first decode work unit
	int form;           // enum kbfs_fmt
	int aligned;        // src is 8-byte aligned
};

// ---- counters read back once a level (or after each step with step_sync) ----
// The local step adds lfound and examined, the update found and tdeg.
// With td_lists: nwl = ROWNEXT's words a list level's expansion turned
// nonzero (KS_RLIST holds the first KGPU_LIST_CAP), nfl = the new
// frontier's nonzero words an update listed, lovf = 1 when those were more
// than KGPU_LIST_CAP (published only: the next level cannot use the list).
struct kgpu_counters {
	ull found, examined, tdeg, nsel, nv, lfound;
	ull ticket; // blocks of the update kernel done (the last one publishes)
	ull nwl, nfl, lovf;
	ull pad[1];
};

// KBFS_CUDA_TD_LOOP: what k_td_loop leaves of each level (t0-t2: %globaltimer
// at its start, after the expansion, after the update) and of the run.
struct kgpu_loop_rec {
	ull found, tdeg, examined, bexpand, t0, t1, t2;
};
struct kgpu_loop {
	unsigned bar[2];  // grid barrier: arrivals, generation
	unsigned nlv;     // levels run
	unsigned cont;    // the next level is the loop's too
	unsigned lok;     // the last level's frontier list is whole
	unsigned pad;
	u64 gsum[8];      // the peer loop: the level's sums over the ranks
	kgpu_loop_rec rec[KGPU_LOOP_MAX];
};

// ---- engine state -----------------------------------------------------------
struct kgpu_state {
	kgpu_opts o;
	kgpu_geom g;
	const kpart_block *b;
	cudaStream_t s;
	cudaEvent_t useg_done; // the last unpack's descriptor upload finished
	void *slot[KS_NSLOT];  // device memory by plan slot
	u64 slot_bytes[KS_NSLOT];
	int vpacked;           // kgpu_tree_pack ran since the last check (it clears the result)
	size_t cub_bytes;
	kgpu_counters *cnt;    // device
	kgpu_counters *hcnt;   // pinned host
	kgpu_segstat *hsegstat; // pinned host, nseg
	int *hform;            // pinned host, nseg
	kgpu_useg *huseg;      // pinned host, nseg
	int grid;              // blocks for grid-stride kernels
	cudaEvent_t mark[KBFS_NMARK]; // the level loop's time points
	int mark_of[KBFS_NMARK];      // the event that stands for each point
	int last_mark;         // the last point recorded (-1: none since set-up)
	u64 enq, enq_marked;   // calls that queued work: in all, and at the last recorded point
	kgpu_counters *hpub;   // mapped pinned host memory: the update's counters, published by its last block
	kgpu_counters *dpub;   // the same, as the device sees it
	u64 prev_root_row;     // local row of the last search's root here (KBFS_NONE: none)
	void *hvout;           // pinned host memory: the tree check's result
	u64 root;              // the search's root (global internal id), from reset()
	// td_lists (kgpu_topdown.cu k_td_list): lists = 1 when this engine's update keeps
	// the list of FRONT's nonzero words (one rank: COLFRONT is FRONT, RECV is ROWNEXT),
	// 2 when the peer transport keeps them (one grid column: each rank's list in every
	// column peer's window); list_ok: the last update's lists are whole (the next
	// top-down level may use them); lvl_list: this level's expansion used them (the
	// update may then walk KS_RLIST); the lists of the frontier COLFRONT holds now:
	// lnseg segments of KGPU_LIST_CAP word numbers (lseg words a segment), lcnt
	// their counts; last_tdeg: the frontier's total degree (~0: unknown), which
	// bounds the list kernel's edges and so its blocks.
	// lcap: the words a list holds here (KGPU_LIST_CAP; less with KBFS_CUDA_LIST_CAP).
	int lists, list_ok, lvl_list, lnseg;
	u32 lcap;
	int loop_grid;         // KBFS_CUDA_TD_LOOP: k_td_loop's co-resident blocks (0: not yet asked)
	kgpu_loop *hloop;      // pinned host copy of KS_LOOP
	const u32 *llist, *lcnt;
	u64 lseg, last_tdeg;
	int pl_keep;           // reset() leaves PL as it is on grids of several columns (a transport
			       // that reads only the rows found in the search: kgpu_peer)
	int pred_dirty;        // pred_finish: PRED holds entries no search wrote (set-up, a copy from
			       // the host): the next reset() clears it whole
	u64 prev_root_own;     // pred_finish: the last search's root, its offset here (KBFS_NONE: not mine)
};
// Every call that queues work on the engine's stream says so (marks with
// nothing queued since the last one reuse its event).
static inline cudaStream_t kgpu_queue(kgpu_state *st)
{
	st->enq++;
	return st->s;
}

kgpu_state *kgpu_state_of(kbfs_engine *e);
static inline u64 *kgpu_buf(kgpu_state *st, enum kbfs_buf w) { return (u64 *)st->slot[KS_BUF0 + w]; }

// ---- module entry points -------------------------------------------------------
// Top-down and bottom-up local steps (ROWNEXT cleared inside); nf bounds
// the bits set in COLFRONT.  With step_sync they wait and fill *out;
// otherwise they return at once, *out zero, the counters left on the
// device for the update to read.
void kgpu_top_down(kgpu_state *st, u64 level, u64 nf, kbfs_step *out);
// kengine.h td_run (KBFS_CUDA_TD_LOOP=1, one rank with td_lists): the small
// top-down levels from level on in one cooperative launch; the levels run
// (0: not here, the caller runs the level).
int kgpu_td_loop(kgpu_state *st, u64 level, u64 nf, u64 mu, double alpha, int max, kbfs_lrec *rec);
void kgpu_bottom_up(kgpu_state *st, u64 level, u64 nf, kbfs_step *out);
// One sub-step of a bottom-up level (kengine.h bu_substep): ROWVIS's row
// segment seg |= ring (nbw words of device memory; none when NULL), then
// bottom-up over that segment's rows.
void kgpu_bu_substep(kgpu_state *st, u64 level, int seg, const void *ring, kbfs_step *out);
// Each row's first CSR entry into KS_FIRST (set-up).
void kgpu_first_build(kgpu_state *st);
// b->colidx == NULL: the CSR's column indices made in KS_COLIDX from the
// CSC and rowptr already on the device (PL's memory as scratch, refilled);
// 0, KEXIT_DATA (the row offsets disagree with the CSC) or KEXIT_RESOURCE
// after kerror().
int kgpu_csr_build(kgpu_state *st);
// g.sym: the block copied once serves as both orientations; 0 when it is
// symmetric (the row offsets equal the column offsets, checked by the
// caller on the host, and every entry (r, c) has its (c, r): the sums of a
// hash of (r, c) and of (c, r) over the entries agree), else KEXIT_DATA
// after kerror
int kgpu_sym_check(kgpu_state *st);
// the tree check's first step (kengine.h tree_pack): PRED's levels into
// KS_VOWN, what the column gathers into KS_VLEV
void kgpu_tree_pack(kgpu_state *st, void **src, size_t *bytes);
// CUB temporary bytes each module needs at most.
size_t kgpu_td_cub_bytes(const kgpu_geom *g);
size_t kgpu_codec_cub_bytes(const kgpu_geom *g);
// Codec (the engine's pack and unpack).
void kgpu_pack(kgpu_state *st, enum kbfs_buf src, size_t nseg, enum kbfs_xmode mode, int compress, kbfs_desc *desc);
void kgpu_unpack(kgpu_state *st, enum kbfs_buf wire, size_t stride, size_t nseg, const kbfs_desc *desc,
		 enum kbfs_buf dst, enum kbfs_merge merge);
// The tree check (kgpu_valid.cu): its tile table (set-up), the bytes of its
// result, and the check itself (kengine.h tree_check).
void kgpu_valid_setup(kgpu_state *st);
size_t kgpu_valid_out_bytes(void);
void kgpu_tree_check(kgpu_state *st, u64 root, u64 out[3]);
// Read the counters (stream sync) into out fields; then zero them on device.
void kgpu_counters_read(kgpu_state *st, kgpu_counters *out);
// Device-resident levels between the GPUs of one host (kgpu_peer.cu; the
// lv_* functions of kengine.h behind the NCCL transport).  Setup is
// collective over world: with st->o.peer 0 it does nothing; otherwise,
// when every rank is on one host with a GPU of its own that reaches the
// others' memory, *out gets the state; when not, *out stays NULL (peer 1:
// kinfo says why) or KEXIT_USAGE after kerror() (peer 2).
struct kgpu_peer;
int kgpu_peer_setup(kgpu_state *st, kcomm *world, kgpu_peer **out);
void kgpu_peer_teardown(kgpu_peer *p);
void kgpu_peer_start(kgpu_peer *p);
void kgpu_peer_fold(kgpu_peer *p, u64 level);
void kgpu_peer_update(kgpu_peer *p, u64 level, int sv, u64 examined);
void kgpu_peer_counts(kgpu_peer *p, u64 cnt[6]);
// kengine.h lv_td_run (KBFS_CUDA_TD_LOOP=1, a one-column grid with td_lists):
// small top-down levels from level on in one cooperative launch a rank, the
// rounds inside it; the levels run (0: not here).
int kgpu_peer_td_loop(kgpu_peer *p, u64 level, u64 nf, u64 mu, double alpha, int max, kbfs_lrec *rec);
void kgpu_peer_pred(kgpu_peer *p);
void kgpu_peer_ring_give(kgpu_peer *p, int s, int seg);
void kgpu_peer_ring_take(kgpu_peer *p, int s, int seg);

// ---- device helpers ------------------------------------------------------------
#define KGPU_FULL 0xffffffffu

__device__ __forceinline__ int kgpu_lane() { return threadIdx.x & 31; }
// the GPU's nanosecond clock (%globaltimer), the same on every SM
__device__ __forceinline__ u64 kgpu_gtime()
{
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ ull kgpu_warp_sum(ull v)
{
	for (int o = 16; o; o >>= 1)
		v += __shfl_down_sync(KGPU_FULL, v, o);
	return v;
}

// inclusive warp scan
template <typename T> __device__ __forceinline__ T kgpu_warp_incl(T v)
{
	const int lane = kgpu_lane();
	for (int o = 1; o < 32; o <<= 1) {
		T n = __shfl_up_sync(KGPU_FULL, v, o);
		if (lane >= o)
			v += n;
	}
	return v;
}

// Warp-aggregated add of per-thread counts to a device counter: every
// thread of the block must call it (no thread may have returned).
__device__ __forceinline__ void kgpu_count(ull *ctr, ull v)
{
	v = kgpu_warp_sum(v);
	if (kgpu_lane() == 0 && v)
		atomicAdd(ctr, v);
}

// A level's counters zeroed for the next (one thread, once the level is
// read: the update's last block, k_td_loop's lead).
__device__ __forceinline__ void kgpu_counters_clear(volatile kgpu_counters *c)
{
	c->found = c->examined = c->tdeg = c->lfound = c->nsel = c->nv = c->ticket = 0;
	c->nwl = c->nfl = 0;
}

// td_lists: the lanes with has list x at list[*ctr++] while the count is at
// most cap (<= KGPU_LIST_CAP; one atomic a warp; once past it, none: the
// list is then incomplete and its count says so).  Every lane of the warp
// calls it.
__device__ __forceinline__ void kgpu_list_append(bool has, u32 x, u32 *list, ull *ctr, u32 cap)
{
	const unsigned m = __ballot_sync(KGPU_FULL, has);
	if (!m)
		return;
	const int lane = kgpu_lane();
	ull base = 0;
	if (lane == 0)
		base = *(volatile ull *)ctr > cap ? ~0ull : atomicAdd(ctr, (ull)__popc(m));
	base = __shfl_sync(KGPU_FULL, base, 0);
	if (has && base != ~0ull) {
		const ull k = base + (ull)__popc(m & ((1u << lane) - 1));
		if (k < cap)
			list[k] = x;
	}
}

// The set bits of a warp's 32 words, one word a lane (x), taken word by
// word: for word l (lane l's x) the lanes holding bit b = lane and b = lane
// + 32 call f(l, b, rank, y_l), rank = the bits of word l below b, y_l =
// lane l's y.  Coalesced: the lanes of a call touch neighbouring bits.
// Every lane of the warp calls it.
template <typename F> __device__ __forceinline__ void kgpu_warp_bits(u64 x, u64 y, F f)
{
	const int lane = kgpu_lane();
	unsigned todo = __ballot_sync(KGPU_FULL, x != 0);
	while (todo) {
		const int l = __ffs(todo) - 1;
		todo &= todo - 1;
		const u64 xx = __shfl_sync(KGPU_FULL, x, l), yl = __shfl_sync(KGPU_FULL, y, l);
		for (int h = 0; h < 2; h++) {
			const int b = lane + 32 * h;
			if ((xx >> b) & 1)
				f(l, b, (u64)__popcll(xx & ((1ull << b) - 1)), yl);
		}
	}
}

// The sum of tdeg over the set bits of a warp's 32 words (x, one a lane;
// word l's bit b is vertex (w0 + l) * 64 + b), the words with bits taken B
// at a time: the lanes load entries lane and lane + 32 of each of the B
// words before adding any, so B words' loads are in flight together.  One
// word at a time (B = 1), a chunk of 32 dense words is 32 trips to memory
// in a row, and the hub words at the start of every block (kpart's degree
// order) make that one warp's path the update's, whatever the number of
// GPUs.  f(l, b, yb) runs for each set bit too, yb that bit of word l's y
// (a second mask a lane, shuffled along when Y; else 0).  Every lane calls it.
template <int B, bool Y, typename T, typename F>
__device__ __forceinline__ ull kgpu_warp_tdeg_b(u64 x, u64 y, u64 w0, const T *__restrict__ tdeg, F f)
{
	const int lane = kgpu_lane();
	unsigned todo = __ballot_sync(KGPU_FULL, x != 0);
	ull td = 0;
	while (todo) {
		T v[2 * B];
#pragma unroll
		for (int k = 0; k < B; k++) {
			const int l = todo ? __ffs(todo) - 1 : 0; // todo is the warp's: the same in every lane
			const u64 xx = todo ? __shfl_sync(KGPU_FULL, x, l) : 0;
			u64 yy = 0;
			if constexpr (Y)
				yy = __shfl_sync(KGPU_FULL, y, l);
			todo &= todo - 1;
			const u64 base = (w0 + (u64)l) * 64;
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int b = lane + 32 * h;
				const bool on = (xx >> b) & 1;
				v[2 * k + h] = on ? tdeg[base + (u64)b] : (T)0;
				if (on)
					f(l, b, (int)((yy >> b) & 1));
			}
		}
#pragma unroll
		for (int k = 0; k < 2 * B; k++)
			td += v[k];
	}
	return td;
}

// kgpu_warp_tdeg_b with B = batch (1, 4 or 8; kgpu_opts.tdeg_batch), y
// shuffled along when Y.
template <bool Y = false, typename T, typename F>
__device__ __forceinline__ ull kgpu_warp_tdeg(int batch, u64 x, u64 y, u64 w0, const T *__restrict__ tdeg, F f)
{
	switch (batch) {
	case 1:
		return kgpu_warp_tdeg_b<1, Y>(x, y, w0, tdeg, f);
	case 4:
		return kgpu_warp_tdeg_b<4, Y>(x, y, w0, tdeg, f);
	default:
		return kgpu_warp_tdeg_b<8, Y>(x, y, w0, tdeg, f);
	}
}

// td_lists: the first part of a list level's owner update (one block): for
// each listed word x = rl[k] (k < nw) the new bits n = recv & ~ownvis, RECV
// cleared as it is read, OWNVIS |= n, sN[k] = n; found and td (tdeg over
// n's bits) grow.
template <typename T>
__device__ void kgpu_list_take(u64 *__restrict__ recv, u64 *__restrict__ ownvis, const T *__restrict__ tdeg,
			       const u32 *__restrict__ rl, u32 nw, u64 *sN, ull &found, ull &td)
{
	for (u32 k = threadIdx.x; k < nw; k += blockDim.x) {
		const u32 x = rl[k];
		const u64 o = ownvis[x], n = recv[x] & ~o;
		recv[x] = 0;
		if (n)
			ownvis[x] = o | n;
		sN[k] = n;
		found += __popcll(n);
		for (u64 m = n; m; m &= m - 1)
			td += tdeg[(u64)x * 64 + (__ffsll((long long)m) - 1)];
	}
}

// A list level's owner update (td_lists, one block): the words of RECV the
// expansion turned nonzero (rl, cnt->nwl of them) instead of every word;
// FRONT's old nonzero words (fl) cleared, the new ones set and listed in
// fl; RECV's words cleared as they are read.  (kgpu_engine.cu's k_update
// and kgpu_topdown.cu's k_td_loop.)
template <typename T>
__device__ void kgpu_list_update(u64 *__restrict__ recv, u64 *__restrict__ ownvis, u64 *__restrict__ front,
			    const T *__restrict__ tdeg, const u32 *__restrict__ rl, u32 *__restrict__ fl, u32 nw,
			    ull &found, ull &td)
{
	__shared__ u64 sN[KGPU_LIST_CAP];
	__shared__ u32 sNew;
	kgpu_list_take(recv, ownvis, tdeg, rl, nw, sN, found, td);
	const u32 nold = fl[0];
	if (threadIdx.x == 0)
		sNew = 0;
	__syncthreads();
	for (u32 k = threadIdx.x; k < nold; k += blockDim.x)
		front[fl[1 + k]] = 0;
	__syncthreads();
	for (u32 k = threadIdx.x; k < nw; k += blockDim.x)
		if (sN[k]) {
			front[rl[k]] = sN[k];
			fl[1 + atomicAdd(&sNew, 1u)] = rl[k];
		}
	__syncthreads();
	if (threadIdx.x == 0)
		fl[0] = sNew;
}

// The owner update over every word (all blocks, grid-stride; kgpu_engine.cu's
// k_update, k_td_loop): new = RECV & ~OWNVIS; OWNVIS |= new; FRONT = new.  A
// warp loads 32 consecutive words, one a lane, then takes the words with new
// bits batch at a time (kgpu_warp_tdeg), its lanes summing tdeg of bits l
// and l + 32 (coalesced).
// With fl (td_lists): RECV cleared as it is read, the new nonzero words
// listed at fl + 1 (cnt->nfl counts them, the first cap kept).
template <typename T>
__device__ void kgpu_update_words(u64 *__restrict__ recv, u64 *__restrict__ ownvis, u64 *__restrict__ front,
				  const T *__restrict__ tdeg, u64 nbw, u32 *__restrict__ fl, u32 cap, kgpu_counters *cnt,
				  int batch, ull &found, ull &td)
{
	const int lane = threadIdx.x & 31;
	const u64 gw = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
	for (u64 w0 = gw * 32; w0 < nbw; w0 += nwarps * 32) {
		const u64 w = w0 + lane;
		u64 n = 0;
		if (w < nbw) {
			const u64 o = ownvis[w], r = recv[w];
			n = r & ~o;
			if (fl && r)
				recv[w] = 0;
			if (n)
				ownvis[w] = o | n;
			front[w] = n;
		}
		if (fl)
			kgpu_list_append(n != 0, (u32)w, fl + 1, &cnt->nfl, cap);
		found += __popcll(n);
		td += kgpu_warp_tdeg(batch, n, 0, w0, tdeg, [](int, int, int) {});
	}
}

// position of the k-th (0-based) set bit of x (k < popc(x))
__device__ __forceinline__ int kgpu_select32(u32 x, int k)
{
	int pos = 0;
	for (int s = 16; s; s >>= 1) {
		int c = __popc(x & ((1u << s) - 1));
		if (k >= c) {
			k -= c;
			x >>= s;
			pos += s;
		}
	}
	return pos;
}
__device__ __forceinline__ int kgpu_select64(u64 x, int k)
{
	u32 lo = (u32)x;
	int c = __popc(lo);
	return k < c ? kgpu_select32(lo, k) : 32 + kgpu_select32((u32)(x >> 32), k - c);
}

// number of elements of a[0..n) that are <= x (a sorted ascending)
template <typename T> __device__ __forceinline__ u64 kgpu_upper_bound(const T *a, u64 n, u64 x)
{
	u64 lo = 0, hi = n;
	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;
		if ((u64)a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline int kgpu_blocks(u64 items, int per_block, int cap)
{
	u64 b = (items + per_block - 1) / per_block;
	if (b < 1)
		b = 1;
	return b > (u64)cap ? cap : (int)b;
}

#endif

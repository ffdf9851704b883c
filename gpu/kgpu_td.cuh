// kgpu_td.cuh: the top-down expansion's device pieces that kgpu_topdown.cu's
// kernels and kgpu_peer.cu's loop of small levels (KBFS_CUDA_TD_LOOP) share:
// the expansion's view (td_ctx), a row's visit, a tile of edges, the small
// frontier's staged tiles, a list level's body, a grid barrier of a
// cooperative launch and the loop's decision; then the loop's host side
// (its grid, launch, records, the 8 width combinations).  Each file that
// includes it gets its own copy (one translation unit has all device code).
#ifndef KGPU_TD_CUH
#define KGPU_TD_CUH

#include "kgpu_internal.cuh"

#include <cub/cub.cuh>

namespace {

enum { TD_BLOCK = 256, TD_SMALL = 1024 };

template <typename Idx, typename Off> struct td_ctx {
	const Off *__restrict__ colptr;
	const Idx *__restrict__ rowidx;
	u64 *rowvis, *rownext, *pl;
	u64 lvl;       // level << 48
	u64 col_first; // global id of local column 0
	kgpu_counters *cnt;
	u32 *wl;       // a list level (k_td_list): ROWNEXT's words turned nonzero go here (else NULL)
	u32 wlcap;     // ... the first wlcap of them
	int tbatch;    // the update's words a warp takes together (kgpu_opts.tdeg_batch)
};

template <typename Idx, typename Off>
__device__ __forceinline__ u32 td_visit(const td_ctx<Idx, Off> &c, u64 r, u64 col)
{
	const u64 w = r >> 6, m = 1ull << (r & 63);
	if (c.rowvis[w] & m)
		return 0;
	if (atomicOr((ull *)&c.rowvis[w], (ull)m) & m)
		return 0;
	// a list level starts with ROWNEXT all zero, so the thread that finds a
	// word zero is its only first writer: it lists the word for the update
	if (!atomicOr((ull *)&c.rownext[w], (ull)m) && c.wl) {
		const ull k = atomicAdd(&c.cnt->nwl, 1ull);
		if (k < c.wlcap)
			c.wl[k] = (u32)w;
	}
	c.pl[r] = c.lvl | (c.col_first + col);
	return 1;
}

// The edges [e0, e1) of a tile that this thread takes (ITEMS, interleaved
// by the block size), all rowidx loads issued before any test.  The tile's
// columns are staged: sS their first edges (n of them, ascending), sB
// colptr - sS (edge e sits at rowidx[e + sB]), sC the column.  Returns the
// rows this thread visited first.
template <typename Idx, typename Off, int ITEMS, typename P>
__device__ __forceinline__ ull td_tile(const td_ctx<Idx, Off> &c, u64 e0, u64 e1, const P *sS, int n, const Off *sB,
				       const Idx *sC)
{
	Idx r[ITEMS], p[ITEMS];
#pragma unroll
	for (int it = 0; it < ITEMS; it++) {
		const u64 e = e0 + threadIdx.x + (u64)it * TD_BLOCK;
		r[it] = 0;
		p[it] = 0;
		if (e < e1) {
			int a = 0, z = n - 1; // the last k with sS[k] <= e
			while (a < z) {
				const int m = (a + z + 1) >> 1;
				if ((u64)sS[m] <= e)
					a = m;
				else
					z = m - 1;
			}
			r[it] = c.rowidx[(Off)((Off)e + sB[a])];
			p[it] = sC[a];
		}
	}
	ull found = 0;
#pragma unroll
	for (int it = 0; it < ITEMS; it++)
		if (e0 + threadIdx.x + (u64)it * TD_BLOCK < e1)
			found += td_visit(c, r[it], p[it]);
	return found;
}

// The common end of k_td_small and k_td_list: d[q] is the degree of the
// staged column k = threadIdx.x * PER + q (sC[k], k < nv, staged by this
// thread); the degrees' exclusive scan into sS, sB, then the tiles of the
// nv columns' edges.  Returns their count.
template <typename Idx, typename Off, int ITEMS, int PER, typename Scan>
__device__ __forceinline__ u64 td_small_tiles(const td_ctx<Idx, Off> &c, typename Scan::TempStorage &tmp, u64 (&d)[PER],
					      int nv, u64 *sS, Off *sB, const Idx *sC)
{
	u64 total;
	Scan(tmp).ExclusiveSum(d, d, total);
#pragma unroll
	for (int q = 0; q < PER; q++) {
		const int k = threadIdx.x * PER + q;
		if (k < nv) {
			sS[k] = d[q];
			sB[k] = (Off)(c.colptr[sC[k]] - (Off)d[q]);
		}
	}
	if (threadIdx.x == 0)
		sS[nv] = total;
	__syncthreads();
	constexpr int TILE = TD_BLOCK * ITEMS;
	const u64 E = total;
	ull found = 0;
	for (u64 t = blockIdx.x; t * TILE < E; t += gridDim.x) {
		const u64 e0 = t * TILE, e1 = E - e0 < TILE ? E : e0 + TILE;
		found += td_tile<Idx, Off, ITEMS>(c, e0, e1, sS, nv, sB, sC);
	}
	kgpu_count(&c.cnt->lfound, found);
	return total;
}

// A list level: a frontier of at most TD_SMALL columns whose nonzero words
// of F are listed (nseg segments of KGPU_LIST_CAP word numbers, counts in
// cnts, segment s's words at F + s * segw): every block stages the
// frontier's columns with edges from the lists (no pass over F, no
// k_td_collect), then works as k_td_small; td_visit lists ROWNEXT's words
// it turns nonzero (c.wl), so the update need not pass over ROWNEXT
// either.  ROWNEXT is all zero at the start (every update clears the words
// it reads).  Block 0 counts examined.
template <typename Idx, typename Off, int ITEMS>
__device__ __forceinline__ void td_list_body(const td_ctx<Idx, Off> &c, const u64 *__restrict__ colfront,
					     const u32 *__restrict__ lists, const u32 *__restrict__ cnts, int nseg,
					     u64 segw)
{
	constexpr int PER = TD_SMALL / TD_BLOCK;
	typedef cub::BlockScan<u64, TD_BLOCK> Scan;
	typedef cub::BlockScan<u32, TD_BLOCK> ScanU;
	__shared__ union {
		typename Scan::TempStorage s;
		typename ScanU::TempStorage u;
	} tmp;
	__shared__ u64 sS[TD_SMALL + 1]; // the degrees, then their exclusive prefix
	__shared__ Off sB[TD_SMALL];     // colptr[col] - prefix: edge e sits at rowidx[e + sB]
	__shared__ Idx sC[TD_SMALL];     // the column
	__shared__ u32 sOff[KGPU_LIST_SEGS + 1];
	if (threadIdx.x == 0) {
		u32 a = 0;
		for (int s = 0; s < nseg; s++) {
			sOff[s] = a;
			a += cnts[s];
		}
		sOff[nseg] = a;
	}
	__syncthreads();
	const u32 nw = sOff[nseg] < TD_SMALL ? sOff[nseg] : TD_SMALL; // <= nf <= TD_SMALL words
	u64 word[PER], wi[PER];
	u32 mine = 0;
#pragma unroll
	for (int q = 0; q < PER; q++) {
		const u32 k = threadIdx.x * PER + q;
		word[q] = 0;
		wi[q] = 0;
		if (k < nw) {
			int s = 0;
			while (k >= sOff[s + 1])
				s++;
			wi[q] = (u64)s * segw + lists[(u64)s * KGPU_LIST_CAP + (k - sOff[s])];
			word[q] = colfront[wi[q]];
			for (u64 x = word[q]; x; x &= x - 1) {
				const u64 col = wi[q] * 64 + (__ffsll((long long)x) - 1);
				mine += c.colptr[col + 1] != c.colptr[col];
			}
		}
	}
	u32 pos, nvt;
	ScanU(tmp.u).ExclusiveSum(mine, pos, nvt);
#pragma unroll
	for (int q = 0; q < PER; q++)
		for (u64 x = word[q]; x; x &= x - 1) {
			const u64 col = wi[q] * 64 + (__ffsll((long long)x) - 1);
			const Off d = c.colptr[col + 1] - c.colptr[col];
			if (d && pos < TD_SMALL) {
				sC[pos] = (Idx)col;
				sS[pos] = (u64)d;
				pos++;
			}
		}
	__syncthreads();
	const int nv = (int)(nvt < TD_SMALL ? nvt : TD_SMALL);
	u64 d[PER];
#pragma unroll
	for (int q = 0; q < PER; q++) {
		const int k = threadIdx.x * PER + q;
		d[q] = k < nv ? sS[k] : 0;
	}
	const u64 total = td_small_tiles<Idx, Off, ITEMS, PER, Scan>(c, tmp.s, d, nv, sS, sB, sC);
	if (blockIdx.x == 0 && threadIdx.x == 0 && total)
		atomicAdd(&c.cnt->examined, (ull)total);
}

// Every block of a cooperative launch waits here for all (bar: an arrival
// count and a generation, zero at the first use).  sys: each block's stores
// (peer memory too) are visible system-wide before it arrives, as
// kgpu_peer.cuh's last_block makes them.
__device__ __forceinline__ void grid_sync(unsigned *bar, bool sys = false)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned *gen = bar + 1;
		const unsigned g = *gen;
		if (sys)
			__threadfence_system();
		else
			__threadfence();
		if (atomicAdd(bar, 1u) == gridDim.x - 1) {
			atomicExch(bar, 0u);
			__threadfence();
			atomicAdd(bar + 1, 1u);
		} else {
			while (*gen == g)
				;
		}
		__threadfence();
	}
	__syncthreads();
}

// The expansion's view of the engine at a level (no list: wl NULL).
template <typename Idx, typename Off> td_ctx<Idx, Off> td_ctx_of(kgpu_state *st, u64 level)
{
	td_ctx<Idx, Off> c;
	c.colptr = (const Off *)st->slot[KS_COLPTR];
	c.rowidx = (const Idx *)st->slot[KS_ROWIDX];
	c.rowvis = kgpu_buf(st, KBFS_ROWVIS);
	c.rownext = kgpu_buf(st, KBFS_ROWNEXT);
	c.pl = kgpu_buf(st, KBFS_PL);
	c.lvl = level << KBFS_PARENT_BITS;
	c.col_first = st->g.col_first;
	c.cnt = st->cnt;
	c.wl = nullptr;
	c.wlcap = st->lcap;
	c.tbatch = st->o.tdeg_batch;
	return c;
}

// k_td_loop(_peer), after level k (block 0's first thread): whether the
// next level is the loop's too: found f in 1 .. TD_SMALL, the lists whole
// (lok), top-down by the level loop's rule (kbfs.c choose_direction: tdeg mf
// > (mu - mf) / alpha turns bottom-up; alpha 0: never), fewer than maxlv
// levels.  mu moves past the level.
__device__ __forceinline__ void loop_decide(kgpu_loop *L, int k, int maxlv, u64 f, u64 mf, u64 &mu, double alpha,
					    bool lok)
{
	mu = mu > mf ? mu - mf : 0;
	const bool stay_td = !(alpha > 0 && (double)mf > (double)mu / alpha);
	L->lok = lok;
	L->nlv = (unsigned)(k + 1);
	L->cont = f > 0 && f <= TD_SMALL && lok && stay_td && k + 1 < maxlv;
	__threadfence();
}

// Every block, after the decision: whether to run the next level.
__device__ __forceinline__ bool loop_next(kgpu_loop *L)
{
	grid_sync(L->bar);
	return *(volatile unsigned *)&L->cont != 0;
}

// ---- KBFS_CUDA_TD_LOOP, the host's part (one rank: kgpu_topdown.cu; the
// peer transport: kgpu_peer.cu) ----

// kern's co-resident blocks of TD_BLOCK threads (asked once; -1: none fit,
// the levels stay the host's).
template <typename K> int loop_grid_of(kgpu_state *st, K kern)
{
	if (!st->loop_grid) {
		int per = 0;
		CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, TD_BLOCK, 0));
		st->loop_grid = per * kgpu_sm_count();
		if (st->loop_grid > st->grid)
			st->loop_grid = st->grid;
		if (st->loop_grid < 1)
			st->loop_grid = -1;
	}
	return st->loop_grid;
}

// The cooperative launch of kern (args as cudaLaunchCooperativeKernel takes
// them) after the loop's barrier and decision are cleared.
static inline void loop_launch(kgpu_state *st, const void *kern, void **args)
{
	const cudaStream_t s = kgpu_queue(st);
	kgpu_loop *L = (kgpu_loop *)st->slot[KS_LOOP];
	CUDA_CHECK(cudaMemsetAsync(L, 0, offsetof(kgpu_loop, rec), s));
	CUDA_CHECK(cudaLaunchCooperativeKernel(kern, st->loop_grid, TD_BLOCK, args, 0, s));
}

// After the launch: its records into rec (the levels it ran, returned) and
// the engine's state after them.
static inline int loop_collect(kgpu_state *st, kbfs_lrec *rec)
{
	CUDA_CHECK(cudaMemcpyAsync(st->hloop, st->slot[KS_LOOP], sizeof *st->hloop, cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	const kgpu_loop *L = st->hloop;
	const int n = (int)L->nlv;
	for (int k = 0; k < n; k++) {
		const kgpu_loop_rec *r = &L->rec[k];
		rec[k].found = r->found;
		rec[k].tdeg = r->tdeg;
		rec[k].examined = r->examined;
		rec[k].bexpand = r->bexpand;
		rec[k].t_local = (double)(r->t1 - r->t0) * 1e-9;
		rec[k].t_update = (double)(r->t2 - r->t1) * 1e-9;
	}
	if (n) {
		st->list_ok = L->lok != 0;
		st->last_tdeg = L->rec[n - 1].tdeg;
		st->lvl_list = 0;
	}
	return n;
}

// run(Idx{}, Off{}, T{}) for the engine's index, offset and tdeg widths.
template <typename F> void loop_dispatch(const kgpu_geom &g, F run)
{
	if (g.idx64)
		g.off64 ? (g.tdeg64 ? run(u64{}, u64{}, u64{}) : run(u64{}, u64{}, u32{}))
			: (g.tdeg64 ? run(u64{}, u32{}, u64{}) : run(u64{}, u32{}, u32{}));
	else
		g.off64 ? (g.tdeg64 ? run(u32{}, u64{}, u64{}) : run(u32{}, u64{}, u32{}))
			: (g.tdeg64 ? run(u32{}, u32{}, u64{}) : run(u32{}, u32{}, u32{}));
}

// Whether a loop can take the level (both kinds; lists: the kind this one
// is); *max no more than a launch records.
static inline bool loop_can(kgpu_state *st, int lists, u64 nf, int *max)
{
	if (!st->o.td_loop || st->lists != lists || !st->list_ok || st->o.step_sync || st->o.kernel != KGPU_K_LB ||
	    nf > TD_SMALL || nf == 0 || *max < 1)
		return false;
	if (*max > KGPU_LOOP_MAX)
		*max = KGPU_LOOP_MAX;
	if (!st->hloop)
		CUDA_CHECK(cudaMallocHost((void **)&st->hloop, sizeof *st->hloop));
	return true;
}

} // namespace

#endif

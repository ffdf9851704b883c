// kgpu_topdown: the top-down local step — expand the column frontier F
// through the CSC columns into ROWNEXT, ROWVIS and PL.
//
// 1. The non-empty words of F are compacted into a word list (CUB
//    DeviceSelect), so nothing below touches an empty word.
// 2. The word list is cut into pieces of at most td_chunk words; for each
//    piece the frontier columns with at least one local edge become a
//    vertex list (count per word, CUB exclusive scan, fill), so every
//    scratch array is bounded by the piece, never by the edges.
//    When the frontier's size nf (known to the host from the last level)
//    is at most 64 * td_chunk, kernel lb skips the pieces and reads
//    nothing back: one pass over F gathers the columns with edges (their
//    count stays on the device), the degree scan runs over nf + 1
//    entries (an upper bound) and k_td_lb reads the true count, so the
//    step queues four launches and returns (no host wait).  When nf is at
//    most TD_SMALL (td_small, the default), the scan is not launched
//    either: each block of k_td_small scans the few degrees itself in
//    shared memory, so a small level costs two launches.  Larger
//    frontiers, the other kernels and step_sync read the word and vertex
//    counts back and walk the pieces from the host.
// 3. One of four expansions walks the piece's edges:
//    lb       exclusive scan of the degrees, then each CTA takes a tile of
//             edges, finds its vertex range by binary search (merge path),
//             stages the range in shared memory and every thread handles
//             ITEMS edges interleaved by the block size, issuing all its
//             rowidx loads before it tests any (Bisson);
//    merrill  one thread per vertex; vertices of >= 256 edges are walked by
//             the whole CTA, >= 32 by a warp, the rest gathered through a
//             CTA scan into shared memory (Merrill);
//    vertex   one thread per vertex (baseline);
//    vbfs     vertices cut into virtual vertices of at most K edges, one
//             thread each (baseline).
//    edge     no frontier list at all: one thread per stored edge of the
//             block (every CSC entry, in tiles whose columns are staged in
//             shared memory), testing its column in F and its row in
//             ROWVIS; each edge is stored both ways, so both directions
//             are tested (Kolganov's edge-list kernel; baseline).
// Visiting row r: test ROWVIS first and atomicOr only when the bit is clear
// (test-and-test-and-set); the thread that flips the bit owns the row:
// it sets ROWNEXT and writes PL[r] = level << 48 | parent.
#include "kgpu_td.cuh"

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

namespace {

struct nonzero_word {
	const u64 *f;
	__device__ __forceinline__ bool operator()(u32 w) const { return f[w] != 0; }
};

// ---- pieces -------------------------------------------------------------------

// wcnt[k] = frontier columns of word wlist[k] with local edges; wcnt[nw] = 0.
template <typename Off>
__global__ void k_piece_count(const u32 *__restrict__ wlist, u64 nw, const u64 *__restrict__ colfront,
			      const Off *__restrict__ colptr, u32 *__restrict__ wcnt)
{
	const u64 t0 = blockIdx.x * (u64)blockDim.x + threadIdx.x;
	for (u64 k = t0; k < nw; k += (u64)gridDim.x * blockDim.x) {
		const u64 w = wlist[k];
		u64 x = colfront[w];
		u32 n = 0;
		while (x) {
			const u64 col = w * 64 + (__ffsll((long long)x) - 1);
			x &= x - 1;
			n += colptr[col + 1] != colptr[col];
		}
		wcnt[k] = n;
	}
	if (t0 == 0)
		wcnt[nw] = 0;
}

// V[woff[k]..] = the columns of word wlist[k] with edges; S = their degree
// (SMODE 1), their virtual vertex count (SMODE 2) or untouched (SMODE 0).
template <typename Idx, typename Off, int SMODE>
__global__ void k_piece_fill(const u32 *__restrict__ wlist, u64 nw, const u64 *__restrict__ colfront,
			     const Off *__restrict__ colptr, const u32 *__restrict__ woff, Idx *__restrict__ V,
			     Off *__restrict__ S, u32 K, kgpu_counters *cnt)
{
	ull examined = 0;
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < nw; k += (u64)gridDim.x * blockDim.x) {
		const u64 w = wlist[k];
		u64 x = colfront[w];
		u64 o = woff[k];
		while (x) {
			const u64 col = w * 64 + (__ffsll((long long)x) - 1);
			x &= x - 1;
			const Off d = colptr[col + 1] - colptr[col];
			if (!d)
				continue;
			V[o] = (Idx)col;
			if (SMODE == 1)
				S[o] = d;
			else if (SMODE == 2)
				S[o] = (Off)((d + K - 1) / K);
			o++;
			examined += d;
		}
	}
	kgpu_count(&cnt->examined, examined);
}

// One pass over F for a frontier of at most 64 * td_chunk columns: the
// columns with local edges go to V (their degree to S) in any order, a
// warp reserving its places with one atomic on cnt->nv (zero since the
// last update); examined += their degrees.  Also clears ROWNEXT.
template <typename Idx, typename Off>
__global__ void k_td_collect(const u64 *__restrict__ colfront, u64 colw, const Off *__restrict__ colptr,
			     Idx *__restrict__ V, Off *__restrict__ S, u64 *__restrict__ rownext, u64 roww,
			     kgpu_counters *cnt)
{
	const int lane = threadIdx.x & 31;
	ull examined = 0;
	const u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < roww; w += stride)
		rownext[w] = 0; // ROWNEXT cleared here, before k_td_lb sets bits in it
	for (u64 w0 = blockIdx.x * (u64)blockDim.x; w0 < colw; w0 += stride) {
		const u64 w = w0 + threadIdx.x;
		const u64 x0 = w < colw ? colfront[w] : 0;
		u32 n = 0;
		for (u64 x = x0; x; x &= x - 1) {
			const u64 col = w * 64 + (__ffsll((long long)x) - 1);
			n += colptr[col + 1] != colptr[col];
		}
		const u32 incl = kgpu_warp_incl(n), total = __shfl_sync(KGPU_FULL, incl, 31);
		ull base = 0;
		if (lane == 31 && total)
			base = atomicAdd(&cnt->nv, (ull)total);
		base = __shfl_sync(KGPU_FULL, base, 31);
		u64 o = base + incl - n;
		for (u64 x = x0; x; x &= x - 1) {
			const u64 col = w * 64 + (__ffsll((long long)x) - 1);
			const Off d = colptr[col + 1] - colptr[col];
			if (!d)
				continue;
			V[o] = (Idx)col;
			S[o] = d;
			o++;
			examined += d;
		}
	}
	kgpu_count(&cnt->examined, examined);
}

// ---- expansions ---------------------------------------------------------------------

// nvp: the vertex count in device memory (else nv).
template <typename Idx, typename Off, int ITEMS>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_lb(td_ctx<Idx, Off> c, const Idx *__restrict__ V,
						    const Off *__restrict__ S, u64 nv, const ull *__restrict__ nvp)
{
	if (nvp)
		nv = *nvp;
	constexpr int TILE = TD_BLOCK * ITEMS;
	__shared__ Off sS[TILE + 1]; // S of the tile's vertices
	__shared__ Off sB[TILE + 1]; // colptr[col] - S: edge e sits at rowidx[e + sB]
	__shared__ Idx sC[TILE + 1]; // the column
	__shared__ u64 sLo, sHi;
	const u64 E = S[nv];
	ull found = 0;
	for (u64 t = blockIdx.x; t * TILE < E; t += gridDim.x) {
		const u64 e0 = t * TILE, e1 = E - e0 < TILE ? E : e0 + TILE;
		if (threadIdx.x == 0)
			sLo = kgpu_upper_bound(S, nv + 1, e0) - 1;
		if (threadIdx.x == 32)
			sHi = kgpu_upper_bound(S, nv + 1, e1 - 1) - 1;
		__syncthreads();
		const u64 lo = sLo;
		const int n = (int)(sHi - lo + 1); // <= TILE: every vertex has an edge
		for (int k = threadIdx.x; k < n; k += TD_BLOCK) {
			const Idx col = V[lo + k];
			const Off sv = S[lo + k];
			sS[k] = sv;
			sC[k] = col;
			sB[k] = (Off)(c.colptr[col] - sv);
		}
		__syncthreads();
		found += td_tile<Idx, Off, ITEMS>(c, e0, e1, sS, n, sB, sC);
		__syncthreads();
	}
	kgpu_count(&c.cnt->lfound, found);
}

// A frontier of at most TD_SMALL columns with edges (nv on the device, from
// k_td_collect): every block stages all of them, scans their degrees in
// shared memory, and takes tiles of TD_BLOCK * ITEMS edges in turn, each
// edge finding its column there by binary search.
template <typename Idx, typename Off, int ITEMS>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_small(td_ctx<Idx, Off> c, const Idx *__restrict__ V,
						       const Off *__restrict__ S, const ull *__restrict__ nvp)
{
	constexpr int PER = TD_SMALL / TD_BLOCK;
	typedef cub::BlockScan<u64, TD_BLOCK> Scan;
	__shared__ typename Scan::TempStorage tmp;
	__shared__ u64 sS[TD_SMALL + 1]; // exclusive prefix of the degrees
	__shared__ Off sB[TD_SMALL];     // colptr[col] - prefix: edge e sits at rowidx[e + sB]
	__shared__ Idx sC[TD_SMALL];     // the column
	const int nv = (int)*nvp;
	u64 d[PER];
#pragma unroll
	for (int q = 0; q < PER; q++) {
		const int k = threadIdx.x * PER + q;
		d[q] = k < nv ? (u64)S[k] : 0;
		if (k < nv)
			sC[k] = V[k];
	}
	td_small_tiles<Idx, Off, ITEMS, PER, Scan>(c, tmp, d, nv, sS, sB, sC);
}

template <typename Idx, typename Off, int ITEMS>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_list(td_ctx<Idx, Off> c, const u64 *__restrict__ colfront,
						      const u32 *__restrict__ lists, const u32 *__restrict__ cnts,
						      int nseg, u64 segw)
{
	td_list_body<Idx, Off, ITEMS>(c, colfront, lists, cnts, nseg, segw);
}

// KBFS_CUDA_TD_LOOP=1 (an experiment; one rank, td_lists): small top-down
// levels back to back in one cooperative launch, no host between them.  A
// level: k_td_list's body, a grid barrier, the owner update (block 0 on the
// lists when they fit, else every block over the words, as k_update), a
// barrier, then block 0 records the level (L->rec), zeroes the counters and
// decides whether the next level is again one for this loop: found in 1 ..
// TD_SMALL, its list whole, top-down by the level loop's rule (tdeg >
// (mu - tdeg) / alpha turns to bottom-up; alpha 0: never), fewer than maxlv
// levels; a barrier.  COLFRONT is FRONT and RECV is ROWNEXT (one rank).
template <typename Idx, typename Off, int ITEMS, typename T>
__global__ void __launch_bounds__(TD_BLOCK) k_td_loop(td_ctx<Idx, Off> c, u64 *__restrict__ front, u64 *__restrict__ ownvis,
						   const T *__restrict__ tdeg, u64 nbw, u32 *__restrict__ fl, u32 cap,
						   kgpu_loop *L, u64 level0, int maxlv, u64 mu, double alpha)
{
	const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
	for (int k = 0; k < maxlv; k++) {
		if (lead)
			L->rec[k].t0 = kgpu_gtime();
		c.lvl = (level0 + (u64)k) << KBFS_PARENT_BITS;
		td_list_body<Idx, Off, ITEMS>(c, front, fl + 1, fl, 1, nbw);
		grid_sync(L->bar);
		if (lead)
			L->rec[k].t1 = kgpu_gtime();
		ull found = 0, td = 0;
		const u32 nw = (u32)*(volatile ull *)&c.cnt->nwl;
		const bool lm = nw <= cap && *(volatile u32 *)fl <= cap; // fl[0] stays <= cap in list mode
		if (lm) {
			if (blockIdx.x == 0)
				kgpu_list_update(c.rownext, ownvis, front, tdeg, c.wl, fl, nw, found, td);
		} else {
			kgpu_update_words(c.rownext, ownvis, front, tdeg, nbw, fl, cap, c.cnt, c.tbatch, found, td);
		}
		kgpu_count(&c.cnt->found, found);
		kgpu_count(&c.cnt->tdeg, td);
		grid_sync(L->bar);
		if (lead) {
			volatile kgpu_counters *v = c.cnt;
			const ull f = v->found, mf = v->tdeg, nfl = v->nfl;
			if (!lm)
				fl[0] = nfl > cap ? cap + 1 : (u32)nfl;
			const bool lok = lm || nfl <= cap;
			kgpu_loop_rec *r = &L->rec[k];
			r->found = f;
			r->tdeg = mf;
			r->examined = v->examined;
			r->bexpand = 0;
			r->t2 = kgpu_gtime();
			kgpu_counters_clear(v);
			loop_decide(L, k, maxlv, f, mf, mu, alpha, lok);
		}
		if (!loop_next(L))
			break;
	}
}

// Every stored edge (CSC entry e of column col): col in F and the row not
// yet visited.  Tiles of TD_BLOCK * ITEMS entries; a tile's columns are
// found by binary search on colptr and staged when they are few.
template <typename Idx, typename Off, int ITEMS>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_edge(td_ctx<Idx, Off> c, const u64 *__restrict__ colfront,
						      u64 nnz, u64 ncols)
{
	constexpr int TILE = TD_BLOCK * ITEMS, SPAN = 2 * TILE;
	__shared__ Off sp[SPAN + 1];
	__shared__ u64 sLo, sHi;
	ull found = 0;
	for (u64 t = blockIdx.x; t * TILE < nnz; t += gridDim.x) {
		const u64 e0 = t * TILE, e1 = nnz - e0 < TILE ? nnz : e0 + TILE;
		__syncthreads(); // the last tile's readers are done
		if (threadIdx.x == 0)
			sLo = kgpu_upper_bound(c.colptr, ncols, e0) - 1;
		if (threadIdx.x == 32)
			sHi = kgpu_upper_bound(c.colptr, ncols, e1 - 1) - 1;
		__syncthreads();
		const u64 lo = sLo, n = sHi - lo + 1;
		const bool staged = n <= SPAN;
		if (staged)
			for (u64 x = threadIdx.x; x <= n; x += TD_BLOCK)
				sp[x] = c.colptr[lo + x];
		__syncthreads();
#pragma unroll
		for (int it = 0; it < ITEMS; it++) {
			const u64 e = e0 + threadIdx.x + (u64)it * TD_BLOCK;
			if (e >= e1)
				break;
			const u64 col = lo + (staged ? kgpu_upper_bound(sp, n, e) : kgpu_upper_bound(c.colptr + lo, n, e)) - 1;
			if (colfront[col >> 6] >> (col & 63) & 1)
				found += td_visit(c, (u64)c.rowidx[e], col);
		}
	}
	kgpu_count(&c.cnt->lfound, found);
}

template <typename Idx, typename Off>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_merrill(td_ctx<Idx, Off> c, const Idx *__restrict__ V, u64 nv)
{
	typedef cub::BlockScan<u32, TD_BLOCK> Scan;
	__shared__ typename Scan::TempStorage scan_tmp;
	__shared__ int sOwner;
	__shared__ u64 sBeg, sEnd;
	__shared__ Idx sPar;
	__shared__ Off sPos[TD_BLOCK];
	__shared__ Idx sPP[TD_BLOCK];
	const int tid = threadIdx.x, lane = tid & 31;
	ull found = 0;
	for (u64 base = blockIdx.x * (u64)TD_BLOCK; base < nv; base += (u64)gridDim.x * TD_BLOCK) {
		const u64 v = base + tid;
		u64 beg = 0, end = 0;
		Idx col = 0;
		if (v < nv) {
			col = V[v];
			beg = c.colptr[col];
			end = c.colptr[col + 1];
		}
		// CTA gathering: one vertex of >= TD_BLOCK edges at a time, the whole block on it
		for (;;) {
			if (tid == 0)
				sOwner = -1;
			__syncthreads();
			if (end - beg >= TD_BLOCK)
				atomicMax(&sOwner, tid); // an election without a write-write race
			__syncthreads();
			const int w = sOwner;
			if (w < 0)
				break;
			if (tid == w) {
				sBeg = beg;
				sEnd = end;
				sPar = col;
				beg = end;
			}
			__syncthreads();
			const u64 b0 = sBeg, b1 = sEnd;
			const Idx p = sPar;
			for (u64 k = b0 + tid; k < b1; k += TD_BLOCK)
				found += td_visit(c, c.rowidx[k], p);
			__syncthreads();
		}
		// warp gathering: vertices of >= 32 edges
		for (;;) {
			const unsigned m = __ballot_sync(KGPU_FULL, end - beg >= 32);
			if (!m)
				break;
			const int l = __ffs(m) - 1;
			const u64 b0 = __shfl_sync(KGPU_FULL, beg, l), b1 = __shfl_sync(KGPU_FULL, end, l);
			const Idx p = __shfl_sync(KGPU_FULL, col, l);
			if (lane == l)
				beg = end;
			for (u64 k = b0 + lane; k < b1; k += 32)
				found += td_visit(c, c.rowidx[k], p);
		}
		// fine-grained: the rest (< 32 a vertex) through a CTA scan and shared memory
		const u32 rem = (u32)(end - beg);
		u32 off, total;
		Scan(scan_tmp).ExclusiveSum(rem, off, total);
		u32 done = 0;
		for (u32 rb = 0; rb < total; rb += TD_BLOCK) {
			while (done < rem && off + done < rb + TD_BLOCK) {
				sPos[off + done - rb] = (Off)(beg + done);
				sPP[off + done - rb] = col;
				done++;
			}
			__syncthreads();
			if (rb + tid < total)
				found += td_visit(c, c.rowidx[sPos[tid]], sPP[tid]);
			__syncthreads();
		}
	}
	kgpu_count(&c.cnt->lfound, found);
}

template <typename Idx, typename Off>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_vertex(td_ctx<Idx, Off> c, const Idx *__restrict__ V, u64 nv)
{
	ull found = 0;
	for (u64 v = blockIdx.x * (u64)blockDim.x + threadIdx.x; v < nv; v += (u64)gridDim.x * blockDim.x) {
		const Idx col = V[v];
		const u64 b1 = c.colptr[col + 1];
		for (u64 k = c.colptr[col]; k < b1; k++)
			found += td_visit(c, c.rowidx[k], col);
	}
	kgpu_count(&c.cnt->lfound, found);
}

template <typename Idx, typename Off>
__global__ void __launch_bounds__(TD_BLOCK, 4) k_td_vbfs(td_ctx<Idx, Off> c, const Idx *__restrict__ V,
						      const Off *__restrict__ S, u64 nv, u32 K)
{
	const u64 T = S[nv]; // virtual vertices
	ull found = 0;
	for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; t < T; t += (u64)gridDim.x * blockDim.x) {
		const u64 v = kgpu_upper_bound(S, nv + 1, t) - 1;
		const Idx col = V[v];
		const u64 b0 = c.colptr[col] + (t - S[v]) * K, end = c.colptr[col + 1];
		const u64 b1 = end - b0 < K ? end : b0 + K;
		for (u64 k = b0; k < b1; k++)
			found += td_visit(c, c.rowidx[k], col);
	}
	kgpu_count(&c.cnt->lfound, found);
}

// ---- host side ----------------------------------------------------------------------

template <typename T> u64 fetch(kgpu_state *st, const T *dptr)
{
	CUDA_CHECK(cudaMemcpyAsync(&st->hcnt->pad[0], dptr, sizeof(T), cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	T v;
	memcpy(&v, &st->hcnt->pad[0], sizeof v);
	return (u64)v;
}

template <typename T> void scan_inplace(kgpu_state *st, T *a, u64 n)
{
	size_t tb = st->cub_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(st->slot[KS_CUB], tb, a, a, (int64_t)n, st->s));
}

template <typename Idx, typename Off> void td_run(kgpu_state *st, u64 level, u64 nf, kbfs_step *out)
{
	const kgpu_geom &g = st->g;
	const cudaStream_t s = st->s;
	const u64 *colfront = kgpu_buf(st, KBFS_COLFRONT);
	u32 *wlist = (u32 *)st->slot[KS_WLIST], *wcnt = (u32 *)st->slot[KS_WCNT];
	Idx *V = (Idx *)st->slot[KS_CV];
	Off *S = (Off *)st->slot[KS_CS];
	const int kernel = st->o.kernel;
	const u32 K = (u32)st->o.vbfs_k;
	td_ctx<Idx, Off> c = td_ctx_of<Idx, Off>(st, level);

	memset(out, 0, sizeof *out);
	st->lvl_list = 0;
	if (st->lists && st->list_ok && !st->o.step_sync && kernel == KGPU_K_LB && nf <= TD_SMALL) {
		// a list level: no pass over F or ROWNEXT; blocks for the edges the
		// frontier's total degree bounds
		constexpr int ITEMS = sizeof(Idx) + sizeof(Off) > 8 ? 4 : 8;
		const u64 tiles = st->last_tdeg / (TD_BLOCK * ITEMS) + 1;
		const int nb = st->last_tdeg == ~0ull || tiles >= (u64)st->grid ? st->grid : (int)tiles;
		c.wl = (u32 *)st->slot[KS_RLIST];
		k_td_list<Idx, Off, ITEMS><<<nb, TD_BLOCK, 0, s>>>(c, colfront, st->llist, st->lcnt, st->lnseg, st->lseg);
		KGPU_LAUNCHED("k_td_list");
		st->lvl_list = 1;
		return;
	}
	if (!st->o.step_sync && kernel == KGPU_K_LB && nf <= 64 * g.chunk_words) {
		// the frontier's columns with edges gathered in one pass over F
		// (their count on the device), the degree scan sized by nf
		k_td_collect<Idx, Off><<<kgpu_blocks(g.colw > g.roww ? g.colw : g.roww, TD_BLOCK, st->grid), TD_BLOCK,
					 0, s>>>(colfront, g.colw, c.colptr, V, S, c.rownext, g.roww, st->cnt);
		KGPU_LAUNCHED("k_td_collect");
		if (st->o.td_small && nf <= TD_SMALL) {
			// the scan in shared memory, inside the expansion
			if constexpr (sizeof(Idx) + sizeof(Off) > 8)
				k_td_small<Idx, Off, 4><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, &st->cnt->nv);
			else
				k_td_small<Idx, Off, 8><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, &st->cnt->nv);
			KGPU_LAUNCHED("k_td_small");
			return;
		}
		scan_inplace(st, S, (nf ? nf : 1) + 1);
		if constexpr (sizeof(Idx) + sizeof(Off) > 8)
			k_td_lb<Idx, Off, 4><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, 0, &st->cnt->nv);
		else
			k_td_lb<Idx, Off, 8><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, 0, &st->cnt->nv);
		KGPU_LAUNCHED("k_td_lb");
		return;
	}
	CUDA_CHECK(cudaMemsetAsync(c.rownext, 0, g.roww * 8, s));
	if (kernel == KGPU_K_EDGE) {
		// every stored edge, whatever the frontier
		if (g.nnz) {
			if constexpr (sizeof(Idx) + sizeof(Off) > 8)
				k_td_edge<Idx, Off, 4><<<st->grid, TD_BLOCK, 0, s>>>(c, colfront, g.nnz, g.ncols);
			else
				k_td_edge<Idx, Off, 8><<<st->grid, TD_BLOCK, 0, s>>>(c, colfront, g.nnz, g.ncols);
			KGPU_LAUNCHED("k_td_edge");
		}
		if (st->o.step_sync) {
			kgpu_counters cn;
			kgpu_counters_read(st, &cn);
			out->found = cn.lfound;
		}
		out->examined = g.nnz;
		return;
	}
	size_t tb = st->cub_bytes;
	CUDA_CHECK(cub::DeviceSelect::If(st->slot[KS_CUB], tb, thrust::counting_iterator<u32>(0), wlist, &st->cnt->nsel,
					 (int64_t)g.colw, nonzero_word{colfront}, s));
	const u64 nsel = fetch(st, &st->cnt->nsel);
	for (u64 p0 = 0; p0 < nsel; p0 += g.chunk_words) {
		const u64 nw = nsel - p0 < g.chunk_words ? nsel - p0 : g.chunk_words;
		const u32 *wl = wlist + p0;
		const int wb = kgpu_blocks(nw, TD_BLOCK, st->grid);
		k_piece_count<Off><<<wb, TD_BLOCK, 0, s>>>(wl, nw, colfront, c.colptr, wcnt);
		KGPU_LAUNCHED("k_piece_count");
		scan_inplace(st, wcnt, nw + 1);
		const u64 nv = fetch(st, wcnt + nw);
		if (nv == 0)
			continue;
		const int vb = kgpu_blocks(nv, TD_BLOCK, st->grid);
		switch (kernel) {
		case KGPU_K_LB:
			k_piece_fill<Idx, Off, 1><<<wb, TD_BLOCK, 0, s>>>(wl, nw, colfront, c.colptr, wcnt, V, S, K, st->cnt);
			KGPU_LAUNCHED("k_piece_fill");
			scan_inplace(st, S, nv + 1);
			if constexpr (sizeof(Idx) + sizeof(Off) > 8)
				k_td_lb<Idx, Off, 4><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, nv, nullptr);
			else
				k_td_lb<Idx, Off, 8><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, nv, nullptr);
			KGPU_LAUNCHED("k_td_lb");
			break;
		case KGPU_K_MERRILL:
			k_piece_fill<Idx, Off, 0><<<wb, TD_BLOCK, 0, s>>>(wl, nw, colfront, c.colptr, wcnt, V, S, K, st->cnt);
			KGPU_LAUNCHED("k_piece_fill");
			k_td_merrill<Idx, Off><<<vb, TD_BLOCK, 0, s>>>(c, V, nv);
			KGPU_LAUNCHED("k_td_merrill");
			break;
		case KGPU_K_VERTEX:
			k_piece_fill<Idx, Off, 0><<<wb, TD_BLOCK, 0, s>>>(wl, nw, colfront, c.colptr, wcnt, V, S, K, st->cnt);
			KGPU_LAUNCHED("k_piece_fill");
			k_td_vertex<Idx, Off><<<vb, TD_BLOCK, 0, s>>>(c, V, nv);
			KGPU_LAUNCHED("k_td_vertex");
			break;
		case KGPU_K_VBFS:
			k_piece_fill<Idx, Off, 2><<<wb, TD_BLOCK, 0, s>>>(wl, nw, colfront, c.colptr, wcnt, V, S, K, st->cnt);
			KGPU_LAUNCHED("k_piece_fill");
			scan_inplace(st, S, nv + 1);
			k_td_vbfs<Idx, Off><<<st->grid, TD_BLOCK, 0, s>>>(c, V, S, nv, K);
			KGPU_LAUNCHED("k_td_vbfs");
			break;
		default: KBUG("kernel %d", kernel);
		}
	}
	if (st->o.step_sync) {
		kgpu_counters cn;
		kgpu_counters_read(st, &cn);
		out->found = cn.lfound;
		out->examined = cn.examined;
	}
}

template <typename Off> size_t td_cub_bytes(const kgpu_geom *g)
{
	size_t a = 0, b = 0, c = 0;
	CUDA_CHECK(cub::DeviceSelect::If(nullptr, a, thrust::counting_iterator<u32>(0), (u32 *)nullptr, (ull *)nullptr,
					 (int64_t)g->colw, nonzero_word{nullptr}));
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, (u32 *)nullptr, (u32 *)nullptr, (int64_t)(g->chunk_words + 1)));
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, c, (Off *)nullptr, (Off *)nullptr,
						 (int64_t)(64 * g->chunk_words + 1)));
	size_t m = a > b ? a : b;
	return m > c ? m : c;
}

} // namespace

size_t kgpu_td_cub_bytes(const kgpu_geom *g) { return g->off64 ? td_cub_bytes<u64>(g) : td_cub_bytes<u32>(g); }

void kgpu_top_down(kgpu_state *st, u64 level, u64 nf, kbfs_step *out)
{
	if (st->g.idx64)
		st->g.off64 ? td_run<u64, u64>(st, level, nf, out) : td_run<u64, u32>(st, level, nf, out);
	else
		st->g.off64 ? td_run<u32, u64>(st, level, nf, out) : td_run<u32, u32>(st, level, nf, out);
}

namespace {

template <typename Idx, typename Off, typename T>
void td_loop_run(kgpu_state *st, u64 level, u64 mu, double alpha, int max)
{
	constexpr int ITEMS = sizeof(Idx) + sizeof(Off) > 8 ? 4 : 8;
	auto kern = k_td_loop<Idx, Off, ITEMS, T>;
	if (loop_grid_of(st, kern) < 0)
		return;
	td_ctx<Idx, Off> c = td_ctx_of<Idx, Off>(st, level);
	c.wl = (u32 *)st->slot[KS_RLIST];
	u64 *front = kgpu_buf(st, KBFS_FRONT), *ownvis = kgpu_buf(st, KBFS_OWNVIS);
	const T *tdeg = (const T *)st->slot[KS_TDEG];
	u64 nbw = st->g.nbw;
	u32 *fl = (u32 *)st->slot[KS_FLIST], cap = st->lcap;
	kgpu_loop *L = (kgpu_loop *)st->slot[KS_LOOP];
	void *args[] = {&c, &front, &ownvis, &tdeg, &nbw, &fl, &cap, &L, &level, &max, &mu, &alpha};
	loop_launch(st, (const void *)kern, args);
	KGPU_LAUNCHED("k_td_loop");
}

} // namespace

int kgpu_td_loop(kgpu_state *st, u64 level, u64 nf, u64 mu, double alpha, int max, kbfs_lrec *rec)
{
	if (!loop_can(st, 1, nf, &max))
		return 0;
	loop_dispatch(st->g, [&](auto i, auto o, auto t) {
		td_loop_run<decltype(i), decltype(o), decltype(t)>(st, level, mu, alpha, max);
	});
	return st->loop_grid < 0 ? 0 : loop_collect(st, rec);
}

// kgpu_valid: the Graph500 check of a search's tree on the device, where the
// block already lives (the engine's tree_buf / tree_check, kengine.h).
//
// It is kval_partition_packed's test of the claimed levels (kval.h), run on
// the block's CSR: the search's packed entries (level << 48 | parent) are
// taken as a claim, and the claim holds when, on every rank,
//   - every column's parent is a vertex (< N) and its level is below 0xFFFE;
//   - every edge joins levels at most one apart, or two unreached vertices:
//     kpart stores each edge both ways, so the edge {u, v}, u < v, is
//     tested once, at the entry u of row v (on the rank that holds it);
//     with the degree order u is the busier end, whose level is more
//     likely cached;
//   - every reached row v but the root whose parent p is one of the block's
//     columns has p in its row at level <= d - 1 (so exactly d - 1: p's own
//     row holds v at level d): the tree edge p -> v is held by exactly this
//     rank, (owner_row(v), owner_col(p));
//   - the root's row holds (0, root).
// Then the levels are the depths, every tree edge is a graph edge and the
// tree spans the root's component; the reached owned rows and their tuple
// degrees give the edge count of rule (f).  A failure anywhere is not named
// here: the caller hands the entries to kval on the host, which decides and
// names it as kvalidate would.
//
// Work: one pass over the levels of the owned vertices (packed u64 -> u16,
// kgpu_tree_pack, before the column gathers them: 2 bytes a column, not
// 8), one
// pass over the CSR entries in tiles of KGPU_VTILE (the rows a tile spans
// come from a table built at set-up, their offsets and levels are staged in
// shared memory, and each entry finds its row there by binary search), one
// pass over the rows.  The levels array (2 bytes a column) is what the
// entries gather at random, half of them (u < v); with the degree order the
// hot columns are few.
#include "kgpu_internal.cuh"

namespace {

constexpr u32 UNR = 0xFFFFu; // level of an unreached column (NONE >> 48)
constexpr int VT_THREADS = 256;
constexpr int VT_ITEMS = KGPU_VTILE / VT_THREADS;
constexpr int VT_ROWS = 2 * KGPU_VTILE; // rows a tile may span to be staged in shared memory

struct vout {
	ull miss, reached, tdeg;
};

// lev[v] = level of owned vertex v (UNR unreached); a parent out of range
// or a level the u16 cannot hold with room for d + 1 is a miss.  The
// column then gathers the levels (2 bytes a vertex, not PRED's 8).
__global__ void k_vlev(const u64 *__restrict__ pred, uint16_t *__restrict__ lev, u64 nb, u64 N, vout *out)
{
	u32 miss = 0;
	for (u64 v = blockIdx.x * (u64)blockDim.x + threadIdx.x; v < nb; v += (u64)gridDim.x * blockDim.x) {
		u64 e = pred[v];
		u32 l = UNR;
		if (e != KBFS_NONE) {
			l = (u32)(e >> KBFS_PARENT_BITS);
			miss |= (e & KBFS_PARENT_MASK) >= N || l >= UNR - 1;
		}
		lev[v] = (uint16_t)l;
	}
	if (__any_sync(KGPU_FULL, miss) && kgpu_lane() == 0)
		atomicOr(&out->miss, 1ull);
}

// trow[t] = the row of entry t * KGPU_VTILE (the last row whose offset is
// <= it); trow[ntiles] = the row of the last entry.  Set-up, once.
template <typename Off> __global__ void k_vtrow(const Off *__restrict__ rowptr, u64 nrows, u64 nnz, u64 ntiles, u64 *trow)
{
	for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; t <= ntiles; t += (u64)gridDim.x * blockDim.x) {
		u64 k = t < ntiles ? t * KGPU_VTILE : nnz - 1;
		trow[t] = kgpu_upper_bound(rowptr, nrows, k) - 1;
	}
}

// local column of row entry e's parent, or ~0 when it is not a column here
// (or the row is unreached)
__device__ __forceinline__ u64 parent_col(u64 e, u64 col_first, u64 ncols)
{
	if (e == KBFS_NONE)
		return ~0ull;
	u64 lc = (e & KBFS_PARENT_MASK) - col_first;
	return lc < ncols ? lc : ~0ull;
}

// The entries of one tile: the edges {u, v}, u < v, at entry u of row v
// join levels at most one apart (or two unreached vertices), and the tree
// edge of each row is found (a bit in tree).  Row r is vertex r + voff,
// voff = nb * (m * (R - 1) + i) in row segment m = r / nb.
template <typename Idx, typename Off>
__global__ void __launch_bounds__(VT_THREADS)
	k_vedges(const Off *__restrict__ rowptr, const Idx *__restrict__ colidx, const u64 *__restrict__ trow,
		 const u64 *__restrict__ row, const uint16_t *__restrict__ lev, u64 *__restrict__ tree, u64 nnz,
		 u64 ntiles, u64 col_first, u64 ncols, u64 nb, int R, int i, vout *out)
{
	__shared__ Off sp[VT_ROWS + 1];
	__shared__ uint16_t sd[VT_ROWS];
	__shared__ u64 spc[VT_ROWS];
	u32 miss = 0;
	for (u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
		const u64 k0 = t * KGPU_VTILE, k1 = min(k0 + KGPU_VTILE, nnz);
		const u64 r0 = trow[t], r1 = trow[t + 1]; // rows r0..r1 (inclusive; r1 may be one past the tile)
		const u64 n = r1 - r0 + 1;
		const bool staged = n <= VT_ROWS;
		__syncthreads(); // the last tile's readers are done
		if (staged)
			for (u64 x = threadIdx.x; x <= n; x += VT_THREADS) {
				sp[x] = rowptr[r0 + x];
				if (x < n) {
					u64 e = row[r0 + x];
					sd[x] = (uint16_t)(e >> KBFS_PARENT_BITS);
					spc[x] = parent_col(e, col_first, ncols);
				}
			}
		__syncthreads();
		u64 seg_end = (r0 / nb + 1) * nb, voff = nb * ((r0 / nb) * (u64)(R - 1) + (u64)i);
#pragma unroll
		for (int it = 0; it < VT_ITEMS; it++) {
			const u64 k = k0 + threadIdx.x + (u64)it * VT_THREADS;
			if (k >= k1)
				break;
			u64 r, pc;
			u32 d;
			if (staged) {
				u64 x = kgpu_upper_bound(sp, n, k) - 1;
				r = r0 + x;
				d = sd[x];
				pc = spc[x];
			} else {
				r = r0 + kgpu_upper_bound(rowptr + r0, n, k) - 1;
				u64 e = row[r];
				d = (u32)(e >> KBFS_PARENT_BITS);
				pc = parent_col(e, col_first, ncols);
			}
			// rows only grow along a thread's entries
			for (; r >= seg_end; seg_end += nb)
				voff += nb * (u64)(R - 1);
			const u64 c = colidx[k];
			const bool edge = col_first + c < r + voff; // u < v: this entry tests the edge
			if (edge || c == pc) {
				const u32 lc = lev[c];
				if (edge)
					miss |= d == UNR ? lc != UNR : lc == UNR || lc + 1 < d || lc > d + 1;
				if (c == pc && lc < d)
					atomicOr((ull *)&tree[r >> 6], 1ull << (r & 63));
			}
		}
	}
	if (__any_sync(KGPU_FULL, miss) && kgpu_lane() == 0)
		atomicOr(&out->miss, 1ull);
}

// Each row: the root's entry, the tree edge of a row whose parent is a
// column here, and the reached owned rows with their tuple degrees.
template <typename Deg>
__global__ void k_vrows(const u64 *__restrict__ row, const u64 *__restrict__ tree, const Deg *__restrict__ tdeg,
			u64 nrows, u64 nb, int R, int i, int j, u64 root, u64 col_first, u64 ncols, vout *out)
{
	u32 miss = 0;
	ull reached = 0, td = 0;
	for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < nrows; r += (u64)gridDim.x * blockDim.x) {
		const u64 e = row[r];
		if (e == KBFS_NONE)
			continue;
		const u64 m = r / nb, k = r - m * nb, v = (m * (u64)R + (u64)i) * nb + k;
		if (m == (u64)j) {
			reached++;
			td += (ull)tdeg[k];
		}
		if (v == root)
			miss |= e != root; // (level 0, parent root)
		else if (parent_col(e, col_first, ncols) != ~0ull)
			miss |= !(tree[r >> 6] >> (r & 63) & 1);
	}
	if (__any_sync(KGPU_FULL, miss) && kgpu_lane() == 0)
		atomicOr(&out->miss, 1ull);
	kgpu_count(&out->reached, reached);
	kgpu_count(&out->tdeg, td);
}

template <typename Idx, typename Off> void check(kgpu_state *st, u64 root, u64 outv[3])
{
	const kgpu_geom &g = st->g;
	cudaStream_t s = kgpu_queue(st);
	vout *out = (vout *)st->slot[KS_VOUT];
	const u64 *row = (const u64 *)st->slot[KS_VROW];
	const uint16_t *lev = (const uint16_t *)st->slot[KS_VLEV];
	u64 *tree = (u64 *)st->slot[KS_VTREE];
	KASSERT(st->vpacked); // kgpu_tree_pack cleared out and found the levels' misses
	st->vpacked = 0;
	CUDA_CHECK(cudaMemsetAsync(tree, 0, g.roww * 8, s));
	if (g.nnz) {
		const u64 nt = g.vtiles;
		k_vedges<Idx, Off><<<(int)(nt < (u64)st->grid ? nt : (u64)st->grid), VT_THREADS, 0, s>>>(
			(const Off *)st->slot[KS_ROWPTR], (const Idx *)st->slot[KS_COLIDX], (const u64 *)st->slot[KS_VTROW],
			row, lev, tree, g.nnz, nt, g.col_first, g.ncols, g.nb, g.R, g.i, out);
		KGPU_LAUNCHED("k_vedges");
	}
	const int rb = kgpu_blocks(g.nrows, 256, st->grid);
	if (g.tdeg64)
		k_vrows<u64><<<rb, 256, 0, s>>>(row, tree, (const u64 *)st->slot[KS_TDEG], g.nrows, g.nb, g.R, g.i, g.j,
						root, g.col_first, g.ncols, out);
	else
		k_vrows<u32><<<rb, 256, 0, s>>>(row, tree, (const u32 *)st->slot[KS_TDEG], g.nrows, g.nb, g.R, g.i, g.j,
						root, g.col_first, g.ncols, out);
	KGPU_LAUNCHED("k_vrows");
	vout *h = (vout *)st->hvout;
	CUDA_CHECK(cudaMemcpyAsync(h, out, sizeof *h, cudaMemcpyDeviceToHost, s));
	CUDA_CHECK(cudaStreamSynchronize(s));
	outv[0] = h->miss != 0;
	outv[1] = h->reached;
	outv[2] = h->tdeg;
}

template <typename Off> void trow_build(kgpu_state *st)
{
	const kgpu_geom &g = st->g;
	k_vtrow<Off><<<kgpu_blocks(g.vtiles + 1, 256, st->grid), 256, 0, st->s>>>(
		(const Off *)st->slot[KS_ROWPTR], g.nrows, g.nnz, g.vtiles, (u64 *)st->slot[KS_VTROW]);
	KGPU_LAUNCHED("k_vtrow");
}

} // namespace

size_t kgpu_valid_out_bytes(void) { return sizeof(vout); }

void kgpu_tree_pack(kgpu_state *st, void **src, size_t *bytes)
{
	const kgpu_geom &g = st->g;
	cudaStream_t s = kgpu_queue(st);
	vout *out = (vout *)st->slot[KS_VOUT];
	uint16_t *own = (uint16_t *)st->slot[KS_VOWN]; // KS_VLEV itself on a column of one rank
	CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof *out, s));
	k_vlev<<<kgpu_blocks(g.nb, 256, st->grid), 256, 0, s>>>((const u64 *)kgpu_buf(st, KBFS_PRED), own, g.nb, g.N, out);
	KGPU_LAUNCHED("k_vlev");
	st->vpacked = 1;
	*src = own;
	*bytes = (size_t)g.nb * 2;
}

void kgpu_valid_setup(kgpu_state *st)
{
	if (!st->g.validate || !st->g.nnz)
		return;
	st->g.off64 ? trow_build<u64>(st) : trow_build<u32>(st);
}

void kgpu_tree_check(kgpu_state *st, u64 root, u64 out[3])
{
	if (st->g.idx64)
		st->g.off64 ? check<u64, u64>(st, root, out) : check<u64, u32>(st, root, out);
	else
		st->g.off64 ? check<u32, u64>(st, root, out) : check<u32, u32>(st, root, out);
}

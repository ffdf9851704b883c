// kgpu_csr: the CSR's column indices made on the device from the CSC that
// set-up copied there (a rank file of format 2 stores the CSC and rowptr,
// not colidx: kpart(5)), so the host neither makes nor copies them.
//
// Every entry (r, c) of the CSC takes a slot of row r by an atomic on the
// row's cursor (PL's memory, before set-up fills PL), a warp a column; then
// every row is sorted (CUB's segmented sort, in chunks of rows through one
// bounded extra buffer).  The columns of a row are distinct, so the sorted
// rows are exactly the host's transpose (kpart_transpose), whatever order
// the atomics took.  A row given more entries than rowptr says (a corrupt
// file whose CRCs were made right) raises a flag and drops the extra
// entries, never writing outside its row; as the rows' counts add up to
// nnz, no row over full means every row exactly full.
//
// A 1x1 block is symmetric (kpart stores each edge both ways, its rows and
// columns are the same vertices): its CSR is its CSC, nothing is made, and
// kgpu_sym_check only sums a hash of each entry (r, c) and of (c, r) over
// the entries, one streaming pass: the sums differ when an entry lacks its
// mirror (barring a collision of 64-bit sums), so a rank file whose CRCs
// were made right over an asymmetric block is still refused.
#include "kgpu_internal.cuh"

#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/transform_iterator.h>

namespace {

__device__ __forceinline__ u32 take(u32 *p) { return atomicAdd(p, 1u); }
__device__ __forceinline__ u64 take(u64 *p) { return (u64)atomicAdd((ull *)p, 1ull); }

template <typename Idx, typename Off>
__global__ void k_scatter(const Off *__restrict__ colptr, const Idx *__restrict__ rowidx,
			  const Off *__restrict__ rowptr, Off *cur, Idx *__restrict__ colidx, u64 ncols, u32 *bad)
{
	const u64 lane = threadIdx.x & 31, warps = (u64)gridDim.x * blockDim.x / 32;
	for (u64 c = (blockIdx.x * (u64)blockDim.x + threadIdx.x) / 32; c < ncols; c += warps) {
		const u64 end = colptr[c + 1];
		for (u64 k = colptr[c] + lane; k < end; k += 32) {
			const Idx r = rowidx[k];
			const Off at = take(cur + r);
			if (at < rowptr[r + 1])
				colidx[at] = (Idx)c;
			else
				*bad = 1;
		}
	}
}

// a chunk's row offsets, relative to its first entry
template <typename Off> struct rel {
	u64 base;
	__host__ __device__ u64 operator()(const Off &x) const { return (u64)x - base; }
};

template <typename Idx, typename Off> int build(kgpu_state *st)
{
	const kgpu_geom &g = st->g;
	const u64 *rp = st->b->rowptr; // the host's copy: the chunks
	enum : u64 { CH = 1ull << 24, SEG = 1ull << 20 };
	u64 most = 0;
	for (u64 r = 0; r < g.nrows; r++)
		most = rp[r + 1] - rp[r] > most ? rp[r + 1] - rp[r] : most;
	const u64 n = g.nnz < CH ? (most > g.nnz ? most : g.nnz) : (most > CH ? most : CH);
	Off *cur = (Off *)st->slot[KS_BUF0 + KBFS_PL];
	KASSERT(st->slot_bytes[KS_BUF0 + KBFS_PL] >= g.nrows * sizeof(Off));
	Idx *colidx = (Idx *)st->slot[KS_COLIDX], *alt = NULL;
	const Off *rowptr = (const Off *)st->slot[KS_ROWPTR];
	u32 *bad = NULL, hbad = 0;
	void *temp = NULL;
	size_t tb = 0;
	{
		cub::DoubleBuffer<Idx> db(NULL, NULL);
		auto it = thrust::make_transform_iterator(rowptr, rel<Off>{0});
		CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(NULL, tb, db, (::cuda::std::int64_t)n,
							      (::cuda::std::int64_t)SEG, it, it + 1, st->s));
	}
	if (cudaMalloc((void **)&alt, n * sizeof(Idx) + 256) != cudaSuccess || cudaMalloc(&temp, tb + 256) != cudaSuccess ||
	    cudaMalloc((void **)&bad, 256) != cudaSuccess) {
		cudaGetLastError();
		kerror("cuda: cannot allocate %llu bytes on GPU %d to make the CSR's column indices "
		       "(KBFS_CUDA_CSR_DEVICE=0: the host makes them)",
		       (ull)(n * sizeof(Idx) + tb), kgpu_current_gpu());
		cudaFree(alt);
		cudaFree(temp);
		return KEXIT_RESOURCE;
	}
	CUDA_CHECK(cudaMemcpyAsync(cur, rowptr, g.nrows * sizeof(Off), cudaMemcpyDeviceToDevice, st->s));
	CUDA_CHECK(cudaMemsetAsync(bad, 0, 4, st->s));
	if (g.nnz) {
		k_scatter<Idx, Off><<<kgpu_blocks(g.ncols * 32, 256, st->grid), 256, 0, st->s>>>(
			(const Off *)st->slot[KS_COLPTR], (const Idx *)st->slot[KS_ROWIDX], rowptr, cur, colidx, g.ncols, bad);
		KGPU_LAUNCHED("k_scatter");
	}
	for (u64 r0 = 0, r1; r0 < g.nrows; r0 = r1) {
		// the rows [r0, r1): at most n entries and SEG rows (at least one row)
		r1 = kpart_span_end(rp, r0, g.nrows - r0 > SEG ? r0 + SEG : g.nrows, n);
		const u64 base = rp[r0], m = rp[r1] - base;
		if (m < 2)
			continue;
		cub::DoubleBuffer<Idx> db(colidx + base, alt);
		auto it = thrust::make_transform_iterator(rowptr + r0, rel<Off>{base});
		size_t need = 0;
		CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(NULL, need, db, (::cuda::std::int64_t)m,
							      (::cuda::std::int64_t)(r1 - r0), it, it + 1, st->s));
		if (need > tb) { // not expected: the most items and rows were asked for first
			CUDA_CHECK(cudaStreamSynchronize(st->s));
			CUDA_CHECK(cudaFree(temp));
			CUDA_CHECK(cudaMalloc(&temp, need + 256));
			tb = need;
		}
		CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(temp, need, db, (::cuda::std::int64_t)m,
							      (::cuda::std::int64_t)(r1 - r0), it, it + 1, st->s));
		if (db.Current() != colidx + base)
			CUDA_CHECK(cudaMemcpyAsync(colidx + base, db.Current(), m * sizeof(Idx), cudaMemcpyDeviceToDevice,
						   st->s));
	}
	// PL as set-up leaves it (every row KBFS_NONE)
	CUDA_CHECK(cudaMemsetAsync(cur, 0xff, st->slot_bytes[KS_BUF0 + KBFS_PL], st->s));
	CUDA_CHECK(cudaMemcpyAsync(&hbad, bad, 4, cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	CUDA_CHECK(cudaFree(alt));
	CUDA_CHECK(cudaFree(temp));
	CUDA_CHECK(cudaFree(bad));
	if (hbad) {
		kerror("cuda: rank %d: the row offsets disagree with the rows of the columns (corrupt rank file)", g.rank);
		return KEXIT_DATA;
	}
	return 0;
}

// sum[0] += h(r, c), sum[1] += h(c, r) over every entry (r in column c),
// h = kpart_pair_hash as on the host: equal sums (mod 2^64) for a
// symmetric block, a warp a column
template <typename Idx, typename Off>
__global__ void k_symsum(const Off *__restrict__ colptr, const Idx *__restrict__ rowidx, u64 ncols, ull *sum)
{
	const u64 lane = threadIdx.x & 31, warps = (u64)gridDim.x * blockDim.x / 32;
	u64 a = 0, b = 0;
	for (u64 c = (blockIdx.x * (u64)blockDim.x + threadIdx.x) / 32; c < ncols; c += warps) {
		const u64 end = colptr[c + 1];
		for (u64 k = colptr[c] + lane; k < end; k += 32) {
			const u64 r = rowidx[k];
			a += kpart_pair_hash(r, c);
			b += kpart_pair_hash(c, r);
		}
	}
	for (int o = 16; o > 0; o /= 2) {
		a += __shfl_xor_sync(KGPU_FULL, a, o);
		b += __shfl_xor_sync(KGPU_FULL, b, o);
	}
	if (lane == 0 && (a | b)) {
		atomicAdd(&sum[0], (ull)a);
		atomicAdd(&sum[1], (ull)b);
	}
}

template <typename Idx, typename Off> int sym_check(kgpu_state *st)
{
	const kgpu_geom &g = st->g;
	if (!g.nnz)
		return 0;
	ull *sum = NULL, h[2] = {0, 0};
	if (cudaMalloc((void **)&sum, 256) != cudaSuccess) {
		cudaGetLastError();
		kerror("cuda: cannot allocate 256 bytes on GPU %d", kgpu_current_gpu());
		return KEXIT_RESOURCE;
	}
	CUDA_CHECK(cudaMemsetAsync(sum, 0, 2 * sizeof *sum, st->s));
	k_symsum<Idx, Off><<<kgpu_blocks(g.ncols * 32, 256, st->grid), 256, 0, st->s>>>(
		(const Off *)st->slot[KS_COLPTR], (const Idx *)st->slot[KS_ROWIDX], g.ncols, sum);
	KGPU_LAUNCHED("k_symsum");
	CUDA_CHECK(cudaMemcpyAsync(h, sum, sizeof h, cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	CUDA_CHECK(cudaFree(sum));
	if (h[0] != h[1]) {
		kerror("cuda: rank %d: %s", g.rank, kpart_csr_error(-2));
		return KEXIT_DATA;
	}
	return 0;
}

} // namespace

int kgpu_sym_check(kgpu_state *st)
{
	if (st->g.idx64)
		return st->g.off64 ? sym_check<u64, u64>(st) : sym_check<u64, u32>(st);
	return st->g.off64 ? sym_check<u32, u64>(st) : sym_check<u32, u32>(st);
}

int kgpu_csr_build(kgpu_state *st)
{
	if (st->g.idx64)
		return st->g.off64 ? build<u64, u64>(st) : build<u64, u32>(st);
	return st->g.off64 ? build<u32, u64>(st) : build<u32, u32>(st);
}

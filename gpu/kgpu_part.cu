// kgpu_part: kpart's primitives on the device (kpart --engine cuda), as
// the kpart_device of libcommon/graph/kpart_dev.h, whose comments give each
// call's contract; libcommon/graph/kpart_devbuild.c builds the blocks with them
// and tests/unit/test_kpartdev.c checks that logic with host loops in
// their place.
//
// Sorts, unique and scans are CUB's (64-bit item counts); expand, remap,
// swap, low and count_sorted are one grid-stride kernel each.  Everything
// runs on one stream; every call waits for its work before it returns, so
// the host's clock around it gives the device's time (a dozen calls a
// part: the waits cost nothing next to sorts of millions of keys).
#include "kgpu_internal.cuh"

extern "C" {
#include "kpart_dev.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <stdlib.h>
#include <string.h>

enum { BLOCK = 256 };

struct kgpu_part {
	cudaStream_t st;
	u64 *nsel;   // device: unique's count
	u64 *hsel;   // pinned host copy of it
	double comp_s, copy_s;
	char where[128];
};

static kgpu_part *Q(kpart_device *d) { return (kgpu_part *)d->base.impl; }

static unsigned blocks_for(u64 n)
{
	u64 b = (n + BLOCK - 1) / BLOCK, most = (u64)kgpu_sm_count() * 32;
	if (b > most)
		b = most;
	return (unsigned)(b ? b : 1);
}

// the call's work done: its time to the compute total
static void done(kpart_device *d, double t0)
{
	CUDA_CHECK(cudaStreamSynchronize(Q(d)->st));
	Q(d)->comp_s += ktime() - t0;
}

// ---- kernels ----------------------------------------------------------------

__global__ void k_expand(const void *x, int w, const u64 *start, u64 nseg, u64 s0, int bits, u64 n, u64 *keys)
{
	const u64 base = start[0];
	for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < n; e += (u64)gridDim.x * blockDim.x) {
		// the segment s with start[s] - base <= e < start[s+1] - base
		u64 lo = 0, hi = nseg - 1;
		while (lo < hi) {
			u64 mid = hi - (hi - lo) / 2;
			if (start[mid] - base <= e)
				lo = mid;
			else
				hi = mid - 1;
		}
		u64 v = w == 8 ? ((const u64 *)x)[e] : ((const u32 *)x)[e];
		keys[e] = (s0 + lo) << bits | v;
	}
}

__global__ void k_count_sorted(const u64 *keys, u64 n, int shift, u64 *cnt)
{
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
		u64 c = keys[k] >> shift;
		// the run of c is [first, last]: cnt[c] += (last + 1) - first
		if (k + 1 == n || keys[k + 1] >> shift != c)
			atomicAdd((ull *)&cnt[c], (ull)(k + 1));
		if (k == 0 || keys[k - 1] >> shift != c)
			atomicAdd((ull *)&cnt[c], (ull)(0 - k));
	}
}

__global__ void k_count_low(const u64 *keys, u64 n, u64 mask, u64 *cnt)
{
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x)
		atomicAdd((ull *)&cnt[keys[k] & mask], 1ull);
}

__global__ void k_remap(u64 *keys, u64 n, int lo, const u64 *hi, const u64 *low)
{
	const u64 mask = (1ull << lo) - 1;
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
		u64 x = keys[k];
		keys[k] = hi[x >> lo] << lo | low[x & mask];
	}
}

__global__ void k_swap(u64 *keys, u64 n, int lo, int hibits)
{
	const u64 mask = (1ull << lo) - 1;
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
		u64 x = keys[k];
		keys[k] = (x & mask) << hibits | x >> lo;
	}
}

__global__ void k_low(const u64 *keys, u64 n, u64 mask, void *out, int w)
{
	for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
		if (w == 8)
			((u64 *)out)[k] = keys[k] & mask;
		else
			((u32 *)out)[k] = (u32)(keys[k] & mask);
	}
}

// ---- the table -----------------------------------------------------------------

static void dev_close(kdev *d)
{
	kgpu_part *q = (kgpu_part *)d->impl;
	if (!q)
		return;
	if (q->st)
		CUDA_CHECK(cudaStreamSynchronize(q->st));
	kgpu_free(q->nsel);
	kgpu_free_host(q->hsel);
	if (q->st)
		CUDA_CHECK(cudaStreamDestroy(q->st));
	free(q);
	d->impl = NULL;
}

static int dev_open(kdev *d, kcomm *world)
{
	int rc = kcomm_agree(world, kgpu_bind(NULL));
	if (rc)
		return rc;
	kgpu_part *q = (kgpu_part *)kcalloc(1, sizeof *q);
	d->impl = q;
	CUDA_CHECK(cudaStreamCreateWithFlags(&q->st, cudaStreamNonBlocking));
	CUDA_CHECK(cudaMalloc(&q->nsel, sizeof(u64)));
	CUDA_CHECK(cudaHostAlloc(&q->hsel, sizeof(u64), cudaHostAllocDefault));
	snprintf(q->where, sizeof q->where, "cuda: GPU %d on %s", kgpu_current_gpu(), kcomm_host() ? kcomm_host() : "?");
	return 0;
}

static uint64_t dev_avail(kpart_device *d)
{
	const u64 reserve = KPART_DEV_RESERVE;
	u64 fr, tot, sharers = (u64)kgpu_gpu_sharers();
	kgpu_mem_info(&fr, &tot);
	fr /= sharers ? sharers : 1;
	return fr > reserve ? fr - reserve : 0;
}

static const char *dev_where(kpart_device *d) { return Q(d)->where; }

static void *dev_alloc(kpart_device *d, size_t bytes)
{
	void *p = NULL;
	if (cudaMalloc(&p, bytes) != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	return p;
}

static void dev_release(kpart_device *d, void *p) { CUDA_CHECK(cudaFree(p)); }

static void copy(kpart_device *d, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
	double t0 = ktime();
	kgpu_copy_staged(dst, src, bytes, kind, Q(d)->st);
	Q(d)->copy_s += ktime() - t0;
}

static void dev_put(kpart_device *d, void *dst, const void *host, size_t bytes)
{
	copy(d, dst, host, bytes, cudaMemcpyHostToDevice);
}

static void dev_get(kpart_device *d, void *host, const void *src, size_t bytes)
{
	copy(d, host, src, bytes, cudaMemcpyDeviceToHost);
}

static void dev_clear(kpart_device *d, void *p, size_t bytes)
{
	CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, Q(d)->st));
}

static size_t sort_bytes(u64 n)
{
	size_t b = 0;
	cub::DoubleBuffer<u64> db(nullptr, nullptr);
	CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, b, db, n, 0, 64));
	return b;
}

static size_t unique_bytes(u64 n)
{
	size_t b = 0;
	CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, b, (const u64 *)nullptr, (u64 *)nullptr, (u64 *)nullptr,
					     (::cuda::std::int64_t)n));
	return b;
}

static size_t scan_bytes(u64 n)
{
	size_t b = 0;
	CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, b, (u64 *)nullptr, n));
	return b;
}

static uint64_t dev_scratch_bytes(kpart_device *d, uint64_t n)
{
	size_t a = sort_bytes(n), b = unique_bytes(n), c = scan_bytes(n);
	size_t m = a > b ? a : b;
	return (m > c ? m : c) + 256;
}

static uint64_t *dev_sort(kpart_device *d, uint64_t *keys, uint64_t *tmp, uint64_t n, int bits, void *scratch)
{
	double t0 = ktime();
	cub::DoubleBuffer<u64> db(keys, tmp);
	size_t b = sort_bytes(n);
	if (n > 1)
		CUDA_CHECK(cub::DeviceRadixSort::SortKeys(scratch, b, db, n, 0, bits, Q(d)->st));
	done(d, t0);
	return db.Current();
}

static uint64_t dev_unique(kpart_device *d, const uint64_t *in, uint64_t *out, uint64_t n, void *scratch)
{
	double t0 = ktime();
	if (!n) {
		done(d, t0);
		return 0;
	}
	size_t b = unique_bytes(n);
	kgpu_part *q = Q(d);
	CUDA_CHECK(cub::DeviceSelect::Unique(scratch, b, in, out, q->nsel, (::cuda::std::int64_t)n, q->st));
	CUDA_CHECK(cudaMemcpyAsync(q->hsel, q->nsel, sizeof(u64), cudaMemcpyDeviceToHost, q->st));
	done(d, t0);
	return *q->hsel;
}

static void dev_scan(kpart_device *d, uint64_t *a, uint64_t n, void *scratch)
{
	double t0 = ktime();
	size_t b = scan_bytes(n);
	if (n > 1)
		CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch, b, a, n, Q(d)->st));
	done(d, t0);
}

// One grid-stride kernel over n items (none when n is 0), timed as compute.
#define DEV_LAUNCH(d, n, cond, kernel, ...)                                                                   \
	do {                                                                                                   \
		double t0_ = ktime();                                                                          \
		if ((n) && (cond)) {                                                                           \
			kernel<<<blocks_for(n), BLOCK, 0, Q(d)->st>>>(__VA_ARGS__);                             \
			KGPU_LAUNCHED(#kernel);                                                                \
		}                                                                                              \
		done(d, t0_);                                                                                  \
	} while (0)

static void dev_count_sorted(kpart_device *d, const uint64_t *keys, uint64_t n, int shift, uint64_t *cnt)
{
	DEV_LAUNCH(d, n, 1, k_count_sorted, keys, n, shift, cnt);
}

static void dev_count_low(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, uint64_t *cnt)
{
	DEV_LAUNCH(d, n, 1, k_count_low, keys, n, mask, cnt);
}

static void dev_expand(kpart_device *d, const void *x, int w, const uint64_t *start, uint64_t nseg, uint64_t s0,
		       int bits, uint64_t n, uint64_t *keys)
{
	DEV_LAUNCH(d, n, nseg, k_expand, x, w, start, nseg, s0, bits, n, keys);
}

static void dev_remap(kpart_device *d, uint64_t *keys, uint64_t n, int lo, const uint64_t *hi, const uint64_t *low)
{
	DEV_LAUNCH(d, n, 1, k_remap, keys, n, lo, hi, low);
}

static void dev_swap(kpart_device *d, uint64_t *keys, uint64_t n, int lo, int hibits)
{
	DEV_LAUNCH(d, n, 1, k_swap, keys, n, lo, hibits);
}

static void dev_low(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, void *out, int w)
{
	DEV_LAUNCH(d, n, 1, k_low, keys, n, mask, out, w);
}

static void dev_times(kpart_device *d, double *compute_s, double *copy_s)
{
	*compute_s = Q(d) ? Q(d)->comp_s : 0;
	*copy_s = Q(d) ? Q(d)->copy_s : 0;
}

extern "C" void kgpu_kpart_device(kpart_device *d)
{
	memset(d, 0, sizeof *d);
	d->base = kdev_make("cuda", 1, kgpu_device_count, dev_open, dev_close);
	d->avail = dev_avail;
	d->where = dev_where;
	d->alloc = dev_alloc;
	d->release = dev_release;
	d->put = dev_put;
	d->get = dev_get;
	d->clear = dev_clear;
	d->scratch_bytes = dev_scratch_bytes;
	d->sort = dev_sort;
	d->unique = dev_unique;
	d->scan = dev_scan;
	d->count_sorted = dev_count_sorted;
	d->count_low = dev_count_low;
	d->expand = dev_expand;
	d->remap = dev_remap;
	d->swap = dev_swap;
	d->low = dev_low;
	d->times = dev_times;
}

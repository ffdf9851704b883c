// kgpu_gen: the Kronecker generator on the device (kgen --engine cuda),
// as the kgen_device of kgen_dev.h.
//
// The arithmetic is libcommon/graph/kgen_edge.h, the CPU generator's own: the
// kernel is one call of kgen_edge_thread() per thread (a run of RUN
// consecutive edges: one skip to the run's first edge, then one
// matrix-vector step per edge, as the CPU's blocks do), so the edges are
// the CPU's by construction; tests/unit/test_kgen_edge.c runs that call on
// the host and t0640 compares the files.  The table of A^(2^(64+b)) lives
// in constant memory (every lane of a warp reads the same matrix).
//
// Two slots, each a device buffer and a pinned host buffer of `chunk`
// edges.  Kernels run one after another on one stream, copies to the host
// on another: the kernel of slot s waits for the copy out of its buffer
// (the chunk before last), the copy waits for its kernel.  So chunk k+1 is
// generated while chunk k is copied and written.  The host starts a slot
// again only after it has written (or sent) the slot's edges.  Events
// around each kernel and copy give the device's generation and copy times.
#include "kgpu_internal.cuh"

extern "C" {
#include "kgen_dev.h"
}
#include "kgen_edge.h"

#include <stdlib.h>
#include <string.h>

enum { RUN = 64,    // consecutive edges a thread makes: the skip costs about 5 edges' work
       BLOCK = 256, // threads a block
};

__constant__ kgen_mat5 kgpu_gen_tab64[64]; // A^(2^b * 2^64), b = 0..63

__global__ void __launch_bounds__(BLOCK) kgpu_gen_kernel(kgen_job job, u64 first, u64 n, u64 *uv)
{
	kgen_edge_thread(&job, kgpu_gen_tab64, first, n, RUN, blockIdx.x * (u64)blockDim.x + threadIdx.x, uv);
}

struct kgpu_gen {
	kgen_job job;
	u64 chunk;
	u64 *dbuf[2], *hbuf[2];
	cudaStream_t gen, copy;
	cudaEvent_t kb[2], ke[2], cb[2], ce[2]; // kernel begin/end, copy begin/end
	int pending[2];                         // started and not waited for
	double gen_s, copy_s;
};

static void release(kgpu_gen *q)
{
	if (!q)
		return;
	if (q->gen)
		CUDA_CHECK(cudaStreamSynchronize(q->gen));
	if (q->copy)
		CUDA_CHECK(cudaStreamSynchronize(q->copy));
	for (int s = 0; s < 2; s++) {
		cudaEvent_t *ev[4] = {&q->kb[s], &q->ke[s], &q->cb[s], &q->ce[s]};
		for (int e = 0; e < 4; e++)
			if (*ev[e])
				CUDA_CHECK(cudaEventDestroy(*ev[e]));
		kgpu_free(q->dbuf[s]);
		kgpu_free_host(q->hbuf[s]);
	}
	if (q->gen)
		CUDA_CHECK(cudaStreamDestroy(q->gen));
	if (q->copy)
		CUDA_CHECK(cudaStreamDestroy(q->copy));
	free(q);
}

static const char *gib(char *buf, size_t len, u64 n)
{
	snprintf(buf, len, "%.2f GiB", n / 1073741824.0);
	return buf;
}

// This rank's part of open, the GPU bound: plan, then allocate.
static int open_rank(kgpu_gen **out, const kgen_ctx *g, u64 chunk)
{
	*out = NULL;
	const u64 each = chunk * 16; // one slot's edges
	static_assert(sizeof(kgpu_gen_tab64) == 64 * sizeof(kgen_mat5), "kgen_device_bytes counts the table");
	const u64 sharers = (u64)kgpu_gpu_sharers();
	u64 fr, tot;
	kgpu_mem_info(&fr, &tot);
	const u64 need = kgen_device_bytes(chunk) * sharers;
	char a[32], b[32], c[32];
	if (need > fr) {
		kerror("cuda: GPU %d on %s has %s free but kgen needs %s (%llu rank%s): the two edge buffers of "
		       "%llu edges (%s each) do not fit; use fewer ranks per GPU, or --engine cpu",
		       kgpu_current_gpu(), kcomm_host() ? kcomm_host() : "?", gib(a, sizeof a, fr), gib(b, sizeof b, need),
		       (ull)sharers, sharers == 1 ? "" : "s sharing it", (ull)chunk, gib(c, sizeof c, each));
		return KEXIT_RESOURCE;
	}
	kgpu_gen *q = (kgpu_gen *)kcalloc(1, sizeof *q);
	q->job = kgen_job_of(g);
	q->chunk = chunk;
	for (int s = 0; s < 2; s++) {
		if (cudaMalloc(&q->dbuf[s], each) != cudaSuccess) {
			cudaGetLastError();
			kerror("cuda: GPU %d: cannot allocate the edge buffer of %s on the device", kgpu_current_gpu(),
			       gib(a, sizeof a, each));
			release(q);
			return KEXIT_RESOURCE;
		}
		if (cudaHostAlloc(&q->hbuf[s], each, cudaHostAllocDefault) != cudaSuccess) {
			cudaGetLastError();
			kerror("cuda: cannot allocate %s of pinned host memory for the edges", gib(a, sizeof a, each));
			release(q);
			return KEXIT_RESOURCE;
		}
		CUDA_CHECK(cudaEventCreate(&q->kb[s]));
		CUDA_CHECK(cudaEventCreate(&q->ke[s]));
		CUDA_CHECK(cudaEventCreate(&q->cb[s]));
		CUDA_CHECK(cudaEventCreate(&q->ce[s]));
	}
	CUDA_CHECK(cudaStreamCreateWithFlags(&q->gen, cudaStreamNonBlocking));
	CUDA_CHECK(cudaStreamCreateWithFlags(&q->copy, cudaStreamNonBlocking));
	CUDA_CHECK(cudaMemcpyToSymbol(kgpu_gen_tab64, kgen_pow2_table() + 64, sizeof(kgpu_gen_tab64)));
	*out = q;
	return 0;
}

static int dev_open(kdev *d, kcomm *world) { return kcomm_agree(world, kgpu_bind(NULL)); }

static int dev_alloc(kgen_device *d, kcomm *world, const kgen_ctx *g, uint64_t chunk)
{
	kgpu_gen *q = NULL;
	int rc = open_rank(&q, g, chunk);
	d->base.impl = q;
	return rc;
}

static void dev_start(kgen_device *d, int slot, uint64_t first, uint64_t n)
{
	kgpu_gen *q = (kgpu_gen *)d->base.impl;
	if (slot < 0 || slot > 1 || q->pending[slot] || n == 0 || n > q->chunk)
		KBUG("kgpu_gen: start of slot %d with %llu edges (pending %d, chunk %llu)", slot, (ull)n,
		     slot >= 0 && slot <= 1 ? q->pending[slot] : -1, (ull)q->chunk);
	const u64 threads = (n + RUN - 1) / RUN, blocks = (threads + BLOCK - 1) / BLOCK;
	// the buffer is free once the copy of its previous chunk is done
	CUDA_CHECK(cudaStreamWaitEvent(q->gen, q->ce[slot], 0));
	CUDA_CHECK(cudaEventRecord(q->kb[slot], q->gen));
	kgpu_gen_kernel<<<(unsigned)blocks, BLOCK, 0, q->gen>>>(q->job, first, n, q->dbuf[slot]);
	KGPU_LAUNCHED("kgpu_gen_kernel");
	CUDA_CHECK(cudaEventRecord(q->ke[slot], q->gen));
	CUDA_CHECK(cudaStreamWaitEvent(q->copy, q->ke[slot], 0));
	CUDA_CHECK(cudaEventRecord(q->cb[slot], q->copy));
	CUDA_CHECK(cudaMemcpyAsync(q->hbuf[slot], q->dbuf[slot], n * 16, cudaMemcpyDeviceToHost, q->copy));
	CUDA_CHECK(cudaEventRecord(q->ce[slot], q->copy));
	q->pending[slot] = 1;
}

static const uint64_t *dev_wait(kgen_device *d, int slot)
{
	kgpu_gen *q = (kgpu_gen *)d->base.impl;
	if (slot < 0 || slot > 1 || !q->pending[slot])
		KBUG("kgpu_gen: wait for slot %d, which was not started", slot);
	CUDA_CHECK(cudaEventSynchronize(q->ce[slot]));
	float kms = 0, cms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&kms, q->kb[slot], q->ke[slot]));
	CUDA_CHECK(cudaEventElapsedTime(&cms, q->cb[slot], q->ce[slot]));
	q->gen_s += kms / 1e3;
	q->copy_s += cms / 1e3;
	q->pending[slot] = 0;
	return q->hbuf[slot];
}

static void dev_times(kgen_device *d, double *gen_s, double *copy_s)
{
	const kgpu_gen *q = (const kgpu_gen *)d->base.impl;
	*gen_s = q ? q->gen_s : 0;
	*copy_s = q ? q->copy_s : 0;
}

static void dev_close(kdev *d)
{
	release((kgpu_gen *)d->impl);
	d->impl = NULL;
}

extern "C" void kgpu_kgen_device(kgen_device *d)
{
	memset(d, 0, sizeof *d);
	d->base = kdev_make("cuda", 1, kgpu_device_count, dev_open, dev_close);
	d->alloc = dev_alloc;
	d->start = dev_start;
	d->wait = dev_wait;
	d->times = dev_times;
}

// p2p: the ceilings of GPU-to-GPU exchanges inside one host, for the model
// of kbfs's multi-GPU level loop (share/bench/NOTES.md).  One process, one
// host thread per GPU (as one rank per GPU would launch), every pair of
// GPUs mapped for peer access.  Measures:
//   launch+sync   an empty kernel and cudaStreamSynchronize, from the host
//   launch gap    back-to-back empty kernels on one stream (device time each)
//   flag latency  one-way: a kernel stores a flag in a peer's memory, the
//                 peer's kernel spins on it and answers (ping-pong / 2)
//   barrier       every GPU stores a sequence number into every peer's flag
//                 slot and spins until all arrived (one kernel, in a loop)
//   exchange      what a level exchange costs launched from the host: a push
//                 kernel (stores of B bytes into each peer, then a release
//                 flag) and a wait kernel (acquire spin), per iteration on
//                 every GPU's stream, B from 8 bytes to 32 MiB
//   copy engine   cudaMemcpyPeerAsync of B bytes to each peer, then an event
//                 barrier, for comparison
// Build and run: share/bench/p2p.sh (nvcc), or
//   nvcc -O3 -std=c++17 -arch=sm_90 -o p2p share/bench/p2p.cu -lpthread
#include <cuda_runtime.h>

#include "../../gpu/kgpu_flag.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <vector>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "p2p: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,            \
				cudaGetErrorString(e_));                                           \
			exit(4);                                                                   \
		}                                                                                  \
	} while (0)

typedef unsigned long long ull;
enum { MAXG = 8 };

static double now_us()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

__global__ void k_empty() {}

// ping-pong: gpu a stores n into peer's flag, waits for its own flag == n
__global__ void k_ping(ull *mine, ull *peer, int iters, int first)
{
	for (int k = 1; k <= iters; k++) {
		if (first) {
			kgpu_flag_put(peer, k);
			while (kgpu_flag_get(mine) < (ull)k)
				;
		} else {
			while (kgpu_flag_get(mine) < (ull)k)
				;
			kgpu_flag_put(peer, k);
		}
	}
}

// barrier loop: flags[me] of every peer <- seq; wait all of mine
struct peers {
	ull *flag[MAXG]; // each GPU's flag array (MAXG slots), as this GPU addresses it
	char *buf[MAXG]; // each GPU's receive buffer (MAXG slots of cap bytes)
};
__global__ void k_barrier_loop(peers p, int me, int ng, ull seq0, int iters)
{
	const int lane = threadIdx.x;
	for (int k = 0; k < iters; k++) {
		const ull seq = seq0 + k;
		if (lane < ng && lane != me)
			kgpu_flag_put(p.flag[lane] + me, seq);
		if (lane < ng && lane != me)
			while (kgpu_flag_get(p.flag[me] + lane) < seq)
				;
		__syncwarp();
	}
}

// push: bytes from src into slot `me` of every peer's buffer, then (last
// block) a release flag in every peer; uint4 stores
__global__ void k_push(peers p, int me, int ng, const uint4 *src, ull bytes, ull cap, ull seq, unsigned *ticket)
{
	const ull n16 = bytes / 16;
	const ull stride = (ull)gridDim.x * blockDim.x;
	for (int d = 1; d < ng; d++) {
		const int to = (me + d) % ng;
		uint4 *dst = (uint4 *)(p.buf[to] + (ull)me * cap);
		for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < n16; i += stride)
			dst[i] = src[i];
	}
	__threadfence_system();
	__syncthreads();
	__shared__ bool last;
	if (threadIdx.x == 0)
		last = atomicAdd(ticket, 1u) == gridDim.x - 1;
	__syncthreads();
	if (last && threadIdx.x < ng && (int)threadIdx.x != me) {
		__threadfence_system();
		kgpu_flag_put(p.flag[threadIdx.x] + me, seq);
	}
	if (last && threadIdx.x == 0)
		*ticket = 0;
}
__global__ void k_wait(peers p, int me, int ng, ull seq)
{
	const int lane = threadIdx.x;
	if (lane < ng && lane != me)
		while (kgpu_flag_get(p.flag[me] + lane) < seq)
			;
}

struct gpu_ctx {
	int id, ng;
	cudaStream_t s;
	peers p;
	uint4 *src;
	unsigned *ticket;
	ull cap;
	// per-run parameters
	int mode, iters, blocks;
	ull bytes, seq0;
	pthread_barrier_t *bar;
	double us; // result: wall per iteration
	cudaEvent_t e0, e1;
	float dev_ms;
};

static void *worker(void *arg)
{
	gpu_ctx *c = (gpu_ctx *)arg;
	CK(cudaSetDevice(c->id));
	pthread_barrier_wait(c->bar);
	double t0 = now_us();
	CK(cudaEventRecord(c->e0, c->s));
	if (c->mode == 0) { // barrier loop in one kernel
		k_barrier_loop<<<1, 32, 0, c->s>>>(c->p, c->id, c->ng, c->seq0, c->iters);
	} else if (c->mode == 1) { // host-launched push + wait per iteration
		for (int k = 0; k < c->iters; k++) {
			k_push<<<c->blocks, 256, 0, c->s>>>(c->p, c->id, c->ng, c->src, c->bytes, c->cap, c->seq0 + k,
							     c->ticket);
			k_wait<<<1, 32, 0, c->s>>>(c->p, c->id, c->ng, c->seq0 + k);
		}
	} else if (c->mode == 2) { // host-launched push+wait, host sync every iteration (a level's readback)
		for (int k = 0; k < c->iters; k++) {
			k_push<<<c->blocks, 256, 0, c->s>>>(c->p, c->id, c->ng, c->src, c->bytes, c->cap, c->seq0 + k,
							     c->ticket);
			k_wait<<<1, 32, 0, c->s>>>(c->p, c->id, c->ng, c->seq0 + k);
			CK(cudaStreamSynchronize(c->s));
		}
	}
	CK(cudaEventRecord(c->e1, c->s));
	CK(cudaStreamSynchronize(c->s));
	c->us = (now_us() - t0) / c->iters;
	CK(cudaEventElapsedTime(&c->dev_ms, c->e0, c->e1));
	CK(cudaGetLastError());
	return NULL;
}

static double run_all(std::vector<gpu_ctx> &g, int mode, int iters, ull bytes, int blocks, ull *seq)
{
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)g.size());
	std::vector<pthread_t> th(g.size());
	for (auto &c : g) {
		c.mode = mode;
		c.iters = iters;
		c.bytes = bytes;
		c.blocks = blocks;
		c.seq0 = *seq;
		c.bar = &bar;
	}
	for (size_t k = 0; k < g.size(); k++)
		pthread_create(&th[k], NULL, worker, &g[k]);
	for (size_t k = 0; k < g.size(); k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&bar);
	*seq += (ull)iters + 1;
	double worst = 0;
	for (auto &c : g)
		worst = std::max(worst, (double)c.dev_ms * 1e3 / iters);
	return worst;
}

int main(int argc, char **argv)
{
	int ng = 0;
	CK(cudaGetDeviceCount(&ng));
	if (argc > 1)
		ng = std::min(ng, atoi(argv[1]));
	if (ng > MAXG)
		ng = MAXG;
	printf("# p2p: %d GPUs\n", ng);
	for (int a = 0; a < ng; a++) {
		cudaDeviceProp pr;
		CK(cudaGetDeviceProperties(&pr, a));
		printf("# gpu %d: %s, %d SMs\n", a, pr.name, pr.multiProcessorCount);
		for (int b = 0; b < ng; b++) {
			if (a == b)
				continue;
			int can = 0, perf = 0;
			CK(cudaDeviceCanAccessPeer(&can, a, b));
			cudaDeviceGetP2PAttribute(&perf, cudaDevP2PAttrPerformanceRank, a, b);
			int atom = 0;
			cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, a, b);
			printf("#   peer %d->%d: access %d, perf rank %d, native atomics %d\n", a, b, can, perf, atom);
		}
	}

	// one GPU: host round trip and launch gap
	{
		CK(cudaSetDevice(0));
		cudaStream_t s;
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		for (int k = 0; k < 100; k++)
			k_empty<<<1, 32, 0, s>>>();
		CK(cudaStreamSynchronize(s));
		std::vector<double> t;
		for (int k = 0; k < 2000; k++) {
			double t0 = now_us();
			k_empty<<<1, 32, 0, s>>>();
			CK(cudaStreamSynchronize(s));
			t.push_back(now_us() - t0);
		}
		std::sort(t.begin(), t.end());
		printf("launch+sync (host round trip): median %.2f us, p10 %.2f, p90 %.2f\n", t[1000], t[200], t[1800]);
		cudaEvent_t e0, e1;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		CK(cudaEventRecord(e0, s));
		for (int k = 0; k < 2000; k++)
			k_empty<<<1, 32, 0, s>>>();
		CK(cudaEventRecord(e1, s));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("launch gap (back-to-back empty kernels): %.2f us each on the device\n", ms * 1e3 / 2000);
		CK(cudaEventRecord(e0, s));
		for (int k = 0; k < 2000; k++)
			k_empty<<<1056, 256, 0, s>>>();
		CK(cudaEventRecord(e1, s));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("launch gap (1056 blocks of 256): %.2f us each on the device\n", ms * 1e3 / 2000);
		CK(cudaStreamDestroy(s));
	}
	if (ng < 2) {
		printf("# fewer than 2 GPUs: no peer measurements\n");
		return 0;
	}
	const ull cap = 32ull << 20;
	std::vector<gpu_ctx> g((size_t)ng);
	for (int a = 0; a < ng; a++) {
		CK(cudaSetDevice(a));
		for (int b = 0; b < ng; b++)
			if (a != b) {
				cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
				if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
					printf("# peer access %d->%d: %s\n", a, b, cudaGetErrorString(e));
					return 4;
				}
				cudaGetLastError();
			}
		gpu_ctx &c = g[(size_t)a];
		memset(&c, 0, sizeof c);
		c.id = a;
		c.ng = ng;
		c.cap = cap;
		CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
		CK(cudaMalloc((void **)&c.p.flag[a], MAXG * sizeof(ull)));
		CK(cudaMemset(c.p.flag[a], 0, MAXG * sizeof(ull)));
		CK(cudaMalloc((void **)&c.p.buf[a], cap * MAXG));
		CK(cudaMalloc((void **)&c.src, cap));
		CK(cudaMemset(c.src, 0x5a, cap));
		CK(cudaMalloc((void **)&c.ticket, sizeof(unsigned)));
		CK(cudaMemset(c.ticket, 0, sizeof(unsigned)));
		CK(cudaEventCreate(&c.e0));
		CK(cudaEventCreate(&c.e1));
	}
	for (int a = 0; a < ng; a++)
		for (int b = 0; b < ng; b++) {
			g[(size_t)a].p.flag[b] = g[(size_t)b].p.flag[b];
			g[(size_t)a].p.buf[b] = g[(size_t)b].p.buf[b];
		}
	for (int a = 0; a < ng; a++) {
		CK(cudaSetDevice(a));
		CK(cudaDeviceSynchronize());
	}

	// ping-pong 0 <-> 1
	{
		ull *f0, *f1;
		CK(cudaSetDevice(0));
		CK(cudaMalloc((void **)&f0, 8));
		CK(cudaMemset(f0, 0, 8));
		CK(cudaSetDevice(1));
		CK(cudaMalloc((void **)&f1, 8));
		CK(cudaMemset(f1, 0, 8));
		CK(cudaDeviceSynchronize());
		const int iters = 20000;
		CK(cudaSetDevice(1));
		k_ping<<<1, 1, 0, g[1].s>>>(f1, f0, iters, 0);
		CK(cudaSetDevice(0));
		double t0 = now_us();
		k_ping<<<1, 1, 0, g[0].s>>>(f0, f1, iters, 1);
		CK(cudaStreamSynchronize(g[0].s));
		double us = now_us() - t0;
		CK(cudaSetDevice(1));
		CK(cudaStreamSynchronize(g[1].s));
		printf("flag latency 0<->1 (one way, in-kernel ping-pong): %.3f us\n", us / iters / 2);
	}

	ull seq = 1;
	int nsm = 132;
	{
		cudaDeviceProp pr;
		CK(cudaGetDeviceProperties(&pr, 0));
		nsm = pr.multiProcessorCount;
	}
	for (int n = 2; n <= ng; n *= 2) {
		std::vector<gpu_ctx> sub(g.begin(), g.begin() + n);
		for (auto &c : sub)
			c.ng = n;
		run_all(sub, 0, 100, 0, 1, &seq); // warm
		double us = run_all(sub, 0, 20000, 0, 1, &seq);
		printf("barrier of %d GPUs (in one kernel): %.3f us each\n", n, us);
		run_all(sub, 1, 50, 8, 1, &seq);
		printf("exchange of %d GPUs, host-launched push+wait per iteration (device us; host us):\n", n);
		printf("  %10s %8s %10s %10s %10s %12s\n", "bytes/peer", "blocks", "dev_us", "host_us", "GB/s_in", "with_sync_us");
		for (ull b : {8ull, 4096ull, 65536ull, 1ull << 20, 2ull << 20, 8ull << 20, 32ull << 20}) {
			int blocks = b <= 4096 ? 1 : (int)std::min<ull>((ull)nsm * 4, b / 4096);
			int it = b >= (8ull << 20) ? 50 : 500;
			double dus = run_all(sub, 1, it, b, blocks, &seq);
			double hus = 0;
			for (auto &c : sub)
				hus = std::max(hus, c.us);
			double sus = run_all(sub, 2, it / 5, b, blocks, &seq);
			double ssus = 0;
			for (auto &c : sub)
				ssus = std::max(ssus, c.us);
			(void)sus;
			printf("  %10llu %8d %10.2f %10.2f %10.1f %12.2f\n", b, blocks, dus, hus,
			       (double)b * (n - 1) / (dus * 1e3), ssus);
		}
		// copy engine
		printf("copy engine, cudaMemcpyPeerAsync to each peer then event wait, %d GPUs:\n", n);
		for (ull b : {8ull, 65536ull, 2ull << 20, 8ull << 20}) {
			const int it = 50;
			std::vector<cudaEvent_t> ev((size_t)n);
			for (int a = 0; a < n; a++) {
				CK(cudaSetDevice(a));
				CK(cudaEventCreateWithFlags(&ev[(size_t)a], cudaEventDisableTiming));
			}
			double t0 = now_us();
			for (int k = 0; k < it; k++) {
				for (int a = 0; a < n; a++) {
					CK(cudaSetDevice(a));
					for (int d = 1; d < n; d++) {
						int to = (a + d) % n;
						CK(cudaMemcpyPeerAsync(g[(size_t)to].p.buf[to] + (ull)a * cap, to, g[(size_t)a].src,
								       a, b, g[(size_t)a].s));
					}
					CK(cudaEventRecord(ev[(size_t)a], g[(size_t)a].s));
				}
				for (int a = 0; a < n; a++) {
					CK(cudaSetDevice(a));
					for (int o = 0; o < n; o++)
						if (o != a)
							CK(cudaStreamWaitEvent(g[(size_t)a].s, ev[(size_t)o], 0));
				}
			}
			for (int a = 0; a < n; a++) {
				CK(cudaSetDevice(a));
				CK(cudaStreamSynchronize(g[(size_t)a].s));
			}
			double us = (now_us() - t0) / it;
			printf("  %10llu bytes/peer: %10.2f us per exchange (host wall), %8.1f GB/s in\n", b, us,
			       (double)b * (n - 1) / (us * 1e3));
			for (int a = 0; a < n; a++)
				CK(cudaEventDestroy(ev[(size_t)a]));
		}
	}
	return 0;
}

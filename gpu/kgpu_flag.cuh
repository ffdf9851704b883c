// kgpu_flag: the flags that order stores between GPUs (kgpu_peer.cu, and
// share/bench/p2p.cu, which measures them).  A writer stores its data into
// another GPU's memory, makes it visible system-wide (__threadfence_system
// in every block that wrote), then puts a flag with release semantics; the
// reader spins on the flag with acquire semantics and then reads the data.
// Flags only grow (a round number), so none is ever reset.
#ifndef KGPU_FLAG_CUH
#define KGPU_FLAG_CUH

#include <cuda/atomic>

__device__ __forceinline__ void kgpu_flag_put(unsigned long long *f, unsigned long long v)
{
	cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> a(*f);
	a.store(v, cuda::memory_order_release);
}

// A flag put after the caller's own __threadfence_system(): the fence and
// this strong store form the release (so several flags after one fence go
// out together, not one system-wide round trip after another, which is
// what a release store each costs: ~2 us a flag over NVLink).
__device__ __forceinline__ void kgpu_flag_put_after_fence(unsigned long long *f, unsigned long long v)
{
	cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> a(*f);
	a.store(v, cuda::memory_order_relaxed);
}

__device__ __forceinline__ unsigned long long kgpu_flag_get(unsigned long long *f)
{
	cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> a(*f);
	return a.load(cuda::memory_order_acquire);
}

#endif

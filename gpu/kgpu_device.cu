// kgpu_device: device discovery for the CUDA engine.
#include "kgpu.h"

#include <cuda_runtime.h>

extern "C" int kgpu_device_count(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
}

extern "C" int kgpu_built(void) { return 1; }

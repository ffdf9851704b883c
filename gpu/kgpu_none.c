/* kgpu_none: the GPU engine's entry points in a build without CUDA. */
#include "kgpu.h"

int kgpu_device_count(void) { return 0; }
int kgpu_built(void) { return 0; }

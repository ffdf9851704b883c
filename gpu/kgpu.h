/*
 * kgpu: the GPU engine, exported to C.
 *
 * Built from the gpu .cu sources with nvcc when CUDA is available; otherwise
 * gpu/kgpu_none.c provides the same symbols and reports that the build has
 * no GPU engine.  Only kbfs's engine selection calls this header.
 */
#ifndef KGPU_H
#define KGPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices visible to this process (0 when none or no CUDA). */
int kgpu_device_count(void);
/* 1 when this build contains the CUDA engine. */
int kgpu_built(void);

#ifdef __cplusplus
}
#endif
#endif

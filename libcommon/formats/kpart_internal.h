/*
 * kpart_internal: what the files behind kpart.h share among themselves
 * (kpart.c: math, manifest, loading; kpart_write.c: rank files, manifest
 * and directory on the way out; kpart_csr.c: the CSR made from the CSC)
 * and with the builder above them
 * (graph/kpart_builder.h).  Not for other callers.
 */
#ifndef KPART_INTERNAL_H
#define KPART_INTERNAL_H

#include "kpart.h"

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
#else
#define HOST_LE 0
#endif

static inline int kpart_bits_for(uint64_t n) /* bits to write 0 .. n-1 */
{
	return n <= 1 ? 0 : 64 - __builtin_clzll(n - 1);
}

#ifdef _OPENMP
static inline int kpart_nthreads(void) { return omp_get_max_threads(); }
static inline int kpart_tid(void) { return omp_get_thread_num(); }
#else
static inline int kpart_nthreads(void) { return 1; }
static inline int kpart_tid(void) { return 0; }
#endif

/* a[k] += a[k-1] for k = 1 .. n-1 (on all threads for long arrays; kpart_csr.c) */
void kpart_prefix_sum(uint64_t *a, size_t n);

#endif

/* ksort: LSD radix sort of 64-bit keys (see ksort.h). */
#include "ksort.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { PAR_MIN = 1 << 20, MAXT = 256 }; /* keys from which a pass runs on all threads */

/* One stable pass by byte b of src into dst on T threads: thread t takes
 * the t-th slice, counts its digits, and writes them after every smaller
 * digit and after the same digit of the slices before its own.  0 when
 * the byte is the same in every key (nothing moved). */
static int pass(const uint64_t *src, uint64_t *dst, size_t n, int b, int T, size_t (*cnt)[256])
{
	int sh = 8 * b, same = 0;
#pragma omp parallel num_threads(T) if (T > 1)
	{
#ifdef _OPENMP
		int t = omp_get_thread_num();
#else
		int t = 0;
#endif
		size_t lo = n / (size_t)T * (size_t)t, hi = t == T - 1 ? n : n / (size_t)T * (size_t)(t + 1);
		size_t *c = cnt[t];
		memset(c, 0, 256 * sizeof *c);
		for (size_t i = lo; i < hi; i++)
			c[(src[i] >> sh) & 255]++;
#pragma omp barrier
#pragma omp single
		{
			size_t sum = 0;
			for (int d = 0; d < 256; d++)
				for (int u = 0; u < T; u++) {
					size_t x = cnt[u][d];
					cnt[u][d] = sum;
					sum += x;
					same |= x == n;
				}
		}
		if (!same)
			for (size_t i = lo; i < hi; i++)
				dst[c[(src[i] >> sh) & 255]++] = src[i];
	}
	return !same;
}

void ksort_u64(uint64_t *a, uint64_t *tmp, size_t n, int keybits)
{
	if (n < 2)
		return;
	int T = 1;
#ifdef _OPENMP
	if (n >= PAR_MIN && !omp_in_parallel())
		T = omp_get_max_threads();
	if (T > MAXT)
		T = MAXT;
#endif
	int nbytes = (keybits + 7) / 8;
	size_t(*cnt)[256] = kcalloc((size_t)T, sizeof *cnt);
	uint64_t *own = tmp ? NULL : kmalloc(kmul(n, sizeof *a));
	uint64_t *src = a, *dst = tmp ? tmp : own;
	for (int b = 0; b < nbytes; b++)
		if (pass(src, dst, n, b, T, cnt)) {
			uint64_t *t = src;
			src = dst;
			dst = t;
		}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
	free(own);
	free(cnt);
}

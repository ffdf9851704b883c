/* test_ksort: ksort_u64 against qsort for sizes below and above the size
 * from which its passes run on all threads (2^20 keys), key widths 1 to
 * 64 bits, keys with bytes that are the same everywhere (skipped passes),
 * with and without the caller's scratch, on 1 to 5 threads; and inside a
 * parallel region (one thread). */
#include "ksort.h"
#include "klog.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* n keys of `bits` bits (the low ones), `fixed`: byte 1 the same in all */
static int check(size_t n, int bits, int fixed, int scratch)
{
	uint64_t *a = malloc(n * 8 + 8), *b = malloc(n * 8 + 8), *t = scratch ? malloc(n * 8 + 8) : NULL;
	uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	for (size_t k = 0; k < n; k++) {
		uint64_t x = tap_rand() & mask;
		if (fixed)
			x = (x & ~(uint64_t)0xff00) | (0x5a00 & mask);
		if (k % 7 == 3 && k)
			x = a[k - 1]; /* repeats */
		a[k] = b[k] = x;
	}
	ksort_u64(a, t, n, bits);
	qsort(b, n, 8, cmp);
	int same = !memcmp(a, b, n * 8);
	free(a);
	free(b);
	free(t);
	return same;
}

int main(void)
{
	klog_init("test_ksort");
	static const size_t sizes[] = {0, 1, 2, 3, 255, 256, 257, 4099, (1 << 20) - 1, 1 << 20, (1 << 20) + 7, 3000017};
	static const int widths[] = {1, 7, 8, 9, 17, 33, 52, 64};
	for (int T = 1; T <= 5; T += 2) {
#ifdef _OPENMP
		omp_set_num_threads(T);
#endif
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
			if (sizes[s] > (1 << 20) + 7 && T != 3)
				continue; /* the largest: on 3 threads */
			int bad = 0;
			for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
				if (sizes[s] >= (1 << 20) - 1 && widths[w] != 52 && widths[w] != 9)
					continue; /* the large sizes: two widths */
				bad += !check(sizes[s], widths[w], 0, (int)w & 1);
				if (widths[w] >= 16)
					bad += !check(sizes[s], widths[w], 1, !(w & 1));
			}
			ok(!bad, "%d thread(s), %zu keys: every width sorted as qsort sorts", T, sizes[s]);
		}
	}
	int bad = 0;
#ifdef _OPENMP
	omp_set_num_threads(3);
#pragma omp parallel reduction(+ : bad)
	{
#pragma omp single
		bad += !check((1 << 20) + 5, 40, 0, 1);
	}
#endif
	ok(!bad, "inside a parallel region: sorted (on the calling thread)");
	return tap_done();
}

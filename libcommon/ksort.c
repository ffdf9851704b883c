/* ksort: LSD radix sort of 64-bit keys (see ksort.h). */
#include "ksort.h"
#include "klog.h"

#include <stdlib.h>
#include <string.h>

void ksort_u64(uint64_t *a, uint64_t *tmp, size_t n, int keybits)
{
	if (n < 2)
		return;
	int nbytes = (keybits + 7) / 8;
	size_t(*cnt)[256] = kcalloc(8, sizeof *cnt);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = a[i];
		for (int b = 0; b < nbytes; b++)
			cnt[b][(x >> (8 * b)) & 255]++;
	}
	uint64_t *own = tmp ? NULL : kmalloc(kmul(n, sizeof *a));
	uint64_t *src = a, *dst = tmp ? tmp : own;
	for (int b = 0; b < nbytes; b++) {
		size_t *c = cnt[b], sum = 0;
		if (c[(src[0] >> (8 * b)) & 255] == n)
			continue; /* this byte is the same in every key */
		for (int k = 0; k < 256; k++) {
			size_t t = c[k];
			c[k] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i] >> (8 * b)) & 255]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
	free(own);
	free(cnt);
}

/* test_kio: kio_crc32 (split among threads for large buffers) against a
 * bit-at-a-time CRC-32 written here, for sizes around the split threshold,
 * chained calls and thread counts 1 to 7; kio_crc32_combine. */
#include "kio.h"
#include "tap.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

int main(void)
{
	const size_t MB = (size_t)1 << 20, big = 37 * MB + 13;
	unsigned char *buf = malloc(big);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < big; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	ok(kio_crc32(0, "123456789", 9) == 0xCBF43926u, "CRC-32 check value of \"123456789\"");
	const size_t sizes[] = {0, 1, 8 * MB - 1, 8 * MB, 8 * MB + 13, 9 * MB + 1, big};
	const int threads[] = {1, 2, 3, 7};
	uint32_t want[sizeof sizes / sizeof *sizes];
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		want[s] = crc_bitwise(0, buf, sizes[s]);
	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
#ifdef _OPENMP
		omp_set_num_threads(threads[t]);
#endif
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			ok(kio_crc32(0, buf, sizes[s]) == want[s], "%d thread(s): %zu bytes", threads[t], sizes[s]);
		/* chained: a start value carried in, as readers checksum in chunks */
		uint32_t c = kio_crc32(0, buf, 3 * MB + 5);
		c = kio_crc32(c, buf + 3 * MB + 5, big - (3 * MB + 5));
		ok(c == want[sizeof sizes / sizeof *sizes - 1], "%d thread(s): chained 3 MB + rest", threads[t]);
	}
	uint32_t a = kio_crc32(0, buf, 10 * MB), b = kio_crc32(0, buf + 10 * MB, big - 10 * MB);
	ok(kio_crc32_combine(a, b, big - 10 * MB) == want[sizeof sizes / sizeof *sizes - 1], "kio_crc32_combine");
	free(buf);
	return tap_done();
}

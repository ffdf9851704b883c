/* kio_crc: CRC-32 of buffers of any size, on all threads for large ones. */
#include "kio.h"
#include "kio_internal.h"

#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

uint32_t kio_crc32_serial(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n) {
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return crc;
}

/* Large buffers outside a parallel region are split among the OpenMP
 * threads and the pieces' CRCs merged (crc32_combine): same value, and
 * checksumming a multi-GB rank or edge file no longer runs on one core. */
uint32_t kio_crc32(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
#ifdef _OPENMP
	enum { MINPIECE = 4 << 20, MAXT = 256 };
	int T = omp_in_parallel() ? 1 : omp_get_max_threads();
	if (T > MAXT)
		T = MAXT;
	if (T > 1 && n >= 2 * (size_t)MINPIECE) {
		if ((size_t)T > n / MINPIECE)
			T = (int)(n / MINPIECE);
		uint32_t part[MAXT];
#pragma omp parallel for num_threads(T) schedule(static)
		for (int t = 0; t < T; t++) {
			size_t a = n / (size_t)T * (size_t)t, b = t == T - 1 ? n : n / (size_t)T * (size_t)(t + 1);
			part[t] = kio_crc32_serial(t ? 0 : crc, p + a, b - a);
		}
		crc = part[0];
		for (int t = 1; t < T; t++) {
			size_t a = n / (size_t)T * (size_t)t, b = t == T - 1 ? n : n / (size_t)T * (size_t)(t + 1);
			crc = kio_crc32_combine(crc, part[t], b - a);
		}
		return crc;
	}
#endif
	return kio_crc32_serial(crc, p, n);
}

uint32_t kio_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
	return (uint32_t)crc32_combine64(a, b, (z_off64_t)len_b);
}

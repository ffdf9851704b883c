/* fuzz_kpred: predecessor files (kpred(5)): text, binary and gzip'd, as a
 * file and as a stream; binary inputs again with their CRC made right. */
#include "fuzz.h"
#include "kpred.h"

static void one(const uint8_t *data, size_t n, int stream)
{
	char path[64];
	int fd = stream ? fuzz_pipe(data, n, path, sizeof path) : fuzz_file(data, n, path, sizeof path);
	if (fd < 0)
		return;
	uint64_t root, cnt, *v;
	int64_t *par;
	if (!kpred_read(path, &root, &cnt, &v, &par)) {
		free(v);
		free(par);
	}
	close(fd);
}

FUZZ_INIT("fuzz_kpred")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	one(data, n, 0);
	one(data, n, 1);
	if (n >= 32 && kpred_is_magic(data, n)) {
		uint8_t *b = fuzz_copy(data, n);
		kio_put32(b + n - 4, kio_crc32(0, b, n - 4));
		one(b, n, 0);
		free(b);
	}
	return 0;
}

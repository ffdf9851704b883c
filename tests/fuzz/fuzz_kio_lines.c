/* fuzz_kio_lines: the line reader behind predecessor and roots files
 * (kio_getline: '\r\n' and '\r' endings, the 1 MiB cap, gzip), as a file
 * and as a stream; every line is consumed (a reader that stops moving
 * would hang the fuzzer, which reports it). */
#include "fuzz.h"

static void one(const uint8_t *data, size_t n, int stream, int gzip)
{
	char path[64];
	int fd = stream ? fuzz_pipe(data, n, path, sizeof path) : fuzz_file(data, n, path, sizeof path);
	if (fd < 0)
		return;
	kio_in *in = kio_open_in(path, gzip);
	if (in) {
		size_t len, total = 0;
		int err;
		char *l;
		while ((l = kio_getline(in, &len, &err))) {
			if (l[len] != 0)
				abort(); /* the NUL it promises after len bytes */
			total += len + 1;
			if (total > 4 * n + (1 << 20))
				abort(); /* more lines than bytes: not moving */
		}
		kio_close_in(in);
	}
	close(fd);
}

FUZZ_INIT("fuzz_kio_lines")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	one(data, n, 0, 1);
	one(data, n, 1, 1);
	one(data, n, 0, 0);
	return 0;
}

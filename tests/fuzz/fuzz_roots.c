/* fuzz_roots: the roots file of kbfs --roots (kroots.h): one decimal id a
 * line, comments, blanks, CRLF, gzip, as a file and as a stream.  Every id
 * it hands back is a whole line's number: no more ids than lines. */
#include "fuzz.h"
#include "kroots.h"

static void one(const uint8_t *data, size_t n, int stream)
{
	char path[64];
	int fd = stream ? fuzz_pipe(data, n, path, sizeof path) : fuzz_file(data, n, path, sizeof path);
	if (fd < 0)
		return;
	uint64_t *ids = NULL;
	size_t cnt = 0, cap = 0;
	if (!kroots_read(path, &ids, &cnt, &cap) && (cnt == 0 || cnt > cap))
		abort(); /* a file without roots is refused; the array holds them all */
	size_t lines = 1;
	for (size_t k = 0; k < n; k++)
		lines += data[k] == '\n' || data[k] == '\r';
	if (cnt > lines && !(n >= 2 && data[0] == 0x1f && data[1] == 0x8b))
		abort(); /* more ids than lines of plain text */
	free(ids);
	close(fd);
}

FUZZ_INIT("fuzz_roots")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	for (int stream = 0; stream < 2; stream++) /* a file, then a pipe */
		one(data, n, stream);
	return 0;
}

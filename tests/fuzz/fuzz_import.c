/* fuzz_import: the text (and gapbs binary) graph importers behind kgen
 * --from, kstat and kvalidate (kimport_read), one harness per format:
 * FUZZ_FORMAT is the parser forced (KIMPORT_AUTO: detection, then whatever
 * it picks).  zlib reads plain and gzip'd input alike (gzip'd seeds cover
 * the inflating side).  With and without --skip-bad. */
#include "fuzz.h"
#include "kimport.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT KIMPORT_AUTO
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

FUZZ_INIT("fuzz_import_" STR(FUZZ_NAME))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	for (int skip = 0; skip < 2; skip++) {
		char path[64];
		int fd = fuzz_file(data, n, path, sizeof path);
		kimport_result res;
		if (!kimport_read(path, FUZZ_FORMAT, skip, &res))
			kimport_free(&res);
		close(fd);
	}
	return 0;
}

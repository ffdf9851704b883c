/* fuzz_build_info: a partition's build-info (kpart(5)) as kbfs reads it
 * for its times (kpart_build_info_read): "key = value" lines outside the
 * manifest's checksum, so anything may be there.  A figure it finds is a
 * finite number >= 0 (inf, nan and a number cut by a NUL byte are not). */
#include "fuzz.h"
#include "kfs.h"
#include "kpart.h"

#include <math.h>

FUZZ_INIT("fuzz_build_info")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const char *const keys[] = {"construction_time", "generation_time", "read_time", "build_time",
					   "processes"};
	enum { NK = sizeof keys / sizeof keys[0] };
	const char *dir = fuzz_dir();
	char *path = kfs_join(dir, "build-info");
	fuzz_write(path, data, n);
	free(path);
	double vals[NK];
	int found[NK];
	if (!kpart_build_info_read(dir, keys, NK, vals, found))
		for (int k = 0; k < NK; k++)
			if (found[k] && !(isfinite(vals[k]) && vals[k] >= 0))
				abort();
	return 0;
}

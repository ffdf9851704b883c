/* fuzz_run_json: kbfs run reports read back by kstat (krun_load: the JSON
 * parser and the figures' checks), then everything kstat does with one:
 * the statistics block, the JSON summary and the SVG plots. */
#include "fuzz.h"
#include "krun.h"

FUZZ_INIT("fuzz_run_json")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char path[64];
	int fd = fuzz_file(data, n, path, sizeof path);
	krun r[2];
	if (!krun_load(path, &r[0])) {
		FILE *o = fuzz_null();
		krun_print_block(o, &r[0]);
		krun_print_json(o, r, 1);
		krun_svg(o, r, 1);
		if (!krun_load(path, &r[1])) {
			krun_svg(o, r, 2);
			krun_free(&r[1]);
		}
		krun_free(&r[0]);
	}
	close(fd);
	return 0;
}

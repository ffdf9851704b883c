/* fuzz_kpart_manifest: the partition manifest (kpart(5)) as kbfs, kstat
 * and kpart --check read it: the key = value lines, the checksum line, the
 * grid and per-rank entries, then what each program does next with no
 * rank file present.  Each input runs twice: as it is, and with its
 * checksum line made right. */
#include "fuzz.h"
#include "kfs.h"
#include "kpart.h"

static void one(const uint8_t *data, size_t n)
{
	const char *dir = fuzz_dir();
	char *path = kfs_join(dir, "manifest");
	fuzz_write(path, data, n);
	free(path);
	kpart_manifest m;
	if (!kpart_manifest_read(dir, &m))
		kpart_manifest_free(&m);
	int R, C;
	uint64_t nv;
	kpart_manifest_grid(dir, &R, &C, &nv);
	kpart_report(dir, fuzz_null(), 0);
	kpart_check(dir, 0);
	kpart_block b;
	if (!kpart_load(dir, 0, &b))
		kpart_block_free(&b);
}

FUZZ_INIT("fuzz_kpart_manifest")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	one(data, n);
	/* the text up to its last "checksum = " line, and a right one after */
	size_t cut = n;
	for (size_t k = n; k-- > 0;)
		if ((k == 0 || data[k - 1] == '\n') && n - k >= 11 && !memcmp(data + k, "checksum = ", 11)) {
			cut = k;
			break;
		}
	char line[32];
	int l = snprintf(line, sizeof line, "checksum = %08x\n", (unsigned)kio_crc32(0, data, cut));
	uint8_t *b = malloc(cut + (size_t)l + 1);
	memcpy(b, data, cut);
	memcpy(b + cut, line, (size_t)l);
	one(b, cut + (size_t)l);
	free(b);
	return 0;
}

/* fuzz_kpart_rank: a rank file (kpart(5)) behind a manifest that agrees
 * with it: the harness writes the manifest from the rank file's own header
 * (grid, position, sizes, nnz, flags) and its size and CRC, so the reader
 * gets past the manifest to the file's arrays; kbfs's load (kpart_load),
 * kpart --check and --dump and kstat's report then read it.  Each input
 * runs twice: as it is, and with its header and trailer CRCs made right. */
#include "fuzz.h"
#include "kfs.h"
#include "kpart.h"

static void one(const uint8_t *d, size_t n)
{
	const char *dir = fuzz_dir();
	uint32_t R = 1, C = 1, i = 0, j = 0, flags = 0;
	uint64_t nv = 1, nnz = 0;
	if (n >= KPART_HEADER_BYTES) {
		flags = kio_get32(d + 12);
		R = kio_get32(d + 16), C = kio_get32(d + 20), i = kio_get32(d + 24), j = kio_get32(d + 28);
		nv = kio_get64(d + 32), nnz = kio_get64(d + 72);
	}
	/* keep the manifest small: a grid of at most 16 ranks */
	if (!R || !C || R > 4 || C > 4 || i >= R || j >= C)
		R = C = 1, i = j = 0;
	kpart_grid g;
	if (kpart_grid_init(&g, nv ? nv : 1, (int)R, (int)C) || g.N > (UINT64_C(1) << 40))
		kpart_grid_init(&g, 1, (int)R, (int)C);
	int rank = (int)(i * C + j);
	char name[32], *path, text[4096];
	kpart_rank_file(name, sizeof name, rank);
	path = kfs_join(dir, name);
	fuzz_write(path, d, n);
	free(path);
	int at = snprintf(text, sizeof text,
			  "format = kpart\nversion = %d.%d\nR = %u\nC = %u\nnv = %llu\nN = %llu\nnb = %llu\nM = %llu\n"
			  "selfloops = 0\nnnz = %llu\nrelabel = %s\nindex_bits = %d\nsource_map = %s\n",
			  KPART_MAJOR, KPART_MINOR, R, C, (unsigned long long)g.nv, (unsigned long long)g.N, (unsigned long long)g.nb,
			  (unsigned long long)(nnz / 2), (unsigned long long)nnz,
			  flags & KPART_F_RELABEL ? "degree" : "none", flags & KPART_F_IDX64 ? 64 : 32,
			  flags & KPART_F_ORIG ? "yes" : "no");
	for (uint32_t r = 0; r < R * C; r++)
		at += snprintf(text + at, sizeof text - (size_t)at,
			       "rank.%05u.file = rank-%05u.kpart\nrank.%05u.bytes = %zu\nrank.%05u.crc32 = %08x\n"
			       "rank.%05u.nnz = %llu\n",
			       r, r, r, n, r, (unsigned)kio_crc32(0, d, n), r, (unsigned long long)nnz);
	at += snprintf(text + at, sizeof text - (size_t)at, "checksum = %08x\n", (unsigned)kio_crc32(0, text, (size_t)at));
	path = kfs_join(dir, "manifest");
	fuzz_write(path, (const uint8_t *)text, (size_t)at);
	free(path);
	kpart_block b;
	if (!kpart_load(dir, rank, &b))
		kpart_block_free(&b);
	kpart_check(dir, 0);
	if (R * C == 1)
		kpart_dump(dir, fuzz_null(), 0);
	kpart_report(dir, fuzz_null(), 1);
}

FUZZ_INIT("fuzz_kpart_rank")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	one(data, n);
	if (n >= KPART_HEADER_BYTES + KPART_TRAILER_BYTES) {
		uint8_t *b = fuzz_copy(data, n);
		kio_put32(b + 88, kio_crc32(0, b, 88));
		uint8_t *t = b + n - KPART_TRAILER_BYTES;
		kio_put32(t + 12, kio_crc32(0, b, n - KPART_TRAILER_BYTES));
		kio_put32(t + 16, kio_crc32(0, t, 16));
		one(b, n);
		free(b);
	}
	return 0;
}

/* fuzz_kedge: the edge file reader (kedge(5)) -- header, provenance, id
 * map, raw and compressed payload, trailer -- as a regular file (size
 * checks, reads at an index) and as a stream (memory as data arrive),
 * sequentially (decoded and as stored), at an index and whole
 * (kedge_load); then again with every checksum made right. */
#include "fuzz.h"
#include "kedge.h"

#include <zlib.h>

static void read_all(const char *path)
{
	kedge_reader *r;
	kedge_info info;
	if (kedge_open(path, &r, &info))
		return;
	uint64_t *uv = malloc(2 * 4096 * sizeof *uv + 16);
	size_t got;
	int rc;
	while (!(rc = kedge_read(r, uv, 4096, &got)) && got)
		;
	kedge_close(r);
	if (!kedge_open(path, &r, &info)) { /* as kpart keeps a stream: raw, then its size and CRC */
		uint32_t crc;
		uint64_t size;
		while (!(rc = kedge_read_raw(r, uv, 1024, &got)) && got)
			;
		kedge_trailer(r, &size, &crc);
		kedge_close(r);
	}
	if (!kedge_open(path, &r, &info)) {
		uint32_t crc = 0, want;
		uint64_t size;
		if (kedge_seekable(r) && info.ne <= 4096)
			kedge_read_at(r, 0, info.ne, uv, &crc);
		kedge_trailer(r, &size, &want);
		kedge_close(r);
	}
	free(uv);
}

static void load(const char *path)
{
	kedge_info info;
	uint64_t *uv = NULL, *map = NULL;
	if (!kedge_load(path, &info, &uv, &map))
		kedge_info_free(&info);
	free(uv);
	free(map);
}

static void put32(uint8_t *p, uint32_t v) { kio_put32(p, v); }

/* Make the header, map, payload and trailer checksums right where the
 * layout can be followed. */
static void fix(uint8_t *b, size_t n)
{
	if (n < 44)
		return;
	uint32_t plen = kio_get32(b + 36), flags = kio_get32(b + 12), idb = kio_get32(b + 16);
	uint64_t nv = kio_get64(b + 20), ne = kio_get64(b + 28);
	if (plen > n - 44)
		return;
	put32(b + 40 + plen, kio_crc32(kio_crc32(0, b, 40), b + 40, plen));
	size_t off = 44 + plen;
	if (flags & KEDGE_F_MAP) {
		if (nv > (n - off) / 8 || off + nv * 8 + 4 > n)
			return;
		put32(b + off + nv * 8, kio_crc32(0, b + off, nv * 8));
		off += nv * 8 + 4;
	}
	uint32_t crc = 0;
	if (flags & KEDGE_F_ZLIB) {
		for (;;) {
			if (off + 8 > n)
				return;
			uint32_t cl = kio_get32(b + off), rl = kio_get32(b + off + 4);
			off += 8;
			if (!cl && !rl)
				break;
			if (cl > n - off || rl > (1u << 22))
				return;
			unsigned char *raw = malloc(rl ? rl : 1);
			uLongf got = rl;
			if (uncompress(raw, &got, b + off, cl) == Z_OK)
				crc = kio_crc32(crc, raw, got);
			free(raw);
			off += cl;
		}
	} else {
		uint64_t rec = 2 * (uint64_t)idb;
		if ((idb != 4 && idb != 8) || ne > (n - off) / rec)
			return;
		crc = kio_crc32(0, b + off, ne * rec);
		off += ne * rec;
	}
	if (off + 20 > n)
		return;
	put32(b + off + 12, crc);
	put32(b + off + 16, kio_crc32(0, b + off, 16));
}

static void one(const uint8_t *data, size_t n)
{
	char path[64];
	int fd = fuzz_file(data, n, path, sizeof path);
	read_all(path);
	close(fd);
	fd = fuzz_file(data, n, path, sizeof path);
	load(path);
	close(fd);
	if ((fd = fuzz_pipe(data, n, path, sizeof path)) >= 0) {
		load(path);
		close(fd);
	}
}

FUZZ_INIT("fuzz_kedge")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	one(data, n);
	uint8_t *b = fuzz_copy(data, n);
	fix(b, n);
	if (memcmp(b, data, n))
		one(b, n);
	free(b);
	return 0;
}

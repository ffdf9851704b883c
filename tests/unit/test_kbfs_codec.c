/* test_kbfs_codec: the host codec of the wire forms (kengine.h, kbfs_xchg.c):
 * base-128 varints at their boundaries and byte for byte, and every bitmap
 * shape through every exchange mode, with and without compression: the form
 * chosen, the bytes written, the capacity respected, and decoding (replace
 * and OR) giving back the bitmap. */
#include "kengine.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_vlq(void)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, UINT64_C(1) << 35,
					(UINT64_C(1) << 63) - 1, UINT64_C(1) << 63, UINT64_MAX};
	static const size_t lens[] = {1, 1, 1, 2, 2, 3, 3, 4, 6, 9, 10, 10};
	uint8_t buf[16];
	for (size_t k = 0; k < sizeof vals / sizeof *vals; k++) {
		size_t n = kbfs_vlq_put(buf, vals[k]);
		is_u64(n, lens[k], "vlq: %llu takes %zu bytes", (unsigned long long)vals[k], lens[k]);
		uint64_t v = 0;
		is_u64(kbfs_vlq_get(buf, buf + n, &v), n, "vlq: %llu reads back its length", (unsigned long long)vals[k]);
		is_u64(v, vals[k], "vlq: %llu reads back", (unsigned long long)vals[k]);
		ok(n < 2 || !kbfs_vlq_get(buf, buf + n - 1, &v), "vlq: %llu cut short is refused", (unsigned long long)vals[k]);
	}
	size_t n = kbfs_vlq_put(buf, 300);
	ok(n == 2 && buf[0] == 0xAC && buf[1] == 0x02, "vlq: 300 is AC 02 (low 7 bits first, high bit = more)");
	memset(buf, 0x80, 11);
	buf[11] = 0;
	uint64_t v;
	ok(!kbfs_vlq_get(buf, buf + 12, &v), "vlq: more than 64 bits is refused");
}

/* the bitmap shapes */
enum { EMPTY, FULL, FIRST, LAST, SPARSE, DENSE, NSHAPE };
static const char *const shape_name[NSHAPE] = {"empty", "full", "first bit", "last bit", "sparse", "dense"};

static void fill(uint64_t *bm, size_t nw, int shape)
{
	memset(bm, 0, nw * 8);
	for (size_t w = 0; w < nw; w++)
		switch (shape) {
		case FULL: bm[w] = UINT64_MAX; break;
		case SPARSE: bm[w] = tap_rand() % 7 == 0 ? UINT64_C(1) << (tap_rand() % 64) : 0; break;
		case DENSE: bm[w] = tap_rand() | tap_rand(); break;
		}
	if (shape == FIRST)
		bm[0] = 1;
	if (shape == LAST)
		bm[nw - 1] = UINT64_C(1) << 63;
}

static uint64_t popcount(const uint64_t *bm, size_t nw)
{
	uint64_t c = 0;
	for (size_t w = 0; w < nw; w++)
		c += (uint64_t)__builtin_popcountll(bm[w]);
	return c;
}

/* bytes of the gap + VLQ list of bm */
static uint64_t vlq_bytes(const uint64_t *bm, size_t nw)
{
	uint64_t bytes = 0, next = 0;
	uint8_t tmp[16];
	for (uint64_t b = 0; b < nw * 64; b++)
		if (bm[b / 64] >> (b % 64) & 1) {
			bytes += kbfs_vlq_put(tmp, b - next);
			next = b + 1;
		}
	return bytes;
}

static void round_trip(size_t nw, int shape, enum kbfs_xmode mode, int compress)
{
	size_t bmbytes = nw * 8, cap = bmbytes + 16 * nw * 64 + 64;
	uint64_t *bm = malloc(bmbytes), *back = malloc(bmbytes), *orr = malloc(bmbytes);
	uint8_t *out = malloc(cap + 1);
	fill(bm, nw, shape);
	out[cap] = 0xA5;
	kbfs_desc d = kbfs_encode(bm, nw, mode, compress, out, cap);
	uint64_t bytes = kbfs_desc_bytes(d), k = popcount(bm, nw);
	int fmt = kbfs_desc_fmt(d);
	char what[96];
	snprintf(what, sizeof what, "%zu words, %s, %s%s", nw, shape_name[shape],
		 mode == KBFS_X_BITMAP ? "bitmap" : mode == KBFS_X_LIST ? "list" : "auto", compress ? "" : ", raw");
	/* the form: as the mode says, and auto takes the smaller */
	int want = KBFS_FMT_BITMAP;
	uint64_t list = compress ? vlq_bytes(bm, nw) : 4 * k;
	if (mode == KBFS_X_LIST)
		want = compress ? KBFS_FMT_VLQ : KBFS_FMT_RAW32;
	else if (mode == KBFS_X_AUTO && list < bmbytes)
		want = compress ? KBFS_FMT_VLQ : KBFS_FMT_RAW32;
	is_u64(fmt, want, "%s: form", what);
	is_u64(bytes, want == KBFS_FMT_BITMAP ? bmbytes : list, "%s: %llu bytes", what,
	       (unsigned long long)(want == KBFS_FMT_BITMAP ? bmbytes : list));
	ok(out[cap] == 0xA5, "%s: nothing written past the capacity", what);
	if (fmt == KBFS_FMT_RAW32 && k) {
		uint64_t first = 0;
		while (!(bm[first / 64] >> (first % 64) & 1))
			first++;
		is_u64(out[0] | (uint64_t)out[1] << 8 | (uint64_t)out[2] << 16 | (uint64_t)out[3] << 24, first,
		       "%s: the first offset as a little-endian u32", what);
	}
	memset(back, 0x5A, bmbytes);
	kbfs_decode(out, d, back, nw, 1);
	ok(!memcmp(back, bm, bmbytes), "%s: decodes back (replace)", what);
	for (size_t w = 0; w < nw; w++)
		orr[w] = back[w] = tap_rand() & tap_rand();
	kbfs_decode(out, d, back, nw, 0);
	int same = 1;
	for (size_t w = 0; w < nw; w++)
		same &= back[w] == (orr[w] | bm[w]);
	ok(same, "%s: decodes back (OR)", what);
	free(bm);
	free(back);
	free(orr);
	free(out);
}

static void test_forms(void)
{
	static const size_t sizes[] = {1, 2, 17, 1024};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (int shape = 0; shape < NSHAPE; shape++)
			for (int mode = KBFS_X_BITMAP; mode <= KBFS_X_AUTO; mode++)
				for (int c = 0; c < 2; c++)
					round_trip(sizes[s], shape, (enum kbfs_xmode)mode, c);
}

static void test_bytes(void)
{
	uint64_t bm[4] = {0, 0, 0, 0};
	bm[0] = 1 | 1u << 5;
	bm[3] = UINT64_C(1) << 8; /* bit 200 */
	uint8_t out[64];
	kbfs_desc d = kbfs_encode(bm, 4, KBFS_X_LIST, 1, out, sizeof out);
	ok(kbfs_desc_fmt(d) == KBFS_FMT_VLQ && kbfs_desc_bytes(d) == 4 && out[0] == 0 && out[1] == 4 && out[2] == 0xC2 &&
		   out[3] == 0x01,
	   "VLQ list of bits {0, 5, 200}: gaps 0, 4, 194 as 00 04 C2 01");
	d = kbfs_encode(bm, 4, KBFS_X_LIST, 0, out, sizeof out);
	ok(kbfs_desc_fmt(d) == KBFS_FMT_RAW32 && kbfs_desc_bytes(d) == 12 && out[4] == 5 && out[8] == 200 && out[9] == 0,
	   "raw list of bits {0, 5, 200}: three little-endian u32");
	is_u64(kbfs_desc_make(12, KBFS_FMT_RAW32), 12 << 2 | 1, "descriptor: bytes << 2 | form");
	/* a list that does not fit the capacity falls back to the bitmap */
	uint64_t full[2] = {UINT64_MAX, UINT64_MAX};
	d = kbfs_encode(full, 2, KBFS_X_LIST, 1, out, 16);
	ok(kbfs_desc_fmt(d) == KBFS_FMT_BITMAP && kbfs_desc_bytes(d) == 16, "a list over the capacity is sent as the bitmap");
	d = kbfs_encode(full, 2, KBFS_X_LIST, 0, out, 16);
	ok(kbfs_desc_fmt(d) == KBFS_FMT_BITMAP, "... raw as well");
}

int main(void)
{
	test_vlq();
	test_bytes();
	test_forms();
	return tap_done();
}

/*
 * test_codec: the CUDA engine's pack/unpack against libcommon's host codec
 * (kbfs_encode / kbfs_decode), byte for byte, both ways.
 *
 * For several segment geometries (segment count, words per segment, wire
 * capacity, aligned or not) and bit patterns (empty, single bits, word and
 * tile boundaries, sparse and dense random, runs, huge gaps for 4-byte
 * varints, full), every exchange mode and compression:
 *   pack on the device == kbfs_encode on the host (descriptor and bytes);
 *   host-encoded bytes unpacked on the device == kbfs_decode on the host,
 *   for SET, OR (onto random data) and OR_ALL;
 *   device-packed bytes unpacked on the device give the bitmap back.
 * Prints TAP; exits 1 on any failure, 0 with "1..0 # skip" without a GPU.
 * --quick: the small geometries only (for compute-sanitizer runs).
 * Built by tests/gpu/build.sh; run by tests/t0610-gpu-codec.sh.
 */
#include "kcomm.h"
#include "kengine.h"
#include "kgpu.h"
#include "klog.h"
#include "kmem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ntest, nfail;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void setbit(uint64_t *bm, uint64_t k) { bm[k >> 6] |= 1ull << (k & 63); }

/* pattern p for one segment of nbw words */
static const char *fill(uint64_t *bm, uint64_t nbw, int p)
{
	uint64_t nbits = nbw * 64;
	memset(bm, 0, nbw * 8);
	switch (p) {
	case 0: return "empty";
	case 1: setbit(bm, 0); return "bit 0";
	case 2: setbit(bm, nbits - 1); return "last bit";
	case 3:
		for (uint64_t w = 0; w < nbw; w += 31) {
			setbit(bm, w * 64 + 63);
			if (w + 1 < nbw)
				setbit(bm, (w + 1) * 64);
		}
		return "word and tile boundaries";
	case 4:
		for (uint64_t k = 0; k < nbits / 1000 + 1; k++)
			setbit(bm, rnd() % nbits);
		return "sparse random (0.1%)";
	case 5:
		for (uint64_t k = 0; k < nbits / 20; k++)
			setbit(bm, rnd() % nbits);
		return "random (5%)";
	case 6:
		for (uint64_t w = 0; w < nbw; w++)
			bm[w] = rnd() & rnd();
		return "dense random (25%)";
	case 7:
		for (uint64_t k = 0; k < nbits; k += 1 + rnd() % 3000) {
			uint64_t run = rnd() % 200;
			for (uint64_t r = 0; r < run && k + r < nbits; r++)
				setbit(bm, k + r);
			k += run;
		}
		return "runs";
	case 8:
		setbit(bm, 0);
		setbit(bm, nbits - 1);
		if (nbits > 3)
			setbit(bm, nbits / 2 + 1);
		return "huge gaps";
	default:
		memset(bm, 0xff, nbw * 8);
		return "full";
	}
}
enum { NPAT = 10 };

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
	va_list ap;
	ntest++;
	printf("%s %d - ", cond ? "ok" : "not ok", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		nfail++;
}

static const char *mode_name(int m) { return m == KBFS_X_BITMAP ? "bitmap" : m == KBFS_X_LIST ? "list" : "auto"; }

/* one geometry: C segments of nbw words, wire capacity cap */
static void run_geometry(int C, uint64_t nbw, uint64_t cap)
{
	kpart_block b;
	memset(&b, 0, sizeof b);
	b.g.R = 1;
	b.g.C = C;
	b.g.nb = nbw * 64;
	b.g.N = b.g.nb * (uint64_t)C;
	b.g.nv = b.g.N;
	b.ncols = b.g.nb;
	b.nrows = b.g.nb * (uint64_t)C;
	b.colptr = kcalloc(b.ncols + 1, 8);
	b.rowptr = kcalloc(b.nrows + 1, 8);
	b.tdeg = kcalloc(b.g.nb, 8);
	kbfs_engine e;
	if (kgpu_engine_cuda(&e, NULL))
		exit(1);
	kbfs_engine_conf conf = {.threads = 0, .wire_cap = cap, .device = 0};
	if (e.setup(&e, &b, &conf))
		exit(1);
	size_t n = (size_t)C * nbw;
	uint64_t *bm = kmalloc(n * 8), *init = kmalloc(n * 8), *want = kmalloc(n * 8), *got = kmalloc(n * 8);
	uint8_t *dwire = kmalloc((size_t)C * cap), *hwire = kmalloc((size_t)C * cap);
	kbfs_desc *dd = kcalloc((size_t)C, sizeof *dd), *hd = kcalloc((size_t)C, sizeof *hd);
	char geo[96];
	snprintf(geo, sizeof geo, "%d seg x %llu words, cap %llu", C, (unsigned long long)nbw, (unsigned long long)cap);
	for (int p0 = 0; p0 < NPAT; p0++) {
		const char *pname = NULL;
		for (int s = 0; s < C; s++) { /* segment s gets pattern p0 + s: mixed forms in one pack */
			const char *nm = fill(bm + (size_t)s * nbw, nbw, (p0 + s) % NPAT);
			if (s == 0)
				pname = nm;
		}
		for (int mode = KBFS_X_BITMAP; mode <= KBFS_X_AUTO; mode++)
			for (int comp = 0; comp <= 1; comp++) {
				if (mode == KBFS_X_BITMAP && comp)
					continue;
				/* device encode == host encode; the source is put back each
				 * time, since on one column RECV may be ROWNEXT (kengine.h) */
				e.to_device(&e, e.buf(&e, KBFS_ROWNEXT), bm, n * 8);
				e.pack(&e, KBFS_ROWNEXT, (size_t)C, mode, comp, dd);
				e.to_host(&e, dwire, e.buf(&e, KBFS_WSEND), (size_t)C * cap);
				int same = 1, bad = -1;
				for (int s = 0; s < C; s++) {
					hd[s] = kbfs_encode(bm + (size_t)s * nbw, nbw, mode, comp, hwire + (size_t)s * cap, cap);
					if (dd[s] != hd[s] ||
					    memcmp(dwire + (size_t)s * cap, hwire + (size_t)s * cap, kbfs_desc_bytes(hd[s]))) {
						same = 0;
						bad = s;
						break;
					}
				}
				check(same, "%s, %s from '%s', %s%s: device pack == kbfs_encode%s", geo, "pattern", pname,
				      mode_name(mode), comp ? "+vlq" : "", same ? "" : " (segment differs)");
				if (!same)
					printf("#   segment %d: device desc %llu bytes form %d, host %llu bytes form %d\n", bad,
					       (unsigned long long)kbfs_desc_bytes(dd[bad]), kbfs_desc_fmt(dd[bad]),
					       (unsigned long long)kbfs_desc_bytes(hd[bad]), kbfs_desc_fmt(hd[bad]));
				/* host encode -> device decode == host decode, every merge */
				e.to_device(&e, e.buf(&e, KBFS_WRECV), hwire, (size_t)C * cap);
				for (int merge = KBFS_M_SET; merge <= KBFS_M_OR_ALL; merge++) {
					size_t nw = merge == KBFS_M_OR_ALL ? nbw : n;
					enum kbfs_buf dst = merge == KBFS_M_OR_ALL ? KBFS_RECV : KBFS_XRECV;
					for (size_t w = 0; w < nw; w++)
						init[w] = merge == KBFS_M_OR ? rnd() & rnd() & rnd() : rnd();
					memcpy(want, init, nw * 8);
					if (merge == KBFS_M_OR_ALL) {
						memset(want, 0, nbw * 8);
						for (int s = 0; s < C; s++)
							kbfs_decode(hwire + (size_t)s * cap, hd[s], want, nbw, 0);
					} else {
						for (int s = 0; s < C; s++)
							kbfs_decode(hwire + (size_t)s * cap, hd[s], want + (size_t)s * nbw, nbw,
								    merge == KBFS_M_SET);
					}
					e.to_device(&e, e.buf(&e, dst), init, nw * 8);
					e.unpack(&e, KBFS_WRECV, cap, (size_t)C, hd, dst, merge);
					e.to_host(&e, got, e.buf(&e, dst), nw * 8);
					static const char *const mn[] = {"set", "or", "or-all"};
					check(!memcmp(got, want, nw * 8), "%s, '%s', %s%s: device unpack (%s) == kbfs_decode", geo,
					      pname, mode_name(mode), comp ? "+vlq" : "", mn[merge]);
				}
				/* device encode -> device decode round trip */
				e.copy(&e, e.buf(&e, KBFS_WRECV), e.buf(&e, KBFS_WSEND), (size_t)C * cap);
				e.unpack(&e, KBFS_WRECV, cap, (size_t)C, dd, KBFS_XRECV, KBFS_M_SET);
				e.to_host(&e, got, e.buf(&e, KBFS_XRECV), n * 8);
				check(!memcmp(got, bm, n * 8), "%s, '%s', %s%s: device round trip", geo, pname, mode_name(mode),
				      comp ? "+vlq" : "");
			}
	}
	e.teardown(&e);
	free(bm);
	free(init);
	free(want);
	free(got);
	free(dwire);
	free(hwire);
	free(dd);
	free(hd);
	free(b.colptr);
	free(b.rowptr);
	free(b.tdeg);
}

int main(int argc, char **argv)
{
	klog_init("test_codec");
	kcomm_init(&argc, &argv, 0);
	int quick = argc > 1 && !strcmp(argv[1], "--quick"); /* small geometries only (sanitizers) */
	if (kgpu_device_count() == 0) {
		printf("1..0 # skip no GPU visible\n");
		return 0;
	}
	struct {
		int C;
		uint64_t nbw;
		int capk; /* 0: the bitmap size; 1: room for any list; 2: bitmap size + 3 (unaligned) */
	} geos[] = {{1, 1, 0},   {1, 1, 1},    {3, 5, 1},     {4, 32, 0},    {4, 33, 1},  {2, 33, 2},
		    {4, 1000, 1}, {2, 4103, 2}, {3, 4096, 0},  {2, 1 << 20, 0}, {8, 97, 1}};
	for (size_t k = 0; k < sizeof geos / sizeof *geos; k++) {
		if (quick && geos[k].nbw > 1000)
			continue;
		uint64_t nb = geos[k].nbw * 64, cap = geos[k].nbw * 8;
		if (geos[k].capk == 1)
			cap = (2 * nb + 64 + 7) & ~7ull;
		else if (geos[k].capk == 2)
			cap += 3;
		run_geometry(geos[k].C, geos[k].nbw, cap);
	}
	printf("1..%d\n", ntest);
	if (nfail)
		printf("# %d of %d checks failed\n", nfail, ntest);
	kcomm_finalize();
	return nfail ? 1 : 0;
}

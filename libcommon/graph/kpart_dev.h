/*
 * kpart_dev: the device that kpart --engine cuda builds blocks on.
 *
 * libcommon never calls gpu/: the kpart program hands kpart_build a
 * kpart_device (cmd/kpart.c passes gpu/'s, kgpu_kpart_device in kgpu.h),
 * a table of a few data-parallel primitives on arrays in the device's
 * memory behind the kdev every device table begins with (kdev.h), and
 * kpart_devbuild.c writes the block's construction with them.
 * The unit test (tests/unit/test_kpartdev.c) fills the same table with
 * plain host loops, so the whole device path runs, and is compared with
 * the CPU path byte for byte, on machines without a GPU.
 *
 * Keys.  A stored directed edge u->v of a block is the u64 key
 * (local column << br) | local row (kpart_build.c); sorting keys sorts the
 * CSC (by column, rows ascending).  The transposed key
 * (local row << bc) | local column sorts the CSR.
 *
 * Memory.  alloc() returns device memory (NULL when it cannot: nothing
 * printed), addressed only through these calls; put and get copy between
 * host and device and return with the copy done.  Every other call may
 * run asynchronously, in order; get() waits for the work before it.
 */
#ifndef KPART_DEV_H
#define KPART_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "kcomm.h"
#include "kdev.h"

/* Device memory a rank leaves free for the runtime's own use: the
 * device's avail() is its free memory less this (gpu/kgpu_part.cu), and
 * kpart --dry-run counts it. */
#define KPART_DEV_RESERVE (UINT64_C(256) << 20)

typedef struct kpart_device kpart_device;
struct kpart_device {
	kdev base; /* name, built, count; open binds this rank's device */
	/* Bytes the build may allocate on this rank's device now (its free
	 * memory, shared among the ranks that share the device, less a
	 * reserve), and a line naming the device for messages. */
	uint64_t (*avail)(kpart_device *d);
	const char *(*where)(kpart_device *d);

	void *(*alloc)(kpart_device *d, size_t bytes);
	void (*release)(kpart_device *d, void *p);
	void (*put)(kpart_device *d, void *dst, const void *host, size_t bytes);
	void (*get)(kpart_device *d, void *host, const void *src, size_t bytes);
	void (*clear)(kpart_device *d, void *p, size_t bytes);

	/* Scratch bytes that sort, unique and scan need for up to n items. */
	uint64_t (*scratch_bytes)(kpart_device *d, uint64_t n);
	/* Sort keys[0, n) ascending, keys below 2^bits; tmp holds n keys.
	 * Returns keys or tmp: where the sorted keys are. */
	uint64_t *(*sort)(kpart_device *d, uint64_t *keys, uint64_t *tmp, uint64_t n, int bits, void *scratch);
	/* out = the distinct keys of the sorted in[0, n), in order (in and
	 * out do not overlap); returns their number. */
	uint64_t (*unique)(kpart_device *d, const uint64_t *in, uint64_t *out, uint64_t n, void *scratch);
	/* a[k] = a[0] + ... + a[k] for k < n, in place. */
	void (*scan)(kpart_device *d, uint64_t *a, uint64_t n, void *scratch);
	/* cnt[keys[k] >> shift] += 1 for every k < n; keys sorted ascending.
	 * cnt is not cleared first. */
	void (*count_sorted)(kpart_device *d, const uint64_t *keys, uint64_t n, int shift, uint64_t *cnt);
	/* cnt[keys[k] & mask] += 1 for every k < n (any order; cnt is not
	 * cleared first). */
	void (*count_low)(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, uint64_t *cnt);
	/* keys[e] = (s << bits) | x[e] for every e in segment s, that is
	 * start[s] - start[0] <= e < start[s+1] - start[0], s < nseg; x has
	 * u32 (w = 4) or u64 (w = 8) entries; n = start[nseg] - start[0];
	 * segments are numbered from s0 (the key gets (s0 + s) << bits). */
	void (*expand)(kpart_device *d, const void *x, int w, const uint64_t *start, uint64_t nseg, uint64_t s0,
		       int bits, uint64_t n, uint64_t *keys);
	/* keys[k] = hi[keys[k] >> lo] << lo | low[keys[k] & (2^lo - 1)]
	 * (a relabelling of both halves by the permutations hi and low). */
	void (*remap)(kpart_device *d, uint64_t *keys, uint64_t n, int lo, const uint64_t *hi, const uint64_t *low);
	/* keys[k] = (keys[k] & (2^lo - 1)) << hibits | keys[k] >> lo: the
	 * halves swapped (CSC key to CSR key), hibits the width of the top. */
	void (*swap)(kpart_device *d, uint64_t *keys, uint64_t n, int lo, int hibits);
	/* out[k] = keys[k] & mask, as u32 (w = 4) or u64 (w = 8). */
	void (*low)(kpart_device *d, const uint64_t *keys, uint64_t n, uint64_t mask, void *out, int w);
	/* Seconds the device spent in its calls so far (sorts and the rest,
	 * copies apart). */
	void (*times)(kpart_device *d, double *compute_s, double *copy_s);
};

#endif

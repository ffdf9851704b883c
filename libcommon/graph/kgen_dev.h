/*
 * kgen_dev: the device kgen --engine cuda generates edges on.
 *
 * libcommon never calls gpu/: the kgen program hands kgenrun_generate a
 * kgen_device (cmd/kgen.c passes gpu/'s, kgpu_kgen_device in kgpu.h; the
 * unit test test_kgenrun fills one with host loops).  Its kdev part
 * (kdev.h) names it, says whether the build has it and binds this rank's
 * device (open); close frees what alloc took.
 *
 * The device works on two slots, each able to hold `chunk` edges: start()
 * begins generating edges [first, first+n) into a slot and bringing them
 * to host memory, and returns at once; wait() returns the slot's edges in
 * host memory (as kgen_edges() writes them), valid until the slot is
 * started again.
 */
#ifndef KGEN_DEV_H
#define KGEN_DEV_H

#include <stdint.h>

#include "kcomm.h"
#include "kdev.h"
#include "kgen.h"

/* Edges per slot of a device (each slot holds one chunk in device and in
 * pinned host memory: 256 MiB). */
#define KGEN_DEVICE_CHUNK (UINT64_C(1) << 24)

typedef struct kgen_device kgen_device;
struct kgen_device {
	kdev base;
	/* Collective, the device open: check that the slots of chunk edges
	 * fit in its memory and allocate them.  0 or a KEXIT code after
	 * kerror() (then nothing stays allocated). */
	int (*alloc)(kgen_device *d, kcomm *world, const kgen_ctx *g, uint64_t chunk);
	void (*start)(kgen_device *d, int slot, uint64_t first, uint64_t n);
	const uint64_t *(*wait)(kgen_device *d, int slot);
	/* Seconds the device spent generating (kernels) and copying to the
	 * host, summed over the chunks so far. */
	void (*times)(kgen_device *d, double *gen_s, double *copy_s);
};

/* Device memory kgen --engine cuda needs per rank for chunks of `chunk`
 * edges (0: KGEN_DEVICE_CHUNK): two buffers of a chunk, the constant table
 * and the 64 MiB it leaves free; gpu/kgpu_gen.cu plans with it, kpart
 * --dry-run prints it (the same for every graph). */
uint64_t kgen_device_bytes(uint64_t chunk);

#endif

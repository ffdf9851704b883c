/*
 * kgenrun: the work behind the kgen program: generate a Kronecker graph in
 * parallel (OpenMP threads and MPI ranks, each a range of edge indices) or
 * import a real graph, and write it through ksink.  Rank 0 writes; the
 * output is byte-identical whatever the number of ranks and threads, and
 * whichever engine generated the edges.
 *
 * Engines: the CPU generator of libcommon (kgen.h), or a device reached
 * only through a kgen_device that the caller hands in (cmd/kgen.c passes
 * gpu/'s, kgpu_kgen_device in kgpu.h), so libcommon never calls into gpu/.
 * Imports always run on the CPU.
 */
#ifndef KGENRUN_H
#define KGENRUN_H

#include "kcomm.h"
#include "kgen.h"

/* A device that generates edges.  Filled by the device's code; open is
 * collective.  The device works on two slots, each able to hold `chunk`
 * edges: start() begins generating edges [first, first+n) into a slot and
 * bringing them to host memory, and returns at once; wait() returns the
 * slot's edges in host memory (as kgen_edges() writes them), valid until
 * the slot is started again. */
typedef struct kgen_device kgen_device;
struct kgen_device {
	const char *name; /* "cuda" */
	int built;        /* this build has the device generator */
	void *impl;
	/* Devices this rank sees (0: none, or not built). */
	int (*count)(void);
	/* Collective: bind this rank's device, check that the slots of chunk
	 * edges fit in its memory and allocate them.  0 or a KEXIT code after
	 * kerror() (then nothing stays allocated). */
	int (*open)(kgen_device *d, kcomm *world, const kgen_ctx *g, uint64_t chunk);
	void (*start)(kgen_device *d, int slot, uint64_t first, uint64_t n);
	const uint64_t *(*wait)(kgen_device *d, int slot);
	/* Seconds the device spent generating (kernels) and copying to the
	 * host, summed over the chunks so far. */
	void (*times)(kgen_device *d, double *gen_s, double *copy_s);
	void (*close)(kgen_device *d);
};

typedef struct kgenrun_opts {
	kgen_params p;
	const char *from;     /* import this file instead of generating */
	const char *map_out;  /* --map FILE */
	int import_format;    /* enum kimport_format */
	int skip_bad;
	int format;           /* enum kfmt */
	const char *out;      /* "-" = stdout */
	int force, compress;
	int engine;           /* enum kbfs_engine_kind (kbfs_run.h: kbfs's --engine); generation only */
	kgen_device *dev;     /* the device for --engine cuda|auto; NULL: none */
	int argc;
	char **argv;
} kgenrun_opts;

int kgenrun_generate(kcomm *world, const kgenrun_opts *o);
/* Device memory kgen --engine cuda needs per rank for chunks of `chunk`
 * edges (0: the default chunk): two buffers of a chunk, the constant table
 * and the 64 MiB it leaves free; gpu/kgpu_gen.cu plans with it, kpart
 * --dry-run prints it (the same for every graph). */
uint64_t kgenrun_device_bytes(uint64_t chunk);
int kgenrun_import(kcomm *world, const kgenrun_opts *o);

#endif

/*
 * kgenrun: the work behind the kgen program: generate a Kronecker graph in
 * parallel (OpenMP threads and MPI ranks, each a range of edge indices) or
 * import a real graph, and write it through ksink.  Rank 0 writes; the
 * output is byte-identical whatever the number of ranks and threads, and
 * whichever engine generated the edges.
 *
 * Engines: the CPU generator of libcommon (kgen.h), or a device reached
 * only through a kgen_device (kgen_dev.h) that the caller hands in
 * (cmd/kgen.c passes gpu/'s, kgpu_kgen_device in kgpu.h).
 * Imports always run on the CPU.
 */
#ifndef KGENRUN_H
#define KGENRUN_H

#include "kcomm.h"
#include "kgen.h"
#include "kgen_dev.h"

typedef struct kgenrun_opts {
	kgen_params p;
	const char *from;     /* import this file instead of generating */
	const char *map_out;  /* --map FILE */
	int import_format;    /* enum kimport_format */
	int skip_bad;
	int format;           /* enum kfmt */
	const char *out;      /* "-" = stdout */
	int force, compress;
	int engine;           /* enum kdev_engine (--engine); generation only */
	kgen_device *dev;     /* the device for --engine cuda|auto; NULL: none */
	int argc;
	char **argv;
} kgenrun_opts;

int kgenrun_generate(kcomm *world, const kgenrun_opts *o);
int kgenrun_import(kcomm *world, const kgenrun_opts *o);

#endif

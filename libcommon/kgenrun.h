/*
 * kgenrun: the work behind the kgen program: generate a Kronecker graph in
 * parallel (OpenMP threads and MPI ranks, each a range of edge indices) or
 * import a real graph, and write it through ksink.  Rank 0 writes; the
 * output is byte-identical whatever the number of ranks and threads.
 */
#ifndef KGENRUN_H
#define KGENRUN_H

#include "kcomm.h"
#include "kgen.h"

typedef struct kgenrun_opts {
	kgen_params p;
	const char *from;     /* import this file instead of generating */
	const char *map_out;  /* --map FILE */
	int import_format;    /* enum kimport_format */
	int skip_bad;
	int format;           /* enum kfmt */
	const char *out;      /* "-" = stdout */
	int force, compress;
	int argc;
	char **argv;
} kgenrun_opts;

int kgenrun_generate(kcomm *world, const kgenrun_opts *o);
int kgenrun_import(kcomm *world, const kgenrun_opts *o);

#endif

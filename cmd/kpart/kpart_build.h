/*
 * kpart_build: the builder behind the kpart program: an edge file cut into
 * the rank files and the manifest of kpart.h, on one process or on R*C,
 * on the CPU or on a kpart_device (kpart_dev.h).  kpart_build.c lists its
 * steps.  Callers: cmd/kpart.c and the unit tests.
 */
#ifndef KPART_BUILD_H
#define KPART_BUILD_H

#include <stdint.h>

#include "kcomm.h"
#include "kgen.h"
#include "kpart.h"

struct kpart_device; /* kpart_dev.h */
typedef struct kpart_opts {
	const char *input;   /* edge file, "-" for stdin (read by rank 0); with gen, the manifest's source */
	const kgen_params *gen; /* kpart -s: the Kronecker graph generated here, no input read */
	const char *gen_prov;   /* with gen: the provenance kgen would write (kedge_prov_make) */
	struct kgen_device *gdev; /* with gen: the device it is generated on when the build runs on one */
	const char *outdir;  /* the partition directory to create */
	int R, C;
	int relabel;         /* KPART_RELABEL_* */
	int force;           /* replace an existing outdir (after success) */
	int wide;            /* testing: u64 indices and offsets on disk */
	uint64_t round_tuples; /* tuples per exchange round per rank (0 = default) */
	const char *argv;    /* the command line, for build-info (may be NULL) */
	int engine;          /* enum kdev_engine (kdev.h): auto builds on the device when every rank sees one */
	struct kpart_device *dev; /* the device for --engine cuda; NULL: none */
} kpart_opts;

typedef struct kpart_build_stats {
	double t_total;      /* whole build: open input .. partition in place */
	double t_read;       /* reading and checking the input (first pass) */
	double t_build;      /* exchange, sort, dedup, CSC+CSR, tdeg, relabel */
	double t_write;      /* rank files, manifest, rename */
	uint64_t nv, N, M, selfloops, nnz;
	int nprocs, threads;
	const char *engine;  /* "cpu" or the device's name */
	uint64_t dev_pieces; /* device: pieces this rank's CSCs were built in */
	int dev_finished;    /* device: this rank's parts relabelled and transposed there */
	uint64_t dev_on_host; /* device, --engine auto: this rank's parts too large for it, built on the host */
	double t_gen;        /* with gen: seconds generating the tuples (the slowest rank) */
} kpart_build_stats;

/* Build the partition; collective over comm (size 1, or R*C ranks).
 * Every rank returns the same code: 0, or a KEXIT code after one rank has
 * printed the reason.  On failure nothing is left on disk. */
int kpart_build(kcomm *comm, const kpart_opts *o, kpart_build_stats *st);

#endif

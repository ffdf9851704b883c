/*
 * kbfs_run: the kbfs program around the search of kbfs.h.
 *
 * kbfs_main runs the program on a partition: engine choice, partition
 * check and load, threads, --dry-run, roots (kbfs_roots.c), warm-up,
 * timing, validation, statistics, JSON and the predecessor/depth files
 * (kbfs_out.c).  Every function here is collective over the ranks of the
 * job; only rank 0 writes output.
 *
 * Timing: a search's time runs from a barrier before reset() to a barrier
 * after the predecessor map is complete on every owner (the MIN
 * reduce-scatter included); it is measured on rank 0.
 *
 * Engines: the program runs the CPU engine of libcommon itself and reaches
 * a device engine only through a kbfs_device, which the caller hands in
 * (cmd/kbfs.c passes the CUDA one, kbfs_gpu_device of kbfs_gpu.c, over
 * gpu/'s kgpu.h).  So the run never calls into gpu/ itself.
 */
#ifndef KBFS_RUN_H
#define KBFS_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "kbfs.h"
#include "kcomm.h"
#include "kdev.h"
#include "kjson.h"

/* --transport: auto = the device's transport when the CUDA engine runs and
 * NCCL is built in (peer-to-peer levels where every rank can use them,
 * else NCCL alone), MPI otherwise; nccl = NCCL alone; peer = NCCL with the
 * peer-to-peer levels, refused where they cannot run */
enum kbfs_transport_kind { KBFS_TRANSPORT_AUTO, KBFS_TRANSPORT_MPI, KBFS_TRANSPORT_NCCL, KBFS_TRANSPORT_PEER };
/* "auto", "mpi", "nccl", "peer", NULL: by enum kbfs_transport_kind (--transport) */
extern const char *const kbfs_transport_names[];
/* "text", "bin", NULL: kbfs_opts.pred_binary (--pred-format) */
extern const char *const kbfs_pred_format_names[];

/* A device engine the program can run instead of the CPU engine: what it
 * needs to choose, start, plan and report it.  Filled by the device's code
 * (kbfs_gpu_device); calls marked collective are made by every rank
 * in the same order.  Each returns 0 or a KEXIT code after kerror(). */
typedef struct kbfs_device kbfs_device;
struct kbfs_device {
	kdev base;         /* name, built, count; open binds this rank's device,
			    * close drops what report kept */
	int nccl_built;    /* the build has the device's NCCL transport */
	/* Collective, the device open: fill *e with the device engine (not
	 * set up yet) and, unless t is NULL, *t with the device's transport
	 * (NCCL). */
	int (*engine)(kbfs_device *d, kcomm *world, kbfs_engine *e, kbfs_transport *t);
	/* Collective (--dry-run): the device memory plan of block b under conf
	 * against every rank's device, printed by rank 0 under a head line
	 * naming dir and the transport; KEXIT_RESOURCE when a rank's does not
	 * fit. */
	int (*dry_run)(kbfs_device *d, kcomm *world, const char *dir, const kpart_block *b,
		       const kbfs_engine_conf *conf, const char *transport);
	/* Collective, device bound: every rank's device to rank 0, which
	 * keeps them for json_devices and prints one kinfo() line each. */
	int (*report)(kbfs_device *d, kcomm *world);
	/* Rank 0, JSON record: one object per device kept by report, as
	 * elements of the "gpus" array; the device's options as members of
	 * "options". */
	void (*json_devices)(kbfs_device *d, kjson_writer *w);
	void (*json_options)(kbfs_device *d, kjson_writer *w);
};

/* Where the sampler draws roots from (--roots-from): every vertex with an
 * edge (Graph500), or the component of the vertex of highest degree. */
enum kbfs_roots_from { KBFS_ROOTS_ALL, KBFS_ROOTS_LARGEST };
extern const char *const kbfs_roots_from_names[]; /* "all", "largest" */

/* Where each tree is validated (--validator). */
enum kbfs_validator { KBFS_VAL_AUTO, KBFS_VAL_DEVICE, KBFS_VAL_HOST };
extern const char *const kbfs_validator_names[]; /* "auto", "device", "host" */

typedef struct kbfs_opts {
	kbfs_algo algo;           /* --direction, --alpha, --beta, --exchange, --no-compress, --no-sv */
	int validate;
	int validator;            /* enum kbfs_validator (--validator; default auto: device when the
				   * engine offers tree_check, else host) */
	int warmup;
	int nroots;               /* default roots to draw (64) */
	int nroots_set;           /* -n given */
	const uint64_t *roots;    /* -r values (input ids) */
	size_t nroots_given;
	const char *roots_file;   /* --roots */
	int roots_from;           /* enum kbfs_roots_from (--roots-from) */
	const char *json;         /* --json FILE */
	const char *pred_out;     /* --pred-out DIR */
	int pred_binary;
	const char *depth_out;    /* --depth-out DIR */
	int engine;               /* enum kdev_engine (--engine) */
	int transport;            /* enum kbfs_transport_kind */
	int dry_run;              /* --dry-run: print the memory plan, search nothing */
	int threads;              /* 0: one core per rank */
	int verbose;
	int argc;
	char **argv;
} kbfs_opts;

void kbfs_opts_default(kbfs_opts *o);
/* The CUDA engine as the program's device (kbfs_gpu.c, over kgpu.h; built
 * with or without CUDA): fills *d with o kept by pointer.  One kbfs_main
 * at a time per process. */
struct kgpu_opts;
void kbfs_gpu_device(kbfs_device *d, const struct kgpu_opts *o);
/* Run the kbfs program on partition dir; dev is the device engine on
 * offer (NULL: the CPU engine only).  Returns the exit status. */
int kbfs_main(kcomm *world, const char *dir, const kbfs_opts *o, kbfs_device *dev);

#endif

/*
 * kgpu: the CUDA engine and the NCCL transport, exported to C.
 *
 * Built from the .cu files of gpu/ with nvcc when CUDA is available; otherwise
 * gpu/kgpu_none.c provides the same symbols: the constructors then fail
 * with "this build has no CUDA engine" and the queries report nothing.
 *
 * The engine (kengine.h) keeps the partition, the bitmaps, the frontiers
 * and the predecessors in device memory; the host only drives levels and
 * communication.  Every CUDA and NCCL call is checked; a failure names the
 * rank, host, GPU, file and line and ends the job (KEXIT_RESOURCE).
 *
 * GPU per rank: the node-local rank modulo the visible GPUs
 * (CUDA_VISIBLE_DEVICES is respected), or kgpu_opts.gpu.  Several ranks
 * may share one GPU; the memory check then counts all of them.
 *
 * Collective calls (every rank of the world communicator must make them,
 * in the same order): kgpu_bind, kgpu_plan when the GPU is not bound yet,
 * e->setup of the CUDA engine, and the NCCL transport's setup.
 *
 * Who calls: the kbfs program (cmd/kbfs.c: the options; cmd/kbfs/kbfs_gpu.c:
 * the kbfs_device through which its run chooses, plans and reports the
 * engine), kgen and kpart (their device tables, below) and the GPU tests.
 * Nothing in libcommon calls gpu/: gpu/ builds on libcommon.
 */
#ifndef KGPU_H
#define KGPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
#ifndef _Noreturn
#define _Noreturn __attribute__((noreturn))
#endif
extern "C" {
#endif

#include "kengine.h"

/* Number of CUDA devices visible to this process (0 when none or no CUDA). */
int kgpu_device_count(void);
/* 1 when this build contains the CUDA engine. */
int kgpu_built(void);
/* 1 when this build contains the NCCL transport. */
int kgpu_nccl_built(void);

/* Top-down expansion kernels (--kernel NAME). */
enum kgpu_kernel {
	KGPU_K_LB = 0,  /* "lb": degree scan + merge-path search, several interleaved edges per thread (Bisson) */
	KGPU_K_MERRILL, /* "merrill": CTA / warp / scan-based fine-grained gathering (Merrill) */
	KGPU_K_VERTEX,  /* "vertex": one thread per frontier vertex (baseline) */
	KGPU_K_VBFS,    /* "vbfs": virtual vertices of at most vbfs_k edges, one thread each (baseline) */
	KGPU_K_EDGE,    /* "edge": one thread per stored edge, no frontier list (Kolganov's edge list; baseline) */
	KGPU_K_COUNT
};

/* Bottom-up kernels (--bu-kernel NAME). */
enum kgpu_bu_kernel {
	KGPU_BU_TILE = 0, /* "tile": a warp takes 32 ROWVIS words at once and works only on those with unvisited rows */
	KGPU_BU_WORD,     /* "word": a warp takes one word at a time (the first kernel; --bu-rows, --bu-batch) */
	KGPU_BU_COUNT
};

typedef struct kgpu_opts {
	int kernel;           /* enum kgpu_kernel; default KGPU_K_LB */
	int vbfs_k;           /* edges per virtual vertex for "vbfs" (>= 1; default 32) */
	int gpu;              /* device ordinal, -1 = node-local rank modulo visible GPUs (default) */
	int bu_split;         /* bottom-up: rows with more entries are scanned by a whole warp (default 32) */
	int bu_rows;          /* bottom-up: rows a lane scans together, 1 or 2 (default 1) */
	int bu_batch;         /* bottom-up, thread per row: probes issued together, 1, 2, 4 or 8 (default 1) */
	uint64_t td_chunk;    /* top-down: frontier words per piece (0 = default 65536); bounds the scratch */
	int off64;            /* keep 64-bit CSR/CSC offsets on the device even when nnz < 2^32 (testing) */
	int bu_kernel;        /* enum kgpu_bu_kernel; default KGPU_BU_TILE */
	int bu_first;         /* bottom-up: each row's first neighbour in a dense array, probed first (default 1) */
	int step_sync;        /* wait for the device after every step and read piece sizes back (default 0:
			       * one wait a level) */
	int td_small;         /* top-down, kernel lb: frontiers of at most 1024 columns scanned inside the
			       * expansion, in shared memory (default 1; 0: a CUB scan launch) */
	int td_lists;         /* top-down, kernel lb, on one rank or a one-column grid over the peer
			       * transport: a level of at most 1024 frontier columns works from lists
			       * of the bitmaps' nonzero words, not passes over them (default 1) */
	int validate;         /* keep the arrays of the tree check and offer it (kengine.h tree_check;
			       * default 0: kbfs sets it unless told to validate on the host or not at all) */
	int peer;             /* the NCCL transport's device-resident levels between the GPUs of one host
			       * (kgpu_transport_nccl): 0 off, 1 when every rank can (default), 2 required */
	int dense_push;       /* peer levels: send every word of each bitmap, not only those that changed */
	int no_marks;         /* record no phase events in the levels (KBFS_CUDA_MARKS=0: their host cost
			       * measured; the levels' phase times are then 0) */
	int td_loop;          /* KBFS_CUDA_TD_LOOP=1 (an experiment, one rank): runs of small top-down
			       * levels in one cooperative launch, no host between them (kengine.h td_run) */
	unsigned list_cap;    /* td_lists: words a list holds (0: 1024; KBFS_CUDA_LIST_CAP=N, a test hook
			       * that makes lists overflow on small graphs) */
	int tdeg_batch;       /* the owner update: words with new bits a warp takes together, their tdeg
			       * loads in flight at once: 1, 4 or 8 (default 8; KBFS_CUDA_TDEG_BATCH=N) */
	unsigned spin_us;     /* KBFS_CUDA_SPIN_US=N (an experiment): each level starts with an N us
			       * spin on the GPU, during which the host queues the level's work, so
			       * the phase times are the GPU's alone, without the host's gaps */
	int pred_finish;      /* grids of several columns (KBFS_CUDA_PRED_FINISH=0 turns it off): PRED
			       * is not cleared at each search's start (8 bytes an owned vertex) but
			       * its unreached entries put right after the levels, from OWNVIS and a
			       * bitmap of the owned vertices without edges (the peer transport), or
			       * not at all where the row's reduction writes all of it (the others) */
	int sym;              /* a 1x1 grid's block, symmetric, kept once: the CSR is the CSC (colidx =
			       * rowidx, rowptr = colptr; default 1, KBFS_SYM=0 keeps both) */
} kgpu_opts;

/* Defaults.  Test hooks from the environment (for exercising rare paths on
 * small graphs): KBFS_CUDA_TD_CHUNK=N sets td_chunk, KBFS_CUDA_OFF64=1 sets
 * off64, KBFS_CUDA_MARKS=0 sets no_marks, KBFS_CUDA_SPIN_US=N spin_us,
 * KBFS_CUDA_LIST_CAP=N list_cap, KBFS_CUDA_TD_LOOP=1 td_loop,
 * KBFS_CUDA_TDEG_BATCH=N tdeg_batch, KBFS_CUDA_PRED_FINISH=0 pred_finish
 * (all read here), KBFS_CUDA_FREE_BYTES=N makes the memory check see at most N free
 * bytes. */
void kgpu_opts_default(kgpu_opts *o);
/* The defaults without the test hooks: what kgpu_opts_default starts from
 * in every build. */
static inline void kgpu_opts_base(kgpu_opts *o)
{
	memset(o, 0, sizeof *o);
	o->kernel = KGPU_K_LB;
	o->vbfs_k = 32;
	o->gpu = -1;
	o->bu_split = 32;
	o->bu_batch = 1;
	o->bu_rows = 1;
	o->bu_kernel = KGPU_BU_TILE;
	o->bu_first = 1;
	o->td_small = 1;
	o->td_lists = 1;
	o->peer = 1;
	o->tdeg_batch = 8;
	o->pred_finish = 1;
	o->sym = 1;
}
/* "lb" -> KGPU_K_LB ...; -1 when unknown. */
int kgpu_kernel_parse(const char *name);
const char *kgpu_kernel_name(int kernel);
/* "lb, merrill, vertex, vbfs, edge": every name, for usage and error
 * messages (kgpu_names.c, one table for both builds). */
const char *kgpu_kernel_names(void);
/* "tile" -> KGPU_BU_TILE, "word" -> KGPU_BU_WORD; -1 when unknown. */
static const char *const kgpu_bu_kernel_names[KGPU_BU_COUNT] = {"tile", "word"};
static inline int kgpu_bu_kernel_parse(const char *name)
{
	for (int k = 0; k < KGPU_BU_COUNT; k++)
		if (name && strcmp(name, kgpu_bu_kernel_names[k]) == 0)
			return k;
	return -1;
}
static inline const char *kgpu_bu_kernel_name(int k)
{
	return k >= 0 && k < KGPU_BU_COUNT ? kgpu_bu_kernel_names[k] : "?";
}

/* Fill *e with the CUDA engine (name "cuda", device_memory 1).  o may be
 * NULL (defaults).  Returns 0, or KEXIT_USAGE after kerror() when the build
 * has no CUDA engine or o is invalid.  Allocates only a small state; the
 * device memory is allocated by e->setup (which first checks that the
 * plan fits, see kgpu_plan) and freed by e->teardown.  conf->device is
 * ignored: the GPU comes from kgpu_opts.gpu. */
int kgpu_engine_cuda(kbfs_engine *e, const kgpu_opts *o);

/* Fill *t with the NCCL transport (name "nccl") for the CUDA engine.
 * Data exchanges of an axis run through NCCL between device buffers when
 * the ranks of that axis sit on distinct GPUs; an axis whose ranks share a
 * GPU (NCCL refuses that) and the WORLD axis use the MPI transport with
 * host staging, as do all control exchanges.  With kgpu_opts.peer, when
 * every rank is on one host with a GPU of its own that reaches the
 * others' memory, setup also offers the device-resident levels of
 * kengine.h (lv_*: stores into the peers' memory through CUDA IPC,
 * ordered by flags; gpu/kgpu_peer.cu) and the name becomes "peer".  Sets
 * NCCL_NVLS_ENABLE=0 unless already set.  Returns 0, or KEXIT_USAGE after
 * kerror() when the build has no NCCL. */
int kgpu_transport_nccl(kbfs_transport *t);

/* Select and bind this rank's GPU (idempotent; the first call's opts win;
 * o may be NULL).  Collective over the world communicator: also finds how
 * many ranks share each GPU.  Returns 0 or KEXIT_RESOURCE / KEXIT_USAGE
 * after kerror() (no GPU visible, --gpu out of range). */
int kgpu_bind(const kgpu_opts *o);

/* This rank's GPU, for -v and the JSON report (after kgpu_bind). */
typedef struct kgpu_devinfo {
	int rank;            /* world rank */
	char host[64];
	int gpu;             /* device ordinal in this process's numbering */
	int ngpus;           /* devices visible */
	int sharers;         /* ranks bound to this same GPU (>= 1) */
	char name[128];      /* e.g. "NVIDIA H100 80GB HBM3" */
	char uuid[48];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
	char pci[32];        /* "0000:18:00.0" */
	int cc_major, cc_minor;
	int sms;
	uint64_t total_bytes; /* device memory */
	uint64_t free_bytes;  /* free when asked */
	uint64_t key;         /* the GPU across ranks: a hash of (host, UUID), equal on the ranks sharing it */
} kgpu_devinfo;
/* Fill *d (binding with defaults if needed: then collective).  0 or a
 * KEXIT code after kerror(). */
int kgpu_device_info(kgpu_devinfo *d);
/* One line: "rank 3 host node1 gpu 1/2 NVIDIA H100 80GB HBM3 GPU-... pci ... shared by 2". */
void kgpu_devinfo_line(const kgpu_devinfo *d, char *buf, size_t len);

/* Device memory plan of one rank: every array the engine allocates. */
#define KGPU_PLAN_MAX 48
typedef struct kgpu_plan_t {
	int n;
	struct {
		char name[24];
		uint64_t bytes;
	} a[KGPU_PLAN_MAX];
	uint64_t total;        /* sum of a[].bytes plus reserve */
	uint64_t reserve;      /* CUDA context, NCCL buffers, allocator slack (estimate) */
	uint64_t graph;        /* CSC + CSR (the per-edge part) */
	uint64_t nnz;
	double bytes_per_edge; /* total / nnz (0 when nnz == 0) */
	int off64, idx64;      /* offset and index widths on the device */
	uint64_t free_bytes;   /* free on this rank's GPU (cudaMemGetInfo) */
	uint64_t total_bytes;  /* memory of this rank's GPU */
	int gpu, sharers;
} kgpu_plan_t;

/* Plan for block b: only the geometry fields (g, i, j, ncols, nrows, nnz,
 * idx64) are read, so a block filled from the manifest without arrays
 * does for --dry-run.  conf gives wire_cap (0: nbw * 8).  The GPU is bound
 * first if needed (collective then).  Returns 0 or a KEXIT code. */
int kgpu_plan(const kpart_block *b, const kbfs_engine_conf *conf, kgpu_plan_t *plan);
/* Multi-line table "array bytes" with totals, bytes per edge and free. */
void kgpu_plan_print(FILE *fp, const kgpu_plan_t *plan);
/* 0 when needed_on_gpu (the bytes of every rank sharing this GPU; 0 means
 * plan->total * plan->sharers) fits in plan->free_bytes; otherwise
 * kerror() naming the first array that does not fit, the bytes needed and
 * free and what to do, and returns KEXIT_RESOURCE. */
int kgpu_plan_check(const kgpu_plan_t *plan, uint64_t needed_on_gpu);

/* ---- kgen on the device (gpu/kgpu_gen.cu; kgen --engine cuda) ----
 * Fill *d with the CUDA generator as the kgen_device of kgen_dev.h
 * (cmd/kgen.c passes it to kgenrun_generate): the Graph500 edges of
 * kgen_edge.h made on this rank's GPU (bound as kbfs binds it, kgpu_bind)
 * in two slots of device and pinned host memory, planned against the free
 * device memory before allocating.  Without CUDA, built = 0 and count
 * says 0. */
struct kgen_device;
void kgpu_kgen_device(struct kgen_device *d);

/* ---- kpart on the device (gpu/kgpu_part.cu; kpart --engine cuda) ----
 * Fill *d with the CUDA primitives as the kpart_device of kpart_dev.h
 * (cmd/kpart.c passes it to kpart_build): CUB radix sorts, unique and
 * scans and a few kernels, on this rank's GPU (bound as kbfs binds it,
 * kgpu_bind).  Without CUDA, built = 0 and count says 0. */
struct kpart_device;
void kgpu_kpart_device(struct kpart_device *d);

#ifdef __cplusplus
}
#endif
#endif

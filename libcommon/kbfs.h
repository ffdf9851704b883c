/*
 * kbfs: the distributed 2D breadth-first search and the kbfs program's run.
 *
 * kbfs.c owns the level loop (expand, local step, fold, owner update,
 * shared visited, termination and the direction switch), written once over
 * the engine and transport interfaces of kengine.h, and the predecessor
 * reduction that ends a search.  kbfs_run.c owns the program around it:
 * partition check and load, root selection (the Graph500 sampler run
 * collectively), warm-up, timing, validation, statistics, JSON and the
 * predecessor/depth files.  Every function here is collective over the
 * ranks of the job; only rank 0 writes output.
 *
 * Timing: a search's time runs from a barrier before reset() to a barrier
 * after the predecessor map is complete on every owner (the MIN
 * reduce-scatter included); it is measured on rank 0.
 */
#ifndef KBFS_H
#define KBFS_H

#include <stddef.h>
#include <stdint.h>

#include "kcomm.h"
#include "kengine.h"
#include "kgpu.h"
#include "kpart.h"

enum kbfs_dir { KBFS_DIR_AUTO, KBFS_DIR_TD, KBFS_DIR_BU };
enum kbfs_engine_kind { KBFS_ENGINE_CPU, KBFS_ENGINE_CUDA, KBFS_ENGINE_AUTO };
/* --transport: auto = NCCL when the CUDA engine runs and NCCL is built in */
enum kbfs_transport_kind { KBFS_TRANSPORT_AUTO, KBFS_TRANSPORT_MPI, KBFS_TRANSPORT_NCCL };
enum kbfs_phase { KBFS_PH_EXPAND, KBFS_PH_LOCAL, KBFS_PH_FOLD, KBFS_PH_UPDATE, KBFS_PH_SV, KBFS_PH_ALLREDUCE,
		  KBFS_NPHASE };
enum kbfs_xchg { KBFS_XG_EXPAND, KBFS_XG_FOLD, KBFS_XG_SV, KBFS_NXCHG };

/* One level of one search (counts summed over all ranks, times rank 0's). */
typedef struct kbfs_level {
	uint32_t level;      /* 1 = the root's neighbours */
	int dir;             /* KBFS_DIR_TD or KBFS_DIR_BU */
	uint64_t frontier;   /* vertices in the frontier this level expands */
	uint64_t found;      /* vertices first reached at this level */
	uint64_t examined;   /* adjacency entries read by the local steps */
	uint64_t bytes[KBFS_NXCHG]; /* bytes sent to other ranks */
	double time[KBFS_NPHASE];
} kbfs_level;

/* The search: configuration, interfaces and the last search's results. */
typedef struct kbfs_ctx {
	const kpart_block *b;
	kbfs_engine *e;
	kbfs_transport *t;
	int direction;       /* enum kbfs_dir */
	double alpha, beta;  /* Beamer's switch thresholds */
	int exchange;        /* enum kbfs_xmode */
	int compress;        /* lists as gap + VLQ (else raw offsets) */
	int sv;              /* share visited rows along the processor row */
	uint64_t wire_cap;   /* bytes per packed segment */
	uint64_t tdeg_total; /* sum of tdeg over every vertex */
	int verbose;         /* per-level lines on stderr (rank 0) */
	uint64_t root_label; /* the root in input ids, for messages */
	/* results of the last search */
	kbfs_level *lv;
	size_t nlv, lvcap;
	size_t ntimed;         /* levels whose phase times are filled in */
	uint64_t reached;      /* vertices reached, root included */
	uint64_t tdeg_reached; /* sum of tdeg over them: nedge = tdeg_reached / 2 */
	/* scratch */
	kbfs_desc *d, *rd;
	size_t *cnt;
	int front_packed;      /* WSEND holds FRONT packed (reused by expand) */
	kbfs_desc front_desc;
} kbfs_ctx;

/* Wire capacity per segment that the exchange mode needs for block b. */
uint64_t kbfs_wire_cap(const kpart_block *b, int exchange, int compress);
/* Prepare x (engine and transport already set up) for block b. */
void kbfs_ctx_init(kbfs_ctx *x, const kpart_block *b, kbfs_engine *e, kbfs_transport *t);
void kbfs_ctx_free(kbfs_ctx *x);
/* One search from global internal vertex root (tdeg: its tuple degree).
 * Leaves the packed (level << 48 | parent) entries of the owned vertices
 * in the engine's KBFS_PRED and the per-level records in x.  Collective. */
void kbfs_search(kbfs_ctx *x, uint64_t root, uint64_t root_tdeg);
/* After kbfs_search, outside its timing: fill in the levels' phase times
 * (kept as engine marks during the search) and, with verbose, print a
 * line a level on rank 0.  Collective only in that it may wait for the
 * engine. */
void kbfs_search_finish(kbfs_ctx *x);
const char *kbfs_dir_name(int dir);

/* ---- the program ---- */
typedef struct kbfs_opts {
	int direction;
	double alpha, beta;
	int exchange, compress, sv;
	int validate;
	int warmup;
	int nroots;               /* default roots to draw (64) */
	int nroots_set;           /* -n given */
	const uint64_t *roots;    /* -r values (input ids) */
	size_t nroots_given;
	const char *roots_file;   /* --roots */
	const char *json;         /* --json FILE */
	const char *pred_out;     /* --pred-out DIR */
	int pred_binary;
	const char *depth_out;    /* --depth-out DIR */
	int engine;               /* enum kbfs_engine_kind */
	kgpu_opts gpu;            /* CUDA engine: --kernel, --vbfs-k, --gpu, --bu-split (ignored by cpu) */
	int transport;            /* enum kbfs_transport_kind */
	int dry_run;              /* --dry-run: print the memory plan, search nothing */
	int threads;              /* 0: one core per rank */
	int verbose;
	int argc;
	char **argv;
} kbfs_opts;

void kbfs_opts_default(kbfs_opts *o);
/* Run the kbfs program on partition dir; returns the exit status. */
int kbfs_main(kcomm *world, const char *dir, const kbfs_opts *o);
/* The GPUs of the current run, one per rank in rank order (rank 0, after
 * the engine is set up; *n = 0 with the CPU engine), for the JSON record. */
const kgpu_devinfo *kbfs_run_gpus(size_t *n);

#endif

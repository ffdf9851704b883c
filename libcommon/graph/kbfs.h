/*
 * kbfs: the distributed 2D breadth-first search.
 *
 * kbfs.c owns the level loop (expand, local step, fold, owner update,
 * shared visited, termination and the direction switch), written once over
 * the engine and transport interfaces of kengine.h, and the predecessor
 * reduction that ends a search.  The program around it (roots, timing,
 * validation, output) is kbfs_run.h.  Every function here is collective
 * over the ranks of the transport's world.
 */
#ifndef KBFS_H
#define KBFS_H

#include <stddef.h>
#include <stdint.h>

#include "kengine.h"
#include "kpart.h"

enum kbfs_dir { KBFS_DIR_AUTO, KBFS_DIR_TD, KBFS_DIR_BU };
/* "auto", "top-down", "bottom-up", NULL: by enum kbfs_dir (--direction) */
extern const char *const kbfs_dir_names[];
/* "bitmap", "list", "auto", NULL: by enum kbfs_xmode (--exchange) */
extern const char *const kbfs_xmode_names[];
enum kbfs_phase { KBFS_PH_EXPAND, KBFS_PH_LOCAL, KBFS_PH_FOLD, KBFS_PH_UPDATE, KBFS_PH_SV, KBFS_PH_ALLREDUCE,
		  KBFS_NPHASE };
extern const char *const kbfs_phase_names[KBFS_NPHASE]; /* "expand", "local", ... */
enum kbfs_xchg { KBFS_XG_EXPAND, KBFS_XG_FOLD, KBFS_XG_SV, KBFS_NXCHG };
extern const char *const kbfs_xchg_names[KBFS_NXCHG]; /* "expand", "fold", "sv" */

/* How a search runs: every optimisation can be switched off. */
typedef struct kbfs_algo {
	int direction;      /* enum kbfs_dir */
	double alpha, beta; /* Beamer's switch thresholds (14, 24) */
	int exchange;       /* enum kbfs_xmode */
	int compress;       /* lists as gap + VLQ (else raw offsets) */
	int sv;             /* share visited rows along the processor row */
	int bu_substeps;    /* bottom-up levels of a grid of several columns in C sub-steps, a row
			     * segment each, the segment's found rows passed along the row */
} kbfs_algo;

/* auto, 14, 24, auto, compress, sv: the defaults of kbfs(1). */
void kbfs_algo_default(kbfs_algo *a);

/* One level of one search (counts summed over all ranks, times rank 0's). */
typedef struct kbfs_level {
	uint32_t level;      /* 1 = the root's neighbours */
	int dir;             /* KBFS_DIR_TD or KBFS_DIR_BU */
	uint64_t frontier;   /* vertices in the frontier this level expands */
	uint64_t found;      /* vertices first reached at this level */
	uint64_t examined;   /* adjacency entries read by the local steps */
	uint64_t bytes[KBFS_NXCHG]; /* bytes sent to other ranks */
	double time[KBFS_NPHASE]; /* with a transport's device-resident levels (kengine.h lv_*)
				   * the expand and sv travel inside update, which ends with the
				   * wait for every rank: expand, sv and allreduce are 0 */
} kbfs_level;

/* The search: configuration, interfaces and the last search's results. */
typedef struct kbfs_ctx {
	const kpart_block *b;
	kbfs_engine *e;
	kbfs_transport *t;
	kbfs_algo algo;
	uint64_t wire_cap;   /* bytes per packed segment */
	uint64_t tdeg_total; /* sum of tdeg over every vertex */
	int verbose;         /* per-level lines on stderr (rank 0) */
	uint64_t root_label; /* the root in input ids, for messages */
	/* results of the last search */
	kbfs_level *lv;
	size_t nlv, lvcap;
	size_t ntimed;         /* levels whose phase times are filled in */
	uint64_t reached;      /* vertices reached, root included */
	double pred_time;      /* seconds from the last level to the predecessor map complete on
				* every owner (the MIN reduce-scatter, or the transport's lv_pred),
				* this rank's host clock */
	uint64_t tdeg_reached; /* sum of tdeg over them: nedge = tdeg_reached / 2 */
	/* scratch */
	kbfs_desc *d, *rd;
	size_t *cnt;
	int front_packed;      /* WSEND holds FRONT packed (reused by expand) */
	kbfs_desc front_desc;
} kbfs_ctx;

/* Wire capacity per segment that the exchange mode needs for block b. */
uint64_t kbfs_wire_cap(const kpart_block *b, int exchange, int compress);
/* Prepare x (engine and transport already set up) for block b: the
 * default algorithm and its wire capacity (change both together). */
void kbfs_ctx_init(kbfs_ctx *x, const kpart_block *b, kbfs_engine *e, kbfs_transport *t);
void kbfs_ctx_free(kbfs_ctx *x);
/* Whether bottom-up levels run in sub-steps: asked (algo.bu_substeps), a
 * grid of several columns, an engine with bu_substep and a transport
 * whose levels the host drives (not the device-resident lv_* levels). */
int kbfs_bu_substeps_on(const kbfs_ctx *x);
/* One search from global internal vertex root (tdeg: its tuple degree).
 * Leaves the packed (level << 48 | parent) entries of the owned vertices
 * in the engine's KBFS_PRED and the per-level records in x.  Collective.
 * Returns 0, or KEXIT_DATA after kerror() on every rank when the search
 * is deeper than the packed entries can say (KBFS_MAX_LEVEL). */
int kbfs_search(kbfs_ctx *x, uint64_t root, uint64_t root_tdeg);
/* After kbfs_search, outside its timing: fill in the levels' phase times
 * (kept as engine marks during the search) and, with verbose, print a
 * line a level on rank 0.  Collective only in that it may wait for the
 * engine. */
void kbfs_search_finish(kbfs_ctx *x);
const char *kbfs_dir_name(int dir);

#endif

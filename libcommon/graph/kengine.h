/*
 * kengine: the two interfaces the 2D BFS level loop drives.
 *
 * The level loop of the search (expand, local step, fold, update, shared
 * visited, termination, direction switch) is written once, in kbfs.c.  It
 * never touches a bitmap itself: all state lives in an ENGINE (local
 * compute: the CPU engine in kbfs_cpu.c, the CUDA engine in gpu/) and
 * every message between processors goes through a TRANSPORT (MPI in
 * kbfs_xchg.c, NCCL in gpu/).  Both are structs of function
 * pointers filled by their implementation; the loop holds only opaque
 * buffer handles, small descriptors and counters in host memory.
 *
 * Engine memory.  Buffers are named (enum kbfs_buf) and addressed through
 * e->buf(); they may be device memory (e->device_memory), so the host
 * never dereferences them.  A transport receives such addresses and either
 * reaches them directly (NCCL, or MPI on host memory) or stages them
 * through host memory with e->to_host / e->to_device.  Engine operations
 * may run asynchronously; e->sync() waits for them, and every transport
 * call starts with the engine's queued work complete (the MPI transport
 * calls sync itself before touching memory).
 *
 * Geometry (kpart.h): nb vertices per block, nbw = nb / 64 bitmap words.
 * Processor P(i,j) holds nrows = C*nb local rows (row segment m = block of
 * P(i,m)) and ncols = R*nb local columns (column segment r = block of
 * P(r,j)).  Bitmaps are arrays of u64 words, bit b of word w = index
 * 64*w + b.
 *
 * Wire format.  An exchanged bitmap segment of nbw words is encoded by
 * pack() into one of four forms, chosen per segment and per level; its
 * descriptor (kbfs_desc, a u64 = bytes << 2 | form) travels ahead of it in
 * a control exchange so the receiver can size and decode it:
 *   KBFS_FMT_BITMAP  the nbw words as they are;
 *   KBFS_FMT_RAW32   sorted offsets in the segment as little-endian u32;
 *   KBFS_FMT_RAW64   the same as u64 (segments of 2^32 bits or more);
 *   KBFS_FMT_VLQ     sorted offsets as gaps (first offset, then
 *                    offset[k] - offset[k-1] - 1), each a little-endian
 *                    base-128 varint (7 bits a byte, high bit = more).
 * Segment s of a packed buffer starts at byte s * wire_cap.
 *
 * Predecessors.  During the search each local row keeps one packed u64,
 * level << 48 | parent (global internal id), KBFS_NONE when not found here.
 * A MIN reduction over the processor row gives each owner the entry with
 * the smallest level: a valid BFS parent and the depth.  Hence the limits
 * N <= 2^48 (scale <= 47) and depth <= KBFS_MAX_LEVEL.
 *
 * Who calls: kbfs.c drives both; the kbfs program (kbfs_run.c) and the
 * tests choose and set them up.  Implementations: kbfs_cpu.c (engine),
 * kbfs_xchg.c (MPI transport and the host codec of the wire forms), gpu/
 * (the CUDA engine and the NCCL transport, kgpu.h).
 */
#ifndef KENGINE_H
#define KENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "kcomm.h"
#include "kpart.h"

#define KBFS_PARENT_BITS 48
#define KBFS_PARENT_MASK ((UINT64_C(1) << KBFS_PARENT_BITS) - 1)
#define KBFS_MAX_LEVEL 0xFFFEu
#define KBFS_NONE UINT64_MAX
/* Time marks: KBFS_MARKS_LEVEL a level, for a ring of KBFS_MARK_LEVELS levels. */
#define KBFS_MARKS_LEVEL 6
#define KBFS_MARK_LEVELS 64
#define KBFS_NMARK (KBFS_MARKS_LEVEL * KBFS_MARK_LEVELS)

static inline uint64_t kbfs_packed(uint64_t level, uint64_t parent) { return level << KBFS_PARENT_BITS | parent; }
static inline uint64_t kbfs_packed_parent(uint64_t p) { return p == KBFS_NONE ? KBFS_NONE : p & KBFS_PARENT_MASK; }
static inline int64_t kbfs_packed_level(uint64_t p) { return p == KBFS_NONE ? -1 : (int64_t)(p >> KBFS_PARENT_BITS); }

/* ---- wire forms ---- */
enum kbfs_fmt { KBFS_FMT_BITMAP = 0, KBFS_FMT_RAW32 = 1, KBFS_FMT_RAW64 = 2, KBFS_FMT_VLQ = 3 };
typedef uint64_t kbfs_desc;
static inline kbfs_desc kbfs_desc_make(uint64_t bytes, int fmt) { return bytes << 2 | (uint64_t)fmt; }
static inline uint64_t kbfs_desc_bytes(kbfs_desc d) { return d >> 2; }
static inline int kbfs_desc_fmt(kbfs_desc d) { return (int)(d & 3); }

/* How pack() chooses the form of a segment. */
enum kbfs_xmode {
	KBFS_X_BITMAP, /* always the bitmap */
	KBFS_X_LIST,   /* always a list (VLQ, or raw when !compress) */
	KBFS_X_AUTO,   /* whichever is smaller (ties: bitmap) */
};

/* How unpack() stores decoded segment s into dst. */
enum kbfs_merge {
	KBFS_M_SET,    /* dst words [s*nbw, (s+1)*nbw) = segment s */
	KBFS_M_OR,     /* dst words [s*nbw, (s+1)*nbw) |= segment s */
	KBFS_M_OR_ALL, /* dst words [0, nbw) = OR of all segments */
};

/* Axes of the grid (the transport's communicators). */
enum kbfs_axis {
	KBFS_COL,   /* processor column: ranks with my j, ordered by i (R of them) */
	KBFS_ROW,   /* processor row: ranks with my i, ordered by j (C of them) */
	KBFS_WORLD, /* every rank, ordered by rank */
};

/* ---- engine ---- */
enum kbfs_buf {
	KBFS_FRONT,    /* nbw words: owned frontier (found at the last level) */
	KBFS_OWNVIS,   /* nbw words: owned visited */
	KBFS_RECV,     /* nbw words: rows of my block found anywhere this level */
	KBFS_COLFRONT, /* R*nbw words: column frontier F (expand result) */
	KBFS_ROWVIS,   /* C*nbw words: local-row visited (Bisson; SV keeps it shared) */
	KBFS_ROWNEXT,  /* C*nbw words: local rows found by this step */
	KBFS_XRECV,    /* C*nbw words: bitmap segments received by the fold */
	KBFS_PL,       /* nrows u64: packed (level, parent) per local row */
	KBFS_PRED,     /* nb u64: packed entry per owned vertex, after the MIN */
	KBFS_WSEND,    /* max(R,C) * wire_cap bytes: packed segments to send */
	KBFS_WRECV,    /* max(R,C) * wire_cap bytes: packed segments received */
	KBFS_NBUF
};
/* An engine may give two buffers one memory where the loop's use allows:
 * COLFRONT may be FRONT when R = 1 (the expand is then a copy onto
 * itself), RECV may be ROWNEXT and PRED may be PL when C = 1 (the fold and
 * the reduction are copies). */

typedef struct kbfs_engine_conf {
	int threads;       /* host threads the engine may use (0: default) */
	uint64_t wire_cap; /* bytes per packed segment (>= nbw * 8) */
	int device;        /* device ordinal for device engines */
} kbfs_engine_conf;

/* Counters one engine call reports (this rank only). */
typedef struct kbfs_step {
	uint64_t found;    /* local step: rows newly set in ROWNEXT; update: owned vertices newly visited */
	uint64_t examined; /* local step: adjacency entries read */
	uint64_t tdeg;     /* update: sum of tdeg over the newly visited owned vertices */
} kbfs_step;

/* One level a device ran by itself (td_run). */
typedef struct kbfs_lrec {
	uint64_t found, tdeg, examined; /* as update's and the local step's: this rank's (td_run),
					 * every rank's (lv_td_run) */
	uint64_t bexpand;               /* lv_td_run: the expand's bytes, every rank's */
	double t_local, t_update;       /* seconds: the expansion, the owner update (and the round) */
} kbfs_lrec;

typedef struct kbfs_engine kbfs_engine;
struct kbfs_engine {
	const char *name;  /* "cpu", "cuda" */
	int device_memory; /* buffers are device memory: stage for MPI */
	void *impl;        /* the implementation's state */

	/* Allocate buffers for block b (kept by pointer until teardown) and
	 * copy the graph in.  Returns 0 or a KEXIT code after kerror(). */
	int (*setup)(kbfs_engine *e, const kpart_block *b, const kbfs_engine_conf *conf);
	void (*teardown)(kbfs_engine *e);
	/* Address of a buffer in engine memory. */
	void *(*buf)(kbfs_engine *e, enum kbfs_buf which);

	/* Start a search from global internal vertex root: all bitmaps clear,
	 * PL all KBFS_NONE; the owner marks root in FRONT and OWNVIS; every
	 * processor of the root's processor row marks its local row in ROWVIS
	 * and sets PL = (0, root). */
	void (*reset)(kbfs_engine *e, uint64_t root);
	/* Local step at level (>= 1), reading COLFRONT and ROWVIS, writing
	 * ROWNEXT (exactly the rows found now), ROWVIS and PL.  Top-down
	 * walks the CSC columns of F; bottom-up scans the CSR row of every
	 * unvisited local row and stops at the first neighbour in F.  nf is
	 * the global frontier's size, an upper bound on the bits set in
	 * COLFRONT, so an engine may size its work without reading F back.
	 * An engine may leave st zero and report the step's counters with
	 * the next update() instead (a device engine then waits once a
	 * level, not once a call): the loop adds the two. */
	void (*top_down)(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *st);
	void (*bottom_up)(kbfs_engine *e, uint64_t level, uint64_t nf, kbfs_step *st);
	/* One sub-step of a bottom-up level on a grid of several columns
	 * (kbfs --bu-substeps; optional, NULL where the engine has none):
	 * ROWVIS's row segment seg |= the nbw words at ring (engine memory,
	 * skipped when NULL: the rows of the segment that the ranks before
	 * this one found this level), then bottom-up over that segment's
	 * unvisited rows only, writing ROWNEXT's segment seg (the other
	 * segments are the other sub-steps'), ROWVIS and PL. */
	void (*bu_substep)(kbfs_engine *e, uint64_t level, uint64_t nf, int seg, const void *ring, kbfs_step *st);
	/* The search is over (called once, after the last level, before the
	 * predecessor reduction): PL holds KBFS_NONE on every row this rank
	 * did not reach.  An engine whose reset() cleared PL does nothing; a
	 * device engine on a one-column grid leaves PL alone at reset and
	 * clears here only the rows with edges that ROWVIS says were not
	 * reached (a few, where a whole reset writes every row). */
	void (*finish)(kbfs_engine *e);
	/* Owner update: new = RECV & ~OWNVIS; OWNVIS |= new; FRONT = new.
	 * st->found = |new|, st->tdeg = sum of tdeg over new; st->examined =
	 * what the last local step left unreported (else 0).  Waits for the
	 * queued work. */
	void (*update)(kbfs_engine *e, kbfs_step *st);
	/* Optional (NULL where the engine has none; one rank only, the level
	 * loop calls it only when the world has one rank): top-down levels
	 * from level on, the first with frontier nf, each a local step and an
	 * update, run back to back on the device while the next would again be
	 * a small top-down one (the engine's bound on its frontier, and the
	 * loop's rule: it turns bottom-up when tdeg > (mu - tdeg) / alpha, mu
	 * the unvisited vertices' tdeg before the level; alpha 0: never), at
	 * most max.  rec[k] = the k-th level's counters and times.  Returns
	 * the levels run; 0 when it runs none (the loop then runs the level
	 * itself).  Waits for them. */
	int (*td_run)(kbfs_engine *e, uint64_t level, uint64_t nf, uint64_t mu, double alpha, int max,
		      kbfs_lrec *rec);
	/* Phase timing: mark(e, k) records time point k (0 <= k < KBFS_NMARK)
	 * as the moment the work queued before it is done; after sync(),
	 * elapsed(e, a, b) is the seconds from point a to point b (points
	 * recorded since the last sync, or in increasing order before it).
	 * A host engine, whose calls return with their work done, reads the
	 * host clock; a device engine records events in its queue (a point
	 * with nothing queued since the last one is that one), so timing a
	 * phase costs no wait, and the loop asks for the times only after
	 * the search. */
	void (*mark)(kbfs_engine *e, int k);
	double (*elapsed)(kbfs_engine *e, int a, int b);

	/* Encode nseg segments of nbw words, segment s from src words
	 * [s*nbw, (s+1)*nbw), into WSEND at s * wire_cap; desc[s] (host) gets
	 * each one's descriptor.  A list that does not fit wire_cap falls back
	 * to the bitmap. */
	void (*pack)(kbfs_engine *e, enum kbfs_buf src, size_t nseg, enum kbfs_xmode mode, int compress,
		     kbfs_desc *desc);
	/* Decode nseg segments found at wire + s * stride bytes, described by
	 * desc[s] (host), into dst with the given merge. */
	void (*unpack)(kbfs_engine *e, enum kbfs_buf wire, size_t stride, size_t nseg, const kbfs_desc *desc,
		       enum kbfs_buf dst, enum kbfs_merge merge);

	/* Wait for queued work. */
	void (*sync)(kbfs_engine *e);
	/* Copies between host memory and engine memory, and within engine
	 * memory (dst, src as returned by buf() plus offsets). */
	void (*to_host)(kbfs_engine *e, void *host, const void *src, size_t bytes);
	void (*to_device)(kbfs_engine *e, void *dst, const void *host, size_t bytes);
	void (*copy)(kbfs_engine *e, void *dst, const void *src, size_t bytes);

	/* Validation where the block lives (optional: NULL when the engine
	 * has none, or was set up without it; the caller then validates on
	 * the host with kval).  After a search and its predecessor reduction
	 * (PRED final), the caller calls tree_pack(e, &src, &bytes): the
	 * engine makes, in its own memory, what this rank contributes to the
	 * column's claims (src, bytes: the CUDA engine's is each owned
	 * vertex's level in 2 bytes, its parent's range checked there), and
	 * the caller gathers it over the column into tree_buf(e, KBFS_COL)
	 * (R*bytes, segment r from P(r,j); nothing to gather when src is
	 * tree_buf(e, KBFS_COL) itself, on a column of one rank).  It fills
	 * tree_buf(e, KBFS_ROW) with the packed entries of its C*nb rows (row
	 * segment m = PRED of P(i,m)), or nothing when that is PRED itself
	 * (a row of one rank).  tree_check then runs this
	 * rank's share of kval_partition_packed's test of the claimed levels
	 * (kval.h) on them and waits: out[0] = 1 when a check failed here
	 * (0 otherwise), out[1] = reached owned vertices, out[2] = the sum
	 * of their tdeg.  A
	 * pass on every rank, with out[2] summed over the ranks equal to
	 * twice the claimed edge count, proves the tree valid; anything else
	 * is for kval to decide and name. */
	void (*tree_pack)(kbfs_engine *e, void **src, size_t *bytes);
	void *(*tree_buf)(kbfs_engine *e, enum kbfs_axis axis);
	void (*tree_check)(kbfs_engine *e, uint64_t root, uint64_t out[3]);
};

/* ---- transport ---- */

typedef struct kbfs_transport kbfs_transport;
struct kbfs_transport {
	const char *name; /* "mpi", "nccl" */
	void *impl;

	/* Build the row and column communicators of P(i,j) on an R x C grid;
	 * data buffers will be engine memory of e.  Collective over world. */
	int (*setup)(kbfs_transport *t, kcomm *world, int R, int C, kbfs_engine *e);
	void (*teardown)(kbfs_transport *t);
	int (*size)(kbfs_transport *t, enum kbfs_axis axis);
	int (*rank)(kbfs_transport *t, enum kbfs_axis axis);

	/* Data exchanges; send and recv are engine memory, sizes and
	 * displacements are bytes (64-bit).  Block k of recv comes from (or
	 * block k of send goes to) the rank k of axis. */
	void (*allgather)(kbfs_transport *t, enum kbfs_axis axis, const void *send, size_t bytes, void *recv);
	void (*allgatherv)(kbfs_transport *t, enum kbfs_axis axis, const void *send, size_t bytes, void *recv,
			   const size_t *counts, const size_t *displs);
	void (*alltoall)(kbfs_transport *t, enum kbfs_axis axis, const void *send, size_t bytes_each, void *recv);
	void (*alltoallv)(kbfs_transport *t, enum kbfs_axis axis, const void *send, const size_t *scounts,
			  const size_t *sdispls, void *recv, const size_t *rcounts, const size_t *rdispls);
	/* Element-wise MIN of every rank's send (size * n_each u64); rank k
	 * of axis gets block k in recv (n_each u64). */
	void (*reduce_scatter_min_u64)(kbfs_transport *t, enum kbfs_axis axis, const uint64_t *send, uint64_t *recv,
				       size_t n_each);

	/* Control exchanges on small host arrays (descriptors, counters). */
	void (*ctl_allgather_u64)(kbfs_transport *t, enum kbfs_axis axis, uint64_t v, uint64_t *all);
	void (*ctl_alltoall_u64)(kbfs_transport *t, enum kbfs_axis axis, const uint64_t *send, uint64_t *recv);
	void (*ctl_allreduce_sum_u64)(kbfs_transport *t, enum kbfs_axis axis, uint64_t *v, size_t n);
	void (*barrier)(kbfs_transport *t, enum kbfs_axis axis);

	/* Device-resident levels (optional: all NULL for a transport without
	 * them, and the loop then drives the exchanges above).  A transport
	 * that reaches the engine memory of every other rank directly (GPUs
	 * of one host, peer to peer) keeps a whole level on the device: which
	 * words travel is decided there, no size or descriptor crosses to the
	 * host, the expand of the next level and the shared visited bits
	 * leave inside the owner update, and the host reads the level's
	 * counters once, summed over the world.  The engine is the one given
	 * to setup(); its FRONT, COLFRONT, RECV and PRED are the transport's
	 * to write while these run.
	 *   lv_start(t)         after e->reset(): the root's frontier reaches
	 *                       the column (the expand of level 1)
	 *   lv_fold(t, level)   after the local step: the segments of ROWNEXT
	 *                       to their owners (nothing on one-column grids)
	 *   lv_update(t, level, sv, examined) the owner update (e->update's
	 *                       work on the merged fold), then FRONT to the
	 *                       column (the next level's expand) and, with sv,
	 *                       the owners' visited bits to the row, then the
	 *                       wait for every rank's level; examined is what
	 *                       the local step reported itself (kbfs_step)
	 *   lv_counts(t, cnt)   waits for that: cnt = found, tdeg, examined
	 *                       and the bytes of the expand, fold and sv,
	 *                       summed over the world
	 *   lv_pred(t)          after the last level and e->finish(): PRED of
	 *                       every owned vertex, instead of the MIN
	 *                       reduce-scatter of PL
	 *   lv_ring_give(t, s, seg)  (optional, a grid of several columns:
	 *                       bottom-up sub-steps, kbfs.c) after sub-step s
	 *                       (< C - 1) on row segment seg: ROWVIS's segment
	 *                       seg to the left neighbour of the row, its ring
	 *                       slot s, and a flag
	 *   lv_ring_take(t, s, seg)  before sub-step s (> 0): waits for the
	 *                       right neighbour's flag, then ROWVIS's segment
	 *                       seg |= ring slot s - 1
	 *   lv_td_run(t, level, nf, mu, alpha, max, rec)  (optional) the
	 *                       engine's td_run over the world: top-down
	 *                       levels, their exchanges inside, while the next
	 *                       is again one for it, decided on the world's
	 *                       counts; rec[] the world's; every rank calls it
	 *                       at the same level (0: none run, on every rank) */
	void (*lv_start)(kbfs_transport *t);
	void (*lv_fold)(kbfs_transport *t, uint64_t level);
	void (*lv_update)(kbfs_transport *t, uint64_t level, int sv, uint64_t examined);
	void (*lv_counts)(kbfs_transport *t, uint64_t cnt[6]);
	void (*lv_pred)(kbfs_transport *t);
	void (*lv_ring_give)(kbfs_transport *t, int s, int seg);
	void (*lv_ring_take)(kbfs_transport *t, int s, int seg);
	int (*lv_td_run)(kbfs_transport *t, uint64_t level, uint64_t nf, uint64_t mu, double alpha, int max,
			 kbfs_lrec *rec);
};

/* The implementations in libcommon (fill *e / *t; no allocation yet). */
void kbfs_engine_cpu(kbfs_engine *e);
void kbfs_transport_mpi(kbfs_transport *t);

/* Host codec of the wire forms (kbfs_xchg.c), for host engines and tests. */
/* Encode nwords bitmap words as mode says into out (cap bytes); returns the
 * descriptor.  Never writes more than cap bytes (cap >= nwords * 8). */
kbfs_desc kbfs_encode(const uint64_t *bm, size_t nwords, enum kbfs_xmode mode, int compress, uint8_t *out,
		      size_t cap);
/* Decode a segment into bm (nwords) with OR (or replace when set). */
void kbfs_decode(const uint8_t *in, kbfs_desc d, uint64_t *bm, size_t nwords, int set);
/* Base-128 varints. */
size_t kbfs_vlq_put(uint8_t *p, uint64_t v);
size_t kbfs_vlq_get(const uint8_t *p, const uint8_t *end, uint64_t *v);

#endif

/*
 * kval: Graph500 3.x validation of a BFS tree, distributed.
 *
 * Owns the rules of GRAPH500.md section 4 and the exact edge count of
 * section 3 (reference 3.0.1: input tuples with both endpoints in the
 * root's component, self-loops excluded, duplicates counted).  Called by
 * kbfs after each search and by kvalidate; every rank of world calls it
 * with the same pred, and every rank gets the same verdict.
 *
 * Input.  pred[v] is the parent of vertex v as an internal id, UINT64_MAX
 * when v is unreached, for every vertex 0..N-1 (N = b->g.N, the padded
 * count, for a partition; nv for an edge list), replicated on all ranks.
 * nedge_claimed is the count the search reported, or UINT64_MAX to skip
 * rule (f).
 *
 * Method.  Depths come from pred alone (replicated, O(N), OpenMP; kbfs
 * first checks the search's own levels instead, kval_partition_packed):
 * depth(root) = 0, depth(v) = depth(pred[v]) + 1; walking the parents
 * finds parents out of range, cycles and chains through unreached
 * vertices.  Then each rank checks the edges it holds with one test per
 * edge, and the tree edges it is responsible for (partition: the edge
 * pred[v] -> v is held by rank (owner_row(v), owner_col(pred[v])), found by
 * binary search in v's CSR row; edge list: a tuple that is a tree edge
 * marks its child in a bitmap, OR-reduced over the ranks).  One allreduce
 * picks the verdict.
 *
 * Rules and the letter each failure reports:
 *   (a) a parent that is neither -1 nor a vertex id (>= N);
 *   (b) the root is out of range or is not its own parent;
 *   (c) a parent chain that does not reach the root (a cycle, or a parent
 *       that is itself unreached), or a tree edge {pred[v], v} that is not
 *       an edge of the graph (depth(v) = depth(pred[v]) + 1 holds by the
 *       construction of the depths);
 *   (d) a graph edge whose endpoints' depths differ by more than one;
 *   (e) a graph edge with exactly one reached endpoint: a reached vertex
 *       outside the root's component or an unreached vertex inside it;
 *   (f) the recomputed edge count differs from nedge_claimed.
 * When several checks fail, the first in this order is reported: (a),
 * (b), (c) parent chains, (e), (c) tree edges, (d), (f); within one check,
 * the lowest offending vertex id, then the lowest second vertex, so the
 * verdict does not depend on the rank or thread count.  This order names
 * the cause rather than its echoes: a vertex wrongly reached from outside
 * the component also has a tree edge missing (it is reported as (e)), and
 * a parent that is not a neighbour also shifts depths (it is reported as
 * (c), not (d)).
 * Self-loops are skipped by every rule.  Limits: N < 2^32 - 4 (depths are
 * 32-bit); a larger graph is refused (KEXIT_RESOURCE after kerror()).
 *
 * kvalidate's side: the graph it checks against, a partition or an edge
 * list spread over the ranks (kval_graph.c), and predecessor files in
 * input ids translated to pred, where rules (a) and (b) can already fail
 * on what the file says (kval_tree_read, with the other verdicts here).
 */
#ifndef KVAL_H
#define KVAL_H

#include <stddef.h>
#include <stdint.h>

#include "kcomm.h"
#include "kdist.h"
#include "kidmap.h"
#include "kpart.h"

/* Which check failed (more precise than the rule letter). */
enum kval_check {
	KVAL_OK = 0,
	KVAL_PARENT_RANGE, /* (a) pred[vertex] = other is >= N */
	KVAL_ROOT_RANGE,   /* (b) the root (vertex) is >= N */
	KVAL_ROOT_PARENT,  /* (b) pred[root] = other (UINT64_MAX: unreached) */
	KVAL_CYCLE,        /* (c) vertex lies on a cycle of parents */
	KVAL_CHAIN,        /* (c) pred[vertex] = other is unreached */
	KVAL_REACH,        /* (e) vertex unreached, its neighbour other reached */
	KVAL_TREE_EDGE,    /* (c) {other = pred[vertex], vertex} is not an edge */
	KVAL_DEPTH,        /* (d) edge {vertex, other}, depths differ by > 1 */
	KVAL_NEDGE,        /* (f) nedge recomputed != claimed */
	/* what a predecessor file says, in its input ids (kval_tree_read) */
	KVAL_FILE_VERTEX,  /* (a) vertex (parent: other as int64) is not a vertex of the graph */
	KVAL_FILE_PARENT,  /* (a) vertex has parent other (int64), neither -1 nor a vertex */
	KVAL_FILE_TWICE,   /* (no rule) vertex is listed twice, with different parents */
	KVAL_FILE_ROOTS,   /* (b) the file names root vertex, --root is other */
	KVAL_FILE_NOROOT,  /* (b) no vertex is its own parent */
	KVAL_FILE_ROOT,    /* (b) the root vertex is not a vertex of the graph */
};

typedef struct kval_result {
	int rule;          /* 'a'..'f', or 0 when valid (or KVAL_FILE_TWICE) */
	int check;         /* enum kval_check */
	uint64_t vertex;   /* internal id of one offender, UINT64_MAX if none */
	uint64_t other;    /* the second vertex of the failed check, UINT64_MAX if none */
	int64_t vdepth, odepth; /* their depths (-1 unreached or unknown) */
	uint64_t vertex_orig; /* input id of vertex (partition with b->orig), else = vertex */
	char msg[256];     /* the failure in words ("" when valid): internal ids, or
			    * "input (internal X)" when the partition has orig */
	uint64_t nedge;    /* recomputed TEPS edge count (reference 3.0.1) */
	uint64_t claimed;  /* nedge_claimed as given */
	uint64_t reached;  /* reached vertices, the root included */
	int maxdepth;      /* largest depth */
} kval_result;

/* Validate the tree pred rooted at root against the 2D partition whose
 * block b this rank holds.  Returns 0 valid, 1 invalid (res filled the same
 * on every rank), or KEXIT_RESOURCE when N is beyond the limit.
 * Collective over world. */
int kval_partition(kcomm *world, const kpart_block *b, uint64_t root, const uint64_t *pred, uint64_t nedge_claimed,
		   kval_result *res);

/* The same for kbfs, from the search's packed entries: ent[v] = level << 48
 * | parent (kengine.h), UINT64_MAX when unreached, for every v < N on every
 * rank.  The levels are taken as a claim and checked against the rules:
 * the root is its own parent at level 0, every parent is in range, and per
 * rank, in one pass over its block's reached rows, every entry of a row of
 * level d is a reached column of level <= d+1 and every tree edge held
 * there is in the row with its parent at level <= d-1.  Since kpart stores
 * each edge both ways, the other row of each edge gives the other bound,
 * so the claim is then the tree's depths and the tree is valid.  Otherwise
 * (or deeper than 16 levels) ent is unpacked in place to the parents and
 * kval_partition decides and names the failure: the verdict and result
 * are kval_partition's either way.  Collective over world. */
int kval_partition_packed(kcomm *world, const kpart_block *b, uint64_t root, uint64_t *ent, uint64_t nedge_claimed,
			  kval_result *res);

/* The same rules when the graph is an edge list: each rank passes its
 * slice of the input tuples (uv: 2*ne_local internal ids < nv).  nedge
 * counts this slice's tuples, so the slices together must be the whole
 * input.  Collective over world. */
int kval_edges(kcomm *world, const uint64_t *uv, uint64_t ne_local, uint64_t nv, uint64_t root, const uint64_t *pred,
	       uint64_t nedge_claimed, kval_result *res);

/* Describe a failed result in words into buf, printing ids through map
 * (internal -> input id; NULL: internal ids; an entry UINT64_MAX is shown as
 * "internal X").  "rule (c): ..." style, no trailing newline. */
void kval_describe(const kval_result *res, const uint64_t *map, char *buf, size_t n);

/* ---- kvalidate's graph (kval_graph.c) and files ---- */

/* The graph trees are checked against. */
typedef struct kval_graph {
	int is_part;       /* a kpart directory (else an edge list) */
	kpart_block b;     /* a partition: this rank's block */
	kdist_edges e;     /* an edge list: this rank's tuples */
	uint64_t N;        /* ids in pred: padded N (partition) or nv */
	uint64_t nreal;    /* with an identity map: input ids are 0..nreal-1 */
	uint64_t *map;     /* rank 0: internal -> input id (N entries), NULL: identity */
	kidmap inv;        /* rank 0 with a map: input id -> internal */
} kval_graph;

/* Load path: a partition directory (the job must be its R x C; the ids
 * of every block gathered on rank 0) or an edge file or text graph
 * (kdist_load).  Collective; 0 or a KEXIT code on every rank. */
int kval_graph_load(kcomm *world, const char *path, kval_graph *g);
void kval_graph_free(kval_graph *g);
/* kval_partition or kval_edges, as g is. */
int kval_graph_check(kcomm *world, const kval_graph *g, uint64_t root, const uint64_t *pred, uint64_t nedge_claimed,
		     kval_result *res);
/* Rank 0: read the predecessor file path (kpred_read) into pred (g->N
 * internal ids, UINT64_MAX unreached).  The root is opt_root when not
 * UINT64_MAX, else the one the file records, else the first vertex that
 * is its own parent: *root_in (input id) and *root (internal).  Returns a
 * KEXIT code when the file cannot be read, else 0 with res->check telling
 * whether the file already breaks rule (a) or (b) (a KVAL_FILE_* check,
 * res->msg in words; pred is then incomplete) or KVAL_OK. */
int kval_tree_read(const kval_graph *g, const char *path, uint64_t opt_root, uint64_t *pred, uint64_t *root_in,
		   uint64_t *root, kval_result *res);

#endif

/* test_kbfs_search: the level loop (kbfs.c) with the CPU engine and the MPI
 * transport on a 1x1 partition, against a serial BFS of the edge list.  A
 * scale-9 Kronecker graph is written as an edge file and partitioned by
 * kpart_build (as the programs do); for several roots and every algorithm
 * setting, every vertex's depth, its parent (a neighbour one level up), the
 * per-level counts, the reached count and the TEPS edge count must be the
 * serial BFS's. */
#include "kbfs.h"
#include "kcomm.h"
#include "kedge.h"
#include "kgen.h"
#include "kfs.h"
#include "klog.h"
#include "kpart.h"
#include "kpart/kpart_build.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SCALE = 9, EF = 16, NROOT = 6 };
#define NV (UINT64_C(1) << SCALE)
#define NE ((uint64_t)EF << SCALE)

static uint64_t uv[2 * NE];
static uint64_t *adj, *adjp; /* CSR of the simple graph, self-loops dropped */
static uint64_t tdeg[NV];    /* tuple degree: non-self-loop tuples, duplicates counted */

static void build_adjacency(void)
{
	adjp = calloc(NV + 1, sizeof *adjp);
	for (uint64_t k = 0; k < NE; k++)
		if (uv[2 * k] != uv[2 * k + 1]) {
			adjp[uv[2 * k] + 1]++;
			adjp[uv[2 * k + 1] + 1]++;
			tdeg[uv[2 * k]]++;
			tdeg[uv[2 * k + 1]]++;
		}
	for (uint64_t v = 0; v < NV; v++)
		adjp[v + 1] += adjp[v];
	adj = malloc(adjp[NV] * sizeof *adj);
	uint64_t *at = malloc(NV * sizeof *at);
	memcpy(at, adjp, NV * sizeof *at);
	for (uint64_t k = 0; k < NE; k++)
		if (uv[2 * k] != uv[2 * k + 1]) {
			adj[at[uv[2 * k]]++] = uv[2 * k + 1];
			adj[at[uv[2 * k + 1]]++] = uv[2 * k];
		}
	free(at);
}

static int has_edge(uint64_t u, uint64_t v)
{
	for (uint64_t k = adjp[u]; k < adjp[u + 1]; k++)
		if (adj[k] == v)
			return 1;
	return 0;
}

/* depth[v] from root, -1 unreached; returns the deepest level */
static int64_t serial_bfs(uint64_t root, int64_t *depth)
{
	uint64_t *q = malloc(NV * sizeof *q), head = 0, tail = 0;
	for (uint64_t v = 0; v < NV; v++)
		depth[v] = -1;
	depth[root] = 0;
	q[tail++] = root;
	int64_t max = 0;
	while (head < tail) {
		uint64_t u = q[head++];
		for (uint64_t k = adjp[u]; k < adjp[u + 1]; k++)
			if (depth[adj[k]] < 0) {
				depth[adj[k]] = depth[u] + 1;
				max = depth[adj[k]];
				q[tail++] = adj[k];
			}
	}
	free(q);
	return max;
}

static int write_graph(const char *path)
{
	kgen_params p = {.scale = SCALE, .edgefactor = EF, .seed1 = 2, .seed2 = 3, .version = 3};
	kgen_ctx g;
	if (kgen_init(&g, &p))
		return 1;
	kgen_edges(&g, 0, NE, uv);
	kedge_info info = {.flags = KEDGE_F_UNDIRECTED, .nv = NV, .ne = NE, .prov = (char *)"program=test_kbfs_search\n"};
	kedge_writer *w;
	if (kedge_create(path, 1, &info, NULL, 0, &w))
		return 1;
	if (kedge_write(w, uv, NE)) {
		kedge_abandon(w);
		return 1;
	}
	return kedge_finish(w);
}

typedef struct cfg {
	int dir, xchg, compress, sv;
} cfg;

static const cfg cfgs[] = {
	{KBFS_DIR_AUTO, KBFS_X_AUTO, 1, 1}, {KBFS_DIR_TD, KBFS_X_BITMAP, 1, 1}, {KBFS_DIR_BU, KBFS_X_BITMAP, 1, 1},
	{KBFS_DIR_TD, KBFS_X_LIST, 0, 0},   {KBFS_DIR_BU, KBFS_X_LIST, 1, 0},   {KBFS_DIR_AUTO, KBFS_X_LIST, 0, 1},
};

/* One search against the serial BFS; returns the number of failed checks. */
static void check_search(kbfs_ctx *x, kbfs_engine *e, const cfg *c, uint64_t root, const int64_t *depth, int64_t max)
{
	char what[128];
	snprintf(what, sizeof what, "root %llu, %s, %s%s%s", (unsigned long long)root, kbfs_dir_name(c->dir),
		 kbfs_xmode_names[c->xchg], c->compress ? "" : ", raw", c->sv ? "" : ", no-sv");
	uint64_t N = x->b->g.N, *pred = malloc(N * sizeof *pred);
	e->to_host(e, pred, e->buf(e, KBFS_PRED), N * 8);
	uint64_t bad_depth = UINT64_MAX, bad_parent = UINT64_MAX, reached = 0, tsum = 0;
	uint64_t *found = calloc((size_t)max + 2, sizeof *found);
	for (uint64_t v = 0; v < N; v++) {
		int64_t lv = kbfs_packed_level(pred[v]);
		int64_t want = v < NV ? depth[v] : -1;
		if (lv != want && bad_depth == UINT64_MAX)
			bad_depth = v;
		if (want < 0)
			continue;
		reached++;
		tsum += tdeg[v];
		found[want]++;
		uint64_t p = kbfs_packed_parent(pred[v]);
		int good = v == root ? p == root
				     : p < NV && depth[p] == want - 1 && has_edge(p, v);
		if (!good && bad_parent == UINT64_MAX)
			bad_parent = v;
	}
	ok(bad_depth == UINT64_MAX, "%s: every depth is the serial BFS's", what);
	ok(bad_parent == UINT64_MAX, "%s: every parent is a neighbour one level up", what);
	is_u64(x->reached, reached, "%s: reached", what);
	is_u64(x->tdeg_reached / 2, tsum / 2, "%s: TEPS edges (tuples in the component)", what);
	is_u64(x->nlv, (uint64_t)max + 1, "%s: one level record per level, the last finding none", what);
	int levels_ok = x->nlv == (uint64_t)max + 1;
	for (size_t k = 0; levels_ok && k < x->nlv; k++) {
		const kbfs_level *l = &x->lv[k];
		levels_ok = l->level == k + 1 && l->found == found[k + 1] && l->frontier == found[k] &&
			    (c->dir == KBFS_DIR_AUTO || l->dir == c->dir);
	}
	ok(levels_ok, "%s: level records (level, frontier, found, direction)", what);
	free(found);
	free(pred);
}

int main(int argc, char **argv)
{
	klog_init("test_kbfs_search");
	kcomm *world = kcomm_init(&argc, &argv, 0);
	char dir[] = "/tmp/test_kbfs_search.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	char *graph = kfs_join(dir, "g.kg"), *part = kfs_join(dir, "g.1x1");
	ok(!write_graph(graph), "scale-%d graph written as an edge file", SCALE);
	build_adjacency();
	kpart_opts po = {.input = graph, .outdir = part, .R = 1, .C = 1, .relabel = KPART_RELABEL_NONE};
	kpart_build_stats st;
	ok(!kpart_build(world, &po, &st), "partitioned 1x1 by kpart_build");
	kpart_block b;
	ok(!kpart_load(part, 0, &b), "partition loaded");

	kbfs_engine e;
	kbfs_transport t;
	kbfs_engine_cpu(&e);
	kbfs_transport_mpi(&t);
	uint64_t cap = kbfs_wire_cap(&b, KBFS_X_LIST, 0), cap1 = kbfs_wire_cap(&b, KBFS_X_LIST, 1);
	kbfs_engine_conf conf = {.threads = 0, .wire_cap = cap > cap1 ? cap : cap1, .device = 0};
	ok(!e.setup(&e, &b, &conf) && !t.setup(&t, world, 1, 1, &e), "CPU engine and MPI transport set up");
	kbfs_ctx x;
	memset(&x, 0, sizeof x);
	kbfs_ctx_init(&x, &b, &e, &t);
	x.wire_cap = conf.wire_cap;

	int64_t *depth = malloc(NV * sizeof *depth);
	int nroot = 0;
	for (uint64_t v = 1; v < NV && nroot < NROOT; v += NV / NROOT + 3) {
		uint64_t r = v;
		while (r < NV && !tdeg[r])
			r++;
		if (r == NV)
			break;
		int64_t max = serial_bfs(r, depth);
		for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
			x.algo.direction = cfgs[c].dir;
			x.algo.exchange = cfgs[c].xchg;
			x.algo.compress = cfgs[c].compress;
			x.algo.sv = cfgs[c].sv;
			x.root_label = r;
			ok(!kbfs_search(&x, r, tdeg[r]), "root %llu: the search returns 0", (unsigned long long)r);
			check_search(&x, &e, &cfgs[c], r, depth, max);
		}
		nroot++;
	}
	ok(nroot == NROOT, "%d roots searched", NROOT);
	free(depth);
	kbfs_ctx_free(&x);
	t.teardown(&t);
	e.teardown(&e);
	kpart_block_free(&b);
	kfs_rmtree(dir);
	free(graph);
	free(part);
	free(adj);
	free(adjp);
	int rc = tap_done();
	kcomm_finalize();
	return rc;
}

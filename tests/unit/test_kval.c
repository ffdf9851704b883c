/* test_kval: Graph500 validation rules on small graphs built in memory, as an
 * edge list, as a 1x1 partition and as the four blocks of a 2x2 partition;
 * and the predecessor file formats. */
#include "kcomm.h"
#include "kengine.h"
#include "klog.h"
#include "kpart.h"
#include "kpred.h"
#include "kval.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE UINT64_MAX

/* Component A: 0..5 (with a self-loop and a duplicate), component B: 6..8,
 * vertex 9 isolated.  BFS from 0: depths 0 1 1 2 2 3. */
static const uint64_t E[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {1, 4}, {4, 5},
				{2, 2}, {1, 0}, {6, 7}, {7, 8}, {8, 6}, {9, 9}};
enum { NE = sizeof E / sizeof E[0], NV = 10, NEDGE = 8 };
static const uint64_t PRED[NV] = {0, 0, 0, 1, 1, 4, NONE, NONE, NONE, NONE};

static kcomm *world;
static uint64_t S = 1; /* id stride: spreads the vertices over 2x2 blocks */

/* ---- a hand-built block of an R x C partition (the kpart(5) contract) ---- */

typedef struct dedge {
	uint64_t r, c;
} dedge;

static int cmp_dedge(const void *a, const void *b)
{
	const dedge *x = a, *y = b;
	if (x->r != y->r)
		return x->r < y->r ? -1 : 1;
	return x->c < y->c ? -1 : x->c > y->c;
}

static void build_block(kpart_block *b, int R, int C, int i, int j, uint64_t nv, const uint64_t *uv, size_t ne)
{
	memset(b, 0, sizeof *b);
	uint64_t unit = (uint64_t)R * C * 64;
	b->g = (kpart_grid){.R = R, .C = C, .nv = nv, .N = (nv + unit - 1) / unit * unit};
	b->g.nb = b->g.N / ((uint64_t)R * C);
	b->i = i;
	b->j = j;
	b->ncols = b->g.N / C;
	b->nrows = b->g.N / R;
	const kpart_grid *g = &b->g;
	uint64_t cb = kpart_col_first(g, j), of = kpart_owned_first(g, i, j);
	dedge *d = malloc((2 * ne + 1) * sizeof *d);
	size_t nd = 0;
	b->tdeg = calloc(g->nb, sizeof *b->tdeg);
	for (size_t k = 0; k < ne; k++) {
		uint64_t x = uv[2 * k], y = uv[2 * k + 1];
		if (x == y)
			continue;
		for (int dir = 0; dir < 2; dir++) {
			uint64_t u = dir ? y : x, v = dir ? x : y;
			if (u >= of && u < of + g->nb)
				b->tdeg[u - of]++;
			if (u >= cb && u < cb + b->ncols && kpart_owner_row(g, v) == i)
				d[nd++] = (dedge){kpart_local_row(g, v), u - cb};
		}
	}
	qsort(d, nd, sizeof *d, cmp_dedge);
	size_t m = 0;
	for (size_t k = 0; k < nd; k++)
		if (!m || d[k].r != d[m - 1].r || d[k].c != d[m - 1].c)
			d[m++] = d[k];
	b->nnz = m;
	b->rowptr = calloc(b->nrows + 1, sizeof *b->rowptr);
	uint32_t *col = malloc((m + 1) * sizeof *col);
	for (size_t k = 0; k < m; k++) {
		b->rowptr[d[k].r + 1]++;
		col[k] = (uint32_t)d[k].c;
	}
	for (uint64_t r = 0; r < b->nrows; r++)
		b->rowptr[r + 1] += b->rowptr[r];
	b->colidx = col;
	free(d);
}

static void free_block(kpart_block *b)
{
	free(b->rowptr);
	free(b->colidx);
	free(b->tdeg);
	free(b->orig);
}

/* ---- the graph and a tree, with ids multiplied by S ---- */

static uint64_t uvS[2 * NE];
static uint64_t nvS;

static void setup(uint64_t stride)
{
	S = stride;
	for (size_t k = 0; k < NE; k++) {
		uvS[2 * k] = E[k][0] * S;
		uvS[2 * k + 1] = E[k][1] * S;
	}
	nvS = (NV - 1) * S + 1;
}

/* pred over N vertices from an edit of PRED: pairs (v, parent) in base ids,
 * parent NONE for unreached, ~0-1 for "out of range". */
static uint64_t *make_pred(uint64_t N, const uint64_t *edit, int nedit)
{
	uint64_t *p = malloc(N * sizeof *p);
	for (uint64_t v = 0; v < N; v++)
		p[v] = NONE;
	for (int v = 0; v < NV; v++)
		p[v * S] = PRED[v] == NONE ? NONE : PRED[v] * S;
	for (int k = 0; k < nedit; k++) {
		uint64_t v = edit[2 * k], q = edit[2 * k + 1];
		p[v * S] = q == NONE ? NONE : q == NONE - 1 ? N + 5 : q * S;
	}
	return p;
}

typedef struct tcase {
	const char *name;
	uint64_t root;
	uint64_t claimed;
	int nedit;
	uint64_t edit[4];
	int rule;
	int check;
	uint64_t vertex; /* base id */
} tcase;

static const tcase cases[] = {
	{"valid tree", 0, NEDGE, 0, {0}, 0, KVAL_OK, NONE},
	{"valid, nedge not claimed", 0, UINT64_MAX, 0, {0}, 0, KVAL_OK, NONE},
	{"another valid tree (3 under 2)", 0, NEDGE, 1, {3, 2}, 0, KVAL_OK, NONE},
	{"nedge mismatch", 0, NEDGE + 1, 0, {0}, 'f', KVAL_NEDGE, NONE},
	{"parent out of range", 0, NEDGE, 1, {5, NONE - 1}, 'a', KVAL_PARENT_RANGE, 5},
	{"root not its own parent", 0, NEDGE, 1, {0, 1}, 'b', KVAL_ROOT_PARENT, 0},
	{"root unreached", 0, NEDGE, 1, {0, NONE}, 'b', KVAL_ROOT_PARENT, 0},
	{"root is another vertex", 3, NEDGE, 0, {0}, 'b', KVAL_ROOT_PARENT, 3},
	{"cycle", 0, NEDGE, 2, {3, 4, 4, 3}, 'c', KVAL_CYCLE, 3},
	{"parent unreached", 0, NEDGE, 1, {4, 7}, 'c', KVAL_CHAIN, 4},
	{"parent not a neighbour", 0, NEDGE, 1, {5, 0}, 'c', KVAL_TREE_EDGE, 5},
	{"isolated vertex reached", 0, NEDGE, 1, {9, 0}, 'c', KVAL_TREE_EDGE, 9},
	{"skipped level", 0, NEDGE, 1, {4, 3}, 'd', KVAL_DEPTH, 4},
	{"unreached vertex of the component", 0, NEDGE, 1, {5, NONE}, 'e', KVAL_REACH, 5},
	{"reached vertex outside the component", 0, NEDGE, 2, {7, 0, 8, 7}, 'e', KVAL_REACH, 6},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void check(const char *how, const tcase *t, int rc, const kval_result *r, int exact_nedge)
{
	int want = t->rule != 0;
	ok(rc == want && r->rule == t->rule && r->check == t->check &&
		   (t->vertex == NONE ? 1 : r->vertex == t->vertex * S),
	   "%s: %s -> %s%c (got rc %d rule %c check %d vertex %llu: %s)", how, t->name, want ? "rule " : "valid",
	   want ? t->rule : ' ', rc, r->rule ? r->rule : '-', r->check, (unsigned long long)r->vertex, r->msg);
	if (!want && exact_nedge) {
		is_u64(r->nedge, NEDGE, "%s: %s: nedge", how, t->name);
		is_u64(r->reached, 6, "%s: %s: reached", how, t->name);
		is_u64(r->maxdepth, 3, "%s: %s: max depth", how, t->name);
	}
	if (want)
		ok(r->msg[0] && strstr(r->msg, (char[]){'r', 'u', 'l', 'e', ' ', '(', (char)t->rule, ')', 0}),
		   "%s: %s: message names rule (%c): %s", how, t->name, t->rule, r->msg);
}

static void run_edges(void)
{
	setup(1);
	for (int k = 0; k < NCASES; k++) {
		const tcase *t = &cases[k];
		uint64_t *p = make_pred(NV, t->edit, t->nedit);
		kval_result r;
		int rc = kval_edges(world, uvS, NE, NV, t->root, p, t->claimed, &r);
		check("edges", t, rc, &r, 1);
		free(p);
	}
	/* the edge list split in two slices validated one after the other
	 * gives the same per-slice verdicts for a rule found locally */
	uint64_t *p = make_pred(NV, NULL, 0);
	kval_result r;
	ok(kval_edges(world, uvS, NE, NV, 42, p, NEDGE, &r) == 1 && r.rule == 'b', "edges: root out of range -> (b)");
	free(p);
}

/* The search's packed entries for parents p: the level of v is the length
 * of its parent chain to the root (0 where the chain does not get there);
 * bump (when not NONE) gets a level one too deep, a false claim. */
static uint64_t *pack(const uint64_t *p, uint64_t N, uint64_t root, uint64_t bump)
{
	uint64_t *e = malloc(N * sizeof *e);
	for (uint64_t v = 0; v < N; v++) {
		if (p[v] == NONE) {
			e[v] = KBFS_NONE;
			continue;
		}
		uint64_t d = 0, u = v;
		while (u != root && u < N && p[u] < N && d <= N)
			u = p[u], d++;
		if (u != root || d > N)
			d = 0;
		e[v] = kbfs_packed(d + (v == bump), p[v] & KBFS_PARENT_MASK);
	}
	return e;
}

/* kval_partition_packed gives kval_partition's verdict on every case, and a
 * false level on a valid tree is not taken for a failure. */
static void run_packed11(void)
{
	setup(1);
	kpart_block b;
	build_block(&b, 1, 1, 0, 0, NV, uvS, NE);
	for (int k = 0; k < NCASES; k++) {
		const tcase *t = &cases[k];
		uint64_t *p = make_pred(b.g.N, t->edit, t->nedit), *e = pack(p, b.g.N, t->root, NONE);
		kval_result r, rp;
		int rc = kval_partition(world, &b, t->root, p, t->claimed, &r);
		int rcp = kval_partition_packed(world, &b, t->root, e, t->claimed, &rp);
		ok(rcp == rc && rp.rule == r.rule && rp.check == r.check && rp.vertex == r.vertex && rp.nedge == r.nedge,
		   "packed 1x1: %s: the verdict of kval_partition (rc %d/%d, rule %c/%c)", t->name, rcp, rc,
		   rp.rule ? rp.rule : '-', r.rule ? r.rule : '-');
		free(p);
		free(e);
	}
	uint64_t *p = make_pred(b.g.N, NULL, 0);
	for (uint64_t v = 1; v < 4; v++) {
		uint64_t *e = pack(p, b.g.N, 0, v);
		kval_result r;
		ok(kval_partition_packed(world, &b, 0, e, NEDGE, &r) == 0 && r.nedge == NEDGE,
		   "packed 1x1: a level one too deep at vertex %llu: the parents decide (valid)", (unsigned long long)v);
		free(e);
	}
	free(p);
	free_block(&b);
}

static void run_part11(void)
{
	setup(1);
	kpart_block b;
	build_block(&b, 1, 1, 0, 0, NV, uvS, NE);
	for (int k = 0; k < NCASES; k++) {
		const tcase *t = &cases[k];
		uint64_t *p = make_pred(b.g.N, t->edit, t->nedit);
		kval_result r;
		int rc = kval_partition(world, &b, t->root, p, t->claimed, &r);
		check("1x1", t, rc, &r, 1);
		free(p);
	}
	/* input ids reported through orig */
	b.orig = malloc(b.g.nb * sizeof *b.orig);
	for (uint64_t v = 0; v < b.g.nb; v++)
		b.orig[v] = 1000 + v;
	uint64_t e[2] = {5, NONE};
	uint64_t *p = make_pred(b.g.N, e, 1);
	kval_result r;
	kval_partition(world, &b, 0, p, NEDGE, &r);
	ok(r.vertex == 5 && r.vertex_orig == 1005 && strstr(r.msg, "1005 (internal 5)"), "1x1: input id in the message: %s",
	   r.msg);
	char buf[256];
	uint64_t map[NV];
	for (int v = 0; v < NV; v++)
		map[v] = 500 + (uint64_t)v;
	kval_describe(&r, map, buf, sizeof buf);
	ok(strstr(buf, "vertex 505 ") && strstr(buf, "neighbour 504 "), "kval_describe maps ids: %s", buf);
	free(p);
	free_block(&b);
}

/* The four blocks of a 2x2 grid, each validated alone: a local rule is
 * found by the blocks holding the offending edge, a tree edge by exactly
 * one block. */
static void run_part22(void)
{
	setup(25);
	kpart_block b[4];
	for (int r = 0; r < 4; r++)
		build_block(&b[r], 2, 2, r / 2, r % 2, nvS, uvS, NE);
	ok(b[0].g.N == 256 && b[0].g.nb == 64, "2x2: N 256, nb 64");
	uint64_t owners = 0;
	for (int v = 0; v < NV; v++)
		owners |= 1u << kpart_owner(&b[0].g, v * S);
	ok(owners == 15, "2x2: the vertices are spread over the 4 blocks");
	for (int k = 0; k < NCASES; k++) {
		const tcase *t = &cases[k];
		if (t->check == KVAL_NEDGE)
			continue;
		uint64_t *p = make_pred(b[0].g.N, t->edit, t->nedit);
		int found = 0, rcs = 0;
		kval_result r;
		for (int q = 0; q < 4; q++) {
			int rc = kval_partition(world, &b[q], t->root * S, p, UINT64_MAX, &r);
			rcs += rc;
			if (rc && r.rule == t->rule && r.check == t->check && r.vertex == t->vertex * S)
				found++;
		}
		if (t->check == KVAL_TREE_EDGE)
			ok(rcs == 1 && found == 1, "2x2: %s: exactly one block finds the missing tree edge (%d)", t->name,
			   rcs);
		else if (t->rule == 0)
			ok(rcs == 0, "2x2: %s: all blocks find it valid", t->name);
		else
			ok(found > 0, "2x2: %s: a block reports rule (%c) at vertex %llu (%d blocks fail)", t->name,
			   t->rule, (unsigned long long)(t->vertex * S), rcs);
		free(p);
	}
	for (int r = 0; r < 4; r++)
		free_block(&b[r]);
	setup(1);
}

/* A path of 600 vertices: depths beyond one byte and parent chains longer
 * than the parallel walks take, so the 32-bit scan and the serial pass run. */
static void run_path(void)
{
	enum { L = 600 };
	uint64_t *uv = malloc(2 * (L - 1) * sizeof *uv), *p = malloc(L * sizeof *p);
	for (uint64_t k = 0; k + 1 < L; k++) {
		uv[2 * k] = k + 1; /* reversed, so walks start at deep vertices */
		uv[2 * k + 1] = k;
	}
	kpart_block b;
	build_block(&b, 1, 1, 0, 0, L, uv, L - 1);
	uint64_t *pp = malloc(b.g.N * sizeof *pp);
	for (int form = 0; form < 2; form++) {
		const char *how = form ? "path 1x1" : "path edges";
		for (int c = 0; c < 4; c++) {
			for (uint64_t v = 0; v < b.g.N; v++)
				pp[v] = v == 0 ? 0 : v < L ? v - 1 : NONE;
			if (c == 1)
				pp[100] = 500; /* cycle 100 <- 101 <- ... <- 500 <- 100 */
			if (c == 2)
				pp[L - 1] = NONE;
			if (c == 3)
				pp[450] = NONE; /* breaks the chain of 451.. */
			memcpy(p, pp, L * sizeof *p);
			kval_result r;
			int rc = form ? kval_partition(world, &b, 0, pp, L - 1, &r) : kval_edges(world, uv, L - 1, L, 0, p, L - 1, &r);
			if (c == 0)
				ok(rc == 0 && r.reached == L && r.maxdepth == L - 1 && r.nedge == L - 1,
				   "%s: valid, reached %d, max depth %d, nedge %d (%s)", how, L, L - 1, L - 1, r.msg);
			else if (c == 1)
				ok(rc == 1 && r.check == KVAL_CYCLE && r.vertex == 100, "%s: deep cycle -> (c) at 100: %s", how,
				   r.msg);
			else if (c == 2)
				ok(rc == 1 && r.check == KVAL_REACH && r.vertex == L - 1, "%s: unreached end -> (e): %s", how,
				   r.msg);
			else
				ok(rc == 1 && r.check == KVAL_CHAIN && r.vertex == 451, "%s: chain through an unreached vertex -> (c) at 451: %s",
				   how, r.msg);
		}
	}
	free(pp);
	free(p);
	free(uv);
	free_block(&b);
}

/* ---- kpred ---- */

static void run_kpred(void)
{
	char dir[] = "/tmp/test_kval.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char bin[256], txt[256], bad[256];
	snprintf(bin, sizeof bin, "%s/p.bin", dir);
	snprintf(txt, sizeof txt, "%s/p.txt", dir);
	snprintf(bad, sizeof bad, "%s/bad", dir);
	uint64_t v[5] = {0, 1, 2, 3, 1ull << 40};
	int64_t par[5] = {0, 0, -1, 1, -7};
	for (int binary = 0; binary < 2; binary++) {
		const char *path = binary ? bin : txt;
		ok(kpred_write(path, binary, 0, 5, v, par) == 0, "kpred_write %s", binary ? "binary" : "text");
		uint64_t root, n, *rv;
		int64_t *rp;
		int rc = kpred_read(path, &root, &n, &rv, &rp);
		ok(rc == 0 && root == 0 && n == 5 && !memcmp(rv, v, sizeof v) && !memcmp(rp, par, sizeof par),
		   "kpred_read %s round trip", binary ? "binary" : "text");
		if (!rc) {
			free(rv);
			free(rp);
		}
	}
	/* corrupt binary: flip a byte, truncate */
	FILE *f = fopen(bin, "rb");
	unsigned char buf[512];
	size_t len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	const char *what[] = {"flipped byte", "truncated", "trailing byte", "newer major"};
	for (int k = 0; k < 4; k++) {
		unsigned char c[520];
		memcpy(c, buf, len);
		size_t l = len;
		if (k == 0)
			c[40] ^= 1;
		else if (k == 1)
			l -= 9;
		else if (k == 2)
			c[l++] = 0;
		else
			c[8] = 9;
		f = fopen(bad, "wb");
		fwrite(c, 1, l, f);
		fclose(f);
		uint64_t root, n, *rv;
		int64_t *rp;
		fprintf(stderr, "# expect an error: ");
		ok(kpred_read(bad, &root, &n, &rv, &rp) == KEXIT_DATA && !rv && !rp, "kpred_read refuses %s binary", what[k]);
	}
	const char *texts[] = {"0 0\n1 x\n", "0 0\n1 2 3\n", "0 0\n1 99999999999999999999\n", "# root z\n0 0\n", "0\n"};
	for (int k = 0; k < 5; k++) {
		f = fopen(bad, "wb");
		fputs(texts[k], f);
		fclose(f);
		uint64_t root, n, *rv;
		int64_t *rp;
		fprintf(stderr, "# expect an error: ");
		ok(kpred_read(bad, &root, &n, &rv, &rp) == KEXIT_DATA, "kpred_read refuses malformed text %d", k);
	}
	f = fopen(txt, "wb");
	fputs("# a comment\n\n  7 -1\r\n3\t3\n", f);
	fclose(f);
	uint64_t root, n, *rv;
	int64_t *rp;
	ok(kpred_read(txt, &root, &n, &rv, &rp) == 0 && root == UINT64_MAX && n == 2 && rv[0] == 7 && rp[0] == -1 &&
		   rv[1] == 3 && rp[1] == 3,
	   "kpred_read: comments, blank lines, CRLF, tabs; no root recorded");
	if (n == 2) {
		free(rv);
		free(rp);
	}
	unlink(bin);
	unlink(txt);
	unlink(bad);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	klog_init("test_kval");
	world = kcomm_init(&argc, &argv, 0);
	run_edges();
	run_part11();
	run_packed11();
	run_part22();
	run_path();
	run_kpred();
	kcomm_finalize();
	return tap_done();
}

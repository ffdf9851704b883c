/* kvalidate: check BFS trees against a graph by the Graph500 3.x rules (see
 * kvalidate(1)).  The graph is an edge file or a kpart partition directory;
 * the trees are predecessor files (kpred(5)) in the input's own ids. */
#include "kcomm.h"
#include "kedge.h"
#include "kimport.h"
#include "kidmap.h"
#include "kio.h"
#include "kjson.h"
#include "klog.h"
#include "kopt.h"
#include "kpart.h"
#include "kpred.h"
#include "kval.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NONE UINT64_MAX

static _Noreturn void usage(FILE *fp, int status)
{
	fprintf(fp,
		"Usage: kvalidate [--root R] [--nedge N] [-q] [--json] GRAPH PRED...\n"
		"       mpirun -np P kvalidate ... GRAPH PRED...\n"
		"\n"
		"Check BFS trees (predecessor maps) against a graph by the Graph500 3.x\n"
		"rules (a)-(f) and count each tree's TEPS edges as reference 3.0.1 does.\n"
		"GRAPH is a kedge file, a text edge list (any format kgen --from reads) or\n"
		"a partition directory written by kpart (then P must be its R x C).\n"
		"PRED is a predecessor file written by kbfs --pred-out (binary or text), a\n"
		"'v parent' text list from any BFS code, or a directory whose pred-* files\n"
		"are all checked.  Ids are the input's own.\n"
		"\n"
		"Options:\n"
		"      --root R           the root (input id) when a file does not name it\n"
		"                         (default: the vertex that is its own parent)\n"
		"      --nedge N          also check rule (f): every tree's edge count is N\n"
		"      --json             one JSON object per tree on standard output\n"
		"  -q, --quiet            print only the invalid trees\n");
	kopt_common_help(fp);
	exit(status);
}

/* ------------------------------------------------------------------ graph */

enum { G_PART, G_EDGES };

typedef struct graph {
	int kind;
	const char *path;
	kpart_block b;      /* G_PART */
	uint64_t *uv;       /* G_EDGES: this rank's tuples */
	uint64_t ne_local;
	uint64_t N;         /* ids in pred: padded N (partition) or nv */
	uint64_t nreal;     /* with an identity map: input ids are 0..nreal-1 */
	/* rank 0 only */
	uint64_t *map;      /* internal -> input id (N entries) or NULL */
	kidmap inv;         /* input id -> internal */
} graph;

/* input id -> internal id, NONE when not a vertex of the graph */
static uint64_t to_internal(const graph *g, uint64_t x)
{
	if (!g->map)
		return x < g->nreal ? x : NONE;
	return kidmap_find(&g->inv, x);
}

static int load_partition(kcomm *w, graph *g)
{
	int R = 0, C = 0, rank = kcomm_rank(w), P = kcomm_size(w);
	uint64_t nv = 0;
	int rc = kpart_manifest_grid(g->path, &R, &C, &nv);
	rc = kcomm_agree(w, rc);
	if (rc)
		return rc;
	if ((long)R * C != P) {
		if (rank == 0)
			kerror("partition '%s' is for %d x %d = %d ranks but this run has %d; run 'mpirun -np %d kvalidate'",
			       g->path, R, C, R * C, P, R * C);
		return KEXIT_USAGE;
	}
	rc = kcomm_agree(w, kpart_load(g->path, rank, &g->b));
	if (rc)
		return rc;
	const kpart_grid *pg = &g->b.g;
	g->N = pg->N;
	g->nreal = pg->nv;
	uint64_t any = g->b.orig != NULL;
	kcomm_allreduce_u64(w, &any, 1, KCOMM_MAX);
	if (!any)
		return 0;
	/* gather every block's orig on rank 0, placed at its block */
	uint64_t nb = pg->nb, first = kpart_owned_first(pg, g->b.i, g->b.j);
	uint64_t *mine = kmalloc(kmul((size_t)nb, 8) + 8);
	for (uint64_t k = 0; k < nb; k++)
		mine[k] = g->b.orig ? g->b.orig[k] : first + k;
	size_t *counts = NULL, *displs = NULL;
	if (rank == 0) {
		g->map = kmalloc(kmul((size_t)g->N, 8));
		counts = kmalloc(kmul((size_t)P, sizeof *counts));
		displs = kmalloc(kmul((size_t)P, sizeof *displs));
		for (int r = 0; r < P; r++) {
			counts[r] = (size_t)nb * 8;
			displs[r] = (size_t)kpart_owned_first(pg, r / C, r % C) * 8;
		}
	}
	kcomm_gatherv(w, mine, (size_t)nb * 8, g->map, counts, displs, 0);
	free(mine);
	free(counts);
	free(displs);
	return 0;
}

/* Rank 0 reads a non-seekable edge file and deals chunks round-robin. */
enum { DEAL = 1 << 18 };

static int deal_edges(kcomm *w, kedge_reader *r, uint64_t ne, graph *g)
{
	int rank = kcomm_rank(w), P = kcomm_size(w);
	uint64_t nchunks = (ne + DEAL - 1) / DEAL;
	g->ne_local = 0;
	for (uint64_t c = (uint64_t)rank; c < nchunks; c += (uint64_t)P)
		g->ne_local += c == nchunks - 1 ? ne - c * DEAL : DEAL;
	g->uv = kmalloc(kmul((size_t)g->ne_local, 16) + 16);
	uint64_t *buf = rank == 0 ? kmalloc((size_t)DEAL * 16) : NULL;
	uint64_t off = 0;
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t cnt = c == nchunks - 1 ? ne - c * DEAL : DEAL;
		int to = (int)(c % (uint64_t)P);
		if (rank == 0) {
			for (uint64_t have = 0; have < cnt;) {
				size_t got;
				int rc = kedge_read(r, buf + 2 * have, (size_t)(cnt - have), &got);
				if (rc)
					kcomm_abort(rc);
				if (!got) {
					kerror("'%s': truncated file (fewer edges than the header announces)", g->path);
					kcomm_abort(KEXIT_DATA);
				}
				have += got;
			}
			if (to == 0)
				memcpy(g->uv + 2 * off, buf, (size_t)cnt * 16);
			else
				kcomm_send(w, buf, (size_t)cnt * 16, to, 7);
		} else if (to == rank) {
			kcomm_recv(w, g->uv + 2 * off, (size_t)cnt * 16, 0, 7);
		}
		if (to == rank)
			off += cnt;
	}
	if (rank == 0) {
		size_t got;
		int rc = kedge_read(r, buf, 1, &got); /* checks the trailer and CRC */
		if (rc)
			kcomm_abort(rc);
	}
	free(buf);
	return 0;
}

/* Rank 0 holds all tuples (an imported text graph): send each rank its slice. */
static void scatter_all(kcomm *w, uint64_t *all, uint64_t ne, graph *g)
{
	int rank = kcomm_rank(w), P = kcomm_size(w);
	uint64_t lo = ne * (uint64_t)rank / (uint64_t)P, hi = ne * (uint64_t)(rank + 1) / (uint64_t)P;
	g->ne_local = hi - lo;
	g->uv = kmalloc(kmul((size_t)g->ne_local, 16) + 16);
	if (rank == 0) {
		memcpy(g->uv, all, (size_t)g->ne_local * 16);
		for (int r = 1; r < P; r++) {
			uint64_t a = ne * (uint64_t)r / (uint64_t)P, b = ne * (uint64_t)(r + 1) / (uint64_t)P;
			kcomm_send(w, all + 2 * a, (size_t)(b - a) * 16, r, 8);
		}
	} else {
		kcomm_recv(w, g->uv, (size_t)g->ne_local * 16, 0, 8);
	}
}

static int load_edges(kcomm *w, graph *g)
{
	int rank = kcomm_rank(w), P = kcomm_size(w);
	/* rank 0 looks at the first bytes: kedge, or text for kimport */
	uint64_t hdr[4] = {0, 0, 0, 0}; /* rc, is_kedge, nv, ne */
	kedge_reader *r = NULL;
	kedge_info info;
	kimport_result imp;
	memset(&imp, 0, sizeof imp);
	if (rank == 0) {
		kio_in *in = kio_open_in(g->path, 0);
		unsigned char head[KEDGE_MAGIC_LEN];
		size_t got = 0;
		hdr[0] = in ? (uint64_t)kio_peek(in, head, sizeof head, &got) : KEXIT_IO;
		if (in)
			kio_close_in(in);
		hdr[1] = kedge_is_magic(head, got);
		if (!hdr[0] && hdr[1]) {
			hdr[0] = (uint64_t)kedge_open(g->path, &r, &info);
			if (!hdr[0]) {
				hdr[2] = info.nv;
				hdr[3] = info.ne;
				if (kedge_map(r)) {
					g->map = kmalloc(kmul((size_t)info.nv, 8) + 8);
					memcpy(g->map, kedge_map(r), (size_t)info.nv * 8);
				}
				hdr[1] = kedge_seekable(r) ? 2 : 1;
			}
		} else if (!hdr[0]) {
			hdr[0] = (uint64_t)kimport_read(g->path, KIMPORT_AUTO, 0, &imp);
			hdr[2] = imp.nv;
			hdr[3] = imp.ne;
			if (!hdr[0]) {
				g->map = imp.map;
				imp.map = NULL;
			}
		}
	}
	kcomm_bcast(w, hdr, sizeof hdr, 0);
	if (hdr[0])
		return (int)hdr[0];
	g->N = g->nreal = hdr[2];
	uint64_t ne = hdr[3];
	if (hdr[1] == 0) {
		scatter_all(w, imp.uv, ne, g);
		kimport_free(&imp);
		return 0;
	}
	if (hdr[1] == 1) {
		deal_edges(w, r, ne, g);
		kedge_close(r); /* the reader owns info.prov */
		return 0;
	}
	/* seekable: every rank reads its own slice */
	int rc = 0;
	if (rank != 0)
		rc = kedge_open(g->path, &r, &info);
	uint64_t lo = ne * (uint64_t)rank / (uint64_t)P, hi = ne * (uint64_t)(rank + 1) / (uint64_t)P;
	g->ne_local = hi - lo;
	g->uv = kmalloc(kmul((size_t)g->ne_local, 16) + 16);
	if (!rc)
		rc = kedge_read_at(r, lo, hi - lo, g->uv);
	kedge_close(r);
	return kcomm_agree(w, rc);
}

static void graph_free(graph *g)
{
	if (g->kind == G_PART)
		kpart_block_free(&g->b);
	free(g->uv);
	free(g->map);
	kidmap_free(&g->inv);
}

/* ------------------------------------------------------------ pred files */

typedef struct plist {
	char **v;
	size_t n, cap;
} plist;

static void plist_add(plist *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = krealloc(l->v, kmul(l->cap, sizeof *l->v));
	}
	l->v[l->n++] = kstrdup(s);
}

static int cmp_name(const void *a, const void *b) { return strverscmp(*(char *const *)a, *(char *const *)b); }

/* Expand a directory into its pred-* files (sorted); returns a KEXIT code. */
static int add_pred_arg(plist *l, const char *arg)
{
	struct stat st;
	if (strcmp(arg, "-") && stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(arg);
		if (!d) {
			kerror("cannot open '%s': %s", arg, strerror(errno));
			return KEXIT_IO;
		}
		size_t first = l->n;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strncmp(e->d_name, "pred-", 5) || strstr(e->d_name, ".tmp."))
				continue;
			size_t n = strlen(arg) + strlen(e->d_name) + 2;
			char *p = kmalloc(n);
			snprintf(p, n, "%s/%s", arg, e->d_name);
			plist_add(l, p);
			free(p);
		}
		closedir(d);
		if (l->n == first) {
			kerror("'%s': no pred-* file in this directory", arg);
			return KEXIT_DATA;
		}
		qsort(l->v + first, l->n - first, sizeof *l->v, cmp_name);
		return 0;
	}
	plist_add(l, arg);
	return 0;
}

/* Verdict of reading and translating one file on rank 0. */
enum { T_OK, T_ERROR, T_INVALID };

typedef struct tree {
	int status;        /* T_* */
	int code;          /* KEXIT code for T_ERROR */
	uint64_t root;     /* internal */
	uint64_t root_in;  /* input id */
	char why[256];     /* T_INVALID: the reason */
} tree;

/* Read PATH and fill pred[N] with internal ids (rank 0). */
static void read_tree(const graph *g, const char *path, uint64_t opt_root, uint64_t *pred, tree *t)
{
	uint64_t froot, n, *v;
	int64_t *par;
	memset(t, 0, sizeof *t);
	int rc = kpred_read(path, &froot, &n, &v, &par);
	if (rc) {
		t->status = T_ERROR;
		t->code = rc;
		return;
	}
	for (uint64_t x = 0; x < g->N; x++)
		pred[x] = NONE;
	uint64_t self = NONE;
	t->status = T_INVALID;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t iv = to_internal(g, v[k]);
		uint64_t ip = par[k] == -1 ? NONE : par[k] < -1 ? NONE - 1 : to_internal(g, (uint64_t)par[k]);
		if (iv == NONE) {
			if (par[k] == -1)
				continue;
			snprintf(t->why, sizeof t->why, "rule (a): vertex %" PRIu64 " (parent %" PRId64 ") is not a vertex of the graph",
				 v[k], par[k]);
			goto out;
		}
		if (par[k] != -1 && ip >= NONE - 1) {
			snprintf(t->why, sizeof t->why,
				 "rule (a): vertex %" PRIu64 " has parent %" PRId64 ", which is neither -1 nor a vertex id", v[k],
				 par[k]);
			goto out;
		}
		if (pred[iv] != NONE && pred[iv] != ip) {
			snprintf(t->why, sizeof t->why, "vertex %" PRIu64 " is listed twice, with different parents", v[k]);
			goto out;
		}
		pred[iv] = ip;
		if (ip == iv && self == NONE)
			self = v[k];
	}
	t->root_in = opt_root != NONE ? opt_root : froot != NONE ? froot : self;
	if (opt_root != NONE && froot != NONE && froot != opt_root) {
		snprintf(t->why, sizeof t->why, "rule (b): the file names root %" PRIu64 " but --root is %" PRIu64, froot,
			 opt_root);
		goto out;
	}
	if (t->root_in == NONE) {
		snprintf(t->why, sizeof t->why, "rule (b): no vertex is its own parent (give the root with --root)");
		goto out;
	}
	t->root = to_internal(g, t->root_in);
	if (t->root == NONE) {
		snprintf(t->why, sizeof t->why, "rule (b): the root %" PRIu64 " is not a vertex of the graph", t->root_in);
		goto out;
	}
	t->status = T_OK;
out:
	free(v);
	free(par);
}

/* ------------------------------------------------------------------ run */

typedef struct opts {
	uint64_t root, nedge;
	int json;
	const char *graph;
	char **preds;
	int npreds;
} opts;

static void print_tree(kjson_writer *js, const char *file, const tree *t, const kval_result *res, const graph *g,
		       double secs)
{
	char msg[320];
	int valid = t->status == T_OK && res->rule == 0;
	if (t->status == T_INVALID)
		snprintf(msg, sizeof msg, "%s", t->why);
	else if (!valid)
		kval_describe(res, g->map, msg, sizeof msg);
	if (js) {
		kjson_begin_object(js);
		kjson_kv_string(js, "file", file);
		kjson_kv_bool(js, "valid", valid);
		if (t->root_in != NONE && t->status != T_INVALID)
			kjson_kv_uint(js, "root", t->root_in);
		if (t->status == T_OK) {
			kjson_kv_uint(js, "nedge", res->nedge);
			kjson_kv_uint(js, "reached", res->reached);
			kjson_kv_int(js, "max_depth", res->maxdepth);
			kjson_kv_double(js, "validate_s", secs);
		}
		if (!valid) {
			char rule[2] = {(char)(t->status == T_OK ? res->rule : 0), 0};
			if (t->status == T_INVALID && !strncmp(t->why, "rule (", 6))
				rule[0] = t->why[6];
			kjson_kv_string(js, "rule", rule[0] ? rule : NULL);
			kjson_kv_string(js, "message", msg);
		}
		kjson_end_object(js);
	} else if (valid) {
		if (!klog_quiet())
			printf("%s: valid, root %" PRIu64 ", nedge %" PRIu64 ", reached %" PRIu64 ", max depth %d\n", file,
			       t->root_in, res->nedge, res->reached, res->maxdepth);
	} else {
		printf("%s: invalid: %s\n", file, msg);
	}
	if (t->status == T_OK)
		kinfo("%s: validated in %.4f s", file, secs);
	fflush(stdout);
}

static int run(kcomm *w, const opts *o)
{
	int rank = kcomm_rank(w);
	graph g;
	memset(&g, 0, sizeof g);
	g.path = o->graph;
	struct stat st;
	uint64_t isdir = rank == 0 && stat(o->graph, &st) == 0 && S_ISDIR(st.st_mode);
	kcomm_bcast(w, &isdir, sizeof isdir, 0);
	g.kind = isdir ? G_PART : G_EDGES;
	int rc = g.kind == G_PART ? load_partition(w, &g) : load_edges(w, &g);
	if (rc)
		return rc;
	plist l = {0};
	int worst = 0;
	if (rank == 0) {
		if (g.map)
			kidmap_build(&g.inv, g.map, g.N);
		for (int k = 0; k < o->npreds; k++) {
			int e = add_pred_arg(&l, o->preds[k]);
			if (e > worst)
				worst = e;
		}
	}
	uint64_t nfiles = l.n;
	kcomm_bcast(w, &nfiles, sizeof nfiles, 0);
	uint64_t *pred = kmalloc(kmul((size_t)g.N, 8) + 8);
	kjson_writer *js = rank == 0 && o->json ? kjson_writer_new(stdout, 0) : NULL;
	double total = 0;
	for (uint64_t f = 0; f < nfiles; f++) {
		tree t;
		memset(&t, 0, sizeof t);
		if (rank == 0)
			read_tree(&g, l.v[f], o->root, pred, &t);
		uint64_t hdr[2] = {(uint64_t)t.status, t.root};
		kcomm_bcast(w, hdr, sizeof hdr, 0);
		kval_result res;
		memset(&res, 0, sizeof res);
		double secs = 0;
		if (hdr[0] == T_OK) {
			kcomm_bcast(w, pred, (size_t)g.N * 8, 0);
			kcomm_barrier(w);
			double t0 = ktime();
			if (g.kind == G_PART)
				kval_partition(w, &g.b, hdr[1], pred, o->nedge, &res);
			else
				kval_edges(w, g.uv, g.ne_local, g.N, hdr[1], pred, o->nedge, &res);
			kcomm_barrier(w);
			secs = ktime() - t0;
			total += secs;
		}
		if (rank != 0)
			continue;
		int code = t.status == T_ERROR ? t.code : t.status == T_INVALID || res.rule ? KEXIT_DATA : 0;
		if (code > worst)
			worst = code;
		if (t.status != T_ERROR)
			print_tree(js, l.v[f], &t, &res, &g, secs);
	}
	if (rank == 0 && nfiles)
		kinfo("%" PRIu64 " trees, %.4f s validating, %.4f s per tree", nfiles, total, total / (double)nfiles);
	if (js && kjson_writer_free(js))
		worst = worst > KEXIT_IO ? worst : KEXIT_IO;
	for (size_t k = 0; k < l.n; k++)
		free(l.v[k]);
	free(l.v);
	free(pred);
	graph_free(&g);
	uint64_t w64 = (uint64_t)worst;
	kcomm_bcast(w, &w64, sizeof w64, 0);
	return (int)w64;
}

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	enum { O_ROOT = 256, O_NEDGE, O_JSON, O_THREADS };
	static const struct option lopts[] = {
		{"root", required_argument, 0, O_ROOT}, {"nedge", required_argument, 0, O_NEDGE},
		{"json", no_argument, 0, O_JSON},       {"threads", required_argument, 0, O_THREADS},
		{"quiet", no_argument, 0, 'q'},         {"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},          {"version", no_argument, 0, 'V'},
		{0, 0, 0, 0}};
	opts o = {.root = NONE, .nedge = NONE};
	int c;
	while ((c = getopt_long(argc, argv, "qvhV", lopts, NULL)) != -1) {
		switch (c) {
		case O_ROOT: o.root = kopt_u64("--root", optarg, 0, UINT64_MAX - 2); break;
		case O_NEDGE: o.nedge = kopt_u64("--nedge", optarg, 0, UINT64_MAX - 1); break;
		case O_JSON: o.json = 1; break;
		case O_THREADS: kopt_set_threads((int)kopt_u64("--threads", optarg, 1, 4096)); break;
		case 'q': klog_set_quiet(1); break;
		case 'v': klog_set_verbose(1); break;
		case 'h': usage(stdout, 0);
		case 'V': kopt_version(stdout); return kio_close_stdout();
		default: fprintf(stderr, "Try 'kvalidate --help' for more information.\n"); return KEXIT_USAGE;
		}
	}
	if (argc - optind < 2)
		kopt_usage_error(argc - optind ? "give at least one PRED file after GRAPH" : "give GRAPH and PRED files");
	o.graph = argv[optind];
	o.preds = argv + optind + 1;
	o.npreds = argc - optind - 1;
	if (!strcmp(o.graph, "-"))
		kopt_usage_error("GRAPH must be a file or a directory, not standard input");
	int stdin_preds = 0;
	for (int k = 0; k < o.npreds; k++)
		stdin_preds += !strcmp(o.preds[k], "-");
	if (stdin_preds > 1)
		kopt_usage_error("standard input ('-') can be read only once");
	kcomm *world = kcomm_init(&argc, &argv, 0);
	int rc = run(world, &o);
	kcomm_finalize();
	int rc2 = kio_close_stdout();
	return rc ? rc : rc2;
}

/* kvalidate: check BFS trees against a graph by the Graph500 3.x rules (see
 * kvalidate(1)).  The graph is an edge file or a kpart partition directory;
 * the trees are predecessor files (kpred(5)) in the input's own ids. */
#include "kcomm.h"
#include "kio.h"
#include "kjson.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"
#include "kpred.h"
#include "kval.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
		"A line per tree, and after several a summary (trees valid, invalid, time);\n"
		"-q (below) prints only the invalid trees' lines.\n");
	kopt_common_help(fp);
	exit(status);
}

typedef struct opts {
	uint64_t root, nedge;
	int json;
	const char *graph;
	char **preds;
	int npreds;
} opts;

/* One tree's verdict (res); checked: the tree was checked against the
 * graph (the file itself passed rules (a) and (b)). */
static void print_tree(kjson_writer *js, const char *file, uint64_t root_in, int checked, const kval_result *res,
		       const kval_graph *g, double secs)
{
	char msg[320];
	int valid = res->check == KVAL_OK;
	if (!valid)
		kval_describe(res, g->map, msg, sizeof msg);
	if (js) {
		kjson_begin_object(js);
		kjson_kv_string(js, "file", file);
		kjson_kv_bool(js, "valid", valid);
		if (checked) {
			kjson_kv_uint(js, "root", root_in);
			kjson_kv_uint(js, "nedge", res->nedge);
			kjson_kv_uint(js, "reached", res->reached);
			kjson_kv_int(js, "max_depth", res->maxdepth);
			kjson_kv_double(js, "validate_s", secs);
		}
		if (!valid) {
			char rule[2] = {(char)res->rule, 0};
			kjson_kv_string(js, "rule", rule[0] ? rule : NULL);
			kjson_kv_string(js, "message", msg);
		}
		kjson_end_object(js);
	} else if (valid) {
		if (!klog_quiet())
			printf("%s: valid, root %" PRIu64 ", nedge %" PRIu64 ", reached %" PRIu64 ", max depth %d\n", file,
			       root_in, res->nedge, res->reached, res->maxdepth);
	} else {
		printf("%s: invalid: %s\n", file, msg);
	}
	if (checked)
		kinfo("%s: validated in %.4f s", file, secs);
	fflush(stdout);
}

/* One predecessor file as rank 0 read it, for every rank (a broadcast). */
typedef struct tree_msg {
	uint64_t rc;    /* kval_tree_read's code (later: the check's, when it is not a verdict) */
	uint64_t check; /* what the file itself said (enum kval_check; KVAL_OK: check it) */
	uint64_t root;  /* the root, internal id */
} tree_msg;

static int run(kcomm *w, const opts *o)
{
	int rank = kcomm_rank(w);
	kval_graph g;
	int rc = kval_graph_load(w, o->graph, &g);
	if (rc) {
		kval_graph_free(&g);
		return rc;
	}
	kpred_list l = {0};
	int worst = 0;
	for (int k = 0; rank == 0 && k < o->npreds; k++) {
		int e = kpred_list_add(&l, o->preds[k]);
		if (e > worst)
			worst = e;
	}
	uint64_t nfiles = l.n;
	kcomm_bcast(w, &nfiles, sizeof nfiles, 0);
	uint64_t *pred = kmalloc(kmul((size_t)g.N, 8) + 8);
	kjson_writer *js = rank == 0 && o->json ? kjson_writer_new(stdout, 0) : NULL;
	double total = 0;
	uint64_t nvalid = 0, ninvalid = 0; /* rank 0: the verdicts */
	for (uint64_t f = 0; f < nfiles; f++) {
		kval_result res;
		tree_msg t = {0, 0, 0}; /* rank 0 reads the file, every rank checks it */
		uint64_t root_in = UINT64_MAX;
		if (rank == 0) {
			t.rc = (uint64_t)kval_tree_read(&g, l.v[f], o->root, pred, &root_in, &t.root, &res);
			t.check = t.rc ? 0 : (uint64_t)res.check;
		}
		kcomm_bcast(w, &t, sizeof t, 0);
		int checked = !t.rc && t.check == KVAL_OK;
		double secs = 0;
		if (checked) {
			kcomm_bcast(w, pred, (size_t)g.N * 8, 0);
			kcomm_barrier(w);
			double t0 = ktime();
			int e = kval_graph_check(w, &g, t.root, pred, o->nedge, &res);
			kcomm_barrier(w);
			secs = ktime() - t0;
			total += secs;
			if (e > 1) /* not a verdict: the graph is too large */
				t.rc = (uint64_t)e;
		}
		if (rank != 0)
			continue;
		int code = t.rc ? (int)t.rc : res.check != KVAL_OK ? KEXIT_DATA : 0;
		if (code > worst)
			worst = code;
		if (!t.rc) {
			print_tree(js, l.v[f], root_in, checked, &res, &g, secs);
			nvalid += res.check == KVAL_OK;
			ninvalid += res.check != KVAL_OK;
		}
	}
	if (rank == 0 && nfiles > 1 && !js && !klog_quiet()) {
		printf("%" PRIu64 " trees: %" PRIu64 " valid, %" PRIu64 " invalid", nfiles, nvalid, ninvalid);
		if (nfiles > nvalid + ninvalid)
			printf(", %" PRIu64 " not read", nfiles - nvalid - ninvalid);
		printf(" (%.4f s validating, %.4f s per tree)\n", total, total / (double)nfiles);
	} else if (rank == 0 && nfiles) {
		kinfo("%" PRIu64 " trees, %.4f s validating, %.4f s per tree", nfiles, total, total / (double)nfiles);
	}
	if (js && kjson_writer_free(js))
		worst = worst > KEXIT_IO ? worst : KEXIT_IO;
	kpred_list_free(&l);
	free(pred);
	kval_graph_free(&g);
	uint64_t w64 = (uint64_t)worst;
	kcomm_bcast(w, &w64, sizeof w64, 0);
	return (int)w64;
}

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	enum { O_ROOT = 256, O_NEDGE, O_JSON };
	static const struct option lopts[] = {{"root", required_argument, 0, O_ROOT},
					      {"nedge", required_argument, 0, O_NEDGE},
					      {"json", no_argument, 0, O_JSON},
					      KOPT_COMMON_LONG,
					      {0, 0, 0, 0}};
	opts o = {.root = UINT64_MAX, .nedge = UINT64_MAX};
	int c, threads = 0;
	while ((c = getopt_long(argc, argv, ":" KOPT_COMMON_SHORT, lopts, NULL)) != -1) {
		switch (c) {
		case O_ROOT: o.root = kopt_u64("--root", optarg, 0, UINT64_MAX - 2); break;
		case O_NEDGE: o.nedge = kopt_u64("--nedge", optarg, 0, UINT64_MAX - 1); break;
		case O_JSON: o.json = 1; break;
		default: kopt_common(c, argv, &threads, usage);
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
	kopt_threads(threads, kopt_local_ranks());
	kcomm *world = kcomm_init(&argc, &argv, 0);
	int rc = run(world, &o);
	kcomm_finalize();
	int rc2 = kio_close_stdout();
	return rc ? rc : rc2;
}

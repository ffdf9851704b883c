/* kstat: statistics of edge files, partitions and kbfs runs (see kstat(1)). */
#include "kmagic.h"
#include "kgraph.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"
#include "kpart.h"
#include "krun.h"
#include "ksvg.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void usage(FILE *fp, int status)
{
	fprintf(fp,
		"Usage: kstat [--json] [--svg FILE] GRAPH|-\n"
		"       kstat [--json] [--svg FILE] PARTITION-DIR\n"
		"       kstat [--json] [--svg FILE] RUN.json...\n"
		"\n"
		"Report on a graph (an edge file, or any format kgen --from imports): vertices,\n"
		"edges, self-loops, duplicate edges, isolated vertices, maximum degree and a\n"
		"log2 degree histogram.\n"
		"Report on a partition (kpart): per-rank sizes, imbalance, device memory.\n"
		"Report on kbfs runs (kbfs --json): the Graph500 statistics block of each.\n"
		"\n"
		"Options:\n"
		"      --json         machine-readable output (JSON) on stdout\n"
		"      --svg FILE     also draw as SVG: the degree distribution (log-log) of\n"
		"                     an edge file; the adjacency entries per rank of a\n"
		"                     partition as a heat map (colours from 0); the levels\n"
		"                     of one run's median search (time per phase,\n"
		"                     direction); harmonic-mean TEPS against ranks for\n"
		"                     several runs, a series per graph, each point\n"
		"                     labelled R x C\n");
	kopt_common_help(fp);
	exit(status);
}

/* The SVG's file once its writer is done (rc: what the writer returned):
 * committed, or, when a write failed (a full disk), refused by kio_commit
 * with the reason. */
static int end_svg(kio_out *o, int rc)
{
	if (rc && !ferror(kio_out_file(o))) {
		kio_abort(o); /* the writer has said why */
		return rc;
	}
	int crc = kio_commit(o);
	return crc ? crc : rc;
}

static int write_svg(const char *svg, const char *path, const kgraph_stats *s)
{
	kio_out *o = kio_open_out(svg, 0, 0);
	return o ? end_svg(o, kgraph_svg(kio_out_file(o), path, s)) : KEXIT_IO;
}

static int part_main(const char *dir, int json, const char *svg)
{
	int rc = kpart_report(dir, stdout, json);
	if (!rc && svg) {
		double *vals;
		int R, C;
		rc = kpart_heatmap_values(dir, &vals, &R, &C);
		if (!rc) {
			kio_out *o = kio_open_out(svg, 0, 0);
			/* what a rank stores: each edge u-v as two entries (u,v)
			 * and (v,u), often on two ranks, so not "edges" */
			double top = 0, sum = 0;
			for (int k = 0; k < R * C; k++)
				top = vals[k] > top ? vals[k] : top, sum += vals[k];
			char title[512];
			snprintf(title, sizeof title,
				 "Adjacency entries per rank (an edge is two) of %s (%d x %d), largest/mean %.3g", dir, R,
				 C, sum > 0 ? top * R * C / sum : 0.0);
			rc = o ? end_svg(o, ksvg_heatmap(kio_out_file(o), title, "grid column j", "grid row i",
							 "adjacency entries per rank", (size_t)R, (size_t)C, vals))
			       : KEXIT_IO;
			free(vals);
		}
	}
	if (rc)
		return rc; /* kpart_report has said why (a failed write too) */
	return kio_close_stdout();
}

static int runs_main(int n, char **paths, int json, const char *svg)
{
	krun *runs = kcalloc((size_t)n, sizeof *runs);
	int rc = 0;
	for (int i = 0; i < n && !rc; i++)
		rc = krun_load(paths[i], &runs[i]);
	if (!rc && json)
		rc = krun_print_json(stdout, runs, (size_t)n);
	for (int i = 0; i < n && !rc && !json; i++) {
		if (n > 1)
			printf("%s# %s\n", i ? "\n" : "", paths[i]);
		rc = krun_print_block(stdout, &runs[i]);
	}
	if (!rc && svg) {
		kio_out *o = kio_open_out(svg, 0, 0);
		rc = o ? end_svg(o, krun_svg(kio_out_file(o), runs, (size_t)n)) : KEXIT_IO;
	}
	for (int i = 0; i < n; i++)
		krun_free(&runs[i]);
	free(runs);
	int rc2 = kio_close_stdout();
	return rc ? rc : rc2;
}

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	enum { O_JSON = 256, O_SVG };
	static const struct option opts[] = {
		{"json", no_argument, 0, O_JSON}, {"svg", required_argument, 0, O_SVG}, KOPT_COMMON_LONG, {0, 0, 0, 0}};
	int json = 0, threads = 0, c;
	const char *svg = NULL;
	while ((c = getopt_long(argc, argv, ":" KOPT_COMMON_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case O_JSON: json = 1; break;
		case O_SVG: svg = optarg; break;
		default: kopt_common(c, argv, &threads, usage);
		}
	}
	kopt_threads(threads, kopt_local_ranks());
	if (optind >= argc)
		kopt_usage_error("give a graph, a partition or run records ('-': a graph on standard input)");
	for (int k = optind; svg && k < argc; k++) {
		const kopt_file out = {"--svg", svg, NULL}, in = {"the input", argv[k], ""};
		kopt_check_files(&out, 1, &in, 1);
	}
	int kind, rc = kmagic_detect(argv[optind], &kind);
	if (rc)
		return rc;
	if (kind == KMAGIC_DIR) {
		if (argc - optind > 1)
			kopt_usage_error("one partition at a time");
		return part_main(argv[optind], json, svg);
	}
	if (kind == KMAGIC_JSON)
		return runs_main(argc - optind, argv + optind, json, svg);
	if (argc - optind > 1)
		kopt_usage_error("one graph at a time");
	const char *path = argv[optind];
	kgraph_stats s;
	rc = kgraph_stats_file(path, &s);
	if (rc)
		return rc;
	if (json)
		kgraph_print_json(stdout, path, &s);
	else
		kgraph_print(stdout, path, &s);
	if (svg)
		rc = write_svg(svg, path, &s);
	kgraph_stats_free(&s);
	int rc2 = kio_close_stdout();
	return rc ? rc : rc2;
}

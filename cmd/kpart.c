/* kpart: build, check or dump the 2D partition of a graph (see kpart(1)). */
#include "kcomm.h"
#include "kdev.h"
#include "kedge.h"
#include "kgen_dev.h"
#include "kgpu.h"
#include "kjson.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"
#include "kopt.h"
#include "kpart.h"
#include "kpart/kpart_build.h"
#include "kpart_dev.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Noreturn void usage(FILE *fp, int status)
{
	fprintf(fp,
		"Usage: kpart -R ROWS -C COLS [-o DIR] [--relabel degree|none] [--engine cpu|cuda|auto]\n"
		"             [--force] EDGEFILE|-\n"
		"       kpart -R ROWS -C COLS -o DIR -s SCALE [-e N] [--seed1 N] [--seed2 N]\n"
		"             [--g500-version 3|2] ...   (the Kronecker graph generated here)\n"
		"       mpirun -np ROWS*COLS kpart -R ROWS -C COLS ...   (ranks share the work)\n"
		"       kpart --check DIR\n"
		"       kpart --dry-run -R ROWS -C COLS (-s SCALE [-e N] | EDGEFILE) [--gpu-memory SIZE]\n"
		"\n"
		"Split the adjacency matrix of an edge file (kedge(5)) over a ROWS x COLS\n"
		"processor grid, stored as CSC + CSR blocks, one rank file per processor,\n"
		"in the directory DIR (kpart(5)).  Built once, searched many times by kbfs.\n"
		"With -s instead of an edge file, kpart generates the Graph500 Kronecker graph\n"
		"itself: the partition kgen -s SCALE | kpart - gives, with no edge file.\n"
		"\n"
		"Options:\n"
		"  -R, --rows R           processor rows (R = 1: 1D by columns)\n"
		"  -C, --cols C           processor columns (C = 1: 1D by rows)\n"
		"  -o, --output DIR       partition directory (default: EDGEFILE without its\n"
		"                         extension, plus '.kpart'; required for '-')\n"
		"      --relabel MODE     degree (default): renumber vertices inside every\n"
		"                         block by decreasing degree (ties by id); none: keep\n"
		"                         the input's order\n"
		"      --engine E         sort and build the blocks on cpu, or on cuda (this\n"
		"                         rank's GPU; reading and writing stay on the CPU);\n"
		"                         the same files either way; auto (default): cuda\n"
		"                         when every rank sees a GPU, else cpu\n"
		"      --force            replace an existing partition DIR (once the new one\n"
		"                         is complete)\n"
		"      --check DIR        verify a partition: checksums, sizes, structure\n"
		"      --dry-run          build nothing: estimate the edge file, the partition,\n"
		"                         the device memory per GPU of a kbfs run, of kgen and\n"
		"                         of kpart --engine cuda, from a Graph500 scale (-s,\n"
		"                         -e) or an edge file's header\n"
		"  -s, --scale SCALE      instead of EDGEFILE: the Kronecker graph of 2^SCALE\n"
		"                         vertices, generated as kgen's (on the GPUs when the\n"
		"                         build runs there; with --dry-run: estimated)\n"
		"  -e, --edgefactor N     with -s: edges per vertex (default 16)\n"
		"      --seed1 N, --seed2 N  with -s: the generator's seeds (default 2, 3)\n"
		"      --g500-version V   with -s: 3 (reference 3.x, default) or 2\n"
		"      --gpu-memory SIZE  with --dry-run: say whether it fits GPUs of SIZE\n"
		"                         (80G, 141G, 1.5T; K, M, G, T are powers of 1024; at\n"
		"                         least 1M: a plain 80 would be 80 bytes) and\n"
		"                         the fewest that would; exit 4 when it does not fit\n"
		"      --json             print a JSON record of the build (or of the\n"
		"                         --dry-run estimate) on standard output\n");
	kopt_common_help(fp);
	exit(status);
}

/* EDGEFILE minus its extension, plus ".kpart" */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	char *out = kmalloc(n + 8);
	memcpy(out, in, n + 1);
	char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	char *dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = 0;
	strcat(out, ".kpart");
	return out;
}

static char *joined_argv(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = kmalloc(n), *p = s;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, i ? " %s" : "%s", argv[i]);
	*p = 0;
	return s;
}

static void print_json(const kpart_opts *o, const kpart_build_stats *st)
{
	kjson_writer *w = kjson_writer_new(stdout, 0);
	kjson_begin_object(w);
	kjson_kv_string(w, "program", "kpart");
	kjson_kv_string(w, "input", o->input);
	kjson_kv_string(w, "output", o->outdir);
	kjson_kv_int(w, "R", o->R);
	kjson_kv_int(w, "C", o->C);
	kjson_kv_string(w, "relabel", kpart_relabel_names[o->relabel]);
	kjson_kv_uint(w, "nv", st->nv);
	kjson_kv_uint(w, "N", st->N);
	kjson_kv_uint(w, "M", st->M);
	kjson_kv_uint(w, "selfloops", st->selfloops);
	kjson_kv_uint(w, "nnz", st->nnz);
	kjson_kv_int(w, "processes", st->nprocs);
	kjson_kv_int(w, "threads", st->threads);
	kjson_kv_string(w, "engine", st->engine);
	kjson_kv_double(w, "construction_time", st->t_total);
	kjson_kv_double(w, "read_time", st->t_read);
	kjson_kv_double(w, "build_time", st->t_build);
	kjson_kv_double(w, "write_time", st->t_write);
	kjson_end_object(w);
	kjson_writer_free(w);
}

/* "80G", "1.5T", "512M", "81920000000" (bytes); K, M, G, T are powers of
 * 1024, an "iB" or "B" after them is allowed; at least 1 MiB */
static uint64_t parse_size(const char *opt, const char *arg)
{
	const char *end;
	double x = 0;
	knum_double(arg, &end, &x);
	int shift = 0;
	const char *u = "KMGT", *k = *end ? strchr(u, *end & ~0x20) : NULL;
	if (k && *end) {
		shift = 10 * (int)(k - u + 1);
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (end == arg || *end || !(x > 0) || x * (double)(UINT64_C(1) << shift) >= 1.8e19)
		kopt_usage_error("%s: '%s' is not a size (like 80G)", opt, arg);
	uint64_t n = (uint64_t)(x * (double)(UINT64_C(1) << shift));
	/* no GPU has less: "80" meant 80G, not 80 bytes */
	if (n < (UINT64_C(1) << 20))
		kopt_usage_error("%s: '%s' is %llu bytes, less than 1 MiB: give a unit (like %sG)", opt, arg,
				 (unsigned long long)n, arg);
	return n;
}

/* kpart --dry-run: estimates only (kpart_estimate), on one process. */
static int dry_run(const kpart_opts *o, int scale, uint64_t ef, uint64_t gpu_bytes, int json)
{
	uint64_t nv, M;
	char what[512];
	if (scale) {
		nv = UINT64_C(1) << scale;
		M = ef << scale;
		snprintf(what, sizeof what, "kpart --dry-run: scale %d, edgefactor %llu", scale, (unsigned long long)ef);
	} else {
		kedge_reader *r;
		kedge_info info;
		int rc = kedge_open(o->input, &r, &info);
		if (rc)
			return rc;
		nv = info.nv;
		M = info.ne;
		kedge_close(r);
		snprintf(what, sizeof what, "kpart --dry-run: '%.400s'", o->input);
	}
	kpart_estimate e;
	if (kpart_estimate_make(nv, M, o->R, o->C, &e)) {
		kerror("a %dx%d grid has more blocks than the graph's %llu vertices", o->R, o->C, (unsigned long long)nv);
		return KEXIT_USAGE;
	}
	if (json)
		kpart_estimate_json(stdout, &e, gpu_bytes);
	else
		kpart_estimate_print(stdout, what, &e, gpu_bytes);
	return gpu_bytes && e.device_bytes > gpu_bytes ? KEXIT_RESOURCE : 0;
}

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	enum { O_RELABEL = 256, O_FORCE, O_CHECK, O_JSON, O_DUMP, O_DUMPL, O_WIDE, O_ROUND, O_DRY, O_GPUMEM, O_ENGINE,
	       O_SEED1, O_SEED2, O_G500V };
	static const struct option opts[] = {
		{"rows", required_argument, 0, 'R'},      {"cols", required_argument, 0, 'C'},
		{"output", required_argument, 0, 'o'},    {"relabel", required_argument, 0, O_RELABEL},
		{"force", no_argument, 0, O_FORCE},       {"check", required_argument, 0, O_CHECK},
		{"json", no_argument, 0, O_JSON},         KOPT_COMMON_LONG,
		{"dry-run", no_argument, 0, O_DRY},       {"scale", required_argument, 0, 's'},
		{"edgefactor", required_argument, 0, 'e'}, {"gpu-memory", required_argument, 0, O_GPUMEM},
		{"engine", required_argument, 0, O_ENGINE},
		{"seed1", required_argument, 0, O_SEED1}, {"seed2", required_argument, 0, O_SEED2},
		{"g500-version", required_argument, 0, O_G500V},
		/* for tests, not documented */
		{"dump", required_argument, 0, O_DUMP},   {"dump-layout", required_argument, 0, O_DUMPL},
		{"wide", no_argument, 0, O_WIDE},         {"round-tuples", required_argument, 0, O_ROUND},
		{0, 0, 0, 0}};
	kpart_opts o = {.R = 0, .C = 0, .relabel = KPART_RELABEL_DEGREE, .engine = KDEV_ENGINE_AUTO};
	const char *check = NULL, *dump = NULL;
	int json = 0, layout = 0, threads = 0, dry = 0, scale = 0, g500v = 0, seeds = 0, c;
	uint64_t ef = 0, gpu_bytes = 0, seed1 = 2, seed2 = 3;
	while ((c = getopt_long(argc, argv, ":R:C:o:s:e:" KOPT_COMMON_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case 'R': o.R = (int)kopt_u64("-R", optarg, 1, 1 << 20); break;
		case 'C': o.C = (int)kopt_u64("-C", optarg, 1, 1 << 20); break;
		case 'o': o.outdir = optarg; break;
		case O_RELABEL: o.relabel = kopt_choice("--relabel", optarg, kpart_relabel_names); break;
		case O_FORCE: o.force = 1; break;
		case O_CHECK: check = optarg; break;
		case O_JSON: json = 1; break;
		case O_DUMP: dump = optarg; break;
		case O_DUMPL: dump = optarg, layout = 1; break;
		case O_WIDE: o.wide = 1; break;
		case O_ROUND: o.round_tuples = kopt_u64("--round-tuples", optarg, 1, UINT64_C(1) << 40); break;
		case O_DRY: dry = 1; break;
		case 's': scale = (int)kopt_u64("-s", optarg, 1, 42); break;
		case 'e': ef = kopt_u64("-e", optarg, 1, 1u << 20); break;
		case O_GPUMEM: gpu_bytes = parse_size("--gpu-memory", optarg); break;
		case O_ENGINE: o.engine = kopt_choice("--engine", optarg, kdev_engine_names); break;
		case O_SEED1: seed1 = kopt_u64("--seed1", optarg, 0, UINT64_MAX), seeds = 1; break;
		case O_SEED2: seed2 = kopt_u64("--seed2", optarg, 0, UINT64_MAX), seeds = 1; break;
		case O_G500V: g500v = (int)kopt_u64("--g500-version", optarg, 2, 3); break;
		default: kopt_common(c, argv, &threads, usage);
		}
	}
	if (!dry && gpu_bytes)
		kopt_usage_error("--gpu-memory goes with --dry-run");
	if ((ef || seeds || g500v) && !scale)
		kopt_usage_error("%s goes with -s", ef ? "-e" : seeds ? "--seed1/--seed2" : "--g500-version");
	if (dry) {
		if (check || dump)
			kopt_usage_error("--dry-run and --check exclude each other");
		if (!o.R || !o.C)
			kopt_usage_error("give the grid with -R ROWS and -C COLS");
		if (ef && !scale)
			kopt_usage_error("-e goes with -s");
		if (scale ? optind < argc : optind + 1 != argc)
			kopt_usage_error(scale ? "-s and an edge file exclude each other" : optind == argc
					 ? "give -s SCALE or an edge file" : "unexpected argument '%s'",
					 argv[optind + (optind < argc && !scale)]);
		if (scale && (ef ? ef : 16) > (UINT64_MAX >> scale))
			kopt_usage_error("edgefactor x 2^scale does not fit in 64 bits");
		o.input = scale ? NULL : argv[optind];
		int rc = dry_run(&o, scale, ef ? ef : 16, gpu_bytes, json);
		int rc2 = kio_close_stdout();
		return rc ? rc : rc2;
	}
	if (check || dump) {
		if (optind < argc)
			kopt_usage_error("unexpected argument '%s'", argv[optind]);
		if (check && dump)
			kopt_usage_error("--check and --dump exclude each other");
	} else if (scale) {
		/* kpart -s: the Kronecker graph generated here, no edge file */
		if (check || dump)
			kopt_usage_error("-s and --check exclude each other");
		if (!o.R || !o.C)
			kopt_usage_error("give the grid with -R ROWS and -C COLS");
		if (optind < argc)
			kopt_usage_error("-s and an edge file exclude each other ('%s')", argv[optind]);
		if (!o.outdir)
			kopt_usage_error("give -o DIR with -s");
		if ((ef ? ef : 16) > (UINT64_MAX >> scale) >> 1)
			kopt_usage_error("edgefactor x 2^scale does not fit in 63 bits");
	} else {
		if (!o.R || !o.C)
			kopt_usage_error("give the grid with -R ROWS and -C COLS");
		if (optind + 1 != argc)
			kopt_usage_error(optind == argc ? "give the edge file to partition ('-' for standard input)"
							: "unexpected argument '%s'", argv[optind + (optind < argc)]);
		o.input = argv[optind];
		if (!o.outdir && !strcmp(o.input, "-"))
			kopt_usage_error("give -o DIR when the edge file is standard input");
	}
	if (!check && !dump && o.outdir && !strcmp(o.outdir, "-"))
		kopt_usage_error("-o: a partition is a directory, not standard output ('-')");
	char *cmdline = joined_argv(argc, argv), *outdir = NULL, *prov = NULL;
	kgen_params gp = {.scale = scale, .edgefactor = ef ? ef : 16, .seed1 = seed1, .seed2 = seed2,
			  .version = g500v ? g500v : 3};
	if (!check && !dump && scale) {
		/* the provenance kgen -s would write, with this command line */
		char extra[512];
		snprintf(extra, sizeof extra,
			 "kind=kronecker\nscale=%d\nedgefactor=%" PRIu64 "\nseed1=%" PRIu64 "\nseed2=%" PRIu64
			 "\ng500_version=%d\n",
			 gp.scale, gp.edgefactor, gp.seed1, gp.seed2, gp.version);
		o.gen = &gp;
		o.gen_prov = prov = kedge_prov_make(argc, argv, extra);
		o.input = "(generated)";
		const kopt_file outs[] = {{"-o", o.outdir, NULL}};
		kopt_check_files(outs, 1, NULL, 0);
	} else if (!check && !dump) {
		if (!o.outdir)
			o.outdir = outdir = default_output(o.input);
		const kopt_file outs[] = {{"-o", o.outdir, NULL}}, ins[] = {{"the edge file", o.input, NULL}};
		kopt_check_files(outs, 1, ins, 1);
	}
	kopt_threads(threads, kopt_local_ranks());
	kcomm *world = kcomm_init(&argc, &argv, 0);
	int me = kcomm_rank(world), rc = 0;
	if (check || dump) {
		/* one process does it; the others wait for its verdict */
		if (me == 0) {
			if (check) {
				rc = kpart_check(check, klog_verbose());
				if (!rc && !klog_quiet())
					printf("%s: ok\n", check);
			} else {
				rc = kpart_dump(dump, stdout, layout);
			}
		}
		rc = kcomm_agree(world, rc);
	} else {
		o.argv = cmdline;
		kopt_check_affinity();
		kpart_device dev;
		kgpu_kpart_device(&dev);
		o.dev = &dev;
		kgen_device gdev;
		kgpu_kgen_device(&gdev);
		o.gdev = gdev.base.built ? &gdev : NULL;
		kpart_build_stats st;
		rc = kpart_build(world, &o, &st);
		if (!rc && me == 0) {
			kinfo("built '%s': %dx%d grid, %llu vertices, %llu stored edges in %.3f s (read %.3f, build %.3f, "
			      "write %.3f) on %d process(es) x %d thread(s)",
			      o.outdir, o.R, o.C, (unsigned long long)st.nv, (unsigned long long)st.nnz, st.t_total,
			      st.t_read, st.t_build, st.t_write, st.nprocs, st.threads);
			if (json)
				print_json(&o, &st);
		}
	}
	kcomm_finalize();
	free(cmdline);
	free(outdir);
	free(prov);
	if (me == 0 && !rc)
		rc = kio_close_stdout(); /* a failed dump has said why already */
	return rc;
}

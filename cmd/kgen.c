/* kgen: write a Graph500 Kronecker graph or import a real graph (see kgen(1)). */
#include "kcomm.h"
#include "kdev.h"
#include "kgen/kgenrun.h"
#include "kgpu.h"
#include "kimport.h"
#include "kio.h"
#include "klog.h"
#include "kopt.h"
#include "ksink.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void usage(FILE *fp, int status)
{
	fprintf(fp,
		"Usage: kgen -s SCALE [-e EDGEFACTOR] [--seed1 N] [--seed2 N] [--g500-version 3|2]\n"
		"            [--engine cpu|cuda|auto] [-f FORMAT] [-z] [-o FILE|-]\n"
		"       kgen --from FILE [--import-format F] [--map FILE]\n"
		"            [--skip-bad] [-f FORMAT] [-z] [-o FILE|-]\n"
		"       mpirun -np P kgen -s SCALE ...   (ranks share the generation)\n"
		"\n"
		"Write the Graph500 Kronecker graph (edge for edge the reference generator's\n"
		"list) or import a real graph: SNAP/gapbs edge list (.el, .wel), CSV (a header\n"
		"such as src,dst allowed), Matrix Market, METIS, DIMACS (.gr), gapbs serialized\n"
		"(.sg, .wsg), plain or gzip; or convert an edge file (kgen --from g.kg -f text).\n"
		"\n"
		"Options:\n"
		"  -s, --scale SCALE      2^SCALE vertices, 1..42\n"
		"  -e, --edgefactor N     edges per vertex (default 16)\n"
		"      --seed1 N          first generator seed (default 2)\n"
		"      --seed2 N          second generator seed (default 3)\n"
		"      --g500-version V   3 (reference 3.x, default) or 2 (reference 2.1.4)\n"
		"      --engine E         generate on cpu, cuda (this rank's GPU) or auto (default:\n"
		"                         cuda when every rank sees a GPU); the same file either\n"
		"                         way; imports (--from) always run on the CPU\n"
		"      --from FILE        import FILE ('-' = stdin) instead of generating\n"
		"      --import-format F  auto (default: from the content), edgelist, mtx, metis,\n"
		"                         dimacs, sg or kedge\n"
		"      --map FILE         with --from: write 'internal original' id lines to FILE\n"
		"      --skip-bad         with --from: skip malformed lines instead of stopping\n"
		"  -f, --format F         kedge (default), text ('u v' lines), g500 (12-byte\n"
		"                         reference 3.x layout), g500v2 (16-byte 2.x layout),\n"
		"                         mtx (Matrix Market, symmetric), sg (gapbs, undirected)\n"
		"  -z, --compress         deflate the kedge payload\n"
		"  -o, --output FILE      output file (default '-': standard output)\n"
		"      --force            write binary data even to a terminal\n");
	kopt_common_help(fp);
	exit(status);
}

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	enum { O_SEED1 = 256, O_SEED2, O_VER, O_FROM, O_MAP, O_SKIP, O_IFMT, O_FORCE, O_ENGINE };
	static const struct option opts[] = {
		{"scale", required_argument, 0, 's'},     {"edgefactor", required_argument, 0, 'e'},
		{"seed1", required_argument, 0, O_SEED1}, {"seed2", required_argument, 0, O_SEED2},
		{"g500-version", required_argument, 0, O_VER},
		{"from", required_argument, 0, O_FROM},   {"map", required_argument, 0, O_MAP},
		{"skip-bad", no_argument, 0, O_SKIP},     {"import-format", required_argument, 0, O_IFMT},
		{"format", required_argument, 0, 'f'},    {"compress", no_argument, 0, 'z'},
		{"output", required_argument, 0, 'o'},    {"force", no_argument, 0, O_FORCE},
		{"engine", required_argument, 0, O_ENGINE},
		KOPT_COMMON_LONG,                         {0, 0, 0, 0}};
	kgenrun_opts o = {.p = {.scale = 0, .edgefactor = 16, .seed1 = 2, .seed2 = 3, .version = 3},
			  .format = KFMT_KEDGE, .out = "-", .import_format = KIMPORT_AUTO, .engine = KDEV_ENGINE_AUTO};
	int c, threads = 0;
	while ((c = getopt_long(argc, argv, ":s:e:f:zo:" KOPT_COMMON_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case 's': o.p.scale = (int)kopt_u64("-s", optarg, 1, KGEN_MAX_SCALE); break;
		case 'e': o.p.edgefactor = kopt_u64("-e", optarg, 1, 1u << 20); break;
		case O_SEED1: o.p.seed1 = kopt_u64("--seed1", optarg, 0, UINT64_MAX); break;
		case O_SEED2: o.p.seed2 = kopt_u64("--seed2", optarg, 0, UINT64_MAX); break;
		case O_VER: o.p.version = (int)kopt_u64("--g500-version", optarg, 2, 3); break;
		case O_FROM: o.from = optarg; break;
		case O_MAP: o.map_out = optarg; break;
		case O_SKIP: o.skip_bad = 1; break;
		case O_IFMT: o.import_format = kopt_choice("--import-format", optarg, kimport_format_names); break;
		case 'f': o.format = kopt_choice("-f", optarg, kfmt_names); break;
		case 'z': o.compress = 1; break;
		case 'o': o.out = optarg; break;
		case O_FORCE: o.force = 1; break;
		case O_ENGINE: o.engine = kopt_choice("--engine", optarg, kdev_engine_names); break;
		default: kopt_common(c, argv, &threads, usage);
		}
	}
	if (optind < argc)
		kopt_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.from && !o.p.scale)
		kopt_usage_error("give -s SCALE or --from FILE");
	if (o.from && o.p.scale)
		kopt_usage_error("-s and --from exclude each other");
	if (!o.from && (o.map_out || o.skip_bad))
		kopt_usage_error("--map and --skip-bad go with --from");
	if (o.compress && o.format != KFMT_KEDGE)
		kopt_usage_error("-z applies to the kedge format only");
	if (!o.from && !kgen_nedges(&o.p))
		kopt_usage_error("edgefactor x 2^scale does not fit in 64 bits");
	const kopt_file outs[] = {{"-o", o.out, NULL}, {"--map", o.map_out, NULL}}, ins[] = {{"--from", o.from, NULL}};
	kopt_check_files(outs, 2, ins, 1);
	o.argc = argc;
	o.argv = argv;
	kopt_threads(threads, kopt_local_ranks());
	kcomm *world = kcomm_init(&argc, &argv, 0);
	kgen_device dev;
	kgpu_kgen_device(&dev);
	o.dev = &dev;
	int rc = o.from ? kgenrun_import(world, &o) : kgenrun_generate(world, &o);
	kcomm_finalize();
	if (!rc && !strcmp(o.out, "-"))
		rc = kio_close_stdout();
	return rc;
}

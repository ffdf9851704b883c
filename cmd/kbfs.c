/* kbfs: distributed 2D breadth-first search on a partition (see kbfs(1)). */
#include "kbfs/kbfs_run.h"
#include "kcomm.h"
#include "kdev.h"
#include "kgpu.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void usage(FILE *fp, int status)
{
	fprintf(fp,
		"Usage: mpirun -np R*C kbfs [options] DIR\n"
		"\n"
		"Breadth-first search from Graph500 roots on the 2D partition DIR (made by\n"
		"kpart for an R x C grid); prints the Graph500 statistics block.\n"
		"\n"
		"Roots:\n"
		"  -n, --nroots N        draw N roots with the Graph500 sampler (default 64)\n"
		"  -r, --root ID         search from ID (input id; repeatable); prints a line per\n"
		"                        search (reached, depth, time, TEPS) instead of the block\n"
		"      --roots FILE      search from the ids in FILE (one a line)\n"
		"      --roots-from S    where -n's roots are drawn: all (every vertex with an edge,\n"
		"                        Graph500; the default) or largest (the component of the\n"
		"                        vertex of highest degree, found by an untimed search)\n"
		"      --no-warmup       skip the untimed warm-up search\n"
		"Algorithm (every optimisation can be switched off):\n"
		"      --direction D     top-down, bottom-up or auto (default auto)\n"
		"      --alpha A         to bottom-up when frontier edges > unvisited edges / A (14)\n"
		"      --beta B          back to top-down when frontier < vertices / B (24)\n"
		"      --exchange X      bitmap, list or auto (default auto)\n"
		"      --no-compress     send lists as raw offsets instead of gap + VLQ\n"
		"      --no-sv           do not share visited rows along the processor row\n"
		"      --bu-substeps     bottom-up levels of several grid columns in sub-steps, a\n"
		"                        row segment each (experimental, off by default)\n"
		"      --engine E        cpu, cuda or auto (default auto: cuda if every rank has a GPU)\n"
		"CUDA engine (the cpu engine ignores these):\n"
		"      --kernel K        top-down kernel: lb, merrill, vertex, vbfs or edge (default lb)\n"
		"      --vbfs-k K        edges per virtual vertex of --kernel vbfs (1 to 1048576; 32)\n"
		"      --gpu N           use device N (default: node-local rank modulo visible GPUs)\n"
		"      --bu-split N      bottom-up: rows with more than N entries get a warp (32)\n"
		"      --bu-kernel K     bottom-up kernel: tile (a warp takes 32 words) or word (tile)\n"
		"      --no-bu-first     bottom-up: no array of first neighbours (probe through rowptr)\n"
		"      --bu-rows N       --bu-kernel word: rows a thread scans together, 1 or 2 (1)\n"
		"      --bu-batch N      --bu-kernel word: probes a thread issues at once, 1, 2, 4, 8 (1)\n"
		"      --no-td-small     top-down: a CUB scan launch for frontiers of at most 1024\n"
		"                        columns too (default: scanned inside the expansion)\n"
		"      --no-td-lists     top-down: pass over the frontier and ROWNEXT bitmaps on\n"
		"                        levels of at most 1024 frontier columns too (default:\n"
		"                        lists of their nonzero words, on one GPU or an Rx1 grid\n"
		"                        over the peer transport)\n"
		"      --step-sync       wait for the GPU after every step, not once a level\n"
		"      --transport T     auto, mpi, nccl or peer (default auto: peer when every\n"
		"                        rank has a GPU of its own on one host and the GPUs reach\n"
		"                        each other's memory, else nccl when built in; peer and\n"
		"                        nccl need the cuda engine)\n"
		"      --dense-push      peer: send every word of each bitmap every level, not\n"
		"                        only the words that changed\n"
		"Output:\n"
		"      --dry-run         print the memory each rank needs (and whether it fits on\n"
		"                        its GPU), then exit without searching\n"
		"      --no-validate     skip the Graph500 validation of each tree\n"
		"      --validator V     where trees are validated: device (the GPU that searched;\n"
		"                        a failure is then named by the host's validator), host\n"
		"                        (the CPU validator of kvalidate) or auto (default: device\n"
		"                        with the cuda engine, host with the cpu engine)\n"
		"      --json FILE       write the run's record as JSON ('-' = stdout, no block)\n"
		"      --pred-out DIR    write DIR/pred-ROOT.txt (or .bin) per root ('-': the one\n"
		"                        root's on stdout, the report on stderr)\n"
		"      --pred-format F   text or bin (default text)\n"
		"      --depth-out DIR   write DIR/depth-ROOT.txt (\"v depth\" lines) per root\n"
		"                        ('-': the one root's on stdout)\n");
	kopt_common_help(fp);
	exit(status);
}

enum {
	O_ROOTS = 256, O_NOWARM, O_DIR, O_ALPHA, O_BETA, O_XCHG, O_NOCOMP, O_NOSV, O_ENGINE, O_NOVAL, O_JSON,
	O_PRED, O_PFMT, O_DEPTH, O_KERNEL, O_VBFSK, O_GPU, O_BUSPLIT, O_BUBATCH, O_BUROWS, O_TRANSPORT, O_DRYRUN,
	O_BUKERNEL, O_NOBUFIRST, O_STEPSYNC, O_VALIDATOR, O_NOTDSMALL, O_NOTDLISTS, O_DENSEPUSH, O_ROOTSFROM,
	O_BUSUB
};

static const struct option long_opts[] = {
	{"nroots", required_argument, 0, 'n'},    {"root", required_argument, 0, 'r'},
	{"roots", required_argument, 0, O_ROOTS}, {"no-warmup", no_argument, 0, O_NOWARM},
	{"direction", required_argument, 0, O_DIR}, {"alpha", required_argument, 0, O_ALPHA},
	{"beta", required_argument, 0, O_BETA},   {"exchange", required_argument, 0, O_XCHG},
	{"no-compress", no_argument, 0, O_NOCOMP}, {"no-sv", no_argument, 0, O_NOSV},
	{"engine", required_argument, 0, O_ENGINE}, {"no-validate", no_argument, 0, O_NOVAL},
	{"json", required_argument, 0, O_JSON},   {"pred-out", required_argument, 0, O_PRED},
	{"pred-format", required_argument, 0, O_PFMT}, {"depth-out", required_argument, 0, O_DEPTH},
	{"kernel", required_argument, 0, O_KERNEL},
	{"vbfs-k", required_argument, 0, O_VBFSK}, {"gpu", required_argument, 0, O_GPU},
	{"bu-split", required_argument, 0, O_BUSPLIT}, {"bu-batch", required_argument, 0, O_BUBATCH},
	{"bu-rows", required_argument, 0, O_BUROWS}, {"transport", required_argument, 0, O_TRANSPORT},
	{"bu-kernel", required_argument, 0, O_BUKERNEL}, {"no-bu-first", no_argument, 0, O_NOBUFIRST},
	{"step-sync", no_argument, 0, O_STEPSYNC}, {"validator", required_argument, 0, O_VALIDATOR},
	{"no-td-small", no_argument, 0, O_NOTDSMALL},
	{"no-td-lists", no_argument, 0, O_NOTDLISTS}, {"dense-push", no_argument, 0, O_DENSEPUSH},
	{"roots-from", required_argument, 0, O_ROOTSFROM}, {"bu-substeps", no_argument, 0, O_BUSUB},
	{"dry-run", no_argument, 0, O_DRYRUN},    KOPT_COMMON_LONG,
	{0, 0, 0, 0}};

int main(int argc, char **argv)
{
	klog_init(argv[0]);
	kbfs_opts o;
	kbfs_opts_default(&o);
	o.argc = argc;
	o.argv = argv;
	kgpu_opts gpu;
	kgpu_opts_default(&gpu);
	uint64_t *roots = NULL;
	size_t nroots = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":n:r:" KOPT_COMMON_SHORT, long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.nroots = (int)kopt_u64("--nroots", optarg, 1, 1 << 20);
			o.nroots_set = 1;
			break;
		case 'r':
			roots = krealloc(roots, (nroots + 1) * sizeof *roots);
			roots[nroots++] = kopt_u64("--root", optarg, 0, UINT64_MAX);
			break;
		case O_ROOTS: o.roots_file = optarg; break;
		case O_ROOTSFROM: o.roots_from = kopt_choice("--roots-from", optarg, kbfs_roots_from_names); break;
		case O_NOWARM: o.warmup = 0; break;
		case O_DIR: o.algo.direction = kopt_choice("--direction", optarg, kbfs_dir_names); break;
		case O_ALPHA: o.algo.alpha = kopt_double("--alpha", optarg, 1e-9, 1e18); break;
		case O_BETA: o.algo.beta = kopt_double("--beta", optarg, 1e-9, 1e18); break;
		case O_XCHG: o.algo.exchange = kopt_choice("--exchange", optarg, kbfs_xmode_names); break;
		case O_NOCOMP: o.algo.compress = 0; break;
		case O_NOSV: o.algo.sv = 0; break;
		case O_BUSUB: o.algo.bu_substeps = 1; break;
		case O_ENGINE: o.engine = kopt_choice("--engine", optarg, kdev_engine_names); break;
		case O_NOVAL: o.validate = 0; break;
		case O_VALIDATOR: o.validator = kopt_choice("--validator", optarg, kbfs_validator_names); break;
		case O_JSON: o.json = optarg; break;
		case O_PRED: o.pred_out = optarg; break;
		case O_PFMT: o.pred_binary = kopt_choice("--pred-format", optarg, kbfs_pred_format_names); break;
		case O_DEPTH: o.depth_out = optarg; break;
		case O_KERNEL:
			gpu.kernel = kgpu_kernel_parse(optarg);
			if (gpu.kernel < 0)
				kopt_usage_error("--kernel: '%s' is not one of %s", optarg, kgpu_kernel_names());
			break;
		case O_VBFSK: gpu.vbfs_k = (int)kopt_u64("--vbfs-k", optarg, 1, 1 << 20); break;
		case O_GPU: gpu.gpu = (int)kopt_u64("--gpu", optarg, 0, 1 << 16); break;
		case O_BUSPLIT: gpu.bu_split = (int)kopt_u64("--bu-split", optarg, 0, 1 << 20); break;
		case O_BUBATCH:
			gpu.bu_batch = (int)kopt_u64("--bu-batch", optarg, 1, 8);
			if (gpu.bu_batch & (gpu.bu_batch - 1))
				kopt_usage_error("--bu-batch: '%s' is not 1, 2, 4 or 8", optarg);
			break;
		case O_BUROWS: gpu.bu_rows = (int)kopt_u64("--bu-rows", optarg, 1, 2); break;
		case O_BUKERNEL:
			gpu.bu_kernel = kgpu_bu_kernel_parse(optarg);
			if (gpu.bu_kernel < 0)
				kopt_usage_error("--bu-kernel: '%s' is not one of tile, word", optarg);
			break;
		case O_NOBUFIRST: gpu.bu_first = 0; break;
		case O_STEPSYNC: gpu.step_sync = 1; break;
		case O_NOTDSMALL: gpu.td_small = 0; break;
		case O_NOTDLISTS: gpu.td_lists = 0; break;
		case O_DENSEPUSH: gpu.dense_push = 1; break;
		case O_TRANSPORT: o.transport = kopt_choice("--transport", optarg, kbfs_transport_names); break;
		case O_DRYRUN: o.dry_run = 1; break;
		default: kopt_common(c, argv, &o.threads, usage);
		}
	}
	if (optind >= argc)
		kopt_usage_error("give the partition directory (made by kpart)");
	if (argc - optind > 1)
		kopt_usage_error("one partition directory at a time");
	if (o.nroots_set && (nroots || o.roots_file))
		kopt_usage_error("-n draws roots; it cannot be combined with -r or --roots");
	if (o.roots_from != KBFS_ROOTS_ALL && (nroots || o.roots_file))
		kopt_usage_error("--roots-from draws roots; it cannot be combined with -r or --roots");
	if (o.depth_out && o.pred_out && !strcmp(o.depth_out, "-") && !strcmp(o.pred_out, "-"))
		kopt_usage_error("--depth-out - and --pred-out - would share standard output: give one a directory");
	if (o.json && !strcmp(o.json, "-") &&
	    ((o.depth_out && !strcmp(o.depth_out, "-")) || (o.pred_out && !strcmp(o.pred_out, "-"))))
		kopt_usage_error("--json - and a file to standard output ('-') exclude each other");
	const kopt_file outs[] = {{"--json", o.json, NULL}, {"--pred-out", o.pred_out, "pred-"},
				  {"--depth-out", o.depth_out, "depth-"}},
			ins[] = {{"the partition", argv[optind], ""}, {"--roots", o.roots_file, NULL}};
	kopt_check_files(outs, 3, ins, 2);
	if (o.engine == KDEV_ENGINE_CPU && (o.transport == KBFS_TRANSPORT_NCCL || o.transport == KBFS_TRANSPORT_PEER))
		kopt_usage_error("--transport %s needs the CUDA engine (not --engine cpu)",
				 kbfs_transport_names[o.transport]);
	/* the NCCL transport's peer-to-peer levels: wherever they can run
	 * (auto), required (peer), or not at all */
	gpu.peer = o.transport == KBFS_TRANSPORT_PEER ? 2 : o.transport == KBFS_TRANSPORT_AUTO ? 1 : 0;
	if (o.engine == KDEV_ENGINE_CPU && o.validator == KBFS_VAL_DEVICE)
		kopt_usage_error("--validator device needs the CUDA engine (not --engine cpu)");
	/* the engine keeps the tree check's arrays only when it will be used */
	gpu.validate = o.validate && o.validator != KBFS_VAL_HOST;
	o.verbose = klog_verbose();
	o.roots = roots;
	o.nroots_given = nroots;
	if (!o.threads)
		kopt_env_threads(); /* a bad OMP_NUM_THREADS is a usage error before MPI starts */
	kcomm *world = kcomm_init(&argc, &argv, 0);
	kbfs_device dev;
	kbfs_gpu_device(&dev, &gpu);
	int rc = kbfs_main(world, argv[optind], &o, &dev);
	int rc2 = kcomm_rank(world) == 0 ? kio_close_stdout() : 0;
	kcomm_finalize();
	free(roots);
	return rc ? rc : rc2;
}

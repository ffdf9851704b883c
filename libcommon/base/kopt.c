#include "kopt.h"
#include "kbuild.h"
#include "kfs.h"
#include "kio.h"
#include "klog.h"
#include "knum.h"
#include "kprov.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int kopt_parse_u64(const char *arg, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *end;
	uint64_t v;
	if (!arg || knum_u64(arg, &end, &v) != KNUM_OK || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int kopt_parse_i64(const char *arg, int64_t lo, int64_t hi, int64_t *out)
{
	const char *end;
	int64_t v;
	if (!arg || knum_i64(arg, &end, &v) != KNUM_OK || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int kopt_parse_double(const char *arg, double lo, double hi, double *out)
{
	const char *end;
	double v;
	if (!arg || knum_double(arg, &end, &v) != KNUM_OK || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

uint64_t kopt_u64(const char *opt, const char *arg, uint64_t lo, uint64_t hi)
{
	uint64_t v;
	if (kopt_parse_u64(arg, lo, hi, &v))
		kopt_usage_error("%s: '%s' is not a whole number from %llu to %llu", opt, arg ? arg : "",
				 (unsigned long long)lo, (unsigned long long)hi);
	return v;
}

int64_t kopt_i64(const char *opt, const char *arg, int64_t lo, int64_t hi)
{
	int64_t v;
	if (kopt_parse_i64(arg, lo, hi, &v))
		kopt_usage_error("%s: '%s' is not a whole number from %lld to %lld", opt, arg ? arg : "",
				 (long long)lo, (long long)hi);
	return v;
}

double kopt_double(const char *opt, const char *arg, double lo, double hi)
{
	double v;
	if (kopt_parse_double(arg, lo, hi, &v))
		kopt_usage_error("%s: '%s' is not a number from %g to %g", opt, arg ? arg : "", lo, hi);
	return v;
}

/* a file that can clash: not "-", nor a pipe or a device */
static int clashable(const kopt_file *f)
{
	struct stat st;
	return f->path && strcmp(f->path, "-") && (stat(f->path, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

/* f is an entry of the output directory d that d's files would replace */
static int under(const kopt_file *f, const kopt_file *d)
{
	const char *base = strrchr(f->path, '/');
	base = base ? base + 1 : f->path;
	return d->prefix && !strncmp(base, d->prefix, strlen(d->prefix)) && kfs_in_dir(f->path, d->path);
}

void kopt_check_files(const kopt_file *out, size_t nout, const kopt_file *in, size_t nin)
{
	for (size_t k = 0; k < nout; k++) {
		const kopt_file *o = &out[k];
		if (!clashable(o))
			continue;
		for (size_t j = 0; j < nin; j++) {
			const kopt_file *i = &in[j];
			struct stat st;
			if (!clashable(i))
				continue;
			if (kfs_same(o->path, i->path))
				kopt_usage_error("%s '%s' is %s '%s': an output may not replace an input", o->opt, o->path,
						 i->opt, i->path);
			if (!o->prefix && i->prefix && !stat(i->path, &st) && S_ISDIR(st.st_mode) &&
			    kfs_in_dir(o->path, i->path))
				kopt_usage_error("%s '%s' is inside %s '%s': an output may not go into an input", o->opt,
						 o->path, i->opt, i->path);
			if (under(i, o))
				kopt_usage_error("%s '%s' would replace %s '%s' (an input)", o->opt, o->path, i->opt,
						 i->path);
		}
		for (size_t j = k + 1; j < nout; j++) {
			const kopt_file *p = &out[j];
			if (!clashable(p))
				continue;
			if ((!o->prefix || !p->prefix || !strcmp(o->prefix, p->prefix)) && kfs_same(o->path, p->path))
				kopt_usage_error("%s '%s' and %s '%s' are the same file", o->opt, o->path, p->opt, p->path);
			if (under(p, o) || under(o, p))
				kopt_usage_error("%s '%s' and %s '%s' would write the same file", o->opt, o->path, p->opt,
						 p->path);
		}
	}
}

int kopt_choice(const char *opt, const char *arg, const char *const *choices)
{
	char list[512] = "";
	for (int i = 0; choices[i]; i++) {
		if (!strcmp(arg, choices[i]))
			return i;
		if (i)
			strncat(list, ", ", sizeof list - strlen(list) - 1);
		strncat(list, choices[i], sizeof list - strlen(list) - 1);
	}
	kopt_usage_error("%s: '%s' is not one of %s", opt, arg, list);
}

void kopt_version(FILE *fp)
{
	fprintf(fp, "%s (kbfs) %s\n", klog_prog(), KBFS_VERSION);
	fprintf(fp, "commit: %s\n", kprov_commit());
	fprintf(fp, "features: cuda=%s mpi=%s nccl=%s zlib=yes openmp=%s\n",
		KBUILD_CUDA ? "yes" : "no", KBUILD_MPI ? "yes" : "no", KBUILD_NCCL ? "yes" : "no",
#ifdef _OPENMP
		"yes"
#else
		"no"
#endif
	);
}

void kopt_common_help(FILE *fp)
{
	fputs("Common options:\n"
	      "  -q, --quiet          no progress or warnings on stderr\n"
	      "  -v, --verbose        more detail on stderr\n"
	      "      --threads N      OpenMP threads, 1 to 4096 (default: OMP_NUM_THREADS, else\n"
	      "                       the cores this process may use, shared by the ranks on\n"
	      "                       its host)\n"
	      "  -h, --help           print this help and exit\n"
	      "  -V, --version        print version, commit and build features and exit\n"
	      "Exit status: 0 success, 1 data error or failed validation, 2 usage error,\n"
	      "3 I/O error, 4 out of memory or device error.\n",
	      fp);
}

_Noreturn void kopt_usage_error(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	kerror("%s", buf);
	fprintf(stderr, "Try '%s --help' for more information.\n", klog_prog());
	exit(KEXIT_USAGE);
}

void kopt_set_threads(int n)
{
#ifdef _OPENMP
	if (n > 0)
		omp_set_num_threads(n);
#else
	(void)n;
#endif
}

int kopt_max_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

int kopt_check_affinity(void)
{
	int threads = kopt_max_threads();
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set))
		return 0;
	int cpus = CPU_COUNT(&set);
	if (cpus <= 0 || threads <= cpus)
		return 0;
	kwarn("%d OpenMP threads share %d CPU%s (this process's affinity mask): under mpirun, add "
	      "--bind-to none or --map-by slot:PE=%d",
	      threads, cpus, cpus == 1 ? "" : "s", threads);
	return 1;
}

void kopt_common(int c, char **argv, int *threads, void (*usage)(FILE *, int))
{
	/* getopt_long has passed the option it complains about when it is a
	 * long one ("--x", "--x=v"); a short one may sit inside "-ab" */
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	int is_long = !strncmp(arg, "--", 2);
	switch (c) {
	case 'q': klog_set_quiet(1); return;
	case 'v': klog_set_verbose(1); return;
	case KOPT_THREADS: *threads = (int)kopt_u64("--threads", optarg, 1, KOPT_MAX_THREADS); return;
	case 'h': usage(stdout, 0); exit(0);
	case 'V': kopt_version(stdout); exit(kio_close_stdout());
	case ':':
		if (is_long)
			kopt_usage_error("option '%s' needs a value", arg);
		kopt_usage_error("option '-%c' needs a value", optopt);
	default:
		if (is_long && optopt)
			kopt_usage_error("option '%.*s' takes no value", (int)strcspn(arg, "="), arg);
		if (is_long)
			kopt_usage_error("unrecognized option '%s'", arg);
		kopt_usage_error("unrecognized option '-%c'", optopt);
	}
}

int kopt_local_ranks(void)
{
	const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	if (!ls)
		ls = getenv("MPI_LOCALNRANKS");
	uint64_t n;
	return ls && !kopt_parse_u64(ls, 1, 1 << 20, &n) ? (int)n : 1;
}

int kopt_env_threads(void)
{
	const char *v = getenv("OMP_NUM_THREADS");
	if (!v || !*v)
		return 0;
	/* a number, or a list of them (one per nesting level), blanks around
	 * each allowed, as OpenMP reads it: each bounded.  What OpenMP cannot
	 * read it ignores, after its own warning: so do we. */
	uint64_t first = 0, big = 0;
	for (const char *p = v;;) {
		const char *end;
		uint64_t n = 0;
		int t = knum_u64(p + strspn(p, " \t"), &end, &n);
		end += strspn(end, " \t");
		if (t != KNUM_OK || (*end && *end != ',') || n == 0)
			return 0;
		big |= n > KOPT_MAX_THREADS;
		if (!first)
			first = n;
		if (!*end)
			break;
		p = end + 1;
	}
	if (big)
		kopt_usage_error("OMP_NUM_THREADS: '%s' is more than %d threads", v, KOPT_MAX_THREADS);
	return (int)first;
}

int kopt_threads(int want, int local_ranks)
{
	int n = want > 0 ? want : kopt_env_threads();
	if (n <= 0) {
		int cpus = kopt_max_threads(); /* the cores this process may use */
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		n = cpus < online ? cpus : cpus / (local_ranks > 0 ? local_ranks : 1);
		if (n < 1)
			n = 1;
	}
	if (n > 0)
		kopt_set_threads(n);
	return kopt_max_threads();
}

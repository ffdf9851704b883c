/*
 * kopt: the option kit shared by every program.
 *
 * Owns checked number parsing (the whole string a decimal number of knum.h,
 * in range, no sign where a count is expected), the options every program shares (-q, -v, --threads, -h, -V:
 * one block for getopt_long, one handler, one help text), the wording of
 * getopt's errors, the default thread count and the --version text listing
 * build features.  A bad value is a usage error: kopt_* print "prog:
 * OPTION: 'VALUE' is not ..." and exit 2.
 *
 * A program's parser:
 *     static const struct option opts[] = {{"json", ...}, ..., KOPT_COMMON_LONG, {0, 0, 0, 0}};
 *     while ((c = getopt_long(argc, argv, ":o:" KOPT_COMMON_SHORT, opts, NULL)) != -1)
 *             switch (c) {
 *             case 'o': ...; break;
 *             default: kopt_common(c, argv, &threads, usage);
 *             }
 * The short-option string starts with ':' (getopt then tells a missing
 * value from an unknown option and prints nothing itself).
 */
#ifndef KOPT_H
#define KOPT_H

#include <stdint.h>
#include <stdio.h>

#ifndef KBFS_VERSION
#define KBFS_VERSION "0.1.0"
#endif

/* Parse a decimal number (knum.h: "010" is ten; no sign, blank or base
 * prefix) in [lo, hi]; dies with exit 2 naming opt. */
uint64_t kopt_u64(const char *opt, const char *arg, uint64_t lo, uint64_t hi);
int64_t kopt_i64(const char *opt, const char *arg, int64_t lo, int64_t hi);
double kopt_double(const char *opt, const char *arg, double lo, double hi);
/* Same checks, returning 0 on success and -1 (no message) on a bad value:
 * for environment variables and numbers in files. */
int kopt_parse_u64(const char *arg, uint64_t lo, uint64_t hi, uint64_t *out);
int kopt_parse_i64(const char *arg, int64_t lo, int64_t hi, int64_t *out);
int kopt_parse_double(const char *arg, double lo, double hi, double *out);
/* A file a program is given: opt names it in messages ("-o", "--map",
 * "the input"); path NULL when not given.  An output directory has the
 * prefix of the files written in it ("pred-"); an input that may be a
 * directory of inputs (a partition) has "", and no output may go into it;
 * a file, NULL. */
typedef struct kopt_file {
	const char *opt, *path, *prefix;
} kopt_file;
/* Usage error (exit 2) naming both when an output is an input, is inside
 * an input directory (a partition), is the same file as another output,
 * or is a file an output directory's files would replace: an output may
 * never destroy an input or another output.  "-", pipes and devices
 * (/dev/null) never clash. */
void kopt_check_files(const kopt_file *out, size_t nout, const kopt_file *in, size_t nin);
/* Index of arg in the NULL-terminated list, or die with exit 2. */
int kopt_choice(const char *opt, const char *arg, const char *const *choices);

/* ---- the shared options ---- */
enum { KOPT_THREADS = 0x4000 }; /* --threads' code, above every program's own */
#define KOPT_MAX_THREADS 4096       /* the most threads --threads and OMP_NUM_THREADS may ask for */
#define KOPT_COMMON_SHORT "qvhV"
#define KOPT_COMMON_LONG                                                                                         \
	{"quiet", no_argument, 0, 'q'}, {"verbose", no_argument, 0, 'v'},                                     \
		{"threads", required_argument, 0, KOPT_THREADS}, {"help", no_argument, 0, 'h'},               \
		{"version", no_argument, 0, 'V'}
/* Handle c, a code getopt_long returned that the program's own switch does
 * not take: -q, -v (klog), --threads N (into *threads, 1 to KOPT_MAX_THREADS), -h
 * (usage(stdout, 0)), -V (version, exit), and getopt's ':' and '?' as usage
 * errors: "prog: option '--x' needs a value", "prog: option '--x' takes no
 * value", "prog: unrecognized option '--x'" (exit 2).  argv is main's. */
void kopt_common(int c, char **argv, int *threads, void (*usage)(FILE *, int));

/* "prog (kbfs) 0.1.0\nfeatures: cuda=yes mpi=yes nccl=yes zlib=yes openmp=yes\n" */
void kopt_version(FILE *fp);
/* The help lines for the options every program shares. */
void kopt_common_help(FILE *fp);
/* Usage error: "prog: msg" + "Try 'prog --help'." and exit 2. */
_Noreturn void kopt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set the OpenMP thread count (0 = leave the default). */
void kopt_set_threads(int n);
int kopt_max_threads(void);
/* OMP_NUM_THREADS, bounded as --threads is: an entry of its list beyond
 * KOPT_MAX_THREADS is a usage error naming it (exit 2; OpenMP would start
 * 100000 threads, and crash).  Its first entry, or 0 when it is unset,
 * empty or what OpenMP ignores too (not a list of whole numbers, a 0). */
int kopt_env_threads(void);
/* The one default-thread rule, set for this process: want when > 0; else
 * OMP_NUM_THREADS's (kopt_env_threads) when set; else the CPUs this process may run on when
 * it is bound to fewer than the host has; else the host's cores divided
 * among the local_ranks processes of the job on it (at least 1).  Returns
 * the thread count now in force. */
int kopt_threads(int want, int local_ranks);
/* Processes of this job on this host as the launcher says
 * (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS), else 1: for programs that
 * set their threads before MPI starts. */
int kopt_local_ranks(void);
/* Warn when more OpenMP threads than the CPUs of this process's affinity
 * mask will run, as after mpirun's default bind-to-core with
 * OMP_NUM_THREADS set; returns 1 when it warned. */
int kopt_check_affinity(void);

#endif

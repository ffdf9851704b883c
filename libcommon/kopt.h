/*
 * kopt: the option kit shared by every program.
 *
 * Owns checked number parsing (whole string, range, no sign where a count is
 * expected), the shared long options (--help, --version, -q, -v, --json,
 * --threads, --force, -o) and the --version text listing build features.
 * A bad value is a usage error: kopt_* print "prog: OPTION: 'VALUE' is not
 * ..." and exit 2.
 */
#ifndef KOPT_H
#define KOPT_H

#include <stdint.h>
#include <stdio.h>

#ifndef KBFS_VERSION
#define KBFS_VERSION "0.1.0"
#endif

/* Parse an unsigned integer in [lo, hi]; dies with exit 2 naming opt. */
uint64_t kopt_u64(const char *opt, const char *arg, uint64_t lo, uint64_t hi);
int64_t kopt_i64(const char *opt, const char *arg, int64_t lo, int64_t hi);
double kopt_double(const char *opt, const char *arg, double lo, double hi);
/* Same checks, returning 0 on success and -1 (no message) on a bad value. */
int kopt_parse_u64(const char *arg, uint64_t lo, uint64_t hi, uint64_t *out);
int kopt_parse_i64(const char *arg, int64_t lo, int64_t hi, int64_t *out);
/* Index of arg in the NULL-terminated list, or die with exit 2. */
int kopt_choice(const char *opt, const char *arg, const char *const *choices);

/* "prog (kbfs) 0.1.0\nfeatures: cuda=yes mpi=yes nccl=yes zlib=yes openmp=yes\n" */
void kopt_version(FILE *fp);
/* The help lines for the options every program shares. */
void kopt_common_help(FILE *fp);
/* Usage error: "prog: msg" + "Try 'prog --help'." and exit 2. */
_Noreturn void kopt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set the OpenMP thread count (0 = leave the default). */
void kopt_set_threads(int n);
int kopt_max_threads(void);
/* Warn when more OpenMP threads than the CPUs of this process's affinity
 * mask will run, as after mpirun's default bind-to-core with
 * OMP_NUM_THREADS set; returns 1 when it warned. */
int kopt_check_affinity(void);

#endif

/*
 * klog: messages and exit codes for every kbfs program (checked allocation
 * is kmem.h).
 *
 * Owns the program name, the MPI rank prefix and the exit-code contract
 * (documented in kbfs(7) and every man page's EXIT STATUS):
 *   0 success, 1 data error or failed validation, 2 usage error,
 *   3 I/O error, 4 resource error (memory, device).
 * Messages are one line: "prog: message" or, under MPI with more than one
 * rank, "prog[rank N]: message".  Library functions report a problem with
 * kerror() and return the exit code to their caller; only programs and the
 * allocation helpers (kmem.h) call kdie().  kdie() runs the registered
 * cleanup hooks (temporary files are removed) and, under MPI, aborts the
 * whole job.
 */
#ifndef KLOG_H
#define KLOG_H

#include <stddef.h>
#include <stdint.h>

enum {
	KEXIT_OK = 0,
	KEXIT_DATA = 1,
	KEXIT_USAGE = 2,
	KEXIT_IO = 3,
	KEXIT_RESOURCE = 4,
};

void klog_init(const char *prog);
const char *klog_prog(void);
void klog_set_rank(int rank, int size);
void klog_set_quiet(int quiet);
void klog_set_verbose(int verbose);
int klog_verbose(void);
int klog_quiet(void);
/* 1 if stderr is a terminal and not quiet: progress may be shown (under
 * an MPI launcher, kcomm_progress_ok says). */
int klog_progress_ok(void);

/* "prog: msg" on stderr */
void kerror(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: warning: msg" on stderr unless quiet */
void kwarn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: msg" on stderr only when verbose */
void kinfo(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: msg" on stderr unless quiet (a summary line) */
void knote(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* print, run cleanups, exit (or MPI_Abort through the hook) */
_Noreturn void kdie(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* internal impossibility: message with file:line, abort() */
_Noreturn void kbug_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define KBUG(...) kbug_at(__FILE__, __LINE__, __VA_ARGS__)
#define KASSERT(c) do { if (!(c)) KBUG("assertion failed: %s", #c); } while (0)

/* Cleanup run by kdie() and on fatal signals (e.g. remove temporaries). */
void klog_atdie(void (*fn)(void));
/* Replaces exit() in kdie(); kcomm installs one that calls MPI_Abort. */
void klog_set_exit_hook(void (*fn)(int code));
/* Run cleanups now (used by fatal signal handlers and the exit hook). */
void klog_run_cleanups(void);

/* While a file is mapped: a SIGBUS at an address in [base, base+len) (the
 * file cut short under the mapping by another process) prints the line
 * fmt makes (formatted now, as kerror() would print it), runs the cleanups
 * and ends the process with KEXIT_DATA, instead of a crash; a SIGBUS
 * elsewhere is left as it was.  One range at a time: a new call replaces
 * it, klog_guard_clear() removes it. */
void klog_guard_map(const void *base, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Whether a mapping is guarded now (one at a time). */
int klog_guard_active(void);
/* klog_guard_clear when base is the guarded mapping's. */
void klog_guard_clear_if(const void *base);
void klog_guard_clear(void);

/* Seconds from a monotonic clock. */
double ktime(void);

#endif

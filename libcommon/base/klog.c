#define _POSIX_C_SOURCE 200809L
#include "klog.h"
#include "kutf8.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *prog_name = "kbfs";
static int log_rank = 0, log_size = 1;
static int log_quiet, log_verbose;
static void (*cleanups[16])(void);
static int ncleanups;
static void (*exit_hook)(int);
/* The thread running the cleanups (its kernel thread id), 0 when none:
 * lock-free, so the signal handler may use it. */
static atomic_long cleaner;

static void on_signal(int sig)
{
	klog_run_cleanups();
	signal(sig, SIG_DFL);
	raise(sig);
}

void klog_init(const char *prog)
{
	const char *slash = strrchr(prog, '/');
	prog_name = slash ? slash + 1 : prog;
	/* a closed pipe downstream ends us quietly */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
}

const char *klog_prog(void) { return prog_name; }
void klog_set_rank(int rank, int size) { log_rank = rank; log_size = size; }
void klog_set_quiet(int q) { log_quiet = q; }
void klog_set_verbose(int v) { log_verbose = v; }
int klog_verbose(void) { return log_verbose; }
int klog_quiet(void) { return log_quiet; }

/* msg's bytes as one line that is safe on a terminal: control characters
 * (C0, DEL, C1), a newline among them, and bytes that are not UTF-8 become
 * \xNN, so input quoted in a message (a file name, a token) can neither
 * drive the terminal nor split the line. */
static size_t escape(const char *msg, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)msg;
	size_t n = strlen(msg), o = 0;
	for (size_t i = 0; i < n && o + 5 < cap;) {
		size_t len = kutf8_seq(p + i, n - i);
		int c1 = len == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0;
		if (len && !c1 && p[i] >= 0x20 && p[i] != 0x7f) {
			if (o + len >= cap)
				break;
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
			continue;
		}
		for (size_t k = 0; k < (c1 ? 2u : 1u); k++, i++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 15];
		}
	}
	out[o] = 0;
	return o;
}

/* The line "prog[rank r]: KIND msg\n" in buf[4096]: its length. */
static size_t line(char *buf, const char *kind, const char *fmt, va_list ap)
{
	enum { CAP = 4096 };
	char msg[2048];
	int n;
	if (log_size > 1)
		n = snprintf(buf, CAP, "%s[rank %d]: %s", prog_name, log_rank, kind);
	else
		n = snprintf(buf, CAP, "%s: %s", prog_name, kind);
	if (n < 0 || (size_t)n >= CAP)
		n = 0;
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t len = (size_t)n + escape(msg, buf + n, CAP - (size_t)n - 1);
	buf[len++] = '\n';
	buf[len] = 0;
	return len;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char buf[4096];
	size_t len = line(buf, kind, fmt, ap);
	/* one write, so lines from several ranks do not interleave */
	fflush(stdout);
	if (write(STDERR_FILENO, buf, len) < 0) {
		/* nothing sensible left to do */
	}
}

/* klog_guard_map: the mapped range and the line its SIGBUS prints */
static const char *guard_lo, *guard_hi;
static char guard_line[4096];
static size_t guard_len;
static struct sigaction guard_old;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	/* the kernel's (si_code > 0: a fault, si_addr its address), not a kill */
	const char *a = si && si->si_code > 0 ? (const char *)si->si_addr : NULL;
	if (!a || a < guard_lo || a >= guard_hi) {
		/* not the guarded file's: the signal as it would have been */
		sigaction(sig, &guard_old, NULL);
		raise(sig);
		return;
	}
	if (write(STDERR_FILENO, guard_line, guard_len) < 0) {
		/* nothing sensible left to do */
	}
	klog_run_cleanups();
	_exit(KEXIT_DATA);
}

void klog_guard_clear(void)
{
	if (guard_lo) {
		sigaction(SIGBUS, &guard_old, NULL);
		guard_lo = guard_hi = NULL;
	}
}

int klog_guard_active(void) { return guard_lo != NULL; }

void klog_guard_clear_if(const void *base)
{
	if (base && guard_lo == base)
		klog_guard_clear();
}

void klog_guard_map(const void *base, size_t len, const char *fmt, ...)
{
	klog_guard_clear();
	if (!base || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	guard_len = line(guard_line, "", fmt, ap);
	va_end(ap);
	guard_lo = base;
	guard_hi = (const char *)base + len;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &guard_old);
}

void kerror(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void kwarn(const char *fmt, ...)
{
	if (log_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void knote(const char *fmt, ...)
{
	if (log_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void kinfo(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void klog_atdie(void (*fn)(void))
{
	for (int i = 0; i < ncleanups; i++)
		if (cleanups[i] == fn)
			return;
	if (ncleanups < (int)(sizeof cleanups / sizeof cleanups[0]))
		cleanups[ncleanups++] = fn;
}

void klog_set_exit_hook(void (*fn)(int)) { exit_hook = fn; }

/* Once at a time.  A second fatal signal can land in another thread while
 * the first one's handler still removes the temporaries (timeout(1) sends
 * SIGTERM to the process and again to its group): that thread waits for
 * the cleanups to end before the signal ends the process, as does one
 * that dies (kdie) meanwhile; a signal inside the cleaner's own cleanups
 * returns to them.  Only system calls and lock-free atomics: the handler
 * calls this. */
void klog_run_cleanups(void)
{
	const long me = (long)syscall(SYS_gettid);
	long none = 0;
	if (!atomic_compare_exchange_strong(&cleaner, &none, me)) {
		if (none == me)
			return;
		/* at most ~60 s: a cleaner that never ends must not hold the exit */
		struct timespec nap = {0, 1000000};
		for (int k = 0; k < 60000 && atomic_load(&cleaner); k++)
			nanosleep(&nap, NULL);
		return;
	}
	for (int i = ncleanups - 1; i >= 0; i--)
		cleanups[i]();
	atomic_store(&cleaner, 0);
}

_Noreturn void kdie(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	klog_run_cleanups();
	if (exit_hook)
		exit_hook(code);
	exit(code);
}

_Noreturn void kbug_at(const char *file, int line, const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	kerror("BUG at %s:%d: %s", file, line, what);
	klog_run_cleanups();
	abort();
}

double ktime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int klog_progress_ok(void) { return !log_quiet && isatty(STDERR_FILENO); }

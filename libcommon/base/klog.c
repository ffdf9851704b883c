#define _POSIX_C_SOURCE 200809L
#include "klog.h"
#include "kutf8.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *prog_name = "kbfs";
static int log_rank = 0, log_size = 1;
static int log_quiet, log_verbose;
static void (*cleanups[16])(void);
static int ncleanups;
static void (*exit_hook)(int);
static volatile sig_atomic_t in_cleanup;

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

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char msg[2048], buf[4096];
	int n;
	if (log_size > 1)
		n = snprintf(buf, sizeof buf, "%s[rank %d]: %s", prog_name, log_rank, kind);
	else
		n = snprintf(buf, sizeof buf, "%s: %s", prog_name, kind);
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	vsnprintf(msg, sizeof msg, fmt, ap);
	/* one write, so lines from several ranks do not interleave */
	size_t len = (size_t)n + escape(msg, buf + n, sizeof buf - (size_t)n - 1);
	buf[len++] = '\n';
	buf[len] = 0;
	fflush(stdout);
	if (write(STDERR_FILENO, buf, len) < 0) {
		/* nothing sensible left to do */
	}
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

void klog_run_cleanups(void)
{
	if (in_cleanup)
		return;
	in_cleanup = 1;
	for (int i = ncleanups - 1; i >= 0; i--)
		cleanups[i]();
	in_cleanup = 0;
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

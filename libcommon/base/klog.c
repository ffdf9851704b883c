#define _POSIX_C_SOURCE 200809L
#include "klog.h"
#include "kjson.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
		size_t len = kjson_utf8_seq(p + i, n - i);
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

/* A block of 64 MiB or more asks for transparent huge pages (where the
 * kernel gives them on request, its "madvise" mode): the first write to
 * it then faults once per 2 MiB instead of once per 4 KiB -- the partition
 * arrays of a large graph are gigabytes of fresh memory, written once.
 * KBFS_HUGEPAGES=0 leaves the kernel's default (the ablation). */
static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t hp = (uintptr_t)2 << 20;
	if (n < 32 * hp)
		return;
	const char *v = getenv("KBFS_HUGEPAGES");
	if (v && !strcmp(v, "0"))
		return;
	uintptr_t a = ((uintptr_t)p + hp - 1) & ~(hp - 1), b = ((uintptr_t)p + n) & ~(hp - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
#else
	(void)p;
	(void)n;
#endif
}

void *kmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu bytes", n);
	advise_huge(p, n);
	return p;
}

void *kcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *krealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu bytes", n);
	return q;
}

char *kstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = kmalloc(n);
	memcpy(d, s, n);
	return d;
}

size_t kmul(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m)
		kdie(KEXIT_RESOURCE, "size overflow: %zu x %zu", n, m);
	return n * m;
}

double ktime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* tap.h: a tiny TAP producer for the C unit tests (header only). */
#ifndef TAP_H
#define TAP_H
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
static inline int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static inline int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return pass;
}
#define is_u64(got, want, ...) \
	do { \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want); \
		if (!ok(g_ == w_, __VA_ARGS__)) \
			printf("#   got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")\n", g_, g_, w_, w_); \
	} while (0)
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
static inline void tap_diag(const char *s) { printf("# %s\n", s); }
/* a xorshift64 sequence, the same in every run */
static inline uint64_t tap_rand(void)
{
	static uint64_t s = 88172645463325252ull;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}
/* 1 when files a and b exist and hold the same bytes */
static inline int tap_same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb;
	for (int ca = 0, cb = 0; same && ca != EOF; same = ca == cb) {
		ca = getc(fa);
		cb = getc(fb);
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}
/* What a call expected to fail writes on standard error, kept off the TAP
 * output so that it cannot read as a failure: tap_stderr_begin() sends
 * stderr to a temporary file, tap_stderr_end(buf, len) puts it back and
 * copies what was written (NUL-terminated, cut to len - 1 bytes) into buf. */
#include <unistd.h>
static FILE *tap_err_file;
static int tap_err_saved = -1;
static inline void tap_stderr_begin(void)
{
	fflush(stderr);
	tap_err_file = tmpfile();
	tap_err_saved = dup(2);
	if (tap_err_file)
		dup2(fileno(tap_err_file), 2);
}
static inline void tap_stderr_end(char *buf, size_t len)
{
	fflush(stderr);
	if (tap_err_saved >= 0) {
		dup2(tap_err_saved, 2);
		close(tap_err_saved);
		tap_err_saved = -1;
	}
	size_t n = 0;
	if (tap_err_file) {
		rewind(tap_err_file);
		n = fread(buf, 1, len - 1, tap_err_file);
		fclose(tap_err_file);
		tap_err_file = NULL;
	}
	buf[n] = 0;
}
#endif

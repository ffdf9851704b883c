/* test_kio: kio_crc32 (split among threads for large buffers) against a
 * bit-at-a-time CRC-32 written here, for sizes around the split threshold,
 * chained calls and thread counts 1 to 7; kio_crc32_combine; the line
 * reader on '\r' endings (a last line "x\r" without '\n' once looped
 * forever), its line cap, and standard input that starts inside a file;
 * kio_map between buffered reads. */
#include "kio.h"
#include "klog.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* The lines of a file holding bytes, joined with '|', at most 16 reads (a
 * reader that stops consuming would loop forever); the last KEXIT code. */
static int lines_of(const char *bytes, size_t n, char *out, size_t cap)
{
	char path[] = "/tmp/test_kio.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, bytes, n) != (ssize_t)n)
		return -1;
	close(fd);
	kio_in *in = kio_open_in(path, 1);
	size_t len, o = 0;
	int err = 0;
	char *l;
	out[0] = 0;
	for (int k = 0; k < 16 && (l = kio_getline(in, &len, &err)); k++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", k ? "|" : "", l);
	kio_close_in(in);
	unlink(path);
	return err;
}

static void check_lines(void)
{
	char got[256];
	static const struct { const char *in; size_t n; const char *want; } c[] = {
		{"\r", 1, ""},
		{"a\r", 2, "a"},
		{"a\r\nb\r", 5, "a|b"},
		{"a\nb", 3, "a|b"},
		{"a\r\r", 3, "a\r"},
		{"\r\n\r\n", 4, "|"},
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		int rc = lines_of(c[k].in, c[k].n, got, sizeof got);
		ok(rc == 0 && !strcmp(got, c[k].want), "kio_getline: case %zu gives '%s' (got '%s')", k, c[k].want, got);
	}
	/* a line over the cap (1 MiB) is an error, not a growing buffer */
	size_t big = ((size_t)1 << 20) + 10;
	char *b = malloc(big);
	memset(b, 'x', big);
	char *huge = malloc(big), err[512];
	tap_stderr_begin();
	int rc = lines_of(b, big, huge, big);
	tap_stderr_end(err, sizeof err);
	ok(rc == KEXIT_DATA && strstr(err, "line longer than 1048576 bytes"),
	   "kio_getline: a line longer than 1 MiB is KEXIT_DATA (got %d), said in one line", rc);
	free(huge);
	free(b);
	/* standard input positioned inside a file: the size counts from there */
	char path[] = "/tmp/test_kio.XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0 && write(fd, "0123456789", 10) == 10 && lseek(fd, 4, SEEK_SET) == 4, "a file read from offset 4");
	int saved = dup(0);
	dup2(fd, 0);
	kio_in *in = kio_open_in("-", 0);
	char p2[3] = {0};
	is_u64(kio_size(in), 6, "kio_size counts from where standard input stands");
	ok(kio_pread(in, p2, 2, 1, "x") == 0 && !memcmp(p2, "56", 2), "kio_pread's offset counts from there too");
	kio_close_in(in);
	dup2(saved, 0);
	close(saved);
	close(fd);
	unlink(path);
}

/* kio_map: the next n bytes of a file mapped between buffered reads, the
 * stream going on after them; an unaligned offset and a pipe refused with
 * nothing consumed. */
static void check_map(const unsigned char *buf, size_t size)
{
	char path[] = "/tmp/test_kio.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
		return;
	close(fd);
	kio_in *in = kio_open_in(path, 1);
	unsigned char head[101], tail[50];
	const void *p = NULL;
	void *map = NULL;
	size_t maplen = 0, n = 9u << 20;
	ok(in && !kio_read_exact(in, head, 101, "head"), "kio_map: 101 bytes read first");
	ok(kio_map(in, n, 4, &p, &map, &maplen) == -1 && kio_tell(in) == 101,
	   "... at offset 101, 4-byte alignment is refused, nothing consumed");
	ok(!kio_read_exact(in, head, 3, "head") && kio_map(in, n, 4, &p, &map, &maplen) == 0,
	   "... at offset 104 the next 9 MiB are mapped");
	ok(p && !memcmp(p, buf + 104, n), "... the mapping holds the file's bytes there");
	ok(kio_tell(in) == 104 + n, "... the stream moved past them");
	ok(!kio_read_exact(in, tail, sizeof tail, "tail") && !memcmp(tail, buf + 104 + n, sizeof tail),
	   "... and the next read goes on after them");
	if (map)
		munmap(map, maplen);
	kio_close_in(in);
	unlink(path);
	int pfd[2];
	if (pipe(pfd))
		return;
	if (write(pfd[1], buf, 64) != 64)
		return;
	close(pfd[1]);
	char dev[64];
	snprintf(dev, sizeof dev, "/dev/fd/%d", pfd[0]);
	in = kio_open_in(dev, 1);
	ok(in && kio_map(in, 16, 1, &p, &map, &maplen) == -1 && kio_tell(in) == 0, "... a pipe is refused, nothing consumed");
	kio_close_in(in);
	close(pfd[0]);
}

int main(void)
{
	klog_init("test_kio");
	check_lines();
	const size_t MB = (size_t)1 << 20, big = 37 * MB + 13;
	unsigned char *buf = malloc(big);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < big; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	ok(kio_crc32(0, "123456789", 9) == 0xCBF43926u, "CRC-32 check value of \"123456789\"");
	const size_t sizes[] = {0, 1, 8 * MB - 1, 8 * MB, 8 * MB + 13, 9 * MB + 1, big};
	const int threads[] = {1, 2, 3, 7};
	uint32_t want[sizeof sizes / sizeof *sizes];
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		want[s] = crc_bitwise(0, buf, sizes[s]);
	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
#ifdef _OPENMP
		omp_set_num_threads(threads[t]);
#endif
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			ok(kio_crc32(0, buf, sizes[s]) == want[s], "%d thread(s): %zu bytes", threads[t], sizes[s]);
		/* chained: a start value carried in, as readers checksum in chunks */
		uint32_t c = kio_crc32(0, buf, 3 * MB + 5);
		c = kio_crc32(c, buf + 3 * MB + 5, big - (3 * MB + 5));
		ok(c == want[sizeof sizes / sizeof *sizes - 1], "%d thread(s): chained 3 MB + rest", threads[t]);
	}
	uint32_t a = kio_crc32(0, buf, 10 * MB), b = kio_crc32(0, buf + 10 * MB, big - 10 * MB);
	ok(kio_crc32_combine(a, b, big - 10 * MB) == want[sizeof sizes / sizeof *sizes - 1], "kio_crc32_combine");
	check_map(buf, big);
	free(buf);
	return tap_done();
}

/* test_kio_piece: the parallel positioned reads and writes (kio_pread_crc,
 * kio_read_crc, kio_pwrite_crc) against one serial CRC and the file's
 * bytes, for sizes around the piece boundaries (0, 1, KIO_PIECE - 1,
 * KIO_PIECE, KIO_PIECE + 1, odd sizes over several pieces), at offsets 0
 * and odd, with a start CRC carried in, on 1, 2 and 5 threads; the stream
 * after kio_read_crc stands where it should (bytes buffered before it,
 * reads after it); a gzip input takes the streaming path and gives the
 * same; a short file is "truncated" with kio_read_exact's message and exit
 * code; a failed write is -1 with the errno of pwrite(2); kio_write_crc
 * (large writes positioned, small ones streamed) keeps the order;
 * kio_copy_par copies the bytes and nothing past them. */
#include "kio.h"
#include "klog.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define P KIO_PIECE

static unsigned char *data;
static const size_t total = 3 * P + 12345;

/* the reference: one CRC over the bytes on one thread */
static uint32_t crc_ref(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n) {
		uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
		crc = (uint32_t)crc32(crc, p, k);
		p += k;
		n -= k;
	}
	return crc;
}

static void set_threads(int t)
{
#ifdef _OPENMP
	omp_set_num_threads(t);
#else
	(void)t;
#endif
}

/* What the code under test says on stderr while fn runs, into msg. */
static char msg[2][512];
static int saved = -1;
static void grab(int on, int slot)
{
	static char path[] = "/tmp/test_kio_piece.err.XXXXXX";
	static int fd = -1;
	fflush(stderr);
	if (on) {
		strcpy(path, "/tmp/test_kio_piece.err.XXXXXX");
		fd = mkstemp(path);
		saved = dup(2);
		dup2(fd, 2);
		return;
	}
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, msg[slot], sizeof msg[slot] - 1, 0);
	msg[slot][n > 0 ? n : 0] = 0;
	msg[slot][strcspn(msg[slot], "\n")] = 0;
	close(fd);
	unlink(path);
}

static void check_reads(const char *path)
{
	const size_t sizes[] = {0, 1, P - 1, P, P + 1, 2 * P + 7, 3 * P + 12344};
	const uint64_t offs[] = {0, 1};
	const int threads[] = {1, 2, 5};
	unsigned char *got = malloc(total);
	kio_in *in = kio_open_in(path, 0);
	ok(in && kio_seekable(in), "a regular file is seekable");
	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
		set_threads(threads[t]);
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			for (size_t o = 0; o < sizeof offs / sizeof *offs; o++) {
				size_t n = sizes[s], off = offs[o];
				uint32_t start = o ? 0x12345678u : 0, crc = start;
				memset(got, 0xA5, n + 1);
				int rc = kio_pread_crc(in, got, n, off, &crc, "x");
				ok(rc == 0 && crc == crc_ref(start, data + off, n) && !memcmp(got, data + off, n) &&
					   got[n] == 0xA5,
				   "kio_pread_crc, %d thread(s): %zu bytes at %zu, CRC %s, bytes right, none past", threads[t],
				   n, off, o ? "carried in" : "from 0");
			}
	}
	kio_close_in(in);
	/* through the stream: two bytes buffered before (the gzip magic
	 * peeked), a read after that must continue where kio_read_crc ended */
	set_threads(3);
	in = kio_open_in(path, 1);
	uint32_t crc = 0;
	unsigned char four[4];
	int rc = kio_read_crc(in, got, P + 3, &crc, "x");
	rc = rc ? rc : kio_read_exact(in, four, 4, "x");
	uint32_t crc2 = 7;
	rc = rc ? rc : kio_read_crc(in, got + P + 7, total - P - 7, &crc2, "x");
	size_t end = 1;
	rc = rc ? rc : kio_read(in, four + 1, 1, &end);
	ok(rc == 0 && !memcmp(got, data, P + 3) && !memcmp(four, data + P + 3, 4) &&
		   !memcmp(got + P + 7, data + P + 7, total - P - 7) && crc == crc_ref(0, data, P + 3) &&
		   crc2 == crc_ref(7, data + P + 7, total - P - 7) && end == 0 && kio_tell(in) == total,
	   "kio_read_crc on a seekable stream: buffered bytes first, the stream moved past, end of file after");
	kio_close_in(in);
	free(got);
}

static void check_gzip(const char *dir)
{
	char path[256];
	snprintf(path, sizeof path, "%s/data.gz", dir);
	gzFile z = gzopen(path, "wb1");
	ok(z && gzwrite(z, data, (unsigned)(2 * P + 99)) == (int)(2 * P + 99) && gzclose(z) == Z_OK, "a gzip file");
	unsigned char *got = malloc(2 * P + 99);
	kio_in *in = kio_open_in(path, 1);
	uint32_t crc = 3;
	int rc = kio_read_crc(in, got, 2 * P + 99, &crc, "x");
	ok(in && !kio_seekable(in) && rc == 0 && crc == crc_ref(3, data, 2 * P + 99) && !memcmp(got, data, 2 * P + 99),
	   "kio_read_crc on gzip input (the streaming path): bytes and CRC");
	kio_close_in(in);
	in = kio_open_in(path, 1);
	grab(1, 0);
	rc = kio_read_crc(in, got, 2 * P + 100, &crc, "row indices");
	grab(0, 0);
	ok(rc == KEXIT_DATA && strstr(msg[0], "truncated file (end of data inside the row indices)"),
	   "gzip input one byte short: KEXIT_DATA, truncated (got %d: %s)", rc, msg[0]);
	kio_close_in(in);
	free(got);
	unlink(path);
}

static void check_truncated(const char *path)
{
	unsigned char *got = malloc(total + P);
	set_threads(4);
	/* every way of reading past the end says what kio_read_exact says */
	kio_in *in = kio_open_in(path, 0);
	unsigned char skip[10];
	kio_read_exact(in, skip, 10, "x");
	grab(1, 0);
	int want = kio_read_exact(in, got, total, "row indices");
	grab(0, 0);
	kio_close_in(in);
	ok(want == KEXIT_DATA && strstr(msg[0], "truncated file (end of data inside the row indices)"),
	   "kio_read_exact past the end: KEXIT_DATA (%s)", msg[0]);
	const struct { uint64_t off; size_t n; } c[] = {{0, total + 1}, {total, 1}, {12346, 3 * P}, {P, 3 * P}, {total - 1, 2 * P}};
	for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
		in = kio_open_in(path, 0);
		uint32_t crc = 0;
		grab(1, 1);
		int rc = kio_pread_crc(in, got, c[k].n, c[k].off, &crc, "row indices");
		grab(0, 1);
		kio_close_in(in);
		ok(rc == want && !strcmp(msg[0], msg[1]), "kio_pread_crc of %zu bytes at %llu: as kio_read_exact (%d: %s)",
		   c[k].n, (unsigned long long)c[k].off, rc, msg[1]);
	}
	in = kio_open_in(path, 0);
	kio_read_exact(in, skip, 10, "x");
	uint32_t crc = 0;
	grab(1, 1);
	int rc = kio_read_crc(in, got, total, &crc, "row indices");
	grab(0, 1);
	kio_close_in(in);
	ok(rc == want && !strcmp(msg[0], msg[1]), "kio_read_crc past the end: as kio_read_exact (%d: %s)", rc, msg[1]);
	free(got);
}

static void check_writes(const char *dir)
{
	char path[256];
	snprintf(path, sizeof path, "%s/written", dir);
	const size_t sizes[] = {0, 1, P - 1, P, P + 1, 3 * P + 12345};
	unsigned char *got = malloc(total + 8);
	for (int t = 1; t <= 3; t += 2) {
		set_threads(t);
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
			size_t n = sizes[s];
			int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
			uint32_t crc = 9;
			int rc = fd < 0 ? -1 : kio_pwrite_crc(fd, data, n, 3, &crc);
			ssize_t r = fd < 0 ? -1 : pread(fd, got, total + 8, 0);
			ok(rc == 0 && r == (ssize_t)(n ? n + 3 : 0) && !memcmp(got + 3, data, n) &&
				   crc == crc_ref(9, data, n),
			   "kio_pwrite_crc, %d thread(s): %zu bytes at 3, CRC carried in", t, n);
			if (fd >= 0)
				close(fd);
		}
	}
	/* kio_write_crc: large writes at the stream's position, small ones and
	 * plain kio_write through the stream, in order */
	set_threads(3);
	kio_out *out = kio_open_out(path, 1, 0);
	uint32_t crc = 5;
	const size_t cut[] = {3, 3 + 2 * P + 5, 3 + 2 * P + 15, total};
	int rc = out ? kio_write(out, data, cut[0]) : -1;
	for (int k = 0; k < 3 && !rc; k++)
		rc = kio_write_crc(out, data + cut[k], cut[k + 1] - cut[k], &crc);
	rc = rc ? rc : kio_write(out, data, 7);
	rc = rc ? rc : kio_commit(out);
	int fd = open(path, O_RDONLY);
	ssize_t r = pread(fd, got, total + 8, 0);
	close(fd);
	ok(rc == 0 && r == (ssize_t)total + 7 && !memcmp(got, data, total) && !memcmp(got + total, data, 7) &&
		   crc == crc_ref(5, data + 3, total - 3),
	   "kio_write_crc: a file holds every write in order, CRC of the kio_write_crc bytes");
	fd = open(path, O_RDONLY);
	errno = 0;
	rc = kio_pwrite_crc(fd, data, 2 * P, 0, NULL);
	ok(rc == -1 && errno == EBADF, "kio_pwrite_crc to a read-only descriptor: -1, EBADF (errno %d)", errno);
	close(fd);
	unlink(path);
	free(got);
}

int main(void)
{
	klog_init("test_kio_piece");
	char dir[] = "/tmp/test_kio_piece.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	data = malloc(total);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < total; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = (unsigned char)(x >> 24);
	}
	char path[256];
	snprintf(path, sizeof path, "%s/data", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ok(fd >= 0 && write(fd, data, total) == (ssize_t)total && !close(fd), "a file of %zu bytes", total);
	check_reads(path);
	check_gzip(dir);
	check_truncated(path);
	check_writes(dir);
	/* kio_copy_par: pieces of 1 MiB, the last one short, nothing past n */
	static const size_t cs[] = {0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 777};
	unsigned char *cp = malloc(total + 1);
	for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
		memset(cp, 0xa5, cs[k] + 1);
		kio_copy_par(cp, data, cs[k]);
		ok(!memcmp(cp, data, cs[k]) && cp[cs[k]] == 0xa5, "kio_copy_par of %zu bytes: the bytes, none past them",
		   cs[k]);
	}
	free(cp);
	unlink(path);
	rmdir(dir);
	free(data);
	return tap_done();
}

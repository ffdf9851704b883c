/* test_kedge: kedge_read_payload and kedge_read_end, the unchecked reading
 * of a raw payload that kpart's staged stream uses (kpart_stage.c): the
 * bytes as stored, the trailer checked, its CRC handed to the caller. */
#include "kedge.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NV = 1000, NE = 5000 };
static char dir[64];

static void make(const char *path)
{
	kedge_info info = {.flags = 1, .nv = NV, .ne = NE, .prov = "program=test_kedge\n"};
	kedge_writer *w;
	uint64_t *uv = kmalloc(2 * NE * 8);
	for (uint64_t k = 0; k < 2 * NE; k++)
		uv[k] = (k * 7919 + 13) % NV;
	if (kedge_create(path, 1, &info, NULL, 0, &w) || kedge_write(w, uv, NE) || kedge_finish(w))
		exit(99);
	free(uv);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	off_t len = lseek(fd, 0, SEEK_END);
	unsigned char *b = kmalloc((size_t)len);
	if (pread(fd, b, (size_t)len, 0) != len)
		exit(99);
	close(fd);
	*n = (size_t)len;
	return b;
}

/* path's bytes (one byte at off xor'ed with x unless off < 0) as standard
 * input through a pipe, written by a child */
static pid_t feed(const char *path, long off, int x)
{
	size_t n;
	unsigned char *b = slurp(path, &n);
	if (off >= 0)
		b[off] ^= (unsigned char)x;
	int p[2];
	if (pipe(p))
		exit(99);
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		for (size_t at = 0; at < n;) {
			ssize_t w = write(p[1], b + at, n - at);
			if (w <= 0)
				_exit(1);
			at += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	dup2(p[0], 0);
	close(p[0]);
	free(b);
	return c;
}

/* Reads the payload in three unequal pieces; *crc the CRC of what it read. */
static int read_pieces(kedge_reader *r, unsigned char *buf, size_t rec, uint32_t *crc)
{
	size_t cut[4] = {0, 1, 2345, NE};
	int rc = 0;
	for (int k = 0; k < 3 && !rc; k++)
		rc = kedge_read_payload(r, buf + cut[k] * rec, cut[k + 1] - cut[k]);
	*crc = kio_crc32(0, buf, NE * rec);
	return rc ? rc : kedge_read_end(r);
}

int main(void)
{
	klog_init("test_kedge");
	snprintf(dir, sizeof dir, "/tmp/test_kedge.XXXXXX");
	if (!mkdtemp(dir))
		return 99;
	char path[128];
	snprintf(path, sizeof path, "%s/g.kg", dir);
	make(path);
	size_t fsize;
	unsigned char *file = slurp(path, &fsize);
	size_t rec = 8, pay = fsize - 20 - NE * rec; /* 4-byte ids; the trailer's 20 bytes */

	/* a pipe, read unchecked: the file's bytes, its trailer's CRC and size */
	kedge_info info;
	kedge_reader *r;
	pid_t c = feed(path, -1, 0);
	ok(kedge_open("-", &r, &info) == 0 && info.idbytes == 4 && info.ne == NE, "a stream opened (4-byte ids)");
	unsigned char *buf = kmalloc(NE * rec);
	uint32_t mine, crc = 0;
	uint64_t size = 0;
	ok(read_pieces(r, buf, rec, &mine) == 0, "its payload read in three pieces, the trailer checked");
	ok(memcmp(buf, file + pay, NE * rec) == 0, "... the bytes as stored");
	ok(kedge_trailer(r, &size, &crc) == 1, "kedge_trailer once the trailer is read");
	is_u64(crc, mine, "... the trailer's CRC, the payload's");
	is_u64(size, fsize, "... and the bytes read, the file's size");
	kedge_close(r);
	waitpid(c, NULL, 0);

	/* a payload byte changed: read without complaint, the CRCs differ */
	c = feed(path, (long)(pay + 4 * 321), 1);
	ok(kedge_open("-", &r, &info) == 0, "a stream with a payload byte changed opened");
	ok(read_pieces(r, buf, rec, &mine) == 0, "... read unchecked (the caller checks)");
	ok(kedge_trailer(r, &size, &crc) == 1 && crc != mine, "... the trailer's CRC is not the bytes'");
	kedge_close(r);
	waitpid(c, NULL, 0);

	/* the trailer damaged: kedge_read_end refuses */
	tap_diag("expect an error: the trailer corrupt");
	c = feed(path, (long)(fsize - 9), 4);
	ok(kedge_open("-", &r, &info) == 0, "a stream with a damaged trailer opened");
	ok(read_pieces(r, buf, rec, &mine) == KEXIT_DATA, "... kedge_read_end: exit code 1 (a data error)");
	ok(kedge_trailer(r, &size, &crc) == 0, "... and kedge_trailer has nothing to give");
	kedge_close(r);
	waitpid(c, NULL, 0);

	/* the regular file itself: the same */
	ok(kedge_open(path, &r, &info) == 0, "the file opened");
	ok(read_pieces(r, buf, rec, &mine) == 0 && memcmp(buf, file + pay, NE * rec) == 0, "... read unchecked");
	ok(kedge_trailer(r, &size, &crc) == 1 && crc == mine && size == fsize, "... its trailer's CRC and size");
	kedge_close(r);

	free(buf);
	free(file);
	unlink(path);
	rmdir(dir);
	return tap_done();
}

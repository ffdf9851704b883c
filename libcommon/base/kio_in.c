/* kio_in: input streams: a file or standard input, gzip inflated on the
 * way when asked; lines, exact reads, a peek at the first bytes. */
#include "kio.h"
#include "kio_internal.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* read(2) until n bytes or end of file */
static int read_fd(kio_in *in, void *dst, size_t n, size_t *got)
{
	size_t have = 0;
	while (have < n) {
		ssize_t r = read(in->fd, (char *)dst + have, n - have);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			kerror("cannot read '%s': %s", in->name, strerror(errno));
			return KEXIT_IO;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	*got = have;
	return 0;
}

/* Produce up to n decoded bytes into dst. */
static int src_read(kio_in *in, unsigned char *dst, size_t n, size_t *got)
{
	if (!in->zs)
		return read_fd(in, dst, n, got);
	z_stream *zs = in->zs;
	zs->next_out = dst;
	zs->avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
	uInt want = zs->avail_out;
	while (zs->avail_out) {
		if (zs->avail_in == 0 && !in->raw_eof) {
			size_t r;
			int rc = read_fd(in, in->raw, KIO_BUF, &r);
			if (rc)
				return rc;
			if (r == 0)
				in->raw_eof = 1;
			zs->next_in = in->raw;
			zs->avail_in = (uInt)r;
		}
		if (in->z_end) {
			/* another gzip member may follow (concatenated files) */
			if (zs->avail_in == 0 && in->raw_eof)
				break;
			inflateReset(zs);
			in->z_end = 0;
			in->z_next = 1;
		}
		if (zs->avail_in == 0 && in->raw_eof) {
			kerror("'%s': truncated gzip data", in->name);
			return KEXIT_DATA;
		}
		/* what follows a member is another member (its magic), or the end */
		if (in->z_next && zs->avail_in) {
			if (zs->next_in[0] != 0x1f || (zs->avail_in > 1 && zs->next_in[1] != 0x8b)) {
				kerror("'%s': data after the gzip data (not another gzip member)", in->name);
				return KEXIT_DATA;
			}
			in->z_next = 0;
		}
		int zr = inflate(zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			in->z_end = 1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			kerror("'%s': corrupt gzip data (%s)", in->name, zs->msg ? zs->msg : "inflate error");
			return KEXIT_DATA;
		}
	}
	*got = want - zs->avail_out;
	return 0;
}

static int fill(kio_in *in)
{
	if (in->eof)
		return 0;
	if (in->pos > 0) {
		memmove(in->buf, in->buf + in->pos, in->len - in->pos);
		in->len -= in->pos;
		in->pos = 0;
	}
	size_t got;
	int rc = src_read(in, in->buf + in->len, in->cap - in->len, &got);
	if (rc)
		return rc;
	if (got == 0)
		in->eof = 1;
	in->len += got;
	return 0;
}

void kio_pipe_grow(int fd)
{
#ifdef F_SETPIPE_SZ
	struct stat st;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return;
	/* KBFS_IO_PIPE=N (MiB, 1 to 1024; an experiment): N MiB asked first */
	const char *v = getenv("KBFS_IO_PIPE"), *end = "";
	uint64_t mb = 0;
	if (v && (knum_u64(v, &end, &mb) != KNUM_OK || *end || mb < 1 || mb > 1024)) {
		kwarn("ignoring KBFS_IO_PIPE='%s' (want MiB from 1 to 1024)", v);
		mb = 0;
	}
	int want = mb ? (int)(mb << 20) : KIO_PIPE;
	if (fcntl(fd, F_GETPIPE_SZ) < want && fcntl(fd, F_SETPIPE_SZ, want) < 0 && want > KIO_PIPE &&
	    fcntl(fd, F_GETPIPE_SZ) < KIO_PIPE)
		(void)fcntl(fd, F_SETPIPE_SZ, KIO_PIPE);
#else
	(void)fd;
#endif
}

kio_in *kio_open_in(const char *path, int flags)
{
	int allow_gzip = flags & KIO_GZIP;
	kio_in *in = kcalloc(1, sizeof *in);
	int is_stdin = !strcmp(path, "-");
	in->name = kstrdup(is_stdin ? "-" : path);
	if (is_stdin) {
		in->fd = STDIN_FILENO;
	} else {
		/* a file that must be a regular one is opened without waiting,
		 * so that a fifo in its place is refused, not waited on */
		in->fd = open(path, O_RDONLY | O_CLOEXEC | (flags & KIO_FILE ? O_NONBLOCK : 0));
		if (in->fd < 0) {
			kerror("cannot open '%s': %s", path, strerror(errno));
			free(in->name);
			free(in);
			return NULL;
		}
		in->own_fd = 1;
	}
	struct stat st;
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			kerror("cannot read '%s': Is a directory", in->name);
			kio_close_in(in);
			return NULL;
		}
		if ((flags & KIO_FILE) && !S_ISREG(st.st_mode)) {
			kerror("cannot read '%s': not a regular file (%s)", in->name,
			       S_ISFIFO(st.st_mode) ? "a fifo" : S_ISCHR(st.st_mode) ? "a character device" : "a special file");
			kio_close_in(in);
			return NULL;
		}
		if (flags & KIO_FILE)
			fcntl(in->fd, F_SETFL, fcntl(in->fd, F_GETFL) & ~O_NONBLOCK);
		if (S_ISFIFO(st.st_mode))
			kio_pipe_grow(in->fd);
		if (S_ISREG(st.st_mode)) {
			/* standard input may start inside the file: sizes and
			 * positioned reads count from where it stands */
			off_t at = lseek(in->fd, 0, SEEK_CUR);
			in->base = at > 0 && at <= st.st_size ? (uint64_t)at : 0;
			in->regular = 1;
			in->size = (uint64_t)st.st_size - in->base;
		}
	}
	/* a small plain file gets a buffer of its size (grown to KIO_BUF if it
	 * grows meanwhile): opening a file need not cost a megabyte */
	unsigned char magic[2];
	size_t got = 0;
	if (allow_gzip && read_fd(in, magic, 2, &got)) {
		kio_close_in(in);
		return NULL;
	}
	int gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	in->cap = in->regular && !gz && in->size < KIO_BUF ? (size_t)in->size + 64 : KIO_BUF;
	in->buf = kmalloc(in->cap);
	if (gz) {
		in->zs = kcalloc(1, sizeof *in->zs);
		if (inflateInit2(in->zs, 15 + 16) != Z_OK)
			kdie(KEXIT_RESOURCE, "zlib initialisation failed");
		in->raw = kmalloc(KIO_BUF);
		memcpy(in->raw, magic, 2);
		in->zs->next_in = in->raw;
		in->zs->avail_in = 2;
		in->regular = 0;
	} else {
		memcpy(in->buf, magic, got);
		in->len = got;
	}
	return in;
}

int kio_peek(kio_in *in, void *buf, size_t n, size_t *got)
{
	while (in->len - in->pos < n && !in->eof) {
		int rc = fill(in);
		if (rc)
			return rc;
	}
	size_t have = in->len - in->pos;
	*got = have < n ? have : n;
	memcpy(buf, in->buf + in->pos, *got);
	return 0;
}

int kio_read(kio_in *in, void *dst, size_t n, size_t *got)
{
	size_t have = 0;
	unsigned char *d = dst;
	if (in->pos < in->len) {
		size_t k = in->len - in->pos;
		if (k > n)
			k = n;
		memcpy(d, in->buf + in->pos, k);
		in->pos += k;
		have = k;
	}
	while (have < n && !in->eof) {
		size_t r;
		int rc = src_read(in, d + have, n - have, &r);
		if (rc)
			return rc;
		if (r == 0)
			in->eof = 1;
		have += r;
	}
	in->consumed += have;
	*got = have;
	return 0;
}

int kio_read_exact(kio_in *in, void *buf, size_t n, const char *what)
{
	size_t got;
	int rc = kio_read(in, buf, n, &got);
	if (rc)
		return rc;
	if (got != n) {
		kerror("'%s': truncated file (end of data inside the %s)", in->name, what);
		return KEXIT_DATA;
	}
	return 0;
}

char *kio_getline(kio_in *in, size_t *len, int *err)
{
	*err = 0;
	for (;;) {
		unsigned char *start = in->buf + in->pos;
		unsigned char *nl = memchr(start, '\n', in->len - in->pos);
		if (nl || (in->eof && in->pos < in->len)) {
			size_t n = nl ? (size_t)(nl - start) : in->len - in->pos;
			if (n + 1 > in->linecap) {
				in->linecap = n + 1 > 256 ? n + 1 : 256;
				in->line = krealloc(in->line, in->linecap);
			}
			memcpy(in->line, start, n);
			in->line[n] = 0;
			/* what the line takes of the input, before a '\r' is dropped:
			 * a last line "x\r" without '\n' is consumed whole */
			size_t used = nl ? n + 1 : n;
			if (n && in->line[n - 1] == '\r')
				in->line[--n] = 0;
			in->pos += used;
			in->consumed += used;
			in->lineno++;
			/* a UTF-8 byte order mark before the first line is not
			 * text (as the importers pass it over) */
			if (in->lineno == 1 && n >= 3 && !memcmp(in->line, "\xef\xbb\xbf", 3)) {
				memmove(in->line, in->line + 3, n - 2);
				n -= 3;
			}
			*len = n;
			/* a NUL would end the line early for every reader of it */
			if (memchr(in->line, 0, n)) {
				kerror("%s:%llu: NUL byte in a text line", in->name, (unsigned long long)in->lineno);
				*err = KEXIT_DATA;
				return NULL;
			}
			return in->line;
		}
		if (in->eof)
			return NULL;
		if (in->pos == 0 && in->len == in->cap) {
			if (in->cap == KIO_BUF) {
				kerror("'%s': line longer than %d bytes", in->name, KIO_BUF);
				*err = KEXIT_DATA;
				return NULL;
			}
			in->cap = KIO_BUF; /* the file grew past the size it had */
			in->buf = krealloc(in->buf, in->cap);
		}
		int rc = fill(in);
		if (rc) {
			*err = rc;
			return NULL;
		}
	}
}

int kio_seekable(const kio_in *in) { return in->regular && !in->zs; }
uint64_t kio_size(const kio_in *in) { return in->regular ? in->size : 0; }
uint64_t kio_tell(const kio_in *in) { return in->consumed; }
const char *kio_name(const kio_in *in) { return in->name; }

void kio_close_in(kio_in *in)
{
	if (!in)
		return;
	if (in->own_fd)
		close(in->fd);
	if (in->zs) {
		inflateEnd(in->zs);
		free(in->zs);
	}
	free(in->raw);
	free(in->buf);
	free(in->line);
	free(in->name);
	free(in);
}

int kio_get_version(const uint8_t *hdr, const char *name, const char *what, int max_major, int max_minor,
		    uint16_t *major, uint16_t *minor, uint32_t *flags)
{
	*major = kio_get16(hdr + 8);
	*minor = kio_get16(hdr + 10);
	*flags = kio_get32(hdr + 12);
	if (*major <= max_major)
		return 0;
	kerror("'%s': %s %u.%u is newer than this kbfs supports (%d.%d); upgrade kbfs", name, what, (unsigned)*major,
	       (unsigned)*minor, max_major, max_minor);
	return KEXIT_DATA;
}

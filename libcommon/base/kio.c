#include "kio.h"
#include "klog.h"
#include "kmem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static uint32_t crc32_serial(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n) {
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return crc;
}

/* Large buffers outside a parallel region are split among the OpenMP
 * threads and the pieces' CRCs merged (crc32_combine): same value, and
 * checksumming a multi-GB rank or edge file no longer runs on one core. */
uint32_t kio_crc32(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
#ifdef _OPENMP
	enum { MINPIECE = 4 << 20, MAXT = 256 };
	int T = omp_in_parallel() ? 1 : omp_get_max_threads();
	if (T > MAXT)
		T = MAXT;
	if (T > 1 && n >= 2 * (size_t)MINPIECE) {
		if ((size_t)T > n / MINPIECE)
			T = (int)(n / MINPIECE);
		uint32_t part[MAXT];
#pragma omp parallel for num_threads(T) schedule(static)
		for (int t = 0; t < T; t++) {
			size_t a = n / (size_t)T * (size_t)t, b = t == T - 1 ? n : n / (size_t)T * (size_t)(t + 1);
			part[t] = crc32_serial(t ? 0 : crc, p + a, b - a);
		}
		crc = part[0];
		for (int t = 1; t < T; t++) {
			size_t a = n / (size_t)T * (size_t)t, b = t == T - 1 ? n : n / (size_t)T * (size_t)(t + 1);
			crc = kio_crc32_combine(crc, part[t], b - a);
		}
		return crc;
	}
#endif
	return crc32_serial(crc, p, n);
}

uint32_t kio_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
	return (uint32_t)crc32_combine64(a, b, (z_off64_t)len_b);
}

/* ---------------------------------------------------------------- input */

enum { KIO_BUF = 1 << 20 };

struct kio_in {
	char *name;
	int fd, own_fd, regular;
	uint64_t size;       /* bytes from base to the end (regular files) */
	uint64_t base;       /* offset of the first byte read */
	z_stream *zs;        /* set when the input is gzip */
	unsigned char *raw;  /* compressed bytes waiting for inflate */
	int raw_eof, z_end;
	unsigned char *buf;  /* decoded bytes not yet consumed */
	size_t pos, len, cap;
	int eof;
	uint64_t consumed;
	char *line;
	size_t linecap;
};

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
		}
		if (zs->avail_in == 0 && in->raw_eof) {
			kerror("'%s': truncated gzip data", in->name);
			return KEXIT_DATA;
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

kio_in *kio_open_in(const char *path, int allow_gzip)
{
	kio_in *in = kcalloc(1, sizeof *in);
	int is_stdin = !strcmp(path, "-");
	in->name = kstrdup(is_stdin ? "-" : path);
	if (is_stdin) {
		in->fd = STDIN_FILENO;
	} else {
		in->fd = open(path, O_RDONLY);
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
			*len = n;
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

/* pread(2) of n bytes at the file offset off: 0, PREAD_SHORT at end of
 * file, or -1 with errno set. */
enum { PREAD_SHORT = 1 };
static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t have = 0;
	while (have < n) {
		ssize_t r = pread(fd, (char *)buf + have, n - have, (off_t)(off + have));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -1 : PREAD_SHORT;
		have += (size_t)r;
	}
	return 0;
}

/* kerror() for pread_full's r (errno err) */
static int pread_failed(const kio_in *in, int r, int err, const char *what)
{
	if (r < 0) {
		kerror("cannot read '%s': %s", in->name, strerror(err));
		return KEXIT_IO;
	}
	kerror("'%s': truncated file (end of data inside the %s)", in->name, what);
	return KEXIT_DATA;
}

int kio_pread(kio_in *in, void *buf, size_t n, uint64_t off, const char *what)
{
	int r = pread_full(in->fd, buf, n, in->base + off);
	return r ? pread_failed(in, r, errno, what) : 0;
}

void kio_copy_par(void *dst, const void *src, size_t n)
{
	const size_t piece = (size_t)1 << 20;
	size_t np = n / piece + (n % piece != 0);
#pragma omp parallel for schedule(static) if (np > 1)
	for (size_t p = 0; p < np; p++) {
		size_t at = p * piece;
		memcpy((char *)dst + at, (const char *)src + at, n - at < piece ? n - at : piece);
	}
}

/*
 * The pieces of a parallel read or write: io(arg, at, k, &crc) for bytes
 * [at, at + k) of n, KIO_PIECE bytes each, dealt to the OpenMP threads;
 * it returns 0 with the piece's CRC, or non-zero with errno set.  Once a
 * piece failed, the pieces not yet started are skipped (all of them come
 * after it).  *crc (when not NULL) extended with the pieces' CRCs in
 * order; 0, or the first failed piece's result with *err its errno.
 */
typedef int (*piece_io)(void *arg, size_t at, size_t k, uint32_t *crc);
static int run_pieces(size_t n, piece_io io, void *arg, uint32_t *crc, int *err)
{
	typedef struct {
		uint32_t crc;
		int r, err;
	} piece;
	size_t np = n / KIO_PIECE + (n % KIO_PIECE != 0);
	piece *pc = kcalloc(np ? np : 1, sizeof *pc);
	int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
	for (size_t p = 0; p < np; p++) {
		int stop;
#pragma omp atomic read
		stop = failed;
		size_t at = p * KIO_PIECE, k = n - at < KIO_PIECE ? n - at : KIO_PIECE;
		if (!stop && (pc[p].r = io(arg, at, k, &pc[p].crc))) {
			pc[p].err = errno;
#pragma omp atomic write
			failed = 1;
		}
	}
	int r = 0;
	for (size_t p = 0; p < np && !r; p++)
		if ((r = pc[p].r))
			*err = pc[p].err;
	for (size_t p = 0; p < np && !r && crc; p++)
		*crc = kio_crc32_combine(*crc, pc[p].crc, n - p * KIO_PIECE < KIO_PIECE ? n - p * KIO_PIECE : KIO_PIECE);
	free(pc);
	return r;
}

typedef struct pio {
	int fd;
	unsigned char *buf;
	uint64_t off;
	int want_crc;
} pio;

static int pread_piece(void *arg, size_t at, size_t k, uint32_t *crc)
{
	const pio *a = arg;
	int r = pread_full(a->fd, a->buf + at, k, a->off + at);
	if (!r)
		*crc = crc32_serial(0, a->buf + at, k);
	return r;
}

int kio_pread_crc(kio_in *in, void *dst, size_t n, uint64_t off, uint32_t *crc, const char *what)
{
	pio a = {.fd = in->fd, .buf = dst, .off = in->base + off};
	int err = 0, r = run_pieces(n, pread_piece, &a, crc, &err);
	return r ? pread_failed(in, r, err, what) : 0;
}

int kio_read_crc(kio_in *in, void *dst, size_t n, uint32_t *crc, const char *what)
{
	unsigned char *d = dst;
	if (!kio_seekable(in)) {
		for (size_t at = 0; at < n;) {
			size_t k = n - at > ((size_t)1 << 28) ? (size_t)1 << 28 : n - at;
			int rc = kio_read_exact(in, d + at, k, what);
			if (rc)
				return rc;
			*crc = kio_crc32(*crc, d + at, k);
			at += k;
		}
		return 0;
	}
	/* what the buffer holds, then the rest from the file (the descriptor
	 * stands at base + consumed once the buffer is empty) */
	size_t k = in->len - in->pos < n ? in->len - in->pos : n;
	memcpy(d, in->buf + in->pos, k);
	in->pos += k;
	in->consumed += k;
	*crc = kio_crc32(*crc, d, k);
	if (k == n)
		return 0;
	int rc = kio_pread_crc(in, d + k, n - k, in->consumed, crc, what);
	if (rc)
		return rc;
	in->consumed += n - k;
	if (lseek(in->fd, (off_t)(in->base + in->consumed), SEEK_SET) < 0) {
		kerror("cannot read '%s': %s", in->name, strerror(errno));
		return KEXIT_IO;
	}
	return 0;
}

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

/* --------------------------------------------------------------- cleanup */

/* Paths to remove when the program dies.  Read by the fatal-signal handler,
 * so a slot is emptied before its string is freed, and the handler itself
 * only makes system calls (kio_rmtree allocates nothing). */
static char *volatile pending[64];
static volatile int npending;

static void cleanup_all(void)
{
	for (int i = 0; i < npending; i++) {
		char *p = pending[i];
		if (p)
			kio_rmtree(p);
	}
}

void kio_cleanup_add(const char *path)
{
	if (!path)
		return;
	klog_atdie(cleanup_all);
	char *copy = kstrdup(path);
	for (int i = 0; i < npending; i++)
		if (!pending[i]) {
			pending[i] = copy;
			return;
		}
	if (npending < 64) {
		pending[npending] = copy;
		npending = npending + 1;
	} else {
		free(copy);
	}
}

void kio_cleanup_remove(const char *path)
{
	for (int i = 0; i < npending; i++) {
		char *p = pending[i];
		if (p && !strcmp(p, path)) {
			pending[i] = NULL;
			free(p);
		}
	}
}

char *kio_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = kmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* rm -rf NAME under the directory dfd, with system calls only: no memory
 * is allocated, so a signal handler may call it.  Directories are read
 * again until a pass removes nothing (removing while reading may skip). */
static int rmtree_at(int dfd, const char *name, int depth)
{
	if (!unlinkat(dfd, name, 0) || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth > 32)
		return -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct ent {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	_Alignas(8) char buf[2048];
	for (int removed = 1; removed;) {
		removed = 0;
		lseek(fd, 0, SEEK_SET);
		long n;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
			for (long at = 0; at < n;) {
				const struct ent *e = (const void *)(buf + at);
				at += e->reclen;
				if (strcmp(e->name, ".") && strcmp(e->name, "..") && !rmtree_at(fd, e->name, depth + 1))
					removed = 1;
			}
	}
	close(fd);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

int kio_rmtree(const char *path) { return rmtree_at(AT_FDCWD, path, 0); }

/* ------------------------------------------------- stale temporaries, sync */

int kio_hold(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void kio_release(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* "BASE.tmp.XXXXXX" or "BASE.old.XXXXXX" (mkstemp's six characters) */
static int is_temp_of(const char *name, const char *base, size_t bl)
{
	if (strncmp(name, base, bl) || (strncmp(name + bl, ".tmp.", 5) && strncmp(name + bl, ".old.", 5)))
		return 0;
	const char *x = name + bl + 5;
	for (int k = 0; k < 6; k++)
		if (!((x[k] >= 'A' && x[k] <= 'Z') || (x[k] >= 'a' && x[k] <= 'z') || (x[k] >= '0' && x[k] <= '9')))
			return 0;
	return x[6] == 0;
}

/* The directory part of path (kmalloc'd: ".", "/" or the prefix); *base
 * is set to the name after it. */
static char *dir_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	char *dir = kmalloc(dl + 2);
	if (!slash)
		strcpy(dir, ".");
	else if (dl == 0)
		strcpy(dir, "/");
	else
		memcpy(dir, path, dl), dir[dl] = 0;
	*base = slash ? slash + 1 : path;
	return dir;
}

void kio_sweep_stale(const char *path)
{
	const char *base;
	char *dir = dir_of(path, &base);
	size_t bl = strlen(base);
	DIR *d = bl ? opendir(dir) : NULL;
	if (!d) {
		free(dir);
		return;
	}
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (!is_temp_of(e->d_name, base, bl) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    now - st.st_mtime < KIO_STALE_SECONDS)
			continue;
		char *p = kio_join(dir, e->d_name);
		int fd = kio_hold(p);
		if (fd >= 0) {
			kinfo("removing '%s', left by a run that died", p);
			kio_rmtree(p);
			kio_release(fd);
		}
		free(p);
	}
	closedir(d);
	free(dir);
}

int kio_sync_parent(const char *path)
{
	const char *base;
	char *dir = dir_of(path, &base);
	int rc = kio_sync_path(dir);
	free(dir);
	return rc;
}

int kio_sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;
	/* file systems that cannot sync a directory say EINVAL: nothing to do */
	if (fd < 0 || (fsync(fd) && errno != EINVAL && errno != EROFS)) {
		kerror("cannot write '%s': %s", path, strerror(errno));
		rc = KEXIT_IO;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---------------------------------------------------------------- output */

struct kio_out {
	char *name;
	char *tmp; /* NULL for stdout */
	FILE *fp;
	int failed;
	int direct; /* a device or pipe opened in place */
};

kio_out *kio_open_out(const char *path, int binary, int force)
{
	kio_out *o = kcalloc(1, sizeof *o);
	if (!strcmp(path, "-")) {
		if (binary && !force && isatty(STDOUT_FILENO)) {
			kerror("refusing to write binary data to a terminal (use -o FILE, a pipe, or --force)");
			free(o);
			return NULL;
		}
		o->name = kstrdup("-");
		o->fp = stdout;
		return o;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		kerror("cannot write '%s': Is a directory", path);
		free(o);
		return NULL;
	}
	o->name = kstrdup(path);
	/* a link is followed, so the file it names is replaced, not the link */
	char *real = NULL;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		real = realpath(path, NULL);
	const char *target = real ? real : path;
	int special = !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
		      !strncmp(target, "/dev/", 5) || !strncmp(target, "/proc/", 6);
	if (special || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
		free(real);
		/* a device or a pipe (/dev/null, /dev/stdout, a fifo): write in place */
		o->fp = fopen(path, "wb");
		if (!o->fp) {
			kerror("cannot open '%s': %s", path, strerror(errno));
			free(o->name);
			free(o);
			return NULL;
		}
		o->direct = 1;
		return o;
	}
	if (real) {
		free(o->name);
		o->name = real;
	}
	kio_sweep_stale(o->name);
	size_t n = strlen(o->name) + 16;
	o->tmp = kmalloc(n);
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->name);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		kerror("cannot create '%s': %s", path, strerror(errno));
		free(o->tmp);
		free(o->name);
		free(o);
		return NULL;
	}
	flock(fd, LOCK_EX | LOCK_NB); /* held until committed: this temporary is alive */
	fchmod(fd, 0644 & ~umask(umask(0)));
	kio_cleanup_add(o->tmp);
	o->fp = fdopen(fd, "wb");
	if (!o->fp)
		kdie(KEXIT_RESOURCE, "cannot open a stream for '%s'", path);
	setvbuf(o->fp, NULL, _IOFBF, 1 << 20);
	return o;
}

int kio_write(kio_out *o, const void *buf, size_t n)
{
	if (o->failed)
		return KEXIT_IO;
	if (n && fwrite(buf, 1, n, o->fp) != n) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		o->failed = 1;
		return KEXIT_IO;
	}
	return 0;
}

static int pwrite_full(int fd, const void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p = (const char *)p + w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int pwrite_piece(void *arg, size_t at, size_t k, uint32_t *crc)
{
	const pio *a = arg;
	if (a->want_crc)
		*crc = crc32_serial(0, a->buf + at, k);
	return pwrite_full(a->fd, a->buf + at, k, a->off + at);
}

int kio_pwrite_crc(int fd, const void *buf, size_t n, uint64_t off, uint32_t *crc)
{
	pio a = {.fd = fd, .buf = (unsigned char *)buf, .off = off, .want_crc = crc != NULL};
	int err = 0, r = run_pieces(n, pwrite_piece, &a, crc, &err);
	if (r)
		errno = err;
	return r ? -1 : 0;
}

int kio_write_crc(kio_out *o, const void *buf, size_t n, uint32_t *crc)
{
	if (!o->tmp || n < 2 * KIO_PIECE || o->failed) {
		*crc = kio_crc32(*crc, buf, n);
		return kio_write(o, buf, n);
	}
	/* the stream flushed, the bytes written where it stands, the stream
	 * moved past them */
	off_t at = fflush(o->fp) ? -1 : ftello(o->fp);
	if (at < 0 || kio_pwrite_crc(fileno(o->fp), buf, n, (uint64_t)at, crc) ||
	    fseeko(o->fp, at + (off_t)n, SEEK_SET)) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		o->failed = 1;
		return KEXIT_IO;
	}
	return 0;
}

int kio_printf(kio_out *o, const char *fmt, ...)
{
	if (o->failed)
		return KEXIT_IO;
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(o->fp, fmt, ap);
	va_end(ap);
	if (r < 0) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		o->failed = 1;
		return KEXIT_IO;
	}
	return 0;
}

int kio_commit(kio_out *o)
{
	int rc = o->failed ? KEXIT_IO : 0;
	if (!o->tmp) {
		if (!rc && fflush(o->fp)) {
			kerror("cannot write '%s': %s", o->name, strerror(errno));
			rc = KEXIT_IO;
		}
		if (o->direct && fclose(o->fp) && !rc) {
			kerror("cannot write '%s': %s", o->name, strerror(errno));
			rc = KEXIT_IO;
		}
		free(o->name);
		free(o);
		return rc;
	}
	/* on disk before it has its name; renamed while still open (and
	 * locked), so no sweep of stale temporaries can take it meanwhile */
	if (!rc && (fflush(o->fp) || ferror(o->fp) || (fsync(fileno(o->fp)) && errno != EINVAL))) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		rc = KEXIT_IO;
	}
	if (!rc && rename(o->tmp, o->name)) {
		kerror("cannot rename '%s' to '%s': %s", o->tmp, o->name, strerror(errno));
		rc = KEXIT_IO;
	}
	int renamed = !rc;
	if (!rc)
		rc = kio_sync_parent(o->name);
	if (fclose(o->fp) && !rc) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		rc = KEXIT_IO;
	}
	if (rc)
		unlink(renamed ? o->name : o->tmp);
	kio_cleanup_remove(o->tmp);
	free(o->tmp);
	free(o->name);
	free(o);
	return rc;
}

void kio_abort(kio_out *o)
{
	if (!o)
		return;
	if (o->tmp) {
		fclose(o->fp);
		unlink(o->tmp);
		kio_cleanup_remove(o->tmp);
		free(o->tmp);
	} else if (o->direct) {
		fclose(o->fp);
	} else {
		fflush(o->fp);
	}
	free(o->name);
	free(o);
}

const char *kio_out_name(const kio_out *o) { return o->name; }
FILE *kio_out_file(kio_out *o) { return o->fp; }

int kio_close_stdout(void)
{
	if (fflush(stdout) || ferror(stdout) || fclose(stdout)) {
		if (errno == EPIPE)
			return 0;
		kerror("cannot write standard output: %s", strerror(errno));
		return KEXIT_IO;
	}
	return 0;
}

int kio_progress_ok(void) { return !klog_quiet() && isatty(STDERR_FILENO); }

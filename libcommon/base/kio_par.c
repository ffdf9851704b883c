/* kio_par: positioned reads and writes, and memcpy, spread over the
 * OpenMP threads in pieces; the pieces' CRCs merged in order. */
#include "kio.h"
#include "kio_internal.h"
#include "klog.h"
#include "kmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

int kio_pread_full(int fd, void *buf, size_t n, uint64_t off)
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

int kio_pread_failed(const kio_in *in, int r, int err, const char *what)
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
	int r = kio_pread_full(in->fd, buf, n, in->base + off);
	return r ? kio_pread_failed(in, r, errno, what) : 0;
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
	int r = kio_pread_full(a->fd, a->buf + at, k, a->off + at);
	if (!r)
		*crc = kio_crc32_serial(0, a->buf + at, k);
	return r;
}

int kio_pread_crc(kio_in *in, void *dst, size_t n, uint64_t off, uint32_t *crc, const char *what)
{
	pio a = {.fd = in->fd, .buf = dst, .off = in->base + off};
	int err = 0, r = run_pieces(n, pread_piece, &a, crc, &err);
	return r ? kio_pread_failed(in, r, err, what) : 0;
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

int kio_map(kio_in *in, size_t n, size_t align, const void **p, void **map, size_t *maplen)
{
	if (!kio_seekable(in) || n == 0)
		return -1;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off = in->base + in->consumed, base = off / page * page;
	if (align > 1 && off % align)
		return -1;
	const size_t len = (size_t)(off + n - base);
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in->fd, (off_t)base);
	if (m == MAP_FAILED)
		return -1;
	/* past the buffered bytes and the rest, as kio_read_crc leaves it */
	size_t k = in->len - in->pos < n ? in->len - in->pos : n;
	in->pos += k;
	in->consumed += n;
	if (k < n && lseek(in->fd, (off_t)(in->base + in->consumed), SEEK_SET) < 0) {
		munmap(m, len);
		kerror("cannot read '%s': %s", in->name, strerror(errno));
		return KEXIT_IO;
	}
	*p = (const unsigned char *)m + (off - base);
	*map = m;
	*maplen = len;
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
		*crc = kio_crc32_serial(0, a->buf + at, k);
	return pwrite_full(a->fd, a->buf + at, k, a->off + at);
}

/*
 * A large write to a file on tmpfs (such as /dev/shm) goes through a shared
 * mapping of its range, each piece's pages populated (MADV_POPULATE_WRITE,
 * which fails with EFAULT where a store would raise SIGBUS: the file system
 * full) and copied on the OpenMP threads, rather than pwrite(2), which tmpfs
 * serves under the inode's lock, one writer at a time (kgen's 32 GiB at
 * scale 28 on a 64-core host: written in 20.3 s by pwrite, 15.5 s so;
 * NOTES.md).  KBFS_IO_MMAP=0 writes by pwrite (the ablation).  -2: not
 * used here (switched off, another file system, a file not open for
 * reading and writing, a kernel without the advice); the caller then
 * writes.
 */
typedef struct mio {
	unsigned char *dst;
	const unsigned char *src;
	int want_crc;
} mio;

static int map_piece(void *arg, size_t at, size_t k, uint32_t *crc)
{
#ifdef MADV_POPULATE_WRITE
	const mio *a = arg;
	uintptr_t pg = 4096, s = (uintptr_t)(a->dst + at) & ~(pg - 1);
	if (madvise((void *)s, (uintptr_t)(a->dst + at + k) - s, MADV_POPULATE_WRITE)) {
		if (errno == EFAULT)
			errno = ENOSPC;
		return -1;
	}
	memcpy(a->dst + at, a->src + at, k);
	if (a->want_crc)
		*crc = kio_crc32_serial(0, a->src + at, k);
	return 0;
#else
	(void)arg, (void)at, (void)k, (void)crc;
	errno = ENOSYS;
	return -1;
#endif
}

static int mmap_write(int fd, const void *buf, size_t n, uint64_t off, uint32_t *crc)
{
#ifdef MADV_POPULATE_WRITE
	const char *v = getenv("KBFS_IO_MMAP");
	struct statfs fs;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if ((v && !strcmp(v, "0")) || n < 2 * KIO_PIECE || fl < 0 || (fl & O_ACCMODE) != O_RDWR || fstatfs(fd, &fs) ||
	    fs.f_type != TMPFS_MAGIC || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -2;
	uint64_t base = off & ~(uint64_t)4095;
	size_t len = (size_t)(off + n - base);
	/* a regular file of this process's, opened for reading and writing (a
	 * mapping needs both): one that cannot be mapped is written as before */
	if ((uint64_t)st.st_size < off + n && ftruncate(fd, (off_t)(off + n)))
		return -1;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
	if (m == MAP_FAILED)
		return -2;
	mio a = {.dst = m + (off - base), .src = buf, .want_crc = crc != NULL};
	int err = 0, r = run_pieces(n, map_piece, &a, crc, &err);
	munmap(m, len);
	if (r) {
		errno = err;
		return -1;
	}
	return 0;
#else
	(void)fd, (void)buf, (void)n, (void)off, (void)crc;
	return -2;
#endif
}

int kio_pwrite_crc(int fd, const void *buf, size_t n, uint64_t off, uint32_t *crc)
{
	int mr = mmap_write(fd, buf, n, off, crc);
	if (mr != -2)
		return mr;
	pio a = {.fd = fd, .buf = (unsigned char *)buf, .off = off, .want_crc = crc != NULL};
	int err = 0, r = run_pieces(n, pwrite_piece, &a, crc, &err);
	if (r)
		errno = err;
	return r ? -1 : 0;
}

/*
 * kpart_write.c: writing a partition -- the rank files (the CSC and the CSR's
 * row offsets, counted on the way: kpart_row_offsets, kpart_csr.c), the
 * manifest and the temporary directory renamed into place (kpart_dir_begin
 * / _commit).  Reading is kpart.c.
 */
#include "kpart.h"
#include "kpart_internal.h"
#include "kio.h"
#include "kfs.h"
#include "ktemp.h"
#include "klog.h"
#include "kmem.h"
#include "kprov.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

/* ---------------------------------------------------------------- writing */

typedef struct wfile {
	FILE *fp;
	const char *name;
	uint32_t crc;
	uint64_t bytes;
	int failed;
	double sync_s; /* wclose: time in fsync(2) */
} wfile;

static int wopen(wfile *w, const char *path, const char *name)
{
	memset(w, 0, sizeof *w);
	w->name = name;
	w->fp = fopen(path, "wb");
	if (!w->fp) {
		kerror("cannot create '%s': %s", name, strerror(errno));
		return KEXIT_IO;
	}
	setvbuf(w->fp, NULL, _IOFBF, 1 << 20);
	return 0;
}

static void wbytes(wfile *w, const void *p, size_t n)
{
	if (w->failed || !n)
		return;
	w->crc = kio_crc32(w->crc, p, n);
	w->bytes += n;
	errno = 0;
	if (fwrite(p, 1, n, w->fp) != n)
		w->failed = errno ? errno : EIO;
}

/* n integers of mw bytes in memory as fw-byte little-endian integers */
static void warray(wfile *w, const void *a, uint64_t n, int mw, int fw)
{
	if (HOST_LE && mw == fw) {
		wbytes(w, a, (size_t)(n * (uint64_t)fw));
		return;
	}
	enum { CH = 1 << 14 };
	unsigned char buf[CH * 8];
	for (uint64_t k0 = 0; k0 < n; k0 += CH) {
		size_t k = n - k0 > CH ? CH : (size_t)(n - k0);
		for (size_t e = 0; e < k; e++) {
			uint64_t v = mw == 8 ? ((const uint64_t *)a)[k0 + e] : ((const uint32_t *)a)[k0 + e];
			if (fw == 8)
				kio_put64(buf + 8 * e, v);
			else
				kio_put32(buf + 4 * e, (uint32_t)v);
		}
		wbytes(w, buf, k * (size_t)fw);
	}
}

static int wclose(wfile *w)
{
	errno = 0;
	int bad = fflush(w->fp);
	double t0 = ktime();
	bad = bad || (fsync(fileno(w->fp)) && errno != EINVAL);
	w->sync_s = ktime() - t0;
	if (bad && !w->failed)
		w->failed = errno ? errno : EIO;
	if (fclose(w->fp) && !w->failed)
		w->failed = errno ? errno : EIO;
	if (w->failed) {
		kerror("cannot write '%s': %s", w->name, strerror(w->failed));
		return KEXIT_IO;
	}
	return 0;
}

/* n integers of mw bytes into dst as fw-byte little-endian integers */
static void put_array(unsigned char *dst, const void *a, uint64_t n, int mw, int fw)
{
	if (HOST_LE && mw == fw) {
		kio_copy_par(dst, a, (size_t)(n * (uint64_t)fw));
		return;
	}
#pragma omp parallel for schedule(static) if (n > 65536)
	for (uint64_t k = 0; k < n; k++) {
		uint64_t v = mw == 8 ? ((const uint64_t *)a)[k] : ((const uint32_t *)a)[k];
		if (fw == 8)
			kio_put64(dst + 8 * k, v);
		else
			kio_put32(dst + 4 * k, (uint32_t)v);
	}
}

static void rank_header(unsigned char *h, const kpart_block *b, uint32_t flags)
{
	const kpart_grid *g = &b->g;
	memset(h, 0, KPART_HEADER_BYTES);
	memcpy(h, kpart_magic, KPART_MAGIC_LEN);
	kio_put16(h + 8, KPART_MAJOR);
	kio_put16(h + 10, KPART_MINOR);
	kio_put32(h + 12, flags);
	kio_put32(h + 16, (uint32_t)g->R);
	kio_put32(h + 20, (uint32_t)g->C);
	kio_put32(h + 24, (uint32_t)b->i);
	kio_put32(h + 28, (uint32_t)b->j);
	kio_put64(h + 32, g->nv);
	kio_put64(h + 40, g->N);
	kio_put64(h + 48, g->nb);
	kio_put64(h + 56, b->ncols);
	kio_put64(h + 64, b->nrows);
	kio_put64(h + 72, b->nnz);
	kio_put32(h + 88, kio_crc32(0, h, 88));
}

static void rank_trailer(unsigned char *t, uint64_t nnz, uint32_t crc)
{
	memcpy(t, "KEND", 4);
	kio_put64(t + 4, nnz);
	kio_put32(t + 12, crc);
	kio_put32(t + 16, kio_crc32(0, t, 16));
}

/* n offsets as ow-byte integers at file offset off, narrowed a slice at a
 * time (no second whole copy) where ow is 4 */
static int pwrite_offsets(int fd, const uint64_t *a, uint64_t n, int ow, uint64_t off, uint32_t *crc)
{
	if (ow == 8)
		return kio_pwrite_crc(fd, a, (size_t)n * 8, off, crc);
	uint64_t CH = n < (UINT64_C(1) << 24) ? n : UINT64_C(1) << 24;
	uint32_t *buf = kmalloc((size_t)CH * 4);
	int bad = 0;
	for (uint64_t k0 = 0; k0 < n && !bad; k0 += CH) {
		size_t k = n - k0 < CH ? (size_t)(n - k0) : (size_t)CH;
		put_array((unsigned char *)buf, a + k0, k, 8, 4);
		bad = kio_pwrite_crc(fd, buf, k * 4, off + 4 * k0, crc);
	}
	free(buf);
	return bad;
}

/* File offsets of a rank file's arrays (kpart(5)) */
typedef struct layout {
	uint64_t colptr, rowidx, rowptr, tdeg, orig, end;
} layout;

static layout layout_of(const kpart_block *b, int ow, uint64_t size)
{
	uint64_t iw = b->idx64 ? 8 : 4;
	layout L = {.colptr = KPART_HEADER_BYTES, .end = size - KPART_TRAILER_BYTES};
	L.rowidx = L.colptr + (uint64_t)ow * (b->ncols + 1);
	L.rowptr = L.rowidx + iw * b->nnz;
	L.tdeg = L.rowptr + (uint64_t)ow * (b->nrows + 1);
	L.orig = L.tdeg + 8 * b->g.nb;
	return L;
}

/* Little-endian host: the rank file, every array from memory with
 * positioned writes on all threads (rp: the row offsets).  0, or KEXIT_IO
 * after kerror(). */
static int write_direct(int fd, const char *name, const kpart_block *b, const uint64_t *rp, uint32_t flags, int ow,
			uint64_t size, uint32_t *crc)
{
	layout L = layout_of(b, ow, size);
	unsigned char h[KPART_HEADER_BYTES], t[KPART_TRAILER_BYTES];
	rank_header(h, b, flags);
	*crc = 0;
	if (kio_pwrite_crc(fd, h, sizeof h, 0, crc) || pwrite_offsets(fd, b->colptr, b->ncols + 1, ow, L.colptr, crc) ||
	    kio_pwrite_crc(fd, b->rowidx, (size_t)b->nnz * (b->idx64 ? 8 : 4), L.rowidx, crc) ||
	    pwrite_offsets(fd, rp, b->nrows + 1, ow, L.rowptr, crc) ||
	    kio_pwrite_crc(fd, b->tdeg, (size_t)b->g.nb * 8, L.tdeg, crc) ||
	    (b->orig && kio_pwrite_crc(fd, b->orig, (size_t)b->g.nb * 8, L.orig, crc)))
		goto fail;
	rank_trailer(t, b->nnz, *crc);
	if (kio_pwrite_crc(fd, t, sizeof t, L.end, crc))
		goto fail;
	return 0;
fail:
	kerror("cannot write '%s': %s", name, strerror(errno));
	return KEXIT_IO;
}

int kpart_write_rank(const char *path, const char *name, const kpart_block *b, int off64, kpart_rankinfo *ri)
{
	off64 = off64 || b->nnz > UINT32_MAX;
	int iw = b->idx64 ? 8 : 4, ow = off64 ? 8 : 4, rc;
	uint32_t flags = (b->idx64 ? KPART_F_IDX64 : 0) | (off64 ? KPART_F_OFF64 : 0) |
			 (b->orig ? KPART_F_ORIG : 0) | (b->relabel ? KPART_F_RELABEL : 0);
	uint64_t size = KPART_HEADER_BYTES + (uint64_t)ow * (b->ncols + b->nrows + 2) + (uint64_t)iw * b->nnz +
			8 * b->g.nb * (b->orig ? 2 : 1) + KPART_TRAILER_BYTES;
	uint64_t *rp = b->rowptr;
	wfile w = {.name = name};
	double csr = 0;
	if (!rp) {
		double t0 = ktime();
		rp = kmalloc(kmul((size_t)b->nrows + 1, 8));
		kpart_row_offsets(b, rp);
		csr = ktime() - t0;
	}
	if (HOST_LE) {
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
		if (fd < 0) {
			kerror("cannot create '%s': %s", name, strerror(errno));
			rc = KEXIT_IO;
			goto out;
		}
		rc = write_direct(fd, name, b, rp, flags, ow, size, &w.crc);
		double t0 = ktime();
		int bad = rc == 0 && fsync(fd) && errno != EINVAL;
		w.sync_s = ktime() - t0;
		if (bad) {
			kerror("cannot write '%s': %s", name, strerror(errno));
			rc = KEXIT_IO;
		}
		if (close(fd) && !rc) {
			kerror("cannot write '%s': %s", name, strerror(errno));
			rc = KEXIT_IO;
		}
		w.bytes = size;
		goto out;
	}
	unsigned char h[KPART_HEADER_BYTES], t[KPART_TRAILER_BYTES];
	rank_header(h, b, flags);
	if ((rc = wopen(&w, path, name)))
		goto out;
	wbytes(&w, h, sizeof h);
	warray(&w, b->colptr, b->ncols + 1, 8, ow);
	warray(&w, b->rowidx, b->nnz, iw, iw);
	warray(&w, rp, b->nrows + 1, 8, ow);
	warray(&w, b->tdeg, b->g.nb, 8, 8);
	if (b->orig)
		warray(&w, b->orig, b->g.nb, 8, 8);
	rank_trailer(t, b->nnz, w.crc);
	wbytes(&w, t, sizeof t);
	rc = wclose(&w);
out:
	if (!rc) {
		KASSERT(w.bytes == size);
		ri->bytes = w.bytes;
		ri->crc = w.crc;
		ri->csr_seconds = csr;
		ri->sync_seconds = w.sync_s;
		ri->nnz = b->nnz;
		uint64_t cols = 0, rows = 0;
#pragma omp parallel for schedule(static) reduction(+ : cols) if (b->ncols > 65536)
		for (uint64_t c = 0; c < b->ncols; c++)
			cols += b->colptr[c + 1] > b->colptr[c];
#pragma omp parallel for schedule(static) reduction(+ : rows) if (b->nrows > 65536)
		for (uint64_t r = 0; r < b->nrows; r++)
			rows += rp[r + 1] > rp[r];
		ri->cols = cols;
		ri->rows = rows;
	}
	if (rp != b->rowptr)
		free(rp);
	return rc;
}

void kpart_manifest_add(kpart_manifest *m, const char *key, const char *fmt, ...)
{
	char raw[8192], val[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	kprov_escape(raw, val, sizeof val); /* one line, whatever a file name holds */
	if ((m->nkeys & (m->nkeys - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
		size_t cap = m->nkeys ? 2 * m->nkeys : 1;
		m->keys = krealloc(m->keys, cap * sizeof *m->keys);
		m->vals = krealloc(m->vals, cap * sizeof *m->vals);
	}
	m->keys[m->nkeys] = kstrdup(key);
	m->vals[m->nkeys++] = kstrdup(val);
}

int kpart_manifest_write(const kpart_manifest *m, const char *path, const char *name, const char *comment,
			 int checksum)
{
	size_t n = strlen(comment) + 4, at = 0;
	for (size_t k = 0; k < m->nkeys; k++)
		n += strlen(m->keys[k]) + strlen(m->vals[k]) + 4;
	char *text = kmalloc(n + 32);
	at += (size_t)sprintf(text, "# %s\n", comment);
	for (size_t k = 0; k < m->nkeys; k++)
		at += (size_t)sprintf(text + at, "%s = %s\n", m->keys[k], m->vals[k]);
	if (checksum)
		at += (size_t)sprintf(text + at, "checksum = %08x\n", (unsigned)kio_crc32(0, text, at));
	wfile w;
	int rc = wopen(&w, path, name);
	if (!rc) {
		wbytes(&w, text, at);
		rc = wclose(&w);
	}
	free(text);
	return rc;
}

static int commit(const char *tmpdir, const char *outdir, int force);

/* The file NAME in the directory dfd begins as kpart writes a manifest. */
static int is_manifest(int dfd, const char *name)
{
	static const char head[] = "# kbfs partition", fmt[] = "\nformat = kpart\n";
	char buf[512];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return !strncmp(buf, head, strlen(head)) && strstr(buf, fmt);
}

/* A kbfs partition, which --force may replace: a directory of nothing but
 * a manifest that says it is one, build-info and rank files; or an empty
 * directory.  0, or KEXIT_IO after kerror() naming what is not ours. */
static int replaceable(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		kerror("cannot replace '%s': %s", dir, strerror(errno));
		return KEXIT_IO;
	}
	int rc = 0, manifest = 0, n = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		const char *f = e->d_name;
		size_t l = strlen(f);
		if (!strcmp(f, ".") || !strcmp(f, ".."))
			continue;
		n++;
		struct stat st;
		int ours = !fstatat(dirfd(d), f, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
			   (!strcmp(f, "manifest") || !strcmp(f, "build-info") ||
			    (l >= 16 && !strncmp(f, "rank-", 5) && strspn(f + 5, "0123456789") == l - 11 &&
			     !strcmp(f + l - 6, ".kpart")));
		if (ours && !strcmp(f, "manifest"))
			ours = manifest = is_manifest(dirfd(d), f);
		if (!ours) {
			kerror("refusing to replace '%s': not a kbfs partition (it holds '%s')", dir, f);
			rc = KEXIT_IO;
		}
	}
	closedir(d);
	if (!rc && n && !manifest) {
		kerror("refusing to replace '%s': not a kbfs partition (no manifest)", dir);
		rc = KEXIT_IO;
	}
	return rc;
}

int kpart_dir_begin(char *outdir, int force, char *tmpdir, size_t len)
{
	size_t n = strlen(outdir);
	while (n > 1 && outdir[n - 1] == '/')
		outdir[--n] = 0;
	struct stat st;
	if (lstat(outdir, &st) == 0) {
		if (!force) {
			kerror("cannot create '%s': File exists (use --force to replace it)", outdir);
			return KEXIT_IO;
		}
		if (!S_ISDIR(st.st_mode)) {
			kerror("refusing to replace '%s': not a kbfs partition (not a directory)", outdir);
			return KEXIT_IO;
		}
		int rc = replaceable(outdir);
		if (rc)
			return rc;
	}
	char *tmp;
	if (ktemp_mkdir(outdir, &tmp)) {
		kerror("cannot create '%s': %s", outdir, strerror(errno));
		*tmpdir = 0;
		return KEXIT_IO;
	}
	if (strlen(tmp) >= len) {
		kerror("cannot create '%s': %s", outdir, strerror(ENAMETOOLONG));
		ktemp_remove(tmp);
		free(tmp);
		*tmpdir = 0;
		return KEXIT_IO;
	}
	strcpy(tmpdir, tmp);
	free(tmp);
	return 0;
}

int kpart_dir_commit(const char *tmpdir, const char *outdir, int force)
{
	int rc = kfs_sync_path(tmpdir);
	if (!rc)
		rc = commit(tmpdir, outdir, force);
	if (!rc)
		rc = kfs_sync_parent(outdir);
	return rc;
}

/* Without force an outdir that appeared while we built (another kpart's)
 * is never replaced: the rename itself refuses to. */
static int commit(const char *tmpdir, const char *outdir, int force)
{
	struct stat st;
	if (!force) {
#ifdef RENAME_NOREPLACE
		if (!renameat2(AT_FDCWD, tmpdir, AT_FDCWD, outdir, RENAME_NOREPLACE))
			return 0;
		if (errno != EINVAL && errno != ENOSYS) {
			kerror("cannot create '%s': %s%s", outdir, strerror(errno),
			       errno == EEXIST ? " (made meanwhile by another process; use --force to replace it)" : "");
			return KEXIT_IO;
		}
#endif
		if (!lstat(outdir, &st)) {
			kerror("cannot create '%s': %s (made meanwhile by another process; use --force to replace it)",
			       outdir, strerror(EEXIST));
			return KEXIT_IO;
		}
	}
	if (lstat(outdir, &st)) {
		if (rename(tmpdir, outdir)) {
			kerror("cannot rename '%s' to '%s': %s", tmpdir, outdir, strerror(errno));
			return KEXIT_IO;
		}
		return 0;
	}
	/* what we replace is still a partition (looked at again: the build
	 * may have taken hours) */
	if (!S_ISDIR(st.st_mode)) {
		kerror("refusing to replace '%s': not a kbfs partition (not a directory)", outdir);
		return KEXIT_IO;
	}
	if (replaceable(outdir))
		return KEXIT_IO;
#ifdef RENAME_EXCHANGE
	if (renameat2(AT_FDCWD, tmpdir, AT_FDCWD, outdir, RENAME_EXCHANGE) == 0) {
		kfs_rmtree(tmpdir); /* the old one now */
		return 0;
	}
#endif
	/* the old one moved aside to a temporary of ours (an empty directory
	 * that the rename replaces), then removed */
	char *old;
	int rc = KEXIT_IO;
	if (ktemp_mkdir(outdir, &old)) {
		kerror("cannot replace '%s': %s", outdir, strerror(errno));
		return rc;
	}
	if (rename(outdir, old)) {
		kerror("cannot replace '%s': %s", outdir, strerror(errno));
		ktemp_remove(old);
	} else if (rename(tmpdir, outdir)) {
		kerror("cannot rename '%s' to '%s': %s", tmpdir, outdir, strerror(errno));
		if (rename(old, outdir)) {
			kerror("the old '%s' is now '%s'", outdir, old);
			ktemp_done(old); /* kept, and never taken for a dead run's */
		} else {
			ktemp_remove(old);
		}
	} else {
		rc = 0;
		ktemp_remove(old);
	}
	free(old);
	return rc;
}

/* kio_out: output streams: standard output, a device or pipe written in
 * place, or a file written to a temporary sibling (ktemp.h) renamed over
 * it once complete (kio_commit). */
#include "kfs.h"
#include "kio.h"
#include "kio_internal.h"
#include "klog.h"
#include "kmem.h"
#include "ktemp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* a failed write to standard output has been reported (kio_commit of "-") */
static int stdout_failed;

struct kio_out {
	char *name;
	char *tmp; /* NULL for stdout */
	FILE *fp;
	int failed;
	int direct; /* a device or pipe opened in place */
};

/* A write to o failed: said once, with errno's reason. */
static void write_failed(kio_out *o)
{
	kerror("cannot write '%s': %s", o->name, strerror(errno ? errno : EIO));
	o->failed = 1;
	if (!o->tmp && !o->direct)
		stdout_failed = 1; /* kio_close_stdout says no more */
}

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
		kio_pipe_grow(STDOUT_FILENO);
		return o;
	}
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		kerror("cannot write '%s': Is a directory", path);
		free(o);
		return NULL;
	}
	if (exists && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		kerror("cannot write '%s': not a regular file, a character device or a pipe", path);
		free(o);
		return NULL;
	}
	o->name = kstrdup(path);
	if (exists && !S_ISREG(st.st_mode)) {
		/* a character device or a pipe (/dev/null, a terminal, a fifo):
		 * written in place; every file, wherever it is (/dev/shm, a
		 * tmpfs), goes by a temporary */
		o->fp = fopen(path, "wb");
		if (!o->fp) {
			kerror("cannot open '%s': %s", path, strerror(errno));
			free(o->name);
			free(o);
			return NULL;
		}
		o->direct = 1;
		kio_pipe_grow(fileno(o->fp));
		return o;
	}
	/* a link is followed, so the file it names is replaced, not the link */
	char *real = NULL;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (real = realpath(path, NULL))) {
		free(o->name);
		o->name = real;
	}
	int fd = ktemp_create(o->name, &o->tmp);
	if (fd < 0) {
		kerror("cannot create '%s': %s", path, strerror(errno));
		free(o->name);
		free(o);
		return NULL;
	}
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
		write_failed(o);
		return KEXIT_IO;
	}
	return 0;
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
		write_failed(o);
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
		write_failed(o);
		return KEXIT_IO;
	}
	return 0;
}

/* Outputs written and synced, still under their temporary names, while a
 * run holds its commits (kio_hold_commits). */
typedef struct held {
	char *tmp, *name;
} held;
static held *heldv;
static size_t nheld, capheld;
static int holding;

void kio_hold_commits(void)
{
	holding = 1;
	/* each held output keeps its lock open: room for many */
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int kio_release_commits(int ok)
{
	int rc = 0;
	for (size_t k = 0; k < nheld; k++) {
		held *h = &heldv[k];
		if (ok && !rc && rename(h->tmp, h->name)) {
			kerror("cannot rename '%s' to '%s': %s", h->tmp, h->name, strerror(errno));
			rc = KEXIT_IO;
		} else if (ok && !rc) {
			rc = kfs_sync_parent(h->name);
			ktemp_done(h->tmp);
		}
		if (!ok || rc)
			ktemp_remove(h->tmp);
		free(h->tmp);
		free(h->name);
	}
	free(heldv);
	heldv = NULL;
	nheld = capheld = 0;
	holding = 0;
	return rc;
}

int kio_commit(kio_out *o)
{
	int rc = o->failed ? KEXIT_IO : 0;
	if (!o->tmp) {
		/* a write that failed on the way (a writer's own fprintf) shows
		 * in the stream's error flag, its errno still in errno */
		if (!rc && (fflush(o->fp) || ferror(o->fp))) {
			kerror("cannot write '%s': %s", o->name, strerror(errno ? errno : EIO));
			rc = KEXIT_IO;
		}
		if (o->direct && fclose(o->fp) && !rc) {
			kerror("cannot write '%s': %s", o->name, strerror(errno ? errno : EIO));
			rc = KEXIT_IO;
		}
		if (rc && !o->direct)
			stdout_failed = 1; /* said once: kio_close_stdout says no more */
		free(o->name);
		free(o);
		return rc;
	}
	/* on disk before it has its name; renamed while its lock is held, so
	 * no sweep of stale temporaries can take it meanwhile */
	if (!rc && (fflush(o->fp) || ferror(o->fp) || (fsync(fileno(o->fp)) && errno != EINVAL))) {
		kerror("cannot write '%s': %s", o->name, strerror(errno ? errno : EIO));
		rc = KEXIT_IO;
	}
	if (holding) {
		/* kept under its temporary name (and lock) until the run's end */
		if (fclose(o->fp) && !rc) {
			kerror("cannot write '%s': %s", o->name, strerror(errno));
			rc = KEXIT_IO;
		}
		if (rc) {
			ktemp_remove(o->tmp);
			free(o->tmp);
			free(o->name);
		} else {
			if (nheld == capheld) {
				capheld = capheld ? 2 * capheld : 16;
				heldv = krealloc(heldv, kmul(capheld, sizeof *heldv));
			}
			heldv[nheld++] = (held){o->tmp, o->name};
		}
		free(o);
		return rc;
	}
	if (!rc && rename(o->tmp, o->name)) {
		kerror("cannot rename '%s' to '%s': %s", o->tmp, o->name, strerror(errno));
		rc = KEXIT_IO;
	}
	int renamed = !rc;
	if (!rc)
		rc = kfs_sync_parent(o->name);
	if (fclose(o->fp) && !rc) {
		kerror("cannot write '%s': %s", o->name, strerror(errno));
		rc = KEXIT_IO;
	}
	if (rc)
		unlink(renamed ? o->name : o->tmp);
	ktemp_done(o->tmp);
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
		ktemp_remove(o->tmp);
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
	if (stdout_failed) {
		fclose(stdout);
		return KEXIT_IO;
	}
	if (fflush(stdout) || ferror(stdout) || fclose(stdout)) {
		if (errno == EPIPE)
			return 0;
		kerror("cannot write standard output: %s", strerror(errno ? errno : EIO));
		return KEXIT_IO;
	}
	return 0;
}


/* kfs: file-system helpers (kfs.h). */
#include "kfs.h"
#include "klog.h"
#include "kmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

char *kfs_join(const char *dir, const char *name)
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

int kfs_rmtree(const char *path) { return rmtree_at(AT_FDCWD, path, 0); }

char *kfs_dirname(const char *path, const char **base)
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

int kfs_sync_parent(const char *path)
{
	const char *base;
	char *dir = kfs_dirname(path, &base);
	int rc = kfs_sync_path(dir);
	free(dir);
	return rc;
}

int kfs_sync_path(const char *path)
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

/* path with the directory holding it resolved (kmalloc'd), or NULL when
 * that directory does not exist */
static char *resolved(const char *path)
{
	const char *base;
	char *dir = kfs_dirname(path, &base), *rdir = realpath(dir, NULL), *r = NULL;
	if (rdir)
		r = !*base || !strcmp(base, ".") ? kstrdup(rdir) : kfs_join(!strcmp(rdir, "/") ? "" : rdir, base);
	free(rdir);
	free(dir);
	return r;
}

int kfs_same(const char *a, const char *b)
{
	struct stat sa, sb;
	int ea = !stat(a, &sa), eb = !stat(b, &sb);
	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ea || eb)
		return 0;
	char *ra = resolved(a), *rb = resolved(b);
	int same = ra && rb && !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}

int kfs_in_dir(const char *path, const char *dir)
{
	const char *base;
	char *parent = kfs_dirname(path, &base);
	struct stat sd;
	int in = (stat(dir, &sd) || S_ISDIR(sd.st_mode)) && kfs_same(parent, dir);
	free(parent);
	return in;
}

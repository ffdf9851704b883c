/* ktemp: the temporaries of this process, and those a dead run left
 * (ktemp.h). */
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "ktemp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Paths to remove when the program dies.  Read by the fatal-signal handler,
 * so a slot is emptied before its string is freed, and the handler itself
 * only makes system calls (kfs_rmtree allocates nothing). */
static char *volatile pending[64];
static volatile int npending;

static void cleanup_all(void)
{
	for (int i = 0; i < npending; i++) {
		char *p = pending[i];
		if (p)
			kfs_rmtree(p);
	}
}

void ktemp_register(const char *path)
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

void ktemp_unregister(const char *path)
{
	for (int i = 0; i < npending; i++) {
		char *p = pending[i];
		if (p && !strcmp(p, path)) {
			pending[i] = NULL;
			free(p);
		}
	}
}

int ktemp_hold(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void ktemp_release(int fd)
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


void ktemp_sweep_stale(const char *path)
{
	const char *base;
	char *dir = kfs_dirname(path, &base);
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
		    now - st.st_mtime < KTEMP_STALE_SECONDS)
			continue;
		char *p = kfs_join(dir, e->d_name);
		int fd = ktemp_hold(p);
		if (fd >= 0) {
			kinfo("removing '%s', left by a run that died", p);
			kfs_rmtree(p);
			ktemp_release(fd);
		}
		free(p);
	}
	closedir(d);
	free(dir);
}

int ktemp_create(const char *name, char **tmp)
{
	ktemp_sweep_stale(name);
	size_t n = strlen(name) + 16;
	*tmp = kmalloc(n);
	snprintf(*tmp, n, "%s.tmp.XXXXXX", name);
	int fd = mkstemp(*tmp);
	if (fd < 0) {
		int err = errno;
		free(*tmp);
		*tmp = NULL;
		errno = err;
		return -1;
	}
	flock(fd, LOCK_EX | LOCK_NB); /* held until committed: this temporary is alive */
	fchmod(fd, 0644 & ~umask(umask(0)));
	ktemp_register(*tmp);
	return fd;
}

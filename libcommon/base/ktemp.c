/* ktemp: the temporaries of this process, and those a dead run left
 * (ktemp.h). */
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"
#include "ktemp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_SUFFIX ".lock"
#define LOCK_MAGIC "kbfs-tmp 1\n"
enum { CHUNK = 64, MAXLOCK = 1024 };

/* Paths to remove when the program dies, each with its lock (or NULL) and
 * the lock's descriptor, in chunks of CHUNK slots linked as they are
 * needed (a run may hold many outputs until it commits them together).
 * Read by the fatal-signal handler, so a slot is emptied before its
 * strings are freed, a chunk is filled before it is linked, and the
 * handler itself only makes system calls (kfs_rmtree allocates nothing). */
typedef struct chunk {
	char *volatile path[CHUNK], *volatile lock[CHUNK];
	int fd[CHUNK];
	struct chunk *volatile next;
} chunk;
static chunk first;

static void cleanup_all(void)
{
	for (chunk *c = &first; c; c = c->next)
		for (int i = 0; i < CHUNK; i++) {
			char *p = c->path[i], *l = c->lock[i];
			if (p)
				kfs_rmtree(p);
			if (p && l)
				unlink(l);
		}
}

static void add(const char *path, char *lock, int fd)
{
	klog_atdie(cleanup_all);
	char *copy = kstrdup(path);
	for (chunk *c = &first;; c = c->next) {
		for (int i = 0; i < CHUNK; i++)
			if (!c->path[i]) {
				c->fd[i] = fd;
				c->lock[i] = lock;
				c->path[i] = copy;
				return;
			}
		if (!c->next) {
			chunk *n = kcalloc(1, sizeof *n);
			n->fd[0] = fd;
			n->lock[0] = lock;
			n->path[0] = copy;
			c->next = n;
			return;
		}
	}
}

void ktemp_register(const char *path)
{
	if (path)
		add(path, NULL, -1);
}

void ktemp_unregister(const char *path)
{
	for (chunk *c = &first; c; c = c->next)
		for (int i = 0; i < CHUNK; i++) {
			char *p = c->path[i], *l = c->lock[i];
			if (p && !strcmp(p, path)) {
				c->path[i] = NULL;
				c->lock[i] = NULL;
				if (l) {
					unlink(l); /* while still held: no sweep can take it */
					close(c->fd[i]);
				}
				free(p);
				free(l);
			}
		}
}

void ktemp_done(const char *tmp)
{
	if (tmp)
		ktemp_unregister(tmp);
}

void ktemp_remove(const char *tmp)
{
	if (!tmp)
		return;
	kfs_rmtree(tmp);
	ktemp_done(tmp);
}

/* KTEMP_MARK and six letters or digits at name[at] */
static int mark_at(const char *name, size_t at)
{
	if (strncmp(name + at, KTEMP_MARK, strlen(KTEMP_MARK)))
		return 0;
	const char *x = name + at + strlen(KTEMP_MARK);
	for (int k = 0; k < 6; k++)
		if (!((x[k] >= 'A' && x[k] <= 'Z') || (x[k] >= 'a' && x[k] <= 'z') || (x[k] >= '0' && x[k] <= '9')))
			return 0;
	return 1;
}

int ktemp_is_temp_name(const char *name)
{
	for (const char *p = name; (p = strstr(p, KTEMP_MARK)); p++)
		if (mark_at(name, (size_t)(p - name)))
			return 1;
	return 0;
}

/* The lock, made and held, then the temporary (a directory when dir) of
 * the same name less ".lock": 0 with *tmp, *lock and *fd (the temporary's
 * descriptor for a file), or -1 with errno set. */
static int make(const char *name, int dir, char **tmp, char **lock, int *fd)
{
	size_t n = strlen(name) + strlen(KTEMP_MARK) + 6 + strlen(LOCK_SUFFIX) + 1;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	*lock = kmalloc(n);
	*tmp = kmalloc(n);
	for (int tries = 0; tries < 100; tries++) {
		snprintf(*lock, n, "%s" KTEMP_MARK "XXXXXX" LOCK_SUFFIX, name);
		int lfd = mkostemps(*lock, (int)strlen(LOCK_SUFFIX), O_CLOEXEC);
		if (lfd < 0)
			break;
		/* a lock nobody else can have yet; where the file system has no
		 * flock, no sweep can prove it dead either */
		flock(lfd, LOCK_EX | LOCK_NB);
		char text[MAXLOCK];
		int len = snprintf(text, sizeof text, LOCK_MAGIC "kind=%s\npid=%ld\nhost=%s\nprogram=%s\n",
				   dir ? "dir" : "file", (long)getpid(), host, klog_prog());
		if (len <= 0 || len >= (int)sizeof text || write(lfd, text, (size_t)len) != len) {
			int err = errno;
			unlink(*lock);
			close(lfd);
			errno = err ? err : EIO;
			break;
		}
		memcpy(*tmp, *lock, n - strlen(LOCK_SUFFIX) - 1);
		(*tmp)[n - strlen(LOCK_SUFFIX) - 1] = 0;
		int r = dir ? mkdir(*tmp, 0777) : (*fd = open(*tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
		if (r >= 0) {
			add(*tmp, *lock, lfd);
			return 0;
		}
		int err = errno;
		unlink(*lock);
		close(lfd);
		errno = err;
		if (err != EEXIST)
			break;
	}
	int err = errno;
	free(*lock);
	free(*tmp);
	*lock = *tmp = NULL;
	errno = err;
	return -1;
}

int ktemp_create(const char *name, char **tmp)
{
	ktemp_sweep_stale(name);
	char *lock;
	int fd = -1;
	return make(name, 0, tmp, &lock, &fd) ? -1 : fd;
}

int ktemp_mkdir(const char *name, char **tmp)
{
	ktemp_sweep_stale(name);
	char *lock;
	int fd = -1;
	return make(name, 1, tmp, &lock, &fd);
}

/* The value of "key=" in a lock's text, copied into out: 0, or -1. */
static int lock_field(const char *text, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			return -1;
		if (!strncmp(p, key, kl) && p[kl] == '=' && (size_t)(eol - p) - kl - 1 < cap) {
			memcpy(out, p + kl + 1, (size_t)(eol - p) - kl - 1);
			out[eol - p - (long)kl - 1] = 0;
			return 0;
		}
		p = eol + 1;
	}
	return -1;
}

/* The lock LOCK (a name in the directory dfd) and its temporary TMP, if
 * they are a dead kbfs run's: removed.  Anything that does not prove it
 * leaves both alone. */
static void sweep_one(int dfd, const char *dir, const char *lock, const char *tmp, time_t now)
{
	int fd = openat(dfd, lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st, now_st, tst;
	char text[MAXLOCK], kind[8], pid[32], host[256], me[256] = "";
	ssize_t len;
	int dead = 0;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < MAXLOCK && now - st.st_mtime >= KTEMP_STALE_SECONDS &&
	    !flock(fd, LOCK_EX | LOCK_NB) &&
	    /* still the file of that name (not one another sweep removed) */
	    !fstatat(dfd, lock, &now_st, AT_SYMLINK_NOFOLLOW) && now_st.st_ino == st.st_ino &&
	    now_st.st_dev == st.st_dev && (len = pread(fd, text, sizeof text - 1, 0)) > 0) {
		text[len] = 0;
		uint64_t p = 0;
		const char *end;
		gethostname(me, sizeof me - 1);
		dead = !strncmp(text, LOCK_MAGIC, strlen(LOCK_MAGIC)) && !lock_field(text, "kind", kind, sizeof kind) &&
		       !lock_field(text, "pid", pid, sizeof pid) && !lock_field(text, "host", host, sizeof host) &&
		       knum_u64(pid, &end, &p) == KNUM_OK && !*end && p > 0 && p <= INT_MAX;
		/* on this host the writer's process must be gone too */
		if (dead && !strcmp(host, me) && (kill((pid_t)p, 0) == 0 || errno != ESRCH))
			dead = 0;
	}
	if (dead && !fstatat(dfd, tmp, &tst, AT_SYMLINK_NOFOLLOW)) {
		int isdir = !strcmp(kind, "dir");
		/* the kind the lock names, and untouched for as long */
		if ((isdir ? !S_ISDIR(tst.st_mode) : (strcmp(kind, "file") || !S_ISREG(tst.st_mode))) ||
		    now - tst.st_mtime < KTEMP_STALE_SECONDS) {
			dead = 0;
		} else {
			char *path = kfs_join(dir, tmp);
			kinfo("removing '%s', left by a run that died", path);
			if (kfs_rmtree(path) && errno != ENOENT)
				dead = 0;
			free(path);
		}
	}
	if (dead)
		unlinkat(dfd, lock, 0);
	close(fd);
}

void ktemp_sweep_stale(const char *path)
{
	const char *base;
	char *dir = kfs_dirname(path, &base);
	size_t bl = strlen(base), ll = strlen(LOCK_SUFFIX), ml = strlen(KTEMP_MARK) + 6;
	DIR *d = bl ? opendir(dir) : NULL;
	if (!d) {
		free(dir);
		return;
	}
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		/* "BASE.kbfs-tmp-XXXXXX.lock" exactly */
		size_t n = strlen(e->d_name);
		if (n != bl + ml + ll || strncmp(e->d_name, base, bl) || !mark_at(e->d_name, bl) ||
		    strcmp(e->d_name + bl + ml, LOCK_SUFFIX))
			continue;
		char tmp[512];
		if (bl + ml >= sizeof tmp)
			continue;
		memcpy(tmp, e->d_name, bl + ml);
		tmp[bl + ml] = 0;
		sweep_one(dirfd(d), dir, e->d_name, tmp, now);
	}
	closedir(d);
	free(dir);
}

/*
 * ktemp: the temporary files and directories of this process, and those
 * a dead run left behind (git's tempfile.h and lockfile.h in one small
 * contract).
 *
 * Every output is made under a temporary sibling of its name,
 * "NAME.tmp.XXXXXX" (a file from ktemp_create for kio_open_out, or a
 * directory kpart makes), and renamed over NAME once complete.  While it
 * is being written:
 *  - it is registered: kdie(), a fatal signal (klog.h's cleanups) and
 *    kio_abort remove every registered path, so a failed run never leaves
 *    a half-written file; ktemp_unregister once it has its name;
 *  - its writer holds an exclusive flock(2) on it (ktemp_hold), so another
 *    process can tell a live temporary from a dead run's.
 * A run killed by SIGKILL (or a crash) removes nothing; the next writer of
 * NAME does (ktemp_sweep_stale): the siblings NAME.tmp.XXXXXX and
 * NAME.old.XXXXXX that nobody holds and that were not touched for
 * KTEMP_STALE_SECONDS.
 * Callers: kio_out.c (atomic output files) and kpart's directories
 * (kpart_write.c, kpart_build.c).
 */
#ifndef KTEMP_H
#define KTEMP_H

#define KTEMP_STALE_SECONDS 10

/* The temporary file for NAME: the stale ones swept, "NAME.tmp.XXXXXX"
 * created (mode 0644 less the umask), held and registered; *tmp gets its
 * name (kmalloc'd).  The descriptor, or -1 with errno set (*tmp NULL). */
int ktemp_create(const char *name, char **tmp);
/* Register a path (file or directory tree) to remove if we die; NULL-safe.
 * At most 64 at a time. */
void ktemp_register(const char *path);
void ktemp_unregister(const char *path);
/* Remove the stale temporaries of PATH (see above). */
void ktemp_sweep_stale(const char *path);
/* Open PATH and hold an exclusive flock on it: the fd, or -1 when it is
 * missing or held by someone else.  ktemp_release closes it. */
int ktemp_hold(const char *path);
void ktemp_release(int fd);

#endif

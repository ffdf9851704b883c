/*
 * ktemp: the temporary files and directories of this process, and those
 * a dead run of kbfs left behind (git's tempfile.h and lockfile.h in one
 * small contract).
 *
 * Every output is made under a temporary sibling of its name and renamed
 * over NAME once complete.  A temporary comes with a lock file beside it
 * that proves whose it is:
 *     NAME.kbfs-tmp-XXXXXX        the temporary (a file, or kpart's directory)
 *     NAME.kbfs-tmp-XXXXXX.lock   "kbfs-tmp 1" and the writer's kind, pid,
 *                                 host and program, one key=value a line
 * (XXXXXX: mkstemp's six letters or digits).  The lock is made first and
 * its writer holds an exclusive flock(2) on it until the temporary has its
 * final name or is gone, then removes it.  While a temporary is being
 * written it is registered: kdie(), a fatal signal (klog.h's cleanups) and
 * kio_abort remove it and its lock, so a failed run never leaves a
 * half-written file.
 *
 * A run killed by SIGKILL (or a crash) removes nothing; the next writer of
 * NAME does (ktemp_sweep_stale), and only what it can prove a dead kbfs
 * made: a lock named as above whose content is a kbfs lock, that nobody
 * holds, whose process is gone when it ran on this host, and whose
 * temporary (of the kind the lock names) and lock were not touched for
 * KTEMP_STALE_SECONDS.  Nothing else beside an output is ever removed: a
 * user's "g.kg.old.backup" or "run.json.tmp.2024ab/" is not ours.
 * Callers: kio_out.c (atomic output files) and kpart's directories
 * (kpart_write.c, kpart_build.c).
 */
#ifndef KTEMP_H
#define KTEMP_H

#define KTEMP_STALE_SECONDS 10
/* What every temporary's name holds after its output's name. */
#define KTEMP_MARK ".kbfs-tmp-"

/* The temporary file for NAME: the stale ones swept, its lock made and
 * held, "NAME.kbfs-tmp-XXXXXX" created (mode 0644 less the umask) and
 * registered; *tmp gets its name (kmalloc'd).  The descriptor, or -1 with
 * errno set (*tmp NULL). */
int ktemp_create(const char *name, char **tmp);
/* The same for a temporary directory (mode 0777 less the umask): 0, or -1
 * with errno set. */
int ktemp_mkdir(const char *name, char **tmp);
/* The temporary TMP (from ktemp_create or ktemp_mkdir) has its final name,
 * or is gone: its lock removed and released, nothing registered. */
void ktemp_done(const char *tmp);
/* Remove the temporary TMP (a tree), then ktemp_done. */
void ktemp_remove(const char *tmp);
/* Register a path (file or directory tree) to remove if we die; NULL-safe.
 * (kpart's other ranks register rank 0's temporary directory this way.) */
void ktemp_register(const char *path);
void ktemp_unregister(const char *path);
/* Remove the stale temporaries of PATH (see above). */
void ktemp_sweep_stale(const char *path);
/* 1 if NAME (a file name without its directory) is a kbfs temporary or
 * its lock: it holds KTEMP_MARK followed by six letters or digits. */
int ktemp_is_temp_name(const char *name);

#endif

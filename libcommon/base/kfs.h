/*
 * kfs: file-system helpers: a path joined, a directory's part of a path,
 * a tree removed, a file or directory synced to disk.
 * Errors are reported with kerror() naming the path and the reason where
 * a function returns a KEXIT_* code; kfs_rmtree says nothing (it may run
 * in a fatal-signal handler).
 */
#ifndef KFS_H
#define KFS_H

/* "dir/name", kmalloc'd. */
char *kfs_join(const char *dir, const char *name);
/* The directory part of path (kmalloc'd: ".", "/" or the prefix); *base
 * is set to the name after it. */
char *kfs_dirname(const char *path, const char **base);
/* rm -rf PATH (used for temporary directories): 0, or -1 with errno set;
 * allocates nothing, so the fatal-signal cleanup may call it. */
int kfs_rmtree(const char *path);
/* fsync PATH (a file or directory), or the directory holding PATH: 0 or
 * KEXIT_IO after kerror (a file system that cannot sync a directory is not
 * an error). */
int kfs_sync_path(const char *path);
int kfs_sync_parent(const char *path);
/* 1 when a and b name the same file or directory: the same inode where
 * both exist, else the same path once the directories holding them are
 * resolved (realpath), so that an output not yet made is compared too. */
int kfs_same(const char *a, const char *b);
/* 1 when path is an entry of the directory dir (its parent is dir, as
 * kfs_same tells: dir need not exist yet). */
int kfs_in_dir(const char *path, const char *dir);

#endif

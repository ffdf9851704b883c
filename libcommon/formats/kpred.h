/*
 * kpred: predecessor (BFS tree) files, written by kbfs --pred-out and read
 * by kvalidate.  Documented in kpred(5).
 *
 * A predecessor map lists, for vertices of the input graph, their parent in
 * the search tree, in the input's own ids: -1 for an unreached vertex, the
 * root its own parent.  Two encodings, told apart by the first bytes (never
 * by the file name):
 *
 *   text    one "v parent" line per vertex, decimal, parent -1 when
 *           unreached; lines starting with '#' are comments, blank lines are
 *           ignored; a comment "# root R" names the root.  This is also the
 *           layout of the Graph500 reference's parent dumps, so those are
 *           read as they are.  gzip'd text is inflated transparently.
 *   binary  (all integers little-endian)
 *             magic   89 4B 50 52 44 0D 0A 1A  ("\x89KPRD\r\n\x1a")
 *             u16 major, u16 minor
 *             u64 count, u64 root (UINT64_MAX: not recorded)
 *             count x (u64 v, i64 parent)
 *             u32 CRC32 of every byte before it
 *           A newer major version, a bad CRC, a truncated file or bytes
 *           after the CRC are refused.
 *
 * Who calls: kbfs (kpred_write), kvalidate (kpred_list_add, kpred_read
 * through kval) and the tests (kpred_read).
 * Errors are reported with kerror() ("'FILE': reason" or "FILE:LINE:
 * reason", one line) and returned as KEXIT_* codes: KEXIT_DATA for a
 * truncated, corrupt or malformed file, KEXIT_IO for a system error.
 * The reader checks the encoding only; whether the map is a valid BFS tree
 * is kval's business (a parent < -1 is read and left to rule (a)).
 */
#ifndef KPRED_H
#define KPRED_H

#include <stddef.h>
#include <stdint.h>

#define KPRED_MAJOR 1
#define KPRED_MINOR 0
#define KPRED_MAGIC_LEN 8
extern const unsigned char kpred_magic[KPRED_MAGIC_LEN];

/* Write n entries (v[k], parent[k]) to PATH atomically ("-" = stdout),
 * binary (kpred(5)) or text.  root is recorded in either encoding
 * (UINT64_MAX: none).  Returns 0 or a KEXIT code after kerror(). */
int kpred_write(const char *path, int binary, uint64_t root, uint64_t n, const uint64_t *v, const int64_t *parent);

/* Read PATH ("-" = stdin) in either encoding.  *root is the recorded root,
 * UINT64_MAX when the file does not say.  *v and *parent (n entries, in
 * file order) are allocated here; the caller frees them.  Returns 0 or a
 * KEXIT code after kerror() (then nothing is allocated). */
int kpred_read(const char *path, uint64_t *root, uint64_t *n, uint64_t **v, int64_t **parent);

/* The predecessor files named on a command line. */
typedef struct kpred_list {
	char **v;
	size_t n, cap;
} kpred_list;
/* Add arg to l: a directory as its pred-* files (kbfs temporaries skipped,
 * in version order), anything else ("-" and a pipe included) as it is.
 * Returns 0, or a KEXIT code after kerror() (a directory that cannot be
 * read, has no pred-* file, or a pred-* that is not a regular file: the
 * others are added all the same). */
int kpred_list_add(kpred_list *l, const char *arg);
void kpred_list_free(kpred_list *l);

/* 1 if the first n bytes start with the binary magic. */
int kpred_is_magic(const void *buf, size_t n);

#endif

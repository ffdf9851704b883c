/*
 * kmagic: what a file is, told from its first bytes (never from its name),
 * in one place as htslib's hts_detect_format: programs ask kmagic_detect
 * which reader to hand a path to (kstat: a partition, run records or a
 * graph; kdist: an edge file or a text graph), and readers that expect
 * text name what they were handed instead (kmagic_binary).  Each reader
 * still checks its own format in full.
 */
#ifndef KMAGIC_H
#define KMAGIC_H

#include <stddef.h>

enum kmagic_kind {
	KMAGIC_OTHER,  /* text, or nothing kbfs reads by its magic */
	KMAGIC_DIR,    /* a directory (a kpart partition) */
	KMAGIC_KEDGE,  /* a kbfs edge file (kedge(5)) */
	KMAGIC_KPRED,  /* a kbfs predecessor file (kpred(5), binary) */
	KMAGIC_KPART,  /* a kpart rank file */
	KMAGIC_GZIP,   /* gzip data (looked at as it is, not inflated) */
	KMAGIC_JSON,   /* '{' after white space: a kbfs run record */
	KMAGIC_BINARY, /* other data with a NUL byte */
};

/* Kind of the n bytes at the start of a file (n short of the file: a
 * start of white space is KMAGIC_OTHER). */
int kmagic_kind(const void *buf, size_t n);
/* Kind of path: a directory, or its first bytes ("-", a pipe or any other
 * file that is not regular is not read, since it cannot be looked at
 * without being consumed: KMAGIC_OTHER).  Returns 0, or KEXIT_IO after kerror() ("cannot open
 * 'x': reason") when path cannot be read. */
int kmagic_detect(const char *path, int *kind);
/* NULL when buf[0, n) looks like text (no NUL byte); otherwise what it is:
 * "a kbfs edge file", "a kbfs predecessor file", "a kpart rank file" or
 * "binary data". */
const char *kmagic_binary(const void *buf, size_t n);
/* Bytes of the start of a file kmagic_binary looks at. */
#define KMAGIC_WINDOW 4096

#endif

/*
 * kmagic: what a file is, from its first bytes, for the messages of readers
 * that expect text (edge lists, roots files) and are handed something else.
 */
#ifndef KMAGIC_H
#define KMAGIC_H

#include <stddef.h>

/* NULL when buf[0, n) looks like text (no NUL byte); otherwise what it is:
 * "a kbfs edge file", "a kbfs predecessor file", "a kpart rank file" or
 * "binary data". */
const char *kmagic_binary(const void *buf, size_t n);
/* Bytes of the start of a file kmagic_binary looks at. */
#define KMAGIC_WINDOW 4096

#endif

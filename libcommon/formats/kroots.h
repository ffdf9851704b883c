/*
 * kroots: the roots file kbfs --roots reads (kbfs(1)): one vertex id a
 * line, in the input's own ids, as a decimal number (knum.h: "010" is ten);
 * blanks around it, '#' comment lines and blank lines are passed over;
 * CRLF endings, gzip'd or not, a file or a pipe.  Anything else on a line
 * (a second token, a sign, "0x10", a NUL byte) is refused naming the file
 * and the line, and so is a file without a root.
 * Who calls: kbfs (rank 0, kbfs_roots.c), and its fuzzer.
 */
#ifndef KROOTS_H
#define KROOTS_H

#include <stddef.h>
#include <stdint.h>

/* The ids of PATH appended to (*ids)[0..*n), the array grown (krealloc,
 * *cap entries of room) as they come.  0, or a KEXIT code after kerror()
 * (KEXIT_DATA "FILE:LINE: 'x' is not a vertex id", "'FILE': no roots in
 * the file"; KEXIT_IO when it cannot be read). */
int kroots_read(const char *path, uint64_t **ids, size_t *n, size_t *cap);

#endif

/*
 * kio_internal: what the files behind kio.h share (kio_crc.c: CRC-32;
 * kio_in.c: input streams; kio_par.c: positioned and parallel reads and
 * writes; kio_out.c: output streams).  Not for other callers.
 */
#ifndef KIO_INTERNAL_H
#define KIO_INTERNAL_H

#include "kio.h"

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

enum { KIO_BUF = 1 << 20 };

struct kio_in {
	char *name;
	int fd, own_fd, regular;
	uint64_t size;       /* bytes from base to the end (regular files) */
	uint64_t base;       /* offset of the first byte read */
	z_stream *zs;        /* set when the input is gzip */
	unsigned char *raw;  /* compressed bytes waiting for inflate */
	int raw_eof, z_end;
	int z_next; /* a member ended: the next bytes must start another */
	uint64_t lineno; /* lines kio_getline has handed out */
	unsigned char *buf;  /* decoded bytes not yet consumed */
	size_t pos, len, cap;
	int eof;
	uint64_t consumed;
	char *line;
	size_t linecap;
};

/* kio_crc.c: the CRC of n bytes on this thread */
uint32_t kio_crc32_serial(uint32_t crc, const unsigned char *p, size_t n);

/* kio_in.c: a pipe's buffer raised to KIO_PIPE bytes (where the system
 * allows; nothing said otherwise): a stream of edges between two kbfs
 * programs then moves in reads of up to 1 MiB, not 64 KiB, four times as
 * fast here.  Not a pipe: nothing done.  KBFS_IO_PIPE=N asks for N MiB
 * first (an experiment: kbfs(7)). */
enum { KIO_PIPE = 1 << 20 };
void kio_pipe_grow(int fd);

/* kio_par.c: pread(2) of n bytes at the file offset off: 0, PREAD_SHORT at
 * end of file, or -1 with errno set. */
enum { PREAD_SHORT = 1 };
int kio_pread_full(int fd, void *buf, size_t n, uint64_t off);
/* kerror() for kio_pread_full's r (errno err): KEXIT_IO or KEXIT_DATA. */
int kio_pread_failed(const kio_in *in, int r, int err, const char *what);

#endif

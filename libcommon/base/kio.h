/*
 * kio: byte-level I/O shared by every format.
 *
 * Owns: little-endian encode/decode helpers (formats never write a struct
 * raw) and CRC32 (kio_crc.c); input streams ("-" is stdin; gzip is
 * detected by its magic bytes and decompressed transparently; kio_in.c);
 * positioned and parallel reads and writes (kio_par.c); and atomic output
 * files (kio_out.c): data goes to a temporary sibling "NAME.kbfs-tmp-XXXXXX"
 * (ktemp.h) that kio_commit() fsyncs and renames over NAME (then fsyncs
 * the directory); kio_abort(), kdie() and fatal signals remove it, so a
 * failed run never leaves a half-written file, and one killed with SIGKILL
 * leaves a temporary that the next writer of NAME removes.  "-" as output
 * is stdout, refused when stdout is a terminal unless forced.
 * Errors are reported with kerror() naming the file and the reason; the
 * functions return a KEXIT_* code (0 on success).
 */
#ifndef KIO_H
#define KIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static inline void kio_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void kio_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void kio_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t kio_get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t kio_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kio_get64(const uint8_t *p) { return (uint64_t)kio_get32(p) | ((uint64_t)kio_get32(p + 4) << 32); }
/* The k-th of an array of w-byte (4 or 8) little-endian ids: an edge
 * file's tuples as stored (kedge(5)). */
static inline uint64_t kio_get_id(const uint8_t *p, int w, size_t k)
{
	return w == 4 ? kio_get32(p + 4 * k) : kio_get64(p + 8 * k);
}

/* CRC-32 (zlib's polynomial); start with crc = 0. Handles sizes > 4 GiB. */
uint32_t kio_crc32(uint32_t crc, const void *buf, size_t n);
/* CRC of A followed by B, from crc(A), crc(B) and len(B) (for parallel CRCs). */
uint32_t kio_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* ---- input ---- */
typedef struct kio_in kio_in;
/* Open PATH ("-" = stdin).  flags: KIO_GZIP, gzip input is inflated
 * transparently (otherwise bytes are passed as they are); KIO_FILE, PATH
 * must be a regular file (a file kbfs finds by name, such as a partition's
 * rank files: a fifo there is refused at once, "cannot read 'x': not a
 * regular file (a fifo)", never waited on).  A path the user names may be
 * a pipe.  NULL after kerror(). */
enum { KIO_GZIP = 1, KIO_FILE = 2 };
kio_in *kio_open_in(const char *path, int flags);
/* Read up to n bytes; *got = 0 at end of file. Returns 0 or KEXIT_IO. */
int kio_read(kio_in *in, void *buf, size_t n, size_t *got);
/* Read exactly n bytes: KEXIT_DATA ("truncated") on early end, naming what. */
int kio_read_exact(kio_in *in, void *buf, size_t n, const char *what);
/* Next line without its newline (NUL-terminated, valid until the next call;
 * a UTF-8 byte order mark before the first line is dropped);
 * NULL at end of file or on error (then *err is set to a KEXIT code): a
 * line longer than 1 MiB, or one holding a NUL byte ("FILE:LINE: NUL byte
 * in a text line"), is KEXIT_DATA. */
char *kio_getline(kio_in *in, size_t *len, int *err);
/* 1 if this input is a regular, uncompressed file (pread is possible). */
int kio_seekable(const kio_in *in);
/* Positioned read on a seekable input (does not move the stream); off
 * counts from the input's first byte (standard input may start inside a
 * file). */
int kio_pread(kio_in *in, void *buf, size_t n, uint64_t off, const char *what);
/* Parallel positioned reads.  n bytes at off (counted as for kio_pread)
 * into dst, read by all OpenMP threads in pieces of KIO_PIECE bytes: each
 * thread reads, and so first touches, its own pieces of dst and computes
 * their CRC; the pieces' CRCs are merged in order, extending *crc (the CRC
 * of the bytes before) to cover these n bytes too.  Errors as kio_pread's
 * (a short file is "truncated", naming what; the first failing piece is
 * the one reported).  The input must be seekable. */
#define KIO_PIECE ((size_t)8 << 20)
int kio_pread_crc(kio_in *in, void *dst, size_t n, uint64_t off, uint32_t *crc, const char *what);
/* The next n bytes of the stream into dst, *crc extended as above: with
 * kio_pread_crc (the stream then moved past them) where the input is
 * seekable, else with kio_read_exact in chunks.  Errors as kio_read_exact's. */
int kio_read_crc(kio_in *in, void *dst, size_t n, uint32_t *crc, const char *what);
/* The next n bytes of a seekable input mapped read-only instead of read:
 * *p the bytes, *map and *maplen what to munmap, the stream moved past
 * them.  0; -1 where the input cannot be mapped (not seekable, the bytes
 * not at a multiple of align in the file, the kernel refuses), nothing
 * consumed: read it instead; or a KEXIT code after
 * kerror().  A file cut short under the mapping faults (SIGBUS) where it is
 * read: guard the range (klog_guard_map) before reading it. */
int kio_map(kio_in *in, size_t n, size_t align, const void **p, void **map, size_t *maplen);
/* Bytes consumed so far from the stream (decompressed). */
uint64_t kio_tell(const kio_in *in);
/* Size of the underlying file if regular (from the input's first byte to
 * its end), else 0: what a reader may check a header's counts against. */
uint64_t kio_size(const kio_in *in);
const char *kio_name(const kio_in *in);
void kio_close_in(kio_in *in);
/* Peek at the first n bytes (n <= 16) without consuming them. */
int kio_peek(kio_in *in, void *buf, size_t n, size_t *got);
/* The version and flags after the 8-byte magic of every kbfs binary header
 * (kedge(5), kpart(5)): u16 major, u16 minor and u32 flags at bytes 8 to
 * 15 of hdr, little-endian.  0, or KEXIT_DATA after kerror() "'NAME': WHAT
 * MAJOR.MINOR is newer than this kbfs supports (MAX_MAJOR.MAX_MINOR);
 * upgrade kbfs" when the major version is newer than max_major (WHAT:
 * "edge file version", "rank file version"): a reader refuses it by name. */
int kio_get_version(const uint8_t *hdr, const char *name, const char *what, int max_major, int max_minor,
		    uint16_t *major, uint16_t *minor, uint32_t *flags);

/* ---- output ---- */
typedef struct kio_out kio_out;
/* Open PATH for writing ("-" = stdout).  binary: refuse a terminal unless
 * force.  Files other than "-" are written to a temporary sibling. */
kio_out *kio_open_out(const char *path, int binary, int force);
int kio_write(kio_out *out, const void *buf, size_t n);
/* kio_write, *crc extended with the bytes' CRC; a large write to a file
 * (not "-", a device or a pipe) goes through kio_pwrite_crc at the
 * stream's position, on all threads. */
int kio_write_crc(kio_out *out, const void *buf, size_t n, uint32_t *crc);
/* pwrite(2) of n bytes from p at offset off of fd, looping on short
 * writes, on all OpenMP threads in pieces of KIO_PIECE bytes; *crc (when
 * not NULL) extended with their CRC, merged in order.  0, or -1 with errno
 * set (the first failing piece's); nothing is reported. */
int kio_pwrite_crc(int fd, const void *p, size_t n, uint64_t off, uint32_t *crc);
/* memcpy of n bytes on all OpenMP threads (outside a parallel region), in
 * pieces of 1 MiB: each thread takes the page faults of its own pieces of
 * fresh memory, and a 64 MiB staging buffer still spreads over 64 threads. */
void kio_copy_par(void *dst, const void *src, size_t n);
int kio_printf(kio_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Flush, close and rename into place; frees out.  Returns 0 or KEXIT_IO.
 * While commits are held, the file is synced and left under its temporary
 * name (and lock) instead. */
int kio_commit(kio_out *out);
/* A run's outputs all or none: from now on kio_commit holds each file
 * back; kio_release_commits renames every held one into place when ok (0,
 * or KEXIT_IO: a rename failed, and the rest are removed), or removes
 * them all when not (a failed run leaves none of its outputs: kgen's
 * --map without its edge file).  Outputs written in place (standard
 * output, a device, a pipe) cannot be held back.  Raises the soft limit
 * of open files to the hard one: every held output keeps its lock open. */
void kio_hold_commits(void);
int kio_release_commits(int ok);
/* Close and remove the temporary; frees out. */
void kio_abort(kio_out *out);
const char *kio_out_name(const kio_out *out);
FILE *kio_out_file(kio_out *out);

/* Close stdout and report a failure (e.g. full disk) as KEXIT_IO. */
int kio_close_stdout(void);

#endif

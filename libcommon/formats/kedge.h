/*
 * kedge: the edge file, the format every kbfs stage starts from.
 *
 * Documented in kedge(5).  Layout (all integers little-endian):
 *   header   magic 89 4B 45 44 47 0D 0A 1A ("\x89KEDG\r\n\x1a"), u16 major,
 *            u16 minor, u32 flags, u32 id bytes (4|8), u64 vertices,
 *            u64 edges, u32 provenance length, provenance text (key=value
 *            lines), u32 CRC32 of all header bytes before it
 *   map      when flags has KEDGE_F_MAP: vertices x u64 original ids, then
 *            u32 CRC32 of the map bytes
 *   payload  edges x (u, v), each id in "id bytes" bytes; with KEDGE_F_ZLIB
 *            a sequence of blocks {u32 compressed, u32 raw, deflate data}
 *            ending with a {0, 0} block
 *   trailer  "KEND", u64 edges, u32 CRC32 of the uncompressed edge bytes,
 *            u32 CRC32 of the 16 trailer bytes before it
 * A reader refuses a wrong magic, a newer major version, a bad CRC and a
 * truncated file, each with one line naming the file.  Memory: a regular
 * file's size is checked against the header's counts (exactly for a raw
 * payload, a compressed one at least as big as deflate allows) and its
 * trailer read before anything is allocated for them; a stream's map and
 * edges are held as they arrive, never sized from the header alone.
 */
#ifndef KEDGE_H
#define KEDGE_H

#include <stddef.h>
#include <stdint.h>

#define KEDGE_MAJOR 1
#define KEDGE_MINOR 0
#define KEDGE_MAGIC_LEN 8
extern const unsigned char kedge_magic[KEDGE_MAGIC_LEN];

enum {
	KEDGE_F_UNDIRECTED = 1u << 0, /* edges are undirected tuples */
	KEDGE_F_ZLIB = 1u << 1,       /* payload is deflate-compressed */
	KEDGE_F_MAP = 1u << 2,        /* an internal -> original id map follows the header */
};

typedef struct kedge_info {
	uint16_t major, minor;
	uint32_t flags;
	uint32_t idbytes; /* 4 or 8 */
	uint64_t nv;      /* vertices: ids are 0 .. nv-1 */
	uint64_t ne;      /* edge tuples */
	char *prov;       /* provenance, "key=value\n" lines (owned) */
} kedge_info;

/* Provenance keys used by kbfs: program, version, argv, kind
 * (kronecker|import), scale, edgefactor, seed1, seed2, g500_version,
 * source (imported file).  Returns a pointer into a static buffer or NULL. */
const char *kedge_prov_get(const kedge_info *info, const char *key);
/* Numeric provenance value, or dflt when absent or not a number. */
uint64_t kedge_prov_u64(const kedge_info *info, const char *key, uint64_t dflt);
/* Build the provenance text: program, version, argv, then extra "k=v\n" lines. */
char *kedge_prov_make(int argc, char **argv, const char *extra);
void kedge_info_free(kedge_info *info);

typedef struct kedge_reader kedge_reader;
/* Open and check the header (and the map, if any). */
int kedge_open(const char *path, kedge_reader **r, kedge_info *info);
/* Read up to max edges into uv (u0 v0 u1 v1 ...).  *got = 0 once all edges
 * have been read and the trailer checked. */
int kedge_read(kedge_reader *r, uint64_t *uv, size_t max, size_t *got);
/* As kedge_read, the tuples as the file stores them: 2 * idbytes bytes
 * each, little-endian (u v), into buf (room for max); a raw payload is
 * read straight into buf, its CRC and the ids' bounds checked on all
 * OpenMP threads.  What a stream's reader keeps as it arrives. */
int kedge_read_raw(kedge_reader *r, void *buf, size_t max, size_t *got);
/* The next n tuples of a raw (not compressed) payload as stored, into buf,
 * unchecked: the caller checks their ids and their CRC against the one
 * kedge_trailer gives once kedge_read_end has read the trailer (which it
 * checks itself: magic, edge count, its own CRC, nothing after it).  For a
 * reader that checks on many threads or processes (kpart's staged stream). */
int kedge_read_payload(kedge_reader *r, void *buf, size_t n);
/* Once every tuple has been read: the trailer read and checked (0 at once
 * if that has been done). */
int kedge_read_end(kedge_reader *r);
/* Original ids (nv entries) or NULL when the file has no map. */
const uint64_t *kedge_map(const kedge_reader *r);
/* 1 when edges can be read at any index (regular file, raw payload). */
int kedge_seekable(const kedge_reader *r);
/* Read edges [first, first+count) of a seekable file, checking the ids'
 * bounds; when crc is not NULL the CRC of the bytes read is chained onto
 * *crc, so readers of slices can check the whole payload against
 * kedge_trailer (kcomm_crc32_concat joins the ranks' pieces). */
int kedge_read_at(kedge_reader *r, uint64_t first, uint64_t count, uint64_t *uv, uint32_t *crc);
/* A regular file's size and its payload CRC as the trailer records it
 * (both checked by kedge_open): 1.  A stream's, once read to its end (its
 * trailer checked): the bytes read and the CRC, 1; before, 0. */
int kedge_trailer(const kedge_reader *r, uint64_t *size, uint32_t *crc);
const char *kedge_name(const kedge_reader *r);
void kedge_close(kedge_reader *r);
/* Convenience: the whole file in memory (uv has 2*ne entries; *map may be
 * NULL).  Caller frees. */
int kedge_load(const char *path, kedge_info *info, uint64_t **uv, uint64_t **map);

typedef struct kedge_writer kedge_writer;
/* Create PATH ("-" = stdout) for info->ne edges (flags, nv, ne, prov taken
 * from info; idbytes chosen from nv when 0).  map: nv original ids or NULL.
 * compress: deflate the payload. */
int kedge_create(const char *path, int force, const kedge_info *info, const uint64_t *map,
		 int compress, kedge_writer **w);
int kedge_write(kedge_writer *w, const uint64_t *uv, size_t n);
/* Trailer, flush, rename into place.  Fails if fewer/more edges than announced. */
int kedge_finish(kedge_writer *w);
void kedge_abandon(kedge_writer *w);

/* n tuples (uv[2k], uv[2k+1]) as a payload stores them: idb-byte
 * little-endian ids into b (on the OpenMP threads when n is large). */
void kedge_encode(const uint64_t *uv, size_t n, unsigned idb, unsigned char *b);

/* 1 if the first bytes are the kedge magic. */
int kedge_is_magic(const void *buf, size_t n);

#endif

/*
 * kfmt: fast text and foreign binary encodings of edge lists, shared by kgen
 * (writing) and the tests.  Text is one "u v\n" line per edge; "g500" is
 * the reference 3.x 12-byte layout {u32 v0 low, u32 v1 low, u32 high
 * halves (16 bits each)}; "g500v2" the 2.x layout {int64 v0, int64 v1};
 * "mtx" a symmetric Matrix Market pattern file, an entry per tuple with the
 * larger id first (the lower triangle, as the format stores a symmetric
 * matrix), ids internal + 1; "sg" the GAP benchmark suite's undirected
 * serialized graph (kimport.h), each neighbour list sorted (ksink.c
 * writes those two, which need the counts or the whole graph first).
 */
#ifndef KFMT_H
#define KFMT_H

#include <stddef.h>
#include <stdint.h>

enum kfmt { KFMT_KEDGE, KFMT_TEXT, KFMT_G500, KFMT_G500V2, KFMT_MTX, KFMT_SG };
/* "kedge", "text", "g500", "g500v2", "mtx", "sg", NULL: by enum kfmt */
extern const char *const kfmt_names[];

/* Write n edges as text into buf (at most 42 bytes per edge); returns bytes.
 * map: when not NULL, ids are printed as map[id]. */
size_t kfmt_text(char *buf, const uint64_t *uv, size_t n, const uint64_t *map);
/* Write n edges as Matrix Market entries "max+1 min+1\n" (at most 42 bytes
 * per edge); returns bytes. */
size_t kfmt_mtx(char *buf, const uint64_t *uv, size_t n);
/* Encode n edges in the 12-byte reference 3.x layout; returns bytes. */
size_t kfmt_g500(unsigned char *buf, const uint64_t *uv, size_t n);
/* Encode n edges in the 16-byte reference 2.x layout; returns bytes. */
size_t kfmt_g500v2(unsigned char *buf, const uint64_t *uv, size_t n);
/* Decimal digits of v into p; returns the length. */
size_t kfmt_u64(char *p, uint64_t v);

#endif

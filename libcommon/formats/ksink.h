/*
 * ksink: an edge list on its way out, in any of kgen's output formats
 * (kedge, text, g500, g500v2, mtx, sg; kfmt.h).  One writer, used by kgen
 * for generated and imported graphs alike; the file appears only when
 * ksink_finish succeeds.  mtx and sg number the vertices 0..nv-1 (mtx from
 * 1): they have no room for the input's own ids.  sg keeps every tuple in
 * memory (8 bytes each) until ksink_finish builds the lists, and refuses
 * more than 2^31 vertices (KEXIT_USAGE).
 */
#ifndef KSINK_H
#define KSINK_H

#include "kedge.h"
#include "kfmt.h"

typedef struct ksink ksink;

/* info: nv, ne, flags, prov (kedge only); map: original ids or NULL
 * (text output prints map[id]; kedge stores the map; mtx and sg have no
 * place for it). */
int ksink_open(const char *path, int format, int force, int compress, const kedge_info *info,
	       const uint64_t *map, ksink **s);
int ksink_write(ksink *s, const uint64_t *uv, size_t n);
int ksink_finish(ksink *s);
void ksink_abandon(ksink *s);
/* Index of name in kedge/text/g500/g500v2, or -1. */

#endif

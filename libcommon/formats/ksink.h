/*
 * ksink: an edge list on its way out, in any of kgen's output formats
 * (kedge, text, g500, g500v2).  One writer, used by kgen for generated and
 * imported graphs alike; the file appears only when ksink_finish succeeds.
 */
#ifndef KSINK_H
#define KSINK_H

#include "kedge.h"
#include "kfmt.h"

typedef struct ksink ksink;

/* info: nv, ne, flags, prov (kedge only); map: original ids or NULL
 * (text output prints map[id]; kedge stores the map). */
int ksink_open(const char *path, int format, int force, int compress, const kedge_info *info,
	       const uint64_t *map, ksink **s);
int ksink_write(ksink *s, const uint64_t *uv, size_t n);
int ksink_finish(ksink *s);
void ksink_abandon(ksink *s);
/* Index of name in kedge/text/g500/g500v2, or -1. */

#endif

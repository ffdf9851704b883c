/*
 * kidmap: the inverse of an id array, from the input's own vertex ids back
 * to positions (internal or local ids).  kbfs uses it to read -r/--roots in
 * input ids, kvalidate to read predecessor files written in input ids.
 * Compact id ranges get a dense table, sparse ones sorted (id, position)
 * pairs searched by bisection; a repeated id maps to its lowest position
 * (and kidmap_build says which id repeats: an id map that lists one twice
 * is corrupt).
 */
#ifndef KIDMAP_H
#define KIDMAP_H

#include <stdint.h>

#define KIDMAP_NONE UINT64_MAX

typedef struct kidmap {
	uint64_t *dense;  /* id -> position, ndense entries, or NULL */
	uint64_t ndense;
	uint64_t *pairs;  /* sorted (id, position) pairs when not dense */
	uint64_t npairs;
} kidmap;

/* Invert ids[0..n): kidmap_find(ids[k]) == k.  Entries equal to
 * KIDMAP_NONE (padding) are skipped.  Returns KIDMAP_NONE, or an id that
 * two entries hold. */
uint64_t kidmap_build(kidmap *m, const uint64_t *ids, uint64_t n);
/* Position of id, or KIDMAP_NONE when no entry has it. */
uint64_t kidmap_find(const kidmap *m, uint64_t id);
void kidmap_free(kidmap *m);

#endif

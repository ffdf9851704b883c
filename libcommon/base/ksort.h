/*
 * ksort: LSD radix sort of 64-bit keys (the degree and duplicate counts of
 * kgraph, the id renumbering of kimport).  A byte a pass over the low
 * keybits bits; a byte that is the same in every key costs no pass.
 */
#ifndef KSORT_H
#define KSORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort a[0..n) ascending by its low keybits bits (1..64; the keys must
 * have no higher bits).  tmp: n scratch words, or NULL to allocate them. */
void ksort_u64(uint64_t *a, uint64_t *tmp, size_t n, int keybits);

#endif

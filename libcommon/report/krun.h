/*
 * krun: kbfs run reports (the JSON that `kbfs --json` writes), read back by
 * kstat: the Graph500 block recomputed from the per-root figures with the
 * same code kbfs uses (kstat_print_block), one search's levels as a
 * stacked-bar SVG, and, given several runs, TEPS against the number of ranks.
 */
#ifndef KRUN_H
#define KRUN_H

#include <stdio.h>

#include "kjson.h"

typedef struct krun {
	char *path;
	kjson_value *doc;
} krun;

/* The largest run report read (bytes). */
#define KRUN_MAX_BYTES (256 << 20)

/* Read and parse PATH; checks it is a kbfs run whose figures are numbers
 * kbfs can write (whole numbers in range where they become integers,
 * finite and non-negative elsewhere).  0 or a KEXIT code. */
int krun_load(const char *path, krun *r);
void krun_free(krun *r);
/* The Graph500 block of one run. */
int krun_print_block(FILE *fp, const krun *r);
/* One JSON object per run with the block's figures. */
int krun_print_json(FILE *fp, const krun *runs, size_t n);
/* One run: the per-level breakdown (each phase's time per level, with the
 * level's direction) of the root of median time.  Several: harmonic-mean
 * TEPS against ranks, per graph (the record's "graph": a Kronecker graph's
 * parameters, an imported one's CRC; older records by scale) a line through
 * the best run of each rank count and the other runs as points, each
 * labelled R x C. */
int krun_svg(FILE *fp, const krun *runs, size_t n);

#endif

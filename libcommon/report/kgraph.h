/*
 * kgraph: statistics of an edge file (what `kstat FILE` reports).
 *
 * Degrees count tuple ends: an edge (u,v) adds one to u and one to v, so a
 * self-loop adds two to its vertex.  A duplicate is a tuple whose unordered
 * pair {u,v} appeared earlier in the file.  The log2 histogram has bin 0
 * for degree 0 and bin k >= 1 for degrees in [2^(k-1), 2^k).
 */
#ifndef KGRAPH_H
#define KGRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "kedge.h"

typedef struct kgraph_stats {
	uint64_t nv, ne, selfloops, duplicates, isolated, maxdeg, maxdeg_vertex;
	uint64_t hist[66];
	int nbins;
	uint64_t *deg;   /* nv degrees (owned) */
	int format;      /* enum kimport_format: KIMPORT_KEDGE or what was imported */
	kedge_info info; /* a kedge file's header and provenance (owned; zero otherwise) */
	const uint64_t *map;
	uint64_t *map_owned;
} kgraph_stats;

/* Statistics of any graph file kimport_graph reads (a kbfs edge file, a text
 * edge list, Matrix Market, METIS, DIMACS, gapbs). */
int kgraph_stats_file(const char *path, kgraph_stats *s);
void kgraph_stats_free(kgraph_stats *s);
void kgraph_print(FILE *fp, const char *path, const kgraph_stats *s);
void kgraph_print_json(FILE *fp, const char *path, const kgraph_stats *s);
/* Degree distribution (vertices per degree) on log-log axes. */
int kgraph_svg(FILE *fp, const char *path, const kgraph_stats *s);

#endif

/*
 * kdist: an edge list read once and spread over the ranks of a job.
 *
 * kdist_deal: rank 0 reads an edge stream to its end (kedge_read_raw
 * checks the ids, the CRC and the trailer) and deals it out in chunks of
 * KDIST_CHUNK tuples, chunk c to rank c % P, as the file stores them
 * (idbytes-wide little-endian ids); every rank appends its chunks, in
 * order, to a byte buffer (rank 0 reads its own straight into it).  kpart
 * deals a stream with it; kdist_load uses it for an edge file that cannot
 * be read at an index.
 *
 * kdist_load: a program's whole graph input, an edge file (kedge(5)) or a
 * text graph kimport reads (SNAP/GAP edge list, Matrix Market, METIS):
 * every rank gets a slice of the tuples (internal ids), the slices
 * together being the input in order.  A seekable edge file is read by
 * every rank at its own slice (kedge_open has checked its size and
 * trailer; the slices' CRCs joined must be the trailer's); a compressed
 * one is dealt by rank 0 (memory growing with the chunks that arrive); a
 * text graph is read by rank 0 and scattered.
 *
 * Both are collective and return the same code on every rank: 0 or a KEXIT
 * code, after kerror() on the rank that met the problem.
 */
#ifndef KDIST_H
#define KDIST_H

#include <stdint.h>

#include "kcomm.h"
#include "kedge.h"

enum { KDIST_CHUNK = 1 << 18 }; /* tuples a chunk */

/* Deal r (open on rank 0; ignored elsewhere); idbytes: its id width,
 * known on every rank.  *mem (grown with krealloc) and *n (tuples) get
 * this rank's chunks appended.  Afterwards kedge_trailer(r) on rank 0
 * gives the bytes read and the CRC of the edge data. */
int kdist_deal(kcomm *comm, kedge_reader *r, int idbytes, unsigned char **mem, uint64_t *n);

typedef struct kdist_edges {
	uint64_t *uv;      /* this rank's tuples: 2 * ne_local internal ids */
	uint64_t ne_local;
	uint64_t nv;       /* vertices: ids are below nv */
	uint64_t *map;     /* rank 0: internal -> input id (nv entries), NULL: identity */
} kdist_edges;

/* Read path (not "-") into e, spread over the ranks of comm. */
int kdist_load(kcomm *comm, const char *path, kdist_edges *e);
void kdist_free(kdist_edges *e);

#endif

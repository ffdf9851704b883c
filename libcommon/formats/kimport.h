/*
 * kimport: reading real graphs into edge tuples.
 *
 * Formats, each plain or gzip'd (gzip found by its magic bytes, through
 * zlib), detected from the content, never the file name:
 *   - SNAP/GAP text edge lists: "u v [anything]" per line, '#' and '%'
 *     comment lines, blank lines ignored, ids are non-negative 64-bit
 *     integers (a third column such as a GAP .wel weight is ignored);
 *     or CSV ("u,v[,anything]", as cuGraph and pandas write them), told
 *     by a comma on the first line that is not a comment; either may start
 *     with a header line of names ("src,dst", "source target"), and a CSV
 *     header whose first name is empty (",src,dst") announces pandas' index
 *     column, which is skipped;
 *   - Matrix Market coordinate files ("%%MatrixMarket matrix coordinate
 *     pattern|integer|real|complex general|symmetric|skew-symmetric|
 *     hermitian"), 1-based; the size line must be square (ROWS == COLUMNS)
 *     and the entry count must match it.  "general" entries are kept as
 *     given (both (i,j) and (j,i) when both are listed); "symmetric" files
 *     list each off-diagonal edge once and it is kept once;
 *   - METIS .graph adjacency files (header "n m [fmt [ncon]]", then line i
 *     lists the 1-based neighbours of vertex i, a blank line being an
 *     isolated vertex; vertex sizes, ncon vertex weights and edge weights
 *     of fmt 1/10/11/100/.../111 are skipped; '%' comment lines), each
 *     undirected edge kept once (from the endpoint with the lower id); the
 *     kept count must equal m and the lists must be symmetric;
 *   - DIMACS graphs: the shortest-path challenge's .gr ("p sp N M", then
 *     M arc lines "a U V [W]") and the clique/colouring format ("p edge N M"
 *     or "p col N M", then M lines "e U V"), 1-based, 'c' comment lines;
 *     every arc or edge line is a tuple (a .gr road network lists both
 *     directions, so each road is two tuples, as in a "general" Matrix
 *     Market file);
 *   - gapbs serialized graphs (.sg, and .wsg whose int32 weights are
 *     ignored; told apart by the size): a directed one gives a tuple per
 *     out-neighbour entry (its in-neighbour lists must be their transpose),
 *     an undirected one a tuple per entry (u, v) with u < v and per
 *     self-loop entry (the lists must be symmetric); ids kept (0-based).
 *
 * Detection: a first byte 0 or 1 followed by a header gapbs could have
 * written (entries < 2^58, 1..2^31 vertices) and offsets in the first window
 * that start at 0 and do not decrease is a gapbs serialized graph.  Any other
 * input with a NUL byte in its first 4 KiB is refused as a binary file (named
 * when it is a kbfs file).  "%%MatrixMarket" on the first line is Matrix
 * Market.  A first line that is not blank or a 'c' comment and reads
 * "p sp|edge|col N M" is DIMACS.  METIS
 * when the first line that is not blank or a '%' comment (with no '#'
 * comment before it) is 2-4 integers "n m [fmt [ncon]]" with n >= 1 and a
 * known fmt, and every vertex line in the first window of the input (8 MiB,
 * grown to hold 1000 lines) fits fmt with neighbours in 1..n, lines past
 * the n-th being blank; and, when the window is the whole input, there are
 * exactly n vertex lines and either the neighbour entries total 2m or the
 * lists are symmetric; when it is not, the lists of the window's k vertex
 * lines are symmetric within 1..k (or, with no such pair at all, the lines'
 * neighbour counts differ).  Also METIS: such a header followed by a line
 * of a single number, which no edge list has (so a METIS file whose header
 * lies or whose lists are wrong is reported by the METIS parser).
 * Anything else is an edge list.  A format other than KIMPORT_AUTO forces
 * that parser.
 *
 * Vertex ids: edge lists whose ids are dense enough (max_id + 1 <=
 * 2 * distinct ids) keep them (internal = original, nv = max_id + 1,
 * map = NULL meaning identity); otherwise internal k is the k-th smallest
 * distinct id (deterministic) and map[k] is that id.  Matrix Market, METIS
 * and DIMACS: internal = id - 1, nv = the declared vertex count, map[k] =
 * k + 1.  gapbs: internal = id, nv = the declared count, map = NULL.
 * Self-loops and duplicates are kept as tuples and self-loops counted.
 *
 * Memory: nothing is sized from a count the file declares (a size line, a
 * METIS header) before the lines are there; a Matrix Market size line or a
 * DIMACS problem line may not declare more than 2 x entries (arcs, edges)
 * + KIMPORT_SPARE_VERTICES vertices (the untouched ones would cost a map
 * entry each); a line longer than KIMPORT_MAX_LINE bytes is an error.
 *
 * Errors: a malformed line (non-numeric token, negative or > 64-bit id, the
 * id 2^64-1 (KIMPORT_RESERVED_ID), a single id, an index beyond the declared size, extra METIS lines) is
 * "FILE:LINE: reason" and KEXIT_DATA, unless skip_bad, which counts it in
 * malformed and skips it.  Always errors (KEXIT_DATA): a bad Matrix Market
 * banner or size line, a wrong entry or vertex-line count, a bad METIS
 * header, a METIS edge count or symmetry mismatch (only a warning once bad
 * lines were skipped), a corrupt or truncated gzip stream, no edges.  A file
 * that cannot be opened or read is KEXIT_IO.
 */
#ifndef KIMPORT_H
#define KIMPORT_H

#include <stdint.h>

/* KIMPORT_KEDGE: only kimport_graph returns it (a kbfs edge file). */
enum kimport_format { KIMPORT_AUTO, KIMPORT_EDGELIST, KIMPORT_MTX, KIMPORT_METIS, KIMPORT_DIMACS, KIMPORT_SG,
		      KIMPORT_KEDGE };
/* "auto", "edgelist", "mtx", "metis", "dimacs", "sg", "kedge", NULL: by enum kimport_format */
extern const char *const kimport_format_names[];

/* A Matrix Market size line may declare at most 2 x entries + this many
 * vertices (the ones no entry touches are isolated, and cost memory). */
#define KIMPORT_SPARE_VERTICES (1 << 20)
/* The one id an edge list may not hold: kbfs marks padding vertices with
 * it (kpart.h's KPART_NO_VERTEX), so such a vertex would vanish. */
#define KIMPORT_RESERVED_ID UINT64_MAX
/* The longest line any importer reads (bytes). */
#define KIMPORT_MAX_LINE ((size_t)256 << 20)

typedef struct kimport_result {
	int format;          /* the detected enum kimport_format */
	uint64_t nv, ne;     /* vertices, edge tuples */
	uint64_t *uv;        /* 2*ne internal ids */
	uint64_t *map;       /* nv original ids; NULL: identity (dense edge list) */
	uint64_t lines;      /* lines read */
	uint64_t selfloops;  /* self-loop tuples kept */
	uint64_t malformed;  /* lines skipped with skip_bad */
	uint64_t comments;   /* comment/header lines */
	int csv;             /* an edge list whose fields are comma-separated */
	uint64_t header;     /* an edge list's header line of names (its number), or 0 */
} kimport_result;

/* Read PATH ("-" = stdin).  Returns 0 or a KEXIT_* code after kerror(). */
int kimport_read(const char *path, int format, int skip_bad, kimport_result *res);
/* Frees uv and map and zeroes *res. */
void kimport_free(kimport_result *res);
/* "auto", "edgelist", "mtx", "metis", "dimacs", "sg", "kedge" */
const char *kimport_format_name(int format);

/* Any graph file a kbfs program reads: a kbfs edge file (found by its magic,
 * also on standard input when that is a regular file or a pipe; format must
 * be KIMPORT_AUTO or KIMPORT_KEDGE) is loaded whole,
 * with its id map, into res (format KIMPORT_KEDGE) and its header and
 * provenance into *info; anything else goes to kimport_read and *info is
 * zeroed.  info may be NULL.  The caller frees *info (kedge_info_free). */
struct kedge_info;
int kimport_graph(const char *path, int format, int skip_bad, kimport_result *res, struct kedge_info *info);

#endif

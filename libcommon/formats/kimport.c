/*
 * kimport: SNAP/GAP edge lists, Matrix Market coordinate files and METIS
 * adjacency files, plain or gzip'd, into edge tuples.  See kimport.h.
 *
 * The input is read through kio (which inflates gzip, every member and
 * nothing after them, and passes plain data through) into one large buffer; every line handed to a parser ends in '\n', which serves as
 * the sentinel of a hand-written integer scanner.  The first window of the
 * input (up to KIMP_WINDOW bytes) is also what format detection looks at.
 * This file has edge lists, detection and kimport_read; the reader, the
 * scanner and what every parser shares are kimport_scan.c, Matrix Market
 * is kimport_mtx.c, METIS kimport_metis.c, DIMACS kimport_dimacs.c, gapbs
 * kimport_sg.c.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"
#include "kmem.h"
#include "kmagic.h"
#include "ksort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIMP_WINDOW ((size_t)8 << 20) /* detection window, first read size */
#define KIMP_MAXWINDOW KIMPORT_MAX_LINE    /* ... grown to this for long lines */
#define KIMP_MINLINES 1000                 /* ... until it holds this many */
#define KIMP_SMALL (1u << 20)         /* a plain file smaller gets a window of its size */

/* ---- renumbering of edge lists -------------------------------------------- */

/*
 * Ids dense enough (max+1 <= 2 * distinct) stay as they are (map NULL).
 * Otherwise internal k = the k-th smallest distinct id: by a bitmap with
 * per-word ranks when max is within 32 * ne, else by a radix sort and a
 * bucket directory over the sorted ids.
 */
static void renumber(imp *m)
{
	kimport_result *res = m->res;
	uint64_t *uv = m->uv, maxid = 0;
	size_t n2 = 2 * m->ne;
	for (size_t k = 0; k < n2; k++)
		if (uv[k] > maxid)
			maxid = uv[k];

	if (maxid / 32 < m->ne) {
		uint64_t n = maxid + 1, words = (n + 63) / 64, distinct = 0;
		uint64_t *bits = kcalloc(words, sizeof *bits);
		for (size_t k = 0; k < n2; k++)
			bits[uv[k] >> 6] |= 1ULL << (uv[k] & 63);
		uint64_t *rank = kmalloc(kmul(words, sizeof *rank));
		for (uint64_t w = 0; w < words; w++) {
			rank[w] = distinct;
			distinct += (uint64_t)__builtin_popcountll(bits[w]);
		}
		if (n <= 2 * distinct) {
			res->nv = n;
			res->map = NULL;
		} else {
			uint64_t *map = kmalloc(kmul(distinct, sizeof *map)), k2 = 0;
			for (uint64_t w = 0; w < words; w++)
				for (uint64_t b = bits[w]; b; b &= b - 1)
					map[k2++] = w * 64 + (uint64_t)__builtin_ctzll(b);
			for (size_t k = 0; k < n2; k++) {
				uint64_t x = uv[k];
				uv[k] = rank[x >> 6] + (uint64_t)__builtin_popcountll(bits[x >> 6] & ((1ULL << (x & 63)) - 1));
			}
			res->nv = distinct;
			res->map = map;
		}
		free(rank);
		free(bits);
		return;
	}

	uint64_t *keys = kmalloc(kmul(n2, sizeof *keys));
	uint64_t *tmp = kmalloc(kmul(n2, sizeof *tmp));
	memcpy(keys, uv, n2 * sizeof *keys);
	ksort_u64(keys, tmp, n2, 64);
	free(tmp);
	size_t nv = 1;
	for (size_t k = 1; k < n2; k++)
		if (keys[k] != keys[nv - 1])
			keys[nv++] = keys[k];
	uint64_t *map = krealloc(keys, nv * sizeof *map);

	/* bucket b holds the ids whose (id - min) >> shift == b */
	uint64_t lo = map[0], span = map[nv - 1] - lo;
	int dbits = 1;
	while (dbits < 62 && ((uint64_t)1 << dbits) < nv)
		dbits++;
	int spanbits = span ? 64 - __builtin_clzll(span) : 0;
	int shift = spanbits > dbits ? spanbits - dbits : 0;
	size_t nb = (size_t)(span >> shift) + 1;
	size_t *dir = kmalloc(kmul(nb + 1, sizeof *dir));
	size_t k = 0;
	for (size_t b = 0; b < nb; b++) {
		while (k < nv && ((map[k] - lo) >> shift) < b)
			k++;
		dir[b] = k;
	}
	dir[nb] = nv;
	for (size_t i = 0; i < n2; i++) {
		uint64_t x = uv[i];
		size_t b = (size_t)((x - lo) >> shift), l = dir[b], h = dir[b + 1];
		while (h - l > 1) {
			size_t mid = l + (h - l) / 2;
			if (map[mid] <= x)
				l = mid;
			else
				h = mid;
		}
		uv[i] = l;
	}
	free(dir);
	res->nv = nv;
	res->map = map;
}

/* ---- SNAP / GAP edge lists ---------------------------------------------------- */

/*
 * CSV, as cuGraph and pandas write edge lists: fields split by commas (with
 * blanks around them or not) instead of blanks, decided on the first line
 * that is not blank or a comment.  That line may be a header of names, in
 * either kind of list ("src,dst", "source,target,weight", "u v"): every
 * field a name (it starts with a letter, '_' or a quote), at least two of
 * them, the first empty in a CSV whose rows start with pandas' index
 * column (",src,dst"), which is then skipped on every row.
 */
typedef struct csv_state {
	int csv;    /* fields split by commas */
	int index;  /* a first column to skip (pandas' index) */
} csv_state;

static int is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '"' || c == '\''; }

/* The first data line [p, e) a header of names? */
static int header_line(const char *p, const char *e, csv_state *cs)
{
	int names = 0, fields = 0, empty_first = 0;
	while (p < e) {
		p = kimport_skip_sp(p);
		const char *end = p;
		while (end < e && !(cs->csv ? *end == ',' : kimport_is_sp((unsigned char)*end)))
			end++;
		const char *q = p;
		while (q < end && kimport_is_sp((unsigned char)*q))
			q++;
		if (q == end || *q == '\n') { /* an empty field */
			if (!cs->csv || fields > 0)
				break;
			empty_first = 1;
		} else if (is_name_start(*q)) {
			names++;
		} else {
			return 0;
		}
		fields++;
		if (end >= e || *end == '\n')
			break;
		p = end + 1;
	}
	if (names < 2)
		return 0;
	cs->index = empty_first;
	return 1;
}

/* A data line of a CSV: its commas become blanks, in the reader's own
 * buffer (the line is read once), after a check that none of the fields
 * read (the index column, u, v) is empty, which blanks would hide
 * ("1,,2" is not the edge 1 2).  0, or -1 for an empty field. */
static int uncomma(const char *s, const char *e, const csv_state *cs)
{
	int need = 2 + cs->index, field = 0, filled = 0;
	for (char *p = (char *)s; p < e; p++) {
		if (*p == ',') {
			if (field < need && !filled)
				return -1;
			*p = ' ';
			field++;
			filled = 0;
		} else if (!kimport_is_sp((unsigned char)*p)) {
			filled = 1;
		}
	}
	/* the last field ("1," ends with an empty v) */
	return field > 0 && field < need && !filled ? -1 : 0;
}

static int parse_edgelist(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e;
	char why[160];
	int rc, first = 1, first_pair = 0, first_data = 1;
	uint64_t fu = 0, fv = 0, rest_max = 0;
	csv_state cs = {0, 0};
	while ((rc = kimport_rd_line(&m->r, &s, &e)) > 0) {
		const char *p = kimport_skip_sp(s);
		if (*p == '\n')
			continue;
		if (*p == '#' || *p == '%') {
			res->comments++;
			continue;
		}
		if (first_data) {
			first_data = 0;
			cs.csv = res->csv = memchr(p, ',', (size_t)(e - p)) != NULL;
			if (header_line(p, e, &cs)) {
				res->comments++;
				res->header = m->r.lineno;
				continue;
			}
		}
		if (cs.csv && uncomma(p, e, &cs)) {
			if ((rc = kimport_bad_line(m, "an empty field in a CSV line")))
				return rc;
			continue;
		}
		uint64_t u, v;
		if (cs.index) { /* pandas' row number, not an id */
			int t = kimport_scan_u64(&p, &u);
			if (t != TOK_OK) {
				kimport_tok_why(t, p, "id", why, sizeof why);
				if ((rc = kimport_bad_line(m, why)))
					return rc;
				continue;
			}
		}
		if ((rc = kimport_scan_pair(m, &p, &u, &v, "id", "a line with a single id (want 'u v')")) > 0)
			return rc;
		if (rc < 0)
			continue;
		if (first) {
			first = 0;
			fu = u;
			fv = v;
			first_pair = *kimport_skip_sp(p) == '\n';
		} else {
			if (u > rest_max)
				rest_max = u;
			if (v > rest_max)
				rest_max = v;
		}
		res->selfloops += u == v;
		kimport_push_edge(m, u, v);
	}
	if (rc < 0)
		return m->r.err;
	if (m->ne == 0) {
		kerror("%s: no edges", m->r.name);
		return KEXIT_DATA;
	}
	if (first_pair && m->ne > 1 && fv == m->ne - 1 && rest_max <= fu)
		kwarn("%s: the first line '%llu %llu' looks like a 'vertices edges' header, but is read as an edge",
		      m->r.name, (unsigned long long)fu, (unsigned long long)fv);
	res->ne = m->ne;
	renumber(m);
	return 0;
}

/* ---- format detection ------------------------------------------------------ */

static size_t count_lines(const char *p, size_t len, size_t enough)
{
	const char *end = p + len;
	size_t n = 0;
	while (n < enough && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		p++;
		n++;
	}
	return n;
}

static int sniff(reader *r)
{
	const char *b = r->buf + r->pos;
	size_t len = r->len - r->pos;
	if (r->eof)
		r->buf[r->len] = '\n';
	if (kimport_sniff_sg((const unsigned char *)b, len, r->eof))
		return KIMPORT_SG;
	if (len >= 15 && kimport_is_mtx_banner(b))
		return KIMPORT_MTX;
	if (kimport_sniff_dimacs(b, len))
		return KIMPORT_DIMACS;
	if (kimport_sniff_metis(b, len, r->eof))
		return KIMPORT_METIS;
	return KIMPORT_EDGELIST;
}

/* ---- entry points --------------------------------------------------------------- */

const char *const kimport_format_names[] = {"auto", "edgelist", "mtx", "metis", "dimacs", "sg", "kedge", NULL};

const char *kimport_format_name(int format)
{
	return format >= KIMPORT_AUTO && format <= KIMPORT_KEDGE ? kimport_format_names[format] : "unknown";
}

void kimport_free(kimport_result *res)
{
	if (!res)
		return;
	free(res->uv);
	free(res->map);
	memset(res, 0, sizeof *res);
}

int kimport_read(const char *path, int format, int skip_bad, kimport_result *res)
{
	memset(res, 0, sizeof *res);
	if (format < KIMPORT_AUTO || format > KIMPORT_SG) {
		kerror("unknown import format %d", format);
		return KEXIT_USAGE;
	}
	imp m;
	memset(&m, 0, sizeof m);
	m.res = res;
	m.skip_bad = skip_bad;
	int is_stdin = strcmp(path, "-") == 0;
	m.r.name = is_stdin ? "<stdin>" : path;
	/* gzip through kio: a member followed by anything but another member
	 * is corrupt (zlib's gzread passed such trailing garbage over) */
	m.r.in = kio_open_in(path, KIO_GZIP);
	if (!m.r.in)
		return KEXIT_IO;
	/* a small plain file needs no window bigger than itself */
	uint64_t size = kio_size(m.r.in);
	m.r.cap = kio_seekable(m.r.in) && size < KIMP_SMALL ? (size_t)size + 4096 : KIMP_WINDOW;
	m.r.buf = kmalloc(m.r.cap + 1);

	int rc = kimport_rd_fill(&m.r);
	/* detection wants some whole lines: grow the window past huge ones,
	 * unless it is binary (a NUL byte in its first 4 KiB: a gapbs graph,
	 * which sizes its own reading from its header, or a refusal) */
	while (!rc && format == KIMPORT_AUTO && !m.r.eof && m.r.cap < KIMP_MAXWINDOW &&
	       !memchr(m.r.buf, 0, m.r.len < 4096 ? m.r.len : 4096) &&
	       count_lines(m.r.buf, m.r.len, KIMP_MINLINES) < KIMP_MINLINES)
		rc = kimport_rd_fill(&m.r);
	if (!rc) {
		const unsigned char *b = (const unsigned char *)m.r.buf;
		if (m.r.len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
			m.r.pos = 3; /* a UTF-8 byte order mark */
		if (format == KIMPORT_AUTO)
			format = sniff(&m.r);
		res->format = format;
		const char *bin = format == KIMPORT_SG ? NULL : kmagic_binary(m.r.buf + m.r.pos, m.r.len - m.r.pos);
		if (bin) {
			if (!strcmp(bin, "binary data"))
				kerror("'%s': binary file, neither a kbfs edge file nor a text graph", m.r.name);
			else
				kerror("'%s': binary file (%s), not a text graph%s", m.r.name, bin,
				       !strcmp(bin, "a kbfs edge file") && is_stdin ? ": give it by name" : "");
			rc = KEXIT_DATA;
		} else if (format == KIMPORT_EDGELIST)
			rc = parse_edgelist(&m);
		else if (format == KIMPORT_MTX)
			rc = kimport_parse_mtx(&m);
		else if (format == KIMPORT_METIS)
			rc = kimport_parse_metis(&m);
		else if (format == KIMPORT_DIMACS)
			rc = kimport_parse_dimacs(&m);
		else
			rc = kimport_parse_sg(&m);
	}
	res->lines = m.r.lineno;
	kio_close_in(m.r.in);
	free(m.r.buf);
	if (!rc && format != KIMPORT_EDGELIST && format != KIMPORT_SG) { /* 1-based ids */
		res->map = kmalloc(kmul(res->nv, sizeof *res->map));
		for (uint64_t k = 0; k < res->nv; k++)
			res->map[k] = k + 1;
	}
	if (rc) {
		free(m.uv);
		kimport_free(res);
		return rc;
	}
	res->uv = m.ne < m.cap ? krealloc(m.uv, kmul(m.ne, 2 * sizeof *m.uv)) : m.uv;
	return 0;
}

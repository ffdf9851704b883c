/*
 * kimport_internal: what the files behind kimport.h share (kimport.c: edge
 * lists, detection and kimport_read; kimport_scan.c: the reader, the
 * scanner and the import state every parser uses; kimport_mtx.c: Matrix
 * Market; kimport_metis.c: METIS and its detection; kimport_dimacs.c:
 * DIMACS; kimport_sg.c: gapbs serialized graphs).  kimport.c calls the
 * parsers, the parsers call kimport_scan.c, never kimport.c.
 * Not for other callers.
 */
#ifndef KIMPORT_INTERNAL_H
#define KIMPORT_INTERNAL_H

#include "kimport.h"
#include "klog.h"
#include "kio.h"
#include "kmem.h"
#include "knum.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- reader ------------------------------------------------------------- */

typedef struct reader {
	kio_in *in;       /* gzip inflated on the way (kio.h: every member, and
			   * nothing but members) */
	const char *name; /* for messages */
	char *buf;        /* cap + 1 bytes: room for a '\n' sentinel */
	size_t cap, pos, len;
	int eof;
	int err;          /* KEXIT_* once a read failed */
	uint64_t lineno;
} reader;

int kimport_rd_fill(reader *r);

/* Next line as [*s, *e) with **e == '\n'.  1: a line, 0: end, -1: error. */
static inline int kimport_rd_line(reader *r, const char **s, const char **e)
{
	for (;;) {
		char *b = r->buf + r->pos;
		char *nl = memchr(b, '\n', r->len - r->pos);
		if (nl) {
			*s = b;
			*e = nl;
			r->pos = (size_t)(nl - r->buf) + 1;
			r->lineno++;
			return 1;
		}
		if (r->eof) {
			if (r->pos == r->len)
				return 0;
			r->buf[r->len] = '\n'; /* last line without a newline */
			*s = b;
			*e = r->buf + r->len;
			r->pos = r->len;
			r->lineno++;
			return 1;
		}
		if (kimport_rd_fill(r))
			return -1;
	}
}

/* ---- scanner ------------------------------------------------------------ */

enum { TOK_OK, TOK_END, TOK_NEG, TOK_BAD, TOK_BIG };

static inline int kimport_is_sp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline const char *kimport_skip_sp(const char *p)
{
	while (kimport_is_sp((unsigned char)*p))
		p++;
	return p;
}

/* One unsigned decimal token (knum.h) after optional blanks.  On TOK_OK
 * *pp moves past it; on an error *pp points at the offending token. */
static inline int kimport_scan_u64(const char **pp, uint64_t *out)
{
	const char *p = kimport_skip_sp(*pp), *q;
	*pp = p;
	int t = knum_u64(p, &q, out);
	if (t == KNUM_NONE) {
		if (*p == '\n')
			return TOK_END;
		if (*p == '-' && knum_digit(p[1]))
			return TOK_NEG;
		return TOK_BAD;
	}
	if (t == KNUM_BIG)
		return TOK_BIG;
	if (*q != '\n' && !kimport_is_sp((unsigned char)*q))
		return TOK_BAD;
	*pp = q;
	return TOK_OK;
}

/* kimport_scan.c */
int kimport_tok_len(const char *p);
/* Why kimport_scan_u64 failed, for a message. */
void kimport_tok_why(int t, const char *p, const char *what, char *why, size_t sz);

/* ---- import state --------------------------------------------------------- */

typedef struct imp {
	reader r;
	kimport_result *res;
	int skip_bad;
	uint64_t *uv;
	size_t ne, cap; /* edges held, edges room */
} imp;

static inline void kimport_push_edge(imp *m, uint64_t u, uint64_t v)
{
	if (m->ne == m->cap) {
		m->cap = m->cap ? kmul(m->cap, 2) : 4096;
		m->uv = krealloc(m->uv, kmul(m->cap, 2 * sizeof *m->uv));
	}
	m->uv[2 * m->ne] = u;
	m->uv[2 * m->ne + 1] = v;
	m->ne++;
}

/* A bad line: error (KEXIT_DATA) or, with skip_bad, counted and skipped (0). */
int kimport_bad_line(imp *m, const char *why);
/* A 1-based pair (WHAT "(u, v)") of a file with n vertices: out of range,
 * a bad line (as kimport_bad_line); else counted and kept 0-based. */
int kimport_push_1based(imp *m, uint64_t u, uint64_t v, uint64_t n, const char *what);
/* The end of a file whose header declared want ITEMS ("entries", "arcs")
 * of which seen were there, on n vertices: too few or no edges is an
 * error; else the result's nv and ne are set. */
int kimport_finish_declared(imp *m, uint64_t n, uint64_t want, uint64_t seen, const char *decl, const char *items);
/* Two ids at *pp, as the edge lines of the text formats begin: 0 with
 * *u, *v set and *pp past them; else the line is bad (WHAT names an id:
 * "id", "index"; SINGLE says what a line with one id lacks): a KEXIT code,
 * or -1 when skip_bad skipped it (as kimport_bad_line). */
int kimport_scan_pair(imp *m, const char **pp, uint64_t *u, uint64_t *v, const char *what, const char *single);
/* An error that skip_bad does not excuse. */
int kimport_data_error(imp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next line that is not blank or a '%' comment (a header or size line),
 * at *p past its blanks: 0, or KEXIT_* ("no WHAT" at the end). */
int kimport_header_line(imp *m, const char *what, const char **p);

/* A hash of the pair (a, b) (splitmix64's finaliser twice); sums of it over
 * a list's entries compare two lists as multisets (symmetry checks). */
static inline uint64_t kimport_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t kimport_pair_hash(uint64_t a, uint64_t b)
{
	return kimport_mix64(a ^ kimport_mix64(b + 0x9e3779b97f4a7c15ULL));
}

/* ---- the parsers ---------------------------------------------------------- */

/* kimport_mtx.c */
int kimport_is_mtx_banner(const char *p);
int kimport_parse_mtx(imp *m);
/* kimport_metis.c */
int kimport_sniff_metis(const char *buf, size_t len, int whole);
int kimport_parse_metis(imp *m);
/* kimport_dimacs.c */
int kimport_sniff_dimacs(const char *buf, size_t len);
int kimport_parse_dimacs(imp *m);
/* kimport_sg.c */
int kimport_sniff_sg(const unsigned char *buf, size_t len, int whole);
int kimport_parse_sg(imp *m);

#endif

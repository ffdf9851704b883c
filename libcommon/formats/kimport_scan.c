/*
 * kimport_scan: what every text parser of kimport shares (see
 * kimport_internal.h): the reader of the (possibly gzip'd) input, the
 * scanner's messages, and the import state's bad lines, 1-based pairs,
 * declared counts and header lines.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"
#include "kmem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KIMP_MAXREAD ((size_t)1 << 30) /* the most one fill asks for */

/* ---- reader ------------------------------------------------------------- */

/* Move the unread bytes to the front, grow if full, read more. */
int kimport_rd_fill(reader *r)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		if (r->cap >= KIMPORT_MAX_LINE) {
			kerror("%s:%llu: line longer than %zu MiB (not a text graph?)", r->name,
			       (unsigned long long)r->lineno + 1, KIMPORT_MAX_LINE >> 20);
			return r->err = KEXIT_DATA;
		}
		r->cap = kmul(r->cap, 2);
		r->buf = krealloc(r->buf, r->cap + 1);
	}
	size_t want = r->cap - r->len, got;
	if (want > KIMP_MAXREAD)
		want = KIMP_MAXREAD;
	int rc = kio_read(r->in, r->buf + r->len, want, &got);
	if (rc)
		return r->err = rc;
	r->len += got;
	if (got < want) /* kio_read reads until the request is met: short means the end */
		r->eof = 1;
	return 0;
}

/* ---- scanner ------------------------------------------------------------ */

int kimport_tok_len(const char *p)
{
	int n = 0;
	while (p[n] != '\n' && !kimport_is_sp((unsigned char)p[n]) && n < 40)
		n++;
	return n;
}

/* Why kimport_scan_u64 failed, for a message (klog shows control bytes
 * and bytes that are not UTF-8 as \xNN). */
void kimport_tok_why(int t, const char *p, const char *what, char *why, size_t sz)
{
	int n = kimport_tok_len(p);
	switch (t) {
	case TOK_END:
		snprintf(why, sz, "missing %s", what);
		break;
	case TOK_NEG:
		snprintf(why, sz, "negative %s '%.*s'", what, n, p);
		break;
	case TOK_BIG:
		snprintf(why, sz, "%s '%.*s' does not fit in 64 bits", what, n, p);
		break;
	default:
		snprintf(why, sz, "%s '%.*s' is not a non-negative integer", what, n, p);
		break;
	}
}

/* ---- import state --------------------------------------------------------- */

/* A bad line: error (KEXIT_DATA) or, with skip_bad, counted and skipped (0). */
int kimport_bad_line(imp *m, const char *why)
{
	if (m->skip_bad) {
		m->res->malformed++;
		kinfo("%s:%llu: skipped: %s", m->r.name, (unsigned long long)m->r.lineno, why);
		return 0;
	}
	kerror("%s:%llu: %s", m->r.name, (unsigned long long)m->r.lineno, why);
	return KEXIT_DATA;
}

int kimport_push_1based(imp *m, uint64_t u, uint64_t v, uint64_t n, const char *what)
{
	if (u == 0 || u > n || v == 0 || v > n) {
		char why[160];
		snprintf(why, sizeof why, "%s (%llu, %llu) out of range 1..%llu", what, (unsigned long long)u,
			 (unsigned long long)v, (unsigned long long)n);
		return kimport_bad_line(m, why);
	}
	m->res->selfloops += u == v;
	kimport_push_edge(m, u - 1, v - 1);
	return 0;
}

int kimport_finish_declared(imp *m, uint64_t n, uint64_t want, uint64_t seen, const char *decl, const char *items)
{
	if (seen < want) {
		kerror("%s: the %s declares %llu %s, the file has %llu", m->r.name, decl, (unsigned long long)want, items,
		       (unsigned long long)seen);
		return KEXIT_DATA;
	}
	if (m->ne == 0) {
		kerror("%s: no edges", m->r.name);
		return KEXIT_DATA;
	}
	/* vertices no edge touches cost an id map entry each (and more in
	 * every later stage) on the header's word alone */
	if (n > 2 * want + KIMPORT_SPARE_VERTICES) {
		kerror("%s: the %s declares %llu vertices for %llu %s (their id map alone would take %llu MiB; at most "
		       "2 x %s + %d vertices are accepted)",
		       m->r.name, decl, (unsigned long long)n, (unsigned long long)want, items,
		       (unsigned long long)(n >> 17), items, KIMPORT_SPARE_VERTICES);
		return KEXIT_DATA;
	}
	m->res->nv = n;
	m->res->ne = m->ne;
	return 0;
}

/* An error that skip_bad does not excuse. */
int kimport_data_error(imp *m, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	kerror("%s:%llu: %s", m->r.name, (unsigned long long)m->r.lineno, msg);
	return KEXIT_DATA;
}

/* The next line that is not blank or a '%' comment, at *p past its blanks,
 * counted with the comment and header lines: 0, or KEXIT_* ("no WHAT" at
 * the end of the input). */
int kimport_header_line(imp *m, const char *what, const char **p)
{
	const char *s, *e;
	for (;;) {
		int rc = kimport_rd_line(&m->r, &s, &e);
		if (rc < 0)
			return m->r.err;
		if (rc == 0) {
			kerror("%s: no %s", m->r.name, what);
			return KEXIT_DATA;
		}
		*p = kimport_skip_sp(s);
		if (**p == '%') {
			m->res->comments++;
			continue;
		}
		if (**p != '\n')
			break;
	}
	m->res->comments++;
	return 0;
}

int kimport_scan_pair(imp *m, const char **pp, uint64_t *u, uint64_t *v, const char *what, const char *single)
{
	char why[160];
	int rc, t = kimport_scan_u64(pp, u);
	if (t == TOK_OK) {
		t = kimport_scan_u64(pp, v);
		if (t == TOK_END)
			return (rc = kimport_bad_line(m, single)) ? rc : -1;
	}
	if (t != TOK_OK) {
		kimport_tok_why(t, *pp, what, why, sizeof why);
		return (rc = kimport_bad_line(m, why)) ? rc : -1;
	}
	if (*u == KIMPORT_RESERVED_ID || *v == KIMPORT_RESERVED_ID) {
		snprintf(why, sizeof why, "%s %llu is reserved (kbfs marks padding with 2^64-1)", what,
			 (unsigned long long)KIMPORT_RESERVED_ID);
		return (rc = kimport_bad_line(m, why)) ? rc : -1;
	}
	return 0;
}

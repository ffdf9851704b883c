/*
 * kimport_mtx.c: Matrix Market coordinate files (the banner, the size line,
 * 1-based entries) for kimport_read.  See kimport.h.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- Matrix Market -------------------------------------------------------------- */

static int word_is(const char *p, int n, const char *w)
{
	return n == (int)strlen(w) && strncasecmp(p, w, (size_t)n) == 0;
}

int kimport_is_mtx_banner(const char *p)
{
	return strncasecmp(p, "%%MatrixMarket", 14) == 0 && (p[14] == '\n' || kimport_is_sp((unsigned char)p[14]));
}

int kimport_parse_mtx(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e, *p;
	char why[160];
	int rc = kimport_rd_line(&m->r, &s, &e);
	if (rc < 0)
		return m->r.err;
	if (rc == 0 || !kimport_is_mtx_banner(s))
		return kimport_data_error(m, "not a Matrix Market file (no '%%%%MatrixMarket' banner)");
	res->comments++;
	/* %%MatrixMarket matrix coordinate FIELD SYMMETRY */
	const char *w[5];
	int wl[5], nw = 0;
	for (p = s + 14; nw < 5;) {
		p = kimport_skip_sp(p);
		if (*p == '\n')
			break;
		w[nw] = p;
		wl[nw] = kimport_tok_len(p);
		while (*p != '\n' && !kimport_is_sp((unsigned char)*p))
			p++;
		nw++;
	}
	if (nw != 4 || *kimport_skip_sp(p) != '\n' || !word_is(w[0], wl[0], "matrix"))
		return kimport_data_error(m, "bad Matrix Market banner (want '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY')");
	if (!word_is(w[1], wl[1], "coordinate"))
		return kimport_data_error(m, "Matrix Market format '%.*s' is not supported (only 'coordinate')", wl[1], w[1]);
	if (!word_is(w[2], wl[2], "pattern") && !word_is(w[2], wl[2], "integer") &&
	    !word_is(w[2], wl[2], "real") && !word_is(w[2], wl[2], "complex"))
		return kimport_data_error(m, "unknown Matrix Market field '%.*s'", wl[2], w[2]);
	if (!word_is(w[3], wl[3], "general") && !word_is(w[3], wl[3], "symmetric") &&
	    !word_is(w[3], wl[3], "skew-symmetric") && !word_is(w[3], wl[3], "hermitian"))
		return kimport_data_error(m, "unknown Matrix Market symmetry '%.*s'", wl[3], w[3]);

	/* size line: ROWS COLUMNS ENTRIES */
	uint64_t size[3];
	if ((rc = kimport_header_line(m, "Matrix Market size line", &p)))
		return rc;
	for (int k = 0; k < 3; k++) {
		int t = kimport_scan_u64(&p, &size[k]);
		if (t != TOK_OK) {
			kimport_tok_why(t, p, "size", why, sizeof why);
			return kimport_data_error(m, "bad Matrix Market size line (want 'ROWS COLUMNS ENTRIES'): %s", why);
		}
	}
	if (*kimport_skip_sp(p) != '\n')
		return kimport_data_error(m, "bad Matrix Market size line (want 'ROWS COLUMNS ENTRIES'): extra text");
	uint64_t n = size[0], nnz = size[2], seen = 0;
	if (size[0] != size[1])
		return kimport_data_error(m, "the matrix is not square (%llu x %llu), so it is not a graph",
				  (unsigned long long)size[0], (unsigned long long)size[1]);
	while ((rc = kimport_rd_line(&m->r, &s, &e)) > 0) {
		p = kimport_skip_sp(s);
		if (*p == '\n')
			continue;
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (seen == nnz)
			return kimport_data_error(m, "more entries than the size line declares (%llu)", (unsigned long long)nnz);
		seen++;
		uint64_t i, j;
		if ((rc = kimport_scan_pair(m, &p, &i, &j, "index",
					    "an entry with a single index (want 'ROW COLUMN [VALUE]')")) > 0)
			return rc;
		if (rc < 0)
			continue;
		if ((rc = kimport_push_1based(m, i, j, n, "entry")))
			return rc;
	}
	if (rc < 0)
		return m->r.err;
	return kimport_finish_declared(m, n, nnz, seen, "size line", "entries");
}


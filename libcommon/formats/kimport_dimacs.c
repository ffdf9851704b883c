/*
 * kimport_dimacs.c: DIMACS graph files for kimport_read: the shortest-path
 * challenge's .gr ("p sp N M", then "a U V [W]" arcs) and the clique and
 * colouring format ("p edge N M" or "p col N M", then "e U V"); 1-based ids,
 * 'c' comment lines.  See kimport.h.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"

#include <stdio.h>
#include <string.h>

/* A 'c' comment line: "c" alone or followed by a blank. */
static int is_comment(const char *p) { return *p == 'c' && (p[1] == '\n' || kimport_is_sp((unsigned char)p[1])); }

/* "p TYPE N M": the edge letter of TYPE ('a' for sp, 'e' for edge/col), n, m;
 * 0 when the line is not a problem line of a known type. */
static int problem_line(const char *p, uint64_t *n, uint64_t *m)
{
	if (*p != 'p' || !kimport_is_sp((unsigned char)p[1]))
		return 0;
	p = kimport_skip_sp(p + 1);
	int len = kimport_tok_len(p), letter = 0;
	if (len == 2 && !strncmp(p, "sp", 2))
		letter = 'a';
	else if ((len == 4 && !strncmp(p, "edge", 4)) || (len == 3 && !strncmp(p, "col", 3)))
		letter = 'e';
	if (!letter)
		return 0;
	p += len;
	if (kimport_scan_u64(&p, n) != TOK_OK || kimport_scan_u64(&p, m) != TOK_OK || *kimport_skip_sp(p) != '\n')
		return 0;
	return letter;
}

int kimport_sniff_dimacs(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return 0;
		const char *q = kimport_skip_sp(p);
		p = nl + 1;
		if (*q == '\n' || is_comment(q))
			continue;
		uint64_t n, m;
		return problem_line(q, &n, &m) != 0;
	}
	return 0;
}

int kimport_parse_dimacs(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e, *p;
	char why[160];
	uint64_t n = 0, want = 0, seen = 0;
	int letter = 0, rc;
	while ((rc = kimport_rd_line(&m->r, &s, &e)) > 0) {
		p = kimport_skip_sp(s);
		if (*p == '\n')
			continue;
		if (is_comment(p)) {
			res->comments++;
			continue;
		}
		if (!letter) {
			if (!(letter = problem_line(p, &n, &want)))
				return kimport_data_error(m, "not a DIMACS graph (want a 'p sp|edge|col VERTICES EDGES' line first)");
			if (!n)
				return kimport_data_error(m, "the DIMACS problem line declares no vertices");
			res->comments++;
			continue;
		}
		if (*p != letter || !kimport_is_sp((unsigned char)p[1])) {
			snprintf(why, sizeof why, "expected '%c U V' (a DIMACS %s line)", letter,
				 letter == 'a' ? "arc" : "edge");
			if ((rc = kimport_bad_line(m, why)))
				return rc;
			continue;
		}
		if (seen == want)
			return kimport_data_error(m, "more %s lines than the problem line declares (%llu)",
						  letter == 'a' ? "arc" : "edge", (unsigned long long)want);
		seen++;
		p++;
		uint64_t u, v;
		int t = kimport_scan_u64(&p, &u);
		if (t == TOK_OK)
			t = kimport_scan_u64(&p, &v);
		if (t != TOK_OK) {
			kimport_tok_why(t, p, "vertex", why, sizeof why);
			if ((rc = kimport_bad_line(m, why)))
				return rc;
			continue;
		}
		/* a weight may follow an arc; nothing may follow an edge */
		if (letter == 'e' && *kimport_skip_sp(p) != '\n') {
			if ((rc = kimport_bad_line(m, "extra text after 'e U V'")))
				return rc;
			continue;
		}
		if ((rc = kimport_push_1based(m, u, v, n, letter == 'a' ? "arc" : "edge")))
			return rc;
	}
	if (rc < 0)
		return m->r.err;
	if (!letter) {
		kerror("%s: no DIMACS problem line", m->r.name);
		return KEXIT_DATA;
	}
	return kimport_finish_declared(m, n, want, seen, "problem line", letter == 'a' ? "arcs" : "edges");
}

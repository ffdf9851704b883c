/*
 * kimport_metis.c: METIS .graph adjacency files for kimport_read, and
 * telling them from edge lists (kimport_sniff_metis).  See kimport.h.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"

#include <stdio.h>
#include <string.h>

/* ---- METIS -------------------------------------------------------------- */

typedef struct metis_fmt {
	uint64_t n, m;
	uint64_t skip; /* tokens before the neighbours: vertex size and weights */
	int ew;        /* each neighbour is followed by an edge weight */
} metis_fmt;

typedef struct metis_acc {
	uint64_t up, low, self;  /* entries j > i, j < i, j == i */
	uint64_t hup, hlow;      /* sums of pair hashes, for a symmetry check */
	uint64_t entries;        /* all neighbour entries */
	uint64_t minnb, maxnb;   /* fewest and most neighbours on a line */
} metis_acc;

/* "n m [fmt [ncon]]"; 0 or -1 with the reason in why */
static int metis_header(const char *p, metis_fmt *h, char *why, size_t sz)
{
	uint64_t t[4];
	int k = 0;
	for (;;) {
		uint64_t x;
		int r = kimport_scan_u64(&p, &x);
		if (r == TOK_END)
			break;
		if (r != TOK_OK || k == 4) {
			snprintf(why, sz, "bad METIS header (want 'VERTICES EDGES [FMT [NCON]]')");
			return -1;
		}
		t[k++] = x;
	}
	if (k < 2) {
		snprintf(why, sz, "bad METIS header (want 'VERTICES EDGES [FMT [NCON]]')");
		return -1;
	}
	uint64_t fmt = k > 2 ? t[2] : 0, ncon = k > 3 ? t[3] : 1;
	if (fmt > 111 || fmt % 10 > 1 || fmt / 10 % 10 > 1) {
		snprintf(why, sz, "unknown METIS fmt %llu (want digits 0/1: vertex sizes, vertex weights, edge weights)",
			 (unsigned long long)fmt);
		return -1;
	}
	if (ncon == 0 || ncon > 1000000) {
		snprintf(why, sz, "bad METIS ncon %llu", (unsigned long long)ncon);
		return -1;
	}
	if (t[0] == 0) {
		snprintf(why, sz, "the METIS header declares no vertices");
		return -1;
	}
	h->n = t[0];
	h->m = t[1];
	h->ew = (int)(fmt % 10);
	h->skip = fmt / 100 + (fmt / 10 % 10 ? ncon : 0);
	return 0;
}

/*
 * Vertex line i (1-based) at p.  Entries go to m (when not NULL) as tuples
 * from the lower endpoint; only pairs whose both endpoints are <= kin enter
 * the symmetry sums.  0, or -1 with the reason in why (nothing is added).
 */
static int metis_line(const metis_fmt *h, uint64_t i, const char *p, uint64_t kin, metis_acc *acc, imp *m,
		      char *why, size_t sz)
{
	metis_acc a = { 0, 0, 0, 0, 0, 0, 0, 0 };
	size_t ne0 = m ? m->ne : 0;
	uint64_t x;
	int t;
	for (uint64_t k = 0; k < h->skip; k++)
		if ((t = kimport_scan_u64(&p, &x)) != TOK_OK) {
			kimport_tok_why(t, p, "vertex size/weight", why, sz);
			goto fail;
		}
	for (;;) {
		uint64_t j;
		t = kimport_scan_u64(&p, &j);
		if (t == TOK_END)
			break;
		if (t != TOK_OK) {
			kimport_tok_why(t, p, "neighbour", why, sz);
			goto fail;
		}
		if (j == 0 || j > h->n) {
			snprintf(why, sz, "neighbour %llu out of range 1..%llu", (unsigned long long)j,
				 (unsigned long long)h->n);
			goto fail;
		}
		if (h->ew && (t = kimport_scan_u64(&p, &x)) != TOK_OK) {
			kimport_tok_why(t, p, "edge weight", why, sz);
			goto fail;
		}
		a.entries++;
		if (j > i) {
			if (j <= kin) {
				a.up++;
				a.hup += kimport_pair_hash(i, j);
			}
			if (m)
				kimport_push_edge(m, i - 1, j - 1);
		} else if (j < i) {
			a.low++;
			a.hlow += kimport_pair_hash(j, i);
		} else {
			a.self++;
			if (m)
				kimport_push_edge(m, i - 1, i - 1);
		}
	}
	acc->up += a.up;
	acc->low += a.low;
	acc->self += a.self;
	acc->hup += a.hup;
	acc->hlow += a.hlow;
	acc->entries += a.entries;
	if (a.entries < acc->minnb)
		acc->minnb = a.entries;
	if (a.entries > acc->maxnb)
		acc->maxnb = a.entries;
	return 0;
fail:
	if (m)
		m->ne = ne0;
	return -1;
}

int kimport_parse_metis(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e, *p;
	char why[200];
	metis_fmt h;
	metis_acc acc = { 0, 0, 0, 0, 0, 0, UINT64_MAX, 0 };
	int rc;
	if ((rc = kimport_header_line(m, "METIS header", &p)))
		return rc;
	if (metis_header(p, &h, why, sizeof why))
		return kimport_data_error(m, "%s", why);
	uint64_t i = 0;
	while ((rc = kimport_rd_line(&m->r, &s, &e)) > 0) {
		p = kimport_skip_sp(s);
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (i == h.n) {
			if (*p == '\n')
				continue; /* trailing blank lines */
			snprintf(why, sizeof why, "more than %llu vertex lines", (unsigned long long)h.n);
			if ((rc = kimport_bad_line(m, why)))
				return rc;
			continue;
		}
		i++;
		if (metis_line(&h, i, p, h.n, &acc, m, why, sizeof why) && (rc = kimport_bad_line(m, why)))
			return rc;
	}
	if (rc < 0)
		return m->r.err;
	if (i < h.n) {
		kerror("%s: the METIS header declares %llu vertices, the file has %llu vertex lines", m->r.name,
		       (unsigned long long)h.n, (unsigned long long)i);
		return KEXIT_DATA;
	}
	if (acc.up != acc.low || acc.hup != acc.hlow || acc.up + acc.self != h.m) {
		if (acc.up != acc.low || acc.hup != acc.hlow)
			snprintf(why, sizeof why, "the adjacency lists are not symmetric (%llu entries point to higher ids, %llu to lower)",
				 (unsigned long long)acc.up, (unsigned long long)acc.low);
		else
			snprintf(why, sizeof why, "the METIS header declares %llu edges, the adjacency lists give %llu",
				 (unsigned long long)h.m, (unsigned long long)(acc.up + acc.self));
		if (!res->malformed) {
			kerror("%s: %s", m->r.name, why);
			return KEXIT_DATA;
		}
		kwarn("%s: %s (after skipping %llu bad lines)", m->r.name, why, (unsigned long long)res->malformed);
	}
	if (m->ne == 0) {
		kerror("%s: no edges", m->r.name);
		return KEXIT_DATA;
	}
	res->nv = h.n;
	res->ne = m->ne;
	res->selfloops = acc.self;
	return 0;
}

/* ---- format detection ------------------------------------------------------ */

/* Lines of a window [p, end); the last one only when whole (end[0] is '\n'). */
static inline int win_line(const char **p, const char *end, int whole, const char **s)
{
	if (*p >= end)
		return 0;
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl) {
		if (!whole)
			return 0;
		nl = end;
	}
	*s = *p;
	*p = nl + 1;
	return 1;
}

/*
 * METIS iff: the first line that is not blank or a '%' comment (no '#'
 * comment before it) is 2-4 integers "n m [fmt [ncon]]" with n >= 1 and a
 * known fmt; every vertex line in the window fits fmt with neighbours in
 * 1..n, and lines past the n-th are blank; and
 *   - some line after the header holds a single number, which no edge
 *     list has (a METIS file whose header lies or whose lists are wrong,
 *     reported as METIS); otherwise:
 *   - whole input in the window: exactly n vertex lines, and either the
 *     neighbour entries total 2m or the lists are symmetric (so a METIS file
 *     with a wrong m is still METIS, and reported as such);
 *   - otherwise: the lists of the window's k vertex lines are symmetric
 *     within 1..k, with at least one such pair; with none, METIS only if
 *     the lines' neighbour counts differ (an edge list's are all 2).
 */
int kimport_sniff_metis(const char *buf, size_t len, int whole)
{
	const char *end = buf + len, *p = buf, *s, *q;
	metis_fmt h;
	char why[200];
	for (;;) {
		if (!win_line(&p, end, whole, &s))
			return 0;
		q = kimport_skip_sp(s);
		if (*q == '#')
			return 0;
		if (*q != '%' && *q != '\n')
			break;
	}
	if (metis_header(q, &h, why, sizeof why))
		return 0;
	const char *body = p;
	uint64_t k = 0;
	int single = 0, extra = 0; /* a line of one number: never an edge list's */
	while (win_line(&p, end, whole, &s)) {
		q = kimport_skip_sp(s);
		if (*q == '%')
			continue;
		if (k < h.n)
			k++;
		else if (*q != '\n')
			extra = 1;
		const char *t = q + kimport_tok_len(q);
		single |= *q != '\n' && *q != '#' && *kimport_skip_sp(t) == '\n';
	}
	/* a METIS header, then a line no edge list has: METIS, whatever else
	 * is wrong with it (its header lies, a neighbour is out of range), so
	 * that the METIS parser says what */
	if (single)
		return 1;
	if (extra || (whole && k < h.n))
		return 0;
	metis_acc acc = { 0, 0, 0, 0, 0, 0, UINT64_MAX, 0 };
	uint64_t i = 0;
	for (p = body; i < k && win_line(&p, end, whole, &s);) {
		q = kimport_skip_sp(s);
		if (*q == '%')
			continue;
		i++;
		if (metis_line(&h, i, q, k, &acc, NULL, why, sizeof why))
			return 0;
	}
	int sym = acc.up == acc.low && acc.hup == acc.hlow;
	if (whole)
		return acc.entries == 2 * h.m || (sym && acc.up > 0);
	if (acc.up + acc.low > 0)
		return sym;
	return k > 1 && acc.minnb != acc.maxnb;
}

/*
 * kimport: SNAP/GAP edge lists, Matrix Market coordinate files and METIS
 * adjacency files, plain or gzip'd, into edge tuples.  See kimport.h.
 *
 * The input is read through zlib (which passes plain data through) into one
 * large buffer; every line handed to a parser ends in '\n', which serves as
 * the sentinel of a hand-written integer scanner.  The first window of the
 * input (up to KIMP_WINDOW bytes) is also what format detection looks at.
 */
#include "kimport.h"
#include "klog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#define KIMP_WINDOW ((size_t)8 << 20) /* detection window, first read size */
#define KIMP_MAXWINDOW ((size_t)256 << 20) /* ... grown to this for long lines */
#define KIMP_MINLINES 1000                 /* ... until it holds this many */
#define KIMP_GZBUF (1u << 20)         /* zlib's own buffer */
#define KIMP_MAXREAD ((size_t)1 << 30) /* gzread takes an unsigned int */

/* ---- reader ------------------------------------------------------------- */

typedef struct reader {
	gzFile gz;
	const char *name; /* for messages */
	char *buf;        /* cap + 1 bytes: room for a '\n' sentinel */
	size_t cap, pos, len;
	int eof;
	int err;          /* KEXIT_* once a read failed */
	uint64_t lineno;
} reader;

static int rd_gzerror(reader *r)
{
	int zerr = Z_OK;
	const char *msg = gzerror(r->gz, &zerr);
	if (zerr == Z_ERRNO) {
		kerror("%s: read error: %s", r->name, strerror(errno));
		return r->err = KEXIT_IO;
	}
	if (zerr == Z_MEM_ERROR) {
		kerror("%s: out of memory in zlib", r->name);
		return r->err = KEXIT_RESOURCE;
	}
	const char *c = msg ? strstr(msg, ": ") : NULL;
	if (c) /* zlib puts the path (or "<fd:N>") in front */
		msg = c + 2;
	if (zerr == Z_BUF_ERROR)
		kerror("%s: truncated gzip data (%s)", r->name, msg);
	else
		kerror("%s: corrupt gzip data (%s)", r->name, msg);
	return r->err = KEXIT_DATA;
}

/* Move the unread bytes to the front, grow if full, read more. */
static int rd_fill(reader *r)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		r->cap = kmul(r->cap, 2);
		r->buf = krealloc(r->buf, r->cap + 1);
	}
	size_t want = r->cap - r->len;
	if (want > KIMP_MAXREAD)
		want = KIMP_MAXREAD;
	int n = gzread(r->gz, r->buf + r->len, (unsigned)want);
	if (n < 0)
		return rd_gzerror(r);
	r->len += (size_t)n;
	if ((size_t)n < want) {
		/* zlib reads until the request is met: short means end or error */
		int zerr = Z_OK;
		gzerror(r->gz, &zerr);
		if (zerr != Z_OK)
			return rd_gzerror(r);
		r->eof = 1;
	}
	return 0;
}

/* Next line as [*s, *e) with **e == '\n'.  1: a line, 0: end, -1: error. */
static inline int rd_line(reader *r, const char **s, const char **e)
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
		if (rd_fill(r))
			return -1;
	}
}

/* ---- scanner ------------------------------------------------------------ */

enum { TOK_OK, TOK_END, TOK_NEG, TOK_BAD, TOK_BIG };

static inline int is_sp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline const char *skip_sp(const char *p)
{
	while (is_sp((unsigned char)*p))
		p++;
	return p;
}

/* One unsigned decimal token after optional blanks.  On TOK_OK *pp moves
 * past it; on an error *pp points at the offending token. */
static inline int scan_u64(const char **pp, uint64_t *out)
{
	const char *p = skip_sp(*pp);
	*pp = p;
	unsigned d = (unsigned)(unsigned char)*p - '0';
	if (d > 9) {
		if (*p == '\n')
			return TOK_END;
		if (*p == '-' && (unsigned)(unsigned char)p[1] - '0' <= 9)
			return TOK_NEG;
		return TOK_BAD;
	}
	uint64_t v = d;
	const char *q = p + 1;
	while ((d = (unsigned)(unsigned char)*q - '0') <= 9) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
			return TOK_BIG;
		q++;
	}
	if (*q != '\n' && !is_sp((unsigned char)*q))
		return TOK_BAD;
	*pp = q;
	*out = v;
	return TOK_OK;
}

static int tok_len(const char *p)
{
	int n = 0;
	while (p[n] != '\n' && !is_sp((unsigned char)p[n]) && n < 40)
		n++;
	return n;
}

/* Why scan_u64 failed, for a message. */
static void tok_why(int t, const char *p, const char *what, char *why, size_t sz)
{
	int n = tok_len(p);
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

/* splitmix64's finaliser: a hash of an unordered pair for symmetry sums */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t pair_hash(uint64_t lo, uint64_t hi)
{
	return mix64(lo ^ mix64(hi + 0x9e3779b97f4a7c15ULL));
}

/* ---- import state --------------------------------------------------------- */

typedef struct imp {
	reader r;
	kimport_result *res;
	int skip_bad;
	uint64_t *uv;
	size_t ne, cap; /* edges held, edges room */
} imp;

static inline void push_edge(imp *m, uint64_t u, uint64_t v)
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
static int bad_line(imp *m, const char *why)
{
	if (m->skip_bad) {
		m->res->malformed++;
		kinfo("%s:%llu: skipped: %s", m->r.name, (unsigned long long)m->r.lineno, why);
		return 0;
	}
	kerror("%s:%llu: %s", m->r.name, (unsigned long long)m->r.lineno, why);
	return KEXIT_DATA;
}

/* An error that skip_bad does not excuse. */
static int data_error(imp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int data_error(imp *m, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	kerror("%s:%llu: %s", m->r.name, (unsigned long long)m->r.lineno, msg);
	return KEXIT_DATA;
}

/* ---- renumbering of edge lists -------------------------------------------- */

static void radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	size_t(*cnt)[256] = kcalloc(8, sizeof *cnt);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = a[i];
		for (int b = 0; b < 8; b++)
			cnt[b][(x >> (8 * b)) & 255]++;
	}
	uint64_t *src = a, *dst = tmp;
	for (int b = 0; b < 8; b++) {
		size_t *c = cnt[b], sum = 0;
		if (c[(src[0] >> (8 * b)) & 255] == n)
			continue; /* this byte is the same in every key */
		for (int k = 0; k < 256; k++) {
			size_t t = c[k];
			c[k] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i] >> (8 * b)) & 255]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
	free(cnt);
}

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
	radix_sort_u64(keys, tmp, n2);
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

static int parse_edgelist(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e;
	char why[160];
	int rc, first = 1, first_pair = 0;
	uint64_t fu = 0, fv = 0, rest_max = 0;
	while ((rc = rd_line(&m->r, &s, &e)) > 0) {
		const char *p = skip_sp(s);
		if (*p == '\n')
			continue;
		if (*p == '#' || *p == '%') {
			res->comments++;
			continue;
		}
		uint64_t u, v;
		int t = scan_u64(&p, &u);
		if (t == TOK_OK) {
			t = scan_u64(&p, &v);
			if (t == TOK_END) {
				if ((rc = bad_line(m, "a line with a single id (want 'u v')")))
					return rc;
				continue;
			}
		}
		if (t != TOK_OK) {
			tok_why(t, p, "id", why, sizeof why);
			if ((rc = bad_line(m, why)))
				return rc;
			continue;
		}
		if (first) {
			first = 0;
			fu = u;
			fv = v;
			first_pair = *skip_sp(p) == '\n';
		} else {
			if (u > rest_max)
				rest_max = u;
			if (v > rest_max)
				rest_max = v;
		}
		res->selfloops += u == v;
		push_edge(m, u, v);
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

/* ---- Matrix Market -------------------------------------------------------------- */

static int word_is(const char *p, int n, const char *w)
{
	return n == (int)strlen(w) && strncasecmp(p, w, (size_t)n) == 0;
}

static int is_mtx_banner(const char *p)
{
	return strncasecmp(p, "%%MatrixMarket", 14) == 0 && (p[14] == '\n' || is_sp((unsigned char)p[14]));
}

static int parse_mtx(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e, *p;
	char why[160];
	int rc = rd_line(&m->r, &s, &e);
	if (rc < 0)
		return m->r.err;
	if (rc == 0 || !is_mtx_banner(s))
		return data_error(m, "not a Matrix Market file (no '%%%%MatrixMarket' banner)");
	res->comments++;
	/* %%MatrixMarket matrix coordinate FIELD SYMMETRY */
	const char *w[5];
	int wl[5], nw = 0;
	for (p = s + 14; nw < 5;) {
		p = skip_sp(p);
		if (*p == '\n')
			break;
		w[nw] = p;
		wl[nw] = tok_len(p);
		while (*p != '\n' && !is_sp((unsigned char)*p))
			p++;
		nw++;
	}
	if (nw != 4 || *skip_sp(p) != '\n' || !word_is(w[0], wl[0], "matrix"))
		return data_error(m, "bad Matrix Market banner (want '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY')");
	if (!word_is(w[1], wl[1], "coordinate"))
		return data_error(m, "Matrix Market format '%.*s' is not supported (only 'coordinate')", wl[1], w[1]);
	if (!word_is(w[2], wl[2], "pattern") && !word_is(w[2], wl[2], "integer") &&
	    !word_is(w[2], wl[2], "real") && !word_is(w[2], wl[2], "complex"))
		return data_error(m, "unknown Matrix Market field '%.*s'", wl[2], w[2]);
	if (!word_is(w[3], wl[3], "general") && !word_is(w[3], wl[3], "symmetric") &&
	    !word_is(w[3], wl[3], "skew-symmetric") && !word_is(w[3], wl[3], "hermitian"))
		return data_error(m, "unknown Matrix Market symmetry '%.*s'", wl[3], w[3]);

	/* size line: ROWS COLUMNS ENTRIES */
	uint64_t size[3];
	for (;;) {
		rc = rd_line(&m->r, &s, &e);
		if (rc < 0)
			return m->r.err;
		if (rc == 0) {
			kerror("%s: no Matrix Market size line", m->r.name);
			return KEXIT_DATA;
		}
		p = skip_sp(s);
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (*p != '\n')
			break;
	}
	res->comments++;
	for (int k = 0; k < 3; k++) {
		int t = scan_u64(&p, &size[k]);
		if (t != TOK_OK) {
			tok_why(t, p, "size", why, sizeof why);
			return data_error(m, "bad Matrix Market size line (want 'ROWS COLUMNS ENTRIES'): %s", why);
		}
	}
	if (*skip_sp(p) != '\n')
		return data_error(m, "bad Matrix Market size line (want 'ROWS COLUMNS ENTRIES'): extra text");
	uint64_t n = size[0], nnz = size[2], seen = 0;
	if (size[0] != size[1])
		return data_error(m, "the matrix is not square (%llu x %llu), so it is not a graph",
				  (unsigned long long)size[0], (unsigned long long)size[1]);
	if (nnz) {
		m->cap = nnz < ((size_t)1 << 24) ? (size_t)nnz : (size_t)1 << 24;
		m->uv = kmalloc(kmul(m->cap, 2 * sizeof *m->uv));
	}
	while ((rc = rd_line(&m->r, &s, &e)) > 0) {
		p = skip_sp(s);
		if (*p == '\n')
			continue;
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (seen == nnz)
			return data_error(m, "more entries than the size line declares (%llu)", (unsigned long long)nnz);
		seen++;
		uint64_t i, j;
		int t = scan_u64(&p, &i);
		if (t == TOK_OK) {
			t = scan_u64(&p, &j);
			if (t == TOK_END) {
				if ((rc = bad_line(m, "an entry with a single index (want 'ROW COLUMN [VALUE]')")))
					return rc;
				continue;
			}
		}
		if (t != TOK_OK) {
			tok_why(t, p, "index", why, sizeof why);
			if ((rc = bad_line(m, why)))
				return rc;
			continue;
		}
		if (i == 0 || i > n || j == 0 || j > n) {
			snprintf(why, sizeof why, "entry (%llu, %llu) out of range 1..%llu", (unsigned long long)i,
				 (unsigned long long)j, (unsigned long long)n);
			if ((rc = bad_line(m, why)))
				return rc;
			continue;
		}
		res->selfloops += i == j;
		push_edge(m, i - 1, j - 1);
	}
	if (rc < 0)
		return m->r.err;
	if (seen < nnz) {
		kerror("%s: the size line declares %llu entries, the file has %llu", m->r.name,
		       (unsigned long long)nnz, (unsigned long long)seen);
		return KEXIT_DATA;
	}
	if (m->ne == 0) {
		kerror("%s: no edges", m->r.name);
		return KEXIT_DATA;
	}
	res->nv = n;
	res->ne = m->ne;
	return 0;
}

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
		int r = scan_u64(&p, &x);
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
		if ((t = scan_u64(&p, &x)) != TOK_OK) {
			tok_why(t, p, "vertex size/weight", why, sz);
			goto fail;
		}
	for (;;) {
		uint64_t j;
		t = scan_u64(&p, &j);
		if (t == TOK_END)
			break;
		if (t != TOK_OK) {
			tok_why(t, p, "neighbour", why, sz);
			goto fail;
		}
		if (j == 0 || j > h->n) {
			snprintf(why, sz, "neighbour %llu out of range 1..%llu", (unsigned long long)j,
				 (unsigned long long)h->n);
			goto fail;
		}
		if (h->ew && (t = scan_u64(&p, &x)) != TOK_OK) {
			tok_why(t, p, "edge weight", why, sz);
			goto fail;
		}
		a.entries++;
		if (j > i) {
			if (j <= kin) {
				a.up++;
				a.hup += pair_hash(i, j);
			}
			if (m)
				push_edge(m, i - 1, j - 1);
		} else if (j < i) {
			a.low++;
			a.hlow += pair_hash(j, i);
		} else {
			a.self++;
			if (m)
				push_edge(m, i - 1, i - 1);
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

static int parse_metis(imp *m)
{
	kimport_result *res = m->res;
	const char *s, *e, *p;
	char why[200];
	metis_fmt h;
	metis_acc acc = { 0, 0, 0, 0, 0, 0, UINT64_MAX, 0 };
	int rc;
	for (;;) {
		rc = rd_line(&m->r, &s, &e);
		if (rc < 0)
			return m->r.err;
		if (rc == 0) {
			kerror("%s: no METIS header", m->r.name);
			return KEXIT_DATA;
		}
		p = skip_sp(s);
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (*p != '\n')
			break;
	}
	res->comments++;
	if (metis_header(p, &h, why, sizeof why))
		return data_error(m, "%s", why);
	uint64_t i = 0;
	while ((rc = rd_line(&m->r, &s, &e)) > 0) {
		p = skip_sp(s);
		if (*p == '%') {
			res->comments++;
			continue;
		}
		if (i == h.n) {
			if (*p == '\n')
				continue; /* trailing blank lines */
			snprintf(why, sizeof why, "more than %llu vertex lines", (unsigned long long)h.n);
			if ((rc = bad_line(m, why)))
				return rc;
			continue;
		}
		i++;
		if (metis_line(&h, i, p, h.n, &acc, m, why, sizeof why) && (rc = bad_line(m, why)))
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
 *   - whole input in the window: exactly n vertex lines, and either the
 *     neighbour entries total 2m or the lists are symmetric (so a METIS file
 *     with a wrong m is still METIS, and reported as such);
 *   - otherwise: the lists of the window's k vertex lines are symmetric
 *     within 1..k, with at least one such pair; with none, METIS only if
 *     the lines' neighbour counts differ (an edge list's are all 2).
 */
static int sniff_metis(const char *buf, size_t len, int whole)
{
	const char *end = buf + len, *p = buf, *s, *q;
	metis_fmt h;
	char why[200];
	for (;;) {
		if (!win_line(&p, end, whole, &s))
			return 0;
		q = skip_sp(s);
		if (*q == '#')
			return 0;
		if (*q != '%' && *q != '\n')
			break;
	}
	if (metis_header(q, &h, why, sizeof why))
		return 0;
	const char *body = p;
	uint64_t k = 0;
	while (win_line(&p, end, whole, &s)) {
		q = skip_sp(s);
		if (*q == '%')
			continue;
		if (k < h.n)
			k++;
		else if (*q != '\n')
			return 0;
	}
	if (whole && k < h.n)
		return 0;
	metis_acc acc = { 0, 0, 0, 0, 0, 0, UINT64_MAX, 0 };
	uint64_t i = 0;
	for (p = body; i < k && win_line(&p, end, whole, &s);) {
		q = skip_sp(s);
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
	if (len >= 15 && is_mtx_banner(b))
		return KIMPORT_MTX;
	if (sniff_metis(b, len, r->eof))
		return KIMPORT_METIS;
	return KIMPORT_EDGELIST;
}

/* ---- entry points --------------------------------------------------------------- */

const char *kimport_format_name(int format)
{
	switch (format) {
	case KIMPORT_AUTO:
		return "auto";
	case KIMPORT_EDGELIST:
		return "edgelist";
	case KIMPORT_MTX:
		return "mtx";
	case KIMPORT_METIS:
		return "metis";
	}
	return "unknown";
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
	if (format < KIMPORT_AUTO || format > KIMPORT_METIS) {
		kerror("unknown import format %d", format);
		return KEXIT_USAGE;
	}
	imp m;
	memset(&m, 0, sizeof m);
	m.res = res;
	m.skip_bad = skip_bad;
	int is_stdin = strcmp(path, "-") == 0;
	m.r.name = is_stdin ? "<stdin>" : path;
	if (is_stdin) {
		int fd = dup(STDIN_FILENO);
		m.r.gz = fd < 0 ? NULL : gzdopen(fd, "rb");
		if (!m.r.gz) {
			kerror("cannot read standard input: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			return KEXIT_IO;
		}
	} else {
		errno = 0;
		m.r.gz = gzopen(path, "rb");
		if (!m.r.gz) {
			kerror("cannot open '%s': %s", path, errno ? strerror(errno) : "out of memory");
			return errno ? KEXIT_IO : KEXIT_RESOURCE;
		}
	}
	gzbuffer(m.r.gz, KIMP_GZBUF);
	m.r.cap = KIMP_WINDOW;
	m.r.buf = kmalloc(m.r.cap + 1);

	int rc = rd_fill(&m.r);
	/* detection wants some whole lines: grow the window past huge ones */
	while (!rc && format == KIMPORT_AUTO && !m.r.eof && m.r.cap < KIMP_MAXWINDOW &&
	       count_lines(m.r.buf, m.r.len, KIMP_MINLINES) < KIMP_MINLINES)
		rc = rd_fill(&m.r);
	if (!rc) {
		const unsigned char *b = (const unsigned char *)m.r.buf;
		if (m.r.len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
			m.r.pos = 3; /* a UTF-8 byte order mark */
		if (format == KIMPORT_AUTO)
			format = sniff(&m.r);
		res->format = format;
		if (format == KIMPORT_EDGELIST)
			rc = parse_edgelist(&m);
		else if (format == KIMPORT_MTX)
			rc = parse_mtx(&m);
		else
			rc = parse_metis(&m);
	}
	res->lines = m.r.lineno;
	gzclose(m.r.gz);
	free(m.r.buf);
	if (!rc && format != KIMPORT_EDGELIST) {
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

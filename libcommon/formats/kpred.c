#include "kpred.h"
#include "kio.h"
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"
#include "ktemp.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const unsigned char kpred_magic[KPRED_MAGIC_LEN] = {0x89, 'K', 'P', 'R', 'D', '\r', '\n', 0x1a};

enum { HDR = KPRED_MAGIC_LEN + 4 + 16, REC = 16, CHUNK = 1 << 16 };

int kpred_is_magic(const void *buf, size_t n)
{
	return n >= KPRED_MAGIC_LEN && !memcmp(buf, kpred_magic, KPRED_MAGIC_LEN);
}

/* ---------------------------------------------------------------- writer */

/* Decimal digits of x at p; returns the length. */
static size_t put_u64(char *p, uint64_t x)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	for (size_t k = 0; k < n; k++)
		p[k] = tmp[n - 1 - k];
	return n;
}

static size_t put_i64(char *p, int64_t x)
{
	if (x >= 0)
		return put_u64(p, (uint64_t)x);
	p[0] = '-';
	return 1 + put_u64(p + 1, (uint64_t)0 - (uint64_t)x);
}

static int write_text(kio_out *o, uint64_t root, uint64_t n, const uint64_t *v, const int64_t *parent)
{
	int rc = kio_printf(o, "# kbfs predecessor map (kpred %d.%d): v parent, -1 = unreached\n", KPRED_MAJOR,
			    KPRED_MINOR);
	if (!rc && root != UINT64_MAX)
		rc = kio_printf(o, "# root %llu\n", (unsigned long long)root);
	enum { BUF = 1 << 20, LINE = 48 };
	char *buf = kmalloc(BUF);
	size_t len = 0;
	for (uint64_t k = 0; k < n && !rc; k++) {
		len += put_u64(buf + len, v[k]);
		buf[len++] = ' ';
		len += put_i64(buf + len, parent[k]);
		buf[len++] = '\n';
		if (len > BUF - LINE) {
			rc = kio_write(o, buf, len);
			len = 0;
		}
	}
	if (!rc)
		rc = kio_write(o, buf, len);
	free(buf);
	return rc;
}

static int write_binary(kio_out *o, uint64_t root, uint64_t n, const uint64_t *v, const int64_t *parent)
{
	uint8_t hdr[HDR];
	memcpy(hdr, kpred_magic, KPRED_MAGIC_LEN);
	kio_put16(hdr + 8, KPRED_MAJOR);
	kio_put16(hdr + 10, KPRED_MINOR);
	kio_put64(hdr + 12, n);
	kio_put64(hdr + 20, root);
	uint32_t crc = kio_crc32(0, hdr, HDR);
	int rc = kio_write(o, hdr, HDR);
	uint8_t *buf = kmalloc((size_t)CHUNK * REC);
	for (uint64_t k = 0; k < n && !rc;) {
		size_t m = n - k > CHUNK ? CHUNK : (size_t)(n - k);
		for (size_t t = 0; t < m; t++) {
			kio_put64(buf + t * REC, v[k + t]);
			kio_put64(buf + t * REC + 8, (uint64_t)parent[k + t]);
		}
		crc = kio_crc32(crc, buf, m * REC);
		rc = kio_write(o, buf, m * REC);
		k += m;
	}
	free(buf);
	if (!rc) {
		uint8_t t[4];
		kio_put32(t, crc);
		rc = kio_write(o, t, 4);
	}
	return rc;
}

int kpred_write(const char *path, int binary, uint64_t root, uint64_t n, const uint64_t *v, const int64_t *parent)
{
	kio_out *o = kio_open_out(path, binary, 0);
	if (!o)
		return KEXIT_IO;
	int rc = binary ? write_binary(o, root, n, v, parent) : write_text(o, root, n, v, parent);
	if (rc) {
		kio_abort(o);
		return rc;
	}
	return kio_commit(o);
}

/* ---------------------------------------------------------------- reader */

typedef struct vec {
	uint64_t n, cap;
	uint64_t *v;
	int64_t *p;
} vec;

static void vec_push(vec *a, uint64_t v, int64_t p)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 4096;
		a->v = krealloc(a->v, kmul((size_t)a->cap, sizeof *a->v));
		a->p = krealloc(a->p, kmul((size_t)a->cap, sizeof *a->p));
	}
	a->v[a->n] = v;
	a->p[a->n++] = p;
}

static void vec_reserve(vec *a, uint64_t cap)
{
	if (cap <= a->cap)
		return;
	a->cap = cap;
	a->v = krealloc(a->v, kmul((size_t)cap, sizeof *a->v));
	a->p = krealloc(a->p, kmul((size_t)cap, sizeof *a->p));
}

static int read_binary(kio_in *in, uint64_t *root, vec *a)
{
	const char *name = kio_name(in);
	uint8_t hdr[HDR];
	int rc = kio_read_exact(in, hdr, HDR, "header");
	if (rc)
		return rc;
	uint16_t major = kio_get16(hdr + 8), minor = kio_get16(hdr + 10);
	if (major > KPRED_MAJOR) {
		kerror("'%s': predecessor file version %u.%u is newer than this program reads (%d.x)", name, major,
		       minor, KPRED_MAJOR);
		return KEXIT_DATA;
	}
	uint64_t n = kio_get64(hdr + 12);
	*root = kio_get64(hdr + 20);
	uint32_t crc = kio_crc32(0, hdr, HDR);
	if (kio_seekable(in)) {
		uint64_t size = kio_size(in);
		if (n > (size - HDR) / REC || HDR + n * REC + 4 > size) {
			kerror("'%s': truncated file (%llu entries announced, %llu bytes present)", name,
			       (unsigned long long)n, (unsigned long long)size);
			return KEXIT_DATA;
		}
		vec_reserve(a, n);
	}
	uint8_t *buf = kmalloc((size_t)CHUNK * REC);
	for (uint64_t k = 0; k < n && !rc;) {
		size_t m = n - k > CHUNK ? CHUNK : (size_t)(n - k);
		rc = kio_read_exact(in, buf, m * REC, "entries");
		if (rc)
			break;
		crc = kio_crc32(crc, buf, m * REC);
		for (size_t t = 0; t < m; t++)
			vec_push(a, kio_get64(buf + t * REC), (int64_t)kio_get64(buf + t * REC + 8));
		k += m;
	}
	free(buf);
	if (rc)
		return rc;
	uint8_t t[4];
	rc = kio_read_exact(in, t, 4, "trailer");
	if (rc)
		return rc;
	if (kio_get32(t) != crc) {
		kerror("'%s': corrupt file (CRC mismatch)", name);
		return KEXIT_DATA;
	}
	size_t got;
	rc = kio_read(in, t, 1, &got);
	if (rc)
		return rc;
	if (got) {
		kerror("'%s': corrupt file (data after the trailer)", name);
		return KEXIT_DATA;
	}
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A decimal number at *s (knum.h): 0 and *s moved past it, -1 if none or
 * out of range. */
static int parse_u64(const char **s, uint64_t *out) { return knum_u64(*s, s, out) == KNUM_OK ? 0 : -1; }
static int parse_i64(const char **s, int64_t *out) { return knum_i64(*s, s, out) == KNUM_OK ? 0 : -1; }

static int read_text(kio_in *in, uint64_t *root, vec *a)
{
	const char *name = kio_name(in);
	uint64_t lineno = 0;
	size_t len;
	int err = 0;
	char *line;
	*root = UINT64_MAX;
	while ((line = kio_getline(in, &len, &err))) {
		lineno++;
		const char *s = skip_ws(line);
		if (*s == '#') {
			s = skip_ws(s + 1);
			uint64_t r;
			if (!strncmp(s, "root", 4) && (s[4] == ' ' || s[4] == '\t')) {
				s = skip_ws(s + 4);
				if (parse_u64(&s, &r) || *skip_ws(s)) {
					kerror("%s:%llu: malformed '# root' line (expected '# root R')", name,
					       (unsigned long long)lineno);
					return KEXIT_DATA;
				}
				*root = r;
			}
			continue;
		}
		if (!*s)
			continue;
		uint64_t v;
		int64_t p;
		if (parse_u64(&s, &v)) {
			kerror("%s:%llu: expected a vertex id (a whole number), found '%.32s'", name,
			       (unsigned long long)lineno, s);
			return KEXIT_DATA;
		}
		const char *t = skip_ws(s);
		if (t == s || parse_i64(&t, &p)) {
			kerror("%s:%llu: expected 'v parent' (parent a whole number or -1)", name,
			       (unsigned long long)lineno);
			return KEXIT_DATA;
		}
		if (*skip_ws(t)) {
			kerror("%s:%llu: expected 'v parent', found more text: '%.32s'", name,
			       (unsigned long long)lineno, skip_ws(t));
			return KEXIT_DATA;
		}
		vec_push(a, v, p);
	}
	return err;
}

int kpred_read(const char *path, uint64_t *root, uint64_t *n, uint64_t **v, int64_t **parent)
{
	*n = 0;
	*v = NULL;
	*parent = NULL;
	*root = UINT64_MAX;
	kio_in *in = kio_open_in(path, KIO_GZIP);
	if (!in)
		return KEXIT_IO;
	uint8_t head[KPRED_MAGIC_LEN];
	size_t got;
	int rc = kio_peek(in, head, sizeof head, &got);
	vec a = {0};
	if (!rc) {
		if (kpred_is_magic(head, got)) {
			rc = read_binary(in, root, &a);
		} else if (got && (head[0] & 0x80) && !(got >= 3 && !memcmp(head, "\xef\xbb\xbf", 3))) {
			kerror("'%s': not a predecessor file (binary data without the kpred magic)", kio_name(in));
			rc = KEXIT_DATA;
		} else {
			rc = read_text(in, root, &a);
		}
	}
	kio_close_in(in);
	if (rc) {
		free(a.v);
		free(a.p);
		return rc;
	}
	*n = a.n;
	*v = a.v;
	*parent = a.p;
	return 0;
}

/* ---- lists of files ---- */

static void list_push(kpred_list *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = krealloc(l->v, kmul(l->cap, sizeof *l->v));
	}
	l->v[l->n++] = kstrdup(s);
}

static int cmp_name(const void *a, const void *b) { return strverscmp(*(char *const *)a, *(char *const *)b); }

int kpred_list_add(kpred_list *l, const char *arg)
{
	struct stat st;
	if (!strcmp(arg, "-") || stat(arg, &st) || !S_ISDIR(st.st_mode)) {
		list_push(l, arg);
		return 0;
	}
	DIR *d = opendir(arg);
	if (!d) {
		kerror("cannot open '%s': %s", arg, strerror(errno));
		return KEXIT_IO;
	}
	size_t first = l->n;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "pred-", 5) || ktemp_is_temp_name(e->d_name))
			continue;
		char *p = kfs_join(arg, e->d_name);
		/* a tree found by name is a regular file: a fifo would be waited
		 * on for ever (on every rank) */
		if (fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode)) {
			kerror("cannot read '%s': not a regular file", p);
			rc = KEXIT_IO;
		} else {
			list_push(l, p);
		}
		free(p);
	}
	closedir(d);
	if (l->n == first && rc)
		return rc;
	if (l->n == first) {
		kerror("'%s': no pred-* file in this directory", arg);
		return KEXIT_DATA;
	}
	qsort(l->v + first, l->n - first, sizeof *l->v, cmp_name);
	return rc;
}

void kpred_list_free(kpred_list *l)
{
	for (size_t k = 0; k < l->n; k++)
		free(l->v[k]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/*
 * kpart.c: the partition math, reading the manifest, and loading a rank
 * file (kpart_load; the CSR's column indices it rebuilds: kpart_csr.c).
 * Writing a partition is kpart_write.c, the builder
 * kpart_build.c; the deep check, dump and reports are kpartstat.c.
 */
#include "kpart.h"
#include "kpart_internal.h"
#include "kio.h"
#include "kfs.h"
#include "klog.h"
#include "kmem.h"
#include "kmagic.h"
#include "knum.h"
#include "kopt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const kpart_relabel_names[] = {"none", "degree", NULL};


void kpart_rank_file(char *buf, size_t len, int rank) { snprintf(buf, len, "rank-%05d.kpart", rank); }

int kpart_grid_init(kpart_grid *g, uint64_t nv, int R, int C)
{
	memset(g, 0, sizeof *g);
	if (R <= 0 || C <= 0)
		return -1;
	uint64_t rc = (uint64_t)R * (uint64_t)C;
	if (nv == 0 || rc > nv || rc > (UINT64_C(1) << 40))
		return -1;
	uint64_t unit = rc * 64;
	uint64_t k = nv / unit + (nv % unit != 0);
	if (k > UINT64_MAX / unit)
		return -1;
	g->R = R;
	g->C = C;
	g->nv = nv;
	g->N = k * unit;
	g->nb = g->N / rc;
	return 0;
}

uint64_t kpart_device_bytes(const kpart_grid *g, uint64_t nnz, int idx64)
{
	uint64_t ncols = g->N / (uint64_t)g->C, nrows = g->N / (uint64_t)g->R;
	uint64_t ways = g->R == 1 && g->C == 1 ? 1 : 2; /* a 1x1 block, symmetric, is kept once */
	return ways * 8 * (ncols + 1) + ways * nnz * (idx64 ? 8 : 4)     /* CSC (+ CSR) */
	       + 8 * g->nb                                                    /* tdeg */
	       + 4 * (ncols / 8) + 4 * (nrows / 8)                            /* 8 bitmaps */
	       + 4 * 8 * g->nb;                                               /* 4 nb-sized u64 arrays */
}

/* ---------------------------------------------------------------- manifest */

static int slurp(const char *path, char **buf, size_t *len)
{
	kio_in *in = kio_open_in(path, KIO_FILE);
	if (!in)
		return KEXIT_IO;
	size_t cap = 1 << 16, n = 0;
	char *b = kmalloc(cap + 1);
	for (;;) {
		size_t got;
		int rc = kio_read(in, b + n, cap - n, &got);
		if (rc) {
			free(b);
			kio_close_in(in);
			return rc;
		}
		n += got;
		if (!got)
			break;
		if (n == cap) {
			if (cap >= (size_t)1 << 28) {
				kerror("'%s': too large for a manifest", path);
				free(b);
				kio_close_in(in);
				return KEXIT_DATA;
			}
			cap *= 2;
			b = krealloc(b, cap + 1);
		}
	}
	kio_close_in(in);
	/* text: a NUL would end it early for every line parser ("1<NUL>junk") */
	const char *nul = memchr(b, 0, n);
	if (nul) {
		size_t line = 1;
		for (const char *c = b; c < nul; c++)
			line += *c == '\n';
		kerror("%s:%zu: NUL byte in a text line", path, line);
		free(b);
		return KEXIT_DATA;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

const char *kpart_manifest_get(const kpart_manifest *m, const char *key)
{
	for (size_t k = m->nkeys; k-- > 0;)
		if (!strcmp(m->keys[k], key))
			return m->vals[k];
	return NULL;
}

static int get_u64(const kpart_manifest *m, const char *key, uint64_t *out)
{
	const char *v = kpart_manifest_get(m, key);
	return v && !kopt_parse_u64(v, 0, UINT64_MAX, out) ? 0 : -1;
}

static int get_hex32(const char *v, uint32_t *out)
{
	if (!v || strlen(v) != 8 || strspn(v, "0123456789abcdefABCDEF") != 8)
		return -1;
	*out = (uint32_t)strtoul(v, NULL, 16);
	return 0;
}

void kpart_manifest_free(kpart_manifest *m)
{
	for (size_t k = 0; k < m->nkeys; k++) {
		free(m->keys[k]);
		free(m->vals[k]);
	}
	free(m->keys);
	free(m->vals);
	if (m->ranks) {
		uint64_t rc = (uint64_t)m->g.R * (uint64_t)m->g.C;
		for (uint64_t r = 0; r < rc; r++)
			free(m->ranks[r].file);
	}
	free(m->ranks);
	memset(m, 0, sizeof *m);
}

/* rank.NNNNN.FIELD = value */
static int rank_line(kpart_manifest *m, const char *key, const char *val)
{
	if (strncmp(key, "rank.", 5))
		return 0;
	const char *end;
	uint64_t r, rc = (uint64_t)m->g.R * (uint64_t)m->g.C;
	if (knum_u64(key + 5, &end, &r) != KNUM_OK || *end != '.' || r >= rc)
		return -1;
	kpart_rankinfo *ri = &m->ranks[r];
	const char *f = end + 1;
	uint64_t x = 0;
	if (!strcmp(f, "file")) {
		if (ri->file || !*val || strchr(val, '/'))
			return -1;
		ri->file = kstrdup(val);
		return 0;
	}
	if (!strcmp(f, "crc32")) {
		uint32_t c;
		if (get_hex32(val, &c))
			return -1;
		ri->crc = c;
		return 0;
	}
	if (kopt_parse_u64(val, 0, UINT64_MAX, &x))
		return -1;
	if (!strcmp(f, "bytes"))
		ri->bytes = x;
	else if (!strcmp(f, "nnz"))
		ri->nnz = x;
	else if (!strcmp(f, "cols"))
		ri->cols = x;
	else if (!strcmp(f, "rows"))
		ri->rows = x;
	return 0;
}

/* A file handed where a partition (a directory) was wanted: one line that
 * says what it is and the command that makes a partition of it, for one
 * rank (g.kg -> kpart -R 1 -C 1 -o g.1x1 g.kg; a text graph is imported
 * first).  The output's name is the file's without its extension (and
 * .gz). */
static void not_a_partition(const char *path)
{
	int kind = KMAGIC_OTHER;
	if (kmagic_detect(path, &kind))
		kind = KMAGIC_OTHER;
	size_t n = strlen(path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (n > 3 && !strcmp(path + n - 3, ".gz") && path + n - 3 > base)
		n -= 3;
	for (size_t k = n; k > (size_t)(base - path) + 1; k--)
		if (path[k - 1] == '.') {
			n = k - 1;
			break;
		}
	int len = n > 200 ? 200 : (int)n;
	if (kind == KMAGIC_KEDGE)
		kerror("'%s' is an edge file, not a partition: make one with kpart -R 1 -C 1 -o %.*s.1x1 %s "
		       "(for one rank; -R R -C C for R x C ranks)",
		       path, len, path, path);
	else if (kind == KMAGIC_OTHER || kind == KMAGIC_GZIP)
		kerror("'%s' is not a partition: if it is a graph, import and partition it with kgen --from %s -o "
		       "%.*s.kg && kpart -R 1 -C 1 -o %.*s.1x1 %.*s.kg",
		       path, path, len, path, len, path, len, path);
	else
		kerror("'%s': not a kbfs partition (not a directory)", path);
}

/* kpart_manifest_read, in steps: DIR/manifest's path, when DIR is a
 * partition directory with one (*path kmalloc'd); 0 or a KEXIT code. */
static int manifest_path(const char *dir, char **path)
{
	struct stat st;
	if (stat(dir, &st)) {
		kerror("cannot open '%s': %s", dir, strerror(errno));
		return KEXIT_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		not_a_partition(dir);
		return KEXIT_DATA;
	}
	*path = kfs_join(dir, "manifest");
	if (access(*path, F_OK) && errno == ENOENT) {
		kerror("'%s': not a kbfs partition (no manifest)", dir);
		free(*path);
		return KEXIT_DATA;
	}
	return 0;
}

/* The text before the last line, "checksum = XXXXXXXX", when that is the
 * CRC32 of all of it (the line cut off, in place): 0 or KEXIT_DATA. */
static int manifest_checked(const char *path, char *text, size_t len)
{
	char *last = NULL;
	if (len && text[len - 1] == '\n') {
		text[len - 1] = 0;
		last = strrchr(text, '\n');
		last = last ? last + 1 : text;
	}
	uint32_t want;
	if (!last || strncmp(last, "checksum = ", 11) || get_hex32(last + 11, &want)) {
		kerror("'%s': not a kbfs partition manifest (no checksum line at the end)", path);
		return KEXIT_DATA;
	}
	if (kio_crc32(0, text, (size_t)(last - text)) != want) {
		kerror("'%s': checksum mismatch (corrupt manifest)", path);
		return KEXIT_DATA;
	}
	*last = 0;
	return 0;
}

/* Every "key = value" line of text into m's keys and vals (comments and
 * blank lines skipped; text is cut up): 0 or KEXIT_DATA. */
static int manifest_lines(const char *path, char *text, kpart_manifest *m)
{
	size_t cap = 64;
	m->keys = kmalloc(cap * sizeof *m->keys);
	m->vals = kmalloc(cap * sizeof *m->vals);
	for (char *line = text, *next; *line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = 0;
		if (!*line || *line == '#')
			continue;
		char *eq = strstr(line, " = ");
		if (!eq) {
			kerror("'%s': malformed line '%s'", path, line);
			return KEXIT_DATA;
		}
		*eq = 0;
		if (m->nkeys == cap) {
			cap *= 2;
			m->keys = krealloc(m->keys, cap * sizeof *m->keys);
			m->vals = krealloc(m->vals, cap * sizeof *m->vals);
		}
		m->keys[m->nkeys] = kstrdup(line);
		m->vals[m->nkeys++] = kstrdup(eq + 3);
	}
	return 0;
}

/* The format, version, grid and sizes the lines of m give, checked, into
 * m's fields: 0 or KEXIT_DATA. */
static int manifest_fields(const char *path, kpart_manifest *m)
{
	const char *fmt = kpart_manifest_get(m, "format"), *ver = kpart_manifest_get(m, "version");
	uint64_t major = 0, minor = 0;
	const char *dot = ver, *end = ver;
	if (!fmt || strcmp(fmt, "kpart") || !ver || knum_u64(ver, &dot, &major) || *dot != '.' ||
	    knum_u64(dot + 1, &end, &minor) || *end || major > 65535 || minor > 65535) {
		kerror("'%s': not a kbfs partition manifest", path);
		return KEXIT_DATA;
	}
	if (major > KPART_MAJOR) {
		kerror("'%s': partition format %d.%d is newer than this kbfs supports (%d.%d); upgrade kbfs", path,
		       (int)major, (int)minor, KPART_MAJOR, KPART_MINOR);
		return KEXIT_DATA;
	}
	m->major = major;
	m->minor = minor;
	uint64_t R, C, nv, N, nb, ib, x;
	const char *bad = NULL;
	if (get_u64(m, "R", &R) || R == 0 || R > INT32_MAX)
		bad = "R";
	else if (get_u64(m, "C", &C) || C == 0 || C > INT32_MAX || R * C > KPART_MAX_PROCS)
		bad = "C";
	else if (get_u64(m, "nv", &nv) || kpart_grid_init(&m->g, nv, (int)R, (int)C))
		bad = "nv";
	else if (get_u64(m, "N", &N) || N != m->g.N)
		bad = "N";
	else if (get_u64(m, "nb", &nb) || nb != m->g.nb)
		bad = "nb";
	else if (get_u64(m, "M", &m->M))
		bad = "M";
	else if (get_u64(m, "selfloops", &m->selfloops) || m->selfloops > m->M)
		bad = "selfloops";
	else if (get_u64(m, "nnz", &m->nnz))
		bad = "nnz";
	else if (get_u64(m, "index_bits", &ib) || (ib != 32 && ib != 64))
		bad = "index_bits";
	else if (!kpart_manifest_get(m, "relabel") ||
		 (strcmp(kpart_manifest_get(m, "relabel"), kpart_relabel_names[KPART_RELABEL_NONE]) &&
		  strcmp(kpart_manifest_get(m, "relabel"), kpart_relabel_names[KPART_RELABEL_DEGREE])))
		bad = "relabel";
	if (bad) {
		kerror("'%s': missing or bad value for '%s'", path, bad);
		return KEXIT_DATA;
	}
	m->idx64 = ib == 64;
	m->relabel = !strcmp(kpart_manifest_get(m, "relabel"), kpart_relabel_names[KPART_RELABEL_DEGREE]);
	m->scale = get_u64(m, "scale", &x) || x > 64 ? 0 : (int)x;
	if (get_u64(m, "edgefactor", &m->edgefactor))
		m->edgefactor = 0;
	if (get_u64(m, "seed1", &m->seed1))
		m->seed1 = 2;
	if (get_u64(m, "seed2", &m->seed2))
		m->seed2 = 3;
	return 0;
}

void kpart_rebuild_hint(const kpart_manifest *m, const char *dir, char *buf, size_t len)
{
	const char *src = kpart_manifest_get(m, "source");
	if (!src || !*src || !strcmp(src, "-"))
		src = "EDGEFILE";
	snprintf(buf, len, "kpart -R %d -C %d%s --force -o %s %s", m->g.R, m->g.C,
		 m->relabel ? "" : " --relabel none", dir, src);
}

/* A partition of an older major version (1: rank files held the CSR's
 * column indices too) is refused with the command that rebuilds it. */
static int manifest_old(const char *path, const char *dir, const kpart_manifest *m)
{
	if (m->major >= KPART_MAJOR)
		return 0;
	char hint[1200];
	kpart_rebuild_hint(m, dir, hint, sizeof hint);
	kerror("'%s': partition format %d.%d, which this kbfs no longer reads (it reads %d.%d); rebuild it with %s",
	       path, m->major, m->minor, KPART_MAJOR, KPART_MINOR, hint);
	return KEXIT_DATA;
}

/* Every rank's lines into m->ranks (the grid's, from manifest_fields): 0 or
 * KEXIT_DATA. */
static int manifest_ranks(const char *path, kpart_manifest *m)
{
	uint64_t R = (uint64_t)m->g.R, C = (uint64_t)m->g.C, nranks = R * C;
	/* every rank has its own lines: a grid bigger than the lines can
	 * describe is refused before its table is allocated */
	if (nranks > m->nkeys) {
		kerror("'%s': a %llux%llu grid, but only %zu lines (no entry for most ranks)", path,
		       (unsigned long long)R, (unsigned long long)C, m->nkeys);
		return KEXIT_DATA;
	}
	m->ranks = kcalloc((size_t)nranks, sizeof *m->ranks);
	for (size_t k = 0; k < m->nkeys; k++)
		if (rank_line(m, m->keys[k], m->vals[k])) {
			kerror("'%s': bad line '%s = %s'", path, m->keys[k], m->vals[k]);
			return KEXIT_DATA;
		}
	for (uint64_t r = 0; r < nranks; r++)
		if (!m->ranks[r].file) {
			kerror("'%s': no entry for rank %llu", path, (unsigned long long)r);
			return KEXIT_DATA;
		}
	return 0;
}

int kpart_manifest_read(const char *dir, kpart_manifest *m)
{
	memset(m, 0, sizeof *m);
	char *path, *text = NULL;
	size_t len;
	int rc = manifest_path(dir, &path);
	if (rc)
		return rc;
	if (!(rc = slurp(path, &text, &len)) && !(rc = manifest_checked(path, text, len)) &&
	    !(rc = manifest_lines(path, text, m)) && !(rc = manifest_fields(path, m)) && !(rc = manifest_old(path, dir, m)))
		rc = manifest_ranks(path, m);
	free(text);
	if (rc)
		kpart_manifest_free(m);
	free(path);
	return rc;
}

int kpart_manifest_grid(const char *dir, int *R, int *C, uint64_t *nv)
{
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	*R = m.g.R;
	*C = m.g.C;
	if (nv)
		*nv = m.g.nv;
	kpart_manifest_free(&m);
	return 0;
}

int kpart_build_info_read(const char *dir, const char *const *keys, size_t n, double *vals, int *found)
{
	char *path = kfs_join(dir, "build-info"), *text;
	size_t len;
	int rc = slurp(path, &text, &len);
	free(path);
	if (rc)
		return rc;
	for (size_t k = 0; k < n; k++) {
		/* "key = value" at the start of a line (the first such line) */
		size_t kl = strlen(keys[k]);
		found[k] = 0;
		for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			const char *end;
			double x;
			if (!strncmp(p, keys[k], kl) && !strncmp(p + kl, " = ", 3)) {
				/* decimal and finite: "inf" and "nan" are not times */
				if (knum_double(p + kl + 3, &end, &x) == KNUM_OK && (*end == '\n' || !*end) && x >= 0) {
					vals[k] = x;
					found[k] = 1;
				}
				break;
			}
		}
	}
	free(text);
	return 0;
}

/* --------------------------------------------------------------- rank file */

typedef struct rhead {
	uint16_t major, minor;
	uint32_t flags, R, C, i, j;
	uint64_t nv, N, nb, ncols, nrows, nnz;
} rhead;

static uint64_t expected_size(const rhead *h)
{
	uint64_t ow = h->flags & KPART_F_OFF64 ? 8 : 4, iw = h->flags & KPART_F_IDX64 ? 8 : 4;
	uint64_t lim = UINT64_C(1) << 58;
	if (h->ncols > lim || h->nrows > lim || h->nnz > lim || h->nb > lim)
		return 0;
	return KPART_HEADER_BYTES + ow * (h->ncols + 1) + ow * (h->nrows + 1) + iw * h->nnz + 8 * h->nb +
	       (h->flags & KPART_F_ORIG ? 8 * h->nb : 0) + KPART_TRAILER_BYTES;
}

static int read_header(kio_in *in, const char *name, rhead *h, uint32_t *crc)
{
	unsigned char b[KPART_HEADER_BYTES];
	int rc = kio_read_exact(in, b, sizeof b, "header");
	if (rc)
		return rc;
	if (memcmp(b, kpart_magic, KPART_MAGIC_LEN)) {
		kerror("'%s': not a kbfs rank file (wrong magic number)", name);
		return KEXIT_DATA;
	}
	if (kio_crc32(0, b, 88) != kio_get32(b + 88)) {
		kerror("'%s': header checksum mismatch (corrupt rank file)", name);
		return KEXIT_DATA;
	}
	if (kio_get_version(b, name, "rank file version", KPART_MAJOR, KPART_MINOR, &h->major, &h->minor, &h->flags))
		return KEXIT_DATA;
	h->R = kio_get32(b + 16);
	h->C = kio_get32(b + 20);
	h->i = kio_get32(b + 24);
	h->j = kio_get32(b + 28);
	h->nv = kio_get64(b + 32);
	h->N = kio_get64(b + 40);
	h->nb = kio_get64(b + 48);
	h->ncols = kio_get64(b + 56);
	h->nrows = kio_get64(b + 64);
	h->nnz = kio_get64(b + 72);
	*crc = kio_crc32(0, b, sizeof b);
	return 0;
}

/* n elements of fw bytes on disk into dst (mw bytes each in memory) */
static int read_array(kio_in *in, void *dst, uint64_t n, int mw, int fw, uint32_t *crc, const char *what)
{
	unsigned char *d = dst;
	if (HOST_LE && mw == fw) {
		/* a regular file is read on all threads (kio_read_crc) */
		return kio_read_crc(in, d, (size_t)(n * (uint64_t)fw), crc, what);
	}
	enum { CH = 1 << 22 };
	unsigned char *buf = kmalloc((n < CH ? (size_t)n : CH) * 8 + 8); /* no more than the array */
	for (uint64_t k0 = 0; k0 < n; k0 += CH) {
		size_t k = n - k0 > CH ? CH : (size_t)(n - k0);
		int rc = kio_read_exact(in, buf, k * (size_t)fw, what);
		if (rc) {
			free(buf);
			return rc;
		}
		*crc = kio_crc32(*crc, buf, k * (size_t)fw);
#pragma omp parallel for schedule(static) if (k > 65536)
		for (size_t e = 0; e < k; e++) {
			uint64_t v = fw == 8 ? kio_get64(buf + 8 * e) : kio_get32(buf + 4 * e);
			if (mw == 8)
				((uint64_t *)dst)[k0 + e] = v;
			else
				((uint32_t *)dst)[k0 + e] = (uint32_t)v;
		}
	}
	free(buf);
	return 0;
}

/* The row indices (the bulk of a rank file): read into memory, or with
 * KBFS_LOAD_MMAP=1 (an experiment) mapped from the file where it can be
 * (little-endian, 4- or 8-byte aligned in the file, no other mapping
 * guarded in this process), their CRC taken on all threads from the
 * mapping: no private copy (at scale 29 on 4x1, 17 GB a rank).  A file cut
 * short while it is mapped ends the program with a line, not a crash. */
static int row_indices(kio_in *in, const char *path, kpart_block *b, int iw, uint32_t *crc)
{
	const size_t n = (size_t)b->nnz * (size_t)iw;
	const char *v = getenv("KBFS_LOAD_MMAP");
	if (HOST_LE && v && !strcmp(v, "1") && !klog_guard_active()) {
		const void *p;
		int rc = kio_map(in, n, (size_t)iw, &p, &b->map, &b->maplen);
		if (rc > 0)
			return rc;
		if (rc == 0) {
			klog_guard_map(b->map, b->maplen, "'%s': the rank file was cut short while in use", path);
			/* test hook (kbfs(1)): the file cut to half under the mapping */
			const char *cut = getenv("KBFS_TEST_LOAD_CUT");
			if (cut && !strcmp(cut, "1") && truncate(path, (off_t)(kio_size(in) / 2))) {
				/* the test then fails for want of the error */
			}
			*crc = kio_crc32(*crc, p, n); /* on all threads */
			b->rowidx = (void *)p;
			kinfo("'%s': row indices mapped from the file, %.2f GiB (KBFS_LOAD_MMAP=1)", path,
			      (double)n / (1u << 30));
			return 0;
		}
	}
	b->rowidx = kmalloc(kmul((size_t)b->nnz, (size_t)iw));
	return read_array(in, b->rowidx, b->nnz, iw, iw, crc, "row indices");
}

static int offsets_ok(const uint64_t *p, uint64_t n, uint64_t nnz)
{
	if (p[0] != 0 || p[n] != nnz)
		return 0;
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (n > 65536)
	for (uint64_t k = 0; k < n; k++)
		bad |= p[k + 1] < p[k];
	return !bad;
}

static int indices_ok(const void *a, int w, uint64_t n, uint64_t lim)
{
	int bad = 0;
	if (w == 4) {
		const uint32_t *x = a;
#pragma omp parallel for schedule(static) reduction(| : bad) if (n > 65536)
		for (uint64_t k = 0; k < n; k++)
			bad |= x[k] >= lim;
	} else {
		const uint64_t *x = a;
#pragma omp parallel for schedule(static) reduction(| : bad) if (n > 65536)
		for (uint64_t k = 0; k < n; k++)
			bad |= x[k] >= lim;
	}
	return !bad;
}

void kpart_block_free(kpart_block *b)
{
	if (b->colidx == b->rowidx)
		b->colidx = NULL;
	if (b->map) {
		klog_guard_clear_if(b->map);
		munmap(b->map, b->maplen);
	} else {
		free(b->rowidx);
	}
	free(b->colptr);
	free(b->rowptr);
	free(b->colidx); /* NULL above where it was rowidx (a 1x1 block) */
	free(b->tdeg);
	free(b->orig);
	memset(b, 0, sizeof *b);
}

/* Open rank `rank`'s file and check what can be checked before reading
 * its arrays: the manifest's size, the header (its CRC, and every field
 * against the manifest: a file of another partition differs there, even
 * where its whole-file CRC happens to be the same) and the size the header
 * implies.  0 with *in open, or a KEXIT code after kerror(). */
static int open_rank(const char *dir, const char *path, const kpart_manifest *m, int rank, kio_in **inp, rhead *h,
		     uint32_t *crc)
{
	const kpart_rankinfo *ri = &m->ranks[rank];
	kio_in *in = kio_open_in(path, KIO_FILE);
	if (!in)
		return KEXIT_IO;
	int rc = KEXIT_DATA;
	uint64_t size = kio_size(in);
	if (size < ri->bytes) {
		kerror("'%s': truncated rank file (%llu bytes, the manifest says %llu)", path,
		       (unsigned long long)size, (unsigned long long)ri->bytes);
		goto fail;
	}
	if (size > ri->bytes) {
		kerror("'%s': %llu bytes, the manifest says %llu (corrupt partition)", path, (unsigned long long)size,
		       (unsigned long long)ri->bytes);
		goto fail;
	}
	if ((rc = read_header(in, path, h, crc)))
		goto fail;
	rc = KEXIT_DATA;
	if (h->major < KPART_MAJOR) {
		char hint[1200];
		kpart_rebuild_hint(m, dir, hint, sizeof hint);
		kerror("'%s': rank file format %u.%u, which this kbfs no longer reads (it reads %d.%d); rebuild the "
		       "partition with %s",
		       path, (unsigned)h->major, (unsigned)h->minor, KPART_MAJOR, KPART_MINOR, hint);
		goto fail;
	}
	int i = rank / m->g.C, j = rank % m->g.C;
	if (h->R != (uint32_t)m->g.R || h->C != (uint32_t)m->g.C || h->i != (uint32_t)i || h->j != (uint32_t)j ||
	    h->nv != m->g.nv || h->N != m->g.N || h->nb != m->g.nb || h->ncols != m->g.N / (uint64_t)m->g.C ||
	    h->nrows != m->g.N / (uint64_t)m->g.R || h->nnz != ri->nnz || !!(h->flags & KPART_F_IDX64) != m->idx64 ||
	    !!(h->flags & KPART_F_RELABEL) != m->relabel || (h->flags & ~15u)) {
		kerror("'%s': header does not match the manifest (a file from another partition?)", path);
		goto fail;
	}
	if (expected_size(h) != size) {
		kerror("'%s': size %llu does not match its header (corrupt rank file)", path, (unsigned long long)size);
		goto fail;
	}
	*inp = in;
	return 0;
fail:
	kio_close_in(in);
	return rc;
}

int kpart_rank_header_ok(const char *dir, const kpart_manifest *m, int rank)
{
	char *path = kfs_join(dir, m->ranks[rank].file);
	kio_in *in = NULL;
	rhead h;
	uint32_t crc;
	int rc = open_rank(dir, path, m, rank, &in, &h, &crc);
	kio_close_in(in);
	free(path);
	return rc;
}

int kpart_load_with(const char *dir, const kpart_manifest *m, int rank, kpart_block *b)
{
	return kpart_load_flags(dir, m, rank, b, 0);
}

int kpart_load_flags(const char *dir, const kpart_manifest *m, int rank, kpart_block *b, int flags)
{
	memset(b, 0, sizeof *b);
	const kpart_rankinfo *ri = &m->ranks[rank];
	char *path = kfs_join(dir, ri->file);
	kio_in *in = NULL;
	rhead h;
	uint32_t crc;
	int rc = open_rank(dir, path, m, rank, &in, &h, &crc);
	if (rc) {
		free(path);
		return rc;
	}
	int i = rank / m->g.C, j = rank % m->g.C;
	b->g = m->g;
	b->i = i;
	b->j = j;
	b->ncols = h.ncols;
	b->nrows = h.nrows;
	b->nnz = h.nnz;
	b->idx64 = m->idx64;
	int ow = h.flags & KPART_F_OFF64 ? 8 : 4, iw = b->idx64 ? 8 : 4;
	b->colptr = kmalloc(kmul((size_t)h.ncols + 1, 8));
	b->rowptr = kmalloc(kmul((size_t)h.nrows + 1, 8));
	b->tdeg = kmalloc(kmul((size_t)h.nb, 8));
	if (h.flags & KPART_F_ORIG)
		b->orig = kmalloc(kmul((size_t)h.nb, 8));
	if ((rc = read_array(in, b->colptr, h.ncols + 1, 8, ow, &crc, "column offsets")) ||
	    (rc = row_indices(in, path, b, iw, &crc)) ||
	    (rc = read_array(in, b->rowptr, h.nrows + 1, 8, ow, &crc, "row offsets")) ||
	    (rc = read_array(in, b->tdeg, h.nb, 8, 8, &crc, "degrees")) ||
	    (b->orig && (rc = read_array(in, b->orig, h.nb, 8, 8, &crc, "original ids"))))
		goto fail;
	rc = KEXIT_DATA;
	unsigned char t[KPART_TRAILER_BYTES];
	if (kio_read_exact(in, t, sizeof t, "trailer"))
		goto fail;
	uint32_t whole = kio_crc32(crc, t, sizeof t);
	if (memcmp(t, "KEND", 4) || kio_get64(t + 4) != h.nnz || kio_get32(t + 12) != crc ||
	    kio_crc32(0, t, 16) != kio_get32(t + 16) || whole != ri->crc) {
		kerror("'%s': checksum mismatch (corrupt rank file)", path);
		goto fail;
	}
	if (!offsets_ok(b->colptr, h.ncols, h.nnz) || !offsets_ok(b->rowptr, h.nrows, h.nnz) ||
	    !indices_ok(b->rowidx, iw, h.nnz, h.nrows)) {
		kerror("'%s': offsets or indices out of range (corrupt rank file)", path);
		goto fail;
	}
	if (!(flags & KPART_LOAD_NO_COLIDX)) {
		double t0 = ktime();
		int bad = kpart_block_csr(b);
		if (bad) {
			kerror("'%s': %s", path, kpart_csr_error(bad));
			goto fail;
		}
		if (b->colidx == b->rowidx)
			kinfo("'%s': the block is symmetric (checked in %.3f s): its CSC serves as its CSR", path,
			      ktime() - t0);
		else
			kinfo("'%s': column indices made from the CSC in %.3f s", path, ktime() - t0);
	}
	rc = 0;
	b->ne_input = m->M;
	b->selfloops = m->selfloops;
	b->relabel = m->relabel;
	b->seed1 = m->seed1;
	b->seed2 = m->seed2;
	b->scale = m->scale;
	b->edgefactor = m->edgefactor;
fail:
	if (rc)
		kpart_block_free(b);
	kio_close_in(in);
	free(path);
	return rc;
}

int kpart_load(const char *dir, int rank, kpart_block *b)
{
	memset(b, 0, sizeof *b);
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	if (rank < 0 || (uint64_t)rank >= (uint64_t)m.g.R * (uint64_t)m.g.C) {
		kerror("'%s': no rank %d in this %dx%d partition", dir, rank, m.g.R, m.g.C);
		rc = KEXIT_USAGE;
	} else {
		rc = kpart_load_with(dir, &m, rank, b);
	}
	kpart_manifest_free(&m);
	return rc;
}

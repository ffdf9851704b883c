/*
 * kpartstat.c: looking at a finished partition -- the deep check and the
 * dump behind `kpart --check` and `kpart --dump`, and the report and heat
 * map values kstat prints (kpart_report, kpart_heatmap_values).
 */
#include "kpart.h"
#include "kio.h"
#include "kfs.h"
#include "kjson.h"
#include "klog.h"
#include "kmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ check, dump */

static int has_map(const kpart_manifest *m)
{
	const char *v = kpart_manifest_get(m, "source_map");
	return v && !strcmp(v, "yes");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

typedef struct check_sums {
	uint64_t h_uv, h_vu, tdeg, nnz;
} check_sums;

/* The structure of one loaded block; one line for the first problem. */
static int check_block(const char *path, const kpart_block *b, const kpart_rankinfo *ri, check_sums *s)
{
	const kpart_grid *g = &b->g;
	uint64_t *cur = kmalloc(kmul((size_t)b->nrows, 8));
	memcpy(cur, b->rowptr, (size_t)b->nrows * 8);
	const char *bad = NULL;
	uint64_t cols = 0, rows = 0, col0 = kpart_col_first(g, b->j);
	for (uint64_t c = 0; c < b->ncols && !bad; c++) {
		uint64_t u = col0 + c;
		cols += b->colptr[c + 1] > b->colptr[c];
		for (uint64_t k = b->colptr[c]; k < b->colptr[c + 1]; k++) {
			uint64_t r = kpart_idx(b->rowidx, b->idx64, k);
			if (k > b->colptr[c] && r <= kpart_idx(b->rowidx, b->idx64, k - 1)) {
				bad = "row indices not sorted or duplicated within a column";
				break;
			}
			if (cur[r] >= b->rowptr[r + 1] || kpart_idx(b->colidx, b->idx64, cur[r]) != c) {
				bad = "the CSR arrays are not the transpose of the CSC arrays";
				break;
			}
			cur[r]++;
			uint64_t v = kpart_row_vertex(g, b->i, r);
			if (u == v || u >= g->nv || v >= g->nv) {
				bad = u == v ? "a self-loop is stored" : "an edge touches a padding vertex";
				break;
			}
			s->h_uv += kpart_pair_hash(u, v);
			s->h_vu += kpart_pair_hash(v, u);
		}
	}
	for (uint64_t r = 0; r < b->nrows && !bad; r++) {
		rows += b->rowptr[r + 1] > b->rowptr[r];
		if (cur[r] != b->rowptr[r + 1])
			bad = "the CSR arrays are not the transpose of the CSC arrays";
	}
	free(cur);
	uint64_t first = kpart_owned_first(g, b->i, b->j);
	for (uint64_t k = 0; k < g->nb && !bad; k++) {
		s->tdeg += b->tdeg[k];
		if (first + k >= g->nv && b->tdeg[k])
			bad = "a padding vertex has a degree";
	}
	if (!bad && (cols != ri->cols || rows != ri->rows))
		bad = "non-empty column or row counts differ from the manifest";
	s->nnz += b->nnz;
	if (bad)
		kerror("'%s': %s", path, bad);
	return bad ? KEXIT_DATA : 0;
}

/* Is the file there, of the manifest's size and CRC?  One line if not. */
static int check_file(const char *path, const kpart_rankinfo *ri)
{
	struct stat st;
	if (stat(path, &st)) {
		if (errno == ENOENT) {
			kerror("'%s': missing rank file (the manifest lists it)", path);
			return KEXIT_DATA;
		}
		kerror("cannot open '%s': %s", path, strerror(errno));
		return KEXIT_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		kerror("cannot read '%s': not a regular file", path);
		return KEXIT_IO;
	}
	if ((uint64_t)st.st_size < ri->bytes) {
		kerror("'%s': truncated rank file (%llu bytes, the manifest says %llu)", path,
		       (unsigned long long)st.st_size, (unsigned long long)ri->bytes);
		return KEXIT_DATA;
	}
	if ((uint64_t)st.st_size > ri->bytes) {
		kerror("'%s': %llu bytes, the manifest says %llu (corrupt partition)", path,
		       (unsigned long long)st.st_size, (unsigned long long)ri->bytes);
		return KEXIT_DATA;
	}
	kio_in *in = kio_open_in(path, KIO_FILE);
	if (!in)
		return KEXIT_IO;
	size_t CH = ri->bytes < (1 << 20) ? (size_t)ri->bytes + 1 : (1 << 20); /* no more than the file */
	unsigned char *buf = kmalloc(CH);
	uint32_t crc = 0;
	size_t got;
	int rc;
	while (!(rc = kio_read(in, buf, CH, &got)) && got)
		crc = kio_crc32(crc, buf, got);
	free(buf);
	kio_close_in(in);
	if (rc)
		return rc;
	if (crc != ri->crc) {
		kerror("'%s': checksum mismatch (corrupt rank file)", path);
		return KEXIT_DATA;
	}
	return 0;
}

int kpart_check(const char *dir, int verbose)
{
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	int nranks = m.g.R * m.g.C, worst = 0, bad = 0;
	check_sums s = {0};
	uint64_t *orig = NULL, norig = 0;
	for (int r = 0; r < nranks; r++) {
		char *path = kfs_join(dir, m.ranks[r].file);
		kpart_block b;
		rc = check_file(path, &m.ranks[r]);
		if (!rc)
			rc = kpart_load_with(dir, &m, r, &b);
		if (!rc) {
			rc = check_block(path, &b, &m.ranks[r], &s);
			if (b.orig) {
				if (!orig)
					orig = kmalloc(kmul((size_t)m.g.N, 8));
				memcpy(orig + norig, b.orig, (size_t)m.g.nb * 8);
				norig += m.g.nb;
			}
			kpart_block_free(&b);
		}
		if (rc) {
			bad++;
			worst = rc > worst ? rc : worst;
		} else if (verbose) {
			kinfo("'%s': ok", path);
		}
		free(path);
	}
	if (!bad) {
		const char *why = NULL;
		if (s.nnz != m.nnz)
			why = "stored edges do not add up to the manifest's nnz";
		else if (s.h_uv != s.h_vu)
			why = "the stored edges are not symmetric";
		else if (s.tdeg != 2 * (m.M - m.selfloops))
			why = "degrees do not add up to twice the non-self-loop input tuples";
		else if ((orig != NULL) != (m.relabel || has_map(&m)) ||
			 (orig && norig != m.g.N))
			why = "original ids missing or unexpected";
		if (!why && orig) {
			/* every real vertex keeps one distinct id; padding has none */
			qsort(orig, (size_t)norig, 8, cmp_u64);
			uint64_t real = 0;
			for (uint64_t k = 0; k < norig; k++) {
				real += orig[k] != KPART_NO_VERTEX;
				if (k && orig[k] != KPART_NO_VERTEX && orig[k] == orig[k - 1])
					why = "the original-id map is not a bijection";
				if (!has_map(&m) && orig[k] != KPART_NO_VERTEX &&
				    orig[k] >= m.g.nv)
					why = "the original-id map is not a bijection";
			}
			if (real != m.g.nv)
				why = "the original-id map is not a bijection";
		}
		if (why) {
			kerror("'%s': %s", dir, why);
			bad++;
			worst = KEXIT_DATA;
		}
	}
	free(orig);
	kpart_manifest_free(&m);
	return bad ? worst : 0;
}

static void put_u64(FILE *f, uint64_t x, char end)
{
	char b[24];
	int n = 0;
	do
		b[n++] = (char)('0' + x % 10);
	while ((x /= 10));
	while (n)
		putc_unlocked(b[--n], f);
	putc_unlocked(end, f);
}

int kpart_dump(const char *dir, FILE *out, int layout)
{
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	int nranks = m.g.R * m.g.C;
	uint64_t *orig = NULL;
	kpart_block b;
	for (int r = 0; r < nranks && !layout; r++) {
		if ((rc = kpart_load_with(dir, &m, r, &b)))
			goto out;
		if (b.orig) {
			if (!orig)
				orig = kcalloc((size_t)m.g.N, 8);
			memcpy(orig + kpart_owned_first(&m.g, b.i, b.j), b.orig, (size_t)m.g.nb * 8);
		}
		kpart_block_free(&b);
	}
	for (int r = 0; r < nranks; r++) {
		if ((rc = kpart_load_with(dir, &m, r, &b)))
			goto out;
		uint64_t col0 = kpart_col_first(&m.g, b.j);
		for (uint64_t c = 0; c < b.ncols; c++)
			for (uint64_t k = b.colptr[c]; k < b.colptr[c + 1]; k++) {
				uint64_t u = col0 + c, v = kpart_row_vertex(&m.g, b.i, kpart_idx(b.rowidx, b.idx64, k));
				if (layout)
					put_u64(out, (uint64_t)r, ' ');
				else if (orig) {
					u = orig[u];
					v = orig[v];
				}
				put_u64(out, u, ' ');
				put_u64(out, v, '\n');
			}
		kpart_block_free(&b);
	}
	if (ferror(out)) {
		kerror("cannot write standard output: %s", strerror(errno));
		rc = KEXIT_IO;
	}
out:
	free(orig);
	kpart_manifest_free(&m);
	return rc;
}

/* ---------------------------------------------------------------- reports */

int kpart_report(const char *dir, FILE *out, int json)
{
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	int R = m.g.R, C = m.g.C, n = R * C;
	/* the figures come from the manifest: first make sure it describes
	 * the files that are there (present, of its sizes and checksums) */
	for (int r = 0; r < n && !rc; r++) {
		char *path = kfs_join(dir, m.ranks[r].file);
		rc = check_file(path, &m.ranks[r]);
		if (!rc)
			rc = kpart_rank_header_ok(dir, &m, r);
		free(path);
	}
	if (rc) {
		kpart_manifest_free(&m);
		return rc;
	}
	uint64_t maxnnz = 0, maxdev = 0, bytes = 0;
	for (int r = 0; r < n; r++) {
		uint64_t d = kpart_device_bytes(&m.g, m.ranks[r].nnz, m.idx64);
		maxnnz = m.ranks[r].nnz > maxnnz ? m.ranks[r].nnz : maxnnz;
		maxdev = d > maxdev ? d : maxdev;
		bytes += m.ranks[r].bytes;
	}
	double mean = (double)m.nnz / n, imb = mean > 0 ? (double)maxnnz / mean : 1.0;
	if (json) {
		kjson_writer *w = kjson_writer_new(out, 0);
		kjson_begin_object(w);
		kjson_kv_string(w, "partition", dir);
		kjson_kv_int(w, "R", R);
		kjson_kv_int(w, "C", C);
		kjson_kv_uint(w, "nv", m.g.nv);
		kjson_kv_uint(w, "N", m.g.N);
		kjson_kv_uint(w, "nb", m.g.nb);
		kjson_kv_uint(w, "M", m.M);
		kjson_kv_uint(w, "selfloops", m.selfloops);
		kjson_kv_uint(w, "nnz", m.nnz);
		kjson_kv_string(w, "relabel", kpart_relabel_name(m.relabel));
		kjson_kv_int(w, "index_bits", m.idx64 ? 64 : 32);
		kjson_kv_uint(w, "bytes", bytes);
		kjson_kv_double(w, "imbalance", imb);
		kjson_kv_uint(w, "device_bytes_max", maxdev);
		kjson_key(w, "ranks");
		kjson_begin_array(w);
		for (int r = 0; r < n; r++) {
			const kpart_rankinfo *x = &m.ranks[r];
			kjson_begin_object(w);
			kjson_kv_int(w, "rank", r);
			kjson_kv_int(w, "i", r / C);
			kjson_kv_int(w, "j", r % C);
			kjson_kv_uint(w, "nb", m.g.nb);
			kjson_kv_uint(w, "nnz", x->nnz);
			kjson_kv_uint(w, "cols", x->cols);
			kjson_kv_uint(w, "rows", x->rows);
			kjson_kv_uint(w, "bytes", x->bytes);
			kjson_kv_uint(w, "device_bytes", kpart_device_bytes(&m.g, x->nnz, m.idx64));
			kjson_end_object(w);
		}
		kjson_end_array(w);
		kjson_end_object(w);
		if (kjson_writer_free(w))
			rc = KEXIT_IO;
	} else {
		fprintf(out, "partition %s: %dx%d grid, %llu vertices (N %llu, nb %llu), %llu tuples (%llu self-loops), "
			     "%llu stored edges, relabel %s, %d-bit indices, %llu bytes\n",
			dir, R, C, (unsigned long long)m.g.nv, (unsigned long long)m.g.N, (unsigned long long)m.g.nb,
			(unsigned long long)m.M, (unsigned long long)m.selfloops, (unsigned long long)m.nnz,
			kpart_relabel_name(m.relabel), m.idx64 ? 64 : 32, (unsigned long long)bytes);
		fprintf(out, "%6s %5s %5s %12s %14s %12s %12s %14s %14s\n", "rank", "i", "j", "nb", "nnz", "cols", "rows",
			"bytes", "device_bytes");
		for (int r = 0; r < n; r++) {
			const kpart_rankinfo *x = &m.ranks[r];
			fprintf(out, "%6d %5d %5d %12llu %14llu %12llu %12llu %14llu %14llu\n", r, r / C, r % C,
				(unsigned long long)m.g.nb, (unsigned long long)x->nnz, (unsigned long long)x->cols,
				(unsigned long long)x->rows, (unsigned long long)x->bytes,
				(unsigned long long)kpart_device_bytes(&m.g, x->nnz, m.idx64));
		}
		fprintf(out, "edge imbalance (max/mean nnz): %.4f\n", imb);
		fprintf(out, "device memory per rank, at most: %llu bytes\n", (unsigned long long)maxdev);
		if (ferror(out))
			rc = KEXIT_IO;
	}
	if (rc)
		kerror("cannot write the report: %s", strerror(errno));
	kpart_manifest_free(&m);
	return rc;
}

int kpart_heatmap_values(const char *dir, double **vals, int *R, int *C)
{
	kpart_manifest m;
	int rc = kpart_manifest_read(dir, &m);
	if (rc)
		return rc;
	int n = m.g.R * m.g.C;
	*vals = kmalloc(kmul((size_t)n, sizeof **vals));
	for (int r = 0; r < n; r++)
		(*vals)[r] = (double)m.ranks[r].nnz;
	*R = m.g.R;
	*C = m.g.C;
	kpart_manifest_free(&m);
	return 0;
}

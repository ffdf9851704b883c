#include "kgraph.h"
#include "kimport.h"
#include "kjson.h"
#include "klog.h"
#include "kmem.h"
#include "ksort.h"
#include "ksvg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair128 {
	uint64_t a, b;
} pair128;

static int cmp128(const void *x, const void *y)
{
	const pair128 *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

static int bits_for(uint64_t n)
{
	int b = 1;
	while (b < 64 && (n - 1) >> b)
		b++;
	return b;
}

int kgraph_stats_file(const char *path, kgraph_stats *s)
{
	memset(s, 0, sizeof *s);
	kimport_result r;
	int rc = kimport_graph(path, KIMPORT_AUTO, 0, &r, &s->info);
	if (rc)
		return rc;
	uint64_t *uv = r.uv;
	s->format = r.format;
	s->map = s->map_owned = r.map;
	uint64_t nv = s->nv = r.nv, ne = s->ne = r.ne;
	s->deg = kcalloc((size_t)(nv ? nv : 1), 8);
	for (uint64_t k = 0; k < ne; k++) {
		uint64_t u = uv[2 * k], v = uv[2 * k + 1];
		s->deg[u]++;
		s->deg[v]++;
		if (u == v)
			s->selfloops++;
	}
	int vb = bits_for(nv ? nv : 1);
	if (2 * vb <= 64) {
		/* pack each unordered pair into one key, in place over uv */
		uint64_t *keys = uv;
		for (uint64_t k = 0; k < ne; k++) {
			uint64_t u = uv[2 * k], v = uv[2 * k + 1];
			keys[k] = u < v ? (u << vb) | v : (v << vb) | u;
		}
		ksort_u64(keys, NULL, (size_t)ne, 2 * vb);
		for (uint64_t k = 1; k < ne; k++)
			s->duplicates += keys[k] == keys[k - 1];
	} else {
		pair128 *p = (pair128 *)uv;
		for (uint64_t k = 0; k < ne; k++)
			if (p[k].a > p[k].b) {
				uint64_t t = p[k].a;
				p[k].a = p[k].b;
				p[k].b = t;
			}
		qsort(p, (size_t)ne, sizeof *p, cmp128);
		for (uint64_t k = 1; k < ne; k++)
			s->duplicates += !cmp128(&p[k], &p[k - 1]);
	}
	free(uv);
	for (uint64_t v = 0; v < nv; v++) {
		uint64_t d = s->deg[v];
		int bin = 0;
		if (d == 0)
			s->isolated++;
		else
			bin = 64 - __builtin_clzll(d);
		s->hist[bin]++;
		if (bin + 1 > s->nbins)
			s->nbins = bin + 1;
		if (d > s->maxdeg) {
			s->maxdeg = d;
			s->maxdeg_vertex = v;
		}
	}
	return 0;
}

void kgraph_stats_free(kgraph_stats *s)
{
	free(s->deg);
	free(s->map_owned);
	kedge_info_free(&s->info);
}

static uint64_t orig_id(const kgraph_stats *s, uint64_t v) { return s->map ? s->map[v] : v; }

void kgraph_print(FILE *fp, const char *path, const kgraph_stats *s)
{
	const char *kind = kedge_prov_get(&s->info, "kind");
	fprintf(fp, "file:               %s\n", path);
	if (s->format == KIMPORT_KEDGE)
		fprintf(fp, "format:             kedge %u.%u%s%s\n", s->info.major, s->info.minor,
			(s->info.flags & KEDGE_F_ZLIB) ? ", compressed" : "", (s->info.flags & KEDGE_F_MAP) ? ", id map" : "");
	else
		fprintf(fp, "format:             %s%s\n", kimport_format_name(s->format), s->map ? ", id map" : "");
	if (kind && !strcmp(kind, "kronecker"))
		fprintf(fp, "source:             Kronecker scale %" PRIu64 ", edgefactor %" PRIu64 ", seeds %" PRIu64
			    " %" PRIu64 ", generator v%" PRIu64 "\n",
			kedge_prov_u64(&s->info, "scale", 0), kedge_prov_u64(&s->info, "edgefactor", 0),
			kedge_prov_u64(&s->info, "seed1", 0), kedge_prov_u64(&s->info, "seed2", 0),
			kedge_prov_u64(&s->info, "g500_version", 3));
	else if (kind && !strcmp(kind, "import"))
		fprintf(fp, "source:             imported from %s\n", kedge_prov_get(&s->info, "source") ?: "?");
	fprintf(fp, "vertices:           %" PRIu64 "\n", s->nv);
	fprintf(fp, "edges:              %" PRIu64 "\n", s->ne);
	fprintf(fp, "self-loops:         %" PRIu64 "\n", s->selfloops);
	fprintf(fp, "duplicate edges:    %" PRIu64 "\n", s->duplicates);
	fprintf(fp, "isolated vertices:  %" PRIu64 "\n", s->isolated);
	fprintf(fp, "maximum degree:     %" PRIu64 " (vertex %" PRIu64 ")\n", s->maxdeg, orig_id(s, s->maxdeg_vertex));
	fprintf(fp, "mean degree:        %.3f\n", s->nv ? 2.0 * (double)s->ne / (double)s->nv : 0.0);
	fprintf(fp, "degree histogram (log2 bins):\n");
	for (int b = 0; b < s->nbins; b++) {
		if (b == 0)
			fprintf(fp, "  %-24s %" PRIu64 "\n", "0", s->hist[0]);
		else {
			char range[64];
			snprintf(range, sizeof range, "[%" PRIu64 ", %" PRIu64 ")", (uint64_t)1 << (b - 1),
				 b < 64 ? (uint64_t)1 << b : UINT64_MAX);
			fprintf(fp, "  %-24s %" PRIu64 "\n", range, s->hist[b]);
		}
	}
}

void kgraph_print_json(FILE *fp, const char *path, const kgraph_stats *s)
{
	kjson_writer *w = kjson_writer_new(fp, 1);
	kjson_begin_object(w);
	kjson_kv_string(w, "file", path);
	kjson_kv_string(w, "type", "edges");
	kjson_kv_string(w, "format", kimport_format_name(s->format));
	if (s->format == KIMPORT_KEDGE) {
		kjson_kv_uint(w, "format_major", s->info.major);
		kjson_kv_uint(w, "format_minor", s->info.minor);
	}
	kjson_kv_bool(w, "compressed", !!(s->info.flags & KEDGE_F_ZLIB));
	kjson_kv_bool(w, "id_map", s->map != NULL);
	kjson_kv_uint(w, "vertices", s->nv);
	kjson_kv_uint(w, "edges", s->ne);
	kjson_kv_uint(w, "self_loops", s->selfloops);
	kjson_kv_uint(w, "duplicate_edges", s->duplicates);
	kjson_kv_uint(w, "isolated_vertices", s->isolated);
	kjson_kv_uint(w, "max_degree", s->maxdeg);
	kjson_kv_uint(w, "max_degree_vertex", orig_id(s, s->maxdeg_vertex));
	kjson_key(w, "degree_histogram_log2");
	kjson_begin_array(w);
	for (int b = 0; b < s->nbins; b++) {
		kjson_begin_object(w);
		kjson_kv_uint(w, "min", b ? 1ull << (b - 1) : 0);
		kjson_kv_uint(w, "max_exclusive", b ? (b < 64 ? 1ull << b : UINT64_MAX) : 1);
		kjson_kv_uint(w, "vertices", s->hist[b]);
		kjson_end_object(w);
	}
	kjson_end_array(w);
	kjson_key(w, "provenance");
	kjson_begin_object(w);
	for (const char *p = s->info.prov; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (eq) {
			char key[128];
			size_t kl = (size_t)(eq - p) < sizeof key - 1 ? (size_t)(eq - p) : sizeof key - 1;
			memcpy(key, p, kl);
			key[kl] = 0;
			kjson_key(w, key);
			kjson_string_n(w, eq + 1, len - (size_t)(eq - p) - 1);
		}
		p = eol ? eol + 1 : p + len;
	}
	kjson_end_object(w);
	kjson_end_object(w);
	kjson_writer_free(w);

}

int kgraph_svg(FILE *fp, const char *path, const kgraph_stats *s)
{
	/* vertices per exact degree, for degrees >= 1 */
	uint64_t maxd = s->maxdeg;
	uint64_t *cnt = kcalloc((size_t)maxd + 1, 8);
	for (uint64_t v = 0; v < s->nv; v++)
		cnt[s->deg[v]]++;
	size_t n = 0;
	for (uint64_t d = 1; d <= maxd; d++)
		n += cnt[d] != 0;
	double *x = kmalloc((n + 1) * sizeof *x), *y = kmalloc((n + 1) * sizeof *y);
	n = 0;
	for (uint64_t d = 1; d <= maxd; d++)
		if (cnt[d]) {
			x[n] = (double)d;
			y[n++] = (double)cnt[d];
		}
	char title[512];
	snprintf(title, sizeof title, "Degree distribution of %s", path);
	ksvg_chart *c = ksvg_chart_new(title, "degree", "vertices", 1, 1);
	ksvg_chart_series_style(c, "vertices with this degree", x, y, n, KSVG_POINTS);
	int rc = ksvg_chart_write(c, fp);
	ksvg_chart_free(c);
	free(x);
	free(y);
	free(cnt);
	return rc;
}

#include "krun.h"
#include "kio.h"
#include "klog.h"
#include "kstat.h"
#include "ksvg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int krun_looks_like_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	int c;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

int krun_load(const char *path, krun *r)
{
	memset(r, 0, sizeof *r);
	kio_in *in = kio_open_in(path, 1);
	if (!in)
		return KEXIT_IO;
	size_t cap = 1 << 16, len = 0, got;
	char *text = kmalloc(cap);
	int rc;
	for (;;) {
		if (len == cap)
			text = krealloc(text, cap *= 2);
		if ((rc = kio_read(in, text + len, cap - len, &got)))
			break;
		if (!got)
			break;
		len += got;
	}
	kio_close_in(in);
	if (rc) {
		free(text);
		return rc;
	}
	char err[256];
	r->doc = kjson_parse(text, len, err, sizeof err);
	free(text);
	if (!r->doc) {
		kerror("'%s': not JSON: %s", path, err);
		return KEXIT_DATA;
	}
	const char *prog = kjson_str(kjson_get(r->doc, "program"));
	if (!prog || strcmp(prog, "kbfs") || kjson_type_of(kjson_get(r->doc, "roots")) != KJSON_ARRAY) {
		kerror("'%s': not a kbfs run report (no \"program\": \"kbfs\" with \"roots\")", path);
		kjson_free(r->doc);
		r->doc = NULL;
		return KEXIT_DATA;
	}
	r->path = kstrdup(path);
	return 0;
}

void krun_free(krun *r)
{
	kjson_free(r->doc);
	free(r->path);
	memset(r, 0, sizeof *r);
}

static double num(const kjson_value *obj, const char *key)
{
	double v = kjson_num(kjson_get(obj, key));
	return isnan(v) ? 0.0 : v;
}

/* Per-root arrays; validate is NULL when any root was not validated. */
static size_t root_arrays(const krun *r, double **time, double **nedge, double **validate)
{
	const kjson_value *roots = kjson_get(r->doc, "roots");
	size_t n = kjson_len(roots);
	*time = kmalloc((n + 1) * sizeof(double));
	*nedge = kmalloc((n + 1) * sizeof(double));
	*validate = kmalloc((n + 1) * sizeof(double));
	int all_valid = n > 0;
	for (size_t k = 0; k < n; k++) {
		const kjson_value *rt = kjson_at(roots, k);
		(*time)[k] = num(rt, "time");
		(*nedge)[k] = num(rt, "nedge");
		const kjson_value *vt = kjson_get(rt, "validate_time");
		if (kjson_type_of(vt) == KJSON_NUMBER)
			(*validate)[k] = kjson_num(vt);
		else
			all_valid = 0;
	}
	if (!all_valid) {
		free(*validate);
		*validate = NULL;
	}
	return n;
}

int krun_print_block(FILE *fp, const krun *r)
{
	double *t, *ne, *vt;
	size_t n = root_arrays(r, &t, &ne, &vt);
	if (n == 0) {
		kerror("'%s': the run has no roots", r->path);
		free(t);
		free(ne);
		free(vt);
		return KEXIT_DATA;
	}
	kstat_run run = {
		.scale = (int)num(r->doc, "scale"),
		.edgefactor = num(r->doc, "edgefactor"),
		.nbfs = (int)n,
		.generation_time = num(r->doc, "generation_time"),
		.nproc = (int)num(r->doc, "ranks"),
		.construction_time = num(r->doc, "construction_time"),
		.time = t,
		.nedge = ne,
		.validate_time = vt,
	};
	kstat_print_block(fp, &run);
	free(t);
	free(ne);
	free(vt);
	return 0;
}

int krun_print_json(FILE *fp, const krun *runs, size_t nr)
{
	kjson_writer *w = kjson_writer_new(fp, 1);
	kjson_begin_array(w);
	for (size_t i = 0; i < nr; i++) {
		double *t, *ne, *vt;
		size_t n = root_arrays(&runs[i], &t, &ne, &vt);
		kstat_sample st;
		kstat_teps tp;
		kstat_describe(t, n, &st);
		kstat_teps_describe(t, ne, n, &tp);
		kjson_begin_object(w);
		kjson_kv_string(w, "file", runs[i].path);
		kjson_kv_int(w, "scale", (int64_t)num(runs[i].doc, "scale"));
		kjson_kv_int(w, "ranks", (int64_t)num(runs[i].doc, "ranks"));
		kjson_kv_string(w, "engine", kjson_str(kjson_get(runs[i].doc, "engine")));
		kjson_kv_uint(w, "nbfs", n);
		kjson_kv_double(w, "min_time", st.min);
		kjson_kv_double(w, "median_time", st.median);
		kjson_kv_double(w, "max_time", st.max);
		kjson_kv_double(w, "min_teps", tp.min);
		kjson_kv_double(w, "median_teps", tp.median);
		kjson_kv_double(w, "max_teps", tp.max);
		kjson_kv_double(w, "harmonic_mean_teps", tp.harmonic_mean);
		kjson_kv_double(w, "harmonic_stddev_teps", tp.harmonic_stddev);
		kjson_kv_bool(w, "validated", vt != NULL);
		kjson_end_object(w);
		free(t);
		free(ne);
		free(vt);
	}
	kjson_end_array(w);
	return kjson_writer_free(w) ? KEXIT_IO : 0;
}

static const char *const phases[] = {"expand", "local", "fold", "update", "sv", "allreduce"};
enum { NPH = 6 };

static int breakdown(FILE *fp, const krun *r)
{
	const kjson_value *roots = kjson_get(r->doc, "roots");
	size_t nroots = kjson_len(roots), nlev = 0;
	for (size_t k = 0; k < nroots; k++) {
		size_t l = kjson_len(kjson_get(kjson_at(roots, k), "levels"));
		if (l > nlev)
			nlev = l;
	}
	if (nlev == 0) {
		kerror("'%s': no per-level figures in the run", r->path);
		return KEXIT_DATA;
	}
	double *v = kcalloc(nlev * NPH, sizeof *v);
	char **labels = kcalloc(nlev, sizeof *labels);
	for (size_t k = 0; k < nroots; k++) {
		const kjson_value *lv = kjson_get(kjson_at(roots, k), "levels");
		for (size_t l = 0; l < kjson_len(lv); l++) {
			const kjson_value *tm = kjson_get(kjson_at(lv, l), "time");
			for (int p = 0; p < NPH; p++)
				v[l * NPH + (size_t)p] += num(tm, phases[p]) * 1e3 / (double)nroots;
		}
	}
	for (size_t l = 0; l < nlev; l++) {
		labels[l] = kmalloc(24);
		snprintf(labels[l], 24, "%zu", l + 1);
	}
	char title[512];
	snprintf(title, sizeof title, "Per-level breakdown, mean of %zu roots (%s)", nroots, r->path);
	int rc = ksvg_stacked(fp, title, "BFS level", "time (ms)", nlev, (const char *const *)labels, NPH, phases, v);
	for (size_t l = 0; l < nlev; l++)
		free(labels[l]);
	free(labels);
	free(v);
	return rc;
}

int krun_svg(FILE *fp, const krun *runs, size_t n)
{
	if (n == 1)
		return breakdown(fp, &runs[0]);
	double *x = kmalloc(n * sizeof *x), *y = kmalloc(n * sizeof *y);
	for (size_t i = 0; i < n; i++) {
		double *t, *ne, *vt;
		size_t m = root_arrays(&runs[i], &t, &ne, &vt);
		x[i] = num(runs[i].doc, "ranks");
		y[i] = m ? kstat_harmonic_teps(t, ne, m) : 0;
		free(t);
		free(ne);
		free(vt);
	}
	/* sort by ranks so the line reads left to right */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && x[j] < x[j - 1]; j--) {
			double a = x[j], b = y[j];
			x[j] = x[j - 1];
			y[j] = y[j - 1];
			x[j - 1] = a;
			y[j - 1] = b;
		}
	ksvg_chart *c = ksvg_chart_new("Harmonic-mean TEPS against ranks", "ranks", "TEPS", 1, 1);
	ksvg_chart_series(c, "harmonic-mean TEPS", x, y, n);
	int rc = ksvg_chart_write(c, fp);
	ksvg_chart_free(c);
	free(x);
	free(y);
	return rc;
}

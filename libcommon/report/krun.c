#include "krun.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kstat.h"
#include "ksvg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A figure read back must be one kbfs can have written: a whole number in
 * range where it becomes an integer, a finite non-negative number
 * elsewhere (absent is allowed: it reads as 0).  0, or the key at fault
 * with why. */
static const char *bad_number(const kjson_value *obj, const char *key, int whole, double min, double max,
			      char *why, size_t n)
{
	const kjson_value *v = kjson_get(obj, key);
	if (!v || kjson_type_of(v) == KJSON_NULL)
		return NULL;
	double x = kjson_num(v);
	if (kjson_type_of(v) == KJSON_NUMBER && isfinite(x) && x >= min && x <= max && (!whole || x == floor(x)))
		return NULL;
	if (kjson_type_of(v) != KJSON_NUMBER)
		snprintf(why, n, "is not a number");
	else if (whole)
		snprintf(why, n, "is %.15g, not a whole number from %.0f to %.0f", x, min, max);
	else
		snprintf(why, n, "is %.15g, not a finite number from 0 up", x);
	return key;
}

static int check_figures(const char *path, const kjson_value *doc)
{
	static const struct { const char *key; int whole; double min, max; } top[] = {
		{"scale", 1, 0, 64}, {"ranks", 1, 1, 1 << 24}, {"edgefactor", 0, 0, HUGE_VAL},
		{"generation_time", 0, 0, HUGE_VAL}, {"construction_time", 0, 0, HUGE_VAL},
	};
	char why[128];
	const char *key;
	for (size_t k = 0; k < sizeof top / sizeof top[0]; k++)
		if ((key = bad_number(doc, top[k].key, top[k].whole, top[k].min, top[k].max, why, sizeof why))) {
			kerror("'%s': \"%s\" %s", path, key, why);
			return KEXIT_DATA;
		}
	const kjson_value *roots = kjson_get(doc, "roots");
	for (size_t k = 0; k < kjson_len(roots); k++) {
		const kjson_value *rt = kjson_at(roots, k);
		if (kjson_type_of(rt) != KJSON_OBJECT) {
			kerror("'%s': root %zu is not an object", path, k);
			return KEXIT_DATA;
		}
		if ((key = bad_number(rt, "time", 0, 0, HUGE_VAL, why, sizeof why)) ||
		    (key = bad_number(rt, "nedge", 0, 0, HUGE_VAL, why, sizeof why)) ||
		    (key = bad_number(rt, "validate_time", 0, 0, HUGE_VAL, why, sizeof why)) ||
		    (key = bad_number(rt, "reached", 1, 0, 0x1p63, why, sizeof why))) {
			kerror("'%s': root %zu: \"%s\" %s", path, k, key, why);
			return KEXIT_DATA;
		}
	}
	return 0;
}

int krun_load(const char *path, krun *r)
{
	memset(r, 0, sizeof *r);
	kio_in *in = kio_open_in(path, KIO_GZIP);
	if (!in)
		return KEXIT_IO;
	size_t cap = 1 << 16, len = 0, got;
	char *text = kmalloc(cap);
	int rc;
	for (;;) {
		if (len == cap) {
			if (cap >= KRUN_MAX_BYTES) {
				kerror("'%s': more than %d MiB, too large for a kbfs run report", path, KRUN_MAX_BYTES >> 20);
				rc = KEXIT_DATA;
				break;
			}
			text = krealloc(text, cap *= 2);
		}
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
	if (check_figures(path, r->doc)) {
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

/* Roots whose search reached far fewer vertices than the widest
 * (kstat_small_searches on each root's "reached"). */
static size_t small_searches(const krun *r, double *largest)
{
	const kjson_value *roots = kjson_get(r->doc, "roots");
	size_t n = kjson_len(roots);
	double *reached = kmalloc((n + 1) * sizeof *reached);
	for (size_t k = 0; k < n; k++)
		reached[k] = num(kjson_at(roots, k), "reached");
	size_t small = kstat_small_searches(reached, n, largest);
	free(reached);
	return small;
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
	double largest;
	size_t small = small_searches(r, &largest);
	char warn[512];
	kstat_small_warning(warn, sizeof warn, small, n, largest);
	if (*warn)
		kwarn("'%s': %s", r->path, warn);
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
		kjson_kv_string(w, "graph", kjson_str(kjson_get(kjson_get(runs[i].doc, "graph"), "name")));
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
		double largest;
		size_t small = small_searches(&runs[i], &largest);
		kjson_kv_uint(w, "largest_reached", (uint64_t)largest);
		kjson_kv_uint(w, "small_component_roots", small);
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
/* The legend says what each phase is (kbfs(1), The algorithm). */
static const char *const phase_legend[NPH] = {
	"expand: frontier gathered in the grid column",
	"local: this rank's scan of its edges",
	"fold: found vertices sent to their owners",
	"update: owners keep the new frontier",
	"sv: visited bits shared along the grid row",
	"allreduce: the level's counts summed",
};

/* The index of the root whose time is the median (the lower of two). */
static size_t median_root(const kjson_value *roots)
{
	size_t n = kjson_len(roots), *ix = kmalloc((n + 1) * sizeof *ix);
	for (size_t k = 0; k < n; k++)
		ix[k] = k;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && num(kjson_at(roots, ix[j]), "time") < num(kjson_at(roots, ix[j - 1]), "time"); j--) {
			size_t t = ix[j];
			ix[j] = ix[j - 1];
			ix[j - 1] = t;
		}
	size_t m = n ? ix[(n - 1) / 2] : 0;
	free(ix);
	return m;
}

/* The levels of one search, the root of median time (an average over
 * roots would mix searches of different depths and directions), each bar
 * a level's phase times, labelled with its direction. */
static int breakdown(FILE *fp, const krun *r)
{
	const kjson_value *roots = kjson_get(r->doc, "roots");
	size_t nroots = kjson_len(roots);
	const kjson_value *rt = kjson_at(roots, median_root(roots));
	const kjson_value *lv = kjson_get(rt, "levels");
	size_t nlev = kjson_len(lv);
	if (nlev == 0) {
		kerror("'%s': no per-level figures in the run", r->path);
		return KEXIT_DATA;
	}
	double *v = kcalloc(nlev * NPH, sizeof *v);
	char **labels = kcalloc(nlev, sizeof *labels);
	for (size_t l = 0; l < nlev; l++) {
		const kjson_value *one = kjson_at(lv, l);
		const kjson_value *tm = kjson_get(one, "time");
		for (int p = 0; p < NPH; p++)
			v[l * NPH + (size_t)p] = num(tm, phases[p]) * 1e3;
		const char *dir = kjson_str(kjson_get(one, "direction"));
		labels[l] = kmalloc(32);
		snprintf(labels[l], 32, "%zu %s", l + 1,
			 !dir ? "" : !strcmp(dir, "bottom-up") ? "BU" : !strcmp(dir, "top-down") ? "TD" : "?");
	}
	char title[512];
	snprintf(title, sizeof title, "Levels of root %.0f, the median time of %zu (%s)", num(rt, "root"), nroots,
		 r->path);
	int rc = ksvg_stacked(fp, title, "BFS level and direction (TD top-down, BU bottom-up)", "time on rank 0 (ms)",
			      nlev, (const char *const *)labels, NPH, phase_legend, v);
	for (size_t l = 0; l < nlev; l++)
		free(labels[l]);
	free(labels);
	free(v);
	return rc;
}

typedef struct run_point {
	double ranks, teps, scale;
	char grid[32];
	char key[80];   /* the graph: its CRC, the generator's parameters or (older runs) the scale */
	char name[200]; /* what the legend calls it */
} run_point;

/* Which graph a run searched ("graph" in the record; older records have
 * only the scale, so they are told apart by it alone, as they were). */
static void graph_of(const kjson_value *doc, run_point *p)
{
	const kjson_value *g = kjson_get(doc, "graph");
	const char *kind = kjson_str(kjson_get(g, "kind")), *name = kjson_str(kjson_get(g, "name"));
	const char *crc = kjson_str(kjson_get(g, "source_crc32"));
	if (!name) {
		snprintf(p->key, sizeof p->key, "scale %.0f", p->scale);
		snprintf(p->name, sizeof p->name, "scale %.0f", p->scale);
		return;
	}
	/* a Kronecker graph is its parameters, whichever file holds it */
	if (crc && !(kind && !strcmp(kind, "kronecker")))
		snprintf(p->key, sizeof p->key, "crc32 %s", crc);
	else
		snprintf(p->key, sizeof p->key, "%.79s", name);
	snprintf(p->name, sizeof p->name, "%s", name);
	if (crc && kind && !strcmp(kind, "import"))
		snprintf(p->name, sizeof p->name, "%.150s (scale %.0f)", name, p->scale);
}

static int by_graph_ranks(const void *a, const void *b)
{
	const run_point *p = a, *q = b;
	if (p->scale != q->scale)
		return p->scale < q->scale ? -1 : 1;
	int k = strcmp(p->key, q->key);
	if (k)
		return k;
	if (p->ranks != q->ranks)
		return p->ranks < q->ranks ? -1 : 1;
	return p->teps > q->teps ? -1 : p->teps < q->teps; /* best first */
}

/* Harmonic-mean TEPS against ranks, per graph (never per scale alone: an
 * imported graph's scale is only ceil(log2 nv), so a real graph and a
 * Kronecker graph can share it): a line through the best grid of each rank
 * count, the other runs (other grids, or the same grid again) as points,
 * every point labelled with its grid
 * (1x2 and 2x1 are different runs at 2 ranks, not a line).  Two graphs of
 * one name (imported files that differ) are told apart by their CRC. */
static int scaling(FILE *fp, const krun *runs, size_t n)
{
	run_point *pt = kcalloc(n, sizeof *pt);
	for (size_t i = 0; i < n; i++) {
		double *t, *ne, *vt;
		size_t m = root_arrays(&runs[i], &t, &ne, &vt);
		const kjson_value *g = kjson_get(runs[i].doc, "grid");
		pt[i].ranks = num(runs[i].doc, "ranks");
		pt[i].teps = m ? kstat_harmonic_teps(t, ne, m) : 0;
		pt[i].scale = num(runs[i].doc, "scale");
		snprintf(pt[i].grid, sizeof pt[i].grid, "%.0fx%.0f", num(g, "R"), num(g, "C"));
		graph_of(runs[i].doc, &pt[i]);
		free(t);
		free(ne);
		free(vt);
	}
	qsort(pt, n, sizeof *pt, by_graph_ranks);
	ksvg_chart *c = ksvg_chart_new("Harmonic-mean TEPS against ranks, a series per graph (points labelled R x C)",
				       "ranks", "TEPS", 1, 1);
	double *bx = kmalloc(n * sizeof *bx), *by = kmalloc(n * sizeof *by);
	double *ox = kmalloc(n * sizeof *ox), *oy = kmalloc(n * sizeof *oy);
	const char **bl = kmalloc(n * sizeof *bl), **ol = kmalloc(n * sizeof *ol);
	for (size_t i = 0; i < n;) {
		size_t j = i, nb = 0, no = 0;
		for (; j < n && !strcmp(pt[j].key, pt[i].key) && pt[j].scale == pt[i].scale; j++) {
			int best = j == i || pt[j].ranks != pt[j - 1].ranks;
			double *x = best ? bx : ox, *y = best ? by : oy;
			const char **l = best ? bl : ol;
			size_t *k = best ? &nb : &no;
			x[*k] = pt[j].ranks;
			y[*k] = pt[j].teps;
			l[(*k)++] = pt[j].grid;
		}
		int twin = 0; /* another graph goes by this name */
		for (size_t q = 0; q < n && !twin; q++)
			twin = !strcmp(pt[q].name, pt[i].name) && strcmp(pt[q].key, pt[i].key);
		char name[320];
		const char *id = twin ? pt[i].key : NULL;
		snprintf(name, sizeof name, "%s%s%s%s, best grid", pt[i].name, id ? " [" : "", id ? id : "", id ? "]" : "");
		ksvg_chart_series(c, name, bx, by, nb);
		ksvg_chart_labels(c, bl);
		if (no) {
			snprintf(name, sizeof name, "%s%s%s%s, other runs", pt[i].name, id ? " [" : "", id ? id : "",
				 id ? "]" : "");
			ksvg_chart_series_style(c, name, ox, oy, no, KSVG_POINTS);
			ksvg_chart_labels(c, ol);
		}
		i = j;
	}
	int rc = ksvg_chart_write(c, fp);
	ksvg_chart_free(c);
	free(bx);
	free(by);
	free(ox);
	free(oy);
	free(bl);
	free(ol);
	free(pt);
	return rc;
}

int krun_svg(FILE *fp, const krun *runs, size_t n)
{
	return n == 1 ? breakdown(fp, &runs[0]) : scaling(fp, runs, n);
}

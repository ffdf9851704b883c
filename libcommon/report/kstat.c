#include "kstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "klog.h"
#include "kmem.h"

/* Ascending; NaNs sort last so the order is total. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	int xn = isnan(x), yn = isnan(y);
	if (xn || yn)
		return xn - yn;
	return (x > y) - (x < y);
}

void kstat_describe(const double *x, size_t n, kstat_sample *s)
{
	memset(s, 0, sizeof *s);
	if (n == 0)
		return;

	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	double mean = sum / (double)n;
	s->mean = mean;

	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;

	double *xx = kmalloc(kmul(n, sizeof *xx));
	memcpy(xx, x, n * sizeof *xx);
	qsort(xx, n, sizeof *xx, cmp_double);
	s->min = xx[0];
	s->q1 = (xx[(n - 1) / 4] + xx[n / 4]) * .5;
	s->median = (xx[(n - 1) / 2] + xx[n / 2]) * .5;
	s->q3 = (xx[n - 1 - (n - 1) / 4] + xx[n - 1 - n / 4]) * .5;
	s->max = xx[n - 1];
	free(xx);
}

void kstat_teps_describe(const double *time, const double *nedge, size_t n, kstat_teps *t)
{
	memset(t, 0, sizeof *t);
	if (n == 0)
		return;
	double *spe = kmalloc(kmul(n, sizeof *spe));
	for (size_t i = 0; i < n; i++)
		spe[i] = time[i] / nedge[i];
	kstat_sample s;
	kstat_describe(spe, n, &s);
	free(spe);
	t->min = 1. / s.max;
	t->q1 = 1. / s.q3;
	t->median = 1. / s.median;
	t->q3 = 1. / s.q1;
	t->max = 1. / s.min;
	t->harmonic_mean = 1. / s.mean;
	t->harmonic_stddev = n > 1 ? s.stddev / (s.mean * s.mean * sqrt((double)(n - 1))) : 0.0;
}

double kstat_harmonic_teps(const double *time, const double *nedge, size_t n)
{
	kstat_teps t;
	kstat_teps_describe(time, nedge, n, &t);
	return t.harmonic_mean;
}

size_t kstat_small_searches(const double *reached, size_t n, double *largest)
{
	double top = 0;
	for (size_t k = 0; k < n; k++)
		top = reached[k] > top ? reached[k] : top;
	size_t small = 0;
	for (size_t k = 0; k < n; k++)
		small += reached[k] < KSTAT_SMALL_FRACTION * top;
	*largest = top;
	return small;
}

void kstat_small_warning(char *buf, size_t len, size_t small, size_t n, double largest)
{
	if (!small) {
		snprintf(buf, len, "%s", "");
		return;
	}
	snprintf(buf, len,
		 "%zu of %zu roots reached fewer than %g%% of the %.0f vertices the widest search reached (small "
		 "components: their TEPS are not comparable with the others' and sway the harmonic mean); "
		 "kbfs --roots-from largest draws roots from the largest component",
		 small, n, 100 * KSTAT_SMALL_FRACTION, largest);
}

/* Values start at index 32: the label (colon included) fills a 32-character
 * field.  A longer label (none exists) would still get one space. */
#define LABEL_WIDTH 32

static void label(FILE *fp, const char *prefix, const char *name, const char *suffix)
{
	int len = fprintf(fp, "%s%s%s:", prefix, name, suffix);
	do
		fputc(' ', fp);
	while (++len < LABEL_WIDTH);
}

static void line_g(FILE *fp, const char *prefix, const char *name, const char *fmt, double v)
{
	label(fp, prefix, name, "");
	fprintf(fp, fmt, v);
	fputc('\n', fp);
}

static void line_d(FILE *fp, const char *name, int v)
{
	label(fp, "", name, "");
	fprintf(fp, "%d\n", v);
}

static const char *const seven[7] = {
	"min_", "firstquartile_", "median_", "thirdquartile_", "max_", "mean_", "stddev_",
};

static void block7(FILE *fp, const char *prefix, const char *what, const char *fmt,
		   const double *x, size_t n)
{
	kstat_sample s;
	kstat_describe(x, n, &s);
	const double v[7] = { s.min, s.q1, s.median, s.q3, s.max, s.mean, s.stddev };
	for (int i = 0; i < 7; i++) {
		label(fp, prefix, seven[i], what);
		fprintf(fp, fmt, v[i]);
		fputc('\n', fp);
	}
}

void kstat_print_block(FILE *fp, const kstat_run *r)
{
	size_t n = r->nbfs > 0 ? (size_t)r->nbfs : 0;
	const char *bfs = r->g500_v2_style ? "" : "bfs  ";

	line_d(fp, "SCALE", r->scale);
	line_g(fp, "", "edgefactor", "%g", r->edgefactor);
	line_d(fp, "NBFS", r->nbfs);
	line_g(fp, "", "graph_generation", "%g", r->generation_time);
	line_d(fp, "num_mpi_processes", r->nproc);
	line_g(fp, "", "construction_time", "%g", r->construction_time);

	block7(fp, bfs, "time", "%g", r->time, n);
	block7(fp, "", "nedge", "%.11g", r->nedge, n);

	kstat_teps t;
	kstat_teps_describe(r->time, r->nedge, n, &t);
	line_g(fp, bfs, "min_TEPS", "%g", t.min);
	line_g(fp, bfs, "firstquartile_TEPS", "%g", t.q1);
	line_g(fp, bfs, "median_TEPS", "%g", t.median);
	line_g(fp, bfs, "thirdquartile_TEPS", "%g", t.q3);
	line_g(fp, bfs, "max_TEPS", "%g", t.max);
	if (r->g500_v2_style) {
		line_g(fp, "", "harmonic_mean_TEPS", "%g", t.harmonic_mean);
	} else {
		/* the reference marks its headline figure: '!' at index 29 */
		fprintf(fp, "%-*s!  %g\n", LABEL_WIDTH - 3, "bfs  harmonic_mean_TEPS:", t.harmonic_mean);
	}
	line_g(fp, bfs, "harmonic_stddev_TEPS", "%g", t.harmonic_stddev);

	if (r->validate_time) {
		block7(fp, bfs, "validate", "%g", r->validate_time, n);
	} else {
		label(fp, "", "validation", "");
		fputs("skipped\n", fp);
	}
}

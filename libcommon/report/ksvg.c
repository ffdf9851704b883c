#include "ksvg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kjson.h"
#include "klog.h"
#include "kmem.h"

/* ---- text and document helpers ---- */


static const char *xml_esc(unsigned c, char tmp[8])
{
	(void)tmp;
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	case '\t': return " ";
	}
	return c < 0x20 || c == 0x7f ? "?" : NULL;
}

/* Write s escaped for XML text and attribute values alike. */
static void put_text(FILE *fp, const char *s) { kjson_put_escaped(fp, s, strlen(s), xml_esc, "?"); }

/* <text x y [attrs]>s</text>; anchor is start, middle or end. */
static void text_at(FILE *fp, double x, double y, const char *anchor, const char *attrs, const char *s)
{
	if (!s || !*s)
		return;
	fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
		attrs ? " " : "", attrs ? attrs : "");
	put_text(fp, s);
	fputs("</text>\n", fp);
}

static void svg_open(FILE *fp, double w, double h, const char *title)
{
	fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n", w, h, w, h);
	if (title && *title) {
		fputs("<title>", fp);
		put_text(fp, title);
		fputs("</title>\n", fp);
	}
	fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", w, h);
	text_at(fp, w / 2, 28, "middle", "font-size=\"16\" font-weight=\"bold\"", title);
}

static int svg_close(FILE *fp)
{
	fputs("</svg>\n", fp);
	return ferror(fp) ? KEXIT_IO : 0;
}

static const char *const palette[] = {
	"#2b6cb0", "#d9480f", "#2f9e44", "#9c36b5", "#e8a200",
	"#0c8599", "#c2255c", "#5c940d", "#495057", "#1864ab",
};
#define NPALETTE (sizeof palette / sizeof palette[0])

/* ---- axes ---- */

struct axis {
	int log;
	double lo, hi;   /* data space; exponents on a log axis */
	double step;     /* tick step (decades on a log axis) */
	double p0, p1;   /* pixels for lo and hi */
};

/* 1, 2 or 5 times a power of ten, about span/target */
static double nice_step(double span, int target)
{
	double raw = span / target;
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	double nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
	return nf * mag;
}

/* Fit the axis to [dmin, dmax] (raw data values; both positive on log). */
static void axis_fit(struct axis *a, double dmin, double dmax, int have)
{
	if (a->log) {
		if (!have) {
			a->lo = 0, a->hi = 1, a->step = 1;
			return;
		}
		a->lo = floor(log10(dmin));
		a->hi = ceil(log10(dmax));
		if (a->hi <= a->lo)
			a->hi = a->lo + 1;
		a->step = ceil((a->hi - a->lo) / 8);
		a->lo = floor(a->lo / a->step) * a->step;
		a->hi = ceil(a->hi / a->step) * a->step;
		return;
	}
	if (!have) {
		dmin = 0, dmax = 1;
	} else if (dmax <= dmin) {
		double d = dmin == 0 ? 1 : fabs(dmin) * 0.1;
		dmin -= d, dmax += d;
	}
	a->step = nice_step(dmax - dmin, 6);
	/* tolerate rounding: 0.3 / 0.05 may come out as 6.000000000000001 */
	a->lo = floor(dmin / a->step + 1e-9) * a->step;
	a->hi = ceil(dmax / a->step - 1e-9) * a->step;
	if (a->hi <= a->lo)
		a->hi = a->lo + a->step;
}

static int axis_ok(const struct axis *a, double v)
{
	return isfinite(v) && (!a->log || v > 0);
}

static double axis_map(const struct axis *a, double v)
{
	double t = a->log ? log10(v) : v;
	return a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* m x 10^e as a tick label: %g for modest exponents, else "me<e>" */
static void log_label(int m, int e, char *buf, size_t len)
{
	if (e >= -4 && e <= 5)
		snprintf(buf, len, "%g", m * pow(10, e));
	else if (m == 1)
		snprintf(buf, len, "1e%d", e);
	else
		snprintf(buf, len, "%de%d", m, e);
}

static void tick_label(const struct axis *a, double t, char *buf, size_t len)
{
	if (a->log) {
		log_label(1, (int)lround(t), buf, len);
	} else {
		if (fabs(t) < a->step * 1e-9)
			t = 0;
		snprintf(buf, len, "%g", t);
	}
}

/*
 * Ticks, labels and grid lines for one axis of the plot rectangle
 * (x0,y0)-(x1,y1); horizontal axes run along the bottom, vertical along
 * the left.
 */
static void draw_axis(FILE *fp, const struct axis *a, int horizontal,
		      double x0, double y0, double x1, double y1)
{
	long nt = lround((a->hi - a->lo) / a->step);
	char lab[32];
	for (long k = 0; k <= nt; k++) {
		double t = a->lo + (double)k * a->step;
		double p = a->p0 + (double)k / (double)nt * (a->p1 - a->p0);
		tick_label(a, t, lab, sizeof lab);
		if (horizontal) {
			fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n", p, y0, p, y1);
			fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", p, y1, p, y1 + 5);
			text_at(fp, p, y1 + 18, "middle", NULL, lab);
		} else {
			fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n", x0, p, x1, p);
			fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", x0 - 5, p, x0, p);
			text_at(fp, x0 - 8, p + 4, "end", NULL, lab);
		}
	}
	/* minor ticks 2..9 on a log axis of a few single decades; 2 and 5
	 * labelled, with grid lines, when a decade is wide enough for them
	 * (labels about 40 px wide on a horizontal axis, 16 px high on a
	 * vertical one, and 5 to 10 is 0.3 of a decade) */
	if (a->log && a->step == 1 && nt <= 6) {
		double decade = fabs(a->p1 - a->p0) / (double)nt;
		int label25 = 0.3 * decade >= (horizontal ? 45 : 16);
		for (long k = 0; k < nt; k++) {
			for (int m = 2; m <= 9; m++) {
				double t = a->lo + (double)k + log10(m);
				double p = a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
				int big = label25 && (m == 2 || m == 5);
				if (big)
					log_label(m, (int)lround(a->lo) + (int)k, lab, sizeof lab);
				if (horizontal) {
					if (big) {
						fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#f0f0f0\"/>\n", p, y0, p, y1);
						text_at(fp, p, y1 + 18, "middle", "fill=\"#444444\"", lab);
					}
					fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", p, y1, p, y1 + (big ? 5 : 3));
				} else {
					if (big) {
						fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#f0f0f0\"/>\n", x0, p, x1, p);
						text_at(fp, x0 - 8, p + 4, "end", "fill=\"#444444\"", lab);
					}
					fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", x0 - (big ? 5 : 3), p, x0, p);
				}
			}
		}
	}
}

/* Width of the legend column for names of up to maxlen characters (about
 * 7 px a character at 12 px sans-serif, after a 30 px key). */
static double legend_width(size_t maxlen) { return 15 + 30 + 7.0 * (double)maxlen + 10; }

static void axis_titles(FILE *fp, const char *xlabel, const char *ylabel,
			double x0, double y0, double x1, double y1)
{
	text_at(fp, (x0 + x1) / 2, y1 + 40, "middle", "font-size=\"13\"", xlabel);
	if (ylabel && *ylabel) {
		double cx = 20, cy = (y0 + y1) / 2;
		char attrs[96];
		snprintf(attrs, sizeof attrs, "font-size=\"13\" transform=\"rotate(-90 %.2f %.2f)\"", cx, cy);
		text_at(fp, cx, cy, "middle", attrs, ylabel);
	}
}

static void frame_rect(FILE *fp, double x0, double y0, double x1, double y1)
{
	fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"black\"/>\n",
		x0, y0, x1 - x0, y1 - y0);
}

/* ---- x/y chart ---- */

struct series {
	char *name;
	double *x, *y;
	char **labels; /* NULL, or n labels (entries may be NULL) */
	size_t n;
	int style;
};

struct ksvg_chart {
	char *title, *xlabel, *ylabel;
	int xlog, ylog;
	struct series *s;
	size_t ns, cap;
};

static char *dup_or_null(const char *s) { return s ? kstrdup(s) : NULL; }

ksvg_chart *ksvg_chart_new(const char *title, const char *xlabel, const char *ylabel, int xlog, int ylog)
{
	ksvg_chart *c = kcalloc(1, sizeof *c);
	c->title = dup_or_null(title);
	c->xlabel = dup_or_null(xlabel);
	c->ylabel = dup_or_null(ylabel);
	c->xlog = !!xlog;
	c->ylog = !!ylog;
	return c;
}

void ksvg_chart_series_style(ksvg_chart *c, const char *name, const double *x, const double *y,
			     size_t n, int style)
{
	KASSERT(c && (y || n == 0));
	if (c->ns == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->s = krealloc(c->s, kmul(c->cap, sizeof *c->s));
	}
	struct series *s = &c->s[c->ns++];
	s->name = dup_or_null(name);
	s->labels = NULL;
	s->n = n;
	s->style = style & (KSVG_LINES | KSVG_POINTS) ? style : KSVG_LINES | KSVG_POINTS;
	s->x = kmalloc(kmul(n, sizeof *s->x));
	s->y = kmalloc(kmul(n, sizeof *s->y));
	for (size_t i = 0; i < n; i++) {
		s->x[i] = x ? x[i] : (double)i;
		s->y[i] = y[i];
	}
}

void ksvg_chart_labels(ksvg_chart *c, const char *const *labels)
{
	KASSERT(c && c->ns > 0 && labels);
	struct series *s = &c->s[c->ns - 1];
	s->labels = kcalloc(s->n ? s->n : 1, sizeof *s->labels);
	for (size_t i = 0; i < s->n; i++)
		s->labels[i] = dup_or_null(labels[i]);
}

void ksvg_chart_series(ksvg_chart *c, const char *name, const double *x, const double *y, size_t n)
{
	ksvg_chart_series_style(c, name, x, y, n, KSVG_LINES | KSVG_POINTS);
}

void ksvg_chart_free(ksvg_chart *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ns; i++) {
		for (size_t k = 0; c->s[i].labels && k < c->s[i].n; k++)
			free(c->s[i].labels[k]);
		free(c->s[i].labels);
		free(c->s[i].name);
		free(c->s[i].x);
		free(c->s[i].y);
	}
	free(c->s);
	free(c->title);
	free(c->xlabel);
	free(c->ylabel);
	free(c);
}

static void legend_entry(FILE *fp, double x, double y, const char *colour, int style, const char *name)
{
	if (style & KSVG_LINES)
		fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
			x, y, x + 24, y, colour);
	if (style & KSVG_POINTS)
		fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", x + 12, y, colour);
	text_at(fp, x + 30, y + 4, "start", NULL, name);
}

int ksvg_chart_write(const ksvg_chart *c, FILE *fp)
{
	KASSERT(c);
	struct axis ax = { .log = c->xlog }, ay = { .log = c->ylog };
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	int have = 0, legend = 0;
	size_t maxlen = 0;
	for (size_t k = 0; k < c->ns; k++) {
		const struct series *s = &c->s[k];
		if (s->name && *s->name) {
			legend = 1;
			maxlen = strlen(s->name) > maxlen ? strlen(s->name) : maxlen;
		}
		for (size_t i = 0; i < s->n; i++) {
			if (!axis_ok(&ax, s->x[i]) || !axis_ok(&ay, s->y[i]))
				continue;
			have = 1;
			xmin = fmin(xmin, s->x[i]), xmax = fmax(xmax, s->x[i]);
			ymin = fmin(ymin, s->y[i]), ymax = fmax(ymax, s->y[i]);
		}
	}
	axis_fit(&ax, xmin, xmax, have);
	axis_fit(&ay, ymin, ymax, have);

	const double H = 480;
	double x0 = 80, y0 = 50, x1 = legend ? 570 : 730, y1 = H - 60;
	double W = legend ? fmax(760, x1 + legend_width(maxlen)) : 760;
	ax.p0 = x0, ax.p1 = x1;
	ay.p0 = y1, ay.p1 = y0;

	svg_open(fp, W, H, c->title);
	draw_axis(fp, &ax, 1, x0, y0, x1, y1);
	draw_axis(fp, &ay, 0, x0, y0, x1, y1);
	frame_rect(fp, x0, y0, x1, y1);
	axis_titles(fp, c->xlabel, c->ylabel, x0, y0, x1, y1);

	for (size_t k = 0; k < c->ns; k++) {
		const struct series *s = &c->s[k];
		const char *colour = palette[k % NPALETTE];
		fputs("<g>\n", fp);
		if (s->style & KSVG_LINES) {
			int open = 0;
			for (size_t i = 0; i < s->n; i++) {
				if (!axis_ok(&ax, s->x[i]) || !axis_ok(&ay, s->y[i])) {
					if (open)
						fputs("\"/>\n", fp);
					open = 0;
					continue;
				}
				if (!open)
					fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colour);
				fprintf(fp, "%s%.2f,%.2f", open ? " " : "", axis_map(&ax, s->x[i]), axis_map(&ay, s->y[i]));
				open = 1;
			}
			if (open)
				fputs("\"/>\n", fp);
		}
		if (s->style & KSVG_POINTS) {
			for (size_t i = 0; i < s->n; i++) {
				if (!axis_ok(&ax, s->x[i]) || !axis_ok(&ay, s->y[i]))
					continue;
				fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"><title>",
					axis_map(&ax, s->x[i]), axis_map(&ay, s->y[i]), colour);
				if (s->name) {
					put_text(fp, s->name);
					fputs(": ", fp);
				}
				fprintf(fp, "%g, %g</title></circle>\n", s->x[i], s->y[i]);
			}
		}
		/* point labels right of the point; left when the point before
		 * it has the same x, so two grids of one size stay readable */
		for (size_t i = 0; s->labels && i < s->n; i++) {
			if (!s->labels[i] || !axis_ok(&ax, s->x[i]) || !axis_ok(&ay, s->y[i]))
				continue;
			int left = i > 0 && s->x[i - 1] == s->x[i];
			char attrs[64];
			snprintf(attrs, sizeof attrs, "font-size=\"10\" fill=\"%s\"", colour);
			text_at(fp, axis_map(&ax, s->x[i]) + (left ? -6 : 6), axis_map(&ay, s->y[i]) - 6, left ? "end" : "start",
				attrs, s->labels[i]);
		}
		fputs("</g>\n", fp);
	}

	if (legend) {
		double ly = y0 + 10;
		for (size_t k = 0; k < c->ns; k++) {
			const struct series *s = &c->s[k];
			if (!s->name || !*s->name)
				continue;
			legend_entry(fp, x1 + 15, ly, palette[k % NPALETTE], s->style, s->name);
			ly += 18;
		}
	}
	return svg_close(fp);
}

/* ---- stacked bars ---- */

static double seg_value(double v) { return isfinite(v) && v > 0 ? v : 0; }

int ksvg_stacked(FILE *fp, const char *title, const char *xlabel, const char *ylabel,
		 size_t ncat, const char *const *cat_labels,
		 size_t nseg, const char *const *seg_names, const double *values)
{
	KASSERT(values || ncat == 0 || nseg == 0);
	double top = 0;
	for (size_t i = 0; i < ncat; i++) {
		double sum = 0;
		for (size_t j = 0; j < nseg; j++)
			sum += seg_value(values[i * nseg + j]);
		top = fmax(top, sum);
	}
	struct axis ay = { 0 };
	axis_fit(&ay, 0, top > 0 ? top : 1, 1);

	int legend = 0;
	size_t maxlen = 0;
	for (size_t j = 0; seg_names && j < nseg; j++)
		if (seg_names[j] && *seg_names[j]) {
			legend = 1;
			maxlen = strlen(seg_names[j]) > maxlen ? strlen(seg_names[j]) : maxlen;
		}

	const double H = 480;
	double x0 = 80, y0 = 50, x1 = legend ? 570 : 730, y1 = H - 60;
	double W = legend ? fmax(760, x1 + legend_width(maxlen)) : 760;
	ay.p0 = y1, ay.p1 = y0;

	svg_open(fp, W, H, title);
	draw_axis(fp, &ay, 0, x0, y0, x1, y1);
	axis_titles(fp, xlabel, ylabel, x0, y0, x1, y1);

	double slot = ncat ? (x1 - x0) / (double)ncat : 0;
	size_t every = slot > 0 ? (size_t)ceil(36 / slot) : 1;
	char lab[32];
	for (size_t i = 0; i < ncat; i++) {
		double cx = x0 + slot * ((double)i + 0.5), bw = slot * 0.7;
		const char *cat = cat_labels && cat_labels[i] ? cat_labels[i] : NULL;
		if (!cat) {
			snprintf(lab, sizeof lab, "%zu", i);
			cat = lab;
		}
		double acc = 0;
		fputs("<g>\n", fp);
		for (size_t j = 0; j < nseg; j++) {
			double v = seg_value(values[i * nseg + j]);
			if (v <= 0)
				continue;
			double ya = axis_map(&ay, acc), yb = axis_map(&ay, acc + v);
			acc += v;
			fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>",
				cx - bw / 2, yb, bw, ya - yb, palette[j % NPALETTE]);
			put_text(fp, cat);
			if (seg_names && seg_names[j]) {
				fputs(" ", fp);
				put_text(fp, seg_names[j]);
			}
			fprintf(fp, ": %g</title></rect>\n", v);
		}
		fputs("</g>\n", fp);
		if (i % every == 0) {
			fprintf(fp, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n", cx, y1, cx, y1 + 5);
			text_at(fp, cx, y1 + 18, "middle", NULL, cat);
		}
	}
	frame_rect(fp, x0, y0, x1, y1);

	if (legend) {
		/* top entry = top segment, as stacked */
		double ly = y0 + 10;
		for (size_t j = nseg; j-- > 0;) {
			if (!seg_names[j] || !*seg_names[j])
				continue;
			fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"12\" fill=\"%s\"/>\n",
				x1 + 15, ly - 6, palette[j % NPALETTE]);
			text_at(fp, x1 + 36, ly + 4, "start", NULL, seg_names[j]);
			ly += 18;
		}
	}
	return svg_close(fp);
}

/* ---- heat map ---- */

/* light to dark blue through three stops, t in [0, 1] */
static void heat_colour(double t, char *buf, size_t len)
{
	static const double stop[3][3] = { { 247, 251, 255 }, { 107, 174, 214 }, { 8, 48, 107 } };
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	int k = t < 0.5 ? 0 : 1;
	double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
	int rgb[3];
	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(stop[k][i] + u * (stop[k + 1][i] - stop[k][i]));
	snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

int ksvg_heatmap(FILE *fp, const char *title, const char *xlabel, const char *ylabel, const char *zlabel,
		 size_t rows, size_t cols, const double *values)
{
	KASSERT(values || rows == 0 || cols == 0);
	double vmin = INFINITY, vmax = -INFINITY;
	size_t cells = kmul(rows, cols);
	for (size_t i = 0; i < cells; i++) {
		if (isfinite(values[i])) {
			vmin = fmin(vmin, values[i]);
			vmax = fmax(vmax, values[i]);
		}
	}
	int have = vmin <= vmax;
	if (have && vmin > 0)
		vmin = 0; /* the scale starts at 0: a 1.15x imbalance is two close shades */

	size_t big = rows > cols ? rows : cols;
	double cs = big ? floor(560.0 / (double)big) : 64;
	if (cs > 64)
		cs = 64;
	if (cs < 1)
		cs = 1;
	const double x0 = 80, y0 = 60;
	double gw = cs * (double)cols, gh = cs * (double)rows;
	/* the colour bar is as tall as the grid, or as its label needs; the
	 * picture as wide as the title needs (bold 16 px: ~9.5 px a char) */
	size_t zlen = zlabel ? strlen(zlabel) : 0, tlen = title ? strlen(title) : 0;
	double bh = fmax(fmax(gh, 120), 7.0 * (double)zlen + 16);
	double W = fmax(fmax(x0 + gw + 130 + (zlen ? 24 : 0), 480), 9.5 * (double)tlen + 40), H = y0 + fmax(gh, bh) + 60;
	double fs = fmin(12, cs / 4);
	int write_values = cs >= 20;

	svg_open(fp, W, H, title);
	char colour[8], lab[32];
	for (size_t r = 0; r < rows; r++) {
		for (size_t c = 0; c < cols; c++) {
			double v = values[r * cols + c];
			double x = x0 + cs * (double)c, y = y0 + cs * (double)r;
			double t = 0.5;
			if (!isfinite(v)) {
				snprintf(colour, sizeof colour, "#dddddd");
			} else {
				if (vmax > vmin)
					t = (v - vmin) / (vmax - vmin);
				heat_colour(t, colour, sizeof colour);
			}
			if (isfinite(v))
				snprintf(lab, sizeof lab, "%.3g", v);
			else
				snprintf(lab, sizeof lab, "n/a");
			fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"white\" stroke-width=\"%s\">"
				"<title>row %zu, column %zu: %s</title></rect>\n",
				x, y, cs, cs, colour, cs >= 8 ? "1" : "0", r, c, lab);
			if (write_values) {
				char attrs[64];
				snprintf(attrs, sizeof attrs, "font-size=\"%.1f\" fill=\"%s\"", fs,
					 isfinite(v) && t > 0.55 ? "white" : "black");
				text_at(fp, x + cs / 2, y + cs / 2 + fs * 0.35, "middle", attrs, lab);
			}
		}
	}
	/* row and column indices, thinned to one per 16 px */
	size_t every = (size_t)ceil(16 / cs);
	for (size_t c = 0; c < cols; c += every) {
		snprintf(lab, sizeof lab, "%zu", c);
		text_at(fp, x0 + cs * ((double)c + 0.5), y0 - 6, "middle", "font-size=\"10\"", lab);
	}
	for (size_t r = 0; r < rows; r += every) {
		snprintf(lab, sizeof lab, "%zu", r);
		text_at(fp, x0 - 6, y0 + cs * ((double)r + 0.5) + 4, "end", "font-size=\"10\"", lab);
	}
	text_at(fp, x0 + gw / 2, y0 + gh + 30, "middle", "font-size=\"13\"", xlabel);
	if (ylabel && *ylabel) {
		double cx = 30, cy = y0 + gh / 2;
		char attrs[96];
		snprintf(attrs, sizeof attrs, "font-size=\"13\" transform=\"rotate(-90 %.2f %.2f)\"", cx, cy);
		text_at(fp, cx, cy, "middle", attrs, ylabel);
	}

	/* colour scale: 64 bands, largest value on top */
	if (have) {
		double bx = x0 + gw + 30, bw = 16;
		const int bands = 64;
		for (int i = 0; i < bands; i++) {
			heat_colour(1.0 - (i + 0.5) / bands, colour, sizeof colour);
			fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
				bx, y0 + bh * i / bands, bw, bh / bands + 0.5, colour);
		}
		fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"black\"/>\n",
			bx, y0, bw, bh);
		double mid = (vmin + vmax) / 2;
		if (fabs(mid) < 1e-9 * (vmax - vmin))
			mid = 0;
		const double at[3] = { vmax, mid, vmin };
		double tw = 0; /* the widest tick label, for the bar's title beyond it */
		for (int i = 0; i < 3; i++) {
			snprintf(lab, sizeof lab, "%.3g", at[i]);
			text_at(fp, bx + bw + 6, y0 + bh * i / 2 + 4, "start", NULL, lab);
			tw = fmax(tw, 7.0 * (double)strlen(lab));
		}
		if (zlabel && *zlabel) {
			double cx = bx + bw + 6 + tw + 16, cy = y0 + bh / 2;
			char attrs[96];
			snprintf(attrs, sizeof attrs, "font-size=\"13\" transform=\"rotate(-90 %.2f %.2f)\"", cx, cy);
			text_at(fp, cx, cy, "middle", attrs, zlabel);
		}
	}
	return svg_close(fp);
}

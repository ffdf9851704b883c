/*
 * ksvg: plain SVG charts written straight to a FILE*.
 *
 * Owns every picture kbfs draws (kstat's reports: TEPS against scale, time
 * per phase for each BFS level, per-rank grids): an x/y chart with linear
 * or log10 axes and any number of series (polylines and/or point markers,
 * with a legend), a stacked-bar chart and a heat map.  No external tools,
 * no scripts, no fonts beyond the viewer's sans-serif.
 *
 * Invariants: the output is one well-formed standalone SVG 1.1 document
 * that starts with "<svg" and ends with "</svg>\n" (no XML declaration;
 * UTF-8 is the default).  All caller text (titles, labels, names) is
 * escaped for XML; control characters and invalid UTF-8 bytes become '?'.
 * Ticks are "nice": steps of 1, 2 or 5 times a power of ten on linear axes,
 * whole decades on log axes (every k-th decade when there are many, with
 * 2..9 minor ticks when there are few, and 2 and 5 labelled when a decade
 * is wide enough for their labels).  The legend column is as wide as its
 * longest name needs (the picture grows; the plot keeps its size).  Points that cannot be drawn
 * (non-finite, or <= 0 on a log axis) are skipped and break the polyline.
 * A chart copies the data it is given, so callers may free their arrays.
 * Functions return 0, or KEXIT_IO when the stream has an error; they do not
 * print a message (the caller knows the file name) and never close fp.
 * Misuse (NULL chart, sizes of 0 where data is required) is a KBUG.
 */
#ifndef KSVG_H
#define KSVG_H

#include <stddef.h>
#include <stdio.h>

enum {
	KSVG_LINES = 1,   /* connect the points with a polyline */
	KSVG_POINTS = 2,  /* mark each point with a circle */
};

typedef struct ksvg_chart ksvg_chart;

/* Any text may be NULL (nothing drawn).  xlog/ylog: 1 for a log10 axis. */
ksvg_chart *ksvg_chart_new(const char *title, const char *xlabel, const char *ylabel,
			   int xlog, int ylog);
/* Add a series drawn with lines and points.  x may be NULL: 0, 1, ..., n-1.
 * name may be NULL: the series gets no legend entry. */
void ksvg_chart_series(ksvg_chart *c, const char *name, const double *x, const double *y, size_t n);
/* The same with style = KSVG_LINES, KSVG_POINTS or both. */
void ksvg_chart_series_style(ksvg_chart *c, const char *name, const double *x, const double *y,
			     size_t n, int style);
/* Label each point of the series added last (labels[i] may be NULL: none),
 * drawn small beside the point in the series' colour. */
void ksvg_chart_labels(ksvg_chart *c, const char *const *labels);
int ksvg_chart_write(const ksvg_chart *c, FILE *fp);
void ksvg_chart_free(ksvg_chart *c);

/*
 * Stacked bars: ncat categories along x (cat_labels[i], may be NULL for
 * 0..ncat-1), each bar the sum of nseg segments (seg_names[j], legend),
 * values[i*nseg + j] (row-major, category-major).  Negative or non-finite
 * values count as 0.  The y axis is linear from 0.
 */
int ksvg_stacked(FILE *fp, const char *title, const char *xlabel, const char *ylabel,
		 size_t ncat, const char *const *cat_labels,
		 size_t nseg, const char *const *seg_names, const double *values);

/*
 * Heat map of a rows x cols grid, values[r*cols + c], row 0 at the top,
 * with a colour scale from 0 (or the smallest finite value, when it is
 * negative) to the largest: sizes that differ by 15% are two close shades,
 * never white against navy as a scale from the smallest value would draw
 * them.  The value (%.3g) is written in each cell when cells are large
 * enough to hold it (at least 20 px, i.e. grids up to 28 x 28); non-finite
 * values are grey "n/a" cells.  xlabel names the columns, ylabel the rows,
 * zlabel the values (beside the colour bar); any may be NULL.
 */
int ksvg_heatmap(FILE *fp, const char *title, const char *xlabel, const char *ylabel, const char *zlabel,
		 size_t rows, size_t cols, const double *values);

#endif

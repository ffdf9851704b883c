/*
 * kstat: Graph500 statistics and the reference's output block.
 *
 * Owns the five-number summary the reference computes for every measured
 * quantity (kstat_describe), the TEPS statistics taken on the inverse rates
 * s = time / nedge (kstat_teps), and the printed "key: value" block of the
 * reference 3.0.1 (or 2.1.4) program (kstat_print_block).  Called by kbfs at
 * the end of a run and by kstat when it summarises saved runs; both print
 * exactly the same bytes for the same numbers.
 *
 * Invariants, matching the reference's get_statistics() bit for bit:
 *   - the mean is the plain left-to-right sum of the samples in the order
 *     given, divided by n; the standard deviation sums (x - mean)^2 in the
 *     same order and divides by n - 1 (it is 0 when n == 1, where the
 *     reference would print nan);
 *   - order statistics are taken on a sorted copy (the input is never
 *     modified): q1 = (x[(n-1)/4] + x[n/4]) / 2,
 *     median = (x[(n-1)/2] + x[n/2]) / 2, and q3 is the mirror image of q1,
 *     q3 = (x[n-1-(n-1)/4] + x[n-1-n/4]) / 2, as the reference's code does.
 *     (Not (x[3(n-1)/4] + x[3n/4]) / 2: that agrees only when n % 4 is 0
 *     or 1, e.g. n = 64, and differs for n = 2, 3, 6, 7, ...)
 *   - n == 0 yields an all-zero summary.
 *
 * Printed block: each line is the label (colon included) left-justified in
 * a 32-character field, then the value, so values start at column 33
 * (index 32): "SCALE:" + 26 spaces + "10".  The harmonic-mean line is the
 * one exception, "bfs  harmonic_mean_TEPS:     !  value", where the '!'
 * sits at index 29 and the value still starts at index 32.  Numbers use
 * %g, the nedge statistics %.11g, SCALE/NBFS/num_mpi_processes %d.
 */
#ifndef KSTAT_H
#define KSTAT_H

#include <stddef.h>
#include <stdio.h>

typedef struct kstat_sample {
	double min, q1, median, q3, max, mean, stddev;
} kstat_sample;

/* Summary of x[0..n-1] with the reference's formulas (see above). */
void kstat_describe(const double *x, size_t n, kstat_sample *s);

/*
 * TEPS statistics on s_i = time_i / nedge_i:
 *   min = 1/max(s), q1 = 1/q3(s), median = 1/median(s), q3 = 1/q1(s),
 *   max = 1/min(s), harmonic_mean = 1/mean(s),
 *   harmonic_stddev = stddev(s) / (mean(s)^2 * sqrt(n-1))  (0 when n <= 1).
 */
typedef struct kstat_teps {
	double min, q1, median, q3, max, harmonic_mean, harmonic_stddev;
} kstat_teps;

void kstat_teps_describe(const double *time, const double *nedge, size_t n, kstat_teps *t);
/* The headline number: 1 / mean(time_i / nedge_i). */
double kstat_harmonic_teps(const double *time, const double *nedge, size_t n);

/*
 * Searches far smaller than the widest: on a real graph a root in a
 * component of 2 vertices is timed like any other, and its TEPS sway the
 * statistics.  Returns how many of reached[0..n-1] are below
 * KSTAT_SMALL_FRACTION of the largest, which goes to *largest.
 */
#define KSTAT_SMALL_FRACTION 0.01
size_t kstat_small_searches(const double *reached, size_t n, double *largest);
/* The warning line for them ("N of M roots reached fewer than 1% ..."),
 * into buf; nothing (buf "") when small is 0. */
void kstat_small_warning(char *buf, size_t len, size_t small, size_t n, double largest);

typedef struct kstat_run {
	int scale;
	double edgefactor;
	int nbfs;                 /* number of entries in time, nedge, validate_time */
	double generation_time;
	int nproc;
	double construction_time;
	const double *time;
	const double *nedge;
	const double *validate_time; /* may be NULL when validation was skipped */
	int g500_v2_style;        /* print the 2.1.4 labels instead of 3.0.1's */
} kstat_run;

/*
 * Print the reference block for r (3.0.1 labels, or 2.1.4 labels when
 * r->g500_v2_style).  When r->validate_time is NULL the seven *_validate
 * lines are replaced by the single line
 *     "validation:                     skipped"
 * (same 32-column rule) -- the reference has no such case; it prints -1
 * times, which would look like a measurement.
 */
void kstat_print_block(FILE *fp, const kstat_run *r);

#endif

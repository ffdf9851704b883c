/* test_kstat: Graph500 statistics and the printed reference block. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kstat.h"
#include "tap.h"

static int close_to(double got, double want)
{
	return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

#define is_num(got, want, ...) \
	do { \
		double g_ = (got), w_ = (want); \
		if (!ok(close_to(g_, w_), __VA_ARGS__)) \
			printf("#   got %.17g, want %.17g\n", g_, w_); \
	} while (0)

static void check_sample(const char *what, const double *x, size_t n, const double want[7])
{
	kstat_sample s;
	kstat_describe(x, n, &s);
	is_num(s.min, want[0], "%s: min", what);
	is_num(s.q1, want[1], "%s: first quartile", what);
	is_num(s.median, want[2], "%s: median", what);
	is_num(s.q3, want[3], "%s: third quartile", what);
	is_num(s.max, want[4], "%s: max", what);
	is_num(s.mean, want[5], "%s: mean", what);
	is_num(s.stddev, want[6], "%s: stddev (n-1)", what);
}

static void test_quartiles(void)
{
	/* n = 1: everything is the one value, stddev 0 (not 0/0) */
	const double x1[] = { 5 };
	check_sample("n=1", x1, 1, (const double[7]){ 5, 5, 5, 5, 5, 5, 0 });

	/* n = 2, sorted {1,3}: q1 = x[0], median = (x[0]+x[1])/2, q3 = x[1] */
	const double x2[] = { 3, 1 };
	check_sample("n=2", x2, 2, (const double[7]){ 1, 1, 2, 3, 3, 2, sqrt(2.0) });

	/* n = 4, sorted {1,2,3,4}: q1 = (x0+x1)/2, med = (x1+x2)/2, q3 = (x3+x2)/2 */
	const double x4[] = { 4, 1, 3, 2 };
	check_sample("n=4", x4, 4, (const double[7]){ 1, 1.5, 2.5, 3.5, 4, 2.5, sqrt(5.0 / 3.0) });

	/* n = 5, sorted {10..50}: q1 = x1, med = x2, q3 = x3; var = 1000/4 */
	const double x5[] = { 30, 50, 10, 40, 20 };
	check_sample("n=5", x5, 5, (const double[7]){ 10, 20, 30, 40, 50, 30, sqrt(250.0) });

	/* n = 6, sorted {1..6}: q1 = x1 = 2, med = (x2+x3)/2, q3 = x[5-1] = 5
	 * (the mirror of q1; x[3*5/4] and x[3*6/4] would give 4.5) */
	const double x6[] = { 6, 5, 4, 3, 2, 1 };
	check_sample("n=6", x6, 6, (const double[7]){ 1, 2, 3.5, 5, 6, 3.5, sqrt(17.5 / 5) });

	/* n = 64, a permutation of 0..63: q1 = (x15+x16)/2, med = (x31+x32)/2,
	 * q3 = (x48+x47)/2; sum of squared deviations = 64*(64^2-1)/12 = 21840 */
	double x64[64];
	for (int i = 0; i < 64; i++)
		x64[i] = (double)((i * 37) % 64);
	check_sample("n=64", x64, 64, (const double[7]){ 0, 15.5, 31.5, 47.5, 63, 31.5, sqrt(21840.0 / 63) });

	/* the input is not reordered */
	ok(x2[0] == 3 && x2[1] == 1 && x64[1] == 37, "kstat_describe leaves its input alone");

	kstat_sample s;
	kstat_describe(NULL, 0, &s);
	ok(s.min == 0 && s.max == 0 && s.mean == 0 && s.stddev == 0, "n=0 gives an all-zero summary");
}

static void test_teps(void)
{
	/* TEPS = 100, 50, 25, 12.5, i.e. s = time/nedge = .01 .02 .04 .08 */
	const double time[] = { 1, 2, 4, 8 };
	const double nedge[] = { 100, 100, 100, 100 };
	kstat_teps t;
	kstat_teps_describe(time, nedge, 4, &t);
	is_num(t.min, 12.5, "min_TEPS = 1/max(s)");
	is_num(t.max, 100, "max_TEPS = 1/min(s)");
	is_num(t.median, 1 / 0.03, "median_TEPS = 1/median(s) = 1/((.02+.04)/2)");
	is_num(t.q1, 1 / 0.06, "firstquartile_TEPS = 1/q3(s) = 1/((.08+.04)/2)");
	is_num(t.q3, 1 / 0.015, "thirdquartile_TEPS = 1/q1(s) = 1/((.01+.02)/2)");
	/* 4 / (1/100 + 1/50 + 1/25 + 1/12.5) = 4 / 0.15 */
	is_num(t.harmonic_mean, 4 / 0.15, "harmonic mean = n / sum(1/TEPS)");
	is_num(kstat_harmonic_teps(time, nedge, 4), 4 / 0.15, "kstat_harmonic_teps");
	/* stddev(s) = sqrt(0.002875/3); / (mean(s)^2 sqrt(3)), mean(s) = .0375 */
	is_num(t.harmonic_stddev, sqrt(0.002875 / 3) / (0.0375 * 0.0375 * sqrt(3.0)),
	       "harmonic_stddev = stddev(s) / (mean(s)^2 sqrt(n-1))");
	kstat_teps_describe(time, nedge, 1, &t);
	ok(t.harmonic_stddev == 0 && t.harmonic_mean == 100, "one root: harmonic stddev 0, not nan");
}

/* Lines of the block for the fixed run below, derived by hand:
 * time {.5 .25 .125 1}: sorted {.125 .25 .5 1}, mean 1.875/4, stddev
 * sqrt(.44921875/3); nedge {1e6 1e6 1e6 1000300}: mean 1000075, stddev
 * sqrt(67500/3) = 150, printed in full by %.11g where %g would round;
 * TEPS 2e6 4e6 8e6 1000300; harmonic mean 4e7/18.7470008997... */
static const char *const expected_v3[] = {
	"SCALE:                          10",
	"edgefactor:                     16",
	"NBFS:                           4",
	"graph_generation:               0.5",
	"num_mpi_processes:              2",
	"construction_time:              0.25",
	"bfs  min_time:                  0.125",
	"bfs  firstquartile_time:        0.1875",
	"bfs  median_time:               0.375",
	"bfs  thirdquartile_time:        0.75",
	"bfs  max_time:                  1",
	"bfs  mean_time:                 0.46875",
	"bfs  stddev_time:               0.386962",
	"min_nedge:                      1000000",
	"firstquartile_nedge:            1000000",
	"median_nedge:                   1000000",
	"thirdquartile_nedge:            1000150",
	"max_nedge:                      1000300",
	"mean_nedge:                     1000075",
	"stddev_nedge:                   150",
	"bfs  min_TEPS:                  1.0003e+06",
	"bfs  firstquartile_TEPS:        1.3336e+06",
	"bfs  median_TEPS:               2.66667e+06",
	"bfs  thirdquartile_TEPS:        5.33333e+06",
	"bfs  max_TEPS:                  8e+06",
	"bfs  harmonic_mean_TEPS:     !  2.13367e+06",
	"bfs  harmonic_stddev_TEPS:      1.01674e+06",
	"bfs  min_validate:              0.01",
	"bfs  firstquartile_validate:    0.015",
	"bfs  median_validate:           0.025",
	"bfs  thirdquartile_validate:    0.035",
	"bfs  max_validate:              0.04",
	"bfs  mean_validate:             0.025",
	"bfs  stddev_validate:           0.0129099",
};
#define NEXPECTED (sizeof expected_v3 / sizeof expected_v3[0])

static const double run_time[] = { 0.5, 0.25, 0.125, 1.0 };
static const double run_nedge[] = { 1000000, 1000000, 1000000, 1000300 };
static const double run_validate[] = { 0.01, 0.02, 0.03, 0.04 };

/* Print the block into memory and split it into at most max lines. */
static size_t render(const kstat_run *r, char lines[][128], size_t max)
{
	FILE *fp = tmpfile();
	if (!fp)
		return 0;
	kstat_print_block(fp, r);
	rewind(fp);
	size_t n = 0;
	while (n < max && fgets(lines[n], 128, fp)) {
		lines[n][strcspn(lines[n], "\n")] = 0;
		n++;
	}
	fclose(fp);
	return n;
}

static void test_block(void)
{
	kstat_run r = {
		.scale = 10, .edgefactor = 16, .nbfs = 4, .generation_time = 0.5,
		.nproc = 2, .construction_time = 0.25, .time = run_time,
		.nedge = run_nedge, .validate_time = run_validate,
	};
	char lines[64][128];
	size_t n = render(&r, lines, 64);
	if (!ok(n == NEXPECTED, "3.0.1 block has %zu lines", NEXPECTED))
		printf("#   got %zu lines\n", n);
	for (size_t i = 0; i < NEXPECTED && i < n; i++) {
		if (!ok(strcmp(lines[i], expected_v3[i]) == 0, "line %zu: %s", i + 1, expected_v3[i]))
			printf("#   got  '%s'\n", lines[i]);
	}
	int col32 = 1;
	for (size_t i = 0; i < n; i++)
		if (strlen(lines[i]) <= 32 || lines[i][31] != ' ' || lines[i][32] == ' ')
			col32 = 0;
	ok(col32, "every value starts at index 32");

	/* 2.1.4 labels: no "bfs  " prefix, no '!' */
	r.g500_v2_style = 1;
	n = render(&r, lines, 64);
	ok(n == NEXPECTED, "2.1.4 block has the same %zu lines", NEXPECTED);
	int plain = 1;
	for (size_t i = 0; i < n; i++)
		if (strstr(lines[i], "bfs  ") || strchr(lines[i], '!'))
			plain = 0;
	ok(plain, "2.1.4 block has no 'bfs  ' prefix and no '!'");
	ok(n > 25 && strcmp(lines[6], "min_time:                       0.125") == 0, "2.1.4 min_time line");
	ok(n > 25 && strcmp(lines[25], "harmonic_mean_TEPS:             2.13367e+06") == 0,
	   "2.1.4 harmonic_mean_TEPS line");
	ok(n > 33 && strcmp(lines[33], "stddev_validate:                0.0129099") == 0, "2.1.4 stddev_validate line");

	/* validation skipped: one line instead of seven */
	r.g500_v2_style = 0;
	r.validate_time = NULL;
	n = render(&r, lines, 64);
	ok(n == NEXPECTED - 6, "skipped validation: %zu lines", NEXPECTED - 6);
	ok(n == NEXPECTED - 6 && strcmp(lines[n - 1], "validation:                     skipped") == 0,
	   "skipped validation: last line says so");
	ok(n > 26 && strcmp(lines[26], expected_v3[26]) == 0, "skipped validation: TEPS lines unchanged");
}

int main(void)
{
	test_quartiles();
	test_teps();
	test_block();
	return tap_done();
}

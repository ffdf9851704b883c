/* test_ksvg: every chart kind is a well-formed SVG document.
 * With a directory argument the SVGs are also kept there (for a viewer or
 * xmllint). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ksvg.h"
#include "tap.h"

static const char *keep_dir;

/* Read the stream back; keep a copy as keep_dir/name when asked. */
static char *finish(FILE *fp, const char *name)
{
	long n = ftell(fp);
	rewind(fp);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, fp);
	buf[got] = 0;
	fclose(fp);
	if (keep_dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", keep_dir, name);
		FILE *out = fopen(path, "w");
		if (out) {
			fwrite(buf, 1, got, out);
			fclose(out);
		}
	}
	return buf;
}

/*
 * A small well-formedness check: one <svg> root, every element closed in
 * order (a tag stack), attribute values quoted and free of '<', no stray
 * '<' or '&' in text.  Returns NULL when fine, else what is wrong.
 */
static const char *check_xml(const char *s)
{
	static char why[160];
	size_t len = strlen(s);
	if (strncmp(s, "<svg ", 5) != 0)
		return "does not start with <svg";
	if (len < 7 || strcmp(s + len - 7, "</svg>\n") != 0)
		return "does not end with </svg>\\n";
	char stack[64][32];
	int depth = 0, roots = 0;
	const char *p = s;
	while (*p) {
		if (*p == '&') {
			static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			size_t k;
			for (k = 0; k < 5; k++)
				if (strncmp(p, ent[k], strlen(ent[k])) == 0)
					break;
			if (k == 5)
				return "bare '&' in text";
			p++;
			continue;
		}
		if (*p != '<') {
			if (depth == 0 && *p != '\n')
				return "text outside the root element";
			p++;
			continue;
		}
		p++;
		int closing = *p == '/';
		if (closing)
			p++;
		char name[32];
		size_t n = 0;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == ':') {
			if (n + 1 < sizeof name)
				name[n++] = *p;
			p++;
		}
		name[n] = 0;
		if (n == 0)
			return "'<' not followed by an element name";
		if (closing) {
			if (*p != '>')
				return "junk in a closing tag";
			p++;
			if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
				snprintf(why, sizeof why, "</%s> does not close <%s>", name, depth ? stack[depth - 1] : "(nothing)");
				return why;
			}
			depth--;
			continue;
		}
		/* attributes: name="value" */
		for (;;) {
			while (*p == ' ' || *p == '\n')
				p++;
			if (*p == '>' || (p[0] == '/' && p[1] == '>'))
				break;
			if (!*p)
				return "unterminated tag";
			while (*p && *p != '=' && *p != '>' && *p != ' ')
				p++;
			if (*p != '=' || p[1] != '"')
				return "attribute without a quoted value";
			p += 2;
			while (*p && *p != '"') {
				if (*p == '<')
					return "'<' in an attribute value";
				p++;
			}
			if (!*p)
				return "unterminated attribute value";
			p++;
		}
		int self = *p == '/';
		p += self ? 2 : 1;
		if (depth == 0)
			roots++;
		if (!self) {
			if (depth == 64)
				return "nesting too deep";
			strcpy(stack[depth++], name);
		}
	}
	if (depth)
		return "unclosed element at end";
	if (roots != 1)
		return "more than one root element";
	return NULL;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void wellformed(const char *svg, const char *what)
{
	const char *why = check_xml(svg);
	if (!ok(why == NULL, "%s: well-formed", what))
		printf("#   %s\n", why);
}

static void test_linear_chart(void)
{
	FILE *fp = tmpfile();
	ksvg_chart *c = ksvg_chart_new("BFS depth <& \"profile\">", "level", "vertices", 0, 0);
	const double x[] = { 0, 1, 2, 3, 4, 5 };
	const double a[] = { 0.05, 0.1, 0.2, 0.3, 0.15, 0.0 };
	const double b[] = { 0.01, 0.02, NAN, 0.04, 0.05, 0.06 };
	ksvg_chart_series(c, "root 458", x, a, 6);
	ksvg_chart_series_style(c, "gap", x, b, 6, KSVG_LINES);
	ksvg_chart_series_style(c, NULL, NULL, a, 6, KSVG_POINTS);
	ok(ksvg_chart_write(c, fp) == 0, "linear chart written");
	ksvg_chart_free(c);
	char *svg = finish(fp, "linear.svg");
	wellformed(svg, "linear chart");
	ok(strstr(svg, "<title>BFS depth &lt;&amp; &quot;profile&quot;&gt;</title>") != NULL, "title escaped");
	ok(count(svg, "<polyline") == 3, "two line series, one broken at NaN: 3 polylines");
	ok(count(svg, "<circle") == 6 + 6 + 1, "markers for the two point series and one legend marker");
	ok(strstr(svg, ">root 458</text>") && strstr(svg, ">gap</text>"), "legend names");
	ok(strstr(svg, ">0.3</text>") && strstr(svg, ">0.05</text>"), "nice linear ticks (0.05 steps)");
	ok(!strstr(svg, "0000000001"), "no floating-point noise in tick labels");
	free(svg);
}

static void test_log_chart(void)
{
	FILE *fp = tmpfile();
	ksvg_chart *c = ksvg_chart_new("TEPS", "edges", "TEPS", 1, 1);
	const double x[] = { 1 << 14, 1 << 16, 1 << 18, 1 << 20, 0 };
	const double y[] = { 2.5e6, 4.1e7, 3.8e7, 4.0e8, 5e7 };
	ksvg_chart_series(c, "kbfs", x, y, 5);
	ok(ksvg_chart_write(c, fp) == 0, "log-log chart written");
	ksvg_chart_free(c);
	char *svg = finish(fp, "loglog.svg");
	wellformed(svg, "log-log chart");
	ok(strstr(svg, ">1e6</text>") && strstr(svg, ">1e9</text>"), "decade labels 1e6..1e9");
	ok(strstr(svg, ">10000</text>") && strstr(svg, ">1e7</text>"), "x decades 10000..1e7");
	ok(count(svg, "<circle") == 4 + 1, "x = 0 is skipped on a log axis");
	free(svg);

	fp = tmpfile();
	c = ksvg_chart_new(NULL, NULL, NULL, 0, 1);
	ok(ksvg_chart_write(c, fp) == 0, "empty chart written");
	ksvg_chart_free(c);
	svg = finish(fp, "empty.svg");
	wellformed(svg, "empty chart");
	free(svg);
}

/* The width attribute of the <svg> element. */
static double svg_width(const char *svg)
{
	const char *w = strstr(svg, "width=\"");
	return w ? atof(w + 7) : 0;
}

/* Point 9 of issue 12: labels at 2 and 5 on a log axis of few decades, a
 * legend as wide as its names, labelled points. */
static void test_log_minor_labels_legend(void)
{
	FILE *fp = tmpfile();
	ksvg_chart *c = ksvg_chart_new("scaling", "ranks", "TEPS", 1, 1);
	const double x[] = { 1, 2, 2, 4 }, y[] = { 3e9, 4e9, 1.5e9, 6e8 };
	const char *grid[] = { "1x1", "2x1", "1x2", NULL };
	ksvg_chart_series(c, "a legend name much longer than the old 190-pixel column", x, y, 4);
	ksvg_chart_labels(c, grid);
	ok(ksvg_chart_write(c, fp) == 0, "labelled log-log chart written");
	ksvg_chart_free(c);
	char *svg = finish(fp, "labels.svg");
	wellformed(svg, "labelled chart");
	ok(strstr(svg, ">2</text>") && strstr(svg, ">5</text>"), "one decade of ranks: 2 and 5 labelled");
	ok(strstr(svg, ">2e9</text>") && strstr(svg, ">5e8</text>"), "two decades of TEPS: 5e8 and 2e9 labelled");
	/* the name's 55 characters at 7 px from x = 570 + 45 */
	ok(svg_width(svg) >= 570 + 45 + 7 * 55, "the picture is widened for the long legend name (width %g)",
	   svg_width(svg));
	ok(strstr(svg, ">2x1</text>") && strstr(svg, ">1x2</text>") && strstr(svg, ">1x1</text>"), "point labels drawn");
	ok(strstr(svg, "text-anchor=\"end\" font-size=\"10\"") != NULL,
	   "a label whose point shares x with the one before is drawn on the left");
	free(svg);

	fp = tmpfile();
	c = ksvg_chart_new(NULL, "degree", "vertices", 1, 1);
	const double dx[] = { 1, 1e5 }, dy[] = { 1, 1e4 };
	ksvg_chart_series_style(c, "short", dx, dy, 2, KSVG_POINTS);
	ok(ksvg_chart_write(c, fp) == 0, "five-decade chart written");
	ksvg_chart_free(c);
	svg = finish(fp, "decades.svg");
	ok(!strstr(svg, ">20000</text>") && !strstr(svg, ">50000</text>"),
	   "five decades across: no 2/5 labels on x (no room)");
	ok(strstr(svg, ">5000</text>") != NULL, "four decades up: 2/5 labels on y");
	ok(svg_width(svg) == 760, "a short legend keeps the usual width");
	free(svg);
}

static void test_stacked(void)
{
	const char *cats[] = { "0", "1", "2", "3", "4" };
	const char *segs[] = { "expand", "local", "fold & update" };
	const double v[5 * 3] = {
		0.001, 0.002, 0.001,
		0.002, 0.010, 0.004,
		0.004, 0.030, 0.008,
		0.002, 0.008, -1,
		0.001, NAN, 0.001,
	};
	FILE *fp = tmpfile();
	ok(ksvg_stacked(fp, "time per phase for each BFS level", "level", "seconds", 5, cats, 3, segs, v) == 0,
	   "stacked chart written");
	char *svg = finish(fp, "stacked.svg");
	wellformed(svg, "stacked chart");
	ok(count(svg, "</rect>") == 13, "one rect per positive segment (13)");
	ok(strstr(svg, ">fold &amp; update</text>") != NULL, "legend escaped");
	ok(strstr(svg, "<title>2 local: 0.03</title>") != NULL, "segment tooltip");
	free(svg);

	/* many categories, default labels, no legend */
	double many[200];
	for (int i = 0; i < 200; i++)
		many[i] = i % 7;
	fp = tmpfile();
	ok(ksvg_stacked(fp, NULL, NULL, NULL, 200, NULL, 1, NULL, many) == 0, "200-bar chart written");
	svg = finish(fp, "stacked200.svg");
	wellformed(svg, "200-bar chart");
	/* 650 px / 200 = 3.25 px a slot: every 12th label (36 px apart) */
	ok(count(svg, ">199</text>") == 0 && count(svg, ">192</text>") == 1, "category labels thinned");
	free(svg);
}

static void test_heatmap(void)
{
	const double v[3 * 4] = {
		1, 2, 3, 4,
		5, NAN, 7, 8,
		9, 10, 11, 1234567,
	};
	FILE *fp = tmpfile();
	ok(ksvg_heatmap(fp, "bytes sent <per rank>", "column", "row", "bytes <sent>", 3, 4, v) == 0,
	   "heat map written");
	char *svg = finish(fp, "heatmap.svg");
	wellformed(svg, "heat map");
	ok(count(svg, "<title>row ") == 12, "one cell per value");
	ok(strstr(svg, ">1.23e+06</text>") && strstr(svg, ">n/a</text>"), "values written in cells");
	ok(strstr(svg, "fill=\"#dddddd\"") != NULL, "non-finite cell is grey");
	ok(strstr(svg, ">bytes &lt;sent&gt;</text>") != NULL, "the colour bar has its label");
	ok(strstr(svg, ">0</text>") != NULL, "the colour bar starts at 0 for positive values");
	free(svg);

	/* a 1.15x imbalance: two close dark shades, not white against navy */
	const double near[2] = {100, 115};
	fp = tmpfile();
	ok(ksvg_heatmap(fp, NULL, NULL, NULL, NULL, 1, 2, near) == 0, "1x2 heat map written");
	svg = finish(fp, "heatmap-near.svg");
	const char *c0 = strstr(svg, "<rect x=\"80.00\" y=\"60.00\""), *f0 = c0 ? strstr(c0, "fill=\"#") : NULL;
	unsigned r0 = 255, g0 = 255, b0 = 255;
	ok(f0 && sscanf(f0, "fill=\"#%2x%2x%2x", &r0, &g0, &b0) == 3 && r0 + g0 + b0 < 3 * 110,
	   "100 against 115: the smaller cell is dark too (#%02x%02x%02x)", r0, g0, b0);
	free(svg);

	double big[40 * 40];
	for (int i = 0; i < 40 * 40; i++)
		big[i] = sin(i * 0.01);
	fp = tmpfile();
	ok(ksvg_heatmap(fp, NULL, NULL, NULL, NULL, 40, 40, big) == 0, "40x40 heat map written");
	svg = finish(fp, "heatmap40.svg");
	wellformed(svg, "40x40 heat map");
	ok(count(svg, "<title>row ") == 1600, "1600 cells");
	free(svg);
}

static void test_bad_text(void)
{
	FILE *fp = tmpfile();
	ksvg_chart *c = ksvg_chart_new("bad \x01 bytes \xff\xfe ok é", "x'", "y\"", 0, 0);
	const double y[] = { 1, 2 };
	ksvg_chart_series(c, "a\x1b[31m", NULL, y, 2);
	ksvg_chart_write(c, fp);
	ksvg_chart_free(c);
	char *svg = finish(fp, "badtext.svg");
	wellformed(svg, "control characters and invalid UTF-8");
	ok(strstr(svg, ">bad ? bytes ?? ok é</text>") != NULL, "invalid bytes replaced, UTF-8 kept");
	free(svg);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		keep_dir = argv[1];
	ok(check_xml("<svg a=\"1\"><g></svg>\n") != NULL, "checker catches an unclosed element");
	ok(check_xml("<svg a=\"1\"><g/>x & y</svg>\n") != NULL, "checker catches a bare '&'");
	test_linear_chart();
	test_log_chart();
	test_log_minor_labels_legend();
	test_stacked();
	test_heatmap();
	test_bad_text();
	return tap_done();
}

/* test_kimport: every import fixture, plain and gzip'd, and the bad ones. */
#include "kimport.h"
#include "klog.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/import/"
#define METIS_DOC "/tmp/metis/usr/share/doc/libmetis-dev/examples/graphs/"

typedef struct want {
	const char *file;
	int format;
	uint64_t nv, ne, selfloops, lines, comments;
	const uint64_t *map; /* NULL: identity expected (map NULL or 1-based) */
	const uint64_t *uv;  /* all 2*ne internal ids, in order */
} want;

static const uint64_t snap_uv[] = { 0, 1, 0, 2, 1, 2, 2, 3, 3, 3, 3, 4, 0, 1, 4, 9 };
static const uint64_t sparse_map[] = { 7, 42, 1000000007, 1000000009 };
static const uint64_t sparse_uv[] = { 2, 1, 1, 0, 0, 2, 3, 2 };
static const uint64_t gap_map[] = { 0, 50, 100 };
static const uint64_t gap_uv[] = { 0, 1, 1, 2, 2, 0, 0, 2 };
static const uint64_t mtx_sym_uv[] = { 1, 0, 2, 0, 2, 1, 3, 2, 4, 3, 4, 4 };
static const uint64_t mtx_gen_uv[] = { 0, 1, 1, 0, 1, 2, 3, 3, 2, 3 };
static const uint64_t metis_uv[] = { 0, 1, 0, 2, 1, 2, 1, 4, 2, 3, 3, 4 };
static const uint64_t metis_ew_uv[] = { 0, 1, 0, 2, 1, 2, 1, 3 };
static const uint64_t metis_vw_uv[] = { 0, 1, 0, 2, 1, 2, 2, 3, 3, 4 };
static const uint64_t lookalike_uv[] = { 3, 1, 1, 2, 2, 3, 3, 1 };

static const want goods[] = {
	{ "snap.txt", KIMPORT_EDGELIST, 10, 8, 1, 11, 3, NULL, snap_uv },
	{ "sparse.txt", KIMPORT_EDGELIST, 4, 4, 0, 4, 0, sparse_map, sparse_uv },
	{ "gap.wel", KIMPORT_EDGELIST, 3, 4, 0, 4, 0, gap_map, gap_uv },
	{ "looks-like-metis.txt", KIMPORT_EDGELIST, 4, 4, 0, 4, 0, NULL, lookalike_uv },
	{ "mtx-sym.mtx", KIMPORT_MTX, 5, 6, 1, 9, 3, NULL, mtx_sym_uv },
	{ "mtx-gen.mtx", KIMPORT_MTX, 4, 5, 1, 8, 3, NULL, mtx_gen_uv },
	{ "metis.graph", KIMPORT_METIS, 6, 6, 0, 8, 2, NULL, metis_uv },
	{ "metis-ew.graph", KIMPORT_METIS, 4, 4, 0, 5, 1, NULL, metis_ew_uv },
	{ "metis-vw.graph", KIMPORT_METIS, 5, 5, 0, 7, 2, NULL, metis_vw_uv },
};

static void check_good(const want *w, const char *path, int format, const char *label)
{
	kimport_result r;
	int rc = kimport_read(path, format, 0, &r);
	if (!ok(rc == 0, "%s: %s reads (rc %d)", w->file, label, rc))
		return;
	is_u64(r.format, w->format, "%s: %s format %s", w->file, label, kimport_format_name(w->format));
	is_u64(r.nv, w->nv, "%s: %s nv", w->file, label);
	is_u64(r.ne, w->ne, "%s: %s ne", w->file, label);
	is_u64(r.selfloops, w->selfloops, "%s: %s self-loops", w->file, label);
	is_u64(r.lines, w->lines, "%s: %s lines", w->file, label);
	is_u64(r.comments, w->comments, "%s: %s comment/header lines", w->file, label);
	is_u64(r.malformed, 0, "%s: %s nothing malformed", w->file, label);
	int same = r.ne == w->ne;
	for (uint64_t k = 0; same && k < 2 * w->ne; k++)
		same = r.uv[k] == w->uv[k];
	ok(same, "%s: %s every edge as expected", w->file, label);
	if (w->map) {
		same = r.map != NULL;
		for (uint64_t k = 0; same && k < w->nv; k++)
			same = r.map[k] == w->map[k];
		ok(same, "%s: %s map holds the sorted original ids", w->file, label);
	} else if (w->format == KIMPORT_EDGELIST) {
		ok(r.map == NULL, "%s: %s dense ids kept (map NULL)", w->file, label);
	} else {
		same = r.map != NULL;
		for (uint64_t k = 0; same && k < w->nv; k++)
			same = r.map[k] == k + 1;
		ok(same, "%s: %s map[k] = k + 1", w->file, label);
	}
	kimport_free(&r);
	ok(r.uv == NULL && r.map == NULL && r.ne == 0, "%s: %s kimport_free clears", w->file, label);
}

/* One line on stderr, "test_kimport: ..." naming the file (the TAP line
 * shows it, so the expected message never reads as a failure). */
static void one_line(const char *err, const char *file, const char *what)
{
	size_t n = strlen(err);
	int lines = 0;
	for (size_t k = 0; k < n; k++)
		lines += err[k] == '\n';
	char shown[300];
	snprintf(shown, sizeof shown, "%.*s", (int)(n && err[n - 1] == '\n' ? n - 1 : n), err);
	ok(lines == 1 && !strncmp(err, "test_kimport: ", 14) && strstr(err, file), "%s: one line naming it: \"%s\"",
	   what, shown);
}

static void check_bad(const char *file, int format, int want_rc)
{
	char path[256], err[4096], what[300];
	kimport_result r;
	snprintf(path, sizeof path, FIX "%s", file);
	tap_stderr_begin();
	int rc = kimport_read(path, format, 0, &r);
	tap_stderr_end(err, sizeof err);
	snprintf(what, sizeof what, "%s (%s)", file, kimport_format_name(format));
	is_u64(rc, want_rc, "%s fails with exit code %d", what, want_rc);
	ok(r.uv == NULL && r.map == NULL && r.ne == 0, "%s leaves an empty result", what);
	one_line(err, file, what);
}

static int exists(const char *p) { return access(p, R_OK) == 0; }

/* a METIS example from libmetis-doc, when it has been unpacked in /tmp/metis */
static void check_metis_doc(const char *name, uint64_t nv, uint64_t ne, uint64_t nv2, uint64_t ne2)
{
	char path[512], gz[520];
	snprintf(path, sizeof path, METIS_DOC "%s", name);
	snprintf(gz, sizeof gz, "%s.gz", path);
	const char *p = exists(path) ? path : exists(gz) ? gz : NULL;
	if (!p) {
		printf("# skip %s: not found under " METIS_DOC " (cd /tmp/metis && apt-get download libmetis-doc && "
		       "dpkg-deb -x libmetis-doc_*.deb .)\n", name);
		return;
	}
	kimport_result r;
	double t0 = ktime();
	int rc = kimport_read(p, KIMPORT_AUTO, 0, &r);
	double dt = ktime() - t0;
	if (!ok(rc == 0, "%s reads", name))
		return;
	is_u64(r.format, KIMPORT_METIS, "%s detected as METIS", name);
	ok((r.nv == nv && r.ne == ne) || (r.nv == nv2 && r.ne == ne2), "%s: %llu vertices, %llu edges", name,
	   (unsigned long long)r.nv, (unsigned long long)r.ne);
	int inrange = 1;
	for (uint64_t k = 0; inrange && k < 2 * r.ne; k++)
		inrange = r.uv[k] < r.nv;
	for (uint64_t k = 0; inrange && k < r.ne; k++)
		inrange = r.uv[2 * k] < r.uv[2 * k + 1];
	ok(inrange, "%s: every edge kept once, from its lower endpoint", name);
	printf("# %s: %llu lines in %.3f s (%.2f M lines/s)\n", name, (unsigned long long)r.lines, dt,
	       (double)r.lines / dt / 1e6);
	kimport_free(&r);
}

int main(void)
{
	klog_init("test_kimport");
	char path[256];
	for (size_t i = 0; i < sizeof goods / sizeof goods[0]; i++) {
		const want *w = &goods[i];
		snprintf(path, sizeof path, FIX "%s", w->file);
		check_good(w, path, KIMPORT_AUTO, "plain");
		check_good(w, path, w->format, "forced");
		if (w->format != KIMPORT_EDGELIST || i < 3) {
			snprintf(path, sizeof path, FIX "%s.gz", w->file);
			check_good(w, path, KIMPORT_AUTO, "gzip");
		}
	}

	/* standard input, gzip'd */
	if (freopen(FIX "snap.txt.gz", "rb", stdin))
		check_good(&goods[0], "-", KIMPORT_AUTO, "stdin");
	else
		ok(0, "reopen stdin");

	/* skip_bad counts and skips */
	kimport_result r;
	int rc = kimport_read(FIX "bad-token.txt", KIMPORT_AUTO, 1, &r);
	ok(rc == 0 && r.ne == 1 && r.malformed == 1, "bad-token.txt with skip_bad: 1 edge, 1 malformed");
	kimport_free(&r);
	rc = kimport_read(FIX "mtx-entry-out-of-range.mtx", KIMPORT_AUTO, 1, &r);
	ok(rc == 0 && r.ne == 2 && r.malformed == 1 && r.nv == 5, "mtx-entry-out-of-range.mtx with skip_bad: 2 edges, 1 malformed");
	kimport_free(&r);
	char err[4096];
	tap_stderr_begin();
	rc = kimport_read(FIX "mtx-bad-header.mtx", KIMPORT_AUTO, 1, &r);
	tap_stderr_end(err, sizeof err);
	is_u64(rc, KEXIT_DATA, "mtx-bad-header.mtx with skip_bad is still an error");
	one_line(err, "mtx-bad-header.mtx", "mtx-bad-header.mtx with skip_bad");
	tap_stderr_begin();
	rc = kimport_read(FIX "mtx-too-many-entries.mtx", KIMPORT_AUTO, 1, &r);
	tap_stderr_end(err, sizeof err);
	is_u64(rc, KEXIT_DATA, "mtx-too-many-entries.mtx with skip_bad is still an error");
	one_line(err, "mtx-too-many-entries.mtx", "mtx-too-many-entries.mtx with skip_bad");

	/* the bad fixtures */
	check_bad("bad-token.txt", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("single-id.txt", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("negative-id.txt", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("id-overflow.txt", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("no-edges.txt", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("truncated.txt.gz", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("corrupt.txt.gz", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-bad-header.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-bad-size.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-not-square.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-entry-out-of-range.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-too-few-entries.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("mtx-too-many-entries.mtx", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("metis-edge-count-mismatch.graph", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("metis-edge-count-mismatch.graph", KIMPORT_METIS, KEXIT_DATA);
	check_bad("metis-neighbour-out-of-range.graph", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("metis-neighbour-out-of-range.graph", KIMPORT_METIS, KEXIT_DATA);
	check_bad("metis-asymmetric.graph", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("metis-asymmetric.graph", KIMPORT_METIS, KEXIT_DATA);
	check_bad("metis-too-few-lines.graph", KIMPORT_AUTO, KEXIT_DATA);
	check_bad("metis-too-few-lines.graph", KIMPORT_METIS, KEXIT_DATA);
	check_bad("metis-missing-weight.graph", KIMPORT_METIS, KEXIT_DATA);
	check_bad("snap.txt", KIMPORT_MTX, KEXIT_DATA);
	check_bad("mtx-sym.mtx", KIMPORT_METIS, KEXIT_DATA);
	check_bad("does-not-exist.txt", KIMPORT_AUTO, KEXIT_IO);

	is_u64(strcmp(kimport_format_name(KIMPORT_METIS), "metis"), 0, "format name metis");

	/* real METIS graphs (Debian's libmetis-doc), when present */
	check_metis_doc("4elt.graph", 7434, 43031, 15606, 45878);
	check_metis_doc("copter2.graph", 55476, 352238, 55476, 352238);
	check_metis_doc("mdual.graph", 258569, 513132, 258569, 513132);
	return tap_done();
}

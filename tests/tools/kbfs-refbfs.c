/*
 * kbfs-refbfs: an independent serial BFS for the kbfs tests.  Plain C, no
 * kbfs code: it reads the text edge list ("u v" a line, as `kgen -f text`
 * writes it), builds an undirected adjacency list and runs a queue BFS.
 *
 *   kbfs-refbfs -n NV -o DIR EDGES ROOT...
 *       writes DIR/depth-ROOT.txt ("v depth" for v = 0..NV-1, -1 when
 *       unreached) and prints "ROOT NEDGE" on stdout, where NEDGE counts
 *       the input tuples with both ends reached, self-loops excluded,
 *       duplicates counted (Graph500 reference 3.0.1).
 *   kbfs-refbfs --from-pred PREDFILE
 *       reads "v parent" lines ('#' comments) and prints "v depth" lines,
 *       the depth found by walking parents (-1 unreached), in file order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *m, const char *a)
{
	fprintf(stderr, "kbfs-refbfs: %s%s\n", m, a ? a : "");
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory", NULL);
	return p;
}

static int from_pred(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open ", path);
	size_t n = 0, cap = 1024;
	long long *v = xmalloc(cap * sizeof *v), *p = xmalloc(cap * sizeof *p);
	char line[256];
	long long maxv = -1;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof *v);
			p = realloc(p, cap * sizeof *p);
			if (!v || !p)
				die("out of memory", NULL);
		}
		if (sscanf(line, "%lld %lld", &v[n], &p[n]) != 2)
			die("bad line in ", path);
		if (v[n] > maxv)
			maxv = v[n];
		n++;
	}
	fclose(f);
	long long *par = xmalloc((size_t)(maxv + 1) * sizeof *par), *dep = xmalloc((size_t)(maxv + 1) * sizeof *dep);
	for (long long k = 0; k <= maxv; k++)
		par[k] = dep[k] = -2;
	for (size_t k = 0; k < n; k++)
		par[v[k]] = p[k];
	for (size_t k = 0; k < n; k++) {
		long long x = v[k], d = 0;
		if (par[x] < 0) {
			printf("%lld -1\n", x);
			continue;
		}
		/* walk up to the root (its own parent) or a vertex of known depth */
		while (par[x] != x && dep[x] < 0 && d <= maxv + 1) {
			x = par[x];
			if (x < 0 || x > maxv || par[x] < 0) {
				d = -1;
				break;
			}
			d++;
		}
		if (d < 0 || d > maxv + 1) {
			printf("%lld bad\n", v[k]);
			continue;
		}
		long long base = par[x] == x ? 0 : dep[x];
		printf("%lld %lld\n", v[k], base + d);
		dep[v[k]] = base + d;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--from-pred"))
		return from_pred(argv[2]);
	if (argc < 7 || strcmp(argv[1], "-n") || strcmp(argv[3], "-o"))
		die("usage: kbfs-refbfs -n NV -o DIR EDGES ROOT... | --from-pred FILE", NULL);
	uint64_t nv = strtoull(argv[2], NULL, 10);
	const char *dir = argv[4];
	FILE *f = fopen(argv[5], "r");
	if (!f)
		die("cannot open ", argv[5]);
	size_t m = 0, cap = 1 << 16;
	uint64_t *e = xmalloc(2 * cap * sizeof *e);
	unsigned long long a, b;
	while (fscanf(f, "%llu %llu", &a, &b) == 2) {
		if (a >= nv || b >= nv)
			die("vertex out of range in ", argv[5]);
		if (m == cap) {
			cap *= 2;
			e = realloc(e, 2 * cap * sizeof *e);
			if (!e)
				die("out of memory", NULL);
		}
		e[2 * m] = a;
		e[2 * m + 1] = b;
		m++;
	}
	fclose(f);
	uint64_t *off = calloc(nv + 1, sizeof *off), *adj = xmalloc(2 * m * sizeof *adj), *fill;
	if (!off)
		die("out of memory", NULL);
	for (size_t k = 0; k < m; k++)
		if (e[2 * k] != e[2 * k + 1]) {
			off[e[2 * k] + 1]++;
			off[e[2 * k + 1] + 1]++;
		}
	for (uint64_t v = 0; v < nv; v++)
		off[v + 1] += off[v];
	fill = xmalloc((nv + 1) * sizeof *fill);
	memcpy(fill, off, (nv + 1) * sizeof *fill);
	for (size_t k = 0; k < m; k++)
		if (e[2 * k] != e[2 * k + 1]) {
			adj[fill[e[2 * k]]++] = e[2 * k + 1];
			adj[fill[e[2 * k + 1]]++] = e[2 * k];
		}
	long long *depth = xmalloc(nv * sizeof *depth);
	uint64_t *queue = xmalloc(nv * sizeof *queue);
	for (int r = 6; r < argc; r++) {
		uint64_t root = strtoull(argv[r], NULL, 10);
		if (root >= nv)
			die("root out of range: ", argv[r]);
		for (uint64_t v = 0; v < nv; v++)
			depth[v] = -1;
		size_t qh = 0, qt = 0;
		depth[root] = 0;
		queue[qt++] = root;
		while (qh < qt) {
			uint64_t u = queue[qh++];
			for (uint64_t k = off[u]; k < off[u + 1]; k++)
				if (depth[adj[k]] < 0) {
					depth[adj[k]] = depth[u] + 1;
					queue[qt++] = adj[k];
				}
		}
		uint64_t nedge = 0;
		for (size_t k = 0; k < m; k++)
			nedge += e[2 * k] != e[2 * k + 1] && depth[e[2 * k]] >= 0;
		char path[4096];
		snprintf(path, sizeof path, "%s/depth-%llu.txt", dir, (unsigned long long)root);
		FILE *o = fopen(path, "w");
		if (!o)
			die("cannot write ", path);
		for (uint64_t v = 0; v < nv; v++)
			fprintf(o, "%llu %lld\n", (unsigned long long)v, depth[v]);
		if (fclose(o))
			die("cannot write ", path);
		printf("%llu %llu\n", (unsigned long long)root, (unsigned long long)nedge);
	}
	return 0;
}

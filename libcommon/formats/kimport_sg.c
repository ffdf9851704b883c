/*
 * kimport_sg.c: the GAP benchmark suite's serialized graphs (.sg, and .wsg
 * with int32 weights) for kimport_read.  See kimport.h.
 *
 * Layout (little-endian, as gapbs writes it on x86): u8 directed (0 or 1),
 * i64 m (adjacency entries: twice the edges when undirected), i64 n
 * (vertices), then (n+1) i64 offsets and m neighbours (i32 id, or i32 id +
 * i32 weight for .wsg); a directed graph repeats both arrays for its
 * in-neighbours.  Which of .sg and .wsg it is follows from the size.
 */
#include "kimport.h"
#include "kimport_internal.h"
#include "klog.h"
#include "kmem.h"

#include <stdio.h>
#include <string.h>

enum { SG_HDR = 17 };

static uint64_t le64(const unsigned char *p)
{
	uint64_t x = 0;
	for (int k = 7; k >= 0; k--)
		x = x << 8 | p[k];
	return x;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A header gapbs could have written: 0 or 1, then m < 2^58 and 1 <= n <= 2^31. */
static int sg_header(const unsigned char *b, size_t len, uint64_t *m, uint64_t *n)
{
	if (len < SG_HDR || b[0] > 1)
		return 0;
	*m = le64(b + 1);
	*n = le64(b + 9);
	return *m < (UINT64_C(1) << 58) && *n >= 1 && *n <= (UINT64_C(1) << 31);
}

int kimport_sniff_sg(const unsigned char *b, size_t len, int whole)
{
	uint64_t m, n;
	if (!sg_header(b, len, &m, &n))
		return 0;
	/* the offsets in the window start at 0 and never decrease past m */
	size_t have = (len - SG_HDR) / 8;
	if (have > n + 1)
		have = (size_t)n + 1;
	if (!have)
		return !whole;
	uint64_t prev = le64(b + SG_HDR);
	if (prev)
		return 0;
	for (size_t k = 1; k < have; k++) {
		uint64_t x = le64(b + SG_HDR + 8 * k);
		if (x < prev || x > m)
			return 0;
		prev = x;
	}
	return 1;
}

/* One CSR half: offsets and neighbours checked; sums of pair hashes of
 * (source, target) into h[0] and of entries into cnt[0], split by
 * direction for an undirected graph (h[1], cnt[1]: entries with v < u). */
static int sg_half(imp *mi, const unsigned char *off, const unsigned char *nb, uint64_t n, uint64_t m, size_t esz,
		   int in, uint64_t h[2], uint64_t cnt[2], int push, int undirected)
{
	const char *name = mi->r.name;
	if (le64(off) != 0 || le64(off + 8 * n) != m) {
		kerror("'%s': gapbs serialized graph: the %s run from %llu to %llu, want 0 to %llu", name,
		       in ? "in-neighbour offsets" : "offsets", (unsigned long long)le64(off), (unsigned long long)le64(off + 8 * n),
		       (unsigned long long)m);
		return KEXIT_DATA;
	}
	uint64_t lo = 0;
	for (uint64_t u = 0; u < n; u++) {
		uint64_t hi = le64(off + 8 * (u + 1));
		if (hi < lo || hi > m) {
			kerror("'%s': gapbs serialized graph: offset %llu of vertex %llu is out of order", name,
			       (unsigned long long)hi, (unsigned long long)u + 1);
			return KEXIT_DATA;
		}
		for (uint64_t k = lo; k < hi; k++) {
			uint32_t v = le32(nb + esz * k);
			if (v >= n) {
				kerror("'%s': gapbs serialized graph: neighbour %lld of vertex %llu is not a vertex (0..%llu)",
				       name, (long long)(int32_t)v, (unsigned long long)u, (unsigned long long)n - 1);
				return KEXIT_DATA;
			}
			/* out-entries are edges u -> v, in-entries v -> u */
			uint64_t a = in ? v : u, b = in ? u : v;
			if (undirected && a > b) {
				h[1] += kimport_pair_hash(b, a);
				cnt[1]++;
				continue;
			}
			if (a != b || !undirected) {
				h[0] += kimport_pair_hash(a, b);
				cnt[0]++;
			}
			if (push) {
				mi->res->selfloops += a == b;
				kimport_push_edge(mi, a, b);
			}
		}
		lo = hi;
	}
	return 0;
}

/* The input in memory up to most bytes past r->pos (or its end): the
 * buffer grows as the bytes arrive, never beyond them, nor beyond most. */
static int sg_read(reader *r, uint64_t most)
{
	while (!r->eof && r->len - r->pos < most) {
		if (r->len == r->cap) {
			size_t cap = kmul(r->cap, 2);
			if (cap - r->pos > most)
				cap = r->pos + (size_t)most;
			r->cap = cap;
			r->buf = krealloc(r->buf, r->cap + 1);
		}
		if (kimport_rd_fill(r))
			return r->err;
	}
	return 0;
}

int kimport_parse_sg(imp *mi)
{
	reader *r = &mi->r;
	int rc = sg_read(r, SG_HDR);
	if (rc)
		return rc;
	const unsigned char *b = (const unsigned char *)r->buf + r->pos;
	size_t len = r->len - r->pos;
	uint64_t m, n;
	if (!sg_header(b, len, &m, &n)) {
		kerror("'%s': not a gapbs serialized graph (want a 17-byte header: directed 0|1, entries, 1..2^31 "
		       "vertices)", r->name);
		return KEXIT_DATA;
	}
	int directed = b[0];
	uint64_t k = directed ? 2 : 1, idx = 8 * (n + 1);
	uint64_t want4 = SG_HDR + k * (idx + 4 * m), want8 = SG_HDR + k * (idx + 8 * m);
	/* the rest, up to the size of the header's graph as a .wsg and a byte
	 * more: data past it is not gapbs's, and is not read on */
	if ((rc = sg_read(r, want8 + 1)))
		return rc;
	b = (const unsigned char *)r->buf + r->pos;
	len = r->len - r->pos;
	if (len > want8) {
		kerror("'%s': gapbs serialized graph of %llu vertices and %llu entries%s: data after its %llu bytes "
		       "(.sg) or %llu (.wsg)",
		       r->name, (unsigned long long)n, (unsigned long long)m, directed ? " (directed)" : "",
		       (unsigned long long)want4, (unsigned long long)want8);
		return KEXIT_DATA;
	}
	size_t esz = len == want4 ? 4 : len == want8 ? 8 : 0;
	if (!esz) {
		kerror("'%s': gapbs serialized graph of %llu vertices and %llu entries%s should have %llu bytes "
		       "(.sg) or %llu (.wsg), not %zu",
		       r->name, (unsigned long long)n, (unsigned long long)m, directed ? " (directed)" : "",
		       (unsigned long long)want4, (unsigned long long)want8, len);
		return KEXIT_DATA;
	}
	const unsigned char *off = b + SG_HDR, *nb = off + idx;
	uint64_t h[2] = {0, 0}, c[2] = {0, 0};
	rc = sg_half(mi, off, nb, n, m, esz, 0, h, c, 1, !directed);
	if (rc)
		return rc;
	if (directed) {
		uint64_t hin[2] = {0, 0}, cin[2] = {0, 0};
		const unsigned char *ioff = nb + esz * m;
		if ((rc = sg_half(mi, ioff, ioff + idx, n, m, esz, 1, hin, cin, 0, 0)))
			return rc;
		if (hin[0] != h[0] || cin[0] != c[0]) {
			kerror("'%s': gapbs serialized graph: the in-neighbour lists are not the out-neighbour lists "
			       "transposed",
			       r->name);
			return KEXIT_DATA;
		}
	} else if (h[0] != h[1] || c[0] != c[1]) {
		kerror("'%s': gapbs serialized graph: undirected, but the neighbour lists are not symmetric "
		       "(%llu entries u < v, %llu entries u > v)",
		       r->name, (unsigned long long)c[0], (unsigned long long)c[1]);
		return KEXIT_DATA;
	}
	if (mi->ne == 0) {
		kerror("'%s': no edges", r->name);
		return KEXIT_DATA;
	}
	mi->res->nv = n;
	mi->res->ne = mi->ne;
	return 0;
}

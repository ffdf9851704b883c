#include "ksink.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ksink {
	int format;
	kedge_writer *ew;
	kio_out *out;
	const uint64_t *map;
	unsigned char *buf;
	size_t cap;
	/* sg: the tuples kept (u32 pairs) until the lists can be built */
	uint64_t nv;
	uint32_t *pairs;
	size_t npairs, pcap;
};

/* gapbs ids are int32 */
#define SG_MAX_VERTICES (UINT64_C(1) << 31)

/* The Matrix Market header: a symmetric pattern matrix of nv rows, ne
 * entries (one per tuple, the lower triangle). */
static int mtx_header(kio_out *out, const kedge_info *info)
{
	char head[256];
	int n = snprintf(head, sizeof head,
			 "%%%%MatrixMarket matrix coordinate pattern symmetric\n"
			 "%% an undirected graph written by kgen (kbfs): an entry per edge tuple, ids from 1\n"
			 "%llu %llu %llu\n",
			 (unsigned long long)info->nv, (unsigned long long)info->nv, (unsigned long long)info->ne);
	return kio_write(out, head, (size_t)n);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The gapbs serialized graph of the tuples kept: undirected (u8 0), m
 * entries (two per tuple u != v, one per self-loop), n = nv; offsets, then
 * each vertex's neighbours, sorted. */
static int sg_write(ksink *s)
{
	uint64_t n = s->nv, *off = kcalloc((size_t)n + 1, sizeof *off);
	for (size_t k = 0; k < s->npairs; k++) {
		uint32_t u = s->pairs[2 * k], v = s->pairs[2 * k + 1];
		off[u + 1]++;
		off[v + 1] += u != v;
	}
	for (uint64_t x = 0; x < n; x++)
		off[x + 1] += off[x];
	uint64_t m = off[n];
	uint32_t *nb = kmalloc(kmul((size_t)(m ? m : 1), sizeof *nb));
	uint64_t *at = kmalloc(kmul((size_t)n + 1, sizeof *at));
	memcpy(at, off, ((size_t)n + 1) * sizeof *at);
	for (size_t k = 0; k < s->npairs; k++) {
		uint32_t u = s->pairs[2 * k], v = s->pairs[2 * k + 1];
		nb[at[u]++] = v;
		if (u != v)
			nb[at[v]++] = u;
	}
	free(at);
	for (uint64_t x = 0; x < n; x++)
		qsort(nb + off[x], (size_t)(off[x + 1] - off[x]), sizeof *nb, cmp_u32);
	unsigned char head[17];
	head[0] = 0;
	kio_put64(head + 1, m);
	kio_put64(head + 9, n);
	int rc = kio_write(s->out, head, sizeof head);
	const size_t piece = 1 << 16;
	unsigned char *b = kmalloc(8 * piece);
	for (uint64_t x = 0; !rc && x <= n; x += piece) {
		size_t k = n + 1 - x < piece ? (size_t)(n + 1 - x) : piece;
		for (size_t q = 0; q < k; q++)
			kio_put64(b + 8 * q, off[x + q]);
		rc = kio_write(s->out, b, 8 * k);
	}
	for (uint64_t x = 0; !rc && x < m; x += piece) {
		size_t k = m - x < piece ? (size_t)(m - x) : piece;
		for (size_t q = 0; q < k; q++)
			kio_put32(b + 4 * q, nb[x + q]);
		rc = kio_write(s->out, b, 4 * k);
	}
	free(b);
	free(nb);
	free(off);
	return rc;
}

int ksink_open(const char *path, int format, int force, int compress, const kedge_info *info,
	       const uint64_t *map, ksink **sp)
{
	ksink *s = kcalloc(1, sizeof *s);
	s->format = format;
	s->map = map;
	int rc;
	if (format == KFMT_KEDGE) {
		rc = kedge_create(path, force, info, map, compress, &s->ew);
	} else if (format == KFMT_SG && info->nv > SG_MAX_VERTICES) {
		kerror("%llu vertices: a gapbs serialized graph holds at most 2^31 (its ids are int32)",
		       (unsigned long long)info->nv);
		rc = KEXIT_USAGE;
	} else {
		s->out = kio_open_out(path, format != KFMT_TEXT && format != KFMT_MTX, force);
		rc = s->out ? 0 : KEXIT_IO;
		if (!rc && format == KFMT_MTX && (rc = mtx_header(s->out, info)))
			kio_abort(s->out);
		s->nv = info->nv;
	}
	if (rc) {
		free(s);
		return rc;
	}
	*sp = s;
	return 0;
}

int ksink_write(ksink *s, const uint64_t *uv, size_t n)
{
	if (s->format == KFMT_KEDGE)
		return kedge_write(s->ew, uv, n);
	if (s->format == KFMT_SG) {
		if (s->npairs + n > s->pcap) {
			s->pcap = s->npairs + n > 2 * s->pcap ? s->npairs + n : 2 * s->pcap;
			s->pairs = krealloc(s->pairs, kmul(s->pcap, 2 * sizeof *s->pairs));
		}
		for (size_t k = 0; k < 2 * n; k++) {
			KASSERT(uv[k] < s->nv);
			s->pairs[2 * s->npairs + k] = (uint32_t)uv[k];
		}
		s->npairs += n;
		return 0;
	}
	const size_t per = 1 << 16;
	if (!s->buf) {
		s->cap = per * 42;
		s->buf = kmalloc(s->cap);
	}
	while (n) {
		size_t k = n < per ? n : per, len;
		if (s->format == KFMT_TEXT)
			len = kfmt_text((char *)s->buf, uv, k, s->map);
		else if (s->format == KFMT_MTX)
			len = kfmt_mtx((char *)s->buf, uv, k);
		else if (s->format == KFMT_G500)
			len = kfmt_g500(s->buf, uv, k);
		else
			len = kfmt_g500v2(s->buf, uv, k);
		int rc = kio_write(s->out, s->buf, len);
		if (rc)
			return rc;
		uv += 2 * k;
		n -= k;
	}
	return 0;
}

int ksink_finish(ksink *s)
{
	int rc = s->format == KFMT_SG ? sg_write(s) : 0;
	if (rc)
		kio_abort(s->out);
	else
		rc = s->format == KFMT_KEDGE ? kedge_finish(s->ew) : kio_commit(s->out);
	free(s->pairs);
	free(s->buf);
	free(s);
	return rc;
}

void ksink_abandon(ksink *s)
{
	if (!s)
		return;
	if (s->format == KFMT_KEDGE)
		kedge_abandon(s->ew);
	else
		kio_abort(s->out);
	free(s->pairs);
	free(s->buf);
	free(s);
}

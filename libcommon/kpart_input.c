/*
 * kpart_input.c: the builder's input (kpart_build.c steps 2-4): the trailer
 * of a seekable edge file, dealing a stream out from rank 0, pass 1 (count
 * every key into its part's bucket) and pass 2 (read again in rounds,
 * exchange, drop each key into its bucket).
 */
#include "kpart.h"
#include "kpart_internal.h"
#include "kedge.h"
#include "kio.h"
#include "klog.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK = 1 << 18 };

/* n / f.d (fdiv: kpart_internal.h) */
static inline uint64_t fdiv_q(fdiv f, uint64_t n)
{
	uint64_t q = (uint64_t)(((unsigned __int128)n * f.m) >> 64);
	while (n - q * f.d >= f.d)
		q++;
	return q;
}

typedef struct ends {
	uint64_t lc, lr;
	uint32_t i, j;
} ends;

static inline ends split(const plan *pl, uint64_t x)
{
	uint64_t b = fdiv_q(pl->fnb, x), off = x - b * pl->g.nb;
	ends e = {.i = pl->vi[b], .j = pl->vj[b]};
	e.lc = (uint64_t)e.i * pl->g.nb + off;
	e.lr = (uint64_t)e.j * pl->g.nb + off;
	return e;
}

static int source_get(source *s, uint64_t off, size_t k, uint64_t *uv)
{
	if (s->r)
		return kedge_read_at(s->r, s->first + off, k, uv);
	const unsigned char *p = s->mem + off * 2 * (uint64_t)s->w;
	for (size_t e = 0; e < 2 * k; e++)
		uv[e] = s->w == 4 ? kio_get32(p + 4 * e) : kio_get64(p + 8 * e);
	return 0;
}

static void encode(const uint64_t *uv, size_t k, int w, unsigned char *b)
{
	for (size_t e = 0; e < 2 * k; e++)
		if (w == 4)
			kio_put32(b + 4 * e, (uint32_t)uv[e]);
		else
			kio_put64(b + 8 * e, uv[e]);
}

/* ---------------------------------------------------------------- passes */

/* Pass 1: bucket sizes of every key of the slice (and its CRC, self-loops). */
int kpart_pass1(const plan *pl, source *s, int idbytes, uint32_t *crc, uint64_t *hist, uint64_t *selfloops)
{
	int T = kpart_nthreads();
	size_t H = (size_t)pl->RC * pl->nbk;
	uint64_t *ht = kcalloc(kmul(H, (size_t)T), 8);
	uint64_t *uv = kmalloc((size_t)CHUNK * 16);
	unsigned char *enc = crc ? kmalloc((size_t)CHUNK * 2 * (size_t)idbytes) : NULL;
	uint64_t sl = 0, nbk = pl->nbk;
	int rc = 0, br = pl->br, rb = pl->rbits, C = pl->C;
	for (uint64_t off = 0; off < s->n && !rc; off += CHUNK) {
		size_t k = s->n - off < CHUNK ? (size_t)(s->n - off) : CHUNK;
		if ((rc = source_get(s, off, k, uv)))
			break;
		if (crc) {
			encode(uv, k, idbytes, enc);
			*crc = kio_crc32(*crc, enc, k * 2 * (size_t)idbytes);
		}
#pragma omp parallel reduction(+ : sl) if (k > 65536)
		{
			uint64_t *h = ht + (size_t)kpart_tid() * H;
#pragma omp for schedule(static)
			for (size_t e = 0; e < k; e++) {
				uint64_t u = uv[2 * e], v = uv[2 * e + 1];
				if (u == v) {
					sl++;
					continue;
				}
				ends a = split(pl, u), b = split(pl, v);
				h[((size_t)b.i * C + a.j) * nbk + ((a.lc << br | b.lr) >> rb)]++;
				h[((size_t)a.i * C + b.j) * nbk + ((b.lc << br | a.lr) >> rb)]++;
			}
		}
	}
	for (int t = 0; t < T; t++)
		for (size_t x = 0; x < H; x++)
			hist[x] += ht[(size_t)t * H + x];
	*selfloops = sl;
	free(ht);
	free(uv);
	free(enc);
	return rc;
}

/* Drop keys of part pt into their buckets; -1 when a bucket overflows. */
static int drop(const plan *pl, part *pt, const uint64_t *keys, size_t n)
{
	int rb = pl->rbits, bad = 0;
	uint64_t rmask = pl->rmask, *fill = pt->bfill, *end = pt->bstart + 1;
	if (kpart_nthreads() == 1 || n < 65536) {
		if (pl->res64) {
			uint64_t *res = pt->res;
			for (size_t e = 0; e < n; e++) {
				uint64_t b = keys[e] >> rb, pos = fill[b]++;
				bad |= pos >= end[b];
				res[pos < end[b] ? pos : 0] = keys[e] & rmask;
			}
		} else {
			uint32_t *res = pt->res;
			for (size_t e = 0; e < n; e++) {
				uint64_t b = keys[e] >> rb, pos = fill[b]++;
				bad |= pos >= end[b];
				res[pos < end[b] ? pos : 0] = (uint32_t)(keys[e] & rmask);
			}
		}
		return bad ? -1 : 0;
	}
#pragma omp parallel for schedule(static) reduction(| : bad)
	for (size_t e = 0; e < n; e++) {
		uint64_t key = keys[e], b = key >> rb, pos = __atomic_fetch_add(&fill[b], 1, __ATOMIC_RELAXED);
		if (pos >= end[b]) {
			bad = 1;
			continue;
		}
		if (pl->res64)
			((uint64_t *)pt->res)[pos] = key & rmask;
		else
			((uint32_t *)pt->res)[pos] = (uint32_t)(key & rmask);
	}
	return bad ? -1 : 0;
}

/* Pass 2: read the slice in rounds, exchange, drop.  parts[] are local. */
int kpart_pass2(const plan *pl, kcomm *comm, source *s, part *parts, uint64_t round, const char *input)
{
	uint64_t nmax = s->n;
	kcomm_allreduce_u64(comm, &nmax, 1, KCOMM_MAX);
	uint64_t nrounds = (nmax + round - 1) / round;
	int P = pl->P, RC = pl->RC, C = pl->C, br = pl->br, rc = 0, changed = 0;
	uint64_t *uv = kmalloc(kmul((size_t)round, 16));
	uint64_t *key = kmalloc(kmul((size_t)round, 16)), *sbuf = NULL, *rbuf = NULL;
	uint32_t *dest = kmalloc(kmul((size_t)round, 8));
	size_t *cnt = kcalloc((size_t)RC * 5, sizeof(size_t)), *sd = cnt + RC, *rcv = sd + RC, *rd = rcv + RC,
	       *pos = rd + RC, rcap = 0;
	if (P > 1)
		sbuf = kmalloc(kmul((size_t)round, 16));
	for (uint64_t r = 0; r < nrounds; r++) {
		uint64_t off = r * round;
		size_t k = off >= s->n ? 0 : (s->n - off < round ? (size_t)(s->n - off) : (size_t)round);
		if (k && !rc)
			rc = source_get(s, off, k, uv);
		if ((rc = kcomm_agree(comm, rc)))
			break;
		size_t n = 0;
		memset(cnt, 0, sizeof(size_t) * (size_t)RC);
		for (size_t e = 0; e < k; e++) {
			uint64_t u = uv[2 * e], v = uv[2 * e + 1];
			if (u == v)
				continue;
			ends a = split(pl, u), b = split(pl, v);
			uint32_t d1 = b.i * (uint32_t)C + a.j, d2 = a.i * (uint32_t)C + b.j;
			dest[n] = d1;
			key[n++] = a.lc << br | b.lr;
			dest[n] = d2;
			key[n++] = b.lc << br | a.lr;
			cnt[d1]++;
			cnt[d2]++;
		}
		if (P == 1) {
			/* every part is here: sort the keys by part, then drop */
			size_t acc = 0;
			for (int p = 0; p < RC; p++) {
				pos[p] = acc;
				acc += cnt[p];
			}
			if (RC == 1) {
				changed |= drop(pl, &parts[0], key, n);
				continue;
			}
			uint64_t *sorted = (uint64_t *)uv; /* uv is free now */
			for (size_t e = 0; e < n; e++)
				sorted[pos[dest[e]]++] = key[e];
			for (size_t p = 0, at = 0; p < (size_t)RC; p++) {
				changed |= drop(pl, &parts[p], sorted + at, cnt[p]);
				at += cnt[p];
			}
			continue;
		}
		/* keys for this rank are dropped at once, the rest exchanged */
		size_t acc = 0, self = cnt[pl->me];
		cnt[pl->me] = 0;
		for (int p = 0; p < P; p++) {
			sd[p] = acc * 8;
			pos[p] = acc;
			acc += cnt[p];
		}
		pos[pl->me] = acc;
		for (size_t e = 0; e < n; e++)
			sbuf[pos[dest[e]]++] = key[e];
		changed |= drop(pl, &parts[0], sbuf + acc, self);
		for (int p = 0; p < P; p++)
			cnt[p] *= 8;
		kcomm_alltoall(comm, cnt, sizeof(size_t), rcv);
		size_t tot = 0;
		for (int p = 0; p < P; p++) {
			rd[p] = tot;
			tot += rcv[p];
		}
		if (tot > rcap) {
			rcap = tot + tot / 8;
			rbuf = krealloc(rbuf, rcap);
		}
		kcomm_alltoallv(comm, sbuf, cnt, sd, rbuf, rcv, rd);
		changed |= drop(pl, &parts[0], rbuf, tot / 8);
	}
	for (int p = 0; p < (P == 1 ? RC : 1) && !rc; p++)
		for (uint64_t b = 0; b < pl->nbk; b++)
			changed |= parts[p].bfill[b] != parts[p].bstart[b + 1];
	if (!rc && changed) {
		kerror("'%s': the input changed while it was being read", input);
		rc = KEXIT_DATA;
	}
	free(uv);
	free(key);
	free(dest);
	free(cnt);
	free(sbuf);
	free(rbuf);
	return rc;
}

/* ----------------------------------------------------------------- input */

/* Rank 0, seekable file: the trailer (read at size-20) and the file size. */
int kpart_read_trailer(const char *input, const kedge_info *info, uint64_t *size, uint32_t *crc)
{
	kio_in *in = kio_open_in(input, 0);
	if (!in)
		return KEXIT_IO;
	uint64_t sz = kio_size(in), rec = 2 * (uint64_t)info->idbytes;
	uint64_t hdr = 44 + strlen(info->prov) + (info->flags & KEDGE_F_MAP ? 8 * info->nv + 4 : 0);
	uint64_t want = info->ne > (UINT64_C(1) << 58) ? UINT64_MAX : hdr + info->ne * rec + KPART_TRAILER_BYTES;
	unsigned char t[20];
	int rc = KEXIT_DATA;
	if (sz < want)
		kerror("'%s': truncated file (%llu bytes, %llu expected)", input, (unsigned long long)sz,
		       (unsigned long long)want);
	else if (sz > want)
		kerror("'%s': unexpected data after the trailer", input);
	else if ((rc = kio_pread(in, t, 20, sz - 20, "trailer")))
		;
	else if (memcmp(t, "KEND", 4) || kio_crc32(0, t, 16) != kio_get32(t + 16) || kio_get64(t + 4) != info->ne)
		kerror("'%s': corrupt trailer (file damaged or truncated)", input), rc = KEXIT_DATA;
	else
		*crc = kio_get32(t + 12), *size = sz;
	kio_close_in(in);
	return rc;
}

/* Stream input: rank 0 reads (kedge_read checks the CRC and the trailer)
 * and deals chunks round-robin; every rank keeps its chunks in s->mem. */
int kpart_deal(kcomm *comm, kedge_reader *r, int idbytes, source *s, uint32_t *crc)
{
	int P = kcomm_size(comm), me = kcomm_rank(comm), rc = 0;
	size_t rec = 2 * (size_t)idbytes, cap = 0;
	uint64_t hdr[2];
	s->w = idbytes;
	if (me == 0) {
		uint64_t *uv = kmalloc((size_t)CHUNK * 16);
		unsigned char *enc = kmalloc((size_t)CHUNK * rec);
		for (uint64_t c = 0;; c++) {
			size_t got = 0;
			if ((rc = kedge_read(r, uv, CHUNK, &got)) || !got)
				break;
			encode(uv, got, idbytes, enc);
			*crc = kio_crc32(*crc, enc, got * rec);
			int d = (int)(c % (uint64_t)P);
			if (d) {
				hdr[0] = got;
				hdr[1] = 0;
				kcomm_send(comm, hdr, sizeof hdr, d, 91);
				kcomm_send(comm, enc, got * rec, d, 92);
				continue;
			}
			if ((s->n + got) * rec > cap) {
				cap = (s->n + got) * rec * 2;
				s->mem = krealloc(s->mem, cap);
			}
			memcpy(s->mem + s->n * rec, enc, got * rec);
			s->n += got;
		}
		hdr[0] = 0;
		hdr[1] = (uint64_t)rc;
		for (int d = 1; d < P; d++)
			kcomm_send(comm, hdr, sizeof hdr, d, 91);
		free(uv);
		free(enc);
		return rc;
	}
	for (;;) {
		kcomm_recv(comm, hdr, sizeof hdr, 0, 91);
		if (!hdr[0])
			return (int)hdr[1];
		if ((s->n + hdr[0]) * rec > cap) {
			cap = (s->n + hdr[0]) * rec * 2;
			s->mem = krealloc(s->mem, cap);
		}
		kcomm_recv(comm, s->mem + s->n * rec, hdr[0] * rec, 0, 92);
		s->n += hdr[0];
	}
}

/*
 * kpart_build.c: building a partition (kpart(1)) on one process or on R*C.
 *
 * Every directed edge u->v becomes a key (local column << br | local row)
 * bound for "part" p = i*C + j (the rank of P(i,j)).  The steps:
 *  1. rank 0 checks the output, makes DIR.tmp.XXXXXX and opens the input;
 *  2. the source: a seekable raw edge file is read in slices (rank r reads
 *     tuples [r*M/P, (r+1)*M/P) with kedge_read_at, and the CRCs of the
 *     slices' bytes, combined, must equal the trailer's); any other input
 *     is read by rank 0 (kedge_read checks it) and dealt out in chunks;
 *  3. pass 1 counts every key into its part's bucket (the key's top bits):
 *     after a reduce-scatter every part knows its bucket sizes exactly;
 *  4. pass 2 reads the slice again in bounded rounds, exchanges the keys
 *     (kcomm_alltoallv) and drops each into its bucket as a residual (the
 *     key's low bits: 32-bit whenever they fit);
 *  5. buckets are radix-sorted and deduplicated, rows compacted in place:
 *     CSC; column counts before dedup, summed over the processor column,
 *     are tdeg; with --relabel degree the deduplicated counts are summed the
 *     same way, every owner orders its block, the permutations are gathered
 *     over the processor column and row and the CSC is remapped;
 *  6. the rank file is written, the CSR made on the way as the transpose
 *     of the CSC (kpart_write_rank); rank 0 writes the manifest and renames
 *     the directory into place (kpart_dir_commit).
 * One process with R*C > 1 plays every part itself.  Every rank agrees on
 * failure (kcomm_agree) before a step others depend on; the rank that saw
 * the problem prints the one line, rank 0 removes the temporary directory.
 */
#include "kpart.h"
#include "kedge.h"
#include "kio.h"
#include "klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _OPENMP
#include <omp.h>
static int nthreads(void) { return omp_get_max_threads(); }
static int tid(void) { return omp_get_thread_num(); }
#else
static int nthreads(void) { return 1; }
static int tid(void) { return 0; }
#endif

enum { CHUNK = 1 << 18, ROUND = 1 << 17, PATHMAX = 4096 };

/* n / d by multiplication (one correction step at most) */
typedef struct fdiv {
	uint64_t d, m;
} fdiv;
static inline uint64_t fdiv_q(fdiv f, uint64_t n)
{
	uint64_t q = (uint64_t)(((unsigned __int128)n * f.m) >> 64);
	while (n - q * f.d >= f.d)
		q++;
	return q;
}

static int bits_for(uint64_t n) /* bits to write 0 .. n-1 */
{
	return n <= 1 ? 0 : 64 - __builtin_clzll(n - 1);
}

typedef struct plan {
	kpart_grid g;
	int R, C, RC, P, me;
	fdiv fnb;
	uint32_t *vi, *vj;  /* vertex block -> grid (i, j) of its owner */
	int br, bc, rbits;  /* bits of a local row, column; residual */
	int res64, idx64, off64_all;
	uint64_t nbk, rmask, rowmask;
} plan;

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

/* One part being built (P(i,j)). */
typedef struct part {
	int p, i, j;
	uint64_t E;       /* keys received */
	uint64_t *bstart; /* nbk + 1 */
	uint64_t *bfill;
	void *res;        /* E residuals */
	uint64_t *pre;    /* ncols: column counts before dedup */
	kpart_block b;
} part;

/* The tuples this rank reads: a slice of a file or chunks held in memory. */
typedef struct source {
	kedge_reader *r;
	uint64_t first, n;
	unsigned char *mem;
	int w; /* id bytes */
} source;

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

/* ------------------------------------------------------------ radix sorts */

#define DEFINE_SORT(NAME, T)                                                                            \
	static void NAME(T *a, T *tmp, size_t n, int bits)                                              \
	{                                                                                               \
		if (n <= 48) {                                                                          \
			for (size_t k = 1; k < n; k++) {                                                \
				T x = a[k];                                                             \
				size_t m = k;                                                           \
				for (; m > 0 && a[m - 1] > x; m--)                                      \
					a[m] = a[m - 1];                                                \
				a[m] = x;                                                               \
			}                                                                               \
			return;                                                                         \
		}                                                                                       \
		int lg = bits_for(n), maxd = lg < 4 ? 4 : lg > 11 ? 11 : lg;                            \
		int passes = bits ? (bits + maxd - 1) / maxd : 1, db = (bits + passes - 1) / passes;   \
		size_t cnt[1 << 11];                                                                    \
		T *src = a, *dst = tmp, mask = (T)(((T)1 << db) - 1);                                   \
		for (int p = 0, sh = 0; p < passes && sh < bits; p++, sh += db) {                       \
			memset(cnt, 0, sizeof(size_t) << db);                                           \
			for (size_t k = 0; k < n; k++)                                                  \
				cnt[(src[k] >> sh) & mask]++;                                           \
			if (cnt[(src[0] >> sh) & mask] == n)                                            \
				continue;                                                               \
			size_t s = 0;                                                                   \
			for (size_t d = 0; d < ((size_t)1 << db); d++) {                                \
				size_t c = cnt[d];                                                      \
				cnt[d] = s;                                                             \
				s += c;                                                                 \
			}                                                                               \
			for (size_t k = 0; k < n; k++) {                                                \
				T x = src[k];                                                           \
				dst[cnt[(x >> sh) & mask]++] = x;                                       \
			}                                                                               \
			T *t = src;                                                                     \
			src = dst;                                                                      \
			dst = t;                                                                        \
		}                                                                                       \
		if (src != a)                                                                           \
			memcpy(a, src, n * sizeof(T));                                                  \
	}
DEFINE_SORT(sort32, uint32_t)
DEFINE_SORT(sort64, uint64_t)

/* ------------------------------------------------------------------ plan */

static int make_plan(plan *pl, uint64_t nv, uint64_t M, int R, int C, int P, int me, int wide)
{
	memset(pl, 0, sizeof *pl);
	if (kpart_grid_init(&pl->g, nv, R, C))
		return -1;
	pl->R = R;
	pl->C = C;
	pl->RC = R * C;
	pl->P = P;
	pl->me = me;
	pl->fnb = (fdiv){pl->g.nb, UINT64_MAX / pl->g.nb};
	pl->vi = kmalloc(kmul((size_t)pl->RC, 4));
	pl->vj = kmalloc(kmul((size_t)pl->RC, 4));
	for (int b = 0; b < pl->RC; b++) {
		pl->vi[b] = (uint32_t)(b % R);
		pl->vj[b] = (uint32_t)(b / R);
	}
	uint64_t ncols = pl->g.N / (uint64_t)C, nrows = pl->g.N / (uint64_t)R;
	pl->bc = bits_for(ncols);
	pl->br = bits_for(nrows);
	int bits = pl->bc + pl->br;
	if (bits > 64)
		return -2;
	pl->idx64 = wide || ncols > (UINT64_C(1) << 32) || nrows > (UINT64_C(1) << 32);
	pl->off64_all = wide;
	/* buckets of about 4096 keys, whole columns each, but at most 1024 of
	 * them, so that dropping keys into them stays kind to the TLB (measured:
	 * 2^16 buckets made pass 2 40% slower at scale 22); more only where
	 * 32-bit residuals need them */
	uint64_t per = 2 * M / (uint64_t)pl->RC / 4096;
	int cap = pl->bc < 20 ? pl->bc : 20, tb = bits_for(per + 1);
	if (tb > 10)
		tb = 10;
	if (tb > cap)
		tb = cap;
	if (tb < 1)
		tb = 1;
	if (!wide && bits - tb > 32 && bits - 32 <= cap)
		tb = bits - 32;
	pl->rbits = bits - tb;
	pl->res64 = wide || pl->rbits > 32;
	pl->nbk = UINT64_C(1) << tb;
	pl->rmask = pl->rbits == 64 ? UINT64_MAX : (UINT64_C(1) << pl->rbits) - 1;
	pl->rowmask = (UINT64_C(1) << pl->br) - 1;
	return 0;
}

static void plan_free(plan *pl)
{
	free(pl->vi);
	free(pl->vj);
}

/* ---------------------------------------------------------------- passes */

/* Pass 1: bucket sizes of every key of the slice (and its CRC, self-loops). */
static int pass1(const plan *pl, source *s, int idbytes, uint32_t *crc, uint64_t *hist, uint64_t *selfloops)
{
	int T = nthreads();
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
			uint64_t *h = ht + (size_t)tid() * H;
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
	if (nthreads() == 1 || n < 65536) {
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
static int pass2(const plan *pl, kcomm *comm, source *s, part *parts, uint64_t round, const char *input)
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

/* --------------------------------------------------------------- blocks */

/* Sort and deduplicate every bucket: the CSC of pt (colptr, rowidx, nnz). */
static void build_csc(const plan *pl, part *pt)
{
	uint64_t ncols = pl->g.N / (uint64_t)pl->C, nbk = pl->nbk, maxb = 0;
	kpart_block *b = &pt->b;
	b->colptr = kcalloc((size_t)ncols + 1, 8);
	pt->pre = kcalloc((size_t)ncols, 8);
	uint64_t *dcnt = kmalloc(kmul((size_t)nbk, 8));
	for (uint64_t k = 0; k < nbk; k++)
		if (pt->bstart[k + 1] - pt->bstart[k] > maxb)
			maxb = pt->bstart[k + 1] - pt->bstart[k];
	int br = pl->br, rb = pl->rbits, r64 = pl->res64;
	uint64_t rowmask = pl->rowmask, *cnt = b->colptr + 1, *pre = pt->pre;
#pragma omp parallel if (pt->E > 65536)
	{
		void *tmp = kmalloc(kmul((size_t)maxb, r64 ? 8 : 4));
#pragma omp for schedule(dynamic, 8)
		for (uint64_t k = 0; k < nbk; k++) {
			uint64_t s = pt->bstart[k], n = pt->bstart[k + 1] - s, out = s, prev = 0;
			if (r64)
				sort64((uint64_t *)pt->res + s, tmp, (size_t)n, rb);
			else
				sort32((uint32_t *)pt->res + s, tmp, (size_t)n, rb);
			for (uint64_t e = s; e < s + n; e++) {
				uint64_t x = r64 ? ((uint64_t *)pt->res)[e] : ((uint32_t *)pt->res)[e];
				uint64_t kk = k << rb | x, col = kk >> br;
				pre[col]++;
				if (e > s && x == prev)
					continue;
				prev = x;
				cnt[col]++;
				if (r64)
					((uint64_t *)pt->res)[out++] = kk & rowmask;
				else
					((uint32_t *)pt->res)[out++] = (uint32_t)(kk & rowmask);
			}
			dcnt[k] = out - s;
		}
		free(tmp);
	}
	size_t w = r64 ? 8 : 4, nnz = 0;
	char *res = pt->res;
	for (uint64_t k = 0; k < nbk; k++) {
		if (dcnt[k] && pt->bstart[k] != nnz)
			memmove(res + nnz * w, res + pt->bstart[k] * w, (size_t)dcnt[k] * w);
		nnz += dcnt[k];
	}
	if (r64 && !pl->idx64) {
		uint32_t *o = pt->res;
		for (size_t e = 0; e < nnz; e++)
			o[e] = (uint32_t)((uint64_t *)pt->res)[e];
		w = 4;
	}
	KASSERT(r64 || !pl->idx64);
	for (uint64_t c = 0; c < ncols; c++)
		b->colptr[c + 1] += b->colptr[c];
	b->rowidx = krealloc(pt->res, nnz * w);
	pt->res = NULL;
	b->nnz = nnz;
	b->ncols = ncols;
	b->nrows = pl->g.N / (uint64_t)pl->R;
	b->idx64 = pl->idx64;
	b->g = pl->g;
	b->i = pt->i;
	b->j = pt->j;
	free(dcnt);
	free(pt->bstart);
	free(pt->bfill);
	pt->bstart = pt->bfill = NULL;
}

static inline uint64_t getx(const void *a, int idx64, uint64_t k)
{
	return idx64 ? ((const uint64_t *)a)[k] : ((const uint32_t *)a)[k];
}
static inline void setx(void *a, int idx64, uint64_t k, uint64_t x)
{
	if (idx64)
		((uint64_t *)a)[k] = x;
	else
		((uint32_t *)a)[k] = (uint32_t)x;
}

/* Sort every column's rows (after a relabelling). */
static void sort_columns(kpart_block *b, int bits)
{
	uint64_t maxc = 0;
	for (uint64_t c = 0; c < b->ncols; c++)
		if (b->colptr[c + 1] - b->colptr[c] > maxc)
			maxc = b->colptr[c + 1] - b->colptr[c];
#pragma omp parallel
	{
		void *tmp = kmalloc(kmul((size_t)maxc, b->idx64 ? 8 : 4));
#pragma omp for schedule(dynamic, 256)
		for (uint64_t c = 0; c < b->ncols; c++) {
			uint64_t s = b->colptr[c], n = b->colptr[c + 1] - s;
			if (b->idx64)
				sort64((uint64_t *)b->rowidx + s, tmp, (size_t)n, bits);
			else
				sort32((uint32_t *)b->rowidx + s, tmp, (size_t)n, bits);
		}
		free(tmp);
	}
}

/* Rename columns and rows (old local index -> new) and re-sort. */
static void remap_csc(const plan *pl, kpart_block *b, const uint64_t *colperm, const uint64_t *rowperm)
{
	uint64_t *np = kcalloc((size_t)b->ncols + 1, 8);
	for (uint64_t c = 0; c < b->ncols; c++)
		np[colperm[c] + 1] = b->colptr[c + 1] - b->colptr[c];
	for (uint64_t c = 0; c < b->ncols; c++)
		np[c + 1] += np[c];
	void *nr = kmalloc(kmul((size_t)b->nnz, b->idx64 ? 8 : 4));
#pragma omp parallel for schedule(dynamic, 1024)
	for (uint64_t c = 0; c < b->ncols; c++) {
		uint64_t d = np[colperm[c]];
		for (uint64_t k = b->colptr[c]; k < b->colptr[c + 1]; k++)
			setx(nr, b->idx64, d++, rowperm[getx(b->rowidx, b->idx64, k)]);
	}
	free(b->colptr);
	free(b->rowidx);
	b->colptr = np;
	b->rowidx = nr;
	sort_columns(b, pl->br);
}

/* Owner's order of its block: degree descending, then id. newpos[old] = new. */
static void degree_order(const uint64_t *deg, uint64_t nb, uint64_t *newpos)
{
	uint64_t maxd = 0;
	for (uint64_t k = 0; k < nb; k++)
		maxd = deg[k] > maxd ? deg[k] : maxd;
	int db = bits_for(maxd + 1), kb = bits_for(nb);
	KASSERT(db + kb <= 64);
	uint64_t *key = kmalloc(kmul((size_t)nb, 16)), *tmp = key + nb;
	for (uint64_t k = 0; k < nb; k++)
		key[k] = (maxd - deg[k]) << kb | k;
	sort64(key, tmp, (size_t)nb, db + kb);
	uint64_t kmask = kb == 64 ? UINT64_MAX : (UINT64_C(1) << kb) - 1;
	for (uint64_t k = 0; k < nb; k++)
		newpos[key[k] & kmask] = k;
	free(key);
}

/* ---------------------------------------------------------------- output */

typedef struct result {
	uint64_t M, selfloops, nnz, size;
	uint32_t crc;
	int relabel, has_map;
	const kedge_info *info;
	const char *input;
} result;

static int write_manifest(const plan *pl, const result *res, const kpart_rankinfo *ri, const char *tmpdir,
			  const char *outdir)
{
	kpart_manifest m = {0};
	const kedge_info *info = res->info;
	kpart_manifest_add(&m, "format", "kpart");
	kpart_manifest_add(&m, "version", "%d.%d", KPART_MAJOR, KPART_MINOR);
	kpart_manifest_add(&m, "creator", "kpart (kbfs) %s", KBFS_VERSION);
	kpart_manifest_add(&m, "R", "%d", pl->R);
	kpart_manifest_add(&m, "C", "%d", pl->C);
	kpart_manifest_add(&m, "nv", "%llu", (unsigned long long)pl->g.nv);
	kpart_manifest_add(&m, "N", "%llu", (unsigned long long)pl->g.N);
	kpart_manifest_add(&m, "nb", "%llu", (unsigned long long)pl->g.nb);
	kpart_manifest_add(&m, "M", "%llu", (unsigned long long)res->M);
	kpart_manifest_add(&m, "selfloops", "%llu", (unsigned long long)res->selfloops);
	kpart_manifest_add(&m, "nnz", "%llu", (unsigned long long)res->nnz);
	kpart_manifest_add(&m, "relabel", "%s", res->relabel ? "degree" : "none");
	kpart_manifest_add(&m, "index_bits", "%d", pl->idx64 ? 64 : 32);
	kpart_manifest_add(&m, "scale", "%llu", (unsigned long long)kedge_prov_u64(info, "scale", 0));
	kpart_manifest_add(&m, "edgefactor", "%llu", (unsigned long long)kedge_prov_u64(info, "edgefactor", 0));
	kpart_manifest_add(&m, "seed1", "%llu", (unsigned long long)kedge_prov_u64(info, "seed1", 2));
	kpart_manifest_add(&m, "seed2", "%llu", (unsigned long long)kedge_prov_u64(info, "seed2", 3));
	kpart_manifest_add(&m, "source", "%s", res->input);
	kpart_manifest_add(&m, "source_bytes", "%llu", (unsigned long long)res->size);
	kpart_manifest_add(&m, "source_crc32", "%08x", (unsigned)res->crc);
	kpart_manifest_add(&m, "source_map", "%s", res->has_map ? "yes" : "no");
	static const char *const pk[] = {"program", "version", "kind", "argv", "g500_version", "source", NULL};
	for (int k = 0; pk[k]; k++) {
		const char *v = kedge_prov_get(info, pk[k]);
		char key[64];
		snprintf(key, sizeof key, "source_%s", !strcmp(pk[k], "source") ? "origin" : pk[k]);
		if (v)
			kpart_manifest_add(&m, key, "%s", v);
	}
	for (int r = 0; r < pl->RC; r++) {
		char key[64], file[64];
		kpart_rank_file(file, sizeof file, r);
#define KV(field, ...) (snprintf(key, sizeof key, "rank.%05d." field, r), kpart_manifest_add(&m, key, __VA_ARGS__))
		KV("file", "%s", file);
		KV("bytes", "%llu", (unsigned long long)ri[r].bytes);
		KV("crc32", "%08x", (unsigned)ri[r].crc);
		KV("nnz", "%llu", (unsigned long long)ri[r].nnz);
		KV("cols", "%llu", (unsigned long long)ri[r].cols);
		KV("rows", "%llu", (unsigned long long)ri[r].rows);
#undef KV
	}
	char path[PATHMAX], name[PATHMAX];
	snprintf(path, sizeof path, "%s/manifest", tmpdir);
	snprintf(name, sizeof name, "%s/manifest", outdir);
	int rc = kpart_manifest_write(&m, path, name, "kbfs partition of a graph's adjacency matrix; see kpart(5)", 1);
	kpart_manifest_free(&m);
	return rc;
}

static int write_build_info(const kpart_opts *o, const kpart_build_stats *st, const char *tmpdir,
			    const char *outdir)
{
	kpart_manifest m = {0};
	kpart_manifest_add(&m, "construction_time", "%.6f", st->t_total);
	kpart_manifest_add(&m, "read_time", "%.6f", st->t_read);
	kpart_manifest_add(&m, "build_time", "%.6f", st->t_build);
	kpart_manifest_add(&m, "processes", "%d", st->nprocs);
	kpart_manifest_add(&m, "threads", "%d", st->threads);
	kpart_manifest_add(&m, "host", "%s", kcomm_host());
	if (o->argv)
		kpart_manifest_add(&m, "command", "%s", o->argv);
	char path[PATHMAX], name[PATHMAX];
	snprintf(path, sizeof path, "%s/build-info", tmpdir);
	snprintf(name, sizeof name, "%s/build-info", outdir);
	int rc = kpart_manifest_write(&m, path, name,
				      "how this partition was built (outside the manifest's checksum: timings vary)", 0);
	kpart_manifest_free(&m);
	return rc;
}

/* ----------------------------------------------------------------- input */

/* Rank 0, seekable file: the trailer (read at size-20) and the file size. */
static int read_trailer(const char *input, const kedge_info *info, uint64_t *size, uint32_t *crc)
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
static int deal(kcomm *comm, kedge_reader *r, int idbytes, source *s, uint32_t *crc)
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

/* ------------------------------------------------------------- the build */

static uint64_t input_id(uint64_t x, const kpart_grid *g, const uint64_t *map)
{
	return x >= g->nv ? KPART_NO_VERTEX : map ? map[x] : x;
}

/* tdeg, orig and (with relabel) the remapped CSC of every local part. */
static void finish_parts(const plan *pl, kcomm *comm, part *parts, int nloc, int relabel, const uint64_t *map)
{
	uint64_t nb = pl->g.nb, N = pl->g.N;
	kcomm *colc = NULL, *rowc = NULL;
	uint64_t *gt = NULL, *gd = NULL, *gp = NULL, *tdeg = NULL, *newpos = NULL;
	if (pl->P > 1) {
		colc = kcomm_split(comm, parts[0].j, parts[0].i);
		rowc = kcomm_split(comm, parts[0].i, parts[0].j);
		tdeg = kmalloc(kmul((size_t)nb, 8));
		kcomm_reduce_scatter_u64(colc, parts[0].pre, tdeg, (size_t)nb, KCOMM_SUM);
	} else {
		gt = kcalloc((size_t)N, 8);
		for (int p = 0; p < nloc; p++)
			for (uint64_t c = 0, c0 = kpart_col_first(&pl->g, parts[p].j); c < parts[p].b.ncols; c++)
				gt[c0 + c] += parts[p].pre[c];
	}
	for (int p = 0; p < nloc; p++) {
		free(parts[p].pre);
		parts[p].pre = NULL;
	}
	if (relabel) {
		uint64_t ncols = parts[0].b.ncols, nrows = parts[0].b.nrows;
		uint64_t *colperm = kmalloc(kmul((size_t)ncols, 8)), *rowperm = kmalloc(kmul((size_t)nrows, 8));
		if (pl->P > 1) {
			uint64_t *dc = kmalloc(kmul((size_t)ncols, 8)), *deg = kmalloc(kmul((size_t)nb, 8));
			for (uint64_t c = 0; c < ncols; c++)
				dc[c] = parts[0].b.colptr[c + 1] - parts[0].b.colptr[c];
			kcomm_reduce_scatter_u64(colc, dc, deg, (size_t)nb, KCOMM_SUM);
			newpos = kmalloc(kmul((size_t)nb, 8));
			degree_order(deg, nb, newpos);
			kcomm_allgather(colc, newpos, (size_t)nb * 8, colperm);
			kcomm_allgather(rowc, newpos, (size_t)nb * 8, rowperm);
			free(dc);
			free(deg);
		} else {
			gd = kcalloc((size_t)N, 8);
			gp = kmalloc(kmul((size_t)N, 8));
			for (int p = 0; p < nloc; p++)
				for (uint64_t c = 0, c0 = kpart_col_first(&pl->g, parts[p].j); c < ncols; c++)
					gd[c0 + c] += parts[p].b.colptr[c + 1] - parts[p].b.colptr[c];
			for (uint64_t vb = 0; vb < (uint64_t)pl->RC; vb++)
				degree_order(gd + vb * nb, nb, gp + vb * nb);
			free(gd);
		}
		for (int p = 0; p < nloc; p++) {
			kpart_block *b = &parts[p].b;
			if (pl->P == 1) {
				for (uint64_t c = 0, c0 = kpart_col_first(&pl->g, b->j); c < ncols; c++)
					colperm[c] = gp[c0 + c];
				for (uint64_t r = 0; r < nrows; r++)
					rowperm[r] = gp[kpart_row_vertex(&pl->g, b->i, r)];
			}
			for (uint64_t c = 0; c < ncols; c++)
				colperm[c] += c / nb * nb;
			for (uint64_t r = 0; r < nrows; r++)
				rowperm[r] += r / nb * nb;
			remap_csc(pl, b, colperm, rowperm);
		}
		free(colperm);
		free(rowperm);
	}
	for (int p = 0; p < nloc; p++) {
		kpart_block *b = &parts[p].b;
		uint64_t first = kpart_owned_first(&pl->g, b->i, b->j);
		const uint64_t *t = tdeg ? tdeg : gt + first;
		const uint64_t *np = relabel ? (newpos ? newpos : gp + first) : NULL;
		b->tdeg = kmalloc(kmul((size_t)nb, 8));
		if (relabel || map)
			b->orig = kmalloc(kmul((size_t)nb, 8));
		for (uint64_t k = 0; k < nb; k++) {
			uint64_t d = np ? np[k] : k;
			b->tdeg[d] = t[k];
			if (b->orig)
				b->orig[d] = input_id(first + k, &pl->g, map);
		}
	}
	free(gt);
	free(gp);
	free(tdeg);
	free(newpos);
	kcomm_free(colc);
	kcomm_free(rowc);
}

/* Seconds since *since (then reset); printed by rank 0 with -v. */
static double lap(int me, const char *what, double *since)
{
	double now = ktime(), d = now - *since;
	*since = now;
	if (me == 0)
		kinfo("%-34s %8.3f s", what, d);
	return d;
}

static void cleanup_tmp(int me, const char *tmpdir)
{
	if (!*tmpdir)
		return;
	if (me == 0)
		kio_rmtree(tmpdir);
	kio_cleanup_remove(tmpdir);
}

int kpart_build(kcomm *comm, const kpart_opts *o, kpart_build_stats *st)
{
	double t0 = ktime(), tl = t0;
	int P = kcomm_size(comm), me = kcomm_rank(comm), rc = 0;
	memset(st, 0, sizeof *st);
	st->nprocs = P;
	st->threads = nthreads();
	if (o->R <= 0 || o->C <= 0 || (uint64_t)o->R * (uint64_t)o->C > KPART_MAX_PROCS) {
		if (me == 0)
			kerror("a %dx%d grid is not possible (1 to %u processors)", o->R, o->C, KPART_MAX_PROCS);
		return KEXIT_USAGE;
	}
	if (P > 1 && (uint64_t)P != (uint64_t)o->R * (uint64_t)o->C) {
		if (me == 0)
			kerror("a %dx%d grid needs %llu processes, not %d (or run it as one process)", o->R, o->C,
			       (unsigned long long)o->R * (unsigned long long)o->C, P);
		return KEXIT_USAGE;
	}
	char tmpdir[PATHMAX] = "", outdir[PATHMAX] = "";
	kedge_reader *r = NULL;
	kedge_info info = {0};
	uint64_t hdr[8] = {0}; /* rc, stream, nv, ne, idbytes, flags, size, crc */
	uint32_t crc = 0;
	plan pl = {0};
	if (me == 0) {
		snprintf(outdir, sizeof outdir, "%s", o->outdir);
		rc = kpart_dir_begin(outdir, o->force, tmpdir, sizeof tmpdir);
		if (!rc && !(rc = kedge_open(o->input, &r, &info)))
			info.prov = kstrdup(info.prov); /* r keeps (and frees) its own */
		if (!rc) {
			hdr[1] = !strcmp(o->input, "-") || !kedge_seekable(r);
			kpart_grid g;
			if (kpart_grid_init(&g, info.nv, o->R, o->C)) {
				kerror("a %dx%d grid has more blocks than the graph's %llu vertices", o->R, o->C,
				       (unsigned long long)info.nv);
				rc = KEXIT_USAGE;
			} else if (!hdr[1]) {
				rc = read_trailer(o->input, &info, &hdr[6], &crc);
				hdr[7] = crc;
			}
		}
		hdr[0] = (uint64_t)rc;
		hdr[2] = info.nv;
		hdr[3] = info.ne;
		hdr[4] = info.idbytes;
		hdr[5] = info.flags;
	}
	kcomm_bcast(comm, hdr, sizeof hdr, 0);
	kcomm_bcast(comm, outdir, sizeof outdir, 0);
	kcomm_bcast(comm, tmpdir, sizeof tmpdir, 0);
	if ((rc = (int)hdr[0])) {
		kedge_close(r);
		kedge_info_free(&info);
		cleanup_tmp(me, tmpdir);
		return rc;
	}
	int stream = (int)hdr[1], idbytes = (int)hdr[4], has_map = !!(hdr[5] & KEDGE_F_MAP);
	if (me != 0) {
		kio_cleanup_add(tmpdir);
		struct stat sst;
		if (stat(tmpdir, &sst)) {
			kerror("'%s' is not visible here (the output must be on a shared file system)", tmpdir);
			rc = KEXIT_IO;
		}
		if (!rc && !stream && !(rc = kedge_open(o->input, &r, &info))) {
			info.prov = kstrdup(info.prov);
			if (info.nv != hdr[2] || info.ne != hdr[3] || info.idbytes != hdr[4]) {
				kerror("'%s': the input changed while it was being read", o->input);
				rc = KEXIT_DATA;
			}
		}
	}
	uint64_t *map = NULL;
	source s = {0};
	part *parts = NULL;
	int nloc = 0;
	if ((rc = kcomm_agree(comm, rc)))
		goto out;
	if (has_map) {
		map = kmalloc(kmul((size_t)hdr[2], 8));
		if (r)
			memcpy(map, kedge_map(r), (size_t)hdr[2] * 8);
		if (stream)
			kcomm_bcast(comm, map, (size_t)hdr[2] * 8, 0);
	}
	int mp = make_plan(&pl, hdr[2], hdr[3], o->R, o->C, P, me, o->wide);
	if (mp) {
		if (me == 0)
			kerror("a graph of %llu vertices is too large for a %dx%d grid (local indices beyond 64 bits)",
			       (unsigned long long)hdr[2], o->R, o->C);
		rc = KEXIT_RESOURCE;
		goto out;
	}
	if (stream) {
		rc = kcomm_agree(comm, deal(comm, r, idbytes, &s, &crc));
	} else {
		s.r = r;
		s.first = (uint64_t)((unsigned __int128)hdr[3] * (unsigned)me / (unsigned)P);
		s.n = (uint64_t)((unsigned __int128)hdr[3] * (unsigned)(me + 1) / (unsigned)P) - s.first;
	}
	if (rc)
		goto out;
	/* pass 1 */
	nloc = P == 1 ? pl.RC : 1;
	size_t H = (size_t)pl.RC * pl.nbk;
	uint64_t *hist = kcalloc(H, 8), sl = 0;
	uint32_t scrc = 0;
	rc = kcomm_agree(comm, pass1(&pl, &s, idbytes, stream ? NULL : &scrc, hist, &sl));
	if (!rc && !stream) {
		uint64_t mine[2] = {scrc, s.n * 2 * (uint64_t)idbytes}, *all = kmalloc(16 * (size_t)P);
		kcomm_allgather(comm, mine, 16, all);
		uint32_t whole = 0;
		for (int q = 0; q < P; q++)
			whole = kio_crc32_combine(whole, (uint32_t)all[2 * q], all[2 * q + 1]);
		free(all);
		if (whole != (uint32_t)hdr[7]) {
			if (me == 0)
				kerror("'%s': edge data checksum mismatch (corrupt file)", o->input);
			rc = KEXIT_DATA;
		}
	}
	if (rc) {
		free(hist);
		goto out;
	}
	if (stream)
		kcomm_bcast(comm, &crc, sizeof crc, 0);
	kcomm_allreduce_u64(comm, &sl, 1, KCOMM_SUM);
	st->t_read = lap(me, "open, pass 1 (read, check, count)", &tl);
	/* bucket sizes, then pass 2 */
	parts = kcalloc((size_t)nloc, sizeof *parts);
	uint64_t *mine = hist;
	if (P > 1) {
		mine = kmalloc(kmul((size_t)pl.nbk, 8));
		kcomm_reduce_scatter_u64(comm, hist, mine, (size_t)pl.nbk, KCOMM_SUM);
	}
	for (int p = 0; p < nloc; p++) {
		part *pt = &parts[p];
		pt->p = P == 1 ? p : me;
		pt->i = pt->p / pl.C;
		pt->j = pt->p % pl.C;
		pt->bstart = kmalloc(kmul((size_t)pl.nbk + 1, 8));
		pt->bfill = kmalloc(kmul((size_t)pl.nbk, 8));
		const uint64_t *h = P > 1 ? mine : hist + (size_t)p * pl.nbk;
		pt->bstart[0] = 0;
		for (uint64_t k = 0; k < pl.nbk; k++)
			pt->bfill[k] = pt->bstart[k], pt->bstart[k + 1] = pt->bstart[k] + h[k];
		pt->E = pt->bstart[pl.nbk];
		pt->res = kmalloc(kmul((size_t)pt->E, pl.res64 ? 8 : 4));
	}
	if (mine != hist)
		free(mine);
	free(hist);
	rc = pass2(&pl, comm, &s, parts, o->round_tuples ? o->round_tuples : ROUND, o->input);
	if ((rc = kcomm_agree(comm, rc)))
		goto out;
	kedge_close(r);
	r = NULL;
	free(s.mem);
	s.mem = NULL;
	st->t_build += lap(me, "pass 2 (read, exchange, drop)", &tl);
	for (int p = 0; p < nloc; p++)
		build_csc(&pl, &parts[p]);
	st->t_build += lap(me, "sort, dedup: CSC", &tl);
	finish_parts(&pl, comm, parts, nloc, o->relabel, map);
	st->t_build += lap(me, o->relabel ? "tdeg, relabel" : "tdeg", &tl);
	/* the rank files (CSR made on the way, straight into them) */
	kpart_rankinfo *ri = kcalloc((size_t)pl.RC, sizeof *ri);
	double tcsr = 0;
	for (int p = 0; p < nloc && !rc; p++) {
		kpart_block *b = &parts[p].b;
		char file[64], path[PATHMAX], name[PATHMAX];
		kpart_rank_file(file, sizeof file, parts[p].p);
		snprintf(path, sizeof path, "%s/%s", tmpdir, file);
		snprintf(name, sizeof name, "%s/%s", outdir, file);
		b->relabel = o->relabel;
		rc = kpart_write_rank(path, name, b, pl.off64_all, &ri[parts[p].p]);
		tcsr += ri[parts[p].p].csr_seconds;
		kpart_block_free(b);
	}
	double twr = lap(-1, "", &tl);
	st->t_build += tcsr;
	if (!(rc = kcomm_agree(comm, rc)) && P > 1) {
		const kpart_rankinfo *x = &ri[me];
		uint64_t mine[5] = {x->bytes, x->crc, x->nnz, x->cols, x->rows}, *all = kmalloc(kmul((size_t)P, 40));
		kcomm_allgather(comm, mine, sizeof mine, all);
		for (int q = 0; q < P; q++)
			ri[q] = (kpart_rankinfo){.bytes = all[5 * q], .crc = (uint32_t)all[5 * q + 1], .nnz = all[5 * q + 2],
						 .cols = all[5 * q + 3], .rows = all[5 * q + 4]};
		free(all);
	}
	uint64_t nnz = 0;
	for (int q = 0; q < pl.RC; q++)
		nnz += ri[q].nnz;
	if (!rc && me == 0) {
		result res = {.M = hdr[3], .selfloops = sl, .nnz = nnz, .size = hdr[6], .crc = crc,
			      .relabel = o->relabel, .info = &info, .input = o->input, .has_map = has_map};
		rc = write_manifest(&pl, &res, ri, tmpdir, outdir);
		st->t_total = ktime() - t0;
		if (!rc)
			rc = write_build_info(o, st, tmpdir, outdir);
		if (!rc)
			rc = kpart_dir_commit(tmpdir, outdir);
	}
	free(ri);
	rc = kcomm_agree(comm, rc);
	if (me == 0)
		kinfo("%-34s %8.3f s (CSR %.3f s)", "CSR, rank files, manifest, rename", twr + lap(-1, "", &tl),
		      tcsr);
	st->nv = pl.g.nv;
	st->N = pl.g.N;
	st->M = hdr[3];
	st->selfloops = sl;
	st->nnz = nnz;
out:
	for (int p = 0; p < nloc && parts; p++) {
		free(parts[p].bstart);
		free(parts[p].bfill);
		free(parts[p].res);
		free(parts[p].pre);
		kpart_block_free(&parts[p].b);
	}
	free(parts);
	free(map);
	free(s.mem);
	kedge_close(r);
	kedge_info_free(&info);
	plan_free(&pl);
	if (rc)
		cleanup_tmp(me, tmpdir);
	else
		kio_cleanup_remove(tmpdir);
	st->t_total = ktime() - t0;
	st->t_write = st->t_total - st->t_read - st->t_build;
	if (me == 0 && !rc)
		kinfo("%-34s %8.3f s", "total", st->t_total);
	return rc;
}

/*
 * kpart_devbuild.c: kpart_build.c's steps 5 and 6 on a device (kpart
 * --engine cuda), through the primitives of kpart_dev.h.  Reading, the
 * exchange and the buckets (steps 2-4), tdeg and the degree order, and
 * writing stay on the host, shared with the CPU path; what the device
 * makes is what kpart_csc.c and kpart_transpose make, byte for byte:
 *
 *  CSC (kpart_dev_csc).  The buckets of a part, in pieces of whole
 *  buckets (so of whole columns) that fit the device: each piece's
 *  residuals are copied in, made keys again (expand), sorted, counted per
 *  column (the counts before dedup: tdeg's share; on one column per row
 *  instead, plan.rowdeg), deduplicated, counted
 *  per column again (colptr after a scan) and cut to their rows (rowidx),
 *  copied back in place of the residuals, as kpart_build_csc does.
 *  The memory is planned first: the largest piece, its sort's scratch and
 *  the column counts; when not even one bucket fits, an error names it.
 *  When the whole part was one piece, its deduplicated keys may stay on
 *  the device for the next step (no copy back in).
 *
 *  Relabel and row offsets (kpart_dev_finish).  The keys (kept, or made
 *  again from the host's CSC) renamed by the column and row permutations
 *  and sorted (the relabelled CSC), then swapped to row << bc | column
 *  and sorted, whose counts per row are the CSR's row offsets.  A rank
 *  file stores no column indices (kpart(5) format 2), so they are not
 *  brought back.  Where this does not fit the device the host does it
 *  (kpart_remap_csc, and the writer's kpart_row_offsets), with the same
 *  result.
 */
#include "kpart.h"
#include "kpart_dev.h"
#include "kpart_builder.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

static void *dalloc(kpart_devbuild *db, uint64_t bytes)
{
	return db->d->alloc(db->d, (size_t)(bytes ? bytes : 8));
}

static void dfree(kpart_devbuild *db, void **p)
{
	if (*p)
		db->d->release(db->d, *p);
	*p = NULL;
}

void kpart_devbuild_drop(kpart_devbuild *db)
{
	dfree(db, (void **)&db->keys);
	dfree(db, (void **)&db->tmp);
	dfree(db, &db->scratch);
	db->nkeys = 0;
	db->part = -1;
}

/* Scratch for sorts of n keys and scans of m offsets. */
static uint64_t scratch_for(kpart_devbuild *db, uint64_t n, uint64_t m)
{
	return db->d->scratch_bytes(db->d, n > m ? n : m);
}

/* Bytes of the pieces' buffers for n keys: keys, sort buffer, scratch
 * (which the scans of m offsets use too). */
static uint64_t piece_bytes(kpart_devbuild *db, uint64_t n, uint64_t m)
{
	return 16 * n + scratch_for(db, n, m);
}

/* The most keys a piece may hold in `room` bytes (binary search). */
static uint64_t piece_max(kpart_devbuild *db, uint64_t room, uint64_t E, uint64_t m)
{
	uint64_t lo = 0, hi = E;
	while (lo < hi) {
		uint64_t mid = hi - (hi - lo) / 2;
		if (piece_bytes(db, mid, m) <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void add_time(kpart_devbuild *db, double t0)
{
	db->seconds += ktime() - t0;
}

int kpart_dev_csc(const plan *pl, part *pt, kpart_devbuild *db, int keep)
{
	double t0 = ktime();
	kpart_device *d = db->d;
	uint64_t ncols = pl->g.N / (uint64_t)pl->C, nrows = pl->g.N / (uint64_t)pl->R, nbk = pl->nbk, E = pt->E;
	uint64_t maxb = 0, m = (ncols > nrows ? ncols : nrows) + 1; /* offsets scanned, here or in finish */
	int r64 = pl->res64, wr = r64 ? 8 : 4, w = pl->idx64 ? 8 : 4, bits = pl->bc + pl->br;
	KASSERT(r64 || !pl->idx64);
	for (uint64_t k = 0; k < nbk; k++)
		if (pt->bstart[k + 1] - pt->bstart[k] > maxb)
			maxb = pt->bstart[k + 1] - pt->bstart[k];
	/* the plan: column counts before and after dedup, the piece's bucket
	 * starts, then the pieces' buffers in what is left */
	/* row counts (plan.rowdeg), which then stand for the counts per column
	 * before dedup (tdeg) */
	uint64_t rcn = (uint64_t)((pl->rowdeg & 1) + (pl->rowdeg >> 1 & 1)) * nrows, npre = pl->rowdeg & 1 ? 0 : ncols;
	uint64_t fixed = 8 * npre + 8 * (ncols + 1) + 8 * (nbk + 1) + 8 * rcn, avail = d->avail(d);
	uint64_t room = avail > fixed ? avail - fixed : 0, nmax = piece_max(db, room, E, m);
	if ((nmax < maxb || avail < fixed) && db->fallback) { /* auto: the host builds this part */
		char a[32];
		kinfo("%s: %s free: block (%d,%d) is built on the host (--engine auto)", d->where(d),
		      kpart_human_bytes(a, sizeof a, avail), pt->i, pt->j);
		db->on_host++;
		return -1;
	}
	if (nmax < maxb || avail < fixed) {
		char a[32], b[32], c[32];
		kerror("%s: %s free for kpart, but the sort buffers of the largest bucket (%llu keys: %s) and "
		       "the column counts (%s) do not fit; use more ranks (a larger grid) or --engine cpu",
		       d->where(d), kpart_human_bytes(a, sizeof a, avail), (unsigned long long)maxb,
		       kpart_human_bytes(b, sizeof b, piece_bytes(db, maxb, m)), kpart_human_bytes(c, sizeof c, fixed));
		return KEXIT_RESOURCE;
	}
	uint64_t nbuf = nmax < E ? nmax : E; /* keys a buffer holds */
	if (nbuf < 1)
		nbuf = 1;
	uint64_t *pre = npre ? dalloc(db, 8 * npre) : NULL, *cnt = dalloc(db, 8 * (ncols + 1)), *bst = dalloc(db, 8 * (nbk + 1));
	uint64_t *A = dalloc(db, 8 * nbuf), *B = dalloc(db, 8 * nbuf);
	void *scr = dalloc(db, scratch_for(db, nbuf, m));
	uint64_t *rc = rcn ? dalloc(db, 8 * rcn) : NULL, *rtd = rc, *rdeg = rc;
	if (pl->rowdeg & 1 && pl->rowdeg & 2)
		rdeg = rc + nrows;
	if ((npre && !pre) || !cnt || !bst || !A || !B || !scr || (rcn && !rc)) {
		char a[32];
		kerror("%s: cannot allocate the %s planned for kpart's sort (the device's free memory changed?); "
		       "use --engine cpu", d->where(d), kpart_human_bytes(a, sizeof a, fixed + piece_bytes(db, nbuf, m)));
		void *all[7] = {pre, cnt, bst, A, B, scr, rc};
		for (int k = 0; k < 7; k++)
			dfree(db, &all[k]);
		return KEXIT_RESOURCE;
	}
	if (pre)
		d->clear(d, pre, 8 * npre);
	d->clear(d, cnt, 8 * (ncols + 1));
	if (rc)
		d->clear(d, rc, 8 * rcn);
	char *res = pt->res;
	uint64_t nnz = 0, pieces = 0, *last = NULL, lastn = 0;
	for (uint64_t k0 = 0, k1; k0 < nbk; k0 = k1) {
		for (k1 = k0 + 1; k1 < nbk && pt->bstart[k1 + 1] - pt->bstart[k0] <= nbuf; k1++)
			;
		uint64_t s = pt->bstart[k0], n = pt->bstart[k1] - s;
		if (!n)
			continue;
		pieces++;
		d->put(d, B, res + s * (uint64_t)wr, (size_t)(n * (uint64_t)wr));
		d->put(d, bst, pt->bstart + k0, (size_t)(k1 - k0 + 1) * 8);
		d->expand(d, B, wr, bst, k1 - k0, k0, pl->rbits, n, A);
		uint64_t *sorted = d->sort(d, A, B, n, bits, scr), *other = sorted == A ? B : A;
		if (pre)
			d->count_sorted(d, sorted, n, pl->br, pre);
		else
			d->count_low(d, sorted, n, pl->rowmask, rtd);
		uint64_t u = d->unique(d, sorted, other, n, scr);
		d->count_sorted(d, other, u, pl->br, cnt + 1);
		if (pl->rowdeg & 2)
			d->count_low(d, other, u, pl->rowmask, rdeg);
		d->low(d, other, u, pl->rowmask, sorted, w);
		/* in place of the residuals: nnz*w <= s*wr, so nothing unread is overwritten */
		d->get(d, res + nnz * (uint64_t)w, sorted, (size_t)(u * (uint64_t)w));
		nnz += u;
		last = other;
		lastn = u;
	}
	kpart_block *b = &pt->b;
	d->scan(d, cnt, ncols + 1, scr);
	b->colptr = kmalloc(kmul((size_t)ncols + 1, 8));
	d->get(d, b->colptr, cnt, (size_t)(ncols + 1) * 8);
	if (pre) {
		pt->pre = kmalloc(kmul((size_t)ncols, 8));
		d->get(d, pt->pre, pre, (size_t)ncols * 8);
	}
	if (pl->rowdeg & 1) {
		pt->rtd = kmalloc(kmul((size_t)nrows, 8));
		d->get(d, pt->rtd, rtd, (size_t)nrows * 8);
	}
	if (pl->rowdeg & 2) {
		pt->rdeg = kmalloc(kmul((size_t)nrows, 8));
		d->get(d, pt->rdeg, rdeg, (size_t)nrows * 8);
	}
	dfree(db, (void **)&rc);
	dfree(db, (void **)&pre);
	dfree(db, (void **)&cnt);
	dfree(db, (void **)&bst);
	kpart_devbuild_drop(db);
	if (keep && pieces <= 1 && nnz == lastn) { /* one piece: its keys stay for kpart_dev_finish */
		db->keys = last ? last : A;
		db->tmp = db->keys == A ? B : A;
		db->scratch = scr;
		db->cap = nbuf;
		db->nkeys = nnz;
		db->part = pt->p;
	} else {
		dfree(db, (void **)&A);
		dfree(db, (void **)&B);
		dfree(db, &scr);
	}
	kpart_csc_done(pl, pt, nnz);
	db->pieces += pieces;
	add_time(db, t0);
	return 0;
}

/* offsets[0..n] (host) from the sorted keys' counts of key >> shift */
static void offsets(kpart_devbuild *db, const uint64_t *keys, uint64_t nnz, int shift, uint64_t *cnt, uint64_t n,
		    uint64_t *host)
{
	kpart_device *d = db->d;
	d->clear(d, cnt, (size_t)(n + 1) * 8);
	d->count_sorted(d, keys, nnz, shift, cnt + 1);
	d->scan(d, cnt, n + 1, db->scratch);
	d->get(d, host, cnt, (size_t)(n + 1) * 8);
}

int kpart_dev_finish(const plan *pl, part *pt, kpart_devbuild *db, const uint64_t *colperm, const uint64_t *rowperm)
{
	double t0 = ktime();
	kpart_device *d = db->d;
	kpart_block *b = &pt->b;
	uint64_t nnz = b->nnz, ncols = b->ncols, nrows = b->nrows, big = ncols > nrows ? ncols : nrows;
	int w = b->idx64 ? 8 : 4, bits = pl->bc + pl->br;
	uint64_t need = 8 * (big + 1) + (colperm ? 8 * (ncols + nrows) : 0);
	int kept = db->part == pt->p && db->keys && db->nkeys == nnz;
	if (!kept) {
		kpart_devbuild_drop(db);
		uint64_t n = nnz ? nnz : 1;
		need += piece_bytes(db, n, big + 1);
		if (need > d->avail(d))
			return -1; /* the host does it */
		db->keys = dalloc(db, 8 * n);
		db->tmp = dalloc(db, 8 * n);
		db->scratch = dalloc(db, scratch_for(db, n, big + 1));
		db->cap = n;
	} else if (need > d->avail(d)) {
		kpart_devbuild_drop(db);
		return -1;
	}
	uint64_t *cnt = dalloc(db, 8 * (big + 1));
	uint64_t *cp = colperm ? dalloc(db, 8 * ncols) : NULL, *rp = colperm ? dalloc(db, 8 * nrows) : NULL;
	if (!db->keys || !db->tmp || !db->scratch || !cnt || (colperm && (!cp || !rp))) {
		dfree(db, (void **)&cnt);
		dfree(db, (void **)&cp);
		dfree(db, (void **)&rp);
		kpart_devbuild_drop(db);
		return -1;
	}
	uint64_t *keys = db->keys, *tmp = db->tmp;
	if (!kept) { /* the keys again, from the host's CSC */
		d->put(d, tmp, b->rowidx, (size_t)nnz * (size_t)w);
		d->put(d, cnt, b->colptr, (size_t)(ncols + 1) * 8);
		d->expand(d, tmp, w, cnt, ncols, 0, pl->br, nnz, keys);
	}
	if (colperm) {
		d->put(d, cp, colperm, (size_t)ncols * 8);
		d->put(d, rp, rowperm, (size_t)nrows * 8);
		d->remap(d, keys, nnz, pl->br, cp, rp);
		uint64_t *s = d->sort(d, keys, tmp, nnz, bits, db->scratch);
		tmp = s == keys ? tmp : keys;
		keys = s;
		offsets(db, keys, nnz, pl->br, cnt, ncols, b->colptr);
		d->low(d, keys, nnz, pl->rowmask, tmp, w);
		d->get(d, b->rowidx, tmp, (size_t)nnz * (size_t)w);
	}
	d->swap(d, keys, nnz, pl->br, pl->bc);
	keys = d->sort(d, keys, tmp, nnz, bits, db->scratch);
	b->rowptr = kmalloc(kmul((size_t)nrows + 1, 8));
	offsets(db, keys, nnz, pl->bc, cnt, nrows, b->rowptr);
	dfree(db, (void **)&cnt);
	dfree(db, (void **)&cp);
	dfree(db, (void **)&rp);
	kpart_devbuild_drop(db);
	db->finished++;
	add_time(db, t0);
	return 0;
}

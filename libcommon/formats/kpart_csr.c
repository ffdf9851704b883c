/*
 * kpart_csr.c: the CSR of a partition's block, which a rank file holds only
 * as its row offsets: the row offsets counted from the CSC
 * (kpart_row_offsets, for the writer) and the column indices as the CSC's
 * transpose (kpart_transpose), which every reader makes and checks against
 * the stored row offsets (kpart_block_csr).  All threads; the same array
 * whatever their number.  A 1x1 block is symmetric (every edge stored both
 * ways, rows and columns the same vertices): its CSR is its CSC, so
 * kpart_block_csr only checks that and points colidx at rowidx.
 */
#include "kpart.h"
#include "kpart_internal.h"
#include "kio.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

/* The first k in [lo, hi) with a[k] >= want (a ascending there), else hi. */
static uint64_t first_at_least(const uint64_t *a, uint64_t lo, uint64_t hi, uint64_t want)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (a[mid] < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t kpart_span_end(const uint64_t *off, uint64_t a, uint64_t hi, uint64_t n)
{
	uint64_t lo = a + 1;
	while (lo < hi) {
		uint64_t mid = hi - (hi - lo) / 2;
		if (off[mid] - off[a] <= n)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * 32-bit indices where (row in a partition, col) does not fit in 32 bits
 * (large blocks): the columns in batches of at most K entries; each batch's
 * entries are dealt to ~1024 row partitions in a buffer as row << 32 | col
 * (thread t's after thread t-1's: column order), then every partition is
 * taken by one thread, which counts its rows (first round: rp) or places
 * its entries at their rows' cursors (second round).  Batches come in
 * column order, so every row gets its columns ascending, as from one thread.
 * known: rp already holds where every row starts (a rank file's rowptr:
 * kpart_block_csr), so the first round is skipped; a cursor past nnz is
 * then never written through (rowptr disagreeing with the CSC shows in rp
 * after the call).
 */
static void transpose_batched(const kpart_block *b, uint64_t *rp, uint32_t *ci, int known)
{
	const uint32_t *ri = b->rowidx;
	const uint64_t *cp = b->colptr;
	uint64_t nr = b->nrows, nc = b->ncols, nnz = b->nnz, maxc = 0;
	int br = kpart_bits_for(nr), s = br > 10 ? br - 10 : 0;
	uint64_t np = nr ? ((nr - 1) >> s) + 1 : 0, T = (uint64_t)kpart_nthreads();
#pragma omp parallel for schedule(static) reduction(max : maxc)
	for (uint64_t c = 0; c < nc; c++)
		maxc = cp[c + 1] - cp[c] > maxc ? cp[c + 1] - cp[c] : maxc;
	uint64_t K = nnz / 32 < (1u << 20) ? (1u << 20) : nnz / 32;
	K = K > nnz ? nnz : K;
	K = K < maxc ? maxc : K;
	uint64_t *tmp = kmalloc(kmul((size_t)K, 8)), *cnt = kmalloc(kmul((size_t)T, (size_t)np * 8));
	uint64_t *ps = kmalloc(kmul((size_t)np + 1, 8)), *cb = kmalloc(kmul((size_t)T + 1, 8));
	if (!known) {
#pragma omp parallel for schedule(static)
		for (uint64_t r = 0; r <= nr; r++)
			rp[r] = 0;
	}
	for (int round = known ? 1 : 0; round < 2; round++) {
		if (round == 1 && !known)
			kpart_prefix_sum(rp, (size_t)nr + 1); /* rp[r]: where row r starts (its cursor) */
		for (uint64_t c0 = 0, c1; c0 < nc; c0 = c1) {
			c1 = kpart_span_end(cp, c0, nc, K); /* the last column end within K entries */
			uint64_t e0 = cp[c0], n = cp[c1] - e0;
			for (uint64_t t = 0; t <= T; t++) { /* thread t: about n / T entries */
				cb[t] = t == T ? c1 : first_at_least(cp, c0, c1, e0 + n / T * t);
			}
#pragma omp parallel
			{
#pragma omp for schedule(static)
				for (uint64_t t = 0; t < T; t++) {
					uint64_t *my = cnt + t * np;
					memset(my, 0, (size_t)np * 8);
					for (uint64_t k = cp[cb[t]], z = cp[cb[t + 1]]; k < z; k++)
						my[ri[k] >> s]++;
				}
#pragma omp single
				{
					uint64_t at = 0;
					for (uint64_t p = 0; p < np; p++) {
						ps[p] = at;
						for (uint64_t t = 0; t < T; t++) {
							uint64_t c = cnt[t * np + p];
							cnt[t * np + p] = at;
							at += c;
						}
					}
					ps[np] = at;
				}
#pragma omp for schedule(static)
				for (uint64_t t = 0; t < T; t++) {
					uint64_t *my = cnt + t * np;
					if (round == 0) /* the rows are enough */
						for (uint64_t k = cp[cb[t]], z = cp[cb[t + 1]]; k < z; k++)
							((uint32_t *)tmp)[my[ri[k] >> s]++] = ri[k];
					else
						for (uint64_t c = cb[t]; c < cb[t + 1]; c++)
							for (uint64_t k = cp[c], z = cp[c + 1]; k < z; k++)
								tmp[my[ri[k] >> s]++] = (uint64_t)ri[k] << 32 | c;
				}
#pragma omp for schedule(dynamic, 1)
				for (uint64_t p = 0; p < np; p++) {
					if (round == 0)
						for (uint64_t e = ps[p]; e < ps[p + 1]; e++)
							rp[((uint32_t *)tmp)[e] + 1]++;
					else
						for (uint64_t e = ps[p], at; e < ps[p + 1]; e++)
							if ((at = rp[tmp[e] >> 32]++) < nnz)
								ci[at] = (uint32_t)tmp[e];
				}
			}
		}
	}
	/* rp[r] is where row r ends: shift by one, piece t of [1, nr] keeping
	 * the value before its first (its neighbour's last) before any moves */
#pragma omp parallel
	{
#pragma omp for schedule(static)
		for (uint64_t t = 0; t < T; t++)
			cb[t] = rp[nr * t / T];
#pragma omp for schedule(static)
		for (uint64_t t = 0; t < T; t++) {
			uint64_t a = 1 + nr * t / T, z = 1 + nr * (t + 1) / T;
			if (a == z)
				continue;
			for (uint64_t r = z - 1; r > a; r--)
				rp[r] = rp[r - 1];
			rp[a] = cb[t];
		}
	}
	rp[0] = 0;
	free(tmp);
	free(cnt);
	free(ps);
	free(cb);
}

/* a[k] += a[k-1] for k = 1 .. n-1: in pieces, then each piece shifted by
 * the sum of the pieces before it (two passes: worth it from 4 threads) */
void kpart_prefix_sum(uint64_t *a, size_t n)
{
	size_t T = n > ((size_t)1 << 20) && kpart_nthreads() >= 4 ? (size_t)kpart_nthreads() : 1;
	uint64_t *sum = kcalloc(T + 1, 8);
#pragma omp parallel for schedule(static) if (T > 1)
	for (size_t t = 0; t < T; t++) {
		size_t k = n * t / T, z = n * (t + 1) / T;
		for (k++; k < z; k++)
			a[k] += a[k - 1];
		sum[t + 1] = z > n * t / T ? a[z - 1] : 0;
	}
	for (size_t t = 1; t <= T; t++)
		sum[t] += sum[t - 1];
#pragma omp parallel for schedule(static) if (T > 1)
	for (size_t t = 1; t < T; t++)
		for (size_t k = n * t / T, z = n * (t + 1) / T; k < z; k++)
			a[k] += sum[t];
	free(sum);
}

/* rp[r]: where row r of b's CSC starts in its transpose (rp[nrows] = nnz),
 * counted on all threads */
void kpart_row_offsets(const kpart_block *b, uint64_t *rp)
{
	uint64_t nr = b->nrows, nnz = b->nnz;
#pragma omp parallel for schedule(static) if (nr > 65536)
	for (uint64_t r = 0; r <= nr; r++)
		rp[r] = 0;
	if (b->idx64) {
		const uint64_t *ri = b->rowidx;
#pragma omp parallel for schedule(static) if (nnz > 65536)
		for (uint64_t k = 0; k < nnz; k++)
			__atomic_fetch_add(&rp[ri[k] + 1], 1, __ATOMIC_RELAXED);
	} else {
		const uint32_t *ri = b->rowidx;
#pragma omp parallel for schedule(static) if (nnz > 65536)
		for (uint64_t k = 0; k < nnz; k++)
			__atomic_fetch_add(&rp[(uint64_t)ri[k] + 1], 1, __ATOMIC_RELAXED);
	}
	kpart_prefix_sum(rp, (size_t)nr + 1);
}

/* 64-bit indices: thread t takes the rows [r0, r1) that hold about nnz/T
 * entries and walks every column in order, placing the entries of its rows
 * (found by binary search in the column's sorted rows) at their rows'
 * cursors: columns ascending within every row, whatever T. */
static void transpose_rows(const kpart_block *b, uint64_t *rp, uint64_t *ci)
{
	const uint64_t *ri = b->rowidx, *cp = b->colptr;
	uint64_t nr = b->nrows, nc = b->ncols, nnz = b->nnz;
	kpart_row_offsets(b, rp);
	int T = nnz > 65536 ? kpart_nthreads() : 1;
	uint64_t *cur = kmalloc(kmul((size_t)nr + 1, 8));
	memcpy(cur, rp, (size_t)(nr + 1) * 8);
#pragma omp parallel num_threads(T)
	{
		int t = kpart_tid(), n = T;
#ifdef _OPENMP
		n = omp_get_num_threads();
#endif
		/* rows [r0, r1): from the first row starting at or after t nnz / n */
		uint64_t r0 = first_at_least(rp, 0, nr, nnz / (uint64_t)n * (uint64_t)t);
		uint64_t r1 = t + 1 == n ? nr : first_at_least(rp, 0, nr, nnz / (uint64_t)n * (uint64_t)(t + 1));
		for (uint64_t c = 0; c < nc && r0 < r1; c++)
			for (uint64_t k = first_at_least(ri, cp[c], cp[c + 1], r0); k < cp[c + 1] && ri[k] < r1; k++)
				ci[cur[ri[k]]++] = c;
	}
	/* every row full, unless a column's rows were not sorted (a corrupt
	 * CSC): then rp[0] = 1 says so (kpart_block_csr refuses it) */
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (nr > 65536)
	for (uint64_t r = 0; r < nr; r++)
		bad |= cur[r] != rp[r + 1];
	if (bad)
		rp[0] = 1;
	free(cur);
}

/*
 * The CSR of b as the transpose of its CSC; rows come out sorted.  With
 * 32-bit indices the entries go first to partitions of 2^s rows (in place,
 * in colidx: (row - first row of the partition) << bc | col), then each
 * partition, small enough for the cache, is counting-sorted by row (stable,
 * so columns stay ascending); where that does not fit, transpose_batched.
 * 64-bit indices: one scatter.
 */
static void transpose(const kpart_block *b, uint64_t *rp, void *colidx, int known)
{
	uint64_t nr = b->nrows, nc = b->ncols;
	int bc = kpart_bits_for(nc), br = kpart_bits_for(nr), s = br - 10;
	if (s < 6)
		s = 6;
	if (s > 32 - bc)
		s = 32 - bc;
	uint64_t np = s < 0 ? 0 : ((nr - 1) >> s) + 1;
	/* test hook (test_kpart): the batched path on small blocks */
	const char *hook = getenv("KPART_TEST_TRANSPOSE_BATCHED");
	if (!b->idx64 && (s < 0 || np > (1u << 16) || (hook && !strcmp(hook, "1")))) {
		transpose_batched(b, rp, colidx, known);
		return;
	}
	if (b->idx64) {
		transpose_rows(b, rp, colidx);
		return;
	}
	const uint32_t *ri = b->rowidx;
	uint32_t *ci = colidx, smask = (UINT32_C(1) << s) - 1;
	uint64_t *ps = kcalloc((size_t)np + 1, 8), maxp = 0;
	/* Pass 1 in parallel: thread t takes the columns [cb[t], cb[t+1]) that
	 * hold about nnz/nt entries, counts them per partition, then scatters
	 * them from its own offsets.  Thread t's entries of a partition follow
	 * thread t-1's, so every partition holds its entries in column order,
	 * exactly as one thread would write them. */
	int nt = b->nnz > 65536 ? kpart_nthreads() : 1;
	uint64_t *cb = kmalloc(kmul((size_t)nt + 1, 8));
	uint64_t *pos = kcalloc(kmul((size_t)nt, (size_t)np), 8);
	for (int t = 0; t <= nt; t++) /* the first column starting at or after t nnz / nt */
		cb[t] = t == nt ? nc : first_at_least(b->colptr, 0, nc, b->nnz / (uint64_t)nt * (uint64_t)t);
#pragma omp parallel num_threads(nt)
	{
		int t = kpart_tid();
		uint64_t *my = pos + (size_t)t * np;
		for (uint64_t k = b->colptr[cb[t]], e = b->colptr[cb[t + 1]]; k < e; k++)
			my[ri[k] >> s]++;
#pragma omp barrier
#pragma omp single
		{
			uint64_t at = 0;
			for (uint64_t p = 0; p < np; p++) {
				ps[p] = at;
				for (int u = 0; u < nt; u++) {
					uint64_t c = pos[(size_t)u * np + p];
					pos[(size_t)u * np + p] = at;
					at += c;
				}
				maxp = at - ps[p] > maxp ? at - ps[p] : maxp;
			}
			ps[np] = at;
		}
		for (uint64_t c = cb[t]; c < cb[t + 1]; c++)
			for (uint64_t k = b->colptr[c], e = b->colptr[c + 1]; k < e; k++) {
				uint32_t r = ri[k];
				ci[my[r >> s]++] = (r & smask) << bc | (uint32_t)c;
			}
	}
	free(pos);
	free(cb);
	uint32_t cmask = bc == 32 ? UINT32_MAX : (UINT32_C(1) << bc) - 1;
#pragma omp parallel if (b->nnz > 65536)
	{
		uint32_t *tmp = kmalloc(kmul((size_t)maxp, 4));
		uint64_t *cur = kmalloc((size_t)8 << s);
#pragma omp for schedule(dynamic, 1)
		for (uint64_t p = 0; p < np; p++) {
			uint64_t r0 = p << s, r1 = (p + 1) << s < nr ? (p + 1) << s : nr, s0 = ps[p], n = ps[p + 1] - s0;
			memcpy(tmp, ci + s0, (size_t)n * 4);
			memset(cur, 0, (size_t)(r1 - r0) * 8);
			for (uint64_t e = 0; e < n; e++)
				cur[tmp[e] >> bc]++;
			for (uint64_t r = r0, at = s0; r < r1; r++) {
				uint64_t c = cur[r - r0];
				cur[r - r0] = at;
				rp[r] = at;
				at += c;
			}
			for (uint64_t e = 0; e < n; e++)
				ci[cur[tmp[e] >> bc]++] = tmp[e] & cmask;
		}
		free(tmp);
		free(cur);
	}
	rp[nr] = b->nnz;
	free(ps);
}

void kpart_transpose(const kpart_block *b, uint64_t *rp, void *colidx) { transpose(b, rp, colidx, 0); }

int kpart_block_symmetric(const kpart_block *b)
{
	if (b->nrows != b->ncols)
		return -1;
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (b->nrows > 65536)
	for (uint64_t r = 0; r <= b->nrows; r++)
		bad |= b->rowptr[r] != b->colptr[r];
	if (bad)
		return -1;
	uint64_t a = 0, z = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : a, z) if (b->nnz > 65536)
	for (uint64_t c = 0; c < b->ncols; c++)
		for (uint64_t k = b->colptr[c]; k < b->colptr[c + 1]; k++) {
			uint64_t r = kpart_idx(b->rowidx, b->idx64, k);
			a += kpart_pair_hash(r, c);
			z += kpart_pair_hash(c, r);
		}
	return a == z ? 0 : -2;
}

const char *kpart_csr_error(int rc)
{
	return rc == -2 ? "a 1x1 block whose entries are not symmetric (an entry (r, c) without its (c, r): corrupt rank "
			  "file)"
			: "the row offsets disagree with the rows of the columns (corrupt rank file)";
}

/* KBFS_SYM=0: a 1x1 block transposed as any other (the ablation) */
static int sym_wanted(const kpart_block *b)
{
	const char *v = getenv("KBFS_SYM");
	return b->g.R == 1 && b->g.C == 1 && !(v && !strcmp(v, "0"));
}

int kpart_block_csr(kpart_block *b)
{
	if (sym_wanted(b)) {
		int rc = kpart_block_symmetric(b);
		if (rc)
			return rc;
		if (b->colidx != b->rowidx)
			free(b->colidx);
		b->colidx = b->rowidx;
		return 0;
	}
	size_t iw = b->idx64 ? 8 : 4;
	uint64_t nr = b->nrows, *rp = kmalloc(kmul((size_t)nr + 1, 8));
	void *ci = kmalloc(kmul((size_t)b->nnz, iw) + 1);
	kio_copy_par(rp, b->rowptr, (size_t)(nr + 1) * 8); /* the rows' starts, where a path can use them */
	transpose(b, rp, ci, 1);
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (nr > 65536)
	for (uint64_t r = 0; r <= nr; r++)
		bad |= rp[r] != b->rowptr[r];
	free(rp);
	if (bad) {
		free(ci);
		return -1;
	}
	if (b->colidx != b->rowidx)
		free(b->colidx);
	b->colidx = ci;
	return 0;
}

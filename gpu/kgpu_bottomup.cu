// kgpu_bottomup: the bottom-up local step — every unvisited local row scans
// its CSR row and stops at the first neighbour in the column frontier F.
//
// One warp owns one 64-row word of ROWVIS at a time, so ROWNEXT and ROWVIS
// are written whole by lane 0 without atomics.  Rows without a CSR entry
// (a bitmap made at set-up) count as visited, so a word of visited or
// isolated rows costs two broadcast loads.  Each lane takes a row of the word's lower, then
// upper half: rows of at most bu_split entries are scanned by their lane
// alone (thread per row), longer rows by the whole
// warp, 32 entries a step,
// a ballot finding the first hit (warp per row).  Either way the parent is
// the first neighbour in F in CSR order, as the CPU engine finds it, and
// "examined" counts the entries a sequential scan reads.  F (N/C bits) is
// only read, through the read-only cache; at scale 26 on one GPU it is 8 MB
// and stays in L2.
//
// Two kernels walk the words.  "tile" (the default): a warp loads 32 ROWVIS
// and empty-row words at once, one a lane (words strided by the warp count,
// so the hub rows at the front of a degree-ordered partition spread over
// many warps), and works only on the words with an unvisited row, so a level where few rows are left costs one load per
// 32 words instead of a round trip per word.  With bu_first it probes each
// row's first CSR entry from a dense array (KS_FIRST, built at set-up),
// read coalesced by the warp with no rowptr before it; only the rows whose
// first neighbour is not in F go on to rowptr and the rest of their row.
// With a degree-ordered partition (kpart's default) the first entry is the
// row's highest-degree neighbour, the likeliest to be in F.  "word": a warp
// takes one word at a time (the first kernel, kept for the ablation).
//
// A thread-per-row scan is a chain of dependent loads (rowptr, colidx, the
// F word).  Two ways to put more loads in flight were measured and are kept
// as options, off by default: bu_rows 2 walks a lane's two rows together,
// bu_batch N loads N entries of a row and tests them before it looks for
// the first hit.  Both ran slower on H100/H200 (share/bench/NOTES.md).
#include "kgpu_internal.cuh"

namespace {

enum { BU_BLOCK = 256 };

__device__ __forceinline__ bool in_front(const u64 *__restrict__ f, u64 c)
{
	return (__ldg(&f[c >> 6]) >> (c & 63)) & 1;
}

// A warp scans entries [b0, b1) of each row whose lane has lng set, 32
// entries a step, a ballot finding the first neighbour in F; that lane's
// hit/par are set, lane 0 adds the entries a sequential scan reads to
// examined.  Every lane of the warp calls it.
template <typename Idx>
__device__ __forceinline__ void bu_scan_warp(const Idx *__restrict__ colidx, const u64 *__restrict__ colfront, bool lng,
					     u64 b0, u64 b1, bool &hit, u64 &par, ull &examined)
{
	const int lane = threadIdx.x & 31;
	unsigned longm = __ballot_sync(KGPU_FULL, lng);
	while (longm) { // warp per row
		const int l = __ffs(longm) - 1;
		longm &= longm - 1;
		const u64 lb0 = __shfl_sync(KGPU_FULL, b0, l), lb1 = __shfl_sync(KGPU_FULL, b1, l);
		u64 gex = lb1 - lb0, gpar = 0;
		bool got = false;
		for (u64 kk0 = lb0; kk0 < lb1; kk0 += 32) {
			const u64 kk = kk0 + lane;
			u64 c = 0;
			bool h = false;
			if (kk < lb1) {
				c = colidx[kk];
				h = in_front(colfront, c);
			}
			const unsigned m = __ballot_sync(KGPU_FULL, h);
			if (m) {
				const int f = __ffs(m) - 1;
				gpar = __shfl_sync(KGPU_FULL, c, f);
				gex = kk0 - lb0 + f + 1;
				got = true;
				break;
			}
		}
		if (lane == l) {
			hit = got;
			par = gpar;
		}
		if (lane == 0)
			examined += gex;
	}
}

template <typename Idx, typename Off, int B, int NR>
__global__ void __launch_bounds__(BU_BLOCK, 4)
	k_bu(const Off *__restrict__ rowptr, const Idx *__restrict__ colidx, const u64 *__restrict__ colfront,
	     const u64 *__restrict__ empty, u64 *__restrict__ rowvis, u64 *__restrict__ rownext, u64 *__restrict__ pl,
	     u64 lvl, u64 col_first, u64 nwords, u64 split, kgpu_counters *cnt)
{
	const int lane = threadIdx.x & 31;
	const u64 nwarps = (u64)gridDim.x * (BU_BLOCK / 32);
	ull found = 0, examined = 0;
	for (u64 w = blockIdx.x * (u64)(BU_BLOCK / 32) + (threadIdx.x >> 5); w < nwords; w += nwarps) {
		const u64 vis = rowvis[w], skip = vis | empty[w];
		if (skip == ~0ull)
			continue;
		u64 next = 0;
		// NR = 1: the lane's rows of the lower and upper half one after the
		// other; NR = 2: both at once, their loads interleaved
		for (int g = 0; g < 2 / NR; g++) {
			u64 r[NR], b0[NR], b1[NR], k[NR], par[NR];
			bool hit[NR], act[NR];
#pragma unroll
			for (int i = 0; i < NR; i++) {
				r[i] = w * 64 + (g * NR + i) * 32 + lane;
				b0[i] = b1[i] = 0;
				if (!((skip >> ((g * NR + i) * 32 + lane)) & 1)) {
					b0[i] = rowptr[r[i]];
					b1[i] = rowptr[r[i] + 1];
				}
				k[i] = b0[i];
				par[i] = 0;
				hit[i] = false;
				act[i] = b1[i] > b0[i] && b1[i] - b0[i] <= split; // thread per row
			}
			for (;;) { // B probes of each active row in flight
				bool any = false;
#pragma unroll
				for (int i = 0; i < NR; i++)
					any |= act[i];
				if (!any)
					break;
				u64 c[NR][B];
				bool in[NR][B];
#pragma unroll
				for (int i = 0; i < NR; i++)
#pragma unroll
					for (int j = 0; j < B; j++)
						c[i][j] = act[i] && k[i] + j < b1[i] ? (u64)colidx[k[i] + j] : 0;
#pragma unroll
				for (int i = 0; i < NR; i++)
#pragma unroll
					for (int j = 0; j < B; j++)
						in[i][j] = act[i] && k[i] + j < b1[i] && in_front(colfront, c[i][j]);
#pragma unroll
				for (int i = 0; i < NR; i++) {
					int f = B;
#pragma unroll
					for (int j = B - 1; j >= 0; j--)
						if (in[i][j])
							f = j;
					if (!act[i])
						continue;
					if (f < B) {
						hit[i] = true;
						par[i] = c[i][f];
						k[i] += (u64)f + 1;
						act[i] = false;
					} else if ((k[i] += B) >= b1[i]) {
						act[i] = false;
					}
				}
			}
#pragma unroll
			for (int i = 0; i < NR; i++) {
				const u64 deg = b1[i] - b0[i];
				if (deg && deg <= split)
					examined += (hit[i] ? k[i] : b1[i]) - b0[i];
				bu_scan_warp(colidx, colfront, deg > split, b0[i], b1[i], hit[i], par[i], examined);
				if (hit[i]) {
					pl[r[i]] = lvl | (col_first + par[i]);
					found++;
				}
				next |= (u64)__ballot_sync(KGPU_FULL, hit[i]) << (32 * (g * NR + i));
			}
		}
		if (lane == 0 && next) {
			rownext[w] = next;
			rowvis[w] = vis | next;
		}
	}
	kgpu_count(&cnt->lfound, found);
	kgpu_count(&cnt->examined, examined);
}


// Scan of entries [b0, b1) of a row by its lane (rows of at most split
// entries) or by the whole warp, 32 entries a step (longer rows); every
// lane of the warp calls it.  Sets hit/par on a hit and adds the entries a
// sequential scan reads to examined (lane 0 for warp scans).
template <typename Idx>
__device__ __forceinline__ void bu_scan(const Idx *__restrict__ colidx, const u64 *__restrict__ colfront, bool act,
					u64 b0, u64 b1, u64 split, bool &hit, u64 &par, ull &examined)
{
	const u64 deg = act && b1 > b0 ? b1 - b0 : 0;
	if (deg && deg <= split) { // thread per row
		u64 k = b0;
		for (; k < b1; k++) {
			const u64 c = colidx[k];
			if (in_front(colfront, c)) {
				hit = true;
				par = c;
				k++;
				break;
			}
		}
		examined += k - b0;
	}
	bu_scan_warp(colidx, colfront, deg > split, b0, b1, hit, par, examined);
}

// The tile kernel.  A warp owns the 32 words of a tile, nwarps words apart;
// within a word, lane l takes rows 64w + l and 64w + 32 + l, their first
// probes issued together.
template <typename Idx, typename Off, bool FIRST>
__global__ void __launch_bounds__(BU_BLOCK, 4)
	k_bu_tile(const Off *__restrict__ rowptr, const Idx *__restrict__ colidx, const Idx *__restrict__ first,
		  const u64 *__restrict__ colfront, const u64 *__restrict__ empty, u64 *__restrict__ rowvis,
		  u64 *__restrict__ rownext, u64 *__restrict__ pl, u64 lvl, u64 col_first, u64 nwords, u64 split,
		  kgpu_counters *cnt)
{
	const int lane = threadIdx.x & 31;
	const u64 nwarps = (u64)gridDim.x * (BU_BLOCK / 32);
	ull found = 0, examined = 0;
	const u64 gw = blockIdx.x * (u64)(BU_BLOCK / 32) + (threadIdx.x >> 5);
	// a round covers 32 * nwarps words; lane l of warp gw takes word
	// base + l * nwarps + gw, so neighbouring words (a degree-ordered
	// partition's hubs sit together) go to different warps
	for (u64 base = 0; base < nwords; base += 32 * nwarps) {
		const u64 myw = base + lane * nwarps + gw;
		u64 myvis = ~0ull, myskip = ~0ull;
		if (myw < nwords) {
			myvis = rowvis[myw];
			myskip = myvis | empty[myw];
		}
		if (myw < nwords && myskip == ~0ull)
			rownext[myw] = 0; // this kernel clears ROWNEXT itself
		unsigned todo = __ballot_sync(KGPU_FULL, myskip != ~0ull);
		while (todo) {
			const int l = __ffs(todo) - 1;
			todo &= todo - 1;
			const u64 w = base + l * nwarps + gw;
			const u64 vis = __shfl_sync(KGPU_FULL, myvis, l), skip = __shfl_sync(KGPU_FULL, myskip, l);
			const u64 r0 = w * 64 + lane, r1 = r0 + 32;
			const bool a0 = !((skip >> lane) & 1), a1 = !((skip >> (32 + lane)) & 1);
			u64 c0 = 0, c1 = 0, e0 = 0, e1 = 0, f0 = 0, f1 = 0;
			if (FIRST) {
				if (a0)
					c0 = first[r0];
				if (a1)
					c1 = first[r1];
			} else {
				if (a0) {
					f0 = rowptr[r0];
					e0 = rowptr[r0 + 1];
				}
				if (a1) {
					f1 = rowptr[r1];
					e1 = rowptr[r1 + 1];
				}
				if (a0)
					c0 = colidx[f0];
				if (a1)
					c1 = colidx[f1];
			}
			bool h0 = a0 && in_front(colfront, c0), h1 = a1 && in_front(colfront, c1);
			u64 p0 = c0, p1 = c1;
			examined += (ull)a0 + (ull)a1;
			const bool m0 = a0 && !h0, m1 = a1 && !h1;
			if (FIRST) { // the rest of a missed row starts after its first entry
				if (m0) {
					f0 = rowptr[r0];
					e0 = rowptr[r0 + 1];
				}
				if (m1) {
					f1 = rowptr[r1];
					e1 = rowptr[r1 + 1];
				}
			}
			if (__any_sync(KGPU_FULL, m0))
				bu_scan(colidx, colfront, m0, f0 + 1, e0, split, h0, p0, examined);
			if (__any_sync(KGPU_FULL, m1))
				bu_scan(colidx, colfront, m1, f1 + 1, e1, split, h1, p1, examined);
			if (h0)
				pl[r0] = lvl | (col_first + p0);
			if (h1)
				pl[r1] = lvl | (col_first + p1);
			found += (ull)h0 + (ull)h1;
			const u64 next = (u64)__ballot_sync(KGPU_FULL, h0) | (u64)__ballot_sync(KGPU_FULL, h1) << 32;
			if (lane == 0) {
				rownext[w] = next;
				if (next)
					rowvis[w] = vis | next;
			}
		}
	}
	kgpu_count(&cnt->lfound, found);
	kgpu_count(&cnt->examined, examined);
}

// first[r] = the first CSR entry of local row r (0 for an empty row, which
// bottom-up skips through the empty-row bitmap).
template <typename Idx, typename Off>
__global__ void k_first(const Off *__restrict__ rowptr, const Idx *__restrict__ colidx, Idx *__restrict__ first,
			u64 nrows)
{
	for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < nrows; r += (u64)gridDim.x * blockDim.x) {
		const Off b0 = rowptr[r];
		first[r] = rowptr[r + 1] > b0 ? colidx[b0] : (Idx)0;
	}
}

// The rows of words [w0, w0 + nw) of the local rows (all of them, or one
// row segment of a sub-step): the kernels index rows from 0, so every
// per-row array is taken from row 64 * w0.
template <typename Idx, typename Off> void bu_run(kgpu_state *st, u64 level, u64 w0, u64 nw, kbfs_step *out)
{
	const kgpu_geom &g = st->g;
	u64 *rownext = kgpu_buf(st, KBFS_ROWNEXT) + w0;
	if (st->o.bu_kernel != KGPU_BU_TILE) // the tile kernel writes every word of ROWNEXT
		CUDA_CHECK(cudaMemsetAsync(rownext, 0, nw * 8, st->s));
	const u64 split = (u64)st->o.bu_split, r0 = w0 * 64;
	const Off *rowptr = (const Off *)st->slot[KS_ROWPTR] + r0;
	const Idx *colidx = (const Idx *)st->slot[KS_COLIDX];
	const u64 *empty = (const u64 *)st->slot[KS_EMPTY] + w0;
	u64 *rowvis = kgpu_buf(st, KBFS_ROWVIS) + w0, *pl = kgpu_buf(st, KBFS_PL) + r0;
	if (st->o.bu_kernel == KGPU_BU_TILE) {
		auto kern = g.bu_first ? k_bu_tile<Idx, Off, true> : k_bu_tile<Idx, Off, false>;
		const Idx *first = g.bu_first ? (const Idx *)st->slot[KS_FIRST] + r0 : nullptr;
		kern<<<kgpu_blocks((nw + 31) / 32, BU_BLOCK / 32, st->grid), BU_BLOCK, 0, st->s>>>(
			rowptr, colidx, first, kgpu_buf(st, KBFS_COLFRONT), empty, rowvis, rownext, pl,
			level << KBFS_PARENT_BITS, g.col_first, nw, split, st->cnt);
		KGPU_LAUNCHED("k_bu_tile");
	} else {
		auto kern = st->o.bu_rows == 2 ? (st->o.bu_batch >= 8   ? k_bu<Idx, Off, 8, 2>
						  : st->o.bu_batch >= 4 ? k_bu<Idx, Off, 4, 2>
						  : st->o.bu_batch >= 2 ? k_bu<Idx, Off, 2, 2>
									: k_bu<Idx, Off, 1, 2>)
						: (st->o.bu_batch >= 8   ? k_bu<Idx, Off, 8, 1>
						   : st->o.bu_batch >= 4 ? k_bu<Idx, Off, 4, 1>
						   : st->o.bu_batch >= 2 ? k_bu<Idx, Off, 2, 1>
									 : k_bu<Idx, Off, 1, 1>);
		kern<<<kgpu_blocks(nw, BU_BLOCK / 32, st->grid), BU_BLOCK, 0, st->s>>>(
			rowptr, colidx, kgpu_buf(st, KBFS_COLFRONT), empty, rowvis, rownext, pl,
			level << KBFS_PARENT_BITS, g.col_first, nw, split, st->cnt);
		KGPU_LAUNCHED("k_bu");
	}
	memset(out, 0, sizeof *out);
	if (st->o.step_sync) {
		kgpu_counters c;
		kgpu_counters_read(st, &c);
		out->found = c.lfound;
		out->examined = c.examined;
	}
}

template <typename Idx, typename Off> void first_build(kgpu_state *st)
{
	k_first<Idx, Off><<<kgpu_blocks(st->g.nrows, 256, st->grid), 256, 0, st->s>>>(
		(const Off *)st->slot[KS_ROWPTR], (const Idx *)st->slot[KS_COLIDX], (Idx *)st->slot[KS_FIRST], st->g.nrows);
	KGPU_LAUNCHED("k_first");
}

} // namespace

void kgpu_first_build(kgpu_state *st)
{
	if (st->g.idx64)
		st->g.off64 ? first_build<u64, u64>(st) : first_build<u64, u32>(st);
	else
		st->g.off64 ? first_build<u32, u64>(st) : first_build<u32, u32>(st);
}

static void bu_rows(kgpu_state *st, u64 level, u64 w0, u64 nw, kbfs_step *out)
{
	if (st->g.idx64)
		st->g.off64 ? bu_run<u64, u64>(st, level, w0, nw, out) : bu_run<u64, u32>(st, level, w0, nw, out);
	else
		st->g.off64 ? bu_run<u32, u64>(st, level, w0, nw, out) : bu_run<u32, u32>(st, level, w0, nw, out);
}

void kgpu_bottom_up(kgpu_state *st, u64 level, u64 nf, kbfs_step *out)
{
	(void)nf;
	bu_rows(st, level, 0, st->g.roww, out);
}

// dst[w] |= src[w], w < n
__global__ void k_or_words(u64 *__restrict__ dst, const u64 *__restrict__ src, u64 n)
{
	for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < n; w += (u64)gridDim.x * blockDim.x)
		dst[w] |= src[w];
}

void kgpu_bu_substep(kgpu_state *st, u64 level, int seg, const void *ring, kbfs_step *out)
{
	const u64 w0 = (u64)seg * st->g.nbw;
	if (ring) {
		k_or_words<<<kgpu_blocks(st->g.nbw, BU_BLOCK, st->grid), BU_BLOCK, 0, st->s>>>(
			kgpu_buf(st, KBFS_ROWVIS) + w0, (const u64 *)ring, st->g.nbw);
		KGPU_LAUNCHED("k_or_words");
	}
	bu_rows(st, level, w0, st->g.nbw, out);
}

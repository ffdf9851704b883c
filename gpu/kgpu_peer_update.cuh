// kgpu_peer_update.cuh: the peer transport's owner update, in the pieces
// that kgpu_peer.cu's k_update and kgpu_peer_loop.cu's loop of small
// levels (KBFS_CUDA_TD_LOOP) both run: a list level's update in one block,
// the pass over every word, the end of the level's round.  Each file that
// includes it gets its own copy (one translation unit has all device code).
#ifndef KGPU_PEER_UPDATE_CUH
#define KGPU_PEER_UPDATE_CUH

#include "kgpu_peer.cuh"

namespace {

// A list level's update on a one-column grid (td_lists, one block): the
// words of ROWNEXT the expansion turned nonzero (rl, nw of them), cleared
// as they are read, instead of every word; FRONTB[q]'s old nonzero words
// (this rank's list of two levels ago) cleared and the new ones set, then
// each of both pushed to the column as it now is (a word on both lists
// goes twice, the same value), and the new list to every column peer.
template <typename T>
__device__ void peer_list_update(const peer_dev &d, int q, u64 *__restrict__ rownext, u64 *__restrict__ ownvis,
				 u64 *__restrict__ frontb, const T *__restrict__ tdeg, const u32 *__restrict__ rl,
				 u32 nw, ull &found, ull &td, ull &be)
{
	__shared__ u64 sN[KGPU_LIST_CAP];
	__shared__ u32 sW[KGPU_LIST_CAP];
	__shared__ u32 sNew;
	const u32 *old = d.win[d.me]->clist[q][d.i];
	const u32 nold = d.win[d.me]->ccount[q][d.i];
	if (threadIdx.x == 0)
		sNew = 0;
	kgpu_list_take(rownext, ownvis, tdeg, rl, nw, sN, found, td);
	for (u32 k = threadIdx.x; k < nold; k += blockDim.x)
		frontb[old[k]] = 0;
	__syncthreads();
	for (u32 k = threadIdx.x; k < nw; k += blockDim.x)
		if (sN[k]) {
			frontb[rl[k]] = sN[k];
			sW[atomicAdd(&sNew, 1u)] = rl[k];
		}
	__syncthreads();
	const u32 nnew = sNew;
	for (u32 k = threadIdx.x; k < nold + nnew; k += blockDim.x) {
		const u32 x = k < nold ? old[k] : sW[k - nold];
		const u64 v = frontb[x];
		for (int r = 0; r < d.R; r++)
			if (d.colf[q][r] != frontb)
				d.colf[q][r][(u64)d.i * d.nbw + x] = v;
		be += 8ull * (u64)(d.R - 1);
	}
	__syncthreads(); // the old list is read: now it is replaced, here and at every column peer
	for (int r = 0; r < d.R; r++) {
		peer_win *w = d.win[d.colrank[r]];
		for (u32 k = threadIdx.x; k < nnew; k += blockDim.x)
			w->clist[q][d.i][k] = sW[k];
		if (threadIdx.x == 0)
			w->ccount[q][d.i] = nnew;
	}
}

// KBFS_PEER_CLEAR (d.clr_fb set): word w of this rank's FRONTB and of every
// segment of its COLFRONT of the other parity zeroed (k_update's words).
__device__ __forceinline__ void peer_clear_word(const peer_dev &d, u64 w)
{
	d.clr_fb[w] = 0;
	for (int r = 0; r < d.R; r++)
		d.clr_cf[(u64)r * d.nbw + w] = 0;
}

// k_update's pass over every word (all blocks, grid-stride): per owned word the
// row's segments merged (WON credited: a row several ranks found goes to the
// owner when it is one of them, so that its parent need not travel after the
// search, then to the next ranks along the row; d.won_owner 0: the lowest
// column), the owner update, the next level's
// expand pushed where it changed, shared visited, the new frontier's words
// listed (td_lists).  xrecv, won, pred, pl: grids of several columns only.
// The rows credited to the owner itself get their predecessor here, from
// its own PL (d.own_pred; else WON's own segment, decoded after the search
// like the others'); the rest the level now, the parent after the search.
template <typename T>
__device__ void peer_words(const peer_dev &d, u64 level, u64 *__restrict__ rownext, u64 *__restrict__ xrecv,
			   u64 *__restrict__ ownvis, u64 *__restrict__ frontb, u64 *__restrict__ won,
			   u64 *__restrict__ pred, const u64 *__restrict__ pl, const T *__restrict__ tdeg,
			   kgpu_counters *cnt, ull &found, ull &td, ull &be, ull &bs)
{
	const int lane = threadIdx.x & 31, q = (int)(level & 1);
	const u64 gw = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
	const u64 lvbits = level << KBFS_PARENT_BITS | KBFS_PARENT_MASK;
	u32 *mylist = d.win[d.me]->clist[q][d.i];
	for (u64 w0 = gw * 32; w0 < d.nbw; w0 += nwarps * 32) {
		const u64 w = w0 + lane;
		u64 n = 0, own = 0;
		if (w < d.nbw && d.clr_fb) // KBFS_PEER_CLEAR: the other parity's frontier, here and as sent here
			peer_clear_word(d, w);
		if (w < d.nbw) {
			const u64 ov = ownvis[w];
			u64 acc = 0;
			if (d.C == 1) {
				acc = rownext[w];
				if (d.lists && acc)
					rownext[w] = 0; // a list level starts with ROWNEXT all zero
			} else {
				for (int t = 0; t < d.C; t++) {
					const int m = d.won_owner ? (d.j + t < d.C ? d.j + t : d.j + t - d.C) : t;
					u64 b;
					if (m == d.j) {
						b = rownext[(u64)m * d.nbw + w];
					} else {
						b = xrecv[(u64)m * d.nbw + w];
						if (b)
							xrecv[(u64)m * d.nbw + w] = 0;
					}
					const u64 mine = b & ~acc & ~ov;
					if (m == d.j && d.own_pred)
						own = mine;
					else if (mine)
						won[(u64)m * d.nbw + w] |= mine;
					acc |= b;
				}
			}
			n = acc & ~ov;
			if (n)
				ownvis[w] = ov | n;
			// the next level's expand: the words COLFRONT[q] holds otherwise
			const u64 o = frontb[w];
			if (d.dense || n != o) {
				frontb[w] = n;
				for (int r = 0; r < d.R; r++)
					if (d.colf[q][r] != frontb)
						d.colf[q][r][(u64)d.i * d.nbw + w] = n;
				be += 8ull * (u64)(d.R - 1);
			}
			// shared visited: the owner's visited word to the row
			if (d.sv && d.C > 1 && (d.dense || n)) {
				const u64 v = ov | n;
				for (int m = 0; m < d.C; m++)
					d.rowvis[m][(u64)d.j * d.nbw + w] = v;
				bs += 8ull * (u64)(d.C - 1);
			}
		}
		if (d.lists)
			kgpu_list_append(n != 0, (u32)w, mylist, &cnt->nfl, d.lcap);
		found += __popcll(n);
		if (d.C > 1) {
			const u64 *mypl = pl + (u64)d.j * d.nb;
			td += kgpu_warp_tdeg<true>(d.tbatch, n, own, w0, tdeg, [&](int l, int b, int ob) {
				const u64 v = (w0 + (u64)l) * 64 + (u64)b;
				pred[v] = ob ? mypl[v] : lvbits;
			});
		} else {
			td += kgpu_warp_tdeg(d.tbatch, n, 0, w0, tdeg, [](int, int, int) {});
		}
	}
}

// The end of a level's update, by the block that finishes it (the last one,
// or block 0 alone in list mode): this rank's sums to every rank, its list
// to the column (made over the words), the round's flags, every rank's
// round, the sums into hsum (and gsum, when not NULL).
__device__ void peer_round_end(const peer_dev &d, kgpu_counters *cnt, u64 examined, bool lm, int q, u64 round,
			       volatile u64 *hsum, u64 *gsum, u64 level = 0)
{
	if (level && threadIdx.x == 0)
		ustamp(d, level, US_END);
	__shared__ u64 s[NSUM];
	__shared__ u32 sNfl;
	const u32 *mylist = d.win[d.me]->clist[q][d.i];
	if (threadIdx.x == 0) {
		volatile kgpu_counters *c = cnt;
		volatile ull *lvc = d.lvc;
		s[S_FOUND] = c->found;
		s[S_TDEG] = c->tdeg;
		s[S_EXAMINED] = c->examined + examined;
		s[S_BEXPAND] = lvc[0];
		s[S_BFOLD] = lvc[1];
		s[S_BSV] = lvc[2];
		s[S_LOVF] = d.lists && !lm && c->nfl > d.lcap;
		sNfl = (u32)(c->nfl > d.lcap ? d.lcap + 1 : c->nfl);
		kgpu_counters_clear(c);
		lvc[0] = lvc[1] = lvc[2] = 0;
	}
	__syncthreads();
	if (d.lists && !lm) { // the list made over the words, to every column peer
		const u32 nl = sNfl;
		for (int r = 0; r < d.R; r++) {
			peer_win *w = d.win[d.colrank[r]];
			if (w != d.win[d.me] && nl <= d.lcap)
				for (u32 k = threadIdx.x; k < nl; k += blockDim.x)
					w->clist[q][d.i][k] = mylist[k];
			if (threadIdx.x == 0)
				w->ccount[q][d.i] = nl;
		}
	}
	const int par = (int)(round & 1);
	for (int k = threadIdx.x; k < d.nworld * NSUM; k += blockDim.x)
		d.win[k / NSUM]->sums[par][d.me][k % NSUM] = s[k % NSUM];
	raise_flags(d, PK_ROUND, 0, round);
	if (level && threadIdx.x == 0)
		ustamp(d, level, US_FLAGS);
	finish_round(d, round, 1, hsum, gsum, level);
}

} // namespace

#endif

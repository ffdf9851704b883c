// kgpu_peer_pred: the predecessors after a search of the peer transport,
// on grids of several columns (kgpu_peer.cu has the protocol).  During the
// levels each new vertex was credited to one rank of its grid row whose
// ROWNEXT held it (WON, at the owner: the owner itself when it is one of
// them, its parent then not sent at all); now each owner sends each
// finder the rows credited to it (WON -> the finder's WONIN), the finder
// writes their parents in bit order, as local column indices, into the
// owner's PARW, and the owner decodes them into PRED through the same
// prefix counts of set bits per tile of 32 words (k_tiles and a CUB scan,
// on both sides).  Only rows found in this search are read, so PL is
// never reset.
#include "kgpu_peer.cuh"

#include <cub/cub.cuh>

#include <stdio.h>
#include <string.h>

namespace {

// WON's segment m to P(i,m)'s WONIN segment j (the words with bits).
__global__ void __launch_bounds__(PB) k_won(peer_dev d, const u64 *__restrict__ won, u64 round)
{
	const u64 nw = (u64)d.C * d.nbw;
	for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; t < nw; t += (u64)gridDim.x * blockDim.x) {
		const int m = (int)(t / d.nbw);
		if (m == d.j)
			continue;
		const u64 b = won[t];
		if (b)
			d.wonin[m][(u64)d.j * d.nbw + (t - (u64)m * d.nbw)] = b;
	}
	if (last_block(d))
		raise_flags(d, PK_WON, 1, round);
}

// Set bits of each tile (KGPU_TILE_WORDS words) of WON's and WONIN's C
// segments: cnt[a * C * tps + m * tps + t] (a = 0 WON, 1 WONIN), after the
// row's WON flags.
__global__ void __launch_bounds__(PB) k_tiles(peer_dev d, const u64 *__restrict__ won, const u64 *__restrict__ wonin,
					      u64 *__restrict__ cnt, u64 tps, u64 round)
{
	wait_peers(d, PK_WON, 1, round);
	const u64 ntile = 2 * (u64)d.C * tps, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
	const int lane = kgpu_lane();
	for (u64 t = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5; t < ntile; t += nwarps) {
		const u64 a = t / ((u64)d.C * tps), m = (t / tps) % (u64)d.C, lt = t % tps;
		const u64 w = lt * KGPU_TILE_WORDS + lane;
		const u64 *src = (a ? wonin : won) + m * d.nbw;
		const ull c = w < d.nbw ? (ull)__popcll(src[w]) : 0;
		const ull s = kgpu_warp_sum(c);
		if (lane == 0)
			cnt[t] = s;
	}
}

// A warp's tile of a segment's words: word lt * 32 + lane of segment m of
// arr (0 past the segment's end), cleared in arr as it is taken; *excl =
// the set bits of the tile's words before this lane's.
__device__ __forceinline__ u64 take_tile_word(u64 *__restrict__ arr, u64 nbw, u64 m, u64 lt, u64 *excl)
{
	const u64 w = lt * KGPU_TILE_WORDS + kgpu_lane();
	u64 x = 0;
	if (w < nbw) {
		x = arr[m * nbw + w];
		if (x)
			arr[m * nbw + w] = 0;
	}
	const u64 c = (u64)__popcll(x);
	*excl = kgpu_warp_incl(c) - c;
	return x;
}

// Finder: for the rows of segment m credited to it (WONIN), the parents in
// bit order as local column indices into P(i,m)'s PARW segment j; WONIN
// cleared as read.  pre: the exclusive prefix of k_tiles' counts (WONIN's
// tiles follow WON's).
__global__ void __launch_bounds__(PB) k_emit(peer_dev d, u64 *__restrict__ wonin, const u64 *__restrict__ pl,
					     const u64 *__restrict__ pre, u64 tps, u64 mycolfirst, u64 round)
{
	const u64 nt = (u64)d.C * tps, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
	for (u64 t = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5; t < nt; t += nwarps) {
		const u64 m = t / tps, lt = t % tps;
		if ((int)m == d.j)
			continue;
		u64 excl;
		const u64 x = take_tile_word(wonin, d.nbw, m, lt, &excl);
		const u64 base = pre[nt + t] - pre[nt + m * tps];
		u32 *out = d.parw[m] + (u64)d.j * d.nb;
		const u64 *row = pl + m * d.nb + lt * KGPU_TILE_WORDS * 64;
		kgpu_warp_bits(x, base + excl, [&](int l, int b, u64 rank, u64 b0) {
			out[b0 + rank] = (u32)((row[(u64)l * 64 + (u64)b] & KBFS_PARENT_MASK) - mycolfirst);
		});
	}
	if (last_block(d))
		raise_flags(d, PK_PAR, 1, round);
}

// Owner: PRED of every vertex reached in this search from its finder (WON):
// its own PL for segment j, PARW for the others; WON cleared as read.
__global__ void __launch_bounds__(PB) k_decode(peer_dev d, u64 *__restrict__ won, const u64 *__restrict__ pl,
					       const u32 *__restrict__ parw, const u64 *__restrict__ pre,
					       u64 *__restrict__ pred, u64 tps, u64 round)
{
	wait_peers(d, PK_PAR, 1, round);
	const u64 nt = (u64)d.C * tps, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
	for (u64 t = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5; t < nt; t += nwarps) {
		const u64 m = t / tps, lt = t % tps;
		u64 excl;
		const u64 x = take_tile_word(won, d.nbw, m, lt, &excl);
		const u64 base = pre[t] - pre[m * tps];
		const u32 *in = parw + m * d.nb;
		const bool own = (int)m == d.j;
		const u64 cf = d.colfirst[m], v0 = lt * KGPU_TILE_WORDS * 64;
		kgpu_warp_bits(x, base + excl, [&](int l, int b, u64 rank, u64 b0) {
			const u64 v = v0 + (u64)l * 64 + (u64)b;
			if (own)
				pred[v] = pl[(u64)d.j * d.nb + v];
			else
				pred[v] = (pred[v] & ~KBFS_PARENT_MASK) | (cf + in[b0 + rank]);
		});
	}
}

} // namespace

size_t kgpu_peer_scan_bytes(kgpu_peer *p, u64 n)
{
	size_t bytes = 0;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, p->tcnt, p->tpre, (int)n));
	return bytes;
}

void kgpu_peer_pred(kgpu_peer *p)
{
	kgpu_peer_trace_updates(p);
	kgpu_state *st = p->st;
	const kgpu_geom &g = st->g;
	if (g.C == 1)
		return; // PRED is PL
	const cudaStream_t s = kgpu_queue(st);
	p->won_round++;
	kgpu_peer_trace_mark(p, 0);
	k_won<<<kgpu_blocks(g.roww, PB, p->pblocks), PB, 0, s>>>(p->d, p->won, p->won_round);
	KGPU_LAUNCHED("k_won");
	kgpu_peer_trace_mark(p, 1);
	const u64 nt = 2 * (u64)g.C * p->tps;
	k_tiles<<<kgpu_blocks(nt, PB / 32, p->pblocks), PB, 0, s>>>(p->d, p->won, p->wonin, p->tcnt, p->tps,
								   p->won_round);
	KGPU_LAUNCHED("k_tiles");
	kgpu_peer_trace_mark(p, 2);
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(p->cubtmp, p->cubbytes, p->tcnt, p->tpre, (int)nt, s));
	kgpu_peer_trace_mark(p, 3);
	const u64 half = (u64)g.C * p->tps;
	k_emit<<<kgpu_blocks(half, PB / 32, p->pblocks), PB, 0, s>>>(p->d, p->wonin, kgpu_buf(st, KBFS_PL), p->tpre,
								   p->tps, g.col_first, p->won_round);
	KGPU_LAUNCHED("k_emit");
	kgpu_peer_trace_mark(p, 4);
	k_decode<<<kgpu_blocks(half, PB / 32, p->pblocks), PB, 0, s>>>(p->d, p->won, kgpu_buf(st, KBFS_PL), p->parw,
								     p->tpre, kgpu_buf(st, KBFS_PRED), p->tps,
								     p->won_round);
	KGPU_LAUNCHED("k_decode");
	kgpu_peer_trace_mark(p, 5);
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	kgpu_peer_check_err(p, "the predecessors");
	if (p->trace) {
		static const char *const what[5] = {"won", "tiles", "scan", "emit", "decode"};
		char line[256];
		size_t at = 0;
		for (int k = 0; k < 5; k++) {
			float ms = 0;
			CUDA_CHECK(cudaEventElapsedTime(&ms, p->ev[k], p->ev[k + 1]));
			at += (size_t)snprintf(line + at, sizeof line - at, " %s %.1f", what[k], ms * 1e3);
		}
		kinfo("peer transport: predecessors (us):%s", line);
	}
}

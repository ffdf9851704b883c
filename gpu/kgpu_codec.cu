// kgpu_codec: the engine's pack and unpack — bitmap segments to and from
// the wire forms of kengine.h, byte for byte the host codec's.
//
// pack: a bitmap pack is one strided device copy.  Otherwise a counting
// pass summarises every 32-word tile (warp per tile, kgpu_vlq.cuh), a CUB
// segmented scan combines the summaries, each segment's count and VLQ size
// come back to the host, the host chooses each segment's form exactly as
// kbfs_encode does, and an emit pass writes every tile at its place.
// unpack: the descriptors become a small table of segments cut into work
// units; VLQ segments take a summing pass and a CUB scan so that every
// unit knows the offset it starts from, then one pass applies all units
// (bitmap words stored or ORed, list bits set with warp-aggregated atomics).
#include "kgpu_internal.cuh"
#include "kgpu_vlq.cuh"

#include <cub/cub.cuh>

namespace {

enum { CB_BLOCK = 256, CB_WARPS = CB_BLOCK / 32 };

struct vt_op {
	__host__ __device__ __forceinline__ kgpu_vtile operator()(const kgpu_vtile &a, const kgpu_vtile &b) const
	{
		if (b.seg != a.seg || a.count == 0)
			return b;
		if (b.count == 0)
			return a;
		kgpu_vtile r;
		r.seg = a.seg;
		r.count = a.count + b.count;
		r.first = a.first;
		r.last = b.last;
		r.bytes = a.bytes + b.bytes + kgpu_vlq_len(b.first - a.last - 1);
		return r;
	}
};

__host__ __device__ __forceinline__ kgpu_vtile vt_none()
{
	kgpu_vtile z;
	z.seg = ~0ull;
	z.bytes = z.count = 0;
	z.first = z.last = ~0ull;
	return z;
}

struct enc_geo {
	const u64 *bm;
	uint8_t *out;
	u64 nbw, tps, ntiles, cap;
};

__device__ __forceinline__ void tile_place(const enc_geo &e, u64 t, u64 *seg, u64 *w0, int *nw)
{
	*seg = t / e.tps;
	const u64 lt = t % e.tps;
	*w0 = *seg * e.nbw + lt * KGPU_TILE_WORDS;
	const u64 left = e.nbw - lt * KGPU_TILE_WORDS;
	*nw = left < KGPU_TILE_WORDS ? (int)left : KGPU_TILE_WORDS;
}

__global__ void __launch_bounds__(CB_BLOCK, 4) k_enc_count(enc_geo e, kgpu_vtile *tiles)
{
	const u64 nwarps = (u64)gridDim.x * CB_WARPS;
	for (u64 t = blockIdx.x * (u64)CB_WARPS + (threadIdx.x >> 5); t < e.ntiles; t += nwarps) {
		u64 seg, w0;
		int nw;
		tile_place(e, t, &seg, &w0, &nw);
		kgpu_tile_sum s;
		kgpu_tile_walk<KGPU_TW_COUNT>(e.bm, w0, nw, 0, 0, nullptr, 0, &s);
		if (kgpu_lane() == 0) {
			kgpu_vtile v;
			v.seg = seg;
			v.bytes = s.bytes;
			v.count = s.count;
			v.first = s.first;
			v.last = s.last;
			tiles[t] = v;
		}
	}
}

__global__ void k_enc_totals(const kgpu_vtile *tiles, const kgpu_vtile *tpre, u64 nseg, u64 tps, u64 nbw,
			     kgpu_segstat *stat)
{
	const u64 s = blockIdx.x * (u64)blockDim.x + threadIdx.x;
	if (s >= nseg)
		return;
	const u64 tl = s * tps + tps - 1;
	const kgpu_vtile P = tpre[tl], T = tiles[tl];
	const kgpu_vtile tot = P.seg == s ? vt_op()(P, T) : T;
	kgpu_segstat r;
	r.count = tot.count;
	r.vbytes = tot.count ? tot.bytes + kgpu_vlq_len(tot.first - s * nbw * 64) : 0;
	stat[s] = r;
}

__global__ void __launch_bounds__(CB_BLOCK, 4) k_enc_emit(enc_geo e, const kgpu_vtile *tpre, const int *form)
{
	const int lane = kgpu_lane();
	const u64 nwarps = (u64)gridDim.x * CB_WARPS;
	for (u64 t = blockIdx.x * (u64)CB_WARPS + (threadIdx.x >> 5); t < e.ntiles; t += nwarps) {
		u64 seg, w0;
		int nw;
		tile_place(e, t, &seg, &w0, &nw);
		const int f = form[seg];
		uint8_t *out = e.out + seg * e.cap;
		const u64 segstart = seg * e.nbw * 64;
		if (f == KBFS_FMT_BITMAP) {
			if (lane < nw)
				kgpu_st_le(out + (w0 - seg * e.nbw + lane) * 8, e.bm[w0 + lane], 8);
			continue;
		}
		const kgpu_vtile P = tpre[t];
		const bool in = P.seg == seg && P.count > 0;
		const u64 prev = in ? P.last : segstart - 1;
		if (f == KBFS_FMT_VLQ) {
			const u64 at = in ? kgpu_vlq_len(P.first - segstart) + P.bytes : 0;
			kgpu_tile_walk<KGPU_TW_VLQ>(e.bm, w0, nw, prev, segstart, out + at, 0, nullptr);
		} else if (f == KBFS_FMT_RAW32) {
			kgpu_tile_walk<KGPU_TW_RAW32>(e.bm, w0, nw, prev, segstart, out, in ? P.count : 0, nullptr);
		} else {
			kgpu_tile_walk<KGPU_TW_RAW64>(e.bm, w0, nw, prev, segstart, out, in ? P.count : 0, nullptr);
		}
	}
}

// ---- decoding ---------------------------------------------------------------------------

__device__ __forceinline__ int unit_seg(const kgpu_useg *u, int nseg, u64 unit)
{
	int lo = 0, hi = nseg - 1; // the last segment with chunk_first <= unit
	while (lo < hi) {
		const int m = (lo + hi + 1) >> 1;
		if (u[m].chunk_first <= unit)
			lo = m;
		else
			hi = m - 1;
	}
	return lo;
}

__global__ void __launch_bounds__(CB_BLOCK, 4) k_dec_sum(const kgpu_useg *useg, int nseg, u64 nunits, ull *csum)
{
	const int lane = kgpu_lane();
	const u64 nwarps = (u64)gridDim.x * CB_WARPS;
	for (u64 u = blockIdx.x * (u64)CB_WARPS + (threadIdx.x >> 5); u < nunits; u += nwarps) {
		const kgpu_useg sg = useg[unit_seg(useg, nseg, u)];
		ull acc = 0;
		if (sg.form == KBFS_FMT_VLQ) {
			const u64 b0 = (u - sg.chunk_first) * KGPU_DCHUNK;
			const u64 b1 = sg.bytes - b0 < KGPU_DCHUNK ? sg.bytes : b0 + KGPU_DCHUNK;
			for (u64 p = b0 + lane; p < b1; p += 32)
				if (!(sg.src[p] & 0x80))
					acc += kgpu_vlq_back(sg.src, p) + 1;
		}
		acc = kgpu_warp_sum(acc);
		if (lane == 0)
			csum[u] = acc;
	}
}

__global__ void __launch_bounds__(CB_BLOCK, 4)
	k_dec_apply(const kgpu_useg *useg, int nseg, u64 nunits, const ull *cpre, u64 *dst, int merge)
{
	const int lane = kgpu_lane();
	const u64 nwarps = (u64)gridDim.x * CB_WARPS;
	for (u64 u = blockIdx.x * (u64)CB_WARPS + (threadIdx.x >> 5); u < nunits; u += nwarps) {
		const kgpu_useg sg = useg[unit_seg(useg, nseg, u)];
		const u64 k0 = (u - sg.chunk_first) * KGPU_DCHUNK;
		u64 *d = dst + sg.dstword;
		if (sg.form == KBFS_FMT_BITMAP) {
			const u64 n = sg.bytes / 8, k1 = n - k0 < KGPU_DCHUNK ? n : k0 + KGPU_DCHUNK;
			for (u64 k = k0 + lane; k < k1; k += 32) {
				const u64 v = sg.aligned ? ((const u64 *)sg.src)[k] : kgpu_ld_le(sg.src + 8 * k, 8);
				if (merge == KBFS_M_SET)
					d[k] = v;
				else if (merge == KBFS_M_OR)
					d[k] |= v;
				else if (v)
					atomicOr((ull *)&d[k], (ull)v);
			}
		} else if (sg.form == KBFS_FMT_VLQ) {
			const u64 b1 = sg.bytes - k0 < KGPU_DCHUNK ? sg.bytes : k0 + KGPU_DCHUNK;
			u64 running = cpre[u] - cpre[sg.chunk_first]; // sum of (gap + 1) before this unit
			for (u64 pb = k0; pb < b1; pb += 32) {
				const u64 p = pb + lane;
				const bool term = p < b1 && !(sg.src[p] & 0x80);
				const u64 x = term ? kgpu_vlq_back(sg.src, p) + 1 : 0;
				const u64 incl = kgpu_warp_incl(x);
				kgpu_set_bits_warp(d, term, running + incl - 1);
				running += __shfl_sync(KGPU_FULL, incl, 31);
			}
		} else {
			const int wd = sg.form == KBFS_FMT_RAW32 ? 4 : 8;
			const u64 n = sg.bytes / wd, k1 = n - k0 < KGPU_DCHUNK ? n : k0 + KGPU_DCHUNK;
			for (u64 kb = k0; kb < k1; kb += 32) {
				const u64 k = kb + lane;
				const bool act = k < k1;
				kgpu_set_bits_warp(d, act, act ? kgpu_ld_le(sg.src + k * wd, wd) : 0);
			}
		}
	}
}

} // namespace

// ---- host side ------------------------------------------------------------------------------

size_t kgpu_codec_cub_bytes(const kgpu_geom *g)
{
	size_t a = 0, b = 0;
	CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, a, (kgpu_vtile *)nullptr, (kgpu_vtile *)nullptr, vt_op(),
						  vt_none(), (int64_t)g->ntiles));
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, (ull *)nullptr, (ull *)nullptr, (int64_t)g->ndchunks));
	return a > b ? a : b;
}

// The form kbfs_encode (kbfs_xchg.c) chooses for a segment of nbw words
// holding count set bits whose VLQ list takes vbytes; *bytes gets its
// size.  LIST: the list when it fits cap; AUTO: the list when strictly
// smaller than the bitmap; otherwise the bitmap.
static int choose_form(u64 nbw, u64 count, u64 vbytes, enum kbfs_xmode mode, int compress, u64 cap, u64 *bytes)
{
	const u64 bm = nbw * 8;
	const int raw = nbw * 64 <= (1ull << 32) ? KBFS_FMT_RAW32 : KBFS_FMT_RAW64; // offsets fit u32
	const u64 lbytes = compress ? vbytes : count * (raw == KBFS_FMT_RAW64 ? 8 : 4);
	const int lform = compress ? KBFS_FMT_VLQ : raw;
	int list = 0;
	if (mode == KBFS_X_LIST)
		list = lbytes <= cap;
	else if (mode == KBFS_X_AUTO)
		list = lbytes < bm;
	*bytes = list ? lbytes : bm;
	return list ? lform : KBFS_FMT_BITMAP;
}

void kgpu_pack(kgpu_state *st, enum kbfs_buf src, size_t nseg, enum kbfs_xmode mode, int compress, kbfs_desc *desc)
{
	const kgpu_geom &g = st->g;
	if (nseg == 0)
		return;
	if (nseg > g.nseg)
		KBUG("pack of %zu segments, WSEND holds %llu", nseg, (ull)g.nseg);
	const u64 *bm = kgpu_buf(st, src);
	uint8_t *out = (uint8_t *)kgpu_buf(st, KBFS_WSEND);
	const u64 bmb = g.nbw * 8;
	if (mode == KBFS_X_BITMAP) {
		CUDA_CHECK(cudaMemcpy2DAsync(out, g.wire_cap, bm, bmb, bmb, nseg, cudaMemcpyDeviceToDevice, st->s));
		for (size_t s = 0; s < nseg; s++)
			desc[s] = kbfs_desc_make(bmb, KBFS_FMT_BITMAP);
		return;
	}
	enc_geo e;
	e.bm = bm;
	e.out = out;
	e.nbw = g.nbw;
	e.tps = g.tps;
	e.ntiles = nseg * g.tps;
	e.cap = g.wire_cap;
	kgpu_vtile *tiles = (kgpu_vtile *)st->slot[KS_TILES], *tpre = (kgpu_vtile *)st->slot[KS_TPRE];
	kgpu_segstat *dstat = (kgpu_segstat *)st->slot[KS_SEGSTAT];
	const int grid = kgpu_blocks(e.ntiles, CB_WARPS, st->grid);
	k_enc_count<<<grid, CB_BLOCK, 0, st->s>>>(e, tiles);
	KGPU_LAUNCHED("k_enc_count");
	size_t tb = st->cub_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveScan(st->slot[KS_CUB], tb, tiles, tpre, vt_op(), vt_none(),
						  (int64_t)e.ntiles, st->s));
	k_enc_totals<<<kgpu_blocks(nseg, 64, 1 << 20), 64, 0, st->s>>>(tiles, tpre, nseg, g.tps, g.nbw, dstat);
	KGPU_LAUNCHED("k_enc_totals");
	CUDA_CHECK(cudaMemcpyAsync(st->hsegstat, dstat, nseg * sizeof *dstat, cudaMemcpyDeviceToHost, st->s));
	CUDA_CHECK(cudaStreamSynchronize(st->s));
	int any_list = 0;
	for (size_t s = 0; s < nseg; s++) {
		u64 bytes;
		st->hform[s] = choose_form(g.nbw, st->hsegstat[s].count, st->hsegstat[s].vbytes, mode, compress,
					   g.wire_cap, &bytes);
		desc[s] = kbfs_desc_make(bytes, st->hform[s]);
		any_list |= st->hform[s] != KBFS_FMT_BITMAP;
	}
	if (!any_list) {
		CUDA_CHECK(cudaMemcpy2DAsync(out, g.wire_cap, bm, bmb, bmb, nseg, cudaMemcpyDeviceToDevice, st->s));
		return;
	}
	int *dform = (int *)st->slot[KS_FORM];
	CUDA_CHECK(cudaMemcpyAsync(dform, st->hform, nseg * sizeof *dform, cudaMemcpyHostToDevice, st->s));
	k_enc_emit<<<grid, CB_BLOCK, 0, st->s>>>(e, tpre, dform);
	KGPU_LAUNCHED("k_enc_emit");
}

void kgpu_unpack(kgpu_state *st, enum kbfs_buf wire, size_t stride, size_t nseg, const kbfs_desc *desc,
		 enum kbfs_buf dst, enum kbfs_merge merge)
{
	const kgpu_geom &g = st->g;
	if (nseg == 0)
		return;
	if (nseg > g.nseg)
		KBUG("unpack of %zu segments, the engine holds %llu", nseg, (ull)g.nseg);
	const uint8_t *w = (const uint8_t *)kgpu_buf(st, wire);
	u64 *d = kgpu_buf(st, dst);
	const u64 dwords = st->slot_bytes[KS_BUF0 + dst] / 8;
	if (merge != KBFS_M_OR_ALL && nseg * g.nbw > dwords)
		KBUG("unpack of %zu segments into a buffer of %llu words", nseg, (ull)dwords);
	// the previous unpack's table must have reached the device before we rewrite it
	CUDA_CHECK(cudaEventSynchronize(st->useg_done));
	u64 units = 0;
	int any_vlq = 0;
	for (size_t s = 0; s < nseg; s++) {
		kgpu_useg *u = &st->huseg[s];
		const u64 bytes = kbfs_desc_bytes(desc[s]);
		const int f = kbfs_desc_fmt(desc[s]);
		u->src = w + s * stride;
		u->bytes = bytes;
		u->form = f;
		u->dstword = merge == KBFS_M_OR_ALL ? 0 : s * g.nbw;
		u->aligned = ((uintptr_t)u->src & 7) == 0;
		u->chunk_first = units;
		u64 n = 0;
		switch (f) {
		case KBFS_FMT_BITMAP:
			if (bytes != g.nbw * 8)
				KBUG("bitmap segment %zu of %llu bytes, want %llu", s, (ull)bytes, (ull)(g.nbw * 8));
			n = g.nbw;
			break;
		case KBFS_FMT_RAW32: n = bytes / 4; break;
		case KBFS_FMT_RAW64: n = bytes / 8; break;
		default:
			n = bytes;
			any_vlq = 1;
			break;
		}
		units += (n + KGPU_DCHUNK - 1) / KGPU_DCHUNK;
		if (f != KBFS_FMT_BITMAP && merge == KBFS_M_SET)
			CUDA_CHECK(cudaMemsetAsync(d + s * g.nbw, 0, g.nbw * 8, st->s));
	}
	if (units > g.ndchunks)
		KBUG("unpack needs %llu work units, the engine holds %llu (segments larger than wire_cap?)", (ull)units,
		     (ull)g.ndchunks);
	if (merge == KBFS_M_OR_ALL)
		CUDA_CHECK(cudaMemsetAsync(d, 0, g.nbw * 8, st->s));
	kgpu_useg *du = (kgpu_useg *)st->slot[KS_USEG];
	CUDA_CHECK(cudaMemcpyAsync(du, st->huseg, nseg * sizeof *du, cudaMemcpyHostToDevice, st->s));
	CUDA_CHECK(cudaEventRecord(st->useg_done, st->s));
	if (units == 0)
		return;
	const int grid = kgpu_blocks(units, CB_WARPS, st->grid);
	ull *csum = (ull *)st->slot[KS_CSUM], *cpre = (ull *)st->slot[KS_CPRE];
	if (any_vlq) {
		k_dec_sum<<<grid, CB_BLOCK, 0, st->s>>>(du, (int)nseg, units, csum);
		KGPU_LAUNCHED("k_dec_sum");
		size_t tb = st->cub_bytes;
		CUDA_CHECK(cub::DeviceScan::ExclusiveSum(st->slot[KS_CUB], tb, csum, cpre, (int64_t)units, st->s));
	}
	k_dec_apply<<<grid, CB_BLOCK, 0, st->s>>>(du, (int)nseg, units, cpre, d, (int)merge);
	KGPU_LAUNCHED("k_dec_apply");
}

// kgpu_vlq: the warp-wide codec of vertex lists (Ueno's SIMD-VLQ, on bitmaps).
//
// The wire forms are kengine.h's: a list is the sorted offsets of the set
// bits of a segment, as raw u32/u64 or as VLQ gaps (first offset, then
// offset[k] - offset[k-1] - 1), each a little-endian base-128 varint, low
// seven bits first, high bit set on every byte but the last — the bytes
// libcommon's host codec (kbfs_encode / kbfs_decode) writes and reads.
//
// Encoding walks a tile of 32 bitmap words with one warp: a warp scan of
// the words' popcounts ranks the set bits; in rounds of 32 each lane takes
// one bit (finding its word by a binary search over the ranks, its position
// by select), takes its predecessor's position from the lane below, encodes
// one gap, and a warp prefix sum of the byte lengths gives every lane its
// output position.  The first gap of a tile depends on the tiles before it,
// so a counting pass summarises tiles (kgpu_vtile) and a segmented scan
// combines them.
//
// Decoding reads 32 bytes a step: a lane holding a terminator byte (high
// bit clear) rebuilds its varint reading back to the previous terminator,
// and a warp prefix sum of (gap + 1) turns gaps into offsets.
#ifndef KGPU_VLQ_CUH
#define KGPU_VLQ_CUH

#include "kgpu_internal.cuh"

__host__ __device__ __forceinline__ u32 kgpu_vlq_len(u64 v)
{
	u32 n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

__device__ __forceinline__ void kgpu_vlq_put(uint8_t *p, u64 v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p = (uint8_t)v;
}

// The varint whose last byte (high bit clear) is base[p]; begins after the
// previous terminator or at base[0].
__device__ __forceinline__ u64 kgpu_vlq_back(const uint8_t *__restrict__ base, u64 p)
{
	u64 v = base[p];
	for (u64 j = 1; j <= 9 && j <= p; j++) {
		const uint8_t c = base[p - j];
		if (!(c & 0x80))
			break;
		v = (v << 7) | (c & 0x7f);
	}
	return v;
}

// Little-endian stores and loads of n (4 or 8) bytes at any alignment.
__device__ __forceinline__ void kgpu_st_le(uint8_t *p, u64 v, int n)
{
	if (n == 8 && ((uintptr_t)p & 7) == 0)
		*(u64 *)p = v;
	else if (n == 4 && ((uintptr_t)p & 3) == 0)
		*(u32 *)p = (u32)v;
	else
		for (int k = 0; k < n; k++)
			p[k] = (uint8_t)(v >> (8 * k));
}
__device__ __forceinline__ u64 kgpu_ld_le(const uint8_t *p, int n)
{
	if (n == 8 && ((uintptr_t)p & 7) == 0)
		return *(const u64 *)p;
	if (n == 4 && ((uintptr_t)p & 3) == 0)
		return *(const u32 *)p;
	u64 v = 0;
	for (int k = 0; k < n; k++)
		v |= (u64)p[k] << (8 * k);
	return v;
}

enum { KGPU_TW_COUNT, KGPU_TW_VLQ, KGPU_TW_RAW32, KGPU_TW_RAW64 };

struct kgpu_tile_sum {
	u64 count, bytes, first, last;
};

// One warp walks the nw (<= 32) words of bm starting at global word w0.
// prev: global position of the set bit before the tile (segstart - 1 when
// none, with wrap-around).  COUNT fills *sum (bytes without the tile's
// first gap); VLQ writes every gap, the first included, at out; RAW writes
// offset (position - segstart) k at out + (idx0 + k) * width.  Every lane
// of the warp must call it.
template <int MODE>
__device__ __forceinline__ void kgpu_tile_walk(const u64 *__restrict__ bm, u64 w0, int nw, u64 prev, u64 segstart,
					       uint8_t *__restrict__ out, u64 idx0, kgpu_tile_sum *sum)
{
	const int lane = kgpu_lane();
	const u64 word = lane < nw ? bm[w0 + lane] : 0;
	const u32 c = (u32)__popcll(word);
	const u32 incl = kgpu_warp_incl(c);
	const u32 excl = incl - c;
	const u32 T = __shfl_sync(KGPU_FULL, incl, 31);
	u64 carry = prev, opos = 0, first = ~0ull;
	for (u32 rb = 0; rb < T; rb += 32) {
		const u32 q = rb + lane;
		const bool act = q < T;
		int j = 0; // the lane whose word holds set bit number q
		for (int s = 16; s; s >>= 1) {
			const u32 v = __shfl_sync(KGPU_FULL, incl, j + s - 1);
			if (v <= q)
				j += s;
		}
		const u64 wj = __shfl_sync(KGPU_FULL, word, j);
		const u32 ej = __shfl_sync(KGPU_FULL, excl, j);
		const u64 pos = act ? (w0 + j) * 64 + kgpu_select64(wj, (int)(q - ej)) : 0;
		u64 pp = __shfl_up_sync(KGPU_FULL, pos, 1);
		if (lane == 0)
			pp = carry;
		const u64 gap = pos - pp - 1;
		u32 len = act ? kgpu_vlq_len(gap) : 0;
		if (MODE == KGPU_TW_COUNT && rb == 0 && lane == 0) {
			first = pos;
			len = 0;
		}
		const u32 lincl = kgpu_warp_incl(len);
		if (MODE == KGPU_TW_VLQ && act)
			kgpu_vlq_put(out + opos + (lincl - len), gap);
		if (MODE == KGPU_TW_RAW32 && act)
			kgpu_st_le(out + (idx0 + q) * 4, pos - segstart, 4);
		if (MODE == KGPU_TW_RAW64 && act)
			kgpu_st_le(out + (idx0 + q) * 8, pos - segstart, 8);
		opos += __shfl_sync(KGPU_FULL, lincl, 31);
		carry = __shfl_sync(KGPU_FULL, pos, T - rb >= 32 ? 31 : (int)(T - rb - 1));
	}
	if (MODE == KGPU_TW_COUNT) {
		first = __shfl_sync(KGPU_FULL, first, 0);
		sum->count = T;
		sum->bytes = opos;
		sum->first = T ? first : ~0ull;
		sum->last = T ? carry : ~0ull;
	}
}

// Set bit position bitpos of dst for every active lane, one atomicOr per
// run of lanes hitting the same word (positions ascend with the lane).
// Every lane of the warp must call it.
__device__ __forceinline__ void kgpu_set_bits_warp(u64 *dst, bool act, u64 bitpos)
{
	const int lane = kgpu_lane();
	const u64 wi = act ? bitpos >> 6 : ~0ull;
	u64 m = act ? 1ull << (bitpos & 63) : 0;
	for (int s = 1; s < 32; s <<= 1) {
		const u64 om = __shfl_down_sync(KGPU_FULL, m, s);
		const u64 ow = __shfl_down_sync(KGPU_FULL, wi, s);
		if (lane + s < 32 && ow == wi)
			m |= om;
	}
	const u64 pw = __shfl_up_sync(KGPU_FULL, wi, 1);
	if (act && (lane == 0 || pw != wi))
		atomicOr((ull *)&dst[wi], (ull)m);
}

#endif

// kgpu_bottomup: the bottom-up local step — every unvisited local row scans
// its CSR row and stops at the first neighbour in the column frontier F.
//
// One warp owns one 64-row word of ROWVIS at a time, so ROWNEXT and ROWVIS
// are written whole by lane 0 without atomics.  Rows without a CSR entry
// (a bitmap made at set-up) count as visited, so a word of visited or
// isolated rows costs two broadcast loads.  Each lane takes a row of the word's lower, then
// upper half: rows of at most bu_split entries are scanned by their lane
// alone (thread per row; with bu_batch > 1 that many column indices are
// loaded and tested in F before the first hit is looked for, which an H100
// ran slower than one at a time), longer rows by the whole
// warp, 32 entries a step,
// a ballot finding the first hit (warp per row).  Either way the parent is
// the first neighbour in F in CSR order, as the CPU engine finds it, and
// "examined" counts the entries a sequential scan reads.  F (N/C bits) is
// only read, through the read-only cache; at scale 26 on one GPU it is 8 MB
// and stays in L2.
#include "kgpu_internal.cuh"

namespace {

enum { BU_BLOCK = 256 };

__device__ __forceinline__ bool in_front(const u64 *__restrict__ f, u64 c)
{
	return (__ldg(&f[c >> 6]) >> (c & 63)) & 1;
}

template <typename Idx, typename Off, int B>
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
		for (int h = 0; h < 2; h++) {
			const int bit = h * 32 + lane;
			const u64 r = w * 64 + bit;
			u64 b0 = 0, b1 = 0;
			if (!((skip >> bit) & 1)) {
				b0 = rowptr[r];
				b1 = rowptr[r + 1];
			}
			const u64 deg = b1 - b0;
			bool hit = false;
			u64 par = 0;
			if (deg && deg <= split) { // thread per row, B probes in flight
				u64 k = b0;
				while (k < b1) {
					u64 c[B];
					bool in[B];
#pragma unroll
					for (int i = 0; i < B; i++)
						c[i] = k + i < b1 ? (u64)colidx[k + i] : 0;
#pragma unroll
					for (int i = 0; i < B; i++)
						in[i] = k + i < b1 && in_front(colfront, c[i]);
					int f = B;
#pragma unroll
					for (int i = B - 1; i >= 0; i--)
						if (in[i])
							f = i;
					if (f < B) {
						hit = true;
						par = c[f];
						k += (u64)f + 1;
						break;
					}
					k += B;
				}
				examined += (hit ? k : b1) - b0;
			}
			unsigned longm = __ballot_sync(KGPU_FULL, deg > split);
			while (longm) { // warp per row
				const int l = __ffs(longm) - 1;
				longm &= longm - 1;
				const u64 lb0 = __shfl_sync(KGPU_FULL, b0, l), lb1 = __shfl_sync(KGPU_FULL, b1, l);
				u64 gex = lb1 - lb0, gpar = 0;
				bool got = false;
				for (u64 k = lb0; k < lb1; k += 32) {
					const u64 kk = k + lane;
					u64 c = 0;
					bool h2 = false;
					if (kk < lb1) {
						c = colidx[kk];
						h2 = in_front(colfront, c);
					}
					const unsigned m = __ballot_sync(KGPU_FULL, h2);
					if (m) {
						const int f = __ffs(m) - 1;
						gpar = __shfl_sync(KGPU_FULL, c, f);
						gex = k - lb0 + f + 1;
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
			if (hit) {
				pl[r] = lvl | (col_first + par);
				found++;
			}
			next |= (u64)__ballot_sync(KGPU_FULL, hit) << (32 * h);
		}
		if (lane == 0 && next) {
			rownext[w] = next;
			rowvis[w] = vis | next;
		}
	}
	kgpu_count(&cnt->found, found);
	kgpu_count(&cnt->examined, examined);
}

template <typename Idx, typename Off> void bu_run(kgpu_state *st, u64 level, kbfs_step *out)
{
	const kgpu_geom &g = st->g;
	u64 *rownext = kgpu_buf(st, KBFS_ROWNEXT);
	CUDA_CHECK(cudaMemsetAsync(rownext, 0, g.roww * 8, st->s));
	const u64 split = (u64)st->o.bu_split;
	auto kern = st->o.bu_batch >= 8 ? k_bu<Idx, Off, 8>
		    : st->o.bu_batch >= 4 ? k_bu<Idx, Off, 4>
		    : st->o.bu_batch >= 2 ? k_bu<Idx, Off, 2>
					  : k_bu<Idx, Off, 1>;
	kern<<<kgpu_blocks(g.roww, BU_BLOCK / 32, st->grid), BU_BLOCK, 0, st->s>>>(
		(const Off *)st->slot[KS_ROWPTR], (const Idx *)st->slot[KS_COLIDX], kgpu_buf(st, KBFS_COLFRONT),
		(const u64 *)st->slot[KS_EMPTY], kgpu_buf(st, KBFS_ROWVIS), rownext, kgpu_buf(st, KBFS_PL),
		level << KBFS_PARENT_BITS, g.col_first, g.roww, split, st->cnt);
	KGPU_LAUNCHED("k_bu");
	kgpu_counters c;
	kgpu_counters_read(st, &c);
	out->found = c.found;
	out->examined = c.examined;
	out->tdeg = 0;
}

} // namespace

void kgpu_bottom_up(kgpu_state *st, u64 level, kbfs_step *out)
{
	if (st->g.idx64)
		st->g.off64 ? bu_run<u64, u64>(st, level, out) : bu_run<u64, u32>(st, level, out);
	else
		st->g.off64 ? bu_run<u32, u64>(st, level, out) : bu_run<u32, u32>(st, level, out);
}

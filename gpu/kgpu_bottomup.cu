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
				unsigned longm = __ballot_sync(KGPU_FULL, deg > split);
				while (longm) { // warp per row
					const int l = __ffs(longm) - 1;
					longm &= longm - 1;
					const u64 lb0 = __shfl_sync(KGPU_FULL, b0[i], l), lb1 = __shfl_sync(KGPU_FULL, b1[i], l);
					u64 gex = lb1 - lb0, gpar = 0;
					bool got = false;
					for (u64 kk0 = lb0; kk0 < lb1; kk0 += 32) {
						const u64 kk = kk0 + lane;
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
							gex = kk0 - lb0 + f + 1;
							got = true;
							break;
						}
					}
					if (lane == l) {
						hit[i] = got;
						par[i] = gpar;
					}
					if (lane == 0)
						examined += gex;
				}
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
	kgpu_count(&cnt->found, found);
	kgpu_count(&cnt->examined, examined);
}

template <typename Idx, typename Off> void bu_run(kgpu_state *st, u64 level, kbfs_step *out)
{
	const kgpu_geom &g = st->g;
	u64 *rownext = kgpu_buf(st, KBFS_ROWNEXT);
	CUDA_CHECK(cudaMemsetAsync(rownext, 0, g.roww * 8, st->s));
	const u64 split = (u64)st->o.bu_split;
	auto kern = st->o.bu_rows == 2 ? (st->o.bu_batch >= 8   ? k_bu<Idx, Off, 8, 2>
					  : st->o.bu_batch >= 4 ? k_bu<Idx, Off, 4, 2>
					  : st->o.bu_batch >= 2 ? k_bu<Idx, Off, 2, 2>
								: k_bu<Idx, Off, 1, 2>)
					: (st->o.bu_batch >= 8   ? k_bu<Idx, Off, 8, 1>
					   : st->o.bu_batch >= 4 ? k_bu<Idx, Off, 4, 1>
					   : st->o.bu_batch >= 2 ? k_bu<Idx, Off, 2, 1>
								 : k_bu<Idx, Off, 1, 1>);
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

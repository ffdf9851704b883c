// kgpu_peer_loop.cu: KBFS_CUDA_TD_LOOP=1 on one-column grids over the peer
// transport (an experiment, kengine.h lv_td_run): runs of small top-down
// levels in one cooperative launch a GPU, the rounds between the GPUs
// inside it (kgpu_peer.cu describes the protocol).
#include "kgpu_peer_update.cuh"
#include "kgpu_td.cuh"

namespace {

// KBFS_CUDA_TD_LOOP=1 on a one-column grid (an experiment): small top-down
// levels back to back in one cooperative launch per rank, the rounds between
// the GPUs inside it.  A level: the list body on COLFRONT[q'] (q' the last
// level's parity) and this rank's column lists, a grid barrier, the update
// (peer_list_update in block 0, or peer_words in every block), a barrier,
// block 0 ends the round (peer_round_end: sums, lists, flags, every rank's
// round, the global sums into L->gsum), its first thread records the level
// and decides by the global sums (the same on every rank) whether the next
// level is the loop's too; a barrier.
template <typename Idx, typename Off, int ITEMS, typename T>
__global__ void __launch_bounds__(TD_BLOCK) k_td_loop_peer(td_ctx<Idx, Off> c, peer_dev d, u64 *__restrict__ ownvis,
							const T *__restrict__ tdeg, u64 *frontb0, u64 *frontb1,
							u64 *colf0, u64 *colf1, kgpu_loop *L, u64 level0,
							u64 round0, int maxlv, u64 mu, double alpha,
							volatile u64 *hsum)
{
	const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
	for (int k = 0; k < maxlv; k++) {
		const u64 level = level0 + (u64)k;
		const int q = (int)(level & 1), qp = q ^ 1;
		if (lead)
			L->rec[k].t0 = kgpu_gtime();
		c.lvl = level << KBFS_PARENT_BITS;
		td_list_body<Idx, Off, ITEMS>(c, qp ? colf1 : colf0, &d.win[d.me]->clist[qp][0][0],
					      d.win[d.me]->ccount[qp], d.R, d.nbw);
		grid_sync(L->bar);
		if (lead)
			L->rec[k].t1 = kgpu_gtime();
		ull found = 0, td = 0, be = 0, bs = 0;
		u64 *frontb = q ? frontb1 : frontb0;
		const u32 nw = (u32)*(volatile ull *)&c.cnt->nwl;
		const bool lm = nw <= d.lcap && *(volatile u32 *)&d.win[d.me]->ccount[q][d.i] <= d.lcap;
		if (lm) {
			if (blockIdx.x == 0)
				peer_list_update(d, q, c.rownext, ownvis, frontb, tdeg, c.wl, nw, found, td, be);
		} else {
			peer_words(d, level, c.rownext, nullptr, ownvis, frontb, nullptr, nullptr, nullptr, tdeg, c.cnt, found, td, be,
				   bs);
		}
		kgpu_count(&c.cnt->found, found);
		kgpu_count(&c.cnt->tdeg, td);
		block_add(&d.lvc[0], be);
		grid_sync(L->bar, true); // the pushes of every block reach the peers before block 0's flags
		if (blockIdx.x == 0) {
			peer_round_end(d, c.cnt, 0, lm, q, round0 + (u64)k, hsum, L->gsum);
			if (threadIdx.x == 0) {
				volatile u64 *g = L->gsum;
				const u64 f = g[S_FOUND], mf = g[S_TDEG];
				kgpu_loop_rec *r = &L->rec[k];
				r->found = f;
				r->tdeg = mf;
				r->examined = g[S_EXAMINED];
				r->bexpand = g[S_BEXPAND];
				r->t2 = kgpu_gtime();
				loop_decide(L, k, maxlv, f, mf, mu, alpha, g[S_LOVF] == 0);
			}
		}
		if (!loop_next(L))
			break;
	}
}

template <typename Idx, typename Off, typename T>
void peer_loop_run(kgpu_peer *p, u64 level, u64 mu, double alpha, int max)
{
	kgpu_state *st = p->st;
	constexpr int ITEMS = sizeof(Idx) + sizeof(Off) > 8 ? 4 : 8;
	auto kern = k_td_loop_peer<Idx, Off, ITEMS, T>;
	if (loop_grid_of(st, kern) < 0)
		KBUG("KBFS_CUDA_TD_LOOP: k_td_loop_peer cannot be resident"); // every rank would have to agree
	td_ctx<Idx, Off> c = td_ctx_of<Idx, Off>(st, level);
	c.wl = (u32 *)st->slot[KS_RLIST];
	peer_dev d = p->d;
	u64 *ownvis = kgpu_buf(st, KBFS_OWNVIS);
	const T *tdeg = (const T *)st->slot[KS_TDEG];
	u64 *fb0 = p->frontb[0], *fb1 = p->frontb[1], *cf0 = p->colfront[0], *cf1 = p->colfront[1];
	kgpu_loop *L = (kgpu_loop *)st->slot[KS_LOOP];
	u64 round0 = p->round + 1;
	volatile u64 *hsum = p->dhsum;
	void *args[] = {&c, &d, &ownvis, &tdeg, &fb0, &fb1, &cf0, &cf1, &L, &level, &round0, &max, &mu, &alpha, &hsum};
	loop_launch(st, (const void *)kern, args);
	KGPU_LAUNCHED("k_td_loop_peer");
}

} // namespace

int kgpu_peer_td_loop(kgpu_peer *p, u64 level, u64 nf, u64 mu, double alpha, int max, kbfs_lrec *rec)
{
	kgpu_state *st = p->st;
	if (!loop_can(st, 2, nf, &max))
		return 0;
	loop_dispatch(st->g, [&](auto i, auto o, auto t) {
		peer_loop_run<decltype(i), decltype(o), decltype(t)>(p, level, mu, alpha, max);
	});
	const int n = loop_collect(st, rec);
	kgpu_peer_check_err(p, "a loop of top-down levels");
	if (n) {
		p->round += (u64)n;
		const int q = (int)((level + (u64)n - 1) & 1);
		st->slot[KS_BUF0 + KBFS_COLFRONT] = p->colfront[q];
		kgpu_peer_lists_of(p, q);
	}
	return n;
}

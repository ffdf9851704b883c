/*
 * kbfs: the level loop of the 2D BFS, written once over kengine.h.
 *
 * Per level, at processor P(i,j):
 *   1. expand   allgather of the owners' frontiers inside the processor
 *               column -> the column frontier F (COLFRONT);
 *   2. local    top-down over F's CSC columns, or bottom-up over the
 *               unvisited local rows (direction per level, Beamer);
 *   3. fold     row segment m of ROWNEXT goes to grid column m, OR-merged
 *               by the receiver (RECV);
 *   4. update   new = RECV & ~OWNVIS at the owner; new is the next frontier;
 *   5. sv       the owners' visited bits are allgathered along the
 *               processor row into every ROWVIS (Ueno's shared visited);
 *   6. allreduce of the level's counts: termination, direction and stats.
 * Each exchange sends bitmaps or sorted lists, chosen per segment and per
 * level by the engine's pack() (kbfs_xmode).  The search ends with a MIN
 * reduce-scatter of the packed (level, parent) entries along the row.
 */
#include "kbfs.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

const char *const kbfs_dir_names[] = {"auto", "top-down", "bottom-up", NULL};
const char *const kbfs_xmode_names[] = {"bitmap", "list", "auto", NULL};
const char *const kbfs_phase_names[KBFS_NPHASE] = {"expand", "local", "fold", "update", "sv", "allreduce"};
const char *const kbfs_xchg_names[KBFS_NXCHG] = {"expand", "fold", "sv"};

const char *kbfs_dir_name(int dir)
{
	return kbfs_dir_names[dir == KBFS_DIR_BU || dir == KBFS_DIR_TD ? dir : KBFS_DIR_AUTO];
}

void kbfs_algo_default(kbfs_algo *a)
{
	a->direction = KBFS_DIR_AUTO;
	a->alpha = 14;
	a->beta = 24;
	a->exchange = KBFS_X_AUTO;
	a->compress = 1;
	a->sv = 1;
}

uint64_t kbfs_wire_cap(const kpart_block *b, int exchange, int compress)
{
	uint64_t nb = b->g.nb, cap = nb / 8;
	if (exchange == KBFS_X_LIST) {
		/* a gap list of k offsets below nb takes at most k + nb/7 + 10 bytes */
		uint64_t list = compress ? 2 * nb + 64 : nb * (nb <= (UINT64_C(1) << 32) ? 4 : 8);
		if (list > cap)
			cap = list;
	}
	return (cap + 7) & ~UINT64_C(7);
}

void kbfs_ctx_init(kbfs_ctx *x, const kpart_block *b, kbfs_engine *e, kbfs_transport *t)
{
	x->b = b;
	x->e = e;
	x->t = t;
	kbfs_algo_default(&x->algo);
	x->wire_cap = kbfs_wire_cap(b, x->algo.exchange, x->algo.compress);
	size_t p = (size_t)(b->g.R > b->g.C ? b->g.R : b->g.C);
	x->d = kcalloc(p, sizeof *x->d);
	x->rd = kcalloc(p, sizeof *x->rd);
	x->cnt = kcalloc(4 * p, sizeof *x->cnt);
	uint64_t s = 0;
	for (uint64_t k = 0; k < b->g.nb; k++)
		s += b->tdeg[k];
	t->ctl_allreduce_sum_u64(t, KBFS_WORLD, &s, 1);
	x->tdeg_total = s;
}

void kbfs_ctx_free(kbfs_ctx *x)
{
	free(x->d);
	free(x->rd);
	free(x->cnt);
	free(x->lv);
	memset(x, 0, sizeof *x);
}

static void *B(kbfs_ctx *x, enum kbfs_buf which) { return x->e->buf(x->e, which); }
static uint64_t seg_bytes(kbfs_ctx *x) { return x->b->g.nb / 8; }

/* Allgather of FRONT (one segment per rank of axis) into dst. */
static uint64_t gather_front(kbfs_ctx *x, enum kbfs_axis axis, enum kbfs_buf dst, enum kbfs_merge merge)
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	int p = t->size(t, axis);
	if (!x->front_packed) {
		e->pack(e, KBFS_FRONT, 1, (enum kbfs_xmode)x->algo.exchange, x->algo.compress, &x->front_desc);
		x->front_packed = 1;
	}
	t->ctl_allgather_u64(t, axis, x->front_desc, x->rd);
	size_t *cnt = x->cnt, *dsp = x->cnt + p;
	for (int r = 0; r < p; r++) {
		cnt[r] = kbfs_desc_bytes(x->rd[r]);
		dsp[r] = (size_t)r * x->wire_cap;
	}
	t->allgatherv(t, axis, B(x, KBFS_WSEND), kbfs_desc_bytes(x->front_desc), B(x, KBFS_WRECV), cnt, dsp);
	e->unpack(e, KBFS_WRECV, x->wire_cap, (size_t)p, x->rd, dst, merge);
	return kbfs_desc_bytes(x->front_desc) * (uint64_t)(p - 1);
}

static uint64_t expand(kbfs_ctx *x)
{
	kbfs_transport *t = x->t;
	int R = x->b->g.R;
	if (R == 1) {
		x->e->copy(x->e, B(x, KBFS_COLFRONT), B(x, KBFS_FRONT), seg_bytes(x));
		return 0;
	}
	if (x->algo.exchange == KBFS_X_BITMAP) {
		t->allgather(t, KBFS_COL, B(x, KBFS_FRONT), seg_bytes(x), B(x, KBFS_COLFRONT));
		return seg_bytes(x) * (uint64_t)(R - 1);
	}
	return gather_front(x, KBFS_COL, KBFS_COLFRONT, KBFS_M_SET);
}

static uint64_t fold(kbfs_ctx *x)
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	int C = x->b->g.C, me = x->b->j;
	if (C == 1) {
		e->copy(e, B(x, KBFS_RECV), B(x, KBFS_ROWNEXT), seg_bytes(x));
		return 0;
	}
	if (x->algo.exchange == KBFS_X_BITMAP) {
		t->alltoall(t, KBFS_ROW, B(x, KBFS_ROWNEXT), seg_bytes(x), B(x, KBFS_XRECV));
		for (int m = 0; m < C; m++)
			x->rd[m] = kbfs_desc_make(seg_bytes(x), KBFS_FMT_BITMAP);
		e->unpack(e, KBFS_XRECV, seg_bytes(x), (size_t)C, x->rd, KBFS_RECV, KBFS_M_OR_ALL);
		return seg_bytes(x) * (uint64_t)(C - 1);
	}
	e->pack(e, KBFS_ROWNEXT, (size_t)C, (enum kbfs_xmode)x->algo.exchange, x->algo.compress, x->d);
	t->ctl_alltoall_u64(t, KBFS_ROW, x->d, x->rd);
	size_t *sc = x->cnt, *sd = sc + C, *rc = sd + C, *rdp = rc + C;
	uint64_t sent = 0;
	for (int m = 0; m < C; m++) {
		sc[m] = kbfs_desc_bytes(x->d[m]);
		rc[m] = kbfs_desc_bytes(x->rd[m]);
		sd[m] = rdp[m] = (size_t)m * x->wire_cap;
		if (m != me)
			sent += sc[m];
	}
	t->alltoallv(t, KBFS_ROW, B(x, KBFS_WSEND), sc, sd, B(x, KBFS_WRECV), rc, rdp);
	e->unpack(e, KBFS_WRECV, x->wire_cap, (size_t)C, x->rd, KBFS_RECV, KBFS_M_OR_ALL);
	return sent;
}

static uint64_t share_visited(kbfs_ctx *x)
{
	kbfs_transport *t = x->t;
	int C = x->b->g.C;
	if (!x->algo.sv || C == 1)
		return 0;
	if (x->algo.exchange == KBFS_X_BITMAP) {
		/* the owners' visited bitmaps are the union of every row's
		 * visited rows, so they replace ROWVIS without a merge */
		t->allgather(t, KBFS_ROW, B(x, KBFS_OWNVIS), seg_bytes(x), B(x, KBFS_ROWVIS));
		return seg_bytes(x) * (uint64_t)(C - 1);
	}
	return gather_front(x, KBFS_ROW, KBFS_ROWVIS, KBFS_M_OR);
}

static kbfs_level *new_level(kbfs_ctx *x)
{
	if (x->nlv == x->lvcap) {
		x->lvcap = x->lvcap ? 2 * x->lvcap : 32;
		x->lv = krealloc(x->lv, x->lvcap * sizeof *x->lv);
	}
	kbfs_level *l = &x->lv[x->nlv++];
	memset(l, 0, sizeof *l);
	return l;
}

/* Phase times of the levels whose marks are still in the ring. */
static void level_times(kbfs_ctx *x)
{
	kbfs_engine *e = x->e;
	e->sync(e);
	for (; x->ntimed < x->nlv; x->ntimed++) {
		const int m = (int)(x->ntimed % KBFS_MARK_LEVELS) * KBFS_MARKS_LEVEL;
		for (int k = 0; k < KBFS_PH_ALLREDUCE; k++)
			x->lv[x->ntimed].time[k] = e->elapsed(e, m + k, m + k + 1);
	}
}

static int choose_direction(kbfs_ctx *x, int dir, uint64_t nf, uint64_t prev_nf, uint64_t mf, uint64_t mu)
{
	if (x->algo.direction != KBFS_DIR_AUTO)
		return x->algo.direction;
	double n = (double)x->b->g.nv;
	if (dir == KBFS_DIR_TD && (double)mf > (double)mu / x->algo.alpha)
		return KBFS_DIR_BU;
	if (dir == KBFS_DIR_BU && nf < prev_nf && (double)nf < n / x->algo.beta)
		return KBFS_DIR_TD;
	return dir;
}

int kbfs_bu_substeps_on(const kbfs_ctx *x)
{
	/* the device-resident levels (lv_*) pass the ring themselves */
	return x->b && x->e && x->t && x->algo.bu_substeps && x->b->g.C > 1 && x->e->bu_substep &&
	       (!x->t->lv_update || x->t->lv_ring_give);
}

/* A bottom-up level in C sub-steps (--bu-substeps; Beamer's and Yasui's
 * 2D bottom-up): in sub-step s, P(i,j) scans row segment (j + s) mod C,
 * the rows of P(i,(j+s) mod C), against its own columns, skipping the
 * rows that the ranks before it in the ring found this level: after each
 * sub-step it passes the segment's visited bits to its left neighbour
 * P(i,j-1), which takes that segment next.  A row is thus scanned only
 * until one column block holds a parent, and found by one rank only.
 * Returns the bytes the ring sent through the host-driven transport (the
 * device-resident ring, lv_ring_*, counts its own with the fold's). */
static uint64_t bu_substeps(kbfs_ctx *x, uint64_t level, uint64_t nf, kbfs_step *st)
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	const int C = x->b->g.C, j = x->b->j, left = (j + C - 1) % C, right = (j + 1) % C;
	const size_t sb = seg_bytes(x);
	size_t *sc = x->cnt, *sd = sc + C, *rc = sd + C, *rdp = rc + C;
	const int dev = t->lv_update != NULL; /* the device-resident ring, its bytes counted there */
	uint64_t sent = 0;
	memset(st, 0, sizeof *st);
	/* the ring through the host-driven transport: one block to the left,
	 * one from the right (sd[left] set per sub-step) */
	for (int k = 0; k < C; k++)
		sc[k] = sd[k] = rc[k] = rdp[k] = 0;
	sc[left] = sb;
	rc[right] = sb;
	for (int s = 0; s < C; s++) {
		const int seg = (j + s) % C;
		kbfs_step one;
		if (dev && s)
			t->lv_ring_take(t, s, seg);
		e->bu_substep(e, level, nf, seg, !dev && s ? B(x, KBFS_XRECV) : NULL, &one);
		st->found += one.found;
		st->examined += one.examined;
		if (s == C - 1)
			break;
		if (dev) {
			t->lv_ring_give(t, s, seg);
			continue;
		}
		/* this segment's visited rows to the left; the right one's segment,
		 * the next to take here, into XRECV (free until the fold) */
		sd[left] = (size_t)seg * sb;
		t->alltoallv(t, KBFS_ROW, B(x, KBFS_ROWVIS), sc, sd, B(x, KBFS_XRECV), rc, rdp);
		sent += sb;
	}
	return sent;
}

/* The local step of a level (direction dir), timed from mark m + 1 to m + 2.
 * Returns the bytes of bottom-up sub-steps' ring (0 without). */
static uint64_t local_step(kbfs_ctx *x, int dir, uint64_t level, uint64_t nf, int m, kbfs_step *st)
{
	kbfs_engine *e = x->e;
	uint64_t ring = 0;
	e->mark(e, m + 1);
	if (dir == KBFS_DIR_BU && kbfs_bu_substeps_on(x))
		ring = bu_substeps(x, level, nf, st);
	else if (dir == KBFS_DIR_BU)
		e->bottom_up(e, level, nf, st);
	else
		e->top_down(e, level, nf, st);
	e->mark(e, m + 2);
	return ring;
}

/* One level driven from the host: the exchanges through the transport's
 * collectives, sized by control exchanges.  Returns the seconds of the
 * closing allreduce (a host call, timed on the host's clock); cnt as in
 * level_on_device. */
static double level_on_host(kbfs_ctx *x, int dir, uint64_t level, uint64_t nf, int m, uint64_t cnt[6])
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	kbfs_step st, up;
	e->mark(e, m + 0);
	cnt[3 + KBFS_XG_EXPAND] = expand(x);
	const uint64_t ring = local_step(x, dir, level, nf, m, &st);
	cnt[3 + KBFS_XG_FOLD] = fold(x) + ring;
	e->mark(e, m + 3);
	e->update(e, &up);
	x->front_packed = 0;
	e->mark(e, m + 4);
	cnt[3 + KBFS_XG_SV] = share_visited(x);
	e->mark(e, m + 5);
	double t5 = ktime();
	cnt[0] = up.found;
	cnt[1] = up.tdeg;
	cnt[2] = st.examined + up.examined;
	t->ctl_allreduce_sum_u64(t, KBFS_WORLD, cnt, 6);
	return ktime() - t5;
}

/* One level through the transport's device-resident exchanges (kengine.h
 * lv_*): the expand of this level left with the last update (or
 * lv_start), the shared visited bits leave with this one, and the wait
 * for every rank ends it, so its phases are local, fold (the push of
 * ROWNEXT's segments) and update (the merge, the owner update, both
 * pushes and the wait); expand, sv and allreduce stay 0.  cnt: found,
 * tdeg, examined, bytes of expand, fold, sv. */
static void level_on_device(kbfs_ctx *x, int dir, uint64_t level, uint64_t nf, int m, uint64_t cnt[6])
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	kbfs_step st;
	e->mark(e, m + 0);
	local_step(x, dir, level, nf, m, &st);
	t->lv_fold(t, level);
	e->mark(e, m + 3);
	t->lv_update(t, level, x->algo.sv, st.examined);
	e->mark(e, m + 4);
	e->mark(e, m + 5);
	t->lv_counts(t, cnt);
}

/* Top-down levels the engine runs by itself (kengine.h td_run, one rank; or
 * the transport's lv_td_run, every rank): their records, as the loop would
 * have made them, the expansion's time as local and the owner update's
 * (with the round between the ranks) as update.  Returns the levels run (0: none);
 * *level, *nf, *prev_nf, *mf, *mu move past them. */
static int levels_on_engine(kbfs_ctx *x, uint64_t *level, uint64_t *nf, uint64_t *prev_nf, uint64_t *mf,
			    uint64_t *mu)
{
	enum { MAXRUN = 64 };
	kbfs_lrec rec[MAXRUN];
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	const double alpha = x->algo.direction == KBFS_DIR_AUTO ? x->algo.alpha : 0;
	/* no level past the packed entries' limit (the loop's own check is at
	 * each level's start, which these do not pass through) */
	const uint64_t room = KBFS_MAX_LEVEL - *level + 1;
	const int max = room < MAXRUN ? (int)room : MAXRUN;
	int k = t->lv_td_run ? t->lv_td_run(t, *level, *nf, *mu, alpha, max, rec)
			     : e->td_run(e, *level, *nf, *mu, alpha, max, rec);
	KASSERT(k >= 0 && k <= max);
	if (!k)
		return 0; /* declined: the levels before keep their marks, read later */
	level_times(x); /* the levels before have their marks read before these join them */
	for (int j = 0; j < k; j++) {
		kbfs_level *l = new_level(x);
		l->level = (uint32_t)(*level + (uint64_t)j);
		l->dir = KBFS_DIR_TD;
		l->frontier = *nf;
		l->found = rec[j].found;
		l->examined = rec[j].examined;
		l->bytes[KBFS_XG_EXPAND] = rec[j].bexpand;
		l->time[KBFS_PH_LOCAL] = rec[j].t_local;
		l->time[KBFS_PH_UPDATE] = rec[j].t_update;
		*prev_nf = *nf;
		*nf = rec[j].found;
		*mf = rec[j].tdeg;
		*mu = *mu > *mf ? *mu - *mf : 0;
		x->reached += *nf;
		x->tdeg_reached += *mf;
	}
	x->ntimed = x->nlv; /* these timed here, without marks */
	*level += (uint64_t)k;
	return k;
}

int kbfs_search(kbfs_ctx *x, uint64_t root, uint64_t root_tdeg)
{
	kbfs_engine *e = x->e;
	kbfs_transport *t = x->t;
	x->nlv = 0;
	x->ntimed = 0;
	x->front_packed = 0;
	e->reset(e, root);
	const int dev = t->lv_update != NULL;
	if (dev)
		t->lv_start(t);
	uint64_t nf = 1, prev_nf = 0, mf = root_tdeg, mu = x->tdeg_total - root_tdeg;
	x->reached = 1;
	x->tdeg_reached = root_tdeg;
	int dir = x->algo.direction == KBFS_DIR_BU ? KBFS_DIR_BU : KBFS_DIR_TD;
	const int on_engine = dev ? t->lv_td_run != NULL : e->td_run && t->size(t, KBFS_WORLD) == 1;
	for (uint64_t level = 1;; level++) {
		if (on_engine && level <= KBFS_MAX_LEVEL &&
		    choose_direction(x, dir, nf, prev_nf, mf, mu) == KBFS_DIR_TD &&
		    levels_on_engine(x, &level, &nf, &prev_nf, &mf, &mu)) {
			dir = KBFS_DIR_TD;
			if (nf == 0)
				break;
			level--; /* the loop's step brings it to the next one to run */
			continue;
		}
		if (level > KBFS_MAX_LEVEL) {
			/* every rank gets here at the same level */
			kerror("root %llu: the search is deeper than %u levels (the limit of the packed "
			       "predecessor entries)", (unsigned long long)x->root_label, KBFS_MAX_LEVEL);
			return KEXIT_DATA;
		}
		kbfs_level *l = new_level(x);
		dir = choose_direction(x, dir, nf, prev_nf, mf, mu);
		l->level = (uint32_t)level;
		l->dir = dir;
		l->frontier = nf;
		/* the phases are timed by the engine's marks (device events on a
		 * GPU), read after the search, so a level waits for the device
		 * once: in update(), or in lv_counts() */
		const int m = (int)((x->nlv - 1) % KBFS_MARK_LEVELS) * KBFS_MARKS_LEVEL;
		uint64_t cnt[6]; /* found, tdeg, examined, bytes of expand, fold, sv */
		if (dev)
			level_on_device(x, dir, level, nf, m, cnt);
		else
			l->time[KBFS_PH_ALLREDUCE] = level_on_host(x, dir, level, nf, m, cnt);
		l->found = cnt[0];
		l->examined = cnt[2];
		for (int k = 0; k < KBFS_NXCHG; k++)
			l->bytes[k] = cnt[3 + k];
		if (x->nlv % KBFS_MARK_LEVELS == 0)
			level_times(x); /* the ring of marks is full */
		prev_nf = nf;
		nf = cnt[0];
		mf = cnt[1];
		mu = mu > mf ? mu - mf : 0;
		x->reached += nf;
		x->tdeg_reached += mf;
		if (nf == 0)
			break;
	}
	double tp = ktime();
	e->finish(e);
	if (dev)
		t->lv_pred(t);
	else
		t->reduce_scatter_min_u64(t, KBFS_ROW, B(x, KBFS_PL), B(x, KBFS_PRED), x->b->g.nb);
	e->sync(e);
	x->pred_time = ktime() - tp;
	return 0;
}

/* With verbose: each phase summed over the search's levels, the least
 * and the most of any rank (the JSON's times are rank 0's), on rank 0.
 * Collective. */
static void phase_spread(kbfs_ctx *x)
{
	kbfs_transport *t = x->t;
	const int n = t->size(t, KBFS_WORLD), me = t->rank(t, KBFS_WORLD);
	uint64_t *all = kcalloc((size_t)n, sizeof *all);
	double lo[KBFS_NPHASE + 1], hi[KBFS_NPHASE + 1];
	for (int p = 0; p <= KBFS_NPHASE; p++) {
		double s = 0;
		if (p < KBFS_NPHASE)
			for (size_t k = 0; k < x->nlv; k++)
				s += x->lv[k].time[p];
		else
			s = x->pred_time;
		t->ctl_allgather_u64(t, KBFS_WORLD, (uint64_t)(s * 1e9 + 0.5), all);
		lo[p] = hi[p] = (double)all[0] / 1e9;
		for (int r = 1; r < n; r++) {
			double v = (double)all[r] / 1e9;
			lo[p] = v < lo[p] ? v : lo[p];
			hi[p] = v > hi[p] ? v : hi[p];
		}
	}
	free(all);
	if (me != 0 || n == 1)
		return;
	char buf[512];
	size_t at = 0;
	for (int p = 0; p <= KBFS_NPHASE; p++)
		at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s %.1f-%.1f", p ? ", " : "",
				       p < KBFS_NPHASE ? kbfs_phase_names[p] : "predecessors", lo[p] * 1e6, hi[p] * 1e6);
	kinfo("root %llu: us per search over the ranks (least-most): %s", (unsigned long long)x->root_label, buf);
}

void kbfs_search_finish(kbfs_ctx *x)
{
	level_times(x);
	if (x->verbose)
		phase_spread(x);
	if (!x->verbose || x->t->rank(x->t, KBFS_WORLD) != 0)
		return;
	for (size_t k = 0; k < x->nlv; k++) {
		const kbfs_level *l = &x->lv[k];
		double tl = 0;
		for (int p = 0; p < KBFS_NPHASE; p++)
			tl += l->time[p];
		kinfo("root %llu level %u %s: frontier %llu found %llu examined %llu bytes %llu/%llu/%llu time %.6f s",
		      (unsigned long long)x->root_label, l->level, kbfs_dir_name(l->dir), (unsigned long long)l->frontier,
		      (unsigned long long)l->found, (unsigned long long)l->examined, (unsigned long long)l->bytes[0],
		      (unsigned long long)l->bytes[1], (unsigned long long)l->bytes[2], tl);
	}
}

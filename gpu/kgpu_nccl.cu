// kgpu_nccl: the NCCL transport — data exchanges between device buffers.
//
// Set-up builds the processor row and column of P(i,j) as kcomm
// communicators (row: ranks with my i ordered by j; column: my j ordered
// by i), and for each one whose ranks sit on distinct GPUs an NCCL
// communicator: rank 0 of the axis makes the unique id, kcomm_bcast
// carries it, ncclCommInitRank joins.  NCCL refuses two ranks of one
// communicator on one GPU, so an axis whose ranks share a GPU, the WORLD
// axis and every control exchange go through the MPI transport of
// kbfs_xchg.c, which stages device buffers through host memory.
// Allgather and reduce-scatter are NCCL collectives; allgatherv and
// alltoall(v) are grouped ncclSend/ncclRecv (ncclGroupStart/End), the
// block of a rank to itself a device copy.  Everything is queued on the
// engine's stream, so it is ordered with the engine's kernels; the engine
// waits for it when the host next needs a value.
#include "kgpu_internal.cuh"

#include <stdlib.h>
#include <string.h>

#include "kbuild.h"

#if KBUILD_NCCL
#include <nccl.h>

#define NCCL_CHECK(call) kgpu_nccl_check((call), #call, __FILE__, __LINE__)
static void kgpu_nccl_check(ncclResult_t r, const char *what, const char *file, int line)
{
	if (r == ncclSuccess)
		return;
	char why[512];
	const char *last = ncclGetLastError(NULL);
	snprintf(why, sizeof why, "%s%s%s", ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
	kgpu_fail(what, file, line, why);
}

namespace {

struct nccl_axis {
	kcomm *kc;
	ncclComm_t comm;
	int use; // NCCL carries this axis's data
	int size, rank;
};

struct nccl_tp {
	kbfs_transport mpi; // control exchanges, WORLD, axes on shared GPUs
	kbfs_engine *e;
	nccl_axis ax[2]; // [0] column, [1] row
	kgpu_peer *peer; // device-resident levels (kgpu_peer.cu), when every rank can
};

nccl_tp *tp_of(kbfs_transport *t) { return (nccl_tp *)t->impl; }

nccl_axis *axis_of(nccl_tp *tp, enum kbfs_axis a)
{
	if (a == KBFS_COL)
		return &tp->ax[0];
	if (a == KBFS_ROW)
		return &tp->ax[1];
	return NULL;
}

cudaStream_t stream_of(nccl_tp *tp)
{
	kgpu_state *st = kgpu_state_of(tp->e);
	if (!st || !st->s)
		KBUG("nccl transport used before the cuda engine's setup");
	return kgpu_queue(st);
}

void dcopy(cudaStream_t s, void *dst, const void *src, size_t bytes)
{
	if (bytes && dst != src)
		CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
}

// Grouped point-to-point exchange: block k of send (scounts[k] bytes at
// sdispls[k]) to rank k, block k of recv from rank k.
void exchange(nccl_axis *ax, cudaStream_t s, const void *send, const size_t *scounts, const size_t *sdispls,
	      void *recv, const size_t *rcounts, const size_t *rdispls)
{
	const char *sb = (const char *)send;
	char *rb = (char *)recv;
	if (rcounts[ax->rank] != scounts[ax->rank])
		KBUG("self block of %zu bytes received as %zu", scounts[ax->rank], rcounts[ax->rank]);
	dcopy(s, rb + rdispls[ax->rank], sb + sdispls[ax->rank], scounts[ax->rank]);
	NCCL_CHECK(ncclGroupStart());
	for (int k = 0; k < ax->size; k++) {
		if (k == ax->rank)
			continue;
		if (scounts[k])
			NCCL_CHECK(ncclSend(sb + sdispls[k], scounts[k], ncclUint8, k, ax->comm, s));
		if (rcounts[k])
			NCCL_CHECK(ncclRecv(rb + rdispls[k], rcounts[k], ncclUint8, k, ax->comm, s));
	}
	NCCL_CHECK(ncclGroupEnd());
}

// ---- the transport functions ------------------------------------------------------

void tp_lv_start(kbfs_transport *t) { kgpu_peer_start(tp_of(t)->peer); }
void tp_lv_fold(kbfs_transport *t, uint64_t level) { kgpu_peer_fold(tp_of(t)->peer, level); }
void tp_lv_update(kbfs_transport *t, uint64_t level, int sv, uint64_t examined)
{
	kgpu_peer_update(tp_of(t)->peer, level, sv, examined);
}
void tp_lv_counts(kbfs_transport *t, uint64_t cnt[6]) { kgpu_peer_counts(tp_of(t)->peer, cnt); }
void tp_lv_pred(kbfs_transport *t) { kgpu_peer_pred(tp_of(t)->peer); }
void tp_lv_ring_give(kbfs_transport *t, int s, int seg) { kgpu_peer_ring_give(tp_of(t)->peer, s, seg); }
void tp_lv_ring_take(kbfs_transport *t, int s, int seg) { kgpu_peer_ring_take(tp_of(t)->peer, s, seg); }
int tp_lv_td_run(kbfs_transport *t, uint64_t level, uint64_t nf, uint64_t mu, double alpha, int max, kbfs_lrec *rec)
{
	return kgpu_peer_td_loop(tp_of(t)->peer, level, nf, mu, alpha, max, rec);
}

int tp_setup(kbfs_transport *t, kcomm *world, int R, int C, kbfs_engine *e)
{
	nccl_tp *tp = tp_of(t);
	if (!e || !e->name || strcmp(e->name, "cuda") != 0) {
		kerror("the nccl transport needs the cuda engine (this one is '%s'): use --transport mpi",
		       e && e->name ? e->name : "?");
		return KEXIT_USAGE;
	}
	tp->e = e;
	int rc = kgpu_bind(NULL);
	if (rc)
		return rc;
	if (setenv("NCCL_NVLS_ENABLE", "0", 0) != 0)
		kwarn("cannot set NCCL_NVLS_ENABLE=0");
	kinfo("nccl: NCCL_NVLS_ENABLE=%s, NCCL %d.%d.%d headers", getenv("NCCL_NVLS_ENABLE"), NCCL_MAJOR, NCCL_MINOR,
	      NCCL_PATCH);
	kbfs_transport_mpi(&tp->mpi);
	rc = tp->mpi.setup(&tp->mpi, world, R, C, e);
	if (rc)
		return rc;
	const int rank = kcomm_rank(world), i = rank / C, j = rank % C;
	tp->ax[0].kc = kcomm_split(world, j, i);
	tp->ax[1].kc = kcomm_split(world, i, j);
	static const char *const name[2] = {"column", "row"};
	for (int a = 0; a < 2; a++) {
		nccl_axis *ax = &tp->ax[a];
		ax->size = kcomm_size(ax->kc);
		ax->rank = kcomm_rank(ax->kc);
		if (ax->size == 1)
			continue;
		u64 key = kgpu_gpu_key();
		u64 *keys = (u64 *)kcalloc((size_t)ax->size, sizeof *keys);
		kcomm_allgather(ax->kc, &key, sizeof key, keys);
		int distinct = 1;
		for (int x = 0; x < ax->size; x++)
			for (int y = x + 1; y < ax->size; y++)
				distinct &= keys[x] != keys[y];
		free(keys);
		ax->use = distinct;
		if (!distinct) {
			kinfo("nccl: %s axis (%d ranks) shares GPUs: its data goes through MPI with host staging",
			      name[a], ax->size);
			continue;
		}
		ncclUniqueId id;
		memset(&id, 0, sizeof id);
		if (ax->rank == 0)
			NCCL_CHECK(ncclGetUniqueId(&id));
		kcomm_bcast(ax->kc, &id, sizeof id, 0);
		NCCL_CHECK(ncclCommInitRank(&ax->comm, ax->size, id, ax->rank));
		kinfo("nccl: %s axis: NCCL communicator of %d ranks, I am %d", name[a], ax->size, ax->rank);
	}
	// connect every pair now (NCCL connects lazily, on the first exchange)
	for (int a = 0; a < 2; a++) {
		nccl_axis *ax = &tp->ax[a];
		if (!ax->use)
			continue;
		cudaStream_t s;
		CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		size_t n = (size_t)ax->size;
		char *buf;
		CUDA_CHECK(cudaMalloc((void **)&buf, 2 * n * 8));
		CUDA_CHECK(cudaMemsetAsync(buf, 0, 2 * n * 8, s));
		size_t *cnt = (size_t *)kcalloc(2 * n, sizeof *cnt);
		for (size_t k = 0; k < n; k++) {
			cnt[k] = 8;
			cnt[n + k] = 8 * k;
		}
		exchange(ax, s, buf, cnt, cnt + n, buf + 8 * n, cnt, cnt + n);
		CUDA_CHECK(cudaStreamSynchronize(s));
		CUDA_CHECK(cudaFree(buf));
		CUDA_CHECK(cudaStreamDestroy(s));
		free(cnt);
	}
	rc = kgpu_peer_setup(kgpu_state_of(e), world, &tp->peer);
	if (rc)
		return rc;
	if (tp->peer) {
		t->name = "peer";
		t->lv_start = tp_lv_start;
		t->lv_fold = tp_lv_fold;
		t->lv_update = tp_lv_update;
		t->lv_counts = tp_lv_counts;
		t->lv_pred = tp_lv_pred;
		if (C > 1) {
			t->lv_ring_give = tp_lv_ring_give;
			t->lv_ring_take = tp_lv_ring_take;
		} else if (kgpu_state_of(e)->o.td_loop) {
			t->lv_td_run = tp_lv_td_run; // KBFS_CUDA_TD_LOOP=1: the experiment
		}
	}
	return 0;
}

void tp_teardown(kbfs_transport *t)
{
	nccl_tp *tp = tp_of(t);
	if (!tp)
		return;
	kgpu_peer_teardown(tp->peer);
	tp->peer = NULL;
	for (int a = 0; a < 2; a++) {
		if (tp->ax[a].use && tp->ax[a].comm)
			NCCL_CHECK(ncclCommDestroy(tp->ax[a].comm));
		if (tp->ax[a].kc)
			kcomm_free(tp->ax[a].kc);
	}
	if (tp->mpi.teardown)
		tp->mpi.teardown(&tp->mpi);
	free(tp);
	t->impl = NULL;
}

int tp_size(kbfs_transport *t, enum kbfs_axis a)
{
	nccl_tp *tp = tp_of(t);
	return tp->mpi.size(&tp->mpi, a);
}

int tp_rank(kbfs_transport *t, enum kbfs_axis a)
{
	nccl_tp *tp = tp_of(t);
	return tp->mpi.rank(&tp->mpi, a);
}

void tp_allgather(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes, void *recv)
{
	nccl_tp *tp = tp_of(t);
	nccl_axis *ax = axis_of(tp, a);
	if (!ax || (ax->size > 1 && !ax->use))
		return tp->mpi.allgather(&tp->mpi, a, send, bytes, recv);
	cudaStream_t s = stream_of(tp);
	if (ax->size == 1)
		return dcopy(s, recv, send, bytes);
	if (bytes)
		NCCL_CHECK(ncclAllGather(send, recv, bytes, ncclUint8, ax->comm, s));
}

void tp_allgatherv(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes, void *recv,
		   const size_t *counts, const size_t *displs)
{
	nccl_tp *tp = tp_of(t);
	nccl_axis *ax = axis_of(tp, a);
	if (!ax || (ax->size > 1 && !ax->use))
		return tp->mpi.allgatherv(&tp->mpi, a, send, bytes, recv, counts, displs);
	cudaStream_t s = stream_of(tp);
	if (counts[ax->rank] != bytes)
		KBUG("allgatherv: sending %zu bytes, my count says %zu", bytes, counts[ax->rank]);
	if (ax->size == 1)
		return dcopy(s, (char *)recv + displs[0], send, bytes);
	size_t *sc = (size_t *)kcalloc(2 * (size_t)ax->size, sizeof *sc);
	for (int k = 0; k < ax->size; k++)
		sc[k] = bytes; // sdispls (sc + size) stay 0: the same block to everyone
	exchange(ax, s, send, sc, sc + ax->size, recv, counts, displs);
	free(sc);
}

void tp_alltoall(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes_each, void *recv)
{
	nccl_tp *tp = tp_of(t);
	nccl_axis *ax = axis_of(tp, a);
	if (!ax || (ax->size > 1 && !ax->use))
		return tp->mpi.alltoall(&tp->mpi, a, send, bytes_each, recv);
	cudaStream_t s = stream_of(tp);
	if (ax->size == 1)
		return dcopy(s, recv, send, bytes_each);
	size_t *c = (size_t *)kcalloc(2 * (size_t)ax->size, sizeof *c);
	for (int k = 0; k < ax->size; k++) {
		c[k] = bytes_each;
		c[ax->size + k] = bytes_each * (size_t)k;
	}
	exchange(ax, s, send, c, c + ax->size, recv, c, c + ax->size);
	free(c);
}

void tp_alltoallv(kbfs_transport *t, enum kbfs_axis a, const void *send, const size_t *scounts, const size_t *sdispls,
		  void *recv, const size_t *rcounts, const size_t *rdispls)
{
	nccl_tp *tp = tp_of(t);
	nccl_axis *ax = axis_of(tp, a);
	if (!ax || (ax->size > 1 && !ax->use))
		return tp->mpi.alltoallv(&tp->mpi, a, send, scounts, sdispls, recv, rcounts, rdispls);
	exchange(ax, stream_of(tp), send, scounts, sdispls, recv, rcounts, rdispls);
}

void tp_reduce_scatter_min_u64(kbfs_transport *t, enum kbfs_axis a, const uint64_t *send, uint64_t *recv,
			       size_t n_each)
{
	nccl_tp *tp = tp_of(t);
	nccl_axis *ax = axis_of(tp, a);
	if (!ax || (ax->size > 1 && !ax->use))
		return tp->mpi.reduce_scatter_min_u64(&tp->mpi, a, send, recv, n_each);
	cudaStream_t s = stream_of(tp);
	if (ax->size == 1)
		return dcopy(s, recv, send, n_each * 8);
	if (n_each)
		NCCL_CHECK(ncclReduceScatter(send, recv, n_each, ncclUint64, ncclMin, ax->comm, s));
}

void tp_ctl_allgather_u64(kbfs_transport *t, enum kbfs_axis a, uint64_t v, uint64_t *all)
{
	nccl_tp *tp = tp_of(t);
	tp->mpi.ctl_allgather_u64(&tp->mpi, a, v, all);
}

void tp_ctl_alltoall_u64(kbfs_transport *t, enum kbfs_axis a, const uint64_t *send, uint64_t *recv)
{
	nccl_tp *tp = tp_of(t);
	tp->mpi.ctl_alltoall_u64(&tp->mpi, a, send, recv);
}

void tp_ctl_allreduce_sum_u64(kbfs_transport *t, enum kbfs_axis a, uint64_t *v, size_t n)
{
	nccl_tp *tp = tp_of(t);
	tp->mpi.ctl_allreduce_sum_u64(&tp->mpi, a, v, n);
}

void tp_barrier(kbfs_transport *t, enum kbfs_axis a)
{
	nccl_tp *tp = tp_of(t);
	tp->mpi.barrier(&tp->mpi, a);
}

} // namespace

extern "C" int kgpu_transport_nccl(kbfs_transport *t)
{
	memset(t, 0, sizeof *t);
	nccl_tp *tp = (nccl_tp *)kcalloc(1, sizeof *tp);
	t->name = "nccl";
	t->impl = tp;
	t->setup = tp_setup;
	t->teardown = tp_teardown;
	t->size = tp_size;
	t->rank = tp_rank;
	t->allgather = tp_allgather;
	t->allgatherv = tp_allgatherv;
	t->alltoall = tp_alltoall;
	t->alltoallv = tp_alltoallv;
	t->reduce_scatter_min_u64 = tp_reduce_scatter_min_u64;
	t->ctl_allgather_u64 = tp_ctl_allgather_u64;
	t->ctl_alltoall_u64 = tp_ctl_alltoall_u64;
	t->ctl_allreduce_sum_u64 = tp_ctl_allreduce_sum_u64;
	t->barrier = tp_barrier;
	return 0;
}

#else // no NCCL in this build

extern "C" int kgpu_transport_nccl(kbfs_transport *t)
{
	memset(t, 0, sizeof *t);
	kerror("this build has no NCCL transport (nccl.h was not found): use --transport mpi");
	return KEXIT_USAGE;
}

#endif

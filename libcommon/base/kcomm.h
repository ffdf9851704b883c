/*
 * kcomm: the MPI layer.  Every message between ranks goes through here.
 *
 * Owns MPI start-up and shutdown, communicators (world, the processor row
 * and column of the 2D grid), 64-bit-safe collectives (counts and
 * displacements are size_t bytes; anything beyond INT_MAX is split or sent
 * with a chunked datatype) and the fatal-error path: once MPI is up with
 * more than one rank, kdie() ends the whole job with MPI_Abort.
 * Built without MPI (MPI=0) every program runs as a single rank and the
 * collectives are local copies.  MPI is only initialised when the process
 * was started by a launcher (mpirun/srun) or kcomm_init is asked to force
 * it, so serial use of kgen/kstat costs nothing.
 * Every MPI call is checked; a failure names the rank, host, file and line.
 */
#ifndef KCOMM_H
#define KCOMM_H

#include <stddef.h>
#include <stdint.h>

typedef struct kcomm kcomm;

enum kcomm_op { KCOMM_SUM, KCOMM_MAX, KCOMM_MIN, KCOMM_BOR };

/* Start MPI when launched by mpirun (or always when force).  Sets the
 * rank prefix of messages.  Returns the world communicator. */
kcomm *kcomm_init(int *argc, char ***argv, int force);
void kcomm_finalize(void);
/* 1 when MPI is running (even with one rank). */
int kcomm_active(void);
int kcomm_rank(const kcomm *c);
int kcomm_size(const kcomm *c);
kcomm *kcomm_world(void);
const char *kcomm_host(void);
/* 1 when every rank of c runs on rank 0's host (its name, kcomm_host), the
 * same answer on every rank (collective). */
int kcomm_one_host(kcomm *c);
/* How many ranks of c run on this rank's host (its own included), by the
 * hosts' names (collective). */
int kcomm_host_ranks(kcomm *c);
/* Memory every rank of c can address (ranks on one host: kcomm_one_host;
 * collective; MPI-3 shared windows): bytes of its own on each rank, rank
 * r's at peers[r] (c's size of them; NULL for 0 bytes).  Freed by
 * kcomm_shared_free, collective too.  Without MPI, or with one rank,
 * plain memory. */
typedef struct kcomm_shared kcomm_shared;
kcomm_shared *kcomm_shared_alloc(kcomm *c, size_t bytes, void **peers);
void kcomm_shared_free(kcomm *c, kcomm_shared *w);
/* kcomm_reduce_scatter_u64's sum and kcomm_allgather for ranks on one host,
 * through a shared window on all threads rather than MPI's one thread a
 * rank (for arrays of many MB).  Collective. */
void kcomm_shared_sum_scatter_u64(kcomm *c, const uint64_t *send, uint64_t *recv, size_t n_each);
void kcomm_shared_allgather(kcomm *c, const void *send, size_t bytes_each, void *recv);
/* Node-local rank (ranks sharing this host), for choosing a GPU. */
int kcomm_local_rank(void);
/* Whether to show progress on stderr: it is a terminal (klog_progress_ok),
 * or, under an MPI launcher (which forwards a rank's stderr through a pipe),
 * the job was started from a terminal (the rank has a controlling one). */
int kcomm_progress_ok(void);
/* The MPI library's version (MPI_Get_library_version, its first line), or
 * "none (built without MPI)".  Callable before kcomm_init. */
void kcomm_library_version(char *buf, size_t len);
/* Split c by color; ranks ordered by key. */
kcomm *kcomm_split(kcomm *c, int color, int key);
void kcomm_free(kcomm *c);
/* The MPI_Comm behind c (as a pointer to it), for code that calls MPI
 * directly (NCCL set-up); NULL when built without MPI. */
void *kcomm_mpi_handle(kcomm *c);

void kcomm_barrier(kcomm *c);
void kcomm_bcast(kcomm *c, void *buf, size_t bytes, int root);
void kcomm_allreduce_u64(kcomm *c, uint64_t *buf, size_t n, enum kcomm_op op);
void kcomm_allreduce_i64(kcomm *c, int64_t *buf, size_t n, enum kcomm_op op);
void kcomm_allreduce_double(kcomm *c, double *buf, size_t n, enum kcomm_op op);
/* Bitwise-OR/min reduce-scatter of equal blocks: each rank gets block[rank]. */
void kcomm_reduce_scatter_u64(kcomm *c, const uint64_t *send, uint64_t *recv, size_t n_each, enum kcomm_op op);
/* Every rank sends bytes_each; recv holds size*bytes_each in rank order. */
void kcomm_allgather(kcomm *c, const void *send, size_t bytes_each, void *recv);
/* Variable sizes in bytes; displs in bytes. */
void kcomm_allgatherv(kcomm *c, const void *send, size_t bytes, void *recv, const size_t *counts,
		      const size_t *displs);
void kcomm_alltoall(kcomm *c, const void *send, size_t bytes_each, void *recv);
void kcomm_alltoallv(kcomm *c, const void *send, const size_t *scounts, const size_t *sdispls, void *recv,
		     const size_t *rcounts, const size_t *rdispls);
/* Gather variable-sized blocks on root (recv/counts/displs used on root). */
void kcomm_gatherv(kcomm *c, const void *send, size_t bytes, void *recv, const size_t *counts,
		   const size_t *displs, int root);
/* Tags of the point-to-point messages, one per kind, so that no two
 * exchanges can take each other's messages. */
enum kcomm_tag {
	KCOMM_TAG_GENERATE = 1,    /* kgenrun: generated edges to rank 0 */
	KCOMM_TAG_SCATTER = 8,     /* kdist: rank 0's slices of an imported graph */
	KCOMM_TAG_GATHERV = 78,    /* kcomm_gatherv of blocks over 2 GiB */
	KCOMM_TAG_DEAL_HEAD = 91,  /* kdist_deal: a chunk's size, or the end and its code */
	KCOMM_TAG_DEAL_DATA = 92,  /* kdist_deal: a chunk's tuples */
};
void kcomm_send(kcomm *c, const void *buf, size_t bytes, int dest, int tag);
void kcomm_recv(kcomm *c, void *buf, size_t bytes, int src, int tag);

/* The CRC-32 of every rank's piece joined in rank order, from each rank's
 * crc and length (the same value on every rank). */
uint32_t kcomm_crc32_concat(kcomm *c, uint32_t crc, uint64_t len);

/* Agree on an error: every rank passes its local code (0 = fine); returns
 * the largest code seen anywhere.  Use before a step that must not start
 * when some rank failed (e.g. after loading input). */
int kcomm_agree(kcomm *c, int code);
/* End the whole job now with code (MPI_Abort when several ranks). */
_Noreturn void kcomm_abort(int code);

#endif

#include "kcomm.h"
#include "kbuild.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if KBUILD_MPI
#include <mpi.h>
#endif

struct kcomm {
	int rank, size;
#if KBUILD_MPI
	MPI_Comm comm;
#endif
};

static kcomm world_c = {.rank = 0, .size = 1};
static int mpi_on;
static char host[256];
static int local_rank;

#if KBUILD_MPI
#define MPICHECK(call) mpi_check((call), #call, __FILE__, __LINE__)
static void mpi_check(int rc, const char *what, const char *file, int line)
{
	if (rc == MPI_SUCCESS)
		return;
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	MPI_Error_string(rc, msg, &len);
	kdie(KEXIT_IO, "MPI error on %s at %s:%d in %s: %s", host, file, line, what, msg);
}

static void abort_hook(int code)
{
	if (mpi_on && world_c.size > 1)
		MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
	exit(code);
}

/* Chunk size for large transfers: 1 GiB, well inside int counts. */
enum { CHUNK = 1 << 30 };
#endif

#if KBUILD_MPI
static int launched_by_mpirun(void)
{
	static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
				     "MPI_LOCALNRANKS", "SLURM_PROCID", NULL};
	for (int i = 0; vars[i]; i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}
#else
/* How many processes the launcher started, and which one this is (0 and -1
 * when no launcher says). */
static int launcher_env(const char *const *vars)
{
	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]), *end;
		uint64_t n;
		if (v && *v)
			return knum_u64(v, &end, &n) == KNUM_OK && !*end && n <= INT_MAX ? (int)n : -1;
	}
	return -1;
}

static int launcher_size(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
	int n = launcher_env(vars);
	return n > 0 ? n : 0;
}

static int launcher_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
	return launcher_env(vars);
}
#endif

kcomm *kcomm_init(int *argc, char ***argv, int force)
{
	gethostname(host, sizeof host - 1);
#if KBUILD_MPI
	if (force || launched_by_mpirun()) {
		int provided;
		MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
		mpi_on = 1;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		world_c.comm = MPI_COMM_WORLD;
		MPI_Comm_rank(MPI_COMM_WORLD, &world_c.rank);
		MPI_Comm_size(MPI_COMM_WORLD, &world_c.size);
		klog_set_rank(world_c.rank, world_c.size);
		klog_set_exit_hook(abort_hook);
		MPI_Comm node;
		MPICHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_c.rank, MPI_INFO_NULL,
					     &node));
		MPI_Comm_rank(node, &local_rank);
		MPI_Comm_free(&node);
	}
#else
	(void)argc;
	(void)argv;
	/* copies that cannot talk to each other would each do the whole job
	 * alone (and write the same files): say why instead, once */
	int n = launcher_size();
	if (n > 1 && !force) {
		if (launcher_rank() <= 0)
			kerror("this %s was built without MPI, but %d copies were started (mpirun or srun): run one "
			       "process, or install libopenmpi-dev and rebuild (make)",
			       klog_prog(), n);
		exit(KEXIT_USAGE);
	}
#endif
	return &world_c;
}

void kcomm_finalize(void)
{
#if KBUILD_MPI
	if (mpi_on) {
		MPI_Finalize();
		mpi_on = 0;
	}
#endif
}

int kcomm_active(void) { return mpi_on; }
int kcomm_rank(const kcomm *c) { return c->rank; }
int kcomm_size(const kcomm *c) { return c->size; }
kcomm *kcomm_world(void) { return &world_c; }
const char *kcomm_host(void) { return host; }
int kcomm_local_rank(void) { return local_rank; }

int kcomm_progress_ok(void)
{
	if (klog_progress_ok())
		return 1;
	if (klog_quiet() || !mpi_on)
		return 0;
	/* mpirun forwards stderr through a pipe and gives stdout a terminal
	 * even when its own output is a file; whether the job was started
	 * from a terminal shows in the controlling terminal ranks inherit */
	int fd = open("/dev/tty", O_RDONLY | O_NOCTTY);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

void kcomm_library_version(char *buf, size_t len)
{
#if KBUILD_MPI
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	if (MPI_Get_library_version(v, &n) == MPI_SUCCESS) {
		/* the first line only (Open MPI adds its repository and date) */
		v[n < (int)sizeof v ? n : (int)sizeof v - 1] = 0;
		v[strcspn(v, "\n")] = 0;
		while (*v && strlen(v) && (v[strlen(v) - 1] == ' ' || v[strlen(v) - 1] == ','))
			v[strlen(v) - 1] = 0;
		snprintf(buf, len, "%s", v);
		return;
	}
	snprintf(buf, len, "unknown");
#else
	snprintf(buf, len, "none (built without MPI)");
#endif
}

kcomm *kcomm_split(kcomm *c, int color, int key)
{
	kcomm *n = kcalloc(1, sizeof *n);
#if KBUILD_MPI
	if (mpi_on) {
		MPICHECK(MPI_Comm_split(c->comm, color, key, &n->comm));
		MPI_Comm_set_errhandler(n->comm, MPI_ERRORS_RETURN);
		MPI_Comm_rank(n->comm, &n->rank);
		MPI_Comm_size(n->comm, &n->size);
		return n;
	}
#endif
	(void)c;
	(void)color;
	(void)key;
	n->rank = 0;
	n->size = 1;
	return n;
}

void kcomm_free(kcomm *c)
{
	if (!c || c == &world_c)
		return;
#if KBUILD_MPI
	if (mpi_on)
		MPI_Comm_free(&c->comm);
#endif
	free(c);
}

void *kcomm_mpi_handle(kcomm *c)
{
#if KBUILD_MPI
	return mpi_on ? &c->comm : NULL;
#else
	(void)c;
	return NULL;
#endif
}

_Noreturn void kcomm_abort(int code)
{
	klog_run_cleanups();
#if KBUILD_MPI
	if (mpi_on && world_c.size > 1)
		MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#endif
	exit(code);
}

#if KBUILD_MPI
#define SERIAL(c) (!mpi_on || (c)->size == 1)
#else
#define SERIAL(c) 1
#endif

void kcomm_barrier(kcomm *c)
{
#if KBUILD_MPI
	if (!SERIAL(c))
		MPICHECK(MPI_Barrier(c->comm));
#else
	(void)c;
#endif
}

void kcomm_bcast(kcomm *c, void *buf, size_t bytes, int root)
{
#if KBUILD_MPI
	if (SERIAL(c))
		return;
	for (size_t off = 0; off < bytes; off += CHUNK) {
		size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
		MPICHECK(MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, c->comm));
	}
#else
	(void)c;
	(void)buf;
	(void)bytes;
	(void)root;
#endif
}

#if KBUILD_MPI
static MPI_Op mpi_op(enum kcomm_op op)
{
	switch (op) {
	case KCOMM_SUM: return MPI_SUM;
	case KCOMM_MAX: return MPI_MAX;
	case KCOMM_MIN: return MPI_MIN;
	case KCOMM_BOR: return MPI_BOR;
	}
	KBUG("bad op");
}

static void allreduce(kcomm *c, void *buf, size_t n, MPI_Datatype t, size_t esz, enum kcomm_op op)
{
	size_t per = CHUNK / esz;
	for (size_t off = 0; off < n; off += per) {
		size_t k = n - off < per ? n - off : per;
		MPICHECK(MPI_Allreduce(MPI_IN_PLACE, (char *)buf + off * esz, (int)k, t, mpi_op(op), c->comm));
	}
}
#endif

void kcomm_allreduce_u64(kcomm *c, uint64_t *buf, size_t n, enum kcomm_op op)
{
#if KBUILD_MPI
	if (!SERIAL(c))
		allreduce(c, buf, n, MPI_UINT64_T, 8, op);
#else
	(void)c; (void)buf; (void)n; (void)op;
#endif
}

void kcomm_allreduce_i64(kcomm *c, int64_t *buf, size_t n, enum kcomm_op op)
{
#if KBUILD_MPI
	if (!SERIAL(c))
		allreduce(c, buf, n, MPI_INT64_T, 8, op);
#else
	(void)c; (void)buf; (void)n; (void)op;
#endif
}

void kcomm_allreduce_double(kcomm *c, double *buf, size_t n, enum kcomm_op op)
{
	if (op == KCOMM_BOR)
		KBUG("bitwise OR on doubles");
#if KBUILD_MPI
	if (!SERIAL(c))
		allreduce(c, buf, n, MPI_DOUBLE, 8, op);
#else
	(void)c; (void)buf; (void)n; (void)op;
#endif
}

void kcomm_reduce_scatter_u64(kcomm *c, const uint64_t *send, uint64_t *recv, size_t n_each, enum kcomm_op op)
{
	if (SERIAL(c)) {
		memmove(recv, send, n_each * 8);
		return;
	}
#if KBUILD_MPI
	if (n_each <= (size_t)INT_MAX / 8) {
		MPICHECK(MPI_Reduce_scatter_block(send, recv, (int)n_each, MPI_UINT64_T, mpi_op(op), c->comm));
		return;
	}
	/* huge: reduce each block to its owner in chunks */
	for (int r = 0; r < c->size; r++)
		for (size_t off = 0; off < n_each; off += CHUNK / 8) {
			size_t k = n_each - off < CHUNK / 8 ? n_each - off : CHUNK / 8;
			MPICHECK(MPI_Reduce(send + (size_t)r * n_each + off, r == c->rank ? recv + off : NULL, (int)k,
					    MPI_UINT64_T, mpi_op(op), r, c->comm));
		}
#endif
}

#if KBUILD_MPI
static int fits_int(const size_t *a, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] > (size_t)INT_MAX)
			return 0;
	return 1;
}
#endif

void kcomm_allgather(kcomm *c, const void *send, size_t bytes_each, void *recv)
{
	if (SERIAL(c)) {
		memmove(recv, send, bytes_each);
		return;
	}
	size_t *cnt = kmalloc(sizeof(size_t) * 2 * (size_t)c->size), *dsp = cnt + c->size;
	for (int r = 0; r < c->size; r++) {
		cnt[r] = bytes_each;
		dsp[r] = (size_t)r * bytes_each;
	}
	kcomm_allgatherv(c, send, bytes_each, recv, cnt, dsp);
	free(cnt);
}

#if KBUILD_MPI
/* pairwise exchange for transfers too large for int counts */
static void pairwise(kcomm *c, const char *send, const size_t *sc, const size_t *sd, char *recv, const size_t *rc,
		     const size_t *rd)
{
	int p = c->size, me = c->rank;
	memcpy(recv + rd[me], send + sd[me], sc[me]);
	for (int s = 1; s < p; s++) {
		int to = (me + s) % p, from = (me - s + p) % p;
		size_t so = 0, ro = 0;
		while (so < sc[to] || ro < rc[from]) {
			size_t sn = sc[to] - so < CHUNK ? sc[to] - so : CHUNK;
			size_t rn = rc[from] - ro < CHUNK ? rc[from] - ro : CHUNK;
			MPICHECK(MPI_Sendrecv(send + sd[to] + so, (int)sn, MPI_BYTE, to, 77, recv + rd[from] + ro,
					      (int)rn, MPI_BYTE, from, 77, c->comm, MPI_STATUS_IGNORE));
			so += sn;
			ro += rn;
		}
	}
}
#endif

void kcomm_allgatherv(kcomm *c, const void *send, size_t bytes, void *recv, const size_t *counts,
		      const size_t *displs)
{
	if (SERIAL(c)) {
		memmove((char *)recv + displs[0], send, bytes);
		return;
	}
#if KBUILD_MPI
	int p = c->size;
	size_t total = 0;
	for (int r = 0; r < p; r++)
		if (displs[r] + counts[r] > total)
			total = displs[r] + counts[r];
	if (total <= (size_t)INT_MAX) {
		int *ic = kmalloc(sizeof(int) * 2 * (size_t)p), *id = ic + p;
		for (int r = 0; r < p; r++) {
			ic[r] = (int)counts[r];
			id[r] = (int)displs[r];
		}
		const void *sb = send;
		if ((const char *)send == (char *)recv + displs[c->rank])
			sb = MPI_IN_PLACE;
		MPICHECK(MPI_Allgatherv(sb, (int)bytes, MPI_BYTE, recv, ic, id, MPI_BYTE, c->comm));
		free(ic);
		return;
	}
	size_t *sc = kmalloc(sizeof(size_t) * 2 * (size_t)p), *sd = sc + p;
	for (int r = 0; r < p; r++) {
		sc[r] = bytes;
		sd[r] = 0;
	}
	char *tmp = kmalloc(bytes);
	memcpy(tmp, send, bytes);
	pairwise(c, tmp, sc, sd, recv, counts, displs);
	free(tmp);
	free(sc);
#endif
}

void kcomm_alltoall(kcomm *c, const void *send, size_t bytes_each, void *recv)
{
	if (SERIAL(c)) {
		memmove(recv, send, bytes_each);
		return;
	}
	size_t p = (size_t)c->size;
	size_t *a = kmalloc(sizeof(size_t) * 2 * p), *d = a + p;
	for (size_t r = 0; r < p; r++) {
		a[r] = bytes_each;
		d[r] = r * bytes_each;
	}
	kcomm_alltoallv(c, send, a, d, recv, a, d);
	free(a);
}

void kcomm_alltoallv(kcomm *c, const void *send, const size_t *scounts, const size_t *sdispls, void *recv,
		     const size_t *rcounts, const size_t *rdispls)
{
	if (SERIAL(c)) {
		memmove((char *)recv + rdispls[0], (const char *)send + sdispls[0], scounts[0]);
		return;
	}
#if KBUILD_MPI
	int p = c->size;
	int ok = fits_int(scounts, p) && fits_int(sdispls, p) && fits_int(rcounts, p) && fits_int(rdispls, p);
	/* every rank must take the same path */
	int all_ok = ok;
	MPICHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm));
	if (all_ok) {
		int *v = kmalloc(sizeof(int) * 4 * (size_t)p);
		for (int r = 0; r < p; r++) {
			v[r] = (int)scounts[r];
			v[p + r] = (int)sdispls[r];
			v[2 * p + r] = (int)rcounts[r];
			v[3 * p + r] = (int)rdispls[r];
		}
		MPICHECK(MPI_Alltoallv(send, v, v + p, MPI_BYTE, recv, v + 2 * p, v + 3 * p, MPI_BYTE, c->comm));
		free(v);
		return;
	}
	pairwise(c, send, scounts, sdispls, recv, rcounts, rdispls);
#endif
}

void kcomm_gatherv(kcomm *c, const void *send, size_t bytes, void *recv, const size_t *counts,
		   const size_t *displs, int root)
{
	if (SERIAL(c)) {
		memmove((char *)recv + displs[0], send, bytes);
		return;
	}
#if KBUILD_MPI
	if (c->rank == root) {
		memmove((char *)recv + displs[root], send, bytes);
		for (int r = 0; r < c->size; r++)
			if (r != root)
				kcomm_recv(c, (char *)recv + displs[r], counts[r], r, KCOMM_TAG_GATHERV);
	} else {
		kcomm_send(c, send, bytes, root, KCOMM_TAG_GATHERV);
	}
#endif
}

void kcomm_send(kcomm *c, const void *buf, size_t bytes, int dest, int tag)
{
#if KBUILD_MPI
	for (size_t off = 0; off < bytes || off == 0; off += CHUNK) {
		size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
		MPICHECK(MPI_Send((const char *)buf + off, (int)n, MPI_BYTE, dest, tag, c->comm));
		if (!bytes)
			break;
	}
#else
	(void)c; (void)buf; (void)bytes; (void)dest; (void)tag;
	KBUG("send without MPI");
#endif
}

void kcomm_recv(kcomm *c, void *buf, size_t bytes, int src, int tag)
{
#if KBUILD_MPI
	for (size_t off = 0; off < bytes || off == 0; off += CHUNK) {
		size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
		MPICHECK(MPI_Recv((char *)buf + off, (int)n, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE));
		if (!bytes)
			break;
	}
#else
	(void)c; (void)buf; (void)bytes; (void)src; (void)tag;
	KBUG("recv without MPI");
#endif
}

int kcomm_agree(kcomm *c, int code)
{
	uint64_t v = (uint64_t)(code < 0 ? 0 : code);
	kcomm_allreduce_u64(c, &v, 1, KCOMM_MAX);
	return (int)v;
}

struct kcomm_shared {
	void *mem; /* without a window: this rank's memory */
#if KBUILD_MPI
	MPI_Win win;
	int mpi;
#endif
};

kcomm_shared *kcomm_shared_alloc(kcomm *c, size_t bytes, void **peers)
{
	kcomm_shared *w = kcalloc(1, sizeof *w);
#if KBUILD_MPI
	if (mpi_on && c->size > 1) {
		MPI_Info info;
		MPICHECK(MPI_Info_create(&info));
		MPICHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
		void *base = NULL;
		MPICHECK(MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, c->comm, &base, &w->win));
		MPI_Info_free(&info);
		w->mpi = 1;
		for (int r = 0; r < c->size; r++) {
			MPI_Aint size;
			int disp;
			void *at = NULL;
			MPICHECK(MPI_Win_shared_query(w->win, r, &size, &disp, &at));
			peers[r] = size ? at : NULL;
		}
		return w;
	}
#endif
	(void)c;
	w->mem = bytes ? kmalloc(bytes) : NULL;
	peers[0] = w->mem;
	return w;
}

void kcomm_shared_free(kcomm *c, kcomm_shared *w)
{
	(void)c;
	if (!w)
		return;
#if KBUILD_MPI
	if (w->mpi)
		MPICHECK(MPI_Win_free(&w->win));
#endif
	free(w->mem);
	free(w);
}

void kcomm_shared_sum_scatter_u64(kcomm *c, const uint64_t *send, uint64_t *recv, size_t n_each)
{
	int P = kcomm_size(c), me = kcomm_rank(c);
	size_t n = kmul(n_each, (size_t)P);
	void **peer = kmalloc(kmul((size_t)P, sizeof *peer));
	kcomm_shared *w = kcomm_shared_alloc(c, kmul(n, 8), peer);
	uint64_t *mine = peer[me];
#pragma omp parallel for schedule(static) if (n > 65536)
	for (size_t k = 0; k < n; k++)
		mine[k] = send[k];
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	kcomm_barrier(c);
#pragma omp parallel for schedule(static) if (n_each > 65536)
	for (size_t k = 0; k < n_each; k++) {
		uint64_t s = 0;
		for (int r = 0; r < P; r++)
			s += ((const uint64_t *)peer[r])[(size_t)me * n_each + k];
		recv[k] = s;
	}
	kcomm_barrier(c); /* every rank has read the others' before they go */
	kcomm_shared_free(c, w);
	free(peer);
}

void kcomm_shared_allgather(kcomm *c, const void *send, size_t bytes_each, void *recv)
{
	int P = kcomm_size(c), me = kcomm_rank(c);
	void **peer = kmalloc(kmul((size_t)P, sizeof *peer));
	kcomm_shared *w = kcomm_shared_alloc(c, bytes_each, peer);
	if (bytes_each)
		memcpy(peer[me], send, bytes_each);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	kcomm_barrier(c);
	const size_t piece = (size_t)1 << 20, np = (bytes_each + piece - 1) / piece;
#pragma omp parallel for schedule(static) if (np * (size_t)P > 4)
	for (size_t t = 0; t < np * (size_t)P; t++) {
		size_t r = t / np, o = t % np * piece, len = bytes_each - o < piece ? bytes_each - o : piece;
		memcpy((char *)recv + r * bytes_each + o, (const char *)peer[r] + o, len);
	}
	kcomm_barrier(c);
	kcomm_shared_free(c, w);
	free(peer);
}

int kcomm_one_host(kcomm *c)
{
	char first[sizeof host];
	memcpy(first, host, sizeof host);
	kcomm_bcast(c, first, sizeof first, 0);
	uint64_t same = !strcmp(first, host);
	kcomm_allreduce_u64(c, &same, 1, KCOMM_MIN);
	return (int)same;
}

int kcomm_host_ranks(kcomm *c)
{
	int P = kcomm_size(c), n = 0;
	char *all = kmalloc(kmul((size_t)P, sizeof host));
	kcomm_allgather(c, host, sizeof host, all);
	for (int q = 0; q < P; q++)
		n += !strncmp(all + (size_t)q * sizeof host, host, sizeof host);
	free(all);
	return n;
}

uint32_t kcomm_crc32_concat(kcomm *c, uint32_t crc, uint64_t len)
{
	int P = kcomm_size(c);
	uint64_t mine[2] = {crc, len}, *all = kmalloc(kmul((size_t)P, 16));
	kcomm_allgather(c, mine, 16, all);
	uint32_t whole = 0;
	for (int q = 0; q < P; q++)
		whole = kio_crc32_combine(whole, (uint32_t)all[2 * q], all[2 * q + 1]);
	free(all);
	return whole;
}

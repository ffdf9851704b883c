/*
 * kpart_stage.c: a stream staged in memory that every rank of one host maps
 * (kpart_builder.h).
 *
 * Rank 0 cuts the payload's bytes into segments, each its own memfd, maps
 * them one after another into one reserved range, and the other ranks map
 * the same memfds (opened through /proc/PID/fd of rank 0) read-only at the
 * same offsets of a range of their own.  Rank 0 then reads the stream into
 * the segments in order on one thread while the others populate the next
 * segments (MADV_POPULATE_WRITE): a pipe read into pages that already
 * exist runs at several times the speed of one that faults them in, and
 * segments of their own files are populated side by side without sharing
 * one file's page-cache lock (NOTES.md, ninth session).  Every rank then
 * reads the whole payload from memory as it would a file on one host: its
 * own part's keys kept, none exchanged, the ids and the CRC checked on all
 * ranks' threads in pass 1.  The reader's waits for memory are timed (-v):
 * at scale 29 on four H100 it waited 0.3 s of 62, the pipe being the limit.
 *
 * kpart -s uses the same segments, mapped writable on every rank, each
 * rank generating its slice of the Kronecker graph's tuples into them (on
 * its GPU through a kgen_device, or on its threads).
 */
#include "kpart.h"
#include "kpart_builder.h"
#include "kedge.h"
#include "kgen.h"
#include "kgen_dev.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { SEG_ALIGN = 2 << 20, POP_PIECE = 64 << 20, SPARE_FDS = 64 };

typedef struct stage {
	unsigned char *base; /* the reserved range, len bytes */
	size_t len, seg;     /* seg: bytes a segment (the last may be shorter) */
	uint64_t bytes, nseg;
	int *fd;             /* nseg memfds (rank 0 until every rank has mapped them) */
	int *ready;          /* rank 0: 0 not yet populated, 1 populated, -errno failed */
	uint64_t next;       /* the next segment to populate (atomic) */
	uint64_t at;         /* the segment the reader waits for or reads (atomic) */
	uint64_t ahead;      /* populated at most this many segments past at */
	int stop;            /* the reader gave up (atomic) */
	double waited;       /* seconds the reader waited for populated segments */
} stage;

static size_t seg_len(const stage *g, uint64_t k)
{
	return k + 1 < g->nseg ? g->seg : (size_t)(g->bytes - k * g->seg);
}

/* Segments of at least 256 MiB, as many as descriptors allow (the soft
 * limit raised towards the hard one if need be).  KBFS_KPART_SEG_MIB=N (an
 * experiment): segments of N MiB (a multiple of 2), one when N covers the
 * tuples, so that each rank maps them as one range: whether the passes'
 * reads from 256 segments (41 s for pass 2 at scale 29 on 4x1, 19 from a
 * file) pay for the many mappings. */
static void size_segments(stage *g)
{
	size_t seg = (size_t)256 << 20;
	const char *sv = getenv("KBFS_KPART_SEG_MIB");
	uint64_t mib;
	if (sv && *sv) {
		if (kopt_parse_u64(sv, 2, UINT64_C(1) << 30, &mib) || mib % 2)
			kwarn("ignoring KBFS_KPART_SEG_MIB='%s' (want an even number of MiB, 2 to 2^30)", sv);
		else
			seg = (size_t)(mib << 20);
	}
	struct rlimit rl;
	uint64_t room = 1024;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		uint64_t want = g->bytes / seg + 1 + SPARE_FDS;
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want && rl.rlim_max != rl.rlim_cur) {
			rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		room = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	}
	uint64_t most = room > 2 * SPARE_FDS ? room - SPARE_FDS : SPARE_FDS;
	if (g->bytes / seg + 1 > most) {
		seg = (size_t)(g->bytes / most + 1);
		seg = (seg + SEG_ALIGN - 1) / SEG_ALIGN * SEG_ALIGN;
	}
	g->seg = seg;
	g->nseg = (g->bytes + seg - 1) / seg;
}

static void unmap_all(stage *g)
{
	if (g->base)
		munmap(g->base, g->len);
	g->base = NULL;
	if (g->fd)
		for (uint64_t k = 0; k < g->nseg; k++)
			if (g->fd[k] >= 0)
				close(g->fd[k]);
	free(g->fd);
	g->fd = NULL;
}

/* The segments mapped into a fresh reserved range: rank 0 creates them
 * (writable), the others open rank 0's (pid), read-only unless rw.  0, or
 * an errno. */
static int map_all(stage *g, int me, long pid, const int *fds0, int rw)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	g->len = (size_t)((g->bytes + page - 1) / page * page);
	g->fd = kmalloc(kmul((size_t)g->nseg, sizeof *g->fd));
	for (uint64_t k = 0; k < g->nseg; k++)
		g->fd[k] = -1;
	void *b = mmap(NULL, g->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b == MAP_FAILED)
		return errno;
	g->base = b;
	for (uint64_t k = 0; k < g->nseg; k++) {
		size_t n = seg_len(g, k);
		int fd;
		if (me == 0) {
			fd = memfd_create("kpart-stream", MFD_CLOEXEC);
			if (fd >= 0 && ftruncate(fd, (off_t)n)) {
				int e = errno;
				close(fd);
				return e;
			}
		} else {
			char path[64];
			snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fds0[k]);
			fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		}
		if (fd < 0)
			return errno;
		g->fd[k] = fd;
		void *m = mmap(g->base + k * g->seg, n, me == 0 || rw ? PROT_READ | PROT_WRITE : PROT_READ,
			       MAP_SHARED | MAP_FIXED, fd, 0);
		if (m == MAP_FAILED)
			return errno;
	}
	return 0;
}

/* A populating thread: whole segments, in order, each by one thread, at
 * most as many segments ahead of the reader as it has read (and as there
 * are populating threads; none at its start): a header that announces more
 * than the stream holds costs about what has arrived, not what it
 * announced. */
static void populate(stage *g)
{
	for (;;) {
		if (__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE))
			return;
		uint64_t k = __atomic_fetch_add(&g->next, 1, __ATOMIC_ACQ_REL);
		if (k >= g->nseg)
			return;
		for (;;) {
			uint64_t at = __atomic_load_n(&g->at, __ATOMIC_ACQUIRE);
			if (k <= at + (at < g->ahead ? at : g->ahead) || __atomic_load_n(&g->stop, __ATOMIC_ACQUIRE))
				break;
			struct timespec nap = {0, 100000};
			nanosleep(&nap, NULL);
		}
		int st = 1;
#ifdef MADV_POPULATE_WRITE
		unsigned char *p = g->base + k * g->seg;
		size_t n = seg_len(g, k);
		for (size_t at = 0; at < n && st == 1; at += POP_PIECE) {
			if (__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE))
				break;
			size_t m = n - at < POP_PIECE ? n - at : POP_PIECE;
			if (madvise(p + at, m, MADV_POPULATE_WRITE) && errno != EINVAL)
				st = errno == EFAULT ? -ENOMEM : -errno; /* EINVAL: an old kernel; the read faults them in */
		}
#endif
		__atomic_store_n(&g->ready[k], st, __ATOMIC_RELEASE);
	}
}

/* The reader: segment after segment once it is populated. */
static int read_into(stage *g, kedge_reader *r, const char *name, size_t rec)
{
	for (uint64_t k = 0; k < g->nseg; k++) {
		int st;
		__atomic_store_n(&g->at, k, __ATOMIC_RELEASE);
		if (!(st = __atomic_load_n(&g->ready[k], __ATOMIC_ACQUIRE))) {
			double t = ktime();
			while (!(st = __atomic_load_n(&g->ready[k], __ATOMIC_ACQUIRE)))
				sched_yield();
			g->waited += ktime() - t;
		}
		if (st < 0) {
			kerror("'%s': cannot hold the stream in memory: %s", name, strerror(-st));
			return KEXIT_RESOURCE;
		}
		int rc = kedge_read_payload(r, g->base + k * g->seg, seg_len(g, k) / rec);
		if (rc)
			return rc;
	}
	return kedge_read_end(r);
}

/* Rank 0: the payload read into the segments, nt - 1 threads populating
 * ahead of the reader: this rank's OpenMP threads, or the host's processors
 * less one for each rank (the others wait for rank 0 meanwhile) where they
 * are more, at most 64 in all (first touches of fresh memory run at 1-2
 * GB/s on a thread, and the stream comes at about 3: NOTES.md). */
static int fill(stage *g, kedge_reader *r, const char *name, size_t rec, int host_ranks)
{
	g->ready = kcalloc((size_t)g->nseg, sizeof *g->ready);
	int rc = 0, nt = 1;
#ifdef _OPENMP
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	nt = omp_get_max_threads();
	if (cpus - host_ranks > nt)
		nt = (int)(cpus - host_ranks);
	if (nt > 64)
		nt = 64;
	if ((uint64_t)nt > g->nseg + 1)
		nt = (int)g->nseg + 1;
#else
	(void)host_ranks;
#endif
	g->ahead = nt > 1 ? (uint64_t)nt - 1 : 0;
	if (nt < 2) { /* no thread to populate ahead: the reads fault the pages in */
		for (uint64_t k = 0; k < g->nseg; k++)
			g->ready[k] = 1;
		rc = read_into(g, r, name, rec);
	} else {
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
		{
			if (omp_get_thread_num() == 0) {
				rc = read_into(g, r, name, rec);
				__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
			} else {
				populate(g);
			}
		}
#endif
	}
	free(g->ready);
	g->ready = NULL;
	return rc;
}

/* What rank 0 tells the others before the reading, and after it. */
typedef struct stage_msg {
	uint64_t rc, pid, nseg, seg;
} stage_msg;
typedef struct end_msg {
	uint64_t rc, size, crc;
} end_msg;

/* The mapped segments handed to s as a source's whole mapping (its
 * tuples idbytes-wide ids below nv); g's descriptors' array freed. */
static void to_source(stage *g, source *s, int idbytes, uint64_t nv)
{
	free(g->fd);
	g->fd = NULL;
	s->w = idbytes;
	s->nv = nv;
	s->fd = -1;
	s->at = 0;
	s->map = g->base;
	s->maplen = g->len;
	s->mem = g->base;
}

/* g->bytes in segments that every rank maps (rank 0 creates them; the
 * others writable too when rw): 1, or 0 with nothing mapped (collective). */
static int share(kcomm *comm, stage *g, int rw)
{
	int me = kcomm_rank(comm);
	stage_msg h = {0};
	int *fds0 = NULL;
	if (me == 0) {
		size_segments(g);
		h = (stage_msg){.pid = (uint64_t)getpid(), .nseg = g->nseg, .seg = g->seg};
		h.rc = (uint64_t)map_all(g, 0, 0, NULL, rw);
	}
	kcomm_bcast(comm, &h, sizeof h, 0);
	uint64_t ok = h.rc == 0;
	if (ok) {
		fds0 = kmalloc(kmul((size_t)h.nseg, sizeof *fds0));
		if (me == 0)
			memcpy(fds0, g->fd, (size_t)h.nseg * sizeof *fds0);
		kcomm_bcast(comm, fds0, (size_t)h.nseg * sizeof *fds0, 0);
		if (me != 0) {
			g->nseg = h.nseg;
			g->seg = (size_t)h.seg;
			ok = map_all(g, me, (long)h.pid, fds0, rw) == 0;
		}
	}
	free(fds0);
	kcomm_allreduce_u64(comm, &ok, 1, KCOMM_MIN);
	/* every rank has mapped the segments (or given up): the descriptors go */
	for (uint64_t k = 0; g->fd && k < g->nseg; k++) {
		if (g->fd[k] >= 0)
			close(g->fd[k]);
		g->fd[k] = -1;
	}
	if (!ok)
		unmap_all(g);
	return (int)ok;
}

/* Whether the tuples go to shared memory on this host: KBFS_KPART_STAGE is
 * not 0, no rank has a reason against it (why: this rank's, or NULL) and
 * every rank runs on one host.  Where not, rank 0 says why with -v after
 * what ("the stream dealt out").  Collective. */
static int stage_wanted(kcomm *comm, const char *why, const char *what)
{
	const char *v = getenv("KBFS_KPART_STAGE");
	if (v && !strcmp(v, "0"))
		why = "KBFS_KPART_STAGE=0";
	uint64_t want = !why;
	kcomm_allreduce_u64(comm, &want, 1, KCOMM_MIN);
	if (want && !kcomm_one_host(comm))
		why = "ranks on several hosts";
	if (want && !why)
		return 1;
	if (kcomm_rank(comm) == 0 && why)
		kinfo("%s: %s", what, why);
	return 0;
}

int kpart_stage(kcomm *comm, kedge_reader *r, const char *name, const kedge_info *info, source *s, uint32_t *crc,
		uint64_t *size, int *staged)
{
	int me = kcomm_rank(comm), host_ranks;
	size_t rec = 2 * (size_t)info->idbytes;
	*staged = 0;
	/* not for a header that announces more than 2^46 bytes (64 TiB, more
	 * than any host here holds: dealt out, such a stream is refused where
	 * it ends).  What is free now is not asked: memory is populated only
	 * as the stream arrives, and a virtual machine whose memory grows as
	 * it is used reports little at its start. */
	const char *why = info->flags & KEDGE_F_ZLIB		     ? "a compressed payload"
			  : !info->ne				     ? "no edges"
			  : info->ne > ((uint64_t)1 << 46) / rec ? "more than 64 TiB announced"
								     : NULL;
	if (!stage_wanted(comm, why, "the stream dealt out"))
		return 0;
	host_ranks = kcomm_host_ranks(comm);
	stage g = {.bytes = info->ne * rec};
	if (!share(comm, &g, 0)) {
		if (me == 0)
			kinfo("the stream dealt out: not mapped in shared memory on this host");
		return 0;
	}
	*staged = 1;
	double t0 = ktime();
	end_msg end = {0};
	if (me == 0) {
		end.rc = (uint64_t)fill(&g, r, name, rec, host_ranks);
		uint32_t c = 0;
		if (!end.rc && kedge_trailer(r, &end.size, &c))
			end.crc = c;
	}
	kcomm_bcast(comm, &end, sizeof end, 0);
	if (end.rc) {
		unmap_all(&g);
		return (int)end.rc;
	}
	if (me == 0) {
		double t = ktime() - t0;
		kinfo("the stream read into shared memory: %.1f GiB in %llu segments in %.3f s (%.2f GB/s; %.3f s of it "
		      "waiting for memory, %llu threads populating it)",
		      (double)g.bytes / (double)(1ull << 30), (unsigned long long)g.nseg, t,
		      t > 0 ? (double)g.bytes / t / 1e9 : 0.0, g.waited, (unsigned long long)g.ahead);
	}
	*size = end.size;
	*crc = (uint32_t)end.crc;
	s->name = name;
	to_source(&g, s, (int)info->idbytes, info->nv);
	return 0;
}

/* ------------------------------------------- the Kronecker graph generated */

/* Edges a chunk of the device's: KGEN_DEVICE_CHUNK, or N with
 * KBFS_KGEN_CHUNK=N (kgen's test hook). */
static uint64_t device_chunk(void)
{
	uint64_t c;
	const char *v = getenv("KBFS_KGEN_CHUNK");
	return v && *v && !kopt_parse_u64(v, 1, 1u << 30, &c) ? c : KGEN_DEVICE_CHUNK;
}

/* dev opened and its two slots of chunk edges allocated (collective): 0,
 * or a KEXIT code with dev closed again. */
static int device_open(kcomm *comm, kgen_device *dev, const kgen_ctx *g, uint64_t chunk)
{
	int rc = kdev_open(&dev->base, comm);
	if (!rc && (rc = kcomm_agree(comm, dev->alloc(dev, comm, g, chunk))))
		dev->base.close(&dev->base);
	return rc;
}

/* The device's slices: chunks (device_chunk) in two slots, each encoded
 * into dst (and its CRC taken) while the device makes the next. */
static int gen_on_device(kcomm *comm, kgen_device *dev, const kgen_ctx *g, uint64_t first, uint64_t n, int idbytes,
			 unsigned char *dst, uint32_t *crc)
{
	size_t rec = 2 * (size_t)idbytes;
	uint64_t chunk = device_chunk();
	int rc = device_open(comm, dev, g, chunk);
	if (rc)
		return rc;
	uint64_t nch = (n + chunk - 1) / chunk;
	for (uint64_t j = 0; j < 2 && j < nch; j++)
		dev->start(dev, (int)j, first + j * chunk, n - j * chunk < chunk ? n - j * chunk : chunk);
	for (uint64_t j = 0; j < nch; j++) {
		uint64_t k = n - j * chunk < chunk ? n - j * chunk : chunk;
		const uint64_t *uv = dev->wait(dev, (int)(j & 1));
		unsigned char *d = dst + j * chunk * rec;
		kedge_encode(uv, (size_t)k, (unsigned)idbytes, d);
		if (j + 2 < nch) {
			uint64_t a = (j + 2) * chunk;
			dev->start(dev, (int)(j & 1), first + a, n - a < chunk ? n - a : chunk);
		}
		*crc = kio_crc32(*crc, d, (size_t)k * rec);
	}
	dev->base.close(&dev->base);
	return 0;
}

int kpart_gen_slice(kcomm *comm, kgen_device *dev, const kgen_ctx *g, uint64_t first, uint64_t n, int idbytes,
		    unsigned char *dst, uint32_t *crc)
{
	if (dev)
		return gen_on_device(comm, dev, g, first, n, idbytes, dst, crc);
	kpart_gen_tuples(g, first, n, idbytes, dst, crc);
	return 0;
}

void kpart_gen_tuples(const kgen_ctx *g, uint64_t first, uint64_t n, int idbytes, unsigned char *dst, uint32_t *crc)
{
	enum { GCHUNK = 1 << 22 };
	size_t rec = 2 * (size_t)idbytes;
	uint64_t *uv = kmalloc(kmul((size_t)(n < GCHUNK ? n : GCHUNK), 16) + 16);
	for (uint64_t at = 0; at < n; at += GCHUNK) {
		uint64_t k = n - at < GCHUNK ? n - at : GCHUNK;
		kgen_edges(g, first + at, k, uv);
		unsigned char *d = dst + at * rec;
		kedge_encode(uv, (size_t)k, (unsigned)idbytes, d);
		*crc = kio_crc32(*crc, d, (size_t)k * rec);
	}
	free(uv);
}

int kpart_stage_gen(kcomm *comm, kgen_device *dev, const kgen_ctx *gen, int idbytes, source *s, uint32_t *crc,
		    int *staged)
{
	int me = kcomm_rank(comm), P = kcomm_size(comm);
	size_t rec = 2 * (size_t)idbytes;
	uint64_t ne = gen->nedges, nv = (uint64_t)1 << gen->p.scale, first, n;
	uint32_t c = 0;
	int rc;
	*staged = 0;
	kpart_slice(ne, me, P, &first, &n);
	stage g = {.bytes = ne * rec};
	const char *what = "the graph generated in slices, one a rank";
	int wanted = stage_wanted(comm, NULL, what);
	if (!wanted || !share(comm, &g, 1)) {
		if (wanted && me == 0)
			kinfo("%s: not mapped in shared memory on this host", what);
		/* this rank's slice in its own memory, its keys to be exchanged */
		s->w = idbytes;
		s->nv = nv;
		s->n = n;
		s->mem = kmalloc(kmul((size_t)n, rec) + 16);
		if ((rc = kpart_gen_slice(comm, dev, gen, first, n, idbytes, s->mem, &c)))
			return rc;
		*crc = kcomm_crc32_concat(comm, c, n * rec);
		return 0;
	}
	*staged = 1;
	double t0 = ktime();
	rc = kpart_gen_slice(comm, dev, gen, first, n, idbytes, g.base + first * rec, &c);
	if (rc) {
		unmap_all(&g);
		return rc;
	}
	kcomm_barrier(comm); /* every slice written before any rank reads */
	*crc = kcomm_crc32_concat(comm, c, n * rec);
	if (me == 0) {
		double t = ktime() - t0;
		kinfo("the graph generated into shared memory: %.1f GiB in %llu segments in %.3f s (%.1f M edges/s, %s)",
		      (double)g.bytes / (double)(1ull << 30), (unsigned long long)g.nseg, t,
		      t > 0 ? (double)ne / t / 1e6 : 0.0, dev ? dev->base.name : "CPU");
	}
	to_source(&g, s, idbytes, nv);
	return 0;
}

/* ---------------------------------- the graph made again for each pass */

struct kpart_feed {
	kgen_device *dev; /* opened, two slots allocated; NULL: the CPU's threads */
	const kgen_ctx *g;
	uint64_t ne, nch, chunk;
	uint64_t *buf;    /* the CPU's chunk */
	double waited;    /* seconds kpart_feed_get waited, this pass */
};

static uint64_t feed_first(const kpart_feed *f, uint64_t c)
{
	return (uint64_t)((unsigned __int128)f->ne * c / f->nch);
}

int kpart_feed_open(kcomm *comm, kgen_device *dev, const kgen_ctx *g, kpart_feed **out)
{
	*out = NULL;
	uint64_t chunk = device_chunk(), P = (uint64_t)kcomm_size(comm);
	kpart_feed *f = kcalloc(1, sizeof *f);
	f->g = g;
	f->ne = g->nedges;
	/* chunks of at most chunk tuples, a multiple of P of them (a rank's
	 * slice is whole chunks: own_slots) */
	f->nch = (f->ne + chunk - 1) / chunk;
	f->nch = f->nch ? (f->nch + P - 1) / P * P : P;
	f->chunk = (f->ne + f->nch - 1) / f->nch;
	if (dev) {
		int rc = device_open(comm, dev, g, f->chunk);
		if (rc) {
			free(f);
			return rc;
		}
		f->dev = dev;
	} else {
		f->buf = kmalloc(kmul((size_t)f->chunk, 16) + 16);
	}
	*out = f;
	return 0;
}

uint64_t kpart_feed_chunks(const kpart_feed *f) { return f->nch; }

static void feed_start(kpart_feed *f, uint64_t c)
{
	uint64_t a = feed_first(f, c), n = feed_first(f, c + 1) - a;
	if (n)
		f->dev->start(f->dev, (int)(c & 1), a, n);
}

void kpart_feed_begin(kpart_feed *f)
{
	f->waited = 0;
	for (uint64_t c = 0; f->dev && c < 2 && c < f->nch; c++)
		feed_start(f, c);
}

const uint64_t *kpart_feed_get(kpart_feed *f, uint64_t c, uint64_t *first, uint64_t *n)
{
	*first = feed_first(f, c);
	*n = feed_first(f, c + 1) - *first;
	if (!*n)
		return f->buf; /* NULL on the device: an empty chunk is not read */
	double t = ktime();
	const uint64_t *uv;
	if (f->dev) {
		uv = f->dev->wait(f->dev, (int)(c & 1));
	} else {
		kgen_edges(f->g, *first, *n, f->buf);
		uv = f->buf;
	}
	f->waited += ktime() - t;
	return uv;
}

void kpart_feed_put(kpart_feed *f, uint64_t c)
{
	if (f->dev && c + 2 < f->nch)
		feed_start(f, c + 2);
}

double kpart_feed_waited(const kpart_feed *f) { return f->waited; }

void kpart_feed_close(kpart_feed *f)
{
	if (!f)
		return;
	if (f->dev)
		f->dev->base.close(&f->dev->base);
	free(f->buf);
	free(f);
}

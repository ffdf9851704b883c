/*
 * kpart_input.c: the builder's input (kpart_build.c steps 2-4): the trailer
 * of a seekable edge file, dealing a stream out from rank 0, pass 1 (count
 * every key into its part's bucket) and pass 2 (read again in rounds,
 * exchange, drop each key into its bucket).
 *
 * Threads: a slice is cut into slots (contiguous ranges of tuples, a few
 * per thread); each slot is read (pread(2) on the source's own descriptor),
 * checksummed and counted by one thread, and the slots' CRCs are combined
 * in order.  On one process pass 2 reads the same slots again and drops
 * every key at the slot's own offsets in its bucket (pass 1 counted them
 * per slot): no atomics, and each bucket holds its keys in file order.
 *
 * When every rank runs on one host and the input is a file (pl->keep >= 0,
 * kpart_build.c decides), each rank reads the whole file in both passes,
 * as one process would, and counts and drops only its own part's keys: no
 * key crosses MPI.  Its CRC and self-loops still cover only its slice (the
 * slots of tuples me*M/P to (me+1)*M/P), so the slices' CRCs combine as in
 * the exchange, and a bad tuple, which every rank meets, is reported once.
 */
#include "kpart.h"
#include "kpart_builder.h"
#include "kedge.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CHUNK = 1 << 18, BLK = 2048, PAR = 65536 };

/* n / f.d (fdiv: kpart_internal.h) */
static inline uint64_t fdiv_q(fdiv f, uint64_t n)
{
	uint64_t q = (uint64_t)(((unsigned __int128)n * f.m) >> 64);
	while (n - q * f.d >= f.d)
		q++;
	return q;
}

typedef struct ends {
	uint64_t lc, lr;
	uint32_t i, j;
} ends;

static inline ends split(const plan *pl, uint64_t x)
{
	uint64_t b = fdiv_q(pl->fnb, x), off = x - b * pl->g.nb;
	ends e = {.i = pl->vi[b], .j = pl->vj[b]};
	e.lc = (uint64_t)e.i * pl->g.nb + off;
	e.lr = (uint64_t)e.j * pl->g.nb + off;
	return e;
}

/* The two stored entries of the edge {u, v}: their parts and keys. */
static inline void entries(const plan *pl, uint64_t u, uint64_t v, uint32_t d[2], uint64_t key[2])
{
	ends a = split(pl, u), b = split(pl, v);
	d[0] = b.i * (uint32_t)pl->C + a.j;
	key[0] = a.lc << pl->br | b.lr;
	d[1] = a.i * (uint32_t)pl->C + b.j;
	key[1] = b.lc << pl->br | a.lr;
}

/* The histogram slot of entry (d, key): part d's bucket among every
 * part's, or its bucket among the kept part's alone; *kept is 0 for
 * another part's entry, which the callers count and store without a
 * branch (which part an entry goes to is a coin toss: a branch on it cost
 * twice pass 1's time, measured on 2x1) and then drop. */
static inline size_t hslot(const plan *pl, uint32_t d, uint64_t key, int *kept)
{
	*kept = pl->keep < 0 || d == (uint32_t)pl->keep;
	return (pl->keep < 0 ? (size_t)d * pl->nbk : 0) + (size_t)(key >> pl->rbits);
}

/* residual x at position pos of a bucket array of 64- or 32-bit entries */
static inline void put_res(void *res, int r64, uint64_t pos, uint64_t x)
{
	if (r64)
		((uint64_t *)res)[pos] = x;
	else
		((uint32_t *)res)[pos] = (uint32_t)x;
}

/* ---------------------------------------------------------------- source */

/* The first problem met in a range of tuples (threads report nothing; the
 * caller prints the earliest one, as a serial read would have). */
typedef struct rerr {
	uint64_t at, x; /* tuple of the slice, vertex */
	int kind, err;  /* 0 none, 1 read error (errno err), 2 end of file, 3 vertex beyond nv */
} rerr;

int kpart_source_file(source *s, const char *input, uint64_t size, uint64_t ne, int idbytes, uint64_t nv)
{
	s->w = idbytes;
	s->nv = nv;
	s->name = kedge_name(s->r);
	s->fd = open(input, O_RDONLY);
	if (s->fd < 0) {
		kerror("cannot open '%s': %s", input, strerror(errno));
		return KEXIT_IO;
	}
	struct stat st;
	if (fstat(s->fd, &st) || (uint64_t)st.st_size != size) {
		kerror("'%s': the input changed while it was being read", input);
		return KEXIT_DATA;
	}
	s->at = size - KPART_TRAILER_BYTES - ne * 2 * (uint64_t)idbytes;
	/* The passes read the file through a shared read-only mapping (its
	 * slice as s->mem) rather than pread into each thread's buffer: on one
	 * host every rank reads the same pages, and each pread takes and drops
	 * a reference on every page it copies from, on cache lines all the
	 * ranks' threads share; a mapping takes its pages once (scale 28 on
	 * 4x1, four H100: the passes 18.6 -> 17.1 s; NOTES.md).  A file cut
	 * short by another process while it is mapped ends kpart with an error
	 * (klog_guard_map), not a crash.  KBFS_KPART_MMAP=0 reads by pread (the
	 * ablation), as does a file the kernel will not map. */
	const char *v = getenv("KBFS_KPART_MMAP");
	if (!(v && !strcmp(v, "0")) && size > 0) {
		void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, s->fd, 0);
		if (m != MAP_FAILED) {
			s->map = m;
			s->maplen = (size_t)size;
			s->mem = (unsigned char *)m + s->at + s->first * 2 * (uint64_t)idbytes;
			klog_guard_map(m, (size_t)size, "'%s': the input was cut short while it was being read", input);
			/* test hook (kpart(1)): the file cut to half under the mapping */
			const char *cut = getenv("KBFS_TEST_KPART_CUT");
			if (cut && !strcmp(cut, "1") && truncate(input, (off_t)(size / 2))) {
				/* the test then fails for want of the error */
			}
		}
	}
	return 0;
}

void kpart_source_close(source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->map) {
		klog_guard_clear();
		munmap(s->map, s->maplen);
	}
	else
		free(s->mem);
	s->map = NULL;
	s->mem = NULL;
}

/* Tuples [off, off+k) of the slice as bytes: in s->mem, or read into buf. */
static const unsigned char *bytes_at(const source *s, uint64_t off, size_t k, unsigned char *buf, rerr *e)
{
	size_t rec = 2 * (size_t)s->w, n = k * rec, have = 0;
	if (s->feedp)
		return s->feedp + (off - s->feed_first) * rec;
	if (s->mem)
		return s->mem + off * rec;
	uint64_t at = s->at + (s->first + off) * rec;
	while (have < n) {
		ssize_t r = pread(s->fd, buf + have, n - have, (off_t)(at + have));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*e = (rerr){.at = off, .kind = r < 0 ? 1 : 2, .err = errno};
			return NULL;
		}
		have += (size_t)r;
	}
	return buf;
}

/* a vertex beyond nv at tuple off: what kedge_read_at reports */
static int check_ids(const source *s, uint64_t u, uint64_t v, uint64_t off, rerr *e)
{
	if (u < s->nv && v < s->nv)
		return 0;
	*e = (rerr){.at = off, .kind = 3, .x = u >= s->nv ? u : v};
	return 1;
}

/* e's exit code, after its line on stderr when say */
static int report(const source *s, const rerr *e, int say)
{
	if (!say)
		return e->kind == 1 ? KEXIT_IO : e->kind ? KEXIT_DATA : 0;
	switch (e->kind) {
	case 1:
		kerror("cannot read '%s': %s", s->name, strerror(e->err));
		return KEXIT_IO;
	case 2:
		kerror("'%s': truncated file (end of data inside the edge data)", s->name);
		return KEXIT_DATA;
	case 3:
		kerror("'%s': edge %llu has vertex %llu, beyond the %llu vertices declared", s->name,
		       (unsigned long long)(s->first + e->at), (unsigned long long)e->x, (unsigned long long)s->nv);
		return KEXIT_DATA;
	}
	return 0;
}

/* Slots: a few per thread while their histograms stay small (8 M counters);
 * a multiple of P where every rank reads the whole input (own_slots). */
int kpart_slots(const plan *pl)
{
	size_t H = kpart_nhist(pl), T = (size_t)kpart_nthreads(), m = 4, P = (size_t)pl->P;
	while (m > 1 && m * T * H > ((size_t)1 << 23))
		m /= 2;
	return (int)(pl->keep < 0 ? m * T : (m * T + P - 1) / P * P);
}

/* Slots [*q0, *q1) of S hold this rank's slice: every slot, unless the rank
 * reads the whole input (S a multiple of P: slot me*S/P starts at tuple
 * me*M/P exactly). */
static void own_slots(const plan *pl, int S, int *q0, int *q1)
{
	*q0 = pl->keep < 0 ? 0 : pl->me * (S / pl->P);
	*q1 = pl->keep < 0 ? S : *q0 + S / pl->P;
}

/* first tuple of slot q of S */
static inline uint64_t slot_first(const source *s, int q, int S)
{
	return (uint64_t)((unsigned __int128)s->n * (unsigned)q / (unsigned)S);
}

/* The earliest error of slots [0, S): slot q stops when an earlier one
 * failed.  Where every rank reads the whole input (collective then), the
 * earliest of all ranks' is printed by the lowest rank that met it; the
 * others return their own code and print nothing. */
static int first_error(const plan *pl, kcomm *comm, const source *s, const rerr *err, int S)
{
	int q = 0;
	while (q < S && !err[q].kind)
		q++;
	if (pl->keep < 0)
		return q < S ? report(s, &err[q], 1) : 0;
	uint64_t at = q < S ? err[q].at : UINT64_MAX, who;
	kcomm_allreduce_u64(comm, &at, 1, KCOMM_MIN);
	who = q < S && err[q].at == at ? (uint64_t)pl->me : UINT64_MAX;
	kcomm_allreduce_u64(comm, &who, 1, KCOMM_MIN);
	return q < S ? report(s, &err[q], who == (uint64_t)pl->me) : 0;
}

static void failed(int *stop, int q)
{
	int cur = __atomic_load_n(stop, __ATOMIC_RELAXED);
	while (q < cur && !__atomic_compare_exchange_n(stop, &cur, q, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* ---------------------------------------------------------------- passes */

/* What pass 1's slots share. */
typedef struct p1 {
	const plan *pl;
	source *s;
	uint32_t *crc, *qcrc;
	uint64_t *ht, sl;
	rerr *err;
	size_t H;
	int S, q0, q1, stop;
} p1;

/* The bytes the CRC is taken over: p's k tuples, or (a fed source) the
 * same encoded at kgen's id width into ebuf. */
static const unsigned char *crc_bytes(const source *s, const unsigned char *p, size_t k, unsigned char *ebuf,
				      size_t *len)
{
	if (!s->crc_w || s->crc_w == s->w) {
		*len = k * 2 * (size_t)s->w;
		return p;
	}
	kedge_encode((const uint64_t *)(const void *)p, k, (unsigned)s->crc_w, ebuf);
	*len = k * 2 * (size_t)s->crc_w;
	return ebuf;
}

/* Pass 1 over slots [qa, qb) (x: a p1). */
static void pass1_slots(void *arg, int qa, int qb)
{
	p1 *x = arg;
	const plan *pl = x->pl;
	source *s = x->s;
	size_t H = x->H, rec = 2 * (size_t)s->w;
	uint64_t sl = 0;
	int w = s->w;
#pragma omp parallel reduction(+ : sl) if ((uint64_t)(qb - qa) * s->n / (uint64_t)x->S > PAR)
	{
		unsigned char *buf = s->mem || s->feed ? NULL : kmalloc((size_t)CHUNK * rec);
		unsigned char *ebuf = s->feed && x->crc ? kmalloc((size_t)CHUNK * 2 * (size_t)s->crc_w) : NULL;
#pragma omp for schedule(dynamic, 1)
		for (int q = qa; q < qb; q++) {
			uint64_t *h = x->ht + (size_t)q * H, end = slot_first(s, q + 1, x->S);
			uint32_t c = 0;
			int own = q >= x->q0 && q < x->q1;
			memset(h, 0, H * 8);
			for (uint64_t off = slot_first(s, q, x->S); off < end; off += CHUNK) {
				size_t k = end - off < CHUNK ? (size_t)(end - off) : CHUNK, len;
				const unsigned char *p = __atomic_load_n(&x->stop, __ATOMIC_RELAXED) < q
							 ? NULL
							 : bytes_at(s, off, k, buf, &x->err[q]);
				if (!p)
					break;
				if (x->crc && own) {
					const unsigned char *cb = crc_bytes(s, p, k, ebuf, &len);
					c = kio_crc32(c, cb, len);
				}
				size_t e = 0;
				for (; e < k; e++) {
					uint64_t u = kio_get_id(p, w, 2 * e), v = kio_get_id(p, w, 2 * e + 1);
					if (check_ids(s, u, v, off + e, &x->err[q]))
						break;
					if (u == v) {
						sl += (uint64_t)own;
						continue;
					}
					uint32_t d[2];
					uint64_t key[2];
					entries(pl, u, v, d, key);
					for (int j = 0; j < 2; j++) {
						int kept;
						size_t y = hslot(pl, d[j], key[j], &kept);
						h[y] += (uint64_t)kept;
					}
				}
				if (e < k)
					break;
			}
			if (x->err[q].kind)
				failed(&x->stop, q);
			x->qcrc[q] = c;
		}
		free(buf);
		free(ebuf);
	}
	x->sl += sl;
}

/* fn(arg, qa, qb) over slots [0, S): at once, or for a fed source chunk
 * after chunk (S / chunks slots each), each chunk's slots on all threads
 * while the device makes the next. */
typedef void (*slots_fn)(void *arg, int qa, int qb);
static void run_slots(source *s, int S, slots_fn fn, void *arg)
{
	kpart_feed *f = s->feed;
	if (!f) {
		fn(arg, 0, S);
		return;
	}
	uint64_t nch = kpart_feed_chunks(f), m = (uint64_t)S / nch, first, n;
	kpart_feed_begin(f);
	for (uint64_t c = 0; c < nch; c++) {
		s->feedp = (const unsigned char *)kpart_feed_get(f, c, &first, &n);
		s->feed_first = first;
		fn(arg, (int)(c * m), (int)((c + 1) * m));
		kpart_feed_put(f, c);
	}
	s->feedp = NULL;
}

/* Pass 1: bucket sizes of every key of the source, or of the kept part's
 * (kpart_nhist), and the CRC and self-loops of this rank's slice.
 * ht gets S histograms, one per slot (kpart_slots), hist their sum. */
int kpart_pass1(const plan *pl, kcomm *comm, source *s, uint32_t *crc, uint64_t *hist, uint64_t *ht, int S,
		uint64_t *selfloops)
{
	size_t H = kpart_nhist(pl), crec = 2 * (size_t)(s->crc_w ? s->crc_w : s->w);
	p1 x = {.pl = pl, .s = s, .crc = crc, .qcrc = kcalloc((size_t)S, 4), .ht = ht,
		.err = kcalloc((size_t)S, sizeof(rerr)), .H = H, .S = S, .stop = S};
	own_slots(pl, S, &x.q0, &x.q1);
	run_slots(s, S, pass1_slots, &x);
	int rc = first_error(pl, comm, s, x.err, S);
	if (crc)
		for (int q = x.q0; q < x.q1; q++)
			*crc = kio_crc32_combine(*crc, x.qcrc[q], (slot_first(s, q + 1, S) - slot_first(s, q, S)) * crec);
#pragma omp parallel for schedule(static) if (H * (size_t)S > PAR)
	for (size_t y = 0; y < H; y++) {
		uint64_t t = 0;
		for (int q = 0; q < S; q++)
			t += ht[(size_t)q * H + y];
		hist[y] += t;
	}
	*selfloops = x.sl;
	free(x.qcrc);
	free(x.err);
	return rc;
}

/* Drop keys of part pt into their buckets; -1 when a bucket overflows.
 * Threads count their share of the keys per bucket (tc: kpart_nthreads()
 * rows of nbk), take their offsets from the counts and write: every bucket
 * gets the keys in the order one thread would give them.  Where there are
 * many buckets for the keys (tc would cost more than the keys), an atomic
 * fill counter per bucket (contention is rare then). */
static int drop(const plan *pl, part *pt, const uint64_t *keys, size_t n, uint64_t *tc)
{
	int rb = pl->rbits, bad = 0, T = kpart_nthreads(), r64 = pl->res64;
	uint64_t rmask = pl->rmask, nbk = pl->nbk, *fill = pt->bfill, *end = pt->bstart + 1;
	void *res = pt->res;
	if (T == 1 || n < PAR) {
		for (size_t e = 0; e < n; e++) {
			uint64_t b = keys[e] >> rb, pos = fill[b]++;
			bad |= pos >= end[b];
			put_res(res, r64, pos < end[b] ? pos : 0, keys[e] & rmask);
		}
		return bad ? -1 : 0;
	}
	if ((uint64_t)T * nbk * 2 > n) {
#pragma omp parallel for schedule(static) reduction(| : bad)
		for (size_t e = 0; e < n; e++) {
			uint64_t key = keys[e], b = key >> rb, pos = __atomic_fetch_add(&fill[b], 1, __ATOMIC_RELAXED);
			if (pos >= end[b]) {
				bad = 1;
				continue;
			}
			put_res(res, r64, pos, key & rmask);
		}
		return bad ? -1 : 0;
	}
#pragma omp parallel reduction(| : bad)
	{
#pragma omp for schedule(static)
		for (int t = 0; t < T; t++) {
			uint64_t *c = tc + (size_t)t * nbk;
			memset(c, 0, (size_t)nbk * 8);
			for (size_t e = n * (size_t)t / (size_t)T, z = n * (size_t)(t + 1) / (size_t)T; e < z; e++)
				c[keys[e] >> rb]++;
		}
#pragma omp for schedule(static)
		for (uint64_t b = 0; b < nbk; b++)
			for (int t = 0; t < T; t++) {
				uint64_t c = tc[(size_t)t * nbk + b];
				tc[(size_t)t * nbk + b] = fill[b];
				fill[b] += c;
			}
#pragma omp for schedule(static)
		for (int t = 0; t < T; t++) {
			uint64_t *c = tc + (size_t)t * nbk;
			for (size_t e = n * (size_t)t / (size_t)T, z = n * (size_t)(t + 1) / (size_t)T; e < z; e++) {
				uint64_t b = keys[e] >> rb, pos = c[b]++;
				if (pos >= end[b]) {
					bad = 1;
					continue;
				}
				put_res(res, r64, pos, keys[e] & rmask);
			}
		}
	}
	return bad ? -1 : 0;
}

/* What pass 2's slots share. */
typedef struct p2 {
	const plan *pl;
	source *s;
	void **res;
	uint64_t *ht;
	rerr *err;
	size_t H;
	int S, stop, bad;
} p2;

/* Pass 2's drops over slots [qa, qb) (x: a p2). */
static void pass2_slots(void *arg, int qa, int qb)
{
	p2 *x = arg;
	const plan *pl = x->pl;
	source *s = x->s;
	void **res = x->res;
	const uint64_t *ht = x->ht;
	size_t H = x->H, rec = 2 * (size_t)s->w;
	uint64_t rmask = pl->rmask;
	int w = s->w, r64 = pl->res64, bad = 0, S = x->S;
	int lb = __builtin_ctzll(pl->nbk);
#pragma omp parallel reduction(| : bad) if ((uint64_t)(qb - qa) * s->n / (uint64_t)S > PAR)
	{
		unsigned char *buf = s->mem || s->feed ? NULL : kmalloc((size_t)CHUNK * rec);
		uint64_t *cur = kmalloc(kmul(H, 16)); /* position, end: one cache line */
		uint64_t *xs = kmalloc((size_t)BLK * 16), *rs = kmalloc((size_t)BLK * 16);
#pragma omp for schedule(dynamic, 1)
		for (int q = qa; q < qb; q++) {
			uint64_t end = slot_first(s, q + 1, S);
			for (size_t y = 0; y < H; y++) {
				cur[2 * y] = ht[(size_t)q * H + y];
				cur[2 * y + 1] = ht[(size_t)(q + 1) * H + y];
			}
			for (uint64_t off = slot_first(s, q, S); off < end; off += CHUNK) {
				size_t k = end - off < CHUNK ? (size_t)(end - off) : CHUNK, e = 0;
				const unsigned char *p = __atomic_load_n(&x->stop, __ATOMIC_RELAXED) < q
							 ? NULL
							 : bytes_at(s, off, k, buf, &x->err[q]);
				if (!p)
					break;
				/* blocks: the keys made (bucket, residual), then dropped */
				while (e < k) {
					size_t n = 0, z = k - e < BLK ? k : e + BLK;
					for (; e < z; e++) {
						uint64_t u = kio_get_id(p, w, 2 * e), v = kio_get_id(p, w, 2 * e + 1);
						if (check_ids(s, u, v, off + e, &x->err[q]))
							break;
						if (u == v)
							continue;
						uint32_t d[2];
						uint64_t key[2];
						entries(pl, u, v, d, key);
						for (int j = 0; j < 2; j++) {
							int kept;
							xs[n] = hslot(pl, d[j], key[j], &kept);
							rs[n] = key[j] & rmask;
							n += (size_t)kept;
						}
					}
					for (size_t t = 0; t < n; t++) {
						size_t y = xs[t];
						uint64_t pos = cur[2 * y]++;
						if (pos >= cur[2 * y + 1]) {
							bad = 1;
							continue;
						}
						put_res(res[y >> lb], r64, pos, rs[t]);
					}
					if (e < z)
						break;
				}
				if (x->err[q].kind)
					break;
			}
			if (x->err[q].kind)
				failed(&x->stop, q);
			else
				for (size_t y = 0; y < H; y++)
					bad |= cur[2 * y] != cur[2 * y + 1];
		}
		free(buf);
		free(cur);
		free(xs);
		free(rs);
	}
	x->bad |= bad;
}

/* Pass 2's drops where every key's place is known from pass 1: slot q's
 * keys of bucket x (of kpart_nhist, part x / nbk's bucket x % nbk) go to
 * [start, start + its pass-1 count) of res[x / nbk], after slot q-1's;
 * slot 0's start is xstart[x]. */
static int pass2_drop(const plan *pl, kcomm *comm, source *s, void **res, const uint64_t *xstart, uint64_t *ht,
		      int S, int *changed)
{
	size_t H = kpart_nhist(pl);
	/* counts to offsets: ht gets S + 1 rows, row S the buckets' ends */
#pragma omp parallel for schedule(static) if (H * (size_t)S > PAR)
	for (size_t y = 0; y < H; y++) {
		uint64_t at = xstart[y];
		for (int q = 0; q < S; q++) {
			uint64_t c = ht[(size_t)q * H + y];
			ht[(size_t)q * H + y] = at;
			at += c;
		}
		ht[(size_t)S * H + y] = at;
	}
	p2 x = {.pl = pl, .s = s, .res = res, .ht = ht, .err = kcalloc((size_t)S, sizeof(rerr)), .H = H, .S = S,
		.stop = S};
	run_slots(s, S, pass2_slots, &x);
	int rc = first_error(pl, comm, s, x.err, S);
	*changed |= x.bad;
	free(x.err);
	return rc;
}

/* Pass 2 on one process (every part is here), or on a rank that reads the
 * whole input (its part alone is kept). */
static int pass2_local(const plan *pl, kcomm *comm, source *s, part *parts, uint64_t *ht, int S, int *changed)
{
	size_t H = kpart_nhist(pl), nparts = H / pl->nbk;
	uint64_t nbk = pl->nbk;
	uint64_t *xstart = kmalloc(kmul(H, 8));
	void **res = kmalloc(kmul(nparts, sizeof *res));
	for (size_t x = 0; x < H; x++)
		xstart[x] = parts[x / nbk].bstart[x % nbk];
	for (size_t p = 0; p < nparts; p++)
		res[p] = parts[p].res;
	int rc = pass2_drop(pl, comm, s, res, xstart, ht, S, changed);
	for (size_t p = 0; p < nparts; p++) /* every bucket is full (or the input changed) */
		memcpy(parts[p].bfill, parts[p].bstart + 1, (size_t)nbk * 8);
	free(res);
	free(xstart);
	return rc;
}

/* plan.shared: this rank's part sized from every rank's counts (pass 1
 * counted every part's keys of its slice), its buckets in a shared window,
 * and where this rank's own keys of each part go: after the keys of the
 * ranks before it in every bucket (ht stays for pass 2's slots). */
void kpart_shared_part(const plan *pl, kcomm *comm, const uint64_t *hist, int P, int me, part *pt)
{
	size_t H = kpart_nhist(pl);
	uint64_t nbk = pl->nbk, *all = kmalloc(kmul(kmul((size_t)P, H), 8));
	kcomm_allgather(comm, hist, H * 8, all);
	pt->p = me;
	pt->i = me / pl->C;
	pt->j = me % pl->C;
	pt->bstart = kmalloc(kmul((size_t)nbk + 1, 8));
	pt->bfill = kmalloc(kmul((size_t)nbk, 8));
	pt->sbase = kmalloc(kmul(H, 8));
	size_t w = pl->res64 ? 8 : 4, *bytes = kmalloc(kmul((size_t)P, sizeof *bytes));
	for (int p = 0; p < P; p++) {
		uint64_t at = 0;
		for (uint64_t k = 0; k < nbk; k++) {
			size_t x = (size_t)p * nbk + k;
			uint64_t before = 0, tot = 0;
			for (int r = 0; r < P; r++) {
				uint64_t c = all[(size_t)r * H + x];
				before += r < me ? c : 0;
				tot += c;
			}
			pt->sbase[x] = at + before;
			if (p == me)
				pt->bstart[k] = pt->bfill[k] = at;
			at += tot;
		}
		if (p == me)
			pt->bstart[nbk] = pt->E = at;
		bytes[p] = (size_t)at * w; /* part p's keys, every rank's */
	}
	free(all);
	pt->speer = kmalloc(kmul((size_t)P, sizeof *pt->speer));
	pt->win = kcomm_shared_alloc(comm, kmul((size_t)pt->E, w), pt->speer);
	/* every part's pages mapped writable here before pass 2 scatters keys
	 * into them (else a fault a page a process, from 16 threads at random;
	 * KBFS_KPART_POPULATE=0 leaves them to fault); the barrier keeps any
	 * rank's pass 2 after every rank's mapping */
	const char *v = getenv("KBFS_KPART_POPULATE");
	if (!(v && !strcmp(v, "0"))) {
		for (int p = 0; p < P; p++)
			(void)kmem_populate(pt->speer[p], bytes[p]);
		kcomm_barrier(comm);
	}
	free(bytes);
}

/* Pass 2 with plan.shared: this rank's slice, every part's keys dropped at
 * the places make_parts gave this rank in each owner's buckets (sbase, in
 * the window speer); then, once every rank is done, the own part's keys
 * copied out of the window (the CSC is built in place, by realloc). */
static int pass2_shared(const plan *pl, kcomm *comm, source *s, part *pt, uint64_t *ht, int S, int *changed)
{
	int rc = pass2_drop(pl, comm, s, pt->speer, pt->sbase, ht, S, changed);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	kcomm_barrier(comm); /* every rank's stores are in */
	size_t bytes = kmul((size_t)pt->E, pl->res64 ? 8 : 4);
	pt->res = kmalloc(bytes ? bytes : 1);
	if (bytes)
		memcpy(pt->res, pt->speer[pl->me], bytes);
	kcomm_shared_free(comm, pt->win);
	pt->win = NULL;
	free(pt->speer);
	free(pt->sbase);
	pt->speer = NULL;
	pt->sbase = NULL;
	memcpy(pt->bfill, pt->bstart + 1, (size_t)pl->nbk * 8);
	return rc;
}

/* Pass 2: read the slice in rounds, exchange, drop.  parts[] are local;
 * on one process (all of them), or where the rank reads the whole input
 * (its own: no exchange), ht holds pass 1's S slot histograms and one row
 * more. */
int kpart_pass2(const plan *pl, kcomm *comm, source *s, part *parts, uint64_t *ht, int S, uint64_t round,
		const char *input)
{
	int P = pl->P, w = s->w, T = kpart_nthreads(), rc = 0, changed = 0;
	if (P == 1 || pl->keep >= 0) {
		rc = pass2_local(pl, comm, s, parts, ht, S, &changed);
		goto done;
	}
	if (pl->shared) {
		rc = pass2_shared(pl, comm, s, &parts[0], ht, S, &changed);
		goto done;
	}
	uint64_t nmax = s->n;
	kcomm_allreduce_u64(comm, &nmax, 1, KCOMM_MAX);
	uint64_t nrounds = (nmax + round - 1) / round;
	size_t rec = 2 * (size_t)w, rcap = 0;
	unsigned char *raw = kmalloc(kmul((size_t)round, rec));
	uint64_t *key = kmalloc(kmul((size_t)round, 16)), *sbuf = kmalloc(kmul((size_t)round, 16)), *rbuf = NULL;
	uint64_t *tc = kmalloc(kmul((size_t)T, (size_t)pl->nbk * 8));
	uint32_t *dest = kmalloc(kmul((size_t)round, 8));
	/* per thread: keys made, then counts per destination turned offsets */
	size_t *made = kcalloc((size_t)T, sizeof(size_t)), *tpos = kcalloc(kmul((size_t)T, (size_t)P), sizeof(size_t));
	size_t *cnt = kcalloc((size_t)P * 4, sizeof(size_t)), *sd = cnt + P, *rcv = sd + P, *rd = rcv + P;
	rerr *err = kcalloc((size_t)T, sizeof *err);
	for (uint64_t r = 0; r < nrounds; r++) {
		uint64_t off = r * round;
		size_t k = off >= s->n ? 0 : (s->n - off < round ? (size_t)(s->n - off) : (size_t)round);
		memset(err, 0, (size_t)T * sizeof *err);
		/* read, keys: thread t takes tuples [k t / T, k (t+1) / T) */
#pragma omp parallel for schedule(static) if (k > PAR)
		for (int t = 0; t < T; t++) {
			size_t e0 = k * (size_t)t / (size_t)T, z = k * (size_t)(t + 1) / (size_t)T, n = 2 * e0, e = 0;
			size_t *c = tpos + (size_t)t * P;
			memset(c, 0, (size_t)P * sizeof *c);
			const unsigned char *p = e0 == z ? NULL : bytes_at(s, off + e0, z - e0, raw + e0 * rec, &err[t]);
			for (; p && e < z - e0; e++) {
				uint64_t u = kio_get_id(p, w, 2 * e), v = kio_get_id(p, w, 2 * e + 1);
				if (check_ids(s, u, v, off + e0 + e, &err[t]))
					break;
				if (u == v)
					continue;
				entries(pl, u, v, dest + n, key + n);
				c[dest[n]]++;
				c[dest[n + 1]]++;
				n += 2;
			}
			made[t] = n - 2 * e0;
		}
		for (int t = 0; t < T && !rc; t++)
			if (err[t].kind)
				rc = report(s, &err[t], 1);
		if ((rc = kcomm_agree(comm, rc)))
			break;
		/* keys for this rank are dropped at once, the rest exchanged:
		 * by destination, then thread */
		size_t acc = 0;
		for (int p = 0; p < P; p++) {
			if (p == pl->me)
				continue;
			sd[p] = acc * 8;
			for (int t = 0; t < T; t++) {
				size_t c = tpos[(size_t)t * P + p];
				tpos[(size_t)t * P + p] = acc;
				acc += c;
			}
			cnt[p] = acc * 8 - sd[p];
		}
		size_t mine = acc;
		for (int t = 0; t < T; t++) {
			size_t c = tpos[(size_t)t * P + pl->me];
			tpos[(size_t)t * P + pl->me] = acc;
			acc += c;
		}
		cnt[pl->me] = 0;
		sd[pl->me] = mine * 8;
#pragma omp parallel for schedule(static) if (k > PAR)
		for (int t = 0; t < T; t++) {
			size_t *c = tpos + (size_t)t * P;
			for (size_t e = 2 * (k * (size_t)t / (size_t)T), z = e + made[t]; e < z; e++)
				sbuf[c[dest[e]]++] = key[e];
		}
		changed |= drop(pl, &parts[0], sbuf + mine, acc - mine, tc);
		kcomm_alltoall(comm, cnt, sizeof(size_t), rcv);
		size_t tot = 0;
		for (int p = 0; p < P; p++) {
			rd[p] = tot;
			tot += rcv[p];
		}
		if (tot > rcap) {
			rcap = tot + tot / 8;
			rbuf = krealloc(rbuf, rcap);
		}
		kcomm_alltoallv(comm, sbuf, cnt, sd, rbuf, rcv, rd);
		changed |= drop(pl, &parts[0], rbuf, tot / 8, tc);
	}
	for (uint64_t b = 0; b < pl->nbk && !rc; b++)
		changed |= parts[0].bfill[b] != parts[0].bstart[b + 1];
	free(raw);
	free(key);
	free(dest);
	free(sbuf);
	free(rbuf);
	free(tc);
	free(made);
	free(tpos);
	free(cnt);
	free(err);
done:
	if (!rc && changed) {
		kerror("'%s': the input changed while it was being read", input);
		rc = KEXIT_DATA;
	}
	return rc;
}

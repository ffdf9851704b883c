/*
 * kbfs_xchg: the MPI transport of the 2D BFS and the host codec of the
 * wire forms (bitmap, raw u32/u64 lists, gap + VLQ lists; see kengine.h).
 *
 * The transport runs every exchange over kcomm on the processor row and
 * column communicators it builds.  Engine buffers in host memory are
 * handed to MPI as they are; device buffers are staged through host
 * buffers with the engine's copy hooks (a transport for one rank on an
 * axis copies inside the engine and never stages).
 */
#include "kengine.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

/* ---- codec ---- */

size_t kbfs_vlq_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

size_t kbfs_vlq_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t n = 0;
	for (int shift = 0; p + n < end && shift < 64; shift += 7) {
		uint8_t c = p[n++];
		x |= (uint64_t)(c & 0x7F) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return n;
		}
	}
	return 0; /* truncated or longer than 64 bits */
}

static size_t vlq_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint64_t popcount_words(const uint64_t *bm, size_t n)
{
	uint64_t c = 0;
	for (size_t w = 0; w < n; w++)
		c += (uint64_t)__builtin_popcountll(bm[w]);
	return c;
}

/* Gap + VLQ encoding of the set bits; returns bytes, or SIZE_MAX when it
 * would pass limit. */
static size_t encode_vlq(const uint64_t *bm, size_t nwords, uint8_t *out, size_t limit)
{
	size_t pos = 0;
	uint64_t next = 0; /* offset the next gap counts from */
	for (size_t w = 0; w < nwords; w++) {
		uint64_t bits = bm[w];
		while (bits) {
			uint64_t off = (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			uint64_t gap = off - next;
			next = off + 1;
			if (pos + 10 > limit && pos + vlq_len(gap) > limit)
				return SIZE_MAX;
			pos += kbfs_vlq_put(out + pos, gap);
		}
	}
	return pos;
}

static size_t encode_raw(const uint64_t *bm, size_t nwords, int fmt, uint8_t *out)
{
	size_t pos = 0;
	for (size_t w = 0; w < nwords; w++) {
		uint64_t bits = bm[w];
		while (bits) {
			uint64_t off = (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			if (fmt == KBFS_FMT_RAW32) {
				uint32_t o = (uint32_t)off;
				memcpy(out + pos, &o, 4); /* hosts are little-endian (kbfs(7)) */
				pos += 4;
			} else {
				memcpy(out + pos, &off, 8);
				pos += 8;
			}
		}
	}
	return pos;
}

kbfs_desc kbfs_encode(const uint64_t *bm, size_t nwords, enum kbfs_xmode mode, int compress, uint8_t *out,
		      size_t cap)
{
	size_t bmbytes = nwords * 8;
	KASSERT(cap >= bmbytes);
	if (mode != KBFS_X_BITMAP) {
		uint64_t k = popcount_words(bm, nwords);
		if (compress) {
			/* a VLQ entry takes at least one byte */
			size_t limit = mode == KBFS_X_AUTO ? (bmbytes ? bmbytes - 1 : 0) : cap;
			if (k <= limit) {
				size_t n = encode_vlq(bm, nwords, out, limit);
				if (n != SIZE_MAX)
					return kbfs_desc_make(n, KBFS_FMT_VLQ);
			}
		} else {
			int fmt = (uint64_t)nwords * 64 <= (UINT64_C(1) << 32) ? KBFS_FMT_RAW32 : KBFS_FMT_RAW64;
			uint64_t esz = fmt == KBFS_FMT_RAW32 ? 4 : 8;
			uint64_t limit = mode == KBFS_X_AUTO ? bmbytes : cap + 1;
			if (k * esz < limit)
				return kbfs_desc_make(encode_raw(bm, nwords, fmt, out), fmt);
		}
	}
	memcpy(out, bm, bmbytes);
	return kbfs_desc_make(bmbytes, KBFS_FMT_BITMAP);
}

static inline void setbit(uint64_t *bm, uint64_t off, uint64_t nbits)
{
	if (off >= nbits)
		KBUG("list entry %llu outside a segment of %llu bits", (unsigned long long)off,
		     (unsigned long long)nbits);
	bm[off >> 6] |= UINT64_C(1) << (off & 63);
}

void kbfs_decode(const uint8_t *in, kbfs_desc d, uint64_t *bm, size_t nwords, int set)
{
	uint64_t bytes = kbfs_desc_bytes(d), nbits = (uint64_t)nwords * 64;
	int fmt = kbfs_desc_fmt(d);
	if (fmt == KBFS_FMT_BITMAP) {
		if (bytes != nwords * 8)
			KBUG("bitmap segment of %llu bytes, want %llu", (unsigned long long)bytes,
			     (unsigned long long)nwords * 8);
		if (set) {
			memcpy(bm, in, bytes);
		} else {
			const uint64_t *src = (const uint64_t *)(const void *)in;
			for (size_t w = 0; w < nwords; w++)
				bm[w] |= src[w];
		}
		return;
	}
	if (set)
		memset(bm, 0, nwords * 8);
	if (fmt == KBFS_FMT_VLQ) {
		const uint8_t *p = in, *end = in + bytes;
		uint64_t next = 0;
		while (p < end) {
			uint64_t gap;
			size_t n = kbfs_vlq_get(p, end, &gap);
			if (!n)
				KBUG("truncated VLQ list");
			p += n;
			setbit(bm, next + gap, nbits);
			next += gap + 1;
		}
	} else if (fmt == KBFS_FMT_RAW32) {
		for (uint64_t k = 0; k + 4 <= bytes; k += 4) {
			uint32_t o;
			memcpy(&o, in + k, 4);
			setbit(bm, o, nbits);
		}
	} else {
		for (uint64_t k = 0; k + 8 <= bytes; k += 8) {
			uint64_t o;
			memcpy(&o, in + k, 8);
			setbit(bm, o, nbits);
		}
	}
}

/* ---- MPI transport ---- */

typedef struct mpi_tr {
	kcomm *world, *row, *col;
	kbfs_engine *e;
	uint8_t *hs, *hr; /* host staging for device buffers */
	size_t hs_cap, hr_cap;
} mpi_tr;

static kcomm *axis_comm(mpi_tr *m, enum kbfs_axis a)
{
	return a == KBFS_COL ? m->col : a == KBFS_ROW ? m->row : m->world;
}

static int tr_setup(kbfs_transport *t, kcomm *world, int R, int C, kbfs_engine *e)
{
	mpi_tr *m = kcalloc(1, sizeof *m);
	int rank = kcomm_rank(world), i = rank / C, j = rank % C;
	(void)R;
	m->world = world;
	m->col = kcomm_split(world, j, i);
	m->row = kcomm_split(world, i, j);
	m->e = e;
	t->impl = m;
	return 0;
}

static void tr_teardown(kbfs_transport *t)
{
	mpi_tr *m = t->impl;
	if (!m)
		return;
	kcomm_free(m->col);
	kcomm_free(m->row);
	free(m->hs);
	free(m->hr);
	free(m);
	t->impl = NULL;
}

static int tr_size(kbfs_transport *t, enum kbfs_axis a) { return kcomm_size(axis_comm(t->impl, a)); }
static int tr_rank(kbfs_transport *t, enum kbfs_axis a) { return kcomm_rank(axis_comm(t->impl, a)); }

/* Host views of engine buffers: the buffers themselves, or staging. */
static const void *stage_send(mpi_tr *m, const void *send, size_t bytes)
{
	m->e->sync(m->e);
	if (!m->e->device_memory)
		return send;
	if (bytes > m->hs_cap) {
		free(m->hs);
		m->hs = kmalloc(bytes);
		m->hs_cap = bytes;
	}
	m->e->to_host(m->e, m->hs, send, bytes);
	return m->hs;
}

static void *stage_recv(mpi_tr *m, void *recv, size_t bytes)
{
	if (!m->e->device_memory)
		return recv;
	if (bytes > m->hr_cap) {
		free(m->hr);
		m->hr = kmalloc(bytes);
		m->hr_cap = bytes;
	}
	return m->hr;
}

static void unstage_recv(mpi_tr *m, void *recv, const void *host, size_t off, size_t bytes)
{
	if (m->e->device_memory && bytes)
		m->e->to_device(m->e, (char *)recv + off, (const char *)host + off, bytes);
}

static size_t extent(const size_t *counts, const size_t *displs, int n)
{
	size_t e = 0;
	for (int k = 0; k < n; k++)
		if (counts[k] && displs[k] + counts[k] > e)
			e = displs[k] + counts[k];
	return e;
}

static void tr_allgatherv(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes, void *recv,
			  const size_t *counts, const size_t *displs)
{
	mpi_tr *m = t->impl;
	kcomm *c = axis_comm(m, a);
	int p = kcomm_size(c);
	if (p == 1) {
		m->e->sync(m->e);
		if (bytes)
			m->e->copy(m->e, (char *)recv + displs[0], send, bytes);
		return;
	}
	size_t ext = extent(counts, displs, p);
	const void *hs = stage_send(m, send, bytes);
	void *hr = stage_recv(m, recv, ext);
	kcomm_allgatherv(c, hs, bytes, hr, counts, displs);
	for (int r = 0; r < p; r++)
		unstage_recv(m, recv, hr, displs[r], counts[r]);
}

static void tr_allgather(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes, void *recv)
{
	mpi_tr *m = t->impl;
	int p = kcomm_size(axis_comm(m, a));
	size_t *cd = kmalloc(sizeof(size_t) * 2 * (size_t)p);
	for (int r = 0; r < p; r++) {
		cd[r] = bytes;
		cd[p + r] = (size_t)r * bytes;
	}
	tr_allgatherv(t, a, send, bytes, recv, cd, cd + p);
	free(cd);
}

static void tr_alltoallv(kbfs_transport *t, enum kbfs_axis a, const void *send, const size_t *sc, const size_t *sd,
			 void *recv, const size_t *rc, const size_t *rd)
{
	mpi_tr *m = t->impl;
	kcomm *c = axis_comm(m, a);
	int p = kcomm_size(c);
	if (p == 1) {
		m->e->sync(m->e);
		if (sc[0])
			m->e->copy(m->e, (char *)recv + rd[0], (const char *)send + sd[0], sc[0]);
		return;
	}
	const void *hs = stage_send(m, send, extent(sc, sd, p));
	void *hr = stage_recv(m, recv, extent(rc, rd, p));
	kcomm_alltoallv(c, hs, sc, sd, hr, rc, rd);
	for (int r = 0; r < p; r++)
		unstage_recv(m, recv, hr, rd[r], rc[r]);
}

static void tr_alltoall(kbfs_transport *t, enum kbfs_axis a, const void *send, size_t bytes_each, void *recv)
{
	mpi_tr *m = t->impl;
	int p = kcomm_size(axis_comm(m, a));
	size_t *cd = kmalloc(sizeof(size_t) * 2 * (size_t)p);
	for (int r = 0; r < p; r++) {
		cd[r] = bytes_each;
		cd[p + r] = (size_t)r * bytes_each;
	}
	tr_alltoallv(t, a, send, cd, cd + p, recv, cd, cd + p);
	free(cd);
}

static void tr_reduce_scatter_min(kbfs_transport *t, enum kbfs_axis a, const uint64_t *send, uint64_t *recv,
				  size_t n_each)
{
	mpi_tr *m = t->impl;
	kcomm *c = axis_comm(m, a);
	int p = kcomm_size(c);
	size_t bytes = n_each * 8;
	if (p == 1) {
		m->e->sync(m->e);
		m->e->copy(m->e, recv, send, bytes);
		return;
	}
	const uint64_t *hs = stage_send(m, send, kmul(bytes, (size_t)p));
	uint64_t *hr = stage_recv(m, recv, bytes);
	kcomm_reduce_scatter_u64(c, hs, hr, n_each, KCOMM_MIN);
	unstage_recv(m, recv, hr, 0, bytes);
}

static void tr_ctl_allgather(kbfs_transport *t, enum kbfs_axis a, uint64_t v, uint64_t *all)
{
	kcomm_allgather(axis_comm(t->impl, a), &v, 8, all);
}

static void tr_ctl_alltoall(kbfs_transport *t, enum kbfs_axis a, const uint64_t *send, uint64_t *recv)
{
	kcomm_alltoall(axis_comm(t->impl, a), send, 8, recv);
}

static void tr_ctl_allreduce(kbfs_transport *t, enum kbfs_axis a, uint64_t *v, size_t n)
{
	kcomm_allreduce_u64(axis_comm(t->impl, a), v, n, KCOMM_SUM);
}

static void tr_barrier(kbfs_transport *t, enum kbfs_axis a)
{
	mpi_tr *m = t->impl;
	m->e->sync(m->e);
	kcomm_barrier(axis_comm(m, a));
}

void kbfs_transport_mpi(kbfs_transport *t)
{
	memset(t, 0, sizeof *t);
	t->name = "mpi";
	t->setup = tr_setup;
	t->teardown = tr_teardown;
	t->size = tr_size;
	t->rank = tr_rank;
	t->allgather = tr_allgather;
	t->allgatherv = tr_allgatherv;
	t->alltoall = tr_alltoall;
	t->alltoallv = tr_alltoallv;
	t->reduce_scatter_min_u64 = tr_reduce_scatter_min;
	t->ctl_allgather_u64 = tr_ctl_allgather;
	t->ctl_alltoall_u64 = tr_ctl_alltoall;
	t->ctl_allreduce_sum_u64 = tr_ctl_allreduce;
	t->barrier = tr_barrier;
}

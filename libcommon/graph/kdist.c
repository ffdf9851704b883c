/* kdist: an edge list read once and spread over the ranks of a job (see kdist.h). */
#include "kdist.h"
#include "kmagic.h"
#include "kimport.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

/* Room in *mem for *n + more tuples of rec bytes (doubling: a stream's
 * memory follows what has arrived). */
static void reserve(unsigned char **mem, uint64_t n, size_t *cap, size_t more, size_t rec)
{
	if ((n + more) * rec > *cap) {
		*cap = (n + more) * rec * 2;
		*mem = krealloc(*mem, *cap);
	}
}

/* What precedes a chunk dealt out (KCOMM_TAG_DEAL_HEAD). */
typedef struct deal_msg {
	uint64_t tuples; /* in the chunk that follows; 0: the end */
	uint64_t rc;     /* at the end: rank 0's code */
} deal_msg;

int kdist_deal(kcomm *comm, kedge_reader *r, int idbytes, unsigned char **mem, uint64_t *n)
{
	int P = kcomm_size(comm), me = kcomm_rank(comm), rc = 0;
	size_t rec = 2 * (size_t)idbytes, cap = *mem ? *n * rec : 0;
	deal_msg h;
	if (me == 0) {
		/* rank 0's own chunks are read straight into its buffer */
		unsigned char *out = P > 1 ? kmalloc((size_t)KDIST_CHUNK * rec) : NULL;
		for (uint64_t c = 0;; c++) {
			size_t got = 0;
			int d = (int)(c % (uint64_t)P);
			if (!d)
				reserve(mem, *n, &cap, KDIST_CHUNK, rec);
			if ((rc = kedge_read_raw(r, d ? out : *mem + *n * rec, KDIST_CHUNK, &got)) || !got)
				break;
			if (d) {
				h = (deal_msg){.tuples = got, .rc = 0};
				kcomm_send(comm, &h, sizeof h, d, KCOMM_TAG_DEAL_HEAD);
				kcomm_send(comm, out, got * rec, d, KCOMM_TAG_DEAL_DATA);
			} else {
				*n += got;
			}
		}
		h = (deal_msg){.tuples = 0, .rc = (uint64_t)rc};
		for (int d = 1; d < P; d++)
			kcomm_send(comm, &h, sizeof h, d, KCOMM_TAG_DEAL_HEAD);
		free(out);
		return rc;
	}
	for (;;) {
		kcomm_recv(comm, &h, sizeof h, 0, KCOMM_TAG_DEAL_HEAD);
		if (!h.tuples)
			return (int)h.rc;
		reserve(mem, *n, &cap, h.tuples, rec);
		kcomm_recv(comm, *mem + *n * rec, h.tuples * rec, 0, KCOMM_TAG_DEAL_DATA);
		*n += h.tuples;
	}
}

/* Rank 0 holds all tuples (an imported text graph): send each rank its slice. */
static void scatter(kcomm *comm, const uint64_t *all, uint64_t ne, kdist_edges *e)
{
	int rank = kcomm_rank(comm), P = kcomm_size(comm);
	uint64_t lo = ne * (uint64_t)rank / (uint64_t)P, hi = ne * (uint64_t)(rank + 1) / (uint64_t)P;
	e->ne_local = hi - lo;
	e->uv = kmalloc(kmul((size_t)e->ne_local, 16) + 16);
	if (rank == 0) {
		memcpy(e->uv, all, (size_t)e->ne_local * 16);
		for (int r = 1; r < P; r++) {
			uint64_t a = ne * (uint64_t)r / (uint64_t)P, b = ne * (uint64_t)(r + 1) / (uint64_t)P;
			kcomm_send(comm, all + 2 * a, (size_t)(b - a) * 16, r, KCOMM_TAG_SCATTER);
		}
	} else {
		kcomm_recv(comm, e->uv, (size_t)e->ne_local * 16, 0, KCOMM_TAG_SCATTER);
	}
}

/* A stream dealt as the file stores it (idbytes-wide ids), then widened. */
static int deal(kcomm *comm, kedge_reader *r, int idbytes, kdist_edges *e)
{
	unsigned char *mem = NULL;
	uint64_t n = 0;
	int rc = kdist_deal(comm, r, idbytes, &mem, &n);
	e->ne_local = n;
	e->uv = kmalloc(kmul((size_t)n, 16) + 16);
	for (uint64_t k = 0; k < 2 * n; k++)
		e->uv[k] = kio_get_id(mem, idbytes, k);
	free(mem);
	return rc;
}

/* What rank 0 found the input to be (one broadcast). */
enum { LOAD_TEXT, LOAD_STREAM, LOAD_SEEKABLE };
typedef struct load_msg {
	uint64_t rc;
	uint64_t how; /* LOAD_*: a text graph (scattered), an edge file dealt out, or read in slices */
	uint64_t nv, ne, idbytes;
} load_msg;

int kdist_load(kcomm *comm, const char *path, kdist_edges *e)
{
	int rank = kcomm_rank(comm), P = kcomm_size(comm);
	memset(e, 0, sizeof *e);
	/* rank 0 looks at the first bytes: kedge, or text for kimport */
	load_msg h = {0, LOAD_TEXT, 0, 0, 0};
	kedge_reader *r = NULL;
	kedge_info info;
	kimport_result imp;
	memset(&imp, 0, sizeof imp);
	if (rank == 0) {
		int kind;
		h.rc = (uint64_t)kmagic_detect(path, &kind);
		if (!h.rc && kind == KMAGIC_KEDGE) {
			h.how = LOAD_STREAM;
			h.rc = (uint64_t)kedge_open(path, &r, &info);
			if (!h.rc) {
				h.nv = info.nv;
				h.ne = info.ne;
				h.idbytes = info.idbytes;
				if (kedge_map(r)) {
					e->map = kmalloc(kmul((size_t)info.nv, 8) + 8);
					memcpy(e->map, kedge_map(r), (size_t)info.nv * 8);
				}
				h.how = kedge_seekable(r) ? LOAD_SEEKABLE : LOAD_STREAM;
			}
		} else if (!h.rc) {
			h.rc = (uint64_t)kimport_read(path, KIMPORT_AUTO, 0, &imp);
			h.nv = imp.nv;
			h.ne = imp.ne;
			if (!h.rc) {
				e->map = imp.map;
				imp.map = NULL;
			}
		}
	}
	kcomm_bcast(comm, &h, sizeof h, 0);
	if (h.rc)
		return (int)h.rc;
	e->nv = h.nv;
	uint64_t ne = h.ne;
	if (h.how == LOAD_TEXT) {
		scatter(comm, imp.uv, ne, e);
		kimport_free(&imp);
		return 0;
	}
	if (h.how == LOAD_STREAM) {
		int rc = deal(comm, r, (int)h.idbytes, e);
		kedge_close(r); /* the reader owns info.prov */
		return rc;
	}
	/* seekable (kedge_open checked its size and trailer): every rank reads
	 * its own slice, and the slices' CRCs together must be the trailer's */
	int rc = 0;
	if (rank != 0)
		rc = kedge_open(path, &r, &info);
	uint64_t lo = (uint64_t)((unsigned __int128)ne * (unsigned)rank / (unsigned)P);
	uint64_t hi = (uint64_t)((unsigned __int128)ne * (unsigned)(rank + 1) / (unsigned)P);
	e->ne_local = hi - lo;
	e->uv = kmalloc(kmul((size_t)e->ne_local, 16) + 16);
	uint32_t crc = 0, want = 0;
	uint64_t size = 0;
	if (!rc && info.ne != ne) {
		kerror("'%s': the input changed while it was being read", path);
		rc = KEXIT_DATA;
	}
	if (!rc)
		rc = kedge_read_at(r, lo, hi - lo, e->uv, &crc);
	if (r)
		kedge_trailer(r, &size, &want);
	kedge_close(r);
	if ((rc = kcomm_agree(comm, rc)))
		return rc;
	if (kcomm_crc32_concat(comm, crc, (hi - lo) * 2 * (uint64_t)info.idbytes) != want) {
		if (rank == 0)
			kerror("'%s': edge data checksum mismatch (corrupt file)", path);
		rc = KEXIT_DATA;
	}
	return rc;
}

void kdist_free(kdist_edges *e)
{
	free(e->uv);
	free(e->map);
	memset(e, 0, sizeof *e);
}

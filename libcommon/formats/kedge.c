#include "kedge.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kprov.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

const unsigned char kedge_magic[KEDGE_MAGIC_LEN] = {0x89, 'K', 'E', 'D', 'G', '\r', '\n', 0x1a};
static const unsigned char end_magic[4] = {'K', 'E', 'N', 'D'};

enum {
	FIXED_HDR = 40,
	TRAILER = 20,
	BLOCK_EDGES = 1 << 18,
	BLOCK_BYTES = BLOCK_EDGES * 16, /* the most raw bytes in a compressed block */
	RAW_SLAB_EDGES = 1 << 24,       /* the most edges encoded at once, uncompressed */
	MAX_PROV = 1 << 20,
	MAP_CHUNK = 1 << 17,            /* map entries read at a time */
	ZRATIO = 1032,                  /* deflate never inflates one byte to more than this */
};

int kedge_is_magic(const void *buf, size_t n)
{
	return n >= KEDGE_MAGIC_LEN && !memcmp(buf, kedge_magic, KEDGE_MAGIC_LEN);
}

/* ----------------------------------------------------------- provenance */

const char *kedge_prov_get(const kedge_info *info, const char *key)
{
	static char val[4096];
	const char *p = info->prov;
	size_t kl = strlen(key);
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			size_t vl = ll - kl - 1;
			if (vl >= sizeof val)
				vl = sizeof val - 1;
			memcpy(val, p + kl + 1, vl);
			val[vl] = 0;
			return val;
		}
		p = eol ? eol + 1 : p + ll;
	}
	return NULL;
}

uint64_t kedge_prov_u64(const kedge_info *info, const char *key, uint64_t dflt)
{
	const char *v = kedge_prov_get(info, key);
	if (!v || !*v)
		return dflt;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	return *end ? dflt : (uint64_t)x;
}

/* Options that change nothing in the content (output path, threads,
 * verbosity, the engine that generated the edges) are left out of the
 * recorded command line, so the same graph written to different places,
 * or made on another engine, is the same file. */
static int skip_arg(const char *a, int *takes_value)
{
	static const char *with_value[] = {"-o", "--output", "--threads", "--engine", NULL};
	static const char *alone[] = {"-q", "--quiet", "-v", "--verbose", "--force", NULL};
	*takes_value = 0;
	for (int i = 0; with_value[i]; i++) {
		size_t n = strlen(with_value[i]);
		if (!strcmp(a, with_value[i])) {
			*takes_value = 1;
			return 1;
		}
		if (!strncmp(a, with_value[i], n) && (a[n] == '=' || (n == 2 && a[n])))
			return 1;
	}
	for (int i = 0; alone[i]; i++)
		if (!strcmp(a, alone[i]))
			return 1;
	return 0;
}

char *kedge_prov_make(int argc, char **argv, const char *extra)
{
	size_t n = 256 + (extra ? strlen(extra) : 0);
	for (int i = 0; i < argc; i++)
		n += 4 * strlen(argv[i]) + 3; /* each byte escaped at worst */
	char *s = kmalloc(n), *p = s;
	p += sprintf(p, "program=%s\nversion=%s\nargv=%s", klog_prog(), KBFS_VERSION, klog_prog());
	for (int i = 1; i < argc; i++) {
		int takes;
		if (skip_arg(argv[i], &takes)) {
			i += takes;
			continue;
		}
		*p++ = ' ';
		kprov_escape(argv[i], p, n - (size_t)(p - s));
		p += strlen(p);
	}
	*p++ = '\n';
	*p = 0;
	if (extra)
		strcat(p, extra);
	return s;
}

void kedge_info_free(kedge_info *info)
{
	free(info->prov);
	info->prov = NULL;
}

/* --------------------------------------------------------------- reader */

struct kedge_reader {
	kio_in *in;
	kedge_info info;
	uint64_t *map;
	uint64_t payload_off;
	uint64_t size;     /* bytes of a regular file, 0 for a stream */
	uint32_t data_crc; /* the trailer's payload CRC (known when size != 0) */
	uint64_t done; /* edges delivered */
	uint32_t crc;
	unsigned char *raw;  /* encoded edge bytes */
	size_t rawcap;
	/* zlib blocks */
	unsigned char *zbuf;
	size_t zcap;
	unsigned char *blk;  /* decoded block */
	size_t blklen, blkpos, blkcap;
	int finished;
	int unchecked; /* kedge_read_payload: the caller checks the ids and the CRC */
};

/* The trailer's own checks: magic, its CRC, the edge count. */
static int trailer_ok(const kedge_reader *r, const unsigned char *t)
{
	const char *name = kio_name(r->in);
	if (memcmp(t, end_magic, 4) || kio_crc32(0, t, 16) != kio_get32(t + 16)) {
		kerror("'%s': corrupt trailer (file damaged or truncated)", name);
		return KEXIT_DATA;
	}
	if (kio_get64(t + 4) != r->info.ne) {
		kerror("'%s': trailer edge count %llu differs from header's %llu", name,
		       (unsigned long long)kio_get64(t + 4), (unsigned long long)r->info.ne);
		return KEXIT_DATA;
	}
	return 0;
}

static void decode(const unsigned char *b, size_t n, unsigned idb, uint64_t *uv)
{
	if (idb == 4)
		for (size_t k = 0; k < 2 * n; k++)
			uv[k] = kio_get32(b + 4 * k);
	else
		for (size_t k = 0; k < 2 * n; k++)
			uv[k] = kio_get64(b + 8 * k);
}

void kedge_encode(const uint64_t *uv, size_t n, unsigned idb, unsigned char *b)
{
	if (idb == 4) {
#pragma omp parallel for schedule(static) if (n > 65536)
		for (size_t k = 0; k < 2 * n; k++)
			kio_put32(b + 4 * k, (uint32_t)uv[k]);
	} else {
#pragma omp parallel for schedule(static) if (n > 65536)
		for (size_t k = 0; k < 2 * n; k++)
			kio_put64(b + 8 * k, uv[k]);
	}
}

/* A regular file must be able to hold what the header announces before
 * anything is allocated for it: exactly (raw payload) or at least (deflate
 * blocks, each at most BLOCK_BYTES raw bytes and ZRATIO times its own
 * size).  Its trailer is checked here too (the payload CRC is kept for
 * readers of slices).  A stream is checked as it is read. */
static int check_size(kedge_reader *r)
{
	const kedge_info *info = &r->info;
	const char *name = kio_name(r->in);
	uint64_t size = kio_size(r->in);
	if (!size)
		return 0;
	typedef unsigned __int128 u128;
	int zlib = !!(info->flags & KEDGE_F_ZLIB), map = !!(info->flags & KEDGE_F_MAP);
	u128 data = (u128)info->ne * (2 * info->idbytes);
	u128 least = (u128)r->payload_off + (map ? (u128)info->nv * 8 + 4 : 0) + TRAILER;
	if (zlib)
		least += 8 * ((data + BLOCK_BYTES - 1) / BLOCK_BYTES) + (data + ZRATIO - 1) / ZRATIO + 8;
	else
		least += data;
	if (size < least) {
		if (map)
			kerror("'%s': truncated file (%llu bytes cannot hold the header's id map of %llu vertices and %llu edges)",
			       name, (unsigned long long)size, (unsigned long long)info->nv, (unsigned long long)info->ne);
		else
			kerror("'%s': truncated file (%llu bytes cannot hold the header's %llu edges)", name,
			       (unsigned long long)size, (unsigned long long)info->ne);
		return KEXIT_DATA;
	}
	if (!zlib && size > least) {
		kerror("'%s': unexpected data after the trailer", name);
		return KEXIT_DATA;
	}
	unsigned char t[TRAILER];
	int rc = kio_pread(r->in, t, TRAILER, size - TRAILER, "trailer");
	if (rc)
		return rc;
	if ((rc = trailer_ok(r, t)))
		return rc;
	r->size = size;
	r->data_crc = kio_get32(t + 12);
	return 0;
}

/* The map's checksum after its entries, against crc (theirs). */
static int read_map_crc(kedge_reader *r, uint32_t crc)
{
	unsigned char c4[4];
	int rc = kio_read_exact(r->in, c4, 4, "vertex map");
	if (!rc && crc != kio_get32(c4)) {
		kerror("'%s': vertex map checksum mismatch (corrupt file)", kio_name(r->in));
		rc = KEXIT_DATA;
	}
	return rc;
}

/* The map in pieces: on a stream, memory follows the bytes that arrive. */
static int read_map(kedge_reader *r)
{
	uint64_t nv = r->info.nv, cap = 0;
	unsigned char *mb = kmalloc((size_t)MAP_CHUNK * 8);
	uint32_t crc = 0;
	int rc = 0;
	for (uint64_t k = 0; k < nv && !rc; ) {
		size_t n = nv - k < MAP_CHUNK ? (size_t)(nv - k) : MAP_CHUNK;
		if (k + n > cap) {
			cap = r->size ? nv : cap * 2 > k + n ? cap * 2 : k + n;
			if (cap > nv)
				cap = nv;
			r->map = krealloc(r->map, kmul((size_t)cap, 8));
		}
		if ((rc = kio_read_exact(r->in, mb, n * 8, "vertex map")))
			break;
		crc = kio_crc32(crc, mb, n * 8);
		for (size_t j = 0; j < n; j++)
			r->map[k + j] = kio_get64(mb + 8 * j);
		k += n;
	}
	free(mb);
	/* ids ascend strictly (none repeats) and none is the padding marker:
	 * checked once the checksum holds, so a damaged file is called so */
	if (!rc)
		rc = read_map_crc(r, crc);
	for (uint64_t k = 0; k < nv && !rc; k++)
		if (r->map[k] == UINT64_MAX || (k && r->map[k] <= r->map[k - 1])) {
			if (r->map[k] == UINT64_MAX)
				kerror("'%s': id map entry %llu is 2^64-1, which kbfs reserves", kio_name(r->in),
				       (unsigned long long)k);
			else if (r->map[k] == r->map[k - 1])
				kerror("'%s': the id map lists id %llu twice (entries %llu and %llu)", kio_name(r->in),
				       (unsigned long long)r->map[k], (unsigned long long)k - 1, (unsigned long long)k);
			else
				kerror("'%s': the id map does not ascend (entry %llu, id %llu, after id %llu)", kio_name(r->in),
				       (unsigned long long)k, (unsigned long long)r->map[k], (unsigned long long)r->map[k - 1]);
			rc = KEXIT_DATA;
		}
	if (!r->map)
		r->map = kmalloc(8); /* a map of no vertices is still a map */
	r->payload_off += nv * 8 + 4;
	return rc;
}

int kedge_open(const char *path, kedge_reader **rp, kedge_info *info)
{
	*rp = NULL;
	memset(info, 0, sizeof *info);
	kio_in *in = kio_open_in(path, 0);
	if (!in)
		return KEXIT_IO;
	const char *name = kio_name(in);
	unsigned char h[FIXED_HDR];
	size_t got;
	int rc = kio_read(in, h, FIXED_HDR, &got);
	if (rc)
		goto fail;
	if (got == 0) {
		kerror("'%s': empty file, not an edge file", name);
		rc = KEXIT_DATA;
		goto fail;
	}
	if (!kedge_is_magic(h, got)) {
		kerror("'%s': not a kbfs edge file (wrong magic number)", name);
		rc = KEXIT_DATA;
		goto fail;
	}
	if (got < FIXED_HDR) {
		kerror("'%s': truncated file (end of data inside the header)", name);
		rc = KEXIT_DATA;
		goto fail;
	}
	if ((rc = kio_get_version(h, name, "edge file version", KEDGE_MAJOR, KEDGE_MINOR, &info->major, &info->minor,
				  &info->flags)))
		goto fail;
	info->idbytes = kio_get32(h + 16);
	info->nv = kio_get64(h + 20);
	info->ne = kio_get64(h + 28);
	uint32_t plen = kio_get32(h + 36);
	if ((info->idbytes != 4 && info->idbytes != 8) || plen > MAX_PROV ||
	    (info->idbytes == 4 && info->nv > (1ull << 32)) || (info->flags & ~7u)) {
		kerror("'%s': corrupt edge file header", name);
		rc = KEXIT_DATA;
		goto fail;
	}
	info->prov = kmalloc(plen + 1);
	if ((rc = kio_read_exact(in, info->prov, plen, "header")))
		goto fail;
	info->prov[plen] = 0;
	unsigned char c4[4];
	if ((rc = kio_read_exact(in, c4, 4, "header")))
		goto fail;
	uint32_t crc = kio_crc32(kio_crc32(0, h, FIXED_HDR), info->prov, plen);
	if (crc != kio_get32(c4)) {
		kerror("'%s': header checksum mismatch (corrupt file)", name);
		rc = KEXIT_DATA;
		goto fail;
	}
	kedge_reader *r = kcalloc(1, sizeof *r);
	r->in = in;
	r->info = *info;
	r->payload_off = FIXED_HDR + plen + 4;
	if ((info->flags & KEDGE_F_MAP) && info->nv > UINT64_MAX / 8) {
		kerror("'%s': corrupt edge file header", name);
		rc = KEXIT_DATA;
		goto fail_r;
	}
	if ((rc = check_size(r)))
		goto fail_r;
	if ((info->flags & KEDGE_F_MAP) && (rc = read_map(r)))
		goto fail_r;
	*rp = r;
	return 0;
fail_r:
	free(r->map);
	free(r);
fail:
	kedge_info_free(info);
	kio_close_in(in);
	return rc;
}

static int check_trailer(kedge_reader *r)
{
	unsigned char t[TRAILER];
	const char *name = kio_name(r->in);
	int rc = kio_read_exact(r->in, t, TRAILER, "trailer");
	if (rc)
		return rc;
	if ((rc = trailer_ok(r, t)))
		return rc;
	if (r->unchecked)
		r->data_crc = kio_get32(t + 12);
	else if (kio_get32(t + 12) != r->crc) {
		kerror("'%s': edge data checksum mismatch (corrupt file)", name);
		return KEXIT_DATA;
	}
	unsigned char extra;
	size_t got;
	if ((rc = kio_read(r->in, &extra, 1, &got)))
		return rc;
	if (got) {
		kerror("'%s': unexpected data after the trailer", name);
		return KEXIT_DATA;
	}
	r->finished = 1;
	return 0;
}

/* next decoded zlib block into r->blk */
static int next_block(kedge_reader *r)
{
	unsigned char bh[8];
	const char *name = kio_name(r->in);
	int rc = kio_read_exact(r->in, bh, 8, "compressed edge data");
	if (rc)
		return rc;
	uint32_t clen = kio_get32(bh), rlen = kio_get32(bh + 4);
	size_t rec = 2 * (size_t)r->info.idbytes;
	if (clen == 0 && rlen == 0) {
		kerror("'%s': truncated file (the compressed data ends after %llu of the header's %llu edges)", name,
		       (unsigned long long)r->done, (unsigned long long)r->info.ne);
		return KEXIT_DATA;
	}
	if (clen == 0 || rlen == 0 || rlen % rec || rlen > BLOCK_BYTES || clen > rlen + rlen / 8 + 1024 ||
	    (uint64_t)rlen > (uint64_t)clen * ZRATIO) {
		kerror("'%s': corrupt compressed block", name);
		return KEXIT_DATA;
	}
	if (clen > r->zcap) {
		r->zcap = clen;
		r->zbuf = krealloc(r->zbuf, clen);
	}
	if (rlen > r->blkcap) {
		r->blkcap = rlen;
		r->blk = krealloc(r->blk, rlen);
	}
	if ((rc = kio_read_exact(r->in, r->zbuf, clen, "compressed edge data")))
		return rc;
	uLongf out = rlen;
	if (uncompress(r->blk, &out, r->zbuf, clen) != Z_OK || out != rlen) {
		kerror("'%s': corrupt compressed block", name);
		return KEXIT_DATA;
	}
	r->blklen = rlen;
	r->blkpos = 0;
	return 0;
}

/* All edges delivered: the end of the compressed blocks, the trailer. */
static int read_end(kedge_reader *r)
{
	if (r->info.flags & KEDGE_F_ZLIB) {
		unsigned char bh[8];
		if (r->blkpos < r->blklen) {
			kerror("'%s': a compressed block holds more edges than the header announces", kio_name(r->in));
			return KEXIT_DATA;
		}
		int rc = kio_read_exact(r->in, bh, 8, "compressed edge data");
		if (rc)
			return rc;
		if (kio_get32(bh) || kio_get32(bh + 4)) {
			kerror("'%s': more edge data than the header announces", kio_name(r->in));
			return KEXIT_DATA;
		}
	}
	return check_trailer(r);
}

/* The ids of n stored tuples at p below nv, and their bytes' CRC chained
 * onto r->crc, on all threads when n is large (pieces of ID_PIECE tuples,
 * their CRCs merged in order); the first id out of bounds is the one named. */
enum { ID_PIECE = 1 << 18 };
static int check_tuples(kedge_reader *r, const unsigned char *p, size_t n)
{
	unsigned idb = r->info.idbytes;
	size_t rec = 2 * (size_t)idb, np = (n + ID_PIECE - 1) / ID_PIECE, bad = SIZE_MAX;
	uint64_t nv = r->info.nv;
	uint32_t one[1], *crc = np > 1 ? kmalloc(kmul(np, 4)) : one;
#pragma omp parallel for schedule(static) if (np > 1) reduction(min : bad)
	for (size_t q = 0; q < np; q++) {
		size_t a = q * ID_PIECE, b = n - a < ID_PIECE ? n : a + ID_PIECE;
		crc[q] = kio_crc32(0, p + a * rec, (b - a) * rec);
		for (size_t k = 2 * a; k < 2 * b; k++)
			if (kio_get_id(p, idb, k) >= nv) {
				bad = k;
				break;
			}
	}
	for (size_t q = 0; q < np; q++) {
		size_t a = q * ID_PIECE, b = n - a < ID_PIECE ? n : a + ID_PIECE;
		r->crc = kio_crc32_combine(r->crc, crc[q], (b - a) * rec);
	}
	if (crc != one)
		free(crc);
	if (bad != SIZE_MAX) {
		kerror("'%s': edge %llu has vertex %llu, beyond the %llu vertices declared", kio_name(r->in),
		       (unsigned long long)(r->done + bad / 2), (unsigned long long)kio_get_id(p, idb, bad),
		       (unsigned long long)nv);
		return KEXIT_DATA;
	}
	return 0;
}

/* The next tuples, up to max, as stored, checked (check_tuples): *p points
 * at them, in buf (where a raw payload is read straight into it), in
 * r->raw (buf NULL) or in the decoded block; *got = 0 at the end, once the
 * trailer has been checked. */
static int next_tuples(kedge_reader *r, unsigned char *buf, size_t max, const unsigned char **p, size_t *got)
{
	*got = 0;
	if (r->finished)
		return 0;
	uint64_t left = r->info.ne - r->done;
	if (left == 0)
		return read_end(r);
	size_t n = max < left ? max : (size_t)left;
	size_t rec = 2 * (size_t)r->info.idbytes;
	if (r->info.flags & KEDGE_F_ZLIB) {
		if (r->blkpos == r->blklen) {
			int rc = next_block(r);
			if (rc)
				return rc;
		}
		size_t avail = (r->blklen - r->blkpos) / rec;
		if (n > avail)
			n = avail;
		*p = r->blk + r->blkpos;
		r->blkpos += n * rec;
	} else {
		if (!buf) {
			if (n > BLOCK_EDGES)
				n = BLOCK_EDGES;
			if (n * rec > r->rawcap) {
				r->rawcap = n * rec;
				r->raw = krealloc(r->raw, r->rawcap);
			}
			buf = r->raw;
		}
		int rc = kio_read_exact(r->in, buf, n * rec, "edge data");
		if (rc)
			return rc;
		*p = buf;
	}
	int rc = check_tuples(r, *p, n);
	if (rc)
		return rc;
	r->done += n;
	*got = n;
	return 0;
}

int kedge_read(kedge_reader *r, uint64_t *uv, size_t max, size_t *got)
{
	const unsigned char *p;
	int rc = next_tuples(r, NULL, max, &p, got);
	if (!rc && *got)
		decode(p, *got, r->info.idbytes, uv);
	return rc;
}

int kedge_read_raw(kedge_reader *r, void *buf, size_t max, size_t *got)
{
	const unsigned char *p;
	int rc = next_tuples(r, buf, max, &p, got);
	if (!rc && *got && p != buf)
		memcpy(buf, p, *got * 2 * (size_t)r->info.idbytes);
	return rc;
}

int kedge_read_payload(kedge_reader *r, void *buf, size_t n)
{
	if ((r->info.flags & KEDGE_F_ZLIB) || n > r->info.ne - r->done)
		KBUG("kedge_read_payload past the payload or on a compressed one");
	int rc = kio_read_exact(r->in, buf, n * 2 * (size_t)r->info.idbytes, "edge data");
	if (rc)
		return rc;
	r->unchecked = 1;
	r->done += n;
	return 0;
}

int kedge_read_end(kedge_reader *r)
{
	if (r->finished)
		return 0;
	if (r->done != r->info.ne)
		KBUG("kedge_read_end before the payload's end");
	return read_end(r);
}

const uint64_t *kedge_map(const kedge_reader *r) { return r->map; }
int kedge_seekable(const kedge_reader *r) { return kio_seekable(r->in) && !(r->info.flags & KEDGE_F_ZLIB); }
const char *kedge_name(const kedge_reader *r) { return kio_name(r->in); }

int kedge_trailer(const kedge_reader *r, uint64_t *size, uint32_t *crc)
{
	if (r->size) {
		*size = r->size;
		*crc = r->data_crc;
		return 1;
	}
	if (!r->finished)
		return 0;
	*size = kio_tell(r->in);
	*crc = r->unchecked ? r->data_crc : r->crc;
	return 1;
}

int kedge_read_at(kedge_reader *r, uint64_t first, uint64_t count, uint64_t *uv, uint32_t *crc)
{
	if (!kedge_seekable(r))
		KBUG("kedge_read_at on a stream");
	if (first > r->info.ne || count > r->info.ne - first)
		KBUG("kedge_read_at out of range");
	size_t rec = 2 * (size_t)r->info.idbytes;
	while (count) {
		size_t n = count > BLOCK_EDGES ? BLOCK_EDGES : (size_t)count;
		if (n * rec > r->rawcap) {
			r->rawcap = n * rec;
			r->raw = krealloc(r->raw, r->rawcap);
		}
		int rc = kio_pread(r->in, r->raw, n * rec, r->payload_off + first * rec, "edge data");
		if (rc)
			return rc;
		if (crc)
			*crc = kio_crc32(*crc, r->raw, n * rec);
		decode(r->raw, n, r->info.idbytes, uv);
		for (size_t k = 0; k < 2 * n; k++)
			if (uv[k] >= r->info.nv) {
				kerror("'%s': edge %llu has vertex %llu, beyond the %llu vertices declared",
				       kio_name(r->in), (unsigned long long)(first + k / 2),
				       (unsigned long long)uv[k], (unsigned long long)r->info.nv);
				return KEXIT_DATA;
			}
		uv += 2 * n;
		first += n;
		count -= n;
	}
	return 0;
}

void kedge_close(kedge_reader *r)
{
	if (!r)
		return;
	kio_close_in(r->in);
	free(r->map);
	free(r->raw);
	free(r->zbuf);
	free(r->blk);
	kedge_info_free(&r->info);
	free(r);
}

int kedge_load(const char *path, kedge_info *info, uint64_t **uvp, uint64_t **mapp)
{
	kedge_reader *r;
	*uvp = NULL;
	if (mapp)
		*mapp = NULL;
	int rc = kedge_open(path, &r, info);
	if (rc)
		return rc;
	/* a raw regular file holds exactly ne edges (kedge_open checked its
	 * size); otherwise memory grows with the edges that arrive */
	uint64_t ne = info->ne, cap = kedge_seekable(r) || ne < BLOCK_EDGES ? ne : BLOCK_EDGES;
	uint64_t *uv = kmalloc(kmul(kmul((size_t)cap, 2), sizeof *uv) + 16);
	uint64_t off = 0;
	for (;;) {
		if (off == cap && cap < ne) {
			cap = ne - cap > cap ? 2 * cap : ne;
			uv = krealloc(uv, kmul(kmul((size_t)cap, 2), sizeof *uv) + 16);
		}
		size_t got;
		size_t want = cap - off > BLOCK_EDGES ? BLOCK_EDGES : (size_t)(cap - off);
		rc = kedge_read(r, uv + 2 * off, want ? want : 1, &got);
		if (rc || !got)
			break;
		off += got;
	}
	if (!rc && mapp && r->map) {
		*mapp = kmalloc(kmul((size_t)info->nv, 8));
		memcpy(*mapp, r->map, (size_t)info->nv * 8);
	}
	r->info.prov = NULL; /* ownership stays with *info */
	kedge_close(r);
	if (rc) {
		free(uv);
		kedge_info_free(info);
		return rc;
	}
	*uvp = uv;
	return 0;
}

/* --------------------------------------------------------------- writer */

struct kedge_writer {
	kio_out *out;
	kedge_info info;
	int compress;
	uint64_t written;
	uint32_t crc;
	unsigned char *buf;
	size_t cap;
	unsigned char *zbuf;
	size_t zcap;
};

int kedge_create(const char *path, int force, const kedge_info *info, const uint64_t *map, int compress,
		 kedge_writer **wp)
{
	*wp = NULL;
	kio_out *out = kio_open_out(path, 1, force);
	if (!out)
		return KEXIT_IO;
	kedge_writer *w = kcalloc(1, sizeof *w);
	w->out = out;
	w->info = *info;
	w->info.prov = NULL;
	w->compress = compress;
	w->info.major = KEDGE_MAJOR;
	w->info.minor = KEDGE_MINOR;
	if (!w->info.idbytes)
		w->info.idbytes = info->nv <= (1ull << 32) ? 4 : 8;
	w->info.flags = (info->flags & KEDGE_F_UNDIRECTED) | (compress ? KEDGE_F_ZLIB : 0) | (map ? KEDGE_F_MAP : 0);
	const char *prov = info->prov ? info->prov : "";
	size_t plen = strlen(prov);
	unsigned char h[FIXED_HDR];
	memcpy(h, kedge_magic, 8);
	kio_put16(h + 8, w->info.major);
	kio_put16(h + 10, w->info.minor);
	kio_put32(h + 12, w->info.flags);
	kio_put32(h + 16, w->info.idbytes);
	kio_put64(h + 20, w->info.nv);
	kio_put64(h + 28, w->info.ne);
	kio_put32(h + 36, (uint32_t)plen);
	unsigned char c4[4];
	kio_put32(c4, kio_crc32(kio_crc32(0, h, FIXED_HDR), prov, plen));
	int rc = kio_write(out, h, FIXED_HDR);
	if (!rc)
		rc = kio_write(out, prov, plen);
	if (!rc)
		rc = kio_write(out, c4, 4);
	if (!rc && map) {
		uint32_t mc = 0;
		unsigned char mb[8 * 1024];
		for (uint64_t k = 0; k < info->nv && !rc; k += 1024) {
			size_t n = info->nv - k < 1024 ? (size_t)(info->nv - k) : 1024;
			for (size_t j = 0; j < n; j++)
				kio_put64(mb + 8 * j, map[k + j]);
			mc = kio_crc32(mc, mb, 8 * n);
			rc = kio_write(out, mb, 8 * n);
		}
		kio_put32(c4, mc);
		if (!rc)
			rc = kio_write(out, c4, 4);
	}
	if (rc) {
		kedge_abandon(w);
		return rc;
	}
	*wp = w;
	return 0;
}

static int write_zblock(kedge_writer *w, const unsigned char *b, size_t n)
{
	uLong bound = compressBound((uLong)n);
	if (bound + 8 > w->zcap) {
		w->zcap = bound + 8;
		w->zbuf = krealloc(w->zbuf, w->zcap);
	}
	uLongf clen = bound;
	if (compress2(w->zbuf + 8, &clen, b, (uLong)n, 1) != Z_OK)
		kdie(KEXIT_RESOURCE, "zlib compression failed");
	kio_put32(w->zbuf, (uint32_t)clen);
	kio_put32(w->zbuf + 4, (uint32_t)n);
	return kio_write(w->out, w->zbuf, clen + 8);
}

int kedge_write(kedge_writer *w, const uint64_t *uv, size_t n)
{
	if (n > w->info.ne - w->written)
		KBUG("more edges written than announced");
	/* deflate blocks hold BLOCK_EDGES; raw edges go out in slabs of up to
	 * RAW_SLAB_EDGES, encoded and written on all threads */
	size_t rec = 2 * (size_t)w->info.idbytes, most = w->compress ? BLOCK_EDGES : RAW_SLAB_EDGES;
	while (n) {
		size_t k = n > most ? most : n;
		if (k * rec > w->cap) {
			w->cap = (k > BLOCK_EDGES ? k : BLOCK_EDGES) * rec;
			w->buf = krealloc(w->buf, w->cap);
		}
		kedge_encode(uv, k, w->info.idbytes, w->buf);
		int rc;
		if (w->compress) {
			w->crc = kio_crc32(w->crc, w->buf, k * rec);
			rc = write_zblock(w, w->buf, k * rec);
		} else {
			rc = kio_write_crc(w->out, w->buf, k * rec, &w->crc);
		}
		if (rc)
			return rc;
		w->written += k;
		uv += 2 * k;
		n -= k;
	}
	return 0;
}

int kedge_finish(kedge_writer *w)
{
	if (w->written != w->info.ne)
		KBUG("edge file finished after %llu of %llu edges", (unsigned long long)w->written,
		     (unsigned long long)w->info.ne);
	int rc = 0;
	if (w->compress) {
		unsigned char z[8] = {0};
		rc = kio_write(w->out, z, 8);
	}
	unsigned char t[TRAILER];
	memcpy(t, end_magic, 4);
	kio_put64(t + 4, w->info.ne);
	kio_put32(t + 12, w->crc);
	kio_put32(t + 16, kio_crc32(0, t, 16));
	if (!rc)
		rc = kio_write(w->out, t, TRAILER);
	if (rc) {
		kedge_abandon(w);
		return rc;
	}
	rc = kio_commit(w->out);
	free(w->buf);
	free(w->zbuf);
	free(w);
	return rc;
}

void kedge_abandon(kedge_writer *w)
{
	if (!w)
		return;
	kio_abort(w->out);
	free(w->buf);
	free(w->zbuf);
	free(w);
}

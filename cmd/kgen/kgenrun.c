#include "kgenrun.h"
#include "kdev.h"
#include "kgen_edge.h"
#include "kimport.h"
#include "kio.h"
#include "kprov.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"
#include "ksink.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Edges per chunk: the unit a rank generates, sends and rank 0 writes
 * (chunk c belongs to rank c mod P).  A device chunk is larger:
 * KGEN_DEVICE_CHUNK, what each of its two slots holds (kgen_dev.h). */
enum { CHUNK_EDGES = 1 << 20 };

static void progress(uint64_t done, uint64_t total, double t0)
{
	if (!kcomm_progress_ok())
		return;
	double dt = ktime() - t0;
	fprintf(stderr, "\r%s: %5.1f%% of %" PRIu64 " edges, %.1f M edges/s   ", klog_prog(),
		100.0 * (double)done / (double)total, total, dt > 0 ? (double)done / dt / 1e6 : 0.0);
	if (done == total)
		fputc('\n', stderr);
}

/* The edge file's generation time, kept with it (kprov.h); kedge only. */
static void record_time(const kgenrun_opts *o, double seconds)
{
	if (o->format == KFMT_KEDGE && kprov_set_generation_time(o->out, seconds))
		kinfo("'%s': cannot record the generation time as an attribute of the file", o->out);
}

/* Edges per chunk, the same on every rank (collective).  Test hook
 * KBFS_KGEN_CHUNK=N (kgen(1)): N edges, so small graphs run the chunk
 * pipeline through many chunks. */
static uint64_t chunk_edges(kcomm *world, int on_dev)
{
	uint64_t c = on_dev ? KGEN_DEVICE_CHUNK : CHUNK_EDGES, n;
	const char *v = getenv("KBFS_KGEN_CHUNK");
	if (v && *v && !kopt_parse_u64(v, 1, 1u << 30, &n))
		c = n;
	else if (v && *v && kcomm_rank(world) == 0)
		kwarn("ignoring KBFS_KGEN_CHUNK='%s' (want an edge count from 1 to 2^30)", v);
	kcomm_allreduce_u64(world, &c, 1, KCOMM_MIN);
	return c;
}

typedef struct chunking {
	uint64_t M, chunk, nchunks;
	int rank, P;
} chunking;

static uint64_t chunk_first(const chunking *k, uint64_t c) { return c * k->chunk; }
static uint64_t chunk_len(const chunking *k, uint64_t c)
{
	uint64_t first = c * k->chunk;
	return k->M - first < k->chunk ? k->M - first : k->chunk;
}

/* The device's slot for this rank's j-th chunk: start it when there is one. */
static void dev_start(kgen_device *dev, const chunking *k, uint64_t j)
{
	uint64_t c = (uint64_t)k->rank + j * (uint64_t)k->P;
	if (dev && c < k->nchunks)
		dev->start(dev, (int)(j & 1), chunk_first(k, c), chunk_len(k, c));
}

int kgenrun_generate(kcomm *world, const kgenrun_opts *o)
{
	double tstart = ktime();
	kgen_ctx g;
	if (kgen_init(&g, &o->p) || !g.nedges) {
		kerror("invalid generator parameters (scale %d, edgefactor %" PRIu64 ")", o->p.scale, o->p.edgefactor);
		return KEXIT_USAGE;
	}
	int on_dev, rc = kdev_pick(world, o->dev ? &o->dev->base : NULL, o->engine, &on_dev, NULL, 0);
	if (rc)
		return rc;
	chunking k = {.M = g.nedges, .rank = kcomm_rank(world), .P = kcomm_size(world)};
	k.chunk = chunk_edges(world, on_dev);
	k.nchunks = (k.M + k.chunk - 1) / k.chunk;
	const uint64_t most = k.M < k.chunk ? k.M : k.chunk; /* edges of the largest chunk */
	const int rank = k.rank, P = k.P;
	kgen_device *dev = on_dev ? o->dev : NULL;
	if (dev && (rc = kdev_open(&dev->base, world)))
		return rc;
	if (dev && (rc = kcomm_agree(world, dev->alloc(dev, world, &g, most)))) {
		dev->base.close(&dev->base);
		return rc;
	}
	ksink *sink = NULL;
	if (rank == 0) {
		char extra[512];
		snprintf(extra, sizeof extra,
			 "kind=kronecker\nscale=%d\nedgefactor=%" PRIu64 "\nseed1=%" PRIu64 "\nseed2=%" PRIu64
			 "\ng500_version=%d\n",
			 o->p.scale, o->p.edgefactor, o->p.seed1, o->p.seed2, o->p.version);
		kedge_info info = {0};
		info.nv = 1ull << o->p.scale;
		info.ne = k.M;
		info.flags = KEDGE_F_UNDIRECTED;
		info.prov = kedge_prov_make(o->argc, o->argv, extra);
		rc = ksink_open(o->out, o->format, o->force, o->compress, &info, NULL, &sink);
		free(info.prov);
	}
	if ((rc = kcomm_agree(world, rc))) {
		if (dev)
			dev->base.close(&dev->base);
		return rc;
	}
	/* the CPU's chunk, or on the device rank 0's buffer for the others' */
	uint64_t *buf = !dev || (rank == 0 && P > 1) ? kmalloc(kmul(2 * sizeof(uint64_t), most)) : NULL;
	double gen_s = 0, write_s = 0, t0 = ktime();
	dev_start(dev, &k, 0);
	dev_start(dev, &k, 1);
	for (uint64_t base = 0, j = 0; base < k.nchunks; base += (uint64_t)P, j++) {
		/* this rank's chunk of the round: generated (or waited for), then
		 * sent to rank 0, or kept in own for rank 0 to write */
		uint64_t c = base + (uint64_t)rank;
		const uint64_t *own = NULL;
		if (c < k.nchunks) {
			double t = ktime();
			if (dev) {
				own = dev->wait(dev, (int)(j & 1));
			} else {
				kgen_edges(&g, chunk_first(&k, c), chunk_len(&k, c), buf);
				own = buf;
			}
			gen_s += ktime() - t;
			if (rank != 0) {
				kcomm_send(world, own, chunk_len(&k, c) * 16, 0, KCOMM_TAG_GENERATE);
				dev_start(dev, &k, j + 2);
			}
		}
		if (rank != 0)
			continue;
		for (int r = 0; r < P; r++) {
			uint64_t cr = base + (uint64_t)r, n = cr < k.nchunks ? chunk_len(&k, cr) : 0;
			if (!n)
				break;
			const uint64_t *uv = own;
			if (r != 0) {
				kcomm_recv(world, buf, n * 16, r, KCOMM_TAG_GENERATE);
				uv = buf;
			}
			if (!rc) { /* after a failed write: take what the others send, keep nothing */
				double t = ktime();
				rc = ksink_write(sink, uv, n);
				write_s += ktime() - t;
				if (rc)
					ksink_abandon(sink);
				else
					progress(chunk_first(&k, cr) + n, k.M, t0);
			}
			if (r == 0) /* the slot of rank 0's own chunk is free again */
				dev_start(dev, &k, j + 2);
		}
		if (rc && P == 1)
			break;
	}
	free(buf);
	double dev_s[2] = {0, 0}, gen_max = gen_s;
	if (dev) {
		dev->times(dev, &dev_s[0], &dev_s[1]);
		dev->base.close(&dev->base);
	}
	kcomm_allreduce_double(world, dev_s, 2, KCOMM_MAX);
	kcomm_allreduce_double(world, &gen_max, 1, KCOMM_MAX);
	if (rank == 0 && !rc && !(rc = ksink_finish(sink))) {
		double all = ktime() - tstart, gen = dev ? dev_s[0] : gen_max;
		record_time(o, all);
		if (dev)
			kinfo("%" PRIu64 " edges generated on the %s device in %.3f s (%.1f M edges/s), copied to the host in "
			      "%.3f s, %.3f s waited for; written in %.3f s; %.3f s in all",
			      k.M, dev->base.name, gen, gen > 0 ? (double)k.M / gen / 1e6 : 0.0, dev_s[1], gen_max, write_s, all);
		else
			kinfo("%" PRIu64 " edges generated on the CPU in %.3f s (%.1f M edges/s); written in %.3f s; %.3f s in all",
			      k.M, gen, gen > 0 ? (double)k.M / gen / 1e6 : 0.0, write_s, all);
	}
	return kcomm_agree(world, rc);
}

static int write_map(const char *path, const kimport_result *r)
{
	kio_out *o = kio_open_out(path, 0, 0);
	if (!o)
		return KEXIT_IO;
	int rc = 0;
	for (uint64_t k = 0; k < r->nv && !rc; k++)
		rc = kio_printf(o, "%" PRIu64 " %" PRIu64 "\n", k, r->map ? r->map[k] : k);
	if (rc) {
		kio_abort(o);
		return rc;
	}
	return kio_commit(o);
}

/* The provenance lines of a converted kbfs edge file that describe the
 * graph (all but who wrote it and how), so a conversion keeps them. */
static void graph_prov(const char *prov, char *out, size_t sz)
{
	static const char *const drop[] = {"program=", "version=", "argv=", NULL};
	size_t n = 0;
	out[0] = 0;
	for (const char *p = prov; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
		int keep = 1;
		for (int k = 0; drop[k]; k++)
			keep &= strncmp(p, drop[k], strlen(drop[k])) != 0;
		if (keep && n + len < sz) {
			memcpy(out + n, p, len);
			n += len;
			out[n] = 0;
		}
		p += len;
	}
}

int kgenrun_import(kcomm *world, const kgenrun_opts *o)
{
	int rc = 0;
	if (kcomm_rank(world) == 0) {
		kimport_result r;
		kedge_info src;
		double t0 = ktime();
		/* the edge file and the map together, or neither */
		kio_hold_commits();
		rc = kimport_graph(o->from, o->import_format, o->skip_bad, &r, &src);
		if (!rc) {
			if (r.format == KIMPORT_KEDGE)
				knote("'%s' (kedge): %" PRIu64 " edges, %" PRIu64 " self-loops, %" PRIu64
				      " vertices (%.2f s)",
				      o->from, r.ne, r.selfloops, r.nv, ktime() - t0);
			else
				/* (%.0 of a header line 0 prints nothing) */
				knote("'%s' (%s%s%s%.0" PRIu64 "): %" PRIu64 " lines read, %" PRIu64 " edges kept, %" PRIu64
				      " self-loops, %" PRIu64 " malformed lines skipped, %" PRIu64 " vertices (%.2f s)",
				      o->from, kimport_format_name(r.format), r.csv ? ", CSV" : "",
				      r.header ? ", a header on line " : "", r.header, r.lines, r.ne, r.selfloops, r.malformed,
				      r.nv, ktime() - t0);
			if (o->map_out)
				rc = write_map(o->map_out, &r);
		}
		if (!rc) {
			char extra[8192];
			if (r.format == KIMPORT_KEDGE)
				graph_prov(src.prov, extra, sizeof extra);
			else {
				/* the file's name escaped: a newline in it adds no key */
				char src[4001];
				snprintf(extra, sizeof extra, "kind=import\nsource=%s\nformat=%s\nseed1=2\nseed2=3\n",
					 kprov_escape(o->from, src, sizeof src), kimport_format_name(r.format));
			}
			kedge_info info = {0};
			info.nv = r.nv;
			info.ne = r.ne;
			info.flags = KEDGE_F_UNDIRECTED;
			info.prov = kedge_prov_make(o->argc, o->argv, extra);
			if (r.map && (o->format == KFMT_MTX || o->format == KFMT_SG))
				knote("'%s' has vertex ids of its own: the %s file numbers the vertices %s (--map FILE "
				      "writes which is which)",
				      o->from, kfmt_names[o->format], o->format == KFMT_MTX ? "1..nv" : "0..nv-1");
			ksink *sink;
			rc = ksink_open(o->out, o->format, o->force, o->compress, &info, r.map, &sink);
			free(info.prov);
			if (!rc) {
				rc = ksink_write(sink, r.uv, r.ne);
				if (rc)
					ksink_abandon(sink);
				else
					rc = ksink_finish(sink);
			}
			int rc2 = kio_release_commits(!rc);
			rc = rc ? rc : rc2;
			/* an import's reading is its generation; a converted edge
			 * file keeps the time its own generation took, if known */
			double gt;
			if (!rc && r.format != KIMPORT_KEDGE)
				record_time(o, ktime() - t0);
			else if (!rc && !kprov_get_generation_time(o->from, &gt))
				record_time(o, gt);
		}
		kio_release_commits(0); /* a failure before the edge file: no map */
		if (rc != KEXIT_DATA && rc != KEXIT_IO && rc)
			rc = KEXIT_DATA;
		kimport_free(&r);
		kedge_info_free(&src);
	}
	return kcomm_agree(world, rc);
}

#include "kgenrun.h"
#include "kimport.h"
#include "kio.h"
#include "kprov.h"
#include "klog.h"
#include "ksink.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int kgenrun_generate(kcomm *world, const kgenrun_opts *o)
{
	double tstart = ktime();
	kgen_ctx g;
	if (kgen_init(&g, &o->p) || !g.nedges) {
		kerror("invalid generator parameters (scale %d, edgefactor %" PRIu64 ")", o->p.scale, o->p.edgefactor);
		return KEXIT_USAGE;
	}
	int rank = kcomm_rank(world), P = kcomm_size(world);
	uint64_t M = g.nedges;
	ksink *sink = NULL;
	int rc = 0;
	if (rank == 0) {
		char extra[512];
		snprintf(extra, sizeof extra,
			 "kind=kronecker\nscale=%d\nedgefactor=%" PRIu64 "\nseed1=%" PRIu64 "\nseed2=%" PRIu64
			 "\ng500_version=%d\n",
			 o->p.scale, o->p.edgefactor, o->p.seed1, o->p.seed2, o->p.version);
		kedge_info info = {0};
		info.nv = 1ull << o->p.scale;
		info.ne = M;
		info.flags = KEDGE_F_UNDIRECTED;
		info.prov = kedge_prov_make(o->argc, o->argv, extra);
		rc = ksink_open(o->out, o->format, o->force, o->compress, &info, NULL, &sink);
		free(info.prov);
	}
	if ((rc = kcomm_agree(world, rc)))
		return rc;
	uint64_t nchunks = (M + CHUNK_EDGES - 1) / CHUNK_EDGES;
	uint64_t *buf = kmalloc(kmul(2 * sizeof(uint64_t), CHUNK_EDGES));
	double t0 = ktime();
	for (uint64_t base = 0; base < nchunks; base += (uint64_t)P) {
		uint64_t c = base + (uint64_t)rank;
		if (c < nchunks) {
			uint64_t first = c * CHUNK_EDGES;
			uint64_t n = M - first < CHUNK_EDGES ? M - first : CHUNK_EDGES;
			kgen_edges(&g, first, n, buf);
			if (rank != 0)
				kcomm_send(world, buf, n * 16, 0, KCOMM_TAG_GENERATE);
		}
		if (rank != 0)
			continue;
		for (int r = 0; r < P; r++) {
			uint64_t cr = base + (uint64_t)r;
			if (cr >= nchunks)
				break;
			uint64_t first = cr * CHUNK_EDGES;
			uint64_t n = M - first < CHUNK_EDGES ? M - first : CHUNK_EDGES;
			if (r != 0)
				kcomm_recv(world, buf, n * 16, r, KCOMM_TAG_GENERATE);
			if (rc) /* after a failed write: take what the others send, keep nothing */
				continue;
			rc = ksink_write(sink, buf, n);
			if (rc) {
				ksink_abandon(sink);
				if (P == 1)
					break;
				continue;
			}
			progress(first + n, M, t0);
		}
		if (rc && P == 1)
			break;
	}
	free(buf);
	if (rank == 0 && !rc && !(rc = ksink_finish(sink)))
		record_time(o, ktime() - tstart);
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
		rc = kimport_graph(o->from, o->import_format, o->skip_bad, &r, &src);
		if (!rc) {
			if (r.format == KIMPORT_KEDGE)
				knote("'%s' (kedge): %" PRIu64 " edges, %" PRIu64 " self-loops, %" PRIu64
				      " vertices (%.2f s)",
				      o->from, r.ne, r.selfloops, r.nv, ktime() - t0);
			else
				knote("'%s' (%s): %" PRIu64 " lines read, %" PRIu64 " edges kept, %" PRIu64
				      " self-loops, %" PRIu64 " malformed lines skipped, %" PRIu64 " vertices (%.2f s)",
				      o->from, kimport_format_name(r.format), r.lines, r.ne, r.selfloops, r.malformed, r.nv,
				      ktime() - t0);
			if (o->map_out)
				rc = write_map(o->map_out, &r);
		}
		if (!rc) {
			char extra[8192];
			if (r.format == KIMPORT_KEDGE)
				graph_prov(src.prov, extra, sizeof extra);
			else
				snprintf(extra, sizeof extra, "kind=import\nsource=%.4000s\nformat=%s\nseed1=2\nseed2=3\n",
					 o->from, kimport_format_name(r.format));
			kedge_info info = {0};
			info.nv = r.nv;
			info.ne = r.ne;
			info.flags = KEDGE_F_UNDIRECTED;
			info.prov = kedge_prov_make(o->argc, o->argv, extra);
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
			/* an import's reading is its generation; a converted edge
			 * file keeps the time its own generation took, if known */
			double gt;
			if (!rc && r.format != KIMPORT_KEDGE)
				record_time(o, ktime() - t0);
			else if (!rc && !kprov_get_generation_time(o->from, &gt))
				record_time(o, gt);
		}
		if (rc != KEXIT_DATA && rc != KEXIT_IO && rc)
			rc = KEXIT_DATA;
		kimport_free(&r);
		kedge_info_free(&src);
	}
	return kcomm_agree(world, rc);
}

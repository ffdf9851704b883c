/*
 * kpart_build.c: building a partition (kpart(1)) on one process or on R*C.
 *
 * Every directed edge u->v becomes a key (local column << br | local row)
 * bound for "part" p = i*C + j (the rank of P(i,j)).  The steps:
 *  1. rank 0 checks the output, makes DIR.tmp.XXXXXX and opens the input;
 *  2. the source: a seekable raw edge file is read in slices (rank r reads
 *     tuples [r*M/P, (r+1)*M/P), all threads at once with pread(2), and
 *     the CRCs of the slices' bytes, combined, must equal the trailer's;
 *     kpart_input.c says how threads share a slice); any other input
 *     is read by rank 0 (kedge_read checks it) and dealt out in chunks;
 *  3. pass 1 counts every key into its part's bucket (the key's top bits):
 *     after a reduce-scatter every part knows its bucket sizes exactly;
 *  4. pass 2 reads the slice again, in bounded rounds where the keys are
 *     exchanged (kcomm_alltoallv), and drops each into its bucket as a
 *     residual (the key's low bits: 32-bit whenever they fit);
 *  5. buckets are radix-sorted and deduplicated, rows compacted in place:
 *     CSC; column counts before dedup, summed over the processor column,
 *     are tdeg; with --relabel degree the deduplicated counts are summed the
 *     same way, every owner orders its block, the permutations are gathered
 *     over the processor column and row and the CSC is remapped;
 *  6. the rank file is written, the CSR made on the way as the transpose
 *     of the CSC (kpart_write_rank); rank 0 writes the manifest and renames
 *     the directory into place (kpart_dir_commit).
 * One process with R*C > 1 plays every part itself.  Every rank agrees on
 * failure (kcomm_agree) before a step others depend on; the rank that saw
 * the problem prints the one line, rank 0 removes the temporary directory.
 *
 * This file is the pipeline (steps 1, 6 and the plan); steps 2-4 are
 * kpart_input.c, step 5's sorting, dedup and relabelling kpart_csc.c.
 * With --engine cuda, step 5's sort, dedup and remap and step 6's CSR are
 * made on the device (kpart_devbuild.c), the same bytes.
 */
#include "kpart.h"
#include "kpart_internal.h"
#include "kpart_dev.h"
#include "kbfs_run.h"
#include "kdist.h"
#include "kedge.h"
#include "kio.h"
#include "klog.h"
#include "kprov.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { ROUND = 1 << 17, PATHMAX = 4096 };

/* ------------------------------------------------------------------ plan */

static int make_plan(plan *pl, uint64_t nv, uint64_t M, int R, int C, int P, int me, int wide)
{
	memset(pl, 0, sizeof *pl);
	if (kpart_grid_init(&pl->g, nv, R, C))
		return -1;
	pl->R = R;
	pl->C = C;
	pl->RC = R * C;
	pl->P = P;
	pl->me = me;
	pl->fnb = (fdiv){pl->g.nb, UINT64_MAX / pl->g.nb};
	pl->vi = kmalloc(kmul((size_t)pl->RC, 4));
	pl->vj = kmalloc(kmul((size_t)pl->RC, 4));
	for (int b = 0; b < pl->RC; b++) {
		pl->vi[b] = (uint32_t)(b % R);
		pl->vj[b] = (uint32_t)(b / R);
	}
	uint64_t ncols = pl->g.N / (uint64_t)C, nrows = pl->g.N / (uint64_t)R;
	pl->bc = kpart_bits_for(ncols);
	pl->br = kpart_bits_for(nrows);
	int bits = pl->bc + pl->br;
	if (bits > 64)
		return -2;
	pl->idx64 = wide || ncols > (UINT64_C(1) << 32) || nrows > (UINT64_C(1) << 32);
	pl->off64_all = wide;
	/* buckets of about 4096 keys, whole columns each, but at most 1024 of
	 * them, so that dropping keys into them stays kind to the TLB (measured:
	 * 2^16 buckets made pass 2 40% slower at scale 22); more only where
	 * 32-bit residuals need them */
	uint64_t per = 2 * M / (uint64_t)pl->RC / 4096;
	int cap = pl->bc < 20 ? pl->bc : 20, tb = kpart_bits_for(per + 1);
	if (tb > 10)
		tb = 10;
	if (tb > cap)
		tb = cap;
	if (tb < 1)
		tb = 1;
	if (!wide && bits - tb > 32 && bits - 32 <= cap)
		tb = bits - 32;
	pl->rbits = bits - tb;
	pl->res64 = wide || pl->rbits > 32;
	pl->nbk = UINT64_C(1) << tb;
	pl->rmask = pl->rbits == 64 ? UINT64_MAX : (UINT64_C(1) << pl->rbits) - 1;
	pl->rowmask = (UINT64_C(1) << pl->br) - 1;
	return 0;
}

static void plan_free(plan *pl)
{
	free(pl->vi);
	free(pl->vj);
}

/* ---------------------------------------------------------------- output */

typedef struct result {
	uint64_t M, selfloops, nnz, size;
	uint32_t crc;
	int relabel, has_map;
	const kedge_info *info;
	const char *input;
} result;

static int write_manifest(const plan *pl, const result *res, const kpart_rankinfo *ri, const char *tmpdir,
			  const char *outdir)
{
	kpart_manifest m = {0};
	const kedge_info *info = res->info;
	kpart_manifest_add(&m, "format", "kpart");
	kpart_manifest_add(&m, "version", "%d.%d", KPART_MAJOR, KPART_MINOR);
	kpart_manifest_add(&m, "creator", "kpart (kbfs) %s", KBFS_VERSION);
	kpart_manifest_add(&m, "R", "%d", pl->R);
	kpart_manifest_add(&m, "C", "%d", pl->C);
	kpart_manifest_add(&m, "nv", "%llu", (unsigned long long)pl->g.nv);
	kpart_manifest_add(&m, "N", "%llu", (unsigned long long)pl->g.N);
	kpart_manifest_add(&m, "nb", "%llu", (unsigned long long)pl->g.nb);
	kpart_manifest_add(&m, "M", "%llu", (unsigned long long)res->M);
	kpart_manifest_add(&m, "selfloops", "%llu", (unsigned long long)res->selfloops);
	kpart_manifest_add(&m, "nnz", "%llu", (unsigned long long)res->nnz);
	kpart_manifest_add(&m, "relabel", "%s", kpart_relabel_name(res->relabel));
	kpart_manifest_add(&m, "index_bits", "%d", pl->idx64 ? 64 : 32);
	kpart_manifest_add(&m, "scale", "%llu", (unsigned long long)kedge_prov_u64(info, "scale", 0));
	kpart_manifest_add(&m, "edgefactor", "%llu", (unsigned long long)kedge_prov_u64(info, "edgefactor", 0));
	kpart_manifest_add(&m, "seed1", "%llu", (unsigned long long)kedge_prov_u64(info, "seed1", 2));
	kpart_manifest_add(&m, "seed2", "%llu", (unsigned long long)kedge_prov_u64(info, "seed2", 3));
	kpart_manifest_add(&m, "source", "%s", res->input);
	kpart_manifest_add(&m, "source_bytes", "%llu", (unsigned long long)res->size);
	kpart_manifest_add(&m, "source_crc32", "%08x", (unsigned)res->crc);
	kpart_manifest_add(&m, "source_map", "%s", res->has_map ? "yes" : "no");
	static const char *const pk[] = {"program", "version", "kind", "argv", "g500_version", "source", NULL};
	for (int k = 0; pk[k]; k++) {
		const char *v = kedge_prov_get(info, pk[k]);
		char key[64];
		snprintf(key, sizeof key, "source_%s", !strcmp(pk[k], "source") ? "origin" : pk[k]);
		if (v)
			kpart_manifest_add(&m, key, "%s", v);
	}
	for (int r = 0; r < pl->RC; r++) {
		char key[64], file[64];
		kpart_rank_file(file, sizeof file, r);
#define KV(field, ...) (snprintf(key, sizeof key, "rank.%05d." field, r), kpart_manifest_add(&m, key, __VA_ARGS__))
		KV("file", "%s", file);
		KV("bytes", "%llu", (unsigned long long)ri[r].bytes);
		KV("crc32", "%08x", (unsigned)ri[r].crc);
		KV("nnz", "%llu", (unsigned long long)ri[r].nnz);
		KV("cols", "%llu", (unsigned long long)ri[r].cols);
		KV("rows", "%llu", (unsigned long long)ri[r].rows);
#undef KV
	}
	char path[PATHMAX], name[PATHMAX];
	snprintf(path, sizeof path, "%s/manifest", tmpdir);
	snprintf(name, sizeof name, "%s/manifest", outdir);
	int rc = kpart_manifest_write(&m, path, name, "kbfs partition of a graph's adjacency matrix; see kpart(5)", 1);
	kpart_manifest_free(&m);
	return rc;
}

static int write_build_info(const kpart_opts *o, const kpart_build_stats *st, const char *tmpdir,
			    const char *outdir)
{
	kpart_manifest m = {0};
	kpart_manifest_add(&m, "construction_time", "%.6f", st->t_total);
	kpart_manifest_add(&m, "read_time", "%.6f", st->t_read);
	kpart_manifest_add(&m, "build_time", "%.6f", st->t_build);
	kpart_manifest_add(&m, "processes", "%d", st->nprocs);
	kpart_manifest_add(&m, "threads", "%d", st->threads);
	kpart_manifest_add(&m, "engine", "%s", st->engine);
	kpart_manifest_add(&m, "host", "%s", kcomm_host());
	if (o->argv)
		kpart_manifest_add(&m, "command", "%s", o->argv);
	/* kgen's time, when it came with the edge file (kprov.h) */
	double gt;
	if (!kprov_get_generation_time(o->input, &gt))
		kpart_manifest_add(&m, "generation_time", "%.6f", gt);
	char path[PATHMAX], name[PATHMAX];
	snprintf(path, sizeof path, "%s/build-info", tmpdir);
	snprintf(name, sizeof name, "%s/build-info", outdir);
	int rc = kpart_manifest_write(&m, path, name,
				      "how this partition was built (outside the manifest's checksum: timings vary)", 0);
	kpart_manifest_free(&m);
	return rc;
}

/* ------------------------------------------------------------- the build */

static uint64_t input_id(uint64_t x, const kpart_grid *g, const uint64_t *map)
{
	return x >= g->nv ? KPART_NO_VERTEX : map ? map[x] : x;
}

/* The relabelled CSC (colperm, rowperm) or none (NULL), and the CSR, of
 * part p on the device when there is one and the part fits it; else the
 * relabelling on the host (the CSR is then made as the file is written). */
static void finish_part(const plan *pl, part *p, kpart_devbuild *db, const uint64_t *colperm, const uint64_t *rowperm)
{
	if (db && !kpart_dev_finish(pl, p, db, colperm, rowperm))
		return;
	if (colperm)
		kpart_remap_csc(pl, &p->b, colperm, rowperm);
}

/* tdeg, orig and (with relabel) the remapped CSC of every local part. */
static void finish_parts(const plan *pl, kcomm *comm, part *parts, int nloc, int relabel, const uint64_t *map,
			 kpart_devbuild *db)
{
	uint64_t nb = pl->g.nb, N = pl->g.N;
	kcomm *colc = NULL, *rowc = NULL;
	uint64_t *gt = NULL, *gd = NULL, *gp = NULL, *tdeg = NULL, *newpos = NULL;
	if (pl->P > 1) {
		colc = kcomm_split(comm, parts[0].j, parts[0].i);
		rowc = kcomm_split(comm, parts[0].i, parts[0].j);
		tdeg = kmalloc(kmul((size_t)nb, 8));
		kcomm_reduce_scatter_u64(colc, parts[0].pre, tdeg, (size_t)nb, KCOMM_SUM);
	} else {
		gt = kcalloc((size_t)N, 8);
		for (int p = 0; p < nloc; p++) {
			uint64_t c0 = kpart_col_first(&pl->g, parts[p].j), *pre = parts[p].pre;
#pragma omp parallel for schedule(static) if (parts[p].b.ncols > 65536)
			for (uint64_t c = 0; c < parts[p].b.ncols; c++)
				gt[c0 + c] += pre[c];
		}
	}
	for (int p = 0; p < nloc; p++) {
		free(parts[p].pre);
		parts[p].pre = NULL;
	}
	if (relabel) {
		uint64_t ncols = parts[0].b.ncols, nrows = parts[0].b.nrows;
		uint64_t *colperm = kmalloc(kmul((size_t)ncols, 8)), *rowperm = kmalloc(kmul((size_t)nrows, 8));
		if (pl->P > 1) {
			uint64_t *dc = kmalloc(kmul((size_t)ncols, 8)), *deg = kmalloc(kmul((size_t)nb, 8));
			for (uint64_t c = 0; c < ncols; c++)
				dc[c] = parts[0].b.colptr[c + 1] - parts[0].b.colptr[c];
			kcomm_reduce_scatter_u64(colc, dc, deg, (size_t)nb, KCOMM_SUM);
			newpos = kmalloc(kmul((size_t)nb, 8));
			kpart_degree_order(deg, nb, newpos);
			kcomm_allgather(colc, newpos, (size_t)nb * 8, colperm);
			kcomm_allgather(rowc, newpos, (size_t)nb * 8, rowperm);
			free(dc);
			free(deg);
		} else {
			gd = kcalloc((size_t)N, 8);
			gp = kmalloc(kmul((size_t)N, 8));
			for (int p = 0; p < nloc; p++) {
				uint64_t c0 = kpart_col_first(&pl->g, parts[p].j), *cp = parts[p].b.colptr;
#pragma omp parallel for schedule(static) if (ncols > 65536)
				for (uint64_t c = 0; c < ncols; c++)
					gd[c0 + c] += cp[c + 1] - cp[c];
			}
#pragma omp parallel for schedule(dynamic, 1) if (pl->RC > 1)
			for (uint64_t vb = 0; vb < (uint64_t)pl->RC; vb++)
				kpart_degree_order(gd + vb * nb, nb, gp + vb * nb);
			free(gd);
		}
		for (int p = 0; p < nloc; p++) {
			kpart_block *b = &parts[p].b;
			uint64_t c0 = kpart_col_first(&pl->g, b->j);
			int one = pl->P == 1;
#pragma omp parallel for schedule(static) if (ncols > 65536)
			for (uint64_t c = 0; c < ncols; c++)
				colperm[c] = (one ? gp[c0 + c] : colperm[c]) + c / nb * nb;
#pragma omp parallel for schedule(static) if (nrows > 65536)
			for (uint64_t r = 0; r < nrows; r++)
				rowperm[r] = (one ? gp[kpart_row_vertex(&pl->g, b->i, r)] : rowperm[r]) + r / nb * nb;
			finish_part(pl, &parts[p], db, colperm, rowperm);
		}
		free(colperm);
		free(rowperm);
	}
	for (int p = 0; p < nloc; p++) {
		kpart_block *b = &parts[p].b;
		uint64_t first = kpart_owned_first(&pl->g, b->i, b->j);
		const uint64_t *t = tdeg ? tdeg : gt + first;
		const uint64_t *np = relabel ? (newpos ? newpos : gp + first) : NULL;
		b->tdeg = kmalloc(kmul((size_t)nb, 8));
		if (relabel || map)
			b->orig = kmalloc(kmul((size_t)nb, 8));
#pragma omp parallel for schedule(static) if (nb > 65536)
		for (uint64_t k = 0; k < nb; k++) { /* np: a permutation */
			uint64_t d = np ? np[k] : k;
			b->tdeg[d] = t[k];
			if (b->orig)
				b->orig[d] = input_id(first + k, &pl->g, map);
		}
	}
	for (int p = 0; p < nloc && db && !relabel; p++)
		finish_part(pl, &parts[p], db, NULL, NULL);
	free(gt);
	free(gp);
	free(tdeg);
	free(newpos);
	kcomm_free(colc);
	kcomm_free(rowc);
}

enum { NSTEPS = 5 };

/* The start of step k of NSTEPS: on a terminal (and without -v, whose
 * lines say the same) rank 0 names it; lap() ends the line with its time. */
static void step(int me, int k, const char *what)
{
	if (me == 0 && !klog_verbose() && kcomm_progress_ok()) {
		fprintf(stderr, "%s: %d/%d %s ...", klog_prog(), k, NSTEPS, what);
		fflush(stderr);
	}
}

/* Seconds since *since (then reset); printed by rank 0 with -v, or at the
 * end of step()'s line on a terminal. */
static double lap(int me, const char *what, double *since)
{
	double now = ktime(), d = now - *since;
	*since = now;
	if (me == 0 && klog_verbose())
		kinfo("%-34s %8.3f s", what, d);
	else if (me == 0 && *what && kcomm_progress_ok())
		fprintf(stderr, " %.2f s\n", d);
	return d;
}

/* The engine, the same on every rank (collective): *db filled for the
 * device with it open, or left alone for the CPU.  auto builds on the CPU
 * until the device path has been verified on a GPU (kpart(1)).  0, or
 * KEXIT_RESOURCE after kerror(). */
static int pick_engine(kcomm *comm, const kpart_opts *o, kpart_devbuild *db, const char **name)
{
	int me = kcomm_rank(comm);
	kpart_device *d = o->dev;
	*name = "cpu";
	if (o->engine == KBFS_ENGINE_CPU) { /* (CUDA not even asked) */
		if (me == 0)
			kinfo("engine cpu");
		return 0;
	}
	char why[96];
	kcomm_device_why(comm, d && d->built, d && d->built && d->count() > 0, why, sizeof why);
	if (*why && o->engine == KBFS_ENGINE_AUTO) {
		kcomm_warn_unbuilt_gpu(comm, d && d->built);
		if (me == 0)
			kinfo("engine cpu (%s)", why);
		return 0;
	}
	if (*why) {
		if (me == 0)
			kerror("--engine cuda: %s: use --engine cpu", why);
		return KEXIT_RESOURCE;
	}
	int rc = d->open(d, comm);
	if (rc)
		return rc;
	memset(db, 0, sizeof *db);
	db->d = d;
	db->part = -1;
	db->fallback = o->engine == KBFS_ENGINE_AUTO;
	*name = d->name;
	if (me == 0)
		kinfo("engine %s", d->name);
	return 0;
}

static void cleanup_tmp(int me, const char *tmpdir)
{
	if (!*tmpdir)
		return;
	if (me == 0)
		kio_rmtree(tmpdir);
	kio_cleanup_remove(tmpdir);
}

int kpart_build(kcomm *comm, const kpart_opts *o, kpart_build_stats *st)
{
	double t0 = ktime(), tl = t0;
	int P = kcomm_size(comm), me = kcomm_rank(comm), rc = 0;
	memset(st, 0, sizeof *st);
	st->engine = "cpu";
	st->nprocs = P;
	st->threads = kpart_nthreads();
	if (o->R <= 0 || o->C <= 0 || (uint64_t)o->R * (uint64_t)o->C > KPART_MAX_PROCS) {
		if (me == 0)
			kerror("a %dx%d grid is not possible (1 to %u processors)", o->R, o->C, KPART_MAX_PROCS);
		return KEXIT_USAGE;
	}
	if (P > 1 && (uint64_t)P != (uint64_t)o->R * (uint64_t)o->C) {
		if (me == 0)
			kerror("a %dx%d grid needs %llu processes, not %d (or run it as one process)", o->R, o->C,
			       (unsigned long long)o->R * (unsigned long long)o->C, P);
		return KEXIT_USAGE;
	}
	char tmpdir[PATHMAX] = "", outdir[PATHMAX] = "";
	kedge_reader *r = NULL;
	kedge_info info = {0};
	uint64_t hdr[8] = {0}; /* rc, stream, nv, ne, idbytes, flags, size, crc */
	uint32_t crc = 0;
	plan pl = {0};
	if (me == 0) {
		snprintf(outdir, sizeof outdir, "%s", o->outdir);
		rc = kpart_dir_begin(outdir, o->force, tmpdir, sizeof tmpdir);
		if (!rc && !(rc = kedge_open(o->input, &r, &info)))
			info.prov = kstrdup(info.prov); /* r keeps (and frees) its own */
		if (!rc) {
			hdr[1] = !strcmp(o->input, "-") || !kedge_seekable(r);
			kpart_grid g;
			if (kpart_grid_init(&g, info.nv, o->R, o->C)) {
				kerror("a %dx%d grid has more blocks than the graph's %llu vertices", o->R, o->C,
				       (unsigned long long)info.nv);
				rc = KEXIT_USAGE;
			} else if (!hdr[1]) {
				/* kedge_open checked the size and read the trailer */
				kedge_trailer(r, &hdr[6], &crc);
				hdr[7] = crc;
			}
		}
		hdr[0] = (uint64_t)rc;
		hdr[2] = info.nv;
		hdr[3] = info.ne;
		hdr[4] = info.idbytes;
		hdr[5] = info.flags;
	}
	kcomm_bcast(comm, hdr, sizeof hdr, 0);
	kcomm_bcast(comm, outdir, sizeof outdir, 0);
	kcomm_bcast(comm, tmpdir, sizeof tmpdir, 0);
	if ((rc = (int)hdr[0])) {
		kedge_close(r);
		kedge_info_free(&info);
		cleanup_tmp(me, tmpdir);
		return rc;
	}
	int stream = (int)hdr[1], idbytes = (int)hdr[4], has_map = !!(hdr[5] & KEDGE_F_MAP);
	if (me != 0) {
		kio_cleanup_add(tmpdir);
		struct stat sst;
		if (stat(tmpdir, &sst)) {
			kerror("'%s' is not visible here (the output must be on a shared file system)", tmpdir);
			rc = KEXIT_IO;
		}
		if (!rc && !stream && !(rc = kedge_open(o->input, &r, &info))) {
			info.prov = kstrdup(info.prov);
			if (info.nv != hdr[2] || info.ne != hdr[3] || info.idbytes != hdr[4]) {
				kerror("'%s': the input changed while it was being read", o->input);
				rc = KEXIT_DATA;
			}
		}
	}
	uint64_t *map = NULL, *ht = NULL;
	source s = {.fd = -1};
	part *parts = NULL;
	int nloc = 0;
	kpart_devbuild dbs = {0}, *db = NULL;
	if ((rc = kcomm_agree(comm, rc)))
		goto out;
	if ((rc = kcomm_agree(comm, pick_engine(comm, o, &dbs, &st->engine))))
		goto out;
	db = dbs.d ? &dbs : NULL;
	if (has_map) {
		map = kmalloc(kmul((size_t)hdr[2], 8));
		if (r)
			memcpy(map, kedge_map(r), (size_t)hdr[2] * 8);
		if (stream)
			kcomm_bcast(comm, map, (size_t)hdr[2] * 8, 0);
	}
	int mp = make_plan(&pl, hdr[2], hdr[3], o->R, o->C, P, me, o->wide);
	if (mp) {
		if (me == 0)
			kerror("a graph of %llu vertices is too large for a %dx%d grid (local indices beyond 64 bits)",
			       (unsigned long long)hdr[2], o->R, o->C);
		rc = KEXIT_RESOURCE;
		goto out;
	}
	if (stream) {
		s.w = idbytes;
		s.nv = UINT64_MAX; /* kedge_read checks the ids */
		rc = kcomm_agree(comm, kdist_deal(comm, r, idbytes, &crc, &s.mem, &s.n));
	} else {
		s.r = r;
		s.first = (uint64_t)((unsigned __int128)hdr[3] * (unsigned)me / (unsigned)P);
		s.n = (uint64_t)((unsigned __int128)hdr[3] * (unsigned)(me + 1) / (unsigned)P) - s.first;
		rc = kcomm_agree(comm, kpart_source_file(&s, o->input, hdr[6], hdr[3], idbytes, hdr[2]));
	}
	if (rc)
		goto out;
	/* pass 1 */
	step(me, 1, "pass 1: read, check, count");
	nloc = P == 1 ? pl.RC : 1;
	size_t H = (size_t)pl.RC * pl.nbk;
	int S = kpart_slots(&pl);
	uint64_t *hist = kcalloc(H, 8), sl = 0;
	uint32_t scrc = 0;
	ht = kmalloc(kmul(H, (size_t)S + 1) * 8); /* slot histograms, pass 2's offsets on one process */
	rc = kcomm_agree(comm, kpart_pass1(&pl, &s, stream ? NULL : &scrc, hist, ht, S, &sl));
	if (!rc && !stream) {
		if (kcomm_crc32_concat(comm, scrc, s.n * 2 * (uint64_t)idbytes) != (uint32_t)hdr[7]) {
			if (me == 0)
				kerror("'%s': edge data checksum mismatch (corrupt file)", o->input);
			rc = KEXIT_DATA;
		}
	}
	if (rc) {
		free(hist);
		goto out;
	}
	if (stream)
		kcomm_bcast(comm, &crc, sizeof crc, 0);
	kcomm_allreduce_u64(comm, &sl, 1, KCOMM_SUM);
	st->t_read = lap(me, "open, pass 1 (read, check, count)", &tl);
	/* bucket sizes, then pass 2 */
	parts = kcalloc((size_t)nloc, sizeof *parts);
	uint64_t *mine = hist;
	if (P > 1) {
		mine = kmalloc(kmul((size_t)pl.nbk, 8));
		kcomm_reduce_scatter_u64(comm, hist, mine, (size_t)pl.nbk, KCOMM_SUM);
	}
	for (int p = 0; p < nloc; p++) {
		part *pt = &parts[p];
		pt->p = P == 1 ? p : me;
		pt->i = pt->p / pl.C;
		pt->j = pt->p % pl.C;
		pt->bstart = kmalloc(kmul((size_t)pl.nbk + 1, 8));
		pt->bfill = kmalloc(kmul((size_t)pl.nbk, 8));
		const uint64_t *h = P > 1 ? mine : hist + (size_t)p * pl.nbk;
		pt->bstart[0] = 0;
		for (uint64_t k = 0; k < pl.nbk; k++)
			pt->bfill[k] = pt->bstart[k], pt->bstart[k + 1] = pt->bstart[k] + h[k];
		pt->E = pt->bstart[pl.nbk];
		pt->res = kmalloc(kmul((size_t)pt->E, pl.res64 ? 8 : 4));
	}
	if (mine != hist)
		free(mine);
	free(hist);
	if (P > 1) {
		free(ht);
		ht = NULL;
	}
	step(me, 2, "pass 2: read, exchange, drop");
	rc = kpart_pass2(&pl, comm, &s, parts, ht, S, o->round_tuples ? o->round_tuples : ROUND, o->input);
	free(ht);
	ht = NULL;
	if ((rc = kcomm_agree(comm, rc)))
		goto out;
	kedge_close(r);
	r = NULL;
	kpart_source_close(&s);
	st->t_build += lap(me, "pass 2 (read, exchange, drop)", &tl);
	step(me, 3, "sort, dedup: CSC");
	for (int p = 0; p < nloc && !rc; p++) {
		if (db)
			rc = kpart_dev_csc(&pl, &parts[p], db, nloc == 1);
		if (!db || rc < 0) /* (auto: a part the device cannot hold) */
			kpart_build_csc(&pl, &parts[p]), rc = 0;
	}
	if ((rc = kcomm_agree(comm, rc)))
		goto out;
	st->t_build += lap(me, db ? "sort, dedup: CSC (device)" : "sort, dedup: CSC", &tl);
	step(me, 4, o->relabel ? "degrees, relabel" : "degrees");
	finish_parts(&pl, comm, parts, nloc, o->relabel, map, db);
	st->t_build += lap(me, db ? (o->relabel ? "tdeg, relabel, CSR (device)" : "tdeg, CSR (device)")
				  : o->relabel ? "tdeg, relabel" : "tdeg",
			   &tl);
	/* the rank files (CSR made on the way, straight into them) */
	step(me, 5, "CSR, rank files, manifest");
	kpart_rankinfo *ri = kcalloc((size_t)pl.RC, sizeof *ri);
	double tcsr = 0, tsync = 0;
	for (int p = 0; p < nloc && !rc; p++) {
		kpart_block *b = &parts[p].b;
		char file[64], path[PATHMAX], name[PATHMAX];
		kpart_rank_file(file, sizeof file, parts[p].p);
		snprintf(path, sizeof path, "%s/%s", tmpdir, file);
		snprintf(name, sizeof name, "%s/%s", outdir, file);
		b->relabel = o->relabel;
		rc = kpart_write_rank(path, name, b, pl.off64_all, &ri[parts[p].p]);
		tcsr += ri[parts[p].p].csr_seconds;
		tsync += ri[parts[p].p].sync_seconds;
		kpart_block_free(b);
	}
	double twr = lap(-1, "", &tl);
	st->t_build += tcsr;
	if (!(rc = kcomm_agree(comm, rc)) && P > 1) {
		const kpart_rankinfo *x = &ri[me];
		uint64_t mine[5] = {x->bytes, x->crc, x->nnz, x->cols, x->rows}, *all = kmalloc(kmul((size_t)P, 40));
		kcomm_allgather(comm, mine, sizeof mine, all);
		for (int q = 0; q < P; q++)
			ri[q] = (kpart_rankinfo){.bytes = all[5 * q], .crc = (uint32_t)all[5 * q + 1], .nnz = all[5 * q + 2],
						 .cols = all[5 * q + 3], .rows = all[5 * q + 4]};
		free(all);
	}
	uint64_t nnz = 0;
	for (int q = 0; q < pl.RC; q++)
		nnz += ri[q].nnz;
	if (!rc && me == 0) {
		result res = {.M = hdr[3], .selfloops = sl, .nnz = nnz, .size = hdr[6], .crc = crc,
			      .relabel = o->relabel, .info = &info, .input = o->input, .has_map = has_map};
		rc = write_manifest(&pl, &res, ri, tmpdir, outdir);
		st->t_total = ktime() - t0;
		if (!rc)
			rc = write_build_info(o, st, tmpdir, outdir);
		if (!rc)
			rc = kpart_dir_commit(tmpdir, outdir, o->force);
	}
	free(ri);
	rc = kcomm_agree(comm, rc);
	twr += lap(-1, "", &tl);
	if (me == 0 && klog_verbose())
		kinfo("%-34s %8.3f s (CSR %.3f s, sync %.3f s)", "CSR, rank files, manifest, rename", twr, tcsr, tsync);
	else if (me == 0 && kcomm_progress_ok())
		fprintf(stderr, " %.2f s\n", twr);
	st->nv = pl.g.nv;
	st->N = pl.g.N;
	st->M = hdr[3];
	st->selfloops = sl;
	st->nnz = nnz;
out:
	for (int p = 0; p < nloc && parts; p++) {
		free(parts[p].bstart);
		free(parts[p].bfill);
		free(parts[p].res);
		free(parts[p].pre);
		kpart_block_free(&parts[p].b);
	}
	free(parts);
	free(map);
	free(ht);
	if (db) {
		double dev[2] = {0, 0};
		kpart_devbuild_drop(db);
		db->d->times(db->d, &dev[0], &dev[1]);
		if (me == 0 && klog_verbose())
			kinfo("device %s: CSC in %llu piece(s), %d part(s) finished there, %llu built on the host; %.3f s "
			      "in its calls, of which %.3f s computing and %.3f s copying",
			      db->d->name, (unsigned long long)db->pieces, db->finished, (unsigned long long)db->on_host,
			      db->seconds, dev[0], dev[1]);
		db->d->close(db->d);
		st->dev_pieces = db->pieces;
		st->dev_finished = db->finished;
		st->dev_on_host = db->on_host;
	}
	kpart_source_close(&s);
	kedge_close(r);
	kedge_info_free(&info);
	plan_free(&pl);
	if (rc)
		cleanup_tmp(me, tmpdir);
	else
		kio_cleanup_remove(tmpdir);
	st->t_total = ktime() - t0;
	st->t_write = st->t_total - st->t_read - st->t_build;
	if (me == 0 && !rc)
		kinfo("%-34s %8.3f s", "total", st->t_total);
	return rc;
}

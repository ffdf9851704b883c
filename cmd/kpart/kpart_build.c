/*
 * kpart_build.c: building a partition (kpart(1)) on one process or on R*C.
 *
 * Every directed edge u->v becomes a key (local column << br | local row)
 * bound for "part" p = i*C + j (the rank of P(i,j)).  The steps:
 *  1. rank 0 checks the output, makes DIR.kbfs-tmp-XXXXXX and opens the input;
 *  2. the source: a seekable raw edge file is read in slices (rank r reads
 *     tuples [r*M/P, (r+1)*M/P), all threads at once with pread(2), and
 *     the CRCs of the slices' bytes, combined, must equal the trailer's;
 *     kpart_input.c says how threads share a slice); any other input
 *     is read by rank 0 (kedge_read checks it) and dealt out in chunks;
 *     when every rank runs on one host (and KBFS_KPART_EXCHANGE is not 1),
 *     each rank reads the whole file instead, and keeps its own part's
 *     keys alone (its slice still gives the CRC); with KBFS_KPART_SHARED=1
 *     (an experiment) each reads its slice and, in pass 2, drops every
 *     part's keys into the owners' buckets in shared memory; a stream on
 *     one host is staged in shared memory and read as a file is
 *     (kpart_stage.c); kpart -s generates the tuples there instead, or,
 *     with KBFS_KPART_FEED=1 (an experiment), makes them again for each
 *     pass chunk by chunk on every rank, which keeps its own part's keys;
 *  3. pass 1 counts every key into its part's bucket (the key's top bits):
 *     after a reduce-scatter every part knows its bucket sizes exactly
 *     (a rank that read the whole file counted its own part's alone);
 *  4. pass 2 reads the slice again, in bounded rounds where the keys are
 *     exchanged (kcomm_alltoallv), and drops each into its bucket as a
 *     residual (the key's low bits, 64-bit unless they fit 32 or this
 *     host is short of memory: narrow_keys); a rank
 *     that reads the whole file reads it again and drops its own keys;
 *  5. buckets are radix-sorted and deduplicated, rows compacted in place:
 *     CSC; column counts before dedup, summed over the processor column,
 *     are tdeg; with --relabel degree the deduplicated counts are summed the
 *     same way, every owner orders its block, the permutations are gathered
 *     over the processor column and row and the CSC is remapped; on a grid
 *     of one column a rank's rows are the vertices it owns, so both counts
 *     are its rows' (plan.rowdeg), with no sum over the column;
 *  6. the rank file is written, the CSR made on the way as the transpose
 *     of the CSC (kpart_write_rank); rank 0 writes the manifest and renames
 *     the directory into place (kpart_dir_commit).
 * One process with R*C > 1 plays every part itself.  Every rank agrees on
 * failure (kcomm_agree) before a step others depend on; the rank that saw
 * the problem prints the one line, rank 0 removes the temporary directory.
 *
 * This file is the pipeline (steps 1, 6 and the plan): kpart_build() runs
 * it as named steps, one function each, listed above them at the end of
 * the file; steps 2-4 are kpart_input.c, step 5's sorting, dedup and
 * relabelling kpart_csc.c (kpart_builder.h).
 * With --engine cuda, step 5's sort, dedup and remap and step 6's CSR are
 * made on the device (kpart_devbuild.c), the same bytes.
 */
#include "kpart.h"
#include "kpart_build.h"
#include "kpart_builder.h"
#include "kpart_dev.h"
#include "kdev.h"
#include "kdist.h"
#include "kedge.h"
#include "kfs.h"
#include "ktemp.h"
#include "klog.h"
#include "kmem.h"
#include "kprov.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { ROUND = 1 << 17, PATHMAX = 4096 };

/* ------------------------------------------------------------------ plan */

static int make_plan(plan *pl, uint64_t nv, uint64_t M, int R, int C, int P, int me, int wide, int narrow)
{
	memset(pl, 0, sizeof *pl);
	if (kpart_grid_init(&pl->g, nv, R, C))
		return -1;
	pl->R = R;
	pl->C = C;
	pl->RC = R * C;
	pl->P = P;
	pl->me = me;
	pl->keep = -1;
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
	 * them, so that pass 1's counts and pass 2's drops stay kind to the
	 * caches and the TLB (measured: 2^16 buckets made pass 2 40% slower at
	 * scale 22; 2^18 instead of 2^12 made kpart 4x1 at scale 26 11.5
	 * instead of 8.8 s on four H100); more only where the host is short of
	 * memory for 64-bit residuals (narrow: narrow_keys) and 32-bit ones
	 * need them */
	uint64_t per = 2 * M / (uint64_t)pl->RC / 4096;
	int cap = pl->bc < 20 ? pl->bc : 20, tb = kpart_bits_for(per + 1);
	if (tb > 10)
		tb = 10;
	if (tb > cap)
		tb = cap;
	if (tb < 1)
		tb = 1;
	if (narrow && !wide && bits - tb > 32 && bits - 32 <= cap)
		tb = bits - 32;
	/* KBFS_KPART_BUCKET_BITS=N (an experiment): 2^N buckets whatever the
	 * residuals' width (at most the cap), 64-bit residuals when they need
	 * more than 32 bits; the same files */
	const char *hb = getenv("KBFS_KPART_BUCKET_BITS");
	if (hb) {
		char *end;
		long n = strtol(hb, &end, 10);
		if (end != hb && !*end && n >= 1 && n <= 20)
			tb = (int)n < cap ? (int)n : cap;
		else if (me == 0)
			kwarn("ignoring KBFS_KPART_BUCKET_BITS='%s' (want 1 to 20)", hb);
	}
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
	char path[PATHMAX + 16], name[PATHMAX + 16]; /* the directory and a name */
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
	/* kgen's time, when it came with the edge file (kprov.h), or this
	 * build's own generation's */
	double gt;
	if (o->gen)
		kpart_manifest_add(&m, "generation_time", "%.6f", st->t_gen);
	else if (!kprov_get_generation_time(o->input, &gt))
		kpart_manifest_add(&m, "generation_time", "%.6f", gt);
	char path[PATHMAX + 16], name[PATHMAX + 16];
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

/* The relabelled CSC (colperm, rowperm) or none (NULL), and the CSR's row
 * offsets, of part p on the device when there is one and the part fits it;
 * else the relabelling on the host (the row offsets are then counted as
 * the file is written). */
static void finish_part(const plan *pl, part *p, kpart_devbuild *db, const uint64_t *colperm, const uint64_t *rowperm)
{
	if (db && !kpart_dev_finish(pl, p, db, colperm, rowperm))
		return;
	if (colperm)
		kpart_remap_csc(pl, &p->b, colperm, rowperm);
}

/* Step 4's exchanges over a processor column or row c: through shared
 * windows on all threads with plan.shared (one host), else through MPI. */
static void sum_scatter(const plan *pl, kcomm *c, const uint64_t *send, uint64_t *recv, size_t n_each)
{
	if (pl->shared)
		kcomm_shared_sum_scatter_u64(c, send, recv, n_each);
	else
		kcomm_reduce_scatter_u64(c, send, recv, n_each, KCOMM_SUM);
}

static void gather(const plan *pl, kcomm *c, const void *send, size_t bytes_each, void *recv)
{
	if (pl->shared)
		kcomm_shared_allgather(c, send, bytes_each, recv);
	else
		kcomm_allgather(c, send, bytes_each, recv);
}

/* With -v, rank 0 logs a part of a step and its time. */
static void sublap(const kcomm *comm, const char *what, double *since)
{
	double now = ktime();
	if (kcomm_rank(comm) == 0 && klog_verbose())
		kinfo("  %-32s %8.3f s", what, now - *since);
	*since = now;
}

/* tdeg, orig and (with relabel) the remapped CSC of every local part. */
static void finish_parts(const plan *pl, kcomm *comm, part *parts, int nloc, int relabel, const uint64_t *map,
			 kpart_devbuild *db)
{
	uint64_t nb = pl->g.nb, N = pl->g.N;
	kcomm *colc = NULL, *rowc = NULL;
	uint64_t *gt = NULL, *gd = NULL, *gp = NULL, *tdeg = NULL, *newpos = NULL;
	double t = ktime();
	if (pl->P > 1) {
		colc = kcomm_split(comm, parts[0].j, parts[0].i);
		rowc = kcomm_split(comm, parts[0].i, parts[0].j);
		if (pl->rowdeg & 1) { /* one column: the owned vertices' rows, counted here */
			tdeg = parts[0].rtd;
			parts[0].rtd = NULL;
		} else {
			tdeg = kmalloc(kmul((size_t)nb, 8));
			sum_scatter(pl, colc, parts[0].pre, tdeg, (size_t)nb);
		}
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
	sublap(comm, "tuple degrees summed", &t);
	if (relabel) {
		uint64_t ncols = parts[0].b.ncols, nrows = parts[0].b.nrows;
		uint64_t *colperm = kmalloc(kmul((size_t)ncols, 8)), *rowperm = kmalloc(kmul((size_t)nrows, 8));
		if (pl->P > 1) {
			uint64_t *dc = NULL, *deg;
			if (pl->rowdeg & 2) {
				deg = parts[0].rdeg;
				parts[0].rdeg = NULL;
			} else {
				const uint64_t *cp = parts[0].b.colptr;
				dc = kmalloc(kmul((size_t)ncols, 8));
				deg = kmalloc(kmul((size_t)nb, 8));
#pragma omp parallel for schedule(static) if (ncols > 65536)
				for (uint64_t c = 0; c < ncols; c++)
					dc[c] = cp[c + 1] - cp[c];
				sum_scatter(pl, colc, dc, deg, (size_t)nb);
			}
			newpos = kmalloc(kmul((size_t)nb, 8));
			kpart_degree_order(deg, nb, newpos);
			gather(pl, colc, newpos, (size_t)nb * 8, colperm);
			gather(pl, rowc, newpos, (size_t)nb * 8, rowperm);
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
		sublap(comm, "degrees, degree order", &t);
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
		sublap(comm, db ? "CSC relabelled, CSR offsets" : "CSC relabelled", &t);
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
	sublap(comm, "tdeg and orig in the new order", &t);
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

/* Seconds since *since (then reset); printed by rank 0 with -v (with its
 * process's page faults since the last lap and its memory in huge pages:
 * how the step's fresh memory was mapped), or at the end of step()'s line
 * on a terminal. */
static double lap(int me, const char *what, double *since)
{
	static uint64_t faults0;
	double now = ktime(), d = now - *since;
	*since = now;
	if (me == 0 && klog_verbose()) {
		uint64_t faults, huge;
		kmem_faults(&faults, &huge);
		kinfo("%-34s %8.3f s (%llu page faults; %.1f GiB in huge pages)", what, d,
		      (unsigned long long)(faults - faults0), huge / 1073741824.0);
		faults0 = faults;
	}
	else if (me == 0 && *what && kcomm_progress_ok())
		fprintf(stderr, " %.2f s\n", d);
	return d;
}

/* The engine, the same on every rank (collective, kdev_pick): *db filled
 * for the device with it open, or left alone for the CPU.  auto builds on
 * the device when every rank sees one (a part it cannot hold is then built
 * on the host).  0, or a KEXIT code after kerror(). */
static int pick_engine(kcomm *comm, const kpart_opts *o, kpart_devbuild *db, const char **name)
{
	kpart_device *d = o->dev;
	*name = "cpu";
	int on_dev, rc = kdev_pick(comm, d ? &d->base : NULL, o->engine, &on_dev, NULL, 0);
	if (rc || !on_dev || (rc = kdev_open(&d->base, comm)))
		return rc;
	memset(db, 0, sizeof *db);
	db->d = d;
	db->part = -1;
	db->fallback = o->engine == KDEV_ENGINE_AUTO;
	*name = d->base.name;
	return 0;
}

static void cleanup_tmp(int me, const char *tmpdir)
{
	if (!*tmpdir)
		return;
	if (me == 0)
		kfs_rmtree(tmpdir);
	ktemp_unregister(tmpdir);
}

/* ------------------------------------------------------------- the steps */

/*
 * kpart_build runs these steps in order, each a function below that takes
 * and gives the build's state (a job); every step that the other ranks
 * depend on ends with kcomm_agree, so its code is the same on every rank:
 *   check_grid    the grid is possible and the job fits it;
 *   open_input    rank 0 makes DIR.kbfs-tmp-XXXXXX and opens the edge file, and
 *                 its header (an input_msg) reaches every rank, which opens
 *                 the file itself when it will read a slice of it (1);
 *   choose_engine the CPU or the device, the same on every rank (kdev_pick);
 *   open_source   the input's id map on every rank, the plan, then this
 *                 rank's tuples: a slice of the file, or the chunks rank 0
 *                 deals out (2);
 *   count_keys    pass 1, and the slices' CRCs against the trailer's (3);
 *   make_parts    the buckets of every local part, sized (3);
 *   fill_parts    pass 2 (4);
 *   build_csc     the CSC of every local part, on the device or the host (5);
 *   finish        tdeg, orig and the relabelling (finish_parts) (5);
 *   write_ranks   the rank files, and every rank's figures (a rank_msg each)
 *                 to all (6);
 *   write_dir     rank 0: the manifest, build-info and the directory put in
 *                 place (6);
 *   end_build     what is left freed, the temporary directory removed on
 *                 failure, the timings.
 */

/* Whether every rank reads the whole input and keeps its own part's keys
 * (no exchange): several ranks, one host, a file; KBFS_KPART_EXCHANGE=1
 * keeps the exchange.  The same answer on every rank (collective). */
static int read_all(kcomm *comm, int P, int stream)
{
	if (P == 1 || stream)
		return 0;
	const char *v = getenv("KBFS_KPART_EXCHANGE");
	uint64_t all = !(v && !strcmp(v, "1"));
	kcomm_allreduce_u64(comm, &all, 1, KCOMM_MIN);
	return all && kcomm_one_host(comm);
}

/* Whether every rank reads its slice and drops every part's keys into the
 * owners' buckets in shared memory (KBFS_KPART_SHARED=1, an experiment:
 * several ranks, one host, a file).  The same on every rank (collective). */
static int shared_drop(kcomm *comm, int P, int stream)
{
	if (P == 1 || stream)
		return 0;
	const char *v = getenv("KBFS_KPART_SHARED");
	uint64_t on = v && !strcmp(v, "1");
	kcomm_allreduce_u64(comm, &on, 1, KCOMM_MIN);
	return on && kcomm_one_host(comm);
}

/* plan.rowdeg: on a grid of one column, several ranks, each rank's own
 * rows counted (1: tdeg; 2: the degrees, for the degree order) unless
 * KBFS_KPART_ROWDEG=0 on any rank (the ablation: summed over the column).
 * Collective. */
static int rowdeg_of(kcomm *comm, int P, int C, int relabel)
{
	const char *v = getenv("KBFS_KPART_ROWDEG");
	uint64_t on = !(v && !strcmp(v, "0"));
	kcomm_allreduce_u64(comm, &on, 1, KCOMM_MIN);
	return on && P > 1 && C == 1 ? 1 | (relabel ? 2 : 0) : 0;
}

/* What rank 0 learns from the input before anyone reads it (one broadcast). */
typedef struct input_msg {
	uint64_t rc;           /* rank 0's code so far */
	uint64_t stream;       /* rank 0 reads the input and deals it out (stdin, or not seekable) */
	uint64_t nv, ne, idbytes, flags; /* the header (kedge_info) */
	uint64_t size, crc;    /* a seekable file: its size and its trailer's CRC */
} input_msg;

/* One rank's rank file, as the manifest needs it (an allgather). */
typedef struct rank_msg {
	uint64_t bytes, crc, nnz, cols, rows;
} rank_msg;

typedef struct job {
	kcomm *comm;
	const kpart_opts *o;
	kpart_build_stats *st;
	int P, me;
	int narrow; /* narrow_keys: 1 asked (KBFS_KPART_RES32), 2 short of memory */
	double t0, tl;            /* the start; the last lap() */
	char tmpdir[PATHMAX], outdir[PATHMAX];
	kedge_reader *r;          /* the input, on the ranks that read it */
	kedge_info info;
	input_msg in;
	uint32_t crc;             /* the input's CRC (the trailer's; a stream's once dealt out) */
	int stream, idbytes, has_map;
	plan pl;
	uint64_t *map;            /* input ids, when the input has a map */
	source s;
	uint64_t *hist, *ht, sl;  /* pass 1's bucket counts, slot histograms; self-loops */
	int S;                    /* slots a bucket's counts are kept in (kpart_slots) */
	part *parts;
	int nloc;                 /* parts this rank builds (all of them on one process) */
	kpart_devbuild dbs, *db;  /* the device's build state (db NULL: the CPU) */
	kpart_rankinfo *ri;       /* every rank file's figures */
	uint64_t nnz;
	double twr, tcsr, tsync;  /* the writing step; of it, CSR and fsync */
	kgen_ctx gen;             /* kpart -s: the generator (a fed source's passes use it throughout) */
} job;

static int check_grid(job *b)
{
	const kpart_opts *o = b->o;
	if (o->R <= 0 || o->C <= 0 || (uint64_t)o->R * (uint64_t)o->C > KPART_MAX_PROCS) {
		if (b->me == 0)
			kerror("a %dx%d grid is not possible (1 to %u processors)", o->R, o->C, KPART_MAX_PROCS);
		return KEXIT_USAGE;
	}
	if (b->P > 1 && (uint64_t)b->P != (uint64_t)o->R * (uint64_t)o->C) {
		if (b->me == 0)
			kerror("a %dx%d grid needs %llu processes, not %d (or run it as one process)", o->R, o->C,
			       (unsigned long long)o->R * (unsigned long long)o->C, b->P);
		return KEXIT_USAGE;
	}
	return 0;
}

static int open_input(job *b)
{
	const kpart_opts *o = b->o;
	input_msg *in = &b->in;
	int rc = 0;
	if (b->me == 0) {
		snprintf(b->outdir, sizeof b->outdir, "%s", o->outdir);
		rc = kpart_dir_begin(b->outdir, o->force, b->tmpdir, sizeof b->tmpdir);
		if (!rc && o->gen) { /* kpart -s: the header kgen's file would have */
			b->info.nv = (uint64_t)1 << o->gen->scale;
			b->info.ne = kgen_nedges(o->gen);
			b->info.idbytes = b->info.nv <= ((uint64_t)1 << 32) ? 4 : 8;
			b->info.flags = KEDGE_F_UNDIRECTED;
			b->info.prov = kstrdup(o->gen_prov);
		} else if (!rc && !(rc = kedge_open(o->input, &b->r, &b->info)))
			b->info.prov = kstrdup(b->info.prov); /* r keeps (and frees) its own */
		if (!rc) {
			/* generated tuples are a stream's, unless held in shared memory */
			in->stream = o->gen || !strcmp(o->input, "-") || !kedge_seekable(b->r);
			kpart_grid g;
			if (kpart_grid_init(&g, b->info.nv, o->R, o->C)) {
				kerror("a %dx%d grid has more blocks than the graph's %llu vertices", o->R, o->C,
				       (unsigned long long)b->info.nv);
				rc = KEXIT_USAGE;
			} else if (!in->stream) {
				/* kedge_open checked the size and read the trailer */
				kedge_trailer(b->r, &in->size, &b->crc);
				in->crc = b->crc;
			}
		}
		in->rc = (uint64_t)rc;
		in->nv = b->info.nv;
		in->ne = b->info.ne;
		in->idbytes = b->info.idbytes;
		in->flags = b->info.flags;
	}
	kcomm_bcast(b->comm, in, sizeof *in, 0);
	kcomm_bcast(b->comm, b->outdir, sizeof b->outdir, 0);
	kcomm_bcast(b->comm, b->tmpdir, sizeof b->tmpdir, 0);
	if ((rc = (int)in->rc))
		return rc;
	b->stream = (int)in->stream;
	b->idbytes = (int)in->idbytes;
	b->has_map = !!(in->flags & KEDGE_F_MAP);
	if (b->me != 0) {
		ktemp_register(b->tmpdir);
		struct stat sst;
		if (stat(b->tmpdir, &sst)) {
			kerror("'%s' is not visible here (the output must be on a shared file system)", b->tmpdir);
			rc = KEXIT_IO;
		}
		if (!rc && !b->stream && !(rc = kedge_open(o->input, &b->r, &b->info))) {
			b->info.prov = kstrdup(b->info.prov);
			if (b->info.nv != in->nv || b->info.ne != in->ne || b->info.idbytes != in->idbytes) {
				kerror("'%s': the input changed while it was being read", o->input);
				rc = KEXIT_DATA;
			}
		}
	}
	return kcomm_agree(b->comm, rc);
}

static int choose_engine(job *b)
{
	int rc = kcomm_agree(b->comm, pick_engine(b->comm, b->o, &b->dbs, &b->st->engine));
	b->db = b->dbs.d ? &b->dbs : NULL;
	return rc;
}

/* Whether kpart -s makes the tuples again for each pass instead of holding
 * them: by default when every rank generates on its GPU (scale 26 on one
 * H200: kpart -s 18.5 s against 21.0 staged, NOTES.md), else not (the
 * CPU's threads would make the graph 2P times over); KBFS_KPART_FEED=0 or
 * 1 decides (0 on any rank: staged; 1 on every rank: fed).  Collective. */
static int feed_wanted(kcomm *comm, int on_dev)
{
	const char *v = getenv("KBFS_KPART_FEED");
	uint64_t on = v && !strcmp(v, "1") ? 1 : v && !strcmp(v, "0") ? 0 : (uint64_t)(on_dev != 0);
	kcomm_allreduce_u64(comm, &on, 1, KCOMM_MIN);
	return on != 0;
}

/* Whether the keys are kept to 32-bit residuals (plan: more buckets, slower
 * passes): when KBFS_KPART_RES32=1 asks for it on any rank (the ablation),
 * or when this host's ranks' keys at 8 bytes (two entries a tuple, the
 * busiest rank's share) would take more than half of its available
 * memory.  The same on every rank (collective). */
static int narrow_keys(job *b)
{
	const char *v = getenv("KBFS_KPART_RES32");
	uint64_t asked = v && !strcmp(v, "1"), narrow[2] = {asked, 0};
	if (!asked) {
		double share = b->P > 1 ? 1.15 / b->P : 1.0;
		double need = 8.0 * 2.0 * (double)b->in.ne * share * kcomm_host_ranks(b->comm);
		uint64_t avail = kmem_available();
		narrow[1] = avail && need > 0.5 * (double)avail;
	}
	kcomm_allreduce_u64(b->comm, narrow, 2, KCOMM_MAX);
	b->narrow = narrow[0] ? 1 : narrow[1] ? 2 : 0;
	return b->narrow != 0;
}

static int open_source(job *b)
{
	const kpart_opts *o = b->o;
	const input_msg *in = &b->in;
	source *s = &b->s;
	int rc;
	if (b->has_map) {
		b->map = kmalloc(kmul((size_t)in->nv, 8));
		if (b->r)
			memcpy(b->map, kedge_map(b->r), (size_t)in->nv * 8);
		if (b->stream)
			kcomm_bcast(b->comm, b->map, (size_t)in->nv * 8, 0);
	}
	if (make_plan(&b->pl, in->nv, in->ne, o->R, o->C, b->P, b->me, o->wide, narrow_keys(b))) {
		if (b->me == 0)
			kerror("a graph of %llu vertices is too large for a %dx%d grid (local indices beyond 64 bits)",
			       (unsigned long long)in->nv, o->R, o->C);
		return KEXIT_RESOURCE;
	}
	if (b->me == 0) {
		/* narrowed, or asked to be and could not: 32-bit residuals would
		 * need more than 2^20 buckets (scale 30 on 4x1: 2^26) */
		const char *why = b->narrow == 1 ? "KBFS_KPART_RES32=1" : "this host's memory is short for 64-bit ones";
		char note[160] = "";
		const int need = b->pl.bc + b->pl.br - 32, cap = b->pl.bc < 20 ? b->pl.bc : 20;
		if (b->narrow && !b->pl.res64)
			snprintf(note, sizeof note, " (%s)", why);
		else if (b->narrow && need > cap)
			snprintf(note, sizeof note, " (%s, but 32-bit ones would need 2^%d buckets, more than 2^%d)", why,
				 need, cap);
		else if (b->narrow)
			snprintf(note, sizeof note, " (%s, but --wide keeps them 64-bit)", why);
		kinfo("keys: 2^%d buckets a part, %d-bit residuals%s", kpart_bits_for(b->pl.nbk), b->pl.res64 ? 64 : 32,
		      note);
	}
	b->pl.rowdeg = rowdeg_of(b->comm, b->P, o->C, o->relabel);
	if (b->pl.rowdeg && b->me == 0)
		kinfo("one column: each rank counts its own vertices' tuple degrees%s per row, none summed over the "
		      "column",
		      b->pl.rowdeg & 2 ? " and degrees" : "");
	int staged = 0;
	if (o->gen) {
		/* kpart -s: the tuples generated where a staged stream would be,
		 * and read as a file is; else each rank generates its own slice,
		 * whose keys are exchanged as a dealt stream's */
		double t = ktime();
		if (kgen_init(&b->gen, o->gen))
			KBUG("kpart -s with invalid generator parameters");
		s->name = o->input;
		/* on the device when the build runs there (KBFS_KPART_GEN=cpu: on
		 * the CPU all the same, the ablation) */
		const char *gv = getenv("KBFS_KPART_GEN");
		uint64_t on_dev = b->db && o->gdev && !(gv && !strcmp(gv, "cpu"));
		kcomm_allreduce_u64(b->comm, &on_dev, 1, KCOMM_MIN);
		kgen_device *gdev = on_dev ? o->gdev : NULL;
		if (feed_wanted(b->comm, gdev != NULL)) {
			/* no tuples held; every rank makes them all again for each
			 * pass and keeps its own part's keys */
			if ((rc = kpart_feed_open(b->comm, gdev, &b->gen, &s->feed)))
				return rc;
			s->w = 8; /* the generator's u64 pairs */
			s->crc_w = b->idbytes;
			s->nv = in->nv;
			s->first = 0;
			s->n = in->ne;
			s->fd = -1;
			b->stream = 0;
			b->in.size = 0;
			b->pl.keep = b->P > 1 ? b->me : -1;
			b->st->t_gen = 0;
			if (b->me == 0)
				kinfo("the graph made again for each pass in %llu chunks, on %s (KBFS_KPART_FEED=0: held once "
				      "instead): no tuples held, every rank keeps its own keys",
				      (unsigned long long)kpart_feed_chunks(s->feed), gdev ? gdev->base.name : "the CPU");
			return 0;
		}
		if ((rc = kpart_stage_gen(b->comm, gdev, &b->gen, b->idbytes, s, &b->crc, &staged)))
			return rc;
		if (staged) {
			b->stream = 0;
			b->in.crc = b->crc;
		}
		b->in.size = 0;
		b->st->t_gen = ktime() - t;
		kcomm_allreduce_double(b->comm, &b->st->t_gen, 1, KCOMM_MAX);
		if (!staged)
			return 0;
	} else if (b->stream) {
		/* on one host the stream is held in shared memory and read as a
		 * file is; else (or KBFS_KPART_STAGE=0) dealt out by rank 0 */
		kedge_info info = {.nv = in->nv, .ne = in->ne, .idbytes = (uint32_t)in->idbytes, .flags = (uint32_t)in->flags};
		if ((rc = kpart_stage(b->comm, b->r, o->input, &info, s, &b->crc, &b->in.size, &staged)))
			return rc;
		if (staged) {
			b->stream = 0;
			b->in.crc = b->crc;
		}
	}
	if (b->stream) {
		s->w = b->idbytes;
		s->nv = UINT64_MAX; /* kedge_read_raw checks the ids */
		rc = kcomm_agree(b->comm, kdist_deal(b->comm, b->r, b->idbytes, &s->mem, &s->n));
		if (!rc && b->me == 0) /* the stream's bytes and CRC, for the manifest */
			kedge_trailer(b->r, &b->in.size, &b->crc);
	} else {
		s->r = b->r;
		b->pl.shared = shared_drop(b->comm, b->P, b->stream);
		if (b->pl.shared) {
			kpart_slice(in->ne, b->me, b->P, &s->first, &s->n);
			if (b->me == 0)
				kinfo("every rank reads its slice and drops keys into shared memory (KBFS_KPART_SHARED=1)");
		} else if (read_all(b->comm, b->P, b->stream)) {
			b->pl.keep = b->me;
			s->first = 0;
			s->n = in->ne;
			if (b->me == 0)
				kinfo("every rank reads the whole input (one host): no exchange of keys");
		} else
			kpart_slice(in->ne, b->me, b->P, &s->first, &s->n);
		if (staged)
			s->mem = (unsigned char *)s->map + s->first * 2 * (uint64_t)b->idbytes;
		else
			rc = kcomm_agree(b->comm, kpart_source_file(s, o->input, in->size, in->ne, b->idbytes, in->nv));
		if (!rc && s->map && !staged && b->me == 0)
			kinfo("the input read through a shared mapping (KBFS_KPART_MMAP=0: by pread)");
	}
	return rc;
}

static int count_keys(job *b)
{
	const plan *pl = &b->pl;
	step(b->me, 1, "pass 1: read, check, count");
	b->nloc = b->P == 1 ? pl->RC : 1;
	size_t H = kpart_nhist(pl);
	b->S = kpart_slots(pl);
	if (b->s.feed) /* a fed source: the chunks' slots, as many a chunk as threads */
		b->S = (int)kpart_feed_chunks(b->s.feed) * kpart_nthreads();
	b->hist = kcalloc(H, 8);
	uint32_t scrc = 0;
	b->ht = kmalloc(kmul(H, (size_t)b->S + 1) * 8); /* slot histograms, pass 2's offsets on one process */
	int rc = kcomm_agree(b->comm,
			     kpart_pass1(pl, b->comm, &b->s, b->stream ? NULL : &scrc, b->hist, b->ht, b->S, &b->sl));
	if (!rc && !b->stream) {
		uint64_t first, n; /* the CRC's tuples: this rank's slice */
		kpart_slice(b->in.ne, b->me, b->P, &first, &n);
		uint32_t all = kcomm_crc32_concat(b->comm, scrc, n * 2 * (uint64_t)b->idbytes);
		if (b->s.feed) { /* made here: the CRC kgen's edge file would carry */
			b->crc = all;
			b->in.crc = all;
			if (b->me == 0)
				kinfo("the chunks waited for in pass 1: %.3f s", kpart_feed_waited(b->s.feed));
		} else if (all != (uint32_t)b->in.crc) {
			if (b->me == 0)
				kerror("'%s': edge data checksum mismatch (corrupt file)", b->o->input);
			rc = KEXIT_DATA;
		}
	}
	if (rc)
		return rc;
	if (b->stream)
		kcomm_bcast(b->comm, &b->crc, sizeof b->crc, 0);
	kcomm_allreduce_u64(b->comm, &b->sl, 1, KCOMM_SUM);
	b->st->t_read = lap(b->me, "open, pass 1 (read, check, count)", &b->tl);
	return 0;
}

/* plan.shared: this rank's part in the shared window (kpart_shared_part);
 * pass 1's counts are then no longer needed */
static void make_shared_part(job *b)
{
	kpart_shared_part(&b->pl, b->comm, b->hist, b->P, b->me, &b->parts[0]);
	free(b->hist);
	b->hist = NULL;
}

static void make_parts(job *b)
{
	const plan *pl = &b->pl;
	int P = b->P;
	b->parts = kcalloc((size_t)b->nloc, sizeof *b->parts);
	if (pl->shared) {
		make_shared_part(b);
		return;
	}
	uint64_t *mine = b->hist;
	/* KBFS_KPART_PREFAULT=1 (an experiment): the parts' key arrays mapped
	 * writable on all threads, a piece each, before pass 2 scatters keys
	 * into them (else each page faults in the thread that first writes it,
	 * at random, every thread in the same page tables) */
	const char *pf = getenv("KBFS_KPART_PREFAULT");
	const int prefault = pf && !strcmp(pf, "1");
	if (P > 1 && pl->keep < 0) {
		mine = kmalloc(kmul((size_t)pl->nbk, 8));
		kcomm_reduce_scatter_u64(b->comm, b->hist, mine, (size_t)pl->nbk, KCOMM_SUM);
	}
	for (int p = 0; p < b->nloc; p++) {
		part *pt = &b->parts[p];
		pt->p = P == 1 ? p : b->me;
		pt->i = pt->p / pl->C;
		pt->j = pt->p % pl->C;
		pt->bstart = kmalloc(kmul((size_t)pl->nbk + 1, 8));
		pt->bfill = kmalloc(kmul((size_t)pl->nbk, 8));
		const uint64_t *h = P > 1 ? mine : b->hist + (size_t)p * pl->nbk;
		pt->bstart[0] = 0;
		for (uint64_t k = 0; k < pl->nbk; k++)
			pt->bfill[k] = pt->bstart[k], pt->bstart[k + 1] = pt->bstart[k] + h[k];
		pt->E = pt->bstart[pl->nbk];
		const size_t bytes = kmul((size_t)pt->E, pl->res64 ? 8 : 4);
		pt->res = kmalloc(bytes);
		if (prefault && bytes)
			(void)kmem_populate(pt->res, bytes);
	}
	if (prefault && b->me == 0)
		kinfo("the keys' pages mapped before pass 2 (KBFS_KPART_PREFAULT=1)");
	if (mine != b->hist)
		free(mine);
	free(b->hist);
	b->hist = NULL;
	if (P > 1 && pl->keep < 0) {
		free(b->ht);
		b->ht = NULL;
	}
}

static int fill_parts(job *b)
{
	const kpart_opts *o = b->o;
	int all = b->pl.keep >= 0, sh = b->pl.shared;
	step(b->me, 2, all ? "pass 2: read all, keep own, drop" : sh ? "pass 2: read, drop into shared memory"
								      : "pass 2: read, exchange, drop");
	int rc = kpart_pass2(&b->pl, b->comm, &b->s, b->parts, b->ht, b->S, o->round_tuples ? o->round_tuples : ROUND,
			     o->input);
	free(b->ht);
	b->ht = NULL;
	if ((rc = kcomm_agree(b->comm, rc)))
		return rc;
	kedge_close(b->r);
	b->r = NULL;
	if (b->s.feed) {
		if (b->me == 0)
			kinfo("the chunks waited for in pass 2: %.3f s", kpart_feed_waited(b->s.feed));
		kpart_feed_close(b->s.feed); /* the device's buffers freed before the CSC is built there */
		b->s.feed = NULL;
	}
	kpart_source_close(&b->s);
	b->st->t_build += lap(b->me, all  ? "pass 2 (read all, keep own, drop)"
				     : sh ? "pass 2 (read, drop into shared memory)"
					  : "pass 2 (read, exchange, drop)",
			      &b->tl);
	return 0;
}

static int build_csc(job *b)
{
	int rc = 0;
	step(b->me, 3, "sort, dedup: CSC");
	for (int p = 0; p < b->nloc && !rc; p++) {
		if (b->db)
			rc = kpart_dev_csc(&b->pl, &b->parts[p], b->db, b->nloc == 1);
		if (!b->db || rc < 0) /* (auto: a part the device cannot hold) */
			kpart_build_csc(&b->pl, &b->parts[p]), rc = 0;
	}
	if ((rc = kcomm_agree(b->comm, rc)))
		return rc;
	b->st->t_build += lap(b->me, b->db ? "sort, dedup: CSC (device)" : "sort, dedup: CSC", &b->tl);
	return 0;
}

static void finish(job *b)
{
	int relabel = b->o->relabel;
	step(b->me, 4, relabel ? "degrees, relabel" : "degrees");
	finish_parts(&b->pl, b->comm, b->parts, b->nloc, relabel, b->map, b->db);
	b->st->t_build += lap(b->me, b->db ? (relabel ? "tdeg, relabel, CSR (device)" : "tdeg, CSR (device)")
					    : relabel ? "tdeg, relabel" : "tdeg",
			      &b->tl);
}

/* The rank files (CSR made on the way, straight into them). */
static int write_ranks(job *b)
{
	const plan *pl = &b->pl;
	int rc = 0;
	step(b->me, 5, "CSR, rank files, manifest");
	b->ri = kcalloc((size_t)pl->RC, sizeof *b->ri);
	for (int p = 0; p < b->nloc && !rc; p++) {
		kpart_block *blk = &b->parts[p].b;
		kpart_rankinfo *ri = &b->ri[b->parts[p].p];
		char file[64], path[PATHMAX + 64], name[PATHMAX + 64];
		kpart_rank_file(file, sizeof file, b->parts[p].p);
		snprintf(path, sizeof path, "%s/%s", b->tmpdir, file);
		snprintf(name, sizeof name, "%s/%s", b->outdir, file);
		blk->relabel = b->o->relabel;
		rc = kpart_write_rank(path, name, blk, pl->off64_all, ri);
		b->tcsr += ri->csr_seconds;
		b->tsync += ri->sync_seconds;
		kpart_block_free(blk);
	}
	b->twr = lap(-1, "", &b->tl);
	b->st->t_build += b->tcsr;
	if (!(rc = kcomm_agree(b->comm, rc)) && b->P > 1) {
		const kpart_rankinfo *x = &b->ri[b->me];
		rank_msg mine = {.bytes = x->bytes, .crc = x->crc, .nnz = x->nnz, .cols = x->cols, .rows = x->rows};
		rank_msg *all = kmalloc(kmul((size_t)b->P, sizeof *all));
		kcomm_allgather(b->comm, &mine, sizeof mine, all);
		for (int q = 0; q < b->P; q++)
			b->ri[q] = (kpart_rankinfo){.bytes = all[q].bytes, .crc = (uint32_t)all[q].crc, .nnz = all[q].nnz,
						    .cols = all[q].cols, .rows = all[q].rows};
		free(all);
	}
	for (int q = 0; q < pl->RC; q++)
		b->nnz += b->ri[q].nnz;
	return rc;
}

/* Rank 0 (after write_ranks gave rc): the manifest, build-info and the
 * directory in place; the writing step's line; the figures of the build. */
static int write_dir(job *b, int rc)
{
	const kpart_opts *o = b->o;
	kpart_build_stats *st = b->st;
	if (!rc && b->me == 0) {
		result res = {.M = b->in.ne, .selfloops = b->sl, .nnz = b->nnz, .size = b->in.size, .crc = b->crc,
			      .relabel = o->relabel, .info = &b->info, .input = o->input, .has_map = b->has_map};
		rc = write_manifest(&b->pl, &res, b->ri, b->tmpdir, b->outdir);
		st->t_total = ktime() - b->t0;
		if (!rc)
			rc = write_build_info(o, st, b->tmpdir, b->outdir);
		if (!rc)
			rc = kpart_dir_commit(b->tmpdir, b->outdir, o->force);
	}
	free(b->ri);
	b->ri = NULL;
	rc = kcomm_agree(b->comm, rc);
	b->twr += lap(-1, "", &b->tl);
	if (b->me == 0 && klog_verbose())
		kinfo("%-34s %8.3f s (CSR %.3f s, sync %.3f s)", "CSR, rank files, manifest, rename", b->twr, b->tcsr,
		      b->tsync);
	else if (b->me == 0 && kcomm_progress_ok())
		fprintf(stderr, " %.2f s\n", b->twr);
	st->nv = b->pl.g.nv;
	st->N = b->pl.g.N;
	st->M = b->in.ne;
	st->selfloops = b->sl;
	st->nnz = b->nnz;
	return rc;
}

static int end_build(job *b, int rc)
{
	kpart_build_stats *st = b->st;
	int me = b->me;
	for (int p = 0; p < b->nloc && b->parts; p++) {
		free(b->parts[p].bstart);
		free(b->parts[p].bfill);
		free(b->parts[p].res);
		free(b->parts[p].pre);
		free(b->parts[p].rtd);
		free(b->parts[p].rdeg);
		kpart_block_free(&b->parts[p].b);
	}
	free(b->parts);
	free(b->map);
	free(b->hist);
	free(b->ht);
	kpart_devbuild *db = b->db;
	if (db) {
		double dev[2] = {0, 0};
		kpart_devbuild_drop(db);
		db->d->times(db->d, &dev[0], &dev[1]);
		if (me == 0 && klog_verbose())
			kinfo("device %s: CSC in %llu piece(s), %d part(s) finished there, %llu built on the host; %.3f s "
			      "in its calls, of which %.3f s computing and %.3f s copying",
			      db->d->base.name, (unsigned long long)db->pieces, db->finished, (unsigned long long)db->on_host,
			      db->seconds, dev[0], dev[1]);
		db->d->base.close(&db->d->base);
		st->dev_pieces = db->pieces;
		st->dev_finished = db->finished;
		st->dev_on_host = db->on_host;
	}
	kpart_feed_close(b->s.feed);
	b->s.feed = NULL;
	kpart_source_close(&b->s);
	kedge_close(b->r);
	kedge_info_free(&b->info);
	plan_free(&b->pl);
	if (rc)
		cleanup_tmp(me, b->tmpdir);
	else
		ktemp_unregister(b->tmpdir);
	st->t_total = ktime() - b->t0;
	st->t_write = st->t_total - st->t_read - st->t_build;
	if (me == 0 && !rc)
		kinfo("%-34s %8.3f s", "total", st->t_total);
	return rc;
}

int kpart_build(kcomm *comm, const kpart_opts *o, kpart_build_stats *st)
{
	job b = {.comm = comm, .o = o, .st = st, .P = kcomm_size(comm), .me = kcomm_rank(comm), .s = {.fd = -1}};
	b.t0 = b.tl = ktime();
	memset(st, 0, sizeof *st);
	st->engine = "cpu";
	st->nprocs = b.P;
	st->threads = kpart_nthreads();
	int rc = check_grid(&b);
	if (rc)
		return rc;
	/* step 1's parts with -v: what precedes pass 1 (the engine's start, a
	 * stream read into memory) apart from the pass itself */
	double t1 = b.t0;
	if (!(rc = open_input(&b)) && (sublap(comm, "input opened", &t1), !(rc = choose_engine(&b))) &&
	    (sublap(comm, "engine started", &t1), !(rc = open_source(&b))) &&
	    (sublap(comm, "source ready", &t1), !(rc = count_keys(&b)))) {
		make_parts(&b);
		if (!(rc = fill_parts(&b)) && !(rc = build_csc(&b))) {
			finish(&b);
			rc = write_dir(&b, write_ranks(&b));
		}
	}
	return end_build(&b, rc);
}

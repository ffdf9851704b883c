/*
 * kpart_estimate: what a partition and a kbfs run on it will need, from the
 * graph's size alone (a scale, or an edge file's header), before anything
 * is generated or built (kpart --dry-run).  See kpart.h.
 */
#include "kgen_dev.h"
#include "kpart.h"
#include "kpart_dev.h"
#include "kjson.h"
#include "klog.h"
#include "kmem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The busiest rank's stored edges over the average, allowed for on grids
 * of more than one rank (measured on Kronecker graphs: 1.04 on 2x2, 1.05 on
 * 4x4, 1.13 on 1x8 at scale 18, with degree relabelling). */
#define BUSIEST 1.15

int kpart_estimate_make(uint64_t nv, uint64_t M, int R, int C, kpart_estimate *e)
{
	memset(e, 0, sizeof *e);
	e->nv = nv;
	e->M = M;
	e->R = R;
	e->C = C;
	if (kpart_grid_init(&e->g, nv, R, C))
		return -1;
	/* every tuple stored as two directed entries, none removed as a
	 * duplicate or self-loop: an upper bound (Kronecker graphs keep 91% at
	 * scale 18, 94% at 20, ~97% at 26) */
	double avg = 2.0 * (double)M / ((double)R * (double)C);
	e->nnz_rank = (uint64_t)ceil(avg * (R * C > 1 ? BUSIEST : 1.0));
	uint64_t ncols = e->g.N / (uint64_t)C, nrows = e->g.N / (uint64_t)R;
	e->idx64 = ncols > (UINT64_C(1) << 32) || nrows > (UINT64_C(1) << 32);
	int I = e->idx64 ? 8 : 4, O = e->nnz_rank > UINT32_MAX ? 8 : 4;
	/* kpart(5): 96 + O(ncols+nrows+2) + I nnz + 8 nb (+ 8 nb with an id map) + 20 */
	e->rank_file_bytes = 96 + (uint64_t)O * (ncols + nrows + 2) + (uint64_t)I * e->nnz_rank + 8 * e->g.nb + 20;
	/* kedge(5): header and provenance (~300 bytes), the records, the trailer */
	e->edge_file_bytes = 300 + 2 * M * (nv > UINT32_MAX ? 8 : 4) + 20;
	e->device_bytes = kpart_device_bytes(&e->g, e->nnz_rank, e->idx64);
	/* kpart on the device (kpart_devbuild.c), the block in one piece: the
	 * keys and their sort buffer (16 B an entry), CUB's scratch (allowed
	 * n/16 bytes: a few per tile of thousands of keys), two column counts
	 * and the bucket starts for the CSC (on one column of several ranks
	 * also two row counts: plan.rowdeg); the permutations and the row
	 * counts for the relabelling and the CSR.  The larger of the two, and
	 * what kpart leaves free for the runtime. */
	uint64_t n = e->nnz_rank, keys = 16 * n + n / 16 + ((uint64_t)1 << 20) + KPART_DEV_RESERVE;
	uint64_t csc = keys + 16 * (ncols + 1) + 8 * (ncols + 1) + (C == 1 && R > 1 ? 16 * nrows : 0);
	uint64_t big = ncols > nrows ? ncols : nrows;
	uint64_t fin = keys + 8 * (big + 1) + 8 * (ncols + nrows);
	e->build_device_bytes = csc > fin ? csc : fin;
	/* kbfs with the CPU engine, as kbfs_plan.c counts it for a built
	 * partition: the block (8-byte offsets, the indices once on 1x1,
	 * twice elsewhere, tdeg, orig and its inverse map), the
	 * engine (its bitmaps, a packed word per local row and per owned
	 * vertex, two wire buffers of nb/8 bytes per peer), and for
	 * validation this rank's entries and every vertex's parent and depth
	 * (8 + 5 bytes); the CUDA engine keeps less here */
	uint64_t nb = e->g.nb, peers = (uint64_t)(R > C ? R : C);
	uint64_t ways = R == 1 && C == 1 ? 1 : 2; /* a 1x1 block's CSR is its CSC (kpart_block_csr) */
	e->host_bytes = 8 * (ncols + 1) + 8 * (nrows + 1) + ways * (uint64_t)I * e->nnz_rank + 8 * nb + 24 * nb +
			8 * (3 * nb / 64 + ncols / 64 + 4 * nrows / 64 + nrows + nb) + 2 * peers * ((nb / 8 + 7) & ~UINT64_C(7)) +
			8 * nb + 13 * e->g.N;
	/* kpart on one host: the busiest rank's keys (8 bytes a kept tuple
	 * end; 4 with 32-bit residuals), and the tuples held once (a file's
	 * pages, or a stream or kpart -s in shared memory) */
	e->build_keys_bytes = 8 * e->nnz_rank;
	e->build_tuples_bytes = 2 * M * (nv > UINT32_MAX ? 8 : 4);
	return 0;
}

/* The most square grid of P ranks, R <= C. */
static void square_grid(uint64_t P, int *R, int *C)
{
	uint64_t r = (uint64_t)sqrt((double)P);
	while (r > 1 && P % r)
		r--;
	*R = (int)(r ? r : 1);
	*C = (int)(P / (uint64_t)*R);
}

int kpart_estimate_fit(uint64_t nv, uint64_t M, uint64_t gpu_bytes, int *R, int *C)
{
	for (uint64_t P = 1; P <= KPART_MAX_PROCS; P *= 2) {
		kpart_estimate e;
		square_grid(P, R, C);
		if (!kpart_estimate_make(nv, M, *R, *C, &e) && e.device_bytes <= gpu_bytes)
			return 0;
	}
	return -1;
}

const char *kpart_human_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double x = (double)n;
	int u = 0;
	while (x >= 1024 && u < 5)
		x /= 1024, u++;
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, len, "%.*f %s", x < 10 ? 2 : x < 100 ? 1 : 0, x, unit[u]);
	return buf;
}

/* 1.07 G, 67.1 M, 1024 */
static const char *human_count(char *buf, size_t len, uint64_t n)
{
	if (n >= 1000000000)
		snprintf(buf, len, "%.2f G", (double)n / 1e9);
	else if (n >= 1000000)
		snprintf(buf, len, "%.1f M", (double)n / 1e6);
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
	return buf;
}

void kpart_estimate_json(FILE *fp, const kpart_estimate *e, uint64_t gpu_bytes)
{
	kjson_writer *w = kjson_writer_new(fp, 1);
	kjson_begin_object(w);
	kjson_kv_string(w, "program", "kpart --dry-run");
	kjson_kv_uint(w, "nv", e->nv);
	kjson_kv_uint(w, "M", e->M);
	kjson_kv_int(w, "R", e->R);
	kjson_kv_int(w, "C", e->C);
	kjson_kv_uint(w, "nnz_rank_max", e->nnz_rank);
	kjson_kv_int(w, "index_bits", e->idx64 ? 64 : 32);
	kjson_kv_uint(w, "edge_file_bytes", e->edge_file_bytes);
	kjson_kv_uint(w, "rank_file_bytes_max", e->rank_file_bytes);
	kjson_kv_uint(w, "device_bytes_max", e->device_bytes);
	kjson_kv_uint(w, "build_device_bytes_max", e->build_device_bytes);
	kjson_kv_uint(w, "kgen_device_bytes", kgen_device_bytes(0));
	kjson_kv_uint(w, "host_bytes_max", e->host_bytes);
	kjson_kv_uint(w, "host_available_bytes", kmem_available());
	kjson_kv_uint(w, "build_keys_bytes_max", e->build_keys_bytes);
	kjson_kv_uint(w, "build_tuples_bytes", e->build_tuples_bytes);
	if (gpu_bytes) {
		int R, C;
		kjson_kv_uint(w, "gpu_bytes", gpu_bytes);
		kjson_kv_bool(w, "fits", e->device_bytes <= gpu_bytes);
		if (!kpart_estimate_fit(e->nv, e->M, gpu_bytes, &R, &C)) {
			kjson_kv_int(w, "fewest_gpus", R * C);
			kjson_key(w, "fewest_grid");
			kjson_begin_object(w);
			kjson_kv_int(w, "R", R);
			kjson_kv_int(w, "C", C);
			kjson_end_object(w);
		}
	}
	kjson_end_object(w);
	kjson_writer_free(w);
}

void kpart_estimate_print(FILE *fp, const char *what, const kpart_estimate *e, uint64_t gpu_bytes)
{
	char a[32], b[32], c[32];
	int P = e->R * e->C;
	fprintf(fp, "%s: %s vertices, %s edge tuples; grid %dx%d (%d rank%s)\n", what, human_count(a, sizeof a, e->nv),
		human_count(b, sizeof b, e->M), e->R, e->C, P, P == 1 ? "" : "s");
	fprintf(fp, "  edge file (kgen)        %s\n", kpart_human_bytes(a, sizeof a, e->edge_file_bytes));
	fprintf(fp, "  partition (kpart)       %s: %d rank file%s of up to %s\n",
		kpart_human_bytes(a, sizeof a, e->rank_file_bytes * (uint64_t)P), P, P == 1 ? "" : "s",
		kpart_human_bytes(b, sizeof b, e->rank_file_bytes));
	fprintf(fp, "  stored edges per rank   up to %s (%s indices)\n", human_count(a, sizeof a, e->nnz_rank),
		e->idx64 ? "64-bit" : "32-bit");
	fprintf(fp, "  device memory per GPU   up to %s (kbfs --engine cuda, one rank per GPU)\n",
		kpart_human_bytes(a, sizeof a, e->device_bytes));
	uint64_t avail = kmem_available();
	fprintf(fp, "  host memory per rank    up to %s (kbfs --engine cpu: the block, its arrays, validation's 13 B a "
		    "vertex)%s%s%s\n",
		kpart_human_bytes(a, sizeof a, e->host_bytes), avail ? "; " : "",
		avail ? kpart_human_bytes(b, sizeof b, avail) : "", avail ? " available here" : "");
	fprintf(fp, "  kgen on the GPU         %s per rank (--engine cuda; any scale)\n",
		kpart_human_bytes(a, sizeof a, kgen_device_bytes(0)));
	fprintf(fp, "  kpart on the GPU        up to %s per GPU for a block in one piece (--engine cuda; "
		    "with less, it sorts in pieces)\n",
		kpart_human_bytes(a, sizeof a, e->build_device_bytes));
	fprintf(fp, "  kpart on the host       up to %s of keys per rank (8 B a kept tuple end; half with 32-bit "
		    "residuals), and the tuples once, %s (a file's pages, a stream or -s in shared memory; "
		    "none with -s on the GPUs)\n",
		kpart_human_bytes(a, sizeof a, e->build_keys_bytes), kpart_human_bytes(b, sizeof b, e->build_tuples_bytes));
	fprintf(fp, "  (upper estimates from the sizes alone: every tuple stored twice%s; kbfs --dry-run on "
		    "the partition gives the exact plan)\n",
		P > 1 ? ", the busiest rank 15% above the mean" : "");
	if (!gpu_bytes)
		return;
	int R, C;
	if (e->device_bytes <= gpu_bytes)
		fprintf(fp, "  fits GPUs of %s (%.0f%% used)\n", kpart_human_bytes(a, sizeof a, gpu_bytes),
			100.0 * (double)e->device_bytes / (double)gpu_bytes);
	else
		fprintf(fp, "  does not fit GPUs of %s\n", kpart_human_bytes(a, sizeof a, gpu_bytes));
	if (!kpart_estimate_fit(e->nv, e->M, gpu_bytes, &R, &C)) {
		kpart_estimate f;
		kpart_estimate_make(e->nv, e->M, R, C, &f);
		fprintf(fp, "  fewest GPUs of %s that fit: %d (grid %dx%d, up to %s each)\n",
			kpart_human_bytes(a, sizeof a, gpu_bytes), R * C, R, C,
			kpart_human_bytes(c, sizeof c, f.device_bytes));
	} else {
		fprintf(fp, "  no grid of up to %u GPUs of %s fits it\n", KPART_MAX_PROCS,
			kpart_human_bytes(a, sizeof a, gpu_bytes));
	}
}

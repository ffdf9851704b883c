/*
 * kbfs_out: what a kbfs run writes besides the statistics block, all on
 * rank 0: per-root depth files (--depth-out, "v depth" lines), predecessor
 * files (--pred-out, kpred(5) through kpred_write) and the JSON record
 * (--json; its fields are listed in kbfs(1)).  Vertices are written in the
 * input's own ids, sorted by them; padding vertices are left out.
 */
#include "kbfs_internal.h"
#include "kbuild.h"
#include "kio.h"
#include "kfs.h"
#include "kjson.h"
#include "klog.h"
#include "kmem.h"
#include "kopt.h"
#include "kpred.h"
#include "kprov.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int make_dir(const char *dir)
{
	if (!strcmp(dir, "-"))
		return 0; /* standard output: one root's file */
	if (mkdir(dir, 0777) && errno != EEXIST) {
		kerror("cannot create directory '%s': %s", dir, strerror(errno));
		return KEXIT_IO;
	}
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		kerror("'%s' is not a directory", dir);
		return KEXIT_IO;
	}
	return 0;
}

static const uint64_t *sort_key;
static int cmp_by_orig(const void *a, const void *b)
{
	uint64_t x = sort_key[*(const uint64_t *)a], y = sort_key[*(const uint64_t *)b];
	return x < y ? -1 : x > y;
}

int kbfs_prepare_files(kbfs_run *r)
{
	const kbfs_opts *o = r->o;
	int rc = 0;
	if (o->pred_out)
		rc = make_dir(o->pred_out);
	if (!rc && o->depth_out)
		rc = make_dir(o->depth_out);
	if (rc)
		return rc;
	const kpart_grid *g = &r->b->g;
	r->order = kmalloc(kmul((size_t)g->N, 8));
	r->nreal = 0;
	for (uint64_t v = 0; v < g->N; v++)
		if (r->orig_all ? r->orig_all[v] != KPART_NO_VERTEX : v < g->nv)
			r->order[r->nreal++] = v;
	if (r->orig_all) {
		sort_key = r->orig_all;
		qsort(r->order, (size_t)r->nreal, 8, cmp_by_orig);
	}
	return 0;
}

static uint64_t label(const kbfs_run *r, uint64_t v) { return r->orig_all ? r->orig_all[v] : v; }

static char *path_for(const char *dir, const char *what, uint64_t root, const char *ext)
{
	if (!strcmp(dir, "-"))
		return kstrdup("-");
	char name[64];
	snprintf(name, sizeof name, "%s-%llu.%s", what, (unsigned long long)root, ext);
	return kfs_join(dir, name);
}

static int write_depths(kbfs_run *r, const kbfs_root *rt)
{
	char *path = path_for(r->o->depth_out, "depth", rt->input, "txt");
	kio_out *out = kio_open_out(path, 0, 0);
	free(path);
	if (!out)
		return KEXIT_IO;
	FILE *fp = kio_out_file(out);
	for (uint64_t k = 0; k < r->nreal; k++) {
		uint64_t v = r->order[k];
		fprintf(fp, "%llu %lld\n", (unsigned long long)label(r, v), (long long)kbfs_packed_level(r->pred[v]));
	}
	return kio_commit(out);
}

static int write_preds(kbfs_run *r, const kbfs_root *rt)
{
	uint64_t n = r->nreal;
	uint64_t *v = kmalloc(kmul((size_t)(n ? n : 1), 8));
	int64_t *p = kmalloc(kmul((size_t)(n ? n : 1), 8));
	for (uint64_t k = 0; k < n; k++) {
		uint64_t x = r->order[k], par = kbfs_packed_parent(r->pred[x]);
		v[k] = label(r, x);
		p[k] = par == KBFS_NONE ? -1 : (int64_t)label(r, par);
	}
	char *path = path_for(r->o->pred_out, "pred", rt->input, r->o->pred_binary ? "bin" : "txt");
	int rc = kpred_write(path, r->o->pred_binary, rt->input, n, v, p);
	free(path);
	free(v);
	free(p);
	return rc;
}

int kbfs_write_files(kbfs_run *r, const kbfs_root *rt)
{
	int rc = 0;
	if (r->o->depth_out)
		rc = write_depths(r, rt);
	if (!rc && r->o->pred_out)
		rc = write_preds(r, rt);
	return rc;
}

/* ---- JSON ---- */

/* "gpus": the device of every rank (empty with the CPU engine) */
static void json_gpus(kjson_writer *w, const kbfs_run *r)
{
	kjson_key(w, "gpus");
	kjson_begin_array(w);
	if (r->dev)
		r->dev->json_devices(r->dev, w);
	kjson_end_array(w);
}

static void json_level(kjson_writer *w, const kbfs_level *l)
{
	kjson_begin_object(w);
	kjson_kv_uint(w, "level", l->level);
	kjson_kv_string(w, "direction", kbfs_dir_name(l->dir));
	kjson_kv_uint(w, "frontier", l->frontier);
	kjson_kv_uint(w, "found", l->found);
	kjson_kv_uint(w, "edges_examined", l->examined);
	kjson_key(w, "bytes");
	kjson_begin_object(w);
	for (int k = 0; k < KBFS_NXCHG; k++)
		kjson_kv_uint(w, kbfs_xchg_names[k], l->bytes[k]);
	kjson_end_object(w);
	kjson_key(w, "time");
	kjson_begin_object(w);
	for (int k = 0; k < KBFS_NPHASE; k++)
		kjson_kv_double(w, kbfs_phase_names[k], l->time[k]);
	kjson_end_object(w);
	kjson_end_object(w);
}

static void json_root(kjson_writer *w, const kbfs_run *r, size_t k)
{
	const kbfs_root *rt = &r->res[k];
	kjson_begin_object(w);
	kjson_kv_uint(w, "index", k);
	kjson_kv_uint(w, "root", rt->input);
	kjson_kv_double(w, "time", rt->time);
	kjson_kv_double(w, "pred_time", rt->pred_time);
	kjson_kv_uint(w, "nedge", rt->nedge);
	kjson_kv_double(w, "teps", rt->time > 0 ? (double)rt->nedge / rt->time : 0.0);
	kjson_kv_uint(w, "reached", rt->reached);
	kjson_kv_int(w, "max_depth", rt->maxdepth);
	if (r->o->validate) {
		kjson_kv_double(w, "validate_time", rt->validate_time);
		kjson_kv_bool(w, "valid", rt->valid);
		kjson_kv_string(w, "validated_on", r->eng.tree_check && !rt->device_miss ? "device" : "host");
		kjson_kv_bool(w, "device_check_failed", rt->device_miss);
	} else {
		kjson_key(w, "validate_time");
		kjson_null(w);
		kjson_key(w, "valid");
		kjson_null(w);
	}
	kjson_key(w, "levels");
	kjson_begin_array(w);
	for (size_t q = 0; q < rt->nlv; q++)
		json_level(w, &rt->lv[q]);
	kjson_end_array(w);
	kjson_end_object(w);
}

/* The last part of a path ("-" and "" stay as they are). */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* "graph": which graph was searched, so runs of different graphs are never
 * taken for one (kstat --svg draws a series per graph): kind ("kronecker"
 * or "import"), name (the generator's parameters, or the imported file's
 * name), and the edge file and its CRC-32 as the manifest records them. */
static void json_graph(kjson_writer *w, const kbfs_run *r)
{
	const kpart_block *b = r->b;
	kpart_manifest m;
	int have = !kpart_manifest_read(r->dir, &m);
	const char *source = have ? kpart_manifest_get(&m, "source") : NULL;
	const char *origin = have ? kpart_manifest_get(&m, "source_origin") : NULL;
	const char *crc = have ? kpart_manifest_get(&m, "source_crc32") : NULL;
	char name[256];
	if (b->scale > 0 && (b->seed1 != 2 || b->seed2 != 3))
		snprintf(name, sizeof name, "Kronecker scale %d, edgefactor %llu, seeds %llu %llu", b->scale,
			 (unsigned long long)b->edgefactor, (unsigned long long)b->seed1, (unsigned long long)b->seed2);
	else if (b->scale > 0)
		snprintf(name, sizeof name, "Kronecker scale %d, edgefactor %llu", b->scale,
			 (unsigned long long)b->edgefactor);
	else
		snprintf(name, sizeof name, "%s",
			 base_name(origin && strcmp(origin, "-") ? origin : source && strcmp(source, "-") ? source : r->dir));
	kjson_key(w, "graph");
	kjson_begin_object(w);
	kjson_kv_string(w, "kind", b->scale > 0 ? "kronecker" : "import");
	kjson_kv_string(w, "name", name);
	kjson_kv_string(w, "source", source); /* NULL: null */
	kjson_kv_string(w, "source_crc32", crc);
	kjson_end_object(w);
	if (have)
		kpart_manifest_free(&m);
}

static void json_head(kjson_writer *w, const kbfs_run *r)
{
	const kbfs_opts *o = r->o;
	const kpart_block *b = r->b;
	kjson_kv_string(w, "program", "kbfs");
	kjson_kv_string(w, "version", KBFS_VERSION);
	/* provenance: when, from which commit, on what */
	char buf[256];
	kjson_kv_string(w, "date", r->started);
	kjson_kv_string(w, "commit", kprov_commit());
	kprov_cpu_model(buf, sizeof buf);
	kjson_kv_string(w, "cpu", buf);
	kcomm_library_version(buf, sizeof buf);
	kjson_kv_string(w, "mpi_library", buf);
	kjson_key(w, "features");
	kjson_begin_object(w);
	kjson_kv_bool(w, "mpi", KBUILD_MPI);
	kjson_kv_bool(w, "cuda", KBUILD_CUDA);
	kjson_kv_bool(w, "nccl", KBUILD_NCCL);
	kjson_end_object(w);
	kjson_key(w, "argv");
	kjson_begin_array(w);
	for (int k = 0; k < o->argc; k++)
		kjson_string(w, o->argv[k]);
	kjson_end_array(w);
	kjson_kv_string(w, "partition", r->dir);
	kjson_key(w, "grid");
	kjson_begin_object(w);
	kjson_kv_int(w, "R", b->g.R);
	kjson_kv_int(w, "C", b->g.C);
	kjson_end_object(w);
	kjson_kv_int(w, "ranks", r->size);
	kjson_key(w, "hosts");
	kjson_begin_array(w);
	for (int k = 0; k < r->size; k++)
		kjson_string_n(w, r->hosts + (size_t)k * KBFS_HOST_LEN,
			       strnlen(r->hosts + (size_t)k * KBFS_HOST_LEN, KBFS_HOST_LEN));
	kjson_end_array(w);
	kjson_kv_string(w, "engine", r->eng.name);
	kjson_kv_string(w, "transport", r->tr.name);
	json_gpus(w, r);
	kjson_kv_int(w, "threads", r->threads);
	kjson_kv_uint(w, "nv", b->g.nv);
	kjson_kv_uint(w, "N", b->g.N);
	kjson_kv_int(w, "scale", r->scale);
	kjson_kv_double(w, "edgefactor", r->edgefactor);
	kjson_kv_bool(w, "generated", b->scale > 0);
	kjson_kv_uint(w, "input_tuples", b->ne_input);
	kjson_key(w, "seeds");
	kjson_begin_array(w);
	kjson_uint(w, b->seed1);
	kjson_uint(w, b->seed2);
	kjson_end_array(w);
	kjson_kv_string(w, "relabel", kpart_relabel_name(b->relabel));
	json_graph(w, r);
	if (r->comp) {
		/* --roots-from largest: the search that found the component */
		kjson_key(w, "roots_component");
		kjson_begin_object(w);
		kjson_kv_uint(w, "from", r->comp_from);
		kjson_kv_uint(w, "vertices", r->comp_size);
		kjson_end_object(w);
	}
	kjson_key(w, "options");
	kjson_begin_object(w);
	kjson_kv_string(w, "direction", kbfs_dir_name(o->algo.direction));
	kjson_kv_double(w, "alpha", o->algo.alpha);
	kjson_kv_double(w, "beta", o->algo.beta);
	kjson_kv_string(w, "exchange", kbfs_xmode_names[o->algo.exchange]);
	kjson_kv_bool(w, "compress", o->algo.compress);
	kjson_kv_bool(w, "sv", o->algo.sv);
	kjson_kv_bool(w, "bu_substeps", kbfs_bu_substeps_on(&r->ctx));
	kjson_kv_bool(w, "validate", o->validate);
	kjson_kv_string(w, "validator", !o->validate ? "none" : r->eng.tree_check ? "device" : "host");
	kjson_kv_bool(w, "warmup", o->warmup);
	kjson_kv_string(w, "roots_from", o->nroots_given || o->roots_file ? "given" : kbfs_roots_from_names[o->roots_from]);
	kjson_kv_string(w, "transport", kbfs_transport_names[o->transport]);
	if (r->dev)
		r->dev->json_options(r->dev, w);
	kjson_end_object(w);
	kjson_kv_string(w, "teps_edges",
			"reference 3.0.1: input tuples with both endpoints in the root's component, "
			"self-loops excluded, duplicates counted");
	kjson_kv_double(w, "load_time", r->load_time);
	kjson_kv_double(w, "construction_time", r->construction_time);
	kjson_kv_string(w, "construction_time_from", r->construction_from);
	kjson_kv_double(w, "generation_time", r->generation_time);
	kjson_kv_string(w, "generation_time_from", r->generation_from);
}

int kbfs_write_json(kbfs_run *r)
{
	kio_out *out = kio_open_out(r->o->json, 0, 0);
	if (!out)
		return KEXIT_IO;
	kjson_writer *w = kjson_writer_new(kio_out_file(out), 1);
	kjson_begin_object(w);
	json_head(w, r);
	kjson_key(w, "roots");
	kjson_begin_array(w);
	for (size_t k = 0; k < r->nres; k++)
		json_root(w, r, k);
	kjson_end_array(w);
	kjson_key(w, "summary");
	kjson_begin_object(w);
	kjson_kv_uint(w, "nbfs", r->nres);
	kjson_kv_double(w, "harmonic_mean_teps", r->hmean);
	size_t bad = 0;
	for (size_t k = 0; k < r->nres; k++)
		bad += r->o->validate && !r->res[k].valid;
	kjson_kv_string(w, "validation", !r->o->validate ? "skipped" : bad ? "failed" : "passed");
	kjson_kv_uint(w, "failed", bad);
	kjson_kv_uint(w, "largest_reached", (uint64_t)r->largest_reached);
	kjson_kv_uint(w, "small_component_roots", r->small_roots);
	kjson_end_object(w);
	kjson_end_object(w);
	/* a failed write (a full disk) is in the stream: kio_commit says why */
	if (kjson_writer_free(w) && !ferror(kio_out_file(out)))
		KBUG("the JSON record was left unfinished");
	return kio_commit(out);
}

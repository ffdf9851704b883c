/*
 * kbfs_roots: which vertices kbfs searches from.
 *
 * Given roots (-r, --roots FILE) are input ids, resolved collectively and
 * refused when they are not vertices or have no edges.  Otherwise the
 * Graph500 sampler (kgen_roots) draws them; its acceptance test "has a
 * non-self-loop edge" (tdeg > 0) needs the owner of each candidate, so
 * candidates are resolved ahead in batches (doubling, one allreduce each)
 * and cached by value.  Every rank runs the same sampler on the same
 * answers, so all agree on the roots.  Candidates are input ids for a
 * generated graph (the reference's numbering) and internal ids for an
 * imported one (whose input ids need not be 0..nv-1).  Ids are resolved
 * by their owners (lookup) through the inverse id map of the block.
 *
 * --roots-from largest (kbfs_opts.roots_from): the same sampler, accepting
 * only vertices of one component, the one an untimed search from the vertex
 * of highest tuple degree (the lowest id of the ties) reaches.  On real
 * graphs that is the largest component in practice; when the search reaches
 * at least half the vertices with an edge it is the largest for certain, and
 * kbfs says which of the two held.  Every rank keeps a flag per owned vertex
 * (in the component or not), answered with the candidate's degree.
 */
#include "kbfs_internal.h"
#include "kgen.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "kroots.h"

#include <stdlib.h>
#include <string.h>

/* A vertex looked up by id. */
typedef struct kbfs_vref {
	int found;         /* a vertex of the graph */
	uint64_t internal; /* global internal id */
	uint64_t input;    /* the input's own id */
	uint64_t tdeg;     /* tuple degree (non-self-loop tuples) */
	int incomp;        /* in the component of --roots-from largest */
	int chosen;        /* (sample) already a root */
} kbfs_vref;

static int is_real(const kpart_block *b, uint64_t k)
{
	return b->orig ? b->orig[k] != KPART_NO_VERTEX : kpart_owned_first(&b->g, b->i, b->j) + k < b->g.nv;
}

/* Collective: resolve ids (input ids when as_input, else internal ids). */
static void lookup(kbfs_run *r, const uint64_t *ids, size_t n, int as_input, kbfs_vref *out)
{
	const kpart_block *b = r->b;
	const kpart_grid *g = &b->g;
	uint64_t first = kpart_owned_first(g, b->i, b->j);
	enum { W = 4 }; /* internal id + 1, input id, tdeg, in the component */
	uint64_t *a = kcalloc(n ? W * n : 1, 8);
	for (size_t k = 0; k < n; k++) {
		uint64_t x = ids[k], loc = UINT64_MAX;
		if (as_input && b->orig)
			loc = kidmap_find(&r->inv, x);
		else if (x < g->N && kpart_owner(g, x) == r->rank && is_real(b, x - first))
			loc = x - first;
		if (loc == UINT64_MAX)
			continue;
		a[W * k] = first + loc + 1;
		a[W * k + 1] = b->orig ? b->orig[loc] : first + loc;
		a[W * k + 2] = b->tdeg[loc];
		a[W * k + 3] = r->comp && r->comp[loc];
	}
	kcomm_allreduce_u64(r->world, a, W * n, KCOMM_MAX);
	for (size_t k = 0; k < n; k++) {
		out[k].found = a[W * k] != 0;
		out[k].internal = a[W * k] - 1;
		out[k].input = out[k].found ? a[W * k + 1] : ids[k];
		out[k].tdeg = a[W * k + 2];
		out[k].incomp = a[W * k + 3] != 0;
		out[k].chosen = 0;
	}
	free(a);
}

typedef struct rcache {
	kbfs_run *r;
	int as_input;
	uint64_t next; /* next candidate position to resolve */
	size_t cap, n;
	uint64_t *key;
	kbfs_vref *val;
	unsigned char *used;
} rcache;

static size_t slot(const rcache *c, uint64_t v)
{
	uint64_t h = v * UINT64_C(0x9E3779B97F4A7C15);
	size_t s = (size_t)(h >> 20) & (c->cap - 1);
	while (c->used[s] && c->key[s] != v)
		s = (s + 1) & (c->cap - 1);
	return s;
}

static void put(rcache *c, uint64_t v, const kbfs_vref *ref)
{
	if (2 * (c->n + 1) > c->cap) {
		rcache old = *c;
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->key = kcalloc(c->cap, sizeof *c->key);
		c->val = kcalloc(c->cap, sizeof *c->val);
		c->used = kcalloc(c->cap, 1);
		c->n = 0;
		for (size_t k = 0; k < old.cap; k++)
			if (old.used[k])
				put(c, old.key[k], &old.val[k]);
		free(old.key);
		free(old.val);
		free(old.used);
	}
	size_t s = slot(c, v);
	if (!c->used[s]) {
		c->used[s] = 1;
		c->key[s] = v;
		c->val[s] = *ref;
		c->n++;
	}
}

static const kbfs_vref *find(const rcache *c, uint64_t v)
{
	if (!c->cap)
		return NULL;
	size_t s = slot(c, v);
	return c->used[s] ? &c->val[s] : NULL;
}

/* Resolve the next batch of candidates (collective). */
static void fetch(rcache *c)
{
	const kpart_block *b = c->r->b;
	size_t k = c->next < 128 ? 128 : c->next > 65536 ? 65536 : (size_t)c->next;
	uint64_t *ids = kmalloc(k * 8);
	kbfs_vref *ref = kmalloc(k * sizeof *ref);
	for (size_t q = 0; q < k; q++)
		ids[q] = kgen_root_candidate(b->seed1, b->seed2, b->g.nv, 2 * (c->next + q));
	lookup(c->r, ids, k, c->as_input, ref);
	for (size_t q = 0; q < k; q++)
		put(c, ids[q], &ref[q]);
	c->next += k;
	free(ids);
	free(ref);
}

static const kbfs_vref *resolve(rcache *c, uint64_t v)
{
	const kbfs_vref *p;
	while (!(p = find(c, v)))
		fetch(c);
	return p;
}

static int accept(uint64_t v, void *arg)
{
	const rcache *c = arg;
	const kbfs_vref *p = resolve(arg, v);
	return p->found && p->tdeg > 0 && (!c->r->comp || p->incomp);
}

static int sample(kbfs_run *r, int nroots)
{
	rcache c = {.r = r, .as_input = r->b->scale > 0};
	uint64_t *roots = kmalloc(kmul((size_t)nroots, 8));
	int got = kgen_roots(r->b->seed1, r->b->seed2, r->b->g.nv, nroots, accept, &c, roots);
	r->res = kcalloc((size_t)(got > 0 ? got : 1), sizeof *r->res);
	int rc = 0;
	for (int k = 0; k < got; k++) {
		kbfs_vref *p = (kbfs_vref *)resolve(&c, roots[k]);
		/* the sampler gives up after 2N candidates and hands back the
		 * next ones unchecked: within a component, keep only what it
		 * accepts, once */
		if (r->comp && (!accept(roots[k], &c) || p->chosen))
			continue;
		p->chosen = 1;
		if (!p->found) {
			if (r->rank == 0)
				kerror("the root sampler found no vertex with edges");
			rc = KEXIT_DATA;
			break;
		}
		kbfs_root *rt = &r->res[r->nres++];
		rt->input = p->input;
		rt->internal = p->internal;
		rt->tdeg = p->tdeg;
	}
	free(roots);
	free(c.key);
	free(c.val);
	free(c.used);
	if (!rc && r->comp && r->nres < (size_t)nroots && r->rank == 0)
		kwarn("only %zu roots drawn from the component of %llu vertices (%d asked for)", r->nres,
		      (unsigned long long)r->comp_size, nroots);
	return rc;
}

static int given(kbfs_run *r)
{
	const kbfs_opts *o = r->o;
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	uint64_t h[2] = {0, 0};
	if (r->rank == 0) {
		cap = o->nroots_given;
		ids = kmalloc(kmul(cap ? cap : 1, 8));
		if (o->nroots_given)
			memcpy(ids, o->roots, o->nroots_given * 8);
		n = o->nroots_given;
		if (o->roots_file)
			h[0] = (uint64_t)kroots_read(o->roots_file, &ids, &n, &cap);
		h[1] = n;
	}
	kcomm_bcast(r->world, h, sizeof h, 0);
	if (h[0]) {
		free(ids);
		return (int)h[0];
	}
	n = (size_t)h[1];
	if (r->rank != 0)
		ids = kmalloc(kmul(n, 8));
	kcomm_bcast(r->world, ids, n * 8, 0);
	kbfs_vref *ref = kmalloc(kmul(n, sizeof *ref));
	lookup(r, ids, n, 1, ref);
	r->res = kcalloc(n, sizeof *r->res);
	int rc = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		if (!ref[k].found) {
			if (r->rank == 0 && !r->b->orig)
				kerror("root %llu is out of range: the graph's vertices are 0 to %llu",
				       (unsigned long long)ids[k], (unsigned long long)r->b->g.nv - 1);
			else if (r->rank == 0)
				kerror("root %llu is not a vertex of the graph", (unsigned long long)ids[k]);
			rc = KEXIT_DATA;
		} else if (!ref[k].tdeg) {
			if (r->rank == 0)
				kerror("root %llu has no edges (only self-loops or none)", (unsigned long long)ids[k]);
			rc = KEXIT_DATA;
		}
		kbfs_root *rt = &r->res[r->nres++];
		rt->input = ref[k].input;
		rt->internal = ref[k].internal;
		rt->tdeg = ref[k].tdeg;
	}
	free(ids);
	free(ref);
	return rc;
}

/* The vertex of highest tuple degree (the lowest internal id of the ties):
 * *v its internal id, *tdeg its degree (0: no vertex has an edge). */
static void highest_degree(kbfs_run *r, uint64_t *v, uint64_t *tdeg)
{
	const kpart_block *b = r->b;
	uint64_t first = kpart_owned_first(&b->g, b->i, b->j), best[2] = {0, UINT64_MAX};
	for (uint64_t k = 0; k < b->g.nb; k++)
		if (is_real(b, k) && b->tdeg[k] > best[0])
			best[0] = b->tdeg[k], best[1] = first + k;
	uint64_t top = best[0];
	kcomm_allreduce_u64(r->world, &top, 1, KCOMM_MAX);
	uint64_t id = best[0] == top ? best[1] : UINT64_MAX;
	kcomm_allreduce_u64(r->world, &id, 1, KCOMM_MIN);
	*v = id;
	*tdeg = top;
}

/* --roots-from largest: one untimed search from the vertex of highest
 * degree; r->comp flags the owned vertices it reached.  Collective. */
static int component(kbfs_run *r)
{
	const kpart_block *b = r->b;
	uint64_t v, tdeg;
	highest_degree(r, &v, &tdeg);
	if (!tdeg) {
		if (r->rank == 0)
			kerror("no vertex has an edge: no component to draw roots from");
		return KEXIT_DATA;
	}
	kbfs_vref ref;
	lookup(r, &v, 1, 0, &ref);
	kbfs_ctx *x = &r->ctx;
	x->root_label = ref.input;
	x->verbose = 0;
	int rc = kbfs_search(x, v, tdeg);
	if (rc)
		return rc;
	kbfs_search_finish(x);
	size_t nb = (size_t)b->g.nb;
	uint64_t *pred = kmalloc(kmul(nb ? nb : 1, 8));
	r->eng.to_host(&r->eng, pred, r->eng.buf(&r->eng, KBFS_PRED), nb * 8);
	r->comp = kmalloc(nb ? nb : 1);
	uint64_t with_edges = 0;
	for (size_t k = 0; k < nb; k++) {
		r->comp[k] = pred[k] != KBFS_NONE;
		with_edges += is_real(b, k) && b->tdeg[k] > 0;
	}
	free(pred);
	kcomm_allreduce_u64(r->world, &with_edges, 1, KCOMM_SUM);
	r->comp_from = ref.input;
	r->comp_size = x->reached;
	if (r->rank == 0)
		knote("roots from the component of vertex %llu (the highest degree, %llu): %llu vertices, %.1f%% of "
		      "the %llu with an edge%s",
		      (unsigned long long)ref.input, (unsigned long long)tdeg, (unsigned long long)x->reached,
		      100.0 * (double)x->reached / (double)with_edges, (unsigned long long)with_edges,
		      2 * x->reached >= with_edges ? ", so the largest" : "");
	return 0;
}

int kbfs_choose_roots(kbfs_run *r)
{
	uint64_t dup = r->b->orig ? kidmap_build(&r->inv, r->b->orig, r->b->g.nb) : KIDMAP_NONE;
	if (dup != KIDMAP_NONE)
		kerror("'%s': the rank file of rank %d lists input id %llu twice (corrupt partition)", r->dir, r->rank,
		       (unsigned long long)dup);
	int rc = kcomm_agree(r->world, dup != KIDMAP_NONE ? KEXIT_DATA : 0);
	if (rc)
		return rc;
	if (r->o->nroots_given || r->o->roots_file)
		return given(r);
	if (r->o->roots_from == KBFS_ROOTS_LARGEST) {
		int rc = component(r);
		if (rc)
			return rc;
	}
	return sample(r, r->o->nroots);
}

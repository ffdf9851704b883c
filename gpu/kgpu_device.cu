// kgpu_device: which GPU a rank uses, what it is, and how CUDA failures end the job.
//
// A rank binds once (kgpu_bind): the device is kgpu_opts.gpu or the
// node-local rank modulo the visible devices.  Binding is collective over
// the world communicator because it also counts the ranks that share each
// GPU (keyed by host and UUID), which the memory check needs.
#include "kgpu_internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbuild.h"
extern "C" {
#include "kio.h"
#include "knum.h"
}

static int bound_gpu = -1;
static int bound_ngpus;
static int bound_sharers = 1;
static u64 bound_key;
static kgpu_opts bound_opts;
static int bound_opts_set;
static cudaDeviceProp bound_prop;

extern "C" int kgpu_device_count(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
}

extern "C" int kgpu_built(void) { return 1; }
extern "C" int kgpu_nccl_built(void) { return KBUILD_NCCL; }

// The test hook name's value v as a number in [lo, hi] into *out; else a
// warning that names it and says what it wants, and false.
static bool hook_u64(const char *name, const char *v, uint64_t lo, uint64_t hi, const char *want, uint64_t *out)
{
	const char *end;
	uint64_t n = 0;
	if (knum_u64(v, &end, &n) == KNUM_OK && !*end && n >= lo && n <= hi) {
		*out = n;
		return true;
	}
	kwarn("ignoring %s='%s' (want %s)", name, v, want);
	return false;
}

extern "C" void kgpu_opts_default(kgpu_opts *o)
{
	kgpu_opts_base(o);
	uint64_t n;
	const char *v = getenv("KBFS_CUDA_TD_CHUNK");
	if (v && *v && hook_u64("KBFS_CUDA_TD_CHUNK", v, 1, (1ull << 30) - 1, "a word count from 1 to 2^30", &n))
		o->td_chunk = n;
	v = getenv("KBFS_CUDA_OFF64");
	if (v && strcmp(v, "1") == 0)
		o->off64 = 1;
	v = getenv("KBFS_CUDA_MARKS");
	if (v && strcmp(v, "0") == 0)
		o->no_marks = 1;
	v = getenv("KBFS_CUDA_TD_LOOP");
	if (v && strcmp(v, "1") == 0)
		o->td_loop = 1;
	v = getenv("KBFS_CUDA_LIST_CAP");
	if (v && hook_u64("KBFS_CUDA_LIST_CAP", v, 1, 1024, "a word count from 1 to 1024", &n))
		o->list_cap = (unsigned)n;
	v = getenv("KBFS_CUDA_TDEG_BATCH");
	if (v && hook_u64("KBFS_CUDA_TDEG_BATCH", v, 1, 8, "1, 4 or 8", &n)) {
		if (n == 1 || n == 4 || n == 8)
			o->tdeg_batch = (int)n;
		else
			kwarn("ignoring KBFS_CUDA_TDEG_BATCH='%s' (want 1, 4 or 8)", v);
	}
	v = getenv("KBFS_CUDA_PRED_FINISH");
	if (v && strcmp(v, "0") == 0)
		o->pred_finish = 0;
	v = getenv("KBFS_SYM");
	if (v && strcmp(v, "0") == 0)
		o->sym = 0;
	v = getenv("KBFS_CUDA_SPIN_US");
	if (v && hook_u64("KBFS_CUDA_SPIN_US", v, 0, 100000, "microseconds from 0 to 100000", &n))
		o->spin_us = (unsigned)n;
}

// ---- KBFS_CUDA_KTRACE: each kernel's time on the GPU ------------------------------

enum { TR_MAX = 4096, TR_NAMES = 96 };
struct ktrace {
	cudaStream_t s;
	int n, nagg;
	cudaEvent_t ev[TR_MAX];
	const char *name[TR_MAX];
	struct {
		const char *name;
		double sum, max;
		u64 cnt;
	} agg[TR_NAMES];
};
static ktrace *trace;

void kgpu_trace_begin(cudaStream_t s)
{
	const char *v = getenv("KBFS_CUDA_KTRACE");
	if (trace || !v || strcmp(v, "1"))
		return;
	trace = (ktrace *)kcalloc(1, sizeof *trace);
	trace->s = s;
	for (int k = 0; k < TR_MAX; k++)
		CUDA_CHECK(cudaEventCreate(&trace->ev[k]));
}

void kgpu_trace_launch(const char *name)
{
	if (!trace)
		return;
	if (trace->n == TR_MAX)
		kgpu_trace_flush();
	CUDA_CHECK(cudaEventRecord(trace->ev[trace->n], trace->s));
	trace->name[trace->n++] = name;
}

void kgpu_trace_flush(void)
{
	ktrace *t = trace;
	if (!t || t->n < 2)
		return;
	CUDA_CHECK(cudaEventSynchronize(t->ev[t->n - 1]));
	for (int k = 1; k < t->n; k++) {
		float ms = 0;
		CUDA_CHECK(cudaEventElapsedTime(&ms, t->ev[k - 1], t->ev[k]));
		int a = 0;
		while (a < t->nagg && strcmp(t->agg[a].name, t->name[k]))
			a++;
		if (a == t->nagg) {
			if (t->nagg == TR_NAMES)
				continue;
			t->agg[t->nagg++].name = t->name[k];
		}
		t->agg[a].sum += ms * 1e3;
		t->agg[a].max = ms * 1e3 > t->agg[a].max ? ms * 1e3 : t->agg[a].max;
		t->agg[a].cnt++;
	}
	cudaEvent_t last = t->ev[t->n - 1];
	t->ev[t->n - 1] = t->ev[0];
	t->ev[0] = last;
	t->name[0] = t->name[t->n - 1];
	t->n = 1;
}

void kgpu_trace_end(void)
{
	ktrace *t = trace;
	if (!t)
		return;
	kgpu_trace_flush();
	kcomm *w = kcomm_world();
	for (int a = 0; a < t->nagg; a++)
		fprintf(stderr, "ktrace[rank %d]: %-22s %9llu launches, mean %8.2f us, max %9.1f us, total %10.1f us\n",
			w ? kcomm_rank(w) : 0, t->agg[a].name, (ull)t->agg[a].cnt, t->agg[a].sum / (double)t->agg[a].cnt,
			t->agg[a].max, t->agg[a].sum);
	for (int k = 0; k < TR_MAX; k++)
		CUDA_CHECK(cudaEventDestroy(t->ev[k]));
	free(t);
	trace = NULL;
}

[[noreturn]] void kgpu_fail(const char *what, const char *file, int line, const char *why)
{
	kcomm *w = kcomm_world();
	kdie(KEXIT_RESOURCE, "CUDA/NCCL error on rank %d, host %s, GPU %d, at %s:%d: %s: %s", w ? kcomm_rank(w) : 0,
	     kcomm_host() ? kcomm_host() : "?", bound_gpu, file, line, what, why);
}

int kgpu_current_gpu(void) { return bound_gpu; }
int kgpu_sm_count(void) { return bound_gpu >= 0 ? bound_prop.multiProcessorCount : 1; }
u64 kgpu_gpu_key(void) { return bound_key; }
int kgpu_gpu_sharers(void) { return bound_sharers; }

void kgpu_mem_info(u64 *free_bytes, u64 *total_bytes)
{
	size_t fr = 0, tot = 0;
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	const char *v = getenv("KBFS_CUDA_FREE_BYTES");
	if (v && *v) {
		const char *end;
		uint64_t n = 0;
		if (knum_u64(v, &end, &n) == KNUM_OK && !*end && n < fr)
			fr = (size_t)n;
	}
	*free_bytes = fr;
	*total_bytes = tot;
}

int kgpu_copy_staged(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
	// KBFS_CUDA_STAGED: 0 plain copies; N > 0 buffers of N bytes (a test
	// hook: small graphs through the staged path); unset 64 MiB
	static size_t chunk = 0;
	if (!chunk) {
		const char *v = getenv("KBFS_CUDA_STAGED");
		const char *end = "";
		uint64_t n = 0;
		int got = v && *v && knum_u64(v, &end, &n) == KNUM_OK && !*end;
		chunk = got && n < ((size_t)1 << 40) ? (size_t)n : (size_t)64 << 20;
		if (!chunk)
			chunk = SIZE_MAX;
	}
	if (!bytes)
		return 0;
	if (chunk == SIZE_MAX || bytes < 2 * chunk) {
		CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
		CUDA_CHECK(cudaStreamSynchronize(s));
		return 0;
	}
	char *stage[2];
	cudaEvent_t ev[2];
	CUDA_CHECK(cudaMallocHost((void **)&stage[0], 2 * chunk));
	stage[1] = stage[0] + chunk;
	for (int k = 0; k < 2; k++)
		CUDA_CHECK(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming));
	const size_t n = (bytes + chunk - 1) / chunk;
	char *d = (char *)dst;
	const char *h = (const char *)src;
	if (kind == cudaMemcpyHostToDevice) {
		// chunk k: wait for the DMA of chunk k-2 out of its buffer, fill it, send it
		for (size_t k = 0; k < n; k++) {
			size_t a = k * chunk, m = bytes - a < chunk ? bytes - a : chunk;
			if (k >= 2)
				CUDA_CHECK(cudaEventSynchronize(ev[k & 1]));
			kio_copy_par(stage[k & 1], h + a, m);
			CUDA_CHECK(cudaMemcpyAsync(d + a, stage[k & 1], m, kind, s));
			CUDA_CHECK(cudaEventRecord(ev[k & 1], s));
		}
	} else {
		// chunk k+1's DMA runs while chunk k is copied out of its buffer
		for (size_t k = 0; k <= n; k++) {
			if (k < n) {
				size_t a = k * chunk, m = bytes - a < chunk ? bytes - a : chunk;
				CUDA_CHECK(cudaMemcpyAsync(stage[k & 1], (const char *)src + a, m, kind, s));
				CUDA_CHECK(cudaEventRecord(ev[k & 1], s));
			}
			if (k > 0) {
				size_t j = k - 1, a = j * chunk, m = bytes - a < chunk ? bytes - a : chunk;
				CUDA_CHECK(cudaEventSynchronize(ev[j & 1]));
				kio_copy_par(d + a, stage[j & 1], m);
			}
		}
	}
	CUDA_CHECK(cudaStreamSynchronize(s));
	for (int k = 0; k < 2; k++)
		CUDA_CHECK(cudaEventDestroy(ev[k]));
	CUDA_CHECK(cudaFreeHost(stage[0]));
	return 1;
}

const kgpu_opts *kgpu_bound_opts(void)
{
	if (!bound_opts_set) {
		kgpu_opts_default(&bound_opts);
		bound_opts_set = 1;
	}
	return &bound_opts;
}

static void fmt_uuid(char *buf, size_t len, const cudaUUID_t *u)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static u64 fnv1a(u64 h, const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;
	for (size_t k = 0; k < n; k++)
		h = (h ^ c[k]) * 0x100000001b3ull;
	return h;
}

extern "C" int kgpu_bind(const kgpu_opts *o)
{
	if (bound_gpu >= 0)
		return 0;
	if (o && !bound_opts_set) {
		bound_opts = *o;
		bound_opts_set = 1;
	}
	const kgpu_opts *bo = kgpu_bound_opts();
	kcomm *world = kcomm_world();
	int code = 0, dev = -1;
	int n = kgpu_device_count();
	if (n == 0) {
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
		kerror("no CUDA device visible on host %s (CUDA_VISIBLE_DEVICES=%s): use --engine cpu",
		       kcomm_host() ? kcomm_host() : "?", cvd ? cvd : "unset");
		code = KEXIT_RESOURCE;
	} else if (bo->gpu >= n) {
		kerror("--gpu %d: only %d GPU%s visible on host %s (ordinals 0 to %d)", bo->gpu, n, n == 1 ? "" : "s",
		       kcomm_host() ? kcomm_host() : "?", n - 1);
		code = KEXIT_USAGE;
	} else {
		dev = bo->gpu >= 0 ? bo->gpu : kcomm_local_rank() % n;
	}
	u64 key = 0;
	if (dev >= 0) {
		bound_gpu = dev;
		bound_ngpus = n;
		CUDA_CHECK(cudaSetDevice(dev));
		CUDA_CHECK(cudaFree(0)); // create the context now
		CUDA_CHECK(cudaGetDeviceProperties(&bound_prop, dev));
		const char *h = kcomm_host() ? kcomm_host() : "";
		key = fnv1a(fnv1a(0xcbf29ce484222325ull, h, strlen(h)), bound_prop.uuid.bytes, 16);
		bound_key = key;
	}
	// count the ranks on this GPU; also a barrier before anyone allocates
	int size = world ? kcomm_size(world) : 1;
	if (world && size > 1) {
		u64 *all = (u64 *)kcalloc((size_t)size, sizeof *all);
		kcomm_allgather(world, &key, sizeof key, all);
		int same = 0;
		for (int r = 0; r < size; r++)
			same += all[r] == key;
		free(all);
		bound_sharers = same > 0 ? same : 1;
		code = kcomm_agree(world, code);
	}
	if (code)
		return code;
	kinfo("cuda: bound GPU %d of %d (%s, compute %d.%d, %d SMs) shared by %d rank%s", dev, n, bound_prop.name,
	      bound_prop.major, bound_prop.minor, bound_prop.multiProcessorCount, bound_sharers,
	      bound_sharers == 1 ? "" : "s");
	return 0;
}

extern "C" int kgpu_device_info(kgpu_devinfo *d)
{
	memset(d, 0, sizeof *d);
	int rc = kgpu_bind(NULL);
	if (rc)
		return rc;
	kcomm *w = kcomm_world();
	d->rank = w ? kcomm_rank(w) : 0;
	snprintf(d->host, sizeof d->host, "%s", kcomm_host() ? kcomm_host() : "?");
	d->gpu = bound_gpu;
	d->ngpus = bound_ngpus;
	d->sharers = bound_sharers;
	snprintf(d->name, sizeof d->name, "%.127s", bound_prop.name);
	fmt_uuid(d->uuid, sizeof d->uuid, &bound_prop.uuid);
	snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.0", bound_prop.pciDomainID, bound_prop.pciBusID,
		 bound_prop.pciDeviceID);
	d->cc_major = bound_prop.major;
	d->cc_minor = bound_prop.minor;
	d->sms = bound_prop.multiProcessorCount;
	d->key = bound_key;
	kgpu_mem_info(&d->free_bytes, &d->total_bytes);
	return 0;
}

extern "C" void kgpu_devinfo_line(const kgpu_devinfo *d, char *buf, size_t len)
{
	snprintf(buf, len, "rank %d host %s gpu %d/%d %s %s pci %s cc %d.%d sms %d mem %.1f GiB free %.1f GiB shared by %d",
		 d->rank, d->host, d->gpu, d->ngpus, d->name, d->uuid, d->pci, d->cc_major, d->cc_minor, d->sms,
		 d->total_bytes / 1073741824.0, d->free_bytes / 1073741824.0, d->sharers);
}

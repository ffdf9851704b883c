/* kgpu_none: the GPU entry points in a build without CUDA (same symbols as the .cu files). */
#include "kgpu.h"

#include <string.h>

#include "kgenrun.h"
#include "kpart_dev.h"
#include "klog.h"

static int no_cuda(void)
{
	kerror("this build has no CUDA engine (rebuild with nvcc on the PATH, CUDA=1)");
	return KEXIT_USAGE;
}

int kgpu_device_count(void) { return 0; }
int kgpu_built(void) { return 0; }
int kgpu_nccl_built(void) { return 0; }

void kgpu_opts_default(kgpu_opts *o)
{
	kgpu_opts_base(o);
}

/* the names of enum kgpu_kernel, as kgpu_device.cu has them (an entry
 * missing here was a NULL strcmp met: kbfs --kernel edge crashed) */
static const char *const kernel_names[] = {"lb", "merrill", "vertex", "vbfs", "edge"};
_Static_assert(sizeof kernel_names / sizeof kernel_names[0] == KGPU_K_COUNT, "a name per enum kgpu_kernel");

int kgpu_kernel_parse(const char *name)
{
	for (int k = 0; k < KGPU_K_COUNT; k++)
		if (name && strcmp(name, kernel_names[k]) == 0)
			return k;
	return -1;
}

const char *kgpu_kernel_name(int kernel) { return kernel >= 0 && kernel < KGPU_K_COUNT ? kernel_names[kernel] : "?"; }

const char *kgpu_kernel_names(void) { return "lb, merrill, vertex, vbfs, edge"; }

int kgpu_engine_cuda(kbfs_engine *e, const kgpu_opts *o)
{
	(void)e;
	(void)o;
	return no_cuda();
}

int kgpu_transport_nccl(kbfs_transport *t)
{
	(void)t;
	kerror("this build has no NCCL transport (it has no CUDA engine)");
	return KEXIT_USAGE;
}

int kgpu_bind(const kgpu_opts *o)
{
	(void)o;
	return no_cuda();
}

int kgpu_device_info(kgpu_devinfo *d)
{
	memset(d, 0, sizeof *d);
	return no_cuda();
}

void kgpu_devinfo_line(const kgpu_devinfo *d, char *buf, size_t len)
{
	(void)d;
	if (len)
		snprintf(buf, len, "no CUDA engine in this build");
}

int kgpu_plan(const kpart_block *b, const kbfs_engine_conf *conf, kgpu_plan_t *plan)
{
	(void)b;
	(void)conf;
	memset(plan, 0, sizeof *plan);
	return no_cuda();
}

void kgpu_plan_print(FILE *fp, const kgpu_plan_t *plan)
{
	(void)plan;
	fprintf(fp, "no CUDA engine in this build\n");
}

int kgpu_plan_check(const kgpu_plan_t *plan, uint64_t needed_on_gpu)
{
	(void)plan;
	(void)needed_on_gpu;
	return no_cuda();
}

void kgpu_kgen_device(kgen_device *d)
{
	memset(d, 0, sizeof *d);
	d->name = "cuda";
	d->count = kgpu_device_count;
}

void kgpu_kpart_device(kpart_device *d)
{
	memset(d, 0, sizeof *d);
	d->name = "cuda";
	d->count = kgpu_device_count;
}

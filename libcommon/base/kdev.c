#include "kdev.h"
#include "klog.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *const kdev_engine_names[] = {"cpu", "cuda", "auto", NULL};

/* Why d cannot run (collective): "" when the build has it and every rank
 * sees a device, else the reason. */
static void why_not(kcomm *c, const kdev *d, char *why, size_t len)
{
	int built = d && d->built, sees = built && d->count() > 0;
	uint64_t blind = !sees; /* ranks that see no device */
	int P = kcomm_size(c);
	kcomm_allreduce_u64(c, &blind, 1, KCOMM_SUM);
	if (!built)
		snprintf(why, len, "this build has no CUDA engine");
	else if (blind && P > 1)
		snprintf(why, len, "no GPU visible on %llu of the %d ranks", (unsigned long long)blind, P);
	else if (blind)
		snprintf(why, len, "no GPU visible");
	else if (len)
		*why = 0;
}

/* --engine auto in a build without the device engine on a machine that has
 * an NVIDIA GPU (/dev/nvidia0, or the file KBFS_TEST_GPU_NODE names): rank 0
 * warns, once, that the CPU engine runs where the GPU could (a build made
 * where no GPU was visible, without CUDA=1). */
static void warn_unbuilt_gpu(kcomm *c, int built)
{
	static int said;
	const char *node = getenv("KBFS_TEST_GPU_NODE");
	if (!node || !*node)
		node = "/dev/nvidia0";
	if (built || said || kcomm_rank(c) != 0 || access(node, F_OK))
		return;
	said = 1;
	kwarn("this build has no CUDA engine, but this machine has a GPU (%s): the CPU engine runs; "
	      "rebuild with make CUDA=1",
	      node);
}

int kdev_pick(kcomm *world, const kdev *d, int want, int *on_dev, char *why, size_t len)
{
	int rank = kcomm_rank(world);
	char buf[96];
	if (!why || !len) {
		why = buf;
		len = sizeof buf;
	}
	*why = 0;
	*on_dev = 0;
	if (want == KDEV_ENGINE_CPU) { /* (the device not even asked) */
		if (rank == 0)
			kinfo("engine cpu");
		return 0;
	}
	why_not(world, d, why, len);
	if (want == KDEV_ENGINE_AUTO)
		warn_unbuilt_gpu(world, d && d->built);
	if (*why && want == KDEV_ENGINE_AUTO) {
		if (rank == 0)
			kinfo("engine cpu (%s)", why);
		return 0;
	}
	if (*why) {
		if (rank == 0)
			kerror("--engine cuda: %s: use --engine cpu", why);
		return KEXIT_RESOURCE;
	}
	*on_dev = 1;
	if (rank == 0)
		kinfo("engine %s", d->name);
	return 0;
}

int kdev_open(kdev *d, kcomm *world) { return kcomm_agree(world, d->open(d, world)); }

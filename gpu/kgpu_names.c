/*
 * kgpu_names: the names of the top-down kernels (--kernel), one table for
 * the CUDA build and the build without it (kgpu_none.c), so the two can
 * never disagree on what enum kgpu_kernel holds: the table's size is the
 * enum's, or this file does not compile.  Plain C, built either way.
 */
#include "kgpu.h"

#include <string.h>

static const char *const kernel_names[] = {"lb", "merrill", "vertex", "vbfs", "edge"};
_Static_assert(sizeof kernel_names / sizeof kernel_names[0] == KGPU_K_COUNT,
	       "a name for every enum kgpu_kernel value (kgpu.h)");

int kgpu_kernel_parse(const char *name)
{
	for (int k = 0; k < KGPU_K_COUNT; k++)
		if (name && strcmp(name, kernel_names[k]) == 0)
			return k;
	return -1;
}

const char *kgpu_kernel_name(int kernel)
{
	return kernel >= 0 && kernel < KGPU_K_COUNT ? kernel_names[kernel] : "?";
}

const char *kgpu_kernel_names(void)
{
	static char list[16 * KGPU_K_COUNT];
	if (!*list)
		for (int k = 0; k < KGPU_K_COUNT; k++) {
			if (k)
				strcat(list, ", ");
			strcat(list, kernel_names[k]);
		}
	return list;
}

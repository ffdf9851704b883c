#define _POSIX_C_SOURCE 200809L
#include "kmem.h"
#include "klog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* A block of 64 MiB or more asks for transparent huge pages (where the
 * kernel gives them on request, its "madvise" mode): the first write to
 * it then faults once per 2 MiB instead of once per 4 KiB -- the partition
 * arrays of a large graph are gigabytes of fresh memory, written once.
 * KBFS_HUGEPAGES=0 leaves the kernel's default (the ablation). */
static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t hp = (uintptr_t)2 << 20;
	if (n < 32 * hp)
		return;
	const char *v = getenv("KBFS_HUGEPAGES");
	if (v && !strcmp(v, "0"))
		return;
	uintptr_t a = ((uintptr_t)p + hp - 1) & ~(hp - 1), b = ((uintptr_t)p + n) & ~(hp - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
#else
	(void)p;
	(void)n;
#endif
}

void *kmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu bytes", n);
	advise_huge(p, n);
	return p;
}

void *kcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *krealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		kdie(KEXIT_RESOURCE, "out of memory allocating %zu bytes", n);
	return q;
}

char *kstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = kmalloc(n);
	memcpy(d, s, n);
	return d;
}

size_t kmul(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m)
		kdie(KEXIT_RESOURCE, "size overflow: %zu x %zu", n, m);
	return n * m;
}

int kmem_populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	const uintptr_t pg = 4096, piece = (uintptr_t)64 << 20;
	uintptr_t a = (uintptr_t)p & ~(pg - 1), b = (uintptr_t)p + n;
	if (!p || b <= a)
		return 0;
	int bad = 0;
	uintptr_t np = (b - a + piece - 1) / piece;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : bad)
	for (uintptr_t k = 0; k < np; k++) {
		uintptr_t s = a + k * piece, e = s + piece < b ? s + piece : b;
		bad |= madvise((void *)s, e - s, MADV_POPULATE_WRITE) != 0;
	}
	return bad ? -1 : 0;
#else
	(void)p;
	(void)n;
	return 0;
#endif
}

uint64_t kmem_available(void)
{
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

void kmem_faults(uint64_t *faults, uint64_t *huge_bytes)
{
	struct rusage ru;
	*faults = getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	*huge_bytes = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return;
	char line[256];
	unsigned long long kb;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
			*huge_bytes = (uint64_t)kb * 1024;
			break;
		}
	fclose(f);
}

/*
 * kmem: checked allocation for every kbfs program.
 *
 * Owns the allocation contract: an allocation that fails ends the program
 * with KEXIT_RESOURCE and one line naming the size (kdie, klog.h), so no
 * caller checks for NULL; a size computed as a product goes through kmul,
 * which dies the same way on overflow.  Owns the huge-page policy too: a
 * block of 64 MiB or more asks for transparent huge pages (the partition
 * arrays are gigabytes of fresh memory, written once); KBFS_HUGEPAGES=0
 * leaves the kernel's default (kbfs(7) ENVIRONMENT).
 */
#ifndef KMEM_H
#define KMEM_H

#include <stddef.h>
#include <stdint.h>

void *kmalloc(size_t n);
void *kcalloc(size_t n, size_t size);
void *krealloc(void *p, size_t n);
char *kstrdup(const char *s);
/* n*m, dying on size_t overflow */
size_t kmul(size_t n, size_t m);
/* Map the pages of [p, p + n) writable now, without writing them
 * (MADV_POPULATE_WRITE, where the kernel has it; else nothing), on all
 * threads in pieces of 64 MiB: memory that others will write at random
 * (a shared window) then takes no fault a page.  Returns 0, or -1 when
 * the kernel refused (advice only: nothing changes). */
int kmem_populate(void *p, size_t n);
/* This host's available memory in bytes (sysconf's free pages), 0 when
 * unknown. */
uint64_t kmem_available(void);
/* This process's page faults so far (minor and major, getrusage) and the
 * bytes of its anonymous memory in transparent huge pages now
 * (/proc/self/smaps_rollup; 0 when the kernel does not say): how fresh
 * memory was mapped, for -v lines. */
void kmem_faults(uint64_t *faults, uint64_t *huge_bytes);

#endif

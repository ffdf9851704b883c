/*
 * kdev: what every device a program can run on has in common, and the one
 * choice between it and the CPU (--engine cpu|cuda|auto).
 *
 * A device is reached only through a table of functions its own code
 * fills in (gpu/ for CUDA; the unit tests fill theirs with host loops), so
 * libcommon never calls into gpu/.  Each program has its table: kbfs's
 * kbfs_device (cmd/kbfs/kbfs_run.h), kgen's kgen_device (kgen_dev.h) and
 * kpart's kpart_device (kpart_dev.h).  Each begins with a kdev, the part
 * they share: the name, whether the build has the device, how many this
 * rank sees, and open/close.  open is collective: every rank binds its
 * device (the same one for every program, kgpu_bind); a failure is agreed
 * on, so every rank returns the same code.  close gives back what open
 * and the table's other calls took.
 *
 * kdev_pick is the engine choice of all three programs: the same answer
 * on every rank, the same messages.
 */
#ifndef KDEV_H
#define KDEV_H

#include <stddef.h>

#include "kcomm.h"

/* --engine */
enum kdev_engine { KDEV_ENGINE_CPU, KDEV_ENGINE_CUDA, KDEV_ENGINE_AUTO };
/* "cpu", "cuda", "auto", NULL: by enum kdev_engine */
extern const char *const kdev_engine_names[];

typedef struct kdev kdev;
struct kdev {
	const char *name; /* "cuda" */
	int built;        /* this build has the device */
	void *impl;       /* the device's state */
	/* Devices this rank sees (0: none, or not built). */
	int (*count)(void);
	/* Collective: bind this rank's device.  0 or a KEXIT code after
	 * kerror() on the rank that failed (then nothing stays open). */
	int (*open)(kdev *d, kcomm *world);
	void (*close)(kdev *d);
};

/* A kdev of these parts (impl NULL), for the code that fills a table. */
static inline kdev kdev_make(const char *name, int built, int (*count)(void), int (*open)(kdev *, kcomm *),
			     void (*close)(kdev *))
{
	kdev d = {name, built, NULL, count, open, close};
	return d;
}

/* The engine for --engine want (enum kdev_engine), collective, the same on
 * every rank: *on_dev = 1 for the device d (NULL: none handed in), 0 for
 * the CPU; why (len bytes; may be NULL) gets the reason d cannot run ("this
 * build has no CUDA engine", "no GPU visible on 2 of the 4 ranks"), "" when
 * it can or was not asked (want cpu).  auto takes the device when the build
 * has it and every rank sees one.  Rank 0 names the choice with kinfo().
 * 0, or KEXIT_RESOURCE after kerror() on rank 0 (want cuda, and d cannot
 * run).  Opens nothing: the caller opens d (kdev_open) when it is ready. */
int kdev_pick(kcomm *world, const kdev *d, int want, int *on_dev, char *why, size_t len);
/* d->open, the code agreed on over world. */
int kdev_open(kdev *d, kcomm *world);

#endif

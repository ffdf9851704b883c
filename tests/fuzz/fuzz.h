/*
 * fuzz.h: what the libFuzzer harnesses of tests/fuzz share.
 *
 * Each harness hands the fuzzer's bytes to one reader of untrusted input
 * exactly as a program would: as a file (a memfd, named /proc/self/fd/N,
 * which the readers see as a regular file), and where the reader treats
 * streams differently, also as a pipe.  Inputs are mostly refused by a
 * checksum, so harnesses for checksummed formats run each input a second
 * time with its checksums recomputed (fuzz_fix_*), to reach what lies
 * behind them.  A reader that crashes, hangs, leaks, exits (kdie, out of
 * memory) or trips a sanitizer is a finding; refusing with an error is not.
 * Built by `make fuzz-build` (clang, -fsanitize=fuzzer,address,undefined).
 */
#ifndef KBFS_FUZZ_H
#define KBFS_FUZZ_H

#include "kfs.h"
#include "kio.h"
#include "klog.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The bytes as a regular file: its path in path (the fd is returned, to
 * close when done). */
static inline int fuzz_file(const uint8_t *data, size_t n, char *path, size_t len)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	for (size_t at = 0; at < n;) {
		ssize_t w = write(fd, data + at, n - at);
		if (w <= 0)
			abort();
		at += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* The bytes as a pipe holding them all (at most 64 KiB, the pipe's
 * buffer), its write end closed: the reader meets a stream of unknown
 * size.  -1 when the bytes do not fit. */
static inline int fuzz_pipe(const uint8_t *data, size_t n, char *path, size_t len)
{
	int p[2];
	if (n > 65536 || pipe(p))
		return -1;
	if (n && write(p[1], data, n) != (ssize_t)n) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	snprintf(path, len, "/proc/self/fd/%d", p[0]);
	return p[0];
}

/* A private copy of the bytes, for the checksum fix-ups. */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		abort();
	memcpy(b, data, n);
	return b;
}

/* A scratch directory for readers of directories (a partition), removed
 * with what the harness wrote in it when the fuzzer exits (atexit: libFuzzer
 * ends a run with exit(); a crash leaves it, beside the crash's input). */
static char fuzz_dir_path[64];

static inline void fuzz_dir_remove(void) { (void)kfs_rmtree(fuzz_dir_path); }

static inline const char *fuzz_dir(void)
{
	if (!fuzz_dir_path[0]) {
		snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/kbfs-fuzz.XXXXXX",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
		if (!mkdtemp(fuzz_dir_path))
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir_path;
}

static inline void fuzz_write(const char *path, const uint8_t *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f))
		abort();
}

/* /dev/null as a stream, for what the programs print. */
static inline FILE *fuzz_null(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	return f;
}

/* LLVMFuzzerInitialize: the program name in messages (the messages go to
 * stderr, which `make fuzz` closes: -close_fd_mask=2). */
#define FUZZ_INIT(name) \
	int LLVMFuzzerInitialize(int *argc, char ***argv) \
	{ \
		(void)argc; \
		(void)argv; \
		klog_init(name); \
		klog_set_quiet(1); \
		return 0; \
	}

#endif

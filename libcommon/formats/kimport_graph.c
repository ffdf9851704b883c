/*
 * kimport_graph: any graph file a kbfs program reads, a kbfs edge file or
 * one of kimport_read's formats, named or on standard input.  See kimport.h.
 */
#include "kedge.h"
#include "kimport.h"
#include "klog.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The first bytes of fd (standard input, or a pipe given by name), not
 * consumed: pread on a regular file, tee(2) on a pipe (it copies what the
 * pipe holds without taking it); anything else (a terminal, a socket) is
 * taken for text. */
static size_t fd_head(int fd, unsigned char *h, size_t n)
{
	struct stat st;
	if (fstat(fd, &st))
		return 0;
	if (S_ISREG(st.st_mode)) {
		off_t off = lseek(fd, 0, SEEK_CUR);
		ssize_t got = off < 0 ? -1 : pread(fd, h, n, off);
		return got > 0 ? (size_t)got : 0;
	}
	if (!S_ISFIFO(st.st_mode))
		return 0;
	int p[2];
	if (pipe(p))
		return 0;
	size_t got = 0;
	/* the writer may not have written n bytes yet: look again for a second */
	for (int tries = 0; got < n && tries < 1000; tries++) {
		ssize_t t = tee(fd, p[1], n, 0);
		if (t <= 0)
			break; /* end of input, or tee not possible */
		ssize_t r = read(p[0], h, (size_t)t);
		got = r > 0 ? (size_t)r : 0;
		if (got < n)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	close(p[0]);
	close(p[1]);
	return got;
}

/* 1 when path ("-": standard input) starts with the kedge magic.  A pipe
 * named by path (<(zcat g.kg.gz), a fifo) is looked at through *held, a
 * descriptor kept open until the reader has opened the path again: the
 * pipe keeps a reader all along, and what was looked at is still there. */
static int is_kedge(const char *path, int *held)
{
	unsigned char head[KEDGE_MAGIC_LEN];
	struct stat st;
	if (!strcmp(path, "-"))
		return kedge_is_magic(head, fd_head(STDIN_FILENO, head, sizeof head));
	if (!stat(path, &st) && S_ISFIFO(st.st_mode)) {
		*held = open(path, O_RDONLY | O_CLOEXEC);
		return *held >= 0 && kedge_is_magic(head, fd_head(*held, head, sizeof head));
	}
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0; /* kimport_read says why */
	size_t got = fread(head, 1, sizeof head, f);
	fclose(f);
	return kedge_is_magic(head, got);
}

int kimport_graph(const char *path, int format, int skip_bad, kimport_result *res, kedge_info *info)
{
	kedge_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof *info);
	memset(res, 0, sizeof *res);
	int held = -1;
	if (format != KIMPORT_KEDGE && (format != KIMPORT_AUTO || !is_kedge(path, &held))) {
		int rc = kimport_read(path, format, skip_bad, res);
		if (held >= 0)
			close(held);
		if (info == &dummy)
			kedge_info_free(info);
		return rc;
	}
	int rc = kedge_load(path, info, &res->uv, &res->map);
	if (held >= 0)
		close(held);
	if (rc)
		return rc;
	res->format = KIMPORT_KEDGE;
	res->nv = info->nv;
	res->ne = info->ne;
	for (uint64_t k = 0; k < res->ne; k++)
		res->selfloops += res->uv[2 * k] == res->uv[2 * k + 1];
	if (info == &dummy)
		kedge_info_free(info);
	return 0;
}

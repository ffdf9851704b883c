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

/* The first bytes of standard input, not consumed: pread on a regular file,
 * tee(2) on a pipe (it copies what the pipe holds without taking it);
 * anything else (a terminal, a socket) is taken for text. */
static size_t stdin_head(unsigned char *h, size_t n)
{
	struct stat st;
	if (fstat(STDIN_FILENO, &st))
		return 0;
	if (S_ISREG(st.st_mode)) {
		off_t off = lseek(STDIN_FILENO, 0, SEEK_CUR);
		ssize_t got = off < 0 ? -1 : pread(STDIN_FILENO, h, n, off);
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
		ssize_t t = tee(STDIN_FILENO, p[1], n, 0);
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

/* 1 when path ("-": standard input) starts with the kedge magic */
static int is_kedge(const char *path)
{
	unsigned char head[KEDGE_MAGIC_LEN];
	if (!strcmp(path, "-"))
		return kedge_is_magic(head, stdin_head(head, sizeof head));
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
	if (format != KIMPORT_KEDGE && (format != KIMPORT_AUTO || !is_kedge(path))) {
		int rc = kimport_read(path, format, skip_bad, res);
		if (info == &dummy)
			kedge_info_free(info);
		return rc;
	}
	int rc = kedge_load(path, info, &res->uv, &res->map);
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

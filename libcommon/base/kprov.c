#include "kprov.h"
#include "knum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

extern const char kbfs_commit[]; /* build/kcommit.c, written by make */

const char *kprov_commit(void) { return kbfs_commit[0] ? kbfs_commit : "unknown"; }

void kprov_cpu_model(char *buf, size_t len)
{
	/* x86 says "model name"; some ARM and other kernels "Model" or "cpu model" */
	static const char *const keys[] = {"model name", "Model", "cpu model", NULL};
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	int best = 99; /* the index of the key found, earlier keys preferred */
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *end = colon;
		while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		*end = 0;
		const char *v = colon + 1 + strspn(colon + 1, " \t");
		size_t n = strcspn(v, "\n");
		for (int k = 0; keys[k] && k < best; k++)
			if (!strcmp(line, keys[k]) && n) {
				snprintf(buf, len, "%.*s", (int)n, v);
				best = k;
			}
	}
	fclose(f);
}

void kprov_utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "unknown");
}

int kprov_set_generation_time(const char *path, double seconds)
{
	char v[64];
	int n = snprintf(v, sizeof v, "%.6f", seconds);
	if (!strcmp(path, "-"))
		return fsetxattr(STDOUT_FILENO, KPROV_GEN_XATTR, v, (size_t)n, 0) ? -1 : 0;
	return setxattr(path, KPROV_GEN_XATTR, v, (size_t)n, 0) ? -1 : 0;
}

int kprov_get_generation_time(const char *path, double *seconds)
{
	char v[64];
	ssize_t n = !strcmp(path, "-") ? fgetxattr(STDIN_FILENO, KPROV_GEN_XATTR, v, sizeof v - 1)
				       : getxattr(path, KPROV_GEN_XATTR, v, sizeof v - 1);
	if (n <= 0)
		return -1;
	v[n] = 0;
	const char *end;
	double s;
	if (knum_double(v, &end, &s) != KNUM_OK || *end || !(s >= 0) || s > 1e12)
		return -1;
	*seconds = s;
	return 0;
}

char *kprov_escape(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[5] = {(char)*p, 0};
		if (*p == '\\' || *p == '\n' || *p == '\r') {
			e[0] = '\\';
			e[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : '\\';
			e[2] = 0;
		} else if (*p < 0x20 || *p == 0x7f) {
			e[0] = '\\';
			e[1] = 'x';
			e[2] = hex[*p >> 4];
			e[3] = hex[*p & 15];
			e[4] = 0;
		}
		size_t l = strlen(e);
		if (n + l >= cap)
			break;
		memcpy(out + n, e, l);
		n += l;
	}
	if (cap)
		out[n] = 0;
	return out;
}

#include "kmagic.h"
#include "kedge.h"
#include "kio.h"
#include "klog.h"
#include "kpart.h"
#include "kpred.h"

#include <string.h>
#include <sys/stat.h>

static int is_space(int c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

int kmagic_kind(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	if (kedge_is_magic(buf, n))
		return KMAGIC_KEDGE;
	if (kpred_is_magic(buf, n))
		return KMAGIC_KPRED;
	if (n >= KPART_MAGIC_LEN && !memcmp(buf, kpart_magic, KPART_MAGIC_LEN))
		return KMAGIC_KPART;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return KMAGIC_GZIP;
	if (memchr(buf, 0, n))
		return KMAGIC_BINARY;
	size_t k = 0;
	while (k < n && is_space(b[k]))
		k++;
	return k < n && b[k] == '{' ? KMAGIC_JSON : KMAGIC_OTHER;
}

int kmagic_detect(const char *path, int *kind)
{
	*kind = KMAGIC_OTHER;
	struct stat st;
	if (!strcmp(path, "-"))
		return 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		*kind = KMAGIC_DIR;
		return 0;
	}
	/* a pipe (<(...), a fifo) cannot be looked at without being
	 * consumed, as standard input: not read (nor waited on) here */
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return 0;
	kio_in *in = kio_open_in(path, 0);
	if (!in)
		return KEXIT_IO;
	unsigned char buf[KMAGIC_WINDOW];
	size_t n = 0, got;
	int rc = 0;
	while (n < sizeof buf && !(rc = kio_read(in, buf + n, sizeof buf - n, &got)) && got)
		n += got;
	if (!rc) {
		*kind = kmagic_kind(buf, n);
		/* a window of nothing but white space: a run record may start later */
		size_t k = 0;
		while (k < n && is_space(buf[k]))
			k++;
		while (k == n && n == sizeof buf && !kio_read(in, buf, sizeof buf, &n) && n) {
			k = 0;
			while (k < n && is_space(buf[k]))
				k++;
			if (k < n)
				*kind = buf[k] == '{' ? KMAGIC_JSON : KMAGIC_OTHER;
		}
	}
	kio_close_in(in);
	return rc;
}

const char *kmagic_binary(const void *buf, size_t n)
{
	if (n > KMAGIC_WINDOW)
		n = KMAGIC_WINDOW;
	switch (kmagic_kind(buf, n)) {
	case KMAGIC_KEDGE: return "a kbfs edge file";
	case KMAGIC_KPRED: return "a kbfs predecessor file";
	case KMAGIC_KPART: return "a kpart rank file";
	}
	return memchr(buf, 0, n) ? "binary data" : NULL;
}

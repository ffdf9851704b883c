/* kroots: the roots file (kroots.h). */
#include "kroots.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"
#include "knum.h"

#include <string.h>

int kroots_read(const char *path, uint64_t **ids, size_t *n, size_t *cap)
{
	kio_in *in = kio_open_in(path, KIO_GZIP);
	if (!in)
		return KEXIT_IO;
	int rc = 0;
	size_t len, line = 0, first = *n;
	char *s;
	/* (kio_getline refuses a NUL byte: "1<NUL>junk" is not the root 1) */
	while ((s = kio_getline(in, &len, &rc))) {
		line++;
		while (*s == ' ' || *s == '\t')
			s++;
		size_t l = strlen(s);
		while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
			s[--l] = 0;
		if (!*s || *s == '#')
			continue;
		uint64_t v;
		const char *end;
		if (knum_u64(s, &end, &v) != KNUM_OK || *end) {
			kerror("%s:%zu: '%s' is not a vertex id", path, line, s);
			rc = KEXIT_DATA;
			break;
		}
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*ids = krealloc(*ids, kmul(*cap, 8));
		}
		(*ids)[(*n)++] = v;
	}
	if (!rc && *n == first) {
		kerror("'%s': no roots in the file", path);
		rc = KEXIT_DATA;
	}
	kio_close_in(in);
	return rc;
}

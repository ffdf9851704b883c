#include "ksink.h"
#include "kio.h"
#include "klog.h"
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

struct ksink {
	int format;
	kedge_writer *ew;
	kio_out *out;
	const uint64_t *map;
	unsigned char *buf;
	size_t cap;
};

int ksink_open(const char *path, int format, int force, int compress, const kedge_info *info,
	       const uint64_t *map, ksink **sp)
{
	ksink *s = kcalloc(1, sizeof *s);
	s->format = format;
	s->map = map;
	int rc;
	if (format == KFMT_KEDGE) {
		rc = kedge_create(path, force, info, map, compress, &s->ew);
	} else {
		s->out = kio_open_out(path, format != KFMT_TEXT, force);
		rc = s->out ? 0 : KEXIT_IO;
	}
	if (rc) {
		free(s);
		return rc;
	}
	*sp = s;
	return 0;
}

int ksink_write(ksink *s, const uint64_t *uv, size_t n)
{
	if (s->format == KFMT_KEDGE)
		return kedge_write(s->ew, uv, n);
	const size_t per = 1 << 16;
	if (!s->buf) {
		s->cap = per * 42;
		s->buf = kmalloc(s->cap);
	}
	while (n) {
		size_t k = n < per ? n : per, len;
		if (s->format == KFMT_TEXT)
			len = kfmt_text((char *)s->buf, uv, k, s->map);
		else if (s->format == KFMT_G500)
			len = kfmt_g500(s->buf, uv, k);
		else
			len = kfmt_g500v2(s->buf, uv, k);
		int rc = kio_write(s->out, s->buf, len);
		if (rc)
			return rc;
		uv += 2 * k;
		n -= k;
	}
	return 0;
}

int ksink_finish(ksink *s)
{
	int rc = s->format == KFMT_KEDGE ? kedge_finish(s->ew) : kio_commit(s->out);
	free(s->buf);
	free(s);
	return rc;
}

void ksink_abandon(ksink *s)
{
	if (!s)
		return;
	if (s->format == KFMT_KEDGE)
		kedge_abandon(s->ew);
	else
		kio_abort(s->out);
	free(s->buf);
	free(s);
}

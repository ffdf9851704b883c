#include "kfmt.h"
#include "kio.h"

const char *const kfmt_names[] = {"kedge", "text", "g500", "g500v2", "mtx", "sg", NULL};

size_t kfmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t k = 0; k < n; k++)
		p[k] = tmp[n - 1 - k];
	return n;
}

size_t kfmt_text(char *buf, const uint64_t *uv, size_t n, const uint64_t *map)
{
	char *p = buf;
	for (size_t k = 0; k < n; k++) {
		uint64_t u = uv[2 * k], v = uv[2 * k + 1];
		if (map) {
			u = map[u];
			v = map[v];
		}
		p += kfmt_u64(p, u);
		*p++ = ' ';
		p += kfmt_u64(p, v);
		*p++ = '\n';
	}
	return (size_t)(p - buf);
}

size_t kfmt_mtx(char *buf, const uint64_t *uv, size_t n)
{
	char *p = buf;
	for (size_t k = 0; k < n; k++) {
		uint64_t u = uv[2 * k], v = uv[2 * k + 1];
		p += kfmt_u64(p, (u > v ? u : v) + 1);
		*p++ = ' ';
		p += kfmt_u64(p, (u > v ? v : u) + 1);
		*p++ = '\n';
	}
	return (size_t)(p - buf);
}

size_t kfmt_g500(unsigned char *buf, const uint64_t *uv, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t u = uv[2 * k], v = uv[2 * k + 1];
		kio_put32(buf + 12 * k, (uint32_t)u);
		kio_put32(buf + 12 * k + 4, (uint32_t)v);
		kio_put32(buf + 12 * k + 8, (uint32_t)((u >> 32) & 0xFFFF) | (uint32_t)((v >> 32) & 0xFFFF) << 16);
	}
	return 12 * n;
}

size_t kfmt_g500v2(unsigned char *buf, const uint64_t *uv, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		kio_put64(buf + 16 * k, uv[2 * k]);
		kio_put64(buf + 16 * k + 8, uv[2 * k + 1]);
	}
	return 16 * n;
}

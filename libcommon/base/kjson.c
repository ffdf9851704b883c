#include "kjson.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "klog.h"
#include "kmem.h"
#include "kutf8.h"

/* ======================================================================
 * Writer
 * ====================================================================== */

struct frame {
	char kind;      /* 'o' object, 'a' array */
	int have_key;   /* object: a key was written, its value is due */
	size_t count;   /* members so far */
};

struct kjson_writer {
	FILE *fp;
	int pretty;
	struct frame *st;
	size_t depth, cap;
};

kjson_writer *kjson_writer_new(FILE *fp, int pretty)
{
	kjson_writer *w = kcalloc(1, sizeof *w);
	w->fp = fp;
	w->pretty = pretty;
	return w;
}

int kjson_writer_free(kjson_writer *w)
{
	if (!w)
		return 0;
	int bad = w->depth != 0 || ferror(w->fp);
	free(w->st);
	free(w);
	return bad ? -1 : 0;
}

static void newline_indent(kjson_writer *w, size_t level)
{
	if (!w->pretty)
		return;
	fputc('\n', w->fp);
	for (size_t i = 0; i < level; i++)
		fputs("  ", w->fp);
}

void kjson_put_escaped(FILE *fp, const char *s, size_t n, const char *(*esc)(unsigned c, char tmp[8]),
		       const char *bad)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[8];
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		if (c < 0x80) {
			const char *e = esc(c, tmp);
			if (e)
				fputs(e, fp);
			else
				fputc((int)c, fp);
			i++;
			continue;
		}
		size_t len = kutf8_seq(p + i, n - i);
		if (len) {
			fwrite(p + i, 1, len, fp);
			i += len;
		} else {
			fputs(bad, fp);
			i++;
		}
	}
}

static const char *json_esc(unsigned c, char tmp[8])
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\b': return "\\b";
	case '\f': return "\\f";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	}
	if (c >= 0x20 && c != 0x7f)
		return NULL;
	snprintf(tmp, 8, "\\u%04x", c);
	return tmp;
}

static void write_escaped(FILE *fp, const char *s, size_t n)
{
	fputc('"', fp);
	kjson_put_escaped(fp, s, n, json_esc, "\\ufffd");
	fputc('"', fp);
}

/* Called before every value: commas, indentation, key bookkeeping. */
static void before_value(kjson_writer *w)
{
	if (w->depth == 0)
		return;
	struct frame *f = &w->st[w->depth - 1];
	if (f->kind == 'o') {
		if (!f->have_key)
			KBUG("kjson: value written in an object without a key");
		f->have_key = 0;
		return;
	}
	if (f->count++)
		fputc(',', w->fp);
	newline_indent(w, w->depth);
}

/* Called after every complete value: a finished document ends its line. */
static void after_value(kjson_writer *w)
{
	if (w->depth == 0)
		fputc('\n', w->fp);
}

static void begin(kjson_writer *w, char kind, int open)
{
	before_value(w);
	fputc(open, w->fp);
	if (w->depth == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->st = krealloc(w->st, kmul(w->cap, sizeof *w->st));
	}
	w->st[w->depth++] = (struct frame){ .kind = kind };
}

static void end(kjson_writer *w, char kind, int close)
{
	if (w->depth == 0 || w->st[w->depth - 1].kind != kind)
		KBUG("kjson: end of %s without a matching begin", kind == 'o' ? "object" : "array");
	struct frame *f = &w->st[w->depth - 1];
	if (f->have_key)
		KBUG("kjson: object ended after a key without its value");
	size_t count = f->count;
	w->depth--;
	if (count)
		newline_indent(w, w->depth);
	fputc(close, w->fp);
	after_value(w);
}

void kjson_begin_object(kjson_writer *w) { begin(w, 'o', '{'); }
void kjson_end_object(kjson_writer *w) { end(w, 'o', '}'); }
void kjson_begin_array(kjson_writer *w) { begin(w, 'a', '['); }
void kjson_end_array(kjson_writer *w) { end(w, 'a', ']'); }

void kjson_key(kjson_writer *w, const char *key)
{
	if (w->depth == 0 || w->st[w->depth - 1].kind != 'o')
		KBUG("kjson: key \"%s\" outside an object", key);
	struct frame *f = &w->st[w->depth - 1];
	if (f->have_key)
		KBUG("kjson: key \"%s\" follows a key", key);
	if (f->count++)
		fputc(',', w->fp);
	newline_indent(w, w->depth);
	write_escaped(w->fp, key, strlen(key));
	fputs(w->pretty ? ": " : ":", w->fp);
	f->have_key = 1;
}

void kjson_null(kjson_writer *w)
{
	before_value(w);
	fputs("null", w->fp);
	after_value(w);
}

void kjson_bool(kjson_writer *w, int v)
{
	before_value(w);
	fputs(v ? "true" : "false", w->fp);
	after_value(w);
}

void kjson_int(kjson_writer *w, int64_t v)
{
	before_value(w);
	fprintf(w->fp, "%" PRId64, v);
	after_value(w);
}

void kjson_uint(kjson_writer *w, uint64_t v)
{
	before_value(w);
	fprintf(w->fp, "%" PRIu64, v);
	after_value(w);
}

void kjson_double(kjson_writer *w, double v)
{
	before_value(w);
	if (isfinite(v))
		fprintf(w->fp, "%.17g", v);
	else
		fputs("null", w->fp);
	after_value(w);
}

void kjson_string_n(kjson_writer *w, const char *s, size_t len)
{
	before_value(w);
	write_escaped(w->fp, s, len);
	after_value(w);
}

void kjson_string(kjson_writer *w, const char *s)
{
	if (!s)
		kjson_null(w);
	else
		kjson_string_n(w, s, strlen(s));
}

void kjson_kv_int(kjson_writer *w, const char *key, int64_t v) { kjson_key(w, key); kjson_int(w, v); }
void kjson_kv_uint(kjson_writer *w, const char *key, uint64_t v) { kjson_key(w, key); kjson_uint(w, v); }
void kjson_kv_double(kjson_writer *w, const char *key, double v) { kjson_key(w, key); kjson_double(w, v); }
void kjson_kv_string(kjson_writer *w, const char *key, const char *s) { kjson_key(w, key); kjson_string(w, s); }
void kjson_kv_bool(kjson_writer *w, const char *key, int v) { kjson_key(w, key); kjson_bool(w, v); }

void kjson_kv_double_array(kjson_writer *w, const char *key, const double *x, size_t n)
{
	kjson_key(w, key);
	kjson_begin_array(w);
	for (size_t i = 0; i < n; i++)
		kjson_double(w, x[i]);
	kjson_end_array(w);
}

/* ======================================================================
 * Parser
 * ====================================================================== */

struct parser {
	const char *s;
	size_t n, pos;
	int depth;
	int failed;
	char *err;
	size_t errlen;
};

static void fail(struct parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct parser *p, size_t at, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = 1;
	if (!p->err || p->errlen == 0)
		return;
	size_t line = 1, col = 1;
	for (size_t i = 0; i < at && i < p->n; i++) {
		if (p->s[i] == '\n')
			line++, col = 1;
		else
			col++;
	}
	char why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "line %zu column %zu: %s", line, col, why);
}

/* "'x'" for a printable byte, "byte 0xNN" otherwise */
static const char *describe_byte(unsigned char c, char *buf, size_t len)
{
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
	return buf;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->n) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static kjson_value *new_value(kjson_type t)
{
	kjson_value *v = kcalloc(1, sizeof *v);
	v->type = t;
	return v;
}

static kjson_value *parse_value(struct parser *p);

static int hex4(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

struct buf {
	char *d;
	size_t len, cap;
};

static void buf_put(struct buf *b, const void *src, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (cap < b->len + n + 1)
			cap = kmul(cap, 2);
		b->d = krealloc(b->d, cap);
		b->cap = cap;
	}
	memcpy(b->d + b->len, src, n);
	b->len += n;
	b->d[b->len] = 0;
}

static void buf_put_cp(struct buf *b, uint32_t cp)
{
	unsigned char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | (cp >> 6));
		u[1] = (unsigned char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | (cp >> 12));
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | (cp >> 18));
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f)), n = 4;
	}
	buf_put(b, u, n);
}

/* At an opening quote; returns the decoded string (kmalloc'd) or NULL. */
static char *parse_string_raw(struct parser *p, size_t *lenp)
{
	struct buf b = { 0 };
	size_t start = p->pos++;
	buf_put(&b, "", 0);
	for (;;) {
		if (p->pos >= p->n) {
			fail(p, start, "unterminated string");
			goto bad;
		}
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			fail(p, p->pos, "control character 0x%02x in string (must be escaped)", c);
			goto bad;
		}
		if (c >= 0x80) {
			size_t len = kutf8_seq((const unsigned char *)p->s + p->pos, p->n - p->pos);
			if (!len) {
				fail(p, p->pos, "invalid UTF-8 in string");
				goto bad;
			}
			buf_put(&b, p->s + p->pos, len);
			p->pos += len;
			continue;
		}
		if (c != '\\') {
			buf_put(&b, &p->s[p->pos], 1);
			p->pos++;
			continue;
		}
		/* escape */
		size_t esc = p->pos;
		if (p->pos + 1 >= p->n) {
			fail(p, start, "unterminated string");
			goto bad;
		}
		char e = p->s[p->pos + 1];
		p->pos += 2;
		const char *simple = NULL;
		switch (e) {
		case '"': simple = "\""; break;
		case '\\': simple = "\\"; break;
		case '/': simple = "/"; break;
		case 'b': simple = "\b"; break;
		case 'f': simple = "\f"; break;
		case 'n': simple = "\n"; break;
		case 'r': simple = "\r"; break;
		case 't': simple = "\t"; break;
		case 'u': break;
		default:
			fail(p, esc, "invalid escape '\\%c' in string", e > 0x20 && e < 0x7f ? e : '?');
			goto bad;
		}
		if (simple) {
			buf_put(&b, simple, 1);
			continue;
		}
		uint32_t cp, lo;
		if (p->pos + 4 > p->n || hex4(p->s + p->pos, &cp) < 0) {
			fail(p, esc, "invalid \\u escape (needs four hex digits)");
			goto bad;
		}
		p->pos += 4;
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			fail(p, esc, "unpaired surrogate \\u%04x in string", (unsigned)cp);
			goto bad;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (p->pos + 6 > p->n || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
			    hex4(p->s + p->pos + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
				fail(p, esc, "unpaired surrogate \\u%04x in string", (unsigned)cp);
				goto bad;
			}
			p->pos += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		buf_put_cp(&b, cp);
	}
	*lenp = b.len;
	return b.d;
bad:
	free(b.d);
	return NULL;
}

static kjson_value *parse_number(struct parser *p)
{
	size_t start = p->pos, i = p->pos;
	const char *s = p->s;
	int neg = 0, integral = 1;
	if (i < p->n && s[i] == '-')
		neg = 1, i++;
	if (i >= p->n || s[i] < '0' || s[i] > '9') {
		fail(p, start, "invalid number (no digits)");
		return NULL;
	}
	if (s[i] == '0') {
		i++;
		if (i < p->n && s[i] >= '0' && s[i] <= '9') {
			fail(p, start, "invalid number (leading zero)");
			return NULL;
		}
	} else {
		while (i < p->n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < p->n && s[i] == '.') {
		integral = 0;
		i++;
		if (i >= p->n || s[i] < '0' || s[i] > '9') {
			fail(p, start, "invalid number (no digits after '.')");
			return NULL;
		}
		while (i < p->n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
		integral = 0;
		i++;
		if (i < p->n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= p->n || s[i] < '0' || s[i] > '9') {
			fail(p, start, "invalid number (no digits in exponent)");
			return NULL;
		}
		while (i < p->n && s[i] >= '0' && s[i] <= '9')
			i++;
	}

	size_t len = i - start;
	char small[64], *tok = len < sizeof small ? small : kmalloc(len + 1);
	memcpy(tok, s + start, len);
	tok[len] = 0;
	errno = 0;
	double d = strtod(tok, NULL);
	int range = errno == ERANGE && isinf(d);
	if (tok != small)
		free(tok);
	if (range) {
		fail(p, start, "number out of range");
		return NULL;
	}

	kjson_value *v = new_value(KJSON_NUMBER);
	v->num = d;
	if (integral) {
		/* exact, accumulating negatively so INT64_MIN fits */
		int64_t acc = 0;
		int ok = 1;
		for (size_t k = start + (size_t)neg; k < i; k++) {
			int digit = s[k] - '0';
			if (acc < (INT64_MIN + digit) / 10) {
				ok = 0;
				break;
			}
			acc = acc * 10 - digit;
		}
		if (ok && (neg || acc != INT64_MIN)) {
			v->is_int = 1;
			v->i64 = neg ? acc : -acc;
		}
	} else if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
		v->is_int = 1;
		v->i64 = (int64_t)d;
	}
	p->pos = i;
	return v;
}

static void push_member(kjson_value *c, size_t *cap, char *key, kjson_value *item)
{
	if (c->len == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		c->items = krealloc(c->items, kmul(*cap, sizeof *c->items));
		if (c->type == KJSON_OBJECT)
			c->keys = krealloc(c->keys, kmul(*cap, sizeof *c->keys));
	}
	if (c->type == KJSON_OBJECT)
		c->keys[c->len] = key;
	c->items[c->len++] = item;
}

static kjson_value *parse_container(struct parser *p)
{
	int is_obj = p->s[p->pos] == '{';
	char close = is_obj ? '}' : ']';
	const char *what = is_obj ? "object" : "array";
	size_t open = p->pos;
	if (++p->depth > KJSON_MAX_DEPTH) {
		fail(p, open, "nesting deeper than %d levels", KJSON_MAX_DEPTH);
		return NULL;
	}
	p->pos++;
	kjson_value *c = new_value(is_obj ? KJSON_OBJECT : KJSON_ARRAY);
	size_t cap = 0;
	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == close) {
		p->pos++;
		p->depth--;
		return c;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(p);
		if (is_obj) {
			if (p->pos >= p->n) {
				fail(p, p->pos, "unexpected end of input in object");
				goto bad;
			}
			if (p->s[p->pos] != '"') {
				char bb[16];
				fail(p, p->pos, "expected a string key in object, found %s",
				     describe_byte((unsigned char)p->s[p->pos], bb, sizeof bb));
				goto bad;
			}
			size_t klen;
			key = parse_string_raw(p, &klen);
			if (!key)
				goto bad;
			skip_ws(p);
			if (p->pos >= p->n || p->s[p->pos] != ':') {
				free(key);
				fail(p, p->pos, "expected ':' after object key");
				goto bad;
			}
			p->pos++;
		}
		kjson_value *item = parse_value(p);
		if (!item) {
			free(key);
			goto bad;
		}
		push_member(c, &cap, key, item);
		skip_ws(p);
		if (p->pos >= p->n) {
			fail(p, p->pos, "unexpected end of input in %s", what);
			goto bad;
		}
		char ch = p->s[p->pos];
		if (ch == ',') {
			p->pos++;
			continue;
		}
		if (ch == close) {
			p->pos++;
			break;
		}
		char bb[16];
		fail(p, p->pos, "expected ',' or '%c' in %s, found %s", close, what,
		     describe_byte((unsigned char)ch, bb, sizeof bb));
		goto bad;
	}
	p->depth--;
	return c;
bad:
	kjson_free(c);
	return NULL;
}

static kjson_value *parse_literal(struct parser *p)
{
	static const struct { const char *word; kjson_type t; int b; } lit[] = {
		{ "true", KJSON_BOOL, 1 }, { "false", KJSON_BOOL, 0 }, { "null", KJSON_NULL, 0 },
	};
	for (size_t k = 0; k < sizeof lit / sizeof lit[0]; k++) {
		size_t len = strlen(lit[k].word);
		if (p->n - p->pos >= len && memcmp(p->s + p->pos, lit[k].word, len) == 0) {
			p->pos += len;
			kjson_value *v = new_value(lit[k].t);
			v->boolean = lit[k].b;
			return v;
		}
	}
	fail(p, p->pos, "invalid literal (expected true, false or null)");
	return NULL;
}

static kjson_value *parse_value(struct parser *p)
{
	skip_ws(p);
	if (p->pos >= p->n) {
		fail(p, p->pos, "unexpected end of input (expected a value)");
		return NULL;
	}
	char c = p->s[p->pos];
	switch (c) {
	case '{':
	case '[':
		return parse_container(p);
	case '"': {
		size_t len;
		char *s = parse_string_raw(p, &len);
		if (!s)
			return NULL;
		kjson_value *v = new_value(KJSON_STRING);
		v->str = s;
		v->len = len;
		return v;
	}
	case 't':
	case 'f':
	case 'n':
		return parse_literal(p);
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return parse_number(p);
		char bb[16];
		fail(p, p->pos, "unexpected %s (expected a value)",
		     describe_byte((unsigned char)c, bb, sizeof bb));
		return NULL;
	}
}

kjson_value *kjson_parse(const char *text, size_t len, char *errbuf, size_t errlen)
{
	struct parser p = { .s = text, .n = len, .err = errbuf, .errlen = errlen };
	if (errbuf && errlen)
		errbuf[0] = 0;
	kjson_value *v = parse_value(&p);
	if (!v)
		return NULL;
	skip_ws(&p);
	if (p.pos < p.n) {
		fail(&p, p.pos, "unexpected characters after the JSON value");
		kjson_free(v);
		return NULL;
	}
	return v;
}

void kjson_free(kjson_value *v)
{
	if (!v)
		return;
	if (v->type == KJSON_ARRAY || v->type == KJSON_OBJECT) {
		for (size_t i = 0; i < v->len; i++) {
			kjson_free(v->items[i]);
			if (v->keys)
				free(v->keys[i]);
		}
		free(v->items);
		free(v->keys);
	}
	free(v->str);
	free(v);
}

/* ---- accessors ---- */

kjson_type kjson_type_of(const kjson_value *v) { return v ? v->type : KJSON_NULL; }

const kjson_value *kjson_get(const kjson_value *obj, const char *key)
{
	if (!obj || obj->type != KJSON_OBJECT || !key)
		return NULL;
	for (size_t i = obj->len; i-- > 0;)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i];
	return NULL;
}

const kjson_value *kjson_at(const kjson_value *arr, size_t i)
{
	if (!arr || (arr->type != KJSON_ARRAY && arr->type != KJSON_OBJECT) || i >= arr->len)
		return NULL;
	return arr->items[i];
}

const char *kjson_key_at(const kjson_value *obj, size_t i)
{
	if (!obj || obj->type != KJSON_OBJECT || i >= obj->len)
		return NULL;
	return obj->keys[i];
}

size_t kjson_len(const kjson_value *v)
{
	if (!v || (v->type != KJSON_ARRAY && v->type != KJSON_OBJECT))
		return 0;
	return v->len;
}

double kjson_num(const kjson_value *v)
{
	return v && v->type == KJSON_NUMBER ? v->num : NAN;
}

int kjson_i64(const kjson_value *v, int64_t *out)
{
	if (!v || v->type != KJSON_NUMBER || !v->is_int)
		return 0;
	*out = v->i64;
	return 1;
}

const char *kjson_str(const kjson_value *v)
{
	return v && v->type == KJSON_STRING ? v->str : NULL;
}

int kjson_is_true(const kjson_value *v)
{
	return v && v->type == KJSON_BOOL && v->boolean;
}

/*
 * kjson: a streaming JSON writer and a small JSON parser.
 *
 * Owns the --json output of every program (the writer) and the reading of
 * JSON run records by kstat (the parser).  Nothing else in kbfs formats or
 * parses JSON by hand.
 *
 * Writer invariants: output is always valid JSON (RFC 8259) as long as the
 * calls are balanced.  Commas are inserted automatically; inside an object
 * every value must be preceded by kjson_key() (or use the kjson_kv_*
 * helpers); misuse (a value without a key in an object, a key in an array,
 * a mismatched end) is a programming error and stops with KBUG.  Strings
 * are UTF-8: '"', '\\' and control characters are escaped, valid UTF-8
 * passes through unchanged and an invalid byte is written as \ufffd.
 * Integers are written exactly; doubles with %.17g (they read back
 * bit-identical), and NaN/Inf, which JSON cannot express, as null.  Each
 * completed top-level value is followed by a newline, so several
 * documents written in turn form JSON Lines.  With pretty != 0 members go
 * on their own lines, indented two spaces per level; empty containers stay
 * "{}" and "[]".  The writer never closes its FILE; check ferror()/fclose()
 * as usual (kjson_writer_free() reports a stream error too).
 *
 * Parser invariants: strict RFC 8259 (no comments, no trailing commas, no
 * NaN, no leading zeros), input must be valid UTF-8, \u escapes with
 * surrogate pairs are decoded to UTF-8 (a lone surrogate is an error),
 * nesting deeper than KJSON_MAX_DEPTH is refused, so hostile input cannot
 * exhaust the stack.  On error kjson_parse() returns NULL and writes
 * "line L column C: reason" into errbuf (line and column are 1-based,
 * columns count bytes).  Memory comes from kmalloc (dies on exhaustion).
 * The accessors accept NULL and wrong types and then return NULL / NAN /
 * 0, so lookups can be chained: kjson_num(kjson_get(kjson_get(doc, "a"), "b")).
 * Duplicate object keys are kept; kjson_get() returns the last one, as
 * JavaScript does.
 */
#ifndef KJSON_H
#define KJSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KJSON_MAX_DEPTH 256

/* ---- writer ---- */

/* Write the n bytes at s to fp escaped, the one walk JSON strings and
 * ksvg's XML text share: an ASCII byte c as esc(c, tmp) returns it (a
 * string, possibly built in tmp; NULL: the byte itself), a valid UTF-8
 * sequence as it is, each byte of an invalid one as bad. */
void kjson_put_escaped(FILE *fp, const char *s, size_t n, const char *(*esc)(unsigned c, char tmp[8]),
		       const char *bad);

typedef struct kjson_writer kjson_writer;

kjson_writer *kjson_writer_new(FILE *fp, int pretty);
/* Frees w; returns 0, or -1 if containers are still open or the stream
 * has an error (ferror). */
int kjson_writer_free(kjson_writer *w);

void kjson_begin_object(kjson_writer *w);
void kjson_end_object(kjson_writer *w);
void kjson_begin_array(kjson_writer *w);
void kjson_end_array(kjson_writer *w);
void kjson_key(kjson_writer *w, const char *key);

void kjson_null(kjson_writer *w);
void kjson_bool(kjson_writer *w, int v);
void kjson_int(kjson_writer *w, int64_t v);
void kjson_uint(kjson_writer *w, uint64_t v);
void kjson_double(kjson_writer *w, double v);       /* %.17g; non-finite -> null */
void kjson_string(kjson_writer *w, const char *s);  /* NULL -> null */
void kjson_string_n(kjson_writer *w, const char *s, size_t len);

/* key + value in one call */
void kjson_kv_int(kjson_writer *w, const char *key, int64_t v);
void kjson_kv_uint(kjson_writer *w, const char *key, uint64_t v);
void kjson_kv_double(kjson_writer *w, const char *key, double v);
void kjson_kv_string(kjson_writer *w, const char *key, const char *s);
void kjson_kv_bool(kjson_writer *w, const char *key, int v);
/* "key": [x0, x1, ...] */
void kjson_kv_double_array(kjson_writer *w, const char *key, const double *x, size_t n);

/* ---- parser ---- */

typedef enum kjson_type {
	KJSON_NULL,
	KJSON_BOOL,
	KJSON_NUMBER,
	KJSON_STRING,
	KJSON_ARRAY,
	KJSON_OBJECT,
} kjson_type;

typedef struct kjson_value kjson_value;
struct kjson_value {
	kjson_type type;
	int boolean;           /* KJSON_BOOL */
	double num;            /* KJSON_NUMBER: always set (strtod's rounding) */
	int64_t i64;           /* KJSON_NUMBER: exact value when is_int */
	int is_int;            /* the number is integral and fits in int64 */
	char *str;             /* KJSON_STRING: NUL-terminated UTF-8 */
	size_t len;            /* KJSON_STRING: bytes (may hold \u0000); containers: members */
	kjson_value **items;   /* KJSON_ARRAY / KJSON_OBJECT members, in input order */
	char **keys;           /* KJSON_OBJECT: keys[i] names items[i] */
};

/* Parse text[0..len-1] (one JSON value, surrounding whitespace allowed).
 * errbuf may be NULL. */
kjson_value *kjson_parse(const char *text, size_t len, char *errbuf, size_t errlen);
void kjson_free(kjson_value *v);

kjson_type kjson_type_of(const kjson_value *v);            /* NULL -> KJSON_NULL */
const kjson_value *kjson_get(const kjson_value *obj, const char *key);
/* i-th member of an array (or of an object, in input order) */
const kjson_value *kjson_at(const kjson_value *arr, size_t i);
const char *kjson_key_at(const kjson_value *obj, size_t i);
size_t kjson_len(const kjson_value *v);                    /* members, or 0 */
double kjson_num(const kjson_value *v);                    /* NAN if not a number */
/* 1 and *out set if v is an integral number within int64, else 0 */
int kjson_i64(const kjson_value *v, int64_t *out);
const char *kjson_str(const kjson_value *v);               /* NULL if not a string */
int kjson_is_true(const kjson_value *v);                   /* 1 only for true */

#endif

/* test_kjson: JSON writer -> parser round trips, escapes, malformed input. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kjson.h"
#include "tap.h"

/* Read a whole temporary stream back into a NUL-terminated buffer. */
static char *slurp(FILE *fp, size_t *len)
{
	long n = ftell(fp);
	rewind(fp);
	char *buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, fp);
	buf[*len] = 0;
	fclose(fp);
	return buf;
}

static const char tricky[] = "quote\" backslash\\ slash/ nl\n tab\t cr\r bell\a del\x7f nul-free é€𝄞";

static void write_doc(kjson_writer *w)
{
	kjson_begin_object(w);
	kjson_kv_string(w, "name", "kbfs");
	kjson_kv_int(w, "min", INT64_MIN);
	kjson_kv_int(w, "max", INT64_MAX);
	kjson_kv_uint(w, "umax", UINT64_MAX);
	kjson_kv_int(w, "zero", 0);
	kjson_kv_double(w, "pi", 3.141592653589793);
	kjson_kv_double(w, "tiny", 5e-324);
	kjson_kv_double(w, "nan", NAN);
	kjson_kv_double(w, "inf", -INFINITY);
	kjson_kv_bool(w, "yes", 1);
	kjson_kv_bool(w, "no", 0);
	kjson_key(w, "nothing");
	kjson_null(w);
	kjson_kv_string(w, "tricky", tricky);
	kjson_key(w, "ctl");
	kjson_string_n(w, "a\0b\x01", 4);
	kjson_key(w, "empty_obj");
	kjson_begin_object(w);
	kjson_end_object(w);
	kjson_key(w, "empty_arr");
	kjson_begin_array(w);
	kjson_end_array(w);
	kjson_key(w, "nested");
	kjson_begin_array(w);
	for (int i = 0; i < 3; i++) {
		kjson_begin_object(w);
		kjson_kv_int(w, "i", i);
		const double xs[2] = { i * 0.5, -1.0 / 3.0 };
		kjson_kv_double_array(w, "xs", xs, 2);
		kjson_end_object(w);
	}
	kjson_begin_array(w);
	kjson_begin_array(w);
	kjson_int(w, 42);
	kjson_end_array(w);
	kjson_end_array(w);
	kjson_end_array(w);
	kjson_end_object(w);
}

static void check_doc(const kjson_value *d, const char *mode)
{
	int64_t i;
	ok(kjson_type_of(d) == KJSON_OBJECT, "%s: top is an object", mode);
	ok(kjson_str(kjson_get(d, "name")) && strcmp(kjson_str(kjson_get(d, "name")), "kbfs") == 0,
	   "%s: string member", mode);
	ok(kjson_i64(kjson_get(d, "min"), &i) && i == INT64_MIN, "%s: INT64_MIN exact", mode);
	ok(kjson_i64(kjson_get(d, "max"), &i) && i == INT64_MAX, "%s: INT64_MAX exact", mode);
	ok(!kjson_i64(kjson_get(d, "umax"), &i) && kjson_num(kjson_get(d, "umax")) == 18446744073709551616.0,
	   "%s: UINT64_MAX is a number, not an int64", mode);
	ok(kjson_i64(kjson_get(d, "zero"), &i) && i == 0, "%s: zero", mode);
	ok(kjson_num(kjson_get(d, "pi")) == 3.141592653589793, "%s: double bit-exact", mode);
	ok(kjson_num(kjson_get(d, "tiny")) == 5e-324, "%s: subnormal bit-exact", mode);
	ok(kjson_type_of(kjson_get(d, "nan")) == KJSON_NULL && kjson_get(d, "nan"), "%s: NaN written as null", mode);
	ok(kjson_type_of(kjson_get(d, "inf")) == KJSON_NULL && kjson_get(d, "inf"), "%s: -Inf written as null", mode);
	ok(kjson_is_true(kjson_get(d, "yes")) && !kjson_is_true(kjson_get(d, "no")) &&
	   kjson_type_of(kjson_get(d, "no")) == KJSON_BOOL, "%s: booleans", mode);
	ok(kjson_str(kjson_get(d, "tricky")) && strcmp(kjson_str(kjson_get(d, "tricky")), tricky) == 0,
	   "%s: escapes and UTF-8 round trip", mode);
	const kjson_value *ctl = kjson_get(d, "ctl");
	ok(ctl && ctl->len == 4 && memcmp(ctl->str, "a\0b\x01", 4) == 0, "%s: NUL and U+0001 round trip", mode);
	ok(kjson_type_of(kjson_get(d, "empty_obj")) == KJSON_OBJECT && kjson_len(kjson_get(d, "empty_obj")) == 0,
	   "%s: empty object", mode);
	ok(kjson_type_of(kjson_get(d, "empty_arr")) == KJSON_ARRAY && kjson_len(kjson_get(d, "empty_arr")) == 0,
	   "%s: empty array", mode);
	const kjson_value *nested = kjson_get(d, "nested");
	ok(kjson_len(nested) == 4, "%s: nested array length", mode);
	ok(kjson_i64(kjson_get(kjson_at(nested, 2), "i"), &i) && i == 2, "%s: nested[2].i", mode);
	ok(kjson_num(kjson_at(kjson_get(kjson_at(nested, 1), "xs"), 1)) == -1.0 / 3.0, "%s: nested[1].xs[1]", mode);
	ok(kjson_i64(kjson_at(kjson_at(kjson_at(nested, 3), 0), 0), &i) && i == 42, "%s: nested[3][0][0]", mode);
	ok(kjson_get(d, "absent") == NULL && kjson_at(nested, 4) == NULL && isnan(kjson_num(NULL)),
	   "%s: missing members are NULL", mode);
}

static void test_round_trip(int pretty)
{
	const char *mode = pretty ? "pretty" : "compact";
	FILE *fp = tmpfile();
	kjson_writer *w = kjson_writer_new(fp, pretty);
	write_doc(w);
	ok(kjson_writer_free(w) == 0, "%s: writer finished cleanly", mode);
	size_t len;
	char *text = slurp(fp, &len);
	ok(len > 0 && text[len - 1] == '\n', "%s: document ends with a newline", mode);
	if (!pretty) {
		ok(strchr(text, '\n') == text + len - 1, "compact: one line");
		ok(strstr(text, "\"min\":-9223372036854775808,") != NULL, "compact: INT64_MIN text");
		ok(strstr(text, "\"umax\":18446744073709551615,") != NULL, "compact: UINT64_MAX text");
		ok(strstr(text, "\"pi\":3.1415926535897931,") != NULL, "compact: %%.17g text");
		ok(strstr(text, "\"nan\":null,\"inf\":null") != NULL, "compact: non-finite as null");
		ok(strstr(text, "quote\\\" backslash\\\\ slash/ nl\\n tab\\t cr\\r bell\\u0007 del\\u007f") != NULL,
		   "compact: escapes");
		ok(strstr(text, "é€𝄞") != NULL, "compact: UTF-8 passed through");
		ok(strstr(text, "\"a\\u0000b\\u0001\"") != NULL, "compact: NUL escaped");
		ok(strstr(text, "\"empty_obj\":{},\"empty_arr\":[]") != NULL, "compact: empty containers");
	} else {
		const char *head = "{\n  \"name\": \"kbfs\",\n  \"min\": -9223372036854775808,\n";
		ok(strncmp(text, head, strlen(head)) == 0, "pretty: two-space indent");
		ok(strstr(text, "\"empty_obj\": {},\n  \"empty_arr\": [],") != NULL, "pretty: empty containers");
		ok(strstr(text, "\n      \"xs\": [\n        0,\n") != NULL, "pretty: nested indent");
	}
	char err[128];
	kjson_value *d = kjson_parse(text, len, err, sizeof err);
	if (!ok(d != NULL, "%s: parses back", mode))
		printf("#   %s\n", err);
	if (d)
		check_doc(d, mode);
	kjson_free(d);
	free(text);
}

static void test_writer_misc(void)
{
	FILE *fp = tmpfile();
	kjson_writer *w = kjson_writer_new(fp, 0);
	kjson_int(w, 1);
	kjson_string(w, "x");
	kjson_begin_array(w);
	ok(kjson_writer_free(w) == -1, "writer_free reports an unclosed container");
	size_t len;
	char *text = slurp(fp, &len);
	ok(strcmp(text, "1\n\"x\"\n[") == 0, "top-level values form JSON Lines");
	free(text);

	fp = tmpfile();
	w = kjson_writer_new(fp, 0);
	kjson_string_n(w, "ok\xff\xc3(\xed\xa0\x80!", 9);
	kjson_writer_free(w);
	text = slurp(fp, &len);
	if (!ok(strcmp(text, "\"ok\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd!\"\n") == 0, "invalid UTF-8 bytes become \\ufffd"))
		printf("#   got %s", text);
	free(text);
}

static void test_parse_values(void)
{
	char err[128];
	int64_t i;
	const char *t = "[1, 1e400000000]";
	kjson_value *v = kjson_parse(t, strlen(t), err, sizeof err);
	ok(v == NULL && strstr(err, "out of range"), "1e400000000 refused as out of range");
	kjson_free(v);

	t = " \t\r\n[1.5e3, -0, 123456789012345678, 0.25, \"\\ud834\\udd1e\\u00e9\\/\", true] ";
	v = kjson_parse(t, strlen(t), err, sizeof err);
	if (!ok(v != NULL, "array with numbers and escapes parses"))
		printf("#   %s\n", err);
	ok(kjson_i64(kjson_at(v, 0), &i) && i == 1500, "1.5e3 is integral: 1500");
	ok(kjson_i64(kjson_at(v, 1), &i) && i == 0, "-0 is integral");
	ok(kjson_i64(kjson_at(v, 2), &i) && i == 123456789012345678, "18-digit integer exact");
	ok(!kjson_i64(kjson_at(v, 3), &i) && kjson_num(kjson_at(v, 3)) == 0.25, "0.25 is not integral");
	ok(kjson_str(kjson_at(v, 4)) && strcmp(kjson_str(kjson_at(v, 4)), "𝄞é/") == 0, "surrogate pair and \\u decoded");
	ok(kjson_is_true(kjson_at(v, 5)), "true");
	kjson_free(v);

	t = "{\"a\": 1, \"a\": 2, \"b\": {\"c\": [null]}}";
	v = kjson_parse(t, strlen(t), err, sizeof err);
	ok(kjson_i64(kjson_get(v, "a"), &i) && i == 2, "duplicate key: the last wins");
	ok(kjson_len(v) == 3 && strcmp(kjson_key_at(v, 1), "a") == 0, "object keeps members in order");
	ok(kjson_type_of(kjson_at(kjson_get(kjson_get(v, "b"), "c"), 0)) == KJSON_NULL, "chained lookup");
	kjson_free(v);

	t = "9223372036854775808";
	v = kjson_parse(t, strlen(t), err, sizeof err);
	ok(v && !kjson_i64(v, &i) && kjson_num(v) == 9223372036854775808.0, "2^63 is not an int64");
	kjson_free(v);
	t = "-9223372036854775809";
	v = kjson_parse(t, strlen(t), err, sizeof err);
	ok(v && !kjson_i64(v, &i), "-2^63-1 is not an int64");
	kjson_free(v);

	/* len bounds the input: the text after it is not read */
	v = kjson_parse("[1]garbage", 3, err, sizeof err);
	ok(v && kjson_len(v) == 1, "parse stops at len");
	kjson_free(v);
}

static void test_malformed(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "", "line 1 column 1: unexpected end of input" },
		{ "   ", "line 1 column 4: unexpected end of input" },
		{ "[1, 2", "line 1 column 6: unexpected end of input in array" },
		{ "[1, 2,]", "line 1 column 7: unexpected ']'" },
		{ "{\"a\" 1}", "line 1 column 6: expected ':'" },
		{ "{\"a\": 1,}", "line 1 column 9: expected a string key" },
		{ "{a: 1}", "line 1 column 2: expected a string key" },
		{ "[1 2]", "line 1 column 4: expected ',' or ']'" },
		{ "{\n  \"x\": tru\n}", "line 2 column 8: invalid literal" },
		{ "[01]", "line 1 column 2: invalid number (leading zero)" },
		{ "[1.]", "line 1 column 2: invalid number (no digits after '.')" },
		{ "[1e]", "line 1 column 2: invalid number (no digits in exponent)" },
		{ "[-]", "line 1 column 2: invalid number (no digits)" },
		{ "[+1]", "line 1 column 2: unexpected '+'" },
		{ "[NaN]", "line 1 column 2: unexpected 'N'" },
		{ "\"abc", "line 1 column 1: unterminated string" },
		{ "\"a\tb\"", "line 1 column 3: control character 0x09" },
		{ "\"\\x\"", "line 1 column 2: invalid escape" },
		{ "\"\\u12g4\"", "line 1 column 2: invalid \\u escape" },
		{ "\"\\ud800\"", "line 1 column 2: unpaired surrogate" },
		{ "\"\\udc00\\ud800\"", "line 1 column 2: unpaired surrogate" },
		{ "\"\xc3\x28\"", "line 1 column 2: invalid UTF-8" },
		{ "\"\xe0\x80\x80\"", "line 1 column 2: invalid UTF-8" },
		{ "[1] [2]", "line 1 column 5: unexpected characters after" },
		{ "// c\n1", "line 1 column 1: unexpected '/'" },
		{ "\xef\xbb\xbf{}", "line 1 column 1: unexpected byte 0xef" },
	};
	char err[128];
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		strcpy(err, "(none)");
		kjson_value *v = kjson_parse(bad[k].text, strlen(bad[k].text), err, sizeof err);
		int pass = v == NULL && strncmp(err, bad[k].want, strlen(bad[k].want)) == 0;
		if (!ok(pass, "malformed #%zu refused: %s", k, bad[k].want))
			printf("#   got '%s'\n", err);
		kjson_free(v);
	}
	/* an embedded NUL byte is not whitespace */
	kjson_value *v = kjson_parse("[1,\0 2]", 7, err, sizeof err);
	ok(v == NULL && strstr(err, "byte 0x00"), "NUL byte refused");
	kjson_free(v);
	/* no errbuf is fine */
	ok(kjson_parse("[", 1, NULL, 0) == NULL, "NULL errbuf accepted");
}

static void test_depth(void)
{
	char err[128];
	size_t n = KJSON_MAX_DEPTH;
	char *t = malloc(2 * n + 2 + 1);
	memset(t, '[', n);
	memset(t + n, ']', n);
	kjson_value *v = kjson_parse(t, 2 * n, err, sizeof err);
	if (!ok(v != NULL, "%zu nested arrays accepted", n))
		printf("#   %s\n", err);
	kjson_free(v);

	/* one more level is refused, at the offending bracket */
	memset(t, '[', n + 1);
	memset(t + n + 1, ']', n + 1);
	v = kjson_parse(t, 2 * n + 2, err, sizeof err);
	ok(v == NULL && strcmp(err, "line 1 column 257: nesting deeper than 256 levels") == 0,
	   "%zu nested arrays refused", n + 1);
	kjson_free(v);
	free(t);

	/* a hostile megabyte of '[' or '{"a":' fails cleanly too */
	size_t big = 1 << 20;
	t = malloc(big);
	memset(t, '[', big);
	v = kjson_parse(t, big, err, sizeof err);
	ok(v == NULL && strstr(err, "nesting deeper"), "1 MiB of '[' refused without recursion");
	for (size_t k = 0; k + 5 <= big; k += 5)
		memcpy(t + k, "{\"a\":", 5);
	v = kjson_parse(t, big - big % 5, err, sizeof err);
	ok(v == NULL && strstr(err, "nesting deeper"), "deep objects refused");
	free(t);
}

int main(void)
{
	test_round_trip(0);
	test_round_trip(1);
	test_writer_misc();
	test_parse_values();
	test_malformed();
	test_depth();
	return tap_done();
}

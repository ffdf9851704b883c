/*
 * knum: the one reader of numbers in text, for every option, environment
 * variable and file kbfs reads (roots files, edge lists, trees, manifests,
 * build-info; JSON keeps its own grammar).  Decimal only: "010" is ten,
 * never eight, and "0x10", "1e3" for a whole number, "inf", "nan", a
 * blank or a '+' before the digits are not numbers.  Each function reads
 * the number at p and sets *end past it (at p when there is none); what
 * may follow is the caller's to check (kopt.h's kopt_parse_* want nothing).
 * Inline: the importers call knum_u64 once per id.
 */
#ifndef KNUM_H
#define KNUM_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum {
	KNUM_OK,   /* a number, *out set */
	KNUM_NONE, /* no digit at p */
	KNUM_BIG,  /* digits beyond the type's range (a double: not finite) */
};

static inline int knum_digit(char c) { return (unsigned)(unsigned char)c - '0' <= 9; }

/* Decimal digits: an unsigned 64-bit whole number. */
static inline int knum_u64(const char *p, const char **end, uint64_t *out)
{
	*end = p;
	if (!knum_digit(*p))
		return KNUM_NONE;
	uint64_t v = 0;
	const char *q = p;
	for (; knum_digit(*q); q++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*q - '0'), &v))
			return KNUM_BIG;
	*end = q;
	*out = v;
	return KNUM_OK;
}

/* An optional '-', then decimal digits: a signed 64-bit whole number. */
static inline int knum_i64(const char *p, const char **end, int64_t *out)
{
	int neg = *p == '-';
	uint64_t m;
	int rc = knum_u64(p + neg, end, &m);
	if (rc == KNUM_NONE)
		*end = p;
	if (rc != KNUM_OK)
		return rc;
	if (m > (uint64_t)INT64_MAX + (uint64_t)neg) {
		*end = p;
		return KNUM_BIG;
	}
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return KNUM_OK;
}

/* An optional '-', digits with an optional '.' among or after them (at
 * least one digit), an optional exponent (e or E, an optional sign,
 * digits): a finite double. */
static inline int knum_double(const char *p, const char **end, double *out)
{
	const char *q = p + (*p == '-');
	int digits = 0;
	for (; knum_digit(*q); q++)
		digits++;
	if (*q == '.')
		for (q++; knum_digit(*q); q++)
			digits++;
	*end = p;
	if (!digits)
		return KNUM_NONE;
	if (*q == 'e' || *q == 'E') {
		const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
		if (knum_digit(*e)) {
			while (knum_digit(*e))
				e++;
			q = e;
		}
	}
	/* strtod reads the same characters here: what it reads beyond the
	 * grammar above (a hexadecimal float after "0x") is not decimal */
	char *stop;
	errno = 0;
	double v = strtod(p, &stop);
	if (stop != q)
		return KNUM_NONE;
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1))
		return KNUM_BIG;
	*end = q;
	*out = v;
	return KNUM_OK;
}

#endif

/*
 * kutf8: what a valid UTF-8 sequence is, the one test behind the escaping
 * of JSON strings (kjson.h), of SVG text and of every message's quoted
 * input (klog.h).  Depends on nothing.
 */
#ifndef KUTF8_H
#define KUTF8_H

#include <stddef.h>

/* Length (1 to 4) of the valid UTF-8 sequence at p, or 0 when the bytes
 * there are not one (overlong forms, surrogates, > U+10FFFF, truncation). */
size_t kutf8_seq(const unsigned char *p, size_t n);

#endif

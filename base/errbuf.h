/*
 * errbuf.h - the caller-supplied error buffer every setup function fills
 * (char *err, size_t errlen): one line a person reads, saying what
 * happened, to what, and what to do. Never given a secret's bytes.
 */
#ifndef PASSAVANT_ERRBUF_H
#define PASSAVANT_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/attrib.h"

/* Formats into err (truncating). No-op when err is NULL or errlen is 0. */
void errbuf_set(char *err, size_t errlen, const char *fmt, ...) PRINTF(3, 4);

/* errbuf_set() with a va_list (for wrappers that add a detail). */
void errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap) PRINTF(3, 0);

/* Same, then appends ": " and errnum's description when errnum != 0
 * (strerrordesc_np: constant text, no locale, no allocation). */
void errbuf_set_errno(char *err, size_t errlen, int errnum, const char *fmt, ...) PRINTF(4, 5);

/* Appends to what err holds (truncating). No-op when err is NULL or
 * errlen is 0. */
void errbuf_append(char *err, size_t errlen, const char *fmt, ...) PRINTF(3, 4);

#endif

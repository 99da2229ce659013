/*
 * errbuf.c - error-buffer formatting (contracts in errbuf.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/errbuf.h"

static void errbuf_vappend(char *err, size_t errlen, size_t at, const char *fmt, va_list ap)
{
	if (at >= errlen)
		return;
	if (vsnprintf(err + at, errlen - at, fmt, ap) < 0)
		err[at] = '\0';
}

void errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err != NULL && errlen > 0)
		errbuf_vappend(err, errlen, 0, fmt, ap);
}

void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	errbuf_vappend(err, errlen, 0, fmt, ap);
	va_end(ap);
}

void errbuf_set_errno(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	const char *desc;
	va_list ap;

	va_start(ap, fmt);
	if (err != NULL && errlen > 0)
		errbuf_vappend(err, errlen, 0, fmt, ap);
	va_end(ap);
	if (errnum != 0) {
		desc = strerrordesc_np(errnum);
		errbuf_append(err, errlen, ": %s", desc != NULL ? desc : "unknown error");
	}
}

void errbuf_append(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	errbuf_vappend(err, errlen, strnlen(err, errlen - 1), fmt, ap);
	va_end(ap);
}

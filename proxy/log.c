/*
 * log.c - stderr diagnostics with a level. The level is the only mutable
 * state here; it is set once by main() before the event loop starts.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static enum log_level log_level = LOG_LEVEL_WARN;

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

/* Formats one whole line and writes it with a single call, so concurrent
 * writers (the sandbox child, the proxy) do not interleave mid-line. */
static void log_emit(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	char line[1024];
	int n, m;

	if (level > log_level)
		return;
	n = snprintf(line, sizeof(line), "passavant: ");
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (m < 0)
		return;
	/* Refusal reasons are whole lines already ("passavant: blocked
	 * ..."): one prefix, not two. */
	if (strncmp(line + n, "passavant: ", (size_t)n) == 0) {
		/* vsnprintf() wrote its NUL inside what moves. */
		memmove(line, line + n, sizeof(line) - (size_t)n);
		n = 0;
		m = (int)strlen(line);
	}
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	if (errnum != 0) {
		m = snprintf(line + n, sizeof(line) - (size_t)n, ": %s", strerror(errnum));
		if (m > 0)
			n += m;
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
	}
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}

void log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_WARN, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_WARN, 0, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_INFO, 0, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_DEBUG, 0, fmt, ap);
	va_end(ap);
}

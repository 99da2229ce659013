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
size_t log_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n, i;
	uint32_t c;

	if (len == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

bool log_cp_acts(uint32_t cp)
{
	/* [first, last] of the invisible rest, round 36 review: the soft
	 * hyphen, the grapheme joiner, the Hangul and Mongolian fillers and
	 * selectors, the deprecated format characters (U+206A-206F),
	 * variation selectors (both blocks: one a byte can hide in each),
	 * interlinear annotation, shorthand and musical format controls,
	 * and the tag characters U+E0000-E007F (invisible ASCII, read by
	 * language models: "/v1/models" shows where "/v1/models<tags>" was
	 * asked) */
	static const uint32_t hidden[][2] = {
		{0x00ad, 0x00ad},   {0x034f, 0x034f},   {0x115f, 0x1160},   {0x17b4, 0x17b5},
		{0x180b, 0x180f},   {0x2060, 0x206f},   {0x3164, 0x3164},   {0xfe00, 0xfe0f},
		{0xffa0, 0xffa0},   {0xfff9, 0xfffb},   {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
		{0xe0000, 0xe007f}, {0xe0100, 0xe01ef},
	};

	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || cp == 0xfeff)
		return true;
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (cp >= hidden[i][0] && cp <= hidden[i][1])
			return true;
	return false;
}

/*
 * Copies in[0..len) into out (cap bytes, NUL-terminated) with every byte
 * of a sequence log_cp_acts() names, and every byte that begins no valid
 * UTF-8, written as \xNN; returns the length. Other text (a path in
 * another script) stays as it is.
 */
static size_t shown(char *out, size_t cap, const char *in, size_t len)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t o = 0, i = 0;

	while (i < len) {
		uint32_t cp = 0;
		size_t k = log_utf8_seq(u + i, len - i, &cp);

		if (k != 0 && !log_cp_acts(cp)) {
			if (o + k >= cap)
				break;
			memcpy(out + o, in + i, k);
			o += k;
			i += k;
			continue;
		}
		for (size_t j = 0; j < (k != 0 ? k : 1); j++) {
			if (o + 4 >= cap)
				goto full;
			(void)snprintf(out + o, cap - o, "\\x%02x", u[i + j]);
			o += 4;
		}
		i += k != 0 ? k : 1;
	}
full:
	out[o] = '\0';
	return o;
}

static void log_emit(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	char line[1024], out[4 * sizeof(line) + 2];
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
	/* A reason quotes what a client sent (a Host, an HTTP/2 :path). */
	n = (int)shown(out, sizeof(out) - 1, line, (size_t)n);
	out[n++] = '\n';
	fwrite(out, 1, (size_t)n, stderr);
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

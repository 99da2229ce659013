/*
 * knob.h - a bound the tests may lower through passavant's own
 * environment (PASSAVANT_..._MAX: the session does not set them), never
 * raise. Pure but for getenv().
 */
#ifndef PASSAVANT_KNOB_H
#define PASSAVANT_KNOB_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* dflt, or the decimal value of the variable name when it is a number
 * below dflt (anything else: dflt). */
static inline uint64_t knob_lowered(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno != 0 || *end != '\0' || n >= dflt ? dflt : (uint64_t)n;
}

#endif

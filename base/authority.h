/*
 * authority.h - the one splitter of "host[:port]" and "[v6][:port]"
 * (RFC 3986 authority without userinfo). It only finds the parts: what a
 * host may contain is decided by the caller (policy_host_normalize(),
 * the policy's host patterns, the forger's SAN rules).
 *
 * No allocation, no I/O, no global state: callable from event-loop
 * callbacks and from the fuzzers.
 */
#ifndef PASSAVANT_AUTHORITY_H
#define PASSAVANT_AUTHORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/attrib.h"

struct authority {
	/** The host, pointing into the input; brackets of an IPv6 literal
	 *  are not part of it. */
	const char *host;
	/** Its length in bytes (never 0 on success). */
	size_t host_len;
	/** The host was written in brackets ("[2001:db8::1]"). */
	bool bracketed;
	/** A ":port" followed the host. */
	bool has_port;
	/** The port, 1-65535, when has_port. */
	uint16_t port;
};

/*
 * Splits s[0..len) into host and optional port. An unbracketed host may
 * hold no ':' other than the port separator (a bare IPv6 literal is
 * refused: it must be bracketed to carry a port). Returns NULL on success,
 * else a static message saying what was expected; out is written on
 * success only.
 */
const char *authority_split(const char *s, size_t len, struct authority *out) NONNULL(1, 3) WUNRES;

/*
 * Parses a decimal port of 1-65535 (no sign, no spaces, at most five
 * digits) from s[0..len). Returns NULL or a static message.
 */
const char *authority_port(const char *s, size_t len, uint16_t *port) NONNULL(1, 3) WUNRES;

#endif

/*
 * target.h - pure parsing of the request target of a proxy request
 * (SPEC §5): the authority of CONNECT ("host:port", "[v6]:port") and the
 * absolute form of a plain-HTTP request ("http://host[:port]/path?query").
 *
 * No allocation, no I/O, no global state: every function may be called
 * from event-loop callbacks and from the fuzzers.
 */
#ifndef PASSAVANT_TARGET_H
#define PASSAVANT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/policy.h"
#include "base/attrib.h"

/* Longest "[" v6 "]:65535" authority we produce, plus NUL. */
#define TARGET_AUTHORITY_MAX (POLICY_HOST_MAX + 2 + 6 + 1)

struct target {
	/* Host normalised by policy_host_normalize(): lower case, no trailing
	 * dot, IPv6 without brackets in canonical form. */
	char host[POLICY_HOST_MAX + 1];
	uint16_t port;
	/* Whether host is an IPv4 or IPv6 literal (never resolved). */
	bool is_ip;
	bool is_ipv6;
	/* Absolute form only: path and query ("/" when the URI had none). The
	 * pointer is into the parsed input (or a static "/"). */
	const char *path;
	size_t path_len;
	/* What the Host header must say: host, with brackets for IPv6, and
	 * ":port" unless the port is the scheme's default. */
	char authority[TARGET_AUTHORITY_MAX];
};

/*
 * Parses a CONNECT request target: "host:port" or "[v6]:port"; the port is
 * required (1-65535). Returns NULL on success, else a static message that
 * says what was expected. out is fully written on success only.
 */
const char *target_parse_connect(const char *s, size_t len, struct target *out) NONNULL(1, 3) WUNRES;

/*
 * Parses an absolute-form request target of a plain-HTTP proxy request.
 * Only the "http" scheme (any case) is accepted; userinfo ("user@") and
 * fragments are refused as ambiguous; the default port is 80. out->path
 * points into s, which must outlive its use. Returns NULL on success, else
 * a static message.
 */
const char *target_parse_absolute(const char *s, size_t len, struct target *out) NONNULL(1, 3) WUNRES;

/* Sets t->authority from t->host and t->port (what the Host header must
 * say): IPv6 in brackets, ":port" unless the port is default_port. */
void target_set_authority(struct target *t, uint16_t default_port) NONNULL(1);

#endif

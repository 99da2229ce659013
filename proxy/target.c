/*
 * target.c - request-target parsing for CONNECT and absolute-form requests.
 *
 * Every host goes through policy_host_normalize(), the same normaliser the
 * policy patterns were built with, so that "EXAMPLE.com." and "example.com"
 * are one host to the policy and the numeric spellings inet_aton() would
 * accept ("127.1", "0x7f.1") are refused instead of guessed at.
 */
#include "target.h"
#include "base/authority.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Contract in target.h. The host is at most POLICY_HOST_MAX bytes, so
 * the authority always fits. */
void target_set_authority(struct target *out, uint16_t default_port)
{
	char *p = out->authority, digits[8];
	size_t hl = strlen(out->host), nd = 0;
	unsigned port = out->port;

	if (out->is_ipv6)
		*p++ = '[';
	memcpy(p, out->host, hl);
	p += hl;
	if (out->is_ipv6)
		*p++ = ']';
	if (out->port != default_port) {
		*p++ = ':';
		do
			digits[nd++] = (char)('0' + port % 10);
		while ((port /= 10) > 0);
		while (nd > 0)
			*p++ = digits[--nd];
	}
	*p = '\0';
}

/*
 * Splits an authority "host[:port]" or "[v6][:port]" (authority_split())
 * and normalises the host. need_port: the port is required. Fills
 * out->host/port/is_ip and the authority for the Host header
 * (default_port omitted from it).
 */
static const char *parse_authority(const char *s, size_t len, bool need_port, uint16_t default_port,
				   struct target *out)
{
	struct authority a;
	const char *err;

	if ((err = authority_split(s, len, &a)) != NULL)
		return err;
	if (need_port && !a.has_port)
		return "expected host:port";
	/* The normaliser sees the brackets: "[name]" is not a host. */
	err = a.bracketed ? policy_host_normalize(a.host - 1, a.host_len + 2, out->host,
						  sizeof(out->host))
			  : policy_host_normalize(a.host, a.host_len, out->host, sizeof(out->host));
	if (err != NULL)
		return err;
	out->port = a.has_port ? a.port : default_port;
	out->is_ipv6 = strchr(out->host, ':') != NULL;
	/* policy_host_normalize() accepts only dotted-quad IPv4 literals, so a
	 * host made of digits and dots is one. */
	out->is_ip = out->is_ipv6 || strspn(out->host, "0123456789.") == strlen(out->host);
	target_set_authority(out, default_port);
	return NULL;
}

const char *target_parse_connect(const char *s, size_t len, struct target *out)
{
	struct target t;
	const char *err;

	memset(&t, 0, sizeof(t));
	if (memchr(s, '/', len) != NULL || memchr(s, '@', len) != NULL)
		return "expected host:port as the CONNECT target";
	/* Port 0 as "default" can never match: CONNECT requires a port. */
	if ((err = parse_authority(s, len, true, 0, &t)) != NULL)
		return err;
	*out = t;
	return NULL;
}

const char *target_parse_absolute(const char *s, size_t len, struct target *out)
{
	static const char scheme[] = "http://";
	const size_t slen = sizeof(scheme) - 1;
	struct target t;
	const char *auth, *end, *err;
	size_t i, alen;

	memset(&t, 0, sizeof(t));
	if (len == 0 || s[0] == '/')
		return "expected an absolute-form target (http://host/path)";
	if (len < slen || strncasecmp(s, scheme, slen) != 0) {
		if (len >= 8 && strncasecmp(s, "https://", 8) == 0)
			return "expected an http:// target (use CONNECT for https)";
		return "expected an http:// target";
	}
	auth = s + slen;
	/* The authority ends at the first '/', '?' or '#'. */
	for (i = slen; i < len && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++)
		;
	end = s + i;
	alen = (size_t)(end - auth);
	if (memchr(auth, '@', alen) != NULL)
		return "expected no userinfo (user@) in the target";
	if (memchr(s, '#', len) != NULL)
		return "expected no fragment (#) in the target";
	if ((err = parse_authority(auth, alen, false, 80, &t)) != NULL)
		return err;
	if (i == len) {
		t.path = "/";
		t.path_len = 1;
	} else if (s[i] == '?') {
		/* "http://h?q": the origin form needs a leading '/', which the
		 * caller writes before the query (path_len counts from '?'). */
		t.path = end;
		t.path_len = len - i;
	} else {
		t.path = end;
		t.path_len = len - i;
	}
	*out = t;
	return NULL;
}

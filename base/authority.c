/*
 * authority.c - host[:port] splitting shared by the CONNECT target
 * parser, the policy's host patterns, the CLI's --listen address and the
 * leaf forger. Contracts in authority.h.
 */
#include <string.h>

#include "base/authority.h"

const char *authority_port(const char *s, size_t len, uint16_t *port)
{
	unsigned long v = 0;

	if (len == 0)
		return "expected a port number after ':'";
	if (len > 5)
		return "expected a port number between 1 and 65535";
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return "expected a decimal port number between 1 and 65535 after ':'";
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return "expected a port number between 1 and 65535";
	*port = (uint16_t)v;
	return NULL;
}

const char *authority_split(const char *s, size_t len, struct authority *out)
{
	struct authority a = {.host = s};
	const char *sep = NULL, *err;

	if (len == 0)
		return "expected a host";
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (close == NULL)
			return "expected ']' closing the IPv6 literal";
		a.host = s + 1;
		a.host_len = (size_t)(close - s) - 1;
		a.bracketed = true;
		if (close + 1 < s + len) {
			if (close[1] != ':')
				return "expected \":PORT\" or nothing after ']'";
			sep = close + 1;
		}
	} else {
		sep = memchr(s, ':', len);
		if (sep != NULL && memchr(sep + 1, ':', len - (size_t)(sep + 1 - s)) != NULL)
			return "expected an IPv6 literal in brackets, e.g. [2001:db8::1] or "
			       "[2001:db8::1]:443";
		a.host_len = sep != NULL ? (size_t)(sep - s) : len;
	}
	if (a.host_len == 0)
		return a.bracketed ? "expected an IPv6 literal between the brackets"
				   : "expected a host name before ':'";
	if (sep != NULL) {
		err = authority_port(sep + 1, len - (size_t)(sep + 1 - s), &a.port);
		if (err != NULL)
			return err;
		a.has_port = true;
	}
	*out = a;
	return NULL;
}

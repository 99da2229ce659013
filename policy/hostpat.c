/*
 * hostpat.c - host patterns of SPEC §3.1: parsing, normalising the host a
 * client sent, and matching one against the other.
 *
 * Grammar of a pattern (case-insensitive, one trailing dot ignored):
 *
 *   pattern  = ( "*" | "*." name | name | ipv4 | "[" ipv6 "]" ) [ ":" port ]
 *   port     = 1..65535, decimal
 *   ipv4     = strict dotted quad: four decimal parts 0..255, no leading zero
 *
 * Decisions written down here (SPEC is silent on them):
 *
 * - '_' is accepted in labels. It is not valid in a host name (RFC 952/1123)
 *   but it is common in real DNS names (service labels, some CDN and cloud
 *   hosts), and accepting it widens nothing: a pattern only ever matches
 *   a host equal to it or under it.
 * - Non-ASCII bytes are refused: internationalised names are written in
 *   their A-label ("xn--") form, so that one name has one spelling.
 * - A name whose last label is numeric (all digits, or "0x" hex) must be a
 *   strict dotted quad. This is the WHATWG URL rule: "127.1", "0x7f.0.0.1",
 *   "017.0.0.1" and "2130706433" are all 127.0.0.1 to inet_aton() and to
 *   some clients, so a policy or a request spelling an address that way is
 *   ambiguous and is refused rather than guessed at.
 * - A wildcard over an address ("*.1.2.3.4") is refused: addresses have no
 *   subdomains.
 * - "*:PORT" (every host, one port) is accepted where a bare "*" is.
 * - normalise accepts an IPv6 address with or without brackets: its caller
 *   has already split the port off, so a bare address is unambiguous there.
 *   Patterns, which may carry a port, require the brackets.
 *
 * Everything here is pure: no allocation, no global state; callable from
 * event-loop callbacks.
 */
#include "base/authority.h"
#include "policy_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#define LABEL_MAX 63
/* Longest textual IPv6 address (INET6_ADDRSTRLEN - 1 = 45) with some slack
 * for the forms inet_pton refuses anyway; longer input is refused early. */
#define V6TEXT_MAX 63

static char ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Whether a label is "numeric" in the WHATWG sense: all decimal digits, or
 * "0x"/"0X" followed by hex digits (possibly none).
 */
static bool label_is_numeric(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!is_hex(s[i]))
				return false;
		return true;
	}
	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

/*
 * Parses a strict dotted quad: exactly four decimal parts, each 0..255 and
 * written without a leading zero. Returns whether s[0..n) is one.
 */
static bool parse_quad(const char *s, size_t n, uint8_t out[4])
{
	size_t i = 0;
	int part;

	for (part = 0; part < 4; part++) {
		unsigned v = 0;
		size_t start = i;

		if (part > 0) {
			if (i >= n || s[i] != '.')
				return false;
			start = ++i;
		}
		while (i < n && is_digit(s[i]) && i - start < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
			return false;
		out[part] = (uint8_t)v;
	}
	return i == n;
}

/*
 * Classifies a lower-cased name without trailing dot. Returns 0 when its
 * last label is not numeric (a DNS name, to be checked by check_name()),
 * 1 when it is a strict dotted quad (out filled), -1 when it is a numeric
 * form other than a strict dotted quad (ambiguous: refused).
 */
static int numeric_form(const char *s, size_t n, uint8_t out[4])
{
	const char *last = s;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '.')
			last = s + i + 1;
	if (!label_is_numeric(last, n - (size_t)(last - s)))
		return 0;
	return parse_quad(s, n, out) ? 1 : -1;
}

/*
 * Checks a lower-cased DNS name without trailing dot: labels of 1..63
 * characters from [a-z0-9-_], none beginning or ending with '-', at most
 * POLICY_HOST_MAX in total. Returns NULL or a static message.
 */
static const char *check_name(const char *s, size_t n)
{
	size_t i, label = 0;

	if (n == 0)
		return "expected a host name, got an empty one";
	if (n > POLICY_HOST_MAX)
		return "expected a host name of at most 253 characters";
	for (i = 0; i <= n; i++) {
		char c = i < n ? s[i] : '.';

		if (c == '.') {
			if (label == 0)
				return "expected a host name without empty labels (\"..\" or a leading '.')";
			if (s[i - 1] == '-')
				return "expected labels that do not end with '-'";
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_')) {
			if (c == '*')
				return "expected '*' only as the whole leftmost label, as in *.example.com";
			return "expected only letters, digits, '-', '_' and '.' in a host name";
		}
		if (label == 0 && c == '-')
			return "expected labels that do not begin with '-'";
		if (++label > LABEL_MAX)
			return "expected labels of at most 63 characters";
	}
	return NULL;
}

/*
 * Checks raw bytes for what no host may contain, with a message saying what
 * was expected: whitespace, control characters, NUL, non-ASCII.
 */
static const char *check_bytes(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c == 0x7f)
			return "expected a host without whitespace or control characters";
		if (c >= 0x80)
			return "expected an ASCII host name (write internationalised names in "
			       "their xn-- form)";
	}
	return NULL;
}

/*
 * Parses an IPv6 address s[0..n) (no brackets) into addr and its canonical
 * text into text (at least INET6_ADDRSTRLEN bytes). Returns NULL or a
 * static message.
 */
static const char *parse_v6(const char *s, size_t n, uint8_t addr[16], char *text, size_t textlen)
{
	char buf[V6TEXT_MAX + 1];

	if (n == 0)
		return "expected an IPv6 address inside [ ]";
	if (memchr(s, '%', n) != NULL)
		return "expected an IPv6 address without a zone index ('%')";
	if (n > V6TEXT_MAX)
		return "expected an IPv6 address inside [ ]";
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET6, buf, addr) != 1)
		return "expected an IPv6 address inside [ ], e.g. [2001:db8::1]";
	if (inet_ntop(AF_INET6, addr, text, (socklen_t)textlen) == NULL)
		return "expected an IPv6 address inside [ ]";
	return NULL;
}

/* The host part (hlen bytes, "*." already removed when wildcard) into
 * out: a dotted-quad IPv4 address or a DNS name, lower-cased, without a
 * trailing dot. */
static const char *parse_hostname(const char *host, size_t hlen, bool wildcard,
				  struct policy_hostpat *out)
{
	char buf[POLICY_HOST_MAX + 2];
	const char *err;
	int num;

	/* Room for the name plus one trailing dot; longer cannot be valid. */
	if (hlen > POLICY_HOST_MAX + 1)
		return "expected a host name of at most 253 characters";
	for (size_t i = 0; i < hlen; i++)
		buf[i] = ascii_lower(host[i]);
	if (hlen > 0 && buf[hlen - 1] == '.')
		hlen--;
	buf[hlen] = '\0';

	num = numeric_form(buf, hlen, out->addr);
	if (num != 0 && wildcard)
		return "expected a domain after \"*.\", not an IP address (addresses have no "
		       "subdomains)";
	if (num < 0)
		return "expected a host name or a dotted-quad IPv4 address (four decimal parts "
		       "0-255, no leading zeros; \"127.1\", octal and hex forms are ambiguous)";
	if (num > 0) {
		out->kind = HOSTPAT_IPV4;
		memcpy(out->host, buf, hlen + 1);
		return NULL;
	}
	if ((err = check_name(buf, hlen)) != NULL)
		return err;
	if (wildcard && hlen + 2 > POLICY_HOST_MAX)
		return "expected a host pattern of at most 253 characters";
	out->kind = wildcard ? HOSTPAT_WILDCARD : HOSTPAT_EXACT;
	memcpy(out->host, buf, hlen + 1);
	return NULL;
}

/*
 * Contract in policy.h. out is zeroed first and is meaningful only when
 * NULL is returned. Pure; may be called from anywhere.
 */
const char *policy_hostpat_parse(const char *text, bool allow_any, struct policy_hostpat *out)
{
	struct authority a;
	const char *host, *err;
	size_t len, hlen;
	bool wildcard = false;

	memset(out, 0, sizeof(*out));
	len = strlen(text);
	if (len == 0)
		return "expected a host pattern, got an empty string";
	if ((err = check_bytes(text, len)) != NULL)
		return err;
	if (strstr(text, "://") != NULL)
		return "expected a host name, not a URL: drop the scheme (\"https://\")";
	if (strchr(text, '/') != NULL)
		return "expected a host name without a path";
	if ((err = authority_split(text, len, &a)) != NULL)
		return err;
	out->port = a.has_port ? a.port : 0;
	/* Bracketed: an IPv6 literal, nothing else. */
	if (a.bracketed) {
		err = parse_v6(a.host, a.host_len, out->addr, out->host, sizeof(out->host));
		if (err == NULL)
			out->kind = HOSTPAT_IPV6;
		return err;
	}
	host = a.host;
	hlen = a.host_len;
	if (hlen == 1 && host[0] == '*') {
		if (!allow_any)
			return "expected a host name or a *.domain pattern (a bare \"*\" is not "
			       "accepted here)";
		out->kind = HOSTPAT_ANY;
		out->host[0] = '*';
		return NULL;
	}
	if (host[0] == '*') {
		if (hlen < 2 || host[1] != '.')
			return "expected '*' only as the whole leftmost label, as in *.example.com";
		wildcard = true;
		host += 2;
		hlen -= 2;
		if (hlen == 0 || (hlen == 1 && host[0] == '.'))
			return "expected a domain after \"*.\", as in *.example.com";
	}
	return parse_hostname(host, hlen, wildcard, out);
}

/*
 * Contract in policy.h. On error out is left holding an empty string (when
 * outlen allows). Pure; callable from callbacks.
 */
const char *policy_host_normalize(const char *in, size_t len, char *out, size_t outlen)
{
	char buf[POLICY_HOST_MAX + 2];
	uint8_t addr[16];
	const char *err;
	size_t i;
	int num;

	if (outlen > 0)
		out[0] = '\0';
	if (outlen < POLICY_HOST_MAX + 1)
		return "internal error: host output buffer too small";
	if (len == 0)
		return "expected a host, got an empty string";
	if (memchr(in, '\0', len) != NULL)
		return "expected a host without NUL bytes";
	if ((err = check_bytes(in, len)) != NULL)
		return err;

	if (in[0] == '[') {
		if (len < 2 || in[len - 1] != ']')
			return "expected ']' closing the IPv6 literal";
		return parse_v6(in + 1, len - 2, addr, out, outlen);
	}
	if (len > POLICY_HOST_MAX + 1)
		return "expected a host name of at most 253 characters";
	for (i = 0; i < len; i++)
		buf[i] = ascii_lower(in[i]);
	if (buf[len - 1] == '.')
		len--;
	buf[len] = '\0';

	/* Unbracketed IPv6: the caller has split the port off already. */
	if (memchr(buf, ':', len) != NULL) {
		if (parse_v6(buf, len, addr, out, outlen) == NULL)
			return NULL;
		if (memchr(buf, ':', len) == memrchr(buf, ':', len))
			return "expected a host without a port (the port is passed separately)";
		return "expected a host name or an IP address";
	}
	num = numeric_form(buf, len, addr);
	if (num < 0)
		return "expected a host name or a dotted-quad IPv4 address (four decimal parts "
		       "0-255, no leading zeros; \"127.1\", octal and hex forms are ambiguous)";
	if (num == 0 && (err = check_name(buf, len)) != NULL)
		return err;
	memcpy(out, buf, len + 1);
	return NULL;
}

/*
 * Copies host (without brackets or one trailing dot) into buf, for the
 * address parsers. Returns false when it cannot be an address.
 */
static bool host_for_addr(const char *host, size_t hl, char *buf, size_t buflen)
{
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		host++;
		hl -= 2;
	}
	if (hl == 0 || hl >= buflen)
		return false;
	memcpy(buf, host, hl);
	buf[hl] = '\0';
	return true;
}

/*
 * Contract in policy.h. The host is expected normalised
 * (policy_host_normalize()); for robustness the comparison still ignores
 * case, one trailing dot and IPv6 brackets. A DNS-name pattern never
 * matches an IP-literal host and an address pattern never matches a name.
 * IPv4-mapped IPv6 hosts do not match IPv4 patterns here: they are a
 * different spelling the resolved-address guard deals with. Pure.
 */
bool policy_hostpat_match(const struct policy_hostpat *pat, const char *host, uint16_t port)
{
	char buf[V6TEXT_MAX + 1];
	uint8_t addr[16];
	const char *last;
	size_t hl, sl;
	bool is_ip;

	if (pat->port != 0 && pat->port != port)
		return false;
	if (pat->kind == HOSTPAT_ANY)
		return true;

	hl = strnlen(host, POLICY_HOST_MAX + 3);
	if (hl > 0 && host[hl - 1] == '.')
		hl--;
	if (hl == 0 || hl > POLICY_HOST_MAX + 2)
		return false;
	/* An address has a ':' (IPv6) or a numeric last label (IPv4). */
	last = host;
	for (sl = 0; sl < hl; sl++)
		if (host[sl] == '.')
			last = host + sl + 1;
	is_ip = memchr(host, ':', hl) != NULL || label_is_numeric(last, hl - (size_t)(last - host));

	switch (pat->kind) {
	case HOSTPAT_ANY:
		return true;
	case HOSTPAT_EXACT:
		return !is_ip && strlen(pat->host) == hl && strncasecmp(pat->host, host, hl) == 0;
	case HOSTPAT_WILDCARD:
		sl = strlen(pat->host);
		return !is_ip && hl > sl + 1 && host[hl - sl - 1] == '.' &&
		       strncasecmp(pat->host, host + hl - sl, sl) == 0;
	case HOSTPAT_IPV4:
		return is_ip && host_for_addr(host, hl, buf, sizeof(buf)) &&
		       inet_pton(AF_INET, buf, addr) == 1 && memcmp(addr, pat->addr, 4) == 0;
	case HOSTPAT_IPV6:
		return is_ip && host_for_addr(host, hl, buf, sizeof(buf)) &&
		       inet_pton(AF_INET6, buf, addr) == 1 && memcmp(addr, pat->addr, 16) == 0;
	}
	return false;
}

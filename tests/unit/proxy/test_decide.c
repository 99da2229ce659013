/*
 * test_decide.c - the pure parts of proxy/decide.c (suite
 * "proxy_decide"): whether a Host field inside a terminated tunnel names
 * the CONNECT target (conn_host_names_target(), which parses with
 * target_parse_connect()), and conn_verdict(), the checks HTTP/1.1 and
 * HTTP/2 requests share: each refusal's status, rule and exact reason
 * (the integration suites and stderr readers match them), their order,
 * and what an allowed request carries on. The .c file is included for
 * its statics.
 */
#include "proxy/decide.c"

#include "tests/support/testlib.h"

/* A connection's view of t (conn_target): its strings point into t, so t
 * must outlive it; a ring, so a few may be used at once. */
static const struct conn_target *as_ct(const struct target *t)
{
	static struct conn_target ring[8];
	static unsigned next;
	struct conn_target *c = &ring[next++ % 8];

	memset(c, 0, sizeof(*c));
	c->host = t->host;
	c->authority = t->authority;
	c->port = t->port;
	c->is_ip = t->is_ip;
	c->is_ipv6 = t->is_ipv6;
	c->path = t->path;
	c->path_len = t->path_len;
	return c;
}

struct host_case {
	const char *host; /* the Host field value */
	bool names;       /* names example.com:443 */
};

static void check_cases(const struct target *t, const struct host_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool got = conn_host_names_target(cases[i].host, strlen(cases[i].host), as_ct(t));

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

/*
 * The form clients send is taken without a parse (names_target_as_
 * normalised()), never where the parse would refuse it: each value
 * against each target, the shortcut's yes is the parse's yes; and a
 * target on another port than 443 is named with its port only.
 */
static void test_host_names_shortcut(void)
{
	static const char *const targets[] = {"example.com:443", "example.com:8443", "127.0.0.1:443",
					      "127.0.0.1:8080", "[2001:db8::1]:443", "a.b:1"};
	static const char *const values[] = {
		"example.com",       "example.com:443",   "example.com:8443",  "example.com:08443",
		"example.com:84430", "example.com:8443x", "example.com.:8443", "example.comm:8443",
		"example.co:8443",   "Example.com:8443",  "example.com:",      "example.com:0",
		"127.0.0.1",         "127.0.0.1:443",     "127.0.0.1:8080",    "127.0.0.1:80800",
		"127.0.0.1.:8080",   "127.0.0.10:8080",   "2001:db8::1",       "[2001:db8::1]",
		"[2001:db8::1]:443", "a.b:1",             "a.b:01",            "a.b",
		"a.b:65537",         "",                  ":",                 "a.b: 1",
	};
	static const struct host_case port8443[] = {
		{"example.com:8443", true}, {"EXAMPLE.COM.:8443", true}, {"example.com", false},
		{"example.com:443", false}, {"example.com:84430", false}, {"example.com:8443 ", false},
	};
	struct target t;
	unsigned shortcut = 0;

	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		CU_ASSERT_PTR_NULL_FATAL(target_parse_connect(targets[i], strlen(targets[i]), &t));
		for (size_t j = 0; j < sizeof(values) / sizeof(values[0]); j++) {
			bool fast = names_target_as_normalised(values[j], strlen(values[j]), as_ct(&t));
			bool parsed = names_target_parsed(values[j], strlen(values[j]), as_ct(&t));

			ROW(!fast || parsed, "Host %s, target %s: the shortcut says it names it, the parse does not",
			    values[j], targets[i]);
			shortcut += fast;
		}
	}
	/* the shortcut took the forms clients send: host alone on 443, host:port (7 pairs) */
	CU_ASSERT_EQUAL(shortcut, 7);
	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("example.com:8443", 16, &t));
	check_cases(&t, port8443, sizeof(port8443) / sizeof(port8443[0]));
}

/* A value longer than any authority is refused without a copy. */
static void test_host_too_long(void)
{
	char big[TARGET_AUTHORITY_MAX + 64];
	struct target t;

	memset(big, 'a', sizeof(big));
	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect("example.com:443", 15, &t));
	CU_ASSERT_FALSE(conn_host_names_target(big, sizeof(big), as_ct(&t)));
}

/* ---- conn_verdict() ------------------------------------------------------ */

static policy_t *verdict_policy(void)
{
	static const char yaml[] = "network:\n"
				   "  allowedDomains: [\"example.com\", \"open.example\"]\n"
				   "  allowedMethods:\n"
				   "    example.com: [GET, OPTIONS]\n";
	unsigned n = 0;

	return policy_load_buffer("verdict.yaml", yaml, sizeof(yaml) - 1, stderr, &n);
}

/* A request inside a tunnel to host:443 (tgt filled): GET /p, no Host. */
static void tunnel_facts(struct req_facts *f, struct target *t, const char *host, const policy_t *p)
{
	char a[300];

	(void)snprintf(a, sizeof(a), "%s:443", host);
	CU_ASSERT_PTR_NULL_FATAL(target_parse_connect(a, strlen(a), t));
	memset(f, 0, sizeof(*f));
	f->method = "GET";
	f->path = "/p?q=1";
	f->path_len = 6;
	f->tgt = as_ct(t);
	f->tunnel = true;
	f->sni = "";
	f->pol = p;
}

/* conn_verdict() refuses f with this status, rule and reason. */
static void want_refusal(const struct req_facts *f, int status, const char *xerr, const char *rule,
			 const char *reason)
{
	struct verdict v;
	bool ok = conn_verdict(f, &v);

	if (ok || v.status != status || strcmp(v.reason, reason) != 0)
		fprintf(stderr, "verdict %d %d '%s', expected %d '%s'\n", ok, v.status, v.reason, status, reason);
	CU_ASSERT_FALSE(ok);
	CU_ASSERT_EQUAL(v.status, status);
	CU_ASSERT_STRING_EQUAL(v.reason, reason);
	CU_ASSERT_STRING_EQUAL(v.kind, "request");
	CU_ASSERT(xerr == NULL ? v.xerr == NULL : v.xerr != NULL && strcmp(v.xerr, xerr) == 0);
	CU_ASSERT(rule == NULL ? v.rule == NULL : v.rule != NULL && strcmp(v.rule, rule) == 0);
}

/* TRACE and TRACK everywhere, CONNECT and a target not in origin form
 * inside a tunnel: each refusal's text, and which comes first. */
static void test_verdict_form(void)
{
	policy_t *p = verdict_policy();
	struct req_facts f;
	struct target t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	tunnel_facts(&f, &t, "example.com", p);
	f.method = "TRACE";
	f.nhost = 2; /* the method comes first */
	want_refusal(&f, 405, NULL, NULL, "passavant: TRACE refused: method not allowed through the proxy");
	f.method = "TRACK";
	f.tgt = NULL; /* plain HTTP before its target is parsed: not judged */
	f.tunnel = false;
	{
		struct verdict v;

		CU_ASSERT_TRUE(conn_verdict(&f, &v));
	}
	/* then refused once it is, its host known for the audit (round
	 * 36, N1: "host":null) */
	f.tgt = as_ct(&t);
	want_refusal(&f, 405, NULL, NULL, "passavant: TRACK refused: method not allowed through the proxy");
	tunnel_facts(&f, &t, "example.com", p);
	f.method = "CONNECT";
	f.path = "example.com:443";
	f.path_len = 15;
	want_refusal(&f, 400, NULL, NULL, "passavant: CONNECT inside the TLS tunnel to example.com:443 refused");
	f.path = NULL; /* HTTP/2: CONNECT without :path */
	want_refusal(&f, 400, NULL, NULL, "passavant: CONNECT inside the TLS tunnel to example.com:443 refused");
	f.method = "GET";
	want_refusal(&f, 400, NULL, NULL,
		     "passavant: GET (no :path): a request inside a tunnel must have an origin-form target");
	f.path = "http://other.example/x"; /* not NUL-terminated where the length ends */
	f.path_len = 20;
	want_refusal(&f, 400, NULL, NULL,
		     "passavant: GET http://other.example: a request inside a tunnel must have an origin-form target");
	f.path = "*";
	f.path_len = 1;
	want_refusal(&f, 400, NULL, NULL, "passavant: GET *: a request inside a tunnel must have an origin-form target");
	f.path = "";
	f.path_len = 0;
	want_refusal(&f, 400, NULL, NULL, "passavant: GET : a request inside a tunnel must have an origin-form target");
	policy_free(p);
}

/* Host, :authority and SNI inside a tunnel (421 naming the check), more
 * than one Host (400), and their order. */
static void test_verdict_host(void)
{
	policy_t *p = verdict_policy();
	struct req_facts f;
	struct target t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	tunnel_facts(&f, &t, "example.com", p);
	f.nhost = 2;
	f.host = "example.com";
	f.host_len = 11;
	f.sni_mismatch = true;
	want_refusal(&f, 400, NULL, NULL, "passavant: GET https://example.com:443/p?q=1: more than one Host field");
	f.nhost = 1;
	f.host = "open.example:443x"; /* the length ends the value */
	f.host_len = 16;
	want_refusal(&f, 421, NULL, CONN_RULE_HOST_TUNNEL,
		     "passavant: GET https://example.com:443/p?q=1: Host open.example:443 does not name the CONNECT "
		     "target example.com:443");
	f.intercepted = true;
	want_refusal(&f, 421, NULL, CONN_RULE_HOST_INTERCEPT,
		     "passavant: GET https://example.com:443/p?q=1: Host open.example:443 does not name the intercepted "
		     "target example.com:443");
	f.intercepted = false;
	/* :authority is judged before Host, and named when both are wrong. */
	f.authority = "other.example";
	want_refusal(&f, 421, NULL, CONN_RULE_HOST_TUNNEL,
		     "passavant: GET https://example.com:443/p?q=1: Host other.example does not name the CONNECT target "
		     "example.com:443");
	f.authority = "EXAMPLE.com:443";
	want_refusal(&f, 421, NULL, CONN_RULE_HOST_TUNNEL,
		     "passavant: GET https://example.com:443/p?q=1: Host open.example:443 does not name the CONNECT "
		     "target example.com:443");
	f.host = "example.com";
	f.host_len = 11;
	f.sni = "open.example";
	want_refusal(&f, 421, NULL, CONN_RULE_SNI,
		     "passavant: GET https://example.com:443/p?q=1: TLS server name open.example does not name the "
		     "CONNECT target example.com:443");
	/* Plain HTTP: two Host fields are refused, one naming another host
	 * is not (the URL decides), nor is the SNI looked at. */
	CU_ASSERT_PTR_NULL_FATAL(target_parse_absolute("http://open.example?x", 21, &t));
	f.tunnel = false;
	f.authority = NULL;
	f.path = t.path;
	f.path_len = t.path_len;
	f.nhost = 2;
	want_refusal(&f, 400, NULL, NULL, "passavant: GET http://open.example/?x: more than one Host field");
	f.nhost = 1;
	f.host = "bad.example";
	f.host_len = 11;
	{
		struct verdict v;

		CU_ASSERT_TRUE(conn_verdict(&f, &v));
		CU_ASSERT_EQUAL(v.status, 0);
	}
	policy_free(p);
}

/* allowedDomains, then allowedMethods (403 naming the rule); an allowed
 * request carries the allowing rule and whether a method rule applies. */
static void test_verdict_policy(void)
{
	policy_t *p = verdict_policy();
	struct req_facts f;
	struct verdict v;
	struct target t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	tunnel_facts(&f, &t, "denied.example", p);
	CU_ASSERT_FALSE(conn_verdict(&f, &v));
	CU_ASSERT_EQUAL(v.status, 403);
	CU_ASSERT_TRUE(v.decided);
	CU_ASSERT(v.xerr != NULL && strcmp(v.xerr, "blocked-by-sandbox-runtime") == 0);
	CU_ASSERT(v.rule != NULL && strncmp(v.reason, "passavant: GET https://denied.example:443/p?q=1 refused by ", 59) == 0 &&
		  strcmp(v.reason + 59, v.rule) == 0);
	tunnel_facts(&f, &t, "example.com", p);
	f.method = "POST";
	CU_ASSERT_FALSE(conn_verdict(&f, &v));
	CU_ASSERT_EQUAL(v.status, 403);
	CU_ASSERT_TRUE(v.decided);
	CU_ASSERT(v.rule != NULL && strstr(v.rule, "allowedMethods") != NULL);
	CU_ASSERT(v.rule != NULL && strncmp(v.reason, "passavant: POST https://example.com:443/p?q=1 refused by ", 57) == 0 &&
		  strcmp(v.reason + 57, v.rule) == 0);
	f.method = "GET";
	CU_ASSERT_TRUE(conn_verdict(&f, &v));
	CU_ASSERT_EQUAL(v.status, 0);
	CU_ASSERT_TRUE(v.decided && v.restricted && v.form_ok);
	CU_ASSERT(v.rule != NULL && strstr(v.rule, "allowedDomains") != NULL);
	f.method = "OPTIONS";
	f.path = "*";
	f.path_len = 1;
	CU_ASSERT_TRUE(conn_verdict(&f, &v));
	tunnel_facts(&f, &t, "open.example", p);
	f.method = "DELETE";
	CU_ASSERT_TRUE(conn_verdict(&f, &v));
	CU_ASSERT_FALSE(v.restricted);
	/* A refusal before the policy leaves the rule alone. */
	f.method = "TRACE";
	CU_ASSERT_FALSE(conn_verdict(&f, &v));
	CU_ASSERT_FALSE(v.decided);
	policy_free(p);
}

/* The credential refusals: 403, the rule written where the caller keeps
 * it, the reason both protocols send. */
static void test_verdict_credentials(void)
{
	char rule[64];
	struct verdict v;

	conn_verdict_real(&v, "GET https://example.com:443/[redacted]", "gh", "a header", rule, sizeof(rule));
	CU_ASSERT_EQUAL(v.status, 403);
	CU_ASSERT_TRUE(v.decided);
	CU_ASSERT_STRING_EQUAL(rule, "credentials gh: real value");
	CU_ASSERT_PTR_EQUAL(v.rule, rule);
	CU_ASSERT(v.xerr != NULL && strcmp(v.xerr, "blocked-by-sandbox-runtime") == 0);
	CU_ASSERT_STRING_EQUAL(v.reason, "passavant: GET https://example.com:443/[redacted] refused by credentials gh: "
					 "real value: a real value of gh is on its way out in a header (the sandbox "
					 "should never hold one)");
	conn_verdict_real(&v, "CONNECT x:443", NULL, "the request target", rule, sizeof(rule));
	CU_ASSERT_STRING_EQUAL(rule, "credentials ?: real value");
	CU_ASSERT_STRING_EQUAL(v.reason, "passavant: CONNECT x:443 refused by credentials ?: real value: a real value "
					 "of a masked credential is on its way out in the request target (the sandbox "
					 "should never hold one)");
	conn_verdict_sentinel(&v, "POST https://other.example:443/x", "credentials gh: hosts", "not an inject host");
	CU_ASSERT_EQUAL(v.status, 403);
	CU_ASSERT_TRUE(v.decided);
	CU_ASSERT(v.rule != NULL && strcmp(v.rule, "credentials gh: hosts") == 0);
	CU_ASSERT_STRING_EQUAL(v.reason, "passavant: POST https://other.example:443/x refused by credentials gh: hosts: "
					 "not an inject host");
}

/*
 * conn_target_set() and its parsers (proxy/conn.c): the host and the
 * authority in one text sized to them, reused while the next fits, grown
 * when it does not; a failed parse leaves the target as it was; the
 * authority made again drops the default port; freed, both are "".
 */
static void test_conn_target(void)
{
	char url[300];
	const char *text;
	conn_t c;

	memset(&c, 0, sizeof(c));
	c.tgt.host = c.tgt.authority = "";
	CU_ASSERT_PTR_NULL_FATAL(conn_target_connect(&c, "Example.COM.:8443", 17));
	CU_ASSERT_STRING_EQUAL(c.tgt.host, "example.com");
	CU_ASSERT_STRING_EQUAL(c.tgt.authority, "example.com:8443");
	CU_ASSERT_EQUAL(c.tgt.port, 8443);
	CU_ASSERT_FALSE(c.tgt.is_ip);
	text = c.tgt.text;
	CU_ASSERT_EQUAL(c.tgt.cap, strlen("example.com") + strlen("example.com:8443") + 2);
	/* a shorter target reuses the text; the path points into the URL */
	snprintf(url, sizeof(url), "http://a.b/x?y");
	CU_ASSERT_PTR_NULL_FATAL(conn_target_absolute(&c, url, strlen(url)));
	CU_ASSERT_PTR_EQUAL(c.tgt.text, text);
	CU_ASSERT_STRING_EQUAL(c.tgt.host, "a.b");
	CU_ASSERT_STRING_EQUAL(c.tgt.authority, "a.b");
	CU_ASSERT_EQUAL(c.tgt.port, 80);
	CU_ASSERT(c.tgt.path == url + 10 && c.tgt.path_len == 4);
	/* a longer one grows it */
	snprintf(url, sizeof(url), "http://%060d.%060d.%060d.example:8080/", 1, 2, 3);
	CU_ASSERT_PTR_NULL(conn_target_absolute(&c, url, strlen(url)));
	CU_ASSERT_EQUAL(strlen(c.tgt.host), 190);
	CU_ASSERT_EQUAL(strlen(c.tgt.authority), 195);
	CU_ASSERT(c.tgt.text != NULL && c.tgt.cap == 190 + 195 + 2);
	/* a failed parse changes nothing */
	CU_ASSERT_PTR_NOT_NULL(conn_target_connect(&c, "no-port", 7));
	CU_ASSERT_EQUAL(strlen(c.tgt.host), 190);
	CU_ASSERT_EQUAL(c.tgt.port, 8080);
	/* the authority again, without the default port; IPv6 in brackets */
	CU_ASSERT_PTR_NULL_FATAL(conn_target_connect(&c, "[2001:DB8::1]:443", 17));
	CU_ASSERT_STRING_EQUAL(c.tgt.host, "2001:db8::1");
	CU_ASSERT_STRING_EQUAL(c.tgt.authority, "[2001:db8::1]:443");
	CU_ASSERT_TRUE(c.tgt.is_ipv6);
	CU_ASSERT_EQUAL_FATAL(conn_target_authority(&c, 443), 0);
	CU_ASSERT_STRING_EQUAL(c.tgt.authority, "[2001:db8::1]");
	CU_ASSERT_STRING_EQUAL(c.tgt.host, "2001:db8::1");
	conn_target_free(&c);
	CU_ASSERT_PTR_NULL(c.tgt.text);
	CU_ASSERT_STRING_EQUAL(c.tgt.host, "");
	CU_ASSERT_STRING_EQUAL(c.tgt.authority, "");
	conn_target_free(&c); /* twice is harmless */
}

TEST_REGISTRAR(proxy_decide_suite)
{
	CU_pSuite s = test_suite("proxy_decide", NULL, NULL);

	test_add(s, "Host names the CONNECT target: names", test_host_names_name);
	test_add(s, "Host names the CONNECT target: IP literals", test_host_names_literals);
	test_add(s, "Host longer than any authority", test_host_too_long);
	test_add(s, "Host in the form clients send: taken without a parse only where the parse agrees", test_host_names_shortcut);
	test_add(s, "verdict: TRACE, TRACK, CONNECT and the origin form", test_verdict_form);
	test_add(s, "verdict: Host, :authority and SNI", test_verdict_host);
	test_add(s, "verdict: allowedDomains and allowedMethods", test_verdict_policy);
	test_add(s, "verdict: a real value, a sentinel out of place", test_verdict_credentials);
	test_add(s, "the connection's target: one text, reused, grown, unchanged on a failed parse", test_conn_target);
}

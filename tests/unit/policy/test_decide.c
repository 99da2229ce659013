/*
 * test_decide.c - table-driven tests of policy/decide.c (SPEC §3.5 steps
 * 1-3: deniedDomains, allowedDomains, excludeDomains, allowedMethods) and
 * of the accessors of policy/access.c.
 *
 * Policies are built by hand through policy_int.h, with the rule strings
 * the loader would build ("<list>: <text>"), so these tests do not depend
 * on the loader.
 */
#include "../../../policy/policy_int.h"
#include "../../support/testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


static bool str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

#define S(x) ((x) != NULL ? (x) : "(null)")

/* ------------------------------------------------------------------ */
/* Hand-built policies                                                  */
/* ------------------------------------------------------------------ */

#define FIX_MAX 32

/* Storage behind one hand-built policy (static: tests are sequential). */
struct fixture {
	struct policy p;
	struct policy_hostent allowed[FIX_MAX], denied[FIX_MAX], excl[FIX_MAX];
	struct policy_method_rule methods[FIX_MAX];
	char *tokv[FIX_MAX][8];
	char tok[FIX_MAX][8][16];
	char text[4 * FIX_MAX][POLICY_HOST_MAX + 8];
	char rule[4 * FIX_MAX][POLICY_HOST_MAX + 32];
	size_t n_str;
};

static struct fixture fx;

static void fx_reset(bool tls_terminate)
{
	memset(&fx, 0, sizeof(fx));
	fx.p.allowed.v = fx.allowed;
	fx.p.denied.v = fx.denied;
	fx.p.tls_exclude.v = fx.excl;
	fx.p.methods = fx.methods;
	fx.p.tls_terminate = tls_terminate;
}

/* Fills e from a pattern text, with the rule "<list>: <text>". */
static void fx_ent(struct policy_hostent *e, const char *list, const char *text)
{
	const char *err = policy_hostpat_parse(text, true, &e->pat);

	if (err != NULL) {
		fprintf(stderr, "fixture pattern \"%s\": %s\n", text, err);
		CU_FAIL_FATAL("fixture pattern refused");
	}
	snprintf(fx.text[fx.n_str], sizeof(fx.text[0]), "%s", text);
	snprintf(fx.rule[fx.n_str], sizeof(fx.rule[0]), "%s: %s", list, text);
	e->text = fx.text[fx.n_str];
	e->rule = fx.rule[fx.n_str];
	fx.n_str++;
}

static void fx_add(struct policy_hostlist *l, const char *list, const char *text)
{
	fx_ent(&l->v[l->n++], list, text);
}

/* Adds an allowedMethods rule; methods is a comma-separated list. */
static void fx_methods(const char *text, const char *methods)
{
	struct policy_method_rule *r = &fx.methods[fx.p.n_methods];
	size_t i = fx.p.n_methods++;
	const char *s = methods;

	fx_ent(&r->host, "allowedMethods", text);
	r->methods = fx.tokv[i];
	while (*s != '\0') {
		size_t n = strcspn(s, ",");

		snprintf(fx.tok[i][r->n_methods], sizeof(fx.tok[0][0]), "%.*s", (int)n, s);
		if (strcmp(fx.tok[i][r->n_methods], "*") == 0)
			r->any_method = true;
		fx.tokv[i][r->n_methods] = fx.tok[i][r->n_methods];
		r->n_methods++;
		s += n;
		if (*s == ',')
			s++;
	}
}

/*
 * The main policy of these tests: an allowlist with wildcards, ports and
 * literals, denies overlapping it, excluded hosts, and method rules of
 * every specificity.
 */
static void fx_main(void)
{
	static const char *const allowed[] = {
		"api.github.com", "*.githubusercontent.com", "example.com:443", "*.example.org",
		"192.0.2.10", "[2001:db8::10]:8443", "secret.example.org", "*.corp.test",
		"pinned.example.org", "*.example.net",
	};
	static const char *const denied[] = {
		"secret.example.org", "*.bad.example.org", "evil.corp.test:443", "192.0.2.10:25",
	};
	size_t i;

	fx_reset(true);
	for (i = 0; i < ARRAY_LEN(allowed); i++)
		fx_add(&fx.p.allowed, "allowedDomains", allowed[i]);
	for (i = 0; i < ARRAY_LEN(denied); i++)
		fx_add(&fx.p.denied, "deniedDomains", denied[i]);
	fx_add(&fx.p.tls_exclude, "excludeDomains", "pinned.example.org");
	fx_add(&fx.p.tls_exclude, "excludeDomains", "*.mtls.corp.test");

	fx_methods("*", "GET,HEAD,OPTIONS");
	fx_methods("*:8080", "POST");
	fx_methods("api.github.com", "GET,POST,PATCH");
	fx_methods("*.example.org", "*");
	fx_methods("upload.example.org", "PUT");
	fx_methods("upload.example.org:8443", "POST");
	fx_methods("*.deep.example.org", "DELETE");
	fx_methods("*.x.deep.example.org", "GET");
	fx_methods("*.corp.test", "GET");
	fx_methods("*.corp.test:8080", "POST");
	fx_methods("*.mtls.corp.test", "*");
	fx_methods("192.0.2.10", "GET,POST");
	fx_methods("[2001:db8::10]", "PUT");
	fx_methods("api.example.net", "GET");
	fx_methods("*.example.net:443", "POST");
	fx_methods("*.a.example.net", "PATCH");
	fx_methods("tok.example.net", "GET,*");
	fx_methods("lower.example.net", "get");
}

/* ------------------------------------------------------------------ */
/* policy_decide                                                        */
/* ------------------------------------------------------------------ */

struct decide_case {
	const char *host;
	uint16_t port;
	enum policy_verdict verdict;
	const char *rule;
	bool terminate_tls;
	bool method_restricted;
};

#define ALLOW POLICY_ALLOW
#define DENY POLICY_DENY
#define NO_ENTRY "network.allowedDomains (no entry matches)"

static const struct decide_case main_cases[] = {
	{ "api.github.com", 443, ALLOW, "allowedDomains: api.github.com", true, true },
	{ "API.GitHub.com", 443, ALLOW, "allowedDomains: api.github.com", true, true },
	{ "api.github.com", 80, ALLOW, "allowedDomains: api.github.com", true, true },
	{ "github.com", 443, DENY, NO_ENTRY, false, false },
	{ "evil-api.github.com", 443, DENY, NO_ENTRY, false, false },
	{ "raw.githubusercontent.com", 443, ALLOW, "allowedDomains: *.githubusercontent.com", true,
	  true },
	{ "a.b.githubusercontent.com", 443, ALLOW, "allowedDomains: *.githubusercontent.com", true,
	  true },
	{ "githubusercontent.com", 443, DENY, NO_ENTRY, false, false },
	{ "example.com", 443, ALLOW, "allowedDomains: example.com:443", true, true },
	{ "example.com", 80, DENY, NO_ENTRY, false, false },
	{ "www.example.com", 443, DENY, NO_ENTRY, false, false },
	{ "www.example.org", 443, ALLOW, "allowedDomains: *.example.org", true, false },
	{ "example.org", 443, DENY, NO_ENTRY, false, false },
	/* deny wins over an exact allow and over a wildcard allow */
	{ "secret.example.org", 443, DENY, "deniedDomains: secret.example.org", false, false },
	{ "secret.example.org", 80, DENY, "deniedDomains: secret.example.org", false, false },
	{ "x.bad.example.org", 443, DENY, "deniedDomains: *.bad.example.org", false, false },
	{ "a.b.bad.example.org", 443, DENY, "deniedDomains: *.bad.example.org", false, false },
	{ "bad.example.org", 443, ALLOW, "allowedDomains: *.example.org", true, false },
	{ "evil.corp.test", 443, DENY, "deniedDomains: evil.corp.test:443", false, false },
	{ "evil.corp.test", 8080, ALLOW, "allowedDomains: *.corp.test", true, true },
	/* literals */
	{ "192.0.2.10", 443, ALLOW, "allowedDomains: 192.0.2.10", true, true },
	{ "192.0.2.10", 25, DENY, "deniedDomains: 192.0.2.10:25", false, false },
	{ "192.0.2.11", 443, DENY, NO_ENTRY, false, false },
	{ "2001:db8::10", 8443, ALLOW, "allowedDomains: [2001:db8::10]:8443", true, true },
	{ "2001:db8::10", 443, DENY, NO_ENTRY, false, false },
	{ "2001:db8::11", 8443, DENY, NO_ENTRY, false, false },
	/* excludeDomains: opaque tunnel, exact and wildcard, apex not excluded */
	{ "pinned.example.org", 443, ALLOW, "allowedDomains: *.example.org", false, false },
	{ "a.mtls.corp.test", 443, ALLOW, "allowedDomains: *.corp.test", false, false },
	{ "mtls.corp.test", 443, ALLOW, "allowedDomains: *.corp.test", true, true },
	/* methods restricted or not */
	{ "upload.example.org", 443, ALLOW, "allowedDomains: *.example.org", true, true },
	{ "a.deep.example.org", 443, ALLOW, "allowedDomains: *.example.org", true, true },
	{ "tok.example.net", 443, ALLOW, "allowedDomains: *.example.net", true, false },
	{ "api.example.net", 443, ALLOW, "allowedDomains: *.example.net", true, true },
};

/* Runs a decide table against the current fixture. */
static void run_decide(const char *name, const struct decide_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct decide_case *c = &cases[i];
		struct policy_decision d;

		policy_decide(&fx.p, c->host, c->port, &d);
		ROW(d.verdict == c->verdict && str_eq(d.rule, c->rule) &&
			    d.terminate_tls == c->terminate_tls &&
			    d.method_restricted == c->method_restricted,
		    "%s row %zu %s:%u: expected %s \"%s\" tls=%d restricted=%d, got %s \"%s\" "
		    "tls=%d restricted=%d",
		    name, i, c->host, c->port, c->verdict == ALLOW ? "ALLOW" : "DENY", S(c->rule),
		    c->terminate_tls, c->method_restricted, d.verdict == ALLOW ? "ALLOW" : "DENY",
		    S(d.rule), d.terminate_tls, d.method_restricted);
	}
}

static void test_decide_main(void)
{
	fx_main();
	run_decide("decide", main_cases, ARRAY_LEN(main_cases));
}

/* tlsTerminate off: nothing is terminated, the rest is unchanged. */
static const struct decide_case noterm_cases[] = {
	{ "api.github.com", 443, ALLOW, "allowedDomains: api.github.com", false, true },
	{ "www.example.org", 443, ALLOW, "allowedDomains: *.example.org", false, false },
	{ "pinned.example.org", 443, ALLOW, "allowedDomains: *.example.org", false, false },
	{ "secret.example.org", 443, DENY, "deniedDomains: secret.example.org", false, false },
	{ "github.com", 443, DENY, NO_ENTRY, false, false },
};

static void test_decide_noterm(void)
{
	fx_main();
	fx.p.tls_terminate = false;
	run_decide("decide tlsTerminate=false", noterm_cases, ARRAY_LEN(noterm_cases));
}

/* allowedDomains "*" with denies; no method rules at all. */
static const struct decide_case anyallow_cases[] = {
	{ "anything.test", 443, ALLOW, "allowedDomains: *", true, false },
	{ "192.0.2.1", 80, ALLOW, "allowedDomains: *", true, false },
	{ "2001:db8::1", 443, ALLOW, "allowedDomains: *", true, false },
	{ "x.evil.test", 443, DENY, "deniedDomains: *.evil.test", false, false },
	{ "evil.test", 443, ALLOW, "allowedDomains: *", true, false },
	{ "::1", 443, DENY, "deniedDomains: [::1]", false, false },
	{ "127.0.0.1", 80, DENY, "deniedDomains: 127.0.0.1", false, false },
	{ "smtp.test", 25, DENY, "deniedDomains: *:25", false, false },
};

/* Raw hosts a careless caller might pass (an SNI, a Host header): never
 * matched by a wildcard or by "*" unless they normalise. */
#define BAD_HOST "host is not a valid DNS name or IP literal"
static const struct decide_case raw_cases[] = {
	{ "x..evil.test", 443, DENY, BAD_HOST, false, false },
	{ "x..good.test", 443, DENY, BAD_HOST, false, false },
	{ "evil.com/x.good.test", 443, DENY, BAD_HOST, false, false },
	{ "a b.good.test", 443, DENY, BAD_HOST, false, false },
	{ "user@x.good.test", 443, DENY, BAD_HOST, false, false },
	{ "127.1", 80, DENY, BAD_HOST, false, false },
	{ "[::1]", 443, DENY, "deniedDomains: [::1]", false, false },
	{ "X.GOOD.TEST.", 443, ALLOW, "allowedDomains: *", true, false },
	{ "", 443, DENY, BAD_HOST, false, false },
};

static void test_decide_raw(void)
{
	const char *rule = "x";
	char longhost[600];

	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "*");
	fx_add(&fx.p.denied, "deniedDomains", "*.evil.test");
	fx_add(&fx.p.denied, "deniedDomains", "[::1]");
	run_decide("decide raw hosts", raw_cases, ARRAY_LEN(raw_cases));
	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "*.good.test");
	fx_methods("*.good.test", "GET");
	run_decide("decide raw hosts, wildcard", raw_cases + 1, 4);
	CU_ASSERT_FALSE(policy_method_allowed(&fx.p, "x..good.test", 443, "GET", &rule));
	CU_ASSERT_STRING_EQUAL(rule, BAD_HOST);
	CU_ASSERT_TRUE(policy_method_allowed(&fx.p, "X.Good.Test.", 443, "GET", &rule));
	memset(longhost, 'a', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	CU_ASSERT_FALSE(policy_method_allowed(&fx.p, longhost, 443, "GET", &rule));
}

static void test_decide_anyallow(void)
{
	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "*");
	fx_add(&fx.p.denied, "deniedDomains", "*.evil.test");
	fx_add(&fx.p.denied, "deniedDomains", "[::1]");
	fx_add(&fx.p.denied, "deniedDomains", "127.0.0.1");
	fx_add(&fx.p.denied, "deniedDomains", "*:25");
	run_decide("decide allow-*", anyallow_cases, ARRAY_LEN(anyallow_cases));
}

/* No allowedDomains: no network. deniedDomains "*" beats any allow. */
static const struct decide_case empty_cases[] = {
	{ "example.com", 443, DENY, NO_ENTRY, false, false },
	{ "localhost", 80, DENY, NO_ENTRY, false, false },
	{ "192.0.2.1", 443, DENY, NO_ENTRY, false, false },
};
static const struct decide_case denyall_cases[] = {
	{ "example.com", 443, DENY, "deniedDomains: *", false, false },
	{ "other.test", 443, DENY, "deniedDomains: *", false, false },
};

static void test_decide_empty(void)
{
	fx_reset(true);
	run_decide("decide empty", empty_cases, ARRAY_LEN(empty_cases));
	fx_add(&fx.p.allowed, "allowedDomains", "example.com");
	fx_add(&fx.p.denied, "deniedDomains", "*");
	run_decide("decide deny-*", denyall_cases, ARRAY_LEN(denyall_cases));
}

/* Entries without prebuilt rule strings still yield a rule naming the list. */
static void test_decide_norule(void)
{
	struct policy_decision d;
	const char *rule = "x";

	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "example.com");
	fx_add(&fx.p.denied, "deniedDomains", "bad.example.com");
	fx_methods("example.com", "GET");
	fx.allowed[0].rule = NULL;
	fx.denied[0].rule = NULL;
	fx.methods[0].host.rule = NULL;
	policy_decide(&fx.p, "example.com", 443, &d);
	CU_ASSERT_EQUAL(d.verdict, POLICY_ALLOW);
	CU_ASSERT_STRING_EQUAL(d.rule, "network.allowedDomains");
	policy_decide(&fx.p, "bad.example.com", 443, &d);
	CU_ASSERT_EQUAL(d.verdict, POLICY_DENY);
	CU_ASSERT_STRING_EQUAL(d.rule, "network.deniedDomains");
	CU_ASSERT_FALSE(policy_method_allowed(&fx.p, "example.com", 443, "POST", &rule));
	CU_ASSERT_STRING_EQUAL(rule, "network.allowedMethods");
}

/* ------------------------------------------------------------------ */
/* policy_method_allowed                                                */
/* ------------------------------------------------------------------ */

struct method_case {
	const char *host;
	uint16_t port;
	const char *method;
	bool allowed;
	const char *rule; /* NULL: no pattern matched */
};

#define M(x) "allowedMethods: " x

static const struct method_case method_cases[] = {
	/* exact beats "*" */
	{ "api.github.com", 443, "GET", true, M("api.github.com") },
	{ "api.github.com", 443, "POST", true, M("api.github.com") },
	{ "api.github.com", 443, "PATCH", true, M("api.github.com") },
	{ "api.github.com", 443, "DELETE", false, M("api.github.com") },
	{ "api.github.com", 443, "HEAD", false, M("api.github.com") },
	/* methods are case-sensitive (RFC 9110 §9.1) */
	{ "api.github.com", 443, "post", false, M("api.github.com") },
	{ "api.github.com", 443, "Post", false, M("api.github.com") },
	{ "lower.example.net", 443, "GET", false, M("lower.example.net") },
	{ "lower.example.net", 443, "get", true, M("lower.example.net") },
	/* "*" host pattern: everywhere else */
	{ "raw.githubusercontent.com", 443, "GET", true, M("*") },
	{ "raw.githubusercontent.com", 443, "HEAD", true, M("*") },
	{ "raw.githubusercontent.com", 443, "OPTIONS", true, M("*") },
	{ "raw.githubusercontent.com", 443, "POST", false, M("*") },
	{ "raw.githubusercontent.com", 443, "PUT", false, M("*") },
	{ "192.0.2.99", 443, "GET", true, M("*") },
	{ "2001:db8::99", 443, "POST", false, M("*") },
	/* "*:8080" beats "*" (same pattern, with a port) */
	{ "raw.githubusercontent.com", 8080, "POST", true, M("*:8080") },
	{ "raw.githubusercontent.com", 8080, "GET", false, M("*:8080") },
	/* wildcard with "*" method token: every method */
	{ "www.example.org", 443, "POST", true, M("*.example.org") },
	{ "www.example.org", 443, "DELETE", true, M("*.example.org") },
	{ "www.example.org", 443, "BREW", true, M("*.example.org") },
	{ "deep.example.org", 443, "DELETE", true, M("*.example.org") },
	{ "tok.example.net", 443, "DELETE", true, M("tok.example.net") },
	{ "tok.example.net", 443, "GET", true, M("tok.example.net") },
	/* exact beats wildcard */
	{ "upload.example.org", 443, "PUT", true, M("upload.example.org") },
	{ "upload.example.org", 443, "POST", false, M("upload.example.org") },
	{ "upload.example.org", 443, "GET", false, M("upload.example.org") },
	/* exact with port beats exact without */
	{ "upload.example.org", 8443, "POST", true, M("upload.example.org:8443") },
	{ "upload.example.org", 8443, "PUT", false, M("upload.example.org:8443") },
	/* longest wildcard suffix wins */
	{ "a.deep.example.org", 443, "DELETE", true, M("*.deep.example.org") },
	{ "a.deep.example.org", 443, "GET", false, M("*.deep.example.org") },
	{ "x.deep.example.org", 443, "DELETE", true, M("*.deep.example.org") },
	{ "b.x.deep.example.org", 443, "GET", true, M("*.x.deep.example.org") },
	{ "b.x.deep.example.org", 443, "DELETE", false, M("*.x.deep.example.org") },
	{ "c.b.x.deep.example.org", 443, "GET", true, M("*.x.deep.example.org") },
	/* wildcard with port beats the same wildcard without */
	{ "a.corp.test", 8080, "POST", true, M("*.corp.test:8080") },
	{ "a.corp.test", 8080, "GET", false, M("*.corp.test:8080") },
	{ "a.corp.test", 443, "GET", true, M("*.corp.test") },
	{ "a.corp.test", 443, "POST", false, M("*.corp.test") },
	{ "a.mtls.corp.test", 443, "POST", true, M("*.mtls.corp.test") },
	/* exact (no port) beats wildcard with port; longer suffix beats port */
	{ "api.example.net", 443, "GET", true, M("api.example.net") },
	{ "api.example.net", 443, "POST", false, M("api.example.net") },
	{ "www.example.net", 443, "POST", true, M("*.example.net:443") },
	{ "www.example.net", 443, "GET", false, M("*.example.net:443") },
	{ "www.example.net", 80, "GET", true, M("*") },
	{ "b.a.example.net", 443, "PATCH", true, M("*.a.example.net") },
	{ "b.a.example.net", 443, "POST", false, M("*.a.example.net") },
	/* IP literals rank as exact */
	{ "192.0.2.10", 80, "POST", true, M("192.0.2.10") },
	{ "192.0.2.10", 80, "DELETE", false, M("192.0.2.10") },
	{ "2001:db8::10", 8443, "PUT", true, M("[2001:db8::10]") },
	{ "2001:db8::10", 8443, "GET", false, M("[2001:db8::10]") },
};

/* Each row through policy_method_allowed(), and through the decision of
 * its host (policy_decision_method_allowed(), what a tunnel's requests
 * use): the same answer and rule on an ALLOW, a refusal by the decision's
 * rule on a DENY. Returns how many rows the policy allowed. */
static size_t run_methods(const char *name, const struct method_case *cases, size_t n)
{
	size_t i, allowed_hosts = 0;

	for (i = 0; i < n; i++) {
		const struct method_case *c = &cases[i];
		const char *rule = "unset", *drule = "unset";
		bool got = policy_method_allowed(&fx.p, c->host, c->port, c->method, &rule), dgot;
		struct policy_decision d;

		ROW(got == c->allowed && str_eq(rule, c->rule),
		    "%s row %zu %s %s:%u: expected %s by \"%s\", got %s by \"%s\"", name, i, c->method,
		    c->host, c->port, c->allowed ? "allowed" : "refused", S(c->rule),
		    got ? "allowed" : "refused", S(rule));
		policy_decide(&fx.p, c->host, c->port, &d);
		dgot = policy_decision_method_allowed(&d, c->method, &drule);
		if (d.verdict == POLICY_ALLOW) {
			allowed_hosts++;
			ROW(dgot == c->allowed && str_eq(drule, c->rule),
			    "%s row %zu %s %s:%u by its host's decision: expected %s by \"%s\", got %s by \"%s\"",
			    name, i, c->method, c->host, c->port, c->allowed ? "allowed" : "refused", S(c->rule),
			    dgot ? "allowed" : "refused", S(drule));
		} else {
			ROW(!dgot && str_eq(drule, d.rule),
			    "%s row %zu %s %s:%u: a denied host's decision allowed a method, or named \"%s\"", name,
			    i, c->method, c->host, c->port, S(drule));
		}
	}
	return allowed_hosts;
}

static void test_methods_main(void)
{
	fx_main();
	/* most rows' hosts are allowed: the decision's answer is checked */
	CU_ASSERT(run_methods("methods", method_cases, ARRAY_LEN(method_cases)) > ARRAY_LEN(method_cases) / 2);
	/* rule may be NULL */
	CU_ASSERT_FALSE(policy_method_allowed(&fx.p, "api.github.com", 443, "DELETE", NULL));
	CU_ASSERT_TRUE(policy_method_allowed(&fx.p, "api.github.com", 443, "GET", NULL));
}

/* No "*" rule: a host no pattern matches allows every method, rule NULL. */
static const struct method_case nomatch_cases[] = {
	{ "other.test", 443, "POST", true, NULL },
	{ "other.test", 443, "DELETE", true, NULL },
	{ "192.0.2.1", 80, "PUT", true, NULL },
	{ "api.github.com", 80, "PUT", true, NULL },
	{ "api.github.com", 443, "PUT", false, M("api.github.com:443") },
	{ "github.com", 443, "POST", true, NULL },
};

static void test_methods_nomatch(void)
{
	fx_reset(true);
	fx_methods("api.github.com:443", "GET");
	(void)run_methods("methods no match", nomatch_cases, ARRAY_LEN(nomatch_cases));
	fx_reset(true);
	CU_ASSERT_TRUE(policy_method_allowed(&fx.p, "example.com", 443, "TRACE", NULL));
}

/* ------------------------------------------------------------------ */
/* Accessors (policy/access.c)                                          */
/* ------------------------------------------------------------------ */

static void test_access(void)
{
	static char ca0[] = "/etc/ssl/extra.pem", warn0[] = "p.yaml:3:5: broad wildcard";
	static char fs0[] = "/home/u/.ssh", fs1[] = "/work";
	static char *cav[] = { ca0 }, *warnv[] = { warn0 }, *denyv[] = { fs0 }, *writev[] = { fs1 };
	static char file[] = "/home/u/.config/passavant/policy.yaml", audit[] = "/tmp/a.jsonl";
	struct policy_cred_ent creds[2];

	fx_reset(false);
	memset(creds, 0, sizeof(creds));
	creds[1].pub.kind = CRED_FILE;
	creds[1].pub.name = "~/.npmrc";
	fx.p.file = file;
	fx.p.limits.max_tunnels = 7;
	fx.p.limits.handshake_timeout_ms = 11;
	fx.p.limits.idle_timeout_ms = 13;
	fx.p.limits.max_header_bytes = 17;
	fx.p.extra_ca.v = cav;
	fx.p.extra_ca.n = 1;
	fx.p.allow_unix_sockets = true;
	fx.p.creds = creds;
	fx.p.n_creds = 2;
	fx.p.allow_plaintext_inject = true;
	fx.p.fs[FS_DENY_READ].v = denyv;
	fx.p.fs[FS_DENY_READ].n = 1;
	fx.p.fs[FS_ALLOW_WRITE].v = writev;
	fx.p.fs[FS_ALLOW_WRITE].n = 1;
	fx.p.audit_path = audit;
	fx.p.audit_bodies = AUDIT_BODIES_HEADERS;
	fx.p.warnings.v = warnv;
	fx.p.warnings.n = 1;

	CU_ASSERT_STRING_EQUAL(policy_file(&fx.p), file);
	CU_ASSERT_EQUAL(policy_limits(&fx.p)->max_tunnels, 7);
	CU_ASSERT_EQUAL(policy_limits(&fx.p)->handshake_timeout_ms, 11);
	CU_ASSERT_EQUAL(policy_limits(&fx.p)->idle_timeout_ms, 13);
	CU_ASSERT_EQUAL(policy_limits(&fx.p)->max_header_bytes, 17);
	CU_ASSERT_FALSE(policy_tls_terminate(&fx.p));
	CU_ASSERT_EQUAL(policy_extra_ca_count(&fx.p), 1);
	CU_ASSERT_STRING_EQUAL(policy_extra_ca(&fx.p, 0), ca0);
	CU_ASSERT_PTR_NULL(policy_extra_ca(&fx.p, 1));
	CU_ASSERT_TRUE(policy_allow_unix_sockets(&fx.p));
	CU_ASSERT_STRING_EQUAL(policy_audit_path(&fx.p), audit);
	CU_ASSERT_EQUAL(policy_audit_bodies(&fx.p), AUDIT_BODIES_HEADERS);
	CU_ASSERT_EQUAL(policy_cred_count(&fx.p), 2);
	CU_ASSERT_PTR_EQUAL(policy_cred(&fx.p, 1), &creds[1].pub);
	CU_ASSERT_EQUAL(policy_cred(&fx.p, 1)->kind, CRED_FILE);
	CU_ASSERT_PTR_NULL(policy_cred(&fx.p, 2));
	CU_ASSERT_TRUE(policy_allow_plaintext_inject(&fx.p));
	CU_ASSERT_EQUAL(policy_fs_count(&fx.p, FS_DENY_READ), 1);
	CU_ASSERT_EQUAL(policy_fs_count(&fx.p, FS_ALLOW_READ), 0);
	CU_ASSERT_EQUAL(policy_fs_count(&fx.p, FS_ALLOW_WRITE), 1);
	CU_ASSERT_EQUAL(policy_fs_count(&fx.p, FS_DENY_WRITE), 0);
	CU_ASSERT_EQUAL(policy_fs_count(&fx.p, FS_LIST_COUNT), 0);
	CU_ASSERT_STRING_EQUAL(policy_fs_path(&fx.p, FS_DENY_READ, 0), fs0);
	CU_ASSERT_STRING_EQUAL(policy_fs_path(&fx.p, FS_ALLOW_WRITE, 0), fs1);
	CU_ASSERT_PTR_NULL(policy_fs_path(&fx.p, FS_ALLOW_WRITE, 1));
	CU_ASSERT_PTR_NULL(policy_fs_path(&fx.p, FS_ALLOW_READ, 0));
	CU_ASSERT_PTR_NULL(policy_fs_path(&fx.p, FS_LIST_COUNT, 0));
	CU_ASSERT_EQUAL(policy_warning_count(&fx.p), 1);
	CU_ASSERT_STRING_EQUAL(policy_warning(&fx.p, 0), warn0);
	CU_ASSERT_PTR_NULL(policy_warning(&fx.p, 1));

	fx_reset(true);
	CU_ASSERT_PTR_NULL(policy_file(&fx.p));
	CU_ASSERT_PTR_NULL(policy_audit_path(&fx.p));
	CU_ASSERT_TRUE(policy_tls_terminate(&fx.p));
	CU_ASSERT_EQUAL(policy_cred_count(&fx.p), 0);
	CU_ASSERT_PTR_NULL(policy_cred(&fx.p, 0));
	CU_ASSERT_EQUAL(policy_warning_count(&fx.p), 0);
}

/* ------------------------------------------------------------------ */
/* policy_name_decide (the in-sandbox resolver's question)              */
/* ------------------------------------------------------------------ */

struct name_case {
	const char *host;
	enum policy_name_verdict verdict;
	const char *rule;
};

#define N_OK POLICY_NAME_ALLOWED
#define N_DENIED POLICY_NAME_DENIED
#define N_NOT POLICY_NAME_NOT_ALLOWED
#define N_BAD POLICY_NAME_INVALID
#define NOT_A_NAME "an IP address is not a DNS name"

static const char *verdict_name(enum policy_name_verdict v)
{
	switch (v) {
	case POLICY_NAME_ALLOWED:
		return "ALLOWED";
	case POLICY_NAME_DENIED:
		return "DENIED";
	case POLICY_NAME_NOT_ALLOWED:
		return "NOT_ALLOWED";
	case POLICY_NAME_INVALID:
		return "INVALID";
	}
	return "?";
}

static void run_names(const char *name, const struct name_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct name_case *c = &cases[i];
		const char *rule = "unset";
		enum policy_name_verdict v = policy_name_decide(&fx.p, c->host, &rule);

		ROW(v == c->verdict && str_eq(rule, c->rule),
		    "%s row %zu %s: expected %s \"%s\", got %s \"%s\"", name, i, c->host,
		    verdict_name(c->verdict), S(c->rule), verdict_name(v), S(rule));
	}
}

/* The main fixture: a name allowed on one port only is a name the
 * resolver answers; a deny with a port leaves the name alone unless it
 * covers every allowing entry; a port-less deny wins. */
static const struct name_case main_names[] = {
	{ "api.github.com", N_OK, "allowedDomains: api.github.com" },
	{ "API.GitHub.COM.", N_OK, "allowedDomains: api.github.com" },
	{ "github.com", N_NOT, NO_ENTRY },
	{ "raw.githubusercontent.com", N_OK, "allowedDomains: *.githubusercontent.com" },
	{ "githubusercontent.com", N_NOT, NO_ENTRY },
	{ "example.com", N_OK, "allowedDomains: example.com:443" },
	{ "www.example.com", N_NOT, NO_ENTRY },
	{ "secret.example.org", N_DENIED, "deniedDomains: secret.example.org" },
	{ "x.bad.example.org", N_DENIED, "deniedDomains: *.bad.example.org" },
	{ "bad.example.org", N_OK, "allowedDomains: *.example.org" },
	/* denied on 443 only: still a name (allowed on other ports) */
	{ "evil.corp.test", N_OK, "allowedDomains: *.corp.test" },
	/* IP literals are not names, even allowed ones */
	{ "192.0.2.10", N_BAD, NOT_A_NAME },
	{ "2001:db8::10", N_BAD, NOT_A_NAME },
	{ "[2001:db8::10]", N_BAD, NOT_A_NAME },
	{ "x..example.org", N_BAD, BAD_HOST },
	{ "a b.example.org", N_BAD, BAD_HOST },
	{ "", N_BAD, BAD_HOST },
	{ "127.1", N_BAD, BAD_HOST },
};

/* Every allowing entry has a port, and a deny covers each of those ports:
 * the name can reach nothing, so the resolver must not answer it. */
static const struct name_case port_names[] = {
	{ "api.test", N_DENIED, "deniedDomains: api.test:8443" },
	{ "both.test", N_OK, "allowedDomains: both.test:8080" },
	{ "x.wild.test", N_OK, "allowedDomains: *.wild.test" },
	{ "wild.test", N_NOT, NO_ENTRY },
	{ "smtp.test", N_OK, "allowedDomains: *" },
	{ "x.evil.test", N_DENIED, "deniedDomains: *.evil.test" },
};

static const struct name_case denyall_names[] = {
	{ "example.com", N_DENIED, "deniedDomains: *" },
	{ "other.test", N_DENIED, "deniedDomains: *" },
};

static void test_names(void)
{
	const char *rule = "unset";
	char longhost[300];

	fx_main();
	run_names("names", main_names, ARRAY_LEN(main_names));
	CU_ASSERT_EQUAL(policy_name_decide(&fx.p, "api.github.com", NULL), POLICY_NAME_ALLOWED);

	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "api.test:8443");
	fx_add(&fx.p.allowed, "allowedDomains", "both.test:443");
	fx_add(&fx.p.allowed, "allowedDomains", "both.test:8080");
	fx_add(&fx.p.allowed, "allowedDomains", "*.wild.test");
	fx_add(&fx.p.allowed, "allowedDomains", "*");
	fx_add(&fx.p.denied, "deniedDomains", "api.test:8443");
	fx_add(&fx.p.denied, "deniedDomains", "both.test:443");
	fx_add(&fx.p.denied, "deniedDomains", "*.evil.test");
	fx_add(&fx.p.denied, "deniedDomains", "*:25");
	/* "*" allows api.test too: drop it for the first rows. */
	fx.p.allowed.n = 4;
	run_names("names with ports", port_names, 4);
	fx.p.allowed.n = 5;
	run_names("names with ports, allow *", port_names + 4, 2);

	fx_reset(true);
	run_names("names, no allow", main_names + 2, 1);
	fx_add(&fx.p.allowed, "allowedDomains", "example.com");
	fx_add(&fx.p.denied, "deniedDomains", "*");
	run_names("names, deny *", denyall_names, ARRAY_LEN(denyall_names));

	/* Longer than any name: invalid, never matched by a wildcard. */
	fx_reset(true);
	fx_add(&fx.p.allowed, "allowedDomains", "*.a");
	memset(longhost, 'a', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	longhost[1] = '.';
	CU_ASSERT_EQUAL(policy_name_decide(&fx.p, longhost, &rule), POLICY_NAME_INVALID);
	CU_ASSERT_STRING_EQUAL(rule, BAD_HOST);
}

TEST_REGISTRAR(policy_decide_register)
{
	CU_pSuite s = test_suite("policy_decide", NULL, NULL);

	test_add(s, "decide: precedence table", test_decide_main);
	test_add(s, "decide: tlsTerminate off", test_decide_noterm);
	test_add(s, "decide: allowedDomains *", test_decide_anyallow);
	test_add(s, "decide: raw hosts are normalised or refused", test_decide_raw);
	test_add(s, "decide: no allow entries, deniedDomains *", test_decide_empty);
	test_add(s, "decide: entries without rule strings", test_decide_norule);
	test_add(s, "methods: specificity table", test_methods_main);
	test_add(s, "methods: no pattern matches", test_methods_nomatch);
	test_add(s, "accessors", test_access);
	test_add(s, "names: the resolver's question", test_names);
}

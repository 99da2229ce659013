/*
 * test_config.c - the policy loader (policy/load.c, nodes.c, keytab.c,
 * keys_*.c, paths.c, validate.c, bind.c, lookup.c, default.c) through its
 * public API: every key, every error kind with its FILE:LINE:COL, the
 * lookup order, path expansion, defaults, warnings, and that secret
 * values never show. The acceptance cases run the real binary (`passavant
 * check`). JSON input is test_json.c's, the printer test_print.c's. Over
 * 900 lines: one suite per public entry point, sharing the private HOME
 * fixture, reads better whole than split by line count.
 *
 * Suites: policy_config (loader), policy_config_check (the binary).
 */
#include "../../../base/defaults.h"
#include "loader_test.h"

/* A HOME of our own for the suite, restored afterwards. */
static char *saved_home, *saved_xdg, *saved_pp, *tmp_home, *saved_cwd;

static int suite_init(void)
{
	const char *h = getenv("HOME"), *x = getenv("XDG_CONFIG_HOME"),
		   *pp = getenv("PASSAVANT_POLICY");

	saved_home = h ? strdup(h) : NULL;
	saved_xdg = x ? strdup(x) : NULL;
	saved_pp = pp ? strdup(pp) : NULL;
	saved_cwd = getcwd(NULL, 0);
	tmp_home = test_mkdtemp();
	if (tmp_home == NULL || saved_cwd == NULL)
		return -1;
	setenv("HOME", tmp_home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("PASSAVANT_POLICY");
	return 0;
}

static void restore(const char *name, const char *v)
{
	if (v != NULL)
		setenv(name, v, 1);
	else
		unsetenv(name);
}

static int suite_cleanup(void)
{
	restore("HOME", saved_home);
	restore("XDG_CONFIG_HOME", saved_xdg);
	restore("PASSAVANT_POLICY", saved_pp);
	if (saved_cwd != NULL && chdir(saved_cwd) != 0)
		return -1;
	test_rmtree(tmp_home);
	free(tmp_home);
	free(saved_home);
	free(saved_xdg);
	free(saved_pp);
	free(saved_cwd);
	return 0;
}

/* ------------------------------------------------------------------ */

static void test_defaults(void)
{
	policy_t *p = load_ok("");
	const struct policy_limits *lim = policy_limits(p);
	char *out;

	CU_ASSERT_EQUAL(lim->max_tunnels, 256);
	CU_ASSERT_EQUAL(lim->handshake_timeout_ms, 10000);
	CU_ASSERT_EQUAL(lim->idle_timeout_ms, 60000);
	CU_ASSERT_EQUAL(lim->upstream_keepalive_ms, 5000);
	CU_ASSERT_EQUAL(lim->max_header_bytes, 65536);
	CU_ASSERT_TRUE(policy_tls_terminate(p));
	CU_ASSERT_FALSE(policy_allow_unix_sockets(p));
	CU_ASSERT_FALSE(policy_allow_plaintext_inject(p));
	CU_ASSERT_PTR_NULL(policy_audit_path(p));
	CU_ASSERT_EQUAL(policy_audit_bodies(p), AUDIT_BODIES_NONE);
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 0);
	CU_ASSERT_EQUAL(policy_cred_count(p), 0);
	CU_ASSERT_STRING_EQUAL(policy_file(p), "t.yaml");
	out = printed(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    maxTunnels: 256\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    handshakeTimeoutMs: 10000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    idleTimeoutMs: 60000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    upstreamKeepAliveMs: 5000\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    maxHeaderBytes: 65536\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    enabled: true\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  allowAllUnixSockets: false\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  allowPlaintextInject: false\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  sentinels: stable\n"));
	CU_ASSERT_EQUAL(policy_sentinels(p), POLICY_SENTINELS_STABLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  bodies: none\n"));
	free(out);
	policy_free(p);
	policy_free(NULL); /* a no-op */
}

static void test_network_keys(void)
{
	policy_t *p = load_ok("network:\n"
			      "  allowedDomains: [api.github.com, \"*.Example.ORG.\", \"192.0.2.1:8080\",\n"
			      "                   \"[2001:db8::1]:443\"]\n"
			      "  deniedDomains: [\"*\"]\n"
			      "  allowedMethods:\n"
			      "    \"*\": [get, Head]\n"
			      "    api.github.com: [GET, \"*\"]\n"
			      "  deniedResolvedAddresses: [10.0.0.0/8, \"fd00::/8\", 203.0.113.7]\n"
			      "  limits: {maxTunnels: 3, handshakeTimeoutMs: 4, idleTimeoutMs: 5,\n"
			      "           upstreamKeepAliveMs: 0, maxHeaderBytes: 2048}\n"
			      "  allowAllUnixSockets: true\n");
	struct policy_decision d;

	CU_ASSERT_EQUAL_FATAL(p->allowed.n, 4);
	CU_ASSERT_EQUAL(p->allowed.v[0].pat.kind, HOSTPAT_EXACT);
	CU_ASSERT_EQUAL(p->allowed.v[1].pat.kind, HOSTPAT_WILDCARD);
	CU_ASSERT_STRING_EQUAL(p->allowed.v[1].pat.host, "example.org");
	CU_ASSERT_EQUAL(p->allowed.v[2].pat.kind, HOSTPAT_IPV4);
	CU_ASSERT_EQUAL(p->allowed.v[2].pat.port, 8080);
	CU_ASSERT_EQUAL(p->allowed.v[3].pat.kind, HOSTPAT_IPV6);
	CU_ASSERT_STRING_EQUAL(p->allowed.v[0].rule, "network.allowedDomains: api.github.com");
	CU_ASSERT_EQUAL(p->allowed.v[0].mark.line, 2);
	CU_ASSERT_EQUAL(p->allowed.v[0].mark.col, 20);
	CU_ASSERT_EQUAL_FATAL(p->denied.n, 1);
	CU_ASSERT_EQUAL(p->denied.v[0].pat.kind, HOSTPAT_ANY);
	CU_ASSERT_EQUAL_FATAL(p->n_methods, 2);
	CU_ASSERT_EQUAL_FATAL(p->methods[0].n_methods, 2);
	CU_ASSERT_STRING_EQUAL(p->methods[0].methods[0], "GET");
	CU_ASSERT_STRING_EQUAL(p->methods[0].methods[1], "HEAD");
	CU_ASSERT_FALSE(p->methods[0].any_method);
	CU_ASSERT_TRUE(p->methods[1].any_method);
	CU_ASSERT_EQUAL_FATAL(p->n_denied_addrs, 3);
	CU_ASSERT_EQUAL(p->denied_addrs[0].family, AF_INET);
	CU_ASSERT_EQUAL(p->denied_addrs[0].prefix, 8);
	CU_ASSERT_EQUAL(p->denied_addrs[1].family, AF_INET6);
	CU_ASSERT_EQUAL(p->denied_addrs[1].prefix, 8);
	CU_ASSERT_EQUAL(p->denied_addrs[2].prefix, 32);
	CU_ASSERT_EQUAL(policy_limits(p)->max_tunnels, 3);
	CU_ASSERT_EQUAL(policy_limits(p)->handshake_timeout_ms, 4);
	CU_ASSERT_EQUAL(policy_limits(p)->idle_timeout_ms, 5);
	CU_ASSERT_EQUAL(policy_limits(p)->upstream_keepalive_ms, 0); /* 0 is a value: keep until idle */
	CU_ASSERT_EQUAL(policy_limits(p)->max_header_bytes, 2048);
	CU_ASSERT_TRUE(policy_allow_unix_sockets(p));
	/* The matchers see what the loader built: a deny "*" wins. */
	policy_decide(p, "api.github.com", 443, &d);
	CU_ASSERT_EQUAL(d.verdict, POLICY_DENY);
	policy_free(p);
}

static void test_tls_forms(void)
{
	policy_t *p = load_ok("network:\n  tlsTerminate: false\n");
	char *ca;

	CU_ASSERT_FALSE(policy_tls_terminate(p));
	policy_free(p);
	/* A CA file must exist; "~/ca.pem" is made in the suite's HOME. */
	CU_ASSERT_FATAL(asprintf(&ca, "%s/ca.pem", tmp_home) > 0);
	CU_ASSERT_EQUAL(test_write_file(ca, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	p = load_ok("network:\n"
		    "  allowedDomains: [a.example.com, b.example.com]\n"
		    "  tlsTerminate:\n"
		    "    enabled: true\n"
		    "    excludeDomains: [b.example.com]\n"
		    "    extraCaCertPaths: [~/ca.pem, ~/./ca.pem]\n");
	CU_ASSERT_TRUE(policy_tls_terminate(p));
	CU_ASSERT_EQUAL(p->tls_exclude.n, 1);
	CU_ASSERT_EQUAL_FATAL(policy_extra_ca_count(p), 1); /* the same file once */
	CU_ASSERT_STRING_EQUAL(policy_extra_ca(p, 0), ca);
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:5:22: \"b.example.com\" is tunnelled opaquely"));
	policy_free(p);
	free(ca);
	load_err("network:\n  tlsTerminate: yes\n", 1,
		 "t.yaml:2:17: error: a string \"yes\", expected true, false or a mapping");
	load_err("network:\n  tlsTerminate: {extraCaCertPaths: [/nonexistent/ca.pem]}\n", 1,
		 "t.yaml:2:37: error: \"/nonexistent/ca.pem\" in "
		 "network.tlsTerminate.extraCaCertPaths (No such file or directory), expected a "
		 "readable PEM file");
	load_err("network:\n  tlsTerminate: {excludeDomains: [\"*\"]}\n", 1, "t.yaml:2:35: error:");
}

static void test_credentials(void)
{
	policy_t *p;
	const struct policy_cred *c;

	unsetenv("PV_TEST_NOT_SET");
	p = load_ok("network:\n  allowedDomains: [api.github.com, x.example.com]\n"
		    "credentials:\n"
		    "  envVars:\n"
		    "    - {name: PV_TEST_NOT_SET, mode: mask, injectHosts: [api.github.com],\n"
		    "       injectIn: [header, query]}\n"
		    "    - {name: PV_TEST_DENY, mode: deny}\n"
		    "    - {name: PV_TEST_NOT_SET2, mode: mask}\n"
		    "  files:\n"
		    "    - {path: ~/tok, mode: mask, extract: \"t=(.*)\"}\n"
		    "  allowPlaintextInject: true\n");
	CU_ASSERT_EQUAL_FATAL(policy_cred_count(p), 4);
	c = policy_cred(p, 0);
	CU_ASSERT_EQUAL(c->kind, CRED_ENV);
	CU_ASSERT_STRING_EQUAL(c->name, "PV_TEST_NOT_SET");
	CU_ASSERT_EQUAL(c->mode, CRED_MASK);
	CU_ASSERT_EQUAL(c->inject_in, INJECT_HEADER | INJECT_QUERY);
	CU_ASSERT_EQUAL(c->n_inject_hosts, 1);
	CU_ASSERT_FALSE(c->inject_hosts_defaulted);
	c = policy_cred(p, 1);
	CU_ASSERT_EQUAL(c->mode, CRED_DENY);
	CU_ASSERT_EQUAL(c->n_inject_hosts, 0);
	c = policy_cred(p, 2);
	CU_ASSERT_TRUE(c->inject_hosts_defaulted);
	CU_ASSERT_EQUAL(c->n_inject_hosts, 2);
	CU_ASSERT_EQUAL(c->inject_in, INJECT_HEADER);
	c = policy_cred(p, 3);
	CU_ASSERT_EQUAL(c->kind, CRED_FILE);
	CU_ASSERT_STRING_EQUAL(c->name, "~/tok");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->path);
	CU_ASSERT_EQUAL(strncmp(c->path, tmp_home, strlen(tmp_home)), 0);
	CU_ASSERT_STRING_EQUAL(c->extract, "t=(.*)");
	CU_ASSERT_TRUE(policy_allow_plaintext_inject(p));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:11:25: allowPlaintextInject"));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:8:7: credential PV_TEST_NOT_SET2 has no injectHosts"));
	/* Masked values are not read by the loader any more (mask/ reads and
	 * checks them): no warning about PV_TEST_NOT_SET or ~/tok here. */
	CU_ASSERT_FALSE(has_warning(p, "is not set"));
	policy_free(p);
}

/* credentials.sentinels (SPEC §4.1): stable (default) or per-session;
 * printed as it is; anything else a load error at its place. */
static void test_sentinels_key(void)
{
	policy_t *p = load_ok("credentials:\n  sentinels: per-session\n");
	char *out;

	CU_ASSERT_EQUAL(policy_sentinels(p), POLICY_SENTINELS_PER_SESSION);
	out = printed(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  sentinels: per-session\n"));
	free(out);
	policy_free(p);
	p = load_ok("credentials:\n  sentinels: stable\n");
	CU_ASSERT_EQUAL(policy_sentinels(p), POLICY_SENTINELS_STABLE);
	policy_free(p);
	load_err("credentials:\n  sentinels: persession\n", 1,
		 "t.yaml:2:14: error: a string \"persession\", expected stable or per-session for "
		 "credentials.sentinels");
	load_err("credentials:\n  sentinels: [stable]\n", 1, "t.yaml:2:14: error:");
}

static void test_audit(void)
{
	policy_t *p;
	char *want;

	CU_ASSERT_EQUAL_FATAL(chdir(tmp_home), 0);
	p = load_ok("audit:\n  path: logs/../audit.jsonl\n  bodies: headers\n");
	CU_ASSERT_EQUAL(chdir(saved_cwd), 0);
	CU_ASSERT_FATAL(asprintf(&want, "%s/audit.jsonl", tmp_home) > 0);
	CU_ASSERT_STRING_EQUAL(policy_audit_path(p), want);
	CU_ASSERT_EQUAL(policy_audit_bodies(p), AUDIT_BODIES_HEADERS);
	free(want);
	policy_free(p);
	p = load_ok("audit: {bodies: none}\n");
	CU_ASSERT_PTR_NULL(policy_audit_path(p));
	CU_ASSERT_EQUAL(policy_audit_bodies(p), AUDIT_BODIES_NONE);
	policy_free(p);
	load_err("audit: {path: [a]}\n", 1, "t.yaml:1:15: error: a list, expected a path for audit.path");
	load_err("audit: {paht: a}\n", 1, "(did you mean \"path\"?)");
}

static void test_credential_errors(void)
{
	load_err("credentials:\n  envVars:\n    - {name: X}\n", 1,
		 "t.yaml:3:7: error: a credential without a mode, expected credentials.envVars.mode");
	load_err("credentials:\n  envVars:\n    - {name: 9X, mode: deny}\n", 1,
		 "t.yaml:3:14: error: \"9X\" in credentials.envVars.name, expected a variable name");
	load_err("credentials:\n  envVars:\n    - {name: X, mode: hide}\n", 1,
		 "t.yaml:3:23: error: a string \"hide\", expected deny or mask");
	load_err("credentials:\n  files:\n    - {path: /x, mode: mask, extract: \"abc\"}\n", 1,
		 "t.yaml:3:39: error: \"abc\" in credentials.files.extract, expected a pattern with "
		 "a capture group");
	load_err("credentials:\n  files:\n    - {path: /x, mode: mask, extract: \"(a\"}\n", 1,
		 "t.yaml:3:39: error: \"(a\" in credentials.files.extract (");
	load_err("credentials:\n  files:\n    - {path: /x, mode: mask, extract: \"(a)\\\\1\"}\n", 1,
		 "expected no backreferences");
	/* Found by the fuzzer: glibc regcomp copies the operand of "+" and
	 * {m,n}, so stacked or nested ones grow exponentially. */
	load_err("credentials:\n  files:\n    - {path: /x, mode: mask, extract: \"(a)++++++++++++++\"}\n",
		 1, "expected fewer or smaller repetitions");
	load_err("credentials:\n  files:\n    - {path: /x, mode: mask, extract: \"(a{300})\"}\n", 1,
		 "expected repetition counts of at most 255");
	policy_free(load_ok("credentials:\n  files:\n    - {path: /nonexistent/x, mode: mask,\n"
			    "       extract: \"token: ([0-9a-f]{40})\"}\n"));
	load_err("credentials:\n  envVars:\n    - {name: X, mode: mask, injectIn: [cookie]}\n", 1,
		 "t.yaml:3:40: error: a string \"cookie\", expected header, query or body");
	load_err("credentials:\n  envVars:\n    - {name: X, mode: mask, injectHosts: []}\n", 1,
		 "t.yaml:3:42: error: an empty list, expected at least one host");
	load_err("credentials:\n  envVars:\n    - {name: X, mode: deny, injectIn: [body]}\n", 1,
		 "t.yaml:3:7: error: injectHosts, injectIn or extract on a credential with mode: deny");
	load_err("credentials:\n  envVars:\n    - {name: X, mode: deny}\n    - {name: X, mode: deny}\n",
		 1, "t.yaml:4:7: error: credential X again (first at line 3)");
}

static void test_cross_checks(void)
{
	/* injectHosts must be reachable through allowedDomains... */
	load_err("network: {allowedDomains: [api.github.com]}\n"
		 "credentials:\n  envVars:\n    - {name: X, mode: mask, injectHosts: [github.com]}\n",
		 1, "t.yaml:4:43: error: injectHosts entry \"github.com\" of credential X that no");
	/* ...a wildcard through an equal or broader wildcard, or bare "*"... */
	policy_free(load_ok("network: {allowedDomains: [\"*.github.com\"]}\n"
			    "credentials:\n  envVars:\n"
			    "    - {name: X, mode: mask, injectHosts: [\"*.api.github.com\", "
			    "api.github.com]}\n"));
	policy_free(load_ok("network: {allowedDomains: [\"*\"]}\n"
			    "credentials:\n  envVars:\n"
			    "    - {name: X, mode: mask, injectHosts: [\"*.example.com\"]}\n"));
	load_err("network: {allowedDomains: [\"*.api.github.com\"]}\n"
		 "credentials:\n  envVars:\n"
		 "    - {name: X, mode: mask, injectHosts: [\"*.github.com\"]}\n",
		 1, "t.yaml:4:43: error: injectHosts entry \"*.github.com\"");
	/* ...and not denied. */
	load_err("network: {allowedDomains: [\"*.github.com\"], deniedDomains: [gist.github.com]}\n"
		 "credentials:\n  envVars:\n"
		 "    - {name: X, mode: mask, injectHosts: [gist.github.com]}\n",
		 1, "denied by network.deniedDomains: gist.github.com");
	/* A method-restricted host cannot be tunnelled opaquely. */
	load_err("network:\n  allowedDomains: [a.example.com]\n"
		 "  allowedMethods: {\"*\": [GET]}\n"
		 "  tlsTerminate: {excludeDomains: [a.example.com]}\n",
		 1, "t.yaml:4:35: error: \"a.example.com\" in network.tlsTerminate.excludeDomains "
		    "restricted by network.allowedMethods: *");
	/* ...unless a more specific unrestricted entry covers it. */
	policy_free(load_ok("network:\n  allowedDomains: [a.example.com]\n"
			    "  allowedMethods: {\"*\": [GET], a.example.com: [\"*\"]}\n"
			    "  tlsTerminate: {excludeDomains: [a.example.com]}\n"));
	/* An excluded wildcard may not hide a narrower restriction. */
	load_err("network:\n  allowedDomains: [\"*.example.com\"]\n"
		 "  allowedMethods: {b.example.com: [GET]}\n"
		 "  tlsTerminate: {excludeDomains: [\"*.example.com\"]}\n",
		 1, "covers network.allowedMethods: b.example.com");
	/* Without TLS termination, methods and masking cannot be enforced. */
	load_err("network:\n  allowedMethods: {\"*\": [GET]}\n  tlsTerminate: false\n", 1,
		 "t.yaml:2:20: error: a method restriction on \"*\" with tlsTerminate off");
	load_err("network:\n  tlsTerminate: false\n"
		 "credentials: {envVars: [{name: X, mode: mask}]}\n",
		 1, "credential X with mode: mask and tlsTerminate off");
}

static void test_error_kinds(void)
{
	load_err("network:\n  allowedDomian: []\n", 1,
		 "t.yaml:2:3: error: unknown key \"allowedDomian\", expected a key of network "
		 "(did you mean \"allowedDomains\"?)");
	load_err("allowedDomains: [a.com]\n", 1,
		 "t.yaml:1:1: error: unknown key \"allowedDomains\", expected a top-level key "
		 "(did you mean network.allowedDomains?)");
	load_err("zzz: 1\n", 1, "t.yaml:1:1: error: unknown key \"zzz\", expected a top-level key\n");
	load_err("network:\n  allowedDomains: [a.com]\n  allowedDomains: [b.com]\n", 1,
		 "t.yaml:3:3: error: duplicate key \"allowedDomains\" (first at line 2, column 3)");
	load_err("network: [a]\n", 1,
		 "t.yaml:1:10: error: a list, expected a mapping for network");
	load_err("network:\n  allowedDomains:\n", 1,
		 "t.yaml:2:18: error: an empty value (null), expected a list of host patterns");
	load_err("network:\n  allowedDomains: [\"bad host\"]\n", 1,
		 "t.yaml:2:20: error: \"bad host\" in network.allowedDomains, expected");
	load_err("network:\n  allowedDomains:\n    - [a.com]\n", 1,
		 "expected a host pattern (quote bracketed IPv6 literals");
	load_err("network:\n  allowedMethods: {\"*\": [\"GE T\"]}\n", 1,
		 "t.yaml:2:26: error: \"GE T\" in network.allowedMethods, expected an HTTP method");
	load_err("network:\n  allowedMethods: {\"*\": []}\n", 1,
		 "t.yaml:2:25: error: an empty list, expected at least one HTTP method");
	load_err("network:\n  allowedMethods: {a.com: [GET], A.COM.: [GET]}\n", 1,
		 "t.yaml:2:34: error: \"A.COM.\" in network.allowedMethods again");
	load_err("network:\n  deniedResolvedAddresses: [10.1.0.0/8]\n", 1,
		 "t.yaml:2:29: error: \"10.1.0.0/8\" in network.deniedResolvedAddresses, expected "
		 "the bits after the prefix length to be zero");
	load_err("network:\n  deniedResolvedAddresses: [\"::1/200\", x/8, 1.2.3.4/]\n", 3,
		 "expected a prefix length from 0 to 128");
	load_err("network:\n  limits: {maxTunnels: 0}\n", 1,
		 "t.yaml:2:24: error: a number (0), expected an integer from 1 to 1000000");
	load_err("network:\n  limits: {maxHeaderBytes: 99999999999999999999}\n", 1,
		 "expected an integer from 1024 to 1048576");
	load_err("network:\n  limits: {idleTimeoutMs: -5}\n", 1, "expected an integer from 1 to");
	load_err("network:\n  limits: {upstreamKeepAliveMs: -1}\n", 1, "expected an integer from 0 to 86400000");
	load_err("network:\n  limits: {upstreamKeepAliveMs: 86400001}\n", 1,
		 "expected an integer from 0 to 86400000");
	load_err("network:\n  limits: {upstreamKeepAliveMs: 5s}\n", 1, "expected an integer from 0 to");
	load_err("network:\n  limits: {upstreamKeepaliveMs: 5}\n", 1, "upstreamKeepaliveMs");
	/* 010 is 8 to YAML 1.1 and an error to JSON: neither 10 nor 8 here. */
	load_err("network:\n  limits: {maxTunnels: 010}\n", 1,
		 "t.yaml:2:24: error: a number (010), expected an integer from 1 to 1000000 without "
		 "leading zeros");
	policy_free(load_ok("network:\n  limits: {maxTunnels: 10}\n"));
	load_err("network:\n  allowAllUnixSockets: 1\n", 1,
		 "t.yaml:2:24: error: a number (1), expected true or false");
	load_err("audit: {bodies: full}\n", 1, "t.yaml:1:17: error: a string \"full\", expected none or headers");
	load_err("network:\n  allowedDomains: [a.com\n", 1, "expected valid YAML or JSON");
	load_err("a: &x 1\nb: *x\n", 1, "t.yaml:2:4: error: an alias");
	load_err("network: {}\n---\nnetwork: {}\n", 1, "t.yaml:2:1: error: a second document");
	load_err("- 1\n", 1, "t.yaml:1:1: error: a list, expected a mapping of network");
	load_err("? [a]\n: 1\n", 1, "t.yaml:1:3: error: a list as a key, expected a key name");
	/* Tags: never a silent reinterpretation ("!!binary fi8uc3No" is not
	 * the path "fi8uc3No"); every tagged node is reported; !!str is quoting. */
	load_err("filesystem:\n  denyRead: [!!binary fi8uc3No]\n", 1,
		 "t.yaml:2:14: error: a tag <tag:yaml.org,2002:binary>, expected an untagged value");
	load_err("network: !!map\n  limits: {maxTunnels: !!int 10}\n"
		 "  allowedDomains: !local [a.com]\n",
		 3, "t.yaml:2:24: error: a tag <tag:yaml.org,2002:int>");
	policy_free(load_ok("network:\n  allowedDomains: [!!str a.com]\n"));
	/* Errors are all reported, in file order. */
	load_err("network:\n  bad1: 1\n  allowedDomains: [\"x..y\"]\naudit: {bodies: 3}\n", 3,
		 "t.yaml:2:3: error: unknown key \"bad1\"");
}

static void test_limits_caps(void)
{
	char *big, *deep;
	size_t n = POLICY_FILE_MAX_BYTES + 10, i;
	unsigned nerr;
	char *diag;
	policy_t *p;
	FILE *f;
	size_t dlen;

	big = malloc(n + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, ' ', n);
	big[n] = '\0';
	f = open_memstream(&diag, &dlen);
	p = policy_load_buffer("big.yaml", big, n, f, &nerr);
	fclose(f);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "big.yaml: error: a file of"));
	free(diag);
	free(big);

	deep = malloc(4 * (LDR_MAX_DEPTH + 4) + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
	for (i = 0; i < LDR_MAX_DEPTH + 4; i++)
		deep[i] = '[';
	for (; i < 2 * (LDR_MAX_DEPTH + 4); i++)
		deep[i] = ']';
	deep[i] = '\0';
	load_err(deep, 1, "error: nesting deeper than 32 levels");
	free(deep);

	big = malloc(8 * (LDR_MAX_LIST + 2) + 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	strcpy(big, "network: {allowedDomains: [");
	for (i = 0; i < LDR_MAX_LIST + 1; i++)
		strcat(big, "a.b, ");
	strcat(big, "]}\n");
	load_err(big, 1, "error: more than 4096 entries");
	free(big);
}

/* Resolves with the suite's HOME and the working directory. */
static char *expand(const char *in, const char **err)
{
	char *cwd = getcwd(NULL, 0), *norm = ldr_path_normalize(in, err), *s = NULL;

	if (norm != NULL)
		s = ldr_path_resolve(norm, getenv("HOME"), cwd, err);
	free(norm);
	free(cwd);
	return s;
}

static void test_paths(void)
{
	const char *err;
	char *s, *want;

	s = expand("~", &err);
	CU_ASSERT_STRING_EQUAL(s, tmp_home);
	free(s);
	s = expand("~/a//b/./c/../d/", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(asprintf(&want, "%s/a/b/d", tmp_home) > 0, 1);
	CU_ASSERT_STRING_EQUAL(s, want);
	free(want);
	free(s);
	s = expand("/../../x/..", &err);
	CU_ASSERT_STRING_EQUAL(s, "/");
	free(s);
	CU_ASSERT_EQUAL_FATAL(chdir(tmp_home), 0);
	s = expand("sub/../w", &err);
	CU_ASSERT_EQUAL_FATAL(asprintf(&want, "%s/w", tmp_home) > 0, 1);
	CU_ASSERT_STRING_EQUAL(s, want);
	free(want);
	free(s);
	s = expand(".", &err);
	CU_ASSERT_STRING_EQUAL(s, tmp_home);
	free(s);
	CU_ASSERT_EQUAL(chdir(saved_cwd), 0);
	CU_ASSERT_PTR_NULL(expand("~root/x", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "~user"));
	CU_ASSERT_PTR_NULL(expand("", &err));
	/* A relative home cannot expand "~" (the CLI falls back to the
	 * password database only when $HOME is unset or empty). */
	setenv("HOME", "relative/home", 1);
	CU_ASSERT_PTR_NULL(expand("~/x", &err));
	setenv("HOME", tmp_home, 1);
	/* The loader keeps three forms, the same on every machine. */
	static const char *const forms[][2] = {
		{"~", "~"}, {"~/", "~"}, {"~/a/./b//", "~/a/b"}, {"~/a/../..", "~/.."},
		{".", "."}, {"./x/", "x"}, {"a/../../b", "../b"}, {"sub/..", "."},
		{"/a/../../b", "/b"}, {"//", "/"}, {"../../x", "../../x"},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		s = ldr_path_normalize(forms[i][0], &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		if (strcmp(s, forms[i][1]) != 0)
			fprintf(stderr, "\n%s: got %s, wanted %s\n", forms[i][0], s, forms[i][1]);
		CU_ASSERT_STRING_EQUAL(s, forms[i][1]);
		free(s);
	}
	/* "~" against the given home (what policy_bind() does), nothing else read. */
	{
		static const char *const homes[][3] = {
			{"~/.ssh", "/h/u", "/h/u/.ssh"},
			{"~", "/h/u/", "/h/u"},
			{"~/x", "relative", NULL},
			{"~u/x", "/h/u", NULL},
		};
		for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
			s = ldr_path_resolve(homes[i][0], homes[i][1], NULL, &err);
			if (homes[i][2] == NULL) {
				CU_ASSERT_PTR_NULL(s);
			} else {
				CU_ASSERT_PTR_NOT_NULL_FATAL(s);
				CU_ASSERT_STRING_EQUAL(s, homes[i][2]);
			}
			free(s);
		}
	}
	setenv("HOME", tmp_home, 1);
	load_err("filesystem: {allowWrite: [\"\"]}\n", 1,
		 "t.yaml:1:27: error: a string \"\", expected a path");
	/* sandbox-runtime expands globs; taken literally, "**\/.env" would deny
	 * nothing, silently. Every list and credential file path refuses them. */
	load_err("{\"filesystem\": {\"denyRead\": [\"**/.env\", \"~/.config/*.json\"],\n"
		 " \"denyWrite\": [\"/srv/?\"], \"allowRead\": [\"*\"], \"allowWrite\": [\"/a*\"]},\n"
		 " \"credentials\": {\"files\": [{\"path\": \"**/.npmrc\", \"mode\": \"deny\"}]}}\n",
		 6, "t.yaml:1:30: error: \"**/.env\" in filesystem.denyRead, expected a literal path, "
		    "not a glob pattern");
	/* audit.path too: it is a write deny, and the printed policy must load
	 * again (found by the fuzzer's round trip). */
	load_err("audit: {path: \"/tmp/?audit.jsonl\"}\n", 1,
		 "t.yaml:1:15: error: \"/tmp/?audit.jsonl\" in audit.path, expected a literal path");
	load_err("credentials:\n  files: [{path: \"~/.aws/*\", mode: deny}]\n", 1,
		 "t.yaml:2:18: error: \"~/.aws/*\" in credentials.files.path, expected a literal path");
	/* "[...]" is a class to sandbox-runtime: id[12].pem meant id1.pem and
	 * id2.pem, which a literal path would leave readable; a lone bracket
	 * is refused the same way (sandbox-runtime reads it as a glob too). */
	load_err("filesystem: {denyRead: [\"~/keys/id[12].pem\", \"/srv/[wip] app\"],\n"
		 "  denyWrite: [\"/srv/a]\"], allowWrite: [\"/srv/[\"]}\n",
		 4, "t.yaml:1:25: error: \"~/keys/id[12].pem\" in filesystem.denyRead, expected a "
		    "literal path, not a glob pattern");
}

static void test_filesystem(void)
{
	policy_t *p;
	char *ssh, *aws, *rc, *self;

	CU_ASSERT_FATAL(asprintf(&ssh, "%s/.ssh", tmp_home) > 0);
	CU_ASSERT_FATAL(asprintf(&aws, "%s/.aws", tmp_home) > 0);
	CU_ASSERT_FATAL(asprintf(&rc, "%s/.bashrc", tmp_home) > 0);
	self = expand("t.yaml", &(const char *){NULL});
	p = load_ok("filesystem:\n  denyRead: [/srv/x]\n  allowRead: [~/.aws, /srv/x/y]\n"
		    "  allowWrite: [/tmp/w/, /tmp/w]\n  denyWrite: [.env]\n");
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_READ, "/srv/x"));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_READ, ssh));  /* a credential store, added */
	CU_ASSERT_FALSE(fs_has(p, FS_DENY_READ, aws)); /* named in allowRead */
	CU_ASSERT_TRUE(fs_has(p, FS_ALLOW_READ, "/srv/x/y"));
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 1); /* deduplicated */
	CU_ASSERT_TRUE(fs_has(p, FS_ALLOW_WRITE, "/tmp/w"));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, rc));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, self)); /* the policy file itself */
	policy_free(p);
	/* The audit log and the extra CA roots: a sandbox writing them could
	 * rewrite the record of its egress or plant a root for the next run. */
	CU_ASSERT_EQUAL_FATAL(test_write_file("/tmp/pv-test-extra-ca.pem", "x\n", 2), 0);
	p = load_ok("network:\n  tlsTerminate: {extraCaCertPaths: [/tmp/pv-test-extra-ca.pem]}\n"
		    "audit: {path: /srv/log/../audit.jsonl}\n");
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, "/srv/audit.jsonl"));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, "/tmp/pv-test-extra-ca.pem"));
	policy_free(p);
	/* A credential file in mode deny is a read deny; a masked one is not
	 * (the sandbox sees its sentinel copy). */
	p = load_ok("credentials:\n  files:\n    - {path: /srv/x/../token, mode: deny}\n"
		    "    - {path: /srv/masked, mode: mask, injectHosts: [a.example.com]}\n"
		    "network: {allowedDomains: [a.example.com]}\n");
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_READ, "/srv/token"));
	CU_ASSERT_FALSE(fs_has(p, FS_DENY_READ, "/srv/masked"));
	policy_free(p);
	unlink("/tmp/pv-test-extra-ca.pem");
	free(ssh);
	free(aws);
	free(rc);
	free(self);
}

/* $HOME is only an environment variable: the stores and start-up files in
 * the home directory of the password database are denied too. */
static void test_passwd_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	char *ssh, *rc, *cfg, *diag = NULL;
	size_t len;
	FILE *f;
	policy_t *p;

	if (pw == NULL || pw->pw_dir == NULL || pw->pw_dir[0] != '/' ||
	    strcmp(pw->pw_dir, tmp_home) == 0)
		return; /* nothing to tell apart */
	CU_ASSERT_FATAL(asprintf(&ssh, "%s/.ssh", strcmp(pw->pw_dir, "/") ? pw->pw_dir : "") > 0);
	CU_ASSERT_FATAL(asprintf(&rc, "%s/.bashrc", strcmp(pw->pw_dir, "/") ? pw->pw_dir : "") > 0);
	CU_ASSERT_FATAL(asprintf(&cfg, "%s/.config/passavant",
				 strcmp(pw->pw_dir, "/") ? pw->pw_dir : "") > 0);
	f = open_memstream(&diag, &len);
	p = policy_load_default(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(bind_here(p, f), 0);
	fclose(f);
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_READ, ssh));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, rc));
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_WRITE, cfg));
	policy_free(p);
	free(diag);
	free(ssh);
	free(rc);
	free(cfg);
}

static void test_embedded_default(void)
{
	char *diag = NULL, *cwd = getcwd(NULL, 0), *ssh;
	size_t len;
	FILE *f = open_memstream(&diag, &len);
	policy_t *p = policy_load_default(f);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* Pure: before binding, "." stays "." and no store is listed. */
	CU_ASSERT_TRUE(fs_has(p, FS_ALLOW_WRITE, "."));
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_READ), 0);
	CU_ASSERT_EQUAL(bind_here(p, f), 0);
	CU_ASSERT_EQUAL(bind_here(p, f), 0); /* a second bind does nothing */
	fclose(f);
	CU_ASSERT_STRING_EQUAL(diag, "");
	CU_ASSERT_PTR_NULL(policy_file(p));
	CU_ASSERT_EQUAL(p->allowed.n, 0); /* no network */
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 1);
	CU_ASSERT_TRUE(fs_has(p, FS_ALLOW_WRITE, cwd));
	CU_ASSERT_FATAL(asprintf(&ssh, "%s/.ssh", tmp_home) > 0);
	CU_ASSERT_TRUE(fs_has(p, FS_DENY_READ, ssh));
	/* The read rows of the mandatory table under $HOME, as many more
	 * under the passwd home if it differs. */
	size_t stores = 0;
	for (size_t i = 0; i < policy_mandatory_count(); i++)
		stores += (policy_mandatory_get(i)->deny & POLICY_MAND_READ) &&
			  (policy_mandatory_get(i)->where & POLICY_MAND_HOME);
	CU_ASSERT(stores >= 40);
	/* Each under $HOME once (the rest: the passwd home, the host's own
	 * secrets, places the environment moves stores to). */
	size_t under_home = 0;
	for (size_t i = 0; i < policy_fs_count(p, FS_DENY_READ); i++)
		under_home += strncmp(policy_fs_path(p, FS_DENY_READ, i), tmp_home, strlen(tmp_home)) == 0 &&
			      policy_fs_path(p, FS_DENY_READ, i)[strlen(tmp_home)] == '/';
	CU_ASSERT(under_home >= stores);
	CU_ASSERT(policy_fs_count(p, FS_DENY_READ) >= stores);
	CU_ASSERT_EQUAL(policy_warning_count(p), 0);
	free(ssh);
	free(cwd);
	free(diag);
	policy_free(p);
}

static void test_lookup(void)
{
	char buf[4096], *xdg, *pol, *home_pol, *cwd_pol;

	CU_ASSERT_FATAL(asprintf(&xdg, "%s/xdg", tmp_home) > 0);
	CU_ASSERT_FATAL(asprintf(&pol, "%s/xdg/passavant/policy.yaml", tmp_home) > 0);
	CU_ASSERT_FATAL(asprintf(&home_pol, "%s/.config/passavant/policy.yaml", tmp_home) > 0);
	CU_ASSERT_FATAL(asprintf(&cwd_pol, "%s/policy.yaml", tmp_home) > 0);
	/* A policy in the working directory is never picked up. */
	CU_ASSERT_EQUAL(test_write_file(cwd_pol, "network: {}\n", 12), 0);
	CU_ASSERT_EQUAL_FATAL(chdir(tmp_home), 0);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_EMBEDDED);
	/* ~/.config/passavant/policy.yaml when XDG_CONFIG_HOME is unset. */
	CU_ASSERT_EQUAL(mkdir(".config", 0700), 0);
	CU_ASSERT_EQUAL(mkdir(".config/passavant", 0700), 0);
	CU_ASSERT_EQUAL(test_write_file(home_pol, "{}\n", 3), 0);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_FILE);
	CU_ASSERT_STRING_EQUAL(buf, home_pol);
	/* $XDG_CONFIG_HOME replaces ~/.config; nothing there: the default. */
	setenv("XDG_CONFIG_HOME", xdg, 1);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_EMBEDDED);
	CU_ASSERT_EQUAL(mkdir("xdg", 0700), 0);
	CU_ASSERT_EQUAL(mkdir("xdg/passavant", 0700), 0);
	CU_ASSERT_EQUAL(test_write_file(pol, "{}\n", 3), 0);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_FILE);
	CU_ASSERT_STRING_EQUAL(buf, pol);
	/* A relative XDG_CONFIG_HOME is ignored (XDG base directory spec). */
	setenv("XDG_CONFIG_HOME", "xdg", 1);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_FILE);
	CU_ASSERT_STRING_EQUAL(buf, home_pol);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	/* $PASSAVANT_POLICY beats both; a missing one is an error. */
	setenv("PASSAVANT_POLICY", cwd_pol, 1);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_FILE);
	CU_ASSERT_STRING_EQUAL(buf, cwd_pol);
	/* ... but never a relative one, even when the file is there: it would
	 * name a file in whatever directory passavant starts in. */
	setenv("PASSAVANT_POLICY", "policy.yaml", 1);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "expected an absolute path"));
	setenv("PASSAVANT_POLICY", "/nonexistent/p.yaml", 1);
	CU_ASSERT_EQUAL(lookup(NULL, buf, sizeof(buf)), POLICY_SOURCE_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "/nonexistent/p.yaml"));
	/* -p beats everything; a missing one is an error too. */
	CU_ASSERT_EQUAL(lookup(pol, buf, sizeof(buf)), POLICY_SOURCE_FILE);
	CU_ASSERT_STRING_EQUAL(buf, pol);
	CU_ASSERT_EQUAL(lookup("nope.yaml", buf, sizeof(buf)), POLICY_SOURCE_ERROR);
	unsetenv("PASSAVANT_POLICY");
	unsetenv("XDG_CONFIG_HOME");
	CU_ASSERT_EQUAL(chdir(saved_cwd), 0);
	free(xdg);
	free(pol);
	free(home_pol);
	free(cwd_pol);
}

/* A syntactically valid token with plenty of entropy (never a real one). */
#define LONG_SECRET "ghp_Zq8Lr2Tn5Vb7Xk1Wm4Pc9Hs3Jd6Fg0Ay2Ue8"

static void test_secrets(void)
{
	char *diag, *out, *file, *doc;
	unsigned n;
	policy_t *p;

	/* Token shapes (tokens.c), shared with mask/'s sentinels. */
	CU_ASSERT_EQUAL(policy_token_prefix_len(LONG_SECRET, strlen(LONG_SECRET)), 4);
	CU_ASSERT_EQUAL(policy_token_prefix_len("github_pat_ABC", 14), 11);
	CU_ASSERT_EQUAL(policy_token_prefix_len("sk-ant-api03-x", 14), 13);
	CU_ASSERT_EQUAL(policy_token_prefix_len("ghp_", 4), 0);
	CU_ASSERT_EQUAL(policy_sentinel_bits("ghp_", 4), 14); /* no prefix: g, h, p */
	CU_ASSERT_EQUAL(policy_sentinel_bits("0123456789", 10), 33);
	CU_ASSERT_EQUAL(policy_sentinel_bits("a-b-c", 5), 14);
	CU_ASSERT(policy_sentinel_bits(LONG_SECRET, strlen(LONG_SECRET)) >= POLICY_MIN_SENTINEL_BITS);

	setenv("PV_TEST_SECRET", LONG_SECRET, 1);
	p = load("network: {allowedDomains: [api.github.com]}\n"
		 "credentials: {envVars: [{name: PV_TEST_SECRET, mode: mask}]}\n",
		 &diag, &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	out = printed(p);
	CU_ASSERT_PTR_NULL(strstr(out, "Zq8Lr2Tn5"));
	CU_ASSERT_PTR_NULL(strstr(diag, "Zq8Lr2Tn5"));
	free(out);
	free(diag);
	policy_free(p);

	/* The loader is pure: it never reads a masked value, so a value too
	 * short to mask loads here (mask_table_new() refuses it, and `check`
	 * builds the table: test_mask's "too short" case). */
	setenv("PV_TEST_SECRET", "ghp_Shortish123", 1);
	policy_free(load_ok("credentials: {envVars: [{name: PV_TEST_SECRET, mode: mask}]}\n"));
	policy_free(load_ok("credentials: {envVars: [{name: PV_TEST_SECRET, mode: deny}]}\n"));
	unsetenv("PV_TEST_SECRET");
	CU_ASSERT_FATAL(asprintf(&file, "%s/hosts.yml", tmp_home) > 0);
	CU_ASSERT_EQUAL(test_write_file(file, "user: me\n", 9), 0);
	CU_ASSERT_EQUAL(chmod(file, 0644), 0);
	CU_ASSERT_FATAL(asprintf(&doc, "credentials: {files: [{path: %s, mode: mask, extract: "
				       "\"user: ([a-z]+)\"}]}\n",
				 file) > 0);
	p = load_ok(doc);
	CU_ASSERT_EQUAL(policy_warning_count(p), 0);
	policy_free(p);
	free(doc);
	free(file);
}

static void test_warnings(void)
{
	policy_t *p = load_ok("network:\n"
			      "  allowedDomains: [\"*.s3.amazonaws.com\", \"*\", \"*.com\", a.example.com]\n"
			      "credentials:\n"
			      "  envVars:\n"
			      "    - {name: PV_W1, mode: mask, injectHosts: [a.example.com],\n"
			      "       injectIn: [header, body]}\n");
	char *out;

	CU_ASSERT_TRUE(has_warning(p, "t.yaml:2:20: allowedDomains entry \"*.s3.amazonaws.com\" "
				      "reaches amazonaws.com"));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:2:42: allowedDomains has a bare \"*\""));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:2:47: allowedDomains entry \"*.com\""));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:6:18: credential PV_W1 may be injected into request "
				      "bodies"));
	out = printed(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "warning: t.yaml:2:20: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "injectIn: [header, body]"));
	free(out);
	policy_free(p);
	/* No injectHosts with a bare "*" allowed: the value would go anywhere.
	 * An error, not a warning; an explicit ["*"] stays a warning. */
	load_err("network: {allowedDomains: [a.example.com, \"*\"]}\n"
		 "credentials: {envVars: [{name: PV_W0, mode: mask}]}\n",
		 1, "t.yaml:2:25: error: credential PV_W0 without injectHosts while "
		    "network.allowedDomains: * (line 1) allows every host");
	/* An explicit injectHosts equal to the whole allowlist. */
	p = load_ok("network: {allowedDomains: [a.example.com, b.example.com]}\n"
		    "credentials: {envVars: [{name: PV_W2, mode: mask,\n"
		    "  injectHosts: [b.example.com, a.example.com]}]}\n");
	CU_ASSERT_TRUE(has_warning(p, "credential PV_W2: injectHosts is the whole allowlist"));
	policy_free(p);
	/* A method rule for a host nothing allows; an injectHosts "*". */
	p = load_ok("network:\n  allowedDomains: [\"*\"]\n  allowedMethods: {a.example.com: [GET]}\n"
		    "credentials: {envVars: [{name: PV_W3, mode: mask, injectHosts: [\"*\"]}]}\n");
	CU_ASSERT_FALSE(has_warning(p, "never applies"));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:4:65: credential PV_W3: injectHosts \"*\" sends"));
	policy_free(p);
	p = load_ok("network:\n  allowedDomains: [b.example.com]\n"
		    "  allowedMethods: {a.example.com: [GET]}\n");
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:3:20: allowedMethods entry \"a.example.com\" matches "
				      "no allowed host"));
	policy_free(p);
	/* Warnings come out in file order. */
	p = load_ok("network: {allowedDomains: [\"*\"], allowUnixSockets: []}\n");
	CU_ASSERT_EQUAL_FATAL(policy_warning_count(p), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(policy_warning(p, 0), "t.yaml:1:28: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(policy_warning(p, 1), "t.yaml:1:34: sandbox-runtime key "
							    "network.allowUnixSockets"));
	policy_free(p);
}

/* ------------------------------------------------------------------ */
/* The binary                                                          */
/* ------------------------------------------------------------------ */

static int run_check(const char *rel, char **out, char **err)
{
	char *path;
	int rc;

	CU_ASSERT_FATAL(asprintf(&path, "%s/%s", test_srcdir(), rel) > 0);
	{
		char *argv[] = {(char *)test_passavant_bin(), "check", "-p", path, NULL};
		rc = test_run_capture(argv, out, err, 20000);
	}
	free(path);
	return rc;
}

static void test_check_four_errors(void)
{
	char *out, *err, *want;
	int rc;

	/* Relative to the source tree, so the file names in messages are the
	 * path as given on the command line. */
	CU_ASSERT_EQUAL_FATAL(chdir(test_srcdir()), 0);
	{
		char *argv[] = {(char *)test_passavant_bin(), "check", "-p",
				"tests/policies/four-errors.yaml", NULL};
		rc = test_run_capture(argv, &out, &err, 20000);
	}
	CU_ASSERT_EQUAL(chdir(saved_cwd), 0);
	want = "tests/policies/four-errors.yaml:7:7: error: \"*.*.example.com\" in "
	       "network.allowedDomains, expected '*' only as the whole leftmost label, as in "
	       "*.example.com\n"
	       "tests/policies/four-errors.yaml:10:27: error: \"PO ST\" in network.allowedMethods, "
	       "expected an HTTP method token (RFC 9110 token characters, at most 32) or \"*\"\n"
	       "tests/policies/four-errors.yaml:11:24: error: a string \"yes\", expected true or "
	       "false for network.allowAllUnixSockets\n"
	       "tests/policies/four-errors.yaml:12:3: error: unknown key \"tlsTerminat\", expected "
	       "a key of network (did you mean \"tlsTerminate\"?)\n"
	       "tests/policies/four-errors.yaml: 4 errors; the policy was not loaded\n";
	CU_ASSERT_EQUAL(rc, 1);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_STRING_EQUAL(err, want);
	if (strcmp(err, want) != 0)
		fprintf(stderr, "\ngot:\n%s", err);
	free(out);
	free(err);
}

static void test_check_examples(void)
{
	static const char *const examples[] = {
		"examples/passavant.yaml",   "examples/minimal-deny-all.yaml",
		"examples/github.yaml",      "examples/srt-settings.json",
		"tests/policies/good-full.yaml", "tests/policies/good-srt.json",
		"tests/policies/good-warnings.yaml", "tests/policies/good-empty.yaml",
		"tests/policies/good-tls-bool.yaml",
	};

	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		char *out, *err;
		int rc = run_check(examples[i], &out, &err);
		if (rc != 0)
			fprintf(stderr, "\n%s: rc %d\n%s", examples[i], rc, err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(strncmp(out, "# effective policy from ", 24), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  limits:\n    maxTunnels: "));
		CU_ASSERT_PTR_NULL(strstr(err, "error"));
		free(out);
		free(err);
	}
}

static void test_check_bad_files(void)
{
	static const struct {
		const char *file;
		const char *summary;
	} bad[] = {
		{"tests/policies/bad-types.yaml", "10 errors"},
		{"tests/policies/bad-cross.yaml", "10 errors"},
		{"tests/policies/bad-yaml.yaml", "1 error;"},
		{"tests/policies/bad-alias.yaml", "1 error;"},
		{"tests/policies/bad-dup.yaml", "2 errors"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out, *err;
		int rc = run_check(bad[i].file, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].summary));
		if (strstr(err, bad[i].summary) == NULL)
			fprintf(stderr, "\n%s:\n%s", bad[i].file, err);
		CU_ASSERT_STRING_EQUAL(out, "");
		free(out);
		free(err);
	}
}

TEST_REGISTRAR(register_policy_config)
{
	CU_pSuite s = test_suite("policy_config", suite_init, suite_cleanup);

	test_add(s, "defaults filled in and printed", test_defaults);
	test_add(s, "network keys", test_network_keys);
	test_add(s, "tlsTerminate forms", test_tls_forms);
	test_add(s, "credentials keys", test_credentials);
	test_add(s, "credential errors", test_credential_errors);
	test_add(s, "credentials.sentinels", test_sentinels_key);
	test_add(s, "audit keys", test_audit);
	test_add(s, "cross-checks", test_cross_checks);
	test_add(s, "error kinds with FILE:LINE:COL", test_error_kinds);
	test_add(s, "size, depth and list caps", test_limits_caps);
	test_add(s, "path expansion", test_paths);
	test_add(s, "filesystem lists and mandatory denies", test_filesystem);
	test_add(s, "embedded default", test_embedded_default);
	test_add(s, "stores of the password database home too", test_passwd_home);
	test_add(s, "lookup order", test_lookup);
	test_add(s, "secrets: length checked, never printed", test_secrets);
	test_add(s, "warnings", test_warnings);

	s = test_suite("policy_config_check", suite_init, suite_cleanup);
	test_add(s, "four errors, exact lines", test_check_four_errors);
	test_add(s, "examples and good policies pass", test_check_examples);
	test_add(s, "bad policies fail", test_check_bad_files);
}

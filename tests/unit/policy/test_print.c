/*
 * test_print.c - the effective-policy printer (policy/print.c, libyaml's
 * emitter): what it prints loads again to the same policy, for a document
 * with every kind of value and for every example and test policy.
 *
 * Suite: policy_print.
 */
#include "loader_test.h"

/* The printed policy loads again to the same printed policy. */
static void test_round_trip(void)
{
	const char *doc = "network:\n"
			  "  allowedDomains: [api.github.com, \"*.example.org\", \"[::1]:8080\"]\n"
			  "  deniedDomains: [\"*.bad.example.org\"]\n"
			  "  allowedMethods: {\"*\": [GET, \"#X\"], api.github.com: [\"*\", POST],\n"
			  "                   pinned.example.org: [\"*\"]}\n"
			  "  deniedResolvedAddresses: [\"fc00::/7\"]\n"
			  "  tlsTerminate: {excludeDomains: [pinned.example.org]}\n"
			  "  limits: {maxTunnels: 9}\n"
			  "credentials:\n"
			  "  envVars: [{name: PV_RT, mode: mask, injectIn: [query]}]\n"
			  "  files: [{path: ~/x, mode: deny}]\n"
			  "filesystem: {allowWrite: [., \"we\\\"ird\"]}\n"
			  "audit: {path: a.jsonl, bodies: headers}\n";
	policy_t *p = load_ok(doc), *q;
	char *one, *two;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	one = printed(p);
	*strstr(one, "warning: ") = '\0'; /* only the policy part */
	q = load_ok(one);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	two = printed(q);
	*strstr(two, "warning: ") = '\0';
	CU_ASSERT_STRING_EQUAL(one, two);
	free(one);
	free(two);
	policy_free(p);
	policy_free(q);
}

/* Every example and test policy that loads prints a policy that loads
 * again to the same print (the printer is libyaml's emitter; `check -p`
 * of its output must give the same policy). */
static void test_round_trip_files(void)
{
	static const char *const dirs[] = {"examples", "tests/policies"};
	unsigned files = 0;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char *dir, name[4200];
		FILE *ls;

		CU_ASSERT_FATAL(asprintf(&dir, "%s/%s", test_srcdir(), dirs[d]) > 0);
		snprintf(name, sizeof(name), "ls -1 '%s'", dir);
		ls = popen(name, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
		while (fgets(name, sizeof(name), ls) != NULL) {
			char *path, *doc, *one, *two, *diag;
			size_t len = 0;
			unsigned n;
			policy_t *p, *q;

			name[strcspn(name, "\n")] = '\0';
			CU_ASSERT_FATAL(asprintf(&path, "%s/%s", dir, name) > 0);
			doc = test_read_file(path, &len);
			free(path);
			CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
			p = load(doc, &diag, &n);
			free(diag);
			free(doc);
			if (p == NULL)
				continue; /* a bad-*.yaml */
			files++;
			one = print_text(p, true);
			q = load(one, &diag, &n);
			if (q == NULL)
				fprintf(stderr, "\n%s: the print does not load:\n%s\n%s", name, one, diag);
			CU_ASSERT_PTR_NOT_NULL_FATAL(q);
			free(diag);
			two = print_text(q, true);
			CU_ASSERT_STRING_EQUAL(one, two);
			free(one);
			free(two);
			policy_free(p);
			policy_free(q);
		}
		pclose(ls);
		free(dir);
	}
	CU_ASSERT(files >= 12);
}


TEST_REGISTRAR(register_policy_print)
{
	CU_pSuite s = test_suite("policy_print", NULL, NULL);

	test_add(s, "print round trip", test_round_trip);
	test_add(s, "print round trip of every example and test policy", test_round_trip_files);
}

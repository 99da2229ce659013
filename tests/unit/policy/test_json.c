/*
 * test_json.c - the JSON front end of the policy loader (policy/json.c):
 * sandbox-runtime settings files load through jansson's strict check and
 * the node tree, TABs between tokens keep every position, and each kind of
 * invalid JSON is refused with FILE:LINE:COL.
 *
 * Suite: policy_json.
 */
#include "loader_test.h"

static void test_json(void)
{
	policy_t *p = load_ok("{\"network\": {\"allowedDomains\": [\"github.com\", \"*.vercel.app\"],\n"
			      " \"deniedDomains\": [], \"allowLocalBinding\": false},\n"
			      " \"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": [\".\"],\n"
			      "  \"denyWrite\": [\".env\"]},\n"
			      " \"enableWeakerNestedSandbox\": false}\n");

	CU_ASSERT_EQUAL(p->allowed.n, 2);
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:2:23: sandbox-runtime key network.allowLocalBinding"));
	CU_ASSERT_TRUE(has_warning(p, "t.yaml:5:2: sandbox-runtime key enableWeakerNestedSandbox"));
	CU_ASSERT_TRUE(has_warning(p, "\"*.vercel.app\" reaches vercel.app"));
	policy_free(p);
	/* TABs where libyaml refuses them: positions must stay exact. */
	p = load_ok("{\n\t\"network\": {\n\t\t\"allowedDomains\":\t[\"a.com\"]\n\t}\n}\n");
	CU_ASSERT_EQUAL_FATAL(p->allowed.n, 1);
	CU_ASSERT_EQUAL(p->allowed.v[0].mark.line, 3);
	CU_ASSERT_EQUAL(p->allowed.v[0].mark.col, 22);
	policy_free(p);
	load_err("{\n\t\"network\": {\n\t\t\"allowedDomains\": [\"ok.com\",\t\"b\\tad\"]\n\t}\n}\n", 1,
		 "t.yaml:3:32: error: \"b\\x09ad\" in network.allowedDomains");
	/* A TAB inside a JSON string is kept as it is (and refused as a host). */
	load_err("{\"network\": {\"allowedDomains\": [\"a\tb\"]}}", 1, "t.yaml:1:33: error:");
	/* Trailing commas: YAML flow syntax takes them, JSON does not. Each
	 * one is reported at its position; a comma inside a string is text. */
	load_err("{\"network\": {\"allowedDomains\": [\"a.com\",\n  ]},\n}\n", 2,
		 "t.yaml:1:40: error: a trailing comma before ']'");
	load_err("{\"network\": {\"allowedDomains\": [\"a.com\",\n  ]},\n}\n", 2,
		 "t.yaml:2:5: error: a trailing comma before '}'");
	load_err("{\"network\": {\"allowedDomains\": [\"\xc3\xa9\", \"b.com\",]}}", 2,
		 "t.yaml:1:45: error: a trailing comma before ']'");
	p = load_ok("{\"network\": {\"allowedDomains\": [\"a.com\"]},\n"
		    " \"filesystem\": {\"denyRead\": [\",}\\\",}\"]}}\n");
	policy_free(p);
	/* ",]" inside a string is no trailing comma: the one error is the
	 * path's own (a bracket reads as a glob, docs/config.md). */
	load_err("{\"filesystem\": {\"denyRead\": [\",]\\\",}\"]}}\n", 1,
		 "t.yaml:1:30: error: \",]\\x22,}\" in filesystem.denyRead, expected a literal path");
	load_err("{\"network\": {\"allowedDomains\": \"a.com\"}}", 1,
		 "t.yaml:1:32: error: a string \"a.com\", expected a list of host patterns");
	/* Strict RFC 8259 (jansson): what YAML's flow syntax would take, or
	 * read differently, is refused at the token where it starts. */
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{"{\"network\": {\"allowedDomains\": [\"a.com\"]} // comment\n}",
		 "t.yaml:1:43: error: '}' expected near '/'"},
		{"{\"network\": /* c */ {}}", "t.yaml:1:13: error: invalid token near '/'"},
		{"{\"network\": {\"allowedDomains\": ['a.com']}}",
		 "t.yaml:1:33: error: invalid token near '''"},
		{"{\"network\": {\"allowedDomains\": [\"a\x01\" \"b\"]}}",
		 "t.yaml:1:33: error: control character 0x1 near '\"a'"},
		{"{\"network\": {\"limits\": {\"maxTunnels\": NaN}}}",
		 "t.yaml:1:39: error: invalid token near 'NaN'"},
		{"{\"network\": {\"limits\": {\"maxTunnels\": 010}}}",
		 "t.yaml:1:39: error: invalid token near '0'"},
		{"{\"network\": {\"allowedDomains\": [\"a.com",
		 "t.yaml:1:33: error: premature end of input near '\"a.com'"},
		{"{\"network\": {},\n \"network\": {}}",
		 "t.yaml:2:2: error: duplicate object key near '\"network\"'"},
		{"{\"network\": {\"allowedDomains\": [\"a.com\"]",
		 "t.yaml:1:40: error: '}' expected near end of file, expected valid JSON (RFC 8259)"},
		{"[1, 2]", "t.yaml:1:1: error: a list, expected a mapping of network"},
		{"{\"network\": {\"allowedDomains\": [\"a.com\",]}}",
		 "t.yaml:1:40: error: a trailing comma before ']'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		load_err(bad[i].doc, 1, bad[i].want);
	/* Valid JSON whose TABs sit between tokens loads, positions intact. */
	p = load_ok("{\t\"network\":\t{\"allowedDomains\":\t[\t\"a.com\"\t]\t}\t}\n");
	CU_ASSERT_EQUAL_FATAL(p->allowed.n, 1);
	CU_ASSERT_EQUAL(p->allowed.v[0].mark.col, 35); /* a TAB is one column */
	policy_free(p);
}

/* A sandbox-runtime settings file read through jansson loads to the same
 * effective policy as the same settings written in YAML. */
static void test_json_srt_same(void)
{
	static const char yaml[] =
		"network:\n"
		"  allowedDomains: [github.com, \"*.github.com\", lfs.github.com, api.github.com,\n"
		"                   example.com, \"*.vercel.app\"]\n"
		"  deniedDomains: [malicious.example]\n"
		"filesystem:\n"
		"  denyRead: [~/.ssh]\n"
		"  allowWrite: [., src/, test/, /tmp]\n"
		"  denyWrite: [.env, config/production.json]\n";
	char *path, *json, *a, *b;
	size_t len = 0;
	policy_t *p, *q;

	CU_ASSERT_FATAL(asprintf(&path, "%s/examples/srt-settings.json", test_srcdir()) > 0);
	json = test_read_file(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(json);
	p = load_ok(json);
	q = load_ok(yaml);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	a = print_text(p, true);
	b = print_text(q, true);
	CU_ASSERT_STRING_EQUAL(a, b);
	free(a);
	free(b);
	free(json);
	free(path);
	policy_free(p);
	policy_free(q);
}

TEST_REGISTRAR(register_policy_json)
{
	CU_pSuite s = test_suite("policy_json", NULL, NULL);

	test_add(s, "JSON and TABs", test_json);
	test_add(s, "a sandbox-runtime file as its YAML twin", test_json_srt_same);
}

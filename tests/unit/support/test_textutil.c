/*
 * test_textutil.c - the shared test helpers other tests compute their
 * expected values with: base64 (RFC 4648 vectors), environment vector
 * lookups, and `export NAME='VALUE'` lines.
 */
#include <string.h>

#include "tests/support/pxproc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

static void test_b64_vectors(void)
{
	static const char *const vec[][2] = {
		{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
		{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
	};
	char out[16];

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		test_b64(vec[i][0], strlen(vec[i][0]), out);
		CU_ASSERT_STRING_EQUAL(out, vec[i][1]);
	}
	test_b64("\xff\xfe", 2, out);
	CU_ASSERT_STRING_EQUAL(out, "//4=");
}

static void test_envv(void)
{
	char *env[] = {"A=1", "AB=2", "NOEQUALS", "B=", NULL};
	char *none[] = {NULL};

	CU_ASSERT_EQUAL(test_envv_find(env, "A"), 0);
	CU_ASSERT_EQUAL(test_envv_find(env, "AB"), 1);
	CU_ASSERT_EQUAL(test_envv_find(env, "B"), 3);
	CU_ASSERT_EQUAL(test_envv_find(env, "NOEQUALS"), -1);
	CU_ASSERT_EQUAL(test_envv_find(env, "C"), -1);
	CU_ASSERT_EQUAL(test_envv_count(env), 4);
	CU_ASSERT_EQUAL(test_envv_count(none), 0);
}

static void test_env_export_lines(void)
{
	const char *env = "export GH_TOKEN='abc'\nexport X_GH_TOKEN='no'\nexport EMPTY=''\n";
	char out[8];

	CU_ASSERT(test_env_export(env, "GH_TOKEN", out, sizeof(out)));
	CU_ASSERT_STRING_EQUAL(out, "abc");
	CU_ASSERT(test_env_export(env, "EMPTY", out, sizeof(out)));
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT(!test_env_export(env, "MISSING", out, sizeof(out)));
	CU_ASSERT(!test_env_export(NULL, "GH_TOKEN", out, sizeof(out)));
	CU_ASSERT(!test_env_export(env, "GH_TOKEN", out, 3)); /* "abc" needs 4 bytes */
	CU_ASSERT(!test_env_export("export A='unterminated", "A", out, sizeof(out)));
}

TEST_REGISTRAR(support_textutil_register)
{
	CU_pSuite s = test_suite("support_textutil", NULL, NULL);

	test_add(s, "test_b64: RFC 4648 vectors", test_b64_vectors);
	test_add(s, "test_envv_find, test_envv_count", test_envv);
	test_add(s, "test_env_export: export NAME='VALUE' lines", test_env_export_lines);
}

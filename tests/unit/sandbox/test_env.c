/*
 * test_env.c - sandbox/env.c: the environment the command gets. Suite "sandbox_env".
 */
#include <string.h>

#include "sandbox/sandbox.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

static void test_env_build(void)
{
	char *base[] = { "PATH=/bin", "SECRET=x", "HOME=/h", "KEEP=1", "NOEQUALS", NULL };
	const char *rem[] = { "SECRET", "NOPE", NULL };
	const char *add[] = { "HOME=/new", "A=1", "A=2", "EMPTY=", NULL };
	const char *bad[] = { "NOVALUE", NULL };
	char **env;

	env = sbx_env_build(base, rem, add);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT(test_envv_find(env, "SECRET") < 0);
	CU_ASSERT(test_envv_find(env, "PATH") >= 0 && test_envv_find(env, "KEEP") >= 0);
	CU_ASSERT(test_envv_find(env, "HOME") >= 0 && strcmp(env[test_envv_find(env, "HOME")], "HOME=/new") == 0);
	/* The last of two adds wins, and only one copy is kept. */
	CU_ASSERT(test_envv_find(env, "A") >= 0 && strcmp(env[test_envv_find(env, "A")], "A=2") == 0);
	CU_ASSERT(test_envv_find(env, "EMPTY") >= 0);
	/* An entry without '=' in the base is dropped. */
	CU_ASSERT_EQUAL(test_envv_count(env), 5); /* PATH KEEP HOME A EMPTY */
	sbx_env_free(env);
	CU_ASSERT_PTR_NULL(sbx_env_build(base, NULL, bad));
	env = sbx_env_build(base, NULL, NULL);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT_EQUAL(test_envv_count(env), 4);
	sbx_env_free(env);
	sbx_env_free(NULL);
}

TEST_REGISTRAR(sandbox_env_register)
{
	CU_pSuite s = test_suite("sandbox_env", NULL, NULL);

	test_add(s, "sbx_env_build removes, replaces, adds", test_env_build);
}

/*
 * test_env.c - sandbox/env.c: the SPEC §7 variable list and the
 * environment the command gets. Suite "sandbox_env".
 */
#include <string.h>

#include "sandbox/sandbox.h"
#include "tests/support/testlib.h"

/* Index of "NAME=" in env, or -1. */
static int find(char **env, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return i;
	return -1;
}

static int count(char **env)
{
	int i = 0;

	while (env[i] != NULL)
		i++;
	return i;
}

static void test_proxy_env(void)
{
	static const char *const proxy[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY",
					     "http_proxy", "https_proxy", "all_proxy", "grpc_proxy" };
	static const char *const trust[] = {
		"SSL_CERT_FILE", "NIX_SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
		"PIP_CERT", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
		"CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
	};
	char **env = sbx_proxy_env(3128, "/s/trust.pem");
	size_t i;
	int k;

	CU_ASSERT_FATAL(env != NULL);
	for (i = 0; i < ARRAY_LEN(proxy); i++) {
		k = find(env, proxy[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "http://127.0.0.1:3128") == 0);
	}
	for (i = 0; i < ARRAY_LEN(trust); i++) {
		k = find(env, trust[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "/s/trust.pem") == 0);
	}
	k = find(env, "NO_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NO_PROXY=localhost,127.0.0.1,::1") == 0);
	CU_ASSERT(find(env, "no_proxy") >= 0);
	k = find(env, "NODE_USE_ENV_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NODE_USE_ENV_PROXY=1") == 0);
	CU_ASSERT_EQUAL(count(env), (int)(ARRAY_LEN(proxy) + ARRAY_LEN(trust) + 3));
	sbx_env_free(env);
}

static void test_env_build(void)
{
	char *base[] = { "PATH=/bin", "SECRET=x", "HOME=/h", "KEEP=1", "NOEQUALS", NULL };
	const char *rem[] = { "SECRET", "NOPE", NULL };
	const char *add[] = { "HOME=/new", "A=1", "A=2", "EMPTY=", NULL };
	const char *bad[] = { "NOVALUE", NULL };
	char **env;

	env = sbx_env_build(base, rem, add);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT(find(env, "SECRET") < 0);
	CU_ASSERT(find(env, "PATH") >= 0 && find(env, "KEEP") >= 0);
	CU_ASSERT(find(env, "HOME") >= 0 && strcmp(env[find(env, "HOME")], "HOME=/new") == 0);
	/* The last of two adds wins, and only one copy is kept. */
	CU_ASSERT(find(env, "A") >= 0 && strcmp(env[find(env, "A")], "A=2") == 0);
	CU_ASSERT(find(env, "EMPTY") >= 0);
	/* An entry without '=' in the base is dropped. */
	CU_ASSERT_EQUAL(count(env), 5); /* PATH KEEP HOME A EMPTY */
	sbx_env_free(env);
	CU_ASSERT_PTR_NULL(sbx_env_build(base, NULL, bad));
	env = sbx_env_build(base, NULL, NULL);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT_EQUAL(count(env), 4);
	sbx_env_free(env);
	sbx_env_free(NULL);
}

TEST_REGISTRAR(sandbox_env_register)
{
	CU_pSuite s = test_suite("sandbox_env", NULL, NULL);

	test_add(s, "sbx_proxy_env lists every SPEC 7 variable", test_proxy_env);
	test_add(s, "sbx_env_build removes, replaces, adds", test_env_build);
}

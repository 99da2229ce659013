/*
 * test_plan.c - proxy/cli/plan.c: the policy-to-sandbox plan, given a
 * policy text bound to a fake machine (no namespaces): the deny lists
 * with `~` and the HOME rows expanded under that home, the workspace protections,
 * the SPEC §7 variables and the environment rule. Suite "cli_plan".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/cli/plan.c"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

/* The SPEC §7 table (moved from sandbox_env with the table itself). */
static void test_proxy_env(void)
{
	static const char *const proxy[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY",
					     "http_proxy", "https_proxy", "all_proxy", "grpc_proxy" };
	static const char *const trust[] = {
		"SSL_CERT_FILE", "NIX_SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
		"PIP_CERT", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
		"CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
	};
	struct strv sv = {0};
	char **env;
	size_t i;
	int k;

	CU_ASSERT_FATAL(plan_env_vars(&sv, "127.0.0.1", 3128, "/s/trust.pem") == 0);
	env = sv.v;
	CU_ASSERT_FATAL(env != NULL);
	for (i = 0; i < ARRAY_LEN(proxy); i++) {
		k = test_envv_find(env, proxy[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "http://127.0.0.1:3128") == 0);
	}
	for (i = 0; i < ARRAY_LEN(trust); i++) {
		k = test_envv_find(env, trust[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "/s/trust.pem") == 0);
	}
	k = test_envv_find(env, "NO_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NO_PROXY=localhost,127.0.0.1,::1") == 0);
	CU_ASSERT(test_envv_find(env, "no_proxy") >= 0);
	k = test_envv_find(env, "NODE_USE_ENV_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NODE_USE_ENV_PROXY=1") == 0);
	CU_ASSERT_EQUAL(test_envv_count(env), (int)(ARRAY_LEN(proxy) + ARRAY_LEN(trust) + 3));
	strv_free(&sv);
	/* The session's env file: an IPv6 listener, no trust file known. */
	CU_ASSERT_FATAL(plan_env_vars(&sv, "::1", 8080, NULL) == 0);
	CU_ASSERT(test_envv_find(sv.v, "HTTPS_PROXY") >= 0 &&
		  strcmp(sv.v[test_envv_find(sv.v, "HTTPS_PROXY")], "HTTPS_PROXY=http://[::1]:8080") == 0);
	CU_ASSERT(test_envv_find(sv.v, "SSL_CERT_FILE") < 0);
	CU_ASSERT_EQUAL(test_envv_count(sv.v), (int)(ARRAY_LEN(proxy) + 3));
	strv_free(&sv);
}

/* The test's host environment, for policy_host.env. */
static char **t_env;

static const char *t_getenv(const char *name)
{
	size_t n = strlen(name);

	for (char **e = t_env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* Loads doc and binds it to the fake machine h (policy_bind()). */
static policy_t *load_bound(const char *doc, size_t len, const struct plan_host *h)
{
	struct policy_host ph = {.home = h->home, .pw_home = h->pw_home, .cwd = h->cwd,
				 .env = t_getenv};
	unsigned nerr = 0;
	policy_t *p = policy_load_buffer("plan.yaml", doc, len, stderr, &nerr);

	if (p != NULL && policy_bind(p, &ph, stderr) != 0) {
		policy_free(p);
		return NULL;
	}
	return p;
}

/* A scratch tree: <t>/home (the fake home), <t>/work (cwd, writable),
 * <t>/sess (the session directory). */
static char t_root[64], t_home[96], t_work[96], t_sess[96];

static int plan_setup(void)
{
	snprintf(t_root, sizeof(t_root), "/tmp/pv-plan-XXXXXX");
	if (mkdtemp(t_root) == NULL)
		return -1;
	snprintf(t_home, sizeof(t_home), "%s/home", t_root);
	snprintf(t_work, sizeof(t_work), "%s/work", t_root);
	snprintf(t_sess, sizeof(t_sess), "%s/sess", t_root);
	return mkdir(t_home, 0700) == 0 && mkdir(t_work, 0700) == 0 && mkdir(t_sess, 0700) == 0
		       ? 0
		       : -1;
}

static int plan_teardown(void)
{
	(void)rmdir(t_home);
	(void)rmdir(t_work);
	(void)rmdir(t_sess);
	(void)rmdir(t_root);
	return 0;
}

static void test_plan_build(void)
{
	char doc[1024], path[PATH_MAX];
	char pathvar[200];
	char *env[] = {pathvar, "GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd",
		       "FOO=bar", "DENIED=x", "XDG_CONFIG_HOME=/xdg", "LD_LIBRARY_PATH=lib", NULL};
	struct plan_host h = {.home = t_home, .pw_home = "/nonexistent-pw-home", .cwd = t_work,
			      .self_exe = "/usr/bin/passavant-test", .env = env};
	struct plan_session s = {.dir = t_sess, .quiet = true};
	struct run_plan pl;
	struct sbx_config cfg;
	char *argv[] = {"true", NULL};
	policy_t *p;
	int n;

	snprintf(pathvar, sizeof(pathvar), "PATH=/bin::%s", t_work);
	n = snprintf(doc, sizeof(doc),
		     "filesystem:\n"
		     "  allowWrite: [\"%s\", \"%s/missing\"]\n"
		     "  denyRead: [\"~/secret-dir\"]\n"
		     "credentials:\n"
		     "  envVars:\n"
		     "    - name: DENIED\n"
		     "      mode: deny\n",
		     t_work, t_root);
	t_env = env;
	p = load_bound(doc, (size_t)n, &h);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(plan_build(&pl, p, NULL, &h, &s) == 0);
	/* `~` and the HOME rows under the fake home, and under the password
	 * database's home too. */
	snprintf(path, sizeof(path), "%s/secret-dir", t_home);
	CU_ASSERT(strv_has(&pl.deny_read, path));
	snprintf(path, sizeof(path), "%s/.ssh", t_home);
	CU_ASSERT(strv_has(&pl.deny_read, path));
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(strv_has(&pl.deny_read, "/nonexistent-pw-home/.ssh"));
	snprintf(path, sizeof(path), "%s/.bashrc", t_home);
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(!strv_has(&pl.deny_read, path));
	/* The host's PATH (an empty entry: the working directory) and
	 * start-up variables, unless allowWrite names the directory; the
	 * place the next lookup would find a policy. */
	CU_ASSERT(strv_has(&pl.deny_write, "/bin"));
	CU_ASSERT(!strv_has(&pl.deny_write, t_work));
	snprintf(path, sizeof(path), "%s/lib", t_work);
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(strv_has(&pl.deny_write, "/xdg/passavant"));
	/* The existing allowWrite only; the session dir read-only. */
	CU_ASSERT_EQUAL(pl.allow_write.n, 1);
	CU_ASSERT(strv_has(&pl.allow_write, t_work));
	CU_ASSERT(strv_has(&pl.allow_read, t_sess));
	CU_ASSERT(strv_has(&pl.protect, t_sess));
	CU_ASSERT(strv_has(&pl.protect, "/usr/bin/passavant-test"));
	/* The workspace rows and git control files of the writable dir. */
	snprintf(path, sizeof(path), "%s/.git/hooks", t_work);
	CU_ASSERT(strv_has(&pl.protect, path));
	snprintf(path, sizeof(path), "%s/.vscode", t_work);
	CU_ASSERT(strv_has(&pl.protect, path));
	/* Environment: §7 for the in-sandbox listener, the denied variable
	 * and the unnamed token removed, the rest left. */
	snprintf(path, sizeof(path), "SSL_CERT_FILE=%s/trust.pem", t_sess);
	CU_ASSERT(strv_has(&pl.env_add, path));
	CU_ASSERT(strv_has(&pl.env_add, "HTTPS_PROXY=http://127.0.0.1:3128"));
	CU_ASSERT(strv_has(&pl.env_remove, "DENIED"));
	CU_ASSERT(strv_has(&pl.env_remove, "GITHUB_TOKEN"));
	CU_ASSERT(!strv_has(&pl.env_remove, "FOO"));
	CU_ASSERT(!strv_has(&pl.env_remove, "PATH"));
	CU_ASSERT_EQUAL(pl.n_files, 0);
	plan_sbx_config(&pl, p, argv, &cfg);
	CU_ASSERT(cfg.argv == argv && cfg.listen_port == SBX_DEFAULT_PORT);
	CU_ASSERT(cfg.deny_read == strv_list(&pl.deny_read) && cfg.files == NULL);
	plan_free(&pl);
	policy_free(p);
	/* No home at all: the policy cannot be bound, so no plan is made. */
	h.home = NULL;
	CU_ASSERT(load_bound(doc, (size_t)n, &h) == NULL);
	t_env = NULL;
}

static void test_ctl_paths(void)
{
	struct sbx_ctl_path *ctl = plan_ctl_paths();
	size_t n = 0, rows = 0;

	CU_ASSERT_FATAL(ctl != NULL);
	for (size_t i = 0; i < policy_mandatory_count(); i++)
		rows += (policy_mandatory_get(i)->where & POLICY_MAND_WORKSPACE) != 0;
	for (; ctl[n].path != NULL; n++)
		CU_ASSERT(ctl[n].kind != NULL);
	CU_ASSERT_EQUAL(n, rows);
	free(ctl);
}

TEST_REGISTRAR(cli_plan_register)
{
	CU_pSuite s = test_suite("cli_plan", plan_setup, plan_teardown);

	test_add(s, "plan_env_vars lists every SPEC 7 variable", test_proxy_env);
	test_add(s, "plan_build: home rows, protections, environment", test_plan_build);
	test_add(s, "plan_ctl_paths: the workspace rows", test_ctl_paths);
}

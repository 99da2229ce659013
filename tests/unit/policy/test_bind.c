/*
 * test_bind.c - policy_bind() (policy/bind.c) on a made-up machine: the
 * loader is pure (the same bytes give the same policy anywhere, paths as
 * written), and binding with a given home, working directory, environment
 * and file check gives the same absolute policy whatever this process's
 * own environment is.
 *
 * Suite: policy_bind.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../policy/policy.h"
#include "../../support/testlib.h"

/* The made-up machine. */
static const char *fake_env(const char *name)
{
	if (strcmp(name, "PATH") == 0)
		return "/usr/bin:bin::/opt/w/bin";
	if (strcmp(name, "XDG_CONFIG_HOME") == 0)
		return "/h/u/xdg";
	if (strcmp(name, "XDG_STATE_HOME") == 0)
		return "/h/u/state";
	if (strcmp(name, "BASH_ENV") == 0)
		return "/h/u/env.sh";
	return NULL;
}

static const char *fake_file_problem(const char *path)
{
	return strstr(path, "missing") != NULL ? "No such file or directory" : NULL;
}

static const struct policy_host fake = {
	.home = "/h/u",
	.pw_home = "/pw/u",
	.cwd = "/w/proj",
	.policy_real = "/real/p.yaml",
	.env = fake_env,
	.file_problem = fake_file_problem,
};

/* Loads doc as "p.yaml" without errors. */
static policy_t *load_pure(const char *doc)
{
	unsigned n = 0;
	policy_t *p = policy_load_buffer("p.yaml", doc, strlen(doc), stderr, &n);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(n, 0);
	return p;
}

static bool has(const policy_t *p, enum policy_fs_list w, const char *path)
{
	for (size_t i = 0; i < policy_fs_count(p, w); i++)
		if (strcmp(policy_fs_path(p, w, i), path) == 0)
			return true;
	return false;
}

/* Before binding: paths as written (normalised), no mandatory entry. */
static void test_pure_forms(void)
{
	policy_t *p = load_pure("filesystem:\n  denyRead: [~/.ssh/, ./a/../b, /srv//x/]\n"
				"  allowWrite: [., \"~\"]\n"
				"credentials: {files: [{path: ~/tok, mode: deny}]}\n"
				"audit: {path: logs/../a.jsonl}\n");

	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_READ), 3);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "~/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "b"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/srv/x"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "."));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "~"));
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_WRITE), 0);
	CU_ASSERT_STRING_EQUAL(policy_cred(p, 0)->path, "~/tok");
	CU_ASSERT_STRING_EQUAL(policy_audit_path(p), "a.jsonl");
	policy_free(p);
}

/* After binding: absolute paths, the mandatory denies of this machine. */
static void test_bound(void)
{
	policy_t *p = load_pure("network:\n  tlsTerminate: {extraCaCertPaths: [~/ca.pem]}\n"
				"filesystem:\n  denyRead: [~/.ssh/, ./a/../b]\n"
				"  allowRead: [~/.aws]\n  allowWrite: [., \"~\", /opt/w/bin]\n"
				"credentials: {files: [{path: ~/tok, mode: deny}]}\n"
				"audit: {path: logs/../a.jsonl}\n");

	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/w/proj/b"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/w/proj"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/h/u"));
	CU_ASSERT_STRING_EQUAL(policy_cred(p, 0)->path, "/h/u/tok");
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/tok")); /* a mode: deny file */
	CU_ASSERT_STRING_EQUAL(policy_audit_path(p), "/w/proj/a.jsonl");
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/a.jsonl"));
	CU_ASSERT_STRING_EQUAL(policy_extra_ca(p, 0), "/h/u/ca.pem");
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/ca.pem"));
	/* The HOME rows under both homes; an allowRead store stays readable. */
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.ssh"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/h/u/.aws"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.aws"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.bashrc"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/pw/u/.bashrc"));
	/* PATH (relative and empty entries from the working directory), an
	 * allowWrite directory excepted; the other code paths. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/usr/bin"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/bin"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj")); /* "" is ".", allowWrite */
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/opt/w/bin"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/env.sh"));
	/* The policy file as named and as resolved; both lookup places. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/p.yaml"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/real/p.yaml"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/xdg/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.config/passavant"));
	/* The sentinel key and ledger (SPEC §4.1): unreadable and unwritable
	 * in both places, under both homes. */
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.local/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.local/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.local/state/passavant"));
	/* Bound once: a second call changes nothing. */
	size_t n = policy_fs_count(p, FS_DENY_WRITE);
	CU_ASSERT_EQUAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_WRITE), n);
	policy_free(p);
}

/* Two spellings of one path are one entry once bound. */
static void test_bound_dedup(void)
{
	policy_t *p = load_pure("filesystem: {allowWrite: [~/w, /h/u/w, ../proj/w/.]}\n");

	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 3);
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 2);
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/h/u/w"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/w/proj/w"));
	policy_free(p);
}

/* Binding errors: "FILE:LINE:COL: error:" like the loader's. */
static void test_bind_errors(void)
{
	struct policy_host nohome = fake;
	char *diag = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&diag, &len);
	policy_t *p = load_pure("network:\n  tlsTerminate: {extraCaCertPaths: [/x/missing.pem]}\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(policy_bind(p, &fake, f), 1);
	policy_free(p);
	p = load_pure("filesystem: {denyRead: [~/x]}\n");
	nohome.home = "relative";
	CU_ASSERT(policy_bind(p, &nohome, f) >= 1);
	policy_free(p);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "p.yaml:2:37: error: \"/x/missing.pem\" in "
					    "network.tlsTerminate.extraCaCertPaths (No such file or "
					    "directory), expected a readable PEM file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "expected $HOME to be an absolute path"));
	free(diag);
}

TEST_REGISTRAR(register_policy_bind)
{
	CU_pSuite s = test_suite("policy_bind", NULL, NULL);

	test_add(s, "pure: paths as written", test_pure_forms);
	test_add(s, "bound: absolute paths and the machine's denies", test_bound);
	test_add(s, "bound: two spellings, one entry", test_bound_dedup);
	test_add(s, "bind errors with FILE:LINE:COL", test_bind_errors);
}

/*
 * loader_test.h - helpers of the policy loader's unit tests (test_config.c,
 * test_json.c, test_print.c): load a document and bind it to this machine
 * as the CLI does, assert errors, print. Marked unused, so a test file
 * that needs only some of them gets no warning; never inlined, since GCC
 * then reads open_memstream()'s buffer as a dangling local.
 */
#ifndef PASSAVANT_TEST_LOADER_TEST_H
#define PASSAVANT_TEST_LOADER_TEST_H

#include <CUnit/CUnit.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../policy/loader_int.h"
#include "../../support/testlib.h"

#define UNUSED_HELPER __attribute__((unused, noinline))

/* The machine as the CLI reads it, for policy_bind() and policy_lookup(). */
static UNUSED_HELPER const char *host_env(const char *name)
{
	return getenv(name);
}

static UNUSED_HELPER const char *host_file_problem(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	return access(path, R_OK) == 0 ? NULL : strerror(errno);
}

static UNUSED_HELPER int host_probe(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? 0 : errno;
}

static UNUSED_HELPER const char *host_pw_home(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw != NULL ? pw->pw_dir : NULL;
}

/* policy_bind() with this process's view of the machine (as proxy/cli/setup.c
 * does). Returns the number of errors, printed on diag. */
static UNUSED_HELPER unsigned bind_here(policy_t *p, FILE *diag)
{
	const char *home = getenv("HOME"), *pwh = host_pw_home();
	char *cwd = getcwd(NULL, 0);
	char *real = policy_file(p) != NULL ? realpath(policy_file(p), NULL) : NULL;
	struct policy_host h = {.home = home != NULL && home[0] != '\0' ? home : pwh,
				.pw_home = pwh,
				.cwd = cwd,
				.policy_real = real,
				.env = host_env,
				.file_problem = host_file_problem};
	unsigned n = policy_bind(p, &h, diag);

	free(cwd);
	free(real);
	return n;
}

/* policy_lookup() with this process's environment. */
static UNUSED_HELPER enum policy_source lookup(const char *cli, char *buf, size_t buflen)
{
	struct policy_lookup_env le = {.passavant_policy = getenv("PASSAVANT_POLICY"),
				       .xdg_config_home = getenv("XDG_CONFIG_HOME"),
				       .home = getenv("HOME"),
				       .pw_home = host_pw_home(),
				       .probe = host_probe};

	return policy_lookup(cli, &le, buf, buflen);
}

/* Loads a document and binds it to this machine, as `check` does; *diag
 * receives everything printed (caller frees). */
static UNUSED_HELPER policy_t *load(const char *doc, char **diag, unsigned *nerr)
{
	size_t dlen = 0;
	FILE *f;
	policy_t *p;
	unsigned n = 0;

	*diag = NULL;
	f = open_memstream(diag, &dlen);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	p = policy_load_buffer("t.yaml", doc, strlen(doc), f, &n);
	if (p != NULL && (n = bind_here(p, f)) != 0) {
		policy_free(p);
		p = NULL;
	}
	fclose(f);
	if (nerr != NULL)
		*nerr = n;
	return p;
}

/* Loads a document that must load; returns the policy. */
static UNUSED_HELPER policy_t *load_ok(const char *doc)
{
	char *diag;
	unsigned n;
	policy_t *p = load(doc, &diag, &n);

	if (p == NULL || n != 0)
		fprintf(stderr, "\nunexpected errors:\n%s", diag);
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(n, 0);
	free(diag);
	return p;
}

/* Asserts a document fails with exactly nerr errors and that the
 * diagnostics contain want (a whole "t.yaml:L:C: error: ..." prefix). */
static UNUSED_HELPER void load_err(const char *doc, unsigned nerr, const char *want)
{
	char *diag;
	unsigned n;
	policy_t *p = load(doc, &diag, &n);

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(n, nerr);
	if (want != NULL && strstr(diag, want) == NULL) {
		fprintf(stderr, "\nwanted: %s\ngot:\n%s", want, diag);
		CU_FAIL("diagnostic not found");
	}
	if (n != nerr)
		fprintf(stderr, "\nwanted %u errors, got %u:\n%s", nerr, n, diag);
	policy_free(p);
	free(diag);
}

/* Whether any warning of p contains s. */
static UNUSED_HELPER bool has_warning(const policy_t *p, const char *s)
{
	for (size_t i = 0; i < policy_warning_count(p); i++)
		if (strstr(policy_warning(p, i), s) != NULL)
			return true;
	return false;
}

/* The effective policy as text, then its warnings unless policy_only
 * (caller frees). */
static UNUSED_HELPER char *print_text(const policy_t *p, bool policy_only)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(policy_print(p, f), 0);
	if (!policy_only)
		policy_print_warnings(p, f);
	fclose(f);
	return buf;
}

static UNUSED_HELPER char *printed(const policy_t *p)
{
	return print_text(p, false);
}

static UNUSED_HELPER bool fs_has(const policy_t *p, enum policy_fs_list w, const char *path)
{
	for (size_t i = 0; i < policy_fs_count(p, w); i++)
		if (strcmp(policy_fs_path(p, w, i), path) == 0)
			return true;
	return false;
}

#endif

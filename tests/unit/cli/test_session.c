/*
 * test_session.c - proxy/cli/session.c: the env file's lines (the plan's
 * variables and sentinels as shell `export` lines), and proxy/cli/strv.c,
 * the CLI's string lists. Suite "cli_session".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/cli/session.c"
#include "proxy/cli/strv.h"
#include "tests/support/testlib.h"

/* The env file's text for vars and sentinels (malloc'd). */
static char *env_text(const char *const *vars, const char *const *sentinels)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	if (write_env_lines(f, "0123456789abcdef", vars, sentinels) < 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static void test_env_lines(void)
{
	const char *vars[] = {"HTTPS_PROXY=http://127.0.0.1:3128", "NODE_USE_ENV_PROXY=1",
			      "SSL_CERT_FILE=/s/it's/trust.pem", "EMPTY=", NULL};
	const char *sentinels[] = {"TOKEN=abc123", "Q=a'b", NULL};
	char *t = env_text(vars, sentinels);

	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT(strncmp(t, "# passavant session 0123456789abcdef: source this file", 54) == 0);
	CU_ASSERT(strstr(t, "export HTTPS_PROXY='http://127.0.0.1:3128'\n") != NULL);
	/* Letters and digits only: unquoted, as before the table moved. */
	CU_ASSERT(strstr(t, "export NODE_USE_ENV_PROXY=1\n") != NULL);
	CU_ASSERT(strstr(t, "export SSL_CERT_FILE='/s/it'\\''s/trust.pem'\n") != NULL);
	CU_ASSERT(strstr(t, "export EMPTY=''\n") != NULL);
	/* Sentinels always quoted. */
	CU_ASSERT(strstr(t, "export TOKEN='abc123'\n") != NULL);
	CU_ASSERT(strstr(t, "export Q='a'\\''b'\n") != NULL);
	/* A shell reads back exactly the values, quotes included. */
	{
		char path[] = "/tmp/pv-env-XXXXXX", *out = NULL;
		int fd = mkstemp(path);

		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL((size_t)write(fd, t, strlen(t)), strlen(t));
		(void)close(fd);
		char script[256];
		snprintf(script, sizeof(script), ". '%s' && printf '%%s|%%s' \"$Q\" \"$SSL_CERT_FILE\"",
			 path);
		char *const argv[] = {"sh", "-c", script, NULL};
		CU_ASSERT_EQUAL(test_run_capture(argv, &out, NULL, 10000), 0);
		CU_ASSERT(out != NULL && strcmp(out, "a'b|/s/it's/trust.pem") == 0);
		free(out);
		(void)unlink(path);
	}
	free(t);
	t = env_text(NULL, NULL);
	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT(strchr(t, '\n') == t + strlen(t) - 1); /* the header only */
	free(t);
}

/* A temporary session directory is removed with the plan's sys/ tree
 * (files, a subdirectory, a link whose target stays); a stranger's file
 * keeps it. */
static void test_free_removes_sys(void)
{
	char dir[PATH_MAX], p[PATH_MAX + 64], target[PATH_MAX + 64];
	session_t *s = session_new(NULL);
	struct stat st;

	CU_ASSERT_FATAL(s != NULL);
	snprintf(dir, sizeof(dir), "%s", session_dir(s));
	snprintf(target, sizeof(target), "%s.target", dir);
	CU_ASSERT_FATAL(test_write_file(target, "keep\n", 5) == 0);
	snprintf(p, sizeof(p), "%s/sys", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/sys/certs", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/sys/certs/0badc0de.0", dir);
	CU_ASSERT_FATAL(test_write_file(p, "x", 1) == 0);
	snprintf(p, sizeof(p), "%s/sys/hosts", dir);
	CU_ASSERT_FATAL(test_write_file(p, "x", 1) == 0);
	snprintf(p, sizeof(p), "%s/sys/link", dir);
	CU_ASSERT_FATAL(symlink(target, p) == 0);
	session_free(s);
	CU_ASSERT(stat(dir, &st) < 0);
	CU_ASSERT(stat(target, &st) == 0); /* the link was not followed */
	CU_ASSERT(unlink(target) == 0);
}

static void test_strv(void)
{
	struct strv sv = {0};

	CU_ASSERT_PTR_NULL(strv_list(&sv));
	CU_ASSERT(strv_add(&sv, "/a") == 0);
	CU_ASSERT(strv_add_unique(&sv, "/a") == 0);
	CU_ASSERT(strv_add_join(&sv, "/", "b") == 0);
	CU_ASSERT(strv_add_join(&sv, "/d", ".git/hooks") == 0);
	CU_ASSERT(strv_add_join(&sv, "/d", ".git/hooks") == 0);
	CU_ASSERT_EQUAL(sv.n, 3);
	CU_ASSERT(strv_has(&sv, "/b") && strv_has(&sv, "/d/.git/hooks") && !strv_has(&sv, "/d"));
	CU_ASSERT_PTR_NOT_NULL(strv_list(&sv));
	CU_ASSERT_PTR_NULL(strv_list(&sv)[3]);
	strv_free(&sv);
	CU_ASSERT(sv.n == 0 && sv.v == NULL);
}

TEST_REGISTRAR(cli_session_register)
{
	CU_pSuite s = test_suite("cli_session", NULL, NULL);

	test_add(s, "env file: export lines, quoting, sentinels", test_env_lines);
	test_add(s, "a temporary session directory goes with sys/", test_free_removes_sys);
	test_add(s, "strv: add, unique, join, list, free", test_strv);
}

/*
 * sbxrun.c - the shared pieces of the suites that start `passavant run`
 * (sbxrun.h).
 */
#include "sbxrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "testlib.h"

int test_sandbox_gate(const char *suite)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	char why[256];

	if (test_userns_available(why, sizeof(why)))
		return 1;
	if (must != NULL && strcmp(must, "1") == 0) {
		fprintf(stderr, "%s: namespaces unavailable (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n", suite,
			why);
		return -1;
	}
	fprintf(stderr, "%s: SKIP: user namespaces unavailable: %s\n", suite, why);
	return 0;
}

int test_ghp_token(char out[41])
{
	static const char cs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[36];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	memcpy(out, "ghp_", 4);
	for (size_t i = 0; i < sizeof(rnd); i++)
		out[4 + i] = cs[rnd[i] % (sizeof(cs) - 1)];
	out[40] = '\0';
	return 0;
}

#define SBX_LIST_MAX 32

int test_sbx_run(const struct test_sbx_run *r, char **out, char **err, int timeout_ms)
{
	return test_sbx_run_args(r, NULL, out, err, timeout_ms);
}

int test_sbx_run_args(const struct test_sbx_run *r, const char *const *args, char **out, char **err,
		      int timeout_ms)
{
	char h[4096 + 8], pth[8192 + 8], asan[512] = "", ubsan[512] = "";
	char *argv[16 + 3 * SBX_LIST_MAX];
	size_t n = 0;

	if (getenv("ASAN_OPTIONS") != NULL)
		snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s", getenv("ASAN_OPTIONS"));
	if (getenv("UBSAN_OPTIONS") != NULL)
		snprintf(ubsan, sizeof(ubsan), "UBSAN_OPTIONS=%s", getenv("UBSAN_OPTIONS"));
	if ((size_t)snprintf(h, sizeof(h), "HOME=%s", r->home) >= sizeof(h) ||
	    (size_t)snprintf(pth, sizeof(pth), "PATH=%s", r->path != NULL ? r->path : TEST_SAFE_PATH) >=
		    sizeof(pth))
		return -1;
	argv[n++] = "env";
	argv[n++] = "-i";
	argv[n++] = "-C";
	argv[n++] = (char *)r->cwd;
	argv[n++] = h;
	argv[n++] = pth;
	argv[n++] = "TMPDIR=/tmp";
	/* env -i keeps the runner's variables out of the command; the
	 * sanitizer settings of `make test-asan` still apply. */
	if (asan[0] != '\0')
		argv[n++] = asan;
	if (ubsan[0] != '\0')
		argv[n++] = ubsan;
	for (size_t i = 0; r->env != NULL && r->env[i] != NULL; i++) {
		if (i == SBX_LIST_MAX)
			return -1;
		argv[n++] = (char *)r->env[i];
	}
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	for (size_t i = 0; r->opts != NULL && r->opts[i] != NULL; i++) {
		if (i == SBX_LIST_MAX)
			return -1;
		argv[n++] = (char *)r->opts[i];
	}
	argv[n++] = "-p";
	argv[n++] = (char *)r->policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = (char *)r->script;
	for (size_t i = 0; args != NULL && args[i] != NULL; i++) {
		if (i == SBX_LIST_MAX)
			return -1;
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	return test_run_capture(argv, out, err, timeout_ms);
}

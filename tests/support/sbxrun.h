/*
 * sbxrun.h - what the suites that start `passavant run` share: the gate
 * that skips them without user namespaces, a random GitHub-shaped token,
 * and one `passavant run` under `env -i` with its script.
 */
#ifndef PASSAVANT_TEST_SBXRUN_H
#define PASSAVANT_TEST_SBXRUN_H

#include <stddef.h>

/* The PATH a sandboxed command gets in these suites. */
#define TEST_SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/*
 * The start of such a suite: 1 when user namespaces work; 0 when they do
 * not (a "SUITE: SKIP: why" line on stderr: the suite skips); -1 when
 * PASSAVANT_SANDBOX_MUST_WORK=1 says they must (the suite fails).
 */
int test_sandbox_gate(const char *suite);

/* "ghp_" and 36 random letters and digits, NUL-terminated, into out. 0,
 * or -1 when the kernel gave no random bytes. */
int test_ghp_token(char out[41]);

/*
 * One `passavant run` under `env -i -C cwd`: HOME=home, PATH=path (NULL:
 * TEST_SAFE_PATH), TMPDIR=/tmp, the sanitizer settings of `make
 * test-asan`, the NAME=value entries of env, then `passavant run` with
 * opts, -p policy, -- sh script. env and opts are NULL-terminated, may be
 * NULL, at most 32 entries each. The command's exit status, or -1.
 */
struct test_sbx_run {
	const char *cwd, *home, *path, *policy, *script;
	const char *const *env, *const *opts;
};
int test_sbx_run(const struct test_sbx_run *r, char **out, char **err, int timeout_ms);
/* test_sbx_run() with args after the script (its $1, $2, ...). */
int test_sbx_run_args(const struct test_sbx_run *r, const char *const *args, char **out, char **err,
		      int timeout_ms);

#endif

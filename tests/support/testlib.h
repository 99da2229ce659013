/*
 * testlib.h - shared CUnit plumbing for the unit and integration runners.
 *
 * A test file registers its suite with TEST_REGISTRAR(name) { ... } whose
 * body calls CU_add_suite()/CU_add_test(); the runner calls every
 * registrar in link order. No central list to edit (STYLE.md 18: one
 * registrar per file).
 */
#ifndef PASSAVANT_TESTLIB_H
#define PASSAVANT_TESTLIB_H

#include <CUnit/CUnit.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef void (*test_registrar_fn)(void);

/* Called by the constructors TEST_REGISTRAR expands to. */
void test_add_registrar(test_registrar_fn fn, const char *name);

#define TEST_REGISTRAR(name)                                                   \
	static void name(void);                                                \
	__attribute__((constructor)) static void name##_ctor(void)            \
	{                                                                      \
		test_add_registrar(name, #name);                               \
	}                                                                      \
	static void name(void)

/* Runs every registered suite (those whose name contains $TEST_FILTER when
 * it is set) in CUnit basic mode and prints the summary. Returns the
 * process exit status: 0 only if tests ran and none failed. */
int test_run_all(const char *title);

/*
 * Marks the running test skipped: it prints "SKIP: SUITE / TEST: REASON",
 * counts it in the runner's summary and appends the line to the file named
 * by $TEST_SKIP_LOG (make test prints the total). With
 * PASSAVANT_SANDBOX_MUST_WORK=1 (CI) a skip is a failure instead: CUnit
 * counts a test that returns early as passed, so nothing may skip there.
 * Call it, then return from the test. Use through TEST_SKIP().
 */
void test_skip_at(const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define TEST_SKIP(...) test_skip_at(__FILE__, __LINE__, __VA_ARGS__)

/* Whether this process can create the namespaces passavant run needs
 * (tried with unshare() in a throwaway child). When not, why says why. */
bool test_userns_available(char *why, size_t len);

/* The first line of a test of a suite that needs the sandbox: skipped
 * (counted) when the suite found no user namespaces, else the suite must
 * have set itself up. */
#define TEST_SKIP_UNLESS_SANDBOX(skip, ready)                      \
	do {                                                       \
		if (skip) {                                        \
			TEST_SKIP("sandbox unavailable (suite setup says why)"); \
			return;                                    \
		}                                                  \
		CU_ASSERT_FATAL(ready);                            \
	} while (0)

/* A suite's init around its fixtures: 0 at once when *ready; else up(),
 * and when that fails "SUITE: the fixtures could not be set up (the
 * lines above say why)" on stderr, cleanup() and -1; *ready once up. */
int test_suite_fixtures(bool *ready, const char *suite, int (*up)(void), int (*cleanup)(void));

/* Adds a suite, failing the run loudly if CUnit refuses. */
CU_pSuite test_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup);
void test_add(CU_pSuite s, const char *name, CU_TestFunc fn);

/* Paths the GNUmakefile passes: the passavant binary under test, the test
 * tools directory and the source tree. Abort if unset. */
const char *test_passavant_bin(void);
const char *test_tools_dir(void);
const char *test_srcdir(void);

/* Creates a fresh 0700 temporary directory; caller frees the string and
 * may remove the tree with test_rmtree(). */
char *test_mkdtemp(void);
void test_rmtree(const char *path);
/* A suite's end of its test_mkdtemp() root: removes the tree when
 * *ready (a suite that did not get ready leaves it for a look), frees
 * the string, sets *root to NULL and *ready to false. */
void test_root_done(char **root, bool *ready);

/* Writes a file (0600). Returns 0 or -1. */
int test_write_file(const char *path, const char *data, size_t len);
/* Copies src to dst with mode (for a binary the sandbox or another user
 * must reach wherever the clone lives: inside `passavant run` the host's
 * /tmp is private, and Debian's /root is 0700). Returns 0 or -1. */
int test_copy_file(const char *src, const char *dst, mode_t mode);
/* A file's size in bytes, 0 when it cannot be stat'ed. */
size_t test_file_size(const char *path);
/* What a file got past offset mark (an audit or record file that grows):
 * malloc'd, "" when nothing; aborts when out of memory. */
char *test_file_since(const char *path, size_t mark);
/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL on error. */
char *test_read_file(const char *path, size_t *len);
/* The VmFlags line (without "VmFlags:") of this process's mapping that
 * starts at addr, from /proc/self/smaps, into flags (cap bytes). */
bool test_vmflags(const void *addr, char *flags, size_t cap);
/* VmRSS of pid in KiB (/proc/PID/status), -1 on error. */
long test_rss_kib(pid_t pid);

/*
 * Runs argv[0] with argv (execvp), stdin from /dev/null, capturing stdout
 * and stderr into malloc'd strings (either out pointer may be NULL).
 * Returns the exit status (0-255), 128+N on signal N, or -1 on failure to
 * run. timeout_ms > 0 kills the child (SIGKILL) past it.
 */
int test_run_capture(char *const argv[], char **out, char **err, int timeout_ms);

/*
 * Runs the shell script fmt (printf-style) with `sh -ec` in root with the
 * host's git, as a user's: HOME root/githome, a fixed name and e-mail, no
 * system config. A failure is said on stderr with its status, and with
 * the script and its output when show is true (false where the script may
 * hold a real secret). Returns 0 when it exits 0.
 */
int test_git_sh(const char *root, bool show, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Round 45: the helpers the integration suites with a tree of their own
 * each had a copy of. test_at(): root/rel into buf (PATH_MAX bytes; ""
 * when too long), returns buf. test_exists_at(): whether root/rel exists
 * (lstat: a dangling link too). test_mkdirs_at(): mkdir -p root/rel
 * (0755; root itself must exist), 0 or -1. test_put_at(): writes text to
 * root/rel (0644), 0 or -1. test_show_run(): a run's exit status, stdout
 * and stderr on stderr, for a test that failed.
 */
static inline char *test_at(char *buf, const char *root, const char *rel)
{
	/* inline: the callers' format checks see buf's PATH_MAX bound */
	int n = snprintf(buf, PATH_MAX, "%s/%s", root, rel);

	if (n < 0 || n >= PATH_MAX)
		buf[0] = '\0';
	return buf;
}
bool test_exists_at(const char *root, const char *rel);
int test_mkdirs_at(const char *root, const char *rel);
int test_put_at(const char *root, const char *rel, const char *text);
void test_show_run(int st, const char *out, const char *err);

/*
 * One CUnit assertion per table row: passes silently, or fails with the
 * printf-formatted message (formatted only on failure). Use through ROW().
 */
void test_row_check(bool ok, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define ROW(ok, ...) test_row_check((ok), __FILE__, __LINE__, __VA_ARGS__)

#endif

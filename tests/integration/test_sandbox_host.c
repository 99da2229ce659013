/*
 * test_sandbox_host.c - what a command in the sandbox makes the host's
 * kernel run outside it (suite "sandbox_host"): a crash inside and the
 * host's core dump helper (kernel.core_pattern). The real passavant
 * binary, run as root, in a tree of the test's own under /var/tmp.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"

#define HO_TIMEOUT_MS 60000

static bool skip;
static bool ready;
static char *root; /* /var/tmp/pv-host.XXXXXX, 0755: work/, home/ */

static int suite_cleanup(void)
{
	test_root_done(&root, &ready);
	return 0;
}

static int fixtures_up(void)
{
	root = strdup("/var/tmp/pv-host.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0 ||
	    test_mkdirs_at(root, "work") < 0 || test_mkdirs_at(root, "home") < 0)
		return -1;
	return 0;
}

static int suite_init(void)
{
	int gate;

	if (ready || skip)
		return 0;
	gate = test_sandbox_gate("sandbox_host");
	if (gate <= 0) {
		skip = gate == 0;
		return gate;
	}
	return test_suite_fixtures(&ready, "sandbox_host", fixtures_up, suite_cleanup);
}

/* `passavant run -- sh script` in ROOT/work (a policy that allows writes
 * there, as the default does; the script written to ROOT/run-N.sh): its
 * status, out, err. */
static int run_in(const char *inside, char **out, char **err)
{
	static unsigned nrun;
	char work[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], state[PATH_MAX + 24], name[32];
	char text[PATH_MAX + 64];
	const char *env[] = {state, NULL};
	struct test_sbx_run r = {test_at(work, root, "work"), test_at(home, root, "home"), NULL, pol, sc, env,
				 NULL};
	int n;

	*out = *err = NULL;
	snprintf(state, sizeof(state), "XDG_STATE_HOME=%s", home);
	snprintf(name, sizeof(name), "run-%u.sh", nrun);
	if (test_write_file(test_at(sc, root, name), inside, strlen(inside)) < 0)
		return -1;
	snprintf(name, sizeof(name), "run-%u.yaml", nrun++);
	n = snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [\"%s\"]\n", work);
	if (n < 0 || n >= (int)sizeof(text) || test_write_file(test_at(pol, root, name), text, (size_t)n) < 0)
		return -1;
	return test_sbx_run(&r, out, err, HO_TIMEOUT_MS);
}

/*
 * Round 48 (attack48s): a crash inside the sandbox dumped its core
 * through the host's kernel.core_pattern. With a pattern starting with
 * '|' (systemd-coredump, apport, ABRT) the host kernel runs that helper
 * as root in the host's namespaces, outside the sandbox, on a process
 * and names the command chose; RLIMIT_CORE 0 does not stop it (the
 * kernel ignores the limit for a pipe), and the command could raise its
 * soft limit to a hard one of unlimited anyway. Only RLIMIT_CORE 1
 * aborts a pipe dump, and it is below a file dump's minimum: soft and
 * hard 1, which the command cannot raise. Shown on any pattern: the
 * limits inside, the raise refused, and a crash after `ulimit -c
 * unlimited` (tried) leaves no core file in the working directory (this
 * machine's pattern may be a plain file name; a pipe helper's run is not
 * observable without changing the host's pattern).
 */
static void test_no_core_dump(void)
{
	static const char inside[] =
		"python3 -c 'import resource as r; print(\"core\", *r.getrlimit(r.RLIMIT_CORE))\n"
		"try:\n"
		"    r.setrlimit(r.RLIMIT_CORE, (r.RLIM_INFINITY, r.RLIM_INFINITY)); print(\"RAISED\")\n"
		"except (ValueError, OSError) as e:\n"
		"    print(\"refused\")'; "
		"ulimit -c unlimited 2>/dev/null; ulimit -S -c unlimited 2>/dev/null; "
		"sh -c 'kill -SEGV $$'; echo done";
	char *out = NULL, *err = NULL, p[PATH_MAX];
	struct dirent *e;
	int st_run;
	DIR *d;

	TEST_SKIP_UNLESS_SANDBOX(skip, ready);
	st_run = run_in(inside, &out, &err);
	ROW(out != NULL && strstr(out, "done") != NULL, "the command did not run (%d): %s %s", st_run,
	    out ? out : "", err ? err : "");
	ROW(out != NULL && strstr(out, "core 1 1\n") != NULL,
	    "RLIMIT_CORE inside is not soft and hard 1 (a pipe core_pattern runs the host's helper): %s %s",
	    out ? out : "", err ? err : "");
	ROW(out != NULL && strstr(out, "refused") != NULL && strstr(out, "RAISED") == NULL,
	    "the command raised its RLIMIT_CORE: %s", out ? out : "");
	/* "core" or "core.PID" (kernel.core_uses_pid) */
	snprintf(p, sizeof(p), "%s/work", root);
	d = opendir(p);
	CU_ASSERT_FATAL(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "core", 4) == 0) {
			ROW(false, "a crash inside left a core file in the working directory: %s/%s", p, e->d_name);
			(void)unlinkat(dirfd(d), e->d_name, 0);
		}
	(void)closedir(d);
	free(out);
	free(err);
}

TEST_REGISTRAR(register_sandbox_host)
{
	CU_pSuite s = test_suite("sandbox_host", suite_init, suite_cleanup);

	test_add(s, "round 48: no core dump of the command (RLIMIT_CORE 1, which a pipe core_pattern honours)",
		 test_no_core_dump);
}

/*
 * test_sandbox_host.c - what a command in the sandbox makes the host's
 * kernel run outside it (suite "sandbox_host"): a crash inside and the
 * host's core dump helper (kernel.core_pattern). The real passavant
 * binary, run as root, in a tree of the test's own under /var/tmp.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

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

/* `passavant run -- sh script` in ROOT/work (a policy of net (a network
 * section, or "") and writes allowed there, as the default does; the
 * script written to ROOT/run-N.sh): its status, out, err. */
static int run_net(const char *net, const char *inside, char **out, char **err)
{
	static unsigned nrun;
	char work[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], state[PATH_MAX + 24], name[32], text[PATH_MAX + 64];
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
	n = snprintf(text, sizeof(text), "%sfilesystem:\n  allowWrite: [\"%s\"]\n", net, work);
	if (n < 0 || n >= (int)sizeof(text) || test_write_file(test_at(pol, root, name), text, (size_t)n) < 0)
		return -1;
	return test_sbx_run(&r, out, err, HO_TIMEOUT_MS);
}

static int run_in(const char *inside, char **out, char **err)
{
	return run_net("", inside, out, err);
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
		"    r.setrlimit(r.RLIMIT_CORE, (r.RLIM_INFINITY, r.RLIM_INFINITY))\n"
		"except (ValueError, OSError) as e:\n"
		"    print(\"refused\")\n"
		"print(\"after\", *r.getrlimit(r.RLIMIT_CORE))'; "
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
	/* round 49: the set returns 0 and changes nothing (seccomp) */
	ROW(out != NULL && strstr(out, "after 1 1\n") != NULL, "the command raised its RLIMIT_CORE: %s",
	    out ? out : "");
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

/* Writes text to /proc/sys/kernel/core_pattern. 0, or -1. */
static int set_core_pattern(const char *text)
{
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "w");
	int rc = 0;

	if (f == NULL)
		return -1;
	if (fputs(text, f) == EOF)
		rc = -1;
	if (fclose(f) == EOF)
		rc = -1;
	return rc;
}

/* The crashers of test_core_pipe(): each a child named with prctl
 * (PR_SET_NAME: the %e the helper is given), what it tried first said
 * on stdout, then SIGSEGV. PREFIX is argv[1]. */
static const char crashers[] =
	"import ctypes, os, resource as r, signal, sys\n"
	"libc = ctypes.CDLL(None, use_errno=True)\n"
	"pre = sys.argv[1]\n"
	"def crash(name, prep):\n"
	"    sys.stdout.flush()\n"
	"    pid = os.fork()\n"
	"    if pid == 0:\n"
	"        libc.prctl(15, (pre + name).encode(), 0, 0, 0)\n"
	"        try:\n"
	"            prep(); print(name, 'set', r.getrlimit(r.RLIMIT_CORE))\n"
	"        except (ValueError, OSError) as e:\n"
	"            print(name, 'refused', e)\n"
	"        sys.stdout.flush()\n"
	"        os.kill(os.getpid(), signal.SIGSEGV)\n"
	"        os._exit(0)\n"
	"    os.waitpid(pid, 0)\n"
	"crash('-set', lambda: r.setrlimit(r.RLIMIT_CORE, (0, r.getrlimit(r.RLIMIT_CORE)[1])))\n"
	"crash('-prl', lambda: r.prlimit(0, r.RLIMIT_CORE, (0, r.getrlimit(r.RLIMIT_CORE)[1])))\n"
	"def dumpable():\n"
	"    if libc.prctl(4, 1, 0, 0, 0) != 0: raise OSError(ctypes.get_errno(), 'PR_SET_DUMPABLE')\n"
	"crash('-dmp', dumpable)\n"
	"print('done')\n";

/*
 * Round 49 (attack49s): a pipe core_pattern and a command that lowers
 * its own RLIMIT_CORE. The kernel honours the limit for a pipe at the
 * value 1 only; round 48's soft and hard 1 could not be raised, but the
 * soft one could be lowered to 0 (`ulimit -S -c 0`, setrlimit,
 * prlimit64), which the kernel ignores for a pipe: the host ran its
 * helper as root on the crash. With kernel.core_pattern set to a helper
 * of the test's own for the few seconds of the run (root only, restored
 * at once): a control crash outside the sandbox with the limit lowered
 * runs it; inside, setrlimit() to 0 returns 0 and the limit stays 1
 * (the sanitizers' runtimes need that call to succeed), prlimit() with
 * an old limit to fill is refused, PR_SET_DUMPABLE 1 changes nothing,
 * and no crash inside runs the helper. Fails on round 48's binary (setrlimit and prlimit64 lowered
 * the limit: "pvin49-set" and "pvin49-prl" in the helper's record).
 */
static void test_core_pipe(void)
{
	char helper[PATH_MAX], marker[PATH_MAX], script[PATH_MAX], pattern[2 * PATH_MAX], text[2 * PATH_MAX];
	char inside[PATH_MAX + 64], *saved, *out = NULL, *err = NULL, *cout = NULL, *rec = NULL;
	char *ctl[] = {"python3", script, "pvctl49", NULL};
	int st_run, n;

	TEST_SKIP_UNLESS_SANDBOX(skip, ready);
	saved = test_read_file("/proc/sys/kernel/core_pattern", NULL);
	if (geteuid() != 0 || saved == NULL || access("/proc/sys/kernel/core_pattern", W_OK) < 0) {
		free(saved);
		TEST_SKIP("kernel.core_pattern cannot be set here (needs root on the host)");
		return;
	}
	n = snprintf(text, sizeof(text), "#!/bin/sh\necho \"$1 $2\" >> %s\ncat >/dev/null\n",
		     test_at(marker, root, "marker"));
	CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof(text));
	CU_ASSERT_FATAL(test_write_file(test_at(helper, root, "helper.sh"), text, (size_t)n) == 0 &&
			chmod(helper, 0755) == 0);
	CU_ASSERT_FATAL(test_write_file(test_at(script, root, "crash.py"), crashers, strlen(crashers)) == 0 &&
			chmod(script, 0644) == 0);
	snprintf(inside, sizeof(inside), "python3 %s pvin49; echo ran", script);
	snprintf(pattern, sizeof(pattern), "|%s %%p %%e", helper);
	CU_ASSERT_FATAL(strlen(pattern) < 128);
	CU_ASSERT_FATAL(set_core_pattern(pattern) == 0);
	/* the window: a control crash outside, then the run; restored
	 * before anything is asserted */
	(void)test_run_capture(ctl, &cout, NULL, HO_TIMEOUT_MS);
	st_run = run_in(inside, &out, &err);
	for (int i = 0; i < 30 && !test_has(rec, "pvctl49"); i++) {
		free(rec);
		(void)usleep(100000);
		rec = test_read_file(marker, NULL);
	}
	(void)usleep(500000); /* a helper of the run's crashes, if any, as late as the control's */
	free(rec);
	rec = test_read_file(marker, NULL);
	CU_ASSERT_FATAL(set_core_pattern(saved) == 0);
	ROW(st_run == 0 && test_has(out, "done") && test_has(out, "ran"), "the command did not run (%d): %s %s",
	    st_run, test_nz(out), test_nz(err));
	if (!test_has(rec, "pvctl49")) {
		TEST_SKIP("the control crash outside the sandbox ran no core_pattern helper here (%s)", test_nz(cout));
	} else {
		ROW(test_has(out, "-set set (1, 1)") && test_has(out, "-prl refused") && test_has(out, "-dmp set (1, 1)"),
		    "the command lowered its RLIMIT_CORE (0 is ignored for a pipe core_pattern), or its setrlimit "
		    "failed (the sanitizers die of that): %s",
		    test_nz(out));
		ROW(!test_has(rec, "pvin49"),
		    "a crash inside ran the host's core_pattern helper (as root, outside the sandbox): %s",
		    test_nz(rec));
	}
	free(saved);
	free(rec);
	free(cout);
	free(out);
	free(err);
}

/* The host daemon of test_unix_fds(): on the unix socket argv[1] (0666),
 * one client: the fd it sends (OUT) read and recorded, then a TCP
 * socket of the host's network namespace sent back (IN) with the port of
 * a loopback listener of the host, whose accepted bytes are recorded. */
static const char fd_daemon[] =
	"import array, os, socket, sys\n"
	"rec = open(sys.argv[2], 'a', buffering=1)\n"
	"lst = socket.socket(); lst.bind(('127.0.0.1', 0)); lst.listen(1); lst.settimeout(30)\n"
	"srv = socket.socket(socket.AF_UNIX); srv.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)\n"
	"srv.listen(1); srv.settimeout(60)\n"
	"open(sys.argv[1] + '.up', 'w').close()\n"
	"try:\n"
	"    c, _ = srv.accept()\n"
	"except socket.timeout:\n"
	"    sys.exit(0)\n"
	"c.settimeout(30)\n"
	"msg, fds, _, _ = socket.recv_fds(c, 16, 4)\n"
	"for fd in fds:\n"
	"    rec.write('OUT ' + os.read(fd, 64).decode(errors='replace') + '\\n')\n"
	"t = socket.socket()\n"
	"socket.send_fds(c, [str(lst.getsockname()[1]).encode()], [t.fileno()])\n"
	"a, _ = lst.accept()\n"
	"rec.write('IN ' + a.recv(64).decode(errors='replace') + '\\n')\n";

/* The command's side: connect to the daemon, hand it a pipe, take its
 * socket, connect that to the host's loopback. */
static const char fd_client[] =
	"import os, socket, sys\n"
	"try:\n"
	"    u = socket.socket(socket.AF_UNIX)\n"
	"except OSError as e:\n"
	"    print('AF_UNIX refused', e); sys.exit(0)\n"
	"u.settimeout(30); u.connect(sys.argv[1])\n"
	"r, w = os.pipe(); os.write(w, b'from-the-sandbox')\n"
	"socket.send_fds(u, [b'x'], [r])\n"
	"msg, fds, _, _ = socket.recv_fds(u, 16, 1)\n"
	"s = socket.socket(fileno=fds[0]); s.settimeout(10)\n"
	"s.connect(('127.0.0.1', int(msg))); s.sendall(b'past-the-proxy'); print('connected')\n";

/* Starts the daemon on sock (recording to rec); its pid, or -1. */
static pid_t fd_daemon_start(const char *py, const char *sock, const char *rec)
{
	char up[PATH_MAX + 8];
	pid_t pid;

	snprintf(up, sizeof(up), "%s.up", sock);
	(void)unlink(sock);
	(void)unlink(up); /* the last daemon's */
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("python3", "python3", py, sock, rec, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && access(up, F_OK) < 0; i++)
		(void)usleep(50000);
	return pid;
}

/*
 * Round 49 (attack49s), what allowAllUnixSockets means for fds: with it,
 * a host daemon whose socket file lies in a tree the sandbox can read
 * (here ROOT/run) is a peer both ways. The command hands it an fd
 * (SCM_RIGHTS OUT: a pipe of its own, read by the daemon) and takes one
 * from it (IN: a TCP socket the daemon made in the host's network
 * namespace, which the command connects to the host's loopback, past the
 * proxy and its own namespace). No seccomp filter can see a message's
 * control data, and refusing sendmsg()/recvmsg() on AF_UNIX would break
 * what the setting is set for; so it is the setting's meaning (as
 * sandbox-runtime's, which lifts its AF_UNIX filter whole), said in
 * docs/sandbox.md and the policy reference, and pinned here both ways:
 * without the setting the same command cannot make the socket and the
 * daemon is never reached.
 */
static void test_unix_fds(void)
{
	char py[PATH_MAX], cl[PATH_MAX], sock[PATH_MAX], rec[PATH_MAX], inside[3 * PATH_MAX];
	char *out = NULL, *err = NULL, *text;
	int st_run, wst;
	pid_t pid;

	TEST_SKIP_UNLESS_SANDBOX(skip, ready);
	CU_ASSERT_FATAL(test_write_file(test_at(py, root, "fdd.py"), fd_daemon, strlen(fd_daemon)) == 0 &&
			test_write_file(test_at(cl, root, "fdc.py"), fd_client, strlen(fd_client)) == 0 &&
			chmod(cl, 0644) == 0);
	CU_ASSERT_FATAL(test_mkdirs_at(root, "run") == 0);
	test_at(sock, root, "run/d.sock");
	test_at(rec, root, "fd-record");
	snprintf(inside, sizeof(inside), "python3 %s %s; echo ran", cl, sock);

	/* without the setting: not reached */
	pid = fd_daemon_start(py, sock, rec);
	CU_ASSERT_FATAL(pid > 0);
	st_run = run_in(inside, &out, &err);
	(void)kill(pid, SIGTERM);
	(void)waitpid(pid, &wst, 0);
	text = test_read_file(rec, NULL);
	ROW(st_run == 0 && test_has(out, "AF_UNIX refused") && !test_has(text, "OUT") && !test_has(text, "IN"),
	    "without allowAllUnixSockets the host daemon was reached: %d %s %s record %s", st_run, test_nz(out),
	    test_nz(err), test_nz(text));
	free(text);
	free(out);
	free(err);

	/* with it: fds both ways, the host's network reached */
	pid = fd_daemon_start(py, sock, rec);
	CU_ASSERT_FATAL(pid > 0);
	st_run = run_net("network:\n  allowAllUnixSockets: true\n", inside, &out, &err);
	(void)waitpid(pid, &wst, 0);
	text = test_read_file(rec, NULL);
	ROW(st_run == 0 && test_has(out, "connected") && test_has(text, "OUT from-the-sandbox") &&
		    test_has(text, "IN past-the-proxy"),
	    "allowAllUnixSockets no longer means a host peer both ways (docs/sandbox.md to update): %d %s %s "
	    "record %s",
	    st_run, test_nz(out), test_nz(err), test_nz(text));
	free(text);
	free(out);
	free(err);
	(void)unlink(sock);
}

TEST_REGISTRAR(register_sandbox_host)
{
	CU_pSuite s = test_suite("sandbox_host", suite_init, suite_cleanup);

	test_add(s, "round 48: no core dump of the command (RLIMIT_CORE 1, which a pipe core_pattern honours)",
		 test_no_core_dump);
	test_add(s, "round 49: a pipe core_pattern runs nothing on a crash inside (RLIMIT_CORE cannot be lowered)",
		 test_core_pipe);
	test_add(s, "round 49: allowAllUnixSockets: a host daemon's socket passes fds both ways (the setting's meaning)",
		 test_unix_fds);
}

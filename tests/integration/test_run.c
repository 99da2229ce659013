/*
 * test_run.c - `passavant run` end to end (issue 6, SPEC §2, §3.3, §7):
 * real programs (sh, curl, python3, ps, unshare) run inside the sandbox
 * behind the proxy, against the project's own HTTPS upstream (pv-upstream
 * --tls, recording what it received). Suite "run"; "run_unprivileged"
 * repeats the core checks as uid 65534 when the runner is root and
 * setpriv exists.
 *
 * Each test writes a small shell script, runs
 *   env -C WORK HOME=HOME PATH=... GH_TOKEN=REAL passavant run -p POLICY -- sh SCRIPT
 * and asserts on what the script printed (stdout), on passavant's stderr,
 * on the exit status and on the host's files afterwards.
 *
 * Without user namespaces every test is skipped with the reason printed,
 * unless PASSAVANT_SANDBOX_MUST_WORK=1 (then that is a failure). The tree
 * lives under /var/tmp: the sandbox's /tmp is private.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/proc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"
#include "tests/support/upstream.h"

#define RUN_TIMEOUT_MS 60000
/* The test upstream is on 127.0.0.1, which NO_PROXY exempts (SPEC §7:
 * the sandbox's own loopback): clear it so curl goes through the proxy. */
#define VIA_PROXY "NO_PROXY= no_proxy= "
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool skip;                 /* no user namespaces */
static bool ready;                /* fixtures up */
static char *root;                /* /var/tmp/pv-run.XXXXXX */
static struct test_upstream up;   /* HTTPS, records requests */
static char p_home[PATH_MAX], p_work[PATH_MAX], p_policy[PATH_MAX], p_badpolicy[PATH_MAX];
static char p_cred[PATH_MAX], p_record[PATH_MAX], p_certs[PATH_MAX];
static char real_token[41];       /* ghp_ + 36: the masked variable's real value */
static char real_file[33];        /* the masked file's real content */
static const char *python = "python3";
static unsigned nscript;

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

/* The run policy: the upstream allowed (GET/HEAD only everywhere), its
 * test CA trusted, GH_TOKEN and the cred file masked for 127.0.0.1,
 * PV_DENIED removed, the work directory writable. */
static int write_policy(void)
{
	char text[4 * PATH_MAX];

	snprintf(text, sizeof(text),
		 "network:\n"
		 "  allowedDomains: [\"127.0.0.1\"]\n"
		 "  allowedMethods:\n"
		 "    \"*\": [GET, HEAD]\n"
		 "  tlsTerminate:\n"
		 "    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "credentials:\n"
		 "  envVars:\n"
		 "    - name: GH_TOKEN\n"
		 "      mode: mask\n"
		 "      injectHosts: [\"127.0.0.1\"]\n"
		 "    - name: PV_DENIED\n"
		 "      mode: deny\n"
		 "  files:\n"
		 "    - path: %s\n"
		 "      mode: mask\n"
		 "      injectHosts: [\"127.0.0.1\"]\n"
		 "filesystem:\n"
		 "  allowWrite: [\"%s\"]\n",
		 p_certs, p_cred, p_work);
	return test_write_file_mode(p_policy, text, 0644);
}

static int suite_init(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	struct test_upstream_opts o;
	char why[256], buf[PATH_MAX];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why))) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "run: namespaces unavailable (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n",
				why);
			return -1;
		}
		fprintf(stderr, "run: SKIP: user namespaces unavailable: %s\n", why);
		skip = true;
		return 0;
	}
	if (access("/usr/bin/python3", X_OK) == 0)
		python = "/usr/bin/python3";
	root = strdup("/var/tmp/pv-run.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	at(p_home, "home");
	at(p_work, "work");
	at(p_policy, "policy.yaml");
	at(p_badpolicy, "bad.yaml");
	at(p_cred, "cred.txt");
	at(p_record, "record.txt");
	at(p_certs, "certs");
	if (mkdir(p_home, 0755) < 0 || mkdir(at(buf, "home/.ssh"), 0700) < 0 || mkdir(p_work, 0755) < 0 ||
	    mkdir(at(buf, "work/.git"), 0755) < 0 || mkdir(at(buf, "scripts"), 0755) < 0 ||
	    mkdir(p_certs, 0755) < 0)
		return -1;
	if (test_random_alnum(real_token + 4, 36) < 0 || test_random_alnum(real_file, 32) < 0)
		return -1;
	memcpy(real_token, "ghp_", 4);
	if (test_write_file_mode(at(buf, "home/.ssh/id_rsa"), "PLANTED-PRIVATE-KEY\n", 0600) < 0 ||
	    test_write_file_mode(at(buf, "home/.bashrc"), "original bashrc\n", 0644) < 0 ||
	    test_write_file_mode(at(buf, "work/.git/config"), "[core]\n", 0644) < 0 ||
	    test_write_file_mode(p_cred, real_file, 0600) < 0 ||
	    test_write_file_mode(p_badpolicy, "network:\n  allowedDomainz: []\n", 0644) < 0)
		return -1;
	if (test_certs_make(p_certs, names) < 0 || write_policy() < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = p_certs;
	o.record_path = p_record;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	return 0; /* both suites share the fixtures: see run_fixtures_down */
}

/* Writes script text (printf format) to a fresh file; returns its path
 * in buf. */
static char *write_script(char *buf, const char *text)
{
	snprintf(buf, PATH_MAX, "%s/scripts/%u.sh", root, nscript++);
	if (test_write_file_mode(buf, text, 0644) < 0)
		return NULL;
	return buf;
}

/*
 * Runs `passavant run [opts...] -p policy -- sh SCRIPT` in the work
 * directory with the test HOME, GH_TOKEN = real_token, PV_DENIED set.
 * opts is NULL-terminated (may be NULL). Returns the exit status.
 */
static int run_in(const char *policy, const char *const *opts, const char *script, char **out,
		  char **err)
{
	char home[PATH_MAX + 8], tok[64], path[PATH_MAX], *argv[32];
	size_t n = 0;

	snprintf(home, sizeof(home), "HOME=%s", p_home);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real_token);
	if (write_script(path, script) == NULL)
		return -1;
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = p_work;
	argv[n++] = home;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = tok;
	argv[n++] = "PV_DENIED=denied-value-xyz";
	argv[n++] = "TMPDIR=/tmp";
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	for (size_t i = 0; opts != NULL && opts[i] != NULL && n < 24; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "-p";
	argv[n++] = (char *)policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = path;
	argv[n] = NULL;
	return test_run_capture(argv, out, err, RUN_TIMEOUT_MS);
}

/* run_in with the standard policy and a script formatted from fmt. */
static int run_sh(const char *const *opts, char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int run_sh(const char *const *opts, char **out, char **err, const char *fmt, ...)
{
	char script[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	return run_in(p_policy, opts, script, out, err);
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* The value of "KEY=" at the start of a line of out (static copy). */
static const char *value_of(const char *out, const char *key)
{
	static char val[512];
	const char *p = out;
	size_t kl = strlen(key);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *e = strchr(p + kl + 1, '\n');
			size_t len = e != NULL ? (size_t)(e - p - kl - 1) : strlen(p + kl + 1);
			if (len >= sizeof(val))
				len = sizeof(val) - 1;
			memcpy(val, p + kl + 1, len);
			val[len] = '\0';
			return val;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

/* ------------------------------------------------------------------ */

static void test_curl_through_proxy(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err, VIA_PROXY "curl -sS --max-time 20 %s/hello\necho curl=$?\n", up.url);
	ROW(st == 0 && test_has(out, "hello\n") && test_has(out, "curl=0"), "curl via the proxy");
	if (st != 0 || !test_has(out, "hello\n"))
		show(st, out, err);
	free(out);
	free(err);
}

static void test_no_direct_connection(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err,
		    "curl -sS --noproxy '*' --max-time 5 %s/hello >/dev/null 2>&1\necho curl=$?\n"
		    "%s -c 'import socket\ns = socket.socket()\ns.settimeout(5)\n"
		    "try:\n    s.connect((\"127.0.0.1\", %u)); print(\"py=connected\")\n"
		    "except OSError as e:\n    print(\"py=%%d\" %% e.errno)\n'\n",
		    up.url, python, (unsigned)up.port);
	ROW(st == 0, "status %d", st);
	ROW(value_of(out, "curl") != NULL && strcmp(value_of(out, "curl"), "0") != 0,
	    "curl --noproxy must fail, got curl=%s", value_of(out, "curl") ? value_of(out, "curl") : "?");
	/* ECONNREFUSED: the sandbox's loopback is not the host's. */
	ROW(value_of(out, "py") != NULL && strcmp(value_of(out, "py"), "111") == 0,
	    "python connect: py=%s", value_of(out, "py") ? value_of(out, "py") : "?");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

static void test_credential_store_hidden(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err, "cat ~/.ssh/id_rsa 2>/dev/null\necho cat=$?\n"
				      "echo entries=$(ls -A ~/.ssh 2>/dev/null | wc -l)\n");
	ROW(st == 0, "status %d", st);
	ROW(!test_has(out, "PLANTED-PRIVATE-KEY"), "~/.ssh/id_rsa was readable: %s", out ? out : "");
	ROW(test_has(out, "entries=0"), "~/.ssh lists entries: %s", out ? out : "");
	free(out);
	free(err);
}

/*
 * A mount the host makes while the command runs (a USB stick, an sshfs,
 * an unlocked vault) does not reach the sandbox: under a read-only part
 * of the view it would arrive with its own flags, writable (round 7 of
 * the attack, with the host's / shared as systemd makes it). Here a
 * shared tmpfs outside every writable path gets a second tmpfs mounted
 * under it once the command has started (it says so with a file in the
 * work directory: a fixed second was not enough under load, the mount
 * then came before the sandbox's view); once the mount is made, the
 * command tries to write there.
 */
static void test_host_mount_later(void)
{
	char base[64], media[96], planted[128], cmd[512], started[PATH_MAX], mounted[PATH_MAX], *out = NULL,
		*err = NULL;
	pid_t bg;
	int st, ws;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		fprintf(stderr, "\n  (not root: no host mount is made; nothing to check)\n");
		return;
	}
	snprintf(base, sizeof(base), "/var/tmp/pv-run-prop.%ld", (long)getpid());
	snprintf(media, sizeof(media), "%s/media", base);
	snprintf(planted, sizeof(planted), "%s/planted", media);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && mount -t tmpfs pvprop %s && mount --make-shared %s && mkdir %s", base, base, base,
		 media);
	CU_ASSERT_FATAL(system(cmd) == 0);
	at(started, "work/pv-started");
	at(mounted, "work/pv-mounted");
	bg = fork();
	CU_ASSERT_FATAL(bg >= 0);
	if (bg == 0) {
		char *argv[] = {"sh", "-c",
				"i=0; while [ ! -e \"$1\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done;"
				" [ -e \"$1\" ] && mount -t tmpfs pvstick \"$0\" && touch \"$2\"",
				media, started, mounted, NULL};

		execvp("sh", argv);
		_exit(127);
	}
	st = run_sh(NULL, &out, &err,
		    "touch %s; i=0; while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
		    "echo planted > %s 2>/dev/null && echo wrote\n"
		    "echo mounts=$(grep -c pvstick /proc/self/mountinfo)\n",
		    started, mounted, planted);
	CU_ASSERT(waitpid(bg, &ws, 0) == bg && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	ROW(st == 0 && !test_has(out, "wrote") && test_has(out, "mounts=0\n"),
	    "a mount the host made during the run reached the sandbox: status %d, %s", st, test_nz(out));
	ROW(access(planted, F_OK) < 0, "the command wrote %s on a mount the host made during the run", planted);
	(void)unlink(started);
	(void)unlink(mounted);
	snprintf(cmd, sizeof(cmd), "umount %s; umount %s; rmdir %s", media, base, base);
	CU_ASSERT(system(cmd) == 0);
	free(out);
	free(err);
}

/*
 * The command cannot stop passavant through the terminal they share: in
 * an interactive bash with job control (on a pty), it takes the
 * terminal's foreground for a process group of its own and sets TOSTOP,
 * after planting six start-up files in its writable HOME. passavant's
 * report lines would then have stopped it with SIGTTOU after the first
 * (round 8 of the attack), leaving the other five in place. All six are
 * moved aside, and passavant is not left stopped.
 */
static void test_tty_stop(void)
{
	static const char driver[] =
		"import os, pty, select, sys, time\n"
		"bin, pol, home = sys.argv[1:4]\n"
		"pid, fd = pty.fork()\n"
		"if pid == 0:\n"
		"    os.environ.update(HOME=home, PS1='$ ', PATH='" SAFE_PATH "')\n"
		"    os.chdir(home + '/proj')\n"
		"    os.execvp('bash', ['bash', '--norc', '--noprofile', '-i'])\n"
		"out = b''\n"
		"def pump(t):\n"
		"    global out\n"
		"    end = time.time() + t\n"
		"    while time.time() < end:\n"
		"        if select.select([fd], [], [], 0.1)[0]:\n"
		"            try: out += os.read(fd, 4096)\n"
		"            except OSError: return\n"
		"pump(1)\n"
		"os.write(fd, ('%s run -p %s -- perl stop.pl; echo RUN-ENDED\\n' % (bin, pol)).encode())\n"
		/* the line echo's output, not the typed line's echo (which
		 * holds it too: the run was taken as ended at once, the next
		 * line typed went to the run as keys, and under load the
		 * check after the run had not finished when the files were
		 * looked at) */
		"ended = lambda: b'RUN-ENDED' in out.replace(b'echo RUN-ENDED', b'')\n"
		"for _ in range(150):\n"
		"    pump(0.2)\n"
		"    if ended() or b'Stopped' in out: break\n"
		"os.write(fd, b'stty -tostop; kill -9 %1 2>/dev/null; exit\\n')\n"
		"pump(1)\n"
		"sys.stdout.write(out.decode(errors='replace'))\n"
		"sys.stdout.write('\\nended: %s\\n' % ('yes' if ended() else 'no'))\n";
	static const char stop_pl[] =
		"use POSIX qw(setpgid tcsetpgrp);\n"
		"for my $n (qw(.a1 .a2 .a3 .a4 .lesskey .tclshrc)) {\n"
		"  open(my $fh, '>', \"$ENV{HOME}/$n\") or die; print $fh \"x\\n\"; close $fh; }\n"
		"setpgid(0, 0); $SIG{TTOU} = 'IGNORE'; tcsetpgrp(0, getpgrp()) or die \"tcsetpgrp $!\";\n"
		"my $t = POSIX::Termios->new; $t->getattr(0);\n"
		"$t->setlflag($t->getlflag | POSIX::TOSTOP()); $t->setattr(0, POSIX::TCSANOW());\n";
	static const char *const names[] = {".a1", ".a2", ".a3", ".a4", ".lesskey", ".tclshrc"};
	char home[PATH_MAX], pol[PATH_MAX + 16], path[PATH_MAX + 32], text[3 * PATH_MAX], *out = NULL,
		*err = NULL;
	char *argv[] = {"env", "-u", "MAKEFLAGS", "/usr/bin/python3", "-c", (char *)driver, (char *)test_passavant_bin(),
			pol, home, NULL};
	struct stat st;

	SKIP_IF_NEEDED();
	snprintf(home, sizeof(home), "%s/tty-home", root);
	snprintf(path, sizeof(path), "%s/proj", home);
	CU_ASSERT_FATAL(mkdir(home, 0755) == 0 && mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/proj/stop.pl", home);
	CU_ASSERT_FATAL(test_write_file(path, stop_pl, strlen(stop_pl)) == 0);
	snprintf(pol, sizeof(pol), "%s.yaml", home);
	snprintf(text, sizeof(text), "network:\n  allowedDomains: []\nfilesystem:\n  allowWrite: [\"%s\"]\n", home);
	CU_ASSERT_FATAL(test_write_file(pol, text, strlen(text)) == 0);
	CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS), 0);
	ROW(out != NULL && strstr(out, "\nended: yes\n") != NULL && strstr(out, "Stopped") == NULL,
	    "passavant was stopped, or did not end: %s", test_nz(out));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", home, names[i]);
		ROW(lstat(path, &st) != 0, "%s stayed in place (the check after the run did not finish): %s", path,
		    test_nz(out));
	}
	free(out);
	free(err);
	snprintf(text, sizeof(text), "rm -rf %s %s", home, pol);
	CU_ASSERT(system(text) == 0);
}

/*
 * Round 32 of the attack: with standard input, output and error all
 * piped (an agent harness), the command opened /dev/tty, the caller's
 * controlling terminal, and wrote an OSC 52 sequence there (the user's
 * clipboard set to `curl ... | sh`), or drew a false password prompt and
 * read the keys typed. The caller here is a process whose controlling
 * terminal is a pseudo-terminal the Python driver holds the other end
 * of. Piped: opening /dev/tty fails with ENXIO, nothing reaches the
 * terminal, and ^C typed on it reaches the command exactly once (passed
 * on by passavant). Given the terminal as its stdio (an interactive run),
 * the command still opens /dev/tty.
 */
static void test_tty_unreachable_piped(void)
{
	static const char driver[] =
		"import fcntl, os, select, sys, termios, time\n"
		"INSIDE = r'''\n"
		"import os, signal, sys\n"
		"signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
		"try:\n"
		"    fd = os.open('/dev/tty', os.O_RDWR)\n"
		"    os.write(fd, b'\\x1b]52;c;Y3VybCB4IHwgc2g=\\x07[sudo] password: ')\n"
		"    print('tty opened', flush=True)\n"
		"except OSError as e:\n"
		"    print('tty errno %d' % e.errno, flush=True)\n"
		"if sys.argv[1] == 'piped':\n"
		"    print('armed', flush=True)\n"
		"    n, t = 0, 15\n"
		"    while signal.sigtimedwait({signal.SIGINT}, t) is not None:\n"
		"        n, t = n + 1, 1.5\n"
		"    print('ints %d' % n, flush=True)\n"
		"'''\n"
		"bin, pol, mode = sys.argv[1:4]\n"
		"m, s = os.openpty()\n"
		"a = termios.tcgetattr(s)\n"
		"a[3] &= ~termios.ECHO\n"
		"termios.tcsetattr(s, termios.TCSANOW, a)\n"
		"r, w = os.pipe()\n"
		"pid = os.fork()\n"
		"if pid == 0:\n"
		"    os.setsid()\n"
		"    fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n"
		"    if mode == 'piped':\n"
		"        os.dup2(os.open('/dev/null', os.O_RDONLY), 0)\n"
		"        os.dup2(w, 1)\n"
		"        os.dup2(w, 2)\n"
		"    else:\n"
		"        for fd in (0, 1, 2):\n"
		"            os.dup2(s, fd)\n"
		"    os.execv(bin, [bin, 'run', '-p', pol, '--', 'python3', '-c', INSIDE, mode])\n"
		"    os._exit(127)\n"
		"os.close(w)  # s stays open: the master reads block, not EIO\n"
		"out, got, t0, typed, st = b'', b'', time.monotonic(), False, None\n"
		"while st is None and time.monotonic() - t0 < 40:\n"
		"    if mode == 'piped' and not typed and b'armed\\n' in got:\n"
		"        os.write(m, b'\\x03')\n"
		"        typed = time.monotonic() - t0\n"
		"    for fd in select.select([m, r], [], [], 0.1)[0]:\n"
		"        try:\n"
		"            b = os.read(fd, 65536)\n"
		"        except OSError:\n"
		"            b = b''\n"
		"        if fd == m:\n"
		"            out += b\n"
		"        else:\n"
		"            got += b\n"
		"    p, ws = os.waitpid(pid, os.WNOHANG)\n"
		"    if p:\n"
		"        st = os.waitstatus_to_exitcode(ws)\n"
		"if st is None:\n"
		"    os.kill(pid, 9)\n"
		"    os.waitpid(pid, 0)\n"
		"live = [m, r]\n"
		"while live:\n"
		"    ready = select.select(live, [], [], 0.2)[0]\n"
		"    if not ready:\n"
		"        break\n"
		"    for fd in ready:\n"
		"        try:\n"
		"            b = os.read(fd, 65536)\n"
		"        except OSError:\n"
		"            b = b''\n"
		"        if not b:\n"
		"            live.remove(fd)\n"
		"        elif fd == m:\n"
		"            out += b\n"
		"        else:\n"
		"            got += b\n"
		"print('captured: %s' % got.decode(errors='replace'))\n"
		"print('status %s (^C typed at %s s, ended at %.1f s)' % (st, typed, time.monotonic() - t0))\n"
		"print('terminal: %r' % out)\n";
	char *out = NULL, *err = NULL, *cmd;
	size_t len = 4 * PATH_MAX;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	cmd = malloc(len);
	CU_ASSERT_FATAL(cmd != NULL);
	snprintf(cmd, len,
		 "cd %s && env -u MAKEFLAGS PATH=%s /usr/bin/python3 -c \"$0\" '%s' '%s' piped",
		 p_work, SAFE_PATH, test_passavant_bin(), p_policy);
	{
		char *argv[] = {"sh", "-c", cmd, (char *)driver, NULL};

		ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	}
	ROW(test_has(out, "tty errno 6\n"), "stdio piped: /dev/tty was not ENXIO inside: %s", test_nz(out));
	ROW(test_has(out, "terminal: b''\n"), "stdio piped: the command's bytes reached the caller's terminal: %s",
	    test_nz(out));
	ROW(test_has(out, "ints 1\n"), "stdio piped: ^C on the caller's terminal did not reach the command once: %s",
	    test_nz(out));
	ROW(test_has(out, "status 0 "), "stdio piped: status not 0: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	snprintf(cmd, len,
		 "cd %s && env -u MAKEFLAGS PATH=%s /usr/bin/python3 -c \"$0\" '%s' '%s' tty",
		 p_work, SAFE_PATH, test_passavant_bin(), p_policy);
	{
		char *argv[] = {"sh", "-c", cmd, (char *)driver, NULL};

		ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	}
	ROW(test_has(out, "tty opened"), "stdio on the terminal: /dev/tty did not open inside: %s", test_nz(out));
	/* /dev/tty is passavant's pty there: the OSC 52 sequence is
	 * filtered out on its way to the caller's terminal */
	ROW(!test_has(out, "]52;"), "stdio on the terminal: OSC 52 reached the caller's terminal: %s", test_nz(out));
	free(out);
	free(err);
	free(cmd);
}

/*
 * Runs the terminal driver tests/tools/TOOL (python3) on passavant, the
 * policy and how, its stdout and stderr in *out and *err: the driver's
 * status. The drivers' own limit is 40 s (they kill the run's session
 * and say where it stood): this one is only a backstop.
 */
static int tty_tool(const char *tool, const char *how, char **out, char **err)
{
	char script[PATH_MAX];
	char *argv[] = {"env", "-u", "MAKEFLAGS", "PATH=" SAFE_PATH, "/usr/bin/python3", script,
			(char *)test_passavant_bin(), p_policy, (char *)how, NULL};

	snprintf(script, sizeof(script), "%s/tests/tools/%s", test_srcdir(), tool);
	*out = *err = NULL;
	return test_run_capture(argv, out, err, 2 * RUN_TIMEOUT_MS);
}

/*
 * The command's terminal is a pty of passavant's, relayed through the
 * escape filter (sandbox/ttyrelay.c, ttyfilter.c). tests/tools/pv-tty.py
 * holds the caller's terminal; inside, the command writes OSC 52 in its
 * 7-bit, C1 and split forms, iTerm's file transfer, tmux passthrough,
 * kitty's graphics file read, reports the terminal types back (title,
 * DECRQSS), KAM, ESC % @, a hyperlink, then colours, a title and the
 * alternate screen; leaves its terminal raw with TOSTOP. The caller's
 * terminal gets none of the first (the driver's own allowlist, not the
 * filter's), the second as written, a reset of the modes left on, its
 * settings as before; the window size and a resize reach the command,
 * keys and one ^C too. With standard input /dev/null (output only) the
 * same output. On the old binary (fds 0-2 passed as they were) the driver
 * counted 30 violations and no reset. On 1b28869 (the first filter), 8:
 * the command's push of its own title (kept after the run: our pop took
 * it), mouse reports set back on by XTRESTORE unseen, 66536 (1000 in a
 * terminal that wraps at 16 bits), DECRQCRA (the user's screen read back
 * by checksums), XTREPORTSGR, DECSCPP, a keyboard emulation, VT52 mode;
 * and no
 * reset of X10 mouse reports (?9).
 * Mode bg: passavant started in the background while a line editor has
 * the terminal (-icanon -echo -icrnl), then brought to the foreground as
 * bash's fg does it for a running job (no SIGCONT); the line typed then
 * reaches the command. On 1b28869 the run hung: the relay waited for a
 * SIGCONT to take the keys, and the pty had the editor's settings (CR
 * never ended the line).
 * Round 36 (the driver runs passavant with LC_ALL=C: the terminal may be
 * 8-bit): U+00DD ... U+00DC, an OSC 52 to such a terminal; DEC modes past
 * the screen's (132 columns, xterm's logging, DECBKM), CRM, DEC locator
 * reports; queries (cursor position, device attributes) when nothing
 * reads their answers (out, bg, pipe), and in tty mode as the command
 * ends, answered 0.3 s later by the driver: no answer may be left for the
 * shell ("answers left: b''"); the tab stops cleared, G1 designated and
 * shifted in, put back. On 637203f: 7 violations (tty), 9 (out, bg,
 * pipe), answers left in tty, out and pipe, no tab or SI reset.
 * Round 38: what keys send beyond the DEC modes (ESC =, kitty's CSI > 1 u,
 * modifyOtherKeys CSI > 4 ; 2 m) counted by the driver's allowlist in
 * out, pipe and bg before fg; put back at the end, kitty popped only
 * where it was pushed on the terminal ("keys reset"); bg: sent after fg
 * ("keys after fg"). On 634d851: 6 of the 41 rows fail. Review of round
 * 38: the keypad put back (ESC >) only where ESC = was sent (tty, bg),
 * as kitty's pops: out and pipe fail "keys reset" on f8d204b. Round 39:
 * the report modes (?1000, ?9) and modifyOtherKeys turned off at the end
 * only where the terminal got them (tty), not in out and pipe ("reset",
 * "keys reset": 4 of the 41 rows fail on 81f0b40, the end turned off a
 * foreground program's mouse and modifyOtherKeys).
 */
static void test_tty_relay(void)
{
	static const char *const modes[] = {"tty", "out", "bg", "pipe"};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < 4; i++) {
		bool tty = i == 0, bg = i == 2;

		st = tty_tool("pv-tty.py", modes[i], &out, &err);
		ROW(st == 0, "%s: driver failed: %s", modes[i], test_nz(err));
		ROW(!test_has(out, "timeout: "), "%s: the run did not end: %s", modes[i], test_nz(out));
		ROW(test_has(out, "violations 0\n"), "%s: escapes beyond the screen's reached the terminal: %s",
		    modes[i], test_nz(out));
		ROW(test_has(out, "answers left: b''\n"),
		    "%s: the terminal's answers to the command's queries were left for the shell: %s", modes[i],
		    test_nz(out));
		ROW(test_has(out, "keys reset yes\n"),
		    "%s: the keypad, modifyOtherKeys or kitty's flags were not put back, or kitty's popped where "
		    "never pushed: %s",
		    modes[i], test_nz(out));
		if (bg) {
			ROW(test_has(out, "keys after fg yes\n"),
			    "bg: the keypad, kitty's flags or modifyOtherKeys the command set in the background were "
			    "not sent after fg: %s",
			    test_nz(out));
			ROW(test_has(out, "reports after fg yes\n"),
			    "bg: the mouse reports the command set in the background were not sent after fg: %s",
			    test_nz(out));
			ROW(test_has(out, "read: hello keys\n") && test_has(out, "termios same\n") &&
				    test_has(out, "status 0\n"),
			    "bg: the keys typed after fg did not reach the command, or the run did not end: %s",
			    test_nz(out));
			free(out);
			free(err);
			continue;
		}
		ROW(test_has(out, "\\x1b[31mRED\\x1b[0m") && test_has(out, "\\x1b]2;a title\\x07") &&
			    test_has(out, "\\x1b[?1049h"),
		    "%s: the screen's own sequences did not pass: %s", modes[i], test_nz(out));
		ROW(test_has(out, "reset yes\n"), "%s: the modes left on were not reset: %s", modes[i], test_nz(out));
		ROW(test_has(out, "size 31 97\n") && test_has(out, "resized 41 123\n"),
		    "%s: the window size or its change did not reach the command: %s", modes[i], test_nz(out));
		ROW(test_has(out, "termios same\n"), "%s: the caller's terminal settings changed: %s", modes[i],
		    test_nz(out));
		ROW(test_has(out, "status 0\n"), "%s: status not 0: %s", modes[i], test_nz(out));
		if (tty)
			ROW(test_has(out, "read: hello keys\n") && test_has(out, "ints 1\n"),
			    "tty: the keys or the ^C did not reach the command once: %s", test_nz(out));
		/* `run -- CMD | pager`: the keys are the pager's (left in the
		 * terminal, not read by the relay), the command's standard
		 * input is /dev/null, its output goes down the pipe */
		if (i == 3)
			ROW(test_has(out, "stdin notty, 0 bytes\n") &&
				    test_has(out, "keys left for the pager: b'zzz\\n'\n") &&
				    test_has(out, "piped: b'through the pipe\\n'\n"),
			    "pipe: the relay took the pager's keys, or the command's input or output: %s",
			    test_nz(out));
		free(out);
		free(err);
	}
}

/*
 * Round 38 (fix38t): passavant stopped under a shell's job control while
 * the command's modes were on (mouse reports, bracketed paste, the
 * keypad's application mode, kitty's keyboard flags, modifyOtherKeys):
 * SIGTSTP or SIGSTOP to passavant alone, or SIGSTOP to its group then
 * `bg`. tests/tools/pv-ttystop.py plays the shell (it takes the terminal
 * and puts its settings back, as bash does on a stop): the modes must go
 * off while the shell has the terminal, come on again at `fg`, and the
 * run end as it would. On the code before, the modes stayed on: a click
 * typed ^[[M... into the shell, and with kitty's flags every key was an
 * escape sequence there.
 * Review of round 38: tstppid, SIGTSTP then SIGCONT to passavant's
 * process alone (a parent that is not a job-control shell): on f8d204b
 * the relay stayed stopped, "again no", the line never read, the run
 * never ended; bgtstp, SIGSTOP, bg, the shell's line editor's settings,
 * then SIGTSTP to the group (bash's kill -TSTP %1): on f8d204b the user's
 * settings from before the run went over the shell's ("shell settings
 * kept no").
 * Round 39: tstp2, a second SIGTSTP 4 ms after the first, while the
 * relay gives the terminal back: checked and held (by hand also with 0,
 * 1, 8 and 15 ms): one stop, and fg continues the run.
 * Round 40: nojc, no job-control shell (passavant leads the terminal's
 * session, as under `script -c`), SIGSTOP to passavant then SIGCONT: the
 * terminal must be given back (every mode off, the user's settings)
 * while it is stopped, and taken again after.
 */
static void test_tty_stopped(void)
{
	static const char *const hows[] = {"tstp", "stop", "group", "tstppid", "bgtstp", "tstp2", "nojc"};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		st = tty_tool("pv-ttystop.py", hows[i], &out, &err);
		ROW(st == 0, "%s: driver failed: %s", hows[i],
		    test_nz(err));
		ROW(!test_has(out, "timeout: "), "%s: the run did not end: %s", hows[i], test_nz(out));
		ROW(test_has(out, "stopped yes\n"), "%s: passavant was not stopped: %s", hows[i], test_nz(out));
		ROW(test_has(out, "withdrawn yes\n"),
		    "%s: the command's modes (mouse, paste, keypad, kitty, modifyOtherKeys) stayed on while the "
		    "shell had the terminal: %s",
		    hows[i], test_nz(out));
		ROW(test_has(out, "again yes\n"), "%s: the command's modes were not on again after fg: %s", hows[i],
		    test_nz(out));
		/* SIGTSTP is caught: the terminal given back before the shell
		 * sees the stop */
		if (i == 0)
			ROW(test_has(out, "all off before the prompt yes\n") &&
				    test_has(out, "settings back at the stop yes\n"),
			    "tstp: the terminal was not given back (every mode off, the user's settings) before "
			    "the shell saw the stop: %s",
			    test_nz(out));
		/* round 40: no job-control shell; SIGSTOP: the terminal
		 * given back while passavant is stopped */
		if (strcmp(hows[i], "nojc") == 0)
			ROW(test_has(out, "settings back at the stop yes\n"),
			    "nojc: the terminal stayed raw while passavant was stopped: %s", test_nz(out));
		/* review of round 38: a SIGTSTP when the shell has the
		 * terminal already leaves its settings alone */
		if (strcmp(hows[i], "bgtstp") == 0)
			ROW(test_has(out, "shell settings kept yes\n"),
			    "bgtstp: a SIGTSTP after bg put the user's old settings over the shell's: %s",
			    test_nz(out));
		ROW(test_has(out, "read: hello keys\n") && test_has(out, "termios same\n") &&
			    test_has(out, "status 0\n"),
		    "%s: the keys after fg did not reach the command, or the run did not end as it would: %s",
		    hows[i], test_nz(out));
		free(out);
		free(err);
	}
}

/*
 * Round 38 (fix38t): the end-of-run drain by how slow the terminal is. A
 * terminal that answers each query 1.5 s after it (tests/tools/
 * pv-ttystop.py slow: over ssh, or busy drawing); the command asks for the
 * cursor's position and reads the answer, then asks again as it ends. On
 * the code before, the relay waited a fixed second for its status answer
 * and the answers came after it had gone, for the shell to read as typed
 * (`^[[7;1R^[[?62;22c^[[0n`). Now the wait is three times the slowest
 * answer seen in the run.
 */
static void test_tty_slow(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	st = tty_tool("pv-ttystop.py", "slow", &out, &err);
	ROW(st == 0, "slow: driver failed: %s", test_nz(err));
	ROW(!test_has(out, "timeout: ") && test_has(out, "answered yes\n") && test_has(out, "status 0\n"),
	    "slow: the run did not end as it would: %s", test_nz(out));
	ROW(test_has(out, "answers left: b''\n"),
	    "slow: a slow terminal's answers to the command's queries were left for the shell: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Review of round 39: a terminal on standard input that is another
 * session's controlling terminal (tests/tools/pv-ttysession.py). setsid:
 * a shell's session owns the terminal and reads it at its prompt,
 * passavant leads a session of its own without one (`setsid passavant
 * run` typed at an interactive shell); setsidchild: the same, passavant
 * not the leader. On 2249cf0 the relay read the line typed at the prompt
 * and the command printed "read: secret". fresh, freshchild: a harness's
 * new pty of no session (start_new_session): the keys reach the command,
 * as before. Round 40: freshreader, freshchildreader: the same, with
 * another program of the harness's reading that terminal (its standard
 * input): the keys are not read (the command's standard input is
 * /dev/null) and run says why; before, the relay read them too, and the
 * line typed for the reader reached the command, or part of it.
 */
static void test_tty_session(void)
{
	static const char *const hows[] = {"setsid", "setsidchild", "fresh", "freshchild", "freshreader",
					   "freshchildreader"};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		st = tty_tool("pv-ttysession.py", hows[i], &out, &err);
		ROW(st == 0, "%s: driver failed: %s", hows[i],
		    test_nz(err));
		if (i < 2) {
			ROW(test_has(out, "shell got: b'secret\\n'\n") && !test_has(out, "read: secret"),
			    "%s: the line typed at the shell's prompt went to the command: %s", hows[i], test_nz(out));
			ROW(test_has(out, "another session"), "%s: run did not say the keys are not read: %s",
			    hows[i], test_nz(out));
		} else if (i < 4) {
			ROW(test_has(out, "read: hello keys") && test_has(out, "status 0\n"),
			    "%s: a harness's fresh pty: the keys did not reach the command: %s", hows[i],
			    test_nz(out));
		} else {
			/* round 40: another program of the harness's reads it */
			ROW(!test_has(out, "read: hello keys") && test_has(out, "status 0\n"),
			    "%s: the line typed for the harness's reader went to the command: %s", hows[i],
			    test_nz(out));
			ROW(test_has(out, "another program (pid"), "%s: run did not say the keys are not read: %s",
			    hows[i], test_nz(out));
			ROW(test_has(out, "reader got: b'hello keys"), "%s: the reader did not get its line: %s",
			    hows[i], test_nz(out));
		}
		free(out);
		free(err);
	}
}

static void test_write_denies(void)
{
	char *out = NULL, *err = NULL, buf[PATH_MAX], *text;
	char *pol_before = test_read_file(p_policy, NULL);
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err,
		    "echo evil >> ~/.bashrc 2>/dev/null; echo bashrc=$?\n"
		    "mkdir -p .git/hooks 2>/dev/null; echo evil > .git/hooks/pre-commit 2>/dev/null;"
		    " echo hook=$?\n"
		    "echo evil >> %s 2>/dev/null; echo policy=$?\n"
		    "echo kept > out.txt; echo cwd=$?\n",
		    p_policy);
	ROW(st == 0, "status %d", st);
	ROW(value_of(out, "bashrc") && strcmp(value_of(out, "bashrc"), "0") != 0, "~/.bashrc writable");
	ROW(value_of(out, "hook") && strcmp(value_of(out, "hook"), "0") != 0, "pre-commit creatable");
	ROW(value_of(out, "policy") && strcmp(value_of(out, "policy"), "0") != 0, "policy writable");
	ROW(value_of(out, "cwd") && strcmp(value_of(out, "cwd"), "0") == 0, "cwd not writable");
	text = test_read_file(at(buf, "home/.bashrc"), NULL);
	ROW(text && strcmp(text, "original bashrc\n") == 0, "~/.bashrc changed on the host");
	free(text);
	ROW(access(at(buf, "work/.git/hooks/pre-commit"), F_OK) < 0, "pre-commit exists on the host");
	ROW(access(at(buf, "work/.git/hooks"), F_OK) < 0, "placeholder .git/hooks left behind");
	text = test_read_file(p_policy, NULL);
	ROW(text && pol_before && strcmp(text, pol_before) == 0, "policy changed on the host");
	free(text);
	text = test_read_file(at(buf, "work/out.txt"), NULL);
	ROW(text && strcmp(text, "kept\n") == 0, "work/out.txt did not persist");
	free(text);
	if (st != 0)
		show(st, out, err);
	free(pol_before);
	free(out);
	free(err);
}

/* --audit FILE in the writable work directory: the command cannot
 * rewrite it, and it records the command's request. */
static void test_audit_protected(void)
{
	char path[PATH_MAX], *out = NULL, *err = NULL, *text;
	const char *opts[] = {"--audit", path, NULL};
	int st;

	SKIP_IF_NEEDED();
	at(path, "work/audit.jsonl");
	st = run_sh(opts, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 %s/hello -o /dev/null; echo curl=$?\n"
		    "echo forged >> audit.jsonl 2>/dev/null; echo append=$?\n"
		    "rm -f audit.jsonl 2>/dev/null; mv audit.jsonl x 2>/dev/null; echo gone=$?\n",
		    up.url);
	ROW(st == 0 && test_has(out, "curl=0"), "status %d: %s", st, out ? out : "");
	ROW(value_of(out, "append") && strcmp(value_of(out, "append"), "0") != 0,
	    "the command could append to the audit file");
	ROW(value_of(out, "gone") && strcmp(value_of(out, "gone"), "0") != 0,
	    "the command could move the audit file away");
	text = test_read_file(path, NULL);
	ROW(text != NULL && !test_has(text, "forged") && test_has(text, "\"decision\":\"allow\"") &&
		    test_has(text, "/hello"),
	    "audit file wrong: %s", text ? text : "(missing)");
	free(text);
	(void)unlink(path);
	free(out);
	free(err);
}

static void test_masked_values(void)
{
	char *out = NULL, *err = NULL;
	const char *v;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err,
		    "printf 'env=%%s\\n' \"$GH_TOKEN\"\n"
		    "printf 'file=%%s\\n' \"$(cat %s)\"\n"
		    "echo denied=${PV_DENIED-unset}\n"
		    "echo '--- view'\n"
		    "env; tr '\\0' '\\n' </proc/self/environ; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'\n"
		    "d=$(dirname \"$SSL_CERT_FILE\"); cat \"$d/env\" \"$d\"/files/* 2>&1\n"
		    "cat %s\n",
		    p_cred, p_cred);
	ROW(st == 0, "status %d", st);
	v = value_of(out, "env");
	ROW(v && strlen(v) == strlen(real_token) && strncmp(v, "ghp_", 4) == 0 &&
		    strcmp(v, real_token) != 0,
	    "GH_TOKEN inside is not a sentinel of the real shape: %s", v ? v : "(none)");
	v = value_of(out, "file");
	ROW(v && strlen(v) == strlen(real_file) && strcmp(v, real_file) != 0,
	    "masked file inside is not a sentinel: %s", v ? v : "(none)");
	ROW(test_has(out, "denied=unset"), "PV_DENIED reached the command");
	ROW(!test_has(out, real_token), "the real token is visible inside");
	ROW(!test_has(out, real_file), "the real file content is visible inside");
	ROW(!test_has(out, "denied-value-xyz"), "the denied value is visible inside");
	ROW(!test_has(err, real_token) && !test_has(err, real_file), "a real value on passavant's stderr");
	free(out);
	free(err);
}

static void test_seccomp(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err,
		    "%s -c 'import socket\ntry:\n    socket.socket(socket.AF_UNIX); print(\"unix=ok\")\n"
		    "except OSError as e:\n    print(\"unix=%%d\" %% e.errno)\n'\n"
		    "unshare -U true 2>&1; echo unshare=$?\n",
		    python);
	ROW(st == 0, "status %d", st);
	ROW(test_has(out, "unix=1\n"), "socket(AF_UNIX) not EPERM: %s", out ? out : "");
	ROW(test_has(out, "Operation not permitted") && value_of(out, "unshare") &&
		    strcmp(value_of(out, "unshare"), "0") != 0,
	    "unshare -U not refused with EPERM: %s", out ? out : "");
	free(out);
	free(err);
}

static void test_ps(void)
{
	char *out = NULL, *err = NULL, *line, *save = NULL;
	unsigned n = 0, maxpid = 0;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err, "ps -e -o pid=\n");
	ROW(st == 0, "status %d", st);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		unsigned pid = (unsigned)strtoul(line, NULL, 10);
		n++;
		if (pid > maxpid)
			maxpid = pid;
	}
	/* init (1), sh (2), ps (3): nothing of the host. */
	ROW(n >= 2 && n <= 4 && maxpid <= 4, "ps shows %u processes, highest pid %u", n, maxpid);
	free(out);
	free(err);
}

static void test_exit_statuses(void)
{
	static const struct {
		const char *script;
		int want;
	} rows[] = {
		{"true\n", 0},
		{"exit 3\n", 3},
		{"kill -9 $$\n", 137},
		{"exec /nonexistent-command-xyz\n", 127},
	};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		st = run_in(p_policy, NULL, rows[i].script, NULL, NULL);
		ROW(st == rows[i].want, "%s: status %d, expected %d", rows[i].script, st, rows[i].want);
	}
	/* An invalid policy: 125, the command never runs, the error names
	 * the file. */
	st = run_in(p_badpolicy, NULL, "echo ran\n", &out, &err);
	ROW(st == 125, "invalid policy: status %d, expected 125", st);
	ROW(!test_has(out, "ran"), "the command ran under an invalid policy");
	ROW(test_has(err, "bad.yaml"), "the error does not name the policy file: %s", err ? err : "");
	free(out);
	free(err);
}

/*
 * Review of round 45, end to end: what passavant could not put back on a
 * pipe it shared with the host (sbx_stdio_failure()) is said on stderr
 * and a status of 0 becomes 1. The captured stdout is a pipe; a python3
 * wrapper takes an OFD lock on it (bytes 0-9) and execs passavant, whose
 * command moves it to the whole pipe and exits 0. Before the review the
 * same count of locks passed for "as before": status 0, nothing said.
 */
static void test_stdio_failure_status(void)
{
	char home[PATH_MAX + 8], path[PATH_MAX], *argv[32], *out = NULL, *err = NULL;
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	snprintf(home, sizeof(home), "HOME=%s", p_home);
	CU_ASSERT_FATAL(write_script(path, "python3 -c \"import fcntl, struct\n"
					   "fcntl.fcntl(1, 37, struct.pack('hhqqi', fcntl.F_UNLCK, 0, 0, 0, 0))\n"
					   "fcntl.fcntl(1, 37, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0))\"\n"
					   "echo moved\n") != NULL);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = p_work;
	argv[n++] = home;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = "python3";
	argv[n++] = "-c";
	argv[n++] = "import fcntl, os, struct, sys\n"
		    "fcntl.fcntl(1, 37, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 10, 0))\n"
		    "os.execv(sys.argv[1], sys.argv[1:])\n";
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = p_policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = path;
	argv[n] = NULL;
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(test_has(out, "moved"), "the command did not run: %s", err != NULL ? err : "");
	ROW(st == 1, "status %d, expected 1 (stderr: %s)", st, err != NULL ? err : "");
	ROW(test_has(err, "standard output") && test_has(err, "lock"), "no word of the lock on stderr: %s",
	    err != NULL ? err : "");
	free(out);
	free(err);
}

/*
 * Starts `passavant run -p policy -- sh script` in the work directory
 * with the test HOME and GH_TOKEN = real_token, and waits for the line
 * "ready" (20 s). The process, or NULL.
 */
static struct test_proc *start_ready(const char *script)
{
	char home[PATH_MAX + 8], tok[64], rest[64], *argv[16];
	size_t n = 0;

	snprintf(home, sizeof(home), "HOME=%s", p_home);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real_token);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = p_work;
	argv[n++] = home;
	argv[n++] = tok;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = p_policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = (char *)script;
	argv[n] = NULL;
	return test_proc_start(argv, "ready", rest, sizeof(rest), 20000);
}

static void test_sigterm_forwarded(void)
{
	char script[PATH_MAX];
	struct test_proc *p;
	int st;

	SKIP_IF_NEEDED();
	if (write_script(script, "trap 'echo got-term; exit 42' TERM\necho ready\n"
				 "while :; do sleep 0.05; done\n") == NULL) {
		CU_FAIL("script");
		return;
	}
	p = start_ready(script);
	CU_ASSERT_FATAL(p != NULL);
	/* env exec'd passavant: the pid is passavant's. */
	st = test_proc_stop(p, SIGTERM, 10000);
	ROW(st == 42, "status %d after SIGTERM, expected 42 (the command's trap)", st);
	{
		char *o = test_proc_stdout(p);
		ROW(test_has(o, "got-term"), "the command did not see SIGTERM: %s", o ? o : "");
		free(o);
	}
	test_proc_free(p);
}

/*
 * Round 41 of the attack: a command that ignores SIGINT, SIGTERM and
 * SIGHUP could only be stopped by `kill -9` of passavant, which skips the
 * check after the run: a settings file planted first stayed. The second
 * signal ends the sandbox (SIGKILL), says so, and the check runs: the
 * planted sub/.vscode/tasks.json is moved aside. Fails on 933eee8
 * (passavant ran on until the test's SIGKILL: no line, the file stayed).
 */
static void test_second_signal_ends(void)
{
	char script[PATH_MAX], plant[PATH_MAX + 32];
	struct test_proc *p;
	struct stat st_plant;
	int st;

	SKIP_IF_NEEDED();
	if (write_script(script, "trap '' INT TERM HUP\nmkdir -p sub41/.vscode\n"
				 "echo '{\"tasks\":[]}' > sub41/.vscode/tasks.json\necho ready\n"
				 "while :; do sleep 0.05; done\n") == NULL) {
		CU_FAIL("script");
		return;
	}
	snprintf(plant, sizeof(plant), "%s/sub41/.vscode/tasks.json", p_work);
	p = start_ready(script);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT(kill(test_proc_pid(p), SIGTERM) == 0);
	usleep(1000000); /* a repeat sooner than RUN_SIGNAL_AGAIN_MS is one signal */
	st = test_proc_stop(p, SIGTERM, 10000);
	ROW(st == 137, "status %d after two SIGTERMs, expected 137 (the sandbox killed)", st);
	{
		char *e = test_proc_stderr(p);

		ROW(test_has(e, "SIGTERM again while the command still runs"), "no line about the forced end: %s",
		    e ? e : "");
		free(e);
	}
	ROW(stat(plant, &st_plant) < 0 && errno == ENOENT, "the planted %s stayed: the check did not run", plant);
	test_proc_free(p);
	snprintf(plant, sizeof(plant), "%s/sub41", p_work);
	test_rmtree(plant);
}

/*
 * Review of round 41 (family K, through fds): the read-only device binds
 * left the host's devices the command is GIVEN. stdio.c hands the memory
 * devices over as they are (`CMD < /dev/null`, what every harness gives:
 * test_run_capture() too), and every FIFO, a named one included: each fd
 * names the host's inode on the host's writable mount, and the command
 * (root mapped to root, their owner) chmod'ed the host's /dev/null
 * through /proc/self/fd/0, and a named FIFO given as standard output
 * through /proc/self/fd/1 (left 0666). The memory devices are reopened
 * through the sandbox's read-only binds (child.c reopen_host_devices()),
 * a named FIFO is copied (stdio.c). What must still work: fd 0 is still
 * /dev/null (1:3, EOF), writing to it, the FIFO's bytes reach its reader.
 * Fails on ec19a25: 4 of its 10 asserts (CHMODDED fd 0, the host's
 * /dev/null ctime moved, fd 1 the host's FIFO, the FIFO 666).
 */
static void test_host_fds_no_chmod(void)
{
	char fifo[PATH_MAX], outf[PATH_MAX], script[PATH_MAX], cmd[8 * PATH_MAX + 512];
	char *out = NULL, *err = NULL, *got = NULL;
	struct stat before, after, fst;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(stat("/dev/null", &before) == 0);
	/* 1. /dev/null at fd 0 (test_run_capture's), fd 1 through exec */
	st = run_in(p_policy, NULL,
		    "chmod $(stat -L -c %a /proc/self/fd/0) /proc/self/fd/0 2>/dev/null && echo CHMODDED-0\n"
		    "touch -c /proc/self/fd/0 2>/dev/null && echo TOUCHED-0\n"
		    "echo dev0=$(stat -L -c %t:%T /proc/self/fd/0)\n"
		    "read -r x || echo eof0\n"
		    "(exec >/proc/self/fd/0; echo x) 2>/dev/null || true\n"
		    "sh -c 'echo dropped' >/dev/null && echo wrote-null\n",
		    &out, &err);
	CU_ASSERT_FATAL(stat("/dev/null", &after) == 0);
	ROW(st == 0, "status %d: %s", st, test_nz(err));
	ROW(!test_has(out, "CHMODDED-0") && !test_has(out, "TOUCHED-0"),
	    "the command chmod'ed (touched) the host's /dev/null through fd 0: %s", test_nz(out));
	ROW(before.st_ctim.tv_sec == after.st_ctim.tv_sec && before.st_ctim.tv_nsec == after.st_ctim.tv_nsec &&
		    before.st_mode == after.st_mode,
	    "the host's /dev/null changed (ctime or mode)");
	ROW(test_has(out, "dev0=1:3") && test_has(out, "eof0") && test_has(out, "wrote-null"),
	    "fd 0 is not /dev/null read as EOF as before: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	/* 2. a named FIFO of the host at fd 1, 0600 */
	at(fifo, "r41b.fifo");
	at(outf, "r41b.out");
	(void)unlink(fifo);
	CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
	CU_ASSERT_FATAL(chmod(fifo, 0600) == 0);
	CU_ASSERT_FATAL(write_script(script, "chmod 0666 /proc/self/fd/1 2>/dev/null\n"
					     "echo ino1=$(stat -L -c %i /proc/$$/fd/1). >&2\n"
					     "echo through-the-fifo\n") != NULL);
	snprintf(cmd, sizeof(cmd),
		 "cat '%s' > '%s' & env -C '%s' HOME='%s' PATH=%s '%s' run -p '%s' -- sh '%s' > '%s'; s=$?; wait; "
		 "exit $s",
		 fifo, outf, p_work, p_home, SAFE_PATH, test_passavant_bin(), p_policy, script, fifo);
	{
		char *argv[] = {"sh", "-c", cmd, NULL};

		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 0, "FIFO run: status %d: %s", st, test_nz(err));
	ROW(stat(fifo, &fst) == 0, "the FIFO is gone");
	snprintf(cmd, sizeof(cmd), "ino1=%llu.", (unsigned long long)fst.st_ino);
	ROW(test_has(err, "ino1=") && !test_has(err, cmd), "the command's fd 1 is the host's FIFO: %s", test_nz(err));
	ROW((fst.st_mode & 07777) == 0600, "the host's FIFO is now %o, was 600",
	    (unsigned)(fst.st_mode & 07777));
	got = test_read_file(outf, NULL);
	ROW(test_has(got, "through-the-fifo"), "the FIFO's reader did not get the output: %s", test_nz(got));
	free(got);
	free(out);
	free(err);
	(void)unlink(fifo);
	(void)unlink(outf);
}

/*
 * Review of round 41 (f6's rule, its cost): one stop, sent twice. A
 * harness that ends a process group whose wrapper also passes the signal
 * on (`kill -TERM -PGID` of a shell, npm, make or tini that forwards TERM
 * to passavant, as systemd's KillMode=control-group, GNU timeout's TERM
 * to the command and then to its group) delivers it to passavant twice,
 * milliseconds apart: the second counted as the user's second and the
 * sandbox was ended with SIGKILL, the command's TERM handler cut (status
 * 137, the "again" line). A repeat within RUN_SIGNAL_AGAIN_MS is the
 * same signal, passed on. Here: a shell in a session of its own runs
 * passavant in the background, forwards its TERM to it 0.1 s later, and
 * sends TERM to its whole group; the command's handler takes 0.5 s (a
 * report written). Three rounds, each must end by the command's own
 * handler (status 42), no forced end. Fails on ec19a25
 * (6 of its 8 asserts: status 137, the "again" line, each round).
 */
static void test_group_term_one_signal(void)
{
	char script[PATH_MAX], outf[PATH_MAX], cmd[8 * PATH_MAX + 1024];
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/setsid", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/setsid");
		return;
	}
	CU_ASSERT_FATAL(write_script(script, "trap 'sleep 0.5; echo got-term; exit 42' TERM\necho ready\n"
					     "while :; do sleep 0.05; done\n") != NULL);
	at(outf, "r41b-group.out");
	snprintf(cmd, sizeof(cmd),
		 "env -C '%s' HOME='%s' PATH=%s GH_TOKEN=%s '%s' run -p '%s' -- sh '%s' > '%s' & pid=$!\n"
		 "trap 'sleep 0.1; kill -TERM $pid' TERM\n"
		 "n=0; until grep -q ready '%s' 2>/dev/null; do sleep 0.05; n=$((n+1)); [ $n -lt 400 ] || exit 99; done\n"
		 "kill -TERM 0\nwait $pid; wait $pid; echo status=$?\n",
		 p_work, p_home, SAFE_PATH, real_token, test_passavant_bin(), p_policy, script, outf, outf);
	for (int round = 0; round < 3; round++) {
		char *argv[] = {"/usr/bin/setsid", "-w", "sh", "-c", cmd, NULL};
		char *got;

		(void)unlink(outf);
		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		got = test_read_file(outf, NULL);
		ROW(test_has(out, "status=42") && test_has(got, "got-term"),
		    "round %d: %s (status=42 expected: the command's TERM handler; exit %d): %s / %s", round,
		    test_nz(out), st, test_nz(got), test_nz(err));
		ROW(!test_has(err, "again while the command still runs"),
		    "round %d: one TERM sent twice taken as the user's second: %s", round, test_nz(err));
		free(got);
		free(out);
		free(err);
		out = err = NULL;
	}
	(void)unlink(outf);
}

/*
 * ^C on a terminal reaches the command exactly once (the kernel sends it
 * to the whole foreground process group: neither passavant nor the
 * sandbox's init passes a second one on), and a SIGINT sent to passavant
 * without a terminal is passed on. The terminal is script(1)'s pty; the
 * command counts SIGINTs with sigtimedwait (python3).
 */
static void test_sigint_once(void)
{
	static const char counter[] =
		"import signal, sys\n"
		"signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
		"open(sys.argv[1], 'w').close()\n"
		"print('go', flush=True)\n"
		"n, t = 0, 20\n"
		"while True:\n"
		"    si = signal.sigtimedwait({signal.SIGINT}, t)\n"
		"    if si is None:\n"
		"        break\n"
		"    n, t = n + 1, 1.5\n"
		"    print('INT code=%d' % si.si_code, flush=True)\n"
		"print('total=%d' % n, flush=True)\n"
		"open(sys.argv[1] + '.done', 'w').close()\n";
	char py[PATH_MAX], rdy[PATH_MAX], done[PATH_MAX + 8], inner[8 * PATH_MAX], driver[16 * PATH_MAX];
	char *out = NULL, *err = NULL, *argv[4], rest[16];
	struct test_proc *p;
	int st;

	SKIP_IF_NEEDED();
	snprintf(py, sizeof(py), "%s/scripts/count-int.py", root);
	at(rdy, "work/int-ready");
	snprintf(done, sizeof(done), "%s.done", rdy);
	CU_ASSERT_FATAL(test_write_file_mode(py, counter, 0644) == 0);
	if (access("/usr/bin/script", X_OK) == 0) {
		(void)unlink(rdy);
		snprintf(inner, sizeof(inner), "exec env -C %s HOME=%s PATH=%s %s run -p %s -- %s %s %s", p_work,
			 p_home, SAFE_PATH, test_passavant_bin(), p_policy, python, py, rdy);
		/* Wait until the counter blocks SIGINT, then type ^C; keep the
		 * terminal's input open until the counter is done (at most 4 s). */
		(void)unlink(done);
		snprintf(driver, sizeof(driver),
			 "( i=0; while [ ! -e %s ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done;"
			 " printf '\003'; i=0; while [ ! -e %s ] && [ $i -lt 80 ]; do sleep 0.05; i=$((i+1)); done )"
			 " | SHELL=/bin/sh script -qec '%s' /dev/null",
			 rdy, done, inner);
		argv[0] = "sh";
		argv[1] = "-c";
		argv[2] = driver;
		argv[3] = NULL;
		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(st == 0, "status %d", st);
		ROW(test_has(out, "total=1"), "^C on the terminal: not exactly one SIGINT: %s", out ? out : "");
		/* SI_KERNEL (0x80): the terminal's, not a forwarded copy. */
		ROW(test_has(out, "INT code=128"), "^C did not come from the terminal: %s", out ? out : "");
		free(out);
		free(err);
	} else {
		TEST_SKIP("the terminal ^C part needs /usr/bin/script (util-linux)");
	}
	/* Without a terminal: kill -INT passavant reaches the command. */
	(void)unlink(rdy);
	{
		char *full[] = {"env", "-C", p_work, (char *)test_passavant_bin(), "run", "-p", p_policy,
				"--", (char *)python, py, rdy, NULL};
		p = test_proc_start(full, "go", rest, sizeof(rest), 20000);
	}
	CU_ASSERT_FATAL(p != NULL);
	st = test_proc_stop(p, SIGINT, 15000);
	out = test_proc_stdout(p);
	ROW(st == 0 && test_has(out, "total=1"), "kill -INT passavant: status %d, %s", st, out ? out : "");
	free(out);
	test_proc_free(p);
}

/* Is a process with this exact argv[1] alive on the host? */
static bool process_with_arg(const char *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (d == NULL)
		return false;
	while (!found && (e = readdir(d)) != NULL) {
		char path[300], buf[256];
		long len;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		len = test_read_small(path, buf, sizeof(buf));
		if (len < 0)
			continue;
		if ((size_t)len > strlen(buf) + 1 && strcmp(buf + strlen(buf) + 1, arg) == 0)
			found = true;
	}
	closedir(d);
	return found;
}

static void test_nothing_left(void)
{
	char *out = NULL, *err = NULL, buf[PATH_MAX];
	char *mounts_before = test_read_file("/proc/self/mountinfo", NULL), *mounts_after;
	const char *sess;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err, "sleep 3007 &\necho sess=$(dirname \"$SSL_CERT_FILE\")\n");
	ROW(st == 0, "status %d", st);
	/* Gone now, or within the 100 ms grace this always waited. */
	for (int i = 0; i < 10 && process_with_arg("3007"); i++)
		usleep(10 * 1000);
	ROW(!process_with_arg("3007"), "the background sleep outlived the run");
	mounts_after = test_read_file("/proc/self/mountinfo", NULL);
	ROW(mounts_before && mounts_after && strcmp(mounts_before, mounts_after) == 0,
	    "the host's mount table changed");
	sess = value_of(out, "sess");
	ROW(sess != NULL && strncmp(sess, "/tmp/passavant-", 15) == 0 && access(sess, F_OK) < 0,
	    "session directory %s left behind", sess ? sess : "(none)");
	ROW(access(at(buf, "work/.vscode"), F_OK) < 0 && access(at(buf, "work/.idea"), F_OK) < 0 &&
		    access(at(buf, "work/.mcp.json"), F_OK) < 0 &&
		    access(at(buf, "work/.git/hooks"), F_OK) < 0,
	    "a placeholder was left in the work directory");
	free(mounts_before);
	free(mounts_after);
	free(out);
	free(err);
}

/*
 * -v's count of refusals holds the ones a flood's sum stands for (they
 * were counted as one): 300 denied DNS questions, 100 recorded one by
 * one and the rest summed, must read "300 refused", however the seconds
 * fall and however soon the command ends after them.
 */
static void test_refusal_count_flood(void)
{
	static const char *const verbose[] = {"-v", NULL};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(verbose, &out, &err,
		    "%s - <<'EOF'\n"
		    "import socket, struct\n"
		    "ns = [l.split()[1] for l in open('/etc/resolv.conf') if l.startswith('nameserver')][0]\n"
		    "s = socket.socket(socket.AF_INET6 if ':' in ns else socket.AF_INET, socket.SOCK_DGRAM)\n"
		    "s.settimeout(5)\n"
		    "got = 0\n"
		    "for i in range(300):\n"
		    "    name = b''.join(bytes([len(l)]) + l for l in [b'flood%%d' %% i, b'denied', b'example']) + b'\\0'\n"
		    "    s.sendto(struct.pack('>HHHHHH', i, 0x100, 1, 0, 0, 0) + name + struct.pack('>HH', 1, 1), (ns, 53))\n"
		    "    a = s.recv(512)\n"
		    "    got += struct.unpack('>H', a[:2])[0] == i and (a[3] & 15) == 3\n"
		    "print('nxdomain=%%d' %% got)\n"
		    "EOF\n",
		    python);
	ROW(st == 0 && test_has(out, "nxdomain=300"), "the 300 denied names did not all get NXDOMAIN (%d): %s %s", st,
	    out ? out : "", err ? err : "");
	ROW(test_has(err, "more refused DNS questions came within a second"), "no summed record was made: %s",
	    err ? err : "");
	ROW(test_has(err, ", 300 refused, "), "-v does not count the summed refusals: %s", err ? err : "");
	free(out);
	free(err);
}

static void test_refusal_lines(void)
{
	static const char *const quiet[] = {"-q", NULL};
	static const char *const verbose[] = {"-v", NULL};
	const char *script = VIA_PROXY "curl -sS -X POST -d a=b --max-time 20 %s/hello -o /dev/null "
			     "-w 'code=%%{http_code}\\n'\n";
	char *out = NULL, *err = NULL, want[256];
	int st;

	SKIP_IF_NEEDED();
	snprintf(want, sizeof(want), "passavant: blocked POST https://127.0.0.1:%u/hello: ",
		 (unsigned)up.port);
	st = run_sh(NULL, &out, &err, script, up.url);
	ROW(st == 0 && test_has(out, "code=403"), "POST not refused with 403: %s", out ? out : "");
	ROW(test_has(err, want), "no refusal line \"%s\" in: %s", want, err ? err : "");
	ROW(test_has(err, "allowedMethods"), "the refusal line does not name the rule: %s", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	st = run_sh(quiet, &out, &err, script, up.url);
	ROW(st == 0 && test_has(out, "code=403"), "-q: POST not refused: %s", out ? out : "");
	ROW(!test_has(err, "blocked"), "-q still prints: %s", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	st = run_sh(verbose, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 %s/hello -o /dev/null\n" VIA_PROXY
		    "curl -sS -X POST -d a=b --max-time 20 %s/hello -o /dev/null\n",
		    up.url, up.url);
	ROW(st == 0, "status %d", st);
	ROW(test_has(err, "passavant: 1 request allowed, 1 refused, 0 credentials injected"),
	    "-v summary missing or wrong: %s", err ? err : "");
	free(out);
	free(err);
}

static void test_token_injected(void)
{
	char *out = NULL, *err = NULL, *rec;
	int st;

	SKIP_IF_NEEDED();
	st = run_sh(NULL, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 -H \"Authorization: Bearer $GH_TOKEN\" %s/echo\n", up.url);
	ROW(st == 0, "status %d", st);
	rec = test_read_file(p_record, NULL);
	ROW(test_has(rec, real_token), "the upstream did not receive the real token");
	ROW(!test_has(out, real_token), "the real token came back into the sandbox");
	free(rec);
	free(out);
	free(err);
}

/* Round 46 (lead): a $TMPDIR that does not exist (a CI image's, a
 * container's) refused the start with "session directory PATH: No such
 * file or directory": what, and not what to do. The line says what the
 * directory is for and to set TMPDIR to an existing one or unset it. */
static void test_tmpdir_missing(void)
{
	char t[PATH_MAX + 16], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	snprintf(t, sizeof(t), "TMPDIR=%s/missing46/tmp", root);
	{
		char *argv[] = {"env", t, (char *)test_passavant_bin(), "run", "-p", p_policy, "--", "true", NULL};

		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 125 && test_has(err, "cannot make the session directory ") &&
		    test_has(err, "/missing46/tmp/passavant-") &&
		    test_has(err, "set TMPDIR to an existing directory of your own, or unset it for /tmp"),
	    "a missing TMPDIR: status %d, %s", st, test_nz(err));
	free(out);
	free(err);
}

/* Round 46 (lead): a machine with user namespaces turned off
 * (user.max_user_namespaces = 0, set here in a namespace of the test's
 * own) refused the start with "No space left on device" and nothing
 * more. The line says which setting and what to do. */
static void test_userns_off(void)
{
	char cmd[3 * PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/unshare", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/unshare");
		return;
	}
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/user/max_user_namespaces || exit 9; exec '%s' run -p '%s' -- true",
		 test_passavant_bin(), p_policy);
	{
		char *argv[] = {"/usr/bin/unshare", "-U", "-r", "sh", "-c", cmd, NULL};

		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 125 && test_has(err, "No space left on device; user namespaces are turned off here "
				       "(user.max_user_namespaces is 0): as root, sysctl -w user.max_user_namespaces="),
	    "user namespaces off: status %d, %s", st, test_nz(err));
	free(out);
	free(err);
}

/* Round 46 (lead): `sudo passavant run` from a project in the user's
 * own 0700 home (Debian 12's adduser makes them so): the sandbox's user
 * namespace maps root only, root has no override there, and the start
 * failed with "cannot bind DIR: Permission denied", nothing of why or
 * what to do. The line says both now. */
static void test_root_in_other_home(void)
{
	char h[PATH_MAX], w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("needs root");
		return;
	}
	CU_ASSERT_FATAL(mkdir(at(h, "home46o"), 0755) == 0 && mkdir(at(w, "home46o/proj"), 0755) == 0 &&
			chown(w, 65534, 65534) == 0 && chown(h, 65534, 65534) == 0 && chmod(h, 0700) == 0);
	{
		char *argv[] = {"env", "-C", w, (char *)test_passavant_bin(), "run", "-p", p_policy, "--", "true", NULL};

		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 125 && test_has(err, "Permission denied; as root, the sandbox cannot enter a directory of another "
				       "user that others cannot search") &&
		    test_has(err, "run passavant as that user (without sudo)"),
	    "root in another user's 0700 home: status %d, %s", st, test_nz(err));
	(void)chmod(h, 0755);
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* As an unprivileged user                                              */
/* ------------------------------------------------------------------ */

/* uid 65534's copy of the binary, root/dir/passavant into bin (PATH_MAX
 * bytes): the clone may live where that user cannot reach (Debian's
 * /root is 0700). false, the test skipped, where the runner is not root
 * or has no setpriv to become that user. */
static bool nobody_bin(const char *dir, char *bin)
{
	char d[PATH_MAX];

	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("needs root and setpriv to become uid 65534");
		return false;
	}
	CU_ASSERT_FATAL(mkdir(at(d, dir), 0755) == 0);
	CU_ASSERT_FATAL(snprintf(bin, PATH_MAX, "%s/passavant", d) < PATH_MAX);
	CU_ASSERT_FATAL(test_copy_file(test_passavant_bin(), bin, 0755) == 0);
	return true;
}

/* Appends to argv from *n on the prefix of a command run as uid 65534
 * (setpriv, no groups) through env in the directory dir with henv
 * ("HOME=...") and a fixed PATH and TMPDIR: 10 entries, not terminated. */
static void nobody_argv(char **argv, size_t *n, char *dir, char *henv)
{
	argv[(*n)++] = "setpriv";
	argv[(*n)++] = "--reuid=65534";
	argv[(*n)++] = "--regid=65534";
	argv[(*n)++] = "--clear-groups";
	argv[(*n)++] = "env";
	argv[(*n)++] = "-C";
	argv[(*n)++] = dir;
	argv[(*n)++] = henv;
	argv[(*n)++] = "PATH=" SAFE_PATH;
	argv[(*n)++] = "TMPDIR=/tmp";
}

static void test_unprivileged(void)
{
	char buf[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], home[PATH_MAX], script[PATH_MAX];
	char henv[PATH_MAX + 8], text[3 * PATH_MAX], *out = NULL, *err = NULL, *argv[24], *t;
	char ubin[PATH_MAX], priv[PATH_MAX], cenv[PATH_MAX + 32], penv[PATH_MAX + 32];
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	if (!nobody_bin("u-bin", ubin))
		return;
	/* A tree owned by 65534: its HOME, work directory, policy. */
	at(home, "u-home");
	at(work, "u-work");
	at(pol, "u-policy.yaml");
	snprintf(text, sizeof(text),
		 "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
		 "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "filesystem:\n  allowWrite: [\"%s\"]\n",
		 p_certs, work);
	CU_ASSERT_FATAL(mkdir(home, 0755) == 0 && mkdir(at(buf, "u-home/.ssh"), 0700) == 0 &&
			mkdir(work, 0755) == 0);
	CU_ASSERT_FATAL(test_write_file_mode(at(buf, "u-home/.ssh/id_rsa"), "PLANTED-PRIVATE-KEY\n", 0600) == 0 &&
			test_write_file_mode(at(buf, "u-home/.bashrc"), "original bashrc\n", 0644) == 0 &&
			test_write_file_mode(pol, text, 0644) == 0);
	CU_ASSERT_FATAL(chown(home, 65534, 65534) == 0 && chown(at(buf, "u-home/.ssh"), 65534, 65534) == 0 &&
			chown(at(buf, "u-home/.ssh/id_rsa"), 65534, 65534) == 0 &&
			chown(at(buf, "u-home/.bashrc"), 65534, 65534) == 0 && chown(work, 65534, 65534) == 0 &&
			chown(pol, 65534, 65534) == 0);
	if (write_script(script, "id -u\n" VIA_PROXY "curl -sS --max-time 20 \"$1\"/hello\n"
				 "cat ~/.ssh/id_rsa 2>/dev/null; echo cat=$?\n"
				 "echo evil >> ~/.bashrc 2>/dev/null; echo bashrc=$?\n"
				 "echo kept > out.txt; echo cwd=$?\nexit 3\n") == NULL) {
		CU_FAIL("script");
		return;
	}
	/* Homes of code the user's environment names under another user's
	 * directory it cannot search (root's PYENV_ROOT, CARGO_HOME kept by
	 * sudo -E): nothing there to make read-only, not a refusal (the
	 * round 40 rows made the start fail with "cannot check
	 * /root/.pyenv: Permission denied"). */
	at(priv, "u-private");
	CU_ASSERT_FATAL(mkdir(priv, 0700) == 0 && mkdir(at(buf, "u-private/cargo"), 0755) == 0);
	snprintf(cenv, sizeof(cenv), "CARGO_HOME=%s/cargo", priv);
	snprintf(penv, sizeof(penv), "PYENV_ROOT=%s/pyenv", priv);
	snprintf(henv, sizeof(henv), "HOME=%s", home);
	nobody_argv(argv, &n, work, henv);
	argv[n++] = cenv;
	argv[n++] = penv;
	argv[n++] = ubin;
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = pol;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = script;
	argv[n++] = up.url;
	argv[n] = NULL;
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	if (st == 125 && test_has(err, "namespaces")) {
		TEST_SKIP("uid 65534 cannot create namespaces: %s", err);
		goto out;
	}
	ROW(st == 3, "status %d, expected 3", st);
	ROW(test_has(out, "65534\n"), "not running as 65534: %s", out ? out : "");
	ROW(test_has(out, "hello\n"), "curl via the proxy failed as 65534");
	ROW(!test_has(out, "PLANTED-PRIVATE-KEY"), "~/.ssh/id_rsa readable as 65534");
	ROW(value_of(out, "bashrc") && strcmp(value_of(out, "bashrc"), "0") != 0, "~/.bashrc writable");
	ROW(value_of(out, "cwd") && strcmp(value_of(out, "cwd"), "0") == 0, "cwd not writable");
	t = test_read_file(at(buf, "u-work/out.txt"), NULL);
	ROW(t && strcmp(t, "kept\n") == 0, "u-work/out.txt did not persist");
	free(t);
	if (st != 3)
		show(st, out, err);
out:
	free(out);
	free(err);
}

/*
 * Round 46: a per-user kernel budget the sandbox shares with the host.
 * As uid 65534 (root's counts are shared with everything else on a test
 * machine, and root is exempt from some): the command (fill.py, given
 * as FILL) takes all it can of the budget, says how many ("count") and
 * holds it until the host has asked (the file "asked"), 30 s at most;
 * the host, as the same user, asks for one (host.py, given as HOST,
 * prints host=0 or host=ERRNO) meanwhile, and must get it. WHAT names
 * the budget in the failure's text.
 */
static void unprivileged_budget(const char *tag, const char *fill, const char *hostpy, const char *what)
{
	char buf[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], home[PATH_MAX], script[PATH_MAX], rel[64];
	char henv[PATH_MAX + 8], text[4 * PATH_MAX], ubin[PATH_MAX], *out = NULL, *err = NULL, *argv[16];
	const char *host, *inside;
	char vhost[32], vin[32];
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0 || access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs root, setpriv and /usr/bin/python3 to become uid 65534");
		return;
	}
	snprintf(rel, sizeof(rel), "%s-bin", tag);
	at(ubin, rel);
	CU_ASSERT_FATAL(mkdir(ubin, 0755) == 0);
	snprintf(rel, sizeof(rel), "%s-bin/passavant", tag);
	CU_ASSERT_FATAL(test_copy_file(test_passavant_bin(), at(buf, rel), 0755) == 0);
	snprintf(rel, sizeof(rel), "%s-home", tag);
	at(home, rel);
	snprintf(rel, sizeof(rel), "%s-work", tag);
	at(work, rel);
	snprintf(rel, sizeof(rel), "%s-policy.yaml", tag);
	at(pol, rel);
	snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [\"%s\"]\n", work);
	CU_ASSERT_FATAL(mkdir(home, 0755) == 0 && mkdir(work, 0755) == 0 && test_write_file_mode(pol, text, 0644) == 0);
	CU_ASSERT_FATAL(chown(home, 65534, 65534) == 0 && chown(work, 65534, 65534) == 0 &&
			chown(pol, 65534, 65534) == 0);
	snprintf(rel, sizeof(rel), "%s-bin/passavant", tag);
	snprintf(text, sizeof(text),
		 "cat > fill.py <<'EOF'\n"
		 "import os, time\n"
		 "%s"
		 "open('count.tmp', 'w').write(str(n))\n"
		 "os.rename('count.tmp', 'count')\n"
		 "end = time.time() + 30\n"
		 "while not os.path.exists('asked') and time.time() < end:\n"
		 "    time.sleep(0.05)\n"
		 "EOF\n"
		 "cat > host.py <<'EOF'\n"
		 "%s"
		 "EOF\n"
		 "%s run -p %s -- /usr/bin/python3 fill.py &\n"
		 "i=0; while [ ! -s count ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i+1)); done\n"
		 "/usr/bin/python3 host.py\n"
		 "touch asked\n"
		 "echo inside=$(cat count)\n"
		 "wait\n",
		 fill, hostpy, at(buf, rel), pol);
	CU_ASSERT_FATAL(write_script(script, text) != NULL);
	snprintf(henv, sizeof(henv), "HOME=%s", home);
	nobody_argv(argv, &n, work, henv);
	argv[n++] = "sh";
	argv[n++] = script;
	argv[n] = NULL;
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	if (test_has(err, "namespaces")) {
		TEST_SKIP("uid 65534 cannot create namespaces: %s", err);
		goto out;
	}
	/* value_of() answers in one static buffer: a copy of each. */
	inside = value_of(out, "inside");
	snprintf(vin, sizeof(vin), "%s", inside != NULL ? inside : "");
	host = value_of(out, "host");
	snprintf(vhost, sizeof(vhost), "%s", host != NULL ? host : "");
	inside = inside != NULL ? vin : NULL;
	host = host != NULL ? vhost : NULL;
	ROW(st == 0, "status %d", st);
	ROW(inside != NULL && atoi(inside) > 0, "the command took none of the %s: %s", what, test_nz(out));
	ROW(host != NULL && strcmp(host, "0") == 0,
	    "the host user got none of the %s while the command held its own (errno %s; the command held %s)",
	    what, host ? host : "?", inside ? inside : "?");
	if (st != 0)
		show(st, out, err);
out:
	free(out);
	free(err);
}

/*
 * Round 46 of the attack: the kernel counts inotify instances per user
 * in every user namespace above the sandbox's too, so a command that
 * opened all it could (128, the usual fs.inotify.max_user_instances)
 * left the same user on the host without one while it ran: its editor's
 * and file watchers' inotify_init1() failed with EMFILE.
 */
static void test_unprivileged_inotify_budget(void)
{
	unprivileged_budget("ui",
			    "import ctypes\n"
			    "libc = ctypes.CDLL(None, use_errno=True)\n"
			    "n = 0\n"
			    "while n < 100000 and libc.inotify_init1(0) >= 0:\n"
			    "    n += 1\n",
			    "import ctypes\n"
			    "l = ctypes.CDLL(None, use_errno=True)\n"
			    "fd = l.inotify_init1(0)\n"
			    "print('host=%d' % (0 if fd >= 0 else ctypes.get_errno()))\n",
			    "inotify instances");
}

/*
 * Review46s, the same family: queued real-time signals count against
 * the user's RLIMIT_SIGPENDING in every user namespace above the
 * sandbox's too, so a command that queued all it could (its own signal
 * blocked) left the host user's sigqueue()/tgkill() of a real-time
 * signal failing with EAGAIN while it ran.
 */
static void test_unprivileged_sigpending_budget(void)
{
	unprivileged_budget("us",
			    "import signal, threading\n"
			    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])\n"
			    "tid = threading.get_ident()\n"
			    "n = 0\n"
			    "try:\n"
			    "    while n < 10000000:\n"
			    "        signal.pthread_kill(tid, signal.SIGRTMIN)\n"
			    "        n += 1\n"
			    "except OSError:\n"
			    "    pass\n",
			    "import signal, threading\n"
			    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])\n"
			    "try:\n"
			    "    signal.pthread_kill(threading.get_ident(), signal.SIGRTMIN)\n"
			    "    print('host=0')\n"
			    "except OSError as e:\n"
			    "    print('host=%d' % e.errno)\n",
			    "queued signals");
}

/*
 * Review44d: a denyRead path below a directory of the user's own that
 * the user cannot search (mode 000, its group not the user's) was taken
 * as out of reach and not hidden: the command, its owner, chmods the
 * directory back and read the file. The start is refused now, naming
 * what to do; only another user's directory is out of reach.
 */
static void test_unprivileged_unsearchable_deny(void)
{
	char buf[PATH_MAX], pol[PATH_MAX], dir[PATH_MAX], ubin[PATH_MAX], henv[PATH_MAX + 8];
	char text[3 * PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (!nobody_bin("u-bin-lk", ubin))
		return;
	at(dir, "u-lk");
	at(pol, "u-lk-policy.yaml");
	snprintf(text, sizeof(text),
		 "network:\n  allowedDomains: []\nfilesystem:\n  denyRead: [\"%s/locked/secret\"]\n"
		 "  allowWrite: [\"%s\"]\n",
		 dir, dir);
	CU_ASSERT_FATAL(mkdir(dir, 0755) == 0 && mkdir(at(buf, "u-lk/locked"), 0700) == 0);
	CU_ASSERT_FATAL(test_write_file_mode(at(buf, "u-lk/locked/secret"), "LOCKED-SECRET\n", 0644) == 0 &&
			test_write_file_mode(pol, text, 0644) == 0);
	CU_ASSERT_FATAL(chown(dir, 65534, 65534) == 0 && chown(at(buf, "u-lk/locked/secret"), 65534, 65534) == 0 &&
			chown(at(buf, "u-lk/locked"), 65534, 0) == 0 && chmod(at(buf, "u-lk/locked"), 0) == 0 &&
			chown(pol, 65534, 65534) == 0);
	/* HOME elsewhere: its entries are read-only inside (no chmod). */
	CU_ASSERT_FATAL(mkdir(at(buf, "u-lk-home"), 0755) == 0 && chown(buf, 65534, 65534) == 0);
	snprintf(henv, sizeof(henv), "HOME=%s", buf);
	{
		char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-C", dir,
				 henv, "PATH=" SAFE_PATH, "TMPDIR=/tmp", ubin, "run", "-p", pol, "--", "sh", "-c",
				 "chmod 700 locked; cat locked/secret", NULL };

		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	}
	if (st == 125 && test_has(err, "namespaces")) {
		TEST_SKIP("uid 65534 cannot create namespaces: %s", err);
		goto out;
	}
	ROW(!test_has(out, "LOCKED-SECRET"), "the denied file was read after a chmod u+x: %s", out ? out : "");
	ROW(st == 125 && test_has(err, "cannot be searched") && test_has(err, "locked/secret"),
	    "not refused naming the path: status %d, err %s", st, err ? err : "");
	/* The mode back, for the fixtures' removal. */
	(void)chmod(at(buf, "u-lk/locked"), 0700);
out:
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* passavant proxy: the masking sources of the session directory        */
/* ------------------------------------------------------------------ */

/* Concatenation of every regular file under dir (one level of
 * subdirectories), for grepping. malloc'd. */
static char *slurp_tree(const char *dir)
{
	char *all = NULL, *sub = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	DIR *d = opendir(dir);
	struct dirent *e;

	if (f == NULL)
		return NULL;
	while (d != NULL && (e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || e->d_name[1] == '.'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sub = slurp_tree(path);
			if (sub != NULL)
				fputs(sub, f);
			free(sub);
		} else if (S_ISREG(st.st_mode)) {
			char *text = test_read_file(path, NULL);
			if (text != NULL)
				fputs(text, f);
			free(text);
		}
	}
	if (d != NULL)
		closedir(d);
	fclose(f);
	return all;
}

static void test_proxy_session_masks(void)
{
	char dir[] = "/var/tmp/pv-pxm.XXXXXX";
	char pol[PATH_MAX], cred[PATH_MAX], sess[PATH_MAX], tmpd[PATH_MAX], text[3 * PATH_MAX];
	char tok[64], tmpenv[PATH_MAX + 8], real[41], realf[33], rest[128], *argv[16];
	char *env = NULL, *all = NULL, *out = NULL, *err = NULL, *copy = NULL;
	struct test_proc *p;
	struct stat st;
	size_t n = 0;
	const char *line;
	DIR *d;
	struct dirent *e;
	int left = 0;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	CU_ASSERT_FATAL(test_random_alnum(real + 4, 36) == 0 && test_random_alnum(realf, 32) == 0);
	memcpy(real, "ghp_", 4);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", dir);
	snprintf(cred, sizeof(cred), "%s/cred.txt", dir);
	snprintf(sess, sizeof(sess), "%s/session", dir);
	snprintf(tmpd, sizeof(tmpd), "%s/tmp", dir);
	snprintf(text, sizeof(text),
		 "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
		 "credentials:\n  envVars:\n    - name: GH_TOKEN\n      mode: mask\n"
		 "  files:\n    - path: %s\n      mode: mask\n",
		 cred);
	CU_ASSERT_FATAL(test_write_file_mode(pol, text, 0600) == 0 && test_write_file_mode(cred, realf, 0600) == 0 &&
			mkdir(tmpd, 0700) == 0);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real);
	/* 1. A named session directory: env and files/ stay for inspection. */
	argv[n++] = "env";
	argv[n++] = tok;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "proxy";
	argv[n++] = "-p";
	argv[n++] = pol;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--session-dir";
	argv[n++] = sess;
	argv[n] = NULL;
	p = test_proc_start(argv, "listening on ", rest, sizeof(rest), 20000);
	CU_ASSERT_FATAL(p != NULL);
	/* While it runs: its /proc/PID/environ holds the sentinel only. */
	{
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)test_proc_pid(p));
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		char buf[65536];
		ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		ROW(got > 0 && memmem(buf, (size_t)got, real, strlen(real)) == NULL &&
			    memmem(buf, (size_t)got, "GH_TOKEN=ghp_", 13) != NULL,
		    "the proxy's environ still holds the real token (or no GH_TOKEN at all)");
	}
	ROW(test_proc_stop(p, SIGTERM, 10000) == 0, "proxy did not stop cleanly");
	out = test_proc_stdout(p);
	err = test_proc_stderr(p);
	test_proc_free(p);
	snprintf(text, sizeof(text), "%s/env", sess);
	env = test_read_file(text, NULL);
	ROW(stat(text, &st) == 0 && (st.st_mode & 0777) == 0600, "env is not 0600");
	line = env != NULL ? strstr(env, "export GH_TOKEN='ghp_") : NULL;
	ROW(line != NULL && strlen(line) > 17 + 40 && line[17 + 40] == '\'',
	    "env has no sentinel line for GH_TOKEN: %s", env ? env : "(none)");
	snprintf(text, sizeof(text), "%s/files", sess);
	ROW(stat(text, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	    "files/ missing or not 0700");
	d = opendir(text);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(text, sizeof(text), "%s/files/%s", sess, e->d_name);
		free(copy);
		copy = test_read_file(text, NULL);
	}
	if (d != NULL)
		closedir(d);
	ROW(copy != NULL && strlen(copy) == strlen(realf) && strcmp(copy, realf) != 0,
	    "files/ has no sentinel copy of the masked file");
	all = slurp_tree(sess);
	ROW(all != NULL && strstr(all, real) == NULL && strstr(all, realf) == NULL,
	    "a real value is in the session directory");
	ROW(!test_has(out, real) && !test_has(out, realf) && !test_has(err, real) && !test_has(err, realf),
	    "a real value on the proxy's stdout or stderr");
	free(env);
	free(all);
	free(copy);
	free(out);
	free(err);
	/* 2. A temporary session directory (no --session-dir) is removed with
	 * its files/ at exit. */
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", tmpd);
	n = 0;
	argv[n++] = "env";
	argv[n++] = tok;
	argv[n++] = tmpenv;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "proxy";
	argv[n++] = "-p";
	argv[n++] = pol;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n] = NULL;
	p = test_proc_start(argv, "listening on ", rest, sizeof(rest), 20000);
	CU_ASSERT_FATAL(p != NULL);
	ROW(test_proc_stop(p, SIGTERM, 10000) == 0, "proxy did not stop cleanly");
	test_proc_free(p);
	d = opendir(tmpd);
	while (d != NULL && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			left++;
	if (d != NULL)
		closedir(d);
	ROW(d != NULL && left == 0, "%d entries left in the temporary session parent", left);
	test_rmtree(dir);
}

/* ------------------------------------------------------------------ */
/* SPEC §3.3: links a sandbox could have planted, met by the host side */

/*
 * Runs `passavant run [opts...] -p policy -- sh -c 'echo command-ran'` from
 * directory dir with the test HOME, the environment entries env
 * (NULL-terminated, "NAME=value"; may be NULL) and PWD=pwd (NULL: none).
 * Returns the exit status; *ran tells whether the command started.
 */
static int run_links(const char *dir, const char *pwd, const char *const *env,
		     const char *const *opts, const char *policy, bool *ran, char **err)
{
	char home[PATH_MAX + 8], pwdv[PATH_MAX + 8], *argv[40], *out = NULL;
	size_t n = 0;
	int st;

	snprintf(home, sizeof(home), "HOME=%s", p_home);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = (char *)dir;
	argv[n++] = "-u";
	argv[n++] = "PWD";
	argv[n++] = home;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = "TMPDIR=/tmp";
	if (pwd != NULL) {
		snprintf(pwdv, sizeof(pwdv), "PWD=%s", pwd);
		argv[n++] = pwdv;
	}
	for (size_t i = 0; env != NULL && env[i] != NULL && n < 20; i++)
		argv[n++] = (char *)env[i];
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	for (size_t i = 0; opts != NULL && opts[i] != NULL && n < 30; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "-p";
	argv[n++] = (char *)policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = "echo command-ran";
	argv[n] = NULL;
	st = test_run_capture(argv, &out, err, RUN_TIMEOUT_MS);
	*ran = test_has(out, "command-ran");
	free(out);
	return st;
}

/* A policy allowing writes to allow_write (a YAML flow item), with
 * extra appended (may be ""), at buf. 0 or -1. */
static int links_policy(char *buf, const char *name, const char *allow_write, const char *extra)
{
	char text[2 * PATH_MAX];

	at(buf, name);
	snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [%s]\n%s", allow_write, extra);
	return test_write_file_mode(buf, text, 0644);
}

/*
 * Finding: `--audit ./audit.jsonl` where an earlier session made
 * audit.jsonl (in its writable work directory) a link to ~/.bashrc: run
 * appended the refused request's line to .bashrc as the host user; a
 * dangling link made run create the file it names. Now run refuses (125)
 * before anything is created or the command starts, naming the link.
 * The same for audit.path in the policy (it was refused, but only after
 * creating the target) and for a link in a directory on the way.
 */
static void test_audit_link_refused(void)
{
	char link1[PATH_MAX], link2[PATH_MAX], dir[PATH_MAX], target[PATH_MAX], made[PATH_MAX];
	char made2[PATH_MAX], made3[PATH_MAX], pol[PATH_MAX], extra[PATH_MAX + 64], *err = NULL;
	const char *opts[] = {"--audit", "./audit-link.jsonl", NULL};
	const char *opts2[] = {"--audit", "./dangling.jsonl", NULL};
	const char *opts3[] = {"--audit", "./dirlink/audit.jsonl", NULL};
	char *text;
	bool ran;
	int st;

	SKIP_IF_NEEDED();
	at(target, "home/.bashrc");
	at(made, "home/made-by-audit");
	at(made2, "home/made-by-policy-audit");
	at(made3, "home/audit.jsonl");
	(void)unlink(made);
	(void)unlink(made2);
	(void)unlink(made3);
	ROW(symlink(target, at(link1, "work/audit-link.jsonl")) == 0, "symlink: %s", strerror(errno));
	ROW(symlink(made, at(link2, "work/dangling.jsonl")) == 0, "symlink: %s", strerror(errno));
	ROW(symlink(p_home, at(dir, "work/dirlink")) == 0, "symlink: %s", strerror(errno));

	st = run_links(p_work, p_work, NULL, opts, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "--audit through a planted link: status %d, command ran %d", st, ran);
	ROW(test_has(err, link1) && test_has(err, "symbolic link"), "stderr does not name the link: %s",
	    err ? err : "");
	text = test_read_file(target, NULL);
	ROW(text != NULL && strcmp(text, "original bashrc\n") == 0, "the link's target was written: %s",
	    text ? text : "(missing)");
	free(text);
	free(err);
	err = NULL;

	st = run_links(p_work, p_work, NULL, opts2, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "--audit through a dangling link: status %d, command ran %d", st, ran);
	ROW(access(made, F_OK) < 0, "the dangling link's target was created");
	free(err);
	err = NULL;

	st = run_links(p_work, p_work, NULL, opts3, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "--audit through a linked directory: status %d, command ran %d", st, ran);
	ROW(access(made3, F_OK) < 0, "a file was created through the linked directory");
	ROW(test_has(err, dir), "stderr does not name the link: %s", err ? err : "");
	free(err);
	err = NULL;

	(void)unlink(link2);
	ROW(symlink(made2, link2) == 0, "symlink: %s", strerror(errno));
	snprintf(extra, sizeof(extra), "audit:\n  path: %s\n", link2);
	ROW(links_policy(pol, "audit-link.yaml", "\".\"", extra) == 0, "policy");
	st = run_links(p_work, p_work, NULL, NULL, pol, &ran, &err);
	ROW(st == 125 && !ran, "audit.path through a link: status %d, command ran %d", st, ran);
	ROW(access(made2, F_OK) < 0, "audit.path: the link's target was created before the refusal");
	free(err);
	(void)unlink(link1);
	(void)unlink(link2);
	(void)unlink(dir);
	(void)unlink(made);
	(void)unlink(made2);
	(void)unlink(made3);
}

/*
 * Finding: `cd ~/project/sub && passavant run` with allowWrite ["."],
 * where sub is a link to $HOME an earlier session planted: "." was the
 * real directory, $HOME, all of it writable. Now refused (125), naming
 * the link and saying to run from the real path. A link on $PWD in a
 * directory the policy does not make writable is followed as before.
 */
static void test_pwd_link(void)
{
	char proj[PATH_MAX], sub[PATH_MAX], pol[PATH_MAX], alias[PATH_MAX], *err = NULL;
	bool ran;
	int st;

	SKIP_IF_NEEDED();
	ROW(mkdir(at(proj, "home/project"), 0755) == 0 || errno == EEXIST, "mkdir: %s",
	    strerror(errno));
	ROW(symlink(p_home, at(sub, "home/project/sub")) == 0, "symlink: %s", strerror(errno));
	ROW(links_policy(pol, "dot.yaml", "\".\"", "") == 0, "policy");

	st = run_links(sub, sub, NULL, NULL, pol, &ran, &err);
	ROW(st == 125 && !ran, "$PWD through a planted link: status %d, command ran %d", st, ran);
	ROW(test_has(err, sub) && test_has(err, "cd -P"), "stderr does not name the link or the fix: %s",
	    err ? err : "");
	free(err);
	err = NULL;

	/* The real directory: runs. */
	st = run_links(p_home, p_home, NULL, NULL, pol, &ran, &err);
	ROW(st == 0 && ran, "from the real directory: status %d, command ran %d: %s", st, ran,
	    err ? err : "");
	free(err);
	err = NULL;

	/* A link outside every writable tree to the home directory (an
	 * earlier session's writable tree, root/ohome -> home): refused, as
	 * "." would be the whole home. */
	ROW(symlink(p_home, at(alias, "ohome")) == 0, "symlink: %s", strerror(errno));
	st = run_links(alias, alias, NULL, NULL, pol, &ran, &err);
	ROW(st == 125 && !ran, "$PWD through a link to the home directory: status %d, command ran %d", st,
	    ran);
	ROW(test_has(err, "holds the home directory"), "stderr does not say why: %s", err ? err : "");
	free(err);
	err = NULL;
	(void)unlink(alias);

	/* A link outside every writable tree (root/alias -> work): followed. */
	ROW(symlink(p_work, at(alias, "alias")) == 0, "symlink: %s", strerror(errno));
	st = run_links(alias, alias, NULL, NULL, pol, &ran, &err);
	ROW(st == 0 && ran, "$PWD through a read-only link: status %d, command ran %d: %s", st, ran,
	    err ? err : "");
	free(err);
	(void)unlink(alias);
	(void)unlink(sub);
	(void)rmdir(proj);
}

/*
 * Round 43 (review42f F5): a $XDG_STATE_HOME outside the home reached
 * through a link the system keeps (Debian's /var/run -> /run, owned by
 * root in /var) is followed: the sentinel key and the unchecked mark are
 * made there and the session starts; before, "Too many levels of
 * symbolic links" and the start went on without its mark. A link root
 * made deeper (in a directory a root session could be given to write)
 * is still refused.
 */
static void test_system_link_state(void)
{
	char run[64], via[80], env[PATH_MAX + 32], tok[64], key[PATH_MAX], deep[PATH_MAX], *err = NULL;
	const char *e[] = {env, tok, NULL};
	struct stat st_l, st_d;
	bool ran;
	int st;

	if (lstat("/var/run", &st_l) != 0 || !S_ISLNK(st_l.st_mode) || st_l.st_uid != 0 ||
	    stat("/var", &st_d) != 0 || st_d.st_uid != 0 || (st_d.st_mode & 022) != 0 ||
	    stat("/var/run", &st_d) != 0 || !S_ISDIR(st_d.st_mode)) {
		CU_PASS("no root-owned /var/run link here: the row does not apply");
		return;
	}
	snprintf(run, sizeof(run), "/run/pv-r43-%ld", (long)getpid());
	snprintf(via, sizeof(via), "/var/run/pv-r43-%ld", (long)getpid());
	ROW(mkdir(run, 0755) == 0, "mkdir %s: %s", run, strerror(errno));
	snprintf(env, sizeof(env), "XDG_STATE_HOME=%s/state", via);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real_token);
	st = run_links(p_work, p_work, e, NULL, p_policy, &ran, &err);
	ROW(st == 0 && ran, "$XDG_STATE_HOME through /var/run: status %d, command ran %d: %s", st, ran,
	    err ? err : "");
	ROW(!test_has(err, "symbolic link") && !test_has(err, "cannot make"),
	    "a warning about the state directory: %s", err ? err : "");
	snprintf(key, sizeof(key), "%s/state/passavant", run);
	ROW(access(key, F_OK) == 0, "no state directory made at %s", key);
	free(err);
	err = NULL;

	/* root made this link deeper down, where a root session could have */
	snprintf(deep, sizeof(deep), "%s/deep", run);
	ROW(symlink(run, deep) == 0, "symlink: %s", strerror(errno));
	snprintf(env, sizeof(env), "XDG_STATE_HOME=%s/deep/state2", via);
	st = run_links(p_work, p_work, e, NULL, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "$XDG_STATE_HOME through a link root made in %s: status %d, command ran %d",
	    run, st, ran);
	snprintf(key, sizeof(key), "%s/state2", run);
	ROW(access(key, F_OK) != 0, "a state directory was made through the deep link: %s", key);
	free(err);
	(void)unlink(deep);
	test_rmtree(run);
}

/*
 * The session directory ($TMPDIR) and the sentinel key's state directory
 * ($XDG_STATE_HOME) reached through links in the writable work
 * directory: refused before either is created there.
 */
static void test_session_state_links(void)
{
	char tl[PATH_MAX], tt[PATH_MAX], sl[PATH_MAX], stt[PATH_MAX], env1[PATH_MAX + 16];
	char env2[PATH_MAX + 32], tok[64], *err = NULL;
	const char *e1[] = {env1, NULL}, *e2[] = {env2, tok, NULL};
	bool ran;
	int st;

	SKIP_IF_NEEDED();
	ROW(mkdir(at(tt, "home/tmp-target"), 0755) == 0, "mkdir: %s", strerror(errno));
	ROW(symlink(tt, at(tl, "work/tmplink")) == 0, "symlink: %s", strerror(errno));
	snprintf(env1, sizeof(env1), "TMPDIR=%s", tl);
	st = run_links(p_work, p_work, e1, NULL, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "$TMPDIR through a planted link: status %d, command ran %d", st, ran);
	ROW(test_has(err, tl), "stderr does not name the link: %s", err ? err : "");
	ROW(rmdir(tt) == 0, "a session directory was made through the link: %s", strerror(errno));
	free(err);
	err = NULL;

	ROW(mkdir(at(stt, "home/state-target"), 0700) == 0, "mkdir: %s", strerror(errno));
	ROW(symlink(stt, at(sl, "work/statelink")) == 0, "symlink: %s", strerror(errno));
	snprintf(env2, sizeof(env2), "XDG_STATE_HOME=%s", sl);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real_token);
	/* p_policy masks GH_TOKEN with stable sentinels: the key is used. */
	st = run_links(p_work, p_work, e2, NULL, p_policy, &ran, &err);
	ROW(st == 125 && !ran, "$XDG_STATE_HOME through a planted link: status %d, command ran %d", st,
	    ran);
	ROW(rmdir(stt) == 0, "the state directory was made through the link: %s", strerror(errno));
	free(err);
	err = NULL;
	(void)unlink(tl);
	(void)unlink(sl);
	test_system_link_state();
}

static int run_fixtures_down(void)
{
	if (ready) {
		(void)test_upstream_stop(&up);
		test_rmtree(root);
		free(root);
		root = NULL;
		ready = false;
	}
	return 0;
}

/*
 * Round 36 review: a cursor saved holds G0, origin mode and autowrap, and
 * its restore brings them back without a sequence the filter notes. The
 * command designates DEC line drawing (or sets origin mode, or autowrap
 * off), saves the cursor (ESC 7, CSI s, ? 1048 h), sets it back, restores
 * the cursor. tmux is the user's terminal (a real emulator, which
 * restores them as xterm does); after the run, the shell's next line must
 * be ASCII, origin mode off, autowrap on. On 4bb937e, 3 of the 5 failed:
 * line drawing after ESC 7/8 and CSI s/u (every letter of the next line
 * a box piece), origin mode on after ESC 7/8.
 */
static void test_tty_saved_cursor(void)
{
	static const char script[] =
		"PV=$1 POL=$2 WORK=$3 n=0\n"
		"for v in '\\033(0\\0337\\033(B\\0338' '\\033(0\\033[s\\033(B\\033[u' "
		"'\\033(0\\033[?1048h\\033(B\\033[?1048l' '\\033[?6h\\0337\\033[?6l\\0338' "
		"'\\033[?7l\\0337\\033[?7h\\0338'; do\n"
		"  n=$((n+1)); S=/tmp/pv-r36-$$-$n\n"
		"  tmux -S $S -f /dev/null new-session -d -x 80 -y 24 -c \"$WORK\" "
		"\"$PV run -p $POL -- printf '$v'; printf 'after:lqk\\n'; sleep 30\" || exit 9\n"
		"  for i in $(seq 1 100); do tmux -S $S capture-pane -p | grep -q after: && break; sleep 0.2; done\n"
		"  line=$(tmux -S $S capture-pane -p -e | grep after: | od -An -c | tr -s ' \\n' '  ')\n"
		"  st=$(tmux -S $S display -p 'origin=#{origin_flag} wrap=#{wrap_flag}')\n"
		"  case \"$line\" in *016*) cs=line-drawing ;; *a*f*t*e*r*) cs=ascii ;; *) cs=none ;; esac\n"
		"  echo \"row $n: G0=$cs $st\"\n"
		"  tmux -S $S kill-server; rm -f $S\n"
		"done\n";
	char *out = NULL, *err = NULL;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/tmux", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/tmux");
		return;
	}
	{
		char *argv[] = {"env", "-u", "MAKEFLAGS", "-u", "TMUX", "PATH=" SAFE_PATH, "sh", "-c", (char *)script,
				"sh", (char *)test_passavant_bin(), p_policy, p_work, NULL};

		ROW(test_run_capture(argv, &out, &err, 2 * RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	}
	for (int i = 1; i <= 5; i++) {
		char want[64];

		snprintf(want, sizeof(want), "row %d: G0=ascii origin=0 wrap=1\n", i);
		ROW(test_has(out, want), "variant %d: the terminal was left changed after the run: %s", i,
		    test_nz(out));
	}
	free(out);
	free(err);
}

/* A pty driver: python3 -c THIS PASSAVANT POLICY FORMAT runs `passavant
 * run -- printf FORMAT` on a terminal it holds, prints what reached it. */
static const char tty_printf[] =
	"import os, sys, fcntl, termios, select, time\n"
	"m, s = os.openpty()\n"
	"pid = os.fork()\n"
	"if pid == 0:\n"
	"    os.setsid(); fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n"
	"    for fd in (0, 1, 2): os.dup2(s, fd)\n"
	"    cmd = sys.argv[4:] if len(sys.argv) > 4 else ['printf', sys.argv[3]]\n"
	"    os.execv(sys.argv[1], [sys.argv[1], 'run', '-p', sys.argv[2], '--'] + cmd)\n"
	"os.close(s)\n"
	"out, t0 = b'', time.monotonic()\n"
	"while time.monotonic() - t0 < 30:\n"
	"    if select.select([m], [], [], 0.2)[0]:\n"
	"        try: b = os.read(m, 65536)\n"
	"        except OSError: b = b''\n"
	"        if not b: break\n"
	"        out += b\n"
	"    elif os.waitpid(pid, os.WNOHANG)[0]: break\n"
	"print(repr(out))\n";

/*
 * Review36a: no locale (the terminal may be 8-bit): box drawing
 * characters, each with a byte 0x94-0x96, reach the terminal as '-', '|'
 * and '+', block elements as '#' (on 4bb937e each was '?': a table or a
 * tree printed by a command became a row of question marks).
 */
static void test_tty_box_either(void)
{
	char *out = NULL, *err = NULL;
	/* PYTHONCOERCECLOCALE=0: else the driver's python3 sets
	 * LC_CTYPE=C.UTF-8 for passavant (PEP 538) */
	char *argv[] = {"env", "-u", "MAKEFLAGS", "-u", "LANG", "-u", "LC_ALL", "-u", "LC_CTYPE",
			"PYTHONCOERCECLOCALE=0", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_printf,
			(char *)test_passavant_bin(), p_policy,
			"[\342\224\214\342\224\200\342\224\254\342\224\220|\342\224\202|\342\224\224\342\224\200"
			"\342\224\264\342\224\230|\342\226\210\342\226\221]",
			NULL};

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	ROW(test_has(out, "[+-++|||+-++|##]"), "box drawing with no locale: not '-', '|', '+', '#': %s",
	    test_nz(out));
	ROW(!test_has(out, "\\xe2") && !test_has(out, "\\x9"), "box drawing with no locale: a byte 0x80-0x9f sent: %s",
	    test_nz(out));
	free(out);
	free(err);
}

/*
 * The tty_printf driver: `passavant run` printing text on a terminal,
 * with the n of env set (a locale, TERM) and none of the runner's own
 * LANG, LC_ALL, LC_CTYPE and TERM. What the driver printed (malloc'd:
 * the terminal's bytes' repr last), or NULL; a row when it failed.
 */
static char *tty_drive(const char *const *env, size_t n_env, const char *text)
{
	char *argv[24], *out = NULL, *err = NULL;
	size_t n = 0;

	argv[n++] = "env";
	argv[n++] = "-u";
	argv[n++] = "MAKEFLAGS";
	argv[n++] = "-u";
	argv[n++] = "LANG";
	argv[n++] = "-u";
	argv[n++] = "LC_ALL";
	argv[n++] = "-u";
	argv[n++] = "LC_CTYPE";
	argv[n++] = "-u";
	argv[n++] = "TERM"; /* the runner's own may read UTF-8 only */
	argv[n++] = "PYTHONCOERCECLOCALE=0";
	argv[n++] = "PATH=" SAFE_PATH;
	for (size_t k = 0; k < n_env && env[k] != NULL; k++)
		argv[n++] = (char *)env[k];
	argv[n++] = "/usr/bin/python3";
	argv[n++] = "-c";
	argv[n++] = (char *)tty_printf;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = p_policy;
	argv[n++] = (char *)text;
	argv[n] = NULL;
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	free(err);
	return out;
}

/*
 * Round 37 (fix37t): how the filter reads bytes 0x80 and up comes from
 * the locale passavant runs in (LC_ALL, then LC_CTYPE, then LANG, an
 * empty one skipped): "\xc3\x9dx" (U+00DD, then x) reaches the terminal
 * as it is under UTF-8 (round 39: a CAN after it, which ends the OSC an
 * 8-bit terminal would read there), as "?x" with none (C, POSIX, unset: either), and
 * as "\xc3" alone when another character set is named (8-bit: 0x9D is an
 * OSC introducer there, and the OSC never ends). TERM plays no part.
 * Passes on 023d37a: the combinations as they were meant, now held.
 */
static void test_tty_locales(void)
{
	static const struct {
		const char *env[3], *want;
	} rows[] = {
		{{"LANG=C.UTF-8", NULL, NULL}, "\\xc3\\x9d\\x18x"},
		{{"LC_CTYPE=UTF-8", NULL, NULL}, "\\xc3\\x9d\\x18x"}, /* macOS's, over ssh */
		{{"LANG=en_US.utf8", "TERM=linux", NULL}, "\\xc3\\x9d\\x18x"},
		{{"LC_ALL=", "LC_CTYPE=en_US.UTF-8", "LANG=C"}, "\\xc3\\x9d\\x18x"},
		{{"LC_ALL=C", "LANG=C.UTF-8", NULL}, "?x"},
		{{"LC_ALL=POSIX", NULL, NULL}, "?x"},
		{{"TERM=xterm-256color", NULL, NULL}, "?x"},
		{{"LANG=en_US.ISO-8859-1", NULL, NULL}, "\\xc3"},
		{{"LC_CTYPE=de_DE", "LANG=C.UTF-8", NULL}, "\\xc3"},
		/* round 40: a terminal that reads UTF-8 only (TERM): no CAN,
		 * no '?' */
		{{"LANG=C.UTF-8", "TERM=xterm-kitty", NULL}, "\\xc3\\x9dx"},
		{{"TERM=tmux-256color", NULL, NULL}, "\\xc3\\x9dx"},
		{{"LANG=C.UTF-8", "TERM=footx", NULL}, "\\xc3\\x9d\\x18x"},
		{{"LANG=en_US.ISO-8859-1", "TERM=alacritty", NULL}, "\\xc3"},
	};
	char *out;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char tail[2][32];

		out = tty_drive(rows[i].env, 3, "\303\235x");
		/* the command's output is the last thing on the terminal (the
		 * driver prints its bytes' repr, in either quotes) */
		snprintf(tail[0], sizeof(tail[0]), "%s'\n", rows[i].want);
		snprintf(tail[1], sizeof(tail[1]), "%s\"\n", rows[i].want);
		ROW(test_has(out, tail[0]) || test_has(out, tail[1]), "%s %s: the terminal did not end with %s: %s",
		    rows[i].env[0], test_nz(rows[i].env[1]), rows[i].want, test_nz(out));
		free(out);
	}
}

/*
 * Review of round 40: TERM=tmux* reads UTF-8 only, but tmux with
 * set-titles on passes a pane's title on as it is to the terminal it
 * draws on (tmux 3.3a: OSC 0 holding the pane's C3 9C, ST to an 8-bit
 * terminal, then the rest of the title as text there, in which C3 9D
 * opens an OSC and the BEL ends it: OSC 52 set the clipboard). Under
 * tmux a title keeps round 39's rule ('?' for such a character), text
 * passes whole; under kitty both pass whole. On 70cf218: the tmux row
 * fails (1 of 4 checks: the title's U+00DD passed).
 */
static void test_tty_mux_title(void)
{
	static const struct {
		const char *term, *want;
	} rows[] = {
		{"TERM=tmux-256color", "\\x1b]0;T\\xc3\\x9c?52;c;aGk=\\x07"},
		{"TERM=xterm-kitty", "\\x1b]0;T\\xc3\\x9c\\xc3\\x9d52;c;aGk=\\x07"},
	};
	char *out;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *env[] = {"LANG=C.UTF-8", rows[i].term};

		out = tty_drive(env, 2, "\x1b]0;T\303\234\303\235" "52;c;aGk=\x07");
		ROW(test_has(out, rows[i].want), "%s: the title did not reach the terminal as %s: %s", rows[i].term,
		    rows[i].want, test_nz(out));
		free(out);
	}
}

/*
 * Round 37 (fix37t): a report in flight as the command ends. The command
 * turns focus reports on (CSI ? 1004 h), prints "bye" and ends; the
 * terminal (this driver) sends a focus report 0.2 s after "bye", as one
 * sent before it read passavant's reset would come, and answers DSR 5
 * 0.3 s late. Nothing may be left for the shell: the relay reads the
 * terminal's input until its status answer, as after a query. On 8caec84
 * no query had passed, nothing was asked, and ^[[I was left.
 */
static const char tty_late_report[] =
	"import os, sys, fcntl, termios, select, time\n"
	"m, s = os.openpty()\n"
	"pid = os.fork()\n"
	"if pid == 0:\n"
	"    os.setsid(); fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n"
	"    for fd in (0, 1, 2): os.dup2(s, fd)\n"
	"    os.execv(sys.argv[1], [sys.argv[1], 'run', '-q', '-p', sys.argv[2], '--', 'printf', sys.argv[3]])\n"
	"out, due, sent, seen, t0 = b'', [], False, 0, time.monotonic()\n"
	"while time.monotonic() - t0 < 30:\n"
	"    if not sent and b'bye' in out:\n"
	"        due.append((time.monotonic() + 0.2, b'\\x1b[I')); sent = True\n"
	"    n = out.count(b'\\x1b[5n')\n"
	"    for _ in range(n - seen): due.append((time.monotonic() + 0.3, b'\\x1b[0n'))\n"
	"    seen = n\n"
	"    due.sort()\n"
	"    while due and due[0][0] <= time.monotonic(): os.write(m, due.pop(0)[1])\n"
	"    if select.select([m], [], [], 0.02)[0]:\n"
	"        try: out += os.read(m, 65536)\n"
	"        except OSError: pass\n"
	"    if os.waitpid(pid, os.WNOHANG)[0]: break\n"
	"for t, b in sorted(due): time.sleep(max(0, t - time.monotonic())); os.write(m, b)\n"
	"time.sleep(0.2)\n"
	"a = termios.tcgetattr(s); a[3] &= ~termios.ICANON; a[6][termios.VMIN] = 0; a[6][termios.VTIME] = 0\n"
	"termios.tcsetattr(s, termios.TCSANOW, a)\n"
	"try: left = os.read(s, 1000)\n"
	"except OSError: left = b''\n"
	"print('left: %r' % left)\n"
	"print('terminal: %r' % out)\n";

static void test_tty_late_report(void)
{
	char *out = NULL, *err = NULL;
	char *argv[] = {"env", "-u", "MAKEFLAGS", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_late_report,
			(char *)test_passavant_bin(), p_policy, "\\033[?1004hbye", NULL};

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	ROW(test_has(out, "\\x1b[?1004hbye"), "the focus reports did not pass: %s", test_nz(out));
	ROW(test_has(out, "left: b''\n"), "a report in flight as the command ended was left for the shell: %s",
	    test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 37 (fix37t): the command's terminal has a name. It is a pty of
 * the host's devpts, which the sandbox's own devpts instance does not
 * show: `tty` said "not a tty", os.ttyname() ENODEV, GPG_TTY=$(tty) was
 * empty for pinentry. Bound at /dev/console (as LXC and systemd-nspawn
 * do), ttyname() finds it by its inode; a pty made inside (script, tmux)
 * is the sandbox's own /dev/pts/0. Without a terminal, no
 * /dev/console. Fails on 023d37a ("not a tty").
 */
static void test_tty_name(void)
{
	char *out = NULL, *err = NULL;
	char *argv[] = {"env", "-u", "MAKEFLAGS", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_printf,
			(char *)test_passavant_bin(), p_policy, "", "sh", "-c",
			"tty; tty </dev/null; echo name=$(python3 -c 'import os; print(os.ttyname(2))');"
			" echo hi > \"$(tty)\" && echo wrote; script -qc tty /dev/null",
			NULL};

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	ROW(test_has(out, "/dev/console\\r\\nnot a tty\\r\\nname=/dev/console"),
	    "the command's terminal has no name (tty, ttyname): %s", test_nz(out));
	ROW(test_has(out, "hi\\r\\nwrote"), "the command could not write to its terminal by its name: %s",
	    test_nz(out));
	ROW(!test_has(out, "script:") && test_has(out, "/dev/pts/0"), "a pty made inside is not /dev/pts/0: %s",
	    test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	ROW(run_sh(NULL, &out, &err, "ls /dev/console 2>/dev/null; echo done\n") == 0 && test_has(out, "done") &&
		    !test_has(out, "/dev/console"),
	    "/dev/console without a terminal: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 41 of the attack: the command's terminal is a pty of the host's
 * devpts, opened by passavant on a writable mount, and the command (root
 * mapped to root, the pty's owner) chmod'ed it through /proc/self/fd/0:
 * `chmod 0666` opened passavant's pty to every user of the host for the
 * rest of the session. Fds 0-2 are reopened through the read-only bind
 * at /dev/console: the chmod fails with EROFS, the mode stays. Fails on
 * 933eee8 (CHMODDED, mode 666).
 */
static void test_tty_no_chmod(void)
{
	char *out = NULL, *err = NULL;
	char *argv[] = {"env", "-u", "MAKEFLAGS", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_printf,
			(char *)test_passavant_bin(), p_policy, "", "sh", "-c",
			"for f in /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 /dev/console; do"
			" chmod 0666 $f 2>/dev/null && echo CHMODDED $f; done;"
			" echo mode=$(stat -L -c %a /proc/self/fd/0); tty; echo hi; read -r x </dev/null; echo end",
			NULL};

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	ROW(!test_has(out, "CHMODDED"), "the command chmod'ed its terminal: %s", test_nz(out));
	ROW(test_has(out, "mode=6") && !test_has(out, "mode=666"), "the terminal's mode changed: %s", test_nz(out));
	ROW(test_has(out, "/dev/console\\r\\nhi\\r\\nend"), "the terminal does not work as before: %s",
	    test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 37: no locale, and characters whose stand-in must keep their
 * columns: a CJK ideograph (U+4E00, E4 B8 80) and an emoji (F0 9F 98 80)
 * are two columns to the program that prints them, a combining accent
 * (U+0301) and a zero-width joiner none. Before, each became one '?': a
 * table's cells after a wide character drawn a column left, after an
 * accent a column right. Now "??" for the wide ones, nothing for the
 * others; no byte 0x80-0x9F sent either way. Fails on 023d37a.
 */
static void test_tty_wide_either(void)
{
	char *out = NULL, *err = NULL;
	char *argv[] = {"env", "-u", "MAKEFLAGS", "-u", "LANG", "-u", "LC_ALL", "-u", "LC_CTYPE",
			"PYTHONCOERCECLOCALE=0", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_printf,
			(char *)test_passavant_bin(), p_policy,
			"[\344\270\200|\360\237\230\200|e\314\201|a\342\200\215b]", NULL};

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
	ROW(test_has(out, "[??|??|e|ab]"), "wide and zero-width characters with no locale: columns not kept: %s",
	    test_nz(out));
	ROW(!test_has(out, "\\x8") && !test_has(out, "\\x9"),
	    "wide characters with no locale: a byte 0x80-0x9f sent: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Review36a: a title set by an OSC number with leading zeros ("00",
 * "01": a title to the terminal) on a run whose keys the relay reads.
 * The user's title is pushed before it and popped at the end. On
 * 4bb937e it was taken for a colour query by its second byte: passed
 * with no push and no pop, the command's title left on the window after
 * the run, for a host program that asks the terminal for it (CSI 21 t)
 * to read as typed.
 */
static void test_tty_title_zeros(void)
{
	static const char *const titles[] = {"\\033]00;EVIL\\007", "\\033]01;EVIL\\033\\\\"};
	char *out = NULL, *err = NULL;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/python3", X_OK) < 0) {
		TEST_SKIP("needs /usr/bin/python3");
		return;
	}
	for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++) {
		char *argv[] = {"env", "-u", "MAKEFLAGS", "PATH=" SAFE_PATH, "/usr/bin/python3", "-c", (char *)tty_printf,
				(char *)test_passavant_bin(), p_policy, (char *)titles[i], NULL};
		const char *set, *pop;

		out = err = NULL;
		ROW(test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS) == 0, "driver failed: %s", test_nz(err));
		set = out != NULL ? strstr(out, ";EVIL") : NULL;
		pop = set != NULL ? strstr(set, "\\x1b[23;0t") : NULL;
		ROW(set != NULL && set - out >= 17 && strncmp(set - 17, "\\x1b[22;0t\\x1b]0", 16) == 0 && pop != NULL,
		    "title %zu: not pushed before and popped after the command's: %s", i, test_nz(out));
		free(out);
		free(err);
	}
}

TEST_REGISTRAR(register_run)
{
	CU_pSuite s = test_suite("run", suite_init, suite_cleanup);

	test_add(s, "curl through the proxy to an allowed HTTPS upstream", test_curl_through_proxy);
	test_add(s, "no direct connection (curl --noproxy, python socket)", test_no_direct_connection);
	test_add(s, "credential store hidden (~/.ssh/id_rsa)", test_credential_store_hidden);
	test_add(s, "mandatory write denies; work directory writable", test_write_denies);
	test_add(s, "a mount the host makes during the run does not reach the sandbox", test_host_mount_later);
	test_add(s, "the command cannot stop passavant through the terminal (TOSTOP, tcsetpgrp)", test_tty_stop);
	test_add(s, "stdio all piped: /dev/tty is ENXIO, nothing reaches the caller's terminal",
		 test_tty_unreachable_piped);
	test_add(s, "the command's terminal: a pty of passavant's, escapes filtered, size, keys, ^C, settings kept",
		 test_tty_relay);
	test_add(s, "the command's terminal: what a restored cursor brings back is put back (tmux)",
		 test_tty_saved_cursor);
	test_add(s, "the command's terminal: a title by OSC 00 or 01 is pushed and popped", test_tty_title_zeros);
	test_add(s, "the command's terminal: no locale: box drawing as '-', '|', '+'", test_tty_box_either);
	test_add(s, "the command's terminal: the locale says how bytes 0x80 and up are read (LC_ALL, LC_CTYPE, LANG)",
		 test_tty_locales);
	test_add(s, "the command's terminal: under tmux a title keeps round 39's rule (set-titles passes it on)",
		 test_tty_mux_title);
	test_add(s, "the command's terminal: a report in flight as the command ends is not left for the shell",
		 test_tty_late_report);
	test_add(s, "the command's terminal has a name: tty, ttyname(), /dev/console", test_tty_name);
	test_add(s, "round 41: the command's terminal cannot be chmod'ed (fds 0-2 through /dev/console)",
		 test_tty_no_chmod);
	test_add(s, "the command's terminal: passavant stopped (SIGTSTP, SIGSTOP, its group then bg): the command's "
		    "modes off while the shell has the terminal, on again at fg",
		 test_tty_stopped);
	test_add(s, "the command's terminal: a slow terminal's answers (1.5 s) are not left for the shell", test_tty_slow);
	test_add(s,
		 "the command's terminal: another session's is not read (setsid at a shell's prompt); a harness's "
		 "fresh pty is",
		 test_tty_session);
	test_add(s, "the command's terminal: no locale: wide characters as \"??\", combining marks as nothing",
		 test_tty_wide_either);
	test_add(s, "--audit file: recorded, read-only inside", test_audit_protected);
	test_add(s, "masked variable and file show sentinels; denied variable unset",
		 test_masked_values);
	test_add(s, "socket(AF_UNIX) and unshare -U refused (EPERM)", test_seccomp);
	test_add(s, "ps shows only the sandbox", test_ps);
	test_add(s, "exit statuses 0 3 137 127 125", test_exit_statuses);
	test_add(s, "review of round 45: a shared pipe passavant could not put back is said, and status 0 becomes 1",
		 test_stdio_failure_status);
	test_add(s, "SIGTERM to passavant reaches the command", test_sigterm_forwarded);
	test_add(s, "round 41: a command that ignores the signals: a second one ends the sandbox, the check runs",
		 test_second_signal_ends);
	test_add(s, "round 41 review: the host's /dev/null and a named FIFO at fds 0-2 cannot be chmod'ed",
		 test_host_fds_no_chmod);
	test_add(s, "round 41 review: one TERM sent twice (a group's and its wrapper's) is one signal: the command's "
		    "handler runs",
		 test_group_term_one_signal);
	test_add(s, "SIGINT: ^C once; kill -INT without a terminal passed on", test_sigint_once);
	test_add(s, "no process, mount, session dir or placeholder left", test_nothing_left);
	test_add(s, "refusal lines on stderr, -q, -v summary", test_refusal_lines);
	test_add(s, "-v counts the refusals a flood's summed record stands for", test_refusal_count_flood);
	test_add(s, "the upstream receives the real token", test_token_injected);
	s = test_suite("run_proxy_masks", NULL, NULL);
	test_add(s, "proxy: sentinels in env and files/, no real value, temp dir removed",
		 test_proxy_session_masks);
	s = test_suite("run_unprivileged", suite_init, run_fixtures_down);
	test_add(s, "round 46: a missing TMPDIR: 125, the line says what to do", test_tmpdir_missing);
	test_add(s, "round 46: user namespaces turned off: 125, the line names the setting", test_userns_off);
	test_add(s, "round 46: root in another user's 0700 home: 125, the line says why and what to do",
		 test_root_in_other_home);
	test_add(s, "as uid 65534: proxy, denies, writes, status", test_unprivileged);
	test_add(s, "review 44d: as uid 65534, a denyRead path below an unsearchable directory of its own: refused",
		 test_unprivileged_unsearchable_deny);
	test_add(s, "round 46: as uid 65534, a command that opens every inotify instance it can leaves the host user some",
		 test_unprivileged_inotify_budget);
	test_add(s, "review 46s: as uid 65534, a command that queues every signal it can leaves the host user some",
		 test_unprivileged_sigpending_budget);
	/* Last: its own fixtures when run alone (TEST_FILTER=run_links). */
	s = test_suite("run_links", suite_init, run_fixtures_down);
	test_add(s, "--audit and audit.path through a planted link: 125, nothing written",
		 test_audit_link_refused);
	test_add(s, "$PWD through a planted link: 125; a read-only link followed", test_pwd_link);
	test_add(s, "$TMPDIR and the state directory through planted links: 125, nothing made",
		 test_session_state_links);
}

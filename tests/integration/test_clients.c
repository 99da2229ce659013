/*
 * test_clients.c - the real-client matrix of issue 15: every client runs
 * unmodified inside `passavant run`, against the project's own HTTPS
 * upstream (pv-upstream --tls, test CA in extraCaCertPaths), twice:
 *
 *   intercept  every proxy variable unset inside the sandbox (HTTP_PROXY,
 *              HTTPS_PROXY, ALL_PROXY, GRPC_PROXY, NO_PROXY, their
 *              lower-case forms, NODE_USE_ENV_PROXY): the client connects
 *              "directly", so only the interception can carry it (SPEC
 *              §5, §7);
 *   proxy      the variables as `run` sets them.
 *
 * The trust variables stay as `run` sets them in both modes. Clients:
 * curl; git clone + push through `git http-backend` with the masked
 * GH_TOKEN in the remote URL, then a second session pushing with the URL
 * saved in .git/config; pip from a simple index; npm from a registry tree;
 * Python urllib and requests; Node fetch and https.get; Go net/http; wget;
 * Python websockets (wss echo); Java's HttpClient.
 *
 * Names, never IP literals: inside the sandbox 127.0.0.1 is the sandbox's
 * own loopback. The clients use web.test, git.test, pypi.test, npm.test
 * and ws.test; passavant itself resolves them to 127.0.0.1 because it runs
 * in a private mount namespace of its own where a hosts file of ours is
 * bind-mounted over /etc/hosts (test_spawn_hosts(), tests/support/hostsns.c). The policy allows the names
 * and the literal 127.0.0.1 (the resolved-address guard refuses loopback
 * otherwise, SPEC §3.1).
 *
 * Each row asserts on the wire: passavant's exit status (the command's),
 * the client's output (the response), the upstream's --record (the request
 * arrived, with its Host name; for git the real token as the Basic
 * password, the sentinel never), and the session's audit file (the request
 * line). A row prints "clients: NAME MODE: ok", or "clients: NAME MODE:
 * FAILED: why" with the exit status and the tails of stdout and stderr.
 *
 * What passes before the rest of issue 15 is merged (interception, the
 * in-sandbox resolver, system trust, stable sentinels):
 *   - proxy mode: curl, git's first session, pip, urllib, requests, Go.
 *   - not yet: every intercept row; in proxy mode, git's second session
 *     (per-session sentinels: the saved URL holds the first session's),
 *     npm (this machine's global npmrc names a cafile, which replaces
 *     NODE_EXTRA_CA_CERTS; needs NPM_CONFIG_CAFILE or the system bundle
 *     covered), wget (GnuTLS reads no trust variable: needs the system
 *     bundle covered), Node 20 fetch/https and Python websockets (no
 *     proxy support: they go to the sandbox's own 127.0.0.1), Java
 *     (reads no proxy variable, and trusts only the JDK's cacerts).
 *
 * A client whose program or module is missing is skipped with the reason
 * (`make deps` installs every one); with PASSAVANT_SANDBOX_MUST_WORK=1 a
 * skip is a failure. Without user namespaces the suite is skipped the same
 * way as suite "run". Suite "client_matrix". The tree lives under /var/tmp: the sandbox's /tmp is
 * private.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/fixtures.h"
#include "tests/support/hostsns.h"
#include "tests/support/proc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"
#include "tests/support/upstream.h"

#define SESSION_TIMEOUT_MS 120000
#define BUILD_TIMEOUT_MS 300000
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define TAIL_BYTES 1500
#define GIT_USER "x"

/* The two modes of every row. */
static const char *const modes[] = {"intercept", "proxy"};

/* Every proxy variable `run` sets (SPEC §7); the intercept mode unsets
 * them all, and each script prints how many are set. */
#define PROXY_VARS                                                                          \
	"HTTP_PROXY HTTPS_PROXY ALL_PROXY GRPC_PROXY NO_PROXY http_proxy https_proxy all_proxy " \
	"grpc_proxy no_proxy NODE_USE_ENV_PROXY"

static bool skip;                 /* no user namespaces */
static bool ready;                /* fixtures up */
static char *root;                /* /var/tmp/pv-clients.XXXXXX */
static struct test_upstream up;   /* HTTPS for every name, records, git, files */
static char p_home[PATH_MAX], p_work[PATH_MAX], p_policy[PATH_MAX], p_hosts[PATH_MAX];
static char p_certs[PATH_MAX], p_record[PATH_MAX], p_files[PATH_MAX], p_git[PATH_MAX];
static char p_build[PATH_MAX];
static char real_token[41];       /* ghp_ + 36: GH_TOKEN's real value */
static unsigned nscript;
static char failed_rows[2048];    /* "name/mode ..." for the summary */

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

/* ------------------------------------------------------------------ */
/* Running passavant with our names resolvable on the host side         */
/* ------------------------------------------------------------------ */

/* The result of one `passavant run` session. */
struct session {
	int status;
	char *out;   /* the script's stdout */
	char *err;   /* passavant's stderr (the script's too) */
	char audit[PATH_MAX];
};

static void session_free(struct session *s)
{
	free(s->out);
	free(s->err);
	s->out = s->err = NULL;
}

/*
 * Writes the script (the mode's prelude, then body) and runs
 *   env -i HOME PATH LANG TMPDIR GH_TOKEN=REAL
 *     passavant run --audit AUDIT -p POLICY -- sh SCRIPT
 * in the work directory. The prelude unsets every proxy variable in mode
 * "intercept" and prints "proxyvars=N" (how many are set) in both. A
 * clean environment: this machine's own trust, pip and npm variables
 * would otherwise decide what the clients do.
 */
static void session_run(struct session *s, const char *tag, const char *mode, const char *body)
{
	char script[PATH_MAX], out[PATH_MAX], err[PATH_MAX], home[PATH_MAX + 8], tok[64];
	char *text = NULL;
	char *envp[] = {home, "PATH=" SAFE_PATH, "LANG=C.UTF-8", "TMPDIR=/tmp", tok, NULL};
	char *argv[] = {(char *)test_passavant_bin(), "run", "--audit", s->audit, "-p", p_policy, "--",
			"sh", script, NULL};

	memset(s, 0, sizeof(*s));
	s->status = -1;
	snprintf(home, sizeof(home), "HOME=%s", p_home);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", real_token);
	snprintf(script, sizeof(script), "%s/scripts/%u-%s-%s.sh", root, nscript, tag, mode);
	snprintf(out, sizeof(out), "%s/scripts/%u-%s-%s.out", root, nscript, tag, mode);
	snprintf(err, sizeof(err), "%s/scripts/%u-%s-%s.err", root, nscript, tag, mode);
	snprintf(s->audit, sizeof(s->audit), "%s/audit/%u-%s-%s.jsonl", root, nscript, tag, mode);
	nscript++;
	if (asprintf(&text,
		     "# %s, mode %s\n"
		     "%s"
		     "echo \"proxyvars=$(env | grep -cE '^(%s)=')\"\n"
		     "%s",
		     tag, mode, strcmp(mode, "intercept") == 0 ? "unset " PROXY_VARS "\n" : "",
		     "HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|GRPC_PROXY|NO_PROXY|http_proxy|https_proxy|all_proxy|"
		     "grpc_proxy|no_proxy|NODE_USE_ENV_PROXY",
		     body) < 0 ||
	    test_write_file_mode(script, text, 0644) < 0) {
		free(text);
		fprintf(stderr, "clients: cannot write %s\n", script);
		return;
	}
	free(text);
	s->status = test_spawn_hosts(argv, envp, p_work, p_hosts, out, err, SESSION_TIMEOUT_MS);
	s->out = test_read_file(out, NULL);
	s->err = test_read_file(err, NULL);
}

/* ------------------------------------------------------------------ */
/* Rows                                                                 */
/* ------------------------------------------------------------------ */

/* What one row expects. */
struct expect {
	const char *out;          /* the script's stdout contains it (NULL: no check) */
	const char *rec[5];       /* the record since the session began contains each */
	const char *audit_host;   /* the audit has a line with "host":"H" ... */
	const char *audit_target; /* ... and "target":"T" */
};

/* Adds "name/mode" to the failed rows the suite's cleanup names. */
static void note_failed(const char *name, const char *mode)
{
	size_t n = strlen(failed_rows);

	snprintf(failed_rows + n, sizeof(failed_rows) - n, " %s/%s", name, mode);
}

static const char *tail_of(const char *s)
{
	size_t n;

	if (s == NULL)
		return "(none)";
	n = strlen(s);
	return n > TAIL_BYTES ? s + n - TAIL_BYTES : s;
}

/* One audit line with both "host":"HOST" and "target":"TARGET". */
static bool audit_has(const char *path, const char *host, const char *target)
{
	char h[256], t[1024];
	char *log = test_read_file(path, NULL), *line, *save = NULL;
	bool found = false;

	if (log == NULL)
		return false;
	snprintf(h, sizeof(h), "\"host\":\"%s\"", host);
	snprintf(t, sizeof(t), "\"target\":\"%s\"", target);
	for (line = strtok_r(log, "\n", &save); line != NULL && !found; line = strtok_r(NULL, "\n", &save))
		found = strstr(line, h) != NULL && strstr(line, t) != NULL &&
			strstr(line, "\"decision\":\"allow\"") != NULL;
	free(log);
	return found;
}

/*
 * Checks one session against e; prints "clients: NAME MODE: ok" or the
 * failure with its evidence, and records a failure for the summary.
 * rec is what the upstream recorded during the session. Returns whether
 * the row passed.
 */
static bool row_check(const char *name, const char *mode, const struct session *s, const char *rec,
		      const struct expect *e, const char *extra_fail)
{
	char why[PATH_MAX + 1024] = "";
	bool intercept = strcmp(mode, "intercept") == 0;

	if (s->status != 0)
		snprintf(why, sizeof(why), "exit status %d", s->status);
	else if (intercept ? !test_has(s->out, "proxyvars=0\n") : test_has(s->out, "proxyvars=0\n") || !test_has(s->out, "proxyvars="))
		snprintf(why, sizeof(why), "the proxy variables were %s", intercept ? "not all unset" : "not set");
	else if (e->out != NULL && !test_has(s->out, e->out))
		snprintf(why, sizeof(why), "stdout lacks '%s'", e->out);
	else if (extra_fail != NULL)
		snprintf(why, sizeof(why), "%s", extra_fail);
	if (why[0] == '\0')
		for (size_t i = 0; i < 5 && e->rec[i] != NULL; i++)
			if (!test_has(rec, e->rec[i])) {
				snprintf(why, sizeof(why), "the upstream did not receive '%s'", e->rec[i]);
				break;
			}
	if (why[0] == '\0' && e->audit_host != NULL && !audit_has(s->audit, e->audit_host, e->audit_target))
		snprintf(why, sizeof(why), "the audit file %s has no allowed request line for host %s target %s",
			 s->audit, e->audit_host, e->audit_target);
	if (why[0] == '\0') {
		printf("clients: %s %s: ok\n", name, mode);
		fflush(stdout);
		return true;
	}
	fprintf(stderr,
		"\nclients: %s %s: FAILED: %s\n"
		"--- %s %s: exit status %d; stdout (tail) ---\n%s\n"
		"--- %s %s: stderr (tail) ---\n%s\n--- end of %s %s ---\n",
		name, mode, why, name, mode, s->status, tail_of(s->out), name, mode, tail_of(s->err), name, mode);
	note_failed(name, mode);
	return false;
}

/* Runs body in a session of mode, checks e, and asserts the row. */
static void row(const char *name, const char *mode, const char *body, const struct expect *e)
{
	struct session s;
	size_t mark = test_file_size(p_record);
	char *rec;
	bool ok;

	session_run(&s, name, mode, body);
	rec = test_file_since(p_record, mark);
	ok = row_check(name, mode, &s, rec, e, NULL);
	ROW(ok, "clients: %s %s failed (the lines above say why)", name, mode);
	free(rec);
	session_free(&s);
}

/* Whether prog is found on SAFE_PATH (the sandbox's PATH). */
static bool on_path(const char *prog, char *path, size_t cap)
{
	char dirs[] = SAFE_PATH, *save = NULL;

	for (char *d = strtok_r(dirs, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, cap, "%s/%s", d, prog);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

/* Skips the test (return true) when prog is missing, naming the package. */
static bool skip_unless_program(const char *client, const char *prog, const char *package)
{
	char path[PATH_MAX];

	if (on_path(prog, path, sizeof(path)))
		return false;
	TEST_SKIP("clients: %s: %s not found on %s: install the Debian package %s (`make deps` does)", client,
		  prog, SAFE_PATH, package);
	return true;
}

/*
 * The interpreter (an absolute path) that can import module: Debian's
 * /usr/bin/python3 first (python3-requests and python3-websockets are
 * Debian packages), then python3 on our own PATH (a version manager's).
 * False when none can.
 */
static bool python_with(const char *module, char *out, size_t cap)
{
	static const char *const cands[] = {"/usr/bin/python3", "python3"};
	char code[256];

	snprintf(code, sizeof(code), "import %s, sys; print(sys.executable)", module);
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		char *argv[] = {(char *)cands[i], "-c", code, NULL};
		char *o = NULL;
		int rc = test_run_capture(argv, &o, NULL, 60000);

		if (rc == 0 && o != NULL && o[0] == '/') {
			o[strcspn(o, "\n")] = '\0';
			snprintf(out, cap, "%s", o);
			free(o);
			return true;
		}
		free(o);
	}
	return false;
}

static bool skip_unless_python(const char *client, const char *module, const char *package, char *py,
			       size_t cap)
{
	if (python_with(module, py, cap))
		return false;
	TEST_SKIP("clients: %s: no python3 can import %s: install the Debian package %s (`make deps` does)",
		  client, module, package);
	return true;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* A URL on the upstream under name; static buffer, one per call site
 * rotation of 4. */
static const char *url(const char *scheme, const char *name, const char *path)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s://%s:%u%s", scheme, name, (unsigned)up.port, path);
	return buf[i];
}

/* "Host: NAME:PORT\r\n" in a static buffer (one per call). */
static const char *host_line(const char *name)
{
	static char buf[2][128];
	static int i;

	i = (i + 1) % 2;
	snprintf(buf[i], sizeof(buf[i]), "Host: %s:%u\r\n", name, (unsigned)up.port);
	return buf[i];
}

/*
 * A GET of https://web.test:PORT/hello?c=NAME-MODE by a client whose
 * command line is cmd_fmt with the URL as its one %s (single-quoted in
 * the script): stdout holds "hello", the upstream got the request with
 * Host web.test:PORT, the audit has the line.
 */
static void hello_rows(const char *name, const char *cmd_fmt)
{
	for (size_t m = 0; m < 2; m++) {
		char path[128], reqline[192], cmd[2048], body[2400];
		struct expect e;

		snprintf(path, sizeof(path), "/hello?c=%s-%s", name, modes[m]);
		snprintf(reqline, sizeof(reqline), "GET %s HTTP/1.1\r\n", path);
		snprintf(cmd, sizeof(cmd), cmd_fmt, url("https", "web.test", path));
		snprintf(body, sizeof(body), "%s\nrc=$?\necho\necho \"rc=$rc\"\nexit $rc\n", cmd);
		memset(&e, 0, sizeof(e));
		e.out = "hello\n";
		e.rec[0] = reqline;
		e.rec[1] = host_line("web.test");
		e.audit_host = "web.test";
		e.audit_target = path;
		row(name, modes[m], body, &e);
	}
}

/* ------------------------------------------------------------------ */
/* The clients                                                          */
/* ------------------------------------------------------------------ */

/* The rows of one client: hello_rows() or close_rows(), given the
 * client's name and its command (the URL its one %s). */
typedef void rows_fn(const char *name, const char *cmd_fmt);

static void curl_rows(rows_fn *rows)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("curl", "curl", "curl"))
		return;
	rows("curl", "curl -sS --max-time 20 '%s'");
}

static void test_curl(void)
{
	curl_rows(hello_rows);
}

static void wget_rows(rows_fn *rows)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("wget", "wget", "wget"))
		return;
	/* Debian's wget is built with GnuTLS, which reads no trust variable:
	 * it passes once the session bundle covers the system bundle. */
	rows("wget", "wget -q -O - --tries=1 --timeout=20 '%s'");
}

static void test_wget(void)
{
	wget_rows(hello_rows);
}

/* The rows of a python3 client: the first python3 that imports module
 * runs imports then script (python -c; the URL is sys.argv[1]); skips,
 * naming the Debian package, where none does. */
static void python_rows(rows_fn *rows, const char *client, const char *module, const char *package,
			const char *imports, const char *script)
{
	char py[PATH_MAX], fmt[PATH_MAX + 512];
	int n;

	SKIP_IF_NEEDED();
	if (skip_unless_python(client, module, package, py, sizeof(py)))
		return;
	n = snprintf(fmt, sizeof(fmt), "%s -c '%s%s' '%%s'", py, imports, script);
	if (n < 0 || (size_t)n >= sizeof(fmt)) {
		ROW(false, "clients: %s: the command for %s does not fit in %zu bytes", client, py, sizeof(fmt));
		return;
	}
	rows(client, fmt);
}

static void python_urllib_rows(rows_fn *rows, const char *script)
{
	python_rows(rows, "python-urllib", "urllib.request", "python3", "import sys, urllib.request\n", script);
}

static void test_python_urllib(void)
{
	python_urllib_rows(hello_rows,
			   "print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode(), end=\"\")");
}

static void test_python_requests(void)
{
	python_rows(hello_rows, "python-requests", "requests", "python3-requests", "import sys, requests\n",
		    "r = requests.get(sys.argv[1], timeout=20); r.raise_for_status(); print(r.text, end=\"\")");
}

/* Node 20: fetch (undici) and https.get ignore every proxy variable and
 * NODE_USE_ENV_PROXY (only 22.21 and 24 honour it), so both modes need
 * the interception. No proxy agent anywhere. */
static void test_node_fetch(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("node-fetch", "node", "nodejs"))
		return;
	hello_rows("node-fetch",
		   "node -e 'fetch(process.argv[1]).then(r => r.text().then(t => {\n"
		   "  process.stdout.write(t); if (r.status !== 200) process.exit(1); }))\n"
		   "  .catch(e => { console.error(\"node fetch:\", e, e.cause); process.exit(1); })' '%s'");
}

static void test_node_https(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("node-https", "node", "nodejs"))
		return;
	hello_rows("node-https",
		   "node -e 'require(\"https\").get(process.argv[1], r => {\n"
		   "  r.pipe(process.stdout); r.on(\"end\", () => process.exit(r.statusCode === 200 ? 0 : 1)); })\n"
		   "  .on(\"error\", e => { console.error(\"node https:\", e); process.exit(1); })' '%s'");
}

static const char go_client[] =
	"package main\n"
	"\n"
	"import (\n"
	"\t\"fmt\"\n"
	"\t\"io\"\n"
	"\t\"net/http\"\n"
	"\t\"os\"\n"
	")\n"
	"\n"
	"func main() {\n"
	"\tr, err := http.Get(os.Args[1])\n"
	"\tif err != nil {\n"
	"\t\tfmt.Fprintln(os.Stderr, \"go client:\", err)\n"
	"\t\tos.Exit(1)\n"
	"\t}\n"
	"\tdefer r.Body.Close()\n"
	"\tb, err := io.ReadAll(r.Body)\n"
	"\tif err != nil {\n"
	"\t\tfmt.Fprintln(os.Stderr, \"go client: reading the body:\", err)\n"
	"\t\tos.Exit(1)\n"
	"\t}\n"
	"\tos.Stdout.Write(b)\n"
	"\tif r.StatusCode != 200 {\n"
	"\t\tfmt.Fprintln(os.Stderr, \"go client: status\", r.Status)\n"
	"\t\tos.Exit(1)\n"
	"\t}\n"
	"}\n";

/* Runs a build command on the host (clean environment plus extra),
 * printing its output when it fails. Returns 0 or -1. */
static int host_build(const char *what, char *const argv[])
{
	char *out = NULL, *err = NULL;
	int rc = test_run_capture(argv, &out, &err, BUILD_TIMEOUT_MS);

	if (rc != 0)
		fprintf(stderr, "clients: %s failed (exit %d):\n%s%s\n", what, rc, out ? out : "", err ? err : "");
	free(out);
	free(err);
	return rc == 0 ? 0 : -1;
}

/* Builds the Go client on the host once (stdlib only, no network, caches
 * in the test tree) into bin. Returns 0, or -1 (said why). */
static int go_client_build(char *bin, size_t cap)
{
	char dir[PATH_MAX + 16], file[PATH_MAX + 32];
	char gocache[PATH_MAX + 48], gopath[PATH_MAX + 48], home[PATH_MAX + 24];

	snprintf(dir, sizeof(dir), "%s/go", p_build);
	snprintf(bin, cap, "%s/client", dir);
	snprintf(gocache, sizeof(gocache), "GOCACHE=%s/cache", dir);
	snprintf(gopath, sizeof(gopath), "GOPATH=%s/gopath", dir);
	snprintf(home, sizeof(home), "HOME=%s", dir);
	if (access(bin, X_OK) != 0) {
		char *argv[] = {"env", "-i", "-C", dir, "PATH=" SAFE_PATH, home, gocache, gopath, "GOFLAGS=-mod=mod",
				"GOPROXY=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "go", "build", "-o", bin, ".",
				NULL};

		snprintf(file, sizeof(file), "%s/client.go", dir);
		if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || test_write_file_mode(file, go_client, 0644) < 0)
			return -1;
		snprintf(file, sizeof(file), "%s/go.mod", dir);
		if (test_write_file_mode(file, "module pvclient\n\ngo 1.19\n", 0644) < 0)
			return -1;
		return host_build("go build of the Go client", argv);
	}
	return 0;
}

/* Go net/http: run inside. It honours HTTPS_PROXY and SSL_CERT_FILE. */
static void go_rows(rows_fn *rows)
{
	char bin[PATH_MAX + 32], fmt[PATH_MAX + 64];

	SKIP_IF_NEEDED();
	if (skip_unless_program("go", "go", "golang-go"))
		return;
	CU_ASSERT_FATAL(go_client_build(bin, sizeof(bin)) == 0);
	snprintf(fmt, sizeof(fmt), "%s '%%s'", bin);
	rows("go", fmt);
}

static void test_go(void)
{
	go_rows(hello_rows);
}

static const char java_client[] =
	"import java.net.URI;\n"
	"import java.net.http.HttpClient;\n"
	"import java.net.http.HttpRequest;\n"
	"import java.net.http.HttpResponse;\n"
	"\n"
	"public class Client {\n"
	"    public static void main(String[] args) throws Exception {\n"
	"        HttpClient c = HttpClient.newHttpClient();\n"
	"        HttpRequest req = HttpRequest.newBuilder(URI.create(args[0])).build();\n"
	"        HttpResponse<String> r = c.send(req, HttpResponse.BodyHandlers.ofString());\n"
	"        System.out.print(r.body());\n"
	"        System.out.flush();\n"
	"        if (r.statusCode() != 200) {\n"
	"            System.err.println(\"java client: status \" + r.statusCode());\n"
	"            System.exit(1);\n"
	"        }\n"
	"    }\n"
	"}\n";

/* Compiles the Java client on the host once into dir. Returns 0 or -1. */
static int java_client_build(char *dir, size_t cap)
{
	char file[PATH_MAX + 32], cls[PATH_MAX + 32];

	snprintf(dir, cap, "%s/java", p_build);
	snprintf(cls, sizeof(cls), "%s/Client.class", dir);
	snprintf(file, sizeof(file), "%s/Client.java", dir);
	if (access(cls, R_OK) != 0) {
		char *argv[] = {"env", "-i", "PATH=" SAFE_PATH, "javac", "-d", dir, file, NULL};

		if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || test_write_file_mode(file, java_client, 0644) < 0)
			return -1;
		return host_build("javac of the Java client", argv);
	}
	return 0;
}

/* Java's HttpClient: run inside. It reads no proxy variable and trusts
 * only the JDK's cacerts. */
static void java_rows(rows_fn *rows)
{
	char dir[PATH_MAX + 16], fmt[PATH_MAX + 128];

	SKIP_IF_NEEDED();
	if (skip_unless_program("java", "javac", "default-jdk-headless") ||
	    skip_unless_program("java", "java", "default-jdk-headless"))
		return;
	CU_ASSERT_FATAL(java_client_build(dir, sizeof(dir)) == 0);
	snprintf(fmt, sizeof(fmt), "java -XX:-UsePerfData -cp %s Client '%%s'", dir);
	rows("java", fmt);
}

static void test_java(void)
{
	java_rows(hello_rows);
}

/* Python websockets (10.x in Debian 12): no proxy support at all, so
 * both modes need the interception. An echo over wss. */
static void test_websockets(void)
{
	char py[PATH_MAX];

	SKIP_IF_NEEDED();
	if (skip_unless_python("websockets", "websockets", "python3-websockets", py, sizeof(py)))
		return;
	for (size_t m = 0; m < 2; m++) {
		char path[128], reqline[192], body[PATH_MAX + 1024];
		struct expect e;

		snprintf(path, sizeof(path), "/ws?c=websockets-%s", modes[m]);
		snprintf(reqline, sizeof(reqline), "GET %s HTTP/1.1\r\n", path);
		snprintf(body, sizeof(body),
			 "%s -c 'import asyncio, sys, websockets\n"
			 "async def main():\n"
			 "    async with websockets.connect(sys.argv[1], open_timeout=20) as ws:\n"
			 "        await ws.send(\"echo over wss\")\n"
			 "        print(\"got:\", await asyncio.wait_for(ws.recv(), 20))\n"
			 "asyncio.run(main())' '%s'\n"
			 "rc=$?\necho \"rc=$rc\"\nexit $rc\n",
			 py, url("wss", "ws.test", path));
		memset(&e, 0, sizeof(e));
		e.out = "got: echo over wss\n";
		e.rec[0] = reqline;
		e.rec[1] = host_line("ws.test");
		e.rec[2] = "Upgrade: websocket\r\n";
		e.audit_host = "ws.test";
		e.audit_target = path;
		row("websockets", modes[m], body, &e);
	}
}

/* pip from the simple index (pv-upstream --files), into a target
 * directory of the work tree; the module must import. pip honours the
 * proxy variables and PIP_CERT. */
static void test_pip(void)
{
	char py[PATH_MAX];

	SKIP_IF_NEEDED();
	if (skip_unless_python("pip", "pip", "python3-pip", py, sizeof(py)))
		return;
	for (size_t m = 0; m < 2; m++) {
		char body[PATH_MAX * 2 + 2048];
		struct expect e;

		snprintf(body, sizeof(body),
			 "%s -m pip install -q --no-deps --no-cache-dir --disable-pip-version-check --retries 0 "
			 "--timeout 20 --target \"$PWD/pip-%s\" --index-url '%s' pvdemo || exit 10\n"
			 "%s -c 'import sys; sys.path.insert(0, sys.argv[1]); import pvdemo; print(pvdemo.GREETING)' "
			 "\"$PWD/pip-%s\"\n",
			 py, modes[m], url("https", "pypi.test", "/simple/"), py, modes[m]);
		memset(&e, 0, sizeof(e));
		e.out = TEST_PIP_GREETING "\n";
		e.rec[0] = "GET /simple/pvdemo/ HTTP/1.1\r\n";
		e.rec[1] = "GET /packages/pvdemo-1.0.0-py3-none-any.whl HTTP/1.1\r\n";
		e.rec[2] = host_line("pypi.test");
		e.audit_host = "pypi.test";
		e.audit_target = "/packages/pvdemo-1.0.0-py3-none-any.whl";
		row("pip", modes[m], body, &e);
	}
}

/* npm from the registry tree (pv-upstream --files) into a fresh project
 * in the work tree, with its cache there too (nothing from the host's).
 * npm honours the proxy variables; its trust is NODE_EXTRA_CA_CERTS
 * unless an npmrc names a cafile (this machine's global one does). */
static void test_npm(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("npm", "node", "nodejs") || skip_unless_program("npm", "npm", "npm"))
		return;
	for (size_t m = 0; m < 2; m++) {
		char body[4096];
		struct expect e;

		snprintf(body, sizeof(body),
			 "mkdir npm-%s && cd npm-%s || exit 10\n"
			 "echo '{\"name\": \"pv-client-test\", \"version\": \"1.0.0\", \"private\": true}' "
			 "> package.json\n"
			 "export npm_config_cache=\"$PWD/.npm-cache\" npm_config_update_notifier=false "
			 "npm_config_audit=false npm_config_fund=false npm_config_fetch_retries=0\n"
			 "npm install --no-progress --registry '%s' pvnpmdemo || exit 11\n"
			 "node -e 'console.log(require(\"pvnpmdemo\"))'\n",
			 modes[m], modes[m], url("https", "npm.test", "/"));
		memset(&e, 0, sizeof(e));
		e.out = TEST_NPM_GREETING "\n";
		e.rec[0] = "GET /pvnpmdemo HTTP/1.1\r\n";
		e.rec[1] = "GET /pvnpmdemo/-/pvnpmdemo-1.0.0.tgz HTTP/1.1\r\n";
		e.rec[2] = host_line("npm.test");
		e.audit_host = "npm.test";
		e.audit_target = "/pvnpmdemo/-/pvnpmdemo-1.0.0.tgz";
		row("npm", modes[m], body, &e);
	}
}

/* "Authorization: Basic base64(x:VALUE)\r\n" into out. */
static void basic_line(char *out, size_t cap, const char *value)
{
	char plain[100], b64[140];

	snprintf(plain, sizeof(plain), "%s:%s", GIT_USER, value);
	test_b64(plain, strlen(plain), b64);
	snprintf(out, cap, "Authorization: Basic %s\r\n", b64);
}

/* The value of "sentinel=" in out, into buf; "" when absent. */
static void sentinel_of(const char *out, char *buf, size_t cap)
{
	const char *p = out != NULL ? strstr(out, "sentinel=") : NULL;

	buf[0] = '\0';
	if (p != NULL)
		snprintf(buf, cap, "%.*s", (int)strcspn(p + 9, "\n"), p + 9);
}

/* ------------------------------------------------------------------ */
/* Close-delimited answers of an inject host                            */
/* ------------------------------------------------------------------ */

#define CLOSE_FILL 600 /* filler bytes between the values of answer A */

/* Answer A's body: the real value (or the sentinel) at the very start,
 * again in the middle, and as the body's last bytes, right before the
 * upstream's close. Into out (cap >= 2 * CLOSE_FILL + 256). */
static void close_body_a(char *out, size_t cap, const char *value)
{
	char fa[CLOSE_FILL + 1], fb[CLOSE_FILL + 1];

	memset(fa, 'a', CLOSE_FILL);
	memset(fb, 'b', CLOSE_FILL);
	fa[CLOSE_FILL] = fb[CLOSE_FILL] = '\0';
	snprintf(out, cap, "%s\n%s\n%s\n%s\nend:%s", value, fa, value, fb, value);
}

static void hex_of(const char *s, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The bytes between "TAG<<<" and ">>>TAG rc=" in out, and the rc after
 * it, into body/rc; false when the markers are missing. */
static bool marked(const char *out, const char *tag, char *body, size_t cap, int *rc)
{
	char open[16], close[24];
	const char *a, *b;

	snprintf(open, sizeof(open), "%s<<<", tag);
	snprintf(close, sizeof(close), ">>>%s rc=", tag);
	if (out == NULL || (a = strstr(out, open)) == NULL || (b = strstr(a, close)) == NULL)
		return false;
	a += strlen(open);
	snprintf(body, cap, "%.*s", (int)(b - a), a);
	*rc = atoi(b + strlen(close));
	return true;
}

/*
 * Rows of one client against git.test, GH_TOKEN's inject host, answering
 * HTTP/1.1 with neither Content-Length nor chunking, the body ended by
 * the upstream's close (TLS close_notify), holding GH_TOKEN's real value:
 *   A  /rawhex/: the value at the body's start, in its middle and as its
 *      very last bytes before the close (close_body_a());
 *   B  /reflect/close?drip=5&only=value: "reflect:VALUE\n", the value's
 *      bytes one per 5 ms, so each reaches the proxy in a read of its
 *      own (the value across read boundaries).
 * cmd_fmt writes the body to stdout with the URL as its one %s. Each
 * client must exit 0 (its own verdict on the answer: complete, well
 * formed, status 200) with exactly the body where the sentinel stands
 * for each real value; the real value appears nowhere in its output.
 */
static void close_rows(const char *name, const char *cmd_fmt)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
	char real_a[2 * CLOSE_FILL + 256], hex_a[2 * (sizeof(head) + sizeof(real_a))], raw[sizeof(head) + sizeof(real_a)];
	char hex_tok[2 * sizeof(real_token) + 1];

	close_body_a(real_a, sizeof(real_a), real_token);
	snprintf(raw, sizeof(raw), "%s%s", head, real_a);
	hex_of(raw, strlen(raw), hex_a);
	hex_of(real_token, strlen(real_token), hex_tok);
	for (size_t m = 0; m < 2; m++) {
		char *body = NULL, *cmd_a = NULL, *cmd_b = NULL, *url_a = NULL, *url_b = NULL, *rec;
		char tag[64], sent[128], want_a[sizeof(real_a)], want_b[192], got[sizeof(real_a) + 512];
		char why[1024] = "", target_b[256];
		struct session s;
		struct expect e;
		size_t mark = test_file_size(p_record);
		int rc = -1;

		snprintf(tag, sizeof(tag), "close-%s", name);
		snprintf(target_b, sizeof(target_b), "/reflect/close?x=%s&drip=5&only=value&nohead=1&c=%s-%s", hex_tok,
			 name, modes[m]);
		if (asprintf(&url_a, "https://git.test:%u/rawhex/%s", (unsigned)up.port, hex_a) < 0 ||
		    asprintf(&url_b, "https://git.test:%u%s", (unsigned)up.port, target_b) < 0 ||
		    asprintf(&cmd_a, cmd_fmt, url_a) < 0 || asprintf(&cmd_b, cmd_fmt, url_b) < 0 ||
		    asprintf(&body,
			     "echo \"sentinel=$GH_TOKEN\"\n"
			     "printf 'A<<<'; %s; rc=$?; printf '>>>A rc=%%d\\n' $rc\n"
			     "printf 'B<<<'; %s; rc=$?; printf '>>>B rc=%%d\\n' $rc\n",
			     cmd_a, cmd_b) < 0) {
			CU_FAIL("clients: out of memory");
			free(url_a), free(url_b), free(cmd_a), free(cmd_b);
			return;
		}
		session_run(&s, tag, modes[m], body);
		rec = test_file_since(p_record, mark);
		sentinel_of(s.out, sent, sizeof(sent));
		close_body_a(want_a, sizeof(want_a), sent);
		snprintf(want_b, sizeof(want_b), "reflect:%s\n", sent);
		if (test_has(s.out, real_token) || test_has(s.err, real_token))
			snprintf(why, sizeof(why), "the real value of GH_TOKEN reached the sandbox (in %s)",
				 test_has(s.out, real_token) ? "the client's output" : "stderr");
		else if (strlen(sent) < 20 || strcmp(sent, real_token) == 0)
			snprintf(why, sizeof(why), "no sentinel in the session (sentinel=%s)", sent);
		else if (!marked(s.out, "A", got, sizeof(got), &rc) || rc != 0)
			snprintf(why, sizeof(why), "answer A (value at the start, middle, end): the client exited %d", rc);
		else if (strcmp(got, want_a) != 0)
			snprintf(why, sizeof(why),
				 "answer A (value at the start, middle, end): %zu bytes, not the %zu of the body with the "
				 "sentinel for each value (%d sentinels)",
				 strlen(got), strlen(want_a), test_count(got, sent));
		else if (!marked(s.out, "B", got, sizeof(got), &rc) || rc != 0)
			snprintf(why, sizeof(why), "answer B (value across reads): the client exited %d", rc);
		else if (strcmp(got, want_b) != 0)
			snprintf(why, sizeof(why), "answer B (value across reads): '%.200s', want '%.200s'", got, want_b);
		memset(&e, 0, sizeof(e));
		e.rec[0] = "GET /rawhex/";
		e.rec[1] = "GET /reflect/close?x=";
		e.rec[2] = host_line("git.test");
		e.audit_host = "git.test";
		e.audit_target = target_b;
		ROW(row_check(tag, modes[m], &s, rec, &e, why[0] != '\0' ? why : NULL),
		    "clients: %s %s failed (the lines above say why)", tag, modes[m]);
		free(rec);
		session_free(&s);
		free(url_a), free(url_b), free(cmd_a), free(cmd_b), free(body);
	}
}

static void test_close_curl(void)
{
	curl_rows(close_rows);
}

static void test_close_wget(void)
{
	wget_rows(close_rows);
}

static void test_close_python(void)
{
	python_urllib_rows(close_rows,
			   "r = urllib.request.urlopen(sys.argv[1], timeout=20)\n"
			   "sys.stdout.write(r.read().decode()); sys.exit(0 if r.status == 200 else 1)");
}

static void test_close_node(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("node-fetch", "node", "nodejs"))
		return;
	close_rows("node-fetch",
		   "node -e 'fetch(process.argv[1]).then(r => r.text().then(t => {\n"
		   "  process.stdout.write(t); if (r.status !== 200) process.exitCode = 1; }))\n"
		   "  .catch(e => { console.error(\"node fetch:\", e, e.cause); process.exitCode = 1; })' '%s'");
}

static void test_close_go(void)
{
	go_rows(close_rows);
}

static void test_close_java(void)
{
	java_rows(close_rows);
}

/*
 * git: clone with the masked token in the URL (git sends it as the Basic
 * password after the 401; the proxy puts the real token there), commit,
 * push; then a second session in the same work tree commits and pushes
 * with the URL clone saved in .git/config, which holds the first
 * session's sentinel (so it needs sentinels that survive a session).
 */
static void test_git(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("git", "git", "git"))
		return;
	for (size_t m = 0; m < 2; m++) {
		const char *mode = modes[m];
		char body[4096], repo[64], p_info[256], p_upload[256], p_receive[256];
		char real_auth[256], sent_auth[256], sentinel[64], why[PATH_MAX + 512], cfgpath[PATH_MAX + 128];
		char *rec, *cfg, *log = NULL;
		struct session s;
		struct expect e;
		size_t mark;
		bool ok;

		snprintf(repo, sizeof(repo), "r-%s", mode);
		snprintf(p_info, sizeof(p_info), "GET /git/%s.git/info/refs?service=git-upload-pack HTTP/1.1\r\n", repo);
		snprintf(p_upload, sizeof(p_upload), "POST /git/%s.git/git-upload-pack HTTP/1.1\r\n", repo);
		snprintf(p_receive, sizeof(p_receive), "POST /git/%s.git/git-receive-pack HTTP/1.1\r\n", repo);
		basic_line(real_auth, sizeof(real_auth), real_token);
		/* Session 1: clone, commit, push. */
		snprintf(body, sizeof(body),
			 "export GIT_TERMINAL_PROMPT=0 GIT_CONFIG_NOSYSTEM=1\n"
			 "echo \"sentinel=$GH_TOKEN\"\n"
			 "git clone -q \"https://%s:$GH_TOKEN@git.test:%u/git/%s.git\" %s || exit 10\n"
			 "cd %s && cat hello.txt || exit 11\n"
			 "echo one > one.txt && git add one.txt && git -c user.name=pv -c user.email=pv@passavant.invalid "
			 "-c commit.gpgsign=false commit -q -m one-%s || exit 12\n"
			 "git push -q origin HEAD:main || exit 13\n"
			 "echo pushed-one\n",
			 GIT_USER, (unsigned)up.port, repo, repo, repo, mode);
		mark = test_file_size(p_record);
		session_run(&s, "git", mode, body);
		rec = test_file_since(p_record, mark);
		sentinel_of(s.out, sentinel, sizeof(sentinel));
		basic_line(sent_auth, sizeof(sent_auth), sentinel);
		snprintf(cfgpath, sizeof(cfgpath), "%s/%s/.git/config", p_work, repo);
		cfg = test_read_file(cfgpath, NULL);
		why[0] = '\0';
		if (strlen(sentinel) != strlen(real_token) || strcmp(sentinel, real_token) == 0)
			snprintf(why, sizeof(why), "GH_TOKEN inside is not a sentinel of the token's length: '%s'",
				 sentinel);
		else if (test_has(rec, sent_auth))
			snprintf(why, sizeof(why), "the upstream received the sentinel as the Basic password");
		else if (!test_has(rec, real_auth))
			snprintf(why, sizeof(why), "the upstream never received the real token as the Basic password");
		else if (test_has(s.out, real_token) || test_has(s.err, real_token) || test_has(cfg, real_token))
			snprintf(why, sizeof(why), "the real token reached the sandbox (output or .git/config)");
		else if (!test_has(cfg, sentinel))
			snprintf(why, sizeof(why), "%s does not hold the sentinel in the remote URL", cfgpath);
		memset(&e, 0, sizeof(e));
		e.out = "hello from git\npushed-one\n";
		e.rec[0] = p_info;
		e.rec[1] = p_upload;
		e.rec[2] = p_receive;
		e.rec[3] = host_line("git.test");
		e.audit_host = "git.test";
		{
			char target[256];

			snprintf(target, sizeof(target), "/git/%s.git/git-receive-pack", repo);
			e.audit_target = target;
			ok = row_check("git", mode, &s, rec, &e, why[0] ? why : NULL);
		}
		ROW(ok, "clients: git %s failed (the lines above say why)", mode);
		free(rec);
		free(cfg);
		session_free(&s);
		if (!ok) {
			printf("clients: git-second-session %s: not run (the first session failed)\n", mode);
			note_failed("git-second-session", mode);
			CU_FAIL("clients: git-second-session not run: the first session failed");
			continue;
		}
		/* Session 2: another commit, pushed with the saved URL. */
		snprintf(body, sizeof(body),
			 "export GIT_TERMINAL_PROMPT=0 GIT_CONFIG_NOSYSTEM=1\n"
			 "cd %s || exit 10\n"
			 "echo two > two.txt && git add two.txt && git -c user.name=pv -c user.email=pv@passavant.invalid "
			 "-c commit.gpgsign=false commit -q -m two-%s || exit 12\n"
			 "git push -q origin HEAD:main || exit 13\n"
			 "echo pushed-two\n",
			 repo, mode);
		mark = test_file_size(p_record);
		session_run(&s, "git2", mode, body);
		rec = test_file_since(p_record, mark);
		{
			char gitdir[PATH_MAX + 128];
			char *argv[] = {"git", "--git-dir", gitdir, "log", "--format=%s", "main", NULL};

			snprintf(gitdir, sizeof(gitdir), "%s/%s.git", p_git, repo);
			if (test_run_capture(argv, &log, NULL, 60000) != 0) {
				free(log);
				log = NULL;
			}
		}
		why[0] = '\0';
		{
			char want[128];

			snprintf(want, sizeof(want), "two-%s\none-%s\nfixture\n", mode, mode);
			if (!test_has(rec, sent_auth) && !test_has(rec, real_auth))
				snprintf(why, sizeof(why), "the second push sent no Basic password at all");
			else if (test_has(rec, sent_auth))
				snprintf(why, sizeof(why), "the upstream received the sentinel as the Basic password");
			else if (log == NULL || strcmp(log, want) != 0)
				snprintf(why, sizeof(why), "the bare repository's main is '%s', not two-, one-, fixture",
					 log != NULL ? log : "(git log failed)");
		}
		memset(&e, 0, sizeof(e));
		e.out = "pushed-two\n";
		e.rec[0] = p_receive;
		e.rec[1] = real_auth;
		e.audit_host = "git.test";
		{
			char target[256];

			snprintf(target, sizeof(target), "/git/%s.git/git-receive-pack", repo);
			e.audit_target = target;
			ok = row_check("git-second-session", mode, &s, rec, &e, why[0] ? why : NULL);
		}
		ROW(ok, "clients: git-second-session %s failed (the lines above say why)", mode);
		free(log);
		free(rec);
		session_free(&s);
	}
}

/*
 * The fixtures' own guards, on the host (no sandbox): pv-upstream's
 * --git-auth USER:PASSWORD refuses a wrong password or user (else the git
 * row's "the real token arrived" would prove nothing), and --files serves
 * the index but nothing outside its directory.
 */
static void test_fixture_guards(void)
{
	char resolve[128], ca[PATH_MAX + 16], real[96], link[PATH_MAX + 16];
	const char *info = "/git/r-proxy.git/info/refs?service=git-upload-pack";
	const struct {
		const char *what, *user, *path, *want;
		bool raw_path;
	} cases[] = {
		{"wrong password", GIT_USER ":ghp_wrong", info, "401", false},
		{"wrong user", "y:TOKEN", info, "401", false},
		{"no credentials", NULL, info, "401", false},
		{"the real user:password", "TOKEN", info, "200", false},
		{"the simple index", NULL, "/simple/pvdemo/", "200", false},
		{"the packument", NULL, "/pvnpmdemo", "200", false},
		{"a path out of --files with ..", NULL, "/simple/../../hosts", "404", true},
		{"a symbolic link in --files", NULL, "/link", "404", false},
		{"a percent-encoded path", NULL, "/simple/%70vdemo/", "404", true},
	};

	SKIP_IF_NEEDED();
	if (skip_unless_program("fixture guards", "curl", "curl"))
		return;
	snprintf(resolve, sizeof(resolve), "git.test:%u:127.0.0.1", (unsigned)up.port);
	snprintf(ca, sizeof(ca), "%s/ca.pem", p_certs);
	snprintf(real, sizeof(real), "%s:%s", GIT_USER, real_token);
	snprintf(link, sizeof(link), "%s/link", p_files);
	CU_ASSERT_FATAL(symlink(p_hosts, link) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[24], *out = NULL;
		const char *user = cases[i].user;
		int n = 0, rc;

		if (user != NULL && strcmp(user, "TOKEN") == 0)
			user = real;
		else if (user != NULL && strcmp(user, "y:TOKEN") == 0)
			user = "y:ghp_same_length_does_not_matter_here_xx";
		argv[n++] = "curl";
		argv[n++] = "-sS";
		argv[n++] = "--max-time";
		argv[n++] = "20";
		argv[n++] = "--noproxy";
		argv[n++] = "*";
		argv[n++] = "--cacert";
		argv[n++] = ca;
		argv[n++] = "--resolve";
		argv[n++] = resolve;
		argv[n++] = "-o";
		argv[n++] = "/dev/null";
		argv[n++] = "-w";
		argv[n++] = "%{http_code}";
		if (cases[i].raw_path)
			argv[n++] = "--path-as-is";
		if (user != NULL) {
			argv[n++] = "-u";
			argv[n++] = (char *)user;
		}
		argv[n++] = (char *)url("https", "git.test", cases[i].path);
		argv[n] = NULL;
		rc = test_run_capture(argv, &out, NULL, 30000);
		ROW(rc == 0 && out != NULL && strcmp(out, cases[i].want) == 0,
		    "pv-upstream, %s (%s): status %s, want %s (curl exit %d)", cases[i].what, cases[i].path,
		    out != NULL ? out : "?", cases[i].want, rc);
		free(out);
	}
	CU_ASSERT(unlink(link) == 0);
}

/* The first non-loopback IPv4 address of this machine ("" if none). */
static void test_first_host_ipv4(char *out, size_t cap)
{
	struct ifaddrs *ifa = NULL;

	out[0] = '\0';
	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i != NULL && out[0] == '\0'; i = i->ifa_next) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)i->ifa_addr;

		if (a != NULL && a->sin_family == AF_INET && (ntohl(a->sin_addr.s_addr) >> 24) != 127)
			(void)inet_ntop(AF_INET, &a->sin_addr, out, (socklen_t)cap);
	}
	freeifaddrs(ifa);
}

/* ------------------------------------------------------------------ */
/* What interception refuses                                            */
/* ------------------------------------------------------------------ */

/* Whether the audit file has a refusal line of kind KIND for host H. */
static bool audit_denies(const char *path, const char *kind, const char *host)
{
	char k[64], h[256];
	char *log = test_read_file(path, NULL), *line, *save = NULL;
	bool found = false;

	if (log == NULL)
		return false;
	snprintf(k, sizeof(k), "\"kind\":\"%s\"", kind);
	snprintf(h, sizeof(h), "\"host\":\"%s\"", host);
	for (line = strtok_r(log, "\n", &save); line != NULL && !found; line = strtok_r(NULL, "\n", &save))
		found = strstr(line, k) != NULL && strstr(line, h) != NULL &&
			strstr(line, "\"decision\":\"deny\"") != NULL;
	free(log);
	return found;
}

/*
 * ssh to a listed host's port 22, with and without the proxy variables
 * (ssh reads none): the resolver hands out git.test's synthetic address,
 * the connection is redirected, and the proxy refuses it from its first
 * bytes (an SSH banner is neither HTTP nor TLS) with the line of SPEC §5
 * and an audit line. ssh itself fails.
 */
static void test_ssh_refused(void)
{
	SKIP_IF_NEEDED();
	if (skip_unless_program("ssh", "ssh", "openssh-client"))
		return;
	for (size_t m = 0; m < 2; m++) {
		struct session s;

		session_run(&s, "ssh", modes[m],
			    "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
			    "-o ConnectTimeout=10 -p 22 x@git.test true\n"
			    "echo \"ssh=$?\"\n");
		ROW(s.status == 0 && test_has(s.out, "ssh=255"), "ssh %s: status %d, stdout %s", modes[m], s.status,
		    tail_of(s.out));
		ROW(test_has(s.err, "passavant: blocked TCP git.test:22 (neither HTTP nor TLS)"),
		    "ssh %s: no refusal line on stderr: %s", modes[m], tail_of(s.err));
		ROW(audit_denies(s.audit, "connect", "git.test"), "ssh %s: no refusal in the audit %s", modes[m],
		    s.audit);
		session_free(&s);
	}
}

/*
 * A name the policy does not allow: NXDOMAIN from the in-sandbox resolver
 * for getent (glibc), Python's getaddrinfo and curl, one stderr line, an
 * audit line of kind dns; nothing reaches the upstream. And an allowed
 * name does resolve, to a synthetic address of 198.18.0.0/15.
 */
static void test_denied_name(void)
{
	char body[2048];
	struct session s;
	size_t mark;
	char *rec;

	SKIP_IF_NEEDED();
	mark = test_file_size(p_record);
	snprintf(body, sizeof(body),
		    "getent hosts evil.test; echo \"getent=$?\"\n"
		    "python3 -c \"import socket\n"
		    "try:\n"
		    "    socket.getaddrinfo('evil.test', 443)\n"
		    "    print('py=resolved')\n"
		    "except socket.gaierror as e:\n"
		    "    print('py=gaierror', e.errno == socket.EAI_NONAME)\"\n"
		    "curl -sS --max-time 10 https://evil.test/ >/dev/null 2>&1; echo \"curl=$?\"\n"
		    "getent ahostsv4 web.test | head -n 1\n"
		    /* round 15: a real value as a name: refused, written nowhere */
		    "getent hosts \"%s.web.test\"; echo \"realdns=$?\"\n", real_token);
	session_run(&s, "dns", "intercept", body);
	rec = test_file_since(p_record, mark);
	ROW(s.status == 0 && test_has(s.out, "getent=2\n"), "denied name: getent did not say not found: %s",
	    tail_of(s.out));
	ROW(test_has(s.out, "py=gaierror True"), "denied name: python did not get EAI_NONAME: %s", tail_of(s.out));
	ROW(test_has(s.out, "curl=6\n"), "denied name: curl did not fail to resolve (6): %s", tail_of(s.out));
	ROW(test_has(s.out, "198.18.") || test_has(s.out, "198.19."), "allowed name: no synthetic address: %s",
	    tail_of(s.out));
	ROW(test_has(s.err, "passavant: blocked DNS lookup of evil.test (not in allowedDomains)"),
	    "denied name: no stderr line: %s", tail_of(s.err));
	ROW(audit_denies(s.audit, "dns", "evil.test"), "denied name: no dns refusal in the audit %s", s.audit);
	{
		char *audit = test_read_file(s.audit, NULL);

		ROW(test_has(s.out, "realdns=2\n"), "a real value as a name: getent did not say not found: %s",
		    tail_of(s.out));
		ROW(test_has(s.err, "(the name carries a real value of GH_TOKEN)"),
		    "a real value as a name: no stderr line naming the credential: %s", tail_of(s.err));
		ROW(audit != NULL && !test_has(audit, real_token) && !test_has(s.err, real_token),
		    "a real value as a name: written in the audit or on stderr");
		free(audit);
	}
	ROW(rec != NULL && !test_has(rec, "evil.test"), "denied name: the upstream saw evil.test");
	free(rec);
	session_free(&s);
}

/*
 * UDP out of the sandbox, to every kind of destination: a synthetic
 * address, this machine's own non-loopback address (where a socket of the
 * test listens) and a public one. Each sendto fails at once (the
 * sandbox's filter rejects every non-loopback packet that is not TCP), and
 * the test's socket receives nothing.
 */
static void test_udp_nothing_out(void)
{
	char host4[64] = "", body[2048], buf[64];
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct session s;
	int fd;

	SKIP_IF_NEEDED();
	test_first_host_ipv4(host4, sizeof(host4));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	ROW(fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		    getsockname(fd, (struct sockaddr *)&sin, &len) == 0,
	    "udp: cannot bind a UDP socket");
	snprintf(body, sizeof(body),
		 "python3 -c \"import socket, sys\n"
		 "for dst in sys.argv[1:]:\n"
		 "    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
		 "    try:\n"
		 "        u.sendto(b'pv-udp-probe', (dst, %u))\n"
		 "        print('sent', dst)\n"
		 "    except OSError as e:\n"
		 "        print('refused', dst, e.errno)\" web.test %s 192.0.2.1\n",
		 (unsigned)ntohs(sin.sin_port), host4[0] ? host4 : "192.0.2.2");
	session_run(&s, "udp", "intercept", body);
	ROW(s.status == 0 && !test_has(s.out, "sent "), "udp: a datagram was sent: %s", tail_of(s.out));
	ROW(test_has(s.out, "refused web.test 1\n"), "udp: the synthetic address was not refused with EPERM: %s",
	    tail_of(s.out));
	usleep(200 * 1000);
	ROW(fd >= 0 && recv(fd, buf, sizeof(buf), 0) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
	    "udp: the host's socket received a datagram from the sandbox");
	if (fd >= 0)
		close(fd);
	session_free(&s);
}

/*
 * What the proxy makes of an intercepted connection whose destination is
 * a synthetic address, beyond what real clients do (SPEC §5, §7), in one
 * session without the proxy variables, python3's ssl and socket:
 *   - TLS without SNI: decided by the name the address was handed out for
 *     (the leaf names it; the request arrives with that Host);
 *   - TLS whose SNI names another allowed host than the address: the SNI
 *     decides, and a Host naming the address's name inside is 421;
 *   - plain HTTP whose Host names another host than the address: 421;
 *   - the same over the name's IPv6 synthetic address;
 *   - openssl s_client with no -proxy.
 */
static void test_intercept_edges(void)
{
	char body[8192];
	struct session s;
	unsigned port;
	size_t mark;
	char *rec;

	SKIP_IF_NEEDED();
	port = (unsigned)up.port;
	snprintf(body, sizeof(body),
		 "cat >/tmp/edges.py <<'EOF'\n"
		 "import socket, ssl, os, sys\n"
		 "port = %u\n"
		 "ctx = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE'])\n"
		 "def req(sock, host):\n"
		 "    sock.sendall(('GET /hello?e=%%s HTTP/1.1\\r\\nHost: %%s:%%d\\r\\nConnection: close\\r\\n\\r\\n' %% (host, host, port)).encode())\n"
		 "    data = b''\n"
		 "    while True:\n"
		 "        b = sock.recv(4096)\n"
		 "        if not b: break\n"
		 "        data += b\n"
		 "    return data.split(b'\\r\\n', 1)[0].decode()\n"
		 "def addr(name, fam):\n"
		 "    return socket.getaddrinfo(name, port, fam, socket.SOCK_STREAM)[0][4]\n"
		 "# TLS without SNI to web.test's address: the leaf must name web.test\n"
		 "c = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE'])\n"
		 "c.check_hostname = False\n"
		 "t = c.wrap_socket(socket.create_connection(addr('web.test', socket.AF_INET)))\n"
		 "cert = t.getpeercert()\n"
		 "ssl.match_hostname = None\n"
		 "print('nosni-leaf', any(v == 'web.test' for k, v in cert.get('subjectAltName', ())))\n"
		 "print('nosni', req(t, 'web.test'))\n"
		 "# SNI git.test to web.test's address: decided as git.test\n"
		 "t = ctx.wrap_socket(socket.create_connection(addr('web.test', socket.AF_INET)), server_hostname='git.test')\n"
		 "print('sni-other', req(t, 'git.test'))\n"
		 "t = ctx.wrap_socket(socket.create_connection(addr('web.test', socket.AF_INET)), server_hostname='git.test')\n"
		 "print('sni-other-host-mismatch', req(t, 'web.test'))\n"
		 "# plain HTTP to web.test's address with Host git.test\n"
		 "p = socket.create_connection(addr('web.test', socket.AF_INET))\n"
		 "print('plain-mismatch', req(p, 'git.test'))\n"
		 "# a malformed request line on an intercepted plain connection\n"
		 "p = socket.create_connection(addr('web.test', socket.AF_INET))\n"
		 "p.sendall(b'GET /echo?x=\\xff HTTP/1.1\\r\\nHost: web.test\\r\\n\\r\\n')\n"
		 "print('malformed', p.recv(100).split(b'\\r\\n', 1)[0].decode())\n"
		 "# IPv6 synthetic address, TLS with SNI\n"
		 "try:\n"
		 "    a6 = addr('web.test', socket.AF_INET6)\n"
		 "    t = ctx.wrap_socket(socket.create_connection(a6[:2]), server_hostname='web.test')\n"
		 "    print('v6', a6[0].startswith('fd70:6173:7376:1:'), req(t, 'web.test'))\n"
		 "except OSError as e:\n"
		 "    print('v6 error', e)\n"
		 "EOF\n"
		 "python3 /tmp/edges.py\n"
		 "printf 'GET /hello?e=s_client HTTP/1.1\\r\\nHost: web.test:%u\\r\\nConnection: close\\r\\n\\r\\n' | "
		 "openssl s_client -quiet -connect web.test:%u -servername web.test -verify_return_error "
		 "-CAfile \"$SSL_CERT_FILE\" 2>/dev/null | head -n 1\n",
		 port, port, port);
	mark = test_file_size(p_record);
	session_run(&s, "edges", "intercept", body);
	rec = test_file_since(p_record, mark);
	ROW(s.status == 0, "edges: status %d: %s %s", s.status, tail_of(s.out), tail_of(s.err));
	ROW(test_has(s.out, "nosni-leaf True\n") && test_has(s.out, "nosni HTTP/1.1 200"),
	    "edges: TLS without SNI was not decided by the address's name: %s", tail_of(s.out));
	ROW(test_has(s.out, "sni-other HTTP/1.1 200") && test_has(rec, "GET /hello?e=git.test"),
	    "edges: an SNI naming another allowed host was not decided by the SNI: %s", tail_of(s.out));
	ROW(test_has(s.out, "sni-other-host-mismatch HTTP/1.1 421"),
	    "edges: Host naming the address's name inside a tunnel decided by another SNI was not 421: %s",
	    tail_of(s.out));
	{
		char *log = test_read_file(s.audit, NULL);

		ROW(test_has(s.err, ": interception: Host must name the TLS server name") &&
			    test_has(log, "does not name the intercepted target"),
		    "edges: the 421 inside an intercepted tunnel does not name its check: %s", tail_of(s.err));
		free(log);
	}
	ROW(test_has(s.out, "malformed HTTP/1.1 400") && test_has(s.err, "passavant: malformed request") &&
		    !test_has(s.err, "blocked CONNECT :"),
	    "edges: a malformed intercepted request is not reported as such: %s %s", tail_of(s.out),
	    tail_of(s.err));
	ROW(test_has(s.out, "plain-mismatch HTTP/1.1 421"),
	    "edges: plain HTTP with a Host naming another host than the address was not 421: %s", tail_of(s.out));
	ROW(test_has(s.out, "v6 True HTTP/1.1 200"), "edges: the IPv6 synthetic address did not work: %s",
	    tail_of(s.out));
	ROW(test_has(s.out, "HTTP/1.1 200 OK") && test_has(rec, "GET /hello?e=s_client"),
	    "edges: openssl s_client without -proxy did not get through: %s", tail_of(s.out));
	free(rec);
	session_free(&s);
}

/* ------------------------------------------------------------------ */
/* Suite                                                                */
/* ------------------------------------------------------------------ */

static const char *const names[] = {"web.test", "git.test", "pypi.test", "npm.test", "ws.test", NULL};

static int write_policy(void)
{
	char text[4 * PATH_MAX];

	snprintf(text, sizeof(text),
		 "network:\n"
		 "  allowedDomains: [\"web.test\", \"git.test\", \"pypi.test\", \"npm.test\", \"ws.test\", "
		 "\"127.0.0.1\"]\n"
		 "  tlsTerminate:\n"
		 "    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "credentials:\n"
		 "  envVars:\n"
		 "    - name: GH_TOKEN\n"
		 "      mode: mask\n"
		 "      injectHosts: [\"git.test\"]\n"
		 "filesystem:\n"
		 "  allowWrite: [\"%s\"]\n",
		 p_certs, p_work);
	return test_write_file_mode(p_policy, text, 0644);
}

/* The tree, the upstream and the package fixtures. Returns 0 or -1 (the
 * caller undoes what was done). */
static int fixtures_up(void)
{
	struct test_upstream_opts o;
	char buf[PATH_MAX], auth[64], npm_base[128], hosts[512], py[PATH_MAX];

	root = strdup("/var/tmp/pv-clients.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	at(p_home, "home");
	at(p_work, "work");
	at(p_policy, "policy.yaml");
	at(p_hosts, "hosts");
	at(p_certs, "certs");
	at(p_record, "record.txt");
	at(p_files, "files");
	at(p_git, "git");
	at(p_build, "build");
	if (mkdir(p_home, 0755) < 0 || mkdir(p_work, 0755) < 0 || mkdir(p_certs, 0755) < 0 ||
	    mkdir(p_files, 0755) < 0 || mkdir(p_git, 0755) < 0 || mkdir(p_build, 0755) < 0 ||
	    mkdir(at(buf, "scripts"), 0755) < 0 || mkdir(at(buf, "audit"), 0755) < 0)
		return -1;
	if (test_random_alnum(real_token + 4, 36) < 0)
		return -1;
	memcpy(real_token, "ghp_", 4);
	snprintf(hosts, sizeof(hosts), "127.0.0.1 localhost\n::1 localhost\n127.0.0.1");
	for (size_t i = 0; names[i] != NULL; i++)
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), " %s", names[i]);
	snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "\n");
	if (test_write_file_mode(p_hosts, hosts, 0644) < 0 || test_certs_make(p_certs, names) < 0 || write_policy() < 0)
		return -1;
	if (test_git_fixture(p_git, "r-intercept", 0) < 0 || test_git_fixture(p_git, "r-proxy", 0) < 0)
		return -1;
	snprintf(auth, sizeof(auth), "%s:%s", GIT_USER, real_token);
	memset(&o, 0, sizeof(o));
	o.tls_certdir = p_certs;
	o.record_path = p_record;
	o.git_root = p_git;
	o.git_auth = auth;
	o.files_root = p_files;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	snprintf(npm_base, sizeof(npm_base), "https://npm.test:%u/", (unsigned)up.port);
	snprintf(py, sizeof(py), "%s", access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
	return test_pkg_fixtures(py, p_files, npm_base);
}

static int suite_init(void)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	char why[256];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why))) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "clients: namespaces unavailable (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n",
				why);
			return -1;
		}
		fprintf(stderr, "clients: SKIP: user namespaces unavailable: %s\n", why);
		skip = true;
		return 0;
	}
	if (fixtures_up() < 0) {
		fprintf(stderr, "clients: the fixtures could not be set up (the lines above say why)\n");
		(void)test_upstream_stop(&up);
		if (root != NULL)
			test_rmtree(root);
		free(root);
		root = NULL;
		return -1;
	}
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	int st = 0;

	if (failed_rows[0] != '\0')
		fprintf(stderr, "\nclients: failed rows:%s\n", failed_rows);
	if (ready) {
		st = test_upstream_stop(&up);
		test_rmtree(root);
	}
	free(root);
	root = NULL;
	ready = false;
	return st == 0 ? 0 : -1;
}

TEST_REGISTRAR(clients_suite)
{
	CU_pSuite s = test_suite("client_matrix", suite_init, suite_cleanup);

	test_add(s, "fixtures: --git-auth checks the password, --files stays inside", test_fixture_guards);
	test_add(s, "curl", test_curl);
	test_add(s, "git clone + push, and a push from a second session", test_git);
	test_add(s, "pip install from a simple index", test_pip);
	test_add(s, "npm install from a registry", test_npm);
	test_add(s, "python3 urllib", test_python_urllib);
	test_add(s, "python3 requests", test_python_requests);
	test_add(s, "node fetch (no proxy agent)", test_node_fetch);
	test_add(s, "node https.get (no proxy agent)", test_node_https);
	test_add(s, "go net/http", test_go);
	test_add(s, "wget", test_wget);
	test_add(s, "python3 websockets over wss", test_websockets);
	test_add(s, "java HttpClient", test_java);
	test_add(s, "close-delimited answer of an inject host: curl", test_close_curl);
	test_add(s, "close-delimited answer of an inject host: python3 urllib", test_close_python);
	test_add(s, "close-delimited answer of an inject host: node fetch", test_close_node);
	test_add(s, "close-delimited answer of an inject host: go net/http", test_close_go);
	test_add(s, "close-delimited answer of an inject host: java HttpClient", test_close_java);
	test_add(s, "close-delimited answer of an inject host: wget", test_close_wget);
	test_add(s, "ssh to a listed host's port 22: refused with one line", test_ssh_refused);
	test_add(s, "a denied name: NXDOMAIN, one line, an audit line", test_denied_name);
	test_add(s, "UDP: nothing leaves the sandbox", test_udp_nothing_out);
	test_add(s, "interception: no SNI, another SNI, Host mismatches, IPv6, openssl s_client", test_intercept_edges);
}

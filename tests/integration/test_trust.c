/*
 * test_trust.c - SPEC §7 Trust without variables (issue 15 item 3) and
 * the sandbox's resolver files (item 2), end to end: real clients inside
 * `passavant run`, every trust variable unset, fetch from the project's
 * HTTPS upstream (pv-upstream --tls) through the explicit proxy (the
 * proxy variables stay set; interception is tested elsewhere). Each
 * client trusts the session CA only through the files mounted over the
 * system's: the bundle (curl, wget/GnuTLS, python3), the hashed directory
 * (python3 with a capath only), the JDK cacerts (Java's HttpClient, no
 * -Djavax.net.ssl.*), OpenSSL's default file (node --use-openssl-ca). For
 * each, the way around it fails: the same client told to trust only the
 * upstream's own CA is refused, since the proxy terminated TLS with the
 * session CA. And, when `run` intercepts, the resolver files
 * (/etc/resolv.conf, /etc/hosts). Suite "trust".
 *
 * A client whose program is missing is skipped with the reason printed.
 * Without user namespaces every test is skipped, unless
 * PASSAVANT_SANDBOX_MUST_WORK=1.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "tests/support/certs.h"
#include "tests/support/testlib.h"
#include "tests/support/upstream.h"

#define RUN_TIMEOUT_MS 120000
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* Every trust variable of SPEC §7 (and SSL_CERT_DIR) unset, and NO_PROXY
 * cleared: the upstream is on 127.0.0.1, which it exempts. */
#define NO_TRUST_VARS                                                                          \
	"unset SSL_CERT_FILE SSL_CERT_DIR NIX_SSL_CERT_FILE CURL_CA_BUNDLE REQUESTS_CA_BUNDLE "   \
	"PIP_CERT GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS AWS_CA_BUNDLE CARGO_HTTP_CAINFO DENO_CERT " \
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE NPM_CONFIG_CAFILE npm_config_cafile "                \
	"YARN_CA_FILE_PATH GRPC_DEFAULT_SSL_ROOTS_FILE_PATH HTTPLIB2_CA_CERTS\n"                  \
	"export NO_PROXY= no_proxy=\n"

static bool skip;
static bool ready;
static char *root;                 /* /var/tmp/pv-trust.XXXXXX */
static struct test_upstream up;    /* HTTPS, test CA */
static char p_policy[256], p_certs[256], p_scripts[256];
static unsigned nscript;

static int mkfile(const char *path, const char *text)
{
	if (test_write_file(path, text, strlen(text)) < 0)
		return -1;
	return chmod(path, 0644);
}

static int suite_init(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	struct test_upstream_opts o;
	char why[256], text[2 * PATH_MAX];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why))) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "trust: namespaces unavailable (%s)\n", why);
			return -1;
		}
		fprintf(stderr, "trust: SKIP: user namespaces unavailable: %s\n", why);
		skip = true;
		return 0;
	}
	root = strdup("/var/tmp/pv-trust.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(p_policy, sizeof(p_policy), "%s/policy.yaml", root);
	snprintf(p_certs, sizeof(p_certs), "%s/certs", root);
	snprintf(p_scripts, sizeof(p_scripts), "%s/scripts", root);
	if (mkdir(p_certs, 0755) < 0 || mkdir(p_scripts, 0755) < 0 ||
	    test_certs_make(p_certs, names) < 0)
		return -1;
	snprintf(text, sizeof(text),
		 "network:\n"
		 "  allowedDomains: [\"127.0.0.1\"]\n"
		 "  tlsTerminate:\n"
		 "    extraCaCertPaths: [\"%s/ca.pem\"]\n",
		 p_certs);
	if (mkfile(p_policy, text) < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = p_certs;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	if (ready)
		test_upstream_stop(&up);
	if (root != NULL)
		test_rmtree(root);
	free(root);
	root = NULL;
	ready = false;
	return 0;
}

/* Writes text to a fresh file under scripts/ (name: its suffix); its path
 * in buf. */
static char *script_file(char *buf, const char *suffix, const char *text)
{
	snprintf(buf, PATH_MAX, "%s/%u%s", p_scripts, nscript++, suffix);
	return mkfile(buf, text) < 0 ? NULL : buf;
}

/* Runs `passavant run -p POLICY -- sh SCRIPT` (script from fmt, after
 * NO_TRUST_VARS) with a clean HOME and PATH; the exit status. */
static int run_sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run_sh(char **out, char **err, const char *fmt, ...)
{
	char script[16384], path[PATH_MAX], home[PATH_MAX + 8];
	char *argv[16];
	size_t n = 0, used;
	va_list ap;

	used = (size_t)snprintf(script, sizeof(script), "%s", NO_TRUST_VARS);
	va_start(ap, fmt);
	vsnprintf(script + used, sizeof(script) - used, fmt, ap);
	va_end(ap);
	if (script_file(path, ".sh", script) == NULL)
		return -1;
	snprintf(home, sizeof(home), "HOME=%s", root);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = root;
	argv[n++] = home;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = "TMPDIR=/tmp";
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "-p";
	argv[n++] = p_policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = path;
	argv[n] = NULL;
	return test_run_capture(argv, out, err, RUN_TIMEOUT_MS);
}

static bool has(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

/* Is prog on SAFE_PATH? */
static bool have(const char *prog)
{
	char p[PATH_MAX];
	const char *dirs[] = {"/usr/local/bin", "/usr/bin", "/bin", NULL};

	for (size_t i = 0; dirs[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s/%s", dirs[i], prog);
		if (access(p, X_OK) == 0)
			return true;
	}
	return false;
}

/* Entries of dir, "." and ".." aside; -1 when it cannot be read. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)
#define NEED(prog)                                                                     \
	do {                                                                           \
		if (!have(prog)) {                                                     \
			TEST_SKIP("%s is not installed (make deps installs it)", prog); \
			return;                                                        \
		}                                                                      \
	} while (0)

/* ------------------------------------------------------------------ */

/* The bundle is ours (the session CA first), curl trusts it with no
 * variable, and curl told to trust only the upstream's CA (file and
 * directory) is refused: the proxy terminated TLS, so only the session CA
 * vouches. */
static void curl_bundle(bool overlay)
{
	char *out = NULL, *err = NULL, want[64];
	int st, host_entries;

	SKIP_IF_NEEDED();
	NEED("curl");
	host_entries = count_entries("/etc/ssl/certs");
	/* The sandbox shows the hashed directory as one overlayfs mount, or,
	 * where the kernel refuses that (the test hook), as a union in a
	 * tmpfs: the same entries either way. */
	if (!overlay)
		CU_ASSERT_FATAL(setenv("PASSAVANT_SBX_NO_OVERLAY", "1", 1) == 0);
	st = run_sh(&out, &err,
		    "awk '$5 == \"/etc/ssl/certs\" { for (i = 7; $i != \"-\"; i++); print \"fstype=\" $(i+1) }' "
		    "/proc/self/mountinfo\n"
		    "head -n 30 /etc/ssl/certs/ca-certificates.crt | openssl x509 -noout -subject\n"
		    "curl -sS --max-time 20 %s/hello; echo curl=$?\n"
		    "curl -sS --max-time 20 --cacert %s/ca.pem --capath %s %s/hello >/dev/null 2>&1; "
		    "echo pinned=$?\n"
		    "curl -sS --max-time 20 --cacert %s/ca.pem %s/hello; echo capath=$?\n"
		    "touch /etc/ssl/certs/planted.pem 2>/dev/null; echo touch=$?\n"
		    "ls /etc/ssl/certs | wc -l | sed 's/^/entries=/'\n",
		    up.url, p_certs, p_certs, up.url, p_certs, up.url);
	ROW(has(out, "passavant session CA"), "the bundle starts with the session CA");
	ROW(has(out, "hello\ncurl=0"), "curl with no trust variable");
	ROW(has(out, "pinned=60"), "curl trusting only the upstream's CA must fail (60)");
	/* curl's compiled-in CA path is the hashed directory: with another
	 * CA file it still finds the session CA there. */
	ROW(has(out, "hello\ncapath=0"), "curl with the hashed directory (and a CA file without the session CA)");
	/* The union is read-only, holds the host's entries plus one, and
	 * left nothing in the host's directory. */
	ROW(has(out, "touch=1"), "the hashed directory must be read-only");
	snprintf(want, sizeof(want), "entries=%d\n", host_entries + 1);
	ROW(has(out, want), "the hashed directory holds the host's %d entries plus the session CA",
	    host_entries);
	ROW(count_entries("/etc/ssl/certs") == host_entries, "nothing written in the host's directory");
	ROW(has(out, overlay ? "fstype=overlay\n" : "fstype=tmpfs\n"), "the hashed directory is %s",
	    overlay ? "an overlayfs mount" : "a union in a tmpfs (PASSAVANT_SBX_NO_OVERLAY)");
	unsetenv("PASSAVANT_SBX_NO_OVERLAY");
	if (!has(out, "curl=0") || !has(out, "pinned=60") || !has(out, "fstype="))
		show(st, out, err);
	free(out);
	free(err);
}

static void test_curl_bundle(void)
{
	curl_bundle(true);
}

static void test_curl_bundle_union(void)
{
	curl_bundle(false);
}

/* wget (GnuTLS) reads no variable at all: only the mounted bundle (its
 * system trust); with a CA directory of its own it drops that trust and
 * is refused. */
static void test_wget(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	NEED("wget");
	st = run_sh(&out, &err,
		    "wget -q --no-hsts -T 20 -t 1 -O - %s/hello; echo wget=$?\n"
		    "wget -q --no-hsts -T 20 -t 1 --ca-directory=%s --ca-certificate=%s/ca.pem "
		    "-O - %s/hello >/dev/null 2>&1; echo pinned=$?\n",
		    up.url, p_certs, p_certs, up.url);
	ROW(has(out, "hello\nwget=0"), "wget with no trust variable");
	ROW(has(out, "pinned=5"), "wget trusting only the upstream's CA must fail (5)");
	if (!has(out, "wget=0"))
		show(st, out, err);
	free(out);
	free(err);
}

/* python3: urllib with OpenSSL's default paths; then a context with only
 * the hashed directory (capath), which holds the session CA under its
 * subject hash; then only the upstream's CA (refused). */
static void test_python(void)
{
	static const char py[] =
		"import http.client, ssl, sys, urllib.request\n"
		"url, cap, pin = sys.argv[1], sys.argv[2], sys.argv[3]\n"
		"print('urllib=' + urllib.request.urlopen(url, timeout=20).read().decode().strip())\n"
		"host, port = url.split('//')[1].split('/')[0].split(':')\n"
		"def via(ctx):\n"
		"    c = http.client.HTTPSConnection('127.0.0.1', 3128, context=ctx, timeout=20)\n"
		"    c.set_tunnel(host, int(port))\n"
		"    c.request('GET', '/hello')\n"
		"    return c.getresponse().read().decode().strip()\n"
		"print('capath=' + via(ssl.create_default_context(capath=cap)))\n"
		"try:\n"
		"    via(ssl.create_default_context(cafile=pin)); print('pinned=ok')\n"
		"except ssl.SSLError as e:\n"
		"    print('pinned=refused')\n";
	char *out = NULL, *err = NULL, path[PATH_MAX];
	int st;

	SKIP_IF_NEEDED();
	NEED("python3");
	CU_ASSERT_FATAL(script_file(path, ".py", py) != NULL);
	st = run_sh(&out, &err, "/usr/bin/python3 %s %s/hello /etc/ssl/certs %s/ca.pem\n", path,
		    up.url, p_certs);
	ROW(has(out, "urllib=hello"), "python3 urllib with no trust variable");
	ROW(has(out, "capath=hello"), "python3 with the hashed directory only");
	ROW(has(out, "pinned=refused"), "python3 trusting only the upstream's CA must fail");
	if (!has(out, "capath=hello"))
		show(st, out, err);
	free(out);
	free(err);
}

/* node 20 reads its bundled roots, not the system file: without
 * NODE_EXTRA_CA_CERTS it is refused, with --use-openssl-ca (OpenSSL's
 * default file, i.e. the mounted bundle) it trusts the session CA. No
 * proxy support in node 20's https: the script opens the CONNECT tunnel
 * itself. */
static void test_node(void)
{
	static const char js[] =
		"const http = require('http'), tls = require('tls');\n"
		"const [host, port] = process.argv[2].split('//')[1].split('/')[0].split(':');\n"
		"const req = http.request({host: '127.0.0.1', port: 3128, method: 'CONNECT',\n"
		"  path: host + ':' + port});\n"
		"req.on('connect', (res, socket) => {\n"
		"  const s = tls.connect({socket, servername: 'localhost', checkServerIdentity: () => undefined},\n"
		"    () => { s.write('GET /hello HTTP/1.1\\r\\nHost: ' + host + '\\r\\nConnection: close\\r\\n\\r\\n'); });\n"
		"  let body = ''; s.on('data', d => body += d);\n"
		"  s.on('end', () => { console.log('node=' + (body.includes('hello') ? 'ok' : 'bad')); });\n"
		"  s.on('error', e => { console.log('node=refused ' + e.code); });\n"
		"});\n"
		"req.on('error', e => console.log('node=error ' + e.message));\n"
		"req.end();\n";
	char *out = NULL, *err = NULL, path[PATH_MAX];
	int st;

	SKIP_IF_NEEDED();
	NEED("node");
	CU_ASSERT_FATAL(script_file(path, ".js", js) != NULL);
	st = run_sh(&out, &err, "echo a; node --use-openssl-ca %s %s/hello\necho b; node %s %s/hello\n",
		    path, up.url, path, up.url);
	ROW(has(out, "a\nnode=ok"), "node --use-openssl-ca with no trust variable");
	ROW(has(out, "b\nnode=refused"), "node with its bundled roots only must be refused");
	if (!has(out, "a\nnode=ok"))
		show(st, out, err);
	free(out);
	free(err);
}

/* Java: keytool lists the session CA in the default cacerts under the
 * usual password, and HttpClient trusts the proxy with no
 * -Djavax.net.ssl.* (the proxy named by https.proxyHost: Java reads no
 * proxy variable; an empty http.nonProxyHosts, since its default exempts
 * 127.*). */
static void test_java(void)
{
	static const char java[] =
		"import java.net.URI;\n"
		"import java.net.http.*;\n"
		"public class Get {\n"
		"  public static void main(String[] a) throws Exception {\n"
		"    HttpClient c = HttpClient.newBuilder()\n"
		"      .proxy(java.net.ProxySelector.getDefault()).build();\n"
		"    HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[0])).build(),\n"
		"      HttpResponse.BodyHandlers.ofString());\n"
		"    System.out.println(\"java=\" + r.statusCode() + \" \" + r.body().trim());\n"
		"  }\n"
		"}\n";
	char *out = NULL, *err = NULL, path[PATH_MAX], dir[300];
	int st;

	SKIP_IF_NEEDED();
	NEED("java");
	NEED("keytool");
	snprintf(dir, sizeof(dir), "%s/java", p_scripts);
	CU_ASSERT_FATAL(mkdir(dir, 0755) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/Get.java", dir);
	CU_ASSERT_FATAL(mkfile(path, java) == 0);
	st = run_sh(&out, &err,
		    "keytool -list -cacerts -storepass changeit 2>&1 | grep -c passavant-session-ca\n"
		    "java -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
		    "-Dhttp.nonProxyHosts= %s %s/hello 2>&1 | tail -n 3\n",
		    path, up.url);
	ROW(has(out, "1\n"), "keytool lists the session CA in cacerts");
	ROW(has(out, "java=200 hello"), "Java HttpClient with no trust property");
	if (!has(out, "java=200 hello"))
		show(st, out, err);
	free(out);
	free(err);
}

/* sbx_file.public_content: a substituted file with a second name in a
 * writable tree (ostree's /usr is full of hard links) is refused for a
 * masked file, whose other name would show the real value, and accepted
 * for a system file, whose content is public; the command then sees the
 * session's content at the path. */
static void test_public_hard_link(void)
{
	char d[300], real[320], alias[320], src[320], work[320], out[320], cmd[1024], err[512];
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	const char *allow_write[] = {work, NULL};
	struct sbx_file f = {.path = real, .source = src};
	struct sbx_config cfg;
	struct sbx *s = NULL;
	char *text;
	size_t len;

	SKIP_IF_NEEDED();
	snprintf(d, sizeof(d), "%s/hardlink", root);
	snprintf(real, sizeof(real), "%s/real.txt", d);
	snprintf(work, sizeof(work), "%s/work", d);
	snprintf(alias, sizeof(alias), "%s/work/alias.txt", d);
	snprintf(src, sizeof(src), "%s/ours.txt", d);
	snprintf(out, sizeof(out), "%s/work/out.txt", d);
	snprintf(cmd, sizeof(cmd), "cat %s > %s", real, out);
	CU_ASSERT_FATAL(mkdir(d, 0755) == 0 && mkdir(work, 0755) == 0);
	CU_ASSERT_FATAL(mkfile(real, "HOST\n") == 0 && mkfile(src, "OURS\n") == 0);
	CU_ASSERT_FATAL(link(real, alias) == 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.argv = argv;
	cfg.cwd = "/";
	cfg.allow_write = allow_write;
	cfg.files = &f;
	cfg.n_files = 1;
	err[0] = '\0';
	ROW(sbx_start(&cfg, &s, err, sizeof(err)) == -1 && has(err, "hard links"),
	    "a file with a second name in a writable tree must be refused: %s", err);
	f.public_content = true;
	CU_ASSERT_FATAL(sbx_start(&cfg, &s, err, sizeof(err)) == 0);
	ROW(sbx_wait(s) == 0, "the command ran");
	sbx_free(s);
	text = test_read_file(out, &len);
	ROW(text != NULL && strcmp(text, "OURS\n") == 0, "the session's content at the path, got %s",
	    text != NULL ? text : "(none)");
	free(text);
}

/* Does `passavant run` intercept (and so show the resolver files)? The
 * CLI switch arrives with interception itself (`--no-intercept`, on by
 * default); until then plan_session.intercept is never set by run. */
static bool run_intercepts(void)
{
	char *argv[] = {(char *)test_passavant_bin(), "--help", NULL};
	char *out = NULL;
	bool yes;

	(void)test_run_capture(argv, &out, NULL, 10000);
	yes = has(out, "--no-intercept");
	free(out);
	return yes;
}

/* The resolver files: /etc/resolv.conf names the sandbox's resolver
 * only, /etc/hosts holds localhost only (the host's other entries, such
 * as its own name, are gone), and getent still finds localhost. */
static void test_resolver_files(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (!run_intercepts()) {
		TEST_SKIP("passavant run has no interception switch yet (--no-intercept): the "
			  "resolver files are shown only when intercepting");
		return;
	}
	st = run_sh(&out, &err,
		    "echo ns=$(grep -c '^nameserver' /etc/resolv.conf) "
		    "local=$(grep -c '^nameserver 127.0.0.1$' /etc/resolv.conf) "
		    "search=$(grep -c -E '^(search|domain)' /etc/resolv.conf)\n"
		    "echo hosts=$(grep -c . /etc/hosts) other=$(grep -v -c localhost /etc/hosts)\n"
		    "getent hosts localhost | head -n 1\n");
	ROW(has(out, "ns=1 local=1 search=0"), "resolv.conf names 127.0.0.1 only, no search");
	ROW(has(out, "hosts=2 other=0"), "/etc/hosts holds localhost only");
	ROW(has(out, "127.0.0.1") || has(out, "::1"), "getent hosts localhost");
	if (!has(out, "ns=1 local=1"))
		show(st, out, err);
	free(out);
	free(err);
}

TEST_REGISTRAR(trust_register)
{
	CU_pSuite s = test_suite("trust", suite_init, suite_cleanup);

	test_add(s, "curl: the mounted bundle, no variable", test_curl_bundle);
	test_add(s, "curl: the hashed directory as a union in a tmpfs", test_curl_bundle_union);
	test_add(s, "wget (GnuTLS): the mounted bundle", test_wget);
	test_add(s, "python3: default paths and the hashed directory", test_python);
	test_add(s, "node 20: --use-openssl-ca, not its bundled roots", test_node);
	test_add(s, "Java HttpClient: the PKCS12 cacerts", test_java);
	test_add(s, "resolver files: resolv.conf and hosts when intercepting", test_resolver_files);
	test_add(s, "public_content: a system file with a hard link is substituted", test_public_hard_link);
}

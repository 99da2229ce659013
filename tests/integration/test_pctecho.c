/*
 * test_pctecho.c - round 47 (attack47p): the real value of a credential
 * holding a %XX escape, injected raw into a Cookie or a form body of its
 * inject host (allowed there: SPEC §3), is percent-decoded by the server
 * (PHP's $_COOKIE, Python's parse_qs, Rack) and echoed. The decoded real
 * value is one form of the value the re-masker cannot map to a form of
 * the sentinel of the same length, so it must never reach the client:
 * the response is refused (cut), fail closed.
 *
 * Suite "pctecho". One proxy (a PV_PCT whose value holds %4A, injected
 * into 127.0.0.1 in headers and bodies), an HTTP/1.1 TLS upstream written
 * here that decodes cookies and form fields and echoes them, clients curl
 * (HTTP/1.1 and HTTP/2 to the proxy's TLS) and python3. The tree lives
 * under /var/tmp.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define PY "/usr/bin/python3"

static bool ready;
static char *root;
static char p_certs[PATH_MAX], p_up[PATH_MAX];
static struct test_proc *up;
static unsigned upport;
static struct test_px px;
/* the real value, its sentinel, the real value with its %4A decoded */
static char val[64], sent[64], dec[64];
/* a value beginning with two hex digits, one ending in "%4": real
 * values and sentinels */
static char hexv[64], hexs[64], endv[64], ends[64];

/*
 * An HTTP/1.1 TLS server: every cookie value and every form field
 * (query and x-www-form-urlencoded body) percent-decoded as PHP, Python
 * and Rack read them, echoed in the body ("cookie:NAME=VALUE" a line,
 * "form:NAME=VALUE" a line) and, under /hdr, in a field x-echo too.
 * Arguments: cert, key. Prints "listening on 127.0.0.1:PORT".
 */
static const char echo_py[] =
	"import http.server, ssl, sys, urllib.parse\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"    def answer(self, body):\n"
	"        lines = []\n"
	"        for c in (self.headers.get('cookie') or '').split(';'):\n"
	"            k, _, v = c.strip().partition('=')\n"
	"            if k:\n"
	"                lines.append('cookie:%s=%s' % (k, urllib.parse.unquote_plus(v, 'latin-1')))\n"
	"        q = urllib.parse.urlsplit(self.path).query\n"
	"        for src in (q, body.decode('latin-1')):\n"
	"            for k, vs in urllib.parse.parse_qs(src, encoding='latin-1').items():\n"
	"                for v in vs:\n"
	"                    lines.append('form:%s=%s' % (k, v))\n"
	"        out = ('\\n'.join(lines) + '\\n').encode('latin-1')\n"
	"        self.send_response(200)\n"
	"        self.send_header('content-type', 'text/plain')\n"
	"        self.send_header('content-length', str(len(out)))\n"
	"        if self.path.startswith('/hdr'):\n"
	"            self.send_header('x-echo', out.decode('latin-1').replace('\\n', ' '))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(out)\n"
	"    def do_GET(self):\n"
	"        self.answer(b'')\n"
	"    def do_POST(self):\n"
	"        n = int(self.headers.get('content-length') or 0)\n"
	"        self.answer(self.rfile.read(n))\n"
	"srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n"
	"ctx.set_alpn_protocols(['http/1.1'])\n"
	"srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
	"print('listening on 127.0.0.1:%d' % srv.server_address[1], flush=True)\n"
	"srv.serve_forever()\n";

static int fixtures_up(void)
{
	static const char *const names[] = {"127.0.0.1", NULL};
	char policy[2 * PATH_MAX], cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char envv[96], envh[96], enve[96], a[17], b[17], c[17], d[17], e[17], f[17], path[4200];
	char *wrap[] = {"env", envv, envh, enve, NULL};
	char *argv[] = {TEST_ENV_CLEAN, PY, p_up, cert, key, NULL};
	char *env;
	bool got;

	root = strdup("/var/tmp/pv-pctecho.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(p_certs, sizeof(p_certs), "%s/certs", root);
	snprintf(p_up, sizeof(p_up), "%s/pv-pctecho.py", root);
	if (mkdir(p_certs, 0755) < 0 || test_certs_make(p_certs, names) < 0 ||
	    test_write_file_mode(p_up, echo_py, 0755) < 0)
		return -1;
	snprintf(cert, sizeof(cert), "%s/server.pem", p_certs);
	snprintf(key, sizeof(key), "%s/server.key", p_certs);
	if ((up = test_listener_start(argv, "pctecho", &upport, 20000)) == NULL)
		return -1;
	if (test_random_alnum(a, 16) < 0 || test_random_alnum(b, 16) < 0 || test_random_alnum(c, 16) < 0 ||
	    test_random_alnum(d, 16) < 0 || test_random_alnum(e, 16) < 0 || test_random_alnum(f, 16) < 0)
		return -1;
	snprintf(val, sizeof(val), "pq_%s%%4A%s", a, b);
	snprintf(dec, sizeof(dec), "pq_%sJ%s", a, b);
	snprintf(envv, sizeof(envv), "PV_PCT=%s", val);
	snprintf(hexv, sizeof(hexv), "4f%s%s", c, d);
	snprintf(envh, sizeof(envh), "PV_HEX=%s", hexv);
	snprintf(endv, sizeof(endv), "%s%s%%4", e, f);
	snprintf(enve, sizeof(enve), "PV_END=%s", endv);
	snprintf(policy, sizeof(policy),
		 "network:\n"
		 "  allowedDomains: [\"127.0.0.1\"]\n"
		 "  tlsTerminate:\n"
		 "    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "credentials:\n"
		 "  envVars:\n"
		 "    - {name: PV_PCT, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_HEX, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_END, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n",
		 p_certs);
	if (test_px_start(&px, root, wrap, policy) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/env", px.session);
	env = test_read_file(path, NULL);
	got = env != NULL && test_env_export(env, "PV_PCT", sent, sizeof(sent)) &&
	      test_env_export(env, "PV_HEX", hexs, sizeof(hexs)) && test_env_export(env, "PV_END", ends, sizeof(ends));
	free(env);
	explicit_bzero(envv, sizeof(envv));
	explicit_bzero(envh, sizeof(envh));
	explicit_bzero(enve, sizeof(enve));
	if (!got || strlen(hexs) != strlen(hexv) || strlen(ends) != strlen(endv)) {
		fprintf(stderr, "pctecho: no PV_HEX or PV_END sentinel in %s\n", path);
		return -1;
	}
	if (!got || strlen(sent) != strlen(val) || strchr(sent, '%') == NULL) {
		fprintf(stderr, "pctecho: no PV_PCT sentinel with its '%%' in %s\n", path);
		return -1;
	}
	return 0;
}

static int suite_cleanup(void)
{
	int bad = 0;

	if (px.proc != NULL)
		bad |= test_px_stop(&px) != 0;
	test_listener_stop(&up);
	if (root != NULL)
		test_rmtree(root);
	free(root);
	root = NULL;
	explicit_bzero(val, sizeof(val));
	explicit_bzero(dec, sizeof(dec));
	explicit_bzero(hexv, sizeof(hexv));
	explicit_bzero(endv, sizeof(endv));
	ready = false;
	return bad ? -1 : 0;
}

static int suite_init(void)
{
	return test_suite_fixtures(&ready, "pctecho", fixtures_up, suite_cleanup);
}

/* The output with the real value and its decoded form named, for a message. */
static const char *red(char *s)
{
	char *p;

	for (size_t i = 0; s != NULL && i < 2; i++) {
		const char *w = i == 0 ? val : dec;

		while ((p = strstr(s, w)) != NULL)
			memcpy(p, i == 0 ? "<REAL" : "<DEC>", 5);
	}
	return test_nz(s);
}

/* curl through the proxy: http (1.1 or 2), path, a Cookie (or NULL), a
 * form body (or NULL); stdout and stderr in *out. */
static int curl(char *http, const char *path, const char *cookie, const char *form, char **out)
{
	char url[256], ck[256], fm[256];
	char *head[] = {TEST_ENV_CLEAN, "curl", "-sS", "-i", http, "--max-time", "20", "--cacert", px.trust, "-x", px.url};
	char *argv[sizeof(head) / sizeof(head[0]) + 8];
	size_t n = 0;
	char *err = NULL;
	int rc;

	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", upport, path);
	for (; n < sizeof(head) / sizeof(head[0]); n++)
		argv[n] = head[n];
	if (cookie != NULL) {
		snprintf(ck, sizeof(ck), "Cookie: %s", cookie);
		argv[n++] = "-H";
		argv[n++] = ck;
	}
	if (form != NULL) {
		snprintf(fm, sizeof(fm), "%s", form);
		argv[n++] = "--data-binary";
		argv[n++] = fm;
	}
	argv[n++] = url;
	argv[n] = NULL;
	*out = NULL;
	rc = test_run_capture(argv, out, &err, 60000);
	if (err != NULL && *out != NULL) {
		char *both = NULL;

		if (asprintf(&both, "%s\n[stderr] %s", *out, err) >= 0) {
			free(*out);
			*out = both;
		}
	}
	free(err);
	return rc;
}

/*
 * The sentinel in a Cookie and in a form body, over HTTP/1.1 and HTTP/2,
 * the echo in the body and in a field: neither the real value nor its
 * form with the %4A decoded reaches the client. Before round 47 the
 * decoded form came back in clear (the re-masker knew the raw value, its
 * JSON and base64 forms, and its form with '+' as spaces, not this one).
 */
static void test_decoded_echo(void)
{
	static char https[2][16] = {"--http1.1", "--http2"};
	static const char *const paths[] = {"/body", "/hdr"};
	char cookie[128], form[128], *out = NULL;
	bool ok;

	CU_ASSERT_FATAL(ready);
	snprintf(cookie, sizeof(cookie), "a=1; v=%s", sent);
	snprintf(form, sizeof(form), "a=1&v=%s", sent);
	for (int h = 0; h < 2; h++)
		for (int p = 0; p < 2; p++)
			for (int w = 0; w < 2; w++) {
				size_t mark = test_file_size(px.audit);
				char *aud = NULL;

				(void)curl(https[h], paths[p], w == 0 ? cookie : NULL, w == 1 ? form : NULL, &out);
				/* ok before red(), which rewrites out */
				ok = out != NULL && strstr(out, "HTTP/") != NULL && strstr(out, dec) == NULL &&
				     strstr(out, val) == NULL;
				ROW(ok, "%s %s, the sentinel in %s: the real value, %%4A decoded, reached the client:\n%s",
				    https[h], paths[p], w == 0 ? "a Cookie" : "a form body", red(out));
				free(out);
				out = NULL;
				/* the audit says why, naming the credential (its line
				 * may follow the client's end by a moment) */
				for (int t = 0; t < 40; t++) {
					free(aud);
					aud = test_file_since(px.audit, mark);
					if (strstr(aud, "PV_PCT") != NULL && strstr(aud, "XX decoded") != NULL)
						break;
					usleep(50000);
				}
				ROW(strstr(aud, "PV_PCT") != NULL && strstr(aud, "XX decoded") != NULL,
				    "%s %s, the sentinel in %s: no audit line names PV_PCT and the decoded form:\n%.600s",
				    https[h], paths[p], w == 0 ? "a Cookie" : "a form body", aud);
				free(aud);
			}
}

/* A control: the value's %4A as %254A (what a client that encodes the
 * cookie sends): decoded once it is the real value raw, re-masked. */
static void test_encoded_echo(void)
{
	char cookie[160], *out = NULL, *pct, want[80];
	bool ok;

	CU_ASSERT_FATAL(ready);
	pct = strchr(sent, '%');
	CU_ASSERT_FATAL(pct != NULL);
	snprintf(cookie, sizeof(cookie), "v=%.*s%%25%s", (int)(pct - sent), sent, pct + 1);
	snprintf(want, sizeof(want), "cookie:v=%s", sent);
	{
		char h1[] = "--http1.1";

		(void)curl(h1, "/body", cookie, NULL, &out);
	}
	ok = out != NULL && strstr(out, want) != NULL && strstr(out, val) == NULL && strstr(out, dec) == NULL;
	ROW(ok, "the sentinel with its '%%' as %%25 in a Cookie: the echo did not come back re-masked:\n%s", red(out));
	free(out);
}

/*
 * The same readers decode an escape the client begins just before the
 * sentinel, or ends just after it: "%" or "%4" + the sentinel of a value
 * beginning with hex digits (the real value's first one or two bytes
 * complete the escape), the sentinel of a value ending in "%4" + "1".
 * The echo held the real value but for one or two bytes at an end, as
 * it is: no form the re-masker knew. Cookie and form body, the echo in
 * the body and in a field. Before round 47 each row handed the sandbox
 * the rest of the value in clear.
 */
static void test_edge_echo(void)
{
	static const char *const paths[] = {"/body", "/hdr"};
	char h1[] = "--http1.1", sends[3][96], cookie[160], form[160], *out = NULL, *aud = NULL;
	char tail2[64], head2[64];
	bool ok;

	CU_ASSERT_FATAL(ready);
	snprintf(sends[0], sizeof(sends[0]), "%%%s", hexs);
	snprintf(sends[1], sizeof(sends[1]), "%%4%s", hexs);
	snprintf(sends[2], sizeof(sends[2]), "%s1", ends);
	snprintf(tail2, sizeof(tail2), "%s", hexv + 2);
	snprintf(head2, sizeof(head2), "%.*s", (int)strlen(endv) - 2, endv);
	for (int r = 0; r < 3; r++)
		for (int p = 0; p < 2; p++)
			for (int w = 0; w < 2; w++) {
				size_t mark = test_file_size(px.audit);
				const char *cred = r == 2 ? "PV_END" : "PV_HEX";

				snprintf(cookie, sizeof(cookie), "a=1; v=%.95s", sends[r]);
				snprintf(form, sizeof(form), "a=1&v=%.95s", sends[r]);
				(void)curl(h1, paths[p], w == 0 ? cookie : NULL, w == 1 ? form : NULL, &out);
				ok = out != NULL && strstr(out, "HTTP/") != NULL && strstr(out, tail2) == NULL &&
				     strstr(out, head2) == NULL;
				ROW(ok, "%s, %s in %s: the rest of the real value of %s reached the client:\n%.600s",
				    paths[p], r == 0 ? "'%' + sentinel" : r == 1 ? "'%4' + sentinel" : "sentinel + '1'",
				    w == 0 ? "a Cookie" : "a form body", cred, test_nz(out));
				free(out);
				out = NULL;
				for (int t = 0; t < 40; t++) {
					free(aud);
					aud = test_file_since(px.audit, mark);
					if (strstr(aud, cred) != NULL && strstr(aud, "XX decoded") != NULL)
						break;
					usleep(50000);
				}
				ROW(strstr(aud, cred) != NULL && strstr(aud, "XX decoded") != NULL,
				    "row %d %s %d: no audit line names %s and the decoded form:\n%.600s", r, paths[p], w,
				    cred, aud);
				free(aud);
				aud = NULL;
			}
	explicit_bzero(tail2, sizeof(tail2));
	explicit_bzero(head2, sizeof(head2));
}

TEST_REGISTRAR(pctecho_suite)
{
	CU_pSuite s = test_suite("pctecho", suite_init, suite_cleanup);

	test_add(s, "a %XX value's sentinel raw in a Cookie or form body, echoed decoded: no decoded real value comes",
		 test_decoded_echo);
	test_add(s, "a %XX value's sentinel as %25XX in a Cookie, echoed: re-masked", test_encoded_echo);
	test_add(s, "'%' or '%4' before, '1' after a sentinel in a Cookie or form body, echoed decoded: no rest comes",
		 test_edge_echo);
}

/*
 * test_escedge.c - round 49 (attack49p): round 48's edge family
 * (test_escecho.c) with the members value_edges() enumerated past. A
 * client writes an escape just before the sentinel in a body of its
 * inject host (body injection, SPEC §3.2); the server decodes the
 * escape with the real value's first bytes into one character and
 * echoes the rest, which the re-masker cannot map to a sentinel:
 *   - "\U000" + the sentinel of a value beginning with five hex digits,
 *     "\U00" + one beginning "10" and four more (Python's unicode_escape,
 *     C++, TOML, YAML: eight hex digits): five or six bytes taken, where
 *     round 48 enumerated one to four;
 *   - "&" + the sentinel of a value beginning "not" (HTML's legacy named
 *     references decode without a ';': "&not" is U+00AC): three letters
 *     taken, no hex digits;
 *   - "\" + the sentinel of a value over 1 KiB (a long JWT, a PEM key's
 *     line run): JSON's "\n" takes its first byte, and a value over
 *     1 KiB had no edge forms at all;
 *   - "&" + the sentinel of a value beginning "not" and holding a '/',
 *     echoed JSON-escaped as PHP's json_encode() writes it ("\/"): a
 *     core holding the '/' is raw, the echo is not.
 * Each rest must never reach the client (the response cut, fail closed)
 * and the audit names the credential. Every row of test_escape_rest
 * handed the sandbox the rest of the real value in clear before round
 * 49 (value_core(): the longest run of bytes no escaper rewrites in the
 * value less up to 8 bytes at each end, whatever they are, is in the
 * folded set).
 *
 * Suite "escedge". One proxy (PV_U5, PV_U6, PV_NOT, PV_LONG, PV_SL injected
 * into 127.0.0.1 in headers and bodies), an HTTP/1.1 TLS upstream
 * written here that decodes a body (Python's unicode_escape, html or
 * json) and echoes it as text (or as PHP's JSON), client curl (HTTP/1.1 and HTTP/2 to the
 * proxy's TLS). The tree lives under /var/tmp.
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
/* PV_LONG's length: over round 48's 1 KiB bound on edge forms */
#define LONG_LEN 1500

static bool ready;
static char *root;
static char p_certs[PATH_MAX], p_up[PATH_MAX];
static struct test_proc *up;
static unsigned upport;
static struct test_px px;
/* real values and sentinels: "fa3b9" + 35 hex digits, "10" + 38 hex
 * digits, "not" + 37 letters and digits, "n" + LONG_LEN - 1 of them;
 * PV_SL below */
static char u5v[64], u5s[64], u6v[64], u6s[64], notv[64], nots[64], longv[LONG_LEN + 8], longs[LONG_LEN + 8];
/* "not" + 9 letters and digits + "/7" + 27 more (a '/' inside: an echo
 * JSON-escaped as PHP writes it holds "\/") */
static char slv[96], sls[96];

/*
 * An HTTP/1.1 TLS server: a POST's body decoded by its type (text/x-esc:
 * Python's unicode_escape; text/html: html.unescape(); else JSON, each
 * string value a line "json:NAME=VALUE") and echoed as UTF-8 text, a
 * lone surrogate as it is. Arguments: cert, key. Prints "listening on
 * 127.0.0.1:PORT".
 */
static const char echo_py[] =
	"import codecs, html, http.server, json, ssl, sys\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"    def do_POST(self):\n"
	"        n = int(self.headers.get('content-length') or 0)\n"
	"        body = self.rfile.read(n)\n"
	"        ct = self.headers.get('content-type') or ''\n"
	"        try:\n"
	"            if ct.startswith('text/x-esc'):\n"
	"                out = 'esc:' + codecs.decode(body, 'unicode_escape') + '\\n'\n"
	"            elif ct.startswith('application/x-php-json'):\n"
	"                out = 'phpjson:' + json.dumps(html.unescape(body.decode('latin-1'))).replace('/', '\\\\/') + '\\n'\n"
	"            elif ct.startswith('text/html'):\n"
	"                out = 'html:' + html.unescape(body.decode('latin-1')) + '\\n'\n"
	"            else:\n"
	"                doc = json.loads(body)\n"
	"                out = ''.join('json:%s=%s\\n' % (k, v) for k, v in doc.items())\n"
	"            out = out.encode('utf-8', 'surrogatepass')\n"
	"        except ValueError as e:\n"
	"            out = b'not decoded: ' + body + b'\\n'\n"
	"        self.send_response(200)\n"
	"        self.send_header('content-type', 'text/plain; charset=utf-8')\n"
	"        self.send_header('content-length', str(len(out)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(out)\n"
	"srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n"
	"ctx.set_alpn_protocols(['http/1.1'])\n"
	"srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
	"print('listening on 127.0.0.1:%d' % srv.server_address[1], flush=True)\n"
	"srv.serve_forever()\n";

/* n random lower-case hex digits into out (NUL-terminated). */
static int random_hex(char *out, size_t n)
{
	char a[80];

	if (n >= sizeof(a) || test_random_alnum(a, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = "0123456789abcdef"[(unsigned char)a[i] % 16];
	out[n] = '\0';
	explicit_bzero(a, sizeof(a));
	return 0;
}

static int fixtures_up(void)
{
	static const char *const names[] = {"127.0.0.1", NULL};
	char policy[2 * PATH_MAX], cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char env5[96], env6[96], envn[96], envl[LONG_LEN + 32], envs[128], a[40], b[40], c[40], d[40], e[40];
	char path[PATH_MAX + 8];
	char *wrap[] = {"env", env5, env6, envn, envl, envs, NULL};
	char *argv[] = {TEST_ENV_CLEAN, PY, p_up, cert, key, NULL};
	char *env;
	bool got;

	root = strdup("/var/tmp/pv-escedge.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(p_certs, sizeof(p_certs), "%s/certs", root);
	snprintf(p_up, sizeof(p_up), "%s/pv-escedge.py", root);
	if (mkdir(p_certs, 0755) < 0 || test_certs_make(p_certs, names) < 0 ||
	    test_write_file_mode(p_up, echo_py, 0755) < 0)
		return -1;
	snprintf(cert, sizeof(cert), "%s/server.pem", p_certs);
	snprintf(key, sizeof(key), "%s/server.key", p_certs);
	if ((up = test_listener_start(argv, "escedge", &upport, 20000)) == NULL)
		return -1;
	if (random_hex(a, 35) < 0 || random_hex(b, 38) < 0 || test_random_alnum(c, 37) < 0 ||
	    test_random_alnum(d, 9) < 0 || test_random_alnum(e, 27) < 0)
		return -1;
	/* test_random_alnum() gives 64 bytes a call */
	for (size_t at = 1; at < LONG_LEN; at += 50)
		if (test_random_alnum(longv + at, LONG_LEN - at < 50 ? LONG_LEN - at : 50) < 0)
			return -1;
	snprintf(u5v, sizeof(u5v), "fa3b9%s", a);
	snprintf(u6v, sizeof(u6v), "10%s", b);
	snprintf(notv, sizeof(notv), "not%s", c);
	longv[0] = 'n';
	longv[LONG_LEN] = '\0';
	snprintf(env5, sizeof(env5), "PV_U5=%s", u5v);
	snprintf(env6, sizeof(env6), "PV_U6=%s", u6v);
	snprintf(envn, sizeof(envn), "PV_NOT=%s", notv);
	snprintf(envl, sizeof(envl), "PV_LONG=%s", longv);
	snprintf(slv, sizeof(slv), "not%s/7%s", d, e);
	snprintf(envs, sizeof(envs), "PV_SL=%s", slv);
	explicit_bzero(a, sizeof(a));
	explicit_bzero(b, sizeof(b));
	explicit_bzero(c, sizeof(c));
	explicit_bzero(d, sizeof(d));
	explicit_bzero(e, sizeof(e));
	if (test_policy_loopback_mask(policy, sizeof(policy), p_certs, "PV_U5", "header, body",
		 "    - {name: PV_U6, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_NOT, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_LONG, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_SL, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n") < 0)
		return -1;
	if (test_px_start(&px, root, wrap, policy) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/env", px.session);
	env = test_read_file(path, NULL);
	got = env != NULL && test_env_export(env, "PV_U5", u5s, sizeof(u5s)) &&
	      test_env_export(env, "PV_U6", u6s, sizeof(u6s)) && test_env_export(env, "PV_NOT", nots, sizeof(nots)) &&
	      test_env_export(env, "PV_LONG", longs, sizeof(longs)) && test_env_export(env, "PV_SL", sls, sizeof(sls));
	free(env);
	explicit_bzero(env5, sizeof(env5));
	explicit_bzero(env6, sizeof(env6));
	explicit_bzero(envn, sizeof(envn));
	explicit_bzero(envl, sizeof(envl));
	explicit_bzero(envs, sizeof(envs));
	if (!got || strlen(u5s) != strlen(u5v) || strlen(u6s) != strlen(u6v) || strlen(nots) != strlen(notv) ||
	    strlen(longs) != strlen(longv) || strlen(sls) != strlen(slv)) {
		fprintf(stderr, "escedge: no PV_U5, PV_U6, PV_NOT, PV_LONG or PV_SL sentinel of its value's length in %s\n", path);
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
	explicit_bzero(u5v, sizeof(u5v));
	explicit_bzero(u6v, sizeof(u6v));
	explicit_bzero(notv, sizeof(notv));
	explicit_bzero(longv, sizeof(longv));
	explicit_bzero(slv, sizeof(slv));
	ready = false;
	return bad ? -1 : 0;
}

static int suite_init(void)
{
	return test_suite_fixtures(&ready, "escedge", fixtures_up, suite_cleanup);
}

/* curl through the proxy: http (1.1 or 2), the body in a file of type
 * ct; stdout and stderr in *out. */
static int curl(char *http, const char *ct, const char *body, char **out)
{
	char url[256], fm[PATH_MAX + 8], cth[64], bf[PATH_MAX];
	char *argv[] = {TEST_ENV_CLEAN, "curl", "-sS", "-i", http, "--max-time", "20", "--cacert", px.trust, "-x",
			px.url, "-H", cth, "--data-binary", fm, url, NULL};
	char *err = NULL;
	int rc;

	snprintf(url, sizeof(url), "https://127.0.0.1:%u/echo", upport);
	snprintf(bf, sizeof(bf), "%s/body", root);
	snprintf(fm, sizeof(fm), "@%s", bf);
	snprintf(cth, sizeof(cth), "Content-Type: %s", ct);
	*out = NULL;
	if (test_write_file_mode(bf, body, 0644) < 0)
		return -1;
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

/* s with every copy of w (the real value's rest) starred, for a
 * message. */
static const char *red(char *s, const char *w)
{
	char *p;

	while (s != NULL && strlen(w) > 5 && (p = strstr(s, w)) != NULL) {
		memcpy(p, "<REST", 5);
		memset(p + 5, '*', strlen(w) - 5);
	}
	return test_nz(s);
}

/*
 * An escape begun before the sentinel, over HTTP/1.1 and HTTP/2: the
 * reader decodes the real value's first bytes into one character and
 * echoes the rest. The rest must not reach the client, and the audit
 * names the credential. Before round 49 every row handed the sandbox
 * the rest of the real value in clear.
 */
static void test_escape_rest(void)
{
	static char https[2][16] = {"--http1.1", "--http2"};
	char body[LONG_LEN + 64], slrest[128], *out = NULL, *aud = NULL;
	bool ok;

	CU_ASSERT_FATAL(ready);
	/* PV_SL's rest as PHP's json_encode() writes it: '/' as "\/" */
	for (size_t i = 3, o = 0; i <= strlen(slv) && o + 2 < sizeof(slrest); i++) {
		if (slv[i] == '/')
			slrest[o++] = '\\';
		slrest[o++] = slv[i];
	}
	for (int r = 0; r < 5; r++)
		for (int h = 0; h < 2; h++) {
			size_t mark = test_file_size(px.audit);
			const char *cred = r == 0 ? "PV_U5" : r == 1 ? "PV_U6" : r == 2 ? "PV_NOT" : r == 3 ? "PV_LONG" : "PV_SL";
			const char *what = r == 0   ? "'\\U000' + sentinel of fa3b9... (unicode_escape)"
					   : r == 1 ? "'\\U00' + sentinel of 10... (unicode_escape)"
					   : r == 2 ? "'&' + sentinel of not... (HTML)"
					   : r == 3 ? "'\\' + sentinel of a 1500-byte n... (JSON)"
						    : "'&' + sentinel of not.../... (HTML, echoed as JSON with '/' as '\\/')";
			/* the rest the decoder leaves: all but the bytes it took */
			const char *rest = r == 0 ? u5v + 5 : r == 1 ? u6v + 6 : r == 2 ? notv + 3 : r == 3 ? longv + 1 : slrest;

			if (r == 0)
				snprintf(body, sizeof(body), "v=\\U000%s", u5s);
			else if (r == 1)
				snprintf(body, sizeof(body), "v=\\U00%s", u6s);
			else if (r == 2)
				snprintf(body, sizeof(body), "<p>&%s</p>", nots);
			else if (r == 3)
				snprintf(body, sizeof(body), "{\"a\":\"1\",\"v\":\"\\%s\"}", longs);
			else
				snprintf(body, sizeof(body), "<p>&%s</p>", sls);
			(void)curl(https[h],
				   r < 2    ? "text/x-esc"
				   : r == 2 ? "text/html"
				   : r == 3 ? "application/json"
					    : "application/x-php-json",
				   body, &out);
			ok = out != NULL && strstr(out, "HTTP/") != NULL && strstr(out, rest) == NULL;
			ROW(ok, "%s %s in the body: the rest of the real value of %s reached the client:\n%.600s",
			    https[h], what, cred, red(out, rest));
			free(out);
			out = NULL;
			for (int t = 0; t < 40; t++) {
				free(aud);
				aud = test_file_since(px.audit, mark);
				if (strstr(aud, cred) != NULL && strstr(aud, "escape") != NULL)
					break;
				usleep(50000);
			}
			ROW(strstr(aud, cred) != NULL && strstr(aud, "escape") != NULL,
			    "%s %s: no audit line names %s and the escape:\n%.600s", https[h], what, cred, aud);
			free(aud);
			aud = NULL;
		}
	explicit_bzero(body, sizeof(body));
	explicit_bzero(slrest, sizeof(slrest));
}

/* Controls (they fail if the new forms cut what the re-masker swapped
 * whole): each sentinel alone in a JSON body, and after an escape the
 * client ends before it ("\n" + it), comes back re-masked. */
static void test_plain_echo(void)
{
	char h1[] = "--http1.1", body[LONG_LEN + 400], want[LONG_LEN + 32], *out = NULL;
	bool ok;

	CU_ASSERT_FATAL(ready);
	for (int r = 0; r < 2; r++) {
		snprintf(body, sizeof(body), "{\"l\":\"%s%s\",\"n\":\"%s\",\"u\":\"%s\",\"w\":\"%s\"}", r == 0 ? "" : "\\n",
			 longs, nots, u5s, u6s);
		(void)curl(h1, "application/json", body, &out);
		snprintf(want, sizeof(want), "json:l=%s%s", r == 0 ? "" : "\n", longs);
		ok = out != NULL && strstr(out, want) != NULL && strstr(out, nots) != NULL && strstr(out, u5s) != NULL &&
		     strstr(out, u6s) != NULL && strstr(out, longv + 1) == NULL && strstr(out, notv + 3) == NULL &&
		     strstr(out, u5v + 5) == NULL && strstr(out, u6v + 6) == NULL;
		(void)red(out, longv + 1);
		(void)red(out, notv + 3);
		(void)red(out, u5v + 5);
		ROW(ok, "row %d: the sentinels in the body did not come back re-masked:\n%.600s", r, red(out, u6v + 6));
		free(out);
		out = NULL;
	}
}

TEST_REGISTRAR(escedge_suite)
{
	CU_pSuite s = test_suite("escedge", suite_init, suite_cleanup);

	test_add(s, "'\\U000', '\\U00', '&' or '\\' before a sentinel (five, six, three bytes; a 1500-byte value; a '/' echoed as '\\/'), echoed decoded: no rest comes",
		 test_escape_rest);
	test_add(s, "sentinels alone and after an escape in a JSON body, echoed: re-masked", test_plain_echo);
}

/*
 * test_escecho.c - round 48 (attack48p): the family of round 47's edge
 * forms (test_pctecho.c) with the escapes of another decoder. A client
 * writes a backslash escape just before the sentinel in a JSON body of
 * its inject host (body injection, SPEC §3.2): "\" + the sentinel of a
 * value beginning with 'n', 'r', 't', 'b' or 'f' (npm_, rk_live_,
 * tskey-, hex keys) makes the server's JSON reader decode "\n" and keep
 * the rest; "\u" or "\u0" + the sentinel of a value beginning with hex
 * digits takes four or three of them into one character. A value ending
 * in a backslash takes the client's byte after it. The echo (a text
 * reply, an error page, a JSON writer that spells the character as
 * \u000a) holds the real value less those bytes as it is: no form the
 * re-masker knows. It must never reach the client (the response cut,
 * fail closed). An HTML reader's "&#" takes a value's whole leading run
 * of decimal digits, a quoted-printable reader a base64 value's last
 * '=' with the client's two hex digits after it. Before round 48 only
 * the '%' escape's one or two hex digits were such an edge.
 *
 * Suite "escecho". One proxy (PV_NPM, PV_HEX4, PV_BSL, PV_DIG, PV_EQ
 * injected into 127.0.0.1 in headers and bodies), an HTTP/1.1 TLS upstream
 * written here that reads a JSON body (Python's json) and echoes its
 * strings as text (an HTML body through html.unescape(), a text/x-qp
 * one through quopri.decodestring()), client curl
 * (HTTP/1.1 and HTTP/2 to the proxy's TLS). The tree lives under
 * /var/tmp.
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
/* real values and sentinels: "npm_" + 36 letters and digits, "4f2a" +
 * 36 hex digits, 32 letters and digits + a backslash, "73915x" + 34
 * letters and digits, 40 letters and digits + "=" (base64's padding) */
static char npmv[64], npms[64], hexv[64], hexs[64], bslv[64], bsls[64], digv[64], digs[64], eqv[64], eqs[64];

/*
 * An HTTP/1.1 TLS server: a POST's body read as JSON, each string value
 * echoed as text ("json:NAME=VALUE" a line, UTF-8, a lone surrogate as
 * it is); a body that is no JSON echoed as it came. Arguments: cert,
 * key. Prints "listening on 127.0.0.1:PORT".
 */
static const char echo_py[] =
	"import html, http.server, json, quopri, ssl, sys\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"    def do_POST(self):\n"
	"        n = int(self.headers.get('content-length') or 0)\n"
	"        body = self.rfile.read(n)\n"
	"        ct = self.headers.get('content-type') or ''\n"
	"        if ct.startswith('text/x-qp'):\n"
	"            out = b'qp:' + quopri.decodestring(body) + b'\\n'\n"
	"        elif ct.startswith('text/html'):\n"
	"            out = ('html:' + html.unescape(body.decode('latin-1')) + '\\n').encode('utf-8')\n"
	"        else:\n"
	"          try:\n"
	"            doc = json.loads(body)\n"
	"            out = ''.join('json:%s=%s\\n' % (k, v) for k, v in doc.items())\n"
	"            out = out.encode('utf-8', 'surrogatepass')\n"
	"          except ValueError as e:\n"
	"            out = b'not json: ' + body + b'\\n'\n"
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
	char envn[96], envh[96], envb[96], envd[96], enve[96], a[40], b[40], d[40], e[48], h[40], path[4200];
	char *wrap[] = {"env", envn, envh, envb, envd, enve, NULL};
	char *argv[] = {TEST_ENV_CLEAN, PY, p_up, cert, key, NULL};
	char *env;
	bool got;

	root = strdup("/var/tmp/pv-escecho.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(p_certs, sizeof(p_certs), "%s/certs", root);
	snprintf(p_up, sizeof(p_up), "%s/pv-escecho.py", root);
	if (mkdir(p_certs, 0755) < 0 || test_certs_make(p_certs, names) < 0 ||
	    test_write_file_mode(p_up, echo_py, 0755) < 0)
		return -1;
	snprintf(cert, sizeof(cert), "%s/server.pem", p_certs);
	snprintf(key, sizeof(key), "%s/server.key", p_certs);
	if ((up = test_listener_start(argv, "escecho", &upport, 20000)) == NULL)
		return -1;
	if (test_random_alnum(a, 36) < 0 || test_random_alnum(b, 32) < 0 || test_random_alnum(d, 34) < 0 || test_random_alnum(e, 40) < 0 ||
	    random_hex(h, 36) < 0)
		return -1;
	snprintf(npmv, sizeof(npmv), "npm_%s", a);
	snprintf(hexv, sizeof(hexv), "4f2a%s", h);
	snprintf(bslv, sizeof(bslv), "%s\\", b);
	snprintf(envn, sizeof(envn), "PV_NPM=%s", npmv);
	snprintf(envh, sizeof(envh), "PV_HEX4=%s", hexv);
	snprintf(envb, sizeof(envb), "PV_BSL=%s", bslv);
	snprintf(digv, sizeof(digv), "73915x%s", d);
	snprintf(envd, sizeof(envd), "PV_DIG=%s", digv);
	snprintf(eqv, sizeof(eqv), "%s=", e);
	snprintf(enve, sizeof(enve), "PV_EQ=%s", eqv);
	explicit_bzero(a, sizeof(a));
	explicit_bzero(b, sizeof(b));
	explicit_bzero(d, sizeof(d));
	explicit_bzero(e, sizeof(e));
	explicit_bzero(h, sizeof(h));
	if (test_policy_loopback_mask(policy, sizeof(policy), p_certs, "PV_NPM", "header, body",
		 "    - {name: PV_HEX4, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_BSL, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_DIG, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n"
		 "    - {name: PV_EQ, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, body]}\n") < 0)
		return -1;
	if (test_px_start(&px, root, wrap, policy) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/env", px.session);
	env = test_read_file(path, NULL);
	got = env != NULL && test_env_export(env, "PV_NPM", npms, sizeof(npms)) &&
	      test_env_export(env, "PV_HEX4", hexs, sizeof(hexs)) && test_env_export(env, "PV_BSL", bsls, sizeof(bsls)) &&
	      test_env_export(env, "PV_DIG", digs, sizeof(digs)) && test_env_export(env, "PV_EQ", eqs, sizeof(eqs));
	free(env);
	explicit_bzero(envn, sizeof(envn));
	explicit_bzero(envh, sizeof(envh));
	explicit_bzero(envb, sizeof(envb));
	explicit_bzero(envd, sizeof(envd));
	explicit_bzero(enve, sizeof(enve));
	if (!got || strlen(npms) != strlen(npmv) || strlen(hexs) != strlen(hexv) || strlen(bsls) != strlen(bslv) ||
	    strlen(digs) != strlen(digv) || strlen(eqs) != strlen(eqv)) {
		fprintf(stderr, "escecho: no PV_NPM, PV_HEX4, PV_BSL, PV_DIG or PV_EQ sentinel of its value's length in %s\n",
			path);
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
	explicit_bzero(npmv, sizeof(npmv));
	explicit_bzero(hexv, sizeof(hexv));
	explicit_bzero(bslv, sizeof(bslv));
	explicit_bzero(digv, sizeof(digv));
	explicit_bzero(eqv, sizeof(eqv));
	ready = false;
	return bad ? -1 : 0;
}

static int suite_init(void)
{
	return test_suite_fixtures(&ready, "escecho", fixtures_up, suite_cleanup);
}

/* curl through the proxy: http (1.1 or 2), a body of type ct; stdout
 * and stderr in *out. */
static int curl(char *http, const char *ct, const char *json, char **out)
{
	char url[256], fm[256], cth[64];
	char *argv[] = {TEST_ENV_CLEAN, "curl", "-sS", "-i", http, "--max-time", "20", "--cacert", px.trust, "-x",
			px.url, "-H", cth, "--data-binary", fm, url, NULL};
	char *err = NULL;
	int rc;

	snprintf(url, sizeof(url), "https://127.0.0.1:%u/echo", upport);
	snprintf(fm, sizeof(fm), "%s", json);
	snprintf(cth, sizeof(cth), "Content-Type: %s", ct);
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

/* out with every copy of the real value's rest w named, for a message. */
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
 * An escape begun before the sentinel (or ended after it) in a JSON
 * body, over HTTP/1.1 and HTTP/2: the reader decodes the real value's
 * first (last) bytes into one character and echoes the rest. The rest
 * must not reach the client, and the audit names the credential. Before
 * round 48 each row handed the sandbox the rest of the real value in
 * clear.
 */
static void test_escape_echo(void)
{
	static char https[2][16] = {"--http1.1", "--http2"};
	char json[200], rest[64], *out = NULL, *aud = NULL;
	bool ok;

	CU_ASSERT_FATAL(ready);
	for (int r = 0; r < 6; r++)
		for (int h = 0; h < 2; h++) {
			size_t mark = test_file_size(px.audit);
			const char *cred = r == 0   ? "PV_NPM"
					   : r == 3 ? "PV_BSL"
					   : r == 4 ? "PV_DIG"
					   : r == 5 ? "PV_EQ"
						    : "PV_HEX4";
			const char *what = r == 0   ? "'\\' + sentinel of npm_..."
					   : r == 1 ? "'\\u' + sentinel of 4f2a..."
					   : r == 2 ? "'\\u0' + sentinel of 4f2a..."
					   : r == 3 ? "sentinel of ...\\ + 'n'"
					   : r == 4 ? "'&#' + sentinel of 73915x... (HTML)"
						    : "sentinel of ...= + '4f' (quoted-printable)";

			/* the rest the decoder leaves: all but the bytes it took */
			if (r == 0)
				snprintf(rest, sizeof(rest), "%s", npmv + 1);
			else if (r == 1)
				snprintf(rest, sizeof(rest), "%s", hexv + 4);
			else if (r == 2)
				snprintf(rest, sizeof(rest), "%s", hexv + 3);
			else if (r == 3)
				snprintf(rest, sizeof(rest), "%.*s", (int)strlen(bslv) - 1, bslv);
			else if (r == 4)
				snprintf(rest, sizeof(rest), "%s", digv + 5);
			else
				snprintf(rest, sizeof(rest), "%.*s", (int)strlen(eqv) - 1, eqv);
			if (r == 0)
				snprintf(json, sizeof(json), "{\"a\":\"1\",\"v\":\"\\%s\"}", npms);
			else if (r == 1)
				snprintf(json, sizeof(json), "{\"a\":\"1\",\"v\":\"\\u%s\"}", hexs);
			else if (r == 2)
				snprintf(json, sizeof(json), "{\"a\":\"1\",\"v\":\"\\u0%s\"}", hexs);
			else if (r == 3)
				snprintf(json, sizeof(json), "{\"a\":\"1\",\"v\":\"%sn\"}", bsls);
			else if (r == 4)
				snprintf(json, sizeof(json), "<p>&#%s</p>", digs);
			else
				snprintf(json, sizeof(json), "<p>%s4f</p>", eqs);
			(void)curl(https[h], r == 4 ? "text/html" : r == 5 ? "text/x-qp" : "application/json", json,
				   &out);
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
			explicit_bzero(rest, sizeof(rest));
		}
}

/* Controls: the sentinels alone in a JSON body (PV_BSL's backslash
 * escaped as JSON wants it) or an HTML body come back re-masked (the
 * edge forms cut nothing the re-masker swapped whole), and after an
 * escape the client ends before the sentinel ("\n" + it) too. */
static void test_plain_echo(void)
{
	char h1[] = "--http1.1", json[240], want[120], want2[120], *out = NULL;
	bool ok;

	CU_ASSERT_FATAL(ready);
	for (int r = 0; r < 4; r++) {
		if (r == 0)
			snprintf(json, sizeof(json), "{\"n\":\"%s\",\"h\":\"%s\"}", npms, hexs);
		else if (r == 1)
			snprintf(json, sizeof(json), "{\"n\":\"\\n%s\",\"h\":\"x%s\"}", npms, hexs);
		else if (r == 2)
			snprintf(json, sizeof(json), "{\"n\":\"%.*s\\\\\",\"h\":\"%s\"}", (int)strlen(bsls) - 1, bsls,
				 digs);
		else
			snprintf(json, sizeof(json), "<p>%s %s</p>", digs, hexs);
		(void)curl(h1, r == 3 ? "text/html" : "application/json", json, &out);
		if (r < 2)
			snprintf(want, sizeof(want), "json:n=%s%s", r == 0 ? "" : "\n", npms);
		else if (r == 2)
			snprintf(want, sizeof(want), "json:n=%s", bsls);
		else
			snprintf(want, sizeof(want), "html:<p>%s", digs);
		snprintf(want2, sizeof(want2), "%s", r == 2 ? digs : hexs);
		ok = out != NULL && strstr(out, want) != NULL && strstr(out, want2) != NULL &&
		     strstr(out, npmv + 1) == NULL && strstr(out, hexv + 4) == NULL && strstr(out, digv + 5) == NULL;
		(void)red(out, npmv + 1);
		(void)red(out, digv + 5);
		ROW(ok, "row %d: the sentinels in the body did not come back re-masked:\n%.600s", r, red(out, hexv + 4));
		free(out);
		out = NULL;
	}
}

TEST_REGISTRAR(escecho_suite)
{
	CU_pSuite s = test_suite("escecho", suite_init, suite_cleanup);

	test_add(s, "'\\', '\\u' or '\\u0' before, 'n' after a sentinel in a JSON body, echoed decoded: no rest comes",
		 test_escape_echo);
	test_add(s, "sentinels alone and after an escape in a JSON or HTML body, echoed: re-masked", test_plain_echo);
}

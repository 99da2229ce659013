/*
 * test_proxhard.c - issue 13, classes 7, 8 and 9 on the wire (SPEC §4.2,
 * §4.3, §4.4, §5, §6): real values on their way out, re-masking gaps and
 * protocol strictness, through the real `passavant proxy` (and one
 * `passavant run`), with raw sockets, python3 (TLS inside a CONNECT) and
 * pv-upstream --record, which shows what really arrived upstream.
 *
 * Suite: proxhard. One proxy serves the suite; each test checks what the
 * audit file and the proxy's stderr got since it began, and the suite's
 * end sweeps the audit file, stdout, stderr and the session directory
 * for every real value and its encoded forms (SPEC §4.4).
 *
 * Real values are drawn at random per run (none is written in this
 * file): GH_TOKEN "ghp_" + 36 letters and digits, PV_SECRET 40 bytes with
 * a '/' and a '+' (so it has JSON-escaped and percent-encoded forms).
 * 127.0.0.1 is the inject host of both (header, query and body), localhost
 * an allowed host outside injectHosts. A test that needs the upstream to
 * answer with a real value asks pv-upstream's /rawhex/HEX for it: the hex
 * form is no form the proxy knows, so the request itself carries none.
 *
 * allowedMethods [GET, HEAD] holds on two more upstreams, named by port:
 * localhost:PORT of a plain recording pv-upstream and of
 * tests/tools/pv-h2-upstream.py (HTTP/2, records every stream): the
 * method-override tests (SPEC §3.1, §5) send other methods in override
 * fields and _method parameters there.
 */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/net.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/pyscript.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"
#include "tests/support/upstream.h"

#define TOK_LEN 40

static char *dir;                /* certs, records, policy, session */
static char rec_plain[4096];     /* --record of the plain upstream */
static char rec_tls[4096];       /* --record of the TLS upstream */
static char py_path[4200];       /* python3 helper */
static struct test_upstream upp; /* plain HTTP, recording */
static struct test_upstream up;  /* HTTPS (test CA), recording */
static bool ready;
#define NEED_READY() CU_ASSERT_FATAL(ready)

static struct test_proc *raw_up;  /* python3: answers /HEX with those bytes */
static char raw_addr[80];         /* its 127.0.0.1:PORT */

/* Method overrides: hosts with a method rule ([GET, HEAD] on their port). */
static char rec_meth[4096];       /* --record of upm */
static char rec_h2[4096];         /* record of h2up */
static struct test_upstream upm;  /* plain HTTP, recording; localhost:PORT has the rule */
static struct test_proc *h2up;    /* tests/tools/pv-h2-upstream.py (HTTP/2 only) */
static unsigned h2port;           /* its port; localhost:PORT has the rule */

static char tok_real[TOK_LEN + 1];   /* GH_TOKEN */
static char sec_real[TOK_LEN + 1];   /* PV_SECRET, '/' at 17, '+' at 29 */
static char amp_real[TOK_LEN + 1];   /* PV_AMP, '&' at 16, ';' at 33 */
static char tok_b64[128];            /* base64("x:" GH_TOKEN) */
static char tok_pct[3 * TOK_LEN + 1];/* every byte of GH_TOKEN as %XX */

/* The proxy of the suite. */
static struct test_px px;
static char tok_sent[TOK_LEN + 1], sec_sent[TOK_LEN + 1], amp_sent[TOK_LEN + 1];

#define ENV_CLEAN "env", "-u", "SSL_CERT_FILE", "-u", "SSL_CERT_DIR", "-u", "CURL_CA_BUNDLE", \
		  "-u", "REQUESTS_CA_BUNDLE", "-u", "HTTPS_PROXY", "-u", "https_proxy",          \
		  "-u", "HTTP_PROXY", "-u", "http_proxy", "-u", "ALL_PROXY", "-u", "all_proxy",  \
		  "-u", "NO_PROXY", "-u", "no_proxy"

static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

static void random_chars(char *out, size_t n)
{
	unsigned char r[256];

	if (n > sizeof(r) || getrandom(r, n, 0) != (ssize_t)n)
		abort();
	for (size_t i = 0; i < n; i++)
		out[i] = alnum[r[i] % (sizeof(alnum) - 1)];
	out[n] = '\0';
}

static void to_hex(const void *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[s[i] >> 4];
		out[2 * i + 1] = hx[s[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Every form of a real value the sweep looks for: raw, the random part
 * alone (a percent-decoded or cut copy still shows it), base64 of the
 * Basic form, all-%XX. */
static void no_real_value_in(const char *text, size_t len, const char *what)
{
	const char *forms[] = {tok_real, tok_real + 4, sec_real, tok_b64, tok_pct, amp_real};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		ROW(text == NULL || memmem(text, len, forms[i], strlen(forms[i])) == NULL,
		    "a real value (form #%zu) is in %s", i, what);
}

/* Marks of the audit file and the proxy's stderr at a test's start. */
struct marks {
	size_t audit, err, plain, tls, meth, h2;
};

static void mark(struct marks *m)
{
	m->meth = test_file_size(rec_meth);
	m->h2 = test_file_size(rec_h2);
	m->audit = test_file_size(px.audit);
	m->err = test_file_size(test_proc_stderr_path(px.proc));
	m->plain = test_file_size(rec_plain);
	m->tls = test_file_size(rec_tls);
}

/* Audit lines since m (malloc'd); checked for real values. */
static char *audit_since(const struct marks *m)
{
	char *a = test_file_since(px.audit, m->audit), *e = test_file_since(test_proc_stderr_path(px.proc), m->err);

	no_real_value_in(a, strlen(a), "the audit file");
	no_real_value_in(e, strlen(e), "the proxy's stderr");
	free(e);
	return a;
}

/* ------------------------------------------------------------------ */
/* Clients                                                              */
/* ------------------------------------------------------------------ */

/* Whether the proxy closed the last raw_px() connection itself (a
 * refusal closes at once; a request that went on would keep it open). */
static bool raw_eof;

/* Sends len bytes to the proxy on a fresh connection and reads until the
 * proxy closes (3 s at most). malloc'd answer, length in *n. */
static char *raw_px(const void *req, size_t len, size_t *n)
{
	int fd = test_tcp_connect(px.addr, 5000);
	char *r;

	raw_eof = false;
	if (fd < 0)
		return NULL;
	if (test_send_all(fd, req, len) < 0) {
		close(fd);
		return strdup("");
	}
	r = test_recv_until(fd, NULL, 3000, n, &raw_eof);
	close(fd);
	return r;
}

static char *raw_pxs(const char *req)
{
	return raw_px(req, strlen(req), NULL);
}

static int runv(char **out, char **argv)
{
	char *e = NULL;
	int rc = test_run_capture(argv, out, &e, 30000);

	if (rc != 0)
		fprintf(stderr, "\n    %s exited %d: %s\n", argv[0], rc, test_nz(e));
	free(e);
	return rc;
}

/* "PV_SNI=name": the server name tls_px_many() sends instead of the
 * target's ("" for the target's). */
static char tls_sni[128];

/* Each of the n requests sent inside its own terminated TLS tunnel to the
 * TLS upstream, all by one python3 (its start is most of the cost); the
 * answers as latin-1 text, malloc'd, into outs[]. */
static void tls_px_many(const char *const *reqs, size_t n, char **outs)
{
	char target[64], *out = NULL, *argv[64], *p;
	size_t a = 0, i;

	snprintf(target, sizeof(target), "127.0.0.1:%u", (unsigned)up.port);
	{
		char *env[] = {ENV_CLEAN};

		for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
			argv[a++] = env[i];
	}
	if (tls_sni[0] != '\0')
		argv[a++] = tls_sni;
	argv[a++] = (char *)test_python();
	argv[a++] = py_path;
	argv[a++] = "raw";
	argv[a++] = px.addr;
	argv[a++] = target;
	argv[a++] = px.trust;
	for (i = 0; i < n && a < 63; i++) {
		argv[a] = malloc(2 * strlen(reqs[i]) + 1);
		if (argv[a] == NULL)
			abort();
		to_hex(reqs[i], strlen(reqs[i]), argv[a]);
		a++;
	}
	argv[a] = NULL;
	(void)runv(&out, argv);
	for (i = 0; i < n; i++)
		free(argv[a - n + i]);
	p = out;
	for (i = 0; i < n; i++) {
		char *sep = p != NULL ? strstr(p, "\n=====\n") : NULL;

		if (sep != NULL)
			*sep = '\0';
		outs[i] = strdup(p != NULL ? p : "");
		p = sep != NULL ? sep + 7 : NULL;
	}
	/* As raw_px(): whether the proxy closed each tunnel by itself. */
	raw_eof = out != NULL && strstr(out, "TIMEOUT") == NULL;
	free(out);
}

/* One request inside TLS (tls_px_many()). */
static char *tls_px(const char *req, size_t len)
{
	char *out = NULL;

	(void)len;
	tls_px_many(&req, 1, &out);
	return out;
}

static const char py_helper[] =
	"import binascii, os\n"
	"if mode == 'raw':\n"
	"    # each argument from argv[5] on: the hex of what to send in one\n"
	"    # tunnel; the answers are separated by a line '=====' \n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    ctx.check_hostname = 'PV_SNI' not in os.environ\n"
	"    outs = []\n"
	"    for h in sys.argv[5:]:\n"
	"        t = ctx.wrap_socket(tunnel(), server_hostname=os.environ.get('PV_SNI', th))\n"
	"        t.settimeout(3)\n"
	"        t.sendall(binascii.unhexlify(h))\n"
	"        try: outs.append(read_all(t, (ssl.SSLZeroReturnError,)).decode('latin-1'))\n"
	"        except (TimeoutError, socket.timeout): outs.append('TIMEOUT')\n"
	"        t.close()\n"
	"    sys.stdout.write('\\n=====\\n'.join(outs))\n"
	"elif mode == 'redial':\n"
	"    # one terminated tunnel: the request argv[5] (hex), then the process\n"
	"    # argv[6] (the upstream) is stopped, then the request argv[7]\n"
	"    import signal\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th)\n"
	"    t.settimeout(3)\n"
	"    t.sendall(binascii.unhexlify(sys.argv[5]))\n"
	"    first = t.recv(65536)\n"
	"    os.kill(int(sys.argv[6]), signal.SIGTERM)\n"
	"    time.sleep(0.5)\n"
	"    t.sendall(binascii.unhexlify(sys.argv[7]))\n"
	"    try: second = read_all(t, (ssl.SSLZeroReturnError,))\n"
	"    except (TimeoutError, socket.timeout): second = b'TIMEOUT'\n"
	"    sys.stdout.write((first + b'\\n=====\\n' + second).decode('latin-1'))\n"
	"elif mode == 'server':\n"
	"    # answers each request for /HEX with the bytes HEX encodes, then closes\n"
	"    import threading\n"
	"    ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(16)\n"
	"    print('listening on 127.0.0.1:%d' % ls.getsockname()[1], flush=True)\n"
	"    def serve(c):\n"
	"        h = b''\n"
	"        while b'\\r\\n\\r\\n' not in h:\n"
	"            d = c.recv(4096)\n"
	"            if not d: break\n"
	"            h += d\n"
	"        t = h.split(b' ')[1]\n"
	"        if b'/aim' in t:\n"
	"            # an RFC 3229 server (delta encoding): asked A-IM: gzip (or\n"
	"            # /aim/always: unasked) it answers 226 IM Used, the echo of\n"
	"            # the request's Authorization gzip'd; else 200, the echo plain\n"
	"            import gzip, re\n"
	"            head = h.partition(b'\\r\\n\\r\\n')[0]\n"
	"            au = re.search(rb'(?i)\\r\\nauthorization: *([^\\r]*)', head)\n"
	"            e = b'{\"authorization\": \"%s\"}' % (au.group(1) if au else b'')\n"
	"            st = b'200 OK'\n"
	"            if re.search(rb'(?i)\\r\\na-im: *gzip', head) or b'/aim/always' in t:\n"
	"                e = gzip.compress(e); st = b'226 IM Used\\r\\nIM: gzip'\n"
	"            c.sendall(b'HTTP/1.1 %s\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n'\n"
	"                      b'Connection: close\\r\\n\\r\\n' % (st, len(e)) + e)\n"
	"            c.close()\n"
	"            return\n"
	"        if b'/form' in t:\n"
	"            # an ordinary form reader's echo (httpbin /anything): the\n"
	"            # query, the cookies and a form body as parse_qs reads them\n"
	"            import json, re, urllib.parse\n"
	"            head, _, body = h.partition(b'\\r\\n\\r\\n')\n"
	"            m = re.search(rb'(?i)\\r\\ncontent-length: *([0-9]+)', head)\n"
	"            while m and len(body) < int(m.group(1)):\n"
	"                d = c.recv(4096)\n"
	"                if not d: break\n"
	"                body += d\n"
	"            ck = re.search(rb'(?i)\\r\\ncookie: *([^\\r]*)', head)\n"
	"            q = t.split(b'?', 1)[1] if b'?' in t else b''\n"
	"            e = json.dumps({'args': urllib.parse.parse_qs(q.decode('latin-1'), keep_blank_values=True),\n"
	"                            'cookies': urllib.parse.parse_qs(ck.group(1).decode('latin-1').replace('; ', '&').replace(';', '&'), keep_blank_values=True) if ck else {},\n"
	"                            'form': urllib.parse.parse_qs(body.decode('latin-1'), keep_blank_values=True)})\n"
	"            # and each value again as quote() writes it (a Location)\n"
	"            e = (e + ' ' + urllib.parse.quote(e)).encode()\n"
	"            c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n'\n"
	"                      b'Connection: close\\r\\n\\r\\n' % len(e) + e)\n"
	"            c.close()\n"
	"            return\n"
	"        try: c.sendall(binascii.unhexlify(t.rsplit(b'/', 1)[1]))\n"
	"        except Exception: pass\n"
	"        c.close()\n"
	"    while True:\n"
	"        c, _ = ls.accept()\n"
	"        threading.Thread(target=serve, args=(c,), daemon=True).start()\n";

/* "http://127.0.0.1:PORT" of the plain upstream, or localhost. */
static const char *plain_url(bool inject_host)
{
	static char buf[2][96];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "http://%s:%u", inject_host ? "127.0.0.1" : "localhost",
		 (unsigned)upp.port);
	return buf[i];
}

/* Checks a refusal for a real value: 403, the marker, the credential
 * named, no value. */
static void check_leak_refusal(const char *out, const char *cred, const char *what)
{
	ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n"),
	    "%s: not a 403 blocked-by-sandbox-runtime: %.300s", what, test_nz(out));
	ROW(test_has(out, cred), "%s: the reason does not name %s: %.300s", what, cred, test_nz(out));
	ROW(test_has(out, "real value"), "%s: the reason does not say a real value: %.300s", what, test_nz(out));
	ROW(raw_eof, "%s: the proxy did not close the refused connection", what);
	no_real_value_in(out, out ? strlen(out) : 0, "the refusal");
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                             */
/* ------------------------------------------------------------------ */

static int suite_up(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	struct test_upstream_opts o;
	char yaml[4096], envtok[64], envsec[64], envamp[64], path[4200], *env, basic[64];
	char *wrap[] = {"env", envtok, envsec, envamp, NULL};

	dir = test_mkdtemp();
	if (dir == NULL || test_certs_make(dir, names) < 0)
		return -1;
	memcpy(tok_real, "ghp_", 4);
	random_chars(tok_real + 4, TOK_LEN - 4);
	random_chars(sec_real, TOK_LEN);
	sec_real[17] = '/';
	sec_real[29] = '+';
	random_chars(amp_real, TOK_LEN);
	/* Letters but the two digits below: each piece then holds 64
	 * random bits or more whatever is drawn (15 letters and a digit,
	 * 73 bits), as test_split_pieces() needs. Random digits made a
	 * piece of 8 digits or more fall under the 64 bits a piece needs
	 * to be re-masked at all (about one run in 250: seen once). */
	for (size_t k = 0; k < TOK_LEN; k++)
		if (amp_real[k] >= '0' && amp_real[k] <= '9')
			amp_real[k] = (char)('g' + (amp_real[k] - '0'));
	amp_real[16] = '&';
	amp_real[33] = ';';
	amp_real[3] = '7'; /* a digit in each piece: never taken for words */
	amp_real[20] = '4';
	snprintf(basic, sizeof(basic), "x:%s", tok_real);
	test_b64(basic, strlen(basic), tok_b64);
	for (size_t k = 0; k < TOK_LEN; k++)
		snprintf(tok_pct + 3 * k, 4, "%%%02X", (unsigned char)tok_real[k]);
	snprintf(rec_plain, sizeof(rec_plain), "%s/rec-plain.txt", dir);
	snprintf(rec_tls, sizeof(rec_tls), "%s/rec-tls.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = rec_plain;
	if (test_upstream_start(&upp, &o) < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	o.record_path = rec_tls;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	snprintf(py_path, sizeof(py_path), "%s/client.py", dir);
	if (test_write_py(py_path, py_helper, sizeof(py_helper) - 1) < 0)
		return -1;
	{
		char *sargv[] = {(char *)test_python(), py_path, "server", "x:1", "x:1", "-", NULL};

		raw_up = test_proc_start(sargv, "listening on ", raw_addr, sizeof(raw_addr), 10000);
		if (raw_up == NULL)
			return -1;
	}
	snprintf(rec_meth, sizeof(rec_meth), "%s/rec-meth.txt", dir);
	snprintf(rec_h2, sizeof(rec_h2), "%s/rec-h2.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = rec_meth;
	if (test_upstream_start(&upm, &o) < 0)
		return -1;
	{
		char cert[4200], key[4200], script[4200], rest[128];
		char *hargv[] = {ENV_CLEAN, (char *)test_python(), script, "--cert", cert, "--key", key,
				 "--record", rec_h2, NULL};
		const char *colon;

		snprintf(cert, sizeof(cert), "%s/server.pem", dir);
		snprintf(key, sizeof(key), "%s/server.key", dir);
		snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-upstream.py", test_srcdir());
		h2up = test_proc_start(hargv, "listening on ", rest, sizeof(rest), 20000);
		if (h2up == NULL)
			return -1;
		colon = strrchr(rest, ':');
		h2port = colon != NULL ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
		if (h2port == 0) {
			fprintf(stderr, "proxhard: pv-h2-upstream.py said 'listening on %s': no port\n", rest);
			return -1;
		}
	}
	snprintf(yaml, sizeof(yaml),
		 "network:\n"
		 "  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
		 "  allowedMethods: {\"localhost:%u\": [GET, HEAD], \"localhost:%u\": [GET, HEAD],\n"
		 "                   \"127.0.0.1:%u\": [GET, POST], \"127.0.0.1:%u\": [GET, POST]}\n"
		 "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "credentials:\n"
		 "  envVars:\n"
		 "    - {name: GH_TOKEN, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, query, body]}\n"
		 "    - {name: PV_SECRET, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, query, body]}\n"
		 "    - {name: PV_AMP, mode: mask, injectHosts: [\"127.0.0.1\"], injectIn: [header, query, body]}\n"
		 "  allowPlaintextInject: true\n",
		 (unsigned)upm.port, h2port, (unsigned)upm.port, h2port, dir);
	snprintf(envtok, sizeof(envtok), "GH_TOKEN=%s", tok_real);
	snprintf(envsec, sizeof(envsec), "PV_SECRET=%s", sec_real);
	snprintf(envamp, sizeof(envamp), "PV_AMP=%s", amp_real);
	if (test_px_start(&px, dir, wrap, yaml) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/env", px.session);
	env = test_read_file(path, NULL);
	if (!test_env_export(env, "GH_TOKEN", tok_sent, sizeof(tok_sent)) ||
	    !test_env_export(env, "PV_SECRET", sec_sent, sizeof(sec_sent)) ||
	    !test_env_export(env, "PV_AMP", amp_sent, sizeof(amp_sent))) {
		fprintf(stderr, "no sentinels in %s\n", path);
		free(env);
		return -1;
	}
	free(env);
	ready = true;
	return 0;
}

/* The last test: the proxy stopped, everything it wrote is swept. */
static void test_sweep(void)
{
	char *s;
	size_t len = 0;

	NEED_READY();
	ROW(test_proc_stop(px.proc, SIGTERM, 5000) == 0, "the proxy did not stop cleanly");
	s = test_proc_stdout(px.proc);
	no_real_value_in(s, s ? strlen(s) : 0, "the proxy's stdout");
	free(s);
	s = test_proc_stderr(px.proc);
	no_real_value_in(s, s ? strlen(s) : 0, "the proxy's stderr");
	free(s);
	s = test_read_file(px.audit, &len);
	no_real_value_in(s, len, "the audit file");
	free(s);
}

static int suite_down(void)
{
	int bad = 0;

	if (px.proc != NULL)
		bad |= test_px_stop(&px) != 0;
	test_proc_free(raw_up);
	raw_up = NULL;
	test_proc_free(h2up);
	h2up = NULL;
	bad |= test_upstream_stop(&upm) != 0;
	bad |= test_upstream_stop(&upp) != 0;
	bad |= test_upstream_stop(&up) != 0;
	if (dir != NULL)
		test_rmtree(dir);
	free(dir);
	dir = NULL;
	ready = false;
	return bad ? -1 : 0;
}


/* ------------------------------------------------------------------ */
/* Class 9: protocol strictness                                         */
/* ------------------------------------------------------------------ */

/* Request lines that are not HTTP/1.0 or HTTP/1.1, in plain HTTP and
 * inside a terminated tunnel: 400 or 505, nothing upstream. */
static void test_version(void)
{
	static const char *const lines[] = {"", " HTTP/2.0", " HTTP/1.2", " HTTP/0.9", " HTTP/3.0",
					    " HTTP/1.9"};
	struct marks m;

	enum { NV = sizeof(lines) / sizeof(lines[0]) };
	char treq[NV][256], *touts[NV], *rec;
	const char *tr[NV];

	NEED_READY();
	mark(&m);
	for (size_t i = 0; i < NV; i++) {
		char req[512], *out;

		snprintf(req, sizeof(req), "GET %s/hello?v=%zu%s\r\nHost: 127.0.0.1\r\n\r\n", plain_url(false),
			 i, lines[i]);
		out = raw_pxs(req);
		ROW(test_has(out, "HTTP/1.1 400 ") || test_has(out, "HTTP/1.1 505 "), "plain, version '%s': %.200s",
		    lines[i], test_nz(out));
		free(out);
		snprintf(treq[i], sizeof(treq[i]), "GET /hello?v=%zu%s\r\nHost: 127.0.0.1:%u\r\n\r\n", i,
			 lines[i], (unsigned)up.port);
		tr[i] = treq[i];
	}
	tls_px_many(tr, NV, touts);
	for (size_t i = 0; i < NV; i++) {
		ROW(test_has(touts[i], "HTTP/1.1 400 ") || test_has(touts[i], "HTTP/1.1 505 "), "TLS, version '%s': %.200s",
		    lines[i], test_nz(touts[i]));
		free(touts[i]);
	}
	rec = test_file_since(rec_plain, m.plain);
	ROW(*rec == '\0', "the plain upstream got a request: %.200s", rec);
	free(rec);
	rec = test_file_since(rec_tls, m.tls);
	ROW(*rec == '\0', "the TLS upstream got a request: %.200s", rec);
	free(rec);
	free(audit_since(&m));
}

/* Transfer-Encoding other than exactly "chunked", or any on HTTP/1.0:
 * 400, plain and inside TLS; exactly "chunked" still works. */
static void test_transfer_encoding(void)
{
	static const char *const tes[] = {
		"Transfer-Encoding: identity, chunked\r\n", "Transfer-Encoding: chunked, chunked\r\n",
		"Transfer-Encoding: gzip, chunked\r\n",
		"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: ,chunked\r\n", "Transfer-Encoding: chunked\r\n" /* on 1.0 */,
	};
	struct marks m;

	enum { NT = sizeof(tes) / sizeof(tes[0]) };
	char treq[NT][512], *touts[NT], *rec;
	const char *tr[NT];

	NEED_READY();
	mark(&m);
	for (size_t i = 0; i < NT; i++) {
		const char *ver = i == 5 ? "HTTP/1.0" : "HTTP/1.1";
		char req[512], *out;

		snprintf(req, sizeof(req), "POST %s/sink?te=%zu %s\r\nHost: localhost\r\n%s\r\n5\r\nhello\r\n0\r\n\r\n",
			 plain_url(false), i, ver, tes[i]);
		out = raw_pxs(req);
		ROW(test_has(out, "HTTP/1.1 400 "), "plain %s %.40s: %.200s", ver, tes[i], test_nz(out));
		free(out);
		snprintf(treq[i], sizeof(treq[i]),
			 "POST /sink?te=%zu %s\r\nHost: 127.0.0.1:%u\r\n%s\r\n5\r\nhello\r\n0\r\n\r\n", i, ver,
			 (unsigned)up.port, tes[i]);
		tr[i] = treq[i];
	}
	tls_px_many(tr, NT, touts);
	for (size_t i = 0; i < NT; i++) {
		ROW(test_has(touts[i], "HTTP/1.1 400 "), "TLS %.40s: %.200s", tes[i], test_nz(touts[i]));
		free(touts[i]);
	}
	rec = test_file_since(rec_plain, m.plain);
	ROW(*rec == '\0', "the plain upstream got: %.200s", rec);
	free(rec);
	rec = test_file_since(rec_tls, m.tls);
	ROW(*rec == '\0', "the TLS upstream got: %.200s", rec);
	free(rec);
	free(audit_since(&m));
	{
		char req[512], *out;

		snprintf(req, sizeof(req),
			 "POST %s/sink HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
			 "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", plain_url(false));
		out = raw_pxs(req);
		ROW(test_has(out, "HTTP/1.1 200 ") && test_has(out, "\r\n\r\n5\n"), "exactly chunked: %.200s", test_nz(out));
		free(out);
	}
}

/*
 * Chunked request trailers longer than the head buffer's first size
 * (round 9 of the attack): the head's strings stay put, so the audit
 * record quotes the target the request was decided on. Before, trailers
 * grew that buffer and the target pointed into freed memory (ASan: a use
 * after free in the audit; plain build: a record and a 504 quoting what
 * reused the block, another connection's response with a real value in
 * it). Plain and inside TLS; then trailers past the head limit end that
 * request without harm to the next.
 */
static void test_trailers(void)
{
	char trailers[6000], req[8192], treq[8192], big[70000], *out, *tout, *a;
	const char *tr[1];
	struct marks m;
	size_t n = 0;

	NEED_READY();
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(trailers + n, sizeof(trailers) - n, "X-T%d: %0100d\r\n", i, i);
	mark(&m);
	snprintf(req, sizeof(req),
		 "POST %s/sink?tr=plain-trailers HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
		 "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n%s\r\n",
		 plain_url(true), trailers);
	out = raw_pxs(req);
	ROW(test_has(out, "HTTP/1.1 200 "), "plain, 4 KiB of trailers: %.200s", test_nz(out));
	free(out);
	snprintf(treq, sizeof(treq),
		 "POST /sink?tr=tls-trailers HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n"
		 "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n%s\r\n",
		 (unsigned)up.port, trailers);
	tr[0] = treq;
	tls_px_many(tr, 1, &tout);
	ROW(test_has(tout, "HTTP/1.1 200 "), "TLS, 4 KiB of trailers: %.200s", test_nz(tout));
	free(tout);
	/* Past the head limit: that request ends, the proxy serves on. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = (size_t)snprintf(req, sizeof(req),
			     "POST %s/sink?tr=huge HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
			     "Connection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Big: ",
			     plain_url(true));
	{
		char *huge = malloc(n + sizeof(big) + 8);

		CU_ASSERT_FATAL(huge != NULL);
		memcpy(huge, req, n);
		memcpy(huge + n, big, sizeof(big) - 1);
		memcpy(huge + n + sizeof(big) - 1, "\r\n\r\n", 4);
		out = raw_px(huge, n + sizeof(big) + 3, NULL);
		free(huge);
		free(out);
	}
	a = audit_since(&m);
	ROW(test_has(a, "\"target\":\"/sink?tr=plain-trailers\""), "plain: the audit's target is not the request's: %.600s",
	    a);
	ROW(test_has(a, "\"target\":\"/sink?tr=tls-trailers\""), "TLS: the audit's target is not the request's: %.600s",
	    a);
	ROW(test_has(a, "\"target\":\"/sink?tr=huge\""), "past the limit: the audit's target is not the request's: %.600s",
	    a);
	free(a);
	out = raw_pxs("GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
	free(out);
	snprintf(req, sizeof(req), "GET %s/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
		 plain_url(true));
	out = raw_pxs(req);
	ROW(test_has(out, "HTTP/1.1 200 "), "the proxy does not serve after the trailers: %.200s", test_nz(out));
	free(out);
}

/*
 * Round 41 of the attack: a chunked request's trailer section, on a host
 * without a method list. Strict llhttp ends the section at a bare LF
 * ("0\r\n\n") and folds its lines, which the head scanner refuses in a
 * head; with no credential masked the body's framing goes upstream as
 * received, and an upstream that wants CRLF there reads the message's end
 * elsewhere than the proxy, the bytes after it as another request the
 * proxy never decided. Each is a 400 now, its section never upstream, and
 * the request pipelined after it never sent: through this suite's proxy
 * (credentials masked: the body is re-framed) and through one without
 * credentials (the framing relayed as received); a well-formed section
 * still passes (test_trailers()).
 */
static void trailer_section_rows(const char *which)
{
	static const struct {
		const char *section, *marker; /* marker: what the upstream must not get */
	} cases[] = {
		{"0\r\n\n", "0\r\n\n"},
		{"0\r\nX-T41: 1\r\n\n", "X-T41: 1\r\n\n"},
		{"0\r\nX-T41: 1\r\n 2\r\n\r\n", "\r\n 2\r\n"},
		{"0\r\nX-T41: 1\r\n\t2\r\n\r\n", "\r\n\t2\r\n"},
	};
	enum { NT = sizeof(cases) / sizeof(cases[0]) };
	char treq[NT][512], *touts[NT], *rec;
	const char *tr[NT];
	struct marks m;

	mark(&m);
	for (size_t i = 0; i < NT; i++) {
		char req[512], *out;

		snprintf(req, sizeof(req),
			 "POST %s/sink?tr41=%zu HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "5\r\nhello\r\n%sGET %s/sink?tr41=%zu-next HTTP/1.1\r\nHost: localhost\r\n\r\n",
			 plain_url(false), i, cases[i].section, plain_url(false), i);
		out = raw_pxs(req);
		ROW(test_has(out, "HTTP/1.1 400 ") && test_has(out, "trailer section") && !test_has(out, " 200 "),
		    "%s, plain, trailer section %zu: %.300s", which, i, test_nz(out));
		free(out);
		snprintf(treq[i], sizeof(treq[i]),
			 "POST /sink?tr41=t%zu HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "5\r\nhello\r\n%sGET /sink?tr41=t%zu-next HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
			 i, (unsigned)up.port, cases[i].section, i, (unsigned)up.port);
		tr[i] = treq[i];
	}
	tls_px_many(tr, NT, touts);
	for (size_t i = 0; i < NT; i++) {
		ROW(test_has(touts[i], "HTTP/1.1 400 ") && test_has(touts[i], "trailer section") &&
			    !test_has(touts[i], " 200 "),
		    "%s, TLS, trailer section %zu: %.300s", which, i, test_nz(touts[i]));
		free(touts[i]);
	}
	rec = test_file_since(rec_plain, m.plain);
	for (size_t i = 0; i < NT; i++)
		ROW(!test_has(rec, cases[i].marker), "%s: the plain upstream got trailer section %zu: %.300s", which, i,
		    rec);
	ROW(!test_has(rec, "-next"), "%s: the plain upstream got the request after the section: %.300s", which, rec);
	free(rec);
	rec = test_file_since(rec_tls, m.tls);
	for (size_t i = 0; i < NT; i++)
		ROW(!test_has(rec, cases[i].marker), "%s: the TLS upstream got trailer section %zu: %.300s", which, i, rec);
	ROW(!test_has(rec, "-next"), "%s: the TLS upstream got the request after the section: %.300s", which, rec);
	free(rec);
	free(audit_since(&m));
}

/*
 * Review of round 41: the trailer section is bounded like a head, every
 * byte. llhttp reports no white space before a field's value, so the
 * count of field bytes let "X:" and any number of spaces through, upstream as
 * received with the request pipelined after it (on a proxy whose
 * maxHeaderBytes is 4096 here: 400, neither sent).
 */
static void trailer_flood_rows(const char *which)
{
	enum { FLOOD = 20000 };
	size_t cap = FLOOD + 1024, len;
	char *req = malloc(cap), *out, *rec, *tout;
	const char *tr[1];
	struct marks m;

	CU_ASSERT_FATAL(req != NULL);
	mark(&m);
	len = (size_t)snprintf(req, cap,
			       "POST %s/sink?tr41f=1 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "5\r\nhello\r\n0\r\nX-T41F:",
			       plain_url(false));
	memset(req + len, ' ', FLOOD);
	len += FLOOD;
	len += (size_t)snprintf(req + len, cap - len,
				"v\r\n\r\nGET %s/sink?tr41f=1-next HTTP/1.1\r\nHost: localhost\r\n\r\n",
				plain_url(false));
	out = raw_px(req, len, NULL);
	ROW(test_has(out, "HTTP/1.1 400 ") && test_has(out, "larger than maxHeaderBytes") && !test_has(out, " 200 "),
	    "%s, plain, a trailer of 20 KB of spaces: %.300s",
	    which, test_nz(out));
	free(out);
	/* Inside TLS too (the request goes as one argument, in hex). */
	len = (size_t)snprintf(req, cap,
			       "POST /sink?tr41f=t HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "5\r\nhello\r\n0\r\nX-T41F:",
			       (unsigned)up.port);
	memset(req + len, ' ', FLOOD);
	len += FLOOD;
	(void)snprintf(req + len, cap - len,
		       "v\r\n\r\nGET /sink?tr41f=t-next HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", (unsigned)up.port);
	tr[0] = req;
	tls_px_many(tr, 1, &tout);
	ROW(test_has(tout, "HTTP/1.1 400 ") && test_has(tout, "larger than maxHeaderBytes") &&
		    !test_has(tout, " 200 "),
	    "%s, TLS, a trailer of 20 KB of spaces: %.300s",
	    which, test_nz(tout));
	free(tout);
	rec = test_file_since(rec_plain, m.plain);
	ROW(!test_has(rec, "tr41f=1-next"), "%s: the plain upstream got the request after the flood: %.300s", which,
	    rec);
	free(rec);
	rec = test_file_since(rec_tls, m.tls);
	ROW(!test_has(rec, "tr41f=t-next"), "%s: the TLS upstream got the request after the flood: %.300s", which, rec);
	free(rec);
	free(audit_since(&m));
	free(req);
}

static void test_trailer_section(void)
{
	struct test_px bare, masked, small;

	NEED_READY();
	trailer_section_rows("credentials masked");
	/* The same rows through a proxy without credentials: raw_px(),
	 * tls_px_many() and mark() speak to the global px. */
	CU_ASSERT_FATAL(test_px_startf(&bare, dir,
				       "network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
				       "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n",
				       dir) == 0);
	masked = px;
	px = bare;
	trailer_section_rows("no credentials");
	px = masked;
	CU_ASSERT_EQUAL(test_px_stop(&bare), 0);
	CU_ASSERT_FATAL(test_px_startf(&small, dir,
				       "network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
				       "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n"
				       "  limits: {maxHeaderBytes: 4096}\n",
				       dir) == 0);
	px = small;
	trailer_flood_rows("no credentials, maxHeaderBytes 4096");
	px = masked;
	CU_ASSERT_EQUAL(test_px_stop(&small), 0);
}

/* The audit `ms` of a malformed request's 400 is a duration. */
static void test_malformed_ms(void)
{
	struct marks m;
	char *out, *a, *ms;

	NEED_READY();
	mark(&m);
	out = raw_pxs("GET http://localhost/ HTTP/1.1\r\nHo st: x\r\n\r\n");
	ROW(test_has(out, "HTTP/1.1 400 "), "not 400: %.200s", test_nz(out));
	a = audit_since(&m);
	ms = strstr(a, "\"ms\":");
	ROW(ms != NULL && atol(ms + 5) >= 0 && atol(ms + 5) < 60000, "ms of the 400 is not a duration: %s", a);
	free(out);
	free(a);
}

/*
 * Round 36 of the attack: code points a client chose that a reader of
 * the audit acts on, written there raw. A Host quoted by a 421 inside a
 * tunnel and an HTTP/2 :path carried C1 controls (U+009B is CSI and
 * U+009D OSC to a terminal showing the file), NEL, U+2028 (Python's
 * splitlines() cut one record into five unparseable pieces), bidi
 * overrides, a zero-width space and a byte order mark. Each is written
 * \uXXXX now (the same text to a JSON parser); other text stays raw.
 */
static const char *const acting[][2] = {
	{"\xc2\x9b", "\\u009b"},     {"\xc2\x9d", "\\u009d"},     {"\xc2\x85", "\\u0085"},
	{"\xe2\x80\xa8", "\\u2028"}, {"\xe2\x80\xa9", "\\u2029"}, {"\xe2\x80\xae", "\\u202e"},
	{"\xe2\x81\xa6", "\\u2066"}, {"\xe2\x80\x8b", "\\u200b"}, {"\xef\xbb\xbf", "\\ufeff"},
	/* review36a: what shows nothing: a soft hyphen, a Hangul filler, a
	 * variation selector, a tag character (invisible 'A') */
	{"\xc2\xad", "\\u00ad"},     {"\xe3\x85\xa4", "\\u3164"}, {"\xef\xb8\x8f", "\\ufe0f"},
	{"\xf3\xa0\x81\x81", "\\udb40\\udc41"},
};

static void check_acting_escaped(const char *a, const char *what)
{
	for (size_t i = 0; i < sizeof(acting) / sizeof(acting[0]); i++) {
		ROW(!test_has(a, acting[i][0]), "%s: the audit holds U+%s raw: %.600s", what, acting[i][1] + 2,
		    test_nz(a));
		ROW(test_has(a, acting[i][1]), "%s: the audit lacks the escape %s: %.600s", what, acting[i][1],
		    test_nz(a));
	}
	ROW(test_has(a, "caf\xc3\xa9"), "%s: other text (caf\xc3\xa9) was not kept as it is: %.600s", what,
	    test_nz(a));
}

static void test_audit_acting_code_points(void)
{
	char all[128] = "caf\xc3\xa9", req[512], json[1024], script[4200], target[64], *out, *a;
	size_t j = 0;
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i < sizeof(acting) / sizeof(acting[0]); i++)
		strcat(all, acting[i][0]);
	mark(&m);
	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: x%s\r\n\r\n", all);
	out = tls_px(req, strlen(req));
	ROW(test_has(out, "HTTP/1.1 421 "), "h1 Host: not a 421: %.300s", test_nz(out));
	free(out);
	a = audit_since(&m);
	check_acting_escaped(a, "h1 Host quoted by a 421");
	free(a);

	/* The :path's bytes as latin-1 \u00XX in the client's JSON. */
	j = (size_t)snprintf(json, sizeof(json), "{\"method\": \"GET\", \"end\": true, \"path\": \"/hello?x=");
	for (const unsigned char *p = (const unsigned char *)all; *p != '\0' && j + 8 < sizeof(json); p++)
		j += (size_t)snprintf(json + j, sizeof(json) - j, "\\u%04x", *p);
	snprintf(json + j, sizeof(json) - j, "\"}");
	snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	snprintf(target, sizeof(target), "localhost:%u", h2port);
	mark(&m);
	{
		char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
				"--cafile", px.trust, "--timeout", "10", "req", json, NULL};

		out = NULL;
		(void)runv(&out, argv);
	}
	a = audit_since(&m);
	ROW(test_has(a, "\"proto\":\"h2\""), "h2 :path: no HTTP/2 audit line: %.300s (client: %.300s)", test_nz(a),
	    test_nz(out));
	check_acting_escaped(a, "h2 :path");
	free(a);
	free(out);
}

/* ------------------------------------------------------------------ */
/* Class 7: real values going out                                       */
/* ------------------------------------------------------------------ */

/* A real value in the request target, raw and fully percent-encoded, to
 * an inject host and to another host: 403 naming GH_TOKEN, nothing sent,
 * the audit target and stderr without it. */
static void test_real_in_target(void)
{
	const char *forms[] = {tok_real, tok_pct};
	struct marks m;

	NEED_READY();
	for (int h = 0; h < 2; h++) {
		for (size_t f = 0; f < 2; f++) {
			char req[1024], *out, *rec, *a;

			mark(&m);
			snprintf(req, sizeof(req), "GET %s/hello?t=%s HTTP/1.1\r\nHost: x\r\n\r\n",
				 plain_url(h == 0), forms[f]);
			out = raw_pxs(req);
			check_leak_refusal(out, "GH_TOKEN", f == 0 ? "raw in the target" : "%XX in the target");
			rec = test_file_since(rec_plain, m.plain);
			ROW(*rec == '\0', "host %d form %zu: the upstream got a request: %.300s", h, f, rec);
			a = audit_since(&m);
			ROW(test_has(a, "\"status\":403"), "host %d form %zu: no 403 audit line: %s", h, f, a);
			free(rec);
			free(a);
			free(out);
		}
	}
	/* Inside TLS, raw. */
	{
		char req[512], *out, *rec;

		mark(&m);
		snprintf(req, sizeof(req), "GET /hello?t=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", tok_real,
			 (unsigned)up.port);
		out = tls_px(req, strlen(req));
		check_leak_refusal(out, "GH_TOKEN", "TLS target");
		rec = test_file_since(rec_tls, m.tls);
		ROW(*rec == '\0', "TLS: the upstream got a request: %.200s", rec);
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/* The audit line (malloc'd, without its newline) of a that holds needle,
 * or NULL. */
static char *audit_line_with(const char *a, const char *needle)
{
	const char *p = a != NULL ? strstr(a, needle) : NULL, *b, *e;

	if (p == NULL)
		return NULL;
	for (b = p; b > a && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e != NULL ? (size_t)(e - b) : strlen(b));
}

/*
 * Round 37 of the attack (d, the audit): "injected" names a credential
 * whose real value went upstream, but an HTTP/1.1 request was counted
 * when its head was substituted, before the dial: one whose upstream then
 * could not be reached (connection refused, as the resolved-address
 * guard, a timeout or the upstream's TLS would do) was audited with
 * "injected":["GH_TOKEN"] although nothing left (HTTP/2's streams said
 * so since round 14). Plain HTTP to a stopped upstream (the sentinel in a
 * header, in the query), a terminated tunnel whose upstream stopped
 * between two requests; the same requests to a live upstream still name
 * the credential.
 */
static void test_injected_not_sent(void)
{
	struct test_upstream gone, tgone;
	struct test_upstream_opts o;
	unsigned gport;
	struct marks m;

	NEED_READY();
	memset(&o, 0, sizeof(o));
	if (test_upstream_start(&gone, &o) < 0) {
		ROW(false, "cannot start an upstream to stop");
		return;
	}
	gport = gone.port;
	(void)test_upstream_stop(&gone);
	for (int live = 0; live < 2; live++) {
		for (int where = 0; where < 2; where++) {
			char req[512], *out, *a, *line;
			unsigned port = live ? (unsigned)upp.port : gport;
			const char *what = where == 0 ? "a header" : "the query";

			mark(&m);
			if (where == 0)
				snprintf(req, sizeof(req),
					 "GET http://127.0.0.1:%u/hello HTTP/1.1\r\nHost: x\r\nAuthorization: token %s\r\n\r\n",
					 port, tok_sent);
			else
				snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/hello?t=%s HTTP/1.1\r\nHost: x\r\n\r\n",
					 port, tok_sent);
			out = raw_pxs(req);
			a = audit_since(&m);
			if (!live) {
				ROW(test_has(out, "HTTP/1.1 502 "), "plain, sentinel in %s, upstream stopped: not a 502: %.300s",
				    what, test_nz(out));
				line = audit_line_with(a, "\"status\":502");
				ROW(line != NULL && test_has(line, "\"injected\":[]"),
				    "plain, sentinel in %s, upstream stopped: the 502's audit line names an injected "
				    "credential, nothing left: %s",
				    what, test_nz(line != NULL ? line : a));
			} else {
				ROW(test_has(out, "HTTP/1.1 200 "), "plain, sentinel in %s, live upstream: not a 200: %.300s",
				    what, test_nz(out));
				line = audit_line_with(a, "\"status\":200");
				ROW(line != NULL && test_has(line, "\"injected\":[\"GH_TOKEN\"]"),
				    "plain, sentinel in %s, live upstream: the audit line does not name GH_TOKEN: %s", what,
				    test_nz(line != NULL ? line : a));
			}
			free(line);
			free(a);
			free(out);
		}
	}
	/* A terminated tunnel: its first request (the sentinel in a header)
	 * went; the upstream stopped; the second is dialled again and fails. */
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	if (test_upstream_start(&tgone, &o) < 0) {
		ROW(false, "cannot start a TLS upstream to stop");
		return;
	}
	{
		char r1[512], r2[512], h1[1100], h2[1100], target[64], pid[24], *out = NULL, *a, *line;
		char *env[] = {ENV_CLEAN};
		char *argv[48];
		size_t n = 0;

		snprintf(target, sizeof(target), "127.0.0.1:%u", (unsigned)tgone.port);
		snprintf(pid, sizeof(pid), "%ld", (long)test_proc_pid(tgone.proc));
		snprintf(r1, sizeof(r1), "GET /hello HTTP/1.1\r\nHost: %s\r\nAuthorization: token %s\r\n\r\n", target,
			 tok_sent);
		snprintf(r2, sizeof(r2), "GET /hello?t=%s HTTP/1.1\r\nHost: %s\r\n\r\n", tok_sent, target);
		to_hex(r1, strlen(r1), h1);
		to_hex(r2, strlen(r2), h2);
		for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
			argv[n++] = env[i];
		argv[n++] = (char *)test_python();
		argv[n++] = py_path;
		argv[n++] = "redial";
		argv[n++] = px.addr;
		argv[n++] = target;
		argv[n++] = px.trust;
		argv[n++] = h1;
		argv[n++] = pid;
		argv[n++] = h2;
		argv[n] = NULL;
		mark(&m);
		(void)runv(&out, argv);
		ROW(test_has(out, "HTTP/1.1 200 ") && test_has(out, "=====\nHTTP/1.1 502 "),
		    "tunnel: not a 200 then a 502: %.400s", test_nz(out));
		a = audit_since(&m);
		line = audit_line_with(a, "\"status\":200");
		ROW(line != NULL && test_has(line, "\"injected\":[\"GH_TOKEN\"]"),
		    "tunnel: the first request's audit line does not name GH_TOKEN: %s", test_nz(line != NULL ? line : a));
		free(line);
		line = audit_line_with(a, "\"status\":502");
		ROW(line != NULL && test_has(line, "\"injected\":[]"),
		    "tunnel: the 502's audit line (upstream stopped, dialled again) names an injected credential, "
		    "nothing left: %s",
		    test_nz(line != NULL ? line : a));
		free(line);
		free(a);
		free(out);
	}
	(void)test_upstream_stop(&tgone);
}

/* A sentinel fully percent-encoded (every byte %XX, %67hp_ for ghp_) in
 * the target to a host outside injectHosts is found and refused. */
static void test_sentinel_pct_target(void)
{
	char pct[3 * TOK_LEN + 1], req[1024], *out, *rec;
	struct marks m;

	NEED_READY();
	mark(&m);
	for (size_t k = 0; k < TOK_LEN; k++)
		snprintf(pct + 3 * k, 4, "%%%02x", (unsigned char)tok_sent[k]);
	snprintf(req, sizeof(req), "GET %s/hello?t=%s HTTP/1.1\r\nHost: x\r\n\r\n", plain_url(false), pct);
	out = raw_pxs(req);
	ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "GH_TOKEN"), "%%-encoded sentinel: %.300s", test_nz(out));
	ROW(raw_eof, "the refused connection was not closed (the request went on after its 403)");
	rec = test_file_since(rec_plain, m.plain);
	ROW(*rec == '\0', "the upstream got: %.200s", rec);
	free(rec);
	free(out);
	free(audit_since(&m));
}

/* Real values in header fields in the forms the re-masker knows: raw,
 * JSON-escaped (\/), base64 (Authorization: Basic), percent-encoded. */
static void test_real_in_headers(void)
{
	char json[2 * TOK_LEN], pct[3 * TOK_LEN], hdr[4][256];
	struct marks m;
	size_t o = 0;

	NEED_READY();
	for (size_t k = 0; sec_real[k]; k++) {
		if (sec_real[k] == '/')
			json[o++] = '\\';
		json[o++] = sec_real[k];
	}
	json[o] = '\0';
	o = 0;
	for (size_t k = 0; sec_real[k]; k++) {
		if (sec_real[k] == '/' || sec_real[k] == '+')
			o += (size_t)sprintf(pct + o, "%%%02X", (unsigned char)sec_real[k]);
		else
			pct[o++] = sec_real[k];
	}
	pct[o] = '\0';
	snprintf(hdr[0], sizeof(hdr[0]), "X-Token: %s", tok_real);
	snprintf(hdr[1], sizeof(hdr[1]), "X-Json: {\"k\":\"%s\"}", json);
	snprintf(hdr[2], sizeof(hdr[2]), "Authorization: Basic %s", tok_b64);
	snprintf(hdr[3], sizeof(hdr[3]), "Cookie: s=%s", pct);
	for (int i = 0; i < 4; i++) {
		for (int h = 0; h < 2; h++) {
			char req[2048], *out, *rec;

			mark(&m);
			snprintf(req, sizeof(req), "GET %s/hello HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n", plain_url(h == 0),
				 hdr[i]);
			out = raw_pxs(req);
			check_leak_refusal(out, i == 0 || i == 2 ? "GH_TOKEN" : "PV_SECRET", hdr[i]);
			rec = test_file_since(rec_plain, m.plain);
			ROW(*rec == '\0', "%.20s host %d: the upstream got a request", hdr[i], h);
			free(rec);
			free(out);
			free(audit_since(&m));
		}
	}
	/* In a CONNECT's Proxy-Authorization, and in the URL's authority
	 * (the audit gets no host then: lower-cased, it would still show). */
	{
		char req[1024], *out, *a;

		mark(&m);
		snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
			 "Proxy-Authorization: Basic %s\r\n\r\n", (unsigned)up.port, (unsigned)up.port, tok_b64);
		out = raw_pxs(req);
		check_leak_refusal(out, "GH_TOKEN", "CONNECT Proxy-Authorization");
		free(out);
		snprintf(req, sizeof(req), "GET http://%s.localhost:%u/hello HTTP/1.1\r\nHost: x\r\n\r\n", tok_real,
			 (unsigned)upp.port);
		out = raw_pxs(req);
		check_leak_refusal(out, "GH_TOKEN", "authority");
		free(out);
		a = audit_since(&m);
		{
			char low[TOK_LEN + 1];

			for (size_t k = 0; k <= TOK_LEN; k++)
				low[k] = (char)(tok_real[k] >= 'A' && tok_real[k] <= 'Z' ? tok_real[k] + 32 : tok_real[k]);
			ROW(strstr(a, low + 4) == NULL, "the audit holds the value lower-cased: %s", a);
		}
		free(a);
	}
	{
		char req[512], *out, *rec;

		mark(&m);
		snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s\r\n\r\n",
			 (unsigned)up.port, hdr[2]);
		out = tls_px(req, strlen(req));
		check_leak_refusal(out, "GH_TOKEN", "TLS Basic");
		rec = test_file_since(rec_tls, m.tls);
		ROW(*rec == '\0', "TLS: the upstream got a request: %.200s", rec);
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/* Real values in bodies: raw (Content-Length), base64'd, split across
 * 1-byte chunks, percent-encoded in a form, and after 256 KiB that went
 * out already (the upstream connection is cut, the request never
 * completes). Never a real value upstream. */
static void test_real_in_body(void)
{
	char body[4][256], b64sec[128];
	struct marks m;

	NEED_READY();
	test_b64(sec_real, strlen(sec_real), b64sec);
	snprintf(body[0], sizeof(body[0]), "{\"token\":\"%s\"}", tok_real);
	snprintf(body[1], sizeof(body[1]), "data=%s", b64sec);
	snprintf(body[2], sizeof(body[2]), "split %s end", tok_real);
	/* A form field: percent-encoded as an encoder writes it (%2F, %2B). */
	{
		size_t o = (size_t)snprintf(body[3], sizeof(body[3]), "a=1&t=");

		for (size_t k = 0; sec_real[k]; k++) {
			if (sec_real[k] == '/' || sec_real[k] == '+')
				o += (size_t)snprintf(body[3] + o, sizeof(body[3]) - o, "%%%02X",
						      (unsigned char)sec_real[k]);
			else
				body[3][o++] = sec_real[k];
		}
		body[3][o] = '\0';
	}
	for (int i = 0; i < 4; i++) {
		for (int h = 0; h < 2; h++) {
			char req[8192], *out, *rec;
			int n;

			mark(&m);
			if (i == 2) {
				n = snprintf(req, sizeof(req),
					     "POST %s/sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
					     plain_url(h == 0));
				for (const char *p = body[i]; *p; p++)
					n += snprintf(req + n, sizeof(req) - (size_t)n, "1\r\n%c\r\n", *p);
				n += snprintf(req + n, sizeof(req) - (size_t)n, "0\r\n\r\n");
			} else {
				n = snprintf(req, sizeof(req),
					     "POST %s/sink HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
					     plain_url(h == 0), strlen(body[i]), body[i]);
			}
			out = raw_px(req, (size_t)n, NULL);
			check_leak_refusal(out, i == 1 || i == 3 ? "PV_SECRET" : "GH_TOKEN", body[i]);
			rec = test_file_since(rec_plain, m.plain);
			no_real_value_in(rec, strlen(rec), "the upstream's record");
			ROW(*rec == '\0' || test_has(rec, "incomplete"), "body %d host %d: a complete request went up: %.300s",
			    i, h, rec);
			free(rec);
			free(out);
			free(audit_since(&m));
		}
	}
	/* Streamed: 256 KiB first, then the value in a second write. */
	{
		size_t big = 256 * 1024, n;
		char *req = malloc(big + 1024), *out, *rec, head[256];
		int fd;

		CU_ASSERT_FATAL(req != NULL);
		mark(&m);
		n = (size_t)snprintf(head, sizeof(head),
				     "POST %s/sink HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", plain_url(true),
				     big + strlen(tok_real));
		memcpy(req, head, n);
		memset(req + n, 'a', big);
		fd = test_tcp_connect(px.addr, 5000);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT(test_send_all(fd, req, n + big) == 0);
		/* The first part went upstream before the value comes. */
		for (int k = 0; k < 200 && test_file_size(rec_plain) == m.plain; k++)
			usleep(10000);
		CU_ASSERT(test_send_all(fd, tok_real, strlen(tok_real)) == 0);
		out = test_recv_until(fd, NULL, 3000, NULL, &raw_eof);
		close(fd);
		check_leak_refusal(out, "GH_TOKEN", "streamed body");
		for (int k = 0; k < 200; k++) {
			rec = test_file_since(rec_plain, m.plain);
			if (test_has(rec, "incomplete") || test_has(rec, "=== conn")) {
				free(rec);
				break;
			}
			free(rec);
			usleep(10000);
		}
		rec = test_file_since(rec_plain, m.plain);
		no_real_value_in(rec, strlen(rec), "the upstream's record");
		ROW(!test_has(rec, "=== conn") || test_has(rec, "incomplete"), "the streamed request completed upstream: %.200s",
		    rec);
		free(rec);
		free(out);
		free(req);
		free(audit_since(&m));
	}
	/* Inside TLS, in a body. */
	{
		char req[512], *out, *rec;

		mark(&m);
		snprintf(req, sizeof(req),
			 "POST /sink HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: %zu\r\n\r\n%s",
			 (unsigned)up.port, strlen(body[0]), body[0]);
		out = tls_px(req, strlen(req));
		check_leak_refusal(out, "GH_TOKEN", "TLS body");
		rec = test_file_since(rec_tls, m.tls);
		no_real_value_in(rec, strlen(rec), "the TLS upstream's record");
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/* Round 15 of the attack: a real value as the server name of the
 * ClientHello inside a terminated tunnel. The 421 that follows names the
 * credential, never the value, and so do the audit and stderr. */
static void test_real_in_sni(void)
{
	struct marks m;
	char req[128], *out;

	mark(&m);
	snprintf(tls_sni, sizeof(tls_sni), "PV_SNI=%s.example", tok_real);
	snprintf(req, sizeof(req), "GET /echo?t=sni1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", (unsigned)up.port);
	out = tls_px(req, strlen(req));
	tls_sni[0] = '\0';
	ROW(test_has(out, "HTTP/1.1 421 "), "a real value as the server name: no 421: %.300s", test_nz(out));
	ROW(test_has(out, "a real value of GH_TOKEN"), "the 421 does not name the credential: %.300s", test_nz(out));
	no_real_value_in(out, out != NULL ? strlen(out) : 0, "the 421 to a real value as the server name");
	{
		char *a = test_file_since(px.audit, m.audit), *e = test_file_since(test_proc_stderr_path(px.proc), m.err);

		ROW(a != NULL && test_has(a, "a real value of GH_TOKEN"), "no audit line naming the credential: %s",
		    test_nz(a));
		no_real_value_in(a, a != NULL ? strlen(a) : 0, "the audit of a real value as the server name");
		no_real_value_in(e, e != NULL ? strlen(e) : 0, "stderr of a real value as the server name");
		/* nor lowered, as a host name is normalised */
		{
			char low[TOK_LEN + 1];

			for (size_t i = 0; i <= TOK_LEN; i++)
				low[i] = (char)tolower((unsigned char)tok_real[i]);
			ROW(!test_has(a, low) && !test_has(e, low) && !test_has(out, low),
			    "the real value as the server name, lowered, is in the audit, stderr or the answer");
		}
		free(a);
		free(e);
	}
	free(out);
}

static char *curl_h2(const char *path, const char *field);

/* Text holds the real value with any case (a name's case is free). */
static bool has_any_case(const char *text, const char *v)
{
	return text != NULL && strcasestr(text, v) != NULL;
}

/* Round 17: a real value with its case changed, in a name. A resolver or
 * server takes a host name in any case, so the exact search missed it:
 * the server name inside a tunnel, a CONNECT's host, an absolute URL's,
 * a Host field inside a tunnel (whose 421 quoted it), an HTTP/2
 * :authority. Each is refused naming the credential; the value, in any
 * case, is in no answer, audit line or stderr line. */
static void test_real_name_case(void)
{
	char swap[TOK_LEN + 1], req[512], *out, *a, *e;
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i <= TOK_LEN; i++) {
		unsigned char ch = (unsigned char)tok_real[i];

		swap[i] = (char)(islower(ch) ? toupper(ch) : tolower(ch));
	}
	mark(&m);
	for (int v = 0; v < 8; v++) {
		const char *what[] = {"the server name", "a CONNECT host", "an absolute URL's host",
				      "a Host field inside a tunnel", "an HTTP/2 :authority",
				      "an absolute URL inside a tunnel", "a URL's host, the value as it is in a header",
				      "a Host field inside a tunnel, lowered and its first byte %XX"};

		if (v == 0) {
			snprintf(tls_sni, sizeof(tls_sni), "PV_SNI=%s.example", swap);
			snprintf(req, sizeof(req), "GET /echo?t=sni2 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
				 (unsigned)up.port);
			out = tls_px(req, strlen(req));
			tls_sni[0] = '\0';
		} else if (v == 1) {
			snprintf(req, sizeof(req), "CONNECT %s.localhost:%u HTTP/1.1\r\nHost: x\r\n\r\n", swap,
				 (unsigned)up.port);
			out = raw_pxs(req);
		} else if (v == 2) {
			snprintf(req, sizeof(req), "GET http://%s.localhost:%u/ HTTP/1.1\r\nHost: x\r\n\r\n", swap,
				 (unsigned)upp.port);
			out = raw_pxs(req);
		} else if (v == 3) {
			snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\nHost: %s:%u\r\n\r\n", swap, (unsigned)up.port);
			out = tls_px(req, strlen(req));
		} else if (v == 4) {
			snprintf(req, sizeof(req), "Host: %s.localhost:%u", swap, h2port);
			out = curl_h2("/hello", req);
		} else if (v == 5) {
			snprintf(req, sizeof(req), "GET http://%s.localhost/ HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", swap,
				 (unsigned)up.port);
			out = tls_px(req, strlen(req));
		} else if (v == 6) {
			snprintf(req, sizeof(req), "GET http://%s.localhost:%u/ HTTP/1.1\r\nHost: x\r\nX-A: %s\r\n\r\n", swap,
				 (unsigned)upp.port, tok_real);
			out = raw_pxs(req);
		} else {
			/* round 18: %XX and a changed case together */
			char low[TOK_LEN + 1];

			for (size_t i = 0; i <= TOK_LEN; i++)
				low[i] = (char)tolower((unsigned char)tok_real[i]);
			snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\nHost: %%%02X%s:%u\r\n\r\n", (unsigned char)low[0],
				 low + 1, (unsigned)up.port);
			out = tls_px(req, strlen(req));
		}
		ROW(test_has(out, v == 0 ? " 421 " : " 403 ") && test_has(out, "a real value of GH_TOKEN"),
		    "%s with a real value, its case changed: not refused naming the credential: %.300s", what[v],
		    test_nz(out));
		ROW(!has_any_case(out, tok_real), "%s: the answer holds the real value", what[v]);
		free(out);
	}
	a = test_file_since(px.audit, m.audit);
	e = test_file_since(test_proc_stderr_path(px.proc), m.err);
	ROW(!has_any_case(a, tok_real), "the audit holds a real value with its case changed");
	ROW(!has_any_case(e, tok_real), "stderr holds a real value with its case changed");
	ROW(a != NULL && test_has(a, "a real value of GH_TOKEN"), "no audit line names the credential: %.300s", test_nz(a));
	free(a);
	free(e);
}

/* A plain-bytes tunnel (CONNECT, no TLS inside) carrying a real value:
 * refused, the value never arrives. */
static void test_real_in_tunnel(void)
{
	char req[1024], *out, *rec;
	struct marks m;
	int n;

	NEED_READY();
	mark(&m);
	n = snprintf(req, sizeof(req),
		     "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n"
		     "POST /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     (unsigned)upp.port, (unsigned)upp.port, strlen(tok_real), tok_real);
	out = raw_px(req, (size_t)n, NULL);
	ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "GH_TOKEN"), "tunnel: not refused: %.300s", test_nz(out));
	rec = test_file_since(rec_plain, m.plain);
	no_real_value_in(rec, strlen(rec), "the upstream's record (tunnel)");
	free(rec);
	free(out);
	free(audit_since(&m));
}

/* WebSocket, client to server: a masked frame carrying a real value is
 * not relayed (the connection is cut); then a close frame, which the echo
 * server would echo. */
static void test_real_in_websocket(void)
{
	static const unsigned char key[4] = {0x11, 0x22, 0x33, 0x44};
	char req[1024], frame[256], *out, *a;
	struct marks m;
	size_t len, plen = strlen(tok_real);
	int fd;

	NEED_READY();
	/* v 0: two fragments, the value split across them; v 1: the same
	 * with a ping between the fragments. */
	for (int v = 0; v < 2; v++) {
		size_t n = 0;

		mark(&m);
		len = (size_t)snprintf(req, sizeof(req),
				       "GET %s/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
				       "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
				       plain_url(false));
		frame[n++] = 0x01;
		frame[n++] = (char)(0x80 | 10);
		memcpy(frame + n, key, 4);
		n += 4;
		for (size_t i = 0; i < 10; i++)
			frame[n++] = (char)(tok_real[i] ^ key[i % 4]);
		if (v == 1) {
			frame[n++] = (char)0x89;
			frame[n++] = (char)(0x80 | 4);
			memcpy(frame + n, key, 4);
			n += 4;
			for (size_t i = 0; i < 4; i++)
				frame[n++] = (char)("ping"[i] ^ key[i % 4]);
		}
		frame[n++] = (char)0x80;
		frame[n++] = (char)(0x80 | (plen - 10));
		memcpy(frame + n, key, 4);
		n += 4;
		for (size_t i = 10; i < plen; i++)
			frame[n++] = (char)(tok_real[i] ^ key[(i - 10) % 4]);
		frame[n++] = (char)0x88;
		frame[n++] = (char)0x80;
		memcpy(frame + n, key, 4);
		n += 4;
		fd = test_tcp_connect(px.addr, 5000);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT(test_send_all(fd, req, len) == 0);
		out = test_recv_until(fd, "\r\n\r\n", 5000, NULL, NULL);
		ROW(test_has(out, "HTTP/1.1 101 "), "v%d: no 101: %.200s", v, test_nz(out));
		free(out);
		CU_ASSERT(test_send_all(fd, frame, n) == 0);
		{
			size_t got = 0;
			char *rest = test_recv_until(fd, NULL, 3000, &got, NULL);

			/* The echo of a text frame starts with 0x01 (its first
			 * fragment) or 0x81. */
			ROW(rest == NULL || got == 0 ||
				    ((unsigned char)rest[0] != 0x01 && (unsigned char)rest[0] != 0x81),
			    "v%d: the frames with the real value were relayed (%zu bytes came back)", v, got);
			free(rest);
		}
		close(fd);
		a = audit_since(&m);
		ROW(test_has(a, "\"decision\":\"deny\"") && test_has(a, "GH_TOKEN"),
		    "v%d: no audit line refusing it: %s", v, a);
		free(a);
	}
}

/* ------------------------------------------------------------------ */
/* Class 8: re-masking gaps                                             */
/* ------------------------------------------------------------------ */

/* Bytes of a WebSocket frame header + payload into out; returns length. */
static size_t ws_frame(unsigned char *out, unsigned b0, const char *payload, size_t len)
{
	size_t n = 0;

	out[n++] = (unsigned char)b0;
	out[n++] = (unsigned char)len; /* < 126 */
	memcpy(out + n, payload, len);
	return n + len;
}

/* Asks the python server for resp (the upstream's whole answer, then it closes)
 * with extra request fields; the client's bytes (malloc'd, *n). */
static char *via_rawhex(const void *resp, size_t rlen, const char *fields, size_t *n)
{
	char *path = malloc(2 * rlen + 64), *req = malloc(2 * rlen + 1024), *out;
	int len;

	if (path == NULL || req == NULL)
		abort();
	path[0] = '/';
	to_hex(resp, rlen, path + 1);
	len = snprintf(req, 2 * rlen + 1024, "GET http://%s%s HTTP/1.1\r\nHost: x\r\n%s\r\n", raw_addr, path,
		       fields);
	out = raw_px(req, (size_t)len, n);
	free(path);
	free(req);
	return out;
}

/* Concatenated payloads of the frames after the 101 head (client side). */
static char *ws_payloads(const char *out, size_t n)
{
	const char *h = out != NULL ? strstr(out, "\r\n\r\n") : NULL;
	char *r = calloc(1, n + 1);
	size_t p, o = 0;

	if (r == NULL)
		abort();
	if (h == NULL)
		return r;
	p = (size_t)(h + 4 - out);
	while (p + 2 <= n) {
		size_t len = (unsigned char)out[p + 1] & 0x7f;

		if (p + 2 + len > n)
			break;
		if (((unsigned char)out[p] & 0x0f) < 8) {
			memcpy(r + o, out + p + 2, len);
			o += len;
		}
		p += 2 + len;
	}
	return r;
}

/* A real value split across two WebSocket fragments, across a ping
 * between them, and across two messages: the client sees the sentinel. */
static void test_ws_split(void)
{
	static const char fields[] = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
				     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
	static const char head101[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				      "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
	struct marks m;

	NEED_READY();
	for (int v = 0; v < 3; v++) {
		unsigned char resp[1024];
		size_t n = sizeof(head101) - 1, got = 0;
		char a[64], b[64], *out, *pl;

		mark(&m);
		memcpy(resp, head101, n);
		snprintf(a, sizeof(a), "x%.*s", 17, tok_real);
		snprintf(b, sizeof(b), "%s.", tok_real + 17);
		n += ws_frame(resp + n, v == 2 ? 0x81 : 0x01, a, strlen(a));
		if (v == 1)
			n += ws_frame(resp + n, 0x89, "ping", 4);
		n += ws_frame(resp + n, v == 2 ? 0x81 : 0x80, b, strlen(b));
		n += ws_frame(resp + n, 0x88, "", 0);
		out = via_rawhex(resp, n, fields, &got);
		ROW(test_has(out, "HTTP/1.1 101 "), "variant %d: no 101: %.200s", v, test_nz(out));
		pl = ws_payloads(out, got);
		ROW(out == NULL || memmem(out, got, tok_real + 4, 13) == NULL,
		    "variant %d: the client got the real value's bytes", v);
		ROW(test_has(pl, tok_sent), "variant %d: the client did not get the sentinel: '%s'", v, pl);
		free(pl);
		free(out);
		free(audit_since(&m));
	}
}

/* The upstream ends in the middle of a real value: Content-Length short,
 * chunked unfinished. The held bytes are dropped, never released. (A
 * close-delimited body and an upgraded stream end with the connection:
 * at a FIN or close_notify that is their end, and what was held goes
 * resolved as at a Content-Length body's end; at a reset, a cut, the
 * last bytes are dropped: mask_wire "a request body, or a close-delimited
 * end, ..." checks both, with a real value's prefix and without.) */
static void test_cut_mid_value(void)
{
	char half[32];
	struct marks m;

	NEED_READY();
	snprintf(half, sizeof(half), "%.24s", tok_real);
	for (int v = 0; v < 2; v++) {
		char resp[512], *out;
		size_t got = 0;
		int n = 0;

		mark(&m);
		if (v == 0)
			n = snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nbody %s", half);
		else
			n = snprintf(resp, sizeof(resp),
				     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\nbody %s\r\n",
				     strlen(half) + 5, half);
		out = via_rawhex(resp, (size_t)n, "", &got);
		ROW(out != NULL && memmem(out, got, half + 4, strlen(half) - 4) == NULL,
		    "variant %d: the held part of the value was released: %.*s", v, (int)got, test_nz(out));
		free(out);
		free(audit_since(&m));
	}
}

/* Requests to an inject host lose Range, If-Range, Request-Range (the
 * older name some servers still honour) and x-ms-range (Azure Storage's,
 * which wins over Range there: round 43 of the attack); to another host
 * they keep them. */
static void test_range_stripped(void)
{
	struct marks m;

	NEED_READY();
	/* h: 0 a GET to the inject host, 1 a GET to another host, 2 a PUT
	 * to the inject host (a PUT's range names what it writes: Azure's
	 * Put Page and Put Range require it; review43b), 3 a POST to it */
	for (int h = 0; h < 4; h++) {
		char req[512], *out, *rec;

		mark(&m);
		snprintf(req, sizeof(req),
			 "%s %s/hello HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\nIf-Range: \"e1\"\r\n"
			 "request-RANGE: bytes=4-7\r\nX-Ms-Range: bytes=8-11\r\nContent-Length: %d\r\n"
			 "Connection: close\r\n\r\n%s",
			 h == 2 ? "PUT" : h == 3 ? "POST" : "GET", plain_url(h != 1), h >= 2 ? 4 : 0, h >= 2 ? "abcd" : "");
		out = raw_pxs(req);
		ROW(test_has(out, "HTTP/1.1 200 "), "host %d: not 200: %.200s", h, test_nz(out));
		rec = test_file_since(rec_plain, m.plain);
		if (h == 0 || h == 3)
			ROW(!test_has(rec, "\r\nRange:") && !test_has(rec, "\r\nIf-Range:") &&
				    !test_has(rec, "\r\nrequest-RANGE:") && !test_has(rec, "\r\nX-Ms-Range:"),
			    "the inject host got Range/If-Range/Request-Range/x-ms-range: %.300s", rec);
		else
			ROW(test_has(rec, "\r\nRange: bytes=0-3\r\n") && test_has(rec, "\r\nIf-Range: \"e1\"\r\n") &&
				    test_has(rec, "\r\nrequest-RANGE: bytes=4-7\r\n") &&
				    test_has(rec, "\r\nX-Ms-Range: bytes=8-11\r\n"),
			    "%s lost Range/If-Range/Request-Range/x-ms-range: %.300s",
			    h == 1 ? "a GET to another host" : "a PUT to the inject host", rec);
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/* A 206 from an inject host, which was asked for no range: a server may
 * take one from where the proxy does not look (S3's partNumber query, a
 * field of its own), and two parts could each hold part of a real value
 * that no scan sees whole. 502, the part never sent; another host's 206
 * passes; a 206 with no body (HEAD) passes too (round 43 of the attack). */
static void test_partial_refused(void)
{
	struct marks m;

	NEED_READY();
	/* v: 0 GET, 1 GET to another host, 2 HEAD, 3 a PUT whose Range went
	 * up (review43b): still refused */
	for (int v = 0; v < 4; v++) {
		char req[512], *out, *aud;

		mark(&m);
		snprintf(req, sizeof(req),
			 "%s %s/status/206?partNumber=1 HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n",
			 v == 2 ? "HEAD" : v == 3 ? "PUT" : "GET", plain_url(v != 1),
			 v == 3 ? "Range: bytes=0-3\r\nContent-Length: 0\r\n" : "");
		out = raw_pxs(req);
		aud = audit_since(&m);
		if (v == 0 || v == 3) {
			ROW(test_has(out, "HTTP/1.1 502 ") && !test_has(out, "status 206"),
			    "an inject host's 206 was not refused: %.300s", test_nz(out));
			ROW(test_has(aud, "answered 206 (Partial Content) although no range was asked"),
			    "no audit line names the 206: %.400s", test_nz(aud));
		} else {
			ROW(test_has(out, "HTTP/1.1 206 "), "variant %d (%s): the 206 did not pass: %.300s", v,
			    v == 1 ? "another host" : "HEAD", test_nz(out));
		}
		free(aud);
		free(out);
	}
}

/* An inject host's answer in a charset whose bytes are not ASCII's
 * (ASP.NET Core writes JSON in UTF-16 when Accept-Charset or Accept's
 * charset asks): a real value in it is no byte string the re-masker
 * knows. 502; UTF-8 and a quoted Latin-1 pass; another host's UTF-16
 * passes; Accept-Charset does not go up to an inject host (round 43 of
 * the attack, F2). */
static void test_charset_refused(void)
{
	static const struct {
		const char *ct;
		bool inject, refused;
	} rows[] = {
	    {"text/plain%3B%20charset%3Dutf-16", true, true},
	    {"application/json%3B%20charset%3D%22UTF-32LE%22", true, true},
	    {"text/html%3Bcharset%3DIBM037", true, true},
	    {"text/plain%3B%20charset%3Dutf-7", true, true},
	    {"text/plain%3B%20charset%3Dutf-8", true, false},
	    {"text/plain%3B%20charset%3D%22iso-8859-1%22", true, false},
	    /* names servers write for ASCII's bytes (review43b: refused in
	     * 5ae0c1e): libmagic's binary (PHP's finfo), Java's, glibc's */
	    {"application/octet-stream%3B%20charset%3Dbinary", true, false},
	    {"text/plain%3B%20charset%3DISO8859_1", true, false},
	    {"text/plain%3B%20charset%3DANSI_X3.4-1968", true, false},
	    {"text/html%3B%20charset%3DMS932", true, false},
	    {"text/plain%3B%20charset%3Dlatin-1", true, false},
	    {"application/json", true, false},
	    {"text/plain%3B%20charset%3Dutf-16", false, false},
	};
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char req[512], *out, *aud;

		mark(&m);
		snprintf(req, sizeof(req), "GET %s/headers?Content-Type=%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			 plain_url(rows[i].inject), rows[i].ct);
		out = raw_pxs(req);
		aud = audit_since(&m);
		if (rows[i].refused) {
			ROW(test_has(out, "HTTP/1.1 502 ") && test_has(aud, "answered in a charset whose bytes are not ASCII's"),
			    "row %zu (%s): not refused: %.300s", i, rows[i].ct, test_nz(out));
		} else {
			ROW(test_has(out, "HTTP/1.1 200 "), "row %zu (%s, %s): refused: %.300s", i, rows[i].ct,
			    rows[i].inject ? "inject host" : "another host", test_nz(out));
		}
		free(aud);
		free(out);
	}
	for (int h = 0; h < 2; h++) {
		char req[512], *out, *rec;

		mark(&m);
		snprintf(req, sizeof(req), "GET %s/hello HTTP/1.1\r\nHost: x\r\nAccept-Charset: utf-16\r\nConnection: close\r\n\r\n",
			 plain_url(h == 0));
		out = raw_pxs(req);
		rec = test_file_since(rec_plain, m.plain);
		ROW(test_has(out, "HTTP/1.1 200 "), "host %d: not 200: %.200s", h, test_nz(out));
		ROW(h == 0 ? !test_has(rec, "Accept-Charset") : test_has(rec, "\r\nAccept-Charset: utf-16\r\n"),
		    "host %d (%s): Accept-Charset %s: %.300s", h, h == 0 ? "inject" : "another",
		    h == 0 ? "went up" : "was lost", rec);
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/*
 * Round 44 of the attack: RFC 3229 delta encoding, a coding the client
 * negotiates as it does a compression. `A-IM: gzip` went up to an inject
 * host, and a server that implements it answered `226 IM Used` with
 * `IM: gzip` and its echo of the injected Authorization gzip'd: no
 * Content-Encoding, so the refusal of coded answers did not see it, and
 * the re-masker cannot read through gzip; python's urllib (226 is a
 * success) handed the body over and the client's gunzip gave the real
 * value. Now A-IM does not go up to an inject host (the echo comes back
 * plain, re-masked), an inject host's answer with any IM but identity is
 * refused (502) as a coded one is, and another host's 226 passes.
 */
static void test_delta_encoding_refused(void)
{
	static const char py[] =
		"import sys, gzip, urllib.request as u\n"
		"o = u.build_opener(u.ProxyHandler({'http': sys.argv[1]}))\n"
		"q = u.Request(sys.argv[2], headers={'A-IM': 'gzip', 'Authorization': 'Bearer ' + sys.argv[3]})\n"
		"try:\n"
		"    r = o.open(q, timeout=10); st = r.status; b = r.read()\n"
		"except u.HTTPError as e:\n"
		"    st = e.code; b = e.read()\n"
		"if b[:2] == b'\\x1f\\x8b': b = gzip.decompress(b)\n"
		"sys.stdout.write('status %d\\n%s\\n' % (st, b.decode('latin-1')))\n";
	const char *colon = strrchr(raw_addr, ':');
	struct marks m;

	NEED_READY();
	CU_ASSERT_FATAL(colon != NULL);
	/* v: 0 an inject host asked A-IM: gzip (the client's own header);
	 * 1 an inject host answering 226 IM: gzip unasked; 2 another host
	 * (localhost, no value injected): its 226 passes */
	for (int v = 0; v < 3; v++) {
		char url[160], *out = NULL, *aud;
		char *argv[] = {ENV_CLEAN, (char *)test_python(), "-c", (char *)py, px.url, url,
				v == 2 ? "not-a-secret" : tok_sent, NULL};

		snprintf(url, sizeof(url), "http://%s%s/%s", v == 2 ? "localhost" : "127.0.0.1", colon,
			 v == 1 ? "aim/always" : "aim");
		mark(&m);
		CU_ASSERT(runv(&out, argv) == 0);
		aud = audit_since(&m);
		no_real_value_in(out, out != NULL ? strlen(out) : 0, "the A-IM client's output");
		if (v == 0)
			ROW(test_has(out, "status 200\n") && test_hasf(out, "Bearer %s", tok_sent),
			    "A-IM went up to an inject host (a 226 came back) or its echo is not the sentinel: %.300s",
			    test_nz(out));
		else if (v == 1)
			ROW(test_has(out, "status 502\n") && test_has(aud, "an RFC 3229 IM"),
			    "an inject host's 226 IM: gzip was not refused: %.300s / %.300s", test_nz(out),
			    test_nz(aud));
		else
			ROW(test_has(out, "status 226\n") && test_has(out, "Bearer not-a-secret"),
			    "another host's 226 did not pass: %.300s", test_nz(out));
		free(aud);
		free(out);
	}
}

/*
 * Review of round 44 (review44p): the IM members the round's test did not
 * name. An inject host's IM in another case, a list with identity in it,
 * a second IM field, other manipulations (vcdiff, feed), and spellings of
 * identity: refused exactly when a manipulation is named; no body (HEAD),
 * an empty IM and another host's IM pass.
 */
static void test_delta_encoding_members(void)
{
	static const struct {
		const char *method, *path;
		bool inject, refused;
	} rows[] = {
	    {"GET", "/headers?IM=GZIP", true, true},
	    {"GET", "/headers?im=identity%2C%20gzip", true, true},
	    {"GET", "/headers?IM=gzip%2C%20identity", true, true},
	    {"GET", "/headers?IM=identity&IM=vcdiff", true, true},
	    {"GET", "/headers?Im=feed", true, true},
	    {"GET", "/headers?IM=diffe", true, true},
	    {"GET", "/headers?IM=Identity", true, false},
	    {"GET", "/headers?IM=identity%09", true, false},
	    {"GET", "/headers?IM=", true, false},
	    {"HEAD", "/headers?IM=gzip", true, false},
	    {"GET", "/headers?IM=gzip", false, false},
	};
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char req[512], *out, *aud;

		mark(&m);
		snprintf(req, sizeof(req), "%s %s%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", rows[i].method,
			 plain_url(rows[i].inject), rows[i].path);
		out = raw_pxs(req);
		aud = audit_since(&m);
		if (rows[i].refused)
			ROW(test_has(out, "HTTP/1.1 502 ") && test_has(aud, "an RFC 3229 IM"),
			    "row %zu (%s %s): not refused: %.300s", i, rows[i].method, rows[i].path, test_nz(out));
		else
			ROW(test_has(out, "HTTP/1.1 200 ") || test_has(out, "HTTP/1.1 204 "),
			    "row %zu (%s %s, %s): refused: %.300s", i, rows[i].method, rows[i].path,
			    rows[i].inject ? "inject host" : "another host", test_nz(out));
		free(aud);
		free(out);
	}
}

/* ------------------------------------------------------------------ */
/* passavant run                                                        */
/* ------------------------------------------------------------------ */

/* Inside `passavant run`, a command that somehow holds the real value
 * sends it in a query and in a body: both 403, and neither passavant's
 * stderr nor the audit file holds it. */
static void test_run_leak(void)
{
	char *root, pol[4200], work[4200], script[4200], audit[4200], leak[4300], text[8192], tok[64];
	char why[256];
	char *out = NULL, *err = NULL, *a, *rec;
	size_t mplain;
	int st;

	NEED_READY();
	if (!test_userns_available(why, sizeof(why))) {
		TEST_SKIP("user namespaces unavailable: %s", why);
		return;
	}
	root = strdup("/var/tmp/pv-proxhard.XXXXXX");
	CU_ASSERT_FATAL(root != NULL && mkdtemp(root) != NULL && chmod(root, 0755) == 0);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", root);
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(script, sizeof(script), "%s/s.sh", root);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", root);
	snprintf(leak, sizeof(leak), "%s/leaked.txt", work);
	CU_ASSERT_FATAL(mkdir(work, 0755) == 0);
	snprintf(text, sizeof(text),
		 "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
		 "credentials:\n  envVars:\n    - {name: GH_TOKEN, mode: mask, injectHosts: [\"127.0.0.1\"]}\n"
		 "filesystem:\n  allowWrite: [\"%s\"]\n", work);
	CU_ASSERT_FATAL(test_write_file(pol, text, strlen(text)) == 0);
	CU_ASSERT_FATAL(test_write_file(leak, tok_real, strlen(tok_real)) == 0);
	CU_ASSERT_FATAL(chmod(leak, 0644) == 0);
	snprintf(text, sizeof(text),
		 "v=$(cat %s)\n"
		 "NO_PROXY= no_proxy= curl -sS --max-time 20 -o /dev/null -w 'q=%%{http_code}\\n' "
		 "\"http://127.0.0.1:%u/hello?t=$v\"\n"
		 "NO_PROXY= no_proxy= curl -sS --max-time 20 -o /dev/null -w 'b=%%{http_code}\\n' "
		 "--data-binary \"k=$v\" http://127.0.0.1:%u/sink\n",
		 leak, (unsigned)upp.port, (unsigned)upp.port);
	CU_ASSERT_FATAL(test_write_file(script, text, strlen(text)) == 0);
	CU_ASSERT_FATAL(chmod(script, 0644) == 0);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", tok_real);
	mplain = test_file_size(rec_plain);
	{
		char *argv[] = {"env", "-C", work, tok, "PATH=/usr/local/bin:/usr/bin:/bin", (char *)test_passavant_bin(),
				"run", "--audit", audit, "-p", pol, "--", "sh", script, NULL};

		st = test_run_capture(argv, &out, &err, 60000);
	}
	ROW(st == 0, "run exited %d: %s", st, test_nz(err));
	ROW(test_has(out, "q=403") && test_has(out, "b=403"), "not refused: %s", test_nz(out));
	no_real_value_in(err, err ? strlen(err) : 0, "passavant run's stderr");
	ROW(test_has(err, "GH_TOKEN"), "stderr does not name the credential: %s", test_nz(err));
	a = test_read_file(audit, NULL);
	no_real_value_in(a, a ? strlen(a) : 0, "run's audit file");
	rec = test_file_since(rec_plain, mplain);
	no_real_value_in(rec, strlen(rec), "the upstream's record (run)");
	free(rec);
	free(a);
	free(out);
	free(err);
	test_rmtree(root);
	free(root);
}

/* ------------------------------------------------------------------ */
/* Method overrides (SPEC §3.1, §5): a request naming another method    */
/* ------------------------------------------------------------------ */

/* A plain request to a host with a method rule (localhost:upm.port):
 * "GET http://localhost:PORT<path>" with the extra field lines. */
static char *meth_px(const char *host_port, const char *path, const char *fields)
{
	char req[2048];

	snprintf(req, sizeof(req), "GET http://%s%s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n", host_port,
		 path, host_port, fields);
	return raw_pxs(req);
}

static const char *meth_host(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "localhost:%u", (unsigned)upm.port);
	return buf;
}

/* A refusal of what named a method: 403, the marker, the rule, what named
 * which method; the upstream got nothing; a 403 audit line saying so. */
static void check_override_refusal(const struct marks *m, const char *out, const char *rec_path, size_t rec_mark,
				   const char *named, const char *method, const char *what)
{
	char want[160], *rec, *a;

	snprintf(want, sizeof(want), "%s names the method %s,", named, method);
	ROW(test_has(out, " 403") && (test_has(out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n") ||
				      test_has(out, "\r\nx-proxy-error: blocked-by-sandbox-runtime\r\n")),
	    "%s: not a 403 blocked-by-sandbox-runtime: %.400s", what, test_nz(out));
	ROW(test_has(out, want) && test_has(out, "refused by network.allowedMethods: localhost:"),
	    "%s: the reason does not say '%s' by the host's allowedMethods rule: %.400s", what, want, test_nz(out));
	rec = test_file_since(rec_path, rec_mark);
	ROW(rec != NULL && !test_has(rec, "GET ") && !test_has(rec, " headers\n"),
	    "%s: the upstream got the refused request: %.300s", what, test_nz(rec));
	a = audit_since(m);
	ROW(test_has(a, "\"status\":403") && test_has(a, want), "%s: no 403 audit line saying '%s': %.400s", what,
	    want, test_nz(a));
	free(rec);
	free(a);
}

/* HTTP/1.1: each override field, any case, every occurrence, lists. */
static void test_override_h1_header(void)
{
	static const struct {
		const char *fields, *named, *method;
	} cases[] = {
		{ "X-HTTP-Method-Override: DELETE\r\n", "X-HTTP-Method-Override", "DELETE" },
		{ "x-http-method: put\r\n", "X-HTTP-Method", "PUT" },
		{ "X-Method-Override: PATCH\r\n", "X-Method-Override", "PATCH" },
		/* CGI-style servers (Rack, WEBrick, Puma) read the underscore spelling */
		{ "X_HTTP_Method_Override: DELETE\r\n", "X-HTTP-Method-Override", "DELETE" },
		{ "X-HTTP-METHOD-OVERRIDE:  delete \r\n", "X-HTTP-Method-Override", "DELETE" },
		{ "X-HTTP-Method-Override: GET, DELETE\r\n", "X-HTTP-Method-Override", "DELETE" },
		{ "X-HTTP-Method-Override: HEAD\r\nX-HTTP-Method-Override: POST\r\n", "X-HTTP-Method-Override", "POST" },
		{ "X-HTTP-Method-Override: GET\r\nX-Method-Override: OPTIONS\r\n", "X-Method-Override", "OPTIONS" },
		/* the report: all three fields and a query parameter */
		{ "X-HTTP-Method-Override: DELETE\r\nX-HTTP-Method: PUT\r\nX-Method-Override: PATCH\r\n",
		  "X-HTTP-Method-Override", "DELETE" },
	};
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i < (sizeof(cases) / sizeof(cases[0])); i++) {
		char what[64], *out;

		snprintf(what, sizeof(what), "h1 header case %zu", i);
		mark(&m);
		out = meth_px(meth_host(), i == (sizeof(cases) / sizeof(cases[0])) - 1 ? "/hello?_method=DELETE" : "/hello",
			      cases[i].fields);
		check_override_refusal(&m, out, rec_meth, m.meth, cases[i].named, cases[i].method, what);
		free(out);
	}
}

/* HTTP/1.1: a _method query parameter, decoded, any case, lists, each. */
static void test_override_h1_query(void)
{
	static const struct {
		const char *path, *method;
	} cases[] = {
		{ "/hello?_method=DELETE", "DELETE" },
		{ "/hello?a=1&_METHOD=delete", "DELETE" },
		{ "/hello?%5Fmethod=DEL%45TE", "DELETE" },
		{ "/hello?_method=GET,PUT", "PUT" },
		{ "/hello?_method=GET%2CPUT", "PUT" },
		{ "/hello?x=1;_method=put", "PUT" },
		{ "/hello?_method=GET&_method=PATCH", "PATCH" },
		{ "/hello?_method=+patch+", "PATCH" },
		{ "/hello?_method[]=DELETE", "DELETE" },
		{ "/hello?_method%5B0%5D=put", "PUT" },
		{ "/hello?_Method[x]=patch", "PATCH" },
		/* as Rack 2 reads names: leading '[' and ']' dropped, "_method]" */
		{ "/hello?[_method]=DELETE", "DELETE" },
		{ "/hello?%5D_method%5D=put", "PUT" },
		/* as PHP reads names: leading spaces, '.' and ' ' for '_', NUL ends */
		{ "/hello?%20_method=DELETE", "DELETE" },
		{ "/hello?+_method=DELETE", "DELETE" },
		{ "/hello?.method=DELETE", "DELETE" },
		{ "/hello?%2Emethod=put", "PUT" },
		{ "/hello?_method%00x=DELETE", "DELETE" },
	};
	struct marks m;

	NEED_READY();
	for (size_t i = 0; i < (sizeof(cases) / sizeof(cases[0])); i++) {
		char what[64], *out;

		snprintf(what, sizeof(what), "h1 query case %zu", i);
		mark(&m);
		out = meth_px(meth_host(), cases[i].path, "");
		check_override_refusal(&m, out, rec_meth, m.meth, "the query parameter _method", cases[i].method, what);
		free(out);
	}
}

/* curl --http2 through the proxy to https://localhost:h2port<path>, with
 * one extra field (or none); the response head and body, then
 * "|CODE|VERSION". */
static char *curl_h2(const char *path, const char *field)
{
	char url[128], *out = NULL;
	char *argv[64] = {ENV_CLEAN, "curl", "-sS", "-i", "--http2", "--max-time", "20", "-w",
			  "|%{http_code}|%{http_version}", "--cacert", px.trust, "-x", px.url};
	int n = 0;

	while (argv[n] != NULL)
		n++;
	if (field != NULL) {
		argv[n++] = "-H";
		argv[n++] = (char *)field;
	}
	snprintf(url, sizeof(url), "https://localhost:%u%s", h2port, path);
	argv[n++] = url;
	argv[n] = NULL;
	(void)runv(&out, argv);
	return out;
}

/* HTTP/2: the same verdict on a stream (header and query). */
static void test_override_h2(void)
{
	struct marks m;
	char *out;

	NEED_READY();
	mark(&m);
	out = curl_h2("/hello", "X-HTTP-Method-Override: DELETE");
	ROW(test_has(out, "|403|2"), "h2 header: not a 403 over HTTP/2: %.400s", test_nz(out));
	check_override_refusal(&m, out, rec_h2, m.h2, "X-HTTP-Method-Override", "DELETE", "h2 header");
	free(out);

	mark(&m);
	out = curl_h2("/hello", "x-method-override: get, patch");
	ROW(test_has(out, "|403|2"), "h2 header list: not a 403 over HTTP/2: %.400s", test_nz(out));
	check_override_refusal(&m, out, rec_h2, m.h2, "X-Method-Override", "PATCH", "h2 header list");
	free(out);

	mark(&m);
	out = curl_h2("/hello?_method=delete", NULL);
	ROW(test_has(out, "|403|2"), "h2 query: not a 403 over HTTP/2: %.400s", test_nz(out));
	check_override_refusal(&m, out, rec_h2, m.h2, "the query parameter _method", "DELETE", "h2 query");
	free(out);
}

/*
 * Round 36 of the attack (F2): a _method after a '#' in the target. The
 * override judge stopped at the '#', but Go's ParseRequestURI keeps it in
 * the query ("a#&_method=DELETE" gives _method=DELETE to r.URL.Query(),
 * Echo's MethodFromQuery), so a POST was a DELETE to a Go service on a
 * [GET, POST] host. A target with a '#' is refused (400) on every host,
 * as the absolute form already was: over HTTP/2 to the rule's host
 * (nothing reaches it), and over HTTP/1.1 in a terminated tunnel to a
 * host without a rule.
 */
static void test_override_fragment(void)
{
	static const char *const paths[] = {"/hello?a#&_method=DELETE", "/hello?a=1#b&_method=delete",
					    "/hello#x?_method=PUT", "/hello#"};
	char json[512], script[4200], target[64], req[256], *out, *a, *rec;
	struct marks m;

	NEED_READY();
	snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	snprintf(target, sizeof(target), "localhost:%u", h2port);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
				"--cafile", px.trust, "--timeout", "10", "req", json, NULL};

		snprintf(json, sizeof(json), "{\"method\": \"GET\", \"end\": true, \"path\": \"%s\"}", paths[i]);
		mark(&m);
		out = NULL;
		(void)runv(&out, argv);
		rec = test_file_since(rec_h2, m.h2);
		ROW(!test_has(rec, ":path: "), "h2 %s: the request reached the [GET, HEAD] host: %.300s", paths[i],
		    test_nz(rec));
		a = audit_since(&m);
		ROW(test_has(a, "\"status\":400") && test_has(a, "fragment (#)"),
		    "h2 %s: no 400 naming the fragment in the audit: %.400s (client: %.300s)", paths[i], test_nz(a),
		    test_nz(out));
		free(a);
		free(rec);
		free(out);

		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", paths[i], (unsigned)up.port);
		mark(&m);
		out = tls_px(req, strlen(req));
		ROW(test_has(out, "HTTP/1.1 400 ") && test_has(out, "fragment (#)"),
		    "h1 %s in a tunnel: not a 400 naming the fragment: %.300s", paths[i], test_nz(out));
		rec = test_file_since(rec_tls, m.tls);
		ROW(!test_has(rec, "GET /hello"), "h1 %s in a tunnel: the request reached the upstream: %.300s",
		    paths[i], test_nz(rec));
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/*
 * Round 37 of the attack: a _method in the request BODY on a [GET, POST]
 * host (127.0.0.1:upm.port, 127.0.0.1:h2port). Rack::MethodOverride,
 * Laravel, Symfony and Spring read a form's _method (Laravel a JSON key
 * too): the POST was a DELETE to them, and the proxy read only fields and
 * the query. The body is read as it streams; a method the rule does not
 * allow is a 403 and the upstream never gets the whole request.
 */
struct body_case {
	const char *ctype; /* Content-Type field line ("" none) */
	bool chunked;      /* body: chunks separated by '|' */
	const char *body;
	const char *named, *method; /* NULL: allowed, passes */
};

/* review 38a: a _method array nested 300 deep (the reader's count
 * saturated at 255 and lost the array's end, so "DELETE" after it went
 * unjudged) */
#define OPEN10 "[[[[[[[[[["
#define CLOSE10 "]]]]]]]]]]"
#define OPEN100 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10
#define CLOSE100 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10
#define DEEP300 OPEN100 OPEN100 OPEN100 CLOSE100 CLOSE100 CLOSE100

static const struct body_case body_cases[] = {
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "a=1&_method=DELETE&b=2",
	  "the body parameter _method", "DELETE" },
	{ "", false, "_method=delete", "the body parameter _method", "DELETE" }, /* no type: Rack reads a form */
	{ "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n", false, "%5Fmethod=PUT",
	  "the body parameter _method", "PUT" },
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "_method[]=PATCH",
	  "the body parameter _method", "PATCH" },
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "x=1;+.method=DEL%45TE",
	  "the body parameter _method", "DELETE" },
	{ "Content-Type: application/x-www-form-urlencoded\r\n", true, "a=1&_me|th|od=DEL|ETE",
	  "the body parameter _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
	  "--XyZ\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=\"b 1\"\r\n", true,
	  "--b 1\r\ncontent-disposition: form-data; NAME=_method\r\n\r\npu|t\r\n--b| 1--\r\n",
	  "the body's multipart part _method", "PUT" },
	{ "Content-Type: application/json\r\n", false, "{\"a\": [1, {\"b\": 2}], \"_method\": \"DELETE\"}",
	  "the body's JSON key _method", "DELETE" },
	{ "Content-Type: application/vnd.api+json\r\n", true, "{\"\\u005fmeth|od\" : [\"GET\", \"pa\\u0074ch\"]}",
	  "the body's JSON key _method", "PATCH" },
	/* a media type that begins as a form's is one: Undertow's and Vert.x' startsWith (round 38) */
	{ "Content-Type: application/x-www-form-urlencodedX\r\n", false, "_method=DELETE",
	  "the body parameter _method", "DELETE" },
	{ "Content-Type: application/x-www-form-urlencoded-v2; charset=utf-8\r\n", true, "a=1&_meth|od=put",
	  "the body parameter _method", "PUT" },
	/* the media type ends at ',' (PHP, Rack); JSON wherever the value says /json (Laravel) */
	{ "Content-Type: application/x-www-form-urlencoded,text/plain\r\n", false, "_method=PUT",
	  "the body parameter _method", "PUT" },
	{ "Content-Type: text/plain; x=\"/json\"\r\n", false, "{\"_method\": \"delete\"}",
	  "the body's JSON key _method", "DELETE" },
	/* Rack finds Content-Disposition anywhere in the part's head, folded lines too */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data;\r\n name=\"_method\"\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "DELETE" },
	/* Rack reads multipart/mixed and multipart/related for a _method too */
	{ "Content-Type: multipart/mixed; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "DELETE" },
	{ "Content-Type: multipart/related; type=\"text/plain\"; boundary=\"b=1\"\r\n", true,
	  "--b=1\r\nContent-Disposition: form-data; name=_method\r\n\r\npa|tch\r\n--b=1--\r\n",
	  "the body's multipart part _method", "PATCH" },
	/* Rack 2 drops leading '[' and ']' of a name, and a ']' after it */
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "a=1&%5B_method%5D=DELETE",
	  "the body parameter _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"]_method]\"\r\n\r\nput\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PUT" },
	/* Rack names a part by its Content-ID; Rack 2 finds `; name=` anywhere in the head */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-ID: _method\r\n\r\nDELETE\r\n--XyZ--\r\n", "the body's multipart part _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"x\"; foo=\"; name=_method\"\r\n\r\nput\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PUT" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", true,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\nX; na|me=_method\r\n\r\npatch\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PATCH" },
	/* RFC 2231 names: Go's Part.FormName() decodes and joins them (round 38; gorilla's
	 * HTTPMethodOverrideHandler takes r.FormValue("_method")) */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name*=utf-8''_method\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", true,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"x\"; NAME*=UTF-8''%5Fmethod\r\n\r\nput\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PUT" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name*0=_met; name*1=hod\r\n\r\npatch\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PATCH" },
	/* RFC 2047 encoded words in a name (round 39): Commons FileUpload's and
	 * Tomcat's ParameterParser decode every parameter value
	 * (MimeUtility.decodeText()), so Spring's HiddenHttpMethodFilter reads
	 * the part _method; split between chunks inside "=?" too */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"=?utf-8?q?=5Fmethod?=\"\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "DELETE" },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", true,
	  "--XyZ\r\nContent-Disposition: form-data; name==|?UTF-8?B?X21ldGhvZA==?=\r\n\r\npu|t\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PUT" },
	/* review 38a: every string in a _method array is judged; one nested
	 * deeper than the reader follows is refused */
	{ "Content-Type: application/json\r\n", false, "{\"_method\": [{\"_method\": \"GET\"}, \"DELETE\"]}",
	  "the body's JSON key _method", "_METHOD" },
	{ "Content-Type: application/json\r\n", true, "{\"_method\": [" DEEP300 "|, \"DELETE\"]}",
	  "the body's JSON key _method (an array value nested deeper than the proxy follows)", "?" },
	/* review 39a: the encoding in lower case, the word after other text */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", true,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"a =?iso-8859-1?|b?X21ldGhvZA==?=\"\r\n\r\nPATCH\r\n--XyZ--\r\n",
	  "the body's multipart part _method", "PATCH" },
	/* review 39a: a UTF-8 BOM before a JSON body (Jackson skips it, Python's
	 * json.loads() of bytes reads utf-8-sig): still read; and an escaped
	 * \u0000 (six ASCII bytes, no NUL byte) does not stop the reader */
	{ "Content-Type: application/json\r\n", false, "\xef\xbb\xbf{\"_method\": \"DELETE\"}",
	  "the body's JSON key _method", "DELETE" },
	{ "Content-Type: application/json\r\n", false, "{\"a\": \"x\\u0000y\", \"_method\": \"DELETE\"}",
	  "the body's JSON key _method", "DELETE" },
	/* look-alikes pass */
	{ "Content-Type: multipart/related; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"name=_method.txt\"\r\n"
	  "Content-ID: <_method@example.com>\r\n\r\nDELETE\r\n--XyZ--\r\n",
	  NULL, NULL },
	{ "Content-Type: multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW\r\n", false,
	  "------WebKitFormBoundary7MA4YWxkTrZu0gW\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx\r\n"
	  "------WebKitFormBoundary7MA4YWxkTrZu0gW\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n"
	  "Content-Type: text/plain\r\n\r\n_method=DELETE\r\n------WebKitFormBoundary7MA4YWxkTrZu0gW--\r\n",
	  NULL, NULL },
	{ "Content-Type: multipart/form-data; charset=utf-8; boundary=\"----=_Part_0_1.2\"\r\n", false,
	  "------=_Part_0_1.2\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n------=_Part_0_1.2--\r\n",
	  NULL, NULL },
	{ "Content-Type: multipart/mixed; boundary=batch_1\r\n", false,
	  "--batch_1\r\nContent-Type: application/http\r\n\r\nDELETE /x HTTP/1.1\r\n\r\n--batch_1--\r\n", NULL,
	  NULL },
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "payment_method=pm_1&x_method=DELETE&_methodx=PUT",
	  NULL, NULL },
	{ "Content-Type: application/x-www-form-urlencoded\r\n", false, "_method=POST&_method=get", NULL, NULL },
	{ "Content-Type: application/json\r\n", false,
	  "{\"jsonrpc\": \"2.0\", \"method\": \"tools/call\", \"params\": {\"x\": \"_method\", \"y\": \"DELETE\"}}", NULL,
	  NULL },
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"_method\"\r\n\r\n_method=DELETE\r\n"
	  "--XyZ\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\npost\r\n--XyZ--\r\n",
	  NULL, NULL },
	/* an encoded word in a file's name is no part name */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"=?utf-8?q?a=C3=A9.txt?=\"\r\n\r\nDELETE\r\n"
	  "--XyZ--\r\n",
	  NULL, NULL },
	/* review 39a: "=?" in an ordinary part name, no "?B?" or "?Q?" after
	 * it (no RFC 2047 word a decoder reads): not taken for a _method */
	{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", false,
	  "--XyZ\r\nContent-Disposition: form-data; name=\"q=?\"\r\n\r\nhello world\r\n"
	  "--XyZ\r\nContent-Disposition: form-data; name=redirect=?next=/a?x\r\n\r\nhello again\r\n--XyZ--\r\n",
	  NULL, NULL },
	/* review 39a: UTF-8 JSON with an escaped \u0000 (no NUL byte), and with
	 * a BOM, passes where its _method is allowed or absent */
	{ "Content-Type: application/json\r\n", false, "{\"note\": \"a\\u0000b\", \"_method\": \"post\"}", NULL, NULL },
	{ "Content-Type: application/json; charset=utf-8\r\n", false, "\xef\xbb\xbf{\"title\": \"caf\xc3\xa9\"}", NULL, NULL },
	{ "Content-Type: text/plain\r\n", false, "_method=DELETE", NULL, NULL }, /* no framework reads it */
};

/* Whether the upstream's record holds a complete request. */
static bool rec_complete(const char *rec);

/*
 * A JSON body in UTF-16 or UTF-32 with no charset (round 39): Jackson and
 * Python's json.loads() of bytes (Flask's get_json()) guess the encoding
 * from the first bytes, so {"_method":"DELETE"} so written is theirs; the
 * reader saw "_\0m\0..." and passed it (fails before: 4 of 4 rows reach
 * the upstream). Any NUL byte in a JSON body is refused on a host with a
 * method list (UTF-8 JSON holds none).
 */
static void test_override_json_wide(void)
{
	static const char *const names[] = {"UTF-16LE", "UTF-16BE with a BOM", "UTF-32LE", "UTF-32BE"};
	static const char text[] = "{\"_method\":\"DELETE\"}";
	char hp[64];
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", (unsigned)upm.port);
	for (int v = 0; v < 4; v++) {
		unsigned char body[256];
		char req[1024], *out, *rec, *a;
		size_t n = 0, hl;
		int w = v < 2 ? 2 : 4;
		bool be = v == 1 || v == 3;

		if (v == 1) {
			body[n++] = 0xfe;
			body[n++] = 0xff;
		}
		for (size_t i = 0; i < sizeof(text) - 1; i++)
			for (int k = 0; k < w; k++)
				body[n++] = (unsigned char)((be ? k == w - 1 : k == 0) ? text[i] : 0);
		hl = (size_t)snprintf(req, sizeof(req),
				      "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
				      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
				      hp, hp, n);
		memcpy(req + hl, body, n);
		mark(&m);
		out = raw_px(req, hl + n, NULL);
		rec = test_file_since(rec_meth, m.meth);
		a = audit_since(&m);
		ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "UTF-16 or UTF-32"),
		    "%s: not a 403 naming the encoding: %.400s", names[v], test_nz(out));
		ROW(!rec_complete(rec), "%s: the upstream got the whole request: %.300s", names[v], test_nz(rec));
		ROW(test_has(a, "\"status\":403"), "%s: no 403 audit line: %.300s", names[v], test_nz(a));
		free(a);
		free(rec);
		free(out);
	}
}

/* Whether the upstream's record holds a complete request. */
static bool rec_complete(const char *rec)
{
	const char *p = rec;

	while (p != NULL && (p = strstr(p, "=== conn ")) != NULL) {
		const char *nl = strchr(p, '\n'), *inc = strstr(p, " incomplete ===");

		if (nl != NULL && (inc == NULL || inc > nl))
			return true;
		p = nl;
	}
	return false;
}

static void test_override_body_h1(void)
{
	char hp[64];
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", (unsigned)upm.port);
	for (size_t i = 0; i < sizeof(body_cases) / sizeof(body_cases[0]); i++) {
		const struct body_case *bc = &body_cases[i];
		char req[4096], body[2048], what[64], want[160], *out, *rec, *a;
		size_t n = 0;

		if (bc->chunked) {
			const char *p = bc->body;

			while (*p != '\0') {
				size_t k = strcspn(p, "|");

				n += (size_t)snprintf(body + n, sizeof(body) - n, "%zx\r\n%.*s\r\n", k, (int)k, p);
				p += k + (p[k] == '|');
			}
			n += (size_t)snprintf(body + n, sizeof(body) - n, "0\r\n\r\n");
		} else {
			n = (size_t)snprintf(body, sizeof(body), "%s", bc->body);
		}
		snprintf(req, sizeof(req), "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\n%s%s%zu\r\nConnection: close\r\n\r\n%s",
			 hp, hp, bc->ctype, bc->chunked ? "Transfer-Encoding: chunked\r\nX-Len: " : "Content-Length: ",
			 bc->chunked ? (size_t)0 : n, body);
		snprintf(what, sizeof(what), "h1 body case %zu", i);
		mark(&m);
		out = raw_pxs(req);
		rec = test_file_since(rec_meth, m.meth);
		a = audit_since(&m);
		if (bc->method == NULL) {
			ROW(test_has(out, "HTTP/1.1 200 ") && rec_complete(rec),
			    "%s (a look-alike): not passed to the upstream: %.300s / %.300s", what, test_nz(out),
			    test_nz(rec));
		} else {
			snprintf(want, sizeof(want), "%s names the method %s,", bc->named, bc->method);
			ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n"),
			    "%s: not a 403 blocked-by-sandbox-runtime: %.400s", what, test_nz(out));
			ROW(test_has(out, want) && test_has(out, "refused by network.allowedMethods: 127.0.0.1:"),
			    "%s: the reason does not say '%s': %.400s", what, want, test_nz(out));
			ROW(!rec_complete(rec), "%s: the upstream got the whole request: %.400s", what, test_nz(rec));
			ROW(test_has(a, "\"status\":403") && test_has(a, want), "%s: no 403 audit line saying '%s': %.400s",
			    what, want, test_nz(a));
		}
		free(a);
		free(rec);
		free(out);
	}
	/* A boundary the frameworks read differently (PHP the first
	 * "boundary", Rack the last "boundary="; both end it at ',' and ';'):
	 * the body's parts cannot be told, so it is refused at its head. The
	 * body is the one Rack reads: a part _method=DELETE. */
	{
		static const char *const ambiguous[] = {
			"multipart/form-data; boundary=AAA; xboundary=BBB",
			"multipart/form-data; boundary=BBB,AAA",
			"multipart/form-data; boundary=\"BBB;AAA\"",
			"multipart/mixed; BOUNDARY=AAA; boundary=BBB",
			/* RFC 2231: Go's mime.ParseMediaType reads BBB over the
			 * plain boundary PHP and Rack read (round 38; gorilla's
			 * HTTPMethodOverrideHandler takes r.FormValue("_method")) */
			"multipart/form-data; boundary=AAA; boundary*=utf-8''BBB",
			"multipart/form-data; boundary=AAA; BOUNDARY*0=BBB",
		};

		for (size_t i = 0; i < sizeof(ambiguous) / sizeof(ambiguous[0]); i++) {
			char req[1024], *out, *rec;

			snprintf(req, sizeof(req),
				 "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 72\r\n"
				 "Connection: close\r\n\r\n--BBB\r\nContent-Disposition: form-data; name=_method\r\n\r\n"
				 "DELETE\r\n--BBB--\r\n",
				 hp, hp, ambiguous[i]);
			mark(&m);
			out = raw_pxs(req);
			rec = test_file_since(rec_meth, m.meth);
			ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "one servers may read differently"),
			    "Content-Type %s: not a 403 saying the boundary may be read differently: %.300s", ambiguous[i],
			    test_nz(out));
			ROW(!rec_complete(rec), "Content-Type %s: the upstream got the request: %.300s", ambiguous[i],
			    test_nz(rec));
			free(rec);
			free(out);
			free(audit_since(&m));
		}
	}
	/* A form in a charset whose bytes are not ASCII's: Tomcat decodes
	 * its names with it (Spring's HiddenHttpMethodFilter reads
	 * getParameter("_method")); here EBCDIC's _method and DELETE around
	 * an ASCII '='. Refused at its head; UTF-8 and Latin-1 forms read. */
	{
		static const struct {
			const char *ct;
			bool refused;
		} cs[] = {
			{ "application/x-www-form-urlencoded; charset=IBM037", true },
			{ "application/x-www-form-urlencoded; charset=\"UTF-16LE\"", true },
			{ "multipart/form-data; charset=ISO-2022-JP; boundary=BBB", true },
			/* Express's body-parser decodes a JSON body in any utf-* (round 38) */
			{ "application/json; charset=utf-16le", true },
			{ "application/vnd.api+json; charset=\"UTF-32\"", true },
			/* RFC 2231: Django's parse_header_parameters() reads
			 * charset* as the charset (review 38a) */
			{ "application/x-www-form-urlencoded; charset*=utf-8''IBM037", true },
			{ "application/x-www-form-urlencoded; charset=utf-8; Charset*0=utf-16le", true },
			{ "application/json; charset=utf-8", false },
			{ "application/x-www-form-urlencoded; charset=UTF-8", false },
			{ "application/x-www-form-urlencoded; charset=ISO-8859-1", false },
		};

		for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
			char req[1024], *out, *rec;

			snprintf(req, sizeof(req),
				 "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 14\r\n"
				 "Connection: close\r\n\r\n%s",
				 hp, hp, cs[i].ct, cs[i].refused ? "\x6d\x94\x85\xa3\x88\x96\x84=\xc4\xc5\xd3\xc5\xe3\xc5" : "ab&_method=GET");
			mark(&m);
			out = raw_pxs(req);
			rec = test_file_since(rec_meth, m.meth);
			if (cs[i].refused) {
				ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "names a charset whose bytes are not ASCII"),
				    "Content-Type %s: not a 403 naming the charset: %.300s", cs[i].ct, test_nz(out));
				ROW(!rec_complete(rec), "Content-Type %s: the upstream got the request: %.300s", cs[i].ct,
				    test_nz(rec));
			} else {
				ROW(test_has(out, "HTTP/1.1 200 ") && rec_complete(rec),
				    "Content-Type %s (an ASCII charset): not passed: %.300s / %.300s", cs[i].ct,
				    test_nz(out), test_nz(rec));
			}
			free(rec);
			free(out);
			free(audit_since(&m));
		}
	}
	/* Two Content-Type fields: which one a server parses cannot be told. */
	{
		char req[512], *out, *rec;

		snprintf(req, sizeof(req),
			 "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\n"
			 "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 14\r\n"
			 "Connection: close\r\n\r\n_method=DELETE",
			 hp, hp);
		mark(&m);
		out = raw_pxs(req);
		rec = test_file_since(rec_meth, m.meth);
		ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "more than one Content-Type field"),
		    "two Content-Type fields: not a 403 saying so: %.300s", test_nz(out));
		ROW(!rec_complete(rec), "two Content-Type fields: the upstream got the request: %.300s", test_nz(rec));
		free(rec);
		free(out);
		free(audit_since(&m));
	}
}

/*
 * One case of the two tests below: a POST of data (a JSON array of DATA
 * frames' strings) with content type ctype to the h2 upstream's /sink
 * through the proxy. want NULL: passed whole; else refused with a 403
 * whose audit line holds want, the upstream never getting the whole
 * request. tag and i name the case in the rows.
 */
static void h2_override_case(const char *tag, size_t i, const char *ctype, const char *data, const char *want)
{
	char json[4096], script[4200], target[64], *out = NULL, *a, *rec;
	char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
			"--cafile", px.trust, "--timeout", "10", "req", json, NULL};
	struct marks m;

	snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	snprintf(target, sizeof(target), "127.0.0.1:%u", h2port);
	snprintf(json, sizeof(json),
		 "{\"method\": \"POST\", \"path\": \"/sink\", \"end\": true, \"headers\": [[\"content-type\", "
		 "\"%s\"]], \"data\": %s}",
		 ctype, data);
	mark(&m);
	(void)runv(&out, argv);
	rec = test_file_since(rec_h2, m.h2);
	a = audit_since(&m);
	if (want == NULL) {
		ROW(test_has(out, "status 200") && test_has(rec, " end\n"),
		    "%s %zu (%s; read, allowed): not passed whole: %.300s / %.300s", tag, i, ctype, test_nz(out),
		    test_nz(rec));
	} else {
		ROW(test_has(out, "status 403") && test_has(a, "\"status\":403") && test_has(a, want),
		    "%s %zu (%s): no 403 saying '%s': %.300s / %.400s", tag, i, ctype, want, test_nz(out), test_nz(a));
		ROW(!test_has(rec, " end\n"), "%s %zu: the upstream got the whole request: %.400s", tag, i,
		    test_nz(rec));
	}
	free(a);
	free(rec);
	free(out);
}

/* HTTP/2: the same, with the value split across DATA frames. */
static void test_override_body_h2(void)
{
	static const struct {
		const char *ctype, *data, *method; /* data: JSON list of DATA pieces; method NULL: passes */
	} cases[] = {
		{ "application/x-www-form-urlencoded", "[\"a=1&_meth\", \"od=DE\", \"LETE\"]", "DELETE" },
		{ "application/x-www-form-urlencoded", "[\"_method=PA\", \"TCH&b=2\"]", "PATCH" },
		{ "application/json", "[\"{\\\"_method\\\": \\\"de\", \"lete\\\"}\"]", "DELETE" },
		{ "multipart/form-data; boundary=zz",
		  "[\"--zz\\r\\nContent-Disposition: form-data; name=_method\\r\\n\\r\\nPU\", \"T\\r\\n--zz--\\r\\n\"]",
		  "PUT" },
		{ "multipart/mixed; boundary=zz",
		  "[\"--zz\\r\\nContent-Disposition: form-data; name=_method\\r\\n\\r\\nDEL\", \"ETE\\r\\n--zz--\\r\\n\"]",
		  "DELETE" },
		{ "application/x-www-form-urlencoded", "[\"payment_method=pm\", \"_1&_method=po\", \"st\"]", NULL },
		{ "application/json", "[\"{\\\"method\\\": \\\"tools/call\\\"}\"]", NULL },
	};
	char want[160];

	NEED_READY();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].method != NULL)
			snprintf(want, sizeof(want), "names the method %s,", cases[i].method);
		h2_override_case("h2 case", i, cases[i].ctype, cases[i].data, cases[i].method != NULL ? want : NULL);
	}
}

/*
 * Round 38's bodies over HTTP/2 (its rows were HTTP/1.1 only; the stream
 * reads the body with the same formmethod through h2req.c): an RFC 2231
 * boundary*= and name*= (Go), a JSON body in UTF-16, a form media type by
 * prefix (Undertow); and review 38a's: a charset*= (Django), a _method
 * array nested 300 deep, a _method key inside a _method array.
 */
static void test_override_body_h2_r38(void)
{
	static const struct {
		const char *ctype, *data, *want; /* want NULL: passes */
	} cases[] = {
		{ "multipart/form-data; boundary=AAA; boundary*=utf-8''BBB",
		  "[\"--BBB\\r\\nContent-Disposition: form-data; name=_method\\r\\n\\r\\nDELETE\\r\\n--BBB--\\r\\n\"]",
		  "one servers may read differently" },
		{ "multipart/form-data; boundary=XyZ",
		  "[\"--XyZ\\r\\nContent-Disposition: form-data; name*=utf-8''%5Fme\", \"thod\\r\\n\\r\\nDELETE\\r\\n--XyZ--\\r\\n\"]",
		  "names the method DELETE," },
		{ "application/json; charset=utf-16le", "[\"{}\"]", "names a charset whose bytes are not ASCII" },
		{ "application/x-www-form-urlencoded; charset*=utf-8''utf-16le", "[\"a=1\"]",
		  "names a charset whose bytes are not ASCII" },
		{ "application/x-www-form-urlencodedX", "[\"_method=DEL\", \"ETE\"]", "names the method DELETE," },
		{ "application/json", "[\"{\\\"_method\\\": [{\\\"_method\\\": \\\"GET\\\"}, \\\"PUT\\\"]}\"]",
		  "names the method _METHOD," },
		{ "application/json", "[\"{\\\"_method\\\": [\" , \"" OPEN100 OPEN100 OPEN100 "\", \"" CLOSE100 CLOSE100
		  CLOSE100 ", \\\"DELETE\\\"]}\"]", "names the method ?," },
		{ "application/json", "[\"{\\\"_method\\\": [\\\"get\\\", [\\\"post\\\"]]}\"]", NULL },
		{ "application/x-www-form-urlencoded; charset=utf-8", "[\"_method=post\"]", NULL },
	};
	NEED_READY();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		h2_override_case("h2 r38 case", i, cases[i].ctype, cases[i].data, cases[i].want);
}

/*
 * Round 38 of the attack: a coded body (Content-Encoding: gzip, deflate,
 * br) on a [GET, POST] host. Express's body-parser inflates one before
 * its form or JSON is read (by default: a method-override reading
 * req.body._method acts on it), as do Apache's DEFLATE input filter
 * before PHP and Jetty's GzipHandler; the proxy read the coded bytes as
 * the form and found no _method. The body here is what the upstream
 * inflates; it is refused at its head whatever it holds. identity passes,
 * and a coded body of a type no framework reads a _method from.
 */
static void test_override_body_coded(void)
{
	static const struct {
		const char *ctype, *coding; /* field lines */
		bool refused;
	} cases[] = {
		{ "Content-Type: application/x-www-form-urlencoded\r\n", "Content-Encoding: gzip\r\n", true },
		{ "", "content-encoding: DEFLATE\r\n", true }, /* no type: read as a form */
		{ "Content-Type: application/json\r\n", "Content-Encoding: br\r\n", true },
		{ "Content-Type: multipart/form-data; boundary=XyZ\r\n", "Content-Encoding: identity, gzip\r\n", true },
		{ "Content-Type: application/x-www-form-urlencoded\r\n",
		  "Content-Encoding: identity\r\nContent-Encoding: x-gzip\r\n", true },
		{ "Content-Type: application/x-www-form-urlencoded\r\n", "Content-Encoding:  Identity \r\n", false },
		{ "Content-Type: application/x-www-form-urlencoded\r\n", "Content-Encoding: \r\n", false },
		{ "Content-Type: application/octet-stream\r\n", "Content-Encoding: gzip\r\n", false },
		/* OTLP's protobuf, gzipped as its exporters send it (review 38a) */
		{ "Content-Type: application/x-protobuf\r\n", "Content-Encoding: gzip\r\n", false },
	};
	static const struct {
		const char *ctype, *coding;
		bool refused;
	} h2cases[] = {
		{ "application/x-www-form-urlencoded", "gzip", true },
		{ "application/json", "deflate", true },
		{ "application/x-www-form-urlencoded", "identity", false },
	};
	char hp[64], script[4200], target[64], json[1024];
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", (unsigned)upm.port);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char req[1024], *out, *rec, *a;

		snprintf(req, sizeof(req),
			 "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\n%s%sContent-Length: 14\r\nConnection: close\r\n\r\n"
			 "_method=DELETE",
			 hp, hp, cases[i].ctype, cases[i].coding);
		mark(&m);
		out = raw_pxs(req);
		rec = test_file_since(rec_meth, m.meth);
		a = audit_since(&m);
		if (cases[i].refused) {
			ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "its body is coded") &&
				    test_has(out, "OTEL_EXPORTER_OTLP_COMPRESSION=none") &&
				    test_has(out, "refused by network.allowedMethods: 127.0.0.1:"),
			    "h1 coded body %zu (%.40s): not a 403 saying the body is coded: %.300s", i, cases[i].coding,
			    test_nz(out));
			ROW(!rec_complete(rec), "h1 coded body %zu: the upstream got the request: %.300s", i, test_nz(rec));
			ROW(test_has(a, "\"status\":403") && test_has(a, "its body is coded"),
			    "h1 coded body %zu: no 403 audit line saying so: %.300s", i, test_nz(a));
		} else if (strstr(cases[i].ctype, "octet-stream") != NULL ||
			   strstr(cases[i].ctype, "protobuf") != NULL) { /* no _method read: passed */
			ROW(test_has(out, "HTTP/1.1 200 ") && rec_complete(rec),
			    "h1 coded body %zu of a type not read: not passed: %.300s / %.300s", i, test_nz(out),
			    test_nz(rec));
		} else { /* identity: read, and its _method=DELETE refused as ever */
			ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "names the method DELETE,") &&
				    !test_has(out, "its body is coded"),
			    "h1 body %zu (identity): its _method not read: %.300s", i, test_nz(out));
		}
		free(a);
		free(rec);
		free(out);
	}
	snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	snprintf(target, sizeof(target), "127.0.0.1:%u", h2port);
	for (size_t i = 0; i < sizeof(h2cases) / sizeof(h2cases[0]); i++) {
		char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
				"--cafile", px.trust, "--timeout", "10", "req", json, NULL};
		char *out = NULL, *rec, *a;

		snprintf(json, sizeof(json),
			 "{\"method\": \"POST\", \"path\": \"/sink\", \"end\": true, \"headers\": [[\"content-type\", "
			 "\"%s\"], [\"content-encoding\", \"%s\"]], \"data\": [\"_method=\", \"GET\"]}",
			 h2cases[i].ctype, h2cases[i].coding);
		mark(&m);
		(void)runv(&out, argv);
		rec = test_file_since(rec_h2, m.h2);
		a = audit_since(&m);
		if (h2cases[i].refused) {
			ROW(test_has(out, "status 403") && test_has(a, "\"status\":403") && test_has(a, "its body is coded"),
			    "h2 coded body %zu (%s): no 403 saying the body is coded: %.300s / %.300s", i,
			    h2cases[i].coding, test_nz(out), test_nz(a));
			ROW(!test_has(rec, " end\n"), "h2 coded body %zu: the upstream got the whole request: %.300s", i,
			    test_nz(rec));
		} else {
			ROW(test_has(out, "status 200") && test_has(rec, " end\n"),
			    "h2 body %zu (identity): not passed whole: %.300s / %.300s", i, test_nz(out), test_nz(rec));
		}
		free(a);
		free(rec);
		free(out);
	}
}

/*
 * Round 38 of the attack: Expect: 100-continue. The upstream (pv-upstream)
 * answers 100 Continue to the head, which the proxy passes on; only then
 * does curl send the body naming _method=DELETE. The 403 comes after the
 * 100 as a clean final answer, and the upstream never gets the whole
 * body; a body naming POST goes through after its 100.
 */
static void test_override_body_continue(void)
{
	static const struct {
		const char *data;
		bool refused;
	} cases[] = {
		{ "a=1&_method=DELETE", true },
		{ "a=1&_method=post", false },
	};
	char url[128];
	struct marks m;

	NEED_READY();
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/sink", (unsigned)upm.port);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "-x", px.url, "-H",
				"Expect: 100-continue", "-H", "Content-Type: application/x-www-form-urlencoded", "--data",
				(char *)cases[i].data, url, NULL};
		char *out = NULL, *rec, *a;

		mark(&m);
		(void)runv(&out, argv);
		rec = test_file_since(rec_meth, m.meth);
		a = audit_since(&m);
		ROW(test_has(out, "HTTP/1.1 100 Continue\r\n"), "100-continue %zu: curl got no 100 Continue: %.300s", i,
		    test_nz(out));
		if (cases[i].refused) {
			ROW(test_has(out, "HTTP/1.1 403 ") &&
				    test_has(out, "the body parameter _method names the method DELETE,") &&
				    test_has(out, "\r\nConnection: close\r\n"),
			    "100-continue %zu: no clean 403 after the 100: %.400s", i, test_nz(out));
			ROW(!rec_complete(rec), "100-continue %zu: the upstream got the whole body: %.400s", i, test_nz(rec));
			ROW(test_count(a, "\"status\":403") == 1 && !test_has(a, "\"status\":200"),
			    "100-continue %zu: not one 403 audit line: %.400s", i, test_nz(a));
		} else {
			ROW(test_has(out, "HTTP/1.1 200 ") && rec_complete(rec),
			    "100-continue %zu (POST named): not passed: %.300s / %.300s", i, test_nz(out), test_nz(rec));
		}
		free(a);
		free(rec);
		free(out);
	}
}

/*
 * Round 38's 100-continue over HTTP/2 (its test was HTTP/1.1 only): the
 * client sends its HEADERS with expect: 100-continue and waits; the
 * upstream (pv-h2-upstream.py) answers 100, which the proxy passes on;
 * only then the body. A body _method=DELETE is still a 403 and the
 * upstream never gets the whole request; _method=POST passes.
 */
static void test_override_body_continue_h2(void)
{
	char json[1024], script[4200], target[64];
	struct marks m;

	NEED_READY();
	snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	snprintf(target, sizeof(target), "127.0.0.1:%u", h2port);
	for (int refused = 1; refused >= 0; refused--) {
		char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
				"--cafile", px.trust, "--timeout", "15", "req", json, NULL};
		char *out = NULL, *rec, *a;

		snprintf(json, sizeof(json),
			 "{\"method\": \"POST\", \"path\": \"/sink\", \"end\": true, \"wait100\": true, "
			 "\"headers\": [[\"content-type\", \"application/x-www-form-urlencoded\"], "
			 "[\"expect\", \"100-continue\"]], \"data\": [\"_method=\", \"%s\"]}",
			 refused ? "DELETE" : "POST");
		mark(&m);
		(void)runv(&out, argv);
		rec = test_file_since(rec_h2, m.h2);
		a = audit_since(&m);
		ROW(test_has(out, "interim 100"), "h2 100-continue (%s): no 100 passed on: %.300s",
		    refused ? "DELETE" : "POST", test_nz(out));
		if (refused) {
			ROW(test_has(out, "status 403") && test_has(a, "\"status\":403") &&
				    test_has(a, "names the method DELETE,"),
			    "h2 100-continue: no 403 for the body's DELETE: %.300s / %.300s", test_nz(out), test_nz(a));
			ROW(!test_has(rec, " end\n"), "h2 100-continue: the upstream got the whole request: %.400s",
			    test_nz(rec));
		} else {
			ROW(test_has(out, "status 200") && test_has(rec, " end\n"),
			    "h2 100-continue (POST): not passed whole: %.300s / %.300s", test_nz(out), test_nz(rec));
		}
		free(a);
		free(rec);
		free(out);
	}
}

/*
 * Review 38a, smuggling on a [GET, POST] host through the plain proxy:
 * framing the upstream may read otherwise than llhttp (CL with TE, TE
 * spellings, chunk sizes and extensions, obs-fold, a blank before ':'),
 * and a DELETE pipelined after a body or inside a GET's. Each is a 400
 * or a 403 and the upstream never gets a DELETE; only a refusal or the
 * first request reaches it.
 */
static void test_override_smuggle(void)
{
	static const struct {
		const char *fields, *body, *want; /* want: the status line's start */
	} cases[] = {
		{ "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nDELETE /sink HTTP/1.1\r\nHost: x\r\n\r\n",
		  "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked, identity\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: xchunked\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding:\r\n chunked\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding : chunked\r\n", "0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\n", "0x5\r\nabcde\r\n0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\n", "5;a\nb\r\nabcde\r\n0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\n", "10000000000000005\r\nabcde\r\n0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Transfer-Encoding: chunked\r\n", "5\r\nabcde\n0\r\n\r\n", "HTTP/1.1 400 " },
		{ "Content-Length: 5\r\nContent-Length: 6\r\n", "abcdef", "HTTP/1.1 400 " },
		{ "Content-Length: +5\r\n", "abcde", "HTTP/1.1 400 " },
		{ "X-HTTP-Method-Override:\r\n DELETE\r\nContent-Length: 0\r\n", "", "HTTP/1.1 400 " },
		{ "X-HTTP-Method-Override\t: DELETE\r\nContent-Length: 0\r\n", "", "HTTP/1.1 400 " },
		/* a DELETE pipelined after a body: judged as its own request */
		{ "Content-Length: 5\r\n",
		  "abcdeDELETE http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 403 " },
		{ "Content-Length: 5\r\n", "abcdeDELETE /sink HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n",
		  "HTTP/1.1 400 " },
	};
	char hp[64];
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", (unsigned)upm.port);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char req[1024], body[512], *out, *rec;

		snprintf(body, sizeof(body), cases[i].body, hp, hp);
		snprintf(req, sizeof(req), "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\n%s\r\n%s", hp, hp, cases[i].fields,
			 body);
		mark(&m);
		out = raw_pxs(req);
		rec = test_file_since(rec_meth, m.meth);
		ROW(test_has(out, cases[i].want), "smuggle case %zu: not '%s': %.300s", i, cases[i].want, test_nz(out));
		ROW(!test_has(rec, "DELETE /sink") && !test_has(rec, "X-HTTP-Method-Override"),
		    "smuggle case %zu: the upstream got a DELETE: %.400s", i, test_nz(rec));
		free(rec);
		free(out);
		free(audit_since(&m));
	}
	/* HTTP/2: a content-length other than the DATA, connection-specific
	 * fields, a method override in the request's trailers */
	{
		static const char *const h2cases[] = {
			"\"headers\": [[\"content-type\", \"text/plain\"], [\"content-length\", \"3\"]], "
			"\"data\": [\"abc\", \"DELETE\"]",
			"\"headers\": [[\"content-type\", \"text/plain\"], [\"content-length\", \"30\"]], "
			"\"data\": [\"abc\"]",
			"\"headers\": [[\"transfer-encoding\", \"chunked\"]], \"data\": [\"0\\r\\n\\r\\n\"]",
			"\"headers\": [[\"content-type\", \"text/plain\"]], \"data\": [\"abc\"], "
			"\"trailers\": [[\"x-http-method-override\", \"DELETE\"]]",
		};
		char json[1024], script[4200], target[64];

		snprintf(script, sizeof(script), "%s/tests/tools/pv-h2-client.py", test_srcdir());
		snprintf(target, sizeof(target), "127.0.0.1:%u", h2port);
		for (size_t i = 0; i < sizeof(h2cases) / sizeof(h2cases[0]); i++) {
			char *argv[] = {ENV_CLEAN, (char *)test_python(), script, "--proxy", px.addr, "--target", target,
					"--cafile", px.trust, "--timeout", "10", "req", json, NULL};
			char *out = NULL, *rec;

			snprintf(json, sizeof(json), "{\"method\": \"POST\", \"path\": \"/sink\", \"end\": true, %s}",
				 h2cases[i]);
			mark(&m);
			(void)runv(&out, argv);
			rec = test_file_since(rec_h2, m.h2);
			if (i < 3) {
				ROW(!test_has(out, "status 200") && !test_has(rec, " end\n"),
				    "h2 smuggle case %zu: passed whole: %.300s / %.300s", i, test_nz(out), test_nz(rec));
			} else {
				ROW(test_has(out, "status 200") && !test_has(rec, "DELETE") && !test_has(rec, "override"),
				    "h2 smuggle case %zu: a trailer's override went upstream: %.300s / %.400s", i,
				    test_nz(out), test_nz(rec));
			}
			free(rec);
			free(out);
			free(audit_since(&m));
		}
	}
}

/*
 * Round 38 of the attack: a chunked request's trailer on a [GET, POST]
 * host. The proxy judged the head and passed the raw chunked framing on,
 * trailers too, so "X-HTTP-Method-Override: DELETE" after the last chunk
 * reached the upstream (a server merging trailers into the head, Apache's
 * MergeTrailers, reads it). A trailer field there is now a 403 and the
 * request never completes; without one the body passes.
 */
static void test_override_trailer(void)
{
	char hp[64];
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", (unsigned)upm.port);
	for (int with = 1; with >= 0; with--) {
		char req[1024], *out, *rec, *a;

		snprintf(req, sizeof(req),
			 "POST http://%s/sink HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\n"
			 "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n%s\r\n",
			 hp, hp, with ? "X-HTTP-Method-Override: DELETE\r\n" : "");
		mark(&m);
		out = raw_pxs(req);
		rec = test_file_since(rec_meth, m.meth);
		a = audit_since(&m);
		if (with) {
			ROW(test_has(out, "HTTP/1.1 403 ") && test_has(out, "a trailer field after its chunked body") &&
				    test_has(out, "refused by network.allowedMethods"),
			    "a trailer on a [GET, POST] host: not a 403 naming it: %.400s", test_nz(out));
			ROW(!rec_complete(rec) && !test_has(rec, "X-HTTP-Method-Override"),
			    "a trailer on a [GET, POST] host: the upstream got it: %.400s", test_nz(rec));
			ROW(test_has(a, "\"status\":403") && test_has(a, "a trailer field after its chunked body"),
			    "a trailer on a [GET, POST] host: no 403 audit line: %.400s", test_nz(a));
		} else {
			ROW(test_has(out, "HTTP/1.1 200 ") && rec_complete(rec),
			    "no trailer: the chunked body was not passed: %.300s / %.300s", test_nz(out), test_nz(rec));
		}
		free(a);
		free(rec);
		free(out);
	}
}

/* An override naming an allowed method passes unchanged (h1 and h2). */
static void test_override_allowed(void)
{
	struct marks m;
	char *out, *rec;

	NEED_READY();
	mark(&m);
	/* _methodx and x_method are other parameters: not judged */
	out = meth_px(meth_host(), "/hello?_method=get&_methodx=DELETE&x_method=PUT",
		      "X-HTTP-Method-Override: HEAD\r\nX-HTTP-Method: get, HEAD\r\n");
	ROW(test_has(out, "HTTP/1.1 200 ") && test_has(out, "hello\n"), "h1: allowed overrides not answered 200: %.300s",
	    test_nz(out));
	rec = test_file_since(rec_meth, m.meth);
	ROW(test_has(rec, "GET /hello?_method=get&_methodx=DELETE&x_method=PUT HTTP/1.1\r\n") && test_has(rec, "\r\nX-HTTP-Method-Override: HEAD\r\n") &&
		    test_has(rec, "\r\nX-HTTP-Method: get, HEAD\r\n"),
	    "h1: the upstream did not get the request unchanged: %.400s", test_nz(rec));
	free(rec);
	free(out);
	free(audit_since(&m));

	mark(&m);
	out = curl_h2("/hello?_method=HEAD", "X-HTTP-Method-Override: get");
	ROW(test_has(out, "|200|2") && test_has(out, "hello\n"), "h2: allowed overrides not answered 200: %.300s",
	    test_nz(out));
	rec = test_file_since(rec_h2, m.h2);
	ROW(test_has(rec, ":path: /hello?_method=HEAD\n") && test_has(rec, "x-http-method-override: get\n"),
	    "h2: the upstream did not get the request unchanged: %.400s", test_nz(rec));
	free(rec);
	free(out);
	free(audit_since(&m));
}

/* A host without a method rule: overrides are none of the proxy's
 * business (the report's request, forwarded verbatim). */
static void test_override_no_rule(void)
{
	char hp[64], *out, *rec;
	struct marks m;

	NEED_READY();
	snprintf(hp, sizeof(hp), "localhost:%u", (unsigned)upp.port);
	mark(&m);
	out = meth_px(hp, "/hello?_method=DELETE",
		      "X-HTTP-Method-Override: DELETE\r\nX-HTTP-Method: PUT\r\nX-Method-Override: PATCH\r\n");
	ROW(test_has(out, "HTTP/1.1 200 "), "no rule: not answered 200: %.300s", test_nz(out));
	rec = test_file_since(rec_plain, m.plain);
	ROW(test_has(rec, "GET /hello?_method=DELETE HTTP/1.1\r\n") &&
		    test_has(rec, "\r\nX-HTTP-Method-Override: DELETE\r\nX-HTTP-Method: PUT\r\nX-Method-Override: PATCH\r\n"),
	    "no rule: the upstream did not get the request verbatim: %.400s", test_nz(rec));
	free(rec);
	free(out);
	free(audit_since(&m));
}

/*
 * k=sent put in the query (w 0), a Cookie (1) or a form body (2) of a
 * request through the proxy to the raw upstream's /form echo: its
 * answer (malloc'd, *n bytes), or NULL.
 */
static char *form_echo(int w, const char *sent, size_t *n)
{
	char req[1024];

	if (w == 0)
		snprintf(req, sizeof(req), "GET http://%s/form?k=%s HTTP/1.1\r\nHost: x\r\n\r\n", raw_addr, sent);
	else if (w == 1)
		snprintf(req, sizeof(req), "GET http://%s/form HTTP/1.1\r\nHost: x\r\nCookie: k=%s\r\n\r\n", raw_addr,
			 sent);
	else
		snprintf(req, sizeof(req),
			 "POST http://%s/form HTTP/1.1\r\nHost: x\r\nContent-Type: "
			 "application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\nk=%s",
			 raw_addr, strlen(sent) + 2, sent);
	return raw_px(req, strlen(req), n);
}

/*
 * Round 40 of the attack (F1): a real value holding '+' (PV_SECRET has
 * one at 29, as base64 secrets do: an AWS secret access key) injected raw
 * into the query, a Cookie or a form body is read by the upstream's form
 * decoder with a space for its '+'; an ordinary echo of the arguments
 * handed the sandbox the value so spelled, which no remask form matched.
 * The form with every '+' as a space is re-masked (to the sentinel's own
 * such form), raw and JSON-escaped.
 */
static void test_plus_as_space(void)
{
	char spaced_real[TOK_LEN + 1], spaced_sent[TOK_LEN + 1], quoted_real[3 * TOK_LEN + 1];
	struct marks m;
	char *out;
	size_t n;

	if (!ready)
		return;
	for (size_t k = 0, o = 0; k <= TOK_LEN; k++) {
		spaced_real[k] = sec_real[k] == '+' ? ' ' : sec_real[k];
		spaced_sent[k] = sec_sent[k] == '+' ? ' ' : sec_sent[k];
		if (sec_real[k] == '+')
			o += (size_t)snprintf(quoted_real + o, sizeof(quoted_real) - o, "%%20");
		else
			quoted_real[o++] = sec_real[k];
	}
	mark(&m);
	{
		const char *what[] = {"the query", "a Cookie", "a form body"};

		for (int w = 0; w < 3; w++) {
			out = form_echo(w, sec_sent, &n);
			ROW(test_has(out, "HTTP/1.1 200 ") && test_has(out, spaced_sent),
			    "%s: the echo is not the sentinel with spaces for its '+': %.400s", what[w], test_nz(out));
			ROW(!test_has(out, spaced_real),
			    "%s: the real value came back with spaces for its '+' (a form decoder's reading)", what[w]);
			ROW(!test_has(out, quoted_real),
			    "%s: the real value came back with %%20 for its '+' (read, then quote())", what[w]);
			no_real_value_in(out, out != NULL ? n : 0, what[w]);
			free(out);
		}
	}
	free(audit_since(&m));
}

/*
 * Round 40 of the attack (F2): a real value holding '&' or ';' (PV_AMP)
 * injected raw into the query, a Cookie or a form body is split there by
 * the upstream's reader: its echo handed the sandbox the first piece as
 * the parameter's value and the others as names, the value in clear a
 * piece at a time. Each secret piece (64 random bits) is re-masked.
 */
static void test_split_pieces(void)
{
	/* pieces of 64 random bits or more (review40b); the last, of 6
	 * bytes, is not re-masked (docs/threat-model.md) */
	static const size_t cut[][2] = {{0, 16}, {17, 33}};
	const char *what[] = {"the query", "a Cookie", "a form body"};
	char piece[TOK_LEN + 1];
	struct marks m;
	char *out;
	size_t n;

	if (!ready)
		return;
	mark(&m);
	for (int w = 0; w < 3; w++) {
		out = form_echo(w, amp_sent, &n);
		memcpy(piece, amp_sent, 16);
		piece[16] = '\0';
		ROW(test_has(out, "HTTP/1.1 200 ") && test_has(out, piece),
		    "%s: the echo does not hold the sentinel's first piece: %.400s", what[w], test_nz(out));
		for (size_t k = 0; k < sizeof(cut) / sizeof(cut[0]); k++) {
			memcpy(piece, amp_real + cut[k][0], cut[k][1] - cut[k][0]);
			piece[cut[k][1] - cut[k][0]] = '\0';
			ROW(!test_has(out, piece), "%s: piece %zu of the real value (split at its '&' and ';') came back",
			    what[w], k + 1);
		}
		no_real_value_in(out, out != NULL ? n : 0, what[w]);
		free(out);
	}
	free(audit_since(&m));
}

TEST_REGISTRAR(register_proxhard)
{
	CU_pSuite s = test_suite("proxhard", suite_up, suite_down);

	test_add(s, "9: request line not HTTP/1.0 or 1.1: 400/505, plain and TLS", test_version);
	test_add(s, "9: Transfer-Encoding not exactly chunked, or on 1.0: 400", test_transfer_encoding);
	test_add(s, "9: chunked trailers past the head buffer: the audit quotes the request's target", test_trailers);
	test_add(s, "9: a chunked request's trailer section with a bare LF or obs-fold (round 41), or past "
		    "maxHeaderBytes: 400, never upstream",
		 test_trailer_section);
	test_add(s, "9: the audit ms of a malformed request is a duration", test_malformed_ms);
	test_add(s, "9: audit: C1 controls, U+2028, bidi and zero-width code points a client chose are escaped",
		 test_audit_acting_code_points);
	test_add(s, "7: real value in the target (raw, %XX; plain, TLS): 403, redacted", test_real_in_target);
	test_add(s, "7: sentinel fully %-encoded in the target: found", test_sentinel_pct_target);
	test_add(s, "9: audit: injected only when the substituted head went upstream (dial failed: none)",
		 test_injected_not_sent);
	test_add(s, "7: real value in headers (raw, JSON, Basic, %XX): 403", test_real_in_headers);
	test_add(s, "7: real value in bodies (raw, base64, chunks, form, streamed, TLS)", test_real_in_body);
	test_add(s, "7: real value in a tunnel without TLS", test_real_in_tunnel);
	test_add(s, "8: remask: a real value read by a form decoder ('+' as a space) in an echo: re-masked",
		 test_plus_as_space);
	test_add(s, "8: remask: a real value split at its own '&' and ';' by the upstream's reader: each piece re-masked",
		 test_split_pieces);
	test_add(s, "7: real value as the server name inside a tunnel: 421 naming the credential", test_real_in_sni);
	test_add(s, "7: real value with its case changed in a name (server name, CONNECT, URL, Host, :authority)",
		 test_real_name_case);
	test_add(s, "7: real value in client WebSocket frames: not relayed", test_real_in_websocket);
	test_add(s, "8: WebSocket value split across fragments, a ping, messages", test_ws_split);
	test_add(s, "8: upstream cut mid-value (CL short, chunked unfinished): dropped", test_cut_mid_value);
	test_add(s, "8: Range/If-Range stripped towards inject hosts", test_range_stripped);
	test_add(s, "8: a 206 from an inject host (no range asked): 502; another host's passes",
		 test_partial_refused);
	test_add(s, "8: an inject host's answer in UTF-16 (a charset not ASCII's): 502; Accept-Charset does not go up",
		 test_charset_refused);
	test_add(s, "8: RFC 3229 delta encoding: A-IM does not go up to an inject host; its 226 IM: gzip is refused "
		    "(502)",
		 test_delta_encoding_refused);
	test_add(s, "8: RFC 3229 delta encoding: IM's case, lists, a second field, vcdiff/feed refused; no body, "
		    "identity, another host pass",
		 test_delta_encoding_members);
	test_add(s, "7: passavant run: a leaked value in query and body refused, not logged", test_run_leak);
	test_add(s, "method override: h1 fields refused where the rule does not allow the method",
		 test_override_h1_header);
	test_add(s, "method override: h1 _method query parameter refused", test_override_h1_query);
	test_add(s, "method override: h2 field and query parameter refused on the stream", test_override_h2);
	test_add(s, "method override: a _method after a '#' (Go keeps it in the query): a target with '#' refused",
		 test_override_fragment);
	test_add(s, "method override: a _method in the body (form, multipart, JSON; chunks): refused, look-alikes pass",
		 test_override_body_h1);
	test_add(s, "method override: a JSON body in UTF-16 or UTF-32 with no charset (a NUL byte): refused",
		 test_override_json_wide);
	test_add(s, "method override: h2 a _method in the body split across DATA frames: refused",
		 test_override_body_h2);
	test_add(s, "method override: h2 round 38's bodies (boundary*=, name*=, charset*=, UTF-16 JSON, a form type by "
		    "prefix, a deep _method array): refused",
		 test_override_body_h2_r38);
	test_add(s, "method override: a coded body (Content-Encoding) of a type read for a _method: refused at its head",
		 test_override_body_coded);
	test_add(s, "method override: a body _method refused after an upstream's 100 Continue: a clean 403, the body cut",
		 test_override_body_continue);
	test_add(s, "method override: a chunked request's trailer field on a host with a method list: 403, never upstream",
		 test_override_trailer);
	test_add(s, "method override: h2 a body _method after the upstream's 100 (expect: 100-continue): refused",
		 test_override_body_continue_h2);
	test_add(s, "method override: smuggling on a host with a method list (framing llhttp and an upstream may read "
		    "apart, a pipelined DELETE): refused",
		 test_override_smuggle);
	test_add(s, "method override: an allowed method passes unchanged (h1, h2)", test_override_allowed);
	test_add(s, "method override: a host without a method rule is untouched", test_override_no_rule);
	test_add(s, "sweep: no real value in the proxy's output or audit file", test_sweep);
}

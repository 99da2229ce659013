/*
 * test_tls.c - TLS termination on the wire (issue 4): real clients (curl,
 * python3 urllib and ssl, openssl s_client, git) trusting only the
 * session's trust.pem reach pv-upstream --tls through `passavant proxy`.
 *
 * Suites: tls_terminate (certificates, requests inside TLS, refusals,
 * audit, upstream verification), tls_clients (python3, s_client,
 * WebSocket, pipelined ClientHello, git clone, raw requests a tunnel
 * refuses before any policy rule).
 *
 * This machine sets SSL_CERT_FILE, CURL_CA_BUNDLE, GIT_SSL_CAINFO and the
 * like globally: every client runs under `env -u ...` with the trust file
 * named explicitly, so what it trusts is exactly what the test says.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/support/certs.h"
#include "tests/support/net.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/testlib.h"
#include "tests/support/pyscript.h"
#include "tests/support/upstream.h"

static char *dir;                    /* certs, records, policies, sessions */
static char rec_good[4096];          /* --record of the good upstream */
static char rec_bad[4096];           /* --record of the bad-certificate upstream */
static struct test_upstream up;      /* HTTPS, test CA, recording, git */
static struct test_upstream up_bad;  /* HTTPS, certificate from an unknown CA */
static int users;

static struct test_px px_main; /* allowedDomains 127.0.0.1 + localhost, test CA trusted */

static int fixtures_up(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	struct test_upstream_opts o;
	char git_root[4096];

	if (users++ > 0)
		return 0;
	dir = test_mkdtemp();
	if (dir == NULL || test_certs_make(dir, names) < 0)
		return -1;
	snprintf(git_root, sizeof(git_root), "%s/git", dir);
	if (mkdir(git_root, 0700) < 0 || test_git_fixture(git_root, "repo", 0) < 0)
		return -1;
	snprintf(rec_good, sizeof(rec_good), "%s/rec-good.txt", dir);
	snprintf(rec_bad, sizeof(rec_bad), "%s/rec-bad.txt", dir);
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	o.record_path = rec_good;
	o.git_root = git_root;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	o.cert_name = "bad";
	o.record_path = rec_bad;
	if (test_upstream_start(&up_bad, &o) < 0)
		return -1;
	return test_px_startf(&px_main, dir,
			      "network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
			      "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n",
			      dir);
}

static int fixtures_down(void)
{
	int bad = 0;

	if (--users > 0)
		return 0;
	bad |= test_px_stop(&px_main) != 0;
	bad |= test_upstream_stop(&up) != 0;
	bad |= test_upstream_stop(&up_bad) != 0;
	test_rmtree(dir);
	free(dir);
	dir = NULL;
	return bad ? -1 : 0;
}

/* Runs a NULL-terminated argv; stdout in *out, stderr in *err (either may
 * be NULL). Returns the exit status. */
static int run(char **out, char **err, ...) __attribute__((sentinel));
static int run(char **out, char **err, ...)
{
	char *argv[64], *a;
	char *e = NULL;
	int n = 0, rc;
	va_list ap;

	va_start(ap, err);
	while ((a = va_arg(ap, char *)) != NULL && n < 63)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	rc = test_run_capture(argv, out, &e, 60000);
	if (rc != 0) {
		int i;

		fprintf(stderr, "command exited %d:", rc);
		for (i = 0; i < n; i++)
			if (strcmp(argv[i], "-u") != 0 && (i == 0 || strcmp(argv[i - 1], "-u") != 0))
				fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, "\n%s\n", e ? e : "");
	}
	if (err != NULL)
		*err = e;
	else
		free(e);
	return rc;
}

/* ------------------------------------------------------------------ */
/* tls_terminate                                                       */
/* ------------------------------------------------------------------ */

static void test_session_files(void)
{
	DIR *d = opendir(px_main.session);
	struct dirent *e;
	int files = 0;
	char *env;

	CU_ASSERT_FATAL(d != NULL);
	CU_ASSERT(test_file_size(px_main.ca) > 0);
	CU_ASSERT(test_file_size(px_main.trust) > test_file_size(px_main.ca));
	/* No private key anywhere in the session directory. */
	while ((e = readdir(d)) != NULL) {
		char path[8192], *s;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", px_main.session, e->d_name);
		s = test_read_file(path, NULL);
		CU_ASSERT(s != NULL);
		CU_ASSERT(s == NULL || strstr(s, "PRIVATE KEY") == NULL);
		free(s);
		files++;
	}
	closedir(d);
	CU_ASSERT(files >= 3);
	/* env names trust.pem for every client family. */
	{
		char path[4200];

		snprintf(path, sizeof(path), "%s/env", px_main.session);
		env = test_read_file(path, NULL);
	}
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT(strstr(env, "export SSL_CERT_FILE='") != NULL);
	CU_ASSERT(strstr(env, "export GIT_SSL_CAINFO='") != NULL);
	CU_ASSERT(strstr(env, "/trust.pem'\n") != NULL);
	free(env);
}

static void test_curl_terminated(void)
{
	char *out = NULL, *err = NULL;

	/* Two requests on one tunnel: session-CA leaf, upstream reused. */
	CU_ASSERT_EQUAL_FATAL(run(&out, &err, TEST_ENV_CLEAN, "curl", "-sS", "-v", "--max-time", "20", "--cacert",
				  px_main.trust, "-x", px_main.url, "-D", "-", test_upstream_url(&up, "/hello"),
				  test_upstream_url(&up, "/bytes/100000"), "-o", "/dev/null", "-o", "/dev/null", NULL),
			      0);
	CU_ASSERT(err != NULL && strstr(err, "issuer: O=passavant; CN=passavant session CA ") != NULL);
	CU_ASSERT(err != NULL && strstr(err, "SSL certificate verify ok") != NULL);
	CU_ASSERT(err != NULL && strstr(err, "ALPN: server accepted http/1.1") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "X-Upstream-Conn: ") != NULL);
	if (out != NULL) {
		const char *a = strstr(out, "X-Upstream-Conn: "), *b = a ? strstr(a + 1, "X-Upstream-Conn: ") : NULL;

		CU_ASSERT(a != NULL && b != NULL && atol(a + 17) == atol(b + 17));
	}
	free(out);
	free(err);
}

static void test_curl_localhost(void)
{
	char *out = NULL, *err = NULL, url[256];

	snprintf(url, sizeof(url), "https://localhost:%u/hello", (unsigned)up.port);
	CU_ASSERT_EQUAL(run(&out, &err, TEST_ENV_CLEAN, "curl", "-sS", "-v", "--max-time", "20", "--cacert",
			    px_main.trust, "-x", px_main.url, url, NULL),
			0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	CU_ASSERT(err != NULL && strstr(err, "subject: O=passavant; CN=localhost") != NULL);
	free(out);
	free(err);
}

/*
 * The proxy reads several TLS records per read() (read-ahead) and must
 * decrypt those left in OpenSSL's buffer without waiting for the socket
 * (sockio.c, sockio_kick_tls_read()). A client reading slowly makes the proxy stop
 * and resume reading the upstream many times; each body must still arrive
 * whole, ending where the upstream stopped sending, and the kept-alive
 * connection must carry the next request.
 */
static void test_slow_reader_bodies_whole(void)
{
	static const char *const sizes[] = {"1", "16384", "65537", "300001", "3000017"};
	char *out = NULL, want[128], u1[256], u2[256];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(u1, sizeof(u1), "%s", test_upstream_url(&up, "/bytes/"));
		snprintf(u1 + strlen(u1), sizeof(u1) - strlen(u1), "%s", sizes[i]);
		snprintf(u2, sizeof(u2), "%s", u1);
		snprintf(want, sizeof(want), "%s 200 1;%s 200 0;", sizes[i], sizes[i]);
		CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "30", "--cacert",
				    px_main.trust, "-x", px_main.url, "--limit-rate", "4M", "-o", "/dev/null",
				    "-o", "/dev/null", "-w", "%{size_download} %{http_code} %{num_connects};", u1,
				    u2, NULL),
				0);
		ROW(out != NULL && strcmp(out, want) == 0, "slow reader, %s bytes twice on one connection: '%s'",
		    sizes[i], out ? out : "");
		free(out);
		out = NULL;
	}
}

static void test_big_bodies(void)
{
	char *out = NULL, path[4200], *big;

	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "30", "--cacert", px_main.trust,
			    "-x", px_main.url, "-o", "/dev/null", "-w", "%{size_download} %{http_code}",
			    test_upstream_url(&up, "/bytes/5000003"), NULL),
			0);
	CU_ASSERT(out != NULL && strcmp(out, "5000003 200") == 0);
	free(out);
	big = malloc(3000000);
	CU_ASSERT_FATAL(big != NULL);
	memset(big, 'y', 3000000);
	snprintf(path, sizeof(path), "%s/big.bin", dir);
	CU_ASSERT_EQUAL_FATAL(test_write_file(path, big, 3000000), 0);
	free(big);
	snprintf(path, sizeof(path), "@%s/big.bin", dir);
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "30", "--cacert", px_main.trust,
			    "-x", px_main.url, "--data-binary", path, test_upstream_url(&up, "/sink"), NULL),
			0);
	CU_ASSERT(out != NULL && strcmp(out, "3000000\n") == 0);
	free(out);
}

static void test_method_refused_inside(void)
{
	struct test_px p;
	char *out = NULL;
	size_t before;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
					     "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
					     "  allowedMethods: {\"127.0.0.1\": [GET, HEAD]}\n"
					     "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n",
					     dir),
			      0);
	before = test_file_size(rec_good);
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert", p.trust,
			    "-x", p.url, "--data-binary", "secret=1", test_upstream_url(&up, "/sink"), NULL),
			0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 200 Connection Established", 35) == 0);
	CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 403 Forbidden\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "passavant: POST https://127.0.0.1:") != NULL &&
		  strstr(out, "/sink refused by network.allowedMethods: 127.0.0.1\n") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_file_size(rec_good), before);
	/* GET is allowed there. */
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "20", "--cacert", p.trust, "-x",
			    p.url, test_upstream_url(&up, "/hello"), NULL),
			0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	free(out);
	/* TRACE inside TLS: 405. */
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert", p.trust,
			    "-x", p.url, "-X", "TRACE", test_upstream_url(&up, "/hello"), NULL),
			0);
	CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 405 ") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_host_mismatch(void)
{
	char *out = NULL;
	size_t before = test_file_size(rec_good);

	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert",
			    px_main.trust, "-x", px_main.url, "-H", "Host: localhost", test_upstream_url(&up, "/hello"),
			    NULL),
			0);
	CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 421 Misdirected Request\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "does not name the CONNECT target 127.0.0.1:") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_file_size(rec_good), before);
}

/* An upstream whose TLS fails for another reason than its certificate
 * (it speaks plain HTTP): 502 naming OpenSSL's reason, not the code
 * libevent queues first ("lib(0)"), and not a certificate. */
static void test_upstream_tls_error(void)
{
	struct test_upstream plain;
	struct test_upstream_opts o = {0};
	char url[160], *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_upstream_start(&plain, &o), 0);
	snprintf(url, sizeof(url), "https://%s/hello", plain.addr);
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert",
			    px_main.trust, "-x", px_main.url, url, NULL),
			0);
	CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 502 Bad Gateway\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "TLS with 127.0.0.1:") != NULL &&
		  strstr(out, " failed: TLS error: error:") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "lib(0)") == NULL && strstr(out, "does not verify") == NULL);
	if (out != NULL && strstr(out, " failed: TLS error: error:") == NULL)
		fprintf(stderr, "\n    502 body: %s\n", out);
	free(out);
	(void)test_upstream_stop(&plain);
}

static void test_upstream_unverified(void)
{
	struct test_px p;
	char *out = NULL;

	/* A certificate from a CA nobody trusts: 502, nothing forwarded. */
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert",
			    px_main.trust, "-x", px_main.url, test_upstream_url(&up_bad, "/hello"), NULL),
			0);
	CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 502 Bad Gateway\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "the certificate of 127.0.0.1:") != NULL &&
		  strstr(out, "does not verify: certificate verify failed: unable to get local issuer "
			      "certificate") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_file_size(rec_bad), 0);
	/* The good upstream, but its CA is not in extraCaCertPaths. */
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	{
		size_t before = test_file_size(rec_good);

		CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "-i", "--max-time", "20", "--cacert",
				    p.trust, "-x", p.url, test_upstream_url(&up, "/hello"), NULL),
				0);
		CU_ASSERT(out != NULL && strstr(out, "\r\nHTTP/1.1 502 Bad Gateway\r\n") != NULL);
		free(out);
		CU_ASSERT_EQUAL(test_file_size(rec_good), before);
	}
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* What the upstream says about the TLS connection of one request through p. */
static char *resumed_via(struct test_px *p, const char *host)
{
	char *out = NULL, url[256];

	snprintf(url, sizeof(url), "https://%s:%u/tls-resumed", host, (unsigned)up.port);
	if (run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "20", "--cacert", p->trust, "-x", p->url,
		url, NULL) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * Each new tunnel dials its upstream anew; the TLS session of an earlier
 * verified handshake with the same host:port is resumed (no chain sent
 * and verified again), per host:port only, and from any event loop.
 */
static void test_upstream_resumption(void)
{
	struct test_px p;
	char *a, *b, *c, *d;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
					     "network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
					     "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n",
					     dir),
			      0);
	a = resumed_via(&p, "127.0.0.1");
	b = resumed_via(&p, "127.0.0.1");
	c = resumed_via(&p, "localhost"); /* another name: its own session */
	d = resumed_via(&p, "127.0.0.1");
	CU_ASSERT(a != NULL && strcmp(a, "full\n") == 0);
	CU_ASSERT(b != NULL && strcmp(b, "resumed\n") == 0);
	CU_ASSERT(c != NULL && strcmp(c, "full\n") == 0);
	CU_ASSERT(d != NULL && strcmp(d, "resumed\n") == 0);
	free(a);
	free(b);
	free(c);
	free(d);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_excluded_host(void)
{
	struct test_px p;
	char *out = NULL, *err = NULL, ca[4200];

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
					     "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
					     "  tlsTerminate:\n    excludeDomains: [\"127.0.0.1\"]\n"),
			      0);
	/* The upstream's own certificate: only the test CA is trusted. */
	CU_ASSERT_EQUAL(run(&out, &err, TEST_ENV_CLEAN, "curl", "-sS", "-v", "--max-time", "20", "--cacert", ca, "-x",
			    p.url, test_upstream_url(&up, "/hello"), NULL),
			0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	CU_ASSERT(err != NULL && strstr(err, "passavant session CA") == NULL);
	free(out);
	free(err);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	{
		char *log = test_read_file(p.audit, NULL);

		CU_ASSERT(log != NULL && strstr(log, "\"tls\":\"passthrough\"") != NULL);
		free(log);
	}
}

/* The audit line of log (from offset from on) that contains needle, cut
 * at its end (log is modified), or NULL. */
static char *audit_line_with(char *log, size_t from, const char *needle)
{
	char *l = strstr(log + from, needle), *end;

	if (l == NULL)
		return NULL;
	while (l > log && l[-1] != '\n')
		l--;
	if ((end = strchr(l, '\n')) != NULL)
		*end = '\0';
	return l;
}

/* CLOCK_MONOTONIC in milliseconds. */
/* Reads the audit file at path until a complete line from offset from on
 * contains needle, for at most 5 s (the proxy writes it when the exchange
 * ends, a moment after the client is done). Returns the log (malloc'd,
 * the caller frees; NULL if unreadable); *line is that line as
 * audit_line_with() cuts it, or NULL at the deadline. */
static char *audit_wait(const char *path, size_t from, const char *needle, char **line)
{
	long long deadline = test_mono_ms() + 5000;

	for (;;) {
		size_t len = 0;
		char *log = test_read_file(path, &len), *l;

		*line = NULL;
		l = log != NULL && len > from ? strstr(log + from, needle) : NULL;
		if ((l != NULL && strchr(l, '\n') != NULL) || test_mono_ms() > deadline) {
			if (l != NULL)
				*line = audit_line_with(log, from, needle);
			return log;
		}
		free(log);
		usleep(10000);
	}
}

static void test_audit_terminated(void)
{
	char *log, *l;

	CU_ASSERT_EQUAL(run(NULL, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "20", "--cacert", px_main.trust,
			    "-x", px_main.url, test_upstream_url(&up, "/hello?audit=1"), "-o", "/dev/null", NULL),
			0);
	log = audit_wait(px_main.audit, 0, "\"target\":\"/hello?audit=1\"", &l);
	CU_ASSERT_FATAL(log != NULL);
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(strstr(l, "\"kind\":\"request\",\"method\":\"GET\",\"scheme\":\"https\",\"host\":\"127.0.0.1\"") !=
		  NULL);
	CU_ASSERT(strstr(l, "\"status\":200,\"decision\":\"allow\"") != NULL);
	/* curl offers h2; the upstream speaks HTTP/1.1 only, so does the tunnel. */
	CU_ASSERT(strstr(l, "\"tls\":\"terminated\",\"proto\":\"http/1.1\"}") != NULL);
	free(log);
}

/* A client that does not trust the session CA: its handshake fails and
 * the attempt is one audit line (kind connect, with the reason). */
static void test_audit_failed_handshake(void)
{
	char *log, *l, ca_path[4200];
	size_t before = 0;

	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", dir);
	free(test_read_file(px_main.audit, &before));
	/* curl trusts only the upstream's own CA, not the session CA. */
	CU_ASSERT_NOT_EQUAL(run(NULL, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "20", "--cacert", ca_path,
				"-x", px_main.url, test_upstream_url(&up, "/hello?hs=1"), "-o", "/dev/null", NULL),
			    0);
	log = audit_wait(px_main.audit, before, "TLS handshake with the client for 127.0.0.1:", &l);
	CU_ASSERT_FATAL(log != NULL);
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(strstr(l, "\"kind\":\"connect\",\"method\":\"CONNECT\"") != NULL);
	CU_ASSERT(strstr(l, "trust.pem") != NULL);
	CU_ASSERT(strstr(l, "\"tls\":\"terminated\",\"proto\":null}") != NULL);
	free(log);
}

/* A client that asks for 1 GiB inside TLS and stops reading: the proxy's
 * memory stays bounded (back-pressure through both TLS layers). */
/* A CONNECT tunnel to up through px_main, answered 200, and a TLS client
 * of ctx on it, not yet connected; *fd gets the socket. */
static SSL *tunnel_ssl_via(const struct test_px *px, SSL_CTX *ctx, int *fd)
{
	char req[256], *resp;
	SSL *ssl;
	int n;

	*fd = test_tcp_connect(px->addr, 5000);
	CU_ASSERT_FATAL(*fd >= 0);
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, up.addr);
	CU_ASSERT_FATAL(test_send_all(*fd, req, (size_t)n) == 0);
	resp = test_recv_until(*fd, "\r\n\r\n", 5000, NULL, NULL);
	CU_ASSERT_FATAL(resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0);
	free(resp);
	ssl = SSL_new(ctx);
	CU_ASSERT_FATAL(ssl != NULL && SSL_set_fd(ssl, *fd) == 1);
	return ssl;
}

static SSL *tunnel_ssl(SSL_CTX *ctx, int *fd)
{
	return tunnel_ssl_via(&px_main, ctx, fd);
}

/* Round 4 of the attack: a request inside a terminated tunnel whose
 * client hangs up before the response (after its whole body, or in the
 * middle of it) reached the upstream: it is audited all the same, with
 * what left (SPEC §6), not only exchanges that complete. */
static void test_audit_cut_request(void)
{
	static const char *const tags[] = {"cut=whole", "cut=part"};
	SSL_CTX *ctx;
	char req[512], *log, *l;
	size_t before = 0;

	free(test_read_file(px_main.audit, &before));
	ctx = SSL_CTX_new(TLS_client_method());
	CU_ASSERT_FATAL(ctx != NULL);
	for (size_t i = 0; i < 2; i++) {
		SSL *ssl;
		int fd, n;

		ssl = tunnel_ssl(ctx, &fd);
		CU_ASSERT_FATAL(SSL_connect(ssl) == 1);
		/* The second announces 64 bytes more than it sends. */
		n = snprintf(req, sizeof(req),
			     "POST /delay/2000?%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
			     "EXFIL-payload-0123456789",
			     tags[i], up.addr, i == 0 ? 24 : 88);
		CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
		usleep(200000);
		SSL_free(ssl);
		close(fd);
	}
	SSL_CTX_free(ctx);
	for (size_t i = 0; i < 2; i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "\"target\":\"/delay/2000?%s\"", tags[i]);
		log = audit_wait(px_main.audit, before, needle, &l);
		CU_ASSERT_FATAL(log != NULL);
		CU_ASSERT(l != NULL);
		if (l != NULL) {
			CU_ASSERT(strstr(l, "\"kind\":\"request\",\"method\":\"POST\"") != NULL);
			CU_ASSERT(strstr(l, "\"decision\":\"allow\"") != NULL);
			CU_ASSERT(strstr(l, "the connection ended before the exchange did") != NULL);
			CU_ASSERT(strstr(l, i == 0 ? "\"bytesUp\":24," : "\"bytesUp\":24,") != NULL);
			CU_ASSERT((strstr(l, "passed on in part") != NULL) == (i == 1));
			if (strstr(l, "the connection ended") == NULL)
				fprintf(stderr, "\n    audit line: %s\n", l);
		}
		free(log);
	}
}

static void test_slow_reader(void)
{
	SSL_CTX *ctx;
	SSL *ssl;
	char req[256], buf[4096];
	long before, after;
	int fd, n;

	ctx = SSL_CTX_new(TLS_client_method());
	CU_ASSERT_FATAL(ctx != NULL);
	ssl = tunnel_ssl(ctx, &fd);
	CU_ASSERT_FATAL(SSL_connect(ssl) == 1);
	n = snprintf(req, sizeof(req), "GET /bytes/1073741824 HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);
	CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
	CU_ASSERT(SSL_read(ssl, buf, sizeof(buf)) > 0);
	{
		/* Buffers full: the proxy and the upstream sleep (at most the
		 * 0.5 s this used to wait). */
		const pid_t quiet[] = {test_proc_pid(px_main.proc), test_proc_pid(up.proc)};

		(void)test_wait_quiet(quiet, 2, fd, 500);
	}
	before = test_rss_kib(test_proc_pid(px_main.proc));
	sleep(2);
	after = test_rss_kib(test_proc_pid(px_main.proc));
	fprintf(stderr, "\n    proxy VmRSS with a stalled 1 GiB download inside TLS: %ld then %ld KiB\n",
		before, after);
	CU_ASSERT(before > 0 && after > 0 && after - before < 4096);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
}

/* Application-data records the client received (TLS 1.3: every record
 * after the handshake has the outer type 23). */
static void count_records(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
			  void *arg)
{
	(void)version;
	(void)ssl;
	if (!write_p && content_type == SSL3_RT_HEADER && len >= 5 && ((const unsigned char *)buf)[0] == 23)
		(*(int *)arg)++;
}

/* Reads one response with a Content-Length into buf; its body length, or
 * -1. */
static long read_one_response(SSL *ssl, char *buf, size_t cap)
{
	size_t have = 0;
	long want = -1;
	char *end, *cl;
	int n;

	for (;;) {
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end != NULL && want < 0) {
			cl = strcasestr(buf, "\r\nContent-Length:");
			if (cl == NULL || cl > end)
				return -1;
			want = strtol(cl + 17, NULL, 10);
		}
		if (end != NULL && (long)(have - (size_t)(end + 4 - buf)) >= want)
			return (long)(have - (size_t)(end + 4 - buf));
		if (have + 1 >= cap)
			return -1;
		n = SSL_read(ssl, buf + have, (int)(cap - 1 - have));
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
}

/*
 * A small response is one TLS record to the client: the head the proxy
 * rewrote and the body behind it leave together (sockio_send()), not one
 * record each; on the same kept-alive tunnel a body larger than a record
 * still arrives whole, in several.
 */
static void test_small_response_one_record(void)
{
	static char buf[65536];
	SSL_CTX *ctx;
	SSL *ssl;
	char req[256];
	int fd, n, i, records = 0;

	ctx = SSL_CTX_new(TLS_client_method());
	CU_ASSERT_FATAL(ctx != NULL);
	CU_ASSERT_FATAL(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1);
	ssl = tunnel_ssl(ctx, &fd);
	SSL_set_msg_callback(ssl, count_records);
	SSL_set_msg_callback_arg(ssl, &records);
	CU_ASSERT_FATAL(SSL_connect(ssl) == 1);
	for (i = 0; i < 3; i++) {
		records = 0;
		n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);
		CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
		CU_ASSERT(read_one_response(ssl, buf, sizeof(buf)) == 6);
		CU_ASSERT(strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "\r\n\r\nhello\n") != NULL);
		if (records != 1)
			fprintf(stderr, "\n    response %d of /hello came in %d records\n", i + 1, records);
		CU_ASSERT(records == 1);
	}
	records = 0;
	n = snprintf(req, sizeof(req), "GET /bytes/40000 HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);
	CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
	CU_ASSERT(read_one_response(ssl, buf, sizeof(buf)) == 40000);
	CU_ASSERT(records >= 3);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
}

/*
 * Bulk data keeps its TLS records whole through the proxy, both ways. 8 MiB
 * go up to /sink?records=1 in full records (the upstream counts the
 * records it reads) and 8 MiB come down from /bytes (the client counts;
 * the same download straight from the upstream, no proxy, is the
 * reference). A record the proxy reads into the end of one input chain and
 * the start of the next left as two records (libevent writes a chain at a
 * time): 15-20% more records, each one more decryption for the peer, and
 * the small ones gathered by the write BIO, which then copied the large
 * record behind them.
 */
#define BULK_BYTES (8u << 20)

/* Sends a GET of /bytes/BULK_BYTES on ssl and reads the whole response;
 * the records its body came in (*records counts them), -1 on failure. */
static int bulk_download(SSL *ssl, int *records)
{
	static char chunk[16384];
	char req[256], head[512];
	size_t have = 0, got = 0;
	long want = -1;
	int n = snprintf(req, sizeof(req), "GET /bytes/%u HTTP/1.1\r\nHost: %s\r\n\r\n", BULK_BYTES, up.addr);

	if (SSL_write(ssl, req, n) != n)
		return -1;
	while (want < 0 || got < (size_t)want) {
		char *end, *cl;

		if (want >= 0) {
			if ((n = SSL_read(ssl, chunk, (int)sizeof(chunk))) <= 0)
				return -1;
			got += (size_t)n;
			continue;
		}
		if (have + 1 >= sizeof(head) || (n = SSL_read(ssl, head + have, (int)(sizeof(head) - 1 - have))) <= 0)
			return -1;
		have += (size_t)n;
		head[have] = '\0';
		if ((end = strstr(head, "\r\n\r\n")) == NULL)
			continue;
		if ((cl = strcasestr(head, "\r\nContent-Length:")) == NULL || cl > end)
			return -1;
		want = strtol(cl + 17, NULL, 10);
		got = have - (size_t)(end + 4 - head);
		*records = 0; /* the body's records from here (the head's one counted) */
	}
	return want == (long)BULK_BYTES && got == BULK_BYTES ? *records : -1;
}

static void test_bulk_records_whole(void)
{
	static char chunk[16384];
	char req[256], resp[512], *end;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;
	int fd, n, records = 0, direct, proxied;
	unsigned long long body = 0, up_records = 0;

	CU_ASSERT_FATAL(ctx != NULL);
	CU_ASSERT_FATAL(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1);

	/* The reference: the download straight from the upstream. */
	fd = test_tcp_connect(up.addr, 5000);
	CU_ASSERT_FATAL(fd >= 0);
	ssl = SSL_new(ctx);
	CU_ASSERT_FATAL(ssl != NULL && SSL_set_fd(ssl, fd) == 1);
	SSL_set_msg_callback(ssl, count_records);
	SSL_set_msg_callback_arg(ssl, &records);
	CU_ASSERT_FATAL(SSL_connect(ssl) == 1);
	direct = bulk_download(ssl, &records);
	CU_ASSERT_FATAL(direct >= (int)(BULK_BYTES / 16384));
	SSL_free(ssl);
	close(fd);

	ssl = tunnel_ssl(ctx, &fd);
	SSL_set_msg_callback(ssl, count_records);
	SSL_set_msg_callback_arg(ssl, &records);
	CU_ASSERT_FATAL(SSL_connect(ssl) == 1);

	/* Up: full records from the client; the head is a record of its
	 * own, and may leave with the body's first bytes. */
	n = snprintf(req, sizeof(req), "POST /sink?records=1 HTTP/1.1\r\nHost: %s\r\nContent-Length: %u\r\n\r\n",
		     up.addr, BULK_BYTES);
	CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
	memset(chunk, 'u', sizeof(chunk));
	for (size_t sent = 0; sent < BULK_BYTES; sent += sizeof(chunk))
		CU_ASSERT_FATAL(SSL_write(ssl, chunk, (int)sizeof(chunk)) == (int)sizeof(chunk));
	CU_ASSERT_FATAL(read_one_response(ssl, resp, sizeof(resp)) > 0);
	end = strstr(resp, "\r\n\r\n");
	CU_ASSERT_FATAL(end != NULL && sscanf(end + 4, "%llu records=%llu", &body, &up_records) == 2);
	CU_ASSERT_EQUAL(body, BULK_BYTES);
	if (up_records > BULK_BYTES / 16384 + 2)
		fprintf(stderr, "\n    %u full records up reached the upstream as %llu\n", BULK_BYTES / 16384,
			up_records);
	CU_ASSERT(up_records >= BULK_BYTES / 16384 && up_records <= BULK_BYTES / 16384 + 2);

	/* Down: as many records as straight from the upstream. */
	proxied = bulk_download(ssl, &records);
	if (proxied > direct + 2)
		fprintf(stderr, "\n    8 MiB down: %d records through the proxy, %d straight\n", proxied, direct);
	CU_ASSERT(proxied >= (int)(BULK_BYTES / 16384) && proxied <= direct + 2);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
}

/*
 * A client asks for a KeyUpdate (update_requested) after every read of a
 * download that its small receive buffer holds back. OpenSSL 3.0, the
 * proxy's TLS 1.3 server, answers inside SSL_read(), and that write
 * failed (SSL_R_BAD_LENGTH, the connection cut) whenever a record to the
 * client was only partly written: the reviewer of the bulk change (its
 * short writes made that every time the socket filled), 8 of 10 downloads
 * cut. The client side is not read while such a record waits; the body
 * must arrive whole, and the tunnel still answer afterwards. The client
 * waits 300 ms before it reads, so that the proxy's socket is full.
 */
#define KU_BYTES 8000000

static bool one_hello(SSL *ssl);

/* The proxy's answer to a CONNECT, read a byte at a time: nothing of the
 * TLS bytes behind it is taken. */
static bool connect_answered(int fd)
{
	char head[512];
	size_t have = 0;

	while (have + 1 < sizeof(head)) {
		if (recv(fd, head + have, 1, 0) != 1)
			return false;
		have++;
		head[have] = '\0';
		if (have >= 4 && memcmp(head + have - 4, "\r\n\r\n", 4) == 0)
			return strncmp(head, "HTTP/1.1 200", 12) == 0;
	}
	return false;
}

/*
 * The handshake of ssl over fd, after a CONNECT to up. pipelined: the
 * ClientHello goes in the CONNECT's own write, so the proxy finds it
 * behind the head and terminates TLS through a libevent filter (tls.c);
 * else after the proxy's 200, on its own reader (sockio.c).
 */
static bool tunnel_handshake(SSL *ssl, int fd, bool pipelined)
{
	char req[256 + 4096];
	int n = snprintf(req, 256, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, up.addr);

	if (!pipelined)
		return test_send_all(fd, req, (size_t)n) == 0 && connect_answered(fd) && SSL_set_fd(ssl, fd) == 1 &&
		       SSL_connect(ssl) == 1;
	{
		BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
		char *hello;
		long len;

		if (rb == NULL || wb == NULL) {
			BIO_free(rb);
			BIO_free(wb);
			return false;
		}
		SSL_set_bio(ssl, rb, wb);
		SSL_set_connect_state(ssl);
		if (SSL_do_handshake(ssl) != -1 || (len = BIO_get_mem_data(wb, &hello)) <= 0 ||
		    (size_t)len > sizeof(req) - (size_t)n)
			return false;
		memcpy(req + n, hello, (size_t)len);
		return test_send_all(fd, req, (size_t)n + (size_t)len) == 0 && connect_answered(fd) &&
		       SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1;
	}
}

/* A socket to px_main with a 2 KiB receive buffer, set before connect()
 * so that the window scale fits it (set after, loopback TCP stalls on its
 * own). -1 on failure. */
static int small_rcvbuf_connect(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rcv = 2048;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(strrchr(px_main.addr, ':') + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A tunnel (tunnel_handshake()) on a socket with a small receive buffer,
 * asked for KU_BYTES; returns after 300 ms unread, by when the proxy has
 * filled the socket (its send buffer grows to about 4 MB here) and is left
 * with a record partly written. *fd: the socket.
 */
static SSL *held_download(SSL_CTX *ctx, int *fd, bool pipelined)
{
	char req[256];
	SSL *ssl;
	int n;

	*fd = small_rcvbuf_connect();
	CU_ASSERT_FATAL(*fd >= 0);
	ssl = SSL_new(ctx);
	CU_ASSERT_FATAL(ssl != NULL);
	CU_ASSERT_FATAL(tunnel_handshake(ssl, *fd, pipelined));
	n = snprintf(req, sizeof(req), "GET /bytes/%d HTTP/1.1\r\nHost: %s\r\n\r\n", KU_BYTES, up.addr);
	CU_ASSERT_FATAL(SSL_write(ssl, req, n) == n);
	usleep(300 * 1000);
	return ssl;
}

static void client_key_update_held_write(bool pipelined)
{
	static char buf[16384];
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;
	char head[512], *end, *cl;
	int fd, n, updates = 0;
	size_t have = 0, got = 0;
	long want = -1;

	CU_ASSERT_FATAL(ctx != NULL);
	CU_ASSERT_FATAL(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1);
	ssl = held_download(ctx, &fd, pipelined);
	while (want < 0 || got < (size_t)want) {
		if (want < 0) {
			if (have + 1 >= sizeof(head) ||
			    (n = SSL_read(ssl, head + have, (int)(sizeof(head) - 1 - have))) <= 0)
				break;
			have += (size_t)n;
			head[have] = '\0';
			if ((end = strstr(head, "\r\n\r\n")) == NULL)
				continue;
			if ((cl = strcasestr(head, "\r\nContent-Length:")) == NULL || cl > end)
				break;
			want = strtol(cl + 17, NULL, 10);
			got = have - (size_t)(end + 4 - head);
		} else {
			if ((n = SSL_read(ssl, buf, (int)sizeof(buf))) <= 0)
				break;
			got += (size_t)n;
		}
		if (want >= 0 && SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1)
			updates++;
	}
	if (got != KU_BYTES)
		fprintf(stderr, "\n    download cut at %zu of %d bytes after %d KeyUpdates\n", got, KU_BYTES, updates);
	CU_ASSERT_EQUAL(want, KU_BYTES);
	CU_ASSERT_EQUAL(got, (size_t)KU_BYTES);
	CU_ASSERT(updates > 100);
	CU_ASSERT(one_hello(ssl));
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
}

/*
 * Busy connections keep their TLS record buffers from one request to the
 * next (sockio_drive_done()), and give them back once quiet: the first
 * buffer tick that finds a connection idle frees them, and the heap is
 * trimmed after it, the top of each worker loop's own arena included
 * (trim_heap()). A proxy of its own with two loops (so a worker's arena is
 * used on any machine); 16 kept-alive tunnels, each idle after one
 * request, then busy for 2.5 s (15,000-byte echoes: four nearly full
 * records per request), then quiet for 4.5 s (two quiet ticks release
 * the buffers, at most 3 s after the last request; upstreamKeepAliveMs is
 * 30 s here, so the upstream halves stay open and must give theirs back
 * too). While busy the proxy's VmRSS must be at least 32 KiB per tunnel
 * above where it was (the buffers are kept: about 76 KiB each here;
 * releasing them after every request kept it flat); 4.5 s later it must
 * be back within 16 KiB per tunnel. Every tunnel must still answer afterwards. ASan's allocator
 * keeps freed memory (and is too slow to make every tunnel busy), so
 * under it only the answers are checked.
 */
#define BUSY_TUNNELS 16

static void test_client_key_update_held_write(void)
{
	client_key_update_held_write(false);
}

static void test_client_key_update_held_write_filter(void)
{
	client_key_update_held_write(true);
}

/*
 * The attacker's side of the filter's writer (wbio.h): it takes every
 * record whole, so a client that asks for KeyUpdates and reads nothing
 * makes it queue an answer per request. While a download fills the
 * socket, requests go until the proxy ends the connection, which it must
 * do once WBIO_ANSWERS_MAX of answers wait above the watermark
 * (libevent's own BIO ended it at the first answer); the kernel's buffers take a few MB of answers first, so the
 * flood may go on for 400,000 requests (11 MB). The audit says why, and
 * the proxy serves the next tunnel.
 */
#define KU_FLOOD_MAX 400000

static void test_filter_key_update_flood(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl, *other;
	int fd, sent = 0;
	char *audit = NULL;

	CU_ASSERT_FATAL(ctx != NULL);
	CU_ASSERT_FATAL(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1);
	ssl = held_download(ctx, &fd, true);
	while (sent < KU_FLOOD_MAX && SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 &&
	       SSL_do_handshake(ssl) == 1)
		sent++;
	ERR_clear_error();
	if (sent >= KU_FLOOD_MAX)
		fprintf(stderr, "\n    %d KeyUpdate requests taken from a client that reads nothing\n", sent);
	CU_ASSERT(sent < KU_FLOOD_MAX);
	CU_ASSERT(sent > 1000);
	SSL_free(ssl);
	close(fd);
	for (int i = 0; i < 40; i++) {
		free(audit);
		audit = test_read_file(px_main.audit, NULL);
		if (audit != NULL && strstr(audit, "KeyUpdate or renegotiation requests without reading") != NULL)
			break;
		usleep(50 * 1000);
	}
	CU_ASSERT(audit != NULL && strstr(audit, "KeyUpdate or renegotiation requests without reading") != NULL);
	free(audit);
	/* The proxy serves the next tunnel. */
	fd = small_rcvbuf_connect();
	CU_ASSERT_FATAL(fd >= 0);
	other = SSL_new(ctx);
	CU_ASSERT_FATAL(other != NULL);
	CU_ASSERT(tunnel_handshake(other, fd, true) && one_hello(other));
	SSL_free(other);
	close(fd);
	SSL_CTX_free(ctx);
}

static bool one_hello(SSL *ssl)
{
	static char buf[4096];
	char req[256];
	int n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);

	return SSL_write(ssl, req, n) == n && read_one_response(ssl, buf, sizeof(buf)) == 6 &&
	       strncmp(buf, "HTTP/1.1 200", 12) == 0;
}

/* A POST of 15,000 bytes to /echo, which answers with the whole request:
 * each of the tunnel's four record buffers carries a nearly full record. */
#define BUSY_BODY 15000

static bool one_echo(SSL *ssl)
{
	static char req[BUSY_BODY + 256], buf[2 * BUSY_BODY];
	int h = snprintf(req, 256, "POST /echo HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", up.addr,
			 BUSY_BODY);

	memset(req + h, 'x', BUSY_BODY);
	return SSL_write(ssl, req, h + BUSY_BODY) == h + BUSY_BODY &&
	       read_one_response(ssl, buf, sizeof(buf)) == h + BUSY_BODY && strncmp(buf, "HTTP/1.1 200", 12) == 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN true
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN false
#endif

static void test_busy_buffers_released(void)
{
	SSL *ssl[BUSY_TUNNELS];
	int fd[BUSY_TUNNELS];
	SSL_CTX *ctx;
	struct test_px px;
	char opt[64];
	char *wrap[] = {"sh", "-c", opt, NULL};
	char yaml[1024];
	long idle, busy, after;
	unsigned ok = 0, bad = 0, rounds = 0;
	struct timespec t0, t;

	snprintf(opt, sizeof(opt), "exec \"$0\" \"$@\" --loops 2");
	snprintf(yaml, sizeof(yaml),
		 "network:\n  allowedDomains: [\"127.0.0.1\"]\n  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n"
		 "  limits:\n    upstreamKeepAliveMs: 30000\n",
		 dir);
	CU_ASSERT_FATAL(test_px_start(&px, dir, wrap, yaml) == 0);
	ctx = SSL_CTX_new(TLS_client_method());
	CU_ASSERT_FATAL(ctx != NULL);
	for (int i = 0; i < BUSY_TUNNELS; i++) {
		ssl[i] = tunnel_ssl_via(&px, ctx, &fd[i]);
		CU_ASSERT_FATAL(SSL_connect(ssl[i]) == 1);
		CU_ASSERT_FATAL(one_hello(ssl[i]));
	}
	/* The handshakes' heap is trimmed once accepting pauses. */
	usleep(2500 * 1000);
	idle = test_rss_kib(test_proc_pid(px.proc));
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < BUSY_TUNNELS; i++)
			one_echo(ssl[i]) ? ok++ : bad++;
		rounds++;
		(void)clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 2500);
	busy = test_rss_kib(test_proc_pid(px.proc));
	usleep(4500 * 1000);
	after = test_rss_kib(test_proc_pid(px.proc));
	fprintf(stderr, "\n    %d tunnels, 2 loops: proxy VmRSS %ld KiB idle, %ld KiB busy (%u requests each), "
		"%ld KiB 4.5 s later\n", BUSY_TUNNELS, idle, busy, rounds, after);
	CU_ASSERT(bad == 0 && ok == rounds * BUSY_TUNNELS);
	if (UNDER_ASAN) {
		fprintf(stderr, "    (ASan keeps freed memory: VmRSS not compared)\n");
	} else {
		/* Busy: at least 64 requests a second each (256 drives). */
		CU_ASSERT(rounds >= 160);
		CU_ASSERT(idle > 0 && busy - idle > BUSY_TUNNELS * 32);
		CU_ASSERT(idle > 0 && after > 0 && after - idle < BUSY_TUNNELS * 16);
	}
	/* Released buffers come back with the next request. */
	for (int i = 0; i < BUSY_TUNNELS; i++) {
		CU_ASSERT(one_hello(ssl[i]));
		SSL_free(ssl[i]);
		close(fd[i]);
	}
	SSL_CTX_free(ctx);
	CU_ASSERT(test_px_stop(&px) == 0);
}

/* ------------------------------------------------------------------ */
/* tls_clients                                                         */
/* ------------------------------------------------------------------ */


/* The status of METHOD /hello sent on ssl (Host: up), or -1 when no
 * whole answer came back; *why gets the body's first line (a refusal's
 * reason), cut to cap. */
static int status_on(SSL *ssl, const char *method, char *why, size_t cap)
{
	static char buf[8192];
	char req[256], *body;
	int n = snprintf(req, sizeof(req), "%s /hello HTTP/1.1\r\nHost: %s\r\n\r\n", method, up.addr);

	why[0] = '\0';
	if (SSL_write(ssl, req, n) != n)
		return -1;
	if (strcmp(method, "HEAD") == 0) {
		/* a head alone */
		size_t have = 0;

		buf[0] = '\0';
		while (strstr(buf, "\r\n\r\n") == NULL) {
			if (have + 1 >= sizeof(buf) || (n = SSL_read(ssl, buf + have, (int)(sizeof(buf) - 1 - have))) <= 0)
				return -1;
			have += (size_t)n;
			buf[have] = '\0';
		}
	} else if (read_one_response(ssl, buf, sizeof(buf)) < 0) {
		return -1;
	}
	if ((body = strstr(buf, "\r\n\r\n")) != NULL)
		(void)snprintf(why, cap, "%.*s", (int)strcspn(body + 4, "\n"), body + 4);
	return atoi(buf + 9);
}

/*
 * A SIGHUP reload applies to the next request of a kept-alive terminated
 * tunnel (SPEC §3.5, docs/config.md): a tunnel keeps the decision of its
 * target between requests, made under the policy it was made under, and
 * forgets it with that policy. Three tunnels open under a policy that
 * allows GET; then a method rule, a deny, and the first policy again,
 * each reload met by a tunnel that last decided under an older one (a
 * refusal closes its tunnel: each tunnel ends with its first refusal).
 */
static void test_reload_inside_tunnel(void)
{
	static const char allow[] = "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
				    "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n";
	static const char head_only[] = "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
					"  allowedMethods: {\"127.0.0.1\": [HEAD]}\n"
					"  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n";
	static const char deny[] = "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
				   "  deniedDomains: [\"127.0.0.1\"]\n"
				   "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n";
	/* -v: the proxy says when a reload is done */
	char *wrap[] = {"sh", "-c", "exec \"$0\" \"$@\" -v", NULL};
	struct test_px px;
	SSL_CTX *ctx;
	SSL *ssl[3];
	int fd[3], st;
	char yaml[1024], why[256];

	snprintf(yaml, sizeof(yaml), allow, dir);
	CU_ASSERT_FATAL(test_px_start(&px, dir, wrap, yaml) == 0);
	ctx = SSL_CTX_new(TLS_client_method());
	CU_ASSERT_FATAL(ctx != NULL);
	for (int i = 0; i < 3; i++) {
		ssl[i] = tunnel_ssl_via(&px, ctx, &fd[i]);
		CU_ASSERT_FATAL(SSL_connect(ssl[i]) == 1);
		st = status_on(ssl[i], "GET", why, sizeof(why));
		ROW(st == 200, "tunnel %d, first GET: %d %s", i, st, why);
	}
	/* a method rule: GET refused on a tunnel that decided under the
	 * first policy; HEAD passes on another, which now decided under it */
	snprintf(yaml, sizeof(yaml), head_only, dir);
	CU_ASSERT_FATAL(test_px_reload(&px, yaml) == 0);
	st = status_on(ssl[0], "GET", why, sizeof(why));
	ROW(st == 403 && strstr(why, "allowedMethods") != NULL,
	    "GET after a reload to [HEAD]: expected 403 by allowedMethods, got %d %s", st, why);
	st = status_on(ssl[2], "HEAD", why, sizeof(why));
	ROW(st == 200, "HEAD after a reload to [HEAD]: expected 200, got %d", st);
	/* a deny, met by a tunnel whose last request was two policies ago */
	snprintf(yaml, sizeof(yaml), deny, dir);
	CU_ASSERT_FATAL(test_px_reload(&px, yaml) == 0);
	st = status_on(ssl[1], "GET", why, sizeof(why));
	ROW(st == 403 && strstr(why, "deniedDomains") != NULL,
	    "GET after a reload to a deny: expected 403 by deniedDomains, got %d %s", st, why);
	/* the first policy again: the method rule the HEAD was decided
	 * under is not kept either */
	snprintf(yaml, sizeof(yaml), allow, dir);
	CU_ASSERT_FATAL(test_px_reload(&px, yaml) == 0);
	st = status_on(ssl[2], "GET", why, sizeof(why));
	ROW(st == 200, "GET after a reload back to the first policy: expected 200, got %d %s", st, why);
	for (int i = 0; i < 3; i++) {
		SSL_free(ssl[i]);
		close(fd[i]);
	}
	SSL_CTX_free(ctx);
	CU_ASSERT_EQUAL(test_px_stop(&px), 0);
}

/*
 * Once its handshake is done the proxy reads a TLS side itself
 * (sockio_tls_read() in proxy/sockio.c). An upstream's TLS 1.3 KeyUpdate
 * asking for ours is read there (SSL_read() finds no data in it);
 * OpenSSL 3.0 answers it with the next
 * write: a small request written at once (tls_write_now()) or, when the
 * KeyUpdate came while the proxy's writes to the upstream were blocked (an
 * upload the upstream stopped reading), libevent's retried write. Either
 * way the kept-alive tunnel must carry the next request, and the upload
 * must arrive whole.
 */
static void test_upstream_key_update(void)
{
	char yaml[1024], path[4200], url[512], *out = NULL;
	struct test_px px;
	size_t big = 24u << 20;
	char *data = malloc(big);

	CU_ASSERT_FATAL(data != NULL);
	snprintf(yaml, sizeof(yaml),
		 "network:\n  allowedDomains: [\"127.0.0.1\"]\n  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n",
		 dir);
	CU_ASSERT_FATAL(test_px_start(&px, dir, NULL, yaml) == 0);
	/* at once, then a request on the same connection */
	snprintf(url, sizeof(url), "%s", test_upstream_url(&up, "/keyupdate"));
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "20", "--cacert", px.trust, "-x",
			    px.url, "-w", "%{http_code} %{num_connects};", url, test_upstream_url(&up, "/hello"), NULL),
			0);
	ROW(out != NULL && strcmp(out, "0\n200 1;hello\n200 0;") == 0, "a KeyUpdate, then /hello: '%s'",
	    out != NULL ? out : "");
	free(out);
	out = NULL;
	/* while the upstream reads nothing of a 24 MiB upload for 1.5 s */
	memset(data, 'k', big);
	snprintf(path, sizeof(path), "%s/ku.bin", dir);
	CU_ASSERT_EQUAL_FATAL(test_write_file(path, data, big), 0);
	free(data);
	snprintf(path, sizeof(path), "@%s/ku.bin", dir);
	snprintf(url, sizeof(url), "%s", test_upstream_url(&up, "/keyupdate?after=700&stall=1500"));
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "curl", "-sS", "--max-time", "30", "--cacert", px.trust, "-x",
			    px.url, "-w", "%{http_code} %{num_connects};", "--data-binary", path, url, "--next",
			    "-sS", "--max-time", "30", "--cacert", px.trust, "-x", px.url, "-w",
			    "%{http_code} %{num_connects};", test_upstream_url(&up, "/hello"), NULL),
			0);
	ROW(out != NULL && strcmp(out, "25165824\n200 1;hello\n200 0;") == 0,
	    "a KeyUpdate while the upload is blocked, then /hello: '%s'", out != NULL ? out : "");
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&px), 0);
}

/*
 * python3 helper: argv[1] mode, then proxy host:port, target host:port,
 * cafile, extra. Modes:
 *   urllib     GET /hello with urllib, a ProxyHandler and cafile
 *   pipelined  CONNECT head and the ClientHello in one write, then GET
 *   ws         WebSocket /ws inside TLS: one masked text frame, echoed
 *   sni        TLS with server_hostname=extra (no name check), GET /hello
 */
static const char py_helper[] =
	"import urllib.request, os, base64\n"
	"ctx = ssl.create_default_context(cafile=cafile)\n"
	"req = b'GET /hello HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n' % target.encode()\n"
	"if mode == 'urllib':\n"
	"    op = urllib.request.build_opener(urllib.request.ProxyHandler({'https': 'http://' + proxy}),\n"
	"        urllib.request.HTTPSHandler(context=ctx))\n"
	"    sys.stdout.write(op.open('https://%s/hello' % target).read().decode())\n"
	"elif mode == 'sni':\n"
	"    ctx.check_hostname = False\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=sys.argv[5])\n"
	"    t.sendall(req); sys.stdout.write(read_all(t).decode())\n"
	"elif mode == 'pipelined':\n"
	"    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()\n"
	"    o = ctx.wrap_bio(inc, out, server_hostname=th)\n"
	"    try: o.do_handshake()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    s = tunnel(out.read())\n"
	"    while True:\n"
	"        try:\n"
	"            o.do_handshake(); break\n"
	"        except ssl.SSLWantReadError:\n"
	"            s.sendall(out.read()); c = s.recv(65536)\n"
	"            if not c: raise SystemExit('closed in handshake')\n"
	"            inc.write(c)\n"
	"    o.write(req); s.sendall(out.read())\n"
	"    data = b''\n"
	"    while b'hello\\n' not in data:\n"
	"        c = s.recv(65536)\n"
	"        if not c: break\n"
	"        inc.write(c)\n"
	"        while True:\n"
	"            try: d = o.read(65536)\n"
	"            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError): break\n"
	"            if not d: break\n"
	"            data += d\n"
	"    sys.stdout.write(data.decode())\n"
	"elif mode == 'ws':\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th)\n"
	"    key = base64.b64encode(os.urandom(16))\n"
	"    t.sendall(b'GET /ws HTTP/1.1\\r\\nHost: %s\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n'\n"
	"              b'Sec-WebSocket-Version: 13\\r\\nSec-WebSocket-Key: %s\\r\\n\\r\\n' % (target.encode(), key))\n"
	"    head = b''\n"
	"    while b'\\r\\n\\r\\n' not in head: head += t.recv(1)\n"
	"    assert head.startswith(b'HTTP/1.1 101'), head\n"
	"    payload = b'hello through TLS'; mask = b'\\x01\\x02\\x03\\x04'\n"
	"    t.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))\n"
	"    fr = b''\n"
	"    while len(fr) < 2 + len(payload): fr += t.recv(65536)\n"
	"    assert fr[0] == 0x81 and fr[1] == len(payload), fr\n"
	"    sys.stdout.write(fr[2:2 + len(payload)].decode())\n";

static char py_path[4200];

/*
 * python3 helper for the TLS edge cases of the proxy's own TLS I/O
 * (read-ahead, records pulled from OpenSSL, gathered writes: docs/tls.md):
 * argv[1] mode, proxy host:port, target host:port, cafile, then:
 *   split               ClientHello in two sends, the second once the
 *                       proxy has read the first and gone back to sleep
 *                       (settle(), at most 0.5 s); the client Finished and
 *                       a GET in one send: prints the status line, or STALL
 *   halfclose N         GET /bytes/N, then close_notify at once (TLS
 *                       half-close), reads once the proxy is backed up
 *                       (settle(), at most 1 s): "got N notify True"
 *   late N              GET /bytes/N with Connection: close, reads 3 s
 *                       later: "got N"
 *   serve N CERT KEY    a TLS upstream (target unused): each connection
 *                       gets N bytes close-delimited, then close_notify,
 *                       and the TCP close only after the peer's
 *                       close_notify (Python's unwrap())
 *   slow N RATE         GET / from target (a `serve` upstream); once the
 *                       proxy is backed up (settle(), at most 1 s: the
 *                       upstream has sent all, close_notify included),
 *                       read at RATE bytes/s: "got N eof" or "STALL got K"
 */
static const char py_edge[] =
	"import time, threading\n"
	"def bio():\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()\n"
	"    return inc, out, ctx.wrap_bio(inc, out, server_hostname=th)\n"
	"def handshake(s, inc, out, o):\n"
	"    while True:\n"
	"        try:\n"
	"            o.do_handshake(); return\n"
	"        except ssl.SSLWantReadError:\n"
	"            s.sendall(out.read()); c = s.recv(65536)\n"
	"            if not c: raise SystemExit('closed in handshake')\n"
	"            inc.write(c)\n"
	"def drain(s, inc, o, until=None):\n"
	"    data, notify, shut = bytearray(), False, False\n"
	"    while until is None or until not in data:\n"
	"        c = s.recv(65536)\n"
	"        if not c: break\n"
	"        inc.write(c)\n"
	"        try:\n"
	"            while True:\n"
	"                d = o.read(65536)\n"
	"                if not d: notify = True; break\n"
	"                data += d\n"
	"        except ssl.SSLWantReadError: pass\n"
	"        except ssl.SSLZeroReturnError: notify = True\n"
	"        if notify and not shut:\n"
	"            # Nothing follows close_notify: end TCP as a client does,\n"
	"            # and read on until the proxy closes too.\n"
	"            s.shutdown(socket.SHUT_WR); shut = True\n"
	"    return bytes(data), notify\n"
	"if mode == 'split':\n"
	"    s = tunnel(); inc, out, o = bio()\n"
	"    try: o.do_handshake()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    ch = out.read(); s.sendall(ch[:10]); settle(s, 0.5); s.sendall(ch[10:])\n"
	"    while True:\n"
	"        c = s.recv(65536)\n"
	"        if not c: raise SystemExit('closed in handshake')\n"
	"        inc.write(c)\n"
	"        try:\n"
	"            o.do_handshake(); break\n"
	"        except ssl.SSLWantReadError: pass\n"
	"    o.write(b'GET /hello HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % target.encode())\n"
	"    s.sendall(out.read()); s.settimeout(5)\n"
	"    try: data, _ = drain(s, inc, o, b'hello\\n')\n"
	"    except socket.timeout: data = b'STALL'\n"
	"    print(data.split(b'\\r\\n')[0].decode())\n"
	"elif mode in ('halfclose', 'late'):\n"
	"    n = int(sys.argv[5]); s = tunnel(); inc, out, o = bio(); handshake(s, inc, out, o)\n"
	"    close = b'Connection: close\\r\\n' if mode == 'late' else b''\n"
	"    o.write(b'GET /bytes/%d HTTP/1.1\\r\\nHost: %s\\r\\n%s\\r\\n' % (n, target.encode(), close))\n"
	"    if mode == 'halfclose':\n"
	"        try: o.unwrap()\n"
	"        except ssl.SSLWantReadError: pass\n"
	"    s.sendall(out.read())\n"
	"    if mode == 'halfclose': settle(s, 1)\n"
	"    else: time.sleep(3)  # past the proxy's 2 s linger (conn.c)\n"
	"    data, notify = drain(s, inc, o)\n"
	"    body = data.partition(b'\\r\\n\\r\\n')[2]\n"
	"    print('got %d notify %s' % (len(body), notify) if mode == 'halfclose' else 'got %d' % len(body))\n"
	"elif mode == 'filterhalf':\n"
	"    n = int(sys.argv[5]); inc, out, o = bio()\n"
	"    try: o.do_handshake()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    s = tunnel(out.read())\n"
	"    handshake(s, inc, out, o); s.sendall(out.read())\n"
	"    o.write(b'GET /bytes/%d HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (n, target.encode()))\n"
	"    try: o.unwrap()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    s.sendall(out.read()); settle(s, 1)\n"
	"    data, notify = drain(s, inc, o)\n"
	"    print('got %d notify %s' % (len(data.partition(b'\\r\\n\\r\\n')[2]), notify))\n"
	"elif mode == 'lateclose':\n"
	"    n = int(sys.argv[5]); s = tunnel(); inc, out, o = bio(); handshake(s, inc, out, o)\n"
	"    o.write(b'GET /bytes/%d HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (n, target.encode())); s.sendall(out.read())\n"
	"    settle(s, 1)\n"
	"    try: o.unwrap()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    s.sendall(out.read()); s.settimeout(15)\n"
	"    try: data, notify = drain(s, inc, o)\n"
	"    except socket.timeout: print('STALL'); sys.exit(0)\n"
	"    print('got %d notify %s' % (len(data.partition(b'\\r\\n\\r\\n')[2]), notify))\n"
	"elif mode == 'wssend':\n"
	"    n = int(sys.argv[5]); s = tunnel(); inc, out, o = bio(); handshake(s, inc, out, o)\n"
	"    o.write(b'GET /ws HTTP/1.1\\r\\nHost: %s\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n'\n"
	"            b'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n' % target.encode())\n"
	"    s.sendall(out.read()); data, _ = drain(s, inc, o, b'\\r\\n\\r\\n')\n"
	"    assert data.startswith(b'HTTP/1.1 101'), data\n"
	"    o.write(b'y' * n)\n"
	"    try: o.unwrap()\n"
	"    except ssl.SSLWantReadError: pass\n"
	"    s.sendall(out.read()); s.settimeout(2)\n"
	"    try:\n"
	"        while s.recv(65536): pass\n"
	"    except OSError: pass\n"
	"    print('sent %d' % n)\n"
	"elif mode == 'servews':\n"
	"    cert, key = sys.argv[5], sys.argv[6]\n"
	"    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); sctx.load_cert_chain(cert, key)\n"
	"    ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(16)\n"
	"    print('listening on 127.0.0.1:%d' % ls.getsockname()[1], flush=True)\n"
	"    def one(c):\n"
	"        t = sctx.wrap_socket(c, server_side=True); req = b''\n"
	"        while b'\\r\\n\\r\\n' not in req: req += t.recv(4096)\n"
	"        t.sendall(b'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n')\n"
	"        tot = len(req.partition(b'\\r\\n\\r\\n')[2])\n"
	"        while True:\n"
	"            try: d = t.recv(65536)\n"
	"            except (ssl.SSLError, OSError): break\n"
	"            if not d: break\n"
	"            tot += len(d)\n"
	"        print('ws got %d' % tot, flush=True)\n"
	"    while True:\n"
	"        c, _ = ls.accept(); threading.Thread(target=one, args=(c,), daemon=True).start()\n"
	"elif mode == 'servecut':\n"
	"    n, cert, key = int(sys.argv[5]), sys.argv[6], sys.argv[7]\n"
	"    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); sctx.load_cert_chain(cert, key)\n"
	"    ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(16)\n"
	"    print('listening on 127.0.0.1:%d' % ls.getsockname()[1], flush=True)\n"
	"    while True:\n"
	"        c, _ = ls.accept(); t = sctx.wrap_socket(c, server_side=True); req = b''\n"
	"        while b'\\r\\n\\r\\n' not in req: req += t.recv(4096)\n"
	"        t.sendall(b'HTTP/1.1 200 OK\\r\\nConnection: close\\r\\n\\r\\n' + b'x' * n)\n"
	"        c.shutdown(socket.SHUT_RDWR); c.close()\n"
	"elif mode == 'readend':\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    ctx.options &= ~getattr(ssl, 'OP_IGNORE_UNEXPECTED_EOF', 0)  # some builds set it: see the cut\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th, suppress_ragged_eofs=False)\n"
	"    t.sendall(b'GET / HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % target.encode()); t.settimeout(10)\n"
	"    data = b''; how = 'clean'\n"
	"    try:\n"
	"        while True:\n"
	"            d = t.recv(65536)\n"
	"            if not d: break\n"
	"            data += d\n"
	"    except ssl.SSLEOFError: how = 'cut'\n"
	"    except ssl.SSLError as e: how = 'cut'\n"
	"    print('%s %d' % (how, len(data.partition(b'\\r\\n\\r\\n')[2])))\n"
	"elif mode == 'badnext':\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th); t.settimeout(10)\n"
	"    t.sendall(b'GET /hello?first=%s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (b'a' * 200, target.encode()))\n"
	"    data = b''\n"
	"    while b'hello\\n' not in data:\n"
	"        d = t.recv(65536)\n"
	"        if not d: break\n"
	"        data += d\n"
	"    print(data.split(b'\\r\\n')[0].decode())\n"
	"    t.sendall(b'GET /x HTTP/1.1\\r\\nHost: %s\\nBad: y\\r\\n\\r\\n' % target.encode())\n"
	"    data = b''\n"
	"    try:\n"
	"        while b'\\r\\n' not in data:\n"
	"            d = t.recv(65536)\n"
	"            if not d: break\n"
	"            data += d\n"
	"    except ssl.SSLError: pass\n"
	"    print(data.split(b'\\r\\n')[0].decode())\n"
	"elif mode == 'inner':\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th); t.settimeout(10)\n"
	"    t.sendall(sys.argv[5].replace('|', '\\r\\n').encode())\n"
	"    head, _, body = read_all(t, (socket.timeout, ssl.SSLError)).partition(b'\\r\\n\\r\\n')\n"
	"    print(head.split(b'\\r\\n')[0].decode()); print(body.decode(), end='')\n"
	"elif mode == 'serve':\n"
	"    n, cert, key = int(sys.argv[5]), sys.argv[6], sys.argv[7]\n"
	"    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); sctx.load_cert_chain(cert, key)\n"
	"    ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(16)\n"
	"    print('listening on 127.0.0.1:%d' % ls.getsockname()[1], flush=True)\n"
	"    def one(c):\n"
	"        try:\n"
	"            t = sctx.wrap_socket(c, server_side=True); req = b''\n"
	"            while b'\\r\\n\\r\\n' not in req:\n"
	"                d = t.recv(4096)\n"
	"                if not d: return\n"
	"                req += d\n"
	"            t.sendall(b'HTTP/1.1 200 OK\\r\\nConnection: close\\r\\n\\r\\n' + b'x' * n)\n"
	"            t.settimeout(30); t.unwrap(); c.close()\n"
	"        except Exception as e: print('serve:', e, file=sys.stderr, flush=True)\n"
	"    while True:\n"
	"        c, _ = ls.accept(); threading.Thread(target=one, args=(c,), daemon=True).start()\n"
	"elif mode == 'slow':\n"
	"    n, rate = int(sys.argv[5]), float(sys.argv[6])\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    t = ctx.wrap_socket(tunnel(), server_hostname=th)\n"
	"    t.sendall(b'GET / HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % target.encode()); t.settimeout(8)\n"
	"    settle(t, 1)\n"
	"    data = bytearray()\n"
	"    try:\n"
	"        while True:\n"
	"            d = t.recv(16384)\n"
	"            if not d: break\n"
	"            data += d; time.sleep(len(d) / rate)\n"
	"        print('got %d eof' % len(data.partition(b'\\r\\n\\r\\n')[2]))\n"
	"    except socket.timeout:\n"
	"        print('STALL got %d' % len(data.partition(b'\\r\\n\\r\\n')[2]))\n";

static char py_edge_path[4200];

static int edge(char **out, const char *mode, const char *target, const char *a, const char *b)
{
	return run(out, NULL, TEST_ENV_CLEAN, (char *)test_python(), py_edge_path, (char *)mode, px_main.addr,
		   (char *)target, px_main.trust, (char *)a, (char *)b, NULL);
}

/* Runs edge() and checks that it exits 0 printing exactly want; what
 * names the case in a failure. */
static void edge_expect(const char *mode, const char *target, const char *a, const char *b, const char *want,
			const char *what)
{
	char *out = NULL;

	CU_ASSERT_EQUAL(edge(&out, mode, target, a, b), 0);
	ROW(out != NULL && strcmp(out, want) == 0, "%s: '%s'", what, out ? out : "");
	free(out);
}

/* Starts py_edge's server mode with the test leaf (server.pem/key) and
 * arg (a size, or NULL); *addr gets its "host:port". */
static struct test_proc *edge_server(const char *mode, const char *arg, char *addr, size_t addrlen)
{
	char cert[4300], key[4300];
	char *argv[] = {(char *)test_python(), py_edge_path, (char *)mode, (char *)px_main.addr, "-",
			(char *)px_main.trust, (char *)arg, cert, key, NULL};

	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(key, sizeof(key), "%s/server.key", dir);
	if (arg == NULL) { /* no size: cert and key move up */
		argv[6] = cert;
		argv[7] = key;
		argv[8] = NULL;
	}
	return test_proc_start(argv, "listening on ", addr, addrlen, 10000);
}

/* The client's Finished and its first request in one read, after a
 * ClientHello that came in two pieces: the request must not wait in
 * OpenSSL's buffer for the socket. */
static void test_edge_split_hello(void)
{
	for (int i = 0; i < 2; i++)
		edge_expect("split", up.addr, NULL, NULL, "HTTP/1.1 200 OK\n", "split ClientHello, then Finished + GET");
}

/* A client that half-closes TLS after its request and reads once the
 * proxy is backed up, or reads only 3 s (past the proxy's linger) after a
 * Connection: close request: the whole body still arrives, the proxy's
 * last encrypted bytes are not dropped when it closes. Sizes around what
 * the kernel's socket buffers hold (about 4 MB here), where the tail is in
 * the proxy when the client starts reading. */
static void test_edge_close_delivers(void)
{
	static const char *const sizes[] = {"4120000", "4150000", "4180000"};
	char want[64], what[64];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(want, sizeof(want), "got %s notify True\n", sizes[i]);
		snprintf(what, sizeof(what), "TLS half-close, %s bytes", sizes[i]);
		edge_expect("halfclose", up.addr, sizes[i], NULL, want, what);
	}
	edge_expect("late", up.addr, "4140000", NULL, "got 4140000\n", "Connection: close, read 3 s later");
}

/* TLS half-close with a filter under the client's TLS (CONNECT and
 * ClientHello in one write), and a close_notify that comes in its own
 * segment while the proxy is backed up: the whole body, then the
 * proxy's close_notify. (The first crashed the proxy: a re-entered
 * drive(); the second stalled: libevent stops writing on close_notify.) */
static void test_edge_half_close_more(void)
{
	for (int i = 0; i < 2; i++)
		edge_expect("filterhalf", up.addr, "4000000", NULL, "got 4000000 notify True\n",
			    "filter under TLS, half-close with the request");
	edge_expect("lateclose", up.addr, "8000000", NULL, "got 8000000 notify True\n",
		    "close_notify 1 s after the request");
}

/* An upgraded stream inside TLS: the client sends 2 MB and close_notify;
 * the upstream receives all of it before the proxy closes. */
static void test_edge_ws_last_bytes(void)
{
	char addr[64], *out = NULL, *got;
	struct test_proc *srv = edge_server("servews", NULL, addr, sizeof(addr));

	CU_ASSERT_FATAL(srv != NULL);
	CU_ASSERT_EQUAL(edge(&out, "wssend", addr, "2000000", NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "sent 2000000\n") == 0);
	free(out);
	(void)test_proc_stop(srv, SIGTERM, 5000);
	got = test_proc_stdout(srv);
	ROW(got != NULL && strstr(got, "ws got 2000000\n") != NULL, "upstream of the upgraded stream: '%s'",
	    got ? got : "");
	free(got);
	test_proc_free(srv);
}

/* An upstream that ends a close-delimited body by closing TCP without
 * close_notify: the body may be cut short, and the client must be able to
 * tell, as it would on a direct connection (no close_notify from the
 * proxy either). With close_notify (the test below) the end is clean. */
static void test_edge_truncation_passed_on(void)
{
	char addr[64];
	struct test_proc *srv = edge_server("servecut", "200000", addr, sizeof(addr));

	CU_ASSERT_FATAL(srv != NULL);
	edge_expect("readend", addr, NULL, NULL, "cut 200000\n",
		    "upstream closed TCP without close_notify after a close-delimited body");
	(void)test_proc_stop(srv, SIGTERM, 5000);
	test_proc_free(srv);
}

/* A head refused right after a completed request in a terminated tunnel
 * (bare LF): the parser's buffers were freed with the first request, and
 * the refusal's audit line must not read that request's target from
 * them (under ASan this was a use-after-free). */
static void test_edge_refusal_after_request(void)
{
	char *log, *l;

	edge_expect("badnext", up.addr, NULL, NULL, "HTTP/1.1 200 OK\nHTTP/1.1 400 Bad Request\n",
		    "a good request, then a head with a bare LF in the same tunnel");
	log = audit_wait(px_main.audit, 0, "bare LF", &l);
	CU_ASSERT_FATAL(log != NULL);
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(strstr(l, "\"status\":400") != NULL);
	ROW(strstr(l, "\"target\":\"\"") != NULL, "the refusal's audit line names no target: %s", l);
	free(log);
}

/*
 * Requests inside a terminated tunnel refused before any policy rule
 * (conn_verdict(), which HTTP/2 streams share: suite h2 has their HTTP/2
 * forms): a CONNECT, an absolute-form target naming another host (a way
 * out of the tunnel's target), "*" for a GET, two Host fields. Each is a
 * 400 with its own reason and an audit line; nothing reaches the upstream.
 */
static void test_edge_inner_refusals(void)
{
	const char *port = strrchr(up.addr, ':') + 1;
	char req[4][256], want[4][300], *log, *l;
	size_t before = test_file_size(rec_good), amark = test_file_size(px_main.audit);

	snprintf(req[0], sizeof(req[0]), "CONNECT localhost:%s HTTP/1.1|Host: localhost:%s||", port, port);
	snprintf(want[0], sizeof(want[0]), "passavant: CONNECT inside the TLS tunnel to 127.0.0.1:%s refused", port);
	snprintf(req[1], sizeof(req[1]), "GET http://localhost:%s/hello?t=in1 HTTP/1.1|Host: %s||", port, up.addr);
	snprintf(want[1], sizeof(want[1]),
		 "passavant: GET http://localhost:%s/hello?t=in1: a request inside a tunnel must have an origin-form target",
		 port);
	snprintf(req[2], sizeof(req[2]), "GET * HTTP/1.1|Host: %s||", up.addr);
	snprintf(want[2], sizeof(want[2]), "passavant: GET *: a request inside a tunnel must have an origin-form target");
	snprintf(req[3], sizeof(req[3]), "GET /hello?t=in3 HTTP/1.1|Host: %s|Host: localhost:%s||", up.addr, port);
	snprintf(want[3], sizeof(want[3]), "passavant: GET https://%s/hello?t=in3: more than one Host field", up.addr);
	for (int i = 0; i < 4; i++) {
		char *out = NULL;

		CU_ASSERT_EQUAL(edge(&out, "inner", up.addr, req[i], NULL), 0);
		ROW(out != NULL && strncmp(out, "HTTP/1.1 400 Bad Request\n", 25) == 0 && strstr(out, want[i]) != NULL &&
			    strcmp(strstr(out, want[i]) + strlen(want[i]), "\n") == 0,
		    "'%s' inside the tunnel: expected 400 and '%s', got '%s'", req[i], want[i], out ? out : "");
		free(out);
		log = audit_wait(px_main.audit, amark, want[i], &l);
		ROW(l != NULL && strstr(l, "\"status\":400") != NULL && strstr(l, "\"decision\":\"deny\"") != NULL,
		    "'%s' inside the tunnel: no audit line with status 400, deny and its reason: %s", req[i],
		    l != NULL ? l : "(none)");
		free(log);
	}
	CU_ASSERT_EQUAL(test_file_size(rec_good), before);
}

/*
 * A value an upstream sent (a real one, re-masked on its way to the
 * client) does not stay in the memory OpenSSL frees: the upstream
 * context cleanses each decrypted record once read (pv-cleanse hooks
 * OpenSSL's allocator and searches every freed block). The control run,
 * with the option cleared on its connection, must find it, or the search
 * proves nothing.
 */
static void test_upstream_cleanse(void)
{
	char *tmp = test_mkdtemp(), *out = NULL, *err = NULL;
	char *argv[] = {(char *)test_tool_path("pv-cleanse"), tmp, NULL, NULL};
	int rc;

	CU_ASSERT_FATAL(tmp != NULL);
	argv[0] = strdup(argv[0]);
	CU_ASSERT_FATAL(argv[0] != NULL);
	rc = test_run_capture(argv, &out, &err, 20000);
	ROW(rc == 0 && out != NULL && strstr(out, "freed blocks holding the value: 0\n") != NULL,
	    "the upstream's plaintext stayed in freed memory: %d, %s %s", rc, out ? out : "", err ? err : "");
	free(out);
	free(err);
	argv[2] = "--control";
	rc = test_run_capture(argv, &out, &err, 20000);
	ROW(rc == 0 && out != NULL && strstr(out, "freed blocks holding the value: ") != NULL &&
		    strstr(out, "freed blocks holding the value: 0\n") == NULL,
	    "the control run found nothing (the search proves nothing): %d, %s %s", rc, out ? out : "",
	    err ? err : "");
	free(out);
	free(err);
	free(argv[0]);
	test_rmtree(tmp);
	free(tmp);
}

/* An upstream that ends a close-delimited body with close_notify and
 * waits for ours before closing TCP: a slow client still gets the end
 * of the body (close_notify must not be lost while reading is off). The
 * client starts reading only once the proxy is backed up with the
 * upstream's close_notify sent, then reads 16 KB at a time, slower than
 * the proxy relays. */
static void test_edge_close_notify_upstream(void)
{
	char addr[64];
	struct test_proc *srv = edge_server("serve", "3000000", addr, sizeof(addr));

	CU_ASSERT_FATAL(srv != NULL);
	CU_ASSERT(test_py_settle_pids(test_proc_pid(px_main.proc), test_proc_pid(srv), 0) == 0);
	for (int i = 0; i < 4; i++)
		edge_expect("slow", addr, "3000000", "12000000", "got 3000000 eof\n",
			    "close-delimited body ending in close_notify, slow client");
	CU_ASSERT(test_py_settle_pids(test_proc_pid(px_main.proc), test_proc_pid(up.proc), 0) == 0);
	(void)test_proc_stop(srv, SIGTERM, 5000);
	test_proc_free(srv);
}

static int clients_init(void)
{
	if (fixtures_up() < 0)
		return -1;
	snprintf(py_path, sizeof(py_path), "%s/client.py", dir);
	snprintf(py_edge_path, sizeof(py_edge_path), "%s/edge.py", dir);
	if (test_write_py(py_edge_path, py_edge, sizeof(py_edge) - 1) < 0 ||
	    test_py_settle_pids(test_proc_pid(px_main.proc), test_proc_pid(up.proc), 0) < 0)
		return -1;
	return test_write_py(py_path, py_helper, sizeof(py_helper) - 1);
}

static int clients_cleanup(void)
{
	return fixtures_down();
}

static int py(char **out, const char *mode, const char *cafile, const char *extra)
{
	return run(out, NULL, TEST_ENV_CLEAN, (char *)test_python(), py_path, (char *)mode, px_main.addr, up.addr,
		   (char *)cafile, (char *)extra, NULL);
}

static void test_python_urllib(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL(py(&out, "urllib", px_main.trust, NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	free(out);
	/* Issued by the session CA: ca.pem alone (no test CA) suffices. */
	CU_ASSERT_EQUAL(py(&out, "urllib", px_main.ca, NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	free(out);
}

static void test_pipelined_client_hello(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL(py(&out, "pipelined", px_main.trust, NULL), 0);
	CU_ASSERT(out != NULL && strstr(out, "HTTP/1.1 200 OK\r\n") != NULL && strstr(out, "hello\n") != NULL);
	free(out);
}

static void test_sni_mismatch(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL(py(&out, "sni", px_main.trust, "localhost"), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 421 Misdirected Request\r\n", 34) == 0);
	CU_ASSERT(out != NULL && strstr(out, "TLS server name localhost does not name the CONNECT target") != NULL);
	free(out);
}

static void test_websocket(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL(py(&out, "ws", px_main.trust, NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "hello through TLS") == 0);
	free(out);
}

static void test_openssl_s_client(void)
{
	char *out = NULL, cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "printf 'GET /hello HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n' | "
		 "openssl s_client -proxy %s -connect %s -CAfile %s -verify_return_error -ign_eof 2>&1",
		 up.addr, px_main.addr, up.addr, px_main.trust);
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, "sh", "-c", cmd, NULL), 0);
	CU_ASSERT(out != NULL && strstr(out, "issuer=O = passavant, CN = passavant session CA ") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "Verify return code: 0 (ok)") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "\r\n\r\nhello\n") != NULL);
	free(out);
}

static void test_git_clone(void)
{
	char *out = NULL, url[512], dest[4200], cainfo[4300], proxy[160], file[4400], *s;

	snprintf(url, sizeof(url), "%s/git/repo.git", up.url);
	snprintf(dest, sizeof(dest), "%s/clone", dir);
	snprintf(cainfo, sizeof(cainfo), "GIT_SSL_CAINFO=%s", px_main.trust);
	snprintf(proxy, sizeof(proxy), "http.proxy=%s", px_main.url);
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, cainfo, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			    "GIT_TERMINAL_PROMPT=0", "git", "-c", proxy, "clone", "-q", url, dest, NULL),
			0);
	free(out);
	snprintf(file, sizeof(file), "%s/hello.txt", dest);
	s = test_read_file(file, NULL);
	CU_ASSERT(s != NULL && strcmp(s, "hello from git\n") == 0);
	free(s);
	/* ls-remote on the same terminated path. */
	CU_ASSERT_EQUAL(run(&out, NULL, TEST_ENV_CLEAN, cainfo, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			    "GIT_TERMINAL_PROMPT=0", "git", "-c", proxy, "ls-remote", url, NULL),
			0);
	CU_ASSERT(out != NULL && strstr(out, "refs/heads/main") != NULL);
	free(out);
}

TEST_REGISTRAR(tls_suites)
{
	CU_pSuite s;

	s = test_suite("tls_terminate", fixtures_up, fixtures_down);
	test_add(s, "session dir: ca.pem, trust.pem, env; no private key", test_session_files);
	test_add(s, "curl: session-CA leaf, keep-alive, upstream reused", test_curl_terminated);
	test_add(s, "curl: a host name gets its own leaf", test_curl_localhost);
	test_add(s, "5 MB down, 3 MB up inside TLS", test_big_bodies);
	test_add(s, "method refused inside TLS: readable 403, nothing forwarded", test_method_refused_inside);
	test_add(s, "Host not naming the CONNECT target: 421", test_host_mismatch);
	test_add(s, "upstream certificate does not verify: 502, nothing forwarded", test_upstream_unverified);
	test_add(s, "upstream TLS fails otherwise: 502 with OpenSSL's reason", test_upstream_tls_error);
	test_add(s, "excluded host: the upstream's own certificate", test_excluded_host);
	test_add(s, "upstream TLS sessions resumed per host:port", test_upstream_resumption);
	test_add(s, "audit: tls terminated, scheme https", test_audit_terminated);
	test_add(s, "audit: a failed client handshake is one line", test_audit_failed_handshake);
	test_add(s, "audit: a request whose client hangs up before the response is audited", test_audit_cut_request);
	test_add(s, "stalled 1 GiB download inside TLS keeps RSS bounded", test_slow_reader);
	test_add(s, "slow reader: bodies arrive whole on a kept-alive tunnel (read-ahead)", test_slow_reader_bodies_whole);
	test_add(s, "a small response is one TLS record, a large one arrives whole", test_small_response_one_record);
	test_add(s, "bulk data keeps its TLS records whole, both ways", test_bulk_records_whole);
	test_add(s, "a client's KeyUpdate while a record to it is partly written: the body arrives whole",
		 test_client_key_update_held_write);
	test_add(s, "the same through a TLS filter (ClientHello behind the CONNECT): the body arrives whole",
		 test_client_key_update_held_write_filter);
	test_add(s, "a client on a TLS filter asking for KeyUpdates without reading is cut off, memory bounded",
		 test_filter_key_update_flood);
	test_add(s, "busy tunnels keep their record buffers and give them back once quiet", test_busy_buffers_released);
	test_add(s, "a reload applies to the next request of a kept-alive terminated tunnel", test_reload_inside_tunnel);
	test_add(s, "an upstream's KeyUpdate is read and the tunnel goes on, also while writes to it are blocked",
		 test_upstream_key_update);
	s = test_suite("tls_clients", clients_init, clients_cleanup);
	test_add(s, "python3 urllib with trust.pem", test_python_urllib);
	test_add(s, "TLS: Finished and a request in one read after a split ClientHello", test_edge_split_hello);
	test_add(s, "TLS: half-close and late readers get the whole body", test_edge_close_delivers);
	test_add(s, "TLS: an upstream's close_notify reaches a slow client", test_edge_close_notify_upstream);
	test_add(s, "TLS: half-close through a filter, close_notify in its own segment", test_edge_half_close_more);
	test_add(s, "TLS: an upgraded stream's last client bytes reach the upstream", test_edge_ws_last_bytes);
	test_add(s, "TLS: an upstream's truncation of a close-delimited body is passed on", test_edge_truncation_passed_on);
	test_add(s, "TLS: a head refused after a completed request (freed head buffers)",
		 test_edge_refusal_after_request);
	test_add(s, "TLS: CONNECT, absolute form, '*' and two Host fields inside a tunnel: 400", test_edge_inner_refusals);
	test_add(s, "CONNECT and ClientHello in one write", test_pipelined_client_hello);
	test_add(s, "SNI not naming the CONNECT target: 421", test_sni_mismatch);
	test_add(s, "WebSocket echo inside TLS", test_websocket);
	test_add(s, "openssl s_client -proxy", test_openssl_s_client);
	test_add(s, "git clone over HTTPS", test_git_clone);
	test_add(s, "upstream plaintext cleansed from OpenSSL's buffers once read", test_upstream_cleanse);
}

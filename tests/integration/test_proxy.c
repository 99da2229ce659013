/*
 * test_proxy.c - `passavant proxy` on the wire (issue 3): real curl and raw
 * sockets through the real binary to pv-upstream on loopback.
 *
 * Suites: proxy_http (plain HTTP forwarding, refusals, audit), proxy_connect
 * (tunnels, maxTunnels, reload), proxy_smuggling (each case refused with
 * nothing extra reaching the upstream), proxy_limits (slowloris, stalled
 * 1 GiB download).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "tests/support/certs.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/pyscript.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"
#include "tests/support/upstream.h"

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */
/* ------------------------------------------------------------------ */

static char *dir;                 /* temp dir: certs, records, policies */
static char record_path[4096];    /* pv-upstream --record file */
static struct test_upstream up;   /* plain HTTP, recording */
static struct test_upstream up_tls; /* HTTPS with the test CA */
static int fixtures_users;        /* suites sharing the fixtures */

static int fixtures_up(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	struct test_upstream_opts o;

	if (fixtures_users++ > 0)
		return 0;
	dir = test_mkdtemp();
	if (dir == NULL || test_certs_make(dir, names) < 0)
		return -1;
	snprintf(record_path, sizeof(record_path), "%s/record.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = record_path;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	return test_upstream_start(&up_tls, &o);
}

static int fixtures_down(void)
{
	int bad = 0;

	if (--fixtures_users > 0)
		return 0;
	bad |= test_upstream_stop(&up) != 0;
	bad |= test_upstream_stop(&up_tls) != 0;
	test_rmtree(dir);
	free(dir);
	dir = NULL;
	return bad ? -1 : 0;
}

/* The default proxy of the HTTP suite: 127.0.0.1 allowed, evil denied. */
static struct test_px px_main;

static int http_init(void)
{
	if (fixtures_up() < 0)
		return -1;
	return test_px_startf(&px_main, dir, "network:\n"
					     "  allowedDomains: [\"127.0.0.1\", \"*.allowed.test\"]\n"
					     "  deniedDomains: [\"evil.example\", \"*.evil.example\"]\n");
}

static int http_cleanup(void)
{
	int bad = test_px_stop(&px_main) != 0;

	return fixtures_down() < 0 || bad ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

static int raw_connect(const char *addr)
{
	struct sockaddr_in sa;
	char host[64];
	uint16_t port;
	int fd;

	if (test_parse_hostport(addr, host, sizeof(host), &port) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int raw_send(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads until EOF (or reset), or until stop is found (stop may be NULL),
 * or timeout_ms. Returns a NUL-terminated malloc'd buffer; *eof tells
 * whether the peer closed.
 */
static char *raw_read(int fd, const char *stop, int timeout_ms, bool *eof)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);
	long long deadline = test_mono_ms() + timeout_ms;

	if (eof != NULL)
		*eof = false;
	if (buf == NULL)
		return NULL;
	buf[0] = '\0';
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		long long left = deadline - test_mono_ms();
		ssize_t r;

		if (stop != NULL && strstr(buf, stop) != NULL)
			break;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		if (len == cap)
			break;
		r = recv(fd, buf + len, cap - len, 0);
		if (r <= 0) {
			if (eof != NULL)
				*eof = true;
			break;
		}
		len += (size_t)r;
		buf[len] = '\0';
	}
	return buf;
}

/* Sends req on a fresh connection and reads the whole answer (to EOF). */
static char *raw_exchange(const char *addr, const char *req, size_t len, bool *eof)
{
	int fd = raw_connect(addr);
	char *resp;

	if (fd < 0)
		return NULL;
	if (raw_send(fd, req, len) < 0) {
		close(fd);
		return NULL;
	}
	resp = raw_read(fd, NULL, 5000, eof);
	close(fd);
	return resp;
}

/* The n-th (0-based) value of header name in s, as a long; -1. */
static long header_long(const char *s, const char *name, int nth)
{
	const char *p = s;
	size_t nl = strlen(name);

	for (int i = 0; p != NULL; i++) {
		p = strcasestr(p, name);
		if (p == NULL)
			return -1;
		p += nl;
		if (i == nth)
			return strtol(p, NULL, 10);
	}
	return -1;
}

/* Waits until p's proxy and the upstream have done all they had to do
 * (test_wait_quiet()), at most ms. */
static void quiet_for(const struct test_px *p, int ms)
{
	const pid_t pids[] = {test_proc_pid(p->proc), test_proc_pid(up.proc)};

	(void)test_wait_quiet(pids, 2, -1, ms);
}

/* Waits up to ms for the audit file to have at least n lines. */
static char *audit_lines(const struct test_px *p, int n, int ms)
{
	long long deadline = test_mono_ms() + ms;

	for (;;) {
		char *s = test_read_file(p->audit, NULL);
		int lines = 0;

		for (const char *q = s; q != NULL && (q = strchr(q, '\n')) != NULL; q++)
			lines++;
		if (lines >= n || test_mono_ms() > deadline)
			return s;
		free(s);
		usleep(50000);
	}
}

/* ------------------------------------------------------------------ */
/* proxy_http                                                          */
/* ------------------------------------------------------------------ */

static void test_get_allowed(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", "-x", px_main.url, test_upstream_url(&up, "/hello"), NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0);
	CU_ASSERT(strstr(out, "\r\n\r\nhello\n") != NULL);
	free(out);
}

static void test_keepalive_reuse(void)
{
	char *out = NULL;
	long a, b;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", "-o", "/dev/null", "-x", px_main.url,
					test_upstream_url(&up, "/hello"), test_upstream_url(&up, "/bytes/100"), NULL), 0);
	a = header_long(out, "X-Upstream-Conn: ", 0);
	b = header_long(out, "X-Upstream-Conn: ", 1);
	CU_ASSERT(a > 0);
	CU_ASSERT_EQUAL(a, b);
	free(out);
}

static void test_streamed_bodies(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{size_download} %{http_code}", "-x",
					px_main.url, test_upstream_url(&up, "/bytes/3000001"), NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "3000001 200");
	free(out);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{size_download} %{http_code}", "-x",
					px_main.url, test_upstream_url(&up, "/chunked/1000003"), NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "1000003 200");
	free(out);
	/* A 2 MB request body streamed to the sink. */
	{
		char path[4096], *big = malloc(2000000);

		CU_ASSERT_FATAL(big != NULL);
		memset(big, 'x', 2000000);
		snprintf(path, sizeof(path), "%s/big.bin", dir);
		CU_ASSERT_EQUAL_FATAL(test_write_file(path, big, 2000000), 0);
		free(big);
		snprintf(path, sizeof(path), "@%s/big.bin", dir);
		CU_ASSERT_EQUAL_FATAL(test_curl(&out, "--data-binary", path, "-x", px_main.url,
						test_upstream_url(&up, "/sink"), NULL), 0);
		CU_ASSERT_STRING_EQUAL(out, "2000000\n");
		free(out);
	}
	/* Close-delimited response (/close): the client gets it in full. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-x", px_main.url, test_upstream_url(&up, "/close"), NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "bye\n");
	free(out);
}

static void test_rewrite_head(void)
{
	char req[1024], *resp, *rec;
	size_t before = test_file_size(record_path);
	int n;

	/* Absolute form in, origin form out; Host from the URL; hop-by-hop
	 * and Proxy-Authorization removed. */
	n = snprintf(req, sizeof(req),
		     "GET http://%s/echo?q=1 HTTP/1.1\r\nHost: wrong.example\r\n"
		     "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
		     "Connection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
		     "X-End: kept\r\n\r\n",
		     up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 200", 12) == 0);
	CU_ASSERT(strstr(resp, "Connection: close\r\n") != NULL);
	free(resp);
	rec = test_read_file(record_path, NULL);
	CU_ASSERT_FATAL(rec != NULL && strlen(rec) > before);
	{
		const char *got = rec + before;
		char host[128];

		snprintf(host, sizeof(host), "Host: %s\r\n", up.addr);
		CU_ASSERT(strstr(got, "GET /echo?q=1 HTTP/1.1\r\n") != NULL);
		CU_ASSERT(strstr(got, host) != NULL);
		CU_ASSERT(strstr(got, "wrong.example") == NULL);
		CU_ASSERT(strcasestr(got, "Proxy-Authorization") == NULL);
		CU_ASSERT(strcasestr(got, "Proxy-Connection") == NULL);
		CU_ASSERT(strcasestr(got, "X-Hop") == NULL);
		CU_ASSERT(strcasestr(got, "Keep-Alive") == NULL);
		CU_ASSERT(strcasestr(got, "TE: ") == NULL);
		CU_ASSERT(strstr(got, "X-End: kept\r\n") != NULL);
	}
	free(rec);
}

static void test_denied_host(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", "-x", px_main.url, "http://evil.example/x", NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	CU_ASSERT(strstr(out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(strstr(out, "\r\nContent-Type: text/plain\r\n") != NULL);
	CU_ASSERT(strstr(out, "\r\n\r\npassavant: GET http://evil.example/x refused by "
			      "network.deniedDomains: evil.example\n") != NULL);
	free(out);
	/* Not listed at all: the allow list refuses. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", "-x", px_main.url, "http://other.test/", NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 403", 12) == 0);
	CU_ASSERT(strstr(out, "refused by ") != NULL && strstr(out, "allowedDomains") != NULL);
	free(out);
}

/*
 * Two pipelined keep-alive requests, one refused (403). Allowed first:
 * both are answered, in order, the 403 last with Connection: close. Refused
 * first: the 403 (Connection: close) is the only answer and the allowed
 * request behind it never reaches the upstream (a refusal ends the
 * connection; the exchange of the next request is never started).
 */
static void test_pipelined_refusal(void)
{
	char req[1024], *resp, *rec, *second;
	size_t before;
	bool eof = false;
	int n;

	n = snprintf(req, sizeof(req),
		     "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\n\r\n"
		     "GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		     up.addr, up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, &eof);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(eof);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
	CU_ASSERT(strstr(resp, "\r\n\r\nhello\n") != NULL);
	second = strstr(resp, "hello\nHTTP/1.1 ");
	CU_ASSERT_FATAL(second != NULL);
	second += 6;
	CU_ASSERT(strncmp(second, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	CU_ASSERT(strstr(second, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(strstr(second, "\r\nConnection: close\r\n") != NULL);
	CU_ASSERT(strstr(second, "refused by network.deniedDomains: evil.example\n") != NULL);
	free(resp);

	before = test_file_size(record_path);
	n = snprintf(req, sizeof(req),
		     "GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n"
		     "GET http://%s/echo?pipelined-after-403 HTTP/1.1\r\nHost: %s\r\n\r\n",
		     up.addr, up.addr);
	eof = false;
	resp = raw_exchange(px_main.addr, req, (size_t)n, &eof);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(eof);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	CU_ASSERT(strstr(resp, "\r\nConnection: close\r\n") != NULL);
	CU_ASSERT(strstr(resp + 1, "HTTP/1.1 ") == NULL);
	free(resp);
	quiet_for(&px_main, 2000);
	rec = test_read_file(record_path, NULL);
	CU_ASSERT(rec == NULL || strlen(rec) < before || strstr(rec + before, "pipelined-after-403") == NULL);
	free(rec);
}

static void test_refused_name_not_resolved(void)
{
	char *out = NULL;

	/* *.allowed.test is allowed but does not resolve: 502, proving the
	 * resolver is only asked for allowed names (a denied one is 403
	 * above without any lookup delay). */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", "-x", px_main.url, "http://nx.allowed.test/", NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 502", 12) == 0 || strncmp(out, "HTTP/1.1 504", 12) == 0);
	free(out);
}

static void test_trace_and_bad_targets(void)
{
	char req[512], *resp, *audit, port[16];
	size_t mark = test_file_size(px_main.audit);
	int n;

	n = snprintf(req, sizeof(req), "TRACE http://%s/pv-trace HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 405", 12) == 0);
	free(resp);
	/* Its audit line names the host and port (round 36, N1: the method
	 * was refused before the target was read, "host":null) */
	snprintf(port, sizeof(port), "\"port\":%s", strrchr(up.addr, ':') + 1);
	audit = test_file_since(px_main.audit, mark);
	ROW(audit != NULL && test_has(audit, "\"method\":\"TRACE\"") && test_has(audit, "\"host\":\"127.0.0.1\"") &&
		    test_has(audit, port) && !test_has(audit, "\"host\":null"),
	    "the TRACE's audit line does not name its host and port (%s): %s", port, test_nz(audit));
	free(audit);
	/* Origin form is not a proxy request. */
	resp = raw_exchange(px_main.addr, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n", 32, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 400", 12) == 0);
	free(resp);
	/* https:// in absolute form must use CONNECT. */
	n = snprintf(req, sizeof(req), "GET https://%s/ HTTP/1.1\r\nHost: x\r\n\r\n", up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 400", 12) == 0);
	free(resp);
	/* Two Host fields are ambiguous. */
	n = snprintf(req, sizeof(req), "GET http://%s/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 400", 12) == 0);
	free(resp);
}

static void test_track(void)
{
	char req[256], *resp;
	int n, fd, one = 1;
	size_t i;

	/* llhttp does not know TRACK: still 405, not 400. */
	n = snprintf(req, sizeof(req), "TRACK http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, up.addr);
	resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 405", 12) == 0);
	free(resp);
	/* The same a byte at a time: llhttp fails at the K, when only
	 * "TRACK" has arrived. */
	fd = raw_connect(px_main.addr);
	CU_ASSERT_FATAL(fd >= 0);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; i < (size_t)n; i++) {
		CU_ASSERT_EQUAL_FATAL(raw_send(fd, req + i, 1), 0);
		if (i < 8)
			usleep(20000);
	}
	resp = raw_read(fd, "\r\n", 5000, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	ROW(strncmp(resp, "HTTP/1.1 405", 12) == 0, "TRACK sent a byte at a time: '%.40s'", resp);
	free(resp);
	close(fd);
}

/* A reason phrase with a control byte (a NUL, SOH) is a malformed
 * response: 502, nothing of it passed on; a tab is allowed. */
static void test_reason_control_bytes(void)
{
	static const char *const reasons[] = {"O\0K", "O\001K", "O\tK"};
	static const size_t lens[] = {3, 3, 3};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		char raw[128], path[512], req[1024], *resp;
		int n = snprintf(raw, sizeof(raw), "HTTP/1.1 200 ");

		memcpy(raw + n, reasons[i], lens[i]);
		n += (int)lens[i];
		n += snprintf(raw + n, sizeof(raw) - (size_t)n, "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
		CU_ASSERT_FATAL(test_upstream_rawhex_path(path, sizeof(path), raw, (size_t)n) == 0);
		n = snprintf(req, sizeof(req), "GET http://%s%s HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, path, up.addr);
		if (i < 2) {
			/* The refusal closes the connection: read to its end. */
			resp = raw_exchange(px_main.addr, req, (size_t)n, NULL);
		} else {
			/* The relayed response keeps the client's connection
			 * open: read up to its body. */
			int fd = raw_connect(px_main.addr);

			CU_ASSERT_FATAL(fd >= 0);
			resp = raw_send(fd, req, (size_t)n) == 0 ? raw_read(fd, "\r\n\r\nhi", 5000, NULL) : NULL;
			close(fd);
		}
		CU_ASSERT_FATAL(resp != NULL);
		if (i < 2)
			ROW(strncmp(resp, "HTTP/1.1 502", 12) == 0 && strstr(resp, "hi") == NULL,
			    "reason with byte %d: '%.60s'", (int)(unsigned char)reasons[i][1], resp);
		else
			ROW(strncmp(resp, "HTTP/1.1 200 O\tK\r\n", 18) == 0, "reason with a tab: '%.60s'", resp);
		free(resp);
	}
}

/* A WebSocket upgrade over plain HTTP: 101, then frames relayed. */
static void test_websocket(void)
{
	static const unsigned char frame[] = {0x81, 0x82, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2};
	char req[512], *resp;
	int fd, n;

	fd = raw_connect(px_main.addr);
	CU_ASSERT_FATAL(fd >= 0);
	n = snprintf(req, sizeof(req),
		     "GET http://%s/ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\n"
		     "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
		     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
		     up.addr, up.addr);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	resp = raw_read(fd, "\r\n\r\n", 5000, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 101", 12) == 0);
	CU_ASSERT(strcasestr(resp, "Upgrade: websocket\r\n") != NULL);
	CU_ASSERT(strstr(resp, "Connection: Upgrade\r\n") != NULL);
	CU_ASSERT(strstr(resp, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") != NULL);
	free(resp);
	CU_ASSERT_EQUAL(raw_send(fd, (const char *)frame, sizeof(frame)), 0);
	resp = raw_read(fd, "hi", 5000, NULL);
	CU_ASSERT(resp != NULL && memcmp(resp, "\x81\x02hi", 4) == 0);
	free(resp);
	/* 1000 more frames each way (20 KiB), then the end: the stream's
	 * audit line, written when it ends, counts them (round 33 of the
	 * attack: written at the 101, it said 0 bytes whatever passed). */
	{
		unsigned char big[20 * 1024];
		long long deadline = test_mono_ms() + 5000;
		size_t got = 0;

		for (size_t i = 0; i < 1000; i++)
			memcpy(big + i * sizeof(frame), frame, sizeof(frame));
		CU_ASSERT_EQUAL(raw_send(fd, (const char *)big, 1000 * sizeof(frame)), 0);
		while (got < 4000 && test_mono_ms() < deadline) {
			struct pollfd pfd = {fd, POLLIN, 0};
			ssize_t r;

			if (poll(&pfd, 1, 200) <= 0)
				continue;
			r = recv(fd, big, sizeof(big), 0);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		ROW(got == 4000, "the echo of 1000 frames: %zu bytes of 4000", got);
	}
	close(fd);
	{
		long long deadline = test_mono_ms() + 3000, upb = -1, downb = -1;

		while (test_mono_ms() < deadline && upb < 0) {
			char *log = test_read_file(px_main.audit, NULL);
			const char *l = log != NULL ? strstr(log, "\"target\":\"/ws\"") : NULL;

			if (l != NULL && strstr(l, "\"status\":101") != NULL && strstr(l, "\"bytesUp\":") != NULL) {
				upb = strtoll(strstr(l, "\"bytesUp\":") + 10, NULL, 10);
				downb = strtoll(strstr(l, "\"bytesDown\":") + 12, NULL, 10);
			}
			free(log);
			if (upb < 0)
				usleep(50000);
		}
		ROW(upb >= 8008 && downb >= 4004,
		    "the WebSocket stream's audit line does not count what it moved: bytesUp %lld, bytesDown %lld",
		    upb, downb);
	}
}

static void test_header_too_large(void)
{
	size_t big = 70 * 1024, n;
	char *req = malloc(big + 512), *resp;

	CU_ASSERT_FATAL(req != NULL);
	n = (size_t)snprintf(req, 512, "GET http://%s/hello HTTP/1.1\r\nX-Big: ", up.addr);
	memset(req + n, 'a', big);
	n += big;
	memcpy(req + n, "\r\n\r\n", 4);
	n += 4;
	resp = raw_exchange(px_main.addr, req, n, NULL);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 431", 12) == 0);
	free(resp);
	free(req);
}

static void test_unreachable(void)
{
	char *out = NULL;
	int fd = raw_connect(up.addr), port;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char url[128];

	/* A port that was just free: connection refused -> 502. */
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	port = ntohs(sa.sin_port);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", "-x", px_main.url, url, NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 502", 12) == 0);
	free(out);
}

static void test_session_dir(void)
{
	char path[4200], *env;
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(stat(px_main.session, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/env", px_main.session);
	env = test_read_file(path, NULL);
	CU_ASSERT_FATAL(env != NULL);
	snprintf(path, sizeof(path), "export HTTPS_PROXY='http://%s'\n", px_main.addr);
	CU_ASSERT(strstr(env, path) != NULL);
	snprintf(path, sizeof(path), "export http_proxy='http://%s'\n", px_main.addr);
	CU_ASSERT(strstr(env, path) != NULL);
	CU_ASSERT(strstr(env, "export NO_PROXY='localhost,127.0.0.1,::1'\n") != NULL);
	CU_ASSERT(strstr(env, "export NODE_USE_ENV_PROXY=1\n") != NULL);
	free(env);
}

/* Checks the exact key set and order of an audit line. */
static bool audit_keys_ok(const char *line)
{
	static const char *const keys[] = {"ts", "session", "kind", "method", "scheme", "host", "port",
					   "target", "status", "decision", "reason", "rule", "injected",
					   "remasked", "bytesUp", "bytesDown", "ms", "tls", "proto"};
	const char *p = line;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char k[32];

		snprintf(k, sizeof(k), "%s\"%s\":", i == 0 ? "{" : ",", keys[i]);
		p = strstr(p, k);
		if (p == NULL) {
			fprintf(stderr, "audit: key %s missing or out of order in %s\n", keys[i], line);
			return false;
		}
	}
	return true;
}

/* The line of text containing needle (malloc'd), or NULL. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = text != NULL ? strstr(text, needle) : NULL, *s, *e;
	char *l;

	if (p == NULL)
		return NULL;
	for (s = p; s > text && s[-1] != '\n'; s--)
		;
	e = strchr(p, '\n');
	if (e == NULL)
		e = p + strlen(p);
	l = strndup(s, (size_t)(e - s));
	return l;
}

static void test_audit_fields(void)
{
	struct test_px p;
	char *out = NULL, *log, *l, want[512];

	/* excludeDomains: the HTTPS request below is an opaque tunnel
	 * (terminated tunnels are audited per request: test_tls.c). */
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  deniedDomains: [\"evil.example\"]\n"
						      "  tlsTerminate: {excludeDomains: [\"127.0.0.1\"]}\n"), 0);
	CU_ASSERT_EQUAL(test_curl(&out, "-o", "/dev/null", "-x", p.url, test_upstream_url(&up, "/bytes/1234?x=\"q\""),
				  NULL), 0);
	free(out);
	CU_ASSERT_EQUAL(test_curl(&out, "-o", "/dev/null", "-x", p.url, "http://evil.example/", NULL), 0);
	free(out);
	CU_ASSERT_EQUAL(test_curl(&out, "-o", "/dev/null", "-x", p.url, "https://evil.example/", NULL), 56);
	free(out);
	{
		char ca[4200];

		snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
		CU_ASSERT_EQUAL(test_curl(&out, "--cacert", ca, "-x", p.url, test_upstream_url(&up_tls, "/hello"), NULL), 0);
		free(out);
	}
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	log = audit_lines(&p, 4, 2000);
	CU_ASSERT_FATAL(log != NULL);

	/* The allowed request. */
	l = line_with(log, "\"target\":\"/bytes/1234");
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(audit_keys_ok(l));
	CU_ASSERT(strncmp(l, "{\"ts\":\"20", 9) == 0 && l[strlen(l) - 1] == '}');
	CU_ASSERT(strstr(l, "Z\",\"session\":\"") != NULL);
	CU_ASSERT(strstr(l, "\"kind\":\"request\",\"method\":\"GET\",\"scheme\":\"http\","
			    "\"host\":\"127.0.0.1\"") != NULL);
	snprintf(want, sizeof(want), "\"port\":%u,", (unsigned)up.port);
	CU_ASSERT(strstr(l, want) != NULL);
	CU_ASSERT(strstr(l, "\"target\":\"/bytes/1234?x=%22q%22\"") != NULL ||
		  strstr(l, "\"target\":\"/bytes/1234?x=\\\"q\\\"\"") != NULL);
	CU_ASSERT(strstr(l, "\"status\":200,\"decision\":\"allow\",\"reason\":null,"
			    "\"rule\":\"network.allowedDomains: 127.0.0.1\",\"injected\":[],"
			    "\"remasked\":0,\"bytesUp\":0,\"bytesDown\":1234,\"ms\":") != NULL);
	CU_ASSERT(strstr(l, "\"tls\":\"none\",\"proto\":\"http/1.1\"}") != NULL);
	free(l);

	/* The refused request. */
	l = line_with(log, "\"host\":\"evil.example\",\"port\":80");
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(audit_keys_ok(l));
	CU_ASSERT(strstr(l, "\"kind\":\"request\"") != NULL);
	CU_ASSERT(strstr(l, "\"status\":403,\"decision\":\"deny\",\"reason\":\"passavant: GET "
			    "http://evil.example/ refused by network.deniedDomains: evil.example\","
			    "\"rule\":\"network.deniedDomains: evil.example\"") != NULL);
	CU_ASSERT(strstr(l, "\"bytesUp\":null,\"bytesDown\":null") != NULL);
	free(l);

	/* The refused CONNECT. */
	l = line_with(log, "\"kind\":\"connect\"");
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(audit_keys_ok(l));
	CU_ASSERT(strstr(l, "\"method\":\"CONNECT\",\"scheme\":null,\"host\":\"evil.example\","
			    "\"port\":443,\"target\":null,\"status\":403,\"decision\":\"deny\"") != NULL);
	CU_ASSERT(strstr(l, "\"injected\":null,\"remasked\":null") != NULL);
	free(l);

	/* The tunnel, logged when it ended, with its byte counts. */
	l = line_with(log, "\"kind\":\"tunnel\"");
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT(audit_keys_ok(l));
	CU_ASSERT(strstr(l, "\"status\":200,\"decision\":\"allow\",\"reason\":null") != NULL);
	CU_ASSERT(strstr(l, "\"bytesUp\":0") == NULL);
	CU_ASSERT(strstr(l, "\"tls\":\"passthrough\",\"proto\":null}") != NULL);
	free(l);
	free(log);
}

/* A name that resolves to loopback is refused by the address guard,
 * unless the IP literal is allowed. */
static void test_localhost(void)
{
	struct test_px p;
	char *out = NULL, url[128];

	snprintf(url, sizeof(url), "http://localhost:%u/hello", (unsigned)up.port);
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [localhost]\n"), 0);
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, url, NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 403", 12) == 0);
	CU_ASSERT(out != NULL && strstr(out, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "localhost resolves to ") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "(loopback)") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [localhost, \"127.0.0.1:%u\"]\n",
					     (unsigned)up.port), 0);
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, url, NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 200", 12) == 0);
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* An upstream as common as any: Python's http.server, HTTP/1.1 kept
 * alive, whose GET handler never reads a body (so a body is read as the
 * next request). Each request it runs is appended to argv[1] as
 * "SAW METHOD PATH"; argv[2], when given, is the directory of
 * server.pem/server.key (TLS). */
static const char desync_py[] =
	"import http.server, socketserver, ssl, sys\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def _ok(self):\n"
	"        with open(sys.argv[1], 'a') as f: f.write('SAW %s %s\\n' % (self.command, self.path))\n"
	"        self.send_response(200); self.send_header('Content-Length', '3'); self.end_headers()\n"
	"        self.wfile.write(b'ok\\n')\n"
	"    do_GET = do_DELETE = do_HEAD = do_PROPFIND = do_PURGE = _ok\n"
	"    def log_message(self, *a): pass\n"
	"s = socketserver.ThreadingTCPServer(('127.0.0.1', 0), H)\n"
	"if len(sys.argv) > 2:\n"
	"    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"    c.load_cert_chain(sys.argv[2] + '/server.pem', sys.argv[2] + '/server.key')\n"
	"    s.socket = c.wrap_socket(s.socket, server_side=True)\n"
	"print('listening on 127.0.0.1:%d' % s.server_address[1], flush=True)\n"
	"s.serve_forever()\n";

/* Round 17 of the attack: on a host with a method rule, a GET whose body
 * is a DELETE request. The upstream above read the body as the next
 * request on the kept-alive connection and ran the DELETE; only the GET
 * was decided and audited. A request with a body goes there with
 * "Connection: close" and its upstream connection is not used again:
 * plain HTTP and inside a terminated tunnel. */
static void test_method_body_smuggle(void)
{
	char py[4200], rec[4200], addr[2][128], url[3][256], *log, *out = NULL;
	const char body[] = "DELETE /smuggled HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n";
	struct test_proc *srv[2];
	struct test_px p;

	snprintf(py, sizeof(py), "%s/desync_up.py", dir);
	snprintf(rec, sizeof(rec), "%s/desync.txt", dir);
	CU_ASSERT_FATAL(test_write_file(py, desync_py, sizeof(desync_py) - 1) == 0);
	for (int i = 0; i < 2; i++) {
		char *argv[] = {(char *)test_python(), py, rec, i == 1 ? dir : NULL, NULL};
		const char *colon;

		srv[i] = test_proc_start(argv, "listening on ", addr[i], sizeof(addr[i]), 10000);
		CU_ASSERT_FATAL(srv[i] != NULL);
		colon = strrchr(addr[i], ':');
		snprintf(url[i], sizeof(url[i]), "%s://localhost:%s/a", i == 1 ? "https" : "http",
			 colon != NULL ? colon + 1 : "0");
		/* round 18: the same server by a name without a rule */
		if (i == 0)
			snprintf(url[2], sizeof(url[2]), "http://127.0.0.1:%s/a", colon != NULL ? colon + 1 : "0");
	}
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
					     "network:\n  allowedDomains: [\"127.0.0.1\", localhost]\n"
					     "  allowedMethods: {localhost: [GET, HEAD]}\n"
					     "  tlsTerminate: {extraCaCertPaths: [\"%s/ca.pem\"]}\n",
					     dir),
			      0);
	for (int i = 0; i < 3; i++) {
		/* curl keeps the connection: the second GET follows on it */
		CU_ASSERT_EQUAL(test_curl(&out, "-x", p.url, "--cacert", p.trust, "-X", "GET", "--data-binary", body,
					  url[i], "--next", "-x", p.url, "--cacert", p.trust, url[i], NULL),
				0);
		ROW(out != NULL && strcmp(out, "ok\nok\n") == 0, "%s: '%s'", url[i], test_nz(out));
		free(out);
		out = NULL;
	}
	/* round 21: methods the old list did not name (WebDAV's PROPFIND, a
	 * cache's PURGE), to the name without a rule: their handlers above do
	 * not read a body either. llhttp refuses a method it does not know. */
	for (int i = 0; i < 2; i++) {
		const char *m = i == 0 ? "PROPFIND" : "PURGE";

		CU_ASSERT_EQUAL(test_curl(&out, "-x", p.url, "-X", m, "--data-binary", body, url[2], "--next", "-x",
					  p.url, url[2], NULL),
				0);
		ROW(out != NULL && strcmp(out, "ok\nok\n") == 0, "%s %s: '%s'", m, url[2], test_nz(out));
		free(out);
		out = NULL;
	}
	usleep(300 * 1000);
	log = test_read_file(rec, NULL);
	ROW(log != NULL && strstr(log, "SAW GET /a") != NULL, "the upstream ran no GET: %s", test_nz(log));
	ROW(log != NULL && strstr(log, "SAW PROPFIND /a") != NULL && strstr(log, "SAW PURGE /a") != NULL,
	    "the upstream ran no PROPFIND or PURGE: %s", test_nz(log));
	ROW(log != NULL && strstr(log, "DELETE") == NULL,
	    "a DELETE hidden in a body ran on a host whose rule is [GET, HEAD]: %s", test_nz(log));
	free(log);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	for (int i = 0; i < 2; i++) {
		(void)test_proc_stop(srv[i], SIGTERM, 5000);
		test_proc_free(srv[i]);
	}
}

/* A client as common as any: Python's http.client, kept alive through the
 * proxy, plain (argv[1] = proxy host:port, requests by absolute URL) or in
 * a tunnel (argv[2] = "tls:HOST:PORT:TRUST", requests by path). Prints
 * "STATUS BODY" per request, joined by '|', or "ERR ..." where one fails. */
static const char py_bodiless[] =
	"import http.client, ssl, sys\n"
	"h, port = sys.argv[1].rsplit(':', 1)\n"
	"if sys.argv[2].startswith('tls:'):\n"
	"    _, th, tp, trust = sys.argv[2].split(':', 3)\n"
	"    c = http.client.HTTPSConnection(h, int(port), timeout=8, context=ssl.create_default_context(cafile=trust))\n"
	"    c.set_tunnel(th, int(tp))\n"
	"else:\n"
	"    c = http.client.HTTPConnection(h, int(port), timeout=8)\n"
	"out = []\n"
	"for u in sys.argv[3:]:\n"
	"    try:\n"
	"        c.request('GET', u)\n"
	"        r = c.getresponse()\n"
	"        out.append('%d %s' % (r.status, r.read().decode('latin-1').strip()))\n"
	"    except Exception as e:\n"
	"        out.append('ERR %s' % type(e).__name__)\n"
	"        break\n"
	"print('|'.join(out))\n";

/* Round 19 of the attack: a 204 (or 1xx, or 304) response has no body,
 * whatever its Content-Length or Transfer-Encoding say (RFC 9112 §6.3),
 * and curl, Go and Node read it so. llhttp read the announced bytes as its
 * body and the proxy passed them on: a response forged after a 204 was
 * then the client's answer to its next request, on the proxy connection
 * it shares with other hosts (Python's reads a chunked 204's body: the
 * two cannot both be served, so such a response is refused, 502). A 304
 * with the Content-Length of its
 * representation (allowed) and no body made the proxy wait for bytes
 * that never come. */
static void test_bodiless_status(void)
{
	static const char forged[] = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nFORGED\n";
	static const char *const heads[] = {
		"HTTP/1.1 204 No Content\r\nContent-Length: %zu\r\n\r\n%s",
		"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: %zu\r\n\r\n%s",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", /* no body: extra arguments unused */
		/* RFC 9112 §6.1 allows it on a 304; not passed on (Python would read chunks) */
		"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
	};
	/* a 204 that announces a body is refused: clients read it two ways */
	static const char *const want[] = {"502 ", "502 ", "304 |200 hello", "304 |200 hello", "304 |200 hello"};
	struct test_px p;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
					     "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
					     "  tlsTerminate: {extraCaCertPaths: [\"%s/ca.pem\"]}\n",
					     dir),
			      0);
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		for (int tls = 0; tls < 2; tls++) {
			const struct test_upstream *u = tls ? &up_tls : &up;
			char raw[512], path[1200], url[2][1400], how[4400], *out = NULL, *err = NULL;
			char *argv[] = {"python3", "-c", (char *)py_bodiless, p.addr, how, url[0], url[1], NULL};
			int n = snprintf(raw, sizeof(raw), heads[i], sizeof(forged) - 1, forged);

			CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof(raw));
			CU_ASSERT_FATAL(test_upstream_rawhex_path(path, sizeof(path), raw, (size_t)n) == 0);
			if (tls) {
				snprintf(how, sizeof(how), "tls:%s:%u:%s", u->host, (unsigned)u->port, p.trust);
				snprintf(url[0], sizeof(url[0]), "%s", path);
				snprintf(url[1], sizeof(url[1]), "/hello");
			} else {
				snprintf(how, sizeof(how), "plain");
				snprintf(url[0], sizeof(url[0]), "%s%s", u->url, path);
				snprintf(url[1], sizeof(url[1]), "%s/hello", u->url);
			}
			CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, 30000), 0);
			if (out != NULL)
				out[strcspn(out, "\n")] = '\0';
			ROW(out != NULL && (i < 2 ? strncmp(out, want[i], 4) == 0 : strcmp(out, want[i]) == 0) &&
				    strstr(out, "FORGED") == NULL,
			    "case %zu (%s): got '%s', want '%s' (%s)", i,
			    tls ? "tunnel" : "plain", test_nz(out), want[i], test_nz(err));
			free(out);
			free(err);
		}
	}
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_method_refused(void)
{
	struct test_px p;
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  allowedMethods: {\"*\": [GET, HEAD]}\n"), 0);
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, "--data-binary", "x=1", test_upstream_url(&up, "/sink"),
				  NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 403", 12) == 0);
	CU_ASSERT(out != NULL && strstr(out, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "passavant: POST http://127.0.0.1:") != NULL);
	CU_ASSERT(out != NULL && strstr(out, "refused by") != NULL && strstr(out, "allowedMethods") != NULL);
	free(out);
	CU_ASSERT_EQUAL(test_curl(&out, "-x", p.url, test_upstream_url(&up, "/hello"), NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	free(out);
	CU_ASSERT_EQUAL(test_curl(&out, "-I", "-x", p.url, test_upstream_url(&up, "/bytes/10"), NULL), 0);
	CU_ASSERT(out != NULL && strstr(out, "Content-Length: 10\r\n") != NULL);
	free(out);
	/* Nor in an upgraded connection: the Upgrade is dropped, no 101. */
	{
		char req[512], *resp;
		int n = snprintf(req, sizeof(req),
				 "GET http://%s/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
				 "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
				 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", up.addr);
		int fd = raw_connect(p.addr);

		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
		resp = raw_read(fd, "\r\n\r\n", 5000, NULL);
		CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 ", 9) == 0 &&
			  strncmp(resp, "HTTP/1.1 101", 12) != 0);
		free(resp);
		close(fd);
	}
	/* A method rule cannot be enforced in an opaque tunnel: a tunnel
	 * that does not carry TLS is refused (TLS is terminated and checked
	 * per request: test_tls.c). */
	{
		char req[512], *resp;
		int n = snprintf(req, sizeof(req),
				 "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nPOST /sink HTTP/1.1\r\nHost: x\r\n"
				 "Content-Length: 1\r\n\r\nx", up.addr, up.addr);

		resp = raw_exchange(p.addr, req, (size_t)n, NULL);
		CU_ASSERT_FATAL(resp != NULL);
		CU_ASSERT(strncmp(resp, "HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 403", 51) == 0);
		CU_ASSERT(strstr(resp, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
		CU_ASSERT(strstr(resp, "does not carry TLS") != NULL);
		free(resp);
	}
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* ------------------------------------------------------------------ */
/* proxy_connect                                                       */
/* ------------------------------------------------------------------ */

static int connect_init(void)
{
	return fixtures_up();
}

static int connect_cleanup(void)
{
	return fixtures_down();
}

static void test_connect_tunnel(void)
{
	struct test_px p;
	char *out = NULL, ca[4200];

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	/* Excluded from termination: the client sees the upstream's own
	 * certificate through an opaque tunnel. */
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  tlsTerminate: {excludeDomains: [\"127.0.0.1\"]}\n"), 0);
	CU_ASSERT_EQUAL(test_curl(&out, "--cacert", ca, "-x", p.url, test_upstream_url(&up_tls, "/hello"),
				  test_upstream_url(&up_tls, "/bytes/500000"), "-o", "/dev/null", "-o", "/dev/null",
				  "-w", "%{http_code} ", NULL), 0);
	CU_ASSERT(out != NULL && strcmp(out, "200 200 ") == 0);
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_connect_denied(void)
{
	struct test_px p;
	char *resp;
	bool eof;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  deniedDomains: [\"*.example\"]\n"), 0);
	resp = raw_exchange(p.addr, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
			    61, &eof);
	CU_ASSERT_FATAL(resp != NULL);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
	CU_ASSERT(strstr(resp, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n") != NULL);
	CU_ASSERT(strstr(resp, "Content-Type: text/plain\r\n") != NULL);
	CU_ASSERT(strstr(resp, "\r\n\r\npassavant: CONNECT evil.example:443 refused by "
			       "network.deniedDomains: *.example\n") != NULL);
	CU_ASSERT(eof);
	free(resp);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* Opens a CONNECT tunnel to addr through the proxy; returns the fd with
 * the 200 read, or -1 (*status gets the status seen). */
static int open_tunnel(const char *proxy, const char *addr, int *status)
{
	char req[256], *resp;
	int fd = raw_connect(proxy), n;

	*status = 0;
	if (fd < 0)
		return -1;
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr);
	if (raw_send(fd, req, (size_t)n) < 0) {
		close(fd);
		return -1;
	}
	resp = raw_read(fd, "\r\n\r\n", 5000, NULL);
	if (resp != NULL && strncmp(resp, "HTTP/1.1 ", 9) == 0)
		*status = atoi(resp + 9);
	if (resp != NULL && *status == 503 && strstr(resp, "X-Proxy-Error: too-many-tunnels\r\n") == NULL)
		*status = -503;
	free(resp);
	if (*status != 200) {
		close(fd);
		return -1;
	}
	return fd;
}

/* GET /hello through an open tunnel to the plain upstream. */
static bool tunnel_hello(int fd)
{
	char req[256], *resp;
	bool ok;
	int n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);

	if (raw_send(fd, req, (size_t)n) < 0)
		return false;
	resp = raw_read(fd, "hello\n", 5000, NULL);
	ok = resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0 && strstr(resp, "hello\n") != NULL;
	free(resp);
	return ok;
}

static void test_max_tunnels(void)
{
	struct test_px p;
	int a, b, c, st;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  limits: {maxTunnels: 2}\n"), 0);
	a = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT(a >= 0);
	b = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT(b >= 0);
	c = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT(c < 0);
	CU_ASSERT_EQUAL(st, 503);
	/* The two tunnels work; closing one frees a slot. */
	CU_ASSERT(a >= 0 && tunnel_hello(a));
	CU_ASSERT(b >= 0 && tunnel_hello(b));
	if (a >= 0)
		close(a);
	quiet_for(&p, 1000); /* the proxy has seen the close */
	c = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT(c >= 0);
	CU_ASSERT(c >= 0 && tunnel_hello(c));
	if (b >= 0)
		close(b);
	if (c >= 0)
		close(c);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_reload(void)
{
	struct test_px p;
	char *out = NULL, yaml[256];
	int t, st, n;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	t = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT_FATAL(t >= 0);
	CU_ASSERT(tunnel_hello(t));
	/* New policy: nothing allowed. */
	n = snprintf(yaml, sizeof(yaml), "network:\n  allowedDomains: [\"only.example\"]\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(p.policy, yaml, (size_t)n), 0);
	CU_ASSERT_EQUAL(kill(test_proc_pid(p.proc), SIGHUP), 0);
	quiet_for(&p, 1000); /* the reload is done */
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, test_upstream_url(&up, "/hello"), NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 403", 12) == 0);
	free(out);
	/* The live tunnel stays open, and the plain request inside it is
	 * decided under the current policy, as every request is (round 30
	 * of the attack: a tunnel without TLS is no longer relayed
	 * undecided). */
	{
		char req[256], *resp;
		int rn = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);

		CU_ASSERT_EQUAL(raw_send(t, req, (size_t)rn), 0);
		resp = raw_read(t, "\r\n\r\n", 5000, NULL);
		CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 403", 12) == 0);
		free(resp);
	}
	close(t);
	/* A broken policy file keeps the current one. */
	CU_ASSERT_EQUAL_FATAL(test_write_file(p.policy, "network: [\n", 11), 0);
	CU_ASSERT_EQUAL(kill(test_proc_pid(p.proc), SIGHUP), 0);
	quiet_for(&p, 1000); /* the reload is done */
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, "http://only.example/", NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 403", 12) != 0);
	free(out);
	/* A policy that loads but cannot be bound to this machine (an extra
	 * CA root that does not exist) keeps the current one too: a reload
	 * is bound like the first load. Were it taken, 127.0.0.1 would be
	 * allowed again. */
	n = snprintf(yaml, sizeof(yaml),
		     "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
		     "  tlsTerminate:\n    extraCaCertPaths: [\"/nonexistent/pv-ca.pem\"]\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(p.policy, yaml, (size_t)n), 0);
	CU_ASSERT_EQUAL(kill(test_proc_pid(p.proc), SIGHUP), 0);
	quiet_for(&p, 1000); /* the reload is done */
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, test_upstream_url(&up, "/hello"), NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 403", 12) == 0);
	free(out);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/*
 * A reload allows a domain the session CA's name constraints (made at
 * start) do not cover: its terminated tunnel gets no leaf and is closed
 * at the client's handshake, the proxy says why and serves on. Before,
 * the failed handshake freed the connection and the caller read it again
 * (the reviewer of round 9; ASan: use after free in conn_start_mitm()).
 */
static void test_reload_outside_ca(void)
{
	struct test_px p;
	char *out = NULL, yaml[256], url[128], *err;
	int n, rc;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"only.example\"]\n"
						  "  tlsTerminate: {}\n"),
			      0);
	n = snprintf(yaml, sizeof(yaml),
		     "network:\n  allowedDomains: [\"only.example\", \"127.0.0.1\"]\n  tlsTerminate: {}\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(p.policy, yaml, (size_t)n), 0);
	CU_ASSERT_EQUAL(kill(test_proc_pid(p.proc), SIGHUP), 0);
	quiet_for(&p, 1000); /* the reload is done */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/hello", (unsigned)up.port);
	for (int i = 0; i < 3; i++) {
		rc = test_curl(&out, "--http1.1", "--cacert", p.trust, "-x", p.url, url, NULL);
		CU_ASSERT(rc != 0);
		free(out);
		out = NULL;
	}
	/* Alive and serving: a plain request the new policy allows. */
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, test_upstream_url(&up, "/hello"), NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 200", 12) == 0);
	free(out);
	err = test_file_since(test_proc_stderr_path(p.proc), 0);
	CU_ASSERT(test_has(err, "name constraints stay as made at start"));
	CU_ASSERT(test_has(err, "only after a restart of passavant"));
	free(err);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* A plain request, then a CONNECT on the same client connection. */
static void test_connect_after_keepalive(void)
{
	struct test_px p;
	char req[512], *resp;
	int fd, n;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	n = snprintf(req, sizeof(req), "GET http://%s/hello HTTP/1.1\r\nHost: x\r\n\r\n", up.addr);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	resp = raw_read(fd, "hello\n", 5000, NULL);
	CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0);
	free(resp);
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\n\r\n", up.addr);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	resp = raw_read(fd, "\r\n\r\n", 5000, NULL);
	CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 200 Connection Established", 35) == 0);
	free(resp);
	CU_ASSERT(tunnel_hello(fd));
	close(fd);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* The client half-closes the tunnel after its request: the response
 * still arrives, then the tunnel closes. */
static void test_tunnel_half_close(void)
{
	/* /hello: pv-upstream cuts a streamed /bytes response short when its
	 * client half-closes (directly too), so a short response is used. */
	struct test_px p;
	char req[256], *resp;
	bool eof = false;
	int fd, st, n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr);

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	fd = open_tunnel(p.addr, up.addr, &st);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	CU_ASSERT_EQUAL(shutdown(fd, SHUT_WR), 0);
	resp = raw_read(fd, NULL, 5000, &eof);
	CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0);
	CU_ASSERT(resp != NULL && strstr(resp, "\r\n\r\nhello\n") != NULL);
	CU_ASSERT(eof);
	free(resp);
	close(fd);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/*
 * CONNECT then bytes through the tunnel (round 30 of the attack): what a
 * tunnel without TLS carries is decided too. Relayed as bytes, it carried
 * requests with any Host and method to the server behind an allowed
 * name (a front end routing by Host reached a denied name), none decided
 * or audited. req is written after the 200; returns what came back
 * after it (malloc'd). Also checks that the upstream recorded nothing
 * holding mark when mark is not NULL.
 */
static char *through_tunnel(const struct test_px *p, const char *req, const char *mark)
{
	size_t before = test_file_size(record_path);
	char *resp, *rec;
	int fd, st;

	fd = open_tunnel(p->addr, up.addr, &st);
	if (fd < 0)
		return NULL;
	if (raw_send(fd, req, strlen(req)) < 0) {
		close(fd);
		return NULL;
	}
	resp = raw_read(fd, NULL, 3000, NULL);
	close(fd);
	if (mark != NULL) {
		usleep(200 * 1000);
		rec = test_file_since(record_path, before);
		ROW(rec != NULL && strstr(rec, mark) == NULL, "the upstream received %s through a tunnel without TLS",
		    mark);
		free(rec);
	}
	return resp;
}

static void test_tunnel_without_tls(void)
{
	static const char *const policies[] = {
		"network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
		"  deniedDomains: [\"evil.example\"]\n",
		/* round 16's door: an excluded host, nothing masked */
		"network:\n  allowedDomains: [\"127.0.0.1\", \"localhost\"]\n"
		"  deniedDomains: [\"evil.example\"]\n  tlsTerminate: {excludeDomains: [\"127.0.0.1\"]}\n",
	};

	for (size_t k = 0; k < sizeof(policies) / sizeof(policies[0]); k++) {
		struct test_px p;
		char req[512], port[16], *resp, *log;
		const char *colon = strrchr(up.addr, ':');

		snprintf(port, sizeof(port), "%s", colon != NULL ? colon + 1 : "");
		CU_ASSERT_FATAL(test_px_startf(&p, dir, "%s", policies[k]) == 0);
		/* Another Host, a denied name: 421, nothing sent. */
		snprintf(req, sizeof(req),
			 "POST /tun-fronted HTTP/1.1\r\nHost: evil.example:%s\r\nContent-Length: 4\r\n\r\nleak", port);
		resp = through_tunnel(&p, req, "/tun-fronted");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 421", 12) == 0 &&
			    strstr(resp, "but the CONNECT tunnel is to 127.0.0.1") != NULL,
		    "policy %zu: Host evil.example in a tunnel to %s: not 421: %.300s", k, up.addr, test_nz(resp));
		free(resp);
		/* Another name of the same server (allowed) is another host too. */
		snprintf(req, sizeof(req), "GET /tun-other HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port);
		resp = through_tunnel(&p, req, "/tun-other");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 421", 12) == 0, "policy %zu: Host localhost: not 421: %.300s", k,
		    test_nz(resp));
		free(resp);
		/* Another port. */
		snprintf(req, sizeof(req), "GET /tun-port HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n");
		resp = through_tunnel(&p, req, "/tun-port");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 421", 12) == 0, "policy %zu: Host on port 1: not 421: %.300s", k,
		    test_nz(resp));
		free(resp);
		/* The absolute form inside names no other destination: 400, as
		 * in a terminated tunnel (round 31 of the attack: it was dialled
		 * to its own host, the tunnel's audit line naming the CONNECT's),
		 * to a denied host, to another allowed name and port of the
		 * same server, and a CONNECT inside. */
		resp = through_tunnel(&p, "GET http://evil.example/tun-abs HTTP/1.1\r\nHost: evil.example\r\n\r\n",
				      "/tun-abs");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 400", 12) == 0 &&
			    strstr(resp, "must have an origin-form target") != NULL,
		    "policy %zu: an absolute-form request to a denied host inside a tunnel: not 400: %.300s", k,
		    test_nz(resp));
		free(resp);
		snprintf(req, sizeof(req), "GET http://localhost:%s/tun-abs2 HTTP/1.1\r\nHost: localhost:%s\r\n\r\n",
			 port, port);
		resp = through_tunnel(&p, req, "/tun-abs2");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 400", 12) == 0 &&
			    strstr(resp, "must have an origin-form target") != NULL,
		    "policy %zu: an absolute-form request to another allowed name inside a tunnel: not 400: %.300s", k,
		    test_nz(resp));
		free(resp);
		snprintf(req, sizeof(req), "CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n"
			 "GET /tun-nested HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port, port);
		resp = through_tunnel(&p, req, "/tun-nested");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 400", 12) == 0 &&
			    strstr(resp, "inside the tunnel to 127.0.0.1") != NULL && strstr(resp, "HTTP/1.1 200") == NULL,
		    "policy %zu: a CONNECT inside a tunnel: not 400: %.300s", k, test_nz(resp));
		free(resp);
		/* Neither HTTP nor TLS (an SSH banner): 403, nothing relayed. */
		resp = through_tunnel(&p, "SSH-2.0-OpenSSH_9.2 tun-ssh\r\n", "tun-ssh");
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 403", 12) == 0 && strstr(resp, "neither HTTP nor TLS") != NULL,
		    "policy %zu: an SSH banner in a tunnel: not refused: %.300s", k, test_nz(resp));
		free(resp);
		/* Its own Host: decided, answered, pipelined requests each too. */
		snprintf(req, sizeof(req),
			 "GET /hello?tun=1 HTTP/1.1\r\nHost: %s\r\n\r\nGET /hello?tun=2 HTTP/1.1\r\nHost: %s\r\n"
			 "Connection: close\r\n\r\n",
			 up.addr, up.addr);
		resp = through_tunnel(&p, req, NULL);
		ROW(resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0 && strstr(resp + 12, "HTTP/1.1 200") != NULL,
		    "policy %zu: two requests naming the CONNECT target: not both answered: %.300s", k, test_nz(resp));
		free(resp);
		CU_ASSERT_EQUAL(test_px_stop(&p), 0);
		/* Every request inside has its own audit line; no tunnel line
		 * hides them. */
		log = test_read_file(p.audit, NULL);
		ROW(log != NULL && strstr(log, "\"target\":\"/hello?tun=1\"") != NULL &&
			    strstr(log, "\"target\":\"/hello?tun=2\"") != NULL &&
			    strstr(log, "\"target\":\"/tun-fronted\"") != NULL &&
			    strstr(log, "carries plain HTTP: each request in it is decided and audited") != NULL &&
			    strstr(log, "\"tls\":\"passthrough\"") == NULL,
		    "policy %zu: the audit does not have a line per request inside the tunnel:\n%.1500s", k, test_nz(log));
		free(log);
	}
}

/* A TCP listener on 127.0.0.1 (a server of the test's own, which the
 * test accepts from and writes to by hand); "127.0.0.1:PORT" in addr.
 * The socket, or -1. */
static int loopback_listener(char *addr, size_t cap)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lis = socket(AF_INET, SOCK_STREAM, 0);

	if (lis < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lis, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lis, 4) < 0 ||
	    getsockname(lis, (struct sockaddr *)&a, &alen) < 0) {
		close(lis);
		return -1;
	}
	snprintf(addr, cap, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	return lis;
}

/* A payload for an extension a test adds to its ClientHello. */
static int hello_ext_add(SSL *s, unsigned int type, unsigned int context, const unsigned char **out, size_t *outlen,
			 X509 *x, size_t chainidx, int *al, void *arg)
{
	static const unsigned char body[] = {0x00, 0x00, 0x01, 0x00, 0x01, 0x42, 0x00, 0x00, 0x00, 0x00};

	(void)s, (void)type, (void)context, (void)x, (void)chainidx, (void)al, (void)arg;
	*out = body;
	*outlen = sizeof(body);
	return 1;
}

/* A ClientHello for name (NULL: no server name, as for an address) as
 * OpenSSL's client writes it, with the extension ext too when it is not
 * 0 (malloc'd into *out, *len bytes). 0 or -1. */
static int test_client_hello_ext(const char *name, unsigned ext, char **out, size_t *len)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = ctx != NULL && (ext == 0 || SSL_CTX_add_custom_ext(ctx, ext, SSL_EXT_CLIENT_HELLO, hello_ext_add, NULL,
								    NULL, NULL, NULL) == 1)
			   ? SSL_new(ctx)
			   : NULL;
	BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int rc = -1;

	*out = NULL;
	*len = 0;
	if (ssl == NULL || rb == NULL || wb == NULL) {
		BIO_free(rb);
		BIO_free(wb);
		goto done;
	}
	SSL_set_bio(ssl, rb, wb);
	SSL_set_connect_state(ssl);
	if ((name != NULL && SSL_set_tlsext_host_name(ssl, name) != 1) || SSL_do_handshake(ssl) == 1)
		goto done;
	n = BIO_get_mem_data(wb, &data);
	if (n > 0 && (*out = malloc((size_t)n)) != NULL) {
		memcpy(*out, data, (size_t)n);
		*len = (size_t)n;
		rc = 0;
	}
done:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return rc;
}

static int test_client_hello(const char *name, char **out, size_t *len)
{
	return test_client_hello_ext(name, 0, out, len);
}

/*
 * An excluded host's tunnel (round 30's review): a 9-byte "ClientHello"
 * whose framing is whole, then SMTP commands, in one write, to a server
 * that speaks first (excluded: 0); a real ClientHello alone, to that
 * server, answered with its banner (1). Both refused; neither the banner
 * nor anything after the hello crosses.
 */
static void excluded_case(int v)
{
	static const unsigned char fake[] = {0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00};
	struct test_px p;
	char addr[64], req[2048], got[512], *resp;
	int lis, fd, s, n;
	ssize_t k = 0;

	lis = loopback_listener(addr, sizeof(addr));
	CU_ASSERT_FATAL(lis >= 0);
	CU_ASSERT_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						 "  tlsTerminate: {excludeDomains: [\"127.0.0.1\"]}\n") == 0);
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr);
	if (v == 0) {
		memcpy(req + n, fake, sizeof(fake));
		n += (int)sizeof(fake);
		n += snprintf(req + n, sizeof(req) - (size_t)n, "HELO x\r\nMAIL FROM:<a@b>\r\n");
	}
	CU_ASSERT(raw_send(fd, req, (size_t)n) == 0);
	s = accept(lis, NULL, NULL);
	CU_ASSERT(s >= 0);
	if (v == 1) {
		/* A ClientHello OpenSSL reads: openssl's own, captured. */
		char *hello = NULL;
		size_t hl = 0;

		resp = raw_read(fd, "\r\n\r\n", 3000, NULL);
		free(resp);
		CU_ASSERT(test_client_hello(NULL, &hello, &hl) == 0);
		if (hello != NULL) {
			CU_ASSERT(raw_send(fd, hello, hl) == 0);
			free(hello);
		}
		usleep(300 * 1000);
		CU_ASSERT(raw_send(fd, "HELO x\r\n", 8) == 0);
	}
	if (s >= 0) {
		CU_ASSERT(write(s, "220 smtp.test ESMTP secret-banner\r\n", 36) == 36);
		usleep(500 * 1000);
		struct pollfd pf = {.fd = s, .events = POLLIN};

		if (poll(&pf, 1, 0) == 1)
			k = read(s, got, sizeof(got) - 1);
		got[k > 0 ? k : 0] = '\0';
	}
	resp = raw_read(fd, NULL, 3000, NULL);
	ROW(resp != NULL && strstr(resp, "secret-banner") == NULL &&
		    strstr(resp, v == 0 ? "neither HTTP nor TLS" : "answered the ClientHello with bytes that are not TLS") !=
			    NULL,
	    "excluded host, case %d: not refused, or the banner crossed: %.300s", v, test_nz(resp));
	ROW(memmem(got, k > 0 ? (size_t)k : 0, "HELO", 4) == NULL && memmem(got, k > 0 ? (size_t)k : 0, "MAIL", 4) == NULL,
	    "excluded host, case %d: the server received the commands after the hello", v);
	free(resp);
	close(fd);
	if (s >= 0)
		close(s);
	close(lis);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_tunnel_excluded_not_tls(void)
{
	excluded_case(0);
	excluded_case(1);
}

/* A proxy p whose policy excludes localhost from termination (and
 * denies evil.example), and a CONNECT through it to a loopback listener
 * (*lis) whose accepted side is *s; the 200 read. Returns the client's
 * connection. */
static int excluded_tunnel(struct test_px *p, int *lis, int *s)
{
	char addr[64], req[256], *resp;
	const char *port;
	int fd, n;

	*lis = loopback_listener(addr, sizeof(addr));
	CU_ASSERT_FATAL(*lis >= 0);
	port = strrchr(addr, ':') + 1;
	CU_ASSERT_FATAL(test_px_startf(p, dir, "network:\n  allowedDomains: [\"localhost\", \"127.0.0.1\"]\n"
						"  deniedDomains: [\"evil.example\"]\n"
						"  tlsTerminate: {excludeDomains: [\"localhost\"]}\n") == 0);
	fd = raw_connect(p->addr);
	CU_ASSERT_FATAL(fd >= 0);
	n = snprintf(req, sizeof(req), "CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port);
	CU_ASSERT(raw_send(fd, req, (size_t)n) == 0);
	*s = accept(*lis, NULL, NULL);
	resp = raw_read(fd, "\r\n\r\n", 3000, NULL);
	free(resp);
	return fd;
}

/*
 * Round 31 of the attack: an excluded host's tunnel relayed a ClientHello
 * whose server name was a denied host; a front end that routes by SNI
 * served it. The hello for sni (NULL: none) in a tunnel to localhost
 * (excluded): refused with a 421 naming both, the server receiving
 * nothing, when refused; else the hello reaches the server.
 */
static void excluded_sni_case(const char *sni, unsigned ext, bool refused)
{
	struct test_px p;
	char got[4096], *resp, *hello = NULL, *log;
	size_t hl = 0;
	ssize_t k = 0;
	int lis, fd, s;

	fd = excluded_tunnel(&p, &lis, &s);
	CU_ASSERT(s >= 0);
	CU_ASSERT(test_client_hello_ext(sni, ext, &hello, &hl) == 0);
	if (hello != NULL)
		CU_ASSERT(raw_send(fd, hello, hl) == 0);
	free(hello);
	if (s >= 0) {
		struct pollfd pf = {.fd = s, .events = POLLIN};

		if (poll(&pf, 1, 1000) == 1)
			k = read(s, got, sizeof(got));
	}
	if (refused) {
		resp = raw_read(fd, NULL, 3000, NULL);
		ROW(resp != NULL && strstr(resp, "HTTP/1.1 421") != NULL &&
			    (ext != 0 ? strstr(resp, "encrypted_client_hello") != NULL
				      : strstr(resp, sni) != NULL &&
						strstr(resp, "does not name the CONNECT target localhost") != NULL),
		    "excluded host, server name %s: not refused with a 421: %.300s", sni, test_nz(resp));
		ROW(k <= 0, "excluded host, server name %s: the server received %zd bytes", sni, k);
		free(resp);
	} else {
		ROW(k > 0 && (unsigned char)got[0] == 0x16, "excluded host, server name %s: the hello did not reach "
							   "the server (%zd bytes)", sni ? sni : "(none)", k);
	}
	close(fd);
	if (s >= 0)
		close(s);
	close(lis);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	if (refused) {
		log = test_read_file(p.audit, NULL);
		ROW(log != NULL && strstr(log, "the TLS server name must name the CONNECT target") != NULL,
		    "excluded host, server name %s: no audit line names the rule:\n%.1000s", sni, test_nz(log));
		free(log);
	}
}

static void test_tunnel_excluded_sni(void)
{
	excluded_sni_case("evil.example", 0, true);
	excluded_sni_case("127.0.0.1.nip.example", 0, true);
	excluded_sni_case("localhost.evil.example", 0, true);
	/* the outer name right, the routing one inside encrypted_client_hello
	 * (0xfe0d) or ESNI (0xffce): round 31's review */
	excluded_sni_case("localhost", 0xfe0d, true);
	excluded_sni_case("localhost", 0xffce, true);
	excluded_sni_case("LocalHost.", 0, false);
	excluded_sni_case(NULL, 0, false);
}

/* A HelloRetryRequest as a TLS 1.3 server writes it (RFC 8446 §4.1.3):
 * TLS 1.3, TLS_AES_128_GCM_SHA256, a key share for secp256r1 wanted. */
static const unsigned char test_hrr[] = {
	0x16, 0x03, 0x03, 0x00, 0x38, 0x02, 0x00, 0x00, 0x34, 0x03, 0x03, 0xcf, 0x21, 0xad, 0x74, 0xe5,
	0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a,
	0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c, 0x00, 0x13, 0x01, 0x00, 0x00,
	0x0c, 0x00, 0x2b, 0x00, 0x02, 0x03, 0x04, 0x00, 0x33, 0x00, 0x02, 0x00, 0x17};

/*
 * An excluded host (localhost) whose server answers the first ClientHello
 * (server name localhost) with a HelloRetryRequest: the client's second
 * hello, in clear too, names sni2 (with extension ext when not 0), behind
 * a change_cipher_spec when ccs. Refused: the server gets nothing but the
 * change_cipher_spec, the client the retry request then a close, and the
 * audit names the rule; else the second hello reaches the server. Bytes
 * that are not TLS (other) instead of the second hello are refused too.
 */
static void excluded_retry_case(const char *sni2, unsigned ext, bool ccs, const char *other, bool refused)
{
	static const char ccs_rec[] = {0x14, 0x03, 0x03, 0x00, 0x01, 0x01};
	struct test_px p;
	char got[4096], *resp, *hello = NULL, *log;
	const char *what = other != NULL ? "bytes that are not TLS" : sni2;
	size_t hl = 0;
	ssize_t k = 0, m = 0;
	int lis, fd, s;

	fd = excluded_tunnel(&p, &lis, &s);
	CU_ASSERT_FATAL(s >= 0);
	CU_ASSERT(test_client_hello("localhost", &hello, &hl) == 0);
	if (hello != NULL)
		CU_ASSERT(raw_send(fd, hello, hl) == 0);
	free(hello);
	hello = NULL;
	{
		struct pollfd pf = {.fd = s, .events = POLLIN};

		/* The first hello, whole, then the retry request. */
		while (m < (ssize_t)hl && poll(&pf, 1, 2000) == 1 && (k = read(s, got, sizeof(got))) > 0)
			m += k;
		ROW(m == (ssize_t)hl, "excluded host, retry: the first hello did not reach the server (%zd of %zu bytes)",
		    m, hl);
		CU_ASSERT(write(s, test_hrr, sizeof(test_hrr)) == (ssize_t)sizeof(test_hrr));
	}
	{
		struct pollfd pf = {.fd = fd, .events = POLLIN};

		m = 0;
		while (m < (ssize_t)sizeof(test_hrr) && poll(&pf, 1, 2000) == 1 &&
		       (k = read(fd, got + m, sizeof(test_hrr) - (size_t)m)) > 0)
			m += k;
		ROW(m == (ssize_t)sizeof(test_hrr) && memcmp(got, test_hrr, sizeof(test_hrr)) == 0,
		    "excluded host, retry: the client did not get the HelloRetryRequest (%zd bytes)", m);
	}
	if (ccs)
		CU_ASSERT(raw_send(fd, ccs_rec, sizeof(ccs_rec)) == 0);
	if (other != NULL) {
		CU_ASSERT(raw_send(fd, other, strlen(other)) == 0);
	} else {
		CU_ASSERT(test_client_hello_ext(sni2, ext, &hello, &hl) == 0);
	}
	if (hello != NULL)
		CU_ASSERT(raw_send(fd, hello, hl) == 0);
	free(hello);
	{
		struct pollfd pf = {.fd = s, .events = POLLIN};
		long long deadline = test_mono_ms() + 1000;

		m = 0;
		while (test_mono_ms() < deadline && poll(&pf, 1, 200) >= 0) {
			if (!(pf.revents & POLLIN))
				continue;
			if ((k = read(s, got + m, sizeof(got) - (size_t)m)) <= 0)
				break;
			m += k;
		}
	}
	if (refused) {
		bool eof = false;

		resp = raw_read(fd, NULL, 3000, &eof);
		ROW(eof, "excluded host, retry, %s: the connection stayed open", what);
		free(resp);
		ROW(m == (ccs ? (ssize_t)sizeof(ccs_rec) : 0) && (m == 0 || memcmp(got, ccs_rec, sizeof(ccs_rec)) == 0),
		    "excluded host, retry, %s: the server received %zd bytes after its retry request", what, m);
	} else {
		size_t at = ccs ? sizeof(ccs_rec) : 0;

		ROW(m > (ssize_t)at && (unsigned char)got[at] == 0x16,
		    "excluded host, retry, %s: the second hello did not reach the server (%zd bytes)", what, m);
	}
	close(fd);
	close(s);
	close(lis);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	if (refused) {
		log = test_read_file(p.audit, NULL);
		ROW(log != NULL && strstr(log, other != NULL ? "after the server's HelloRetryRequest"
				      : ext != 0 ? "encrypted_client_hello"
						 : "the TLS server name must name the CONNECT target") != NULL,
		    "excluded host, retry, %s: no audit line names the rule:\n%.1000s", what, test_nz(log));
		free(log);
	}
}

/* Round 31's open item: a client provokes a HelloRetryRequest and names
 * another server, in clear, in its second hello. */
static void test_tunnel_excluded_retry(void)
{
	excluded_retry_case("evil.example", 0, false, NULL, true);
	excluded_retry_case("localhost.evil.example", 0, true, NULL, true);
	excluded_retry_case("localhost", 0xfe0d, true, NULL, true);
	excluded_retry_case(NULL, 0, true, "EHLO evil.example\r\n", true);
	excluded_retry_case("localhost", 0, true, NULL, false);
	excluded_retry_case(NULL, 0, false, NULL, false);
}

/* An upstream that speaks first (SMTP, an SSH server): the tunnel is
 * refused, its banner never reaches the client. */
static void test_tunnel_server_first(void)
{
	struct test_px p;
	char addr[64], req[128], *resp;
	int lis, fd, s;

	lis = loopback_listener(addr, sizeof(addr));
	CU_ASSERT_FATAL(lis >= 0);
	CU_ASSERT_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n") == 0);
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	int n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr);
	CU_ASSERT(raw_send(fd, req, (size_t)n) == 0);
	s = accept(lis, NULL, NULL);
	CU_ASSERT(s >= 0);
	if (s >= 0)
		CU_ASSERT(write(s, "220 smtp.test ESMTP secret-banner\r\n", 36) == 36);
	resp = raw_read(fd, NULL, 3000, NULL);
	ROW(resp != NULL && strstr(resp, "HTTP/1.1 403") != NULL && strstr(resp, "neither HTTP nor TLS") != NULL &&
		    strstr(resp, "secret-banner") == NULL,
	    "a tunnel whose server speaks first: not refused, or its banner reached the client: %.300s", test_nz(resp));
	free(resp);
	close(fd);
	if (s >= 0)
		close(s);
	close(lis);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_bytes_after_connect_head(void)
{
	struct test_px p;
	char req[256], *resp;
	int fd, n;

	/* The request inside the tunnel arrives in the same packet as the
	 * CONNECT head: it must be relayed, not lost. */
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\nHost: %s\r\n\r\n",
		     up.addr, up.addr);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	resp = raw_read(fd, "hello\n", 5000, NULL);
	CU_ASSERT(resp != NULL && strncmp(resp, "HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200", 51) == 0);
	free(resp);
	close(fd);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* ------------------------------------------------------------------ */
/* proxy_smuggling                                                     */
/* ------------------------------------------------------------------ */

static struct test_px px_smug;

static int smuggling_init(void)
{
	if (fixtures_up() < 0)
		return -1;
	return test_px_startf(&px_smug, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n");
}

static int smuggling_cleanup(void)
{
	int bad = test_px_stop(&px_smug) != 0;

	return fixtures_down() < 0 || bad ? -1 : 0;
}

/*
 * Sends one crafted request (%s = the upstream address) and checks: the
 * proxy answers 400 (or want) and closes, and the upstream record never
 * shows the smuggled request; with head_level, it shows nothing at all.
 */
static void smuggle(const char *fmt, int want, bool head_level)
{
	char req[2048], *resp, *rec;
	size_t before = test_file_size(record_path);
	bool eof = false;
	int n;

	n = snprintf(req, sizeof(req), fmt, up.addr, up.addr);
	resp = raw_exchange(px_smug.addr, req, (size_t)n, &eof);
	CU_ASSERT_FATAL(resp != NULL);
	if (strncmp(resp, "HTTP/1.1 ", 9) != 0 || atoi(resp + 9) != want)
		fprintf(stderr, "smuggling case got: %.80s\n  for: %.120s\n", resp, req);
	CU_ASSERT(strncmp(resp, "HTTP/1.1 ", 9) == 0 && atoi(resp + 9) == want);
	CU_ASSERT(eof);
	CU_ASSERT(strstr(resp, "X-Upstream-Conn") == NULL);
	free(resp);
	/* Anything forwarded would be recorded by the time the proxy and
	 * the upstream are quiet. */
	quiet_for(&px_smug, 1000);
	rec = test_read_file(record_path, NULL);
	CU_ASSERT(rec == NULL || strstr(rec + before, "/smuggled") == NULL);
	if (head_level)
		CU_ASSERT_EQUAL(test_file_size(record_path), before);
	free(rec);
}

static void test_cl_and_te(void)
{
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 4\r\n"
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
		400, true);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n"
		"Content-Length: 4\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
		400, true);
}

static void test_duplicate_cl(void)
{
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nContent-Length: 38\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", 400, true);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 1, 1\r\n\r\nx"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
}

static void test_bad_chunks(void)
{
	/* The head went upstream before the body was seen; what follows the
	 * bad chunk never does. */
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
		"zz\r\nGET /smuggled HTTP/1.1\r\n\r\n0\r\n\r\n", 400, false);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
		"fffffffffffffffff1\r\nGET /smuggled HTTP/1.1\r\n\r\n", 400, false);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked, identity\r\n\r\n"
		"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: identity\r\n\r\n"
		"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n", 400, true);
}

static void test_obs_fold(void)
{
	smuggle("GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nX-A: b\r\n folded\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nX-A: b\r\n\tContent-Length: 5\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
}

static void test_bare_cr_lf(void)
{
	smuggle("GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nX-A: b\rContent-Length: 5\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("GET http://%s/hello HTTP/1.1\r\nHost: %s\nContent-Length: 5\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("GET http://%s/hello HTTP/1.1\nHost: %s\n\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
}

static void test_invalid_header_chars(void)
{
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nContent-Length : 26\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nTransfer Encoding: chunked\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	smuggle("GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nX-A: b\x01\r\n\r\n"
		"GET /smuggled HTTP/1.1\r\n\r\n", 400, true);
	/* Connection may not strip a framing header. */
	smuggle("POST http://%s/echo HTTP/1.1\r\nHost: %s\r\nConnection: Content-Length\r\n"
		"Content-Length: 26\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n", 400, true);
}

/* ------------------------------------------------------------------ */
/* proxy_limits                                                        */
/* ------------------------------------------------------------------ */

static int limits_init(void)
{
	return fixtures_up();
}

static int limits_cleanup(void)
{
	return fixtures_down();
}

/*
 * Round 21 of the attack: 3,000 connections, each holding 65,000 bytes of
 * a head it never finished, took 218 MB of the proxy's memory until
 * handshakeTimeoutMs; nothing counted them, since a slot is taken at the
 * first allowed request. Connections holding no slot now count up to
 * maxTunnels; the next takes the place of the oldest (round 22: refusing
 * the newest let silent connections lock every other client out). One
 * holding a slot is not among them, nor one refused (a refusal closes
 * it).
 */
static void test_waiting_limit(void)
{
	static const char partial[] = "GET http://127.0.0.1/hello HTTP/1.1\r\nX-Slow: aaaaaaaa";
	char req[256], denied[] = "GET http://denied.example/ HTTP/1.1\r\nHost: denied.example\r\n\r\n";
	struct test_px p;
	int held, w[2], extra;
	bool closed = false;
	char *r;

	snprintf(req, sizeof(req), "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\n\r\n", up.addr, up.addr);
	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  limits: {maxTunnels: 2}\n"), 0);
	/* A slot: one allowed request answered, the connection kept. */
	held = raw_connect(p.addr);
	CU_ASSERT_FATAL(held >= 0);
	CU_ASSERT(raw_send(held, req, strlen(req)) == 0);
	r = raw_read(held, "\r\n\r\n", 5000, NULL);
	ROW(r != NULL && strncmp(r, "HTTP/1.1 200", 12) == 0, "the first request: '%s'", test_nz(r));
	free(r);
	/* A refusal closes its connection: it waits no more. */
	w[0] = raw_connect(p.addr);
	CU_ASSERT_FATAL(w[0] >= 0);
	CU_ASSERT(raw_send(w[0], denied, sizeof(denied) - 1) == 0);
	r = raw_read(w[0], NULL, 5000, &closed);
	ROW(r != NULL && strncmp(r, "HTTP/1.1 403", 12) == 0 && closed, "the denied request: '%s'", test_nz(r));
	free(r);
	close(w[0]);
	closed = false;
	quiet_for(&p, 500); /* its close seen */
	/* Two waiting: heads never finished. */
	w[0] = raw_connect(p.addr);
	w[1] = raw_connect(p.addr);
	CU_ASSERT_FATAL(w[0] >= 0 && w[1] >= 0);
	CU_ASSERT(raw_send(w[0], partial, sizeof(partial) - 1) == 0);
	CU_ASSERT(raw_send(w[1], partial, sizeof(partial) - 1) == 0);
	quiet_for(&p, 300); /* the proxy has taken both */
	/* Round 22: a third takes the place of the oldest waiting one
	 * (refusing the newest let 256 silent connections lock every other
	 * client out); its allowed request takes the second slot. */
	extra = raw_connect(p.addr);
	CU_ASSERT_FATAL(extra >= 0);
	CU_ASSERT(raw_send(extra, req, strlen(req)) == 0);
	r = raw_read(extra, "\r\n\r\n", 5000, NULL);
	ROW(r != NULL && strncmp(r, "HTTP/1.1 200", 12) == 0, "a third connection: '%s'", test_nz(r));
	free(r);
	r = raw_read(w[0], NULL, 3000, &closed);
	ROW(closed && r != NULL && r[0] == '\0', "the oldest waiting one was not closed: '%s'", test_nz(r));
	free(r);
	closed = false;
	r = raw_read(w[1], NULL, 300, &closed);
	ROW(!closed, "the newer waiting one was closed: '%s'", test_nz(r));
	free(r);
	close(w[0]);
	close(extra);
	close(w[1]);
	close(held);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_slowloris(void)
{
	static const char head[] = "GET http://127.0.0.1/hello HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa";
	struct test_px p;
	long long t0, t;
	bool closed = false;
	int fd;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  limits: {handshakeTimeoutMs: 1000}\n"), 0);
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	t0 = test_mono_ms();
	/* One byte every 100 ms: a read timeout would never fire. */
	for (size_t i = 0; i < sizeof(head) - 1 && test_mono_ms() - t0 < 5000; i++) {
		char *r;

		if (raw_send(fd, head + i, 1) < 0) {
			closed = true;
			break;
		}
		r = raw_read(fd, NULL, 100, &closed);
		free(r);
		if (closed)
			break;
	}
	t = test_mono_ms() - t0;
	CU_ASSERT(closed);
	CU_ASSERT(t >= 900 && t < 3000);
	close(fd);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

static void test_upstream_timeout(void)
{
	struct test_px p;
	char *out = NULL;
	long long t0;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						      "  limits: {idleTimeoutMs: 500}\n"), 0);
	t0 = test_mono_ms();
	CU_ASSERT_EQUAL(test_curl(&out, "-i", "-x", p.url, test_upstream_url(&up, "/delay/5000"), NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "HTTP/1.1 504", 12) == 0);
	CU_ASSERT(test_mono_ms() - t0 < 3000);
	free(out);
	/* A tunnel idle past the limit is closed. */
	{
		char *r;
		bool eof = false;
		int st, fd = open_tunnel(p.addr, up.addr, &st);

		CU_ASSERT_FATAL(fd >= 0);
		t0 = test_mono_ms();
		r = raw_read(fd, NULL, 3000, &eof);
		free(r);
		CU_ASSERT(eof);
		CU_ASSERT(test_mono_ms() - t0 >= 400 && test_mono_ms() - t0 < 2500);
		close(fd);
	}
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

/* utime + stime of pid in clock ticks, -1 on error. */
static long cpu_ticks(pid_t pid)
{
	char path[64], *s, *p;
	unsigned long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = test_read_file(path, NULL);
	p = s != NULL ? strrchr(s, ')') : NULL;
	/* Fields after the command: state is 3rd, utime 14th, stime 15th. */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) {
		free(s);
		return -1;
	}
	free(s);
	return (long)(ut + st);
}

/* How many descriptors process pid has open, or -1. */
static int open_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	(void)closedir(d);
	return n;
}

/* Out of descriptors: the listener pauses instead of spinning on EMFILE,
 * and accepts again once descriptors are free. */
/* `[WRAP...] passavant proxy -p DIR/NAME.yaml --listen 127.0.0.1:0
 * --session-dir DIR/NAME-session [EXTRA...]` with a policy allowing
 * 127.0.0.1, started and listening (its address into addr); wrap and
 * extra are NULL-terminated, or NULL. */
static struct test_proc *start_proxy_as(const char *name, const char *const *wrap, const char *const *extra,
					char *addr, size_t addrlen)
{
	static const char pol[] = "network:\n  allowedDomains: [\"127.0.0.1\"]\n";
	char policy[4200], sess[4200];
	const char *argv[24];
	size_t i = 0;

	snprintf(policy, sizeof(policy), "%s/%s.yaml", dir, name);
	snprintf(sess, sizeof(sess), "%s/%s-session", dir, name);
	if (test_write_file(policy, pol, sizeof(pol) - 1) != 0)
		return NULL;
	for (size_t k = 0; wrap != NULL && wrap[k] != NULL && i < 8; k++)
		argv[i++] = wrap[k];
	argv[i++] = test_passavant_bin();
	argv[i++] = "proxy";
	argv[i++] = "-p";
	argv[i++] = policy;
	argv[i++] = "--listen";
	argv[i++] = "127.0.0.1:0";
	argv[i++] = "--session-dir";
	argv[i++] = sess;
	for (size_t k = 0; extra != NULL && extra[k] != NULL && i < 23; k++)
		argv[i++] = extra[k];
	argv[i] = NULL;
	return test_proc_start((char *const *)argv, "listening on ", addr, addrlen, 10000);
}

/* One curl through proxy url to /hello?q: "CODE XERR" (the status and
 * the X-Proxy-Error value, "-" without one) into buf. */
static void status_of(const char *url, const char *q, char *buf, size_t cap)
{
	char target[300], *out = NULL, *x;

	snprintf(target, sizeof(target), "%s%s", test_upstream_url(&up, "/hello?"), q);
	(void)test_curl(&out, "-i", "-x", url, target, NULL);
	x = out != NULL ? strcasestr(out, "\nX-Proxy-Error: ") : NULL;
	snprintf(buf, cap, "%.3s %.*s", out != NULL && strlen(out) > 12 ? out + 9 : "000",
		 x != NULL ? (int)strcspn(x + 16, "\r\n") : 1, x != NULL ? x + 16 : "-");
	free(out);
}

/* Round 4 of the attack: the audit file cannot be written (its
 * filesystem is full; here its size limit, RLIMIT_FSIZE, with SIGXFSZ
 * ignored as a full disk sends none): nothing may leave unrecorded, so
 * requests are refused (503, audit-unavailable) until a record can be
 * written again; the refusal that finds it writable is recorded, and the
 * next request is served. */
static void test_audit_fail_closed(void)
{
	static const char *const wrap[] = {"sh", "-c", "trap '' XFSZ; exec \"$@\"", "sh", NULL};
	char audit[4200], addr[80], url[120], st[128], *log;
	const char *extra[] = {"--audit", audit, NULL};
	struct test_proc *proc;
	struct rlimit rl;
	size_t len = 0;

	snprintf(audit, sizeof(audit), "%s/auditfull.jsonl", dir);
	proc = start_proxy_as("auditfull", wrap, extra, addr, sizeof(addr));
	CU_ASSERT_FATAL(proc != NULL);
	snprintf(url, sizeof(url), "http://%s", addr);
	status_of(url, "af=1", st, sizeof(st));
	CU_ASSERT_STRING_EQUAL(st, "200 -");
	free(test_read_file(audit, &len));
	CU_ASSERT(len > 0);
	/* The file may not grow any more. */
	CU_ASSERT_FATAL(prlimit(test_proc_pid(proc), RLIMIT_FSIZE, NULL, &rl) == 0);
	rl.rlim_cur = (rlim_t)len;
	CU_ASSERT_FATAL(prlimit(test_proc_pid(proc), RLIMIT_FSIZE, &rl, NULL) == 0);
	/* This one's record is the first that fails: it left already. */
	status_of(url, "af=2", st, sizeof(st));
	CU_ASSERT_STRING_EQUAL(st, "200 -");
	status_of(url, "af=3", st, sizeof(st));
	CU_ASSERT_STRING_EQUAL(st, "503 audit-unavailable");
	rl.rlim_cur = rl.rlim_max;
	CU_ASSERT_FATAL(prlimit(test_proc_pid(proc), RLIMIT_FSIZE, &rl, NULL) == 0);
	status_of(url, "af=4", st, sizeof(st));
	CU_ASSERT_STRING_EQUAL(st, "503 audit-unavailable");
	status_of(url, "af=5", st, sizeof(st));
	CU_ASSERT_STRING_EQUAL(st, "200 -");
	log = test_read_file(audit, NULL);
	CU_ASSERT_FATAL(log != NULL);
	CU_ASSERT(strstr(log, "/hello?af=1") != NULL && strstr(log, "/hello?af=2") == NULL &&
		  strstr(log, "/hello?af=3") == NULL && strstr(log, "/hello?af=5") != NULL);
	CU_ASSERT(strstr(log, "the audit file cannot be written") != NULL);
	free(log);
	/* What the upstream got: the request that left unrecorded, never
	 * the refused ones. */
	log = test_read_file(record_path, NULL);
	CU_ASSERT_FATAL(log != NULL);
	CU_ASSERT(strstr(log, "/hello?af=2") != NULL && strstr(log, "/hello?af=3") == NULL &&
		  strstr(log, "/hello?af=4") == NULL && strstr(log, "/hello?af=5") != NULL);
	free(log);
	CU_ASSERT_EQUAL(test_proc_stop(proc, SIGTERM, 5000), 0);
	test_proc_free(proc);
}

static void test_emfile_pause(void)
{
	/* One loop: with several, a closed connection still queued for one
	 * loop can hold the last descriptor while another dials upstream
	 * (a 502 naming EMFILE: right, but not what this test looks at). */
	static const char *const wrap[] = {"prlimit", "--nofile=24", NULL};
	static const char *const extra[] = {"--loops", "1", NULL};
	char addr[80], *out = NULL, url[120];
	struct test_proc *proc;
	int fds[40], i, n = 0, base, now = -1;
	long t0, t1;

	proc = start_proxy_as("emfile", wrap, extra, addr, sizeof(addr));
	CU_ASSERT_FATAL(proc != NULL);
	base = open_fds(test_proc_pid(proc));
	CU_ASSERT_FATAL(base > 0);
	for (i = 0; i < 40; i++) {
		fds[i] = raw_connect(addr);
		if (fds[i] >= 0)
			n++;
	}
	CU_ASSERT(n > 24);
	usleep(300000);
	t0 = cpu_ticks(test_proc_pid(proc));
	sleep(1);
	t1 = cpu_ticks(test_proc_pid(proc));
	fprintf(stderr, "\n    proxy CPU while out of descriptors: %ld ticks in 1 s\n", t1 - t0);
	CU_ASSERT(t0 >= 0 && t1 - t0 < 30); /* a spinning loop burns ~100 */
	for (i = 0; i < 40; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* The proxy has closed its side of them: back to the descriptors
	 * it had before (a fixed wait was too short under ASan on a loaded
	 * machine; the pause must end, so 10 s is a failure, not a wait). */
	for (t0 = test_mono_ms(); test_mono_ms() - t0 < 10000; usleep(20000)) {
		now = open_fds(test_proc_pid(proc));
		if (now >= 0 && now <= base)
			break;
	}
	CU_ASSERT(now >= 0 && now <= base);
	snprintf(url, sizeof(url), "http://%s", addr);
	/* When the listener resumes it first accepts what the backlog still
	 * holds of the 40 (closed by now, each read to EOF and closed): for
	 * a moment the descriptors can run out again, and a request then
	 * gets the 502 naming EMFILE, which is right. Accepting again is
	 * what this test looks at: the answer must come within 10 s. */
	for (t0 = test_mono_ms(); test_mono_ms() - t0 < 10000; usleep(200000)) {
		free(out);
		out = NULL;
		if (test_curl(&out, "-x", url, test_upstream_url(&up, "/hello"), NULL) == 0 && out != NULL &&
		    strcmp(out, "hello\n") == 0)
			break;
		fprintf(stderr, "\n    after the pause, not yet: %.200s\n", out != NULL ? out : "(no answer)");
	}
	CU_ASSERT(out != NULL && strcmp(out, "hello\n") == 0);
	free(out);
	CU_ASSERT_EQUAL(test_proc_stop(proc, SIGTERM, 5000), 0);
	test_proc_free(proc);
}

/*
 * python3's http.client, one kept-alive connection to the proxy (argv:
 * tls|plain|late, proxy, target, cafile, pause): two requests, the pause,
 * then a GET and a 100,000-byte POST; late: one GET on a first tunnel,
 * closed, then a second tunnel and its TLS handshake, the pause, and one
 * GET. Prints "STATUS:CONN:BODY" per request
 * (CONN: pv-upstream's X-Upstream-Conn) and "same" if the client's
 * connection is still the one it opened (http.client never re-opens one
 * by itself while a socket is set: a closed one fails the request).
 */
static const char py_keep[] =
	"import http.client, ssl, sys, time\n"
	"mode, proxy, target, cafile, pause = sys.argv[1:6]\n"
	"ph, pp = proxy.rsplit(':', 1)\n"
	"def conn():\n"
	"    if mode == 'plain':\n"
	"        return http.client.HTTPConnection(ph, int(pp), timeout=20), 'http://' + target\n"
	"    ctx = ssl.create_default_context(cafile=cafile)\n"
	"    c = http.client.HTTPSConnection(ph, int(pp), timeout=20, context=ctx)\n"
	"    th, tp = target.rsplit(':', 1); c.set_tunnel(th, int(tp)); return c, ''\n"
	"def ask(c, base, path, body=None):\n"
	"    c.request('POST' if body else 'GET', base + path, body=body)\n"
	"    r = c.getresponse(); b = r.read().decode().strip()\n"
	"    return '%s:%s:%s' % (r.status, r.getheader('X-Upstream-Conn'), b)\n"
	"c, base = conn()\n"
	"if mode == 'late':\n"
	"    first = ask(c, base, '/hello'); c.close()\n"
	"    c, base = conn(); c.connect(); time.sleep(float(pause))\n"
	"    print(first, ask(c, base, '/hello')); sys.exit(0)\n"
	"out = [ask(c, base, '/tls-resumed')]; port = c.sock.getsockname()[1]\n"
	"out.append(ask(c, base, '/tls-resumed'))\n"
	"time.sleep(float(pause))\n"
	"out += [ask(c, base, '/tls-resumed'), ask(c, base, '/sink', b'x' * 100000)]\n"
	"out.append('same' if c.sock.getsockname()[1] == port else 'other')\n"
	"print(' '.join(out))\n";

/* Runs py_keep through p to u (tls or plain) with a pause of pause_s;
 * its output line, or NULL. */
static char *keep_run(const struct test_px *p, const struct test_upstream *u, const char *mode, const char *pause_s)
{
	char *argv[9], *out = NULL, *err = NULL;
	int rc;

	argv[0] = "python3";
	argv[1] = "-c";
	argv[2] = (char *)py_keep;
	argv[3] = (char *)mode;
	argv[4] = (char *)p->addr;
	argv[5] = (char *)u->addr;
	argv[6] = (char *)p->trust;
	argv[7] = (char *)pause_s;
	argv[8] = NULL;
	rc = test_run_capture(argv, &out, &err, 30000);
	if (rc != 0) {
		fprintf(stderr, "python3 (keep-alive) exited %d: %s\n", rc, err != NULL ? err : "");
		free(out);
		out = NULL;
	}
	free(err);
	return out;
}

/*
 * upstreamKeepAliveMs: an upstream idle between two requests of a
 * kept-alive client connection is closed at upstreamKeepAliveMs; the
 * client's connection stays (idleTimeoutMs), and its next requests go on
 * a new upstream connection (TLS resumed: no certificate chain again),
 * bodies included. 0 keeps it until idleTimeoutMs, and so does the
 * default (5000) over a shorter pause.
 */
static void test_upstream_keepalive(void)
{
	static const char *const pols[] = {
		"  limits: {upstreamKeepAliveMs: 300, idleTimeoutMs: 10000}\n",
		"  limits: {upstreamKeepAliveMs: 0, idleTimeoutMs: 10000}\n",
		"",
	};
	struct test_px p;
	char *out;
	int a, b, c, d;

	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir,
						     "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
						     "  tlsTerminate:\n    extraCaCertPaths: [\"%s/ca.pem\"]\n%s",
						     dir, pols[i]),
				      0);
		/* Terminated tunnel: full, full (the same TLS connection),
		 * then after the pause a new one, resumed, or still the first. */
		out = keep_run(&p, &up_tls, "tls", "1.0");
		if (out != NULL && sscanf(out, "200:%d:full 200:%d:full 200:%d:%*[a-z] 200:%d:100000 same",
					  &a, &b, &c, &d) == 4) {
			CU_ASSERT_EQUAL(a, b);
			CU_ASSERT_EQUAL(c, d);
			if (i == 0) {
				CU_ASSERT_EQUAL(c, b + 1);
				CU_ASSERT(strstr(out, ":resumed ") != NULL);
			} else {
				CU_ASSERT_EQUAL(c, b);
			}
		} else {
			CU_FAIL("keep-alive through a terminated tunnel");
			fprintf(stderr, "    got: %s\n", out != NULL ? out : "(nothing)");
		}
		free(out);
		/* Plain HTTP through the proxy: the same, without TLS. */
		out = keep_run(&p, &up, "plain", "1.0");
		if (out != NULL && sscanf(out, "200:%d:plain 200:%d:plain 200:%d:plain 200:%d:100000 same",
					  &a, &b, &c, &d) == 4) {
			CU_ASSERT_EQUAL(a, b);
			CU_ASSERT_EQUAL(c, d);
			CU_ASSERT_EQUAL(c, i == 0 ? b + 1 : b);
		} else {
			CU_FAIL("keep-alive through the proxy, plain HTTP");
			fprintf(stderr, "    got: %s\n", out != NULL ? out : "(nothing)");
		}
		free(out);
		/* The upstream dialled for a tunnel's TLS handshake goes too when
		 * no first request comes: that request then resumes TLS on a new
		 * connection (with 0, and the default, it uses the first one). */
		out = keep_run(&p, &up_tls, "late", "1.0");
		if (out != NULL && sscanf(out, "200:%d:hello 200:%d:hello", &a, &b) == 2) {
			/* a: the first tunnel's; a + 1: the second's, dialled
			 * for its handshake. */
			CU_ASSERT_EQUAL(b, i == 0 ? a + 2 : a + 1);
		} else {
			CU_FAIL("a first request after a pause");
			fprintf(stderr, "    got: %s\n", out != NULL ? out : "(nothing)");
		}
		free(out);
		CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	}
}

/*
 * An LD_PRELOAD shim for the proxy: once the file named by PV_STEP_FILE
 * exists, the wall clock (gettimeofday(), CLOCK_REALTIME) reads
 * PV_STEP_S seconds off, as after an NTP step or a VM resumed. The
 * monotonic clock is left alone.
 */
static const char step_shim[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n#include <stdlib.h>\n#include <sys/time.h>\n#include <time.h>\n#include <unistd.h>\n"
	"static long off(void) { const char *f = getenv(\"PV_STEP_FILE\"), *s = getenv(\"PV_STEP_S\");\n"
	"  return f != NULL && s != NULL && access(f, F_OK) == 0 ? atol(s) : 0; }\n"
	"int gettimeofday(struct timeval *tv, void *tz) {\n"
	"  static int (*real)(struct timeval *, void *);\n"
	"  if (real == NULL) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, \"gettimeofday\");\n"
	"  int r = real(tv, tz); if (r == 0 && tv != NULL) tv->tv_sec += off(); return r; }\n"
	"int clock_gettime(clockid_t id, struct timespec *ts) {\n"
	"  static int (*real)(clockid_t, struct timespec *);\n"
	"  if (real == NULL) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, \"clock_gettime\");\n"
	"  int r = real(id, ts);\n"
	"  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += off();\n"
	"  return r; }\n";

/* A kept-alive plain-HTTP client through the proxy (argv: proxy, target,
 * step file): a GET, then the step file made, 3 s of quiet, a GET: prints
 * both statuses, or "closed" if the proxy closed the connection. */
static const char py_step[] =
	"import http.client, sys, time\n"
	"proxy, target, step = sys.argv[1:4]\n"
	"ph, pp = proxy.rsplit(':', 1)\n"
	"c = http.client.HTTPConnection(ph, int(pp), timeout=20)\n"
	"def ask():\n"
	"    c.request('GET', 'http://%s/hello' % target); r = c.getresponse(); r.read(); return str(r.status)\n"
	"out = [ask()]; port = c.sock.getsockname()[1]\n"
	"open(step, 'w').close(); time.sleep(3)\n"
	"try: out.append(ask() + (' same' if c.sock.getsockname()[1] == port else ' other'))\n"
	"except (http.client.HTTPException, OSError): out.append('closed')\n"
	"print(' '.join(out))\n";

/*
 * Idle times run on the monotonic clock: with the proxy's wall clock
 * stepped back 20 s, or forward 2 minutes, while a kept-alive client
 * waits between requests, the client is neither closed at
 * upstreamKeepAliveMs (1 s) nor at all within idleTimeoutMs (10 s), and
 * its next request is served on the same connection.
 */
static void test_clock_step(void)
{
	static const char *const steps[] = {"-20", "120"};
	char shim_c[4200], shim_so[4200], stepf[4200], env_pre[4300], env_f[4300], env_s[64], asan[512];
	char *cc[] = {"cc", "-shared", "-fPIC", "-o", shim_so, shim_c, "-ldl", NULL};

	snprintf(shim_c, sizeof(shim_c), "%s/stepshim.c", dir);
	snprintf(shim_so, sizeof(shim_so), "%s/stepshim.so", dir);
	CU_ASSERT_FATAL(test_write_file(shim_c, step_shim, sizeof(step_shim) - 1) == 0);
	CU_ASSERT_FATAL(test_run_capture(cc, NULL, NULL, 60000) == 0);
	/* An ASan build wants its runtime first; the shim comes first here. */
	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
		 getenv("ASAN_OPTIONS") != NULL ? getenv("ASAN_OPTIONS") : "",
		 getenv("ASAN_OPTIONS") != NULL ? ":" : "");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct test_px p;
		char *out = NULL, *err = NULL;

		snprintf(stepf, sizeof(stepf), "%s/step-%zu", dir, i);
		snprintf(env_pre, sizeof(env_pre), "LD_PRELOAD=%s", shim_so);
		snprintf(env_f, sizeof(env_f), "PV_STEP_FILE=%s", stepf);
		snprintf(env_s, sizeof(env_s), "PV_STEP_S=%s", steps[i]);
		{
			char *wrap[] = {"env", env_pre, env_f, env_s, asan, NULL};
			char *argv[] = {"python3", "-c", (char *)py_step, p.addr, up.addr, stepf, NULL};

			CU_ASSERT_EQUAL_FATAL(test_px_start(&p, dir, wrap,
							    "network:\n  allowedDomains: [\"127.0.0.1\"]\n"
							    "  limits: {idleTimeoutMs: 10000, upstreamKeepAliveMs: 1000}\n"),
					      0);
			CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, 30000), 0);
		}
		CU_ASSERT(out != NULL && strcmp(out, "200 200 same\n") == 0);
		if (out == NULL || strcmp(out, "200 200 same\n") != 0)
			fprintf(stderr, "    wall clock %s s: got %s%s\n", steps[i], out != NULL ? out : "(nothing)",
				err != NULL ? err : "");
		free(out);
		free(err);
		CU_ASSERT_EQUAL(test_px_stop(&p), 0);
	}
}

static void test_stalled_download(void)
{
	struct test_px p;
	char req[256], *r;
	long before, mid, after;
	int fd, n, rcv = 4096;

	CU_ASSERT_EQUAL_FATAL(test_px_startf(&p, dir, "network:\n  allowedDomains: [\"127.0.0.1\"]\n"), 0);
	before = test_rss_kib(test_proc_pid(p.proc));
	fd = raw_connect(p.addr);
	CU_ASSERT_FATAL(fd >= 0);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	n = snprintf(req, sizeof(req), "GET http://%s/bytes/1073741824 HTTP/1.1\r\nHost: x\r\n\r\n", up.addr);
	CU_ASSERT_EQUAL(raw_send(fd, req, (size_t)n), 0);
	/* Read a little, then stop reading altogether. Without back-pressure
	 * loopback fills hundreds of MiB per second; with it, RSS settles
	 * once the buffers are full (sanitizer builds add their own overhead,
	 * hence the generous absolute bound and the growth check over 2 s). */
	r = raw_read(fd, NULL, 500, NULL);
	free(r);
	{
		/* Buffers full: the proxy and the upstream sleep (at most the
		 * 1 s this used to wait). */
		const pid_t quiet[] = {test_proc_pid(p.proc), test_proc_pid(up.proc)};

		(void)test_wait_quiet(quiet, 2, fd, 1000);
	}
	mid = test_rss_kib(test_proc_pid(p.proc));
	sleep(2);
	after = test_rss_kib(test_proc_pid(p.proc));
	fprintf(stderr, "\n    proxy VmRSS: %ld KiB idle, %ld then %ld KiB with a stalled 1 GiB download\n",
		before, mid, after);
	CU_ASSERT(before > 0 && mid > 0 && after > 0);
	CU_ASSERT(after - before < 16 * 1024);
	CU_ASSERT(after - mid < 1024);
	close(fd);
	CU_ASSERT_EQUAL(test_px_stop(&p), 0);
}

TEST_REGISTRAR(proxy_suites)
{
	CU_pSuite s;

	s = test_suite("proxy_http", http_init, http_cleanup);
	test_add(s, "allowed GET over http", test_get_allowed);
	test_add(s, "keep-alive reuse on both sides", test_keepalive_reuse);
	test_add(s, "bodies streamed (length, chunked, close, upload)", test_streamed_bodies);
	test_add(s, "head rewritten: origin form, Host, hop-by-hop", test_rewrite_head);
	test_add(s, "denied host: 403, header, reason", test_denied_host);
	test_add(s, "pipelined requests, one refused: the right answers", test_pipelined_refusal);
	test_add(s, "allowed name that does not resolve: 502", test_refused_name_not_resolved);
	test_add(s, "TRACE 405, bad targets 400", test_trace_and_bad_targets);
	test_add(s, "TRACK 405", test_track);
	test_add(s, "control bytes in a reason phrase: 502", test_reason_control_bytes);
	test_add(s, "WebSocket upgrade relayed after 101", test_websocket);
	test_add(s, "head over maxHeaderBytes: 431", test_header_too_large);
	test_add(s, "unreachable upstream: 502", test_unreachable);
	test_add(s, "session dir 0700 and env", test_session_dir);
	test_add(s, "audit lines field by field", test_audit_fields);
	test_add(s, "localhost refused unless the IP literal is allowed", test_localhost);
	test_add(s, "method refused by allowedMethods", test_method_refused);
	test_add(s, "a request hidden in a body on a host with a method rule does not run", test_method_body_smuggle);
	test_add(s, "a 204, 304 or 1xx has no body whatever it announces: nothing forged after it, no wait",
		 test_bodiless_status);

	s = test_suite("proxy_connect", connect_init, connect_cleanup);
	test_add(s, "CONNECT tunnel to an HTTPS upstream", test_connect_tunnel);
	test_add(s, "CONNECT to a denied host refused", test_connect_denied);
	test_add(s, "bytes after the CONNECT head are relayed", test_bytes_after_connect_head);
	test_add(s, "a tunnel without TLS: each request decided, Host the CONNECT target, other bytes refused",
		 test_tunnel_without_tls);
	test_add(s, "a tunnel whose server speaks first is refused", test_tunnel_server_first);
	test_add(s, "an excluded host: a hello OpenSSL cannot read, or a server that answers it in clear, is refused",
		 test_tunnel_excluded_not_tls);
	test_add(s, "an excluded host: a ClientHello whose server name is another host is refused (421)",
		 test_tunnel_excluded_sni);
	test_add(s, "an excluded host: the second ClientHello after a HelloRetryRequest is read as the first",
		 test_tunnel_excluded_retry);
	test_add(s, "CONNECT after a plain request on one connection", test_connect_after_keepalive);
	test_add(s, "tunnel half-close: response still delivered", test_tunnel_half_close);
	test_add(s, "maxTunnels+1 gets 503", test_max_tunnels);
	test_add(s, "SIGHUP reload keeps live tunnels", test_reload);
	test_add(s, "SIGHUP: a domain outside the session CA is closed at its handshake, the proxy serves on",
		 test_reload_outside_ca);

	s = test_suite("proxy_smuggling", smuggling_init, smuggling_cleanup);
	test_add(s, "Content-Length with Transfer-Encoding", test_cl_and_te);
	test_add(s, "duplicate or conflicting Content-Length", test_duplicate_cl);
	test_add(s, "bad chunk sizes and transfer codings", test_bad_chunks);
	test_add(s, "obs-fold", test_obs_fold);
	test_add(s, "bare CR and bare LF", test_bare_cr_lf);
	test_add(s, "invalid header characters", test_invalid_header_chars);

	s = test_suite("proxy_limits", limits_init, limits_cleanup);
	test_add(s, "slowloris dropped at handshakeTimeoutMs", test_slowloris);
	test_add(s, "connections waiting for a first allowed request: maxTunnels of them, the oldest gives way", test_waiting_limit);
	test_add(s, "stalled 1 GiB download keeps RSS bounded", test_stalled_download);
	test_add(s, "idle upstream: 504; idle tunnel closed", test_upstream_timeout);
	test_add(s, "EMFILE pauses the listener, then accepts again", test_emfile_pause);
	test_add(s, "audit file that cannot be written: requests refused until it can", test_audit_fail_closed);
	test_add(s, "upstreamKeepAliveMs: an idle upstream goes, the client stays", test_upstream_keepalive);
	test_add(s, "a wall-clock step back or forward closes no idle client early", test_clock_step);
}

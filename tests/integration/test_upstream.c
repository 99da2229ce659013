/*
 * test_upstream.c - self-test of the test fixtures: pv-upstream, the test
 * certificates and the process helpers, checked with real curl directly
 * against the upstream (no proxy involved). Suite "upstream_selftest".
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/net.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/pyscript.h"
#include "tests/support/testlib.h"
#include "tests/support/upstream.h"

static char *dir;              /* temp dir with certs and records */
static char record_path[4096];
static struct test_upstream up;     /* plain HTTP, --record */
static struct test_upstream up_tls; /* HTTPS, server.pem */
static struct test_upstream up_bad; /* HTTPS, bad.pem (other CA) */

static int suite_cleanup(void);

/* CUnit does not call the cleanup of a suite whose init failed: undo here. */
static int suite_init(void)
{
	static const char *const names[] = { "127.0.0.1", "localhost", NULL };
	struct test_upstream_opts o;

	dir = test_mkdtemp();
	if (dir == NULL || test_certs_make(dir, names) < 0)
		goto fail;
	snprintf(record_path, sizeof(record_path), "%s/record.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = record_path;
	if (test_upstream_start(&up, &o) < 0)
		goto fail;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	if (test_upstream_start(&up_tls, &o) < 0)
		goto fail;
	o.cert_name = "bad";
	if (test_upstream_start(&up_bad, &o) < 0)
		goto fail;
	return 0;
fail:
	suite_cleanup();
	return -1;
}

static int suite_cleanup(void)
{
	int bad = 0;

	bad |= test_upstream_stop(&up) != 0;
	bad |= test_upstream_stop(&up_tls) != 0;
	bad |= test_upstream_stop(&up_bad) != 0;
	test_rmtree(dir);
	free(dir);
	dir = NULL;
	return bad ? -1 : 0;
}

/* Returns the value of the n-th (0-based) "X-Upstream-Conn: " in s, -1. */
static long conn_header(const char *s, int nth)
{
	const char *p = s;

	for (int i = 0; p != NULL; i++) {
		p = strstr(p, "X-Upstream-Conn: ");
		if (p == NULL)
			return -1;
		p += strlen("X-Upstream-Conn: ");
		if (i == nth)
			return strtol(p, NULL, 10);
	}
	return -1;
}

static bool is_pattern(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != test_upstream_pattern(i))
			return false;
	return true;
}

static void test_hello(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-i", test_upstream_url(&up, "/hello"), NULL, NULL, NULL, NULL, NULL,
					NULL), 0);
	CU_ASSERT(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0);
	CU_ASSERT(conn_header(out, 0) > 0);
	CU_ASSERT(strstr(out, "\r\n\r\nhello\n") != NULL);
	free(out);
}

static void test_keepalive_reuse(void)
{
	char *out = NULL;
	long a, b;

	/* One curl, two URLs: curl reuses the connection. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", test_upstream_url(&up, "/hello"),
					test_upstream_url(&up, "/hello"), NULL, NULL, NULL, NULL), 0);
	a = conn_header(out, 0);
	b = conn_header(out, 1);
	CU_ASSERT(a > 0);
	CU_ASSERT_EQUAL(a, b);
	free(out);
	/* A new curl process gets a new connection number. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", test_upstream_url(&up, "/hello"), NULL, NULL, NULL, NULL,
					NULL), 0);
	CU_ASSERT(conn_header(out, 0) > b);
	free(out);
}

static void test_bytes(void)
{
	char *out = NULL, path[4096];
	size_t len = 0;
	char *body;

	snprintf(path, sizeof(path), "%s/bytes.out", dir);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", path, "-w", "%{size_download} %{http_code}",
					test_upstream_url(&up, "/bytes/1000003"), NULL, NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "1000003 200");
	free(out);
	body = test_read_file(path, &len);
	CU_ASSERT_FATAL(body != NULL);
	CU_ASSERT_EQUAL(len, 1000003);
	CU_ASSERT(is_pattern(body, len));
	free(body);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{size_download}",
					test_upstream_url(&up, "/bytes/0"), NULL, NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "0");
	free(out);
}

static void test_chunked(void)
{
	char *out = NULL, *body, path[4096];
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/chunked.out", dir);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", "-o", path, test_upstream_url(&up, "/chunked/200000"), NULL,
					NULL, NULL), 0);
	CU_ASSERT(strstr(out, "Transfer-Encoding: chunked\r\n") != NULL);
	CU_ASSERT(strstr(out, "Content-Length") == NULL);
	free(out);
	body = test_read_file(path, &len);
	CU_ASSERT_FATAL(body != NULL);
	CU_ASSERT_EQUAL(len, 200000);
	CU_ASSERT(is_pattern(body, len));
	free(body);
	/* The raw framing, as a proxy would see it. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "--raw", test_upstream_url(&up, "/chunked/5"), NULL, NULL, NULL, NULL,
					NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "5\r\n01234\r\n0\r\n\r\n");
	free(out);
}

static void test_echo(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-H", "X-Test: yes", "--data-binary", "payload-123",
					test_upstream_url(&up, "/echo"), NULL, NULL, NULL), 0);
	CU_ASSERT(strncmp(out, "POST /echo HTTP/1.1\r\n", 21) == 0);
	CU_ASSERT(strstr(out, "\r\nX-Test: yes\r\n") != NULL);
	CU_ASSERT(strstr(out, "\r\nContent-Length: 11\r\n") != NULL);
	CU_ASSERT(strlen(out) > 15 && strcmp(out + strlen(out) - 15, "\r\n\r\npayload-123") == 0);
	free(out);
}

static void test_status_headers_close_sink(void)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{http_code}",
					test_upstream_url(&up, "/status/503"), NULL, NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "503");
	free(out);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{http_code}",
					test_upstream_url(&up, "/nothing-here"), NULL, NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "404");
	free(out);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", test_upstream_url(&up, "/headers?X-One=1&X-Two=a%20b"),
					NULL, NULL, NULL, NULL, NULL), 0);
	CU_ASSERT(strstr(out, "\r\nX-One: 1\r\n") != NULL);
	CU_ASSERT(strstr(out, "\r\nX-Two: a b\r\n") != NULL);
	free(out);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-o", "/dev/null", "-w", "%{http_code}",
					test_upstream_url(&up, "/headers?X-Bad=a%0d%0aInjected:%201"), NULL, NULL,
					NULL), 0);
	CU_ASSERT_STRING_EQUAL(out, "400");
	free(out);
	/* /delay/MS answers after MS ms. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-w", " %{time_total}", test_upstream_url(&up, "/delay/200"), NULL), 0);
	CU_ASSERT(strncmp(out, "delayed 200\n ", 13) == 0);
	CU_ASSERT(strtod(out + 13, NULL) >= 0.2);
	free(out);
	/* /rawhex: exactly these bytes come back, then the connection closes. */
	{
		static const char raw[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
					  "Content-Length: 4\r\n\r\nabcd";
		char path[512];
		bool eof = false;
		int fd;

		CU_ASSERT_FATAL(test_upstream_rawhex_path(path, sizeof(path), raw, sizeof(raw) - 1) == 0);
		fd = test_tcp_connect(up.addr, 5000);
		CU_ASSERT_FATAL(fd >= 0);
		{
			char req[600];
			int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);

			CU_ASSERT(test_send_all(fd, req, (size_t)n) == 0);
		}
		out = test_recv_until(fd, NULL, 5000, NULL, &eof);
		close(fd);
		CU_ASSERT(eof);
		CU_ASSERT_STRING_EQUAL(out ? out : "", raw);
		free(out);
	}
	/* /close: the second request needs a new connection. */
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-D", "-", test_upstream_url(&up, "/close"),
					test_upstream_url(&up, "/hello"), NULL, NULL, NULL, NULL), 0);
	CU_ASSERT(strstr(out, "Connection: close\r\n") != NULL);
	CU_ASSERT(conn_header(out, 1) > conn_header(out, 0));
	free(out);
	/* /sink counts a chunked upload of 3 MB (curl -T - sends chunked). */
	{
		char path[4096], *data = calloc(1, 3000000);

		CU_ASSERT_FATAL(data != NULL);
		snprintf(path, sizeof(path), "%s/upload.bin", dir);
		CU_ASSERT_FATAL(test_write_file(path, data, 3000000) == 0);
		free(data);
		CU_ASSERT_EQUAL_FATAL(test_curl(&out, "-H", "Transfer-Encoding: chunked", "-T", path,
						test_upstream_url(&up, "/sink"), NULL, NULL, NULL), 0);
		CU_ASSERT_STRING_EQUAL(out, "3000000\n");
		free(out);
	}
}

static void test_record(void)
{
	char *rec, *out = NULL, rpath[4096];
	struct test_upstream u;
	struct test_upstream_opts o;
	size_t len = 0;

	/* Our own upstream with its own record: nothing received, file empty. */
	snprintf(rpath, sizeof(rpath), "%s/record2.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = rpath;
	CU_ASSERT_FATAL(test_upstream_start(&u, &o) == 0);
	rec = test_read_file(rpath, &len);
	CU_ASSERT(rec != NULL && len == 0);
	free(rec);
	/* A chunked POST is recorded with its framing, then a GET. */
	CU_ASSERT_EQUAL(test_curl(&out, "-H", "Transfer-Encoding: chunked", "--data-binary", "hello",
				  test_upstream_url(&u, "/echo"), test_upstream_url(&u, "/hello"), "-X", "POST", NULL), 0);
	free(out);
	CU_ASSERT_EQUAL(test_upstream_stop(&u), 0);
	rec = test_read_file(rpath, &len);
	CU_ASSERT_FATAL(rec != NULL);
	CU_ASSERT(strncmp(rec, "=== conn 1 req 1 ===\nPOST /echo HTTP/1.1\r\n", 42) == 0);
	CU_ASSERT(strstr(rec, "\r\nTransfer-Encoding: chunked\r\n") != NULL);
	CU_ASSERT(strstr(rec, "\r\n\r\n5\r\nhello\r\n0\r\n\r\n=== conn 1 req 2 ===\nPOST /hello") !=
		  NULL);
	free(rec);
	/* The shared upstream recorded the earlier tests' requests. */
	rec = test_read_file(record_path, &len);
	CU_ASSERT_FATAL(rec != NULL);
	CU_ASSERT(strstr(rec, "=== conn 1 req 1 ===\nGET /hello HTTP/1.1\r\n") != NULL);
	CU_ASSERT(strstr(rec, "X-Test: yes\r\n") != NULL);
	free(rec);
}

static void test_https(void)
{
	char cafile[4096], *out = NULL;

	snprintf(cafile, sizeof(cafile), "%s/ca.pem", dir);
	CU_ASSERT_EQUAL_FATAL(test_curl(&out, "--cacert", cafile, "-D", "-", test_upstream_url(&up_tls, "/hello"),
					test_upstream_url(&up_tls, "/hello"), NULL, NULL), 0);
	CU_ASSERT(strstr(out, "hello\n") != NULL);
	CU_ASSERT(conn_header(out, 0) > 0);
	CU_ASSERT_EQUAL(conn_header(out, 0), conn_header(out, 1));
	free(out);
	/* The name localhost is in the SAN too. */
	{
		char u[256];

		snprintf(u, sizeof(u), "https://localhost:%u/bytes/100000", (unsigned)up_tls.port);
		CU_ASSERT_EQUAL(test_curl(&out, "--cacert", cafile, "-o", "/dev/null", "-w",
					  "%{size_download}", u, NULL), 0);
		CU_ASSERT_STRING_EQUAL(out ? out : "", "100000");
		free(out);
	}
}

static void test_bad_cert_rejected(void)
{
	char cafile[4096], *out = NULL, *err = NULL;
	char *argv[] = { "curl", "-sS", "--max-time", "10", "--cacert", cafile,
			 test_upstream_url(&up_bad, "/hello"), NULL };

	snprintf(cafile, sizeof(cafile), "%s/ca.pem", dir);
	/* 60: peer certificate cannot be authenticated with known CA certificates */
	CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, 20000), 60);
	CU_ASSERT(out != NULL && out[0] == '\0');
	free(out);
	free(err);
	/* ... but it does verify against its own CA. */
	snprintf(cafile, sizeof(cafile), "%s/bad-ca.pem", dir);
	CU_ASSERT_EQUAL(test_curl(&out, "--cacert", cafile, test_upstream_url(&up_bad, "/hello"), NULL, NULL, NULL,
				  NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(out ? out : "", "hello\n");
	free(out);
}

static void test_certs_files(void)
{
	static const char *const names[] = { "::1", "example.test", NULL };
	char d[4000], path[4096];
	struct stat st;

	/* inside the suite's directory, so a failed assert leaves no litter */
	snprintf(d, sizeof(d), "%s/certs2", dir);
	CU_ASSERT_FATAL(mkdir(d, 0700) == 0);
	CU_ASSERT_FATAL(test_certs_make(d, names) == 0);
	snprintf(path, sizeof(path), "%s/ca.key", d);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 077) == 0);
	snprintf(path, sizeof(path), "%s/server.key", d);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 077) == 0);
	snprintf(path, sizeof(path), "%s/bad.key", d);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 077) == 0);
	/* openssl verify agrees on the chain, and on the bad leaf. */
	{
		char ca[4096], leaf[4096], bad[4096], *out = NULL;
		char *v1[] = { "openssl", "verify", "-CAfile", ca, leaf, NULL };
		char *v2[] = { "openssl", "verify", "-CAfile", ca, bad, NULL };

		snprintf(ca, sizeof(ca), "%s/ca.pem", d);
		snprintf(leaf, sizeof(leaf), "%s/server.pem", d);
		snprintf(bad, sizeof(bad), "%s/bad.pem", d);
		CU_ASSERT_EQUAL(test_run_capture(v1, &out, NULL, 10000), 0);
		free(out);
		CU_ASSERT_NOT_EQUAL(test_run_capture(v2, &out, NULL, 10000), 0);
		free(out);
	}
	test_rmtree(d);
}

static void test_proc_helpers(void)
{
	char host[64], rest[64];
	uint16_t port;
	struct test_proc *p;
	char *argv[] = { "sh", "-c", "trap 'echo bye; exit 3' TERM; echo before; echo oops >&2; "
				     "echo 'ready: yes'; while :; do sleep 0.05; done",
			 NULL };
	char *out, *err;

	CU_ASSERT(test_parse_hostport("127.0.0.1:8080", host, sizeof(host), &port) == 0);
	CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
	CU_ASSERT_EQUAL(port, 8080);
	CU_ASSERT(test_parse_hostport("[::1]:443", host, sizeof(host), &port) == 0);
	CU_ASSERT_STRING_EQUAL(host, "::1");
	CU_ASSERT_EQUAL(port, 443);
	CU_ASSERT(test_parse_hostport("::1:443", host, sizeof(host), &port) < 0);
	CU_ASSERT(test_parse_hostport("h:0", host, sizeof(host), &port) < 0);
	CU_ASSERT(test_parse_hostport("h:65536", host, sizeof(host), &port) < 0);
	CU_ASSERT(test_parse_hostport("h:1x", host, sizeof(host), &port) < 0);
	CU_ASSERT(test_parse_hostport(":80", host, sizeof(host), &port) < 0);

	p = test_proc_start(argv, "ready: ", rest, sizeof(rest), 5000);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_STRING_EQUAL(rest, "yes");
	CU_ASSERT_EQUAL(test_proc_stop(p, SIGTERM, 5000), 3);
	out = test_proc_stdout(p);
	err = test_proc_stderr(p);
	CU_ASSERT_STRING_EQUAL(out ? out : "", "before\nready: yes\nbye\n");
	CU_ASSERT_STRING_EQUAL(err ? err : "", "oops\n");
	free(out);
	free(err);
	test_proc_free(p);

	/* A child that exits without the ready line: NULL, quickly. */
	{
		char *argv2[] = { "sh", "-c", "echo nope; exit 1", NULL };

		fprintf(stderr, "(expected: a report of a child without its ready line)\n");
		CU_ASSERT(test_proc_start(argv2, "ready: ", rest, sizeof(rest), 5000) == NULL);
	}
}

static void test_git_clone(void)
{
	char root[4096], dest[4096], cafile[4096], ca_env[4200], repo_url[256], *out = NULL;
	char *err = NULL, *got;
	struct test_upstream g;
	struct test_upstream_opts o;
	size_t len = 0;

	snprintf(root, sizeof(root), "%s/gitroot", dir);
	CU_ASSERT_FATAL(mkdir(root, 0700) == 0);
	CU_ASSERT_FATAL(test_git_fixture(root, "repo", 3 * 1024 * 1024) == 0);
	memset(&o, 0, sizeof(o));
	o.tls_certdir = dir;
	o.git_root = root;
	CU_ASSERT_FATAL(test_upstream_start(&g, &o) == 0);
	snprintf(cafile, sizeof(cafile), "%s/ca.pem", dir);
	/* GIT_SSL_CAINFO beats http.sslCAInfo, and the environment may set it. */
	snprintf(ca_env, sizeof(ca_env), "GIT_SSL_CAINFO=%s", cafile);
	snprintf(repo_url, sizeof(repo_url), "%s/git/repo.git", g.url);
	snprintf(dest, sizeof(dest), "%s/clone", dir);
	{
		char *argv[] = { "env", ca_env, "git", "clone", "-q", repo_url, dest, NULL };

		CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, 60000), 0);
		if (err != NULL && err[0] != '\0')
			fprintf(stderr, "git clone: %s\n", err);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "env", ca_env, "git", "ls-remote", repo_url, NULL };

		CU_ASSERT_EQUAL(test_run_capture(argv, &out, NULL, 60000), 0);
		CU_ASSERT(out != NULL && strstr(out, "\trefs/heads/main\n") != NULL);
		free(out);
	}
	CU_ASSERT_EQUAL(test_upstream_stop(&g), 0);
	snprintf(dest, sizeof(dest), "%s/clone/hello.txt", dir);
	got = test_read_file(dest, &len);
	CU_ASSERT_STRING_EQUAL(got ? got : "", "hello from git\n");
	free(got);
	snprintf(dest, sizeof(dest), "%s/clone/big.bin", dir);
	got = test_read_file(dest, &len);
	CU_ASSERT(got != NULL && len == 3 * 1024 * 1024);
	free(got);
}

/* A minimal RFC 6455 client in python3: upgrade, text, 70000-byte binary,
 * ping, close; prints "ok" when every echo is right. */
static const char ws_client[] =
	"import socket,sys,os,base64,hashlib\n"
	"s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=10)\n"
	"key=base64.b64encode(os.urandom(16)).decode()\n"
	"s.sendall(('GET /ws HTTP/1.1\\r\\nHost: x\\r\\nUpgrade: websocket\\r\\n'\n"
	"  'Connection: Upgrade\\r\\nSec-WebSocket-Key: %s\\r\\n'\n"
	"  'Sec-WebSocket-Version: 13\\r\\n\\r\\n' % key).encode())\n"
	"d=b''\n"
	"while b'\\r\\n\\r\\n' not in d:\n"
	"  x=s.recv(4096)\n"
	"  assert x, 'closed during the handshake'\n"
	"  d+=x\n"
	"head,d=d.split(b'\\r\\n\\r\\n',1)\n"
	"assert head.startswith(b'HTTP/1.1 101 '), head\n"
	"acc=base64.b64encode(hashlib.sha1((key+'258EAFA5-E914-47DA-95CA-C5AB0DC85B11')\n"
	"  .encode()).digest())\n"
	"assert b'Sec-WebSocket-Accept: '+acc in head, head\n"
	"def frame(op,p):\n"
	"  m=os.urandom(4); n=len(p)\n"
	"  if n<126: h=bytes([0x80|op,0x80|n])\n"
	"  elif n<65536: h=bytes([0x80|op,0xfe])+n.to_bytes(2,'big')\n"
	"  else: h=bytes([0x80|op,0xff])+n.to_bytes(8,'big')\n"
	"  return h+m+bytes(b^m[i%4] for i,b in enumerate(p))\n"
	"def plain(op,p):\n"
	"  n=len(p)\n"
	"  if n<126: return bytes([0x80|op,n])+p\n"
	"  if n<65536: return bytes([0x80|op,126])+n.to_bytes(2,'big')+p\n"
	"  return bytes([0x80|op,127])+n.to_bytes(8,'big')+p\n"
	"big=os.urandom(70000)\n"
	"s.sendall(frame(1,b'hi there')+frame(2,big)+frame(9,b'pp')+frame(8,b'\\x03\\xe8'))\n"
	"while True:\n"
	"  x=s.recv(65536)\n"
	"  if not x: break\n"
	"  d+=x\n"
	"want=plain(1,b'hi there')+plain(2,big)+plain(10,b'pp')+plain(8,b'\\x03\\xe8')\n"
	"assert d==want, (len(d),len(want))\n"
	"print('ok')\n";

static void test_websocket(void)
{
	char port[16], *out = NULL, *err = NULL;
	char *argv[] = { (char *)test_python(), "-c", (char *)ws_client, up.host, port, NULL };

	snprintf(port, sizeof(port), "%u", (unsigned)up.port);
	CU_ASSERT_EQUAL(test_run_capture(argv, &out, &err, 30000), 0);
	CU_ASSERT_STRING_EQUAL(out ? out : "", "ok\n");
	if (err != NULL && err[0] != '\0')
		fprintf(stderr, "ws client: %s\n", err);
	free(out);
	free(err);
}

static void test_raw_pipelining_and_incomplete(void)
{
	static const char reqs[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
				   "GET /bytes/10 HTTP/1.1\r\nHost: x\r\n\r\n"
				   "GET /chunked/5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	static const char partial[] = "POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc";
	char rpath[4096], *got, *rec;
	struct test_upstream u;
	struct test_upstream_opts o;
	bool eof = false;
	int fd;

	snprintf(rpath, sizeof(rpath), "%s/record3.txt", dir);
	memset(&o, 0, sizeof(o));
	o.record_path = rpath;
	CU_ASSERT_FATAL(test_upstream_start(&u, &o) == 0);
	/* Three pipelined requests in one write, answered in order. */
	fd = test_tcp_connect(u.addr, 5000);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(test_send_all(fd, reqs, sizeof(reqs) - 1) == 0);
	got = test_recv_until(fd, NULL, 5000, NULL, &eof);
	close(fd);
	CU_ASSERT(eof);
	CU_ASSERT(got != NULL && strstr(got, "\r\n\r\nhello\nHTTP/1.1 200 OK\r\n") != NULL);
	CU_ASSERT(got != NULL && strstr(got, "\r\n\r\n0123456789HTTP/1.1 200 OK\r\n") != NULL);
	CU_ASSERT(got != NULL && strstr(got, "Connection: close\r\n\r\n5\r\n01234\r\n0\r\n\r\n") != NULL);
	free(got);
	/* A request cut short is recorded as incomplete, once. */
	fd = test_tcp_connect(u.addr, 5000);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(test_send_all(fd, partial, sizeof(partial) - 1) == 0);
	close(fd);
	/* A download aborted mid-body: its request is recorded once, complete. */
	{
		char big[] = "GET /bytes/100000000 HTTP/1.1\r\nHost: x\r\n\r\n";

		fd = test_tcp_connect(u.addr, 5000);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT(test_send_all(fd, big, sizeof(big) - 1) == 0);
		got = test_recv_until(fd, "\r\n\r\n", 5000, NULL, NULL);
		free(got);
		close(fd);
	}
	CU_ASSERT_EQUAL(test_upstream_stop(&u), 0);
	rec = test_read_file(rpath, NULL);
	CU_ASSERT_FATAL(rec != NULL);
	CU_ASSERT(strstr(rec, "=== conn 1 req 1 ===\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
			      "=== conn 1 req 2 ===\nGET /bytes/10 ") != NULL);
	CU_ASSERT(strstr(rec, "=== conn 1 req 3 ===\nGET /chunked/5 ") != NULL);
	CU_ASSERT(strstr(rec, "=== conn 2 req 1 incomplete ===\nPOST /sink HTTP/1.1\r\n"
			      "Host: x\r\nContent-Length: 100\r\n\r\nabc") != NULL);
	CU_ASSERT(strstr(rec, "=== conn 3 req 1 ===\nGET /bytes/100000000 HTTP/1.1\r\n"
			      "Host: x\r\n\r\n") != NULL);
	CU_ASSERT(strstr(rec, "conn 3 req 1 incomplete") == NULL);
	CU_ASSERT(strstr(rec, "\r\n\r\nGET /bytes/100000000") == NULL);
	free(rec);
}

/* Runs pv-load with the given arguments (NULL-terminated); returns its exit
 * status and its stdout in *out. */
static int pv_load(char **out, ...) __attribute__((sentinel));
static int pv_load(char **out, ...)
{
	char bin[4096], *argv[24], *err = NULL, *a;
	int n = 0, rc;
	va_list ap;

	snprintf(bin, sizeof(bin), "%s", test_tool_path("pv-load"));
	argv[n++] = bin;
	va_start(ap, out);
	while ((a = va_arg(ap, char *)) != NULL && n < 22)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	rc = test_run_capture(argv, out, &err, 60000);
	if (err != NULL && err[0] != '\0')
		fprintf(stderr, "pv-load stderr: %s", err);
	free(err);
	return rc;
}

static void test_pv_load(void)
{
	char cafile[4096], *out = NULL;

	snprintf(cafile, sizeof(cafile), "%s/ca.pem", dir);
	/* keep-alive GETs: exactly -n requests, one result line */
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up, "/hello"), "-c", "4", "-n", "200", NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "reqs=200 secs=", 14) == 0);
	CU_ASSERT(out != NULL && strstr(out, " errors=0\n") != NULL && strstr(out, " p99_ms=") != NULL);
	free(out);
	/* new TLS connection per request */
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up_tls, "/hello"), "--tls", cafile, "-c", "2",
				"-n", "10", "--new-conn", NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "reqs=10 ", 8) == 0 && strstr(out, " errors=0\n"));
	free(out);
	/* transfers, checked end to end by pv-load */
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up_tls, "/"), "--tls", cafile, "--download",
				"5000000", NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "reqs=1 ", 7) == 0 && strstr(out, " errors=0\n"));
	free(out);
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up, "/"), "--upload", "5000000", NULL), 0);
	CU_ASSERT(out != NULL && strncmp(out, "reqs=1 ", 7) == 0 && strstr(out, " errors=0\n"));
	free(out);
	/* errors are counted, and a setup that never works gives up: exit 1 */
	fprintf(stderr, "(expected: pv-load reporting 404s and a certificate error)\n");
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up, "/nothing"), "-d", "10", NULL), 1);
	CU_ASSERT(out != NULL && strncmp(out, "reqs=0 ", 7) == 0 && strstr(out, " errors=20\n"));
	free(out);
	CU_ASSERT_EQUAL(pv_load(&out, "--url", test_upstream_url(&up_bad, "/hello"), "--tls", cafile, "-n", "1",
				NULL), 1);
	CU_ASSERT(out != NULL && strstr(out, "reqs=0 ") == out);
	free(out);
}

TEST_REGISTRAR(upstream_selftest_register)
{
	CU_pSuite s = test_suite("upstream_selftest", suite_init, suite_cleanup);

	test_add(s, "proc helpers", test_proc_helpers);
	test_add(s, "certificates", test_certs_files);
	test_add(s, "GET /hello", test_hello);
	test_add(s, "keep-alive reuse visible in X-Upstream-Conn", test_keepalive_reuse);
	test_add(s, "/bytes/N", test_bytes);
	test_add(s, "/chunked/N", test_chunked);
	test_add(s, "/echo", test_echo);
	test_add(s, "/status /headers /close /sink", test_status_headers_close_sink);
	test_add(s, "--record", test_record);
	test_add(s, "raw: pipelining, incomplete and aborted requests",
		 test_raw_pipelining_and_incomplete);
	test_add(s, "HTTPS with the test CA", test_https);
	test_add(s, "certificate from another CA rejected", test_bad_cert_rejected);
	test_add(s, "WebSocket echo (python3 client)", test_websocket);
	test_add(s, "pv-load against the upstream", test_pv_load);
	test_add(s, "git clone over HTTPS (git http-backend)", test_git_clone);
}

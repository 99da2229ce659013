/*
 * test_audit.c - proxy/audit.c (suite "proxy_audit"): JSON escaping and
 * the exact field set of a line.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "proxy/audit.h"
#include "tests/support/testlib.h"

static void esc(const char *in, size_t len, const char *want)
{
	char out[256];
	size_t n = audit_json_escape(out, sizeof(out), in, len);

	CU_ASSERT_EQUAL(n, strlen(out));
	if (strcmp(out, want) != 0)
		fprintf(stderr, "escape: got [%s] want [%s]\n", out, want);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_escape(void)
{
	esc("plain", 5, "plain");
	esc("a\"b\\c", 5, "a\\\"b\\\\c");
	esc("\r\n\t", 3, "\\r\\n\\t");
	esc("\x01\x1f\x7f", 3, "\\u0001\\u001f\\u007f");
	esc("a\0b", 3, "a\\u0000b");
	esc("caf\xc3\xa9", 5, "caf\xc3\xa9");           /* valid UTF-8 kept */
	esc("\xe2\x82\xac", 3, "\xe2\x82\xac");         /* euro sign */
	esc("\xff", 1, "\xef\xbf\xbd");                 /* invalid byte */
	esc("\xc3", 1, "\xef\xbf\xbd");                 /* truncated sequence */
	esc("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"); /* overlong */
	esc("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
	/* Round 36: code points a reader of the file acts on. */
	esc("\xc2\x9b" "31m", 5, "\\u009b31m");                 /* C1 CSI */
	esc("a\xc2\x85" "b", 4, "a\\u0085b");                   /* NEL */
	esc("a\xe2\x80\xa8" "b\xe2\x80\xa9", 8, "a\\u2028b\\u2029"); /* separators */
	esc("\xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8b\xef\xbb\xbf", 12, "\\u202e\\u2066\\u200b\\ufeff");
	esc("\xc2\xa0\xe2\x80\x94", 5, "\xc2\xa0\xe2\x80\x94");   /* NBSP, em dash: kept */
	/* Round 36 review: what shows nothing. A soft hyphen, a Hangul
	 * filler, a variation selector, U+2061-206F, tag characters (the
	 * pair for U+E0041 'A') and a supplementary variation selector. */
	esc("a\xc2\xad" "b\xe3\x85\xa4\xef\xb8\x8f", 10, "a\\u00adb\\u3164\\ufe0f");
	esc("\xe2\x81\xaa\xf3\xa0\x81\x81\xf3\xa0\x84\x80", 11, "\\u206a\\udb40\\udc41\\udb40\\udd00");
	esc("\xf0\x9f\x98\x80\xe4\xb8\xad", 7, "\xf0\x9f\x98\x80\xe4\xb8\xad"); /* emoji, CJK: kept */
}

static void test_escape_bounds(void)
{
	char out[8];

	/* Never splits an escape: "\u0001" needs 6 bytes. */
	CU_ASSERT_EQUAL(audit_json_escape(out, sizeof(out), "ab\x01", 3), 2);
	CU_ASSERT_STRING_EQUAL(out, "ab");
	CU_ASSERT_EQUAL(audit_json_escape(out, 1, "abc", 3), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
}

static void test_line(void)
{
	char *dir = test_mkdtemp(), path[4096], *s;
	struct audit_rec r;
	audit_t *a;

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	a = audit_open(path, "0123456789abcdef");
	CU_ASSERT_FATAL(a != NULL);
	memset(&r, 0, sizeof(r));
	r.kind = "request";
	r.method = "GET";
	r.scheme = "http";
	r.host = "example.com";
	r.port = 80;
	r.target = "/a\"b";
	r.target_len = 4;
	r.status = 200;
	r.decision = "allow";
	r.rule = "allowedDomains: example.com";
	r.inspected = true;
	r.bytes_up = 0;
	r.bytes_down = 12;
	r.ms = 3;
	r.tls = "none";
	r.proto = "h2";
	CU_ASSERT_EQUAL(audit_write(a, &r), 0);
	memset(&r, 0, sizeof(r));
	r.kind = "connect";
	r.bytes_up = r.bytes_down = r.ms = -1;
	CU_ASSERT_EQUAL(audit_write(a, &r), 0);
	audit_free(a);
	s = test_read_file(path, NULL);
	CU_ASSERT_FATAL(s != NULL);
	CU_ASSERT(strncmp(s, "{\"ts\":\"", 7) == 0);
	CU_ASSERT(strstr(s, "Z\",\"session\":\"0123456789abcdef\",\"kind\":\"request\",\"method\":\"GET\","
			    "\"scheme\":\"http\",\"host\":\"example.com\",\"port\":80,\"target\":\"/a\\\"b\","
			    "\"status\":200,\"decision\":\"allow\",\"reason\":null,"
			    "\"rule\":\"allowedDomains: example.com\",\"injected\":[],\"remasked\":0,"
			    "\"bytesUp\":0,\"bytesDown\":12,\"ms\":3,\"tls\":\"none\",\"proto\":\"h2\"}\n") != NULL);
	CU_ASSERT(strstr(s, "\"kind\":\"connect\",\"method\":null,\"scheme\":null,\"host\":null,"
			    "\"port\":null,\"target\":null,\"status\":null,\"decision\":null,"
			    "\"reason\":null,\"rule\":null,\"injected\":null,\"remasked\":null,"
			    "\"bytesUp\":null,\"bytesDown\":null,\"ms\":null,\"tls\":null,\"proto\":null}\n") != NULL);
	free(s);
	test_rmtree(dir);
	free(dir);
}

/* Round 4 of the attack (review): a full disk cuts a record short; when
 * records can be written again, the next one starts a line of its own,
 * so every line but the fragment is one JSON object. The file's size
 * limit (RLIMIT_FSIZE, SIGXFSZ ignored as a full disk sends none) stands
 * for the full disk. */
static void test_torn_line(void)
{
	char *dir = test_mkdtemp(), path[4096], *s, *nl;
	struct rlimit old, lim;
	struct audit_rec r;
	void (*was)(int);
	size_t len = 0;
	audit_t *a;

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	a = audit_open(path, "0123456789abcdef");
	CU_ASSERT_FATAL(a != NULL);
	memset(&r, 0, sizeof(r));
	r.kind = "request";
	r.host = "first.example";
	r.bytes_up = r.bytes_down = r.ms = -1;
	CU_ASSERT_EQUAL(audit_write(a, &r), 0);
	free(test_read_file(path, &len));
	CU_ASSERT_FATAL(len > 0 && getrlimit(RLIMIT_FSIZE, &old) == 0);
	was = signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = (rlim_t)(len + 40); /* room for part of a line */
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	r.host = "torn.example";
	CU_ASSERT_EQUAL(audit_write(a, &r), -1);
	CU_ASSERT(setrlimit(RLIMIT_FSIZE, &old) == 0);
	(void)signal(SIGXFSZ, was);
	r.host = "after.example";
	CU_ASSERT_EQUAL(audit_write(a, &r), 0);
	CU_ASSERT_EQUAL(audit_write(a, &r), 0);
	audit_free(a);
	s = test_read_file(path, NULL);
	CU_ASSERT_FATAL(s != NULL);
	/* first line whole, then the fragment (40 bytes, no host), then two
	 * whole lines, each starting with {"ts": */
	nl = strchr(s, '\n');
	CU_ASSERT_FATAL(nl != NULL);
	CU_ASSERT(strncmp(nl + 1, "{\"ts\":", 6) == 0 && strstr(nl + 1, "\n") - (nl + 1) == 40);
	nl = strchr(nl + 1, '\n');
	CU_ASSERT_FATAL(nl != NULL);
	CU_ASSERT(strncmp(nl + 1, "{\"ts\":", 6) == 0 && strstr(nl + 1, "after.example") != NULL);
	nl = strchr(nl + 1, '\n');
	CU_ASSERT_FATAL(nl != NULL);
	CU_ASSERT(strncmp(nl + 1, "{\"ts\":", 6) == 0);
	free(s);
	test_rmtree(dir);
	free(dir);
}

TEST_REGISTRAR(proxy_audit_suite)
{
	CU_pSuite s = test_suite("proxy_audit", NULL, NULL);

	test_add(s, "JSON escaping", test_escape);
	test_add(s, "escaping never overflows or splits", test_escape_bounds);
	test_add(s, "line field set and nulls", test_line);
	test_add(s, "a line cut short by a full disk: the next starts a line of its own", test_torn_line);
}

/*
 * test_http1.c - proxy/http1.c (suite "proxy_http1"): head limits,
 * strictness, message boundaries and the rewritten heads.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <llhttp.h>

#include "base/defaults.h"
#include "proxy/http1.h"
#include "tests/support/testlib.h"

/* Feeds s whole; returns the result and the consumed count. */
static enum http1_result feed(http1_t *h, const char *s, size_t *n)
{
	return http1_feed(h, s, strlen(s), n);
}

static void test_head_and_body_boundaries(void)
{
	static const char req[] = "POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET";
	http1_t *h = http1_new(HTTP1_REQUEST, 1024);
	size_t n = 0, head = strlen(req) - 6;

	CU_ASSERT_FATAL(h != NULL);
	CU_ASSERT_EQUAL(feed(h, req, &n), HTTP1_HEAD);
	CU_ASSERT_EQUAL(n, head);
	CU_ASSERT(!http1_message_done(h));
	CU_ASSERT(http1_method_is(h, "POST"));
	CU_ASSERT_EQUAL(http1_header_count(h), 2);
	/* The body stops at its last byte; "GET" is the next message. */
	CU_ASSERT_EQUAL(http1_feed(h, req + head, 6, &n), HTTP1_DONE);
	CU_ASSERT_EQUAL(n, 3);
	http1_reset(h);
	/* Head split byte by byte. */
	{
		static const char g[] = "GET http://b/x HTTP/1.1\r\nHost: b\r\n\r\n";
		size_t i, total = 0;
		enum http1_result r = HTTP1_MORE;

		for (i = 0; i < sizeof(g) - 1 && r == HTTP1_MORE; i++) {
			r = http1_feed(h, g + i, 1, &n);
			total += n;
		}
		CU_ASSERT_EQUAL(r, HTTP1_HEAD);
		CU_ASSERT_EQUAL(total, sizeof(g) - 1);
		CU_ASSERT(http1_message_done(h));
		{
			size_t ul;
			const char *u = http1_url(h, &ul);

			CU_ASSERT(ul == 10 && strncmp(u, "http://b/x", 10) == 0);
		}
	}
	http1_free(h);
}

static void expect_error(const char *req, int status, size_t limit)
{
	http1_t *h = http1_new(HTTP1_REQUEST, limit);
	enum http1_result r;
	size_t n = 0;

	CU_ASSERT_FATAL(h != NULL);
	r = feed(h, req, &n);
	if (r == HTTP1_HEAD && !http1_message_done(h)) {
		const char *body = req + n;

		r = http1_feed(h, body, strlen(body), &n);
	}
	if (r != HTTP1_ERROR || http1_error_status(h) != status)
		fprintf(stderr, "case: %.60s -> %d %d (%s)\n", req, r, http1_error_status(h),
			http1_error_reason(h));
	CU_ASSERT_EQUAL(r, HTTP1_ERROR);
	CU_ASSERT_EQUAL(http1_error_status(h), status);
	http1_free(h);
}

static void test_strictness(void)
{
	expect_error("POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, 4096);
	expect_error("POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400, 4096);
	expect_error("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\nX: a\r\n\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\r\nX : a\r\n\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\r\nX\x01: a\r\n\r\n", 400, 4096);
	expect_error("GET http://a/ HTTP/1.1\r\nConnection: transfer-encoding\r\n\r\n", 400, 4096);
	expect_error("\r\n\r\n", 400, 4096);
	expect_error("TRACK http://a/ HTTP/1.1\r\n\r\n", 405, 4096);
	/* HTTP/2's preface in clear (h2c, prior knowledge): a version the
	 * proxy does not decide, said as such (not "malformed head"). */
	expect_error("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, 4096);
	{
		http1_t *h = http1_new(HTTP1_REQUEST, 4096);
		size_t n = 0;

		CU_ASSERT_FATAL(h != NULL);
		CU_ASSERT_EQUAL(feed(h, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", &n), HTTP1_ERROR);
		CU_ASSERT(http1_error_reason(h) != NULL && strstr(http1_error_reason(h), "HTTP/2 without TLS") != NULL);
		http1_free(h);
	}
}

static void test_limits(void)
{
	char *big = malloc(8192);
	size_t n;

	CU_ASSERT_FATAL(big != NULL);
	/* Head bytes: 431 past the limit, even before the head ends. */
	n = (size_t)snprintf(big, 8192, "GET http://a/ HTTP/1.1\r\nX: ");
	memset(big + n, 'a', 3000);
	big[n + 3000] = '\0';
	expect_error(big, 431, 2048);
	/* Field count. */
	n = (size_t)snprintf(big, 8192, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i <= PASSAVANT_MAX_HEADER_COUNT; i++)
		n += (size_t)snprintf(big + n, 8192 - n, "A%d: 1\r\n", i % 10);
	(void)snprintf(big + n, 8192 - n, "\r\n");
	expect_error(big, 431, 8192);
	free(big);
}

static void test_rewrite(void)
{
	static const char req[] =
		"GET http://a.example:81/p?q HTTP/1.1\r\nHost: evil\r\nConnection: keep-alive, X-Drop\r\n"
		"X-Drop: 1\r\nProxy-Authorization: Basic eA==\r\nTE: trailers\r\nUpgrade: h2c\r\n"
		"X-Keep: 2\r\n\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n";
	http1_t *h = http1_new(HTTP1_REQUEST, 4096), *r = http1_new(HTTP1_RESPONSE, 4096);
	struct evbuffer *out = evbuffer_new();
	size_t n;
	char *s;

	CU_ASSERT_FATAL(h != NULL && r != NULL && out != NULL);
	CU_ASSERT_EQUAL_FATAL(feed(h, req, &n), HTTP1_HEAD);
	CU_ASSERT_EQUAL(http1_write_request_head(h, out, "/p?q", 4, "a.example:81", false, false, false), 0);
	CU_ASSERT_EQUAL(evbuffer_add(out, "", 1), 0);
	s = (char *)evbuffer_pullup(out, -1);
	CU_ASSERT_STRING_EQUAL(s, "GET /p?q HTTP/1.1\r\nHost: a.example:81\r\nX-Keep: 2\r\n\r\n");
	evbuffer_drain(out, evbuffer_get_length(out));
	/* "?q" alone gets a leading slash. */
	CU_ASSERT_EQUAL(http1_write_request_head(h, out, "?q", 2, "a", false, false, false), 0);
	CU_ASSERT_EQUAL(evbuffer_add(out, "", 1), 0);
	CU_ASSERT(strncmp((char *)evbuffer_pullup(out, -1), "GET /?q HTTP/1.1\r\n", 18) == 0);
	evbuffer_drain(out, evbuffer_get_length(out));

	CU_ASSERT_EQUAL_FATAL(feed(r, resp, &n), HTTP1_HEAD);
	CU_ASSERT(http1_message_done(r));
	CU_ASSERT_EQUAL(http1_status(r), 200);
	CU_ASSERT_EQUAL(http1_write_response_head(r, out, HTTP1_HEAD_CLOSE), 0);
	CU_ASSERT_EQUAL(evbuffer_add(out, "", 1), 0);
	s = (char *)evbuffer_pullup(out, -1);
	CU_ASSERT_STRING_EQUAL(s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	evbuffer_free(out);
	http1_free(h);
	http1_free(r);
}

static void test_response_framing(void)
{
	http1_t *r = http1_new(HTTP1_RESPONSE, 4096);
	size_t n;

	CU_ASSERT_FATAL(r != NULL);
	/* Close-delimited: done only at EOF. */
	CU_ASSERT_EQUAL(feed(r, "HTTP/1.1 200 OK\r\n\r\n", &n), HTTP1_HEAD);
	CU_ASSERT(http1_needs_eof(r));
	CU_ASSERT_EQUAL(feed(r, "abc", &n), HTTP1_MORE);
	CU_ASSERT_EQUAL(http1_finish(r), HTTP1_DONE);
	/* HEAD response: no body whatever Content-Length says. */
	http1_reset(r);
	http1_set_head_request(r, true);
	CU_ASSERT_EQUAL(feed(r, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", &n), HTTP1_HEAD);
	CU_ASSERT(http1_message_done(r));
	/* Cut short. */
	http1_reset(r);
	CU_ASSERT_EQUAL(feed(r, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", &n), HTTP1_HEAD);
	CU_ASSERT_EQUAL(feed(r, "abc", &n), HTTP1_MORE);
	CU_ASSERT_EQUAL(http1_finish(r), HTTP1_ERROR);
	http1_free(r);
}

/*
 * Which layer refuses what in a head. llhttp is compiled by us (GNUmakefile),
 * and LLHTTP_STRICT_MODE is a compile-time switch of node-llhttp 8.1 that
 * selects a second generated parser (the runtime llhttp_set_lenient_*()
 * calls only loosen, and are all off). With or without it llhttp accepts
 * obs-fold, a bare LF ending the request line and a bare LF ending the
 * head; strict mode adds only a CR after the last field line without its
 * LF, and SP in or before a field name. Our scanner (scan_head()) refuses
 * every bare CR, bare LF and obs-fold, and on_header_field_complete() every
 * field name that is not a token, before llhttp could: the scanner stays
 * whole (it also finds the exact end of the head). The GNUmakefile builds
 * llhttp strict, a second line for the two cases it adds. Each case says what llhttp alone does in either
 * build (the column of the build this test is compiled with is checked)
 * and what http1 answers.
 */
struct head_case {
	const char *name;
	const char *head;
	bool llhttp_ok;     /* llhttp alone, default (lenient) build, accepts it */
	bool strict_ok;     /* llhttp alone, LLHTTP_STRICT_MODE build, accepts it */
	const char *reason; /* http1's refusal reason starts with this */
};

static bool llhttp_alone_accepts(const char *s)
{
	llhttp_settings_t st;
	llhttp_t p;
	llhttp_errno_t e;

	llhttp_settings_init(&st);
	llhttp_init(&p, HTTP_REQUEST, &st);
	e = llhttp_execute(&p, s, strlen(s));
	return e == HPE_OK || e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE;
}

static void test_head_layers(void)
{
	static const struct head_case cases[] = {
		{"obs-fold", "GET http://a/ HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n", true, true,
		 "obsolete line folding"},
		{"obs-fold with HT", "GET http://a/ HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n", true, true,
		 "obsolete line folding"},
		{"bare LF ending the head", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\n", true, true, "bare LF"},
		{"bare LF ending the request line", "GET http://a/ HTTP/1.1\nHost: a\r\n\r\n", true, true,
		 "bare LF"},
		{"bare LF ending a field line", "GET http://a/ HTTP/1.1\r\nHost: a\n\r\n", false, false,
		 "bare LF"},
		{"bare LF everywhere", "GET http://a/ HTTP/1.1\nHost: a\n\n", false, false, "bare LF"},
		{"bare CR in a value", "GET http://a/ HTTP/1.1\r\nHost: a\rb\r\n\r\n", false, false, "bare CR"},
		{"bare CR ending a field line", "GET http://a/ HTTP/1.1\r\nHost: a\r\r\n\r\n", false, false,
		 "bare CR"},
		{"CR after the last field line", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\rX", true, false,
		 "bare CR"},
		{"SP before the colon", "GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", true, false, NULL},
		{"SP in a field name", "GET http://a/ HTTP/1.1\r\nHo st: a\r\n\r\n", true, false, NULL},
	};
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct head_case *c = &cases[i];
		http1_t *h = http1_new(HTTP1_REQUEST, 4096);
		bool want = LLHTTP_STRICT_MODE ? c->strict_ok : c->llhttp_ok;
		enum http1_result r;

		CU_ASSERT_FATAL(h != NULL);
		if (llhttp_alone_accepts(c->head) != want)
			fprintf(stderr, "%s: llhttp alone %s it\n", c->name, want ? "refuses" : "accepts");
		CU_ASSERT_EQUAL(llhttp_alone_accepts(c->head), want);
		r = feed(h, c->head, &n);
		CU_ASSERT_EQUAL(r, HTTP1_ERROR);
		CU_ASSERT_EQUAL(http1_error_status(h), 400);
		if (c->reason != NULL && strncmp(http1_error_reason(h), c->reason, strlen(c->reason)) != 0)
			fprintf(stderr, "%s: refused with \"%s\"\n", c->name, http1_error_reason(h));
		if (c->reason != NULL)
			CU_ASSERT(strncmp(http1_error_reason(h), c->reason, strlen(c->reason)) == 0);
		http1_free(h);
	}
}

/*
 * A chunked request's trailer section (round 41 of the attack): strict
 * llhttp ends it at a bare LF ("0\r\n\n") and folds its lines, and the
 * section goes upstream as received; http1 holds it to the head's line
 * rules. Fed whole, then split at every byte (the pause at the last
 * chunk's size line may fall anywhere): the bad ones fail before the
 * message is done and never report their last bytes consumed, the good
 * ones end exactly at the message's last byte.
 */
static size_t feed_split(http1_t *h, const char *s, size_t len, size_t cut, enum http1_result *r)
{
	size_t n = 0, total = 0;

	*r = http1_feed(h, s, cut, &n);
	total += n;
	if (*r == HTTP1_MORE || (*r == HTTP1_HEAD && n == cut)) {
		*r = http1_feed(h, s + cut, len - cut, &n);
		total += n;
	}
	return total;
}

static void test_trailer_section(void)
{
	static const char head[] = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
	static const struct {
		const char *name, *body;
		bool strict_ok; /* strict llhttp alone accepts it */
		const char *reason; /* NULL: accepted */
	} cases[] = {
		{"no trailer", "5\r\nhello\r\n0\r\n\r\n", true, NULL},
		{"a trailer field", "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", true, NULL},
		{"an extension on the last chunk", "5\r\nhello\r\n0;a=b\r\nX-T: 1\r\n\r\n", true, NULL},
		{"bare LF ending the section", "5\r\nhello\r\n0\r\n\n", true, "bare LF"},
		{"bare LF after a trailer field", "5\r\nhello\r\n0\r\nX-T: 1\r\n\n", true, "bare LF"},
		{"obs-fold in a trailer field", "5\r\nhello\r\n0\r\nX-T: 1\r\n 2\r\n\r\n", true, "obsolete line folding"},
		{"white space first in the section", "5\r\nhello\r\n0\r\n \r\n\r\n", false, "obsolete line folding"},
		{"bare LF ending a trailer field", "5\r\nhello\r\n0\r\nX-T: 1\n\r\n", false, "bare LF"},
		{"bare CR in the section", "5\r\nhello\r\n0\r\n\rX\r\n\r\n", false, "bare CR"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msg[256];
		size_t hl = strlen(head), bl = strlen(cases[i].body), len, n;
		http1_t *h = http1_new(HTTP1_REQUEST, 4096);
		enum http1_result r;

		CU_ASSERT_FATAL(h != NULL);
		len = (size_t)snprintf(msg, sizeof(msg), "%s%sGET", head, cases[i].body);
		CU_ASSERT_FATAL(len == hl + bl + 3);
		if (LLHTTP_STRICT_MODE && llhttp_alone_accepts(msg) != cases[i].strict_ok)
			fprintf(stderr, "%s: strict llhttp alone %s it\n", cases[i].name,
				cases[i].strict_ok ? "refuses" : "accepts");
		if (LLHTTP_STRICT_MODE)
			CU_ASSERT_EQUAL(llhttp_alone_accepts(msg), cases[i].strict_ok);
		for (size_t cut = hl; cut < len; cut++) {
			size_t total;

			http1_reset(h);
			CU_ASSERT_EQUAL_FATAL(http1_feed(h, msg, hl, &n), HTTP1_HEAD);
			total = feed_split(h, msg + hl, len - hl, cut - hl, &r);
			if (cases[i].reason == NULL) {
				if (r != HTTP1_DONE || total != bl)
					fprintf(stderr, "%s, cut at %zu: result %d, %zu of %zu bytes\n", cases[i].name,
						cut, (int)r, total, bl);
				CU_ASSERT_EQUAL(r, HTTP1_DONE);
				CU_ASSERT_EQUAL(total, bl);
			} else {
				if (r != HTTP1_ERROR)
					fprintf(stderr, "%s, cut at %zu: not refused (result %d)\n", cases[i].name, cut,
						(int)r);
				CU_ASSERT_EQUAL(r, HTTP1_ERROR);
				CU_ASSERT_EQUAL(http1_error_status(h), 400);
				CU_ASSERT(!http1_message_done(h));
				CU_ASSERT(total < bl);
				CU_ASSERT(strstr(http1_error_reason(h), cases[i].reason) != NULL);
			}
		}
		http1_free(h);
	}
}

/*
 * A chunked request's trailer section, bounded like a head: every byte of
 * it, not only the bytes llhttp reports to the field callbacks (it reports
 * no white space before a value, so "X:" and endless spaces went through,
 * and upstream as received, review of round 41). Fed in pieces of 1 to
 * 64 KiB: 431 before the limit is passed by more than a piece, never done;
 * a section just under the limit still passes; the good sections fed a
 * byte at a time, with a request after them, end exactly at their last
 * byte (the pause at the last chunk falls in every piece).
 */
static enum http1_result feed_pieces(http1_t *h, const char *s, size_t len, size_t step, size_t *total)
{
	enum http1_result r = HTTP1_MORE;
	size_t n;

	*total = 0;
	for (size_t off = 0; off < len && r == HTTP1_MORE; off += step) {
		r = http1_feed(h, s + off, len - off < step ? len - off : step, &n);
		*total += n;
	}
	return r;
}

static void test_trailer_section_bound(void)
{
	static const char head[] = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
	static const char *const good[] = {
		"5\r\nhello\r\n0\r\n\r\n",
		"5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"5\r\nhello\r\n0;a=\"b c\"\r\nX-T: 1\r\nY:\r\n\r\n",
	};
	static const size_t steps[] = {1, 7, 4096, 65536};
	const size_t limit = 4096, flood = 100000;
	char *big = malloc(flood + 64);
	http1_t *h = http1_new(HTTP1_REQUEST, limit);
	size_t n, total, bl;
	enum http1_result r;

	CU_ASSERT_FATAL(big != NULL && h != NULL);
	for (int ws = 0; ws < 2; ws++) {
		bl = (size_t)snprintf(big, 64, "5\r\nhello\r\n0\r\nX:");
		memset(big + bl, ws == 0 ? ' ' : '\t', flood);
		bl += flood;
		memcpy(big + bl, "\r\n\r\n", 4);
		bl += 4;
		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			http1_reset(h);
			CU_ASSERT_EQUAL_FATAL(http1_feed(h, head, sizeof(head) - 1, &n), HTTP1_HEAD);
			r = feed_pieces(h, big, bl, steps[i], &total);
			if (r != HTTP1_ERROR)
				fprintf(stderr, "%zu bytes of %s after 'X:' in pieces of %zu: result %d\n", flood,
					ws == 0 ? "SP" : "HT", steps[i], (int)r);
			CU_ASSERT_EQUAL(r, HTTP1_ERROR);
			CU_ASSERT_EQUAL(http1_error_status(h), 431);
			CU_ASSERT(!http1_message_done(h));
			CU_ASSERT(total <= limit + 32 + steps[i]);
		}
	}
	/* Just under the limit (OWS and a value): still a request. */
	bl = (size_t)snprintf(big, 64, "5\r\nhello\r\n0\r\nX:");
	memset(big + bl, ' ', limit - 16);
	bl += limit - 16;
	memcpy(big + bl, "v\r\n\r\n", 5);
	bl += 5;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		http1_reset(h);
		CU_ASSERT_EQUAL_FATAL(http1_feed(h, head, sizeof(head) - 1, &n), HTTP1_HEAD);
		CU_ASSERT_EQUAL(feed_pieces(h, big, bl, steps[i], &total), HTTP1_DONE);
		CU_ASSERT_EQUAL(total, bl);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		static const char next[] = "GET /n HTTP/1.1\r\nHost: a\r\n\r\n";

		bl = (size_t)snprintf(big, 200, "%s%s", good[i], next);
		for (size_t st = 1; st <= 3; st++) {
			http1_reset(h);
			CU_ASSERT_EQUAL_FATAL(http1_feed(h, head, sizeof(head) - 1, &n), HTTP1_HEAD);
			r = feed_pieces(h, big, bl, st, &total);
			CU_ASSERT_EQUAL(r, HTTP1_DONE);
			CU_ASSERT_EQUAL(total, strlen(good[i]));
			/* The next request reads from there. */
			http1_reset(h);
			CU_ASSERT_EQUAL(http1_feed(h, big + total, bl - total, &n), HTTP1_HEAD);
			CU_ASSERT_EQUAL(n, sizeof(next) - 1);
			CU_ASSERT(http1_method_is(h, "GET"));
		}
	}
	http1_free(h);
	free(big);
}

TEST_REGISTRAR(proxy_http1_suite)
{
	CU_pSuite s = test_suite("proxy_http1", NULL, NULL);

	test_add(s, "head and body boundaries", test_head_and_body_boundaries);
	test_add(s, "smuggling vectors refused", test_strictness);
	test_add(s, "head bytes: llhttp (strict or not) and our scanner", test_head_layers);
	test_add(s, "a chunked request's trailer section: the head's line rules", test_trailer_section);
	test_add(s, "a chunked request's trailer section: bounded like a head, every byte", test_trailer_section_bound);
	test_add(s, "header bytes and count limits: 431", test_limits);
	test_add(s, "rewritten request and response heads", test_rewrite);
	test_add(s, "response framing: EOF, HEAD, cut short", test_response_framing);
}

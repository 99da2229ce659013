/*
 * test_intercept.c - the pure parts of proxy/intercept.c (suite
 * "proxy_intercept"): when a buffered ClientHello is whole (hello_state(),
 * at every prefix, and re-framed into tiny records), what OpenSSL reads
 * from it (tls_hello_parse(): SNI, ALPN h2), what starts an HTTP request line (conn_http_start()),
 * and the synthetic ranges (synthetic()). The .c file is included for its
 * statics. ClientHellos come from a real OpenSSL client over memory BIOs.
 */
#include "proxy/intercept.c"

#include "tests/support/testlib.h"

/* A ClientHello from an OpenSSL client, with SNI name (NULL: none), into
 * out (cap bytes); its length, 0 on failure. */
static size_t make_hello_alpn(const char *name, const char *alpn, unsigned char *out, size_t cap)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *s = ctx != NULL ? SSL_new(ctx) : NULL;
	BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
	int n = 0;

	if (s == NULL || rb == NULL || wb == NULL)
		goto out;
	SSL_set_bio(s, rb, wb);
	rb = wb = NULL;
	if (name != NULL && SSL_set_tlsext_host_name(s, name) != 1)
		goto out;
	if (alpn != NULL && SSL_set_alpn_protos(s, (const unsigned char *)alpn, (unsigned)strlen(alpn)) != 0)
		goto out;
	SSL_set_connect_state(s);
	(void)SSL_do_handshake(s);
	n = BIO_read(SSL_get_wbio(s), out, (int)cap);
out:
	BIO_free(rb);
	BIO_free(wb);
	SSL_free(s);
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return n > 0 ? (size_t)n : 0;
}

static size_t make_hello(const char *name, unsigned char *out, size_t cap)
{
	return make_hello_alpn(name, NULL, out, cap);
}

/* The handshake bytes of hello (one record) re-framed into records of at
 * most per bytes each. */
static size_t reframe(const unsigned char *hello, size_t n, size_t per, unsigned char *out, size_t cap)
{
	size_t body = (size_t)hello[3] << 8 | hello[4], o = 0;

	CU_ASSERT_FATAL(body + 5 == n);
	for (size_t i = 0; i < body; i += per) {
		size_t k = body - i < per ? body - i : per;

		CU_ASSERT_FATAL(o + 5 + k <= cap);
		out[o++] = 0x16;
		out[o++] = 0x03;
		out[o++] = 0x01;
		out[o++] = (unsigned char)(k >> 8);
		out[o++] = (unsigned char)k;
		memcpy(out + o, hello + 5 + i, k);
		o += k;
	}
	return o;
}

/* Every prefix is MORE, the whole is DONE with the right length. */
static void check_prefixes(const unsigned char *p, size_t n, size_t want_msg)
{
	struct evbuffer *b = evbuffer_new();
	size_t msg = 0;
	int wrong = 0;

	CU_ASSERT_FATAL(b != NULL);
	for (size_t i = 0; i < n; i++) {
		/* One byte at a time: chains as a trickling client leaves them. */
		CU_ASSERT_FATAL(evbuffer_add(b, p + i, 1) == 0);
		if (hello_state(b, &msg) != (i + 1 == n ? TLS_HELLO_DONE : TLS_HELLO_MORE) && wrong++ < 3)
			fprintf(stderr, "prefix of %zu/%zu bytes: wrong state\n", i + 1, n);
	}
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(msg, want_msg);
	evbuffer_free(b);
}

static void test_hello_state(void)
{
	unsigned char h[4096], r[16384];
	size_t n = make_hello("example.com", h, sizeof(h)), rn;

	CU_ASSERT_FATAL(n > 9);
	check_prefixes(h, n, n - 5);
	/* The same hello in 7-byte records (RFC 8446 §5.1 allows it). */
	rn = reframe(h, n, 7, r, sizeof(r));
	check_prefixes(r, rn, n - 5);
}

static void test_hello_state_bad(void)
{
	static const unsigned char appdata[] = {0x17, 0x03, 0x03, 0x00, 0x05, 1, 0, 0, 1, 0};
	static const unsigned char server_hello[] = {0x16, 0x03, 0x03, 0x00, 0x05, 2, 0, 0, 1, 0};
	static const unsigned char empty_rec[] = {0x16, 0x03, 0x01, 0x00, 0x00, 0x16};
	static const unsigned char huge[] = {0x16, 0x03, 0x01, 0x40, 0x00, 1, 0x10, 0, 0};
	struct evbuffer *b = evbuffer_new();
	size_t msg;

	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(evbuffer_add(b, appdata, sizeof(appdata)), 0);
	CU_ASSERT_EQUAL(hello_state(b, &msg), TLS_HELLO_BAD);
	(void)evbuffer_drain(b, evbuffer_get_length(b));
	CU_ASSERT_EQUAL(evbuffer_add(b, server_hello, sizeof(server_hello)), 0);
	CU_ASSERT_EQUAL(hello_state(b, &msg), TLS_HELLO_BAD);
	(void)evbuffer_drain(b, evbuffer_get_length(b));
	CU_ASSERT_EQUAL(evbuffer_add(b, empty_rec, sizeof(empty_rec)), 0);
	CU_ASSERT_EQUAL(hello_state(b, &msg), TLS_HELLO_BAD);
	(void)evbuffer_drain(b, evbuffer_get_length(b));
	/* A 1 MiB hello announced: MORE, and the length is known at once
	 * (conn_step_intercept() refuses it against maxHeaderBytes). */
	CU_ASSERT_EQUAL(evbuffer_add(b, huge, sizeof(huge)), 0);
	CU_ASSERT_EQUAL(hello_state(b, &msg), TLS_HELLO_MORE);
	CU_ASSERT_EQUAL(msg, 4 + 0x100000);
	evbuffer_free(b);
}

static void test_hello_sni(void)
{
	SSL_CTX *ctx = tls_hello_ctx_new();
	unsigned char h[4096], r[16384];
	size_t n, rn;
	struct tls_hello seen;

	CU_ASSERT_FATAL(ctx != NULL);
	n = make_hello("Example.COM", h, sizeof(h));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(tls_hello_parse(ctx, h, n, &seen), 0);
	CU_ASSERT(seen.has_sni && !seen.bad_sni);
	CU_ASSERT_STRING_EQUAL(seen.sni, "Example.COM"); /* as sent; target_parse_connect() normalises */
	/* Re-framed into 5-byte records: the same. */
	rn = reframe(h, n, 5, r, sizeof(r));
	CU_ASSERT_EQUAL(tls_hello_parse(ctx, r, rn, &seen), 0);
	CU_ASSERT(seen.has_sni);
	CU_ASSERT_STRING_EQUAL(seen.sni, "Example.COM");
	/* No SNI (a client connecting to an IP literal). */
	n = make_hello(NULL, h, sizeof(h));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(tls_hello_parse(ctx, h, n, &seen), 0);
	CU_ASSERT(!seen.has_sni && !seen.bad_sni);
	/* Not a ClientHello: OpenSSL never calls back. */
	memset(h + 9, 0xee, n - 9);
	CU_ASSERT_EQUAL(tls_hello_parse(ctx, h, n, &seen), -1);
	CU_ASSERT_EQUAL(tls_hello_parse(ctx, (const unsigned char *)"GET / HTTP/1.1\r\n\r\n", 18, &seen), -1);
	SSL_CTX_free(ctx);
}

/* Whether the ALPN list offers h2 (mitm.c then dials the upstream first). */
static void test_hello_alpn(void)
{
	static const struct {
		const char *alpn; /* wire form, NULL: no extension */
		bool h2;
	} cases[] = {
		{"\x02h2\x08http/1.1", true},
		{"\x08http/1.1\x02h2", true},
		{"\x02h2", true},
		{"\x08http/1.1", false},
		{"\x03h2c\x08http/1.1", false}, /* h2c is not h2 */
		{"\x02h3", false},
		{NULL, false},
	};
	SSL_CTX *ctx = tls_hello_ctx_new();
	unsigned char h[4096], r[16384];
	struct tls_hello seen;
	size_t n, rn;

	CU_ASSERT_FATAL(ctx != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = make_hello_alpn("example.com", cases[i].alpn, h, sizeof(h));
		CU_ASSERT_FATAL(n > 0);
		CU_ASSERT_EQUAL(tls_hello_parse(ctx, h, n, &seen), 0);
		CU_ASSERT_EQUAL(seen.offers_h2, cases[i].h2);
		/* Split into 3-byte records: the same answer. */
		rn = reframe(h, n, 3, r, sizeof(r));
		CU_ASSERT_EQUAL(tls_hello_parse(ctx, r, rn, &seen), 0);
		CU_ASSERT_EQUAL(seen.offers_h2, cases[i].h2);
	}
	SSL_CTX_free(ctx);
}

static void test_http_start(void)
{
	static const struct {
		const char *bytes;
		int want;
	} cases[] = {
		{"GET / HTTP/1.1\r\n", 1},
		{"OPTIONS * HTTP/1.1", 1},
		{"PROPFIND ", 1},
		{"CONNECT x:443 ", 1},
		{"GE", -1},
		{"G", -1},
		{"get / HTTP/1.1", 0},
		{" GET", 0},
		{"SSH-2.0-OpenSSH_9.2\r\n", 0},
		{"EHLO x\r\n", 1}, /* looks like a method; llhttp then refuses the line (400) */
		{"AAAAAAAAAAAAAAAAAAAAA", 0}, /* 21 letters, no space: no method is that long */
		{"AAAAAAAAAAAAAAAAAAAA", -1},
		{"\x16\x03\x01", 0},
	};
	struct evbuffer *b = evbuffer_new();

	CU_ASSERT_FATAL(b != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got;

		(void)evbuffer_drain(b, evbuffer_get_length(b));
		CU_ASSERT_FATAL(evbuffer_add(b, cases[i].bytes, strlen(cases[i].bytes)) == 0);
		got = conn_http_start(b);
		ROW(got == cases[i].want, "'%s': %d, expected %d", cases[i].bytes, got, cases[i].want);
	}
	evbuffer_free(b);
}

static bool synth(const char *text)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	return synthetic(&ss);
}

static void test_synthetic(void)
{
	CU_ASSERT(synth("198.18.0.0"));
	CU_ASSERT(synth("198.18.0.1"));
	CU_ASSERT(synth("198.19.255.255"));
	CU_ASSERT(!synth("198.17.255.255"));
	CU_ASSERT(!synth("198.20.0.0"));
	CU_ASSERT(!synth("203.0.113.9"));
	CU_ASSERT(synth("fd70:6173:7376:1::2"));
	CU_ASSERT(synth("fd70:6173:7376:1:ffff:ffff:ffff:ffff"));
	CU_ASSERT(!synth("fd70:6173:7376:2::2"));
	CU_ASSERT(!synth("::ffff:198.18.0.2")); /* the IPv6 listener is IPv6-only */
	CU_ASSERT(!synth("2001:db8::9"));
}

TEST_REGISTRAR(register_proxy_intercept)
{
	CU_pSuite s = test_suite("proxy_intercept", NULL, NULL);

	test_add(s, "hello_state at every prefix and in tiny records", test_hello_state);
	test_add(s, "tls_hello_parse: ALPN h2 offered or not", test_hello_alpn);
	test_add(s, "hello_state refusals and a huge hello", test_hello_state_bad);
	test_add(s, "hello_sni through OpenSSL", test_hello_sni);
	test_add(s, "conn_http_start", test_http_start);
	test_add(s, "synthetic ranges", test_synthetic);
}

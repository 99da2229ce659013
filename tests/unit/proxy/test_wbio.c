/*
 * test_wbio.c - proxy/wbio: the gathering write BIO on a real socket pair.
 *
 * - Small records wait for the loop's send event: the peer reads nothing
 *   before the loop runs, then all of them, in order.
 * - A large record leaves at once (the peer reads it before the loop
 *   runs), behind whatever small ones were gathered (one send of both),
 *   and nothing stays pending.
 * - Whatever the socket takes (a small send buffer, a peer that reads
 *   slowly, random record sizes, retries when the BIO is full), the peer
 *   reads exactly the bytes written, in order. A large record the socket
 *   takes in part is a short write: its rest is never copied into the
 *   BIO, and is written again (as OpenSSL does) once there is room.
 * - wbio_holding() is true while OpenSSL holds a record taken in part;
 *   wbio_on_sent()'s function runs once, from the write that completes
 *   it, and not after wbio_detach().
 * - A send error is kept: the next write fails.
 * - An answer OpenSSL writes inside SSL_read() (its SSL in init) that does
 *   not fit the full buffer is taken whole past it (data is refused), up
 *   to WBIO_ANSWERS_MAX; the write past that fails for good.
 * - The filter writer (fwbio) appends every record whole to the output of
 *   the bufferevent under it, past that output's write high watermark
 *   (where libevent's own BIO wrote part and left OpenSSL holding the
 *   rest); it counts small records written at or above the watermark and
 *   fails, without retry, the one past WBIO_ANSWERS_MAX; a write below
 *   the watermark starts the count again.
 */
#include "../../../proxy/wbio.h"

#include "../../support/testlib.h"

#include <errno.h>
#include <event2/buffer.h>
#include <openssl/err.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pair {
	struct event_base *base;
	BIO_METHOD *m;
	BIO *b;
	int fd[2]; /* [0] the BIO's socket, [1] the peer */
};

static void nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	CU_ASSERT_FATAL(fl >= 0);
	CU_ASSERT_FATAL(fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0);
}

/* sndbuf 0: the system's default. */
static void pair_open(struct pair *p, int sndbuf)
{
	memset(p, 0, sizeof(*p));
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd) == 0);
	nonblock(p->fd[0]);
	nonblock(p->fd[1]);
	if (sndbuf > 0) {
		CU_ASSERT_FATAL(setsockopt(p->fd[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) == 0);
		CU_ASSERT_FATAL(setsockopt(p->fd[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf)) == 0);
	}
	p->base = event_base_new();
	p->m = wbio_method_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->base);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->m);
	p->b = wbio_new(p->m, p->base, p->fd[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->b);
}

static void pair_close(struct pair *p)
{
	BIO_free(p->b);
	wbio_method_free(p->m);
	event_base_free(p->base);
	close(p->fd[0]);
	if (p->fd[1] >= 0)
		close(p->fd[1]);
}

/* Everything the peer can read now, appended to out[*n..cap). */
static void drain(struct pair *p, unsigned char *out, size_t *n, size_t cap, size_t most)
{
	ssize_t r;

	while (*n < cap && most > 0) {
		size_t want = cap - *n < most ? cap - *n : most;

		r = read(p->fd[1], out + *n, want);
		if (r <= 0)
			break;
		*n += (size_t)r;
		most -= (size_t)r;
	}
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static void test_small_gathered(void)
{
	struct pair p;
	unsigned char in[300], out[400];
	size_t n = 0;

	pair_open(&p, 0);
	fill(in, sizeof(in), 1);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(BIO_write(p.b, in + i * 100, 100), 100);
	drain(&p, out, &n, sizeof(out), sizeof(out));
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 300);
	CU_ASSERT(event_base_loop(p.base, EVLOOP_NONBLOCK) >= 0);
	drain(&p, out, &n, sizeof(out), sizeof(out));
	CU_ASSERT_EQUAL(n, 300);
	CU_ASSERT(memcmp(in, out, 300) == 0);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
	pair_close(&p);
}

static void test_large_direct(void)
{
	struct pair p;
	enum { LEN = 16384 + 22 };
	static unsigned char in[LEN], out[LEN + 10];
	size_t n = 0;

	pair_open(&p, 256 * 1024);
	fill(in, sizeof(in), 2);
	CU_ASSERT_EQUAL(BIO_write(p.b, in, LEN), LEN);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
	/* No loop run: the record left from the write itself. */
	drain(&p, out, &n, sizeof(out), sizeof(out));
	CU_ASSERT_EQUAL(n, LEN);
	CU_ASSERT(memcmp(in, out, LEN) == 0);
	/* A small record after it is gathered again. */
	CU_ASSERT_EQUAL(BIO_write(p.b, in, 50), 50);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 50);
	/* A large one behind gathered bytes leaves at once with them, in
	 * one send, nothing copied (order kept). */
	CU_ASSERT_EQUAL(BIO_write(p.b, in + 50, 9000), 9000);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
	n = 0;
	drain(&p, out, &n, sizeof(out), sizeof(out));
	CU_ASSERT_EQUAL(n, 9050);
	CU_ASSERT(memcmp(in, out, 9050) == 0);
	pair_close(&p);
}

/* Random record sizes into a small send buffer, a peer reading random
 * amounts between loop runs: the stream arrives whole and in order. */
static void test_stream_whole(void)
{
	enum { TOTAL = 3 << 20 };
	static unsigned char in[TOTAL], out[TOTAL];
	unsigned seed = 12345;

	for (int sndbuf = 4096; sndbuf <= 65536; sndbuf *= 4) {
		struct pair p;
		size_t wrote = 0, got = 0, spins = 0, partial_seen = 0;

		pair_open(&p, sndbuf);
		fill(in, sizeof(in), (unsigned)sndbuf);
		size_t rest = 0; /* what OpenSSL would write again of its record */

		while (got < TOTAL && spins < 10000000) {
			spins++;
			if (wrote < TOTAL) {
				/* As OpenSSL does: the rest of a record taken in
				 * part is written again first, alone. */
				size_t len = rest > 0 ? rest
					: (seed = seed * 1103515245u + 12345u) >> 16 & 1 ? 1 + (seed >> 8) % 200
											  : 8000 + (seed >> 8) % 8641;
				size_t before = BIO_wpending(p.b);
				int r;

				if (len > TOTAL - wrote)
					len = TOTAL - wrote;
				r = BIO_write(p.b, in + wrote, (int)len);
				if (r > 0) {
					wrote += (size_t)r;
					rest = len - (size_t)r;
					if (before == 0 && len >= WBIO_DIRECT_BYTES && rest > 0) {
						/* Part of a large record left from the
						 * write itself; the rest is not copied,
						 * and the socket just filled up: the
						 * rest's next write waits. */
						partial_seen++;
						CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
						CU_ASSERT_EQUAL(BIO_write(p.b, in + wrote, (int)rest), -1);
						CU_ASSERT(BIO_should_retry(p.b));
					}
				} else {
					CU_ASSERT_FATAL(BIO_should_retry(p.b));
					rest = len;
				}
			}
			CU_ASSERT_FATAL(event_base_loop(p.base, EVLOOP_NONBLOCK) >= 0);
			drain(&p, out, &got, TOTAL, 1 + ((seed >> 4) % 20000));
		}
		CU_ASSERT_EQUAL(wrote, TOTAL);
		CU_ASSERT_EQUAL(got, TOTAL);
		CU_ASSERT(memcmp(in, out, TOTAL) == 0);
		CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
		/* Small buffers must have taken parts of large records only:
		 * otherwise this test did not reach the path it is for. */
		if (sndbuf <= 16384)
			CU_ASSERT(partial_seen > 0);
		pair_close(&p);
	}
}

static void count_call(void *arg)
{
	(*(int *)arg)++;
}

/* Writes in[off, off + len) again as OpenSSL does after a short write or
 * a retry, the peer reading between tries, until the BIO took it all;
 * *calls must stay put and the BIO keep holding until the last piece. */
static void finish_record(struct pair *p, SSL *ssl, const unsigned char *in, size_t len, const int *calls,
			  unsigned char *out, size_t *got, size_t cap)
{
	int before = *calls;

	for (int tries = 0; len > 0 && tries < 100000; tries++) {
		int r = BIO_write(p->b, in, (int)len);

		if (r > 0) {
			in += r;
			len -= (size_t)r;
			if (len > 0)
				CU_ASSERT(wbio_holding(ssl) && *calls == before);
			continue;
		}
		CU_ASSERT_FATAL(BIO_should_retry(p->b));
		CU_ASSERT(wbio_holding(ssl) && *calls == before);
		drain(p, out, got, cap, 4096);
	}
	CU_ASSERT_EQUAL(len, 0);
}

/* wbio_holding(): true from a short write or a retry of a large record
 * until the write that completes it, which runs wbio_on_sent()'s
 * function once; wbio_detach() forgets that function. */
static void test_holding(void)
{
	enum { REC = 16384 };
	static unsigned char in[REC * 3], out[REC * 3];
	SSL_CTX *ctx = SSL_CTX_new(TLS_method());
	struct pair p;
	SSL *ssl;
	size_t got = 0;
	int calls = 0, r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	pair_open(&p, 4096);
	ssl = SSL_new(ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ssl);
	CU_ASSERT_FATAL(BIO_up_ref(p.b) == 1);
	SSL_set0_wbio(ssl, p.b); /* ssl owns the second reference */
	fill(in, sizeof(in), 4);
	CU_ASSERT(!wbio_holding(ssl));

	r = BIO_write(p.b, in, REC);
	CU_ASSERT_FATAL(r > 0 && r < REC);
	CU_ASSERT(wbio_holding(ssl));
	wbio_on_sent(ssl, count_call, &calls);
	finish_record(&p, ssl, in + r, REC - (size_t)r, &calls, out, &got, sizeof(out));
	CU_ASSERT_EQUAL(calls, 1);
	CU_ASSERT(!wbio_holding(ssl));

	/* Another record held and completed: the function ran once only. */
	drain(&p, out, &got, sizeof(out), sizeof(out));
	r = BIO_write(p.b, in + REC, REC);
	CU_ASSERT_FATAL(r > 0 && r < REC);
	finish_record(&p, ssl, in + REC + r, REC - (size_t)r, &calls, out, &got, sizeof(out));
	CU_ASSERT_EQUAL(calls, 1);

	/* Detached before the record is out: never called. */
	drain(&p, out, &got, sizeof(out), sizeof(out));
	r = BIO_write(p.b, in + 2 * REC, REC);
	CU_ASSERT_FATAL(r > 0 && r < REC);
	wbio_on_sent(ssl, count_call, &calls);
	wbio_detach(ssl);
	finish_record(&p, ssl, in + 2 * REC + r, REC - (size_t)r, &calls, out, &got, sizeof(out));
	CU_ASSERT_EQUAL(calls, 1);

	drain(&p, out, &got, sizeof(out), sizeof(out));
	CU_ASSERT_EQUAL(got, sizeof(in));
	CU_ASSERT(memcmp(in, out, sizeof(in)) == 0);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	pair_close(&p);
}

/* BIO_flush() with gathered bytes the full socket does not take: done for
 * OpenSSL (1, no retry), the bytes stay pending and the send event
 * delivers them once the peer reads. */
static void test_flush_full(void)
{
	static unsigned char in[200000], out[200000];
	struct pair p;
	size_t wrote = 0, got = 0;

	pair_open(&p, 4096);
	fill(in, sizeof(in), 6);
	/* Small records until the socket and the buffer are both full. */
	for (;;) {
		int r = BIO_write(p.b, in + wrote, 100);

		if (r <= 0) {
			CU_ASSERT_FATAL(BIO_should_retry(p.b));
			break;
		}
		wrote += (size_t)r;
		CU_ASSERT_FATAL(wrote + 100 <= sizeof(in));
	}
	CU_ASSERT(BIO_wpending(p.b) > 0);
	CU_ASSERT_EQUAL(BIO_flush(p.b), 1);
	CU_ASSERT(!BIO_should_retry(p.b));
	CU_ASSERT(BIO_wpending(p.b) > 0);
	for (int spins = 0; got < wrote && spins < 100000; spins++) {
		CU_ASSERT_FATAL(event_base_loop(p.base, EVLOOP_NONBLOCK) >= 0);
		drain(&p, out, &got, sizeof(out), 4096);
	}
	CU_ASSERT_EQUAL(got, wrote);
	CU_ASSERT(memcmp(in, out, wrote) == 0);
	CU_ASSERT_EQUAL(BIO_wpending(p.b), 0);
	pair_close(&p);
}

static void test_error_kept(void)
{
	struct pair p;
	static unsigned char in[16384];

	pair_open(&p, 0);
	close(p.fd[1]);
	p.fd[1] = -1;
	fill(in, sizeof(in), 3);
	/* The large record's direct send fails on the closed peer. */
	CU_ASSERT_EQUAL(BIO_write(p.b, in, sizeof(in)), -1);
	CU_ASSERT(!BIO_should_retry(p.b));
	/* And so does every later one, small or large. */
	CU_ASSERT_EQUAL(BIO_write(p.b, in, 10), -1);
	CU_ASSERT_EQUAL(BIO_write(p.b, in, sizeof(in)), -1);
	pair_close(&p);
}

/* Gathered records of 200 bytes (larger than an answer) until the
 * socket and the buffer are both full (the last write refused, retry);
 * returns the bytes taken, in[0, n). */
static size_t fill_full(struct pair *p, const unsigned char *in, size_t cap)
{
	size_t wrote = 0;

	for (;;) {
		int r = BIO_write(p->b, in + wrote, 200);

		if (r <= 0) {
			CU_ASSERT_FATAL(BIO_should_retry(p->b));
			return wrote;
		}
		wrote += (size_t)r;
		CU_ASSERT_FATAL(wrote + 200 <= cap);
	}
}

/* An answer OpenSSL writes inside SSL_read() (its SSL in init: a
 * KeyUpdate's) into a full buffer is taken whole, where data is refused;
 * the stream arrives whole and in order; a buffer made again after one
 * that grew is of the normal size again (under ASan a stale size wrote
 * past it); past WBIO_ANSWERS_MAX waiting the write fails for good, no
 * retry, and wbio_overflowed() says so. */
static void test_answers_whole(void)
{
	static unsigned char in[200000], out[200000];
	SSL_CTX *ctx = SSL_CTX_new(TLS_method());
	struct pair p;
	SSL *ssl;
	size_t wrote, got = 0;
	int n = 0, r = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	ssl = SSL_new(ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ssl);
	CU_ASSERT_FATAL(SSL_in_init(ssl) == 1);
	fill(in, sizeof(in), 7);

	pair_open(&p, 4096);
	wrote = fill_full(&p, in, sizeof(in));
	/* Without its SSL the BIO cannot tell an answer: refused too. */
	CU_ASSERT_EQUAL(BIO_write(p.b, in + wrote, 27), -1);
	CU_ASSERT(BIO_should_retry(p.b));
	wbio_set_ssl(p.b, ssl);
	CU_ASSERT_FATAL(BIO_up_ref(p.b) == 1);
	SSL_set0_wbio(ssl, p.b);
	for (int i = 0; i < 10; i++, wrote += 27)
		CU_ASSERT_EQUAL(BIO_write(p.b, in + wrote, 27), 27);
	for (int spins = 0; got < wrote && spins < 100000; spins++) {
		CU_ASSERT_FATAL(event_base_loop(p.base, EVLOOP_NONBLOCK) >= 0);
		drain(&p, out, &got, sizeof(out), 4096);
	}
	CU_ASSERT_EQUAL(got, wrote);
	CU_ASSERT(memcmp(out, in, got) == 0);

	/* The buffer went with its bytes: the next one is made anew. */
	wrote = fill_full(&p, in, sizeof(in));
	while (n < 10000 && (r = BIO_write(p.b, in + wrote, 27)) == 27) {
		wrote += 27;
		n++;
	}
	CU_ASSERT_EQUAL(n, WBIO_ANSWERS_MAX / 27);
	CU_ASSERT_EQUAL(r, -1);
	CU_ASSERT(!BIO_should_retry(p.b));
	CU_ASSERT(ERR_peek_error() != 0);
	ERR_clear_error();
	CU_ASSERT(wbio_overflowed(ssl));
	CU_ASSERT_EQUAL(BIO_write(p.b, in, 100), -1);
	SSL_free(ssl); /* one reference of p.b */
	pair_close(&p);
	SSL_CTX_free(ctx);
}

static void test_filter_writer(void)
{
	static unsigned char in[16384];
	struct event_base *base = event_base_new();
	BIO_METHOD *m = fwbio_method_new();
	struct bufferevent *under;
	struct evbuffer *out;
	SSL_CTX *ctx;
	SSL *ssl;
	BIO *b;
	int fd[2];
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
	under = bufferevent_socket_new(base, fd[0], 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(under);
	bufferevent_setwatermark(under, EV_WRITE, 1024, 4096);
	out = bufferevent_get_output(under);
	b = fwbio_new(m, under);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	/* An SSL that writes through it (a reference of its own). */
	ctx = SSL_CTX_new(TLS_method());
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
	ssl = SSL_new(ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ssl);
	CU_ASSERT_FATAL(BIO_up_ref(b) == 1);
	SSL_set0_wbio(ssl, b);
	CU_ASSERT(!wbio_overflowed(ssl));
	fill(in, sizeof(in), 5);
	/* Whole, past the 4 KiB watermark, in order. */
	CU_ASSERT_EQUAL(BIO_write(b, in, sizeof(in)), (int)sizeof(in));
	CU_ASSERT_EQUAL(BIO_write(b, in, 100), 100);
	CU_ASSERT_EQUAL(evbuffer_get_length(out), sizeof(in) + 100);
	CU_ASSERT_EQUAL(BIO_wpending(b), (long)(sizeof(in) + 100));
	CU_ASSERT_EQUAL(BIO_flush(b), 1);
	CU_ASSERT(memcmp(evbuffer_pullup(out, (ev_ssize_t)sizeof(in)), in, sizeof(in)) == 0);
	/* Large records are never refused, however much waits. */
	for (int i = 0; i < 40; i++)
		CU_ASSERT_EQUAL_FATAL(BIO_write(b, in, sizeof(in)), (int)sizeof(in));
	/* Small ones above the watermark count (the 100 bytes above too),
	 * up to WBIO_ANSWERS_MAX; the write past it fails, no retry. */
	while (n < 10000 && BIO_write(b, in, 27) == 27)
		n++;
	CU_ASSERT_EQUAL(n, (WBIO_ANSWERS_MAX - 100) / 27);
	CU_ASSERT(!BIO_should_retry(b));
	CU_ASSERT(ERR_peek_error() != 0);
	ERR_clear_error();
	CU_ASSERT(wbio_overflowed(ssl));
	/* The peer read: the count starts again. (libevent freezes the
	 * start of a socket bufferevent's output: its writes drain it.) */
	CU_ASSERT_FATAL(evbuffer_unfreeze(out, 1) == 0);
	CU_ASSERT_FATAL(evbuffer_drain(out, evbuffer_get_length(out)) == 0);
	CU_ASSERT_FATAL(evbuffer_freeze(out, 1) == 0);
	CU_ASSERT_EQUAL(BIO_write(b, in, 27), 27);
	CU_ASSERT_EQUAL(evbuffer_get_length(out), 27);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	BIO_free(b);
	bufferevent_free(under);
	close(fd[0]);
	close(fd[1]);
	wbio_method_free(m);
	event_base_free(base);
}

TEST_REGISTRAR(register_proxy_wbio)
{
	CU_pSuite s = test_suite("proxy_wbio", NULL, NULL);

	test_add(s, "small records wait for the loop, then leave in order", test_small_gathered);
	test_add(s, "a large record leaves at once, behind gathered ones in the same send", test_large_direct);
	test_add(s, "random records, small send buffer, slow peer: the stream arrives whole",
		 test_stream_whole);
	test_add(s, "a record taken in part is held until its rest is out, then on_sent runs once", test_holding);
	test_add(s, "a flush into a full socket is done: the send event delivers the rest", test_flush_full);
	test_add(s, "a send error is kept: later writes fail", test_error_kept);
	test_add(s, "an answer written inside SSL_read() is taken whole into a full buffer, up to its bound",
		 test_answers_whole);
	test_add(s, "the filter writer takes records whole past the watermark, up to its bound",
		 test_filter_writer);
}

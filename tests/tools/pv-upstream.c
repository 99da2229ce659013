/*
 * pv-upstream - the project's own upstream server for tests and benchmarks.
 *
 *   pv-upstream [--listen 127.0.0.1:0] [--tls CERTDIR [--cert-name NAME]]
 *               [--record FILE] [--git-root DIR [--git-auth USER[:PASSWORD]]]
 *               [--files DIR]
 *
 * HTTP/1.1 with keep-alive and pipelining on libevent; requests parsed with
 * llhttp. Binds loopback addresses only. When ready it prints exactly one
 * line "listening on HOST:PORT" on stdout and flushes it. SIGTERM/SIGINT:
 * clean stop (exit 0).
 *
 * --tls CERTDIR   HTTPS with CERTDIR/NAME.pem and CERTDIR/NAME.key (NAME is
 *                 "server" unless --cert-name says otherwise, e.g. "bad");
 *                 ALPN: http/1.1 only.
 * --record FILE   appends every request exactly as received (head and body
 *                 bytes, chunked framing included) preceded by a line
 *                 "=== conn N req M ===", flushed per request. A request cut
 *                 short (connection closed, parse error) is recorded with
 *                 "=== conn N req M incomplete ===". A request larger than
 *                 RECORD_FLUSH_AT bytes is written in pieces as it arrives
 *                 (the pieces of two such concurrent requests may
 *                 interleave). Bytes after a WebSocket upgrade are not
 *                 recorded.
 * --git-root DIR  requests under /git/ are run through `git http-backend`
 *                 (CGI, GIT_PROJECT_ROOT=DIR, GIT_HTTP_EXPORT_ALL=1).
 * --git-auth USER /git/ requests need `Authorization: Basic` for user USER
 *                 (any password); others get 401 with WWW-Authenticate:
 *                 Basic, so git sends the user:password of its URL (it
 *                 sends none before a 401). USER:PASSWORD: the password
 *                 must match too. Either way git http-backend then gets
 *                 REMOTE_USER=USER, so it accepts a push (receive-pack).
 * --files DIR     a GET or HEAD for a path no endpoint below answers is
 *                 served from DIR: DIR/PATH, or for a directory its
 *                 index.html, else its index.json (a PEP 503 simple index,
 *                 an npm registry's packument at /NAME next to its
 *                 tarballs under /NAME/-/). Content-Type from the
 *                 extension. A path with "..", ".", an empty segment, a
 *                 '%' or a '\\', or a symbolic link on the way: 404.
 *
 * Endpoints (every response carries X-Upstream-Conn: N, the 1-based number
 * of the connection in accept order; HEAD gets the same heads, no body):
 *   /hello          200 "hello\n"
 *   /tls-resumed    200 "resumed\n" or "full\n": whether this TLS connection
 *                   resumed an earlier session (plain: "plain\n")
 *   /bytes/N        N bytes of the pattern (tests/support/upstream.h),
 *                   Content-Length, streamed: never more than about
 *                   STREAM_HIGH bytes queued per connection
 *   /chunked/N      the same bytes, Transfer-Encoding: chunked
 *   /echo           200, body = the raw request head and body as received
 *                   (413 above ECHO_MAX)
 *   /status/N       status N (200-599) with body "status N\n" (none for 204
 *                   and 304)
 *   /close          200 "bye\n" with Connection: close, then closes
 *   /headers?k=v..  200 "ok\n" with a response header k: v per pair
 *                   (percent-decoded; CR, LF and NUL refused with 400;
 *                   framing headers are not filtered, so a test can send
 *                   e.g. a second Content-Length on purpose)
 *   /sink           reads a request body of any size without keeping it,
 *                   replies "N\n" (N = body bytes after de-chunking)
 *   /sink?records=1 the same, replying "N records=R\n": R is the number of
 *                   TLS records read since the request began (the record
 *                   that began it not counted), to check that a relay
 *                   keeps records whole
 *   /delay/MS       200 "delayed MS\n" after MS milliseconds (at most
 *                   600000), for timeout tests
 *   /rawhex/HEX     writes the bytes HEX encodes (at most 32 KiB), verbatim,
 *                   as the whole response, then closes: for malformed or
 *                   ambiguous responses (no X-Upstream-Conn here); also
 *                   to an Upgrade request (a 101 the test writes)
 *   /ws             WebSocket (RFC 6455): 101, then every frame is sent back
 *                   with the same FIN/RSV/opcode and payload, unmasked (a
 *                   ping is answered with a pong; a close is echoed, then
 *                   the connection closes). Frames up to WS_MAX_FRAME.
 *                   /ws?x=HEX: the same, but right after the 101 the server
 *                   first sends one text frame whose payload is the bytes
 *                   HEX encodes (an upstream that pushes a value);
 *                   &split=K&pongs=N: the bytes go as a fragment of the
 *                   first K, N unsolicited pongs (120 bytes each), then the
 *                   rest as its continuation, in one write.
 *                   &rsv1=1 sets that frame's RSV1 bit (as a compressed
 *                   frame of permessage-deflate, agreed or not).
 *                   &op=HH: the pushed frame's first byte instead (88 a
 *                   close frame, 8a a pong, 89 a ping; at most 125 bytes).
 *   /reflect/MODE?x=HEX or ?h=NAME
 *                   reflects a value back: the bytes HEX encodes, or the
 *                   value of the request's first NAME header (as received,
 *                   case-insensitive name). The response carries it in a
 *                   header "X-Reflect: VALUE" and in its body
 *                   "reflect:VALUE\n" (each value appears exactly twice).
 *                   MODE says how the body is framed: cl (Content-Length),
 *                   chunked (the value one byte per chunk, so a scanner
 *                   must carry a match across chunk boundaries), close (no
 *                   length: the body ends when the connection closes). A value with CR, LF or NUL,
 *                   a missing header or a bad MODE: 400. At most 2048 bytes.
 *                   MODE trailer: chunked, and the value also goes in a
 *                   trailer field "X-Reflect-Trailer: VALUE" (three times).
 *                   &drip=MS (1-100): the whole response is written one
 *                   byte every MS milliseconds, so a value reaches the
 *                   reader split across many reads.
 *                   &drip=read: one byte at a time, each as soon as the
 *                   reader (a process on this host: the proxy) has read
 *                   the one before out of its socket (its receive queue,
 *                   asked of sock_diag every DRIP_POLL_US, is empty), so
 *                   every byte is a read of its own; when sock_diag
 *                   cannot tell, or the reader has not read for
 *                   DRIP_WAIT_MS, the next byte goes anyway.
 *                   &drip=MS&only=value: only the value's bytes go one per
 *                   MS milliseconds, where it appears whole (the header,
 *                   a cl or close body, the trailer); the bytes before
 *                   each go at once with its first byte. A slow value
 *                   without waiting MS for every other byte.
 *                   &case=upper|lower|mixed: the value is echoed with its
 *                   case changed (mixed: every other byte upper, the
 *                   others lower); &nohead=1: no X-Reflect header (the
 *                   body only, and the trailer in mode trailer).
 *                   &pause=MS (1-10000, modes cl and close): the response
 *                   is written up to the middle of the value in the body,
 *                   then the rest MS milliseconds later (a network stall,
 *                   e.g. a TCP retransmission, inside a value).
 *   /repeat/MODE/COUNT?x=HEX
 *                   200, body = COUNT times the bytes HEX encodes followed
 *                   by "\n" (at most 64 MiB); MODE cl (Content-Length) or
 *                   chunked (997-byte chunks, so chunk edges fall inside
 *                   values at every offset).
 *   /keyupdate?after=MS&stall=MS
 *                   TLS only: a TLS 1.3 KeyUpdate asking the peer to update
 *                   its keys too is sent MS (after) after the request head,
 *                   then the answer of /sink. stall: the request body is not
 *                   read for MS after the head (the KeyUpdate then arrives
 *                   while the peer's writes to us are blocked); after below
 *                   stall. Without TLS or TLS 1.3: 400.
 *   anything else   a file of --files DIR, else 404
 * Requests with Expect: 100-continue get "100 Continue" first. A request
 * head over HEAD_MAX bytes gets 431, a malformed request 400; both close.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <llhttp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

#include "tests/support/proc.h"

#define HEAD_MAX (64 * 1024)            /* url + header bytes of one request */
#define ECHO_MAX (1024 * 1024)          /* largest request /echo returns */
#define RAW_KEEP_MAX (1024 * 1024)      /* raw bytes kept when not recording */
#define RECORD_FLUSH_AT (8 * 1024 * 1024)
#define STREAM_HIGH (512 * 1024)        /* refill /bytes while output below this */
#define INPUT_HIGH (1024 * 1024)        /* stop reading with this much unparsed */
#define WS_MAX_FRAME (16 * 1024 * 1024)
#define CGI_BODY_MAX (256 * 1024 * 1024) /* request body kept for git */
#define FILE_MAX (64 * 1024 * 1024)     /* largest file --files serves */
#define MAX_CONNS 8192
#define PATTERN_PERIOD 63
#define DRIP_POLL_US 100                /* drip=read: how often the reader is looked at */
/* drip=read: the next byte goes after this anyway. Below the proxy's 100 ms
 * release after an upstream's pause: at 100 ms, 1 run in 4 released a
 * value's prefix (the review of round 33), the limit docs/masking.md states
 * for a value the upstream itself interrupts. */
#define DRIP_WAIT_MS 50
/* drip=read: a pause between two bytes this long is this process stalled
 * (said on stderr); the proxy releases held bytes after 100 ms. */
#define DRIP_STALL_MS 80
#define PATTERN_CHUNK (PATTERN_PERIOD * 1024)

static const char pattern_chars[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n";
/* The pattern repeated; a chunk of PATTERN_CHUNK bytes starting at any
 * offset below PATTERN_PERIOD fits. */
static char pattern_buf[PATTERN_CHUNK + PATTERN_PERIOD];

enum conn_state {
	CS_READ_REQ,    /* parsing requests */
	CS_STREAM,      /* streaming a /bytes or /chunked body */
	CS_CGI,         /* relaying git http-backend output */
	CS_WS,          /* WebSocket echo */
	CS_FLUSH_CLOSE, /* writing the last bytes, then close */
	CS_DELAY,       /* /delay/MS: waiting before answering */
	CS_DRIP,        /* /reflect?drip=MS: writing the response a byte at a time */
};

struct server;
struct cgi;

struct conn {
	struct server *srv;
	struct conn *prev, *next;
	struct bufferevent *bev;
	unsigned long id;
	unsigned long nreq;           /* requests begun on this connection */
	enum conn_state state;
	llhttp_t parser;
	bool in_request;              /* a request has begun, not yet complete */
	bool complete;                /* set by on_message_complete */
	bool close_after;             /* close once the response is written */
	bool too_large;               /* head over HEAD_MAX */
	/* the request being parsed */
	size_t head_bytes;
	char url[8192];
	size_t url_len;
	char hname[128];
	size_t hname_len;
	char hval[1024];
	size_t hval_len;
	char ws_key[64];
	bool expect_continue;
	char content_type[256];
	char content_encoding[64];
	char git_protocol[256];
	uint64_t body_bytes;
	uint64_t tls_records;         /* TLS records read since the request began */
	bool keep_body;               /* body kept in body (git) */
	struct evbuffer *body;
	/* raw capture of the request for --record and /echo */
	struct evbuffer *raw;
	uint64_t raw_total;
	bool raw_truncated;
	bool rec_header_written;
	/* streaming response */
	uint64_t stream_left, stream_off;
	bool stream_chunked;
	/* CGI */
	struct cgi *cgi;
	/* /delay */
	struct event *delay;
	/* /reflect?drip=MS */
	struct event *drip_ev;
	struct evbuffer *drip;
	bool drip_all;                /* /reflect?pause=MS: the next tick sends the rest */
	bool drip_read;               /* /reflect?drip=read: paced by the reader's reads */
	struct timeval drip_last;     /* drip=read: when the last byte was queued */
	bool drip_values;             /* only=value: only value bytes are paced */
	size_t drip_off;              /* bytes of the response moved so far */
	size_t drip_span[4][2];       /* only=value: [start, end) of each value, ascending */
	int drip_nspan;
	unsigned delay_ms;
	/* /keyupdate */
	struct event *ku_ev;
	bool ku_ok;                   /* this request's KeyUpdate was started */
	bool ku_sent;                 /* the KeyUpdate went; the next tick reads again */
	unsigned ku_after_ms, ku_stall_ms;
};

struct cgi {
	struct conn *c;
	pid_t pid;
	struct bufferevent *bev;      /* socketpair end: child's stdin+stdout */
	bool head_done;
	bool eof;
};

struct server {
	struct event_base *base;
	struct evconnlistener *lis;
	SSL_CTX *ssl_ctx;
	FILE *record;
	const char *git_root;
	const char *git_auth;         /* --git-auth USER[:PASSWORD], or NULL */
	char git_user[128];           /* its USER part: REMOTE_USER */
	const char *files_root;       /* --files DIR, or NULL */
	unsigned long next_conn;
	unsigned nconns;
	struct conn *conns;
	llhttp_settings_t settings;
};

static void conn_free(struct conn *c);
static void key_update_send(struct conn *c);
static int process_input(struct conn *c);
static void conn_writecb(struct bufferevent *bev, void *arg);

/* ------------------------------------------------------------ recording */

/* Writes the raw capture to the record file (keeping it for /echo). */
static void record_flush(struct conn *c, bool complete, bool drain)
{
	FILE *f = c->srv->record;
	struct evbuffer_iovec v[64];
	int n, i;

	if (f == NULL)
		return;
	if (!c->rec_header_written) {
		if (fprintf(f, "=== conn %lu req %lu%s ===\n", c->id, c->nreq,
			    complete ? "" : " incomplete") < 0)
			fprintf(stderr, "pv-upstream: writing record: %s\n", strerror(errno));
		c->rec_header_written = true;
	}
	/* Why not len -1: evbuffer_peek() then stops counting at n_vec
	 * extents, so n would never exceed 64 and a request of more chains
	 * (about 512 KiB) was recorded truncated. A length counts them all. */
	n = evbuffer_peek(c->raw, (ev_ssize_t)evbuffer_get_length(c->raw), NULL, v, 64);
	if (n > 64) {
		/* Too fragmented for one peek: linearise. */
		unsigned char *p = evbuffer_pullup(c->raw, -1);
		size_t len = evbuffer_get_length(c->raw);

		if (p != NULL && fwrite(p, 1, len, f) != len)
			fprintf(stderr, "pv-upstream: writing record: %s\n", strerror(errno));
	} else {
		for (i = 0; i < n; i++)
			if (fwrite(v[i].iov_base, 1, v[i].iov_len, f) != v[i].iov_len)
				fprintf(stderr, "pv-upstream: writing record: %s\n", strerror(errno));
	}
	if (fflush(f) != 0)
		fprintf(stderr, "pv-upstream: flushing record: %s\n", strerror(errno));
	if (drain)
		evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
}

/* Keeps the bytes the parser consumed. */
static void capture(struct conn *c, const char *data, size_t len)
{
	if (len == 0)
		return;
	c->raw_total += len;
	if (c->srv->record == NULL && evbuffer_get_length(c->raw) + len > RAW_KEEP_MAX) {
		c->raw_truncated = true;
		return;
	}
	if (evbuffer_add(c->raw, data, len) < 0) {
		c->raw_truncated = true;
		return;
	}
	if (c->srv->record != NULL && evbuffer_get_length(c->raw) >= RECORD_FLUSH_AT) {
		record_flush(c, true, true);
		c->raw_truncated = true; /* /echo can no longer return it all */
	}
}

/* ------------------------------------------------------------ responses */

static const char *reason_phrase(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Status";
	}
}

static bool is_head(struct conn *c)
{
	return llhttp_get_method(&c->parser) == HTTP_HEAD;
}

/* Writes a status line, X-Upstream-Conn, extra (CRLF-terminated lines or
 * ""), framing and Connection: close when the connection ends after this. */
static int write_head_to(struct conn *c, struct evbuffer *out, int status, const char *extra,
			 const char *framing)
{
	if (evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nX-Upstream-Conn: %lu\r\n%s%s%s\r\n",
				status, reason_phrase(status), c->id, extra, framing,
				c->close_after ? "Connection: close\r\n" : "") < 0)
		return -1;
	return 0;
}

static int write_head(struct conn *c, int status, const char *extra, const char *framing)
{
	return write_head_to(c, bufferevent_get_output(c->bev), status, extra, framing);
}

/* A complete response with a fixed body. */
static int respond(struct conn *c, int status, const char *extra, const void *body, size_t len)
{
	char framing[64];

	if (status == 204 || status == 304)
		framing[0] = '\0';
	else
		snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", len);
	if (write_head(c, status, extra, framing) < 0)
		return -1;
	if (len > 0 && !is_head(c) && status != 204 && status != 304 &&
	    evbuffer_add(bufferevent_get_output(c->bev), body, len) < 0)
		return -1;
	return 0;
}

static int respond_text(struct conn *c, int status, const char *text)
{
	return respond(c, status, "Content-Type: text/plain\r\n", text, strlen(text));
}

/* The response is fully queued: wait for it to drain and close, or go back
 * to reading requests (the caller's loop or the write callback parses any
 * pipelined input). */
static void finish_response(struct conn *c)
{
	c->in_request = false;
	if (c->close_after) {
		c->state = CS_FLUSH_CLOSE;
		bufferevent_disable(c->bev, EV_READ);
		bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
		return;
	}
	c->state = CS_READ_REQ;
	llhttp_resume(&c->parser);
}

/* Queues more of a /bytes or /chunked body; finishes when all is queued. */
static int stream_refill(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	while (c->stream_left > 0 && evbuffer_get_length(out) < STREAM_HIGH) {
		size_t n = c->stream_left < PATTERN_CHUNK ? (size_t)c->stream_left : PATTERN_CHUNK;
		size_t off = (size_t)(c->stream_off % PATTERN_PERIOD);

		if (c->stream_chunked && evbuffer_add_printf(out, "%zx\r\n", n) < 0)
			return -1;
		if (evbuffer_add_reference(out, pattern_buf + off, n, NULL, NULL) < 0)
			return -1;
		if (c->stream_chunked && evbuffer_add(out, "\r\n", 2) < 0)
			return -1;
		c->stream_off += n;
		c->stream_left -= n;
	}
	if (c->stream_left == 0) {
		if (c->stream_chunked && evbuffer_add(out, "0\r\n\r\n", 5) < 0)
			return -1;
		finish_response(c);
	}
	return 0;
}

/* Parses a decimal count; returns 0 or -1. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*v = x;
	return 0;
}

static int start_stream(struct conn *c, const char *arg, bool chunked)
{
	char framing[64];
	uint64_t n;

	if (parse_u64(arg, &n) < 0)
		return respond_text(c, 400, "bad byte count\n");
	if (chunked)
		snprintf(framing, sizeof(framing), "Transfer-Encoding: chunked\r\n");
	else
		snprintf(framing, sizeof(framing), "Content-Length: %llu\r\n", (unsigned long long)n);
	if (write_head(c, 200, "Content-Type: application/octet-stream\r\n", framing) < 0)
		return -1;
	if (is_head(c))
		return 0;
	c->state = CS_STREAM;
	c->stream_left = n;
	c->stream_off = 0;
	c->stream_chunked = chunked;
	return stream_refill(c);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* Percent-decodes s[0..len) into out (size cap); '+' is a space. Returns
 * the length, -1 if malformed, too long or decoding to CR, LF or NUL. */
static int pct_decode(const char *s, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		int ch = (unsigned char)s[i];

		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= len)
				return -1;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			ch = hi * 16 + lo;
			i += 2;
		} else if (ch == '+') {
			ch = ' ';
		}
		if (ch == '\r' || ch == '\n' || ch == '\0' || o + 1 >= cap)
			return -1;
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	return (int)o;
}

static bool is_token(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("!#$%&'*+-.^_`|~", *s) == NULL)
			return false;
	return true;
}

static int respond_headers(struct conn *c, const char *query)
{
	char extra[8192], name[256], value[2048];
	size_t used = 0;

	extra[0] = '\0';
	while (query != NULL && *query != '\0') {
		const char *amp = strchr(query, '&');
		size_t plen = amp ? (size_t)(amp - query) : strlen(query);
		const char *eq = memchr(query, '=', plen);
		int n;

		if (plen > 0) {
			if (eq == NULL ||
			    pct_decode(query, (size_t)(eq - query), name, sizeof(name)) < 0 ||
			    !is_token(name) ||
			    pct_decode(eq + 1, plen - (size_t)(eq + 1 - query), value, sizeof(value)) < 0)
				return respond_text(c, 400, "bad /headers query\n");
			n = snprintf(extra + used, sizeof(extra) - used, "%s: %s\r\n", name, value);
			if (n < 0 || (size_t)n >= sizeof(extra) - used)
				return respond_text(c, 400, "too many headers\n");
			used += (size_t)n;
		}
		query = amp ? amp + 1 : NULL;
	}
	return respond(c, 200, extra, "ok\n", 3);
}

static int respond_echo(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char framing[64];

	if (c->raw_truncated || c->raw_total > ECHO_MAX)
		return respond_text(c, 413, "request too large to echo\n");
	snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", evbuffer_get_length(c->raw));
	if (write_head(c, 200, "Content-Type: application/octet-stream\r\n", framing) < 0)
		return -1;
	if (!is_head(c)) {
		struct evbuffer_iovec v[64];
		/* A length, not -1: see record_flush(). */
		int n = evbuffer_peek(c->raw, (ev_ssize_t)evbuffer_get_length(c->raw), NULL, v, 64), i;

		if (n > 64) {
			unsigned char *p = evbuffer_pullup(c->raw, -1);

			if (p == NULL || evbuffer_add(out, p, evbuffer_get_length(c->raw)) < 0)
				return -1;
		} else {
			for (i = 0; i < n; i++)
				if (evbuffer_add(out, v[i].iov_base, v[i].iov_len) < 0)
					return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ WebSocket */

static int ws_accept_key(const char *key, char *out, size_t cap)
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	unsigned char md[SHA_DIGEST_LENGTH];
	char buf[128];
	int n;

	n = snprintf(buf, sizeof(buf), "%s%s", key, guid);
	if (n < 0 || (size_t)n >= sizeof(buf) || cap < 29)
		return -1;
	if (SHA1((const unsigned char *)buf, (size_t)n, md) == NULL)
		return -1;
	if (EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH) != 28)
		return -1;
	return 0;
}

/* Echoes every complete frame in the input. Returns -1 if c was freed. */
static int ws_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct evbuffer *out = bufferevent_get_output(c->bev);

	while (c->state == CS_WS) {
		size_t avail = evbuffer_get_length(in);
		unsigned char h[14], *p, mask[4] = { 0, 0, 0, 0 }, oh[10];
		size_t hlen = 2, ohlen;
		uint64_t plen;
		bool masked;
		int opcode;

		if (evbuffer_copyout(in, h, avail < sizeof(h) ? avail : sizeof(h)) < 0)
			return 0;
		if (avail < 2)
			return 0;
		masked = (h[1] & 0x80) != 0;
		plen = h[1] & 0x7f;
		if (plen == 126) {
			hlen += 2;
			if (avail < hlen)
				return 0;
			plen = ((uint64_t)h[2] << 8) | h[3];
		} else if (plen == 127) {
			hlen += 8;
			if (avail < hlen)
				return 0;
			plen = 0;
			for (int i = 0; i < 8; i++)
				plen = (plen << 8) | h[2 + i];
		}
		if (plen > WS_MAX_FRAME) {
			fprintf(stderr, "pv-upstream: conn %lu: WebSocket frame too large\n", c->id);
			conn_free(c);
			return -1;
		}
		if (masked) {
			if (avail < hlen + 4)
				return 0;
			memcpy(mask, h + hlen, 4);
			hlen += 4;
		}
		if (avail < hlen + plen)
			return 0;
		p = evbuffer_pullup(in, (ev_ssize_t)(hlen + plen));
		if (p == NULL) {
			conn_free(c);
			return -1;
		}
		for (uint64_t i = 0; i < plen; i++)
			p[hlen + i] ^= mask[i & 3];
		opcode = h[0] & 0x0f;
		oh[0] = opcode == 9 ? (unsigned char)((h[0] & 0xf0) | 10) : h[0];
		if (plen < 126) {
			oh[1] = (unsigned char)plen;
			ohlen = 2;
		} else if (plen < 65536) {
			oh[1] = 126;
			oh[2] = (unsigned char)(plen >> 8);
			oh[3] = (unsigned char)plen;
			ohlen = 4;
		} else {
			oh[1] = 127;
			for (int i = 0; i < 8; i++)
				oh[2 + i] = (unsigned char)(plen >> (56 - 8 * i));
			ohlen = 10;
		}
		if (evbuffer_add(out, oh, ohlen) < 0 || evbuffer_add(out, p + hlen, plen) < 0) {
			conn_free(c);
			return -1;
		}
		evbuffer_drain(in, hlen + plen);
		if (opcode == 8) {
			c->close_after = true;
			finish_response(c);
		}
	}
	return 0;
}

/* One unmasked frame header (RFC 6455 5.2) and its payload into out. */
static int ws_put_frame(struct evbuffer *out, unsigned char b0, const unsigned char *p, size_t n)
{
	unsigned char fh[4] = { b0, 0, 0, 0 };
	size_t fhlen = 2;

	if (n < 126) {
		fh[1] = (unsigned char)n;
	} else {
		fh[1] = 126;
		fh[2] = (unsigned char)(n >> 8);
		fh[3] = (unsigned char)n;
		fhlen = 4;
	}
	return evbuffer_add(out, fh, fhlen) < 0 || (n > 0 && evbuffer_add(out, p, n) < 0) ? -1 : 0;
}

/* /ws: 101, then echo. push (push_len bytes, may be 0) is sent first as
 * one text frame; with split (0 < split < push_len) as a fragment of its
 * first split bytes, pongs unsolicited pong frames of 120 bytes, then the
 * rest as the continuation, in one write (no pause between them). */
static int start_ws(struct conn *c, const unsigned char *push, size_t push_len, bool rsv1, size_t split,
		    unsigned pongs, unsigned op)
{
	char accept[32], extra[256];
	struct evbuffer *out = bufferevent_get_output(c->bev);

	if (c->ws_key[0] == '\0' || !llhttp_get_upgrade(&c->parser) ||
	    llhttp_get_method(&c->parser) != HTTP_GET) {
		c->close_after = true;
		return respond_text(c, 400, "not a WebSocket upgrade\n");
	}
	if (ws_accept_key(c->ws_key, accept, sizeof(accept)) < 0)
		return -1;
	snprintf(extra, sizeof(extra),
		 "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n", accept);
	if (write_head(c, 101, extra, "") < 0)
		return -1;
	if (push_len > 0 && split > 0 && split < push_len) {
		unsigned char pong[120];

		memset(pong, 'q', sizeof(pong));
		if (ws_put_frame(out, 0x01, push, split) < 0)
			return -1;
		for (unsigned i = 0; i < pongs; i++)
			if (ws_put_frame(out, 0x8a, pong, sizeof(pong)) < 0)
				return -1;
		if (ws_put_frame(out, 0x80, push + split, push_len - split) < 0)
			return -1;
	} else if (push_len > 0 &&
		   ws_put_frame(out, op != 0 ? (unsigned char)op : rsv1 ? 0xc1 : 0x81, push, push_len) < 0) {
		return -1;
	}
	c->state = CS_WS;
	/* Whole frames of up to WS_MAX_FRAME must fit in the input. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, WS_MAX_FRAME + 64);
	return 0;
}

/* ------------------------------------------------------------ CGI (git) */

static void cgi_free(struct cgi *g)
{
	if (g == NULL)
		return;
	if (g->bev != NULL)
		bufferevent_free(g->bev);
	if (g->pid > 0)
		kill(g->pid, SIGKILL); /* reaped by the SIGCHLD handler */
	if (g->c != NULL)
		g->c->cgi = NULL;
	free(g);
}

/* Parses the CGI response head once complete: Status and other headers.
 * Returns 1 done, 0 need more, -1 malformed. */
static int cgi_head(struct cgi *g)
{
	struct conn *c = g->c;
	struct evbuffer *in = bufferevent_get_input(g->bev);
	struct evbuffer_ptr end;
	char extra[8192];
	size_t used = 0, headlen, seplen = 4;
	char *head, *line, *save;
	int status = 200;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0) {
		end = evbuffer_search(in, "\n\n", 2, NULL);
		seplen = 2;
	}
	if (end.pos < 0)
		return evbuffer_get_length(in) > 16384 ? -1 : 0;
	headlen = (size_t)end.pos;
	head = malloc(headlen + 1);
	if (head == NULL)
		return -1;
	if (evbuffer_remove(in, head, headlen) != (int)headlen) {
		free(head);
		return -1;
	}
	head[headlen] = '\0';
	evbuffer_drain(in, seplen);
	extra[0] = '\0';
	for (line = strtok_r(head, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		int n;

		if (strncasecmp(line, "Status:", 7) == 0) {
			status = atoi(line + 7);
			if (status < 100 || status > 599)
				status = 500;
			continue;
		}
		n = snprintf(extra + used, sizeof(extra) - used, "%s\r\n", line);
		if (n < 0 || (size_t)n >= sizeof(extra) - used) {
			free(head);
			return -1;
		}
		used += (size_t)n;
	}
	free(head);
	if (write_head(c, status, extra, "Transfer-Encoding: chunked\r\n") < 0)
		return -1;
	g->head_done = true;
	return 1;
}

/* Moves CGI output to the client as chunks; ends the response at EOF. */
static void cgi_pump(struct cgi *g)
{
	struct conn *c = g->c;
	struct evbuffer *in = bufferevent_get_input(g->bev);
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t n;

	if (!g->head_done) {
		int r = cgi_head(g);

		if (r < 0) {
			fprintf(stderr, "pv-upstream: conn %lu: bad CGI response head\n", c->id);
			conn_free(c);
			return;
		}
		if (r == 0) {
			if (g->eof) {
				fprintf(stderr, "pv-upstream: conn %lu: CGI ended without a head\n",
					c->id);
				conn_free(c);
			}
			return;
		}
	}
	n = evbuffer_get_length(in);
	if (n > 0 && !is_head(c)) {
		if (evbuffer_add_printf(out, "%zx\r\n", n) < 0 ||
		    evbuffer_remove_buffer(in, out, n) != (int)n || evbuffer_add(out, "\r\n", 2) < 0) {
			conn_free(c);
			return;
		}
	} else {
		evbuffer_drain(in, n);
	}
	/* Back-pressure: stop reading the CGI while the client lags. */
	if (evbuffer_get_length(out) > STREAM_HIGH)
		bufferevent_disable(g->bev, EV_READ);
	if (g->eof) {
		if (!is_head(c) && evbuffer_add(out, "0\r\n\r\n", 5) < 0) {
			conn_free(c);
			return;
		}
		cgi_free(g);
		finish_response(c);
		if (c->state == CS_READ_REQ)
			process_input(c);
	}
}

static void cgi_readcb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	cgi_pump(arg);
}

static void cgi_writecb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	/* The whole request body is written: the CGI sees end of input. */
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		if (shutdown(bufferevent_getfd(bev), SHUT_WR) < 0 && errno != ENOTCONN)
			fprintf(stderr, "pv-upstream: CGI stdin shutdown: %s\n", strerror(errno));
}

static void cgi_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct cgi *g = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		g->eof = true;
		bufferevent_disable(g->bev, EV_READ | EV_WRITE);
		cgi_pump(g);
	}
}

static int setenv_checked(const char *k, const char *v)
{
	return setenv(k, v, 1);
}

static int start_cgi(struct conn *c, const char *path_info, const char *query)
{
	struct server *srv = c->srv;
	struct cgi *g;
	int sv[2];
	char clen[32];

	if (srv->git_root == NULL)
		return respond_text(c, 404, "no --git-root\n");
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(g);
		return -1;
	}
	snprintf(clen, sizeof(clen), "%zu", evbuffer_get_length(c->body));
	g->pid = fork();
	if (g->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		free(g);
		return -1;
	}
	if (g->pid == 0) {
		const char *meth = llhttp_method_name((llhttp_method_t)llhttp_get_method(&c->parser));

		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0 ||
		    setenv_checked("GIT_PROJECT_ROOT", srv->git_root) < 0 ||
		    setenv_checked("GIT_HTTP_EXPORT_ALL", "1") < 0 ||
		    setenv_checked("GATEWAY_INTERFACE", "CGI/1.1") < 0 ||
		    setenv_checked("SERVER_PROTOCOL", "HTTP/1.1") < 0 ||
		    setenv_checked("REQUEST_METHOD", meth) < 0 ||
		    setenv_checked("PATH_INFO", path_info) < 0 ||
		    setenv_checked("QUERY_STRING", query ? query : "") < 0 ||
		    setenv_checked("REMOTE_ADDR", "127.0.0.1") < 0 ||
		    setenv_checked("CONTENT_LENGTH", clen) < 0 ||
		    (c->content_type[0] && setenv_checked("CONTENT_TYPE", c->content_type) < 0) ||
		    (c->content_encoding[0] &&
		     setenv_checked("HTTP_CONTENT_ENCODING", c->content_encoding) < 0) ||
		    (c->git_protocol[0] && setenv_checked("GIT_PROTOCOL", c->git_protocol) < 0) ||
		    (srv->git_auth != NULL && setenv_checked("REMOTE_USER", srv->git_user) < 0))
			_exit(127);
		execlp("git", "git", "http-backend", (char *)NULL);
		fprintf(stderr, "pv-upstream: exec git http-backend: %s\n", strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	if (evutil_make_socket_nonblocking(sv[0]) < 0) {
		close(sv[0]);
		kill(g->pid, SIGKILL);
		free(g);
		return -1;
	}
	g->bev = bufferevent_socket_new(srv->base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	if (g->bev == NULL) {
		close(sv[0]);
		kill(g->pid, SIGKILL);
		free(g);
		return -1;
	}
	g->c = c;
	c->cgi = g;
	c->state = CS_CGI;
	bufferevent_setcb(g->bev, cgi_readcb, cgi_writecb, cgi_eventcb, g);
	if (evbuffer_add_buffer(bufferevent_get_output(g->bev), c->body) < 0 ||
	    bufferevent_enable(g->bev, EV_READ | EV_WRITE) < 0)
		return -1;
	if (evbuffer_get_length(bufferevent_get_output(g->bev)) == 0)
		if (shutdown(sv[0], SHUT_WR) < 0)
			fprintf(stderr, "pv-upstream: CGI stdin shutdown: %s\n", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------ /reflect */

#define REFLECT_MAX 2048

/* Decodes hex s into out (cap bytes). Returns the length, -1 if malformed
 * or too long. */
static int hex_decode(const char *s, size_t len, unsigned char *out, size_t cap)
{
	if (len % 2 != 0 || len / 2 > cap)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi * 16 + lo);
	}
	return (int)(len / 2);
}

/* The value of query parameter name (not decoded), its length in *len;
 * NULL when absent. */
static const char *query_param(const char *query, const char *name, size_t *len)
{
	size_t nlen = strlen(name);

	while (query != NULL && *query != '\0') {
		const char *amp = strchr(query, '&');
		size_t plen = amp ? (size_t)(amp - query) : strlen(query);

		if (plen > nlen && memcmp(query, name, nlen) == 0 && query[nlen] == '=') {
			*len = plen - nlen - 1;
			return query + nlen + 1;
		}
		query = amp ? amp + 1 : NULL;
	}
	return NULL;
}

/* Copies the value of the first request header called name (as received,
 * surrounding blanks removed) from the raw capture into out. Returns its
 * length, -1 if absent or too long. */
static int raw_header(struct conn *c, const char *name, unsigned char *out, size_t cap)
{
	struct evbuffer_ptr end = evbuffer_search(c->raw, "\r\n\r\n", 4, NULL);
	size_t nlen = strlen(name);
	const char *head, *line, *stop;

	if (end.pos < 0)
		return -1;
	head = (const char *)evbuffer_pullup(c->raw, end.pos + 2);
	if (head == NULL)
		return -1;
	stop = head + end.pos + 2;
	line = memchr(head, '\n', (size_t)(stop - head)); /* skip the request line */
	while (line != NULL && line + 1 < stop) {
		const char *l = line + 1, *eol = memchr(l, '\n', (size_t)(stop - l)), *v, *ve;

		if (eol == NULL)
			break;
		if ((size_t)(eol - l) > nlen && strncasecmp(l, name, nlen) == 0 && l[nlen] == ':') {
			v = l + nlen + 1;
			ve = eol;
			if (ve > v && ve[-1] == '\r')
				ve--;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if ((size_t)(ve - v) > cap)
				return -1;
			memcpy(out, v, (size_t)(ve - v));
			return (int)(ve - v);
		}
		line = eol;
	}
	return -1;
}

/* The value /reflect and /ws?x= work on: x=HEX or h=NAME. Returns its
 * length, -1 if neither is given or it is malformed. */
static int reflect_value(struct conn *c, const char *query, unsigned char *out, size_t cap)
{
	const char *v;
	size_t len;
	char name[128];

	if ((v = query_param(query, "x", &len)) != NULL)
		return hex_decode(v, len, out, cap);
	if ((v = query_param(query, "h", &len)) != NULL) {
		if (pct_decode(v, len, name, sizeof(name)) <= 0 || !is_token(name))
			return -1;
		return raw_header(c, name, out, cap);
	}
	return -1;
}


/*
 * Bytes the peer of the TCP socket fd has received and not read yet, when
 * that peer is a socket on this host (sock_diag looks it up by its
 * address pair); -1 when that cannot be told (no sock_diag, no such
 * socket, not IPv4/IPv6).
 */
static long peer_unread(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} resp;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	long unread = -1;
	ssize_t n;
	int nl;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    me.ss_family != peer.ss_family || (me.ss_family != AF_INET && me.ss_family != AF_INET6))
		return -1;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (unsigned char)me.ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* The peer's socket: its source is our destination. */
	if (me.ss_family == AF_INET) {
		const struct sockaddr_in *m4 = (const struct sockaddr_in *)&me, *p4 = (const struct sockaddr_in *)&peer;

		req.r.id.idiag_sport = p4->sin_port;
		req.r.id.idiag_dport = m4->sin_port;
		memcpy(req.r.id.idiag_src, &p4->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &m4->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *m6 = (const struct sockaddr_in6 *)&me, *p6 = (const struct sockaddr_in6 *)&peer;

		req.r.id.idiag_sport = p6->sin6_port;
		req.r.id.idiag_dport = m6->sin6_port;
		memcpy(req.r.id.idiag_src, &p6->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &m6->sin6_addr, 16);
	}
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) == (ssize_t)sizeof(req) &&
	    (n = recv(nl, &resp, sizeof(resp), 0)) >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) &&
	    NLMSG_OK(&resp.nlh, (unsigned)n) && resp.nlh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
		const struct inet_diag_msg *m = NLMSG_DATA(&resp.nlh);

		unread = (long)m->idiag_rqueue;
	}
	close(nl);
	return unread;
}

/* drip=read: whether the next byte may go: the last one has left our
 * output and the reader has read it (or cannot be asked, after 1 ms, or
 * has not read it for DRIP_WAIT_MS). */
static bool drip_reader_ready(struct conn *c)
{
	struct timeval now, d;
	long ms, unread;

	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
		return false;
	if (gettimeofday(&now, NULL) < 0)
		return true;
	timersub(&now, &c->drip_last, &d);
	ms = (long)d.tv_sec * 1000 + (long)d.tv_usec / 1000;
	unread = peer_unread((int)bufferevent_getfd(c->bev));
	return unread == 0 || (unread < 0 && ms >= 1) || ms >= DRIP_WAIT_MS;
}

/* only=value: how many bytes the next tick moves: one inside a value,
 * else up to and including the next value's first byte (all the rest
 * when no value follows). */
static size_t drip_values_next(const struct conn *c)
{
	for (int i = 0; i < c->drip_nspan; i++) {
		if (c->drip_off < c->drip_span[i][0])
			return c->drip_span[i][0] - c->drip_off + 1;
		if (c->drip_off < c->drip_span[i][1])
			return 1;
	}
	return evbuffer_get_length(c->drip);
}

/* only=value: records where the value (len bytes at val) appears whole in
 * the composed response c->drip (at most 4 places). */
static void drip_find_values(struct conn *c, const unsigned char *val, size_t len)
{
	struct evbuffer_ptr at;

	c->drip_nspan = 0;
	if (len == 0)
		return;
	at = evbuffer_search(c->drip, (const char *)val, len, NULL);
	while (at.pos >= 0 && c->drip_nspan < 4) {
		c->drip_span[c->drip_nspan][0] = (size_t)at.pos;
		c->drip_span[c->drip_nspan][1] = (size_t)at.pos + len;
		c->drip_nspan++;
		if (evbuffer_ptr_set(c->drip, &at, len, EVBUFFER_PTR_ADD) < 0)
			break;
		at = evbuffer_search(c->drip, (const char *)val, len, &at);
	}
}

/* /reflect?drip=MS: moves one byte of the pending response to the output
 * per tick (drip=read: per tick at which the reader has read the last
 * one); after the last one the response is finished. */
static void drip_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t k = 1;

	(void)fd;
	(void)what;
	if (c->drip_read && !c->drip_all) {
		struct timeval now, d;

		if (!drip_reader_ready(c))
			return;
		(void)gettimeofday(&now, NULL);
		timersub(&now, &c->drip_last, &d);
		/* A pause this long is not the reader's (DRIP_WAIT_MS caps
		 * that) but ours: this process was not run. Said on stderr,
		 * so a test can tell a reader that released held bytes after
		 * a real pause of the upstream from one that cut a value
		 * without one. */
		if ((long)d.tv_sec * 1000 + (long)d.tv_usec / 1000 >= DRIP_STALL_MS)
			fprintf(stderr, "pv-upstream: conn %lu: drip paused %ld ms between two bytes\n", c->id,
				(long)d.tv_sec * 1000 + (long)d.tv_usec / 1000);
		c->drip_last = now;
	}
	if (c->drip_all)
		k = evbuffer_get_length(c->drip);
	else if (c->drip_values)
		k = drip_values_next(c);
	if (evbuffer_remove_buffer(c->drip, out, k) != (int)k) {
		conn_free(c);
		return;
	}
	c->drip_off += k;
	if (evbuffer_get_length(c->drip) > 0)
		return;
	c->drip_all = false;
	event_del(c->drip_ev);
	finish_response(c);
	if (c->state == CS_READ_REQ)
		process_input(c);
}

/* /reflect?pause=MS: sends all of c->drip but its last tail bytes now,
 * those MS milliseconds later. */
static int start_pause(struct conn *c, unsigned ms, size_t tail)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	size_t now = evbuffer_get_length(c->drip) - tail;

	if (c->drip_ev == NULL)
		c->drip_ev = event_new(c->srv->base, -1, EV_PERSIST, drip_cb, c);
	if (c->drip_ev == NULL ||
	    evbuffer_remove_buffer(c->drip, bufferevent_get_output(c->bev), now) != (int)now ||
	    event_add(c->drip_ev, &tv) < 0)
		return -1;
	c->drip_all = true;
	c->state = CS_DRIP;
	return 0;
}

/* Starts writing c->drip (the whole response) one byte per ms, or with
 * c->drip_read, one byte per read of the reader (looked at every
 * DRIP_POLL_US). */
static int start_drip(struct conn *c, unsigned ms)
{
	struct timeval tv = { 0, c->drip_read ? DRIP_POLL_US : (suseconds_t)ms * 1000 };

	c->drip_off = 0;

	if (c->drip_ev == NULL)
		c->drip_ev = event_new(c->srv->base, -1, EV_PERSIST, drip_cb, c);
	if (c->drip_ev == NULL || event_add(c->drip_ev, &tv) < 0)
		return -1;
	c->state = CS_DRIP;
	return 0;
}

static int respond_repeat(struct conn *c, const char *arg, const char *query)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	unsigned char val[REFLECT_MAX + 1];
	char framing[64], mode[16];
	const char *slash = strchr(arg, '/'), *x;
	size_t xlen, total;
	uint64_t count;
	int n;

	if (slash == NULL || (size_t)(slash - arg) >= sizeof(mode) || parse_u64(slash + 1, &count) < 0 ||
	    (x = query_param(query, "x", &xlen)) == NULL || (n = hex_decode(x, xlen, val, REFLECT_MAX)) <= 0)
		return respond_text(c, 400, "bad /repeat request\n");
	memcpy(mode, arg, (size_t)(slash - arg));
	mode[slash - arg] = '\0';
	val[n++] = '\n';
	if (count > (64u << 20) / (unsigned)n ||
	    (strcmp(mode, "cl") != 0 && strcmp(mode, "chunked") != 0))
		return respond_text(c, 400, "bad /repeat request\n");
	total = (size_t)count * (size_t)n;
	if (strcmp(mode, "cl") == 0)
		snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", total);
	else
		snprintf(framing, sizeof(framing), "Transfer-Encoding: chunked\r\n");
	if (write_head(c, 200, "Content-Type: text/plain\r\n", framing) < 0)
		return -1;
	if (is_head(c))
		return 0;
	if (strcmp(mode, "cl") == 0) {
		for (uint64_t i = 0; i < count; i++)
			if (evbuffer_add(out, val, (size_t)n) < 0)
				return -1;
		return 0;
	}
	{
		struct evbuffer *body = evbuffer_new();
		int rc = 0;

		if (body == NULL)
			return -1;
		for (uint64_t i = 0; i < count && rc == 0; i++)
			rc = evbuffer_add(body, val, (size_t)n);
		while (rc == 0 && evbuffer_get_length(body) > 0) {
			size_t k = evbuffer_get_length(body) < 997 ? evbuffer_get_length(body) : 997;

			if (evbuffer_add_printf(out, "%zx\r\n", k) < 0 ||
			    evbuffer_remove_buffer(body, out, k) != (int)k || evbuffer_add(out, "\r\n", 2) < 0)
				rc = -1;
		}
		evbuffer_free(body);
		if (rc < 0 || evbuffer_add(out, "0\r\n\r\n", 5) < 0)
			return -1;
	}
	return 0;
}

static int respond_reflect(struct conn *c, const char *mode, const char *query)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	unsigned char val[REFLECT_MAX];
	char extra[REFLECT_MAX + 64], framing[64];
	int n = reflect_value(c, query, val, sizeof(val));
	size_t len, dlen, olen;
	const char *d = query_param(query, "drip", &dlen), *only;
	unsigned drip_ms = 0, pause_ms = 0;
	bool trailer = strcmp(mode, "trailer") == 0;
	size_t clen;
	const char *cs = query_param(query, "case", &clen);
	bool nohead = query_param(query, "nohead", &olen) != NULL;

	/* &case=upper|lower|mixed: the value echoed with its case changed
	 * (mixed: every other letter upper), as a host that folds what it
	 * echoes ("INVALID TOKEN: ..."); &nohead=1: not in a header, the
	 * body only. */
	for (int i = 0; cs != NULL && i < n; i++) {
		if (clen == 5 && memcmp(cs, "upper", 5) == 0)
			val[i] = (unsigned char)toupper(val[i]);
		else if (clen == 5 && memcmp(cs, "lower", 5) == 0)
			val[i] = (unsigned char)tolower(val[i]);
		else if (clen == 5 && memcmp(cs, "mixed", 5) == 0)
			val[i] = (unsigned char)(i % 2 == 0 ? toupper(val[i]) : tolower(val[i]));
	}
	if (d == NULL && (d = query_param(query, "pause", &dlen)) != NULL) {
		if (strcmp(mode, "cl") != 0 && strcmp(mode, "close") != 0)
			return respond_text(c, 400, "pause needs mode cl or close\n");
		pause_ms = 1;
	}
	if (d != NULL) {
		char num[8];
		uint64_t ms;

		if (dlen == 0 || dlen >= sizeof(num))
			return respond_text(c, 400, "bad drip or pause\n");
		memcpy(num, d, dlen);
		num[dlen] = '\0';
		c->drip_read = !pause_ms && strcmp(num, "read") == 0;
		only = query_param(query, "only", &olen);
		c->drip_values = !pause_ms && !c->drip_read && only != NULL && olen == 5 &&
				 memcmp(only, "value", 5) == 0;
		c->drip_nspan = 0;
		if (c->drip_read) {
			ms = 1;
			(void)gettimeofday(&c->drip_last, NULL);
		} else if (parse_u64(num, &ms) < 0 || ms < 1 || ms > (pause_ms ? 10000 : 100)) {
			return respond_text(c, 400, "bad drip or pause\n");
		}
		if (pause_ms)
			pause_ms = (unsigned)ms;
		else
			drip_ms = (unsigned)ms;
		/* Compose the response aside; drip_cb moves it out (the output
		 * buffer of a bufferevent cannot be drained by us). */
		if (c->drip == NULL && (c->drip = evbuffer_new()) == NULL)
			return -1;
		out = c->drip;
	}
	if (n < 0 || memchr(val, '\r', (size_t)n) != NULL || memchr(val, '\n', (size_t)n) != NULL ||
	    memchr(val, '\0', (size_t)n) != NULL ||
	    (strcmp(mode, "cl") != 0 && strcmp(mode, "chunked") != 0 && strcmp(mode, "close") != 0 &&
	     !trailer))
		return respond_text(c, 400, "bad /reflect request\n");
	len = (size_t)n;
	if (nohead)
		snprintf(extra, sizeof(extra), "Content-Type: text/plain\r\n%s",
			 trailer ? "Trailer: X-Reflect-Trailer\r\n" : "");
	else
		snprintf(extra, sizeof(extra), "Content-Type: text/plain\r\nX-Reflect: %.*s\r\n%s", n,
			 (const char *)val, trailer ? "Trailer: X-Reflect-Trailer\r\n" : "");
	if (strcmp(mode, "cl") == 0) {
		snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", 8 + len + 1);
	} else if (strcmp(mode, "chunked") == 0 || trailer) {
		snprintf(framing, sizeof(framing), "Transfer-Encoding: chunked\r\n");
	} else {
		c->close_after = true; /* write_head then says Connection: close */
		framing[0] = '\0';
	}
	if (write_head_to(c, out, 200, extra, framing) < 0)
		return -1;
	if (is_head(c))
		return drip_ms || pause_ms ? start_drip(c, drip_ms ? drip_ms : 1) : 0;
	if (trailer) {
		if (evbuffer_add_printf(out, "%zx\r\nreflect:%.*s\n\r\n0\r\nX-Reflect-Trailer: %.*s\r\n\r\n",
					8 + len + 1, n, (const char *)val, n, (const char *)val) < 0)
			return -1;
		if (c->drip_values)
			drip_find_values(c, val, len);
		return drip_ms ? start_drip(c, drip_ms) : 0;
	}
	if (strcmp(mode, "chunked") == 0) {
		if (evbuffer_add(out, "8\r\nreflect:\r\n", 13) < 0)
			return -1;
		for (size_t i = 0; i < len; i++)
			if (evbuffer_add_printf(out, "1\r\n%c\r\n", val[i]) < 0)
				return -1;
		if (evbuffer_add(out, "1\r\n\n\r\n0\r\n\r\n", 11) < 0)
			return -1;
		if (c->drip_values)
			drip_find_values(c, val, len);
		return drip_ms ? start_drip(c, drip_ms) : 0;
	}
	if (evbuffer_add(out, "reflect:", 8) < 0 || evbuffer_add(out, val, len) < 0 ||
	    evbuffer_add(out, "\n", 1) < 0)
		return -1;
	/* A close-delimited body over plain HTTP ends in 512 bytes of
	 * padding: a FIN cannot be told from a cut, and the proxy drops the
	 * last bytes of a masked body that ends so (round 32); the values
	 * stay in the part that goes. Over TLS the close_notify ends it. */
	if (c->close_after && bufferevent_openssl_get_ssl(c->bev) == NULL &&
	    (evbuffer_add(out, "pad:", 4) < 0 || evbuffer_add_printf(out, "%0512d\n", 0) < 0))
		return -1;
	if (pause_ms)
		return start_pause(c, pause_ms, len - len / 2 + 1);
	if (c->drip_values)
		drip_find_values(c, val, len);
	return drip_ms ? start_drip(c, drip_ms) : 0;
}

/* ------------------------------------------------------------ dispatch */

/* The /delay timer: answer now, then parse any pipelined input. */
static void delay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char body[48];

	(void)fd;
	(void)what;
	snprintf(body, sizeof(body), "delayed %u\n", c->delay_ms);
	if (respond_text(c, 200, body) < 0) {
		conn_free(c);
		return;
	}
	finish_response(c);
	if (c->state == CS_READ_REQ)
		process_input(c);
}

/* Whether the request has Authorization: Basic for the --git-auth user
 * (and, when --git-auth names one, exactly its password). */
static bool basic_user_ok(struct conn *c)
{
	unsigned char v[1024], dec[1024];
	int n = raw_header(c, "Authorization", v, sizeof(v) - 1), d;
	const char *want = c->srv->git_auth;
	size_t ulen = strlen(c->srv->git_user);

	if (n < 6 || strncasecmp((const char *)v, "Basic ", 6) != 0 || (n - 6) % 4 != 0)
		return false;
	d = EVP_DecodeBlock(dec, v + 6, n - 6);
	if (d < 0)
		return false;
	/* EVP_DecodeBlock counts the padding as decoded zero bytes. */
	if (n - 6 >= 4 && v[n - 1] == '=')
		d--;
	if (n - 6 >= 4 && v[n - 2] == '=')
		d--;
	if (strchr(want, ':') != NULL)
		return (size_t)d == strlen(want) && memcmp(dec, want, (size_t)d) == 0;
	return d > (int)ulen && memcmp(dec, want, ulen) == 0 && dec[ulen] == ':';
}

/* The Content-Type of a --files file, from its name. */
static const char *file_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".html", "text/html"},
		{".json", "application/json"},
		{".txt", "text/plain"},
		{".tgz", "application/octet-stream"},
		{".whl", "application/octet-stream"},
	};
	size_t nl = strlen(name);

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t el = strlen(types[i].ext);

		if (nl > el && strcmp(name + nl - el, types[i].ext) == 0)
			return types[i].type;
	}
	return "application/octet-stream";
}

/* Opens root + rel (rel starts with '/') without following a symbolic
 * link in any component below root. Returns an fd, or -1. */
static int open_below(const char *root, const char *rel)
{
	char seg[4096];
	int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	const char *p = rel;

	if (dfd < 0)
		return -1;
	while (*p == '/')
		p++;
	if (*p == '\0')
		return dfd;
	for (;;) {
		const char *e = strchr(p, '/');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p);

		if (len == 0 || len >= sizeof(seg)) {
			close(dfd);
			return -1;
		}
		memcpy(seg, p, len);
		seg[len] = '\0';
		fd = openat(dfd, seg, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		if (fd < 0 || e == NULL || e[1] == '\0')
			return fd;
		dfd = fd;
		p = e + 1;
	}
}

/* --files: answers a GET or HEAD of path from the directory, or 404.
 * Returns 0, or -1 if the response could not be queued. */
static int respond_file(struct conn *c, const char *path)
{
	static const char *const index_names[] = {"index.html", "index.json"};
	const char *name = path;
	char extra[128];
	struct stat st;
	unsigned char *buf;
	ssize_t got;
	size_t off = 0;
	int fd, rc, m = llhttp_get_method(&c->parser);

	if ((m != HTTP_GET && m != HTTP_HEAD) || path[0] != '/' || strstr(path, "//") != NULL ||
	    strchr(path, '%') != NULL || strchr(path, '\\') != NULL || strstr(path, "/../") != NULL ||
	    strstr(path, "/./") != NULL || (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0) ||
	    (strlen(path) >= 2 && strcmp(path + strlen(path) - 2, "/.") == 0))
		return respond_text(c, 404, "not found\n");
	fd = open_below(c->srv->files_root, path);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		int dfd = fd;

		fd = -1;
		for (size_t i = 0; i < 2 && fd < 0; i++) {
			fd = openat(dfd, index_names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			name = index_names[i];
		}
		close(dfd);
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX) {
		if (fd >= 0)
			close(fd);
		return respond_text(c, 404, "not found\n");
	}
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		close(fd);
		return -1;
	}
	while (off < (size_t)st.st_size) {
		got = read(fd, buf + off, (size_t)st.st_size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	close(fd);
	if (off != (size_t)st.st_size) {
		free(buf);
		return respond_text(c, 500, "cannot read the file\n");
	}
	snprintf(extra, sizeof(extra), "Content-Type: %s\r\n", file_type(name));
	rc = respond(c, 200, extra, buf, off);
	free(buf);
	return rc;
}

/* Handles one complete request. Returns 0, or -1 if the response could
 * not be queued (the caller frees the connection). */
static int dispatch(struct conn *c)
{
	char path[8192];
	const char *query;
	char *q;

	c->close_after = !llhttp_should_keep_alive(&c->parser);
	memcpy(path, c->url, c->url_len);
	path[c->url_len] = '\0';
	q = strchr(path, '?');
	query = NULL;
	if (q != NULL) {
		*q = '\0';
		query = q + 1;
	}
	record_flush(c, true, false);
	/* Received in full and recorded: nothing "incomplete" to record if the
	 * connection ends while we answer. raw stays for /echo until the next
	 * request begins. */
	c->in_request = false;

	if (strcmp(path, "/ws") == 0) {
		unsigned char push[REFLECT_MAX];
		int n = 0;

		if (query != NULL && query_param(query, "x", &(size_t){ 0 }) != NULL &&
		    (n = reflect_value(c, query, push, sizeof(push))) < 0) {
			c->close_after = true;
			return respond_text(c, 400, "bad /ws?x= value\n");
		}
		{
			const char *v;
			size_t vl;
			size_t split = query != NULL && (v = query_param(query, "split", &vl)) != NULL
					       ? (size_t)strtoul(v, NULL, 10) : 0;
			unsigned pongs = query != NULL && (v = query_param(query, "pongs", &vl)) != NULL
						 ? (unsigned)strtoul(v, NULL, 10) : 0;

			unsigned op = query != NULL && (v = query_param(query, "op", &vl)) != NULL
					      ? (unsigned)strtoul(v, NULL, 16) & 0xff : 0;

			if (pongs > 100000)
				pongs = 100000;
			if (op != 0 && n > 125)
				op = 0;
			return start_ws(c, push, (size_t)n,
					query != NULL && query_param(query, "rsv1", &(size_t){ 0 }) != NULL, split, pongs, op);
		}
	}
	if (llhttp_get_upgrade(&c->parser) && strncmp(path, "/rawhex/", 8) != 0) {
		/* An upgrade we do not speak: answer and close (/rawhex/
		 * answers any request with its bytes, a 101 among them). */
		c->close_after = true;
		if (respond_text(c, 404, "no such upgrade\n") < 0)
			return -1;
		finish_response(c);
		return 0;
	}
	if (strncmp(path, "/git/", 5) == 0 && c->srv->git_auth != NULL && !basic_user_ok(c)) {
		if (respond(c, 401, "WWW-Authenticate: Basic realm=\"pv-upstream\"\r\n"
				    "Content-Type: text/plain\r\n",
			    "authentication required\n", 24) < 0)
			return -1;
	} else if (strncmp(path, "/git/", 5) == 0) {
		if (start_cgi(c, path + 4, query) < 0)
			return -1;
		if (c->state == CS_CGI)
			return 0;
	} else if (strcmp(path, "/hello") == 0) {
		if (respond_text(c, 200, "hello\n") < 0)
			return -1;
	} else if (strcmp(path, "/tls-resumed") == 0) {
		SSL *ssl = bufferevent_openssl_get_ssl(c->bev);

		if (respond_text(c, 200, ssl == NULL ? "plain\n" : SSL_session_reused(ssl) ? "resumed\n" : "full\n") < 0)
			return -1;
	} else if (strncmp(path, "/bytes/", 7) == 0) {
		if (start_stream(c, path + 7, false) < 0)
			return -1;
		return 0; /* stream_refill finishes it */
	} else if (strncmp(path, "/chunked/", 9) == 0) {
		if (start_stream(c, path + 9, true) < 0)
			return -1;
		return 0;
	} else if (strcmp(path, "/echo") == 0) {
		if (respond_echo(c) < 0)
			return -1;
	} else if (strncmp(path, "/status/", 8) == 0) {
		uint64_t st;
		char body[32];

		if (parse_u64(path + 8, &st) < 0 || st < 200 || st > 599) {
			if (respond_text(c, 400, "bad status\n") < 0)
				return -1;
		} else {
			snprintf(body, sizeof(body), "status %u\n", (unsigned)st);
			if (respond_text(c, (int)st, body) < 0)
				return -1;
		}
	} else if (strcmp(path, "/close") == 0) {
		c->close_after = true;
		if (respond_text(c, 200, "bye\n") < 0)
			return -1;
	} else if (strcmp(path, "/headers") == 0) {
		if (respond_headers(c, query) < 0)
			return -1;
	} else if (strncmp(path, "/rawhex/", 8) == 0) {
		const char *h = path + 8;
		size_t n = strlen(h);
		unsigned char raw[32768];

		if (n % 2 != 0 || n / 2 > sizeof(raw)) {
			if (respond_text(c, 400, "bad hex\n") < 0)
				return -1;
		} else {
			for (size_t i = 0; i < n / 2; i++) {
				int hi = hexval((unsigned char)h[2 * i]);
				int lo = hexval((unsigned char)h[2 * i + 1]);

				if (hi < 0 || lo < 0) {
					c->close_after = true;
					if (respond_text(c, 400, "bad hex\n") < 0)
						return -1;
					finish_response(c);
					return 0;
				}
				raw[i] = (unsigned char)(hi * 16 + lo);
			}
			if (evbuffer_add(bufferevent_get_output(c->bev), raw, n / 2) < 0)
				return -1;
			c->close_after = true;
		}
	} else if (strncmp(path, "/delay/", 7) == 0) {
		uint64_t ms;
		struct timeval tv;

		if (parse_u64(path + 7, &ms) < 0 || ms > 600000) {
			if (respond_text(c, 400, "bad delay\n") < 0)
				return -1;
		} else {
			if (c->delay == NULL)
				c->delay = evtimer_new(c->srv->base, delay_cb, c);
			if (c->delay == NULL)
				return -1;
			c->delay_ms = (unsigned)ms;
			tv.tv_sec = (time_t)(ms / 1000);
			tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
			if (evtimer_add(c->delay, &tv) < 0)
				return -1;
			c->state = CS_DELAY;
			return 0;
		}
	} else if (strncmp(path, "/reflect/", 9) == 0) {
		if (respond_reflect(c, path + 9, query) < 0)
			return -1;
	} else if (strncmp(path, "/repeat/", 8) == 0) {
		if (respond_repeat(c, path + 8, query) < 0)
			return -1;
	} else if (strcmp(path, "/sink") == 0) {
		char body[64];
		size_t qlen;

		if (query_param(query, "records", &qlen) != NULL)
			snprintf(body, sizeof(body), "%llu records=%llu\n", (unsigned long long)c->body_bytes,
				 (unsigned long long)c->tls_records);
		else
			snprintf(body, sizeof(body), "%llu\n", (unsigned long long)c->body_bytes);
		if (respond_text(c, 200, body) < 0)
			return -1;
	} else if (strcmp(path, "/keyupdate") == 0) {
		char body[32];

		if (!c->ku_ok) {
			if (respond_text(c, 400, "keyupdate: TLS 1.3 and ?after=MS&stall=MS (after <= stall <= 10000)\n") < 0)
				return -1;
		} else {
			/* The body came before the KeyUpdate's time: it goes
			 * now, before the answer. */
			if (!c->ku_sent) {
				(void)evtimer_del(c->ku_ev);
				key_update_send(c);
				if (c->ku_stall_ms > 0)
					(void)bufferevent_enable(c->bev, EV_READ);
			}
			c->ku_ok = false;
			snprintf(body, sizeof(body), "%llu\n", (unsigned long long)c->body_bytes);
			if (respond_text(c, 200, body) < 0)
				return -1;
		}
	} else if (c->srv->files_root != NULL) {
		if (respond_file(c, path) < 0)
			return -1;
	} else {
		if (respond_text(c, 404, "not found\n") < 0)
			return -1;
	}
	if (c->state == CS_READ_REQ)
		finish_response(c);
	return 0;
}

/* ------------------------------------------------------------ llhttp */

/* OpenSSL's message callback: counts the records read (/sink?records). */
static void count_records(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
			  void *arg)
{
	struct conn *c = arg;

	(void)version;
	(void)buf;
	(void)len;
	(void)ssl;
	if (!write_p && content_type == SSL3_RT_HEADER)
		c->tls_records++;
}

static int on_message_begin(llhttp_t *p)
{
	struct conn *c = p->data;

	c->nreq++;
	c->in_request = true;
	c->complete = false;
	c->too_large = false;
	c->head_bytes = 0;
	c->url_len = 0;
	c->hname_len = 0;
	c->hval_len = 0;
	c->ws_key[0] = '\0';
	c->content_type[0] = '\0';
	c->content_encoding[0] = '\0';
	c->git_protocol[0] = '\0';
	c->expect_continue = false;
	c->body_bytes = 0;
	c->tls_records = 0;
	c->keep_body = false;
	evbuffer_drain(c->body, evbuffer_get_length(c->body));
	evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
	c->raw_total = 0;
	c->raw_truncated = false;
	c->rec_header_written = false;
	return 0;
}

static int head_add(struct conn *c, size_t len)
{
	c->head_bytes += len;
	if (c->head_bytes > HEAD_MAX) {
		c->too_large = true;
		llhttp_set_error_reason(&c->parser, "request head too large");
		return HPE_USER;
	}
	return 0;
}

/* Appends to a bounded buffer, silently truncating (the limit on the whole
 * head is enforced by head_add). */
static void bounded_add(char *buf, size_t *len, size_t cap, const char *at, size_t n)
{
	if (*len + n > cap - 1)
		n = cap - 1 - *len;
	memcpy(buf + *len, at, n);
	*len += n;
	buf[*len] = '\0';
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (head_add(c, len) != 0)
		return HPE_USER;
	if (c->url_len + len > sizeof(c->url) - 1) {
		c->too_large = true;
		llhttp_set_error_reason(p, "URL too long");
		return HPE_USER;
	}
	bounded_add(c->url, &c->url_len, sizeof(c->url), at, len);
	return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (head_add(c, len) != 0)
		return HPE_USER;
	bounded_add(c->hname, &c->hname_len, sizeof(c->hname), at, len);
	return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (head_add(c, len) != 0)
		return HPE_USER;
	bounded_add(c->hval, &c->hval_len, sizeof(c->hval), at, len);
	return 0;
}

static void copy_value(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n > cap - 1)
		n = cap - 1; /* truncated: these values are only hints */
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int on_header_value_complete(llhttp_t *p)
{
	struct conn *c = p->data;

	if (strcasecmp(c->hname, "sec-websocket-key") == 0)
		copy_value(c->ws_key, sizeof(c->ws_key), c->hval);
	else if (strcasecmp(c->hname, "expect") == 0 && strcasecmp(c->hval, "100-continue") == 0)
		c->expect_continue = true;
	else if (strcasecmp(c->hname, "content-type") == 0)
		copy_value(c->content_type, sizeof(c->content_type), c->hval);
	else if (strcasecmp(c->hname, "content-encoding") == 0)
		copy_value(c->content_encoding, sizeof(c->content_encoding), c->hval);
	else if (strcasecmp(c->hname, "git-protocol") == 0)
		copy_value(c->git_protocol, sizeof(c->git_protocol), c->hval);
	c->hname_len = 0;
	c->hval_len = 0;
	c->hname[0] = '\0';
	c->hval[0] = '\0';
	return 0;
}

/* /keyupdate: sends the KeyUpdate (SSL_do_handshake() writes it now). */
static void key_update_send(struct conn *c)
{
	SSL *ssl = bufferevent_openssl_get_ssl(c->bev);

	c->ku_sent = true;
	if (ssl == NULL || SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) != 1) {
		fprintf(stderr, "pv-upstream: conn %lu: SSL_key_update failed\n", c->id);
		ERR_clear_error();
		return;
	}
	if (SSL_do_handshake(ssl) != 1)
		ERR_clear_error(); /* a full socket: it goes with the next write */
}

static void key_update_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct timeval tv = {0, 0};

	(void)fd;
	(void)what;
	if (!c->ku_sent) {
		key_update_send(c);
		if (c->ku_stall_ms > c->ku_after_ms) {
			unsigned ms = c->ku_stall_ms - c->ku_after_ms;

			tv.tv_sec = (time_t)(ms / 1000);
			tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		}
		if (c->ku_stall_ms > 0 && evtimer_add(c->ku_ev, &tv) == 0)
			return;
	}
	if (c->ku_stall_ms > 0)
		(void)bufferevent_enable(c->bev, EV_READ);
}

/* /keyupdate?after=MS&stall=MS at the end of the head: 0, or -1 when the
 * query is bad or this is not TLS 1.3 (the request is then answered 400
 * by dispatch()). */
static int key_update_start(struct conn *c)
{
	SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
	const char *q = strchr(c->url, '?');
	unsigned long after = 0, stall = 0;
	struct timeval tv;

	c->ku_ok = false; /* dispatch() answers 400 unless started below */
	c->ku_sent = true;
	if (ssl == NULL || SSL_version(ssl) != TLS1_3_VERSION)
		return -1;
	if (q != NULL && sscanf(q, "?after=%lu&stall=%lu", &after, &stall) < 1)
		return -1;
	if (after > 10000 || stall > 10000 || (stall > 0 && after > stall))
		return -1;
	if (c->ku_ev == NULL)
		c->ku_ev = evtimer_new(c->srv->base, key_update_cb, c);
	if (c->ku_ev == NULL)
		return -1;
	c->ku_ok = true;
	c->ku_sent = false;
	c->ku_after_ms = (unsigned)after;
	c->ku_stall_ms = (unsigned)stall;
	if (stall > 0)
		(void)bufferevent_disable(c->bev, EV_READ);
	tv.tv_sec = (time_t)(after / 1000);
	tv.tv_usec = (suseconds_t)(after % 1000) * 1000;
	return evtimer_add(c->ku_ev, &tv) == 0 ? 0 : -1;
}

static int on_headers_complete(llhttp_t *p)
{
	struct conn *c = p->data;

	if (strncmp(c->url, "/keyupdate", 10) == 0 && (c->url[10] == '\0' || c->url[10] == '?'))
		(void)key_update_start(c);
	c->keep_body = strncmp(c->url, "/git/", 5) == 0;
	if (c->expect_continue &&
	    evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n") < 0)
		return -1;
	return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	c->body_bytes += len;
	if (c->keep_body) {
		if (evbuffer_get_length(c->body) + len > CGI_BODY_MAX) {
			llhttp_set_error_reason(p, "body too large for CGI");
			return HPE_USER;
		}
		if (evbuffer_add(c->body, at, len) < 0)
			return HPE_USER;
	}
	return 0;
}

static int on_message_complete(llhttp_t *p)
{
	struct conn *c = p->data;

	c->complete = true;
	return HPE_PAUSED;
}

/* ------------------------------------------------------------ connection */

static void conn_free(struct conn *c)
{
	struct server *srv = c->srv;

	if (c->in_request && (evbuffer_get_length(c->raw) > 0 || c->raw_total > 0))
		record_flush(c, false, true);
	cgi_free(c->cgi);
	if (c->delay != NULL)
		event_free(c->delay);
	if (c->ku_ev != NULL)
		event_free(c->ku_ev);
	if (c->drip_ev != NULL)
		event_free(c->drip_ev);
	if (c->drip != NULL)
		evbuffer_free(c->drip);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	srv->nconns--;
	bufferevent_free(c->bev);
	evbuffer_free(c->raw);
	evbuffer_free(c->body);
	free(c);
}

/* A request that cannot be parsed: 400 (or 431) and close. */
static int bad_request(struct conn *c, enum llhttp_errno e)
{
	fprintf(stderr, "pv-upstream: conn %lu req %lu: %s (%s)\n", c->id, c->nreq,
		llhttp_errno_name(e), llhttp_get_error_reason(&c->parser));
	record_flush(c, false, true);
	c->in_request = false;
	c->close_after = true;
	if (respond_text(c, c->too_large ? 431 : 400,
			 c->too_large ? "request head too large\n" : "bad request\n") < 0) {
		conn_free(c);
		return -1;
	}
	finish_response(c);
	return 0;
}

/* Parses and answers buffered requests while the connection reads
 * requests. Returns -1 if c was freed. */
static int process_input(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	while (c->state == CS_READ_REQ && evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		enum llhttp_errno e;
		size_t used;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		e = llhttp_execute(&c->parser, v.iov_base, v.iov_len);
		used = v.iov_len;
		if (e == HPE_PAUSED) {
			used = (size_t)(llhttp_get_error_pos(&c->parser) - (const char *)v.iov_base);
		} else if (e != HPE_OK) {
			capture(c, v.iov_base, v.iov_len);
			evbuffer_drain(in, v.iov_len);
			return bad_request(c, e);
		}
		capture(c, v.iov_base, used);
		evbuffer_drain(in, used);
		if (e == HPE_PAUSED) {
			if (!c->complete) {
				fprintf(stderr, "pv-upstream: conn %lu: parser paused unexpectedly\n",
					c->id);
				conn_free(c);
				return -1;
			}
			c->complete = false;
			if (dispatch(c) < 0) {
				conn_free(c);
				return -1;
			}
		}
	}
	if (c->state == CS_WS)
		return ws_process(c);
	return 0;
}

static void conn_readcb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	switch (c->state) {
	case CS_READ_REQ:
	case CS_WS:
		process_input(c);
		break;
	case CS_STREAM:
	case CS_CGI:
	case CS_FLUSH_CLOSE:
	case CS_DELAY:
	case CS_DRIP:
		/* Pipelined input waits until the current response is out; the
		 * read high watermark bounds it. */
		break;
	}
}

static void conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	switch (c->state) {
	case CS_STREAM:
		if (stream_refill(c) < 0) {
			conn_free(c);
			return;
		}
		if (c->state == CS_READ_REQ)
			process_input(c);
		break;
	case CS_FLUSH_CLOSE:
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
			/* A TLS close ends with close_notify, as a server's
			 * graceful close does: a close-delimited body then
			 * ended, not a cut (the proxy drops a cut's last bytes). */
			SSL *ssl = bufferevent_openssl_get_ssl(bev);

			if (ssl != NULL)
				(void)SSL_shutdown(ssl);
			conn_free(c);
		}
		break;
	case CS_CGI:
		if (c->cgi != NULL && !c->cgi->eof &&
		    evbuffer_get_length(bufferevent_get_output(bev)) <= STREAM_HIGH / 2)
			if (bufferevent_enable(c->cgi->bev, EV_READ) < 0)
				conn_free(c);
		break;
	case CS_READ_REQ:
	case CS_WS:
	case CS_DELAY:
	case CS_DRIP:
		break;
	}
}

static void conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR) {
		unsigned long e;

		while ((e = bufferevent_get_openssl_error(c->bev)) != 0) {
			char buf[256];

			if (ERR_GET_LIB(e) == 0)
				continue; /* libevent's errno marker, not OpenSSL's */
			ERR_error_string_n(e, buf, sizeof(buf));
			fprintf(stderr, "pv-upstream: conn %lu: TLS: %s\n", c->id, buf);
		}
		conn_free(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* The client finished sending. A response being streamed still
		 * goes out (write errors end it); otherwise we are done. */
		if (c->state == CS_STREAM || c->state == CS_CGI || c->state == CS_DELAY ||
		    c->state == CS_DRIP ||
		    (c->state == CS_FLUSH_CLOSE &&
		     evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)) {
			c->close_after = true;
			return;
		}
		conn_free(c);
	}
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char ours[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, ours, sizeof(ours) - 1, in,
				  inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	return SSL_TLSEXT_ERR_OK;
}

static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	struct server *srv = arg;
	struct conn *c;
	int one = 1;

	(void)lis;
	(void)sa;
	(void)salen;
	if (srv->nconns >= MAX_CONNS) {
		fprintf(stderr, "pv-upstream: too many connections\n");
		evutil_closesocket(fd);
		return;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		fprintf(stderr, "pv-upstream: TCP_NODELAY: %s\n", strerror(errno));
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		return;
	}
	c->srv = srv;
	c->raw = evbuffer_new();
	c->body = evbuffer_new();
	if (srv->ssl_ctx != NULL) {
		SSL *ssl = SSL_new(srv->ssl_ctx);

		if (ssl != NULL) {
			SSL_set_msg_callback(ssl, count_records);
			SSL_set_msg_callback_arg(ssl, c);
		}
		if (ssl != NULL)
			c->bev = bufferevent_openssl_socket_new(srv->base, fd, ssl,
								BUFFEREVENT_SSL_ACCEPTING,
								BEV_OPT_CLOSE_ON_FREE);
		if (c->bev == NULL && ssl != NULL)
			SSL_free(ssl);
		if (c->bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	} else {
		c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	}
	if (c->bev == NULL || c->raw == NULL || c->body == NULL) {
		fprintf(stderr, "pv-upstream: cannot set up a connection\n");
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			evutil_closesocket(fd);
		if (c->raw != NULL)
			evbuffer_free(c->raw);
		if (c->body != NULL)
			evbuffer_free(c->body);
		free(c);
		return;
	}
	c->id = ++srv->next_conn;
	c->state = CS_READ_REQ;
	llhttp_init(&c->parser, HTTP_REQUEST, &srv->settings);
	c->parser.data = c;
	c->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	bufferevent_setcb(c->bev, conn_readcb, conn_writecb, conn_eventcb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, INPUT_HIGH);
	bufferevent_setwatermark(c->bev, EV_WRITE, STREAM_HIGH / 2, 0);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) < 0)
		conn_free(c);
}

/* ------------------------------------------------------------ main */

static void stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct server *srv = arg;

	(void)sig;
	(void)what;
	event_base_loopbreak(srv->base);
}

static void chld_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static SSL_CTX *make_ssl_ctx(const char *dir, const char *name)
{
	char cert[4096], key[4096];
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL)
		return NULL;
	snprintf(cert, sizeof(cert), "%s/%s.pem", dir, name);
	snprintf(key, sizeof(key), "%s/%s.key", dir, name);
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		ERR_print_errors_fp(stderr);
		fprintf(stderr, "pv-upstream: cannot load %s / %s\n", cert, key);
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	/* A client closing without close_notify is an EOF, not an error. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	return ctx;
}

static void usage(void)
{
	fprintf(stderr, "usage: pv-upstream [--listen 127.0.0.1:0] [--tls CERTDIR "
			"[--cert-name NAME]] [--record FILE] [--git-root DIR [--git-auth USER[:PASSWORD]]]\n"
			"                   [--files DIR]\n");
}

int main(int argc, char **argv)
{
	struct server srv;
	const char *listen_s = "127.0.0.1:0", *tls_dir = NULL, *cert_name = "server";
	const char *record_path = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	struct event *ev_term = NULL, *ev_int = NULL, *ev_chld = NULL;
	char shown[INET6_ADDRSTRLEN];
	uint16_t port;
	int i, rc = 1;

	memset(&srv, 0, sizeof(srv));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		if (strcmp(a, "--listen") == 0)
			listen_s = argv[++i];
		else if (strcmp(a, "--tls") == 0)
			tls_dir = argv[++i];
		else if (strcmp(a, "--cert-name") == 0)
			cert_name = argv[++i];
		else if (strcmp(a, "--record") == 0)
			record_path = argv[++i];
		else if (strcmp(a, "--git-root") == 0)
			srv.git_root = argv[++i];
		else if (strcmp(a, "--git-auth") == 0)
			srv.git_auth = argv[++i];
		else if (strcmp(a, "--files") == 0)
			srv.files_root = argv[++i];
		else {
			usage();
			return 2;
		}
	}
	for (i = 0; i < PATTERN_CHUNK + PATTERN_PERIOD; i++)
		pattern_buf[i] = pattern_chars[i % PATTERN_PERIOD];
	if (srv.git_auth != NULL) {
		size_t ul = strcspn(srv.git_auth, ":");

		if (ul == 0 || ul >= sizeof(srv.git_user)) {
			fprintf(stderr, "pv-upstream: bad --git-auth: USER or USER:PASSWORD, USER 1-%zu bytes\n",
				sizeof(srv.git_user) - 1);
			return 2;
		}
		memcpy(srv.git_user, srv.git_auth, ul);
		srv.git_user[ul] = '\0';
	}

	if (test_parse_sockaddr(listen_s, true, &ss, &sslen) < 0) {
		fprintf(stderr, "pv-upstream: bad --listen %s: IP:PORT or [IPV6]:PORT\n", listen_s);
		return 2;
	}
	if (ss.ss_family == AF_INET ?
		    (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) != 127 :
		    !IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr)) {
		fprintf(stderr, "pv-upstream: refusing to bind a non-loopback address\n");
		return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	llhttp_settings_init(&srv.settings);
	srv.settings.on_message_begin = on_message_begin;
	srv.settings.on_url = on_url;
	srv.settings.on_header_field = on_header_field;
	srv.settings.on_header_value = on_header_value;
	srv.settings.on_header_value_complete = on_header_value_complete;
	srv.settings.on_headers_complete = on_headers_complete;
	srv.settings.on_body = on_body;
	srv.settings.on_message_complete = on_message_complete;

	if (record_path != NULL) {
		srv.record = fopen(record_path, "ab");
		if (srv.record == NULL) {
			fprintf(stderr, "pv-upstream: %s: %s\n", record_path, strerror(errno));
			return 1;
		}
	}
	if (tls_dir != NULL) {
		srv.ssl_ctx = make_ssl_ctx(tls_dir, cert_name);
		if (srv.ssl_ctx == NULL)
			goto out;
	}
	{
		/* Precise timers (timerfd): drip=read looks at its reader every
		 * DRIP_POLL_US, below epoll's millisecond. */
		struct event_config *cfg = event_config_new();

		if (cfg == NULL)
			goto out;
		if (event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) < 0) {
			event_config_free(cfg);
			goto out;
		}
		srv.base = event_base_new_with_config(cfg);
		event_config_free(cfg);
	}
	if (srv.base == NULL)
		goto out;
	srv.lis = evconnlistener_new_bind(srv.base, accept_cb, &srv,
					  LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
						  LEV_OPT_CLOSE_ON_EXEC,
					  512, (struct sockaddr *)&ss, (int)sslen);
	if (srv.lis == NULL) {
		fprintf(stderr, "pv-upstream: cannot listen on %s: %s\n", listen_s, strerror(errno));
		goto out;
	}
	ev_term = evsignal_new(srv.base, SIGTERM, stop_cb, &srv);
	ev_int = evsignal_new(srv.base, SIGINT, stop_cb, &srv);
	ev_chld = evsignal_new(srv.base, SIGCHLD, chld_cb, &srv);
	if (ev_term == NULL || ev_int == NULL || ev_chld == NULL || evsignal_add(ev_term, NULL) < 0 ||
	    evsignal_add(ev_int, NULL) < 0 || evsignal_add(ev_chld, NULL) < 0)
		goto out;

	sslen = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(srv.lis), (struct sockaddr *)&ss, &sslen) < 0)
		goto out;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		if (inet_ntop(AF_INET, &s4->sin_addr, shown, sizeof(shown)) == NULL)
			goto out;
		port = ntohs(s4->sin_port);
		printf("listening on %s:%u\n", shown, (unsigned)port);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		if (inet_ntop(AF_INET6, &s6->sin6_addr, shown, sizeof(shown)) == NULL)
			goto out;
		port = ntohs(s6->sin6_port);
		printf("listening on [%s]:%u\n", shown, (unsigned)port);
	}
	if (fflush(stdout) != 0)
		goto out;

	if (event_base_dispatch(srv.base) < 0)
		goto out;
	rc = 0;
out:
	while (srv.conns != NULL)
		conn_free(srv.conns);
	if (ev_term != NULL)
		event_free(ev_term);
	if (ev_int != NULL)
		event_free(ev_int);
	if (ev_chld != NULL)
		event_free(ev_chld);
	if (srv.lis != NULL)
		evconnlistener_free(srv.lis);
	if (srv.base != NULL) {
		/* Let freed bufferevents finish their deferred finalisation. */
		event_base_loop(srv.base, EVLOOP_NONBLOCK);
		event_base_free(srv.base);
	}
	if (srv.ssl_ctx != NULL)
		SSL_CTX_free(srv.ssl_ctx);
	if (srv.record != NULL && fclose(srv.record) != 0) {
		fprintf(stderr, "pv-upstream: closing record: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

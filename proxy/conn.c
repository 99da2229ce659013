/*
 * conn.c - one client connection: the state machine, the copy paths with
 * back-pressure, half-close and the single teardown.
 *
 *   ACCEPTED -> READ_HEAD -> DECIDE -+-> TUNNEL_CONNECTING -+-> RELAY (opaque tunnel)
 *                  ^                 |                      +-> TLS_SNIFF -+-> RELAY (opaque)
 *                  |                 |                                     +-> TLS_ACCEPT -> READ_HEAD (inside TLS)
 *                  |                 +-> UPSTREAM_CONNECTING -> RELAY (http) -+
 *                  |                 +-> (refusal) DRAINING -> CLOSED         |
 *                  +--------------- keep-alive: next request <----------------+
 *
 * Every callback only records what happened (EOF, error) and calls
 * drive(), which makes all the progress the buffers allow, state by state,
 * and finally recomputes which side may read (update_io()). The rule for
 * back-pressure is one place: a side reads only while its own input and
 * the peer's output buffer are below PASSAVANT_OUTBUF_HIGH_BYTES; the
 * peer's write callback fires at half of that (its low watermark) and
 * drives again.
 *
 * TLS termination (SPEC §5, docs/tls.md): after "200 Connection
 * Established" to a host the policy terminates, TLS_SNIFF looks at the
 * first bytes the client sends (they are still in the client input buffer,
 * untouched). A TLS ClientHello gets an SSL filter layered over the client
 * bufferevent (accepting, leaf for the CONNECT host) and one over the
 * already connected upstream (connecting, verified); both handshakes run
 * at once (TLS_ACCEPT). Then the conn is "mitm": it reads origin-form
 * requests inside the TLS stream and runs each through the same pipeline
 * as plain HTTP (decide_inner(): TRACE, Host/SNI against the CONNECT
 * target, allowedDomains, allowedMethods), relaying them on the verified
 * upstream, reused while both sides keep alive, re-dialled (with TLS)
 * when not. Anything else than TLS is tunnelled opaquely, or refused when
 * the host has a method restriction (SPEC §3.1).
 */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/bufferevent_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "audit.h"
#include "cmask.h"
#include "base/defaults.h"
#include "http1.h"
#include "log.h"
#include "target.h"
#include "tls.h"
#include "upstream.h"
#include "wbio.h"

/* How long a refused client gets to read our answer and close, once our
 * write side is shut (lingering close: closing with unread input would
 * send a RST that can destroy the response in flight). */
#define CONN_LINGER_MS 2000

/*
 * Inbound masking holds the last bytes the upstream sent (the longest
 * form of a real value minus one) at every pause, whatever they are
 * (cmask.h): in an HTTP message until more bytes or its end; in a stream
 * without a visible end (after a 101, a tunnel without TLS), after this
 * long without new bytes they go as they are. A real value that the
 * upstream of such a stream interrupts for longer than this is not
 * recognised.
 */
#define CONN_MASK_TAIL_MS 100
static const struct timeval mask_tail_tv = {CONN_MASK_TAIL_MS / 1000, (CONN_MASK_TAIL_MS % 1000) * 1000};

/* Head of a reason line; the policy refusals of SPEC §5 start with it. */
#define REASON_MAX 1024

/* What a request target that carries a real value is written as. */
#define REDACTED "/[redacted: it carries a real value]"

/* Where the connection is; changed only by conn_set_state(). */
enum conn_state {
	CONN_ACCEPTED,            /* socket taken over, nothing read */
	CONN_READ_HEAD,           /* reading a request head (first or next) */
	CONN_DECIDE,              /* head complete: policy decisions */
	CONN_TUNNEL_CONNECTING,   /* CONNECT allowed: resolving/connecting */
	CONN_TLS_SNIFF,           /* 200 sent to a terminated host: waiting for the first bytes */
	CONN_TLS_ACCEPT,          /* TLS handshakes with the client (and the upstream) running */
	CONN_UPSTREAM_CONNECTING, /* request allowed: resolving/connecting (or upstream TLS) */
	CONN_RELAY,               /* request/response or tunnel bytes flowing */
	CONN_DRAINING,            /* flushing one side before closing */
	CONN_CLOSED               /* torn down; never observed after free */
};

/* What the client's bytes are; changed only by conn_set_mode(). */
enum conn_mode {
	CONN_MODE_HTTP,       /* plain proxy requests (absolute form), one exchange at a time */
	CONN_MODE_TUNNEL,     /* after a CONNECT's 200: opaque bytes (remasked: tunnel_masked) */
	CONN_MODE_TERMINATED, /* TLS with the client terminated: origin-form requests inside */
	CONN_MODE_UPGRADED    /* after a 101: an opaque WebSocket stream (inside TLS if client.ssl) */
};

/* What a drive step asks for next. */
enum step { STEP_STOP, STEP_AGAIN, STEP_CLOSED };

/* Where one request/response exchange is. The request body may still
 * flow in the later phases (exchange.req_done says when it ended). */
enum exchange_phase {
	EX_IDLE,          /* no byte of a request head yet */
	EX_REQ_HEAD,      /* bytes of a request head have arrived */
	EX_WAIT_RESPONSE, /* decided and sent on; nothing went to the client yet */
	EX_RESPONDING,    /* a response head or an answer went to the client */
	EX_DONE           /* the response was passed on in full */
};

/* What the current request is. */
enum exchange_kind {
	EX_KIND_REQUEST, /* an HTTP request (absolute form, or origin form inside TLS) */
	EX_KIND_UPGRADE, /* a request asking for a WebSocket upgrade we relay */
	EX_KIND_CONNECT  /* a CONNECT (audited as "connect", then "tunnel") */
};

/* How the current request uses the upstream connection. */
enum exchange_upstream {
	EX_UP_FRESH,   /* a new connection (or none yet) */
	EX_UP_REUSED,  /* an idle kept-alive connection: re-sent once if it closes at once */
	EX_UP_RETRIED  /* already re-sent once on a fresh connection */
};

/* What a CONNECT to a host decided, for TLS_SNIFF. */
enum tunnel_plan {
	TUNNEL_OPAQUE,          /* relay the bytes as they are */
	TUNNEL_TERMINATE,       /* terminate TLS; relay anything else opaquely */
	TUNNEL_TERMINATE_ONLY   /* terminate TLS; refuse anything else (method rule, SPEC §3.1) */
};

/*
 * One request and its response on a connection; exchange_reset() makes a
 * new one (keep-alive, a new TLS stream). The booleans are independent of
 * the phase and of each other: the request body runs beside the response,
 * and masking is decided per direction.
 */
struct exchange {
	enum exchange_phase phase;  /** how far the exchange went */
	enum exchange_kind kind;    /** request, WebSocket upgrade or CONNECT */
	enum exchange_upstream up_use; /** fresh, reused or retried upstream connection */
	bool req_done;              /** the request was passed on in full */
	bool client_close;          /** close the client after this response */
	bool audited;               /** the exchange has its audit line */
	bool have_target;           /** tgt was parsed for this request (inside TLS it is always the CONNECT's) */
	bool redact;                /** the request carries a real value: its target is never written anywhere */
	bool identity;              /** the request to an inject host asked for Accept-Encoding: identity */
	bool mask_req_body;         /** the request body goes through the outbound substituter */
	bool mask_resp_body;        /** the response body goes through the inbound substituter */
	int status;                 /** status sent for the request */
	struct timeval t0;          /** start of the request or tunnel */
	uint64_t bytes_up;          /** bytes passed on from the client */
	uint64_t bytes_down;        /** bytes passed on from the upstream */
};

/* A new exchange: every field back to its initial value. */
void exchange_reset(struct exchange *ex) NONNULL(1);

/* One side of the connection: its socket, TLS and parser. */
struct conn_side {
	struct bufferevent *bev;  /** socket bufferevent, NULL when not connected */
	struct ssl_st *ssl;       /** TLS on this side (bev is then the SSL filter), else NULL */
	http1_t *http;            /** client: request parser; upstream: response parser */
	char peer[64];            /** "addr:port" or "host:port" for logs */
	struct evbuffer *pending; /** head (+ body) assembled in a step, flushed after it */
	struct event *rd;         /** plain socket: our read event (sockio.c); NULL on a TLS side */
	bool reading;             /** rd is added */
	bool kicked;              /** TLS: a read was started for bytes OpenSSL holds (sockio.c) */
	bool eof;                 /** this side will send nothing more (EOF or error) */
	bool shut_wr;             /** our write side to it is shut (half-close, lingering close) */
	bool failed;              /** upstream: ended in an error, not a clean EOF */
	bool reusable;            /** upstream: may carry the next request */
	bool tls_ready;           /** upstream: TLS handshake done and verified */
};

/*
 * One client connection. The independent booleans left are each one fact
 * of their own: the slot held, the first head, the first answer inside
 * TLS, the SNI check, and the steps of a TLS close.
 */
struct conn {
	struct conn *next;          /** registry: next connection */
	struct conn **pprev;        /** registry: the pointer that points to us */
	proxy_t *px;                /** the proxy (loop, resolver, audit, slots) */
	proxy_policy_t *pol;        /** policy reference this connection decides with */
	enum conn_state state;      /** where we are; changed only by conn_set_state() */
	enum conn_mode mode;        /** what the client's bytes are; changed only by conn_set_mode() */
	struct exchange ex;         /** the current request/response */
	struct conn_side client;    /** the workload's side */
	struct conn_side up;        /** the upstream's side */
	struct event *timer;        /** head, idle, drain or linger deadline */
	upstream_req_t *dial;       /** pending resolve+connect, or NULL */
	struct target tgt;          /** target of the current request or tunnel */
	const char *rule;           /** rule of the last decision (policy or static storage) */
	enum tunnel_plan plan;      /** CONNECT: what TLS_SNIFF does with the first bytes */
	bool slot;                  /** holds one of the proxy's maxTunnels slots */
	bool first_request;         /** the first head is still awaited */
	bool answered;              /** a terminated tunnel completed its first request */
	bool tunnel_masked;         /** TUNNEL mode without TLS: inbound remasked, outbound scanned */
	bool sni_mismatch;          /** the client's SNI does not name the CONNECT host */
	bool tls_closing;           /** close_notify queued to the client (draining) */
	bool truncated;             /** a close-delimited body ended by an upstream error: no close_notify */
	bool drain_wait;            /** DRAINING: waited for the write BIO; the linger restarts when it is empty */
	char sni[POLICY_HOST_MAX + 1]; /** SNI the client sent, normalised ("" if none) */
	char up_tls_err[256];       /** why the upstream TLS handshake failed ("" if not) */
	struct event *peek_ev;      /** TLS_SNIFF: MSG_PEEK watch of the client socket, or NULL */
	char up_host[POLICY_HOST_MAX + 1]; /** host the upstream bev is connected for */
	uint16_t up_port;           /** port the upstream bev is connected for */
	struct timeval last;        /** last time bytes moved (idle timeout) */
	unsigned head_ms;           /** handshakeTimeoutMs of our policy */
	unsigned idle_ms;           /** idleTimeoutMs of our policy */
	cmask_t *mask;              /** credential masking state, or NULL (none in this session) */
	struct evbuffer *head_out;  /** the request head for the upstream, substituted, until sent */
	struct event *tail_ev;      /** masking: releases held bytes after a pause, or NULL */
	char mask_rule[POLICY_HOST_MAX + 64]; /** rule of a refusal for a real value or a sentinel */
	uint64_t drain_sent;        /** DRAINING: wbio_sent() of the client when the timer last fired */
	struct evbuffer_cb_entry *under_cb; /** DRAINING, TLS filter: under_drained_cb() on its underlying output */
};

static void drive(conn_t *c);
static int plain_reader_new(conn_t *c, struct conn_side *s);
static void plain_reader_free(struct conn_side *s);
static void up_event_cb(struct bufferevent *bev, short events, void *arg);
static void update_io(conn_t *c);
static void set_reading(struct conn_side *s, bool on);
static void client_read_cb(struct bufferevent *bev, void *arg);
static void client_write_cb(struct bufferevent *bev, void *arg);
static void client_event_cb(struct bufferevent *bev, short events, void *arg);
static int adopt_upstream_tls(conn_t *c, struct bufferevent *bev);
static void start_peek(conn_t *c);

static const char *state_name(enum conn_state s)
{
	switch (s) {
	case CONN_ACCEPTED:
		return "ACCEPTED";
	case CONN_READ_HEAD:
		return "READ_HEAD";
	case CONN_DECIDE:
		return "DECIDE";
	case CONN_TUNNEL_CONNECTING:
		return "TUNNEL_CONNECTING";
	case CONN_TLS_SNIFF:
		return "TLS_SNIFF";
	case CONN_TLS_ACCEPT:
		return "TLS_ACCEPT";
	case CONN_UPSTREAM_CONNECTING:
		return "UPSTREAM_CONNECTING";
	case CONN_RELAY:
		return "RELAY";
	case CONN_DRAINING:
		return "DRAINING";
	case CONN_CLOSED:
		return "CLOSED";
	}
	return "?";
}

/* The only place the state changes. */
static void conn_set_state(conn_t *c, enum conn_state s)
{
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_debug("conn %s: %s -> %s", c->client.peer, state_name(c->state), state_name(s));
	c->state = s;
}

static const char *mode_name(enum conn_mode m)
{
	switch (m) {
	case CONN_MODE_HTTP:
		return "HTTP";
	case CONN_MODE_TUNNEL:
		return "TUNNEL";
	case CONN_MODE_TERMINATED:
		return "TERMINATED";
	case CONN_MODE_UPGRADED:
		return "UPGRADED";
	}
	return "?";
}

/* The only place the mode changes. */
static void conn_set_mode(conn_t *c, enum conn_mode m)
{
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_debug("conn %s: mode %s -> %s", c->client.peer, mode_name(c->mode), mode_name(m));
	c->mode = m;
}

/* A new exchange: every field back to its initial value. */
void exchange_reset(struct exchange *ex)
{
	memset(ex, 0, sizeof(*ex));
	ex->phase = EX_IDLE;
	ex->kind = EX_KIND_REQUEST;
	ex->up_use = EX_UP_FRESH;
}

/* Whether TLS with the client is terminated here (mode TERMINATED, or
 * UPGRADED inside it). */
static bool terminated(const conn_t *c)
{
	return c->client.ssl != NULL;
}

/* Whether something (an answer, a response head) went to the client in
 * this exchange. */
static bool responding(const conn_t *c)
{
	return c->ex.phase >= EX_RESPONDING;
}

/* Whether tgt holds the current request's target. */
static bool have_target(const conn_t *c)
{
	return c->ex.have_target || c->mode == CONN_MODE_TERMINATED;
}

static const policy_t *pol(const conn_t *c)
{
	return proxy_policy(c->pol);
}

static int64_t ms_since(const conn_t *c, const struct timeval *t)
{
	struct timeval now;

	if (event_base_gettimeofday_cached(proxy_base(c->px), &now) < 0)
		return 0;
	return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_usec - t->tv_usec) / 1000;
}

static void touch(conn_t *c)
{
	(void)event_base_gettimeofday_cached(proxy_base(c->px), &c->last);
}

static void arm_timer(conn_t *c, unsigned ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (event_add(c->timer, &tv) < 0)
		log_warnx("conn %s: cannot arm timer", c->client.peer);
}

static struct evbuffer *in_of(struct conn_side *s)
{
	return bufferevent_get_input(s->bev);
}

static struct evbuffer *out_of(struct conn_side *s)
{
	return bufferevent_get_output(s->bev);
}

/* Moves n bytes from src to dst (chains are moved, not copies). */
static int move(struct evbuffer *src, struct evbuffer *dst, size_t n)
{
	return evbuffer_remove_buffer(src, dst, n) == (int)n ? 0 : -1;
}

/*
 * Passes the first n bytes of src to side s. When nothing is queued for s
 * they go straight to its socket: queuing them on the bufferevent would
 * make libevent arm EPOLLOUT and disarm it after the write, two epoll_ctl
 * calls per message, a quarter of the proxy's syscalls on small keep-alive
 * requests. Whatever the socket does not take is queued as usual (a write
 * error is then met, and reported, by the bufferevent). Never for a TLS
 * side, whose bytes must go through the SSL filter. Returns 0 or -1.
 */
static int send_to(struct conn_side *s, struct evbuffer *src, size_t n)
{
	struct evbuffer *out = bufferevent_get_output(s->bev);
	bool was_empty = evbuffer_get_length(out) == 0;
	int w;

	if (n > 0 && s->ssl == NULL && was_empty) {
		w = evbuffer_write_atmost(src, bufferevent_getfd(s->bev), (ev_ssize_t)n);
		if (w > 0)
			n -= (size_t)w;
	}
	if (n == 0)
		return 0;
	if (move(src, out, n) < 0)
		return -1;
	/*
	 * A TLS bufferevent on a socket (libevent 2.1) only arms its write
	 * event when bytes are queued and writes on the next EPOLLOUT: one
	 * more trip through epoll_wait and two epoll_ctl per message. Making
	 * the write event active runs that write in this loop iteration, and
	 * the change list (proxy.c) then folds the arm and disarm away. Not
	 * for a filter, whose write event is a timeout and which writes at
	 * once anyway.
	 */
	if (s->ssl != NULL && was_empty && bufferevent_get_underlying(s->bev) == NULL)
		event_active(&s->bev->ev_write, EV_WRITE, 1);
	return 0;
}

/* Body bytes follow a head still pending for s in the same buffer, so
 * head and body leave in one writev; otherwise straight on. */
static int pass_on(struct conn_side *s, struct evbuffer *src, size_t n)
{
	if (evbuffer_get_length(s->pending) > 0)
		return move(src, s->pending, n);
	return send_to(s, src, n);
}

/* Sends what a step assembled for s. */
static int flush_pending(struct conn_side *s)
{
	size_t n = evbuffer_get_length(s->pending);

	if (n == 0)
		return 0;
	if (s->bev == NULL)
		return evbuffer_drain(s->pending, n);
	return send_to(s, s->pending, n);
}

/* Target of the current request for audit lines and reasons. */
static void audit_line(conn_t *c, const char *kind, const char *decision, const char *reason,
		       const char *rule)
{
	const char *injected[64];
	struct audit_rec r;
	size_t ulen = 0;

	if (c->ex.audited)
		return;
	c->ex.audited = true;
	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.method = c->client.http != NULL && http1_head_done(c->client.http)
			   ? http1_method(c->client.http)
			   : NULL;
	if (have_target(c)) {
		r.host = c->tgt.host;
		r.port = c->tgt.port;
		if (c->ex.kind != EX_KIND_CONNECT) {
			r.scheme = terminated(c) ? "https" : "http";
			r.target = c->tgt.path;
			r.target_len = c->tgt.path_len;
		}
	} else if (c->ex.redact) {
		r.scheme = "http";
	} else if (c->client.http != NULL && http1_head_done(c->client.http) &&
		   c->ex.kind != EX_KIND_CONNECT) {
		/* Unparseable target: record what was sent, escaped. */
		r.target = http1_url(c->client.http, &ulen);
		r.target_len = ulen;
	}
	if (c->ex.redact) {
		/* SPEC §6: a real value never reaches the audit (nor the
		 * stderr line built from this record). */
		r.target = REDACTED;
		r.target_len = sizeof(REDACTED) - 1;
	}
	r.status = c->ex.status;
	r.decision = decision;
	r.reason = reason;
	r.rule = rule;
	r.inspected = c->ex.kind != EX_KIND_CONNECT && strcmp(kind, "request") == 0;
	if (r.inspected && c->mask != NULL) {
		r.n_injected = cmask_injected(c->mask, injected, sizeof(injected) / sizeof(injected[0]));
		r.injected = injected;
		r.remasked = cmask_remasked(c->mask);
	}
	r.bytes_up = -1;
	r.bytes_down = -1;
	/* Byte counts for what was relayed (a request with a recorded note
	 * was relayed in full too); refusals have none. */
	if (strcmp(kind, "connect") != 0 && (reason == NULL || c->ex.phase == EX_DONE)) {
		r.bytes_up = (int64_t)c->ex.bytes_up;
		r.bytes_down = (int64_t)c->ex.bytes_down;
	}
	r.ms = ms_since(c, &c->ex.t0);
	r.tls = terminated(c) ? "terminated" : strcmp(kind, "tunnel") == 0 ? "passthrough" : "none";
	proxy_record(c->px, &r);
}

static const char *status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 421:
		return "Misdirected Request";
	case 431:
		return "Request Header Fields Too Large";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

/* Frees the upstream side (connection and parser state), keeping the
 * parser object for reuse. */
static void drop_upstream(conn_t *c)
{
	if (c->dial != NULL) {
		upstream_cancel(c->dial);
		c->dial = NULL;
	}
	plain_reader_free(&c->up);
	if (c->up.bev != NULL) {
		if (c->up.ssl != NULL)
			wbio_detach(c->up.ssl);
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
	}
	(void)evbuffer_drain(c->up.pending, evbuffer_get_length(c->up.pending));
	c->up.ssl = NULL;
	c->up.eof = false;
	c->up.kicked = false;
	c->up.reusable = false;
	c->up.failed = false;
	c->up.tls_ready = false;
	c->up_host[0] = '\0';
	c->up_port = 0;
}

/* Answer sent or response complete: flush the client's output, then close
 * it lingering (step_drain()). The upstream is no longer needed. */
static enum step enter_draining(conn_t *c)
{
	drop_upstream(c);
	conn_set_state(c, CONN_DRAINING);
	/* Write callback as soon as the output is empty. */
	bufferevent_setwatermark(c->client.bev, EV_WRITE, 0, 0);
	arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
}

/*
 * Answers the current request with an error and drains: audit line, the
 * response of SPEC §5 (xerr: X-Proxy-Error value or NULL), then close. If
 * a response already started, the connection is just closed.
 */
static enum step refuse(conn_t *c, int status, const char *xerr, const char *kind, const char *rule,
			const char *fmt, ...) PRINTF(6, 7);
static enum step refuse(conn_t *c, int status, const char *xerr, const char *kind, const char *rule,
			const char *fmt, ...)
{
	char reason[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (responding(c)) {
		conn_close(c, reason, true);
		return STEP_CLOSED;
	}
	/* An interim (1xx) head not yet sent is dropped with the exchange. */
	(void)evbuffer_drain(c->client.pending, evbuffer_get_length(c->client.pending));
	c->ex.status = status;
	audit_line(c, kind, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
	log_info("%s", reason);
	if (evbuffer_add_printf(out_of(&c->client),
				"HTTP/1.1 %d %s\r\n%s%s%sContent-Type: text/plain\r\n"
				"Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
				status, status_text(status), xerr != NULL ? "X-Proxy-Error: " : "",
				xerr != NULL ? xerr : "", xerr != NULL ? "\r\n" : "", strlen(reason) + 1,
				reason) < 0) {
		conn_close(c, "out of memory writing a refusal", true);
		return STEP_CLOSED;
	}
	c->ex.phase = EX_RESPONDING;
	return enter_draining(c);
}

/* "GET http://host:port/path" or "CONNECT host:port" for reasons; the
 * path is cut at 200 bytes. */
static const char *what(const conn_t *c, char *buf, size_t len)
{
	if (c->ex.redact)
		(void)snprintf(buf, len, "%s %s://%s%s", http1_method(c->client.http),
			       terminated(c) ? "https" : "http", have_target(c) ? c->tgt.authority : "?",
			       REDACTED);
	else if (c->ex.kind == EX_KIND_CONNECT)
		(void)snprintf(buf, len, "CONNECT %s:%u", c->tgt.host, (unsigned)c->tgt.port);
	else if (terminated(c))
		(void)snprintf(buf, len, "%s https://%s%.*s", http1_method(c->client.http),
			       c->tgt.authority,
			       (int)(c->tgt.path_len > 200 ? 200 : c->tgt.path_len), c->tgt.path);
	else
		(void)snprintf(buf, len, "%s http://%s%s%.*s", http1_method(c->client.http),
			       c->tgt.authority, c->tgt.path[0] == '?' ? "/" : "",
			       (int)(c->tgt.path_len > 200 ? 200 : c->tgt.path_len), c->tgt.path);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Upstream callbacks                                                  */
/* ------------------------------------------------------------------ */

static void up_read_cb(struct bufferevent *bev, void *arg)
{
	conn_t *c = arg;

	(void)bev;
	c->up.kicked = false;
	drive(c);
}

static void up_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	drive(arg);
}

static enum step send_request(conn_t *c);

/*
 * The upstream TLS handshake of a terminated tunnel ended: on success the
 * waiting request goes out; on failure the reason is kept and a waiting
 * request gets the 502 (a later one gets it from decide_inner()). Nothing
 * was sent upstream before the certificate verified.
 */
static void up_tls_done(conn_t *c, struct bufferevent *bev, bool ok)
{
	char w[512];
	enum step st = STEP_AGAIN;

	proxy_note_churn(c->px);
	if (ok && !tls_peer_verified(bev)) {
		ok = false;
		(void)snprintf(c->up_tls_err, sizeof(c->up_tls_err), "no verified certificate");
	}
	if (!ok) {
		if (c->up_tls_err[0] == '\0')
			tls_failure_reason(bev, c->up_tls_err, sizeof(c->up_tls_err));
		log_info("conn %s: TLS with %s failed: %s", c->client.peer, c->up.peer, c->up_tls_err);
		drop_upstream(c);
		if (c->state == CONN_UPSTREAM_CONNECTING)
			st = refuse(c, 502, NULL, "request", c->rule,
				    "passavant: %s: the certificate of %s:%u does not verify: %s",
				    what(c, w, sizeof(w)), c->tgt.host, (unsigned)c->tgt.port, c->up_tls_err);
		if (st != STEP_CLOSED)
			drive(c);
		return;
	}
	c->up.tls_ready = true;
	c->up.kicked = false;
	if (c->state == CONN_UPSTREAM_CONNECTING && send_request(c) == STEP_CLOSED)
		return;
	drive(c);
}

/*
 * libevent's SSL bufferevent stops writing when it reads the peer's
 * close_notify (or EOF), and starts again only when bytes go into an
 * empty output: what is already queued would wait forever. A TLS
 * half-close from a client still reading is legal; the answer must go.
 */
static void rearm_tls_write(struct conn_side *s)
{
	if (s->bev != NULL && s->ssl != NULL && evbuffer_get_length(bufferevent_get_output(s->bev)) > 0)
		(void)bufferevent_enable(s->bev, EV_WRITE);
}

static void up_event_cb(struct bufferevent *bev, short events, void *arg)
{
	conn_t *c = arg;

	if (c->up.ssl != NULL && !c->up.tls_ready) {
		/* Only a TLS filter reports CONNECTED (the socket was
		 * connected by upstream.c): the handshake is done. */
		if (events & BEV_EVENT_CONNECTED)
			up_tls_done(c, bev, true);
		else if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
			up_tls_done(c, bev, false);
		return;
	}
	if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		/* An upstream error is handled like EOF: what was received is
		 * passed on, then the missing rest decides (502 or close). */
		if (events & BEV_EVENT_ERROR)
			log_debug("conn %s: upstream %s: %s", c->client.peer, c->up.peer,
				  evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		c->up.eof = true;
		c->up.reusable = false;
		/* An error, or a TLS end without close_notify (libevent
		 * reports that "dirty" end as EOF): the upstream may have cut
		 * a body that ends with the connection. */
		if ((events & BEV_EVENT_ERROR) ||
		    (c->up.ssl != NULL && (SSL_get_shutdown(c->up.ssl) & SSL_RECEIVED_SHUTDOWN) == 0))
			c->up.failed = true;
		rearm_tls_write(&c->up);
	}
	drive(c);
}

/* libevent reads and writes at most 16 KiB per call by default; bulk
 * transfers through a tunnel are several times faster with larger calls.
 * Memory stays bounded by the watermarks. */
#define CONN_MAX_SINGLE_IO_BYTES (128 * 1024)

/*
 * An SSL bufferevent reserves its whole read allowance in its input buffer
 * before each SSL_read (libevent's bytes_to_read(), evbuffer_reserve_space())
 * and keeps the reserved chain when SSL_read has nothing: every idle
 * terminated tunnel held two such empty chains. drive() frees them
 * (release_idle_buffers()), so the allowance can be a whole TLS record:
 * chains of 16 KiB become records of 16 KiB on the other side (at 4 KiB,
 * 8 KiB chains made 8 KiB records and twice the writes; 10 to 15% less
 * throughput on 64 MiB transfers). 16384 is a whole record's plaintext
 * (16000 split every record in two on the way out); with libevent's chain
 * header each reserve is a 32 KiB allocation, so bytes in flight take up
 * to twice their size (bounded by the watermarks; idle tunnels hold none).
 */
#define CONN_TLS_SINGLE_READ_BYTES 16384

static void tune_tls_io(struct bufferevent *bev)
{
	(void)bufferevent_set_max_single_read(bev, CONN_TLS_SINGLE_READ_BYTES);
	(void)bufferevent_set_max_single_write(bev, CONN_MAX_SINGLE_IO_BYTES);
}

static void tune_io(struct bufferevent *bev)
{
	(void)bufferevent_set_max_single_read(bev, CONN_MAX_SINGLE_IO_BYTES);
	(void)bufferevent_set_max_single_write(bev, CONN_MAX_SINGLE_IO_BYTES);
}

/*
 * For a TLS filter: the bytes it encrypts wait in the underlying
 * bufferevent's output, which libevent lets grow without bound unless its
 * write high watermark is set (be_underlying_writebuf_full()); with it the
 * filter stops at HIGH and its own output (which update_io() watches) fills
 * instead. STYLE.md 5: back-pressure through both layers.
 */
static void bound_underlying(struct bufferevent *bev)
{
	struct bufferevent *under = bufferevent_get_underlying(bev);

	if (under == NULL)
		return;
	tune_io(under);
	bufferevent_setwatermark(under, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2,
				 PASSAVANT_OUTBUF_HIGH_BYTES);
}

/* Takes the connected upstream bufferevent into the conn. */
static void adopt_upstream(conn_t *c, struct bufferevent *bev)
{
	c->up.bev = bev;
	c->up.eof = false;
	c->up.reusable = false;
	(void)snprintf(c->up_host, sizeof(c->up_host), "%s", c->tgt.host);
	c->up_port = c->tgt.port;
	(void)snprintf(c->up.peer, sizeof(c->up.peer), "%.50s:%u", c->tgt.host, (unsigned)c->tgt.port);
	bufferevent_setcb(bev, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setwatermark(bev, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (bufferevent_openssl_get_ssl(bev) != NULL) {
		/* A TLS side keeps libevent's read watermark: its read loop
		 * stops at it. */
		tune_tls_io(bev);
		bound_underlying(bev);
		bufferevent_setwatermark(bev, EV_READ, 0, PASSAVANT_OUTBUF_HIGH_BYTES);
		if (bufferevent_enable(bev, EV_READ | EV_WRITE) < 0)
			log_warnx("conn %s: cannot enable upstream reads", c->client.peer);
		return;
	}
	/* Plain: read by plain_read(), its input bounded by update_io(),
	 * which starts it (without a read event, set_reading() lets libevent
	 * read). */
	tune_io(bev);
	if (plain_reader_new(c, &c->up) < 0)
		log_warnx("conn %s: cannot watch the upstream %s", c->client.peer, c->up.peer);
	if (bufferevent_enable(bev, EV_WRITE) < 0)
		log_warnx("conn %s: cannot write to the upstream %s", c->client.peer, c->up.peer);
}

/* Sends the rewritten request head upstream and starts relaying. */
static enum step send_request(conn_t *c)
{
	http1_reset(c->up.http);
	http1_set_head_request(c->up.http, http1_method_is(c->client.http, "HEAD"));
	/* The head was written (and substituted) by prepare_request(). */
	if (evbuffer_add_buffer(c->up.pending, c->head_out) < 0) {
		conn_close(c, "out of memory writing a request head", true);
		return STEP_CLOSED;
	}
	conn_set_state(c, CONN_RELAY);
	touch(c);
	arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
}

static void dial_cb(void *arg, enum upstream_result res, struct bufferevent *bev, const char *detail,
		    const char *rule)
{
	conn_t *c = arg;
	char w[512];
	enum step st = STEP_AGAIN;

	c->dial = NULL;
	if (res != UPSTREAM_OK) {
		int status = upstream_status(res);

		if (status == 403)
			st = refuse(c, 403, "blocked-by-sandbox-runtime", c->ex.kind == EX_KIND_CONNECT ? "connect" : "request",
				    rule, "passavant: %s refused by %s: %s", what(c, w, sizeof(w)), rule,
				    detail);
		else
			st = refuse(c, status, NULL, c->ex.kind == EX_KIND_CONNECT ? "connect" : "request", c->rule,
				    "passavant: %s: %s", what(c, w, sizeof(w)), detail);
		if (st != STEP_CLOSED)
			drive(c);
		return;
	}
	if (terminated(c)) {
		/* A terminated tunnel re-dials its upstream with TLS; the
		 * request waits in UPSTREAM_CONNECTING for the handshake. */
		if (adopt_upstream_tls(c, bev) < 0)
			return;
		arm_timer(c, PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS);
		drive(c);
		return;
	}
	adopt_upstream(c, bev);
	if (c->ex.kind == EX_KIND_CONNECT) {
		conn_set_mode(c, CONN_MODE_TUNNEL);
		c->ex.status = 200;
		if (evbuffer_add_printf(out_of(&c->client), "HTTP/1.1 200 Connection Established\r\n\r\n") < 0) {
			conn_close(c, "out of memory", true);
			return;
		}
		c->ex.phase = EX_RESPONDING;
		(void)event_base_gettimeofday_cached(proxy_base(c->px), &c->ex.t0);
		touch(c);
		if (c->plan != TUNNEL_OPAQUE) {
			/* The bytes after the CONNECT head decide
			 * (step_tls_sniff()); a tunnel nobody speaks in is
			 * idle as much as it is a slow handshake. */
			conn_set_state(c, CONN_TLS_SNIFF);
			arm_timer(c, c->head_ms < c->idle_ms ? c->head_ms : c->idle_ms);
			start_peek(c);
		} else {
			conn_set_state(c, CONN_RELAY);
			arm_timer(c, c->idle_ms);
		}
	} else if (send_request(c) == STEP_CLOSED) {
		return;
	}
	drive(c);
}

/*
 * Layers verified TLS over bev, the connected upstream of a terminated
 * tunnel, and adopts the filter; the handshake runs and ends in
 * up_tls_done(). c->up.bev must not hold bev. Returns 0, or -1 after
 * closing c.
 */
static int adopt_upstream_tls(conn_t *c, struct bufferevent *bev)
{
	struct bufferevent *fb;
	char err[256];
	bool lost = false;

	fb = tls_wrap_upstream(proxy_tls(c->px), proxy_base(c->px), bev, c->tgt.host, c->tgt.is_ip,
			       &lost, err, sizeof(err));
	if (fb == NULL) {
		if (!lost)
			bufferevent_free(bev);
		conn_close(c, err, true);
		return -1;
	}
	adopt_upstream(c, fb);
	c->up.ssl = bufferevent_openssl_get_ssl(fb);
	c->up.tls_ready = false;
	c->up_tls_err[0] = '\0';
	return 0;
}

/* Starts resolving/connecting for the current target. */
static enum step dial(conn_t *c, enum conn_state connecting)
{
	conn_set_state(c, connecting);
	event_del(c->timer);
	c->dial = upstream_connect(proxy_base(c->px), proxy_dns(c->px), proxy_local(c->px), pol(c),
				   c->tgt.host, c->tgt.port, c->tgt.is_ip, dial_cb, c);
	if (c->dial == NULL) {
		conn_close(c, "out of memory starting a connection", true);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

/* ------------------------------------------------------------------ */
/* DECIDE                                                              */
/* ------------------------------------------------------------------ */

/* Wipes what an evbuffer holds (it may carry real values) and frees it. */
static void wipe_free(struct evbuffer *b)
{
	if (b == NULL)
		return;
	cmask_wipe_drain(b);
	evbuffer_free(b);
}

/*
 * The allowed request's head for the upstream, into c->head_out: hop-by-
 * hop fields removed, Accept-Encoding: identity towards inject hosts, and
 * credential masking (SPEC §4.2): sentinels in the target and the header
 * values replaced where the policy allows it, the request refused (403)
 * when a sentinel sits where it may not go; the body substituter armed
 * when a body follows. Real values go only into verified TLS (plain HTTP
 * only with allowPlaintextInject: the table decides with verified false).
 * Returns true to go on (send the head); false when the request was
 * refused or the conn closed, with *st the step to return (a refusal's
 * STEP_AGAIN drives the DRAINING conn on).
 */
static bool prepare_request(conn_t *c, enum step *st)
{
	char reason[512], w[512];
	const char *rule = NULL;
	bool oom = false, verified = terminated(c);
	int r;

	if (c->head_out == NULL && (c->head_out = evbuffer_new()) == NULL)
		goto oom;
	/* A head never sent (a 502 after a failed verification). */
	cmask_wipe_drain(c->head_out);
	if (c->mask == NULL && proxy_masks(c->px) != NULL) {
		c->mask = cmask_new(proxy_masks(c->px), &oom);
		if (oom)
			goto oom;
	}
	c->ex.mask_req_body = false;
	c->ex.identity = c->mask != NULL && cmask_inject_host(c->mask, c->tgt.host, c->tgt.port);
	if (http1_write_request_head(c->client.http, c->head_out, c->tgt.path, c->tgt.path_len,
				     c->tgt.authority, c->ex.kind == EX_KIND_UPGRADE,
				     c->ex.identity) < 0)
		goto oom;
	if (c->mask == NULL)
		return true;
	r = cmask_request_head(c->mask, c->head_out, c->tgt.host, c->tgt.port, verified, reason,
			       sizeof(reason), &rule);
	if (r < 0)
		goto oom;
	if (r == 1) {
		cmask_begin_request(c->mask); /* nothing was injected */
		c->rule = rule;
		*st = refuse(c, 403, "blocked-by-sandbox-runtime", "request", rule,
			     "passavant: %s refused by %s: %s", what(c, w, sizeof(w)), rule, reason);
		return false;
	}
	if (!c->ex.req_done) {
		if (cmask_body_begin(c->mask, CMASK_OUT, c->tgt.host, c->tgt.port, verified,
				     http1_chunked(c->client.http)) < 0)
			goto oom;
		if (http1_chunked(c->client.http))
			http1_set_body_sink(c->client.http, cmask_body_sink,
					    cmask_sink_arg(c->mask, CMASK_OUT));
		c->ex.mask_req_body = true;
	}
	return true;
oom:
	conn_close(c, "out of memory preparing a request head", true);
	*st = STEP_CLOSED;
	return false;
}

static enum step decide_connect(conn_t *c, const char *url, size_t ulen)
{
	struct policy_decision d;
	const char *err, *mrule = NULL;
	char w[512];

	c->ex.kind = EX_KIND_CONNECT;
	if ((err = target_parse_connect(url, ulen, &c->tgt)) != NULL)
		return refuse(c, 400, NULL, "connect", NULL, "passavant: CONNECT %.*s: %s",
			      (int)(ulen > 200 ? 200 : ulen), url, err);
	c->ex.have_target = true;
	policy_decide(pol(c), c->tgt.host, c->tgt.port, &d);
	c->rule = d.rule;
	if (d.verdict != POLICY_ALLOW)
		return refuse(c, 403, "blocked-by-sandbox-runtime", "connect", d.rule,
			      "passavant: %s refused by %s", what(c, w, sizeof(w)), d.rule);
	if (!d.terminate_tls || proxy_tls(c->px) == NULL)
		c->plan = TUNNEL_OPAQUE;
	else
		c->plan = d.method_restricted ? TUNNEL_TERMINATE_ONLY : TUNNEL_TERMINATE;
	if (d.method_restricted && c->plan == TUNNEL_OPAQUE) {
		/* SPEC §3.1: a method rule cannot be enforced inside an
		 * opaque tunnel; refuse rather than skip it. (With TLS
		 * termination the tunnel is refused later if it does not
		 * carry TLS: step_tls_sniff().) */
		(void)policy_method_allowed(pol(c), c->tgt.host, c->tgt.port, "CONNECT", &mrule);
		if (mrule == NULL)
			mrule = "allowedMethods";
		return refuse(c, 403, "blocked-by-sandbox-runtime", "connect", mrule,
			      "passavant: %s refused by %s: methods cannot be enforced in an opaque tunnel",
			      what(c, w, sizeof(w)), mrule);
	}
	if (!c->slot) {
		if (!proxy_tunnel_acquire(c->px, policy_limits(pol(c))->max_tunnels))
			return refuse(c, 503, "too-many-tunnels", "connect", "limits: maxTunnels",
				      "passavant: %s refused: too many tunnels (maxTunnels %u)",
				      what(c, w, sizeof(w)), policy_limits(pol(c))->max_tunnels);
		c->slot = true;
	}
	/* A keep-alive connection may have carried plain requests before:
	 * their idle upstream and byte counts are not the tunnel's. */
	drop_upstream(c);
	return dial(c, CONN_TUNNEL_CONNECTING);
}

/* Whether the request's Upgrade field is exactly "websocket". */
static bool is_websocket_upgrade(const http1_t *h)
{
	const char *name, *val;
	size_t nlen, vlen, i;

	if (http1_header_find(h, "upgrade", &i) != 1)
		return false;
	http1_header(h, i, &name, &nlen, &val, &vlen);
	return vlen == 9 && strncasecmp(val, "websocket", 9) == 0;
}

/*
 * The request target. Plain HTTP: the absolute form, parsed into tgt.
 * Inside a terminated tunnel: the origin form (or "*" for OPTIONS), the
 * host and port staying the CONNECT's; a CONNECT there is refused.
 * Returns true to go on, else false with *st the refusal's step.
 */
static bool take_target(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *err, *m = http1_method(c->client.http);
	int cut = (int)(ulen > 200 ? 200 : ulen);

	if (c->mode != CONN_MODE_TERMINATED) {
		if ((err = target_parse_absolute(url, ulen, &c->tgt)) != NULL) {
			*st = refuse(c, 400, NULL, "request", NULL, "passavant: %s %.*s: %s", m, cut, url, err);
			return false;
		}
		c->ex.have_target = true;
		return true;
	}
	c->tgt.path = "";
	c->tgt.path_len = 0;
	if (http1_method_is(c->client.http, "CONNECT")) {
		*st = refuse(c, 400, NULL, "request", NULL,
			     "passavant: CONNECT inside the TLS tunnel to %s:%u refused", c->tgt.host,
			     (unsigned)c->tgt.port);
		return false;
	}
	if (!(ulen > 0 && url[0] == '/') &&
	    !(ulen == 1 && url[0] == '*' && http1_method_is(c->client.http, "OPTIONS"))) {
		*st = refuse(c, 400, NULL, "request", NULL,
			     "passavant: %s %.*s: a request inside a tunnel must have an origin-form target",
			     m, cut, url);
		return false;
	}
	c->tgt.path = url;
	c->tgt.path_len = ulen;
	return true;
}

/*
 * Whether a Host field value names the CONNECT target t: "host[:port]" or
 * "[v6][:port]", the port 443 when absent, the host normalised
 * (target_parse_connect(); a value without a port is parsed again with
 * ":443", which changes nothing for one that fails otherwise).
 */
static bool host_names_target(const char *v, size_t vlen, const struct target *t)
{
	char buf[TARGET_AUTHORITY_MAX + 8];
	struct target h;

	if (vlen + sizeof(":443") > sizeof(buf))
		return false;
	if (target_parse_connect(v, vlen, &h) != NULL) {
		memcpy(buf, v, vlen);
		memcpy(buf + vlen, ":443", sizeof(":443"));
		if (target_parse_connect(buf, vlen + 4, &h) != NULL)
			return false;
	}
	return h.port == t->port && strcmp(h.host, t->host) == 0;
}

/*
 * One Host field at most (RFC 9112 §3.2.2: with an absolute-form target
 * the proxy replaces Host with the URL's authority; two are ambiguous).
 * Inside a terminated tunnel, Host (when sent) and SNI (when sent) must
 * name the CONNECT target (421), because the policy decided that target
 * and the leaf names it. Returns true to go on.
 */
static bool check_host(conn_t *c, enum step *st)
{
	const char *name, *val;
	size_t nlen, vlen, hi, nhost;
	char w[512];

	nhost = http1_header_find(c->client.http, "host", &hi);
	if (nhost > 1) {
		*st = refuse(c, 400, NULL, "request", NULL, "passavant: %s: more than one Host field",
			     what(c, w, sizeof(w)));
		return false;
	}
	if (c->mode != CONN_MODE_TERMINATED)
		return true;
	if (nhost == 1) {
		http1_header(c->client.http, hi, &name, &nlen, &val, &vlen);
		if (!host_names_target(val, vlen, &c->tgt)) {
			*st = refuse(c, 421, NULL, "request", c->rule,
				     "passavant: %s: Host %.*s does not name the CONNECT target %s:%u",
				     what(c, w, sizeof(w)), (int)(vlen > 200 ? 200 : vlen), val, c->tgt.host,
				     (unsigned)c->tgt.port);
			return false;
		}
	}
	if (c->sni_mismatch) {
		*st = refuse(c, 421, NULL, "request", c->rule,
			     "passavant: %s: TLS server name %s does not name the CONNECT target %s:%u",
			     what(c, w, sizeof(w)), c->sni, c->tgt.host, (unsigned)c->tgt.port);
		return false;
	}
	return true;
}

/*
 * allowedDomains (under the current policy, like every request), then
 * allowedMethods; plain HTTP also takes a maxTunnels slot. *restricted
 * says whether a method rule applies to the host. Returns true to go on.
 */
static bool check_policy(conn_t *c, bool *restricted, enum step *st)
{
	struct policy_decision d;
	const char *mrule = NULL;
	char w[512];

	policy_decide(pol(c), c->tgt.host, c->tgt.port, &d);
	c->rule = d.rule;
	*restricted = d.method_restricted;
	if (d.verdict != POLICY_ALLOW) {
		*st = refuse(c, 403, "blocked-by-sandbox-runtime", "request", d.rule,
			     "passavant: %s refused by %s", what(c, w, sizeof(w)), d.rule);
		return false;
	}
	if (!policy_method_allowed(pol(c), c->tgt.host, c->tgt.port, http1_method(c->client.http), &mrule)) {
		if (mrule == NULL)
			mrule = "allowedMethods";
		c->rule = mrule;
		*st = refuse(c, 403, "blocked-by-sandbox-runtime", "request", mrule,
			     "passavant: %s refused by %s", what(c, w, sizeof(w)), mrule);
		return false;
	}
	if (c->mode != CONN_MODE_TERMINATED && !c->slot) {
		if (!proxy_tunnel_acquire(c->px, policy_limits(pol(c))->max_tunnels)) {
			*st = refuse(c, 503, "too-many-tunnels", "request", "limits: maxTunnels",
				     "passavant: %s refused: too many connections (maxTunnels %u)",
				     what(c, w, sizeof(w)), policy_limits(pol(c))->max_tunnels);
			return false;
		}
		c->slot = true;
	}
	return true;
}

/* Sends the prepared request: plain HTTP on the idle upstream kept for
 * the same host and port, else on a new connection. */
static enum step send_plain(conn_t *c)
{
	if (c->up.bev != NULL && c->up.reusable && !c->up.eof && c->up_port == c->tgt.port &&
	    strcmp(c->up_host, c->tgt.host) == 0) {
		c->ex.up_use = EX_UP_REUSED;
		return send_request(c);
	}
	drop_upstream(c);
	return dial(c, CONN_UPSTREAM_CONNECTING);
}

/* Sends the prepared request inside a terminated tunnel: on the verified
 * upstream, reused while it keeps alive, re-dialled (with TLS) when not. */
static enum step send_inner(conn_t *c)
{
	if (c->up.bev == NULL || c->up.eof) {
		drop_upstream(c);
		return dial(c, CONN_UPSTREAM_CONNECTING);
	}
	if (c->up.reusable && c->up.tls_ready)
		c->ex.up_use = EX_UP_REUSED;
	if (!c->up.tls_ready) {
		/* The handshake started with the client's; up_tls_done()
		 * sends the request. */
		conn_set_state(c, CONN_UPSTREAM_CONNECTING);
		arm_timer(c, PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS);
		return STEP_STOP;
	}
	return send_request(c);
}

/*
 * The one pipeline of every HTTP request, plain (absolute form) or inside
 * a terminated tunnel (origin form, the CONNECT target fixed): TRACE and
 * TRACK refused, the target, Host (and SNI), allowedDomains and
 * allowedMethods, then the head prepared (masking) and sent.
 */
static enum step decide_request(conn_t *c, const char *url, size_t ulen)
{
	bool restricted = false;
	char w[512];
	enum step st;

	if (http1_method_is(c->client.http, "TRACE") || http1_method_is(c->client.http, "TRACK"))
		return refuse(c, 405, NULL, "request", NULL,
			      "passavant: %s refused: method not allowed through the proxy",
			      http1_method(c->client.http));
	if (!take_target(c, url, ulen, &st) || !check_host(c, &st) || !check_policy(c, &restricted, &st))
		return st;
	c->ex.req_done = http1_message_done(c->client.http);
	/* A WebSocket upgrade is relayed (SPEC §5) unless a method rule
	 * applies to the host: like a CONNECT, an opaque relay could not
	 * enforce it, so the Upgrade is then dropped as hop-by-hop and the
	 * upstream answers the plain request. Other upgrades (h2c, ...) would
	 * hide requests from the policy and are always dropped. */
	if (http1_upgrade(c->client.http) && c->ex.req_done && !restricted &&
	    is_websocket_upgrade(c->client.http))
		c->ex.kind = EX_KIND_UPGRADE;
	if (c->mode == CONN_MODE_TERMINATED && c->up_tls_err[0] != '\0')
		return refuse(c, 502, NULL, "request", c->rule,
			      "passavant: %s: the certificate of %s:%u does not verify: %s",
			      what(c, w, sizeof(w)), c->tgt.host, (unsigned)c->tgt.port, c->up_tls_err);
	if (!prepare_request(c, &st))
		return st;
	return c->mode == CONN_MODE_TERMINATED ? send_inner(c) : send_plain(c);
}

/*
 * SPEC §4.2: the sandbox should never hold a real value, so one on its
 * way out, to any host, means something leaked. Before any decision (a
 * refusal's reason could echo the target), the target and every header
 * field are searched for one, in every form the remask set knows, as
 * sent and with every %XX decoded; if one is there, the request is
 * refused with a 403 naming the credential, and its target is written
 * nowhere (c->ex.redact). Returns false when there is none (go on), else
 * true with *st the step the refusal (or a failure) returned.
 */
static bool refuse_real_values(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *cred = NULL, *where = "the request target", *name = NULL, *text;
	size_t tlen;
	bool oom = false, in_header = false;
	char w[512];
	int r;

	*st = STEP_CLOSED;
	if (c->mask == NULL && (c->mask = cmask_new(proxy_masks(c->px), &oom)) == NULL) {
		if (!oom)
			return false;
		conn_close(c, "out of memory checking a request head", true);
		return true;
	}
	/* One search over the target, names and values as the parser keeps
	 * them (one buffer); where it was is only looked up for the reason. */
	text = http1_head_text(c->client.http, &tlen);
	r = cmask_find_real(c->mask, text, tlen, &cred);
	if (r == 1 && cmask_find_real(c->mask, url, ulen, &name) == 0) {
		where = "a header";
		in_header = true;
	}
	if (r < 0) {
		conn_close(c, "out of memory checking a request head", true);
		return true;
	}
	if (r == 0)
		return false;
	c->ex.redact = true;
	if (http1_method_is(c->client.http, "CONNECT"))
		c->ex.kind = EX_KIND_CONNECT;
	if (!terminated(c)) {
		/* The host, for the audit, only when the value sits in a
		 * header: in the target it may be in the authority, and the
		 * normalised host (lower case) would no longer match it. */
		c->ex.have_target = in_header &&
				 (c->ex.kind == EX_KIND_CONNECT ? target_parse_connect(url, ulen, &c->tgt)
					    : target_parse_absolute(url, ulen, &c->tgt)) == NULL;
	}
	(void)snprintf(c->mask_rule, sizeof(c->mask_rule), "credentials %s: real value",
		       cred != NULL ? cred : "?");
	c->rule = c->mask_rule;
	*st = refuse(c, 403, "blocked-by-sandbox-runtime", c->ex.kind == EX_KIND_CONNECT ? "connect" : "request", c->rule,
		     "passavant: %s refused by %s: a real value of %s is on its way out in %s "
		     "(the sandbox should never hold one)",
		     what(c, w, sizeof(w)), c->rule, cred != NULL ? cred : "a masked credential", where);
	return true;
}

/* A complete head is in client.http: decide what to do with it. */
static enum step decide(conn_t *c)
{
	const char *url;
	size_t ulen;

	conn_set_state(c, CONN_DECIDE);
	(void)event_base_gettimeofday_cached(proxy_base(c->px), &c->ex.t0);
	/* Each request is decided under the current policy: a SIGHUP
	 * reload applies from the next request on (live tunnels keep the
	 * policy they were decided with). */
	proxy_policy_put(c->pol);
	c->pol = proxy_policy_get(c->px);
	if (c->mask != NULL)
		cmask_begin_request(c->mask);
	url = http1_url(c->client.http, &ulen);
	if (proxy_masks(c->px) != NULL) {
		enum step st;

		if (refuse_real_values(c, url, ulen, &st))
			return st;
	}
	if (c->mode != CONN_MODE_TERMINATED && http1_method_is(c->client.http, "CONNECT"))
		return decide_connect(c, url, ulen);
	return decide_request(c, url, ulen);
}

/* ------------------------------------------------------------------ */
/* Steps                                                               */
/* ------------------------------------------------------------------ */

#define CONN_STR_(x) #x
#define CONN_STR(x) CONN_STR_(x)

/* How a head error reads: 405 is a refusal, 431 a limit, 400 malformed. */
static const char *head_error_prefix(int status)
{
	switch (status) {
	case 405:
		return "";
	case 431:
		return "request head refused (limits.maxHeaderBytes, " CONN_STR(PASSAVANT_MAX_HEADER_COUNT) " fields): ";
	default:
		return "malformed request: ";
	}
}

static enum step step_read_head(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);

	/* An idle upstream kept for reuse that closed or spoke out of turn
	 * cannot carry the next request. */
	if (c->up.bev != NULL && (c->up.eof || evbuffer_get_length(in_of(&c->up)) > 0))
		drop_upstream(c);
	while (evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		enum http1_result r;
		size_t n = 0;

		if (c->ex.phase == EX_IDLE) {
			c->ex.phase = EX_REQ_HEAD;
			/* A head refused before decide() (malformed, 431) is
			 * audited with its duration from here (SPEC §6). */
			(void)event_base_gettimeofday_cached(proxy_base(c->px), &c->ex.t0);
			/* A keep-alive client waited under the idle timeout;
			 * from its first byte the head timeout applies. */
			if (!c->first_request)
				arm_timer(c, c->head_ms);
		}
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		r = http1_feed(c->client.http, v.iov_base, v.iov_len, &n);
		if (evbuffer_drain(in, n) < 0) {
			conn_close(c, "evbuffer_drain failed", true);
			return STEP_CLOSED;
		}
		switch (r) {
		case HTTP1_MORE:
			continue;
		case HTTP1_HEAD:
		case HTTP1_DONE:
			return decide(c);
		case HTTP1_ERROR:
			return refuse(c, http1_error_status(c->client.http), NULL, "request", NULL,
				      "passavant: %s%s", head_error_prefix(http1_error_status(c->client.http)),
				      http1_error_reason(c->client.http));
		}
	}
	if (c->client.eof) {
		conn_close(c, c->ex.phase != EX_IDLE ? "client closed in the middle of a head" : "client closed",
			   c->ex.phase != EX_IDLE);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

/* The response went out in full: audit, then the next request or close. */
static enum step finish_request(conn_t *c)
{
	const char *left = c->mask != NULL ? cmask_body_left(c->mask) : NULL;
	char note[POLICY_HOST_MAX + 256];

	if (left != NULL) {
		/* SPEC §4.2: left as is in a body, and recorded. */
		(void)snprintf(note, sizeof(note),
			       "passavant: the sentinel of %s was left as is in the request body to %s:%u "
			       "(injection there is not allowed by injectHosts/injectIn)",
			       left, c->tgt.host, (unsigned)c->tgt.port);
		log_info("%s", note);
	}
	audit_line(c, "request", "allow", left != NULL ? note : NULL, c->rule);
	c->up.reusable = c->ex.req_done && !c->up.eof && http1_keep_alive(c->up.http);
	if (!c->up.reusable)
		drop_upstream(c);
	if (c->ex.client_close || !c->ex.req_done || c->client.eof)
		return enter_draining(c);
	if (c->mode == CONN_MODE_TERMINATED) {
		/* The first request of a new tunnel frees buffers too: the
		 * proxy trims the heap after them as after handshakes. */
		if (!c->answered) {
			c->answered = true;
			proxy_note_churn(c->px);
		}
		/* An idle terminated tunnel keeps its parsers without head
		 * buffers (memory per open tunnel; send_request() resets the
		 * response parser before it is used again). Plain HTTP keeps
		 * them: no allocation per request where a request costs the
		 * least. c->tgt.path points into the request's head
		 * (take_target()): it goes with the buffer, so a refusal
		 * before the next head is decided records no freed target. */
		c->tgt.path = "";
		c->tgt.path_len = 0;
		http1_release(c->client.http);
		if (c->up.reusable)
			http1_release(c->up.http);
	} else {
		http1_reset(c->client.http);
	}
	/* Inside a terminated tunnel the target stays the CONNECT's
	 * (have_target()). */
	exchange_reset(&c->ex);
	c->first_request = false;
	conn_set_state(c, CONN_READ_HEAD);
	arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
}

static void tail_cb(evutil_socket_t fd, short events, void *arg);

/*
 * Whether held inbound bytes may be released after a pause: in a stream
 * without a visible end (after a 101, a tunnel without TLS), or in a
 * chunked response standing between two chunks (a boundary the upstream
 * chose: server-sent events, MCP's streamable HTTP and watch streams end
 * each reply with a chunk and wait for the client). Inside a chunk, a
 * Content-Length body or a close-delimited one, the bytes wait for more
 * or for the end, so an upstream that stalls in the middle of a real
 * value does not get it through in two pieces.
 */
static bool release_ok(const conn_t *c)
{
	if (c->mode == CONN_MODE_UPGRADED || c->tunnel_masked)
		return true;
	return c->ex.mask_resp_body && c->ex.phase != EX_DONE && http1_between_chunks(c->up.http);
}

/*
 * Passes on what the substituter of direction d may send now (cmask_ready()).
 * Inbound, while bytes are held, the tail timer runs from the last bytes
 * that came (re-armed here); when it fires they go as they are.
 */
static int mask_pass(conn_t *c, enum cmask_dir d)
{
	struct conn_side *to = d == CMASK_OUT ? &c->up : &c->client;
	size_t n;

	if (cmask_ready(c->mask, d, &n) < 0 || (n > 0 && pass_on(to, cmask_out(c->mask, d), n) < 0))
		return -1;
	/* Only a byte stream without an end we can see (an upgraded stream,
	 * a tunnel without TLS) releases held bytes after a pause: an HTTP
	 * message keeps them until more bytes or its end, so an upstream
	 * that stalls inside a real value does not get it through in two
	 * pieces. */
	if (!release_ok(c) || (!cmask_waiting(c->mask, CMASK_IN) &&
				(!(c->tunnel_masked || c->mode == CONN_MODE_UPGRADED) || !cmask_waiting(c->mask, CMASK_OUT)))) {
		if (c->tail_ev != NULL)
			(void)event_del(c->tail_ev);
		return 0;
	}
	if (c->tail_ev == NULL && (c->tail_ev = evtimer_new(proxy_base(c->px), tail_cb, c)) == NULL)
		return -1;
	return event_add(c->tail_ev, &mask_tail_tv);
}

/* Bytes were held CONN_MASK_TAIL_MS with nothing new: they go. */
static void tail_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;

	(void)fd;
	(void)events;
	if (c->mask == NULL)
		return;
	/*
	 * Only a pause of the upstream releases inbound bytes: while the
	 * upstream has sent more (unread input) or we stopped reading it
	 * because the client does not read (its output at the high mark),
	 * the held bytes wait. Otherwise the sandbox could cut a real value
	 * in two at will, by not reading at the right moment.
	 */
	if (!release_ok(c))
		return;
	if (cmask_waiting(c->mask, CMASK_IN) && c->up.bev != NULL &&
	    (evbuffer_get_length(in_of(&c->up)) > 0 ||
	     evbuffer_get_length(out_of(&c->client)) >= PASSAVANT_OUTBUF_HIGH_BYTES)) {
		if (event_add(c->tail_ev, &mask_tail_tv) < 0)
			conn_close(c, "cannot re-arm the masking timer", true);
		return;
	}
	if ((cmask_waiting(c->mask, CMASK_IN) &&
	     (cmask_release(c->mask, CMASK_IN) < 0 || mask_pass(c, CMASK_IN) < 0)) ||
	    ((c->tunnel_masked || c->mode == CONN_MODE_UPGRADED) && cmask_waiting(c->mask, CMASK_OUT) &&
	     (cmask_release(c->mask, CMASK_OUT) < 0 || mask_pass(c, CMASK_OUT) < 0))) {
		conn_close(c, "out of memory releasing held bytes", true);
		return;
	}
	drive(c);
}

/* Writes the response head for the client into client.pending, remasked
 * (SPEC §4.3: real values in headers become sentinels). */
static int write_response_head(conn_t *c, bool add_close, bool keep_upgrade)
{
	size_t from = evbuffer_get_length(c->client.pending);

	if (http1_write_response_head(c->up.http, c->client.pending, add_close, keep_upgrade) < 0)
		return -1;
	return c->mask != NULL ? cmask_response_head(c->mask, c->client.pending, from) : 0;
}

/* Whether a response body is sent as is: no Content-Encoding field, or
 * only "identity", and no transfer coding but chunked. */
static bool identity_coded(const http1_t *h)
{
	const char *name, *val;
	size_t nlen, vlen, i;

	for (i = 0; i < http1_header_count(h); i++) {
		http1_header(h, i, &name, &nlen, &val, &vlen);
		if (nlen == 17 && strncasecmp(name, "transfer-encoding", 17) == 0) {
			while (vlen > 0 && (val[vlen - 1] == ' ' || val[vlen - 1] == '\t'))
				vlen--;
			if (!(vlen == 7 && strncasecmp(val, "chunked", 7) == 0))
				return false;
			continue;
		}
		if (nlen != 16 || strncasecmp(name, "content-encoding", 16) != 0)
			continue;
		while (vlen > 0 && (val[vlen - 1] == ' ' || val[vlen - 1] == '\t'))
			vlen--;
		if (vlen != 0 && !(vlen == 8 && strncasecmp(val, "identity", 8) == 0))
			return false;
	}
	return true;
}

/*
 * After a real value was found on its way out: what waits for the
 * upstream is wiped, and its connection will end with an RST (SO_LINGER
 * 0), not a FIN that could end a close-delimited or partly sent body
 * cleanly.
 */
static void wipe_reset_upstream(conn_t *c)
{
	struct linger lg = {1, 0};

	cmask_wipe_drain(cmask_out(c->mask, CMASK_OUT));
	cmask_wipe_drain(c->up.pending);
	if (c->up.bev != NULL && bufferevent_getfd(c->up.bev) >= 0)
		(void)setsockopt(bufferevent_getfd(c->up.bev), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/*
 * A real value in a request body (SPEC §4.2). The stream wrote its
 * sentinel in its place, so no real value went upstream, but the request
 * must not complete either: what waits for the upstream is wiped, its
 * connection is reset (SO_LINGER 0: an RST, not a FIN that could end a
 * close-delimited or partly sent body cleanly), and the client gets the
 * 403 unless a response already started (then it is just closed).
 */
static enum step refuse_body_leak(conn_t *c, const char *cred)
{
	char w[512];

	wipe_reset_upstream(c);
	drop_upstream(c);
	(void)snprintf(c->mask_rule, sizeof(c->mask_rule), "credentials %s: real value", cred);
	c->rule = c->mask_rule;
	return refuse(c, 403, "blocked-by-sandbox-runtime", "request", c->rule,
		      "passavant: %s refused by %s: a real value of %s is on its way out in the body "
		      "(the sandbox should never hold one); the upstream connection was reset",
		      what(c, w, sizeof(w)), c->rule, cred);
}

static enum step step_http(conn_t *c)
{
	struct evbuffer *cin = in_of(&c->client), *cout = out_of(&c->client);
	struct evbuffer *uin = in_of(&c->up), *uout = out_of(&c->up);
	struct evbuffer_iovec v;
	enum http1_result r;
	size_t n;

	/* Request body, client -> upstream. */
	while (!c->ex.req_done && evbuffer_get_length(cin) > 0 &&
	       evbuffer_get_length(uout) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		if (evbuffer_peek(cin, -1, NULL, &v, 1) < 1)
			break;
		r = http1_feed(c->client.http, v.iov_base, v.iov_len, &n);
		if (r == HTTP1_ERROR)
			return refuse(c, 400, NULL, "request", NULL, "passavant: malformed request body: %s",
				      http1_error_reason(c->client.http));
		if (c->ex.mask_req_body) {
			const char *leak;

			if (cmask_body_take(c->mask, CMASK_OUT, cin, n) < 0 ||
			    (r == HTTP1_DONE && cmask_body_end(c->mask, CMASK_OUT) < 0)) {
				conn_close(c, "out of memory substituting a request body", true);
				return STEP_CLOSED;
			}
			if ((leak = cmask_leak(c->mask, CMASK_OUT)) != NULL)
				return refuse_body_leak(c, leak);
			if (mask_pass(c, CMASK_OUT) < 0) {
				conn_close(c, "out of memory substituting a request body", true);
				return STEP_CLOSED;
			}
		} else if (pass_on(&c->up, cin, n) < 0) {
			conn_close(c, "evbuffer move failed", true);
			return STEP_CLOSED;
		}
		c->ex.bytes_up += n;
		touch(c);
		if (r == HTTP1_DONE)
			c->ex.req_done = true;
	}
	/* Response, upstream -> client. With masking, the substituted body
	 * collects in the substituter's output and is passed on once, after
	 * the loop (cmask_ready() splits a chain to hold the tail back: once
	 * per step, not once per chain). */
	while (c->ex.phase != EX_DONE && evbuffer_get_length(uin) > 0 &&
	       evbuffer_get_length(cout) < PASSAVANT_OUTBUF_HIGH_BYTES &&
	       (!c->ex.mask_resp_body ||
		evbuffer_get_length(cmask_out(c->mask, CMASK_IN)) < PASSAVANT_OUTBUF_HIGH_BYTES)) {
		bool in_head = !http1_head_done(c->up.http);

		if (evbuffer_peek(uin, -1, NULL, &v, 1) < 1)
			break;
		r = http1_feed(c->up.http, v.iov_base, v.iov_len, &n);
		touch(c);
		if (r == HTTP1_ERROR)
			return refuse(c, 502, NULL, "request", c->rule,
				      "passavant: malformed response from %s: %s", c->up.peer,
				      http1_error_reason(c->up.http));
		if (!in_head) {
			if (c->ex.mask_resp_body) {
				if (cmask_body_take(c->mask, CMASK_IN, uin, n) < 0 ||
				    (r == HTTP1_DONE && (cmask_body_end(c->mask, CMASK_IN) < 0 ||
							 mask_pass(c, CMASK_IN) < 0))) {
					conn_close(c, "out of memory remasking a response body", true);
					return STEP_CLOSED;
				}
			} else if (pass_on(&c->client, uin, n) < 0) {
				conn_close(c, "evbuffer move failed", true);
				return STEP_CLOSED;
			}
			c->ex.bytes_down += n;
			if (r == HTTP1_DONE)
				c->ex.phase = EX_DONE;
			continue;
		}
		(void)evbuffer_drain(uin, n);
		if (r == HTTP1_MORE)
			continue;
		c->ex.status = http1_status(c->up.http);
		if (c->ex.status == 101) {
			/* Only an upgrade we forwarded may be accepted. */
			if (c->ex.kind != EX_KIND_UPGRADE)
				return refuse(c, 502, NULL, "request", c->rule,
					      "passavant: unexpected 101 from %s", c->up.peer);
			if (c->ex.identity && http1_header_find(c->up.http, "sec-websocket-extensions", NULL) > 0)
				return refuse(c, 502, NULL, "request", c->rule,
					      "passavant: %s accepted the upgrade with a WebSocket extension "
					      "although none was offered: compressed frames cannot be scanned "
					      "for real values",
					      c->up.peer);
			if (write_response_head(c, false, true) < 0)
				goto oom;
			/* The upgraded stream (only WebSocket is relayed) is
			 * framed both ways: remasked inbound, searched for
			 * real values outbound (SPEC §4.2, §4.3, §5). */
			if (c->mask != NULL && cmask_ws_begin(c->mask) < 0)
				goto oom;
			c->ex.phase = EX_RESPONDING;
			conn_set_mode(c, CONN_MODE_UPGRADED);
			audit_line(c, "request", "allow", NULL, c->rule);
			/* Bytes after either head stay in the input buffers
			 * and are relayed by step_tunnel(). */
			return STEP_AGAIN;
		}
		if (c->ex.status >= 100 && c->ex.status < 200) {
			/* Interim response (100 Continue): relay, then wait
			 * for the final one. */
			if (write_response_head(c, false, false) < 0)
				goto oom;
			http1_reset(c->up.http);
			http1_set_head_request(c->up.http, http1_method_is(c->client.http, "HEAD"));
			continue;
		}
		if (c->ex.identity && !http1_message_done(c->up.http) && !identity_coded(c->up.http))
			return refuse(c, 502, NULL, "request", c->rule,
				      "passavant: %s answered with a Content-Encoding although asked for "
				      "identity: a coded body cannot be scanned for real values",
				      c->up.peer);
		c->ex.client_close = c->ex.client_close || !http1_keep_alive(c->client.http) ||
				  http1_needs_eof(c->up.http);
		if (write_response_head(c, c->ex.client_close, false) < 0)
			goto oom;
		c->ex.phase = EX_RESPONDING;
		if (http1_message_done(c->up.http)) {
			c->ex.phase = EX_DONE;
		} else if (c->mask != NULL) {
			if (cmask_body_begin(c->mask, CMASK_IN, NULL, 0, false,
					     http1_chunked(c->up.http)) < 0)
				goto oom;
			if (http1_chunked(c->up.http))
				http1_set_body_sink(c->up.http, cmask_body_sink,
						    cmask_sink_arg(c->mask, CMASK_IN));
			c->ex.mask_resp_body = true;
		}
	}
	if (c->ex.mask_resp_body && c->ex.phase != EX_DONE && mask_pass(c, CMASK_IN) < 0)
		goto oom;
	if (c->ex.phase == EX_DONE)
		return finish_request(c);
	if (c->up.eof && evbuffer_get_length(uin) == 0) {
		if (http1_head_done(c->up.http)) {
			if (http1_finish(c->up.http) == HTTP1_DONE) {
				c->ex.phase = EX_DONE;
				/* A body that ends with the connection, ended by
				 * an error (no close_notify, a reset): the client
				 * must see the truncation as it would directly,
				 * not a clean end (step_drain()). */
				if (c->up.failed && http1_needs_eof(c->up.http) && c->client.ssl != NULL) {
					c->truncated = true;
					log_info("conn %s: %s ended a close-delimited body with an error: "
						 "closing the client without close_notify",
						 c->client.peer, c->up.peer);
				}
				/* A close-delimited body ends as a cut one does:
				 * held bytes that may begin a real value are
				 * dropped (SPEC §4.3). */
				if (c->ex.mask_resp_body &&
				    (cmask_body_cut(c->mask, CMASK_IN) < 0 || mask_pass(c, CMASK_IN) < 0))
					goto oom;
				return finish_request(c);
			}
			conn_close(c, "upstream closed in the middle of a response", true);
			return STEP_CLOSED;
		}
		/* A kept-alive upstream may close just as a request goes out
		 * (its idle timeout): re-send once on a fresh connection, but
		 * only a request without a body, which is fully replayable. */
		if (c->ex.up_use == EX_UP_REUSED && c->ex.req_done && c->ex.bytes_up == 0) {
			enum step st;

			c->ex.up_use = EX_UP_RETRIED;
			drop_upstream(c);
			/* The head went out with the lost connection: again. */
			if (!prepare_request(c, &st))
				return st;
			return dial(c, CONN_UPSTREAM_CONNECTING);
		}
		return refuse(c, 502, NULL, "request", c->rule,
			      "passavant: %s closed the connection without a response", c->up.peer);
	}
	if (c->client.eof && !c->ex.req_done && evbuffer_get_length(cin) == 0) {
		conn_close(c, "client closed in the middle of a request", true);
		return STEP_CLOSED;
	}
	return STEP_STOP;
oom:
	conn_close(c, "out of memory writing a response head", true);
	return STEP_CLOSED;
}

/*
 * A real value in a WebSocket frame from the client (SPEC §4.2): the
 * frame never goes (the substituter put the sentinel in its place, and
 * what waits is wiped), the upstream connection is reset and the client
 * closed; one audit line and one stderr line name the credential.
 */
static enum step ws_leak_close(conn_t *c, const char *cred)
{
	char reason[REASON_MAX], w[512];

	wipe_reset_upstream(c);
	(void)snprintf(c->mask_rule, sizeof(c->mask_rule), "credentials %s: real value", cred);
	(void)snprintf(reason, sizeof(reason),
		       "passavant: %s: a real value of %s was on its way out in a WebSocket frame "
		       "(the sandbox should never hold one); the stream was closed",
		       what(c, w, sizeof(w)), cred);
	c->ex.audited = false;
	audit_line(c, "request", "deny", reason, c->mask_rule);
	log_info("%s", reason);
	conn_close(c, "a real value in a WebSocket frame", true);
	return STEP_CLOSED;
}

static enum step step_tunnel(conn_t *c)
{
	struct evbuffer *cin = in_of(&c->client), *cout = out_of(&c->client);
	struct evbuffer *uin = in_of(&c->up), *uout = out_of(&c->up);
	size_t n;

	if ((n = evbuffer_get_length(cin)) > 0 && evbuffer_get_length(uout) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		if (c->mode == CONN_MODE_UPGRADED && c->mask != NULL) {
			const char *leak;
			int r = cmask_ws_feed(c->mask, CMASK_OUT, cin, n);

			if (r < 0)
				goto fail;
			if (r == 1) {
				conn_close(c, "a WebSocket frame from the client breaks RFC 6455", true);
				return STEP_CLOSED;
			}
			if ((leak = cmask_ws_leak(c->mask)) != NULL)
				return ws_leak_close(c, leak);
			if (mask_pass(c, CMASK_OUT) < 0)
				goto fail;
		} else if (c->tunnel_masked && c->mask != NULL) {
			const char *cred = NULL;
			int r = cmask_tunnel_out(c->mask, cin, n, &cred);
			char w[512];

			if (r < 0)
				goto fail;
			if (r == 2) {
				/* SPEC §4.2: a real value; nothing of it left. */
				c->ex.phase = EX_WAIT_RESPONSE;
				(void)snprintf(c->mask_rule, sizeof(c->mask_rule), "credentials %s: real value",
					       cred != NULL ? cred : "?");
				return refuse(c, 403, "blocked-by-sandbox-runtime", "connect", c->mask_rule,
					      "passavant: %s refused by %s: a real value of %s is on its way "
					      "out in a tunnel without TLS (the sandbox should never hold one)",
					      what(c, w, sizeof(w)), c->mask_rule, cred != NULL ? cred : "?");
			}
			if (r == 1) {
				/* SPEC §4.2: a sentinel to a host where it may
				 * not go; nothing of it left. As in
				 * step_tls_sniff(), the 200 went out but no
				 * answer inside the tunnel yet. */
				c->ex.phase = EX_WAIT_RESPONSE;
				(void)snprintf(c->mask_rule, sizeof(c->mask_rule),
					       "credentials %s: injectHosts", cred != NULL ? cred : "?");
				return refuse(c, 403, "blocked-by-sandbox-runtime", "connect", c->mask_rule,
					      "passavant: %s refused by %s: the sentinel of %s may not be "
					      "sent to %s:%u in a tunnel without TLS",
					      what(c, w, sizeof(w)), c->mask_rule, cred != NULL ? cred : "?",
					      c->tgt.host, (unsigned)c->tgt.port);
			}
			if (mask_pass(c, CMASK_OUT) < 0)
				goto fail;
		} else if (send_to(&c->up, cin, n) < 0) {
			goto fail;
		}
		c->ex.bytes_up += n;
		touch(c);
	}
	if ((n = evbuffer_get_length(uin)) > 0 && evbuffer_get_length(cout) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		if (c->mode == CONN_MODE_UPGRADED && c->mask != NULL) {
			int r = cmask_ws_feed(c->mask, CMASK_IN, uin, n);

			if (r < 0 || (r == 0 && mask_pass(c, CMASK_IN) < 0))
				goto fail;
			if (r == 1) {
				conn_close(c, "a WebSocket frame from the upstream breaks RFC 6455", true);
				return STEP_CLOSED;
			}
		} else if (c->tunnel_masked && c->mask != NULL) {
			/* A tunnel without TLS is remasked inbound (SPEC §4.3). */
			if (cmask_stream_in(c->mask, uin, n) < 0 || mask_pass(c, CMASK_IN) < 0)
				goto fail;
		} else if (send_to(&c->client, uin, n) < 0) {
			goto fail;
		}
		c->ex.bytes_down += n;
		touch(c);
	}
	if (c->tunnel_masked && c->mask != NULL && c->client.eof && evbuffer_get_length(cin) == 0 &&
	    cmask_waiting(c->mask, CMASK_OUT)) {
		/* The client ended: what the scan held back goes (a sentinel
		 * completed only now is dropped with the tunnel). */
		if (cmask_body_end(c->mask, CMASK_OUT) < 0)
			goto fail;
		if (cmask_body_left(c->mask) != NULL) {
			conn_close(c, "a sentinel at the end of a tunnel without TLS was dropped", true);
			return STEP_CLOSED;
		}
		if (mask_pass(c, CMASK_OUT) < 0)
			goto fail;
	}
	if (c->mode == CONN_MODE_UPGRADED && c->mask != NULL && c->client.eof && evbuffer_get_length(cin) == 0 &&
	    cmask_waiting(c->mask, CMASK_OUT)) {
		/* The client ended: held bytes may begin a real value; the
		 * frames before them go. */
		if (cmask_body_cut(c->mask, CMASK_OUT) < 0 || mask_pass(c, CMASK_OUT) < 0)
			goto fail;
	}
	if ((c->mode == CONN_MODE_UPGRADED || c->tunnel_masked) && c->mask != NULL && c->up.eof &&
	    evbuffer_get_length(uin) == 0) {
		/* The stream ended, and an end cannot be told from a cut: what
		 * the substituter held back may begin a real value and is
		 * dropped (SPEC §4.3); what it resolved goes. */
		if (cmask_body_cut(c->mask, CMASK_IN) < 0 || mask_pass(c, CMASK_IN) < 0)
			goto fail;
	}
	if (c->client.ssl != NULL) {
		/* An upgraded stream inside a terminated tunnel: TLS has no
		 * half-close to carry over (close_notify ends both ways), so
		 * once the upstream ended and all it sent was passed on, the
		 * client is drained and closed; once the client ended, the
		 * stream is over. */
		if (c->up.eof && evbuffer_get_length(uin) == 0)
			return enter_draining(c);
		if (c->client.eof && evbuffer_get_length(cin) == 0) {
			/* What the client sent last still goes to the
			 * upstream (the write callback comes back when it has;
			 * the idle timer bounds the wait). */
			if (evbuffer_get_length(uout) > 0)
				return STEP_STOP;
			if (c->up.ssl != NULL && wbio_pending(c->up.ssl) > 0) {
				wbio_notify_empty(c->up.ssl);
				return STEP_STOP;
			}
			conn_close(c, "client ended the upgraded stream", false);
			return STEP_CLOSED;
		}
		return STEP_STOP;
	}
	/* Half-close (TCP semantics kept end to end): once one side ended
	 * and all it sent reached the other, shut the other's write side and
	 * keep relaying the opposite direction; close when both ended. */
	if (c->client.eof && evbuffer_get_length(cin) == 0 && evbuffer_get_length(uout) == 0 &&
	    !c->up.shut_wr) {
		c->up.shut_wr = true;
		if (shutdown(bufferevent_getfd(c->up.bev), SHUT_WR) < 0)
			c->up.eof = true; /* upstream already gone */
	}
	if (c->up.eof && evbuffer_get_length(uin) == 0 && evbuffer_get_length(cout) == 0 &&
	    !c->client.shut_wr) {
		c->client.shut_wr = true;
		if (shutdown(bufferevent_getfd(c->client.bev), SHUT_WR) < 0)
			c->client.eof = true;
	}
	if (c->client.shut_wr && c->up.shut_wr) {
		conn_close(c, "tunnel closed by both sides", false);
		return STEP_CLOSED;
	}
	return STEP_STOP;
fail:
	conn_close(c, "evbuffer move failed", true);
	return STEP_CLOSED;
}

/*
 * Terminates TLS on the tunnel: a server-side filter over the client bev
 * (leaf for the CONNECT host; the ClientHello already buffered is kept)
 * and a verifying client-side filter over the connected upstream, both
 * handshakes running at once. From here on the conn reads requests
 * inside TLS (tls_accepted(), decide_inner()).
 */
static enum step start_mitm(conn_t *c)
{
	struct bufferevent *fb, *ub;
	char err[256];
	bool lost = false;

	/* TLS reads the sockets from here on (tls.c). */
	plain_reader_free(&c->client);
	plain_reader_free(&c->up);
	fb = tls_wrap_client(proxy_tls(c->px), proxy_base(c->px), c->client.bev, c->tgt.host, &lost,
			     err, sizeof(err));
	if (fb == NULL) {
		if (lost)
			c->client.bev = NULL;
		conn_close(c, err, true);
		return STEP_CLOSED;
	}
	c->client.bev = fb;
	c->client.ssl = bufferevent_openssl_get_ssl(fb);
	bufferevent_setcb(fb, client_read_cb, client_write_cb, client_event_cb, c);
	tune_tls_io(fb);
	bound_underlying(fb);
	bufferevent_setwatermark(fb, EV_READ, 0, PASSAVANT_OUTBUF_HIGH_BYTES);
	bufferevent_setwatermark(fb, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (bufferevent_enable(fb, EV_READ | EV_WRITE) < 0) {
		conn_close(c, "cannot enable the client TLS filter", true);
		return STEP_CLOSED;
	}
	conn_set_mode(c, CONN_MODE_TERMINATED);
	/* The CONNECT's exchange ended with its 200; a failed handshake is
	 * still timed from the tunnel's start. */
	{
		struct timeval t0 = c->ex.t0;

		exchange_reset(&c->ex);
		c->ex.t0 = t0;
	}
	/* The Host the upstream gets: the CONNECT authority, without the
	 * scheme's default port. */
	target_set_authority(&c->tgt, 443);
	c->tgt.path = "";
	c->tgt.path_len = 0;
	ub = c->up.bev;
	c->up.bev = NULL;
	if (ub != NULL && adopt_upstream_tls(c, ub) < 0)
		return STEP_CLOSED;
	conn_set_state(c, CONN_TLS_ACCEPT);
	arm_timer(c, c->head_ms);
	return STEP_STOP;
}

static void stop_peek(conn_t *c)
{
	if (c->peek_ev != NULL) {
		event_free(c->peek_ev);
		c->peek_ev = NULL;
	}
}

/*
 * TLS_SNIFF, peek mode: the first bytes are looked at with MSG_PEEK, left
 * in the socket. A ClientHello there lets TLS run on the socket itself
 * (tls_wrap_client() on a bufferevent with nothing buffered), the cheap
 * path; anything else, or fewer than three bytes, is read by the
 * bufferevent as usual and step_tls_sniff() decides (a TLS filter then
 * takes bytes already read).
 */
static void peek_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	unsigned char head[3];
	ssize_t n;

	(void)events;
	n = recv(fd, head, sizeof(head), MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return; /* persistent event: wait for the next readiness */
	stop_peek(c);
	if (n == (ssize_t)sizeof(head) && tls_sniff(head, (size_t)n) == TLS_SNIFF_TLS &&
	    evbuffer_get_length(out_of(&c->client)) == 0 && evbuffer_get_length(in_of(&c->client)) == 0) {
		if (start_mitm(c) == STEP_CLOSED)
			return;
	}
	drive(c);
}

/* Enters peek mode when nothing after the CONNECT head was read yet (the
 * usual case: clients wait for the 200). Best effort: without it the
 * bufferevent reads and step_tls_sniff() decides. */
static void start_peek(conn_t *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->client.bev);

	if (fd < 0 || evbuffer_get_length(in_of(&c->client)) > 0 || c->client.eof)
		return;
	c->peek_ev = event_new(proxy_base(c->px), fd, EV_READ | EV_PERSIST, peek_cb, c);
	if (c->peek_ev == NULL)
		return;
	if (event_add(c->peek_ev, NULL) < 0) {
		stop_peek(c);
		return;
	}
	set_reading(&c->client, false);
}

/*
 * TLS_SNIFF: the first bytes of a tunnel to a host the policy terminates.
 * A TLS record header is terminated; anything else (or an upstream that
 * speaks first, as SSH and SMTP do) is relayed opaquely, unless the host
 * has a method restriction, which an opaque relay could not enforce: then
 * it is refused (SPEC §3.1), in plain HTTP, which is what a client that
 * does not speak TLS most likely reads.
 */
static enum step step_tls_sniff(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	unsigned char head[3];
	ev_ssize_t n = 0;
	enum tls_sniff k = TLS_SNIFF_MORE;
	const char *mrule = NULL;
	char w[512];

	if (evbuffer_get_length(in) > 0) {
		n = evbuffer_copyout(in, head, sizeof(head));
		if (n < 0) {
			conn_close(c, "evbuffer_copyout failed", true);
			return STEP_CLOSED;
		}
		k = tls_sniff(head, (size_t)n);
	}
	if (k == TLS_SNIFF_MORE && (c->client.eof || c->up.eof || evbuffer_get_length(in_of(&c->up)) > 0))
		k = TLS_SNIFF_OTHER;
	if (k != TLS_SNIFF_MORE)
		stop_peek(c);
	switch (k) {
	case TLS_SNIFF_MORE:
		return STEP_STOP;
	case TLS_SNIFF_TLS:
		return start_mitm(c);
	case TLS_SNIFF_OTHER:
		break;
	}
	if (c->plan == TUNNEL_TERMINATE_ONLY) {
		(void)policy_method_allowed(pol(c), c->tgt.host, c->tgt.port, "CONNECT", &mrule);
		if (mrule == NULL)
			mrule = "allowedMethods";
		/* The 200 went out, but no answer inside the tunnel yet. */
		c->ex.phase = EX_WAIT_RESPONSE;
		return refuse(c, 403, "blocked-by-sandbox-runtime", "connect", mrule,
			      "passavant: %s refused by %s: the tunnel does not carry TLS, so methods "
			      "cannot be enforced",
			      what(c, w, sizeof(w)), mrule);
	}
	/* Plain bytes in the tunnel (SPEC §4.3: every response from every
	 * host): what the upstream sends is remasked like an upgraded
	 * stream. Nothing is injected into it. */
	if (proxy_masks(c->px) != NULL) {
		bool oom = false;

		if (c->mask == NULL)
			c->mask = cmask_new(proxy_masks(c->px), &oom);
		if (oom || (c->mask != NULL &&
			    (cmask_body_begin(c->mask, CMASK_IN, NULL, 0, false, false) < 0 ||
			     cmask_tunnel_begin(c->mask) < 0))) {
			conn_close(c, "out of memory starting to remask a tunnel", true);
			return STEP_CLOSED;
		}
		c->tunnel_masked = c->mask != NULL;
	}
	conn_set_state(c, CONN_RELAY);
	arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
}

/* Encrypted bytes of a TLS filter client still in its underlying
 * bufferevent's output (0 for TLS on the socket, or plain). */
static size_t under_left(const conn_t *c)
{
	struct bufferevent *under = c->client.bev != NULL ? bufferevent_get_underlying(c->client.bev) : NULL;

	return under != NULL ? evbuffer_get_length(bufferevent_get_output(under)) : 0;
}

/* Encrypted bytes for a TLS client not yet handed to its socket. */
static size_t tls_unsent(const conn_t *c)
{
	return c->client.ssl != NULL ? wbio_pending(c->client.ssl) + under_left(c) : 0;
}

/* The underlying output of a draining TLS filter changed: once empty,
 * the conn's write callback runs (deferred: never inside libevent's
 * write). */
static void under_drained_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	conn_t *c = arg;

	(void)info;
	if (evbuffer_get_length(buf) == 0 && c->client.bev != NULL)
		bufferevent_trigger(c->client.bev, EV_WRITE, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

static enum step step_drain(conn_t *c)
{
	/* Lingering close of the client: discard what it still sends. */
	(void)evbuffer_drain(in_of(&c->client), evbuffer_get_length(in_of(&c->client)));
	if (!c->client.shut_wr && evbuffer_get_length(out_of(&c->client)) == 0 && c->client.ssl != NULL) {
		/*
		 * TLS: the answer may still sit encrypted in the underlying
		 * bufferevent's output, which libevent keeps flushing while
		 * the conn lives; a shutdown(2) now could cut it. Queue
		 * close_notify behind it and wait for the client to close
		 * (or the linger timer).
		 */
		c->client.shut_wr = true;
		arm_timer(c, CONN_LINGER_MS);
	}
	if (c->client.shut_wr && c->client.ssl != NULL && !c->tls_closing && !c->truncated) {
		/* close_notify is queued, or retried when the write BIO,
		 * full right now, has room (its empty notice comes back). */
		if (SSL_shutdown(c->client.ssl) >= 0)
			c->tls_closing = true;
		ERR_clear_error();
	}
	if (!c->client.shut_wr && evbuffer_get_length(out_of(&c->client)) == 0) {
		c->client.shut_wr = true;
		if (shutdown(bufferevent_getfd(c->client.bev), SHUT_WR) < 0) {
			conn_close(c, "client gone", false);
			return STEP_CLOSED;
		}
		arm_timer(c, CONN_LINGER_MS);
	}
	if (tls_unsent(c) > 0) {
		/* Encrypted bytes still wait for the socket: in the write BIO
		 * (wbio.h) or, for a TLS filter, in the underlying
		 * bufferevent's output. The write callback comes back when
		 * they are sent (wbio_notify_empty(), under_drained_cb()), and
		 * the linger starts over from there. */
		if (wbio_pending(c->client.ssl) > 0)
			wbio_notify_empty(c->client.ssl);
		else if (c->under_cb == NULL)
			c->under_cb = evbuffer_add_cb(bufferevent_get_output(bufferevent_get_underlying(c->client.bev)),
						      under_drained_cb, c);
		c->drain_wait = true;
		return STEP_STOP;
	}
	if (c->truncated && c->client.shut_wr && !c->tls_closing) {
		/* Everything sent: end TCP without close_notify. */
		c->tls_closing = true;
		if (shutdown(bufferevent_getfd(c->client.bev), SHUT_WR) < 0) {
			conn_close(c, "client gone", false);
			return STEP_CLOSED;
		}
	}
	if (c->drain_wait && c->client.shut_wr) {
		c->drain_wait = false;
		arm_timer(c, CONN_LINGER_MS);
	}
	if (c->client.shut_wr && c->client.eof) {
		conn_close(c, "done", false);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

/*
 * An empty input buffer may still hold the chain libevent reserved for a
 * read that found nothing (a 32 KiB allocation for an SSL side, which
 * reserves a whole record before each SSL_read). Draining a non-empty
 * evbuffer by its whole length frees its chains (an empty one is left as
 * it is). OpenSSL's own record buffers go too (tls_release_buffers()):
 * idle terminated tunnels then hold no buffer memory.
 */
static void release_idle_buffers(conn_t *c, struct conn_side *s)
{
	struct evbuffer *in;

	if (s->bev == NULL || s->ssl == NULL)
		return;
	in = bufferevent_get_input(s->bev);
	/* evbuffer_drain() returns at once on an empty buffer; draining one
	 * byte added to it frees every chain (it lands in the reserved one). */
	if (evbuffer_get_length(in) == 0 && evbuffer_add(in, "", 1) == 0)
		(void)evbuffer_drain(in, 1);
	if (SSL_is_init_finished(s->ssl) == 1)
		tls_release_buffers(proxy_tls(c->px), s->ssl);
}

/* Enables or disables reading on s; a side whose reading comes back may
 * need a kick again (kick_tls_read()). */
static void set_reading(struct conn_side *s, bool on)
{
	bool enabled;

	if (s->rd != NULL) {
		if (on && !s->reading)
			s->reading = event_add(s->rd, NULL) == 0;
		else if (!on && s->reading && event_del(s->rd) == 0)
			s->reading = false;
		return;
	}
	enabled = (bufferevent_get_enabled(s->bev) & EV_READ) != 0;

	/* libevent adds the event again on every enable (twice per step and
	 * side): only a change is passed on. A filter's enable also reads what
	 * its underlying holds, so it is always passed on. */
	if (on) {
		if (!enabled)
			s->kicked = false;
		if (!enabled || bufferevent_get_underlying(s->bev) != NULL)
			(void)bufferevent_enable(s->bev, EV_READ);
	} else if (enabled || bufferevent_get_underlying(s->bev) != NULL) {
		(void)bufferevent_disable(s->bev, EV_READ);
	}
}

/*
 * OpenSSL reads ahead (ca_server_ctx(), tls.c): one read() takes several
 * records, and the ones not yet decrypted wait inside the SSL object, where
 * epoll cannot see them. libevent's SSL bufferevent on a socket only reads
 * again when the socket is readable, so without a nudge those records would
 * wait for the peer's next bytes, or forever at the end of a response.
 * When reading is on, the input has room and OpenSSL holds bytes, the read
 * event is made active: libevent runs its SSL_read loop in this loop
 * iteration, with no system call. kicked stops a kick that found only part
 * of a record from repeating: it is cleared by the next read callback (the
 * socket brought the rest) or when reading is switched back on.
 */
static void kick_tls_read(struct conn_side *s)
{
	/* During a handshake OpenSSL consumes what it buffered itself. */
	if (s->bev == NULL || s->ssl == NULL || s->kicked || bufferevent_get_underlying(s->bev) != NULL ||
	    SSL_is_init_finished(s->ssl) != 1)
		return;
	if ((bufferevent_get_enabled(s->bev) & EV_READ) == 0 ||
	    evbuffer_get_length(bufferevent_get_input(s->bev)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		return;
	if (SSL_has_pending(s->ssl) != 1)
		return;
	s->kicked = true;
	event_active(&s->bev->ev_read, EV_READ, 1);
}

/*
 * Decrypts the records OpenSSL already holds (read-ahead) into s's input
 * now, rather than one record per trip through the event loop: a step
 * then passes several records on at once, and the other side's TLS writes
 * them with one send (wbio.h). A record only partly buffered makes
 * SSL_read() try the socket once (non-blocking); "need more" then sets
 * kicked, so no further pull or kick tries again before the socket brings
 * bytes (the read callback clears it). close_notify and errors are
 * handled here, not left to libevent: its read event could be switched
 * off (update_io()) before it runs, and the socket, drained, would never
 * wake it again.
 * Returns 0, 1 when s ended cleanly (close_notify), 2 when it failed
 * (eof set in both cases), -1 when out of memory.
 */
static int pull_tls(struct conn_side *s) WUNRES;
static int pull_tls(struct conn_side *s)
{
	struct evbuffer *in;
	struct evbuffer_iovec v;
	int n;

	if (s->bev == NULL || s->ssl == NULL || s->eof || s->kicked || bufferevent_get_underlying(s->bev) != NULL ||
	    (bufferevent_get_enabled(s->bev) & EV_READ) == 0 || SSL_is_init_finished(s->ssl) != 1)
		return 0;
	in = bufferevent_get_input(s->bev);
	while (evbuffer_get_length(in) < PASSAVANT_OUTBUF_HIGH_BYTES && SSL_has_pending(s->ssl) == 1) {
		if (evbuffer_reserve_space(in, CONN_TLS_SINGLE_READ_BYTES, &v, 1) < 1)
			return -1;
		ERR_clear_error();
		n = SSL_read(s->ssl, v.iov_base,
			     v.iov_len < CONN_TLS_SINGLE_READ_BYTES ? (int)v.iov_len : CONN_TLS_SINGLE_READ_BYTES);
		if (n > 0) {
			v.iov_len = (size_t)n;
			if (evbuffer_commit_space(in, &v, 1) < 0)
				return -1;
			continue;
		}
		switch (SSL_get_error(s->ssl, n)) {
		case SSL_ERROR_WANT_READ:
			s->kicked = true;
			return 0;
		case SSL_ERROR_ZERO_RETURN:
			/* close_notify: the peer sends nothing more. */
			s->eof = true;
			return 1;
		case SSL_ERROR_SSL:
		case SSL_ERROR_SYSCALL: {
			unsigned long e = ERR_peek_error();
			char why[160] = "connection closed without close_notify";

			if (e != 0)
				ERR_error_string_n(e, why, sizeof(why));
			log_debug("TLS read from %s: %s", s->peer, why);
			ERR_clear_error();
			s->eof = true;
			return 2;
		}
		default:
			/* WANT_WRITE (a key update to answer while the socket
			 * is full) and the like: libevent's handler retries. */
			ERR_clear_error();
			event_active(&s->bev->ev_read, EV_READ, 1);
			return 0;
		}
	}
	return 0;
}

/*
 * Plain sockets are read here, not by libevent's socket bufferevent: its
 * evbuffer_read() asks the kernel how much is waiting (ioctl FIONREAD)
 * before every read and reads at most 4 KiB. One recv() of up to
 * CONN_PLAIN_READ_BYTES replaces both; the bytes are copied into the
 * input (a chain sized to them: a larger chain reserved for a short read
 * would travel half empty to the other side's output). The bufferevent
 * keeps writing. EOF and errors reach the event callbacks as libevent
 * reports them (BEV_EVENT_READING with EOF or ERROR), reading stopped.
 */
#define CONN_PLAIN_READ_BYTES (64 * 1024)

static void plain_read(conn_t *c, struct conn_side *s)
{
	char buf[CONN_PLAIN_READ_BYTES];
	size_t len = evbuffer_get_length(in_of(s)), room;
	ssize_t n;

	room = len < PASSAVANT_OUTBUF_HIGH_BYTES ? PASSAVANT_OUTBUF_HIGH_BYTES - len : 0;
	if (room > sizeof(buf))
		room = sizeof(buf);
	if (room == 0) {
		update_io(c);
		return;
	}
	n = recv(event_get_fd(s->rd), buf, room, 0);
	if (n > 0) {
		int r;

		/* libevent freezes the end of a socket bufferevent's input
		 * and unfreezes it around its own reads; so do we. */
		(void)evbuffer_unfreeze(in_of(s), 0);
		r = evbuffer_add(in_of(s), buf, (size_t)n);
		(void)evbuffer_freeze(in_of(s), 0);

		/* Plain bytes may carry real values (an upstream's answer
		 * before remasking): no copy stays behind. */
		if (proxy_masks(c->px) != NULL)
			explicit_bzero(buf, (size_t)n);
		if (r < 0) {
			conn_close(c, "out of memory reading a socket", true);
			return;
		}
		drive(c);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	set_reading(s, false);
	if (s == &c->client)
		client_event_cb(s->bev, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
	else
		up_event_cb(s->bev, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
}

/* The read event of either plain side: the socket tells which. */
static void plain_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;

	(void)events;
	plain_read(c, c->client.rd != NULL && event_get_fd(c->client.rd) == fd ? &c->client : &c->up);
}

/* Gives the plain side s (bev connected, no TLS) its read event; reading
 * starts with set_reading(). */
static int plain_reader_new(conn_t *c, struct conn_side *s)
{
	evutil_socket_t fd = bufferevent_getfd(s->bev);

	if (fd < 0)
		return -1;
	plain_reader_free(s);
	(void)bufferevent_disable(s->bev, EV_READ);
	s->rd = event_new(proxy_base(c->px), fd, EV_READ | EV_PERSIST, plain_cb, c);
	return s->rd != NULL ? 0 : -1;
}

static void plain_reader_free(struct conn_side *s)
{
	if (s->rd != NULL) {
		event_free(s->rd);
		s->rd = NULL;
	}
	s->reading = false;
}

/* Which sides may read: the back-pressure rule of the file comment. */
static void update_io(conn_t *c)
{
	bool client_read, up_read;

	/* In peek mode the socket's bytes stay unread (peek_cb()). */
	client_read = !c->client.eof && c->peek_ev == NULL &&
		      evbuffer_get_length(in_of(&c->client)) < PASSAVANT_OUTBUF_HIGH_BYTES;
	if (c->up.bev != NULL && evbuffer_get_length(out_of(&c->up)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		client_read = false;
	set_reading(&c->client, client_read);
	kick_tls_read(&c->client);
	if (c->up.bev == NULL)
		return;
	up_read = !c->up.eof && evbuffer_get_length(out_of(&c->client)) < PASSAVANT_OUTBUF_HIGH_BYTES &&
		  evbuffer_get_length(in_of(&c->up)) < PASSAVANT_OUTBUF_HIGH_BYTES;
	set_reading(&c->up, up_read);
	kick_tls_read(&c->up);
}

/* Makes all the progress the buffers allow. May free c. */
static void drive(conn_t *c)
{
	enum step st = STEP_AGAIN;

	while (st == STEP_AGAIN) {
		int pc = pull_tls(&c->client), pu = pull_tls(&c->up);

		if (pc < 0 || pu < 0) {
			conn_close(c, "out of memory reading TLS records", true);
			return;
		}
		if (pc == 2) {
			/* As client_event_cb() on an error. */
			conn_close(c, "client TLS error", false);
			return;
		}
		if (pu > 0) /* as up_event_cb(): what came is passed on */
			c->up.reusable = false;
		if (pu == 2)
			c->up.failed = true;
		switch (c->state) {
		case CONN_READ_HEAD:
			st = step_read_head(c);
			break;
		case CONN_RELAY:
			st = c->mode == CONN_MODE_TUNNEL || c->mode == CONN_MODE_UPGRADED ? step_tunnel(c) : step_http(c);
			break;
		case CONN_DRAINING:
			st = step_drain(c);
			break;
		case CONN_TLS_SNIFF:
			st = step_tls_sniff(c);
			break;
		case CONN_TLS_ACCEPT:
			/* The handshake's end comes as an event (client_event_cb). */
			if (c->client.eof) {
				conn_close(c, "client closed during the TLS handshake", false);
				return;
			}
			st = STEP_STOP;
			break;
		case CONN_ACCEPTED:
		case CONN_DECIDE:
		case CONN_TUNNEL_CONNECTING:
		case CONN_UPSTREAM_CONNECTING:
			st = STEP_STOP;
			break;
		case CONN_CLOSED:
			return;
		}
		if (st == STEP_CLOSED)
			return;
		if (flush_pending(&c->up) < 0 || flush_pending(&c->client) < 0) {
			conn_close(c, "evbuffer move failed", true);
			return;
		}
	}
	release_idle_buffers(c, &c->client);
	release_idle_buffers(c, &c->up);
	update_io(c);
}

/* ------------------------------------------------------------------ */
/* Client callbacks, timer                                              */
/* ------------------------------------------------------------------ */

static void client_read_cb(struct bufferevent *bev, void *arg)
{
	conn_t *c = arg;

	(void)bev;
	c->client.kicked = false;
	drive(c);
}

static void client_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	drive(arg);
}

/*
 * The client's TLS handshake completed: note whether its SNI names the
 * CONNECT host (a mismatch is answered 421 to its first request, inside
 * TLS, so it can read why), then read requests inside the tunnel.
 */
static void tls_accepted(conn_t *c)
{
	proxy_note_churn(c->px);
	c->client.kicked = false;
	c->sni[0] = '\0';
	c->sni_mismatch = tls_client_sni(c->client.bev, c->sni, sizeof(c->sni)) &&
			  strcmp(c->sni, c->tgt.host) != 0;
	http1_reset(c->client.http);
	exchange_reset(&c->ex);
	c->first_request = false;
	conn_set_state(c, CONN_READ_HEAD);
	arm_timer(c, c->idle_ms);
	drive(c);
}

static void client_event_cb(struct bufferevent *bev, short events, void *arg)
{
	conn_t *c = arg;

	if (c->state == CONN_TLS_ACCEPT) {
		if (events & BEV_EVENT_CONNECTED) {
			tls_accepted(c);
			return;
		}
		if (events & BEV_EVENT_ERROR) {
			char why[256];

			char reason[REASON_MAX];

			tls_failure_reason(bev, why, sizeof(why));
			(void)snprintf(reason, sizeof(reason),
				       "passavant: TLS handshake with the client for %s:%u failed: %s "
				       "(a client must trust the session's trust.pem)",
				       c->tgt.host, (unsigned)c->tgt.port, why);
			log_info("conn %s: %s", c->client.peer, reason);
			/* SPEC §6: one line per refused connection; a client
			 * that does not trust the session CA shows up here. */
			c->ex.audited = false;
			audit_line(c, "connect", "allow", reason, c->rule);
			conn_close(c, "client TLS handshake failed", false);
			return;
		}
	}
	if (events & BEV_EVENT_ERROR) {
		/* Reset or write failure: nothing more can reach the client. */
		conn_close(c, "client connection error", false);
		return;
	}
	if (events & BEV_EVENT_EOF) {
		c->client.eof = true;
		rearm_tls_write(&c->client);
	}
	drive(c);
}

static void timer_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	int64_t idle;

	(void)fd;
	(void)events;
	switch (c->state) {
	case CONN_READ_HEAD:
		conn_close(c, c->ex.phase != EX_IDLE ? "request head timeout" : "idle timeout", false);
		return;
	case CONN_RELAY:
		/* The timer is not re-armed per byte: check the real idle time
		 * and sleep again for the remainder. */
		idle = ms_since(c, &c->last);
		if (idle < (int64_t)c->idle_ms) {
			arm_timer(c, c->idle_ms - (unsigned)idle);
			return;
		}
		if ((c->mode == CONN_MODE_HTTP || c->mode == CONN_MODE_TERMINATED) && !responding(c)) {
			/* The upstream took the request and went quiet: tell
			 * the client (504) rather than just hanging up. */
			char w[512];

			if (refuse(c, 504, NULL, "request", c->rule,
				   "passavant: %s: no response from %s within %u ms",
				   what(c, w, sizeof(w)), c->up.peer, c->idle_ms) != STEP_CLOSED)
				drive(c);
			return;
		}
		conn_close(c, "idle timeout", false);
		return;
	case CONN_DRAINING:
		if (c->client.ssl != NULL && (tls_unsent(c) > 0 || evbuffer_get_length(out_of(&c->client)) > 0) &&
		    wbio_sent(c->client.ssl) + under_left(c) != c->drain_sent) {
			/* The client still takes the answer, slowly: wait
			 * while bytes keep going out (idleTimeoutMs without
			 * any ends it, as before). */
			c->drain_sent = wbio_sent(c->client.ssl) + under_left(c);
			arm_timer(c, c->idle_ms);
			return;
		}
		conn_close(c, c->client.shut_wr ? "linger timeout" : "drain timeout", false);
		return;
	case CONN_TLS_SNIFF:
	case CONN_TLS_ACCEPT:
		conn_close(c, "TLS handshake timeout", false);
		return;
	case CONN_ACCEPTED:
	case CONN_DECIDE:
	case CONN_TUNNEL_CONNECTING:
	case CONN_UPSTREAM_CONNECTING:
	case CONN_CLOSED:
		conn_close(c, "timeout", false);
		return;
	}
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

/* "addr:port" of a peer for logs. */
static void format_peer(const struct sockaddr *sa, int len, char *buf, size_t buflen)
{
	char text[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		(void)inet_ntop(AF_INET, &s4->sin_addr, text, sizeof(text));
		(void)snprintf(buf, buflen, "%s:%u", text, (unsigned)ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		(void)inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof(text));
		(void)snprintf(buf, buflen, "[%s]:%u", text, (unsigned)ntohs(s6->sin6_port));
	} else {
		(void)snprintf(buf, buflen, "(unix)");
	}
}

conn_t *conn_new(proxy_t *px, evutil_socket_t fd, const struct sockaddr *peer, int peerlen)
{
	const struct policy_limits *lim;
	struct conn **list;
	conn_t *c;
	int one = 1;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		log_warn("accept");
		(void)evutil_closesocket(fd);
		return NULL;
	}
	c->px = px;
	c->state = CONN_ACCEPTED;
	c->mode = CONN_MODE_HTTP;
	exchange_reset(&c->ex);
	c->first_request = true;
	c->pol = proxy_policy_get(px);
	lim = policy_limits(pol(c));
	c->head_ms = lim->handshake_timeout_ms;
	c->idle_ms = lim->idle_timeout_ms;
	format_peer(peer, peerlen, c->client.peer, sizeof(c->client.peer));
	/* Linked first, so that conn_close() can unlink on any failure. */
	list = proxy_conn_list(px);
	c->next = *list;
	if (c->next != NULL)
		c->next->pprev = &c->next;
	c->pprev = list;
	*list = c;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		log_warn("client %s: TCP_NODELAY", c->client.peer);
	c->client.bev = bufferevent_socket_new(proxy_base(px), fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->client.bev == NULL) {
		(void)evutil_closesocket(fd);
		goto fail;
	}
	c->client.http = http1_new(HTTP1_REQUEST, lim->max_header_bytes);
	c->up.http = http1_new(HTTP1_RESPONSE, lim->max_header_bytes);
	c->timer = evtimer_new(proxy_base(px), timer_cb, c);
	c->client.pending = evbuffer_new();
	c->up.pending = evbuffer_new();
	if (c->client.http == NULL || c->up.http == NULL || c->timer == NULL ||
	    c->client.pending == NULL || c->up.pending == NULL)
		goto fail;
	bufferevent_setcb(c->client.bev, client_read_cb, client_write_cb, client_event_cb, c);
	tune_io(c->client.bev);
	/* No read watermark on a plain socket: update_io() bounds the input
	 * (libevent's watermark callback re-adds the read event at every
	 * drain, five times per request). */
	bufferevent_setwatermark(c->client.bev, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (plain_reader_new(c, &c->client) < 0 || bufferevent_enable(c->client.bev, EV_WRITE) < 0)
		goto fail;
	set_reading(&c->client, true);
	conn_set_state(c, CONN_READ_HEAD);
	arm_timer(c, c->head_ms);
	return c;
fail:
	conn_close(c, "out of memory accepting a connection", true);
	return NULL;
}

void conn_close(conn_t *c, const char *reason, bool is_error)
{
	if (c->state == CONN_CLOSED)
		return;
	/* An opaque tunnel is audited when it ends, with its byte counts. */
	if (c->mode == CONN_MODE_TUNNEL && responding(c) && c->ex.status == 200)
		audit_line(c, "tunnel", "allow", NULL, c->rule);
	conn_set_state(c, CONN_CLOSED);
	proxy_note_churn(c->px);
	if (is_error)
		log_warnx("conn %s: %s", c->client.peer, reason);
	else
		log_debug("conn %s: closed: %s", c->client.peer, reason);
	if (c->dial != NULL) {
		upstream_cancel(c->dial);
		c->dial = NULL;
	}
	plain_reader_free(&c->up);
	plain_reader_free(&c->client);
	if (c->up.bev != NULL) {
		if (c->up.ssl != NULL)
			wbio_detach(c->up.ssl);
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
	}
	if (c->client.bev != NULL) {
		if (c->client.ssl != NULL)
			wbio_detach(c->client.ssl);
		if (c->under_cb != NULL && bufferevent_get_underlying(c->client.bev) != NULL)
			(void)evbuffer_remove_cb_entry(bufferevent_get_output(bufferevent_get_underlying(c->client.bev)),
						       c->under_cb);
		c->under_cb = NULL;
		bufferevent_free(c->client.bev);
		c->client.bev = NULL;
	}
	http1_free(c->client.http);
	c->client.http = NULL;
	http1_free(c->up.http);
	c->up.http = NULL;
	if (c->timer != NULL) {
		event_free(c->timer);
		c->timer = NULL;
	}
	stop_peek(c);
	if (c->client.pending != NULL) {
		evbuffer_free(c->client.pending);
		c->client.pending = NULL;
	}
	if (c->up.pending != NULL) {
		evbuffer_free(c->up.pending);
		c->up.pending = NULL;
	}
	wipe_free(c->head_out);
	c->head_out = NULL;
	if (c->tail_ev != NULL) {
		event_free(c->tail_ev);
		c->tail_ev = NULL;
	}
	cmask_free(c->mask);
	c->mask = NULL;
	if (c->slot) {
		proxy_tunnel_release(c->px);
		c->slot = false;
	}
	if (c->pprev != NULL) {
		*c->pprev = c->next;
		if (c->next != NULL)
			c->next->pprev = c->pprev;
		c->pprev = NULL;
	}
	proxy_policy_put(c->pol);
	c->pol = NULL;
	free(c);
}

void conn_close_all(struct conn **list)
{
	while (*list != NULL)
		conn_close(*list, "proxy stopping", false);
}

/*
 * conn.c - one client connection: its state and mode, the audit line and
 * the refusals, conn_drive(), draining and the single teardown
 * (conn_close()). The other parts are listed in conn_int.h.
 *
 * States (conn_set_state()):
 *
 *   ACCEPTED -> READ_HEAD -> DECIDE -+-> TUNNEL_CONNECTING -+-> RELAY (opaque tunnel)
 *                  ^                 |                      +-> TLS_SNIFF -+-> RELAY (opaque)
 *                  |                 |                                     +-> [TLS_UPSTREAM ->] TLS_ACCEPT -+-> READ_HEAD (inside TLS)
 *                  |                 |                                                                       +-> RELAY (mode H2: h2.c)
 *                  |                 +-> UPSTREAM_CONNECTING -> RELAY (http) -+
 *                  |                 +-> (refusal) DRAINING -> CLOSED         |
 *                  +--------------- keep-alive: next request <----------------+
 *
 * An intercepted connection (intercept.c; mode RAW until its bytes are
 * known) starts in INTERCEPT_SNIFF instead of READ_HEAD:
 *
 *   ACCEPTED -> INTERCEPT_SNIFF -+-> (ClientHello: SNI) DECIDE -> TUNNEL_CONNECTING -> as a CONNECT,
 *                                |      without its 200 (mode RAW -> TUNNEL)
 *                                +-> (HTTP request line) READ_HEAD (mode HTTP, origin form + Host)
 *                                +-> (anything else, nothing in time) CLOSED, refused
 *
 * Modes (conn_set_mode()): what the client's bytes are. HTTP (absolute-
 * form requests) until a CONNECT's 200 makes it a TUNNEL; TLS_SNIFF turns
 * a tunnel that speaks TLS to a terminated host into TERMINATED (origin-
 * form requests inside TLS); a 101 makes HTTP or TERMINATED an UPGRADED
 * stream. An intercepted connection is RAW (no HTTP spoken: a refusal
 * closes) until its first bytes make it HTTP or, through its tunnel,
 * TUNNEL. RELAY runs conn_step_http() in HTTP and TERMINATED, and
 * conn_step_tunnel() in TUNNEL and UPGRADED. Each request/response is one
 * struct exchange (exchange.c), reset for the next on keep-alive.
 *
 * Every callback only records what happened (EOF, error) and calls
 * conn_drive(), which makes all the progress the buffers allow, state by
 * state, and finally recomputes which side may read (sockio_update()).
 * The rule for back-pressure is one place: a side reads only while its own
 * input and the peer's output buffer are below PASSAVANT_OUTBUF_HIGH_BYTES;
 * the peer's write callback fires at half of that (its low watermark) and
 * drives again.
 *
 * TLS termination (SPEC §5, docs/tls.md, mitm.c): after "200 Connection
 * Established" to a host the policy terminates, TLS_SNIFF looks at the
 * first bytes the client sends. A TLS ClientHello gets TLS over the client
 * (accepting, leaf for the CONNECT host) and over the already connected
 * upstream (connecting, verified); both handshakes run at once
 * (TLS_ACCEPT). Requests inside go through the same pipeline as plain
 * HTTP (decide.c). Plain HTTP in a tunnel is read as requests with the
 * CONNECT target as their destination; anything else is refused, and so
 * is plain HTTP to a host with a method restriction (SPEC §3.1).
 */
#include "conn_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "audit.h"
#include "h2.h"
#include "base/defaults.h"
#include "log.h"
#include "zone.h"
#include "sockio.h"
#include "tls.h"
#include "wbio.h"

/* How long a refused client gets to read our answer and close, once our
 * write side is shut (lingering close: closing with unread input would
 * send a RST that can destroy the response in flight). */
#define CONN_LINGER_MS 2000

/* What a request target that carries a real value is written as. */
#define REDACTED "/[redacted: it carries a real value]"

static const char *state_name(enum conn_state s)
{
	switch (s) {
	case CONN_ACCEPTED:
		return "ACCEPTED";
	case CONN_INTERCEPT_SNIFF:
		return "INTERCEPT_SNIFF";
	case CONN_READ_HEAD:
		return "READ_HEAD";
	case CONN_DECIDE:
		return "DECIDE";
	case CONN_TUNNEL_CONNECTING:
		return "TUNNEL_CONNECTING";
	case CONN_TLS_SNIFF:
		return "TLS_SNIFF";
	case CONN_PASS_HELLO:
		return "PASS_HELLO";
	case CONN_PASS_RETRY:
		return "PASS_RETRY";
	case CONN_TLS_UPSTREAM:
		return "TLS_UPSTREAM";
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
void conn_set_state(conn_t *c, enum conn_state s)
{
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_debug("conn %s: %s -> %s", c->client.peer, state_name(c->state), state_name(s));
	c->state = s;
	if (s != CONN_READ_HEAD)
		timerclear(&c->between);
}

void conn_use_policy(conn_t *c)
{
	/* Taken before the old one is put: both are alive, so they are the
	 * same object exactly when the pointers are equal. */
	proxy_policy_t *now = proxy_policy_get(c->px);

	if (now != c->pol)
		c->tun_decision.valid = false;
	proxy_policy_put(c->pol);
	c->pol = now;
}

void conn_body_injected_note(conn_t *c)
{
	if (!c->body_inj && c->mask != NULL && cmask_body_injected(c->mask)) {
		c->body_inj = true;
		proxy_body_injected_open(c->px);
	}
}

void conn_body_injected_done(conn_t *c)
{
	if (c->body_inj) {
		c->body_inj = false;
		proxy_body_injected_done(c->px);
	}
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
	case CONN_MODE_RAW:
		return "RAW";
	case CONN_MODE_H2:
		return "H2";
	}
	return "?";
}

/* The only place the mode changes. */
void conn_set_mode(conn_t *c, enum conn_mode m)
{
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_debug("conn %s: mode %s -> %s", c->client.peer, mode_name(c->mode), mode_name(m));
	c->mode = m;
}

void conn_now(struct timeval *tv)
{
	struct timespec t = {0, 0};

	(void)clock_gettime(CLOCK_MONOTONIC, &t);
	tv->tv_sec = t.tv_sec;
	tv->tv_usec = t.tv_nsec / 1000;
}

int64_t conn_ms_since(const struct timeval *t)
{
	struct timeval now;

	conn_now(&now);
	return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_usec - t->tv_usec) / 1000;
}

void conn_touch(conn_t *c)
{
	conn_now(&c->last);
}

void conn_arm_timer(conn_t *c, unsigned ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (event_add(c->timer, &tv) < 0)
		log_warnx("conn %s: cannot arm timer", c->client.peer);
}

void conn_arm_between(conn_t *c)
{
	unsigned ms = c->idle_ms;

	conn_touch(c);
	c->between = c->last;
	if (c->up.bev != NULL && c->up_keep_ms > 0 && c->up_keep_ms < ms)
		ms = c->up_keep_ms;
	conn_arm_timer(c, ms);
}

/*
 * READ_HEAD between requests, the timer fired: while the client's
 * idleTimeoutMs runs, an upstream kept for the next request goes at
 * upstreamKeepAliveMs. Its TLS state is most of what an idle terminated
 * tunnel holds (docs/architecture.md "Request cost"); the next request
 * dials again (send_inner(), send_plain()), resuming TLS where the
 * upstream allows it. Returns false when the client's own time is up, or
 * the connection is not between requests (a first head awaited).
 */
static bool release_idle_upstream(conn_t *c)
{
	int64_t idle;

	if (!timerisset(&c->between))
		return false;
	idle = conn_ms_since(&c->between);
	if (idle < 0 || idle >= (int64_t)c->idle_ms)
		return false;
	if (c->up.bev != NULL) {
		log_debug("conn %s: upstream %s idle for %lld ms: released (upstreamKeepAliveMs %u)",
			  c->client.peer, c->up.peer, (long long)idle, c->up_keep_ms);
		conn_drop_upstream(c);
		proxy_note_churn(c->px);
	}
	conn_arm_timer(c, c->idle_ms - (unsigned)idle);
	return true;
}

/* Target of the current request for audit lines and reasons. */
void conn_audit(conn_t *c, const char *kind, const char *decision, const char *reason,
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
		/* Injected only once the substituted head was handed to the
		 * upstream (conn_send_request(): EX_WAIT_RESPONSE). One whose
		 * dial then failed (refused, the resolved-address guard, a
		 * timeout, the upstream's TLS) or whose client left while it
		 * was dialled sent no real value anywhere, and its line said
		 * "injected" all the same (round 37 of the attack; HTTP/2's
		 * streams since round 14). A request re-sent after its reused
		 * upstream closed did hand its head over once: it stays. */
		r.n_injected = c->ex.phase >= EX_WAIT_RESPONSE
				       ? cmask_injected(c->mask, injected, sizeof(injected) / sizeof(injected[0]))
				       : 0;
		r.injected = injected;
		r.remasked = cmask_remasked(c->mask);
	}
	r.bytes_up = -1;
	r.bytes_down = -1;
	/* Byte counts for what was relayed: a request with a recorded note
	 * was relayed in full too, one cut short or refused after it went
	 * upstream (a 502, a 504, a real value in a later body chunk) in
	 * part; refusals before that have none. */
	if (strcmp(kind, "connect") != 0 &&
	    (reason == NULL || c->ex.phase >= EX_WAIT_RESPONSE || c->ex.cut)) {
		r.bytes_up = (int64_t)c->ex.bytes_up;
		r.bytes_down = (int64_t)c->ex.bytes_down;
	}
	/* A refusal before any head or ClientHello was decided (the raw
	 * lines of interception) has no start: 0, not the clock's age. */
	r.ms = c->ex.t0.tv_sec == 0 && c->ex.t0.tv_usec == 0 ? 0 : conn_ms_since(&c->ex.t0);
	r.tls = terminated(c) ? "terminated" : strcmp(kind, "tunnel") == 0 ? "passthrough" : "none";
	r.proto = strcmp(kind, "request") == 0 && c->client.http != NULL && http1_head_done(c->client.http)
			  ? "http/1.1"
			  : NULL;
	r.reason_is_line = c->ex.raw_line && reason != NULL;
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

/* Answer sent or response complete: flush the client's output, then close
 * it lingering (conn_step_drain()). The upstream is no longer needed. */
enum step conn_enter_draining(conn_t *c)
{
	conn_drop_upstream(c);
	conn_set_state(c, CONN_DRAINING);
	/* Write callback as soon as the output is empty. */
	bufferevent_setwatermark(c->client.bev, EV_WRITE, 0, 0);
	conn_arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
}

/*
 * Answers the current request with an error and drains: audit line, the
 * response of SPEC §5 (xerr: X-Proxy-Error value or NULL), then close. If
 * a response already started, the connection is just closed.
 */
enum step conn_refuse(conn_t *c, int status, const char *xerr, const char *kind, const char *rule,
		      const char *fmt, ...)
{
	char reason[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (responding(c)) {
		/* Too late to answer: the refusal is the exchange's audit
		 * line all the same (with what left), not the cut line
		 * conn_close() would write, which says allow. */
		c->ex.cut = true;
		conn_audit(c, kind, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
		conn_close(c, reason, true);
		return STEP_CLOSED;
	}
	if (c->mode == CONN_MODE_RAW) {
		/* Intercepted, no HTTP spoken (a ClientHello waits): an HTTP
		 * answer would be garbage to the client, and a TLS one would
		 * need a leaf for a host the policy refused (which the CA's
		 * name constraints would not let it verify anyway). The
		 * client sees the connection closed; stderr and the audit
		 * line say why. */
		c->ex.status = 0;
		c->ex.raw_line = true;
		conn_audit(c, kind, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
		log_info("%s", reason);
		conn_close(c, "refused before any HTTP", false);
		return STEP_CLOSED;
	}
	/* An interim (1xx) head not yet sent is dropped with the exchange. */
	(void)evbuffer_drain(c->client.pending, evbuffer_get_length(c->client.pending));
	c->ex.status = status;
	conn_audit(c, kind, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
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
	return conn_enter_draining(c);
}

/* The request head's target as received (*n bytes), "" before the head
 * is done. */
static const char *what_url(const conn_t *c, size_t *n)
{
	*n = 0;
	return http1_head_done(c->client.http) ? http1_url(c->client.http, n) : "";
}

/* "GET http://host:port/path" or "CONNECT host:port" ("TLS host:port"
 * for an intercepted ClientHello) for reasons; the path is cut at 200
 * bytes. */
const char *conn_what(const conn_t *c, char *buf, size_t len)
{
	if (c->ex.redact)
		(void)snprintf(buf, len, "%s %s://%s%s", http1_method(c->client.http),
			       terminated(c) ? "https" : "http", have_target(c) ? c->tgt.authority : "?",
			       REDACTED);
	else if (c->ex.kind == EX_KIND_CONNECT)
		(void)snprintf(buf, len, "%s %s:%u",
			       intercepted(c) && !http1_head_done(c->client.http) ? "TLS" : "CONNECT", c->tgt.host,
			       (unsigned)c->tgt.port);
	else if (terminated(c))
		(void)snprintf(buf, len, "%s https://%s%.*s", http1_method(c->client.http),
			       c->tgt.authority,
			       (int)(c->tgt.path_len > 200 ? 200 : c->tgt.path_len), c->tgt.path);
	else if (have_target(c))
		(void)snprintf(buf, len, "%s http://%s%s%.*s", http1_method(c->client.http),
			       c->tgt.authority, c->tgt.path[0] == '?' ? "/" : "",
			       (int)(c->tgt.path_len > 200 ? 200 : c->tgt.path_len), c->tgt.path);
	else {
		/* Not parsed for this request yet: the head's own target
		 * (cut at 200 bytes), never a previous request's. */
		size_t n;
		const char *u = what_url(c, &n);

		(void)snprintf(buf, len, "%s %.*s", http1_method(c->client.http), (int)(n > 200 ? 200 : n), u);
	}
	return buf;
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

/* DRAINING: flush the client, close_notify or shutdown, linger. */
static enum step conn_step_drain(conn_t *c)
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
		conn_arm_timer(c, CONN_LINGER_MS);
	}
	if (c->client.shut_wr && c->client.ssl != NULL && c->tls_end == TLS_END_OPEN) {
		/* close_notify is queued, or retried when the write BIO,
		 * full right now, has room (its empty notice comes back). */
		if (SSL_shutdown(c->client.ssl) >= 0)
			c->tls_end = TLS_END_NOTIFIED;
		ERR_clear_error();
	}
	if (!c->client.shut_wr && !c->client_rst && evbuffer_get_length(out_of(&c->client)) == 0) {
		c->client.shut_wr = true;
		if (sockio_shutdown_wr(&c->client) < 0) {
			conn_close(c, "client gone", false);
			return STEP_CLOSED;
		}
		conn_arm_timer(c, CONN_LINGER_MS);
	}
	if (sockio_tls_unsent(c) > 0) {
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
	if (c->client_rst && evbuffer_get_length(out_of(&c->client)) == 0) {
		/* Everything sent (upstream_ended()): a cut close-delimited
		 * body ends with an RST, never a FIN, which would be its end. */
		sockio_reset_on_close(&c->client);
		conn_close(c, "close-delimited body cut: client reset", false);
		return STEP_CLOSED;
	}
	if (c->tls_end == TLS_END_TRUNCATE && c->client.shut_wr) {
		/* Everything sent: end TCP without close_notify. */
		c->tls_end = TLS_END_CUT;
		if (sockio_shutdown_wr(&c->client) < 0) {
			conn_close(c, "client gone", false);
			return STEP_CLOSED;
		}
	}
	if (c->drain_wait && c->client.shut_wr) {
		c->drain_wait = false;
		conn_arm_timer(c, CONN_LINGER_MS);
	}
	if (c->client.shut_wr && c->client.eof) {
		conn_close(c, "done", false);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

/* Makes all the progress the buffers allow. May free c. */
void conn_drive(conn_t *c)
{
	enum step st = STEP_AGAIN;

	while (st == STEP_AGAIN) {
		int pc = sockio_pull_tls(&c->client), pu = sockio_pull_tls(&c->up);

		if (pc < 0 || pu < 0) {
			conn_close(c, "out of memory reading TLS records", true);
			return;
		}
		if (pc == 2) {
			/* As conn_client_event_cb() on an error. */
			conn_close(c, wbio_overflowed(c->client.ssl) ? WBIO_ANSWERS_REASON : "client TLS error",
				   false);
			return;
		}
		if (pu > 0) /* as conn_up_event_cb(): what came is passed on */
			c->up.reusable = false;
		if (pu == 2)
			c->up.failed = true;
		switch (c->state) {
		case CONN_READ_HEAD:
			st = conn_step_read_head(c);
			break;
		case CONN_INTERCEPT_SNIFF:
			st = conn_step_intercept(c);
			break;
		case CONN_RELAY:
			if (c->mode == CONN_MODE_H2)
				st = conn_step_h2(c);
			else if (c->mode == CONN_MODE_TUNNEL || c->mode == CONN_MODE_UPGRADED)
				st = conn_step_tunnel(c);
			else
				st = conn_step_http(c);
			break;
		case CONN_DRAINING:
			st = conn_step_drain(c);
			break;
		case CONN_TLS_SNIFF:
			st = conn_step_tls_sniff(c);
			break;
		case CONN_PASS_HELLO:
			st = conn_step_pass_hello(c);
			break;
		case CONN_PASS_RETRY:
			st = conn_step_pass_retry(c);
			break;
		case CONN_TLS_UPSTREAM:
		case CONN_TLS_ACCEPT:
			/* The handshake's end comes as an event (conn_client_event_cb). */
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
		if (sockio_flush_pending(&c->up) < 0 || sockio_flush_pending(&c->client) < 0) {
			conn_close(c, "evbuffer move failed", true);
			return;
		}
	}
	sockio_drive_done(c);
	sockio_update(c);
}

void conn_client_read_cb(struct bufferevent *bev, void *arg)
{
	conn_t *c = arg;

	(void)bev;
	c->client.kicked = false;
	c->client.held = true;
	conn_drive(c);
}

void conn_client_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_drive(arg);
}

void conn_client_event_cb(struct bufferevent *bev, short events, void *arg)
{
	conn_t *c = arg;

	c->client.held = true;
	if (c->state == CONN_TLS_ACCEPT) {
		if (events & BEV_EVENT_CONNECTED) {
			conn_tls_accepted(c);
			return;
		}
		if (events & BEV_EVENT_ERROR) {
			char why[256];

			char reason[REASON_MAX];

			(void)tls_failure_reason(bev, why, sizeof(why));
			(void)snprintf(reason, sizeof(reason),
				       "passavant: TLS handshake with the client for %s:%u failed: %s "
				       "(a client must trust the session's trust.pem)",
				       c->tgt.host, (unsigned)c->tgt.port, why);
			log_info("conn %s: %s", c->client.peer, reason);
			/* SPEC §6: one line per refused connection; a client
			 * that does not trust the session CA shows up here. */
			c->ex.audited = false;
			conn_audit(c, "connect", "allow", reason, c->rule);
			conn_close(c, "client TLS handshake failed", false);
			return;
		}
	}
	if (events & BEV_EVENT_ERROR) {
		/* Reset or write failure: nothing more can reach the client. */
		if (c->client.ssl != NULL && wbio_overflowed(c->client.ssl)) {
			log_info("conn %s: %s", c->client.peer, WBIO_ANSWERS_REASON);
			conn_close(c, WBIO_ANSWERS_REASON, false);
			return;
		}
		conn_close(c, "client connection error", false);
		return;
	}
	if (events & BEV_EVENT_EOF) {
		c->client.eof = true;
		sockio_rearm_tls_write(&c->client);
	}
	conn_drive(c);
}

static void timer_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	int64_t idle;

	(void)fd;
	(void)events;
	switch (c->state) {
	case CONN_READ_HEAD:
		if (c->ex.phase == EX_IDLE && release_idle_upstream(c))
			return;
		conn_close(c, c->ex.phase != EX_IDLE ? "request head timeout" : "idle timeout", false);
		return;
	case CONN_RELAY:
		if (c->mode == CONN_MODE_H2) {
			conn_h2_timeout(c);
			return;
		}
		/* The timer is not re-armed per byte: check the real idle time
		 * and sleep again for the remainder. */
		idle = conn_ms_since(&c->last);
		if (idle < (int64_t)c->idle_ms) {
			conn_arm_timer(c, c->idle_ms - (unsigned)idle);
			return;
		}
		if ((c->mode == CONN_MODE_HTTP || c->mode == CONN_MODE_TERMINATED) && !responding(c)) {
			/* The upstream took the request and went quiet: tell
			 * the client (504) rather than just hanging up. */
			char w[512];

			if (conn_refuse(c, 504, NULL, "request", c->rule,
					"passavant: %s: no response from %s within %u ms",
					conn_what(c, w, sizeof(w)), c->up.peer, c->idle_ms) != STEP_CLOSED)
				conn_drive(c);
			return;
		}
		conn_close(c, "idle timeout", false);
		return;
	case CONN_DRAINING:
		if (c->client.ssl != NULL && (sockio_tls_unsent(c) > 0 || evbuffer_get_length(out_of(&c->client)) > 0) &&
		    wbio_sent(c->client.ssl) + sockio_under_left(c) != c->drain_sent) {
			/* The client still takes the answer, slowly: wait
			 * while bytes keep going out (idleTimeoutMs without
			 * any ends it, as before). */
			c->drain_sent = wbio_sent(c->client.ssl) + sockio_under_left(c);
			conn_arm_timer(c, c->idle_ms);
			return;
		}
		conn_close(c, c->client.shut_wr ? "linger timeout" : "drain timeout", false);
		return;
	case CONN_TLS_SNIFF:
		/* An opaque tunnel (excludeDomains) waits here with the idle
		 * timeout: nobody spoke in it. */
		conn_close(c, c->plan == TUNNEL_OPAQUE ? "idle timeout" : "TLS handshake timeout", false);
		return;
	case CONN_TLS_UPSTREAM:
	case CONN_TLS_ACCEPT:
	case CONN_PASS_HELLO:
	case CONN_PASS_RETRY:
		conn_close(c, "TLS handshake timeout", false);
		return;
	case CONN_INTERCEPT_SNIFF:
		conn_intercept_timeout(c);
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

/*
 * A connection past the waiting limit (proxy_waiting_acquire()): round 21
 * of the attack held 3,000 connections, each with 65,000 bytes of a head
 * it never finished, 218 MB of the proxy's memory until
 * handshakeTimeoutMs. A client that speaks HTTP to the proxy gets a 503
 * (best effort: one send into the new socket's empty buffer), an
 * intercepted one is closed; the refusal is audited like any (the deny
 * records of a flood are summed, proxy_record()).
 */
static void refuse_waiting(proxy_t *px, evutil_socket_t fd, const char *peer, unsigned max, bool http)
{
	char line[REASON_MAX], resp[REASON_MAX + 256];
	int n;

	(void)snprintf(line, sizeof(line),
		       "passavant: refused a connection from %s: %u connections already wait for a first "
		       "allowed request (limits.maxTunnels); retry when they end or time out "
		       "(limits.handshakeTimeoutMs)",
		       peer, max);
	if (http) {
		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 503 Service Unavailable\r\nX-Proxy-Error: too-many-tunnels\r\n"
			     "Content-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
			     strlen(line) + 1, line);
		/* Best effort: the socket is new and its buffer empty; a
		 * client gone already gets nothing, which is the same. */
		if (n > 0 && (size_t)n < sizeof(resp) && send(fd, resp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("client %s: the 503 of the waiting limit: %s", peer, strerror(errno));
	}
	proxy_record_line(px, NULL, 0, http ? 503 : 0, "limits: maxTunnels", line);
	(void)evutil_closesocket(fd);
}

/*
 * The waiting set is full (proxy_waiting_acquire()): closes this loop's
 * oldest connection still waiting for its first head (the registry is
 * newest first), so that a new one can take its place. Round 22 of the
 * attack held the set with 256 silent connections, reopened as each
 * timed out: refusing the newest locked every other client out for the
 * price of idle sockets. Evicting the oldest makes the holder race each
 * newcomer's head, which takes well under a millisecond. The eviction is
 * audited, with the peer that held the place. True if one was closed.
 */
static bool evict_oldest_waiting(proxy_t *px, const char *newcomer, unsigned max)
{
	char line[REASON_MAX];
	conn_t *victim = NULL;

	for (conn_t *c = *proxy_conn_list(px); c != NULL; c = c->next)
		if (c->waiting && (c->state == CONN_ACCEPTED || c->state == CONN_READ_HEAD ||
				   c->state == CONN_INTERCEPT_SNIFF))
			victim = c;
	if (victim == NULL)
		return false;
	(void)snprintf(line, sizeof(line),
		       "passavant: closed the connection from %s, the longest waiting for a first request, for one "
		       "from %s: %u connections already wait (limits.maxTunnels)",
		       victim->client.peer, newcomer, max);
	proxy_record_line(px, NULL, 0, 0, "limits: maxTunnels", line);
	conn_close(victim, "evicted from the waiting set", false);
	return true;
}

void conn_slot_taken(conn_t *c)
{
	c->slot = true;
	if (c->waiting) {
		proxy_waiting_release(c->px);
		c->waiting = false;
	}
}

/* ---- the target ----------------------------------------------------------- */

/* Contract in conn_int.h. Grows the text only when the new one does not
 * fit: a plain connection's requests reuse it. */
int conn_target_set(conn_t *c, const struct target *t)
{
	size_t hl = strlen(t->host), al = strlen(t->authority), need = hl + al + 2;
	char *text = c->tgt.text;

	if (need > c->tgt.cap) {
		text = malloc(need);
		if (text == NULL)
			return -1;
		free(c->tgt.text);
		c->tgt.text = text;
		c->tgt.cap = need;
	}
	memcpy(text, t->host, hl + 1);
	memcpy(text + hl + 1, t->authority, al + 1);
	c->tgt.host = text;
	c->tgt.authority = text + hl + 1;
	c->tgt.port = t->port;
	c->tgt.is_ip = t->is_ip;
	c->tgt.is_ipv6 = t->is_ipv6;
	c->tgt.path = t->path;
	c->tgt.path_len = t->path_len;
	return 0;
}

const char conn_target_nomem[] = "out of memory";

/* s parsed by parse (target.h) into c->tgt: the two below. */
static const char *target_take(conn_t *c, const char *s, size_t len,
			       const char *(*parse)(const char *, size_t, struct target *))
{
	struct target t;
	const char *err = parse(s, len, &t);

	if (err != NULL)
		return err;
	return conn_target_set(c, &t) < 0 ? conn_target_nomem : NULL;
}

const char *conn_target_connect(conn_t *c, const char *s, size_t len)
{
	return target_take(c, s, len, target_parse_connect);
}

const char *conn_target_absolute(conn_t *c, const char *s, size_t len)
{
	return target_take(c, s, len, target_parse_absolute);
}

int conn_target_authority(conn_t *c, uint16_t default_port)
{
	struct target t;

	memset(&t, 0, sizeof(t));
	(void)snprintf(t.host, sizeof(t.host), "%s", c->tgt.host);
	t.port = c->tgt.port;
	t.is_ip = c->tgt.is_ip;
	t.is_ipv6 = c->tgt.is_ipv6;
	t.path = c->tgt.path;
	t.path_len = c->tgt.path_len;
	target_set_authority(&t, default_port);
	return conn_target_set(c, &t);
}

void conn_target_free(conn_t *c)
{
	free(c->tgt.text);
	c->tgt.text = NULL;
	c->tgt.cap = 0;
	c->tgt.host = c->tgt.authority = "";
}

/* Wipes what an evbuffer holds (it may carry real values) and frees it. */
static void wipe_free(struct evbuffer *b)
{
	if (b == NULL)
		return;
	cmask_wipe_drain(b);
	evbuffer_free(b);
}

conn_t *conn_new(proxy_t *px, evutil_socket_t fd, const struct sockaddr *peer, int peerlen, bool http)
{
	const struct policy_limits *lim;
	struct conn **list;
	conn_t *c;
	int one = 1;

	/* A new connection is a client half: whatever an upstream's work
	 * left selected, nothing of it belongs in the upstream zone. */
	(void)zone_select(false);
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		log_warn("accept");
		(void)evutil_closesocket(fd);
		return NULL;
	}
	c->px = px;
	c->tgt.host = c->tgt.authority = "";
	c->state = CONN_ACCEPTED;
	c->mode = CONN_MODE_HTTP;
	exchange_reset(&c->ex);
	c->first_request = true;
	c->pol = proxy_policy_get(px);
	lim = policy_limits(pol(c));
	c->head_ms = lim->handshake_timeout_ms;
	c->idle_ms = lim->idle_timeout_ms;
	c->up_keep_ms = lim->upstream_keepalive_ms;
	format_peer(peer, peerlen, c->client.peer, sizeof(c->client.peer));
	if (!proxy_waiting_acquire(px, lim->max_tunnels) &&
	    (!evict_oldest_waiting(px, c->client.peer, lim->max_tunnels) ||
	     !proxy_waiting_acquire(px, lim->max_tunnels))) {
		refuse_waiting(px, fd, c->client.peer, lim->max_tunnels, http);
		proxy_policy_put(c->pol);
		free(c);
		return NULL;
	}
	c->waiting = true;
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
	bufferevent_setcb(c->client.bev, conn_client_read_cb, conn_client_write_cb, conn_client_event_cb, c);
	sockio_tune(c->client.bev);
	/* No read watermark on a plain socket: sockio_update() bounds the
	 * input (docs/notes-proxy-io.md). */
	bufferevent_setwatermark(c->client.bev, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (sockio_reader_new(c, &c->client) < 0 || bufferevent_enable(c->client.bev, EV_WRITE) < 0)
		goto fail;
	sockio_set_reading(&c->client, true);
	conn_set_state(c, CONN_READ_HEAD);
	conn_arm_timer(c, c->head_ms);
	return c;
fail:
	conn_close(c, "out of memory accepting a connection", true);
	return NULL;
}

const char *conn_set_mask_rule(conn_t *c, const char *fmt, ...)
{
	va_list ap;

	if (c->mask_rule == NULL)
		c->mask_rule = malloc(CONN_RULE_BYTES);
	if (c->mask_rule == NULL)
		return "credentials: real value or sentinel";
	va_start(ap, fmt);
	(void)vsnprintf(c->mask_rule, CONN_RULE_BYTES, fmt, ap);
	va_end(ap);
	return c->mask_rule;
}

void conn_close(conn_t *c, const char *reason, bool is_error)
{
	char casewhy[REASON_MAX];
	const char *cred;

	if (c->state == CONN_CLOSED)
		return;
	/* The inbound fold found a real value with its case changed in a
	 * response body or stream (cmask_case_real()): whatever path closes,
	 * the audit and stderr say so, naming the credential, and the client
	 * sees the body cut (no close_notify). */
	if (c->mask != NULL && (cred = cmask_case_real(c->mask)) != NULL) {
		(void)snprintf(casewhy, sizeof(casewhy),
			       "the response from %s carries a real value of %s with its case changed (or its %%XX decoded, or an escape at an end): it cannot "
			       "be re-masked, so the response was cut",
			       c->up.peer, cred);
		reason = casewhy;
		is_error = true;
		if (c->client.ssl != NULL)
			c->tls_end = TLS_END_TRUNCATE;
	} else if (c->mask != NULL && (cred = cmask_in_refused(c->mask)) != NULL) {
		/* The same for a body that is UTF-16 or UTF-32 text. */
		(void)snprintf(casewhy, sizeof(casewhy), "the response from %s: %s", c->up.peer, cred);
		reason = casewhy;
		is_error = true;
		if (c->client.ssl != NULL)
			c->tls_end = TLS_END_TRUNCATE;
	}
	/* Closed in the middle of a response, on an error (a real value
	 * with its case changed, a timeout): an RST, not a FIN, which is
	 * the end of a close-delimited body to the client (review of
	 * round 43: curl --http1.0 took such a cut body whole). */
	if (is_error && (c->mode == CONN_MODE_HTTP || c->mode == CONN_MODE_TERMINATED) &&
	    c->ex.phase == EX_RESPONDING)
		sockio_reset_on_close(&c->client);
	/* An opaque tunnel is audited when it ends, with its byte counts;
	 * so is an upgraded stream (a WebSocket), with its re-masked count. */
	/* One the proxy cut (a frame breaking RFC 6455, the frame queue's
	 * bound, a real value in a frame, an error) says so: the review
	 * of round 34, W1 (it read as one that ended). */
	if ((c->mode == CONN_MODE_TUNNEL && responding(c) && c->ex.status == 200) ||
	    c->mode == CONN_MODE_UPGRADED) {
		char cut[REASON_MAX + 64];

		if (is_error)
			(void)snprintf(cut, sizeof(cut), "passavant: the proxy cut the %s: %s",
				       c->mode == CONN_MODE_TUNNEL ? "tunnel" : "upgraded stream", reason);
		conn_audit(c, c->mode == CONN_MODE_TUNNEL ? "tunnel" : "request", "allow", is_error ? cut : NULL,
			   c->rule);
	}
	/* SPEC §6: an inspected request that went upstream, in full or in
	 * part, is audited however the connection ends: a client that hangs
	 * up before the response went out (or in the middle of its body),
	 * an upstream that cuts the response, a timeout. The audit records
	 * what left; finish_request() only sees exchanges that complete. */
	if ((c->mode == CONN_MODE_HTTP || c->mode == CONN_MODE_TERMINATED) && c->ex.kind != EX_KIND_CONNECT &&
	    !c->ex.audited &&
	    (c->ex.phase == EX_WAIT_RESPONSE || c->ex.phase == EX_RESPONDING || c->ex.phase == EX_DONE)) {
		char note[REASON_MAX + 128];

		/* An interim head (100 Continue) is no response. */
		if (c->ex.status >= 100 && c->ex.status < 200)
			c->ex.status = 0;
		(void)snprintf(note, sizeof(note),
			       "passavant: the connection ended before the exchange did (%s); "
			       "the request was passed on%s",
			       reason, c->ex.req_done ? "" : " in part");
		c->ex.cut = true;
		conn_audit(c, "request", "allow", note, c->rule);
	}
	conn_set_state(c, CONN_CLOSED);
	proxy_note_churn(c->px);
	conn_h2_free(c);
	if (is_error)
		log_warnx("conn %s: %s", c->client.peer, reason);
	else
		log_debug("conn %s: closed: %s", c->client.peer, reason);
	conn_drop_upstream(c);
	if (c->client.bev != NULL && c->under_cb != NULL && bufferevent_get_underlying(c->client.bev) != NULL)
		(void)evbuffer_remove_cb_entry(bufferevent_get_output(bufferevent_get_underlying(c->client.bev)),
					       c->under_cb);
	c->under_cb = NULL;
	sockio_side_free(&c->client);
	http1_free(c->client.http);
	c->client.http = NULL;
	http1_free(c->up.http);
	c->up.http = NULL;
	if (c->timer != NULL) {
		event_free(c->timer);
		c->timer = NULL;
	}
	conn_stop_peek(c);
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
	if (c->waiting) {
		proxy_waiting_release(c->px);
		c->waiting = false;
	}
	conn_body_injected_done(c);
	if (c->pprev != NULL) {
		*c->pprev = c->next;
		if (c->next != NULL)
			c->next->pprev = c->pprev;
		c->pprev = NULL;
	}
	proxy_policy_put(c->pol);
	c->pol = NULL;
	conn_target_free(c);
	free(c->sni);
	free(c->up_tls_err);
	free(c->up_host);
	free(c->mask_rule);
	free(c->orig);
	free(c);
}

void conn_close_all(struct conn **list)
{
	while (*list != NULL)
		conn_close(*list, "proxy stopping", false);
}

/*
 * At most CONN_KEEP_MAX connections of a loop keep their buffers (up to
 * about 200 KiB each): the extra memory busy connections hold stays
 * bounded, and below glibc's trim threshold, whose crossing gives pages
 * back that the next requests fault in again (round 23 of the attack:
 * 200 tunnels alternating busy and quiet spells). The others release
 * after each drive, as before. The first in the registry get them.
 */
#define CONN_KEEP_MAX 32

void conn_bufs_tick(struct conn *list, bool *busy, bool *freed)
{
	unsigned kept = 0;

	*busy = *freed = false;
	for (conn_t *c = list; c != NULL; c = c->next) {
		switch (sockio_bufs_tick(c, kept < CONN_KEEP_MAX)) {
		case SOCKIO_TICK_IDLE:
			break;
		case SOCKIO_TICK_BUSY:
			*busy = true;
			kept++;
			break;
		case SOCKIO_TICK_RELEASED:
			*freed = true;
			break;
		}
	}
}

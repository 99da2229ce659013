/*
 * dial.c - the upstream side of a connection: dialling (upstream.h),
 * adopting the connected bufferevent (plain, or with verified TLS inside
 * a terminated tunnel), its callbacks, and dropping it.
 */
#include "conn_int.h"

#include <stdio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>

#include "base/defaults.h"
#include "log.h"
#include "sockio.h"
#include "tls.h"
#include "wbio.h"

/* Frees the upstream side (connection and parser state), keeping the
 * parser object for reuse. */
void conn_drop_upstream(conn_t *c)
{
	if (c->dial != NULL) {
		upstream_cancel(c->dial);
		c->dial = NULL;
	}
	/* What waited for the upstream may hold real values: wiped. */
	if (c->up.bev != NULL) {
		cmask_wipe_drain(bufferevent_get_output(c->up.bev));
		/* And what came from it, not yet remasked. */
		cmask_wipe_drain(bufferevent_get_input(c->up.bev));
	}
	sockio_side_free(&c->up);
	if (c->up.pending != NULL)
		cmask_wipe_drain(c->up.pending);
	c->up.ssl = NULL;
	c->up.eof = false;
	c->up.kicked = false;
	c->up.reusable = false;
	c->up.failed = false;
	c->up.fin_end = false;
	c->up.tls_ready = false;
	free(c->up_host);
	c->up_host = NULL;
	c->up_port = 0;
}

static void up_read_cb(struct bufferevent *bev, void *arg)
{
	conn_t *c = arg;

	(void)bev;
	c->up.kicked = false;
	c->up.held = true;
	conn_drive(c);
}

static void up_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_drive(arg);
}

/*
 * The upstream TLS handshake of a terminated tunnel ended: on success the
 * waiting request goes out; on failure the reason is kept and a waiting
 * request gets the 502 (a later one gets it from conn_decide()). Nothing
 * was sent upstream before the certificate verified.
 */
enum step conn_refuse_up_tls(conn_t *c)
{
	char w[512];

	if (c->up.cert_bad)
		return conn_refuse(c, 502, NULL, "request", c->rule,
				   "passavant: %s: the certificate of %s:%u does not verify: %s",
				   conn_what(c, w, sizeof(w)), c->tgt.host, (unsigned)c->tgt.port, c->up_tls_err);
	return conn_refuse(c, 502, NULL, "request", c->rule, "passavant: %s: TLS with %s:%u failed: %s",
			   conn_what(c, w, sizeof(w)), c->tgt.host, (unsigned)c->tgt.port, c->up_tls_err);
}

static void up_tls_done(conn_t *c, struct bufferevent *bev, bool ok)
{
	enum step st = STEP_AGAIN;
	bool unverified;

	proxy_note_churn(c->px);
	unverified = ok && !tls_peer_verified(bev);
	if (!ok || unverified) {
		if (c->up_tls_err == NULL)
			c->up_tls_err = calloc(1, CONN_TLS_ERR_BYTES);
		if (c->up_tls_err == NULL) {
			conn_close(c, "out of memory after a failed upstream TLS handshake", true);
			return;
		}
		c->up.cert_bad = unverified || tls_failure_reason(bev, c->up_tls_err, CONN_TLS_ERR_BYTES);
		if (unverified)
			(void)snprintf(c->up_tls_err, CONN_TLS_ERR_BYTES, "no verified certificate");
		log_info("conn %s: TLS with %s failed: %s", c->client.peer, c->up.peer, c->up_tls_err);
		conn_drop_upstream(c);
		if (c->state == CONN_TLS_UPSTREAM) {
			/* The client's handshake runs now; its first request
			 * gets the 502 (conn_decide()). */
			(void)conn_mitm_client(c, false); /* c may be freed: nothing more */
			return;
		}
		if (c->state == CONN_UPSTREAM_CONNECTING)
			st = conn_refuse_up_tls(c);
		if (st != STEP_CLOSED)
			conn_drive(c);
		return;
	}
	c->up.tls_ready = true;
	c->up.kicked = false;
	/* As the client's (conn_tls_accepted()). */
	if (sockio_tls_reader_new(c, &c->up) < 0)
		log_debug("conn %s: libevent keeps reading the TLS of %s", c->client.peer, c->up.peer);
	if (c->state == CONN_TLS_UPSTREAM) {
		(void)conn_mitm_client(c, tls_alpn_h2(bev)); /* c may be freed: nothing more */
		return;
	}
	if (c->state == CONN_UPSTREAM_CONNECTING && conn_send_request(c) == STEP_CLOSED)
		return;
	conn_drive(c);
}

void conn_up_event_cb(struct bufferevent *bev, short events, void *arg)
{
	conn_t *c = arg;

	c->up.held = true;
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
		if ((events & BEV_EVENT_ERROR) && c->up.ssl != NULL && wbio_overflowed(c->up.ssl))
			log_info("conn %s: upstream %s: %s", c->client.peer, c->up.peer, WBIO_ANSWERS_REASON);
		else if (events & BEV_EVENT_ERROR)
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
		sockio_rearm_tls_write(&c->up);
	}
	conn_drive(c);
}

/* Takes the connected upstream bufferevent into the conn. */
static void adopt_upstream(conn_t *c, struct bufferevent *bev)
{
	c->up.bev = bev;
	c->up.filter = bufferevent_get_underlying(bev) != NULL;
	c->up.eof = false;
	c->up.reusable = false;
	/* NULL when out of memory: the connection is then not reused. */
	free(c->up_host);
	c->up_host = strdup(c->tgt.host);
	c->up_port = c->tgt.port;
	(void)snprintf(c->up.peer, sizeof(c->up.peer), "%.50s:%u", c->tgt.host, (unsigned)c->tgt.port);
	bufferevent_setcb(bev, up_read_cb, up_write_cb, conn_up_event_cb, c);
	c->up.held = true;
	bufferevent_setwatermark(bev, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (bufferevent_openssl_get_ssl(bev) != NULL) {
		/* A TLS side keeps libevent's read watermark: its read loop
		 * stops at it. */
		sockio_tune_tls(bev);
		sockio_bound_underlying(bev);
		bufferevent_setwatermark(bev, EV_READ, 0, PASSAVANT_OUTBUF_HIGH_BYTES);
		if (bufferevent_enable(bev, EV_READ | EV_WRITE) < 0)
			log_warnx("conn %s: cannot enable upstream reads", c->client.peer);
		return;
	}
	/* Plain: read by sockio.c's reader, its input bounded by sockio_update(),
	 * which starts it (without a read event, sockio_set_reading() lets libevent
	 * read). */
	sockio_tune(bev);
	if (sockio_reader_new(c, &c->up) < 0)
		log_warnx("conn %s: cannot watch the upstream %s", c->client.peer, c->up.peer);
	if (bufferevent_enable(bev, EV_WRITE) < 0)
		log_warnx("conn %s: cannot write to the upstream %s", c->client.peer, c->up.peer);
}

/* Sends the rewritten request head upstream and starts relaying. */
enum step conn_send_request(conn_t *c)
{
	http1_reset(c->up.http);
	http1_set_head_request(c->up.http, http1_method_is(c->client.http, "HEAD"));
	/* The head was written (and substituted) by conn_prepare_request(). */
	if (evbuffer_add_buffer(c->up.pending, c->head_out) < 0) {
		conn_close(c, "out of memory writing a request head", true);
		return STEP_CLOSED;
	}
	c->ex.phase = EX_WAIT_RESPONSE;
	conn_set_state(c, CONN_RELAY);
	conn_touch(c);
	conn_arm_timer(c, c->idle_ms);
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
			st = conn_refuse(c, 403, "blocked-by-sandbox-runtime", refusal_kind(c),
					 rule, "passavant: %s refused by %s: %s", conn_what(c, w, sizeof(w)), rule,
					 detail);
		else
			st = conn_refuse(c, status, NULL, refusal_kind(c), c->rule,
					 "passavant: %s: %s", conn_what(c, w, sizeof(w)), detail);
		if (st != STEP_CLOSED)
			conn_drive(c);
		return;
	}
	if (terminated(c)) {
		/* A terminated tunnel re-dials its upstream with TLS; the
		 * request waits in UPSTREAM_CONNECTING for the handshake. */
		if (conn_adopt_upstream_tls(c, bev, false) < 0)
			return;
		conn_arm_timer(c, PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS);
		conn_drive(c);
		return;
	}
	adopt_upstream(c, bev);
	if (c->ex.kind == EX_KIND_CONNECT) {
		/* An intercepted ClientHello (mode RAW) asked for no proxy:
		 * its tunnel starts without a 200 (audited as one). */
		bool raw = c->mode == CONN_MODE_RAW;

		conn_set_mode(c, CONN_MODE_TUNNEL);
		c->ex.status = 200;
		/* Through the side's pending buffer, flushed now: sockio_send()
		 * writes into the empty socket at once, not one loop iteration
		 * later on a write event, and before anything a step below
		 * answers (a refusal of what follows the CONNECT head). */
		if (!raw && (evbuffer_add_printf(c->client.pending, "HTTP/1.1 200 Connection Established\r\n\r\n") < 0 ||
			     sockio_flush_pending(&c->client) < 0)) {
			conn_close(c, "out of memory", true);
			return;
		}
		c->ex.phase = EX_RESPONDING;
		conn_now(&c->ex.t0);
		conn_touch(c);
		/* The bytes after the CONNECT head decide, for every
		 * tunnel (conn_step_tls_sniff()): TLS is terminated, or
		 * relayed as it is to an excluded host; plain HTTP is
		 * decided request by request; anything else is refused
		 * (round 16: plain HTTP to an excluded host; round 30: to
		 * any host, with another Host). A tunnel nobody speaks in
		 * is idle as much as it is a slow handshake. */
		conn_set_state(c, CONN_TLS_SNIFF);
		conn_arm_timer(c, c->plan == TUNNEL_OPAQUE || c->idle_ms < c->head_ms ? c->idle_ms : c->head_ms);
		conn_start_peek(c);
	} else if (conn_send_request(c) == STEP_CLOSED) {
		return;
	}
	conn_drive(c);
}

/*
 * Layers verified TLS over bev, the connected upstream of a terminated
 * tunnel, and adopts the filter (ALPN offering h2 first when h2); the
 * handshake runs and ends in up_tls_done(). c->up.bev must not hold bev. Returns 0, or -1 after
 * closing c.
 */
int conn_adopt_upstream_tls(conn_t *c, struct bufferevent *bev, bool h2)
{
	struct bufferevent *fb;
	char err[256];
	bool lost = false;

	fb = tls_wrap_upstream(proxy_tls(c->px), proxy_base(c->px), bev, c->tgt.host, c->tgt.port, c->tgt.is_ip, h2,
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
	if (c->up_tls_err != NULL)
		c->up_tls_err[0] = '\0';
	c->up.cert_bad = false;
	return 0;
}

/* Starts resolving/connecting for the current target. */
enum step conn_dial(conn_t *c, enum conn_state connecting)
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

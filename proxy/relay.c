/*
 * relay.c - byte streams: an opaque tunnel (mode TUNNEL: TLS to an
 * excluded host, relayed as it is) and an upgraded WebSocket stream (mode
 * UPGRADED, framed both ways), with half-close; and the masking glue both share
 * with the HTTP relay (conn_mask_pass(), the tail timer).
 */
#include "conn_int.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/defaults.h"
#include "log.h"
#include "sockio.h"
#include "wbio.h"

/* cmask_ws_feed() returned 2 (round 20 of the attack). */
#define WS_QUEUE_FULL                                                                               \
	"WebSocket: more than 64 KiB of frame headers and control frames queued behind bytes that may " \
	"begin a real value (a flood of pings, pongs or empty frames); closed rather than released"

/*
 * Inbound masking holds the last bytes the upstream sent (the longest
 * form of a real value minus one) at every pause, whatever they are
 * (cmask.h): in an HTTP message until more bytes or its end; in a stream
 * without a visible end (after a 101), after this
 * long without new bytes they go as they are. A real value that the
 * upstream of such a stream interrupts for longer than this is not
 * recognised.
 */
#define CONN_MASK_TAIL_MS 100
static const struct timeval mask_tail_tv = {CONN_MASK_TAIL_MS / 1000, (CONN_MASK_TAIL_MS % 1000) * 1000};

static void tail_cb(evutil_socket_t fd, short events, void *arg);

/*
 * Whether held inbound bytes may be released after a pause: in a stream
 * without a visible end (after a 101), or in a
 * chunked response standing between two chunks (a boundary the upstream
 * chose: server-sent events, MCP's streamable HTTP and watch streams end
 * each reply with a chunk and wait for the client). Inside a chunk, a
 * Content-Length body or a close-delimited one, the bytes wait for more
 * or for the end, so an upstream that stalls in the middle of a real
 * value does not get it through in two pieces.
 */
static bool release_ok(const conn_t *c)
{
	if (c->mode == CONN_MODE_UPGRADED)
		return true;
	/* Not after a request whose body got a real value (round 24 of the
	 * attack): the sandbox chose where it lies in the body, so where a
	 * window, a socket buffer or the upstream's reads cut it on its way
	 * up, and an upstream that echoes the body as it reads it pauses
	 * there. Its held bytes wait for more or the end. (While such a
	 * request is open on any connection, or was lately, every release
	 * waits: tail_cb().) */
	return c->ex.mask_resp_body && c->ex.phase != EX_DONE && http1_between_chunks(c->up.http) &&
	       !cmask_body_injected(c->mask);
}

/* Whether the upstream ended its stream in a way that is an end, not a
 * possible cut: TLS with close_notify. A plain connection's FIN cannot
 * be told from a cut (an upstream that stops in the middle of a value it
 * reflects), nor an error (a reset: the review of round 32 provoked one
 * by sending a big body to an upstream that answers without reading it)
 * or TLS ended without close_notify (dial.c sets up.failed for both). */
bool conn_up_closed_cleanly(const conn_t *c)
{
	return c->up.ssl != NULL && !c->up.failed;
}

/*
 * Passes on what the substituter of direction d may send now (cmask_ready()).
 * Inbound, while bytes are held, the tail timer runs from the last bytes
 * that came (re-armed here); when it fires they go as they are.
 */
int conn_mask_pass(conn_t *c, enum cmask_dir d)
{
	struct conn_side *to = d == CMASK_OUT ? &c->up : &c->client;
	size_t n;

	if (to->bev == NULL) {
		/* The side is gone (an upstream that closed while the
		 * client's bytes were held, or a frame came behind a close):
		 * what would have gone to it, held or ready, is wiped, and
		 * no timer waits for it. */
		if (cmask_body_cut(c->mask, d) < 0 || cmask_ready(c->mask, d, &n) < 0)
			return -1;
		cmask_wipe_drain(cmask_out(c->mask, d));
	} else if (cmask_ready(c->mask, d, &n) < 0 ||
		   (n > 0 && sockio_pass_on(to, cmask_out(c->mask, d), n) < 0)) {
		return -1;
	}
	/* Inbound, only where release_ok() says a pause may release held
	 * bytes: elsewhere an HTTP message keeps them until more bytes or
	 * its end, so an upstream that stalls inside a real value does not
	 * get it through in two pieces. Outbound, a pause of the client
	 * releases them (tail_cb()). */
	if (!((release_ok(c) && cmask_waiting(c->mask, CMASK_IN)) ||
	      (c->up.bev != NULL && cmask_waiting(c->mask, CMASK_OUT)))) {
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
	bool again = false;

	(void)fd;
	(void)events;
	if (c->mask == NULL)
		return;
	/*
	 * Inbound, only a pause of the upstream releases held bytes: while
	 * the upstream has sent more (in our input, in OpenSSL, in the
	 * socket), while we do not read it, or have read it again for less
	 * than CONN_MASK_TAIL_MS, because the client did not read (its
	 * output at the high mark, or not yet back below half of it), the
	 * held bytes wait (sockio_peer_quiet()). Otherwise the sandbox could
	 * cut a real value in two at will, by not reading at the right
	 * moment: round 26 of the attack read in bursts, and the timer that
	 * fired in the loop iteration where its read emptied the output,
	 * before the upstream was read again, released the value's first
	 * bytes while the rest waited in the socket. Nor while a request
	 * whose body got a real value is open on any connection, or was
	 * lately (round 25 of the attack: a relay service echoed it into
	 * another connection, a GET or a tunnel, pausing where the sandbox
	 * chose): they wait, and the timer looks again.
	 */
	if (release_ok(c) && cmask_waiting(c->mask, CMASK_IN)) {
		if (c->up.bev != NULL &&
		    (!sockio_peer_quiet(&c->up, CONN_MASK_TAIL_MS) ||
		     evbuffer_get_length(out_of(&c->client)) >= PASSAVANT_OUTBUF_HIGH_BYTES ||
		     proxy_body_injected_lately(c->px)))
			again = true;
		else if (cmask_release(c->mask, CMASK_IN) < 0 || conn_mask_pass(c, CMASK_IN) < 0)
			goto oom;
	}
	/*
	 * Outbound (a request body, an upgraded stream), a pause of the
	 * client releases what waits for the upstream, the same bytes
	 * whatever they are: a sentinel cut by the pause is not injected,
	 * and a real value cut by it is not recognised (round 32 of the
	 * attack: holding only what could begin a real value told the
	 * sandbox which of its bytes did).
	 */
	if (c->up.bev != NULL && cmask_waiting(c->mask, CMASK_OUT)) {
		if (!sockio_peer_quiet(&c->client, CONN_MASK_TAIL_MS) ||
		    evbuffer_get_length(out_of(&c->up)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
			again = true;
		else if (cmask_release(c->mask, CMASK_OUT) < 0 || conn_mask_pass(c, CMASK_OUT) < 0)
			goto oom;
	}
	if (again && event_add(c->tail_ev, &mask_tail_tv) < 0) {
		conn_close(c, "cannot re-arm the masking timer", true);
		return;
	}
	conn_drive(c);
	return;
oom:
	conn_close(c, "out of memory releasing held bytes", true);
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
	const char *rule;

	conn_wipe_reset_upstream(c);
	rule = conn_set_mask_rule(c, "credentials %s: real value", cred);
	(void)snprintf(reason, sizeof(reason),
		       "passavant: %s: a real value of %s was on its way out in a WebSocket frame "
		       "(the sandbox should never hold one); the stream was closed",
		       conn_what(c, w, sizeof(w)), cred);
	c->ex.audited = false;
	conn_audit(c, "request", "deny", reason, rule);
	log_info("%s", reason);
	conn_close(c, "a real value in a WebSocket frame", true);
	return STEP_CLOSED;
}

/* Client -> upstream: WebSocket frames searched for real values, else
 * the bytes as they are. Returns true to
 * go on, else false with *st the step to return. */
static bool stream_out(conn_t *c, enum step *st)
{
	struct evbuffer *cin = in_of(&c->client);
	size_t n = evbuffer_get_length(cin);
	const char *leak;
	int r;

	if (n == 0 || evbuffer_get_length(out_of(&c->up)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		return true;
	if (c->mode == CONN_MODE_UPGRADED && c->mask != NULL) {
		if ((r = cmask_ws_feed(c->mask, CMASK_OUT, cin, n)) < 0)
			goto fail;
		if (r == 1 || r == 2) {
			conn_close(c, r == 1 ? "a WebSocket frame from the client breaks RFC 6455" : WS_QUEUE_FULL, true);
			*st = STEP_CLOSED;
			return false;
		}
		if ((leak = cmask_ws_leak(c->mask)) != NULL) {
			*st = ws_leak_close(c, leak);
			return false;
		}
		if (conn_mask_pass(c, CMASK_OUT) < 0)
			goto fail;
	} else if (sockio_send(&c->up, cin, n) < 0) {
		goto fail;
	}
	c->ex.bytes_up += n;
	conn_touch(c);
	return true;
fail:
	conn_close(c, "evbuffer move failed", true);
	*st = STEP_CLOSED;
	return false;
}

/* Upstream -> client: WebSocket frames remasked (SPEC §4.3), else the
 * bytes as they are. */
static bool stream_in(conn_t *c, enum step *st)
{
	struct evbuffer *uin = in_of(&c->up);
	size_t n = evbuffer_get_length(uin);
	int r;

	if (n == 0 || evbuffer_get_length(out_of(&c->client)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		return true;
	if (c->mode == CONN_MODE_UPGRADED && c->mask != NULL) {
		r = cmask_ws_feed(c->mask, CMASK_IN, uin, n);
		if (r < 0 || (r == 0 && conn_mask_pass(c, CMASK_IN) < 0))
			goto fail;
		if (r == 1 || r == 2) {
			conn_close(c, r == 1 ? "a WebSocket frame from the upstream breaks RFC 6455" : WS_QUEUE_FULL, true);
			*st = STEP_CLOSED;
			return false;
		}
	} else if (sockio_send(&c->client, uin, n) < 0) {
		goto fail;
	}
	c->ex.bytes_down += n;
	conn_touch(c);
	return true;
fail:
	conn_close(c, "evbuffer move failed", true);
	*st = STEP_CLOSED;
	return false;
}

/* A side of a masked stream ended: what the substituters held back goes
 * or is dropped. Returns true to go on, else false with *st. */
static bool stream_ends(conn_t *c, enum step *st)
{
	bool cin_empty = evbuffer_get_length(in_of(&c->client)) == 0;

	*st = STEP_CLOSED;
	if (c->mask == NULL)
		return true;
	if (c->mode == CONN_MODE_UPGRADED && c->client.eof && cin_empty && cmask_waiting(c->mask, CMASK_OUT)) {
		/* The client ended: what it sent goes, resolved (its own
		 * bytes, the same whatever they are). */
		if (cmask_body_end(c->mask, CMASK_OUT) < 0 || conn_mask_pass(c, CMASK_OUT) < 0)
			goto fail;
	}
	if (c->mode == CONN_MODE_UPGRADED && c->up.eof &&
	    evbuffer_get_length(in_of(&c->up)) == 0) {
		/* The stream ended: after a close frame, or with TLS's
		 * close_notify, what was held goes resolved; otherwise (a
		 * FIN or an error that no close frame announced) the last
		 * bytes that came are dropped (SPEC §4.3). The same bytes
		 * whatever they are (round 32 of the attack: dropping only
		 * those that could begin a real value was a prefix oracle
		 * through an upstream that echoes a frame and closes; its
		 * review: releasing them at a reset handed over a real value
		 * cut one byte short). */
		if (((conn_up_closed_cleanly(c) || cmask_ws_closed(c->mask, CMASK_IN))
			     ? cmask_body_end(c->mask, CMASK_IN)
			     : cmask_body_cut(c->mask, CMASK_IN)) < 0 ||
		    conn_mask_pass(c, CMASK_IN) < 0)
			goto fail;
	}
	return true;
fail:
	conn_close(c, "evbuffer move failed", true);
	return false;
}

/*
 * An upgraded stream inside a terminated tunnel: TLS has no half-close to
 * carry over (close_notify ends both ways), so once the upstream ended and
 * all it sent was passed on, the client is drained and closed; once the
 * client ended, the stream is over.
 */
static enum step stream_end_tls(conn_t *c)
{
	if (c->up.eof && evbuffer_get_length(in_of(&c->up)) == 0)
		return conn_enter_draining(c);
	if (c->client.eof && evbuffer_get_length(in_of(&c->client)) == 0) {
		/* What the client sent last still goes to the upstream (the
		 * write callback comes back when it has; the idle timer bounds
		 * the wait). */
		if (evbuffer_get_length(out_of(&c->up)) > 0)
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

/*
 * Half-close (TCP semantics kept end to end): once one side ended and all
 * it sent reached the other, shut the other's write side and keep
 * relaying the opposite direction; close when both ended.
 */
static enum step stream_half_close(conn_t *c)
{
	if (c->client.eof && evbuffer_get_length(in_of(&c->client)) == 0 &&
	    evbuffer_get_length(out_of(&c->up)) == 0 && !c->up.shut_wr) {
		c->up.shut_wr = true;
		if (sockio_shutdown_wr(&c->up) < 0)
			c->up.eof = true; /* upstream already gone */
	}
	if (c->up.eof && evbuffer_get_length(in_of(&c->up)) == 0 &&
	    evbuffer_get_length(out_of(&c->client)) == 0 && !c->client.shut_wr) {
		c->client.shut_wr = true;
		if (sockio_shutdown_wr(&c->client) < 0)
			c->client.eof = true;
	}
	if (c->client.shut_wr && c->up.shut_wr) {
		conn_close(c, "tunnel closed by both sides", false);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

enum step conn_step_tunnel(conn_t *c)
{
	enum step st;

	if (!stream_out(c, &st) || !stream_in(c, &st) || !stream_ends(c, &st))
		return st;
	return c->client.ssl != NULL ? stream_end_tls(c) : stream_half_close(c);
}

/*
 * mitm.c - TLS termination on a CONNECT tunnel (SPEC §5, docs/tls.md):
 * TLS_SNIFF looks at the first bytes the client sends (MSG_PEEK while
 * nothing was read, else the input buffer); a ClientHello gets TLS on both
 * sides (TLS_ACCEPT), anything else an opaque relay or, under a method
 * rule, a refusal.
 */
#include "conn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "base/defaults.h"
#include "h2.h"
#include "log.h"
#include "sockio.h"
#include "tls.h"

/* Bytes of a tunnel's start looked at in peek mode: a whole ClientHello
 * of today's clients (with post-quantum key shares, about 1.8 KiB). */
#define MITM_PEEK_BYTES 4096

/*
 * TLS with the client: a server-side filter over the client bev (leaf for
 * the CONNECT host; a ClientHello already buffered is kept), offering h2
 * only when the upstream negotiated it. From here on the conn reads
 * requests inside TLS (conn_tls_accepted()).
 */
enum step conn_mitm_client(conn_t *c, bool h2)
{
	struct bufferevent *fb;
	char err[256];
	bool lost = false;

	fb = tls_wrap_client(proxy_tls(c->px), proxy_base(c->px), c->client.bev, c->tgt.host, h2, &lost,
			     err, sizeof(err));
	if (fb == NULL) {
		if (lost)
			c->client.bev = NULL;
		conn_close(c, err, true);
		return STEP_CLOSED;
	}
	c->client.bev = fb;
	c->client.filter = bufferevent_get_underlying(fb) != NULL;
	c->client.ssl = bufferevent_openssl_get_ssl(fb);
	/* what goes to the client is remasked (real values only in the
	 * corner cases of docs/masking.md "Held bytes", whose chains
	 * libevent frees unwiped after sending anyway) */
	c->client.may_join = true;
	bufferevent_setcb(fb, conn_client_read_cb, conn_client_write_cb, conn_client_event_cb, c);
	c->client.held = true;
	sockio_tune_tls(fb);
	sockio_bound_underlying(fb);
	bufferevent_setwatermark(fb, EV_READ, 0, PASSAVANT_OUTBUF_HIGH_BYTES);
	bufferevent_setwatermark(fb, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2, 0);
	if (bufferevent_enable(fb, EV_READ | EV_WRITE) < 0) {
		conn_close(c, "cannot enable the client TLS filter", true);
		return STEP_CLOSED;
	}
	conn_set_mode(c, CONN_MODE_TERMINATED);
	conn_set_state(c, CONN_TLS_ACCEPT);
	conn_arm_timer(c, c->head_ms);
	return STEP_STOP;
}

/*
 * Terminates TLS on the tunnel: a verifying client-side filter over the
 * connected upstream, and TLS with the client (conn_mitm_client()). Both
 * handshakes run at once, unless the client offers h2: then the
 * upstream's runs first (TLS_UPSTREAM), offering h2 too, and the client
 * is offered h2 only if the upstream took it (docs/tls.md "HTTP/2").
 */
static enum step conn_start_mitm(conn_t *c)
{
	struct bufferevent *ub;
	bool h2 = c->client_h2;

	/* TLS reads the sockets from here on (tls.c). */
	sockio_reader_free(&c->client);
	sockio_reader_free(&c->up);
	/* The CONNECT's exchange ended with its 200; a failed handshake is
	 * still timed from the tunnel's start. */
	{
		struct timeval t0 = c->ex.t0;

		exchange_reset(&c->ex);
		c->ex.t0 = t0;
	}
	/* The Host the upstream gets: the CONNECT authority, without the
	 * scheme's default port. */
	if (conn_target_authority(c, 443) < 0) {
		conn_close(c, "out of memory for the tunnel's authority", true);
		return STEP_CLOSED;
	}
	c->tgt.path = "";
	c->tgt.path_len = 0;
	ub = c->up.bev;
	c->up.bev = NULL;
	c->up.filter = false;
	if (ub == NULL)
		h2 = false;
	if (ub != NULL && conn_adopt_upstream_tls(c, ub, h2) < 0)
		return STEP_CLOSED;
	if (h2) {
		/* The client's bytes stay unread meanwhile (sockio_update()). */
		sockio_set_reading(&c->client, false);
		conn_set_state(c, CONN_TLS_UPSTREAM);
		conn_arm_timer(c, c->head_ms);
		return STEP_STOP;
	}
	/* c is freed when it fails: its answer, not c->state, says so. */
	return conn_mitm_client(c, false);
}

/* Whether p[0..n) is a whole ClientHello, and then whether it offers h2
 * (c->client_h2). */
static bool hello_read(conn_t *c, const unsigned char *p, size_t n)
{
	struct tls_hello h;
	size_t msglen;

	if (tls_hello_complete(p, n, &msglen) != TLS_HELLO_DONE)
		return false;
	c->client_h2 = tls_hello_parse(tls_hello_ctx(proxy_tls(c->px)), p, n, &h) == 0 && h.offers_h2;
	return true;
}

void conn_stop_peek(conn_t *c)
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
 * bufferevent as usual and conn_step_tls_sniff() decides (a TLS filter then
 * takes bytes already read).
 */
static void peek_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	unsigned char head[MITM_PEEK_BYTES];
	ssize_t n;

	(void)events;
	n = recv(fd, head, sizeof(head), MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return; /* persistent event: wait for the next readiness */
	conn_stop_peek(c);
	/* The whole ClientHello must be there to know its ALPN list; a
	 * larger or partial one is read and decided by conn_step_tls_sniff(). */
	if (c->plan != TUNNEL_OPAQUE && n >= 3 && tls_sniff(head, 3) == TLS_SNIFF_TLS && hello_read(c, head, (size_t)n) &&
	    evbuffer_get_length(out_of(&c->client)) == 0 && evbuffer_get_length(in_of(&c->client)) == 0) {
		if (conn_start_mitm(c) == STEP_CLOSED)
			return;
	}
	conn_drive(c);
}

/* Enters peek mode when nothing after the CONNECT head was read yet (the
 * usual case: clients wait for the 200). Best effort: without it the
 * bufferevent reads and conn_step_tls_sniff() decides. */
void conn_start_peek(conn_t *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->client.bev);

	if (fd < 0 || evbuffer_get_length(in_of(&c->client)) > 0 || c->client.eof)
		return;
	c->peek_ev = event_new(proxy_base(c->px), fd, EV_READ | EV_PERSIST, peek_cb, c);
	if (c->peek_ev == NULL)
		return;
	if (event_add(c->peek_ev, NULL) < 0) {
		conn_stop_peek(c);
		return;
	}
	sockio_set_reading(&c->client, false);
}

/*
 * A tunnel whose first bytes start an HTTP request line: its requests are
 * read and decided one by one, as an intercepted connection's are, with
 * the CONNECT's host and port as their destination (c->orig): a Host
 * naming another host or port is answered 421, and each request is
 * decided (allowedDomains, allowedMethods, credentials), dialled and
 * audited like any plain request (scheme http, tls none). Relayed as
 * bytes, the tunnel carried requests with any Host and method to the
 * server behind an allowed name, none of them decided or audited (round
 * 30 of the attack: a front end that routes by Host reached a denied
 * name). The upstream dialled for the CONNECT carries the first request
 * (send_plain() reuses it while Host names the CONNECT host), unless it
 * spoke or closed first: then it is dropped and the request dials anew.
 */
static enum step tunnel_plain(conn_t *c)
{
	struct conn_orig *o = calloc(1, sizeof(*o));
	char w[512], why[REASON_MAX];

	if (o == NULL) {
		conn_close(c, "out of memory reading plain HTTP in a tunnel", true);
		return STEP_CLOSED;
	}
	/* The tunnel itself has its line (its upstream connection was
	 * made), even when no request in it comes whole (the review of
	 * round 30: a head never finished left none). */
	(void)snprintf(why, sizeof(why), "passavant: %s carries plain HTTP: each request in it is decided and audited",
		       conn_what(c, w, sizeof(w)));
	conn_audit(c, "connect", "allow", why, c->rule);
	(void)snprintf(o->name, sizeof(o->name), "%s", c->tgt.host);
	if (c->tgt.is_ip)
		(void)snprintf(o->ip, sizeof(o->ip), "%s", c->tgt.host);
	o->port = c->tgt.port;
	o->tunnel = true;
	free(c->orig);
	c->orig = o;
	if (c->up.bev != NULL && !c->up.eof && evbuffer_get_length(in_of(&c->up)) == 0)
		c->up.reusable = true;
	else
		conn_drop_upstream(c);
	http1_reset(c->client.http);
	exchange_reset(&c->ex);
	c->first_request = false;
	conn_set_mode(c, CONN_MODE_HTTP);
	conn_set_state(c, CONN_READ_HEAD);
	conn_arm_timer(c, c->head_ms);
	return STEP_AGAIN;
}

/*
 * Whether p[0..n) is TLS records and nothing else (the last one may be
 * cut): content types 20 to 23, version 3.x, lengths from 1 to 2^14 +
 * 2048 (RFC 8446 §5.2). Pure.
 */
static bool tls_framed(const unsigned char *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		size_t rl;

		if (p[off] < 20 || p[off] > 23)
			return false;
		if (n - off < 5)
			return (n - off < 2 || p[off + 1] == 0x03) && (n - off < 3 || p[off + 2] <= 0x04);
		rl = (size_t)p[off + 3] << 8 | p[off + 4];
		if (p[off + 1] != 0x03 || p[off + 2] > 0x04 || rl == 0 || rl > 16384 + 2048)
			return false;
		off += 5 + rl;
	}
	return true;
}

/*
 * An excluded host's tunnel (TUNNEL_OPAQUE) holds a whole ClientHello
 * (msglen handshake bytes) in its first len bytes p: OpenSSL must parse
 * it, everything the client sent must be TLS records, and only the
 * records that hold the hello go upstream now. The rest waits in
 * PASS_HELLO until the upstream's first bytes are TLS too. Round 30's
 * review: a 9-byte "hello" that only the framing read, then SMTP
 * commands, opened a relay to a server that speaks first; a real hello
 * then plain bytes would have too. Its server name, when it sends one,
 * must name the CONNECT host, as in a terminated tunnel (round 31 of the
 * attack: a front end that routes by SNI, behind an excluded name, served
 * a denied one, and with it a method the host's rule refuses).
 */
/* The phase a refusal of an excluded host's hello is made in: a second
 * hello (after a HelloRetryRequest) comes when the server's bytes went to
 * the client, so a refusal then only closes (conn_refuse()). */
static enum exchange_phase hello_refusal_phase(const conn_t *c)
{
	return c->state == CONN_PASS_RETRY ? EX_RESPONDING : EX_WAIT_RESPONSE;
}

static enum step pass_hello(conn_t *c, const unsigned char *p, size_t len, size_t msglen)
{
	char sni[POLICY_HOST_MAX + 1];
	struct tls_hello h;
	size_t off = 0, have = 0;
	char w[512];

	if (tls_hello_parse(tls_hello_ctx(proxy_tls(c->px)), p, len, &h) < 0 || !tls_framed(p, len)) {
		c->ex.phase = hello_refusal_phase(c);
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", CONN_RULE_TUNNEL_OTHER,
				   "passavant: %s refused: the tunnel carries neither HTTP nor TLS (a ClientHello "
				   "OpenSSL cannot read, or other bytes after it), so what it carries cannot be "
				   "decided",
				   conn_what(c, w, sizeof(w)));
	}
	/* An encrypted ClientHello names the server's real choice inside
	 * (round 31's review): only its outer name would be compared. */
	if (h.hides_name) {
		c->ex.phase = hello_refusal_phase(c);
		return conn_refuse(c, 421, NULL, "connect", CONN_RULE_SNI,
				   "passavant: %s refused: the ClientHello offers encrypted_client_hello, which hides "
				   "the name the server routes by (an excluded host's TLS is relayed unopened, so "
				   "that name must be the one in clear)",
				   conn_what(c, w, sizeof(w)));
	}
	if (h.has_sni || h.bad_sni) {
		bool named = !h.bad_sni && policy_host_normalize(h.sni, strlen(h.sni), sni, sizeof(sni)) == NULL;

		if (!named)
			(void)snprintf(sni, sizeof(sni), "%s", "(not a host name)");
		if (!named || strcmp(sni, c->tgt.host) != 0) {
			c->ex.phase = hello_refusal_phase(c);
			return conn_refuse(c, 421, NULL, "connect", CONN_RULE_SNI,
					   "passavant: %s refused: TLS server name %s does not name the CONNECT "
					   "target %s:%u (an excluded host's TLS is relayed unopened: the name its "
					   "server routes by must be the one the policy decided)",
					   conn_what(c, w, sizeof(w)), sni, c->tgt.host, (unsigned)c->tgt.port);
		}
	}
	/* The records up to the one where the hello ends, whole. */
	while (off + 5 <= len && have < msglen) {
		size_t rl = (size_t)p[off + 3] << 8 | p[off + 4];

		off += 5 + rl;
		have += rl;
	}
	if (have < msglen || off > len)
		return STEP_STOP; /* the hello's last record is not whole yet */
	if (sockio_send(&c->up, in_of(&c->client), off) < 0) {
		conn_close(c, "evbuffer move failed", true);
		return STEP_CLOSED;
	}
	c->ex.bytes_up += off;
	conn_set_state(c, CONN_PASS_HELLO);
	conn_arm_timer(c, c->head_ms);
	return STEP_AGAIN;
}

/* The random of a ServerHello that is a HelloRetryRequest (RFC 8446
 * §4.1.3). */
static const unsigned char hrr_random[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c,
					     0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb,
					     0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

/* What a server's first records p[0..n) say (TLS-framed already). */
enum server_first {
	SERVER_MORE,  /* not enough yet to tell */
	SERVER_RETRY, /* a HelloRetryRequest: a second ClientHello comes in clear */
	SERVER_OTHER  /* a ServerHello, an alert, anything else: relayed */
};

/*
 * The handshake message that begins the server's answer, read far
 * enough to see its type and random (4 + 2 + 32 bytes, across records
 * if the server cut it), after any change_cipher_spec. Pure.
 */
static enum server_first server_first(const unsigned char *p, size_t n)
{
	unsigned char hs[38];
	size_t off = 0, have = 0;

	while (have < sizeof(hs)) {
		size_t rl, take;

		if (n - off < 5)
			return SERVER_MORE;
		rl = (size_t)p[off + 3] << 8 | p[off + 4];
		if (p[off] == 20 && have == 0) {
			off += 5 + rl;
			if (off > n)
				return SERVER_MORE;
			continue;
		}
		if (p[off] != 22)
			return SERVER_OTHER;
		take = rl < sizeof(hs) - have ? rl : sizeof(hs) - have;
		if (take > n - off - 5)
			return SERVER_MORE;
		memcpy(hs + have, p + off + 5, take);
		have += take;
		off += 5 + rl;
		if (off > n)
			off = n;
	}
	return hs[0] == 2 && memcmp(hs + 6, hrr_random, sizeof(hrr_random)) == 0 ? SERVER_RETRY : SERVER_OTHER;
}

/* How far conn_step_pass_hello() reads the server's first records: a
 * ServerHello's random cut into one-byte records still fits. */
#define SERVER_FIRST_PEEK 512

/*
 * PASS_HELLO: an excluded host's ClientHello went. The server's answer
 * must be TLS; when it is a HelloRetryRequest, the client's second
 * ClientHello, in clear too, is read as the first was (PASS_RETRY): a
 * client that provokes the retry (no key share the server takes) would
 * otherwise name another server in it, or carry a real value there
 * (round 31's open item).
 */
enum step conn_step_pass_hello(conn_t *c)
{
	unsigned char h[SERVER_FIRST_PEEK];
	ev_ssize_t n = evbuffer_copyout(in_of(&c->up), h, sizeof(h));
	enum server_first sf = SERVER_MORE;
	size_t back;
	char w[512];

	if (n < 0) {
		conn_close(c, "evbuffer_copyout failed", true);
		return STEP_CLOSED;
	}
	if (n > 0 && (!tls_framed(h, (size_t)n) ||
		      ((sf = server_first(h, (size_t)n)) == SERVER_MORE && n == (ev_ssize_t)sizeof(h)))) {
		/* Nothing of it reaches the client: wiped with the upstream. */
		conn_drop_upstream(c);
		c->ex.phase = EX_WAIT_RESPONSE;
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", CONN_RULE_TUNNEL_OTHER,
				   "passavant: %s refused: the server answered the ClientHello with bytes that "
				   "are not TLS, so what the tunnel carries cannot be decided",
				   conn_what(c, w, sizeof(w)));
	}
	if (sf == SERVER_MORE) {
		if (!c->up.eof)
			return STEP_STOP;
		if (n < 3) {
			conn_close(c, "the server closed after the ClientHello", false);
			return STEP_CLOSED;
		}
		/* Cut short: what came goes, and the relay ends. */
	}
	if (sf != SERVER_RETRY) {
		conn_set_state(c, CONN_RELAY);
		conn_arm_timer(c, c->idle_ms);
		return STEP_AGAIN;
	}
	back = evbuffer_get_length(in_of(&c->up));
	if (sockio_send(&c->client, in_of(&c->up), back) < 0) {
		conn_close(c, "evbuffer move failed", true);
		return STEP_CLOSED;
	}
	c->ex.bytes_down += back;
	conn_set_state(c, CONN_PASS_RETRY);
	conn_arm_timer(c, c->head_ms);
	return STEP_AGAIN;
}

/*
 * An excluded host's ClientHello, first or second, at the head of the
 * client's bytes: waited for whole (up to limits.maxHeaderBytes), then
 * checked (a real value in its clear names, pass_hello()).
 */
static enum step opaque_hello(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	size_t len = evbuffer_get_length(in), msglen = 0;
	const unsigned char *p = evbuffer_pullup(in, (ev_ssize_t)len);
	enum tls_hello_state hs;
	const char *cred;
	char w[512];

	if (p == NULL) {
		conn_close(c, "out of memory reading a ClientHello", true);
		return STEP_CLOSED;
	}
	hs = tls_hello_complete(p, len, &msglen);
	if (hs == TLS_HELLO_MORE && len < policy_limits(pol(c))->max_header_bytes && !c->client.eof && !c->up.eof &&
	    evbuffer_get_length(in_of(&c->up)) == 0)
		return STEP_STOP;
	if (hs != TLS_HELLO_DONE) {
		c->ex.phase = hello_refusal_phase(c);
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", CONN_RULE_TUNNEL_OTHER,
				   "passavant: %s refused: the tunnel carries neither HTTP nor TLS, so what it "
				   "carries cannot be decided",
				   conn_what(c, w, sizeof(w)));
	}
	/* Its server name and ALPN travel in clear: a real value there, in
	 * any case, goes nowhere (round 18). */
	cred = proxy_real_in_name(c->px, (const char *)p, len);
	if (cred != NULL) {
		char rule[CONN_RULE_BYTES];

		(void)snprintf(rule, sizeof(rule), "credentials %s: real value", cred);
		if (c->state == CONN_PASS_RETRY)
			c->ex.phase = hello_refusal_phase(c);
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", conn_set_mask_rule(c, "%s", rule),
				   "passavant: CONNECT %s:%u refused by %s: a real value of %s is on its way out "
				   "in a ClientHello (the sandbox should never hold one)",
				   c->tgt.host, (unsigned)c->tgt.port, rule, cred);
	}
	return pass_hello(c, p, len, msglen);
}

/*
 * PASS_RETRY: the server asked for another ClientHello. What it sends
 * goes to the client as it comes; what the client sent before its
 * second hello (change_cipher_spec, early data the server drops after a
 * retry) goes to the server whole record by whole record; then the
 * second hello is read as the first (opaque_hello()). An alert from the
 * client ends the handshake: relayed.
 */
enum step conn_step_pass_retry(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	size_t back = evbuffer_get_length(in_of(&c->up)), len, off = 0;
	const unsigned char *p;
	char w[512];

	if (back > 0) {
		if (sockio_send(&c->client, in_of(&c->up), back) < 0) {
			conn_close(c, "evbuffer move failed", true);
			return STEP_CLOSED;
		}
		c->ex.bytes_down += back;
	}
	len = evbuffer_get_length(in);
	if (len == 0) {
		if (c->client.eof || c->up.eof) {
			conn_close(c, "a side closed before the second ClientHello", false);
			return STEP_CLOSED;
		}
		return STEP_STOP;
	}
	if ((p = evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		conn_close(c, "out of memory reading a ClientHello", true);
		return STEP_CLOSED;
	}
	if (!tls_framed(p, len)) {
		c->ex.phase = EX_RESPONDING;
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", CONN_RULE_TUNNEL_OTHER,
				   "passavant: %s refused: after the server's HelloRetryRequest the tunnel "
				   "carries bytes that are not TLS, so what it carries cannot be decided",
				   conn_what(c, w, sizeof(w)));
	}
	while (len - off >= 5 && (p[off] == 20 || p[off] == 23)) {
		size_t rl = (size_t)p[off + 3] << 8 | p[off + 4];

		if (rl > len - off - 5)
			break;
		off += 5 + rl;
	}
	if (off > 0) {
		if (sockio_send(&c->up, in, off) < 0) {
			conn_close(c, "evbuffer move failed", true);
			return STEP_CLOSED;
		}
		c->ex.bytes_up += off;
		return STEP_AGAIN;
	}
	if (p[0] == 22)
		return opaque_hello(c);
	if (p[0] == 21) {
		conn_set_state(c, CONN_RELAY);
		conn_arm_timer(c, c->idle_ms);
		return STEP_AGAIN;
	}
	/* A record of type 20 or 23 not whole yet. */
	if (c->client.eof || c->up.eof) {
		conn_close(c, "a side closed before the second ClientHello", false);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

/*
 * TLS_SNIFF: the first bytes of every tunnel. A TLS record header is
 * terminated (relayed as it is when the host is excluded); an HTTP
 * request line is read as plain requests, each decided
 * (tunnel_plain()), unless the host has a method restriction: then the
 * tunnel is refused (SPEC §3.1). Anything else (or an upstream that
 * speaks first, as SSH and SMTP do) is refused, as interception refuses
 * it: a channel the policy cannot decide (round 30). Refusals are
 * answered in plain HTTP, which is what a client that does not speak TLS
 * most likely reads.
 */
enum step conn_step_tls_sniff(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	unsigned char head[3];
	ev_ssize_t n = 0;
	enum tls_sniff k = TLS_SNIFF_MORE;
	const char *mrule = NULL;
	char w[512];
	int http;

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
		conn_stop_peek(c);
	switch (k) {
	case TLS_SNIFF_MORE:
		return STEP_STOP;
	case TLS_SNIFF_TLS:
		if (c->plan == TUNNEL_OPAQUE)
			/* excludeDomains: TLS the proxy does not open is
			 * relayed as it is, once a whole ClientHello came
			 * and the server answered it in TLS (pass_hello(),
			 * conn_step_pass_hello()); bytes that only start like
			 * one are refused. */
			return opaque_hello(c);
		/* The ALPN list decides h2: wait for the whole ClientHello
		 * (up to limits.maxHeaderBytes; the handshake refuses
		 * anything that is not one). */
		{
			size_t len = evbuffer_get_length(in), msglen = 0;
			const unsigned char *p = evbuffer_pullup(in, (ev_ssize_t)len);

			if (p == NULL) {
				conn_close(c, "out of memory reading a ClientHello", true);
				return STEP_CLOSED;
			}
			if (!hello_read(c, p, len) && tls_hello_complete(p, len, &msglen) == TLS_HELLO_MORE &&
			    len < policy_limits(pol(c))->max_header_bytes && !c->client.eof)
				return STEP_STOP;
		}
		return conn_start_mitm(c);
	case TLS_SNIFF_OTHER:
		break;
	}
	http = evbuffer_get_length(in) > 0 ? conn_http_start(in) : 0;
	if (http < 0 && !c->client.eof && !c->up.eof && evbuffer_get_length(in_of(&c->up)) == 0)
		return STEP_STOP;
	if (http != 1) {
		/* The 200 went out, but no answer inside the tunnel yet. */
		c->ex.phase = EX_WAIT_RESPONSE;
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", CONN_RULE_TUNNEL_OTHER,
				   "passavant: %s refused: the tunnel carries neither HTTP nor TLS%s, so what "
				   "it carries cannot be decided",
				   conn_what(c, w, sizeof(w)),
				   evbuffer_get_length(in) == 0 ? " (the server spoke first, or nothing came)" : "");
	}
	if (c->plan == TUNNEL_TERMINATE_ONLY) {
		(void)policy_method_allowed(pol(c), c->tgt.host, c->tgt.port, "CONNECT", &mrule);
		if (mrule == NULL)
			mrule = "allowedMethods";
		/* The 200 went out, but no answer inside the tunnel yet. */
		c->ex.phase = EX_WAIT_RESPONSE;
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", mrule,
				   "passavant: %s refused by %s: the tunnel does not carry TLS, so methods "
				   "cannot be enforced",
				   conn_what(c, w, sizeof(w)), mrule);
	}
	return tunnel_plain(c);
}

/*
 * The client's TLS handshake completed: note whether its SNI names the
 * CONNECT host (a mismatch is answered 421 to its first request, inside
 * TLS, so it can read why), then read requests inside the tunnel.
 */
void conn_tls_accepted(conn_t *c)
{
	char sni[POLICY_HOST_MAX + 1];
	const char *raw;

	proxy_note_churn(c->px);
	c->client.kicked = false;
	/* From here on the client's records are read by sockio.c; when it
	 * cannot (out of memory), libevent goes on reading them. */
	if (sockio_tls_reader_new(c, &c->client) < 0)
		log_debug("conn %s: libevent keeps reading the client's TLS", c->client.peer);
	free(c->sni);
	c->sni = NULL;
	c->sni_mismatch = false;
	if (tls_client_sni(c->client.bev, sni, sizeof(sni), &raw)) {
		/* Searched as sent: normalising lowers its case. */
		const char *cred = proxy_real_in_name(c->px, raw, strlen(raw));
		char named[160];

		/* A server name carrying a real value (round 15 of the
		 * attack) is never kept: the 421 names the credential. */
		if (cred != NULL)
			(void)snprintf(named, sizeof(named), "[one carrying a real value of %s]", cred);
		c->sni = strdup(cred != NULL ? named : sni);
		if (c->sni == NULL) {
			conn_close(c, "out of memory keeping the client's SNI", true);
			return;
		}
		c->sni_mismatch = cred != NULL || strcmp(sni, c->tgt.host) != 0;
		explicit_bzero(sni, sizeof(sni));
	}
	if (tls_alpn_h2(c->client.bev)) {
		if (conn_h2_start(c) != STEP_CLOSED)
			conn_drive(c);
		return;
	}
	http1_reset(c->client.http);
	exchange_reset(&c->ex);
	c->first_request = false;
	conn_set_state(c, CONN_READ_HEAD);
	conn_arm_between(c);
	conn_drive(c);
}

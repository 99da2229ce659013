/*
 * exchange.c - one request/response exchange on a connection: the request
 * head read (READ_HEAD), the HTTP relay with masking (RELAY in modes HTTP
 * and TERMINATED: request body up, response head and body down), and the
 * end of the exchange (audit, keep-alive: exchange_reset()).
 */
#include "conn_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <event2/buffer.h>

#include "base/defaults.h"
#include "formmethod.h"
#include "log.h"
#include "sockio.h"

/* A new exchange: every field back to its initial value. */
void exchange_reset(struct exchange *ex)
{
	memset(ex, 0, sizeof(*ex));
	ex->phase = EX_IDLE;
	ex->kind = EX_KIND_REQUEST;
	ex->up_use = EX_UP_FRESH;
}

#define CONN_STR_(x) #x
#define CONN_STR(x) CONN_STR_(x)

/* How a head error reads: 405 is a refusal, 505 says which version, 431
 * a limit, 400 malformed. */
static const char *head_error_prefix(int status)
{
	switch (status) {
	case 405:
	case 505:
		return "";
	case 431:
		return "request head refused (limits.maxHeaderBytes, " CONN_STR(PASSAVANT_MAX_HEADER_COUNT) " fields): ";
	default:
		return "malformed request: ";
	}
}

/*
 * The first byte on the proxy port is a TLS record's (0x16): a client
 * was told HTTPS_PROXY=https://... and speaks TLS to the proxy. No HTTP
 * answer would reach it (it reads TLS records), so it is refused with a
 * line that says what to change; true then (c is closed). A request
 * line never starts with 0x16.
 */
static bool tls_on_proxy_port(conn_t *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?", addr[INET6_ADDRSTRLEN + 8];
	unsigned char b0;
	evutil_socket_t fd = bufferevent_getfd(c->client.bev);
	bool v6 = false;
	unsigned port = 0;

	if (evbuffer_copyout(in_of(&c->client), &b0, 1) != 1 || b0 != 0x16)
		return false;
	if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET) {
			(void)inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			(void)inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
			v6 = true;
		}
	}
	(void)snprintf(addr, sizeof(addr), "%s%s%s:%u", v6 ? "[" : "", ip, v6 ? "]" : "", port);
	conn_refuse_raw(c,
			"passavant: TLS arrived on the proxy port %s: the proxy speaks plain HTTP; "
			"set HTTPS_PROXY=http://%s (not https://)",
			addr, addr);
	return true;
}

enum step conn_step_read_head(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);

	/* An idle upstream kept for reuse that closed or spoke out of turn
	 * cannot carry the next request. */
	if (c->up.bev != NULL && (c->up.eof || evbuffer_get_length(in_of(&c->up)) > 0))
		conn_drop_upstream(c);
	while (evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		enum http1_result r;
		size_t n = 0;

		if (c->ex.phase == EX_IDLE) {
			c->ex.phase = EX_REQ_HEAD;
			/* A head refused before conn_decide() (malformed, 431) is
			 * audited with its duration from here (SPEC §6). */
			conn_now(&c->ex.t0);
			/* A keep-alive client waited under the idle timeout;
			 * from its first byte the head timeout applies. */
			if (!c->first_request)
				conn_arm_timer(c, c->head_ms);
			if (c->first_request && !intercepted(c) && tls_on_proxy_port(c))
				return STEP_CLOSED;
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
			return conn_decide(c);
		case HTTP1_ERROR:
			return conn_refuse(c, http1_error_status(c->client.http), NULL, "request", NULL,
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

/* Whether c's request to an inject host asked for a range that did not
 * go up (http1_range_dropped()). */
static bool range_dropped(const conn_t *c)
{
	return c->ex.identity && http1_range_dropped(c->client.http);
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
	} else if (range_dropped(c)) {
		/* SPEC §4.3: a range is not served towards an inject host; a
		 * resuming client (curl -C -: 33) is told why by its audit
		 * line and the answer's Passavant-Range field. */
		log_info("%s", cmask_range_note(note, sizeof(note), c->tgt.host, c->tgt.port));
	}
	conn_audit(c, "request", "allow", left != NULL || range_dropped(c) ? note : NULL, c->rule);
	c->up.reusable = c->ex.req_done && !c->up.eof && !c->ex.up_close && http1_keep_alive(c->up.http);
	if (!c->up.reusable)
		conn_drop_upstream(c);
	/* The exchange is over: a body that got a real value no longer
	 * keeps other connections' held bytes back (after the grace). */
	conn_body_injected_done(c);
	if (c->ex.client_close || !c->ex.req_done || c->client.eof)
		return conn_enter_draining(c);
	if (c->mode == CONN_MODE_TERMINATED) {
		/* The first request of a new tunnel frees buffers too: the
		 * proxy trims the heap after them as after handshakes. */
		if (!c->answered) {
			c->answered = true;
			proxy_note_churn(c->px);
		}
		/* An idle terminated tunnel keeps its parsers without head
		 * buffers (memory per open tunnel; conn_send_request() resets the
		 * response parser before it is used again). Plain HTTP keeps
		 * them: no allocation per request where a request costs the
		 * least. c->tgt.path points into the request's head
		 * (judge_request() in decide.c): it goes with the buffer, so a refusal
		 * before the next head is decided records no freed target. */
		c->tgt.path = "";
		c->tgt.path_len = 0;
		http1_release(c->client.http);
		if (c->up.reusable)
			http1_release(c->up.http);
	} else {
		/* The buffer stays, but the next head may outgrow it: no
		 * pointer into it outlives this request (round 9). */
		c->tgt.path = "";
		c->tgt.path_len = 0;
		http1_reset(c->client.http);
	}
	/* Inside a terminated tunnel the target stays the CONNECT's
	 * (have_target()). */
	exchange_reset(&c->ex);
	c->first_request = false;
	conn_set_state(c, CONN_READ_HEAD);
	conn_arm_between(c);
	return STEP_AGAIN;
}

/* Writes the response head for the client into client.pending, remasked
 * (SPEC §4.3: real values in headers become sentinels), without an inject
 * host's digest fields (cmask_drop_digests()). Returns 0, -1
 * (ENOMEM), or 1 when a real value is left in it with its case changed
 * (*cred its credential; nothing written: head_real_refused()). */
static int write_response_head(conn_t *c, unsigned add, const char **cred)
{
	size_t from = evbuffer_get_length(c->client.pending);

	int rc;

	*cred = NULL;
	if (http1_write_response_head(c->up.http, c->client.pending, add) < 0)
		return -1;
	rc = c->mask != NULL ? cmask_response_head(c->mask, c->client.pending, from, cred) : 0;
	/* an inject host's digest of its body is an oracle on the real
	 * value the body may have held (cmask_digest_field()) */
	if (rc == 0 && c->ex.identity && cmask_drop_digests(c->client.pending, from, true, false) < 0)
		return -1;
	return rc;
}

/* A response head holding a real value with its case changed (a field's
 * name: HTTP/2 lowers every one, Go's net/http writes its canonical
 * form): no sentinel form matches it, so the response is refused. */
static enum step head_real_refused(conn_t *c, const char *cred)
{
	return conn_refuse(c, 502, NULL, "request", c->rule,
			   "passavant: the response head from %s carries a real value of %s with its case changed (or its %%XX decoded, or an escape at an end) "
			   "(in a field's name or value, or its status line): it cannot be re-masked, so the response is not "
			   "passed on",
			   c->up.peer, cred);
}

/*
 * The verdict on the final response head of c (cmask_head_judge()): one
 * pass over its fields, through the classifier HTTP/2 shares
 * (h2stream.c).
 */
static enum cmask_head_verdict judge_response_head(const conn_t *c)
{
	struct cmask_head hc = {0};
	const char *name, *val;
	size_t nlen, vlen;

	if (c->mask == NULL || http1_message_done(c->up.http))
		return CMASK_HEAD_PASS;
	for (size_t i = 0; i < http1_header_count(c->up.http); i++) {
		http1_header(c->up.http, i, &name, &nlen, &val, &vlen);
		cmask_head_field(&hc, name, nlen, val, vlen);
	}
	return cmask_head_judge(&hc, c->ex.status, true, c->ex.identity, true);
}

/*
 * After a real value was found on its way out: what waits for the
 * upstream is wiped, and its connection will end with an RST (SO_LINGER
 * 0), not a FIN that could end a close-delimited or partly sent body
 * cleanly.
 */
void conn_wipe_reset_upstream(conn_t *c)
{
	if (c->mask != NULL)
		cmask_wipe_drain(cmask_out(c->mask, CMASK_OUT));
	cmask_wipe_drain(c->up.pending);
	sockio_reset_on_close(&c->up);
}

/*
 * A request refused in the middle of its body: what waits for the
 * upstream is wiped and its connection dropped with an RST
 * (conn_wipe_reset_upstream()); the caller sends the 403.
 */
static void abandon_upstream(conn_t *c)
{
	conn_wipe_reset_upstream(c);
	conn_drop_upstream(c);
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

	abandon_upstream(c);
	c->rule = conn_set_mask_rule(c, "credentials %s: real value", cred);
	return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "request", c->rule,
			   "passavant: %s refused by %s: a real value of %s is on its way out in the body "
			   "(the sandbox should never hold one); the upstream connection was reset",
			   conn_what(c, w, sizeof(w)), c->rule, cred);
}

/*
 * The body named a method the host's rule does not allow (a form's
 * _method=DELETE on a [GET, POST] host, formmethod.h). What came before
 * it may have gone up, so the request must not complete: refused as a
 * real value in a body is (refuse_body_leak()), the upstream connection
 * reset, the 403 sent unless a response already started.
 */
static enum step refuse_body_method(conn_t *c)
{
	struct verdict v;
	char w[512];

	abandon_upstream(c);
	conn_verdict_body_method(&v, conn_what(c, w, sizeof(w)), &c->ex.fm, "the upstream connection was reset");
	formmethod_off(&c->ex.fm);
	c->rule = v.rule;
	return conn_refuse(c, v.status, v.xerr, v.kind, v.rule, "%s", v.reason);
}

/*
 * A trailer field on a method-listed host (http1_refuse_trailers(): a
 * server may merge it into the head, X-HTTP-Method-Override among them).
 * What came before it may have gone up, so the request must not
 * complete: refused as the two above are.
 */
static enum step refuse_body_trailer(conn_t *c)
{
	char w[512];

	abandon_upstream(c);
	c->rule = "network.allowedMethods";
	return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "request", c->rule,
			   "passavant: %s refused by %s: %s; the upstream connection was reset",
			   conn_what(c, w, sizeof(w)), c->rule, http1_error_reason(c->client.http));
}

/*
 * Request body, client -> upstream, while the upstream's output has room.
 * Returns true to go on, else false with *st the step to return.
 */
static bool relay_request_body(conn_t *c, enum step *st)
{
	struct evbuffer *cin = in_of(&c->client), *uout = out_of(&c->up);
	struct evbuffer_iovec v;
	enum http1_result r;
	size_t n;

	while (!c->ex.req_done && evbuffer_get_length(cin) > 0 &&
	       evbuffer_get_length(uout) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		if (evbuffer_peek(cin, -1, NULL, &v, 1) < 1)
			break;
		r = http1_feed(c->client.http, v.iov_base, v.iov_len, &n);
		if (r == HTTP1_ERROR && http1_error_status(c->client.http) == 403) {
			*st = refuse_body_trailer(c);
			return false;
		}
		if (r == HTTP1_ERROR) {
			*st = conn_refuse(c, 400, NULL, "request", NULL, "passavant: malformed request body: %s",
					  http1_error_reason(c->client.http));
			return false;
		}
		/* The span that ends a refused _method value never goes up
		 * (the watch read it during the feed). */
		if (formmethod_on(&c->ex.fm) &&
		    (c->ex.fm.refused || (r == HTTP1_DONE && !formmethod_end(&c->ex.fm)))) {
			*st = refuse_body_method(c);
			return false;
		}
		if (c->ex.mask_req_body) {
			const char *leak;

			if (cmask_body_take(c->mask, CMASK_OUT, cin, n) < 0 ||
			    (r == HTTP1_DONE && cmask_body_end(c->mask, CMASK_OUT) < 0))
				goto oom;
			if ((leak = cmask_leak(c->mask, CMASK_OUT)) != NULL) {
				*st = refuse_body_leak(c, leak);
				return false;
			}
			/* counted before any of it goes up */
			conn_body_injected_note(c);
			if (conn_mask_pass(c, CMASK_OUT) < 0)
				goto oom;
		} else if (sockio_pass_on(&c->up, cin, n) < 0) {
			conn_close(c, "evbuffer move failed", true);
			*st = STEP_CLOSED;
			return false;
		}
		c->ex.bytes_up += n;
		conn_touch(c);
		if (r == HTTP1_DONE)
			c->ex.req_done = true;
	}
	return true;
oom:
	conn_close(c, "out of memory substituting a request body", true);
	*st = STEP_CLOSED;
	return false;
}

/*
 * A 101 to the upgrade we forwarded: the head goes to the client and the
 * exchange becomes an UPGRADED stream, framed both ways: remasked
 * inbound, searched for real values outbound (SPEC §4.2, §4.3, §5). Bytes
 * after either head stay in the input buffers for conn_step_tunnel().
 */
static enum step take_upgrade(conn_t *c)
{
	const char *cred;
	bool ext;
	int hr;

	/* Only an upgrade we forwarded may be accepted. */
	if (c->ex.kind != EX_KIND_UPGRADE)
		return conn_refuse(c, 502, NULL, "request", c->rule, "passavant: unexpected 101 from %s",
				   c->up.peer);
	ext = http1_header_find(c->up.http, "sec-websocket-extensions", NULL) > 0;
	if (c->ex.identity && ext)
		return conn_refuse(c, 502, NULL, "request", c->rule,
				   "passavant: %s accepted the upgrade with a WebSocket extension "
				   "although none was offered: compressed frames cannot be scanned "
				   "for real values",
				   c->up.peer);
	if ((hr = write_response_head(c, HTTP1_HEAD_UPGRADE, &cred)) > 0)
		return head_real_refused(c, cred);
	if (hr < 0 || (c->mask != NULL && cmask_ws_begin(c->mask, c->tgt.host, c->tgt.port, ext) < 0)) {
		conn_close(c, "out of memory writing a response head", true);
		return STEP_CLOSED;
	}
	c->ex.phase = EX_RESPONDING;
	conn_set_mode(c, CONN_MODE_UPGRADED);
	/* Audited when the stream ends (conn_close()), with what it moved
	 * each way and what was re-masked: written here, at the 101, the
	 * line said 0 bytes whatever the stream then carried (round 33 of
	 * the attack). */
	return STEP_AGAIN;
}

/*
 * Whether a close-delimited response body that is re-masked goes to the
 * client chunked. Its end is the upstream's close, and a close ended by
 * anything but TLS's close_notify (a FIN, a reset) cannot be told from a
 * cut: the re-masker then drops the last bytes that came (SPEC §4.3),
 * and a cut for a case-changed real value drops the rest. Sent
 * close-delimited, either reached the client as a clean end, the body
 * silently short (curl and python take a close-delimited body that ends
 * without close_notify as whole). Chunked, only the clean end sends the
 * last chunk; any other leaves the body visibly unfinished. A client of
 * HTTP/1.0 cannot read chunked: it gets the body as it came. A head with
 * a transfer coding but chunked never gets here (take_response_head()
 * refuses it while credentials are masked).
 */
static bool reframe_close_delimited(const conn_t *c)
{
	return c->mask != NULL && !http1_message_done(c->up.http) && http1_needs_eof(c->up.http) &&
	       http1_version_minor(c->client.http) >= 1 &&
	       http1_header_find(c->up.http, "transfer-encoding", NULL) == 0;
}

/*
 * A whole response head came: an upgrade, an interim response (relayed,
 * then the final one is awaited) or the final head, whose body the
 * inbound substituter then takes. Returns true to go on reading, else
 * false with *st the step to return.
 */
static bool take_response_head(conn_t *c, enum step *st)
{
	enum cmask_head_verdict verdict;
	const char *cred;
	bool reframe;
	int hr;

	c->ex.status = http1_status(c->up.http);
	if (c->ex.status == 101) {
		*st = take_upgrade(c);
		return false;
	}
	if (c->ex.status >= 100 && c->ex.status < 200) {
		if ((hr = write_response_head(c, 0, &cred)) > 0) {
			*st = head_real_refused(c, cred);
			return false;
		}
		if (hr < 0)
			goto oom;
		http1_reset(c->up.http);
		http1_set_head_request(c->up.http, http1_method_is(c->client.http, "HEAD"));
		return true;
	}
	/*
	 * A body the re-masker cannot read whole (cmask_head_judge()):
	 * - a transfer coding but chunked (gzip, "gzip, chunked"), from any
	 *   host, while credentials are masked: the proxy never asks for one
	 *   (TE is not passed on, RFC 9112 §7.4), the re-masker cannot read
	 *   through it, and without chunked last the body ends with the
	 *   connection and cannot be reframed (reframe_close_delimited()): a
	 *   cut would reach the client as a clean end. Refused as requests
	 *   with one are (SPEC §5). Round 43: such a body went as it came.
	 * - from an inject host, a Content-Encoding although identity was
	 *   asked for;
	 * - from an inject host, a charset whose bytes are not ASCII's: asked
	 *   for none (Accept-Charset does not go up), but a server may take
	 *   one from Accept's charset parameter (ASP.NET Core, JAX-RS): in
	 *   UTF-16 a real value is no byte string the re-masker knows;
	 * - from an inject host, a 206: no range went up
	 *   (http1_write_request_head()), but a server may take one from
	 *   where the proxy does not look (S3's partNumber, a field of its
	 *   own): a part could hold part of a real value, which no scan sees
	 *   whole (SPEC §4.3).
	 */
	if ((verdict = judge_response_head(c)) != CMASK_HEAD_PASS) {
		*st = conn_refuse(c, 502, NULL, "request", c->rule, "passavant: %s %s", c->up.peer,
				  cmask_head_why(verdict));
		return false;
	}
	c->ex.client_close = c->ex.client_close || !http1_keep_alive(c->client.http) ||
			     http1_needs_eof(c->up.http);
	reframe = reframe_close_delimited(c);
	c->ex.reframed = reframe;
	if ((hr = write_response_head(c, (c->ex.client_close ? HTTP1_HEAD_CLOSE : 0u) |
						 (reframe ? HTTP1_HEAD_CHUNKED : 0u) |
						 (range_dropped(c) ? HTTP1_HEAD_RANGE_DROPPED : 0u),
				      &cred)) > 0) {
		*st = head_real_refused(c, cred);
		return false;
	}
	if (hr < 0)
		goto oom;
	c->ex.phase = EX_RESPONDING;
	if (http1_message_done(c->up.http)) {
		c->ex.phase = EX_DONE;
	} else if (c->mask != NULL) {
		bool chunked = http1_chunked(c->up.http) || reframe;

		if (cmask_body_begin(c->mask, CMASK_IN, c->tgt.host, c->tgt.port, true, chunked) < 0)
			goto oom;
		if (chunked)
			http1_set_body_sink(c->up.http, cmask_body_sink, cmask_sink_arg(c->mask, CMASK_IN));
		c->ex.mask_resp_body = true;
	}
	return true;
oom:
	conn_close(c, "out of memory writing a response head", true);
	*st = STEP_CLOSED;
	return false;
}

/*
 * Response, upstream -> client, while the client's output has room. With
 * masking, the substituted body collects in the substituter's output and
 * is passed on once, after the loop (cmask_ready() splits a chain to hold
 * the tail back: once per step, not once per chain). Returns true to go
 * on, else false with *st the step to return.
 */
static bool relay_response(conn_t *c, enum step *st)
{
	struct evbuffer *uin = in_of(&c->up), *cout = out_of(&c->client);
	struct evbuffer_iovec v;
	enum http1_result r;
	size_t n;

	while (c->ex.phase != EX_DONE && evbuffer_get_length(uin) > 0 &&
	       evbuffer_get_length(cout) < PASSAVANT_OUTBUF_HIGH_BYTES &&
	       (!c->ex.mask_resp_body ||
		evbuffer_get_length(cmask_out(c->mask, CMASK_IN)) < PASSAVANT_OUTBUF_HIGH_BYTES)) {
		bool in_head = !http1_head_done(c->up.http);

		if (evbuffer_peek(uin, -1, NULL, &v, 1) < 1)
			break;
		r = http1_feed(c->up.http, v.iov_base, v.iov_len, &n);
		conn_touch(c);
		if (c->ex.mask_resp_body && (cmask_case_real(c->mask) != NULL || cmask_in_refused(c->mask) != NULL)) {
			/* The chunked body's sink found it, or UTF-16 text
			 * (conn_close() says what and cuts). */
			conn_close(c, "a real value with its case changed", true);
			*st = STEP_CLOSED;
			return false;
		}
		if (r == HTTP1_ERROR) {
			*st = conn_refuse(c, 502, NULL, "request", c->rule,
					  "passavant: malformed response from %s: %s", c->up.peer,
					  http1_error_reason(c->up.http));
			return false;
		}
		if (in_head) {
			(void)evbuffer_drain(uin, n);
			if (r != HTTP1_MORE && !take_response_head(c, st))
				return false;
			continue;
		}
		if (c->ex.mask_resp_body) {
			if (cmask_body_take(c->mask, CMASK_IN, uin, n) < 0 ||
			    (r == HTTP1_DONE &&
			     (cmask_body_end(c->mask, CMASK_IN) < 0 || conn_mask_pass(c, CMASK_IN) < 0))) {
				conn_close(c, "out of memory remasking a response body", true);
				*st = STEP_CLOSED;
				return false;
			}
		} else if (sockio_pass_on(&c->client, uin, n) < 0) {
			conn_close(c, "evbuffer move failed", true);
			*st = STEP_CLOSED;
			return false;
		}
		c->ex.bytes_down += n;
		if (r == HTTP1_DONE)
			c->ex.phase = EX_DONE;
	}
	if (c->ex.mask_resp_body && c->ex.phase != EX_DONE && conn_mask_pass(c, CMASK_IN) < 0) {
		conn_close(c, "out of memory writing a response head", true);
		*st = STEP_CLOSED;
		return false;
	}
	return true;
}

/*
 * The upstream ended and all it sent was read: a close-delimited body
 * ends with it; a head cut short closes; no response at all is re-sent
 * once when the upstream was a reused one, else answered 502.
 */
static enum step upstream_ended(conn_t *c)
{
	enum step st;
	bool whole;

	if (http1_head_done(c->up.http)) {
		if (http1_finish(c->up.http) != HTTP1_DONE) {
			conn_close(c, "upstream closed in the middle of a response", true);
			return STEP_CLOSED;
		}
		c->ex.phase = EX_DONE;
		/* A body that ends with the connection, ended by an error (no
		 * close_notify, a reset): the client must see the truncation
		 * as it would directly, not a clean end (conn_step_drain()). */
		if (c->up.failed && http1_needs_eof(c->up.http) && c->client.ssl != NULL) {
			c->tls_end = TLS_END_TRUNCATE;
			log_info("conn %s: %s ended a close-delimited body with an error: "
				 "closing the client without close_notify",
				 c->client.peer, c->up.peer);
		}
		/* A close-delimited body ends with the connection. With
		 * TLS's close_notify that is its end, and what was held goes
		 * resolved, as at the end of a Content-Length body; a plain
		 * FIN or an error (a reset, which a sandbox can provoke by
		 * sending a big body to an upstream that answers without
		 * reading it; TLS without close_notify) cannot be told from
		 * a cut, and the last longest - 1 bytes that came are
		 * dropped (SPEC §4.3). Either way the same bytes whatever
		 * they are: dropping only those that could begin a real
		 * value told the sandbox which of its guesses did (round 32
		 * of the attack); releasing them at a reset or a FIN handed
		 * it a real value cut one byte short (its review). */
		/* A FIN (not an error) when a cut would drop nothing (nothing
		 * held nor kept back: !cmask_waiting(); a close-delimited
		 * body is never released before its end, so no body bytes
		 * came; whether any came, not which: it tells nothing about
		 * them) ends the body whole: its last chunk goes
		 * (reframe_close_delimited()), as a client reading it
		 * directly takes it. Review of f5b5fa5: chunked without it,
		 * an empty body (an HTTP/1.0 redirect without Content-Length)
		 * was a failed transfer (curl 18). A TLS upstream's FIN
		 * without close_notify is such a FIN too (up.fin_end: curl,
		 * Go, Node, Java and python take an empty body so ended as
		 * whole); before round 43 only a plain one was, and an empty
		 * body from a server that skips close_notify failed. */
		whole = c->ex.mask_resp_body ? conn_up_closed_cleanly(c) ||
						       ((!c->up.failed || c->up.fin_end) &&
							!cmask_waiting(c->mask, CMASK_IN))
					     : !c->up.failed || c->up.fin_end;
		if (c->ex.mask_resp_body &&
		    ((whole ? cmask_body_end(c->mask, CMASK_IN) : cmask_body_cut(c->mask, CMASK_IN)) < 0 ||
		     conn_mask_pass(c, CMASK_IN) < 0)) {
			conn_close(c, "out of memory writing a response head", true);
			return STEP_CLOSED;
		}
		/* Review of round 43: a body that goes to the client as it
		 * came, close-delimited (a client of HTTP/1.0, or nothing
		 * re-masked), and was cut (its tail dropped, a reset, an
		 * alert) ended with a FIN, which is its end to the client:
		 * curl --http1.0 took it whole, exit 0. Once all is sent the
		 * client's connection ends with an RST (conn_step_drain()),
		 * which curl, Node, Go and Java report as an error. */
		if (!whole && http1_needs_eof(c->up.http) && !c->ex.reframed) {
			c->client_rst = true;
			if (c->client.ssl != NULL)
				c->tls_end = TLS_END_TRUNCATE;
			log_info("conn %s: %s's close-delimited body was cut: resetting the client's connection "
				 "once it is sent",
				 c->client.peer, c->up.peer);
		}
		return finish_request(c);
	}
	/* A kept-alive upstream may close just as a request goes out (its
	 * idle timeout): re-send once on a fresh connection, but only a
	 * request without a body, which is fully replayable. */
	if (c->ex.up_use == EX_UP_REUSED && c->ex.req_done && c->ex.bytes_up == 0) {
		c->ex.up_use = EX_UP_RETRIED;
		conn_drop_upstream(c);
		/* The head went out with the lost connection: again. */
		if (!conn_prepare_request(c, &st))
			return st;
		return conn_dial(c, CONN_UPSTREAM_CONNECTING);
	}
	return conn_refuse(c, 502, NULL, "request", c->rule,
			   "passavant: %s closed the connection without a response", c->up.peer);
}

enum step conn_step_http(conn_t *c)
{
	enum step st;

	if (!relay_request_body(c, &st) || !relay_response(c, &st))
		return st;
	if (c->ex.phase == EX_DONE)
		return finish_request(c);
	if (c->up.eof && evbuffer_get_length(in_of(&c->up)) == 0)
		return upstream_ended(c);
	if (c->client.eof && !c->ex.req_done && evbuffer_get_length(in_of(&c->client)) == 0) {
		conn_close(c, "client closed in the middle of a request", true);
		return STEP_CLOSED;
	}
	return STEP_STOP;
}

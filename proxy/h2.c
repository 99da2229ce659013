/*
 * h2.c - HTTP/2 inside a terminated tunnel (h2.h): the two nghttp2
 * sessions, the streams between them, their decisions, masking and
 * audit lines.
 *
 * A stream (struct h2s) lives from the client's HEADERS until it is
 * closed on both sessions. Its phases:
 *
 *   HEAD -> (decided) FORWARD -> closed on both sides: freed
 *        -> (refused) ANSWERED -> closed on the client side: freed
 *
 * Nothing is called back into conn.c from inside an nghttp2 callback:
 * callbacks record, and conn_step_h2() acts once the session call
 * returned.
 */
#include "h2.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include "audit.h"
#include "base/defaults.h"
#include "log.h"
#include "tls.h"

/* Streams the client may open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
#define H2_MAX_STREAMS 100
/* Flow-control windows we give each peer: per stream, and for the
 * connection (which bounds what all streams together may hold here). */
#define H2_STREAM_WINDOW 65535
#define H2_CONN_WINDOW (1024 * 1024)
/* RST_STREAM frames a client may send: a burst, then per second (the
 * "rapid reset" attack, CVE-2023-44487). */
#define H2_RESET_BURST 200
#define H2_RESET_RATE 50
/* CONTINUATION frames after a HEADERS (CVE-2024-28182). */
#define H2_MAX_CONTINUATIONS 8
/* How long held response bytes wait for more at a DATA frame boundary. */
#define H2_HOLD_MS 100
/* Interim (1xx) heads an upstream may send on one stream: HEADERS are not
 * flow controlled, so each would be queued for the client. */
#define H2_MAX_INTERIM 8

/* What a target that carries a real value is written as (conn.c's too). */
#define H2_REDACTED "/[redacted: it carries a real value]"

enum h2s_phase {
	H2S_HEAD,     /* the request head is arriving */
	H2S_FORWARD,  /* sent upstream: bodies and the response flow */
	H2S_ANSWERED  /* answered here (a refusal): nothing upstream */
};

typedef struct h2 h2_t;

/* One stream: a client stream and, once forwarded, its upstream stream. */
struct h2s {
	struct h2s *next;
	struct h2s **pprev;
	h2_t *h;
	int32_t cid;               /** client stream id */
	int32_t uid;               /** upstream stream id, -1 before it exists */
	enum h2s_phase phase;
	bool cl_open;              /** open on the client session */
	bool up_open;              /** open on the upstream session */
	bool audited;              /** its audit line was written */
	bool redact;               /** its target carries a real value: written nowhere */
	bool head_big;             /** its head passed limits.maxHeaderBytes (431) */
	bool req_end;              /** the client ended the request (END_STREAM) */
	bool resp_started;         /** a final response head went to the client */
	bool resp_end;             /** the upstream ended the response */
	bool in_frame;             /** inside an upstream DATA frame (hold-back release waits) */
	bool mask_req;             /** the request body goes through the substituter */
	bool mask_resp;            /** the response body goes through the substituter */
	unsigned ninterim;         /** interim (1xx) heads from the upstream */
	unsigned nfields;          /** fields of the head being read */
	unsigned nhost;            /** Host fields in the request head */
	size_t head_bytes;         /** bytes of the head being read (RFC 9113 §6.5.2 sizes) */
	char *method;              /** :method */
	char *path;                /** :path (origin form) */
	char *authority;           /** :authority, or NULL */
	char *host;                /** the first Host field, or NULL */
	struct evbuffer *fields;   /** head being read: "name: value\r\n" lines */
	struct evbuffer *req;      /** request body for the upstream (substituted) */
	struct evbuffer *resp;     /** response body for the client (remasked) */
	struct evbuffer *trailers; /** the response's trailer lines (remasked), or NULL */
	int rstatus;               /** :status of the response head being read */
	cmask_t *mask;             /** this stream's masking, or NULL */
	proxy_policy_t *pol;       /** the policy this stream was decided with */
	const char *rule;          /** the deciding rule (policy or static storage) */
	char mask_rule[POLICY_HOST_MAX + 64];
	int status;                /** status sent to the client */
	struct timeval t0;
	uint64_t bytes_up;         /** request DATA received from the client */
	uint64_t bytes_down;       /** response DATA received from the upstream */
	uint64_t down_taken;       /** client DATA acknowledged (consumed) */
	uint64_t up_taken;         /** upstream DATA acknowledged (consumed) */
};

struct h2 {
	conn_t *c;
	nghttp2_session *down;     /** server session with the client */
	nghttp2_session *up;       /** client session with the upstream */
	struct h2s *streams;       /** open streams */
	struct evbuffer *scratch;  /** one DATA chunk on its way into a substituter */
	struct event *tail_ev;     /** masking: releases held response bytes after a pause */
	bool ending;               /** GOAWAY sent to the client: no new stream, close when done */
	bool up_gone;              /** the upstream ended or failed */
	bool up_goaway;            /** the upstream said GOAWAY: no new stream, the others finish */
	bool up_ended;             /** upstream_gone() ran */
	bool fatal;                /** a session failed: close now */
	int64_t cancels;           /** forwarded streams that may still be cut off (a token bucket) */
	unsigned wu_sent;          /** WINDOW_UPDATE frames sent upstream */
	unsigned wu_seen;          /** of them, those a PING acknowledged after them covers */
	unsigned wu_ping;          /** wu_sent when the PING in flight was sent */
	bool ping_out;             /** a PING of ours to the upstream awaits its ACK */
	struct timeval seen_t;     /** when wu_seen last changed */
	struct timeval cancel_t;   /** when cancels was last refilled */
	char why[160];             /** why the connection ends (log) */
};

static void h2s_free(h2_t *h, struct h2s *s);
static void answer(struct h2s *s, int status, const char *xerr, const char *rule, const char *fmt, ...)
	PRINTF(5, 6);

/* ---- small helpers ------------------------------------------------------ */

static conn_t *conn_of(struct h2s *s)
{
	return s->h->c;
}

static const policy_t *spol(const struct h2s *s)
{
	return proxy_policy(s->pol);
}

static char *dup_n(const uint8_t *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

/* Empties b, wiping it (a head or body may hold real values), and frees it. */
static void wipe_free(struct evbuffer *b)
{
	if (b == NULL)
		return;
	cmask_wipe_drain(b);
	evbuffer_free(b);
}

/* "GET https://host/path" for reasons (the path cut at 200 bytes). */
static const char *what(const struct h2s *s, char *buf, size_t len)
{
	const conn_t *c = s->h->c;
	const char *p = s->path != NULL ? s->path : "";

	if (s->redact)
		(void)snprintf(buf, len, "%s https://%s%s", s->method != NULL ? s->method : "?",
			       c->tgt.authority, H2_REDACTED);
	else
		(void)snprintf(buf, len, "%s https://%s%.200s", s->method != NULL ? s->method : "?",
			       c->tgt.authority, p);
	return buf;
}

/* The message of direction d was cut off: what its substituter holds,
 * which may begin a real value, is dropped (SPEC §4.3). */
static void cut(struct h2s *s, enum cmask_dir d)
{
	if (cmask_body_cut(s->mask, d) < 0)
		log_debug("h2: out of memory cutting a stream's body");
}

/* Whether the whole response went to the client's session. */
static bool answered(const struct h2s *s)
{
	return s->resp_end && evbuffer_get_length(s->resp) == 0 &&
	       (s->mask == NULL || !s->mask_resp || !cmask_waiting(s->mask, CMASK_IN));
}

/* ---- audit ---------------------------------------------------------------- */

/* The stream's audit line (once). */
static void audit(struct h2s *s, const char *decision, const char *reason, const char *rule)
{
	conn_t *c = conn_of(s);
	const char *injected[64];
	struct audit_rec r;

	if (s->audited)
		return;
	s->audited = true;
	memset(&r, 0, sizeof(r));
	r.kind = "request";
	r.method = s->method;
	r.scheme = "https";
	r.host = c->tgt.host;
	r.port = c->tgt.port;
	if (s->redact) {
		r.target = H2_REDACTED;
		r.target_len = sizeof(H2_REDACTED) - 1;
	} else if (s->path != NULL) {
		r.target = s->path;
		r.target_len = strlen(s->path);
	}
	r.status = s->status;
	r.decision = decision;
	r.reason = reason;
	r.rule = rule;
	r.inspected = true;
	if (s->mask != NULL) {
		r.n_injected = cmask_injected(s->mask, injected, sizeof(injected) / sizeof(injected[0]));
		r.injected = injected;
		r.remasked = cmask_remasked(s->mask);
	}
	r.bytes_up = s->phase == H2S_FORWARD ? (int64_t)s->bytes_up : -1;
	r.bytes_down = s->phase == H2S_FORWARD ? (int64_t)s->bytes_down : -1;
	r.ms = conn_ms_since(c, &s->t0);
	r.tls = "terminated";
	r.proto = "h2";
	proxy_record(c->px, &r);
}

/* ---- data providers ------------------------------------------------------- */

/* Acknowledges n bytes of DATA taken from a stream's buffer, to the
 * session they came from (connection-level once the stream is gone). */
static void take(nghttp2_session *from, int32_t id, bool open, size_t n)
{
	if (n == 0)
		return;
	if (!open || nghttp2_session_consume(from, id, n) != 0)
		(void)nghttp2_session_consume_connection(from, n);
}

/* The request body for the upstream (s->req). */
static ssize_t req_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
			uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
	struct h2s *s = source->ptr;
	size_t n = evbuffer_get_length(s->req);

	(void)session;
	(void)stream_id;
	(void)user_data;
	if (n > length)
		n = length;
	if (n > 0) {
		if (evbuffer_remove(s->req, buf, n) != (int)n)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		take(s->h->down, s->cid, s->cl_open, n);
		s->down_taken += n;
	}
	if (evbuffer_get_length(s->req) == 0 && s->req_end) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)n;
	}
	return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* Field lines "name: value\r\n" in b (pulled up) as nv entries into nv
 * (room for max); returns how many, or -1 when they do not fit. */
static ssize_t lines_to_nv(struct evbuffer *b, nghttp2_nv *nv, size_t max, uint8_t flags)
{
	size_t len = evbuffer_get_length(b), n = 0;
	char *p = len > 0 ? (char *)evbuffer_pullup(b, -1) : NULL, *end = p + len;

	while (p != NULL && p < end) {
		char *le = memchr(p, '\r', (size_t)(end - p)), *colon;

		if (le == NULL)
			le = end;
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon != NULL && colon > p) {
			const char *v = colon + 1;

			if (n == max)
				return -1;
			if (v < le && *v == ' ')
				v++;
			nv[n].name = (uint8_t *)p;
			nv[n].namelen = (size_t)(colon - p);
			nv[n].value = (uint8_t *)v;
			nv[n].valuelen = (size_t)(le - v);
			nv[n].flags = flags;
			n++;
		}
		p = le + 2;
	}
	return (ssize_t)n;
}

/* The response body for the client (s->resp), then the trailers. */
static ssize_t resp_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
			 uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
	struct h2s *s = source->ptr;
	size_t n = evbuffer_get_length(s->resp);
	nghttp2_nv nv[PASSAVANT_MAX_HEADER_COUNT];
	ssize_t nn;

	(void)user_data;
	if (n > length)
		n = length;
	if (n > 0) {
		if (evbuffer_remove(s->resp, buf, n) != (int)n)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		if (s->phase == H2S_FORWARD && s->uid >= 0) {
			take(s->h->up, s->uid, s->up_open, n);
			s->up_taken += n;
		}
	}
	if (evbuffer_get_length(s->resp) > 0 || !s->resp_end ||
	    (s->mask_resp && cmask_waiting(s->mask, CMASK_IN)))
		return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
	*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	if (s->trailers != NULL && evbuffer_get_length(s->trailers) > 0) {
		nn = lines_to_nv(s->trailers, nv, PASSAVANT_MAX_HEADER_COUNT, NGHTTP2_NV_FLAG_NONE);
		if (nn > 0 && nghttp2_submit_trailer(session, stream_id, nv, (size_t)nn) == 0)
			*data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return (ssize_t)n;
}

/* ---- answers and resets ------------------------------------------------- */

/* Resets the stream on both sessions (the client's with code). */
static void reset(struct h2s *s, uint32_t code)
{
	if (s->cl_open)
		(void)nghttp2_submit_rst_stream(s->h->down, NGHTTP2_FLAG_NONE, s->cid, code);
	if (s->up_open && s->uid >= 0)
		(void)nghttp2_submit_rst_stream(s->h->up, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
}

/*
 * Answers the stream here (SPEC §5: the response and reason of an
 * HTTP/1.1 refusal) and audits it; the stderr line is the reason. A
 * stream whose response already started is reset instead. The upstream
 * stream, if any, is cancelled: nothing more goes to it.
 */
static void answer(struct h2s *s, int status, const char *xerr, const char *rule, const char *fmt, ...)
{
	char reason[REASON_MAX], len[24], st[16];
	nghttp2_nv nv[4];
	nghttp2_data_provider prd;
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	s->status = status;
	audit(s, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
	log_info("%s", reason);
	if (s->up_open && s->uid >= 0)
		(void)nghttp2_submit_rst_stream(s->h->up, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
	if (s->mask != NULL && s->mask_req)
		cut(s, CMASK_OUT);
	/* What waited for the upstream is dropped, and acknowledged. */
	n = evbuffer_get_length(s->req);
	cmask_wipe_drain(s->req);
	take(s->h->down, s->cid, s->cl_open, n);
	s->down_taken += n;
	n = 0;
	if (s->resp_started || !s->cl_open) {
		if (s->cl_open)
			(void)nghttp2_submit_rst_stream(s->h->down, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	s->phase = H2S_ANSWERED;
	s->resp_started = true;
	s->resp_end = true;
	s->mask_resp = false;
	cmask_wipe_drain(s->resp);
	if (evbuffer_add_printf(s->resp, "%s\n", reason) < 0) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	(void)snprintf(st, sizeof(st), "%d", status);
	(void)snprintf(len, sizeof(len), "%zu", evbuffer_get_length(s->resp));
#define NV(k, v) \
	(nghttp2_nv) { (uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), NGHTTP2_NV_FLAG_NONE }
	nv[n++] = NV(":status", st);
	nv[n++] = NV("content-type", "text/plain");
	nv[n++] = NV("content-length", len);
	if (xerr != NULL)
		nv[n++] = NV("x-proxy-error", xerr);
#undef NV
	prd.source.ptr = s;
	prd.read_callback = resp_read;
	if (nghttp2_submit_response(s->h->down, s->cid, nv, n, &prd) != 0)
		reset(s, NGHTTP2_INTERNAL_ERROR);
}

/* ---- the request: decisions --------------------------------------------- */

/* Whether a Host or :authority value names the tunnel's target. */
static bool names_target(const struct h2s *s, const char *v)
{
	return conn_host_names_target(v, strlen(v), &s->h->c->tgt);
}

/* TRACE/TRACK, CONNECT, the origin form, :authority and Host, SNI:
 * false after answering. */
static bool check_form(struct h2s *s)
{
	conn_t *c = conn_of(s);
	const char *m = s->method;
	char w[512];
	const char *rule = intercepted(c) ? CONN_RULE_HOST_INTERCEPT : CONN_RULE_HOST_TUNNEL;

	if (strcmp(m, "TRACE") == 0 || strcmp(m, "TRACK") == 0) {
		answer(s, 405, NULL, NULL, "passavant: %s refused: method not allowed through the proxy", m);
		return false;
	}
	if (strcmp(m, "CONNECT") == 0) {
		answer(s, 400, NULL, NULL, "passavant: CONNECT inside the TLS tunnel to %s:%u refused", c->tgt.host,
		       (unsigned)c->tgt.port);
		return false;
	}
	if (s->path == NULL || !(s->path[0] == '/' || (strcmp(s->path, "*") == 0 && strcmp(m, "OPTIONS") == 0))) {
		answer(s, 400, NULL, NULL,
		       "passavant: %s %.200s: a request inside a tunnel must have an origin-form target", m,
		       s->path != NULL ? s->path : "(no :path)");
		return false;
	}
	if (s->nhost > 1) {
		answer(s, 400, NULL, NULL, "passavant: %s: more than one Host field", what(s, w, sizeof(w)));
		return false;
	}
	if ((s->authority != NULL && !names_target(s, s->authority)) || (s->host != NULL && !names_target(s, s->host))) {
		const char *v = s->authority != NULL && !names_target(s, s->authority) ? s->authority : s->host;

		answer(s, 421, NULL, rule, "passavant: %s: Host %.200s does not name the %s %s:%u",
		       what(s, w, sizeof(w)), v, intercepted(c) ? "intercepted target" : "CONNECT target",
		       c->tgt.host, (unsigned)c->tgt.port);
		return false;
	}
	if (c->sni_mismatch) {
		answer(s, 421, NULL, CONN_RULE_SNI, "passavant: %s: TLS server name %s does not name the CONNECT target %s:%u",
		       what(s, w, sizeof(w)), c->sni, c->tgt.host, (unsigned)c->tgt.port);
		return false;
	}
	return true;
}

/* allowedDomains (under the stream's policy), then allowedMethods. */
static bool check_policy(struct h2s *s)
{
	conn_t *c = conn_of(s);
	struct policy_decision d;
	const char *mrule = NULL;
	char w[512];

	policy_decide(spol(s), c->tgt.host, c->tgt.port, &d);
	s->rule = d.rule;
	if (d.verdict != POLICY_ALLOW) {
		answer(s, 403, "blocked-by-sandbox-runtime", d.rule, "passavant: %s refused by %s",
		       what(s, w, sizeof(w)), d.rule);
		return false;
	}
	if (!policy_method_allowed(spol(s), c->tgt.host, c->tgt.port, s->method, &mrule)) {
		if (mrule == NULL)
			mrule = "allowedMethods";
		s->rule = mrule;
		answer(s, 403, "blocked-by-sandbox-runtime", mrule, "passavant: %s refused by %s",
		       what(s, w, sizeof(w)), mrule);
		return false;
	}
	return true;
}

/* Whether a request field is dropped on its way up: Proxy-Authorization
 * never goes (SPEC §5); towards an inject host, the codings and ranges
 * that would hide bytes from the scan (SPEC §4.3). */
static bool dropped(const char *name, size_t len, bool identity)
{
#define IS(k) (len == sizeof(k) - 1 && memcmp(name, k, len) == 0)
	if (IS("proxy-authorization"))
		return true;
	return identity && (IS("accept-encoding") || IS("range") || IS("if-range"));
#undef IS
}

/*
 * The serialised head (request line, Host from :authority, the fields,
 * the empty line) into out: the form cmask_request_head() and
 * cmask_find_real() read. Returns 0 or -1.
 */
static int serialise(struct h2s *s, struct evbuffer *out, bool identity)
{
	size_t len = evbuffer_get_length(s->fields);
	char *p = len > 0 ? (char *)evbuffer_pullup(s->fields, -1) : NULL, *end = p + len;

	if (evbuffer_add_printf(out, "%s %s HTTP/1.1\r\nhost: %s\r\n", s->method, s->path,
				s->authority != NULL ? s->authority : conn_of(s)->tgt.authority) < 0)
		return -1;
	while (p != NULL && p < end) {
		char *le = memchr(p, '\r', (size_t)(end - p)), *colon = memchr(p, ':', (size_t)(le - p));

		if (!dropped(p, (size_t)(colon - p), identity) &&
		    !((size_t)(colon - p) == 4 && memcmp(p, "host", 4) == 0) &&
		    evbuffer_add(out, p, (size_t)(le + 2 - p)) < 0)
			return -1;
		p = le + 2;
	}
	if (identity && evbuffer_add(out, "accept-encoding: identity\r\n", 27) < 0)
		return -1;
	return evbuffer_add(out, "\r\n", 2);
}

/*
 * SPEC §4.2: a real value on its way out, anywhere in the head, gets the
 * stream refused (403 naming the credential), its target redacted.
 * head is the serialised head. True when refused (or failed).
 */
static bool refuse_real(struct h2s *s, struct evbuffer *head)
{
	size_t len = evbuffer_get_length(head);
	const char *cred = NULL, *name = NULL, *where = "a header";
	const unsigned char *p = evbuffer_pullup(head, -1);
	char w[512];
	int r;

	if (p == NULL)
		return false;
	r = cmask_find_real(s->mask, p, len, &cred);
	if (r < 0) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return true;
	}
	if (r == 0)
		return false;
	if (cmask_find_real(s->mask, s->path, strlen(s->path), &name) == 1)
		where = "the request target";
	s->redact = true;
	(void)snprintf(s->mask_rule, sizeof(s->mask_rule), "credentials %s: real value", cred != NULL ? cred : "?");
	s->rule = s->mask_rule;
	answer(s, 403, "blocked-by-sandbox-runtime", s->rule,
	       "passavant: %s refused by %s: a real value of %s is on its way out in %s "
	       "(the sandbox should never hold one)",
	       what(s, w, sizeof(w)), s->rule, cred != NULL ? cred : "a masked credential", where);
	return true;
}

/*
 * The substituted serialised head back into HTTP/2 fields: the pseudo
 * fields from the request line and the Host line (its first field), the
 * others as they are. nv points into head (pulled up). Returns how many,
 * or -1.
 */
static ssize_t head_to_nv(struct evbuffer *head, nghttp2_nv *nv, size_t max, uint8_t flags)
{
	size_t len = evbuffer_get_length(head);
	char *p = (char *)evbuffer_pullup(head, -1), *end, *le, *sp1, *sp2, *hv, *hle;
	ssize_t n;

	if (p == NULL || max < 4)
		return -1;
	end = p + len;
	le = memchr(p, '\r', len);
	sp1 = le != NULL ? memchr(p, ' ', (size_t)(le - p)) : NULL;
	if (sp1 == NULL)
		return -1;
	for (sp2 = le; sp2 > sp1 && sp2[-1] != ' '; sp2--)
		;
	hv = le + 2 + 6; /* "host: " */
	hle = memchr(hv, '\r', (size_t)(end - hv));
	if (sp2 <= sp1 + 1 || hle == NULL)
		return -1;
	nv[0] = (nghttp2_nv){(uint8_t *)":method", (uint8_t *)p, 7, (size_t)(sp1 - p), flags};
	nv[1] = (nghttp2_nv){(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, flags};
	nv[2] = (nghttp2_nv){(uint8_t *)":authority", (uint8_t *)hv, 10, (size_t)(hle - hv), flags};
	nv[3] = (nghttp2_nv){(uint8_t *)":path", (uint8_t *)sp1 + 1, 5, (size_t)(sp2 - 1 - (sp1 + 1)), flags};
	/* The fields after the Host line, up to the empty line (which
	 * lines_to_nv() skips: it has no colon). */
	if (evbuffer_drain(head, (size_t)(hle + 2 - p)) < 0)
		return -1;
	n = lines_to_nv(head, nv + 4, max - 4, flags);
	return n < 0 ? -1 : n + 4;
}

/* Sends the decided request upstream; false after answering. */
static bool forward(struct h2s *s, struct evbuffer *head)
{
	conn_t *c = conn_of(s);
	nghttp2_nv nv[PASSAVANT_MAX_HEADER_COUNT + 8];
	nghttp2_data_provider prd;
	char reason[512], w[512];
	const char *rule = NULL, *inj[1];
	uint8_t flags = NGHTTP2_NV_FLAG_NONE;
	ssize_t n;
	int32_t id;

	if (s->mask != NULL) {
		int r = cmask_request_head(s->mask, head, c->tgt.host, c->tgt.port, true, reason, sizeof(reason), &rule);

		if (r < 0) {
			reset(s, NGHTTP2_INTERNAL_ERROR);
			return false;
		}
		if (r == 1) {
			cmask_begin_request(s->mask); /* nothing was injected */
			s->rule = rule;
			answer(s, 403, "blocked-by-sandbox-runtime", rule, "passavant: %s refused by %s: %s",
			       what(s, w, sizeof(w)), rule, reason);
			return false;
		}
		/* A real value is in the head now: never indexed by HPACK
		 * (RFC 7541 §7.1.3), so no later frame can probe for it. */
		if (cmask_injected(s->mask, inj, 1) > 0)
			flags = NGHTTP2_NV_FLAG_NO_INDEX;
		if (!s->req_end) {
			if (cmask_body_begin(s->mask, CMASK_OUT, c->tgt.host, c->tgt.port, true, false) < 0) {
				reset(s, NGHTTP2_INTERNAL_ERROR);
				return false;
			}
			s->mask_req = true;
		}
	}
	n = head_to_nv(head, nv, sizeof(nv) / sizeof(nv[0]), flags);
	if (n < 0) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return false;
	}
	prd.source.ptr = s;
	prd.read_callback = req_read;
	id = s->h->up_goaway || s->h->up_gone ? -1
					       : nghttp2_submit_request(s->h->up, NULL, nv, (size_t)n,
									s->req_end ? NULL : &prd, s);
	if (id < 0) {
		/* The upstream said GOAWAY, or ran out of stream ids: the
		 * client may retry on a new connection. */
		audit(s, "allow", "passavant: the upstream takes no new stream (GOAWAY): refused, to be retried",
		      s->rule);
		reset(s, NGHTTP2_REFUSED_STREAM);
		return false;
	}
	s->uid = id;
	s->up_open = true;
	s->phase = H2S_FORWARD;
	return true;
}

/* A request head is complete: the pipeline of decide.c, then upstream. */
static void decide(struct h2s *s)
{
	conn_t *c = conn_of(s);
	struct evbuffer *head;
	bool identity, ok;

	(void)event_base_gettimeofday_cached(proxy_base(c->px), &s->t0);
	if (s->head_big) {
		answer(s, 431, NULL, NULL,
		       "passavant: request head refused (limits.maxHeaderBytes, %u fields): %s https://%s: "
		       "its fields are larger than %zu bytes",
		       PASSAVANT_MAX_HEADER_COUNT, s->method != NULL ? s->method : "?", c->tgt.authority,
		       policy_limits(spol(s))->max_header_bytes);
		return;
	}
	if (s->method == NULL) {
		reset(s, NGHTTP2_PROTOCOL_ERROR);
		return;
	}
	if (s->path == NULL) {
		/* CONNECT, which nghttp2 lets have no :path: 400 as in HTTP/1.1. */
		(void)check_form(s);
		return;
	}
	if (proxy_masks(c->px) != NULL) {
		bool oom = false;

		s->mask = cmask_new(proxy_masks(c->px), &oom);
		if (oom) {
			reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
	}
	identity = s->mask != NULL && cmask_inject_host(s->mask, c->tgt.host, c->tgt.port);
	head = evbuffer_new();
	if (head == NULL || serialise(s, head, identity) < 0) {
		wipe_free(head);
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	ok = (s->mask == NULL || !refuse_real(s, head)) && check_form(s) && check_policy(s);
	if (ok)
		(void)forward(s, head);
	wipe_free(head);
}

/* ---- the request: callbacks of the client session ---------------------- */

/* A new stream's HEADERS begin (client session). */
static int down_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (h->ending)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	s->h = h;
	s->cid = frame->hd.stream_id;
	s->uid = -1;
	s->cl_open = true;
	s->phase = H2S_HEAD;
	s->pol = proxy_policy_get(h->c->px);
	s->fields = evbuffer_new();
	s->req = evbuffer_new();
	s->resp = evbuffer_new();
	s->next = h->streams;
	if (s->next != NULL)
		s->next->pprev = &s->next;
	s->pprev = &h->streams;
	h->streams = s;
	if (s->fields == NULL || s->req == NULL || s->resp == NULL ||
	    nghttp2_session_set_stream_user_data(session, s->cid, s) != 0) {
		s->cl_open = false;
		h2s_free(h, s);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	(void)event_base_gettimeofday_cached(proxy_base(h->c->px), &s->t0);
	return 0;
}

/* Keeps a pseudo field's value (once: nghttp2 refuses repeats). */
static int keep(char **slot, const uint8_t *v, size_t n)
{
	if (*slot != NULL)
		return 0;
	*slot = dup_n(v, n);
	return *slot != NULL ? 0 : -1;
}

/* One field of a request head (request trailers are not kept: they end
 * the body and are not passed on). */
static int down_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
		       size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	int r = 0;

	(void)flags;
	(void)user_data;
	if (s == NULL || frame->hd.type != NGHTTP2_HEADERS || s->phase != H2S_HEAD)
		return 0;
	s->head_bytes += namelen + valuelen + 32;
	if (++s->nfields > PASSAVANT_MAX_HEADER_COUNT || s->head_bytes > policy_limits(spol(s))->max_header_bytes)
		s->head_big = true;
	if (s->head_big) {
		/* The method and path still say what was refused. */
		if (namelen == 7 && memcmp(name, ":method", 7) == 0)
			r = keep(&s->method, value, valuelen);
		return r < 0 ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
	}
	if (namelen > 0 && name[0] == ':') {
		if (namelen == 7 && memcmp(name, ":method", 7) == 0)
			r = keep(&s->method, value, valuelen);
		else if (namelen == 5 && memcmp(name, ":path", 5) == 0)
			r = keep(&s->path, value, valuelen);
		else if (namelen == 10 && memcmp(name, ":authority", 10) == 0)
			r = keep(&s->authority, value, valuelen);
		/* :scheme is https here whatever it says: the tunnel is. */
		return r < 0 ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
	}
	if (namelen == 4 && memcmp(name, "host", 4) == 0) {
		s->nhost++;
		if (keep(&s->host, value, valuelen) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (evbuffer_add(s->fields, name, namelen) < 0 || evbuffer_add(s->fields, ": ", 2) < 0 ||
	    evbuffer_add(s->fields, value, valuelen) < 0 || evbuffer_add(s->fields, "\r\n", 2) < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	return 0;
}

/* The request's end came: the upstream gets its last DATA and END_STREAM. */
static void request_ended(struct h2s *s)
{
	s->req_end = true;
	if (s->mask_req) {
		size_t n;

		if (cmask_body_end(s->mask, CMASK_OUT) < 0 || cmask_ready(s->mask, CMASK_OUT, &n) < 0 ||
		    evbuffer_remove_buffer(cmask_out(s->mask, CMASK_OUT), s->req, n) != (int)n) {
			reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
	}
	if (s->phase == H2S_FORWARD && s->up_open)
		(void)nghttp2_session_resume_data(s->h->up, s->uid);
}

static int down_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

	(void)user_data;
	if (s == NULL)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS && s->phase == H2S_HEAD) {
		/* nghttp2 calls back once the whole header block (with its
		 * CONTINUATIONs) was read. */
		if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
			s->req_end = true;
		decide(s);
		wipe_free(s->fields);
		s->fields = NULL;
		return 0;
	}
	if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
	    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		request_ended(s); /* request trailers end the body; they are not passed on */
	return 0;
}

/* A real value in the request body (SPEC §4.2): the stream is refused. */
static void refuse_leak(struct h2s *s, const char *cred)
{
	char w[512];

	(void)snprintf(s->mask_rule, sizeof(s->mask_rule), "credentials %s: real value", cred);
	s->rule = s->mask_rule;
	answer(s, 403, "blocked-by-sandbox-runtime", s->rule,
	       "passavant: %s refused by %s: a real value of %s is on its way out in the request body "
	       "(the sandbox should never hold one)",
	       what(s, w, sizeof(w)), s->rule, cred);
}

/* Request DATA from the client: substituted into s->req. */
static int down_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
		     void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);
	const char *cred;
	size_t n;

	(void)flags;
	if (s == NULL || s->phase != H2S_FORWARD) {
		/* Refused or unknown: acknowledged and dropped (counted on both
		 * sides, so that h2s_free() still acknowledges what a cut
		 * substituter held). */
		(void)nghttp2_session_consume(session, stream_id, len);
		if (s != NULL) {
			s->bytes_up += len;
			s->down_taken += len;
		}
		return 0;
	}
	s->bytes_up += len;
	if (!s->mask_req) {
		if (evbuffer_add(s->req, data, len) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	} else {
		if (evbuffer_add(h->scratch, data, len) < 0 || cmask_body_take(s->mask, CMASK_OUT, h->scratch, len) < 0 ||
		    cmask_ready(s->mask, CMASK_OUT, &n) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		if ((cred = cmask_leak(s->mask, CMASK_OUT)) != NULL) {
			refuse_leak(s, cred);
			return 0;
		}
		if (evbuffer_remove_buffer(cmask_out(s->mask, CMASK_OUT), s->req, n) != (int)n)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (s->up_open)
		(void)nghttp2_session_resume_data(h->up, s->uid);
	return 0;
}

/*
 * A forwarded stream is cut off from the client's side: by its reset, or
 * by a stream error it provoked (a bad WINDOW_UPDATE, a content-length
 * the DATA break...), for which nghttp2 resets the stream itself.
 * nghttp2's rate limit counts only the first kind; the second is the
 * "MadeYouReset" attack (CVE-2025-8671): requests the upstream starts
 * and is told to drop, as fast as the client can write. Both share one
 * budget, the rapid reset limit's; past it, GOAWAY ENHANCE_YOUR_CALM.
 */
static void charge_cancel(h2_t *h)
{
	int64_t ms = conn_ms_since(h->c, &h->cancel_t);

	if (ms >= 1000 / H2_RESET_RATE) {
		h->cancels += ms * H2_RESET_RATE / 1000;
		if (h->cancels > H2_RESET_BURST)
			h->cancels = H2_RESET_BURST;
		(void)event_base_gettimeofday_cached(proxy_base(h->c->px), &h->cancel_t);
	}
	if (--h->cancels >= 0 || h->fatal)
		return;
	(void)nghttp2_session_terminate_session(h->down, NGHTTP2_ENHANCE_YOUR_CALM);
	h->ending = true;
	h->fatal = true;
	(void)snprintf(h->why, sizeof(h->why),
		       "HTTP/2: the client had more than %d forwarded streams reset (then %d/s): connection closed",
		       H2_RESET_BURST, H2_RESET_RATE);
}

/* A stream closed on the client session. */
static int down_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);

	if (s == NULL)
		return 0;
	s->cl_open = false;
	/* A request the client will not finish (reset, or a response that
	 * ended first) is not left waiting upstream. */
	if ((code != NGHTTP2_NO_ERROR || !s->req_end) && s->up_open && s->uid >= 0) {
		(void)nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
		charge_cancel(h);
	}
	if (!s->audited && s->phase == H2S_FORWARD) {
		char reason[128];

		/* A reset after the whole response went out (the client
		 * stopped an upload the upstream had answered) is no cut. */
		if (code == NGHTTP2_NO_ERROR || answered(s)) {
			audit(s, "allow", NULL, s->rule);
		} else {
			(void)snprintf(reason, sizeof(reason), "passavant: the stream was reset (%s) before its end",
				       nghttp2_http2_strerror(code));
			audit(s, "allow", reason, s->rule);
		}
	}
	if (!s->up_open)
		h2s_free(h, s);
	return 0;
}

/* ---- the response: callbacks of the upstream session ------------------- */

/* One field of a response head, an interim head or trailers. */
static int up_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
		     const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

	(void)flags;
	(void)user_data;
	if (s == NULL || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (s->fields == NULL && (s->fields = evbuffer_new()) == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	s->head_bytes += namelen + valuelen + 32;
	if (++s->nfields > PASSAVANT_MAX_HEADER_COUNT || s->head_bytes > policy_limits(spol(s))->max_header_bytes)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
		s->rstatus = 0;
		for (size_t i = 0; i < valuelen && i < 3; i++)
			s->rstatus = s->rstatus * 10 + (value[i] - '0');
		return 0;
	}
	if (namelen > 0 && name[0] == ':')
		return 0;
	if (evbuffer_add(s->fields, name, namelen) < 0 || evbuffer_add(s->fields, ": ", 2) < 0 ||
	    evbuffer_add(s->fields, value, valuelen) < 0 || evbuffer_add(s->fields, "\r\n", 2) < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	return 0;
}

static int up_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

	(void)user_data;
	if (s != NULL && frame->hd.type == NGHTTP2_HEADERS) {
		s->rstatus = -1;
		s->head_bytes = 0;
		s->nfields = 0;
		if (s->fields != NULL)
			cmask_wipe_drain(s->fields);
	}
	return 0;
}

/* Passes on what the inbound substituter of s may send now. */
static int pass_in(struct h2s *s)
{
	size_t n;

	if (cmask_ready(s->mask, CMASK_IN, &n) < 0 ||
	    evbuffer_remove_buffer(cmask_out(s->mask, CMASK_IN), s->resp, n) != (int)n)
		return -1;
	return 0;
}

/* A whole response head, interim head or trailer block from the upstream. */
static void response_head(struct h2s *s, bool end_stream)
{
	nghttp2_nv nv[PASSAVANT_MAX_HEADER_COUNT + 1];
	nghttp2_data_provider prd;
	char st[16];
	ssize_t n;

	if (s->fields == NULL && (s->fields = evbuffer_new()) == NULL) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	/* SPEC §4.3: real values in fields become sentinels. */
	if (s->mask != NULL && cmask_response_head(s->mask, s->fields, 0) < 0) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->rstatus < 0) {
		/* Trailers (grpc-status, ...): after the body. */
		wipe_free(s->trailers);
		s->trailers = s->fields;
		s->fields = NULL;
		return;
	}
	(void)snprintf(st, sizeof(st), "%d", s->rstatus);
	nv[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)st, 7, strlen(st), NGHTTP2_NV_FLAG_NONE};
	n = lines_to_nv(s->fields, nv + 1, PASSAVANT_MAX_HEADER_COUNT, NGHTTP2_NV_FLAG_NONE);
	if (n < 0) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->rstatus >= 100 && s->rstatus < 200) {
		char w[512];

		/* Interim (100, 103): passed on, a few; 101 cannot come in HTTP/2. */
		if (++s->ninterim > H2_MAX_INTERIM) {
			cmask_wipe_drain(s->fields);
			answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s sent more than %d interim responses",
			       what(s, w, sizeof(w)), s->h->c->up.peer, H2_MAX_INTERIM);
			return;
		}
		if (nghttp2_submit_headers(s->h->down, NGHTTP2_FLAG_NONE, s->cid, NULL, nv, (size_t)n + 1, NULL) < 0)
			reset(s, NGHTTP2_INTERNAL_ERROR);
		cmask_wipe_drain(s->fields);
		return;
	}
	s->status = s->rstatus;
	s->resp_started = true;
	if (s->mask != NULL && !end_stream) {
		if (cmask_body_begin(s->mask, CMASK_IN, NULL, 0, false, false) < 0) {
			reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
		s->mask_resp = true;
	}
	prd.source.ptr = s;
	prd.read_callback = resp_read;
	if (nghttp2_submit_response(s->h->down, s->cid, nv, (size_t)n + 1, end_stream ? NULL : &prd) != 0)
		reset(s, NGHTTP2_INTERNAL_ERROR);
	cmask_wipe_drain(s->fields);
}

/* The response's end: what the substituter holds goes, then EOF. */
static void response_ended(struct h2s *s)
{
	s->resp_end = true;
	if (s->mask_resp && (cmask_body_end(s->mask, CMASK_IN) < 0 || pass_in(s) < 0)) {
		reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->cl_open && s->resp_started)
		(void)nghttp2_session_resume_data(s->h->down, s->cid);
}

static int up_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s;

	if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK) && h->ping_out) {
		/* The upstream read every WINDOW_UPDATE sent before our PING. */
		h->ping_out = false;
		h->wu_seen = h->wu_ping;
		(void)event_base_gettimeofday_cached(proxy_base(h->c->px), &h->seen_t);
		return 0;
	}
	if (frame->hd.type == NGHTTP2_GOAWAY) {
		/* Streams above last_stream_id were not processed: they get
		 * REFUSED_STREAM from nghttp2 (on_stream_close); the others
		 * finish (RFC 9113 §6.8: a graceful shutdown, as nginx's after
		 * keepalive_requests); no new ones: the client gets GOAWAY. */
		h->up_goaway = true;
		return 0;
	}
	s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	if (s == NULL || s->phase != H2S_FORWARD)
		return 0;
	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		response_head(s, (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0);
		if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
			response_ended(s);
		break;
	case NGHTTP2_DATA:
		s->in_frame = false;
		if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
			response_ended(s);
		break;
	default:
		break;
	}
	return 0;
}

/* Response DATA from the upstream: remasked into s->resp. */
static int up_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
		   void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);

	(void)flags;
	if (s == NULL || s->phase != H2S_FORWARD || !s->cl_open) {
		/* As in down_data(): what the client's buffer and substituter
		 * still hold is acknowledged by h2s_free(). */
		(void)nghttp2_session_consume(session, stream_id, len);
		if (s != NULL) {
			s->bytes_down += len;
			s->up_taken += len;
		}
		return 0;
	}
	s->bytes_down += len;
	s->in_frame = true;
	if (!s->mask_resp) {
		if (evbuffer_add(s->resp, data, len) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	} else if (evbuffer_add(h->scratch, data, len) < 0 || cmask_body_take(s->mask, CMASK_IN, h->scratch, len) < 0 ||
		   pass_in(s) < 0) {
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	(void)nghttp2_session_resume_data(h->down, s->cid);
	return 0;
}

/* A stream closed on the upstream session. */
static int up_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);
	char w[512];

	if (s == NULL)
		return 0;
	s->up_open = false;
	if (s->cl_open && s->phase == H2S_FORWARD && !s->resp_end) {
		/* SPEC §4.3: held bytes that may begin a real value are
		 * dropped when the upstream ends early: by an error, or a
		 * RST_STREAM NO_ERROR before END_STREAM (a cut response too;
		 * the client is told, not left waiting). */
		if (s->mask_resp)
			cut(s, CMASK_IN);
		if (!s->resp_started && code != NGHTTP2_REFUSED_STREAM)
			answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s reset the stream (%s)",
			       what(s, w, sizeof(w)), h->c->up.peer, nghttp2_http2_strerror(code));
		else if (!s->resp_started)
			/* Not processed upstream (a GOAWAY below it, or the
			 * upstream's own refusal): the client may retry it
			 * (RFC 9113 §8.7), so it is told just that. */
			(void)nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_REFUSED_STREAM);
		else
			(void)nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->cid,
							code == NGHTTP2_NO_ERROR ? NGHTTP2_INTERNAL_ERROR : code);
	}
	if (!s->cl_open)
		h2s_free(h, s);
	return 0;
}

/* ---- streams -------------------------------------------------------------- */

static void h2s_free(h2_t *h, struct h2s *s)
{
	/* What the client or the upstream sent that nobody took still
	 * counts against the connection windows. */
	if (s->bytes_up > s->down_taken && !h->fatal)
		(void)nghttp2_session_consume_connection(h->down, (size_t)(s->bytes_up - s->down_taken));
	if (s->bytes_down > s->up_taken && !h->fatal)
		(void)nghttp2_session_consume_connection(h->up, (size_t)(s->bytes_down - s->up_taken));
	if (s->cl_open)
		(void)nghttp2_session_set_stream_user_data(h->down, s->cid, NULL);
	if (s->up_open && s->uid >= 0)
		(void)nghttp2_session_set_stream_user_data(h->up, s->uid, NULL);
	if (s->pprev != NULL) {
		*s->pprev = s->next;
		if (s->next != NULL)
			s->next->pprev = s->pprev;
	}
	wipe_free(s->fields);
	wipe_free(s->req);
	wipe_free(s->resp);
	wipe_free(s->trailers);
	cmask_free(s->mask);
	free(s->method);
	free(s->path);
	free(s->authority);
	free(s->host);
	proxy_policy_put(s->pol);
	free(s);
}

/* ---- hold-back release (masking) ------------------------------------------ */

static const struct timeval hold_tv = {H2_HOLD_MS / 1000, (H2_HOLD_MS % 1000) * 1000};

/* Whether nothing of the upstream waits anywhere on its way to the
 * session: not in our input, the SSL object, a filter's underlying input
 * or the socket (reading may be off while the client's output is full). */
static bool up_quiet(h2_t *h)
{
	struct conn_side *u = &h->c->up;
	struct bufferevent *under = bufferevent_get_underlying(u->bev);
	evutil_socket_t fd = bufferevent_getfd(u->bev);
	int unread = 0;

	if (evbuffer_get_length(in_of(u)) > 0 || (u->ssl != NULL && SSL_has_pending(u->ssl) == 1) ||
	    (under != NULL && evbuffer_get_length(bufferevent_get_input(under)) > 0))
		return false;
	return fd >= 0 && ioctl(fd, FIONREAD, &unread) == 0 && unread == 0;
}

/*
 * Whether the bytes held for s may go after a pause: between two DATA
 * frames (a boundary the upstream chose, as between chunks in HTTP/1.1),
 * and the upstream free to send more, on this stream and on every other
 * one: nothing of it unread, the client's output below its mark (so the
 * upstream is read), and on every stream still coming from it, the
 * windows open, no frame cut, and everything received taken by the
 * client. Otherwise the client could stall the upstream inside a real
 * value: by not reading at all, or by not reading another stream that a
 * server sending from one queue must finish first. A window we opened
 * counts once the upstream has seen it (a PING sent after it came back)
 * and had H2_HOLD_MS to use it, whatever the round trip.
 */
static bool release_ok(const struct h2s *s)
{
	h2_t *h = s->h;

	if (!s->mask_resp || s->resp_end || !s->up_open || h->c->up.bev == NULL ||
	    h->wu_seen != h->wu_sent || conn_ms_since(h->c, &h->seen_t) < H2_HOLD_MS ||
	    nghttp2_session_want_write(h->up) || nghttp2_session_get_local_window_size(h->up) <= 0 ||
	    evbuffer_get_length(out_of(&h->c->client)) >= PASSAVANT_OUTBUF_HIGH_BYTES || !up_quiet(h))
		return false;
	for (const struct h2s *t = h->streams; t != NULL; t = t->next)
		if (t->phase == H2S_FORWARD && t->up_open &&
		    (t->in_frame || evbuffer_get_length(t->resp) > 0 ||
		     nghttp2_session_get_stream_local_window_size(h->up, t->uid) <= 0))
			return false;
	return true;
}

static void tail_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	h2_t *h = c->h2;
	bool again = false;

	(void)fd;
	(void)events;
	for (struct h2s *s = h->streams; s != NULL; s = s->next) {
		if (!s->mask_resp || !cmask_waiting(s->mask, CMASK_IN))
			continue;
		if (!release_ok(s)) {
			again = true;
			if (h->wu_seen != h->wu_sent && !h->ping_out && h->c->up.bev != NULL && !h->up_gone) {
				static const uint8_t opaque[8] = "pv-hold";

				if (nghttp2_submit_ping(h->up, NGHTTP2_FLAG_NONE, opaque) == 0) {
					h->ping_out = true;
					h->wu_ping = h->wu_sent;
				}
			}
			continue;
		}
		if (cmask_release(s->mask, CMASK_IN) < 0 || pass_in(s) < 0) {
			conn_close(c, "out of memory releasing held bytes", true);
			return;
		}
		(void)nghttp2_session_resume_data(h->down, s->cid);
	}
	if (again && event_add(h->tail_ev, &hold_tv) < 0) {
		conn_close(c, "cannot re-arm the masking timer", true);
		return;
	}
	conn_drive(c);
}

/* Arms the release timer when some stream holds bytes. */
static int arm_tail(h2_t *h)
{
	for (struct h2s *s = h->streams; s != NULL; s = s->next)
		if (s->mask_resp && cmask_waiting(s->mask, CMASK_IN)) {
			if (h->tail_ev == NULL && (h->tail_ev = evtimer_new(proxy_base(h->c->px), tail_cb, h->c)) == NULL)
				return -1;
			if (evtimer_pending(h->tail_ev, NULL))
				return 0;
			return event_add(h->tail_ev, &hold_tv);
		}
	return 0;
}

/* ---- sessions ----------------------------------------------------------- */

/* A frame went to the upstream: a window we opened, to be seen (release_ok()). */
static int up_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	h2_t *h = user_data;

	(void)session;
	if (frame->hd.type == NGHTTP2_WINDOW_UPDATE)
		h->wu_sent++;
	return 0;
}

static nghttp2_session_callbacks *callbacks(bool server)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	if (server) {
		nghttp2_session_callbacks_set_on_begin_headers_callback(cb, down_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(cb, down_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, down_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, down_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, down_stream_close);
	} else {
		nghttp2_session_callbacks_set_on_begin_headers_callback(cb, up_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(cb, up_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, up_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, up_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, up_stream_close);
		nghttp2_session_callbacks_set_on_frame_send_callback(cb, up_frame_send);
	}
	return cb;
}

/* Both sessions with their limits and first SETTINGS; 0 or -1. */
static int sessions_new(h2_t *h, size_t max_header_bytes)
{
	nghttp2_session_callbacks *scb = callbacks(true), *ccb = callbacks(false);
	nghttp2_option *opt = NULL;
	nghttp2_settings_entry down_iv[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)max_header_bytes},
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
	};
	nghttp2_settings_entry up_iv[] = {
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)max_header_bytes},
	};
	int rc = -1;

	if (scb == NULL || ccb == NULL || nghttp2_option_new(&opt) != 0)
		goto out;
	/* Back-pressure: DATA is acknowledged when the other side took it. */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_continuations(opt, H2_MAX_CONTINUATIONS);
	nghttp2_option_set_stream_reset_rate_limit(opt, H2_RESET_BURST, H2_RESET_RATE);
	if (nghttp2_session_server_new2(&h->down, scb, h, opt) != 0 ||
	    nghttp2_session_client_new2(&h->up, ccb, h, opt) != 0)
		goto out;
	if (nghttp2_submit_settings(h->down, NGHTTP2_FLAG_NONE, down_iv, sizeof(down_iv) / sizeof(down_iv[0])) != 0 ||
	    nghttp2_submit_settings(h->up, NGHTTP2_FLAG_NONE, up_iv, sizeof(up_iv) / sizeof(up_iv[0])) != 0 ||
	    nghttp2_session_set_local_window_size(h->down, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW) != 0 ||
	    nghttp2_session_set_local_window_size(h->up, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW) != 0)
		goto out;
	rc = 0;
out:
	nghttp2_session_callbacks_del(scb);
	nghttp2_session_callbacks_del(ccb);
	nghttp2_option_del(opt);
	return rc;
}

enum step conn_h2_start(conn_t *c)
{
	if (c->up.bev == NULL || !c->up.tls_ready || !tls_alpn_h2(c->up.bev)) {
		/* mitm.c lets the client pick h2 only after the upstream did. */
		conn_close(c, "the client negotiated h2 but the upstream did not", true);
		return STEP_CLOSED;
	}
	return conn_h2_begin(c);
}

enum step conn_h2_begin(conn_t *c)
{
	h2_t *h = calloc(1, sizeof(*h));

	if (h == NULL)
		goto oom;
	h->c = c;
	c->h2 = h;
	h->cancels = H2_RESET_BURST;
	(void)event_base_gettimeofday_cached(proxy_base(c->px), &h->cancel_t);
	h->seen_t = h->cancel_t;
	h->scratch = evbuffer_new();
	if (h->scratch == NULL || sessions_new(h, policy_limits(pol(c))->max_header_bytes) < 0)
		goto oom;
	conn_set_mode(c, CONN_MODE_H2);
	conn_set_state(c, CONN_RELAY);
	conn_touch(c);
	conn_arm_timer(c, c->idle_ms);
	return STEP_AGAIN;
oom:
	conn_close(c, "out of memory starting HTTP/2", true);
	return STEP_CLOSED;
}

/* Feeds session s what side holds; 0, or -1 when the session failed. */
static int feed(nghttp2_session *s, struct conn_side *side, bool *moved)
{
	struct evbuffer *in = in_of(side);

	while (evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		ssize_t n;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			return -1;
		n = nghttp2_session_mem_recv(s, v.iov_base, v.iov_len);
		if (n < 0) {
			log_debug("h2: %s", nghttp2_strerror((int)n));
			return -1;
		}
		if (evbuffer_drain(in, (size_t)n) < 0)
			return -1;
		*moved = true;
	}
	return 0;
}

/* Writes what session s has to send into side's output, while it is
 * below the high mark; 0, or -1. */
static int emit(nghttp2_session *s, struct conn_side *side, bool *moved)
{
	struct evbuffer *out = out_of(side);

	while (evbuffer_get_length(out) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(s, &p);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		if (evbuffer_add(out, p, (size_t)n) < 0)
			return -1;
		*moved = true;
	}
	return 0;
}

/* The upstream is gone: every stream still waiting gets its end; no new
 * stream is taken (GOAWAY), and the connection ends when they are done. */
static void upstream_gone(h2_t *h)
{
	char w[512];

	for (struct h2s *s = h->streams, *n; s != NULL; s = n) {
		bool was_open = s->up_open;

		n = s->next;
		s->up_open = false;
		if (s->phase != H2S_FORWARD || s->resp_end || !was_open) {
			if (!s->cl_open)
				h2s_free(h, s);
			continue;
		}
		if (s->mask_resp)
			cut(s, CMASK_IN);
		if (!s->resp_started)
			answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s closed the connection",
			       what(s, w, sizeof(w)), h->c->up.peer);
		else if (s->cl_open)
			(void)nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_INTERNAL_ERROR);
		if (!s->cl_open)
			h2s_free(h, s);
	}
}

/* No more streams from the client: GOAWAY (once). */
static void end_gracefully(h2_t *h)
{
	if (h->ending)
		return;
	h->ending = true;
	(void)nghttp2_submit_goaway(h->down, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(h->down),
				    NGHTTP2_NO_ERROR, NULL, 0);
}

enum step conn_step_h2(conn_t *c)
{
	h2_t *h = c->h2;
	bool moved = false;

	if (feed(h->down, &c->client, &moved) < 0) {
		/* A connection error: nghttp2 queued its GOAWAY; send it. */
		h->fatal = true;
		(void)snprintf(h->why, sizeof(h->why), "HTTP/2 protocol error from the client");
	}
	if (!h->up_gone && (c->up.bev == NULL || feed(h->up, &c->up, &moved) < 0 || c->up.eof)) {
		h->up_gone = true;
		if (c->up.eof)
			(void)evbuffer_drain(in_of(&c->up), evbuffer_get_length(in_of(&c->up)));
	}
	if (h->up_gone && !h->up_ended) {
		/* Once, even after a GOAWAY of ours (the client may still be
		 * waiting on streams the upstream's GOAWAY let finish). */
		h->up_ended = true;
		upstream_gone(h);
		end_gracefully(h);
	} else if (h->up_goaway) {
		end_gracefully(h);
	}
	if (c->client.eof) {
		conn_close(c, "client closed", false);
		return STEP_CLOSED;
	}
	for (int i = 0; i < 4; i++) {
		bool more = false;

		if ((!h->up_gone && c->up.bev != NULL && emit(h->up, &c->up, &more) < 0) ||
		    emit(h->down, &c->client, &more) < 0) {
			conn_close(c, "out of memory writing HTTP/2 frames", true);
			return STEP_CLOSED;
		}
		moved |= more;
		if (!more)
			break;
	}
	if (!h->up_gone && !nghttp2_session_want_read(h->up) && !nghttp2_session_want_write(h->up)) {
		/* nghttp2 ended the upstream session itself (a connection
		 * error of the upstream's, such as a PUSH_PROMISE we disabled:
		 * its GOAWAY went out, nghttp2_session_mem_recv() returned no
		 * error), or its GOAWAY left no stream: the upstream is gone,
		 * and the streams waiting on it get their end now. */
		h->up_gone = true;
		return STEP_AGAIN;
	}
	if (moved)
		conn_touch(c);
	if (arm_tail(h) < 0) {
		conn_close(c, "cannot arm the masking timer", true);
		return STEP_CLOSED;
	}
	if (h->fatal && !nghttp2_session_want_write(h->down)) {
		log_info("conn %s: %s", c->client.peer, h->why);
		return conn_enter_draining(c);
	}
	if (!nghttp2_session_want_read(h->down) && !nghttp2_session_want_write(h->down))
		return conn_enter_draining(c);
	if (h->ending && h->streams == NULL && !nghttp2_session_want_write(h->down))
		return conn_enter_draining(c);
	return STEP_STOP;
}

void conn_h2_timeout(conn_t *c)
{
	h2_t *h = c->h2;
	int64_t idle = conn_ms_since(c, &c->last);

	if (idle < (int64_t)c->idle_ms && !(h->ending && idle >= (int64_t)c->head_ms)) {
		conn_arm_timer(c, c->idle_ms - (unsigned)idle);
		return;
	}
	if (h->streams != NULL || h->ending) {
		conn_close(c, "idle timeout (HTTP/2)", false);
		return;
	}
	/* Idle with no stream: a GOAWAY, then the close. */
	end_gracefully(h);
	conn_arm_timer(c, c->head_ms);
	conn_drive(c);
}

void conn_h2_free(conn_t *c)
{
	h2_t *h = c->h2;

	if (h == NULL)
		return;
	h->fatal = true; /* no window updates from here on */
	while (h->streams != NULL) {
		struct h2s *s = h->streams;

		if (!s->audited && s->phase == H2S_FORWARD)
			audit(s, "allow", answered(s) ? NULL : "passavant: the connection ended before the stream did",
			      s->rule);
		s->cl_open = false;
		s->up_open = false;
		h2s_free(h, s);
	}
	if (h->tail_ev != NULL)
		event_free(h->tail_ev);
	nghttp2_session_del(h->down);
	nghttp2_session_del(h->up);
	evbuffer_free(h->scratch);
	free(h);
	c->h2 = NULL;
}

/*
 * h2req.c - HTTP/2 requests (h2_int.h): the client session's callbacks
 * and, once a stream's head is whole, the decisions of an HTTP/1.1
 * request inside a tunnel (conn_verdict() in proxy/decide.c, answered on
 * the stream), the head substituted through its serialised form, then
 * the upstream stream. What only HTTP/2 has stays here: the checks of
 * pseudo-header fields nghttp2 makes, a head over maxHeaderBytes (431),
 * a stream without :method (reset).
 */
#include "h2_int.h"

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

/* ---- the request: decisions --------------------------------------------- */

/* Answers a refusal on the stream: the rule it decided by becomes the
 * stream's, then h2s_answer(). */
static void refuse_verdict(struct h2s *s, const struct verdict *v)
{
	if (v->decided)
		s->rule = v->rule;
	h2s_answer(s, v->status, v->xerr, v->rule, "%s", v->reason);
}

/* The stream's fields as one run of "name: value\r\n" lines. */
struct field_lines {
	const char *p;
	size_t len;
};

/* req_facts.next_field of a stream's head: the line at byte offset *i. */
static bool h2_next_field(const void *fields, size_t *i, const char **name, size_t *nlen, const char **val,
			  size_t *vlen)
{
	const struct field_lines *fl = fields;
	const char *line, *le, *colon;

	if (*i >= fl->len)
		return false;
	line = fl->p + *i;
	le = memchr(line, '\r', fl->len - *i);
	colon = le != NULL ? memchr(line, ':', (size_t)(le - line)) : NULL;
	if (colon == NULL || (size_t)(le - colon) < 2 || (size_t)(le - fl->p) + 2 > fl->len)
		return false; /* not a line h2_down_header() wrote: never */
	*name = line;
	*nlen = (size_t)(colon - line);
	*val = colon + 2;
	*vlen = (size_t)(le - colon - 2);
	*i = (size_t)(le - fl->p) + 2;
	return true;
}

/*
 * conn_verdict() on what the stream's head says (the checks of decide.c:
 * TRACE/TRACK, CONNECT, the origin form, :authority and Host, SNI,
 * allowedDomains and allowedMethods, with the methods the fields name,
 * under the stream's policy); a refusal answered on the stream. False
 * after answering (a reset when the fields cannot be read as one run).
 */
static bool judge(struct h2s *s)
{
	conn_t *c = h2s_conn(s);
	struct field_lines fl = { NULL, s->fields != NULL ? evbuffer_get_length(s->fields) : 0 };
	struct req_facts f = {
		.method = s->method,
		.path = s->path,
		.path_len = s->path != NULL ? strlen(s->path) : 0,
		.tgt = &c->tgt,
		.tunnel = true,
		.intercepted = intercepted(c),
		.sni_mismatch = c->sni_mismatch,
		.sni = c->sni != NULL ? c->sni : "",
		.nhost = s->nhost,
		.host = s->host,
		.host_len = s->host != NULL ? strlen(s->host) : 0,
		.authority = s->authority,
		.pol = h2s_pol(s),
		/* the tunnel's decision, when the stream decides under the
		 * tunnel's policy (a stream opened after a reload does not) */
		.tgt_decision = h2s_pol(s) == pol(c) ? &c->tun_decision : NULL,
		.audit_down = proxy_audit_down(c->px),
		.next_field = h2_next_field,
		.fields = &fl,
	};
	struct verdict v;

	/* serialise() made them one run already: no copy here. */
	if (fl.len > 0 && (fl.p = (const char *)evbuffer_pullup(s->fields, -1)) == NULL) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return false;
	}
	/* A body names a method too (a form's _method): read as its DATA
	 * come, on a host with a method rule (h2_down_data()). */
	if (conn_verdict(&f, &v) && (s->req_end || !v.restricted || conn_body_method_begin(&f, &s->fm, &v))) {
		s->rule = v.rule;
		return true;
	}
	refuse_verdict(s, &v);
	return false;
}

/* Whether a request field is dropped on its way up: Proxy-Authorization
 * never goes (SPEC §5); towards an inject host, the codings and ranges
 * that would hide bytes from the scan (SPEC §4.3). put: a PUT's range
 * names what it writes (Azure's Put Page, Put Range), not a part to
 * read, and goes up (review43b); a 206 is refused whatever the method
 * (h2stream.c). */
static bool dropped(const char *name, size_t len, bool identity, bool put)
{
#define IS(k) (len == sizeof(k) - 1 && memcmp(name, k, len) == 0)
	if (IS("proxy-authorization"))
		return true;
	if (!identity)
		return false;
	if (IS("accept-encoding") || IS("grpc-accept-encoding") || IS("connect-accept-encoding") ||
	    IS("accept-charset") || IS("a-im"))
		return true;
	return !put && (IS("range") || IS("if-range") || IS("request-range") || IS("x-ms-range"));
#undef IS
}

/* Whether a dropped field asked for a range (range, request-range,
 * x-ms-range; if-range alone asks for none): as http1_range_dropped(). */
static bool range_field(const char *name, size_t len)
{
#define IS(k) (len == sizeof(k) - 1 && memcmp(name, k, len) == 0)
	return IS("range") || IS("request-range") || IS("x-ms-range");
#undef IS
}

/*
 * The serialised head (request line, Host, the fields, the empty line)
 * into out: the form cmask_request_head() and cmask_find_real() read.
 * Host, and so the :authority sent upstream, is the tunnel's normalised
 * target (as HTTP/1.1's Host: decide.c), not the client's spelling of it
 * (`LocalHost.:8445`): conn_verdict() already required :authority to
 * name that target (421), and refuse_real() searches the client's own
 * :authority for real values. Returns 0 or -1.
 */
static int serialise(struct h2s *s, struct evbuffer *out, bool identity)
{
	size_t len = s->fields != NULL ? evbuffer_get_length(s->fields) : 0;
	char *p = len > 0 ? (char *)evbuffer_pullup(s->fields, -1) : NULL, *end = p != NULL ? p + len : NULL;

	if (evbuffer_add_printf(out, "%s %s HTTP/1.1\r\nhost: %s\r\n", s->method, s->path,
				h2s_conn(s)->tgt.authority) < 0)
		return -1;
	while (p != NULL && p < end) {
		char *le = memchr(p, '\r', (size_t)(end - p)), *colon = memchr(p, ':', (size_t)(le - p));

		if (identity && (size_t)(colon - p) == 6 && memcmp(p, "accept", 6) == 0) {
			/* its charset parameters that name one whose bytes are
			 * not ASCII's left out (formmethod_accept_narrow()): as
			 * accept-charset, an answer in it cannot be scanned */
			size_t n = (size_t)(le + 2 - p);
			char *a = malloc(n);

			if (a == NULL)
				return -1;
			memcpy(a, p, 8); /* "accept: " (h2_lines_to_nv()'s lines) */
			n = 8 + formmethod_accept_narrow(p + 8, (size_t)(le - p) - 8, a + 8);
			memcpy(a + n, "\r\n", 2);
			if (evbuffer_add(out, a, n + 2) < 0) {
				free(a);
				return -1;
			}
			free(a);
		} else if (!dropped(p, (size_t)(colon - p), identity, strcmp(s->method, "PUT") == 0)) {
			if (!((size_t)(colon - p) == 4 && memcmp(p, "host", 4) == 0) &&
			    evbuffer_add(out, p, (size_t)(le + 2 - p)) < 0)
				return -1;
		} else if (identity && range_field(p, (size_t)(colon - p))) {
			/* as HTTP/1.1's http1_range_dropped(): told in the
			 * answer and the audit line (h2stream.c) */
			s->range_dropped = true;
		}
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
	bool host_hit = false;
	const unsigned char *p = evbuffer_pullup(head, -1);
	struct verdict v;
	char w[512];
	int r;

	if (p == NULL)
		return false;
	r = cmask_find_real(s->mask, p, len, &cred);
	/* The serialised head takes its Host line from :authority: a host
	 * field (which a 421 would quote) and :authority are searched
	 * themselves (round 14's review). */
	if (r == 0 && s->host != NULL && (r = cmask_find_real(s->mask, s->host, strlen(s->host), &cred)) == 1)
		where = "the Host field";
	if (r == 0 && s->authority != NULL &&
	    (r = cmask_find_real(s->mask, s->authority, strlen(s->authority), &cred)) == 1)
		where = ":authority";
	if (r < 0) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return true;
	}
	/* The same names with their case changed (round 17): a 421 would
	 * quote them. */
	if (r == 0 && s->host != NULL && (cred = proxy_real_in_name(s->h->c->px, s->host, strlen(s->host))) != NULL) {
		where = "the Host field (its case changed)";
		host_hit = true;
	}
	else if (r == 0 && s->authority != NULL &&
		 (cred = proxy_real_in_name(s->h->c->px, s->authority, strlen(s->authority))) != NULL)
		where = ":authority (its case changed)";
	else if (r == 0)
		return false;
	if (cmask_find_real(s->mask, s->path, strlen(s->path), &name) == 1)
		where = "the request target";
	s->redact = true;
	if (s->host != NULL && (host_hit || cmask_find_real(s->mask, s->host, strlen(s->host), &name) == 1)) {
		free(s->host);
		s->host = NULL;
	}
	/* HTTP/2 takes any token as the method, a real value too (round 14
	 * of the attack): then it is written nowhere either. */
	if (s->method != NULL && cmask_find_real(s->mask, s->method, strlen(s->method), &name) == 1) {
		free(s->method);
		s->method = NULL;
		where = "the method";
	}
	conn_verdict_real(&v, h2s_what(s, w, sizeof(w)), cred, where, s->mask_rule, sizeof(s->mask_rule));
	refuse_verdict(s, &v);
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
	 * h2_lines_to_nv() skips: it has no colon). */
	if (evbuffer_drain(head, (size_t)(hle + 2 - p)) < 0)
		return -1;
	n = h2_lines_to_nv(head, nv + 4, max - 4, flags);
	return n < 0 ? -1 : n + 4;
}

/* Sends the decided request upstream; false after answering. */
static bool forward(struct h2s *s, struct evbuffer *head)
{
	conn_t *c = h2s_conn(s);
	nghttp2_nv nv[PASSAVANT_MAX_HEADER_COUNT + 8];
	nghttp2_data_provider prd;
	char reason[512], w[512];
	const char *rule = NULL, *inj[1];
	struct verdict v;
	uint8_t flags = NGHTTP2_NV_FLAG_NONE;
	ssize_t n;
	int32_t id;

	if (s->mask != NULL) {
		int r = cmask_request_head(s->mask, head, c->tgt.host, c->tgt.port, true, reason, sizeof(reason), &rule);

		if (r < 0) {
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
			return false;
		}
		if (r == 1) {
			cmask_begin_request(s->mask); /* nothing was injected */
			conn_verdict_sentinel(&v, h2s_what(s, w, sizeof(w)), rule, reason);
			refuse_verdict(s, &v);
			return false;
		}
		/* A real value is in the head now: never indexed by HPACK
		 * (RFC 7541 §7.1.3), so no later frame can probe for it. */
		if (cmask_injected(s->mask, inj, 1) > 0)
			flags = NGHTTP2_NV_FLAG_NO_INDEX;
		if (!s->req_end) {
			if (cmask_body_begin(s->mask, CMASK_OUT, c->tgt.host, c->tgt.port, true, false) < 0) {
				h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
				return false;
			}
			s->mask_req = true;
		}
	}
	n = head_to_nv(head, nv, sizeof(nv) / sizeof(nv[0]), flags);
	if (n < 0) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return false;
	}
	prd.source.ptr = s;
	prd.read_callback = h2s_req_read;
	id = s->h->up_goaway || s->h->up_gone ? -1
					       : nghttp2_submit_request(s->h->up, NULL, nv, (size_t)n,
									s->req_end ? NULL : &prd, s);
	if (id < 0) {
		/* The upstream said GOAWAY, or ran out of stream ids: the
		 * client may retry on a new connection. */
		h2s_audit(s, "allow", "passavant: the upstream takes no new stream (GOAWAY): refused, to be retried",
		      s->rule);
		h2s_reset(s, NGHTTP2_REFUSED_STREAM);
		return false;
	}
	s->uid = id;
	s->up_open = true;
	s->phase = H2S_FORWARD;
	return true;
}

/* Whether method is one of RFC 9110's and 5789's (written as it is even
 * before any search for real values). */
static bool known_method(const char *method)
{
	static const char *const known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
					    "PATCH"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(method, known[i]) == 0)
			return true;
	return false;
}

/* A request head is complete: the pipeline of decide.c, then upstream. */
static void decide(struct h2s *s)
{
	conn_t *c = h2s_conn(s);
	struct evbuffer *head;
	bool identity, ok;

	conn_now(&s->t0);
	if (s->head_big) {
		/* Refused before any search for real values: the path is
		 * not written, nor a method HTTP/2 let be any token (round
		 * 14 of the attack: a real value as the method). */
		free(s->path);
		s->path = NULL;
		if (s->method != NULL && !known_method(s->method)) {
			free(s->method);
			s->method = NULL;
		}
		h2s_answer(s, 431, NULL, NULL,
		       "passavant: request head refused (limits.maxHeaderBytes, %u fields): %s https://%s: "
		       "its fields are larger than %zu bytes",
		       PASSAVANT_MAX_HEADER_COUNT, s->method != NULL ? s->method : "?", c->tgt.authority,
		       policy_limits(h2s_pol(s))->max_header_bytes);
		return;
	}
	if (s->method == NULL) {
		h2s_reset(s, NGHTTP2_PROTOCOL_ERROR);
		return;
	}
	if (s->path == NULL) {
		/* CONNECT, which nghttp2 lets have no :path: 400 as in HTTP/1.1. */
		(void)judge(s);
		return;
	}
	if (proxy_masks(c->px) != NULL) {
		bool oom = false;

		s->mask = cmask_new(proxy_masks(c->px), &oom);
		if (oom) {
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
	}
	identity = s->mask != NULL && cmask_inject_host(s->mask, c->tgt.host, c->tgt.port);
	s->identity = identity;
	head = evbuffer_new();
	if (head == NULL || serialise(s, head, identity) < 0) {
		h2_wipe_free(head);
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	ok = (s->mask == NULL || !refuse_real(s, head)) && judge(s);
	if (ok)
		(void)forward(s, head);
	h2_wipe_free(head);
}

/* ---- the request: callbacks of the client session ---------------------- */

/* A new stream's HEADERS begin (client session). */
int h2_down_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (h->ending) {
		/* Refused (nghttp2 resets it): still one line, with no
		 * method or path, never read (round 14 of the attack). */
		conn_t *c = h->c;
		char reason[REASON_MAX];
		struct audit_rec r;

		(void)snprintf(reason, sizeof(reason),
			       "passavant: HTTP/2 request to https://%s: stream %d refused, the connection is ending",
			       c->tgt.authority, (int)frame->hd.stream_id);
		memset(&r, 0, sizeof(r));
		r.kind = "request";
		r.scheme = "https";
		r.host = c->tgt.host;
		r.port = c->tgt.port;
		r.decision = "deny";
		r.reason = reason;
		r.inspected = true;
		r.bytes_up = -1;
		r.bytes_down = -1;
		r.tls = "terminated";
		r.proto = "h2";
		proxy_record(c->px, &r);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
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
	conn_now(&s->t0);
	return 0;
}

/* Keeps a pseudo field's value (once: nghttp2 refuses repeats). */
static int keep(char **slot, const uint8_t *v, size_t n)
{
	if (*slot != NULL)
		return 0;
	*slot = h2_dup(v, n);
	return *slot != NULL ? 0 : -1;
}

/* One field of a request head (request trailers are not kept: they end
 * the body and are not passed on). */
int h2_down_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
		       size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data)
{
	struct h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	int r = 0;

	(void)flags;
	(void)user_data;
	if (s == NULL || frame->hd.type != NGHTTP2_HEADERS || s->phase != H2S_HEAD)
		return 0;
	s->head_bytes += namelen + valuelen + 32;
	if (++s->nfields > PASSAVANT_MAX_HEADER_COUNT || s->head_bytes > policy_limits(h2s_pol(s))->max_header_bytes)
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

/* The request body got a real value: counted proxy-wide once (relay.c's
 * and h2.c's timed releases wait while it is open, h2s_free() ends it). */
static void note_body_injected(struct h2s *s)
{
	if (!s->body_inj && cmask_body_injected(s->mask)) {
		s->body_inj = true;
		proxy_body_injected_open(s->h->c->px);
	}
}

/* The body named a method the host's rule does not allow (formmethod.h):
 * the stream is refused, its upstream stream reset before END_STREAM. */
static void refuse_body_method(struct h2s *s)
{
	struct verdict v;
	char w[512];

	conn_verdict_body_method(&v, h2s_what(s, w, sizeof(w)), &s->fm, "the upstream stream was reset");
	formmethod_off(&s->fm);
	refuse_verdict(s, &v);
}

/* The request's end came: the upstream gets its last DATA and END_STREAM. */
static void request_ended(struct h2s *s)
{
	/* A form's last value ends with the body: judged before the
	 * upstream may get END_STREAM. */
	if (s->phase == H2S_FORWARD && formmethod_on(&s->fm) && !formmethod_end(&s->fm)) {
		s->req_end = true;
		refuse_body_method(s);
		return;
	}
	s->req_end = true;
	if (s->mask_req) {
		size_t n;

		if (cmask_body_end(s->mask, CMASK_OUT) < 0 || cmask_ready(s->mask, CMASK_OUT, &n) < 0 ||
		    evbuffer_remove_buffer(cmask_out(s->mask, CMASK_OUT), s->req, n) != (int)n) {
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
		note_body_injected(s);
	}
	if (s->phase == H2S_FORWARD && s->up_open)
		(void)nghttp2_session_resume_data(s->h->up, s->uid);
}

int h2_down_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
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
		h2_wipe_free(s->fields);
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
	struct verdict v;
	char w[512];

	conn_verdict_real(&v, h2s_what(s, w, sizeof(w)), cred, "the request body", s->mask_rule,
			  sizeof(s->mask_rule));
	refuse_verdict(s, &v);
}

/* Request DATA from the client: substituted into s->req. */
int h2_down_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
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
	if (formmethod_on(&s->fm) && !formmethod_feed(&s->fm, (const char *)data, len)) {
		/* the DATA that ends a refused _method value never goes up */
		refuse_body_method(s);
		(void)nghttp2_session_consume(session, stream_id, len);
		s->bytes_up += len;
		s->down_taken += len;
		return 0;
	}
	s->bytes_up += len;
	conn_now(&h->down_rx_t); /* held request bytes wait H2_HOLD_MS more (h2.c tail_cb()) */
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
		note_body_injected(s);
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
static void h2_charge_cancel(h2_t *h)
{
	int64_t ms = conn_ms_since(&h->cancel_t);

	if (ms >= 1000 / H2_RESET_RATE) {
		h->cancels += ms * H2_RESET_RATE / 1000;
		if (h->cancels > H2_RESET_BURST)
			h->cancels = H2_RESET_BURST;
		conn_now(&h->cancel_t);
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
int h2_down_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);

	if (s == NULL)
		return 0;
	s->cl_open = false;
	/* A request the client will not finish (reset, or a response that
	 * ended first) is not left waiting upstream, nor one whose response
	 * it will not read: a reset with NO_ERROR before the response's end
	 * too (a GET reset so went on upstream until its end, uncharged:
	 * review of round 41). */
	if ((code != NGHTTP2_NO_ERROR || !s->req_end || (s->phase == H2S_FORWARD && !h2s_answered(s))) && s->up_open &&
	    s->uid >= 0) {
		(void)nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
		h2_charge_cancel(h);
	}
	if (!s->audited && s->phase == H2S_FORWARD) {
		char reason[128];

		/* A reset after the whole response went out (the client
		 * stopped an upload the upstream had answered) is no cut.
		 * Any other is, whatever its code: a NO_ERROR reset before
		 * the request's or the response's end was audited as a
		 * request that went whole (round 41 of the attack). */
		if (h2s_answered(s)) {
			h2s_audit(s, "allow", NULL, s->rule);
		} else {
			(void)snprintf(reason, sizeof(reason), "passavant: the stream was reset (%s) before its end",
				       nghttp2_http2_strerror(code));
			h2s_audit(s, "allow", reason, s->rule);
		}
	} else if (!s->audited && s->phase == H2S_HEAD && code != NGHTTP2_NO_ERROR) {
		/* Reset before its head was whole: nghttp2 refused it (RFC
		 * 9113), or the client gave up. Still one line per stream. */
		h2s_deny_unread(s, true,
				"passavant: malformed HTTP/2 request to https://%s: stream %d reset (%s) before its head "
				"was complete (RFC 9113: a connection-specific field, CR, LF or NUL in a value, a pseudo-"
				"header out of place, or the client's own reset)",
				h2s_conn(s)->tgt.authority, (int)stream_id, nghttp2_http2_strerror(code));
	}
	if (!s->up_open)
		h2s_free(h, s);
	return 0;
}

/*
 * h2stream.c - one HTTP/2 stream (h2_int.h): helpers, its audit line,
 * the data providers of both directions, answers and resets, the
 * upstream session's callbacks (response heads, DATA, trailers, all
 * remasked), and freeing once closed on both sessions.
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

/* ---- small helpers ------------------------------------------------------ */

conn_t *h2s_conn(struct h2s *s)
{
	return s->h->c;
}

const policy_t *h2s_pol(const struct h2s *s)
{
	return proxy_policy(s->pol);
}

char *h2_dup(const uint8_t *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

/* Empties b, wiping it (a head or body may hold real values), and frees it. */
void h2_wipe_free(struct evbuffer *b)
{
	if (b == NULL)
		return;
	cmask_wipe_drain(b);
	evbuffer_free(b);
}

/* "GET https://host/path" for reasons (the path cut at 200 bytes). */
const char *h2s_what(const struct h2s *s, char *buf, size_t len)
{
	const conn_t *c = s->h->c;
	const char *p = s->path != NULL ? s->path : "", *m = s->method != NULL ? s->method : "?";

	/* the method cut (CONN_METHOD_SHOWN): any token, of any length */
	if (s->redact)
		(void)snprintf(buf, len, "%.*s%s https://%s%s", CONN_METHOD_CUT(m), m, CONN_METHOD_MORE(m),
			       c->tgt.authority, H2_REDACTED);
	else
		(void)snprintf(buf, len, "%.*s%s https://%s%.200s", CONN_METHOD_CUT(m), m, CONN_METHOD_MORE(m),
			       c->tgt.authority, p);
	return buf;
}

/* The message of direction d was cut off: what its substituter holds,
 * which may begin a real value, is dropped (SPEC §4.3). */
void h2s_cut(struct h2s *s, enum cmask_dir d)
{
	if (cmask_body_cut(s->mask, d) < 0)
		log_debug("h2: out of memory cutting a stream's body");
}

/* Whether the whole response went to the client's session. */
bool h2s_answered(const struct h2s *s)
{
	return s->resp_end && evbuffer_get_length(s->resp) == 0 &&
	       (s->mask == NULL || !s->mask_resp || !cmask_waiting(s->mask, CMASK_IN));
}

/* The value of the passavant-range field on an answer whose request's
 * range did not go up (SPEC §4.3; HTTP/1.1's, http1.c RANGE_DROPPED). */
#define H2_RANGE_DROPPED                                                                                    \
	"dropped; passavant does not pass a range to a host a credential is injected towards (SPEC 4.3): " \
	"the whole representation follows, fetch it without resuming"

/* ---- audit ---------------------------------------------------------------- */

void h2s_deny_unread(struct h2s *s, bool log, const char *fmt, ...)
{
	char reason[REASON_MAX];
	va_list ap;

	free(s->method);
	s->method = NULL;
	free(s->path);
	s->path = NULL;
	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	h2s_audit(s, "deny", reason, NULL);
	if (log)
		log_info("%s", reason);
}

/* The stream's audit line (once). */
void h2s_audit(struct h2s *s, const char *decision, const char *reason, const char *rule)
{
	conn_t *c = h2s_conn(s);
	const char *injected[64];
	struct audit_rec r;
	char note[POLICY_HOST_MAX + 256];

	if (s->audited)
		return;
	s->audited = true;
	if (reason == NULL && s->range_dropped && s->resp_started) {
		/* as HTTP/1.1's (exchange.c finish_request()) */
		reason = cmask_range_note(note, sizeof(note), c->tgt.host, c->tgt.port);
		log_info("%s", reason);
	}
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
		/* Injected only if the stream's head went upstream: a head
		 * substituted and then refused (GOAWAY, an error) sent no
		 * real value anywhere (round 14 of the attack), nor one
		 * submitted that waited for the upstream's stream limit and
		 * was cancelled meanwhile (round 37). */
		r.n_injected = s->phase == H2S_FORWARD && s->head_sent
				       ? cmask_injected(s->mask, injected, sizeof(injected) / sizeof(injected[0]))
				       : 0;
		r.injected = injected;
		r.remasked = cmask_remasked(s->mask);
	}
	/* What left: DATA handed to the upstream, not what the client sent
	 * (a stream cancelled while it waited for the upstream's stream
	 * limit or window sent none of it). */
	r.bytes_up = s->phase == H2S_FORWARD ? (int64_t)s->bytes_sent : -1;
	r.bytes_down = s->phase == H2S_FORWARD ? (int64_t)s->bytes_down : -1;
	r.ms = conn_ms_since(&s->t0);
	r.tls = "terminated";
	r.proto = "h2";
	proxy_record(c->px, &r);
}

/* ---- data providers ------------------------------------------------------- */

/* Acknowledges n bytes of DATA taken from a stream's buffer, to the
 * session they came from (connection-level once the stream is gone). */
static void h2_take(nghttp2_session *from, int32_t id, bool open, size_t n)
{
	if (n == 0)
		return;
	if (!open || nghttp2_session_consume(from, id, n) != 0)
		(void)nghttp2_session_consume_connection(from, n);
}

/* The request body for the upstream (s->req). */
ssize_t h2s_req_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
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
		h2_take(s->h->down, s->cid, s->cl_open, n);
		s->down_taken += n;
		s->bytes_sent += n;
	}
	if (evbuffer_get_length(s->req) == 0 && s->req_end) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)n;
	}
	return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* Field lines "name: value\r\n" in b (pulled up) as nv entries into nv
 * (room for max); returns how many, or -1 when they do not fit. */
ssize_t h2_lines_to_nv(struct evbuffer *b, nghttp2_nv *nv, size_t max, uint8_t flags)
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

/*
 * Acknowledges to the upstream the DATA of s that no longer waits for
 * the client: what the client's session took, and since round 41 what
 * the re-masker holds back (at most its hold-back, bounded per
 * connection by H2_HELD_MAX): before, held bytes were acknowledged only
 * when released, so some 30 streams in the middle of a body (values of
 * 7 KiB and more) filled the upstream's connection window, and every
 * stream of the connection stalled, the held ones too (a release needs
 * the window open: h2_release_ok()). The same count whatever the bytes
 * are (the hold-back is), so it tells the upstream nothing of them.
 * What waits in s->resp stays unacknowledged: a client that does not
 * read still holds its upstream back.
 */
static void h2s_ack_up(struct h2s *s)
{
	uint64_t resp = evbuffer_get_length(s->resp);
	uint64_t target = s->bytes_down > resp ? s->bytes_down - resp : 0;

	if (s->phase != H2S_FORWARD || s->uid < 0 || target <= s->up_taken)
		return;
	h2_take(s->h->up, s->uid, s->up_open, (size_t)(target - s->up_taken));
	s->up_taken = target;
}

/* The response bytes s holds back from the client: the re-masker's
 * (cmask_held()). Round 42: before, received bytes less those passed
 * on, which counts every real value replaced by its (shorter) sentinel
 * as held for the rest of the stream (a body echoing a 16 KiB value 130
 * times passed the bound, holding nothing), and holds nothing where a
 * sentinel is longer than its value. */
static uint64_t h2s_held(const struct h2s *s)
{
	return s->phase == H2S_FORWARD && s->mask_resp && s->mask != NULL ? cmask_held(s->mask, CMASK_IN) : 0;
}

/* The response body for the client (s->resp), then the trailers. */
static ssize_t h2s_resp_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
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
		s->resp_taken += n;
		h2s_ack_up(s);
	}
	if (evbuffer_get_length(s->resp) > 0 || !s->resp_end ||
	    (s->mask_resp && cmask_waiting(s->mask, CMASK_IN)))
		return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
	*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	if (s->trailers != NULL && evbuffer_get_length(s->trailers) > 0) {
		nn = h2_lines_to_nv(s->trailers, nv, PASSAVANT_MAX_HEADER_COUNT, NGHTTP2_NV_FLAG_NONE);
		if (nn > 0 && nghttp2_submit_trailer(session, stream_id, nv, (size_t)nn) == 0)
			*data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return (ssize_t)n;
}

/* ---- answers and resets ------------------------------------------------- */

/* Resets the stream on both sessions (the client's with code). */
void h2s_reset(struct h2s *s, uint32_t code)
{
	/* A stream reset before it went upstream (an error deciding it) is
	 * over here: its one line now, since the close finds it answered,
	 * and a header block more on it (trailers already read) is not
	 * decided again, its fields gone. Its method and path may not
	 * have been searched for real values: neither is written. */
	if (s->phase == H2S_HEAD) {
		if (!s->audited)
			h2s_deny_unread(s, true,
					"passavant: HTTP/2 request to https://%s: stream %d reset (%s) before it went "
					"upstream",
					h2s_conn(s)->tgt.authority, (int)s->cid, nghttp2_http2_strerror(code));
		s->phase = H2S_ANSWERED;
	}
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
void h2s_answer(struct h2s *s, int status, const char *xerr, const char *rule, const char *fmt, ...)
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
	h2s_audit(s, status == 502 || status == 504 ? "allow" : "deny", reason, rule);
	log_info("%s", reason);
	if (s->up_open && s->uid >= 0)
		(void)nghttp2_submit_rst_stream(s->h->up, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
	if (s->mask != NULL && s->mask_req)
		h2s_cut(s, CMASK_OUT);
	/* What waited for the upstream is dropped, and acknowledged. */
	n = evbuffer_get_length(s->req);
	cmask_wipe_drain(s->req);
	h2_take(s->h->down, s->cid, s->cl_open, n);
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
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
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
	prd.read_callback = h2s_resp_read;
	if (nghttp2_submit_response(s->h->down, s->cid, nv, n, &prd) != 0)
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
}

/* ---- the response: callbacks of the upstream session ------------------- */

/* One field of a response head, an interim head or trailers. */
int h2_up_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
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
	if (++s->nfields > PASSAVANT_MAX_HEADER_COUNT || s->head_bytes > policy_limits(h2s_pol(s))->max_header_bytes)
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

int h2_up_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
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
int h2s_pass_in(struct h2s *s)
{
	size_t n;

	if (cmask_ready(s->mask, CMASK_IN, &n) < 0 ||
	    evbuffer_remove_buffer(cmask_out(s->mask, CMASK_IN), s->resp, n) != (int)n)
		return -1;
	return 0;
}

/* The verdict on a final response head nv[0, n) of s (cmask_head_judge()):
 * one pass over its fields, through the classifier HTTP/1.1 shares
 * (exchange.c). */
static enum cmask_head_verdict judge_head(const struct h2s *s, const nghttp2_nv *nv, size_t n, bool end_stream)
{
	struct cmask_head hc = {0};

	if (s->mask == NULL || end_stream)
		return CMASK_HEAD_PASS;
	for (size_t i = 0; i < n; i++)
		cmask_head_field(&hc, (const char *)nv[i].name, nv[i].namelen, (const char *)nv[i].value,
				 nv[i].valuelen);
	return cmask_head_judge(&hc, s->rstatus, true, s->identity, true);
}

/* A whole response head, interim head or trailer block from the upstream. */
static void response_head(struct h2s *s, bool end_stream)
{
	enum cmask_head_verdict verdict;
	nghttp2_nv nv[PASSAVANT_MAX_HEADER_COUNT + 2];
	nghttp2_data_provider prd;
	const char *cred;
	char st[16];
	ssize_t n;
	int hr;

	if (s->fields == NULL && (s->fields = evbuffer_new()) == NULL) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	/* SPEC §4.3: real values in fields become sentinels; one left with
	 * its case changed (a field's name, in lower case as HTTP/2 writes
	 * every one) cannot be re-masked: the stream gets a 502 (a
	 * trailer's: h2s_answer() resets it, the head went, and its audit
	 * line still says why, not a reset "before its end"). */
	if (s->mask != NULL && (hr = cmask_response_head(s->mask, s->fields, 0, &cred)) != 0) {
		char w[512];

		if (hr < 0) {
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
		h2s_answer(s, 502, NULL, s->rule,
			   "passavant: %s: a response header block from %s carries a real value of %s with its case changed "
			   "(or its %%XX decoded, or an escape at an end) (in a field's name or value): it cannot be re-masked, so the response is "
			   "not passed on",
			   h2s_what(s, w, sizeof(w)), s->h->c->up.peer, cred);
		return;
	}
	/* An inject host's digest of its body, in the head or a trailer, is
	 * an oracle on the real value the body may have held (as HTTP/1.1:
	 * exchange.c write_response_head()). */
	if (s->identity && cmask_drop_digests(s->fields, 0, false, false) < 0) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->rstatus < 0) {
		/* Trailers (grpc-status, ...): after the body. */
		h2_wipe_free(s->trailers);
		s->trailers = s->fields;
		s->fields = NULL;
		return;
	}
	(void)snprintf(st, sizeof(st), "%d", s->rstatus);
	nv[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)st, 7, strlen(st), NGHTTP2_NV_FLAG_NONE};
	n = h2_lines_to_nv(s->fields, nv + 1, PASSAVANT_MAX_HEADER_COUNT, NGHTTP2_NV_FLAG_NONE);
	if (n < 0) {
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->rstatus >= 100 && s->rstatus < 200) {
		char w[512];

		/* Interim (100, 103): passed on, a few; 101 cannot come in HTTP/2. */
		if (++s->ninterim > H2_MAX_INTERIM) {
			cmask_wipe_drain(s->fields);
			h2s_answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s sent more than %d interim responses",
			       h2s_what(s, w, sizeof(w)), s->h->c->up.peer, H2_MAX_INTERIM);
			return;
		}
		if (nghttp2_submit_headers(s->h->down, NGHTTP2_FLAG_NONE, s->cid, NULL, nv, (size_t)n + 1, NULL) < 0)
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		cmask_wipe_drain(s->fields);
		return;
	}
	/* As in HTTP/1.1 (exchange.c): a coded body, one in a charset
	 * whose bytes are not ASCII's, or a part of one cannot be scanned. */
	if ((verdict = judge_head(s, nv + 1, (size_t)n, end_stream)) != CMASK_HEAD_PASS) {
		char w[512];

		cmask_wipe_drain(s->fields);
		h2s_answer(s, 502, NULL, s->rule, "passavant: %s: %s %s", h2s_what(s, w, sizeof(w)),
			   s->h->c->up.peer, cmask_head_why(verdict));
		return;
	}
	s->status = s->rstatus;
	s->resp_started = true;
	/* SPEC §4.3: a resuming client is told why the whole came back
	 * (HTTP/1.1 writes the same field, http1.c RANGE_DROPPED) */
	if (s->range_dropped) {
		nv[n + 1] = (nghttp2_nv){(uint8_t *)"passavant-range", (uint8_t *)H2_RANGE_DROPPED,
					 sizeof("passavant-range") - 1, sizeof(H2_RANGE_DROPPED) - 1, NGHTTP2_NV_FLAG_NONE};
		n++;
	}
	if (s->mask != NULL && !end_stream) {
		if (cmask_body_begin(s->mask, CMASK_IN, h2s_conn(s)->tgt.host, h2s_conn(s)->tgt.port, true, false) < 0) {
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
			return;
		}
		s->mask_resp = true;
	}
	prd.source.ptr = s;
	prd.read_callback = h2s_resp_read;
	if (nghttp2_submit_response(s->h->down, s->cid, nv, (size_t)n + 1, end_stream ? NULL : &prd) != 0)
		h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
	cmask_wipe_drain(s->fields);
}

/*
 * s's response is cut after its head went (h2s_case_cut(), h2s_held_cut()):
 * the stream can only be reset (h2s_answer() does once the response
 * started), what waits for the client is dropped, and the audit line
 * says why (fmt, "passavant: WHAT: " before it). Answered here: DATA
 * still in flight from the upstream is acknowledged and dropped
 * (h2_up_data()), never buffered raw.
 */
static void resp_cut(struct h2s *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void resp_cut(struct h2s *s, const char *fmt, ...)
{
	char w[512], why[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	h2s_cut(s, CMASK_IN);
	s->mask_resp = false;
	cmask_wipe_drain(s->resp);
	h2s_answer(s, 502, NULL, s->rule, "passavant: %s: %s", h2s_what(s, w, sizeof(w)), why);
	s->phase = H2S_ANSWERED;
}

bool h2s_case_cut(struct h2s *s)
{
	const char *cred = s->mask != NULL && s->mask_resp ? cmask_case_real(s->mask) : NULL;
	const char *wide = s->mask != NULL && s->mask_resp ? cmask_in_refused(s->mask) : NULL;

	if (cred != NULL)
		resp_cut(s,
			 "the response body from %s carries a real value of %s with its case changed (or its %%XX decoded, or an escape at an end): it cannot be "
			 "re-masked, so the stream was reset",
			 s->h->c->up.peer, cred);
	else if (wide != NULL)
		resp_cut(s, "the response from %s: %s (the stream was reset)", s->h->c->up.peer, wide);
	return cred != NULL || wide != NULL;
}

/*
 * When the streams of s's connection hold more than H2_HELD_MAX response
 * bytes back (h2s_held()), s, which just added to them, is reset: what
 * it holds may begin a real value, so it is dropped, never sent (SPEC
 * §4.3), and the audit line says why. Returns whether it was.
 */
static bool h2s_held_cut(struct h2s *s)
{
	uint64_t total = 0;

	for (const struct h2s *t = s->h->streams; t != NULL; t = t->next)
		total += h2s_held(t);
	if (total <= s->h->held_max)
		return false;
	resp_cut(s,
		 "the streams of this connection to %s hold %llu response bytes back (over %llu: each holds what "
		 "may begin a real value), so this stream was reset; open fewer streams to this host at once (at "
		 "most the %u this connection allows)",
		 s->h->c->up.peer, (unsigned long long)total, (unsigned long long)s->h->held_max, s->h->max_streams);
	return true;
}

/* The response's end: what the substituter holds goes, then EOF. */
static void response_ended(struct h2s *s)
{
	s->resp_end = true;
	if (s->mask_resp && (cmask_body_end(s->mask, CMASK_IN) < 0 || h2s_pass_in(s) < 0)) {
		if (!h2s_case_cut(s))
			h2s_reset(s, NGHTTP2_INTERNAL_ERROR);
		return;
	}
	if (s->cl_open && s->resp_started)
		(void)nghttp2_session_resume_data(s->h->down, s->cid);
}

int h2_up_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s;

	if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK) && h->ping_out) {
		/* The upstream read every WINDOW_UPDATE sent before our PING. */
		h->ping_out = false;
		h->wu_seen = h->wu_ping;
		conn_now(&h->seen_t);
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

/*
 * Why len bytes of response DATA on s come where RFC 9113 §8.1 allows
 * none, or NULL: before the final head (none yet, or only a 1xx: not
 * scanned, they would go out after the head), after a head that ended
 * the stream (a masked stream whose body the substituter does not take),
 * or a byte of the body of a HEAD's answer, a 204, a 304.
 */
const char *h2s_data_misplaced(const struct h2s *s, size_t len)
{
	if (!s->resp_started)
		return "before the response head";
	if (s->mask != NULL && !s->mask_resp)
		return "after a head that ended the stream";
	if (len > 0 && (s->status == 204 || s->status == 304 || (s->method != NULL && strcmp(s->method, "HEAD") == 0)))
		return "where its answer has no body";
	return NULL;
}

/* Response DATA from the upstream: remasked into s->resp. */
int h2_up_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
		   void *user_data)
{
	h2_t *h = user_data;
	struct h2s *s = nghttp2_session_get_stream_user_data(session, stream_id);
	const char *why;

	(void)flags;
	if (s == NULL || s->phase != H2S_FORWARD || !s->cl_open) {
		/* As in h2_down_data(): what the client's buffer and substituter
		 * still hold is acknowledged by h2s_free(). */
		(void)nghttp2_session_consume(session, stream_id, len);
		if (s != NULL) {
			s->bytes_down += len;
			s->up_taken += len;
		}
		return 0;
	}
	if ((why = h2s_data_misplaced(s, len)) != NULL) {
		char w[512];

		/* nghttp2's HTTP checks reset such a stream; should they let
		 * it by (review46q), the proxy refuses it too. */
		(void)nghttp2_session_consume(session, stream_id, len);
		s->bytes_down += len;
		s->up_taken += len;
		h2s_answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s sent DATA %s (RFC 9113 section 8.1)",
			   h2s_what(s, w, sizeof(w)), h->c->up.peer, why);
		s->phase = H2S_ANSWERED;
		return 0;
	}
	s->bytes_down += len;
	s->in_frame = true;
	if (!s->mask_resp) {
		if (evbuffer_add(s->resp, data, len) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	} else if (evbuffer_add(h->scratch, data, len) < 0 || cmask_body_take(s->mask, CMASK_IN, h->scratch, len) < 0 ||
		   h2s_pass_in(s) < 0) {
		if (h2s_case_cut(s)) {
			/* What the substituter had not taken is acknowledged with
			 * the stream (h2s_free()). */
			cmask_wipe_drain(h->scratch);
			return 0;
		}
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (s->mask_resp) {
		if (h2s_held_cut(s))
			return 0;
		h2s_ack_up(s);
	}
	(void)nghttp2_session_resume_data(h->down, s->cid);
	return 0;
}

/* A stream closed on the upstream session. */
int h2_up_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data)
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
			h2s_cut(s, CMASK_IN);
		if (!s->resp_started && code != NGHTTP2_REFUSED_STREAM)
			h2s_answer(s, 502, NULL, s->rule, "passavant: %s: the upstream %s reset the stream (%s)",
			       h2s_what(s, w, sizeof(w)), h->c->up.peer, nghttp2_http2_strerror(code));
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

void h2s_free(h2_t *h, struct h2s *s)
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
	if (s->body_inj)
		proxy_body_injected_done(h->c->px);
	h2_wipe_free(s->fields);
	h2_wipe_free(s->req);
	h2_wipe_free(s->resp);
	h2_wipe_free(s->trailers);
	cmask_free(s->mask);
	free(s->method);
	free(s->path);
	free(s->authority);
	free(s->host);
	proxy_policy_put(s->pol);
	free(s);
}

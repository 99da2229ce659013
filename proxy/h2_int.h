/*
 * h2_int.h - the insides of HTTP/2 in a terminated tunnel, shared by the
 * files that make it up (private to proxy/; h2.h is the face conn.c sees):
 *
 *   h2.c        the connection: both nghttp2 sessions, their limits,
 *               feeding and writing them, GOAWAY, the hold-back timer,
 *               the end
 *   h2req.c     a request: the client session's callbacks and the
 *               decisions of each stream (decide.c's conn_verdict())
 *   h2stream.c  a stream: helpers, its audit line, the data providers,
 *               answers and resets, the upstream session's callbacks,
 *               freeing
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
#ifndef PASSAVANT_PROXY_H2_INT_H
#define PASSAVANT_PROXY_H2_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <nghttp2/nghttp2.h>

#include "base/attrib.h"
#include "formmethod.h"
#include "h2.h"

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
/* Response bytes all streams of a connection may hold back from the
 * client at once (the re-masker's hold-back, acknowledged to the
 * upstream as it fills: h2s_ack_up()); the stream that passes it is
 * reset (h2s_held_cut()) rather than the connection stalled. The client
 * is told a SETTINGS_MAX_CONCURRENT_STREAMS that keeps its streams below
 * it (H2_HELD_MAX / the hold-back of a stream, h2_fit_streams()), so it
 * queues its requests rather than seeing them reset; only a test lowers
 * the bound itself (H2_HELD_MAX_ENV, never above H2_HELD_MAX). */
#define H2_HELD_MAX (2u * H2_CONN_WINDOW)
#define H2_HELD_MAX_ENV "PASSAVANT_TEST_H2_HELD_MAX"
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
	bool head_sent;            /** its HEADERS went to the upstream (not just submitted) */
	bool audited;              /** its audit line was written */
	bool redact;               /** its target carries a real value: written nowhere */
	bool head_big;             /** its head passed limits.maxHeaderBytes (431) */
	bool req_end;              /** the client ended the request (END_STREAM) */
	bool resp_started;         /** a final response head went to the client */
	bool resp_end;             /** the upstream ended the response */
	bool in_frame;             /** inside an upstream DATA frame (hold-back release waits) */
	bool mask_req;             /** the request body goes through the substituter */
	bool mask_resp;            /** the response body goes through the substituter */
	bool identity;             /** asked for identity (an inject host): a coded response is refused */
	bool range_dropped;        /** its range did not go up to an inject host (SPEC §4.3): the answer's
				    * passavant-range field and its audit line say so */
	bool body_inj;             /** its request body got a real value: counted by
				    *  proxy_body_injected_open() until h2s_free() */
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
	uint64_t bytes_sent;       /** request DATA handed to the upstream (the audit's bytesUp) */
	uint64_t bytes_down;       /** response DATA received from the upstream */
	uint64_t down_taken;       /** client DATA acknowledged (consumed) */
	uint64_t up_taken;         /** upstream DATA acknowledged (consumed) */
	uint64_t resp_taken;       /** response bytes the client's session took from resp */
	struct formmethod fm;      /** the request body read for a _method (a host with a method rule) */
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
	uint64_t held_max;         /** response bytes its streams may hold back (H2_HELD_MAX) */
	uint32_t max_streams;      /** SETTINGS_MAX_CONCURRENT_STREAMS told the client */
	unsigned wu_sent;          /** WINDOW_UPDATE frames sent upstream */
	unsigned wu_seen;          /** of them, those a PING acknowledged after them covers */
	unsigned wu_ping;          /** wu_sent when the PING in flight was sent */
	bool ping_out;             /** a PING of ours to the upstream awaits its ACK */
	struct timeval seen_t;     /** when wu_seen last changed */
	struct timeval up_rx_t;    /** when bytes last came from the upstream (held bytes wait
				    * H2_HOLD_MS of its silence) */
	struct timeval down_rx_t;  /** when request DATA last came from the client (held request
				    * bytes wait H2_HOLD_MS of its silence) */
	struct timeval cancel_t;   /** when cancels was last refilled */
	char why[160];             /** why the connection ends (log) */
};

/* ---- h2stream.c ---------------------------------------------------------- */

/* The connection, and the policy the stream was decided with. */
conn_t *h2s_conn(struct h2s *s) NONNULL(1);
const policy_t *h2s_pol(const struct h2s *s) NONNULL(1);
/* A NUL-terminated copy of p[0..n), or NULL. */
char *h2_dup(const uint8_t *p, size_t n) NONNULL(1) WUNRES;
/* Wipes (it may hold real values) and frees b; NULL-safe. */
void h2_wipe_free(struct evbuffer *b);
/* "GET https://host/path" for reasons (the target redacted if it must be). */
const char *h2s_what(const struct h2s *s, char *buf, size_t len) NONNULL(1, 2);
/* The message of direction d was cut off: held bytes dropped. */
void h2s_cut(struct h2s *s, enum cmask_dir d) NONNULL(1);
/* Whether the whole response went to the client's session. */
bool h2s_answered(const struct h2s *s) NONNULL(1);
/* The stream's audit line (once). */
void h2s_audit(struct h2s *s, const char *decision, const char *reason, const char *rule) NONNULL(1, 2);
/* The deny line of a stream whose method and path were never searched for
 * real values (its head incomplete, or reset before it went upstream):
 * neither is written (both are freed), the reason is fmt's, also on
 * stderr when log. */
void h2s_deny_unread(struct h2s *s, bool log, const char *fmt, ...) NONNULL(1, 3) __attribute__((format(printf, 3, 4)));
/* The request body's data provider (s->req to the upstream). */
ssize_t h2s_req_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
		     uint32_t *data_flags, nghttp2_data_source *source, void *user_data);
/* "name: value" lines of b as nv entries (pointing into b); count or -1. */
ssize_t h2_lines_to_nv(struct evbuffer *b, nghttp2_nv *nv, size_t max, uint8_t flags) NONNULL(1, 2);
/* Resets the stream on both sessions (the client's with code). */
void h2s_reset(struct h2s *s, uint32_t code) NONNULL(1);
/* Answers the stream here (a refusal: SPEC §5's response), audits it. */
void h2s_answer(struct h2s *s, int status, const char *xerr, const char *rule, const char *fmt, ...)
	NONNULL(1, 5) PRINTF(5, 6);
/* Passes on what the inbound substituter may send now; 0 or -1. */
int h2s_pass_in(struct h2s *s) NONNULL(1) WUNRES;
/* The response body holds a real value with its case changed (the
 * inbound fold, cmask_case_real()): the stream is cut (RST_STREAM to the
 * client, CANCEL upstream) and audited naming the credential. Returns
 * true when it did (the caller stops), false when no such value. */
bool h2s_case_cut(struct h2s *s) NONNULL(1);
/* Frees a stream closed on both sessions (or at the connection's end). */
void h2s_free(h2_t *h, struct h2s *s) NONNULL(1, 2);
/* The upstream session's callbacks. */
int h2_up_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
		 const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data);
int h2_up_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data);
int h2_up_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data);
int h2_up_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
	       void *user_data);
int h2_up_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data);
/* Why len bytes of DATA cannot come on s now (RFC 9113 §8.1), or NULL. */
const char *h2s_data_misplaced(const struct h2s *s, size_t len);

/* ---- h2req.c ------------------------------------------------------------- */

/* The client session's callbacks. */
int h2_down_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data);
int h2_down_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
		   const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data);
int h2_down_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data);
int h2_down_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
		 void *user_data);
int h2_down_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t code, void *user_data);

#endif

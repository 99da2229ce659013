/*
 * cmask.h - credential masking on one connection (SPEC §4.2, §4.3): the
 * glue between conn.c and mask/. Private to proxy/.
 *
 * A cmask_t exists only when the session has masked values. It holds, for
 * the current request:
 *  - the outbound check and substitution of the serialised request head
 *    (target with percent forms, every header value, the decoded
 *    user:password of Authorization: Basic), in place since sentinels and
 *    real values have the same length;
 *  - one body direction per side: a streaming substituter fed by the
 *    llhttp body sink (http1_set_body_sink()), which re-frames chunked
 *    bodies, so a sentinel or real value split across reads, TLS records
 *    or chunks is found;
 *  - the audit figures: credentials injected, real values remasked, a
 *    sentinel left in a body.
 * The masking itself is mask/'s coarse API (mask_exch_*, mask/exchange.c):
 * one call per head, one per body chunk. cmask.c adds what belongs to
 * HTTP on a connection: chunked re-framing, the uniform hold-back timing
 * and WebSocket framing.
 *
 * Nothing here logs or formats a real value. Every function may be called
 * from event-loop callbacks; none allocates per byte.
 */
#ifndef PASSAVANT_CMASK_H
#define PASSAVANT_CMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "../mask/mask.h"
#include "base/attrib.h"

typedef struct cmask cmask_t;

/* Body directions. */
enum cmask_dir { CMASK_OUT = 0, CMASK_IN = 1 };

/* Creates the state for one connection on table t (not owned). Returns
 * NULL when t has no masked value (nothing to do) or on ENOMEM (*oom). */
cmask_t *cmask_new(mask_table_t *t, bool *oom) NONNULL(1, 2) WUNRES;

/* Empties b, wiping what it held first (it may hold real values). */
void cmask_wipe_drain(struct evbuffer *b) NONNULL(1);

/* Frees (wiping the streams' hold-back). NULL is a no-op. */
void cmask_free(cmask_t *m);

/* A new request: forgets the previous one's figures and body state. */
void cmask_begin_request(cmask_t *m) NONNULL(1);

/* Whether some credential may be injected towards host:port anywhere (the
 * request then asks for Accept-Encoding: identity, §4.3). */
bool cmask_inject_host(cmask_t *m, const char *host, uint16_t port) NONNULL(1, 2);

/*
 * Whether a response's Content-Encoding value (trailing blanks allowed)
 * leaves its body scannable: empty or "identity". An inject host's
 * response was asked for identity (its request's Accept-Encoding); any
 * other coding is refused with 502 in HTTP/1.1 and HTTP/2 alike, since a
 * real value inside a compressed body cannot be found.
 */
bool cmask_coding_scannable(const char *val, size_t len);

/*
 * Whether a response field names a coding of the body or of its messages:
 * Content-Encoding, gRPC's grpc-encoding (per message, HTTP/2 and
 * gRPC-Web), Connect's connect-content-encoding (streams) and RFC 3229's
 * IM (a 226 whose body is an instance manipulation: gzip, deflate, a
 * vcdiff or diffe delta, a feed's new entries). Any of them with a value
 * cmask_coding_scannable() refuses makes an inject host's response a 502.
 * Case-insensitive.
 */
bool cmask_coding_field(const char *name, size_t len);

/*
 * What a response head says of its body, read field by field in one pass
 * over the head (cmask_head_field()), HTTP/1.1's (exchange.c) and
 * HTTP/2's (h2stream.c) alike; cmask_head_judge() then says whether an
 * inject host's body can be scanned (SPEC §4.3). Zeroed before the pass.
 */
struct cmask_head {
	bool transfer_coded; /* a Transfer-Encoding that is not exactly "chunked" */
	bool content_coded;  /* a coding field (cmask_coding_field()) cmask_coding_scannable() refuses */
	bool charset;        /* a Content-Type naming a charset whose bytes are not ASCII's */
	bool partial;        /* a Content-Range, or a multipart/byteranges Content-Type */
};

/* Takes one field of a response head into hc (names in any case). */
void cmask_head_field(struct cmask_head *hc, const char *name, size_t nlen, const char *val, size_t vlen)
	NONNULL(1, 2, 4);

/* Why a response head is refused, or CMASK_HEAD_PASS. */
enum cmask_head_verdict {
	CMASK_HEAD_PASS,
	CMASK_HEAD_TRANSFER, /* a transfer coding but chunked, while credentials are masked */
	CMASK_HEAD_CODED,    /* a content coding from an inject host */
	CMASK_HEAD_CHARSET,  /* a charset whose bytes are not ASCII's from an inject host */
	CMASK_HEAD_PARTIAL,  /* a 206 from an inject host */
	CMASK_HEAD_PART,     /* a part under another status from an inject host: a Content-Range
			      * (any status), a multipart/byteranges Content-Type */
};

/*
 * The verdict on a final response head hc of status: masked, credentials
 * are masked on the connection; identity, the request went to an inject
 * host; body, a body follows (none after a HEAD, a 204, a 304, or an
 * END_STREAM on the head: nothing to scan, it passes).
 */
enum cmask_head_verdict cmask_head_judge(const struct cmask_head *hc, int status, bool masked, bool identity,
					 bool body) NONNULL(1);

/* What a refused head's reason says after "<peer> ": "answered ...",
 * ending with what to do. NULL for CMASK_HEAD_PASS. */
const char *cmask_head_why(enum cmask_head_verdict v);

/*
 * Checks and substitutes the serialised request head in head (nothing
 * else in it) for host:port, over verified TLS or not. Returns 0 (head
 * ready; injected credentials recorded), 1 when a sentinel sits in a
 * header or the target where it may not go (head wiped and emptied;
 * reason gets "its sentinel may not be sent to HOST:PORT in a header"
 * style text naming the credential, *rule a rule string owned by m), or
 * -1 on ENOMEM (head emptied).
 */
int cmask_request_head(cmask_t *m, struct evbuffer *head, const char *host, uint16_t port,
		       bool verified, char *reason, size_t reasonlen, const char **rule)
	NONNULL(1, 2, 3, 6, 8) WUNRES;

/* Whether a response field states or asks for a digest or a validator of
 * the body (Digest, Content-Digest, Repr-Digest, Want-*-Digest,
 * Content-MD5, ETag, the vendors' checksum fields): dropped from the
 * answers of an inject host (docs/masking.md "Digests of a re-masked
 * body"). */
bool cmask_digest_field(const char *name, size_t len);

/* Removes every cmask_digest_field() line ("Name: value\r\n") of the head
 * in buf from offset from on, wiping it; start_line: the first line there
 * is a start line, kept. request: a request head going to an inject host,
 * whose If-Match and If-None-Match go too (cmask_request_head() calls it).
 * Returns 0 or -1 (ENOMEM). */
int cmask_drop_digests(struct evbuffer *buf, size_t from, bool start_line, bool request) NONNULL(1) WUNRES;

/* Remasks (real -> sentinel) in place the bytes of buf from offset from on
 * (a response head just written there). Returns 0; 1 when a real value is
 * left there with its case changed (a field name: mask_exch_response_head();
 * those bytes are then wiped and removed, *cred names the credential);
 * -1 (ENOMEM). */
int cmask_response_head(cmask_t *m, struct evbuffer *buf, size_t from, const char **cred) NONNULL(1, 2, 4) WUNRES;

/*
 * Starts substituting the body of the current message in direction d:
 * outbound with the body set of host:port (injection where injectIn has
 * body, detection elsewhere), inbound with the remask set. chunked: the
 * output is re-framed as chunks. Returns 0 or -1 (ENOMEM).
 */
int cmask_body_begin(cmask_t *m, enum cmask_dir d, const char *host, uint16_t port, bool verified,
		     bool chunked) NONNULL(1) WUNRES;

/*
 * After http1_feed() consumed n body bytes at the front of src: takes
 * them. A chunked body was already fed through the sink (set it for
 * chunked bodies only), so they are dropped; any other body is scanned
 * straight from src (runs without a match move as libevent chains, no
 * copy). Returns 0 or -1.
 */
int cmask_body_take(cmask_t *m, enum cmask_dir d, struct evbuffer *src, size_t n)
	NONNULL(1, 3) WUNRES;

/* The http1 body sink for direction d (chunked bodies):
 * cmask_sink_arg(m, d) is its arg. */
int cmask_body_sink(void *arg, const char *data, size_t len);
void *cmask_sink_arg(cmask_t *m, enum cmask_dir d) NONNULL(1);

/* Substituted (and framed) bytes of direction d; the caller moves out the
 * number cmask_ready() gives, never more. */
struct evbuffer *cmask_out(cmask_t *m, enum cmask_dir d) NONNULL(1);

/*
 * How many bytes at the front of cmask_out(d) may go now (*n). Outbound
 * and after the end of a message: all. Inbound: all but the last
 * (longest value - 1) bytes the upstream sent, held (partly inside the
 * stream) until more bytes come, the message ends, or the caller's timer
 * calls cmask_in_release(): the delay is the same whatever the bytes,
 * so it tells the sandbox nothing. Chunked output is framed here. Returns
 * 0 or -1 (ENOMEM).
 */
int cmask_ready(cmask_t *m, enum cmask_dir d, size_t *n) NONNULL(1, 3) WUNRES;

/* The bytes direction d holds back now: those the stream holds and
 * those cmask_ready() keeps in cmask_out() (after the caller moved what
 * it gave, at most the hold-back, cmask_in_holdmax() inbound), whatever
 * the output's length against the input's (a sentinel is not as long as
 * its value). Pure. */
size_t cmask_held(const cmask_t *m, enum cmask_dir d) NONNULL(1);

/* The most bytes an inbound body from host:port holds back with table t
 * (mask_table_in_holdmax()). Pure. */
size_t cmask_in_holdmax(mask_table_t *t, const char *host, uint16_t port) NONNULL(1);

/* Whether bytes of direction d are being held (the caller's timer should
 * run). */
bool cmask_waiting(const cmask_t *m, enum cmask_dir d) NONNULL(1);

/* The timer ran out with no new bytes: what is held in direction d goes
 * as it is (a value cut by such a pause is not recognised) and the next
 * cmask_ready() gives everything. Returns 0 or -1. */
int cmask_release(cmask_t *m, enum cmask_dir d) NONNULL(1) WUNRES;

/*
 * Arms the outbound direction for a stream the client sends after a 101
 * (cmask_ws_begin()): its bytes are scanned, never substituted (nothing
 * is injected into a stream: every pair maps a sentinel to itself), so a
 * real value in it is met (cmask_leak()). Returns 0 or -1.
 */
int cmask_tunnel_begin(cmask_t *m) NONNULL(1) WUNRES;

/*
 * A real value on its way out (SPEC §4.2): the credential whose real
 * value, in any form the remask set knows, the outbound stream of the
 * current message (a body, a tunnel, an upgraded stream) has met so far,
 * or NULL. What the stream wrote for it is the sentinel's same form, so
 * the value itself is never in cmask_out(); the caller refuses the
 * request and drops what is still waiting. Only meaningful for
 * CMASK_OUT.
 */
const char *cmask_leak(const cmask_t *m, enum cmask_dir d) NONNULL(1);

/*
 * Inbound from an inject host (cmask_body_begin() or cmask_ws_begin()
 * with its host): the credential whose real value the case-folding
 * search found with its case changed in the response body (or stream),
 * or NULL. Once set, every inbound call (feed, take, release, end,
 * ready) returns -1 with EACCES, and what waited is wiped: the caller
 * cuts the response (HTTP/1.1: closes the connection; HTTP/2: resets
 * the stream) and audits naming the credential.
 */
const char *cmask_case_real(const cmask_t *m) NONNULL(1);

/*
 * The audit reason of a request whose range did not go up to host:port,
 * an inject host (SPEC §4.3; HTTP/1.1's exchange.c and HTTP/2's
 * h2stream.c), into buf[cap]; returns buf.
 */
const char *cmask_range_note(char *buf, size_t cap, const char *host, uint16_t port) NONNULL(1, 3);

/*
 * Whether the inbound body of an inject host was refused for its first
 * bytes: UTF-16 or UTF-32 text, whatever its Content-Type (a byte order
 * mark, or ASCII characters between NULs), in which a real value is no
 * byte string the re-masker knows. Then the body is cut as for
 * cmask_case_real() (the feed fails with EACCES, what waits is wiped)
 * and this says why (a reason's tail after "the response from PEER "),
 * else NULL.
 */
const char *cmask_in_refused(const cmask_t *m) NONNULL(1);

/*
 * Whether buf (a request target or one header field) holds a real value,
 * raw or in any form the remask set knows, as it is or with every %XX
 * decoded: returns 1 with *cred naming the credential, 0 (none), or -1
 * (ENOMEM). For the head, before any decision that could echo it.
 */
int cmask_find_real(cmask_t *m, const void *buf, size_t len, const char **cred) NONNULL(1, 2, 4) WUNRES;

/*
 * The message in direction d was cut off by its sender (an upstream that
 * ended in the middle of a body, or after a close-delimited body or an
 * upgraded stream: the end of such a message cannot be told from a cut):
 * the bytes the stream still holds, which may begin a real value, are
 * wiped and never sent (SPEC §4.3); what it already resolved may go
 * (a chunked body is not terminated). Returns 0 or -1.
 */
int cmask_body_cut(cmask_t *m, enum cmask_dir d) NONNULL(1) WUNRES;

/* End of the message in direction d: held-back bytes resolved, the last
 * chunk and the chunked terminator written; figures recorded. Returns 0
 * or -1. */
int cmask_body_end(cmask_t *m, enum cmask_dir d) NONNULL(1) WUNRES;

/*
 * A WebSocket stream after a 101 (SPEC §4.2, §4.3), both directions
 * framed (RFC 6455): the payloads of the data frames of a direction are
 * one stream for the substituter, so a value split across frames,
 * fragments, messages or a control frame between them is found; control
 * frames are substituted whole; client frames are unmasked to be
 * scanned and masked again. Inbound: real values become sentinels.
 * Outbound: nothing is injected, real values are counted
 * (cmask_ws_leak()). Output goes through cmask_out()/cmask_ready() with
 * the same uniform hold-back in both directions, and cmask_release() on
 * the caller's timer. cmask_ws_begin() arms both directions (replacing
 * cmask_body_begin(IN)); extensions: the 101 agreed one (else a frame
 * with an RSV bit set, a compressed one, breaks RFC 6455).
 * cmask_ws_feed() takes n bytes of src in direction d and returns 0, 1
 * for a frame that breaks RFC 6455 (the caller closes), 2 when more than
 * 64 KiB of frame headers and control frames wait behind held bytes (the
 * caller closes: releasing them could pass the start of a value), or -1
 * (ENOMEM).
 * The end: cmask_body_cut().
 */
int cmask_ws_begin(cmask_t *m, const char *host, uint16_t port, bool extensions) NONNULL(1) WUNRES;
int cmask_ws_feed(cmask_t *m, enum cmask_dir d, struct evbuffer *src, size_t n) NONNULL(1, 3) WUNRES;
/* The credential of a real value the client sent in the stream, or NULL. */
const char *cmask_ws_leak(const cmask_t *m) NONNULL(1);
/* Whether a WebSocket close frame went by in direction d: the stream
 * ended there (its end is no cut). */
bool cmask_ws_closed(const cmask_t *m, enum cmask_dir d) NONNULL(1);

/* Audit figures of the current request. names gets up to max credential
 * names (owned by the table); returns how many. */
size_t cmask_injected(const cmask_t *m, const char **names, size_t max) NONNULL(1);
uint64_t cmask_remasked(const cmask_t *m) NONNULL(1);
/* The credential whose sentinel was left in the request body where it may
 * not be injected (recorded, not refused), or NULL. */
const char *cmask_body_left(const cmask_t *m) NONNULL(1);
/* Whether a real value went into the current request's body so far
 * (mask_exch_body_injected()): the sandbox chose where it lies in the
 * bytes an upstream may echo, so no timed release may cut its echo. */
bool cmask_body_injected(const cmask_t *m) NONNULL(1);
/* Number of credentials (bound for cmask_injected()). */
size_t cmask_cred_count(const cmask_t *m) NONNULL(1);

#endif

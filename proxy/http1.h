/*
 * http1.h - llhttp glue: one parser per side of a connection (requests from
 * the client, responses from the upstream), the head kept with limits, and
 * the rewritten head serialised for the other side.
 *
 * The caller owns the bytes: http1_feed() only reports how many it
 * consumed, so the caller moves exactly those between evbuffers (the body
 * is relayed as received, chunked framing included, after llhttp validated
 * it) and never copies a body.
 *
 * Strictness (request smuggling, SPEC §5): llhttp's lenient flags are never
 * enabled; on top of llhttp, the head is scanned for bare CR, bare LF and
 * obs-fold, and so is a chunked request's trailer section (llhttp ends it
 * at a bare LF and folds its lines), header names must be tokens, and a
 * Connection header may not name a framing header (Content-Length,
 * Transfer-Encoding, Host). A
 * request must be HTTP/1.0 or HTTP/1.1 (400 without a version, 505 for
 * another) and may carry at most one Transfer-Encoding, exactly
 * "chunked", and none on HTTP/1.0 (400).
 *
 * Not thread-safe per object; every function may be called from callbacks.
 */
#ifndef PASSAVANT_HTTP1_H
#define PASSAVANT_HTTP1_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/buffer.h>

#include "base/attrib.h"

typedef struct http1 http1_t;

enum http1_kind { HTTP1_REQUEST, HTTP1_RESPONSE };

enum http1_result {
	HTTP1_MORE,    /* all input consumed; the message goes on */
	HTTP1_HEAD,    /* the head is complete: consumed ends at its last byte */
	HTTP1_DONE,    /* the message is complete: consumed ends at its last byte */
	HTTP1_ERROR    /* malformed or over a limit: http1_error_status() */
};

/*
 * Creates a parser of the given kind whose head may be at most
 * max_header_bytes long (request line or status line included) and have
 * at most PASSAVANT_MAX_HEADER_COUNT fields. Caller frees with
 * http1_free(). NULL on ENOMEM.
 */
http1_t *http1_new(enum http1_kind kind, size_t max_header_bytes) MALLOC WUNRES;

/* Frees the parser. NULL is a no-op. */
void http1_free(http1_t *h);

/* Forgets the current message, ready for the next one on the connection
 * (keeps the buffers: no allocation per request). */
void http1_reset(http1_t *h) NONNULL(1);

/* http1_reset(), and frees the head buffers too: for a connection that
 * goes idle between messages (allocated again at the next message's first
 * bytes). */
void http1_release(http1_t *h) NONNULL(1);

/*
 * Parses up to len bytes. *consumed receives how many belong to the current
 * message (the caller drops the head bytes it consumed after HTTP1_HEAD,
 * since the head is re-serialised, and moves body bytes to the peer).
 * HTTP1_HEAD is returned once per message; when the message has no body
 * (or is a CONNECT), http1_message_done() is already true at that point.
 * After HTTP1_DONE nothing more is consumed until http1_reset().
 */
enum http1_result http1_feed(http1_t *h, const char *data, size_t len, size_t *consumed)
	NONNULL(1, 4) WUNRES;

/*
 * The peer closed: completes a close-delimited response. Returns
 * HTTP1_DONE if the message is thereby complete, HTTP1_ERROR if it was
 * cut short (then it must not be treated as complete).
 */
enum http1_result http1_finish(http1_t *h) NONNULL(1) WUNRES;

/*
 * Body sink: from now on (until http1_reset() or another call), each span
 * of the message body as llhttp decodes it (chunk data without the
 * chunked framing; Content-Length and close-delimited bodies as they are)
 * is passed to fn(arg, data, len) during http1_feed()/http1_finish(). A
 * non-zero return fails the feed (HTTP1_ERROR, 502/400 as for a malformed
 * body, reason "body substitution failed"). NULL fn: no sink. The bytes
 * reported consumed still include the spans: the caller drains them.
 */
typedef int (*http1_body_fn)(void *arg, const char *data, size_t len);
void http1_set_body_sink(http1_t *h, http1_body_fn fn, void *arg) NONNULL(1);

/*
 * A second consumer of the same spans, called before the sink (the sink
 * may be cmask's): the outbound _method reader (formmethod.h) sees the
 * decoded body, chunked or not, whether it is masked or not. Same
 * contract as the sink; cleared by http1_reset(). NULL fn: none.
 */
void http1_set_body_watch(http1_t *h, http1_body_fn fn, void *arg) NONNULL(1);

/*
 * A trailer field after the chunked body fails the feed (HTTP1_ERROR,
 * http1_error_status() 403): on a host with a method list the verdict
 * read the head only, and a server that merges trailers into the head
 * (Apache's MergeTrailers) would take an X-HTTP-Method-Override there.
 * Cleared by http1_reset().
 */
void http1_refuse_trailers(http1_t *h) NONNULL(1);

/* Whether the head announced a body: chunked, or a Content-Length above
 * 0 (false before the head is done). */
bool http1_has_body(const http1_t *h) NONNULL(1);

/* Whether the message body uses chunked transfer coding (valid once the
 * head is done). */
bool http1_chunked(const http1_t *h) NONNULL(1);

/* Whether a chunked body stands between two chunks (every chunk so far
 * complete, its data and CRLF consumed): a boundary the sender chose. */
bool http1_between_chunks(const http1_t *h) NONNULL(1);

/* Tells a response parser that the request was HEAD (its response has no
 * body whatever the headers say). Reset by http1_reset(). */
void http1_set_head_request(http1_t *h, bool is_head) NONNULL(1);

/* After HTTP1_ERROR: the status to answer with (400 malformed, 405 TRACK,
 * which llhttp cannot parse, 431 head too large, 505 HTTP version) and a static one-line
 * reason. */
int http1_error_status(const http1_t *h) NONNULL(1);
const char *http1_error_reason(const http1_t *h) NONNULL(1);

/* State of the current message. */
bool http1_head_done(const http1_t *h) NONNULL(1);
bool http1_message_done(const http1_t *h) NONNULL(1);
/* Whether the connection may carry another message after this one
 * (llhttp_should_keep_alive: version, Connection header, framing). */
bool http1_keep_alive(const http1_t *h) NONNULL(1);
/* Whether the message body ends only at EOF (close-delimited response). */
bool http1_needs_eof(const http1_t *h) NONNULL(1);
/* Whether the head asked for an upgrade (Upgrade header or CONNECT). */
bool http1_upgrade(const http1_t *h) NONNULL(1);
/* Bytes of the head as received (request/status line and fields). */
size_t http1_head_bytes(const http1_t *h) NONNULL(1);

/* Head accessors; strings belong to the parser and are valid until
 * http1_reset()/http1_free(). Not NUL-terminated unless said so. */
const char *http1_method(const http1_t *h) NONNULL(1);          /* NUL-terminated, "GET" */
bool http1_method_is(const http1_t *h, const char *m) NONNULL(1, 2);
const char *http1_url(const http1_t *h, size_t *len) NONNULL(1, 2);
/* A request's target, field names and field values as kept, one after
 * the other without separators (one buffer to search them all). */
const char *http1_head_text(const http1_t *h, size_t *len) NONNULL(1, 2);
int http1_status(const http1_t *h) NONNULL(1);
unsigned http1_version_minor(const http1_t *h) NONNULL(1);
size_t http1_header_count(const http1_t *h) NONNULL(1);
void http1_header(const http1_t *h, size_t i, const char **name, size_t *nlen, const char **val,
		  size_t *vlen) NONNULL(1, 3, 4, 5, 6);
/* Number of fields named name (case-insensitive); *first (may be NULL)
 * receives the index of the first. */
size_t http1_header_find(const http1_t *h, const char *name, size_t *first) NONNULL(1, 2);

/*
 * Writes the request head for the upstream: "METHOD path HTTP/1.x", then
 * "Host: authority" in place of the client's Host fields, then every field
 * except the hop-by-hop ones (Connection and the fields it names,
 * Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade) and
 * Proxy-Authorization. path may start with '?' (then "/" is prepended).
 * keep_upgrade (an upgrade being relayed, e.g. WebSocket): the Upgrade
 * fields are kept and "Connection: Upgrade" is written. identity (SPEC
 * §4.3, requests to inject hosts): Accept-Encoding,
 * Sec-WebSocket-Extensions, Range and If-Range fields are dropped and
 * "Accept-Encoding: identity" is written, so the response can be scanned
 * in clear and whole. close (without keep_upgrade): "Connection: close"
 * is written. Returns 0, or -1 on ENOMEM.
 */
int http1_write_request_head(const http1_t *h, struct evbuffer *out, const char *path,
			     size_t path_len, const char *authority, bool keep_upgrade,
			     bool identity, bool close) NONNULL(1, 2, 3, 5) WUNRES;

/* What http1_write_response_head() adds to the upstream's fields. */
enum http1_head_add {
	HTTP1_HEAD_CLOSE = 1 << 0,   /* "Connection: close" */
	HTTP1_HEAD_UPGRADE = 1 << 1, /* "Connection: Upgrade" and the Upgrade field kept (a 101) */
	/* The body is sent chunked although it came close-delimited: the
	 * status line says HTTP/1.1 and "Transfer-Encoding: chunked" is
	 * added (only for a head without Transfer-Encoding or
	 * Content-Length, to a client of HTTP/1.1). */
	HTTP1_HEAD_CHUNKED = 1 << 2,
	/* "Passavant-Range: dropped; ..." (the request's range did not go up
	 * to an inject host, http1_range_dropped()): a resuming client's
	 * user sees why the whole came (curl -C - stops with 33). */
	HTTP1_HEAD_RANGE_DROPPED = 1 << 3,
};

/* Whether the request h asked for a range that http1_write_request_head()
 * leaves out towards an inject host (Range, Request-Range, x-ms-range; not
 * on a PUT, where it names what is written). */
bool http1_range_dropped(const http1_t *h) NONNULL(1);

/* Writes the response head for the client without hop-by-hop fields, plus
 * what add (enum http1_head_add, or-ed) names. Returns 0 or -1 on ENOMEM. */
int http1_write_response_head(const http1_t *h, struct evbuffer *out, unsigned add) NONNULL(1, 2) WUNRES;

#endif

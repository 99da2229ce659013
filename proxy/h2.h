/*
 * h2.h - HTTP/2 inside a terminated tunnel (SPEC §5, docs/tls.md "HTTP/2"),
 * private to proxy/. nghttp2 does the framing, HPACK, flow control and
 * the RFC 9113 checks; h2.c maps each client stream to one upstream
 * stream on the tunnel's own upstream connection, which negotiated h2
 * too (mitm.c dials it first when the client offers h2).
 *
 * Every stream goes through the decisions of an HTTP/1.1 request inside
 * a tunnel (TRACE/TRACK, CONNECT, the origin form, :authority and Host
 * against the CONNECT or intercepted target, a real value on its way
 * out, allowedDomains, allowedMethods, the credential rules); a refusal
 * is a response on that stream, and the other streams go on. Its head is
 * substituted through the same serialised form as an HTTP/1.1 head
 * (cmask_request_head()); its DATA through a streaming substituter per
 * stream and direction; response heads, DATA and trailers are remasked.
 * One audit line per stream ("proto": "h2").
 *
 * Memory is bounded by flow control: DATA is acknowledged
 * (nghttp2_session_consume()) only when the other side took it, and no
 * frame is produced for a side whose output is above
 * PASSAVANT_OUTBUF_HIGH_BYTES.
 */
#ifndef PASSAVANT_PROXY_H2_H
#define PASSAVANT_PROXY_H2_H

#include "base/attrib.h"
#include "conn_int.h"

/* Both TLS handshakes of c negotiated h2: HTTP/2 from here on (mode H2,
 * state RELAY). Returns the step (STEP_CLOSED when c was closed). */
enum step conn_h2_start(conn_t *c) NONNULL(1);

/* conn_h2_start() once the upstream's h2 is checked: the sessions, mode
 * H2. The fuzz driver (tests/fuzz/fuzz_h2.c) calls it on plain sides. */
enum step conn_h2_begin(conn_t *c) NONNULL(1);

/* RELAY in mode H2: feeds both sessions what arrived, sends what they
 * produce, ends the connection when both are done. */
enum step conn_step_h2(conn_t *c) NONNULL(1);

/* The connection's timer in mode H2: idle for idleTimeoutMs with no
 * stream open (or nothing moving at all). Closes c or re-arms. */
void conn_h2_timeout(conn_t *c) NONNULL(1);

/* Frees the HTTP/2 state of c (streams not yet audited are, as cut off).
 * NULL-safe on c->h2. */
void conn_h2_free(conn_t *c) NONNULL(1);

#endif

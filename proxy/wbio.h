/*
 * wbio.h - the write side of a TLS connection on a socket: an OpenSSL BIO
 * that gathers the records one loop iteration produces and writes them
 * with one send(2) (private to proxy/).
 *
 * libevent's SSL bufferevent calls SSL_write() once per buffer chain, and
 * OpenSSL hands each record to its BIO at once: on a socket BIO that is one
 * write(2), one TCP segment train and one wakeup of the peer per 16 KiB
 * record. This BIO copies small records into a buffer of
 * WBIO_BUFFER_BYTES (one record) and sends it when it is full or, at the
 * latest, from an event made active
 * when the first record went in: that event runs after the callbacks
 * already queued in the same loop iteration (libevent runs active events
 * in order), so nothing waits for a later iteration. When the socket is
 * full the event waits for it to be writable; meanwhile the BIO refuses
 * more (retry), so back-pressure reaches libevent's output buffer as
 * before. The buffer exists only while it holds bytes: an idle connection
 * has none. A large record (WBIO_DIRECT_BYTES) with nothing gathered
 * before it is sent from the write itself, as a socket BIO would: what
 * the socket does not take stays in OpenSSL's buffer (a short write, then
 * retry), and OpenSSL writes it again when libevent's write event finds
 * room.
 *
 * BIO_flush() (OpenSSL's end of a handshake flight, SSL_shutdown(), a
 * KeyUpdate's answer) sends at once, and succeeds when the socket is full:
 * the rest is the BIO's to send, from its send event (a retry there made
 * an SSL_read() fail for a write). A send error is kept: the next write fails, and the
 * bufferevent, once set with wbio_set_bufferevent(), gets
 * BEV_EVENT_ERROR|BEV_EVENT_WRITING (deferred: the callback never runs
 * inside OpenSSL or inside this BIO).
 */
#ifndef PASSAVANT_PROXY_WBIO_H
#define PASSAVANT_PROXY_WBIO_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>

#include "base/attrib.h"
#include "base/defaults.h"

/*
 * Bytes gathered before a send: one full TLS record. Small records of one
 * iteration (a response, h2 frames) still leave in one send; in a bulk
 * transfer each full record leaves as soon as the next one comes, as on a
 * socket BIO. Four records made uploads wait for the end of the
 * iteration: 64 MiB up at 0.92-0.94 of the bare TLS relay's rate, against
 * 0.98-1.00 with one (peer bench, 4 alternating runs each; downloads,
 * kept-alive and h2 rows unchanged; docs/architecture.md).
 */
#define WBIO_BUFFER_BYTES (16384 + 256)

/*
 * A record of at least this size, written while nothing is gathered, is
 * sent at once from OpenSSL's buffer and never copied: what the socket
 * does not take is written again from there (retry), so bulk transfers
 * move no byte through the BIO's buffer. Smaller records are gathered as
 * above.
 */
#define WBIO_DIRECT_BYTES (WBIO_BUFFER_BYTES / 2)

/* The method, made once per proxy (wbio_method_free() at exit); NULL when
 * OpenSSL cannot allocate it. */
BIO_METHOD *wbio_method_new(void) WUNRES;
void wbio_method_free(BIO_METHOD *m);

/*
 * A write BIO on fd (not closed by the BIO) whose send event lives on
 * base; NULL when out of memory. BIO_get_fd() answers fd, as
 * bufferevent_openssl_socket_new() requires. Owned by the SSL after
 * SSL_set_bio().
 */
BIO *wbio_new(BIO_METHOD *m, struct event_base *base, evutil_socket_t fd) NONNULL(1, 2) WUNRES;

/* OpenSSL's and libevent's allocations of the thread go to the upstream
 * zone (true) or to malloc() (false) from each write of b on (zone.h):
 * b is an upstream's. */
void wbio_set_zone(BIO *b, bool upstream) NONNULL(1);

/*
 * The SSL writing through b, so that b can tell the answers OpenSSL
 * writes inside SSL_read() (SSL_in_init(): a KeyUpdate's) from data. An
 * answer of at most WBIO_ANSWER_BYTES that does not fit is taken whole
 * past the buffer, never refused or taken in part (that made the
 * SSL_read() fail with SSL_ERROR_WANT_WRITE), while at most
 * WBIO_ANSWERS_MAX wait past WBIO_BUFFER_BYTES: a peer that asks without
 * reading then loses the connection (the write fails, ENOBUFS;
 * wbio_overflowed()); one that reads drains the buffer. No integration
 * test reaches this path (a reviewer's slow downloads with a KeyUpdate
 * per read never did); the unit test proxy_wbio does.
 */
#define WBIO_ANSWER_BYTES 128
#define WBIO_ANSWERS_MAX (64 * 1024)
void wbio_set_ssl(BIO *b, SSL *ssl) NONNULL(1, 2);

/* The bufferevent that owns the SSL holding b (for error events). */
void wbio_set_bufferevent(BIO *b, struct bufferevent *bev) NONNULL(1);

/* Bytes ssl's write BIO takes now without a send(2) (0 when it is not a
 * wbio, after a send failed, or while OpenSSL holds a record only part of
 * which the socket took): a record that fits is copied. */
size_t wbio_room(SSL *ssl) NONNULL(1);

/* Bytes ssl's write BIO still holds (0 when it is not a wbio). */
size_t wbio_pending(SSL *ssl) NONNULL(1);

/* Bytes ssl's write BIO has sent so far (0 when it is not a wbio): grows
 * while the peer takes bytes. */
uint64_t wbio_sent(SSL *ssl) NONNULL(1);

/* Once the BIO of ssl has sent everything, run the bufferevent's write
 * callback once (deferred): a conn that drains before closing waits for
 * it. */
void wbio_notify_empty(SSL *ssl) NONNULL(1);

/*
 * Whether OpenSSL holds a record of ssl's that the socket took only part
 * of, or none of (a short write or a retry since the last whole write):
 * OpenSSL writes its rest before anything else, and fails any other
 * write it must make meanwhile, such as the KeyUpdate a TLS 1.3 server
 * answers inside SSL_read() (false when ssl's write BIO is not a wbio).
 */
bool wbio_holding(SSL *ssl) NONNULL(1);

/* fn(arg) runs once, from inside the write that completes that record
 * (it must not free the SSL or its bufferevent), or never when
 * wbio_detach() comes first; replaces an earlier fn. */
void wbio_on_sent(SSL *ssl, void (*fn)(void *), void *arg) NONNULL(1);

/*
 * Before the bufferevent owning ssl is freed (which closes the socket and
 * frees the BIO): forget the bufferevent and send, without blocking, what
 * the socket still takes. Bytes the socket does not take are lost, as
 * bytes left in a bufferevent's output are; conns drain first
 * (wbio_pending()) where the bytes matter.
 */
void wbio_detach(SSL *ssl) NONNULL(1);

/*
 * The read side: a BIO that reads the socket as OpenSSL's socket BIO does
 * (recv(2), the same errors to retry, its end for BIO_eof()), and points
 * the thread's allocations at the upstream zone or at malloc() (upstream
 * as for wbio_set_zone()) at each read. Both BIOs mark the zone in their
 * own read and write, where a BIO callback (BIO_set_callback_ex()) ran on
 * every BIO_ctrl() as well: OpenSSL 3.0 asks its BIOs about 50 times per
 * kept-alive request (docs/architecture.md). The method is made once per
 * proxy (BIO_meth_free() at exit); the BIO never closes fd.
 */
BIO_METHOD *rbio_method_new(void) WUNRES;
BIO *rbio_new(BIO_METHOD *m, evutil_socket_t fd, bool upstream) NONNULL(1) WUNRES;

/*
 * The write side of a TLS filter (a ClientHello that came behind the
 * CONNECT head, tls.c): appends each record whole to the output of the
 * bufferevent under the filter, where libevent's own BIO wrote only what
 * fitted under that output's high watermark and left OpenSSL holding the
 * rest. OpenSSL 3.0, as a TLS 1.3 server, answers a KeyUpdate that asks
 * for ours inside SSL_read(), and that write fails (SSL_R_BAD_LENGTH, the
 * connection lost) while a record is held so; this BIO never holds one.
 *
 * libevent still gates its writes at the watermark: it writes while the
 * output is below it (consider_writing()), one write then taking up to
 * its max single write (128 KiB, sockio.c) and the whole of the last
 * chain it peeks, so a slow reader's output passes the watermark by a
 * bounded amount (a reviewer saw 395-423 KB waiting). What libevent does
 * not gate are the answers OpenSSL writes inside SSL_read() (a
 * KeyUpdate's, TLS 1.2's no_renegotiation alert, each one record of at
 * most WBIO_ANSWER_BYTES), which a peer that reads nothing can ask for
 * without end. So small records written while the output is at or above
 * its watermark are counted (at most 8 per libevent write, the vectors
 * of one do_write(), otherwise), the count starting again when a write
 * finds the output below it; a write that would take the count past
 * WBIO_ANSWERS_MAX fails (no retry; wbio_overflowed() then tells why
 * the connection ended). Large records are never refused: their
 * producers are gated. The BIO never frees under.
 */
#define WBIO_ANSWERS_REASON                                                                              \
	"more than 64 KiB of TLS answers wait for a peer that reads none of them (KeyUpdate or renegotiation " \
	"requests without reading): connection closed"
BIO_METHOD *fwbio_method_new(void) WUNRES;
BIO *fwbio_new(BIO_METHOD *m, struct bufferevent *under) NONNULL(1, 2) WUNRES;
/* True once a write of ssl's write BIO (the filter writer or the socket
 * BIO) failed on its answers' bound (WBIO_ANSWERS_MAX,
 * WBIO_ANSWERS_MAX): the connection ends for WBIO_ANSWERS_REASON. */
bool wbio_overflowed(SSL *ssl) NONNULL(1);

#endif

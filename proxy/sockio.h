/*
 * sockio.h - the connection's I/O layer (private to proxy/): the two
 * sides' sockets, TLS records and buffers, with back-pressure.
 *
 * Everything that depends on how libevent 2.1 works inside is in
 * sockio.c and only there: the read and write events of a bufferevent
 * made active by hand, our own reader on a plain socket and, after the
 * handshake, on a TLS one, SSL_read() and SSL_write() beside
 * bufferevent_openssl, writes straight to the socket of a bufferevent, and
 * freeing the chain an empty input buffer keeps. Each saves memory per
 * idle connection or system calls per request; docs/notes-proxy-io.md says
 * how much, and why each is safe with the libevent versions sockio.c
 * names.
 */
#ifndef PASSAVANT_PROXY_SOCKIO_H
#define PASSAVANT_PROXY_SOCKIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "base/attrib.h"
#include "conn_int.h"

/* Passes the first n bytes of src to side s: straight to its socket when
 * nothing is queued, else queued; 0 or -1. */
int sockio_send(struct conn_side *s, struct evbuffer *src, size_t n) NONNULL(1, 2) WUNRES;

/* As sockio_send(), but behind a head still pending for s (one writev). */
int sockio_pass_on(struct conn_side *s, struct evbuffer *src, size_t n) NONNULL(1, 2) WUNRES;

/* Sends what a step assembled in s->pending; 0 or -1. */
int sockio_flush_pending(struct conn_side *s) NONNULL(1) WUNRES;

/* A TLS side that read the peer's close_notify writes what is queued. */
void sockio_rearm_tls_write(struct conn_side *s) NONNULL(1);

/* Read and write sizes per call: a plain socket, a TLS side. */
void sockio_tune(struct bufferevent *bev) NONNULL(1);
void sockio_tune_tls(struct bufferevent *bev) NONNULL(1);

/* A TLS filter's underlying output bounded by the watermarks. */
void sockio_bound_underlying(struct bufferevent *bev) NONNULL(1);

/* Encrypted bytes for the TLS client not yet handed to its socket: in a
 * filter's underlying output (sockio_under_left()), or in the write BIO. */
size_t sockio_under_left(const conn_t *c) NONNULL(1);
size_t sockio_tls_unsent(const conn_t *c) NONNULL(1);

/* Frees the buffers an idle TLS side keeps (input chain, OpenSSL's). */
void sockio_release_idle(conn_t *c, struct conn_side *s) NONNULL(1, 2);

/* The end of a drive of c: counts it, and frees what its idle TLS sides
 * hold unless c is busy (enum conn_bufs). */
void sockio_drive_done(conn_t *c) NONNULL(1);

/* What a buffer tick (proxy.c) found of a connection. */
enum sockio_tick {
	SOCKIO_TICK_IDLE,     /* releasing after each drive: nothing to do until driven again */
	SOCKIO_TICK_BUSY,     /* busy, or quiet once: its buffers are kept; the next tick looks again */
	SOCKIO_TICK_RELEASED  /* was busy, now quiet twice in a row: its buffers were freed */
};

/* A buffer tick for c: busy since the last one, or quiet. may_keep false
 * (its loop keeps the buffers of enough connections already): a busy c
 * counts as quiet. */
enum sockio_tick sockio_bufs_tick(conn_t *c, bool may_keep) NONNULL(1);

/* Starts or stops reading side s. */
void sockio_set_reading(struct conn_side *s, bool on) NONNULL(1);

/* Whether a pause of side s's peer is its own: s read for at least ms
 * (two round trips of its TCP connection when longer) since its reading
 * was last switched on, and nothing of the peer waits
 * on its way in (s's input, OpenSSL, a filter's underlying input, the
 * socket). Held bytes are released after a pause only then (relay.c,
 * h2.c): a pause that our back-pressure made is the sandbox's choice. */
bool sockio_peer_quiet(struct conn_side *s, int64_t ms) NONNULL(1);

/* Decrypts what OpenSSL already holds into s's input. Returns 0, 1 when
 * s ended cleanly (close_notify), 2 when it failed (eof set in both
 * cases), -1 when out of memory. */
int sockio_pull_tls(struct conn_side *s) NONNULL(1) WUNRES;

/* Gives the plain side s (bev connected, no TLS) our reader; reading
 * starts with sockio_set_reading(). sockio_reader_free() takes it away. */
int sockio_reader_new(conn_t *c, struct conn_side *s) NONNULL(1, 2) WUNRES;
void sockio_reader_free(struct conn_side *s) NONNULL(1);

/* Gives the TLS side s, on a socket and its handshake done, our reader in
 * place of libevent's, reading if libevent's was; 0 (also when s is a
 * filter, plain, or has it already) or -1 (libevent keeps reading). */
int sockio_tls_reader_new(conn_t *c, struct conn_side *s) NONNULL(1, 2) WUNRES;

/* Which sides may read: the back-pressure rule (conn.c). */
void sockio_update(conn_t *c) NONNULL(1);

/* Shuts the write side of s's socket (FIN); 0 or -1 when it is gone. */
int sockio_shutdown_wr(struct conn_side *s) NONNULL(1) WUNRES;

/* Makes the close of s's socket an RST (SO_LINGER 0). */
void sockio_reset_on_close(struct conn_side *s) NONNULL(1);

/* Frees s's bufferevent (and with it the socket, the TLS and its write
 * BIO, whose bytes go first as far as the socket takes them). */
void sockio_side_free(struct conn_side *s) NONNULL(1);

#endif

/*
 * conn.h - one client connection and whatever upstream it talks to: the
 * state machine of docs/architecture.md (accept, read the head, decide,
 * connect, relay, drain, close).
 *
 * The struct is private to the proxy (conn_int.h). A conn owns its two bufferevents, its
 * parsers, its timer and its pending upstream request; conn_close() is the
 * only place that frees any of them.
 */
#ifndef PASSAVANT_CONN_H
#define PASSAVANT_CONN_H

#include <stdbool.h>

#include <event2/util.h>

#include "base/attrib.h"
#include "proxy.h"

typedef struct conn conn_t;

/*
 * Takes over an accepted client socket fd (non-blocking) from peer: sets
 * TCP_NODELAY, starts reading the first request head under the current
 * policy's handshake timeout, and links the conn into the proxy registry.
 * The conn counts among those waiting for a first allowed request
 * (proxy_waiting_acquire()) until it takes a tunnel slot; past
 * limits.maxTunnels of them, the oldest of this loop still reading a
 * first head is closed to make room, and only when none can be is fd
 * refused and closed (with a 503 when http says the client speaks HTTP
 * to the proxy, not an intercepted one).
 * Returns the conn (owned by the registry; it frees itself through
 * conn_close()), or NULL after closing fd and logging why. From callbacks:
 * yes.
 */
conn_t *conn_new(proxy_t *px, evutil_socket_t fd, const struct sockaddr *peer, int peerlen, bool http)
	NONNULL(1, 3);

/*
 * The single teardown: writes the tunnel audit line if one is due,
 * cancels a pending dial, frees both bufferevents, parsers and the timer,
 * gives back the tunnel slot and the policy reference, unlinks and frees
 * the conn. is_error logs reason as a warning, else at debug level.
 * Idempotent within one callback (a CLOSED conn is not touched twice);
 * after it returns the pointer is invalid. From callbacks: yes.
 */
void conn_close(conn_t *c, const char *reason, bool is_error) NONNULL(1, 2);

/* Closes every connection in the registry (shutdown). */
void conn_close_all(struct conn **list) NONNULL(1);

/* A buffer tick over the registry (proxy.c, enum conn_bufs): whether a
 * connection is still busy (*busy: tick again) and whether one that was
 * busy freed its buffers (*freed: trim the heap). */
void conn_bufs_tick(struct conn *list, bool *busy, bool *freed) NONNULL(2, 3);

#endif

/*
 * upstream.h - dialling an upstream the policy allowed by name (SPEC §3.5
 * step 4): resolve with evdns (never a blocking getaddrinfo on the event
 * loop), pass every resolved address through policy_addr_allowed_local()
 * with this machine's own addresses as they are at that moment
 * (localaddr.h), and connect, non-blocking with a timeout, only to an
 * address that passed. IP literals are not resolved; they go through the
 * guard too.
 *
 * Only call this for a host policy_decide() allowed: a refused name must
 * never be looked up (it could carry data out through DNS).
 */
#ifndef PASSAVANT_UPSTREAM_H
#define PASSAVANT_UPSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>

#include "../policy/policy.h"
#include "base/attrib.h"
#include "localaddr.h"

typedef struct upstream_req upstream_req_t;

enum upstream_result {
	UPSTREAM_OK,          /* connected */
	UPSTREAM_DENIED,      /* every address refused by the guard (403) */
	UPSTREAM_UNRESOLVED,  /* the name does not resolve (502) */
	UPSTREAM_UNREACHABLE, /* every allowed address refused the connection (502) */
	UPSTREAM_TIMEOUT      /* resolution or connect timed out (504) */
};

/*
 * Called exactly once per request, from the event loop (never from inside
 * upstream_connect()). On UPSTREAM_OK, bev is a connected socket
 * bufferevent (BEV_OPT_CLOSE_ON_FREE, TCP_NODELAY set, no callbacks, not
 * enabled) that now belongs to the callee; otherwise bev is NULL. detail
 * is a one-line explanation ("localhost resolves to 127.0.0.1
 * (loopback)", "connection refused") and rule the deciding policy rule
 * for UPSTREAM_DENIED (else NULL); both are valid only during the call.
 * The request is freed after the callback returns.
 */
typedef void (*upstream_cb)(void *arg, enum upstream_result result, struct bufferevent *bev,
			    const char *detail, const char *rule);

/*
 * Starts resolving and connecting to host:port (host normalised; is_ip
 * when it is an IP literal) under policy pol, which must outlive the
 * request, refusing this machine's own addresses as local knows them when
 * the addresses are judged; local must outlive the request too. Returns a
 * handle to cancel with upstream_cancel(), or NULL on ENOMEM (cb is then
 * never called).
 */
upstream_req_t *upstream_connect(struct event_base *base, struct evdns_base *dns,
				 localaddr_t *local, const policy_t *pol, const char *host,
				 uint16_t port, bool is_ip, upstream_cb cb, void *arg)
	NONNULL(1, 2, 3, 4, 5, 8) WUNRES;

/* Cancels a pending request: cb is not called, everything is freed. Must
 * not be called after cb ran. NULL is a no-op. */
void upstream_cancel(upstream_req_t *r);

/* HTTP status for a failed result: 403, 502 or 504. */
int upstream_status(enum upstream_result result);

#endif

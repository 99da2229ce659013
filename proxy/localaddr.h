/*
 * localaddr.h - this machine's own interface addresses, kept current, for
 * the resolved-address guard (issue 13 class 4, SPEC §3.1).
 *
 * A service bound to all interfaces (0.0.0.0, ::) answers on every address
 * of every interface, not only on loopback. So the guard refuses them all
 * like loopback (policy_addr_allowed_local()). The set is the interface
 * addresses (getifaddrs()) and the routes of type local or anycast (AnyIP
 * prefixes, IPv6 anycast), re-read when a NETLINK_ROUTE socket subscribed
 * to the IPv4 and IPv6 address and route groups says something relevant
 * changed: from the event loop, and once more, without blocking, whenever
 * the set is asked for, so that an address added just before a request is
 * already in it.
 */
#ifndef PASSAVANT_LOCALADDR_H
#define PASSAVANT_LOCALADDR_H

#include <stddef.h>

#include <event2/event.h>

#include "../policy/policy.h"
#include "base/attrib.h"

typedef struct localaddr localaddr_t;

/*
 * Subscribes to address changes (netlink, registered on base) and reads
 * the current set. Returns the watcher, to free with localaddr_free(), or
 * NULL with errno set and a sentence in err (what failed, and that the
 * proxy cannot tell its own addresses without it).
 */
localaddr_t *localaddr_new(struct event_base *base, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* Unregisters and frees everything. NULL: no-op. */
void localaddr_free(localaddr_t *la);

/*
 * The current set: first takes every change notice waiting on the netlink
 * socket (one non-blocking recv when there is none) and re-reads the
 * addresses if there was one, or if an earlier re-read failed. The set
 * stays owned by la and valid until the next call or localaddr_free().
 * A failed re-read keeps the previous set (logged once per failure run).
 * May be called from callbacks.
 */
const struct policy_addrset *localaddr_get(localaddr_t *la) NONNULL(1);

#endif

/*
 * resolver.h - the in-sandbox resolver of `run` (SPEC §3.5, §7; private to
 * proxy/): DNS over the sandbox's UDP socket (evdns server API), and the
 * session's map between names and the synthetic addresses handed out for
 * them. Intercepted connections (intercept.c) ask it which name their
 * original destination stands for.
 */
#ifndef PASSAVANT_PROXY_RESOLVER_H
#define PASSAVANT_PROXY_RESOLVER_H

#include <stddef.h>
#include <sys/socket.h>

#include "base/attrib.h"

typedef struct proxy proxy_t;
typedef struct resolver resolver_t;

/* Serves DNS on fd (a bound UDP socket; ownership moves, closed by
 * resolver_free()). NULL after logging why (fd closed too). */
resolver_t *resolver_new(proxy_t *px, int fd) NONNULL(1) WUNRES;

/* Writes the record summing up refusals not recorded one by one, if any,
 * without waiting for the second to end. */
void resolver_flush(resolver_t *r) NONNULL(1);

/* Stops serving and frees the map. NULL is a no-op. */
void resolver_free(resolver_t *r);

/*
 * The normalised name the synthetic address of sa (AF_INET or AF_INET6)
 * was handed out for, or NULL when sa is not an address this resolver
 * handed out. The string lives as long as r.
 */
const char *resolver_name_of(const resolver_t *r, const struct sockaddr *sa) NONNULL(1, 2);

/* The proxy's resolver, NULL when none was adopted (proxy.c). */
resolver_t *proxy_resolver(proxy_t *px) NONNULL(1);

#endif

/*
 * intercept.h - the listener of intercepted connections (SPEC §5, §7;
 * private to proxy/): each connection the sandbox's nftables rule
 * redirected to it is taken with its original destination
 * (SO_ORIGINAL_DST) and decided from its first bytes (intercept.c,
 * conn_step_intercept()). proxy_adopt_intercept() creates one per
 * adopted socket.
 */
#ifndef PASSAVANT_PROXY_INTERCEPT_H
#define PASSAVANT_PROXY_INTERCEPT_H

#include "base/attrib.h"
#include "proxy.h"

typedef struct intercept intercept_t;

/*
 * Adopts fd, a listening AF_INET or AF_INET6 TCP socket (non-blocking and
 * close-on-exec are set here), as a listener of intercepted connections
 * on px's loop. Returns the listener (the caller frees it with
 * intercept_free(), after every connection: proxy_free() does), or NULL
 * after logging why (fd is closed then too). Setup code.
 */
intercept_t *intercept_new(proxy_t *px, int fd) NONNULL(1) WUNRES;

/* Stops listening, closes the socket, frees. NULL is a no-op. */
void intercept_free(intercept_t *ic);

#endif

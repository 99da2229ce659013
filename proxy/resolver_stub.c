/*
 * resolver_stub.c - TEMPORARY, branch h-icpt only: the lead deletes this
 * file at merge, when proxy/resolver.c (the resolver helper's) and
 * proxy_resolver() in proxy.c arrive. Until then no resolver exists, so
 * every synthetic destination maps to no name (intercept.c refuses it).
 * Weak, so the real definitions win if both are linked.
 */
#include "resolver.h"

__attribute__((weak)) resolver_t *proxy_resolver(proxy_t *px)
{
	(void)px;
	return NULL;
}

__attribute__((weak)) const char *resolver_name_of(const resolver_t *r, const struct sockaddr *sa)
{
	(void)r;
	(void)sa;
	return NULL;
}

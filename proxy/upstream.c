/*
 * upstream.c - resolve, guard, connect.
 *
 * A request goes RESOLVING -> CONNECTING (one allowed address after the
 * other) -> finished; one timer bounds resolution (PASSAVANT_DNS_TIMEOUT_MS)
 * and then the whole connect phase (PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS).
 * The user callback always runs from a separate event ("done"), so the
 * caller never sees it re-entrantly from upstream_connect() or from inside
 * evdns.
 */
#include "upstream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/util.h>

#include "base/defaults.h"
#include "log.h"
#include "zone.h"

/* At most this many resolved addresses are considered. */
#define UPSTREAM_MAX_ADDRS 8

struct upstream_req {
	struct event_base *base;           /* loop */
	struct evdns_base *dns;            /* resolver */
	localaddr_t *local;                /* this machine's addresses (proxy's) */
	const policy_t *pol;               /* guard policy (caller's reference) */
	char host[POLICY_HOST_MAX + 1];    /* normalised host */
	uint16_t port;                     /* port to dial */
	upstream_cb cb;                    /* user callback */
	void *arg;                         /* its argument */
	struct evdns_getaddrinfo_request *gai; /* pending lookup or NULL */
	struct sockaddr_storage addrs[UPSTREAM_MAX_ADDRS]; /* addresses that passed */
	socklen_t addr_len[UPSTREAM_MAX_ADDRS];
	size_t naddrs, next;               /* passed, next to try */
	struct bufferevent *bev;           /* connect in progress or done */
	struct event *timer;               /* resolve / connect deadline */
	struct event *done;                /* runs the user callback */
	enum upstream_result result;       /* final result */
	const char *rule;                  /* deciding rule (policy storage) */
	char detail[600];                  /* one-line explanation */
};

int upstream_status(enum upstream_result result)
{
	switch (result) {
	case UPSTREAM_OK:
		return 200;
	case UPSTREAM_DENIED:
		return 403;
	case UPSTREAM_UNRESOLVED:
	case UPSTREAM_UNREACHABLE:
		return 502;
	case UPSTREAM_TIMEOUT:
		return 504;
	}
	return 502;
}

static void req_free(upstream_req_t *r)
{
	if (r->gai != NULL) {
		/* Cancelling runs the lookup callback with EVUTIL_EAI_CANCEL;
		 * it sees gai cleared and r->cb NULL and does nothing. */
		struct evdns_getaddrinfo_request *g = r->gai;

		r->gai = NULL;
		r->cb = NULL;
		evdns_getaddrinfo_cancel(g);
	}
	if (r->bev != NULL)
		bufferevent_free(r->bev);
	if (r->timer != NULL)
		event_free(r->timer);
	if (r->done != NULL)
		event_free(r->done);
	free(r);
}

/* Records the result and schedules the user callback. */
static void finish(upstream_req_t *r, enum upstream_result res)
{
	r->result = res;
	event_del(r->timer);
	event_active(r->done, EV_TIMEOUT, 1);
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	upstream_req_t *r = arg;
	struct bufferevent *bev = NULL;

	(void)fd;
	(void)what;
	if (r->result == UPSTREAM_OK) {
		bev = r->bev;
		r->bev = NULL;
		bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
	}
	r->cb(r->arg, r->result, bev, r->detail, r->result == UPSTREAM_DENIED ? r->rule : NULL);
	req_free(r);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	upstream_req_t *r = arg;

	(void)fd;
	(void)what;
	(void)snprintf(r->detail, sizeof(r->detail), "%s %s:%u timed out",
		       r->gai != NULL ? "resolving" : "connecting to", r->host, (unsigned)r->port);
	if (r->gai != NULL) {
		struct evdns_getaddrinfo_request *g = r->gai;

		r->gai = NULL;
		evdns_getaddrinfo_cancel(g);
	}
	if (r->bev != NULL) {
		bufferevent_free(r->bev);
		r->bev = NULL;
	}
	finish(r, UPSTREAM_TIMEOUT);
}

static void try_next(upstream_req_t *r);

static void connect_event_cb(struct bufferevent *bev, short what, void *arg)
{
	upstream_req_t *r = arg;
	int one = 1;

	if (what & BEV_EVENT_CONNECTED) {
		/* Nagle would hold back the first small write of every
		 * request and response behind a delayed ACK (~40 ms). */
		if (setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
			log_warn("upstream %s: TCP_NODELAY", r->host);
		finish(r, UPSTREAM_OK);
		return;
	}
	(void)snprintf(r->detail, sizeof(r->detail), "connecting to %s:%u: %s", r->host,
		       (unsigned)r->port, evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	bufferevent_free(r->bev);
	r->bev = NULL;
	try_next(r);
}

/* Dials the next address that passed the guard, or fails. */
static void try_next(upstream_req_t *r)
{
	while (r->next < r->naddrs) {
		size_t i = r->next++;

		r->bev = bufferevent_socket_new(r->base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (r->bev == NULL) {
			(void)snprintf(r->detail, sizeof(r->detail), "out of memory");
			break;
		}
		bufferevent_setcb(r->bev, NULL, NULL, connect_event_cb, r);
		if (bufferevent_socket_connect(r->bev, (struct sockaddr *)&r->addrs[i], (int)r->addr_len[i]) == 0)
			return;
		(void)snprintf(r->detail, sizeof(r->detail), "connecting to %s:%u: %s", r->host,
			       (unsigned)r->port, strerror(errno));
		bufferevent_free(r->bev);
		r->bev = NULL;
	}
	finish(r, UPSTREAM_UNREACHABLE);
}

/* Puts one resolved address through the guard, with local the machine's
 * own addresses; keeps it if it passes. */
static void consider(upstream_req_t *r, const struct sockaddr *sa, socklen_t len,
		     const struct policy_addrset *local)
{
	char text[INET6_ADDRSTRLEN];
	const void *bits;
	const char *rule = NULL;

	if (policy_addr_allowed_local(r->pol, sa, local, &rule)) {
		if (r->naddrs < UPSTREAM_MAX_ADDRS && len <= sizeof(r->addrs[0])) {
			memcpy(&r->addrs[r->naddrs], sa, len);
			r->addr_len[r->naddrs++] = len;
		}
		return;
	}
	if (r->rule != NULL)
		return; /* explain the first refusal only */
	bits = sa->sa_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
					 : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
	if (inet_ntop(sa->sa_family, bits, text, sizeof(text)) == NULL)
		(void)snprintf(text, sizeof(text), "?");
	r->rule = rule != NULL ? rule : "deniedResolvedAddresses";
	if (policy_addr_classify(sa) != ADDR_PUBLIC)
		(void)snprintf(r->detail, sizeof(r->detail), "%s resolves to %s (%s)", r->host, text,
			       policy_addr_class_name(policy_addr_classify(sa)));
	else if (policy_addr_is_local(sa, local))
		(void)snprintf(r->detail, sizeof(r->detail), "%s resolves to %s (this machine)",
			       r->host, text);
	else
		(void)snprintf(r->detail, sizeof(r->detail), "%s resolves to %s", r->host, text);
}

/* Connect timer replaces the resolve timer once addresses are known. */
static void start_connecting(upstream_req_t *r)
{
	struct timeval tv = {PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS / 1000,
			     (PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS % 1000) * 1000};

	if (r->naddrs == 0) {
		finish(r, r->rule != NULL ? UPSTREAM_DENIED : UPSTREAM_UNRESOLVED);
		return;
	}
	if (event_add(r->timer, &tv) < 0) {
		(void)snprintf(r->detail, sizeof(r->detail), "cannot arm the connect timer");
		finish(r, UPSTREAM_UNREACHABLE);
		return;
	}
	try_next(r);
}

static void gai_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	upstream_req_t *r = arg;
	const struct policy_addrset *local;
	struct evutil_addrinfo *ai;

	if (err == EVUTIL_EAI_CANCEL || r->cb == NULL || r->gai == NULL) {
		/* Cancelled (by the timer or upstream_cancel): nothing to do. */
		if (res != NULL)
			evutil_freeaddrinfo(res);
		return;
	}
	r->gai = NULL;
	if (err != 0) {
		(void)snprintf(r->detail, sizeof(r->detail), "resolving %s: %s", r->host,
			       evutil_gai_strerror(err));
		if (res != NULL)
			evutil_freeaddrinfo(res);
		finish(r, UPSTREAM_UNRESOLVED);
		return;
	}
	/* The machine's addresses as they are now, not when the lookup began. */
	local = localaddr_get(r->local);
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			consider(r, ai->ai_addr, (socklen_t)ai->ai_addrlen, local);
	if (res != NULL)
		evutil_freeaddrinfo(res);
	if (r->naddrs == 0 && r->rule == NULL)
		(void)snprintf(r->detail, sizeof(r->detail), "%s has no address", r->host);
	start_connecting(r);
}

upstream_req_t *upstream_connect(struct event_base *base, struct evdns_base *dns,
				 localaddr_t *local, const policy_t *pol, const char *host,
				 uint16_t port, bool is_ip, upstream_cb cb, void *arg)
{
	struct timeval dns_tv = {PASSAVANT_DNS_TIMEOUT_MS / 1000, (PASSAVANT_DNS_TIMEOUT_MS % 1000) * 1000};
	struct evutil_addrinfo hints;
	struct evdns_getaddrinfo_request *g;
	upstream_req_t *r;
	char service[8];

	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->base = base;
	r->dns = dns;
	r->local = local;
	r->pol = pol;
	(void)snprintf(r->host, sizeof(r->host), "%s", host);
	r->port = port;
	r->cb = cb;
	r->arg = arg;
	r->timer = evtimer_new(base, timer_cb, r);
	r->done = event_new(base, -1, 0, done_cb, r);
	if (r->timer == NULL || r->done == NULL)
		goto fail;
	if (is_ip) {
		struct sockaddr_in6 s6;
		struct sockaddr_in s4;

		/* Literals are never resolved; they still meet the guard. */
		memset(&s6, 0, sizeof(s6));
		memset(&s4, 0, sizeof(s4));
		if (inet_pton(AF_INET6, host, &s6.sin6_addr) == 1) {
			s6.sin6_family = AF_INET6;
			s6.sin6_port = htons(port);
			consider(r, (struct sockaddr *)&s6, sizeof(s6), localaddr_get(local));
		} else if (inet_pton(AF_INET, host, &s4.sin_addr) == 1) {
			s4.sin_family = AF_INET;
			s4.sin_port = htons(port);
			consider(r, (struct sockaddr *)&s4, sizeof(s4), localaddr_get(local));
		} else {
			(void)snprintf(r->detail, sizeof(r->detail), "%s is not an IP address", host);
		}
		start_connecting(r);
		return r;
	}
	if (event_add(r->timer, &dns_tv) < 0)
		goto fail;
	/* The resolver's state outlives this dial, and libevent 2.1 frees a
	 * string it made for a scoped IPv6 literal with free(), not with its
	 * own allocator: never in the upstream zone (zone.h). */
	(void)zone_select(false);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = EVUTIL_AI_NUMERICSERV;
	(void)snprintf(service, sizeof(service), "%u", (unsigned)port);
	/* Set gai before the call: evdns may answer (hosts file, cache)
	 * from inside evdns_getaddrinfo(), and then returns NULL. */
	r->gai = (struct evdns_getaddrinfo_request *)1;
	g = evdns_getaddrinfo(dns, host, service, &hints, gai_cb, r);
	if (r->gai != NULL)
		r->gai = g;
	return r;
fail:
	if (r->timer != NULL)
		event_free(r->timer);
	if (r->done != NULL)
		event_free(r->done);
	free(r);
	return NULL;
}

void upstream_cancel(upstream_req_t *r)
{
	if (r == NULL)
		return;
	req_free(r);
}

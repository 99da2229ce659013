/*
 * localaddr.c - this machine's own addresses, kept current (localaddr.h).
 *
 * Why a notice alone is enough: the kernel queues an RTM_NEWADDR or
 * RTM_DELADDR message on every subscribed socket from inside the call that
 * changes the address, before that call returns. Anything that changed
 * an address before a request arrived has therefore queued its notice by
 * then, and localaddr_get() sees it with one non-blocking recv. The
 * messages are not parsed: any of them means "re-read". A full receive
 * queue (ENOBUFS: notices were lost) means the same.
 */
#include "localaddr.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

struct localaddr {
	int fd;                     /* NETLINK_ROUTE, address groups, non-blocking */
	struct event *ev;           /* read event on fd */
	struct policy_ipaddr *v;    /* the current set (owned) */
	struct policy_addrset set;  /* view of v handed out */
	bool stale;                 /* the last re-read failed: try again */
};

/*
 * Reads every IPv4 and IPv6 address of every interface (up or down:
 * the kernel still answers on a down interface's address locally) into a
 * new array that replaces the set. 0, or -1 with errno set and the old
 * set kept.
 */
static int reread(localaddr_t *la)
{
	struct ifaddrs *all, *ifa;
	struct policy_ipaddr *v;
	size_t n = 0;

	if (getifaddrs(&all) < 0)
		return -1;
	for (ifa = all; ifa != NULL; ifa = ifa->ifa_next)
		if (ifa->ifa_addr != NULL &&
		    (ifa->ifa_addr->sa_family == AF_INET || ifa->ifa_addr->sa_family == AF_INET6))
			n++;
	v = calloc(n > 0 ? n : 1, sizeof(*v));
	if (v == NULL) {
		freeifaddrs(all);
		errno = ENOMEM;
		return -1;
	}
	n = 0;
	for (ifa = all; ifa != NULL; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET) {
			v[n].family = AF_INET;
			memcpy(v[n++].addr, &((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr, 4);
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			v[n].family = AF_INET6;
			memcpy(v[n++].addr, &((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr,
			       16);
		}
	}
	freeifaddrs(all);
	free(la->v);
	la->v = v;
	la->set.v = v;
	la->set.n = n;
	return 0;
}

/* Takes every queued notice; re-reads when there was one (or a lost one),
 * or when the previous re-read failed. */
static void refresh(localaddr_t *la)
{
	char buf[8192];
	bool changed = la->stale;
	ssize_t r;

	for (;;) {
		r = recv(la->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r > 0 || (r < 0 && errno == ENOBUFS)) {
			changed = true;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			/* Cannot tell whether something changed: assume so. */
			changed = true;
		}
		break;
	}
	if (!changed)
		return;
	if (reread(la) < 0) {
		if (!la->stale)
			log_warn("cannot re-read this machine's addresses (getifaddrs); the guard "
				 "keeps the previous set and tries again on the next request");
		la->stale = true;
		return;
	}
	la->stale = false;
}

static void notice_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	refresh(arg);
}

localaddr_t *localaddr_new(struct event_base *base, char *err, size_t errlen)
{
	struct sockaddr_nl snl;
	localaddr_t *la;
	int saved;

	la = calloc(1, sizeof(*la));
	if (la == NULL) {
		(void)snprintf(err, errlen, "cannot watch this machine's addresses: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	la->fd = -1;
	/* Subscribe before the first read: a change between the two is then
	 * a queued notice, not a missed one. */
	la->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (la->fd < 0)
		goto fail_sys;
	memset(&snl, 0, sizeof(snl));
	snl.nl_family = AF_NETLINK;
	snl.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(la->fd, (struct sockaddr *)&snl, sizeof(snl)) < 0)
		goto fail_sys;
	if (reread(la) < 0)
		goto fail_sys;
	la->ev = event_new(base, la->fd, EV_READ | EV_PERSIST, notice_cb, la);
	if (la->ev == NULL || event_add(la->ev, NULL) < 0) {
		(void)snprintf(err, errlen, "cannot watch this machine's addresses: cannot register the "
			       "netlink socket with the event loop");
		localaddr_free(la);
		errno = ENOMEM;
		return NULL;
	}
	return la;
fail_sys:
	saved = errno;
	(void)snprintf(err, errlen,
		       "cannot read this machine's addresses (netlink route socket, getifaddrs): %s; "
		       "without them the proxy could reach services on this machine, so it does not start",
		       strerror(saved));
	localaddr_free(la);
	errno = saved;
	return NULL;
}

void localaddr_free(localaddr_t *la)
{
	if (la == NULL)
		return;
	if (la->ev != NULL)
		event_free(la->ev);
	if (la->fd >= 0)
		(void)close(la->fd);
	free(la->v);
	free(la);
}

const struct policy_addrset *localaddr_get(localaddr_t *la)
{
	refresh(la);
	return &la->set;
}

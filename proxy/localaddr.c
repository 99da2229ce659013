/*
 * localaddr.c - this machine's own addresses, kept current (localaddr.h).
 *
 * The set: every interface address (getifaddrs(), up or down), and every
 * route of type local or anycast (the kernel's local table: AnyIP
 * prefixes, IPv6 anycast addresses). Together, every destination the
 * kernel delivers to this machine rather than sending it out.
 *
 * Why a notice is enough: the kernel queues an RTM_NEWADDR/RTM_DELADDR or
 * RTM_NEWROUTE/RTM_DELROUTE message on every subscribed socket from inside
 * the call that makes the change, before that call returns. Anything that
 * changed an address before a request arrived has therefore queued its
 * notice by then, and localaddr_get() sees it with one non-blocking recv.
 * The messages are only looked at for their kind; a relevant one means
 * "re-read everything". A full receive queue (ENOBUFS: notices were lost)
 * means the same.
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
#include <sys/time.h>
#include <unistd.h>

#include "log.h"

struct localaddr {
	int fd;                     /* NETLINK_ROUTE, address groups, non-blocking */
	struct event *ev;           /* read event on fd */
	struct policy_ipaddr *v;    /* the current set (owned) */
	struct policy_addrset set;  /* view of v handed out */
	bool stale;                 /* the last re-read failed: try again */
};

/* A growing array of entries. */
struct entries {
	struct policy_ipaddr *v;
	size_t n, cap;
};

static int push(struct entries *e, int family, const void *addr, unsigned prefix)
{
	struct policy_ipaddr *nv;

	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;

		nv = realloc(e->v, cap * sizeof(*nv));
		if (nv == NULL) {
			errno = ENOMEM;
			return -1;
		}
		e->v = nv;
		e->cap = cap;
	}
	memset(&e->v[e->n], 0, sizeof(e->v[0]));
	e->v[e->n].family = family;
	memcpy(e->v[e->n].addr, addr, family == AF_INET ? 4 : 16);
	e->v[e->n].prefix = prefix;
	e->n++;
	return 0;
}

/* Every IPv4 and IPv6 address of every interface, up or down. */
static int read_ifaddrs(struct entries *e)
{
	struct ifaddrs *all, *ifa;
	int rc = 0;

	if (getifaddrs(&all) < 0)
		return -1;
	for (ifa = all; ifa != NULL && rc == 0; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET)
			rc = push(e, AF_INET,
				  &((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr, 32);
		else if (ifa->ifa_addr->sa_family == AF_INET6)
			rc = push(e, AF_INET6,
				  &((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr, 128);
	}
	freeifaddrs(all);
	return rc;
}

/* Whether a route message puts its destination in this machine: a route
 * of type local or anycast (in the local table, where the kernel keeps
 * them). */
static bool route_is_local(const struct rtmsg *rtm)
{
	return rtm->rtm_type == RTN_LOCAL || rtm->rtm_type == RTN_ANYCAST;
}

/* Adds the destination of one RTM_NEWROUTE message if it is local. */
static int add_route(struct entries *e, const struct nlmsghdr *nh)
{
	const struct rtmsg *rtm = NLMSG_DATA(nh);
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*rtm));
	const struct rtattr *rta;
	uint8_t dst[16] = { 0 };
	unsigned max;

	if (len < 0 || !route_is_local(rtm))
		return 0;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return 0;
	max = rtm->rtm_family == AF_INET ? 32 : 128;
	if (rtm->rtm_dst_len > max)
		return 0;
	for (rta = RTM_RTA(rtm); RTA_OK(rta, len); rta = RTA_NEXT(rta, len))
		if (rta->rta_type == RTA_DST && RTA_PAYLOAD(rta) >= max / 8)
			memcpy(dst, RTA_DATA(rta), max / 8);
	/* No RTA_DST: the default route, 0/0. A "local default" makes every
	 * address this machine's; so be it. */
	return push(e, rtm->rtm_family, dst, rtm->rtm_dst_len);
}

/*
 * The routes of type local and anycast of one family, from a dump of the
 * routing tables: AnyIP prefixes (`ip route add local 10.0.0.0/8 dev lo`),
 * no interface's address but delivered here all the same, and IPv6
 * anycast addresses (the subnet-router address of each prefix when
 * forwarding is on), which the kernel counts as its own (TCP was not seen
 * to reach a listener through one; refused anyway, nothing is lost). A short-lived blocking socket: the kernel
 * answers a dump at once.
 */
static int read_local_routes(struct entries *e, int family)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rtm;
	} req;
	struct timeval tv = { 2, 0 };
	union {
		char buf[16384];
		struct nlmsghdr align;
	} u;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nh;
	int fd, one = 1, rc = -1, saved;
	ssize_t n;
	bool done = false;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	/* Strict checking lets the kernel filter the dump by table (4.20+);
	 * without it every table comes and the type test filters. */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		goto out;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.rtm));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.rtm.rtm_family = (unsigned char)family;
	req.rtm.rtm_table = RT_TABLE_LOCAL;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		goto out;
	while (!done) {
		n = recv(fd, u.buf, sizeof(u.buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto out;
		}
		for (nh = &u.align; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *ne = NLMSG_DATA(nh);

				errno = ne->error < 0 ? -ne->error : EIO;
				goto out;
			}
			if (nh->nlmsg_type == RTM_NEWROUTE && add_route(e, nh) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	saved = errno;
	(void)close(fd);
	errno = saved;
	return rc;
}

/*
 * Reads the whole set (interface addresses, then local and anycast routes
 * of both families) into a new array that replaces the current one. 0, or
 * -1 with errno set and the old set kept.
 */
static int reread(localaddr_t *la)
{
	struct entries e = { NULL, 0, 0 };

	if (read_ifaddrs(&e) < 0 || read_local_routes(&e, AF_INET) < 0 ||
	    read_local_routes(&e, AF_INET6) < 0) {
		int saved = errno;

		free(e.v);
		errno = saved;
		return -1;
	}
	free(la->v);
	la->v = e.v;
	la->set.v = e.v;
	la->set.n = e.n;
	return 0;
}

/*
 * Whether a batch of notices says the set may have changed: an address
 * added or removed, or a route of type local or anycast (or any route in
 * the local table) added or removed. Other route changes (a router's
 * table churning) do not cost a re-read.
 */
static bool notices_matter(const void *buf, ssize_t n)
{
	const struct nlmsghdr *nh;

	for (nh = buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
		if (nh->nlmsg_type == RTM_NEWADDR || nh->nlmsg_type == RTM_DELADDR)
			return true;
		if (nh->nlmsg_type == RTM_NEWROUTE || nh->nlmsg_type == RTM_DELROUTE) {
			const struct rtmsg *rtm = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)) || route_is_local(rtm) ||
			    rtm->rtm_table == RT_TABLE_LOCAL)
				return true;
		}
		if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_OVERRUN)
			return true;
	}
	return false;
}

/* Takes every queued notice; re-reads when one mattered (or notices were
 * lost), or when the previous re-read failed. */
static void refresh(localaddr_t *la)
{
	union {
		char buf[8192];
		struct nlmsghdr align;
	} u;
	bool changed = la->stale;
	ssize_t r;

	for (;;) {
		r = recv(la->fd, u.buf, sizeof(u.buf), MSG_DONTWAIT);
		if (r > 0) {
			/* A full buffer may have cut a message: assume it mattered. */
			if ((size_t)r >= sizeof(u.buf) || notices_matter(u.buf, r))
				changed = true;
			continue;
		}
		if (r < 0 && errno == ENOBUFS) {
			changed = true; /* the queue overflowed: notices were lost */
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			changed = true; /* cannot tell: assume so */
		break;
	}
	if (!changed)
		return;
	if (reread(la) < 0) {
		if (!la->stale)
			log_warn("cannot re-read this machine's addresses (getifaddrs, local routes); "
				 "the guard keeps the previous set and tries again on the next request");
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
	snl.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
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
		       "without them the proxy could reach services on this machine, so it does not "
		       "start; run it where AF_NETLINK/NETLINK_ROUTE sockets are allowed",
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

/*
 * netns.c - the sandbox's network: loopback, the proxy listener and, with
 * interception, the address, routes, listeners and resolver socket that
 * bring every connection of the command to the proxy.
 *
 * A new network namespace has only "lo", and it is down. We bring it up
 * with SIOCSIFFLAGS (one ioctl; rtnetlink would need a message builder for
 * the same bit) and create the one socket the command may reach: TCP on
 * 127.0.0.1:port. The socket belongs to this namespace for its whole life,
 * so the proxy outside, which receives it over SCM_RIGHTS, accepts the
 * command's connections without any bridge (SPEC §7).
 *
 * Interception (docs/sandbox.md "Network") adds, still with ioctls only
 * (this runs in the child, which allocates nothing): 198.18.0.1/32 on lo
 * (getaddrinfo's AI_ADDRCONFIG ignores loopback addresses, so without a
 * non-loopback IPv4 address it would return no IPv4 at all), a default
 * route via lo for IPv4 and IPv6 (so that connect() to any address gets
 * as far as the nat hook instead of ENETUNREACH), the interception
 * listeners on 127.0.0.1 and [::1] and the resolver's UDP socket on
 * 127.0.0.1:53. The nftables rule set that redirects to those listeners
 * is installed from outside (nft.c), through the namespace fds opened
 * here.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/defaults.h"
#include "sandbox/fdpass.h"
#include "sandbox/sbx_int.h"

/* Sets IFF_UP on "lo" through fd (an AF_INET socket). 0 or -1 with err. */
static int lo_up(int fd, char *err, size_t errlen)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	return 0;
fail:
	errbuf_set_errno(err, errlen, errno, "cannot bring up loopback in the network namespace");
	return -1;
}

/*
 * Adds PASSAVANT_SANDBOX_V4/32 to lo as the alias "lo:pv". SIOCSIFADDR on
 * an alias adds an address beside 127.0.0.1 instead of replacing it; it
 * takes the old class netmask (/24 here), which SIOCSIFNETMASK then
 * narrows to /32 so that the rest of 198.18.0.0/15 (the resolver's
 * synthetic addresses) follows the default route like any address.
 */
static int lo_add_addr(int fd, char *err, size_t errlen)
{
	struct ifreq ifr;
	struct sockaddr_in sin;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo:pv", IFNAMSIZ - 1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(PASSAVANT_SANDBOX_V4);
	memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
	if (ioctl(fd, SIOCSIFADDR, &ifr) < 0)
		goto fail;
	sin.sin_addr.s_addr = htonl(0xffffffffu);
	memcpy(&ifr.ifr_netmask, &sin, sizeof(sin));
	if (ioctl(fd, SIOCSIFNETMASK, &ifr) < 0)
		goto fail;
	return 0;
fail:
	errbuf_set_errno(err, errlen, errno,
			 "cannot add 198.18.0.1 to loopback in the sandbox's network namespace");
	errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
	return -1;
}

/* The IPv4 default route via lo (a link route: no gateway). 0 or -1. */
static int route4_default(int fd, char *err, size_t errlen)
{
	char dev[] = "lo";
	struct sockaddr_in any;
	struct rtentry rt;

	memset(&rt, 0, sizeof(rt));
	memset(&any, 0, sizeof(any));
	any.sin_family = AF_INET;
	memcpy(&rt.rt_dst, &any, sizeof(any));
	memcpy(&rt.rt_genmask, &any, sizeof(any));
	memcpy(&rt.rt_gateway, &any, sizeof(any));
	rt.rt_flags = RTF_UP;
	rt.rt_dev = dev;
	if (ioctl(fd, SIOCADDRT, &rt) == 0)
		return 0;
	errbuf_set_errno(err, errlen, errno,
			 "cannot add the IPv4 default route via loopback in the sandbox's network namespace");
	errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
	return -1;
}

/* The IPv6 default route via lo, through fd6 (an AF_INET6 socket). */
static int route6_default(int fd6, char *err, size_t errlen)
{
	struct in6_rtmsg rt;
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd6, SIOCGIFINDEX, &ifr) < 0)
		goto fail;
	memset(&rt, 0, sizeof(rt));
	rt.rtmsg_dst = in6addr_any;
	rt.rtmsg_dst_len = 0;
	rt.rtmsg_ifindex = ifr.ifr_ifindex;
	rt.rtmsg_metric = 1;
	rt.rtmsg_flags = RTF_UP;
	if (ioctl(fd6, SIOCADDRT, &rt) == 0)
		return 0;
fail:
	errbuf_set_errno(err, errlen, errno,
			 "cannot add the IPv6 default route via loopback in the sandbox's network namespace");
	errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
	return -1;
}

/*
 * A CLOEXEC socket of family and type bound to loopback:port (127.0.0.1,
 * or ::1 with IPV6_V6ONLY), listening when it is a stream socket. what
 * names it in errors ("the proxy listener"). Returns the fd, or -1 with
 * errno kept and err set.
 */
static int loopback_socket(int family, int type, uint16_t port, const char *what, char *err,
			   size_t errlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const char *addr = family == AF_INET ? "127.0.0.1" : "[::1]";
	socklen_t len;
	int fd, saved, one = 1;

	fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		saved = errno;
		errbuf_set_errno(err, errlen, saved, "cannot create %s socket", what);
		errno = saved;
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) {
			saved = errno;
			errbuf_set_errno(err, errlen, saved, "cannot make %s IPv6-only", what);
			goto fail;
		}
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		saved = errno;
		errbuf_set_errno(err, errlen, saved, "cannot bind %s to %s:%u in the sandbox", what, addr,
				 (unsigned)port);
		goto fail;
	}
	if (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0) {
		saved = errno;
		errbuf_set_errno(err, errlen, saved, "cannot listen with %s on %s:%u in the sandbox", what,
				 addr, (unsigned)port);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	errno = saved;
	return -1;
}

/* Opens path (/proc/self/ns/...) for the launcher's nftables helper. */
static int open_ns(const char *path, char *err, size_t errlen)
{
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s to install the interception rules",
				 path);
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
	}
	return fd;
}

/*
 * Interception's part, with fd an AF_INET control socket: the IPv6
 * listener first (its absence decides whether there is IPv6 to route),
 * the address, the routes, the IPv4 listener, the resolver socket, the
 * namespaces. Fills out; 0 or -1 with err set (out's fds are closed by the
 * caller).
 */
static int intercept_setup(const struct sbx_plan *pl, int fd, struct fdpass_set *out, char *err,
			   size_t errlen)
{
	int fd6;

	/* No IPv6 in this kernel (EAFNOSUPPORT) or on lo (EADDRNOTAVAIL:
	 * disable_ipv6): nothing of the command's can use IPv6 either, so
	 * there is nothing to route or redirect; skipped quietly. */
	fd6 = loopback_socket(AF_INET6, SOCK_STREAM, pl->icpt_port, "the IPv6 interception listener",
			      err, errlen);
	if (fd6 < 0 && errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL) {
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
		return -1;
	}
	out->fd[FDPASS_INTERCEPT6] = fd6;
	if (lo_add_addr(fd, err, errlen) < 0 || route4_default(fd, err, errlen) < 0)
		return -1;
	if (fd6 >= 0 && route6_default(fd6, err, errlen) < 0)
		return -1;
	out->fd[FDPASS_INTERCEPT4] = loopback_socket(AF_INET, SOCK_STREAM, pl->icpt_port,
						     "the interception listener", err, errlen);
	if (out->fd[FDPASS_INTERCEPT4] < 0) {
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
		return -1;
	}
	out->fd[FDPASS_RESOLVER] = loopback_socket(AF_INET, SOCK_DGRAM, PASSAVANT_DNS_PORT,
						   "the resolver", err, errlen);
	if (out->fd[FDPASS_RESOLVER] < 0) {
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
		return -1;
	}
	out->fd[FDPASS_USERNS] = open_ns("/proc/self/ns/user", err, errlen);
	if (out->fd[FDPASS_USERNS] < 0)
		return -1;
	out->fd[FDPASS_NETNS] = open_ns("/proc/self/ns/net", err, errlen);
	return out->fd[FDPASS_NETNS] < 0 ? -1 : 0;
}

int sbx_netns_setup(const struct sbx_plan *pl, struct fdpass_set *out, char *err, size_t errlen)
{
	int fd, rc = -1;

	fdpass_set_init(out);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open a socket to configure loopback");
		return -1;
	}
	if (lo_up(fd, err, errlen) < 0)
		goto out;
	out->fd[FDPASS_LISTENER] = loopback_socket(AF_INET, SOCK_STREAM, pl->port, "the proxy listener",
						   err, errlen);
	if (out->fd[FDPASS_LISTENER] < 0)
		goto out;
	if (pl->intercept && intercept_setup(pl, fd, out, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	close(fd);
	if (rc < 0)
		fdpass_set_close(out);
	return rc;
}

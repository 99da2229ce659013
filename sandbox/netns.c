/*
 * netns.c - the sandbox's network: loopback and the proxy listener.
 *
 * A new network namespace has only "lo", and it is down. We bring it up
 * with SIOCSIFFLAGS (one ioctl; rtnetlink would need a message builder for
 * the same bit) and create the one socket the command may reach: TCP on
 * 127.0.0.1:port. The socket belongs to this namespace for its whole life,
 * so the proxy outside, which receives it over SCM_RIGHTS, accepts the
 * command's connections without any bridge (SPEC §7).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/* Sets IFF_UP on "lo". 0 or -1 with err set. */
static int lo_up(char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd, saved;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open a socket to configure loopback");
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	saved = errno;
	close(fd);
	errbuf_set_errno(err, errlen, saved, "cannot bring up loopback in the network namespace");
	return -1;
}

int sbx_netns_setup(uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sin;
	int fd, saved;

	if (lo_up(err, errlen) < 0)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create the proxy listener socket");
		return -1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		saved = errno;
		close(fd);
		errbuf_set_errno(err, errlen, saved, "cannot bind 127.0.0.1:%u in the sandbox", (unsigned)port);
		return -1;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		saved = errno;
		close(fd);
		errbuf_set_errno(err, errlen, saved, "cannot listen on 127.0.0.1:%u in the sandbox", (unsigned)port);
		return -1;
	}
	return fd;
}

/*
 * fdpass.c - SCM_RIGHTS send and receive of the sandbox's sockets and
 * namespaces, one message with one kind byte per fd.
 *
 * The receiving side is the one that must distrust: the sender is the
 * sandbox child, which runs our code, but a confused or compromised
 * sender must not make the proxy adopt something other than what each
 * kind promises (a loopback listener, a loopback UDP socket, a namespace),
 * nor leak fds into the proxy (nsjail util.cc does the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/fdpass.h"

/* Room for more fds than kinds: a message with extra ones is refused, but
 * we must receive them all to close them (a truncated cmsg loses fds into
 * limbo). Data gets the same slack, so that extra kind bytes are seen. */
#define FDPASS_MAX_FDS (2 * FDPASS_NKINDS)

/* The kind bytes on the wire, indexed by enum fdpass_kind. */
static const char kind_byte[FDPASS_NKINDS] = { 'L', '4', '6', 'D', 'U', 'N' };

void fdpass_set_init(struct fdpass_set *set)
{
	for (size_t k = 0; k < FDPASS_NKINDS; k++)
		set->fd[k] = -1;
}

void fdpass_set_close(struct fdpass_set *set)
{
	for (size_t k = 0; k < FDPASS_NKINDS; k++) {
		if (set->fd[k] >= 0)
			close(set->fd[k]);
		set->fd[k] = -1;
	}
}

int fdpass_send(int sock, const struct fdpass_set *set)
{
	char kinds[FDPASS_NKINDS];
	int fds[FDPASS_NKINDS];
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(FDPASS_NKINDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
	struct cmsghdr *c;
	size_t n = 0;
	ssize_t sent;

	for (size_t k = 0; k < FDPASS_NKINDS; k++)
		if (set->fd[k] >= 0) {
			kinds[n] = kind_byte[k];
			fds[n++] = set->fd[k];
		}
	if (n == 0) {
		errno = EINVAL;
		return -1;
	}
	iov.iov_base = kinds;
	iov.iov_len = n;
	memset(&u, 0, sizeof(u));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	do
		sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -1;
	if ((size_t)sent != n) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

/* An int socket option, or -1 (errno: ENOTSOCK for a non-socket). */
static int sockopt(int fd, int level, int name, int *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(fd, level, name, v, &len);
}

/*
 * Checks that fd is a socket of family and type, listening or not as
 * asked, bound to a port on loopback (127/8, or ::1).
 * 0 or -1 (errno: ENOTSOCK, EINVAL).
 */
static int check_socket(int fd, int family, int type, int listening)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;
	socklen_t len = sizeof(ss);
	int v;

	if (sockopt(fd, SOL_SOCKET, SO_DOMAIN, &v) < 0)
		return -1; /* ENOTSOCK for a non-socket */
	if (v != family)
		goto bad;
	if (sockopt(fd, SOL_SOCKET, SO_TYPE, &v) < 0)
		return -1;
	if (v != type)
		goto bad;
	if (sockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v) < 0)
		return -1;
	if (v != (type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
		goto bad;
	if (sockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v) < 0)
		return -1;
	if (v != listening)
		goto bad;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (family == AF_INET) {
		if (ss.ss_family != AF_INET || sin->sin_port == 0 ||
		    (ntohl(sin->sin_addr.s_addr) >> 24) != 127)
			goto bad;
		return 0;
	}
	/* Bound to ::1 it is IPv6-only whatever IPV6_V6ONLY said: the
	 * kernel sets that for any specific, non-mapped address. */
	if (ss.ss_family != AF_INET6 || sin6->sin6_port == 0 ||
	    !IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Checks that fd is a namespace of type nstype (CLONE_NEW*). 0 or -1. */
static int check_ns(int fd, int nstype)
{
	/* NS_GET_NSTYPE (Linux 4.11): ENOTTY on anything but an nsfs file. */
	if (ioctl(fd, NS_GET_NSTYPE) != nstype) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Checks fd against kind k; sockets are made non-blocking. 0 or -1. */
static int check_kind(int fd, size_t k)
{
	int rc, flags;

	switch ((enum fdpass_kind)k) {
	case FDPASS_LISTENER:
	case FDPASS_INTERCEPT4:
		rc = check_socket(fd, AF_INET, SOCK_STREAM, 1);
		break;
	case FDPASS_INTERCEPT6:
		rc = check_socket(fd, AF_INET6, SOCK_STREAM, 1);
		break;
	case FDPASS_RESOLVER:
		rc = check_socket(fd, AF_INET, SOCK_DGRAM, 0);
		break;
	case FDPASS_USERNS:
		return check_ns(fd, CLONE_NEWUSER);
	case FDPASS_NETNS:
		return check_ns(fd, CLONE_NEWNET);
	case FDPASS_NKINDS:
	default:
		errno = EBADMSG;
		return -1;
	}
	if (rc < 0)
		return -1;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;
	return 0;
}

/* The kind a wire byte names, or FDPASS_NKINDS. */
static size_t kind_of(char b)
{
	size_t k;

	for (k = 0; k < FDPASS_NKINDS; k++)
		if (kind_byte[k] == b)
			break;
	return k;
}

int fdpass_recv(int sock, struct fdpass_set *out)
{
	char kinds[FDPASS_MAX_FDS];
	struct iovec iov = { .iov_base = kinds, .iov_len = sizeof(kinds) };
	union {
		char buf[CMSG_SPACE(FDPASS_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
	struct cmsghdr *c;
	int fds[FDPASS_MAX_FDS];
	size_t nfds = 0, i, k, m;
	int saved;
	ssize_t n;

	fdpass_set_init(out);
	memset(&u, 0, sizeof(u));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	/* MSG_CMSG_CLOEXEC: no window where an exec elsewhere in the
	 * process would inherit the received fds. */
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		m = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < m && nfds < FDPASS_MAX_FDS; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (n == 0 && nfds == 0) {
		errno = ECONNRESET;
		return -1;
	}
	saved = EBADMSG;
	if (nfds == 0 || (size_t)n != nfds || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) != 0)
		goto fail;
	for (i = 0; i < nfds; i++) {
		k = kind_of(kinds[i]);
		if (k == FDPASS_NKINDS || out->fd[k] >= 0)
			goto fail; /* unknown or repeated: EBADMSG */
		out->fd[k] = fds[i];
	}
	for (k = 0; k < FDPASS_NKINDS; k++)
		if (out->fd[k] >= 0 && check_kind(out->fd[k], k) < 0) {
			saved = errno;
			goto fail;
		}
	return 0;
fail:
	fdpass_set_init(out);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	errno = saved;
	return -1;
}

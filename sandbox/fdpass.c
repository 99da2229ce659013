/*
 * fdpass.c - SCM_RIGHTS send and receive of one listening socket.
 *
 * The receiving side is the one that must distrust: the sender is the
 * sandbox child, which runs our code, but a confused or compromised
 * sender must not make the proxy adopt something other than a listening
 * TCP socket, nor leak fds into the proxy (nsjail util.cc does the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/fdpass.h"

/* Room for a few fds: a message with more than one is refused, but we must
 * receive them all to close them (a truncated cmsg loses fds into limbo). */
#define FDPASS_MAX_FDS 8

int fdpass_send(int sock, int fd)
{
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n != 1) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

/* Checks that fd is a listening AF_INET stream socket. 0 or -1 (errno). */
static int check_listener(int fd)
{
	int v;
	socklen_t len;

	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0)
		return -1; /* ENOTSOCK for a non-socket */
	if (v != AF_INET) {
		errno = EINVAL;
		return -1;
	}
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return -1;
	if (v != SOCK_STREAM) {
		errno = EINVAL;
		return -1;
	}
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
		return -1;
	if (v != 1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int fdpass_recv(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(FDPASS_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
	struct cmsghdr *c;
	int fds[FDPASS_MAX_FDS];
	size_t nfds = 0, i, k;
	int flags, saved;
	ssize_t n;

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
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k && nfds < FDPASS_MAX_FDS; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (n == 0 && nfds == 0) {
		errno = ECONNRESET;
		return -1;
	}
	if (nfds != 1 || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) != 0) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		errno = EBADMSG;
		return -1;
	}
	if (check_listener(fds[0]) < 0)
		goto fail;
	flags = fcntl(fds[0], F_GETFL);
	if (flags < 0 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) < 0)
		goto fail;
	return fds[0];
fail:
	saved = errno;
	close(fds[0]);
	errno = saved;
	return -1;
}

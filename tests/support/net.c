/*
 * net.c - raw TCP client helpers and the bench relays' listener (net.h).
 */
#include "tests/support/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/proc.h"

int test_tcp_connect(const char *hostport, int timeout_ms)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	char host[64];
	uint16_t port;
	int fd, one = 1, err = 0;
	socklen_t errlen = sizeof(err);
	struct pollfd pfd;

	memset(&ss, 0, sizeof(ss));
	if (test_parse_hostport(hostport, host, sizeof(host), &port) < 0) {
		fprintf(stderr, "net: bad address '%s'\n", hostport);
		return -1;
	}
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		sslen = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		sslen = sizeof(struct sockaddr_in6);
	} else {
		fprintf(stderr, "net: '%s' is not an IP literal\n", host);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "net: socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&ss, sslen) < 0) {
		if (errno != EINPROGRESS) {
			fprintf(stderr, "net: connect %s: %s\n", hostport, strerror(errno));
			close(fd);
			return -1;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, timeout_ms) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0 || err != 0) {
			fprintf(stderr, "net: connect %s: %s\n", hostport,
				err ? strerror(err) : "timed out");
			close(fd);
			return -1;
		}
	}
	if (fcntl(fd, F_SETFL, 0) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
		fprintf(stderr, "net: socket options: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int test_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

char *test_recv_until(int fd, const char *stop, int timeout_ms, size_t *len, bool *eof)
{
	long long deadline = test_mono_ms() + timeout_ms;
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);

	if (eof != NULL)
		*eof = false;
	if (buf == NULL)
		return NULL;
	buf[0] = '\0';
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - test_mono_ms();
		ssize_t r;

		if (stop != NULL && strstr(buf, stop) != NULL)
			break;
		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap * 2);

			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* An error (e.g. reset) ends the stream like end of file. */
			if (eof != NULL)
				*eof = true;
			break;
		}
		n += (size_t)r;
		buf[n] = '\0';
	}
	if (len != NULL)
		*len = n;
	return buf;
}

int test_listen(const char *spec, const char *who)
{
	struct sockaddr_storage at;
	socklen_t alen, bound = sizeof(at);
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&at;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&at;
	char shown[INET6_ADDRSTRLEN];
	int one = 1, fd;
	bool v6;

	if (test_parse_sockaddr(spec, true, &at, &alen) < 0) {
		fprintf(stderr, "%s: cannot listen on %s: not IP:PORT or [IPV6]:PORT\n", who, spec);
		return -1;
	}
	fd = socket(at.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&at, alen) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&at, &bound) < 0) {
		fprintf(stderr, "%s: cannot listen on %s: %s\n", who, spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	v6 = at.ss_family == AF_INET6;
	if (inet_ntop(at.ss_family, v6 ? (const void *)&a6->sin6_addr : (const void *)&a4->sin_addr, shown,
		      sizeof(shown)) == NULL ||
	    printf(v6 ? "listening on [%s]:%u\n" : "listening on %s:%u\n", shown,
		   (unsigned)ntohs(v6 ? a6->sin6_port : a4->sin_port)) < 0 ||
	    fflush(stdout) != 0) {
		fprintf(stderr, "%s: cannot print the address it listens on\n", who);
		close(fd);
		return -1;
	}
	return fd;
}

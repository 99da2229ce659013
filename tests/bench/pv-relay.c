/*
 * pv-relay - the floor of any user-space TCP proxy, for `make bench`.
 *
 *   pv-relay --listen IP:PORT --to IP:PORT      ([IPV6]:PORT for IPv6)
 *
 * Each accepted connection gets its own connection to --to, and bytes are
 * copied both ways with one recv() and one send() per readable event: no
 * parsing, no policy, no buffering beyond what a short send leaves over,
 * no event library. Whatever `make bench` measures through it is what the
 * kernel's loopback TCP costs for one extra hop on this machine; the
 * proxy's own overhead is the distance between its row and this one.
 *
 * Prints "listening on HOST:PORT" once ready. Either side's end of file or
 * error closes both (enough for keep-alive request/response traffic; this
 * is a measuring fixture, not a proxy). A short send parks the rest and
 * stops reading the other side until it is out (back-pressure), so memory
 * stays bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/net.h"
#include "tests/support/proc.h"

#define RELAY_CHUNK 65536
#define RELAY_EVENTS 64

struct side {
	int fd;
	struct side *peer;
	char *pend;             /* bytes a short send left over, or NULL */
	size_t plen, poff;
	struct pair *pair;      /* NULL for the listener */
};

struct pair {
	struct side a, b;       /* a: accepted client, b: connection to --to */
	struct pair *next_dead; /* closed in this batch of events, freed after it */
};

/* Reading unless the peer has bytes parked; writing while this side has. */
static int arm(int ep, struct side *s, int op)
{
	struct epoll_event ev = { .events = 0, .data.ptr = s };

	if (s->peer->pend == NULL)
		ev.events |= EPOLLIN;
	if (s->pend != NULL)
		ev.events |= EPOLLOUT;
	return epoll_ctl(ep, op, s->fd, &ev);
}

static void pair_free(struct pair *p)
{
	if (p->a.fd >= 0)
		close(p->a.fd);
	if (p->b.fd >= 0)
		close(p->b.fd);
	free(p->a.pend);
	free(p->b.pend);
	free(p);
}

/* Closes both sockets now (so epoll forgets them); later events of the
 * same batch may still point at the pair, so it is freed after the batch. */
static void pair_close(struct pair *p, struct pair **dead)
{
	close(p->a.fd);
	close(p->b.fd);
	p->a.fd = p->b.fd = -1;
	p->next_dead = *dead;
	*dead = p;
}

/* Sends what s has parked. Returns 0 (all out or more to wait for), -1 on error. */
static int flush_parked(int ep, struct side *s)
{
	while (s->poff < s->plen) {
		ssize_t n = send(s->fd, s->pend + s->poff, s->plen - s->poff, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -1;
		s->poff += (size_t)n;
	}
	free(s->pend);
	s->pend = NULL;
	s->plen = s->poff = 0;
	if (arm(ep, s, EPOLL_CTL_MOD) < 0 || arm(ep, s->peer, EPOLL_CTL_MOD) < 0)
		return -1;
	return 0;
}

/* One recv() from s, one send() to its peer; a short send parks the rest. */
static int relay_once(int ep, struct side *s, char *buf)
{
	struct side *d = s->peer;
	ssize_t r = recv(s->fd, buf, RELAY_CHUNK, 0);
	ssize_t n;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0)
		return -1;
	do {
		n = send(d->fd, buf, (size_t)r, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EAGAIN)
		return -1;
	if (n < 0)
		n = 0;
	if (n == r)
		return 0;
	d->plen = (size_t)(r - n);
	d->poff = 0;
	d->pend = malloc(d->plen);
	if (d->pend == NULL)
		return -1;
	memcpy(d->pend, buf + n, d->plen);
	if (arm(ep, d, EPOLL_CTL_MOD) < 0 || arm(ep, s, EPOLL_CTL_MOD) < 0)
		return -1;
	return 0;
}

static void accept_one(int ep, int ls, const struct sockaddr_storage *to, socklen_t tolen)
{
	int one = 1;
	struct pair *p;
	int c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int u;

	if (c < 0)
		return;
	/* Loopback: a blocking connect() answers at once. */
	u = socket(to->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u < 0 || connect(u, (const struct sockaddr *)to, tolen) < 0) {
		fprintf(stderr, "pv-relay: connect to the upstream: %s\n", strerror(errno));
		if (u >= 0)
			close(u);
		close(c);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL || setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
	    setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
	    fcntl(u, F_SETFL, O_NONBLOCK) < 0) {
		free(p);
		close(u);
		close(c);
		return;
	}
	p->a = (struct side){ .fd = c, .peer = &p->b, .pair = p };
	p->b = (struct side){ .fd = u, .peer = &p->a, .pair = p };
	if (arm(ep, &p->a, EPOLL_CTL_ADD) < 0 || arm(ep, &p->b, EPOLL_CTL_ADD) < 0)
		pair_free(p);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage to;
	socklen_t tolen;
	struct side listener = { .fd = -1 };
	struct epoll_event evs[RELAY_EVENTS], ev;
	static char buf[RELAY_CHUNK];
	const char *listen_s = NULL, *to_s = NULL;
	int ep, i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			listen_s = argv[i + 1];
		else if (strcmp(argv[i], "--to") == 0)
			to_s = argv[i + 1];
		else
			break;
	}
	if (i != argc || listen_s == NULL || to_s == NULL || test_parse_sockaddr(to_s, false, &to, &tolen) < 0) {
		fprintf(stderr, "usage: pv-relay --listen IP:PORT --to IP:PORT ([IPV6]:PORT)\n");
		return 2;
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return 1;
	listener.fd = test_listen(listen_s, "pv-relay");
	if (listener.fd < 0)
		return 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &listener };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, listener.fd, &ev) < 0) {
		fprintf(stderr, "pv-relay: epoll: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		int n = epoll_wait(ep, evs, RELAY_EVENTS, -1);
		struct pair *dead = NULL;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "pv-relay: epoll_wait: %s\n", strerror(errno));
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct side *s = evs[i].data.ptr;
			int rc = 0;

			if (s == &listener) {
				accept_one(ep, listener.fd, &to, tolen);
				continue;
			}
			if (s->fd < 0) /* closed by an earlier event of this batch */
				continue;
			if (evs[i].events & EPOLLOUT)
				rc = flush_parked(ep, s);
			/* hung up while the other way has bytes parked: nothing
			 * will read them, and the hang-up would be reported again */
			if (rc == 0 && (evs[i].events & (EPOLLHUP | EPOLLERR)) &&
			    s->peer->pend != NULL)
				rc = -1;
			if (rc == 0 && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
			    s->peer->pend == NULL)
				rc = relay_once(ep, s, buf);
			if (rc < 0)
				pair_close(s->pair, &dead);
		}
		while (dead != NULL) {
			struct pair *next = dead->next_dead;

			pair_free(dead);
			dead = next;
		}
	}
}

/*
 * pv-tlsrelay - the floor of a TLS-terminating proxy, for `make bench`.
 *
 *   pv-tlsrelay --listen IP:PORT --certs DIR
 *
 * Each accepted connection sends one CONNECT head naming IP:PORT; the relay
 * answers 200, completes a TLS handshake with the client (DIR/server.pem
 * and DIR/server.key) and, at the same time, one with that IP:PORT
 * (verified against DIR/ca.pem for that IP address). Then it
 * decrypts what either side sends and encrypts it for the other: one
 * SSL_read() and one SSL_write() per record, straight on the sockets
 * (OpenSSL's socket BIO, read-ahead: one read() for what has arrived),
 * level-triggered epoll, no parsing, no policy, no event library, no
 * buffer released while a connection is open.
 *
 * What `make bench` measures through it is what OpenSSL's record layer and
 * the kernel's loopback TCP cost for a terminated hop on this machine,
 * with the same TLS settings as passavant (suites and TLS 1.2 ciphers in
 * its order, no session tickets to the client): the distance between the
 * proxy's row and this one is the proxy's own. A measuring fixture, not a
 * proxy: no policy, no host names, either side's end closes both.
 *
 * Prints "listening on HOST:PORT" once ready. A write the peer's socket
 * does not take is parked and stops reading the other side until it is
 * out (back-pressure), so memory stays bounded. The client sends its
 * ClientHello after the 200 (as pv-load does): bytes behind the CONNECT
 * head in the same read are not kept. Either side's end or error closes
 * both at once (what is parked is dropped): no half-close.
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

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tests/support/net.h"
#include "tests/support/proc.h"

#define TR_RECORD 16384
#define TR_EVENTS 64
#define TR_HEAD_MAX 1024
#define TR_READ_AHEAD (4 * (TR_RECORD + 256))

/* passavant's order (ca/ca_int.h, CA_TLS13_SUITES and CA_TLS12_CIPHERS). */
#define TR_TLS13 "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"
#define TR_TLS12 "ECDHE+AESGCM+AES128:ECDHE+AESGCM:ECDHE+CHACHA20:ALL:!COMPLEMENTOFDEFAULT:!eNULL"

enum side_state { SIDE_HEAD, SIDE_HANDSHAKE, SIDE_OPEN };

struct side {
	int fd;
	SSL *ssl;
	enum side_state st;
	struct side *peer;
	struct pair *pair;      /* NULL for the listener */
	uint32_t armed;         /* the events epoll has for fd */
	uint32_t rwant;         /* what the last SSL_read() waits for, 0 before one */
	uint32_t wwant;         /* what the parked write waits for */
	uint32_t hwant;         /* what the handshake waits for */
	unsigned char *pend;    /* plaintext for this side a write left over */
	size_t plen;
	char head[TR_HEAD_MAX]; /* the CONNECT head (client side) */
	size_t hlen;
};

struct pair {
	struct side a, b;       /* a: the client, b: the upstream */
	struct pair *next_dead; /* closed in this batch of events */
};

struct relay {
	int ep;
	SSL_CTX *server, *client;
	struct pair *dead;
	unsigned char buf[TR_RECORD];
};

/* The events side s waits for now. */
static uint32_t interest(const struct side *s)
{
	switch (s->st) {
	case SIDE_HEAD:
		return EPOLLIN;
	case SIDE_HANDSHAKE:
		return s->hwant;
	case SIDE_OPEN:
		break;
	}
	/* writing what is parked for s, and reading s unless its peer
	 * has bytes parked: one full direction does not stop the other */
	return (s->pend != NULL ? s->wwant : 0) |
	       (s->peer->st == SIDE_OPEN && s->peer->pend == NULL ? (s->rwant != 0 ? s->rwant : EPOLLIN) : 0);
}

/* Tells epoll what s waits for, when that changed. */
static int arm(struct relay *r, struct side *s)
{
	struct epoll_event ev = { .events = interest(s), .data.ptr = s };

	if (s->fd < 0 || ev.events == s->armed)
		return 0;
	if (epoll_ctl(r->ep, EPOLL_CTL_MOD, s->fd, &ev) < 0)
		return -1;
	s->armed = ev.events;
	return 0;
}

/* The events an SSL call's result waits for; 0 when it failed. */
static uint32_t ssl_wants(SSL *ssl, int rc)
{
	switch (SSL_get_error(ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return EPOLLIN;
	case SSL_ERROR_WANT_WRITE:
		return EPOLLOUT;
	default:
		ERR_clear_error();
		return 0;
	}
}

static void side_free(struct side *s)
{
	SSL_free(s->ssl);
	if (s->fd >= 0)
		close(s->fd);
	free(s->pend);
}

/* Closes both sockets now (epoll forgets them); the pair is freed after
 * the batch, whose later events may still point at it. */
static void pair_close(struct relay *r, struct pair *p)
{
	if (p->a.fd < 0)
		return;
	close(p->a.fd);
	if (p->b.fd >= 0)
		close(p->b.fd);
	p->a.fd = p->b.fd = -1;
	p->next_dead = r->dead;
	r->dead = p;
}

/* Writes n bytes to s; what its socket does not take is parked.
 * 0, or -1 when s failed. */
static int put(struct side *s, const unsigned char *data, size_t n)
{
	while (n > 0) {
		int w = SSL_write(s->ssl, data, (int)n);

		if (w > 0) {
			data += w;
			n -= (size_t)w;
			continue;
		}
		s->wwant = ssl_wants(s->ssl, w);
		if (s->wwant == 0)
			return -1;
		s->pend = malloc(n);
		if (s->pend == NULL)
			return -1;
		memcpy(s->pend, data, n);
		s->plen = n;
		return 0;
	}
	return 0;
}

/* Writes what s has parked (the same bytes, moved: OpenSSL is told the
 * buffer may move). 0, or -1 when s failed. */
static int flush(struct side *s)
{
	unsigned char *p = s->pend;
	size_t n = s->plen;
	int rc;

	s->pend = NULL;
	s->plen = 0;
	rc = put(s, p, n);
	free(p);
	return rc;
}

/* Decrypts what from has and encrypts it for to, until from has nothing
 * or to's socket is full. 0, or -1 when either side ended or failed. */
static int pump(struct relay *r, struct side *from, struct side *to)
{
	while (to->pend == NULL) {
		int n = SSL_read(from->ssl, r->buf, sizeof(r->buf));

		if (n <= 0) {
			from->rwant = ssl_wants(from->ssl, n);
			return from->rwant != 0 ? 0 : -1;
		}
		if (put(to, r->buf, (size_t)n) < 0)
			return -1;
		/* nothing buffered: epoll says when more comes (no read()
		 * that would only return EAGAIN) */
		if (!SSL_has_pending(from->ssl)) {
			from->rwant = EPOLLIN;
			return 0;
		}
	}
	return 0;
}

static int handshake(struct side *s)
{
	int rc = SSL_do_handshake(s->ssl);

	if (rc == 1) {
		s->st = SIDE_OPEN;
		return 0;
	}
	s->hwant = ssl_wants(s->ssl, rc);
	return s->hwant != 0 ? 0 : -1;
}

/* Connects the upstream at target "IP:PORT" (loopback: a blocking
 * connect answers at once) and starts its handshake. */
static int upstream_start(struct relay *r, struct side *u, const char *target)
{
	struct epoll_event ev = { .events = 0, .data.ptr = u };
	struct sockaddr_storage to;
	socklen_t tolen;
	char ip[INET6_ADDRSTRLEN];
	uint16_t port;
	int one = 1;

	if (test_parse_sockaddr(target, false, &to, &tolen) < 0 ||
	    test_parse_hostport(target, ip, sizeof(ip), &port) < 0) {
		fprintf(stderr, "pv-tlsrelay: CONNECT %s: not IP:PORT\n", target);
		return -1;
	}
	u->fd = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || connect(u->fd, (const struct sockaddr *)&to, tolen) < 0 ||
	    setsockopt(u->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
	    fcntl(u->fd, F_SETFL, O_NONBLOCK) < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, u->fd, &ev) < 0) {
		fprintf(stderr, "pv-tlsrelay: connect to the upstream: %s\n", strerror(errno));
		return -1;
	}
	u->ssl = SSL_new(r->client);
	if (u->ssl == NULL || SSL_set_fd(u->ssl, u->fd) != 1)
		return -1;
	if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(u->ssl), ip) != 1)
		return -1;
	SSL_set_connect_state(u->ssl);
	u->st = SIDE_HANDSHAKE;
	return handshake(u);
}

/* The client's CONNECT head: read, answered, then its handshake. */
static int read_head(struct relay *r, struct side *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	ssize_t n = recv(c->fd, c->head + c->hlen, sizeof(c->head) - 1 - c->hlen, 0);
	char *sp;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	c->hlen += (size_t)n;
	c->head[c->hlen] = '\0';
	if (strstr(c->head, "\r\n\r\n") == NULL)
		return c->hlen + 1 < sizeof(c->head) ? 0 : -1;
	if (strncmp(c->head, "CONNECT ", 8) != 0 || (sp = strchr(c->head + 8, ' ')) == NULL ||
	    send(c->fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(ok) - 1))
		return -1;
	*sp = '\0';
	c->ssl = SSL_new(r->server);
	if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
		return -1;
	SSL_set_accept_state(c->ssl);
	c->st = SIDE_HANDSHAKE;
	if (upstream_start(r, c->peer, c->head + 8) < 0)
		return -1;
	return handshake(c);
}

/* Whatever happened on s: move what can move, then re-arm both sides. */
static int on_event(struct relay *r, struct side *s)
{
	struct side *p = s->peer;
	bool was_parked = s->pend != NULL;

	switch (s->st) {
	case SIDE_HEAD:
		if (read_head(r, s) < 0)
			return -1;
		break;
	case SIDE_HANDSHAKE:
		if (handshake(s) < 0)
			return -1;
		break;
	case SIDE_OPEN:
		if (s->pend != NULL && flush(s) < 0)
			return -1;
		break;
	}
	if (s->st == SIDE_OPEN && p->st == SIDE_OPEN) {
		/* s's bytes to p; and p's, when s's park was just cleared or
		 * p has not been read since it opened (the client may have
		 * sent before the upstream's handshake ended) */
		if (pump(r, s, p) < 0)
			return -1;
		if ((was_parked || p->rwant == 0) && s->pend == NULL && pump(r, p, s) < 0)
			return -1;
	}
	if (arm(r, s) < 0 || arm(r, p) < 0)
		return -1;
	return 0;
}

static void accept_one(struct relay *r, int ls)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;
	struct pair *p;
	int c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (c < 0)
		return;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		close(c);
		return;
	}
	p->a = (struct side){ .fd = c, .peer = &p->b, .pair = p, .st = SIDE_HEAD, .armed = EPOLLIN };
	p->b = (struct side){ .fd = -1, .peer = &p->a, .pair = p, .st = SIDE_HEAD };
	ev.data.ptr = &p->a;
	if (setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
	    epoll_ctl(r->ep, EPOLL_CTL_ADD, c, &ev) < 0) {
		side_free(&p->a);
		free(p);
	}
}

/* Both contexts with passavant's TLS settings; 0 or -1 (printed). */
static int contexts(struct relay *r, const char *dir)
{
	char cert[4096], key[4096], ca[4096];

	if ((size_t)snprintf(cert, sizeof(cert), "%s/server.pem", dir) >= sizeof(cert) ||
	    (size_t)snprintf(key, sizeof(key), "%s/server.key", dir) >= sizeof(key) ||
	    (size_t)snprintf(ca, sizeof(ca), "%s/ca.pem", dir) >= sizeof(ca)) {
		fprintf(stderr, "pv-tlsrelay: --certs %s: path too long\n", dir);
		return -1;
	}
	r->server = SSL_CTX_new(TLS_server_method());
	r->client = SSL_CTX_new(TLS_client_method());
	if (r->server == NULL || r->client == NULL ||
	    SSL_CTX_set_min_proto_version(r->server, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_min_proto_version(r->client, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(r->server, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(r->server, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(r->client, ca, NULL) != 1 ||
	    SSL_CTX_set_ciphersuites(r->server, TR_TLS13) != 1 ||
	    SSL_CTX_set_ciphersuites(r->client, TR_TLS13) != 1 ||
	    SSL_CTX_set_cipher_list(r->server, TR_TLS12) != 1 ||
	    SSL_CTX_set_cipher_list(r->client, TR_TLS12) != 1 ||
	    SSL_CTX_set_num_tickets(r->server, 0) != 1) {
		fprintf(stderr, "pv-tlsrelay: TLS contexts from %s (server.pem, server.key, ca.pem):\n", dir);
		ERR_print_errors_fp(stderr);
		return -1;
	}
	SSL_CTX_set_options(r->server, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
					       SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_options(r->client, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_verify(r->client, SSL_VERIFY_PEER, NULL);
	(void)SSL_CTX_set_mode(r->server, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	(void)SSL_CTX_set_mode(r->client, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_session_cache_mode(r->client, SSL_SESS_CACHE_OFF);
	/* one read() per record or more, as passavant reads (ca.c) */
	SSL_CTX_set_read_ahead(r->server, 1);
	SSL_CTX_set_read_ahead(r->client, 1);
	SSL_CTX_set_default_read_buffer_len(r->server, TR_READ_AHEAD);
	SSL_CTX_set_default_read_buffer_len(r->client, TR_READ_AHEAD);
	return 0;
}

int main(int argc, char **argv)
{
	static struct relay r;
	struct side listener = { .fd = -1 };
	struct epoll_event evs[TR_EVENTS], ev;
	const char *listen_s = NULL, *certs = NULL;
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			listen_s = argv[i + 1];
		else if (strcmp(argv[i], "--certs") == 0)
			certs = argv[i + 1];
		else
			break;
	}
	if (i != argc || listen_s == NULL || certs == NULL) {
		fprintf(stderr, "usage: pv-tlsrelay --listen IP:PORT --certs DIR\n");
		return 2;
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || contexts(&r, certs) < 0)
		return 1;
	listener.fd = test_listen(listen_s, "pv-tlsrelay");
	if (listener.fd < 0)
		return 1;
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &listener };
	if (r.ep < 0 || epoll_ctl(r.ep, EPOLL_CTL_ADD, listener.fd, &ev) < 0) {
		fprintf(stderr, "pv-tlsrelay: epoll: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		int n = epoll_wait(r.ep, evs, TR_EVENTS, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "pv-tlsrelay: epoll_wait: %s\n", strerror(errno));
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct side *s = evs[i].data.ptr;

			if (s == &listener) {
				accept_one(&r, listener.fd);
				continue;
			}
			if (s->fd < 0) /* closed by an earlier event of this batch */
				continue;
			if (on_event(&r, s) < 0 ||
			    ((evs[i].events & (EPOLLHUP | EPOLLERR)) && s->armed == 0))
				pair_close(&r, s->pair);
		}
		while (r.dead != NULL) {
			struct pair *next = r.dead->next_dead;

			r.dead->a.fd = r.dead->b.fd = -1;
			side_free(&r.dead->a);
			side_free(&r.dead->b);
			free(r.dead);
			r.dead = next;
		}
	}
}

/*
 * pv-load - HTTP/1.1 load client for `make bench` (libevent, llhttp).
 *
 *   pv-load --url http[s]://HOST:PORT/PATH [--proxy HOST:PORT]
 *           [--connect-tunnel] [--tls CAFILE] [-c CONC] [-d SECONDS]
 *           [-n REQUESTS] [--new-conn] [--download N | --upload N]
 *           [--hold SECONDS [--ramp SECONDS]] [--path PATH] [-H 'NAME: VALUE']...
 *
 * Request mode (default): CONC connections each send a small GET, wait for
 * the complete response, then send the next on the same connection
 * (keep-alive). --new-conn opens a fresh connection per request (and sends
 * CONNECT and does the TLS handshake again when those apply), which
 * measures handshakes/s; its latency then covers connect + handshake +
 * request. The run lasts SECONDS (default 5) or until REQUESTS responses
 * completed, whichever comes first.
 *
 * Routing: without --proxy, straight to HOST:PORT. With --proxy, an http://
 * URL is sent in absolute form to the proxy, unless --connect-tunnel asks
 * for a CONNECT tunnel; an https:// URL always goes through CONNECT. https
 * means TLS to HOST (inside the tunnel when there is one), verified against
 * CAFILE (required for https) with host name (or IP) checking and SNI for
 * names; ALPN offers http/1.1. No TLS session resumption: every handshake
 * is a full one.
 *
 * --download N: GET /bytes/N (PATH is replaced), one connection, checks
 * that exactly N body bytes arrive. --upload N: POST /sink with N bytes of
 * body (Content-Length), checks that the reply counts N. Both do -n
 * transfers (default 1) one after another and report MB/s (10^6 bytes).
 *
 * --path PATH: the request path, also for --download/--upload (instead of
 * /bytes/N and /sink): e.g. a static file of an nginx upstream, whose size
 * must then be N. -H 'NAME: VALUE' adds a request header (up to MAX_HEADERS;
 * no CR or LF), e.g. a masked credential's sentinel.
 *
 * --hold SECONDS: each of the CONC connections does one request and then
 * stays open and idle; once all CONC have answered, pv-load prints
 * "pv-load: holding CONC connections" on stderr, keeps them SECONDS, then
 * reports (for measuring the proxy's memory per open tunnel). --ramp R
 * spreads the CONC connections' starts evenly over R seconds instead of
 * opening them all at once (connection i starts at i*R/CONC): tunnels that
 * arrive over time rather than in one burst.
 *
 * Output: exactly one line on stdout
 *   reqs=R secs=S rps=X p50_ms=A p99_ms=B mbps=M errors=E
 * reqs = completed 2xx responses, errors = failed connects, CONNECT
 * refusals, TLS failures, non-2xx statuses, parse errors, short bodies and
 * connections closed mid-request; the first few are described on stderr.
 * A failed request is retried after 10 ms (in request mode); the run gives
 * up early when GIVE_UP_ERRORS errors happen before any success.
 * mbps counts response body bytes (request body bytes for --upload).
 * Exit status: 0 if at least one request completed, 1 if none did, 2 on
 * usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <llhttp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define MAX_CONC 4096
#define MAX_ERRORS_SHOWN 5
#define GIVE_UP_ERRORS 20 /* errors before any success: give up */
#define UPLOAD_HIGH (1024 * 1024)
#define PATTERN_PERIOD 63
#define PATTERN_CHUNK (PATTERN_PERIOD * 1024)
#define MAX_HEADERS 8

static const char pattern_chars[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n";
static char pattern_buf[PATTERN_CHUNK + PATTERN_PERIOD];

enum mode { MODE_REQ, MODE_DOWNLOAD, MODE_UPLOAD };

enum lstate {
	LS_IDLE,        /* no connection */
	LS_CONNECTING,  /* TCP connect in progress */
	LS_TUNNEL,      /* CONNECT sent, waiting for the proxy's answer */
	LS_TLS,         /* TLS handshake in progress */
	LS_REQUEST,     /* request sent, response being read */
	LS_READY,       /* connected, nothing in flight */
};

struct load;

struct lconn {
	struct load *L;
	int idx;
	int fd;
	bool bev_owns_fd;
	struct bufferevent *bev;
	enum lstate state;
	llhttp_t parser;
	bool complete;
	double t_conn;          /* when this connection started */
	double t_req;           /* when the current request was sent */
	uint64_t body;          /* response body bytes of the current request */
	char resp[64];          /* start of the response body (for /sink) */
	size_t resp_len;
	uint64_t up_left, up_off; /* upload body still to queue */
	struct event *retry;    /* backoff after an error */
};

struct load {
	struct event_base *base;
	enum mode mode;
	/* target */
	bool https;
	char host[256];
	char hostport[300];
	char path[2048];
	struct sockaddr_storage target;
	socklen_t target_len;
	/* proxy */
	bool use_proxy, tunnel;
	struct sockaddr_storage proxy;
	socklen_t proxy_len;
	SSL_CTX *ssl_ctx;
	bool host_is_ip;
	/* parameters */
	int conc;
	double duration;
	uint64_t max_reqs;      /* 0: no limit */
	bool new_conn;
	uint64_t xfer;          /* --download/--upload size */
	double hold;            /* --hold: seconds to keep the connections */
	double ramp;            /* --ramp: seconds over which the starts spread */
	struct event *hold_timer;
	/* results */
	uint64_t issued, done, errors;
	uint64_t bytes;
	double *lat;
	size_t nlat, caplat;
	double t_start, t_end;
	bool stopping;
	struct event *timer;
	struct lconn *conns;
	const char *path_arg;   /* --path, or NULL */
	const char *headers[MAX_HEADERS]; /* -H, in order */
	int nheaders;
	char request[4096];     /* the request head, prebuilt */
	size_t request_len;
	llhttp_settings_t settings;
};

static void conn_start(struct lconn *c);
static void send_request(struct lconn *c);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void stop_all(struct load *L)
{
	if (L->stopping)
		return;
	L->stopping = true;
	L->t_end = now_s();
	event_base_loopbreak(L->base);
}

static void conn_close(struct lconn *c)
{
	if (c->bev != NULL) {
		bufferevent_free(c->bev);
		c->bev = NULL;
	}
	if (c->fd >= 0 && !c->bev_owns_fd)
		close(c->fd);
	c->fd = -1;
	c->bev_owns_fd = false;
	c->state = LS_IDLE;
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_start(arg);
}

/* Counts an error, describes the first few, closes and retries after a
 * short pause (so a refusing peer does not make us spin). */
static void conn_error(struct lconn *c, const char *fmt, const char *detail)
{
	struct load *L = c->L;
	struct timeval tv = { 0, 10 * 1000 };

	L->errors++;
	if (L->errors <= MAX_ERRORS_SHOWN) {
		fprintf(stderr, "pv-load: conn %d: ", c->idx);
		fprintf(stderr, fmt, detail ? detail : "");
		fputc('\n', stderr);
	}
	conn_close(c);
	if (L->stopping)
		return;
	if (L->done == 0 && L->errors >= GIVE_UP_ERRORS) {
		/* Nothing ever worked: this setup cannot do it. */
		stop_all(L);
		return;
	}
	if (L->mode != MODE_REQ) {
		/* A transfer that failed is not retried: the figure would lie. */
		stop_all(L);
		return;
	}
	if (L->max_reqs > 0 && L->issued > 0)
		L->issued--; /* the failed request is issued again */
	if (event_add(c->retry, &tv) < 0) {
		fprintf(stderr, "pv-load: cannot schedule a retry\n");
		stop_all(L);
	}
}

static void tls_error(struct lconn *c, const char *what)
{
	char buf[256] = "";
	unsigned long e;
	SSL *ssl = c->bev ? bufferevent_openssl_get_ssl(c->bev) : NULL;

	while ((e = (c->bev ? bufferevent_get_openssl_error(c->bev) : ERR_get_error())) != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	if (ssl != NULL && SSL_get_verify_result(ssl) != X509_V_OK)
		snprintf(buf, sizeof(buf), "certificate: %s",
			 X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
	conn_error(c, what, buf);
}

static void add_latency(struct load *L, double ms)
{
	if (L->nlat == L->caplat) {
		size_t ncap = L->caplat ? L->caplat * 2 : 65536;
		double *nl = realloc(L->lat, ncap * sizeof(*nl));

		if (nl == NULL)
			return; /* latency sample lost; counts stay right */
		L->lat = nl;
		L->caplat = ncap;
	}
	L->lat[L->nlat++] = ms;
}

/* ------------------------------------------------------------ llhttp */

static int on_body(llhttp_t *p, const char *at, size_t len)
{
	struct lconn *c = p->data;

	if (c->resp_len < sizeof(c->resp) - 1) {
		size_t n = len < sizeof(c->resp) - 1 - c->resp_len ? len
								    : sizeof(c->resp) - 1 - c->resp_len;

		memcpy(c->resp + c->resp_len, at, n);
		c->resp_len += n;
		c->resp[c->resp_len] = '\0';
	}
	c->body += len;
	return 0;
}

static int on_message_complete(llhttp_t *p)
{
	struct lconn *c = p->data;

	c->complete = true;
	return HPE_PAUSED;
}

/* A response is complete: account for it and go on. */
static void response_done(struct lconn *c)
{
	struct load *L = c->L;
	int status = llhttp_get_status_code(&c->parser);
	bool keep = llhttp_should_keep_alive(&c->parser);
	double t = now_s();
	char detail[96];

	if (status < 200 || status > 299) {
		snprintf(detail, sizeof(detail), "%d", status);
		conn_error(c, "HTTP status %s", detail);
		return;
	}
	if (L->mode == MODE_DOWNLOAD && c->body != L->xfer) {
		snprintf(detail, sizeof(detail), "%llu of %llu", (unsigned long long)c->body,
			 (unsigned long long)L->xfer);
		conn_error(c, "short download: %s bytes", detail);
		return;
	}
	if (L->mode == MODE_UPLOAD && strtoull(c->resp, NULL, 10) != L->xfer) {
		conn_error(c, "upstream counted %s bytes of the upload", c->resp);
		return;
	}
	L->done++;
	L->bytes += L->mode == MODE_UPLOAD ? L->xfer : c->body;
	add_latency(L, (t - (L->new_conn ? c->t_conn : c->t_req)) * 1000.0);
	c->state = LS_READY;
	llhttp_resume(&c->parser);
	if (L->hold > 0) {
		/* One request per connection, then keep it open and idle. */
		if (L->done == (uint64_t)L->conc) {
			struct timeval tv;

			tv.tv_sec = (time_t)L->hold;
			tv.tv_usec = (suseconds_t)((L->hold - (double)tv.tv_sec) * 1e6);
			fprintf(stderr, "pv-load: holding %d connections\n", L->conc);
			fflush(stderr);
			if (evtimer_add(L->hold_timer, &tv) < 0)
				stop_all(L);
		}
		return;
	}
	if (L->max_reqs > 0 && L->done >= L->max_reqs) {
		stop_all(L);
		return;
	}
	if (L->stopping)
		return;
	if (L->new_conn || !keep) {
		conn_close(c);
		conn_start(c);
		return;
	}
	send_request(c);
}

/* ------------------------------------------------------------ I/O */

static void upload_refill(struct lconn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	while (c->up_left > 0 && evbuffer_get_length(out) < UPLOAD_HIGH) {
		size_t n = c->up_left < PATTERN_CHUNK ? (size_t)c->up_left : PATTERN_CHUNK;
		size_t off = (size_t)(c->up_off % PATTERN_PERIOD);

		if (evbuffer_add_reference(out, pattern_buf + off, n, NULL, NULL) < 0) {
			conn_error(c, "out of memory%s", NULL);
			return;
		}
		c->up_off += n;
		c->up_left -= n;
	}
}

static void send_request(struct lconn *c)
{
	struct load *L = c->L;

	if (L->stopping)
		return;
	if (L->max_reqs > 0 && L->issued >= L->max_reqs) {
		c->state = LS_READY;
		return;
	}
	L->issued++;
	c->complete = false;
	c->body = 0;
	c->resp_len = 0;
	c->resp[0] = '\0';
	c->state = LS_REQUEST;
	c->t_req = now_s();
	if (evbuffer_add(bufferevent_get_output(c->bev), L->request, L->request_len) < 0) {
		conn_error(c, "out of memory%s", NULL);
		return;
	}
	if (L->mode == MODE_UPLOAD) {
		c->up_left = L->xfer;
		c->up_off = 0;
		upload_refill(c);
	}
}

static void readcb(struct bufferevent *bev, void *arg);
static void writecb(struct bufferevent *bev, void *arg);
static void eventcb(struct bufferevent *bev, short what, void *arg);

static void start_tls(struct lconn *c)
{
	struct load *L = c->L;
	SSL *ssl = SSL_new(L->ssl_ctx);

	if (ssl == NULL) {
		conn_error(c, "SSL_new failed%s", NULL);
		return;
	}
	if (!L->host_is_ip && SSL_set_tlsext_host_name(ssl, L->host) != 1) {
		SSL_free(ssl);
		conn_error(c, "SNI failed%s", NULL);
		return;
	}
	if (L->host_is_ip) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), L->host) != 1) {
			SSL_free(ssl);
			conn_error(c, "bad IP%s", NULL);
			return;
		}
	} else if (SSL_set1_host(ssl, L->host) != 1) {
		SSL_free(ssl);
		conn_error(c, "SSL_set1_host failed%s", NULL);
		return;
	}
	/* The plain bufferevent goes; the fd stays for the TLS one. */
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	c->bev = bufferevent_openssl_socket_new(L->base, c->fd, ssl, BUFFEREVENT_SSL_CONNECTING,
						BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		SSL_free(ssl);
		conn_error(c, "TLS bufferevent failed%s", NULL);
		return;
	}
	c->bev_owns_fd = true;
	bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	bufferevent_setcb(c->bev, readcb, writecb, eventcb, c);
	bufferevent_setwatermark(c->bev, EV_WRITE, UPLOAD_HIGH / 2, 0);
	c->state = LS_TLS;
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) < 0)
		conn_error(c, "bufferevent_enable failed%s", NULL);
}

/* TCP (and tunnel, and TLS) is up: go on to the next step. */
static void connected(struct lconn *c)
{
	struct load *L = c->L;

	llhttp_init(&c->parser, HTTP_RESPONSE, &L->settings);
	c->parser.data = c;
	if (L->https && c->state != LS_TLS) {
		start_tls(c);
		return;
	}
	send_request(c);
}

static void readcb(struct bufferevent *bev, void *arg)
{
	struct lconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	if (c->state == LS_TUNNEL) {
		struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
		char head[256];
		size_t n;
		int status = 0;

		if (end.pos < 0) {
			if (evbuffer_get_length(in) > 16384)
				conn_error(c, "CONNECT answer too long%s", NULL);
			return;
		}
		n = (size_t)end.pos + 4 < sizeof(head) - 1 ? (size_t)end.pos + 4 : sizeof(head) - 1;
		if (evbuffer_copyout(in, head, n) < 0) {
			conn_error(c, "reading the CONNECT answer failed%s", NULL);
			return;
		}
		head[n] = '\0';
		if (sscanf(head, "HTTP/1.%*d %d", &status) != 1 || status != 200) {
			char *nl = strpbrk(head, "\r\n");

			if (nl != NULL)
				*nl = '\0';
			conn_error(c, "CONNECT refused: %s", head);
			return;
		}
		evbuffer_drain(in, (size_t)end.pos + 4);
		connected(c);
		return;
	}
	if (c->state != LS_REQUEST) {
		if (evbuffer_get_length(in) > 0)
			conn_error(c, "unexpected bytes from the server%s", NULL);
		return;
	}
	while (c->state == LS_REQUEST && evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		enum llhttp_errno e;
		size_t used;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			return;
		e = llhttp_execute(&c->parser, v.iov_base, v.iov_len);
		used = v.iov_len;
		if (e == HPE_PAUSED)
			used = (size_t)(llhttp_get_error_pos(&c->parser) - (const char *)v.iov_base);
		else if (e != HPE_OK) {
			conn_error(c, "bad response: %s", llhttp_errno_name(e));
			return;
		}
		evbuffer_drain(in, used);
		if (c->complete) {
			if (evbuffer_get_length(in) > 0) {
				conn_error(c, "extra bytes after a response%s", NULL);
				return;
			}
			response_done(c);
			return;
		}
	}
}

static void writecb(struct bufferevent *bev, void *arg)
{
	struct lconn *c = arg;

	(void)bev;
	if (c->state == LS_REQUEST && c->up_left > 0)
		upload_refill(c);
}

static void eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct lconn *c = arg;
	struct load *L = c->L;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (c->state == LS_CONNECTING) {
			int one = 1;

			if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
				conn_error(c, "TCP_NODELAY: %s", strerror(errno));
				return;
			}
			if (L->tunnel) {
				c->state = LS_TUNNEL;
				if (evbuffer_add_printf(bufferevent_get_output(c->bev),
							"CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
							"User-Agent: pv-load\r\n\r\n",
							L->hostport, L->hostport) < 0)
					conn_error(c, "out of memory%s", NULL);
				return;
			}
			connected(c);
		} else if (c->state == LS_TLS) {
			connected(c);
		}
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		if (c->bev_owns_fd)
			tls_error(c, c->state == LS_TLS ? "TLS handshake: %s" : "TLS: %s");
		else
			conn_error(c, "connection error: %s",
				   strerror(EVUTIL_SOCKET_ERROR() ? EVUTIL_SOCKET_ERROR() : EIO));
		return;
	}
	if (what & BEV_EVENT_EOF) {
		if (c->state == LS_REQUEST && llhttp_message_needs_eof(&c->parser) &&
		    llhttp_finish(&c->parser) == HPE_OK && c->complete) {
			response_done(c);
			return;
		}
		if (c->state == LS_READY && L->hold > 0) {
			conn_error(c, "held connection closed by the peer%s", NULL);
			return;
		}
		if (c->state == LS_READY) {
			/* Server closed an idle keep-alive connection: reconnect. */
			conn_close(c);
			if (!L->stopping)
				conn_start(c);
			return;
		}
		conn_error(c, "connection closed by the peer%s", NULL);
	}
}

static void conn_start(struct lconn *c)
{
	struct load *L = c->L;
	const struct sockaddr *sa = L->use_proxy ? (struct sockaddr *)&L->proxy
						 : (struct sockaddr *)&L->target;
	socklen_t salen = L->use_proxy ? L->proxy_len : L->target_len;

	if (L->stopping)
		return;
	if (L->max_reqs > 0 && L->issued >= L->max_reqs)
		return;
	c->t_conn = now_s();
	c->fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		conn_error(c, "socket: %s", strerror(errno));
		return;
	}
	c->bev = bufferevent_socket_new(L->base, c->fd, 0);
	if (c->bev == NULL) {
		conn_error(c, "bufferevent_socket_new failed%s", NULL);
		return;
	}
	c->bev_owns_fd = false;
	bufferevent_setcb(c->bev, readcb, writecb, eventcb, c);
	bufferevent_setwatermark(c->bev, EV_WRITE, UPLOAD_HIGH / 2, 0);
	c->state = LS_CONNECTING;
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) < 0 ||
	    bufferevent_socket_connect(c->bev, sa, (int)salen) < 0) {
		conn_error(c, "connect: %s", strerror(errno));
		return;
	}
}

/* ------------------------------------------------------------ setup */

static int resolve(const char *host, const char *port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	struct addrinfo hints, *res;
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0) {
		fprintf(stderr, "pv-load: %s: %s\n", host, gai_strerror(r));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Splits HOST:PORT / [V6]:PORT (port required). */
static int split_hostport(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *h = s, *end, *colon;

	if (*s == '[') {
		h = s + 1;
		end = strchr(h, ']');
		if (end == NULL || end[1] != ':')
			return -1;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return -1;
		end = colon;
	}
	if ((size_t)(end - h) >= hostlen || end == h || strlen(colon + 1) >= portlen ||
	    colon[1] == '\0')
		return -1;
	memcpy(host, h, (size_t)(end - h));
	host[end - h] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

static int parse_url(struct load *L, const char *url)
{
	const char *rest, *slash;
	char hp[300], port[16];

	if (strncmp(url, "http://", 7) == 0) {
		rest = url + 7;
	} else if (strncmp(url, "https://", 8) == 0) {
		rest = url + 8;
		L->https = true;
	} else {
		fprintf(stderr, "pv-load: URL must start with http:// or https://\n");
		return -1;
	}
	slash = strchr(rest, '/');
	if (slash == NULL)
		slash = rest + strlen(rest);
	if ((size_t)(slash - rest) >= sizeof(hp)) {
		fprintf(stderr, "pv-load: host too long\n");
		return -1;
	}
	memcpy(hp, rest, (size_t)(slash - rest));
	hp[slash - rest] = '\0';
	if (strchr(hp, ']') == NULL ? strchr(hp, ':') == NULL : strstr(hp, "]:") == NULL) {
		/* default port */
		if (snprintf(hp + strlen(hp), sizeof(hp) - strlen(hp), ":%s",
			     L->https ? "443" : "80") < 0)
			return -1;
	}
	if (split_hostport(hp, L->host, sizeof(L->host), port, sizeof(port)) < 0) {
		fprintf(stderr, "pv-load: bad host:port in URL\n");
		return -1;
	}
	snprintf(L->hostport, sizeof(L->hostport), "%s", hp);
	snprintf(L->path, sizeof(L->path), "%s", *slash ? slash : "/");
	{
		unsigned char buf[16];

		L->host_is_ip = inet_pton(AF_INET, L->host, buf) == 1 ||
				inet_pton(AF_INET6, L->host, buf) == 1;
	}
	return resolve(L->host, port, &L->target, &L->target_len);
}

static int build_request(struct load *L)
{
	char target[2400];
	const char *method = L->mode == MODE_UPLOAD ? "POST" : "GET";
	char extra[2048] = "";
	size_t used = 0;
	int n, i;

	if (L->mode == MODE_DOWNLOAD)
		snprintf(L->path, sizeof(L->path), "/bytes/%llu", (unsigned long long)L->xfer);
	else if (L->mode == MODE_UPLOAD) {
		snprintf(L->path, sizeof(L->path), "/sink");
		n = snprintf(extra, sizeof(extra), "Content-Length: %llu\r\n",
			     (unsigned long long)L->xfer);
		if (n < 0 || (size_t)n >= sizeof(extra))
			return -1;
		used = (size_t)n;
	}
	if (L->path_arg != NULL)
		snprintf(L->path, sizeof(L->path), "%s", L->path_arg);
	for (i = 0; i < L->nheaders; i++) {
		n = snprintf(extra + used, sizeof(extra) - used, "%s\r\n", L->headers[i]);
		if (n < 0 || (size_t)n >= sizeof(extra) - used)
			return -1;
		used += (size_t)n;
	}
	if (L->use_proxy && !L->tunnel)
		snprintf(target, sizeof(target), "http://%s%s", L->hostport, L->path);
	else
		snprintf(target, sizeof(target), "%s", L->path);
	n = snprintf(L->request, sizeof(L->request),
		     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: pv-load\r\nAccept: */*\r\n%s\r\n",
		     method, target, L->hostport, extra);
	if (n < 0 || (size_t)n >= sizeof(L->request))
		return -1;
	L->request_len = (size_t)n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(const double *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	/* nearest rank */
	i = (size_t)(p * (double)n);
	if ((double)i < p * (double)n)
		i++;
	if (i > 0)
		i--;
	if (i >= n)
		i = n - 1;
	return v[i];
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	stop_all(arg);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pv-load --url http[s]://HOST:PORT/PATH [--proxy HOST:PORT] [--connect-tunnel]\n"
		"               [--tls CAFILE] [-c CONC] [-d SECONDS] [-n REQUESTS] [--new-conn]\n"
		"               [--download N | --upload N] [--hold SECONDS [--ramp SECONDS]] [--path PATH]\n"
		"               [-H 'NAME: VALUE']...\n");
}

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && *end == '\0' && end != s && *out >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct load L;
	const char *url = NULL, *proxy = NULL, *cafile = NULL;
	double v, secs;
	bool have_d = false;
	int i, rc = 1;

	memset(&L, 0, sizeof(L));
	L.conc = 1;
	L.duration = 5;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--connect-tunnel") == 0) {
			L.tunnel = true;
			continue;
		}
		if (strcmp(a, "--new-conn") == 0) {
			L.new_conn = true;
			continue;
		}
		if (val == NULL) {
			usage();
			return 2;
		}
		i++;
		if (strcmp(a, "--url") == 0)
			url = val;
		else if (strcmp(a, "--proxy") == 0)
			proxy = val;
		else if (strcmp(a, "--tls") == 0)
			cafile = val;
		else if (strcmp(a, "-c") == 0 && parse_num(val, &v) == 0 && v >= 1 && v <= MAX_CONC)
			L.conc = (int)v;
		else if (strcmp(a, "-d") == 0 && parse_num(val, &v) == 0 && v > 0) {
			L.duration = v;
			have_d = true;
		} else if (strcmp(a, "-n") == 0 && parse_num(val, &v) == 0 && v >= 1)
			L.max_reqs = (uint64_t)v;
		else if (strcmp(a, "--hold") == 0 && parse_num(val, &v) == 0 && v > 0)
			L.hold = v;
		else if (strcmp(a, "--ramp") == 0 && parse_num(val, &v) == 0 && v > 0)
			L.ramp = v;
		else if (strcmp(a, "--path") == 0 && val[0] == '/' && strpbrk(val, " \r\n") == NULL)
			L.path_arg = val;
		else if (strcmp(a, "-H") == 0 && L.nheaders < MAX_HEADERS && strchr(val, ':') != NULL &&
			 val[0] != ':' && strpbrk(val, "\r\n") == NULL)
			L.headers[L.nheaders++] = val;
		else if (strcmp(a, "--download") == 0 && parse_num(val, &v) == 0) {
			L.mode = MODE_DOWNLOAD;
			L.xfer = (uint64_t)v;
		} else if (strcmp(a, "--upload") == 0 && parse_num(val, &v) == 0) {
			L.mode = MODE_UPLOAD;
			L.xfer = (uint64_t)v;
		} else {
			usage();
			return 2;
		}
	}
	if (url == NULL) {
		usage();
		return 2;
	}
	if (L.mode != MODE_REQ) {
		L.conc = 1;
		if (L.max_reqs == 0)
			L.max_reqs = 1;
		if (!have_d)
			L.duration = 600;
	} else if (L.hold > 0) {
		L.max_reqs = 0;
		L.new_conn = false;
		if (!have_d)
			L.duration = L.hold + L.ramp + 120; /* bound on setting up + holding */
	} else if (L.max_reqs > 0 && !have_d) {
		L.duration = 3600;
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < PATTERN_CHUNK + PATTERN_PERIOD; i++)
		pattern_buf[i] = pattern_chars[i % PATTERN_PERIOD];
	if (parse_url(&L, url) < 0)
		return 2;
	if (proxy != NULL) {
		char ph[256], pp[16];

		if (split_hostport(proxy, ph, sizeof(ph), pp, sizeof(pp)) < 0 ||
		    resolve(ph, pp, &L.proxy, &L.proxy_len) < 0) {
			fprintf(stderr, "pv-load: bad --proxy %s\n", proxy);
			return 2;
		}
		L.use_proxy = true;
		if (L.https)
			L.tunnel = true;
	} else {
		L.tunnel = false;
	}
	if (L.https) {
		if (cafile == NULL) {
			fprintf(stderr, "pv-load: https needs --tls CAFILE\n");
			return 2;
		}
		L.ssl_ctx = SSL_CTX_new(TLS_client_method());
		if (L.ssl_ctx == NULL || SSL_CTX_load_verify_locations(L.ssl_ctx, cafile, NULL) != 1 ||
		    SSL_CTX_set_alpn_protos(L.ssl_ctx, (const unsigned char *)"\x08http/1.1", 9) != 0) {
			ERR_print_errors_fp(stderr);
			fprintf(stderr, "pv-load: cannot set up TLS with %s\n", cafile);
			goto out;
		}
		SSL_CTX_set_verify(L.ssl_ctx, SSL_VERIFY_PEER, NULL);
		SSL_CTX_set_session_cache_mode(L.ssl_ctx, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_mode(L.ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
		SSL_CTX_set_options(L.ssl_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	}
	if (build_request(&L) < 0) {
		fprintf(stderr, "pv-load: the request head is too long (URL, --path or -H)\n");
		goto out;
	}
	llhttp_settings_init(&L.settings);
	L.settings.on_body = on_body;
	L.settings.on_message_complete = on_message_complete;

	L.base = event_base_new();
	L.conns = calloc((size_t)L.conc, sizeof(*L.conns));
	if (L.base == NULL || L.conns == NULL)
		goto out;
	L.timer = evtimer_new(L.base, timer_cb, &L);
	L.hold_timer = evtimer_new(L.base, timer_cb, &L);
	if (L.timer == NULL || L.hold_timer == NULL)
		goto out;
	{
		struct timeval tv;

		tv.tv_sec = (time_t)L.duration;
		tv.tv_usec = (suseconds_t)((L.duration - (double)tv.tv_sec) * 1e6);
		if (evtimer_add(L.timer, &tv) < 0)
			goto out;
	}
	for (i = 0; i < L.conc; i++) {
		L.conns[i].L = &L;
		L.conns[i].idx = i;
		L.conns[i].fd = -1;
		L.conns[i].retry = evtimer_new(L.base, retry_cb, &L.conns[i]);
		if (L.conns[i].retry == NULL)
			goto out;
	}
	if (L.ramp > 0 && L.hold <= 0) {
		fprintf(stderr, "pv-load: --ramp goes with --hold\n");
		goto out;
	}
	L.t_start = now_s();
	for (i = 0; i < L.conc; i++) {
		/* --ramp: connection i starts i*ramp/conc seconds from now. */
		double at = L.ramp * (double)i / (double)L.conc;
		struct timeval tv;

		if (at <= 0) {
			conn_start(&L.conns[i]);
			continue;
		}
		tv.tv_sec = (time_t)at;
		tv.tv_usec = (suseconds_t)((at - (double)tv.tv_sec) * 1e6);
		if (evtimer_add(L.conns[i].retry, &tv) < 0)
			goto out;
	}
	if (event_base_dispatch(L.base) < 0)
		goto out;
	if (!L.stopping)
		stop_all(&L); /* every connection gave up */

	secs = L.t_end - L.t_start;
	if (L.mode != MODE_REQ && L.nlat > 0) {
		/* One transfer at a time: time spent transferring. */
		double sum = 0;

		for (size_t k = 0; k < L.nlat; k++)
			sum += L.lat[k] / 1000.0;
		secs = sum;
	}
	if (L.nlat > 0)
		qsort(L.lat, L.nlat, sizeof(*L.lat), cmp_double);
	printf("reqs=%llu secs=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f mbps=%.1f errors=%llu\n",
	       (unsigned long long)L.done, secs, secs > 0 ? (double)L.done / secs : 0.0,
	       percentile(L.lat, L.nlat, 0.50), percentile(L.lat, L.nlat, 0.99),
	       secs > 0 ? (double)L.bytes / secs / 1e6 : 0.0, (unsigned long long)L.errors);
	fflush(stdout);
	rc = L.done > 0 ? 0 : 1;
out:
	if (L.conns != NULL) {
		for (i = 0; i < L.conc; i++) {
			conn_close(&L.conns[i]);
			if (L.conns[i].retry != NULL)
				event_free(L.conns[i].retry);
		}
		free(L.conns);
	}
	if (L.timer != NULL)
		event_free(L.timer);
	if (L.hold_timer != NULL)
		event_free(L.hold_timer);
	if (L.base != NULL) {
		/* Let freed bufferevents finish their deferred finalisation. */
		event_base_loop(L.base, EVLOOP_NONBLOCK);
		event_base_free(L.base);
	}
	if (L.ssl_ctx != NULL)
		SSL_CTX_free(L.ssl_ctx);
	free(L.lat);
	return rc;
}

/*
 * intercept.c - intercepted connections (SPEC §5, §7; docs/run.md): the
 * listener the sandbox's nftables rule redirects every outgoing TCP
 * connection to, the original destination of each (SO_ORIGINAL_DST), and
 * INTERCEPT_SNIFF, which decides from the first bytes:
 *
 *   a TLS ClientHello  the SNI names the host (else the name the synthetic
 *                      destination was handed out for, else the address);
 *                      then exactly what a CONNECT to host:port gets
 *                      (conn_decide_tunnel()), without the 200;
 *   an HTTP request    origin-form requests, the host from Host, the port
 *                      the destination's (conn_intercept_target());
 *   anything else      refused: closed, one stderr and one audit line.
 *
 * Until then the connection is in mode RAW: no HTTP was spoken, so a
 * refusal closes instead of answering.
 */
#include "intercept.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>

#include <event2/buffer.h>
#include <event2/listener.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/defaults.h"
#include "conn_int.h"
#include "log.h"
#include "resolver.h"
#include "tls.h"

/* The longest method token we wait for before calling the bytes "not
 * HTTP" (llhttp's longest is 11: "MKACTIVITY", "UNSUBSCRIBE"). */
#define INTERCEPT_METHOD_MAX 20
/* The rule a 421 of an intercepted plain request names (audit "rule", the
 * stderr line): the Host must name where the connection went. */
#define INTERCEPT_HOST_RULE "interception: Host must name the destination"

struct intercept {
	proxy_t *px;                /* the proxy (loop, policy, audit) */
	struct evconnlistener *lis; /* the adopted listener (owns the socket) */
	int family;                 /* AF_INET or AF_INET6: which SO_ORIGINAL_DST */
	SSL_CTX *hello;             /* throwaway server context that only reads ClientHellos */
	struct event *pause;        /* re-enables the listener after EMFILE */
};

/* ---- refusals ---------------------------------------------------------- */

/* A refusal before a connection object exists (the destination cannot be
 * read, or maps to no name): the line on stderr (info) and in the audit. */
static void refuse_accept(proxy_t *px, const char *host, uint16_t port, const char *fmt, ...)
	PRINTF(4, 5);
static void refuse_accept(proxy_t *px, const char *host, uint16_t port, const char *fmt, ...)
{
	char line[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	proxy_record_line(px, host, port, 0, NULL, line);
}

/* What the refusal lines call the destination: the name its synthetic
 * address stands for, else the address ([v6]). */
static const char *dest_host(const conn_t *c, char *buf, size_t len)
{
	const char *h = c->orig->name[0] != '\0' ? c->orig->name : c->orig->ip;

	/* An IPv6 address (a tunnel's name may be one) in brackets. */
	if (strchr(h, ':') == NULL)
		return h;
	(void)snprintf(buf, len, "[%.46s]", h);
	return buf;
}

/* tgt from the destination (its name, else its address) for the audit
 * line of a refusal before any host was decided. */
static void target_from_dest(conn_t *c)
{
	char a[TARGET_AUTHORITY_MAX + 8], h[64];

	(void)snprintf(a, sizeof(a), "%s:%u", dest_host(c, h, sizeof(h)), (unsigned)c->orig->port);
	bool ok = conn_target_connect(c, a, strlen(a)) == NULL;

	if (!ok) {
		struct target t;

		memset(&t, 0, sizeof(t));
		(void)snprintf(t.host, sizeof(t.host), "%s", c->orig->ip);
		t.port = c->orig->port;
		ok = conn_target_set(c, &t) == 0;
	}
	c->tgt.path = "";
	c->tgt.path_len = 0;
	/* Out of memory: the line names no target (have_target false). */
	c->ex.have_target = ok;
	c->ex.kind = EX_KIND_CONNECT;
}

void conn_refuse_raw(conn_t *c, const char *fmt, ...)
{
	char line[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (intercepted(c) && !have_target(c))
		target_from_dest(c);
	c->ex.status = 0;
	c->ex.raw_line = true;
	conn_audit(c, "connect", "deny", line, NULL);
	log_info("%s", line);
	conn_close(c, "refused before any HTTP", false);
}

/* The one line for bytes that are neither HTTP nor TLS (and for silence). */
static void refuse_other(conn_t *c)
{
	char h[64];

	conn_refuse_raw(c, "passavant: blocked TCP %s:%u (neither HTTP nor TLS)", dest_host(c, h, sizeof(h)),
			(unsigned)c->orig->port);
}

void conn_intercept_timeout(conn_t *c)
{
	unsigned char b0 = 0;
	char h[64];

	if (evbuffer_get_length(in_of(&c->client)) == 0 ||
	    evbuffer_copyout(in_of(&c->client), &b0, 1) != 1 || b0 != 0x16) {
		/* Silent (a protocol whose server speaks first) or a start
		 * that never became a request line. */
		refuse_other(c);
		return;
	}
	conn_refuse_raw(c,
			"passavant: blocked TLS %s:%u: the ClientHello was not complete within %u ms "
			"(limits.handshakeTimeoutMs)",
			dest_host(c, h, sizeof(h)), (unsigned)c->orig->port, c->head_ms);
}

/* ---- the ClientHello ---------------------------------------------------- */

/* Whether in holds a whole ClientHello (tls_hello_complete()); the bytes
 * are made contiguous (at most limits.maxHeaderBytes of them are ever
 * buffered here). */
static enum tls_hello_state hello_state(struct evbuffer *in, size_t *msglen)
{
	size_t n = evbuffer_get_length(in);
	const unsigned char *p = evbuffer_pullup(in, (ev_ssize_t)n);

	*msglen = 0;
	if (p == NULL)
		return TLS_HELLO_BAD;
	return tls_hello_complete(p, n, msglen);
}

/* ---- INTERCEPT_SNIFF ----------------------------------------------------- */

int conn_http_start(struct evbuffer *in)
{
	unsigned char p[INTERCEPT_METHOD_MAX + 1];
	ev_ssize_t n = evbuffer_copyout(in, p, sizeof(p));

	for (ev_ssize_t i = 0; i < n; i++) {
		if (p[i] == ' ')
			return i > 0 ? 1 : 0;
		if (p[i] < 'A' || p[i] > 'Z')
			return 0;
	}
	return n < (ev_ssize_t)sizeof(p) ? -1 : 0;
}

/* A whole ClientHello is buffered: the host it names, then the decision
 * of a CONNECT to host:port. */
static enum step take_hello(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	size_t n = evbuffer_get_length(in);
	unsigned char *p = evbuffer_pullup(in, (ev_ssize_t)n);
	struct tls_hello h;
	char a[TARGET_AUTHORITY_MAX + 8], d[64];
	const char *host, *err;

	if (p == NULL) {
		conn_close(c, "out of memory reading a ClientHello", true);
		return STEP_CLOSED;
	}
	if (tls_hello_parse(c->icpt->hello, p, n, &h) < 0) {
		conn_refuse_raw(c, "passavant: blocked TCP %s:%u (neither HTTP nor TLS: a malformed TLS ClientHello)",
				dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
		return STEP_CLOSED;
	}
	if (h.bad_sni) {
		conn_refuse_raw(c, "passavant: blocked TLS %s:%u: its ClientHello has a malformed server_name",
				dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
		return STEP_CLOSED;
	}
	/*
	 * The SNI decides, even when the destination is a synthetic address
	 * handed out for another name: the leaf is minted for the SNI, the
	 * upstream is dialled by it (its real resolution, never the
	 * synthetic or literal address) and every request inside must name
	 * it (Host, 421), so a mismatch opens nothing the policy did not
	 * decide.
	 */
	/* A server name carrying a real value goes nowhere: not to the
	 * upstream's DNS, not into a line (round 15 of the attack). */
	if (h.has_sni && (err = proxy_real_in_name(c->px, h.sni, strlen(h.sni))) != NULL) {
		conn_refuse_raw(c, "passavant: blocked TLS %s:%u: its server name carries a real value of %s",
				dest_host(c, d, sizeof(d)), (unsigned)c->orig->port, err);
		return STEP_CLOSED;
	}
	c->client_h2 = h.offers_h2;
	host = h.has_sni ? h.sni : c->orig->name[0] != '\0' ? c->orig->name : NULL;
	if (host != NULL)
		(void)snprintf(a, sizeof(a), "%s:%u", host, (unsigned)c->orig->port);
	else
		(void)snprintf(a, sizeof(a), "%s:%u", dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
	if ((err = conn_target_connect(c, a, strlen(a))) != NULL) {
		if (err == conn_target_nomem)
			conn_refuse_raw(c, "passavant: blocked TLS %s:%u: out of memory for the server name",
					dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
		else
			conn_refuse_raw(c,
					"passavant: blocked TLS %s:%u: the server name %.200s is not a host name (%s)",
					dest_host(c, d, sizeof(d)), (unsigned)c->orig->port,
					host != NULL ? host : "?", err);
		return STEP_CLOSED;
	}
	c->tgt.path = "";
	c->tgt.path_len = 0;
	c->ex.kind = EX_KIND_CONNECT;
	c->ex.have_target = true;
	conn_set_state(c, CONN_DECIDE);
	conn_now(&c->ex.t0);
	/* Decided under the current policy, as every CONNECT is. */
	conn_use_policy(c);
	return conn_decide_tunnel(c);
}

enum step conn_step_intercept(conn_t *c)
{
	struct evbuffer *in = in_of(&c->client);
	size_t n = evbuffer_get_length(in), msglen = 0;
	unsigned max = policy_limits(pol(c))->max_header_bytes;
	unsigned char b0;
	char d[64];

	if (n == 0) {
		if (c->client.eof) {
			conn_close(c, "client closed before sending anything", false);
			return STEP_CLOSED;
		}
		return STEP_STOP;
	}
	if (c->ex.phase == EX_IDLE) {
		/* From the first byte the start has handshakeTimeoutMs. */
		c->ex.phase = EX_REQ_HEAD;
		conn_arm_timer(c, c->head_ms);
	}
	if (evbuffer_copyout(in, &b0, 1) != 1) {
		conn_close(c, "evbuffer_copyout failed", true);
		return STEP_CLOSED;
	}
	if (b0 == 0x16) {
		switch (hello_state(in, &msglen)) {
		case TLS_HELLO_DONE:
			break;
		case TLS_HELLO_MORE:
			if (msglen > max || n > max) {
				conn_refuse_raw(c,
						"passavant: blocked TLS %s:%u: its ClientHello (%zu bytes) is larger "
						"than limits.maxHeaderBytes (%u)",
						dest_host(c, d, sizeof(d)), (unsigned)c->orig->port,
						msglen > n ? msglen : n, max);
				return STEP_CLOSED;
			}
			if (c->client.eof) {
				conn_refuse_raw(c, "passavant: blocked TLS %s:%u: the client closed in the middle "
						"of its ClientHello",
						dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
				return STEP_CLOSED;
			}
			return STEP_STOP;
		case TLS_HELLO_BAD:
			conn_refuse_raw(c, "passavant: blocked TCP %s:%u (neither HTTP nor TLS: a malformed TLS "
					"ClientHello)", dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
			return STEP_CLOSED;
		}
		if (msglen > max) {
			conn_refuse_raw(c,
					"passavant: blocked TLS %s:%u: its ClientHello (%zu bytes) is larger than "
					"limits.maxHeaderBytes (%u)",
					dest_host(c, d, sizeof(d)), (unsigned)c->orig->port, msglen, max);
			return STEP_CLOSED;
		}
		return take_hello(c);
	}
	switch (conn_http_start(in)) {
	case 1:
		/* Requests from here on, through the same pipeline as proxy
		 * requests (conn_decide(); the target: conn_intercept_target()). */
		conn_set_mode(c, CONN_MODE_HTTP);
		c->ex.phase = EX_IDLE;
		conn_set_state(c, CONN_READ_HEAD);
		return STEP_AGAIN;
	case -1:
		if (!c->client.eof)
			return STEP_STOP;
		break;
	default:
		break;
	}
	refuse_other(c);
	return STEP_CLOSED;
}

/* ---- plain HTTP ----------------------------------------------------------- */

bool conn_intercept_target(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *name, *val, *m = http1_method(c->client.http);
	size_t nlen, vlen = 0, hi, nhost;
	char a[TARGET_AUTHORITY_MAX + 8], d[64];
	struct target h, t;
	bool explicit_port = false;
	int cut = (int)(ulen > 200 ? 200 : ulen);
	const char *rule = c->orig->tunnel ? CONN_RULE_HOST_TUNNEL : INTERCEPT_HOST_RULE;

	nhost = http1_header_find(c->client.http, "host", &hi);
	if (nhost > 1) {
		*st = conn_refuse(c, 400, NULL, "request", NULL, "passavant: %s %.*s: more than one Host field", m,
				  cut, url);
		return false;
	}
	if (nhost == 1) {
		http1_header(c->client.http, hi, &name, &nlen, &val, &vlen);
		explicit_port = vlen < sizeof(a) && target_parse_connect(val, vlen, &h) == NULL;
		if (!explicit_port) {
			(void)snprintf(a, sizeof(a), "%.*s:%u", (int)(vlen < 300 ? vlen : 300), val,
				       (unsigned)c->orig->port);
			if (vlen >= 300 || target_parse_connect(a, strlen(a), &h) != NULL) {
				*st = conn_refuse(c, 400, NULL, "request", NULL,
						  "passavant: %s %.*s: Host %.*s is not a host name", m, cut, url,
						  (int)(vlen > 200 ? 200 : vlen), val);
				return false;
			}
		}
	} else {
		/* HTTP/1.0 without Host: what the connection went to. */
		(void)snprintf(a, sizeof(a), "%s:%u", dest_host(c, d, sizeof(d)), (unsigned)c->orig->port);
		if (target_parse_connect(a, strlen(a), &h) != NULL) {
			*st = conn_refuse(c, 400, NULL, "request", NULL,
					  "passavant: %s %.*s: no Host field, and the destination names no host", m,
					  cut, url);
			return false;
		}
	}
	/* What the audit and the refusal lines show from here: the Host's
	 * name at the connection's port (h keeps the Host's own port for the
	 * check below). */
	t = h;
	t.port = c->orig->port;
	target_set_authority(&t, 80);
	t.path = url;
	t.path_len = ulen;
	if (conn_target_set(c, &t) < 0) {
		*st = conn_refuse(c, 503, NULL, "request", NULL, "passavant: %s %.*s: out of memory", m, cut, url);
		return false;
	}
	c->ex.have_target = true;
	/*
	 * 421 rather than deciding by Host:port: the connection went to
	 * orig_port, and a Host naming another port (or, at a synthetic
	 * address, another name) says the client and the connection
	 * disagree on where the request goes.
	 */
	if (explicit_port && h.port != c->orig->port) {
		*st = conn_refuse(c, 421, NULL, "request", rule,
				  "passavant: %s http://%s%.*s: Host %.*s names port %u, but %s to port %u", m,
				  c->tgt.authority, cut, url, (int)(vlen > 200 ? 200 : vlen), val, (unsigned)h.port,
				  c->orig->tunnel ? "the CONNECT tunnel is" : "the connection was",
				  (unsigned)c->orig->port);
		return false;
	}
	if (c->orig->name[0] != '\0' && strcmp(h.host, c->orig->name) != 0) {
		if (c->orig->tunnel)
			*st = conn_refuse(c, 421, NULL, "request", rule,
					  "passavant: %s http://%s%.*s: Host names %s, but the CONNECT tunnel is "
					  "to %s",
					  m, c->tgt.authority, cut, url, h.host, c->orig->name);
		else
			*st = conn_refuse(c, 421, NULL, "request", rule,
					  "passavant: %s http://%s%.*s: Host names %s, but the connection went to "
					  "%s, the address handed out for %s",
					  m, c->tgt.authority, cut, url, h.host, c->orig->ip, c->orig->name);
		return false;
	}
	return true;
}

/* ---- the listener --------------------------------------------------------- */

/* Whether ss is in the synthetic ranges the in-sandbox resolver hands
 * out (base/defaults.h). */
static bool synthetic(const struct sockaddr_storage *ss)
{
	static const unsigned char v6[8] = PASSAVANT_SYNTH_V6_PREFIX;

	if (ss->ss_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);

		return a >> (32 - PASSAVANT_SYNTH_V4_PREFIXLEN) ==
		       PASSAVANT_SYNTH_V4_NET >> (32 - PASSAVANT_SYNTH_V4_PREFIXLEN);
	}
	if (ss->ss_family == AF_INET6)
		return memcmp(((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr, v6, sizeof(v6)) == 0;
	return false;
}

/* The address and port of ss as text (no brackets). */
static uint16_t addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		if (inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)len) == NULL)
			(void)snprintf(buf, len, "?");
		return ntohs(s6->sin6_port);
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		if (inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)len) == NULL)
			(void)snprintf(buf, len, "?");
		return ntohs(s4->sin_port);
	}
	(void)snprintf(buf, len, "?");
	return 0;
}

/* Whether a and b are the same address and port. */
static bool same_endpoint(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
	}
	return false;
}

/*
 * One redirected connection: its original destination, refused at once
 * when it cannot be read or is a synthetic address that stands for no
 * name; else a conn in INTERCEPT_SNIFF, given PASSAVANT_INTERCEPT_FIRST_BYTE_MS
 * for its first byte.
 */
static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	intercept_t *ic = arg;
	struct sockaddr_storage orig, self;
	socklen_t olen = sizeof(orig), slen = sizeof(self);
	char ip[INET6_ADDRSTRLEN], shown[INET6_ADDRSTRLEN + 2];
	const char *name = NULL;
	uint16_t port;
	resolver_t *res;
	conn_t *c;
	int r;

	(void)lis;
	proxy_note_churn(ic->px);
	memset(&orig, 0, sizeof(orig));
	/* Both options are 80; the IPv6 one needs the IPv6 level. */
	if (ic->family == AF_INET6)
		r = getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &orig, &olen);
	else
		r = getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &orig, &olen);
	if (r < 0 || (orig.ss_family != AF_INET && orig.ss_family != AF_INET6)) {
		int e = r < 0 ? errno : EAFNOSUPPORT;

		refuse_accept(ic->px, NULL, 0,
			      "passavant: blocked TCP from the sandbox: cannot read the connection's original "
			      "destination (SO_ORIGINAL_DST: %s); the sandbox's nftables redirect must be in place",
			      strerror(e));
		(void)evutil_closesocket(fd);
		return;
	}
	port = addr_text(&orig, ip, sizeof(ip));
	(void)snprintf(shown, sizeof(shown), orig.ss_family == AF_INET6 ? "[%s]" : "%s", ip);
	if (getsockname(fd, (struct sockaddr *)&self, &slen) == 0 && same_endpoint(&orig, &self)) {
		/* Not redirected: a connection made to the listener itself. */
		refuse_accept(ic->px, ip, port,
			      "passavant: blocked TCP %s:%u: that is passavant's interception port itself, "
			      "not a destination",
			      shown, (unsigned)port);
		(void)evutil_closesocket(fd);
		return;
	}
	if (synthetic(&orig)) {
		res = proxy_resolver(ic->px);
		name = res != NULL ? resolver_name_of(res, (const struct sockaddr *)&orig) : NULL;
		if (name == NULL) {
			refuse_accept(ic->px, ip, port,
				      "passavant: blocked TCP %s:%u: passavant's resolver gave this address to no "
				      "name (connect to a name it resolved, not to an address of %s)",
				      shown, (unsigned)port, orig.ss_family == AF_INET6 ? "fd70:6173:7376:1::/64" : "198.18.0.0/15");
			(void)evutil_closesocket(fd);
			return;
		}
	}
	c = conn_new(ic->px, fd, sa, len, false);
	if (c == NULL)
		return;
	c->icpt = ic;
	c->orig = calloc(1, sizeof(*c->orig));
	if (c->orig == NULL) {
		conn_close(c, "out of memory accepting an intercepted connection", true);
		return;
	}
	c->orig->sa = orig;
	(void)snprintf(c->orig->ip, sizeof(c->orig->ip), "%s", ip);
	c->orig->port = port;
	(void)snprintf(c->orig->name, sizeof(c->orig->name), "%s", name != NULL ? name : "");
	conn_set_mode(c, CONN_MODE_RAW);
	conn_set_state(c, CONN_INTERCEPT_SNIFF);
	conn_arm_timer(c, c->head_ms < PASSAVANT_INTERCEPT_FIRST_BYTE_MS ? c->head_ms
									   : PASSAVANT_INTERCEPT_FIRST_BYTE_MS);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	intercept_t *ic = arg;

	(void)fd;
	(void)what;
	if (evconnlistener_enable(ic->lis) < 0)
		log_warnx("cannot re-enable the interception listener");
}

/* Out of descriptors: pause instead of spinning (as proxy.c does). */
static void accept_error_cb(struct evconnlistener *lis, void *arg)
{
	struct timeval tv = {0, PASSAVANT_ACCEPT_PAUSE_MS * 1000};
	intercept_t *ic = arg;
	int err = EVUTIL_SOCKET_ERROR();

	log_warnx("accept (interception): %s", strerror(err));
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		(void)evconnlistener_disable(lis);
		if (event_add(ic->pause, &tv) < 0)
			(void)evconnlistener_enable(lis);
	}
}

intercept_t *intercept_new(proxy_t *px, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int accepting = 0;
	socklen_t alen = sizeof(accepting);
	intercept_t *ic;

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &alen) < 0 || !accepting ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		log_warnx("interception: descriptor %d is not a listening IPv4 or IPv6 socket", fd);
		(void)close(fd);
		return NULL;
	}
	if (evutil_make_socket_nonblocking(fd) < 0 || evutil_make_socket_closeonexec(fd) < 0) {
		log_warn("interception listener");
		(void)close(fd);
		return NULL;
	}
	ic = calloc(1, sizeof(*ic));
	if (ic == NULL) {
		log_warn("interception listener");
		(void)close(fd);
		return NULL;
	}
	ic->px = px;
	ic->family = ss.ss_family;
	ic->hello = tls_hello_ctx_new();
	ic->pause = evtimer_new(proxy_base(px), resume_cb, ic);
	if (ic->hello == NULL || ic->pause == NULL) {
		log_warnx("interception listener: out of memory");
		(void)close(fd);
		intercept_free(ic);
		return NULL;
	}
	/* Backlog 0: the socket is already listening. */
	ic->lis = evconnlistener_new(proxy_base(px), accept_cb, ic, LEV_OPT_CLOSE_ON_FREE, 0, fd);
	if (ic->lis == NULL) {
		log_warnx("cannot adopt the interception listener %d", fd);
		(void)close(fd);
		intercept_free(ic);
		return NULL;
	}
	evconnlistener_set_error_cb(ic->lis, accept_error_cb);
	return ic;
}

void intercept_free(intercept_t *ic)
{
	if (ic == NULL)
		return;
	if (ic->lis != NULL)
		evconnlistener_free(ic->lis);
	if (ic->pause != NULL)
		event_free(ic->pause);
	SSL_CTX_free(ic->hello);
	free(ic);
}

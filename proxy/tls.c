/*
 * tls.c - the proxy's side of TLS termination: the session (CA + upstream
 * verification context), the ClientHello sniff and the two SSL filters.
 * The state machine that uses them is in conn.c; the CA in ca/.
 */
#include "tls.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "../ca/ca.h"
#include "wbio.h"
#include "zone.h"

/* Upstream TLS sessions kept for resumption (tls_wrap_upstream()): one
 * per host:port, the least recently stored replaced when full. */
#define TLS_UP_SESSIONS 256

struct up_session {
	char key[POLICY_HOST_MAX + 8]; /* "host:port", "" when free */
	SSL_SESSION *sess;             /* from a verified handshake; our reference */
	uint64_t stored;               /* when (a counter), for replacement */
};

struct tls_session {
	ca_t *ca;          /* the session CA (leaf contexts per host) */
	SSL_CTX *up_ctx;   /* verifying client context for upstreams, made at first use */
	BIO_METHOD *wbio;  /* the gathering write BIO of TLS on a socket (wbio.h) */
	BIO_METHOD *rbio;  /* its read BIO (wbio.h) */
	BIO_METHOD *fwbio; /* a filter's write BIO (wbio.h) */
	char **extra;      /* extraCaCertPaths (copies), for up_ctx */
	size_t n_extra;
	bool free_buffers; /* this OpenSSL's SSL_free_buffers() is safe (tls_release_buffers()) */
	SSL_CTX *hello;    /* throwaway SSLs read ClientHellos with it (tls_hello_parse()) */
	pthread_mutex_t up_lock;         /* guards up_sessions, up_clock (every loop dials) */
	struct up_session *up_sessions;  /* TLS_UP_SESSIONS entries */
	uint64_t up_clock;
};

/* The ex_data slot of an upstream SSL holding its "host:port" (malloc'd,
 * freed with the SSL), made once. */
static pthread_once_t up_key_once = PTHREAD_ONCE_INIT;
static int up_key_index = -1;

static void up_key_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

static void up_key_index_new(void)
{
	up_key_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, up_key_free);
}

/*
 * A new upstream session (after a handshake, or a TLS 1.3 ticket): kept
 * for its host:port if the chain and name verified, so the next tunnel
 * to it resumes (no certificate chain sent or verified again: about 40%
 * of a new tunnel's proxy CPU, docs/architecture.md "Request cost").
 * Returns 0: the cache keeps a copy, OpenSSL keeps the original.
 */
static int up_session_new_cb(SSL *ssl, SSL_SESSION *sess)
{
	tls_session_t *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	const char *key = up_key_index >= 0 ? SSL_get_ex_data(ssl, up_key_index) : NULL;
	struct up_session *slot = NULL;
	SSL_SESSION *copy;
	bool was;

	if (t == NULL || key == NULL || SSL_get_verify_result(ssl) != X509_V_OK ||
	    SSL_get0_peer_certificate(ssl) == NULL || !SSL_SESSION_is_resumable(sess))
		return 0;
	/* A copy: OpenSSL marks the connection's own session not resumable
	 * when that connection ends without close_notify (as upstreams often
	 * are: ssl_clear_bad_session()), which must not spoil the next one. */
	/* Kept past this connection: not in the upstream zone. */
	was = zone_select(false);
	copy = SSL_SESSION_dup(sess);
	(void)zone_select(was);
	if (copy == NULL)
		return 0;
	(void)pthread_mutex_lock(&t->up_lock);
	for (size_t i = 0; i < TLS_UP_SESSIONS; i++) {
		struct up_session *e = &t->up_sessions[i];

		if (strcmp(e->key, key) == 0) {
			slot = e;
			break;
		}
		if (slot == NULL || e->stored < slot->stored)
			slot = e;
	}
	SSL_SESSION_free(slot->sess);
	(void)snprintf(slot->key, sizeof(slot->key), "%s", key);
	slot->sess = copy;
	slot->stored = ++t->up_clock;
	(void)pthread_mutex_unlock(&t->up_lock);
	return 0; /* the original stays the connection's */
}

/* The upstream context, made at first use: verification (ca/), and the
 * client session cache of up_session_new_cb(). */
static SSL_CTX *up_ctx_of(tls_session_t *t, char *err, size_t errlen)
{
	if (t->up_ctx != NULL)
		return t->up_ctx;
	if (pthread_once(&up_key_once, up_key_index_new) != 0 || up_key_index < 0) {
		(void)snprintf(err, errlen, "out of memory building the upstream TLS context");
		return NULL;
	}
	t->up_ctx = ca_upstream_ctx((const char *const *)t->extra, t->n_extra, err, errlen);
	if (t->up_ctx == NULL)
		return NULL;
	SSL_CTX_set_app_data(t->up_ctx, t);
	(void)SSL_CTX_set_session_cache_mode(t->up_ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->up_ctx, up_session_new_cb);
	return t->up_ctx;
}

/* Offers ssl the session kept for key, if any, and labels ssl with key
 * for up_session_new_cb(). Returns 0 or -1 (out of memory). */
static int up_session_use(tls_session_t *t, SSL *ssl, const char *key)
{
	char *k = strdup(key);

	if (k == NULL || SSL_set_ex_data(ssl, up_key_index, k) != 1) {
		free(k);
		return -1;
	}
	(void)pthread_mutex_lock(&t->up_lock);
	for (size_t i = 0; i < TLS_UP_SESSIONS; i++)
		if (t->up_sessions[i].sess != NULL && strcmp(t->up_sessions[i].key, key) == 0) {
			/* Each connection resumes from its own copy: the one
			 * it is given is marked not resumable if it ends
			 * without close_notify. SSL_set_session() takes its
			 * own reference. */
			SSL_SESSION *copy = SSL_SESSION_dup(t->up_sessions[i].sess);

			if (copy != NULL) {
				(void)SSL_set_session(ssl, copy);
				SSL_SESSION_free(copy);
			}
			break;
		}
	(void)pthread_mutex_unlock(&t->up_lock);
	return 0;
}

/* Before these releases SSL_free_buffers() could free a buffer holding
 * part of a record (CVE-2024-4741). */
static bool free_buffers_safe(void)
{
	unsigned long v = OpenSSL_version_num();

	if (v >= 0x30400000UL)
		return true;
	if (v >= 0x30300000UL)
		return v >= 0x30300010UL; /* 3.3.1 */
	if (v >= 0x30200000UL)
		return v >= 0x30200020UL; /* 3.2.2 */
	if (v >= 0x30100000UL)
		return v >= 0x30100060UL; /* 3.1.6 */
	return v >= 0x300000e0UL; /* 3.0.14 */
}

bool tls_buffers_releasable(const tls_session_t *t)
{
	return t->free_buffers;
}

void tls_release_buffers(const tls_session_t *t, SSL *ssl)
{
	if (t->free_buffers)
		(void)SSL_free_buffers(ssl);
}

/* Longest "*." + host pattern handed to ca_new(). */
#define TLS_PATTERN_MAX (POLICY_HOST_MAX + 3)

/*
 * The session CA's name constraints from the policy's allowed hosts (the
 * mapping of docs/tls.md: ports are not part of a constraint): each
 * pattern written into pats[n], names[n] pointing at it. *any is set by a
 * bare "*". Returns n.
 */
static size_t constraint_names(const policy_t *pol, char (*pats)[TLS_PATTERN_MAX], const char **names,
			       bool *any)
{
	size_t n = 0;

	for (size_t i = 0; i < policy_allowed_count(pol); i++) {
		const struct policy_hostpat *hp = policy_allowed(pol, i);

		switch (hp->kind) {
		case HOSTPAT_ANY:
			*any = true;
			continue;
		case HOSTPAT_WILDCARD:
			(void)snprintf(pats[n], sizeof(pats[n]), "*.%s", hp->host);
			break;
		case HOSTPAT_EXACT:
		case HOSTPAT_IPV4:
		case HOSTPAT_IPV6:
			(void)snprintf(pats[n], sizeof(pats[n]), "%s", hp->host);
			break;
		}
		names[n] = pats[n];
		n++;
	}
	return n;
}

tls_session_t *tls_session_new(const policy_t *pol, const char *session_dir, char *err, size_t errlen)
{
	struct ca_config cfg;
	tls_session_t *t = NULL;
	const char **extra = NULL;
	char (*pats)[TLS_PATTERN_MAX] = NULL;
	const char **names = NULL;
	size_t n_allowed = policy_allowed_count(pol), n_extra = policy_extra_ca_count(pol), i;

	t = calloc(1, sizeof(*t));
	if (t != NULL && pthread_mutex_init(&t->up_lock, NULL) != 0) {
		free(t);
		t = NULL;
	}
	if (t != NULL && (t->up_sessions = calloc(TLS_UP_SESSIONS, sizeof(*t->up_sessions))) == NULL) {
		(void)pthread_mutex_destroy(&t->up_lock);
		free(t);
		t = NULL;
	}
	/* +1: never calloc(0) (may return NULL). */
	pats = calloc(n_allowed + 1, sizeof(*pats));
	names = calloc(n_allowed + 1, sizeof(*names));
	extra = calloc(n_extra + 1, sizeof(*extra));
	if (t == NULL || pats == NULL || names == NULL || extra == NULL) {
		(void)snprintf(err, errlen, "out of memory building the session CA");
		goto fail;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.allowed = names;
	cfg.n_allowed = constraint_names(pol, pats, names, &cfg.allow_any);
	for (i = 0; i < n_extra; i++)
		extra[i] = policy_extra_ca(pol, i);
	t->free_buffers = free_buffers_safe();
	t->ca = ca_new(&cfg, err, errlen);
	if (t->ca == NULL)
		goto fail;
	t->wbio = wbio_method_new();
	t->rbio = rbio_method_new();
	t->fwbio = fwbio_method_new();
	t->hello = tls_hello_ctx_new();
	if (t->wbio == NULL || t->rbio == NULL || t->fwbio == NULL || t->hello == NULL) {
		(void)snprintf(err, errlen, "out of memory building the TLS read and write methods");
		goto fail;
	}
	/* trust.pem also checks every extra file (an error names it): the
	 * upstream context, made at the first upstream connection (a `run`
	 * whose command never connects does not pay for it), reads the same
	 * files. */
	if (ca_write_files(t->ca, session_dir, extra, n_extra, err, errlen) < 0)
		goto fail;
	t->extra = calloc(n_extra + 1, sizeof(*t->extra));
	if (t->extra == NULL) {
		(void)snprintf(err, errlen, "out of memory building the session CA");
		goto fail;
	}
	t->n_extra = n_extra; /* entries not yet copied are NULL: free() is fine */
	for (i = 0; i < n_extra; i++) {
		t->extra[i] = strdup(extra[i]);
		if (t->extra[i] == NULL) {
			(void)snprintf(err, errlen, "out of memory building the session CA");
			goto fail;
		}
	}
	free(pats);
	free(names);
	free(extra);
	return t;
fail:
	tls_session_free(t);
	free(pats);
	free(names);
	free(extra);
	return NULL;
}

void tls_session_free(tls_session_t *t)
{
	if (t == NULL)
		return;
	ca_free(t->ca);
	for (size_t i = 0; t->up_sessions != NULL && i < TLS_UP_SESSIONS; i++)
		SSL_SESSION_free(t->up_sessions[i].sess);
	free(t->up_sessions);
	(void)pthread_mutex_destroy(&t->up_lock);
	SSL_CTX_free(t->up_ctx);
	SSL_CTX_free(t->hello);
	wbio_method_free(t->wbio);
	wbio_method_free(t->rbio);
	wbio_method_free(t->fwbio);
	for (size_t i = 0; t->extra != NULL && i < t->n_extra; i++)
		free(t->extra[i]);
	free(t->extra);
	free(t);
}

enum tls_sniff tls_sniff(const unsigned char *p, size_t n)
{
	/* TLS record header: content type 22 (handshake), then the legacy
	 * record version 3.x; x is 0 (SSL 3.0 framing some clients use for
	 * the first record) to 4. */
	if (n >= 1 && p[0] != 0x16)
		return TLS_SNIFF_OTHER;
	if (n >= 2 && p[1] != 0x03)
		return TLS_SNIFF_OTHER;
	if (n >= 3)
		return p[2] <= 0x04 ? TLS_SNIFF_TLS : TLS_SNIFF_OTHER;
	return TLS_SNIFF_MORE;
}

/* One line from OpenSSL's error queue (or a fallback) appended to err. */
static void ossl_reason(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	if (e != 0) {
		ERR_error_string_n(e, buf, sizeof(buf));
		(void)snprintf(err, errlen, "%s: %s", what, buf);
	} else {
		(void)snprintf(err, errlen, "%s", what);
	}
	ERR_clear_error();
}

/*
 * Hands ssl to a new filter over under. libevent takes ssl whether or not
 * it succeeds (BEV_OPT_CLOSE_ON_FREE, STYLE.md 4): never free it here.
 *
 * Why the input is set aside: libevent starts the handshake inside
 * bufferevent_openssl_filter_new(); if a ClientHello pipelined behind the
 * CONNECT head is already in under's input and is malformed, the
 * handshake fails right there, libevent frees the half-built filter and,
 * with it, under, and reports the error to callbacks nobody has set yet.
 * With an empty input the handshake only asks for more (accepting) or
 * writes the ClientHello (connecting). The bytes are put back afterwards
 * and the filter's read path is triggered (deferred, so from the loop, not
 * from inside this call): pipelined bytes survive and a failure arrives as
 * BEV_EVENT_ERROR on the filter like any other.
 *
 * On NULL *under_lost is true: after a failure past the point where
 * libevent adopted under it has been freed, before it it has not, and the
 * two cannot be told apart from here; forgetting it can only leak (on
 * ENOMEM), never free twice.
 */
static struct bufferevent *filter(tls_session_t *t, struct event_base *base, struct bufferevent *under,
				  SSL *ssl, enum bufferevent_ssl_state state, bool *under_lost)
{
	struct evbuffer *in = bufferevent_get_input(under), *saved;
	struct bufferevent *bev;
	BIO *writer;
	size_t pending = evbuffer_get_length(in);

	*under_lost = false;
	saved = evbuffer_new();
	if (saved == NULL) {
		SSL_free(ssl); /* not handed over yet */
		return NULL;
	}
	if (pending > 0 && evbuffer_add_buffer(saved, in) < 0) {
		SSL_free(ssl);
		evbuffer_free(saved);
		return NULL;
	}
	/*
	 * Deferred callbacks: a filter reads from under's input as soon as
	 * reading is re-enabled, which an evbuffer_drain() of the filter's
	 * input does from inside conn_drive() (libevent's watermark
	 * callback); its event callback would then re-enter conn_drive() and could
	 * free the conn under the outer call.
	 */
	bev = bufferevent_openssl_filter_new(base, under, ssl, state,
					     BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		*under_lost = true;
		evbuffer_free(saved);
		return NULL;
	}
	/* Records go to under whole (wbio.h: a held record and a KeyUpdate
	 * lost the connection). libevent's BIO stays the read BIO; the
	 * handshake's buffering BIO, if pushed, moves onto the new one. */
	writer = fwbio_new(t->fwbio, under);
	if (writer == NULL) {
		bufferevent_free(bev); /* with ssl and under */
		*under_lost = true;
		evbuffer_free(saved);
		return NULL;
	}
	SSL_set0_wbio(ssl, writer);
	/* A peer that closes without close_notify ends the stream like EOF
	 * (the HTTP framing above decides whether that cut a message). */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	if (pending > 0) {
		if (evbuffer_prepend_buffer(in, saved) < 0) {
			/* The ClientHello is lost: the handshake times out. */
			evbuffer_free(saved);
			return bev;
		}
		bufferevent_trigger(under, EV_READ, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
	evbuffer_free(saved);
	return bev;
}

/*
 * TLS directly on under's socket when nothing is buffered in under (no
 * second buffer layer: two copies fewer per byte, no filter chains): the
 * socket is taken from under, which is freed without closing it. Returns
 * the SSL bufferevent, or NULL: with *under_lost false when this is not
 * possible (bytes buffered; ssl still the caller's), true when it failed
 * after under was freed (ssl and the socket went with the failure).
 */
static struct bufferevent *on_socket(tls_session_t *t, struct event_base *base, struct bufferevent *under,
				     SSL *ssl, enum bufferevent_ssl_state state, bool *under_lost)
{
	struct bufferevent *bev;
	evutil_socket_t fd = bufferevent_getfd(under);
	BIO *rb, *wb;

	*under_lost = false;
	if (fd < 0 || evbuffer_get_length(bufferevent_get_input(under)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(under)) > 0)
		return NULL;
	/*
	 * Records are read straight from the socket and written through the
	 * gathering BIO (wbio.h); libevent finds the socket through it.
	 * OpenSSL's work on a connection starts with a read or a write of one
	 * of its BIOs (a handshake flight, a record): what it allocates from
	 * there until another connection's BIO is used is that connection's.
	 * Both BIOs point the thread's OpenSSL and libevent allocations at the
	 * upstream zone (an upstream's, dialled: CONNECTING) or back at
	 * malloc() (a client's) (zone.h): the upstream half of a tunnel, which
	 * goes long before the client half, then lies in pages of its own.
	 */
	rb = rbio_new(t->rbio, fd, state == BUFFEREVENT_SSL_CONNECTING);
	wb = wbio_new(t->wbio, base, fd);
	if (rb == NULL || wb == NULL) {
		BIO_free(rb);
		BIO_free(wb);
		return NULL;
	}
	if (bufferevent_setfd(under, -1) < 0) {
		BIO_free(rb);
		BIO_free(wb);
		return NULL;
	}
	wbio_set_zone(wb, state == BUFFEREVENT_SSL_CONNECTING);
	wbio_set_ssl(wb, ssl);
	SSL_set_bio(ssl, rb, wb);
	/* sockio_send() writes small messages itself; should OpenSSL tell it
	 * to retry one, libevent retries it from its own buffer (libevent
	 * 2.1.12 sets this mode too; said here, where it is relied on). */
	(void)SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	bufferevent_free(under);
	*under_lost = true;
	bev = bufferevent_openssl_socket_new(base, fd, ssl, state, BEV_OPT_CLOSE_ON_FREE);
	if (bev != NULL) {
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
		wbio_set_bufferevent(wb, bev);
	}
	return bev;
}

struct bufferevent *tls_wrap_client(tls_session_t *t, struct event_base *base,
				    struct bufferevent *under, const char *host, bool h2, bool *under_lost,
				    char *err, size_t errlen)
{
	SSL_CTX *ctx;
	SSL *ssl;
	struct bufferevent *bev;

	*under_lost = false;
	/* The client half, and a leaf kept for later tunnels: malloc(). */
	(void)zone_select(false);
	ctx = ca_leaf_ctx(t->ca, host, err, errlen);
	if (ctx == NULL)
		return NULL;
	ssl = SSL_new(ctx);
	/* The SSL holds its own reference to the context. */
	SSL_CTX_free(ctx);
	if (ssl == NULL) {
		ossl_reason(err, errlen, "SSL_new");
		return NULL;
	}
	if (h2 && ca_ssl_allow_h2(ssl) < 0) {
		ossl_reason(err, errlen, "cannot allow h2");
		SSL_free(ssl);
		return NULL;
	}
	/* Suites, buffer release and tickets are the leaf context's
	 * (ca_server_ctx()). */
	bev = on_socket(t, base, under, ssl, BUFFEREVENT_SSL_ACCEPTING, under_lost);
	if (bev != NULL || *under_lost) {
		if (bev == NULL)
			(void)snprintf(err, errlen, "cannot create the TLS bufferevent (out of memory)");
		return bev;
	}
	bev = filter(t, base, under, ssl, BUFFEREVENT_SSL_ACCEPTING, under_lost);
	if (bev == NULL)
		(void)snprintf(err, errlen, "cannot create the TLS filter (out of memory)");
	return bev;
}

int tls_session_prepare(tls_session_t *t, char *err, size_t errlen)
{
	return up_ctx_of(t, err, errlen) != NULL ? 0 : -1;
}

static struct bufferevent *wrap_upstream(tls_session_t *t, struct event_base *base, struct bufferevent *under,
					 const char *host, uint16_t port, bool is_ip, bool h2, bool *under_lost,
					 char *err, size_t errlen)
{
	char key[POLICY_HOST_MAX + 8];
	static const unsigned char alpn_h2[] = "\x02h2\x08http/1.1";
	struct bufferevent *bev;
	SSL *ssl;
	int ok;

	*under_lost = false;
	if (up_ctx_of(t, err, errlen) == NULL)
		return NULL;
	ssl = SSL_new(t->up_ctx);
	if (ssl == NULL) {
		ossl_reason(err, errlen, "SSL_new");
		return NULL;
	}
	/* SNI carries DNS names only (RFC 6066 §3); an IP literal is checked
	 * against the certificate's IP SANs instead of a name. */
	if (is_ip)
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1;
	else
		ok = SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
	/* The context offers http/1.1; h2 first when the client offered it. */
	if (ok && h2)
		ok = SSL_set_alpn_protos(ssl, alpn_h2, sizeof(alpn_h2) - 1) == 0;
	(void)snprintf(key, sizeof(key), "%s:%u", host, (unsigned)port);
	if (ok)
		ok = up_session_use(t, ssl, key) == 0;
	if (!ok) {
		ossl_reason(err, errlen, "cannot set the upstream name check or ALPN");
		SSL_free(ssl);
		return NULL;
	}
	/*
	 * Nothing was read from a fresh upstream: TLS can run on its socket
	 * directly (no second buffer layer, two copies fewer per byte). The
	 * socket is taken from under, which is then freed without closing
	 * it. A filter remains the fallback when under holds bytes.
	 */
	bev = on_socket(t, base, under, ssl, BUFFEREVENT_SSL_CONNECTING, under_lost);
	if (bev != NULL || *under_lost) {
		if (bev == NULL)
			(void)snprintf(err, errlen, "cannot create the TLS bufferevent (out of memory)");
		return bev;
	}
	bev = filter(t, base, under, ssl, BUFFEREVENT_SSL_CONNECTING, under_lost);
	if (bev == NULL)
		(void)snprintf(err, errlen, "cannot create the TLS filter (out of memory)");
	return bev;
}

struct bufferevent *tls_wrap_upstream(tls_session_t *t, struct event_base *base,
				      struct bufferevent *under, const char *host, uint16_t port, bool is_ip,
				      bool h2, bool *under_lost, char *err, size_t errlen)
{
	struct bufferevent *bev;
	bool was;

	/* The context lives as long as the session: made outside the zone. */
	*under_lost = false;
	if (up_ctx_of(t, err, errlen) == NULL)
		return NULL;
	/* The SSL object, the resumed session's copy and the ClientHello's
	 * key share are the upstream half's (zone.h). */
	was = zone_select(true);
	bev = wrap_upstream(t, base, under, host, port, is_ip, h2, under_lost, err, errlen);
	(void)zone_select(was);
	return bev;
}

bool tls_failure_reason(struct bufferevent *bev, char *buf, size_t len)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	unsigned long e, first = 0;
	bool syscall = false;
	long vr;

	/*
	 * Drain libevent's queue, popped newest first. libevent 2.1 queues
	 * SSL_get_error()'s code (SSL_ERROR_SSL, SSL_ERROR_SYSCALL: no
	 * library in its bits) before OpenSSL's own errors: the reason is
	 * the oldest of those (reporting the code gave "error:00000001:
	 * lib(0)::reason(1)" for every failure).
	 */
	while ((e = bufferevent_get_openssl_error(bev)) != 0) {
		if (ERR_GET_LIB(e) != 0)
			first = e;
		else if (e == SSL_ERROR_SYSCALL)
			syscall = true;
	}
	if (ssl != NULL && (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		(void)snprintf(buf, len, "certificate verify failed: %s",
			       X509_verify_cert_error_string(vr));
		return true;
	}
	if (first != 0) {
		char s[256];

		ERR_error_string_n(first, s, sizeof(s));
		(void)snprintf(buf, len, "TLS error: %s", s);
		return false;
	}
	(void)snprintf(buf, len, syscall ? "the connection was closed or reset during the TLS handshake"
					 : "connection closed during the TLS handshake");
	return false;
}

bool tls_peer_verified(struct bufferevent *bev)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	X509 *peer;

	if (ssl == NULL || SSL_get_verify_result(ssl) != X509_V_OK)
		return false;
	peer = SSL_get1_peer_certificate(ssl);
	if (peer == NULL)
		return false;
	X509_free(peer);
	return true;
}

bool tls_client_sni(struct bufferevent *bev, char *buf, size_t len, const char **raw)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	const char *sni;

	*raw = NULL;
	if (ssl == NULL || (sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) == NULL)
		return false;
	*raw = sni;
	if (len < POLICY_HOST_MAX + 1 || policy_host_normalize(sni, strlen(sni), buf, len) != NULL)
		(void)snprintf(buf, len, "%s", sni);
	return true;
}

bool tls_alpn_h2(struct bufferevent *bev)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	const unsigned char *p = NULL;
	unsigned int n = 0;

	if (ssl == NULL)
		return false;
	SSL_get0_alpn_selected(ssl, &p, &n);
	return n == 2 && memcmp(p, "h2", 2) == 0;
}

/* ---- the ClientHello ---------------------------------------------------- */

enum tls_hello_state tls_hello_complete(const unsigned char *p, size_t n, size_t *msglen)
{
	size_t off = 0, have = 0, hl = 0;
	unsigned char hh[4];

	*msglen = 0;
	while (off + 5 <= n) {
		size_t rl = (size_t)p[off + 3] << 8 | p[off + 4], avail;

		if (p[off] != 0x16 || p[off + 1] != 0x03 || rl == 0)
			return TLS_HELLO_BAD;
		avail = n - off - 5 < rl ? n - off - 5 : rl;
		for (size_t i = 0; hl < 4 && i < avail; i++)
			hh[hl++] = p[off + 5 + i];
		have += avail;
		if (hl == 4 && *msglen == 0) {
			if (hh[0] != 1) /* not a ClientHello */
				return TLS_HELLO_BAD;
			*msglen = 4 + ((size_t)hh[1] << 16 | (size_t)hh[2] << 8 | hh[3]);
		}
		if (*msglen != 0 && have >= *msglen)
			return TLS_HELLO_DONE;
		if (avail < rl)
			return TLS_HELLO_MORE;
		off += 5 + rl;
	}
	return TLS_HELLO_MORE;
}

/*
 * OpenSSL's ClientHello callback on the throwaway SSL of
 * tls_hello_parse(): reads the server_name extension (RFC 6066 §3: a list
 * length, then entries of type, length, name; only host_name (0) is
 * defined) and whether the ALPN list names h2, then suspends the
 * handshake. The parsing of the hello itself (lengths, extensions, their
 * duplicates) is OpenSSL's.
 */
static int hello_cb(SSL *s, int *al, void *arg)
{
	struct tls_hello *h = SSL_get_app_data(s);
	const unsigned char *p;
	size_t len, ll, nl, ntypes = 0;
	int *types = NULL;

	(void)al;
	(void)arg;
	h->parsed = true;
	if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_application_layer_protocol_negotiation, &p, &len) == 1 &&
	    len >= 2 && ((size_t)p[0] << 8 | p[1]) == len - 2) {
		for (size_t i = 2; i < len && p[i] != 0 && p[i] <= len - i - 1; i += (size_t)p[i] + 1)
			if (p[i] == 2 && memcmp(p + i + 1, "h2", 2) == 0)
				h->offers_h2 = true;
	}
	/* encrypted_client_hello (0xfe0d) and its draft ESNI (0xffce): the
	 * name the server routes by is not the one in clear. OpenSSL drops
	 * an extension it does not know: tls_hello_ctx_new() registers
	 * these two, so they are listed. */
	if (SSL_client_hello_get1_extensions_present(s, &types, &ntypes) == 1) {
		for (size_t i = 0; i < ntypes; i++)
			if (types[i] == 0xfe0d || types[i] == 0xffce)
				h->hides_name = true;
		OPENSSL_free(types);
	} else {
		h->hides_name = true; /* unknown: the worse case */
	}
	if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &p, &len) != 1)
		return SSL_CLIENT_HELLO_RETRY;
	/* one host_name entry, nothing after it (round 31's review: a second
	 * entry, unread, went to the server) */
	if (len < 5 || (ll = (size_t)p[0] << 8 | p[1]) != len - 2 || p[2] != 0 ||
	    (nl = (size_t)p[3] << 8 | p[4]) == 0 || nl != len - 5 || nl >= sizeof(h->sni) ||
	    memchr(p + 5, '\0', nl) != NULL) {
		h->bad_sni = true;
		return SSL_CLIENT_HELLO_RETRY;
	}
	memcpy(h->sni, p + 5, nl);
	h->sni[nl] = '\0';
	h->has_sni = true;
	return SSL_CLIENT_HELLO_RETRY;
}

SSL_CTX *tls_hello_ctx_new(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL)
		return NULL;
	SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);
	if (SSL_CTX_add_custom_ext(ctx, 0xfe0d, SSL_EXT_CLIENT_HELLO, NULL, NULL, NULL, NULL, NULL) != 1 ||
	    SSL_CTX_add_custom_ext(ctx, 0xffce, SSL_EXT_CLIENT_HELLO, NULL, NULL, NULL, NULL, NULL) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int tls_hello_parse(SSL_CTX *ctx, const unsigned char *p, size_t n, struct tls_hello *h)
{
	SSL *s = SSL_new(ctx);
	BIO *rb = NULL, *wb = NULL;

	memset(h, 0, sizeof(*h));
	if (s == NULL || n > INT_MAX)
		goto out;
	rb = BIO_new_mem_buf(p, (int)n);
	wb = BIO_new(BIO_s_mem());
	if (rb == NULL || wb == NULL) {
		BIO_free(rb);
		BIO_free(wb);
		goto out;
	}
	SSL_set_bio(s, rb, wb); /* s owns both */
	SSL_set_app_data(s, h);
	SSL_set_accept_state(s);
	(void)SSL_do_handshake(s);
out:
	SSL_free(s);
	ERR_clear_error();
	return h->parsed ? 0 : -1;
}

SSL_CTX *tls_hello_ctx(tls_session_t *t)
{
	return t->hello;
}

/*
 * tls.h - TLS termination for the proxy (SPEC §5 TLS, §3.1 tlsTerminate,
 * docs/tls.md): the session's CA and upstream verification context, the
 * ClientHello sniff after an allowed CONNECT, the server-side SSL filter
 * over the client's bufferevent and the verifying client-side SSL filter
 * over the upstream's.
 *
 * A tls_session_t is built once at start-up (setup code, not from
 * callbacks) and then only read from the event loop. The wrap functions
 * may be called from callbacks.
 */
#ifndef PASSAVANT_TLS_H
#define PASSAVANT_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "../policy/policy.h"
#include "base/attrib.h"

typedef struct tls_session tls_session_t;
struct ssl_st;
typedef struct ssl_ctx_st SSL_CTX;

/*
 * Generates the session CA from the policy's allowedDomains (name
 * constraints, docs/tls.md), writes ca.pem and trust.pem into the existing
 * directory session_dir (trust.pem: the CA, the system roots and every
 * extraCaCertPaths file; never a private key) and builds the upstream
 * verification context (system roots plus extraCaCertPaths). Returns the
 * session (caller frees with tls_session_free()), or NULL with one line in
 * err. Setup code: not from callbacks.
 */
tls_session_t *tls_session_new(const policy_t *pol, const char *session_dir, char *err, size_t errlen)
	NONNULL(1, 2) WUNRES;

/*
 * Builds the upstream verification context now rather than at the first
 * upstream handshake (it is made lazily, which only one thread may do):
 * the proxy calls it before starting several event loops. Returns 0, or
 * -1 with one line in err. Setup code.
 */
int tls_session_prepare(tls_session_t *t, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* Frees the session: the CA (its key wiped) and the upstream context.
 * Connections still holding SSLs keep their own references. NULL: no-op. */
void tls_session_free(tls_session_t *t);

/* What the first bytes a client sent after "200 Connection Established"
 * look like. */
enum tls_sniff {
	TLS_SNIFF_MORE,  /* too few bytes to tell (a prefix of a TLS record header) */
	TLS_SNIFF_TLS,   /* a TLS handshake record header: 0x16 0x03 0x00-0x04 */
	TLS_SNIFF_OTHER  /* anything else (plain HTTP, SSH, ...) */
};

/* Classifies the first n bytes of a tunnel. Pure. */
enum tls_sniff tls_sniff(const unsigned char *p, size_t n) NONNULL(1);

/*
 * Layers a server-side TLS filter over the client's bufferevent under, in
 * the accepting state, presenting a leaf minted by the session CA for host
 * (the normalised CONNECT host). Bytes already in under's input (a
 * ClientHello pipelined behind the CONNECT head) are read by the handshake,
 * which starts at once. TLS buffers are released while idle
 * (SSL_MODE_RELEASE_BUFFERS).
 *
 * Returns the TLS bufferevent: when under holds no bytes, TLS runs on its
 * socket directly (under is freed, its socket kept, the result is a socket
 * SSL bufferevent); otherwise a filter that now owns under
 * (BEV_OPT_CLOSE_ON_FREE): freeing it frees under. ALPN selects h2 when h2
 * is true (the upstream negotiated it) and the client offers it, else
 * http/1.1 (ca_ssl_allow_h2()). On failure returns NULL with one line in
 * err and *under_lost tells whether under must be forgotten (true when
 * libevent failed after under was handed to it: it may or may not have
 * freed it, so the caller must not touch it again; it may leak on ENOMEM,
 * it is never freed twice). False: under is untouched and still the
 * caller's. From callbacks: yes (the handshake of bytes already in under's
 * input runs from a deferred callback, never inside this call).
 */
struct bufferevent *tls_wrap_client(tls_session_t *t, struct event_base *base,
				    struct bufferevent *under, const char *host, bool h2, bool *under_lost,
				    char *err, size_t errlen) NONNULL(1, 2, 3, 4, 6) WUNRES;

/*
 * Layers a client-side TLS filter over the connected upstream bufferevent
 * under, in the connecting state: SNI = host (DNS names only), host name
 * check with SSL_set1_host (or the IP address check for an IP literal),
 * chain verified against the system roots plus extraCaCertPaths. The
 * ClientHello goes out at once; BEV_EVENT_CONNECTED on the filter means
 * the chain and name verified, BEV_EVENT_ERROR a failure
 * (tls_failure_reason() says which). When under holds no bytes (a fresh
 * connection), TLS runs on its socket directly: under is freed (its
 * socket kept) and the result is a socket SSL bufferevent, not a filter.
 * A session kept from an earlier verified handshake with host:port is
 * offered for resumption (TLS 1.3 tickets, TLS 1.2 session IDs).
 * Ownership as tls_wrap_client(): on success under belongs to (or was
 * replaced by) the result; on NULL, *under_lost says whether it is gone.
 */
struct bufferevent *tls_wrap_upstream(tls_session_t *t, struct event_base *base,
				      struct bufferevent *under, const char *host, uint16_t port, bool is_ip,
				      bool h2, bool *under_lost, char *err, size_t errlen)
	NONNULL(1, 2, 3, 4, 8) WUNRES;

/* Whether the TLS bufferevent bev negotiated ALPN h2 (its handshake done). */
bool tls_alpn_h2(struct bufferevent *bev) NONNULL(1);

/* Whether bytes hold a whole ClientHello (tls_hello_complete()). */
enum tls_hello_state {
	TLS_HELLO_MORE, /* a prefix of one: wait */
	TLS_HELLO_DONE, /* whole */
	TLS_HELLO_BAD   /* not TLS handshake records, or not a ClientHello */
};

/*
 * Reads the framing of p[0..n): TLS records of type handshake whose
 * payloads, put together, hold the 4-byte handshake header (type 1) and
 * the body it announces (*msglen: header included, 0 while unknown).
 * Only the framing is read; OpenSSL parses the hello (tls_hello_parse()).
 * Pure.
 */
enum tls_hello_state tls_hello_complete(const unsigned char *p, size_t n, size_t *msglen)
	NONNULL(1, 3);

/* What a ClientHello says. */
struct tls_hello {
	bool parsed;                   /* OpenSSL parsed a ClientHello */
	bool has_sni;                  /* it carried a host_name server name */
	bool bad_sni;                  /* a server_name extension we cannot read */
	bool offers_h2;                /* its ALPN list names h2 */
	bool hides_name;               /* it offers encrypted_client_hello (or
					  ESNI): the server may route by a name
					  not in clear */
	char sni[POLICY_HOST_MAX + 1]; /* the name as sent (NUL-terminated) */
};

/*
 * Runs a throwaway server-side SSL of ctx (tls_hello_ctx_new()) over the
 * whole ClientHello p[0..n) (read, not consumed) up to its ClientHello
 * callback. Returns 0 when OpenSSL parsed a ClientHello (*h filled), -1
 * when it is not one or out of memory. From callbacks: yes.
 */
int tls_hello_parse(SSL_CTX *ctx, const unsigned char *p, size_t n, struct tls_hello *h)
	NONNULL(1, 2, 4) WUNRES;

/* A context for tls_hello_parse() (NULL: out of memory); the session's. */
SSL_CTX *tls_hello_ctx_new(void) WUNRES;
SSL_CTX *tls_hello_ctx(tls_session_t *t) NONNULL(1);

/*
 * After a BEV_EVENT_ERROR on a TLS bufferevent: one line saying why, e.g.
 * "certificate verify failed: unable to get local issuer certificate" when
 * the peer's certificate did not verify (X509_verify_cert_error_string();
 * returns true), else the oldest OpenSSL error queued on the bufferevent
 * ("TLS error: error:0A00010B:SSL routines::wrong version number"), else
 * whether the connection was closed or reset. Drains the bufferevent's
 * error queue. From callbacks: yes.
 */
bool tls_failure_reason(struct bufferevent *bev, char *buf, size_t len) NONNULL(1, 2);

/* Whether the peer's certificate verified (an upstream filter after its
 * handshake). */
bool tls_peer_verified(struct bufferevent *bev) NONNULL(1);

/*
 * The SNI the client sent on a server-side filter, normalised (lower case,
 * no trailing dot) into buf; returns false when it sent none (clients send
 * none for IP literals). A name that does not normalise is returned as
 * sent, truncated, so it compares unequal. *raw gets the name as sent
 * (OpenSSL's, valid while the connection's SSL is), for a search that
 * normalising would defeat. From callbacks: yes.
 */
bool tls_client_sni(struct bufferevent *bev, char *buf, size_t len, const char **raw) NONNULL(1, 2, 4);

/*
 * Frees the record buffers of ssl (handshake done) unless they hold bytes
 * not yet processed. SSL_MODE_RELEASE_BUFFERS frees the read buffer only
 * after a record was consumed; the SSL_read() that then found the socket
 * empty (or read only a session ticket) allocated it again, 16.5 KiB with
 * read-ahead, kept as long as the tunnel stays idle. Does nothing with an
 * OpenSSL whose SSL_free_buffers() could free a partly read record
 * (CVE-2024-4741; decided once, in tls_session_new()).
 */
void tls_release_buffers(const tls_session_t *t, struct ssl_st *ssl) NONNULL(1, 2);
/* Whether tls_release_buffers() frees anything with this OpenSSL. */
bool tls_buffers_releasable(const tls_session_t *t) NONNULL(1);

#endif

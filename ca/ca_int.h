/*
 * ca_int.h - declarations shared by the files of ca/ and its unit tests.
 * Not a public header: nothing outside ca/ and tests/unit/ca/ includes it
 * (STYLE.md 16). The public face is ca.h.
 */
#ifndef PASSAVANT_CA_INT_H
#define PASSAVANT_CA_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/attrib.h"
#include "base/errbuf.h"
#include "ca.h"

/* Longest DNS name without the trailing dot (RFC 1035), as policy/. */
#define CA_HOST_MAX 253

/* ------------------------------------------------------------ errors */

/* errbuf_set() (base/errbuf.h), followed by ": " and the oldest queued OpenSSL error (or "no
 * OpenSSL detail"); then clears the OpenSSL error queue. */
void ca_ssl_err(char *err, size_t errlen, const char *fmt, ...) PRINTF(3, 4);

/* ------------------------------------------------------------ forge.c */

enum ca_host_kind { CA_HOST_DNS, CA_HOST_IPV4, CA_HOST_IPV6 };

/* A parsed host: a lower-case DNS name without trailing dot, or an IP
 * literal in canonical text (inet_ntop) plus its bytes. */
struct ca_host {
	enum ca_host_kind kind;
	char text[CA_HOST_MAX + 1];
	unsigned char addr[16];
	size_t addrlen; /* 4 or 16 for IP literals, 0 for names */
};

/*
 * Parses and normalises a host: IPv4 dotted quad, IPv6 (brackets
 * accepted), or a DNS name of letters, digits, '-', '_' in labels of 1-63
 * bytes. Returns NULL on success, else a static message saying why not.
 */
const char *ca_host_parse(const char *in, struct ca_host *out) NONNULL(1, 2) WUNRES;

/* Sets a random positive 128-bit serial on x. Returns 0 or -1 (OpenSSL
 * error queued). */
int forge_set_serial(X509 *x) NONNULL(1) WUNRES;

/*
 * Adds an extension built from OpenSSL's configuration syntax (for fixed,
 * trusted strings such as "critical,CA:TRUE,pathlen:0" or "hash": never a
 * host name). issuer may be x itself. Returns 0 or -1 (OpenSSL error
 * queued).
 */
int forge_add_conf_ext(X509 *x, X509 *issuer, int nid, const char *value) NONNULL(1, 2, 4) WUNRES;

/*
 * Builds and signs a leaf for host with the CA: SAN DNS or IP (built as
 * GENERAL_NAMEs, never through a configuration string), EKU serverAuth,
 * keyUsage digitalSignature, CA:FALSE, SKI/AKI, random serial, notBefore
 * one hour ago, notAfter the CA's. Pure apart from the RNG and the clock:
 * it does not check the host against anything. Returns a new X509 the
 * caller frees, or NULL (message in err).
 */
X509 *forge_leaf(X509 *ca_cert, EVP_PKEY *ca_key, EVP_PKEY *leaf_key, const struct ca_host *host,
		 char *err, size_t errlen) NONNULL(1, 2, 3, 4) WUNRES;

/* ------------------------------------------------------------ leafcache.c */

struct leafcache;

/* A cache of at most cap entries (cap >= 1), safe to use from several
 * threads (one lock). Caller frees. NULL on ENOMEM. */
struct leafcache *leafcache_new(size_t cap) WUNRES MALLOC;
/* Drops the cache's reference on every entry. NULL is a no-op. */
void leafcache_free(struct leafcache *lc);
/* The entry for key with a new reference for the caller (taken under the
 * lock, so a concurrent eviction cannot free it first), marked most
 * recently used; NULL when absent. */
SSL_CTX *leafcache_get(struct leafcache *lc, const char *key) NONNULL(1, 2);
/*
 * Inserts ctx under key, taking over the caller's reference; evicts the
 * least recently used entry when full. When key is already there (another
 * thread forged the same host meanwhile) that entry stays and the given
 * reference is dropped. Returns 0, or -1 on ENOMEM (then the reference is
 * still the caller's).
 */
int leafcache_put(struct leafcache *lc, const char *key, SSL_CTX *ctx) NONNULL(1, 2, 3) WUNRES;
/* Number of entries and evictions so far. */
size_t leafcache_count(struct leafcache *lc) NONNULL(1);
size_t leafcache_evictions(struct leafcache *lc) NONNULL(1);

/* ------------------------------------------------------------ ca.c */


/* TLS 1.3 suites in our order of preference, for the leaf contexts and the
 * upstream context alike: the proxy encrypts and decrypts every byte
 * twice, so the cheapest suite with AES hardware (AES-128-GCM) first,
 * ChaCha20 for a client that prefers it (no AES hardware,
 * SSL_OP_PRIORITIZE_CHACHA). Set on the context, not per SSL: a per-SSL
 * list is two cipher stacks copied per connection. */
#define CA_TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"
/* TLS 1.2: OpenSSL's DEFAULT set (DEFAULT is "ALL:!COMPLEMENTOFDEFAULT:
 * !eNULL"), the ECDHE AEAD suites first, AES-128-GCM before AES-256-GCM as
 * for TLS 1.3 above: the same security level, about a fifth less CPU per
 * byte for both ends (OpenSSL's own default puts AES-256 first). */
#define CA_TLS12_CIPHERS "ECDHE+AESGCM+AES128:ECDHE+AESGCM:ECDHE+CHACHA20:ALL:!COMPLEMENTOFDEFAULT:!eNULL"
/* OpenSSL's read buffer with read-ahead: four full records per read()
 * (the proxy decrypts the buffered ones itself: proxy/sockio.c, sockio_pull_tls()). */
#define CA_TLS_READ_AHEAD_BYTES (4 * (16384 + 256))

/*
 * The server SSL_CTX for a leaf (TLS 1.2+, ALPN http/1.1 or h2, the shared leaf
 * key). Takes its own references on leaf and key. Returns a new SSL_CTX the
 * caller frees, or NULL.
 */
SSL_CTX *ca_server_ctx(X509 *leaf, EVP_PKEY *key, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/*
 * Tests only: forges a leaf for any well-formed host with the session CA,
 * bypassing ca_host_permitted(), and returns a server SSL_CTX serving it
 * (caller SSL_CTX_free()s). The CA key itself stays inside.
 */
SSL_CTX *ca_forge_ctx_unchecked(ca_t *ca, const char *host, char *err, size_t errlen)
	NONNULL(1, 2) WUNRES;

/* Number of leaves in the cache and evictions so far (tests). */
size_t ca_cache_count(const ca_t *ca) NONNULL(1);
size_t ca_cache_evictions(const ca_t *ca) NONNULL(1);

/* ------------------------------------------------------------ trust.c */

/*
 * The system root bundle: $SSL_CERT_FILE when set, else OpenSSL's default
 * certificate file, else the Debian path. Static string.
 */
const char *trust_system_bundle(void);

/*
 * Writes data to path (absolute) atomically: a temporary ".NAME.XXXXXX"
 * in the same directory (same file system, so rename() is atomic), its
 * mode set with fchmod (mkstemp creates 0600), then rename. A reader sees
 * the old file or the whole new one, never a prefix. No fsync: the files
 * live as long as the session, and a crash ends the session. 0, or -1
 * with the message in err.
 */
int trust_write_atomic(const char *path, const void *data, size_t len, mode_t mode, char *err,
		       size_t errlen) NONNULL(1, 5) WUNRES;
/* Writes len bytes of data to fd, retrying short writes and EINTR. 0, or
 * -1 (errno). */
int trust_write_all(int fd, const void *data, size_t len) NONNULL(2) WUNRES;

/*
 * Appends every certificate of the PEM file at path to out (new
 * references), skipping every block that is not a CERTIFICATE. A
 * malformed certificate, an unreadable file, or (with require_one) a file
 * without any certificate is an error naming the file. Returns the number
 * of certificates added, or -1.
 */
int trust_load_certs(const char *path, STACK_OF(X509) *out, bool require_one, char *err,
		     size_t errlen) NONNULL(1, 2) WUNRES;

#endif

/*
 * ca.h - the whole public face of ca/: the per-session certificate authority
 * (SPEC §5 TLS, §2 session files, §3.1 tlsTerminate/extraCaCertPaths).
 *
 * A ca_t is generated in memory when a session starts: an ECDSA P-256 CA
 * whose name constraints (when the allowlist has no bare "*") limit it to the
 * allowed names and IP literals, plus one shared P-256 leaf key. It mints a
 * leaf certificate per host on demand and keeps the most recent ones in a
 * bounded LRU cache, each as a ready server SSL_CTX (ALPN http/1.1, or h2 per connection).
 *
 * The CA private key never leaves this module: no function returns it, none
 * writes it anywhere, and ca_free() releases it with OpenSSL's wiping free.
 *
 * Threading: a ca_t is not thread-safe; use it from one thread (the proxy's
 * event loop). Its functions never block on the network and may be called
 * from event-loop callbacks; minting a leaf costs one ECDSA signature.
 *
 * Errors: functions that can fail take (char *err, size_t errlen) and write
 * one human-readable line there (OpenSSL detail appended), then return NULL
 * or -1. err may be NULL when errlen is 0.
 *
 * See docs/tls.md for the design and the name-constraint decisions.
 */
#ifndef PASSAVANT_CA_H
#define PASSAVANT_CA_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/attrib.h"

typedef struct ca ca_t;

/* Leaf certificates kept by default in the per-session LRU cache. */
#define CA_LEAF_CACHE_DEFAULT_ENTRIES 1024
/* Validity of the session CA (SPEC §5: seven days). */
#define CA_VALIDITY_SECONDS (7L * 24 * 3600)
/* Back-dating of notBefore, CA and leaves, for clients whose clock lags. */
#define CA_BACKDATE_SECONDS 3600L

struct ca_config {
	/*
	 * allowedDomains as host patterns, without ports:
	 *   "example.com"   exact name
	 *   "*.example.com" any subdomain, not the apex
	 *   "192.0.2.1"     IPv4 literal
	 *   "2001:db8::1"   IPv6 literal (brackets accepted)
	 *   "*"             every host: same as allow_any
	 * Names are compared case-insensitively; a trailing dot is ignored.
	 * The policy's struct policy_hostpat maps onto this as EXACT -> host,
	 * WILDCARD -> "*." host, IPV4/IPV6 -> host, ANY -> allow_any.
	 */
	const char *const *allowed;
	size_t n_allowed;
	/* The allowlist has a bare "*": the CA carries no name constraints
	 * and mints a leaf for any well-formed host. */
	bool allow_any;
	/* Leaf cache capacity in entries; 0 means CA_LEAF_CACHE_DEFAULT_ENTRIES. */
	size_t leaf_cache_entries;
};

/*
 * Generates a session CA and the shared leaf key, in memory only. The first
 * call sets up OpenSSL's secure heap (process-wide, if nobody has) so both
 * private keys sit in locked pages left out of core dumps. A pattern
 * that is not a valid name or IP literal is an error naming it. With no
 * allowed names at all (no network) the CA is constrained to nothing.
 * Returns a CA the caller frees with ca_free(), or NULL (message in err).
 */
ca_t *ca_new(const struct ca_config *cfg, char *err, size_t errlen) NONNULL(1) WUNRES MALLOC;

/*
 * Frees the CA: the cached leaves (SSL_CTXs still referenced by callers or
 * live connections stay valid until their last reference goes), the CA and
 * leaf keys (wiped by EVP_PKEY_free) and the certificate. NULL is a no-op.
 */
void ca_free(ca_t *ca);

/*
 * The session CA certificate, borrowed: valid until ca_free(); do not free
 * or modify it (X509_up_ref() it to keep it longer). For inspection and for
 * callers that build their own chain or store.
 */
X509 *ca_cert(const ca_t *ca) NONNULL(1);

/*
 * Whether the CA may mint a leaf for host (normalised or not: case and a
 * trailing dot are ignored, IPv6 brackets are accepted): true when it
 * matches an allowed pattern, or for any well-formed host with allow_any.
 * Pure.
 */
bool ca_host_permitted(const ca_t *ca, const char *host) NONNULL(1, 2);

/*
 * A server SSL_CTX presenting a leaf for host (SAN DNS, or SAN IP for an IP
 * literal), signed by the session CA, with the shared leaf key, TLS 1.2+
 * and an ALPN selection callback that picks http/1.1 (a client that
 * does not offer it gets no ALPN answer and may speak HTTP/1.1 anyway),
 * or h2 on a connection ca_ssl_allow_h2() was called for.
 * Served from the LRU cache, minted on a miss.
 *
 * Refuses (NULL) a host outside the CA's name constraints
 * (ca_host_permitted() false): clients would reject that leaf anyway.
 *
 * Returns a new reference: the caller releases it with SSL_CTX_free().
 * SSL_new() takes its own reference, so the caller may drop its reference
 * right after creating the connection's SSL. Eviction from the cache never
 * invalidates a reference a caller holds.
 */
SSL_CTX *ca_leaf_ctx(ca_t *ca, const char *host, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* Lets the server SSL ssl (from a ca_leaf_ctx() context, before its
 * handshake) select ALPN h2 when the client offers it: the proxy calls it
 * when the upstream negotiated h2. Returns 0, or -1 (out of memory). */
int ca_ssl_allow_h2(SSL *ssl) NONNULL(1) WUNRES;

/*
 * The leaf certificate ca_leaf_ctx() serves for host (same cache, same
 * refusal rules). Returns a new reference: the caller X509_free()s it.
 */
X509 *ca_leaf_cert(ca_t *ca, const char *host, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/*
 * Writes the session files of SPEC §2 into the existing directory
 * session_dir, each 0644 and atomically (temporary file, then rename):
 *   ca.pem     the session CA certificate only
 *   trust.pem  the session CA, then the system roots ($SSL_CERT_FILE, else
 *              OpenSSL's default bundle), then the certificates of each
 *              extra_ca_paths[i] (extraCaCertPaths)
 * Only certificates are copied: every file is parsed certificate by
 * certificate and re-emitted, so a private key or any other block in an
 * input file never reaches the output. An extra file without any
 * certificate, a malformed certificate or a missing system bundle is an
 * error naming the file. Returns 0, or -1 (message in err).
 */
int ca_write_files(const ca_t *ca, const char *session_dir, const char *const *extra_ca_paths,
		   size_t n_extra, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/*
 * A client SSL_CTX for connections to upstreams: verifies against the same
 * roots trust.pem carries (system bundle plus extra_ca_paths, but not the
 * session CA), SSL_VERIFY_PEER, TLS 1.2+, ALPN offering http/1.1, partial
 * wildcards refused. Host name checking is per connection: the proxy must
 * call SSL_set_tlsext_host_name() (SNI, DNS names only) and SSL_set1_host()
 * (or X509_VERIFY_PARAM_set1_ip_asc() for an IP literal) on each SSL before
 * connecting; without them the chain is verified but not the name.
 * The context prefers AES-128-GCM (TLS 1.3 suites, and TLS 1.2 ciphers:
 * OpenSSL's DEFAULT set, the ECDHE AEAD ones first), releases record
 * buffers when idle and reads ahead (several records per read()).
 * Returns a new SSL_CTX the caller frees with SSL_CTX_free(), or NULL.
 */
SSL_CTX *ca_upstream_ctx(const char *const *extra_ca_paths, size_t n_extra, char *err,
			 size_t errlen) WUNRES;

/* ------------------------------------------- truststore.c (SPEC §7 Trust) */

/*
 * Writes the PKCS12 truststore Java reads as its cacerts to out_path
 * (mode 0644, atomically: a temporary file beside it, then rename): every
 * certificate of the PEM file trust_pem (the session's trust.pem), each
 * as a certificate bag with a unique friendly name ("passavant-N CN", the
 * keytool alias) and Oracle's trusted-key-usage attribute
 * (2.16.840.1.113894.746875.1.1 = anyExtendedKeyUsage), which is what
 * makes Java treat a bag as a trusted certificate; one unencrypted safe;
 * a MAC under the password "changeit". Java's default trust manager opens
 * it with no password; `keytool -list -storepass changeit` lists it.
 * Returns 0, or -1 (message in err: the file and what failed).
 */
int ca_write_truststore(const char *trust_pem, const char *out_path, char *err, size_t errlen)
	NONNULL(1, 2) WUNRES;

/*
 * The same truststore, written into path in place: an existing regular
 * file (made empty by the caller, not followed if a link), truncated to
 * the truststore's length, so a sandbox that shows it over a JDK's
 * cacerts already (the same inode) sees the content once this returns.
 * Returns 0, or -1 (message in err).
 */
int ca_fill_truststore(const char *trust_pem, const char *path, char *err, size_t errlen)
	NONNULL(1, 2) WUNRES;

/*
 * Makes out_dir (new, mode 0755) hold one file: the first certificate of
 * ca_pem (the session CA) as PEM, named "HASH.N", HASH its subject-name
 * hash (what OpenSSL's hashed lookup computes, `openssl rehash`'s
 * names), N the first suffix the hashed certificate directory host_dir
 * does not use. The sandbox shows host_dir as the union of out_dir and
 * host_dir's own entries (struct sbx_file on a directory), so OpenSSL
 * finds the session CA there next to the system's roots. Returns 0, or -1
 * (message in err); a partial out_dir is left for the caller to remove.
 */
int ca_write_hashed_entry(const char *host_dir, const char *ca_pem, const char *out_dir, char *err,
			  size_t errlen) NONNULL(1, 2, 3) WUNRES;

#endif

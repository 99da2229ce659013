/*
 * ca.c - the session CA: generation, name constraints, leaf lookup.
 *
 * The CA key and the shared leaf key are generated here, live only in the
 * struct ca below, and are released in ca_free() with EVP_PKEY_free(),
 * which clears the private scalar before freeing (OpenSSL's EC key free
 * uses BN_clear_free). No PEM or DER copy of either key is ever made.
 */
#include "ca_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

/* Random bytes in the CA subject, so two sessions' CAs never share a name
 * (a client caching intermediates by name cannot mix them up). */
#define CA_ID_BYTES 8
/* TLS 1.2 session-ID cache per leaf context: bounded, since there may be
 * CA_LEAF_CACHE_DEFAULT_ENTRIES contexts (OpenSSL's default is 20480). */
#define CA_LEAF_SESSION_CACHE_ENTRIES 64

/* OpenSSL secure heap (mlock'd, MADV_DONTDUMP, guard pages) for private
 * key scalars: a power of two, ample for two P-256 keys plus whatever else
 * the process keeps there; the smallest block it hands out. */
#define CA_SECURE_HEAP_BYTES (64 * 1024)
#define CA_SECURE_HEAP_MIN_BYTES 32
/* RFC 6761 reserves "invalid": a DNS constraint of it permits no real
 * name. Used when the allowlist has IP literals but no names. */
#define CA_NC_NOTHING_DNS "invalid"

/* One allowedDomains entry, parsed. */
struct ca_pattern {
	bool wildcard;       /**< "*.suffix": subdomains of host.text only */
	struct ca_host host; /**< the name (or wildcard suffix) or IP literal */
};

struct ca {
	X509 *cert;                 /**< the session CA certificate */
	EVP_PKEY *key;              /**< CA private key: never leaves this file */
	EVP_PKEY *leaf_key;         /**< the one key every leaf certifies */
	bool allow_any;             /**< bare "*": no name constraints */
	struct ca_pattern *pats;    /**< the allowlist, for ca_host_permitted() */
	size_t n_pats;              /**< entries in pats */
	struct leafcache *cache;    /**< recent leaves, by normalised host */
};

/* A host as a client sent it, made safe to quote in a message: printable
 * ASCII only, cut at 80 bytes. */
static const char *quote_host(const char *in, char *buf, size_t buflen)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < buflen && i < 80; i++)
		buf[i] = (in[i] > 0x20 && in[i] < 0x7f) ? in[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* Whether name is a strict subdomain of base ("a.b.c" under "b.c"). */
static bool dns_under(const char *name, const char *base)
{
	size_t nl = strlen(name), bl = strlen(base);

	return nl > bl + 1 && name[nl - bl - 1] == '.' && strcmp(name + nl - bl, base) == 0;
}

/* Parses cfg->allowed into ca->pats. "*" sets allow_any. */
static int parse_allowlist(ca_t *ca, const struct ca_config *cfg, char *err, size_t errlen)
{
	char q[96];
	size_t i;

	ca->allow_any = cfg->allow_any;
	if (cfg->n_allowed == 0)
		return 0;
	if (cfg->allowed == NULL) {
		errbuf_set(err, errlen, "session CA: %zu allowed hosts but no array", cfg->n_allowed);
		return -1;
	}
	ca->pats = calloc(cfg->n_allowed, sizeof(*ca->pats));
	if (ca->pats == NULL) {
		errbuf_set(err, errlen, "session CA: out of memory");
		return -1;
	}
	for (i = 0; i < cfg->n_allowed; i++) {
		const char *text = cfg->allowed[i], *why;
		struct ca_pattern *p = &ca->pats[ca->n_pats];

		if (text == NULL) {
			errbuf_set(err, errlen, "session CA: allowed host %zu is NULL", i);
			return -1;
		}
		if (strcmp(text, "*") == 0) {
			ca->allow_any = true;
			continue;
		}
		if (strncmp(text, "*.", 2) == 0) {
			p->wildcard = true;
			why = ca_host_parse(text + 2, &p->host);
			if (why == NULL && p->host.kind != CA_HOST_DNS)
				why = "a wildcard must be followed by a DNS name";
		} else {
			why = ca_host_parse(text, &p->host);
		}
		if (why != NULL) {
			errbuf_set(err, errlen, "session CA: allowed host \"%s\": %s",
			       quote_host(text, q, sizeof(q)), why);
			return -1;
		}
		ca->n_pats++;
	}
	return 0;
}

/* Appends one subtree (base = gen, taken over even on failure) to *sk,
 * creating the stack when needed. */
static int push_subtree(STACK_OF(GENERAL_SUBTREE) **sk, GENERAL_NAME *gen)
{
	GENERAL_SUBTREE *st;

	if (*sk == NULL && (*sk = sk_GENERAL_SUBTREE_new_null()) == NULL)
		goto fail;
	st = GENERAL_SUBTREE_new();
	if (st == NULL)
		goto fail;
	/* GENERAL_SUBTREE_new() allocates an empty base; replace it. */
	GENERAL_NAME_free(st->base);
	st->base = gen;
	if (sk_GENERAL_SUBTREE_push(*sk, st) == 0) {
		GENERAL_SUBTREE_free(st);
		return -1;
	}
	return 0;
fail:
	GENERAL_NAME_free(gen);
	return -1;
}

/* Subtree for a DNS constraint: "name" (name and every subdomain, RFC
 * 5280) or ".name" (subdomains only, the OpenSSL/Go/webpki reading). */
static int push_dns(STACK_OF(GENERAL_SUBTREE) **sk, const char *name, bool leading_dot)
{
	ASN1_IA5STRING *s = ASN1_IA5STRING_new();
	GENERAL_NAME *gen = GENERAL_NAME_new();
	char buf[CA_HOST_MAX + 2];

	if (s == NULL || gen == NULL)
		goto fail;
	snprintf(buf, sizeof(buf), "%s%s", leading_dot ? "." : "", name);
	if (ASN1_STRING_set(s, buf, (int)strlen(buf)) != 1)
		goto fail;
	GENERAL_NAME_set0_value(gen, GEN_DNS, s);
	return push_subtree(sk, gen);
fail:
	ASN1_IA5STRING_free(s);
	GENERAL_NAME_free(gen);
	return -1;
}

/* Subtree for an IP constraint: address then mask, 8 or 32 bytes
 * (RFC 5280 4.2.1.10). prefix_all: mask of all ones (one address) or of
 * all zeros (the whole family, for an exclusion). */
static int push_ip(STACK_OF(GENERAL_SUBTREE) **sk, const unsigned char *addr, size_t len,
		   bool prefix_all)
{
	ASN1_OCTET_STRING *s = ASN1_OCTET_STRING_new();
	GENERAL_NAME *gen = GENERAL_NAME_new();
	unsigned char buf[32];

	if (s == NULL || gen == NULL)
		goto fail;
	memcpy(buf, addr, len);
	memset(buf + len, prefix_all ? 0xff : 0x00, len);
	if (ASN1_OCTET_STRING_set(s, buf, (int)(2 * len)) != 1)
		goto fail;
	GENERAL_NAME_set0_value(gen, GEN_IPADD, s);
	return push_subtree(sk, gen);
fail:
	ASN1_OCTET_STRING_free(s);
	GENERAL_NAME_free(gen);
	return -1;
}

/* Whether pats[i] repeats an earlier entry (same constraint twice). */
static bool pattern_seen(const ca_t *ca, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (ca->pats[j].wildcard == ca->pats[i].wildcard &&
		    ca->pats[j].host.kind == ca->pats[i].host.kind &&
		    strcmp(ca->pats[j].host.text, ca->pats[i].host.text) == 0)
			return true;
	return false;
}

/* Whether an exact name is already permitted by a wildcard above it. */
static bool covered_by_wildcard(const ca_t *ca, const struct ca_pattern *p)
{
	size_t j;

	for (j = 0; j < ca->n_pats; j++)
		if (ca->pats[j].wildcard && dns_under(p->host.text, ca->pats[j].host.text))
			return true;
	return false;
}

/*
 * Whether an exact name may also be excluded below (".name"), turning
 * RFC 5280's "name and all its subdomains" into "exactly name". Not when
 * another allowed pattern lives under name, or name lies under a wildcard:
 * an exclusion always beats a permission, so it would forbid those.
 */
static bool exact_can_exclude_subdomains(const ca_t *ca, const struct ca_pattern *p)
{
	size_t j;

	for (j = 0; j < ca->n_pats; j++) {
		const struct ca_pattern *o = &ca->pats[j];

		if (o->host.kind != CA_HOST_DNS || o == p)
			continue;
		if (o->wildcard && strcmp(o->host.text, p->host.text) == 0)
			return false; /* "*.name" next to "name" */
		if (dns_under(o->host.text, p->host.text))
			return false; /* "x.name" or "*.x.name" */
		if (o->wildcard && dns_under(p->host.text, o->host.text))
			return false; /* name itself under "*.parent" */
	}
	return true;
}

/*
 * The critical nameConstraints extension (see docs/tls.md):
 *   exact name     permitted DNS:name (+ excluded DNS:.name when possible)
 *   *.suffix       permitted DNS:.suffix
 *   IPv4 / IPv6    permitted IP:addr/32 or /128
 * A name type absent from the allowlist is shut: no names -> permitted
 * DNS:invalid; no IP literal -> excluded 0.0.0.0/0 and ::/0. Without that,
 * a constraint on one name type leaves the other free.
 */
static int add_name_constraints(ca_t *ca)
{
	static const unsigned char zero[16];
	NAME_CONSTRAINTS *nc;
	bool have_dns = false, have_v4 = false, have_v6 = false;
	size_t i;
	int rc = -1;

	nc = NAME_CONSTRAINTS_new();
	if (nc == NULL)
		return -1;
	for (i = 0; i < ca->n_pats; i++) {
		const struct ca_pattern *p = &ca->pats[i];

		if (pattern_seen(ca, i))
			continue;
		switch (p->host.kind) {
		case CA_HOST_DNS:
			have_dns = true;
			/* "a.x.com" under "*.x.com": the wildcard's subtree
			 * already holds it, and no exclusion applies. */
			if (!p->wildcard && covered_by_wildcard(ca, p))
				break;
			if (push_dns(&nc->permittedSubtrees, p->host.text, p->wildcard) != 0)
				goto out;
			if (!p->wildcard && exact_can_exclude_subdomains(ca, p) &&
			    push_dns(&nc->excludedSubtrees, p->host.text, true) != 0)
				goto out;
			break;
		case CA_HOST_IPV4:
			have_v4 = true;
			if (push_ip(&nc->permittedSubtrees, p->host.addr, 4, true) != 0)
				goto out;
			break;
		case CA_HOST_IPV6:
			have_v6 = true;
			if (push_ip(&nc->permittedSubtrees, p->host.addr, 16, true) != 0)
				goto out;
			break;
		}
	}
	if (!have_dns && push_dns(&nc->permittedSubtrees, CA_NC_NOTHING_DNS, false) != 0)
		goto out;
	/*
	 * IP literals are shut only when none is allowed. With any iPAddress
	 * subtree permitted, an address of the other family matches none of
	 * them and is refused already (OpenSSL, Go, Java); an explicit
	 * exclusion of the other family would then only hurt: Java's
	 * IPAddressName throws comparing an IPv4 address with an IPv6
	 * subtree, rejecting a permitted leaf. IPv4 first for the same reason.
	 */
	if (!have_v4 && !have_v6 &&
	    (push_ip(&nc->excludedSubtrees, zero, 4, false) != 0 ||
	     push_ip(&nc->excludedSubtrees, zero, 16, false) != 0))
		goto out;
	/* RFC 5280 4.2.1.10: conforming CAs MUST mark it critical. */
	if (X509_add1_ext_i2d(ca->cert, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1)
		rc = 0;
out:
	NAME_CONSTRAINTS_free(nc);
	return rc;
}

/* Builds and self-signs the CA certificate for ca->key. */
static int make_ca_cert(ca_t *ca, char *err, size_t errlen)
{
	unsigned char id[CA_ID_BYTES];
	char cn[64], hex[2 * CA_ID_BYTES + 1];
	time_t now = time(NULL);
	X509_NAME *name;
	X509 *x;
	size_t i;

	if (RAND_bytes(id, sizeof(id)) != 1) {
		ca_ssl_err(err, errlen, "session CA: no random bytes");
		return -1;
	}
	for (i = 0; i < sizeof(id); i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(cn, sizeof(cn), "passavant session CA %s", hex);

	x = ca->cert = X509_new();
	if (x == NULL)
		goto fail;
	name = X509_get_subject_name(x);
	if (X509_set_version(x, X509_VERSION_3) != 1 || forge_set_serial(x) != 0 ||
	    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
				       (const unsigned char *)"passavant", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
				       -1, 0) != 1 ||
	    X509_set_issuer_name(x, name) != 1)
		goto fail;
	/* From one hour ago, for seven days from then: one clock reading for
	 * both, so the span is exactly seven days. */
	if (X509_time_adj(X509_getm_notBefore(x), -CA_BACKDATE_SECONDS, &now) == NULL ||
	    X509_time_adj(X509_getm_notAfter(x), CA_VALIDITY_SECONDS - CA_BACKDATE_SECONDS, &now) ==
		    NULL ||
	    X509_set_pubkey(x, ca->key) != 1)
		goto fail;
	/* pathlen:0: the CA signs leaves only, never another CA. A self-signed
	 * root carries no AKI (RFC 5280 4.2.1.1 allows omitting it). */
	if (forge_add_conf_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") != 0 ||
	    forge_add_conf_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") != 0 ||
	    forge_add_conf_ext(x, x, NID_subject_key_identifier, "hash") != 0)
		goto fail;
	if (!ca->allow_any && add_name_constraints(ca) != 0)
		goto fail;
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0)
		goto fail;
	return 0;
fail:
	ca_ssl_err(err, errlen, "session CA: cannot build the CA certificate");
	return -1;
}

ca_t *ca_new(const struct ca_config *cfg, char *err, size_t errlen)
{
	ca_t *ca;

	ca = calloc(1, sizeof(*ca));
	if (ca == NULL) {
		errbuf_set(err, errlen, "session CA: out of memory");
		return NULL;
	}
	if (parse_allowlist(ca, cfg, err, errlen) != 0)
		goto fail;
	/*
	 * OpenSSL allocates EC private scalars with BN_secure_new(), which
	 * uses the secure heap once it exists: the keys then live in pages
	 * that are locked (never swapped) and left out of core dumps (SPEC
	 * §4.4). Process-wide and one-shot; a failure (no mmap, or a
	 * RLIMIT_MEMLOCK too small to lock, result 2) only loses that
	 * protection, so it is not fatal.
	 */
	if (!CRYPTO_secure_malloc_initialized())
		(void)CRYPTO_secure_malloc_init(CA_SECURE_HEAP_BYTES, CA_SECURE_HEAP_MIN_BYTES);
	/* EVP_EC_gen: a named-curve P-256 key from the default provider's
	 * DRBG (seeded from the kernel). */
	ca->key = EVP_EC_gen("P-256");
	if (ca->key == NULL) {
		ca_ssl_err(err, errlen, "session CA: cannot generate the CA key");
		goto fail;
	}
	ca->leaf_key = EVP_EC_gen("P-256");
	if (ca->leaf_key == NULL) {
		ca_ssl_err(err, errlen, "session CA: cannot generate the leaf key");
		goto fail;
	}
	if (make_ca_cert(ca, err, errlen) != 0)
		goto fail;
	ca->cache = leafcache_new(cfg->leaf_cache_entries != 0 ? cfg->leaf_cache_entries
							      : CA_LEAF_CACHE_DEFAULT_ENTRIES);
	if (ca->cache == NULL) {
		errbuf_set(err, errlen, "session CA: out of memory for the leaf cache");
		goto fail;
	}
	return ca;
fail:
	ca_free(ca);
	return NULL;
}

void ca_free(ca_t *ca)
{
	if (ca == NULL)
		return;
	leafcache_free(ca->cache);
	/* EVP_PKEY_free wipes the private scalar (BN_clear_free). */
	EVP_PKEY_free(ca->leaf_key);
	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	free(ca->pats);
	/* No secret in the struct itself (pointers only), but leave nothing. */
	OPENSSL_cleanse(ca, sizeof(*ca));
	free(ca);
}

X509 *ca_cert(const ca_t *ca)
{
	return ca->cert;
}

static bool host_permitted(const ca_t *ca, const struct ca_host *h)
{
	size_t i;

	if (ca->allow_any)
		return true;
	for (i = 0; i < ca->n_pats; i++) {
		const struct ca_pattern *p = &ca->pats[i];

		if (p->host.kind != h->kind)
			continue;
		if (p->wildcard ? dns_under(h->text, p->host.text)
				: strcmp(h->text, p->host.text) == 0)
			return true;
	}
	return false;
}

bool ca_host_permitted(const ca_t *ca, const char *host)
{
	struct ca_host h;

	if (ca_host_parse(host, &h) != NULL)
		return false;
	return host_permitted(ca, &h);
}

/* The ex_data slot of a server SSL that may select h2 (ca_ssl_allow_h2()),
 * made once. */
static pthread_once_t h2_once = PTHREAD_ONCE_INIT;
static int h2_index = -1;

static void h2_index_new(void)
{
	h2_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

int ca_ssl_allow_h2(SSL *ssl)
{
	static char yes = 1;

	if (pthread_once(&h2_once, h2_index_new) != 0 || h2_index < 0)
		return -1;
	return SSL_set_ex_data(ssl, h2_index, &yes) == 1 ? 0 : -1;
}

/* Whether the client's ALPN list in[0..inlen) names proto (len bytes):
 * *at gets its place in the list. */
static bool alpn_has(const unsigned char *in, unsigned int inlen, const char *proto, unsigned int len,
		     const unsigned char **at)
{
	unsigned int i = 0;

	while (i < inlen) {
		unsigned int l = in[i];

		if (l == 0 || l > inlen - i - 1)
			return false; /* malformed list: OpenSSL checks it first anyway */
		if (l == len && memcmp(in + i + 1, proto, len) == 0) {
			*at = in + i + 1;
			return true;
		}
		i += l + 1;
	}
	return false;
}

/*
 * ALPN: h2 where the connection allows it (ca_ssl_allow_h2(): the
 * upstream negotiated h2) and the client offers it, else http/1.1, else
 * nothing. A client offering only h2 to a connection that may not speak
 * it gets no ALPN answer (NOACK) rather than a fatal alert: many then
 * fall back to HTTP/1.1.
 */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	const unsigned char *at;

	(void)arg;
	if (h2_index >= 0 && SSL_get_ex_data(ssl, h2_index) != NULL && alpn_has(in, inlen, "h2", 2, &at)) {
		*out = at;
		*outlen = 2;
		return SSL_TLSEXT_ERR_OK;
	}
	if (alpn_has(in, inlen, "http/1.1", 8, &at)) {
		*out = at;
		*outlen = 8;
		return SSL_TLSEXT_ERR_OK;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

SSL_CTX *ca_server_ctx(X509 *leaf, EVP_PKEY *key, char *err, size_t errlen)
{
	SSL_CTX *ctx;

	ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL) {
		ca_ssl_err(err, errlen, "leaf TLS context");
		return NULL;
	}
	/* use_certificate/use_PrivateKey take their own references. */
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		ca_ssl_err(err, errlen, "leaf TLS context");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
					 SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
	if (SSL_CTX_set_ciphersuites(ctx, CA_TLS13_SUITES) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, CA_TLS12_CIPHERS) != 1) {
		ca_ssl_err(err, errlen, "leaf TLS context: TLS 1.3 suites or TLS 1.2 ciphers");
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* An idle tunnel holds no record buffers; a busy one reads several
	 * records per read() (the proxy then kicks libevent to decrypt the
	 * ones left buffered: proxy/sockio.c, sockio_kick_tls_read()). */
	(void)SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_default_read_buffer_len(ctx, CA_TLS_READ_AHEAD_BYTES);
	SSL_CTX_sess_set_cache_size(ctx, CA_LEAF_SESSION_CACHE_ENTRIES);
	/*
	 * No TLS 1.3 session tickets: each tunnel would pay two post-handshake
	 * messages, and the handshake buffer OpenSSL keeps for them after
	 * writing (about 4 KiB per open tunnel). Sandboxed programs are mostly
	 * short-lived processes that never resume; keep-alive inside a tunnel
	 * is what saves handshakes. TLS 1.2 clients keep the session-ID cache.
	 */
	if (SSL_CTX_set_num_tickets(ctx, 0) != 1) {
		ca_ssl_err(err, errlen, "leaf TLS context: session tickets");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	return ctx;
}

/* Mints the leaf and its context for an already parsed host. */
static SSL_CTX *mint_ctx(ca_t *ca, const struct ca_host *h, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	X509 *leaf;

	leaf = forge_leaf(ca->cert, ca->key, ca->leaf_key, h, err, errlen);
	if (leaf == NULL)
		return NULL;
	ctx = ca_server_ctx(leaf, ca->leaf_key, err, errlen);
	X509_free(leaf);
	return ctx;
}

SSL_CTX *ca_leaf_ctx(ca_t *ca, const char *host, char *err, size_t errlen)
{
	struct ca_host h;
	const char *why;
	SSL_CTX *ctx;
	char q[96];

	why = ca_host_parse(host, &h);
	if (why != NULL) {
		errbuf_set(err, errlen, "no leaf certificate for \"%s\": %s",
		       quote_host(host, q, sizeof(q)), why);
		return NULL;
	}
	if (!host_permitted(ca, &h)) {
		errbuf_set(err, errlen,
		       "no leaf certificate for %s: not in allowedDomains at start, so outside the session "
		       "CA's name constraints (a domain a reload added is reached through terminated TLS "
		       "only after a restart of passavant)",
		       h.text);
		return NULL;
	}
	ctx = leafcache_get(ca->cache, h.text); /* the caller's reference */
	if (ctx != NULL)
		return ctx;
	ctx = mint_ctx(ca, &h, err, errlen);
	if (ctx == NULL)
		return NULL;
	/* One reference for the caller, taken before the cache has the
	 * context (another loop may evict it at once), and the one from
	 * mint_ctx() for the cache. If the cache cannot take it, the caller
	 * gets it uncached: correct, only slower next time. */
	if (SSL_CTX_up_ref(ctx) != 1) {
		SSL_CTX_free(ctx);
		ca_ssl_err(err, errlen, "leaf TLS context for %s", h.text);
		return NULL;
	}
	if (leafcache_put(ca->cache, h.text, ctx) != 0)
		SSL_CTX_free(ctx);
	return ctx;
}

X509 *ca_leaf_cert(ca_t *ca, const char *host, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	X509 *x;

	ctx = ca_leaf_ctx(ca, host, err, errlen);
	if (ctx == NULL)
		return NULL;
	x = SSL_CTX_get0_certificate(ctx);
	if (x == NULL || X509_up_ref(x) != 1) {
		ca_ssl_err(err, errlen, "leaf certificate for %s", host);
		x = NULL;
	}
	SSL_CTX_free(ctx);
	return x;
}

SSL_CTX *ca_forge_ctx_unchecked(ca_t *ca, const char *host, char *err, size_t errlen)
{
	struct ca_host h;
	const char *why;

	why = ca_host_parse(host, &h);
	if (why != NULL) {
		errbuf_set(err, errlen, "forge: %s", why);
		return NULL;
	}
	return mint_ctx(ca, &h, err, errlen);
}

size_t ca_cache_count(const ca_t *ca)
{
	return leafcache_count(ca->cache);
}

size_t ca_cache_evictions(const ca_t *ca)
{
	return leafcache_evictions(ca->cache);
}

/*
 * test_ca.c - unit tests of ca/: the session CA's extensions, leaves,
 * name constraints (checked by OpenSSL's verifier, then on the wire by
 * real curl and python3), the leaf cache and the session files.
 */
#include "../../support/pyscript.h"
#include "../../support/testlib.h"
#include "../../../ca/ca.h"
#include "../../../ca/ca_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#define ERRLEN 512

/* The allowlist most tests use: one of each kind of pattern. */
static const char *const mixed_allow[] = {"example.com", "*.wild.test", "192.0.2.1",
					  "[2001:db8::1]"};

static ca_t *new_ca(const char *const *allowed, size_t n, bool any, size_t cache)
{
	struct ca_config cfg = {
		.allowed = allowed, .n_allowed = n, .allow_any = any, .leaf_cache_entries = cache};
	char err[ERRLEN] = "";
	ca_t *ca = ca_new(&cfg, err, sizeof(err));

	if (ca == NULL)
		fprintf(stderr, "ca_new: %s\n", err);
	return ca;
}

/* Seconds from now to t (negative: in the past). */
static long secs_from_now(const ASN1_TIME *t)
{
	int day = 0, sec = 0;

	if (ASN1_TIME_diff(&day, &sec, NULL, t) != 1)
		return 0x7fffffffL;
	return (long)day * 86400 + sec;
}

/* Whether the IP literal text is IPv4 or IPv6 (else a name). */
static bool is_ip(const char *host)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* X509_verify_cert of leaf against the CA alone, for host, in strict
 * mode (as recent Pythons set it). Returns the X509_V_ code. */
static int verify_leaf(X509 *cacert, X509 *leaf, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *p;
	int rc = -1;

	CU_ASSERT_FATAL(st != NULL && vc != NULL);
	CU_ASSERT_FATAL(X509_STORE_add_cert(st, cacert) == 1);
	CU_ASSERT_FATAL(X509_STORE_CTX_init(vc, st, leaf, NULL) == 1);
	p = X509_STORE_CTX_get0_param(vc);
	X509_VERIFY_PARAM_set_flags(p, X509_V_FLAG_X509_STRICT);
	CU_ASSERT(X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER) == 1);
	if (is_ip(host)) {
		CU_ASSERT(X509_VERIFY_PARAM_set1_ip_asc(p, host) == 1);
	} else {
		CU_ASSERT(X509_VERIFY_PARAM_set1_host(p, host, 0) == 1);
	}
	rc = X509_verify_cert(vc) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(vc);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	ERR_clear_error();
	return rc;
}

/* Verifies the leaf the CA mints for host (must be permitted). */
static int verify_minted(ca_t *ca, const char *host)
{
	char err[ERRLEN] = "";
	X509 *leaf = ca_leaf_cert(ca, host, err, sizeof(err));
	int rc;

	if (leaf == NULL) {
		fprintf(stderr, "ca_leaf_cert(%s): %s\n", host, err);
		return -1;
	}
	rc = verify_leaf(ca_cert(ca), leaf, host);
	X509_free(leaf);
	return rc;
}

/* Verifies a leaf forged for host with the session CA, bypassing the
 * allowlist: what a leaked CA could be made to sign. */
static int verify_forged(ca_t *ca, const char *host)
{
	char err[ERRLEN] = "";
	SSL_CTX *ctx = ca_forge_ctx_unchecked(ca, host, err, sizeof(err));
	int rc;

	if (ctx == NULL) {
		fprintf(stderr, "forge(%s): %s\n", host, err);
		return -1;
	}
	rc = verify_leaf(ca_cert(ca), SSL_CTX_get0_certificate(ctx), host);
	SSL_CTX_free(ctx);
	return rc;
}

/* Whether the subtree stack holds a DNS entry equal to name. */
static bool has_dns_subtree(STACK_OF(GENERAL_SUBTREE) *sk, const char *name)
{
	int i;

	for (i = 0; i < sk_GENERAL_SUBTREE_num(sk); i++) {
		GENERAL_NAME *g = sk_GENERAL_SUBTREE_value(sk, i)->base;

		if (g->type == GEN_DNS && (size_t)ASN1_STRING_length(g->d.dNSName) == strlen(name) &&
		    memcmp(ASN1_STRING_get0_data(g->d.dNSName), name, strlen(name)) == 0)
			return true;
	}
	return false;
}

/* Whether the subtree stack holds an IP entry with these bytes. */
static bool has_ip_subtree(STACK_OF(GENERAL_SUBTREE) *sk, const unsigned char *bytes, int len)
{
	int i;

	for (i = 0; i < sk_GENERAL_SUBTREE_num(sk); i++) {
		GENERAL_NAME *g = sk_GENERAL_SUBTREE_value(sk, i)->base;

		if (g->type == GEN_IPADD && ASN1_STRING_length(g->d.iPAddress) == len &&
		    memcmp(ASN1_STRING_get0_data(g->d.iPAddress), bytes, (size_t)len) == 0)
			return true;
	}
	return false;
}

/* Whether extension nid is present and critical. */
static bool ext_critical(X509 *x, int nid)
{
	int i = X509_get_ext_by_NID(x, nid, -1);

	return i >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, i)) == 1;
}

/* ------------------------------------------------------------ the CA */

static void test_ca_extensions(void)
{
	static const unsigned char v4[8] = {192, 0, 2, 1, 255, 255, 255, 255};
	unsigned char v6[32];
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	BASIC_CONSTRAINTS *bc;
	NAME_CONSTRAINTS *nc;
	ASN1_INTEGER *serial;
	X509_NAME_ENTRY *cn;
	EVP_PKEY *pk;
	char group[64];
	size_t glen = 0;
	int crit = -1, idx;
	X509 *x;

	CU_ASSERT_FATAL(ca != NULL);
	x = ca_cert(ca);
	CU_ASSERT(X509_get_version(x) == X509_VERSION_3);
	/* ECDSA P-256 key, ECDSA-SHA256 self-signature. */
	pk = X509_get0_pubkey(x);
	CU_ASSERT_FATAL(pk != NULL);
	CU_ASSERT(EVP_PKEY_is_a(pk, "EC"));
	CU_ASSERT(EVP_PKEY_get_group_name(pk, group, sizeof(group), &glen) == 1);
	CU_ASSERT_STRING_EQUAL(group, "prime256v1");
	CU_ASSERT(X509_get_signature_nid(x) == NID_ecdsa_with_SHA256);
	CU_ASSERT(X509_verify(x, pk) == 1);
	CU_ASSERT(X509_check_issued(x, x) == X509_V_OK);
	/* Random 128-bit serial: positive, far above small counters. */
	serial = X509_get_serialNumber(x);
	CU_ASSERT(ASN1_STRING_length(serial) >= 14 && ASN1_STRING_length(serial) <= 17);
	CU_ASSERT(ASN1_STRING_type(serial) == V_ASN1_INTEGER);
	/* Subject: "passavant session CA <random id>". */
	idx = X509_NAME_get_index_by_NID(X509_get_subject_name(x), NID_commonName, -1);
	CU_ASSERT_FATAL(idx >= 0);
	cn = X509_NAME_get_entry(X509_get_subject_name(x), idx);
	CU_ASSERT(strncmp((const char *)ASN1_STRING_get0_data(X509_NAME_ENTRY_get_data(cn)),
			  "passavant session CA ", 21) == 0);
	CU_ASSERT(ASN1_STRING_length(X509_NAME_ENTRY_get_data(cn)) == 21 + 16);
	/* basicConstraints critical CA:TRUE pathlen:0. */
	bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit, NULL);
	CU_ASSERT_FATAL(bc != NULL);
	CU_ASSERT(crit == 1);
	CU_ASSERT(bc->ca != 0);
	CU_ASSERT(bc->pathlen != NULL && ASN1_INTEGER_get(bc->pathlen) == 0);
	BASIC_CONSTRAINTS_free(bc);
	/* keyUsage critical keyCertSign + cRLSign, nothing else. */
	CU_ASSERT(ext_critical(x, NID_key_usage));
	CU_ASSERT(X509_get_key_usage(x) == (KU_KEY_CERT_SIGN | KU_CRL_SIGN));
	CU_ASSERT(X509_get0_subject_key_id(x) != NULL);
	/* From one hour ago, for seven days. */
	CU_ASSERT(labs(secs_from_now(X509_get0_notBefore(x)) + 3600) < 120);
	{
		int day = 0, sec = 0;

		CU_ASSERT(ASN1_TIME_diff(&day, &sec, X509_get0_notBefore(x),
					 X509_get0_notAfter(x)) == 1);
		CU_ASSERT(day == 7 && sec == 0);
	}
	/* nameConstraints critical, one subtree per allowed pattern. */
	nc = X509_get_ext_d2i(x, NID_name_constraints, &crit, NULL);
	CU_ASSERT_FATAL(nc != NULL);
	CU_ASSERT(crit == 1);
	CU_ASSERT(sk_GENERAL_SUBTREE_num(nc->permittedSubtrees) == 4);
	CU_ASSERT(has_dns_subtree(nc->permittedSubtrees, "example.com"));
	CU_ASSERT(has_dns_subtree(nc->permittedSubtrees, ".wild.test"));
	CU_ASSERT(has_ip_subtree(nc->permittedSubtrees, v4, 8));
	CU_ASSERT(inet_pton(AF_INET6, "2001:db8::1", v6) == 1);
	memset(v6 + 16, 0xff, 16);
	CU_ASSERT(has_ip_subtree(nc->permittedSubtrees, v6, 32));
	/* The exact name is made exact by excluding its subdomains; IP
	 * literals are listed, so the IP families are not shut. */
	CU_ASSERT(sk_GENERAL_SUBTREE_num(nc->excludedSubtrees) == 1);
	CU_ASSERT(has_dns_subtree(nc->excludedSubtrees, ".example.com"));
	NAME_CONSTRAINTS_free(nc);
	ca_free(ca);
}

static void test_ca_no_constraints_with_any(void)
{
	static const char *const star[] = {"example.com", "*"};
	ca_t *a = new_ca(NULL, 0, true, 0);
	ca_t *b = new_ca(star, ARRAY_LEN(star), false, 0);

	CU_ASSERT_FATAL(a != NULL && b != NULL);
	CU_ASSERT(X509_get_ext_by_NID(ca_cert(a), NID_name_constraints, -1) < 0);
	CU_ASSERT(X509_get_ext_by_NID(ca_cert(b), NID_name_constraints, -1) < 0);
	/* Any host gets a leaf, and it verifies. */
	CU_ASSERT(ca_host_permitted(a, "anything.example.org"));
	CU_ASSERT(verify_minted(a, "anything.example.org") == X509_V_OK);
	CU_ASSERT(verify_minted(b, "10.1.2.3") == X509_V_OK);
	CU_ASSERT(verify_minted(b, "::1") == X509_V_OK);
	ca_free(a);
	ca_free(b);
}

static void test_ca_two_sessions_differ(void)
{
	ca_t *a = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	ca_t *b = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);

	CU_ASSERT_FATAL(a != NULL && b != NULL);
	CU_ASSERT(X509_NAME_cmp(X509_get_subject_name(ca_cert(a)),
				X509_get_subject_name(ca_cert(b))) != 0);
	CU_ASSERT(ASN1_INTEGER_cmp(X509_get_serialNumber(ca_cert(a)),
				   X509_get_serialNumber(ca_cert(b))) != 0);
	CU_ASSERT(EVP_PKEY_eq(X509_get0_pubkey(ca_cert(a)), X509_get0_pubkey(ca_cert(b))) != 1);
	/* The private scalars live in OpenSSL's secure heap. */
	CU_ASSERT(CRYPTO_secure_malloc_initialized() == 1);
	CU_ASSERT(CRYPTO_secure_used() > 0);
	ca_free(a);
	ca_free(b);
	ca_free(NULL);
}

static void test_ca_bad_patterns(void)
{
	static const char *const bad[][1] = {{"exa mple.com"}, {"*.1.2.3.4"}, {"a..b"},
					     {"[::1"},         {"*."},         {"x\n.com"}};
	char err[ERRLEN];
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		struct ca_config cfg = {.allowed = bad[i], .n_allowed = 1};
		ca_t *ca;

		err[0] = '\0';
		ca = ca_new(&cfg, err, sizeof(err));
		CU_ASSERT(ca == NULL);
		CU_ASSERT(strstr(err, "allowed host") != NULL);
		/* The message never carries raw control characters. */
		CU_ASSERT(strchr(err, '\n') == NULL);
		ca_free(ca);
	}
}

static void test_ca_host_parse(void)
{
	static const struct {
		const char *in, *out;
		enum ca_host_kind kind;
	} ok[] = {
		{"Example.COM.", "example.com", CA_HOST_DNS},
		{"a_b.test", "a_b.test", CA_HOST_DNS},
		{"[::1]", "::1", CA_HOST_IPV6},
		{"0:0::1", "::1", CA_HOST_IPV6},
		{"2001:DB8::1", "2001:db8::1", CA_HOST_IPV6},
		{"192.0.2.1", "192.0.2.1", CA_HOST_IPV4},
		{"localhost", "localhost", CA_HOST_DNS},
	};
	static const char *const bad[] = {"", ".", "a..b", "a b", "a,DNS:evil.com", "[::1",
					  "1:2:3", "*.x.com", "\xc3\xa9.com"};
	struct ca_host h;
	char big[300];
	size_t i;

	for (i = 0; i < ARRAY_LEN(ok); i++) {
		CU_ASSERT(ca_host_parse(ok[i].in, &h) == NULL);
		CU_ASSERT_STRING_EQUAL(h.text, ok[i].out);
		CU_ASSERT(h.kind == ok[i].kind);
	}
	for (i = 0; i < ARRAY_LEN(bad); i++)
		CU_ASSERT(ca_host_parse(bad[i], &h) != NULL);
	/* Label of 64 bytes; name of 254 bytes. */
	memset(big, 'a', 64);
	strcpy(big + 64, ".com");
	CU_ASSERT(ca_host_parse(big, &h) != NULL);
	for (i = 0; i < 254; i++)
		big[i] = (i % 2) ? '.' : 'a';
	big[253] = 'a';
	big[254] = '\0';
	CU_ASSERT(ca_host_parse(big, &h) != NULL);
	big[252] = '\0'; /* 252 bytes ending in 'a' */
	CU_ASSERT(ca_host_parse(big, &h) == NULL);
}

/* ------------------------------------------------------------ leaves */

static void test_ca_leaf_extensions(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	char err[ERRLEN] = "";
	BASIC_CONSTRAINTS *bc;
	GENERAL_NAMES *san;
	GENERAL_NAME *g;
	X509 *leaf, *ip;
	int crit = -1;

	CU_ASSERT_FATAL(ca != NULL);
	leaf = ca_leaf_cert(ca, "example.com", err, sizeof(err));
	ip = ca_leaf_cert(ca, "192.0.2.1", err, sizeof(err));
	CU_ASSERT_FATAL(leaf != NULL && ip != NULL);
	CU_ASSERT(X509_get_version(leaf) == X509_VERSION_3);
	CU_ASSERT(X509_get_signature_nid(leaf) == NID_ecdsa_with_SHA256);
	CU_ASSERT(X509_verify(leaf, X509_get0_pubkey(ca_cert(ca))) == 1);
	/* SAN: exactly the host, as DNS; as IP for the IP literal. */
	san = X509_get_ext_d2i(leaf, NID_subject_alt_name, &crit, NULL);
	CU_ASSERT_FATAL(san != NULL);
	CU_ASSERT(sk_GENERAL_NAME_num(san) == 1);
	g = sk_GENERAL_NAME_value(san, 0);
	CU_ASSERT(g->type == GEN_DNS && ASN1_STRING_length(g->d.dNSName) == 11 &&
		  memcmp(ASN1_STRING_get0_data(g->d.dNSName), "example.com", 11) == 0);
	GENERAL_NAMES_free(san);
	san = X509_get_ext_d2i(ip, NID_subject_alt_name, &crit, NULL);
	CU_ASSERT_FATAL(san != NULL);
	g = sk_GENERAL_NAME_value(san, 0);
	CU_ASSERT(sk_GENERAL_NAME_num(san) == 1 && g->type == GEN_IPADD &&
		  ASN1_STRING_length(g->d.iPAddress) == 4 &&
		  memcmp(ASN1_STRING_get0_data(g->d.iPAddress), "\xc0\x00\x02\x01", 4) == 0);
	GENERAL_NAMES_free(san);
	/* No CN on the IP leaf (it would be checked as a DNS name). */
	CU_ASSERT(X509_NAME_get_index_by_NID(X509_get_subject_name(ip), NID_commonName, -1) < 0);
	/* EKU serverAuth only; keyUsage critical digitalSignature. */
	CU_ASSERT(X509_get_extended_key_usage(leaf) == XKU_SSL_SERVER);
	CU_ASSERT(X509_get_key_usage(leaf) == KU_DIGITAL_SIGNATURE);
	CU_ASSERT(ext_critical(leaf, NID_key_usage));
	/* basicConstraints critical CA:FALSE. */
	bc = X509_get_ext_d2i(leaf, NID_basic_constraints, &crit, NULL);
	CU_ASSERT_FATAL(bc != NULL);
	CU_ASSERT(crit == 1 && bc->ca == 0);
	BASIC_CONSTRAINTS_free(bc);
	/* SKI present; AKI names the CA's SKI. */
	CU_ASSERT(X509_get0_subject_key_id(leaf) != NULL);
	CU_ASSERT_FATAL(X509_get0_authority_key_id(leaf) != NULL);
	CU_ASSERT(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf),
					X509_get0_subject_key_id(ca_cert(ca))) == 0);
	/* Random serials; one shared leaf key. */
	CU_ASSERT(ASN1_INTEGER_cmp(X509_get_serialNumber(leaf), X509_get_serialNumber(ip)) != 0);
	CU_ASSERT(EVP_PKEY_eq(X509_get0_pubkey(leaf), X509_get0_pubkey(ip)) == 1);
	CU_ASSERT(EVP_PKEY_eq(X509_get0_pubkey(leaf), X509_get0_pubkey(ca_cert(ca))) != 1);
	/* Back-dated an hour, expiring with the CA. */
	CU_ASSERT(labs(secs_from_now(X509_get0_notBefore(leaf)) + 3600) < 120);
	CU_ASSERT(ASN1_TIME_compare(X509_get0_notBefore(leaf), X509_get0_notBefore(ca_cert(ca))) >=
		  0);
	CU_ASSERT(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(ca_cert(ca))) ==
		  0);
	X509_free(leaf);
	X509_free(ip);
	ca_free(ca);
}

static void test_ca_leaf_verifies_allowed(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);

	CU_ASSERT_FATAL(ca != NULL);
	CU_ASSERT(verify_minted(ca, "example.com") == X509_V_OK);
	CU_ASSERT(verify_minted(ca, "api.wild.test") == X509_V_OK);
	CU_ASSERT(verify_minted(ca, "a.b.wild.test") == X509_V_OK);
	CU_ASSERT(verify_minted(ca, "192.0.2.1") == X509_V_OK);
	CU_ASSERT(verify_minted(ca, "2001:db8::1") == X509_V_OK);
	ca_free(ca);
}

/* Joins srv and cli with a memory BIO pair and runs their handshake
 * (at most 20 turns each); whether both finished. */
static bool mem_handshake(SSL *srv, SSL *cli)
{
	BIO *a = NULL, *b = NULL;

	if (BIO_new_bio_pair(&a, 0, &b, 0) != 1)
		return false;
	SSL_set_bio(cli, a, a);
	SSL_set_bio(srv, b, b);
	SSL_set_connect_state(cli);
	SSL_set_accept_state(srv);
	for (int i = 0; i < 20 && (!SSL_is_init_finished(cli) || !SSL_is_init_finished(srv)); i++) {
		(void)SSL_do_handshake(cli);
		(void)SSL_do_handshake(srv);
	}
	return SSL_is_init_finished(cli) && SSL_is_init_finished(srv);
}

/* The ALPN protocol a leaf server of ca selects for a client offering
 * "h2, http/1.1" (handshake over memory BIOs); h2: ca_ssl_allow_h2(). */
static void alpn_selected(ca_t *ca, bool h2, char *out, size_t outlen)
{
	static const unsigned char offer[] = "\x02h2\x08http/1.1";
	SSL_CTX *sctx = ca_leaf_ctx(ca, "example.com", NULL, 0), *cctx = SSL_CTX_new(TLS_client_method());
	SSL *srv = sctx != NULL ? SSL_new(sctx) : NULL, *cli = cctx != NULL ? SSL_new(cctx) : NULL;
	const unsigned char *p = NULL;
	unsigned int len = 0;

	out[0] = '\0';
	if (srv == NULL || cli == NULL)
		goto done;
	CU_ASSERT(SSL_set_alpn_protos(cli, offer, sizeof(offer) - 1) == 0);
	CU_ASSERT(SSL_set_tlsext_host_name(cli, "example.com") == 1);
	if (h2)
		CU_ASSERT(ca_ssl_allow_h2(srv) == 0);
	CU_ASSERT(mem_handshake(srv, cli));
	SSL_get0_alpn_selected(cli, &p, &len);
	(void)snprintf(out, outlen, "%.*s", (int)len, p != NULL ? (const char *)p : "");
done:
	SSL_free(srv);
	SSL_free(cli);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	ERR_clear_error();
}

/* The first TLS 1.2 cipher of ctx's list (TLS 1.3 suites come first in
 * SSL_CTX_get_ciphers()), and how many there are. */
static const char *first_tls12(SSL_CTX *ctx, int *n)
{
	STACK_OF(SSL_CIPHER) *sk = SSL_CTX_get_ciphers(ctx);
	const char *first = NULL;

	*n = 0;
	for (int i = 0; i < sk_SSL_CIPHER_num(sk); i++) {
		const char *name = SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, i));

		if (strncmp(name, "TLS_", 4) == 0)
			continue;
		if (first == NULL)
			first = name;
		(*n)++;
	}
	return first;
}

/* The TLS 1.2 cipher a leaf server of ca picks for a TLS 1.2 client whose
 * list puts AES-256-GCM first. */
static void tls12_picked(ca_t *ca, char *out, size_t outlen)
{
	SSL_CTX *sctx = ca_leaf_ctx(ca, "example.com", NULL, 0), *cctx = SSL_CTX_new(TLS_client_method());
	SSL *srv = sctx != NULL ? SSL_new(sctx) : NULL, *cli = NULL;

	out[0] = '\0';
	if (cctx == NULL || SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(cctx, "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
					  "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256") != 1)
		goto done;
	cli = SSL_new(cctx);
	if (srv != NULL && cli != NULL && mem_handshake(srv, cli))
		(void)snprintf(out, outlen, "%s", SSL_get_cipher_name(cli));
done:
	SSL_free(srv);
	SSL_free(cli);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	ERR_clear_error();
}

/* TLS 1.2: the leaf server and the upstream client both put AES-128-GCM
 * first (as for TLS 1.3), over OpenSSL's whole DEFAULT set: nothing
 * DEFAULT allows is dropped, nothing is added. */
static void test_ca_tls12_order(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	SSL_CTX *up = ca_upstream_ctx(NULL, 0, NULL, 0), *def = SSL_CTX_new(TLS_client_method());
	char got[64];
	int n_up = 0, n_def = 0;

	CU_ASSERT_FATAL(ca != NULL && up != NULL && def != NULL);
	tls12_picked(ca, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "ECDHE-ECDSA-AES128-GCM-SHA256");
	CU_ASSERT_STRING_EQUAL(first_tls12(up, &n_up), "ECDHE-ECDSA-AES128-GCM-SHA256");
	(void)first_tls12(def, &n_def);
	CU_ASSERT(n_def > 10);
	CU_ASSERT_EQUAL(n_up, n_def);
	SSL_CTX_free(def);
	SSL_CTX_free(up);
	ca_free(ca);
}

/* The upstream context cleanses what it decrypted once read (a real
 * value an upstream sends back lingered in OpenSSL's read buffer), and
 * its connections inherit it. */
static void test_ca_upstream_cleanse(void)
{
	SSL_CTX *up = ca_upstream_ctx(NULL, 0, NULL, 0);
	SSL *ssl = up != NULL ? SSL_new(up) : NULL;

	CU_ASSERT_FATAL(up != NULL && ssl != NULL);
	CU_ASSERT((SSL_CTX_get_options(up) & SSL_OP_CLEANSE_PLAINTEXT) != 0);
	CU_ASSERT((SSL_get_options(ssl) & SSL_OP_CLEANSE_PLAINTEXT) != 0);
	SSL_free(ssl);
	SSL_CTX_free(up);
}

/* ALPN: http/1.1 by default, h2 only on a connection allowed it (the
 * proxy allows it when the upstream negotiated h2). */
static void test_ca_alpn_h2(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	char got[32];

	CU_ASSERT_FATAL(ca != NULL);
	alpn_selected(ca, false, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "http/1.1");
	alpn_selected(ca, true, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "h2");
	/* The allowance is per connection: the next one is back to http/1.1. */
	alpn_selected(ca, false, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "http/1.1");
	ca_free(ca);
}

static void test_ca_leaf_refused_outside(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	static const char *const outside[] = {"evil.test", "wild.test", "sub.example.com",
					      "192.0.2.2", "2001:db8::2", "a b"};
	char err[ERRLEN];
	size_t i;

	CU_ASSERT_FATAL(ca != NULL);
	for (i = 0; i < ARRAY_LEN(outside); i++) {
		err[0] = '\0';
		CU_ASSERT(!ca_host_permitted(ca, outside[i]));
		CU_ASSERT(ca_leaf_ctx(ca, outside[i], err, sizeof(err)) == NULL);
		CU_ASSERT(err[0] != '\0');
	}
	CU_ASSERT(strstr(err, "a?b") != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_leaf_ctx(ca, "evil.test", err, sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "evil.test") != NULL && strstr(err, "not in allowedDomains") != NULL);
	CU_ASSERT(ca_host_permitted(ca, "EXAMPLE.com."));
	CU_ASSERT(ca_host_permitted(ca, "[2001:db8:0::1]"));
	ca_free(ca);
}

/* A leaked CA cannot vouch for names outside the allowlist. */
static void test_ca_name_constraints_reject(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);

	CU_ASSERT_FATAL(ca != NULL);
	/* Sanity: a forged leaf for an allowed name verifies. */
	CU_ASSERT(verify_forged(ca, "x.wild.test") == X509_V_OK);
	/* Exact name: other names, and (excluded) its subdomains. */
	CU_ASSERT(verify_forged(ca, "evil.test") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(ca, "example.com.evil.test") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(ca, "notexample.com") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(ca, "sub.example.com") == X509_V_ERR_EXCLUDED_VIOLATION);
	/* Wildcard: the apex is not a subdomain. */
	CU_ASSERT(verify_forged(ca, "wild.test") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(ca, "xwild.test") == X509_V_ERR_PERMITTED_VIOLATION);
	/* IP literals: only the listed addresses. */
	CU_ASSERT(verify_forged(ca, "192.0.2.2") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(ca, "2001:db8::2") == X509_V_ERR_PERMITTED_VIOLATION);
	ca_free(ca);
}

/* A name type absent from the allowlist is shut, not left open. */
static void test_ca_name_constraints_families(void)
{
	static const char *const dns_only[] = {"example.com"};
	static const char *const ip_only[] = {"192.0.2.1"};
	static const char *const v6_only[] = {"::1"};
	ca_t *d = new_ca(dns_only, 1, false, 0);
	ca_t *i4 = new_ca(ip_only, 1, false, 0);
	ca_t *i6 = new_ca(v6_only, 1, false, 0);
	ca_t *none = new_ca(NULL, 0, false, 0);
	char err[ERRLEN];

	CU_ASSERT_FATAL(d != NULL && i4 != NULL && i6 != NULL && none != NULL);
	CU_ASSERT(verify_minted(d, "example.com") == X509_V_OK);
	CU_ASSERT(verify_forged(d, "192.0.2.1") == X509_V_ERR_EXCLUDED_VIOLATION);
	CU_ASSERT(verify_forged(d, "::1") == X509_V_ERR_EXCLUDED_VIOLATION);
	CU_ASSERT(verify_minted(i4, "192.0.2.1") == X509_V_OK);
	CU_ASSERT(verify_forged(i4, "example.com") == X509_V_ERR_PERMITTED_VIOLATION);
	/* An IPv4 subtree never matches an IPv6 address: refused as a
	 * permitted violation, no exclusion of the other family needed. */
	CU_ASSERT(verify_forged(i4, "::1") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_minted(i6, "::1") == X509_V_OK);
	CU_ASSERT(verify_forged(i6, "127.0.0.1") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(i6, "example.com") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(none, "example.com") == X509_V_ERR_PERMITTED_VIOLATION);
	CU_ASSERT(verify_forged(none, "127.0.0.1") == X509_V_ERR_EXCLUDED_VIOLATION);
	CU_ASSERT(verify_forged(none, "::1") == X509_V_ERR_EXCLUDED_VIOLATION);
	CU_ASSERT(ca_leaf_ctx(none, "example.com", err, sizeof(err)) == NULL);
	/* Exclusions only where no IP literal is allowed (see ca.c). */
	{
		NAME_CONSTRAINTS *nc = X509_get_ext_d2i(ca_cert(i4), NID_name_constraints, NULL, NULL);

		CU_ASSERT_FATAL(nc != NULL);
		CU_ASSERT(nc->excludedSubtrees == NULL); /* absent, not empty */
		NAME_CONSTRAINTS_free(nc);
		nc = X509_get_ext_d2i(ca_cert(d), NID_name_constraints, NULL, NULL);
		CU_ASSERT_FATAL(nc != NULL);
		CU_ASSERT(sk_GENERAL_SUBTREE_num(nc->excludedSubtrees) == 3);
		NAME_CONSTRAINTS_free(nc);
	}
	ca_free(d);
	ca_free(i4);
	ca_free(i6);
	ca_free(none);
}

/* Where other allowed names live under an exact name, its subdomains
 * cannot be excluded (an exclusion beats every permission). */
static void test_ca_name_constraints_nested(void)
{
	static const char *const nested[] = {"example.com", "api.example.com"};
	static const char *const both[] = {"example.com", "*.example.com"};
	static const char *const under[] = {"*.example.com", "a.example.com"};
	ca_t *n = new_ca(nested, 2, false, 0);
	ca_t *b = new_ca(both, 2, false, 0);
	ca_t *u = new_ca(under, 2, false, 0);
	NAME_CONSTRAINTS *nc;

	CU_ASSERT_FATAL(n != NULL && b != NULL && u != NULL);
	CU_ASSERT(verify_minted(n, "example.com") == X509_V_OK);
	CU_ASSERT(verify_minted(n, "api.example.com") == X509_V_OK);
	/* Documented consequence: RFC 5280 "example.com" covers subdomains. */
	CU_ASSERT(verify_forged(n, "other.example.com") == X509_V_OK);
	CU_ASSERT(verify_forged(n, "example.org") == X509_V_ERR_PERMITTED_VIOLATION);
	/* api.example.com has nothing under it: its subdomains are excluded. */
	CU_ASSERT(verify_forged(n, "x.api.example.com") == X509_V_ERR_EXCLUDED_VIOLATION);
	nc = X509_get_ext_d2i(ca_cert(n), NID_name_constraints, NULL, NULL);
	CU_ASSERT_FATAL(nc != NULL);
	CU_ASSERT(!has_dns_subtree(nc->excludedSubtrees, ".example.com"));
	CU_ASSERT(has_dns_subtree(nc->excludedSubtrees, ".api.example.com"));
	NAME_CONSTRAINTS_free(nc);
	CU_ASSERT(verify_minted(b, "example.com") == X509_V_OK);
	CU_ASSERT(verify_minted(b, "x.example.com") == X509_V_OK);
	CU_ASSERT(verify_minted(u, "b.a.example.com") == X509_V_OK);
	CU_ASSERT(verify_minted(u, "a.example.com") == X509_V_OK);
	CU_ASSERT(verify_forged(u, "example.com") == X509_V_ERR_PERMITTED_VIOLATION);
	nc = X509_get_ext_d2i(ca_cert(u), NID_name_constraints, NULL, NULL);
	CU_ASSERT_FATAL(nc != NULL);
	/* a.example.com adds nothing next to *.example.com. */
	CU_ASSERT(sk_GENERAL_SUBTREE_num(nc->permittedSubtrees) == 1);
	CU_ASSERT(has_dns_subtree(nc->permittedSubtrees, ".example.com"));
	CU_ASSERT(!has_dns_subtree(nc->permittedSubtrees, "a.example.com"));
	NAME_CONSTRAINTS_free(nc);
	ca_free(n);
	ca_free(b);
	ca_free(u);
}

/* ------------------------------------------------------------ cache */

static void test_ca_cache_same_and_different(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	char err[ERRLEN] = "";
	SSL_CTX *a, *a2, *a3, *b;

	CU_ASSERT_FATAL(ca != NULL);
	a = ca_leaf_ctx(ca, "example.com", err, sizeof(err));
	a2 = ca_leaf_ctx(ca, "example.com", err, sizeof(err));
	a3 = ca_leaf_ctx(ca, "EXAMPLE.com.", err, sizeof(err));
	b = ca_leaf_ctx(ca, "api.wild.test", err, sizeof(err));
	CU_ASSERT_FATAL(a != NULL && a2 != NULL && a3 != NULL && b != NULL);
	CU_ASSERT(a == a2 && a == a3);
	CU_ASSERT(a != b);
	CU_ASSERT(X509_cmp(SSL_CTX_get0_certificate(a), SSL_CTX_get0_certificate(b)) != 0);
	/* One shared key behind every leaf. */
	CU_ASSERT(EVP_PKEY_eq(SSL_CTX_get0_privatekey(a), SSL_CTX_get0_privatekey(b)) == 1);
	CU_ASSERT(ca_cache_count(ca) == 2);
	SSL_CTX_free(a);
	SSL_CTX_free(a2);
	SSL_CTX_free(a3);
	SSL_CTX_free(b);
	ca_free(ca);
}

static void test_ca_cache_bounded(void)
{
	ca_t *ca = new_ca(NULL, 0, true, 4);
	char err[ERRLEN] = "", host[64];
	SSL_CTX *first, *again, *c;
	SSL *ssl;
	int i;

	CU_ASSERT_FATAL(ca != NULL);
	first = ca_leaf_ctx(ca, "h0.test", err, sizeof(err));
	CU_ASSERT_FATAL(first != NULL);
	for (i = 1; i < 10; i++) {
		snprintf(host, sizeof(host), "h%d.test", i);
		c = ca_leaf_ctx(ca, host, err, sizeof(err));
		CU_ASSERT(c != NULL);
		SSL_CTX_free(c);
	}
	CU_ASSERT(ca_cache_count(ca) == 4);
	CU_ASSERT(ca_cache_evictions(ca) == 6);
	/* h0 was evicted: a fresh leaf, while the old reference stays good. */
	again = ca_leaf_ctx(ca, "h0.test", err, sizeof(err));
	CU_ASSERT_FATAL(again != NULL);
	CU_ASSERT(again != first);
	ssl = SSL_new(first);
	CU_ASSERT(ssl != NULL);
	SSL_free(ssl);
	SSL_CTX_free(first);
	SSL_CTX_free(again);
	/* LRU, not FIFO: touching h7 keeps it past the next insertion. */
	c = ca_leaf_ctx(ca, "h7.test", err, sizeof(err));
	first = ca_leaf_ctx(ca, "new.test", err, sizeof(err));
	again = ca_leaf_ctx(ca, "h7.test", err, sizeof(err));
	CU_ASSERT(c != NULL && c == again);
	SSL_CTX_free(c);
	SSL_CTX_free(first);
	SSL_CTX_free(again);
	CU_ASSERT(ca_cache_count(ca) == 4);
	ca_free(ca);
}

/* ------------------------------------------------------------ files */

/* A throwaway self-signed root and its key, as an extraCaCertPaths
 * entry would hold (plus, wrongly, its key). */
static X509 *make_extra_root(EVP_PKEY **key_out)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;

	CU_ASSERT_FATAL(key != NULL && x != NULL);
	n = X509_get_subject_name(x);
	CU_ASSERT(X509_set_version(x, X509_VERSION_3) == 1);
	CU_ASSERT(ASN1_INTEGER_set(X509_get_serialNumber(x), 42) == 1);
	CU_ASSERT(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
					     (const unsigned char *)"extra test root", -1, -1,
					     0) == 1);
	CU_ASSERT(X509_set_issuer_name(x, n) == 1);
	CU_ASSERT(X509_gmtime_adj(X509_getm_notBefore(x), -60) != NULL);
	CU_ASSERT(X509_gmtime_adj(X509_getm_notAfter(x), 3600) != NULL);
	CU_ASSERT(X509_set_pubkey(x, key) == 1);
	CU_ASSERT(forge_add_conf_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") == 0);
	CU_ASSERT(X509_sign(x, key, EVP_sha256()) > 0);
	*key_out = key;
	return x;
}

/* PEM text of a certificate and of a key (malloc'd strings). */
static char *pem_of(X509 *x, EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data = NULL, *out;
	long len;

	CU_ASSERT_FATAL(b != NULL);
	if (x != NULL)
		CU_ASSERT(PEM_write_bio_X509(b, x) == 1);
	if (k != NULL)
		CU_ASSERT(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1);
	len = BIO_get_mem_data(b, &data);
	out = strndup(data, (size_t)len);
	BIO_free(b);
	return out;
}

/* Number of certificates in a PEM file, or -1. */
static int count_certs(const char *path)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	char err[ERRLEN] = "";
	int n = trust_load_certs(path, sk, false, err, sizeof(err));

	if (n < 0)
		fprintf(stderr, "%s\n", err);
	sk_X509_pop_free(sk, X509_free);
	return n;
}

/* Whether the PEM file holds a certificate equal to x. */
static bool file_has_cert(const char *path, X509 *x)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	char err[ERRLEN] = "";
	bool found = false;
	int i;

	if (trust_load_certs(path, sk, false, err, sizeof(err)) > 0)
		for (i = 0; i < sk_X509_num(sk); i++)
			if (X509_cmp(sk_X509_value(sk, i), x) == 0)
				found = true;
	sk_X509_pop_free(sk, X509_free);
	return found;
}

/* Occurrences of needle in the file. */
static int count_in_file(const char *path, const char *needle)
{
	char *data = test_read_file(path, NULL), *p;
	int n = 0;

	if (data == NULL)
		return -1;
	for (p = data; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(data);
	return n;
}

static void test_ca_write_files(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	char *dir = test_mkdtemp(), *src = test_mkdtemp();
	char extra[512], ca_pem[512], trust_pem[512], path[600], err[ERRLEN] = "";
	const char *extras[1];
	char *cert_pem, *key_pem, *content;
	int n_sys, entries = 0;
	EVP_PKEY *key;
	struct stat st;
	struct dirent *de;
	X509 *root, *sys_first;
	STACK_OF(X509) *sys;
	DIR *d;

	CU_ASSERT_FATAL(ca != NULL && dir != NULL && src != NULL);
	root = make_extra_root(&key);
	cert_pem = pem_of(root, NULL);
	key_pem = pem_of(NULL, key);
	/* The extra file: a private key, junk, the certificate, an RSA-style
	 * key block and trailing text. Only the certificate may pass. */
	snprintf(extra, sizeof(extra), "%s/extra.pem", src);
	CU_ASSERT_FATAL(asprintf(&content,
				 "%sjunk line SECRET-JUNK\n%s-----BEGIN RSA PRIVATE KEY-----\n"
				 "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
				 "-----END RSA PRIVATE KEY-----\ntrailing SECRET-JUNK\n",
				 key_pem, cert_pem) > 0);
	CU_ASSERT_FATAL(test_write_file(extra, content, strlen(content)) == 0);
	free(content);
	extras[0] = extra;

	CU_ASSERT(ca_write_files(ca, dir, extras, 1, err, sizeof(err)) == 0);
	if (err[0] != '\0')
		fprintf(stderr, "ca_write_files: %s\n", err);
	snprintf(ca_pem, sizeof(ca_pem), "%s/ca.pem", dir);
	snprintf(trust_pem, sizeof(trust_pem), "%s/trust.pem", dir);
	/* ca.pem: the CA certificate alone. */
	CU_ASSERT(count_certs(ca_pem) == 1);
	CU_ASSERT(file_has_cert(ca_pem, ca_cert(ca)));
	/* trust.pem: CA + every system root + the extra root. */
	sys = sk_X509_new_null();
	n_sys = trust_load_certs(trust_system_bundle(), sys, true, err, sizeof(err));
	CU_ASSERT_FATAL(n_sys > 0);
	sys_first = sk_X509_value(sys, 0);
	CU_ASSERT(count_certs(trust_pem) == 1 + n_sys + 1);
	CU_ASSERT(file_has_cert(trust_pem, ca_cert(ca)));
	CU_ASSERT(file_has_cert(trust_pem, root));
	CU_ASSERT(file_has_cert(trust_pem, sys_first));
	CU_ASSERT(file_has_cert(trust_pem, sk_X509_value(sys, n_sys - 1)));
	sk_X509_pop_free(sys, X509_free);
	/* No key, no junk: every block is a certificate. */
	CU_ASSERT(count_in_file(trust_pem, "PRIVATE KEY") == 0);
	CU_ASSERT(count_in_file(trust_pem, "SECRET-JUNK") == 0);
	CU_ASSERT(count_in_file(trust_pem, "-----BEGIN ") ==
		  count_in_file(trust_pem, "-----BEGIN CERTIFICATE-----"));
	CU_ASSERT(count_in_file(ca_pem, "-----BEGIN ") == 1);
	/* 0644, and nothing else in the directory (no temporary left). */
	CU_ASSERT(stat(ca_pem, &st) == 0 && (st.st_mode & 07777) == 0644);
	CU_ASSERT(stat(trust_pem, &st) == 0 && (st.st_mode & 07777) == 0644);
	d = opendir(dir);
	CU_ASSERT_FATAL(d != NULL);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		entries++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		CU_ASSERT(count_in_file(path, "PRIVATE KEY") == 0);
		CU_ASSERT(count_in_file(path, "BEGIN EC") == 0);
	}
	closedir(d);
	CU_ASSERT(entries == 2);
	/* Writing again replaces the files atomically. */
	CU_ASSERT(ca_write_files(ca, dir, NULL, 0, err, sizeof(err)) == 0);
	CU_ASSERT(count_certs(trust_pem) == 1 + n_sys);

	X509_free(root);
	EVP_PKEY_free(key);
	free(cert_pem);
	free(key_pem);
	test_rmtree(dir);
	test_rmtree(src);
	free(dir);
	free(src);
	ca_free(ca);
}

static void test_ca_write_files_errors(void)
{
	ca_t *ca = new_ca(mixed_allow, ARRAY_LEN(mixed_allow), false, 0);
	char *dir = test_mkdtemp();
	char keyonly[512], broken[512], missing[512], err[ERRLEN], *pem;
	const char *extras[1];
	EVP_PKEY *key = EVP_EC_gen("P-256");
	static const char bad_block[] = "-----BEGIN CERTIFICATE-----\nnot!base64\n"
					"-----END CERTIFICATE-----\n";

	CU_ASSERT_FATAL(ca != NULL && dir != NULL && key != NULL);
	snprintf(keyonly, sizeof(keyonly), "%s/key-only.pem", dir);
	snprintf(broken, sizeof(broken), "%s/broken.pem", dir);
	snprintf(missing, sizeof(missing), "%s/missing.pem", dir);
	pem = pem_of(NULL, key);
	CU_ASSERT_FATAL(test_write_file(keyonly, pem, strlen(pem)) == 0);
	CU_ASSERT_FATAL(test_write_file(broken, bad_block, strlen(bad_block)) == 0);
	free(pem);
	EVP_PKEY_free(key);

	/* Each error names the file; nothing is written. */
	extras[0] = keyonly;
	err[0] = '\0';
	CU_ASSERT(ca_write_files(ca, dir, extras, 1, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, keyonly) != NULL && strstr(err, "no \"BEGIN CERTIFICATE\"") != NULL);
	extras[0] = broken;
	err[0] = '\0';
	CU_ASSERT(ca_write_files(ca, dir, extras, 1, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, broken) != NULL && strstr(err, "malformed") != NULL);
	extras[0] = missing;
	err[0] = '\0';
	CU_ASSERT(ca_write_files(ca, dir, extras, 1, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, missing) != NULL);
	extras[0] = "/dev/zero";
	err[0] = '\0';
	CU_ASSERT(ca_write_files(ca, dir, extras, 1, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, "not a regular file") != NULL);
	snprintf(keyonly, sizeof(keyonly), "%s/ca.pem", dir);
	CU_ASSERT(access(keyonly, F_OK) != 0);
	/* A missing system bundle says what to do. */
	{
		char *saved = getenv("SSL_CERT_FILE") != NULL ? strdup(getenv("SSL_CERT_FILE")) : NULL;

		CU_ASSERT(setenv("SSL_CERT_FILE", missing, 1) == 0);
		err[0] = '\0';
		CU_ASSERT(ca_write_files(ca, dir, NULL, 0, err, sizeof(err)) == -1);
		CU_ASSERT(strstr(err, missing) != NULL && strstr(err, "ca-certificates") != NULL);
		CU_ASSERT(ca_upstream_ctx(NULL, 0, err, sizeof(err)) == NULL);
		if (saved != NULL) {
			CU_ASSERT(setenv("SSL_CERT_FILE", saved, 1) == 0);
		} else {
			CU_ASSERT(unsetenv("SSL_CERT_FILE") == 0);
		}
		free(saved);
	}
	/* A session directory that does not exist. */
	err[0] = '\0';
	CU_ASSERT(ca_write_files(ca, missing, NULL, 0, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, missing) != NULL);
	test_rmtree(dir);
	free(dir);
	ca_free(ca);
}

#define SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* Does ctx's store verify the first certificate of the system bundle (a
 * self-signed root: it verifies only if the store trusts it)? */
static bool system_root_trusted(SSL_CTX *ctx)
{
	FILE *f = fopen(SYSTEM_BUNDLE, "r");
	X509 *root = f != NULL ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	bool ok = false;

	if (f != NULL)
		fclose(f);
	if (root != NULL && vc != NULL && X509_STORE_CTX_init(vc, SSL_CTX_get_cert_store(ctx), root, NULL) == 1)
		ok = X509_verify_cert(vc) == 1;
	X509_STORE_CTX_free(vc);
	X509_free(root);
	ERR_clear_error();
	return ok;
}

static void test_ca_upstream_ctx(void)
{
	char *dir = test_mkdtemp();
	char extra[512], err[ERRLEN] = "", *pem;
	const char *extras[1];
	EVP_PKEY *key;
	X509 *root = make_extra_root(&key);
	SSL_CTX *ctx;
	STACK_OF(X509_OBJECT) *objs;
	bool found = false;
	int i;

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(extra, sizeof(extra), "%s/extra.pem", dir);
	pem = pem_of(root, NULL);
	CU_ASSERT_FATAL(test_write_file(extra, pem, strlen(pem)) == 0);
	free(pem);
	extras[0] = extra;
	ctx = ca_upstream_ctx(extras, 1, err, sizeof(err));
	CU_ASSERT_FATAL(ctx != NULL);
	CU_ASSERT(SSL_CTX_get_verify_mode(ctx) == SSL_VERIFY_PEER);
	CU_ASSERT(SSL_CTX_get_min_proto_version(ctx) == TLS1_2_VERSION);
	objs = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
	for (i = 0; i < sk_X509_OBJECT_num(objs); i++) {
		X509 *x = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));

		if (x != NULL && X509_cmp(x, root) == 0)
			found = true;
	}
	CU_ASSERT(found);
	CU_ASSERT(system_root_trusted(ctx));
	SSL_CTX_free(ctx);
	/* Both ways of finding the system roots: the bundle named by
	 * $SSL_CERT_FILE (read whole), and the hashed directory looked up
	 * when a chain needs it (when $SSL_CERT_FILE is not set: CI). */
	{
		char *saved = getenv("SSL_CERT_FILE") != NULL ? strdup(getenv("SSL_CERT_FILE")) : NULL;

		for (int mode = 0; mode < 2; mode++) {
			if (mode == 0) {
				CU_ASSERT(setenv("SSL_CERT_FILE", SYSTEM_BUNDLE, 1) == 0);
			} else {
				CU_ASSERT(unsetenv("SSL_CERT_FILE") == 0);
			}
			ctx = ca_upstream_ctx(extras, 1, err, sizeof(err));
			CU_ASSERT_FATAL(ctx != NULL);
			ROW(system_root_trusted(ctx), "%s: the first root of %s does not verify",
			    mode == 0 ? "SSL_CERT_FILE set" : "hashed directory", SYSTEM_BUNDLE);
			SSL_CTX_free(ctx);
		}
		if (saved != NULL) {
			CU_ASSERT(setenv("SSL_CERT_FILE", saved, 1) == 0);
		}
		free(saved);
	}
	extras[0] = "/nonexistent/extra.pem";
	err[0] = '\0';
	CU_ASSERT(ca_upstream_ctx(extras, 1, err, sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "/nonexistent/extra.pem") != NULL);
	X509_free(root);
	EVP_PKEY_free(key);
	test_rmtree(dir);
	free(dir);
}

/* ------------------------------------------------------------ on the wire */

#define WIRE_BODY "hello from the passavant ca test\n"
#define WIRE_TIMEOUT_MS 30000

/* A one-connection-at-a-time TLS server on 127.0.0.1 in a thread. */
struct tls_server {
	SSL_CTX *ctx;          /* served context (our reference) */
	int lfd;               /* listening socket */
	int port;              /* its port */
	pthread_t thread;      /* the accept loop */
	atomic_bool stop;      /* set to end the loop */
	atomic_int served;     /* handshakes completed and answered */
	atomic_int failed;     /* handshakes that failed */
	char alpn[32];         /* last ALPN selected (written by the thread) */
};

static void serve_one(struct tls_server *s, int fd)
{
	struct timeval tv = {.tv_sec = 10};
	char buf[4096];
	size_t got = 0;
	SSL *ssl;
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				   "Content-Length: 33\r\nConnection: close\r\n\r\n" WIRE_BODY;

	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ssl = SSL_new(s->ctx);
	if (ssl == NULL || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1) {
		atomic_fetch_add(&s->failed, 1);
		goto out;
	}
	{
		const unsigned char *p = NULL;
		unsigned int len = 0;

		SSL_get0_alpn_selected(ssl, &p, &len);
		snprintf(s->alpn, sizeof(s->alpn), "%.*s", (int)len, p != NULL ? (const char *)p : "");
	}
	/* Read the request head, then answer and close. */
	while (got < sizeof(buf) - 1) {
		int r = SSL_read(ssl, buf + got, (int)(sizeof(buf) - 1 - got));

		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			break;
	}
	if (SSL_write(ssl, resp, (int)strlen(resp)) > 0)
		atomic_fetch_add(&s->served, 1);
	(void)SSL_shutdown(ssl);
out:
	SSL_free(ssl);
	close(fd);
	ERR_clear_error();
}

static void *server_main(void *arg)
{
	struct tls_server *s = arg;

	while (!atomic_load(&s->stop)) {
		struct pollfd pfd = {.fd = s->lfd, .events = POLLIN};
		int fd;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd >= 0)
			serve_one(s, fd);
	}
	return NULL;
}

/* Starts a server for ctx (takes its own reference). */
static int server_start(struct tls_server *s, SSL_CTX *ctx)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t slen = sizeof(sin);

	memset(s, 0, sizeof(*s));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(s->lfd, 16) != 0 || getsockname(s->lfd, (struct sockaddr *)&sin, &slen) != 0)
		return -1;
	s->port = ntohs(sin.sin_port);
	if (SSL_CTX_up_ref(ctx) != 1)
		return -1;
	s->ctx = ctx;
	atomic_init(&s->stop, false);
	atomic_init(&s->served, 0);
	atomic_init(&s->failed, 0);
	if (pthread_create(&s->thread, NULL, server_main, s) != 0) {
		SSL_CTX_free(ctx);
		return -1;
	}
	return 0;
}

static void server_stop(struct tls_server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	SSL_CTX_free(s->ctx);
}

/*
 * Runs curl against https://name:port/, connecting to 127.0.0.1 whatever
 * name is, trusting only cafile. Returns curl's exit status; *out and *err get
 * its output (caller frees).
 */
static int run_curl(const char *cafile, const char *name, int port, char **out, char **err)
{
	char url[300], conn[300];
	char *argv[] = {"curl", "-sS", "--noproxy", "*", "--max-time", "20", "--cacert",
			(char *)cafile, "--connect-to", conn, url, NULL};
	bool v6 = strchr(name, ':') != NULL;

	snprintf(url, sizeof(url), "https://%s%s%s:%d/", v6 ? "[" : "", name, v6 ? "]" : "", port);
	/* --connect-to HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT; empty
	 * source fields match any host and port. */
	snprintf(conn, sizeof(conn), "::127.0.0.1:%d", port);
	return test_run_capture(argv, out, err, WIRE_TIMEOUT_MS);
}

/* python3 with ssl.create_default_context(cafile=...) (which trusts only
 * cafile), checking name (DNS or IP) while connecting to 127.0.0.1. */
static const char py_client[] =
	"import socket, ssl, sys\n"
	"cafile, name, port = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
	"ctx = ssl.create_default_context(cafile=cafile)\n"
	"ctx.set_alpn_protocols(['h2', 'http/1.1'])\n"
	"raw = socket.create_connection(('127.0.0.1', port), timeout=20)\n"
	"try:\n"
	"    tls = ctx.wrap_socket(raw, server_hostname=name)\n"
	"except ssl.SSLCertVerificationError as e:\n"
	"    print('verify-failed:', e.verify_message)\n"
	"    sys.exit(3)\n"
	"print('alpn:', tls.selected_alpn_protocol())\n"
	"tls.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')\n"
	"data = b''\n"
	"while True:\n"
	"    chunk = tls.recv(4096)\n"
	"    if not chunk:\n"
	"        break\n"
	"    data += chunk\n"
	"sys.stdout.write(data.decode('latin-1'))\n";

static int run_python(const char *cafile, const char *name, int port, char **out, char **err)
{
	char portbuf[16];
	char *argv[] = {(char *)test_python(), "-c", (char *)py_client, (char *)cafile, (char *)name, portbuf,
			NULL};

	snprintf(portbuf, sizeof(portbuf), "%d", port);
	return test_run_capture(argv, out, err, WIRE_TIMEOUT_MS);
}

/* Both clients, expecting success: the body arrives, ALPN is http/1.1. */
static void expect_clients_accept(const char *trust, SSL_CTX *ctx, const char *name)
{
	struct tls_server srv;
	char *out = NULL, *err = NULL;
	int rc;

	CU_ASSERT_FATAL(server_start(&srv, ctx) == 0);
	rc = run_curl(trust, name, srv.port, &out, &err);
	CU_ASSERT(rc == 0);
	CU_ASSERT(out != NULL && strstr(out, WIRE_BODY) != NULL);
	if (rc != 0)
		fprintf(stderr, "curl %s: rc %d: %s\n", name, rc, err != NULL ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	rc = run_python(trust, name, srv.port, &out, &err);
	CU_ASSERT(rc == 0);
	CU_ASSERT(out != NULL && strstr(out, WIRE_BODY) != NULL);
	CU_ASSERT(out != NULL && strstr(out, "alpn: http/1.1") != NULL);
	if (rc != 0)
		fprintf(stderr, "python3 %s: rc %d: %s%s\n", name, rc, out != NULL ? out : "",
			err != NULL ? err : "");
	free(out);
	free(err);
	server_stop(&srv);
	CU_ASSERT(atomic_load(&srv.served) == 2);
}

/* Both clients, expecting a certificate rejection whose message names
 * the name-constraint violation (why: "permitted" or "excluded"). */
static void expect_clients_reject(const char *trust, SSL_CTX *ctx, const char *name,
				  const char *why)
{
	struct tls_server srv;
	char *out = NULL, *err = NULL, msg[64];
	int rc;

	snprintf(msg, sizeof(msg), "%s subtree violation", why);
	CU_ASSERT_FATAL(server_start(&srv, ctx) == 0);
	rc = run_curl(trust, name, srv.port, &out, &err);
	if (getenv("CA_TEST_VERBOSE") != NULL)
		fprintf(stderr, "curl %s: rc %d: %s", name, rc, err != NULL ? err : "\n");
	CU_ASSERT(rc == 60); /* CURLE_PEER_FAILED_VERIFICATION */
	CU_ASSERT(err != NULL && strstr(err, msg) != NULL);
	CU_ASSERT(out == NULL || strstr(out, WIRE_BODY) == NULL);
	if (err == NULL || strstr(err, msg) == NULL)
		fprintf(stderr, "curl %s: rc %d: %s\n", name, rc, err != NULL ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	rc = run_python(trust, name, srv.port, &out, &err);
	if (getenv("CA_TEST_VERBOSE") != NULL)
		fprintf(stderr, "python3 %s: rc %d: %s", name, rc, out != NULL ? out : "\n");
	CU_ASSERT(rc == 3);
	CU_ASSERT(out != NULL && strstr(out, msg) != NULL);
	if (out == NULL || strstr(out, msg) == NULL)
		fprintf(stderr, "python3 %s: rc %d: %s%s\n", name, rc, out != NULL ? out : "",
			err != NULL ? err : "");
	free(out);
	free(err);
	server_stop(&srv);
	CU_ASSERT(atomic_load(&srv.served) == 0);
}

static void test_ca_wire_clients(void)
{
	static const char *const allow[] = {"localhost", "*.wild.test", "127.0.0.1", "::1"};
	ca_t *ca = new_ca(allow, ARRAY_LEN(allow), false, 0);
	char *dir = test_mkdtemp();
	char trust[512], err[ERRLEN] = "";
	static const struct {
		const char *host, *why;
	} forged[] = {
		{"evil.test", "permitted"},     /* not listed at all */
		{"wild.test", "permitted"},     /* apex of a wildcard */
		{"sub.localhost", "excluded"},  /* under an exact name */
		{"10.9.9.9", "permitted"},      /* unlisted IPv4 literal */
		{"::2", "permitted"},           /* unlisted IPv6 literal */
	};
	static const char *const good[] = {"localhost", "api.wild.test", "127.0.0.1", "::1"};
	SSL_CTX *ctx;
	size_t i;

	CU_ASSERT_FATAL(ca != NULL && dir != NULL);
	CU_ASSERT_FATAL(ca_write_files(ca, dir, NULL, 0, err, sizeof(err)) == 0);
	snprintf(trust, sizeof(trust), "%s/trust.pem", dir);
	for (i = 0; i < ARRAY_LEN(good); i++) {
		ctx = ca_leaf_ctx(ca, good[i], err, sizeof(err));
		CU_ASSERT_FATAL(ctx != NULL);
		expect_clients_accept(trust, ctx, good[i]);
		SSL_CTX_free(ctx);
	}
	for (i = 0; i < ARRAY_LEN(forged); i++) {
		ctx = ca_forge_ctx_unchecked(ca, forged[i].host, err, sizeof(err));
		CU_ASSERT_FATAL(ctx != NULL);
		expect_clients_reject(trust, ctx, forged[i].host, forged[i].why);
		SSL_CTX_free(ctx);
	}
	test_rmtree(dir);
	free(dir);
	ca_free(ca);
}

/* ca_upstream_ctx as a client of a ca_leaf_ctx server: chain and host
 * checks, ALPN http/1.1 on both ends. */
static void test_ca_wire_upstream(void)
{
	static const char *const allow[] = {"localhost"};
	ca_t *ca = new_ca(allow, 1, false, 0);
	char *dir = test_mkdtemp();
	char capem[512], err[ERRLEN] = "";
	const char *extras[1];
	struct tls_server srv;
	SSL_CTX *leaf, *up;
	int round;

	CU_ASSERT_FATAL(ca != NULL && dir != NULL);
	CU_ASSERT_FATAL(ca_write_files(ca, dir, NULL, 0, err, sizeof(err)) == 0);
	snprintf(capem, sizeof(capem), "%s/ca.pem", dir);
	extras[0] = capem;
	up = ca_upstream_ctx(extras, 1, err, sizeof(err));
	leaf = ca_leaf_ctx(ca, "localhost", err, sizeof(err));
	CU_ASSERT_FATAL(up != NULL && leaf != NULL);
	CU_ASSERT_FATAL(server_start(&srv, leaf) == 0);
	for (round = 0; round < 2; round++) {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		const unsigned char *alpn = NULL;
		unsigned int alpn_len = 0;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		SSL *ssl = SSL_new(up);
		int ok;

		sin.sin_port = htons((uint16_t)srv.port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		CU_ASSERT_FATAL(fd >= 0 && ssl != NULL);
		CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
		/* What the proxy does per connection: SNI + host check. */
		CU_ASSERT(SSL_set_tlsext_host_name(ssl, "localhost") == 1);
		CU_ASSERT(SSL_set1_host(ssl, round == 0 ? "localhost" : "otherhost") == 1);
		CU_ASSERT(SSL_set_fd(ssl, fd) == 1);
		ok = SSL_connect(ssl);
		if (round == 0) {
			CU_ASSERT(ok == 1);
			SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
			CU_ASSERT(alpn_len == 8 && memcmp(alpn, "http/1.1", 8) == 0);
			CU_ASSERT(SSL_write(ssl, "GET / HTTP/1.1\r\n\r\n", 18) == 18);
		} else {
			CU_ASSERT(ok != 1);
			CU_ASSERT(SSL_get_verify_result(ssl) == X509_V_ERR_HOSTNAME_MISMATCH);
		}
		SSL_free(ssl);
		close(fd);
		ERR_clear_error();
	}
	/* A client offering only h2 gets no ALPN answer, not a failure. */
	{
		static const unsigned char h2[] = "\x02h2";
		struct sockaddr_in sin = {.sin_family = AF_INET};
		const unsigned char *alpn = NULL;
		unsigned int alpn_len = 0;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		SSL *ssl = SSL_new(up);

		sin.sin_port = htons((uint16_t)srv.port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		CU_ASSERT_FATAL(fd >= 0 && ssl != NULL);
		CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
		CU_ASSERT(SSL_set_alpn_protos(ssl, h2, sizeof(h2) - 1) == 0);
		CU_ASSERT(SSL_set1_host(ssl, "localhost") == 1);
		CU_ASSERT(SSL_set_fd(ssl, fd) == 1);
		CU_ASSERT(SSL_connect(ssl) == 1);
		SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
		CU_ASSERT(alpn_len == 0);
		CU_ASSERT(SSL_write(ssl, "GET / HTTP/1.1\r\n\r\n", 18) == 18);
		SSL_free(ssl);
		close(fd);
		ERR_clear_error();
	}
	server_stop(&srv);
	SSL_CTX_free(leaf);
	SSL_CTX_free(up);
	test_rmtree(dir);
	free(dir);
	ca_free(ca);
}

TEST_REGISTRAR(ca_register)
{
	CU_pSuite s = test_suite("ca_cert", NULL, NULL);

	test_add(s, "CA extensions parse back as specified", test_ca_extensions);
	test_add(s, "bare * gives no name constraints", test_ca_no_constraints_with_any);
	test_add(s, "two sessions get different CAs", test_ca_two_sessions_differ);
	test_add(s, "bad allowlist patterns are named", test_ca_bad_patterns);
	test_add(s, "host parsing and normalisation", test_ca_host_parse);
	test_add(s, "leaf extensions, shared key, back-dating", test_ca_leaf_extensions);
	test_add(s, "leaves for allowed hosts verify", test_ca_leaf_verifies_allowed);
	test_add(s, "no leaf for hosts outside the allowlist", test_ca_leaf_refused_outside);
	test_add(s, "name constraints reject forged leaves", test_ca_name_constraints_reject);
	test_add(s, "absent name families are shut", test_ca_name_constraints_families);
	test_add(s, "nested exact names and wildcards", test_ca_name_constraints_nested);

	s = test_suite("ca_cache", NULL, NULL);
	test_add(s, "same host same leaf, other host other leaf",
		 test_ca_cache_same_and_different);
	test_add(s, "bounded LRU evicts, references survive", test_ca_cache_bounded);

	s = test_suite("ca_files", NULL, NULL);
	test_add(s, "ca.pem and trust.pem content, no key", test_ca_write_files);
	test_add(s, "errors name the file", test_ca_write_files_errors);
	test_add(s, "upstream context trusts system and extra roots", test_ca_upstream_ctx);
	test_add(s, "ALPN h2 only where allowed", test_ca_alpn_h2);
	test_add(s, "TLS 1.2: AES-128-GCM first, DEFAULT's set", test_ca_tls12_order);
	test_add(s, "upstream context: decrypted records cleansed once read", test_ca_upstream_cleanse);

	s = test_suite("ca_wire", NULL, NULL);
	test_add(s, "curl and python3 accept allowed, reject forged", test_ca_wire_clients);
	test_add(s, "upstream context against a leaf server", test_ca_wire_upstream);
}

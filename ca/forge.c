/*
 * forge.c - host parsing and leaf certificate minting for the session CA.
 *
 * Everything here is pure apart from the RNG and the clock: it never looks
 * at the allowlist (ca.c decides whether a host may get a leaf) and never
 * keeps state. Host names reach certificates only as GENERAL_NAME values
 * built by hand, never through OpenSSL's configuration-string parser, so a
 * host containing ',' or ':' cannot inject extra names.
 */
#include "ca_int.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

/* Serial numbers: 128 random bits (RFC 5280 allows up to 20 octets). */
#define FORGE_SERIAL_BYTES 16
/* Longest DNS label (RFC 1035). */
#define FORGE_LABEL_MAX 63

void ca_ssl_err(char *err, size_t errlen, const char *fmt, ...)
{
	char detail[256];
	unsigned long e;
	va_list ap;

	/* The oldest error is the root cause; later ones are the call stack
	 * unwinding ("PEM lib", ...). */
	e = ERR_get_error();
	if (e != 0)
		ERR_error_string_n(e, detail, sizeof(detail));
	else
		snprintf(detail, sizeof(detail), "no OpenSSL detail");
	ERR_clear_error();
	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	errbuf_append(err, errlen, ": %s", detail);
}

/* A DNS name: labels of 1-63 letters, digits, '-' or '_', joined by dots;
 * lower-cased into out. Underscores appear in real service names; the
 * certificate only asserts what the client asked for. */
static const char *host_parse_dns(const char *in, size_t len, char *out)
{
	size_t i, label = 0;

	if (len == 0)
		return "empty host name";
	if (len > CA_HOST_MAX)
		return "host name longer than 253 bytes";
	for (i = 0; i < len; i++) {
		char c = in[i];

		if (c == '.') {
			if (label == 0)
				return "empty label in host name";
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			   c == '_') {
			label++;
		} else if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
			label++;
		} else {
			return "host name with a character other than letters, digits, '-', '_' "
			       "and '.'";
		}
		if (label > FORGE_LABEL_MAX)
			return "host name label longer than 63 bytes";
		out[i] = c;
	}
	if (label == 0)
		return "empty label in host name";
	out[len] = '\0';
	return NULL;
}

const char *ca_host_parse(const char *in, struct ca_host *out)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t len = strlen(in);

	memset(out, 0, sizeof(*out));
	/* IPv6, bracketed or not. */
	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		if (len - 2 >= sizeof(buf))
			return "invalid bracketed IPv6 literal";
		memcpy(buf, in + 1, len - 2);
		buf[len - 2] = '\0';
		if (inet_pton(AF_INET6, buf, out->addr) != 1)
			return "invalid bracketed IPv6 literal";
		goto ipv6;
	}
	if (strchr(in, ':') != NULL) {
		if (inet_pton(AF_INET6, in, out->addr) != 1)
			return "invalid IPv6 literal";
		goto ipv6;
	}
	/* inet_pton(AF_INET) takes only the strict dotted quad, unlike
	 * inet_aton ("127.1", "0x7f.1"), which stays a (bogus) name here. */
	if (inet_pton(AF_INET, in, out->addr) == 1) {
		out->kind = CA_HOST_IPV4;
		out->addrlen = 4;
		if (inet_ntop(AF_INET, out->addr, out->text, sizeof(out->text)) == NULL)
			return "invalid IPv4 literal";
		return NULL;
	}
	/* A trailing dot names the same host (fully qualified form). */
	if (len > 0 && in[len - 1] == '.')
		len--;
	out->kind = CA_HOST_DNS;
	return host_parse_dns(in, len, out->text);

ipv6:
	out->kind = CA_HOST_IPV6;
	out->addrlen = 16;
	if (inet_ntop(AF_INET6, out->addr, out->text, sizeof(out->text)) == NULL)
		return "invalid IPv6 literal";
	return NULL;
}

int forge_set_serial(X509 *x)
{
	unsigned char raw[FORGE_SERIAL_BYTES];
	BIGNUM *bn = NULL;
	int rc = -1;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	/* A zero serial is not allowed (RFC 5280 4.1.2.2): 2^-128, but free
	 * to rule out. */
	raw[sizeof(raw) - 1] |= 1;
	bn = BN_bin2bn(raw, sizeof(raw), NULL);
	if (bn == NULL)
		return -1;
	/* BN_to_ASN1_INTEGER writes into the certificate's own serial. */
	if (BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL)
		rc = 0;
	BN_free(bn);
	return rc;
}

int forge_add_conf_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	int ok;

	/* No config database: the values are fixed strings of this module. */
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (ext == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -1;
}

/* subjectAltName with exactly one entry, the host, as DNS or IP. */
static int add_san(X509 *x, const struct ca_host *host)
{
	GENERAL_NAMES *gens = NULL;
	GENERAL_NAME *gen = NULL;
	int rc = -1;

	gens = sk_GENERAL_NAME_new_null();
	gen = GENERAL_NAME_new();
	if (gens == NULL || gen == NULL)
		goto out;
	if (host->kind == CA_HOST_DNS) {
		ASN1_IA5STRING *dns = ASN1_IA5STRING_new();

		if (dns == NULL)
			goto out;
		if (ASN1_STRING_set(dns, host->text, (int)strlen(host->text)) != 1) {
			ASN1_IA5STRING_free(dns);
			goto out;
		}
		GENERAL_NAME_set0_value(gen, GEN_DNS, dns);
	} else {
		ASN1_OCTET_STRING *ip = ASN1_OCTET_STRING_new();

		if (ip == NULL)
			goto out;
		if (ASN1_OCTET_STRING_set(ip, host->addr, (int)host->addrlen) != 1) {
			ASN1_OCTET_STRING_free(ip);
			goto out;
		}
		GENERAL_NAME_set0_value(gen, GEN_IPADD, ip);
	}
	if (sk_GENERAL_NAME_push(gens, gen) == 0)
		goto out;
	gen = NULL; /* owned by gens now */
	/* Not critical: the subject is not empty (RFC 5280 4.2.1.6). */
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1)
		rc = 0;
out:
	GENERAL_NAME_free(gen);
	GENERAL_NAMES_free(gens);
	return rc;
}

/*
 * Subject: O=passavant, plus CN=<name> for DNS hosts. An IP host gets no
 * CN: OpenSSL checks a leaf's CN against DNS name constraints when the leaf
 * has no DNS SAN, and a CN of "192.0.2.1" looks like a DNS name to it, so
 * it would fail a DNS-constrained CA for a permitted IP.
 */
static int set_leaf_subject(X509 *x, const struct ca_host *host)
{
	X509_NAME *name = X509_get_subject_name(x);

	if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
				       (const unsigned char *)"passavant", -1, -1, 0) != 1)
		return -1;
	/* CN is limited to 64 bytes (RFC 5280 ub-common-name); a longer
	 * name lives in the SAN only. */
	if (host->kind == CA_HOST_DNS && strlen(host->text) <= 64 &&
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
				       (const unsigned char *)host->text, -1, -1, 0) != 1)
		return -1;
	return 0;
}

/* notBefore = max(now - backdate, CA notBefore); notAfter = CA notAfter, so
 * a leaf never outlives its issuer. */
static int set_leaf_validity(X509 *x, X509 *ca_cert)
{
	const ASN1_TIME *ca_nb = X509_get0_notBefore(ca_cert);
	int day, sec;

	if (X509_gmtime_adj(X509_getm_notBefore(x), -CA_BACKDATE_SECONDS) == NULL)
		return -1;
	if (ASN1_TIME_diff(&day, &sec, ca_nb, X509_get0_notBefore(x)) != 1)
		return -1;
	if ((day < 0 || sec < 0) && X509_set1_notBefore(x, ca_nb) != 1)
		return -1;
	if (X509_set1_notAfter(x, X509_get0_notAfter(ca_cert)) != 1)
		return -1;
	return 0;
}

X509 *forge_leaf(X509 *ca_cert, EVP_PKEY *ca_key, EVP_PKEY *leaf_key, const struct ca_host *host,
		 char *err, size_t errlen)
{
	X509 *x;

	x = X509_new();
	if (x == NULL) {
		ca_ssl_err(err, errlen, "leaf for %s: out of memory", host->text);
		return NULL;
	}
	if (X509_set_version(x, X509_VERSION_3) != 1 || forge_set_serial(x) != 0 ||
	    set_leaf_subject(x, host) != 0 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca_cert)) != 1 ||
	    set_leaf_validity(x, ca_cert) != 0 || X509_set_pubkey(x, leaf_key) != 1)
		goto fail;
	/* SKI needs the public key set; AKI copies the CA's SKI. */
	if (forge_add_conf_ext(x, ca_cert, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
	    forge_add_conf_ext(x, ca_cert, NID_key_usage, "critical,digitalSignature") != 0 ||
	    forge_add_conf_ext(x, ca_cert, NID_ext_key_usage, "serverAuth") != 0 ||
	    forge_add_conf_ext(x, ca_cert, NID_subject_key_identifier, "hash") != 0 ||
	    forge_add_conf_ext(x, ca_cert, NID_authority_key_identifier, "keyid:always") != 0 ||
	    add_san(x, host) != 0)
		goto fail;
	/* ECDSA with SHA-256, matching the P-256 CA key. */
	if (X509_sign(x, ca_key, EVP_sha256()) <= 0)
		goto fail;
	return x;
fail:
	ca_ssl_err(err, errlen, "cannot mint a leaf certificate for %s", host->text);
	X509_free(x);
	return NULL;
}

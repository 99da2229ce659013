/*
 * certs.c - test CA and leaf certificates with the OpenSSL 3 API (certs.h).
 */
#include "tests/support/certs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static void ssl_fail(const char *what)
{
	unsigned long e;

	fprintf(stderr, "certs: %s failed\n", what);
	while ((e = ERR_get_error()) != 0) {
		char buf[256];

		ERR_error_string_n(e, buf, sizeof(buf));
		fprintf(stderr, "certs:   %s\n", buf);
	}
}

static EVP_PKEY *make_key(void)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");

	if (k == NULL)
		ssl_fail("EVP_EC_gen(P-256)");
	return k;
}

/* Adds one extension given in openssl config syntax. Returns 0 or -1. */
static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL) {
		ssl_fail(value);
		return -1;
	}
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	if (!ok) {
		ssl_fail("X509_add_ext");
		return -1;
	}
	return 0;
}

/* A random positive 64-bit serial. */
static int set_serial(X509 *cert)
{
	unsigned char rnd[8];
	BIGNUM *bn;
	int ok;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
		ssl_fail("RAND_bytes");
		return -1;
	}
	rnd[0] &= 0x7f;
	rnd[0] |= 0x01;
	bn = BN_bin2bn(rnd, sizeof(rnd), NULL);
	if (bn == NULL) {
		ssl_fail("BN_bin2bn");
		return -1;
	}
	ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
	BN_free(bn);
	if (!ok) {
		ssl_fail("BN_to_ASN1_INTEGER");
		return -1;
	}
	return 0;
}

/*
 * Builds a certificate for key with subject CN=cn, signed by issuer_key and
 * issued by issuer (NULL: self-signed). san may be NULL (no SAN extension).
 * is_ca selects the CA or leaf extension set.
 */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
		       const char *san, int is_ca)
{
	X509 *c = X509_new();
	X509_NAME *name;

	if (c == NULL) {
		ssl_fail("X509_new");
		return NULL;
	}
	name = X509_get_subject_name(c);
	if (!X509_set_version(c, 2) || set_serial(c) < 0 ||
	    X509_gmtime_adj(X509_getm_notBefore(c), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(c), 30L * 24 * 3600) == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
					(const unsigned char *)"passavant tests", -1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name) ||
	    !X509_set_pubkey(c, key)) {
		ssl_fail("building the certificate");
		goto fail;
	}
	if (is_ca) {
		if (add_ext(c, issuer ? issuer : c, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
		    add_ext(c, issuer ? issuer : c, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
		    add_ext(c, issuer ? issuer : c, NID_subject_key_identifier, "hash") < 0)
			goto fail;
	} else {
		if (add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(c, issuer, NID_key_usage, "critical,digitalSignature") < 0 ||
		    add_ext(c, issuer, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(c, issuer, NID_subject_key_identifier, "hash") < 0 ||
		    add_ext(c, issuer, NID_authority_key_identifier, "keyid:always") < 0)
			goto fail;
	}
	if (san != NULL && add_ext(c, issuer ? issuer : c, NID_subject_alt_name, san) < 0)
		goto fail;
	if (X509_sign(c, issuer_key, EVP_sha256()) <= 0) {
		ssl_fail("X509_sign");
		goto fail;
	}
	return c;
fail:
	X509_free(c);
	return NULL;
}

/* Opens dir/name for writing with the given mode (replacing it). */
static FILE *open_out(const char *dir, const char *name, mode_t mode)
{
	char path[4096];
	int fd;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		fprintf(stderr, "certs: path too long: %s/%s\n", dir, name);
		return NULL;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		fprintf(stderr, "certs: unlink %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0) {
		fprintf(stderr, "certs: create %s: %s\n", path, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (f == NULL) {
		fprintf(stderr, "certs: fdopen %s: %s\n", path, strerror(errno));
		close(fd);
	}
	return f;
}

static int close_out(FILE *f, const char *name)
{
	if (fclose(f) != 0) {
		fprintf(stderr, "certs: writing %s: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_cert(const char *dir, const char *name, X509 *c)
{
	FILE *f = open_out(dir, name, 0644);
	int ok;

	if (f == NULL)
		return -1;
	ok = PEM_write_X509(f, c);
	if (close_out(f, name) < 0 || !ok) {
		if (!ok)
			ssl_fail("PEM_write_X509");
		return -1;
	}
	return 0;
}

static int write_key(const char *dir, const char *name, EVP_PKEY *k)
{
	FILE *f = open_out(dir, name, 0600);
	int ok;

	if (f == NULL)
		return -1;
	ok = PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	if (close_out(f, name) < 0 || !ok) {
		if (!ok)
			ssl_fail("PEM_write_PrivateKey");
		return -1;
	}
	return 0;
}

/* "DNS:a,IP:127.0.0.1,..." for names; malloc'd, NULL on error. */
static char *san_string(const char *const *names)
{
	size_t cap = 1, i;
	char *s, *p;

	for (i = 0; names[i] != NULL; i++)
		cap += strlen(names[i]) + 6;
	s = malloc(cap);
	if (s == NULL)
		return NULL;
	p = s;
	*p = '\0';
	for (i = 0; names[i] != NULL; i++) {
		unsigned char addr[16];
		int is_ip = inet_pton(AF_INET, names[i], addr) == 1 ||
			    inet_pton(AF_INET6, names[i], addr) == 1;

		if (strchr(names[i], ',') != NULL || names[i][0] == '\0') {
			fprintf(stderr, "certs: bad name '%s'\n", names[i]);
			free(s);
			return NULL;
		}
		p += sprintf(p, "%s%s:%s", i ? "," : "", is_ip ? "IP" : "DNS", names[i]);
	}
	return s;
}

int test_certs_make(const char *dir, const char *const *names)
{
	EVP_PKEY *ca_key = NULL, *leaf_key = NULL, *bad_ca_key = NULL, *bad_key = NULL;
	X509 *ca = NULL, *leaf = NULL, *bad_ca = NULL, *bad = NULL;
	char *san = NULL;
	int rc = -1;

	if (dir == NULL || names == NULL || names[0] == NULL) {
		fprintf(stderr, "certs: need a directory and at least one name\n");
		return -1;
	}
	san = san_string(names);
	if (san == NULL)
		goto out;
	ca_key = make_key();
	leaf_key = make_key();
	bad_ca_key = make_key();
	bad_key = make_key();
	if (ca_key == NULL || leaf_key == NULL || bad_ca_key == NULL || bad_key == NULL)
		goto out;
	ca = make_cert(ca_key, "passavant test root CA", NULL, ca_key, NULL, 1);
	if (ca == NULL)
		goto out;
	leaf = make_cert(leaf_key, names[0], ca, ca_key, san, 0);
	bad_ca = make_cert(bad_ca_key, "passavant test root CA", NULL, bad_ca_key, NULL, 1);
	if (leaf == NULL || bad_ca == NULL)
		goto out;
	bad = make_cert(bad_key, names[0], bad_ca, bad_ca_key, san, 0);
	if (bad == NULL)
		goto out;
	if (write_cert(dir, "ca.pem", ca) < 0 || write_key(dir, "ca.key", ca_key) < 0 ||
	    write_cert(dir, "server.pem", leaf) < 0 || write_key(dir, "server.key", leaf_key) < 0 ||
	    write_cert(dir, "bad-ca.pem", bad_ca) < 0 || write_cert(dir, "bad.pem", bad) < 0 ||
	    write_key(dir, "bad.key", bad_key) < 0)
		goto out;
	rc = 0;
out:
	X509_free(ca);
	X509_free(leaf);
	X509_free(bad_ca);
	X509_free(bad);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(leaf_key);
	EVP_PKEY_free(bad_ca_key);
	EVP_PKEY_free(bad_key);
	free(san);
	return rc;
}

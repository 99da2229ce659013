/*
 * test_truststore.c - ca/truststore.c: the PKCS12 truststore read back
 * with OpenSSL's PKCS12 API (every bag, its attribute, its certificate,
 * the MAC), and the session CA's entry for a hashed directory checked by
 * OpenSSL's own hashed lookup. Suite "ca_truststore". The Java side
 * (keytool, HttpClient) is in tests/integration/test_trust.c.
 */
#include "../../support/testlib.h"
#include "../../../ca/ca.h"
#include "../../../ca/ca_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509v3.h>

#define ERRLEN 512

static char ts_root[64];  /* scratch tree */
static char ts_sess[128]; /* a session directory: ca.pem, trust.pem */
static ca_t *ts_ca;

static int ts_setup(void)
{
	struct ca_config cfg = {.allow_any = true};
	char err[ERRLEN];

	snprintf(ts_root, sizeof(ts_root), "/tmp/pv-ts-XXXXXX");
	if (mkdtemp(ts_root) == NULL)
		return -1;
	snprintf(ts_sess, sizeof(ts_sess), "%s/sess", ts_root);
	if (mkdir(ts_sess, 0700) < 0)
		return -1;
	ts_ca = ca_new(&cfg, err, sizeof(err));
	if (ts_ca == NULL || ca_write_files(ts_ca, ts_sess, NULL, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "ts_setup: %s\n", err);
		return -1;
	}
	return 0;
}

static int ts_teardown(void)
{
	char cmd[128];

	ca_free(ts_ca);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ts_root);
	return system(cmd) == 0 ? 0 : -1;
}

static char *at(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", ts_root, rel);
	return buf;
}

/* Every certificate of the PEM file path, as DER, in order. */
static int pem_ders(const char *path, unsigned char ***ders, long **lens)
{
	BIO *in = BIO_new_file(path, "r");
	char *name, *hdr;
	unsigned char *data;
	long len;
	int n = 0;

	*ders = NULL;
	*lens = NULL;
	while (in != NULL && PEM_read_bio(in, &name, &hdr, &data, &len) == 1) {
		*ders = realloc(*ders, (size_t)(n + 1) * sizeof(**ders));
		*lens = realloc(*lens, (size_t)(n + 1) * sizeof(**lens));
		(*ders)[n] = data;
		(*lens)[n] = len;
		n++;
		OPENSSL_free(name);
		OPENSSL_free(hdr);
	}
	ERR_clear_error();
	BIO_free(in);
	return n;
}

/* The PKCS12 file: every certificate of trust.pem, in order, each a
 * certificate bag with the trusted-key-usage attribute whose value is
 * anyExtendedKeyUsage and a unique friendly name; the MAC verifies
 * under "changeit" and not under another password; no key bag. */
static void test_truststore_read_back(void)
{
	char trust[PATH_MAX], out[PATH_MAX], err[ERRLEN] = "";
	ASN1_OBJECT *oracle = OBJ_txt2obj("2.16.840.1.113894.746875.1.1", 1);
	ASN1_OBJECT *any = OBJ_txt2obj("2.5.29.37.0", 1);
	STACK_OF(PKCS7) *safes = NULL;
	unsigned char **ders;
	long *lens;
	PKCS12 *p12 = NULL;
	struct stat st;
	BIO *in;
	int n, seen = 0;
	char **aliases;

	snprintf(trust, sizeof(trust), "%s/trust.pem", ts_sess);
	snprintf(out, sizeof(out), "%s/cacerts.p12", ts_sess);
	CU_ASSERT_FATAL(ca_write_truststore(trust, out, err, sizeof(err)) == 0);
	CU_ASSERT(stat(out, &st) == 0 && (st.st_mode & 07777) == 0644);
	n = pem_ders(trust, &ders, &lens);
	CU_ASSERT_FATAL(n > 1); /* the session CA and the system roots */
	aliases = calloc((size_t)n, sizeof(*aliases));
	in = BIO_new_file(out, "rb");
	CU_ASSERT_FATAL(in != NULL && (p12 = d2i_PKCS12_bio(in, NULL)) != NULL);
	BIO_free(in);
	CU_ASSERT(PKCS12_verify_mac(p12, "changeit", -1) == 1);
	CU_ASSERT(PKCS12_verify_mac(p12, "changeme", -1) == 0);
	safes = PKCS12_unpack_authsafes(p12);
	CU_ASSERT_FATAL(safes != NULL);
	for (int i = 0; i < sk_PKCS7_num(safes); i++) {
		PKCS7 *p7 = sk_PKCS7_value(safes, i);
		STACK_OF(PKCS12_SAFEBAG) *bags;

		/* Unencrypted: Java reads it with no password. */
		CU_ASSERT_FATAL(OBJ_obj2nid(p7->type) == NID_pkcs7_data);
		bags = PKCS12_unpack_p7data(p7);
		CU_ASSERT_FATAL(bags != NULL);
		for (int k = 0; k < sk_PKCS12_SAFEBAG_num(bags); k++) {
			PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, k);
			const ASN1_TYPE *t;
			X509 *x;
			unsigned char *der = NULL;
			int dlen;
			char *alias;

			CU_ASSERT_FATAL(PKCS12_SAFEBAG_get_nid(bag) == NID_certBag);
			t = PKCS12_get_attr_gen(PKCS12_SAFEBAG_get0_attrs(bag), OBJ_obj2nid(oracle));
			if (OBJ_obj2nid(oracle) == NID_undef) {
				/* Not in OpenSSL's table: find it by OID. */
				const STACK_OF(X509_ATTRIBUTE) *attrs = PKCS12_SAFEBAG_get0_attrs(bag);
				t = NULL;
				for (int a = 0; a < sk_X509_ATTRIBUTE_num(attrs); a++) {
					X509_ATTRIBUTE *xa = sk_X509_ATTRIBUTE_value(attrs, a);
					if (OBJ_cmp(X509_ATTRIBUTE_get0_object(xa), oracle) == 0)
						t = X509_ATTRIBUTE_get0_type(xa, 0);
				}
			}
			CU_ASSERT_FATAL(t != NULL);
			CU_ASSERT(t->type == V_ASN1_OBJECT && OBJ_cmp(t->value.object, any) == 0);
			alias = PKCS12_get_friendlyname(bag);
			CU_ASSERT_FATAL(alias != NULL);
			for (int j = 0; j < seen && j < n; j++)
				CU_ASSERT(strcmp(aliases[j], alias) != 0);
			if (seen == 0)
				CU_ASSERT_STRING_EQUAL(alias, "passavant-session-ca");
			x = PKCS12_SAFEBAG_get1_cert(bag);
			CU_ASSERT_FATAL(x != NULL);
			dlen = i2d_X509(x, &der);
			CU_ASSERT_FATAL(seen < n);
			CU_ASSERT(dlen == lens[seen] && memcmp(der, ders[seen], (size_t)dlen) == 0);
			if (seen == 0)
				CU_ASSERT(X509_cmp(x, ca_cert(ts_ca)) == 0);
			OPENSSL_free(der);
			X509_free(x);
			if (seen < n)
				aliases[seen] = alias;
			else
				OPENSSL_free(alias);
			seen++;
		}
		sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	}
	CU_ASSERT_EQUAL(seen, n);
	for (int i = 0; i < n; i++) {
		OPENSSL_free(ders[i]);
		OPENSSL_free(aliases[i]);
	}
	free(ders);
	free(lens);
	free(aliases);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
	ASN1_OBJECT_free(oracle);
	ASN1_OBJECT_free(any);
}

/* A block that is valid base64 but no certificate, a file without any
 * certificate, a missing file: each refused, naming the file, and no
 * truststore left behind. */
static void test_truststore_refusals(void)
{
	char bad[PATH_MAX], none[PATH_MAX], out[PATH_MAX], err[ERRLEN];
	static const char junk[] = "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n"
				   "-----END CERTIFICATE-----\n";

	CU_ASSERT_FATAL(test_write_file(at(bad, "bad.pem"), junk, strlen(junk)) == 0);
	CU_ASSERT_FATAL(test_write_file(at(none, "none.pem"), "nothing\n", 8) == 0);
	at(out, "refused.p12");
	err[0] = '\0';
	CU_ASSERT(ca_write_truststore(bad, out, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, "certificate 1") != NULL && strstr(err, bad) != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_write_truststore(none, out, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, none) != NULL && strstr(err, "no certificate") != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_write_truststore(at(bad, "missing.pem"), out, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, "missing.pem") != NULL);
	CU_ASSERT(access(out, F_OK) < 0);
}

/* ca_fill_truststore(): the file the caller made, in place (the same
 * inode, which a sandbox may show already), longer old content cut, the
 * same bytes as ca_write_truststore()'s; a link, a directory and a
 * missing file refused, naming the file. */
static void test_truststore_fill(void)
{
	char trust[PATH_MAX], out[PATH_MAX], ref[PATH_MAX], link[PATH_MAX], err[ERRLEN] = "";
	char *a, *b;
	size_t alen, blen;
	struct stat st0, st1;
	static char big[1024 * 1024];

	snprintf(trust, sizeof(trust), "%s/trust.pem", ts_sess);
	memset(big, 'x', sizeof(big));
	CU_ASSERT_FATAL(test_write_file(at(out, "fill.p12"), big, sizeof(big)) == 0);
	CU_ASSERT_FATAL(stat(out, &st0) == 0);
	CU_ASSERT_FATAL(ca_fill_truststore(trust, out, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(stat(out, &st1) == 0);
	CU_ASSERT_EQUAL(st1.st_ino, st0.st_ino);
	CU_ASSERT(st1.st_size > 0 && st1.st_size < (off_t)sizeof(big));
	CU_ASSERT_FATAL(ca_write_truststore(trust, at(ref, "fill-ref.p12"), err, sizeof(err)) == 0);
	a = test_read_file(out, &alen);
	b = test_read_file(ref, &blen);
	/* The MAC's salt is random: equal length, equal certificate bags. */
	CU_ASSERT(a != NULL && b != NULL && alen == blen);
	if (a != NULL) {
		const unsigned char *q = (const unsigned char *)a;
		PKCS12 *p12 = d2i_PKCS12(NULL, &q, (long)alen);

		CU_ASSERT(p12 != NULL && PKCS12_verify_mac(p12, "changeit", -1) == 1);
		PKCS12_free(p12);
	}
	free(a);
	free(b);
	CU_ASSERT_FATAL(symlink(out, at(link, "fill-link.p12")) == 0);
	err[0] = '\0';
	CU_ASSERT(ca_fill_truststore(trust, link, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, link) != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_fill_truststore(trust, ts_sess, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, ts_sess) != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_fill_truststore(trust, at(link, "fill-missing.p12"), err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, "fill-missing.p12") != NULL);
	CU_ASSERT(access(link, F_OK) < 0);
}

/* Another session's CA certificate as PEM at path (a certificate the
 * lookup reads and rejects for the subject). 0 or -1; *len its size. */
static int write_other_ca(const char *path, size_t *len)
{
	struct ca_config cfg = {.allow_any = true};
	char err[ERRLEN];
	ca_t *other = ca_new(&cfg, err, sizeof(err));
	BIO *mem = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int rc = -1;

	if (other != NULL && mem != NULL && PEM_write_bio_X509(mem, ca_cert(other)) == 1 &&
	    (n = BIO_get_mem_data(mem, &data)) > 0) {
		*len = (size_t)n;
		rc = test_write_file(path, data, (size_t)n);
	}
	BIO_free(mem);
	ca_free(other);
	return rc;
}

/* The session CA's entry for a hashed directory: HASH.N with N past
 * the suffixes the host's directory uses, a PEM of the CA; OpenSSL's
 * hashed lookup over the union the sandbox shows (the host's entries
 * plus ours, made here with links) finds the CA, and over the host's
 * alone does not. */
static void test_hashed_entry(void)
{
	char src[PATH_MAX], out[PATH_MAX], uni[PATH_MAX], p[PATH_MAX], ca_pem[PATH_MAX];
	char name[64], err[ERRLEN] = "";
	static char cmd[12 * PATH_MAX];
	unsigned long h = X509_subject_name_hash(ca_cert(ts_ca));
	X509_STORE *store;
	X509_STORE_CTX *ctx;
	struct stat st;
	size_t local_len = 0, len;
	char *text;

	at(src, "hashed");
	at(out, "hashed-ours");
	at(uni, "hashed-union");
	snprintf(ca_pem, sizeof(ca_pem), "%s/ca.pem", ts_sess);
	CU_ASSERT_FATAL(mkdir(src, 0755) == 0);
	CU_ASSERT_FATAL(write_other_ca(at(p, "hashed/local.pem"), &local_len) == 0);
	/* The CA's own hash with suffixes 0 and 1 taken already (another
	 * certificate with a colliding hash, and a dangling link). */
	snprintf(name, sizeof(name), "hashed/%08lx.0", h);
	CU_ASSERT_FATAL(symlink("local.pem", at(p, name)) == 0);
	snprintf(name, sizeof(name), "hashed/%08lx.1", h);
	CU_ASSERT_FATAL(symlink("gone.pem", at(p, name)) == 0);

	CU_ASSERT_FATAL(ca_write_hashed_entry(src, ca_pem, out, err, sizeof(err)) == 0);
	CU_ASSERT(stat(out, &st) == 0 && (st.st_mode & 0777) == 0755);
	snprintf(name, sizeof(name), "hashed-ours/%08lx.2", h);
	CU_ASSERT(stat(at(p, name), &st) == 0 && (st.st_mode & 0777) == 0644);
	text = test_read_file(p, &len);
	CU_ASSERT(text != NULL && strstr(text, "BEGIN CERTIFICATE") != NULL);
	free(text);

	/* The union, as the sandbox shows it; the dangling .1 replaced by a
	 * copy of the other CA, so the lookup walks .0, .1 and reaches .2. */
	snprintf(cmd, sizeof(cmd), "mkdir %s && cp -a %s/. %s/ && cp -a %s/. %s/ && "
		 "rm %s/%08lx.1 && cp %s/local.pem %s/%08lx.1", uni, src, uni, out, uni, uni, h,
		 src, uni, h);
	CU_ASSERT_FATAL(system(cmd) == 0);
	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	CU_ASSERT_FATAL(store != NULL && ctx != NULL);
	CU_ASSERT_FATAL(X509_STORE_load_path(store, uni) == 1);
	CU_ASSERT_FATAL(X509_STORE_CTX_init(ctx, store, ca_cert(ts_ca), NULL) == 1);
	CU_ASSERT(X509_verify_cert(ctx) == 1);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	/* ...and not from the host's directory alone. */
	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	CU_ASSERT_FATAL(X509_STORE_load_path(store, src) == 1);
	CU_ASSERT_FATAL(X509_STORE_CTX_init(ctx, store, ca_cert(ts_ca), NULL) == 1);
	CU_ASSERT(X509_verify_cert(ctx) != 1);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	ERR_clear_error();

	/* An existing output directory, a missing ca.pem: errors naming them. */
	err[0] = '\0';
	CU_ASSERT(ca_write_hashed_entry(src, ca_pem, out, err, sizeof(err)) == -1);
	CU_ASSERT(strstr(err, out) != NULL);
	err[0] = '\0';
	CU_ASSERT(ca_write_hashed_entry(src, at(p, "nope.pem"), at(uni, "hashed-x"), err,
					sizeof(err)) == -1);
	CU_ASSERT(strstr(err, "nope.pem") != NULL);
}

TEST_REGISTRAR(ca_truststore_register)
{
	CU_pSuite s = test_suite("ca_truststore", ts_setup, ts_teardown);

	test_add(s, "PKCS12 truststore: every bag trusted, MAC under changeit",
		 test_truststore_read_back);
	test_add(s, "PKCS12 truststore: malformed or missing input refused", test_truststore_refusals);
	test_add(s, "PKCS12 truststore: filled in place", test_truststore_fill);
	test_add(s, "the session CA's entry for a hashed directory", test_hashed_entry);
}

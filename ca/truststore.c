/*
 * truststore.c - the session's trust in the two shapes clients read
 * without a variable (SPEC §7 Trust, docs/run.md "Trust"):
 *
 *   - a PKCS12 truststore for Java: every certificate of trust.pem as a
 *     certificate bag carrying Oracle's "trusted key usage" attribute
 *     (without it Java's PKCS12 keystore loads a certificate bag but does
 *     not treat it as a trusted certificate entry, so the default trust
 *     manager trusts nothing), in one unencrypted safe, with a MAC under
 *     the customary "changeit";
 *   - the session CA under its subject-hash name, for the sandbox to add
 *     to a hashed certificate directory (OpenSSL's c_rehash layout).
 *
 * Both are built with the OpenSSL API: no `openssl` or `keytool` program
 * runs. Setup code (`passavant run` before the sandbox starts), never
 * called from event-loop callbacks.
 */
#include "ca_int.h"

#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>

/* Oracle's attribute that marks a PKCS12 certificate bag as a trusted
 * certificate entry for Java (PKCS12KeyStore, Java 8 and later), and
 * the key purpose it lists: anyExtendedKeyUsage, trusted for every use,
 * as keytool -importcert writes it. */
#define TS_ORACLE_TRUSTED_KEY_USAGE "2.16.840.1.113894.746875.1.1"
#define TS_ANY_EXTENDED_KEY_USAGE "2.5.29.37.0"
/* The password every JDK's cacerts has: keytool -list asks for it, and
 * Java's default trust manager opens cacerts with no password at all
 * (then it skips the MAC and reads the unencrypted certificate bags). */
#define TS_PASSWORD "changeit"
/* Iterations of the MAC's key derivation (build_truststore()). */
#define TS_MAC_ITER 1
/* Files the session writes: readable by the workload, never a secret. */
#define TS_FILE_MODE 0644
/* trust.pem is read whole: ca/trust.c's limit for a PEM file. */
#define TS_TRUST_MAX_BYTES (16L * 1024 * 1024)

/* ------------------------------------------------------ the truststore */

/*
 * A certificate bag holding the DER certificate der[0..len) with a unique
 * friendly name (Java's alias: two bags with one alias would leave one
 * entry) and the trusted key usage attribute, or NULL.
 *
 * Why no X509 object: decoding a certificate (d2i_X509, the public key
 * through OpenSSL 3's decoders) costs about 0.25 ms, so ~35 ms for a
 * distribution's bundle at every start of `run`. A certificate bag holds
 * the certificate's DER as it is, so the DER is wrapped as an ASN1_ANY
 * SEQUENCE, which encodes to exactly those bytes: 1.5 ms for the bundle.
 * The outer SEQUENCE is checked; the rest is what trust.pem already holds
 * and every other client parses.
 */
static PKCS12_SAFEBAG *trusted_bag(const unsigned char *der, long len, int index,
				   const ASN1_OBJECT *any)
{
	const unsigned char *p = der;
	PKCS12_SAFEBAG *bag = NULL;
	ASN1_STRING *seq = NULL;
	ASN1_TYPE *t = NULL;
	long inner;
	int tag, cls;
	char alias[32];

	/* One whole DER SEQUENCE, nothing after it. */
	if (len <= 0 || len > INT_MAX || (ASN1_get_object(&p, &inner, &tag, &cls, len) & 0x80) != 0 ||
	    tag != V_ASN1_SEQUENCE || cls != V_ASN1_UNIVERSAL || p + inner != der + len)
		return NULL;
	seq = ASN1_STRING_type_new(V_ASN1_SEQUENCE);
	t = ASN1_TYPE_new();
	if (seq == NULL || t == NULL || ASN1_STRING_set(seq, der, (int)len) != 1) {
		ASN1_STRING_free(seq);
		ASN1_TYPE_free(t);
		return NULL;
	}
	ASN1_TYPE_set(t, V_ASN1_SEQUENCE, seq); /* t owns seq */
	bag = PKCS12_item_pack_safebag(t, ASN1_ITEM_rptr(ASN1_ANY), NID_x509Certificate,
				       NID_certBag);
	ASN1_TYPE_free(t);
	if (bag == NULL)
		return NULL;
	/* trust.pem starts with the session CA. */
	if (index == 0)
		(void)snprintf(alias, sizeof(alias), "passavant-session-ca");
	else
		(void)snprintf(alias, sizeof(alias), "passavant-%d", index);
	/* len -1 with V_ASN1_OBJECT: bytes is the ASN1_OBJECT itself
	 * (X509_ATTRIBUTE_set1_data() copies it), not its encoding. */
	if (PKCS12_add_friendlyname_utf8(bag, alias, -1) != 1 ||
	    PKCS12_add1_attr_by_txt(bag, TS_ORACLE_TRUSTED_KEY_USAGE, V_ASN1_OBJECT,
				    (const unsigned char *)any, -1) != 1) {
		PKCS12_SAFEBAG_free(bag);
		return NULL;
	}
	return bag;
}

/*
 * The next "-----BEGIN CERTIFICATE-----" block of text[*pos..len) (at a
 * line's start, up to its "-----END CERTIFICATE-----"), its base64
 * decoded into der (room for len bytes), its length in *dlen; *pos moves
 * past it. Anything else of the file is skipped (trust.pem holds
 * certificate blocks only: ca_write_files()). 1, 0 when no block is
 * left, -1 for a block without its end or that is not base64.
 */
static int next_cert_der(const char *text, size_t len, size_t *pos, unsigned char *der, int *dlen)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	static const char end[] = "-----END CERTIFICATE-----";
	const char *p = text + *pos, *b, *e;
	EVP_ENCODE_CTX *ctx;
	int outl = 0, fin = 0, ok;

	for (;;) {
		b = strstr(p, begin);
		if (b == NULL) {
			*pos = len;
			return 0;
		}
		if (b == text || b[-1] == '\n')
			break;
		p = b + sizeof(begin) - 1;
	}
	b += sizeof(begin) - 1;
	e = strstr(b, end);
	if (e == NULL || e - b > INT_MAX)
		return -1;
	*pos = (size_t)(e - text) + sizeof(end) - 1;
	ctx = EVP_ENCODE_CTX_new();
	if (ctx == NULL)
		return -1;
	EVP_DecodeInit(ctx);
	/* EVP_DecodeUpdate() skips the line breaks; -1 on anything not
	 * base64. */
	ok = EVP_DecodeUpdate(ctx, der, &outl, (const unsigned char *)b, (int)(e - b)) >= 0 &&
	     EVP_DecodeFinal(ctx, der + outl, &fin) == 1;
	EVP_ENCODE_CTX_free(ctx);
	if (!ok || outl + fin <= 0)
		return -1;
	*dlen = outl + fin;
	return 1;
}

/* The truststore of trust_pem, DER-encoded, into *out (OPENSSL_free) and
 * *outlen. 0, or -1 (message in err). */
static int build_truststore(const char *trust_pem, unsigned char **out, int *outlen, char *err,
			    size_t errlen)
{
	STACK_OF(PKCS12_SAFEBAG) *bags = sk_PKCS12_SAFEBAG_new_null();
	STACK_OF(PKCS7) *safes = NULL;
	ASN1_OBJECT *any = OBJ_txt2obj(TS_ANY_EXTENDED_KEY_USAGE, 1);
	unsigned char *der = NULL, *data = NULL;
	char *text = NULL;
	PKCS12 *p12 = NULL;
	size_t tlen, pos = 0;
	struct stat st;
	int n = 0, len, dlen, found, rc = -1;

	if (bags == NULL || any == NULL) {
		ca_ssl_err(err, errlen, "Java truststore: out of memory");
		goto out;
	}
	/* The whole file at once, decoded in place: PEM_read_bio() costs a
	 * memory BIO that grows line by line per block (a third of the
	 * truststore's time for a distribution's bundle). */
	text = fileio_read(trust_pem, TS_TRUST_MAX_BYTES, 0, &tlen, &st);
	if (text == NULL) {
		errbuf_set(err, errlen, "Java truststore: cannot read %s: %s", trust_pem,
			   errno == EINVAL ? "not a regular file" : strerror(errno));
		goto out;
	}
	/* The DER of a block is shorter than its text. */
	data = OPENSSL_malloc(tlen + 1);
	if (data == NULL) {
		ca_ssl_err(err, errlen, "Java truststore: out of memory");
		goto out;
	}
	while ((found = next_cert_der(text, tlen, &pos, data, &dlen)) != 0) {
		PKCS12_SAFEBAG *bag = NULL;

		if (found < 0 || (bag = trusted_bag(data, dlen, n, any)) == NULL ||
		    sk_PKCS12_SAFEBAG_push(bags, bag) == 0) {
			PKCS12_SAFEBAG_free(bag);
			ca_ssl_err(err, errlen, "Java truststore: certificate %d of %s is malformed",
				   n + 1, trust_pem);
			goto out;
		}
		n++;
	}
	if (n == 0) {
		errbuf_set(err, errlen, "Java truststore: %s: no certificate", trust_pem);
		goto out;
	}
	/* nid_safe -1: the safe is not encrypted (there is nothing secret in
	 * it, and Java reads it without a password). The MAC is PKCS12's
	 * HMAC-SHA1: every keytool verifies it, old ones included; its only
	 * job is `keytool -list` accepting "changeit", since the data and the
	 * password are public. So one iteration of the key derivation: more
	 * only slow down guessing a secret password, and there is none (2048
	 * cost about 1 ms of every start). */
	if (PKCS12_add_safe(&safes, bags, -1, 0, NULL) != 1 ||
	    (p12 = PKCS12_add_safes(safes, 0)) == NULL ||
	    PKCS12_set_mac(p12, TS_PASSWORD, -1, NULL, 0, TS_MAC_ITER, EVP_sha1()) != 1 ||
	    (len = i2d_PKCS12(p12, &der)) <= 0) {
		ca_ssl_err(err, errlen, "Java truststore: cannot build the PKCS12 file");
		goto out;
	}
	*out = der;
	*outlen = len;
	der = NULL;
	rc = 0;
out:
	free(text);
	OPENSSL_free(data);
	OPENSSL_free(der);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	ASN1_OBJECT_free(any);
	return rc;
}

int ca_write_truststore(const char *trust_pem, const char *out_path, char *err, size_t errlen)
{
	unsigned char *der = NULL;
	int len = 0, rc;

	if (build_truststore(trust_pem, &der, &len, err, errlen) < 0)
		return -1;
	rc = trust_write_atomic(out_path, der, (size_t)len, TS_FILE_MODE, err, errlen);
	OPENSSL_free(der);
	return rc;
}

int ca_fill_truststore(const char *trust_pem, const char *path, char *err, size_t errlen)
{
	unsigned char *der = NULL;
	struct stat st;
	int len = 0, fd, rc = -1;

	if (build_truststore(trust_pem, &der, &len, err, errlen) < 0)
		return -1;
	/* The file the caller made: written in place, never followed. */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		errbuf_set(err, errlen, "Java truststore: cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "Java truststore: %s is not a regular file", path);
		goto out;
	}
	if (trust_write_all(fd, der, (size_t)len) != 0 || ftruncate(fd, len) != 0) {
		errbuf_set(err, errlen, "Java truststore: cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) != 0 && rc == 0) {
		errbuf_set(err, errlen, "Java truststore: cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	OPENSSL_free(der);
	return rc;
}

/* ------------------------------------------------- the hashed directory */

/*
 * The first free "HASH.N" name for x in dir: HASH its subject-name hash
 * (OpenSSL 1.0+'s: SHA-1 of the canonical name, what
 * X509_LOOKUP_hash_dir() looks up and `openssl rehash` writes), N the
 * first suffix no entry of dir has. 0, or -1 (message in err).
 */
static int hash_name(X509 *x, const char *dir, char *out, size_t outlen, char *err,
		     size_t errlen)
{
	unsigned long h = X509_subject_name_hash(x);
	char path[PATH_MAX];
	struct stat st;

	for (int n = 0; n < 1000; n++) {
		if ((size_t)snprintf(out, outlen, "%08lx.%d", h, n) >= outlen ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, out) >= sizeof(path)) {
			errbuf_set(err, errlen, "path too long: %s", dir);
			return -1;
		}
		if (lstat(path, &st) < 0 && errno == ENOENT)
			return 0;
	}
	errbuf_set(err, errlen, "%s holds 1000 entries named after the session CA's subject hash %08lx",
		   dir, h);
	return -1;
}

/* Writes x as PEM to dfd/name. 0 or -1 (message in err). */
static int write_ca_entry(X509 *x, int dfd, const char *name, char *err, size_t errlen)
{
	BIO *mem = BIO_new(BIO_s_mem());
	char *data = NULL;
	long len;
	int fd = -1, rc = -1;

	if (mem == NULL || PEM_write_bio_X509(mem, x) != 1 ||
	    (len = BIO_get_mem_data(mem, &data)) <= 0) {
		ca_ssl_err(err, errlen, "cannot encode the session CA");
		goto out;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, TS_FILE_MODE);
	if (fd < 0 || fchmod(fd, TS_FILE_MODE) != 0 || trust_write_all(fd, data, (size_t)len) != 0) {
		errbuf_set(err, errlen, "cannot write the session CA as %s: %s", name,
			   strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) != 0 && rc == 0) {
		errbuf_set(err, errlen, "cannot write the session CA as %s: %s", name, strerror(errno));
		rc = -1;
	}
	BIO_free(mem);
	return rc;
}

int ca_write_hashed_entry(const char *host_dir, const char *ca_pem, const char *out_dir, char *err,
			  size_t errlen)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	char name[32];
	int dfd = -1, rc = -1;

	if (certs == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	/* The session CA: ca.pem holds it alone. */
	if (trust_load_certs(ca_pem, certs, true, err, errlen) < 0 ||
	    hash_name(sk_X509_value(certs, 0), host_dir, name, sizeof(name), err, errlen) < 0)
		goto out;
	if (mkdir(out_dir, 0755) != 0 || chmod(out_dir, 0755) != 0 ||
	    (dfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		errbuf_set(err, errlen, "cannot create %s: %s", out_dir, strerror(errno));
		goto out;
	}
	rc = write_ca_entry(sk_X509_value(certs, 0), dfd, name, err, errlen);
out:
	if (dfd >= 0)
		close(dfd);
	sk_X509_pop_free(certs, X509_free);
	return rc;
}

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
 * No `openssl` or `keytool` program runs: the truststore's DER is
 * written here (one fixed shape, build_truststore()), with OpenSSL for
 * the base64, the MAC and the hashed entry. Setup code (`passavant run`
 * while the sandbox starts), never called from event-loop callbacks.
 */
#include "ca_int.h"

#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>

/* The password every JDK's cacerts has: keytool -list asks for it, and
 * Java's default trust manager opens cacerts with no password at all
 * (then it skips the MAC and reads the unencrypted certificate bags). */
#define TS_PASSWORD "changeit"
/* The MAC's salt (OpenSSL's PKCS12_SALT_LEN) and its HMAC-SHA1 length. */
#define TS_SALT_LEN 8
#define TS_MAC_LEN 20
/* Files the session writes: readable by the workload, never a secret. */
#define TS_FILE_MODE 0644
/* trust.pem is read whole: ca/trust.c's limit for a PEM file. */
#define TS_TRUST_MAX_BYTES (16L * 1024 * 1024)

/* Writes len bytes of data to fd. 0, or -1 (errno). */
static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Writes data to path atomically (a temporary file in the same
 * directory, mode TS_FILE_MODE, then rename). 0, or -1 (message in err).
 */
static int write_file_atomic(const char *path, const void *data, size_t len, char *err,
			     size_t errlen)
{
	char tmp[PATH_MAX];
	const char *what = "write";
	int fd, saved;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		errbuf_set(err, errlen, "path too long: %s", path);
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		errbuf_set(err, errlen, "cannot create %s: %s; the session directory must be writable",
			   tmp, strerror(errno));
		return -1;
	}
	if (fchmod(fd, TS_FILE_MODE) != 0) {
		what = "chmod";
		goto fail;
	}
	if (write_all(fd, data, len) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		what = "rename";
		goto fail;
	}
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errbuf_set(err, errlen, "cannot %s %s: %s", what, path, strerror(saved));
	return -1;
}

/* ------------------------------------------------------ the truststore */

/* ------------------------------------------------ DER, written by hand */

/* Bytes of a DER header (tag and length) for content of len bytes. */
static size_t der_hdr_len(size_t len)
{
	size_t n = 2;

	if (len <= 0x7f)
		return n;
	for (; len > 0; len >>= 8)
		n++;
	return n;
}

/* Writes tag and the length of len content bytes at p; returns p past them. */
static unsigned char *der_put_hdr(unsigned char *p, unsigned char tag, size_t len)
{
	size_t k = 0;

	*p++ = tag;
	if (len <= 0x7f) {
		*p++ = (unsigned char)len;
		return p;
	}
	for (size_t l = len; l > 0; l >>= 8)
		k++;
	*p++ = (unsigned char)(0x80 | k);
	while (k-- > 0)
		*p++ = (unsigned char)(len >> (8 * k));
	return p;
}

/* Appends data[0..len) at p; returns p past it. */
static unsigned char *der_put(unsigned char *p, const void *data, size_t len)
{
	memcpy(p, data, len);
	return p + len;
}

/* The encodings that never change (tag, length, value). */
static const unsigned char OID_CERT_BAG[] = {0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d,
					     0x01, 0x0c, 0x0a, 0x01, 0x03};
static const unsigned char OID_X509_CERT[] = {0x06, 0x0a, 0x2a, 0x86, 0x48, 0x86, 0xf7,
					      0x0d, 0x01, 0x09, 0x16, 0x01};
static const unsigned char OID_FRIENDLY_NAME[] = {0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
						  0xf7, 0x0d, 0x01, 0x09, 0x14};
static const unsigned char OID_DATA[] = {0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
					 0xf7, 0x0d, 0x01, 0x07, 0x01};
/* Oracle's attribute that marks a PKCS12 certificate bag as a trusted
 * certificate entry for Java (PKCS12KeyStore, Java 8 and later), whole:
 * SEQUENCE { OID 2.16.840.1.113894.746875.1.1, SET { OID 2.5.29.37.0 } },
 * the key purpose anyExtendedKeyUsage, trusted for every use, as keytool
 * -importcert writes it. */
static const unsigned char ATTR_ORACLE_TRUSTED[] = {
	0x30, 0x16, 0x06, 0x0c, 0x60, 0x86, 0x48, 0x01, 0x86, 0xf9, 0x66, 0xad, 0xca, 0x7b,
	0x01, 0x01, 0x31, 0x06, 0x06, 0x04, 0x55, 0x1d, 0x25, 0x00};
/* AlgorithmIdentifier { sha1, NULL } */
static const unsigned char ALG_SHA1[] = {0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e,
					 0x03, 0x02, 0x1a, 0x05, 0x00};

/* The friendly name of bag index (Java's alias: two bags with one alias
 * would leave one entry); trust.pem starts with the session CA. */
static void bag_alias(int index, char *out, size_t outlen)
{
	if (index == 0)
		(void)snprintf(out, outlen, "passavant-session-ca");
	else
		(void)snprintf(out, outlen, "passavant-%d", index);
}

/*
 * Bytes of the certificate bag of a dlen-byte certificate with that
 * alias: SafeBag { certBag, [0] CertBag { x509Certificate, [0] OCTET
 * STRING der }, SET { the Oracle attribute, friendlyName { BMPString } } }
 * (a SET OF in DER order: the Oracle attribute is the shorter encoding,
 * so it sorts first). With p, also written there.
 */
static size_t put_bag(unsigned char *p, const unsigned char *der, size_t dlen, const char *alias)
{
	size_t al = strlen(alias), bmp = 2 * al;
	size_t bmp_tlv = der_hdr_len(bmp) + bmp;
	size_t set_tlv = der_hdr_len(bmp_tlv) + bmp_tlv;
	size_t fn = sizeof(OID_FRIENDLY_NAME) + set_tlv, fn_tlv = der_hdr_len(fn) + fn;
	size_t attrs = sizeof(ATTR_ORACLE_TRUSTED) + fn_tlv, attrs_tlv = der_hdr_len(attrs) + attrs;
	size_t os_tlv = der_hdr_len(dlen) + dlen, cv_tlv = der_hdr_len(os_tlv) + os_tlv;
	size_t cb = sizeof(OID_X509_CERT) + cv_tlv, cb_tlv = der_hdr_len(cb) + cb;
	size_t bv_tlv = der_hdr_len(cb_tlv) + cb_tlv;
	size_t bag = sizeof(OID_CERT_BAG) + bv_tlv + attrs_tlv;

	if (p == NULL)
		return der_hdr_len(bag) + bag;
	p = der_put_hdr(p, 0x30, bag);
	p = der_put(p, OID_CERT_BAG, sizeof(OID_CERT_BAG));
	p = der_put_hdr(p, 0xa0, cb_tlv);
	p = der_put_hdr(p, 0x30, cb);
	p = der_put(p, OID_X509_CERT, sizeof(OID_X509_CERT));
	p = der_put_hdr(p, 0xa0, os_tlv);
	p = der_put_hdr(p, 0x04, dlen);
	p = der_put(p, der, dlen);
	p = der_put_hdr(p, 0x31, attrs);
	p = der_put(p, ATTR_ORACLE_TRUSTED, sizeof(ATTR_ORACLE_TRUSTED));
	p = der_put_hdr(p, 0x30, fn);
	p = der_put(p, OID_FRIENDLY_NAME, sizeof(OID_FRIENDLY_NAME));
	p = der_put_hdr(p, 0x31, bmp_tlv);
	p = der_put_hdr(p, 0x1e, bmp);
	for (size_t i = 0; i < al; i++) {
		*p++ = 0;
		*p++ = (unsigned char)alias[i];
	}
	return der_hdr_len(bag) + bag;
}

/* Is der[0..len) one whole DER SEQUENCE, nothing after it? */
static bool one_sequence(const unsigned char *der, int len)
{
	const unsigned char *p = der;
	long inner;
	int tag, cls;

	return len > 0 && (ASN1_get_object(&p, &inner, &tag, &cls, len) & 0x80) == 0 &&
	       tag == V_ASN1_SEQUENCE && cls == V_ASN1_UNIVERSAL && p + inner == der + len;
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

/*
 * The truststore of trust_pem, DER-encoded, into *out (OPENSSL_free) and
 * *outlen. 0, or -1 (message in err).
 *
 * Written by hand, not with OpenSSL's PKCS12 API: the file is one fixed
 * shape (PFX { 3, data { AuthenticatedSafe { data { SafeContents { one
 * certificate bag per certificate } } } }, MacData }), and the API costs
 * an object per bag, per attribute and per encoding step: about 8 ms of
 * every start for a distribution's bundle, where this is one pass of
 * lengths and one of copies. Why no X509 object either: decoding a
 * certificate (d2i_X509, the public key through OpenSSL 3's decoders)
 * costs about 0.25 ms, so ~35 ms for the bundle; a certificate bag holds
 * the certificate's DER as it is. Its outer SEQUENCE is checked; the
 * rest is what trust.pem already holds and every other client parses.
 * tests/unit/ca/test_truststore.c reads the result back with OpenSSL's
 * PKCS12 API, and tests/integration/test_trust.c with Java and keytool.
 */
static int build_truststore(const char *trust_pem, unsigned char **out, int *outlen, char *err,
			    size_t errlen)
{
	unsigned char *data = NULL, *bags = NULL, *pfx = NULL, *p, *as_start;
	unsigned char salt[TS_SALT_LEN], key[TS_MAC_LEN], mac[EVP_MAX_MD_SIZE];
	size_t tlen, pos = 0, used = 0, cap = 0, sc_tlv, ci1, ci1_tlv, as, as_tlv, ci2, ci2_tlv;
	size_t md, md_tlv, dig, dig_tlv, salt_tlv, total;
	unsigned int maclen = 0;
	char *text = NULL, alias[32];
	struct stat st;
	int n = 0, dlen, found, rc = -1;

	/* The whole file at once, decoded in place: PEM_read_bio() costs a
	 * memory BIO that grows line by line per block. */
	text = fileio_read(trust_pem, TS_TRUST_MAX_BYTES, 0, &tlen, &st);
	if (text == NULL) {
		errbuf_set(err, errlen, "Java truststore: cannot read %s: %s", trust_pem,
			   errno == EINVAL ? "not a regular file" : strerror(errno));
		goto out;
	}
	/* The DER of a block is shorter than its text; a bag adds less than
	 * 128 bytes to it. */
	data = OPENSSL_malloc(tlen + 1);
	cap = tlen + 128 * (tlen / 64 + 1);
	bags = OPENSSL_malloc(cap);
	if (data == NULL || bags == NULL) {
		errbuf_set(err, errlen, "Java truststore: out of memory");
		goto out;
	}
	while ((found = next_cert_der(text, tlen, &pos, data, &dlen)) != 0) {
		if (found < 0 || !one_sequence(data, dlen)) {
			errbuf_set(err, errlen, "Java truststore: certificate %d of %s is malformed",
				   n + 1, trust_pem);
			goto out;
		}
		bag_alias(n, alias, sizeof(alias));
		if (used + put_bag(NULL, data, (size_t)dlen, alias) > cap) {
			errbuf_set(err, errlen, "Java truststore: %s: out of room", trust_pem);
			goto out;
		}
		used += put_bag(bags + used, data, (size_t)dlen, alias);
		n++;
	}
	if (n == 0) {
		errbuf_set(err, errlen, "Java truststore: %s: no certificate", trust_pem);
		goto out;
	}
	/* SafeContents; the data ContentInfo that holds it (not encrypted:
	 * there is nothing secret in it, and Java reads it without a
	 * password); the AuthenticatedSafe; the outer data ContentInfo. */
	sc_tlv = der_hdr_len(used) + used;
	ci1 = sizeof(OID_DATA) + der_hdr_len(der_hdr_len(sc_tlv) + sc_tlv) + der_hdr_len(sc_tlv) +
	      sc_tlv;
	ci1_tlv = der_hdr_len(ci1) + ci1;
	as = ci1_tlv;
	as_tlv = der_hdr_len(as) + as;
	ci2 = sizeof(OID_DATA) + der_hdr_len(der_hdr_len(as_tlv) + as_tlv) + der_hdr_len(as_tlv) +
	      as_tlv;
	ci2_tlv = der_hdr_len(ci2) + ci2;
	/* MacData { DigestInfo { sha1, OCTET STRING mac }, OCTET STRING salt }
	 * (iterations 1 is the DEFAULT, so left out). */
	dig = sizeof(ALG_SHA1) + 2 + TS_MAC_LEN;
	dig_tlv = der_hdr_len(dig) + dig;
	salt_tlv = 2 + TS_SALT_LEN;
	md = dig_tlv + salt_tlv;
	md_tlv = der_hdr_len(md) + md;
	total = 3 + ci2_tlv + md_tlv;
	if (total + der_hdr_len(total) > INT_MAX ||
	    (pfx = OPENSSL_malloc(der_hdr_len(total) + total)) == NULL) {
		errbuf_set(err, errlen, "Java truststore: out of memory");
		goto out;
	}
	p = der_put_hdr(pfx, 0x30, total);
	p = der_put(p, "\x02\x01\x03", 3); /* version 3 */
	p = der_put_hdr(p, 0x30, ci2);
	p = der_put(p, OID_DATA, sizeof(OID_DATA));
	p = der_put_hdr(p, 0xa0, der_hdr_len(as_tlv) + as_tlv);
	p = der_put_hdr(p, 0x04, as_tlv);
	as_start = p;
	p = der_put_hdr(p, 0x30, as);
	p = der_put_hdr(p, 0x30, ci1);
	p = der_put(p, OID_DATA, sizeof(OID_DATA));
	p = der_put_hdr(p, 0xa0, der_hdr_len(sc_tlv) + sc_tlv);
	p = der_put_hdr(p, 0x04, sc_tlv);
	p = der_put_hdr(p, 0x30, used);
	p = der_put(p, bags, used);
	/* PKCS12's MAC: HMAC-SHA1 of the AuthenticatedSafe under a key
	 * derived from "changeit" (PKCS12_key_gen_utf8, ID 3 for MAC). Every
	 * keytool verifies it; its only job is `keytool -list` accepting
	 * "changeit", since the data and the password are public. So one
	 * iteration of the derivation: more only slow down guessing a
	 * secret password, and there is none. */
	if (RAND_bytes(salt, sizeof(salt)) != 1 ||
	    PKCS12_key_gen_utf8(TS_PASSWORD, (int)strlen(TS_PASSWORD), salt, sizeof(salt), PKCS12_MAC_ID,
				1, sizeof(key), key, EVP_sha1()) != 1 ||
	    HMAC(EVP_sha1(), key, sizeof(key), as_start, as_tlv, mac, &maclen) == NULL ||
	    maclen != TS_MAC_LEN) {
		ca_ssl_err(err, errlen, "Java truststore: cannot compute the PKCS12 MAC");
		goto out;
	}
	p = der_put_hdr(p, 0x30, md);
	p = der_put_hdr(p, 0x30, dig);
	p = der_put(p, ALG_SHA1, sizeof(ALG_SHA1));
	p = der_put_hdr(p, 0x04, TS_MAC_LEN);
	p = der_put(p, mac, TS_MAC_LEN);
	p = der_put_hdr(p, 0x04, TS_SALT_LEN);
	p = der_put(p, salt, TS_SALT_LEN);
	*out = pfx;
	*outlen = (int)(p - pfx);
	pfx = NULL;
	rc = 0;
out:
	free(text);
	OPENSSL_free(data);
	OPENSSL_free(bags);
	OPENSSL_free(pfx);
	return rc;
}

int ca_write_truststore(const char *trust_pem, const char *out_path, char *err, size_t errlen)
{
	unsigned char *der = NULL;
	int len = 0, rc;

	if (build_truststore(trust_pem, &der, &len, err, errlen) < 0)
		return -1;
	rc = write_file_atomic(out_path, der, (size_t)len, err, errlen);
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
	if (write_all(fd, der, (size_t)len) != 0 || ftruncate(fd, len) != 0) {
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
	if (fd < 0 || fchmod(fd, TS_FILE_MODE) != 0 || write_all(fd, data, (size_t)len) != 0) {
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

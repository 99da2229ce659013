/*
 * trust.c - the session files (ca.pem, trust.pem) and the upstream
 * verification context: everything about which roots are trusted.
 *
 * Only CERTIFICATE blocks ever reach trust.pem, which every process in the
 * sandbox may read: a private key, an encrypted block or junk in an input
 * file cannot. extraCaCertPaths files are parsed certificate by
 * certificate with PEM_read_bio_X509 (which skips blocks of any other
 * type), so a malformed one is an error naming the file, and re-encoded.
 * The system bundle (a few hundred certificates from the distribution)
 * is copied block by block as text, without decoding: parsing and
 * re-encoding it cost tens of milliseconds at every start of `run`.
 */
#include "ca_int.h"
#include "base/fileio.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

/* Debian's bundle, when OpenSSL's default file is missing. */
#define TRUST_DEBIAN_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* A root bundle is a few hundred KiB; refuse absurd (or endless) inputs. */
#define TRUST_FILE_MAX_BYTES (16L * 1024 * 1024)
/* Mode of the session files: readable by the workload, never a secret. */
#define TRUST_FILE_MODE 0644

const char *trust_system_bundle(void)
{
	const char *env = getenv(X509_get_default_cert_file_env());
	const char *def = X509_get_default_cert_file();

	/* $SSL_CERT_FILE is what OpenSSL itself honours for the default
	 * verify paths, so an operator's override applies here too. */
	if (env != NULL && *env != '\0')
		return env;
	if (def != NULL && access(def, R_OK) == 0)
		return def;
	return TRUST_DEBIAN_BUNDLE;
}

/* Never prompt for a pass phrase: a CERTIFICATE block marked ENCRYPTED is
 * malformed for our purposes, and a terminal prompt would hang the proxy. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/*
 * Reads the PEM file at path whole (a regular file of at most
 * TRUST_FILE_MAX_BYTES). Returns the malloc'd, NUL-terminated text (the
 * caller frees it) with its length in *len, or NULL (message in err).
 */
static char *read_pem(const char *path, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf;

	buf = fileio_read(path, TRUST_FILE_MAX_BYTES, 0, len, &st);
	if (buf != NULL)
		return buf;
	if (errno == EINVAL)
		errbuf_set(err, errlen, "%s is not a regular file; name a PEM certificate file", path);
	else if (errno == EFBIG)
		errbuf_set(err, errlen, "%s is larger than %ld bytes; name a PEM certificate file",
			   path, TRUST_FILE_MAX_BYTES);
	else
		errbuf_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
	return NULL;
}

int trust_load_certs(const char *path, STACK_OF(X509) *out, bool require_one, char *err,
		     size_t errlen)
{
	BIO *bio = NULL;
	char *text;
	size_t len;
	int n = 0;

	text = read_pem(path, &len, err, errlen);
	if (text == NULL)
		return -1;
	bio = len <= INT_MAX ? BIO_new_mem_buf(text, (int)len) : NULL;
	if (bio == NULL) {
		free(text);
		ca_ssl_err(err, errlen, "cannot read %s", path);
		return -1;
	}
	ERR_clear_error();
	for (;;) {
		X509 *x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
		unsigned long e;

		if (x == NULL) {
			/* "no start line" after the last block is the normal
			 * end of the file; anything else is a broken block. */
			e = ERR_peek_last_error();
			if (ERR_GET_LIB(e) == ERR_LIB_PEM &&
			    ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
				ERR_clear_error();
				break;
			}
			ca_ssl_err(err, errlen,
				   "%s: certificate %d is malformed; fix or remove it", path,
				   n + 1);
			goto fail;
		}
		if (sk_X509_push(out, x) == 0) {
			X509_free(x);
			errbuf_set(err, errlen, "%s: out of memory", path);
			goto fail;
		}
		n++;
	}
	BIO_free(bio);
	free(text);
	if (require_one && n == 0) {
		errbuf_set(err, errlen,
		       "%s holds no \"BEGIN CERTIFICATE\" block; extraCaCertPaths must name PEM "
		       "certificate files",
		       path);
		return -1;
	}
	return n;
fail:
	BIO_free(bio);
	free(text);
	return -1;
}

/* Loads the system bundle and every extra file into a new stack. */
static STACK_OF(X509) *load_roots(const char *const *extra, size_t n_extra, char *err,
				  size_t errlen)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	const char *sys = trust_system_bundle();
	size_t i;

	if (sk == NULL) {
		errbuf_set(err, errlen, "out of memory loading CA certificates");
		return NULL;
	}
	if (trust_load_certs(sys, sk, true, err, errlen) < 0) {
		size_t used = err != NULL ? strlen(err) : 0;

		if (err != NULL && used < errlen)
			snprintf(err + used, errlen - used,
				 " (system root bundle: install ca-certificates or set "
				 "SSL_CERT_FILE)");
		goto fail;
	}
	for (i = 0; i < n_extra; i++) {
		if (extra[i] == NULL) {
			errbuf_set(err, errlen, "extraCaCertPaths entry %zu is NULL", i);
			goto fail;
		}
		if (trust_load_certs(extra[i], sk, true, err, errlen) < 0)
			goto fail;
	}
	return sk;
fail:
	sk_X509_pop_free(sk, X509_free);
	return NULL;
}

/*
 * Appends every "-----BEGIN CERTIFICATE-----" ... "-----END
 * CERTIFICATE-----" block of the file at path to mem, as text, each ending
 * with a newline; nothing else of the file. Returns the number of blocks,
 * or -1 (message in err).
 */
static int copy_cert_blocks(const char *path, BIO *mem, char *err, size_t errlen)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	static const char end[] = "-----END CERTIFICATE-----";
	char *buf, *p, *b, *e, *out;
	size_t len, used = 0;
	int n = 0;

	buf = read_pem(path, &len, err, errlen);
	if (buf == NULL)
		return -1;
	/* The blocks are gathered here and written to mem at once: a write
	 * per block grows mem's buffer (copied and wiped) a few dozen times
	 * for a distribution's bundle. Each block is longer than the two
	 * markers, so its newline fits in len / 52 + 1 more bytes. */
	out = malloc(len + len / (sizeof(begin) + sizeof(end) - 2) + 2);
	if (out == NULL) {
		free(buf);
		errbuf_set(err, errlen, "trust.pem: out of memory");
		return -1;
	}
	for (p = buf; (b = strstr(p, begin)) != NULL; p = e) {
		/* A block starts a line. */
		if (b != buf && b[-1] != '\n') {
			e = b + sizeof(begin) - 1;
			continue;
		}
		e = strstr(b + sizeof(begin) - 1, end);
		if (e == NULL)
			break;
		e += sizeof(end) - 1;
		memcpy(out + used, b, (size_t)(e - b));
		used += (size_t)(e - b);
		out[used++] = '\n';
		n++;
	}
	if (used > INT_MAX || (used > 0 && BIO_write(mem, out, (int)used) != (int)used)) {
		ca_ssl_err(err, errlen, "trust.pem: out of memory");
		n = -1;
	}
	free(out);
	free(buf);
	return n;
}

int trust_write_all(int fd, const void *data, size_t len)
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

int trust_write_atomic(const char *path, const void *data, size_t len, mode_t mode, char *err,
		       size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char tmp[PATH_MAX];
	const char *what = "write";
	int fd, saved;

	if (slash == NULL ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1) >=
		    sizeof(tmp)) {
		errbuf_set(err, errlen, "path too long or not absolute: %s", path);
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		errbuf_set(err, errlen,
			   "cannot create a file in %.*s: %s; the session directory must exist and be "
			   "writable",
			   (int)(slash - path), path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) != 0) {
		what = "chmod";
		goto fail;
	}
	if (trust_write_all(fd, data, len) != 0)
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

/* Writes the memory BIO's bytes to dir/name (trust_write_atomic()). */
static int write_atomic(const char *dir, const char *name, BIO *mem, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *data = NULL;
	long len;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errbuf_set(err, errlen, "session directory path too long: %s", dir);
		return -1;
	}
	len = BIO_get_mem_data(mem, &data);
	if (len < 0 || (len > 0 && data == NULL)) {
		errbuf_set(err, errlen, "cannot write %s: no data", path);
		return -1;
	}
	return trust_write_atomic(path, data, (size_t)len, TRUST_FILE_MODE, err, errlen);
}

int ca_write_files(const ca_t *ca, const char *session_dir, const char *const *extra_ca_paths,
		   size_t n_extra, char *err, size_t errlen)
{
	STACK_OF(X509) *roots = NULL;
	BIO *ca_mem = NULL, *trust_mem = NULL;
	const char *sys = trust_system_bundle();
	int i, rc = -1, nsys;
	size_t k;

	/* Load everything before writing anything: an error in an extra file
	 * leaves no half-made session directory behind. */
	roots = sk_X509_new_null();
	if (roots == NULL) {
		errbuf_set(err, errlen, "out of memory loading CA certificates");
		return -1;
	}
	for (k = 0; extra_ca_paths != NULL && k < n_extra; k++) {
		if (extra_ca_paths[k] == NULL) {
			errbuf_set(err, errlen, "extraCaCertPaths entry %zu is NULL", k);
			goto out;
		}
		if (trust_load_certs(extra_ca_paths[k], roots, true, err, errlen) < 0)
			goto out;
	}
	ca_mem = BIO_new(BIO_s_mem());
	trust_mem = BIO_new(BIO_s_mem());
	if (ca_mem == NULL || trust_mem == NULL) {
		ca_ssl_err(err, errlen, "session files: out of memory");
		goto out;
	}
	/* The session CA first in trust.pem: some tools read only the first
	 * certificate of a bundle for display. */
	if (PEM_write_bio_X509(ca_mem, ca_cert(ca)) != 1 ||
	    PEM_write_bio_X509(trust_mem, ca_cert(ca)) != 1) {
		ca_ssl_err(err, errlen, "session files: cannot encode the CA certificate");
		goto out;
	}
	nsys = copy_cert_blocks(sys, trust_mem, err, errlen);
	if (nsys <= 0) {
		if (nsys == 0)
			errbuf_set(err, errlen, "%s holds no \"BEGIN CERTIFICATE\" block", sys);
		if (err != NULL) {
			size_t used = strlen(err);

			if (used < errlen)
				snprintf(err + used, errlen - used,
					 " (system root bundle: install ca-certificates or set "
					 "SSL_CERT_FILE)");
		}
		goto out;
	}
	for (i = 0; i < sk_X509_num(roots); i++) {
		if (PEM_write_bio_X509(trust_mem, sk_X509_value(roots, i)) != 1) {
			ca_ssl_err(err, errlen, "trust.pem: cannot encode certificate %d", i + 1);
			goto out;
		}
	}
	if (write_atomic(session_dir, "ca.pem", ca_mem, err, errlen) != 0 ||
	    write_atomic(session_dir, "trust.pem", trust_mem, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	BIO_free(ca_mem);
	BIO_free(trust_mem);
	sk_X509_pop_free(roots, X509_free);
	return rc;
}

/*
 * The system's hashed certificate directory ($SSL_CERT_DIR, else
 * OpenSSL's default, /usr/lib/ssl/certs -> /etc/ssl/certs on Debian) when
 * no $SSL_CERT_FILE overrides the bundle and the directory holds at least
 * one "HASH.N" entry (update-ca-certificates made them); else NULL.
 */
static const char *hashed_dir(void)
{
	const char *file_env = getenv(X509_get_default_cert_file_env());
	const char *dir = getenv(X509_get_default_cert_dir_env());
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (file_env != NULL && *file_env != '\0')
		return NULL;
	if (dir == NULL || *dir == '\0')
		dir = X509_get_default_cert_dir();
	if (dir == NULL || strchr(dir, ':') != NULL || (d = opendir(dir)) == NULL)
		return NULL;
	while (!found && (de = readdir(d)) != NULL) {
		size_t i, n = strlen(de->d_name);

		if (n < 10 || de->d_name[8] != '.')
			continue;
		found = true;
		for (i = 0; i < 8; i++)
			if (strchr("0123456789abcdef", de->d_name[i]) == NULL)
				found = false;
	}
	closedir(d);
	return found ? dir : NULL;
}

SSL_CTX *ca_upstream_ctx(const char *const *extra_ca_paths, size_t n_extra, char *err,
			 size_t errlen)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	STACK_OF(X509) *roots;
	const char *dir = hashed_dir();
	X509_STORE *store;
	SSL_CTX *ctx;
	int i;

	/* With the hashed directory, a root is read when a chain needs it
	 * (not the whole bundle at start); the extra files are read here. */
	if (dir != NULL) {
		roots = sk_X509_new_null();
		if (roots == NULL) {
			errbuf_set(err, errlen, "out of memory loading CA certificates");
			return NULL;
		}
		for (size_t k = 0; extra_ca_paths != NULL && k < n_extra; k++) {
			if (extra_ca_paths[k] == NULL ||
			    trust_load_certs(extra_ca_paths[k], roots, true, err, errlen) < 0) {
				if (extra_ca_paths[k] == NULL)
					errbuf_set(err, errlen, "extraCaCertPaths entry %zu is NULL", k);
				sk_X509_pop_free(roots, X509_free);
				return NULL;
			}
		}
	} else {
		roots = load_roots(extra_ca_paths, extra_ca_paths != NULL ? n_extra : 0, err, errlen);
	}
	if (roots == NULL)
		return NULL;
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		ca_ssl_err(err, errlen, "upstream TLS context");
		goto fail;
	}
	store = SSL_CTX_get_cert_store(ctx);
	if (dir != NULL) {
		X509_LOOKUP *lk = X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir());

		if (lk == NULL || X509_LOOKUP_add_dir(lk, dir, X509_FILETYPE_PEM) != 1) {
			ca_ssl_err(err, errlen, "upstream TLS context: system roots in %s", dir);
			goto fail;
		}
	}
	for (i = 0; i < sk_X509_num(roots); i++) {
		/* The store takes its own reference. */
		if (X509_STORE_add_cert(store, sk_X509_value(roots, i)) != 1) {
			ca_ssl_err(err, errlen, "upstream TLS context: root %d", i + 1);
			goto fail;
		}
	}
	/* SSL_CTX_set_alpn_protos returns 0 on success, unlike the rest. */
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) != 0) {
		ca_ssl_err(err, errlen, "upstream TLS context");
		goto fail;
	}
	/* The per-connection SSL_set1_host() inherits these flags. */
	X509_VERIFY_PARAM_set_hostflags(SSL_CTX_get0_param(ctx),
					X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* What an upstream sends may hold a real value (an echo, a token
	 * endpoint): OpenSSL keeps each decrypted record in its read buffer
	 * until the next overwrites it, and frees that buffer as it is
	 * (SSL_MODE_RELEASE_BUFFERS). Cleansed once read, and on release. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CLEANSE_PLAINTEXT);
	if (SSL_CTX_set_ciphersuites(ctx, CA_TLS13_SUITES) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, CA_TLS12_CIPHERS) != 1) {
		ca_ssl_err(err, errlen, "upstream TLS context: TLS 1.3 suites or TLS 1.2 ciphers");
		goto fail;
	}
	/* An idle kept-alive upstream holds no record buffers; a busy one
	 * reads several records per read(). */
	(void)SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_default_read_buffer_len(ctx, CA_TLS_READ_AHEAD_BYTES);
	sk_X509_pop_free(roots, X509_free);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	sk_X509_pop_free(roots, X509_free);
	return NULL;
}

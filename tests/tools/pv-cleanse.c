/*
 * pv-cleanse - whether a value an upstream sent stays in memory OpenSSL
 * frees, on a connection of the proxy's upstream context
 * (ca_upstream_ctx(), SSL_OP_CLEANSE_PLAINTEXT).
 *
 *   pv-cleanse DIR [--control]
 *
 * DIR must exist (test certificates are written there). Every block
 * OpenSSL frees or reallocates is searched for the value before it goes;
 * with --control the connection clears the option first, and the count
 * must then be above 0 (else the search proves nothing). Prints "freed
 * blocks holding the value: N"; exit 0, 1 on failure, 2 on usage.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "ca/ca.h"
#include "tests/support/certs.h"

static const char value[] = "pv-cleanse-REAL-7f3a9c1e5b";
static unsigned holding;

static void search(void *p)
{
	if (p != NULL && memmem(p, malloc_usable_size(p), value, sizeof(value) - 1) != NULL)
		holding++;
}

static void *m_alloc(size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return malloc(n);
}

static void *m_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	search(p);
	return realloc(p, n);
}

static void m_free(void *p, const char *file, int line)
{
	(void)file, (void)line;
	search(p);
	free(p);
}

/* Runs both handshakes over the pair until neither wants more. */
static bool handshake(SSL *c, SSL *s)
{
	for (int i = 0; i < 50; i++) {
		int rc = SSL_do_handshake(c), rs = SSL_do_handshake(s);

		if (rc == 1 && rs == 1)
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	char path[4096], key[4096], msg[256], got[512], err[256] = "";
	const char *names[] = {"localhost", NULL}, *extra[1];
	bool control = argc == 3 && strcmp(argv[2], "--control") == 0;
	SSL_CTX *sc = NULL, *up = NULL;
	SSL *s = NULL, *c = NULL;
	BIO *bs = NULL, *bc = NULL;
	int n, rc = 1;

	if (argc < 2 || argc > 3 || (argc == 3 && !control)) {
		fprintf(stderr, "usage: pv-cleanse DIR [--control]\n");
		return 2;
	}
	/* Before OpenSSL allocates anything. */
	if (CRYPTO_set_mem_functions(m_alloc, m_realloc, m_free) != 1) {
		fprintf(stderr, "pv-cleanse: cannot hook OpenSSL's allocator\n");
		return 1;
	}
	if (test_certs_make(argv[1], names) < 0 ||
	    snprintf(path, sizeof(path), "%s/server.pem", argv[1]) >= (int)sizeof(path) ||
	    snprintf(key, sizeof(key), "%s/server.key", argv[1]) >= (int)sizeof(key))
		return 1;
	sc = SSL_CTX_new(TLS_server_method());
	if (sc == NULL || SSL_CTX_use_certificate_file(sc, path, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(sc, key, SSL_FILETYPE_PEM) != 1) {
		fprintf(stderr, "pv-cleanse: cannot load %s\n", path);
		goto out;
	}
	if (snprintf(path, sizeof(path), "%s/ca.pem", argv[1]) >= (int)sizeof(path))
		goto out;
	extra[0] = path;
	up = ca_upstream_ctx(extra, 1, err, sizeof(err));
	if (up == NULL) {
		fprintf(stderr, "pv-cleanse: %s\n", err);
		goto out;
	}
	s = SSL_new(sc);
	c = SSL_new(up);
	if (s == NULL || c == NULL || BIO_new_bio_pair(&bs, 0, &bc, 0) != 1 ||
	    SSL_set_tlsext_host_name(c, "localhost") != 1 || SSL_set1_host(c, "localhost") != 1)
		goto out;
	SSL_set_bio(s, bs, bs);
	SSL_set_bio(c, bc, bc);
	bs = bc = NULL;
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	if (control)
		(void)SSL_clear_options(c, SSL_OP_CLEANSE_PLAINTEXT);
	if (!handshake(c, s)) {
		fprintf(stderr, "pv-cleanse: the handshake did not finish\n");
		goto out;
	}
	n = snprintf(msg, sizeof(msg), "HTTP/1.1 200 OK\r\n\r\n{\"token\":\"%s\"}\n", value);
	if (SSL_write(s, msg, n) != n || (n = SSL_read(c, got, sizeof(got))) <= 0) {
		fprintf(stderr, "pv-cleanse: the response did not come\n");
		goto out;
	}
	/* The reader's own copy is the reader's to wipe. */
	OPENSSL_cleanse(got, sizeof(got));
	rc = 0;
out:
	SSL_free(c);
	SSL_free(s);
	BIO_free(bs);
	BIO_free(bc);
	SSL_CTX_free(up);
	SSL_CTX_free(sc);
	if (rc == 0)
		printf("freed blocks holding the value: %u\n", holding);
	return rc;
}

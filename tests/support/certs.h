/*
 * certs.h - test certificates, generated at test time with the OpenSSL 3
 * API (STYLE.md 19: no certificates checked into the tree).
 *
 * test_certs_make(dir, names) writes into the existing directory dir:
 *   ca.pem      a self-signed test root CA (ECDSA P-256, CA:TRUE,
 *               keyCertSign|cRLSign), valid from one hour ago for 30 days
 *   ca.key      its private key (PKCS#8 PEM, mode 0600)
 *   server.pem  a leaf issued by ca.pem: SAN = every entry of names (an
 *               IPv4/IPv6 literal becomes an IP SAN, anything else a DNS
 *               SAN), CN = names[0], extendedKeyUsage serverAuth,
 *               digitalSignature, CA:FALSE
 *   server.key  its private key (0600)
 *   bad-ca.pem  a different, unrelated root CA (its key is not kept)
 *   bad.pem     a leaf for the same names issued by bad-ca.pem: a client
 *               trusting only ca.pem gets "certificate does not verify"
 *   bad.key     its private key (0600)
 *
 * names is a NULL-terminated list with at least one entry, e.g.
 * {"127.0.0.1", "localhost", NULL}. Returns 0, or -1 with a message on
 * stderr. Existing files are replaced.
 */
#ifndef PASSAVANT_TEST_CERTS_H
#define PASSAVANT_TEST_CERTS_H

int test_certs_make(const char *dir, const char *const *names);

#endif

/*
 * sentinel.c - sentinels of SPEC §4.1 with the value's length and shape:
 * drawn from the kernel CSPRNG (`sentinels: per-session`), or derived
 * (stable, the default) from a host-held key, the credential's name and
 * its real value with HMAC-SHA256 (OpenSSL): a pseudo-random key
 * PRK = HMAC(key, domain || name || value || attempt), then the byte
 * stream HMAC(PRK, "stream" || counter) for counter = 0, 1, ... (the
 * expand step of HKDF, RFC 5869, in counter mode). Both feed the same
 * rejection sampling per class. Which type prefixes a sentinel keeps and
 * how much entropy its random part has are policy/tokens.c's.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "mask.h"

/* Domain separation of the derivation (bump on any change of it: every
 * stable sentinel changes, and the ledger shows the old ones as stale). */
static const char DERIVE_DOMAIN[] = "passavant sentinel v1";

/* Random bytes fetched per getrandom() call while drawing a sentinel. */
#define SENTINEL_POOL_BYTES 256
/* Draws before giving up on a sentinel that keeps equalling the value:
 * with >= 64 random bits the first draw differs but with probability
 * 2^-64, so a second equal draw means a broken CSPRNG. */
#define SENTINEL_MAX_DRAWS 8

/* HMAC-SHA256 output length. */
#define HMAC_BYTES 32

/* A buffer of CSPRNG bytes (derived: false) or of the keyed stream
 * (derived: true, prk and counter), refilled on demand; wiped by its
 * user. */
struct rnd_pool {
	unsigned char b[SENTINEL_POOL_BYTES];
	size_t pos;
	bool derived;
	unsigned char prk[HMAC_BYTES];
	uint64_t counter;
};

/* Big-endian encodings for the derivation input. */
static void be64(unsigned char out[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (unsigned char)(v & 0xff);
}

/*
 * HMAC-SHA256 of the concatenation of n parts under key into out
 * (HMAC_BYTES). 0, or -1 with errno EIO when OpenSSL failed.
 */
static int hmac_parts(const unsigned char *key, size_t keylen, const void *const *part,
		      const size_t *plen, size_t n, unsigned char out[HMAC_BYTES])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	size_t outl = 0;
	int ok = ctx != NULL && EVP_MAC_init(ctx, key, keylen, params) == 1;

	for (size_t i = 0; ok && i < n; i++)
		ok = plen[i] == 0 || EVP_MAC_update(ctx, part[i], plen[i]) == 1;
	ok = ok && EVP_MAC_final(ctx, out, &outl, HMAC_BYTES) == 1 && outl == HMAC_BYTES;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	if (!ok) {
		explicit_bzero(out, HMAC_BYTES);
		errno = EIO;
		return -1;
	}
	return 0;
}

/* Fills the pool from the keyed stream. 0 or -1 (errno EIO). */
static int pool_fill_derived(struct rnd_pool *rp)
{
	static const char tag[] = "stream";

	for (size_t off = 0; off < sizeof(rp->b); off += HMAC_BYTES) {
		unsigned char ctr[8];
		const void *part[2] = {tag, ctr};
		size_t plen[2] = {sizeof(tag), sizeof(ctr)};

		be64(ctr, rp->counter++);
		if (hmac_parts(rp->prk, sizeof(rp->prk), part, plen, 2, rp->b + off) != 0)
			return -1;
	}
	return 0;
}

_Static_assert(SENTINEL_POOL_BYTES % HMAC_BYTES == 0, "whole HMAC blocks per pool");

/* Next random byte; 0 on success, -1 with errno when getrandom (or the
 * keyed hash) failed. */
static int pool_byte(struct rnd_pool *rp, unsigned char *out)
{
	if (rp->pos == sizeof(rp->b) && rp->derived) {
		if (pool_fill_derived(rp) != 0)
			return -1;
		rp->pos = 0;
	} else if (rp->pos == sizeof(rp->b)) {
		size_t off = 0;
		while (off < sizeof(rp->b)) {
			/* A 256-byte request from the urandom source does not
			 * return short once the pool is seeded, but EINTR may
			 * interrupt the wait for seeding at boot. */
			ssize_t n = getrandom(rp->b + off, sizeof(rp->b) - off, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -1;
			off += (size_t)n;
		}
		rp->pos = 0;
	}
	*out = rp->b[rp->pos++];
	return 0;
}

/*
 * A uniform draw from [0, n) for n in {10, 26}: bytes at or above the
 * largest multiple of n that fits in a byte are rejected, so every
 * residue has exactly the same number of source bytes (no modulo bias).
 */
static int pool_uniform(struct rnd_pool *rp, unsigned n, unsigned *out)
{
	unsigned limit = 256 - 256 % n; /* 250 for 10, 234 for 26 */
	unsigned char b;

	do {
		if (pool_byte(rp, &b) != 0)
			return -1;
	} while (b >= limit);
	*out = b % n;
	return 0;
}

/* The shape rules over the bytes of rp (either source): draws until
 * the sentinel differs from the value (a derived stream goes on with
 * the next bytes, so the result is still a function of its input). */
static enum mask_sentinel_result sentinel_shape(struct rnd_pool *rp, const char *value, size_t len,
						char *out)
{
	size_t start = policy_token_prefix_len(value, len);
	enum mask_sentinel_result res = MASK_SENTINEL_EQUAL;
	int saved = 0;

	if (policy_sentinel_bits(value, len) < POLICY_MIN_SENTINEL_BITS)
		return MASK_SENTINEL_TOO_SHORT;
	for (unsigned draw = 0; draw < SENTINEL_MAX_DRAWS; draw++) {
		memcpy(out, value, start);
		for (size_t i = start; i < len; i++) {
			unsigned char c = (unsigned char)value[i];
			unsigned r;
			char base;
			unsigned n;

			if (c >= 'a' && c <= 'z')
				base = 'a', n = 26;
			else if (c >= 'A' && c <= 'Z')
				base = 'A', n = 26;
			else if (c >= '0' && c <= '9')
				base = '0', n = 10;
			else {
				out[i] = (char)c; /* punctuation and other bytes kept */
				continue;
			}
			if (pool_uniform(rp, n, &r) != 0) {
				saved = errno;
				res = rp->derived ? MASK_SENTINEL_CRYPTO : MASK_SENTINEL_RANDOM;
				goto fail;
			}
			out[i] = (char)(base + (char)r);
		}
		if (memcmp(out, value, len) != 0)
			return MASK_SENTINEL_OK;
	}
fail:
	explicit_bzero(out, len);
	if (saved != 0)
		errno = saved;
	return res;
}

enum mask_sentinel_result mask_sentinel_make(const char *value, size_t len, char *out)
{
	struct rnd_pool rp = {.pos = sizeof(rp.b)};
	enum mask_sentinel_result res = sentinel_shape(&rp, value, len, out);

	explicit_bzero(&rp, sizeof(rp));
	return res;
}

enum mask_sentinel_result mask_sentinel_derive(const unsigned char key[MASK_KEY_BYTES],
					       const char *name, const char *value, size_t len,
					       unsigned attempt, char *out)
{
	struct rnd_pool rp = {.pos = sizeof(rp.b), .derived = true};
	unsigned char nlen[8], vlen[8], att[8];
	size_t namelen = strlen(name);
	/* Lengths before each variable part: (name, value) pairs that
	 * concatenate alike never share an input. */
	const void *part[6] = {DERIVE_DOMAIN, nlen, name, vlen, value, att};
	size_t plen[6] = {sizeof(DERIVE_DOMAIN), sizeof(nlen), namelen, sizeof(vlen), len, sizeof(att)};
	enum mask_sentinel_result res;

	if (policy_sentinel_bits(value, len) < POLICY_MIN_SENTINEL_BITS)
		return MASK_SENTINEL_TOO_SHORT;
	be64(nlen, namelen);
	be64(vlen, len);
	be64(att, attempt);
	if (hmac_parts(key, MASK_KEY_BYTES, part, plen, 6, rp.prk) != 0) {
		explicit_bzero(out, len);
		return MASK_SENTINEL_CRYPTO;
	}
	res = sentinel_shape(&rp, value, len, out);
	explicit_bzero(&rp, sizeof(rp));
	return res;
}

const char *mask_sentinel_strerror(enum mask_sentinel_result res)
{
	switch (res) {
	case MASK_SENTINEL_OK:
		return "success";
	case MASK_SENTINEL_TOO_SHORT:
		return "too short to mask; use mode: deny";
	case MASK_SENTINEL_RANDOM:
		return "the kernel random generator failed";
	case MASK_SENTINEL_CRYPTO:
		return "the keyed hash (OpenSSL HMAC-SHA256) failed";
	case MASK_SENTINEL_EQUAL:
		return "the random generator kept returning the real value";
	}
	return "unknown sentinel error";
}

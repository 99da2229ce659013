/*
 * sentinel.c - sentinels of SPEC §4.1: drawing one from the kernel CSPRNG
 * with the value's length and shape. Which type prefixes a sentinel keeps
 * and how much entropy its random part has are policy/tokens.c's.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "mask.h"

/* Random bytes fetched per getrandom() call while drawing a sentinel. */
#define SENTINEL_POOL_BYTES 256
/* Draws before giving up on a sentinel that keeps equalling the value:
 * with >= 64 random bits the first draw differs but with probability
 * 2^-64, so a second equal draw means a broken CSPRNG. */
#define SENTINEL_MAX_DRAWS 8

/* A buffer of CSPRNG bytes, refilled on demand; wiped by its user. */
struct rnd_pool {
	unsigned char b[SENTINEL_POOL_BYTES];
	size_t pos;
};

/* Next random byte; 0 on success, -1 with errno when getrandom failed. */
static int pool_byte(struct rnd_pool *rp, unsigned char *out)
{
	if (rp->pos == sizeof(rp->b)) {
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

enum mask_sentinel_result mask_sentinel_make(const char *value, size_t len, char *out)
{
	struct rnd_pool rp = { .pos = sizeof(rp.b) };
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
			if (pool_uniform(&rp, n, &r) != 0) {
				saved = errno;
				res = MASK_SENTINEL_RANDOM;
				goto fail;
			}
			out[i] = (char)(base + (char)r);
		}
		if (memcmp(out, value, len) != 0) {
			explicit_bzero(&rp, sizeof(rp));
			return MASK_SENTINEL_OK;
		}
	}
fail:
	explicit_bzero(&rp, sizeof(rp));
	explicit_bzero(out, len);
	if (saved != 0)
		errno = saved;
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
	case MASK_SENTINEL_EQUAL:
		return "the random generator kept returning the real value";
	}
	return "unknown sentinel error";
}

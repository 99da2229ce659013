/*
 * sentinel.c - sentinels of SPEC §4.1: which type prefixes a sentinel
 * keeps, how much entropy its random part has for a given value, and
 * drawing one from the kernel CSPRNG with the value's length and shape.
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

/*
 * Well-known credential type prefixes. A longer prefix must be listed
 * before any prefix of it ("sk-ant-" before "sk-"), because the first
 * match wins. Kept verbatim in a sentinel so clients that check a token's
 * shape keep working; they carry no entropy.
 */
static const char *const known_prefixes[] = {
	"github_pat_", /* GitHub fine-grained PAT */
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", /* GitHub classic tokens */
	"glpat-", "gldt-", "glrt-",            /* GitLab */
	"sk-ant-api03-", "sk-ant-admin01-", "sk-ant-", /* Anthropic */
	"sk-proj-", "sk-svcacct-", "sk-",      /* OpenAI */
	"sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", /* Stripe */
	"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-", /* Slack */
	"AKIA", "ASIA",                        /* AWS access key ids */
	"AIza",                                /* Google API keys */
	"ya29.",                               /* Google OAuth access tokens */
	"npm_",                                /* npm */
	"pypi-",                               /* PyPI */
	"hf_",                                 /* Hugging Face */
	"SG.",                                 /* SendGrid */
	"shpat_", "shpss_",                    /* Shopify */
	"dop_v1_",                             /* DigitalOcean */
	"glc_",                                /* Grafana cloud */
	"lin_api_",                            /* Linear */
};

size_t mask_known_prefix(const char *value, size_t len)
{
	for (size_t i = 0; i < sizeof(known_prefixes) / sizeof(known_prefixes[0]); i++) {
		size_t n = strlen(known_prefixes[i]);
		/* A value that is nothing but a prefix keeps nothing random:
		 * then treat it as having no prefix at all. */
		if (n < len && memcmp(value, known_prefixes[i], n) == 0)
			return n;
	}
	return 0;
}

unsigned mask_sentinel_bits(const char *value, size_t len)
{
	/* Millibits per replaced character, rounded down so the estimate
	 * never overstates: log2(26) = 4.7004, log2(10) = 3.3219. */
	unsigned long long millibits = 0;

	for (size_t i = mask_known_prefix(value, len); i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			millibits += 4700;
		else if (c >= '0' && c <= '9')
			millibits += 3321;
	}
	if (millibits / 1000 > 0xffffffffull)
		return 0xffffffffu;
	return (unsigned)(millibits / 1000);
}

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
	size_t start = mask_known_prefix(value, len);
	enum mask_sentinel_result res = MASK_SENTINEL_EQUAL;
	int saved = 0;

	if (mask_sentinel_bits(value, len) < MASK_MIN_SENTINEL_BITS)
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

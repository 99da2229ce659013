/*
 * sentinel.c - the shape rules of SPEC §4.1 that do not need randomness:
 * which type prefixes a sentinel keeps, and how much entropy the random
 * part of a sentinel has for a given value.
 */
#include <string.h>

#include "mask.h"

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

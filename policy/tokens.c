/*
 * tokens.c - the shape of credential tokens (SPEC §4.1, §3.6): the
 * well-known type prefixes and how many random bits a sentinel for a value
 * would carry. policy/ owns this knowledge because both the environment
 * rule (mandatory.c) and mask/ (sentinels) need it, and mask sits above
 * policy: mask/sentinel.c calls these. Every function here is pure.
 */
#include <string.h>

#include "policy.h"

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

/* Contract in policy.h. */
size_t policy_token_prefix_len(const char *value, size_t len)
{
	for (size_t i = 0; i < ARRAY_LEN(known_prefixes); i++) {
		size_t n = strlen(known_prefixes[i]);
		/* A value that is nothing but a prefix keeps nothing random:
		 * then treat it as having no prefix at all. */
		if (n < len && memcmp(value, known_prefixes[i], n) == 0)
			return n;
	}
	return 0;
}

/* Contract in policy.h. */
unsigned policy_sentinel_bits(const char *value, size_t len)
{
	/* Millibits per replaced character, rounded down so the estimate
	 * never overstates: log2(26) = 4.7004, log2(10) = 3.3219. */
	unsigned long long millibits = 0;

	for (size_t i = policy_token_prefix_len(value, len); i < len; i++) {
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

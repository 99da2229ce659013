/*
 * fuzz_mask_head.c - libFuzzer driver for mask/exchange.c's head calls.
 *
 * A fixed policy masks two variables, PV_FZ_HDR (injectHosts
 * api.example.com, injectIn header and query) and PV_FZ_BODY (same host,
 * body only). The input is:
 *
 *   byte 0     bit 0: the request goes to api.example.com (else
 *              other.example.com); bit 1: over verified TLS
 *   the rest   a request head, where byte 0x01 stands for the sentinel of
 *              PV_FZ_HDR, 0x02 for that of PV_FZ_BODY and 0x03 for the
 *              real value of PV_FZ_HDR
 *
 * mask_exch_request_head() runs on the expanded head. Invariants (any
 * violation aborts): the head keeps its length; towards
 * other.example.com, or without verified TLS, no real value appears
 * that was not in the input (nothing is injected where it may not be);
 * a refusal names one of the two credentials; and after
 * mask_exch_response_head() on the result no raw real value is left.
 *
 * Build with `make fuzz`; run e.g.
 *   build/fuzz/fuzz_mask_head build/fuzz/corpus-fuzz_mask_head \
 *       tests/fuzz/corpus/fuzz_mask_head
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mask/mask.h"
#include "../../policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_HDR "ghp_Fz7Hd9Qm2Lp4Vt6Nw8Bc1Zs3Ky5Fj0Gh2Tq"
#define FZ_BODY "sk-Fz4Bo6Dy8Pa2Qs1We3Rt5Yu7Io9Kl0Zx2Cv4"
#define HEAD_MAX 8192

static mask_table_t *fz_table;
static mask_exch_t *fz_exch;
static char fz_hdr_sent[64], fz_body_sent[64];

/* Builds the table once. */
static void fz_init(void)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com, other.example.com]\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_FZ_HDR, mode: mask, injectHosts: [api.example.com],\n"
				  "       injectIn: [header, query]}\n"
				  "    - {name: PV_FZ_BODY, mode: mask, injectHosts: [api.example.com],\n"
				  "       injectIn: [body]}\n";
	FILE *diag = fopen("/dev/null", "w");
	unsigned nerr = 0;
	policy_t *p;
	char err[256];

	setenv("PV_FZ_HDR", FZ_HDR, 1);
	setenv("PV_FZ_BODY", FZ_BODY, 1);
	p = policy_load_buffer("fuzz.yaml", doc, sizeof(doc) - 1, diag != NULL ? diag : stderr, &nerr);
	if (diag != NULL)
		fclose(diag);
	if (p == NULL || (fz_table = mask_table_new(p, err, sizeof(err))) == NULL ||
	    (fz_exch = mask_exch_new(fz_table)) == NULL)
		abort();
	policy_free(p);
	for (size_t i = 0; i < mask_table_env_count(fz_table); i++) {
		const char *sent, *name = mask_table_env_get(fz_table, i, &sent);

		snprintf(strcmp(name, "PV_FZ_HDR") == 0 ? fz_hdr_sent : fz_body_sent, sizeof(fz_hdr_sent),
			 "%s", sent);
	}
}

/* Occurrences of needle (n bytes) in hay[0..len). */
static size_t occurrences(const char *hay, size_t len, const char *needle, size_t n)
{
	size_t k = 0;
	const char *p = hay, *end = hay + len;

	while ((size_t)(end - p) >= n && (p = memmem(p, (size_t)(end - p), needle, n)) != NULL) {
		k++;
		p += n;
	}
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char head[HEAD_MAX];
	struct mask_refusal why;
	enum mask_head_result r;
	const char *rcred;
	size_t len = 0, real_in;
	bool api, verified;

	if (fz_table == NULL)
		fz_init();
	if (size < 1)
		return 0;
	api = (data[0] & 1) != 0;
	verified = (data[0] & 2) != 0;
	for (size_t i = 1; i < size; i++) {
		const char *s = data[i] == 1 ? fz_hdr_sent : data[i] == 2 ? fz_body_sent
				: data[i] == 3 ? FZ_HDR : NULL;
		size_t n = s != NULL ? strlen(s) : 1;

		if (len + n > sizeof(head))
			break;
		if (s != NULL)
			memcpy(head + len, s, n);
		else
			head[len] = (char)data[i];
		len += n;
	}
	real_in = occurrences(head, len, FZ_HDR, strlen(FZ_HDR));
	mask_exch_begin(fz_exch);
	r = mask_exch_request_head(fz_exch, head, len, api ? "api.example.com" : "other.example.com", 443,
				   verified, &why);
	if (r == MASK_HEAD_NOMEM)
		return 0;
	if (r == MASK_HEAD_REFUSED &&
	    (why.cred == NULL || (strcmp(why.cred, "PV_FZ_HDR") != 0 && strcmp(why.cred, "PV_FZ_BODY") != 0)))
		abort();
	if ((!api || !verified) && occurrences(head, len, FZ_HDR, strlen(FZ_HDR)) > real_in)
		abort();
	if (mask_exch_response_head(fz_exch, head, len, &rcred) < 0)
		return 0;
	if (occurrences(head, len, FZ_HDR, strlen(FZ_HDR)) != 0 ||
	    occurrences(head, len, FZ_BODY, strlen(FZ_BODY)) != 0)
		abort();
	return 0;
}

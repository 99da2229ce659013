/*
 * test_leak.c - issue 13 class 7 in mask/: a real value on its way out is
 * found in every form the remask set knows (mask_table_find_real()), the
 * outbound sets count it and turn it into its sentinel's form, and
 * sentinels are found in a fully percent-decoded target
 * (mask_table_sentinels_decoded()). Public API only. The "real" values
 * are synthetic; no assertion message contains one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "mask/mask.h"
#include "policy/policy.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

/* '/' and '+' give it JSON-escaped and percent-encoded forms. */
#define LK_REAL "Lk7/Qz9+Wm3Rt5Yu1Io8Pa2Sd4Fg6Hj0Kl"
#define LK_TOK "ghp_Lk0Tok3nVa1ue4567890abcdefABCDEFGH"

struct lfx {
	policy_t *p;
	mask_table_t *t;
};

static int lfx_setup(struct lfx *f)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com, other.example.com]\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_LK_REAL, mode: mask, injectHosts: [api.example.com]}\n"
				  "    - {name: PV_LK_TOK, mode: mask, injectHosts: [api.example.com],\n"
				  "       injectIn: [header, query, body]}\n";
	unsigned nerr = 0;
	char err[256];

	memset(f, 0, sizeof(*f));
	setenv("PV_LK_REAL", LK_REAL, 1);
	setenv("PV_LK_TOK", LK_TOK, 1);
	f->p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	if (f->p == NULL)
		return -1;
	f->t = mask_table_new(f->p, err, sizeof(err));
	return f->t != NULL ? 0 : -1;
}

static void lfx_teardown(struct lfx *f)
{
	mask_table_free(f->t);
	policy_free(f->p);
	unsetenv("PV_LK_REAL");
	unsetenv("PV_LK_TOK");
}

/* The credential name mask_table_find_real() gives for s, or "-". */
static const char *found(struct lfx *f, const char *s)
{
	long c = mask_table_find_real(f->t, s, strlen(s));

	return c >= 0 ? mask_table_cred_name(f->t, (size_t)c) : "-";
}

/* Every form is found, as sent and fully %-decoded; other text is not. */
static void test_find_real(void)
{
	char buf[512], enc[256], all[3 * sizeof(LK_TOK)];
	struct lfx f;

	CU_ASSERT_FATAL(lfx_setup(&f) == 0);
	CU_ASSERT_STRING_EQUAL(found(&f, "GET /x?t=" LK_TOK), "PV_LK_TOK");
	CU_ASSERT_STRING_EQUAL(found(&f, "{\"k\":\"Lk7\\/Qz9+Wm3Rt5Yu1Io8Pa2Sd4Fg6Hj0Kl\"}"), "PV_LK_REAL");
	CU_ASSERT_STRING_EQUAL(found(&f, "s=Lk7%2FQz9%2BWm3Rt5Yu1Io8Pa2Sd4Fg6Hj0Kl"), "PV_LK_REAL");
	test_b64("x-access-token:" LK_TOK, strlen("x-access-token:" LK_TOK), enc);
	snprintf(buf, sizeof(buf), "Basic %s", enc);
	CU_ASSERT_STRING_EQUAL(found(&f, buf), "PV_LK_TOK");
	test_b64(LK_REAL, strlen(LK_REAL), enc);
	CU_ASSERT_STRING_EQUAL(found(&f, enc), "PV_LK_REAL");
	for (size_t k = 0; k < strlen(LK_TOK); k++)
		snprintf(all + 3 * k, 4, "%%%02x", (unsigned char)LK_TOK[k]);
	CU_ASSERT_STRING_EQUAL(found(&f, all), "PV_LK_TOK");
	/* Not a real value: its sentinel, a prefix, nothing. */
	CU_ASSERT_STRING_EQUAL(found(&f, "ghp_Lk0Tok3nVa1ue4567890abcdef"), "-");
	CU_ASSERT_STRING_EQUAL(found(&f, "hello world"), "-");
	CU_ASSERT(mask_table_find_real(f.t, "", 0) == -1);
	lfx_teardown(&f);
}

/* An outbound set maps each real value's forms to its sentinel's and
 * counts them after the sentinel pairs (struct mask_outbound). */
static void test_outbound_forms(void)
{
	struct mask_outbound ob;
	char body[256];
	uint64_t *counts;
	size_t total = 0, seen = 0;
	struct lfx f;

	CU_ASSERT_FATAL(lfx_setup(&f) == 0);
	CU_ASSERT_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_BODY, &ob) == 0);
	CU_ASSERT(ob.nforms >= 2 && ob.nforms <= mask_table_form_count(f.t));
	CU_ASSERT(mask_set_npairs(ob.set) == ob.npairs + ob.nforms);
	counts = calloc(mask_set_npairs(ob.set), sizeof(*counts));
	CU_ASSERT_FATAL(counts != NULL);
	snprintf(body, sizeof(body), "a=%s&b=Lk7%%2FQz9%%2BWm3Rt5Yu1Io8Pa2Sd4Fg6Hj0Kl", LK_TOK);
	CU_ASSERT(mask_replace_inplace(ob.set, body, strlen(body), counts, &total) == 0);
	CU_ASSERT(total == 2);
	CU_ASSERT(strstr(body, LK_TOK) == NULL && strstr(body, "Wm3Rt5Yu1Io8Pa2Sd4Fg6Hj0Kl") == NULL);
	for (size_t k = 0; k < ob.nforms; k++)
		seen += counts[ob.npairs + k] != 0;
	CU_ASSERT(seen == 2);
	for (size_t i = 0; i < ob.npairs; i++)
		CU_ASSERT(counts[i] == 0);
	free(counts);
	lfx_teardown(&f);
}

/* Sentinels spelled with any %XX are counted per value. */
static void test_sentinels_decoded(void)
{
	struct mask_outbound ob;
	char sent[64], pct[3 * 64], buf[256];
	uint64_t counts[4] = {0, 0, 0, 0};
	struct evbuffer *out = evbuffer_new();
	struct lfx f;
	size_t n, tok = 0;

	CU_ASSERT_FATAL(lfx_setup(&f) == 0 && out != NULL);
	CU_ASSERT_FATAL(mask_table_value_count(f.t) == 2);
	/* The sentinel of PV_LK_TOK: what the detect-only set leaves. */
	CU_ASSERT_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob) == 0);
	CU_ASSERT_FATAL(mask_replace_buf(mask_table_inbound_set(f.t), LK_TOK, strlen(LK_TOK), out, NULL,
					 NULL) == 0);
	n = evbuffer_get_length(out);
	CU_ASSERT_FATAL(n == strlen(LK_TOK) && n < sizeof(sent));
	CU_ASSERT(evbuffer_remove(out, sent, n) == (int)n);
	sent[n] = '\0';
	for (size_t k = 0; k < n; k++)
		snprintf(pct + 3 * k, 4, "%%%02X", (unsigned char)sent[k]);
	snprintf(buf, sizeof(buf), "/x?a=%s", pct);
	CU_ASSERT(mask_table_sentinels_decoded(f.t, buf, strlen(buf), counts) == 0);
	for (size_t v = 0; v < 2; v++)
		if (strcmp(mask_table_cred_name(f.t, mask_table_value_cred(f.t, v)), "PV_LK_TOK") == 0)
			tok = v;
	CU_ASSERT(counts[tok] == 1 && counts[1 - tok] == 0);
	/* Without a '%', nothing is decoded (the raw scan covers it). */
	memset(counts, 0, sizeof(counts));
	CU_ASSERT(mask_table_sentinels_decoded(f.t, sent, n, counts) == 0);
	CU_ASSERT(counts[0] == 0 && counts[1] == 0);
	evbuffer_free(out);
	lfx_teardown(&f);
}

/*
 * A value with the bytes JSON encoders escape differently (a multi-line
 * secret, quotes, a backslash, '<' and '&', a backspace): found in the JSON
 * forms JavaScript and Python write (\n, \b; '/' as is), PHP writes ('/'
 * as \/) and Go writes (\u003c, \u0026, \u0008), each of which a client
 * turns back into the real value with one JSON decode.
 */
#define ML_REAL "Ml7\"Qz9\\Wm3<Rt5&Yu1\nIo8/Pa2\bSd4Fg6Hj0Kl9Zx"
static void test_json_forms(void)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com]\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_LK_ML, mode: mask, injectHosts: [api.example.com]}\n";
	static const char *const forms[] = {
		"{\"k\":\"Ml7\\\"Qz9\\\\Wm3<Rt5&Yu1\\nIo8/Pa2\\bSd4Fg6Hj0Kl9Zx\"}",
		"{\"k\":\"Ml7\\\"Qz9\\\\Wm3<Rt5&Yu1\\nIo8\\/Pa2\\bSd4Fg6Hj0Kl9Zx\"}",
		"{\"k\":\"Ml7\\\"Qz9\\\\Wm3\\u003cRt5\\u0026Yu1\\nIo8/Pa2\\u0008Sd4Fg6Hj0Kl9Zx\"}",
		"{\"k\":\"Ml7\\u0022Qz9\\\\Wm3\\u003CRt5\\u0026Yu1\\nIo8/Pa2\\bSd4Fg6Hj0Kl9Zx\"}",
	};
	unsigned nerr = 0;
	char err[256];
	policy_t *p;
	mask_table_t *t;

	setenv("PV_LK_ML", ML_REAL, 1);
	p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		long c = mask_table_find_real(t, forms[k], strlen(forms[k]));

		if (c < 0)
			printf("\n    JSON form %zu (0: JavaScript/Python, 1: PHP, 2: Go, 3: .NET) not found\n", k);
		CU_ASSERT(c >= 0);
	}
	/* The raw value too; a near miss is not it. */
	CU_ASSERT(mask_table_find_real(t, ML_REAL, strlen(ML_REAL)) >= 0);
	{
		static const char near[] = "Ml7\\\"Qz9\\\\Wm3<Rt5&Yu1\\nIo8/Pa2\\bSd4Fg6Hj0KlXXX";

		CU_ASSERT(mask_table_find_real(t, near, sizeof(near) - 1) < 0);
	}
	mask_table_free(t);
	policy_free(p);
	unsetenv("PV_LK_ML");
}

/*
 * A value with more than MASK_PCT_MIX_MAX escapable bytes, percent-encoded
 * as encoders write it (by byte value: Python's quote() keeps '/', its
 * safe default, and escapes '+'; quote(safe='+') the other way round; both
 * cases of hex): re-masked on the way in. Before, only the form with every
 * byte escaped was.
 */
#define PC_REAL "gB1aM/Ik22HB+8vsyq/Wz5Lp+Qr7Ts/Uv9Xy0aB"
static void test_pct_by_byte(void)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com]\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_LK_PC, mode: mask, injectHosts: [api.example.com]}\n";
	static const char *const encs[][2] = { { "+", "%2B" }, { "+", "%2b" }, { "/", "%2F" }, { "/", "%2f" } };
	unsigned nerr = 0;
	char err[256];
	policy_t *p;
	mask_table_t *t;
	struct evbuffer *out = evbuffer_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	setenv("PV_LK_PC", PC_REAL, 1);
	p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t k = 0; k < sizeof(encs) / sizeof(encs[0]); k++) {
		/* PC_REAL with one byte value escaped everywhere, the other raw */
		char enc[3 * sizeof(PC_REAL)], *o = enc, *got;
		size_t n;

		for (const char *c = PC_REAL; *c != '\0'; c++) {
			if (*c == encs[k][0][0]) {
				memcpy(o, encs[k][1], 3);
				o += 3;
			} else {
				*o++ = *c;
			}
		}
		*o = '\0';
		CU_ASSERT_FATAL(evbuffer_drain(out, evbuffer_get_length(out)) == 0);
		CU_ASSERT_FATAL(mask_replace_buf(mask_table_inbound_set(t), enc, strlen(enc), out, NULL, NULL) == 0);
		n = evbuffer_get_length(out);
		got = (char *)evbuffer_pullup(out, -1);
		if (n == strlen(enc) && memcmp(got, enc, n) == 0)
			printf("\n    '%s' as %s, the other bytes as they are: not re-masked\n", encs[k][0], encs[k][1]);
		CU_ASSERT(n == strlen(enc) && memcmp(got, enc, n) != 0 && memmem(got, n, "Ik22HB", 6) == NULL);
	}
	evbuffer_free(out);
	mask_table_free(t);
	policy_free(p);
	unsetenv("PV_LK_PC");
}

TEST_REGISTRAR(register_mask_leak)
{
	CU_pSuite s = test_suite("mask_leak", NULL, NULL);

	test_add(s, "real values found in every form, raw and fully %-decoded", test_find_real);
	test_add(s, "outbound sets: real-value forms become sentinel forms, counted", test_outbound_forms);
	test_add(s, "sentinels found in a fully %-decoded target", test_sentinels_decoded);
	test_add(s, "real values found in the JSON forms of JavaScript, Python, PHP and Go", test_json_forms);
	test_add(s, "a value with many escapable bytes re-masked as encoders write it (by byte value)",
		 test_pct_by_byte);
}

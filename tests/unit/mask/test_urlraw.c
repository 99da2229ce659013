/*
 * tests/unit/mask/test_urlraw.c - round 46 of the attack: the sentinel of
 * a value holding a %XX escape is refused in a request target in every
 * percent form whose '%' stands raw (mask/exchange.c url_raw_form()),
 * not only as it is; the form with its '%' as %25 is swapped. A sentinel
 * holding "%25" itself reads a target's "%25" two ways: both are tried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mask/mask.h"
#include "policy/policy.h"
#include "tests/support/masktab.h"
#include "tests/support/testlib.h"

/* '%' at 16, '/' at 19: "%25" (two digits) and "%4A" (digit, letter) kept
 * in shape by the sentinel, which draws a digit for a digit. */
#define UR_VALUE "Ab3dEf5hIj7lMn9p%25Qr/2tUv4xYz6bCd8Ef"
#define UR_PCT 16

static const char doc[] = "network:\n"
			  "  allowedDomains: [api.example.com]\n"
			  "credentials:\n"
			  "  envVars:\n"
			  "    - {name: PV_UR_TOK, mode: mask, injectHosts: [api.example.com],\n"
			  "       injectIn: [header, query]}\n";

/* A per-session table over PV_UR_TOK=value; its sentinel into sent. */
static mask_table_t *table_with(policy_t **p, const char *value, char *sent, size_t sentlen)
{
	return test_mask_table_env(p, doc, sizeof(doc) - 1, "PV_UR_TOK", value, NULL, sent, sentlen);
}

/* A per-session table over PV_UR_TOK=UR_VALUE; its sentinel into sent. */
static mask_table_t *table_of(policy_t **p, char *sent, size_t sentlen)
{
	return table_with(p, UR_VALUE, sent, sentlen);
}

/* The verdict on "GET /x?k=TARGET HTTP/1.1" towards the inject host. */
static enum mask_head_result judge(mask_table_t *t, const char *target, struct mask_refusal *why)
{
	char head[8192];
	mask_exch_t *x = mask_exch_new(t);
	enum mask_head_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	snprintf(head, sizeof(head), "GET /x?k=%s HTTP/1.1\r\nHost: api.example.com\r\n\r\n", target);
	mask_exch_begin(x);
	r = mask_exch_request_head(x, head, strlen(head), "api.example.com", 443, true, why);
	mask_exch_free(x);
	return r;
}

/* s with its '/' as %2F (and, pct, its '%' as %25) into out. */
static void form_of(const char *s, bool pct, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *s != '\0' && n + 4 < outlen; s++)
		n += (size_t)snprintf(out + n, outlen - n, "%s",
				      *s == '/' ? "%2F" : (*s == '%' && pct) ? "%25" : (char[2]){*s, '\0'});
}

static void test_url_raw_forms(void)
{
	char sent[64], form[256], many[8192];
	struct mask_refusal why;
	policy_t *p = NULL;
	mask_table_t *t = NULL;
	int tries;

	/* A sentinel whose own escape reads "%25": about one in a hundred. */
	for (tries = 0; tries < 3000; tries++) {
		t = table_of(&p, sent, sizeof(sent));
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		if (strncmp(sent + UR_PCT, "%25", 3) == 0)
			break;
		if (tries == 0) {
			/* Any sentinel: as it is, and its '/' escaped with its
			 * '%' raw, refused; both escaped, swapped. */
			CU_ASSERT_EQUAL(judge(t, sent, &why), MASK_HEAD_REFUSED);
			CU_ASSERT_EQUAL(why.rule, MASK_RULE_URL_RAW);
			form_of(sent, false, form, sizeof(form));
			CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_REFUSED);
			CU_ASSERT_EQUAL(why.rule, MASK_RULE_URL_RAW);
			form_of(sent, true, form, sizeof(form));
			CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
		}
		mask_table_free(t);
		policy_free(p);
		t = NULL;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* Its "%25" raw: read as an escaped '%' the rest does not match,
	 * read as three bytes it does: refused. */
	form_of(sent, false, form, sizeof(form));
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_REFUSED);
	CU_ASSERT_EQUAL(why.rule, MASK_RULE_URL_RAW);
	CU_ASSERT_EQUAL(judge(t, sent, &why), MASK_HEAD_REFUSED);
	/* "%2525": its '%' escaped, swapped. */
	form_of(sent, true, form, sizeof(form));
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
	/* 300 starts that each branch at the "%25": past the bound,
	 * refused (the target is absurd), in bounded time. */
	for (int i = 0; i < 300; i++)
		memcpy(many + (size_t)i * (UR_PCT + 3), sent, UR_PCT + 3);
	many[300 * (UR_PCT + 3)] = '\0';
	CU_ASSERT_EQUAL(judge(t, many, &why), MASK_HEAD_REFUSED);
	mask_table_free(t);
	policy_free(p);
}

/*
 * review46p: a raw '%' in the target within two bytes before a sentinel
 * (in any of its forms): swapped, the real value's first bytes complete
 * the escape ("%" + "4f..." or "%4" + "a..."), the server decodes it and
 * an echo hands back the value with its first byte or two as one byte,
 * which says what they were. No %XX in the value is needed: every value
 * beginning with a hex digit (a hex key). Also a value ending in '%' or
 * '%' and a hex digit: the target's next bytes complete its escape.
 */
static void test_url_pct_before(void)
{
	static const char *const before[] = {"%", "%4", "%%", "%2F%", "%A"};
	char sent[64], form[256];
	struct mask_refusal why;
	policy_t *p = NULL;
	mask_table_t *t;

	t = table_with(&p, "4fe1c0d9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3", sent, sizeof(sent));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t k = 0; k < sizeof(before) / sizeof(before[0]); k++) {
		snprintf(form, sizeof(form), "%s%s", before[k], sent);
		CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_REFUSED);
		/* in a percent form (its first byte raw) too */
		snprintf(form, sizeof(form), "%s%s&z=%%2F", before[k], sent);
		CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_REFUSED);
	}
	/* an escape ending before it, or a '%' further back: swapped */
	snprintf(form, sizeof(form), "%%2F%s", sent);
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
	snprintf(form, sizeof(form), "%%25a%s", sent);
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
	snprintf(form, sizeof(form), "a%%25%s", sent);
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
	CU_ASSERT_EQUAL(judge(t, sent, &why), MASK_HEAD_OK);
	mask_table_free(t);
	policy_free(p);
	/* a value ending in "%4": the target's "A" after it */
	t = table_with(&p, "Ab3dEf5hIj7lMn9pQr2tUv4xYz6bCd8Ef%4", sent, sizeof(sent));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	snprintf(form, sizeof(form), "%sA", sent);
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_REFUSED);
	form_of(sent, true, form, sizeof(form));
	CU_ASSERT_EQUAL(judge(t, form, &why), MASK_HEAD_OK);
	mask_table_free(t);
	policy_free(p);
}

TEST_REGISTRAR(register_mask_urlraw)
{
	CU_pSuite s = test_suite("mask_urlraw", NULL, NULL);

	test_add(s, "round 46: a %XX value's sentinel in a target, its '%' raw in any percent form: refused",
		 test_url_raw_forms);
	test_add(s, "review46p: a raw '%' just before a sentinel, or a value ending in '%'/'%H': refused",
		 test_url_pct_before);
}

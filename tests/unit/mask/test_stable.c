/*
 * test_stable.c - stable sentinels (SPEC §4.1) through the public API:
 *  - the ledger's format (round trip, refusals with the line, the caps);
 *  - a stable table gives the same sentinel for the same key, name and
 *    value in two "sessions", another one when the value or the key
 *    changes; a per-session table a new one each time and records
 *    nothing;
 *  - with the ledger of an earlier session, the old sentinel is stale:
 *    in a header, the target (raw and percent-encoded, with escapes no
 *    encoder writes) and the user:password of Authorization: Basic, on
 *    the inject host and on any other, the head is refused with
 *    MASK_RULE_STALE; never remasked inbound; the current sentinel is
 *    still injected; a ledger entry too short to be a sentinel, or equal
 *    to a current sentinel, is no stale pattern.
 * The "real" values are synthetic; no assertion message contains one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "mask/mask.h"
#include "policy/policy.h"
#include "tests/support/masktab.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define ST_V1 "ghp_St4Bl6Ee8Nt2In1El3Ss5Vv7Aa9Ll0Uu2Ee4X"
#define ST_V2 "ghp_St4Bl6Ee8Nt2In1El3Ss5Vv7Aa9Ll0Uu2Ee4Y"

static const unsigned char key1[MASK_KEY_BYTES] = "stable-sentinel-test-key-one-32";
static const unsigned char key2[MASK_KEY_BYTES] = "stable-sentinel-test-key-two-32";

static const char doc[] = "network:\n"
			  "  allowedDomains: [api.example.com, other.example.com]\n"
			  "credentials:\n"
			  "  envVars:\n"
			  "    - {name: PV_ST_TOK, mode: mask, injectHosts: [api.example.com],\n"
			  "       injectIn: [header, query]}\n";

/* A table over PV_ST_TOK=value: stable with key (and lg) or, key NULL,
 * per-session. Its sentinel into sent. NULL on failure. */
static mask_table_t *table_of(policy_t **p, const char *value, const unsigned char *key,
			      const mask_ledger_t *lg, char *sent, size_t sentlen)
{
	return test_mask_table_env(p, doc, sizeof(doc) - 1, "PV_ST_TOK", value,
				   key != NULL ? &(struct mask_stable){.key = key, .ledger = lg} : NULL, sent, sentlen);
}

static void test_ledger_format(void)
{
	char err[256], *text;
	size_t len;
	mask_ledger_t *lg, *lg2;
	const char *e;
	static const char ok[] = "# c\n\n656e763a41 616263 646566\n";

	/* Round trip; comments and empty lines skipped. */
	lg = mask_ledger_parse(ok, sizeof(ok) - 1, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(lg);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:A"), 2);
	e = mask_ledger_get(lg, "env:A", 1, &len);
	CU_ASSERT(e != NULL && len == 3 && memcmp(e, "def", 3) == 0);
	CU_ASSERT_PTR_NULL(mask_ledger_get(lg, "env:A", 2, &len));
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:B"), 0);
	text = mask_ledger_format(lg, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT(strstr(text, "\n656e763a41 616263 646566\n") != NULL);
	lg2 = mask_ledger_parse(text, len, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL(lg2);
	CU_ASSERT_EQUAL(mask_ledger_count(lg2, "env:A"), 2);
	free(text);
	mask_ledger_free(lg2);
	mask_ledger_free(lg);
	/* Refused: not hex, odd length, a NUL in a name; the line is named. */
	CU_ASSERT_PTR_NULL(mask_ledger_parse("656e763a41 61626\n", 17, err, sizeof(err)));
	CU_ASSERT(strstr(err, "line 1:") != NULL);
	CU_ASSERT_PTR_NULL(mask_ledger_parse("# x\n656e763a41 zz\n", 18, err, sizeof(err)));
	CU_ASSERT(strstr(err, "line 2:") != NULL);
	CU_ASSERT_PTR_NULL(mask_ledger_parse("6500 6161\n", 10, err, sizeof(err)));
	/* Empty is an empty ledger. */
	lg = mask_ledger_parse("", 0, err, sizeof(err));
	CU_ASSERT(lg != NULL && mask_ledger_names(lg) == 0);
	mask_ledger_free(lg);
}

/* Caps: MASK_LEDGER_PER_NAME sentinels per name (the oldest goes), and
 * MASK_LEDGER_NAMES names (the least recently used goes). */
static void test_ledger_caps(void)
{
	char *text = malloc(64 * (MASK_LEDGER_NAMES + 8)), err[128];
	size_t o = 0;
	mask_ledger_t *lg;
	size_t len;
	const char *e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	/* Name "env:A" with 6 sentinels "s0".."s5" (7330..7335). */
	o += (size_t)sprintf(text + o, "656e763a41");
	for (int i = 0; i < 6; i++)
		o += (size_t)sprintf(text + o, " 73%02x", '0' + i);
	text[o++] = '\n';
	/* Then MASK_LEDGER_NAMES more names: env:A is the least recent. */
	for (unsigned i = 0; i < MASK_LEDGER_NAMES; i++)
		o += (size_t)sprintf(text + o, "%08x 6161\n", i + 0x41414141u);
	lg = mask_ledger_parse(text, o, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(lg);
	CU_ASSERT_EQUAL(mask_ledger_names(lg), MASK_LEDGER_NAMES);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:A"), 0);
	mask_ledger_free(lg);
	/* Only the first line: the 4 newest of the 6. */
	o = strchr(text, '\n') - text + 1;
	lg = mask_ledger_parse(text, o, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(lg);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:A"), MASK_LEDGER_PER_NAME);
	e = mask_ledger_get(lg, "env:A", 0, &len);
	CU_ASSERT(e != NULL && len == 2 && e[1] == '2');
	mask_ledger_free(lg);
	free(text);
}

/* Same key, name and value: the same sentinel in two sessions; another
 * value or key: another one. Per-session: a new one each time, nothing
 * recorded. */
static void test_stable_derivation(void)
{
	char s1[64], s2[64], s3[64], s4[64], err[64];
	policy_t *p1, *p2, *p3, *p4;
	mask_table_t *t1 = table_of(&p1, ST_V1, key1, NULL, s1, sizeof(s1));
	mask_table_t *t2 = table_of(&p2, ST_V1, key1, NULL, s2, sizeof(s2));
	mask_table_t *t3 = table_of(&p3, ST_V2, key1, NULL, s3, sizeof(s3));
	mask_table_t *t4 = table_of(&p4, ST_V1, key2, NULL, s4, sizeof(s4));
	mask_ledger_t *lg = mask_ledger_parse("", 0, err, sizeof(err));
	const char *dname, *sent;
	size_t len;

	CU_ASSERT_FATAL(t1 != NULL && t2 != NULL && t3 != NULL && t4 != NULL && lg != NULL);
	CU_ASSERT(mask_table_stable(t1));
	CU_ASSERT_STRING_EQUAL(s1, s2);
	CU_ASSERT(strcmp(s1, s3) != 0 && strcmp(s1, s4) != 0);
	CU_ASSERT(strcmp(s1, ST_V1) != 0 && strncmp(s1, "ghp_", 4) == 0 && strlen(s1) == strlen(ST_V1));
	dname = mask_table_value_name(t1, 0, &sent, &len);
	CU_ASSERT(dname != NULL && strcmp(dname, "env:PV_ST_TOK") == 0);
	CU_ASSERT(len == strlen(s1) && memcmp(sent, s1, len) == 0);
	CU_ASSERT_EQUAL(mask_ledger_record(lg, t1), 0);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:PV_ST_TOK"), 1);
	mask_table_free(t1);
	mask_table_free(t2);
	mask_table_free(t3);
	mask_table_free(t4);
	policy_free(p1);
	policy_free(p2);
	policy_free(p3);
	policy_free(p4);
	/* Per-session. */
	t1 = table_of(&p1, ST_V1, NULL, NULL, s1, sizeof(s1));
	t2 = table_of(&p2, ST_V1, NULL, NULL, s2, sizeof(s2));
	CU_ASSERT_FATAL(t1 != NULL && t2 != NULL);
	CU_ASSERT(!mask_table_stable(t1));
	CU_ASSERT(strcmp(s1, s2) != 0);
	CU_ASSERT_EQUAL(mask_ledger_record(lg, t1), 0);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:PV_ST_TOK"), 1);
	mask_table_free(t1);
	mask_table_free(t2);
	policy_free(p1);
	policy_free(p2);
	mask_ledger_free(lg);
}

/* Runs one head through a fresh exchange; the result, why filled. */
static enum mask_head_result one_head(mask_table_t *t, const char *fmt, const char *a, const char *host,
				      struct mask_refusal *why)
{
	char head[1024];
	mask_exch_t *x = mask_exch_new(t);
	enum mask_head_result r;

	if (x == NULL)
		return MASK_HEAD_NOMEM;
	snprintf(head, sizeof(head), fmt, a, host);
	mask_exch_begin(x);
	r = mask_exch_request_head(x, head, strlen(head), host, 443, true, why);
	mask_exch_free(x);
	return r;
}

static void test_stale_refused(void)
{
	char old[64], cur[64], again[64], err[64], up[128], enc[192], pct[192];
	policy_t *p1, *p2, *p3;
	mask_ledger_t *lg = mask_ledger_parse("", 0, err, sizeof(err));
	mask_table_t *t1, *t2, *t3;
	struct mask_refusal why;
	static const char *const hosts[] = {"api.example.com", "other.example.com"};

	CU_ASSERT_PTR_NOT_NULL_FATAL(lg);
	/* Session 1 with the old value; its sentinel recorded. */
	t1 = table_of(&p1, ST_V1, key1, lg, old, sizeof(old));
	CU_ASSERT_FATAL(t1 != NULL);
	CU_ASSERT_EQUAL(mask_table_stale_count(t1), 0);
	CU_ASSERT_EQUAL(mask_ledger_record(lg, t1), 0);
	/* Session 2, same value: the same sentinel, nothing stale. */
	t3 = table_of(&p3, ST_V1, key1, lg, again, sizeof(again));
	CU_ASSERT_FATAL(t3 != NULL);
	CU_ASSERT_STRING_EQUAL(old, again);
	CU_ASSERT_EQUAL(mask_table_stale_count(t3), 0);
	/* Session 3, a new value: the old sentinel is stale. */
	t2 = table_of(&p2, ST_V2, key1, lg, cur, sizeof(cur));
	CU_ASSERT_FATAL(t2 != NULL);
	CU_ASSERT_EQUAL(mask_table_stale_count(t2), 1);
	CU_ASSERT(strcmp(old, cur) != 0);
	snprintf(up, sizeof(up), "x-access-token:%s", old);
	test_b64(up, strlen(up), enc);
	for (size_t k = 0; k < strlen(old); k++)
		snprintf(pct + 3 * k, 4, "%%%02x", (unsigned char)old[k]);
	for (size_t h = 0; h < 2; h++) {
		/* A header, on the inject host and any other. */
		memset(&why, 0, sizeof(why));
		CU_ASSERT_EQUAL(one_head(t2, "GET / HTTP/1.1\r\nX-Token: %s\r\nHost: %s\r\n\r\n", old, hosts[h], &why),
				MASK_HEAD_REFUSED);
		CU_ASSERT_EQUAL(why.rule, MASK_RULE_STALE);
		CU_ASSERT(why.cred != NULL && strcmp(why.cred, "PV_ST_TOK") == 0);
		CU_ASSERT(why.env);
		CU_ASSERT_EQUAL(why.where, MASK_WHERE_HEADER);
		/* git's user:password. */
		CU_ASSERT_EQUAL(one_head(t2, "GET / HTTP/1.1\r\nAuthorization: Basic %s\r\nHost: %s\r\n\r\n", enc,
					 hosts[h], &why),
				MASK_HEAD_REFUSED);
		CU_ASSERT_EQUAL(why.rule, MASK_RULE_STALE);
		/* The target, raw and with every byte escaped. */
		CU_ASSERT_EQUAL(one_head(t2, "GET /x?t=%s HTTP/1.1\r\nHost: %s\r\n\r\n", old, hosts[h], &why),
				MASK_HEAD_REFUSED);
		CU_ASSERT_EQUAL(why.rule, MASK_RULE_STALE);
		CU_ASSERT_EQUAL(why.where, MASK_WHERE_TARGET);
		CU_ASSERT_EQUAL(one_head(t2, "GET /x?t=%s HTTP/1.1\r\nHost: %s\r\n\r\n", pct, hosts[h], &why),
				MASK_HEAD_REFUSED);
		CU_ASSERT_EQUAL(why.rule, MASK_RULE_STALE);
	}
	/* The current sentinel still goes through to the inject host. */
	CU_ASSERT_EQUAL(one_head(t2, "GET / HTTP/1.1\r\nX-Token: %s\r\nHost: %s\r\n\r\n", cur, hosts[0], &why),
			MASK_HEAD_OK);
	/* Never inbound: a response carrying it is left alone. */
	{
		char resp[128];
		snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nX-Echo: %s\r\n\r\n", old);
		const char *rcred;
		mask_exch_t *x = mask_exch_new(t2);
		CU_ASSERT_FATAL(x != NULL);
		CU_ASSERT_EQUAL(mask_exch_response_head(x, resp, strlen(resp), &rcred), 0);
		CU_ASSERT(strstr(resp, old) != NULL);
		CU_ASSERT_EQUAL(mask_exch_remasked(x), 0);
		mask_exch_free(x);
	}
	/* The ledger now holds both; back to the old value, the new
	 * sentinel is the stale one and the old one works again. */
	CU_ASSERT_EQUAL(mask_ledger_record(lg, t2), 0);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:PV_ST_TOK"), 2);
	mask_table_free(t3);
	policy_free(p3);
	t3 = table_of(&p3, ST_V1, key1, lg, again, sizeof(again));
	CU_ASSERT_FATAL(t3 != NULL);
	CU_ASSERT_STRING_EQUAL(again, old);
	CU_ASSERT_EQUAL(mask_table_stale_count(t3), 1);
	CU_ASSERT_EQUAL(one_head(t3, "GET / HTTP/1.1\r\nX-Token: %s\r\nHost: %s\r\n\r\n", cur, hosts[1], &why),
			MASK_HEAD_REFUSED);
	CU_ASSERT_EQUAL(one_head(t3, "GET / HTTP/1.1\r\nX-Token: %s\r\nHost: %s\r\n\r\n", old, hosts[0], &why),
			MASK_HEAD_OK);
	mask_table_free(t1);
	mask_table_free(t2);
	mask_table_free(t3);
	policy_free(p1);
	policy_free(p2);
	policy_free(p3);
	mask_ledger_free(lg);
}

/* A ledger entry without a sentinel's entropy ("aa", which would refuse
 * every request holding it) is no stale pattern. */
static void test_stale_short_ignored(void)
{
	/* env:PV_ST_TOK -> "aa" and "0123456789" */
	static const char text[] = "656e763a50565f53545f544f4b 6161 30313233343536373839\n";
	char err[64], cur[64];
	mask_ledger_t *lg = mask_ledger_parse(text, sizeof(text) - 1, err, sizeof(err));
	policy_t *p;
	mask_table_t *t;
	struct mask_refusal why;

	CU_ASSERT_PTR_NOT_NULL_FATAL(lg);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:PV_ST_TOK"), 2);
	t = table_of(&p, ST_V1, key1, lg, cur, sizeof(cur));
	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT_EQUAL(mask_table_stale_count(t), 0);
	CU_ASSERT_EQUAL(one_head(t, "GET / HTTP/1.1\r\nX-A: %s aa\r\nHost: %s\r\n\r\n", "0123456789",
				 "other.example.com", &why),
			MASK_HEAD_OK);
	mask_table_free(t);
	policy_free(p);
	mask_ledger_free(lg);
}

TEST_REGISTRAR(register_mask_stable)
{
	CU_pSuite s = test_suite("mask_stable", NULL, NULL);

	test_add(s, "ledger: format round trip and refusals", test_ledger_format);
	test_add(s, "ledger: caps per name and on names", test_ledger_caps);
	test_add(s, "stable: same key, name, value -> same sentinel; per-session differs",
		 test_stable_derivation);
	test_add(s, "stale: refused in headers, Basic, target (escaped), any host", test_stale_refused);
	test_add(s, "stale: a ledger entry too short to be a sentinel is ignored",
		 test_stale_short_ignored);
}

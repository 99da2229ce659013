/*
 * test_leak.c - issue 13 class 7 in mask/: a real value on its way out is
 * found in every form the remask set knows (mask_table_find_real()), the
 * outbound sets count it and turn it into its sentinel's form, and
 * sentinels are found in a fully percent-decoded target
 * (mask_table_sentinels_decoded()). Public API only. The "real" values
 * are synthetic; no assertion message contains one.
 */
#include <ctype.h>
#include <errno.h>
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

/* mask_table_find_real_name(): a name's case is free, so a real value
 * with its case changed is found there (round 17), at the start, the end
 * or alone; the exact forms still are; a near miss is not; and
 * mask_table_find_real() itself stays exact. */
static void test_find_real_name(void)
{
	char low[sizeof(LK_TOK)], swap[sizeof(LK_TOK)], buf[256];
	struct lfx f;

	CU_ASSERT_FATAL(lfx_setup(&f) == 0);
	for (size_t i = 0; i < sizeof(LK_TOK); i++) {
		unsigned char c = (unsigned char)LK_TOK[i];

		low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		swap[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c >= 'a' && c <= 'z' ? c - 32 : c);
	}
	CU_ASSERT(mask_table_find_real(f.t, low, strlen(low)) == -1);
	for (int v = 0; v < 4; v++) {
		long c;

		if (v == 0)
			snprintf(buf, sizeof(buf), "%s.example.com", low);
		else if (v == 1)
			snprintf(buf, sizeof(buf), "a.%s", swap);
		else if (v == 2)
			snprintf(buf, sizeof(buf), "%s", swap);
		else
			snprintf(buf, sizeof(buf), "x.%s.y", LK_TOK);
		c = mask_table_find_real_name(f.t, buf, strlen(buf));
		CU_ASSERT(c >= 0 && strcmp(mask_table_cred_name(f.t, (size_t)c), "PV_LK_TOK") == 0);
	}
	/* one character off, and the value cut in its middle (round 49,
	 * attack49p: the value less up to 8 bytes at an end holds its core,
	 * 8..30 of these 38, and is found: an escape may take those bytes;
	 * shorter than any value, it was not looked for before) */
	snprintf(buf, sizeof(buf), "%s", low);
	buf[10] = buf[10] == 'x' ? 'y' : 'x';
	CU_ASSERT(mask_table_find_real_name(f.t, buf, strlen(buf)) == -1);
	CU_ASSERT(mask_table_find_real_name(f.t, low, 29) == -1);
	CU_ASSERT(mask_table_find_real_name(f.t, low + 9, strlen(low) - 9) == -1);
	CU_ASSERT(mask_table_find_real_name(f.t, low, strlen(low) - 1) >= 0);
	CU_ASSERT(mask_table_find_real_name(f.t, low + 8, strlen(low) - 16) >= 0);
	CU_ASSERT(mask_table_find_real_name(f.t, "api.example.com", 15) == -1);
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

/* ------------------------------------------------------------------ */
/* Forms encoders write (issue: three families the re-test found)      */
/* ------------------------------------------------------------------ */

/* A table of one credential PV_LK_X = value; NULL on failure. */
static mask_table_t *one_table(const char *value, policy_t **pp)
{
	static const char doc[] = "network:\n"
				  "  allowedDomains: [api.example.com]\n"
				  "credentials:\n"
				  "  envVars:\n"
				  "    - {name: PV_LK_X, mode: mask, injectHosts: [api.example.com]}\n";
	unsigned nerr = 0;
	char err[256];
	mask_table_t *t = NULL;

	setenv("PV_LK_X", value, 1);
	*pp = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	if (*pp != NULL)
		t = mask_table_new(*pp, err, sizeof(err));
	unsetenv("PV_LK_X");
	if (t != NULL && mask_table_value_count(t) != 1) {
		mask_table_free(t);
		t = NULL;
	}
	return t;
}

/* What the inbound set makes of in (NUL-terminated, malloc'd), or NULL. */
static char *remask(mask_table_t *t, const char *in, size_t len)
{
	struct evbuffer *out = evbuffer_new();
	char *r = NULL;
	size_t n;

	if (out != NULL && mask_replace_buf(mask_table_inbound_set(t), in, len, out, NULL, NULL) == 0 &&
	    (r = malloc((n = evbuffer_get_length(out)) + 1)) != NULL) {
		if (evbuffer_remove(out, r, n) != (int)n) {
			free(r);
			r = NULL;
		} else {
			r[n] = '\0';
		}
	}
	if (out != NULL)
		evbuffer_free(out);
	return r;
}

/*
 * s percent-encoded as an encoder writes it: letters, digits and the
 * bytes of keep as they are, a space as '+' when plus, every other byte
 * as %XX in upper- or lower-case hex. The cases below check it against
 * what the real encoders wrote.
 */
static void enc_pct(const char *s, const char *keep, bool plus, bool lower, char *out)
{
	const char *hex = lower ? "0123456789abcdef" : "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr(keep, c) != NULL) {
			*out++ = (char)c;
		} else if (plus && c == ' ') {
			*out++ = '+';
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	*out = '\0';
}

/*
 * Family 1 and 2: a value with many distinct optional bytes ('/', '+',
 * '=', ':', '@', '!', '*', '~', ';', ',', '$') and a space, as each
 * encoder writes it (the `want` strings are what Python 3.11, Node 20, Go
 * 1.19, Java 17 and curl 7.88 printed for it; PHP and .NET per their
 * documented safe sets). Each is re-masked on the way in into the same
 * encoding of the sentinel, and found on the way out
 * (mask_table_find_real()) as sent. Before, with more than four distinct
 * optional bytes only "none or all of them escaped" was known, and never
 * '+' for a space.
 */
#define EN_REAL "Pq7/Zx9+Wm3=Rt5:Yu1@Io8 Pa2!Sd4*Fg6~Hj0;Kl2,Mn4$Bv5"
static void test_pct_encoders(void)
{
	static const struct {
		const char *who, *keep;
		bool plus, lower;
		const char *want;
	} encs[] = {
		{ "Python quote()", "-._~/", false, false,
		  "Pq7/Zx9%2BWm3%3DRt5%3AYu1%40Io8%20Pa2%21Sd4%2AFg6~Hj0%3BKl2%2CMn4%24Bv5" },
		{ "Python quote(safe='')", "-._~", false, false,
		  "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8%20Pa2%21Sd4%2AFg6~Hj0%3BKl2%2CMn4%24Bv5" },
		{ "Python quote_plus(), Go QueryEscape, curl --data-urlencode, Ruby CGI.escape", "-._~", true,
		  false, "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8+Pa2%21Sd4%2AFg6~Hj0%3BKl2%2CMn4%24Bv5" },
		{ "JavaScript encodeURIComponent", "-._~!*'()", false, false,
		  "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8%20Pa2!Sd4*Fg6~Hj0%3BKl2%2CMn4%24Bv5" },
		{ "JavaScript encodeURI", "-._~!#$&'()*+,/:;=?@", false, false,
		  "Pq7/Zx9+Wm3=Rt5:Yu1@Io8%20Pa2!Sd4*Fg6~Hj0;Kl2,Mn4$Bv5" },
		{ "URLSearchParams, Java URLEncoder, Ruby encode_www_form_component", "-._*", true, false,
		  "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8+Pa2%21Sd4*Fg6%7EHj0%3BKl2%2CMn4%24Bv5" },
		{ "Go PathEscape", "-._~$&+:=@", false, false,
		  "Pq7%2FZx9+Wm3=Rt5:Yu1@Io8%20Pa2%21Sd4%2AFg6~Hj0%3BKl2%2CMn4$Bv5" },
		{ "PHP urlencode", "-._", true, false,
		  "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8+Pa2%21Sd4%2AFg6%7EHj0%3BKl2%2CMn4%24Bv5" },
		{ ".NET WebUtility.UrlEncode", "-._!*()", true, false,
		  "Pq7%2FZx9%2BWm3%3DRt5%3AYu1%40Io8+Pa2!Sd4*Fg6%7EHj0%3BKl2%2CMn4%24Bv5" },
		{ ".NET HttpUtility.UrlEncode", "-._!*()", true, true,
		  "Pq7%2fZx9%2bWm3%3dRt5%3aYu1%40Io8+Pa2!Sd4*Fg6%7eHj0%3bKl2%2cMn4%24Bv5" },
	};
	char sent[sizeof(EN_REAL)], want_s[3 * sizeof(EN_REAL)], in[4 * sizeof(EN_REAL)], *got;
	mask_table_t *t;
	policy_t *p;

	t = one_table(EN_REAL, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(mask_set_equal_len(mask_table_inbound_set(t)));
	got = remask(t, EN_REAL, strlen(EN_REAL));
	CU_ASSERT_FATAL(got != NULL && strlen(got) == strlen(EN_REAL) && strcmp(got, EN_REAL) != 0);
	memcpy(sent, got, sizeof(sent));
	free(got);
	for (size_t k = 0; k < ARRAY_LEN(encs); k++) {
		bool ok;

		/* the test's encoder writes what the real one wrote */
		enc_pct(EN_REAL, encs[k].keep, encs[k].plus, encs[k].lower, in);
		CU_ASSERT(strcmp(in, encs[k].want) == 0);
		/* inbound: the same encoding of the sentinel, same length */
		enc_pct(sent, encs[k].keep, encs[k].plus, encs[k].lower, want_s);
		snprintf(in, sizeof(in), "k=%s&x=1", encs[k].want);
		got = remask(t, in, strlen(in));
		ok = got != NULL && strlen(got) == strlen(in) && strncmp(got, "k=", 2) == 0 &&
		     strncmp(got + 2, want_s, strlen(want_s)) == 0 && strcmp(got + 2 + strlen(want_s), "&x=1") == 0;
		if (!ok)
			printf("\n    %s form: not re-masked into the sentinel's form\n", encs[k].who);
		CU_ASSERT(ok);
		free(got);
		/* outbound: refused as sent */
		snprintf(in, sizeof(in), "/x?k=%s", encs[k].want);
		if (mask_table_find_real(t, in, strlen(in)) < 0)
			printf("\n    %s form: not found on its way out\n", encs[k].who);
		CU_ASSERT(mask_table_find_real(t, in, strlen(in)) >= 0);
	}
	mask_table_free(t);
	policy_free(p);
}

/*
 * Family 2: '+' for a space (application/x-www-form-urlencoded) in a
 * value with few escapable bytes (every mix of them is a form): re-masked
 * and refused as quote_plus() writes it; a request target spelled any way
 * a server decodes ('+' and %XX mixed) is refused too.
 */
#define SP_REAL "Tr0ub4dor horse Battery staple 42xQ"
static void test_plus_space(void)
{
	static const char plus[] = "Tr0ub4dor+horse+Battery+staple+42xQ";
	static const char mixed[] = "/s?q=%54r0ub4dor+horse%20Battery+staple+42x%51";
	char sent[sizeof(SP_REAL)], want[sizeof(SP_REAL)], *got;
	struct mask_outbound ob;
	uint64_t *counts;
	char body[64];
	size_t total = 0;
	mask_table_t *t;
	policy_t *p;

	t = one_table(SP_REAL, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	got = remask(t, SP_REAL, strlen(SP_REAL));
	CU_ASSERT_FATAL(got != NULL && strlen(got) == strlen(SP_REAL) && strcmp(got, SP_REAL) != 0);
	memcpy(sent, got, sizeof(sent));
	free(got);
	enc_pct(sent, "-._~", true, false, want);
	got = remask(t, plus, strlen(plus));
	if (got == NULL || strcmp(got, want) != 0)
		printf("\n    '+' for a space: not re-masked into the sentinel's form\n");
	CU_ASSERT(got != NULL && strcmp(got, want) == 0);
	free(got);
	CU_ASSERT(mask_table_find_real(t, plus, strlen(plus)) >= 0);
	if (mask_table_find_real(t, mixed, strlen(mixed)) < 0)
		printf("\n    '+' and %%XX mixed in a target: not found\n");
	CU_ASSERT(mask_table_find_real(t, mixed, strlen(mixed)) >= 0);
	/* an outbound body set counts it (the request is refused) */
	CU_ASSERT_FATAL(mask_table_outbound(t, "other.example.com", 443, true, INJECT_BODY, &ob) == 0);
	CU_ASSERT(mask_set_equal_len(ob.set));
	counts = calloc(mask_set_npairs(ob.set), sizeof(*counts));
	CU_ASSERT_FATAL(counts != NULL);
	snprintf(body, sizeof(body), "a=%s", plus);
	CU_ASSERT(mask_replace_inplace(ob.set, body, strlen(body), counts, &total) == 0);
	CU_ASSERT(total == 1 && strstr(body, plus) == NULL);
	free(counts);
	mask_table_free(t);
	policy_free(p);
}

/* s with '\n' as nl, '\r' as cr, '/' as "\/" when slash, '+' as \u002B
 * when net: the JSON escapes these multi-line values need. */
static void json_like(const char *s, const char *nl, const char *cr, bool slash, bool net, char *out)
{
	for (; *s != '\0'; s++) {
		const char *e = *s == '\n' ? nl : *s == '\r' ? cr : slash && *s == '/' ? "\\/" :
				net && *s == '+' ? "\\u002B" : NULL;

		if (e == NULL) {
			*out++ = *s;
		} else {
			memcpy(out, e, strlen(e));
			out += strlen(e);
		}
	}
	*out = '\0';
}

/*
 * Family 3: a multi-line value echoed in JSON with every control byte as
 * \u00xx (lower and upper hex), and with its line ends turned into CRLF,
 * raw and in each JSON style ("\r\n", "\u000d\u000a", PHP's, .NET's); a
 * CRLF value read back with LF line ends. Each is re-masked into the same
 * form of the sentinel and refused on the way out.
 */
#define ML2_REAL "AbC1dEf2/Gh+Ij3=kLm\nKl4mNo5pQr6sTu\nSt7uVw8xYz9aBc\n"
#define CR_REAL "Zy9XwV8u/Ts+7Rq\r\nPo6NmL5kJi4\r\nHg3FeD2c\r\n"
static void test_json_lines(void)
{
	static const struct {
		const char *what, *nl, *cr;
		bool crlf, slash, net;
	} forms[] = {
		{ "\\u000a", "\\u000a", "\\u000d", false, false, false },
		{ "\\u000A", "\\u000A", "\\u000D", false, false, false },
		{ "CRLF raw", "\n", "\r", true, false, false },
		{ "CRLF as \\r\\n", "\\n", "\\r", true, false, false },
		{ "CRLF as \\r\\n, PHP", "\\n", "\\r", true, true, false },
		{ "CRLF as \\r\\n, .NET", "\\n", "\\r", true, false, true },
		{ "CRLF as \\u000d\\u000a", "\\u000a", "\\u000d", true, false, false },
		{ "CRLF as \\u000D\\u000A", "\\u000A", "\\u000D", true, false, false },
	};
	char sent[sizeof(ML2_REAL)], lines[2 * sizeof(ML2_REAL)], in[8 * sizeof(ML2_REAL)];
	char want[8 * sizeof(ML2_REAL)], *got;
	mask_table_t *t;
	policy_t *p;

	t = one_table(ML2_REAL, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(mask_set_equal_len(mask_table_inbound_set(t)));
	got = remask(t, ML2_REAL, strlen(ML2_REAL));
	CU_ASSERT_FATAL(got != NULL && strlen(got) == strlen(ML2_REAL) && strcmp(got, ML2_REAL) != 0);
	memcpy(sent, got, sizeof(sent));
	free(got);
	for (size_t k = 0; k < ARRAY_LEN(forms); k++) {
		const char *src = ML2_REAL;
		bool ok;

		if (forms[k].crlf) {
			json_like(ML2_REAL, "\r\n", "\r", false, false, lines);
			src = lines;
		}
		json_like(src, forms[k].nl, forms[k].cr, forms[k].slash, forms[k].net, in);
		if (forms[k].crlf)
			json_like(sent, "\r\n", "\r", false, false, lines);
		json_like(forms[k].crlf ? lines : sent, forms[k].nl, forms[k].cr, forms[k].slash, forms[k].net,
			  want);
		got = remask(t, in, strlen(in));
		ok = got != NULL && strcmp(got, want) == 0;
		if (!ok)
			printf("\n    %s: not re-masked into the sentinel's form\n", forms[k].what);
		CU_ASSERT(ok);
		free(got);
		if (mask_table_find_real(t, in, strlen(in)) < 0)
			printf("\n    %s: not found on its way out\n", forms[k].what);
		CU_ASSERT(mask_table_find_real(t, in, strlen(in)) >= 0);
	}
	mask_table_free(t);
	policy_free(p);

	/* A CRLF value read back with LF line ends, raw and as "\n". */
	t = one_table(CR_REAL, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	json_like(CR_REAL, "\n", "", false, false, in);
	CU_ASSERT(mask_table_find_real(t, in, strlen(in)) >= 0);
	json_like(CR_REAL, "\\n", "", false, false, in);
	CU_ASSERT(mask_table_find_real(t, in, strlen(in)) >= 0);
	got = remask(t, in, strlen(in));
	CU_ASSERT(got != NULL && strcmp(got, in) != 0 && strstr(got, "Po6NmL5kJi4") == NULL);
	free(got);
	mask_table_free(t);
	policy_free(p);
}

/*
 * A PEM key (over MASK_PCT_FULL_MAX, so only the encoders' percent forms)
 * posted from an HTML form: CRLF line ends, form-encoded as browsers and
 * URLSearchParams write it ('+' for a space, %0D%0A, '*' kept, '~'
 * escaped). Re-masked and refused.
 */
static void test_pem_form_post(void)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char pem[1600], crlf[1700], post[5200], want[5200], sent[1600], *got;
	size_t n = 0;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	mask_table_t *t;
	policy_t *p;

	n += (size_t)snprintf(pem, sizeof(pem), "-----BEGIN EC PRIVATE KEY-----\n");
	for (size_t i = 0; i < 1280; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		pem[n++] = b64[r % 64];
		if (i % 64 == 63)
			pem[n++] = '\n';
	}
	n += (size_t)snprintf(pem + n, sizeof(pem) - n, "-----END EC PRIVATE KEY-----\n");
	CU_ASSERT_FATAL(n > 1024 && n < sizeof(pem));
	t = one_table(pem, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	got = remask(t, pem, n);
	CU_ASSERT_FATAL(got != NULL && strlen(got) == n && strcmp(got, pem) != 0);
	memcpy(sent, got, n + 1);
	free(got);
	json_like(pem, "\r\n", "\r", false, false, crlf);
	enc_pct(crlf, "-._*", true, false, post);
	json_like(sent, "\r\n", "\r", false, false, crlf);
	enc_pct(crlf, "-._*", true, false, want);
	got = remask(t, post, strlen(post));
	if (got == NULL || strcmp(got, want) != 0)
		printf("\n    a PEM key posted from a form (CRLF, form-encoded): not re-masked\n");
	CU_ASSERT(got != NULL && strcmp(got, want) == 0);
	free(got);
	CU_ASSERT(mask_table_find_real(t, post, strlen(post)) >= 0);
	mask_table_free(t);
	policy_free(p);
}

/*
 * Review 40a: mask_table_find_real_remasked() skips the exact pass when
 * the head's remask replaced nothing (025dacb). Differential: over
 * random texts built from pieces of a value with '+', '&', ';' and '/'
 * (its raw form, its form_plus and form_split pieces, %XX bytes, JSON
 * escapes, case changes), after the remask in place, the search with
 * the skip finds a real value exactly when the full one does.
 */
static void test_remasked_skip_differential(void)
{
	static const char value[] = "Ab3+Xy9/Qw7&Zx5Kp2Lm8;Rt4Vn6Hj1+Ws0Ce";
	static const char *const bits[] = {"%2B", "%2b", "%2F", "%26", "%3B", "\\/", "\\u002b", " ", "+", "&", ";", "=",
					   "\r\n", "\"", "Ab3", "Lm8", "Ws0Ce", "x", "-", "."};
	policy_t *p = NULL;
	mask_table_t *t = one_table(value, &p);
	unsigned seed = 40;
	size_t vlen = sizeof(value) - 1, ndiff = 0, nskip = 0, nfound = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (int it = 0; it < 20000; it++) {
		char buf[512];
		size_t n = 0, total = 0;
		long a, b;

		while (n < 80) {
			unsigned r = (unsigned)rand_r(&seed) % 24;

			if (r == 0 && n + vlen < sizeof(buf)) {
				/* the value, a slice of it, or with a few bytes changed */
				size_t from = (size_t)rand_r(&seed) % 4 == 0 ? (size_t)rand_r(&seed) % vlen : 0;
				size_t to = (size_t)rand_r(&seed) % 4 == 0 ? from + (size_t)rand_r(&seed) % (vlen - from + 1) : vlen;

				for (size_t k = from; k < to; k++) {
					char ch = value[k];

					if (rand_r(&seed) % 16 == 0)
						ch = ch == '+' ? ' ' : (char)toupper((unsigned char)ch);
					buf[n++] = ch;
				}
			} else if (r < 18) {
				const char *bt = bits[(size_t)rand_r(&seed) % (sizeof(bits) / sizeof(bits[0]))];
				size_t bl = strlen(bt);

				if (n + bl >= sizeof(buf))
					break;
				memcpy(buf + n, bt, bl);
				n += bl;
			} else {
				buf[n++] = value[(size_t)rand_r(&seed) % vlen];
			}
		}
		CU_ASSERT_FATAL(mask_replace_inplace(mask_table_inbound_set(t), buf, n, NULL, &total) == 0);
		errno = 0;
		a = mask_table_find_real_name(t, buf, n);
		b = mask_table_find_real_remasked(t, buf, n, total);
		if ((a < 0) != (b < 0))
			ndiff++;
		nskip += total == 0;
		nfound += total == 0 && a >= 0;
		explicit_bzero(buf, sizeof(buf));
	}
	if (ndiff != 0)
		printf("\n    %zu texts where skipping the exact pass changed the answer\n", ndiff);
	CU_ASSERT_EQUAL(ndiff, 0);
	/* Both kinds were tried: texts with nothing replaced, and among
	 * them some where a later pass (%XX, '+', case) finds a value. */
	CU_ASSERT(nskip > 1000 && nfound > 20);
	mask_table_free(t);
	policy_free(p);
}

TEST_REGISTRAR(register_mask_leak)
{
	CU_pSuite s = test_suite("mask_leak", NULL, NULL);

	test_add(s, "real values found in every form, raw and fully %-decoded", test_find_real);
	test_add(s, "a real value with its case changed is found in a name", test_find_real_name);
	test_add(s, "outbound sets: real-value forms become sentinel forms, counted", test_outbound_forms);
	test_add(s, "sentinels found in a fully %-decoded target", test_sentinels_decoded);
	test_add(s, "real values found in the JSON forms of JavaScript, Python, PHP and Go", test_json_forms);
	test_add(s, "a value with many escapable bytes re-masked as encoders write it (by byte value)",
		 test_pct_by_byte);
	test_add(s, "five and more optional bytes and a space: each encoder's form (quote, quote_plus, ...)",
		 test_pct_encoders);
	test_add(s, "'+' for a space: re-masked and refused, also mixed with %XX", test_plus_space);
	test_add(s, "multi-line values: \\u000a JSON escapes, CRLF line ends raw and in JSON", test_json_lines);
	test_add(s, "a PEM key posted from an HTML form (CRLF, form-encoded)", test_pem_form_post);
	test_add(s, "a head's search skips its exact pass only when that changes nothing (differential)",
		 test_remasked_skip_differential);
}

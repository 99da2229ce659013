/*
 * test_sentinel.c - mask/sentinel.c: sentinel shape, entropy refusal and
 * the uniformity of the random draw (SPEC §4.1).
 *
 * Includes the source to reach pool_uniform(). Values in these tests are
 * synthetic; failure messages name positions and classes, never bytes of
 * a value.
 */
#include "../../../mask/sentinel.c"

#include "../../support/testlib.h"

#include <stdio.h>
#include <stdlib.h>

/* Character class of a byte: 'l', 'u', 'd' or 'p' (kept as is). */
static char cls(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return 'l';
	if (c >= 'A' && c <= 'Z')
		return 'u';
	if (c >= '0' && c <= '9')
		return 'd';
	return 'p';
}

/* A random value of len bytes drawn from alphabet (test data only). */
static void rand_value(char *out, size_t len, const char *alphabet)
{
	size_t n = strlen(alphabet);

	for (size_t i = 0; i < len; i++)
		out[i] = alphabet[(size_t)rand() % n];
}

/* Checks the §4.1 shape of s against v; reports the first bad position. */
static void check_shape(const char *v, const char *s, size_t len)
{
	size_t pre = policy_token_prefix_len(v, len);
	size_t same_random = 0, nrandom = 0;

	CU_ASSERT_EQUAL(memcmp(s, v, pre), 0);
	for (size_t i = pre; i < len; i++) {
		char cv = cls((unsigned char)v[i]), cs = cls((unsigned char)s[i]);
		if (cv != cs) {
			char msg[128];
			snprintf(msg, sizeof(msg), "class changed at position %zu (%c -> %c)", i, cv, cs);
			CU_FAIL(msg);
			return;
		}
		if (cv == 'p') {
			CU_ASSERT_EQUAL(s[i], v[i]);
		} else {
			nrandom++;
			same_random += s[i] == v[i];
		}
	}
	/* About 1 in 10 to 1 in 26 positions agree by chance; all of them
	 * agreeing would mean nothing was drawn. */
	CU_ASSERT(nrandom == 0 || same_random < nrandom);
	CU_ASSERT_NOT_EQUAL(memcmp(s, v, len), 0);
}

static void test_shape_many(void)
{
	static const char *const shapes[] = {
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
		"abcdef0123456789",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
		"0123456789",
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~/+=:'\"\n \xc3\xa9",
	};
	static const char *const prefixes[] = { "", "ghp_", "github_pat_", "sk-ant-api03-", "AKIA", "xoxb-", "sk-" };
	char v[200], s[200];

	srand(12345);
	for (int iter = 0; iter < 2000; iter++) {
		const char *pre = prefixes[iter % ARRAY_LEN(prefixes)];
		const char *alpha = shapes[(iter / 7) % ARRAY_LEN(shapes)];
		size_t plen = strlen(pre);
		size_t len = plen + 30 + (size_t)rand() % 100;

		memcpy(v, pre, plen);
		rand_value(v + plen, len - plen, alpha);
		if (policy_sentinel_bits(v, len) < POLICY_MIN_SENTINEL_BITS)
			continue; /* mostly punctuation: refused, checked below */
		CU_ASSERT_EQUAL_FATAL(mask_sentinel_make(v, len, s), MASK_SENTINEL_OK);
		CU_ASSERT(policy_token_prefix_len(v, len) >= plen);
		check_shape(v, s, len);
	}
}

static void test_prefix_kept(void)
{
	const char *v = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
	size_t len = strlen(v);
	char s[64], s2[64];

	CU_ASSERT_EQUAL_FATAL(mask_sentinel_make(v, len, s), MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL(memcmp(s, "ghp_", 4), 0);
	check_shape(v, s, len);
	/* Two draws for the same value differ (per session, distinct). */
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_make(v, len, s2), MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s, s2, len), 0);
	/* A punctuation-heavy AWS-style secret keeps its '/' and '+'. */
	v = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY+a";
	len = strlen(v);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_make(v, len, s), MASK_SENTINEL_OK);
	check_shape(v, s, len);
	CU_ASSERT_EQUAL(s[13], '/');
	CU_ASSERT_EQUAL(s[len - 2], '+');
}

/* Longest refused and shortest accepted length for a value made of one
 * character class, after a prefix. */
static void boundary(const char *prefix, char c, size_t want_min)
{
	char v[128], s[128];
	size_t plen = strlen(prefix);
	size_t first_ok = 0;

	memcpy(v, prefix, plen);
	for (size_t n = 1; n < 60; n++) {
		enum mask_sentinel_result r;
		memset(v + plen, c, n);
		r = mask_sentinel_make(v, plen + n, s);
		if (r == MASK_SENTINEL_OK) {
			if (first_ok == 0)
				first_ok = n;
		} else {
			CU_ASSERT_EQUAL(r, MASK_SENTINEL_TOO_SHORT);
			/* Refused below the boundary only: monotonic. */
			CU_ASSERT_EQUAL(first_ok, 0);
		}
	}
	CU_ASSERT_EQUAL(first_ok, want_min);
}

static void test_entropy_boundary(void)
{
	char s[16];

	/* Digits: 3.3219 bits each -> 19 give 63, 20 give 66. */
	boundary("", '7', 20);
	/* Letters: 4.7004 bits each -> 13 give 61, 14 give 65. */
	boundary("", 'q', 14);
	boundary("", 'Q', 14);
	/* The prefix carries nothing: ghp_ + 14 letters. */
	boundary("ghp_", 'x', 14);
	/* Punctuation carries nothing. */
	boundary("-.-.-/+:", 'z', 14);
	/* Mixed: 8 letters (37.6) + 8 digits (26.6) = 64.2 -> 64: accepted;
	 * 8 letters + 7 digits = 60.9: refused. */
	CU_ASSERT_EQUAL(mask_sentinel_make("abcdefgh01234567", 16, s), MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL(mask_sentinel_make("abcdefgh0123456", 15, s), MASK_SENTINEL_TOO_SHORT);
	/* The 6-character secret of the issue. */
	CU_ASSERT_EQUAL(mask_sentinel_make("hunter", 6, s), MASK_SENTINEL_TOO_SHORT);
	CU_ASSERT_EQUAL(mask_sentinel_make("", 0, s), MASK_SENTINEL_TOO_SHORT);
	CU_ASSERT_STRING_EQUAL(mask_sentinel_strerror(MASK_SENTINEL_TOO_SHORT),
			       "too short to mask; use mode: deny");
}

/* Chi-square of counts over n cells against a uniform expectation. */
static double chi2(const unsigned long *count, unsigned n, unsigned long total)
{
	double e = (double)total / n, x = 0;

	for (unsigned i = 0; i < n; i++)
		x += ((double)count[i] - e) * ((double)count[i] - e) / e;
	return x;
}

static void test_uniformity(void)
{
	struct rnd_pool rp = { .pos = sizeof(rp.b) };
	unsigned long c10[10] = { 0 }, c26[26] = { 0 }, pos26[26] = { 0 };
	const unsigned long draws = 200000;
	char v[41], s[41];

	for (unsigned long i = 0; i < draws; i++) {
		unsigned r;
		CU_ASSERT_EQUAL_FATAL(pool_uniform(&rp, 10, &r), 0);
		CU_ASSERT_FATAL(r < 10);
		c10[r]++;
		CU_ASSERT_EQUAL_FATAL(pool_uniform(&rp, 26, &r), 0);
		CU_ASSERT_FATAL(r < 26);
		c26[r]++;
	}
	/* 9 and 25 degrees of freedom: the 99.99th percentiles are about
	 * 33.7 and 56.4; a modulo bias of 256 % 26 would give ~2000. */
	CU_ASSERT(chi2(c10, 10, draws) < 40.0);
	CU_ASSERT(chi2(c26, 26, draws) < 65.0);

	/* Through mask_sentinel_make: every lower-case letter shows up at a
	 * fixed position with about the same frequency. */
	memset(v, 'k', 40);
	v[40] = '\0';
	for (unsigned i = 0; i < 20000; i++) {
		CU_ASSERT_EQUAL_FATAL(mask_sentinel_make(v, 40, s), MASK_SENTINEL_OK);
		CU_ASSERT_FATAL(s[17] >= 'a' && s[17] <= 'z');
		pos26[s[17] - 'a']++;
	}
	CU_ASSERT(chi2(pos26, 26, 20000) < 65.0);
}

/* ------------------------------------------------------------------ */
/* Stable sentinels: mask_sentinel_derive()                              */
/* ------------------------------------------------------------------ */

static const unsigned char key_a[MASK_KEY_BYTES] = "0123456789abcdef0123456789abcde";
static const unsigned char key_b[MASK_KEY_BYTES] = "0123456789abcdef0123456789abcdf";

/* Same inputs, same sentinel; any input changed, another one. */
static void test_derive_deterministic(void)
{
	const char *v = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
	size_t n = strlen(v);
	char s1[64], s2[64], s3[64];

	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:GH_TOKEN", v, n, 0, s1), MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:GH_TOKEN", v, n, 0, s2), MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL(memcmp(s1, s2, n), 0);
	check_shape(v, s1, n);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, v, n), 0);
	/* The key, the name, the value, the attempt: each changes it. */
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_b, "env:GH_TOKEN", v, n, 0, s3), MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, s3, n), 0);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:GH_TOKEM", v, n, 0, s3), MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, s3, n), 0);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:GH_TOKEN", "ghp_16C7e42F292c6912E7710c838347Ae178B4b",
						  n, 0, s3), MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, s3, n), 0);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:GH_TOKEN", v, n, 1, s3), MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, s3, n), 0);
	/* A name/value boundary moved: "env:A" + "Bx..." vs "env:AB" + "x...". */
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:A", "Bxxxxxxxxxxxxxxxxxxxxx", 22, 0, s2),
			      MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, "env:AB", "xxxxxxxxxxxxxxxxxxxxx", 21, 0, s3),
			      MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s2 + 1, s3, 21), 0);
	/* Too short: refused as for a drawn one. */
	CU_ASSERT_EQUAL(mask_sentinel_derive(key_a, "env:X", "hunter", 6, 0, s3), MASK_SENTINEL_TOO_SHORT);
}

/* A derived sentinel keeps the shape rules over many random values, and
 * never equals the value. */
static void test_derive_shape_many(void)
{
	static const char *const alph[] = {"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
					   "0123456789", "aZ9-_./+=~"};
	char v[96], s[96], name[32];

	srand(7);
	for (unsigned i = 0; i < 2000; i++) {
		size_t len = 24 + (size_t)rand() % 64;
		rand_value(v, len, alph[i % 4]);
		if (i % 5 == 0)
			memcpy(v, "sk-ant-", 7);
		snprintf(name, sizeof(name), "env:V%u", i);
		enum mask_sentinel_result r = mask_sentinel_derive(key_a, name, v, len, 0, s);
		if (r == MASK_SENTINEL_TOO_SHORT)
			continue;
		CU_ASSERT_EQUAL_FATAL(r, MASK_SENTINEL_OK);
		check_shape(v, s, len);
		CU_ASSERT_NOT_EQUAL(memcmp(s, v, len), 0);
	}
}

/* At the entropy boundary (20 digits: 66.4 bits, accepted; 19: 63.1,
 * refused) the random part is still derived: two names differ. */
static void test_derive_bits(void)
{
	char s1[21], s2[21];

	CU_ASSERT_EQUAL(mask_sentinel_derive(key_a, "env:P", "01234567890123456789", 20, 0, s1),
			MASK_SENTINEL_OK);
	CU_ASSERT_EQUAL(mask_sentinel_derive(key_a, "env:Q", "01234567890123456789", 20, 0, s2),
			MASK_SENTINEL_OK);
	CU_ASSERT_NOT_EQUAL(memcmp(s1, s2, 20), 0);
	CU_ASSERT_EQUAL(mask_sentinel_derive(key_a, "env:P", "0123456789012345678", 19, 0, s1),
			MASK_SENTINEL_TOO_SHORT);
}

/* Over many names, each class position is uniform (chi-square): the keyed
 * stream feeds the same rejection sampling as the CSPRNG. */
static void test_derive_uniformity(void)
{
	unsigned long l26[26] = {0}, u26[26] = {0}, d10[10] = {0};
	const char *v = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789";
	size_t n = strlen(v);
	char s[64], name[32];

	for (unsigned i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "env:N%u", i);
		CU_ASSERT_EQUAL_FATAL(mask_sentinel_derive(key_a, name, v, n, 0, s), MASK_SENTINEL_OK);
		CU_ASSERT_FATAL(s[5] >= 'a' && s[5] <= 'z' && s[30] >= 'A' && s[30] <= 'Z' &&
				s[40] >= '0' && s[40] <= '9');
		l26[s[5] - 'a']++;
		u26[s[30] - 'A']++;
		d10[s[40] - '0']++;
	}
	CU_ASSERT(chi2(l26, 26, 20000) < 65.0);
	CU_ASSERT(chi2(u26, 26, 20000) < 65.0);
	CU_ASSERT(chi2(d10, 10, 20000) < 40.0);
}

TEST_REGISTRAR(register_mask_sentinel)
{
	CU_pSuite s = test_suite("mask_sentinel", NULL, NULL);

	test_add(s, "shape over many random values", test_shape_many);
	test_add(s, "known prefix and punctuation kept", test_prefix_kept);
	test_add(s, "entropy refusal at the boundary", test_entropy_boundary);
	test_add(s, "uniform draws (chi-square)", test_uniformity);
	test_add(s, "derived: same inputs same sentinel, any input changes it", test_derive_deterministic);
	test_add(s, "derived: shape rules and prefixes kept, never the value", test_derive_shape_many);
	test_add(s, "derived: the entropy boundary", test_derive_bits);
	test_add(s, "derived: uniform per class (chi-square)", test_derive_uniformity);
}

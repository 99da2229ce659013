/*
 * test_stream.c - mask/stream.c: the streaming multi-pattern substituter.
 *
 * Includes the source to reach its statics and its wipe hook. Every case
 * is checked against ref_replace(), a naive scan that states the
 * semantics of mask.h (streaming substitution) literally: at each position the longest `from`
 * (lowest index on equal strings) is replaced, else one byte is copied.
 *
 * Gap patterns (struct mask_pair gaps) are in the reference too:
 * ref_match() walks a pattern over the input skipping gap bytes by
 * stream.c's rule.
 *
 * Suites:
 *   mask_stream        table cases through every entry point and split
 *   mask_stream_prop   random sets, inputs and split points (seeded:
 *                      MASK_STREAM_SEED=N reproduces a run; the seed is
 *                      printed on failure)
 *   mask_stream_set    construction errors, hygiene, wiping, percent forms
 */
#define MASK_STREAM_TEST_HOOKS 1
#include "../../../mask/stream.c"

#include "../../support/testlib.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

/* A pattern set as the tests write it: NUL-terminated from/to strings. */
struct tpair {
	const char *from;
	const char *to;
};

#define MAXP 16

/* Failure with a formatted message (formatted only on failure). */
static void fail_msg(const char *file, unsigned line, const char *fmt, ...) PRINTF(3, 4);
static void fail_msg(const char *file, unsigned line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CU_assertImplementation(CU_FALSE, line, msg, file, "", CU_FALSE);
}
#define FAILF(...) fail_msg(__FILE__, __LINE__, __VA_ARGS__)

/* Growable byte string for expected outputs. */
struct bytes {
	unsigned char *p;
	size_t len, cap;
};

static void bytes_add(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (b->p == NULL)
			abort();
		b->cap = cap;
	}
	if (n != 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

/*
 * Input bytes a match of pattern pt at in[p] covers, 0 if none: its
 * bytes in order, and for a gap pattern gaps between them (CR, LF, a
 * backslash run and 'n' or 'r'; one before anything else ends it), at most
 * gap_budget(from_len) gap bytes. A match with gaps never starts on the
 * letter of an escape (in[p - 1] a backslash, in[p] 'n' or 'r').
 */
static size_t ref_match(const mask_set_t *set, const struct mask_pat *pt, const unsigned char *in,
			size_t len, size_t p)
{
	const unsigned char *f = set->bytes + pt->from_off;
	size_t i = p, j = 0, gaps = 0;

	while (j < pt->from_len) {
		unsigned char c;

		if (i >= len)
			return 0;
		c = in[i];
		if (j > 0 && pt->gaps && (c == '\r' || c == '\n')) {
			gaps++;
			i++;
		} else if (j > 0 && pt->gaps && c == '\\') {
			size_t r = 1;

			while (i + r < len && in[i + r] == '\\')
				r++;
			if (i + r >= len || !gap_letter(in[i + r]))
				return 0;
			gaps += r + 1;
			i += r + 1;
		} else {
			if (c != f[j])
				return 0;
			i++;
			j++;
			continue;
		}
		if (gaps > gap_budget(pt->from_len))
			return 0;
	}
	if (gaps != 0 && p > 0 && in[p - 1] == '\\' && gap_letter(in[p]))
		return 0;
	return i - p;
}

/*
 * The reference: naive leftmost-longest scan over the set's compiled
 * pattern list (pairs first, then percent forms, as stream.c orders
 * them; of equal `from` strings the lowest index only, with its gaps
 * flag). Longest means most input bytes covered; on a tie a match with
 * gaps before one without, then the longer pattern, then the lower
 * index. A match with gaps keeps them where they were. counts has
 * set->npairs entries and is incremented.
 */
static void ref_replace(const mask_set_t *set, const unsigned char *in, size_t len,
			struct bytes *out, uint64_t *counts)
{
	size_t p = 0;

	while (p < len) {
		size_t best = SIZE_MAX, best_len = 0;
		bool best_gapped = false;

		for (size_t k = 0; k < set->npats; k++) {
			const struct mask_pat *pt = &set->pat[k];
			size_t n = ref_match(set, pt, in, len, p);
			bool gapped = n != pt->from_len, dup = false;

			/* Equal `from` strings: the lowest index, gaps or not. */
			for (size_t e = 0; e < k && !dup; e++)
				dup = set->pat[e].from_len == pt->from_len &&
				      memcmp(set->bytes + set->pat[e].from_off, set->bytes + pt->from_off,
					     pt->from_len) == 0;
			if (n == 0 || dup)
				continue;
			if (best == SIZE_MAX || n > best_len ||
			    (n == best_len && gapped && !best_gapped) ||
			    (n == best_len && gapped == best_gapped &&
			     pt->from_len > set->pat[best].from_len)) {
				best = k;
				best_len = n;
				best_gapped = gapped;
			}
		}
		if (best == SIZE_MAX) {
			bytes_add(out, in + p, 1);
			p++;
			continue;
		}
		if (best_gapped) {
			const unsigned char *to = set->bytes + set->pat[best].to_off;
			size_t j = 0;

			for (size_t i = p; i < p + best_len; i++) {
				if (in[i] == '\\') {
					while (in[i + 1] == '\\')
						bytes_add(out, in + i++, 1);
					bytes_add(out, in + i, 2);
					i++;
				} else if (gap_byte(in[i])) {
					bytes_add(out, in + i, 1);
				} else {
					bytes_add(out, to + j++, 1);
				}
			}
		} else {
			bytes_add(out, set->bytes + set->pat[best].to_off, set->pat[best].to_len);
		}
		counts[set->pat[best].origin]++;
		p += best_len;
	}
}

/* tset_new() where pair i gets gaps when bit i of gapmask is set. */
static mask_set_t *tset_new_gaps(const struct tpair *tp, size_t n, unsigned flags, unsigned gapmask);

static mask_set_t *tset_new(const struct tpair *tp, size_t n, unsigned flags)
{
	return tset_new_gaps(tp, n, flags, 0);
}

static mask_set_t *tset_new_gaps(const struct tpair *tp, size_t n, unsigned flags, unsigned gapmask)
{
	struct mask_pair pairs[MAXP];
	enum mask_set_result res;
	mask_set_t *set;

	CU_ASSERT_FATAL(n <= MAXP);
	for (size_t i = 0; i < n; i++) {
		pairs[i].from = tp[i].from;
		pairs[i].from_len = strlen(tp[i].from);
		pairs[i].to = tp[i].to;
		pairs[i].to_len = strlen(tp[i].to);
		pairs[i].pct = MASK_PCT_ALL;
		pairs[i].gaps = (gapmask >> i & 1) != 0;
	}
	set = mask_set_new(pairs, n, flags | MASK_SET_NO_MLOCK, &res);
	if (set == NULL)
		FAILF("mask_set_new: %s", mask_set_strerror(res));
	return set;
}

static bool evbuf_equals(struct evbuffer *b, const void *p, size_t len)
{
	unsigned char *d;

	if (evbuffer_get_length(b) != len)
		return false;
	if (len == 0)
		return true;
	d = evbuffer_pullup(b, -1);
	return d != NULL && memcmp(d, p, len) == 0;
}

/* Printable rendering of a short byte string for failure messages. */
static const char *show(const void *p, size_t len, char *buf, size_t cap)
{
	const unsigned char *s = p;
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < cap; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			buf[o++] = (char)s[i];
		else
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", s[i]);
	}
	buf[o < cap ? o : cap - 1] = '\0';
	return buf;
}

/*
 * Feeds in through a fresh stream in the chunks given by cuts (sorted
 * offsets strictly inside (0, len)), with the pointer API or (by_buffer)
 * through an evbuffer made of separate chains. Checks the hold-back bound
 * after every call. Returns the output and fills counts; NULL on an API
 * failure (already reported).
 */
static struct evbuffer *run_stream(const mask_set_t *set, const unsigned char *in, size_t len,
				   const size_t *cuts, size_t ncuts, bool by_buffer,
				   uint64_t *counts)
{
	mask_stream_t *st = mask_stream_new(set);
	struct evbuffer *out = evbuffer_new(), *src = evbuffer_new();
	size_t prev = 0, maxhold = mask_set_holdmax(set);

	CU_ASSERT_FATAL(st != NULL && out != NULL && src != NULL);
	if (by_buffer) {
		/* One chain per chunk: moving through chain edges is the
		 * interesting part of feed_buffer. */
		for (size_t c = 0; c <= ncuts; c++) {
			size_t end = c < ncuts ? cuts[c] : len;
			struct evbuffer *piece = evbuffer_new();
			CU_ASSERT_FATAL(piece != NULL);
			CU_ASSERT_FATAL(evbuffer_add(piece, in + prev, end - prev) == 0);
			CU_ASSERT_FATAL(evbuffer_add_buffer(src, piece) == 0);
			evbuffer_free(piece);
			prev = end;
		}
		prev = 0;
	}
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : len;
		int rc;

		if (by_buffer)
			rc = mask_stream_feed_buffer(st, src, end - prev, out);
		else
			rc = mask_stream_feed(st, in + prev, end - prev, out);
		if (rc != 0) {
			FAILF("feed failed at chunk %zu", c);
			goto fail;
		}
		if (by_buffer && evbuffer_get_length(src) != len - end) {
			FAILF("feed_buffer drained %zu, not %zu", len - evbuffer_get_length(src), end);
			goto fail;
		}
		if (mask_stream_held(st) > maxhold) {
			FAILF("held %zu > holdmax %zu", mask_stream_held(st), maxhold);
			goto fail;
		}
		prev = end;
	}
	if (mask_stream_finish(st, out) != 0) {
		FAILF("finish failed");
		goto fail;
	}
	if (mask_stream_held(st) != 0)
		FAILF("held %zu after finish", mask_stream_held(st));
	for (size_t i = 0; i < set->npairs; i++)
		counts[i] = mask_stream_count(st, i);
	mask_stream_free(st);
	evbuffer_free(src);
	return out;
fail:
	mask_stream_free(st);
	evbuffer_free(src);
	evbuffer_free(out);
	return NULL;
}

/* Compares one run's output and counts with the reference. */
static bool same_result(struct evbuffer *got, const uint64_t *gc, const struct bytes *want,
			const uint64_t *wc, size_t npairs)
{
	if (got == NULL || !evbuf_equals(got, want->p, want->len))
		return false;
	for (size_t i = 0; i < npairs; i++)
		if (gc[i] != wc[i])
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* mask_stream: table cases                                             */
/* ------------------------------------------------------------------ */

struct tcase {
	const char *name;
	struct tpair p[4];
	size_t np;
	const char *in;
	const char *want;
	uint64_t counts[4];
};

static const struct tcase tcases[] = {
	{ "no match", { { "abc", "XYZ" } }, 1, "hello world", "hello world", { 0 } },
	{ "empty input", { { "abc", "XYZ" } }, 1, "", "", { 0 } },
	{ "whole input", { { "abc", "XYZ" } }, 1, "abc", "XYZ", { 1 } },
	{ "at start", { { "abc", "XYZ" } }, 1, "abc--", "XYZ--", { 1 } },
	{ "at end", { { "abc", "XYZ" } }, 1, "--abc", "--XYZ", { 1 } },
	{ "adjacent", { { "abc", "XYZ" } }, 1, "abcabcabc", "XYZXYZXYZ", { 3 } },
	{ "partial at end", { { "abc", "XYZ" } }, 1, "xxab", "xxab", { 0 } },
	{ "partial then match", { { "abc", "XYZ" } }, 1, "ababcab", "abXYZab", { 1 } },
	{ "repeated bytes aaab", { { "aaab", "WXYZ" } }, 1, "aaaaaab-aaab", "aaaWXYZ-WXYZ", { 2 } },
	{ "self-overlap non-overlapping", { { "aa", "XY" } }, 1, "aaaaa", "XYXYa", { 2 } },
	{ "overlap: leftmost wins", { { "bcd", "123" }, { "abc", "XYZ" } }, 2, "abcd", "XYZd",
	  { 0, 1 } },
	{ "overlap: later is leftmost", { { "abc", "XYZ" }, { "cde", "123" } }, 2, "abcde",
	  "XYZde", { 1, 0 } },
	{ "prefix: longest wins", { { "ab", "12" }, { "abcd", "WXYZ" } }, 2, "abcd abc ab",
	  "WXYZ 12c 12", { 2, 1 } },
	{ "prefix: longest wins either order", { { "abcd", "WXYZ" }, { "ab", "12" } }, 2,
	  "abcd abc ab", "WXYZ 12c 12", { 1, 2 } },
	{ "suffix inside a dead prefix", { { "abcd", "WXYZ" }, { "bc", "12" } }, 2, "abce",
	  "a12e", { 0, 1 } },
	{ "inner matches of a dead candidate", { { "0123456789X", "-" }, { "12", "a" },
	  { "45", "b" }, { "78", "c" } }, 4, "0123456789Y", "0a3b6c9Y", { 0, 1, 1, 1 } },
	{ "long candidate completes", { { "0123456789X", "-" }, { "12", "a" } }, 2,
	  "0123456789X12", "-a", { 1, 1 } },
	{ "duplicate from: lowest index", { { "ab", "11" }, { "ab", "22" } }, 2, "abab", "1111",
	  { 2, 0 } },
	{ "single byte patterns", { { "a", "b" }, { "b", "a" } }, 2, "abba", "baab", { 2, 2 } },
	{ "different lengths", { { "ab", "" }, { "c", "LONG" } }, 2, "xabcx", "xLONGx",
	  { 1, 1 } },
	{ "sentinel-like", { { "ghp_AAAABBBBCCCC", "ghp_realrealreal" } }, 1,
	  "Authorization: token ghp_AAAABBBBCCCC\r\nX: ghp_AAAABBBBCCC\r\n",
	  "Authorization: token ghp_realrealreal\r\nX: ghp_AAAABBBBCCC\r\n", { 1 } },
	{ "shared prefix", { { "ghp_aaaa", "1111" }, { "ghp_aaab", "2222" }, { "ghp_b", "333" } },
	  3, "ghp_aaabghp_aaaaghp_bghp_", "22221111333ghp_", { 1, 1, 1 } },
};

/* Runs one case through every entry point: one-shot, in place, stream in
 * one piece, 1-byte chunks, every two-chunk split, by buffer. */
static void check_case(const struct tcase *tc)
{
	mask_set_t *set = tset_new(tc->p, tc->np, 0);
	const unsigned char *in = (const unsigned char *)tc->in;
	size_t len = strlen(tc->in), wlen = strlen(tc->want);
	size_t cuts[256];
	uint64_t counts[4];
	struct evbuffer *out;
	struct bytes ref = { 0 };
	uint64_t rc[4] = { 0 };
	char b1[256], b2[256];

	CU_ASSERT_FATAL(set != NULL && len < 256);
	/* The reference agrees with the table: checks the test itself. */
	ref_replace(set, in, len, &ref, rc);
	if (ref.len != wlen || (wlen != 0 && memcmp(ref.p, tc->want, wlen) != 0) ||
	    memcmp(rc, tc->counts, tc->np * sizeof(rc[0])) != 0)
		FAILF("%s: reference gives \"%s\"", tc->name, show(ref.p, ref.len, b1, sizeof(b1)));

	/* one-shot */
	{
		uint64_t oc[4] = { 0 };
		size_t total = 99, want_total = 0;

		out = evbuffer_new();
		CU_ASSERT_FATAL(out != NULL);
		CU_ASSERT(mask_replace_buf(set, in, len, out, oc, &total) == 0);
		for (size_t i = 0; i < tc->np; i++)
			want_total += tc->counts[i];
		if (!evbuf_equals(out, tc->want, wlen) || total != want_total ||
		    memcmp(oc, tc->counts, tc->np * sizeof(oc[0])) != 0)
			FAILF("%s: replace_buf gives \"%s\"", tc->name,
			      show(evbuffer_pullup(out, -1), evbuffer_get_length(out), b2, sizeof(b2)));
		evbuffer_free(out);
	}
	/* in place, when lengths allow */
	if (set->equal_len) {
		unsigned char buf[256];

		memcpy(buf, in, len);
		CU_ASSERT(mask_replace_inplace(set, buf, len, NULL, NULL) == 0);
		if (len != wlen || memcmp(buf, tc->want, wlen) != 0)
			FAILF("%s: in place gives \"%s\"", tc->name, show(buf, len, b1, sizeof(b1)));
	} else {
		unsigned char buf[256];

		memcpy(buf, in, len);
		errno = 0;
		CU_ASSERT(mask_replace_inplace(set, buf, len, NULL, NULL) == -1 && errno == EINVAL);
		CU_ASSERT(memcmp(buf, in, len) == 0);
	}
	for (int by_buffer = 0; by_buffer <= 1; by_buffer++) {
		/* whole, then 1-byte chunks */
		out = run_stream(set, in, len, NULL, 0, by_buffer, counts);
		if (!same_result(out, counts, &ref, rc, tc->np))
			FAILF("%s: stream (buffer=%d) in one chunk", tc->name, by_buffer);
		evbuffer_free(out);
		for (size_t i = 1; i < len; i++)
			cuts[i - 1] = i;
		out = run_stream(set, in, len, cuts, len ? len - 1 : 0, by_buffer, counts);
		if (!same_result(out, counts, &ref, rc, tc->np))
			FAILF("%s: stream (buffer=%d) in 1-byte chunks", tc->name, by_buffer);
		evbuffer_free(out);
		/* every two-chunk split */
		for (size_t i = 1; i < len; i++) {
			cuts[0] = i;
			out = run_stream(set, in, len, cuts, 1, by_buffer, counts);
			if (!same_result(out, counts, &ref, rc, tc->np))
				FAILF("%s: stream (buffer=%d) split at %zu", tc->name, by_buffer, i);
			evbuffer_free(out);
		}
	}
	free(ref.p);
	mask_set_free(set);
}

static void test_table(void)
{
	for (size_t i = 0; i < ARRAY_LEN(tcases); i++)
		check_case(&tcases[i]);
}

/* A set with no pairs passes everything through and holds nothing. */
static void test_empty_set(void)
{
	enum mask_set_result res;
	mask_set_t *set = mask_set_new(NULL, 0, MASK_SET_NO_MLOCK, &res);
	mask_stream_t *st;
	struct evbuffer *out = evbuffer_new();

	CU_ASSERT_FATAL(set != NULL && out != NULL);
	CU_ASSERT(mask_set_maxlen(set) == 0);
	CU_ASSERT(mask_set_npairs(set) == 0);
	st = mask_stream_new(set);
	CU_ASSERT_FATAL(st != NULL);
	CU_ASSERT(mask_stream_feed(st, "abc", 3, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 0);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	CU_ASSERT(evbuf_equals(out, "abc", 3));
	CU_ASSERT(mask_stream_total(st) == 0);
	CU_ASSERT(mask_stream_count(st, 0) == 0);
	mask_stream_free(st);
	evbuffer_free(out);
	mask_set_free(set);
}

/* Hold-back, finish in the middle of a candidate, counters, reset, reuse
 * across messages, and a failed stream refusing further calls. */
static void test_lifecycle(void)
{
	static const struct tpair tp[] = { { "secret", "SENTNL" }, { "sec", "XYZ" } };
	mask_set_t *set = tset_new(tp, 2, 0);
	mask_stream_t *st;
	struct evbuffer *out = evbuffer_new(), *src = evbuffer_new();

	CU_ASSERT_FATAL(set != NULL && out != NULL && src != NULL);
	st = mask_stream_new(set);
	CU_ASSERT_FATAL(st != NULL);
	CU_ASSERT(mask_stream_feed(st, "a secr", 6, out) == 0);
	CU_ASSERT(evbuf_equals(out, "a ", 2)); /* "secr" may still become "secret" */
	CU_ASSERT(mask_stream_held(st) == 4);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	CU_ASSERT(evbuf_equals(out, "a XYZr", 6)); /* resolved as "sec" + "r" */
	CU_ASSERT(mask_stream_count(st, 1) == 1);
	CU_ASSERT(mask_stream_count(st, 0) == 0);
	CU_ASSERT(mask_stream_count(st, 7) == 0);
	/* next message on the same stream: nothing carried over */
	evbuffer_drain(out, evbuffer_get_length(out));
	CU_ASSERT(mask_stream_feed(st, "ret secret", 10, out) == 0);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	CU_ASSERT(evbuf_equals(out, "ret SENTNL", 10));
	CU_ASSERT(mask_stream_count(st, 0) == 1);
	CU_ASSERT(mask_stream_total(st) == 2);
	/* reset drops held bytes and counters */
	evbuffer_drain(out, evbuffer_get_length(out));
	CU_ASSERT(mask_stream_feed(st, "xsecre", 6, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 5);
	mask_stream_reset(st);
	CU_ASSERT(mask_stream_held(st) == 0);
	CU_ASSERT(mask_stream_total(st) == 0);
	CU_ASSERT(mask_stream_feed(st, "t", 1, out) == 0);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	CU_ASSERT(evbuf_equals(out, "xt", 2));
	/* feed_buffer argument checks, before anything is consumed */
	CU_ASSERT(evbuffer_add(src, "abc", 3) == 0);
	errno = 0;
	CU_ASSERT(mask_stream_feed_buffer(st, src, 4, out) == -1 && errno == EINVAL);
	mask_stream_reset(st);
	errno = 0;
	CU_ASSERT(mask_stream_feed_buffer(st, src, 1, src) == -1 && errno == EINVAL);
	/* a failed append (frozen output) fails the stream until reset */
	mask_stream_reset(st);
	evbuffer_drain(out, evbuffer_get_length(out));
	CU_ASSERT(evbuffer_freeze(out, 0) == 0);
	CU_ASSERT(mask_stream_feed(st, "abc", 3, out) == -1);
	CU_ASSERT(evbuffer_unfreeze(out, 0) == 0);
	CU_ASSERT(mask_stream_feed(st, "a", 1, out) == -1);
	CU_ASSERT(mask_stream_finish(st, out) == -1);
	mask_stream_reset(st);
	CU_ASSERT(mask_stream_feed_buffer(st, src, 3, out) == 0);
	CU_ASSERT(evbuffer_get_length(src) == 0);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	CU_ASSERT(evbuf_equals(out, "abc", 3));
	/* a failing replacement in the one-shot call reports it */
	CU_ASSERT(evbuffer_freeze(out, 0) == 0);
	CU_ASSERT(mask_replace_buf(set, "secret", 6, out, NULL, NULL) == -1);
	CU_ASSERT(evbuffer_unfreeze(out, 0) == 0);
	mask_stream_free(st);
	mask_stream_free(NULL);
	evbuffer_free(out);
	evbuffer_free(src);
	mask_set_free(set);
	mask_set_free(NULL);
}

/* A few MiB through 16 KiB chunks with sentinels straddling chunk edges,
 * both APIs, against the reference. */
static void test_large(void)
{
	static const struct tpair tp[] = {
		{ "ghp_Q7fK2mZp9LwX4rTb8NcVd1YhJ6sGe3Ua0Oi5", "ghp_realvalue00000000000000000000000000a" },
		{ "sk-proj-AbCdEfGh12345678", "sk-proj-zzzzzzzzzzzzzzzz" },
	};
	const size_t len = 3u << 20, chunk = 16384;
	mask_set_t *set = tset_new(tp, 2, 0);
	unsigned char *in = malloc(len);
	size_t ncuts = len / chunk, *cuts = calloc(ncuts, sizeof(*cuts));
	uint64_t x = 88172645463325252ull, rc[2] = { 0 }, counts[2];
	struct bytes ref = { 0 };

	CU_ASSERT_FATAL(set != NULL && in != NULL && cuts != NULL);
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		in[i] = (unsigned char)(' ' + x % 90);
	}
	/* plant sentinels across every chunk boundary, at varying offsets */
	for (size_t b = chunk, k = 0; b + 64 < len; b += chunk, k++) {
		const char *s = tp[k & 1].from;
		size_t sl = strlen(s);
		memcpy(in + b - (k % sl), s, sl);
	}
	for (size_t i = 0; i < ncuts; i++)
		cuts[i] = (i + 1) * chunk - (i + 1 == ncuts ? 1 : 0);
	ref_replace(set, in, len, &ref, rc);
	CU_ASSERT(rc[0] + rc[1] >= ncuts - 2);
	for (int by_buffer = 0; by_buffer <= 1; by_buffer++) {
		struct evbuffer *out = run_stream(set, in, len, cuts, ncuts - 1, by_buffer, counts);
		CU_ASSERT(same_result(out, counts, &ref, rc, 2));
		evbuffer_free(out);
	}
	free(ref.p);
	free(cuts);
	free(in);
	mask_set_free(set);
}

/*
 * The root-state skip has several implementations (Teddy nibble filter
 * on 32 or 16 lanes, memchr for one first byte, SSE2 compares for up to 16 first bytes, a
 * table past that); the CPU picks one, so force each in turn on sets with
 * 1, 5 and 24 distinct first bytes, over input dense in near misses.
 */
static void test_skip_paths(void)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEF";
	const size_t len = 20000;
	unsigned char from[24][6], to[24][6], *in = malloc(len);
	struct mask_pair pairs[24];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	static const size_t sizes[] = { 1, 5, 24 };

	CU_ASSERT_FATAL(in != NULL);
	for (size_t k = 0; k < 24; k++) {
		from[k][0] = (unsigned char)alpha[k];
		for (size_t j = 1; j < 6; j++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			from[k][j] = (unsigned char)alpha[(x >> 33) % 4];
			to[k][j] = (unsigned char)('0' + k % 10);
		}
		to[k][0] = '#';
		pairs[k] = (struct mask_pair){ .from = from[k], .from_len = 2 + k % 5, .to = to[k], .to_len = 2 + k % 5, .pct = MASK_PCT_ALL };
	}
	for (size_t i = 0; i < len; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		in[i] = (unsigned char)alpha[(x >> 33) % 26];
	}
	for (size_t si = 0; si < ARRAY_LEN(sizes); si++) {
		for (int mode = 0; mode < 3; mode++) {
			enum mask_set_result res;
			mask_set_t *set = mask_set_new(pairs, sizes[si], MASK_SET_NO_MLOCK, &res);
			struct bytes ref = { 0 };
			uint64_t rc[24] = { 0 }, counts[24];
			size_t cuts[64], ncuts = 0;
			struct evbuffer *out;

			CU_ASSERT_FATAL(set != NULL);
			CU_ASSERT(set->nfirst == sizes[si]);
#ifdef HAVE_TEDDY
			if (mode == 1)
				set->use_teddy = false;
			if (mode == 2) /* SSSE3 only, 16 lanes */
				set->use_teddy32 = false;
#else
			(void)mode;
#endif
			ref_replace(set, in, len, &ref, rc);
			for (size_t c = 1; c < 64; c++)
				cuts[ncuts++] = c * 311 + c % 7;
			out = run_stream(set, in, len, cuts, ncuts, false, counts);
			if (!same_result(out, counts, &ref, rc, sizes[si]))
				FAILF("skip paths: %zu first bytes, mode %d differ", sizes[si], mode);
			evbuffer_free(out);
			free(ref.p);
			mask_set_free(set);
		}
	}
	free(in);
}

/*
 * Line-broken forms (struct mask_pair gaps): base64 as GitHub's contents
 * API (JSON "\n" every 60 columns), PEM (LF) and MIME (CRLF) break it,
 * PHP's "\/", an escaped backslash. Each through one-shot, in place,
 * 1-byte chunks and every split, by pointer and by buffer, against the
 * reference, and the expected text where it is written out.
 */
struct gcase {
	const char *name;
	struct tpair p[3];
	size_t np;
	unsigned gapmask;
	const char *in;
	const char *want; /* NULL: the reference's answer only */
	uint64_t total;
};

#define B64V "Z2hwX3NlY3JldHNlY3JldHNlY3JldA" /* a value's base64 form, 30 bytes */
#define B64S "c2VudGluZWxzZW50aW5lbHNlbnRpbm" /* its sentinel's */

static const struct gcase gcases[] = {
	{ "JSON \\n breaks", { { B64V, B64S } }, 1, 1,
	  "{\"content\":\"Z2hwX3Nl\\nY3JldHNlY3\\nJldHNlY3JldA==\\n\"}",
	  "{\"content\":\"c2VudGlu\\nZWxzZW50aW\\n5lbHNlbnRpbm==\\n\"}", 1 },
	{ "JSON \\r\\n breaks", { { B64V, B64S } }, 1, 1, "x Z2hwX3NlY3JldHNl\\r\\nY3JldHNlY3JldA x",
	  "x c2VudGluZWxzZW50\\r\\naW5lbHNlbnRpbm x", 1 },
	{ "PEM LF and MIME CRLF", { { B64V, B64S } }, 1, 1,
	  "Z2hwX3NlY3Jl\ndHNlY3JldHNlY3JldA\nZ2hwX3NlY3JldHNl\r\nY3JldHNlY3JldA",
	  "c2VudGluZWxz\nZW50aW5lbHNlbnRpbm\nc2VudGluZWxzZW50\r\naW5lbHNlbnRpbm", 2 },
	{ "a break after the first byte", { { B64V, B64S } }, 1, 1, "Z\n2hwX3NlY3JldHNlY3JldHNlY3JldA",
	  "c\n2VudGluZWxzZW50aW5lbHNlbnRpbm", 1 },
	/* A backslash before anything but n or r is no break: PHP's "\/"
	 * stays out of scope (replacing the slash after it would write an
	 * escape JSON does not have). */
	{ "PHP's escaped slash is no break", { { "ab/cd+ef/gh", "xy/zw+vu/ts" } }, 1, 1,
	  "\"ab\\/cd+ef\\/gh\" ab/cd+ef/gh", "\"ab\\/cd+ef\\/gh\" xy/zw+vu/ts", 1 },
	{ "JSON in a JSON string: \\\\n is a break", { { "abcdefgh", "ABCDEFGH" } }, 1, 1,
	  "abcd\\\\nefgh abcd\\nefgh abcd\\\\xefgh", "ABCD\\\\nEFGH ABCD\\nEFGH abcd\\\\xefgh", 2 },
	{ "no match with gaps starts on an escape's letter", { { "nabcdefg", "NABCDEFG" } }, 1, 1,
	  "x\\nab\ncdefg nab\ncdefg", "x\\nab\ncdefg NAB\nCDEFG", 1 },
	{ "each pattern its own budget", { { "abcd", "WXYZ" },
	  { "0123456789012345678901234567890123456789012345678901234567890123",
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } }, 2, 3,
	  "a\n\n\n\nbcd a\n\n\n\n\nbcd", "W\n\n\n\nXYZ a\n\n\n\n\nbcd", 1 },
	{ "more breaks than the budget: left as is", { { B64V, B64S } }, 1, 1,
	  "Z2\nhw\nX3\nNl\nY3\nJldHNlY3JldHNlY3JldA", "Z2\nhw\nX3\nNl\nY3\nJldHNlY3JldHNlY3JldA", 0 },
	{ "a pair without gaps is found whole only", { { B64V, B64S } }, 1, 0,
	  "Z2hwX3NlY3Jl\ndHNlY3JldHNlY3JldA " B64V, "Z2hwX3NlY3Jl\ndHNlY3JldHNlY3JldA " B64S, 1 },
	/* The gap path only adds: the raw value right after a backslash that
	 * follows the start of a base64 form is still found. */
	{ "a raw value after a skipped backslash", { { "bnBtX2FiY2RlZmdo", "c2VudGluZWxzZW50" },
	  { "npm_abcdefghijkl", "npm_SENTINELSENT" } }, 2, 3, "bnBt\\npm_abcdefghijkl",
	  "bnBt\\npm_SENTINELSENT", 1 },
	{ "breaks around and between matches", { { B64V, B64S }, { "QUJDREVGR0hJSktM", "TU5PUFFSU1RVVldY" } },
	  2, 3, "\n\nZ2hwX3NlY3JldHNlY3Jl\ndHNlY3JldA\nQUJDREVG\r\nR0hJSktM\n\n", NULL, 2 },
};

static void check_gcase(const struct gcase *gc)
{
	mask_set_t *set = tset_new_gaps(gc->p, gc->np, 0, gc->gapmask);
	const unsigned char *in = (const unsigned char *)gc->in;
	size_t len = strlen(gc->in), cuts[256], total = 0;
	uint64_t rc[3] = { 0 }, counts[3], want_total = 0;
	struct bytes ref = { 0 };
	struct evbuffer *out;
	char b1[512];

	CU_ASSERT_FATAL(set != NULL && len < 256);
	ref_replace(set, in, len, &ref, rc);
	for (size_t i = 0; i < gc->np; i++)
		want_total += rc[i];
	if ((gc->want != NULL && (ref.len != strlen(gc->want) || memcmp(ref.p, gc->want, ref.len) != 0)) ||
	    want_total != gc->total)
		FAILF("%s: reference gives \"%s\"", gc->name, show(ref.p, ref.len, b1, sizeof(b1)));
	out = evbuffer_new();
	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT(mask_replace_buf(set, in, len, out, NULL, &total) == 0);
	if (!evbuf_equals(out, ref.p, ref.len) || total != want_total)
		FAILF("%s: replace_buf gives \"%s\"", gc->name,
		      show(evbuffer_pullup(out, -1), evbuffer_get_length(out), b1, sizeof(b1)));
	evbuffer_free(out);
	{
		unsigned char buf[256];

		memcpy(buf, in, len);
		CU_ASSERT(mask_replace_inplace(set, buf, len, NULL, NULL) == 0);
		if (memcmp(buf, ref.p, len) != 0)
			FAILF("%s: in place gives \"%s\"", gc->name, show(buf, len, b1, sizeof(b1)));
	}
	for (int by_buffer = 0; by_buffer <= 1; by_buffer++) {
		for (size_t i = 1; i < len; i++)
			cuts[i - 1] = i;
		out = run_stream(set, in, len, cuts, len ? len - 1 : 0, by_buffer, counts);
		if (!same_result(out, counts, &ref, rc, gc->np))
			FAILF("%s: stream (buffer=%d) in 1-byte chunks", gc->name, by_buffer);
		evbuffer_free(out);
		for (size_t i = 1; i < len; i++) {
			cuts[0] = i;
			out = run_stream(set, in, len, cuts, 1, by_buffer, counts);
			if (!same_result(out, counts, &ref, rc, gc->np))
				FAILF("%s: stream (buffer=%d) split at %zu", gc->name, by_buffer, i);
			evbuffer_free(out);
		}
	}
	free(ref.p);
	mask_set_free(set);
}

static void test_gaps(void)
{
	for (size_t i = 0; i < ARRAY_LEN(gcases); i++)
		check_gcase(&gcases[i]);
}

/* A line break right after a replaced value is not held back: nothing of
 * the value can start a match any more (a close-delimited body drops
 * what is held at its end). A break after a partial one is. */
static void test_gaps_hold(void)
{
	static const struct tpair tp[] = { { "abcdefgh", "ABCDEFGH" }, { "efghijkl", "EFGHIJKL" } };
	mask_set_t *set = tset_new_gaps(tp, 2, 0, 3);
	mask_stream_t *st;
	struct evbuffer *out = evbuffer_new();

	CU_ASSERT_FATAL(set != NULL && out != NULL);
	st = mask_stream_new(set);
	CU_ASSERT_FATAL(st != NULL);
	CU_ASSERT(mask_stream_feed(st, "x abcdefgh\n", 12, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 0);
	CU_ASSERT(evbuf_equals(out, "x ABCDEFGH\n", 12));
	CU_ASSERT(mask_stream_feed(st, "abcd\n", 5, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 5);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	mask_stream_free(st);
	evbuffer_free(out);
	mask_set_free(set);
}

/*
 * Round 49: a reset of a stream given nothing since its last reset does
 * nothing (mask_stream_reset()'s clean flag). Every call that changes a
 * stream must clear the flag: after a feed, a feed_buffer or a
 * scan_folded that held back the first half of a value (each the only
 * call since a reset, done twice), a reset still forgets it, so the
 * second half alone matches nothing; after finish and scan_end, a reset
 * still zeroes the counts. The control without the reset matches (a
 * feed that left the flag set fails here).
 */
static void test_reset_clean(void)
{
	static const struct tpair tp[] = {{"secret-value-0123", "sentinel-xyz-9876"}};
	mask_set_t *set = tset_new(tp, 1, 0);
	struct evbuffer *out = evbuffer_new(), *in = evbuffer_new();
	mask_stream_t *st = mask_stream_new(set);

	CU_ASSERT_FATAL(st != NULL && out != NULL && in != NULL);
	for (int mode = 0; mode < 5; mode++) {
		for (int reset = 0; reset < 2; reset++) {
			/* twice: the second a no-op by the flag */
			mask_stream_reset(st);
			mask_stream_reset(st);
			if (mode == 1) {
				CU_ASSERT_FATAL(evbuffer_add(in, "xx secret-va", 12) == 0);
				CU_ASSERT(mask_stream_feed_buffer(st, in, 12, out) == 0);
			} else if (mode == 2) {
				CU_ASSERT(mask_stream_scan_folded(st, "xx secret-va", 12) == 0);
			} else {
				CU_ASSERT(mask_stream_feed(st, "xx secret-va", 12, out) == 0);
			}
			if (mode == 3) { /* finish: its counts stay until a reset */
				CU_ASSERT(mask_stream_feed(st, "lue-0123", 8, out) == 0 &&
					  mask_stream_finish(st, out) == 0);
			}
			if (mode == 4) {
				CU_ASSERT(mask_stream_feed(st, "lue-0123", 8, out) == 0 &&
					  mask_stream_scan_end(st) == 0);
			}
			if (reset)
				mask_stream_reset(st);
			if (mode == 2) {
				CU_ASSERT(mask_stream_scan_folded(st, "lue-0123 yy", 11) == 0 &&
					  mask_stream_scan_end(st) == 0);
			} else if (mode < 3) {
				CU_ASSERT(mask_stream_feed(st, "lue-0123 yy", 11, out) == 0 &&
					  mask_stream_finish(st, out) == 0);
			}
			/* without the reset the value was found; with it, never */
			CU_ASSERT_EQUAL(mask_stream_total(st), reset ? 0 : 1);
			CU_ASSERT_EQUAL(mask_stream_held(st), 0);
			(void)evbuffer_drain(out, evbuffer_get_length(out));
		}
	}
	mask_stream_free(st);
	evbuffer_free(out);
	evbuffer_free(in);
	mask_set_free(set);
}

TEST_REGISTRAR(register_mask_stream)
{
	CU_pSuite s = test_suite("mask_stream", NULL, NULL);

	test_add(s, "table cases through every entry point and split", test_table);
	test_add(s, "empty set passes through", test_empty_set);
	test_add(s, "hold-back, finish, counters, reset, failure", test_lifecycle);
	test_add(s, "3 MiB in 16 KiB chunks with split sentinels", test_large);
	test_add(s, "every root-skip implementation", test_skip_paths);
	test_add(s, "line-broken forms: JSON, PEM, MIME breaks, escapes, budget", test_gaps);
	test_add(s, "line-broken forms: a break after a replaced value is not held", test_gaps_hold);
	test_add(s, "reset after every kind of call forgets what it began (clean flag)", test_reset_clean);
}

/* ------------------------------------------------------------------ */
/* mask_stream_prop: random sets, inputs and splits vs the reference    */
/* ------------------------------------------------------------------ */

static uint64_t prng_state;

/* splitmix64: tiny, seedable, good enough for test inputs. */
static uint64_t prng(void)
{
	uint64_t z = (prng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t rnd(size_t n)
{
	return n ? (size_t)(prng() % n) : 0;
}

static uint64_t prop_seed(void)
{
	const char *e = getenv("MASK_STREAM_SEED");

	if (e != NULL && *e != '\0')
		return strtoull(e, NULL, 0);
	return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

#define PROP_ITERS 3000

/* Gap tokens the gap trials put between pattern bytes and in noise. */
static const char *const gap_tokens[] = { "\n", "\r\n", "\\n", "\\r\\n", "\\\\", "\\", "\r" };

/* Appends src[0..n) at in + *i (room: cap), with a random gap token
 * before each byte after the first one time in four when gaps is set. */
static void put_piece(unsigned char *in, size_t *i, size_t cap, const unsigned char *src, size_t n,
		      bool gaps)
{
	for (size_t j = 0; j < n && *i < cap; j++) {
		if (gaps && j > 0 && rnd(4) == 0) {
			const char *t = gap_tokens[rnd(ARRAY_LEN(gap_tokens))];
			size_t tl = strlen(t);

			if (*i + tl >= cap)
				return;
			memcpy(in + *i, t, tl);
			*i += tl;
		}
		in[(*i)++] = src[j];
	}
}

/* One random trial; returns false (after reporting) on a mismatch.
 * MASK_SET_PROP_GAPS in flags: gap pairs and gap tokens in the input. */
#define MASK_SET_PROP_GAPS (1u << 30)
static bool prop_trial(uint64_t seed, unsigned iter, unsigned flags)
{
	bool gaps = (flags & MASK_SET_PROP_GAPS) != 0;
	/* Tiny alphabets force overlaps, prefixes and self-repetition. */
	static const char *alphabets[] = { "ab", "abc", "a/b%", "xyz01", "anr", "rn/" };
	const char *alpha = alphabets[rnd(ARRAY_LEN(alphabets))];
	size_t alen = strlen(alpha), np = 1 + rnd(6), len, ncuts;
	unsigned char fb[MAXP][8], tb[MAXP][8], in[300];
	struct mask_pair pairs[MAXP];
	size_t cuts[300];
	uint64_t rc[MAXP] = { 0 }, counts[MAXP];
	struct bytes ref = { 0 };
	enum mask_set_result res;
	mask_set_t *set;
	bool ok = true;
	char b1[400];

	for (size_t i = 0; i < np; i++) {
		pairs[i].from_len = 1 + rnd(6);
		pairs[i].to_len = rnd(3) == 0 ? rnd(8) : pairs[i].from_len;
		for (size_t j = 0; j < pairs[i].from_len; j++)
			fb[i][j] = (unsigned char)alpha[rnd(alen)];
		for (size_t j = 0; j < pairs[i].to_len; j++)
			tb[i][j] = (unsigned char)('A' + rnd(26));
		if (i > 0 && rnd(8) == 0) /* exact duplicate of an earlier from */
			memcpy(fb[i], fb[i - 1], pairs[i].from_len = pairs[i - 1].from_len);
		pairs[i].from = fb[i];
		pairs[i].to = tb[i];
		pairs[i].pct = MASK_PCT_ALL;
		pairs[i].gaps = gaps && rnd(4) != 0;
	}
	flags &= ~MASK_SET_PROP_GAPS;
	set = mask_set_new(pairs, np, flags | MASK_SET_NO_MLOCK, &res);
	if (set == NULL) {
		FAILF("seed %" PRIu64 " iter %u: mask_set_new: %s", seed, iter, mask_set_strerror(res));
		return false;
	}
#ifdef HAVE_TEDDY
	/* half the time, the portable skip instead of the CPU's best */
	if (rnd(2) == 0)
		set->use_teddy = false;
#endif
	/* Inputs: mostly short; built from the alphabet plus pattern pieces. */
	len = rnd(4) == 0 ? rnd(300) : rnd(40);
	for (size_t i = 0; i < len;) {
		if (rnd(3) == 0) {
			const struct mask_pat *pt = &set->pat[rnd(set->npats)];
			size_t n = pt->from_len - rnd(2);
			if (n > len - i)
				n = len - i;
			put_piece(in, &i, len, set->bytes + pt->from_off, n, gaps);
		} else if (gaps && rnd(6) == 0) {
			const char *t = gap_tokens[rnd(ARRAY_LEN(gap_tokens))];

			put_piece(in, &i, len, (const unsigned char *)t, strlen(t), false);
		} else {
			in[i++] = (unsigned char)alpha[rnd(alen)];
		}
	}
	ref_replace(set, in, len, &ref, rc);

	/* one-shot */
	{
		struct evbuffer *out = evbuffer_new();
		uint64_t oc[MAXP] = { 0 };
		CU_ASSERT_FATAL(out != NULL);
		if (mask_replace_buf(set, in, len, out, oc, NULL) != 0 ||
		    !same_result(out, oc, &ref, rc, np)) {
			FAILF("seed %" PRIu64 " iter %u: replace_buf differs on \"%s\"", seed, iter,
			      show(in, len, b1, sizeof(b1)));
			ok = false;
		}
		evbuffer_free(out);
	}
	/* in place (the head path), when lengths allow */
	if (ok && set->equal_len) {
		unsigned char buf[300];
		uint64_t oc[MAXP] = { 0 };

		memcpy(buf, in, len);
		if (mask_replace_inplace(set, buf, len, oc, NULL) != 0 || ref.len != len ||
		    (len != 0 && memcmp(buf, ref.p, len) != 0) || memcmp(oc, rc, np * sizeof(oc[0])) != 0) {
			FAILF("seed %" PRIu64 " iter %u: in place differs on \"%s\"", seed, iter,
			      show(in, len, b1, sizeof(b1)));
			ok = false;
		}
	}
	for (int by_buffer = 0; ok && by_buffer <= 1; by_buffer++) {
		struct evbuffer *out;

		/* random chunking */
		ncuts = 0;
		for (size_t i = 1; i < len; i++)
			if (rnd(4) == 0)
				cuts[ncuts++] = i;
		out = run_stream(set, in, len, cuts, ncuts, by_buffer, counts);
		if (!same_result(out, counts, &ref, rc, np)) {
			FAILF("seed %" PRIu64 " iter %u: random chunks (buffer=%d) differ on \"%s\"",
			      seed, iter, by_buffer, show(in, len, b1, sizeof(b1)));
			ok = false;
		}
		evbuffer_free(out);
		/* 1-byte chunks */
		for (size_t i = 1; i < len; i++)
			cuts[i - 1] = i;
		out = run_stream(set, in, len, cuts, len ? len - 1 : 0, by_buffer, counts);
		if (ok && !same_result(out, counts, &ref, rc, np)) {
			FAILF("seed %" PRIu64 " iter %u: 1-byte chunks (buffer=%d) differ on \"%s\"",
			      seed, iter, by_buffer, show(in, len, b1, sizeof(b1)));
			ok = false;
		}
		evbuffer_free(out);
		/* every split offset, for small inputs */
		for (size_t i = 1; ok && len <= 40 && i < len; i++) {
			cuts[0] = i;
			out = run_stream(set, in, len, cuts, 1, by_buffer, counts);
			if (!same_result(out, counts, &ref, rc, np)) {
				FAILF("seed %" PRIu64 " iter %u: split at %zu (buffer=%d) differs on \"%s\"",
				      seed, iter, i, by_buffer, show(in, len, b1, sizeof(b1)));
				ok = false;
			}
			evbuffer_free(out);
		}
	}
	free(ref.p);
	mask_set_free(set);
	return ok;
}

static void prop_run(unsigned flags)
{
	uint64_t seed = prop_seed();

	prng_state = seed;
	for (unsigned i = 0; i < PROP_ITERS; i++) {
		if (!prop_trial(seed, i, flags)) {
			fprintf(stderr, "mask_stream_prop: failed; rerun with MASK_STREAM_SEED=%" PRIu64
					"\n", seed);
			return;
		}
	}
	CU_PASS("property held");
}

static void test_prop_plain(void)
{
	prop_run(0);
}

/* The same with percent forms compiled in (the reference then scans the
 * compiled pattern list, so this checks the automaton, not the forms). */
static void test_prop_percent(void)
{
	prop_run(MASK_SET_PERCENT);
}

/* Gap pairs, with line breaks and JSON escapes inside and around the
 * pattern pieces (stream.c's gap path against ref_match()). */
static void test_prop_gaps(void)
{
	prop_run(MASK_SET_PROP_GAPS);
}

/*
 * Long, heavily self-overlapping patterns over {a, b} (deep failure
 * chains, hold-back near maxlen - 1 for long stretches) on longer inputs
 * in random chunks.
 */
static void test_prop_long(void)
{
	uint64_t seed = prop_seed() ^ 0x5bd1e995u;

	prng_state = seed;
	for (unsigned iter = 0; iter < 60; iter++) {
		unsigned char fb[8][400], tb[8][400], *in;
		struct mask_pair pairs[8];
		size_t np = 1 + rnd(8), len = 500 + rnd(4000), cuts[600], ncuts = 0;
		uint64_t rc[8] = { 0 }, counts[8];
		struct bytes ref = { 0 };
		enum mask_set_result res;
		mask_set_t *set;

		for (size_t i = 0; i < np; i++) {
			/* a third of the sets with patterns too long for a
			 * one-shot scan's tables on the stack (its heap path) */
			pairs[i].from_len = 1 + rnd(iter % 3 == 2 ? 400 : 64);
			pairs[i].to_len = pairs[i].from_len;
			/* gap pairs on input without gap bytes: nothing changes */
			pairs[i].gaps = rnd(2) == 0;
			/* mostly 'a' with a rare 'b': "aaaa...ab" shapes */
			for (size_t j = 0; j < pairs[i].from_len; j++) {
				fb[i][j] = rnd(6) == 0 ? 'b' : 'a';
				tb[i][j] = (unsigned char)('A' + i);
			}
			pairs[i].from = fb[i];
			pairs[i].to = tb[i];
			pairs[i].pct = MASK_PCT_ALL;
		}
		set = mask_set_new(pairs, np, MASK_SET_NO_MLOCK, &res);
		in = malloc(len);
		CU_ASSERT_FATAL(set != NULL && in != NULL);
		for (size_t i = 0; i < len; i++)
			in[i] = rnd(8) == 0 ? 'b' : 'a';
		for (size_t i = 1; i < len && ncuts < ARRAY_LEN(cuts); i += 1 + rnd(40))
			cuts[ncuts++] = i;
		ref_replace(set, in, len, &ref, rc);
		for (int by_buffer = 0; by_buffer <= 1; by_buffer++) {
			struct evbuffer *out = run_stream(set, in, len, cuts, ncuts, by_buffer, counts);
			bool ok = same_result(out, counts, &ref, rc, np);

			evbuffer_free(out);
			if (!ok) {
				FAILF("seed %" PRIu64 " iter %u (buffer=%d): long patterns differ", seed,
				      iter, by_buffer);
				fprintf(stderr, "mask_stream_prop: rerun with MASK_STREAM_SEED=%" PRIu64 "\n",
					seed ^ 0x5bd1e995u);
				iter = 1000;
				break;
			}
		}
		/* one-shot, the scan a request's fields get */
		if (iter < 1000) {
			struct evbuffer *out = evbuffer_new();
			uint64_t oc[8] = { 0 };

			CU_ASSERT_FATAL(out != NULL);
			CU_ASSERT(mask_replace_buf(set, in, len, out, oc, NULL) == 0);
			if (!same_result(out, oc, &ref, rc, np)) {
				FAILF("seed %" PRIu64 " iter %u (one-shot): long patterns differ", seed, iter);
				iter = 1000;
			}
			evbuffer_free(out);
		}
		free(ref.p);
		free(in);
		mask_set_free(set);
	}
}

/*
 * Frequent prefix hits, rare matches: patterns sharing their first two or
 * three bytes (as "ghp_" shares "gh" with English text), over input full
 * of their truncated prefixes, cut 0 to 4 bytes after a first byte so
 * that root-skip candidates fall at every distance from the chunk end
 * (where skip_cand cannot read four bytes). Inputs are long enough for the
 * vector skips; each trial also runs with the portable skip and with the
 * 4-byte prefix bitmap saturated (every candidate a false yes).
 */
static void test_prop_edges(void)
{
	static const char alpha[] = "ghp_ij%5F";
	uint64_t seed = prop_seed() ^ 0x27d4eb2fu;

	prng_state = seed;
	for (unsigned iter = 0; iter < 400; iter++) {
		unsigned char fb[6][24], tb[6][24], in[1500];
		struct mask_pair pairs[6];
		size_t np = 1 + rnd(6), len = 18 + rnd(sizeof(in) - 18), cuts[400], ncuts = 0;
		uint64_t rc[6] = { 0 }, counts[6];
		struct bytes ref = { 0 };
		enum mask_set_result res;
		unsigned flags = MASK_SET_NO_MLOCK | (rnd(2) ? MASK_SET_PERCENT : 0u);
		mask_set_t *set;
		bool ok = true;

		for (size_t i = 0; i < np; i++) {
			/* mostly 4 to 24 bytes, sometimes 1 to 3 */
			pairs[i].from_len = rnd(5) == 0 ? 1 + rnd(3) : 4 + rnd(21);
			pairs[i].gaps = rnd(2) == 0;
			pairs[i].to_len = rnd(4) == 0 ? rnd(24) : pairs[i].from_len;
			for (size_t j = 0; j < pairs[i].from_len; j++)
				fb[i][j] = j < 2 ? (unsigned char)"gh"[j]
						 : (unsigned char)alpha[rnd(sizeof(alpha) - 1)];
			for (size_t j = 0; j < pairs[i].to_len; j++)
				tb[i][j] = (unsigned char)('A' + rnd(26));
			pairs[i].from = fb[i];
			pairs[i].to = tb[i];
			pairs[i].pct = MASK_PCT_ALL;
		}
		set = mask_set_new(pairs, np, flags, &res);
		CU_ASSERT_FATAL(set != NULL);
		/* input: filler, truncated prefixes, now and then a whole pattern */
		for (size_t i = 0; i < len;) {
			size_t r = rnd(8);

			if (r < 3) {
				const struct mask_pat *pt = &set->pat[rnd(set->npats)];
				size_t n = r == 0 ? pt->from_len : 1 + rnd(pt->from_len);

				if (n > len - i)
					n = len - i;
				memcpy(in + i, set->bytes + pt->from_off, n);
				i += n;
			} else {
				in[i++] = (unsigned char)alpha[rnd(sizeof(alpha) - 1)];
			}
		}
		/* cuts 0..4 bytes after first bytes, plus random ones */
		for (size_t i = 1; i < len && ncuts < ARRAY_LEN(cuts); i++) {
			if (in[i - 1] == 'g' && rnd(3) == 0) {
				size_t c = i + rnd(4);

				if (c < len && (ncuts == 0 || c > cuts[ncuts - 1]))
					cuts[ncuts++] = c;
				i = c;
			} else if (rnd(64) == 0 && (ncuts == 0 || i > cuts[ncuts - 1])) {
				cuts[ncuts++] = i;
			}
		}
		ref_replace(set, in, len, &ref, rc);
		for (int mode = 0; ok && mode < 3; mode++) {
#ifdef HAVE_TEDDY
			set->use_teddy = mode == 0 && __builtin_cpu_supports("ssse3");
#endif
			if (mode == 2)
				memset(set->quad, 0xff, (size_t)1 << (QUAD_HASH_BITS - 3));
			for (int by_buffer = 0; ok && by_buffer <= 1; by_buffer++) {
				struct evbuffer *out = run_stream(set, in, len, cuts, ncuts, by_buffer,
								  counts);

				ok = same_result(out, counts, &ref, rc, np);
				evbuffer_free(out);
			}
			if (ok) {
				struct evbuffer *out = evbuffer_new();
				uint64_t oc[6] = { 0 };

				CU_ASSERT_FATAL(out != NULL);
				ok = mask_replace_buf(set, in, len, out, oc, NULL) == 0 &&
				     same_result(out, oc, &ref, rc, np);
				evbuffer_free(out);
			}
			if (!ok) {
				FAILF("seed %" PRIu64 " iter %u mode %d: prefix-dense input differs", seed,
				      iter, mode);
				fprintf(stderr, "mask_stream_prop: rerun with MASK_STREAM_SEED=%" PRIu64 "\n",
					seed ^ 0x27d4eb2fu);
				iter = 1000;
			}
		}
		free(ref.p);
		mask_set_free(set);
	}
}

TEST_REGISTRAR(register_mask_stream_prop)
{
	CU_pSuite s = test_suite("mask_stream_prop", NULL, NULL);

	test_add(s, "random sets, inputs, splits == reference", test_prop_plain);
	test_add(s, "same with percent forms", test_prop_percent);
	test_add(s, "gap pairs, line breaks and escapes in the input", test_prop_gaps);
	test_add(s, "long self-overlapping patterns, long inputs", test_prop_long);
	test_add(s, "frequent prefix hits, candidates at chunk edges", test_prop_edges);
}

/* ------------------------------------------------------------------ */
/* mask_stream_set: construction, hygiene, wiping, percent forms        */
/* ------------------------------------------------------------------ */

static void test_set_errors(void)
{
	static const char big[MASK_PATTERN_MAX_BYTES + 1];
	struct mask_pair p = { "abc", 3, "xyz", 3, MASK_PCT_ALL, false };
	enum mask_set_result res;
	struct mask_pair *many;

	p.from_len = 0;
	CU_ASSERT(mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_EMPTY);
	p.from_len = 3;
	p.from = NULL;
	CU_ASSERT(mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_ARGS);
	p.from = "abc";
	p.to = NULL;
	CU_ASSERT(mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_ARGS);
	p.to = big;
	p.to_len = sizeof(big);
	CU_ASSERT(mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_TOO_LONG);
	CU_ASSERT(mask_set_new(NULL, 1, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_ARGS);
	many = calloc(MASK_SET_MAX_PAIRS + 1, sizeof(*many));
	CU_ASSERT_FATAL(many != NULL);
	CU_ASSERT(mask_set_new(many, MASK_SET_MAX_PAIRS + 1, MASK_SET_NO_MLOCK, &res) == NULL &&
		  res == MASK_SET_ERR_ARGS);
	/* 400 pairs of 16 KiB each: over MASK_SET_MAX_BYTES */
	for (size_t i = 0; i < 400; i++) {
		many[i].from = big;
		many[i].from_len = MASK_PATTERN_MAX_BYTES;
	}
	CU_ASSERT(mask_set_new(many, 400, MASK_SET_NO_MLOCK, &res) == NULL && res == MASK_SET_ERR_TOO_BIG);
	free(many);
	/* a maximal pattern is fine; to of length 0 with NULL too */
	p.from = big;
	p.from_len = MASK_PATTERN_MAX_BYTES;
	p.to = NULL;
	p.to_len = 0;
	{
		mask_set_t *set = mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res);
		CU_ASSERT(set != NULL && mask_set_maxlen(set) == MASK_PATTERN_MAX_BYTES);
		mask_set_free(set);
	}
	for (int r = MASK_SET_OK; r <= MASK_SET_ERR_MADVISE; r++)
		CU_ASSERT(mask_set_strerror((enum mask_set_result)r) != NULL);
}

/* The arena is excluded from dumps (and locked when allowed); the flags
 * say what was achieved, and the kernel agrees. */
static void test_set_hygiene(void)
{
	struct mask_pair p = { "ghp_secretsecret", 16, "ghp_sentinelxxxx", 16, MASK_PCT_ALL, false };
	enum mask_set_result res;
	mask_set_t *set = mask_set_new(&p, 1, 0, &res);
	char flags[512];

	CU_ASSERT_FATAL(set != NULL);
	CU_ASSERT((mask_set_hygiene(set) & MASK_HYG_DONTDUMP) != 0);
	if (test_vmflags(set->mem.base, flags, sizeof(flags))) {
		CU_ASSERT(strstr(flags, " dd") != NULL);
		/* locked exactly when the set says so; AddressSanitizer
		 * intercepts mlock() as a no-op that returns 0, so there only
		 * "not locked" can be checked */
#if defined(__SANITIZE_ADDRESS__)
		if ((mask_set_hygiene(set) & MASK_HYG_LOCKED) == 0)
			CU_ASSERT(strstr(flags, " lo") == NULL);
#else
		CU_ASSERT(((mask_set_hygiene(set) & MASK_HYG_LOCKED) != 0) ==
			  (strstr(flags, " lo") != NULL));
#endif
		if ((mask_set_hygiene(set) & MASK_HYG_WIPEONFORK) != 0)
			CU_ASSERT(strstr(flags, " wf") != NULL);
	}
	if ((mask_set_hygiene(set) & MASK_HYG_LOCKED) == 0)
		fprintf(stderr, "mask_stream_set: note: mlock refused here (the set says so)\n");
	mask_set_free(set);
	set = mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res);
	CU_ASSERT_FATAL(set != NULL);
	CU_ASSERT((mask_set_hygiene(set) & MASK_HYG_LOCKED) == 0);
	mask_set_free(set);
}

/* Wipe observations from the hook. */
static size_t wiped_set_calls, wiped_hold_calls;
static bool wiped_all_zero;

static void wipe_probe(const void *p, size_t len, const char *what)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0)
			wiped_all_zero = false;
	if (strcmp(what, "set") == 0)
		wiped_set_calls++;
	else
		wiped_hold_calls++;
}

/* The set's arena is a base/secmem.h mapping: its wipe is seen by the
 * hook tests/unit/base/test_secmem.c defines. */
extern void (*secmem_wipe_hook)(const void *p, size_t len);

static void wipe_probe_set(const void *p, size_t len)
{
	wipe_probe(p, len, "set");
}

static bool contains(const void *hay, size_t n, const void *needle, size_t m)
{
	return memmem(hay, n, needle, m) != NULL;
}

/* The secret bytes are in the arena while the set lives, and every byte
 * of the arena and of a stream's hold-back is zero when it is released. */
static void test_set_wipe(void)
{
	static const char secret[] = "github_pat_11AAAAAAA0realrealrealrealreal";
	struct mask_pair p = { secret, sizeof(secret) - 1, "x", 1, MASK_PCT_ALL, false };
	enum mask_set_result res;
	mask_set_t *set = mask_set_new(&p, 1, MASK_SET_NO_MLOCK | MASK_SET_PERCENT, &res);
	mask_stream_t *st;
	struct evbuffer *out = evbuffer_new();

	CU_ASSERT_FATAL(set != NULL && out != NULL);
	CU_ASSERT(contains(set->mem.base, set->mem.len, secret, sizeof(secret) - 1));
	st = mask_stream_new(set);
	CU_ASSERT_FATAL(st != NULL);
	CU_ASSERT(mask_stream_feed(st, secret, 20, out) == 0); /* a held prefix */
	CU_ASSERT(mask_stream_held(st) == 20);
	CU_ASSERT(contains(st->hold, st->hold_cap, secret, 20));

	test_wipe_hook = wipe_probe;
	secmem_wipe_hook = wipe_probe_set;
	wiped_set_calls = wiped_hold_calls = 0;
	wiped_all_zero = true;
	mask_stream_free(st);
	mask_set_free(set);
	test_wipe_hook = NULL;
	secmem_wipe_hook = NULL;
	CU_ASSERT(wiped_hold_calls == 1);
	CU_ASSERT(wiped_set_calls == 1);
	CU_ASSERT(wiped_all_zero);
	evbuffer_free(out);
}

/* finish() and a shrinking hold-back wipe what they drop. */
static void test_hold_wipe(void)
{
	struct mask_pair p = { "0123456789", 10, "abcdefghij", 10, MASK_PCT_ALL, false };
	enum mask_set_result res;
	mask_set_t *set = mask_set_new(&p, 1, MASK_SET_NO_MLOCK, &res);
	mask_stream_t *st;
	struct evbuffer *out = evbuffer_new();

	CU_ASSERT_FATAL(set != NULL && out != NULL);
	st = mask_stream_new(set);
	CU_ASSERT_FATAL(st != NULL);
	CU_ASSERT(mask_stream_feed(st, "012345678", 9, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 9);
	CU_ASSERT(mask_stream_feed(st, "x01", 3, out) == 0);
	CU_ASSERT(mask_stream_held(st) == 2);
	for (size_t i = 2; i < st->hold_cap; i++)
		CU_ASSERT(st->hold[i] == 0);
	CU_ASSERT(mask_stream_finish(st, out) == 0);
	for (size_t i = 0; i < st->hold_cap; i++)
		CU_ASSERT(st->hold[i] == 0);
	CU_ASSERT(evbuf_equals(out, "012345678x01", 12));
	mask_stream_free(st);
	evbuffer_free(out);
	mask_set_free(set);
}

/* Percent forms: what is generated and what it becomes. */
struct pcase {
	const char *from, *to, *in, *want;
	uint64_t count;
};

static const struct pcase pcases[] = {
	/* raw, upper, lower, mixed raw/escaped */
	{ "a/b+c", "x/y+z", "q=a/b+c", "q=x/y+z", 1 },
	{ "a/b+c", "x/y+z", "q=a%2Fb%2Bc&r=a%2fb%2bc", "q=x%2Fy%2Bz&r=x%2fy%2bz", 2 },
	{ "a/b+c", "x/y+z", "a/b%2Bc a%2Fb+c", "x/y%2Bz x%2Fy+z", 2 },
	/* mixed hex case is not generated */
	{ "a/b+c", "x/y+z", "a%2fb%2Bc", "a%2fb%2Bc", 0 },
	/* an unreserved byte escaped as an encoder does (Rust's
	 * NON_ALPHANUMERIC: '-'; Java's URLEncoder: '~'); an escaped letter is
	 * no encoder's */
	{ "ab-c", "xy-z", "ab-c ab%2Dc", "xy-z xy%2Dz", 2 },
	{ "ab~cd", "xy~zw", "ab%7Ecd", "xy%7Ezw", 1 },
	{ "ab-c", "xy-z", "%61b-c", "%61b-c", 0 },
	/* to differs at the escaped place: the same place of to is escaped
	 * whatever it holds, so equal-length pairs keep equal lengths */
	{ "a/b", "x:y", "a%2Fb", "x%3Ay", 1 },
	{ "a/b", "xyz", "a%2fb", "x%79z", 1 },
	/* more than MASK_PCT_MIX_MAX specials: all raw or all escaped only */
	{ "a/b/c/d/e/f", "1/2/3/4/5/6", "a%2Fb%2Fc%2Fd%2Fe%2Ff", "1%2F2%2F3%2F4%2F5%2F6", 1 },
	{ "a/b/c/d/e/f", "1/2/3/4/5/6", "a/b%2Fc%2Fd%2Fe%2Ff", "a/b%2Fc%2Fd%2Fe%2Ff", 0 },
	/* a literal % in a secret */
	{ "p%w", "s%t", "p%25w", "s%25t", 1 },
	{ "sp ace", "xx yyy", "sp%20ace", "xx%20yyy", 1 },
	/* '+' for a space (form encoding), alone and mixed */
	{ "sp ace", "xx yyy", "sp+ace", "xx+yyy", 1 },
	{ "a b/c", "x y/z", "a+b%2Fc a+b/c", "x+y%2Fz x+y/z", 2 },
	/* five distinct optional bytes: as Python's quote() ('/' kept) and
	 * quote_plus(), JavaScript's encodeURIComponent and Go's PathEscape
	 * write them; a mix no encoder writes is not matched */
	{ "k/e+y=a:b@c d", "x/y+z=w:v@u t", "k/e%2By%3Da%3Ab%40c%20d", "x/y%2Bz%3Dw%3Av%40u%20t", 1 },
	{ "k/e+y=a:b@c d", "x/y+z=w:v@u t", "k%2Fe%2By%3Da%3Ab%40c+d", "x%2Fy%2Bz%3Dw%3Av%40u+t", 1 },
	{ "k/e+y=a:b@c d", "x/y+z=w:v@u t", "k%2Fe+y=a:b@c%20d", "x%2Fy+z=w:v@u%20t", 1 },
	{ "k/e+y=a:b@c d", "x/y+z=w:v@u t", "k/e%2By=a%3Ab@c%20d", "k/e%2By=a%3Ab@c%20d", 0 },
	{ "a!b*c'd(e)f/g", "1!2*3'4(5)6/7", "a!b*c'd(e)f%2Fg", "1!2*3'4(5)6%2F7", 1 },
};

static void test_percent(void)
{
	for (size_t i = 0; i < ARRAY_LEN(pcases); i++) {
		const struct pcase *pc = &pcases[i];
		struct tpair tp = { pc->from, pc->to };
		mask_set_t *set = tset_new(&tp, 1, MASK_SET_PERCENT);
		struct evbuffer *out = evbuffer_new();
		uint64_t c = 0;
		char b[256];

		CU_ASSERT_FATAL(set != NULL && out != NULL);
		CU_ASSERT(mask_replace_buf(set, pc->in, strlen(pc->in), out, &c, NULL) == 0);
		if (!evbuf_equals(out, pc->want, strlen(pc->want)) || c != pc->count)
			FAILF("percent %zu: \"%s\" -> \"%s\" (count %" PRIu64 ")", i, pc->in,
			      show(evbuffer_pullup(out, -1), evbuffer_get_length(out), b, sizeof(b)),
			      c);
		evbuffer_free(out);
		mask_set_free(set);
	}
	/* counts of percent forms go to their pair; no forms without flag */
	{
		static const struct tpair tp[] = { { "k/1", "v/1" }, { "k/2", "v/2" } };
		mask_set_t *set = tset_new(tp, 2, MASK_SET_PERCENT);
		mask_set_t *raw = tset_new(tp, 2, 0);
		uint64_t c[2] = { 0 };

		CU_ASSERT_FATAL(set != NULL && raw != NULL);
		CU_ASSERT(mask_set_npairs(set) == 2);
		CU_ASSERT(set->npats == 2 + 2 * 2);
		CU_ASSERT(raw->npats == 2);
		CU_ASSERT(mask_set_maxlen(set) == 5);
		CU_ASSERT(mask_replace_inplace(set, (char[]){ "k%2F2k/1k%2f1" }, 13, c, NULL) == 0);
		CU_ASSERT(c[0] == 2 && c[1] == 1);
		mask_set_free(set);
		mask_set_free(raw);
	}
	/* No two forms alike: %40 has no hex letter, so one case only, and
	 * the encoders' forms of "k@1" are its escaped form. */
	{
		static const struct tpair tp[] = { { "k@1", "v@1" } };
		mask_set_t *set = tset_new(tp, 1, MASK_SET_PERCENT);

		CU_ASSERT_FATAL(set != NULL);
		CU_ASSERT(set->npats == 1 + 1);
		CU_ASSERT(set->equal_len);
		mask_set_free(set);
	}
	/* A pair whose `to` differs where `from` is escaped (base64 forms of
	 * a value and its sentinel) keeps equal lengths: in-place works. */
	{
		static const struct tpair tp[] = { { "ab+cd/fgh", "xyzwvefgh" } };
		mask_set_t *set = tset_new(tp, 1, MASK_SET_PERCENT);
		char buf[] = "q=ab%2Bcd%2Ffgh&r=ab+cd/fgh";
		size_t total = 0;

		CU_ASSERT_FATAL(set != NULL);
		CU_ASSERT(set->equal_len);
		CU_ASSERT(mask_replace_inplace(set, buf, strlen(buf), NULL, &total) == 0);
		CU_ASSERT(total == 2 && strcmp(buf, "q=xy%7Awv%65fgh&r=xyzwvefgh") == 0);
		mask_set_free(set);
	}
	/* mask_set_new_pct(): percent forms for the pairs from pct_from on. */
	{
		struct mask_pair p[2] = { { "k/1", 3, "v/1", 3, MASK_PCT_ALL, false }, { "k/2", 3, "v/2", 3, MASK_PCT_ALL, false } };
		enum mask_set_result res;
		mask_set_t *set = mask_set_new_pct(p, 2, 1, MASK_SET_NO_MLOCK, &res);
		uint64_t c[2] = { 0 };

		CU_ASSERT_FATAL(set != NULL);
		CU_ASSERT(set->npats == 2 + 2);
		CU_ASSERT(mask_replace_inplace(set, (char[]){ "k%2F1k%2F2" }, 10, c, NULL) == 0);
		CU_ASSERT(c[0] == 0 && c[1] == 1);
		mask_set_free(set);
	}
}

/*
 * perf46m: the NUL split (automaton.h nul_split, stream.c skip_next()).
 * A value's UTF-16 and UTF-32 forms (a NUL in their first two bytes)
 * are out of the first-byte and Teddy tables, so text with no NUL skips
 * as fast as without them (fails before: 0 was a first byte, nfirst 2);
 * a NUL pattern is looked for only near a NUL or the end of a call. Each
 * form split at every offset (one cut, and a cut before and after each
 * byte), a NUL-free chunk that ends in a wide form's first byte followed
 * by the rest, and random inputs of the patterns' bytes with random cuts,
 * through every skip path: the output and counts are the reference's.
 */
#define WV "Tok9"
static const unsigned char wide_from[7][17] = {
	"Tok9", "T\0o\0k\0" "9\0", "\0T\0o\0k\0" "9", "T\0\0\0o\0\0\0k\0\0\0" "9\0\0\0",
	"\0\0\0T\0\0\0o\0\0\0k\0\0\0" "9", "ab\0cd", "zz",
};
static const unsigned char wide_to[7][17] = {
	"S3n7", "S\0" "3\0n\0" "7\0", "\0S\0" "3\0n\0" "7", "S\0\0\0" "3\0\0\0n\0\0\0" "7\0\0\0",
	"\0\0\0S\0\0\0" "3\0\0\0n\0\0\0" "7", "xy\0zw", "yy",
};
static const size_t wide_len[7] = { 4, 8, 8, 16, 16, 5, 2 };

static mask_set_t *wide_set(void)
{
	struct mask_pair pairs[7];
	enum mask_set_result res;
	mask_set_t *set;

	for (size_t k = 0; k < 7; k++)
		pairs[k] = (struct mask_pair){ .from = wide_from[k], .from_len = wide_len[k], .to = wide_to[k],
					       .to_len = wide_len[k], .pct = k == 0 ? MASK_PCT_ALL : MASK_PCT_NONE,
					       .gaps = k == 0 };
	set = mask_set_new(pairs, 7, MASK_SET_NO_MLOCK, &res);
	CU_ASSERT_FATAL(set != NULL);
	return set;
}

/* in through the set in every skip mode, cut at cuts: the reference's? */
static bool wide_same(mask_set_t *set, const unsigned char *in, size_t len, const size_t *cuts, size_t ncuts)
{
	struct bytes ref = { 0 };
	uint64_t rc[7] = { 0 }, counts[7] = { 0 };
	bool ok = true;

	ref_replace(set, in, len, &ref, rc);
	for (int mode = 0; mode < 3 && ok; mode++) {
		struct evbuffer *out;
#ifdef HAVE_TEDDY
		bool t = set->use_teddy, t32 = set->use_teddy32;

		if (mode == 1)
			set->use_teddy = false;
		if (mode == 2)
			set->use_teddy32 = false;
#endif
		out = run_stream(set, in, len, cuts, ncuts, mode == 2, counts);
		ok = same_result(out, counts, &ref, rc, 7);
		evbuffer_free(out);
#ifdef HAVE_TEDDY
		set->use_teddy = t;
		set->use_teddy32 = t32;
#endif
	}
	free(ref.p);
	return ok;
}

static void test_wide_split(void)
{
	static const char text[] = "The Tok T o k 9 Tok8 Tokens, ab cd zz top; T";
	mask_set_t *set = wide_set();
	unsigned char in[512];
	size_t cuts[4];

	CU_ASSERT(set->first[0] == 0);
	CU_ASSERT(set->nfirst == 3); /* T, a, z */
	for (size_t k = 0; k < 7; k++) {
		size_t len = 0;
		char nm[80];

		memcpy(in, text, sizeof(text) - 1);
		len = sizeof(text) - 1;
		memcpy(in + len, wide_from[k], wide_len[k]);
		len += wide_len[k];
		memcpy(in + len, "\x01\x00 tail", 7);
		len += 7;
		for (size_t c = 1; c < len; c++) {
			cuts[0] = c;
			if (!wide_same(set, in, len, cuts, 1))
				FAILF("form %zu (%s), cut at %zu: differs", k, show(wide_from[k], wide_len[k], nm, sizeof(nm)), c);
			if (c + 1 < len) {
				cuts[1] = c + 1;
				if (!wide_same(set, in, len, cuts, 2))
					FAILF("form %zu, cuts at %zu and %zu: differs", k, c, c + 1);
			}
		}
		/* the NUL-free chunk then the wide one: the form's first byte
		 * ends the first (the text ends in 'T' already) */
		memcpy(in, text, sizeof(text) - 1);
		len = sizeof(text) - 1;
		memcpy(in + len, wide_from[k] + 1, wide_len[k] - 1);
		len += wide_len[k] - 1;
		cuts[0] = sizeof(text) - 1;
		if (!wide_same(set, in, len, cuts, 1))
			FAILF("form %zu: a NUL-free chunk then the rest: differs", k);
	}
	/* random inputs of the patterns' bytes, NULs dense or sparse */
	prng_state = prop_seed() ^ 0x5bd1e995u;
	for (unsigned iter = 0; iter < 300; iter++) {
		static const unsigned char alpha[] = { 'T', 'o', 'k', '9', 0, 'a', 'b', 'z', 'x', ' ' };
		size_t len = 1 + rnd(sizeof(in)), ncuts = rnd(4), nulpct = rnd(3) == 0 ? 0 : 1 + rnd(60);
		for (size_t i = 0; i < len;) {
			if (rnd(8) == 0) {
				size_t k = rnd(7), m = wide_len[k] < len - i ? wide_len[k] : len - i;

				memcpy(in + i, wide_from[k], m);
				i += m;
				continue;
			}
			in[i] = alpha[rnd(100) < nulpct ? 4 : rnd(sizeof(alpha))];
			if (nulpct == 0 && in[i] == 0)
				in[i] = 'x';
			i++;
		}
		for (size_t c = 0; c < ncuts; c++)
			cuts[c] = 1 + rnd(len);
		for (size_t a = 0; a < ncuts; a++) /* sorted, distinct, inside */
			for (size_t b = a + 1; b < ncuts; b++)
				if (cuts[b] < cuts[a]) {
					size_t x = cuts[a];
					cuts[a] = cuts[b];
					cuts[b] = x;
				}
		{
			size_t w = 0;

			for (size_t c = 0; c < ncuts; c++)
				if (cuts[c] < len && (w == 0 || cuts[c] != cuts[w - 1]))
					cuts[w++] = cuts[c];
			ncuts = w;
		}
		if (!wide_same(set, in, len, cuts, ncuts)) {
			FAILF("random %u (seed %" PRIu64 "): differs", iter, prng_state);
			break;
		}
	}
	mask_set_free(set);
}

/*
 * review46m: the NUL split fed in reads of 1, 2, 3 and 5 bytes all
 * through (skip_next()'s memo is one segment's; a read of one byte is
 * its last byte, so "the end of a read" is every byte), each wide form
 * at the start, in the middle and at the end of a body, after text with
 * no NUL and after a run of NULs, found as the reference finds it. The
 * reads end on a NUL, begin on one, and hold a form's first byte alone.
 */
static void test_wide_reads(void)
{
	static const char text[] = "The Tok T o k 9 Tok8 Tokens, ab cd zz top; T";
	mask_set_t *set = wide_set();
	unsigned char in[256];
	size_t cuts[256];

	for (size_t k = 0; k < 7; k++) {
		for (int where = 0; where < 4; where++) {
			size_t len = 0;

			if (where == 1 || where == 2) {
				memcpy(in, text, sizeof(text) - 1);
				len = sizeof(text) - 1;
			}
			if (where == 3) {
				memset(in, 0, 9);
				len = 9;
			}
			memcpy(in + len, wide_from[k], wide_len[k]);
			len += wide_len[k];
			if (where != 2) {
				memcpy(in + len, "\0x\0 tail T", 10);
				len += 10;
			}
			for (size_t step = 1; step <= 5; step++) {
				size_t ncuts = 0;

				if (step == 4)
					continue;
				for (size_t c = step; c < len; c += step)
					cuts[ncuts++] = c;
				if (!wide_same(set, in, len, cuts, ncuts))
					FAILF("form %zu, place %d, reads of %zu bytes: differs", k, where, step);
			}
		}
	}
	mask_set_free(set);
}

/*
 * perf47m: the NUL patterns' block filter (stream.c skip_nul_blocks(),
 * 16 or 32 lanes a step over the blocks that hold a NUL, set->wteddy).
 * Each wide form at every offset 0-99 of a 160-byte body, so its first
 * byte and its NUL fall on the last lane of a block, on the first of
 * the next, and in the bytes after the last full block (byte by byte),
 * in fillers that keep the block loop running (UTF-16 of other letters,
 * a NUL every other byte; the forms' first byte before a NUL with other
 * bytes after), that leave it for memchr() (one NUL, then text with
 * none: quiet blocks), and random bytes with NULs; whole, and cut
 * before, at and after the form's first byte, after its last byte and
 * at block edges 16, 32, 48 and 64. Through the 32-lane, 16-lane and
 * byte loops (wide_same()), found as the reference finds it: fails
 * when the filter drops a lane (checked: a filter without lane 15 or
 * the last block's lanes).
 */
static void test_wide_blocks(void)
{
	static const size_t edges[] = { 16, 32, 48, 64 };
	mask_set_t *set = wide_set();
	unsigned char in[160];
	size_t cuts[4];
	char nm[80];

#ifdef HAVE_TEDDY
	{
		static const unsigned char zero[6 * 16];

		CU_ASSERT(set->nul_split && memcmp(set->wteddy, zero, sizeof(zero)) != 0);
	}
#endif
	prng_state = prop_seed() ^ 0x27d4eb2fu;
	for (int fill = 0; fill < 4; fill++) {
		for (size_t i = 0; i < sizeof(in); i++) {
			static const unsigned char u16[] = "x\0y\0 \0o\0";
			static const unsigned char near[] = "T\0x\0\0T";

			in[i] = fill == 0   ? u16[i % 8]
				: fill == 1 ? near[i % 6]
				: fill == 2 ? (i == 1 ? 0 : (unsigned char)('a' + i % 7))
					    : (unsigned char)(rnd(8) == 0 ? 0 : 1 + rnd(255));
		}
		for (size_t k = 1; k < 6; k++) {
			for (size_t o = 0; o < 100; o++) {
				unsigned char body[160];
				size_t d[] = { 0, o, o + 1, o + 2, o + wide_len[k] };

				memcpy(body, in, sizeof(body));
				memcpy(body + o, wide_from[k], wide_len[k]);
				for (size_t c = 0; c < sizeof(d) / sizeof(d[0]); c++) {
					size_t ncuts = d[c] != 0 && d[c] < sizeof(body) ? 1 : 0;

					cuts[0] = d[c];
					if (!wide_same(set, body, sizeof(body), cuts, ncuts)) {
						FAILF("filler %d, form %zu (%s) at %zu, cut at %zu: differs", fill, k,
						      show(wide_from[k], wide_len[k], nm, sizeof(nm)), o,
						      ncuts != 0 ? cuts[0] : 0);
						goto out;
					}
				}
				if (!wide_same(set, body, sizeof(body), edges, 4)) {
					FAILF("filler %d, form %zu at %zu, cut at 16, 32, 48, 64: differs", fill, k, o);
					goto out;
				}
			}
		}
	}
out:
	mask_set_free(set);
}

/*
 * perf48m: how skip_next() looks for the NUL patterns with the Teddy
 * loops is decided once a segment (memchr() over its first NUL_LOOK
 * bytes, then the NULs in the NUL_SAMPLE bytes from the first): sparse
 * (binary data: the combined tables set->cteddy, one lookup a block for
 * both), else (text, UTF-16: the text tables and the NUL patterns' own
 * block loop). Each wide form at every offset 0-139
 * of a 200-byte body of random bytes with a NUL every 100 bytes or so
 * (sparse: checked), so its first byte falls on the last lane of a
 * 16- or 32-lane block, on the first of the next and in the bytes after
 * the last block; whole, cut just before and just after its first byte
 * (the form's first byte the last of a read, its NUL the first of the
 * next, that read's first NUL), after its NUL, at 16, 32, 48, 64; and
 * NUL-free text ending in the form's first byte, then the rest in the
 * next read, that text NUL-free or with a NUL first. Found as the
 * reference finds it: fails when the combined tables leave out the NUL
 * patterns' lanes (checked).
 */
static void test_wide_sparse(void)
{
	static const size_t edges[] = { 16, 32, 48, 64 };
	static const char text[] = "The Tok T o k 9 Tok8 Tokens, ab cd zz top; the Tokens again: T";
	mask_set_t *set = wide_set();
	unsigned char in[200], body[200];
	size_t cuts[4];
	char nm[80];
	unsigned sparse = 0;

	prng_state = prop_seed() ^ 0x165667b1u;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(rnd(100) == 0 ? 0 : 1 + rnd(255));
	for (size_t k = 1; k < 6; k++) {
		for (size_t o = 0; o < 140; o++) {
			size_t d[] = { 0, o, o + 1, o + 2, o + 3, o + wide_len[k] };

			memcpy(body, in, sizeof(body));
			memcpy(body + o, wide_from[k], wide_len[k]);
#ifdef HAVE_TEDDY
			if (set->use_teddy) {
				struct skip_memo memo = { 0, 0, false, false, MEMO_NEW };

				(void)skip_next(set, body, 0, sizeof(body), &memo);
				sparse += memo.mode == MEMO_SPARSE;
			}
#endif
			for (size_t c = 0; c < sizeof(d) / sizeof(d[0]); c++) {
				size_t ncuts = d[c] != 0 && d[c] < sizeof(body) ? 1 : 0;

				cuts[0] = d[c];
				if (!wide_same(set, body, sizeof(body), cuts, ncuts)) {
					FAILF("sparse NULs, form %zu (%s) at %zu, cut at %zu: differs", k,
					      show(wide_from[k], wide_len[k], nm, sizeof(nm)), o, ncuts != 0 ? cuts[0] : 0);
					goto out;
				}
			}
			if (!wide_same(set, body, sizeof(body), edges, 4)) {
				FAILF("sparse NULs, form %zu at %zu, cut at 16, 32, 48, 64: differs", k, o);
				goto out;
			}
		}
	}
	/* Reads of 0 to 61 bytes of text, NUL-free (the text tables and
	 * nul_next()) or with a NUL first (the combined tables), and a NUL
	 * pattern's first byte that begins no text pattern ('q'), then the
	 * rest */
	{
		static const unsigned char q[] = "q\0r\0s\0t\0";
		struct mask_pair qp[2] = {
			{ .from = "Tok9", .from_len = 4, .to = "S3n7", .to_len = 4 },
			{ .from = (const char *)q, .from_len = 8, .to = "Q\0R\0S\0T\0", .to_len = 8 },
		};
		enum mask_set_result res;
		mask_set_t *qs = mask_set_new(qp, 2, MASK_SET_NO_MLOCK, &res);

		CU_ASSERT_FATAL(qs != NULL);
		CU_ASSERT(qs->nul_split && qs->first['q'] == 0 && qs->wfirst['q'] != 0);
		for (size_t t = 0; t < 2 * (sizeof(text) - 1); t++) {
			size_t tl = t % (sizeof(text) - 1);
			bool ok;

			memcpy(body, text, tl);
			if (t >= sizeof(text) - 1 && tl > 0)
				body[0] = 0;
			memcpy(body + tl, q, 8);
			cuts[0] = tl + 1;
			ok = wide_same(qs, body, tl + 8, cuts, 1);
			if (!ok) {
				FAILF("'q\\0r\\0s\\0t\\0' after %zu bytes (NUL first: %d), its 'q' ending the read: differs",
				      tl, t >= sizeof(text) - 1);
				mask_set_free(qs);
				goto out;
			}
		}
		mask_set_free(qs);
	}
#ifdef HAVE_TEDDY
	/* most bodies (one NUL or two in the sample) went the sparse way */
	CU_ASSERT(!set->use_teddy || sparse > 5 * 140 / 2);
#endif
out:
	(void)sparse;
	mask_set_free(set);
}

TEST_REGISTRAR(register_mask_stream_set)
{
	CU_pSuite s = test_suite("mask_stream_set", NULL, NULL);

	test_add(s, "construction errors", test_set_errors);
	test_add(s, "arena hygiene: dontdump, mlock or flagged", test_set_hygiene);
	test_add(s, "arena and hold-back wiped at free", test_set_wipe);
	test_add(s, "hold-back wiped as it shrinks and at finish", test_hold_wipe);
	test_add(s, "percent-encoded forms", test_percent);
	test_add(s, "wide forms: NUL patterns skipped where no NUL is near; split at every offset", test_wide_split);
	test_add(s, "wide forms: reads of 1, 2, 3 and 5 bytes all through", test_wide_reads);
	test_add(s, "wide forms: at every offset of the NUL block filter's blocks, cut at their edges", test_wide_blocks);
	test_add(s, "wide forms: sparse NULs, the combined tables; a NUL-free read ending in a form's first byte",
		 test_wide_sparse);
}

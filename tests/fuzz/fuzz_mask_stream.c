/*
 * fuzz_mask_stream.c - libFuzzer driver for mask/stream.c.
 *
 * The input describes a pattern set, a chunking and a message:
 *
 *   byte 0        number of pairs, 1 + b % 8; bit 3: MASK_SET_PERCENT;
 *                 bit 4: every pair a gap pair (struct mask_pair gaps)
 *   per pair      from_len (1 + b % 12), to_len (b % 16)
 *   then          the from and to bytes of every pair, in order
 *   1 byte        nchunks: 0 + b % 16 chunk lengths follow
 *   nchunks bytes chunk lengths, 1 + b % 64 each, used in a cycle
 *   the rest      the message
 *
 * The message goes through mask_stream_feed() and mask_stream_feed_buffer()
 * in those chunks, through mask_replace_buf() and, when every pair has
 * equal lengths, mask_replace_inplace(). Each output and the per-pair
 * counts must equal a naive leftmost-longest scan (with percent forms
 * generated here, independently of stream.c, from the rules in
 * docs/masking.md; gap pairs found across line breaks and JSON escapes
 * by the rule of docs/masking.md "Line-broken forms", also written
 * here: CR, LF, "\\n" and "\\r"); the hold-back must never exceed
 * mask_set_holdmax(), the longest
 * pattern minus one plus the gap budget. Any difference aborts.
 *
 * Build with `make fuzz`; run e.g.
 *   build/fuzz/fuzz_mask_stream build/fuzz/corpus-fuzz_mask_stream \
 *       tests/fuzz/corpus/fuzz_mask_stream
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mask/mask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPAIRS_MAX 8
#define NCHUNKS_MAX 16

/* One pattern of the reference's expanded list. */
struct rpat {
	const uint8_t *from, *to;
	size_t flen, tlen, origin;
	bool gaps; /* may be found with gap bytes inside */
};

/* Per pair: the raw form plus at most 2 * (2^4 - 1) percent forms. */
#define RPAT_MAX (NPAIRS_MAX * 31)

struct spec {
	struct mask_pair pairs[NPAIRS_MAX];
	size_t npairs;
	bool percent;
	struct rpat rp[RPAT_MAX];
	size_t nrp;
	size_t chunk[NCHUNKS_MAX];
	size_t nchunks;
	const uint8_t *msg;
	size_t len;
	size_t maxlen;
	size_t gap_max; /* gap bytes a match may hold */
};

/* The gap bytes: CR, LF, backslash (docs/masking.md "Line-broken forms"). */
static bool is_gap(uint8_t c)
{
	return c == '\r' || c == '\n' || c == '\\';
}

/* Splits the fuzzer input; false if it is too short to describe a set. */
static bool spec_parse(const uint8_t *d, size_t n, struct spec *s)
{
	size_t o = 0;

	if (n < 1)
		return false;
	s->npairs = 1 + d[o] % NPAIRS_MAX;
	s->percent = (d[o] & 8) != 0;
	for (size_t i = 0; i < NPAIRS_MAX; i++)
		s->pairs[i].gaps = (d[o] & 16) != 0;
	o++;
	s->maxlen = 0;
	if (n - o < 2 * s->npairs)
		return false;
	for (size_t i = 0; i < s->npairs; i++) {
		s->pairs[i].from_len = 1 + d[o++] % 12;
		s->pairs[i].to_len = d[o++] % 16;
		s->pairs[i].pct = MASK_PCT_ALL;
		if (s->pairs[i].from_len > s->maxlen)
			s->maxlen = s->pairs[i].from_len;
	}
	for (size_t i = 0; i < s->npairs; i++) {
		if (n - o < s->pairs[i].from_len + s->pairs[i].to_len)
			return false;
		s->pairs[i].from = d + o;
		o += s->pairs[i].from_len;
		s->pairs[i].to = d + o;
		o += s->pairs[i].to_len;
	}
	if (n - o < 1)
		return false;
	s->nchunks = d[o++] % NCHUNKS_MAX;
	if (n - o < s->nchunks)
		return false;
	for (size_t i = 0; i < s->nchunks; i++)
		s->chunk[i] = 1 + d[o++] % 64;
	s->msg = d + o;
	s->len = n - o;
	/* The percent forms written here are the mixes of up to four
	 * escapable bytes. Beyond, for a space ('+') and for the unreserved
	 * punctuation "-._~" (which Rust's NON_ALPHANUMERIC escapes), set.c
	 * adds class subsets and encoders' forms this driver does not model:
	 * no percent forms then. */
	for (size_t i = 0; s->percent && i < s->npairs; i++) {
		size_t k = 0;

		for (size_t j = 0; j < s->pairs[i].from_len; j++) {
			uint8_t c = ((const uint8_t *)s->pairs[i].from)[j];

			k += !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
			if (c == ' ' || c == '-' || c == '.' || c == '_' || c == '~')
				k = 5;
		}
		if (k > 4)
			s->percent = false;
	}
	return true;
}

static bool unreserved(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* Escapes the bytes of s whose bit is set in esc (all escapable bytes when
 * esc_all), with hex of the given case, into out; returns the length. */
static size_t escape(const uint8_t *s, size_t len, uint32_t esc, bool esc_all, bool lower,
		     uint8_t *out)
{
	const char *hex = lower ? "0123456789abcdef" : "0123456789ABCDEF";
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (esc_all ? unreserved(s[i]) : (esc >> i & 1) == 0) {
			out[n++] = s[i];
			continue;
		}
		out[n++] = '%';
		out[n++] = (uint8_t)hex[s[i] >> 4];
		out[n++] = (uint8_t)hex[s[i] & 15];
	}
	return n;
}

/* The reference's pattern list: pairs in order, then each pair's percent
 * forms: every non-empty subset of its escapable bytes when there are at
 * most 4, else all of them; upper then lower hex per subset; `to` escaped
 * at the same places when it has from's length (whatever bytes sit there),
 * else everywhere. */
static void expand(struct spec *s)
{
	static uint8_t buf[RPAT_MAX * (36 + 45)];
	size_t used = 0;

	s->nrp = 0;
	s->maxlen = 0;
	s->gap_max = 0;
	for (size_t i = 0; i < s->npairs; i++) {
		const struct mask_pair *p = &s->pairs[i];
		bool g = p->gaps && p->from_len == p->to_len && p->from_len >= 2;

		for (size_t j = 0; g && j < p->from_len; j++)
			g = !is_gap(((const uint8_t *)p->from)[j]);
		s->rp[s->nrp++] = (struct rpat){ p->from, p->to, p->from_len, p->to_len, i, g };
		if (p->from_len > s->maxlen)
			s->maxlen = p->from_len;
		if (g && 4 * (p->from_len / 32 + 1) > s->gap_max)
			s->gap_max = 4 * (p->from_len / 32 + 1);
	}
	for (size_t i = 0; s->percent && i < s->npairs; i++) {
		const struct mask_pair *p = &s->pairs[i];
		const uint8_t *f = p->from, *t = p->to;
		size_t pos[12], k = 0, nsub;

		for (size_t j = 0; j < p->from_len; j++)
			if (!unreserved(f[j]))
				pos[k++] = j;
		if (k == 0)
			continue;
		nsub = k <= 4 ? ((size_t)1 << k) - 1 : 1;
		for (size_t sub = 1; sub <= nsub; sub++) {
			uint32_t esc = 0;
			bool same;

			for (size_t b = 0; b < k; b++)
				if (k > 4 || (sub >> b & 1) != 0)
					esc |= 1u << pos[b];
			same = p->to_len == p->from_len;
			for (int lower = 0; lower <= 1; lower++) {
				struct rpat *r = &s->rp[s->nrp++];

				r->from = buf + used;
				r->flen = escape(f, p->from_len, esc, false, lower, buf + used);
				used += r->flen;
				r->to = buf + used;
				r->tlen = escape(t, p->to_len, esc, !same, lower, buf + used);
				used += r->tlen;
				r->origin = i;
				r->gaps = false;
				if (r->flen > s->maxlen)
					s->maxlen = r->flen;
			}
		}
	}
}

/* Message bytes a match of r at p covers, 0 if none: r's bytes in order,
 * for a gap pattern with gaps between them (CR, LF, a backslash and the
 * 'n' or 'r' after it; a backslash before anything else ends it), at
 * most 4 * (flen / 32 + 1) gap bytes; a match with gaps never starts on
 * the letter after a backslash. */
static size_t match_at(const struct spec *s, const struct rpat *r, size_t p)
{
	size_t i = p, j = 0, gaps = 0;

	while (j < r->flen) {
		uint8_t c;

		if (i >= s->len)
			return 0;
		c = s->msg[i];
		if (j > 0 && r->gaps && (c == '\r' || c == '\n')) {
			gaps++;
			i++;
		} else if (j > 0 && r->gaps && c == '\\') {
			size_t b = 1;

			while (i + b < s->len && s->msg[i + b] == '\\')
				b++;
			if (i + b >= s->len || (s->msg[i + b] != 'n' && s->msg[i + b] != 'r'))
				return 0;
			gaps += b + 1;
			i += b + 1;
		} else {
			if (c != r->from[j])
				return 0;
			i++;
			j++;
			continue;
		}
		if (gaps > 4 * (r->flen / 32 + 1))
			return 0;
	}
	if (gaps != 0 && p > 0 && s->msg[p - 1] == '\\' && (s->msg[p] == 'n' || s->msg[p] == 'r'))
		return 0;
	return i - p;
}

/* The semantics, literally: the match covering the most bytes at each
 * position; on a tie one with gaps, then the longer from, then the lower
 * index; of equal from strings only the lowest index. out has room for
 * len * 45 bytes. */
static size_t reference(const struct spec *s, uint8_t *out, uint64_t *counts)
{
	size_t p = 0, w = 0;

	while (p < s->len) {
		size_t best = SIZE_MAX, blen = 0;
		bool bgap = false;

		for (size_t k = 0; k < s->nrp; k++) {
			const struct rpat *r = &s->rp[k];
			size_t n = match_at(s, r, p);
			bool gap = n != r->flen, dup = false;

			for (size_t e = 0; e < k && !dup; e++)
				dup = s->rp[e].flen == r->flen && memcmp(s->rp[e].from, r->from, r->flen) == 0;
			if (n == 0 || dup)
				continue;
			if (best == SIZE_MAX || n > blen || (n == blen && gap && !bgap) ||
			    (n == blen && gap == bgap && r->flen > s->rp[best].flen)) {
				best = k;
				blen = n;
				bgap = gap;
			}
		}
		if (best == SIZE_MAX) {
			out[w++] = s->msg[p++];
			continue;
		}
		if (bgap) {
			size_t j = 0;

			for (size_t i = p; i < p + blen; i++) {
				uint8_t c = s->msg[i];

				if (c == '\\') {
					while (s->msg[i + 1] == '\\')
						out[w++] = s->msg[i++];
					out[w++] = s->msg[i];
					out[w++] = s->msg[++i];
				} else {
					out[w++] = is_gap(c) ? c : s->rp[best].to[j++];
				}
			}
		} else {
			if (s->rp[best].tlen != 0)
				memcpy(out + w, s->rp[best].to, s->rp[best].tlen);
			w += s->rp[best].tlen;
		}
		counts[s->rp[best].origin]++;
		p += blen;
	}
	return w;
}

/* Aborts unless evbuffer b holds exactly want[0..wlen). */
static void expect_same(struct evbuffer *b, const uint8_t *want, size_t wlen)
{
	if (evbuffer_get_length(b) != wlen)
		abort();
	if (wlen != 0 && memcmp(evbuffer_pullup(b, -1), want, wlen) != 0)
		abort();
}

/* Streams the message in the spec's chunks, by pointer or by buffer. */
static void run_stream(const struct spec *s, const mask_set_t *set, bool by_buffer,
		       const uint8_t *want, size_t wlen, const uint64_t *wc)
{
	mask_stream_t *st = mask_stream_new(set);
	struct evbuffer *out = evbuffer_new(), *in = evbuffer_new();
	size_t p = 0, c = 0;

	if (st == NULL || out == NULL || in == NULL)
		abort();
	if (by_buffer && evbuffer_add(in, s->msg, s->len) != 0)
		abort();
	while (p < s->len) {
		size_t n = s->nchunks != 0 ? s->chunk[c++ % s->nchunks] : s->len;
		int rc;

		if (n > s->len - p)
			n = s->len - p;
		rc = by_buffer ? mask_stream_feed_buffer(st, in, n, out)
			       : mask_stream_feed(st, s->msg + p, n, out);
		if (rc != 0 || mask_stream_held(st) + 1 > (s->maxlen ? s->maxlen + s->gap_max : 1))
			abort();
		p += n;
	}
	if (mask_stream_finish(st, out) != 0 || mask_stream_held(st) != 0)
		abort();
	expect_same(out, want, wlen);
	for (size_t k = 0; k < s->npairs; k++)
		if (mask_stream_count(st, k) != wc[k])
			abort();
	mask_stream_free(st);
	evbuffer_free(out);
	evbuffer_free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec s;
	enum mask_set_result res;
	mask_set_t *set;
	uint8_t *want;
	uint64_t wc[NPAIRS_MAX] = { 0 };
	size_t wlen;
	bool equal = true;

	if (!spec_parse(data, size, &s))
		return 0;
	expand(&s);
	set = mask_set_new(s.pairs, s.npairs, MASK_SET_NO_MLOCK | (s.percent ? MASK_SET_PERCENT : 0),
			   &res);
	if (set == NULL)
		abort(); /* every parsed spec is a valid set */
	if (mask_set_maxlen(set) != s.maxlen)
		abort(); /* the percent forms disagree in length */
	if (mask_set_holdmax(set) != (s.maxlen ? s.maxlen - 1 + s.gap_max : 0))
		abort(); /* the gap budget disagrees */
	want = malloc(s.len * 45 + 1);
	if (want == NULL)
		abort();
	wlen = reference(&s, want, wc);

	run_stream(&s, set, false, want, wlen, wc);
	run_stream(&s, set, true, want, wlen, wc);
	{
		struct evbuffer *out = evbuffer_new();
		uint64_t oc[NPAIRS_MAX] = { 0 };
		size_t total = 0, wtotal = 0;

		if (out == NULL || mask_replace_buf(set, s.msg, s.len, out, oc, &total) != 0)
			abort();
		expect_same(out, want, wlen);
		for (size_t k = 0; k < s.npairs; k++) {
			if (oc[k] != wc[k])
				abort();
			wtotal += wc[k];
		}
		if (total != wtotal)
			abort();
		evbuffer_free(out);
	}
	for (size_t k = 0; k < s.nrp; k++)
		equal = equal && s.rp[k].flen == s.rp[k].tlen;
	if (equal) {
		uint8_t *buf = malloc(s.len + 1);

		if (buf == NULL)
			abort();
		memcpy(buf, s.msg, s.len);
		if (mask_replace_inplace(set, buf, s.len, NULL, NULL) != 0 || wlen != s.len ||
		    memcmp(buf, want, wlen) != 0)
			abort();
		free(buf);
	}
	free(want);
	mask_set_free(set);
	return 0;
}

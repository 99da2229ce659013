/*
 * fuzz_mask_stream.c - libFuzzer driver for mask/stream.c.
 *
 * The input describes a pattern set, a chunking and a message:
 *
 *   byte 0        number of pairs, 1 + b % 8
 *   per pair      from_len (1 + b % 12), to_len (b % 16)
 *   then          the from and to bytes of every pair, in order
 *   1 byte        nchunks: 0 + b % 16 chunk lengths follow
 *   nchunks bytes chunk lengths, 1 + b % 64 each, used in a cycle
 *   the rest      the message
 *
 * The message goes through mask_stream_feed() and mask_stream_feed_buffer()
 * in those chunks, through mask_replace_buf() and, when every pair has
 * equal lengths, mask_replace_inplace(). Each output and the per-pair
 * counts must equal a naive leftmost-longest scan; the hold-back must
 * never exceed the longest pattern minus one. Any difference aborts.
 *
 * Build with `make fuzz`; run e.g.
 *   build/fuzz/fuzz_mask_stream build/fuzz/corpus-fuzz_mask_stream \
 *       tests/fuzz/corpus/fuzz_mask_stream
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mask/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPAIRS_MAX 8
#define NCHUNKS_MAX 16

struct spec {
	struct mask_pair pairs[NPAIRS_MAX];
	size_t npairs;
	size_t chunk[NCHUNKS_MAX];
	size_t nchunks;
	const uint8_t *msg;
	size_t len;
	size_t maxlen;
};

/* Splits the fuzzer input; false if it is too short to describe a set. */
static bool spec_parse(const uint8_t *d, size_t n, struct spec *s)
{
	size_t o = 0;

	if (n < 1)
		return false;
	s->npairs = 1 + d[o++] % NPAIRS_MAX;
	s->maxlen = 0;
	if (n - o < 2 * s->npairs)
		return false;
	for (size_t i = 0; i < s->npairs; i++) {
		s->pairs[i].from_len = 1 + d[o++] % 12;
		s->pairs[i].to_len = d[o++] % 16;
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
	return true;
}

/* The semantics, literally: longest from at each position, lowest index
 * on equal strings. out has room for len * 16 bytes. */
static size_t reference(const struct spec *s, uint8_t *out, uint64_t *counts)
{
	size_t p = 0, w = 0;

	while (p < s->len) {
		size_t best = SIZE_MAX, blen = 0;

		for (size_t k = 0; k < s->npairs; k++) {
			const struct mask_pair *pr = &s->pairs[k];
			if (pr->from_len > blen && pr->from_len <= s->len - p &&
			    memcmp(s->msg + p, pr->from, pr->from_len) == 0) {
				best = k;
				blen = pr->from_len;
			}
		}
		if (best == SIZE_MAX) {
			out[w++] = s->msg[p++];
			continue;
		}
		memcpy(out + w, s->pairs[best].to, s->pairs[best].to_len);
		w += s->pairs[best].to_len;
		counts[best]++;
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
		if (rc != 0 || mask_stream_held(st) + 1 > (s->maxlen ? s->maxlen : 1))
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
	set = mask_set_new(s.pairs, s.npairs, MASK_SET_NO_MLOCK, &res);
	if (set == NULL)
		abort(); /* every parsed spec is a valid set */
	want = malloc(s.len * 16 + 1);
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
	for (size_t k = 0; k < s.npairs; k++)
		equal = equal && s.pairs[k].from_len == s.pairs[k].to_len;
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

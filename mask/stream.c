/*
 * stream.c - streaming multi-pattern substituter (SPEC §4.2, §4.3).
 *
 * Scans with the automaton set.c compiled (automaton.h): a per-stream scanner that turns its
 * "pattern ends here" reports into leftmost-longest non-overlapping
 * replacements without ever looking back at input it no longer holds.
 * docs/masking.md explains the design; the key facts:
 *
 *  - A position s is *final* once no pattern starting at s can still end
 *    in future input. With the automaton in state q after position i, that
 *    holds for every s < i + 1 - live(q), where live(q) is the depth of the
 *    longest suffix state of q (q itself or along its failure chain) that
 *    has a child. live(q) <= maxlen - 1, which bounds the hold-back
 *    (plus the gap budget with gap patterns: mask_set_holdmax()).
 *  - Each report (pattern of length L ends at i) is stored as "longest
 *    match starting at s = i + 1 - L" in a ring indexed by s. Final
 *    positions are resolved in order: a start with a stored match is
 *    replaced and everything it covers skipped; other bytes are literal.
 *  - In the root state (no partial match) nothing is pending, so runs of
 *    bytes at which no pattern starts are skipped 16 at a time (SSSE3
 *    nibble filter on three bytes, else memchr / SSE2 compares / a table
 *    on one or two) and appended as one span. A position that passes is
 *    confirmed on its first four bytes (a hashed bitmap of the patterns'
 *    4-byte prefixes) before the automaton runs, so data where 2-byte
 *    prefixes are common ("gh" of "ghp_" in English text) stays on the
 *    fast path.
 *  - Gap patterns (struct mask_pair gaps) are also found with line breaks
 *    inside. A second state, the gap path, follows the automaton over the
 *    input without its gap bytes (automaton.h gap_byte()) from the first
 *    gap after a partial match on, and stops when no gap is left inside
 *    its string: the main state finds everything without gaps, so the
 *    gap path only adds. A match it finds covers more input bytes than
 *    its pattern, so each pending match keeps its length in input bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "automaton.h"

/* evbuffer_remove_buffer() returns an int: move at most this per call. */
#define MOVE_STEP_BYTES (1u << 30)

/* The longest match recorded as starting at one position: 1 + pattern
 * (0: none) and the input bytes it covers (its from_len, more with gaps
 * inside). */
struct slot {
	uint32_t pat;
	uint32_t len;
};

/* The gap path: the automaton's state over the input without its gap
 * bytes, with where each byte it consumed was. */
struct gap_path {
	uint32_t state; /* 0: not following */
	bool esc;       /* it skipped a backslash just before: the byte now
			 * must be one more, 'n' or 'r', or no match spans them */
	unsigned char last; /* the byte before the current one (any path) */
	uint32_t lmask;     /* letter's bits - 1 (a power of two, at least 8,
			     * above the longest gap pattern plus its gaps) */
	uint8_t *letter;    /* [(lmask + 1) / 8] bit per position: the letter of a
			     * "\\n" or "\\r" escape, so no match with gaps
			     * starts there */
	uint64_t nv;    /* bytes consumed since the stream began */
	uint64_t *at;   /* [mask + 1]: message position of consumed byte v */
	uint32_t mask;  /* ring size - 1 (a power of two > the longest gap
			 * pattern: the path's state is never deeper) */
};

struct mask_stream {
	const mask_set_t *set; /* not owned */
	uint32_t state;        /* automaton state after the last byte scanned */
	uint64_t pos;          /* message position of the next input byte */
	uint64_t lit;          /* first position neither emitted nor replaced */
	uint64_t scan;         /* first position not yet final; lit <= scan <= pos */
	struct slot *ring;     /* [ring_mask + 1]: longest match starting at s */
	uint32_t ring_mask;    /* ring size - 1 (a power of two > holdmax + 1) */
	struct gap_path gap;   /* sets with gap patterns only */
	unsigned char *scratch;/* [holdmax + 1]: a match with gaps, rebuilt */
	size_t npending;       /* nonzero ring entries */
	unsigned char *hold;   /* input bytes [lit, pos) kept between calls */
	size_t hold_len;       /* == pos - lit between calls */
	size_t hold_cap;       /* mask_set_holdmax(), at least 1 */
	uint64_t *counts;      /* [npairs] replacements per pair; NULL: not kept */
	uint64_t total;        /* replacements, all pairs */
	bool failed;           /* an append failed: only reset or free may follow */
	unsigned char fcarry[2]; /* a scan with case ignored: the start of a wide
				  * form (fold_wide()) its last call ended in */
	uint8_t fcarry_len;
	bool fafter_i;         /* the last byte the fold wrote was an 'i' a U+0307 may
				* follow (fold_run()) */
	bool clean;            /* reset, and given nothing since: a reset has nothing
				* to clear (issue 16, round 49: a kept-alive request
				* reset each stream twice, a ring of some KiB each time) */
};

/* The carried start of a wide form, wiped (it may be a value's). */
static void fcarry_wipe(mask_stream_t *st)
{
	explicit_bzero(st->fcarry, sizeof(st->fcarry));
	st->fcarry_len = 0;
	st->fafter_i = false;
}

/* Where the bytes of the positions being emitted live during one call. */
struct feed_ctx {
	struct evbuffer *out;       /* destination; NULL: in place */
	unsigned char *data;        /* this call's input (pointer and in-place modes) */
	struct evbuffer *in;        /* this call's input (buffer mode), front at max(lit, in_base) */
	uint64_t in_base;           /* position of the first input byte of this call */
	uint64_t hold_base;         /* position of hold[0] (== lit at call start) */
	const unsigned char *hold;  /* bytes [hold_base, in_base) */
	bool count_only;            /* a scan (mask_stream_scan_folded()): matches
				     * are counted, nothing is written */
};

#ifdef MASK_STREAM_TEST_HOOKS
/* Unit tests (which #include this file) observe memory just after it is
 * wiped and before it is released, to check the wipe. */
static void (*test_wipe_hook)(const void *p, size_t len, const char *what);
#define WIPED(p, len, what)                                                     \
	do {                                                                   \
		if (test_wipe_hook != NULL)                                    \
			test_wipe_hook((p), (len), (what));                    \
	} while (0)
#else
#define WIPED(p, len, what) ((void)0)
#endif

/* ------------------------------------------------------------------ */
/* Skipping input in the root state                                     */
/* ------------------------------------------------------------------ */

/*
 * May a match start at p[j] (j < n)? The skips call this for positions
 * whose first byte (or first two) begin some pattern. Yes when a pattern
 * of 1 to 3 bytes starts with the first two bytes (short2; one byte: any
 * second byte) or a longer one with the first four (quad; hashed, so a
 * few false yeses, which only cost a trip through the automaton). Near
 * the end of the segment the next bytes are unknown: with one byte left,
 * yes; with two or three, when the first two begin some pattern (bigram).
 * The automaton then carries the state into the next call exactly as
 * without the skip, so the hold-back stays as small as ever.
 */
static inline bool skip_cand(const mask_set_t *set, const unsigned char *p, size_t j, size_t n)
{
	uint32_t ab, u;

	if (j + 1 >= n)
		return true;
	ab = (uint32_t)p[j] << 8 | p[j + 1];
	if (bit_get(set->short2, ab))
		return true;
	if (j + 4 > n)
		return bit_get(set->bigram, ab);
	memcpy(&u, p + j, 4);
	return bit_get(set->quad, quad_hash(u));
}

/*
 * May a match broken by the gap bytes at k start at s (k - 3 <= s < k)?
 * Its bytes are p[s..k), then those after the gaps (the rule of
 * gap_feed(), fresh at k). As skip_cand() for a contiguous start: its
 * first two bytes begin a pattern of 1 to 3 bytes (short2) or its first
 * four a longer one (quad); when p ends first, its first two begin some
 * pattern (bigram), or it has one byte only; the same when the gaps
 * pass the budget after its second byte. No when p[s..k) holds a gap
 * byte (the window of that earlier gap covers s) or the gaps pass the
 * budget before its second byte.
 */
static inline bool gap_cand(const mask_set_t *set, const unsigned char *p, size_t s, size_t k,
			    size_t n)
{
	unsigned char v[4];
	size_t nv = 0, t = k, gaps = 0;
	bool esc = false;
	uint32_t ab, u;

	for (size_t x = s; x < k; x++) {
		if (gap_byte(p[x]))
			return false;
		v[nv++] = p[x];
	}
	/* Most windows fail on their first two bytes: tested as soon as
	 * they are known. */
	if (nv >= 2 && !bit_get(set->bigram, (uint32_t)v[0] << 8 | v[1]))
		return false;
	while (nv < 4 && t < n) {
		unsigned char c = p[t++];
		bool gap = esc ? c == '\\' || gap_letter(c) : gap_byte(c);

		if (esc && !gap) {
			/* A backslash run that began no escape: no match spans
			 * it (a short one may end before it). */
			if (nv < 2)
				return false;
			break;
		}
		esc = c == '\\';
		if (!gap) {
			v[nv++] = c;
			if (nv == 2 && !bit_get(set->bigram, (uint32_t)v[0] << 8 | v[1]))
				return false;
		} else if (++gaps > set->gap_max) {
			/* No match has its second byte this far; a short one
			 * may end before: decide on two bytes. */
			if (nv < 2)
				return false;
			break;
		}
	}
	if (nv < 4)
		return true; /* the first two begin some pattern, or one byte */
	ab = (uint32_t)v[0] << 8 | v[1];
	if (bit_get(set->short2, ab))
		return true;
	memcpy(&u, v, 4);
	return bit_get(set->quad, quad_hash(u));
}

/*
 * The first of the (up to) three offsets before gap byte k (none before
 * p) where a match broken at k may start (its first byte begins a pattern
 * and gap_cand() agrees), k if none: the root skip may then pass the gap.
 */
static inline size_t gap_window(const mask_set_t *set, const unsigned char *p, size_t k, size_t n)
{
	for (size_t s = k > 3 ? k - 3 : 0; s < k; s++)
		if (set->first[p[s]] != 0 && gap_cand(set, p, s, k, n))
			return s;
	return k;
}

/* gap_window() of each gap byte p[k], k in (j, j + 3] and below n: the
 * first that starts before j, else j. A candidate j returned by the skip
 * must not pass over a broken match that starts just before it. */
static size_t gap_ahead(const mask_set_t *set, const unsigned char *p, size_t n, size_t j)
{
	size_t r = j;

	for (size_t k = j + 1; k <= j + 3 && k < n; k++) {
		if (gap_byte(p[k])) {
			size_t w = gap_window(set, p, k, n);

			if (w < r)
				r = w;
		}
	}
	return r;
}

#ifdef HAVE_TEDDY
/* The first window start (gap_window()) of the gap bytes at lanes i + k,
 * k the bits of m; n if none. */
static inline size_t gap_lanes(const mask_set_t *set, const unsigned char *p, size_t n, size_t i,
			       uint64_t m)
{
	while (m != 0) {
		size_t k = i + (size_t)__builtin_ctzll(m);
		size_t w = gap_window(set, p, k, n);

		if (w < k)
			return w;
		m &= m - 1;
	}
	return n;
}

/*
 * Gap lanes of a Teddy block where a match broken within its first four
 * bytes may start, from lane masks of the filter's steps (supersets: a
 * pattern byte passes its step): f1, a first byte at the lane; f2, a
 * second byte after it; f12, both in one bucket; g, a gap byte; bs, a
 * backslash. Lane k passes when a match may start at k - 2 or k - 3 (f12
 * there), or at k - 1 (f1) with its second byte after the gap run: at
 * k + 1 after a CR or LF, at k + 2 after two of them; a run that starts
 * with or holds a backslash passes (an escape). c carries the previous
 * block's last lanes (gap_carry); width: 16 or 32 lanes, and the lanes
 * past the block count as passing.
 */
struct gap_carry {
	uint64_t f12; /* f12 of the three positions before the block (bit 0: -3) */
	uint64_t f1;  /* f1 of the position before it */
};

static inline uint64_t gap_pass(uint64_t f1, uint64_t f2, uint64_t f12, uint64_t g, uint64_t bs,
				unsigned width, struct gap_carry *c)
{
	uint64_t all = (1ull << width) - 1;
	uint64_t x12 = f12 << 3 | c->f12;        /* bit k + 3: position k */
	uint64_t x1 = f1 << 1 | c->f1;           /* bit k + 1: position k */
	uint64_t past1 = 1ull << (width - 1);    /* k + 1 past the block */
	uint64_t past2 = 3ull << (width - 2);    /* k + 2 past the block */
	uint64_t nlcr = g & ~bs;
	uint64_t g1 = g >> 1 | past1, nlcr1 = nlcr >> 1, bs1 = bs >> 1 | past1;
	uint64_t g2 = g >> 2 | past2;
	uint64_t f2n = f2 >> 1 | past1;          /* f2 at k + 1: second byte at k + 2 */
	uint64_t after = bs | (nlcr & ((~g1 & f2) | (nlcr1 & (f2n | g2)) | bs1));

	c->f12 = f12 >> (width - 3) & 7;
	c->f1 = f1 >> (width - 1) & 1;
	return g & all & ((x12 | x12 >> 1) | (x1 & after));
}

/* The carry for a vector loop that starts at offset b of p: the exact
 * tables for the positions before it (first bytes, first two bytes). */
static struct gap_carry gap_carry_at(const mask_set_t *set, const unsigned char *p, size_t b)
{
	struct gap_carry c = { 0, 0 };

	for (size_t d = 1; d <= 3 && d <= b; d++)
		if (bit_get(set->bigram, (uint32_t)p[b - d] << 8 | p[b - d + 1]))
			c.f12 |= 1ull << (3 - d);
	if (b >= 1 && set->first[p[b - 1]] != 0)
		c.f1 = 1;
	return c;
}

#endif

#ifdef HAVE_TEDDY
/* The first lane i + k, for the bits k set in bits (lanes that passed the
 * Teddy filter), that skip_cand() confirms; n if none. */
static inline size_t teddy_confirm(const mask_set_t *set, const unsigned char *p, size_t n, size_t i,
				   uint32_t bits)
{
	while (bits != 0) {
		size_t j = i + (size_t)__builtin_ctz(bits);

		if (skip_cand(set, p, j, n))
			return j;
		bits &= bits - 1;
	}
	return n;
}

/* Where the Teddy block at i stops: the first lane of bits that
 * skip_cand() confirms or the first gap window of mg (gap_lanes()),
 * whichever is first, moved back before a broken match that starts just
 * before it (gap_ahead()); n if neither. The SSE and AVX2 loops share it:
 * only their filters differ. */
static inline size_t block_stop(const mask_set_t *set, const unsigned char *p, size_t n, size_t i, uint32_t bits,
				uint64_t mg)
{
	size_t jt = bits != 0 ? teddy_confirm(set, p, n, i, bits) : n;
	size_t jg = mg != 0 ? gap_lanes(set, p, n, i, mg) : n;
	size_t j = jt < jg ? jt : jg;

	return j < n && set->gap_max != 0 ? gap_ahead(set, p, n, j) : j;
}

/*
 * Offset in p[0..n) (n >= i + 18) of the first lane, among the full
 * 16-byte blocks from i on, that passes the Teddy filter and skip_cand(),
 * or (a set with gap patterns) where a match broken within its first
 * four bytes may start: a gap byte with one of the three bytes before it
 * in the first-byte tables, confirmed by gap_window(). Sets *done to the
 * offset scanning stopped at when there is none.
 *
 * tab: the nibble tables, set->teddy, or set->cteddy where the NUL
 * patterns are looked for too (skip_root()).
 */
__attribute__((target("ssse3"))) static size_t skip_teddy(const mask_set_t *set, const __m128i *tab,
							   const unsigned char *p, size_t i, size_t n,
							   size_t *done)
{
	const __m128i lo1 = tab[0], hi1 = tab[1];
	const __m128i lo2 = tab[2], hi2 = tab[3];
	const __m128i lo3 = tab[4], hi3 = tab[5];
	const __m128i nib = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
	const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), bs = _mm_set1_epi8('\\');
	const bool gaps = set->gap_max != 0;
	struct gap_carry gc = gaps ? gap_carry_at(set, p, i) : (struct gap_carry){ 0, 0 };

	for (; i + 18 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
		__m128i z = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 2));
		__m128i a1 = _mm_and_si128(_mm_shuffle_epi8(lo1, _mm_and_si128(x, nib)),
					   _mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(x, 4), nib)));
		__m128i a2 = _mm_and_si128(_mm_shuffle_epi8(lo2, _mm_and_si128(y, nib)),
					   _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(y, 4), nib)));
		__m128i r12 = _mm_and_si128(a1, a2);
		__m128i r = _mm_and_si128(
			r12, _mm_and_si128(_mm_shuffle_epi8(lo3, _mm_and_si128(z, nib)),
					   _mm_shuffle_epi8(hi3, _mm_and_si128(_mm_srli_epi16(z, 4), nib))));
		unsigned bits;
		uint64_t mg = 0;
		size_t j;

		bits = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(r, zero)) & 0xffffu;
		if (gaps) {
			__m128i g = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_cmpeq_epi8(x, cr)),
						 _mm_cmpeq_epi8(x, bs));
			mg = gap_pass(~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a1, zero)) & 0xffffu,
				      ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a2, zero)) & 0xffffu,
				      ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(r12, zero)) & 0xffffu,
				      (uint32_t)_mm_movemask_epi8(g),
				      (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, bs)), 16, &gc);
		}
		if ((bits != 0 || mg != 0) && (j = block_stop(set, p, n, i, bits, mg)) < n)
			return j;
	}
	*done = i;
	return n;
}

/* skip_teddy() with AVX2: the same tables in both 128-bit halves, 32
 * lanes per step from offset 0 (n >= 34). */
__attribute__((target("avx2"))) static size_t skip_teddy32(const mask_set_t *set, const __m128i *tab,
							   const unsigned char *p, size_t n, size_t *done)
{
	const __m256i lo1 = _mm256_broadcastsi128_si256(tab[0]);
	const __m256i hi1 = _mm256_broadcastsi128_si256(tab[1]);
	const __m256i lo2 = _mm256_broadcastsi128_si256(tab[2]);
	const __m256i hi2 = _mm256_broadcastsi128_si256(tab[3]);
	const __m256i lo3 = _mm256_broadcastsi128_si256(tab[4]);
	const __m256i hi3 = _mm256_broadcastsi128_si256(tab[5]);
	const __m256i nib = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
	const __m256i bs = _mm256_set1_epi8('\\');
	const bool gaps = set->gap_max != 0;
	struct gap_carry gc = { 0, 0 };
	size_t i = 0;

	for (; i + 34 <= n; i += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 1));
		__m256i z = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 2));
		__m256i a1 = _mm256_and_si256(_mm256_shuffle_epi8(lo1, _mm256_and_si256(x, nib)),
					      _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib)));
		__m256i a2 = _mm256_and_si256(_mm256_shuffle_epi8(lo2, _mm256_and_si256(y, nib)),
					      _mm256_shuffle_epi8(hi2, _mm256_and_si256(_mm256_srli_epi16(y, 4), nib)));
		__m256i r12 = _mm256_and_si256(a1, a2);
		__m256i r = _mm256_and_si256(
			r12, _mm256_and_si256(_mm256_shuffle_epi8(lo3, _mm256_and_si256(z, nib)),
					      _mm256_shuffle_epi8(hi3, _mm256_and_si256(_mm256_srli_epi16(z, 4), nib))));
		uint32_t bits;
		uint64_t mg = 0;
		size_t j;

		bits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r, zero));
		if (gaps) {
			__m256i g = _mm256_or_si256(
				_mm256_or_si256(_mm256_cmpeq_epi8(x, nl), _mm256_cmpeq_epi8(x, cr)),
				_mm256_cmpeq_epi8(x, bs));
			mg = gap_pass((uint32_t)~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a1, zero)),
				      (uint32_t)~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a2, zero)),
				      (uint32_t)~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r12, zero)),
				      (uint32_t)_mm256_movemask_epi8(g),
				      (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, bs)), 32, &gc);
		}
		if ((bits != 0 || mg != 0) && (j = block_stop(set, p, n, i, bits, mg)) < n)
			return j;
	}
	*done = i;
	return n;
}
#endif

/* ------------------------------------------------------------------ */
/* Scanning                                                             */
/* ------------------------------------------------------------------ */

#ifdef HAVE_TEDDY
/* Up to SKIP_VEC_MAX first bytes, no SSSE3: offset of the first byte of
 * p[0..n) among the full 16-byte blocks from *i on that passes the SSE2
 * compares and skip_cand(), n if none; *i ends where scanning stopped. */
static size_t skip_sse2(const mask_set_t *set, const unsigned char *p, size_t n, size_t *ip)
{
	const __m128i *v = set->first_vec, *w = set->second_vec;
	unsigned nf = set->nfirst, ns = set->nsecond;
	size_t i = *ip;

	/* Lane j: p[i + j] is a first byte and p[i + j + 1] a second byte
	 * (of possibly different patterns); the exact pair is checked for
	 * the few lanes that pass. */
	for (; i + 17 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i m = _mm_cmpeq_epi8(x, v[0]);
		unsigned bits;

		for (unsigned j = 1; j < nf; j++)
			m = _mm_or_si128(m, _mm_cmpeq_epi8(x, v[j]));
		if (ns <= SKIP_VEC_MAX) {
			__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
			__m128i m2 = _mm_cmpeq_epi8(y, w[0]);

			for (unsigned j = 1; j < ns; j++)
				m2 = _mm_or_si128(m2, _mm_cmpeq_epi8(y, w[j]));
			m = _mm_and_si128(m, m2);
		}
		bits = (unsigned)_mm_movemask_epi8(m);
		while (bits != 0) {
			size_t j = i + (size_t)__builtin_ctz(bits);

			if (skip_cand(set, p, j, n)) {
				*ip = i;
				return j;
			}
			bits &= bits - 1;
		}
	}
	*ip = i;
	return n;
}
#endif

/*
 * Offset of the first byte of p[0..n) at which a match may start (its
 * first four bytes begin some pattern, see skip_cand), n if none.
 * Skipping a byte at which no match starts leaves the automaton correctly
 * in the root: the longest suffix that is a pattern prefix starts after
 * it. With SSSE3: the nibble filter on three bytes (skip_teddy; with AVX2
 * 32 bytes per step, skip_teddy32). Else one
 * first byte: memchr; up to SKIP_VEC_MAX first bytes: SSE2 compares of 16
 * bytes (first and second byte sets); more: a table lookup per byte.
 * Every candidate is confirmed with skip_cand(). A set with gap patterns
 * also stops where a match broken within its first four bytes may start
 * (gap_window(): its first bytes are not contiguous, so skip_cand() would
 * not see it), in the Teddy loops or byte by byte.
 *
 * nul (nul_split with the Teddy loops only): SKIP_NUL_ANY, the NUL
 * patterns, out of first and teddy, are looked for in the same pass:
 * the Teddy loops run on set->cteddy, both tables in one lookup
 * (perf48m: a second pass over each block for the NUL patterns made
 * binary data, a NUL every 256 bytes or so, 40-50% slower to scan), and
 * the bytes after the last block go one by one, a NUL pattern's first
 * byte with a NUL there or next, or at the last byte of p (its NUL may
 * come in the next call).
 */
enum skip_nul { SKIP_NUL_NONE, SKIP_NUL_ANY };

static size_t skip_root(const mask_set_t *set, const unsigned char *p, size_t n, enum skip_nul nul)
{
	size_t i = 0;

	if (set->nfirst == 0 && nul == SKIP_NUL_NONE)
		return n;
#ifdef HAVE_TEDDY
	if (set->use_teddy && n >= 18) {
		const __m128i *tab = nul == SKIP_NUL_ANY ? set->cteddy : set->teddy;
		size_t j;

		if (set->use_teddy32 && n >= 34) {
			/* The 16-lane loop takes what is left of 32-byte steps. */
			j = skip_teddy32(set, tab, p, n, &i);
			if (j < n)
				return j;
			if (n - i >= 18) {
				j = skip_teddy(set, tab, p, i, n, &i);
				if (j < n)
					return j;
			}
			goto tail;
		}
		j = skip_teddy(set, tab, p, 0, n, &i);
		if (j < n)
			return j;
		goto tail;
	}
#endif
	/* The NUL patterns too, in fewer bytes than a block: byte by byte. */
	if (nul == SKIP_NUL_ANY)
		goto tail;
	/* Gap patterns without the Teddy loops: byte by byte below. */
	if (set->gap_max != 0)
		goto tail;
	if (set->nfirst == 1) {
		while (i < n) {
			const unsigned char *hit = memchr(p + i, set->first_list[0], n - i);

			if (hit == NULL)
				return n;
			i = (size_t)(hit - p);
			if (skip_cand(set, p, i, n))
				return i;
			i++;
		}
		return n;
	}
#ifdef HAVE_TEDDY
	if (set->nfirst <= SKIP_VEC_MAX) {
		size_t j = skip_sse2(set, p, n, &i);

		if (j < n)
			return j;
	}
#endif
tail:
	for (; i < n; i++) {
		if (set->gap_max != 0 && gap_byte(p[i])) {
			size_t w = gap_window(set, p, i, n);

			if (w < i)
				return w;
		}
		/* a NUL pattern: its NUL here or next (NUL_LEAD), or in the
		 * next call */
		if ((set->first[p[i]] ||
		     (nul == SKIP_NUL_ANY && set->wfirst[p[i]] && (i + 1 >= n || p[i] == 0 || p[i + 1] == 0))) &&
		    skip_cand(set, p, i, n))
			return set->gap_max != 0 ? gap_ahead(set, p, n, i) : i;
	}
	return n;
}

/* Appends the input bytes of positions [a, b) to the output (or leaves
 * them in place), from the hold-back and/or this call's input. */
static int emit_literal(const struct feed_ctx *ctx, uint64_t a, uint64_t b)
{
	if (a >= b)
		return 0;
	if (a < ctx->in_base) {
		uint64_t e = b < ctx->in_base ? b : ctx->in_base;

		if (ctx->out != NULL &&
		    evbuffer_add(ctx->out, ctx->hold + (a - ctx->hold_base), (size_t)(e - a)) != 0)
			return -1;
		a = e;
	}
	if (a >= b || ctx->out == NULL)
		return 0;
	if (ctx->in == NULL)
		return evbuffer_add(ctx->out, ctx->data + (a - ctx->in_base), (size_t)(b - a));
	/* Buffer mode: in's front is at a; move, relinking whole chains. */
	while (a < b) {
		size_t n = b - a > MOVE_STEP_BYTES ? MOVE_STEP_BYTES : (size_t)(b - a);

		if (evbuffer_remove_buffer(ctx->in, ctx->out, n) != (int)n)
			return -1;
		a += n;
	}
	return 0;
}

/* Copies the input bytes of positions [a, b) into dst, from the
 * hold-back and this call's input, whose front is at max(a, in_base). */
static int copy_span(const struct feed_ctx *ctx, uint64_t a, uint64_t b, unsigned char *dst)
{
	if (a < ctx->in_base) {
		uint64_t e = b < ctx->in_base ? b : ctx->in_base;

		memcpy(dst, ctx->hold + (a - ctx->hold_base), (size_t)(e - a));
		dst += e - a;
		a = e;
	}
	if (a >= b)
		return 0;
	if (ctx->in == NULL) {
		memcpy(dst, ctx->data + (a - ctx->in_base), (size_t)(b - a));
		return 0;
	}
	return evbuffer_copyout(ctx->in, dst, (size_t)(b - a)) == (ev_ssize_t)(b - a) ? 0 : -1;
}

/*
 * Rebuilds in st->scratch the len input bytes at p where pattern pt was
 * found with gaps: each gap stays (CR, LF, "\\n", "\\\\n"...: automaton.h),
 * the others become pt's `to`, in order. -1 if they do not add up (a bug: the stream fails
 * rather than let the value through).
 */
static int rebuild_gapped(mask_stream_t *st, const struct feed_ctx *ctx, uint64_t p, uint32_t len,
			  const struct mask_pat *pt)
{
	const unsigned char *to = st->set->bytes + pt->to_off;
	unsigned char *b = st->scratch;
	size_t j = 0;

	if (copy_span(ctx, p, p + len, b) != 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		size_t g = gap_token(b, i, len);

		if (g != 0) {
			i += g - 1;
		} else if (gap_byte(b[i]) || j == pt->to_len) {
			return -1; /* a backslash run without its letter */
		} else {
			b[i] = to[j++];
		}
	}
	return j == pt->to_len ? 0 : -1;
}

/* Replaces positions [p, p + len) with pattern k's `to` (len: its
 * from_len, or more when it was found with gaps, which stay). */
static int emit_replace(mask_stream_t *st, const struct feed_ctx *ctx, uint64_t p, uint32_t k,
			uint32_t len)
{
	const mask_set_t *set = st->set;
	const struct mask_pat *pt = &set->pat[k];
	const unsigned char *to = set->bytes + pt->to_off;
	size_t to_len = pt->to_len;
	uint64_t end = p + len;

	if (ctx->count_only) {
		/* A scan: nothing is written, the match is only counted. */
		if (st->counts != NULL)
			st->counts[pt->origin]++;
		st->total++;
		return 0;
	}
	if (len != pt->from_len) {
		if (rebuild_gapped(st, ctx, p, len, pt) != 0) {
			explicit_bzero(st->scratch, len);
			errno = EINVAL;
			return -1;
		}
		to = st->scratch;
		to_len = len;
	}

	if (ctx->in != NULL && end > ctx->in_base) {
		uint64_t a = p > ctx->in_base ? p : ctx->in_base;

		if (evbuffer_drain(ctx->in, (size_t)(end - a)) != 0)
			return -1;
	}
	if (ctx->out == NULL) {
		/* In place: equal lengths, and [p, end) is all in data. */
		memcpy(ctx->data + (p - ctx->in_base), to, to_len);
	} else if (to_len != 0 && evbuffer_add(ctx->out, to, to_len) != 0) {
		return -1;
	}
	if (to == st->scratch)
		explicit_bzero(st->scratch, len);
	if (st->counts != NULL)
		st->counts[pt->origin]++;
	st->total++;
	return 0;
}

/*
 * Records the patterns ending at position pos - 1 in state q: for each,
 * its start s keeps the longest pattern seen starting there. Starts
 * before lit are inside an earlier replacement and ignored. The output
 * chain goes from the longest pattern to the shortest.
 */
static inline void slot_put(mask_stream_t *st, uint64_t s, uint32_t pat, uint32_t len)
{
	struct slot *sl = &st->ring[s & st->ring_mask];

	if (sl->pat == 0) {
		sl->pat = pat;
		sl->len = len;
		st->npending++;
	} else if (sl->len < len) {
		sl->pat = pat;
		sl->len = len;
	}
}

static inline void record(mask_stream_t *st, uint32_t q)
{
	const mask_set_t *set = st->set;
	uint32_t r = set->node[q].pat != 0 ? q : set->node[q].out;

	for (; r != 0; r = set->node[r].out) {
		const struct mask_node *n = &set->node[r];
		uint64_t s = st->pos - n->depth;

		if (s >= st->lit)
			slot_put(st, s, n->pat, n->depth);
	}
}

/* ------------------------------------------------------------------ */
/* The gap path                                                         */
/* ------------------------------------------------------------------ */

/* Message position of the first of the last d bytes the gap path
 * consumed (d <= maxlen). */
static inline uint64_t gap_from(const mask_stream_t *st, uint32_t d)
{
	return st->gap.at[(st->gap.nv - d) & st->gap.mask];
}

static inline void gap_stop(mask_stream_t *st)
{
	st->gap.state = 0;
	st->gap.esc = false;
}

/* The patterns the gap path ends at position pos in state g that hold a
 * gap: each is recorded at its first byte with the input it covers. */
static void gap_record(mask_stream_t *st, uint32_t g)
{
	const mask_set_t *set = st->set;
	uint32_t r = set->node[g].pat != 0 ? g : set->node[g].out;

	for (; r != 0; r = set->node[r].out) {
		const struct mask_node *n = &set->node[r];
		uint64_t s = gap_from(st, n->depth);
		uint64_t len = st->pos + 1 - s;

		/* Its own budget; never from the letter of an escape. */
		if (set->pat[n->pat - 1].gaps && len != n->depth && s >= st->lit &&
		    len - n->depth <= gap_budget(n->depth) &&
		    !(st->gap.letter[(s & st->gap.lmask) >> 3] >> (s & 7) & 1))
			slot_put(st, s, n->pat, (uint32_t)len);
	}
}

/* The longest suffix state of g (along the failure links) no deeper than
 * the longest gap pattern: what deeper holds can only end in patterns
 * without gaps, which the main state finds. */
static inline uint32_t gap_trim(const mask_set_t *set, uint32_t g)
{
	while (set->node[g].depth > set->gap_maxlen)
		g = set->node[g].fail;
	return g;
}

/*
 * The gap path's step on byte c at position pos, q being the main state
 * before c. A gap byte after a partial match starts it in q (its string
 * is the last depth(q) input bytes). A gap byte is skipped while the
 * gaps inside the path's string stay within the set's budget (else a
 * shorter suffix, along the failure links, that fits); any other byte is
 * a step. The path stops in the root, when its string no longer holds a
 * gap (the main state then holds that string or a longer one), or when
 * nothing can follow.
 */
static void gap_feed(mask_stream_t *st, uint32_t q, unsigned char c)
{
	const mask_set_t *set = st->set;
	struct gap_path *gp = &st->gap;
	uint32_t g = gp->state;
	uint64_t bit = st->pos & gp->lmask;
	bool letter = gp->last == '\\' && gap_letter(c);

	/* Which positions hold the letter of an escape, for gap_record(). */
	if (letter)
		gp->letter[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	else
		gp->letter[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
	gp->last = c;
	if (g != 0 && gp->esc && c != '\\' && !gap_letter(c))
		gap_stop(st); /* the backslashes began no escape: nothing spans them */
	g = gp->state;
	if (g == 0) {
		uint32_t d;

		if (q == 0 || !gap_byte(c) || (g = gap_trim(set, q)) == 0)
			return;
		/* Only what starts after the last replacement can match. */
		while (g != 0 && st->pos - set->node[g].depth < st->lit)
			g = set->node[g].fail;
		if (g == 0)
			return;
		d = set->node[g].depth;
		for (uint32_t k = 0; k < d; k++)
			gp->at[(gp->nv + k) & gp->mask] = st->pos - d + k;
		gp->nv += d;
	}
	if (gp->esc || gap_byte(c)) {
		gp->esc = c == '\\';
		/* Within the budget, and starting after the last replacement
		 * (else it holds bytes back for nothing: a close-delimited body
		 * would lose them). */
		while (g != 0 &&
		       (st->pos - gap_from(st, set->node[g].depth) - set->node[g].depth + 1 > set->gap_max ||
			gap_from(st, set->node[g].depth) < st->lit))
			g = set->node[g].fail;
		if (g == 0 || set->node[g].live == 0) {
			gap_stop(st);
			return;
		}
		gp->state = g;
		return;
	}
	g = gap_trim(set, step(set, g, c));
	gp->at[gp->nv++ & gp->mask] = st->pos;
	if (g == 0 || st->pos + 1 - gap_from(st, set->node[g].depth) == set->node[g].depth) {
		gap_stop(st);
		return;
	}
	gp->state = g;
	if (set->node[g].pat != 0 || set->node[g].out != 0)
		gap_record(st, g);
}

/* Bytes with no NUL after which nul_next() looks for the next with
 * memchr() again (its byte loop). */
_Static_assert(NUL_LEAD == 1, "nul_next() looks one byte ahead");
#define SKIP_NUL_QUIET 1

/* Blocks with no NUL after which skip_nul_blocks() returns to memchr()
 * (random binary data has a NUL every 256 bytes or so: going back at
 * each block with none cost a memchr() call a NUL). */
#define SKIP_NUL_QUIET_BLOCKS 4

#ifdef HAVE_TEDDY
/* The Teddy lanes of the NUL patterns' tables (set->wteddy) for the W
 * bytes at x, y = x + 1, z = x + 2. */
#define NUL_TEDDY(SH, AND, SRL, x, y, z)                                                       \
	AND(AND(AND(SH(lo1, AND(x, nib)), SH(hi1, AND(SRL(x, 4), nib))),                          \
		AND(SH(lo2, AND(y, nib)), SH(hi2, AND(SRL(y, 4), nib)))),                          \
	    AND(SH(lo3, AND(z, nib)), SH(hi3, AND(SRL(z, 4), nib))))

/*
 * The first lane from *jp on, among the full 16-byte blocks of p[0..n)
 * (a block at j needs p[j + 17]), at which a NUL pattern may start: the
 * block holds a NUL in p[j..j+17) (a NUL pattern has one in its first
 * NUL_LEAD + 1 bytes: a block with none holds no start), the lane passes
 * the NUL patterns' Teddy tables and skip_cand(); n if none. Stops after
 * SKIP_NUL_QUIET_BLOCKS blocks in a row with no NUL or at the last full
 * block, *jp then where it stopped. Blocks with a NUL only pay for the
 * nibble lookups: text with none never comes here (memchr() first).
 */
__attribute__((target("ssse3"))) static size_t skip_nul_blocks(const mask_set_t *set,
								const unsigned char *p, size_t *jp,
								size_t n)
{
	const __m128i lo1 = set->wteddy[0], hi1 = set->wteddy[1];
	const __m128i lo2 = set->wteddy[2], hi2 = set->wteddy[3];
	const __m128i lo3 = set->wteddy[4], hi3 = set->wteddy[5];
	const __m128i nib = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
	size_t j = *jp;
	unsigned quiet = 0;

	for (; j + 18 <= n && quiet < SKIP_NUL_QUIET_BLOCKS; j += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + j));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + j + 1));
		__m128i z, r;
		unsigned bits;
		size_t c;

		if (_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, zero), _mm_cmpeq_epi8(y, zero))) == 0) {
			quiet++;
			continue;
		}
		quiet = 0;
		z = _mm_loadu_si128((const __m128i *)(const void *)(p + j + 2));
		r = NUL_TEDDY(_mm_shuffle_epi8, _mm_and_si128, _mm_srli_epi16, x, y, z);
		bits = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(r, zero)) & 0xffffu;
		if (bits != 0 && (c = teddy_confirm(set, p, n, j, bits)) < n) {
			*jp = j;
			return c;
		}
	}
	*jp = j;
	return n;
}

/* skip_nul_blocks() with AVX2: 32 lanes per step (a block at j needs
 * p[j + 33]). */
__attribute__((target("avx2"))) static size_t skip_nul_blocks32(const mask_set_t *set,
								 const unsigned char *p, size_t *jp,
								 size_t n)
{
	const __m256i lo1 = _mm256_broadcastsi128_si256(set->wteddy[0]);
	const __m256i hi1 = _mm256_broadcastsi128_si256(set->wteddy[1]);
	const __m256i lo2 = _mm256_broadcastsi128_si256(set->wteddy[2]);
	const __m256i hi2 = _mm256_broadcastsi128_si256(set->wteddy[3]);
	const __m256i lo3 = _mm256_broadcastsi128_si256(set->wteddy[4]);
	const __m256i hi3 = _mm256_broadcastsi128_si256(set->wteddy[5]);
	const __m256i nib = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	size_t j = *jp;
	unsigned quiet = 0;

	for (; j + 34 <= n && quiet < SKIP_NUL_QUIET_BLOCKS; j += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + j));
		__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(p + j + 1));
		__m256i z, r;
		uint32_t bits;
		size_t c;

		if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(x, zero),
							 _mm256_cmpeq_epi8(y, zero))) == 0) {
			quiet++;
			continue;
		}
		quiet = 0;
		z = _mm256_loadu_si256((const __m256i *)(const void *)(p + j + 2));
		r = NUL_TEDDY(_mm256_shuffle_epi8, _mm256_and_si256, _mm256_srli_epi16, x, y, z);
		bits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r, zero));
		if (bits != 0 && (c = teddy_confirm(set, p, n, j, bits)) < n) {
			*jp = j;
			return c;
		}
	}
	*jp = j;
	return n;
}
#endif

/*
 * The first offset from j on (j < n) at which a NUL pattern may start,
 * n if none. One of those has a NUL within NUL_LEAD bytes of its start,
 * so it can start only NUL_LEAD bytes before a NUL or less, or that
 * close to the end of the segment (its NUL may come in the next call:
 * the automaton then holds back what it began, as ever). memchr() finds
 * the next NUL; from NUL_LEAD bytes before it, the NUL patterns' Teddy
 * tables filter 16 or 32 bytes at a time while the blocks hold NULs
 * (skip_nul_blocks()); the last bytes, or every byte without SSSE3, go
 * one by one (a NUL here or next, wfirst). Every candidate is confirmed
 * with skip_cand(), whose bitmaps hold every pattern.
 */
static size_t nul_next(const mask_set_t *set, const unsigned char *seg, size_t j, size_t n)
{
	while (j < n) {
		const unsigned char *hit = memchr(seg + j, 0, n - j);
		/* no NUL left here: the last NUL_LEAD bytes may still begin one */
		size_t nul = hit != NULL ? (size_t)(hit - seg) : n;
		size_t from = nul >= NUL_LEAD ? nul - NUL_LEAD : 0;

		if (from > j)
			j = from;
#ifdef HAVE_TEDDY
		if (set->use_teddy) {
			size_t c = n;

			if (set->use_teddy32)
				c = skip_nul_blocks32(set, seg, &j, n);
			/* the 16-lane loop takes what is left of 32-byte steps */
			if (c == n && (!set->use_teddy32 || j + 34 > n))
				c = skip_nul_blocks(set, seg, &j, n);
			if (c < n)
				return c;
		}
#endif
		/* Byte by byte while NULs keep coming, memchr() again after
		 * SKIP_NUL_QUIET bytes with none. */
		for (size_t quiet = 0; j < n && quiet <= SKIP_NUL_QUIET; j++) {
			/* NUL_LEAD is 1: a NUL here or next */
			bool near = j + 1 >= n || seg[j] == 0 || seg[j + 1] == 0;

			quiet = seg[j] == 0 ? 0 : quiet + 1;
			if (near && set->wfirst[seg[j]] && skip_cand(set, seg, j, n))
				return j;
		}
	}
	return n;
}

/* NULs in the NUL_SAMPLE bytes from a segment's first NUL at or above
 * which skip_next() takes the segment for wide text (UTF-16 has one
 * every other byte, binary data one in 256 or so); the bytes from its
 * start it looks for that NUL in (random bytes hold one in 98% of
 * spans this long; a memchr() over the whole segment before the Teddy
 * loop read it cold: text scanned 10% slower). */
#define NUL_SAMPLE 64
#define NUL_DENSE 8
#define NUL_LOOK 1024

/* What skip_next() learnt of one segment: the first place a NUL pattern
 * may start at or after some offset, and the first place skip_root()
 * stops at from some offset (each valid while the scan has not passed
 * it); with the Teddy loops, how the segment's NULs come (mode). */
struct skip_memo {
	size_t nul;
	size_t text;
	bool nul_ok;
	bool text_ok;
	enum { MEMO_NEW, MEMO_SPLIT, MEMO_SPARSE } mode;
};

/*
 * skip_root() for the scan at seg[i], i < n: the offset (i or later) at
 * which the automaton must go on. With nul_split (automaton.h), the
 * tables skip_root() runs on leave the NUL patterns out. With the Teddy
 * loops, memchr() over the first NUL_LOOK bytes of a segment decides
 * how to find those (perf48m): a NUL there, fewer than NUL_DENSE in the
 * NUL_SAMPLE bytes from it (binary data), the combined tables, one
 * lookup a block for both (skip_root() SKIP_NUL_ANY). Else (text, where
 * the text tables pass fewer lanes, or UTF-16 or UTF-32 text, where
 * every block holds a NUL and the combined tables pass more lanes), and
 * without the Teddy loops: the text tables, and nul_next() finds where
 * those may start, and the memo makes each nul_next() and skip_root()
 * scan a byte once a segment however many stops come between (UTF-16
 * text stops at many).
 */
static size_t skip_next(const mask_set_t *set, const unsigned char *seg, size_t i, size_t n,
			struct skip_memo *m)
{
	if (!set->nul_split)
		return i + skip_root(set, seg + i, n - i, SKIP_NUL_NONE);
#ifdef HAVE_TEDDY
	if (set->use_teddy && m->mode == MEMO_NEW) {
		const unsigned char *h = memchr(seg + i, 0, n - i < NUL_LOOK ? n - i : NUL_LOOK);
		unsigned nuls = 0;

		m->mode = MEMO_SPLIT;
		if (h != NULL) {
			for (size_t k = (size_t)(h - seg); k < n && k < (size_t)(h - seg) + NUL_SAMPLE; k++)
				nuls += seg[k] == 0;
			if (nuls < NUL_DENSE)
				m->mode = MEMO_SPARSE;
		}
	}
	if (m->mode == MEMO_SPARSE)
		return i + skip_root(set, seg + i, n - i, SKIP_NUL_ANY);
#endif
	if (!m->text_ok || m->text < i) {
		m->text = i + skip_root(set, seg + i, n - i, SKIP_NUL_NONE);
		m->text_ok = true;
	}
	if (!m->nul_ok || m->nul < i) {
		m->nul = nul_next(set, seg, i, n);
		m->nul_ok = true;
	}
	return m->nul < m->text ? m->nul : m->text;
}

/*
 * Resolves every position before f, in order: a position with a recorded
 * match is replaced (literal run before it first) and the positions it
 * covers dropped; the others stay pending literal in [lit, scan), emitted
 * later as one run. Returns 0 or -1 (append failed).
 */
static int finalize(mask_stream_t *st, const struct feed_ctx *ctx, uint64_t f)
{
	while (st->scan < f) {
		uint64_t p = st->scan;
		uint32_t e;
		uint64_t end;

		if (st->npending == 0) {
			st->scan = f;
			break;
		}
		e = st->ring[p & st->ring_mask].pat;
		if (e == 0) {
			st->scan++;
			continue;
		}
		end = p + st->ring[p & st->ring_mask].len;
		if (emit_literal(ctx, st->lit, p) != 0 ||
		    emit_replace(st, ctx, p, e - 1, (uint32_t)(end - p)) != 0)
			return -1;
		/* Starts inside the replaced span can no longer match. */
		for (uint64_t x = p; x < end; x++) {
			struct slot *sl = &st->ring[x & st->ring_mask];
			if (sl->pat != 0) {
				sl->pat = 0;
				st->npending--;
			}
		}
		st->lit = st->scan = end;
	}
	return 0;
}

/* Scans n bytes at seg, the input of positions [pos, pos + n). */
static int scan_segment(mask_stream_t *st, const struct feed_ctx *ctx, const unsigned char *seg,
			size_t n)
{
	const mask_set_t *set = st->set;
	uint32_t q = st->state;
	size_t i = 0;
	struct skip_memo memo = { 0, 0, false, false, MEMO_NEW };

	while (i < n) {
		const struct mask_node *nq;
		uint64_t f;

		if (q == 0 && st->gap.state == 0) {
			/* Nothing pending in the root: skip to a first byte. */
			size_t j = skip_next(set, seg, i, n, &memo) - i;

			i += j;
			st->pos += j;
			st->scan = st->pos;
			if (j != 0)
				st->gap.last = seg[i - 1];
			if (i == n)
				break;
		}
		if (set->gap_max != 0)
			gap_feed(st, q, seg[i]);
		q = step(set, q, seg[i]);
		i++;
		st->pos++;
		nq = &set->node[q];
		if (nq->pat != 0 || nq->out != 0)
			record(st, q);
		f = st->pos - nq->live;
		if (st->gap.state != 0) {
			uint32_t live = set->node[st->gap.state].live;
			uint64_t fg = live != 0 ? gap_from(st, live) : st->pos;

			if (fg < f)
				f = fg;
		}
		if (st->scan < f && finalize(st, ctx, f) != 0) {
			st->state = q;
			return -1;
		}
	}
	st->state = q;
	return 0;
}

/* End of a feed: emits the final literal run [lit, scan) and keeps
 * [lit, pos) as the hold-back, copied out of this call's input. */
static int feed_end(mask_stream_t *st, const struct feed_ctx *ctx)
{
	size_t keep_old = 0, keep_new, old_len = st->hold_len;

	if (emit_literal(ctx, st->lit, st->scan) != 0)
		return -1;
	st->lit = st->scan;
	if (st->lit < ctx->in_base) {
		keep_old = (size_t)(ctx->in_base - st->lit);
		memmove(st->hold, st->hold + (st->lit - ctx->hold_base), keep_old);
	}
	keep_new = (size_t)(st->pos - st->lit) - keep_old;
	if (keep_new != 0) {
		if (ctx->in != NULL) {
			if (evbuffer_remove(ctx->in, st->hold + keep_old, keep_new) != (int)keep_new)
				return -1;
		} else {
			memcpy(st->hold + keep_old, ctx->data + (st->pos - keep_new - ctx->in_base),
			       keep_new);
		}
	}
	st->hold_len = keep_old + keep_new;
	/* What is no longer held may be part of a secret. */
	if (old_len > st->hold_len)
		explicit_bzero(st->hold + st->hold_len, old_len - st->hold_len);
	return 0;
}

/* Context for a call whose input starts at the current position. */
static void ctx_init(struct feed_ctx *ctx, const mask_stream_t *st, struct evbuffer *out)
{
	ctx->out = out;
	ctx->data = NULL;
	ctx->in = NULL;
	ctx->in_base = st->pos;
	ctx->hold_base = st->lit;
	ctx->hold = st->hold;
	ctx->count_only = false;
}

/* ------------------------------------------------------------------ */
/* Streams                                                              */
/* ------------------------------------------------------------------ */

/* Smallest power of two above n. */
static size_t pow2_above(size_t n)
{
	size_t r = 1;

	while (r <= n)
		r <<= 1;
	return r;
}

/* Allocates st's pending ring, and for a set with gap patterns the gap
 * path's positions and the scratch a match with gaps is rebuilt in.
 * Returns 0 or -1 (ENOMEM; stream_tables_free() releases what was). */
static int stream_tables(mask_stream_t *st, const mask_set_t *set)
{
	size_t ring = pow2_above(set->maxlen + set->gap_max + 1);

	st->set = set;
	st->ring_mask = (uint32_t)(ring - 1);
	st->ring = calloc(ring, sizeof(*st->ring));
	if (st->ring == NULL)
		return -1;
	if (set->gap_max == 0)
		return 0;
	ring = pow2_above(set->gap_maxlen);
	st->gap.mask = (uint32_t)(ring - 1);
	st->gap.at = calloc(ring, sizeof(*st->gap.at));
	ring = pow2_above(set->gap_maxlen + set->gap_max);
	if (ring < 8)
		ring = 8;
	st->gap.lmask = (uint32_t)(ring - 1);
	st->gap.letter = calloc(ring / 8, 1);
	st->scratch = malloc(set->maxlen + set->gap_max);
	return st->gap.at != NULL && st->gap.letter != NULL && st->scratch != NULL ? 0 : -1;
}

static void stream_tables_free(mask_stream_t *st)
{
	free(st->ring);
	free(st->gap.at);
	free(st->gap.letter);
	/* Wiped after each use. */
	free(st->scratch);
}

mask_stream_t *mask_stream_new(const mask_set_t *set)
{
	mask_stream_t *st;

	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	st->hold_cap = mask_set_holdmax(set) > 0 ? mask_set_holdmax(set) : 1;
	st->hold = malloc(st->hold_cap);
	st->counts = calloc(set->npairs != 0 ? set->npairs : 1, sizeof(*st->counts));
	if (stream_tables(st, set) != 0 || st->hold == NULL || st->counts == NULL) {
		mask_stream_free(st);
		errno = ENOMEM;
		return NULL;
	}
	return st;
}

void mask_stream_free(mask_stream_t *st)
{
	if (st == NULL)
		return;
	if (st->hold != NULL) {
		explicit_bzero(st->hold, st->hold_cap);
		WIPED(st->hold, st->hold_cap, "hold");
	}
	free(st->hold);
	stream_tables_free(st);
	free(st->counts);
	free(st);
}

int mask_stream_feed(mask_stream_t *st, const void *data, size_t len, struct evbuffer *out)
{
	struct feed_ctx ctx;

	st->clean = false;
	if (st->failed) {
		errno = EINVAL;
		return -1;
	}
	ctx_init(&ctx, st, out);
	ctx.data = (unsigned char *)(uintptr_t)data; /* read only: out != NULL */
	if (len != 0 && scan_segment(st, &ctx, data, len) != 0)
		goto fail;
	if (feed_end(st, &ctx) != 0)
		goto fail;
	return 0;
fail:
	st->failed = true;
	return -1;
}

int mask_stream_feed_buffer(mask_stream_t *st, struct evbuffer *in, size_t len,
			    struct evbuffer *out)
{
	struct feed_ctx ctx;
	size_t done = 0;

	st->clean = false;
	if (st->failed || in == out || len > evbuffer_get_length(in)) {
		errno = EINVAL;
		return -1;
	}
	ctx_init(&ctx, st, out);
	ctx.in = in;
	while (done < len) {
		struct evbuffer_ptr ptr;
		struct evbuffer_iovec v;
		uint64_t front = st->lit > ctx.in_base ? st->lit : ctx.in_base;
		size_t n;

		/* Re-peek from the scan position each time: emitting moved or
		 * drained in's front, which invalidates earlier peeks. */
		if (evbuffer_ptr_set(in, &ptr, (size_t)(st->pos - front), EVBUFFER_PTR_SET) != 0 ||
		    evbuffer_peek(in, (ev_ssize_t)(len - done), &ptr, &v, 1) < 1 || v.iov_len == 0)
			goto fail;
		n = v.iov_len < len - done ? v.iov_len : len - done;
		if (scan_segment(st, &ctx, v.iov_base, n) != 0)
			goto fail;
		done += n;
	}
	if (feed_end(st, &ctx) != 0)
		goto fail;
	return 0;
fail:
	st->failed = true;
	return -1;
}

/* ASCII upper-case letters to lower case, every other byte as it is. */
static unsigned char fold_byte(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/*
 * The UTF-8 forms of the four code points a case mapping or a case fold
 * takes to or from an ASCII letter (round 41): U+0130 'İ' (Turkish and
 * Azeri upper case of 'i'), U+0131 'ı' (their lower case of 'I'), U+017F
 * 'ſ' (folds to 's') and U+212A, the Kelvin sign (folds to 'k'). At
 * src[0..n): the ASCII letter it folds to and its length in *len; 0 when
 * src holds none of them; -1 when src ends inside a prefix of one (more
 * input may complete it).
 */
static int fold_wide(const unsigned char *src, size_t n, size_t *len)
{
	if (src[0] == 0xc4 || src[0] == 0xc5) {
		if (n < 2)
			return -1;
		*len = 2;
		if (src[0] == 0xc4 && (src[1] == 0xb0 || src[1] == 0xb1))
			return 'i';
		return src[0] == 0xc5 && src[1] == 0xbf ? 's' : 0;
	}
	if (src[0] != 0xe2)
		return 0;
	if (n < 2)
		return -1;
	if (src[1] != 0x84)
		return 0;
	if (n < 3)
		return -1;
	*len = 3;
	return src[2] == 0xaa ? 'k' : 0;
}

/*
 * dst = src[0..n) folded: A-Z lower-cased and the four wide forms
 * (fold_wide()) as their ASCII letter, every other byte as it is, and
 * one U+0307 (combining dot above) right after what folded to 'i'
 * dropped (review41d): the root lower case or case fold of U+0130 is
 * "i" U+0307 (Java's, Python's, JavaScript's toLowerCase() of a Turkish
 * upper case), its NFD "I" U+0307. *after_i carries whether the last
 * byte written was such an 'i' (across calls). Returns the length
 * written (at most n; dst may be src). With more, a prefix of a wide
 * form (or of a U+0307 after an 'i') at the end is left out, *used
 * says how much of src was taken; without, it is copied as it is. ASCII goes 16 bytes
 * a step where SSE2 is (a byte loop took about 350 ns per KiB, twice
 * the scan itself), and so does any other byte of 0x80 or more but the
 * lead bytes that matter (0xC4, 0xC5, 0xE2, and 0xCC of U+0307: round
 * 42; before, a block with any byte of 0x80 or more went byte by byte,
 * +900 ns per KiB of Turkish text): a block up to its first such byte
 * is folded in a register and its bytes before it stored (never past
 * what was read: the fold is in place, and shrinks), that one sequence
 * goes through the byte path, and the blocks resume after it.
 */
static size_t fold_run(unsigned char *dst, const unsigned char *src, size_t n, bool more, size_t *used,
		       bool *after_i)
{
	size_t i = 0, o = 0, dropped = SIZE_MAX; /* o when a U+0307 was last dropped */

	/* Whether the last byte written is an 'i' no U+0307 was dropped
	 * after: looked at only at a CC byte (the byte path stays as it
	 * was), and at the end for the next call. */
#define AFTER_I() (dropped != o && (o > 0 ? dst[o - 1] == 'i' : *after_i))

	while (i < n) {
		size_t step = 16; /* bytes the byte path takes before the blocks resume */
#ifdef HAVE_TEDDY
		const __m128i below = _mm_set1_epi8('A' - 1), above = _mm_set1_epi8('Z' + 1),
			      bit = _mm_set1_epi8(0x20), c4 = _mm_set1_epi8((char)0xc4), fe = _mm_set1_epi8((char)0xfe),
			      e2 = _mm_set1_epi8((char)0xe2), cc = _mm_set1_epi8((char)0xcc);

		/* Signed compares: bytes of 0x80 and up are negative, never
		 * A-Z. The store lands at or before what was loaded. */
		while (i + 16 <= n) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
			__m128i up = _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above));
			__m128i f = _mm_add_epi8(v, _mm_and_si128(up, bit));
			unsigned lead;

			if (_mm_movemask_epi8(v) != 0) {
				/* 0xC4 and 0xC5 (masked to 0xC4), 0xE2, 0xCC. */
				lead = (unsigned)_mm_movemask_epi8(
					_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v, fe), c4), _mm_cmpeq_epi8(v, e2)),
						     _mm_cmpeq_epi8(v, cc)));
				if (lead != 0) {
					size_t k = (size_t)__builtin_ctz(lead);
					unsigned char tmp[16];

					/* The bytes before the lead: no further
					 * than they were read from. */
					_mm_storeu_si128((__m128i *)(void *)tmp, f);
					memcpy(dst + o, tmp, k);
					i += k;
					o += k;
					step = 1;
					break;
				}
			}
			_mm_storeu_si128((__m128i *)(void *)(dst + o), f);
			i += 16;
			o += 16;
		}
		if (i >= n)
			break;
#endif
		/* To the end of this block, or the next 16 bytes; after a lead
		 * byte the blocks found, its one sequence. */
		for (size_t stop = i + step < n ? i + step : n; i < stop;) {
			size_t len = 1;
			int a = src[i] < 0x80 ? 0 : fold_wide(src + i, n - i, &len);

			if (src[i] == 0xcc && AFTER_I()) {
				/* U+0307 after an 'i': dropped, once. */
				if (i + 1 < n && src[i + 1] == 0x87) {
					dropped = o;
					i += 2;
					continue;
				}
				a = i + 1 < n ? 0 : -1;
			}
			if (a < 0 && more) {
				*used = i;
				*after_i = AFTER_I();
				return o;
			}
			if (a > 0) {
				dst[o++] = (unsigned char)a;
				i += len;
			} else {
				dst[o++] = fold_byte(src[i]);
				i++;
			}
		}
	}
	*used = n;
	*after_i = AFTER_I();
	return o;
#undef AFTER_I
}

size_t mask_fold(void *dst, const void *src, size_t len)
{
	size_t used;
	bool after_i = false;

	return fold_run(dst, src, len, false, &used, &after_i);
}

size_t mask_fold_rawmax(const void *folded, size_t len)
{
	const unsigned char *f = folded;
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += f[i] == 'i' ? 4 : f[i] == 'k' ? 3 : f[i] == 's' ? 2 : 1;
	return n;
}

/* Scans the folded bytes low[0..n) (count only). */
static int scan_low(mask_stream_t *st, unsigned char *low, size_t n)
{
	struct feed_ctx ctx;

	ctx_init(&ctx, st, NULL);
	ctx.count_only = true;
	ctx.data = low;
	/* The hold-back keeps the folded bytes that may begin a match
	 * (wiped at reset and free, as any hold-back). */
	return scan_segment(st, &ctx, low, n) != 0 || feed_end(st, &ctx) != 0 ? -1 : 0;
}

int mask_stream_scan_folded(mask_stream_t *st, const void *data, size_t len)
{
	const unsigned char *src = data;
	unsigned char low[1024 + sizeof(st->fcarry)];
	int rc = 0;

	st->clean = false;
	if (st->failed) {
		errno = EINVAL;
		return -1;
	}
	while (len > 0 && rc == 0) {
		size_t n = len < 1024 ? len : 1024, c = st->fcarry_len, used, m;

		/* A wide form begun in the last call goes first. */
		memcpy(low, st->fcarry, c);
		memcpy(low + c, src, n);
		m = fold_run(low, low, c + n, true, &used, &st->fafter_i);
		st->fcarry_len = (uint8_t)(c + n - used);
		memcpy(st->fcarry, low + used, st->fcarry_len);
		if (m != 0 && scan_low(st, low, m) != 0)
			rc = -1;
		src += n;
		len -= n;
	}
	explicit_bzero(low, sizeof(low));
	if (rc != 0)
		st->failed = true;
	return rc;
}

/* After the last position was resolved (scan end, finish): nothing is
 * pending or held, the automaton back in its root; the counts stay. */
static void end_reset(mask_stream_t *st)
{
	st->lit = st->scan = st->pos;
	st->state = 0;
	gap_stop(st);
	st->gap.last = 0;
	explicit_bzero(st->hold, st->hold_len);
	st->hold_len = 0;
	fcarry_wipe(st);
}

int mask_stream_scan_end(mask_stream_t *st)
{
	struct feed_ctx ctx;

	st->clean = false;
	if (st->failed) {
		errno = EINVAL;
		return -1;
	}
	if (st->fcarry_len != 0) {
		/* A wide form cut by the end: its bytes as they are. */
		unsigned char rest[sizeof(st->fcarry)];
		size_t n = st->fcarry_len;
		int rc;

		memcpy(rest, st->fcarry, n);
		fcarry_wipe(st);
		rc = scan_low(st, rest, n);
		explicit_bzero(rest, sizeof(rest));
		if (rc != 0) {
			st->failed = true;
			return -1;
		}
	}
	ctx_init(&ctx, st, NULL);
	ctx.count_only = true;
	if (finalize(st, &ctx, st->pos) != 0) {
		st->failed = true;
		return -1;
	}
	end_reset(st);
	return 0;
}

int mask_stream_finish(mask_stream_t *st, struct evbuffer *out)
{
	struct feed_ctx ctx;

	st->clean = false;
	if (st->failed) {
		errno = EINVAL;
		return -1;
	}
	ctx_init(&ctx, st, out);
	/* No more input: every position is final. */
	if (finalize(st, &ctx, st->pos) != 0 || emit_literal(&ctx, st->lit, st->pos) != 0) {
		st->failed = true;
		return -1;
	}
	end_reset(st);
	return 0;
}

void mask_stream_reset(mask_stream_t *st)
{
	/* Every call that changes a stream clears clean first (feed,
	 * feed_buffer, scan_folded, scan_end, finish): nothing to do. */
	if (st->clean)
		return;
	memset(st->ring, 0, ((size_t)st->ring_mask + 1) * sizeof(*st->ring));
	st->npending = 0;
	st->state = 0;
	gap_stop(st);
	st->gap.last = 0;
	st->lit = st->scan = st->pos;
	explicit_bzero(st->hold, st->hold_cap);
	st->hold_len = 0;
	fcarry_wipe(st);
	memset(st->counts, 0, (st->set->npairs != 0 ? st->set->npairs : 1) * sizeof(*st->counts));
	st->total = 0;
	st->failed = false;
	st->clean = true;
}

size_t mask_stream_held(const mask_stream_t *st)
{
	return st->hold_len;
}

uint64_t mask_stream_count(const mask_stream_t *st, size_t pair)
{
	return pair < st->set->npairs ? st->counts[pair] : 0;
}

uint64_t mask_stream_total(const mask_stream_t *st)
{
	return st->total;
}

/* ------------------------------------------------------------------ */
/* One-shot                                                             */
/* ------------------------------------------------------------------ */

/* A one-shot scan's tables on the stack (about 4.6 KiB), for sets whose
 * longest pattern fits them. */
#define ONESHOT_RING 256
#define ONESHOT_SCRATCH 512
struct oneshot_tables {
	struct slot ring[ONESHOT_RING];
	uint64_t at[ONESHOT_RING];
	uint8_t letter[ONESHOT_RING / 8];
	unsigned char scratch[ONESHOT_SCRATCH];
};

/* stream_tables() in m when every table fits; returns false otherwise. */
static bool stream_tables_local(mask_stream_t *st, const mask_set_t *set, struct oneshot_tables *m)
{
	size_t ring = pow2_above(set->maxlen + set->gap_max + 1), at = 1, letter = 8;

	if (set->gap_max != 0) {
		at = pow2_above(set->gap_maxlen);
		letter = pow2_above(set->gap_maxlen + set->gap_max);
		if (letter < 8)
			letter = 8;
	}
	if (ring > ONESHOT_RING || at > ONESHOT_RING || letter > ONESHOT_RING ||
	    set->maxlen + set->gap_max > ONESHOT_SCRATCH)
		return false;
	st->set = set;
	st->ring_mask = (uint32_t)(ring - 1);
	st->ring = m->ring;
	memset(m->ring, 0, ring * sizeof(*m->ring));
	if (set->gap_max == 0)
		return true;
	st->gap.mask = (uint32_t)(at - 1);
	st->gap.at = m->at;
	memset(m->at, 0, at * sizeof(*m->at));
	st->gap.lmask = (uint32_t)(letter - 1);
	st->gap.letter = m->letter;
	memset(m->letter, 0, letter / 8);
	st->scratch = m->scratch;
	return true;
}

/* Runs a whole buffer through a temporary stream (no hold-back needed:
 * all of it is at hand). out NULL: in place. One-shot scans run several
 * times per request (target, each field, Host): their tables live on the
 * stack when they fit. Four heap blocks per field, the ring 1 KiB, also
 * made glibc consolidate its fast bins each time (issue 16: masked
 * kept-alive requests, malloc_consolidate() in the profile). */
static int replace_once(const mask_set_t *set, unsigned char *buf, size_t len,
			struct evbuffer *out, uint64_t *counts, size_t *total)
{
	struct oneshot_tables local;
	struct mask_stream st;
	struct feed_ctx ctx;
	bool on_stack;
	int rc = 0;

	/* Text shorter than every pattern holds no match (a match takes a
	 * pattern's bytes and, with gaps, more): most of a request head's
	 * fields against 40-byte sentinels. The tables are not even set
	 * up: half of a masked kept-alive request's ten one-shot scans,
	 * some 0.5 us each (issue 16, round 48). */
	if (len < set->minlen) {
		if (total != NULL)
			*total = 0;
		if (out != NULL && len != 0 && evbuffer_add(out, buf, len) != 0) {
			errno = ENOMEM;
			return -1;
		}
		return 0;
	}
	memset(&st, 0, sizeof(st));
	st.counts = counts;
	on_stack = stream_tables_local(&st, set, &local);
	if (!on_stack && stream_tables(&st, set) != 0) {
		stream_tables_free(&st);
		errno = ENOMEM;
		return -1;
	}
	ctx_init(&ctx, &st, out);
	ctx.data = buf;
	if (len != 0 && scan_segment(&st, &ctx, buf, len) != 0)
		rc = -1;
	else if (finalize(&st, &ctx, st.pos) != 0 || emit_literal(&ctx, st.lit, st.pos) != 0)
		rc = -1;
	if (!on_stack)
		stream_tables_free(&st); /* the scratch is wiped after each use */
	else if (rc != 0 && st.scratch != NULL)
		explicit_bzero(local.scratch, sizeof(local.scratch)); /* a use cut short by an error */
	if (total != NULL)
		*total = (size_t)st.total;
	return rc;
}

int mask_replace_buf(const mask_set_t *set, const void *in, size_t len, struct evbuffer *out,
		     uint64_t *counts, size_t *total)
{
	/* Read only: with out != NULL nothing is written through buf. */
	return replace_once(set, (unsigned char *)(uintptr_t)in, len, out, counts, total);
}

int mask_replace_inplace(const mask_set_t *set, void *buf, size_t len, uint64_t *counts,
			 size_t *total)
{
	if (!set->equal_len || (buf == NULL && len != 0)) {
		errno = EINVAL;
		return -1;
	}
	return replace_once(set, buf, len, NULL, counts, total);
}

/*
 * automaton.h - the compiled pattern set's layout, private to mask/: set.c
 * builds it, stream.c scans with it. Nothing outside mask/ includes this.
 *
 * A mask_set_t is an Aho-Corasick automaton over bytes, with the tables
 * that let a scan in the root state skip input quickly (first bytes,
 * first-two-bytes bitmaps, a hashed bitmap of 4-byte prefixes, the Teddy
 * nibble tables), all in one locked, undumpable arena (base/secmem.h).
 * docs/masking.md explains the design.
 */
#ifndef PASSAVANT_MASK_AUTOMATON_H
#define PASSAVANT_MASK_AUTOMATON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* MASK_STREAM_NO_SIMD: build the portable skip only (tests it anywhere). */
#if defined(__x86_64__) && !defined(MASK_STREAM_NO_SIMD)
#include <emmintrin.h>
#include <immintrin.h>
#include <tmmintrin.h>
#define HAVE_TEDDY 1
#endif

#include "base/secmem.h"
#include "mask.h"

/* Vector skip handles up to this many distinct first bytes. */
#define SKIP_VEC_MAX 16

/* A NUL pattern has a NUL at most this many bytes after its start. */
#define NUL_LEAD 1

/* Bits in the hashed bitmap of 4-byte pattern prefixes (a power of two;
 * 2^16 bits = 8 KiB: a few hundred prefixes leave it sparse). */
#define QUAD_HASH_BITS 16

/* One automaton state; node 0 is the root. */
struct mask_node {
	uint32_t fail;   /* Aho-Corasick failure link (root: 0) */
	uint32_t out;    /* nearest state on the failure chain ending a pattern, 0: none */
	uint32_t pat;    /* 1 + index of the pattern spelled by this state, 0: none */
	uint32_t depth;  /* length of the string this state spells */
	uint32_t live;   /* depth of the longest suffix state with a child */
	uint32_t edge0;  /* first outgoing edge in edge_byte/edge_child */
	uint32_t nedges; /* number of outgoing edges */
};

/* One compiled pattern; offsets into set->bytes. */
struct mask_pat {
	uint32_t from_off;
	uint32_t from_len;
	uint32_t to_off;
	uint32_t to_len;
	uint32_t origin; /* index of the pair it comes from (counters) */
	bool gaps;       /* may be found with line breaks inside (GAP_*) */
};

struct mask_set {
	struct secmem mem;        /* the arena: every table below lives in it;
				   * mem.hygiene: MASK_HYG_* achieved */
	size_t npairs;            /* pairs given by the caller */
	size_t npats;             /* patterns: pairs plus percent forms */
	size_t maxlen;            /* longest from_len */
	size_t minlen;            /* shortest from_len (0: no pattern): a match
				   * takes at least that many bytes, so shorter
				   * text holds none (replace_once()) */
	size_t gap_maxlen;        /* longest from_len of a gap pattern; 0: none */
	size_t gap_max;           /* gap_budget(gap_maxlen): most gap bytes inside
				   * one match; 0: no pattern may be found with gaps */
	bool equal_len;           /* every pattern has from_len == to_len */
	bool field_syntax;        /* some from holds ':' or begins or ends with a
				   * space or tab (mask_set_field_syntax()) */
	uint32_t nnodes;          /* automaton states in use */
	unsigned nfirst;          /* distinct first bytes of the patterns */
	unsigned nsecond;         /* distinct second bytes; > SKIP_VEC_MAX: any
				   * (also when a pattern is one byte long) */
	struct mask_node *node;   /* [nnodes] */
	uint32_t *edge_child;     /* [nnodes] target of each edge (CSR) */
	unsigned char *edge_byte; /* [nnodes] label of each edge */
	uint32_t *root_next;      /* [256] root transitions, failure folded in */
	unsigned char *first;     /* [256] 1 if some pattern starts with the byte
				   * (with nul_split: some text pattern) */
	unsigned char *wfirst;    /* [256] nul_split: 1 if some NUL pattern starts
				   * with the byte */
	bool nul_split;           /* the NUL patterns (a NUL in their first two
				   * bytes: a value's UTF-16 and UTF-32 forms) are
				   * out of first, first_list and the Teddy tables:
				   * the skip looks for them only near a NUL
				   * (skip_next() in stream.c); bigram, short2 and
				   * quad hold every pattern */
	unsigned char *first_list;/* [2 * SKIP_VEC_MAX] distinct first bytes, then
				   * distinct second bytes */
	unsigned char *bigram;    /* [8192] bit (a << 8 | b): some pattern starts "ab",
				   * or is the single byte "a" */
	unsigned char *short2;    /* [8192] the same for patterns of 1 to 3 bytes only */
	unsigned char *quad;      /* [2^QUAD_HASH_BITS / 8] bit quad_hash(first 4 bytes)
				   * of every pattern of 4 bytes or more */
#ifdef HAVE_TEDDY
	__m128i *first_vec;       /* [SKIP_VEC_MAX] first_list bytes broadcast */
	__m128i *second_vec;      /* [SKIP_VEC_MAX] distinct second bytes broadcast */
	__m128i *teddy;           /* [6] nibble tables: lo1, hi1, lo2, hi2, lo3, hi3 */
	__m128i *wteddy;          /* [6] nul_split: the same for the NUL patterns
				   * only */
	__m128i *cteddy;          /* [6] nul_split: teddy | wteddy, each bucket
				   * both tables' (skip_teddy() in stream.c, on a
				   * segment that holds a NUL) */
	bool use_teddy;           /* the CPU has SSSE3 (pshufb) */
	bool use_teddy32;         /* ... and AVX2: 32 lanes per step */
#endif
	struct mask_pat *pat;     /* [npats] */
	unsigned char *bytes;     /* from and to strings of every pattern */
};

/* Child of non-root state q on byte c, 0 if none. */
static inline uint32_t node_child(const mask_set_t *set, uint32_t q, unsigned char c)
{
	const struct mask_node *n = &set->node[q];
	const unsigned char *b = set->edge_byte + n->edge0;
	const unsigned char *hit;

	if (n->nedges == 1)
		return b[0] == c ? set->edge_child[n->edge0] : 0;
	if (n->nedges == 0)
		return 0;
	hit = memchr(b, c, n->nedges);
	return hit != NULL ? set->edge_child[n->edge0 + (uint32_t)(hit - b)] : 0;
}

/* The automaton's transition: goto, else follow failure links. Amortised
 * O(1) per byte (each failure step lowers the depth gained by one goto). */
static inline uint32_t step(const mask_set_t *set, uint32_t q, unsigned char c)
{
	for (;;) {
		uint32_t r;

		if (q == 0)
			return set->root_next[c];
		r = node_child(set, q, c);
		if (r != 0)
			return r;
		q = set->node[q].fail;
	}
}

/*
 * Gaps (struct mask_pair gaps): what a line-broken encoding puts inside a
 * value, which a gap pattern is also found across: CR and LF (MIME, PEM)
 * and JSON's escapes "\n" and "\r", also escaped again ("\\n": JSON in
 * a JSON string): a run of backslashes and the 'n' or 'r' after it. A
 * backslash run followed by anything else is no gap: a match does not
 * span it. A gap pattern holds none of these bytes, so in a match every
 * CR, LF and backslash is a gap, with the letter after a backslash run,
 * and the match can be rebuilt from its bytes alone. gap_byte(): the
 * bytes that may begin a gap.
 */
static inline bool gap_byte(unsigned char c)
{
	return c == '\n' || c == '\r' || c == '\\';
}

/* Bytes of the gap that starts at b[i] (i < len): 1 for CR or LF, the
 * run and its letter for a backslash run followed by 'n' or 'r'; 0 when
 * none starts there. Pure. */
static inline size_t gap_token(const unsigned char *b, size_t i, size_t len)
{
	size_t r = 0;

	if (b[i] == '\n' || b[i] == '\r')
		return 1;
	while (i + r < len && b[i + r] == '\\')
		r++;
	return r != 0 && i + r < len && (b[i + r] == 'n' || b[i + r] == 'r') ? r + 1 : 0;
}

/* Whether c is the letter of a JSON line-break escape ("\n", "\r") when
 * it follows a backslash. */
static inline bool gap_letter(unsigned char c)
{
	return c == 'n' || c == 'r';
}

/* Gap bytes allowed inside a match of a gap pattern of len bytes: four
 * per 32 bytes and four more (lines of 32 characters or more, each
 * broken by at most four bytes, "\r\n" as JSON writes it). */
static inline size_t gap_budget(size_t len)
{
	return 4 * (len / 32 + 1);
}

/* Bit i of a bitmap. */
static inline bool bit_get(const unsigned char *map, uint32_t i)
{
	return (map[i >> 3] >> (i & 7) & 1) != 0;
}

static inline void bit_set(unsigned char *map, uint32_t i)
{
	map[i >> 3] |= (unsigned char)(1u << (i & 7));
}

/* Bit of set->quad for 4 bytes read in native byte order (the build and
 * the scan both memcpy them, so the order does not matter). Fibonacci
 * hashing: the top bits of the product depend on all four bytes. */
static inline uint32_t quad_hash(uint32_t u)
{
	return (u * 0x9e3779b1u) >> (32 - QUAD_HASH_BITS);
}

#endif

/*
 * stream.c - streaming multi-pattern substituter (SPEC §4.2, §4.3).
 *
 * An Aho-Corasick automaton over bytes, built once per pattern set in one
 * locked, undumpable arena, and a per-stream scanner that turns its
 * "pattern ends here" reports into leftmost-longest non-overlapping
 * replacements without ever looking back at input it no longer holds.
 * docs/masking.md explains the design; the key facts:
 *
 *  - A position s is *final* once no pattern starting at s can still end
 *    in future input. With the automaton in state q after position i, that
 *    holds for every s < i + 1 - live(q), where live(q) is the depth of the
 *    longest suffix state of q (q itself or along its failure chain) that
 *    has a child. live(q) <= maxlen - 1, which bounds the hold-back.
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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* MASK_STREAM_NO_SIMD: build the portable skip only (tests it anywhere). */
#if defined(__x86_64__) && !defined(MASK_STREAM_NO_SIMD)
#include <emmintrin.h>
#include <immintrin.h>
#include <tmmintrin.h>
#define HAVE_TEDDY 1
#endif

#include "mask.h"

/* Vector skip handles up to this many distinct first bytes. */
#define SKIP_VEC_MAX 16

/* Bits in the hashed bitmap of 4-byte pattern prefixes (a power of two;
 * 2^16 bits = 8 KiB: a few hundred prefixes leave it sparse). */
#define QUAD_HASH_BITS 16

/* evbuffer_remove_buffer() returns an int: move at most this per call. */
#define MOVE_STEP_BYTES (1u << 30)

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
};

struct mask_set {
	unsigned char *arena;     /* mmap'd; every table below lives in it */
	size_t arena_len;         /* mapped length (page multiple) */
	unsigned hygiene;         /* MASK_HYG_* achieved */
	size_t npairs;            /* pairs given by the caller */
	size_t npats;             /* patterns: pairs plus percent forms */
	size_t maxlen;            /* longest from_len */
	bool equal_len;           /* every pattern has from_len == to_len */
	uint32_t nnodes;          /* automaton states in use */
	unsigned nfirst;          /* distinct first bytes of the patterns */
	unsigned nsecond;         /* distinct second bytes; > SKIP_VEC_MAX: any
				   * (also when a pattern is one byte long) */
	struct mask_node *node;   /* [nnodes] */
	uint32_t *edge_child;     /* [nnodes] target of each edge (CSR) */
	unsigned char *edge_byte; /* [nnodes] label of each edge */
	uint32_t *root_next;      /* [256] root transitions, failure folded in */
	unsigned char *first;     /* [256] 1 if some pattern starts with the byte */
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
	bool use_teddy;           /* the CPU has SSSE3 (pshufb) */
	bool use_teddy32;         /* ... and AVX2: 32 lanes per step */
#endif
	struct mask_pat *pat;     /* [npats] */
	unsigned char *bytes;     /* from and to strings of every pattern */
};

struct mask_stream {
	const mask_set_t *set; /* not owned */
	uint32_t state;        /* automaton state after the last byte scanned */
	uint64_t pos;          /* message position of the next input byte */
	uint64_t lit;          /* first position neither emitted nor replaced */
	uint64_t scan;         /* first position not yet final; lit <= scan <= pos */
	uint32_t *ring;        /* [ring_mask + 1]: 1 + longest pattern starting at s */
	uint32_t ring_mask;    /* ring size - 1 (size: power of two >= maxlen) */
	size_t npending;       /* nonzero ring entries */
	unsigned char *hold;   /* input bytes [lit, pos) kept between calls */
	size_t hold_len;       /* == pos - lit between calls */
	size_t hold_cap;       /* maxlen - 1, at least 1 */
	uint64_t *counts;      /* [npairs] replacements per pair; NULL: not kept */
	uint64_t total;        /* replacements, all pairs */
	bool failed;           /* an append failed: only reset or free may follow */
};

/* Where the bytes of the positions being emitted live during one call. */
struct feed_ctx {
	struct evbuffer *out;       /* destination; NULL: in place */
	unsigned char *data;        /* this call's input (pointer and in-place modes) */
	struct evbuffer *in;        /* this call's input (buffer mode), front at max(lit, in_base) */
	uint64_t in_base;           /* position of the first input byte of this call */
	uint64_t hold_base;         /* position of hold[0] (== lit at call start) */
	const unsigned char *hold;  /* bytes [hold_base, in_base) */
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
/* Percent-encoded forms                                                */
/* ------------------------------------------------------------------ */

/* RFC 3986 unreserved: what every URL encoder leaves alone. */
static bool pct_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* Number of bytes of s that an encoder may escape. */
static size_t pct_nspecial(const unsigned char *s, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < len; i++)
		k += !pct_unreserved(s[i]);
	return k;
}

/*
 * Number of percent forms generated for a `from` (the raw form excluded):
 * with k escapable bytes, every non-empty subset of them escaped when
 * k <= MASK_PCT_MIX_MAX, else only all of them; each in upper and lower
 * hex. Clients escape consistently, so mixed hex case is not generated.
 */
static size_t pct_nvariants(const unsigned char *from, size_t len)
{
	size_t k = pct_nspecial(from, len);

	if (k == 0)
		return 0;
	if (k <= MASK_PCT_MIX_MAX)
		return 2 * (((size_t)1 << k) - 1);
	return 2;
}

/* Writes s with the bytes selected by esc (NULL: every escapable byte)
 * escaped, to out when not NULL; returns the length. */
static size_t pct_encode(const unsigned char *s, size_t len, const bool *esc, bool lower,
			 unsigned char *out)
{
	const char *hex = lower ? "0123456789abcdef" : "0123456789ABCDEF";
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		bool e = esc != NULL ? esc[i] : !pct_unreserved(s[i]);
		if (!e) {
			if (out != NULL)
				out[n] = s[i];
			n++;
			continue;
		}
		if (out != NULL) {
			out[n] = '%';
			out[n + 1] = (unsigned char)hex[s[i] >> 4];
			out[n + 2] = (unsigned char)hex[s[i] & 15];
		}
		n += 3;
	}
	return n;
}

/*
 * Variant v (0 <= v < pct_nvariants) of pair p: its `from` with a subset of
 * its escapable bytes escaped, and its `to` escaped to match. When to has
 * from's length, exactly the same positions of `to` are escaped, whatever
 * bytes sit there (a sentinel and its real value keep punctuation in
 * place, SPEC §4.1, so these are mostly the same bytes; where they are
 * not, as in the base64 forms, %XX of any byte still decodes to it), so
 * the variant keeps the pair's equal lengths and in-place substitution
 * works; otherwise every escapable byte of `to`. Writes to fout/tout when
 * not NULL; the lengths always. esc is scratch of from_len entries.
 */
static void pct_variant(const struct mask_pair *p, size_t v, bool *esc, unsigned char *fout,
			size_t *flen, unsigned char *tout, size_t *tlen)
{
	const unsigned char *f = p->from, *t = p->to;
	size_t k = pct_nspecial(f, p->from_len);
	bool lower = (v & 1) != 0;
	size_t subset = (v >> 1) + 1; /* 1 .. 2^k - 1 */
	bool same_places = p->to_len == p->from_len;
	size_t bit = 0;

	for (size_t i = 0; i < p->from_len; i++) {
		esc[i] = false;
		if (pct_unreserved(f[i]))
			continue;
		esc[i] = k > MASK_PCT_MIX_MAX || (subset >> bit & 1) != 0;
		bit++;
	}
	*flen = pct_encode(f, p->from_len, esc, lower, fout);
	*tlen = pct_encode(t, p->to_len, same_places ? esc : NULL, lower, tout);
}

/* ------------------------------------------------------------------ */
/* The compiled set                                                     */
/* ------------------------------------------------------------------ */

const char *mask_set_strerror(enum mask_set_result res)
{
	switch (res) {
	case MASK_SET_OK:
		return "no error";
	case MASK_SET_ERR_ARGS:
		return "invalid arguments (too many pairs, or missing bytes)";
	case MASK_SET_ERR_EMPTY:
		return "a value to match is empty";
	case MASK_SET_ERR_TOO_LONG:
		return "a value is longer than the masking limit";
	case MASK_SET_ERR_TOO_BIG:
		return "the values together exceed the masking limit";
	case MASK_SET_ERR_NOMEM:
		return "out of memory";
	case MASK_SET_ERR_MLOCK:
		return "cannot lock secret memory";
	case MASK_SET_ERR_MADVISE:
		return "cannot exclude secret memory from core dumps";
	}
	return "unknown error";
}

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

/* Byte offsets of every table in the arena, computed before mapping it. */
struct arena_layout {
	size_t vec, node, edge_child, first_child, next_sib, queue, root_next, pat;
	size_t edge_byte, node_byte, first, first_list, bigram, short2, quad, bytes, total;
};

/* Appends n elements of size sz (aligned to 16) at *off; false on overflow. */
static bool layout_add(size_t *off, size_t *field, size_t n, size_t sz)
{
	size_t a = (*off + 15) & ~(size_t)15;

	if (a < *off || (sz != 0 && n > (SIZE_MAX - a) / sz))
		return false;
	*field = a;
	*off = a + n * sz;
	return true;
}

static bool layout_make(struct arena_layout *l, size_t nnodes, size_t npats, size_t nbytes)
{
	size_t off = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0)
		page = 4096;
	if (!layout_add(&off, &l->vec, 2 * SKIP_VEC_MAX + 6, 16) ||
	    !layout_add(&off, &l->node, nnodes, sizeof(struct mask_node)) ||
	    !layout_add(&off, &l->edge_child, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->first_child, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->next_sib, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->queue, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->root_next, 256, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->pat, npats, sizeof(struct mask_pat)) ||
	    !layout_add(&off, &l->edge_byte, nnodes, 1) || !layout_add(&off, &l->node_byte, nnodes, 1) ||
	    !layout_add(&off, &l->first, 256, 1) || !layout_add(&off, &l->first_list, 2 * SKIP_VEC_MAX, 1) ||
	    !layout_add(&off, &l->bigram, 8192, 1) || !layout_add(&off, &l->short2, 8192, 1) ||
	    !layout_add(&off, &l->quad, (size_t)1 << (QUAD_HASH_BITS - 3), 1) ||
	    !layout_add(&off, &l->bytes, nbytes, 1))
		return false;
	if (off > SIZE_MAX - (size_t)page)
		return false;
	l->total = (off + (size_t)page - 1) & ~((size_t)page - 1);
	return true;
}

/*
 * Maps the arena and protects it: MADV_DONTDUMP (required), MADV_WIPEONFORK
 * (best effort: a forked child that has not exec'd yet must not inherit
 * the secrets; the flag records whether the kernel knew it), then mlock
 * (unless NO_MLOCK) which may be refused for lack of privilege or
 * RLIMIT_MEMLOCK quota: then the set works unlocked and says so.
 */
static enum mask_set_result arena_map(mask_set_t *set, size_t len, unsigned flags)
{
	int saved;

	set->arena = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (set->arena == MAP_FAILED) {
		set->arena = NULL;
		return MASK_SET_ERR_NOMEM;
	}
	set->arena_len = len;
	if (madvise(set->arena, len, MADV_DONTDUMP) != 0)
		goto fail_madvise;
	set->hygiene |= MASK_HYG_DONTDUMP;
#ifdef MADV_WIPEONFORK
	if (madvise(set->arena, len, MADV_WIPEONFORK) == 0)
		set->hygiene |= MASK_HYG_WIPEONFORK;
	else if (errno != EINVAL)
		goto fail_madvise;
#endif
	if ((flags & MASK_SET_NO_MLOCK) != 0)
		return MASK_SET_OK;
	if (mlock(set->arena, len) == 0) {
		set->hygiene |= MASK_HYG_LOCKED;
		return MASK_SET_OK;
	}
	/* No CAP_IPC_LOCK and over RLIMIT_MEMLOCK, or transiently short of
	 * lockable pages: degrade, visibly (mask_set_hygiene). */
	if (errno == EPERM || errno == ENOMEM || errno == EAGAIN)
		return MASK_SET_OK;
	saved = errno;
	(void)munmap(set->arena, len);
	set->arena = NULL;
	errno = saved;
	return MASK_SET_ERR_MLOCK;

fail_madvise:
	saved = errno;
	(void)munmap(set->arena, len);
	set->arena = NULL;
	errno = saved;
	return MASK_SET_ERR_MADVISE;
}

/* Inserts pattern k (its bytes already in the arena) into the trie kept as
 * first-child / next-sibling lists during the build. */
static void trie_insert(mask_set_t *set, uint32_t *first_child, uint32_t *next_sib,
			unsigned char *node_byte, uint32_t k)
{
	const struct mask_pat *p = &set->pat[k];
	const unsigned char *s = set->bytes + p->from_off;
	uint32_t q = 0;

	for (uint32_t i = 0; i < p->from_len; i++) {
		uint32_t c = first_child[q];

		while (c != 0 && node_byte[c] != s[i])
			c = next_sib[c];
		if (c == 0) {
			c = set->nnodes++;
			node_byte[c] = s[i];
			set->node[c].depth = set->node[q].depth + 1;
			next_sib[c] = first_child[q];
			first_child[q] = c;
		}
		q = c;
	}
	/* Equal `from` strings: the lowest index (inserted first) wins. */
	if (set->node[q].pat == 0)
		set->node[q].pat = k + 1;
}

/*
 * Breadth-first pass: lays each state's edges out contiguously (CSR),
 * fills the root's dense table, and computes failure links, output links
 * and live depths. BFS order guarantees every state on a failure chain is
 * complete before it is used.
 */
static void trie_finish(mask_set_t *set, const uint32_t *first_child, const uint32_t *next_sib,
			const unsigned char *node_byte, uint32_t *queue)
{
	uint32_t head = 0, tail = 0, nedge = 0;

	queue[tail++] = 0;
	while (head < tail) {
		uint32_t u = queue[head++];
		struct mask_node *nu = &set->node[u];

		nu->edge0 = nedge;
		for (uint32_t c = first_child[u]; c != 0; c = next_sib[c]) {
			set->edge_byte[nedge] = node_byte[c];
			set->edge_child[nedge] = c;
			nedge++;
			queue[tail++] = c;
		}
		nu->nedges = nedge - nu->edge0;
		if (u == 0) {
			for (uint32_t e = 0; e < nu->nedges; e++)
				set->root_next[set->edge_byte[e]] = set->edge_child[e];
		}
		/* Live depth: this state if it can still grow, else the
		 * longest suffix state that can (its failure state is done). */
		nu->live = nu->nedges != 0 ? nu->depth : set->node[nu->fail].live;
		for (uint32_t e = nu->edge0; e < nu->edge0 + nu->nedges; e++) {
			uint32_t v = set->edge_child[e];
			struct mask_node *nv = &set->node[v];
			uint32_t f = u == 0 ? 0 : step(set, nu->fail, set->edge_byte[e]);

			nv->fail = f;
			nv->out = set->node[f].pat != 0 ? f : set->node[f].out;
		}
	}
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

#ifdef HAVE_TEDDY
/*
 * Adds one prefix to bucket k of the "Teddy" pre-filter (after
 * Hyperscan's): bit k of lo1[a & 15], hi1[a >> 4], lo2[b & 15], hi2[b >> 4],
 * lo3[c & 15] and hi3[c >> 4] is set. Only the first nfixed of a, b, c
 * are fixed; the others accept any byte. A lane passes when the six
 * lookups share a bit: a superset of the prefixes (a bucket mixes the
 * nibbles of its prefixes), so skip_cand() still confirms each candidate.
 */
static void teddy_add(mask_set_t *set, unsigned a, unsigned b, unsigned c, unsigned nfixed,
		      unsigned k)
{
	unsigned char *t = (unsigned char *)set->teddy; /* lo1 hi1 lo2 hi2 lo3 hi3 */
	unsigned char bit = (unsigned char)(1u << (k % 8));

	t[a & 15] |= bit;
	t[16 + (a >> 4)] |= bit;
	for (unsigned x = 0; x < 16; x++) {
		if (nfixed < 2 || x == (b & 15))
			t[32 + x] |= bit;
		if (nfixed < 2 || x == (b >> 4))
			t[48 + x] |= bit;
		if (nfixed < 3 || x == (c & 15))
			t[64 + x] |= bit;
		if (nfixed < 3 || x == (c >> 4))
			t[80 + x] |= bit;
	}
}

/*
 * Fills the Teddy tables from the trie's first three levels: each
 * distinct 2-byte prefix gets the next of the 8 buckets (round robin),
 * with the third bytes that follow it in some pattern; a pattern of one
 * or two bytes leaves the bytes after it free.
 */
static void teddy_build(mask_set_t *set)
{
	const struct mask_node *n0 = &set->node[0];
	unsigned nb = 0;

	for (uint32_t e1 = n0->edge0; e1 < n0->edge0 + n0->nedges; e1++) {
		unsigned a = set->edge_byte[e1];
		const struct mask_node *n1 = &set->node[set->edge_child[e1]];

		if (n1->pat != 0)
			teddy_add(set, a, 0, 0, 1, nb++);
		for (uint32_t e2 = n1->edge0; e2 < n1->edge0 + n1->nedges; e2++) {
			unsigned b = set->edge_byte[e2];
			const struct mask_node *n2 = &set->node[set->edge_child[e2]];
			unsigned k = nb++;

			if (n2->pat != 0)
				teddy_add(set, a, b, 0, 2, k);
			for (uint32_t e3 = n2->edge0; e3 < n2->edge0 + n2->nedges; e3++)
				teddy_add(set, a, b, set->edge_byte[e3], 3, k);
		}
	}
}

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

/* Offset in p[0..n) (n >= 18) of the first lane, among the full 16-byte
 * blocks, that passes the Teddy filter and skip_cand(); sets *done to the
 * offset scanning stopped at when there is none. */
__attribute__((target("ssse3"))) static size_t skip_teddy(const mask_set_t *set,
							   const unsigned char *p, size_t n,
							   size_t *done)
{
	const __m128i lo1 = set->teddy[0], hi1 = set->teddy[1];
	const __m128i lo2 = set->teddy[2], hi2 = set->teddy[3];
	const __m128i lo3 = set->teddy[4], hi3 = set->teddy[5];
	const __m128i nib = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
	size_t i = 0;

	for (; i + 18 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
		__m128i z = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 2));
		__m128i r = _mm_and_si128(
			_mm_and_si128(_mm_shuffle_epi8(lo1, _mm_and_si128(x, nib)),
				      _mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(x, 4), nib))),
			_mm_and_si128(_mm_shuffle_epi8(lo2, _mm_and_si128(y, nib)),
				      _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(y, 4), nib))));
		unsigned bits;
		size_t j;

		r = _mm_and_si128(
			r, _mm_and_si128(_mm_shuffle_epi8(lo3, _mm_and_si128(z, nib)),
					 _mm_shuffle_epi8(hi3, _mm_and_si128(_mm_srli_epi16(z, 4), nib))));
		bits = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(r, zero)) & 0xffffu;
		if (bits != 0 && (j = teddy_confirm(set, p, n, i, bits)) < n)
			return j;
	}
	*done = i;
	return n;
}

/* skip_teddy() with AVX2: the same tables in both 128-bit halves, 32
 * lanes per step (n >= 34). */
__attribute__((target("avx2"))) static size_t skip_teddy32(const mask_set_t *set, const unsigned char *p,
							   size_t n, size_t *done)
{
	const __m256i lo1 = _mm256_broadcastsi128_si256(set->teddy[0]);
	const __m256i hi1 = _mm256_broadcastsi128_si256(set->teddy[1]);
	const __m256i lo2 = _mm256_broadcastsi128_si256(set->teddy[2]);
	const __m256i hi2 = _mm256_broadcastsi128_si256(set->teddy[3]);
	const __m256i lo3 = _mm256_broadcastsi128_si256(set->teddy[4]);
	const __m256i hi3 = _mm256_broadcastsi128_si256(set->teddy[5]);
	const __m256i nib = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	size_t i = 0;

	for (; i + 34 <= n; i += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 1));
		__m256i z = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 2));
		__m256i r = _mm256_and_si256(
			_mm256_and_si256(_mm256_shuffle_epi8(lo1, _mm256_and_si256(x, nib)),
					 _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib))),
			_mm256_and_si256(_mm256_shuffle_epi8(lo2, _mm256_and_si256(y, nib)),
					 _mm256_shuffle_epi8(hi2, _mm256_and_si256(_mm256_srli_epi16(y, 4), nib))));
		uint32_t bits;
		size_t j;

		r = _mm256_and_si256(
			r, _mm256_and_si256(_mm256_shuffle_epi8(lo3, _mm256_and_si256(z, nib)),
					    _mm256_shuffle_epi8(hi3, _mm256_and_si256(_mm256_srli_epi16(z, 4), nib))));
		bits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r, zero));
		if (bits != 0 && (j = teddy_confirm(set, p, n, i, bits)) < n)
			return j;
	}
	*done = i;
	return n;
}
#endif

/* Builds the tables used to skip input in the root state: first bytes
 * (list, table, SSE2 broadcasts), the first-two-bytes bitmaps and the
 * hashed first-four-bytes bitmap. */
static void first_bytes(mask_set_t *set)
{
	set->nfirst = 0;
	for (unsigned c = 0; c < 256; c++) {
		if (set->root_next[c] == 0)
			continue;
		set->first[c] = 1;
		if (set->nfirst < SKIP_VEC_MAX) {
			set->first_list[set->nfirst] = (unsigned char)c;
#ifdef HAVE_TEDDY
			set->first_vec[set->nfirst] = _mm_set1_epi8((char)c);
#endif
		}
		set->nfirst++;
	}
	set->nsecond = 0;
	for (size_t k = 0; k < set->npats; k++) {
		const unsigned char *f = set->bytes + set->pat[k].from_off;
		unsigned ab;

		if (set->pat[k].from_len == 1) {
			for (unsigned b = 0; b < 256; b++) {
				bit_set(set->bigram, (uint32_t)f[0] << 8 | b);
				bit_set(set->short2, (uint32_t)f[0] << 8 | b);
			}
			set->nsecond = SKIP_VEC_MAX + 1; /* any second byte */
			continue;
		}
		ab = (unsigned)f[0] << 8 | f[1];
		if (set->pat[k].from_len < 4) {
			bit_set(set->short2, ab);
		} else {
			uint32_t u;

			memcpy(&u, f, 4);
			bit_set(set->quad, quad_hash(u));
		}
		set->bigram[ab >> 3] |= (unsigned char)(1u << (ab & 7));
		if (set->nsecond > SKIP_VEC_MAX)
			continue;
		/* distinct second bytes, for the vector pre-filter */
		{
			unsigned j = 0;

			while (j < set->nsecond && set->first_list[SKIP_VEC_MAX + j] != f[1])
				j++;
			if (j < set->nsecond)
				continue;
			if (set->nsecond < SKIP_VEC_MAX) {
				set->first_list[SKIP_VEC_MAX + j] = f[1];
#ifdef HAVE_TEDDY
				set->second_vec[j] = _mm_set1_epi8((char)f[1]);
#endif
			}
			set->nsecond++;
		}
	}
#ifdef HAVE_TEDDY
	teddy_build(set);
	set->use_teddy = __builtin_cpu_supports("ssse3") != 0;
	set->use_teddy32 = set->use_teddy && __builtin_cpu_supports("avx2") != 0;
#endif
}

/* Copies pair bytes (or percent variant v, when v != SIZE_MAX) into the
 * arena at *boff as pattern k. esc: scratch for pct_variant. */
static void pat_store(mask_set_t *set, uint32_t k, const struct mask_pair *p, size_t pair, size_t v,
		      bool *esc, size_t *boff)
{
	struct mask_pat *pt = &set->pat[k];
	unsigned char *b = set->bytes + *boff;
	size_t flen, tlen;

	if (v == SIZE_MAX) {
		flen = p->from_len;
		tlen = p->to_len;
		memcpy(b, p->from, flen);
		if (tlen != 0)
			memcpy(b + flen, p->to, tlen);
	} else {
		pct_variant(p, v, esc, b, &flen, NULL, &tlen);
		pct_variant(p, v, esc, NULL, &flen, b + flen, &tlen);
	}
	pt->from_off = (uint32_t)*boff;
	pt->from_len = (uint32_t)flen;
	pt->to_off = (uint32_t)(*boff + flen);
	pt->to_len = (uint32_t)tlen;
	pt->origin = (uint32_t)pair;
	*boff += flen + tlen;
	if (flen > set->maxlen)
		set->maxlen = flen;
	if (flen != tlen)
		set->equal_len = false;
}

/* Checks the pairs and sums patterns and bytes, percent forms (of the
 * pairs from pct_from on) included. */
static enum mask_set_result pairs_measure(const struct mask_pair *pairs, size_t npairs,
					  size_t pct_from, bool *esc, size_t *npats,
					  size_t *from_bytes, size_t *all_bytes)
{
	*npats = 0;
	*from_bytes = 0;
	*all_bytes = 0;
	if (npairs > MASK_SET_MAX_PAIRS || (npairs != 0 && pairs == NULL))
		return MASK_SET_ERR_ARGS;
	for (size_t i = 0; i < npairs; i++) {
		const struct mask_pair *p = &pairs[i];
		size_t nv;

		if (p->from_len == 0)
			return MASK_SET_ERR_EMPTY;
		if (p->from == NULL || (p->to_len != 0 && p->to == NULL))
			return MASK_SET_ERR_ARGS;
		if (p->from_len > MASK_PATTERN_MAX_BYTES || p->to_len > MASK_PATTERN_MAX_BYTES)
			return MASK_SET_ERR_TOO_LONG;
		/* Bounded: at most MAX_PAIRS * (2^(MIX_MAX+1) - 1) * 6 * 16 KiB,
		 * far below SIZE_MAX, and checked against MAX_BYTES below. */
		*npats += 1;
		*from_bytes += p->from_len;
		*all_bytes += p->from_len + p->to_len;
		nv = i >= pct_from ? pct_nvariants(p->from, p->from_len) : 0;
		for (size_t v = 0; v < nv; v++) {
			size_t fl, tl;

			pct_variant(p, v, esc, NULL, &fl, NULL, &tl);
			*npats += 1;
			*from_bytes += fl;
			*all_bytes += fl + tl;
		}
		if (*all_bytes > MASK_SET_MAX_BYTES)
			return MASK_SET_ERR_TOO_BIG;
	}
	return MASK_SET_OK;
}

mask_set_t *mask_set_new(const struct mask_pair *pairs, size_t npairs, unsigned flags,
			 enum mask_set_result *res)
{
	return mask_set_new_pct(pairs, npairs, (flags & MASK_SET_PERCENT) != 0 ? 0 : npairs,
				flags & ~(unsigned)MASK_SET_PERCENT, res);
}

mask_set_t *mask_set_new_pct(const struct mask_pair *pairs, size_t npairs, size_t pct_from,
			     unsigned flags, enum mask_set_result *res)
{
	struct arena_layout l;
	mask_set_t *set;
	bool *esc;
	size_t npats, from_bytes, all_bytes, boff = 0;
	uint32_t *first_child, *next_sib;
	unsigned char *node_byte;
	uint32_t k;

	*res = MASK_SET_OK;
	/* Scratch for pct_variant: one flag per byte of the longest from. */
	esc = malloc(MASK_PATTERN_MAX_BYTES * sizeof(*esc));
	if (esc == NULL) {
		*res = MASK_SET_ERR_NOMEM;
		return NULL;
	}
	*res = pairs_measure(pairs, npairs, pct_from, esc, &npats, &from_bytes, &all_bytes);
	if (*res != MASK_SET_OK)
		goto fail_esc;
	set = calloc(1, sizeof(*set));
	if (set == NULL) {
		*res = MASK_SET_ERR_NOMEM;
		goto fail_esc;
	}
	/* States: the root plus at most one per `from` byte; as many edges. */
	if (!layout_make(&l, from_bytes + 1, npats, all_bytes)) {
		*res = MASK_SET_ERR_TOO_BIG;
		goto fail_set;
	}
	*res = arena_map(set, l.total, flags);
	if (*res != MASK_SET_OK)
		goto fail_set;

	set->npairs = npairs;
	set->npats = npats;
	set->equal_len = true;
	set->node = (struct mask_node *)(void *)(set->arena + l.node);
	set->edge_child = (uint32_t *)(void *)(set->arena + l.edge_child);
	set->root_next = (uint32_t *)(void *)(set->arena + l.root_next);
	set->pat = (struct mask_pat *)(void *)(set->arena + l.pat);
	set->edge_byte = set->arena + l.edge_byte;
	set->first = set->arena + l.first;
	set->first_list = set->arena + l.first_list;
	set->bigram = set->arena + l.bigram;
	set->short2 = set->arena + l.short2;
	set->quad = set->arena + l.quad;
#ifdef HAVE_TEDDY
	set->first_vec = (__m128i *)(void *)(set->arena + l.vec);
	set->second_vec = set->first_vec + SKIP_VEC_MAX;
	set->teddy = set->first_vec + 2 * SKIP_VEC_MAX;
#endif
	set->bytes = set->arena + l.bytes;
	first_child = (uint32_t *)(void *)(set->arena + l.first_child);
	next_sib = (uint32_t *)(void *)(set->arena + l.next_sib);
	node_byte = set->arena + l.node_byte;
	set->nnodes = 1;

	/* Pair i is pattern i; percent forms follow, so a raw `from` always
	 * wins over an equal percent form of another pair. */
	for (k = 0; k < npairs; k++)
		pat_store(set, k, &pairs[k], k, SIZE_MAX, esc, &boff);
	{
		for (size_t i = pct_from; i < npairs; i++) {
			size_t nv = pct_nvariants(pairs[i].from, pairs[i].from_len);

			for (size_t v = 0; v < nv; v++)
				pat_store(set, k++, &pairs[i], i, v, esc, &boff);
		}
	}
	for (k = 0; k < npats; k++)
		trie_insert(set, first_child, next_sib, node_byte, k);
	trie_finish(set, first_child, next_sib, node_byte, (uint32_t *)(void *)(set->arena + l.queue));
	first_bytes(set);
	/* The build lists spell the secrets too: wipe them now. */
	explicit_bzero(first_child, (size_t)set->nnodes * sizeof(uint32_t));
	explicit_bzero(next_sib, (size_t)set->nnodes * sizeof(uint32_t));
	explicit_bzero(node_byte, set->nnodes);
	free(esc);
	return set;

fail_set:
	free(set);
fail_esc:
	free(esc);
	return NULL;
}

void mask_set_free(mask_set_t *set)
{
	if (set == NULL)
		return;
	if (set->arena != NULL) {
		explicit_bzero(set->arena, set->arena_len);
		WIPED(set->arena, set->arena_len, "set");
		/* munmap also unlocks. It cannot fail on a mapping we made
		 * whole; if it did, the pages are zero already. */
		(void)munmap(set->arena, set->arena_len);
	}
	free(set);
}

unsigned mask_set_hygiene(const mask_set_t *set)
{
	return set->hygiene;
}

size_t mask_set_npairs(const mask_set_t *set)
{
	return set->npairs;
}

size_t mask_set_maxlen(const mask_set_t *set)
{
	return set->maxlen;
}

/* ------------------------------------------------------------------ */
/* Scanning                                                             */
/* ------------------------------------------------------------------ */

/*
 * Offset of the first byte of p[0..n) at which a match may start (its
 * first four bytes begin some pattern, see skip_cand), n if none.
 * Skipping a byte at which no match starts leaves the automaton correctly
 * in the root: the longest suffix that is a pattern prefix starts after
 * it. With SSSE3: the nibble filter on three bytes (skip_teddy; with AVX2
 * 32 bytes per step, skip_teddy32). Else one
 * first byte: memchr; up to SKIP_VEC_MAX first bytes: SSE2 compares of 16
 * bytes (first and second byte sets); more: a table lookup per byte.
 * Every candidate is confirmed with skip_cand().
 */
static size_t skip_root(const mask_set_t *set, const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (set->nfirst == 0)
		return n;
#ifdef HAVE_TEDDY
	if (set->use_teddy && n >= 18) {
		size_t j;

		if (set->use_teddy32 && n >= 34) {
			/* The 16-lane loop takes what is left of 32-byte steps. */
			size_t k;

			j = skip_teddy32(set, p, n, &i);
			if (j < n)
				return j;
			if (n - i >= 18) {
				j = skip_teddy(set, p + i, n - i, &k);
				if (j < n - i)
					return i + j;
				i += k;
			}
			goto tail;
		}
		j = skip_teddy(set, p, n, &i);
		if (j < n)
			return j;
		goto tail;
	}
#endif
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
		const __m128i *v = set->first_vec, *w = set->second_vec;
		unsigned nf = set->nfirst, ns = set->nsecond;

		/* Lane j: p[i + j] is a first byte and p[i + j + 1] a second
		 * byte (of possibly different patterns); the exact pair is
		 * checked for the few lanes that pass. */
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

				if (skip_cand(set, p, j, n))
					return j;
				bits &= bits - 1;
			}
		}
	}
#endif
#ifdef HAVE_TEDDY
tail:
#endif
	for (; i < n; i++) {
		if (set->first[p[i]] && skip_cand(set, p, i, n))
			return i;
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

/* Replaces positions [p, p + from_len) with pattern k's `to`. */
static int emit_replace(mask_stream_t *st, const struct feed_ctx *ctx, uint64_t p, uint32_t k)
{
	const mask_set_t *set = st->set;
	const struct mask_pat *pt = &set->pat[k];
	const unsigned char *to = set->bytes + pt->to_off;
	uint64_t end = p + pt->from_len;

	if (ctx->in != NULL && end > ctx->in_base) {
		uint64_t a = p > ctx->in_base ? p : ctx->in_base;

		if (evbuffer_drain(ctx->in, (size_t)(end - a)) != 0)
			return -1;
	}
	if (ctx->out == NULL) {
		/* In place: equal lengths, and [p, end) is all in data. */
		memcpy(ctx->data + (p - ctx->in_base), to, pt->to_len);
	} else if (pt->to_len != 0 && evbuffer_add(ctx->out, to, pt->to_len) != 0) {
		return -1;
	}
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
static inline void record(mask_stream_t *st, uint32_t q)
{
	const mask_set_t *set = st->set;
	uint32_t r = set->node[q].pat != 0 ? q : set->node[q].out;

	for (; r != 0; r = set->node[r].out) {
		const struct mask_node *n = &set->node[r];
		uint64_t s = st->pos - n->depth;
		uint32_t *slot;

		if (s < st->lit)
			continue;
		slot = &st->ring[s & st->ring_mask];
		if (*slot == 0) {
			*slot = n->pat;
			st->npending++;
		} else if (set->pat[*slot - 1].from_len < n->depth) {
			*slot = n->pat;
		}
	}
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
		e = st->ring[p & st->ring_mask];
		if (e == 0) {
			st->scan++;
			continue;
		}
		if (emit_literal(ctx, st->lit, p) != 0 || emit_replace(st, ctx, p, e - 1) != 0)
			return -1;
		end = p + st->set->pat[e - 1].from_len;
		/* Starts inside the replaced span can no longer match. */
		for (uint64_t x = p; x < end; x++) {
			uint32_t *slot = &st->ring[x & st->ring_mask];
			if (*slot != 0) {
				*slot = 0;
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

	while (i < n) {
		const struct mask_node *nq;
		uint64_t f;

		if (q == 0) {
			/* Nothing pending in the root: skip to a first byte. */
			size_t j = skip_root(set, seg + i, n - i);

			i += j;
			st->pos += j;
			st->scan = st->pos;
			if (i == n)
				break;
		}
		q = step(set, q, seg[i]);
		i++;
		st->pos++;
		nq = &set->node[q];
		if (nq->pat != 0 || nq->out != 0)
			record(st, q);
		f = st->pos - nq->live;
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
}

/* ------------------------------------------------------------------ */
/* Streams                                                              */
/* ------------------------------------------------------------------ */

mask_stream_t *mask_stream_new(const mask_set_t *set)
{
	mask_stream_t *st;
	size_t ring = 1;

	while (ring < set->maxlen)
		ring <<= 1;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	st->set = set;
	st->ring_mask = (uint32_t)(ring - 1);
	st->hold_cap = set->maxlen > 1 ? set->maxlen - 1 : 1;
	st->ring = calloc(ring, sizeof(*st->ring));
	st->hold = malloc(st->hold_cap);
	st->counts = calloc(set->npairs != 0 ? set->npairs : 1, sizeof(*st->counts));
	if (st->ring == NULL || st->hold == NULL || st->counts == NULL) {
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
	free(st->ring);
	free(st->counts);
	free(st);
}

int mask_stream_feed(mask_stream_t *st, const void *data, size_t len, struct evbuffer *out)
{
	struct feed_ctx ctx;

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

int mask_stream_finish(mask_stream_t *st, struct evbuffer *out)
{
	struct feed_ctx ctx;

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
	st->lit = st->scan = st->pos;
	st->state = 0;
	explicit_bzero(st->hold, st->hold_len);
	st->hold_len = 0;
	return 0;
}

void mask_stream_reset(mask_stream_t *st)
{
	memset(st->ring, 0, ((size_t)st->ring_mask + 1) * sizeof(*st->ring));
	st->npending = 0;
	st->state = 0;
	st->lit = st->scan = st->pos;
	explicit_bzero(st->hold, st->hold_cap);
	st->hold_len = 0;
	memset(st->counts, 0, (st->set->npairs != 0 ? st->set->npairs : 1) * sizeof(*st->counts));
	st->total = 0;
	st->failed = false;
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

/* Runs a whole buffer through a temporary stream (no hold-back needed:
 * all of it is at hand). out NULL: in place. */
static int replace_once(const mask_set_t *set, unsigned char *buf, size_t len,
			struct evbuffer *out, uint64_t *counts, size_t *total)
{
	struct mask_stream st;
	struct feed_ctx ctx;
	size_t ring = 1;
	int rc = 0;

	while (ring < set->maxlen)
		ring <<= 1;
	memset(&st, 0, sizeof(st));
	st.set = set;
	st.ring_mask = (uint32_t)(ring - 1);
	st.counts = counts;
	st.ring = calloc(ring, sizeof(*st.ring));
	if (st.ring == NULL)
		return -1;
	ctx_init(&ctx, &st, out);
	ctx.data = buf;
	if (len != 0 && scan_segment(&st, &ctx, buf, len) != 0)
		rc = -1;
	else if (finalize(&st, &ctx, st.pos) != 0 || emit_literal(&ctx, st.lit, st.pos) != 0)
		rc = -1;
	free(st.ring);
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

/*
 * set.c - compiling a set of (from -> to) pairs into the automaton of
 * automaton.h (SPEC §4.2, §4.3): percent-encoded forms, the arena layout,
 * the trie with its failure, output and live links, and the skip tables.
 * Scanning is stream.c's; docs/masking.md explains the design.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "automaton.h"

_Static_assert((unsigned)SECMEM_LOCKED == (unsigned)MASK_HYG_LOCKED &&
		       (unsigned)SECMEM_DONTDUMP == (unsigned)MASK_HYG_DONTDUMP &&
		       (unsigned)SECMEM_WIPEONFORK == (unsigned)MASK_HYG_WIPEONFORK,
	       "MASK_HYG_* are the SECMEM_* bits");

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
 * Bytes that some URL encoders leave as they are and others escape
 * (JavaScript's encodeURI and encodeURIComponent, Python's quote() with
 * its safe '/', Go's PathEscape and QueryEscape, form encoding). An
 * encoder decides per byte value, not per position; every other byte
 * pct_unreserved() does not accept, every encoder escapes.
 */
#define PCT_OPTIONAL ";,/?:@&=+$!*'()#[]"

/* bitof[c]: the bit of each optional byte that s holds (in PCT_OPTIONAL's
 * order), -1 for every other byte. Returns how many distinct optional
 * bytes s holds. */
static size_t pct_optional_bits(const unsigned char *s, size_t len, int bitof[256])
{
	size_t d = 0;

	for (int c = 0; c < 256; c++)
		bitof[c] = -1;
	for (const char *o = PCT_OPTIONAL; *o != '\0'; o++)
		if (memchr(s, *o, len) != NULL)
			bitof[(unsigned char)*o] = (int)d++;
	return d;
}

/*
 * The escape subsets of a `from` with k escapable bytes:
 *  - k <= MASK_PCT_MIX_MAX: every non-empty subset of the positions;
 *  - else, by byte value, as encoders choose: the bytes every encoder
 *    escapes always escaped, and of the d distinct optional bytes
 *    (PCT_OPTIONAL) each subset when d <= MASK_PCT_CLASS_MAX, else none
 *    or all; the subset that leaves everything raw is not a form.
 * *mixed: whether the first regime applies; *must: whether some byte is
 * escaped in every form (second regime). Returns the number of subsets.
 */
static size_t pct_nsubsets(const unsigned char *from, size_t len, bool *mixed, bool *must)
{
	size_t k = pct_nspecial(from, len), nopt = 0, d;
	int bitof[256];

	*mixed = k <= MASK_PCT_MIX_MAX;
	*must = false;
	if (k == 0)
		return 0;
	if (*mixed)
		return ((size_t)1 << k) - 1;
	d = pct_optional_bits(from, len, bitof);
	for (size_t i = 0; i < len; i++)
		nopt += bitof[from[i]] >= 0;
	*must = nopt < k;
	return (d <= MASK_PCT_CLASS_MAX ? (size_t)1 << d : 2) - (*must ? 0 : 1);
}

/* Number of percent forms generated for a `from` (the raw form
 * excluded): each subset (pct_nsubsets()) in upper and lower hex. Clients
 * escape consistently, so mixed hex case is not generated. */
static size_t pct_nvariants(const unsigned char *from, size_t len)
{
	bool mixed, must;

	return 2 * pct_nsubsets(from, len, &mixed, &must);
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
	bool lower = (v & 1) != 0, mixed, must;
	size_t subset = v >> 1, d = 0;
	bool same_places = p->to_len == p->from_len;
	size_t bit = 0;
	int bitof[256];

	(void)pct_nsubsets(f, p->from_len, &mixed, &must);
	if (mixed || !must)
		subset++; /* 0, everything raw, is the raw form itself */
	if (!mixed)
		d = pct_optional_bits(f, p->from_len, bitof);
	for (size_t i = 0; i < p->from_len; i++) {
		int ob;

		esc[i] = false;
		if (pct_unreserved(f[i]))
			continue;
		if (mixed) {
			esc[i] = (subset >> bit & 1) != 0;
			bit++;
			continue;
		}
		ob = bitof[f[i]];
		if (ob < 0)
			esc[i] = true; /* every encoder escapes it */
		else if (d <= MASK_PCT_CLASS_MAX)
			esc[i] = (subset >> ob & 1) != 0;
		else
			esc[i] = subset != 0; /* none or all of them */
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
 * Maps the arena (base/secmem.h): MADV_DONTDUMP, MADV_WIPEONFORK when the
 * kernel knows it, then mlock (unless NO_MLOCK), which may be refused for
 * lack of privilege or RLIMIT_MEMLOCK quota: then the set works unlocked
 * and says so (mask_set_hygiene()).
 */
static enum mask_set_result arena_map(mask_set_t *set, size_t len, unsigned flags)
{
	switch (secmem_map(&set->mem, len, (flags & MASK_SET_NO_MLOCK) != 0 ? SECMEM_NO_MLOCK : 0)) {
	case SECMEM_OK:
		return MASK_SET_OK;
	case SECMEM_ERR_MAP:
		return MASK_SET_ERR_NOMEM;
	case SECMEM_ERR_MADVISE:
		return MASK_SET_ERR_MADVISE;
	case SECMEM_ERR_MLOCK:
		return MASK_SET_ERR_MLOCK;
	}
	return MASK_SET_ERR_NOMEM;
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

/* Points the set's tables into the mapped arena at the offsets of l. */
static void arena_place(mask_set_t *set, const struct arena_layout *l)
{
	unsigned char *a = set->mem.base;

	set->node = (struct mask_node *)(void *)(a + l->node);
	set->edge_child = (uint32_t *)(void *)(a + l->edge_child);
	set->root_next = (uint32_t *)(void *)(a + l->root_next);
	set->pat = (struct mask_pat *)(void *)(a + l->pat);
	set->edge_byte = a + l->edge_byte;
	set->first = a + l->first;
	set->first_list = a + l->first_list;
	set->bigram = a + l->bigram;
	set->short2 = a + l->short2;
	set->quad = a + l->quad;
#ifdef HAVE_TEDDY
	set->first_vec = (__m128i *)(void *)(a + l->vec);
	set->second_vec = set->first_vec + SKIP_VEC_MAX;
	set->teddy = set->first_vec + 2 * SKIP_VEC_MAX;
#endif
	set->bytes = a + l->bytes;
}

/*
 * Stores the patterns (pair i is pattern i; the percent forms of the pairs
 * from pct_from on follow, so a raw `from` always wins over an equal
 * percent form of another pair) and builds the automaton and the skip
 * tables. The build lists (first child, next sibling, node byte, queue)
 * live in the arena at l's offsets and spell the secrets too: wiped here.
 */
static void set_build(mask_set_t *set, const struct arena_layout *l, const struct mask_pair *pairs,
		      size_t npairs, size_t pct_from, bool *esc)
{
	uint32_t *first_child = (uint32_t *)(void *)(set->mem.base + l->first_child);
	uint32_t *next_sib = (uint32_t *)(void *)(set->mem.base + l->next_sib);
	unsigned char *node_byte = set->mem.base + l->node_byte;
	size_t boff = 0;
	uint32_t k;

	set->nnodes = 1;
	for (k = 0; k < npairs; k++)
		pat_store(set, k, &pairs[k], k, SIZE_MAX, esc, &boff);
	for (size_t i = pct_from; i < npairs; i++) {
		size_t nv = pct_nvariants(pairs[i].from, pairs[i].from_len);

		for (size_t v = 0; v < nv; v++)
			pat_store(set, k++, &pairs[i], i, v, esc, &boff);
	}
	for (k = 0; k < set->npats; k++)
		trie_insert(set, first_child, next_sib, node_byte, k);
	trie_finish(set, first_child, next_sib, node_byte, (uint32_t *)(void *)(set->mem.base + l->queue));
	first_bytes(set);
	explicit_bzero(first_child, (size_t)set->nnodes * sizeof(uint32_t));
	explicit_bzero(next_sib, (size_t)set->nnodes * sizeof(uint32_t));
	explicit_bzero(node_byte, set->nnodes);
}

mask_set_t *mask_set_new_pct(const struct mask_pair *pairs, size_t npairs, size_t pct_from,
			     unsigned flags, enum mask_set_result *res)
{
	struct arena_layout l;
	mask_set_t *set;
	bool *esc;
	size_t npats, from_bytes, all_bytes;

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
	arena_place(set, &l);
	set_build(set, &l, pairs, npairs, pct_from, esc);
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
	/* Wiped, unlocked and unmapped. */
	secmem_unmap(&set->mem);
	free(set);
}

unsigned mask_set_hygiene(const mask_set_t *set)
{
	return set->mem.hygiene;
}

size_t mask_set_npairs(const mask_set_t *set)
{
	return set->npairs;
}

size_t mask_set_maxlen(const mask_set_t *set)
{
	return set->maxlen;
}

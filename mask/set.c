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

/*
 * What real encoders write, by byte value: the bytes other than letters
 * and digits each one leaves as they are (every other byte it writes as
 * %XX), whether it writes a space as '+' (form encoding), and whether it
 * writes lower-case hex (all of them write upper-case but .NET's
 * HttpUtility.UrlEncode, whose row is WebUtility.UrlEncode's). Checked
 * against each one over every printable ASCII byte (docs/masking.md
 * "Percent-encoded forms").
 */
static const struct pct_profile {
	const char *keep;
	bool plus, lower;
} pct_profiles[] = {
	/* Python quote(safe=''), PHP rawurlencode, .NET Uri.EscapeDataString,
	 * curl before 7.88 and curl_easy_escape, Ruby CGI.escapeURIComponent */
	{ "-._~", false, false },
	/* Python quote() (safe='/') */
	{ "-._~/", false, false },
	/* Python quote_plus() and urlencode(), Go url.QueryEscape and
	 * Values.Encode, Ruby CGI.escape, curl --data-urlencode (7.88) */
	{ "-._~", true, false },
	/* Java URLEncoder.encode, WHATWG URLSearchParams (JavaScript, Node),
	 * Ruby URI.encode_www_form_component: '~' escaped */
	{ "-._*", true, false },
	/* PHP urlencode and http_build_query */
	{ "-._", true, false },
	/* .NET WebUtility.UrlEncode (upper), HttpUtility.UrlEncode (lower) */
	{ "-._!*()", true, true },
	/* JavaScript encodeURIComponent, Node querystring.escape */
	{ "-._~!*'()", false, false },
	/* jQuery $.param (encodeURIComponent, then %20 as '+') */
	{ "-._~!*'()", true, false },
	/* axios params (encodeURIComponent, then : $ , [ ] back, '+') */
	{ "-._~!*'():$,[]", true, false },
	/* JavaScript encodeURI */
	{ "-._~!#$&'()*+,/:;=?@", false, false },
	/* Go url.PathEscape */
	{ "-._~$&+:=@", false, false },
	/* Go url.URL path (String(), EscapedPath()) */
	{ "-._~$&+,/:;=@", false, false },
	/* Go url.UserPassword in a URL */
	{ "-._~$&+,;=", false, false },
	/* Java java.net.URI path */
	{ "-._~!$&'()*+,/:;=@", false, false },
	/* WHATWG URL userinfo (JavaScript new URL(), its password) */
	{ "-._~!$%&'()*+,", false, false },
	/* WHATWG URL path */
	{ "-._~!$%&'()*+,/:;=@[\\]^|", false, false },
	/* WHATWG URL query (fetch("...?k=" + value)) */
	{ "-._~!$%&()*+,/:;=?@[\\]^`{|}", false, false },
	/* JavaScript escape() */
	{ "*+-./@_", false, false },
	/* every byte but letters and digits: Rust percent_encoding's
	 * NON_ALPHANUMERIC */
	{ "", false, false },
};
#define PCT_NPROFILES (sizeof(pct_profiles) / sizeof(pct_profiles[0]))

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

/* A set of byte values. */
struct byteset {
	uint64_t w[4];
};

static bool bs_has(const struct byteset *b, unsigned char c)
{
	return (b->w[c >> 6] >> (c & 63) & 1) != 0;
}

static void bs_add(struct byteset *b, unsigned char c)
{
	b->w[c >> 6] |= (uint64_t)1 << (c & 63);
}

/*
 * One percent form of a pair: which bytes of `from` are written %XX
 * (by position: the escapable positions picked by `subset`, bit j for the
 * j-th; or by byte value: those in `esc`), whether an escaped space is
 * written '+' instead, and the hex case.
 */
struct pct_spec {
	struct byteset esc;
	uint32_t subset;
	bool by_pos, plus, lower;
};

/*
 * The percent forms of one pair, deduplicated: no two give the same
 * `from` string, and none gives the raw one. At most:
 * every non-empty subset of MASK_PCT_MIX_MAX positions, again with '+'
 * for space, or the 2^MASK_PCT_CLASS_MAX class subsets, each in two hex
 * cases; then one per profile, two for a profile that writes lower case.
 */
#define PCT_SPECS_MAX (2 * (2 * ((size_t)1 << MASK_PCT_MIX_MAX) + PCT_NPROFILES))
struct pct_plan {
	size_t n;
	struct pct_spec spec[PCT_SPECS_MAX];
	/* scratch of pct_plan_make(): the canonical key of each spec */
	struct pct_spec key[PCT_SPECS_MAX];
};

/* Whether hex byte b has a letter digit (so that its case shows). */
static bool hex_has_letter(unsigned char b)
{
	return (b >> 4) >= 10 || (b & 15) >= 10;
}

/*
 * The canonical key of spec s for a `from` whose byte values are
 * `present` and whose escapable positions are pos[0..npos) (mixed regime
 * only): two specs with equal keys write the same string, and two with
 * different keys different strings. A position subset that treats every
 * occurrence of a byte value alike is keyed by value, so it meets the
 * profile that escapes those values. Returns false when s writes the raw
 * `from` (nothing escaped).
 */
static bool pct_key(const struct pct_spec *s, const struct byteset *present, const unsigned char *f,
		    const size_t *pos, size_t npos, struct pct_spec *key)
{
	bool letter = false;

	memset(key, 0, sizeof(*key));
	if (s->by_pos) {
		struct byteset on = { { 0, 0, 0, 0 } }, off = { { 0, 0, 0, 0 } };

		for (size_t j = 0; j < npos; j++)
			bs_add((s->subset >> j & 1) != 0 ? &on : &off, f[pos[j]]);
		for (size_t w = 0; w < 4; w++)
			if ((on.w[w] & off.w[w]) != 0)
				key->by_pos = true; /* a byte value both ways */
		if (key->by_pos)
			key->subset = s->subset;
		key->esc = on;
	} else {
		for (size_t w = 0; w < 4; w++)
			key->esc.w[w] = s->esc.w[w] & present->w[w];
	}
	key->plus = s->plus && bs_has(&key->esc, ' ');
	for (unsigned c = 0; c < 256 && !letter; c++)
		letter = bs_has(&key->esc, (unsigned char)c) && hex_has_letter((unsigned char)c) &&
			 !(c == ' ' && key->plus);
	key->lower = s->lower && letter;
	for (size_t w = 0; w < 4; w++)
		if (key->esc.w[w] != 0)
			return true;
	return false;
}

/* Appends spec s to the plan unless it writes the raw `from` or a string
 * some earlier spec writes. */
static void pct_plan_add(struct pct_plan *pl, const struct pct_spec *s, const struct byteset *present,
			 const unsigned char *f, const size_t *pos, size_t npos)
{
	struct pct_spec key;

	if (pl->n >= PCT_SPECS_MAX || !pct_key(s, present, f, pos, npos, &key))
		return;
	for (size_t k = 0; k < pl->n; k++)
		if (memcmp(&pl->key[k], &key, sizeof(key)) == 0)
			return;
	pl->key[pl->n] = key;
	pl->spec[pl->n++] = *s;
}

/*
 * The percent forms of pair p, in this order (each upper then lower hex):
 *  - k <= MASK_PCT_MIX_MAX escapable bytes: every non-empty subset of
 *    their positions, then, when p holds a space, each subset that
 *    escapes every space again with '+' for it;
 *  - more: by byte value, the bytes every encoder escapes always escaped,
 *    and of the d distinct optional bytes (PCT_OPTIONAL) each subset when
 *    d <= MASK_PCT_CLASS_MAX, else none or all;
 *  - then every encoder profile (pct_profiles[]), whatever k (only
 *    these for a pair marked MASK_PCT_ENCODERS or longer than
 *    MASK_PCT_FULL_MAX), in
 *    upper-case hex and, where the encoder writes it, lower-case.
 * Duplicates and the raw form itself are left out (pct_plan_add()). A '+'
 * for a space is planned only where `to` has a space too (equal lengths:
 * a sentinel keeps punctuation, SPEC §4.1), so the pair keeps equal
 * lengths. Cost: O(from_len) plus a constant per spec.
 */
static void pct_plan_make(const struct mask_pair *p, struct pct_plan *pl)
{
	const unsigned char *f = p->from, *t = p->to;
	size_t k = pct_nspecial(f, p->from_len), pos[MASK_PCT_MIX_MAX], npos = 0;
	struct byteset present = { { 0, 0, 0, 0 } }, must = { { 0, 0, 0, 0 } };
	bool space = false, plus_ok = true;
	struct pct_spec s;

	pl->n = 0;
	for (size_t i = 0; i < p->from_len; i++) {
		bs_add(&present, f[i]);
		if (f[i] == ' ') {
			space = true;
			/* '+' keeps the lengths equal only over a space of `to` */
			if (p->to_len == p->from_len && t[i] != ' ')
				plus_ok = false;
		}
		if (!pct_unreserved(f[i]) && npos < MASK_PCT_MIX_MAX && k <= MASK_PCT_MIX_MAX)
			pos[npos++] = i;
	}
	if (k == 0 || p->pct == MASK_PCT_ENCODERS || p->from_len > MASK_PCT_FULL_MAX) {
		/* only the profiles (with k == 0: those that escape
		 * unreserved bytes, '~', '-') */
	} else if (k <= MASK_PCT_MIX_MAX) {
		for (int plus = 0; plus <= (space && plus_ok); plus++) {
			for (uint32_t sub = 1; sub < (1u << npos); sub++) {
				bool all_spaces = true;

				for (size_t j = 0; j < npos; j++)
					if (f[pos[j]] == ' ' && (sub >> j & 1) == 0)
						all_spaces = false;
				if (plus && !all_spaces)
					continue;
				for (int lower = 0; lower <= 1; lower++) {
					memset(&s, 0, sizeof(s));
					s.by_pos = true;
					s.subset = sub;
					s.plus = plus != 0;
					s.lower = lower != 0;
					pct_plan_add(pl, &s, &present, f, pos, npos);
				}
			}
		}
	} else {
		int bitof[256];
		size_t d = pct_optional_bits(f, p->from_len, bitof), nsub;

		for (unsigned c = 0; c < 256; c++)
			if (bs_has(&present, (unsigned char)c) && !pct_unreserved((unsigned char)c) &&
			    bitof[c] < 0)
				bs_add(&must, (unsigned char)c);
		nsub = d <= MASK_PCT_CLASS_MAX ? (size_t)1 << d : 2;
		for (size_t sub = 0; sub < nsub; sub++) {
			for (int lower = 0; lower <= 1; lower++) {
				memset(&s, 0, sizeof(s));
				s.esc = must;
				for (unsigned c = 0; c < 256; c++) {
					int b = bitof[c];

					if (b >= 0 && (d <= MASK_PCT_CLASS_MAX ? (sub >> b & 1) != 0 : sub != 0))
						bs_add(&s.esc, (unsigned char)c);
				}
				s.lower = lower != 0;
				pct_plan_add(pl, &s, &present, f, pos, 0);
			}
		}
	}
	for (size_t r = 0; r < PCT_NPROFILES; r++) {
		for (int lower = 0; lower <= pct_profiles[r].lower; lower++) {
			memset(&s, 0, sizeof(s));
			for (unsigned c = 0; c < 256; c++) {
				bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					     (c >= '0' && c <= '9');

				if (!alnum && (c == 0 || strchr(pct_profiles[r].keep, (int)c) == NULL))
					bs_add(&s.esc, (unsigned char)c);
			}
			s.plus = pct_profiles[r].plus && plus_ok;
			s.lower = lower != 0;
			pct_plan_add(pl, &s, &present, f, pos, k <= MASK_PCT_MIX_MAX ? npos : 0);
		}
	}
}

/* How pct_encode() writes a byte. */
enum { PCT_RAW, PCT_HEX, PCT_PLUS };

/* Writes s with each byte as esc says (PCT_*), to out when not NULL;
 * returns the length. */
static size_t pct_encode(const unsigned char *s, size_t len, const unsigned char *esc, bool lower,
			 unsigned char *out)
{
	const char *hex = lower ? "0123456789abcdef" : "0123456789ABCDEF";
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (esc[i] != PCT_HEX) {
			if (out != NULL)
				out[n] = esc[i] == PCT_PLUS ? '+' : s[i];
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

/* How form s writes byte b of a `from` (or of a `to` of another length),
 * given whether s escapes it at all. */
static unsigned char pct_how(const struct pct_spec *s, unsigned char b, bool escaped)
{
	if (!escaped)
		return PCT_RAW;
	return s->plus && b == ' ' ? PCT_PLUS : PCT_HEX;
}

/*
 * Form s (from pct_plan_make()) of pair p: its `from` with the bytes s
 * selects escaped, and its `to` escaped to match. When to has from's
 * length, exactly the same positions of `to` are written the same way,
 * whatever bytes sit there (a sentinel and its real value keep
 * punctuation in place, SPEC §4.1, so these are mostly the same bytes;
 * where they are not, as in the base64 forms, %XX of any byte still
 * decodes to it; a '+' is planned only over a space of `to`), so the
 * form keeps the pair's equal lengths and in-place substitution works;
 * otherwise `to`'s bytes by the same rule (by position: every escapable
 * byte). Writes to fout/tout when not NULL; the lengths always. esc is
 * scratch of max(from_len, to_len) entries.
 */
static void pct_variant(const struct mask_pair *p, const struct pct_spec *s, unsigned char *esc,
			unsigned char *fout, size_t *flen, unsigned char *tout, size_t *tlen)
{
	const unsigned char *f = p->from, *t = p->to;
	size_t bit = 0;

	for (size_t i = 0; i < p->from_len; i++) {
		bool e;

		if (!s->by_pos)
			e = bs_has(&s->esc, f[i]);
		else if (pct_unreserved(f[i]))
			e = false;
		else
			e = (s->subset >> bit++ & 1) != 0;
		esc[i] = pct_how(s, f[i], e);
	}
	*flen = pct_encode(f, p->from_len, esc, s->lower, fout);
	if (p->to_len != p->from_len)
		for (size_t i = 0; i < p->to_len; i++)
			esc[i] = pct_how(s, t[i], s->by_pos ? !pct_unreserved(t[i]) : bs_has(&s->esc, t[i]));
	*tlen = pct_encode(t, p->to_len, esc, s->lower, tout);
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
	size_t edge_byte, node_byte, first, wfirst, first_list, bigram, short2, quad, bytes, total;
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
	if (!layout_add(&off, &l->vec, 2 * SKIP_VEC_MAX + 18, 16) ||
	    !layout_add(&off, &l->node, nnodes, sizeof(struct mask_node)) ||
	    !layout_add(&off, &l->edge_child, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->first_child, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->next_sib, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->queue, nnodes, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->root_next, 256, sizeof(uint32_t)) ||
	    !layout_add(&off, &l->pat, npats, sizeof(struct mask_pat)) ||
	    !layout_add(&off, &l->edge_byte, nnodes, 1) || !layout_add(&off, &l->node_byte, nnodes, 1) ||
	    !layout_add(&off, &l->first, 256, 1) || !layout_add(&off, &l->wfirst, 256, 1) ||
	    !layout_add(&off, &l->first_list, 2 * SKIP_VEC_MAX, 1) ||
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
static void teddy_add(__m128i *tables, unsigned a, unsigned b, unsigned c, unsigned nfixed,
		      unsigned k)
{
	unsigned char *t = (unsigned char *)tables; /* lo1 hi1 lo2 hi2 lo3 hi3 */
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
 *
 * nul_split: the NUL prefixes go to wteddy instead, the tables
 * skip_nul_blocks() (stream.c) runs on the blocks that hold a NUL:
 * buckets 0-3 for those with the NUL second (little-endian forms),
 * 4-7 for those beginning with it, spread by their bytes. Their NUL
 * bytes have fixed nibbles (0, 0), so a lane passes a NUL pattern's
 * bucket only with the NUL in its place.
 */
static void teddy_nul_add(mask_set_t *set, unsigned a, unsigned b, unsigned c, unsigned nfixed)
{
	teddy_add(set->wteddy, a, b, c, nfixed, (a == 0 ? 4u : 0u) + ((a | b) + c) % 4);
}

static void teddy_build(mask_set_t *set)
{
	const struct mask_node *n0 = &set->node[0];
	unsigned nb = 0, nbk = 8;

	/* Prefixes with a NUL in their first two bytes (the UTF-16 and
	 * UTF-32 forms of a value, round 45) get the last two buckets to
	 * themselves, those beginning with one (big-endian forms) the
	 * seventh, those with one second (little-endian) the eighth: a
	 * lane then passes them only with a NUL there. Mixed into the
	 * others, their NUL's nibbles (0, 0) let a space or a '0' after a
	 * value's first letter pass, and in one bucket the first bytes of
	 * every value's forms mixed: English text was scanned 20-50%
	 * slower (mask-bench --table). */
	for (uint32_t e1 = n0->edge0; e1 < n0->edge0 + n0->nedges && nbk == 8 && !set->nul_split; e1++) {
		const struct mask_node *n1 = &set->node[set->edge_child[e1]];

		if (set->edge_byte[e1] == 0)
			nbk = 6;
		for (uint32_t e2 = n1->edge0; e2 < n1->edge0 + n1->nedges; e2++)
			if (set->edge_byte[e2] == 0)
				nbk = 6;
	}
	for (uint32_t e1 = n0->edge0; e1 < n0->edge0 + n0->nedges; e1++) {
		unsigned a = set->edge_byte[e1];
		const struct mask_node *n1 = &set->node[set->edge_child[e1]];

		/* nul_split: the NUL patterns are no lane's here (wteddy) */
		if (set->nul_split && a == 0 && n1->pat != 0)
			teddy_nul_add(set, 0, 0, 0, 1);
		else if (n1->pat != 0)
			teddy_add(set->teddy, a, 0, 0, 1, nbk == 6 && a == 0 ? 6 : nb++ % nbk);
		for (uint32_t e2 = n1->edge0; e2 < n1->edge0 + n1->nedges; e2++) {
			unsigned b = set->edge_byte[e2];
			const struct mask_node *n2 = &set->node[set->edge_child[e2]];
			unsigned k;

			if (set->nul_split && (a == 0 || b == 0)) {
				if (n2->pat != 0)
					teddy_nul_add(set, a, b, 0, 2);
				for (uint32_t e3 = n2->edge0; e3 < n2->edge0 + n2->nedges; e3++)
					teddy_nul_add(set, a, b, set->edge_byte[e3], 3);
				continue;
			}
			k = nbk == 6 && a == 0 ? 6 : nbk == 6 && b == 0 ? 7 : nb++ % nbk;
			if (n2->pat != 0)
				teddy_add(set->teddy, a, b, 0, 2, k);
			for (uint32_t e3 = n2->edge0; e3 < n2->edge0 + n2->nedges; e3++)
				teddy_add(set->teddy, a, b, set->edge_byte[e3], 3, k);
		}
	}
}
#endif

/* Whether pattern k holds a NUL in its first NUL_LEAD + 1 bytes. */
static bool nul_pat(const mask_set_t *set, size_t k)
{
	size_t m = set->pat[k].from_len < NUL_LEAD + 1 ? set->pat[k].from_len : NUL_LEAD + 1;

	return memchr(set->bytes + set->pat[k].from_off, 0, m) != NULL;
}

/* Builds the tables used to skip input in the root state: first bytes
 * (list, table, SSE2 broadcasts), the first-two-bytes bitmaps and the
 * hashed first-four-bytes bitmap. With NUL patterns (none of them a gap
 * pattern, whose NUL a gap may push further), nul_split: the first
 * bytes, the second-byte list and the Teddy tables are the other
 * patterns' (perf46m: the wide forms of round 45 in them made text with
 * no NUL 30-50% slower to scan), wfirst the NUL patterns' first bytes. */
static void first_bytes(mask_set_t *set)
{
	bool any = false, gapped = false;

	for (size_t k = 0; k < set->npats; k++) {
		if (nul_pat(set, k)) {
			any = true;
			gapped = gapped || set->pat[k].gaps;
		}
	}
	set->nul_split = any && !gapped;
	for (size_t k = 0; k < set->npats; k++) {
		unsigned char f0 = set->bytes[set->pat[k].from_off];

		if (set->nul_split && nul_pat(set, k))
			set->wfirst[f0] = 1;
		else
			set->first[f0] = 1;
	}
	set->nfirst = 0;
	for (unsigned c = 0; c < 256; c++) {
		if (set->first[c] == 0)
			continue;
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
		if (set->nsecond > SKIP_VEC_MAX || (set->nul_split && nul_pat(set, k)))
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
	/* where a NUL may be: both sets of lanes in one lookup (perf48m) */
	for (unsigned k = 0; k < 6; k++)
		set->cteddy[k] = _mm_or_si128(set->teddy[k], set->wteddy[k]);
	set->use_teddy = __builtin_cpu_supports("ssse3") != 0;
	set->use_teddy32 = set->use_teddy && __builtin_cpu_supports("avx2") != 0;
#endif
}

/* Copies pair bytes (or its percent form spec, when not NULL) into the
 * arena at *boff as pattern k. esc: scratch for pct_variant. */
static void pat_store(mask_set_t *set, uint32_t k, const struct mask_pair *p, size_t pair,
		      const struct pct_spec *spec, unsigned char *esc, size_t *boff)
{
	struct mask_pat *pt = &set->pat[k];
	unsigned char *b = set->bytes + *boff;
	size_t flen, tlen;

	if (spec == NULL) {
		flen = p->from_len;
		tlen = p->to_len;
		memcpy(b, p->from, flen);
		if (tlen != 0)
			memcpy(b + flen, p->to, tlen);
	} else {
		pct_variant(p, spec, esc, b, &flen, NULL, &tlen);
		pct_variant(p, spec, esc, NULL, &flen, b + flen, &tlen);
	}
	pt->from_off = (uint32_t)*boff;
	pt->from_len = (uint32_t)flen;
	pt->to_off = (uint32_t)(*boff + flen);
	pt->to_len = (uint32_t)tlen;
	pt->origin = (uint32_t)pair;
	/* A raw form only (a percent form lives in a URL, where no line
	 * breaks), of equal lengths, holding no gap byte itself. */
	pt->gaps = p->gaps && spec == NULL && flen == tlen && flen >= 2 && flen <= MASK_GAP_MAX_BYTES;
	for (size_t i = 0; pt->gaps && i < flen; i++)
		pt->gaps = !gap_byte(b[i]);
	if (pt->gaps && flen > set->gap_maxlen)
		set->gap_maxlen = flen;
	*boff += flen + tlen;
	if (flen > set->maxlen)
		set->maxlen = flen;
	if (k == 0 || flen < set->minlen)
		set->minlen = flen;
	if (flen != tlen)
		set->equal_len = false;
}

/* Checks the pairs and sums patterns and bytes, percent forms (of the
 * pairs from pct_from on) included. pl, esc: scratch. */
static enum mask_set_result pairs_measure(const struct mask_pair *pairs, size_t npairs,
					  size_t pct_from, struct pct_plan *pl, unsigned char *esc,
					  size_t *npats, size_t *from_bytes, size_t *all_bytes)
{
	*npats = 0;
	*from_bytes = 0;
	*all_bytes = 0;
	if (npairs > MASK_SET_MAX_PAIRS || (npairs != 0 && pairs == NULL))
		return MASK_SET_ERR_ARGS;
	for (size_t i = 0; i < npairs; i++) {
		const struct mask_pair *p = &pairs[i];

		if (p->from_len == 0)
			return MASK_SET_ERR_EMPTY;
		if (p->from == NULL || (p->to_len != 0 && p->to == NULL))
			return MASK_SET_ERR_ARGS;
		if (p->from_len > MASK_PATTERN_MAX_BYTES || p->to_len > MASK_PATTERN_MAX_BYTES)
			return MASK_SET_ERR_TOO_LONG;
		/* Bounded: at most MAX_PAIRS * (1 + PCT_SPECS_MAX) * 3 * 16 KiB,
		 * far below SIZE_MAX, and checked against MAX_BYTES below. */
		*npats += 1;
		*from_bytes += p->from_len;
		*all_bytes += p->from_len + p->to_len;
		pl->n = 0;
		if (i >= pct_from && p->pct != MASK_PCT_NONE)
			pct_plan_make(p, pl);
		for (size_t v = 0; v < pl->n; v++) {
			size_t fl, tl;

			pct_variant(p, &pl->spec[v], esc, NULL, &fl, NULL, &tl);
			*npats += 1;
			*from_bytes += fl;
			*all_bytes += fl + tl;
		}
		if (*all_bytes > MASK_SET_MAX_BYTES)
			return MASK_SET_ERR_TOO_BIG;
	}
	return MASK_SET_OK;
}

size_t mask_set_pairs_bytes(const struct mask_pair *pairs, size_t npairs, size_t pct_from, size_t *each)
{
	unsigned char *esc = malloc(MASK_PATTERN_MAX_BYTES);
	struct pct_plan *pl = malloc(sizeof(*pl));
	size_t total = 0;

	if (esc == NULL || pl == NULL) {
		free(esc);
		free(pl);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < npairs; i++) {
		const struct mask_pair *p = &pairs[i];
		size_t b = p->from_len + p->to_len;

		pl->n = 0;
		if (i >= pct_from && p->pct != MASK_PCT_NONE && p->from_len <= MASK_PATTERN_MAX_BYTES)
			pct_plan_make(p, pl);
		for (size_t v = 0; v < pl->n; v++) {
			size_t fl, tl;

			pct_variant(p, &pl->spec[v], esc, NULL, &fl, NULL, &tl);
			b += fl + tl;
		}
		if (each != NULL)
			each[i] = b;
		total += b;
	}
	explicit_bzero(esc, MASK_PATTERN_MAX_BYTES);
	free(esc);
	free(pl);
	return total;
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
	set->wfirst = a + l->wfirst;
	set->first_list = a + l->first_list;
	set->bigram = a + l->bigram;
	set->short2 = a + l->short2;
	set->quad = a + l->quad;
#ifdef HAVE_TEDDY
	set->first_vec = (__m128i *)(void *)(a + l->vec);
	set->second_vec = set->first_vec + SKIP_VEC_MAX;
	set->teddy = set->first_vec + 2 * SKIP_VEC_MAX;
	set->wteddy = set->teddy + 6;
	set->cteddy = set->wteddy + 6;
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
		      size_t npairs, size_t pct_from, struct pct_plan *pl, unsigned char *esc)
{
	uint32_t *first_child = (uint32_t *)(void *)(set->mem.base + l->first_child);
	uint32_t *next_sib = (uint32_t *)(void *)(set->mem.base + l->next_sib);
	unsigned char *node_byte = set->mem.base + l->node_byte;
	size_t boff = 0;
	uint32_t k;

	set->nnodes = 1;
	for (k = 0; k < npairs; k++)
		pat_store(set, k, &pairs[k], k, NULL, esc, &boff);
	for (size_t i = pct_from; i < npairs; i++) {
		pl->n = 0;
		if (pairs[i].pct != MASK_PCT_NONE)
			pct_plan_make(&pairs[i], pl);
		for (size_t v = 0; v < pl->n; v++)
			pat_store(set, k++, &pairs[i], i, &pl->spec[v], esc, &boff);
	}
	/* The budget grows with the length: the longest gap pattern's. */
	set->gap_max = set->gap_maxlen != 0 ? gap_budget(set->gap_maxlen) : 0;
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
	unsigned char *esc;
	struct pct_plan *pl;
	size_t npats, from_bytes, all_bytes;

	*res = MASK_SET_OK;
	/* Scratch for pct_variant: one code per byte of the longest pair, and
	 * one pair's plan of percent forms. */
	esc = malloc(MASK_PATTERN_MAX_BYTES);
	pl = malloc(sizeof(*pl));
	if (esc == NULL || pl == NULL) {
		*res = MASK_SET_ERR_NOMEM;
		goto fail_esc;
	}
	*res = pairs_measure(pairs, npairs, pct_from, pl, esc, &npats, &from_bytes, &all_bytes);
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
	set_build(set, &l, pairs, npairs, pct_from, pl, esc);
	for (size_t i = 0; i < npairs; i++) {
		const unsigned char *f = pairs[i].from;
		size_t n = pairs[i].from_len;

		if (n > 0 && (memchr(f, ':', n) != NULL || f[0] == ' ' || f[0] == '\t' || f[n - 1] == ' ' ||
			      f[n - 1] == '\t'))
			set->field_syntax = true;
	}
	/* esc and the plan spell which bytes the secrets hold where */
	explicit_bzero(esc, MASK_PATTERN_MAX_BYTES);
	explicit_bzero(pl, sizeof(*pl));
	free(esc);
	free(pl);
	return set;

fail_set:
	free(set);
fail_esc:
	if (esc != NULL)
		explicit_bzero(esc, MASK_PATTERN_MAX_BYTES);
	if (pl != NULL)
		explicit_bzero(pl, sizeof(*pl));
	free(esc);
	free(pl);
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

bool mask_set_equal_len(const mask_set_t *set)
{
	return set->equal_len;
}

bool mask_set_field_syntax(const mask_set_t *set)
{
	return set->field_syntax;
}

size_t mask_set_maxlen(const mask_set_t *set)
{
	return set->maxlen;
}

size_t mask_set_holdmax(const mask_set_t *set)
{
	return set->maxlen > 0 ? set->maxlen - 1 + set->gap_max : 0;
}

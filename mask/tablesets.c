/*
 * tablesets.c - the sets a credential table builds and what it answers
 * with them (SPEC §4.2, §4.3): the remask set with every real-value form
 * it knows (raw, JSON-escaped, base64, percent), the outbound sets cached
 * per eligible-credential combination, and the detect set that finds a
 * sentinel or a real value in a head (as it is or percent-decoded).
 *
 * Nothing here prints a real value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "automaton.h"
#include "tablepriv.h"
#include "base/hex.h"

/* ------------------------------------------------------------------ */
/* Sets                                                                 */
/* ------------------------------------------------------------------ */

/* Forms appended to outbound sets: all of them, or the raw values only
 * when all would pass the set's pair limit. */
static size_t set_forms(const mask_table_t *t)
{
	if (t->nvalues + t->nform + t->nstale <= MASK_SET_MAX_PAIRS)
		return t->nform;
	return t->nvalues * 2 + t->nstale <= MASK_SET_MAX_PAIRS ? t->nvalues : 0;
}

/*
 * Every form of a real value maps to the same form of its sentinel, of the
 * same length (a sentinel keeps the value's punctuation and control
 * bytes, SPEC §4.1, and each form is made the same way from both): the
 * head substitution is in place and relies on it. A set where that does
 * not hold is a bug, not a configuration: refused (freed, -1, set_res
 * MASK_SET_ERR_ARGS) rather than used.
 */
static int set_check_equal(mask_table_t *t, mask_set_t *set)
{
	if (mask_set_equal_len(set))
		return 0;
	mask_set_free(set);
	t->set_res = MASK_SET_ERR_ARGS;
	errno = EINVAL;
	return -1;
}

/* The pairs of a set over every value (build_set()), *n of them, in a
 * malloc'd array of pointers (NULL with *n 0 when there are none, NULL
 * with t->set_res on ENOMEM). */
static struct mask_pair *set_pairs(mask_table_t *t, const unsigned char *inject, bool inbound, size_t *n)
{
	struct mask_pair *pairs = NULL;
	size_t nforms = inbound ? 0 : set_forms(t);
	size_t nstale = inbound ? 0 : t->nstale;

	*n = t->nvalues + nforms + nstale;
	if (t->nvalues == 0) {
		*n = 0;
		return NULL;
	}
	pairs = calloc(*n, sizeof(*pairs));
	if (pairs == NULL) {
		t->set_res = MASK_SET_ERR_NOMEM;
		return NULL;
	}
	for (size_t i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];
		bool real_to = inject != NULL && inject[i];
		pairs[i].from = inbound ? v->real : v->sent;
		pairs[i].from_len = v->len;
		pairs[i].to = inbound || !real_to ? v->sent : v->real;
		pairs[i].to_len = v->len;
	}
	/* Outbound: a real value in any form the remasker knows, going out,
	 * becomes its sentinel and is counted (the request is refused,
	 * SPEC §4.2); in every percent encoding, wherever it is. */
	if (nforms != 0)
		memcpy(pairs + t->nvalues, t->form, nforms * sizeof(*pairs));
	/* Outbound: a stale sentinel maps to itself and is counted (refused
	 * in a request head on any host, SPEC §4.1), in every percent
	 * encoding too. Never inbound: it is not a secret. */
	for (size_t k = 0; k < nstale; k++) {
		struct mask_pair *sp = &pairs[t->nvalues + nforms + k];
		sp->from = sp->to = t->stale[k].s;
		sp->from_len = sp->to_len = t->stale[k].len;
	}
	return pairs;
}

/* Builds a set over every value; direction: 0 sent->sent, 1 real->sent,
 * or per-value inject flags (sent->real where set). Outbound sets (not
 * inbound) get the real-value forms after the values (set_forms()). */
static mask_set_t *build_set(mask_table_t *t, const unsigned char *inject, bool inbound,
			     unsigned flags)
{
	enum mask_set_result res;
	mask_set_t *set;
	size_t n;
	struct mask_pair *pairs = set_pairs(t, inject, inbound, &n);

	if (pairs == NULL && n != 0)
		return NULL;
	set = mask_set_new_pct(pairs, n, (flags & MASK_SET_PERCENT) != 0 ? 0 : t->nvalues,
			       flags & ~(unsigned)MASK_SET_PERCENT, &res);
	/* pairs holds pointers only; the set copied the bytes. */
	free(pairs);
	if (set == NULL) {
		t->set_res = res;
		if (res != MASK_SET_ERR_NOMEM && res != MASK_SET_ERR_MLOCK &&
		    res != MASK_SET_ERR_MADVISE)
			errno = E2BIG;
		return NULL;
	}
	if (set_check_equal(t, set) != 0)
		return NULL;
	t->set_hygiene &= mask_set_hygiene(set);
	return set;
}

/* Values longer than this get no base64 forms in the remask set (a whole
 * file used as a secret would make the set too big for nothing). */
#define B64_FORM_MAX_VALUE 4096
/* Up to this, a value gets the base64 forms in the middle of the data
 * (fix39m: a 6 KiB value's base64 was not re-masked); over
 * B64_FORM_MAX_VALUE with no percent forms and in pieces (form_b64()).
 * Every value is at most MASK_PATTERN_MAX_BYTES. */
#define B64_FORM_MAX_VALUE_BIG MASK_PATTERN_MAX_BYTES

static int build_forms(mask_table_t *t);

/*
 * The base64 forms of value bytes v[0..n) that start at offset `align`
 * (0, 1, 2) of the encoded data: only the characters that depend on v
 * alone (an edge character mixes bits of the neighbours). url: the
 * URL-safe alphabet. Writes them into out (room for n / 3 * 4 + 8) and
 * returns their number; scratch (room for n + 2 bytes) ends wiped.
 */
static size_t b64_form(const char *v, size_t n, unsigned align, bool url, bool tail,
		       unsigned char *scratch, char *out)
{
	size_t first = (8 * align + 5) / 6, last, enc, i;
	long w;

	memset(scratch, 0, align);
	memcpy(scratch + align, v, n);
	w = mask_b64_encode(scratch, align + n, out, n / 3 * 4 + 8);
	explicit_bzero(scratch, align + n);
	if (w < 0)
		return 0;
	enc = (size_t)w;
	/* Character j covers bits [6j, 6j + 6); v covers [8 align, 8 (align + n)). */
	last = (8 * (align + n) - 6) / 6;
	/* tail: v ends the encoded data; the rest of its last character is
	 * zero padding, and '=' follow: all determined by v. */
	if (tail)
		last = enc - 1;
	if (last >= enc || last < first)
		return 0;
	if (url)
		for (i = first; i <= last; i++)
			out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	memmove(out, out + first, last - first + 1);
	explicit_bzero(out + (last - first + 1), enc - (last - first + 1));
	return last - first + 1;
}

/* Frees the forms list (build_forms()), leaving none. */
static void forms_free(mask_table_t *t)
{
	free(t->form);
	free(t->form_value);
	t->form = NULL;
	t->form_value = NULL;
	t->nform = 0;
}

/*
 * The remask set (SPEC §4.3): pair i = value i, real -> sentinel, then the
 * JSON-escaped forms of each value that differ (form_json(): as
 * JavaScript, Python, PHP, Go and .NET write them, and with every control
 * byte as \u00xx), then the value with its line ends changed (LF <-> CRLF,
 * raw and JSON-escaped: form_lines()), then its base64 forms (three
 * alignments, in the middle of the data or ending it with its padding,
 * standard and URL-safe alphabets) -> the same forms of its sentinel, so
 * an upstream that echoes `Authorization: Basic base64(user:REAL)` or any
 * base64 of a real value does not hand the sandbox the value one decode
 * away. Percent forms of everything (MASK_SET_PERCENT: every mix for a
 * few escapable bytes, and what each known encoder writes). The forms
 * live in the secret arena.
 */
/*
 * The forms of values over 4 KiB (the pieces of their joined form, their
 * base64 forms: fix39m) past the sets' bound (MASK_SET_MAX_BYTES, which
 * the detect and outbound sets, the heaviest, reach first): the largest
 * such values go without them, one after the other, until the rest fit
 * (tvalue small, t->forms_small), and the forms are made again. Round
 * 40: all of them went at once, so one value of 16 KiB too many left
 * every other big value's base64 unmasked. 0, or -1 (ENOMEM).
 */
static int forms_fit(mask_table_t *t)
{
	size_t n, total, drop = 0, *each = NULL, *dv = NULL;
	struct mask_pair *pairs = set_pairs(t, NULL, false, &n);
	bool any = false;

	if (pairs == NULL)
		return n == 0 ? 0 : -1;
	each = calloc(n + 1, sizeof(*each));
	dv = calloc(t->nvalues + 1, sizeof(*dv));
	total = each != NULL && dv != NULL ? mask_set_pairs_bytes(pairs, n, 0, each) : SIZE_MAX;
	free(pairs);
	if (total == SIZE_MAX) {
		free(each);
		free(dv);
		t->set_res = MASK_SET_ERR_NOMEM;
		return -1;
	}
	/* each form's weight counted for its value when it can go */
	for (size_t k = 0; k < set_forms(t); k++)
		if (t->form_drop[k])
			dv[t->form_value[k]] += each[t->nvalues + k];
	while (total - drop > MASK_SET_MAX_BYTES) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < t->nvalues; i++)
			if (dv[i] != 0 && !t->value[i].small &&
			    (best == SIZE_MAX || t->value[i].len >= t->value[best].len))
				best = i;
		if (best == SIZE_MAX)
			break; /* too big without them too: the build says so */
		t->value[best].small = true;
		drop += dv[best];
		any = true;
	}
	free(each);
	free(dv);
	if (!any)
		return 0;
	t->forms_small = true;
	forms_free(t);
	return build_forms(t);
}

static mask_set_t *build_inbound(mask_table_t *t)
{
	enum mask_set_result res;
	mask_set_t *set;

	if (build_forms(t) != 0 || forms_fit(t) != 0)
		return NULL;
	set = mask_set_new(t->form, t->nform, MASK_SET_PERCENT, &res);
	if (set == NULL) {
		t->set_res = res;
		return NULL;
	}
	if (set_check_equal(t, set) != 0)
		return NULL;
	t->set_hygiene &= mask_set_hygiene(set);
	return set;
}

/* The pairs of the remask set being built: pair k, its value fv[k]. */
struct formlist {
	struct mask_pair *pairs;
	uint32_t *fv;
	size_t n;
	unsigned char *drop; /* [n] a form a value that is small goes without */
	bool dropping;       /* the forms being added are such */
};

/* Appends the pair from -> to (equal lengths) of value v, with the
 * percent forms pct says (MASK_PCT_*). */
static void form_add(struct formlist *fl, uint32_t v, const char *from, const char *to, size_t len,
		     unsigned char pct)
{
	fl->fv[fl->n] = v;
	fl->drop[fl->n] = fl->dropping;
	fl->pairs[fl->n].from = from;
	fl->pairs[fl->n].to = to;
	fl->pairs[fl->n].from_len = fl->pairs[fl->n].to_len = len;
	fl->pairs[fl->n].pct = pct;
	/* Every form of a real value is also found broken into lines
	 * (mask.h struct mask_pair gaps): base64 at 60, 64 or 76 columns. */
	fl->pairs[fl->n].gaps = true;
	fl->n++;
}

/* A form is found with line breaks inside only up to MASK_GAP_MAX_BYTES
 * (mask.h struct mask_pair gaps): the pieces a longer one splits into
 * (at most FORM_PIECES_MAX, each of MASK_GAP_MAX_BYTES or less, the
 * same bytes of the sentinel's form in their place), each a gap pair of
 * its own, are. One after the other they cover the form whatever lines
 * it is given (fix39m: a 12 to 16 KiB key file written in JSON with
 * `\n`, or with CRLF, and the base64 of a 6 KiB value, reached the
 * sandbox). A piece found alone is re-masked alone. */
#define FORM_PIECES_MAX 3

static void form_pieces(struct formlist *fl, uint32_t v, const char *from, const char *to, size_t len,
			unsigned char pct)
{
	size_t k, np = (len + MASK_GAP_MAX_BYTES - 1) / MASK_GAP_MAX_BYTES, at = 0;

	if (np < 2 || np > FORM_PIECES_MAX)
		return;
	for (k = 0; k < np; k++) {
		size_t end = len * (k + 1) / np;

		form_add(fl, v, from + at, to + at, end - at, pct);
		at = end;
	}
}

/*
 * JSON string escapes as the encoders in use write them; a value is
 * re-masked in each form that differs from the raw one and from the forms
 * before it:
 *   JSON_SHORT_BF  \b and \f as such (JavaScript, Python), else \u0008
 *                  and \u000c (Go);
 *   JSON_SLASH     '/' as \/ (PHP; most encoders leave it);
 *   JSON_HTML      '<', '>' and '&' as \u003c, \u003e, \u0026 (Go);
 *   JSON_NET       as .NET's System.Text.Json writes by default: '"' as
 *                  \u0022, and '\'', '+' and '`' escaped too (\u0027,
 *                  \u002B, \u0060), with JSON_HTML's and upper-case hex;
 *   JSON_UCTRL     every control byte as \u00xx, \n \r \t \b \f too
 *                  (\u000a: encoders that know no short escapes);
 *   JSON_UPPER     upper-case hex digits (\u000A, \u003C).
 * Always: '"' and '\\' escaped, \n \r \t short unless JSON_UCTRL, the
 * other control bytes as \u00xx. A multi-line secret (a PEM key) is so
 * found in a JSON body too.
 */
enum { JSON_SHORT_BF = 1, JSON_SLASH = 2, JSON_HTML = 4, JSON_NET = 8, JSON_UCTRL = 16, JSON_UPPER = 32 };
static const unsigned json_styles[] = {
	JSON_SHORT_BF,                                       /* JavaScript, Python */
	JSON_SHORT_BF | JSON_SLASH,                          /* PHP */
	JSON_HTML,                                           /* Go */
	JSON_SHORT_BF | JSON_HTML | JSON_NET | JSON_UPPER,   /* .NET */
	JSON_UCTRL,                                          /* \u000a */
	JSON_UCTRL | JSON_UPPER,                             /* \u000A */
};
#define JSON_STYLES (sizeof(json_styles) / sizeof(json_styles[0]))

/* The escape of byte b in style st into out (room for 6), its length;
 * 0 when b stays as it is. */
static size_t json_escape(unsigned char b, unsigned st, char out[6])
{
	const char *hex = (st & JSON_UPPER) ? "0123456789ABCDEF" : "0123456789abcdef";
	bool ctl_short = (st & JSON_UCTRL) == 0;
	char shortc = 0;

	switch (b) {
	case '"': shortc = (st & JSON_NET) ? 0 : '"'; break;
	case '\\': shortc = '\\'; break;
	case '\n': shortc = ctl_short ? 'n' : 0; break;
	case '\r': shortc = ctl_short ? 'r' : 0; break;
	case '\t': shortc = ctl_short ? 't' : 0; break;
	case '\b': shortc = ctl_short && (st & JSON_SHORT_BF) ? 'b' : 0; break;
	case '\f': shortc = ctl_short && (st & JSON_SHORT_BF) ? 'f' : 0; break;
	case '/': shortc = (st & JSON_SLASH) ? '/' : 0; break;
	default: break;
	}
	if (shortc != 0) {
		out[0] = '\\';
		out[1] = shortc;
		return 2;
	}
	if (b < 0x20 || ((st & JSON_HTML) && (b == '<' || b == '>' || b == '&')) ||
	    ((st & JSON_NET) && (b == '"' || b == '\'' || b == '+' || b == '`'))) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[b >> 4];
		out[5] = hex[b & 15];
		return 6;
	}
	return 0;
}

/* The escaped length of s[0..len) in style st. */
static size_t json_len(const char *s, size_t len, unsigned st)
{
	size_t n = 0;
	char e[6];

	for (size_t k = 0; k < len; k++) {
		size_t el = json_escape((unsigned char)s[k], st, e);

		n += el > 0 ? el : 1;
	}
	return n;
}

/* Writes the escaped s[0..len) in style st into out. */
static void json_write(const char *s, size_t len, unsigned st, char *out)
{
	size_t o = 0;

	for (size_t k = 0; k < len; k++) {
		size_t el = json_escape((unsigned char)s[k], st, out + o);

		if (el == 0)
			out[o++] = s[k];
		else
			o += el;
	}
}

/*
 * The JSON-escaped forms (json_styles) of real[0..len) -> sent[0..len),
 * a form of value i, that differ from it and from each other, into the
 * arena. Percent forms (JSON in a URL or a form field) for those the
 * common encoders write, not for the \u000a style nor, when lines (real is
 * the value with its line ends changed), for any: each percent form of a
 * multi-line value costs its length times the forms a URL encoder may
 * write, in every set (docs/masking.md "What the forms cost"). 0 or -1
 * (ENOMEM).
 */
static int form_json(mask_table_t *t, struct formlist *fl, size_t i, const char *real,
		     const char *sent, size_t len, bool lines)
{
	const char *made[JSON_STYLES];
	size_t made_len[JSON_STYLES], nmade = 0;

	for (size_t k = 0; k < JSON_STYLES; k++) {
		unsigned st = json_styles[k];
		size_t n = json_len(real, len, st);
		bool dup = n == len;
		char *rj, *sj;

		/* Sentinels keep punctuation and control bytes, so the
		 * escapes fall at the same places in both; a length that
		 * differs would mean they do not: no form then. */
		if (dup || json_len(sent, len, st) != n)
			continue;
		rj = mask_secrets_alloc(t->sec, n);
		sj = mask_secrets_alloc(t->sec, n);
		if (rj == NULL || sj == NULL)
			return -1;
		json_write(real, len, st, rj);
		json_write(sent, len, st, sj);
		for (size_t m = 0; m < nmade && !dup; m++)
			dup = made_len[m] == n && memcmp(made[m], rj, n) == 0;
		if (dup)
			continue; /* the arena keeps the copy until the table goes */
		made[nmade] = rj;
		made_len[nmade++] = n;
		form_add(fl, (uint32_t)i, rj, sj, n,
			 lines || (st & JSON_UCTRL) != 0 ? MASK_PCT_NONE : MASK_PCT_ALL);
	}
	return 0;
}

/* s[0..len) with its line ends changed, into out when not NULL (room for
 * 2 len): crlf, every '\n' not after a '\r' as "\r\n"; else every "\r\n"
 * as '\n'. Returns the new length. Pure. */
static size_t line_ends(const char *s, size_t len, bool crlf, char *out)
{
	size_t o = 0;

	for (size_t k = 0; k < len; k++) {
		if (crlf && s[k] == '\n' && (k == 0 || s[k - 1] != '\r')) {
			if (out != NULL)
				out[o] = '\r';
			o++;
		} else if (!crlf && s[k] == '\r' && k + 1 < len && s[k + 1] == '\n') {
			continue;
		}
		if (out != NULL)
			out[o] = s[k];
		o++;
	}
	return o;
}

/*
 * Value i with its line ends changed, as a file or a form submission
 * (HTML forms send every line end as CRLF) or a Windows tool writes it
 * back: with a bare '\n', the form with "\r\n"; with "\r\n", the form with
 * '\n'; each raw and in each JSON style ("\\r\\n", "\\u000d\\u000a"...).
 * The sentinel keeps control bytes (SPEC §4.1), so its form has the same
 * length; one that has not is skipped. 0 or -1 (ENOMEM).
 */
static int form_lines(mask_table_t *t, struct formlist *fl, size_t i)
{
	const struct tvalue *v = &t->value[i];

	for (int crlf = 1; crlf >= 0; crlf--) {
		size_t n = line_ends(v->real, v->len, crlf != 0, NULL);
		char *rl, *sl;

		if (n == v->len || line_ends(v->sent, v->len, crlf != 0, NULL) != n)
			continue;
		rl = mask_secrets_alloc(t->sec, n);
		sl = mask_secrets_alloc(t->sec, n);
		if (rl == NULL || sl == NULL)
			return -1;
		(void)line_ends(v->real, v->len, crlf != 0, rl);
		(void)line_ends(v->sent, v->len, crlf != 0, sl);
		form_add(fl, (uint32_t)i, rl, sl, n, MASK_PCT_ENCODERS);
		if (form_json(t, fl, i, rl, sl, n, true) != 0)
			return -1;
	}
	return 0;
}

/* Multi-line values longer than this get no form-decoded form: a PEM
 * key's base64 holds '+' on every line (its forms, a few of 4 KiB each,
 * made the five-PEM table of mask-bench --table 5 pass the set limit),
 * and a query or a cookie holds no line break. A value on one line gets
 * it up to B64_FORM_MAX_VALUE (review40b: a 2 KiB token with '+' came
 * back with spaces, in clear). */
#define PLUS_FORM_MAX_VALUE 1024

/*
 * Value i as a form decoder reads it (round 40 of the attack): every '+'
 * a space. A value holding '+' (a base64 secret: an AWS secret access
 * key, an HMAC key) injected raw into a query, a form body or a cookie is
 * read by the upstream's URL-form decoding (Python's parse_qs, PHP's
 * $_GET and $_COOKIE, Rack, Express's qs) with spaces for its '+', and an
 * ordinary echo of its arguments (httpbin's /get, a validation error)
 * handed the sandbox the value so spelled, which no other form matched.
 * The sentinel keeps punctuation (SPEC §4.1), so the same positions are
 * spaces in its form; with its JSON forms (the echo is mostly JSON) and
 * the percent forms encoders write (%20). Nothing when the value holds
 * no '+', or is longer than B64_FORM_MAX_VALUE, or than
 * PLUS_FORM_MAX_VALUE with a line break. 0 or -1 (ENOMEM).
 */
static int form_plus(mask_table_t *t, struct formlist *fl, size_t i)
{
	const struct tvalue *v = &t->value[i];
	char *rp, *sp;

	if (v->len > B64_FORM_MAX_VALUE || memchr(v->real, '+', v->len) == NULL ||
	    (v->len > PLUS_FORM_MAX_VALUE && memchr(v->real, '\n', v->len) != NULL))
		return 0;
	for (size_t k = 0; k < v->len; k++)
		if ((v->real[k] == '+') != (v->sent[k] == '+'))
			return 0; /* not the sentinel's shape: no form */
	rp = mask_secrets_alloc(t->sec, v->len);
	sp = mask_secrets_alloc(t->sec, v->len);
	if (rp == NULL || sp == NULL)
		return -1;
	for (size_t k = 0; k < v->len; k++) {
		rp[k] = v->real[k] == '+' ? ' ' : v->real[k];
		sp[k] = v->sent[k] == '+' ? ' ' : v->sent[k];
	}
	form_add(fl, (uint32_t)i, rp, sp, v->len, MASK_PCT_ENCODERS);
	return form_json(t, fl, i, rp, sp, v->len, true);
}

/* At most this many pieces of one value get forms (split_one()): the
 * ones that pass piece_secret(), wherever they are in the value. */
#define SPLIT_PIECES_MAX 8

/*
 * Whether p[0..n), a piece of a value a form reader split, is secret
 * enough to be a pattern of its own (review40b): as many random bits as
 * the table asks of a whole value (policy_sentinel_bits(), SPEC §4.1),
 * and not words. A connection string's keys and public values
 * ("DefaultEndpointsProtocol=https", "Database=myDataBase",
 * "EndpointSuffix=core.windows.net", a SAS token's "sv=2021-06-08") are
 * every account's: as patterns they refused any request holding them, to
 * any host, and rewrote every response and file that did. A piece of
 * letters only (and ' ', '.', '-', '_') with a vowel in three letters or
 * more is taken for words (random letters hold one in five).
 */
static bool piece_secret(const char *p, size_t n)
{
	size_t letters = 0, vowels = 0;
	bool wordish = true;

	if (policy_sentinel_bits(p, n) < POLICY_MIN_SENTINEL_BITS)
		return false;
	for (size_t k = 0; k < n && wordish; k++) {
		unsigned char c = (unsigned char)p[k];
		unsigned char l = (unsigned char)(c | 0x20);

		if (l >= 'a' && l <= 'z') {
			letters++;
			vowels += l == 'a' || l == 'e' || l == 'i' || l == 'o' || l == 'u';
		} else if (c != ' ' && c != '.' && c != '-' && c != '_') {
			wordish = false;
		}
	}
	return !wordish || vowels * 3 < letters;
}

/*
 * One piece real[0..n) -> sent[0..n) of value i as forms: raw and in the
 * encoders' percent forms, JSON-escaped, and with its '+' as spaces (the
 * same readers decode the query and the form body so). 0 or -1 (ENOMEM).
 */
static int split_one(mask_table_t *t, struct formlist *fl, size_t i, const char *real, const char *sent, size_t n)
{
	char *rp, *sp;

	form_add(fl, (uint32_t)i, real, sent, n, MASK_PCT_ENCODERS);
	if (form_json(t, fl, i, real, sent, n, false) != 0)
		return -1;
	if (memchr(real, '+', n) == NULL)
		return 0;
	for (size_t k = 0; k < n; k++)
		if ((real[k] == '+') != (sent[k] == '+'))
			return 0;
	rp = mask_secrets_alloc(t->sec, n);
	sp = mask_secrets_alloc(t->sec, n);
	if (rp == NULL || sp == NULL)
		return -1;
	for (size_t k = 0; k < n; k++) {
		rp[k] = real[k] == '+' ? ' ' : real[k];
		sp[k] = sent[k] == '+' ? ' ' : sent[k];
	}
	form_add(fl, (uint32_t)i, rp, sp, n, MASK_PCT_ENCODERS);
	return form_json(t, fl, i, rp, sp, n, false);
}

/* A piece of a value: its offset and length. */
struct piece {
	size_t off;
	size_t len;
};

/* At most this many pieces of one value (value_pieces()): a name, a
 * value and the two whole for each of SPLIT_PIECES_MAX. */
#define PIECES_MAX (3 * SPLIT_PIECES_MAX)

/*
 * The pieces of value v as a form reader splits it (round 40 of the
 * attack; review40b): a value holding '&' or ';' injected raw into a
 * query, a form body or a cookie is split there by the upstream's reader
 * (parse_qs, $_GET, a cookie parser), and each piece after the first
 * again at its first '=' into a name and a value; an echo of its
 * arguments handed the sandbox the first piece as the parameter's value
 * and the others as names and values: the value in clear, a piece at a
 * time. Each piece's name and value (split at its first '='; the first
 * piece's so judged too, an Azure connection string's
 * "DefaultEndpointsProtocol=https"), and the piece whole when its name
 * or value is one, are pieces when
 * piece_secret() (at most SPLIT_PIECES_MAX of them, anywhere in the
 * value). The sentinel keeps the same punctuation (SPEC §4.1), so its
 * pieces are at the same places; a value whose sentinel does not has
 * none. Into out[PIECES_MAX]; returns how many. Pure.
 */
static size_t value_pieces(const struct tvalue *v, struct piece *out)
{
	size_t start = 0, made = 0, np = 0;

	if (memchr(v->real, '&', v->len) == NULL && memchr(v->real, ';', v->len) == NULL)
		return 0;
	for (size_t k = 0; k < v->len; k++) {
		bool rc = v->real[k] == '&' || v->real[k] == ';' || v->real[k] == '=';
		bool sc = v->sent[k] == '&' || v->sent[k] == ';' || v->sent[k] == '=';

		if (rc != sc || (rc && v->real[k] != v->sent[k]))
			return 0; /* not the sentinel's shape: no pieces */
	}
	for (size_t k = 0; k <= v->len && made < SPLIT_PIECES_MAX; k++) {
		const char *r = v->real + start;
		size_t n = k - start, eq, at = start;
		bool name_ok, value_ok;

		if (k < v->len && v->real[k] != '&' && v->real[k] != ';')
			continue;
		start = k + 1;
		for (eq = 0; eq < n && r[eq] != '='; eq++)
			;
		name_ok = piece_secret(r, eq);
		value_ok = eq < n && piece_secret(r + eq + 1, n - eq - 1);
		if (name_ok)
			out[np++] = (struct piece){ at, eq };
		if (value_ok)
			out[np++] = (struct piece){ at + eq + 1, n - eq - 1 };
		if ((name_ok || value_ok) && eq < n)
			out[np++] = (struct piece){ at, n };
		made += (size_t)name_ok + (size_t)value_ok;
	}
	return np;
}

/* The pieces of value i (value_pieces()) as forms (split_one()). 0 or
 * -1 (ENOMEM). */
static int form_split(mask_table_t *t, struct formlist *fl, size_t i)
{
	const struct tvalue *v = &t->value[i];
	struct piece pc[PIECES_MAX];
	size_t np = value_pieces(v, pc);

	for (size_t k = 0; k < np; k++)
		if (split_one(t, fl, i, v->real + pc[k].off, v->sent + pc[k].off, pc[k].len) != 0)
			return -1;
	return 0;
}

/* real[0..len) with every gap (mask/automaton.h gap_token(): CR, LF, a
 * backslash run and 'n' or 'r') taken out, into rout when not NULL, and
 * sent[] without the same positions into sout. Returns the new length.
 * Pure. */
static size_t without_breaks(const char *real, const char *sent, size_t len, char *rout, char *sout)
{
	const unsigned char *r = (const unsigned char *)real;
	size_t o = 0;

	for (size_t k = 0; k < len; k++) {
		size_t g = gap_token(r, k, len);

		if (g != 0) {
			k += g - 1;
			continue;
		}
		if (rout != NULL) {
			rout[o] = real[k];
			sout[o] = sent[k];
		}
		o++;
	}
	return o;
}

/*
 * Value i with its line breaks taken out (without_breaks()), as the gap
 * rule reads them. A multi-line value (a PEM key, a value with a trailing
 * newline) then matches whatever lines a client or a server gives it:
 * joined onto one line, wrapped at other columns, with other line ends,
 * in JSON (a gap pair, mask.h). The same positions go from the sentinel,
 * which keeps control bytes and punctuation (SPEC §4.1), so both keep
 * equal lengths. Nothing when the value holds no break or keeps fewer
 * than two bytes. 0 or -1 (ENOMEM).
 */
static int form_joined(mask_table_t *t, struct formlist *fl, size_t i)
{
	const struct tvalue *v = &t->value[i];
	size_t n = without_breaks(v->real, v->sent, v->len, NULL, NULL);
	char *rj, *sj;

	if (n == v->len || n < 2)
		return 0;
	rj = mask_secrets_alloc(t->sec, n);
	sj = mask_secrets_alloc(t->sec, n);
	if (rj == NULL || sj == NULL)
		return -1;
	(void)without_breaks(v->real, v->sent, v->len, rj, sj);
	form_add(fl, (uint32_t)i, rj, sj, n, MASK_PCT_NONE);
	if (!v->small) {
		fl->dropping = v->len > B64_FORM_MAX_VALUE;
		form_pieces(fl, (uint32_t)i, rj, sj, n, MASK_PCT_NONE);
		fl->dropping = false;
	}
	return 0;
}

/* The base64 forms of value i (three alignments, in the middle of the
 * data or ending it, standard and URL-safe alphabets), into the arena.
 * scratch: room for the longest value + 2. 0 or -1 (ENOMEM). */
static int form_b64(mask_table_t *t, struct formlist *fl, size_t i, unsigned char *scratch)
{
	const struct tvalue *v = &t->value[i];
	const char *stdf[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
	size_t stdn[6] = {0, 0, 0, 0, 0, 0};

	bool big = v->len > B64_FORM_MAX_VALUE;

	if (v->len > B64_FORM_MAX_VALUE_BIG || (big && v->small))
		return 0;
	fl->dropping = big;
	for (unsigned k = 0; k < 12; k++) {
		char *rf, *sf;
		size_t rn, sn;

		/* a value over B64_FORM_MAX_VALUE: its forms in the middle
		 * of the data only (ending it adds a character or two), no
		 * percent forms, in pieces (form_pieces()) */
		if (big && k / 3 % 2 == 1)
			continue;
		rf = mask_secrets_alloc(t->sec, v->len / 3 * 4 + 8);
		sf = mask_secrets_alloc(t->sec, v->len / 3 * 4 + 8);
		if (rf == NULL || sf == NULL) {
			fl->dropping = false;
			return -1;
		}
		/* k % 3: alignment; k / 3 % 2: ends the data; k >= 6: URL-safe
		 * alphabet. */
		rn = b64_form(v->real, v->len, k % 3, k >= 6, k / 3 % 2 == 1, scratch, rf);
		sn = b64_form(v->sent, v->len, k % 3, k >= 6, k / 3 % 2 == 1, scratch, sf);
		/* Too short to tell anything, or (URL-safe alphabet with
		 * neither '+' nor '/') the same as a standard one. */
		if (rn < 8 || rn != sn ||
		    (k >= 6 && stdn[k - 6] == rn && memcmp(rf, stdf[k - 6], rn) == 0))
			continue;
		if (k < 6) {
			stdf[k] = rf;
			stdn[k] = rn;
		}
		if (big && rn > MASK_PATTERN_MAX_BYTES) {
			form_pieces(fl, (uint32_t)i, rf, sf, rn, MASK_PCT_NONE);
			continue;
		}
		form_add(fl, (uint32_t)i, rf, sf, rn, big ? MASK_PCT_NONE : MASK_PCT_ALL);
		form_pieces(fl, (uint32_t)i, rf, sf, rn, MASK_PCT_NONE);
	}
	fl->dropping = false;
	return 0;
}

/*
 * A value over B64_FORM_MAX_VALUE with a '/' in it, as PHP's json_encode()
 * writes it (JSON_SLASH: "\/", "\n"), whole or in pieces, no percent
 * forms; one of its big forms (forms_fit()). Round 40: the JSON forms
 * stop at 4 KiB and the joined form's gaps stop at a backslash before
 * anything but n or r, so a PEM bundle of 4 to 16 KiB in a PHP
 * application's JSON was not re-masked. 0 or -1 (ENOMEM).
 */
static int form_php_big(mask_table_t *t, struct formlist *fl, size_t i)
{
	const struct tvalue *v = &t->value[i];
	unsigned st = JSON_SHORT_BF | JSON_SLASH;
	size_t n;
	char *rj, *sj;

	if (v->len <= B64_FORM_MAX_VALUE || v->small || memchr(v->real, '/', v->len) == NULL)
		return 0;
	n = json_len(v->real, v->len, st);
	if (json_len(v->sent, v->len, st) != n || n > FORM_PIECES_MAX * MASK_GAP_MAX_BYTES)
		return 0;
	rj = mask_secrets_alloc(t->sec, n);
	sj = mask_secrets_alloc(t->sec, n);
	if (rj == NULL || sj == NULL)
		return -1;
	json_write(v->real, v->len, st, rj);
	json_write(v->sent, v->len, st, sj);
	fl->dropping = true;
	if (n <= MASK_PATTERN_MAX_BYTES)
		form_add(fl, (uint32_t)i, rj, sj, n, MASK_PCT_NONE);
	form_pieces(fl, (uint32_t)i, rj, sj, n, MASK_PCT_NONE);
	fl->dropping = false;
	return 0;
}

/*
 * The wide forms: a value's UTF-16LE, UTF-16BE, UTF-32LE and UTF-32BE
 * text, its UTF-8 transcoded (for an ASCII value: each byte followed
 * (LE) or preceded (BE) by one NUL or three), whatever else the body
 * holds (round 45: the body's first 4 bytes were the only test,
 * lead_wide() in proxy/cmask.c, so UTF-16 text after a binary start
 * passed with the value in it). No percent forms (a NUL is no URL's
 * byte). perf46m: a value with non-ASCII characters too (the sentinel
 * keeps every byte of 0x80 or more, SPEC §4.1, so its text has the same
 * characters where they are, and its forms the same lengths); one over
 * WIDE_FORM_MAX_VALUE in pieces, up to WIDE_VALUE_MAX; for a value of
 * at most WIDE_FORM_MAX_VALUE, the base64 of its UTF-16LE (PowerShell's
 * -EncodedCommand, .NET's Encoding.Unicode). Not the JSON of its UTF-16
 * (a NUL as \u0000): seven bytes a value byte, it would near double what
 * every stream holds back (a close-delimited body cut by a FIN loses
 * that). A value that is no UTF-8
 * (a byte of 0x80 or more outside a character) has no UTF-16: none, and
 * the proxy keeps its first-bytes sniff (mask_table_wide_forms()).
 */
#define WIDE_FORMS 4
/* The folded set holds them all too (perf46m: with UTF-16's only, a
 * table of wide values only dropped the proxy's first-bytes sniff, and
 * a value with its case changed in UTF-32 passed). */
#define WIDE_FOLDED WIDE_FORMS
/* A value longer than this gets its wide forms in pieces of at most this
 * many bytes, cut between characters (wide_cut()): a form is then at
 * most 4 KiB, and a table's longest pattern (what a stream holds back)
 * grows no more than that; the pieces one after the other cover the
 * whole form, each replaced by the same piece of the sentinel's. */
#define WIDE_FORM_MAX_VALUE 1024
/* Values longer than this get none: 24 bytes of forms a value byte in
 * every set would crowd out the base64 forms of values over 4 KiB
 * (forms_fit()), which matter more; such a table keeps the proxy's
 * first-bytes sniff. */
#define WIDE_VALUE_MAX B64_FORM_MAX_VALUE
/* Pieces of the longest value with wide forms. */
#define WIDE_PIECES_MAX (WIDE_VALUE_MAX / WIDE_FORM_MAX_VALUE)
/* The base64 forms of a value's UTF-16LE: three alignments, two alphabets,
 * in the middle of the data (b64_form()). */
#define WIDE_B64_FORMS 6

/* The code point of the UTF-8 sequence at s[0..n) into *cp: its length
 * (1 to 4), 0 when none starts there (a continuation byte, a cut or
 * overlong sequence, a surrogate, past U+10FFFF). Pure. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	uint32_t v, min;
	size_t l;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		l = 2, v = c & 0x1fu, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		l = 3, v = c & 0x0fu, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		l = 4, v = c & 0x07u, min = 0x10000;
	else
		return 0;
	if (n < l)
		return 0;
	for (size_t k = 1; k < l; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[k] & 0x3fu);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return l;
}

/* Whether s[0..len) is UTF-8 (its wide forms are its UTF-16/32). */
static bool utf8_text(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	for (size_t i = 0, l; i < len; i += l)
		if ((l = utf8_next(u + i, len - i, &cp)) == 0)
			return false;
	return true;
}

/* Writes the wide form `k` (0 UTF-16LE, 1 UTF-16BE, 2 UTF-32LE,
 * 3 UTF-32BE) of s[0..len), UTF-8 (utf8_text()), into out (room for
 * 4 * len). Returns its length. */
static size_t wide_write(const char *s, size_t len, unsigned k, char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char *o = (unsigned char *)out;
	size_t w = k < 2 ? 2 : 4, n = 0;

	for (size_t i = 0, l; i < len; i += l) {
		uint32_t cp = u[i], unit[2];
		size_t nu = 1;

		l = utf8_next(u + i, len - i, &cp);
		if (l == 0)
			l = 1;
		unit[0] = cp;
		if (w == 2 && cp >= 0x10000) {
			unit[0] = 0xd800 + ((cp - 0x10000) >> 10);
			unit[1] = 0xdc00 + (cp & 0x3ff);
			nu = 2;
		}
		for (size_t x = 0; x < nu; x++) {
			for (size_t b = 0; b < w; b++)
				o[n + (k % 2 == 0 ? b : w - 1 - b)] = (unsigned char)(unit[x] >> (8 * b));
			n += w;
		}
	}
	return n;
}

/* The end of piece p of np of a value s[0..len) cut for its wide forms:
 * len (p + 1) / np, moved back to the start of a character. */
static size_t wide_cut(const char *s, size_t len, size_t np, size_t p)
{
	size_t end = len * (p + 1) / np;

	while (end < len && end > 0 && ((unsigned char)s[end] & 0xc0) == 0x80)
		end--;
	return end;
}

/* Pieces value v's wide forms are cut into. */
static size_t wide_pieces(const struct tvalue *v)
{
	return (v->len + WIDE_FORM_MAX_VALUE - 1) / WIDE_FORM_MAX_VALUE;
}

/* The four wide forms of real[0..n) -> sent[0..n) as forms of value i.
 * 0, 1 (the sentinel's forms would differ in length: none added), -1
 * (ENOMEM). */
static int wide_piece(mask_table_t *t, struct formlist *fl, size_t i, const char *real, const char *sent,
		      size_t n)
{
	char *rw[WIDE_FORMS], *sw[WIDE_FORMS];
	size_t rn[WIDE_FORMS];

	for (unsigned k = 0; k < WIDE_FORMS; k++) {
		rw[k] = mask_secrets_alloc(t->sec, 4 * n);
		sw[k] = mask_secrets_alloc(t->sec, 4 * n);
		if (rw[k] == NULL || sw[k] == NULL)
			return -1;
		rn[k] = wide_write(real, n, k, rw[k]);
		if (wide_write(sent, n, k, sw[k]) != rn[k])
			return 1;
	}
	for (unsigned k = 0; k < WIDE_FORMS; k++) {
		form_add(fl, (uint32_t)i, rw[k], sw[k], rn[k], MASK_PCT_NONE);
		/* a line break between two of its characters is two or four
		 * bytes, no gap the set knows */
		fl->pairs[fl->n - 1].gaps = false;
	}
	return 0;
}

/* The wide forms of value i into the arena (v->wide then set); the
 * base64 forms of its UTF-16LE (the block comment above). wscratch:
 * room for 2 * WIDE_FORM_MAX_VALUE + 2. 0 or -1 (ENOMEM). */
static int form_wide(mask_table_t *t, struct formlist *fl, size_t i, unsigned char *wscratch)
{
	struct tvalue *v = &t->value[i];
	size_t np, at = 0, mark = fl->n;
	const char *stdf[3] = {NULL, NULL, NULL};
	size_t stdn[3] = {0, 0, 0};

	v->wide = false;
	if (v->len == 0 || v->len > WIDE_VALUE_MAX || v->nowide || !utf8_text(v->real, v->len) ||
	    !utf8_text(v->sent, v->len))
		return 0;
	np = wide_pieces(v);
	for (size_t p = 0; p < np; p++) {
		size_t end = wide_cut(v->real, v->len, np, p);
		int rc = wide_piece(t, fl, i, v->real + at, v->sent + at, end - at);

		if (rc < 0)
			return -1;
		if (rc > 0) {
			fl->n = mark; /* the arena keeps the copies until the table goes */
			return 0;
		}
		at = end;
	}
	v->wide = true;
	if (np != 1)
		return 0;
	/* The base64 of its UTF-16LE, in the middle of the data (k % 3:
	 * alignment; k >= 3: URL-safe). */
	for (unsigned k = 0; k < WIDE_B64_FORMS; k++) {
		const struct mask_pair *le = &fl->pairs[mark];
		size_t cap = le->from_len / 3 * 4 + 8, rn, sn;
		char *rf = mask_secrets_alloc(t->sec, cap), *sf = mask_secrets_alloc(t->sec, cap);

		if (rf == NULL || sf == NULL)
			return -1;
		rn = b64_form((const char *)le->from, le->from_len, k % 3, k >= 3, false, wscratch, rf);
		sn = b64_form((const char *)le->to, le->to_len, k % 3, k >= 3, false, wscratch, sf);
		if (rn < 8 || rn != sn || (k >= 3 && stdn[k - 3] == rn && memcmp(rf, stdf[k - 3], rn) == 0))
			continue;
		if (k < 3) {
			stdf[k] = rf;
			stdn[k] = rn;
		}
		form_add(fl, (uint32_t)i, rf, sf, rn, MASK_PCT_NONE);
	}
	return 0;
}

/* Most forms of one value before its percent forms: the raw value, its
 * JSON forms, its base64 forms, its two line-end forms with their JSON
 * forms, PHP's JSON form whole or in pieces, its form-decoded form ('+'
 * as a space) with its JSON forms, the pieces between its '&' and
 * ';', and its wide forms. */
#define FORMS_PER_VALUE                                                                              \
	(1 + JSON_STYLES + 12 + 6 * FORM_PIECES_MAX + 2 * (1 + JSON_STYLES) + 1 + FORM_PIECES_MAX + 1 + \
	 FORM_PIECES_MAX + 1 + JSON_STYLES + 3 * SPLIT_PIECES_MAX * 2 * (1 + JSON_STYLES) +                 \
	 WIDE_FORMS * WIDE_PIECES_MAX + WIDE_B64_FORMS)

/* The pairs of the remask set (build_inbound()) into t->form, with the
 * value of each in t->form_value: the raw values first (pair i = value
 * i), then the JSON forms, then the line-end forms, then the base64
 * forms. The JSON and line-end forms only for values up to
 * B64_FORM_MAX_VALUE (a whole file as a secret would make the set too big
 * for nothing). 0, or -1 (ENOMEM, t->set_res set). */
static int build_forms(mask_table_t *t)
{
	struct formlist fl = {NULL, NULL, 0, NULL, false};
	unsigned char *scratch = NULL, *wscratch = NULL;
	size_t i, maxlen = 0;

	for (i = 0; i < t->nvalues; i++)
		if (t->value[i].len <= B64_FORM_MAX_VALUE_BIG && t->value[i].len > maxlen)
			maxlen = t->value[i].len;
	fl.pairs = calloc(t->nvalues * FORMS_PER_VALUE + 1, sizeof(*fl.pairs));
	fl.fv = calloc(t->nvalues * FORMS_PER_VALUE + 1, sizeof(*fl.fv));
	fl.drop = calloc(t->nvalues * FORMS_PER_VALUE + 1, 1);
	if (fl.pairs == NULL || fl.fv == NULL || fl.drop == NULL ||
	    (maxlen > 0 && (scratch = mask_secrets_alloc(t->sec, maxlen + 2)) == NULL))
		goto nomem;
	for (i = 0; i < t->nvalues; i++)
		form_add(&fl, (uint32_t)i, t->value[i].real, t->value[i].sent, t->value[i].len, MASK_PCT_ALL);
	for (i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];

		if (v->len <= B64_FORM_MAX_VALUE &&
		    form_json(t, &fl, i, v->real, v->sent, v->len, false) != 0)
			goto nomem;
	}
	for (i = 0; i < t->nvalues; i++)
		if (t->value[i].len <= B64_FORM_MAX_VALUE && form_lines(t, &fl, i) != 0)
			goto nomem;
	for (i = 0; i < t->nvalues; i++)
		if (t->value[i].len <= B64_FORM_MAX_VALUE && form_plus(t, &fl, i) != 0)
			goto nomem;
	for (i = 0; i < t->nvalues; i++)
		if (t->value[i].len <= B64_FORM_MAX_VALUE && form_split(t, &fl, i) != 0)
			goto nomem;
	/* The joined form of every value, a whole file's up to
	 * MASK_PATTERN_MAX_BYTES too (fix38m: a PEM bundle or kubeconfig of
	 * 4 to 16 KiB came back joined onto one line, in JSON, or wrapped at
	 * other columns, and was not re-masked); one pattern a value, a gap
	 * pair up to MASK_GAP_MAX_BYTES. */
	for (i = 0; i < t->nvalues; i++)
		if (form_joined(t, &fl, i) != 0)
			goto nomem;
	for (i = 0; i < t->nvalues; i++)
		if (form_php_big(t, &fl, i) != 0)
			goto nomem;
	for (i = 0; i < t->nvalues; i++)
		if (form_b64(t, &fl, i, scratch) != 0)
			goto nomem;
	for (i = 0; i < t->nvalues && wscratch == NULL; i++)
		if (t->value[i].len <= WIDE_FORM_MAX_VALUE &&
		    (wscratch = mask_secrets_alloc(t->sec, 2 * WIDE_FORM_MAX_VALUE + 2)) == NULL)
			goto nomem;
	for (i = 0; i < t->nvalues; i++)
		if (form_wide(t, &fl, i, wscratch) != 0)
			goto nomem;
	/* The pairs point into the arena; the list is kept for the
	 * outbound sets built later. */
	t->form = fl.pairs;
	t->form_value = fl.fv;
	t->nform = fl.n;
	free(t->form_drop);
	t->form_drop = fl.drop;
	return 0;
nomem:
	free(fl.pairs);
	free(fl.fv);
	free(fl.drop);
	t->set_res = MASK_SET_ERR_NOMEM;
	return -1;
}

/* Whether credential c may be injected towards the normalised host. */
static bool cred_eligible(const mask_table_t *t, const struct tcred *c, const char *host,
			  uint16_t port, bool tls_verified, unsigned where)
{
	if ((c->inject_in & where) == 0 || (!tls_verified && !t->plaintext_ok))
		return false;
	for (size_t h = 0; h < c->nhosts; h++)
		if (policy_hostpat_match(&c->hosts[h], host, port))
			return true;
	return false;
}

/* Fills out from a cache entry. */
static void outbound_fill(const mask_table_t *t, const struct tcache *e, struct mask_outbound *out)
{
	out->set = e->set;
	out->npairs = t->nvalues;
	out->inject = e->inject;
	out->cred = e->cred;
	out->any = e->any;
	out->nforms = set_forms(t);
	out->form_value = t->form_value;
	out->nstale = t->nstale;
	out->stale_value = t->stale_value;
}

/* Builds and appends the cache entry for t->tmpkey. NULL with errno. */
static struct tcache *cache_add(mask_table_t *t, bool percent)
{
	struct tcache *e;

	if (t->ncache == t->cachecap) {
		size_t cap = t->cachecap ? t->cachecap * 2 : 8;
		struct tcache *n = realloc(t->cache, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		t->cache = n;
		t->cachecap = cap;
	}
	e = &t->cache[t->ncache];
	memset(e, 0, sizeof(*e));
	e->percent = percent;
	e->key = malloc(t->nwords * sizeof(uint64_t));
	e->inject = calloc(t->nvalues + 1, 1);
	e->cred = calloc(t->nvalues + 1, sizeof(uint32_t));
	if (e->key == NULL || e->inject == NULL || e->cred == NULL)
		goto fail;
	memcpy(e->key, t->tmpkey, t->nwords * sizeof(uint64_t));
	for (size_t v = 0; v < t->nvalues; v++)
		e->cred[v] = t->value[v].cred;
	/* An eligible credential injects every value it holds; the first
	 * eligible holder names the pair. */
	for (size_t c = t->ncreds; c-- > 0;) {
		if ((t->tmpkey[c / 64] >> (c % 64) & 1) == 0)
			continue;
		for (size_t k = 0; k < t->cred[c].nvals; k++) {
			uint32_t v = t->cred[c].vals[k];
			e->inject[v] = 1;
			e->cred[v] = (uint32_t)c;
			e->any = true;
		}
	}
	e->set = build_set(t, e->inject, false, percent ? MASK_SET_PERCENT : 0);
	if (e->set == NULL)
		goto fail;
	t->ncache++;
	return e;
fail:
	free(e->key);
	free(e->inject);
	free(e->cred);
	return NULL;
}

/* The memo slot of where (one INJECT_* bit), or -1. */
static int memo_where(unsigned where)
{
	return where == INJECT_HEADER ? 0 : where == INJECT_QUERY ? 1 : where == INJECT_BODY ? 2 : -1;
}

int mask_table_outbound(mask_table_t *t, const char *host, uint16_t port, bool tls_verified,
			unsigned where, struct mask_outbound *out)
{
	char norm[POLICY_HOST_MAX + 1];
	size_t hlen = strlen(host);
	int w = memo_where(where);
	bool ok, percent = where == INJECT_QUERY, memo = w >= 0 && hlen > 0 && hlen <= POLICY_HOST_MAX;
	struct tcache *e;

	/* The same host (byte for byte: it normalises the same) and port
	 * as the last call: its entry for this (verified, where), once
	 * found. A new host forgets the old one's. */
	if (memo) {
		if (t->memo_hlen != hlen || t->memo_port != port || memcmp(t->memo_host, host, hlen) != 0) {
			memcpy(t->memo_host, host, hlen);
			t->memo_hlen = hlen;
			t->memo_port = port;
			for (size_t v = 0; v < 2; v++)
				for (size_t k = 0; k < 3; k++)
					t->memo_entry[v][k] = -1;
		} else if (t->memo_entry[tls_verified][w] >= 0) {
			outbound_fill(t, &t->cache[t->memo_entry[tls_verified][w]], out);
			return 0;
		}
	}
	ok = policy_host_normalize(host, hlen, norm, sizeof(norm)) == NULL;
	memset(t->tmpkey, 0, t->nwords * sizeof(uint64_t));
	for (size_t c = 0; ok && c < t->ncreds; c++)
		if (cred_eligible(t, &t->cred[c], norm, port, tls_verified, where))
			t->tmpkey[c / 64] |= (uint64_t)1 << (c % 64);
	for (size_t i = 0; i < t->ncache; i++) {
		e = &t->cache[i];
		if (e->percent == percent &&
		    memcmp(e->key, t->tmpkey, t->nwords * sizeof(uint64_t)) == 0) {
			if (memo)
				t->memo_entry[tls_verified][w] = (long)i;
			outbound_fill(t, e, out);
			return 0;
		}
	}
	e = cache_add(t, percent);
	if (e == NULL)
		return -1;
	if (memo)
		t->memo_entry[tls_verified][w] = (long)(t->ncache - 1);
	outbound_fill(t, e, out);
	return 0;
}

/* Longest value looked for with its case changed: every value (the
 * table refuses one over MASK_PATTERN_MAX_BYTES, table.c), so none is
 * left out of the fold (round 40: values over 1024 bytes were, silently;
 * a response body, unlike a name, may hold one). The cost is the fold's
 * hold-back on a body (docs/masking.md). */
#define FOLD_VALUE_MAX MASK_PATTERN_MAX_BYTES
/* The most bytes the folded wide forms of all values take (build_folded()). */
#define WIDE_FOLD_MAX_BYTES (MASK_SET_MAX_BYTES / 4)
/* Bytes of folded wide forms a value byte: 2 + 2 (UTF-16), 4 + 4 (UTF-32). */
#define WIDE_FOLD_WEIGHT 12

/* Adds folded[0..len) (in low at off) as pair n of t->folded for value
 * v unless a pair already holds it; returns the new count of pairs. */
static size_t folded_add(mask_table_t *t, struct mask_pair *pairs, size_t n, unsigned char *low,
			 size_t *off, size_t len, size_t v)
{
	size_t rm;

	for (size_t k = 0; k < n; k++)
		if (pairs[k].from_len == len && memcmp(pairs[k].from, low + *off, len) == 0)
			return n;
	pairs[n].from = pairs[n].to = low + *off;
	pairs[n].from_len = pairs[n].to_len = len;
	t->folded_value[n] = (uint32_t)v;
	*off += len;
	/* A wide form (it holds a NUL) is found in UTF-16 or UTF-32 text,
	 * where a letter is its code unit, never a UTF-8 sequence the fold
	 * takes to it: its own length (perf46m: mask_fold_rawmax()'s 3 or 4
	 * bytes a k or an i made the UTF-32 forms' hold-back swallow a
	 * close-delimited body of 300 bytes whole at a FIN). */
	rm = memchr(pairs[n].from, 0, len) != NULL ? len : mask_fold_rawmax(pairs[n].from, len);
	if (rm > t->folded_rawmax)
		t->folded_rawmax = rm;
	return n + 1;
}

/* s[0..len) with every %XX decoded and, plus, every '+' as a space (as
 * a server reads a cookie or a form field) into out; its length. */
static size_t pct_decoded(const char *s, size_t len, bool plus, unsigned char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < len && (hi = hex_digit((unsigned char)s[i + 1])) >= 0 &&
		    (lo = hex_digit((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (unsigned char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = plus && s[i] == '+' ? ' ' : (unsigned char)s[i];
		}
	}
	return o;
}

/* The fewest bytes of a value an edge form keeps, and the longest value
 * that gets edge and decoded forms (value_edges(): a PEM key's lines are
 * no cookie's; the folded set keeps within the sets' bound). */
#define EDGE_MIN_BYTES 8
#define EDGE_VALUE_MAX 1024
/* The most hex digits a bounded escape begun before a value takes of it
 * (JSON's "\u" four), the most starts (the whole value, one byte, two to
 * four hex digits, a run of decimal and one of hex digits) and ends. */
#define EDGE_TAKE_MAX 4
#define EDGE_FROM_MAX (EDGE_CUT_MAX + 3)
#define EDGE_TO_MAX 3
/* The most edge slices of a value and the forms of each (raw, %XX
 * decoded, also '+' as a space). */
#define EDGE_SLICES_MAX (EDGE_FROM_MAX * EDGE_TO_MAX)
#define EDGE_FORMS_MAX (3 * EDGE_SLICES_MAX)
/* The most bytes an escape at either end of a value may take of it,
 * whatever they are (round 49, attack49p): "\U" and eight hex digits
 * (Python, C++, TOML, YAML), HTML's legacy named references without
 * a ';' ("&not", "&middot"), an escape among a value's last bytes; and
 * the most bytes of a value's core (value_core()) in the folded set. */
#define EDGE_CUT_MAX 8
#define EDGE_CORE_MAX 64

/* Adds k to from[0..*nf) unless it is there or leaves the value fewer
 * than EDGE_MIN_BYTES bytes. */
static void edge_from(size_t from[EDGE_FROM_MAX], size_t *nf, size_t k, size_t len)
{
	for (size_t i = 0; i < *nf; i++)
		if (from[i] == k)
			return;
	if (k > 0 && len >= k + EDGE_MIN_BYTES && *nf < EDGE_FROM_MAX)
		from[(*nf)++] = k;
}

/*
 * Where the bytes a decoder reads with the client's own may leave a
 * value (round 47, attack47p): injected raw into a cookie or a form
 * field, "%" or "%H" written just before its sentinel takes its first
 * two or one byte into an escape when they are hex digits, and bytes
 * just after it complete a '%' or '%H' it ends with; the server decodes
 * that escape into one byte and an echo hands back the rest as it is.
 * Round 48 (attack48p), the same family with the other decoders' escapes:
 * a backslash takes the first byte whatever it is ("\n", "\t", "\b",
 * "\f", "\r" in JSON, TOML, YAML, Python; the rest of "npm_...",
 * "rk_live_...", "tskey-..." came back), "\u", "\u0", "\x", an octal
 * "\ooo" up to four hex digits, an HTML "&#" or "&#x" reference (and C's
 * "\x") every leading decimal or hex digit; a value ending in a backslash
 * (or one up to four bytes from its end), in '%'/'%H' or in quoted-
 * printable's '='/'=H' (base64 padding: "=" + "4f" decodes) loses its end.
 * from[0..nf) and to[0..nt) (from[0] = 0, to[0] = len); returns nf, 0
 * for a value over EDGE_VALUE_MAX bytes (none).
 */
static size_t value_edges(const char *v, size_t len, size_t from[EDGE_FROM_MAX], size_t to[EDGE_TO_MAX],
			  size_t *nt)
{
	size_t nf = 1, dec = 0, hex = 0;

	from[0] = 0;
	to[0] = len;
	*nt = 1;
	if (len > EDGE_VALUE_MAX)
		return 0;
	if (len < EDGE_MIN_BYTES + 2)
		return nf;
	edge_from(from, &nf, 1, len);
	while (hex < len && hex_digit((unsigned char)v[hex]) >= 0)
		hex++;
	while (dec < len && v[dec] >= '0' && v[dec] <= '9')
		dec++;
	for (size_t k = 2; k <= EDGE_TAKE_MAX && k <= hex; k++)
		edge_from(from, &nf, k, len);
	/* "\U" + eight: five to eight hex digits where the core leaves them
	 * out (a value under 24 bytes: its core is cut shorter) */
	for (size_t k = EDGE_TAKE_MAX + 1; k <= EDGE_CUT_MAX && k <= hex; k++)
		if (k > (len - EDGE_MIN_BYTES) / 2)
			edge_from(from, &nf, k, len);
	edge_from(from, &nf, dec, len);
	edge_from(from, &nf, hex, len);
	if (v[len - 1] == '%' || v[len - 1] == '=')
		to[(*nt)++] = len - 1;
	else if ((v[len - 2] == '%' || v[len - 2] == '=') && hex_digit((unsigned char)v[len - 1]) >= 0)
		to[(*nt)++] = len - 2;
	for (size_t k = 1; k <= EDGE_TAKE_MAX + 1; k++)
		if (v[len - k] == '\\' && len - k >= EDGE_MIN_BYTES) {
			if (to[*nt - 1] != len - k)
				to[(*nt)++] = len - k;
			break;
		}
	return nf;
}

/* Whether c is one no escaper writes another way (RFC 3986's
 * unreserved: JSON, HTML and URL encoders all leave it as it is). */
static bool core_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
	       c == '_' || c == '~';
}

/* Whether s[0..n) holds a letter and a digit. */
static bool mixed_run(const char *s, size_t n)
{
	bool alpha = false, digit = false;

	for (size_t i = 0; i < n; i++) {
		alpha |= (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z');
		digit |= s[i] >= '0' && s[i] <= '9';
	}
	return alpha && digit;
}

/*
 * A value's core (round 49, attack49p): v[*off..return) within the value
 * less up to EDGE_CUT_MAX bytes at each end, whatever they are (at most
 * half of what is over EDGE_MIN_BYTES). value_edges() enumerates the
 * escapes it knows, for values of up to 1 KiB; an escape it does not
 * ("\U000" + five hex digits, "&not"), or any at the ends of a longer
 * value, leaves an echo that still holds the core. Its longest run of
 * bytes no escaper rewrites (core_byte()), when of EDGE_MIN_BYTES or
 * more and holding letters and digits (mixed_run()): an echo JSON-,
 * HTML- or URL-escaped again (PHP's "\/") still holds it; else that
 * part of the value whole (its decoded forms are
 * in the set too), its ends moved off a %XX escape. At most
 * EDGE_CORE_MAX bytes, from the middle of a longer stretch (a PEM key's
 * or a JSON key file's first bytes are the same in every key). 0 (no
 * core) for a value under EDGE_MIN_BYTES + 2 bytes.
 */
static size_t value_core(const char *v, size_t len, size_t *off)
{
	size_t cut, end, best = 0, bestat = 0;

	*off = 0;
	if (len < EDGE_MIN_BYTES + 2)
		return 0;
	cut = (len - EDGE_MIN_BYTES) / 2;
	if (cut > EDGE_CUT_MAX)
		cut = EDGE_CUT_MAX;
	end = len - cut;
	for (size_t i = cut, run = 0; i < end; i++) {
		run = core_byte((unsigned char)v[i]) ? run + 1 : 0;
		if (run > best) {
			best = run;
			bestat = i + 1 - run;
		}
	}
	/* a run with letters and digits both: a host name or a word inside
	 * a structured value (a DSN's "db.internal.example") is no secret a
	 * response may not name */
	if (best >= EDGE_MIN_BYTES && mixed_run(v + bestat, best)) {
		cut = bestat;
		end = bestat + best;
	}
	/* a long stretch's middle */
	if (end - cut > EDGE_CORE_MAX) {
		cut += (end - cut - EDGE_CORE_MAX) / 2;
		end = cut + EDGE_CORE_MAX;
	}
	/* not inside a "%XX": the core begins after it, ends before it */
	if (v[cut - 1] == '%')
		cut += 2;
	else if (cut >= 2 && v[cut - 2] == '%')
		cut += 1;
	if (v[end - 1] == '%')
		end -= 1;
	else if (v[end - 2] == '%')
		end -= 2;
	if (end < cut + EDGE_MIN_BYTES)
		return 0;
	*off = cut;
	return end;
}

/*
 * t->folded: every raw value folded (mask_fold(): ASCII lower-cased,
 * the four wide forms that fold to ASCII letters as those), once (two
 * values differing only in case are one pattern), and every piece of a
 * value a form reader splits (value_pieces(): round 41, review40a; the
 * remask swaps a piece echoed as it was, and the rest of the value with
 * its case changed no longer matches it whole), and a value with its
 * %XX escapes decoded ('+' as it is and as a space), whole and less the
 * bytes at its ends a client's escape may take (value_edges()), those
 * raw too (round 47, attack47p: injected raw into a Cookie or a form
 * body, a server decodes it and an echo hands it back, a form the
 * remask cannot map to its sentinel's: found, the response is cut),
 * and its core (value_core(), round 49: any escape of up to 8 bytes at
 * either end, of a value of any length), raw and decoded.
 * The folded copies live
 * in a buffer wiped and freed here; the set keeps its own in its arena.
 * t->folded_rawmax: the most input bytes a pattern's match may take
 * (mask_fold_rawmax()). 0 or -1.
 */
static int build_folded(mask_table_t *t)
{
	size_t npat = t->nvalues * (1 + PIECES_MAX + EDGE_FORMS_MAX + 3 + WIDE_FOLDED * WIDE_PIECES_MAX) + 1;
	struct mask_pair *pairs = calloc(npat, sizeof(*pairs));
	unsigned char *low = NULL;
	size_t total = 0, off = 0, n = 0, wsum = 0;
	enum mask_set_result res = MASK_SET_ERR_NOMEM;

	t->folded_value = calloc(npat, sizeof(*t->folded_value));
	t->folded_rawmax = 0;
	/* A value's wide forms folded, while they weigh at most a quarter of
	 * the sets' bound (WIDE_FOLD_MAX_BYTES); a value past it is not wide
	 * (its UTF-16 with the case changed would not be found). */
	for (size_t v = 0; v < t->nvalues; v++) {
		struct tvalue *tv = &t->value[v];

		if (tv->wide && wsum + WIDE_FOLD_WEIGHT * tv->len > WIDE_FOLD_MAX_BYTES)
			tv->wide = false;
		if (tv->wide)
			wsum += WIDE_FOLD_WEIGHT * tv->len;
	}
	/* A value, and its pieces: at most twice its length; its edge and
	 * decoded forms, three a slice; its wide forms. */
	for (size_t v = 0; v < t->nvalues; v++) {
		size_t from[EDGE_FROM_MAX], to[EDGE_TO_MAX], nt;
		size_t nf = value_edges(t->value[v].real, t->value[v].len, from, to, &nt);

		total += t->value[v].len <= FOLD_VALUE_MAX ? (3 + 3 * nf * nt) * t->value[v].len + 3 * EDGE_CORE_MAX : 0;
	}
	total += wsum;
	low = malloc(total + 1);
	if (pairs == NULL || t->folded_value == NULL || low == NULL)
		goto fail;
	for (size_t v = 0; v < t->nvalues; v++) {
		const struct tvalue *tv = &t->value[v];
		struct piece pc[PIECES_MAX];
		size_t np, len = tv->len, from[EDGE_FROM_MAX], to[EDGE_TO_MAX], nt, nf, coff, cend;

		if (len == 0 || len > FOLD_VALUE_MAX)
			continue;
		n = folded_add(t, pairs, n, low, &off, mask_fold(low + off, tv->real, len), v);
		np = value_pieces(tv, pc);
		for (size_t k = 0; k < np; k++)
			n = folded_add(t, pairs, n, low, &off,
				       mask_fold(low + off, tv->real + pc[k].off, pc[k].len), v);
		nf = value_edges(tv->real, len, from, to, &nt);
		for (size_t i = 0; i < nf; i++)
			for (size_t j = 0; j < nt; j++) {
				const char *e = tv->real + from[i];
				size_t el = to[j] - from[i];

				if (i + j > 0 && to[j] < from[i] + EDGE_MIN_BYTES)
					continue;
				if (i + j > 0)
					n = folded_add(t, pairs, n, low, &off, mask_fold(low + off, e, el), v);
				for (int plus = 0; plus < 2; plus++)
					n = folded_add(t, pairs, n, low, &off,
						       mask_fold(low + off, low + off, pct_decoded(e, el, plus, low + off)), v);
			}
		/* Its core, raw and decoded ('+' as it is and as a space). */
		if ((cend = value_core(tv->real, len, &coff)) > 0) {
			n = folded_add(t, pairs, n, low, &off, mask_fold(low + off, tv->real + coff, cend - coff), v);
			for (int plus = 0; plus < 2; plus++)
				n = folded_add(t, pairs, n, low, &off,
					       mask_fold(low + off, low + off,
							 pct_decoded(tv->real + coff, cend - coff, plus, low + off)),
					       v);
		}
		/* Its wide forms, in the pieces form_wide() cuts (NULs stay,
		 * A-Z are lower-cased). UTF-32's too (perf46m): the fold then
		 * holds back up to 4 bytes a value byte (a close-delimited
		 * body cut by a FIN loses that much more), the price of
		 * dropping the first-bytes sniff. */
		for (size_t p = 0, at = 0, wp = wide_pieces(tv); tv->wide && p < wp; p++) {
			size_t end = wide_cut(tv->real, len, wp, p);

			for (unsigned k = 0; k < WIDE_FOLDED; k++) {
				size_t wl = wide_write(tv->real + at, end - at, k, (char *)low + off);

				n = folded_add(t, pairs, n, low, &off, mask_fold(low + off, low + off, wl), v);
			}
			at = end;
		}
	}
	t->wide_all = true;
	for (size_t v = 0; v < t->nvalues; v++)
		if (t->value[v].len > 0 && !t->value[v].wide)
			t->wide_all = false;
	t->folded_min = SIZE_MAX;
	for (size_t k = 0; k < n; k++)
		if (pairs[k].from_len < t->folded_min)
			t->folded_min = pairs[k].from_len;
	t->folded = mask_set_new(pairs, n, 0, &res);
	explicit_bzero(low, total + 1);
	free(low);
	free(pairs);
	if (t->folded == NULL) {
		t->set_res = res;
		return -1;
	}
	t->set_hygiene &= mask_set_hygiene(t->folded);
	t->folded_counts = calloc(n + 1, sizeof(uint64_t));
	if (t->folded_counts == NULL) {
		t->set_res = MASK_SET_ERR_NOMEM;
		return -1;
	}
	return 0;
fail:
	if (low != NULL)
		explicit_bzero(low, total + 1);
	free(low);
	free(pairs);
	t->set_res = MASK_SET_ERR_NOMEM;
	return -1;
}

/* Whether every value over 4 KiB already goes without its big forms. */
static bool big_all_small(const mask_table_t *t)
{
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].len > B64_FORM_MAX_VALUE && !t->value[i].small)
			return false;
	return true;
}

/* Whether s[0..len) holds a '#' (a URL's fragment begins there) or a %XX
 * escape (a server decodes it), or ends in '%' or '%' and a hex digit: raw in a request target, a server's URL
 * parser hands its application a part of the value, or another value
 * (round 45). */
static bool url_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '#' || (s[i] == '%' && i + 2 < len && hex_digit((unsigned char)s[i + 1]) >= 0 &&
				    hex_digit((unsigned char)s[i + 2]) >= 0))
			return true;
	/* review46p: a '%' ending it, or '%' and a hex digit: the target's
	 * next bytes complete the escape */
	if ((len >= 1 && s[len - 1] == '%') || (len >= 2 && s[len - 2] == '%' && hex_digit((unsigned char)s[len - 1]) >= 0))
		return true;
	return false;
}

bool mask_table_value_url_raw(const mask_table_t *t, size_t value)
{
	return value < t->nvalues && t->value[value].url_raw;
}

/* Whether some value has its wide forms (form_wide()). */
static bool any_wide(const mask_table_t *t)
{
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].wide)
			return true;
	return false;
}

/* Frees the remask and detect sets and the forms list they were built
 * from (build_forms()), leaving none. */
static void sets_free(mask_table_t *t)
{
	mask_set_free(t->inbound);
	mask_set_free(t->detect);
	t->inbound = NULL;
	t->detect = NULL;
	forms_free(t);
}

/* The remask and detect sets made again, after a value went without
 * some of its forms. */
static void sets_again(mask_table_t *t)
{
	sets_free(t);
	t->set_res = MASK_SET_OK;
	t->inbound = build_inbound(t);
	if (t->inbound != NULL)
		t->detect = build_set(t, NULL, false, MASK_SET_PERCENT);
}

/* Warming the cache at start: a proxy whose credentials name their hosts
 * never builds a set per request. */
int table_build_sets(mask_table_t *t)
{
	static const unsigned wheres[] = { INJECT_HEADER, INJECT_QUERY, INJECT_BODY };
	struct mask_outbound ob;

	t->space_value = false;
	for (size_t i = 0; i < t->nvalues; i++) {
		if (memchr(t->value[i].real, ' ', t->value[i].len) != NULL)
			t->space_value = true;
		t->value[i].url_raw = url_raw(t->value[i].real, t->value[i].len);
	}
	t->inbound = build_inbound(t);
	if (t->inbound != NULL)
		t->detect = build_set(t, NULL, false, MASK_SET_PERCENT);
	/* The forms of values over 4 KiB (their pieces and base64: fix39m)
	 * past the sets' bound: left out rather than refuse a table that
	 * built without them (six values of 16 KiB); the outbound sets hold
	 * what the detect set holds. docs/masking.md "What the forms cost". */
	if ((t->inbound == NULL || t->detect == NULL) && t->set_res == MASK_SET_ERR_TOO_BIG && !big_all_small(t)) {
		for (size_t i = 0; i < t->nvalues; i++)
			t->value[i].small = t->value[i].len > B64_FORM_MAX_VALUE;
		t->forms_small = true;
		sets_again(t);
	}
	/* Then the wide forms (round 45): without them the proxy cuts a
	 * body of an inject host that begins as UTF-16 text (lead_wide()
	 * in proxy/cmask.c, mask_table_wide_forms()). */
	/* Past the sets' pair bound with them too (review45m: four pairs a
	 * value; the remask set refused, ERR_ARGS, or the outbound sets
	 * left with the raw values only, set_forms(), so a real value's
	 * base64 or JSON going to another host passed): they go first. */
	if (any_wide(t) && (((t->inbound == NULL || t->detect == NULL) && t->set_res == MASK_SET_ERR_TOO_BIG) ||
			    t->nvalues + t->nform + t->nstale > MASK_SET_MAX_PAIRS)) {
		for (size_t i = 0; i < t->nvalues; i++)
			t->value[i].nowide = true;
		sets_again(t);
	}
	if (t->inbound == NULL || t->detect == NULL)
		return -1;
	t->detect_counts = calloc(mask_set_npairs(t->detect) + 1, sizeof(uint64_t));
	if (t->detect_counts == NULL) {
		t->set_res = MASK_SET_ERR_NOMEM;
		return -1;
	}
	if (build_folded(t) != 0)
		return -1;
	/* Every form is at least this long (percent forms are longer still,
	 * and decoding only shortens the text searched). */
	t->min_len = SIZE_MAX;
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].len < t->min_len)
			t->min_len = t->value[i].len;
	for (size_t k = 0; k < set_forms(t); k++)
		if (t->form[k].from_len < t->min_len)
			t->min_len = t->form[k].from_len;
	for (size_t c = 0; c < t->ncreds; c++) {
		for (size_t h = 0; h < t->cred[c].nhosts; h++) {
			const struct policy_hostpat *hp = &t->cred[c].hosts[h];
			if (hp->kind != HOSTPAT_EXACT && hp->kind != HOSTPAT_IPV4 &&
			    hp->kind != HOSTPAT_IPV6)
				continue;
			for (size_t w = 0; w < ARRAY_LEN(wheres); w++) {
				uint16_t port = hp->port != 0 ? hp->port : 443;
				if (mask_table_outbound(t, hp->host, port, true, wheres[w], &ob) != 0)
					return -1;
			}
		}
	}
	return 0;
}

void table_free_sets(mask_table_t *t)
{
	for (size_t i = 0; i < t->ncache; i++) {
		mask_set_free(t->cache[i].set);
		free(t->cache[i].key);
		free(t->cache[i].inject);
		free(t->cache[i].cred);
	}
	free(t->cache);
	t->cache = NULL;
	t->ncache = t->cachecap = 0;
	t->memo_hlen = 0; /* its indices named entries gone */
	sets_free(t);
	mask_set_free(t->folded);
	t->folded = NULL;
	free(t->folded_value);
	free(t->folded_counts);
	t->folded_value = NULL;
	t->folded_counts = NULL;
	free(t->form_drop);
	t->form_drop = NULL;
	free(t->detect_counts);
	t->detect_counts = NULL;
	if (t->scratch != NULL)
		explicit_bzero(t->scratch, t->scratch_cap);
	free(t->scratch);
	t->scratch = NULL;
}

/* ------------------------------------------------------------------ */
/* Detection                                                            */
/* ------------------------------------------------------------------ */

const mask_set_t *mask_table_inbound_set(const mask_table_t *t)
{
	return t->inbound;
}

const mask_set_t *mask_table_folded_set(const mask_table_t *t)
{
	return t->folded;
}

size_t mask_table_folded_holdmax(const mask_table_t *t)
{
	return t->folded != NULL && t->folded_rawmax > 0 ? t->folded_rawmax - 1 : 0;
}

bool mask_table_wide_forms(const mask_table_t *t)
{
	return t->folded != NULL && t->wide_all;
}

long mask_table_folded_cred(const mask_table_t *t, size_t pair)
{
	if (t->folded == NULL || pair >= mask_set_npairs(t->folded))
		return -1;
	return (long)t->value[t->folded_value[pair]].cred;
}

/* Makes t->scratch hold at least len bytes. 0 or -1 (ENOMEM). */
static int scratch_reserve(mask_table_t *t, size_t len)
{
	if (len > t->scratch_cap) {
		unsigned char *n = malloc(len);
		if (n == NULL)
			return -1;
		if (t->scratch != NULL)
			explicit_bzero(t->scratch, t->scratch_cap);
		free(t->scratch);
		t->scratch = n;
		t->scratch_cap = len;
	}
	return 0;
}

/* How scratch_fill() copies. */
enum fill { FILL_ASIS, FILL_PCT, FILL_FORM };

/* Copies buf into t->scratch: as it is, with every %XX decoded
 * (FILL_PCT), or also every '+' as a space (FILL_FORM, as a server reads
 * a form-encoded query); returns the copy's length, or -1 (ENOMEM). */
static long scratch_fill(mask_table_t *t, const unsigned char *buf, size_t len, enum fill how)
{
	size_t o = 0;

	if (scratch_reserve(t, len) != 0)
		return -1;
	if (how == FILL_ASIS) {
		memcpy(t->scratch, buf, len);
		return (long)len;
	}
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (buf[i] == '%' && i + 2 < len && (hi = hex_digit(buf[i + 1])) >= 0 &&
		    (lo = hex_digit(buf[i + 2])) >= 0) {
			t->scratch[o++] = (unsigned char)(hi << 4 | lo);
			i += 2;
			continue;
		}
		t->scratch[o++] = how == FILL_FORM && buf[i] == '+' ? ' ' : buf[i];
	}
	return (long)o;
}

/* Whether filling buf as how would copy it unchanged (no '%' to decode,
 * no '+' a space could be): that pass finds nothing the first did not. */
static bool fill_useless(const mask_table_t *t, const void *buf, size_t len, enum fill how)
{
	return (how == FILL_PCT && memchr(buf, '%', len) == NULL) ||
	       (how == FILL_FORM && (!t->space_value || memchr(buf, '+', len) == NULL));
}

/* Runs the detect set over the scratch copy (len bytes), counts into
 * t->detect_counts (zeroed first), wipes the copy. 0 or -1. */
static int scratch_detect(mask_table_t *t, size_t len)
{
	size_t total = 0;
	int rc;

	memset(t->detect_counts, 0, mask_set_npairs(t->detect) * sizeof(uint64_t));
	rc = mask_replace_inplace(t->detect, t->scratch, len, t->detect_counts, &total);
	explicit_bzero(t->scratch, len);
	return rc;
}

/*
 * Whether the scratch copy (len bytes) holds a real-value form: one pass
 * of the remask set, which holds every form of the detect set (the same
 * pairs, t->form, built the same way: percent forms, gaps) and no
 * sentinel. Without one, no form occurred anywhere (leftmost-longest
 * replaces the leftmost occurrence of any pattern), so the detect set
 * would count none: its pass is skipped. A request head carries its
 * sentinels, which the detect set (sentinel -> sentinel first) walked
 * byte by byte in every such search (issue 16, round 49). The copy is
 * changed (real values turned into sentinels) when *any, and wiped
 * when not. 0 or -1.
 */
static int scratch_any_form(mask_table_t *t, size_t len, bool *any)
{
	size_t total = 0;
	int rc = mask_replace_inplace(t->inbound, t->scratch, len, NULL, &total);

	*any = rc == 0 && total != 0;
	explicit_bzero(t->scratch, len);
	return rc;
}

/* The credential of the first real-value form counted by the last
 * scratch_detect(), or -1. */
static long detected_real(const mask_table_t *t)
{
	size_t nf = set_forms(t);

	for (size_t k = 0; k < nf; k++)
		if (t->detect_counts[t->nvalues + k] != 0)
			return (long)t->value[t->form_value[k]].cred;
	return -1;
}

/* mask_table_find_real() from the pass `first` on. */
static long find_real_from(mask_table_t *t, const void *buf, size_t len, enum fill first)
{
	long n, found;

	if (t->nvalues == 0 || len == 0 || len < t->min_len)
		return -1;
	/* As it is (raw, and the percent forms an encoder writes), then,
	 * when it has a '%', with every %XX decoded (%67hp_ for ghp_), then,
	 * when it has a '+' and some value a space, with '+' as a space too
	 * (a form-encoded query spelled any way a server decodes). */
	for (enum fill how = first; how <= FILL_FORM; how++) {
		bool any;

		if (fill_useless(t, buf, len, how))
			continue;
		if ((n = scratch_fill(t, buf, len, how)) < 0 || scratch_any_form(t, (size_t)n, &any) != 0)
			return -1;
		if (!any)
			continue;
		/* Something: the detect set says which credential, over a
		 * fresh copy (the remask set changed this one). */
		if ((n = scratch_fill(t, buf, len, how)) < 0 || scratch_detect(t, (size_t)n) != 0)
			return -1;
		if ((found = detected_real(t)) >= 0)
			return found;
	}
	return -1;
}

long mask_table_find_real(mask_table_t *t, const void *buf, size_t len)
{
	return find_real_from(t, buf, len, FILL_ASIS);
}

/* mask_table_find_real_name(), the exact pass over buf as it is skipped
 * when skip_asis. */
static long find_real_name(mask_table_t *t, const void *buf, size_t len, bool skip_asis)
{
	const unsigned char *b = buf;
	size_t total = 0, np;
	long found;
	int rc;

	errno = 0;
	if ((found = find_real_from(t, buf, len, skip_asis ? FILL_PCT : FILL_ASIS)) >= 0 || errno == ENOMEM)
		return found;
	/* A name is case-insensitive (DNS, SNI, a URL's host): a real value
	 * with its case changed on the way is the same way out. One pass of
	 * the lower-cased values over a lower-cased copy (linear in len,
	 * however long the text). */
	/* Not t->min_len (round 49, attack49p): the folded set holds forms
	 * shorter than any value (a value less an escape's bytes at an end,
	 * its core, its %XX decoded), and a WebSocket control frame's
	 * payload may be just one: t->folded_min (folding and decoding only
	 * shorten the text). */
	if (t->folded == NULL || len < t->folded_min || (np = mask_set_npairs(t->folded)) == 0)
		return -1;
	/* As sent, then with every %XX decoded, then with '+' as a space
	 * (as mask_table_find_real() does; round 18: %67hp_ and a lowered
	 * rest). */
	for (enum fill how = FILL_ASIS; how <= FILL_FORM; how++) {
		long n;
		size_t m;

		if (fill_useless(t, b, len, how))
			continue;
		if ((n = scratch_fill(t, b, len, how)) < 0)
			return -1;
		/* Folded as the set's patterns were (mask_fold(): shorter
		 * where a wide form was). */
		m = mask_fold(t->scratch, t->scratch, (size_t)n);
		memset(t->folded_counts, 0, np * sizeof(uint64_t));
		rc = mask_replace_inplace(t->folded, t->scratch, m, t->folded_counts, &total);
		explicit_bzero(t->scratch, (size_t)n);
		if (rc != 0)
			return -1;
		for (size_t k = 0; k < np; k++)
			if (t->folded_counts[k] != 0)
				return (long)t->value[t->folded_value[k]].cred;
	}
	return -1;
}

long mask_table_find_real_name(mask_table_t *t, const void *buf, size_t len)
{
	return find_real_name(t, buf, len, false);
}

long mask_table_find_real_remasked(mask_table_t *t, const void *buf, size_t len, size_t replaced)
{
	/* The remask set holds every real-value form of the detect set,
	 * with the same percent forms and gaps. With nothing replaced, no
	 * form of it occurred anywhere in buf (leftmost-longest replaces
	 * the leftmost occurrence of any pattern), so the exact pass as it
	 * is finds none: skipped. With something replaced it is kept: a
	 * form may start inside a replaced one, on a byte the sentinel
	 * keeps (punctuation), and run past its end, never rescanned. */
	return find_real_name(t, buf, len, replaced == 0);
}

int mask_table_sentinels_decoded(mask_table_t *t, const void *buf, size_t len, uint64_t *counts)
{
	long n;

	if (t->nvalues == 0 || len == 0 || memchr(buf, '%', len) == NULL)
		return 0;
	if ((n = scratch_fill(t, buf, len, FILL_PCT)) < 0 || scratch_detect(t, (size_t)n) != 0)
		return -1;
	for (size_t v = 0; v < t->nvalues; v++)
		counts[v] += t->detect_counts[v];
	/* The stale sentinels, where an outbound set counts them. */
	for (size_t k = 0, at = t->nvalues + set_forms(t); k < t->nstale; k++)
		counts[at + k] += t->detect_counts[at + k];
	return 0;
}

size_t mask_table_form_count(const mask_table_t *t)
{
	return t->nform;
}

long mask_table_find_sentinel(mask_table_t *t, const void *buf, size_t len)
{
	size_t total = 0;
	long found = -1;

	if (t->nvalues == 0 || len == 0 || scratch_reserve(t, len) < 0)
		return -1;
	/* The detect set maps each sentinel to itself, so in-place
	 * replacement on a copy only counts; the copy is wiped after, since
	 * a header may also hold real values injected before this check. */
	memcpy(t->scratch, buf, len);
	memset(t->detect_counts, 0, mask_set_npairs(t->detect) * sizeof(uint64_t));
	if (mask_replace_inplace(t->detect, t->scratch, len, t->detect_counts, &total) != 0) {
		explicit_bzero(t->scratch, len);
		return -1;
	}
	explicit_bzero(t->scratch, len);
	for (size_t v = 0; total != 0 && v < t->nvalues; v++)
		if (t->detect_counts[v] != 0) {
			found = (long)t->value[v].cred;
			break;
		}
	return found;
}

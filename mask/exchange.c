/*
 * exchange.c - masking one connection's exchanges (SPEC §4.2, §4.3): the
 * coarse API of mask.h over the table and the streams. A request head is
 * checked and substituted in one call (target with its percent forms,
 * every header field, the decoded user:password of Authorization: Basic,
 * the Host field that may carry no sentinel); a body goes through one
 * stream per direction fed chunk by chunk; the audit figures (credentials
 * injected, values remasked, a sentinel left in a body, a real value on
 * its way out) are settled here.
 *
 * Nothing here logs or formats a real value. No function allocates after
 * mask_exch_new() except a stream on a set first met, and libevent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mask.h"

/* One direction's body stream. */
struct xdir {
	mask_stream_t *st;       /* stream on set, or NULL */
	const mask_set_t *set;   /* set st runs on */
	struct mask_outbound ob; /* MASK_OUT: eligibility of the body set */
	bool on;                 /* a message is being substituted */
	/* MASK_IN from an inject host: the second, case-folding search
	 * over what the remask stream wrote (docs/masking.md "A real value
	 * with its case changed in a response body"). */
	mask_stream_t *fold;     /* on the table's folded set, or NULL */
	bool folding;            /* fold runs on the current message */
};

struct mask_exch {
	mask_table_t *t;    /* not owned */
	size_t npairs;      /* values: pairs of every set */
	size_t ncreds;      /* credentials */
	size_t ncounts;     /* pairs of the largest outbound set: values + forms + stale */
	uint64_t *counts;   /* [ncounts] scratch for one location */
	unsigned char *inj; /* [ncreds] injected on the current request */
	long body_left;     /* credential of a sentinel left in a body, or -1 */
	long ctl_leak;      /* credential of a real value in a control frame, or -1 */
	long case_real;     /* credential of a real value the inbound fold found
			     * with its case changed, or -1 */
	bool body_inj;      /* a real value went into the finished request body */
	uint64_t remasked;  /* real values turned into sentinels */
	struct xdir dir[2];
};

mask_exch_t *mask_exch_new(mask_table_t *t)
{
	mask_exch_t *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->t = t;
	x->npairs = mask_table_value_count(t);
	x->ncreds = mask_table_cred_count(t);
	x->ncounts = x->npairs + mask_table_form_count(t) + mask_table_stale_count(t);
	x->counts = calloc(x->ncounts > 0 ? x->ncounts : 1, sizeof(*x->counts));
	x->inj = calloc(x->ncreds > 0 ? x->ncreds : 1, 1);
	if (x->counts == NULL || x->inj == NULL) {
		mask_exch_free(x);
		errno = ENOMEM;
		return NULL;
	}
	x->body_left = -1;
	x->ctl_leak = -1;
	x->case_real = -1;
	return x;
}

void mask_exch_free(mask_exch_t *x)
{
	if (x == NULL)
		return;
	mask_stream_free(x->dir[MASK_OUT].st);
	mask_stream_free(x->dir[MASK_IN].st);
	mask_stream_free(x->dir[MASK_IN].fold);
	free(x->counts);
	free(x->inj);
	free(x);
}

void mask_exch_begin(mask_exch_t *x)
{
	memset(x->inj, 0, x->ncreds > 0 ? x->ncreds : 1);
	x->body_left = -1;
	x->body_inj = false;
	x->ctl_leak = -1;
	x->case_real = -1;
	x->remasked = 0;
	for (int i = 0; i < 2; i++) {
		x->dir[i].on = false;
		x->dir[i].folding = false;
		if (x->dir[i].st != NULL)
			mask_stream_reset(x->dir[i].st);
		if (x->dir[i].fold != NULL)
			mask_stream_reset(x->dir[i].fold);
	}
}

/* Whether some credential of t may be injected towards host:port anywhere. */
static bool table_inject_host(mask_table_t *t, const char *host, uint16_t port)
{
	static const unsigned where[] = {INJECT_HEADER, INJECT_QUERY, INJECT_BODY};
	struct mask_outbound ob;

	for (size_t i = 0; i < ARRAY_LEN(where); i++)
		if (mask_table_outbound(t, host, port, true, where[i], &ob) == 0 && ob.any)
			return true;
	return false;
}

bool mask_exch_inject_host(mask_exch_t *x, const char *host, uint16_t port)
{
	return table_inject_host(x->t, host, port);
}

size_t mask_table_in_holdmax(mask_table_t *t, const char *host, uint16_t port)
{
	const mask_set_t *in = mask_table_inbound_set(t), *fs = mask_table_folded_set(t);
	size_t k = in != NULL ? mask_set_holdmax(in) : 0;

	/* As mask_exch_body_begin(MASK_IN) and mask_exch_body_holdmax(). */
	if (fs != NULL && mask_set_npairs(fs) > 0 && host != NULL && table_inject_host(t, host, port))
		k += mask_table_folded_holdmax(t);
	return k;
}

/* ------------------------------------------------------------------ */
/* Request head                                                         */
/* ------------------------------------------------------------------ */

static void clear_counts(mask_exch_t *x)
{
	memset(x->counts, 0, x->ncounts * sizeof(*x->counts));
}

/* The pair of the first stale sentinel counted at one location with ob
 * (index npairs + nforms + k), or -1. */
static long stale_hit(const mask_exch_t *x, const struct mask_outbound *ob)
{
	size_t at = ob->npairs + ob->nforms;

	for (size_t k = 0; k < ob->nstale && at + k < x->ncounts; k++)
		if (x->counts[at + k] != 0)
			return (long)(at + k);
	return -1;
}

/*
 * After one location was substituted with ob: records the injected
 * credentials; returns a stale sentinel's pair (stale_hit()), else the
 * first pair whose sentinel may not go there, or -1.
 */
static long settle(mask_exch_t *x, const struct mask_outbound *ob)
{
	long bad = stale_hit(x, ob);

	if (bad >= 0)
		return bad;

	for (size_t i = 0; i < ob->npairs && i < x->npairs; i++) {
		if (x->counts[i] == 0)
			continue;
		if (ob->inject[i]) {
			if (ob->cred[i] < x->ncreds)
				x->inj[ob->cred[i]] = 1;
		} else if (bad < 0) {
			bad = (long)i;
		}
	}
	return bad;
}

/*
 * Why pair `pair` may not be injected at `where` towards host:port: plain
 * HTTP without allowPlaintextInject, a place injectIn does not list, or a
 * host outside injectHosts.
 */
static enum mask_rule refusal_rule(mask_exch_t *x, size_t pair, const char *host, uint16_t port,
				   bool verified, unsigned where)
{
	static const unsigned all[] = {INJECT_HEADER, INJECT_QUERY, INJECT_BODY};
	struct mask_outbound ob;

	if (!verified && mask_table_outbound(x->t, host, port, true, where, &ob) == 0 &&
	    pair < ob.npairs && ob.inject[pair])
		return MASK_RULE_PLAINTEXT;
	for (size_t k = 0; k < ARRAY_LEN(all); k++)
		if (mask_table_outbound(x->t, host, port, true, all[k], &ob) == 0 && pair < ob.npairs &&
		    ob.inject[pair])
			return MASK_RULE_INJECT_IN;
	return MASK_RULE_INJECT_HOSTS;
}

/* End of the line starting at p (CRLF-terminated, inside [p, end)). */
static char *line_end(char *p, char *end)
{
	char *q = memchr(p, '\r', (size_t)(end - p));

	return q != NULL ? q : end;
}

/* A hex digit's value, or -1. */
static int url_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Whether p[i, len) begins with the sentinel s[j, slen) in some percent
 * form (each byte as it is or as %XX in either case, a space also as
 * '+') with one of its '%' or '#' bytes as it is (raw: one already).
 * A sentinel's own "%25" read from a "%25" is either its three bytes or
 * its '%' escaped: both are tried, at most *budget times in all, and
 * past that the answer is yes (refused: the target is absurd).
 */
static bool url_raw_at(const char *p, size_t len, size_t i, const char *s, size_t slen, size_t j, bool raw,
		       unsigned *budget)
{
	int hi, lo;

	while (j < slen && i < len) {
		unsigned char c = (unsigned char)s[j];

		if (c == '%' && j + 2 < slen && s[j + 1] == '2' && s[j + 2] == '5' && i + 2 < len &&
		    memcmp(p + i, "%25", 3) == 0) {
			if ((*budget)-- == 0)
				return true;
			if (url_raw_at(p, len, i + 3, s, slen, j + 3, true, budget))
				return true;
		}
		if (p[i] == '%' && i + 2 < len && (hi = url_hex(p[i + 1])) >= 0 && (lo = url_hex(p[i + 2])) >= 0 &&
		    (unsigned)(hi * 16 + lo) == c) {
			i += 3;
		} else if ((unsigned char)p[i] == c || (c == ' ' && p[i] == '+')) {
			raw = raw || c == '%' || c == '#';
			i++;
		} else {
			return false;
		}
		j++;
	}
	return j == slen && raw;
}

/*
 * Whether the target [p, p + len) holds the sentinel s in a percent form
 * with one of its '%' or '#' bytes raw (url_raw_at()). Round 46 of the
 * attack: only the raw sentinel was looked for, so a form escaping the
 * value's other bytes (its '/') and leaving its '%' raw was swapped, and
 * the server decoded the real value's %XX. Its %25 and %23 pass.
 */
static bool url_raw_form(const char *p, size_t len, const char *s, size_t slen)
{
	unsigned budget = 256;

	for (size_t at = 0; at + slen <= len; at++)
		if ((p[at] == s[0] || p[at] == '%' || (s[0] == ' ' && p[at] == '+')) &&
		    url_raw_at(p, len, at, s, slen, 0, false, &budget))
			return true;
	return false;
}

/*
 * Whether the target [p, p + len) holds the sentinel s in any percent
 * form (url_raw_at()) with a raw '%' in the two bytes before it.
 * review46p: swapped, the real value's first bytes complete that escape
 * ("%" + "4f..." or "%4" + "a...") and the server decodes them into one
 * byte that says what they were: every value beginning with a hex digit,
 * no %XX of its own needed. No encoder writes a '%' there.
 */
static bool url_pct_before(const char *p, size_t len, const char *s, size_t slen)
{
	unsigned budget = 256;

	for (size_t at = 1; at + slen <= len; at++)
		if ((p[at - 1] == '%' || (at >= 2 && p[at - 2] == '%')) &&
		    url_raw_at(p, len, at, s, slen, 0, true, &budget))
			return true;
	return false;
}

/*
 * The request target [p, p + len) with the query set q: a sentinel
 * spelled with escapes no encoder writes (%67hp_) is not substituted but
 * found with every %XX decoded (SPEC §4.2), then the substitution with
 * percent forms. Returns the pair refused there, -1 (none) or -2 (ENOMEM).
 */
static long head_target(mask_exch_t *x, const struct mask_outbound *q, char *p, size_t len, bool *url_raw)
{
	size_t total;
	long bad = -1;

	*url_raw = false;
	clear_counts(x);
	if (mask_table_sentinels_decoded(x->t, p, len, x->counts) < 0)
		return -2;
	bad = stale_hit(x, q);
	for (size_t i = 0; i < q->npairs && i < x->npairs && bad < 0; i++)
		if (x->counts[i] != 0 && !q->inject[i])
			bad = (long)i;
	if (bad >= 0)
		return bad;
	/* Round 45: a sentinel raw in the target whose value holds a '#' or
	 * a %XX escape is not swapped (mask_table_value_url_raw()). */
	for (size_t i = 0; i < q->npairs && i < x->npairs; i++) {
		const char *sent;
		size_t slen;

		/* not x->counts[i]: that search decodes the target, and a
		 * sentinel's own '%' before two hex digits hides it there;
		 * every form with such a '%' raw (round 46), not only the
		 * raw sentinel */
		if (!q->inject[i] || mask_table_value_name(x->t, i, &sent, &slen) == NULL)
			continue;
		/* and, any value, a raw '%' just before it (review46p) */
		if (!(mask_table_value_url_raw(x->t, i) && url_raw_form(p, len, sent, slen)) &&
		    !url_pct_before(p, len, sent, slen))
			continue;
		*url_raw = true;
		return (long)i;
	}
	clear_counts(x);
	if (mask_replace_inplace(q->set, p, len, x->counts, &total) < 0)
		return -2;
	return total > 0 ? settle(x, q) : -1;
}

/* The credential of the first pair counted in x->counts for the set of
 * ob: a sentinel's, a real value form's or a stale sentinel's. */
static const char *counted_cred(mask_exch_t *x, const struct mask_outbound *ob)
{
	size_t forms = ob->npairs + ob->nforms, stale = forms + ob->nstale;

	for (size_t i = 0; i < x->ncounts && i < stale; i++) {
		if (x->counts[i] == 0)
			continue;
		if (i < ob->npairs)
			return mask_table_cred_name(x->t, ob->cred[i]);
		if (i < forms)
			return mask_table_cred_name(x->t, mask_table_value_cred(x->t, ob->form_value[i - ob->npairs]));
		return mask_table_cred_name(x->t, mask_table_value_cred(x->t, ob->stale_value[i - forms]));
	}
	return NULL;
}

/*
 * One header field [p, le) with the header set h: the whole field, then,
 * for Authorization: Basic, the decoded user:password. Before the Basic
 * decode: the header set also holds the base64 forms of real values (a
 * real value going out), which the re-encoded user:password would now
 * match. A name is no place for a value: when the substitution changed
 * the name [p, colon) (a sentinel swapped for its real value, or a real
 * value for its sentinel), -3 with *ncred naming the credential. On an
 * inject host the real value would go up as a name, and a hop that folds
 * names' case (Node's req.headers, Flask) echoes it back where the
 * re-masker does not know it (round 8 of the attack). A match that took
 * in the colon or the white space around the value is refused too (-4,
 * *ncred naming a credential counted in the field): the hop strips those
 * bytes, so the real value would arrive cut. Returns the pair refused
 * there, -1, -2 (ENOMEM), -3 or -4.
 */
static long head_field(mask_exch_t *x, const struct mask_outbound *h, char *p, char *colon, char *le,
		       const char **ncred)
{
	char *v = colon + 1, small[256], *name = small, vsmall[256], *val = NULL;
	size_t vlen, total, n = (size_t)(colon - p), core = 0;
	bool changed;
	int rc;

	*ncred = NULL;
	while (v < le && (*v == ' ' || *v == '\t'))
		v++;
	vlen = (size_t)(le - v);
	if (mask_set_field_syntax(h->set)) {
		/* A pattern with ':' or edge white space can match across
		 * the colon or the value's white space, which the next hop
		 * strips: ":TOKEN" written as "X-A:TOKEN'", " TOKEN" as
		 * "X-A: TOKEN'" would put the real value up without its
		 * first byte, and its echo would not be re-masked. The value
		 * without its white space is counted on its own below: a
		 * match the field has and it lacks took in the edge. */
		core = vlen;
		while (core > 0 && (v[core - 1] == ' ' || v[core - 1] == '\t'))
			core--;
		if (core > sizeof(vsmall) && (val = malloc(core)) == NULL)
			return -2;
		if (val == NULL)
			val = vsmall;
		memcpy(val, v, core);
	}
	/* The name as sent, to see whether the substitution changed it
	 * (wiped after: it may hold a real value on its way out). */
	if (n > sizeof(small) && (name = malloc(n)) == NULL)
		return -2;
	memcpy(name, p, n);
	clear_counts(x);
	rc = mask_replace_inplace(h->set, p, (size_t)(le - p), x->counts, &total);
	changed = rc == 0 && total > 0 && memcmp(name, p, n) != 0;
	if (changed) {
		/* The refusal names what the name held, not what the value
		 * held: the name alone once more (the refusal path only). */
		clear_counts(x);
		if (mask_replace_inplace(h->set, name, n, x->counts, &total) < 0)
			rc = -1;
		else
			*ncred = counted_cred(x, h);
	}
	explicit_bzero(name, n);
	if (name != small)
		free(name);
	if (val != NULL) {
		size_t alone = 0;

		if (rc == 0 && !changed && total > 0 && mask_replace_inplace(h->set, val, core, NULL, &alone) < 0)
			rc = -1;
		explicit_bzero(val, core);
		if (val != vsmall)
			free(val);
		if (rc == 0 && !changed && alone != total) {
			*ncred = counted_cred(x, h);
			return -4;
		}
	}
	if (rc < 0)
		return -2;
	if (changed)
		return -3;
	/* The decoded user:password (git's x-access-token:TOKEN). */
	if (colon - p == 13 && strncasecmp(p, "authorization", 13) == 0 && vlen > 6 &&
	    strncasecmp(v, "basic ", 6) == 0 &&
	    mask_basic_replace(h->set, v + 6, vlen - 6, x->counts, &total) < 0)
		return -2;
	return settle(x, h);
}

/* Fills why for pair bad refused at where (a mask_table_outbound()
 * INJECT_* place). */
static void refuse(mask_exch_t *x, const struct mask_outbound *ob, long bad, const char *host,
		   uint16_t port, bool verified, unsigned where, struct mask_refusal *why)
{
	size_t stale0 = ob->npairs + ob->nforms;

	why->where = where == INJECT_QUERY ? MASK_WHERE_TARGET : MASK_WHERE_HEADER;
	if ((size_t)bad >= stale0) {
		/* A stale sentinel: named after the value's first holder. */
		size_t cred = mask_table_value_cred(x->t, ob->stale_value[(size_t)bad - stale0]);
		const char *dname, *sent;
		size_t len;

		why->cred = mask_table_cred_name(x->t, cred);
		dname = mask_table_value_name(x->t, ob->stale_value[(size_t)bad - stale0], &sent, &len);
		why->env = dname != NULL && strncmp(dname, "env:", 4) == 0;
		why->rule = MASK_RULE_STALE;
		return;
	}
	why->cred = mask_table_cred_name(x->t, ob->cred[bad]);
	why->rule = refusal_rule(x, (size_t)bad, host, port, verified, where);
}

enum mask_head_result mask_exch_request_head(mask_exch_t *x, char *head, size_t len, const char *host,
					     uint16_t port, bool verified, struct mask_refusal *why)
{
	struct mask_outbound q, h;
	char *end = head + len, *p, *le, *sp1, *sp2;
	long bad;

	memset(why, 0, sizeof(*why));
	if (len == 0)
		return MASK_HEAD_OK;
	if (mask_table_outbound(x->t, host, port, verified, INJECT_QUERY, &q) < 0 ||
	    mask_table_outbound(x->t, host, port, verified, INJECT_HEADER, &h) < 0)
		return MASK_HEAD_NOMEM;
	/* Request line: METHOD SP target SP HTTP/1.x */
	le = line_end(head, end);
	sp1 = memchr(head, ' ', (size_t)(le - head));
	sp2 = le;
	while (sp2 > head && sp2[-1] != ' ')
		sp2--;
	if (sp1 != NULL && sp2 - 1 > sp1) {
		bool url_raw;

		bad = head_target(x, &q, sp1 + 1, (size_t)(sp2 - 1 - (sp1 + 1)), &url_raw);
		if (bad == -2)
			return MASK_HEAD_NOMEM;
		if (bad >= 0) {
			refuse(x, &q, bad, host, port, verified, INJECT_QUERY, why);
			if (url_raw)
				why->rule = MASK_RULE_URL_RAW;
			return MASK_HEAD_REFUSED;
		}
	}
	/* Fields: "Name: value" lines up to the empty line. */
	for (p = le + 2; p < end && *p != '\r'; p = le + 2) {
		const char *ncred;
		char *colon;
		long cred;

		le = line_end(p, end);
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon == NULL)
			continue;
		if (colon - p == 4 && strncasecmp(p, "host", 4) == 0) {
			/* The authority the policy decided: never substituted;
			 * a sentinel there goes nowhere. */
			cred = mask_table_find_sentinel(x->t, p, (size_t)(le - p));
			if (cred >= 0) {
				why->cred = mask_table_cred_name(x->t, (size_t)cred);
				why->where = MASK_WHERE_HOST;
				why->rule = MASK_RULE_INJECT_IN;
				return MASK_HEAD_REFUSED;
			}
			continue;
		}
		bad = head_field(x, &h, p, colon, le, &ncred);
		if (bad == -2)
			return MASK_HEAD_NOMEM;
		if (bad == -3 || bad == -4) {
			why->cred = ncred;
			why->where = bad == -3 ? MASK_WHERE_NAME : MASK_WHERE_EDGE;
			why->rule = MASK_RULE_INJECT_IN;
			return MASK_HEAD_REFUSED;
		}
		if (bad >= 0) {
			refuse(x, &h, bad, host, port, verified, INJECT_HEADER, why);
			return MASK_HEAD_REFUSED;
		}
	}
	return MASK_HEAD_OK;
}

int mask_exch_response_head(mask_exch_t *x, void *buf, size_t len, const char **cred)
{
	size_t total = 0;
	long c;

	*cred = NULL;
	if (len == 0)
		return 0;
	if (mask_replace_inplace(mask_table_inbound_set(x->t), buf, len, NULL, &total) < 0)
		return -1;
	x->remasked += total;
	errno = 0;
	c = mask_table_find_real_remasked(x->t, buf, len, total);
	if (c < 0)
		return errno == ENOMEM ? -1 : 0;
	*cred = mask_table_cred_name(x->t, (size_t)c);
	return 1;
}

int mask_exch_find_real(mask_exch_t *x, const void *buf, size_t len, const char **cred)
{
	long c;

	*cred = NULL;
	errno = 0;
	c = mask_table_find_real(x->t, buf, len);
	if (c < 0)
		return errno == ENOMEM ? -1 : 0;
	*cred = mask_table_cred_name(x->t, (size_t)c);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Bodies                                                               */
/* ------------------------------------------------------------------ */

/* Arms the case-folding search of an inbound body from host:port: on
 * when some credential may be injected there (only such a host ever
 * held a real value to echo). 0 or -1 (ENOMEM). */
static int fold_begin(mask_exch_t *x, struct xdir *d, const char *host, uint16_t port)
{
	const mask_set_t *fs = mask_table_folded_set(x->t);

	x->case_real = -1;
	d->folding = false;
	if (fs == NULL || mask_set_npairs(fs) == 0 || host == NULL || !mask_exch_inject_host(x, host, port))
		return 0;
	if (d->fold == NULL) {
		if ((d->fold = mask_stream_new(fs)) == NULL)
			return -1;
	} else {
		mask_stream_reset(d->fold);
	}
	d->folding = true;
	return 0;
}

/* Runs the fold over out's bytes from `from` on (what the remask stream
 * just wrote), and, at the end of the message (end), settles what it
 * holds. A match sets x->case_real. 0 or -1. */
static int fold_scan(mask_exch_t *x, struct xdir *d, struct evbuffer *out, size_t from, bool end)
{
	size_t len = evbuffer_get_length(out), left;
	struct evbuffer_ptr ptr;

	if (!d->folding)
		return 0;
	left = from < len ? len - from : 0;
	if (left > 0 && evbuffer_ptr_set(out, &ptr, from, EVBUFFER_PTR_SET) != 0)
		return -1;
	while (left > 0) {
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(out, (ev_ssize_t)left, &ptr, v, 8);
		size_t took = 0;

		if (nv < 1)
			return -1;
		for (int i = 0; i < nv && i < 8 && took < left; i++) {
			size_t n = v[i].iov_len < left - took ? v[i].iov_len : left - took;

			if (mask_stream_scan_folded(d->fold, v[i].iov_base, n) != 0)
				return -1;
			took += n;
		}
		if (took == 0)
			return -1;
		left -= took;
		if (left > 0 && evbuffer_ptr_set(out, &ptr, took, EVBUFFER_PTR_ADD) != 0)
			return -1;
	}
	if (end && mask_stream_scan_end(d->fold) != 0)
		return -1;
	if (x->case_real < 0 && mask_stream_total(d->fold) != 0) {
		const mask_set_t *fs = mask_table_folded_set(x->t);

		for (size_t k = 0; k < mask_set_npairs(fs); k++)
			if (mask_stream_count(d->fold, k) != 0) {
				x->case_real = mask_table_folded_cred(x->t, k);
				break;
			}
	}
	return 0;
}

int mask_exch_body_begin(mask_exch_t *x, enum mask_dir dd, const char *host, uint16_t port,
			 bool verified)
{
	struct xdir *d = &x->dir[dd];
	const mask_set_t *set;

	if (dd == MASK_OUT) {
		x->ctl_leak = -1;
		/* No host: one that does not normalise is eligible for
		 * nothing, every pair maps a sentinel to itself. */
		if (mask_table_outbound(x->t, host != NULL ? host : "", host != NULL ? port : 0,
					host != NULL && verified, INJECT_BODY, &d->ob) < 0)
			return -1;
		set = d->ob.set;
	} else {
		set = mask_table_inbound_set(x->t);
		if (fold_begin(x, d, host, port) < 0)
			return -1;
	}
	if (d->st != NULL && d->set != set) {
		mask_stream_free(d->st);
		d->st = NULL;
	}
	if (d->st == NULL) {
		d->st = mask_stream_new(set);
		if (d->st == NULL)
			return -1;
		d->set = set;
	} else {
		mask_stream_reset(d->st);
	}
	d->on = true;
	return 0;
}

bool mask_exch_body_active(const mask_exch_t *x, enum mask_dir d)
{
	return x->dir[d].on;
}

int mask_exch_body_feed(mask_exch_t *x, enum mask_dir dd, const void *data, size_t len,
			struct evbuffer *out)
{
	struct xdir *d = &x->dir[dd];

	size_t from = evbuffer_get_length(out);

	if (!d->on)
		return -1;
	if (mask_stream_feed(d->st, data, len, out) != 0)
		return -1;
	return fold_scan(x, d, out, from, false);
}

int mask_exch_body_feed_buffer(mask_exch_t *x, enum mask_dir dd, struct evbuffer *in, size_t len,
			       struct evbuffer *out)
{
	struct xdir *d = &x->dir[dd];

	size_t from = evbuffer_get_length(out);

	if (!d->on)
		return -1;
	if (mask_stream_feed_buffer(d->st, in, len, out) != 0)
		return -1;
	return fold_scan(x, d, out, from, false);
}

int mask_exch_body_release(mask_exch_t *x, enum mask_dir dd, struct evbuffer *out)
{
	struct xdir *d = &x->dir[dd];

	size_t from = evbuffer_get_length(out);

	if (!d->on)
		return 0;
	if (mask_stream_finish(d->st, out) != 0)
		return -1;
	/* The fold keeps its state across the pause: what it held goes on
	 * with the rest (the caller sends it), and a value it began is still
	 * found when its end comes, then the response is cut. */
	return fold_scan(x, d, out, from, false);
}

size_t mask_exch_body_held(const mask_exch_t *x, enum mask_dir d)
{
	return x->dir[d].on ? mask_stream_held(x->dir[d].st) : 0;
}

size_t mask_exch_body_holdmax(const mask_exch_t *x, enum mask_dir d)
{
	size_t k = x->dir[d].set != NULL ? mask_set_holdmax(x->dir[d].set) : 0;

	/* The fold's hold-back lies in what the remask stream wrote: the
	 * caller keeps both back (cmask_ready()). */
	if (x->dir[d].folding)
		k += mask_table_folded_holdmax(x->t);
	return k;
}

void mask_exch_body_cut(mask_exch_t *x, enum mask_dir dd)
{
	struct xdir *d = &x->dir[dd];

	if (!d->on)
		return;
	d->on = false;
	if (dd == MASK_IN)
		x->remasked += mask_stream_total(d->st);
	/* The hold-back may begin a real value: wiped, never sent. */
	mask_stream_reset(d->st);
	if (d->fold != NULL)
		mask_stream_reset(d->fold);
	d->folding = false;
}

int mask_exch_body_end(mask_exch_t *x, enum mask_dir dd, struct evbuffer *out)
{
	struct xdir *d = &x->dir[dd];

	if (!d->on)
		return 0;
	size_t from = evbuffer_get_length(out);

	d->on = false;
	if (mask_stream_finish(d->st, out) < 0)
		return -1;
	if (dd == MASK_IN) {
		x->remasked += mask_stream_total(d->st);
		if (fold_scan(x, d, out, from, true) != 0)
			return -1;
		d->folding = false;
		return 0;
	}
	for (size_t i = 0; i < d->ob.npairs; i++) {
		if (mask_stream_count(d->st, i) == 0)
			continue;
		if (d->ob.inject[i]) {
			if (d->ob.cred[i] < x->ncreds)
				x->inj[d->ob.cred[i]] = 1;
			x->body_inj = true;
		} else if (x->body_left < 0) {
			x->body_left = (long)d->ob.cred[i];
		}
	}
	return 0;
}

const char *mask_exch_body_case_real(const mask_exch_t *x)
{
	return x->case_real >= 0 ? mask_table_cred_name(x->t, (size_t)x->case_real) : NULL;
}

const char *mask_exch_leak(const mask_exch_t *x)
{
	const struct xdir *d = &x->dir[MASK_OUT];

	if (d->st == NULL || mask_stream_total(d->st) == 0)
		return NULL;
	for (size_t k = 0; k < d->ob.nforms; k++)
		if (mask_stream_count(d->st, d->ob.npairs + k) != 0)
			return mask_table_cred_name(x->t,
						    mask_table_value_cred(x->t, d->ob.form_value[k]));
	return NULL;
}

const char *mask_exch_sentinel_met(const mask_exch_t *x, bool *met)
{
	const struct xdir *d = &x->dir[MASK_OUT];

	*met = d->st != NULL && mask_stream_total(d->st) != 0;
	if (!*met)
		return NULL;
	for (size_t i = 0; i < d->ob.npairs; i++)
		if (mask_stream_count(d->st, i) > 0)
			return mask_table_cred_name(x->t, d->ob.cred[i]);
	return NULL;
}

int mask_exch_control(mask_exch_t *x, enum mask_dir dd, void *buf, size_t len)
{
	const struct xdir *d = &x->dir[dd];
	size_t total = 0;

	if (d->set == NULL)
		return -1;
	clear_counts(x);
	if (len > 0 && mask_replace_inplace(d->set, buf, len, x->counts, &total) < 0)
		return -1;
	if (dd == MASK_IN) {
		x->remasked += total;
		/* From an inject host, a control frame (a close frame's reason,
		 * a pong) is searched with case ignored too, as the payload
		 * stream is (review 40a: "INVALID TOKEN: GHP_..." in a close
		 * frame reached the client). It is whole (at most 125 bytes):
		 * one search, the head's (mask_table_find_real_name()). */
		if (d->folding && x->case_real < 0 && len > 0) {
			long c;

			errno = 0;
			if ((c = mask_table_find_real_name(x->t, buf, len)) >= 0)
				x->case_real = c;
			else if (errno == ENOMEM)
				return -1;
		}
	} else if (total > 0) {
		for (size_t k = 0; k < d->ob.nforms && x->ctl_leak < 0; k++)
			if (x->counts[d->ob.npairs + k] != 0)
				x->ctl_leak = (long)mask_table_value_cred(x->t, d->ob.form_value[k]);
	}
	return 0;
}

const char *mask_exch_control_leak(const mask_exch_t *x)
{
	return x->ctl_leak >= 0 ? mask_table_cred_name(x->t, (size_t)x->ctl_leak) : NULL;
}

/* ------------------------------------------------------------------ */
/* Audit figures                                                        */
/* ------------------------------------------------------------------ */

size_t mask_exch_injected(const mask_exch_t *x, const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < x->ncreds && n < max; i++)
		if (x->inj[i])
			names[n++] = mask_table_cred_name(x->t, i);
	return n;
}

uint64_t mask_exch_remasked(const mask_exch_t *x)
{
	/* An inbound body still under way (a WebSocket stream audited when
	 * its connection ends) counts what it re-masked so far. */
	if (x->dir[MASK_IN].on && x->dir[MASK_IN].st != NULL)
		return x->remasked + mask_stream_total(x->dir[MASK_IN].st);
	return x->remasked;
}

bool mask_exch_body_injected(const mask_exch_t *x)
{
	const struct xdir *d = &x->dir[MASK_OUT];

	if (x->body_inj)
		return true;
	/* no replacement yet (most calls): nothing to look at */
	if (!d->on || d->st == NULL || mask_stream_total(d->st) == 0)
		return false;
	for (size_t i = 0; i < d->ob.npairs; i++)
		if (d->ob.inject[i] && mask_stream_count(d->st, i) > 0)
			return true;
	return false;
}

const char *mask_exch_body_left(const mask_exch_t *x)
{
	return x->body_left >= 0 ? mask_table_cred_name(x->t, (size_t)x->body_left) : NULL;
}

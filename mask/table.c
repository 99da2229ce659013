/*
 * table.c - the credential table (SPEC §3.2, §4.2, §4.3, §4.4).
 *
 * Built once at start from the policy: masked env vars are read from
 * passavant's own environment, masked files whole or through `extract`
 * (group 1 of each POSIX ERE match, the same scan the policy loader uses
 * to refuse short values). Every distinct real value gets one sentinel;
 * real values, sentinels and file contents live in the locked secret
 * arena (secret.c). The table then answers, per request, which
 * sentinel -> real substitutions are allowed (by credential eligibility,
 * cached as compiled sets, see mask.h), and gives the real -> sentinel
 * set for every response.
 *
 * Nothing here prints a real value; error messages name credentials.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mask.h"

/* Largest masked file read (the policy loader has the same cap). */
#define MASK_FILE_MAX_BYTES (1024 * 1024)
/* Most extract matches taken from one file (as the policy loader). */
#define MASK_EXTRACT_MAX 1024
/* Decoded Basic credentials up to this size use a stack scratch. */
#define BASIC_STACK_BYTES 3072

/* A distinct real value and its sentinel, both in the secret arena. */
struct tvalue {
	char *real;    /* len bytes + NUL */
	char *sent;    /* len bytes + NUL */
	size_t len;
	uint32_t cred; /* first credential holding it */
};

/* One secret inside a file's content. */
struct tspan {
	size_t off;
	size_t len;
	uint32_t value;
};

/* One kept credential. Strings are malloc'd copies (not secret). */
struct tcred {
	enum policy_cred_kind kind;
	char *name;                   /* env name, or the path as written */
	char *path;                   /* CRED_FILE: absolute path */
	unsigned inject_in;           /* INJECT_* */
	struct policy_hostpat *hosts; /* [nhosts] copy of injectHosts */
	size_t nhosts;
	uint32_t *vals;               /* [nvals] values it holds (may repeat) */
	size_t nvals;
	/* CRED_FILE only: */
	char *content;                /* arena: the whole file + NUL */
	size_t content_len;
	struct tspan *spans;          /* [nvals] in file order; vals[i] == spans[i].value */
	char *copy;                   /* path of the sentinel copy, once written */
};

/* One cached outbound eligibility. */
struct tcache {
	uint64_t *key;          /* [nwords] eligible credential bits */
	bool percent;           /* built with MASK_SET_PERCENT */
	mask_set_t *set;        /* pair i = value i */
	unsigned char *inject;  /* [nvalues] */
	uint32_t *cred;         /* [nvalues] */
	bool any;
};

struct mask_table {
	mask_secrets_t *sec;    /* real values, sentinels, file contents */
	struct tcred *cred;     /* [ncreds] */
	size_t ncreds;
	struct tvalue *value;   /* [nvalues] */
	size_t nvalues;
	size_t vcap;
	bool plaintext_ok;      /* credentials.allowPlaintextInject */
	size_t nwords;          /* words of a credential bitset */
	uint64_t *tmpkey;       /* [nwords] lookup scratch */
	struct tcache *cache;   /* [ncache] */
	size_t ncache;
	size_t cachecap;
	struct mask_pair *form; /* [nform] the real-value forms the remasker knows
				 * (raw first, pair i = value i), -> sentinel forms */
	uint32_t *form_value;   /* [nform] value of each form */
	size_t nform;
	mask_set_t *inbound;    /* real -> sentinel forms, percent forms */
	mask_set_t *detect;     /* sentinel -> sentinel, then the forms; percent forms */
	uint64_t *detect_counts;/* [nvalues + nform] */
	unsigned char *scratch; /* find_sentinel copy; wiped after use */
	size_t scratch_cap;
	unsigned set_hygiene;   /* MASK_HYG_* common to every set built */
	enum mask_set_result set_res; /* why the last set build failed */
};

/* Formats a one-line error into err. Never given a value's bytes. */
static void seterr(char *err, size_t errlen, const char *fmt, ...) PRINTF(3, 4);
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Reading the sources                                                  */
/* ------------------------------------------------------------------ */

/*
 * Returns the index of the value equal to real[0..len), adding it (copied
 * into the arena, no sentinel yet) when new. -1 with errno on ENOMEM.
 */
static long value_intern(mask_table_t *t, const char *real, size_t len, uint32_t cred)
{
	struct tvalue *v;

	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].len == len && memcmp(t->value[i].real, real, len) == 0)
			return (long)i;
	if (t->nvalues == UINT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	if (t->nvalues == t->vcap) {
		size_t cap = t->vcap ? t->vcap * 2 : 8;
		struct tvalue *n = realloc(t->value, cap * sizeof(*n));
		if (n == NULL)
			return -1;
		t->value = n;
		t->vcap = cap;
	}
	v = &t->value[t->nvalues];
	v->real = mask_secrets_alloc(t->sec, len + 1);
	if (v->real == NULL)
		return -1;
	memcpy(v->real, real, len);
	v->sent = NULL;
	v->len = len;
	v->cred = cred;
	return (long)t->nvalues++;
}

/* Appends value index vi to c's list (and a span for files). */
static int cred_add_value(struct tcred *c, uint32_t vi, size_t off, size_t len)
{
	uint32_t *nv = realloc(c->vals, (c->nvals + 1) * sizeof(*nv));

	if (nv == NULL)
		return -1;
	c->vals = nv;
	if (c->kind == CRED_FILE) {
		struct tspan *ns = realloc(c->spans, (c->nvals + 1) * sizeof(*ns));
		if (ns == NULL)
			return -1;
		c->spans = ns;
		c->spans[c->nvals] = (struct tspan){ .off = off, .len = len, .value = vi };
	}
	c->vals[c->nvals++] = vi;
	return 0;
}

/*
 * Reads the regular file at path into the arena (NUL-terminated).
 * Returns 0, 1 when it does not exist (skipped, as the loader warned), or
 * -1 with errno.
 */
static int read_file_secret(mask_table_t *t, struct tcred *c)
{
	struct stat st;
	size_t off = 0;
	int fd;

	/* stat first: opening a FIFO or device can block or have effects. */
	if (stat(c->path, &st) != 0)
		return errno == ENOENT ? 1 : -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MASK_FILE_MAX_BYTES) {
		(void)close(fd);
		errno = st.st_size > MASK_FILE_MAX_BYTES ? EFBIG : EINVAL;
		return -1;
	}
	c->content = mask_secrets_alloc(t->sec, (size_t)st.st_size + 1);
	if (c->content == NULL) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	/* Read straight into locked memory: the content never sits in an
	 * unlocked heap buffer. A file that grows meanwhile is cut at the
	 * size fstat saw. */
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, c->content + off, (size_t)st.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			(void)close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	(void)close(fd);
	c->content_len = off;
	return 0;
}

/*
 * Splits a file credential's content into secrets: the whole content, or
 * group 1 of each extract match (scanned like the policy loader: from the
 * end of each match, one byte on when it is empty, REG_NOTBOL after the
 * first, up to the first NUL). Returns 0 or -1 with a message.
 */
static int file_values(mask_table_t *t, struct tcred *c, uint32_t ci, const char *extract,
		       char *err, size_t errlen)
{
	regex_t re;
	regmatch_t m[2];
	const char *s = c->content;
	unsigned found = 0;
	int flags = 0;
	long vi;

	if (extract == NULL) {
		vi = value_intern(t, c->content, c->content_len, ci);
		if (vi < 0 || cred_add_value(c, (uint32_t)vi, 0, c->content_len) != 0)
			goto nomem;
		return 0;
	}
	if (regcomp(&re, extract, REG_EXTENDED) != 0) {
		seterr(err, errlen, "credential %s: extract does not compile", c->name);
		return -1;
	}
	while (*s != '\0' && found < MASK_EXTRACT_MAX && regexec(&re, s, 2, m, flags) == 0) {
		if (m[1].rm_so >= 0) {
			size_t off = (size_t)(s - c->content) + (size_t)m[1].rm_so;
			size_t len = (size_t)(m[1].rm_eo - m[1].rm_so);
			found++;
			vi = value_intern(t, c->content + off, len, ci);
			if (vi < 0 || cred_add_value(c, (uint32_t)vi, off, len) != 0) {
				regfree(&re);
				goto nomem;
			}
		}
		s += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
		flags = REG_NOTBOL;
	}
	regfree(&re);
	return 0;
nomem:
	seterr(err, errlen, "credential %s: out of memory", c->name);
	return -1;
}

/* Copies the policy credential into c (strings and hosts). 0 or -1. */
static int cred_copy(struct tcred *c, const struct policy_cred *pc)
{
	c->kind = pc->kind;
	c->inject_in = pc->inject_in;
	c->name = strdup(pc->name);
	if (c->name == NULL)
		return -1;
	if (pc->kind == CRED_FILE) {
		c->path = strdup(pc->path != NULL ? pc->path : pc->name);
		if (c->path == NULL)
			return -1;
	}
	if (pc->n_inject_hosts != 0) {
		c->hosts = calloc(pc->n_inject_hosts, sizeof(*c->hosts));
		if (c->hosts == NULL)
			return -1;
		memcpy(c->hosts, pc->inject_hosts, pc->n_inject_hosts * sizeof(*c->hosts));
		c->nhosts = pc->n_inject_hosts;
	}
	return 0;
}

/* Releases what cred_copy() and the readers allocated (the content is
 * in the arena). */
static void cred_release(struct tcred *c)
{
	free(c->name);
	free(c->path);
	free(c->hosts);
	free(c->vals);
	free(c->spans);
	free(c->copy);
}

/*
 * Draws the sentinel of every value: never equal to any real value or to
 * another sentinel (redrawn), refused when too short. 0 or -1 + message.
 */
static int make_sentinels(mask_table_t *t, char *err, size_t errlen)
{
	for (size_t i = 0; i < t->nvalues; i++) {
		struct tvalue *v = &t->value[i];
		const char *who = t->cred[v->cred].name;
		bool clash;
		unsigned tries = 0;

		/* The substituter bounds its patterns; a whole file that big
		 * is not a token anyway. */
		if (v->len > MASK_PATTERN_MAX_BYTES) {
			seterr(err, errlen,
			       "credential %s: a secret of %zu bytes is longer than %d; use extract",
			       who, v->len, MASK_PATTERN_MAX_BYTES);
			return -1;
		}
		v->sent = mask_secrets_alloc(t->sec, v->len + 1);
		if (v->sent == NULL) {
			seterr(err, errlen, "credential %s: cannot allocate locked memory: %s", who,
			       strerror(errno));
			return -1;
		}
		do {
			enum mask_sentinel_result r = mask_sentinel_make(v->real, v->len, v->sent);
			if (r != MASK_SENTINEL_OK) {
				seterr(err, errlen, "credential %s: %s", who, mask_sentinel_strerror(r));
				return -1;
			}
			clash = false;
			for (size_t j = 0; j < t->nvalues && !clash; j++) {
				const struct tvalue *w = &t->value[j];
				if (w->len != v->len)
					continue;
				clash = memcmp(w->real, v->sent, v->len) == 0 ||
					(j < i && memcmp(w->sent, v->sent, v->len) == 0);
			}
		} while (clash && ++tries < 8);
		if (clash) {
			seterr(err, errlen, "credential %s: could not draw a distinct sentinel", who);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sets                                                                 */
/* ------------------------------------------------------------------ */

/* Forms appended to outbound sets: all of them, or the raw values only
 * when all would pass the set's pair limit. */
static size_t set_forms(const mask_table_t *t)
{
	if (t->nvalues + t->nform <= MASK_SET_MAX_PAIRS)
		return t->nform;
	return t->nvalues * 2 <= MASK_SET_MAX_PAIRS ? t->nvalues : 0;
}

/* Builds a set over every value; direction: 0 sent->sent, 1 real->sent,
 * or per-value inject flags (sent->real where set). Outbound sets (not
 * inbound) get the real-value forms after the values (set_forms()). */
static mask_set_t *build_set(mask_table_t *t, const unsigned char *inject, bool inbound,
			     unsigned flags)
{
	struct mask_pair *pairs = NULL;
	enum mask_set_result res;
	mask_set_t *set;

	size_t nforms = inbound ? 0 : set_forms(t);

	if (t->nvalues != 0) {
		pairs = calloc(t->nvalues + nforms, sizeof(*pairs));
		if (pairs == NULL) {
			t->set_res = MASK_SET_ERR_NOMEM;
			return NULL;
		}
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
	set = mask_set_new_pct(pairs, t->nvalues + nforms,
			       (flags & MASK_SET_PERCENT) != 0 ? 0 : t->nvalues,
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
	t->set_hygiene &= mask_set_hygiene(set);
	return set;
}

/* Values longer than this get no base64 forms in the remask set (a whole
 * file used as a secret would make the set too big for nothing). */
#define B64_FORM_MAX_VALUE 4096

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

/*
 * The remask set (SPEC §4.3): pair i = value i, real -> sentinel, then the
 * JSON-escaped form of each value when it differs ('/' as "\/", '"' and
 * '\\' escaped), then its base64 forms (three alignments, in the middle
 * of the data or ending it with its padding, standard and URL-safe
 * alphabets) -> the same forms of its sentinel, so an upstream that
 * echoes `Authorization: Basic base64(user:REAL)` or any base64 of a real
 * value does not hand the sandbox the value one decode away. Percent
 * forms of everything (MASK_SET_PERCENT). The forms live in the secret
 * arena.
 */
static mask_set_t *build_inbound(mask_table_t *t)
{
	enum mask_set_result res;
	mask_set_t *set;

	if (build_forms(t) != 0)
		return NULL;
	set = mask_set_new(t->form, t->nform, MASK_SET_PERCENT, &res);
	if (set == NULL) {
		t->set_res = res;
		return NULL;
	}
	t->set_hygiene &= mask_set_hygiene(set);
	return set;
}

/* The pairs of the remask set (build_inbound()) into t->form, with the
 * value of each in t->form_value. 0, or -1 (ENOMEM, t->set_res set). */
static int build_forms(mask_table_t *t)
{
	struct mask_pair *pairs;
	unsigned char *scratch = NULL;
	size_t np = 0, i, maxlen = 0;
	uint32_t *fv;

	for (i = 0; i < t->nvalues; i++)
		if (t->value[i].len <= B64_FORM_MAX_VALUE && t->value[i].len > maxlen)
			maxlen = t->value[i].len;
	pairs = calloc(t->nvalues * 14 + 1, sizeof(*pairs));
	fv = calloc(t->nvalues * 14 + 1, sizeof(*fv));
	if (pairs == NULL || fv == NULL ||
	    (maxlen > 0 && (scratch = mask_secrets_alloc(t->sec, maxlen + 2)) == NULL)) {
		free(pairs);
		free(fv);
		t->set_res = MASK_SET_ERR_NOMEM;
		return -1;
	}
	for (i = 0; i < t->nvalues; i++) {
		fv[np] = (uint32_t)i;
		pairs[np].from = t->value[i].real;
		pairs[np].to = t->value[i].sent;
		pairs[np].from_len = pairs[np].to_len = t->value[i].len;
		np++;
	}
	for (i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];
		size_t extra = 0, k2;

		for (k2 = 0; k2 < v->len; k2++)
			extra += v->real[k2] == '/' || v->real[k2] == '"' || v->real[k2] == '\\';
		if (extra == 0 || v->len > B64_FORM_MAX_VALUE)
			continue;
		{
			char *rj = mask_secrets_alloc(t->sec, v->len + extra);
			char *sj = mask_secrets_alloc(t->sec, v->len + extra);
			size_t o = 0;

			if (rj == NULL || sj == NULL) {
				free(pairs);
				free(fv);
				t->set_res = MASK_SET_ERR_NOMEM;
				return -1;
			}
			/* Sentinels keep punctuation: the escapes fall at the
			 * same places in both. */
			for (k2 = 0; k2 < v->len; k2++) {
				char r = v->real[k2];

				if (r == '/' || r == '"' || r == '\\') {
					rj[o] = sj[o] = '\\';
					o++;
				}
				rj[o] = r;
				sj[o] = v->sent[k2];
				o++;
			}
			fv[np] = (uint32_t)i;
			pairs[np].from = rj;
			pairs[np].to = sj;
			pairs[np].from_len = pairs[np].to_len = o;
			np++;
		}
	}
	for (i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];
		const char *stdf[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
		size_t stdn[6] = {0, 0, 0, 0, 0, 0};

		if (v->len > B64_FORM_MAX_VALUE)
			continue;
		for (unsigned k = 0; k < 12; k++) {
			char *rf = mask_secrets_alloc(t->sec, v->len / 3 * 4 + 8);
			char *sf = mask_secrets_alloc(t->sec, v->len / 3 * 4 + 8);
			size_t rn, sn;

			if (rf == NULL || sf == NULL) {
				free(pairs);
				free(fv);
				t->set_res = MASK_SET_ERR_NOMEM;
				return -1;
			}
			/* k % 3: alignment; k / 3 % 2: ends the data; k >= 6:
			 * URL-safe alphabet. */
			rn = b64_form(v->real, v->len, k % 3, k >= 6, k / 3 % 2 == 1, scratch, rf);
			sn = b64_form(v->sent, v->len, k % 3, k >= 6, k / 3 % 2 == 1, scratch, sf);
			/* Too short to tell anything, or (URL-safe alphabet
			 * with neither '+' nor '/') the same as a standard one. */
			if (rn < 8 || rn != sn ||
			    (k >= 6 && stdn[k - 6] == rn && memcmp(rf, stdf[k - 6], rn) == 0))
				continue;
			if (k < 6) {
				stdf[k] = rf;
				stdn[k] = rn;
			}
			fv[np] = (uint32_t)i;
			pairs[np].from = rf;
			pairs[np].to = sf;
			pairs[np].from_len = pairs[np].to_len = rn;
			np++;
		}
	}
	/* The pairs point into the arena; the list is kept for the
	 * outbound sets built later. */
	t->form = pairs;
	t->form_value = fv;
	t->nform = np;
	return 0;
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

int mask_table_outbound(mask_table_t *t, const char *host, uint16_t port, bool tls_verified,
			unsigned where, struct mask_outbound *out)
{
	char norm[POLICY_HOST_MAX + 1];
	bool ok = policy_host_normalize(host, strlen(host), norm, sizeof(norm)) == NULL;
	bool percent = where == INJECT_QUERY;
	struct tcache *e;

	memset(t->tmpkey, 0, t->nwords * sizeof(uint64_t));
	for (size_t c = 0; ok && c < t->ncreds; c++)
		if (cred_eligible(t, &t->cred[c], norm, port, tls_verified, where))
			t->tmpkey[c / 64] |= (uint64_t)1 << (c % 64);
	for (size_t i = 0; i < t->ncache; i++) {
		e = &t->cache[i];
		if (e->percent == percent &&
		    memcmp(e->key, t->tmpkey, t->nwords * sizeof(uint64_t)) == 0) {
			outbound_fill(t, e, out);
			return 0;
		}
	}
	e = cache_add(t, percent);
	if (e == NULL)
		return -1;
	outbound_fill(t, e, out);
	return 0;
}

/*
 * Builds the sets that do not depend on the request, and warms the
 * outbound cache for every exact inject host and IP literal, so a proxy
 * whose credentials name their hosts never builds a set per request.
 */
static int build_static_sets(mask_table_t *t)
{
	static const unsigned wheres[] = { INJECT_HEADER, INJECT_QUERY, INJECT_BODY };
	struct mask_outbound ob;

	t->inbound = build_inbound(t);
	if (t->inbound == NULL)
		return -1;
	t->detect = build_set(t, NULL, false, MASK_SET_PERCENT);
	if (t->detect == NULL)
		return -1;
	t->detect_counts = calloc(mask_set_npairs(t->detect) + 1, sizeof(uint64_t));
	if (t->detect_counts == NULL) {
		t->set_res = MASK_SET_ERR_NOMEM;
		return -1;
	}
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

/* ------------------------------------------------------------------ */
/* Construction and teardown                                            */
/* ------------------------------------------------------------------ */

mask_table_t *mask_table_new(const policy_t *p, char *err, size_t errlen)
{
	size_t n = policy_cred_count(p);
	mask_table_t *t = calloc(1, sizeof(*t));

	if (t == NULL)
		goto fail_nomem;
	t->set_hygiene = MASK_HYG_LOCKED | MASK_HYG_DONTDUMP | MASK_HYG_WIPEONFORK;
	t->plaintext_ok = policy_allow_plaintext_inject(p);
	t->sec = mask_secrets_new();
	t->cred = calloc(n + 1, sizeof(*t->cred));
	if (t->sec == NULL || t->cred == NULL)
		goto fail_nomem;
	for (size_t i = 0; i < n; i++) {
		const struct policy_cred *pc = policy_cred(p, i);
		struct tcred *c = &t->cred[t->ncreds];
		uint32_t ci = (uint32_t)t->ncreds;

		if (pc->mode != CRED_MASK || pc->name == NULL)
			continue;
		if (cred_copy(c, pc) != 0) {
			cred_release(c);
			memset(c, 0, sizeof(*c));
			goto fail_nomem;
		}
		t->ncreds++; /* from here on freed with the table */
		if (pc->kind == CRED_ENV) {
			const char *v = getenv(pc->name);
			long vi;
			if (v == NULL) {
				/* Unset: the sandbox does not see it either. */
				cred_release(c);
				memset(c, 0, sizeof(*c));
				t->ncreds--;
				continue;
			}
			vi = value_intern(t, v, strlen(v), ci);
			if (vi < 0 || cred_add_value(c, (uint32_t)vi, 0, 0) != 0)
				goto fail_nomem;
		} else {
			int r = read_file_secret(t, c);
			if (r == 1) {
				cred_release(c);
				memset(c, 0, sizeof(*c));
				t->ncreds--;
				continue;
			}
			if (r != 0) {
				seterr(err, errlen, "credential %s: cannot read it: %s", c->name,
				       strerror(errno));
				goto fail;
			}
			if (file_values(t, c, ci, pc->extract, err, errlen) != 0)
				goto fail;
		}
	}
	t->nwords = t->ncreds / 64 + 1;
	t->tmpkey = calloc(t->nwords, sizeof(uint64_t));
	if (t->tmpkey == NULL)
		goto fail_nomem;
	if (make_sentinels(t, err, errlen) != 0)
		goto fail;
	if (build_static_sets(t) != 0) {
		seterr(err, errlen, "cannot build the masking sets: %s",
		       mask_set_strerror(t->set_res));
		goto fail;
	}
	return t;

fail_nomem:
	seterr(err, errlen, "credentials: out of memory");
fail:
	mask_table_free(t);
	return NULL;
}

void mask_table_free(mask_table_t *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->ncache; i++) {
		mask_set_free(t->cache[i].set);
		free(t->cache[i].key);
		free(t->cache[i].inject);
		free(t->cache[i].cred);
	}
	free(t->cache);
	mask_set_free(t->inbound);
	mask_set_free(t->detect);
	free(t->form);
	free(t->form_value);
	for (size_t i = 0; i < t->ncreds; i++)
		cred_release(&t->cred[i]);
	free(t->cred);
	/* Values point into the arena, wiped and unmapped here. */
	free(t->value);
	mask_secrets_free(t->sec);
	free(t->tmpkey);
	free(t->detect_counts);
	if (t->scratch != NULL)
		explicit_bzero(t->scratch, t->scratch_cap);
	free(t->scratch);
	free(t);
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */
/* ------------------------------------------------------------------ */

unsigned mask_table_hygiene(const mask_table_t *t)
{
	return mask_secrets_hygiene(t->sec) & t->set_hygiene;
}

size_t mask_table_cred_count(const mask_table_t *t)
{
	return t->ncreds;
}

const char *mask_table_cred_name(const mask_table_t *t, size_t cred)
{
	return cred < t->ncreds ? t->cred[cred].name : NULL;
}

size_t mask_table_value_count(const mask_table_t *t)
{
	return t->nvalues;
}

size_t mask_table_value_cred(const mask_table_t *t, size_t value)
{
	return value < t->nvalues ? t->value[value].cred : 0;
}

const mask_set_t *mask_table_inbound_set(const mask_table_t *t)
{
	return t->inbound;
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

/* The value of a hex digit (either case), or -1. Pure. */
static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copies buf into t->scratch, every %XX decoded when decode; returns the
 * copy's length, or -1 (ENOMEM). */
static long scratch_fill(mask_table_t *t, const unsigned char *buf, size_t len, bool decode)
{
	size_t o = 0;

	if (scratch_reserve(t, len) != 0)
		return -1;
	if (!decode) {
		memcpy(t->scratch, buf, len);
		return (long)len;
	}
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (buf[i] == '%' && i + 2 < len && (hi = hexval(buf[i + 1])) >= 0 &&
		    (lo = hexval(buf[i + 2])) >= 0) {
			t->scratch[o++] = (unsigned char)(hi << 4 | lo);
			i += 2;
			continue;
		}
		t->scratch[o++] = buf[i];
	}
	return (long)o;
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

/* The credential of the first real-value form counted by the last
 * scratch_detect(), or -1. */
static long detected_real(const mask_table_t *t)
{
	size_t nf = mask_set_npairs(t->detect) - t->nvalues;

	for (size_t k = 0; k < nf; k++)
		if (t->detect_counts[t->nvalues + k] != 0)
			return (long)t->value[t->form_value[k]].cred;
	return -1;
}

long mask_table_find_real(mask_table_t *t, const void *buf, size_t len)
{
	long n, found;

	if (t->nvalues == 0 || len == 0)
		return -1;
	/* As it is (raw, and the percent forms an encoder writes), then,
	 * when it has a '%', with every %XX decoded (%67hp_ for ghp_). */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && memchr(buf, '%', len) == NULL)
			break;
		if ((n = scratch_fill(t, buf, len, pass == 1)) < 0 || scratch_detect(t, (size_t)n) != 0)
			return -1;
		if ((found = detected_real(t)) >= 0)
			return found;
	}
	return -1;
}

int mask_table_sentinels_decoded(mask_table_t *t, const void *buf, size_t len, uint64_t *counts)
{
	long n;

	if (t->nvalues == 0 || len == 0 || memchr(buf, '%', len) == NULL)
		return 0;
	if ((n = scratch_fill(t, buf, len, true)) < 0 || scratch_detect(t, (size_t)n) != 0)
		return -1;
	for (size_t v = 0; v < t->nvalues; v++)
		counts[v] += t->detect_counts[v];
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

/* ------------------------------------------------------------------ */
/* Sandbox-facing outputs                                               */
/* ------------------------------------------------------------------ */

int mask_table_env_lines(const mask_table_t *t, FILE *out)
{
	for (size_t c = 0; c < t->ncreds; c++) {
		const struct tcred *cr = &t->cred[c];
		const struct tvalue *v;
		if (cr->kind != CRED_ENV || cr->nvals == 0)
			continue;
		v = &t->value[cr->vals[0]];
		/* The policy loader only accepts [A-Za-z_][A-Za-z0-9_]* names. */
		if (fprintf(out, "export %s='", cr->name) < 0)
			return -1;
		/* Inside single quotes only the quote itself needs care:
		 * close, an escaped quote, reopen. A sentinel has no NUL. */
		for (size_t i = 0; i < v->len; i++) {
			int r = v->sent[i] == '\'' ? fputs("'\\''", out) : putc(v->sent[i], out);
			if (r == EOF)
				return -1;
		}
		if (fputs("'\n", out) == EOF)
			return -1;
	}
	return 0;
}

size_t mask_table_scrub_environ(const mask_table_t *t)
{
	size_t n = 0;

	for (size_t c = 0; c < t->ncreds; c++) {
		const struct tcred *cr = &t->cred[c];
		const struct tvalue *v;
		char *e;

		if (cr->kind != CRED_ENV || cr->nvals == 0)
			continue;
		v = &t->value[cr->vals[0]];
		e = getenv(cr->name);
		/* Changed since the table was built: not ours to touch. */
		if (e == NULL || strlen(e) != v->len || memcmp(e, v->real, v->len) != 0)
			continue;
		/* getenv() points into the environment block itself (the
		 * initial stack area, or setenv's copy), so this rewrites
		 * the variable for this process and every later child. */
		memcpy(e, v->sent, v->len);
		n++;
	}
	return n;
}

/* Writes len bytes fully; 0 or -1 with errno. */
static int write_all(int fd, const void *p, size_t len)
{
	const char *b = p;

	while (len > 0) {
		ssize_t n = write(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the sentinel copy of file credential c to fd. 0 or -1. */
static int write_copy(const mask_table_t *t, const struct tcred *c, int fd)
{
	size_t pos = 0;

	for (size_t k = 0; k < c->nvals; k++) {
		const struct tspan *sp = &c->spans[k];
		if (write_all(fd, c->content + pos, sp->off - pos) != 0 ||
		    write_all(fd, t->value[sp->value].sent, sp->len) != 0)
			return -1;
		pos = sp->off + sp->len;
	}
	return write_all(fd, c->content + pos, c->content_len - pos);
}

int mask_table_write_files(mask_table_t *t, const char *dir, char *err, size_t errlen)
{
	for (size_t c = 0; c < t->ncreds; c++) {
		struct tcred *cr = &t->cred[c];
		const char *base;
		char *path;
		int fd;

		if (cr->kind != CRED_FILE)
			continue;
		base = strrchr(cr->path, '/');
		base = base != NULL ? base + 1 : cr->path;
		if (asprintf(&path, "%s/%zu-%s", dir, c, base) < 0) {
			seterr(err, errlen, "credential %s: out of memory", cr->name);
			return -1;
		}
		/* Replace, never follow: whatever sits at that name (a stale
		 * copy, a planted symlink) goes, and the new file is ours. */
		if (unlink(path) != 0 && errno != ENOENT)
			goto fail_path;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			goto fail_path;
		if (fchmod(fd, 0600) != 0 || write_copy(t, cr, fd) != 0) {
			int saved = errno;
			(void)close(fd);
			(void)unlink(path);
			errno = saved;
			goto fail_path;
		}
		if (close(fd) != 0) {
			(void)unlink(path);
			goto fail_path;
		}
		free(cr->copy);
		cr->copy = path;
		continue;
fail_path:
		seterr(err, errlen, "credential %s: cannot write its sentinel copy %s: %s", cr->name,
		       path, strerror(errno));
		free(path);
		return -1;
	}
	return 0;
}

size_t mask_table_file_count(const mask_table_t *t)
{
	size_t n = 0;

	for (size_t c = 0; c < t->ncreds; c++)
		n += t->cred[c].kind == CRED_FILE;
	return n;
}

const char *mask_table_file_copy(const mask_table_t *t, size_t i, const char **copy)
{
	for (size_t c = 0; c < t->ncreds; c++) {
		if (t->cred[c].kind != CRED_FILE)
			continue;
		if (i-- == 0) {
			*copy = t->cred[c].copy;
			return t->cred[c].path;
		}
	}
	*copy = NULL;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Authorization: Basic                                                 */
/* ------------------------------------------------------------------ */

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value of a base64 digit, or -1. */
static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long mask_b64_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	size_t n = 0;

	if (len % 4 != 0 || len / 4 * 3 > outcap)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int d[4];
		size_t pad = 0;
		for (size_t k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)in[i + k];
			/* '=' only in the last quad, only as its last one or
			 * two digits. */
			if (c == '=' && i + 4 == len && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				d[k] = 0;
				pad++;
				continue;
			}
			d[k] = b64_val(c);
			if (d[k] < 0)
				return -1;
		}
		out[n++] = (unsigned char)(d[0] << 2 | d[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)((d[1] & 15) << 4 | d[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)((d[2] & 3) << 6 | d[3]);
	}
	return (long)n;
}

long mask_b64_encode(const unsigned char *in, size_t len, char *out, size_t outcap)
{
	size_t n = 0;

	if ((len + 2) / 3 * 4 > outcap)
		return -1;
	for (size_t i = 0; i < len; i += 3) {
		unsigned b0 = in[i], b1 = i + 1 < len ? in[i + 1] : 0, b2 = i + 2 < len ? in[i + 2] : 0;
		out[n++] = b64_alphabet[b0 >> 2];
		out[n++] = b64_alphabet[(b0 & 3) << 4 | b1 >> 4];
		out[n++] = i + 1 < len ? b64_alphabet[(b1 & 15) << 2 | b2 >> 6] : '=';
		out[n++] = i + 2 < len ? b64_alphabet[b2 & 63] : '=';
	}
	return (long)n;
}

int mask_basic_replace(const mask_set_t *set, char *b64, size_t len, uint64_t *counts, size_t *total)
{
	unsigned char stackbuf[BASIC_STACK_BYTES];
	unsigned char *dec = stackbuf;
	size_t cap = len / 4 * 3, n_total = 0;
	long n;
	int rc = 0;

	if (total != NULL)
		*total = 0;
	if (len == 0 || len % 4 != 0)
		return 1;
	if (cap > sizeof(stackbuf)) {
		dec = malloc(cap);
		if (dec == NULL)
			return -1;
	}
	n = mask_b64_decode(b64, len, dec, cap);
	if (n < 0) {
		rc = 1;
		goto out;
	}
	if (mask_replace_inplace(set, dec, (size_t)n, counts, &n_total) != 0) {
		rc = -1;
		goto out;
	}
	/* Equal-length pairs keep the decoded length, so the encoding has
	 * the same length as before and fits where it was. */
	if (n_total != 0 && mask_b64_encode(dec, (size_t)n, b64, len) != (long)len) {
		errno = EINVAL;
		rc = -1;
		goto out;
	}
	if (total != NULL)
		*total = n_total;
out:
	/* The decoded form holds the user:password, maybe the real value. */
	explicit_bzero(dec, cap);
	if (dec != stackbuf)
		free(dec);
	return rc;
}

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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tablepriv.h"
#include "base/errbuf.h"
#include "base/fileio.h"
#include "base/hex.h"

/* Largest masked file read (the policy loader has the same cap). */
#define MASK_FILE_MAX_BYTES (1024 * 1024)
/* Most extract matches taken from one file (as the policy loader). */
#define MASK_EXTRACT_MAX 1024



/* ------------------------------------------------------------------ */
/* Reading the sources                                                  */
/* ------------------------------------------------------------------ */

/*
 * Where the findings of a load go. mask_table_check() (fn set) reports
 * every finding of the checks the policy loader made before issue 14,
 * with its wording, and goes on; mask_table_new() (fn NULL) ignores the
 * warnings and stops at its first error, in err.
 */
struct load {
	mask_diag_fn *fn; /* check mode when not NULL */
	void *arg;
	size_t pcred;     /* policy index of the credential being read */
	unsigned nerr;    /* errors reported through fn */
	char *err;        /* mask_table_new(): the first error */
	size_t errlen;
};

/* Reports one finding (check mode only). Never given a value's bytes. */
static void finding(struct load *ld, bool error, const char *fmt, ...) PRINTF(3, 4);
static void finding(struct load *ld, bool error, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (ld->fn == NULL)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ld->fn(ld->arg, ld->pcred, error, msg);
	ld->nerr += error;
}

/* Out of memory while reading credential name: -1 with a message. */
static int load_nomem(struct load *ld, const char *name)
{
	finding(ld, true, "credential %s: out of memory", name);
	errbuf_set(ld->err, ld->errlen, "credential %s: out of memory", name);
	return -1;
}

/*
 * Check mode: refuses a value with too few random bits for a sentinel
 * (SPEC §3.2, §4.1), `what` saying which ("the value is"). Never prints
 * the value. mask_table_new() refuses the same values when it draws the
 * sentinels (make_sentinels()).
 */
static void check_bits(struct load *ld, const char *name, const char *v, size_t n, const char *what)
{
	unsigned bits;

	if (ld->fn == NULL)
		return;
	bits = policy_sentinel_bits(v, n);
	if (bits < POLICY_MIN_SENTINEL_BITS)
		finding(ld, true,
			"credential %s: %s too short to mask (%u random bits in a sentinel), "
			"expected at least %d; use mode: deny",
			name, what, bits, POLICY_MIN_SENTINEL_BITS);
}

/*
 * Returns the index of the value equal to real[0..len), adding it (copied
 * into the arena, no sentinel yet) when new. -1 with errno on ENOMEM.
 */
static long value_intern(mask_table_t *t, const char *real, size_t len, uint32_t cred,
			 const char *dname)
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
	v->dname = strdup(dname);
	if (v->dname == NULL)
		return -1;
	memcpy(v->real, real, len);
	v->sent = NULL;
	v->small = false;
	v->wide = false;
	v->nowide = false;
	v->url_raw = false;
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
 * Reads the regular file at c->path into the arena (NUL-terminated);
 * *mode gets its st_mode. Returns 0, 1 when it does not exist (skipped),
 * or -1 with errno (EINVAL: not a regular file; EFBIG: over the cap).
 */
static int read_file_secret(mask_table_t *t, struct tcred *c, unsigned *mode)
{
	struct stat st;
	ssize_t n;
	int fd, saved;

	fd = fileio_open_regular(c->path, 0, &st);
	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	if (st.st_size > MASK_FILE_MAX_BYTES) {
		(void)close(fd);
		errno = EFBIG;
		return -1;
	}
	*mode = (unsigned)st.st_mode;
	/* Read straight into locked memory: the content never sits in an
	 * unlocked heap buffer. A file that grows meanwhile is cut at the
	 * size fstat saw. */
	c->content = mask_secrets_alloc(t->sec, (size_t)st.st_size + 1);
	n = c->content != NULL ? fileio_read_full(fd, c->content, (size_t)st.st_size) : -1;
	saved = errno;
	(void)close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	c->content_len = (size_t)n;
	return 0;
}

/*
 * Splits a file credential's content into secrets: the whole content, or
 * group 1 of each extract match (scanned like the policy loader: from the
 * end of each match, one byte on when it is empty, REG_NOTBOL after the
 * first, up to the first NUL), each checked (check_bits()). Returns 0 or
 * -1 with a message.
 */
static int file_values(mask_table_t *t, struct tcred *c, uint32_t ci, const char *extract,
		       struct load *ld)
{
	regex_t re;
	regmatch_t m[2];
	const char *s = c->content;
	unsigned found = 0;
	int flags = 0;
	long vi;

	char dname[PATH_MAX + 32];

	if (extract == NULL) {
		/* The whole content without the white space around it: a
		 * token file ends in a newline that no client sends (they
		 * read it with $(cat), strip() or trim()), so "REAL\n" as
		 * the value would never be injected nor re-masked when
		 * echoed without it. The white space stays in the sandbox's
		 * copy, byte for byte, as the rest of a file does with
		 * extract. */
		size_t lo = 0, hi = c->content_len;

		while (lo < hi && isspace((unsigned char)c->content[lo]))
			lo++;
		while (hi > lo && isspace((unsigned char)c->content[hi - 1]))
			hi--;
		check_bits(ld, c->name, c->content + lo, hi - lo, "the file content is");
		(void)snprintf(dname, sizeof(dname), "file:%s", c->canon);
		vi = value_intern(t, c->content + lo, hi - lo, ci, dname);
		if (vi < 0 || cred_add_value(c, (uint32_t)vi, lo, hi - lo) != 0)
			return load_nomem(ld, c->name);
		return 0;
	}
	if (regcomp(&re, extract, REG_EXTENDED) != 0) {
		/* `check`: the loader already reported it. */
		if (ld->fn != NULL)
			return 0;
		errbuf_set(ld->err, ld->errlen, "credential %s: extract does not compile", c->name);
		return -1;
	}
	while (*s != '\0' && found < MASK_EXTRACT_MAX && regexec(&re, s, 2, m, flags) == 0) {
		if (m[1].rm_so >= 0) {
			size_t off = (size_t)(s - c->content) + (size_t)m[1].rm_so;
			size_t len = (size_t)(m[1].rm_eo - m[1].rm_so);
			(void)snprintf(dname, sizeof(dname), "file:%s#%u", c->canon, found);
			found++;
			check_bits(ld, c->name, c->content + off, len, "a value extracted (group 1) is");
			vi = value_intern(t, c->content + off, len, ci, dname);
			if (vi < 0 || cred_add_value(c, (uint32_t)vi, off, len) != 0) {
				regfree(&re);
				return load_nomem(ld, c->name);
			}
		}
		s += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
		flags = REG_NOTBOL;
	}
	regfree(&re);
	if (found == 0)
		finding(ld, false,
			"credential %s: extract matches nothing in the file now, so nothing would be "
			"masked",
			c->name);
	return 0;
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
		/* The stable sentinel's name: the file's canonical path, so
		 * another spelling of it in the policy keeps the sentinel. */
		c->canon = realpath(c->path, NULL);
		if (c->canon == NULL && (c->canon = strdup(c->path)) == NULL)
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
	free(c->canon);
	free(c->hosts);
	free(c->vals);
	free(c->spans);
	free(c->copy);
}

/*
 * Draws the sentinel of every value (derived from key under the value's
 * name when key is not NULL, from the CSPRNG otherwise): never equal to
 * any real value or to another sentinel (redrawn: the next attempt),
 * refused when too short. 0 or -1 + message.
 */
static int make_sentinels(mask_table_t *t, const unsigned char *key, char *err, size_t errlen)
{
	for (size_t i = 0; i < t->nvalues; i++) {
		struct tvalue *v = &t->value[i];
		const char *who = t->cred[v->cred].name;
		bool clash;
		unsigned tries = 0;

		/* The substituter bounds its patterns; a whole file that big
		 * is not a token anyway. */
		if (v->len > MASK_PATTERN_MAX_BYTES) {
			errbuf_set(err, errlen,
			       "credential %s: a secret of %zu bytes is longer than %d; use extract",
			       who, v->len, MASK_PATTERN_MAX_BYTES);
			return -1;
		}
		v->sent = mask_secrets_alloc(t->sec, v->len + 1);
		if (v->sent == NULL) {
			errbuf_set(err, errlen, "credential %s: cannot allocate locked memory: %s", who,
			       strerror(errno));
			return -1;
		}
		do {
			enum mask_sentinel_result r =
				key != NULL ? mask_sentinel_derive(key, v->dname, v->real, v->len, tries,
								   v->sent)
					    : mask_sentinel_make(v->real, v->len, v->sent);
			if (r != MASK_SENTINEL_OK) {
				errbuf_set(err, errlen, "credential %s: %s", who, mask_sentinel_strerror(r));
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
			errbuf_set(err, errlen, "credential %s: could not draw a distinct sentinel", who);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Construction and teardown                                            */
/* ------------------------------------------------------------------ */

/* A masked variable from this process's environment. 0 (kept), 1
 * (unset: skipped) or -1 (ENOMEM, message). */
static int cred_load_env(mask_table_t *t, struct tcred *c, uint32_t ci, struct load *ld)
{
	const char *v = getenv(c->name);
	long vi;

	if (v == NULL) {
		/* Nothing to leak: the sandbox does not see it either. */
		finding(ld, false,
			"credential %s is not set in this environment; its length could not be checked",
			c->name);
		return 1;
	}
	char dname[1024];

	check_bits(ld, c->name, v, strlen(v), "the value is");
	(void)snprintf(dname, sizeof(dname), "env:%s", c->name);
	vi = value_intern(t, v, strlen(v), ci, dname);
	if (vi < 0 || cred_add_value(c, (uint32_t)vi, 0, 0) != 0)
		return load_nomem(ld, c->name);
	return 0;
}

/* A masked file, whole or through extract. 0 (kept), 1 (skipped: missing;
 * in check mode also unreadable, reported) or -1 (message). */
static int cred_load_file(mask_table_t *t, struct tcred *c, uint32_t ci, const char *extract,
			  struct load *ld)
{
	unsigned mode = 0;
	int r = read_file_secret(t, c, &mode);

	if (r == 1) {
		finding(ld, false, "credential %s does not exist; its length could not be checked",
			c->name);
		return 1;
	}
	if (r != 0 && ld->fn != NULL) {
		finding(ld, true,
			"credential %s cannot be read (%s), expected a readable regular file of at "
			"most %d bytes",
			c->name, strerror(errno), MASK_FILE_MAX_BYTES);
		return 1;
	}
	if (r != 0) {
		errbuf_set(ld->err, ld->errlen, "credential %s: cannot read it: %s", c->name,
		       strerror(errno));
		return -1;
	}
	/* STYLE 11: a secret others can read is already exposed to them;
	 * say so (masking cannot help with that). */
	if (mode & (S_IRWXG | S_IRWXO))
		finding(ld, false, "credential %s is accessible to group or others (mode %03o); chmod 600 it",
			c->name, mode & 0777u);
	return file_values(t, c, ci, extract, ld);
}

static struct enc_cache *enc_cache_new(mask_secrets_t *sec);

/*
 * Reads every masked credential of p into a new table (values, no
 * sentinels or sets yet). NULL on a fatal error (message in ld): out of
 * memory, or in mask_table_new() mode an unreadable file or a bad
 * extract.
 */
static mask_table_t *table_read(const policy_t *p, struct load *ld)
{
	size_t n = policy_cred_count(p);
	mask_table_t *t = calloc(1, sizeof(*t));

	if (t == NULL)
		goto fail_nomem;
	t->set_hygiene = MASK_HYG_LOCKED | MASK_HYG_DONTDUMP | MASK_HYG_WIPEONFORK;
	t->plaintext_ok = policy_allow_plaintext_inject(p);
	t->sec = mask_secrets_new();
	t->cred = calloc(n + 1, sizeof(*t->cred));
	if (t->sec == NULL || t->cred == NULL ||
	    (t->enc = enc_cache_new(t->sec)) == NULL)
		goto fail_nomem;
	for (size_t i = 0; i < n; i++) {
		const struct policy_cred *pc = policy_cred(p, i);
		struct tcred *c = &t->cred[t->ncreds];
		uint32_t ci = (uint32_t)t->ncreds;
		int r;

		if (pc->mode != CRED_MASK || pc->name == NULL)
			continue;
		ld->pcred = i;
		if (cred_copy(c, pc) != 0) {
			cred_release(c);
			memset(c, 0, sizeof(*c));
			goto fail_nomem;
		}
		t->ncreds++; /* from here on freed with the table */
		r = pc->kind == CRED_ENV ? cred_load_env(t, c, ci, ld)
					 : cred_load_file(t, c, ci, pc->extract, ld);
		if (r < 0)
			goto fail;
		if (r == 1) {
			cred_release(c);
			memset(c, 0, sizeof(*c));
			t->ncreds--;
		}
	}
	return t;

fail_nomem:
	finding(ld, true, "credentials: out of memory");
	errbuf_set(ld->err, ld->errlen, "credentials: out of memory");
fail:
	mask_table_free(t);
	return NULL;
}

mask_table_t *mask_table_new(const policy_t *p, char *err, size_t errlen)
{
	return mask_table_new_stable(p, NULL, err, errlen);
}

/*
 * The stale sentinels of st->ledger (SPEC §4.1): for each value, every
 * sentinel recorded under its name that is not its sentinel now, nor
 * any current sentinel or real value, and that has a sentinel's entropy
 * (a short entry would refuse every request that holds it). Copied into
 * the arena. 0 or -1 (ENOMEM).
 */
static int find_stale(mask_table_t *t, const mask_ledger_t *lg)
{
	for (size_t i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];
		size_t n = mask_ledger_count(lg, v->dname);

		for (size_t k = 0; k < n; k++) {
			size_t len;
			const char *e = mask_ledger_get(lg, v->dname, k, &len);
			bool current = false;
			struct tstale *ns;
			uint32_t *nv;

			if (e == NULL || len == 0 || len > MASK_LEDGER_SENTINEL_MAX ||
			    policy_sentinel_bits(e, len) < POLICY_MIN_SENTINEL_BITS)
				continue;
			for (size_t j = 0; j < t->nvalues && !current; j++)
				current = t->value[j].len == len &&
					  (memcmp(t->value[j].sent, e, len) == 0 ||
					   memcmp(t->value[j].real, e, len) == 0);
			for (size_t j = 0; j < t->nstale && !current; j++)
				current = t->stale[j].len == len && memcmp(t->stale[j].s, e, len) == 0;
			if (current)
				continue;
			ns = realloc(t->stale, (t->nstale + 1) * sizeof(*ns));
			if (ns == NULL)
				return -1;
			t->stale = ns;
			nv = realloc(t->stale_value, (t->nstale + 1) * sizeof(*nv));
			if (nv == NULL)
				return -1;
			t->stale_value = nv;
			ns[t->nstale].s = mask_secrets_alloc(t->sec, len + 1);
			if (ns[t->nstale].s == NULL)
				return -1;
			memcpy(ns[t->nstale].s, e, len);
			ns[t->nstale].len = len;
			ns[t->nstale].value = (uint32_t)i;
			nv[t->nstale] = (uint32_t)i;
			t->nstale++;
		}
	}
	return 0;
}

mask_table_t *mask_table_new_stable(const policy_t *p, const struct mask_stable *st, char *err,
				    size_t errlen)
{
	struct load ld = {.err = err, .errlen = errlen};
	mask_table_t *t = table_read(p, &ld);

	if (t == NULL)
		return NULL;
	t->nwords = t->ncreds / 64 + 1;
	t->tmpkey = calloc(t->nwords, sizeof(uint64_t));
	if (t->tmpkey == NULL) {
		errbuf_set(err, errlen, "credentials: out of memory");
		goto fail;
	}
	t->stable = st != NULL;
	if (make_sentinels(t, st != NULL ? st->key : NULL, err, errlen) != 0)
		goto fail;
	if (st != NULL && st->ledger != NULL && find_stale(t, st->ledger) != 0) {
		errbuf_set(err, errlen, "credentials: out of memory");
		goto fail;
	}
	if (table_build_sets(t) != 0) {
		errbuf_set(err, errlen, "cannot build the masking sets: %s",
		       mask_set_strerror(t->set_res));
		goto fail;
	}
	return t;

fail:
	mask_table_free(t);
	return NULL;
}

unsigned mask_table_check(const policy_t *p, mask_diag_fn *fn, void *arg)
{
	struct load ld = {.fn = fn, .arg = arg};

	/* The values are read into a secret arena, checked, and wiped. */
	mask_table_free(table_read(p, &ld));
	return ld.nerr;
}

void mask_table_free(mask_table_t *t)
{
	if (t == NULL)
		return;
	table_free_sets(t);
	for (size_t i = 0; i < t->ncreds; i++)
		cred_release(&t->cred[i]);
	free(t->cred);
	/* Values point into the arena, wiped and unmapped here. */
	for (size_t i = 0; i < t->nvalues; i++)
		free(t->value[i].dname);
	free(t->value);
	free(t->stale);
	free(t->stale_value);
	mask_secrets_free(t->sec);
	free(t->tmpkey);
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

const char *mask_table_value_name(const mask_table_t *t, size_t value, const char **sentinel,
				  size_t *len)
{
	if (value >= t->nvalues) {
		*sentinel = NULL;
		*len = 0;
		return NULL;
	}
	*sentinel = t->value[value].sent;
	*len = t->value[value].len;
	return t->value[value].dname;
}

bool mask_table_stable(const mask_table_t *t)
{
	return t->stable;
}

bool mask_table_forms_small(const mask_table_t *t)
{
	return t->forms_small;
}

const char *mask_table_forms_small_cred(const mask_table_t *t, size_t k)
{
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].small && k-- == 0)
			return mask_table_cred_name(t, t->value[i].cred);
	return NULL;
}

size_t mask_table_stale_count(const mask_table_t *t)
{
	return t->nstale;
}

/* ------------------------------------------------------------------ */
/* Sandbox-facing outputs                                               */
/* ------------------------------------------------------------------ */

size_t mask_table_env_count(const mask_table_t *t)
{
	size_t n = 0;

	for (size_t c = 0; c < t->ncreds; c++)
		n += t->cred[c].kind == CRED_ENV && t->cred[c].nvals != 0;
	return n;
}

const char *mask_table_env_get(const mask_table_t *t, size_t i, const char **sentinel)
{
	for (size_t c = 0; c < t->ncreds; c++) {
		const struct tcred *cr = &t->cred[c];

		if (cr->kind != CRED_ENV || cr->nvals == 0)
			continue;
		if (i-- == 0) {
			/* Arena bytes: zeroed beyond len, so NUL-terminated. */
			*sentinel = t->value[cr->vals[0]].sent;
			return cr->name;
		}
	}
	*sentinel = NULL;
	return NULL;
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

/* Writes what out holds to fd and empties it; 0 or -1 with errno. */
static int drain_to(int fd, struct evbuffer *out)
{
	while (evbuffer_get_length(out) > 0) {
		struct evbuffer_iovec v;
		if (evbuffer_peek(out, -1, NULL, &v, 1) < 1)
			return -1;
		if (write_all(fd, v.iov_base, v.iov_len) != 0 || evbuffer_drain(out, v.iov_len) != 0)
			return -1;
	}
	return 0;
}

/* Writes the sentinel copy of file credential c to fd. 0 or -1 with errno.
 * The extracted values become their sentinels, and then the whole copy
 * goes through the re-masker (t->inbound, the set responses go through):
 * a real value written elsewhere in the file too (a URL's userinfo, its
 * base64 form, another key's value, another credential's value) is
 * replaced by the sentinel in the same form (round 32, b18). The stream
 * wipes what it holds back; out holds only re-masked bytes. */
static int write_copy(const mask_table_t *t, const struct tcred *c, int fd)
{
	mask_stream_t *st = mask_stream_new(t->inbound);
	struct evbuffer *out = evbuffer_new();
	size_t pos = 0;
	int rc = -1;

	if (st == NULL || out == NULL) {
		errno = ENOMEM;
		goto done;
	}
	for (size_t k = 0; k < c->nvals; k++) {
		const struct tspan *sp = &c->spans[k];
		if (mask_stream_feed(st, c->content + pos, sp->off - pos, out) != 0 ||
		    mask_stream_feed(st, t->value[sp->value].sent, sp->len, out) != 0 ||
		    drain_to(fd, out) != 0)
			goto done;
		pos = sp->off + sp->len;
	}
	if (mask_stream_feed(st, c->content + pos, c->content_len - pos, out) != 0 ||
	    mask_stream_finish(st, out) != 0 || drain_to(fd, out) != 0)
		goto done;
	rc = 0;
done:
	mask_stream_free(st);
	if (out != NULL)
		evbuffer_free(out);
	return rc;
}

/* Contract in mask.h. */
int mask_table_remask(const mask_table_t *t, const void *in, size_t len, char **out, size_t *outlen)
{
	mask_stream_t *st = NULL;
	struct evbuffer *b = NULL;
	unsigned char *flat;
	size_t n;
	int rc = -1;

	*out = NULL;
	*outlen = 0;
	if (t->nvalues == 0 || len == 0)
		return 0;
	st = mask_stream_new(t->inbound);
	b = evbuffer_new();
	if (st == NULL || b == NULL || mask_stream_feed(st, in, len, b) != 0 || mask_stream_finish(st, b) != 0) {
		errno = ENOMEM;
		goto done;
	}
	n = evbuffer_get_length(b);
	flat = n > 0 ? evbuffer_pullup(b, -1) : NULL;
	if (n > 0 && flat == NULL) {
		errno = ENOMEM;
		goto done;
	}
	if (n == len && memcmp(flat, in, len) == 0) {
		rc = 0;
		goto done;
	}
	*out = malloc(n + 1);
	if (*out == NULL)
		goto done;
	if (n > 0)
		memcpy(*out, flat, n);
	(*out)[n] = '\0';
	*outlen = n;
	rc = 1;
done:
	mask_stream_free(st);
	if (b != NULL)
		evbuffer_free(b);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Encoded forms of the real values (mask_table_encoded_real())          */
/* ------------------------------------------------------------------ */

#define ENC_MIN_VALUE 8
/* The value itself in another case only from this length: a short one
 * ("password") is a word other text holds. */
#define ENC_MIN_OTHER_CASE 16
/* The part of a value looked for, every ENC_STRIDE-th byte, and the most
 * parts of one value: a part of ENC_WINDOW + ENC_STRIDE - 1 bytes (12)
 * of a value of up to 59 is found (of a longer one, windows spread: a
 * part of 13 bytes of one of up to 106, ...). 12 bytes of a random token
 * carry 70 bits and more: ordinary text holds one by chance in no
 * measured case (docs/masking.md). Under 12, a window is a word or a
 * number other text holds (a value's 8 random characters are 48 bits:
 * one in 10^5 of 16 MB of text's positions per form; fix37m: the bound
 * was 14, a piece at no window's start passed). */
#define ENC_WINDOW 12
#define ENC_STRIDE 1
#define ENC_WINDOWS_MAX 48

/*
 * The needles of one search, collected once (enc_has() with a list) and
 * then looked for together in each text (enc_scan()): each text is read
 * once per case instead of once per needle (fix37m: the files searched
 * for encoded forms made memmem()'s pass per needle the start's cost).
 * Sorted by (ci, key), key the needle's first 8 bytes; a bitmap of their
 * hashes per case filters the positions. The bytes are the secret's
 * forms: blocks wiped before they are freed, never realloc'd.
 */
#define ENC_BLOCK 65536
#define ENC_BITS 16

struct enc_needle {
	uint64_t key;
	const unsigned char *p;
	size_t n;
	bool ci;
};

struct enc_block {
	struct enc_block *next;
	size_t used;
	unsigned char b[ENC_BLOCK];
};

struct enc_list {
	struct enc_needle *v;
	size_t n, cap;
	struct enc_block *blocks;
	uint64_t bits[2][(1u << ENC_BITS) / 64];
	bool failed;
};

/* The needles of a table, once (mask_table_encoded_real()): list[0]
 * for a text as it is, list[1] for the texts decoded from it; their
 * arrays and bytes in the table's arena. */
struct enc_cache {
	bool built;
	struct enc_list list[2];
};

/* An empty cache in the arena sec (zero), or NULL. */
static struct enc_cache *enc_cache_new(mask_secrets_t *sec)
{
	return mask_secrets_alloc(sec, sizeof(struct enc_cache));
}

/* A text searched: its bytes, and the same in lower case (ASCII); or,
 * with col, the list enc_has() adds its needles to. */
struct enc_hay {
	const unsigned char *h, *low;
	size_t n;
	struct enc_list *col;
};

static uint64_t enc_key(const unsigned char *p)
{
	uint64_t k;

	memcpy(&k, p, sizeof(k));
	return k;
}

static unsigned enc_hash(uint64_t k)
{
	return (unsigned)((k * 0x9e3779b97f4a7c15ull) >> (64 - ENC_BITS));
}

/* needle[0..nn) (already lower-cased when ci) into l; on ENOMEM l->failed. */
static void enc_collect(struct enc_list *l, const unsigned char *needle, size_t nn, bool ci)
{
	struct enc_needle *e;

	if (l->failed || nn == 0 || nn > ENC_BLOCK)
		return;
	if (l->blocks == NULL || ENC_BLOCK - l->blocks->used < nn) {
		struct enc_block *b = malloc(sizeof(*b));

		if (b == NULL) {
			l->failed = true;
			return;
		}
		b->used = 0;
		b->next = l->blocks;
		l->blocks = b;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap != 0 ? 2 * l->cap : 256;
		struct enc_needle *v = calloc(cap, sizeof(*v));

		if (v == NULL) {
			l->failed = true;
			return;
		}
		if (l->n > 0)
			memcpy(v, l->v, l->n * sizeof(*v));
		if (l->v != NULL)
			explicit_bzero(l->v, l->cap * sizeof(*l->v));
		free(l->v);
		l->v = v;
		l->cap = cap;
	}
	e = &l->v[l->n++];
	e->p = l->blocks->b + l->blocks->used;
	memcpy(l->blocks->b + l->blocks->used, needle, nn);
	l->blocks->used += nn;
	e->n = nn;
	e->ci = ci;
	e->key = 0;
	if (nn >= 8) {
		e->key = enc_key(e->p);
		l->bits[ci][enc_hash(e->key) / 64] |= 1ull << (enc_hash(e->key) % 64);
	}
}

static int enc_needle_cmp(const void *a, const void *b)
{
	const struct enc_needle *x = a, *y = b;

	if (x->ci != y->ci)
		return x->ci ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void enc_list_free(struct enc_list *l)
{
	while (l->blocks != NULL) {
		struct enc_block *b = l->blocks;

		l->blocks = b->next;
		explicit_bzero(b, sizeof(*b));
		free(b);
	}
	if (l->v != NULL)
		explicit_bzero(l->v, l->cap * sizeof(*l->v));
	free(l->v);
	explicit_bzero(l->bits, sizeof(l->bits));
	l->v = NULL;
	l->n = l->cap = 0;
}

/* Whether a needle of l (sorted) occurs in the text: each position's
 * first 8 bytes through the case's bitmap, then the needles of that key
 * compared; needles under 8 bytes by memmem(). */
static bool enc_scan(const struct enc_list *l, const struct enc_hay *hy)
{
	for (int ci = 0; ci < 2; ci++) {
		const unsigned char *h = ci ? hy->low : hy->h;

		for (size_t i = 0; i + 8 <= hy->n; i++) {
			uint64_t k = enc_key(h + i);
			unsigned x = enc_hash(k);
			size_t lo = 0, hi = l->n;

			if (!(l->bits[ci][x / 64] >> (x % 64) & 1))
				continue;
			while (lo < hi) { /* the first entry not below (ci, k) */
				size_t mid = lo + (hi - lo) / 2;
				const struct enc_needle *e = &l->v[mid];

				if ((int)e->ci < ci || (e->ci == ci && e->key < k))
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < l->n && l->v[lo].ci == ci && l->v[lo].key == k; lo++)
				if (l->v[lo].n <= hy->n - i && memcmp(h + i, l->v[lo].p, l->v[lo].n) == 0)
					return true;
		}
	}
	for (size_t j = 0; j < l->n; j++)
		if (l->v[j].n < 8 && l->v[j].n <= hy->n &&
		    memmem(l->v[j].ci ? hy->low : hy->h, hy->n, l->v[j].p, l->v[j].n) != NULL)
			return true;
	return false;
}

/* Whether needle[0..nn) occurs in the text, without case when ci
 * (through the lower-cased copy); with a list (hy->col), adds it there
 * and says no. */
static bool enc_has(const struct enc_hay *hy, const unsigned char *needle, size_t nn, bool ci)
{
	unsigned char low[4 * ENC_WINDOW];

	if (hy->col != NULL && !ci) {
		enc_collect(hy->col, needle, nn, false);
		return false;
	}
	if (nn == 0 || (hy->col == NULL && nn > hy->n))
		return false;
	if (!ci)
		return memmem(hy->h, hy->n, needle, nn) != NULL;
	if (nn > sizeof(low))
		return false; /* no caller: a window's forms are shorter */
	for (size_t k = 0; k < nn; k++)
		low[k] = (unsigned char)tolower(needle[k]);
	if (hy->col != NULL) {
		enc_collect(hy->col, low, nn, true);
		return false;
	}
	return memmem(hy->low, hy->n, low, nn) != NULL;
}

/*
 * The characters of the base-2^bits encoding (alphabet abc) of pad zero
 * bytes then v[0..n) that depend on v's bits only (the value at byte
 * offset pad of the encoded stream, modulo the group), into out; their
 * count.
 */
static size_t enc_aligned(const unsigned char *v, size_t n, size_t pad, unsigned bits, const char *abc,
			  unsigned char *out)
{
	size_t total = (pad + n) * 8, o = 0;

	for (size_t c = 0; (c + 1) * bits <= total; c++) {
		size_t bit = c * bits;
		unsigned x = 0;

		if (bit < pad * 8)
			continue;
		for (unsigned b = 0; b < bits; b++) {
			size_t at = bit + b - pad * 8;
			x = x << 1 | ((v[at / 8] >> (7 - at % 8)) & 1u);
		}
		out[o++] = (unsigned char)abc[x];
	}
	return o;
}

/* Whether any form of v[0..n) is in h[0..hn); the value itself without
 * case when other_case. */
static bool enc_window_in(const struct enc_hay *hy, const unsigned char *v, size_t n, bool other_case,
			  unsigned char *scratch, unsigned char *wide)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static const char b64u[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	static const char hexd[] = "0123456789abcdef";
	size_t k;

	if (other_case && enc_has(hy, v, n, true))
		return true;
	/* rot13 and reversed (`tr A-Za-z N-ZA-Mn-za-m`, `rev`), in their case */
	for (k = 0; k < n; k++) {
		int c = v[k];

		scratch[k] = (unsigned char)(isupper(c)   ? 'A' + (c - 'A' + 13) % 26
					     : islower(c) ? 'a' + (c - 'a' + 13) % 26
							  : c);
		wide[k] = v[n - 1 - k];
	}
	if (memcmp(scratch, v, n) != 0 && enc_has(hy, scratch, n, false))
		return true;
	if (enc_has(hy, wide, n, false))
		return true;
	for (k = 0; k < n; k++) {
		scratch[2 * k] = (unsigned char)hexd[v[k] >> 4];
		scratch[2 * k + 1] = (unsigned char)hexd[v[k] & 15];
		wide[2 * k] = v[k];
		wide[2 * k + 1] = 0;
	}
	if (enc_has(hy, scratch, 2 * n, true))
		return true;
	for (size_t pad = 0; pad < 5; pad++) {
		k = enc_aligned(v, n, pad, 5, b32, scratch);
		if (enc_has(hy, scratch, k, true))
			return true;
	}
	for (size_t pad = 0; pad < 3; pad++)
		for (int a = 0; a < 2; a++) {
			const char *abc = a ? b64u : b64;

			k = enc_aligned(v, n, pad, 6, abc, scratch);
			if (enc_has(hy, scratch, k, false))
				return true;
			k = enc_aligned(wide, 2 * n, pad, 6, abc, scratch);
			if (enc_has(hy, scratch, k, false))
				return true;
		}
	return false;
}

/*
 * Whether a form of v[0..n), or of a part of it, is in h[0..hn): windows
 * of ENC_WINDOW bytes (the whole value when shorter) every ENC_STRIDE-th
 * byte and the last one, ENC_WINDOWS_MAX at most (a longer value's spread
 * evenly), so that a part of 12 bytes or more of a value of up to 59 is
 * found (the reproducer of F5 sent base64 of "user:" and 31 bytes of 40).
 */
/*
 * Where the secret part of a value begins: 0 but for a JSON Web Token
 * (base64url segments joined by dots, the first "eyJ", base64 of '{"'),
 * whose protected header and claims are base64 of public JSON that
 * another token of the same issuer begins with too (Supabase's anon key
 * and its service_role key share 100 bytes and more; two ID tokens of
 * one issuer, their header): the part after the last dot, the
 * signature (JWE's: all after the first dot), when it has a window's
 * length. The review of round 35: a masked service key refused the
 * start of a command given the project's public anon key. And Slack's
 * tokens (below).
 */
static size_t enc_secret_start(const unsigned char *v, size_t n)
{
	/* Tokens that begin with encoded public bytes every token of their
	 * kind shares: AWS STS session tokens (protobuf: "origin_ec", the
	 * region, a signature's DER header; the older "er/aws"), PyPI's
	 * macaroons ("pypi.org", "test.pypi.org"): their first bytes, which
	 * another session's or project's token holds too. */
	static const struct {
		const char *lead;
		size_t skip;
	} common[] = {
		{"IQoJb3JpZ2luX2Vj", 64}, {"FwoGZXIvYXdz", 64}, {"FQoGZXIvYXdz", 64},
		{"pypi-AgEIcHlwaS5vcmc", 24}, {"pypi-AgENdGVzdC5weXBpLm9yZw", 32},
	};
	size_t dots = 0, first = 0, last = 0, pre = 0;

	for (size_t i = 0; i < ARRAY_LEN(common); i++)
		if (n >= common[i].skip + ENC_WINDOW && memcmp(v, common[i].lead, strlen(common[i].lead)) == 0)
			return common[i].skip;

	/* Slack's xoxb-TEAM-USER-SECRET, xoxp-, xapp-1-APP-N-SECRET: the
	 * workspace's and the user's numbers are another token's too (two
	 * bots of one workspace share "xoxb-TEAM-"): the part after the last
	 * hyphen. */
	if (n > 5 && (memcmp(v, "xox", 3) == 0 || memcmp(v, "xapp", 4) == 0) && v[4] == '-') {
		const unsigned char *h = memrchr(v, '-', n);
		size_t at = (size_t)(h - v) + 1;

		return n - at >= ENC_WINDOW ? at : 0;
	}
	if (n < 3 || memcmp(v, "eyJ", 3) != 0) {
		/* A vendor's prefix (ghp_, github_pat_, sk-ant-api03-,
		 * npm_, policy/tokens.c): every token of the vendor's begins
		 * with it. */
		pre = policy_token_prefix_len((const char *)v, n);
		/* GitHub's fine-grained github_pat_ID_SECRET: the ID's first
		 * bytes are every token of the account's */
		if (pre == 11 && memcmp(v, "github_pat_", 11) == 0) {
			const unsigned char *u = memchr(v + pre, '_', n - pre);

			if (u != NULL)
				pre = (size_t)(u - v) + 1;
		}
		return n - pre >= ENC_WINDOW ? pre : 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '.') {
			if (dots++ == 0)
				first = i + 1;
			last = i + 1;
		} else if (!isalnum(v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '=') {
			return 0;
		}
	}
	if (dots == 2 && n - last >= ENC_WINDOW)
		return last;
	if (dots == 4 && n - first >= ENC_WINDOW)
		return first;
	return 0;
}

static bool enc_part_in(const struct enc_hay *hy, const unsigned char *v, size_t n, unsigned char *scratch,
			unsigned char *wide)
{
	size_t lo = enc_secret_start(v, n), w, stride = ENC_STRIDE;
	bool other_case = n >= ENC_MIN_OTHER_CASE;

	v += lo;
	n -= lo;
	w = n < ENC_WINDOW ? n : ENC_WINDOW;

	if (n > w && (n - w) / stride + 1 > ENC_WINDOWS_MAX)
		stride = (n - w + ENC_WINDOWS_MAX - 2) / (ENC_WINDOWS_MAX - 1);
	for (size_t j = 0;; j += stride) {
		if (j + w > n)
			j = n - w;
		if (enc_window_in(hy, v + j, w, other_case, scratch, wide))
			return true;
		if (j + w >= n)
			return false;
	}
}

/*
 * A private key's own secret parts. A key file is mostly public
 * structure every key of its kind shares: the PEM lines ("-----BEGIN
 * OPENSSH PRIVATE KEY-----"), OpenSSH's "openssh-key-v1", cipher, kdf,
 * key type and the public key (also in the .pub file, authorized_keys
 * and every server's known_hosts), DER's headers and an RSA key's
 * modulus. Windows over those found another key of the same kind (fix37m:
 * a masked id_ed25519 refused an argument holding another ed25519 key).
 * So of a key only the base64 digits that encode its secret bytes are
 * looked for: OpenSSH's private section without the key type, the
 * strings the public key holds, the comment and the padding (an
 * encrypted section whole); DER's integers but a SEQUENCE's first (the
 * modulus) and its octet strings (not bit strings: a public point), each
 * of ENC_KEY_MIN bytes or more.
 */
#define ENC_KEY_MIN 20
#define ENC_KEY_SPANS 16

struct enc_spans {
	size_t lo[ENC_KEY_SPANS], hi[ENC_KEY_SPANS], n;
};

static void enc_span_add(struct enc_spans *sp, size_t lo, size_t hi)
{
	if (hi - lo >= ENC_KEY_MIN && sp->n < ENC_KEY_SPANS) {
		sp->lo[sp->n] = lo;
		sp->hi[sp->n++] = hi;
	}
}

/* An SSH string at d[*at..n): its data at *lo, *len bytes; *at past it. */
static bool enc_ssh_str(const unsigned char *d, size_t n, size_t *at, size_t *lo, size_t *len)
{
	size_t l;

	if (*at > n || n - *at < 4)
		return false;
	l = (size_t)d[*at] << 24 | (size_t)d[*at + 1] << 16 | (size_t)d[*at + 2] << 8 | d[*at + 3];
	if (l > n - *at - 4)
		return false;
	*lo = *at + 4;
	*len = l;
	*at += 4 + l;
	return true;
}

/* OpenSSH's openssh-key-v1 in d[0..n): its secret spans; false when it
 * is none. */
static bool enc_ssh_spans(const unsigned char *d, size_t n, struct enc_spans *sp)
{
	size_t at = 15, lo, len, pub, publen, priv, privlen, nk, slo[ENC_KEY_SPANS], sl[ENC_KEY_SPANS], ns = 0;
	bool none, flags = false;

	if (n < 15 || memcmp(d, "openssh-key-v1", 15) != 0 || !enc_ssh_str(d, n, &at, &lo, &len))
		return false;
	none = len == 4 && memcmp(d + lo, "none", 4) == 0;
	if (!enc_ssh_str(d, n, &at, &lo, &len) || !enc_ssh_str(d, n, &at, &lo, &len) || n - at < 4)
		return false;
	nk = (size_t)d[at] << 24 | (size_t)d[at + 1] << 16 | (size_t)d[at + 2] << 8 | d[at + 3];
	at += 4;
	if (nk != 1 || !enc_ssh_str(d, n, &at, &pub, &publen) || !enc_ssh_str(d, n, &at, &priv, &privlen))
		return false;
	if (!none || privlen < 8) { /* encrypted: all of it */
		enc_span_add(sp, priv, priv + privlen);
		return true;
	}
	/* checkints, then strings (the key type first, the comment last),
	 * then padding 1, 2, 3, ... */
	at = priv + 8;
	while (at < priv + privlen) {
		size_t rest = priv + privlen - at;
		bool pad = rest < 16;

		for (size_t k = 0; pad && k < rest; k++)
			pad = d[at + k] == k + 1;
		if (pad)
			break;
		/* a FIDO key's flags byte after its application string
		 * (sk-ssh-ed25519@openssh.com: type, public key, "ssh:";
		 * sk-ecdsa-sha2-nistp256@openssh.com: type, curve, point,
		 * "ssh:"; review37b: the section was looked for whole) */
		if (!flags && ns >= 3 && sl[0] > 3 && memcmp(d + slo[0], "sk-", 3) == 0 &&
		    sl[ns - 1] >= 4 && memcmp(d + slo[ns - 1], "ssh:", 4) == 0) {
			flags = true;
			at++;
			continue;
		}
		if (ns == ENC_KEY_SPANS || !enc_ssh_str(d, priv + privlen, &at, &slo[ns], &sl[ns])) {
			/* not strings (a security key's flags byte): the section
			 * after the checkints, whole */
			enc_span_add(sp, priv + 8, priv + privlen);
			return true;
		}
		ns++;
	}
	for (size_t s = 0; s + 1 < ns; s++) { /* the last one: the comment */
		size_t keep = sl[s];

		if (sl[s] < ENC_KEY_MIN || memmem(d + pub, publen, d + slo[s], sl[s]) != NULL)
			continue;
		/* a tail the public key holds (ed25519's seed || public) */
		for (size_t t = sl[s] - 1; t >= 16; t--)
			if (memmem(d + pub, publen, d + slo[s] + sl[s] - t, t) != NULL) {
				keep = sl[s] - t;
				break;
			}
		enc_span_add(sp, slo[s], slo[s] + keep);
	}
	return true;
}

/* A DER length at d[*at..n): *len, *at past it. */
static bool enc_der_len(const unsigned char *d, size_t n, size_t *at, size_t *len)
{
	size_t l, k;

	if (*at >= n)
		return false;
	l = d[(*at)++];
	if (l & 0x80) {
		k = l & 0x7f;
		if (k == 0 || k > 3 || n - *at < k)
			return false;
		for (l = 0; k > 0; k--)
			l = l << 8 | d[(*at)++];
	}
	*len = l;
	return l <= n - *at;
}

/* DER d[0..n) at offset base: the secret spans; false when it is no
 * DER. */
static bool enc_der_spans(const unsigned char *d, size_t n, size_t base, int depth, struct enc_spans *sp)
{
	bool first_int = true;

	for (size_t at = 0; at < n;) {
		unsigned char tag = d[at++];
		size_t len, c;

		if (!enc_der_len(d, n, &at, &len))
			return false;
		c = at;
		at += len;
		if (tag == 0x30 || (tag & 0xe0) == 0xa0) {
			if (depth > 6 || !enc_der_spans(d + c, len, base + c, depth + 1, sp))
				return false;
		} else if (tag == 0x02 && len >= ENC_KEY_MIN) {
			if (!first_int)
				enc_span_add(sp, base + c, base + c + len);
			first_int = false;
		} else if (tag == 0x04) {
			struct enc_spans in = {.n = 0};

			/* PKCS#8's key inside, or Ed25519's octet string in one */
			if (depth < 6 && len > 2 && (d[c] == 0x30 || d[c] == 0x04) &&
			    enc_der_spans(d + c, len, base + c, depth + 1, &in) && in.n > 0)
				for (size_t k = 0; k < in.n; k++)
					enc_span_add(sp, in.lo[k], in.hi[k]);
			else
				enc_span_add(sp, base + c, base + c + len);
		}
	}
	return true;
}

/* An OpenPGP MPI at d[*at..n): *at past it. */
static bool enc_pgp_mpi(const unsigned char *d, size_t n, size_t *at)
{
	size_t bits;

	if (*at > n || n - *at < 2)
		return false;
	bits = (size_t)d[*at] << 8 | d[*at + 1];
	*at += 2;
	if ((bits + 7) / 8 > n - *at)
		return false;
	*at += (bits + 7) / 8;
	return true;
}

/* The end of a version 4 key packet's public key material (RFC 4880
 * 5.5.2, RFC 9580 5.5.5), body d[0..n) from its algorithm at *at; false
 * for an algorithm it does not know. */
static bool enc_pgp_public(const unsigned char *d, size_t n, unsigned algo, size_t *at)
{
	static const unsigned char nmpi[] = {[1] = 2, [2] = 2, [3] = 2, [16] = 3, [17] = 4, [20] = 3};
	static const unsigned char fixed[] = {[25] = 32, [26] = 56, [27] = 32, [28] = 57};

	if (algo < sizeof(nmpi) && nmpi[algo] != 0) {
		for (unsigned k = 0; k < nmpi[algo]; k++)
			if (!enc_pgp_mpi(d, n, at))
				return false;
		return true;
	}
	if (algo >= 25 && algo <= 28) {
		if (n - *at < fixed[algo])
			return false;
		*at += fixed[algo];
		return true;
	}
	if (algo != 18 && algo != 19 && algo != 22)
		return false;
	/* ECDH, ECDSA, EdDSA (legacy): the curve's OID, the point; ECDH's
	 * KDF parameters */
	if (*at >= n || d[*at] == 0 || d[*at] == 0xff || (size_t)d[*at] + 1 > n - *at)
		return false;
	*at += 1 + d[*at];
	if (!enc_pgp_mpi(d, n, at))
		return false;
	if (algo == 18) {
		if (*at >= n || (size_t)d[*at] + 1 > n - *at)
			return false;
		*at += 1 + d[*at];
	}
	return true;
}

/*
 * OpenPGP packets d[0..n) (an armored PGP PRIVATE KEY BLOCK decoded):
 * the secret spans, the secret part of each secret key and subkey packet
 * (tags 5 and 7) after its public key material; the public key, the user
 * IDs and the signatures are the public key's export too (a KEYS file, a
 * keyserver's copy), as an SSH key's .pub. False when it is no such
 * packet sequence (the body is then looked for whole).
 */
static bool enc_pgp_spans(const unsigned char *d, size_t n, struct enc_spans *sp)
{
	bool secret = false;

	for (size_t at = 0; at < n;) {
		unsigned char h = d[at++];
		unsigned tag;
		size_t len, body, pub;

		if (!(h & 0x80))
			return false;
		if (h & 0x40) { /* new format */
			tag = h & 0x3f;
			if (at >= n)
				return false;
			if (d[at] < 192) {
				len = d[at++];
			} else if (d[at] < 224) {
				if (n - at < 2)
					return false;
				len = ((size_t)(d[at] - 192) << 8) + d[at + 1] + 192;
				at += 2;
			} else if (d[at] == 255) {
				if (n - at < 5)
					return false;
				len = (size_t)d[at + 1] << 24 | (size_t)d[at + 2] << 16 | (size_t)d[at + 3] << 8 | d[at + 4];
				at += 5;
			} else {
				return false; /* partial lengths: no key packet has them */
			}
		} else { /* old format */
			static const size_t ll[] = {1, 2, 4, 0};
			size_t k = ll[h & 3];

			tag = (h >> 2) & 0xf;
			if (k == 0) {
				len = n - at;
			} else {
				if (n - at < k)
					return false;
				for (len = 0; k > 0; k--)
					len = len << 8 | d[at++];
			}
		}
		if (len > n - at)
			return false;
		body = at;
		at += len;
		if (tag != 5 && tag != 7)
			continue;
		/* version, creation time, algorithm; v5 and v6 count their
		 * public material */
		if (len < 6)
			return false;
		pub = body + 6;
		if (d[body] == 4) {
			if (!enc_pgp_public(d, at, d[body + 5], &pub))
				return false;
		} else if (d[body] == 5 || d[body] == 6) {
			size_t c;

			if (len < 10)
				return false;
			c = (size_t)d[body + 6] << 24 | (size_t)d[body + 7] << 16 | (size_t)d[body + 8] << 8 | d[body + 9];
			if (c > at - body - 10)
				return false;
			pub = body + 10 + c;
		} else {
			return false;
		}
		secret = true;
		/* a secret part too short to be a key is a stub, no secret:
		 * gpg --export-secret-subkeys writes the primary key's as
		 * gnu-dummy S2K (an offline primary key), a card's as
		 * gnu-divert-to-card; nothing of it is looked for (review38c:
		 * its packet whole was, its public key material with it, so
		 * the key's own public export refused the start) */
		if (at - pub >= ENC_KEY_MIN)
			enc_span_add(sp, pub, at);
	}
	return secret;
}

/* Whether any form of the secret parts of the key blocks v[0..n) holds
 * is in the text (1), none (0), or v holds no private key (-1: looked
 * for whole). */
static int enc_key_in(const struct enc_hay *hy, const unsigned char *v, size_t n, unsigned char *scratch,
		      unsigned char *wide)
{
	const unsigned char *p = v, *e = v + n;
	unsigned char *body, *dec;
	bool any = false, first = true;
	int rc = 0;

	while (p < e && isspace(*p))
		p++;
	if ((size_t)(e - p) < 20 ||
	    (memcmp(p, "-----BEGIN ", 11) != 0 && memcmp(p, "b3BlbnNzaC1rZXktdjE", 19) != 0))
		return -1;
	body = malloc(2 * n + 3);
	if (body == NULL)
		return -1;
	dec = body + n + 1;
	while (p < e && rc == 0) {
		const unsigned char *b = memmem(p, (size_t)(e - p), "-----BEGIN ", 11), *le, *end;
		bool key, pgp = false, bare = first && memcmp(p, "b3BlbnNzaC1rZXktdjE", 19) == 0;
		struct enc_spans sp = {.n = 0};
		size_t bn = 0;
		long dn;

		first = false;
		if (bare) {
			end = e;
			key = true;
			le = p - 1;
		} else {
			if (b == NULL)
				break;
			le = memchr(b, '\n', (size_t)(e - b));
			if (le == NULL)
				break;
			/* OpenPGP's armor: -----BEGIN PGP PRIVATE KEY BLOCK----- */
			pgp = memmem(b, (size_t)(le - b), "PGP PRIVATE KEY BLOCK-----", 26) != NULL;
			key = pgp || memmem(b, (size_t)(le - b), "PRIVATE KEY-----", 16) != NULL;
			end = memmem(le, (size_t)(e - le), "-----END ", 9);
			if (end == NULL)
				end = e;
		}
		/* the body's base64 digits, header lines (Proc-Type:) out */
		for (const unsigned char *l = le + 1; key && l < end;) {
			const unsigned char *nl = memchr(l, '\n', (size_t)(end - l));
			const unsigned char *stop = nl != NULL ? nl : end;

			/* (OpenPGP's armor: its =CRC24 line after the body) */
			if (memchr(l, ':', (size_t)(stop - l)) == NULL && !(pgp && *l == '='))
				for (const unsigned char *c = l; c < stop; c++)
					if (isalnum(*c) || *c == '+' || *c == '/' || *c == '=')
						body[bn++] = *c;
			l = stop + 1;
		}
		p = bare ? e : end + 9;
		if (!key || bn < 4)
			continue;
		dn = mask_b64_decode((const char *)body, bn / 4 * 4, dec, n);
		if (dn <= 0)
			continue;
		if (pgp ? !enc_pgp_spans(dec, (size_t)dn, &sp)
			: !enc_ssh_spans(dec, (size_t)dn, &sp) && !enc_der_spans(dec, (size_t)dn, 0, 0, &sp))
			sp.n = 0;
		else if (pgp && sp.n == 0) { /* OpenPGP keys, stubs only: no secret */
			any = true;
			continue;
		}
		if (sp.n == 0) { /* no key we know: its body whole */
			sp.lo[0] = 0;
			sp.hi[0] = (size_t)dn;
			sp.n = 1;
		}
		any = true;
		for (size_t k = 0; k < sp.n && rc == 0; k++) {
			size_t clo = (8 * sp.lo[k] + 5) / 6, chi = 8 * sp.hi[k] / 6;

			if (chi > bn)
				chi = bn;
			if (chi >= clo + ENC_WINDOW && enc_part_in(hy, body + clo, chi - clo, scratch, wide))
				rc = 1;
		}
	}
	explicit_bzero(body, 2 * n + 3);
	free(body);
	return any || rc ? rc : -1;
}

/*
 * A value with white space in it (a whole file masked: an AWS
 * credentials file, a service account's JSON, a config) is mostly
 * public text every such file holds ("[default]", "aws_access_key_id",
 * "\"type\": \"service_account\""): windows over it found another
 * account's file, or a project's .env naming AWS_SECRET_ACCESS_KEY
 * (fix37m: with the files searched, a masked credentials file refused
 * the start of a project whose .env set other keys). Of such a value
 * only its token-like runs are looked for, each on its own: ENC_WINDOW
 * bytes or more of letters, digits and + / = _ - . ~, at least 4
 * letters and 2 digits (a key id, a secret, a token; not a word, a
 * name or a date). -1 when v has no white space or no such run
 * (looked for whole), else whether one was found.
 */
/*
 * A PEM block inside a whole file masked, v[0..n) from its "-----BEGIN "
 * (a service account's JSON holds its key with JSON's \n, a config with
 * its lines): its length in *len (to its "-----END ...-----" or v's
 * end). Of a private key only its secret parts are looked for
 * (enc_key_in(), on a copy with the \n and \r escapes read); a
 * certificate or a public key is public text, nothing of it is. 1 when
 * found, 0 when none (2: a public block), -1 when its runs are to be looked for (a private
 * key of no kind enc_key_in() reads) or on ENOMEM (the same: found more),
 * 2 for a public block.
 */
static int enc_pem_in(const struct enc_hay *hy, const unsigned char *v, size_t n, size_t *len,
		      unsigned char *scratch, unsigned char *wide)
{
	const unsigned char *end = memmem(v, n, "-----END ", 9), *close, *head;
	unsigned char *copy;
	size_t m = 0;
	int rc;

	*len = n;
	if (end != NULL) {
		close = memmem(end + 9, n - (size_t)(end + 9 - v), "-----", 5);
		*len = close != NULL ? (size_t)(close + 5 - v) : n;
	}
	head = memmem(v + 11, *len - 11, "-----", 5);
	if (head == NULL)
		return -1;
	if (memmem(v, (size_t)(head - v), "PRIVATE KEY", 11) == NULL)
		return 2;
	copy = malloc(*len + 1);
	if (copy == NULL)
		return -1;
	for (size_t k = 0; k < *len; k++) {
		if (v[k] == '\\' && k + 1 < *len && (v[k + 1] == 'n' || v[k + 1] == 'r')) {
			copy[m++] = v[k + 1] == 'n' ? '\n' : '\r';
			k++;
		} else {
			copy[m++] = v[k];
		}
	}
	rc = enc_key_in(hy, copy, m, scratch, wide);
	explicit_bzero(copy, *len + 1);
	free(copy);
	return rc;
}

static int enc_b64_free(unsigned char *dec, size_t n, int rc)
{
	explicit_bzero(dec, n + 1);
	free(dec);
	return rc;
}

/* A run of base64 of PEM blocks, b[0..n): as enc_pem_in() of each block
 * decoded (1 when one is found, 0 when a key's are not, 2 when all are
 * public); -1 when it does not decode or a block is no key it reads. */
static int enc_b64_pem_in(const struct enc_hay *hy, const unsigned char *b, size_t n, unsigned char *scratch,
			  unsigned char *wide)
{
	unsigned char *dec = malloc(n + 1);
	size_t plen;
	long dn;
	int rc = -1;

	if (dec == NULL)
		return -1;
	dn = mask_b64_decode((const char *)b, n / 4 * 4, dec, n);
	/* each block of a bundle (a CA's chain, a certificate and its key) */
	for (size_t at = 0; dn > 16 && rc != 1 && at + 16 < (size_t)dn;) {
		const unsigned char *blk = memmem(dec + at, (size_t)dn - at, "-----BEGIN ", 11);
		int k;

		if (blk == NULL || (size_t)dn - (size_t)(blk - dec) <= 16)
			break;
		k = enc_pem_in(hy, blk, (size_t)dn - (size_t)(blk - dec), &plen, scratch, wide);
		if (k < 0)
			return enc_b64_free(dec, n, -1);
		rc = rc == 0 || k == 0 ? (k == 1 ? 1 : 0) : k;
		at = (size_t)(blk - dec) + plen;
	}
	if (rc < 0 && dn > 16 && memcmp(dec, "-----BEGIN ", 11) == 0)
		rc = 2;
	return enc_b64_free(dec, n, rc);
}

/* Whether a run of a whole file masked is an SSH public key's base64
 * (AAAAC3NzaC1lZDI1NTE5..., a PuTTY key's Public-Lines, a signing key
 * in a config, an authorized key): its first string a key type
 * (review37b: every key of its type begins so, and the key is in its
 * .pub, authorized_keys and a .gitconfig's signingkey). */
static bool enc_run_ssh_pub(const unsigned char *r, size_t n)
{
	unsigned char dec[12];
	size_t l;

	if (n < 16 || memcmp(r, "AAAA", 4) != 0 || mask_b64_decode((const char *)r, 16, dec, sizeof(dec)) != 12)
		return false;
	l = (size_t)dec[0] << 24 | (size_t)dec[1] << 16 | (size_t)dec[2] << 8 | dec[3];
	return l >= 7 && l <= 64 &&
	       (memcmp(dec + 4, "ssh-", 4) == 0 || memcmp(dec + 4, "ecdsa-", 6) == 0 || memcmp(dec + 4, "sk-", 3) == 0);
}

/* Whether a run of a whole file masked is public text every such file
 * holds: no capital letter, and no part between its punctuation of over
 * 10 letters and digits with a digit in it (a key name,
 * auth_provider_x509_cert_url; a URL's host and path,
 * //www.googleapis.com/oauth2/v1/certs; an address after its %40,
 * 40acme-prod.iam.gserviceaccount.com; a version). A token has capitals
 * or a long part of letters and digits mixed. */
static bool enc_run_public(const unsigned char *r, size_t n)
{
	size_t part = 0, mixed = 0;
	bool digit = false, alpha = false;

	for (size_t k = 0; k <= n; k++) {
		if (k < n && isupper(r[k]))
			return false;
		if (k < n && isalnum(r[k])) {
			part++;
			digit = digit || isdigit(r[k]);
			alpha = alpha || isalpha(r[k]);
			continue;
		}
		if (part > 10 && digit)
			return false;
		/* fix38m: a lower-case secret in short groups (a recovery
		 * code, a license key: x7k2m-9pq4r-tz81b) has no long part;
		 * three groups of 4 or more letters and digits mixed are
		 * no name (x86_64-linux-gnu, oauth2/v1/certs have one) */
		if (part >= 4 && digit && alpha && ++mixed >= 3)
			return false;
		part = 0;
		digit = alpha = false;
	}
	return true;
}

static int enc_runs_in(const struct enc_hay *hy, const unsigned char *v, size_t n, unsigned char *scratch,
		       unsigned char *wide)
{
	bool any = false, pub_wrap = false;
	size_t pem_end = 0;

	if (memchr(v, ' ', n) == NULL && memchr(v, '\n', n) == NULL && memchr(v, '\t', n) == NULL &&
	    memchr(v, '\r', n) == NULL)
		return -1;
	for (size_t i = 0; i < n;) {
		size_t j = i, digits = 0, letters = 0, plen;

		/* review37b: a key inside (a service account's JSON) was
		 * looked for by its lines, whose first ones every key of its
		 * kind and size holds (MIIEvQIBADANBgkqhkiG9w0BAQEFAASC) */
		if (i >= pem_end && n - i > 16 && memcmp(v + i, "-----BEGIN ", 11) == 0) {
			int k = enc_pem_in(hy, v + i, n - i, &plen, scratch, wide);

			pem_end = i + plen;
			if (k == 1)
				return 1;
			if (k >= 0) {
				any = any || k == 0;
				i = pem_end;
				continue;
			}
		}
		/* a run ends at an = inside it (NAME=VALUE: review37b, the name
		 * and the value's first bytes were one window, aws_access_k of
		 * aws_access_key_id=AKIA...); base64's ends it */
		while (j < n && (isalnum(v[j]) || (v[j] != '\0' && strchr("+/=_-.~", v[j]) != NULL)) &&
		       !(v[j] == '=' && j + 1 < n && v[j + 1] != '=' &&
			 (isalnum(v[j + 1]) || (v[j + 1] != '\0' && strchr("+/_-.~", v[j + 1]) != NULL)))) {
			digits += isdigit(v[j]) != 0;
			letters += isalpha(v[j]) != 0;
			j++;
		}
		/* base64 of a PEM block (a kubeconfig's certificate-authority-
		 * data and client-key-data): read as the block (review37b: its
		 * first digits are every such block's) */
		if (j - i >= 24 && memcmp(v + i, "LS0tLS1CRUdJTi", 14) == 0) {
			int k = enc_b64_pem_in(hy, v + i, j - i, scratch, wide);

			if (k == 1)
				return 1;
			if (k >= 0) {
				any = any || k == 0;
				i = j;
				continue;
			}
		}
		/* an SSH public key, and the lines it goes on on when wrapped
		 * at 64 columns (a PuTTY key's Public-Lines) */
		if (j > i && (enc_run_ssh_pub(v + i, j - i) || (pub_wrap && i > 0 && v[i - 1] == '\n'))) {
			pub_wrap = j - i == 64;
			i = j;
			continue;
		}
		if (j > i)
			pub_wrap = false;
		if (j - i >= ENC_WINDOW && letters >= 4 && digits >= 2 && !enc_run_public(v + i, j - i)) {
			any = true;
			if (enc_part_in(hy, v + i, j - i, scratch, wide))
				return 1;
		}
		i = j > i ? j : i + 1;
	}
	return any ? 0 : -1;
}

/*
 * A URL's secret parts (the review of round 35: a masked DATABASE_URL
 * dropped PGHOST and refused `psql -h HOST`, a masked Slack webhook
 * refused an argument naming https://hooks.slack.com/services/, their
 * host's windows found): the userinfo's password (the whole userinfo
 * without one: https://TOKEN@host/), each path segment (a webhook's
 * token, Telegram's bot<TOKEN>), the query and fragment; the scheme,
 * the user name, the host and the port are public. Each part of
 * ENC_MIN_VALUE bytes or more is looked for on its own (one under 16
 * bytes in its encoded forms only, as any short value); a URL with none
 * is looked for whole, as any value.
 */
/*
 * A connection string (Azure's "DefaultEndpointsProtocol=https;
 * AccountName=a;AccountKey=K;EndpointSuffix=core.windows.net", ADO.NET's
 * "Server=h;Database=d;User Id=u;Password=P", a Service Bus
 * SharedAccessKey): ';' separated key=value pairs whose keys and most
 * values another account's string holds too (the review of round 36:
 * a masked Azure string refused an argument holding another account's,
 * their "DefaultEndpointsProtocol=https;AccountName=" windows found).
 * Each value whose key names a secret (key, password, pwd, secret,
 * token, sig) is looked for on its own, as a URL's parts are (in a
 * decoded copy (decoded), in its own case too, as enc_any_in() does a
 * whole value: a short password split by quotes). -1 when v
 * is no such string or has no such value (looked for whole), else
 * whether one was found.
 */
static int enc_connstr_in(const struct enc_hay *hy, const unsigned char *v, size_t n, bool decoded,
			  unsigned char *scratch, unsigned char *wide)
{
	static const char *const secret[] = {"key", "password", "pwd", "secret", "token", "sig"};
	size_t pairs = 0;
	bool any = false;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n;) {
			const unsigned char *e = memchr(v + i, ';', n - i), *eq;
			size_t end = e != NULL ? (size_t)(e - v) : n;

			if (end > i) {
				eq = memchr(v + i, '=', end - i);
				if (eq == NULL || eq == v + i)
					return -1;
				for (const unsigned char *k = v + i; pass == 0 && k < eq; k++)
					if (!isalnum(*k) && *k != ' ' && *k != '_' && *k != '-' && *k != '.')
						return -1;
				pairs += pass == 0;
				for (size_t s = 0; pass == 1 && s < ARRAY_LEN(secret); s++) {
					size_t kl = (size_t)(eq - (v + i)), sl = strlen(secret[s]), vl = end - (size_t)(eq + 1 - v);

					for (size_t o = 0; o + sl <= kl; o++)
						if (strncasecmp((const char *)v + i + o, secret[s], sl) == 0 &&
						    vl >= ENC_MIN_VALUE) {
							any = true;
							if ((decoded && enc_has(hy, eq + 1, vl, false)) ||
							    enc_part_in(hy, eq + 1, vl, scratch, wide))
								return 1;
							o = kl;
							s = ARRAY_LEN(secret);
						}
				}
			}
			i = end + 1;
		}
		if (pass == 0 && pairs < 2)
			return -1;
	}
	return any ? 0 : -1;
}

static bool enc_value_in(const struct enc_hay *hy, const unsigned char *v, size_t n, bool decoded,
			 unsigned char *scratch, unsigned char *wide)
{
	int cs = enc_key_in(hy, v, n, scratch, wide);
	size_t i = 0, auth, end, at = SIZE_MAX, colon = SIZE_MAX, q;
	bool any = false;

	if (cs < 0)
		cs = enc_connstr_in(hy, v, n, decoded, scratch, wide);
	if (cs < 0)
		cs = enc_runs_in(hy, v, n, scratch, wide);
	if (cs >= 0)
		return cs == 1;
	while (i < n && (isalnum(v[i]) || v[i] == '+' || v[i] == '.' || v[i] == '-'))
		i++;
	if (i == 0 || !isalpha(v[0]) || i + 3 > n || memcmp(v + i, "://", 3) != 0)
		return enc_part_in(hy, v, n, scratch, wide);
	for (size_t k = 0; k < n; k++)
		if (v[k] <= ' ' || v[k] >= 0x7f)
			return enc_part_in(hy, v, n, scratch, wide);
	auth = i + 3;
	for (end = auth; end < n && v[end] != '/' && v[end] != '?' && v[end] != '#'; end++)
		if (v[end] == '@')
			at = end;
	if (at != SIZE_MAX) {
		for (size_t k = auth; k < at; k++)
			if (v[k] == ':') {
				colon = k;
				break;
			}
		i = colon != SIZE_MAX && colon + 1 < at ? colon + 1 : auth;
		if (at - i >= ENC_MIN_VALUE) {
			any = true;
			if (enc_part_in(hy, v + i, at - i, scratch, wide))
				return true;
		}
	}
	/* each path segment, then the query and fragment whole */
	for (i = end; i < n && v[i] != '?' && v[i] != '#'; i = q) {
		for (q = i + 1; q < n && v[q] != '/' && v[q] != '?' && v[q] != '#'; q++)
			;
		if (q - i - 1 >= ENC_MIN_VALUE) {
			any = true;
			if (enc_part_in(hy, v + i + 1, q - i - 1, scratch, wide))
				return true;
		}
	}
	if (n - i >= ENC_MIN_VALUE) {
		any = true;
		if (enc_part_in(hy, v + i, n - i, scratch, wide))
			return true;
	}
	return any ? false : enc_part_in(hy, v, n, scratch, wide);
}

/* Whether any value of t long enough has a form in h[0..hn); in a
 * decoded copy (decoded), the whole value itself too: one of 8 to 15
 * bytes has no windows in its own case, and the text it came from held
 * it in no form the re-masker rewrites. */
static bool enc_any_in(const mask_table_t *t, const struct enc_hay *hy, bool decoded,
		       unsigned char *scratch, unsigned char *wide)
{
	for (size_t i = 0; i < t->nvalues; i++) {
		const unsigned char *v = (const unsigned char *)t->value[i].real;

		if (t->value[i].len < ENC_MIN_VALUE)
			continue;
		if ((decoded && enc_has(hy, v, t->value[i].len, false)) ||
		    enc_value_in(hy, v, t->value[i].len, decoded, scratch, wide))
			return true;
	}
	return false;
}

/* The UTF-8 of code point c into o; its length. */
static size_t enc_utf8(unsigned long c, unsigned char *o)
{
	if (c < 0x80) {
		o[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (unsigned char)(0xc0 | c >> 6);
		o[1] = (unsigned char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (unsigned char)(0xe0 | c >> 12);
		o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (c >> 18 & 7));
	o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (c & 0x3f));
	return 4;
}

/* The number of up to max digits of base 8, 10 or 16 at p[0..n), into
 * *val; how many were read. */
static size_t enc_digits(const unsigned char *p, size_t n, size_t max, unsigned base, unsigned long *val)
{
	size_t k = 0;

	*val = 0;
	for (; k < n && k < max; k++) {
		int d = base == 16 ? hex_digit(p[k]) : isdigit(p[k]) && (unsigned)(p[k] - '0') < base ? p[k] - '0' : -1;

		if (d < 0)
			break;
		*val = *val * base + (unsigned)d;
	}
	return k;
}

/*
 * Python's \N{NAME} of a printable ASCII character a token holds (a
 * letter, a digit, the punctuation of tokens and URLs), p[0..n) after
 * the '{', in any case and with or without its spaces (the escapes are
 * decoded in the text without its white space): the character into *c;
 * the bytes read, its '}' too, or 0.
 */
static size_t enc_named(const unsigned char *p, size_t n, unsigned long *c)
{
	static const struct {
		const char *name;
		char c;
	} punct[] = {
		{"LOWLINE", '_'}, {"HYPHEN-MINUS", '-'}, {"FULLSTOP", '.'}, {"SOLIDUS", '/'},
		{"PLUSSIGN", '+'}, {"EQUALSSIGN", '='}, {"COLON", ':'}, {"COMMERCIALAT", '@'},
		{"SPACE", ' '}, {"TILDE", '~'}, {"PERCENTSIGN", '%'}, {"AMPERSAND", '&'},
		{"NUMBERSIGN", '#'}, {"DOLLARSIGN", '$'}, {"EXCLAMATIONMARK", '!'}, {"ASTERISK", '*'},
		{"QUESTIONMARK", '?'}, {"SEMICOLON", ';'}, {"COMMA", ','}, {"REVERSESOLIDUS", '\\'},
	};
	static const char *const digit[] = {"ZERO", "ONE", "TWO",   "THREE", "FOUR",
					    "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"};
	const unsigned char *close = memchr(p, '}', n < 40 ? n : 40);
	char name[40];
	size_t len = 0;

	if (close == NULL)
		return 0;
	for (const unsigned char *q = p; q < close; q++)
		if (*q != ' ')
			name[len++] = (char)toupper(*q);
	name[len] = '\0';
	if (len == 17 && strncmp(name, "LATINSMALLLETTER", 16) == 0 && isalpha((unsigned char)name[16])) {
		*c = (unsigned long)tolower((unsigned char)name[16]);
		return (size_t)(close - p) + 1;
	}
	if (len == 19 && strncmp(name, "LATINCAPITALLETTER", 18) == 0 && isalpha((unsigned char)name[18])) {
		*c = (unsigned long)name[18];
		return (size_t)(close - p) + 1;
	}
	for (size_t d = 0; d < ARRAY_LEN(digit); d++)
		if (len > 5 && strncmp(name, "DIGIT", 5) == 0 && strcmp(name + 5, digit[d]) == 0) {
			*c = '0' + d;
			return (size_t)(close - p) + 1;
		}
	for (size_t k = 0; k < ARRAY_LEN(punct); k++)
		if (strcmp(name, punct[k].name) == 0) {
			*c = (unsigned char)punct[k].c;
			return (size_t)(close - p) + 1;
		}
	return 0;
}

/*
 * One round of the escapes a program or a shell writes a value in, in
 * place (each form is at least as long as what it stands for): %XX and
 * %uHHHH; \xHH, \uHHHH, \u{H..}, \UHHHHHHHH, \NNN (octal) of C, JSON,
 * JavaScript, Python and a shell's $'...'; Python's \N{NAME}
 * (enc_named()); Perl's \x{H..}, \o{O..} and \N{U+H..}; a backslash
 * before any other byte (the shell's \g\h\p, JSON's \/, \"); &#NNN;
 * and &#xHH; of HTML and XML; the shell's quotes ("ab""cd", 'ab'"cd",
 * $'..') taken out. The new length.
 */
static size_t enc_unescape(unsigned char *f, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = f[i];
		unsigned long val;
		size_t k;

		if (c == '%' && i + 2 < n && hex_digit(f[i + 1]) >= 0 && hex_digit(f[i + 2]) >= 0) {
			f[m++] = (unsigned char)(hex_digit(f[i + 1]) << 4 | hex_digit(f[i + 2]));
			i += 2;
		} else if (c == '%' && i + 5 < n && (f[i + 1] == 'u' || f[i + 1] == 'U') &&
			   enc_digits(f + i + 2, n - i - 2, 4, 16, &val) == 4) {
			m += enc_utf8(val, f + m);
			i += 5;
		} else if (c == '&' && i + 3 < n && f[i + 1] == '#') {
			bool x = f[i + 2] == 'x' || f[i + 2] == 'X';

			k = enc_digits(f + i + 2 + x, n - i - 2 - x, 7, x ? 16 : 10, &val);
			if (k > 0 && i + 2 + x + k < n && f[i + 2 + x + k] == ';' && val <= 0x10ffff) {
				m += enc_utf8(val, f + m);
				i += 2 + x + k;
			} else {
				f[m++] = c;
			}
		} else if (c == '\\' && i + 1 < n) {
			unsigned char e = f[i + 1];

			if (e == 'x' && (k = enc_digits(f + i + 2, n - i - 2, 2, 16, &val)) > 0) {
				f[m++] = (unsigned char)val;
				i += 1 + k;
			} else if ((e == 'u' || e == 'x' || e == 'o') && i + 2 < n && f[i + 2] == '{' &&
				   (k = enc_digits(f + i + 3, n - i - 3, e == 'o' ? 7 : 6, e == 'o' ? 8 : 16,
						   &val)) > 0 &&
				   i + 3 + k < n && f[i + 3 + k] == '}' && val <= 0x10ffff) {
				/* \u{H..} of JavaScript, Rust, Swift; Perl's \x{H..}, \o{O..} */
				m += enc_utf8(val, f + m);
				i += 3 + k;
			} else if (e == 'N' && i + 5 < n && f[i + 2] == '{' && (f[i + 3] == 'U' || f[i + 3] == 'u') &&
				   f[i + 4] == '+' && (k = enc_digits(f + i + 5, n - i - 5, 6, 16, &val)) > 0 &&
				   i + 5 + k < n && f[i + 5 + k] == '}' && val <= 0x10ffff) {
				/* Perl's \N{U+H..} */
				m += enc_utf8(val, f + m);
				i += 5 + k;
			} else if ((e == 'u' || e == 'U') &&
				   enc_digits(f + i + 2, n - i - 2, e == 'u' ? 4 : 8, 16, &val) == (e == 'u' ? 4u : 8u) &&
				   val <= 0x10ffff) {
				m += enc_utf8(val, f + m);
				i += e == 'u' ? 5 : 9;
			} else if (e == 'N' && i + 2 < n && f[i + 2] == '{' &&
				   (k = enc_named(f + i + 3, n - i - 3, &val)) > 0) {
				f[m++] = (unsigned char)val;
				i += 2 + k;
			} else if (e >= '0' && e <= '7') {
				k = enc_digits(f + i + 1, n - i - 1, 3, 8, &val);
				f[m++] = (unsigned char)val;
				i += k;
			} else {
				f[m++] = e;
				i++;
			}
		} else if (c == '$' && i + 1 < n && (f[i + 1] == '\'' || f[i + 1] == '"')) {
			continue;
		} else if (c != '"' && c != '\'') {
			f[m++] = c;
		}
	}
	return m;
}

/*
 * The shell's reading of a backslash, outside $'...': the next byte as it
 * is, whatever it is (`\1\x` is "1x", not byte 1 and a \x escape), the
 * quotes taken out. enc_unescape() reads C's escapes instead, and the two
 * disagree on a backslash before a digit, x, u or U: a value written with
 * a backslash before each byte was found only when some 12-byte window of
 * it held none of those (a test that failed for 1 random token in ~5).
 * In place; returns the new length.
 */
static size_t enc_unshell(unsigned char *f, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (f[i] == '\\' && i + 1 < n)
			f[m++] = f[++i];
		else if (f[i] != '"' && f[i] != '\'')
			f[m++] = f[i];
	}
	return m;
}

/* u (len bytes) into flat without white space and backslash-newlines
 * (base64 in groups, a value split over lines); returns its length. */
/*
 * Ruby's \u{H.. H.. ...} at u[0..len) (after its "\u{"): code points
 * parted by white space, two or more (one is enc_unescape()'s), their
 * UTF-8 into o (no longer than what it stands for: a code point's
 * digits and its space); the bytes read, the '}' too, or 0.
 */
static size_t enc_ruby_braces(const unsigned char *u, size_t len, unsigned char *o, size_t *on)
{
	size_t i = 0, cps = 0, m = 0;

	for (;;) {
		unsigned long val;
		size_t k;

		while (i < len && (u[i] == ' ' || u[i] == '\t'))
			i++;
		if (i < len && u[i] == '}')
			break;
		k = enc_digits(u + i, len - i, 6, 16, &val);
		if (k == 0 || val > 0x10ffff)
			return 0;
		m += enc_utf8(val, o + m);
		cps++;
		i += k;
		if (i < len && u[i] != ' ' && u[i] != '\t' && u[i] != '}')
			return 0;
	}
	if (cps < 2)
		return 0;
	*on = m;
	return i + 1;
}

static size_t enc_flatten(const unsigned char *u, size_t len, unsigned char *flat)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		size_t k, m;

		/* Ruby's \u{67 68 70}: decoded before its spaces go (review37b) */
		if (u[i] == '\\' && i + 3 < len && u[i + 1] == 'u' && u[i + 2] == '{' &&
		    (k = enc_ruby_braces(u + i + 3, len - i - 3, flat + n, &m)) > 0) {
			n += m;
			i += 2 + k;
			continue;
		}
		if (u[i] == '\\' && i + 1 < len && (u[i + 1] == '\n' || u[i + 1] == '\r')) {
			i++;
			continue;
		}
		if (u[i] != ' ' && u[i] != '\t' && u[i] != '\n' && u[i] != '\r')
			flat[n++] = u[i];
	}
	return n;
}

/* The text's lower-cased copy into low; hy set to both. */
static void enc_hay_set(struct enc_hay *hy, const unsigned char *h, size_t n, unsigned char *low)
{
	for (size_t i = 0; i < n; i++)
		low[i] = (unsigned char)tolower(h[i]);
	hy->h = h;
	hy->low = low;
	hy->n = n;
}

/*
 * t's needles (enc_any_in() collecting them) into t->enc: built on the
 * heap, sorted, then copied into the arena (locked, wiped with the
 * table) and the heap copies wiped. Once a table: they do not depend on
 * the text (fix37m: collecting them per call cost more than the search
 * of a small file). 0, or -1 (ENOMEM).
 */
static int enc_cache_build(const mask_table_t *t, unsigned char *scratch, unsigned char *wide)
{
	struct enc_list tmp[2];
	int rc = -1;

	memset(tmp, 0, sizeof(tmp));
	for (int d = 0; d < 2; d++) {
		struct enc_hay col = {.n = SIZE_MAX, .col = &tmp[d]};
		struct enc_list *l = &t->enc->list[d];
		size_t bytes = 0;
		unsigned char *store;

		(void)enc_any_in(t, &col, d == 1, scratch, wide);
		if (tmp[d].failed)
			goto done;
		if (tmp[d].n > 1)
			qsort(tmp[d].v, tmp[d].n, sizeof(*tmp[d].v), enc_needle_cmp);
		for (size_t k = 0; k < tmp[d].n; k++)
			bytes += tmp[d].v[k].n;
		l->v = mask_secrets_alloc(t->sec, (tmp[d].n + 1) * sizeof(*l->v));
		store = mask_secrets_alloc(t->sec, bytes + 1);
		if (l->v == NULL || store == NULL)
			goto done;
		for (size_t k = 0; k < tmp[d].n; k++) {
			l->v[k] = tmp[d].v[k];
			memcpy(store, tmp[d].v[k].p, tmp[d].v[k].n);
			l->v[k].p = store;
			store += tmp[d].v[k].n;
		}
		l->n = tmp[d].n;
		memcpy(l->bits, tmp[d].bits, sizeof(l->bits));
	}
	t->enc->built = true;
	rc = 0;
done:
	enc_list_free(&tmp[0]);
	enc_list_free(&tmp[1]);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* Contract in mask.h. */
int mask_table_encoded_real(const mask_table_t *t, const void *in, size_t len)
{
	const unsigned char *u = in;
	unsigned char *flat, *shell, *low, *scratch, *wide;
	size_t maxv = 0, n = 0, nshell = 0, cap;
	const struct enc_list *lists;
	struct enc_hay hy = {.col = NULL};
	bool hit = false;
	int rc = -1;

	if (t->nvalues == 0 || len == 0)
		return 0;
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].len > maxv)
			maxv = t->value[i].len;
	cap = 4 * maxv + 8;
	if (len > SIZE_MAX / 2 - 1) {
		errno = ENOMEM;
		return -1;
	}
	flat = malloc(2 * (len + 1));
	low = malloc(len + 1);
	scratch = malloc(cap);
	wide = malloc(cap);
	if (flat == NULL || low == NULL || scratch == NULL || wide == NULL ||
	    (!t->enc->built && enc_cache_build(t, scratch, wide) < 0))
		goto done;
	lists = t->enc->list;
	enc_hay_set(&hy, u, len, low);
	hit = enc_scan(&lists[0], &hy);
	/* White space and backslash-newlines out (base64 in groups, a value
	 * split over lines), once; a copy of that (shell, after flat) for the
	 * shell's reading below; then the escapes decoded and the quotes
	 * taken out (enc_unescape()), three times at most (%25 of %25 of a
	 * byte, \\x of JSON in a shell's quotes). */
	shell = flat + len + 1;
	if (!hit) {
		n = enc_flatten(u, len, flat);
		memcpy(shell, flat, n);
		nshell = n;
	}
	for (int round = 0; round < 4 && !hit; round++) {
		size_t m;

		if (round > 0 || n != len) {
			enc_hay_set(&hy, flat, n, low);
			hit = enc_scan(&lists[1], &hy);
		}
		if (hit)
			break;
		m = enc_unescape(flat, n);
		if (m == n)
			break;
		n = m;
	}
	/* The shell's reading of its backslashes, once (enc_unshell()). */
	if (!hit) {
		n = enc_unshell(shell, nshell);
		enc_hay_set(&hy, shell, n, low);
		hit = enc_scan(&lists[1], &hy);
	}
	rc = hit ? 1 : 0;
done:
	if (flat != NULL)
		explicit_bzero(flat, 2 * (len + 1));
	if (low != NULL)
		explicit_bzero(low, len + 1);
	if (scratch != NULL)
		explicit_bzero(scratch, cap);
	if (wide != NULL)
		explicit_bzero(wide, cap);
	free(flat);
	free(low);
	free(scratch);
	free(wide);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
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
			errbuf_set(err, errlen, "credential %s: out of memory", cr->name);
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
		errbuf_set(err, errlen, "credential %s: cannot write its sentinel copy %s: %s", cr->name,
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


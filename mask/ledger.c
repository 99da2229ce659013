/*
 * ledger.c - the sentinel ledger of SPEC §4.1: for each credential name
 * ("env:VAR", "file:PATH", "file:PATH#N"), the last few stable sentinels
 * issued for it, so that one of an earlier key or value is recognised as
 * stale and refused with a reason that says so (tablesets.c, exchange.c).
 *
 * The file (read and written by the CLI, proxy/cli/sentinels.c) is text:
 * comment lines start with '#'; every other line is the name in hex, then
 * each sentinel in hex, oldest first, separated by one space. Sentinels
 * only: a real value is never recorded. Names are kept in order of last
 * use; the least recently used name goes when there are more than
 * MASK_LEDGER_NAMES, the oldest sentinel of a name when it has more than
 * MASK_LEDGER_PER_NAME. Pure: no I/O here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tablepriv.h"
#include "base/errbuf.h"
#include "base/hex.h"

struct lent {
	char *s;
	size_t len;
};

struct lname {
	char *name;
	struct lent e[MASK_LEDGER_PER_NAME]; /* oldest first */
	size_t n;
};

struct mask_ledger {
	struct lname *v; /* [n], least recently used first */
	size_t n;
	size_t cap;
};

/* Decodes the hex word [p, p + n) into a malloc'd NUL-terminated buffer;
 * NULL (errno EINVAL: odd length or not hex; ENOMEM). */
static char *unhex(const char *p, size_t n, size_t *len)
{
	char *out;

	if (n == 0 || n % 2 != 0) {
		errno = EINVAL;
		return NULL;
	}
	out = malloc(n / 2 + 1);
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_digit((unsigned char)p[i]), lo = hex_digit((unsigned char)p[i + 1]);
		if (hi < 0 || lo < 0) {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		out[i / 2] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	*len = n / 2;
	return out;
}

static void lname_free(struct lname *ln)
{
	free(ln->name);
	for (size_t i = 0; i < ln->n; i++)
		free(ln->e[i].s);
}

static struct lname *find_name(const mask_ledger_t *lg, const char *name)
{
	for (size_t i = 0; i < lg->n; i++)
		if (strcmp(lg->v[i].name, name) == 0)
			return &lg->v[i];
	return NULL;
}

/* Moves entry i to the end (most recently used); returns it there. */
static struct lname *touch(mask_ledger_t *lg, size_t i)
{
	struct lname tmp = lg->v[i];

	memmove(&lg->v[i], &lg->v[i + 1], (lg->n - i - 1) * sizeof(*lg->v));
	lg->v[lg->n - 1] = tmp;
	return &lg->v[lg->n - 1];
}

/* The entry of name, made the most recently used (added when new, the
 * least recently used dropped beyond the cap). NULL on ENOMEM. */
static struct lname *use_name(mask_ledger_t *lg, const char *name)
{
	struct lname *ln = find_name(lg, name);
	char *dup;

	if (ln != NULL)
		return touch(lg, (size_t)(ln - lg->v));
	dup = strdup(name);
	if (dup == NULL)
		return NULL;
	if (lg->n == MASK_LEDGER_NAMES) {
		lname_free(&lg->v[0]);
		memmove(&lg->v[0], &lg->v[1], (lg->n - 1) * sizeof(*lg->v));
		lg->n--;
	}
	if (lg->n == lg->cap) {
		size_t cap = lg->cap ? lg->cap * 2 : 8;
		struct lname *nv = realloc(lg->v, cap * sizeof(*nv));
		if (nv == NULL) {
			free(dup);
			return NULL;
		}
		lg->v = nv;
		lg->cap = cap;
	}
	ln = &lg->v[lg->n++];
	memset(ln, 0, sizeof(*ln));
	ln->name = dup;
	return ln;
}

/* Records s[0..len) as the newest sentinel of ln (moved there when it is
 * already recorded; the oldest dropped beyond the cap). 0 or -1. */
static int add_sentinel(struct lname *ln, const char *s, size_t len)
{
	struct lent e;

	for (size_t i = 0; i < ln->n; i++) {
		if (ln->e[i].len == len && memcmp(ln->e[i].s, s, len) == 0) {
			e = ln->e[i];
			memmove(&ln->e[i], &ln->e[i + 1], (ln->n - i - 1) * sizeof(e));
			ln->e[ln->n - 1] = e;
			return 0;
		}
	}
	e.s = malloc(len + 1);
	if (e.s == NULL)
		return -1;
	memcpy(e.s, s, len);
	e.s[len] = '\0';
	e.len = len;
	if (ln->n == MASK_LEDGER_PER_NAME) {
		free(ln->e[0].s);
		memmove(&ln->e[0], &ln->e[1], (ln->n - 1) * sizeof(e));
		ln->n--;
	}
	ln->e[ln->n++] = e;
	return 0;
}

mask_ledger_t *mask_ledger_new(void)
{
	return calloc(1, sizeof(mask_ledger_t));
}

mask_ledger_t *mask_ledger_parse(const char *text, size_t len, char *err, size_t errlen)
{
	mask_ledger_t *lg = mask_ledger_new();
	const char *p = text, *end = text + len;
	unsigned line = 0;

	if (lg == NULL)
		goto nomem;
	while (p < end) {
		const char *le = memchr(p, '\n', (size_t)(end - p)), *w;
		struct lname *ln = NULL;
		bool first = true;

		if (le == NULL)
			le = end;
		line++;
		if (p == le || *p == '#') {
			p = le + 1;
			continue;
		}
		for (w = p; w < le;) {
			const char *sp = memchr(w, ' ', (size_t)(le - w));
			size_t n;
			char *d;

			if (sp == NULL)
				sp = le;
			d = unhex(w, (size_t)(sp - w), &n);
			if (d == NULL && errno == ENOMEM)
				goto nomem;
			if (d == NULL || memchr(d, '\0', n) != NULL ||
			    (!first && n > MASK_LEDGER_SENTINEL_MAX)) {
				free(d);
				errbuf_set(err, errlen,
					   "line %u: expected a hex name then hex sentinels of at most "
					   "%d bytes, separated by one space",
					   line, MASK_LEDGER_SENTINEL_MAX);
				mask_ledger_free(lg);
				return NULL;
			}
			if (first) {
				ln = use_name(lg, d);
				free(d);
				if (ln == NULL)
					goto nomem;
				first = false;
			} else {
				int rc = add_sentinel(ln, d, n);
				free(d);
				if (rc != 0)
					goto nomem;
			}
			w = sp < le ? sp + 1 : le;
		}
		p = le + 1;
	}
	return lg;
nomem:
	mask_ledger_free(lg);
	errbuf_set(err, errlen, "out of memory");
	return NULL;
}

void mask_ledger_free(mask_ledger_t *lg)
{
	if (lg == NULL)
		return;
	for (size_t i = 0; i < lg->n; i++)
		lname_free(&lg->v[i]);
	free(lg->v);
	free(lg);
}

size_t mask_ledger_count(const mask_ledger_t *lg, const char *name)
{
	const struct lname *ln = find_name(lg, name);

	return ln != NULL ? ln->n : 0;
}

const char *mask_ledger_get(const mask_ledger_t *lg, const char *name, size_t i, size_t *len)
{
	const struct lname *ln = find_name(lg, name);

	if (ln == NULL || i >= ln->n) {
		*len = 0;
		return NULL;
	}
	*len = ln->e[i].len;
	return ln->e[i].s;
}

size_t mask_ledger_names(const mask_ledger_t *lg)
{
	return lg->n;
}

int mask_ledger_record(mask_ledger_t *lg, const mask_table_t *t)
{
	if (!t->stable)
		return 0;
	for (size_t i = 0; i < t->nvalues; i++) {
		const struct tvalue *v = &t->value[i];
		struct lname *ln;

		if (v->len > MASK_LEDGER_SENTINEL_MAX)
			continue;
		ln = use_name(lg, v->dname);
		if (ln == NULL || add_sentinel(ln, v->sent, v->len) != 0) {
			errno = ENOMEM;
			return -1;
		}
	}
	return 0;
}

/* Appends the hex of [s, s + n) at out + *o. */
static void put_hex(char *out, size_t *o, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[(*o)++] = hx[(unsigned char)s[i] >> 4];
		out[(*o)++] = hx[(unsigned char)s[i] & 15];
	}
}

char *mask_ledger_format(const mask_ledger_t *lg, size_t *len)
{
	static const char head[] =
		"# passavant sentinel ledger: per line the credential name, then its last "
		"sentinels (oldest first), in hex.\n"
		"# Sentinels only, never a real value. Written by passavant; do not edit.\n";
	size_t cap = sizeof(head), o = 0;
	char *out;

	for (size_t i = 0; i < lg->n; i++) {
		cap += 2 * strlen(lg->v[i].name) + 1;
		for (size_t k = 0; k < lg->v[i].n; k++)
			cap += 2 * lg->v[i].e[k].len + 1;
	}
	out = malloc(cap);
	if (out == NULL)
		return NULL;
	memcpy(out, head, sizeof(head) - 1);
	o = sizeof(head) - 1;
	for (size_t i = 0; i < lg->n; i++) {
		put_hex(out, &o, lg->v[i].name, strlen(lg->v[i].name));
		for (size_t k = 0; k < lg->v[i].n; k++) {
			out[o++] = ' ';
			put_hex(out, &o, lg->v[i].e[k].s, lg->v[i].e[k].len);
		}
		out[o++] = '\n';
	}
	out[o] = '\0';
	*len = o;
	return out;
}

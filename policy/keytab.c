/*
 * keytab.c - the key tables of the policy loader: one table per mapping,
 * {key, expected node type, handler} (the tables are in keys_*.c and
 * load.c), walked here with "did you mean" suggestions for unknown keys;
 * and the readers of host lists and path lists every section shares.
 */
#include <stdlib.h>
#include <string.h>

#include "loader_int.h"

/* Case-insensitive edit distance, ignoring '_' and '-' (for suggestions). */
static size_t edit_distance(const char *a, const char *b)
{
	char x[64], y[64];
	size_t nx = 0, ny = 0, d[65];

	for (; *a != '\0' && nx < sizeof(x); a++)
		if (*a != '_' && *a != '-')
			x[nx++] = (char)(*a | 0x20);
	for (; *b != '\0' && ny < sizeof(y); b++)
		if (*b != '_' && *b != '-')
			y[ny++] = (char)(*b | 0x20);
	for (size_t j = 0; j <= ny; j++)
		d[j] = j;
	for (size_t i = 1; i <= nx; i++) {
		size_t prev = d[0];
		d[0] = i;
		for (size_t j = 1; j <= ny; j++) {
			size_t cur = d[j];
			size_t best = prev + (x[i - 1] == y[j - 1] ? 0 : 1);
			if (d[j] + 1 < best)
				best = d[j] + 1;
			if (d[j - 1] + 1 < best)
				best = d[j - 1] + 1;
			d[j] = best;
			prev = cur;
		}
	}
	return d[ny];
}

/* Every table, for the cross-section suggestions of unknown_key(). */
static const struct keytab *const all_tables[] = {
	&ldr_top_tab, &ldr_network_tab, &ldr_tls_tab, &ldr_limit_tab, &ldr_cred_tab,
	&ldr_fs_tab,  &ldr_audit_tab,   &ldr_env_tab, &ldr_file_tab};

/* Reports an unknown key, with a suggestion from this table or, failing
 * that, the same key in another section. */
static void unknown_key(struct ldr *l, const struct ynode *k, const struct keytab *t)
{
	char ex[200], where[64];
	const char *best = NULL, *best_sec = NULL;
	size_t best_d = (size_t)-1, len = strlen(k->str);
	size_t n_all_tables = ARRAY_LEN(all_tables);

	for (size_t i = 0; i < t->n; i++) {
		size_t d = edit_distance(k->str, t->keys[i].key);
		if (d < best_d) {
			best_d = d;
			best = t->keys[i].key;
		}
	}
	if (best_d > 2 && best_d > len / 4)
		best = NULL;
	for (size_t j = 0; best == NULL && j < n_all_tables; j++) {
		const struct keytab *o = all_tables[j];
		if (o == t)
			continue;
		for (size_t i = 0; i < o->n; i++)
			if (edit_distance(k->str, o->keys[i].key) == 0) {
				best = o->keys[i].key;
				best_sec = o->section;
				break;
			}
	}
	ldr_excerpt(k->str, ex, sizeof(ex));
	if (t->section[0] != '\0')
		snprintf(where, sizeof(where), "a key of %s", t->section);
	else
		snprintf(where, sizeof(where), "a top-level key");
	if (best != NULL && best_sec != NULL)
		ldr_error(l, k->mark, "unknown key \"%s\", expected %s (did you mean %s.%s?)", ex,
			  where, best_sec, best);
	else if (best != NULL)
		ldr_error(l, k->mark, "unknown key \"%s\", expected %s (did you mean \"%s\"?)", ex,
			  where, best);
	else
		ldr_error(l, k->mark, "unknown key \"%s\", expected %s", ex, where);
}

/* Generic wording of a node type, when a key table has no better one. */
static const char *type_word(enum ynode_type t)
{
	switch (t) {
	case YN_MAP:
		return "a mapping";
	case YN_SEQ:
		return "a list";
	case YN_SCALAR:
		return "a value";
	case YN_ANY:
		break;
	}
	return "a value";
}

/* Contract in loader_int.h. */
bool yn_key_seen_before(const struct ynode *map, size_t i)
{
	for (size_t j = 0; j < i; j += 2)
		if (map->kids[j]->type == YN_SCALAR && strcmp(map->kids[j]->str, map->kids[i]->str) == 0)
			return true;
	return false;
}

/* Contract in loader_int.h. */
void ldr_walk_map(struct ldr *l, const struct ynode *map, const struct keytab *t, void *ctx)
{
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct ynode *k = map->kids[i], *v = map->kids[i + 1];
		const struct keydef *d = NULL;
		char where[96];

		if (k->type != YN_SCALAR || yn_class(k) == SC_NULL) {
			char buf[256];
			ldr_error(l, k->mark, "%s as a key, expected a key name",
				  yn_describe(k, buf, sizeof(buf)));
			continue;
		}
		if (yn_key_seen_before(map, i))
			continue; /* reported as a duplicate while building the tree */
		for (size_t j = 0; j < t->n; j++)
			if (strcmp(t->keys[j].key, k->str) == 0) {
				d = &t->keys[j];
				break;
			}
		if (d == NULL) {
			unknown_key(l, k, t);
			continue;
		}
		if (t->section[0] != '\0')
			snprintf(where, sizeof(where), "%s.%s", t->section, d->key);
		else
			snprintf(where, sizeof(where), "%s", d->key);
		if (d->handler == NULL) {
			(void)ldr_warn(l, k->mark,
				       "sandbox-runtime key %s is not implemented by passavant and is "
				       "ignored (%s)",
				       where, d->srt_note ? d->srt_note : "no equivalent");
			continue;
		}
		if (d->type != YN_ANY && v->type != d->type) {
			ldr_wrong_type(l, v, d->expect ? d->expect : type_word(d->type), where);
			continue;
		}
		d->handler(l, v, ctx);
	}
}

/* ------------------------------------------------------------------ */
/* Host lists                                                          */
/* ------------------------------------------------------------------ */

/* Contract in loader_int.h. */
int ldr_hostent(struct ldr *l, const struct ynode *n, const char *where, bool allow_any,
			 struct policy_hostent *e)
{
	const char *s = ldr_want_string(l, n, "a host pattern", where);
	const char *msg;
	char ex[200];

	memset(e, 0, sizeof(*e));
	if (s == NULL)
		return -1;
	msg = policy_hostpat_parse(s, allow_any, &e->pat);
	if (msg != NULL) {
		ldr_excerpt(s, ex, sizeof(ex));
		ldr_error(l, n->mark, "\"%s\" in %s, %s", ex, where, msg);
		return -1;
	}
	e->text = strdup(s);
	if (e->text == NULL || asprintf(&e->rule, "%s: %s", where, s) < 0) {
		free(e->text);
		e->text = NULL;
		e->rule = NULL;
		ldr_error(l, n->mark, "out of memory, expected to read %s", where);
		return -1;
	}
	e->mark = n->mark;
	return 0;
}

/* Contract in loader_int.h. */
bool ldr_hostpat_same(const struct policy_hostpat *a, const struct policy_hostpat *b)
{
	return a->kind == b->kind && a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* Contract in loader_int.h. */
void ldr_hostlist(struct ldr *l, const struct ynode *seq, const char *where, bool allow_any,
			   struct policy_hostlist *out)
{
	out->v = calloc(seq->n ? seq->n : 1, sizeof(*out->v));
	if (out->v == NULL) {
		ldr_error(l, seq->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i < seq->n; i++) {
		struct policy_hostent e;
		bool dup = false;
		if (ldr_hostent(l, seq->kids[i], where, allow_any, &e) != 0)
			continue;
		for (size_t j = 0; j < out->n; j++)
			if (ldr_hostpat_same(&out->v[j].pat, &e.pat))
				dup = true;
		if (dup) {
			(void)ldr_warn(l, e.mark, "%s lists \"%s\" twice (the same hosts and ports)",
				       where, e.text);
			free(e.text);
			free(e.rule);
			continue;
		}
		out->v[out->n++] = e;
	}
}


/* ------------------------------------------------------------------ */
/* Path lists                                                          */
/* ------------------------------------------------------------------ */

/*
 * Refuses a path that reads as a glob. sandbox-runtime takes an entry of
 * its filesystem lists holding any of "*", "?", "[" or "]" as a glob and
 * expands it ("**\/.env", "~/keys/id[12].pem"); passavant takes paths
 * literally, so such an entry would silently deny (or hide) nothing at
 * all: one literal name nobody has instead of the files the user meant.
 * A name that really holds a bracket is named through its directory.
 * Returns NULL or a static message.
 */
static const char *path_glob(const char *s)
{
	if (strpbrk(s, "*?[]") != NULL)
		return "expected a literal path, not a glob pattern (passavant does not expand "
		       "'*', '?' or '[...]'; list each path, or the directory of a name that "
		       "holds a bracket)";
	return NULL;
}

/* Contract in loader_int.h. */
char *ldr_path_of(struct ldr *l, const struct ynode *n, const char *where)
{
	const char *s = ldr_want_string(l, n, "a path", where), *err;
	char ex[200], *path;

	if (s == NULL)
		return NULL;
	path = (err = path_glob(s)) != NULL ? NULL : ldr_path_normalize(s, &err);
	if (path == NULL) {
		ldr_excerpt(s, ex, sizeof(ex));
		ldr_error(l, n->mark, "\"%s\" in %s, %s", ex, where, err);
	}
	return path;
}

/* Contract in loader_int.h. */
void ldr_pathlist(struct ldr *l, const struct ynode *v, const char *where,
		  struct policy_strlist *out, struct policy_mark **marks)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *n = v->kids[i];
		char *path = ldr_path_of(l, n, where);

		if (path == NULL || ldr_strlist_has(out, path)) {
			free(path);
			continue;
		}
		if (marks != NULL) {
			struct policy_mark *nm = realloc(*marks, (out->n + 1) * sizeof(*nm));
			if (nm == NULL) {
				ldr_error(l, n->mark, "out of memory, expected to read %s", where);
				free(path);
				continue;
			}
			*marks = nm;
			nm[out->n] = n->mark;
		}
		if (ldr_strlist_add(out, path) != 0)
			ldr_error(l, n->mark, "out of memory, expected to read %s", where);
		free(path);
	}
}

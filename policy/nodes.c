/*
 * nodes.c - the node tree of the policy loader: libyaml's event parser
 * builds a small tree that keeps the position of every node (aliases are
 * refused; depth, size and count are capped, so hostile input cannot make
 * the tree large), and the scalar readers the key handlers use, which
 * report "FILE:LINE:COL: error: FOUND, expected WHAT".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "loader_int.h"

/* ------------------------------------------------------------------ */
/* Node tree                                                           */
/* ------------------------------------------------------------------ */

/* Frees a node and its subtree; NULL is a no-op. Recursion is bounded by
 * LDR_MAX_DEPTH. */
void yn_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		yn_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

/* The 1-based position of a libyaml mark. */
static struct policy_mark mark_of(yaml_mark_t m)
{
	struct policy_mark pm;

	/* libyaml marks are 0-based and count characters, a TAB as one. */
	pm.line = (unsigned)m.line + 1;
	pm.col = (unsigned)m.column + 1;
	return pm;
}

/* Tree builder state over the libyaml event stream. */
struct ybuild {
	struct ldr *l;
	struct ynode *root;
	struct ynode *stack[LDR_MAX_DEPTH + 1];
	size_t depth;
	size_t nodes;
	bool had_doc;
};

/* Returns 0, or -1 after reporting why the node cannot be added. */
static int ybuild_attach(struct ybuild *b, struct ynode *n)
{
	struct ynode *parent;

	if (++b->nodes > LDR_MAX_NODES) {
		ldr_error(b->l, n->mark, "more than %d nodes, expected a smaller policy",
			  LDR_MAX_NODES);
		return -1;
	}
	if (b->depth == 0) {
		if (b->root != NULL) {
			ldr_error(b->l, n->mark, "a second document, expected one document");
			return -1;
		}
		b->root = n;
		return 0;
	}
	parent = b->stack[b->depth - 1];
	if (parent->n >= (parent->type == YN_MAP ? 2 : 1) * (size_t)LDR_MAX_LIST) {
		ldr_error(b->l, n->mark, "more than %d entries, expected a shorter list or mapping",
			  LDR_MAX_LIST);
		return -1;
	}
	if (parent->n == parent->cap) {
		size_t ncap = parent->cap ? parent->cap * 2 : 8;
		struct ynode **nk = realloc(parent->kids, ncap * sizeof(*nk));
		if (nk == NULL) {
			ldr_error(b->l, n->mark, "out of memory, expected to read the policy");
			return -1;
		}
		parent->kids = nk;
		parent->cap = ncap;
	}
	parent->kids[parent->n++] = n;
	return 0;
}

/* Describes a scalar for "found" messages: printable, short, quoted. */
void ldr_excerpt(const char *s, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; s[i] != '\0' && o + 8 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i >= 48) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

/* Checks the keys of a finished mapping for duplicates. */
static void ybuild_check_dups(struct ybuild *b, const struct ynode *map)
{
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct ynode *k = map->kids[i];
		if (k->type != YN_SCALAR)
			continue;
		for (size_t j = 0; j < i; j += 2) {
			const struct ynode *e = map->kids[j];
			char ex[160];
			if (e->type != YN_SCALAR || strcmp(e->str, k->str) != 0)
				continue;
			ldr_excerpt(k->str, ex, sizeof(ex));
			ldr_error(b->l, k->mark,
				  "duplicate key \"%s\" (first at line %u, column %u), expected each "
				  "key once",
				  ex, e->mark.line, e->mark.col);
			break;
		}
	}
}

/* A fresh empty node at mark m, or NULL after reporting ENOMEM. */
static struct ynode *ynode_new(struct ybuild *b, enum ynode_type t, yaml_mark_t m)
{
	struct ynode *n = calloc(1, sizeof(*n));

	if (n == NULL) {
		ldr_error(b->l, mark_of(m), "out of memory, expected to read the policy");
		return NULL;
	}
	n->type = t;
	n->mark = mark_of(m);
	return n;
}

/*
 * Refuses an explicit tag on a node (reported, then the node is kept so
 * the walk goes on): "!!binary fi8uc3No" would otherwise be read as the
 * path "fi8uc3No", "!!int 10" as a string, and a local tag ignored. Only
 * "!!str" on a scalar passes: it means what quoting means. Returns whether
 * the tag was refused.
 */
static bool ybuild_check_tag(struct ybuild *b, const yaml_char_t *tag, bool scalar, yaml_mark_t m)
{
	char ex[160];

	if (tag == NULL || (scalar && strcmp((const char *)tag, YAML_STR_TAG) == 0))
		return false;
	ldr_excerpt((const char *)tag, ex, sizeof(ex));
	ldr_error(b->l, mark_of(m),
		  "a tag <%s>, expected an untagged value (tags are not supported; quote a "
		  "string instead)",
		  ex);
	return true;
}

/* A scalar event: a string node (text capped, no NUL inside). Returns 1
 * to go on, -1 on error (as ybuild_event()). */
static int ybuild_scalar(struct ybuild *b, yaml_event_t *ev)
{
	struct ynode *n;
	bool tag_refused;

	tag_refused = ybuild_check_tag(b, ev->data.scalar.tag, true, ev->start_mark);
	n = ynode_new(b, YN_SCALAR, ev->start_mark);
	if (n == NULL)
		return -1;
	if (ev->data.scalar.length > LDR_MAX_SCALAR ||
	    memchr(ev->data.scalar.value, '\0', ev->data.scalar.length) != NULL) {
		ldr_error(b->l, n->mark,
			  "a value that is too long or holds a NUL byte, expected at most "
			  "%d bytes of text",
			  LDR_MAX_SCALAR);
		yn_free(n);
		return -1;
	}
	n->str = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
	/* A plain scalar without an explicit tag may be null, a boolean
	 * or a number; anything quoted (or tagged !!str) is a string. A
	 * refused tag is read as absent, so it is reported once. */
	n->plain = (ev->data.scalar.plain_implicit || tag_refused) &&
		   ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (n->str == NULL) {
		ldr_error(b->l, n->mark, "out of memory, expected to read the policy");
		yn_free(n);
		return -1;
	}
	if (ybuild_attach(b, n) != 0) {
		yn_free(n);
		return -1;
	}
	return 1;
}

/* Handles one event. Returns 1 to go on, 0 at the end, -1 on error. */
static int ybuild_event(struct ybuild *b, yaml_event_t *ev)
{
	struct ynode *n;

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_NO_EVENT:
		return 1;
	case YAML_STREAM_END_EVENT:
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->had_doc) {
			ldr_error(b->l, mark_of(ev->start_mark),
				  "a second document, expected one document");
			return -1;
		}
		b->had_doc = true;
		return 1;
	case YAML_DOCUMENT_END_EVENT:
		return 1;
	case YAML_ALIAS_EVENT:
		ldr_error(b->l, mark_of(ev->start_mark),
			  "an alias, expected a value written out (anchors and aliases are not "
			  "supported)");
		return -1;
	case YAML_SCALAR_EVENT:
		return ybuild_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		ybuild_check_tag(b,
				 ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.tag
								       : ev->data.mapping_start.tag,
				 false, ev->start_mark);
		n = ynode_new(b, ev->type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP,
			      ev->start_mark);
		if (n == NULL)
			return -1;
		if (b->depth >= LDR_MAX_DEPTH) {
			ldr_error(b->l, n->mark, "nesting deeper than %d levels, expected a flatter "
				  "policy", LDR_MAX_DEPTH);
			yn_free(n);
			return -1;
		}
		if (ybuild_attach(b, n) != 0) {
			yn_free(n);
			return -1;
		}
		b->stack[b->depth++] = n;
		return 1;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth == 0) {
			/* libyaml guarantees balance; be defensive, and loud. */
			ldr_error(b->l, mark_of(ev->start_mark),
				  "an unbalanced end of a collection, expected valid YAML");
			return -1;
		}
		n = b->stack[--b->depth];
		if (n->type == YN_MAP)
			ybuild_check_dups(b, n);
		return 1;
	}
	ldr_error(b->l, mark_of(ev->start_mark), "an unknown YAML event, expected valid YAML");
	return -1;
}

/* Contract in loader_int.h. */
int yn_parse(struct ldr *l, const char *data, size_t len, struct ynode **root)
{
	struct ybuild b;
	yaml_parser_t parser;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.l = l;
	*root = NULL;
	if (!yaml_parser_initialize(&parser)) {
		ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to read the policy");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	for (;;) {
		yaml_event_t ev;
		int r;
		if (!yaml_parser_parse(&parser, &ev)) {
			struct policy_mark m = mark_of(parser.problem_mark);
			if (parser.context != NULL)
				ldr_error(l, m, "%s %s, expected valid YAML or JSON", parser.problem,
					  parser.context);
			else
				ldr_error(l, m, "%s, expected valid YAML or JSON",
					  parser.problem ? parser.problem : "a syntax error");
			rc = -1;
			break;
		}
		r = ybuild_event(&b, &ev);
		yaml_event_delete(&ev);
		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (rc != 0) {
		yn_free(b.root);
		return -1;
	}
	*root = b.root;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Scalars                                                             */
/* ------------------------------------------------------------------ */

/*
 * What a scalar is, by the YAML 1.1 core rules libyaml users expect, but
 * narrower: only the spellings below are null or boolean ("yes", "on" and
 * friends stay strings, and a key that wants a boolean refuses them), and
 * a number is whatever strtod() reads whole. Quoted scalars are strings,
 * so JSON's "true" (a string) and true (a boolean) differ as they should.
 */
enum sclass yn_class(const struct ynode *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE"};
	const char *s = n->str;

	if (!n->plain)
		return SC_STR;
	for (size_t i = 0; i < ARRAY_LEN(nulls); i++)
		if (strcmp(s, nulls[i]) == 0)
			return SC_NULL;
	for (size_t i = 0; i < ARRAY_LEN(bools); i++)
		if (strcmp(s, bools[i]) == 0)
			return SC_BOOL;
	if (*s == '-' || *s == '+')
		s++;
	if (*s >= '0' && *s <= '9') {
		char *end;
		errno = 0;
		(void)strtod(n->str, &end);
		if (*end == '\0')
			return SC_NUM;
	}
	return SC_STR;
}

/* What a node is, for "found" in error messages. */
const char *yn_describe(const struct ynode *n, char *buf, size_t buflen)
{
	char ex[200];

	switch (n->type) {
	case YN_MAP:
		return "a mapping";
	case YN_SEQ:
		return "a list";
	case YN_SCALAR:
	case YN_ANY:
		break;
	}
	ldr_excerpt(n->str, ex, sizeof(ex));
	switch (yn_class(n)) {
	case SC_NULL:
		return "an empty value (null)";
	case SC_BOOL:
		snprintf(buf, buflen, "a boolean (%s)", ex);
		return buf;
	case SC_NUM:
		snprintf(buf, buflen, "a number (%s)", ex);
		return buf;
	case SC_STR:
		break;
	}
	snprintf(buf, buflen, "a string \"%s\"", ex);
	return buf;
}

/* Reports that node n is not what was expected for key path `where`. */
void ldr_wrong_type(struct ldr *l, const struct ynode *n, const char *expected, const char *where)
{
	char buf[256];

	ldr_error(l, n->mark, "%s, expected %s for %s", yn_describe(n, buf, sizeof(buf)), expected,
		  where);
}

/* Returns the text of a string scalar, or NULL after reporting. Numbers are
 * accepted as text; null, booleans and collections are not. */
const char *ldr_want_string(struct ldr *l, const struct ynode *n, const char *expected,
			       const char *where)
{
	if (n->type == YN_SCALAR) {
		enum sclass c = yn_class(n);
		if ((c == SC_STR || c == SC_NUM) && n->str[0] != '\0')
			return n->str;
	}
	if (n->type == YN_SEQ && strstr(expected, "host") != NULL)
		/* YAML reads [::1] as a list: say how to write it. */
		ldr_wrong_type(l, n, "a host pattern (quote bracketed IPv6 literals: \"[::1]\")", where);
	else
		ldr_wrong_type(l, n, expected, where);
	return NULL;
}

/* Reads a boolean into *out. Returns 0, or -1 after reporting. */
int ldr_want_bool(struct ldr *l, const struct ynode *n, const char *where, bool *out)
{
	if (n->type == YN_SCALAR && yn_class(n) == SC_BOOL) {
		*out = (n->str[0] == 't' || n->str[0] == 'T');
		return 0;
	}
	ldr_wrong_type(l, n, "true or false", where);
	return -1;
}

/* Reads a decimal integer in [lo, hi]. Returns 0, or -1 after reporting. */
int ldr_want_uint(struct ldr *l, const struct ynode *n, const char *where, unsigned long lo,
		     unsigned long hi, unsigned long *out)
{
	char exp[128];
	unsigned long v = 0;
	const char *s;

	snprintf(exp, sizeof(exp), "an integer from %lu to %lu", lo, hi);
	if (n->type != YN_SCALAR || yn_class(n) != SC_NUM) {
		ldr_wrong_type(l, n, exp, where);
		return -1;
	}
	/* YAML 1.1 reads "010" as octal 8, JSON refuses it: ambiguous. */
	if (n->str[0] == '0' && n->str[1] != '\0') {
		snprintf(exp, sizeof(exp), "an integer from %lu to %lu without leading zeros "
			 "(YAML 1.1 reads them as octal)", lo, hi);
		ldr_wrong_type(l, n, exp, where);
		return -1;
	}
	for (s = n->str; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > hi) {
			ldr_wrong_type(l, n, exp, where);
			return -1;
		}
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < lo || v > hi) {
		ldr_wrong_type(l, n, exp, where);
		return -1;
	}
	*out = v;
	return 0;
}


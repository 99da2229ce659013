/*
 * config.c - the syntactic pass of the policy loader (SPEC §3).
 *
 * libyaml's event parser builds a small node tree that keeps the position
 * of every node (aliases are refused, depth, size and count are capped, so
 * hostile input cannot make the tree large). The tree is then walked with
 * one key table per mapping: {key, expected node type, handler}. Every
 * problem is reported as "FILE:LINE:COL: error: FOUND, expected WHAT" and
 * counted; the walk goes on, so one run shows every error of a file. The
 * semantic pass (validate.c) runs afterwards on the filled struct policy.
 *
 * JSON input (a sandbox-runtime settings file) goes through the same
 * parser: JSON is YAML flow syntax, except that libyaml refuses a TAB where
 * a token may start. Those TABs are replaced by spaces in a copy of the
 * input; libyaml counts a TAB as one column, so every position stays right.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <yaml.h>

#include "base/defaults.h"
#include "loader_int.h"

/* ------------------------------------------------------------------ */
/* Diagnostics                                                         */
/* ------------------------------------------------------------------ */

/* Contract in loader_int.h. Errors are buffered, not printed at once, so
 * the two passes' errors come out in file order; only the first
 * LDR_MAX_ERRORS_SHOWN are kept, so a hostile file cannot grow the buffer. */
void ldr_error(struct ldr *l, struct policy_mark m, const char *fmt, ...)
{
	char *msg = NULL, *line = NULL;
	va_list ap;
	int rc;

	l->nerrors++;
	if (l->errs.n >= LDR_MAX_ERRORS_SHOWN)
		return;
	va_start(ap, fmt);
	rc = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rc >= 0) {
		if (m.line > 0)
			rc = asprintf(&line, "%s:%u:%u: error: %s", l->fname, m.line, m.col, msg);
		else
			rc = asprintf(&line, "%s: error: %s", l->fname, msg);
		free(msg);
	}
	if (rc < 0 || ldr_strlist_add(&l->errs, line) != 0)
		fprintf(l->diag, "%s: error: out of memory while reporting errors\n", l->fname);
	if (rc >= 0)
		free(line);
}

/* Contract in loader_int.h. The warning is owned by the policy and freed
 * with it; an allocation failure becomes an error (never a lost warning). */
int ldr_warn(struct ldr *l, struct policy_mark m, const char *fmt, ...)
{
	char *msg = NULL, *line = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rc < 0)
		goto enomem;
	if (m.line > 0)
		rc = asprintf(&line, "%s:%u:%u: %s", l->fname, m.line, m.col, msg);
	else
		rc = asprintf(&line, "%s: %s", l->fname, msg);
	free(msg);
	if (rc < 0)
		goto enomem;
	if (ldr_strlist_add(&l->p->warnings, line) != 0) {
		free(line);
		goto enomem;
	}
	free(line);
	return 0;
enomem:
	ldr_error(l, m, "out of memory, expected to record a warning");
	return -1;
}

/* Contract in loader_int.h. Linear: lists are capped at LDR_MAX_LIST. */
bool ldr_strlist_has(const struct policy_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

/* Contract in loader_int.h. The list owns the copy; on failure the list
 * is unchanged. */
int ldr_strlist_add(struct policy_strlist *l, const char *s)
{
	char **nv;
	char *copy = strdup(s);

	if (copy == NULL)
		return -1;
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(copy);
		return -1;
	}
	l->v = nv;
	l->v[l->n++] = copy;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Node tree                                                           */
/* ------------------------------------------------------------------ */

enum ynode_type { YN_SCALAR, YN_SEQ, YN_MAP, YN_ANY };

/* One YAML node with its position. A mapping keeps key, value, key, ... */
struct ynode {
	enum ynode_type type;
	struct policy_mark mark;
	char *str;  /* scalar text, NUL-terminated (no NUL inside) */
	bool plain; /* scalar written without quotes: may be null/bool/number */
	struct ynode **kids;
	size_t n, cap;
};

/* Frees a node and its subtree; NULL is a no-op. Recursion is bounded by
 * LDR_MAX_DEPTH. */
static void ynode_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		ynode_free(n->kids[i]);
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
static void scalar_excerpt(const char *s, char *out, size_t outlen)
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
			scalar_excerpt(k->str, ex, sizeof(ex));
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
	scalar_excerpt((const char *)tag, ex, sizeof(ex));
	ldr_error(b->l, mark_of(m),
		  "a tag <%s>, expected an untagged value (tags are not supported; quote a "
		  "string instead)",
		  ex);
	return true;
}

/* Handles one event. Returns 1 to go on, 0 at the end, -1 on error. */
static int ybuild_event(struct ybuild *b, yaml_event_t *ev)
{
	struct ynode *n;
	bool tag_refused;

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
			ynode_free(n);
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
			ynode_free(n);
			return -1;
		}
		if (ybuild_attach(b, n) != 0) {
			ynode_free(n);
			return -1;
		}
		return 1;
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
			ynode_free(n);
			return -1;
		}
		if (ybuild_attach(b, n) != 0) {
			ynode_free(n);
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

/*
 * Whether the document is JSON-looking (first significant byte '{' or '['),
 * and if so a copy with every TAB outside a string replaced by a space.
 * Returns NULL and sets *copy = NULL when no copy is needed; -1 on ENOMEM.
 */
static int json_untab(const char *data, size_t len, char **copy)
{
	size_t i = 0;
	bool in_str = false, esc = false, any = false;
	char *c;

	*copy = NULL;
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i == len || (data[i] != '{' && data[i] != '['))
		return 0;
	if (memchr(data, '\t', len) == NULL)
		return 0;
	c = malloc(len + 1);
	if (c == NULL)
		return -1;
	memcpy(c, data, len);
	c[len] = '\0';
	for (i = 0; i < len; i++) {
		if (in_str) {
			if (esc)
				esc = false;
			else if (c[i] == '\\')
				esc = true;
			else if (c[i] == '"' || c[i] == '\n')
				in_str = false;
		} else if (c[i] == '"') {
			in_str = true;
		} else if (c[i] == '\t') {
			c[i] = ' ';
			any = true;
		}
	}
	if (!any) {
		free(c);
		return 0;
	}
	*copy = c;
	return 0;
}

/*
 * In a JSON-looking document (first significant byte '{' or '['), reports
 * each comma followed only by white space and a closing '}' or ']'. YAML
 * flow syntax accepts one there, JSON does not: a settings file with one
 * would be refused by sandbox-runtime, so it is refused here too, at the
 * comma's position (columns counted in characters, as libyaml does).
 */
static void json_trailing_commas(struct ldr *l, const char *data, size_t len)
{
	size_t i = 0, j;
	unsigned line = 1, col = 1;
	bool in_str = false, esc = false;

	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (j = i; j < len && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r');
	     j++)
		;
	if (j == len || (data[j] != '{' && data[j] != '['))
		return;
	for (; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		if (c == '\n' || (c == '\r' && (i + 1 == len || data[i + 1] != '\n'))) {
			line++;
			col = 1;
			in_str = false; /* libyaml reports the broken string */
			continue;
		}
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ',') {
			for (j = i + 1; j < len && (data[j] == ' ' || data[j] == '\t' ||
						    data[j] == '\n' || data[j] == '\r');
			     j++)
				;
			if (j < len && (data[j] == '}' || data[j] == ']'))
				ldr_error(l, (struct policy_mark){line, col},
					  "a trailing comma before '%c', expected a value after ',' "
					  "(JSON has no trailing commas)",
					  data[j]);
		}
		if ((c & 0xc0) != 0x80 && c != '\r')
			col++;
	}
}

/* Parses data into a node tree. Returns 0 (root may be NULL for an empty
 * document) or -1 after reporting the error. */
static int ybuild_parse(struct ldr *l, const char *data, size_t len, struct ynode **root)
{
	struct ybuild b;
	yaml_parser_t parser;
	char *copy = NULL;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.l = l;
	*root = NULL;
	json_trailing_commas(l, data, len);
	if (json_untab(data, len, &copy) != 0) {
		ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to read the policy");
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(copy);
		ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to read the policy");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)(copy ? copy : data), len);
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
	free(copy);
	if (rc != 0) {
		ynode_free(b.root);
		return -1;
	}
	*root = b.root;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Scalars                                                             */
/* ------------------------------------------------------------------ */

enum sclass { SC_NULL, SC_BOOL, SC_NUM, SC_STR };

/*
 * What a scalar is, by the YAML 1.1 core rules libyaml users expect, but
 * narrower: only the spellings below are null or boolean ("yes", "on" and
 * friends stay strings, and a key that wants a boolean refuses them), and
 * a number is whatever strtod() reads whole. Quoted scalars are strings,
 * so JSON's "true" (a string) and true (a boolean) differ as they should.
 */
static enum sclass scalar_class(const struct ynode *n)
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
static const char *describe(const struct ynode *n, char *buf, size_t buflen)
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
	scalar_excerpt(n->str, ex, sizeof(ex));
	switch (scalar_class(n)) {
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
static void wrong_type(struct ldr *l, const struct ynode *n, const char *expected, const char *where)
{
	char buf[256];

	ldr_error(l, n->mark, "%s, expected %s for %s", describe(n, buf, sizeof(buf)), expected,
		  where);
}

/* Returns the text of a string scalar, or NULL after reporting. Numbers are
 * accepted as text; null, booleans and collections are not. */
static const char *want_string(struct ldr *l, const struct ynode *n, const char *expected,
			       const char *where)
{
	if (n->type == YN_SCALAR) {
		enum sclass c = scalar_class(n);
		if ((c == SC_STR || c == SC_NUM) && n->str[0] != '\0')
			return n->str;
	}
	if (n->type == YN_SEQ && strstr(expected, "host") != NULL)
		/* YAML reads [::1] as a list: say how to write it. */
		wrong_type(l, n, "a host pattern (quote bracketed IPv6 literals: \"[::1]\")", where);
	else
		wrong_type(l, n, expected, where);
	return NULL;
}

/* Reads a boolean into *out. Returns 0, or -1 after reporting. */
static int want_bool(struct ldr *l, const struct ynode *n, const char *where, bool *out)
{
	if (n->type == YN_SCALAR && scalar_class(n) == SC_BOOL) {
		*out = (n->str[0] == 't' || n->str[0] == 'T');
		return 0;
	}
	wrong_type(l, n, "true or false", where);
	return -1;
}

/* Reads a decimal integer in [lo, hi]. Returns 0, or -1 after reporting. */
static int want_uint(struct ldr *l, const struct ynode *n, const char *where, unsigned long lo,
		     unsigned long hi, unsigned long *out)
{
	char exp[128];
	unsigned long v = 0;
	const char *s;

	snprintf(exp, sizeof(exp), "an integer from %lu to %lu", lo, hi);
	if (n->type != YN_SCALAR || scalar_class(n) != SC_NUM) {
		wrong_type(l, n, exp, where);
		return -1;
	}
	/* YAML 1.1 reads "010" as octal 8, JSON refuses it: ambiguous. */
	if (n->str[0] == '0' && n->str[1] != '\0') {
		snprintf(exp, sizeof(exp), "an integer from %lu to %lu without leading zeros "
			 "(YAML 1.1 reads them as octal)", lo, hi);
		wrong_type(l, n, exp, where);
		return -1;
	}
	for (s = n->str; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > hi) {
			wrong_type(l, n, exp, where);
			return -1;
		}
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < lo || v > hi) {
		wrong_type(l, n, exp, where);
		return -1;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Paths                                                               */
/* ------------------------------------------------------------------ */

/* Contract in loader_int.h. Purely lexical: symlinks are not resolved
 * (the path may not exist yet, and a later symlink swap would make a
 * resolution at load meaningless anyway; the launcher resolves what it
 * binds). ".." above "/" stays at "/", as the kernel does. */
char *ldr_path_expand(const char *in, const char **err)
{
	char *raw = NULL, *out, *o;
	const char *home, *s;
	size_t cap;

	*err = NULL;
	if (in[0] == '\0') {
		*err = "expected a path, got an empty string";
		return NULL;
	}
	if (in[0] == '~') {
		if (in[1] != '\0' && in[1] != '/') {
			*err = "expected \"~\" or \"~/...\" (\"~user\" is not supported)";
			return NULL;
		}
		/* As the shell does: $HOME, else the password database. */
		home = getenv("HOME");
		if (home == NULL || home[0] == '\0') {
			struct passwd *pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home == NULL || home[0] != '/') {
			*err = "expected $HOME to be an absolute path to expand \"~\"";
			return NULL;
		}
		if (asprintf(&raw, "%s/%s", home, in + 1) < 0)
			raw = NULL;
	} else if (in[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		if (cwd == NULL) {
			*err = "expected an absolute path (the working directory is unknown)";
			return NULL;
		}
		if (asprintf(&raw, "%s/%s", cwd, in) < 0)
			raw = NULL;
		free(cwd);
	} else {
		raw = strdup(in);
	}
	if (raw == NULL) {
		*err = "expected to expand the path (out of memory)";
		return NULL;
	}
	/* Lexical normalisation: walk segments, dropping "" and ".", and
	 * popping one output segment for "..". Output never exceeds input. */
	cap = strlen(raw) + 2;
	out = malloc(cap);
	if (out == NULL) {
		free(raw);
		*err = "expected to expand the path (out of memory)";
		return NULL;
	}
	o = out;
	for (s = raw; *s != '\0';) {
		const char *e;
		size_t n;
		while (*s == '/')
			s++;
		if (*s == '\0')
			break;
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == 1 && s[0] == '.') {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memcpy(o, s, n);
			o += n;
		}
		s += n;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	free(raw);
	if (strlen(out) >= PATH_MAX) {
		free(out);
		*err = "expected a path shorter than PATH_MAX";
		return NULL;
	}
	return out;
}

/* ------------------------------------------------------------------ */
/* Key tables                                                          */
/* ------------------------------------------------------------------ */

typedef void (*key_fn)(struct ldr *l, const struct ynode *v, void *ctx);

/* One known key of a mapping. handler NULL with srt set: a sandbox-runtime
 * key passavant does not implement (a warning, the value is not read). */
struct keydef {
	const char *key;
	enum ynode_type type; /* expected node type; YN_ANY: the handler checks */
	key_fn handler;
	const char *expect;   /* what the value should be, for messages */
	const char *srt_note; /* non-NULL: unimplemented sandbox-runtime key */
};

/* A table and the dotted path of the mapping it describes. */
struct keytab {
	const char *section; /* "network", "" for the top level */
	const struct keydef *keys;
	size_t n;
};

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

/* Every key table (defined after the tables, at the end of the list). */
/* Every table, for the cross-section suggestions of unknown_key(). */
static size_t all_keytabs(const struct keytab *const **out);

/* Reports an unknown key, with a suggestion from this table or, failing
 * that, the same key in another section. */
static void unknown_key(struct ldr *l, const struct ynode *k, const struct keytab *t)
{
	char ex[200], where[64];
	const char *best = NULL, *best_sec = NULL;
	size_t best_d = (size_t)-1, len = strlen(k->str);
	const struct keytab *const *all_tables;
	size_t n_all_tables = all_keytabs(&all_tables);

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
	scalar_excerpt(k->str, ex, sizeof(ex));
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

/* Whether the scalar key at index i of map appeared at an earlier index. */
static bool key_seen_before(const struct ynode *map, size_t i)
{
	for (size_t j = 0; j < i; j += 2)
		if (map->kids[j]->type == YN_SCALAR && strcmp(map->kids[j]->str, map->kids[i]->str) == 0)
			return true;
	return false;
}

/* Walks a mapping with a key table, calling each key's handler. A key
 * given twice is handled once (the duplicate is an error already). */
static void walk_map(struct ldr *l, const struct ynode *map, const struct keytab *t, void *ctx)
{
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct ynode *k = map->kids[i], *v = map->kids[i + 1];
		const struct keydef *d = NULL;
		char where[96];

		if (k->type != YN_SCALAR || scalar_class(k) == SC_NULL) {
			char buf[256];
			ldr_error(l, k->mark, "%s as a key, expected a key name",
				  describe(k, buf, sizeof(buf)));
			continue;
		}
		if (key_seen_before(map, i))
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
			wrong_type(l, v, d->expect ? d->expect : type_word(d->type), where);
			continue;
		}
		d->handler(l, v, ctx);
	}
}

/* ------------------------------------------------------------------ */
/* Host lists                                                          */
/* ------------------------------------------------------------------ */

/* Parses one host pattern entry into e. Returns 0, or -1 after reporting. */
static int parse_hostent(struct ldr *l, const struct ynode *n, const char *where, bool allow_any,
			 struct policy_hostent *e)
{
	const char *s = want_string(l, n, "a host pattern", where);
	const char *msg;
	char ex[200];

	memset(e, 0, sizeof(*e));
	if (s == NULL)
		return -1;
	msg = policy_hostpat_parse(s, allow_any, &e->pat);
	if (msg != NULL) {
		scalar_excerpt(s, ex, sizeof(ex));
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

/* Whether two parsed patterns denote the same hosts and ports. */
static bool hostpat_same(const struct policy_hostpat *a, const struct policy_hostpat *b)
{
	return a->kind == b->kind && a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* Appends every entry of a list node to out (which is empty). */
static void parse_hostlist(struct ldr *l, const struct ynode *seq, const char *where, bool allow_any,
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
		if (parse_hostent(l, seq->kids[i], where, allow_any, &e) != 0)
			continue;
		for (size_t j = 0; j < out->n; j++)
			if (hostpat_same(&out->v[j].pat, &e.pat))
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
/* network                                                             */
/* ------------------------------------------------------------------ */

static void k_allowed(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_hostlist(l, v, "network.allowedDomains", true, &l->p->allowed);
}

/* network.deniedDomains: bare "*" allowed (deny everything not allowed
 * elsewhere is the default anyway, but srt files use it). */
static void k_denied(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_hostlist(l, v, "network.deniedDomains", true, &l->p->denied);
}

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Parses the method list of one allowedMethods entry into r. */
static void parse_methods(struct ldr *l, const struct ynode *v, struct policy_method_rule *r)
{
	static const char where[] = "network.allowedMethods";

	if (v->type != YN_SEQ) {
		wrong_type(l, v, "a list of HTTP methods", where);
		return;
	}
	if (v->n == 0) {
		ldr_error(l, v->mark,
			  "an empty list, expected at least one HTTP method for %s (to block a "
			  "host, list it in network.deniedDomains)",
			  where);
		return;
	}
	r->methods = calloc(v->n, sizeof(*r->methods));
	if (r->methods == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *m = v->kids[i];
		const char *s = want_string(l, m, "an HTTP method", where);
		char ex[200], *up;
		bool ok = true, dup = false;
		size_t n;
		if (s == NULL)
			continue;
		if (strcmp(s, "*") == 0) {
			r->any_method = true;
			continue;
		}
		n = strlen(s);
		for (size_t j = 0; j < n; j++)
			if (!is_tchar((unsigned char)s[j]))
				ok = false;
		if (!ok || n > 32) {
			scalar_excerpt(s, ex, sizeof(ex));
			ldr_error(l, m->mark,
				  "\"%s\" in %s, expected an HTTP method token (RFC 9110 token "
				  "characters, at most 32) or \"*\"",
				  ex, where);
			continue;
		}
		up = strdup(s);
		if (up == NULL) {
			ldr_error(l, m->mark, "out of memory, expected to read %s", where);
			continue;
		}
		for (size_t j = 0; j < n; j++)
			if (up[j] >= 'a' && up[j] <= 'z')
				up[j] = (char)(up[j] - 'a' + 'A');
		for (size_t j = 0; j < r->n_methods; j++)
			if (strcmp(r->methods[j], up) == 0)
				dup = true;
		if (dup)
			free(up);
		else
			r->methods[r->n_methods++] = up;
	}
}

/*
 * network.allowedMethods: a mapping pattern -> methods. Two spellings of the
 * same pattern ("a.com", "A.COM.") are an error, not a merge: which list
 * applies would otherwise depend on the order in the file.
 */
static void k_methods(struct ldr *l, const struct ynode *v, void *ctx)
{
	static const char where[] = "network.allowedMethods";
	struct policy *p = l->p;

	(void)ctx;
	p->methods = calloc(v->n / 2 + 1, sizeof(*p->methods));
	if (p->methods == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		struct policy_method_rule *r = &p->methods[p->n_methods];
		bool dup = false;
		if (key_seen_before(v, i))
			continue; /* reported as a duplicate key already */
		if (parse_hostent(l, v->kids[i], where, true, &r->host) != 0)
			continue;
		for (size_t j = 0; j < p->n_methods; j++)
			if (hostpat_same(&p->methods[j].host.pat, &r->host.pat)) {
				ldr_error(l, r->host.mark,
					  "\"%s\" in %s again (same hosts as \"%s\" at line %u), "
					  "expected each host pattern once",
					  r->host.text, where, p->methods[j].host.text,
					  p->methods[j].host.mark.line);
				dup = true;
				break;
			}
		if (dup) {
			free(r->host.text);
			free(r->host.rule);
			memset(r, 0, sizeof(*r));
			continue;
		}
		p->n_methods++;
		parse_methods(l, v->kids[i + 1], r);
	}
}

/* Parses "ADDR/PREFIX" (or a bare address: a /32 or /128) into c. Returns
 * NULL or a static message saying what was expected. */
static const char *cidr_parse(const char *s, struct policy_cidr *c)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long prefix, max;

	if (alen == 0 || alen >= sizeof(addr))
		return "expected an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8";
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	memset(c->addr, 0, sizeof(c->addr));
	if (inet_pton(AF_INET, addr, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return "expected an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8";
	}
	prefix = max;
	if (slash != NULL) {
		const char *d = slash + 1;
		if (*d == '\0' || strlen(d) > 3)
			return "expected a prefix length after '/'";
		prefix = 0;
		for (; *d != '\0'; d++) {
			if (*d < '0' || *d > '9')
				return "expected a decimal prefix length after '/'";
			prefix = prefix * 10 + (unsigned long)(*d - '0');
		}
		if (prefix > max)
			return c->family == AF_INET ? "expected a prefix length from 0 to 32"
						    : "expected a prefix length from 0 to 128";
	}
	c->prefix = (unsigned)prefix;
	/* Host bits must be zero: "10.1.2.3/8" is most likely a typo. */
	for (unsigned bit = c->prefix; bit < max; bit++)
		if (c->addr[bit / 8] & (0x80u >> (bit % 8)))
			return "expected the bits after the prefix length to be zero (e.g. "
			       "10.0.0.0/8, not 10.1.2.3/8)";
	return NULL;
}

/* network.deniedResolvedAddresses: a list of CIDRs (cidr_parse). */
static void k_denied_addrs(struct ldr *l, const struct ynode *v, void *ctx)
{
	static const char where[] = "network.deniedResolvedAddresses";
	struct policy *p = l->p;

	(void)ctx;
	p->denied_addrs = calloc(v->n ? v->n : 1, sizeof(*p->denied_addrs));
	if (p->denied_addrs == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *n = v->kids[i];
		struct policy_cidr *c = &p->denied_addrs[p->n_denied_addrs];
		const char *s = want_string(l, n, "a CIDR", where), *msg;
		char ex[200];
		if (s == NULL)
			continue;
		msg = cidr_parse(s, c);
		if (msg != NULL) {
			scalar_excerpt(s, ex, sizeof(ex));
			ldr_error(l, n->mark, "\"%s\" in %s, %s", ex, where, msg);
			continue;
		}
		c->text = strdup(s);
		if (c->text == NULL || asprintf(&c->rule, "%s: %s", where, s) < 0) {
			free(c->text);
			memset(c, 0, sizeof(*c));
			ldr_error(l, n->mark, "out of memory, expected to read %s", where);
			continue;
		}
		c->mark = n->mark;
		p->n_denied_addrs++;
	}
}

/* tlsTerminate.enabled (mapping form). */
static void k_tls_enabled(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	(void)want_bool(l, v, "network.tlsTerminate.enabled", &l->p->tls_terminate);
}

/* tlsTerminate.excludeDomains: no bare "*" (that is tlsTerminate: false,
 * and saying so is clearer). */
static void k_tls_exclude(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_hostlist(l, v, "network.tlsTerminate.excludeDomains", false, &l->p->tls_exclude);
}

/*
 * Refuses a path that reads as a glob. sandbox-runtime expands "*" and "?"
 * in its filesystem lists ("**\/.env"); passavant takes paths literally,
 * so such an entry would silently deny (or hide) nothing at all. Returns
 * NULL or a static message.
 */
static const char *path_glob(const char *s)
{
	if (strpbrk(s, "*?") != NULL)
		return "expected a literal path, not a glob pattern (passavant does not expand "
		       "'*' or '?'; list each path)";
	return NULL;
}

/* Expands every path of a list node into out. check_read: each must be a
 * readable regular file now (CA bundles are read when the proxy starts). */
static void parse_pathlist(struct ldr *l, const struct ynode *v, const char *where, bool check_read,
			   struct policy_strlist *out)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *n = v->kids[i];
		const char *s = want_string(l, n, "a path", where), *err;
		char ex[200], *path;
		if (s == NULL)
			continue;
		path = (err = path_glob(s)) != NULL ? NULL : ldr_path_expand(s, &err);
		if (path == NULL) {
			scalar_excerpt(s, ex, sizeof(ex));
			ldr_error(l, n->mark, "\"%s\" in %s, %s", ex, where, err);
			continue;
		}
		if (check_read) {
			/* stat first: opening a device node can have side effects. */
			struct stat st;
			const char *why = NULL;
			int fd = -1;
			if (stat(path, &st) != 0)
				why = strerror(errno);
			else if (!S_ISREG(st.st_mode))
				why = "not a regular file";
			else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
				why = strerror(errno);
			if (fd >= 0)
				close(fd);
			if (why != NULL) {
				scalar_excerpt(s, ex, sizeof(ex));
				ldr_error(l, n->mark,
					  "\"%s\" in %s (%s), expected a readable PEM file", ex, where,
					  why);
				free(path);
				continue;
			}
		}
		if (!ldr_strlist_has(out, path) && ldr_strlist_add(out, path) != 0)
			ldr_error(l, n->mark, "out of memory, expected to read %s", where);
		free(path);
	}
}

/* tlsTerminate.extraCaCertPaths: each must be readable now. */
static void k_tls_extra_ca(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_pathlist(l, v, "network.tlsTerminate.extraCaCertPaths", true, &l->p->extra_ca);
}

static const struct keydef tls_keys[] = {
	{"enabled", YN_SCALAR, k_tls_enabled, "true or false", NULL},
	{"excludeDomains", YN_SEQ, k_tls_exclude, "a list of host patterns", NULL},
	{"extraCaCertPaths", YN_SEQ, k_tls_extra_ca, "a list of paths", NULL},
};
static const struct keytab tls_tab = {"network.tlsTerminate", tls_keys, ARRAY_LEN(tls_keys)};

/* tlsTerminate: a boolean, or a mapping {enabled, excludeDomains,
 * extraCaCertPaths} (decision recorded in docs/config.md). */
static void k_tls(struct ldr *l, const struct ynode *v, void *ctx)
{
	if (v->type == YN_MAP) {
		walk_map(l, v, &tls_tab, ctx);
		return;
	}
	if (v->type == YN_SCALAR && scalar_class(v) == SC_BOOL) {
		(void)want_bool(l, v, "network.tlsTerminate", &l->p->tls_terminate);
		return;
	}
	wrong_type(l, v, "true, false or a mapping {enabled, excludeDomains, extraCaCertPaths}",
		   "network.tlsTerminate");
}

/* network.limits.*: ranges from proxy/defaults.h; out of range is an
 * error, never a clamp. */
static void k_lim_tunnels(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (want_uint(l, v, "network.limits.maxTunnels", 1, POLICY_MAX_TUNNELS_MAX, &x) == 0)
		l->p->limits.max_tunnels = (unsigned)x;
}

static void k_lim_handshake(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (want_uint(l, v, "network.limits.handshakeTimeoutMs", 1, POLICY_TIMEOUT_MS_MAX, &x) == 0)
		l->p->limits.handshake_timeout_ms = (unsigned)x;
}

static void k_lim_idle(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (want_uint(l, v, "network.limits.idleTimeoutMs", 1, POLICY_TIMEOUT_MS_MAX, &x) == 0)
		l->p->limits.idle_timeout_ms = (unsigned)x;
}

static void k_lim_header(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (want_uint(l, v, "network.limits.maxHeaderBytes", POLICY_MAX_HEADER_BYTES_MIN,
		      POLICY_MAX_HEADER_BYTES_MAX, &x) == 0)
		l->p->limits.max_header_bytes = (size_t)x;
}

static const struct keydef limit_keys[] = {
	{"maxTunnels", YN_SCALAR, k_lim_tunnels, NULL, NULL},
	{"handshakeTimeoutMs", YN_SCALAR, k_lim_handshake, NULL, NULL},
	{"idleTimeoutMs", YN_SCALAR, k_lim_idle, NULL, NULL},
	{"maxHeaderBytes", YN_SCALAR, k_lim_header, NULL, NULL},
};
static const struct keytab limit_tab = {"network.limits", limit_keys, ARRAY_LEN(limit_keys)};

/* network.limits: a mapping of the four limits above. */
static void k_limits(struct ldr *l, const struct ynode *v, void *ctx)
{
	walk_map(l, v, &limit_tab, ctx);
}

/* network.allowAllUnixSockets (same key and meaning as sandbox-runtime). */
static void k_unix(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	(void)want_bool(l, v, "network.allowAllUnixSockets", &l->p->allow_unix_sockets);
}

static const struct keydef network_keys[] = {
	{"allowedDomains", YN_SEQ, k_allowed, "a list of host patterns", NULL},
	{"deniedDomains", YN_SEQ, k_denied, "a list of host patterns", NULL},
	{"allowedMethods", YN_MAP, k_methods, "a mapping from host pattern to a list of methods",
	 NULL},
	{"deniedResolvedAddresses", YN_SEQ, k_denied_addrs, "a list of CIDRs", NULL},
	{"tlsTerminate", YN_ANY, k_tls, NULL, NULL},
	{"limits", YN_MAP, k_limits, "a mapping", NULL},
	{"allowAllUnixSockets", YN_SCALAR, k_unix, "true or false", NULL},
	/* sandbox-runtime keys without a passavant equivalent */
	{"allowUnixSockets", YN_ANY, NULL, NULL,
	 "per-path socket rules cannot be enforced by seccomp; use allowAllUnixSockets"},
	{"allowLocalBinding", YN_ANY, NULL, NULL,
	 "the sandbox has its own loopback; binding there is always possible"},
	{"httpProxyPort", YN_ANY, NULL, NULL, "passavant runs its own proxy"},
	{"socksProxyPort", YN_ANY, NULL, NULL, "passavant has no SOCKS proxy"},
};
static const struct keytab network_tab = {"network", network_keys, ARRAY_LEN(network_keys)};

/* The network section. */
static void k_network(struct ldr *l, const struct ynode *v, void *ctx)
{
	walk_map(l, v, &network_tab, ctx);
}

/* ------------------------------------------------------------------ */
/* credentials                                                         */
/* ------------------------------------------------------------------ */

/* Per-entry state while one credential mapping is walked. */
struct cred_ctx {
	struct policy_cred_ent *c;
	const char *section; /* "credentials.envVars" or "credentials.files" */
	bool seen_name, seen_mode, seen_hosts, seen_extract;
};

/* envVars[].name: a portable variable name, since it is looked up in
 * passavant's environment and set (or unset) in the sandbox's. */
static void k_cred_name(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	const char *s = want_string(l, v, "an environment variable name", "credentials.envVars.name");
	char ex[200];
	bool ok;

	if (s == NULL)
		return;
	cc->seen_name = true;
	/* POSIX portable names: a letter or '_', then letters, digits, '_'. */
	ok = (s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'));
	for (const char *q = s; ok && *q != '\0'; q++)
		ok = (*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
		      (*q >= '0' && *q <= '9'));
	if (!ok) {
		scalar_excerpt(s, ex, sizeof(ex));
		ldr_error(l, v->mark,
			  "\"%s\" in credentials.envVars.name, expected a variable name (letters, "
			  "digits and '_', not starting with a digit)",
			  ex);
		return;
	}
	cc->c->name = strdup(s);
	if (cc->c->name == NULL)
		ldr_error(l, v->mark, "out of memory, expected to read credentials.envVars.name");
}

/* files[].path: kept as written (for messages) and expanded (for use). */
static void k_cred_path(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	const char *s = want_string(l, v, "a path", "credentials.files.path"), *err;
	char ex[200];

	if (s == NULL)
		return;
	cc->seen_name = true;
	cc->c->path = (err = path_glob(s)) != NULL ? NULL : ldr_path_expand(s, &err);
	if (cc->c->path == NULL) {
		scalar_excerpt(s, ex, sizeof(ex));
		ldr_error(l, v->mark, "\"%s\" in credentials.files.path, %s", ex, err);
		return;
	}
	cc->c->name = strdup(s);
	if (cc->c->name == NULL)
		ldr_error(l, v->mark, "out of memory, expected to read credentials.files.path");
}

/* mode: deny | mask. Required: parse_creds reports a missing one. */
static void k_cred_mode(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	char where[64];
	const char *s;

	snprintf(where, sizeof(where), "%s.mode", cc->section);
	cc->seen_mode = true; /* even when wrong: one error, not two */
	s = (v->type == YN_SCALAR && scalar_class(v) == SC_STR) ? v->str : NULL;
	if (s != NULL && strcmp(s, "deny") == 0) {
		cc->c->pub.mode = CRED_DENY;
	} else if (s != NULL && strcmp(s, "mask") == 0) {
		cc->c->pub.mode = CRED_MASK;
	} else {
		wrong_type(l, v, "deny or mask", where);
		return;
	}
}

/* injectHosts: an explicit empty list is refused (it would silently mean
 * "never inject", or be mistaken for the default). Reachability is
 * checked by validate.c once allowedDomains is known. */
static void k_cred_hosts(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	char where[64];

	snprintf(where, sizeof(where), "%s.injectHosts", cc->section);
	cc->seen_hosts = true;
	if (v->n == 0) {
		ldr_error(l, v->mark,
			  "an empty list, expected at least one host for %s (omit the key to "
			  "inject towards every allowed domain, or use mode: deny)",
			  where);
		return;
	}
	parse_hostlist(l, v, where, true, &cc->c->inject_hosts);
}

/* injectIn: a set of places; the key's mark is kept for the body-injection
 * warning. */
static void k_cred_in(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	char where[64];
	unsigned bits = 0;

	snprintf(where, sizeof(where), "%s.injectIn", cc->section);
	cc->c->inject_in_mark = v->mark;
	if (v->n == 0) {
		ldr_error(l, v->mark,
			  "an empty list, expected some of header, query, body for %s (or use "
			  "mode: deny)",
			  where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *n = v->kids[i];
		const char *s = (n->type == YN_SCALAR && scalar_class(n) == SC_STR) ? n->str : NULL;
		if (s != NULL && strcmp(s, "header") == 0)
			bits |= INJECT_HEADER;
		else if (s != NULL && strcmp(s, "query") == 0)
			bits |= INJECT_QUERY;
		else if (s != NULL && strcmp(s, "body") == 0)
			bits |= INJECT_BODY;
		else
			wrong_type(l, n, "header, query or body", where);
	}
	cc->c->pub.inject_in = bits ? bits : INJECT_HEADER;
}

/* Refuses extract patterns that could make regcomp/regexec blow up:
 * backreferences (exponential matching) and repetition that glibc expands
 * by copying the sub-expression: "x{m,n}" copies it up to max(m, n) times
 * and "x+" once more, so nested or stacked ones multiply ("((a+)+)+",
 * "a++++" grow as 2^n; found by the fuzzer). The product of all such
 * factors is capped, which is conservative for sequences ("a+b+") and
 * generous for real extract patterns (one or two "+"). */
static const char *extract_safe(const char *re)
{
	unsigned long product = 1;

	if (strlen(re) > 256)
		return "expected a pattern of at most 256 bytes";
	for (const char *s = re; *s != '\0'; s++) {
		unsigned long factor = 1;
		if (s[0] == '\\' && s[1] >= '1' && s[1] <= '9')
			return "expected no backreferences (\\1 ... \\9)";
		if (s[0] == '\\' && s[1] != '\0') {
			s++;
			continue;
		}
		if (*s == '+') {
			factor = 2;
		} else if (*s == '{') {
			unsigned long bound = 0, most = 0;
			for (s++; *s != '\0' && *s != '}'; s++) {
				if (*s >= '0' && *s <= '9') {
					if (bound <= 1000)
						bound = bound * 10 + (unsigned long)(*s - '0');
				} else {
					bound = 0;
				}
				if (bound > most)
					most = bound;
			}
			if (most > 255)
				return "expected repetition counts of at most 255";
			factor = most > 1 ? most : 1;
			if (*s == '\0')
				s--; /* let the loop end; regcomp reports the brace */
		}
		product *= factor;
		if (product > 4096)
			return "expected fewer or smaller repetitions (\"+\" and {m,n} are "
			       "expanded by copying)";
	}
	return NULL;
}

/* files[].extract: compiled here only to validate it (and its group 1);
 * the proxy compiles its own copy when it reads the file. */
static void k_cred_extract(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;
	static const char where[] = "credentials.files.extract";
	const char *s = want_string(l, v, "a POSIX extended regular expression", where), *msg;
	char ex[200], err[160];
	regex_t re;
	int rc;

	if (s == NULL)
		return;
	cc->seen_extract = true;
	scalar_excerpt(s, ex, sizeof(ex));
	msg = extract_safe(s);
	if (msg != NULL) {
		ldr_error(l, v->mark, "\"%s\" in %s, %s", ex, where, msg);
		return;
	}
	rc = regcomp(&re, s, REG_EXTENDED);
	if (rc != 0) {
		regerror(rc, &re, err, sizeof(err));
		ldr_error(l, v->mark, "\"%s\" in %s (%s), expected a POSIX extended regular expression",
			  ex, where, err);
		return;
	}
	if (re.re_nsub < 1) {
		regfree(&re);
		ldr_error(l, v->mark,
			  "\"%s\" in %s, expected a pattern with a capture group: group 1 is the "
			  "secret",
			  ex, where);
		return;
	}
	regfree(&re);
	cc->c->extract = strdup(s);
	if (cc->c->extract == NULL)
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
}

static const struct keydef env_keys[] = {
	{"name", YN_SCALAR, k_cred_name, "an environment variable name", NULL},
	{"mode", YN_SCALAR, k_cred_mode, "deny or mask", NULL},
	{"injectHosts", YN_SEQ, k_cred_hosts, "a list of host patterns", NULL},
	{"injectIn", YN_SEQ, k_cred_in, "a list of header, query, body", NULL},
};
static const struct keytab env_tab = {"credentials.envVars", env_keys, ARRAY_LEN(env_keys)};

static const struct keydef file_keys[] = {
	{"path", YN_SCALAR, k_cred_path, "a path", NULL},
	{"mode", YN_SCALAR, k_cred_mode, "deny or mask", NULL},
	{"extract", YN_SCALAR, k_cred_extract, "a POSIX extended regular expression", NULL},
	{"injectHosts", YN_SEQ, k_cred_hosts, "a list of host patterns", NULL},
	{"injectIn", YN_SEQ, k_cred_in, "a list of header, query, body", NULL},
};
static const struct keytab file_tab = {"credentials.files", file_keys, ARRAY_LEN(file_keys)};

/* Parses envVars or files: a list of mappings appended to p->creds. */
static void parse_creds(struct ldr *l, const struct ynode *v, enum policy_cred_kind kind)
{
	const struct keytab *t = kind == CRED_ENV ? &env_tab : &file_tab;
	struct policy *p = l->p;
	struct policy_cred_ent *nc;

	nc = realloc(p->creds, (p->n_creds + v->n + 1) * sizeof(*nc));
	if (nc == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", t->section);
		return;
	}
	p->creds = nc;
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *item = v->kids[i];
		struct policy_cred_ent *c = &p->creds[p->n_creds];
		struct cred_ctx cc = {.c = c, .section = t->section};
		if (item->type != YN_MAP) {
			wrong_type(l, item,
				   kind == CRED_ENV ? "a mapping {name, mode, injectHosts, injectIn}"
						    : "a mapping {path, mode, extract, injectHosts, "
						      "injectIn}",
				   t->section);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->pub.kind = kind;
		c->pub.inject_in = INJECT_HEADER;
		c->mark = item->mark;
		p->n_creds++; /* owned by p from here on, even if incomplete */
		walk_map(l, item, t, &cc);
		if (!cc.seen_name)
			ldr_error(l, item->mark, "a credential without %s, expected %s.%s",
				  kind == CRED_ENV ? "a name" : "a path", t->section,
				  kind == CRED_ENV ? "name" : "path");
		if (!cc.seen_mode)
			ldr_error(l, item->mark, "a credential without a mode, expected %s.mode: deny "
				  "or mask",
				  t->section);
		else if (c->pub.mode == CRED_DENY &&
			 (cc.seen_hosts || cc.seen_extract || c->inject_in_mark.line != 0))
			ldr_error(l, item->mark,
				  "injectHosts, injectIn or extract on a credential with mode: deny, "
				  "expected them only with mode: mask");
	}
}

/* credentials.envVars and credentials.files. */
static void k_envvars(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_creds(l, v, CRED_ENV);
}

static void k_files(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_creds(l, v, CRED_FILE);
}

/* credentials.allowPlaintextInject; its mark is kept for the warning. */
static void k_plaintext(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	if (want_bool(l, v, "credentials.allowPlaintextInject", &l->p->allow_plaintext_inject) == 0)
		l->p->plaintext_mark = v->mark;
}

static const struct keydef cred_keys[] = {
	{"envVars", YN_SEQ, k_envvars, "a list of {name, mode, injectHosts, injectIn}", NULL},
	{"files", YN_SEQ, k_files, "a list of {path, mode, extract, injectHosts, injectIn}", NULL},
	{"allowPlaintextInject", YN_SCALAR, k_plaintext, "true or false", NULL},
};
static const struct keytab cred_tab = {"credentials", cred_keys, ARRAY_LEN(cred_keys)};

/* The credentials section. */
static void k_credentials(struct ldr *l, const struct ynode *v, void *ctx)
{
	walk_map(l, v, &cred_tab, ctx);
}

/* ------------------------------------------------------------------ */
/* filesystem, audit                                                   */
/* ------------------------------------------------------------------ */

static void k_fs_deny_read(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_pathlist(l, v, "filesystem.denyRead", false, &l->p->fs[FS_DENY_READ]);
}

static void k_fs_allow_read(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_pathlist(l, v, "filesystem.allowRead", false, &l->p->fs[FS_ALLOW_READ]);
}

static void k_fs_allow_write(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_pathlist(l, v, "filesystem.allowWrite", false, &l->p->fs[FS_ALLOW_WRITE]);
}

static void k_fs_deny_write(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	parse_pathlist(l, v, "filesystem.denyWrite", false, &l->p->fs[FS_DENY_WRITE]);
}

static const struct keydef fs_keys[] = {
	{"denyRead", YN_SEQ, k_fs_deny_read, "a list of paths", NULL},
	{"allowRead", YN_SEQ, k_fs_allow_read, "a list of paths", NULL},
	{"allowWrite", YN_SEQ, k_fs_allow_write, "a list of paths", NULL},
	{"denyWrite", YN_SEQ, k_fs_deny_write, "a list of paths", NULL},
};
static const struct keytab fs_tab = {"filesystem", fs_keys, ARRAY_LEN(fs_keys)};

/* The filesystem section: four path lists (mandatory entries are added
 * by validate.c). */
static void k_filesystem(struct ldr *l, const struct ynode *v, void *ctx)
{
	walk_map(l, v, &fs_tab, ctx);
}

/* audit.path: expanded like every path; created by the proxy, not here. */
static void k_audit_path(struct ldr *l, const struct ynode *v, void *ctx)
{
	const char *s = want_string(l, v, "a path", "audit.path"), *err;
	char ex[200];

	(void)ctx;
	if (s == NULL)
		return;
	free(l->p->audit_path);
	l->p->audit_path = (err = path_glob(s)) != NULL ? NULL : ldr_path_expand(s, &err);
	if (l->p->audit_path == NULL) {
		scalar_excerpt(s, ex, sizeof(ex));
		ldr_error(l, v->mark, "\"%s\" in audit.path, %s", ex, err);
	}
}

/* audit.bodies: none | headers. */
static void k_audit_bodies(struct ldr *l, const struct ynode *v, void *ctx)
{
	const char *s = (v->type == YN_SCALAR && scalar_class(v) == SC_STR) ? v->str : NULL;

	(void)ctx;
	if (s != NULL && strcmp(s, "none") == 0)
		l->p->audit_bodies = AUDIT_BODIES_NONE;
	else if (s != NULL && strcmp(s, "headers") == 0)
		l->p->audit_bodies = AUDIT_BODIES_HEADERS;
	else
		wrong_type(l, v, "none or headers", "audit.bodies");
}

static const struct keydef audit_keys[] = {
	{"path", YN_SCALAR, k_audit_path, "a path", NULL},
	{"bodies", YN_SCALAR, k_audit_bodies, "none or headers", NULL},
};
static const struct keytab audit_tab = {"audit", audit_keys, ARRAY_LEN(audit_keys)};

/* The audit section. */
static void k_audit(struct ldr *l, const struct ynode *v, void *ctx)
{
	walk_map(l, v, &audit_tab, ctx);
}

static const struct keydef top_keys[] = {
	{"network", YN_MAP, k_network, "a mapping", NULL},
	{"credentials", YN_MAP, k_credentials, "a mapping", NULL},
	{"filesystem", YN_MAP, k_filesystem, "a mapping", NULL},
	{"audit", YN_MAP, k_audit, "a mapping", NULL},
	/* sandbox-runtime keys without a passavant equivalent */
	{"ignoreViolations", YN_ANY, NULL, NULL, "passavant refuses; it does not monitor violations"},
	{"enableWeakerNestedSandbox", YN_ANY, NULL, NULL, "passavant has no weaker mode"},
	{"ripgrep", YN_ANY, NULL, NULL, "passavant does not search for files to deny"},
	{"mandatoryDenySearchDepth", YN_ANY, NULL, NULL,
	 "passavant does not search for files to deny"},
	{"allowPty", YN_ANY, NULL, NULL, "passavant passes the terminal through"},
};
static const struct keytab top_tab = {"", top_keys, ARRAY_LEN(top_keys)};

/* Every table, for "did you mean SECTION.KEY" across sections. */
static const struct keytab *const all_tables[] = {&top_tab,  &network_tab, &tls_tab,
						  &limit_tab, &cred_tab,   &fs_tab,
						  &audit_tab, &env_tab,    &file_tab};

static size_t all_keytabs(const struct keytab *const **out)
{
	*out = all_tables;
	return ARRAY_LEN(all_tables);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* Position of a recorded warning "FNAME:LINE:COL: ..." as one number
 * (0 for a warning without a position). */
static unsigned long warning_pos(const struct ldr *l, const char *w)
{
	size_t n = strlen(l->fname);
	unsigned long line, col;
	char *end;

	if (strncmp(w, l->fname, n) != 0 || w[n] != ':')
		return 0;
	line = strtoul(w + n + 1, &end, 10);
	if (*end != ':')
		return 0;
	col = strtoul(end + 1, &end, 10);
	return line * 100000ul + col;
}

/* Orders recorded lines by position (stable), so they read top to
 * bottom whichever pass found them. */
static void lines_sort(const struct ldr *l, struct policy_strlist *w)
{
	for (size_t i = 1; i < w->n; i++) {
		char *x = w->v[i];
		unsigned long px = warning_pos(l, x);
		size_t j = i;
		while (j > 0 && warning_pos(l, w->v[j - 1]) > px) {
			w->v[j] = w->v[j - 1];
			j--;
		}
		w->v[j] = x;
	}
}

/* A fresh policy with every default of SPEC §3 filled in. */
static policy_t *policy_new(void)
{
	policy_t *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->tls_terminate = true;
	p->limits.max_tunnels = POLICY_DEFAULT_MAX_TUNNELS;
	p->limits.handshake_timeout_ms = POLICY_DEFAULT_HANDSHAKE_TIMEOUT_MS;
	p->limits.idle_timeout_ms = POLICY_DEFAULT_IDLE_TIMEOUT_MS;
	p->limits.max_header_bytes = POLICY_DEFAULT_MAX_HEADER_BYTES;
	p->audit_bodies = AUDIT_BODIES_NONE;
	return p;
}

/* Contract in loader_int.h. The order matters: the tree is built first
 * (syntax errors stop there: nothing after them has a trustworthy
 * position), then the key tables fill the policy, then the semantic pass
 * runs on whatever loaded, so one run shows every independent error. */
policy_t *ldr_load(const char *file, const char *fname, const char *data, size_t len, FILE *diag,
		   unsigned *nerrors)
{
	struct ldr l = {.fname = fname, .diag = diag, .embedded = file == NULL};
	struct ynode *root = NULL;

	*nerrors = 0;
	l.p = policy_new();
	if (l.p == NULL) {
		fprintf(diag, "%s: error: out of memory, expected to load the policy\n", fname);
		*nerrors = 1;
		return NULL;
	}
	if (file != NULL) {
		l.p->file = strdup(file);
		if (l.p->file == NULL) {
			ldr_error(&l, (struct policy_mark){0, 0},
				  "out of memory, expected to load the policy");
			goto out;
		}
	}
	if (len > POLICY_FILE_MAX_BYTES) {
		ldr_error(&l, (struct policy_mark){0, 0},
			  "a file of %zu bytes, expected at most %d bytes", len,
			  POLICY_FILE_MAX_BYTES);
		goto out;
	}
	if (ybuild_parse(&l, data, len, &root) != 0)
		goto out;
	if (root != NULL && !(root->type == YN_SCALAR && scalar_class(root) == SC_NULL)) {
		if (root->type != YN_MAP)
			wrong_type(&l, root, "a mapping of network, credentials, filesystem, audit",
				   "the policy");
		else
			walk_map(&l, root, &top_tab, NULL);
	}
	/* The semantic pass also runs after syntax errors in values, so a
	 * single run reports as much as possible; it checks what loaded. */
	policy_validate(&l);
	lines_sort(&l, &l.p->warnings);
out:
	ynode_free(root);
	lines_sort(&l, &l.errs);
	for (size_t i = 0; i < l.errs.n; i++) {
		fprintf(diag, "%s\n", l.errs.v[i]);
		free(l.errs.v[i]);
	}
	free(l.errs.v);
	if (l.nerrors > l.errs.n)
		fprintf(diag, "%s: error: %u more errors not shown\n", fname, l.nerrors - (unsigned)l.errs.n);
	*nerrors = l.nerrors;
	if (l.nerrors > 0) {
		policy_free(l.p);
		return NULL;
	}
	return l.p;
}

/* Contract in policy.h. data need not be NUL-terminated; name is also
 * what policy_file() returns and what the policy's own denyWrite entry is
 * built from. Caller frees the result with policy_free(). */
policy_t *policy_load_buffer(const char *name, const char *data, size_t len, FILE *diag,
			     unsigned *nerrors)
{
	if (data == NULL && len > 0) {
		fprintf(diag, "%s: error: no data, expected a policy\n", name);
		*nerrors = 1;
		return NULL;
	}
	return ldr_load(name, name, data ? data : "", len, diag, nerrors);
}

/* Contract in policy.h. Reads the whole file (at most POLICY_FILE_MAX_BYTES)
 * and loads it with path as its name. Only a regular file is read: a FIFO
 * or device named as the policy is refused rather than read or waited on.
 * Caller frees the result with policy_free(). */
policy_t *policy_load_file(const char *path, FILE *diag, unsigned *nerrors)
{
	struct stat st;
	char *buf = NULL;
	size_t off = 0;
	policy_t *p;
	int fd;

	*nerrors = 1;
	/* O_NONBLOCK: a FIFO named as the policy must not hang check. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(diag, "%s: error: %s, expected a readable policy file\n", path,
			strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(diag, "%s: error: not a regular file, expected a policy file\n", path);
		goto fail;
	}
	if (st.st_size > POLICY_FILE_MAX_BYTES) {
		fprintf(diag, "%s: error: a file of %lld bytes, expected at most %d bytes\n", path,
			(long long)st.st_size, POLICY_FILE_MAX_BYTES);
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		fprintf(diag, "%s: error: out of memory, expected to read the policy\n", path);
		goto fail;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(diag, "%s: error: %s, expected a readable policy file\n", path,
				strerror(errno));
			goto fail;
		}
		if (n == 0)
			break; /* the file shrank: parse what is there */
		off += (size_t)n;
	}
	close(fd);
	p = ldr_load(path, path, buf, off, diag, nerrors);
	free(buf);
	return p;
fail:
	free(buf);
	close(fd);
	return NULL;
}

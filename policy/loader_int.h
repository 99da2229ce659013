/*
 * loader_int.h - private to the policy loader: the load context shared by
 * the syntactic pass (load.c, json.c, nodes.c, keytab.c, keys_*.c), the
 * semantic pass (validate.c) and the binding to a machine (bind.c); the
 * node tree and key tables the syntactic pass walks; path helpers
 * (paths.c). Not included by the matchers or other modules.
 */
#ifndef PASSAVANT_POLICY_LOADER_INT_H
#define PASSAVANT_POLICY_LOADER_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "policy_int.h"

/* Structural caps that keep the loader fuzz-safe (see docs/config.md). */
#define LDR_MAX_DEPTH 32        /* nesting of mappings and lists */
#define LDR_MAX_NODES 200000    /* nodes in one document */
#define LDR_MAX_LIST 4096       /* entries in one list or mapping */
#define LDR_MAX_SCALAR 4096     /* bytes in one scalar */
#define LDR_MAX_ERRORS_SHOWN 50 /* further errors are counted, not printed */

/* One load: where diagnostics go and how many errors were seen. */
struct ldr {
	const char *fname; /* file name used in diagnostics */
	FILE *diag;        /* error stream */
	unsigned nerrors;  /* errors so far (printed or not) */
	policy_t *p;       /* the policy being filled */
	bool embedded;     /* loading the embedded default (no file name) */
	struct policy_strlist errs; /* the first errors, printed sorted at the end */
};

/*
 * Records one error "FILE:LINE:COL: error: MESSAGE" and counts it. The
 * first LDR_MAX_ERRORS_SHOWN are printed on l->diag at the end of the load,
 * ordered by position. A mark with line 0 reads "FILE: error: ...".
 */
void ldr_error(struct ldr *l, struct policy_mark m, const char *fmt, ...) PRINTF(3, 4) NONNULL(1, 3);

/*
 * Records one warning "FILE:LINE:COL: MESSAGE" in the policy. Returns 0, or
 * -1 on ENOMEM (which is then counted as an error).
 */
int ldr_warn(struct ldr *l, struct policy_mark m, const char *fmt, ...) PRINTF(3, 4) NONNULL(1, 3);

/*
 * Normalises a policy path lexically, without reading the machine: "." and
 * empty segments and trailing slashes go, ".." pops a segment. Three forms
 * stay apart: absolute ("/x"; ".." above "/" stays at "/"), home-relative
 * ("~" or "~/x": expanded later against a home, see policy_bind()) and
 * relative ("x", "." for the directory itself; expanded later against the
 * working directory), and in the last two a leading ".." that cannot be
 * popped is kept. Returns a malloc'd string the caller frees, or NULL with
 * *err set to a static message saying what was expected (or ENOMEM).
 */
char *ldr_path_normalize(const char *in, const char **err) NONNULL(1, 2) WUNRES MALLOC;

/*
 * Expands a normalised policy path against home (for "~") and cwd (for a
 * relative path); either may be NULL when unknown. The result is absolute
 * and normalised. Pure. Returns a malloc'd string, or NULL with *err set.
 */
char *ldr_path_resolve(const char *in, const char *home, const char *cwd, const char **err)
	NONNULL(1, 4) WUNRES MALLOC;

/* Whether a string list holds s (exact byte comparison). */
bool ldr_strlist_has(const struct policy_strlist *l, const char *s) NONNULL(1, 2);

/* Appends a copy of s. Returns 0, or -1 on ENOMEM. */
int ldr_strlist_add(struct policy_strlist *l, const char *s) NONNULL(1, 2) WUNRES;

/*
 * The semantic pass (validate.c): cross-checks and the warnings of SPEC
 * §3.7. Pure: it reads neither secrets nor the machine. Runs after the
 * syntactic pass; reports through ldr_error()/ldr_warn().
 */
void policy_validate(struct ldr *l) NONNULL(1);

/*
 * Sorts the recorded errors by position, prints them (at most
 * LDR_MAX_ERRORS_SHOWN, then a count of the rest) on l->diag and frees
 * them. Returns l->nerrors.
 */
unsigned ldr_flush_errors(struct ldr *l) NONNULL(1);

/* Orders recorded "FILE:LINE:COL: ..." lines by position (stable). */
void ldr_lines_sort(const struct ldr *l, struct policy_strlist *w) NONNULL(1, 2);

/*
 * Parses and validates a document into a fresh policy (load.c). file is
 * what policy_file() will return (NULL for the embedded default); fname is
 * the name used in diagnostics. Returns NULL when there was an error.
 */
policy_t *ldr_load(const char *file, const char *fname, const char *data, size_t len, FILE *diag,
		   unsigned *nerrors) NONNULL(2, 5, 6) WUNRES;

/* ------------------------------------------------------------------ */
/* The node tree (nodes.c)                                             */
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

/* Frees a node and its subtree; NULL is a no-op. */
void yn_free(struct ynode *n);

/*
 * Parses data (YAML, or JSON already checked by ldr_json_check()) into a
 * node tree. Returns 0 (*root may be NULL for an empty document) or -1
 * after reporting the error. The caller frees *root with yn_free().
 */
int yn_parse(struct ldr *l, const char *data, size_t len, struct ynode **root) NONNULL(1, 2, 4) WUNRES;

/* What a scalar is: null, boolean, number or string (see nodes.c). */
enum sclass { SC_NULL, SC_BOOL, SC_NUM, SC_STR };
enum sclass yn_class(const struct ynode *n) NONNULL(1);

/* Describes a scalar for "found" messages: printable, short, quoted. */
void ldr_excerpt(const char *s, char *out, size_t outlen) NONNULL(1, 2);

/* What a node is, for "found" in error messages ("a list", "a number
 * (3)", ...): static text or buf. */
const char *yn_describe(const struct ynode *n, char *buf, size_t buflen) NONNULL(1, 2);

/* Reports that node n is not what was expected for key path `where`. */
void ldr_wrong_type(struct ldr *l, const struct ynode *n, const char *expected, const char *where)
	NONNULL(1, 2, 3, 4);

/* The text of a string scalar (numbers accepted as text), or NULL after
 * reporting. */
const char *ldr_want_string(struct ldr *l, const struct ynode *n, const char *expected,
			    const char *where) NONNULL(1, 2, 3, 4);

/* Reads a boolean into *out. Returns 0, or -1 after reporting. */
int ldr_want_bool(struct ldr *l, const struct ynode *n, const char *where, bool *out)
	NONNULL(1, 2, 3, 4);

/* Reads a decimal integer in [lo, hi]. Returns 0, or -1 after reporting. */
int ldr_want_uint(struct ldr *l, const struct ynode *n, const char *where, unsigned long lo,
		  unsigned long hi, unsigned long *out) NONNULL(1, 2, 3, 6);

/* ------------------------------------------------------------------ */
/* The JSON front end (json.c)                                         */
/* ------------------------------------------------------------------ */

/*
 * For a JSON-looking document (first significant byte '{' or '['): checks
 * it strictly as RFC 8259 JSON with jansson and reports a syntax error at
 * its FILE:LINE:COL. *copy receives a copy with every TAB between tokens
 * replaced by a space when the node-tree parser needs one (else NULL; the
 * caller frees it). Returns 0 to go on with the node tree (also for a
 * YAML document), -1 when the document was refused.
 */
int ldr_json_check(struct ldr *l, const char *data, size_t len, char **copy) NONNULL(1, 2, 4) WUNRES;

/* ------------------------------------------------------------------ */
/* Key tables (keytab.c) and the tables of each section (keys_*.c)     */
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

/* The tables, for dispatch and for "did you mean SECTION.KEY". */
extern const struct keytab ldr_top_tab, ldr_network_tab, ldr_tls_tab, ldr_limit_tab,
	ldr_cred_tab, ldr_env_tab, ldr_file_tab, ldr_fs_tab, ldr_audit_tab;

/* Whether the scalar key at index i of map appeared at an earlier index. */
bool yn_key_seen_before(const struct ynode *map, size_t i) NONNULL(1);

/* The handlers of the four sections (keys_network.c, keys_creds.c), for
 * the top-level table. */
void ldr_k_network(struct ldr *l, const struct ynode *v, void *ctx) NONNULL(1, 2);
void ldr_k_credentials(struct ldr *l, const struct ynode *v, void *ctx) NONNULL(1, 2);
void ldr_k_filesystem(struct ldr *l, const struct ynode *v, void *ctx) NONNULL(1, 2);
void ldr_k_audit(struct ldr *l, const struct ynode *v, void *ctx) NONNULL(1, 2);

/* Walks a mapping with a key table, calling each key's handler. A key
 * given twice is handled once (the duplicate is an error already). */
void ldr_walk_map(struct ldr *l, const struct ynode *map, const struct keytab *t, void *ctx)
	NONNULL(1, 2, 3);

/* Parses one host pattern entry into e. Returns 0, or -1 after reporting. */
int ldr_hostent(struct ldr *l, const struct ynode *n, const char *where, bool allow_any,
		struct policy_hostent *e) NONNULL(1, 2, 3, 5);

/* Whether two parsed patterns denote the same hosts and ports. */
bool ldr_hostpat_same(const struct policy_hostpat *a, const struct policy_hostpat *b) NONNULL(1, 2);

/* Appends every entry of a list node to out (which is empty); a pattern
 * listed twice is a warning. */
void ldr_hostlist(struct ldr *l, const struct ynode *seq, const char *where, bool allow_any,
		  struct policy_hostlist *out) NONNULL(1, 2, 3, 5);

/* Reads every path of a list node, normalised (ldr_path_normalize()), into
 * out, each once; marks (may be NULL) gets each kept entry's position. */
void ldr_pathlist(struct ldr *l, const struct ynode *v, const char *where,
		  struct policy_strlist *out, struct policy_mark **marks) NONNULL(1, 2, 3, 4);

/* A normalised path from a scalar for key `where`, or NULL after
 * reporting (globs are refused: passavant takes paths literally). */
char *ldr_path_of(struct ldr *l, const struct ynode *n, const char *where) NONNULL(1, 2, 3);

#endif

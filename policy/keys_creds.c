/*
 * keys_creds.c - the credentials (SPEC §3.2), filesystem (§3.3) and audit
 * (§3.4) sections of a policy. Paths are kept normalised but unexpanded:
 * "~" and relative paths are resolved against the machine by
 * policy_bind(), so the same bytes load the same anywhere.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "loader_int.h"

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
	const char *s = ldr_want_string(l, v, "an environment variable name", "credentials.envVars.name");
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
		ldr_excerpt(s, ex, sizeof(ex));
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

/* files[].path: kept as written (for messages) and normalised (for use;
 * policy_bind() expands "~" and relative paths). */
static void k_cred_path(struct ldr *l, const struct ynode *v, void *ctx)
{
	struct cred_ctx *cc = ctx;

	/* Seen whenever it is text, even text refused below: one error. */
	if (v->type == YN_SCALAR && (yn_class(v) == SC_STR || yn_class(v) == SC_NUM) &&
	    v->str[0] != '\0')
		cc->seen_name = true;
	cc->c->path = ldr_path_of(l, v, "credentials.files.path");
	if (cc->c->path == NULL)
		return;
	cc->c->name = strdup(v->str);
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
	s = (v->type == YN_SCALAR && yn_class(v) == SC_STR) ? v->str : NULL;
	if (s != NULL && strcmp(s, "deny") == 0) {
		cc->c->pub.mode = CRED_DENY;
	} else if (s != NULL && strcmp(s, "mask") == 0) {
		cc->c->pub.mode = CRED_MASK;
	} else {
		ldr_wrong_type(l, v, "deny or mask", where);
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
	ldr_hostlist(l, v, where, true, &cc->c->inject_hosts);
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
		const char *s = (n->type == YN_SCALAR && yn_class(n) == SC_STR) ? n->str : NULL;
		if (s != NULL && strcmp(s, "header") == 0)
			bits |= INJECT_HEADER;
		else if (s != NULL && strcmp(s, "query") == 0)
			bits |= INJECT_QUERY;
		else if (s != NULL && strcmp(s, "body") == 0)
			bits |= INJECT_BODY;
		else
			ldr_wrong_type(l, n, "header, query or body", where);
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
	const char *s = ldr_want_string(l, v, "a POSIX extended regular expression", where), *msg;
	char ex[200], err[160];
	regex_t re;
	int rc;

	if (s == NULL)
		return;
	cc->seen_extract = true;
	ldr_excerpt(s, ex, sizeof(ex));
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
const struct keytab ldr_env_tab = {"credentials.envVars", env_keys, ARRAY_LEN(env_keys)};

static const struct keydef file_keys[] = {
	{"path", YN_SCALAR, k_cred_path, "a path", NULL},
	{"mode", YN_SCALAR, k_cred_mode, "deny or mask", NULL},
	{"extract", YN_SCALAR, k_cred_extract, "a POSIX extended regular expression", NULL},
	{"injectHosts", YN_SEQ, k_cred_hosts, "a list of host patterns", NULL},
	{"injectIn", YN_SEQ, k_cred_in, "a list of header, query, body", NULL},
};
const struct keytab ldr_file_tab = {"credentials.files", file_keys, ARRAY_LEN(file_keys)};

/* Parses envVars or files: a list of mappings appended to p->creds. */
static void parse_creds(struct ldr *l, const struct ynode *v, enum policy_cred_kind kind)
{
	const struct keytab *t = kind == CRED_ENV ? &ldr_env_tab : &ldr_file_tab;
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
			ldr_wrong_type(l, item,
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
		ldr_walk_map(l, item, t, &cc);
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
	if (ldr_want_bool(l, v, "credentials.allowPlaintextInject", &l->p->allow_plaintext_inject) == 0)
		l->p->plaintext_mark = v->mark;
}

/* credentials.sentinels: stable | per-session (SPEC §4.1). */
static void k_sentinels(struct ldr *l, const struct ynode *v, void *ctx)
{
	const char *s = (v->type == YN_SCALAR && yn_class(v) == SC_STR) ? v->str : NULL;

	(void)ctx;
	if (s != NULL && strcmp(s, "stable") == 0)
		l->p->sentinels = POLICY_SENTINELS_STABLE;
	else if (s != NULL && strcmp(s, "per-session") == 0)
		l->p->sentinels = POLICY_SENTINELS_PER_SESSION;
	else
		ldr_wrong_type(l, v, "stable or per-session", "credentials.sentinels");
}

static const struct keydef cred_keys[] = {
	{"envVars", YN_SEQ, k_envvars, "a list of {name, mode, injectHosts, injectIn}", NULL},
	{"files", YN_SEQ, k_files, "a list of {path, mode, extract, injectHosts, injectIn}", NULL},
	{"allowPlaintextInject", YN_SCALAR, k_plaintext, "true or false", NULL},
	{"sentinels", YN_SCALAR, k_sentinels, "stable or per-session", NULL},
};
const struct keytab ldr_cred_tab = {"credentials", cred_keys, ARRAY_LEN(cred_keys)};

/* The credentials section. */
void ldr_k_credentials(struct ldr *l, const struct ynode *v, void *ctx)
{
	ldr_walk_map(l, v, &ldr_cred_tab, ctx);
}

/* ------------------------------------------------------------------ */
/* filesystem, audit                                                   */
/* ------------------------------------------------------------------ */

static void k_fs_deny_read(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_pathlist(l, v, "filesystem.denyRead", &l->p->fs[FS_DENY_READ], NULL);
}

static void k_fs_allow_read(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_pathlist(l, v, "filesystem.allowRead", &l->p->fs[FS_ALLOW_READ], NULL);
}

static void k_fs_allow_write(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_pathlist(l, v, "filesystem.allowWrite", &l->p->fs[FS_ALLOW_WRITE], NULL);
}

static void k_fs_deny_write(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_pathlist(l, v, "filesystem.denyWrite", &l->p->fs[FS_DENY_WRITE], NULL);
}

static const struct keydef fs_keys[] = {
	{"denyRead", YN_SEQ, k_fs_deny_read, "a list of paths", NULL},
	{"allowRead", YN_SEQ, k_fs_allow_read, "a list of paths", NULL},
	{"allowWrite", YN_SEQ, k_fs_allow_write, "a list of paths", NULL},
	{"denyWrite", YN_SEQ, k_fs_deny_write, "a list of paths", NULL},
};
const struct keytab ldr_fs_tab = {"filesystem", fs_keys, ARRAY_LEN(fs_keys)};

/* The filesystem section: four path lists (mandatory entries are added
 * for the machine by policy_bind()). */
void ldr_k_filesystem(struct ldr *l, const struct ynode *v, void *ctx)
{
	ldr_walk_map(l, v, &ldr_fs_tab, ctx);
}

/* audit.path: a path like every other; created by the proxy, not here. */
static void k_audit_path(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	free(l->p->audit_path);
	l->p->audit_path = ldr_path_of(l, v, "audit.path");
}

/* audit.bodies: none | headers. */
static void k_audit_bodies(struct ldr *l, const struct ynode *v, void *ctx)
{
	const char *s = (v->type == YN_SCALAR && yn_class(v) == SC_STR) ? v->str : NULL;

	(void)ctx;
	if (s != NULL && strcmp(s, "none") == 0)
		l->p->audit_bodies = AUDIT_BODIES_NONE;
	else if (s != NULL && strcmp(s, "headers") == 0)
		l->p->audit_bodies = AUDIT_BODIES_HEADERS;
	else
		ldr_wrong_type(l, v, "none or headers", "audit.bodies");
}

static const struct keydef audit_keys[] = {
	{"path", YN_SCALAR, k_audit_path, "a path", NULL},
	{"bodies", YN_SCALAR, k_audit_bodies, "none or headers", NULL},
};
const struct keytab ldr_audit_tab = {"audit", audit_keys, ARRAY_LEN(audit_keys)};

/* The audit section. */
void ldr_k_audit(struct ldr *l, const struct ynode *v, void *ctx)
{
	ldr_walk_map(l, v, &ldr_audit_tab, ctx);
}

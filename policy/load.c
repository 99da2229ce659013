/*
 * load.c - the policy loader's entry points (SPEC §3): a document (a file
 * or a buffer) goes through the JSON check (json.c) into a node tree
 * (nodes.c), which the top-level key table below hands to each section's
 * table (keys_*.c); the semantic pass (validate.c) runs on what loaded.
 * Every problem is reported as "FILE:LINE:COL: error: FOUND, expected
 * WHAT" and counted; the walk goes on, so one run shows every error of a
 * file. Loading is pure: it reads the document and nothing else of the
 * machine (paths stay as written; policy_bind() resolves them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
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
/* The top-level table                                                 */
/* ------------------------------------------------------------------ */


static const struct keydef top_keys[] = {
	{"network", YN_MAP, ldr_k_network, "a mapping", NULL},
	{"credentials", YN_MAP, ldr_k_credentials, "a mapping", NULL},
	{"filesystem", YN_MAP, ldr_k_filesystem, "a mapping", NULL},
	{"audit", YN_MAP, ldr_k_audit, "a mapping", NULL},
	/* sandbox-runtime keys without a passavant equivalent */
	{"ignoreViolations", YN_ANY, NULL, NULL, "passavant refuses; it does not monitor violations"},
	{"enableWeakerNestedSandbox", YN_ANY, NULL, NULL, "passavant has no weaker mode"},
	{"ripgrep", YN_ANY, NULL, NULL, "passavant does not search for files to deny"},
	{"mandatoryDenySearchDepth", YN_ANY, NULL, NULL,
	 "passavant does not search for files to deny"},
	{"allowPty", YN_ANY, NULL, NULL, "passavant passes the terminal through"},
};
const struct keytab ldr_top_tab = {"", top_keys, ARRAY_LEN(top_keys)};

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

/* Contract in loader_int.h: recorded lines read top to bottom whichever
 * pass found them. */
void ldr_lines_sort(const struct ldr *l, struct policy_strlist *w)
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
	p->limits.upstream_keepalive_ms = POLICY_DEFAULT_UPSTREAM_KEEPALIVE_MS;
	p->limits.max_header_bytes = POLICY_DEFAULT_MAX_HEADER_BYTES;
	p->audit_bodies = AUDIT_BODIES_NONE;
	return p;
}

/* Contract in loader_int.h. */
unsigned ldr_flush_errors(struct ldr *l)
{
	ldr_lines_sort(l, &l->errs);
	for (size_t i = 0; i < l->errs.n; i++) {
		fprintf(l->diag, "%s\n", l->errs.v[i]);
		free(l->errs.v[i]);
	}
	free(l->errs.v);
	l->errs.v = NULL;
	if (l->nerrors > l->errs.n)
		fprintf(l->diag, "%s: error: %u more errors not shown\n", l->fname,
			l->nerrors - (unsigned)l->errs.n);
	l->errs.n = 0;
	return l->nerrors;
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
	char *copy = NULL;

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
	if (ldr_json_check(&l, data, len, &copy) != 0 ||
	    yn_parse(&l, copy != NULL ? copy : data, len, &root) != 0)
		goto out;
	if (root != NULL && !(root->type == YN_SCALAR && yn_class(root) == SC_NULL)) {
		if (root->type != YN_MAP)
			ldr_wrong_type(&l, root, "a mapping of network, credentials, filesystem, audit",
				   "the policy");
		else
			ldr_walk_map(&l, root, &ldr_top_tab, NULL);
	}
	/* The semantic pass also runs after syntax errors in values, so a
	 * single run reports as much as possible; it checks what loaded. */
	policy_validate(&l);
	ldr_lines_sort(&l, &l.p->warnings);
out:
	yn_free(root);
	free(copy);
	*nerrors = ldr_flush_errors(&l);
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
	struct stat st = {0};
	size_t len;
	policy_t *p;
	char *buf;

	*nerrors = 1;
	/* A FIFO named as the policy must not hang check (fileio.h). */
	buf = fileio_read(path, POLICY_FILE_MAX_BYTES, 0, &len, &st);
	if (buf == NULL) {
		if (errno == EINVAL)
			fprintf(diag, "%s: error: not a regular file, expected a policy file\n", path);
		else if (errno == EFBIG)
			fprintf(diag, "%s: error: a file of %lld bytes, expected at most %d bytes\n",
				path, (long long)st.st_size, POLICY_FILE_MAX_BYTES);
		else
			fprintf(diag, "%s: error: %s, expected a readable policy file\n", path,
				strerror(errno));
		return NULL;
	}
	p = ldr_load(path, path, buf, len, diag, nerrors);
	free(buf);
	return p;
}


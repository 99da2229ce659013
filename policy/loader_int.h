/*
 * loader_int.h - private to the policy loader (config.c, validate.c,
 * print.c, lookup.c, default.c, free.c): the load context shared by the
 * syntactic pass (config.c) and the semantic pass (validate.c), and the
 * small helpers both use. Not included by the matchers or other modules.
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
#define LDR_MAX_SECRET_BYTES (1024 * 1024) /* masked file read cap */

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
 * Expands a policy path: "~" and "~/x" against $HOME, a relative path
 * against the working directory; the result is absolute and lexically
 * normalised ("." and ".." segments, repeated and trailing slashes
 * removed). Returns a malloc'd string the caller frees, or NULL with *err
 * set to a static message saying what was expected (or ENOMEM).
 */
char *ldr_path_expand(const char *in, const char **err) NONNULL(1, 2) WUNRES MALLOC;

/* Whether a string list holds s (exact byte comparison). */
bool ldr_strlist_has(const struct policy_strlist *l, const char *s) NONNULL(1, 2);

/* Appends a copy of s. Returns 0, or -1 on ENOMEM. */
int ldr_strlist_add(struct policy_strlist *l, const char *s) NONNULL(1, 2) WUNRES;

/*
 * The semantic pass (validate.c): cross-checks, mandatory filesystem denies,
 * secret lengths of masked credentials, and the warnings of SPEC §3.7. Runs
 * after the syntactic pass; reports through ldr_error()/ldr_warn().
 */
void policy_validate(struct ldr *l) NONNULL(1);

/*
 * Parses and validates a document into a fresh policy (config.c). file is
 * what policy_file() will return (NULL for the embedded default); fname is
 * the name used in diagnostics. Returns NULL when there was an error.
 */
policy_t *ldr_load(const char *file, const char *fname, const char *data, size_t len, FILE *diag,
		   unsigned *nerrors) NONNULL(2, 5, 6) WUNRES;

#endif

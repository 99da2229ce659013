/*
 * masktab.c - see masktab.h.
 */
#include "tests/support/masktab.h"

#include <stdio.h>
#include <stdlib.h>

mask_table_t *test_mask_table_env(policy_t **p, const char *doc, size_t len, const char *name, const char *value,
				  const struct mask_stable *st, char *sent, size_t sentlen)
{
	unsigned nerr = 0;
	char err[256];
	mask_table_t *t;
	const char *s;

	if (setenv(name, value, 1) < 0) {
		*p = NULL;
		return NULL;
	}
	*p = policy_load_buffer("t.yaml", doc, len, stderr, &nerr);
	if (*p == NULL) {
		unsetenv(name);
		return NULL;
	}
	t = st != NULL ? mask_table_new_stable(*p, st, err, sizeof(err)) : mask_table_new(*p, err, sizeof(err));
	unsetenv(name);
	if (t == NULL || mask_table_env_count(t) != 1 || mask_table_env_get(t, 0, &s) == NULL) {
		mask_table_free(t);
		policy_free(*p);
		*p = NULL;
		return NULL;
	}
	snprintf(sent, sentlen, "%s", s);
	return t;
}

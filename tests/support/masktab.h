/*
 * masktab.h - a credential table over one environment variable, for the
 * unit tests of mask/ that build one from a policy document.
 */
#ifndef PASSAVANT_TEST_MASKTAB_H
#define PASSAVANT_TEST_MASKTAB_H

#include <stddef.h>

#include "mask/mask.h"
#include "policy/policy.h"

/*
 * Loads the policy doc (len bytes) with the environment variable name set
 * to value (unset again before returning) and builds its table: stable
 * with st (the key and ledger), per-session when st is NULL. The table
 * must hold that one value; its sentinel goes into sent (sentlen bytes).
 * Returns the table and the policy in *p (the caller frees both), or NULL
 * with *p NULL and nothing held.
 */
mask_table_t *test_mask_table_env(policy_t **p, const char *doc, size_t len, const char *name, const char *value,
				  const struct mask_stable *st, char *sent, size_t sentlen);

#endif

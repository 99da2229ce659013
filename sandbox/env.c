/*
 * env.c - the command's environment (SPEC §7): pure functions.
 *
 * The launcher does not decide which variables the command gets; its
 * caller does (proxy and trust variables, sentinels, removals of denied
 * variables: proxy/cli/plan.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

extern char **environ;

void sbx_env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* Does entry ("NAME=value") have the name name (length len)? */
static bool has_name(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

char **sbx_env_build(char *const *base, const char *const *remove, const char *const *add)
{
	size_t nb = 0, na = 0, k = 0, i, j, len;
	char **env;
	bool drop;

	if (base == NULL)
		base = environ;
	while (base != NULL && base[nb] != NULL)
		nb++;
	while (add != NULL && add[na] != NULL)
		na++;
	for (i = 0; i < na; i++)
		if (strchr(add[i], '=') == NULL || add[i][0] == '=')
			return NULL;
	env = calloc(nb + na + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; i < nb; i++) {
		len = strcspn(base[i], "=");
		drop = base[i][len] != '=';
		for (j = 0; !drop && remove != NULL && remove[j] != NULL; j++)
			drop = strlen(remove[j]) == len && strncmp(base[i], remove[j], len) == 0;
		/* A variable add sets again is dropped here and added below. */
		for (j = 0; !drop && j < na; j++)
			drop = has_name(add[j], base[i], len);
		if (drop)
			continue;
		env[k] = strdup(base[i]);
		if (env[k++] == NULL)
			goto fail;
	}
	for (i = 0; i < na; i++) {
		len = strcspn(add[i], "=");
		/* A later add of the same name wins. */
		for (j = i + 1; j < na; j++)
			if (has_name(add[j], add[i], len))
				break;
		if (j < na)
			continue;
		env[k] = strdup(add[i]);
		if (env[k++] == NULL)
			goto fail;
	}
	return env;
fail:
	sbx_env_free(env);
	return NULL;
}

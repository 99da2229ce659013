/*
 * strv.c - the CLI's string lists (strv.h).
 */
#include "proxy/cli/strv.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/log.h"

int strv_add(struct strv *sv, const char *str)
{
	char *copy;

	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap != 0 ? 2 * sv->cap : 16;
		char **v = realloc(sv->v, cap * sizeof(*v));
		if (v == NULL) {
			log_warn("run");
			return -1;
		}
		sv->v = v;
		sv->cap = cap;
	}
	copy = strdup(str);
	if (copy == NULL) {
		log_warn("run");
		return -1;
	}
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

bool strv_has(const struct strv *sv, const char *str)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], str) == 0)
			return true;
	return false;
}

int strv_add_unique(void *arg, const char *str)
{
	struct strv *sv = arg;

	return strv_has(sv, str) ? 0 : strv_add(sv, str);
}

int strv_add_join(struct strv *sv, const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name) >=
	    (int)sizeof(path)) {
		log_warnx("path too long: %s/%s", dir, name);
		return -1;
	}
	return strv_add_unique(sv, path);
}

const char *const *strv_list(const struct strv *sv)
{
	return (const char *const *)sv->v;
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

/*
 * strv.h - a growable NULL-terminated array of malloc'd strings, the
 * shape of every list the CLI hands to sbx_config (proxy/cli/ only).
 */
#ifndef PASSAVANT_CLI_STRV_H
#define PASSAVANT_CLI_STRV_H

#include <stdbool.h>
#include <stddef.h>

#include "base/attrib.h"

struct strv {
	char **v;      /* NULL-terminated once something was added */
	size_t n, cap;
};

/* Appends a copy of str. 0, or -1 after logging (ENOMEM). */
int strv_add(struct strv *sv, const char *str) NONNULL(1, 2) WUNRES;

/* Appends a copy of str unless an equal string is there. 0 or -1. Its
 * shape is sbx_path_fn's (arg: a struct strv). */
int strv_add_unique(void *sv, const char *str) NONNULL(1, 2) WUNRES;

/* Appends "dir/name" ("/name" when dir is "/") unless already there:
 * one protection per path (each costs mounts in the sandbox). 0 or -1
 * after logging (too long, ENOMEM). */
int strv_add_join(struct strv *sv, const char *dir, const char *name) NONNULL(1, 2, 3) WUNRES;

/* Does the list hold str? */
bool strv_has(const struct strv *sv, const char *str) NONNULL(1, 2);

/* The array for an sbx_config field: NULL (an empty list) while nothing
 * was added. Owned by sv. */
const char *const *strv_list(const struct strv *sv) NONNULL(1);

/* Frees every string and the array; sv is empty again. */
void strv_free(struct strv *sv) NONNULL(1);

#endif

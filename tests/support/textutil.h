/*
 * textutil.h - small text helpers several test files need: base64 and
 * lookups in a NULL-terminated environment vector.
 */
#ifndef PASSAVANT_TEST_TEXTUTIL_H
#define PASSAVANT_TEST_TEXTUTIL_H

#include <stddef.h>

/* Standard base64 (with '=' padding) of len bytes of in into out, which
 * must hold 4 * ((len + 2) / 3) + 1 bytes; NUL-terminated. */
void test_b64(const void *in, size_t len, char *out);

/* Index of the first "NAME=..." entry in env (NULL-terminated), or -1. */
int test_envv_find(char **env, const char *name);

/* Number of entries in env (NULL-terminated). */
int test_envv_count(char **env);

#endif

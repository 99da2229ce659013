/*
 * textutil.h - small text helpers several test files need: base64,
 * lookups in a NULL-terminated environment vector, substring checks,
 * random tokens and small files.
 */
#ifndef PASSAVANT_TEST_TEXTUTIL_H
#define PASSAVANT_TEST_TEXTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Standard base64 (with '=' padding) of len bytes of in into out, which
 * must hold 4 * ((len + 2) / 3) + 1 bytes; NUL-terminated. */
void test_b64(const void *in, size_t len, char *out);

/* Index of the first "NAME=..." entry in env (NULL-terminated), or -1. */
int test_envv_find(char **env, const char *name);

/* Number of entries in env (NULL-terminated). */
int test_envv_count(char **env);

/* Whether hay contains needle; false when either is NULL. */
bool test_has(const char *hay, const char *needle);

/* Whether hay (NULL: no) contains the string fmt formats (at most 4 KiB). */
bool test_hasf(const char *hay, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Non-overlapping occurrences of needle in hay (NULL or "" needle: 0). */
int test_count(const char *hay, const char *needle);

/* The last n bytes of s for a failure message ("(none)" for NULL). */
const char *test_tail(const char *s, size_t n);

/* s, or "(null)" for printing. */
const char *test_nz(const char *s);

/* n random alphanumerics (kernel CSPRNG) into out, NUL-terminated (out
 * holds n + 1 bytes; n at most 64). 0, or -1. */
int test_random_alnum(char *out, size_t n);

/* Writes text to path (test_write_file()) and sets its mode. 0, or -1. */
int test_write_file_mode(const char *path, const char *text, mode_t mode);

#endif

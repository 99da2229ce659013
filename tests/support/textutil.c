/*
 * textutil.c - small text helpers shared by tests (textutil.h).
 */
#include "tests/support/textutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "tests/support/testlib.h"

void test_b64(const void *in, size_t len, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = in;
	size_t n = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned b0 = u[i], b1 = i + 1 < len ? u[i + 1] : 0, b2 = i + 2 < len ? u[i + 2] : 0;

		out[n++] = a[b0 >> 2];
		out[n++] = a[(b0 & 3) << 4 | b1 >> 4];
		out[n++] = i + 1 < len ? a[(b1 & 15) << 2 | b2 >> 6] : '=';
		out[n++] = i + 2 < len ? a[b2 & 63] : '=';
	}
	out[n] = '\0';
}

int test_envv_find(char **env, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return i;
	return -1;
}

int test_envv_count(char **env)
{
	int i = 0;

	while (env[i] != NULL)
		i++;
	return i;
}

bool test_has(const char *hay, const char *needle)
{
	return hay != NULL && needle != NULL && strstr(hay, needle) != NULL;
}

int test_random_alnum(char *out, size_t n)
{
	static const char cs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[64];

	if (n > sizeof(rnd) || getrandom(rnd, n, 0) != (ssize_t)n)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = cs[rnd[i] % (sizeof(cs) - 1)];
	out[n] = '\0';
	return 0;
}

int test_write_file_mode(const char *path, const char *text, mode_t mode)
{
	if (test_write_file(path, text, strlen(text)) < 0)
		return -1;
	return chmod(path, mode);
}

bool test_hasf(const char *hay, const char *fmt, ...)
{
	char needle[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(needle, sizeof(needle), fmt, ap);
	va_end(ap);
	return hay != NULL && strstr(hay, needle) != NULL;
}

int test_count(const char *hay, const char *needle)
{
	size_t nlen = strlen(needle);
	int n = 0;

	if (hay == NULL || nlen == 0)
		return 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + nlen, needle))
		n++;
	return n;
}

const char *test_tail(const char *s, size_t n)
{
	size_t len;

	if (s == NULL)
		return "(none)";
	len = strlen(s);
	return len > n ? s + len - n : s;
}

const char *test_nz(const char *s)
{
	return s != NULL ? s : "(null)";
}

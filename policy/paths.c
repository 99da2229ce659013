/*
 * paths.c - policy paths, purely lexically. The loader keeps each path in
 * one of three normalised forms (absolute "/x", home-relative "~/x",
 * relative "x"), so the same bytes give the same policy on any machine;
 * policy_bind() resolves the last two against the home and working
 * directory the caller read. Symlinks are never resolved here: the path
 * may not exist yet, and a later symlink swap would make a resolution at
 * load meaningless anyway; the launcher resolves what it binds.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_int.h"

/*
 * Appends the normalised segments of s to out at *o, each as "/SEG": ""
 * and "." dropped, ".." popping the last segment written after `floor`
 * (the end of a "~" prefix). A ".." with nothing to pop is kept when
 * keep_up is set (a relative or home-relative path's leading ".."), else
 * dropped (".." above "/" stays at "/", as the kernel does). out has room
 * for strlen(s) + 1 more bytes.
 */
static void put_segments(char *out, size_t floor, size_t *o, const char *s, bool keep_up)
{
	while (*s != '\0') {
		const char *e;
		size_t n, last;

		while (*s == '/')
			s++;
		if (*s == '\0')
			break;
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == 1 && s[0] == '.') {
			s += n;
			continue;
		}
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			for (last = *o; last > floor && out[last - 1] != '/'; last--)
				;
			if (*o > floor && !(*o - last == 2 && out[last] == '.' && out[last + 1] == '.')) {
				*o = last - 1; /* drop "/SEG" */
				s += n;
				continue;
			}
			if (!keep_up) {
				s += n;
				continue;
			}
		}
		out[(*o)++] = '/';
		memcpy(out + *o, s, n);
		*o += n;
		s += n;
	}
}

/* Contract in loader_int.h. */
char *ldr_path_normalize(const char *in, const char **err)
{
	size_t o = 0, floor = 0;
	bool home = false, rel = false;
	char *out;

	*err = NULL;
	if (in[0] == '\0') {
		*err = "expected a path, got an empty string";
		return NULL;
	}
	if (in[0] == '~') {
		if (in[1] != '\0' && in[1] != '/') {
			*err = "expected \"~\" or \"~/...\" (\"~user\" is not supported)";
			return NULL;
		}
		home = true;
	} else if (in[0] != '/') {
		rel = true;
	}
	out = malloc(strlen(in) + 3);
	if (out == NULL) {
		*err = "expected to expand the path (out of memory)";
		return NULL;
	}
	if (home)
		out[o++] = '~';
	floor = o;
	put_segments(out, floor, &o, home ? in + 1 : in, home || rel);
	out[o] = '\0';
	if (rel) {
		/* Written as "/a/b": drop the leading '/', or "." for nothing. */
		if (o == 0)
			memcpy(out, ".", 2);
		else
			memmove(out, out + 1, o);
	} else if (o == floor && !home) {
		memcpy(out, "/", 2);
	}
	if (strlen(out) >= PATH_MAX) {
		free(out);
		*err = "expected a path shorter than PATH_MAX";
		return NULL;
	}
	return out;
}

/* Contract in loader_int.h. */
char *ldr_path_resolve(const char *in, const char *home, const char *cwd, const char **err)
{
	char *raw = NULL, *out;
	const char *base = NULL, *rest = in;

	*err = NULL;
	if (in[0] == '~' && (in[1] == '\0' || in[1] == '/')) {
		if (home == NULL || home[0] != '/') {
			*err = "expected $HOME to be an absolute path to expand \"~\"";
			return NULL;
		}
		base = home;
		rest = in + 1;
	} else if (in[0] != '/') {
		if (cwd == NULL || cwd[0] != '/') {
			*err = "expected an absolute path (the working directory is unknown)";
			return NULL;
		}
		base = cwd;
	}
	if (base != NULL && asprintf(&raw, "%s/%s", base, rest) < 0)
		raw = NULL;
	else if (base == NULL)
		raw = strdup(in);
	if (raw == NULL) {
		*err = "expected to expand the path (out of memory)";
		return NULL;
	}
	out = ldr_path_normalize(raw, err);
	free(raw);
	return out;
}


/*
 * pyshadow.c - modules Python's interactive interpreter imports from the
 * directory it starts in (post-run check, at the top of each writable
 * tree).
 *
 * `python3` started in a directory puts it first on sys.path, and its
 * prompt then imports modules lazily: readline and rlcompleter (3.12 and
 * before; rows of the mandatory table), _pyrepl and what it imports in
 * turn (3.13: code, traceback, dataclasses, ...), or what rlcompleter
 * imports (3.10: inspect, ast, ...). A file the command leaves there
 * under one of those names runs when the user next opens a Python prompt
 * in the project (round 15 of the attack: code.py, _colorize.py and
 * unicodedata.py with Python 3.13). The names below were measured, as
 * the closure each version imports from the current directory before
 * its first prompt (3.10 to 3.13, every standard module name planted,
 * those hit removed, again until none was hit).
 *
 * Each one made or changed in the session, as NAME.py, NAME.pyc, a
 * NAME.so or NAME.*.so extension, a package NAME/ with its __init__.py,
 * __init__.pyc or __init__*.so, a link NAME to a package directory, or
 * __pycache__/NAME.TAG.pyc, is moved aside. Only at
 * the top of each writable tree: these are also common names of a
 * project's own modules (pkg/types.py), and a prompt is usually opened
 * at a project's top (docs/sandbox.md says what this leaves).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/gitguard_int.h"

/* Sorted (strcmp), for bsearch. */
static const char *const py_names[] = {
	"__future__", "_colorize", "_curses", "_opcode", "_pyrepl", "_struct", "_wmi", "ast", "code", "codeop",
	"collections", "contextlib", "copy", "copyreg", "ctypes", "dataclasses", "dis", "enum", "fcntl",
	"functools", "importlib", "inspect", "keyword", "linecache", "msvcrt", "opcode", "operator", "platform",
	"re", "reprlib", "select", "signal", "sre_compile", "sre_constants", "sre_parse", "struct", "termios",
	"textwrap", "token", "tokenize", "traceback", "types", "unicodedata", "warnings",
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the first len bytes of name are one of py_names. */
static bool py_listed(const char *name, size_t len)
{
	char stem[32];
	const char *p = stem;

	if (len == 0 || len >= sizeof(stem))
		return false;
	memcpy(stem, name, len);
	stem[len] = '\0';
	return bsearch(&p, py_names, sizeof(py_names) / sizeof(py_names[0]), sizeof(py_names[0]), cmp_name) != NULL;
}

/* The module an entry name would be imported as: the length of its stem
 * when it is NAME.py, NAME.pyc, NAME.so or NAME.<tag>.so, else 0. */
static size_t py_stem(const char *name)
{
	const char *dot = strchr(name, '.');
	size_t n = strlen(name);

	if (dot == NULL || dot == name)
		return 0;
	if (strcmp(dot, ".py") == 0 || strcmp(dot, ".pyc") == 0)
		return (size_t)(dot - name);
	if (n > 3 && strcmp(name + n - 3, ".so") == 0)
		return (size_t)(dot - name);
	return 0;
}

/* A package NAME (open as dfd/name): its __init__ files made or changed
 * in the session, or all of them when NAME itself was. */
static void check_package(struct gg *g, int dfd, const char *name, const char *dir)
{
	char path[PATH_MAX];
	bool whole = gg_changed(g, dfd, name);
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (d == NULL) {
		(void)close(fd);
		return;
	}
	if (!gg_join(path, sizeof(path), dir, name)) {
		(void)closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "__init__.", 9) != 0 || py_stem(de->d_name) != 8 ||
		    strstr(de->d_name, SBX_GIT_QUARANTINE_SUFFIX) != NULL)
			continue;
		if (whole || gg_changed(g, dirfd(d), de->d_name))
			gg_quarantine(g, dirfd(d), path, de->d_name,
				      "a package Python's prompt imports from the directory it starts in");
	}
	(void)closedir(d);
}

/* Whether the directory a link dfd/name leads to (followed) holds an
 * __init__ made or changed in the session. */
static bool init_fresh(const struct gg *g, int dfd, const char *name)
{
	struct dirent *de;
	bool fresh = false;
	DIR *d;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (d == NULL) {
		(void)close(fd);
		return false;
	}
	while (!fresh && (de = readdir(d)) != NULL)
		fresh = strncmp(de->d_name, "__init__.", 9) == 0 && py_stem(de->d_name) == 8 &&
			gg_changed(g, dirfd(d), de->d_name);
	(void)closedir(d);
	return fresh;
}

/* The top's __pycache__ (open as dfd/__pycache__): a NAME.TAG.pyc of a
 * listed NAME made or changed in the session. Python takes it instead of
 * NAME.py when its header names the source's size and time, which the
 * command can write: a project's own older code.py does not stay safe. */
static void check_pycache(struct gg *g, int dfd)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd = openat(dfd, "__pycache__", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (d == NULL) {
		(void)close(fd);
		return;
	}
	if (!gg_join(path, sizeof(path), g->path, "__pycache__")) {
		(void)closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const char *dot = strchr(de->d_name, '.');
		size_t n = strlen(de->d_name);

		if (dot == NULL || n < 4 || strcmp(de->d_name + n - 4, ".pyc") != 0 ||
		    !py_listed(de->d_name, (size_t)(dot - de->d_name)) ||
		    strstr(de->d_name, SBX_GIT_QUARANTINE_SUFFIX) != NULL)
			continue;
		if (gg_changed(g, dirfd(d), de->d_name))
			gg_quarantine(g, dirfd(d), path, de->d_name,
				      "a compiled module Python's prompt imports from the directory it starts in");
	}
	(void)closedir(d);
}

void gg_check_py_shadow(struct gg *g, int fd)
{
	struct dirent *de;
	DIR *d;
	/* Its own open file: fd's offset stays the walk's. */
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (d == NULL) {
		(void)close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t stem = py_stem(de->d_name);
		unsigned char t = de->d_type;
		struct stat st;

		if (t == DT_UNKNOWN && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;

		if (strstr(de->d_name, SBX_GIT_QUARANTINE_SUFFIX) != NULL)
			continue;
		if (stem > 0 && py_listed(de->d_name, stem)) {
			if (gg_changed(g, fd, de->d_name))
				gg_quarantine(g, fd, g->path, de->d_name,
					      "a module Python's prompt imports from the directory it starts in");
		} else if (stem == 0 && t == DT_DIR && py_listed(de->d_name, strlen(de->d_name))) {
			check_package(g, fd, de->d_name, g->path);
		} else if (stem == 0 && t == DT_LNK && py_listed(de->d_name, strlen(de->d_name))) {
			/* Python follows it (`code -> .x` with .x/__init__.py) */
			if (gg_changed(g, fd, de->d_name) || init_fresh(g, fd, de->d_name))
				gg_quarantine(g, fd, g->path, de->d_name,
					      "a link to a package Python's prompt imports from the directory it starts in");
		} else if (t == DT_DIR && strcmp(de->d_name, "__pycache__") == 0) {
			check_pycache(g, fd);
		}
	}
	(void)closedir(d);
}

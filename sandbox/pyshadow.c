/*
 * pyshadow.c - modules named like Python's standard library at the top of
 * each writable tree (post-run check).
 *
 * `python3` started in a directory puts it first on sys.path, and its
 * prompt then imports modules lazily, from there first: readline and
 * rlcompleter (3.12 and before; rows of the mandatory table), _pyrepl and
 * what it imports in turn (3.13: code, traceback, _colorize,
 * unicodedata, ...), what rlcompleter imports (3.10: inspect, ast, ...),
 * what help() imports (pydoc, pkgutil, sysconfig, typing, ...), what the
 * user's PYTHONSTARTUP imports (pprint, ...), and help('modules') walks
 * every package. Round 15 of the attack planted code.py, _colorize.py and
 * unicodedata.py for 3.13's prompt; round 16 pydoc.py for help() and
 * pprint.py for a startup file. So not a measured list of what one path
 * imports, but every standard module name (3.10 to 3.13's
 * sys.stdlib_module_names, 320 names).
 *
 * Each one made or changed in the session, as NAME.py, NAME.pyc, a
 * NAME.so or NAME.*.so extension, a package NAME/ with its __init__.py,
 * __init__.pyc or __init__*.so, a link NAME to a package directory, or
 * __pycache__/NAME.TAG.pyc, is moved aside. Only at the top of each
 * writable tree: these are also names of a project's own modules
 * (pkg/types.py), and a prompt is usually opened at a project's top
 * (docs/sandbox.md says what this leaves). A project adding a top-level
 * module named like the standard library shadows it for its own code
 * too: rare, and reported.
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

/* Every name of sys.stdlib_module_names of Python 3.10 to 3.13 but
 * "test" (a usual name of a scratch script; no prompt path imports it):
 * sorted (strcmp), for bsearch. */
static const char *const py_names[] = {
	"__future__", "_abc", "_aix_support", "_android_support", "_ast", "_asyncio", "_bisect", "_blake2",
	"_bootsubprocess", "_bz2", "_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022", "_codecs_jp",
	"_codecs_kr", "_codecs_tw", "_collections", "_collections_abc", "_colorize", "_compat_pickle", "_compression",
	"_contextvars", "_crypt", "_csv", "_ctypes", "_curses", "_curses_panel", "_datetime", "_dbm", "_decimal",
	"_elementtree", "_frozen_importlib", "_frozen_importlib_external", "_functools", "_gdbm", "_hashlib",
	"_heapq", "_imp", "_interpchannels", "_interpqueues", "_interpreters", "_io", "_ios_support", "_json",
	"_locale", "_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec", "_multiprocessing",
	"_opcode", "_opcode_metadata", "_operator", "_osx_support", "_overlapped", "_pickle", "_posixshmem",
	"_posixsubprocess", "_py_abc", "_pydatetime", "_pydecimal", "_pyio", "_pylong", "_pyrepl", "_queue",
	"_random", "_scproxy", "_sha1", "_sha2", "_sha256", "_sha3", "_sha512", "_signal", "_sitebuiltins", "_socket",
	"_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime", "_struct", "_suggestions",
	"_symtable", "_sysconfig", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing",
	"_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_wmi", "_zoneinfo", "abc", "aifc", "antigravity",
	"argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit", "audioop", "base64", "bdb",
	"binascii", "binhex", "bisect", "builtins", "bz2", "cProfile", "calendar", "cgi", "cgitb", "chunk", "cmath",
	"cmd", "code", "codecs", "codeop", "collections", "colorsys", "compileall", "concurrent", "configparser",
	"contextlib", "contextvars", "copy", "copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime",
	"dbm", "decimal", "difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum",
	"errno", "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools", "gc",
	"genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip", "hashlib", "heapq", "hmac",
	"html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib", "inspect", "io", "ipaddress", "itertools",
	"json", "keyword", "lib2to3", "linecache", "locale", "logging", "lzma", "mailbox", "mailcap", "marshal",
	"math", "mimetypes", "mmap", "modulefinder", "msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib",
	"nt", "ntpath", "nturl2path", "numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib",
	"pdb", "pickle", "pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath",
	"pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data", "pyexpat",
	"queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter", "runpy", "sched",
	"secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal", "site", "smtpd", "smtplib", "sndhdr",
	"socket", "socketserver", "spwd", "sqlite3", "sre_compile", "sre_constants", "sre_parse", "ssl", "stat",
	"statistics", "string", "stringprep", "struct", "subprocess", "sunau", "symtable", "sys", "sysconfig",
	"syslog", "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "this", "threading", "time",
	"timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle",
	"turtledemo", "types", "typing", "unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings",
	"wave", "weakref", "webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp",
	"zipfile", "zipimport", "zlib", "zoneinfo",
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the first len bytes of name are one of py_names. */
static bool py_listed(const char *name, size_t len)
{
	char stem[96];
	const char *p = stem;

	if (len == 0 || len >= sizeof(stem))
		return false;
	memcpy(stem, name, len);
	stem[len] = '\0';
	/* sysconfig's data module is named for the platform (help() and
	 * sysconfig import it): _sysconfigdata__linux_x86_64-linux-gnu */
	if (strncmp(stem, "_sysconfigdata_", 15) == 0)
		return true;
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

/* The directory dfd/name as a DIR (flags: O_NOFOLLOW or 0), or NULL. */
static DIR *dir_at(int dfd, const char *name, int flags)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (d == NULL)
		(void)close(fd);
	return d;
}

static void check_pycache(struct gg *g, int dfd, const char *dir, bool init);

/* A package NAME (open as dfd/name): its __init__ files made or changed
 * in the session, or all of them when NAME itself was. */
static void check_package(struct gg *g, int dfd, const char *name, const char *dir)
{
	char path[PATH_MAX];
	bool whole = gg_changed(g, dfd, name);
	struct dirent *de;
	DIR *d = dir_at(dfd, name, O_NOFOLLOW);

	if (d == NULL)
		return;
	if (!gg_join(path, sizeof(path), dir, name)) {
		(void)closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "__init__.", 9) != 0 || py_stem(de->d_name) != 8 ||
		    gg_quarantined(g, dirfd(d), de->d_name, whole))
			continue;
		if (whole || gg_changed(g, dirfd(d), de->d_name))
			gg_quarantine(g, dirfd(d), path, de->d_name,
				      "a package Python's prompt imports from the directory it starts in");
	}
	/* its compiled __init__ (round 17: a project's own older package
	 * named like the standard library, its __init__.py unchanged) */
	check_pycache(g, dirfd(d), path, true);
	(void)closedir(d);
}

/* Whether the directory a link dfd/name leads to (followed) holds an
 * __init__ made or changed in the session. */
static bool init_fresh(const struct gg *g, int dfd, const char *name)
{
	struct dirent *de;
	bool fresh = false;
	DIR *d = dir_at(dfd, name, 0);

	if (d == NULL)
		return false;
	while (!fresh && (de = readdir(d)) != NULL)
		fresh = strncmp(de->d_name, "__init__.", 9) == 0 && py_stem(de->d_name) == 8 &&
			gg_changed(g, dirfd(d), de->d_name);
	(void)closedir(d);
	return fresh;
}

/* A __pycache__ in dfd (whose path is dir): a NAME.TAG.pyc made or
 * changed in the session, of a listed NAME (the top's; init: __init__ of
 * the package dfd is). Python takes it instead of NAME.py when its header
 * names the source's size and time, which the command can write: a
 * project's own older code.py does not stay safe. A __pycache__ that is a
 * link made in the session moves aside whole (round 17 of the attack:
 * Python follows it to the command's own directory). */
static void check_pycache(struct gg *g, int dfd, const char *dir, bool init)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	bool whole;
	DIR *d;

	if (fstatat(dfd, "__pycache__", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		if (gg_changed(g, dfd, "__pycache__"))
			gg_quarantine(g, dfd, dir, "__pycache__",
				      "a link as __pycache__ (Python follows it to compiled modules it imports)");
		return;
	}
	/* Changed in the session (made, or moved in by rename: round 18
	 * renamed a directory of compiled modules into place, each keeping
	 * its old ctime): every listed entry in it counts. */
	whole = gg_changed(g, dfd, "__pycache__");
	d = dir_at(dfd, "__pycache__", O_NOFOLLOW);
	if (d == NULL)
		return;
	if (!gg_join(path, sizeof(path), dir, "__pycache__")) {
		(void)closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const char *dot = strchr(de->d_name, '.');
		size_t n = strlen(de->d_name);

		if (dot == NULL || n < 4 || strcmp(de->d_name + n - 4, ".pyc") != 0 ||
		    gg_quarantined(g, dirfd(d), de->d_name, whole))
			continue;
		if (init ? (size_t)(dot - de->d_name) != 8 || strncmp(de->d_name, "__init__", 8) != 0
			 : !py_listed(de->d_name, (size_t)(dot - de->d_name)))
			continue;
		if (whole || gg_changed(g, dirfd(d), de->d_name))
			gg_quarantine(g, dirfd(d), path, de->d_name,
				      "a compiled module Python's prompt imports from the directory it starts in");
	}
	(void)closedir(d);
}

void gg_check_py_shadow(struct gg *g, int fd)
{
	struct dirent *de;
	/* Its own open file: fd's offset stays the walk's. */
	DIR *d = dir_at(fd, ".", 0);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		size_t stem = py_stem(de->d_name);
		unsigned char t = de->d_type;
		struct stat st;

		if (t == DT_UNKNOWN && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;

		if (gg_quarantined(g, fd, de->d_name, false))
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
		} else if ((t == DT_DIR || t == DT_LNK) && strcmp(de->d_name, "__pycache__") == 0) {
			check_pycache(g, fd, g->path, false);
		}
	}
	(void)closedir(d);
}

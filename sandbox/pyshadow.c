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
 *
 * The same holds beyond the standard library (round 29 of the attack):
 * `python3 -m pip install -r requirements.txt` at a project's top
 * imports pip from there first, and Jupyter starts a kernel as `python3
 * -m ipykernel_launcher` in the notebook's own directory. So the names of
 * tools run that way (tool_names[]) and every top-level name installed
 * for the host's Python (site_dirs[], read at the check) count too, in
 * the directories where a host Python starts: the tops, and each
 * directory holding a notebook. Such names are also those of a project's
 * own packages (a Django checkout has django/ at its top), whose files
 * the command may edit: these are moved aside only when new at that
 * name in the session (a file made or renamed there; the __init__ and
 * __main__ files of a package made or renamed there, or made or renamed
 * into an older one), by the walk before the session (gg_py_note());
 * names too generic to tell a
 * project's own module from an installed one (generic_names[]) count
 * only when they are tools.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
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

/* Modules run as `python3 -m NAME` from a project's directory, or whose
 * launcher Jupyter runs so, installed or not yet (once installed, a
 * planted copy still wins); and what such a tool imports from there at
 * start whether installed or not, with the current directory on
 * sys.path: IPython 8's lookups (measured: a sys.meta_path finder
 * logging every top-level name `python3 -m IPython -c pass` asks for:
 * storemagic, docrepr, jedi, ...; the review of round 29 ran a planted
 * storemagic.py), its bundled extensions (autoreload: `%load_ext`), and
 * ipykernel's requirements. Sorted (strcmp). */
static const char *const tool_names[] = {
	"IPython", "argcomplete", "astroid", "asttokens", "autopep8", "autoreload", "backcall", "bandit",
	"black", "build", "cPickle", "colorama", "comm", "coverage", "ctags", "debugpy", "decorator",
	"django", "docrepr", "executing", "flake8", "flask", "gunicorn", "hatch", "ipdb", "ipykernel",
	"ipykernel_launcher", "isort", "jedi", "jupyter", "jupyter_client", "jupyter_core", "jupyterlab",
	"matplotlib_inline", "mypy", "nbconvert", "nest_asyncio", "notebook", "nox", "org", "packaging",
	"parso", "pdm", "pexpect", "pickleshare", "pip", "pip_audit", "pipenv", "pipx", "platformdirs",
	"poetry", "pre_commit", "prompt_toolkit", "psutil", "ptyprocess", "pudb", "pure_eval",
	"pycodestyle", "pydocstyle", "pyflakes", "pygments", "pylint", "pyright", "pytest", "ruff",
	"setuptools", "sphinx", "stack_data", "storemagic", "tornado", "tox", "traitlets", "twine", "uv",
	"uvicorn", "virtualenv", "wcwidth", "wheel", "yapf", "zmq"
};

/* Installed names that are as often a project's own directories: they
 * count only as tools. Sorted (strcmp). */
static const char *const generic_names[] = {
	"api", "app", "apps", "bench", "benchmarks", "bin", "cli", "client", "common", "conf", "config",
	"core", "data", "demo", "doc", "docs", "example", "examples", "helpers", "lib", "main", "models",
	"sample", "samples", "script", "scripts", "server", "settings", "src", "test", "testing", "tests",
	"tools", "util", "utils", "web"
};

/* Where the host's Python finds installed packages (glob(3) patterns;
 * "~" is $HOME). */
static const char *const site_dirs[] = {
	"/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages",
	"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
	"~/.local/lib/python3*/site-packages",
	"/usr/lib/python3*/dist-packages",
	/* pyenv's and conda's interpreters */
	"~/.pyenv/versions/*/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages",
	"~/miniconda3/lib/python3*/site-packages", "~/anaconda3/lib/python3*/site-packages",
	"~/miniforge3/lib/python3*/site-packages",
	/* environments outside the project a tool may run from (review of
	 * round 29): virtualenvwrapper, pipenv, poetry, pipx, uv tools */
	"~/.virtualenvs/*/lib/python3*/site-packages", "~/.local/share/virtualenvs/*/lib/python3*/site-packages",
	"~/.cache/pypoetry/virtualenvs/*/lib/python3*/site-packages",
	"~/.local/pipx/venvs/*/lib/python3*/site-packages", "~/.local/share/pipx/venvs/*/lib/python3*/site-packages",
	"~/.local/share/uv/tools/*/lib/python3*/site-packages",
};

enum py_kind { PY_NONE, PY_STD, PY_TOOL };

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

/* Whether name[0..len) is a Python identifier (ASCII): what an import
 * statement can name. */
static bool py_ident(const char *name, size_t len)
{
	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* Adds name[0..len) to g's installed names. 0, or -1 (ENOMEM). */
static int installed_add(struct gg *g, const char *name, size_t len, size_t *cap)
{
	char *copy;

	if (g->npy_installed == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		char **nv = realloc(g->py_installed, ncap * sizeof(*nv));

		if (nv == NULL)
			return -1;
		g->py_installed = nv;
		*cap = ncap;
	}
	copy = strndup(name, len);
	if (copy == NULL)
		return -1;
	g->py_installed[g->npy_installed++] = copy;
	return 0;
}

static size_t py_stem(const char *name);

/* The top-level names importable from one site directory: packages,
 * NAME.py and NAME*.so (not metadata, not .pth files). */
static int installed_read_dir(struct gg *g, const char *dir, size_t *cap)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (d == NULL)
		return 0; /* no such Python here */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t stem = py_stem(de->d_name), n = strlen(de->d_name);

		if (stem == 0 && de->d_type != DT_DIR && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (stem == 0)
			stem = n; /* a package: metadata directories have a '.' or '-' */
		if (py_ident(de->d_name, stem) && strcmp(de->d_name, "__pycache__") != 0)
			rc = installed_add(g, de->d_name, stem, cap);
	}
	(void)closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the installed names once per walk (sorted, without repeats). On
 * ENOMEM, what was read is kept and the check is reported incomplete. */
static void installed_read(struct gg *g)
{
	const char *home = getenv("HOME");
	size_t cap = 0, i, j;

	if (g->py_read)
		return;
	g->py_read = true;
	for (i = 0; i < sizeof(site_dirs) / sizeof(site_dirs[0]); i++) {
		char pat[PATH_MAX];
		glob_t gl;

		if (site_dirs[i][0] == '~') {
			if (home == NULL || home[0] != '/' ||
			    (size_t)snprintf(pat, sizeof(pat), "%s%s", home, site_dirs[i] + 1) >= sizeof(pat))
				continue;
		} else {
			snprintf(pat, sizeof(pat), "%s", site_dirs[i]);
		}
		if (glob(pat, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &gl) != 0)
			continue;
		for (j = 0; j < gl.gl_pathc; j++)
			if (installed_read_dir(g, gl.gl_pathv[j], &cap) < 0) {
				gg_report_error(g, gl.gl_pathv[j], "", "cannot read the installed Python packages",
						ENOMEM);
				break;
			}
		globfree(&gl);
	}
	if (g->npy_installed > 1)
		qsort(g->py_installed, g->npy_installed, sizeof(*g->py_installed), cmp_str);
	for (i = j = 0; i < g->npy_installed; i++) {
		if (j > 0 && strcmp(g->py_installed[j - 1], g->py_installed[i]) == 0)
			free(g->py_installed[i]);
		else
			g->py_installed[j++] = g->py_installed[i];
	}
	g->npy_installed = j;
}

void gg_py_free(struct gg *g)
{
	for (size_t i = 0; i < g->npy_installed; i++)
		free(g->py_installed[i]);
	free(g->py_installed);
	g->py_installed = NULL;
	g->npy_installed = 0;
	g->py_read = false;
}

/* Whether key is in the sorted array v of n names. */
static bool in_names(const char *key, const char *const *v, size_t n)
{
	return bsearch(&key, v, n, sizeof(*v), cmp_name) != NULL;
}

/*
 * Whether stem is the top name of the module $PYTHONBREAKPOINT names
 * (review of round 39): python's breakpoint() imports "mod" of
 * "mod.func" (the part before the last '.', its top package first) from
 * sys.path, whose first entry is where python starts (the script's
 * directory; the working directory for -c, -m and the prompt). run
 * accepts the variable (ipdb.set_trace, pudb.set_trace, IPython.embed:
 * common values), and that name counts as a tool's here: made at it in
 * the session, where a host Python starts, it moves aside. The check runs
 * in run's own process, with the user's environment.
 */
static bool breakpoint_top(const char *stem)
{
	const char *v = getenv("PYTHONBREAKPOINT");
	size_t top, n = strlen(stem);

	if (v == NULL)
		return false;
	top = strcspn(v, ".");
	return v[top] == '.' && top == n && strncmp(v, stem, n) == 0;
}

/*
 * Whether entry (in the directory of the package top) is the submodule
 * $PYTHONBREAKPOINT names below top (round 40): "top.sub.f" imports
 * top.sub, so top/sub.py (.pyc, .so) or the package top/sub/ runs at
 * breakpoint(), top being a package with no __init__ at all (a
 * namespace package: its directory alone makes one, where no installed
 * one of that name wins) or one whose __init__ is the project's own.
 */
static bool breakpoint_member(const char *top, const char *entry)
{
	const char *v = getenv("PYTHONBREAKPOINT"), *sub;
	size_t tl = strlen(top), sl, stem;

	if (v == NULL || strncmp(v, top, tl) != 0 || v[tl] != '.')
		return false;
	sub = v + tl + 1;
	sl = strcspn(sub, ".");
	/* "top.f": f is an attribute, no submodule imported */
	if (sub[sl] != '.' || sl == 0)
		return false;
	if (strlen(entry) == sl && strncmp(entry, sub, sl) == 0)
		return true;
	stem = py_stem(entry);
	return stem == sl && strncmp(entry, sub, sl) == 0;
}

/* What the first len bytes of name are to a host Python: a standard
 * module name, a tool's or an installed package's, or neither. */
static enum py_kind py_kind(struct gg *g, const char *name, size_t len)
{
	char stem[96];

	if (py_listed(name, len))
		return PY_STD;
	if (len == 0 || len >= sizeof(stem) || !py_ident(name, len))
		return PY_NONE;
	memcpy(stem, name, len);
	stem[len] = '\0';
	if (in_names(stem, tool_names, sizeof(tool_names) / sizeof(tool_names[0])) || breakpoint_top(stem))
		return PY_TOOL;
	if (in_names(stem, generic_names, sizeof(generic_names) / sizeof(generic_names[0])))
		return PY_NONE;
	installed_read(g);
	return in_names(stem, (const char *const *)g->py_installed, g->npy_installed) ? PY_TOOL : PY_NONE;
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

/*
 * The directory od (gg_dir_open(): one of ours made unreadable is opened
 * up, one that stays unread moves aside or is counted; od->what NULL and
 * od->setting NULL: neither, the caller takes NULL for nothing) as a
 * DIR, or NULL. dir_done() closes it and puts the mode back.
 */
static DIR *dir_open(struct gg *g, struct gg_dir *od)
{
	int fd = gg_dir_open(g, od);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (d == NULL)
		gg_dir_close(g, od, fd);
	return d;
}

static void dir_done(struct gg *g, const struct gg_dir *od, DIR *d)
{
	(void)closedir(d);
	gg_dir_close(g, od, -1);
}

/*
 * dir_open() of a directory the check must list (dfd/name in dir;
 * nofollow, or an older link's target): one it cannot open (not gone,
 * not a link) is no empty one (round 30's family: unread meant "nothing
 * found"). Python imports through a directory it may only search (mode
 * 0100): one of ours is opened up, one changed in the session that
 * stays unread moves aside whole, as setting says, and another one is
 * counted unread.
 */
static DIR *dir_to_check(struct gg *g, struct gg_dir *od, int dfd, const char *dir, const char *name, bool nofollow,
			 const char *setting)
{
	*od = (struct gg_dir){.pfd = dfd, .dir = dir, .name = name, .nofollow = nofollow, .setting = setting,
			      .what = "cannot open a directory Python imports from where it starts, to check it"};
	return dir_open(g, od);
}

static void check_pycache(struct gg *g, int dfd, const char *dir, bool init);

/* A package NAME (open as dfd/name): its __init__ files made or changed
 * in the session, or all of them when NAME itself was. */
static void check_package(struct gg *g, int dfd, const char *name, const char *dir)
{
	char path[PATH_MAX];
	bool whole;
	struct dirent *de;
	struct gg_dir od;
	DIR *d = dir_to_check(g, &od, dfd, dir, name, true,
			      "a package Python's prompt imports from, that the check cannot read");

	if (d == NULL)
		return;
	whole = gg_dir_fresh(g, dirfd(d));
	if (!gg_join(path, sizeof(path), dir, name)) {
		dir_done(g, &od, d);
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
	dir_done(g, &od, d);
}

/* Whether the directory a link dfd/name leads to (followed) holds an
 * __init__ made or changed in the session. */
static bool init_fresh(struct gg *g, int dfd, const char *name)
{
	struct dirent *de;
	bool fresh = false;
	/* a target it cannot read counts as fresh: the link moves aside */
	struct gg_dir od = {.pfd = dfd, .dir = g->path, .name = name};
	DIR *d = dir_open(g, &od);

	if (d == NULL)
		return errno != ENOENT && errno != ENOTDIR && errno != ELOOP;
	while (!fresh && (de = readdir(d)) != NULL)
		fresh = strncmp(de->d_name, "__init__.", 9) == 0 && py_stem(de->d_name) == 8 &&
			gg_changed(g, dirfd(d), de->d_name);
	dir_done(g, &od, d);
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
	struct gg_dir od;
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
	d = dir_to_check(g, &od, dfd, dir, "__pycache__", true,
			 "a __pycache__ the check cannot read (Python imports compiled modules from it)");
	if (d == NULL)
		return;
	whole = gg_dir_fresh(g, dirfd(d));
	if (!gg_join(path, sizeof(path), dir, "__pycache__")) {
		dir_done(g, &od, d);
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
	dir_done(g, &od, d);
}

#define TOOL_WHY "a module named like a tool or an installed package, which python3 -m imports from the directory it starts in"

/* Whether name is an __init__ or __main__ file (NAME.py, .pyc, .so). */
static bool init_or_main(const char *name)
{
	return py_stem(name) == 8 && (strncmp(name, "__init__.", 9) == 0 || strncmp(name, "__main__.", 9) == 0);
}

/* A directory named like a tool or an installed package (dfd/name, in
 * g->path; flags: O_NOFOLLOW, or 0 for an older link's target): its
 * __init__ and __main__ files new at their place in the session, or all
 * of them when the directory itself is new at that name.
 * Without them it is at most a namespace package, which an installed
 * package of that name wins over, and `python3 -m NAME` finds no
 * __main__ in. The files stay where they are, so the walk still goes
 * through the directory. One the project had, edited in place, stays: it
 * shadowed the installed one before the session too. */
static void check_tool_package(struct gg *g, int dfd, const char *name, bool nofollow)
{
	char path[PATH_MAX];
	bool whole = gg_changed(g, dfd, name) && !gg_py_old(g, NULL, name);
	struct dirent *de;
	struct gg_dir od;
	DIR *d = dir_to_check(g, &od, dfd, g->path, name, nofollow,
			      "a package named like a tool, that the check cannot read");

	if (d == NULL)
		return;
	if (!gg_join(path, sizeof(path), g->path, name)) {
		dir_done(g, &od, d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if ((!init_or_main(de->d_name) && !breakpoint_member(name, de->d_name)) ||
		    gg_quarantined(g, dirfd(d), de->d_name, whole))
			continue;
		if (whole || (gg_changed(g, dirfd(d), de->d_name) && !gg_py_old(g, name, de->d_name)))
			gg_quarantine(g, dirfd(d), path, de->d_name, TOOL_WHY);
	}
	dir_done(g, &od, d);
}

/* The type of dfd/name from its record, or from fstatat. */
static unsigned char ent_type(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
}

/* The kind of an entry of a directory where Python starts: by its stem
 * (a module file) or its whole name (a package or a link to one). */
static enum py_kind ent_kind(struct gg *g, const char *name, unsigned char t)
{
	size_t stem = py_stem(name);

	if (stem > 0)
		return py_kind(g, name, stem);
	if (t == DT_DIR || t == DT_LNK)
		return py_kind(g, name, strlen(name));
	return PY_NONE;
}

void gg_py_note_dir(struct gg *g, int fd)
{
	struct dirent *de, *ie;
	struct gg_dir top = {.pfd = fd, .dir = g->path, .name = "."}, od;
	DIR *d = dir_open(g, &top), *p;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		unsigned char t = ent_type(fd, de);

		if (ent_kind(g, de->d_name, t) != PY_TOOL)
			continue;
		gg_py_note(g, NULL, de->d_name);
		/* a package, or a link to one (its target's files, by the
		 * link's name) */
		od = (struct gg_dir){.pfd = fd, .dir = g->path, .name = de->d_name, .nofollow = t == DT_DIR};
		if ((t != DT_DIR && t != DT_LNK) || (p = dir_open(g, &od)) == NULL)
			continue;
		while ((ie = readdir(p)) != NULL)
			if (init_or_main(ie->d_name) || breakpoint_member(de->d_name, ie->d_name))
				gg_py_note(g, de->d_name, ie->d_name);
		dir_done(g, &od, p);
	}
	dir_done(g, &top, d);
}

/*
 * Round 31 of the attack: __pycache__/util.cpython-311.pyc written in the
 * session for a util.py it left alone, its header carrying the source's
 * mtime and size: Python ran its code, not the source the user reviews,
 * and git showed nothing (caches are ignored). A .pyc is a cache, which
 * Python compiles again from the source: each one in the directory fd
 * (g->path) made or changed in the session, under any name, a link so
 * named too (Python opens through it; review of round 31), is removed
 * (counted, one line after the run); one that cannot be moves aside.
 * An extension module (util.cpython-311-x86_64-linux-gnu.so, util.so)
 * made or changed in the session beside util.py takes its place the same
 * way (Python tries extension suffixes first; *.so is ignored too): no
 * cache, so it moves aside. Every extension module counts when the
 * directory itself was made or renamed there in the session
 * (gg_dir_whole()).
 */
static bool so_shadows_source(int dfd, const char *name)
{
	char src[NAME_MAX + 1];
	const char *dot = strchr(name, '.');

	if (dot == NULL || dot == name || (size_t)(dot - name) + 3 >= sizeof(src))
		return false;
	(void)snprintf(src, sizeof(src), "%.*s.py", (int)(dot - name), name);
	return faccessat(dfd, src, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void gg_py_drop_compiled(struct gg *g, int fd)
{
	struct gg_dir top = {.pfd = fd, .dir = g->path, .name = "."};
	DIR *d = dir_open(g, &top);
	struct dirent *de;
	char **names = NULL, **nn;
	size_t n = 0;
	bool whole;

	if (d == NULL)
		return;
	/* its directory made or renamed there in the session (round
	 * 34's d10b: an extension module staged with no source beside it,
	 * then the sources moved in and the directory renamed): every
	 * extension module in it counts. Not a .pyc: one the session wrote
	 * is removed under any name in that session, and a rename moves a
	 * file's own ctime, so none is staged; a cache the user's Python
	 * wrote beside one the session wrote stays. */
	whole = gg_dir_whole(g, dirfd(d), g->path);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		unsigned char t;

		if (len <= 3 ||
		    (strcmp(de->d_name + len - 3, ".so") != 0 && (len <= 4 || strcmp(de->d_name + len - 4, ".pyc") != 0)))
			continue;
		t = ent_type(dirfd(d), de);
		if ((t != DT_REG && t != DT_LNK) ||
		    !((whole && de->d_name[len - 1] == 'o') || gg_changed(g, dirfd(d), de->d_name)))
			continue;
		if (de->d_name[len - 1] == 'o' && !so_shadows_source(dirfd(d), de->d_name))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (nn == NULL || (nn[n] = strdup(de->d_name)) == NULL) {
			names = nn != NULL ? nn : names;
			gg_report_error(g, g->path, "", "cannot check its compiled Python files", ENOMEM);
			break;
		}
		names = nn;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (names[i][len - 1] == 'o')
			gg_quarantine(g, dirfd(d), g->path, names[i],
				      "an extension module beside its NAME.py, written in the session (Python "
				      "imports it in place of the source)");
		else if (unlinkat(dirfd(d), names[i], 0) == 0)
			g->st->pyc++;
		else
			gg_quarantine(g, dirfd(d), g->path, names[i],
				      "a compiled Python file written in the session (Python loads it in place of its "
				      "source)");
		free(names[i]);
	}
	free(names);
	dir_done(g, &top, d);
}

void gg_check_py_shadow(struct gg *g, int fd)
{
	struct dirent *de;
	/* Its own open file: fd's offset stays the walk's. The walk opened
	 * fd (up, if need be): "." opens. */
	struct gg_dir top = {.pfd = fd, .dir = g->path, .name = "."};
	DIR *d = dir_open(g, &top);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		size_t stem = py_stem(de->d_name);
		unsigned char t = ent_type(fd, de);

		if (gg_quarantined(g, fd, de->d_name, false))
			continue;
		if (ent_kind(g, de->d_name, t) == PY_TOOL) {
			if (stem == 0 && t == DT_DIR)
				check_tool_package(g, fd, de->d_name, true);
			else if (gg_changed(g, fd, de->d_name) && !gg_py_old(g, NULL, de->d_name))
				gg_quarantine(g, fd, g->path, de->d_name, TOOL_WHY);
			else if (stem == 0 && t == DT_LNK)
				/* an older link: its target as a package (review of
				 * round 29: build -> _build, then _build/__main__.py) */
				check_tool_package(g, fd, de->d_name, false);
		} else if (stem > 0 && py_listed(de->d_name, stem)) {
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
	dir_done(g, &top, d);
}

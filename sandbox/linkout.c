/*
 * linkout.c - symbolic links made in the session that lead out of the
 * writable trees to where the host reads at start-up (post-run check).
 *
 * A host tool the user runs later writes through a link as through the
 * file: `python3 -m venv .venv` writes .venv/bin/activate and
 * pyvenv.cfg, `git format-patch` writes NNNN-subject.patch, a build
 * writes its outputs. Round 17 of the attack planted
 * .venv/bin/activate -> ~/.bashrc (the user's next shell ran the venv's
 * planted `ls`), pyvenv.cfg -> ~/.profile and a patch name ->
 * ~/.bash_logout (a line of the commit message ran at logout). Round 10
 * closed this inside git directories only (check_git_odd()).
 *
 * A link new in the session (its ctime, or not there at the walk before
 * the session: a directory of old links moved into place, round 18),
 * anywhere in a writable tree outside git directories, is judged fail
 * closed; docs/sandbox.md "Links out of the writable trees" has the
 * rules and why (rounds 17 to 19 of the attack): a harmless device as
 * written stays, a body through /proc or /dev/fd moves aside, a relative
 * body without "." or ".." is judged lexically, any other is followed
 * (within 10 s for all). Inside the trees, not in a git directory (by
 * name or shape), a place a kept config leads to, a settings row or a
 * home start-up place; outside, a venv's interpreter, or a system file
 * the user cannot write (directories only in immutable stores).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/gitguard_int.h"

/* Whether path is dir or below it (dir without a trailing '/'). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Whether path is in a writable tree (g->roots). */
static bool in_roots(const struct gg *g, const char *path)
{
	for (size_t i = 0; g->roots[i] != NULL; i++)
		if (under(path, g->roots[i]))
			return true;
	return false;
}

/* Whether path is one of the places of a home h that the host reads at
 * start-up (the file comment). */
static bool home_startup(const char *path, const char *h)
{
	static const char *const below[] = {".config", ".local/bin", "bin", ".ssh", ".gnupg"};
	char d[PATH_MAX];
	const char *rest;

	if (h == NULL || h[0] != '/' || strcmp(h, "/") == 0 || !under(path, h))
		return false;
	rest = path + strlen(h);
	if (rest[0] == '\0' || strchr(rest + 1, '/') == NULL)
		return true; /* the home itself, or an entry directly in it */
	for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++)
		if (snprintf(d, sizeof(d), "%s/%s", h, below[i]) < (int)sizeof(d) && under(path, d))
			return true;
	return false;
}

/* Whether the resolved target path is in the system's own trees. */
static bool system_tree(const char *path)
{
	static const char *const trees[] = {"/usr", "/bin",  "/sbin", "/lib", "/lib32", "/lib64",
					    "/libx32", "/opt", "/nix", "/snap", "/gnu"};

	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
		if (under(path, trees[i]))
			return true;
	return false;
}

/* Whether path is one of the devices a link may name: writing there
 * does nothing anywhere. */
static bool harmless_dev(const char *path)
{
	static const char *const ok[] = {"/dev/null", "/dev/zero",   "/dev/full",   "/dev/random", "/dev/urandom",
					 "/dev/tty",  "/dev/stdin",  "/dev/stdout", "/dev/stderr"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(path, ok[i]) == 0)
			return true;
	return false;
}

/* Whether the resolved target path is a place the host reads at
 * start-up or a device (the file comment). */
static bool startup_place(const char *path)
{
	static const char *const sys[] = {"/etc", "/root", "/boot", "/var/spool/cron", "/proc", "/sys"};
	const char *homes[3] = {getenv("HOME"), NULL, NULL};
	const struct passwd *pw = getpwuid(getuid());
	const char *sudo = getenv("SUDO_USER");

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (under(path, sys[i]))
			return true;
	if (under(path, "/dev"))
		return !harmless_dev(path);
	if (pw != NULL)
		homes[1] = pw->pw_dir;
	if (sudo != NULL && (pw = getpwnam(sudo)) != NULL)
		homes[2] = pw->pw_dir;
	for (size_t i = 0; i < 3; i++)
		if (home_startup(path, homes[i]))
			return true;
	return false;
}

/*
 * Where the link dir/name leads on the host, into out: followed to the
 * end (realpath), or, when that does not exist, its directory followed
 * and its last part as written. False when it cannot be told (then it is
 * not judged: nothing to write through).
 */
static bool link_target(const char *dir, const char *name, int fd, char *out)
{
	char link[PATH_MAX], to[PATH_MAX], abs[PATH_MAX], parent[PATH_MAX], *slash;
	ssize_t n;

	if (snprintf(link, sizeof(link), "%s/%s", dir, name) >= (int)sizeof(link))
		return false;
	if (realpath(link, out) != NULL)
		return true;
	if (errno != ENOENT)
		return false;
	n = readlinkat(fd, name, to, sizeof(to) - 1);
	if (n <= 0)
		return false;
	to[n] = '\0';
	if (snprintf(abs, sizeof(abs), "%s%s%s", to[0] == '/' ? "" : dir, to[0] == '/' ? "" : "/", to) >=
	    (int)sizeof(abs))
		return false;
	slash = strrchr(abs, '/');
	if (slash == NULL || slash[1] == '\0')
		return false;
	*slash = '\0';
	if (realpath(abs[0] != '\0' ? abs : "/", parent) == NULL)
		return false;
	return snprintf(out, PATH_MAX, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, slash + 1) < PATH_MAX;
}

/* Where interpreters live in a home (uv, pyenv, rye, conda): a venv made
 * in the sandbox links its bin/python there. */
static bool interpreter_store(const char *path)
{
	static const char *const stores[] = {"/.local/share/uv/python/", "/.pyenv/versions/", "/.rye/py/",
					     "/miniconda3/",		 "/anaconda3/",	       "/miniforge3/",
					     "/mambaforge/",		 "/.conda/"};

	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++)
		if (strstr(path, stores[i]) != NULL)
			return true;
	return false;
}

/* Whether dir/name is the interpreter of a venv: bin/python*, pypy*,
 * graalpy* beside a pyvenv.cfg (fd is dir), leading to an existing
 * executable file in the system's trees that the user cannot write, or
 * in an interpreter store (round 19: ~/.cargo/bin/cargo was taken). */
static bool venv_interpreter(int fd, const char *dir, const char *name, const char *target)
{
	const char *base = strrchr(dir, '/');
	struct stat st;

	if (base == NULL || strcmp(base, "/bin") != 0 ||
	    (strncmp(name, "python", 6) != 0 && strncmp(name, "pypy", 4) != 0 && strncmp(name, "graalpy", 7) != 0) ||
	    faccessat(fd, "../pyvenv.cfg", F_OK, AT_SYMLINK_NOFOLLOW) != 0 || stat(target, &st) != 0 ||
	    !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
		return false;
	return (system_tree(target) && access(target, W_OK) != 0) || interpreter_store(target);
}

/* Whether dir looks like a git directory (HEAD, and objects, refs or
 * commondir): named .git or not (a .git file's gitdir, w.git, round 19). */
static bool gitdir_like(const char *dir)
{
	char p[PATH_MAX + 16];

	if (strlen(dir) >= PATH_MAX)
		return false;
	if (snprintf(p, sizeof(p), "%s/HEAD", dir) >= (int)sizeof(p) || access(p, F_OK) != 0)
		return false;
	if (snprintf(p, sizeof(p), "%s/objects", dir) < (int)sizeof(p) && access(p, F_OK) == 0)
		return true;
	if (snprintf(p, sizeof(p), "%s/refs", dir) < (int)sizeof(p) && access(p, F_OK) == 0)
		return true;
	return snprintf(p, sizeof(p), "%s/commondir", dir) < (int)sizeof(p) && access(p, F_OK) == 0;
}

/* Whether path (absolute, in a tree whose root is rl bytes of it) is in
 * a git directory (named .git or shaped like one), on a settings row, or
 * in a place a kept config leads to (a core.hooksPath directory, an
 * included file: noted at the walk before the session). */
static bool in_tree_protected(const struct gg *g, const char *path, size_t rl)
{
	char comp[NAME_MAX + 1], prefix[PATH_MAX];
	const char *p = path + rl;

	if (strlen(path) >= sizeof(prefix))
		return true;
	while (*p != '\0') {
		const char *e;
		size_t n;

		while (*p == '/')
			p++;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 0)
			break;
		if (n <= NAME_MAX) {
			memcpy(comp, p, n);
			comp[n] = '\0';
			if (strcmp(comp, ".git") == 0 || gg_name_on_row(g, comp))
				return true;
		}
		p += n;
		memcpy(prefix, path, (size_t)(p - path));
		prefix[p - path] = '\0';
		if (gitdir_like(prefix) || (g->before != NULL && !gg_ref_new(g, prefix)))
			return true;
	}
	return false;
}

/* A relative body with no ".." and no "." component, no empty one: it
 * leads below the link's own directory, through entries the walk judges
 * themselves (new links) or that were there before (the user's own). The
 * lexical target then, else NULL. */
static bool lexical_below(const char *dir, const char *body, char *out)
{
	const char *p = body;

	if (body[0] == '/' || body[0] == '\0')
		return false;
	while (*p != '\0') {
		const char *e = strchr(p, '/');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return snprintf(out, PATH_MAX, "%s/%s", dir, body) < PATH_MAX;
}

/* Whether a directory target outside the trees is an immutable store. */
static bool immutable_store(const char *path)
{
	return under(path, "/nix/store") || under(path, "/gnu/store");
}

/* Why the link ents[i] moves aside, or NULL when it stays. */
static const char *judge(struct gg *g, int fd, const char *name)
{
	char target[PATH_MAX], body[1100];
	struct timespec now;
	struct stat st;
	size_t rl = 0;
	ssize_t n;

	n = readlinkat(fd, name, body, sizeof(body) - 1);
	if (n < 0 || (size_t)n >= sizeof(body) - 77)
		return "a symbolic link whose target is too long to judge";
	body[n] = '\0';
	/* Named as written: /dev/stdout is the writer's own (round 19:
	 * followed here it was passavant's). */
	if (harmless_dev(body))
		return NULL;
	/* Where these lead depends on who follows them (round 19:
	 * /proc/self/cwd was passavant's directory here, the user's there). */
	if (under(body, "/proc") || strstr(body, "/proc/") != NULL || strncmp(body, "/dev/fd", 7) == 0 ||
	    strncmp(body, "/dev/std", 8) == 0)
		return "a symbolic link through /proc or /dev/fd (where it leads depends on who follows it)";
	if (!lexical_below(g->path, body, target)) {
		/* A budget for what must be followed (round 18: chains of
		 * long links made the check take minutes). */
		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		if (g->links_t0.tv_sec == 0 && g->links_t0.tv_nsec == 0)
			g->links_t0 = now;
		else if ((now.tv_sec - g->links_t0.tv_sec) * 1000L +
				 (now.tv_nsec - g->links_t0.tv_nsec) / 1000000L >
			 10000)
			g->links_late = true;
		if (g->links_late)
			return "a symbolic link not judged: the check's time for links ran out (10 s)";
		if (!link_target(g->path, name, fd, target))
			return "a symbolic link whose end cannot be told (a host tool writing here could write "
			       "anywhere)";
	}
	if (in_roots(g, target)) {
		/* the components below the tree that holds it */
		for (size_t i = 0; g->roots[i] != NULL; i++)
			if (under(target, g->roots[i]) && strlen(g->roots[i]) > rl)
				rl = strlen(g->roots[i]);
		if (in_tree_protected(g, target, rl))
			return "a symbolic link to a file the host runs (a git directory, a hooks directory or a "
			       "settings file; a host tool writing here would write there)";
		if (startup_place(target))
			return "a symbolic link to a file the host reads at start-up (a host tool writing here "
			       "would write there)";
		return NULL;
	}
	if (harmless_dev(target) || venv_interpreter(fd, g->path, name, target))
		return NULL;
	/* The system's own files the user cannot write; directories only in
	 * an immutable store (a tool writes into a directory's children,
	 * which access() of the directory does not tell, round 19). */
	if (!startup_place(target) && system_tree(target) && stat(target, &st) == 0 && access(target, W_OK) != 0 &&
	    (!S_ISDIR(st.st_mode) || immutable_store(target)))
		return NULL;
	return "a symbolic link out of the writable trees (a host tool writing here would write there)";
}

void gg_check_links_out(struct gg *g, int fd, struct ent *ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *why;
		struct statx sx;

		/* a .git link has its own check (gg_check_dotgit_file()) */
		if (ents[i].type != DT_LNK || strcmp(ents[i].name, ".git") == 0)
			continue;
		if (gg_statx(fd, ents[i].name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || !S_ISLNK(sx.stx_mode))
			continue;
		if (!gg_ts_fresh(g, &sx.stx_ctime) && (g->before == NULL || gg_link_old(g, fd, ents[i].name)))
			continue;
		if ((why = judge(g, fd, ents[i].name)) == NULL)
			continue;
		gg_quarantine(g, fd, g->path, ents[i].name, why);
		/* Gone: no row check of it after this. */
		ents[i].how = CTL_NONE;
	}
}

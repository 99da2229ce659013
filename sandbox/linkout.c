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
 * A link made or changed in the session, anywhere in a writable tree,
 * whose target (followed on the host, the last part lexically when it
 * does not exist) is outside every writable tree, is moved aside when it
 * leads:
 *   - to a place the host reads at start-up: the invoking user's home
 *     directory itself or an entry directly in it (its dotfiles:
 *     .bashrc, .profile, .gitconfig, ...), below ~/.config, ~/.local/bin,
 *     ~/bin, ~/.ssh, ~/.gnupg; /etc, /root, /boot, /var/spool/cron; /dev
 *     but its harmless nodes (null, zero, full, random, urandom, tty,
 *     stdin, stdout, stderr, fd/), /proc, /sys;
 *   - or anywhere else outside the system's own trees (/usr, /bin, /sbin,
 *     /lib*, /opt, /nix, /snap, /gnu), unless to an existing executable
 *     file: a venv made in the sandbox links bin/python to an interpreter
 *     (/usr/bin/python3, ~/.local/share/uv/python/..., ~/.pyenv/...), and
 *     host tools do not write through those.
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
	return under(path, "/dev/fd");
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

void gg_check_links_out(struct gg *g, int fd, struct ent *ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char target[PATH_MAX];
		struct statx sx;

		if (ents[i].type != DT_LNK)
			continue;
		if (gg_statx(fd, ents[i].name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || !S_ISLNK(sx.stx_mode) ||
		    !gg_ts_fresh(g, &sx.stx_ctime))
			continue;
		if (!link_target(g->path, ents[i].name, fd, target) || in_roots(g, target))
			continue;
		if (!startup_place(target)) {
			struct stat st;

			if (system_tree(target) || harmless_dev(target) ||
			    (stat(target, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0))
				continue;
		}
		gg_quarantine(g, fd, g->path, ents[i].name,
			      "a symbolic link out of the writable trees (a host tool writing here would write "
			      "there)");
		/* Gone: no row check of it after this. */
		ents[i].how = CTL_NONE;
	}
}

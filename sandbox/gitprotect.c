/*
 * gitprotect.c - the mount plan half of the git guard (SPEC §3.3):
 * sbx_git_protect() names, before the sandbox starts, the control files
 * of the repositories the launcher knows about (the working directory's,
 * the allowWrite roots'), which the mount plan then makes read-only or
 * impossible to create. gitguard.c is the post-run half.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "sandbox/gitguard_int.h"
#include "sandbox/sandbox.h"


/* ------------------------------------------------------------ helpers */

/* path/name into out; false when it does not fit. */
bool gg_join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);

	return n > 0 && (size_t)n < len;
}

/* Reads at most len - 1 bytes of the regular file dfd/name (not through a
 * symlink) into buf, NUL-terminated, one trailing newline (and CR) cut.
 * Returns the length or -1 with errno. */
ssize_t gg_read_small(int dfd, const char *name, char *buf, size_t len)
{
	struct stat st;
	ssize_t total;
	int saved, fd = fileio_open_regular_at(dfd, name, FILEIO_NOFOLLOW, &st);

	if (fd < 0)
		return -1;
	total = fileio_read_full(fd, buf, len - 1);
	saved = errno;
	(void)close(fd);
	if (total < 0) {
		errno = saved;
		return -1;
	}
	buf[total] = '\0';
	while (total > 0 && (buf[total - 1] == '\n' || buf[total - 1] == '\r'))
		buf[--total] = '\0';
	return total;
}

/* The git directory named by the text of a .git file or commondir (rel
 * resolved against base), canonical, into out. False when it does not
 * resolve. */
bool gg_resolve_pointer(const char *base, const char *text, char *out)
{
	char tmp[PATH_MAX];

	if (text[0] == '/') {
		if (strlen(text) >= sizeof(tmp))
			return false;
		strcpy(tmp, text);
	} else if (!gg_join(tmp, sizeof(tmp), base, text)) {
		return false;
	}
	return realpath(tmp, out) != NULL;
}

/* ------------------------------------------------- the mount plan half */

/* The control paths of one git directory (SPEC §3.3). commondir is
 * protected only when it exists: git dies on an empty one ("failed to
 * read commondir"), so a placeholder would break git in the sandbox; a
 * commondir created in the session is the post-run check's. */
static int protect_gitdir(const char *gitdir, sbx_path_fn add, void *arg, unsigned depth)
{
	static const char *const names[] = {"config", "config.worktree", "hooks", "info"};
	static const char *const holders[] = {"modules", "worktrees"};
	char p[PATH_MAX], sub[PATH_MAX], text[PATH_MAX], common[PATH_MAX];
	struct stat st;
	struct dirent *de;
	DIR *d;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (gg_join(p, sizeof(p), gitdir, names[i]) && add(arg, p) < 0)
			return -1;
	/* Sapling working in a Git repository ("dotgit") keeps its own
	 * repository config, whose [hooks] run at every sl command, in sl/
	 * (round 36 of the attack, f4; .hg/hgrc's and .sl/config's rows):
	 * when sl/ exists its config and sharedpath are protected, else
	 * sl/ cannot be made. */
	if (gg_join(p, sizeof(p), gitdir, "sl")) {
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			if ((gg_join(sub, sizeof(sub), p, "config") && add(arg, sub) < 0) ||
			    (gg_join(sub, sizeof(sub), p, "sharedpath") && add(arg, sub) < 0))
				return -1;
		} else if (add(arg, p) < 0) {
			return -1;
		}
	}
	/* modules/ and worktrees/ hold whole git directories (submodules,
	 * linked worktrees) whose objects, HEAD and index git must write:
	 * when they exist, their members' control files are protected;
	 * when they do not, they cannot be created. */
	for (i = 0; i < 2 && depth == 0; i++) {
		if (!gg_join(p, sizeof(p), gitdir, holders[i]))
			continue;
		if (lstat(p, &st) < 0) {
			if (add(arg, p) < 0)
				return -1;
			continue;
		}
		if (!S_ISDIR(st.st_mode) || (d = opendir(p)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' || !gg_join(sub, sizeof(sub), p, de->d_name))
				continue;
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) &&
			    protect_gitdir(sub, add, arg, depth + 1) < 0) {
				(void)closedir(d);
				return -1;
			}
		}
		(void)closedir(d);
	}
	if (!gg_join(p, sizeof(p), gitdir, "commondir") || lstat(p, &st) < 0)
		return 0;
	if (add(arg, p) < 0)
		return -1;
	/* The common directory's config and hooks are read through it. */
	fd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (gg_read_small(fd, "commondir", text, sizeof(text)) > 0 && depth < 2 &&
	    gg_resolve_pointer(gitdir, text, common) && strcmp(common, gitdir) != 0) {
		(void)close(fd);
		return protect_gitdir(common, add, arg, depth + 1);
	}
	(void)close(fd);
	return 0;
}

/* Does dir hold what makes git accept it as a git directory (HEAD, and
 * objects or a commondir)? */
static bool looks_like_gitdir_path(const char *dir)
{
	char p[PATH_MAX];

	if (!gg_join(p, sizeof(p), dir, "HEAD") || access(p, F_OK) < 0)
		return false;
	if (gg_join(p, sizeof(p), dir, "objects") && access(p, F_OK) == 0)
		return true;
	return gg_join(p, sizeof(p), dir, "commondir") && access(p, F_OK) == 0;
}

int sbx_git_protect(const char *dir, sbx_path_fn add, void *arg)
{
	char dotgit[PATH_MAX], text[PATH_MAX], gitdir[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (!gg_join(dotgit, sizeof(dotgit), dir, ".git"))
		return 0;
	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		return protect_gitdir(dotgit, add, arg, 0);
	if (lstat(dotgit, &st) == 0) {
		/* A .git file (worktree, submodule): itself read-only, so it
		 * cannot be pointed elsewhere; then what it points to. */
		if (add(arg, dotgit) < 0)
			return -1;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		n = gg_read_small(fd, ".git", text, sizeof(text));
		(void)close(fd);
		if (n > 8 && strncmp(text, "gitdir: ", 8) == 0 &&
		    gg_resolve_pointer(dir, text + 8, gitdir))
			return protect_gitdir(gitdir, add, arg, 0);
		return 0;
	}
	if (looks_like_gitdir_path(dir))
		return protect_gitdir(dir, add, arg, 0); /* a bare repository */
	/* No repository here: a missing .git cannot be created (its
	 * placeholder covers every path below it). */
	return gg_join(dotgit, sizeof(dotgit), dir, ".git/config") ? add(arg, dotgit) : 0;
}


/* ------------------------------------- the host's global git config */

/* At most this many config files are read (the global and system ones
 * and what they include, transitively). */
#define GG_GLOBAL_FILES_MAX 16

/*
 * base/value (value as written in a config: absolute, "~/..." from home,
 * else relative to base) into out, normalised without reading the
 * filesystem ("." and empty components dropped, ".." taking one back):
 * the mount plan takes no such component, and the path need not exist.
 * False when it does not fit or "~/" has no home.
 */
static bool lexical_path(const char *base, const char *value, const char *home, char *out,
			 size_t len)
{
	char tmp[PATH_MAX];
	size_t o = 0;
	const char *s;
	int n;

	if (strncmp(value, "~/", 2) == 0)
		n = home != NULL && home[0] == '/' ? snprintf(tmp, sizeof(tmp), "%s/%s", home, value + 2) : -1;
	else if (value[0] == '/')
		n = snprintf(tmp, sizeof(tmp), "%s", value);
	else
		n = snprintf(tmp, sizeof(tmp), "%s/%s", base, value);
	if (n < 0 || (size_t)n >= sizeof(tmp) || tmp[0] != '/' || len < 2)
		return false;
	for (s = tmp; *s != '\0';) {
		size_t c;

		while (*s == '/')
			s++;
		c = strcspn(s, "/");
		if (c == 0 || (c == 1 && s[0] == '.')) {
			s += c;
			continue;
		}
		if (c == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			s += c;
			continue;
		}
		if (o + 1 + c >= len)
			return false;
		out[o++] = '/';
		memcpy(out + o, s, c);
		o += c;
		s += c;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return true;
}

/* Whether word (lower case) occurs in buf[0..len) in any ASCII case. */
static bool has_word(const char *buf, size_t len, const char *word)
{
	size_t wl = strlen(word);

	for (size_t i = 0; i + wl <= len; i++)
		if (strncasecmp(buf + i, word, wl) == 0)
			return true;
	return false;
}

/*
 * Whether git could list, from the config file at path, a setting this
 * protection acts on: include.path, includeIf.*.path, init.templateDir,
 * core.hooksPath. git's parser takes a section's and a key's name one
 * letter at a time (letters, digits, '-', '.'; no escape, no line
 * continuation inside a name), so such a setting spells "include",
 * "templatedir" or "hookspath" in the file's bytes, in some case. A file
 * with none of the three needs no run of git: what git would list names
 * nothing to protect, and a file git cannot parse is skipped anyway.
 * When the file cannot be read here (not a regular file, too large,
 * gone), true: git is asked, as before, and its failures count.
 */
static bool may_name_settings(const char *path)
{
	size_t len;
	char *buf = fileio_read(path, GG_CONFIG_MAX_BYTES, 0, &len, NULL);
	bool may;

	if (buf == NULL)
		return true;
	may = has_word(buf, len, "include") || has_word(buf, len, "templatedir") ||
	      has_word(buf, len, "hookspath");
	free(buf);
	return may;
}

int sbx_git_protect_global(sbx_env_fn env, void *envarg, sbx_path_fn add, void *arg)
{
	static const char *const no_roots[] = {NULL};
	const char *home = env(envarg, "HOME"), *xdg = env(envarg, "XDG_CONFIG_HOME");
	const char *glob = env(envarg, "GIT_CONFIG_GLOBAL"), *sys = env(envarg, "GIT_CONFIG_SYSTEM");
	const char *tdir = env(envarg, "GIT_TEMPLATE_DIR");
	char files[GG_GLOBAL_FILES_MAX][PATH_MAX], p[PATH_MAX];
	struct gg_run runs[GG_GLOBAL_FILES_MAX];
	const char *why[GG_GLOBAL_FILES_MAX];
	bool present[GG_GLOBAL_FILES_MAX], started[GG_GLOBAL_FILES_MAX];
	struct sbx_git_stats st;
	size_t n = 0, i, done, round_end;
	struct gg *g;
	int rc = 0;

	/* The templates `git init` and `git clone` copy hooks from: the
	 * variable's, and the default ones (a no-op unless writable). */
	if (tdir != NULL && tdir[0] != '\0' && lexical_path("/", tdir, home, p, sizeof(p)) && add(arg, p) < 0)
		return -1;
	if (add(arg, "/usr/share/git-core/templates") < 0)
		return -1;
	if (lexical_path("/", sys != NULL && sys[0] == '/' ? sys : "/etc/gitconfig", NULL, files[n], PATH_MAX))
		n++;
	if (glob != NULL && glob[0] == '/') {
		if (lexical_path("/", glob, home, files[n], PATH_MAX))
			n++;
	} else if (home != NULL && home[0] == '/') {
		if (lexical_path(home, ".gitconfig", home, files[n], PATH_MAX))
			n++;
		if (xdg != NULL && xdg[0] == '/' ? lexical_path(xdg, "git/config", home, files[n], PATH_MAX)
						 : lexical_path(home, ".config/git/config", home, files[n], PATH_MAX))
			n++;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -1;
	g->roots = no_roots;
	g->st = &st;
	gg_find_git(g);
	/* Each file, and each file it includes (appended, read in turn).
	 * The files known at the start of a round are handed to git all at
	 * once (the system and the global config: two runs of git side by
	 * side instead of one after the other), then read in their order,
	 * which appends the next round: the same runs, the same order of
	 * reading, only the waiting overlaps. */
	for (done = 0; done < n && rc == 0; done = round_end) {
		round_end = n;
		for (i = done; i < round_end; i++) {
			runs[i] = (struct gg_run){.pid = -1, .fd = -1};
			/* A missing file, or one that cannot name a setting
			 * we act on: git is not run for it. */
			present[i] = access(files[i], F_OK) == 0 && may_name_settings(files[i]);
			started[i] = present[i] && gg_config_start(g, files[i], &runs[i], &why[i]) == 0;
		}
		for (i = done; i < round_end; i++) {
			const char *rec;
			char dir[PATH_MAX], value[PATH_MAX];
			struct gg_rec r;
			size_t len;
			char *out;

			if (rc != 0) {
				gg_config_abandon(&runs[i]); /* a no-op when not started */
				continue;
			}
			if (!present[i])
				continue;
			snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(files[i], '/') - files[i]), files[i]);
			out = started[i] ? gg_config_finish(&runs[i], &len, &why[i]) : NULL;
			if (out == NULL && (strcmp(why[i], GG_WHY_UNPARSED) == 0 || strcmp(why[i], GG_WHY_NO_GIT) == 0))
				continue; /* git cannot read it either, or there is no git to run it */
			if (out == NULL) {
				/* git would read it, we could not: its includes, template
				 * and hooks directories would go unprotected. */
				errno = EIO;
				rc = -1;
				continue;
			}
			for (rec = out; rc == 0 && gg_config_next(out, len, &rec, &r);) {
				if (r.val == NULL || r.vlen >= sizeof(value))
					continue;
				memcpy(value, r.val, r.vlen);
				value[r.vlen] = '\0';
				if (gg_rec_is_include(&r)) {
					/* Relative to the including file's directory. */
					if (!lexical_path(dir[0] ? dir : "/", value, home, p, sizeof(p)))
						continue;
					rc = add(arg, p);
					if (n < GG_GLOBAL_FILES_MAX)
						memcpy(files[n++], p, strlen(p) + 1);
				} else if (gg_rec_is(&r, "init.templatedir") || gg_rec_is(&r, "core.hookspath")) {
					/* A relative hooks path is the work tree's (the
					 * repository protections and the post-run check
					 * cover it); a relative template directory is
					 * the directory git runs in: denied from /, which
					 * is where only an absolute one is meaningful. */
					if ((value[0] == '/' || strncmp(value, "~/", 2) == 0) &&
					    lexical_path("/", value, home, p, sizeof(p)))
						rc = add(arg, p);
				}
			}
			free(out);
		}
	}
	free(g);
	return rc;
}

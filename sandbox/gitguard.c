/*
 * gitguard.c - git must not run a program the sandbox planted (SPEC §3.3,
 * issue 13 class 1).
 *
 * Two halves. sbx_git_protect() names, before the sandbox starts, the
 * control files of the repositories the launcher knows about (the working
 * directory's, the allowWrite roots'), which the mount plan then makes
 * read-only or impossible to create. sbx_gitguard_check() runs after the
 * sandbox has ended (every process of it is gone, so nothing changes under
 * it): it walks every writable tree, finds every git directory, and moves
 * aside each control file created or changed during the session that can
 * make git run a program. docs/sandbox.md ("Git control files") explains
 * the rules; this file follows them. The same walk moves aside the
 * editor and agent settings (.vscode, .claude/settings.json, .mcp.json,
 * ...: the caller's list) created or changed during the session in any
 * directory, nested ones included: the mount plan protects them only at
 * the top of each writable tree.
 *
 * "Changed during the session" is the inode's ctime at or after the
 * session start: the kernel sets it on every write, chmod, link and
 * rename, and no unprivileged process can set it back.
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

#include "sandbox/sandbox.h"

/* A config larger than this is not parsed but moved aside: no git
 * directory's own config is anywhere near it. */
#define GG_CONFIG_MAX_BYTES (1024 * 1024)
/* Bytes of `git config --list -z` output read at most. */
#define GG_GIT_OUT_MAX_BYTES (4 * 1024 * 1024)
/* Settings named in one report line at most. */
#define GG_SETTINGS_SHOWN 4

/* ------------------------------------------------------------ helpers */

/* path/name into out; false when it does not fit. */
static bool join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);

	return n > 0 && (size_t)n < len;
}

/* Reads at most len - 1 bytes of the regular file dfd/name (not through a
 * symlink) into buf, NUL-terminated, one trailing newline (and CR) cut.
 * Returns the length or -1. */
static ssize_t read_small(int dfd, const char *name, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return -1;
	}
	while ((size_t)total < len - 1 && (n = read(fd, buf + total, len - 1 - (size_t)total)) > 0)
		total += n;
	(void)close(fd);
	buf[total] = '\0';
	while (total > 0 && (buf[total - 1] == '\n' || buf[total - 1] == '\r'))
		buf[--total] = '\0';
	return total;
}

/* The git directory named by the text of a .git file or commondir (rel
 * resolved against base), canonical, into out. False when it does not
 * resolve. */
static bool resolve_pointer(const char *base, const char *text, char *out)
{
	char tmp[PATH_MAX];

	if (text[0] == '/') {
		if (strlen(text) >= sizeof(tmp))
			return false;
		strcpy(tmp, text);
	} else if (!join(tmp, sizeof(tmp), base, text)) {
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
		if (join(p, sizeof(p), gitdir, names[i]) && add(arg, p) < 0)
			return -1;
	/* modules/ and worktrees/ hold whole git directories (submodules,
	 * linked worktrees) whose objects, HEAD and index git must write:
	 * when they exist, their members' control files are protected;
	 * when they do not, they cannot be created. */
	for (i = 0; i < 2 && depth == 0; i++) {
		if (!join(p, sizeof(p), gitdir, holders[i]))
			continue;
		if (lstat(p, &st) < 0) {
			if (add(arg, p) < 0)
				return -1;
			continue;
		}
		if (!S_ISDIR(st.st_mode) || (d = opendir(p)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' || !join(sub, sizeof(sub), p, de->d_name))
				continue;
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) &&
			    protect_gitdir(sub, add, arg, depth + 1) < 0) {
				(void)closedir(d);
				return -1;
			}
		}
		(void)closedir(d);
	}
	if (!join(p, sizeof(p), gitdir, "commondir") || lstat(p, &st) < 0)
		return 0;
	if (add(arg, p) < 0)
		return -1;
	/* The common directory's config and hooks are read through it. */
	fd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read_small(fd, "commondir", text, sizeof(text)) > 0 && depth < 2 &&
	    resolve_pointer(gitdir, text, common) && strcmp(common, gitdir) != 0) {
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

	if (!join(p, sizeof(p), dir, "HEAD") || access(p, F_OK) < 0)
		return false;
	if (join(p, sizeof(p), dir, "objects") && access(p, F_OK) == 0)
		return true;
	return join(p, sizeof(p), dir, "commondir") && access(p, F_OK) == 0;
}

int sbx_git_protect(const char *dir, sbx_path_fn add, void *arg)
{
	char dotgit[PATH_MAX], text[PATH_MAX], gitdir[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (!join(dotgit, sizeof(dotgit), dir, ".git"))
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
		n = read_small(fd, ".git", text, sizeof(text));
		(void)close(fd);
		if (n > 8 && strncmp(text, "gitdir: ", 8) == 0 &&
		    resolve_pointer(dir, text + 8, gitdir))
			return protect_gitdir(gitdir, add, arg, 0);
		return 0;
	}
	if (looks_like_gitdir_path(dir))
		return protect_gitdir(dir, add, arg, 0); /* a bare repository */
	/* No repository here: a missing .git cannot be created (its
	 * placeholder covers every path below it). */
	return join(dotgit, sizeof(dotgit), dir, ".git/config") ? add(arg, dotgit) : 0;
}

/* ------------------------------------------------ the post-run check */

/* Where an entry stands against the settings rows (struct sbx_ctl_path). */
enum { CTL_NONE, CTL_IN, CTL_WAY };

/* One directory entry, as read: a subdirectory, or a non-directory that
 * stands on a settings row. */
struct ent {
	char *name;
	unsigned char type;              /* DT_* (never DT_UNKNOWN) */
	unsigned char how;               /* CTL_*: IN a row (the row or below
					    a directory row), on the WAY to
					    one (".claude" of ".claude/x") */
	const struct sbx_ctl_path *row;  /* the row, with how */
	size_t reloff;                   /* with how: offset in g->path of
					    the entry's path relative to the
					    directory its row starts in */
};

/* The state of one check. */
struct gg {
	struct timespec since;       /* session start (CLOCK_REALTIME_COARSE) */
	bool keep;                   /* report only, move nothing */
	sbx_git_report_fn report;
	void *arg;
	struct sbx_git_stats *st;
	const char *const *roots;    /* canonical writable roots */
	const struct sbx_ctl_path *ctl; /* settings rows, NULL-path ended; or NULL */
	bool ctl_first[256];         /* first bytes of the rows' paths */
	int rootfd;                  /* the root being walked */
	size_t rootlen;              /* strlen of its path */
	char path[PATH_MAX];         /* absolute path of the directory at hand */
	char git[PATH_MAX];          /* the host's git, "" if none on PATH */
	/* getdents64 buffer, shared: a directory is read to the end before
	 * its subdirectories are walked. */
	_Alignas(8) char dents[32768];
	int rc;                      /* -1 once something could not be checked */
};

static bool ts_fresh(const struct gg *g, const struct statx_timestamp *t)
{
	return t->tv_sec > g->since.tv_sec ||
	       (t->tv_sec == g->since.tv_sec && (long)t->tv_nsec >= g->since.tv_nsec);
}

/* statx of dfd/name, not following a final symlink. */
static int gg_statx(int dfd, const char *name, int flags, struct statx *sx)
{
	return statx(dfd, name, flags | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME, sx);
}

/* Was dfd/name (the link and, for a symlink, what it points to) created
 * or changed during the session? Missing: false. */
static bool changed(const struct gg *g, int dfd, const char *name)
{
	struct statx sx;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return false;
	if (ts_fresh(g, &sx.stx_ctime))
		return true;
	return S_ISLNK(sx.stx_mode) && gg_statx(dfd, name, 0, &sx) == 0 && ts_fresh(g, &sx.stx_ctime);
}

static void report_error(struct gg *g, const char *dir, const char *name, const char *what, int errnum)
{
	char path[PATH_MAX], msg[256];
	struct sbx_git_finding f = {0};

	if (name[0] == '\0')
		snprintf(path, sizeof(path), "%s", dir[0] ? dir : "/");
	else if (!join(path, sizeof(path), dir, name))
		snprintf(path, sizeof(path), "%s/...", dir);
	snprintf(msg, sizeof(msg), "%s%s%s", what, errnum ? ": " : "", errnum ? strerror(errnum) : "");
	f.path = path;
	f.setting = NULL;
	f.error = msg;
	g->rc = -1;
	g->report(g->arg, &f);
}

/*
 * renameat2(RENAME_NOREPLACE) of dfd/name to dfd/to. When the directory
 * is ours but not writable (the command can chmod its own directories;
 * root bypasses this, a user does not), owner write is added for the
 * rename and the mode put back.
 */
static int rename_aside(int dfd, const char *name, const char *to)
{
	const mode_t wx = S_IWUSR | S_IXUSR;
	struct stat st;
	int rc, saved;

	if (renameat2(dfd, name, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	saved = errno;
	if ((saved != EACCES && saved != EPERM) || fstat(dfd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & wx) == wx || fchmod(dfd, (st.st_mode & 07777) | wx) < 0) {
		errno = saved;
		return -1;
	}
	rc = renameat2(dfd, name, dfd, to, RENAME_NOREPLACE);
	saved = errno;
	(void)fchmod(dfd, st.st_mode & 07777);
	errno = saved;
	return rc;
}

/*
 * Moves dfd/name (in the directory dir) aside to name.passavant-quarantine
 * (.2 ... .99 when taken; then a random suffix, so that names planted in
 * advance cannot keep the file in place), or only reports it under keep.
 * setting says what makes it run a program.
 */
static void quarantine(struct gg *g, int dfd, const char *dir, const char *name, const char *setting)
{
	char path[PATH_MAX], to[NAME_MAX + 1], moved[PATH_MAX];
	struct sbx_git_finding f = {0};
	unsigned long long rnd;
	int i, n;

	if (!join(path, sizeof(path), dir, name))
		return;
	f.path = path;
	f.setting = setting;
	g->st->findings++;
	if (g->keep) {
		g->report(g->arg, &f);
		return;
	}
	for (i = 1; i < 108; i++) {
		if (i >= 100 && getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			break;
		n = i == 1   ? snprintf(to, sizeof(to), "%s%s", name, SBX_GIT_QUARANTINE_SUFFIX)
		    : i < 100 ? snprintf(to, sizeof(to), "%s%s.%d", name, SBX_GIT_QUARANTINE_SUFFIX, i)
			      : snprintf(to, sizeof(to), "%s%s.%016llx", name, SBX_GIT_QUARANTINE_SUFFIX, rnd);
		if (n < 0 || (size_t)n >= sizeof(to)) {
			errno = ENAMETOOLONG;
			break;
		}
		/* RENAME_NOREPLACE: never over an earlier quarantined copy. */
		if (rename_aside(dfd, name, to) == 0) {
			if (join(moved, sizeof(moved), dir, to))
				f.moved_to = moved;
			g->report(g->arg, &f);
			return;
		}
		if (errno != EEXIST)
			break;
	}
	f.error = strerror(errno);
	g->rc = -1;
	g->report(g->arg, &f);
}

static bool under_roots(const struct gg *g, const char *path);

/* Section and key of "section.sub.key" (git prints section and key in
 * lower case, the subsection as written). */
struct gg_key {
	const char *section;
	size_t section_len;
	bool has_sub;
	const char *key;
};

static void split_key(const char *name, struct gg_key *k)
{
	const char *first = strchr(name, '.'), *last = strrchr(name, '.');

	k->section = name;
	k->section_len = first != NULL ? (size_t)(first - name) : strlen(name);
	k->has_sub = first != NULL && last != first;
	k->key = last != NULL ? last + 1 : "";
}

/*
 * The allowlist: settings git and its porcelain write in ordinary work
 * (init, clone, remote, branch, submodule) and that name no program. Any
 * other setting in a config written during the session moves it aside.
 * A "*" key allows every key of the section.
 */
static const struct {
	const char *section;
	bool sub; /* a subsection ("remote.NAME.url") */
	const char *key;
} harmless[] = {
	{"core", false, "repositoryformatversion"},
	{"core", false, "filemode"},
	{"core", false, "bare"},
	{"core", false, "logallrefupdates"},
	{"core", false, "ignorecase"},
	{"core", false, "precomposeunicode"},
	{"core", false, "symlinks"},
	{"core", false, "autocrlf"},
	{"core", false, "eol"},
	{"core", false, "safecrlf"},
	{"core", false, "quotepath"},
	{"core", false, "sparsecheckout"},
	{"core", false, "sparsecheckoutcone"},
	{"core", false, "checkstat"},
	{"core", false, "trustctime"},
	{"core", false, "abbrev"},
	{"core", false, "compression"},
	{"core", false, "commentchar"},
	{"extensions", false, "objectformat"},
	{"extensions", false, "worktreeconfig"},
	{"extensions", false, "refstorage"},
	{"user", false, "name"},
	{"user", false, "email"},
	{"init", false, "defaultbranch"},
	{"pull", false, "rebase"},
	{"pull", false, "ff"},
	{"push", false, "default"},
	{"push", false, "autosetupremote"},
	{"fetch", false, "prune"},
	{"gc", false, "auto"},
	{"index", false, "version"},
	{"color", false, "ui"},
	{"lfs", false, "repositoryformatversion"},
	{"advice", false, "*"},
	{"remote", true, "url"},
	{"remote", true, "pushurl"},
	{"remote", true, "fetch"},
	{"remote", true, "push"},
	{"remote", true, "mirror"},
	{"remote", true, "tagopt"},
	{"remote", true, "prune"},
	{"branch", true, "remote"},
	{"branch", true, "merge"},
	{"branch", true, "rebase"},
	{"branch", true, "pushremote"},
	{"branch", true, "description"},
	{"submodule", true, "url"},
	{"submodule", true, "active"},
	{"submodule", true, "branch"},
};

/* Is the setting name harmless? in_modules: the config of a submodule's
 * git directory, where `git submodule` itself writes core.worktree. */
static bool setting_harmless(const char *name, bool in_modules)
{
	struct gg_key k;
	size_t i;

	split_key(name, &k);
	if (in_modules && !k.has_sub && k.section_len == 4 && strncmp(k.section, "core", 4) == 0 &&
	    strcmp(k.key, "worktree") == 0)
		return true;
	for (i = 0; i < sizeof(harmless) / sizeof(harmless[0]); i++) {
		if (strlen(harmless[i].section) != k.section_len ||
		    strncmp(harmless[i].section, k.section, k.section_len) != 0 || harmless[i].sub != k.has_sub)
			continue;
		if (strcmp(harmless[i].key, "*") == 0 || strcmp(harmless[i].key, k.key) == 0)
			return true;
	}
	return false;
}

/* The first PATH entry holding an executable git, into g->git; never one
 * in a writable tree (the command could have planted it there, and this
 * check runs it on the host). */
static void find_git(struct gg *g)
{
	const char *path = getenv("PATH"), *s, *e;
	char cand[PATH_MAX], real[PATH_MAX];

	g->git[0] = '\0';
	if (path == NULL)
		path = "/usr/bin:/bin";
	for (s = path; *s != '\0'; s = *e ? e + 1 : e) {
		e = strchrnul(s, ':');
		if (e == s || (size_t)(e - s) + 5 >= sizeof(cand))
			continue;
		snprintf(cand, sizeof(cand), "%.*s/git", (int)(e - s), s);
		if (cand[0] == '/' && access(cand, X_OK) == 0 && realpath(cand, real) != NULL &&
		    !under_roots(g, real) && !under_roots(g, cand)) {
			memcpy(g->git, real, strlen(real) + 1);
			return;
		}
	}
}

/*
 * Runs the host's git on one config file, the way git itself parses it:
 *   git config --no-includes --file FILE --list -z
 * in /, with an environment that reads no other config and finds no
 * repository (nothing it could run). Returns the malloc'd output (keys
 * and values; *len bytes) or NULL: *why says what failed.
 */
static char *git_config_list(const struct gg *g, const char *file, size_t *len, const char **why)
{
	char *const envp[] = {"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			      "HOME=/nonexistent", "GIT_DIR=/nonexistent", "LC_ALL=C", NULL};
	char *const argv[] = {(char *)"git", "config", "--no-includes", "--file", (char *)file,
			      "--list", "-z", NULL};
	char *buf = NULL, *nb;
	size_t cap = 0;
	ssize_t n;
	pid_t pid;
	int pfd[2], st, devnull;

	*len = 0;
	if (g->git[0] == '\0') {
		*why = "git is not on PATH to check it";
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		*why = "cannot run git to check it";
		return NULL;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid = fork();
	if (pid == 0) {
		/* Only async-signal-safe calls: we may have threads. */
		if (dup2(pfd[1], 1) < 0 || (devnull >= 0 && (dup2(devnull, 0) < 0 || dup2(devnull, 2) < 0)) ||
		    chdir("/") < 0)
			_exit(127);
		execve(g->git, argv, envp);
		_exit(127);
	}
	(void)close(pfd[1]);
	if (devnull >= 0)
		(void)close(devnull);
	if (pid < 0) {
		(void)close(pfd[0]);
		*why = "cannot run git to check it";
		return NULL;
	}
	for (;;) {
		if (*len + 4096 > cap) {
			cap = cap ? 2 * cap : 8192;
			nb = cap <= GG_GIT_OUT_MAX_BYTES ? realloc(buf, cap + 1) : NULL;
			if (nb == NULL)
				break;
			buf = nb;
		}
		n = read(pfd[0], buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	(void)close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (buf == NULL || n != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		*why = "git cannot parse it";
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

/* Appends s to the setting list in out (", " between, at most
 * GG_SETTINGS_SHOWN, then "..."). */
static void list_setting(char *out, size_t len, unsigned *shown, const char *s)
{
	size_t used = strlen(out);

	if (*shown == GG_SETTINGS_SHOWN)
		snprintf(out + used, len - used, ", ...");
	else if (*shown < GG_SETTINGS_SHOWN)
		snprintf(out + used, len - used, "%s%.64s", used ? ", " : "", s);
	(*shown)++;
}

/*
 * A config file dfd/name in dir, changed in the session (or in a new git
 * directory): any setting outside the allowlist moves it aside (include
 * paths among them). A symlink, a non-regular file or one too large to
 * check moves aside unread.
 */
static void check_config(struct gg *g, int dfd, const char *dir, const char *name, bool in_modules)
{
	char path[PATH_MAX], settings[512] = "";
	const char *why = NULL, *rec, *end;
	unsigned shown = 0;
	struct statx sx;
	size_t len;
	char *out;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	g->st->configs++;
	if (S_ISLNK(sx.stx_mode)) {
		quarantine(g, dfd, dir, name, "a symbolic link (git reads what it points to)");
		return;
	}
	if (!S_ISREG(sx.stx_mode)) {
		quarantine(g, dfd, dir, name, "not a regular file");
		return;
	}
	if (sx.stx_size > GG_CONFIG_MAX_BYTES) {
		quarantine(g, dfd, dir, name, "too large to check");
		return;
	}
	if (!join(path, sizeof(path), dir, name))
		return;
	out = git_config_list(g, path, &len, &why);
	if (out == NULL) {
		quarantine(g, dfd, dir, name, why);
		return;
	}
	for (rec = out; rec < out + len; rec = end + 1) {
		char key[256];
		size_t kl;

		end = memchr(rec, '\0', (size_t)(out + len - rec));
		if (end == NULL)
			end = out + len;
		kl = strcspn(rec, "\n");
		if (kl >= sizeof(key))
			kl = sizeof(key) - 1;
		memcpy(key, rec, kl);
		key[kl] = '\0';
		if (!setting_harmless(key, in_modules))
			list_setting(settings, sizeof(settings), &shown, key);
	}
	free(out);
	if (shown > 0)
		quarantine(g, dfd, dir, name, settings);
}

/* Does name end in suffix? */
static bool ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n >= s && strcmp(name + n - s, suffix) == 0;
}

/*
 * Every entry of a hooks directory (open as hfd, path hdir) that was
 * created or changed in the session, or all of them when the directory
 * itself was (renamed into place, or in a new git directory), except the
 * *.sample files git init writes and never runs.
 */
static void check_hooks_dir(struct gg *g, int hfd, const char *hdir, bool all_fresh)
{
	char setting[NAME_MAX + 16];
	struct dirent *de;
	int dup_fd = dup(hfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	char **names = NULL, **nn;
	size_t n = 0, i;

	if (d == NULL) {
		if (dup_fd >= 0)
			(void)close(dup_fd);
		report_error(g, hdir, "", "cannot read the hooks directory", errno);
		return;
	}
	/* Names first, renames after: renaming while reading a directory
	 * may show an entry twice. */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    ends_with(de->d_name, ".sample") || strstr(de->d_name, SBX_GIT_QUARANTINE_SUFFIX) != NULL)
			continue;
		if (!all_fresh && !changed(g, hfd, de->d_name))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (nn == NULL || (nn[n] = strdup(de->d_name)) == NULL) {
			names = nn != NULL ? nn : names;
			report_error(g, hdir, "", "cannot check the hooks directory", ENOMEM);
			break;
		}
		names = nn;
		n++;
	}
	(void)closedir(d);
	for (i = 0; i < n; i++) {
		snprintf(setting, sizeof(setting), "hook %s", names[i]);
		quarantine(g, hfd, hdir, names[i], setting);
		free(names[i]);
	}
	free(names);
}

/* The hooks directory dfd/name of a git directory. */
static void check_hooks(struct gg *g, int dfd, const char *dir, const char *name, bool all_fresh)
{
	char hdir[PATH_MAX], real[PATH_MAX];
	struct statx sx;
	int hfd;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	if (!S_ISDIR(sx.stx_mode)) {
		if (all_fresh || changed(g, dfd, name))
			quarantine(g, dfd, dir, name,
				   S_ISLNK(sx.stx_mode) ? "hooks is a symbolic link" : "hooks is not a directory");
		else if (S_ISLNK(sx.stx_mode) && join(hdir, sizeof(hdir), dir, name) &&
			 realpath(hdir, real) != NULL && under_roots(g, real) &&
			 (hfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			/* An old link (the user's) into a writable tree: what
			 * it points to may have changed. */
			check_hooks_dir(g, hfd, real, false);
			(void)close(hfd);
		}
		return;
	}
	hfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd < 0 || !join(hdir, sizeof(hdir), dir, name)) {
		if (hfd >= 0)
			(void)close(hfd);
		report_error(g, dir, name, "cannot open", errno);
		return;
	}
	check_hooks_dir(g, hfd, hdir, all_fresh || ts_fresh(g, &sx.stx_ctime));
	(void)close(hfd);
}

/* Does the file dfd/name (regular, at most GG_CONFIG_MAX_BYTES; through
 * a final symlink only when follow) mention one of words, in any case? A
 * cheap filter before running git on a config nobody changed. */
static bool file_mentions(int dfd, const char *name, bool follow, const char *const *words)
{
	int fd = openat(dfd, name, O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC);
	bool found = false;
	struct stat st;
	char *buf;
	ssize_t n, total = 0;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > GG_CONFIG_MAX_BYTES ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		(void)close(fd);
		return false;
	}
	while (total < st.st_size && (n = read(fd, buf + total, (size_t)(st.st_size - total))) > 0)
		total += n;
	(void)close(fd);
	buf[total] = '\0';
	/* A NUL ends the search early: git stops reading there too. */
	for (; *words != NULL && !found; words++)
		found = strcasestr(buf, *words) != NULL;
	free(buf);
	return found;
}

/* A path value of a config into out, a leading "~/" taken from HOME, as
 * git does. False when it does not fit, or HOME is unset for "~/". */
static bool expand_home(const char *value, char *out, size_t len)
{
	const char *home = getenv("HOME");
	int n;

	if (strncmp(value, "~/", 2) == 0)
		n = home != NULL ? snprintf(out, len, "%s/%s", home, value + 2) : -1;
	else
		n = snprintf(out, len, "%s", value);
	return n >= 0 && (size_t)n < len;
}

/* An included file (value of include.path or includeIf.*.path in a
 * config in the directory base): when it is in a writable tree and was
 * written in the session, it is checked like a config of its own. */
static void check_include(struct gg *g, const char *base, const char *value)
{
	char raw[PATH_MAX], target[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	int dfd;

	if (!expand_home(value, raw, sizeof(raw)))
		return;
	if (!resolve_pointer(base, raw, target) || !under_roots(g, target) ||
	    (slash = strrchr(target, '/')) == NULL)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target), target);
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (changed(g, dfd, slash + 1))
		check_config(g, dfd, dir, slash + 1, false);
	(void)close(dfd);
}

/*
 * A config that stays (the user's, unchanged: a git directory's, or the
 * global and system ones) may reach into a writable tree: the hooks of
 * its core.hooksPath are checked like hooks/, and the files it includes
 * like configs. cfg is its path (dfd/name: the same, for reading it), dir
 * the directory it is in (where a relative include starts), hooks_base
 * where a relative hooks path starts (the work tree), NULL when that
 * depends on the repository (the global config: only absolute and "~/"
 * hooks paths are checked).
 */
static void check_kept_config(struct gg *g, int dfd, const char *name, bool follow, const char *cfg,
			      const char *dir, const char *hooks_base)
{
	static const char *const words[] = {"hookspath", "include", NULL};
	char value[PATH_MAX] = "", raw[PATH_MAX], target[PATH_MAX];
	const char *why, *rec, *end, *nl;
	struct stat st;
	size_t len;
	char *out;
	int hfd;

	if (!file_mentions(dfd, name, follow, words))
		return;
	out = git_config_list(g, cfg, &len, &why);
	if (out == NULL)
		return;
	for (rec = out; rec < out + len; rec = end + 1) {
		end = memchr(rec, '\0', (size_t)(out + len - rec));
		if (end == NULL)
			end = out + len;
		nl = memchr(rec, '\n', (size_t)(end - rec));
		if (nl == NULL || (size_t)(end - nl - 1) >= sizeof(value))
			continue;
		if ((size_t)(nl - rec) == 14 && strncmp(rec, "core.hookspath", 14) == 0) {
			memcpy(value, nl + 1, (size_t)(end - nl - 1));
			value[end - nl - 1] = '\0'; /* the last one wins, as in git */
		} else if (((size_t)(nl - rec) == 12 && strncmp(rec, "include.path", 12) == 0) ||
			   (strncmp(rec, "includeif.", 10) == 0 && (size_t)(nl - rec) > 15 &&
			    strncmp(nl - 5, ".path", 5) == 0)) {
			char inc[PATH_MAX];

			memcpy(inc, nl + 1, (size_t)(end - nl - 1));
			inc[end - nl - 1] = '\0';
			check_include(g, dir, inc);
		}
	}
	free(out);
	if (value[0] == '\0' || !expand_home(value, raw, sizeof(raw)) || (raw[0] != '/' && hooks_base == NULL))
		return;
	if (!resolve_pointer(hooks_base != NULL && hooks_base[0] ? hooks_base : "/", raw, target) ||
	    !under_roots(g, target) ||
	    stat(target, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	hfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0)
		return;
	check_hooks_dir(g, hfd, target, false);
	(void)close(hfd);
}

/* Is dir's last component name? */
static bool parent_named(const char *dir, const char *name)
{
	const char *slash = strrchr(dir, '/');
	size_t nl = strlen(name);

	if (slash == NULL || slash == dir)
		return false;
	return (size_t)(slash - dir) > nl && slash[-(long)nl - 1] == '/' &&
	       strncmp(slash - nl, name, nl) == 0;
}

/*
 * commondir of the git directory g->path (open as gfd), changed in the
 * session: git reads config and hooks from where it points. Only the
 * shape `git worktree add` writes is left: in DIR/worktrees/NAME,
 * pointing at DIR.
 */
static void check_commondir(struct gg *g, int gfd, bool all_fresh)
{
	char text[PATH_MAX], target[PATH_MAX], expect[PATH_MAX], up[PATH_MAX];
	struct statx sx;

	if (gg_statx(gfd, "commondir", AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	if (!all_fresh && !ts_fresh(g, &sx.stx_ctime))
		return;
	if (S_ISREG(sx.stx_mode) && parent_named(g->path, "worktrees") &&
	    read_small(gfd, "commondir", text, sizeof(text)) > 0 && resolve_pointer(g->path, text, target) &&
	    join(up, sizeof(up), g->path, "../..") && realpath(up, expect) != NULL && strcmp(target, expect) == 0)
		return;
	quarantine(g, gfd, g->path, "commondir", "commondir (git reads config and hooks where it points)");
}

/* info/attributes of a git directory, changed in the session: it selects
 * filter and diff drivers for every path, and git never writes it. */
static void check_info(struct gg *g, int gfd, bool all_fresh)
{
	char idir[PATH_MAX];
	struct statx sx;
	int ifd;

	if (gg_statx(gfd, "info", AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	if (!S_ISDIR(sx.stx_mode)) {
		if (all_fresh || changed(g, gfd, "info"))
			quarantine(g, gfd, g->path, "info", "info is not a directory");
		return;
	}
	ifd = openat(gfd, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ifd < 0)
		return;
	if ((all_fresh || ts_fresh(g, &sx.stx_ctime) || changed(g, ifd, "attributes")) &&
	    faccessat(ifd, "attributes", F_OK, AT_SYMLINK_NOFOLLOW) == 0 && join(idir, sizeof(idir), g->path, "info"))
		quarantine(g, ifd, idir, "attributes", "info/attributes (selects filter and diff drivers)");
	(void)close(ifd);
}

/* Does the todo list text hold a command that runs a shell: a line whose
 * first word is "x" or "exec" (git's rebase todo syntax)? */
static bool todo_runs_command(const char *text)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		line += strspn(line, " \t");
		if ((line[0] == 'x' && (line[1] == ' ' || line[1] == '\t')) ||
		    (strncmp(line, "exec", 4) == 0 && (line[4] == ' ' || line[4] == '\t')))
			return true;
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return false;
}

/*
 * An interactive rebase in progress (rebase-merge/git-rebase-todo),
 * written in the session, whose todo list runs a command: `git rebase
 * --continue` on the host would run it. The todo list moves aside; git
 * then refuses to continue and runs nothing.
 */
static void check_rebase_todo(struct gg *g, int gfd, bool all_fresh)
{
	static const char todo[] = "git-rebase-todo";
	char rdir[PATH_MAX], *text;
	struct stat st;
	ssize_t n, total = 0;
	int rfd, fd;

	rfd = openat(gfd, "rebase-merge", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return;
	if (!all_fresh && !changed(g, rfd, todo) && !changed(g, gfd, "rebase-merge")) {
		(void)close(rfd);
		return;
	}
	fd = openat(rfd, todo, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > GG_CONFIG_MAX_BYTES ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL) {
		if (fd >= 0)
			(void)close(fd);
		if (faccessat(rfd, todo, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && join(rdir, sizeof(rdir), g->path, "rebase-merge"))
			quarantine(g, rfd, rdir, todo, "rebase todo list that cannot be checked");
		(void)close(rfd);
		return;
	}
	while (total < st.st_size && (n = read(fd, text + total, (size_t)(st.st_size - total))) > 0)
		total += n;
	(void)close(fd);
	text[total] = '\0';
	if (todo_runs_command(text) && join(rdir, sizeof(rdir), g->path, "rebase-merge"))
		quarantine(g, rfd, rdir, todo, "rebase todo list with exec (runs on git rebase --continue)");
	free(text);
	(void)close(rfd);
}

/* Is s a merge strategy built into git? Any other name runs the program
 * git-merge-NAME, and one with a slash is a path from the work tree
 * (through a directory named "git-merge-..") to any program. */
static bool strategy_builtin(const char *s)
{
	static const char *const builtin[] = {"ort", "recursive", "resolve", "octopus", "ours", "subtree"};

	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (strcmp(s, builtin[i]) == 0)
			return true;
	return false;
}

/*
 * The merge strategy a stopped rebase (rebase-merge/strategy) or
 * cherry-pick/revert (sequencer/opts, options.strategy) keeps for its
 * --continue, written in the session and not one built into git: the
 * file moves aside (git then goes on with its default strategy).
 */
static void check_strategy(struct gg *g, int gfd, bool all_fresh)
{
	char sdir[PATH_MAX], path[PATH_MAX], text[256];
	const char *why = NULL, *rec, *end;
	bool bad = false;
	size_t len;
	char *out;
	int sfd;

	sfd = openat(gfd, "rebase-merge", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd >= 0) {
		if ((all_fresh || changed(g, sfd, "strategy") || changed(g, gfd, "rebase-merge")) &&
		    faccessat(sfd, "strategy", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (read_small(sfd, "strategy", text, sizeof(text)) < 0 || !strategy_builtin(text)) &&
		    join(sdir, sizeof(sdir), g->path, "rebase-merge"))
			quarantine(g, sfd, sdir, "strategy",
				   "merge strategy that is a program (runs on git rebase --continue)");
		(void)close(sfd);
	}
	sfd = openat(gfd, "sequencer", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return;
	if (!(all_fresh || changed(g, sfd, "opts") || changed(g, gfd, "sequencer")) ||
	    faccessat(sfd, "opts", F_OK, AT_SYMLINK_NOFOLLOW) < 0 || !join(sdir, sizeof(sdir), g->path, "sequencer") ||
	    !join(path, sizeof(path), sdir, "opts")) {
		(void)close(sfd);
		return;
	}
	out = git_config_list(g, path, &len, &why);
	for (rec = out; out != NULL && rec < out + len; rec = end + 1) {
		end = memchr(rec, '\0', (size_t)(out + len - rec));
		if (end == NULL)
			end = out + len;
		if (strncmp(rec, "options.strategy\n", 17) == 0 && !strategy_builtin(rec + 17))
			bad = true;
	}
	free(out);
	if (out == NULL || bad)
		quarantine(g, sfd, sdir, "opts",
			   out == NULL ? why : "options.strategy (a program, runs on git cherry-pick --continue)");
	(void)close(sfd);
}

/*
 * Was the git directory open as gfd created in the session? Its own
 * birth time, or its objects directory's, or a commondir written in the
 * session. Then every control file in it counts as new, whatever its
 * own times say (files moved in keep theirs). Without birth times (some
 * filesystems), only the files' own ctimes count.
 */
static bool gitdir_new(const struct gg *g, int gfd)
{
	struct statx sx;

	if (gg_statx(gfd, "", AT_EMPTY_PATH, &sx) == 0 && (sx.stx_mask & STATX_BTIME) &&
	    ts_fresh(g, &sx.stx_btime))
		return true;
	if (gg_statx(gfd, "objects", AT_SYMLINK_NOFOLLOW, &sx) == 0 &&
	    ((sx.stx_mask & STATX_BTIME) ? ts_fresh(g, &sx.stx_btime) : false))
		return true;
	if (gg_statx(gfd, "objects", AT_SYMLINK_NOFOLLOW, &sx) == 0 && S_ISLNK(sx.stx_mode) &&
	    ts_fresh(g, &sx.stx_ctime))
		return true;
	return false;
}

/* One git directory: g->path, open as gfd. */
static void check_gitdir(struct gg *g, int gfd)
{
	char cfg[PATH_MAX], base[PATH_MAX];
	const char *slash;
	bool all = gitdir_new(g, gfd);
	bool in_modules = strstr(g->path, "/modules/") != NULL;

	g->st->repos++;
	if (all || changed(g, gfd, "config"))
		check_config(g, gfd, g->path, "config", in_modules);
	if (all || changed(g, gfd, "config.worktree"))
		check_config(g, gfd, g->path, "config.worktree", in_modules);
	check_commondir(g, gfd, all);
	check_hooks(g, gfd, g->path, "hooks", all);
	check_info(g, gfd, all);
	check_rebase_todo(g, gfd, all);
	check_strategy(g, gfd, all);
	/* A config that stayed may reach into a writable tree. */
	if (faccessat(gfd, "config", F_OK, AT_SYMLINK_NOFOLLOW) == 0 && join(cfg, sizeof(cfg), g->path, "config")) {
		slash = strrchr(g->path, '/');
		if (slash != NULL && strcmp(slash, "/.git") == 0)
			snprintf(base, sizeof(base), "%.*s", (int)(slash - g->path), g->path);
		else
			snprintf(base, sizeof(base), "%s", g->path);
		check_kept_config(g, gfd, "config", false, cfg, g->path, base);
	}
}

/* Is the canonical path under one of the writable roots? */
static bool under_roots(const struct gg *g, const char *path)
{
	for (size_t i = 0; g->roots[i] != NULL; i++) {
		size_t n = strlen(g->roots[i]);
		if (strcmp(g->roots[i], "/") == 0 ||
		    (strncmp(path, g->roots[i], n) == 0 && (path[n] == '/' || path[n] == '\0')))
			return true;
	}
	return false;
}

/*
 * A .git entry that is not a directory, in g->path (open as dfd), written
 * in the session: a gitdir: file may point only into the writable trees
 * (where this walk checks what it points to); a symlink or anything else
 * git never writes is moved aside.
 */
static void check_dotgit_file(struct gg *g, int dfd, unsigned char type)
{
	char text[PATH_MAX], target[PATH_MAX];

	if (!changed(g, dfd, ".git"))
		return;
	if (type == DT_LNK) {
		quarantine(g, dfd, g->path, ".git", ".git is a symbolic link (to a git directory elsewhere)");
		return;
	}
	if (type != DT_REG) {
		quarantine(g, dfd, g->path, ".git", ".git is not a file or a directory");
		return;
	}
	if (read_small(dfd, ".git", text, sizeof(text)) <= 8 || strncmp(text, "gitdir: ", 8) != 0 ||
	    !resolve_pointer(g->path, text + 8, target))
		return; /* git accepts no such .git file */
	if (!under_roots(g, target))
		quarantine(g, dfd, g->path, ".git", "gitdir: (points outside the writable trees)");
}

/* Opens the directory g->path below the root, never through a symlink. */
static int open_below_root(const struct gg *g)
{
	struct open_how how;
	const char *rel = g->path + g->rootlen;

	while (*rel == '/')
		rel++;
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
	return (int)syscall(SYS_openat2, g->rootfd, *rel ? rel : ".", &how, sizeof(how));
}

static void free_ents(struct ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

/* Directories below this depth keep their descriptor open while their
 * subdirectories are walked (openat from it: one lookup each); deeper
 * ones are closed first and their subdirectories reopened from the root,
 * so the walk never holds more than this many descriptors. */
#define GG_FD_DEPTH 64

/* The type of dfd/name when getdents gave none. */
static unsigned char type_of(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_FIFO;
}

/*
 * Where the entry name of a directory whose path relative to the
 * directory the rows start in is dirrel (NULL: that directory itself)
 * stands against the settings rows: CTL_IN when dirrel/name is a row,
 * CTL_WAY when it is a directory on a row's way, else CTL_NONE. *row
 * gets the row.
 */
static unsigned char ctl_match(const struct gg *g, const char *dirrel, const char *name,
			       const struct sbx_ctl_path **row)
{
	size_t dl = dirrel != NULL ? strlen(dirrel) : 0, nl = strlen(name);
	unsigned char how = CTL_NONE;

	for (const struct sbx_ctl_path *p = g->ctl; p != NULL && p->path != NULL; p++) {
		const char *r = p->path;

		if (dirrel != NULL) {
			if (strncmp(r, dirrel, dl) != 0 || r[dl] != '/')
				continue;
			r += dl + 1;
		}
		if (strncmp(r, name, nl) != 0)
			continue;
		if (r[nl] == '\0') {
			*row = p;
			return CTL_IN;
		}
		if (r[nl] == '/' && how == CTL_NONE) {
			how = CTL_WAY;
			*row = p;
		}
	}
	return how;
}

/*
 * The settings entries of the directory g->path (open as fd) that are not
 * directories: each created or changed in the session is moved aside. On
 * a row's way only a symlink counts (".claude" pointing at a directory of
 * settings elsewhere); a plain file there is nothing an editor reads.
 */
static void check_ctl_files(struct gg *g, int fd, const struct ent *ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ents[i].how == CTL_NONE || ents[i].type == DT_DIR ||
		    (ents[i].how == CTL_WAY && ents[i].type != DT_LNK))
			continue;
		if (changed(g, fd, ents[i].name))
			quarantine(g, fd, g->path, ents[i].name,
				   ents[i].row->kind != NULL ? ents[i].row->kind : "settings that run commands");
	}
}

/* Puts back the mode of the directory parentfd/name (g->path) that the
 * walk opened up; reported when it cannot. */
static void restore_mode(struct gg *g, int parentfd, const char *name, mode_t mode)
{
	if (fchmodat(parentfd, name, mode & 07777, 0) < 0)
		report_error(g, g->path, "", "cannot put back the mode of", errno);
}

/*
 * Walks the directory g->path (parentfd/name when parentfd >= 0, else
 * reopened from the root): checks it if it is a git directory, checks a
 * .git file in it and its settings entries, then descends into each
 * subdirectory, never through a symlink. reloff: 0, or the offset in
 * g->path of its path relative to the directory a settings row starts in
 * (it is on that row's way); inrow: the directory row it is in (every
 * entry counts), or NULL. Depth is bounded by PATH_MAX, descriptors by
 * GG_FD_DEPTH.
 */
static void walk(struct gg *g, int parentfd, const char *name, unsigned depth, size_t reloff,
		 const struct sbx_ctl_path *inrow)
{
	bool head = false, objects = false, common = false;
	unsigned char dotgit = DT_UNKNOWN;
	struct ent *ents = NULL, *ne;
	size_t n = 0, cap = 0, i, len;
	char *buf = g->dents;
	bool restore = false;
	size_t dlen = strlen(g->path);
	struct stat dst;
	ssize_t got;
	int fd;

	fd = parentfd >= 0 ? openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			   : open_below_root(g);
	/* A directory of ours the command made unreadable (chmod 000 stops
	 * a user other than root): read for the walk, its mode put back. */
	if (fd < 0 && errno == EACCES && parentfd >= 0 &&
	    fstatat(parentfd, name, &dst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(dst.st_mode) &&
	    dst.st_uid == geteuid() &&
	    fchmodat(parentfd, name, (dst.st_mode & 07777) | S_IRUSR | S_IXUSR, 0) == 0) {
		restore = true;
		fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		if (restore)
			restore_mode(g, parentfd, name, dst.st_mode);
		report_error(g, g->path, "", "cannot open to check for git repositories", e);
		return;
	}
	g->st->dirs++;
	/* getdents64 directly: no DIR allocation per directory. */
	while ((got = getdents64(fd, buf, sizeof(g->dents))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			unsigned char t = de->d_type, how = CTL_NONE;
			const struct sbx_ctl_path *row = inrow;
			size_t roff = reloff;

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			g->st->entries++;
			if (t == DT_UNKNOWN)
				t = type_of(fd, de->d_name);
			switch (de->d_name[0]) {
			case 'H':
				head = head || strcmp(de->d_name, "HEAD") == 0;
				break;
			case 'o':
				objects = objects || strcmp(de->d_name, "objects") == 0;
				break;
			case 'c':
				common = common || strcmp(de->d_name, "commondir") == 0;
				break;
			case '.':
				if (strcmp(de->d_name, ".git") == 0)
					dotgit = t;
				break;
			default:
				break;
			}
			/* The settings rows: one first-byte test per entry
			 * outside them. */
			if (inrow != NULL)
				how = CTL_IN;
			else if (reloff != 0)
				how = ctl_match(g, g->path + reloff, de->d_name, &row);
			if (how == CTL_NONE && inrow == NULL && g->ctl_first[(unsigned char)de->d_name[0]]) {
				how = ctl_match(g, NULL, de->d_name, &row);
				roff = dlen + 1;
			}
			if (t != DT_DIR && how == CTL_NONE)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 32;
				ne = realloc(ents, cap * sizeof(*ents));
				if (ne == NULL)
					goto nomem;
				ents = ne;
			}
			ents[n].name = strdup(de->d_name);
			if (ents[n].name == NULL)
				goto nomem;
			ents[n].how = how;
			ents[n].row = how != CTL_NONE ? row : NULL;
			ents[n].reloff = how != CTL_NONE ? roff : 0;
			ents[n++].type = t;
		}
	}
	if (got < 0)
		report_error(g, g->path, "", "cannot read to check for git repositories", errno);
	/* HEAD, and objects or a commondir: what git needs to take a
	 * directory as a git directory (bare ones included). */
	if (head && (objects || common))
		check_gitdir(g, fd);
	if (dotgit != DT_UNKNOWN && dotgit != DT_DIR)
		check_dotgit_file(g, fd, dotgit);
	check_ctl_files(g, fd, ents, n);
	if (depth >= GG_FD_DEPTH) {
		(void)close(fd);
		fd = -1;
	}
	len = strlen(g->path);
	for (i = 0; i < n; i++) {
		if (ents[i].type != DT_DIR)
			continue;
		if (!join(g->path + len, sizeof(g->path) - len, "", ents[i].name)) {
			g->path[len] = '\0';
			report_error(g, g->path, ents[i].name, "path too long to check", 0);
			continue;
		}
		/* join() with "" wrote "/name": the plain append. */
		walk(g, fd, ents[i].name, depth + 1, ents[i].how == CTL_WAY ? ents[i].reloff : 0,
		     ents[i].how == CTL_IN ? ents[i].row : NULL);
		g->path[len] = '\0';
	}
	if (fd >= 0)
		(void)close(fd);
	free_ents(ents, n);
	if (restore)
		restore_mode(g, parentfd, name, dst.st_mode);
	return;
nomem:
	report_error(g, g->path, "", "cannot check for git repositories", ENOMEM);
	(void)close(fd);
	free_ents(ents, n);
	if (restore)
		restore_mode(g, parentfd, name, dst.st_mode);
}

/*
 * The global and system configs the host's git reads (GIT_CONFIG_GLOBAL,
 * or ~/.gitconfig and $XDG_CONFIG_HOME/git/config; /etc/gitconfig) stay
 * as they are, but their includes and core.hooksPath may name a file or
 * directory in a writable tree (a team config in the work tree, hooks
 * kept in a dotfiles checkout): checked like a repository's kept config.
 */
static void check_global_configs(struct gg *g)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME"), *glob = getenv("GIT_CONFIG_GLOBAL");
	char files[3][PATH_MAX], dir[PATH_MAX];
	const char *slash;
	size_t i, n = 0;

	snprintf(files[n++], PATH_MAX, "/etc/gitconfig");
	if (glob != NULL && glob[0] == '/' && strlen(glob) < PATH_MAX) {
		snprintf(files[n++], PATH_MAX, "%s", glob);
	} else if (glob == NULL && home != NULL && home[0] == '/') {
		if (snprintf(files[n], PATH_MAX, "%s/.gitconfig", home) < PATH_MAX)
			n++;
		if (xdg != NULL && xdg[0] == '/' ? snprintf(files[n], PATH_MAX, "%s/git/config", xdg) < PATH_MAX
						 : snprintf(files[n], PATH_MAX, "%s/.config/git/config", home) < PATH_MAX)
			n++;
	}
	for (i = 0; i < n; i++) {
		slash = strrchr(files[i], '/');
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - files[i]), files[i]);
		check_kept_config(g, AT_FDCWD, files[i], true, files[i], dir[0] ? dir : "/", NULL);
	}
}

/*
 * The repository a root lies in, when its git directory is above the
 * root (outside the tree the walk sees): its config stays, but its
 * core.hooksPath or an include may name a directory or file inside the
 * root (hooks kept in the subproject the session ran in). Checked like a
 * kept config; a worktree's config is its common directory's.
 */
static void check_enclosing_repo(struct gg *g, const char *root)
{
	char up[PATH_MAX], gitdir[PATH_MAX], text[PATH_MAX], common[PATH_MAX], cfg[PATH_MAX];
	struct stat st;
	char *slash;
	int fd;

	if (strlen(root) >= sizeof(up))
		return;
	strcpy(up, root);
	while ((slash = strrchr(up, '/')) != NULL && slash != up) {
		*slash = '\0';
		if (!join(gitdir, sizeof(gitdir), up, ".git") || lstat(gitdir, &st) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			fd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return;
			if (read_small(fd, ".git", text, sizeof(text)) <= 8 || strncmp(text, "gitdir: ", 8) != 0 ||
			    !resolve_pointer(up, text + 8, gitdir)) {
				(void)close(fd);
				return;
			}
			(void)close(fd);
		}
		fd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && read_small(fd, "commondir", text, sizeof(text)) > 0 &&
		    resolve_pointer(gitdir, text, common))
			memcpy(gitdir, common, strlen(common) + 1);
		if (fd >= 0)
			(void)close(fd);
		if (under_roots(g, gitdir) || !join(cfg, sizeof(cfg), gitdir, "config"))
			return; /* walked with its root */
		check_kept_config(g, AT_FDCWD, cfg, false, cfg, gitdir, up);
		return;
	}
}

int sbx_gitguard_check(const char *const *roots, const struct timespec *since, bool keep,
		       const struct sbx_ctl_path *ctl, sbx_git_report_fn report, void *arg,
		       struct sbx_git_stats *stats)
{
	struct sbx_git_stats local;
	struct gg *g;
	size_t i, j;
	int rc;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -1;
	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	g->since = *since;
	g->keep = keep;
	g->report = report;
	g->arg = arg;
	g->st = stats;
	g->roots = roots;
	g->ctl = ctl;
	for (i = 0; ctl != NULL && ctl[i].path != NULL; i++)
		g->ctl_first[(unsigned char)ctl[i].path[0]] = true;
	find_git(g);
	for (i = 0; roots[i] != NULL; i++) {
		bool nested = false;

		/* A root inside another is walked with it. */
		for (j = 0; roots[j] != NULL; j++) {
			size_t n = strlen(roots[j]);
			if (j != i && strcmp(roots[i], roots[j]) != 0 &&
			    (strcmp(roots[j], "/") == 0 ||
			     (strncmp(roots[i], roots[j], n) == 0 && roots[i][n] == '/')))
				nested = true;
			if (j < i && strcmp(roots[i], roots[j]) == 0)
				nested = true;
		}
		if (nested || strlen(roots[i]) >= sizeof(g->path))
			continue;
		g->rootfd = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (g->rootfd < 0) {
			if (errno != ENOENT)
				report_error(g, roots[i], "", "cannot open to check for git repositories", errno);
			continue;
		}
		strcpy(g->path, strcmp(roots[i], "/") == 0 ? "" : roots[i]);
		g->rootlen = strlen(g->path);
		walk(g, -1, NULL, 0, 0, NULL);
		(void)close(g->rootfd);
		check_enclosing_repo(g, roots[i]);
	}
	check_global_configs(g);
	rc = g->rc;
	free(g);
	return rc;
}

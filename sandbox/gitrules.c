/*
 * gitrules.c - what in a git directory can make git run a program (SPEC
 * §3.3, docs/sandbox.md "Git control files"): config settings outside the
 * allowlist (parsed by the host's git), hooks, included files, commondir,
 * info/attributes, rebase todo lists, merge strategies, .git files. Each
 * finding changed during the session goes to gitquarantine.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
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

/* Does the directory path have what git needs of a git directory (HEAD,
 * and objects or commondir), or, wide, also objects, refs and a config
 * (one HEAD away from one)? */
static bool gitdir_at(const char *path, bool wide)
{
	/* O_PATH: faccessat needs search permission only, and a directory
	 * made 0100 is still one git takes */
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	bool objects, yes;

	if (fd < 0)
		return false;
	objects = faccessat(fd, "objects", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	yes = (faccessat(fd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (objects || faccessat(fd, "commondir", F_OK, AT_SYMLINK_NOFOLLOW) == 0)) ||
	      (wide && objects && faccessat(fd, "refs", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	       faccessat(fd, "config", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	(void)close(fd);
	return yes;
}

/* What git takes for a git directory, and what is one HEAD away. */
static bool gitdir_shape(const char *path)
{
	return gitdir_at(path, false);
}

static bool looks_gitdir(const char *path)
{
	return gitdir_at(path, true);
}

/*
 * core.worktree in the config of the git directory gitdir, value val: what
 * `git submodule` writes in SUPER/.git/modules/NAME (nested submodules:
 * .../modules/A/modules/B), a path to the submodule's work tree inside
 * SUPER. Harmless only there and only when it resolves (links followed:
 * git follows them) to an existing directory strictly inside SUPER and
 * in no git directory there. Anywhere else (a directory the command named
 * `modules`, round 9 of the attack), or pointing out of the superproject
 * (`$HOME`: a later checkout on the host writes the committed files
 * there), it is not.
 */
static bool submodule_worktree(const char *gitdir, const char *val, size_t vlen)
{
	const char *mod = strstr(gitdir, "/.git/modules/");
	char text[PATH_MAX], super[PATH_MAX], real_super[PATH_MAX], real[PATH_MAX];
	size_t n;
	struct stat st;

	if (mod == NULL || vlen == 0 || vlen >= sizeof(text) || memchr(val, '\0', vlen) != NULL)
		return false;
	memcpy(text, val, vlen);
	text[vlen] = '\0';
	snprintf(super, sizeof(super), "%.*s", (int)(mod - gitdir), gitdir);
	if (realpath(super, real_super) == NULL || !gg_resolve_pointer(gitdir, text, real) ||
	    stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	n = strlen(real_super);
	if (strncmp(real, real_super, n) != 0 || real[n] != '/')
		return false;
	/* Not in any git directory below SUPER either (its own .git, a
	 * nested repository's SUPER/x/.git, a separate or bare one such
	 * as SUPER/v/b.git): a checkout there writes the submodule's files
	 * among that repository's hooks and config. Each directory from
	 * the target up to SUPER, by name and by what git takes for one. */
	for (;;) {
		char *slash = strrchr(real, '/');

		if (slash == NULL || (size_t)(slash - real) < n)
			return true;
		if (strcmp(slash, "/.git") == 0 || looks_gitdir(real))
			return false;
		*slash = '\0';
	}
}

/* Is the setting name (value val) harmless in the config of the git
 * directory gitdir? core.worktree: only a submodule's own
 * (submodule_worktree()). */
static bool setting_harmless(const char *name, const char *gitdir, const char *val, size_t vlen)
{
	struct gg_key k;
	size_t i;

	split_key(name, &k);
	if (!k.has_sub && k.section_len == 4 && strncmp(k.section, "core", 4) == 0 && strcmp(k.key, "worktree") == 0)
		return submodule_worktree(gitdir, val, vlen);
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
void gg_find_git(struct gg *g)
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
		    !gg_under_roots(g, real) && !gg_under_roots(g, cand)) {
			memcpy(g->git, real, strlen(real) + 1);
			return;
		}
	}
}

/* The record at *pos of out[0..len) (git config -z: "key\nvalue\0" or
 * "key\0") into r, *pos moved past it; false at the end. */
bool gg_config_next(const char *out, size_t len, const char **pos, struct gg_rec *r)
{
	const char *rec = *pos, *end, *nl;

	if (out == NULL || rec >= out + len)
		return false;
	end = memchr(rec, '\0', (size_t)(out + len - rec));
	if (end == NULL)
		end = out + len;
	nl = memchr(rec, '\n', (size_t)(end - rec));
	r->key = rec;
	r->klen = (size_t)((nl != NULL ? nl : end) - rec);
	r->val = nl != NULL ? nl + 1 : NULL;
	r->vlen = nl != NULL ? (size_t)(end - nl - 1) : 0;
	*pos = end + 1;
	return true;
}

/*
 * Starts the host's git on one config file, the way git itself parses it:
 *   git config --no-includes --file FILE --list -z
 * in /, with an environment that reads no other config and finds no
 * repository (nothing it could run). 0 with r filled (then exactly one
 * gg_config_finish() or gg_config_abandon() of r), or -1: *why says what
 * failed. Several may run at once: each writes to its own pipe.
 */
int gg_config_start(const struct gg *g, const char *file, struct gg_run *r, const char **why)
{
	char *const envp[] = {"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			      "HOME=/nonexistent", "GIT_DIR=/nonexistent", "LC_ALL=C", NULL};
	char *const argv[] = {(char *)"git", "config", "--no-includes", "--file", (char *)file,
			      "--list", "-z", NULL};

	r->pid = -1;
	r->fd = -1;
	if (g->git[0] == '\0') {
		*why = GG_WHY_NO_GIT;
		return -1;
	}
	if (gg_git_spawn(g, argv, envp, r) < 0) {
		*why = GG_WHY_NO_GIT_RUN;
		return -1;
	}
	return 0;
}

/* Contract in gitguard_int.h. */
int gg_git_spawn(const struct gg *g, char *const argv[], char *const envp[], struct gg_run *r)
{
	int pfd[2], devnull;
	pid_t pid;

	r->pid = -1;
	r->fd = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
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
		return -1;
	}
	r->pid = pid;
	r->fd = pfd[0];
	return 0;
}

/*
 * The output of the run r (gg_config_start()), read to its end, and git
 * reaped. Returns the malloc'd output (keys and values; *len bytes, then
 * a NUL) or NULL: *why says what failed. r is done either way.
 */
char *gg_config_finish(struct gg_run *r, size_t *len, const char **why)
{
	char *buf = NULL, *nb;
	size_t cap = 0;
	bool too_big = false, slow = false;
	struct timespec t0, now;
	ssize_t n = 0;
	int st;

	*len = 0;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = {.fd = r->fd, .events = POLLIN};
		long left;
		int pr;

		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		left = GG_GIT_DEADLINE_MS - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0 || (pr = poll(&pf, 1, (int)left)) == 0) {
			/* git blocked (a FIFO it opens): killed, the file
			 * counts as unreadable (moved aside) */
			slow = true;
			n = -1;
			(void)kill(r->pid, SIGKILL);
			break;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		if (*len + 4096 > cap) {
			cap = cap ? 2 * cap : 8192;
			nb = cap <= GG_GIT_OUT_MAX_BYTES ? realloc(buf, cap + 1) : NULL;
			if (nb == NULL) {
				too_big = true;
				break;
			}
			buf = nb;
		}
		n = read(r->fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	(void)close(r->fd);
	r->fd = -1;
	while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
		;
	r->pid = -1;
	if (buf == NULL || n != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		*why = slow ? GG_WHY_SLOW : too_big ? GG_WHY_TOO_BIG : n < 0 ? GG_WHY_NO_GIT_RUN : GG_WHY_UNPARSED;
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

/* Ends the run r without its output (a failure elsewhere): git killed
 * and reaped; errno is kept (the failure's). A no-op when r is done or
 * was never started. */
void gg_config_abandon(struct gg_run *r)
{
	int saved = errno;

	if (r->pid < 0)
		return;
	(void)kill(r->pid, SIGKILL);
	(void)close(r->fd);
	r->fd = -1;
	while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	r->pid = -1;
	errno = saved;
}

/* gg_config_start() and gg_config_finish() of one file. */
char *gg_config_list(const struct gg *g, const char *file, size_t *len, const char **why)
{
	struct gg_run r;

	*len = 0;
	if (gg_config_start(g, file, &r, why) < 0)
		return NULL;
	return gg_config_finish(&r, len, why);
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
static void check_config(struct gg *g, int dfd, const char *dir, const char *name)
{
	char path[PATH_MAX], settings[512] = "";
	const char *why = NULL, *rec;
	struct gg_rec r;
	unsigned shown = 0;
	struct statx sx;
	size_t len;
	char *out;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	g->st->configs++;
	if (S_ISLNK(sx.stx_mode)) {
		gg_quarantine(g, dfd, dir, name, "a symbolic link (git reads what it points to)");
		return;
	}
	if (!S_ISREG(sx.stx_mode)) {
		gg_quarantine(g, dfd, dir, name, "not a regular file");
		return;
	}
	if (sx.stx_size > GG_CONFIG_MAX_BYTES) {
		gg_quarantine(g, dfd, dir, name, "too large to check");
		return;
	}
	if (g->st->configs > GG_NEW_CONFIGS_MAX) {
		gg_quarantine(g, dfd, dir, name,
			      "past the " GG_STR(GG_NEW_CONFIGS_MAX) " new configs the check reads in one run: not read");
		return;
	}
	if (!gg_join(path, sizeof(path), dir, name))
		return;
	out = gg_config_list(g, path, &len, &why);
	if (out == NULL) {
		gg_quarantine(g, dfd, dir, name, why);
		return;
	}
	for (rec = out; gg_config_next(out, len, &rec, &r);) {
		char key[256];
		size_t kl = r.klen < sizeof(key) ? r.klen : sizeof(key) - 1;

		memcpy(key, r.key, kl);
		key[kl] = '\0';
		if (!setting_harmless(key, dir, r.val, r.vlen))
			list_setting(settings, sizeof(settings), &shown, key);
	}
	free(out);
	if (shown > 0)
		gg_quarantine(g, dfd, dir, name, settings);
}

/* Does name end in suffix? */
static bool ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n >= s && strcmp(name + n - s, suffix) == 0;
}

/* How check_hooks_dir() takes a hooks directory's entries. */
enum hooks_new {
	HOOKS_CHANGED,   /* those created or changed in the session */
	HOOKS_ALL,       /* all: the directory is new (renamed into place, a new git directory) */
	HOOKS_ALL_NAMED, /* all those git runs as hooks, besides the changed ones: the directory
			  * is new but has a git directory's shape (its HEAD, objects, config
			  * stay) */
};

/*
 * How a hooks directory a kept config leads to (target, resolved) is
 * taken: another one than at the start (swapped by a rename or a link:
 * round 11) counts as new whole (only configs there at the start are
 * followed: kept_config()). One with a git directory's shape (named .git, HEAD with
 * objects or commondir) gets every entry git runs as a hook moved aside,
 * not its HEAD, objects or config: the shape is the command's to choose
 * (round 14 of the attack staged `stage/HEAD`, `stage/objects` beside
 * the hook to keep the rule off).
 */
static enum hooks_new swapped_hooks(struct gg *g, const char *target)
{
	const char *slash = strrchr(target, '/');

	if (!gg_ref_new(g, target))
		return HOOKS_CHANGED;
	if (looks_gitdir(target) || (slash != NULL && strcmp(slash, "/.git") == 0))
		return HOOKS_ALL_NAMED;
	return HOOKS_ALL;
}

/* Whether name is one git runs as a hook (githooks(5)). */
static bool git_hook_name(const char *name)
{
	static const char *const hooks[] = {
		"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
		"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
		"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
		"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
		"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
		"p4-pre-submit", "post-index-change",
	};

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(name, hooks[i]) == 0)
			return true;
	return false;
}

/*
 * Every entry of a hooks directory (open as hfd, path hdir) that was
 * created or changed in the session, or all of them when the directory
 * itself was (renamed into place, or in a new git directory), except the
 * *.sample files git init writes and never runs.
 */
static void check_hooks_dir(struct gg *g, int hfd, const char *hdir, enum hooks_new how)
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
		gg_report_unread(g, hdir, "", "cannot read the hooks directory", errno);
		return;
	}
	/* Names first, renames after: renaming while reading a directory
	 * may show an entry twice. */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    ends_with(de->d_name, ".sample") || gg_quarantined(g, hfd, de->d_name, how == HOOKS_ALL))
			continue;
		if (how != HOOKS_ALL && !(how == HOOKS_ALL_NAMED && git_hook_name(de->d_name)) &&
		    !gg_changed(g, hfd, de->d_name))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (nn == NULL || (nn[n] = strdup(de->d_name)) == NULL) {
			names = nn != NULL ? nn : names;
			gg_report_error(g, hdir, "", "cannot check the hooks directory", ENOMEM);
			break;
		}
		names = nn;
		n++;
	}
	(void)closedir(d);
	for (i = 0; i < n; i++) {
		snprintf(setting, sizeof(setting), "hook %s", names[i]);
		gg_quarantine(g, hfd, hdir, names[i], setting);
		free(names[i]);
	}
	free(names);
}

/* The hooks directory dfd/name of a git directory. */
static void check_hooks(struct gg *g, int dfd, const char *dir, const char *name, bool all_fresh)
{
	char hdir[PATH_MAX], real[PATH_MAX];
	struct gg_dir hd = {.pfd = dfd, .dir = dir, .name = name, .nofollow = true, .is_new = all_fresh,
			    .setting = "a hooks directory the check cannot read (git runs hooks through it)",
			    .what = "cannot open the hooks directory"};
	struct statx sx;
	int hfd;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	if (!S_ISDIR(sx.stx_mode)) {
		if (all_fresh || gg_changed(g, dfd, name))
			gg_quarantine(g, dfd, dir, name,
				   S_ISLNK(sx.stx_mode) ? "hooks is a symbolic link" : "hooks is not a directory");
		else if (S_ISLNK(sx.stx_mode) && gg_join(hdir, sizeof(hdir), dir, name) &&
			 realpath(hdir, real) != NULL && gg_under_roots(g, real)) {
			/* An old link (the user's) into a writable tree: what
			 * it points to may have changed, or been swapped for a
			 * directory staged elsewhere (by a rename or a link on
			 * its way): then all of it counts as new. */
			enum hooks_new how = swapped_hooks(g, real);
			struct gg_dir td = {.pfd = AT_FDCWD, .dir = real, .name = real, .is_new = how != HOOKS_CHANGED,
					    .setting = "a hooks directory the check cannot read (git runs hooks through it)",
					    .what = "cannot open the directory an old hooks link leads to"};

			if ((hfd = gg_dir_open(g, &td)) >= 0) {
				check_hooks_dir(g, hfd, real, how);
				gg_dir_close(g, &td, hfd);
			}
		}
		return;
	}
	/* git runs a hook through a directory it may only search (mode
	 * 0100): gg_dir_open() opens one of ours up, and one that stays
	 * unread is not an empty one */
	hfd = gg_dir_open(g, &hd);
	if (hfd < 0)
		return;
	if (!gg_join(hdir, sizeof(hdir), dir, name)) {
		gg_report_unread(g, dir, name, "cannot open the hooks directory", ENAMETOOLONG);
		gg_dir_close(g, &hd, hfd);
		return;
	}
	check_hooks_dir(g, hfd, hdir, all_fresh || gg_ts_fresh(g, &sx.stx_ctime) ? HOOKS_ALL : HOOKS_CHANGED);
	gg_dir_close(g, &hd, hfd);
}

/*
 * Can the file dfd/name (regular, at most GG_CONFIG_MAX_BYTES; through a
 * final symlink only when follow) name an include or a hooks path? A
 * cheap filter before running git on a config nobody changed: a section
 * header holding one of words, or a line whose key (before '=' or white
 * space) is "hookspath", "path", "excludesfile" or "attributesfile", in
 * any case. Wider than git (a
 * continued value line may look like a key: one git run more), never
 * narrower; a word only in a value (`name = include`) runs no git
 * (round 14 of the attack filled the walk's budget with such configs).
 * 1 or 0; -1 with errno when the file could not be read (then it says
 * nothing: round 30 of the attack held a lease on .git/config, and the
 * failed read had meant "nothing to follow").
 */
static int file_mentions(int dfd, const char *name, bool follow, const char *const *words)
{
	bool found = false;
	size_t len;
	char *buf = fileio_read_at(dfd, name, GG_CONFIG_MAX_BYTES, follow ? 0 : FILEIO_NOFOLLOW, &len,
				   NULL);

	if (buf == NULL)
		return -1;
	/* git reads past a NUL in a value, and skips a UTF-8 byte order
	 * mark (round 14's review): NULs read as spaces, the mark skipped. */
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	for (char *line = buf + (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0), *next;
	     line != NULL && *line != '\0' && !found; line = next) {
		size_t k;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		line += strspn(line, " \t\r");
		if (*line == '[') {
			for (const char *const *w = words; *w != NULL && !found; w++)
				found = strcasestr(line, *w) != NULL;
			continue;
		}
		k = strcspn(line, "= \t\r");
		found = (k == 9 && strncasecmp(line, "hookspath", 9) == 0) || (k == 4 && strncasecmp(line, "path", 4) == 0) ||
			(k == 12 && strncasecmp(line, "excludesfile", 12) == 0) ||
			(k == 14 && strncasecmp(line, "attributesfile", 14) == 0);
	}
	free(buf);
	return found ? 1 : 0;
}

/* A path value of a config into out, a leading "~/" taken from HOME and
 * "~user/" from the password database, as git does (round 14 of the
 * attack: `~user/` was taken as a relative path). False when it does not
 * fit, or the home is not known. */
static bool expand_home(const char *value, char *out, size_t len)
{
	const char *home = getenv("HOME");
	int n;

	if (strncmp(value, "~/", 2) == 0) {
		n = home != NULL ? snprintf(out, len, "%s/%s", home, value + 2) : -1;
	} else if (strcmp(value, "~") == 0) {
		n = home != NULL ? snprintf(out, len, "%s", home) : -1;
	} else if (value[0] == '~') {
		/* ~user/... or a bare ~user: the home of user. */
		const char *slash = strchr(value, '/');
		size_t ul = slash != NULL ? (size_t)(slash - value - 1) : strlen(value + 1);
		char user[256];
		struct passwd pw, *res = NULL;
		char buf[16384];

		if (ul >= sizeof(user))
			return false;
		memcpy(user, value + 1, ul);
		user[ul] = '\0';
		if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) != 0 || res == NULL)
			return false;
		n = snprintf(out, len, "%s%s", pw.pw_dir, slash != NULL ? slash : "");
	} else {
		n = snprintf(out, len, "%s", value);
	}
	return n >= 0 && (size_t)n < len;
}

static void kept_config(struct gg *g, int dfd, const char *name, bool follow, const char *cfg, const char *dir,
			const char *hooks_base, unsigned depth);
static bool config_trusted(struct gg *g, const char *cfg);

/* Whether a component of the path as written (absolute) is a link made
 * or changed in the session. */
static bool fresh_link_on(const struct gg *g, const char *path)
{
	char pre[PATH_MAX];
	struct statx sx;
	size_t n = strlen(path);

	if (n >= sizeof(pre))
		return false;
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(pre, path, i);
		pre[i] = '\0';
		if (gg_statx(AT_FDCWD, pre, AT_SYMLINK_NOFOLLOW, &sx) == 0 && S_ISLNK(sx.stx_mode) &&
		    gg_ts_fresh(g, &sx.stx_ctime))
			return true;
	}
	return false;
}

/* git's own bound on nested includes. */
#define GG_INCLUDE_DEPTH 10

/*
 * An included file (value of include.path or includeIf.*.path, whatever
 * its condition, in a config in the directory base): when it is in a
 * writable tree and was written in the session, or is another file than
 * at the session's start, it is checked like a config of its own; else
 * it is a kept config in turn, whose own includes and core.hooksPath are
 * followed (round 12 of the attack: a team config the repository
 * includes, including a file in the work tree). hooks_base: as
 * gg_check_kept_config()'s.
 */
static void check_include(struct gg *g, const char *base, const char *value, const char *hooks_base,
			  unsigned depth)
{
	char raw[PATH_MAX], target[PATH_MAX], dir[PATH_MAX], written[PATH_MAX], wdir[PATH_MAX];
	const char *slash, *wslash;
	struct gg_dir id = {.pfd = AT_FDCWD, .what = "cannot open the directory of an included config"};
	bool writable;
	int dfd;

	if (depth >= GG_INCLUDE_DEPTH || !expand_home(value, raw, sizeof(raw)))
		return;
	if (!gg_resolve_pointer(base, raw, target) || (slash = strrchr(target, '/')) == NULL)
		return;
	/* git opens the path as written and starts a nested relative
	 * include from its directory, not from where links lead (round 14
	 * of the attack: conf/team.cfg a link to x/team.cfg, whose
	 * `include.path = local.cfg` git reads as conf/local.cfg). */
	if (raw[0] == '/')
		snprintf(written, sizeof(written), "%s", raw);
	else if (!gg_join(written, sizeof(written), base, raw))
		return;
	wslash = strrchr(written, '/');
	snprintf(wdir, sizeof(wdir), "%.*s", (int)(wslash - written), written);
	writable = gg_under_roots(g, target);
	if (writable && g->record != NULL)
		gg_ref_note(g, target);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target), target);
	/* git reads an include through a directory it may only search
	 * (mode 0100, round 30's review): one of ours is opened up; one in
	 * a writable tree changed in the session that stays unread moves
	 * aside whole; else unread is reported, not taken for nothing */
	id.dir = id.name = dir[0] ? dir : "/";
	id.setting = writable ? "the directory of an included config, that the check cannot read" : NULL;
	dfd = gg_dir_open(g, &id);
	if (dfd < 0)
		return;
	/* Written in the session, or another file than at its start (one
	 * staged elsewhere, reached now through a directory renamed or
	 * linked into the include's way: round 11 of the attack). */
	if (writable && g->record == NULL &&
	    (gg_ref_new(g, target) || gg_changed(g, dfd, slash + 1) || fresh_link_on(g, written)))
		check_config(g, dfd, dir, slash + 1);
	else
		kept_config(g, dfd, slash + 1, false, target, wdir[0] ? wdir : "/", hooks_base, depth + 1);
	gg_dir_close(g, &id, dfd);
}

/* A core.hooksPath value from base: when it is a directory under the
 * roots, the hooks written there in the session are moved aside. */
static void check_hooks_path(struct gg *g, const char *base, const char *value)
{
	char target[PATH_MAX];
	struct gg_dir hd = {.pfd = AT_FDCWD,
			    .setting = "a core.hooksPath directory the check cannot read (git runs hooks through it)",
			    .what = "cannot open the core.hooksPath directory to check its hooks"};
	enum hooks_new how;
	struct stat st;
	int hfd;

	if (!gg_resolve_pointer(base, value, target) || !gg_under_roots(g, target) ||
	    stat(target, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (g->record != NULL) {
		gg_ref_note(g, target);
		return;
	}
	/* git runs a hook through a directory it cannot list (mode 0100):
	 * one of ours is opened up for the check, and one that stays
	 * unread is not an empty one */
	how = swapped_hooks(g, target);
	hd.dir = hd.name = target;
	hd.is_new = how != HOOKS_CHANGED;
	hfd = gg_dir_open(g, &hd);
	if (hfd < 0)
		return;
	/* Another directory than at the session's start (round 11 of the
	 * attack: `mv .githooks old && mv staged .githooks`, hooks written
	 * in an earlier session): every hook in it counts as new
	 * (swapped_hooks()). */
	check_hooks_dir(g, hfd, target, how);
	gg_dir_close(g, &hd, hfd);
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
void gg_check_kept_config(struct gg *g, int dfd, const char *name, bool follow, const char *cfg,
			  const char *dir, const char *hooks_base)
{
	kept_config(g, dfd, name, follow, cfg, dir, hooks_base, 0);
}

/*
 * gg_config_list() of cfg, once per file in a walk: a config reached
 * from many work trees or directories runs git once (round 14's review:
 * one file counted thousands of runs). The text stays the walk's
 * (gg_listed_free()). NULL: *why says what failed, or is NULL when there
 * is nothing to say (the file is gone) or it was reported here.
 */
static char *config_listed(struct gg *g, const char *cfg, size_t *len, const char **why)
{
	struct stat st;
	char *out;

	*why = NULL;
	if (stat(cfg, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			*why = "cannot read its status";
		return NULL;
	}
	for (size_t i = 0; i < g->nlisted; i++)
		if (g->listed[i].dev == (uint64_t)st.st_dev && g->listed[i].ino == (uint64_t)st.st_ino) {
			*len = g->listed[i].len;
			return g->listed[i].out;
		}
	out = gg_config_list(g, cfg, len, why);
	if (out == NULL)
		return NULL;
	if (g->nlisted == g->caplisted) {
		size_t cap = g->caplisted ? 2 * g->caplisted : 16;
		struct gg_listed *n = realloc(g->listed, cap * sizeof(*n));

		if (n == NULL) {
			free(out);
			gg_report_unread(g, cfg, "", "cannot follow the config's references", ENOMEM);
			*why = NULL;
			return NULL;
		}
		g->listed = n;
		g->caplisted = cap;
	}
	g->listed[g->nlisted].dev = (uint64_t)st.st_dev;
	g->listed[g->nlisted].ino = (uint64_t)st.st_ino;
	g->listed[g->nlisted].out = out;
	g->listed[g->nlisted++].len = *len;
	return out;
}

void gg_listed_free(struct gg *g)
{
	for (size_t i = 0; i < g->nlisted; i++)
		free(g->listed[i].out);
	free(g->listed);
	g->listed = NULL;
	g->nlisted = g->caplisted = 0;
	free(g->once);
	g->once = NULL;
	g->nonce = g->caponce = 0;
	free(g->moved);
	g->moved = NULL;
	g->nmoved = g->capmoved = 0;
}

/*
 * A relative core.excludesFile or core.attributesFile (value) of a config
 * that stays: git opens it from the top of the work tree (base), not from
 * the config's directory (round 35 of the attack, e5: the user's global
 * `excludesFile = .gitignore_global`, meant as ~/, let the session write
 * an ignore file at a project's top that hid itself and a new
 * tests/conftest.py from git status). The file there, written in the
 * session (or come with a directory made or renamed there), is moved
 * aside: it is the user's own rules in git's reading, and no project
 * writes them. The project's .gitignore and .gitattributes are their own
 * checks'.
 */
static void check_rules_file(struct gg *g, const char *base, const char *value, bool attributes)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *name;
	char *slash;
	int dfd;

	if (g->record != NULL || !gg_join(path, sizeof(path), base, value) || (slash = strrchr(path, '/')) == NULL)
		return;
	name = slash + 1;
	if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strcmp(name, ".gitignore") == 0 || strcmp(name, ".gitattributes") == 0)
		return;
	*slash = '\0';
	if (realpath(path[0] ? path : "/", dir) == NULL || !gg_under_roots(g, dir))
		return;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && !gg_quarantined(g, dfd, name, false) &&
	    (gg_changed(g, dfd, name) || gg_dir_whole(g, dfd, dir)))
		gg_quarantine(g, dfd, dir, name,
			      attributes ? "the file a relative core.attributesFile of your git config names from "
					   "the work tree's top (git reads it as your own attributes: filter and "
					   "diff drivers for every path)"
					 : "the file a relative core.excludesFile of your git config names from the "
					   "work tree's top (git reads it as your own ignore rules: what they match "
					   "does not show in git status)");
	(void)close(dfd);
}

/* gg_check_kept_config() at include depth depth. */
static void kept_config(struct gg *g, int dfd, const char *name, bool follow, const char *cfg, const char *dir,
			const char *hooks_base, unsigned depth)
{
	static const char *const words[] = {"hookspath", "include", "excludesfile", "attributesfile", NULL};
	char value[PATH_MAX] = "", raw[PATH_MAX], what[160], rules[2][PATH_MAX] = {"", ""};
	const char *why, *rec;
	struct gg_rec r;
	size_t len;
	char *out;
	int m;

	/* Only a config that was there at the start is followed: one the
	 * command wrote (or swapped in) is its git directory's check's, and
	 * following it would let it choose what the check moves aside
	 * (round 13's review: core.hooksPath = the work tree moved .git). */
	if (!config_trusted(g, cfg))
		return;
	/* A file that cannot be read says nothing about what it names
	 * (round 30 of the attack: a lease kept past the session made the
	 * O_NONBLOCK open fail with EWOULDBLOCK, and a planted include was
	 * never followed): git reads it then, and git failing is reported.
	 * Only a file that is not there names nothing. */
	m = file_mentions(dfd, name, follow, words);
	if (m == 0 || (m < 0 && (errno == ENOENT || errno == ENOTDIR)) || !gg_config_once(g, cfg, hooks_base, dir))
		return;
	out = config_listed(g, cfg, &len, &why);
	if (out == NULL) {
		if (why != NULL) {
			snprintf(what, sizeof(what), "%s; what it includes and its core.hooksPath were not checked", why);
			gg_report_unread(g, cfg, "", what, 0);
		}
		return;
	}
	for (rec = out; gg_config_next(out, len, &rec, &r);) {
		if (r.val == NULL || r.vlen >= sizeof(value))
			continue;
		if (gg_rec_is(&r, "core.hookspath")) {
			memcpy(value, r.val, r.vlen);
			value[r.vlen] = '\0'; /* the last one wins, as in git */
		} else if (gg_rec_is(&r, "core.excludesfile") || gg_rec_is(&r, "core.attributesfile")) {
			char *v = rules[gg_rec_is(&r, "core.attributesfile")];

			memcpy(v, r.val, r.vlen);
			v[r.vlen] = '\0';
		} else if (gg_rec_is_include(&r)) {
			char inc[PATH_MAX];

			memcpy(inc, r.val, r.vlen);
			inc[r.vlen] = '\0';
			check_include(g, dir, inc, hooks_base, depth);
		}
	}
	for (size_t i = 0; i < 2; i++) {
		if (rules[i][0] == '\0' || !expand_home(rules[i], raw, sizeof(raw)) || raw[0] == '/')
			continue;
		if (hooks_base == NULL)
			memcpy(g->global_rules[i], raw, strlen(raw) + 1);
		else
			check_rules_file(g, hooks_base[0] ? hooks_base : "/", raw, i == 1);
	}
	if (value[0] == '\0' || !expand_home(value, raw, sizeof(raw)))
		return;
	if (raw[0] != '/' && hooks_base == NULL) {
		/* The global config's: relative to every work tree, checked
		 * with each repository (gg_check_global_hooks()). */
		memcpy(g->global_hooks, raw, strlen(raw) + 1);
		return;
	}
	check_hooks_path(g, hooks_base != NULL && hooks_base[0] ? hooks_base : "/", raw);
}

/*
 * Whether the config cfg was there when the session started: outside the
 * writable trees (the command could not write it), or noted by the walk
 * before (which notes each config under them that it reads). Only such a
 * config makes a swapped target count as new whole. The walk before
 * notes it here.
 */
static bool config_trusted(struct gg *g, const char *cfg)
{
	char real[PATH_MAX];

	if (realpath(cfg, real) == NULL || !gg_under_roots(g, real))
		return true;
	if (g->record != NULL) {
		gg_ref_note(g, real);
		return true;
	}
	return g->before == NULL || !gg_ref_new(g, real);
}

/* The global config's relative core.hooksPath (g->global_hooks) from the
 * work tree base: hooks written there in the session are moved aside. */
void gg_check_global_hooks(struct gg *g, const char *base)
{
	if (g->global_hooks[0] != '\0')
		check_hooks_path(g, base, g->global_hooks);
	/* The same for its relative excludes and attributes files. */
	for (size_t i = 0; i < 2; i++)
		if (g->global_rules[i][0] != '\0')
			check_rules_file(g, base[0] ? base : "/", g->global_rules[i], i == 1);
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
	if (!all_fresh && !gg_ts_fresh(g, &sx.stx_ctime))
		return;
	if (S_ISREG(sx.stx_mode) && parent_named(g->path, "worktrees") &&
	    gg_read_small(gfd, "commondir", text, sizeof(text)) > 0 && gg_resolve_pointer(g->path, text, target) &&
	    gg_join(up, sizeof(up), g->path, "../..") && realpath(up, expect) != NULL && strcmp(target, expect) == 0)
		return;
	gg_quarantine(g, gfd, g->path, "commondir", "commondir (git reads config and hooks where it points)");
}

/* info/attributes of a git directory, changed in the session: it selects
 * filter and diff drivers for every path, and git never writes it. */
static void check_info(struct gg *g, int gfd, bool all_fresh)
{
	char idir[PATH_MAX];
	struct gg_dir id = {.pfd = gfd, .dir = g->path, .name = "info", .nofollow = true, .is_new = all_fresh,
			    .setting = "an info directory the check cannot read (info/attributes selects filter and "
				       "diff drivers)",
			    .what = "cannot open the info directory to check info/attributes"};
	struct statx sx;
	int ifd;

	if (gg_statx(gfd, "info", AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return;
	if (!S_ISDIR(sx.stx_mode)) {
		if (all_fresh || gg_changed(g, gfd, "info"))
			gg_quarantine(g, gfd, g->path, "info", "info is not a directory");
		return;
	}
	ifd = gg_dir_open(g, &id);
	if (ifd < 0)
		return;
	if ((all_fresh || gg_ts_fresh(g, &sx.stx_ctime) || gg_changed(g, ifd, "attributes")) &&
	    faccessat(ifd, "attributes", F_OK, AT_SYMLINK_NOFOLLOW) == 0 && gg_join(idir, sizeof(idir), g->path, "info"))
		gg_quarantine(g, ifd, idir, "attributes", "info/attributes (selects filter and diff drivers)");
	gg_dir_close(g, &id, ifd);
}

/*
 * Other programs' settings kept inside a git directory, that run commands
 * when the program opens the repository: lazygit reads GITDIR/lazygit.yml
 * (custom commands, git.paging.pager, os.edit). Written in the session
 * (or the git directory new): moved aside. Their workspace twins
 * (.lazygit.yml) are rows of the mandatory table.
 */
static void check_tool_configs(struct gg *g, int gfd, bool all_fresh)
{
	static const struct {
		const char *name, *what;
	} tools[] = {
		{"lazygit.yml", "lazygit repository config (custom commands, pager)"},
	};

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (faccessat(gfd, tools[i].name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (all_fresh || gg_changed(g, gfd, tools[i].name)))
			gg_quarantine(g, gfd, g->path, tools[i].name, tools[i].what);
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
	/* git reads and writes the todo list through a directory it may
	 * not list (mode 0300: round 30's review) */
	struct gg_dir rd = {.pfd = gfd, .dir = g->path, .name = "rebase-merge", .nofollow = true, .is_new = all_fresh,
			    .setting = "a rebase-merge directory the check cannot read (git rebase --continue runs "
				       "its todo list)",
			    .what = "cannot open the rebase-merge directory to check its todo list"};
	size_t len;
	int rfd;

	rfd = gg_dir_open(g, &rd);
	if (rfd < 0)
		return;
	if (!all_fresh && !gg_changed(g, rfd, todo) && !gg_changed(g, gfd, "rebase-merge")) {
		gg_dir_close(g, &rd, rfd);
		return;
	}
	text = fileio_read_at(rfd, todo, GG_CONFIG_MAX_BYTES, FILEIO_NOFOLLOW, &len, NULL);
	if (text == NULL) {
		if (faccessat(rfd, todo, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && gg_join(rdir, sizeof(rdir), g->path, "rebase-merge"))
			gg_quarantine(g, rfd, rdir, todo, "rebase todo list that cannot be checked");
		gg_dir_close(g, &rd, rfd);
		return;
	}
	if (todo_runs_command(text) && gg_join(rdir, sizeof(rdir), g->path, "rebase-merge"))
		gg_quarantine(g, rfd, rdir, todo, "rebase todo list with exec (runs on git rebase --continue)");
	free(text);
	gg_dir_close(g, &rd, rfd);
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
	const char *why = NULL, *rec;
	struct gg_rec r;
	bool bad = false;
	size_t len;
	char *out;
	/* rebase-merge: check_rebase_todo() ran first, and moved aside or
	 * reported one that cannot be opened */
	struct gg_dir rd = {.pfd = gfd, .dir = g->path, .name = "rebase-merge", .nofollow = true};
	struct gg_dir sd = {.pfd = gfd, .dir = g->path, .name = "sequencer", .nofollow = true, .is_new = all_fresh,
			    .setting = "a sequencer directory the check cannot read (git cherry-pick --continue "
				       "takes its options)",
			    .what = "cannot open the sequencer directory to check its options"};
	int sfd;

	sfd = gg_dir_open(g, &rd);
	if (sfd >= 0) {
		if ((all_fresh || gg_changed(g, sfd, "strategy") || gg_changed(g, gfd, "rebase-merge")) &&
		    faccessat(sfd, "strategy", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (gg_read_small(sfd, "strategy", text, sizeof(text)) < 0 || !strategy_builtin(text)) &&
		    gg_join(sdir, sizeof(sdir), g->path, "rebase-merge"))
			gg_quarantine(g, sfd, sdir, "strategy",
				   "merge strategy that is a program (runs on git rebase --continue)");
		gg_dir_close(g, &rd, sfd);
	}
	sfd = gg_dir_open(g, &sd);
	if (sfd < 0)
		return;
	if (!(all_fresh || gg_changed(g, sfd, "opts") || gg_changed(g, gfd, "sequencer")) ||
	    faccessat(sfd, "opts", F_OK, AT_SYMLINK_NOFOLLOW) < 0 || !gg_join(sdir, sizeof(sdir), g->path, "sequencer") ||
	    !gg_join(path, sizeof(path), sdir, "opts")) {
		gg_dir_close(g, &sd, sfd);
		return;
	}
	/* As check_config() does: git would open a FIFO or a device and
	 * wait for ever (round 17 of the attack), and read a link's target;
	 * and counted against the same cap (round 18: 10,000 repositories
	 * of an options file each took 12.7 s). */
	{
		struct statx sx;

		if (g->st->configs++ > GG_NEW_CONFIGS_MAX) {
			gg_quarantine(g, sfd, sdir, "opts",
				      "past the " GG_STR(GG_NEW_CONFIGS_MAX) " new configs the check reads in one run: "
				      "not read");
			gg_dir_close(g, &sd, sfd);
			return;
		}

		if (gg_statx(sfd, "opts", AT_SYMLINK_NOFOLLOW, &sx) < 0) {
			gg_dir_close(g, &sd, sfd);
			return;
		}
		if (!S_ISREG(sx.stx_mode) || sx.stx_size > GG_CONFIG_MAX_BYTES) {
			gg_quarantine(g, sfd, sdir, "opts",
				      S_ISLNK(sx.stx_mode) ? "a symbolic link (git reads what it points to)"
				      : !S_ISREG(sx.stx_mode) ? "not a regular file" : "too large to check");
			gg_dir_close(g, &sd, sfd);
			return;
		}
	}
	out = gg_config_list(g, path, &len, &why);
	for (rec = out; gg_config_next(out, len, &rec, &r);)
		if (gg_rec_is(&r, "options.strategy") && r.val != NULL && !strategy_builtin(r.val))
			bad = true;
	free(out);
	if (out == NULL || bad)
		gg_quarantine(g, sfd, sdir, "opts",
			   out == NULL ? why : "options.strategy (a program, runs on git cherry-pick --continue)");
	gg_dir_close(g, &sd, sfd);
}

/*
 * Was the git directory open as gfd created in the session, or did it
 * become one in it? Not one at the start (sbx_git_before(): the walk
 * before the session did not find it, by device and inode: a directory
 * completed with HEAD, objects or refs moved in, or swapped in by
 * rename, round 9 of the attack); its own birth time, or the birth time of its objects
 * or refs directory (git never recreates either), or a commondir written
 * in the session (git never rewrites one). Then every control file in it
 * counts as new, whatever its own times say (files moved in keep theirs;
 * a config staged in an earlier session is "activated" now). Without
 * birth times (some filesystems), only the files' own ctimes count.
 */
static bool gitdir_new(const struct gg *g, int gfd)
{
	static const char *const born[] = {"objects", "refs"};
	struct statx sx;

	if (g->activated)
		return true;
	/* Not one when the session started: it became one in it, whatever
	 * its parts' times (staged in an earlier session, moved in). */
	if (g->before != NULL && !gg_was_gitdir(g->before, gfd))
		return true;
	if (gg_statx(gfd, "", AT_EMPTY_PATH, &sx) == 0 && (sx.stx_mask & STATX_BTIME) &&
	    gg_ts_fresh(g, &sx.stx_btime))
		return true;
	for (size_t i = 0; i < sizeof(born) / sizeof(born[0]); i++)
		if (gg_statx(gfd, born[i], AT_SYMLINK_NOFOLLOW, &sx) == 0 &&
		    ((sx.stx_mask & STATX_BTIME) ? gg_ts_fresh(g, &sx.stx_btime) : false))
			return true;
	if (gg_changed(g, gfd, "commondir"))
		return true;
	if (gg_statx(gfd, "objects", AT_SYMLINK_NOFOLLOW, &sx) == 0 && S_ISLNK(sx.stx_mode) &&
	    gg_ts_fresh(g, &sx.stx_ctime))
		return true;
	return false;
}

/* One git directory: g->path, open as gfd. */
/* The kept configs of the git directory g->path (open as gfd): config,
 * and config.worktree (git reads it with extensions.worktreeConfig; a
 * core.hooksPath set with `git config --worktree` is there: round 13 of
 * the attack), followed from the work tree base. */
static void check_own_configs(struct gg *g, int gfd, const char *base)
{
	static const char *const files[] = {"config", "config.worktree"};
	char cfg[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (faccessat(gfd, files[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0 && gg_join(cfg, sizeof(cfg), g->path, files[i]))
			gg_check_kept_config(g, gfd, files[i], false, cfg, g->path, base);
}

/* Where a relative core.hooksPath of the git directory gitdir starts: its
 * work tree's top (the directory of a .git), or itself (bare). */
static void work_tree_of(const char *gitdir, char base[PATH_MAX])
{
	const char *slash = strrchr(gitdir, '/');

	if (slash != NULL && strcmp(slash, "/.git") == 0)
		snprintf(base, PATH_MAX, "%.*s", (int)(slash - gitdir), gitdir);
	else
		snprintf(base, PATH_MAX, "%s", gitdir);
}

void gg_check_gitdir(struct gg *g, int gfd)
{
	char base[PATH_MAX];
	bool all = gitdir_new(g, gfd);

	g->st->repos++;
	if (all || gg_changed(g, gfd, "config"))
		check_config(g, gfd, g->path, "config");
	if (all || gg_changed(g, gfd, "config.worktree"))
		check_config(g, gfd, g->path, "config.worktree");
	check_commondir(g, gfd, all);
	check_hooks(g, gfd, g->path, "hooks", all);
	check_info(g, gfd, all);
	check_tool_configs(g, gfd, all);
	check_rebase_todo(g, gfd, all);
	check_strategy(g, gfd, all);
	/* What makes git show other than the objects and the work tree
	 * (replace refs, grafts, alternates, index bits, exclude rules) and
	 * what its prompt prints raw (gitviews.c). */
	gg_check_views(g, gfd, all);
	/* A config that stayed may reach into a writable tree; so may a
	 * relative core.hooksPath of the global config, from the work tree. */
	work_tree_of(g->path, base);
	check_own_configs(g, gfd, base);
	gg_check_global_hooks(g, base);
}

void gg_record_refs(struct gg *g, int gfd)
{
	char base[PATH_MAX], hdir[PATH_MAX], real[PATH_MAX];
	struct stat st;

	work_tree_of(g->path, base);
	check_own_configs(g, gfd, base);
	gg_check_global_hooks(g, base);
	if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
	    gg_join(hdir, sizeof(hdir), g->path, "hooks") && realpath(hdir, real) != NULL && gg_under_roots(g, real))
		gg_ref_note(g, real);
}

void gg_check_worktree_side(struct gg *g, int dfd)
{
	static const char *const files[] = {"config", "config.worktree"};
	char text[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX], cfg[PATH_MAX];
	char top[PATH_MAX];
	ssize_t n = gg_read_small(dfd, ".git", text, sizeof(text));

	if (n < 0) {
		/* the configs it leads to were not followed (round 30) */
		gg_report_unread(g, g->path, ".git", "cannot read the .git file to follow its git directory's config", errno);
		return;
	}
	if (n <= 8 || strncmp(text, "gitdir: ", 8) != 0 || !gg_resolve_pointer(g->path, text + 8, gitdir) ||
	    !gitdir_shape(gitdir))
		return;
	snprintf(top, sizeof(top), "%s", g->path[0] ? g->path : "/");
	/* A linked worktree's config is its common directory's; its own
	 * config.worktree (extensions.worktreeConfig) is read as well. */
	{
		int gfd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (gfd < 0) {
			gg_report_unread(g, gitdir, "", "cannot open the git directory to follow its config", errno);
			return;
		}
		n = gg_read_small(gfd, "commondir", text, sizeof(text));
		if (n < 0)
			gg_report_unread(g, gitdir, "commondir", "cannot read to follow the common directory's config",
					 errno);
		if (n > 0 && gg_resolve_pointer(gitdir, text, common)) {
			if (gg_join(cfg, sizeof(cfg), common, "config") && access(cfg, F_OK) == 0)
				gg_check_kept_config(g, AT_FDCWD, cfg, false, cfg, common, top);
		}
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			if (faccessat(gfd, files[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
			    gg_join(cfg, sizeof(cfg), gitdir, files[i]))
				gg_check_kept_config(g, gfd, files[i], false, cfg, gitdir, top);
		(void)close(gfd);
	}
	gg_check_global_hooks(g, top);
}

void gg_check_env_config(struct gg *g)
{
	const char *count = getenv("GIT_CONFIG_COUNT");
	char name[64], raw[PATH_MAX];
	long n;

	if (count == NULL || (n = strtol(count, NULL, 10)) <= 0)
		return;
	for (long i = 0; i < n && i < 1000; i++) {
		const char *k, *v;

		snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%ld", i);
		k = getenv(name);
		snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%ld", i);
		v = getenv(name);
		if (k == NULL || v == NULL)
			continue;
		if ((strcasecmp(k, "core.excludesFile") == 0 || strcasecmp(k, "core.attributesFile") == 0) &&
		    expand_home(v, raw, sizeof(raw)) && raw[0] != '/') {
			/* Relative: from every work tree (check_rules_file()). */
			snprintf(g->global_rules[strcasecmp(k, "core.attributesFile") == 0],
				 sizeof(g->global_rules[0]), "%s", raw);
			continue;
		}
		if (strcasecmp(k, "core.hooksPath") == 0 && expand_home(v, raw, sizeof(raw))) {
			if (raw[0] != '/') {
				/* Relative: from every work tree, as the global
				 * config's. */
				snprintf(g->global_hooks, sizeof(g->global_hooks), "%s", raw);
			} else {
				check_hooks_path(g, "/", raw);
			}
		} else if (strcasecmp(k, "include.path") == 0 ||
			   (strncasecmp(k, "includeif.", 10) == 0 && strlen(k) > 15 &&
			    strcasecmp(k + strlen(k) - 5, ".path") == 0)) {
			check_include(g, "/", v, NULL, 0);
		}
	}
}

bool gg_config_once(struct gg *g, const char *cfg, const char *hooks_base, const char *dir)
{
	struct stat st;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a of hooks_base, NUL, dir */
	bool seen_file = false;

	if (stat(cfg, &st) < 0)
		return false;
	for (const char *c = hooks_base != NULL ? hooks_base : ""; *c != '\0'; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	h *= 1099511628211ULL;
	for (const char *c = dir; *c != '\0'; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	for (size_t i = 0; i < g->nonce; i++) {
		if (g->once[i].dev != (uint64_t)st.st_dev || g->once[i].ino != (uint64_t)st.st_ino)
			continue;
		if (g->once[i].base == h)
			return false;
		seen_file = true;
	}
	/* The budget counts configs, not the work trees that lead to one
	 * (work trees whose .git files all name the user's repository must
	 * not use it up); the second bound is the walk's time. */
	if (!seen_file && g->nfiles >= GG_CONFIGS_MAX) {
		gg_report_error(g, cfg, "",
				"too many git configs to follow in one walk (includes, work trees): its includes "
				"and hooks path were not checked",
				0);
		return false;
	}
	if (g->nonce >= 16 * GG_CONFIGS_MAX) {
		/* Each one named: the check did not follow it. */
		gg_report_error(g, cfg, "",
				"too many git configs to follow in one walk (includes, work trees): its includes "
				"and hooks path were not checked",
				0);
		return false;
	}
	if (g->nonce == g->caponce) {
		size_t cap = g->caponce ? 2 * g->caponce : 32;
		struct gg_once *n = realloc(g->once, cap * sizeof(*n));

		if (n == NULL) {
			gg_report_error(g, cfg, "", "cannot follow the config's references", ENOMEM);
			return false;
		}
		g->once = n;
		g->caponce = cap;
	}
	g->nfiles += !seen_file;
	g->once[g->nonce].dev = (uint64_t)st.st_dev;
	g->once[g->nonce].ino = (uint64_t)st.st_ino;
	g->once[g->nonce++].base = h;
	return true;
}

/* Is the canonical path under one of the writable roots? */
bool gg_under_roots(const struct gg *g, const char *path)
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
 * A .git file written in the session makes target a repository's git
 * directory now, whatever its files' own times say: a config or hooks
 * staged in an earlier session under a directory git did not take then
 * (no HEAD, objects moved in later) are activated by it (round 5 of the
 * attack: a gitlink added to the index, then `git status` on the host
 * ran the staged core.fsmonitor). target is checked as a new git
 * directory, here; the walk may meet it again (nothing left to move).
 */
static void check_activated(struct gg *g, const char *target)
{
	static const char *const markers[] = {"HEAD", "objects", "refs", "commondir"};
	char saved[PATH_MAX], text[PATH_MAX], common[PATH_MAX];
	const char *slash = strrchr(target, '/');
	struct statx sx;
	bool fresh = false;
	int gfd;

	/* Below the root being walked, through no link: the check moves
	 * files aside, and a link could lead it out of the writable trees. */
	gfd = gg_open_below(g, target);
	if (gfd < 0)
		return; /* no directory there (or reached through a link): git takes nothing we can check */
	/* Only a directory that became a git directory in the session (a
	 * marker created, moved in or rewritten): a .git file pointing at a
	 * long-standing one (the work tree's own .git, a submodule's) must
	 * not make the user's hooks and config count as new. A work tree's
	 * own .git is checked by its own rules. */
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]) && !fresh; i++)
		fresh = gg_statx(gfd, markers[i], AT_SYMLINK_NOFOLLOW, &sx) == 0 && gg_ts_fresh(g, &sx.stx_ctime);
	if (!fresh || (slash != NULL && strcmp(slash, "/.git") == 0)) {
		(void)close(gfd);
		return;
	}
	memcpy(saved, g->path, sizeof(saved));
	snprintf(g->path, sizeof(g->path), "%s", target);
	g->activated = true;
	gg_check_gitdir(g, gfd);
	/* A worktree's git directory reads config and hooks from its
	 * commondir: that one is activated with it (one level). */
	if (gg_read_small(gfd, "commondir", text, sizeof(text)) > 0 && gg_resolve_pointer(g->path, text, common)) {
		int cfd = gg_open_below(g, common);

		if (cfd >= 0) {
			snprintf(g->path, sizeof(g->path), "%s", common);
			gg_check_gitdir(g, cfd);
			(void)close(cfd);
		}
	}
	g->activated = false;
	memcpy(g->path, saved, sizeof(g->path));
	(void)close(gfd);
}

/*
 * A .git entry that is not a directory, in g->path (open as dfd), written
 * in the session: a gitdir: file may point only into the writable trees
 * (where this walk checks what it points to); a symlink or anything else
 * git never writes is moved aside.
 */
void gg_check_dotgit_file(struct gg *g, int dfd, unsigned char type)
{
	char text[PATH_MAX], target[PATH_MAX];

	if (!gg_changed(g, dfd, ".git"))
		return;
	if (type == DT_LNK) {
		gg_quarantine(g, dfd, g->path, ".git", ".git is a symbolic link (to a git directory elsewhere)");
		return;
	}
	if (type != DT_REG) {
		gg_quarantine(g, dfd, g->path, ".git", ".git is not a file or a directory");
		return;
	}
	if (gg_read_small(dfd, ".git", text, sizeof(text)) < 0) {
		/* git may read it later (a lease broken, round 30): what it
		 * would point at cannot be judged */
		if (errno != ENOENT)
			gg_quarantine(g, dfd, g->path, ".git", ".git file that cannot be read to check where it points");
		return;
	}
	if (strncmp(text, "gitdir: ", 8) != 0)
		return; /* git accepts no such .git file */
	if (!gg_resolve_pointer(g->path, text + 8, target)) {
		/* Nothing there yet: a later session could put a git
		 * directory assembled from staged parts at that name, and
		 * this file, old by then, would not activate it. */
		gg_quarantine(g, dfd, g->path, ".git", "gitdir: (points where there is no git directory yet)");
		return;
	}
	if (!gg_under_roots(g, target)) {
		gg_quarantine(g, dfd, g->path, ".git", "gitdir: (points outside the writable trees)");
		return;
	}
	/* A directory git would not take (no HEAD with objects or
	 * commondir): a later session could complete it, and through it
	 * this work tree would lead the check to a config of the
	 * command's (round 13's review). */
	if (!gitdir_shape(target)) {
		gg_quarantine(g, dfd, g->path, ".git", "gitdir: (points at a directory that is no git directory)");
		return;
	}
	check_activated(g, target);
}

/* Opens the directory g->path below the root, never through a symlink. */

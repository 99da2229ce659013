/*
 * mountplan.c - the parent's plan of the child's mounts (sbx_int.h
 * struct sbx_plan): every path checked and canonicalised, the operations
 * sorted in their order of application, the placeholders made on the
 * host for protected paths that do not exist yet (removed again after
 * the run), the environment built and seccomp compiled. The child only
 * reads the result.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* A path list of the config must hold absolute paths without "." or ".."
 * components or empty ones. Returns NULL or the reason. */
static const char *bad_path(const char *p)
{
	const char *c;

	if (p[0] != '/')
		return "is not absolute";
	for (c = p; *c != '\0'; c++) {
		if (*c != '/')
			continue;
		if (c[1] == '/')
			return "has an empty component";
		if (c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
			return "has a '.' component";
		if (c[1] == '.' && c[2] == '.' && (c[3] == '/' || c[3] == '\0'))
			return "has a '..' component";
	}
	return NULL;
}

/* Is path equal to prefix or below it (component-wise)? */
bool sbx_package_tree(const char *name)
{
	return strcmp(name, "node_modules") == 0 || strcmp(name, "_cacache") == 0;
}

bool sbx_path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strcmp(prefix, "/") == 0)
		return true;
	return strncmp(path, prefix, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Copy of p without trailing slashes (but "/" stays "/"). */
static char *strip_slashes(const char *p)
{
	char *s = strdup(p);
	size_t n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/*
 * Canonical form of an absolute path that may not exist: realpath() of
 * its longest existing prefix, plus the rest. *missing is set to the
 * length of the canonical existing prefix when the path does not exist
 * (0 when it does). Canonical paths matter in the child: an absolute
 * symlink under /oldroot would resolve against the setup root, not the
 * host's. Every look goes through the plan's memo: the mandatory denies
 * are hundreds of mostly missing paths under a few directories. Returns
 * malloc'd or NULL (errno).
 */
static char *canon(struct sbx_builder *b, const char *p, size_t *missing)
{
	const char *prefix;
	char *copy, *slash, *r, *out;
	struct stat pst;
	size_t rest;

	*missing = 0;
	if (sbx_memo_stat(b->memo, p, &pst) == 0)
		return sbx_memo_realpath(b->memo, p);
	if (errno != ENOENT && errno != ENOTDIR)
		return NULL;
	copy = strdup(p);
	if (copy == NULL)
		return NULL;
	/* The longest existing prefix by stat, then its realpath. */
	for (;;) {
		struct stat st;

		slash = strrchr(copy, '/');
		if (slash == NULL) {
			free(copy);
			errno = ENOENT;
			return NULL;
		}
		*slash = '\0';
		if (sbx_memo_stat(b->memo, slash == copy ? "/" : copy, &st) == 0)
			break;
		if (errno != ENOENT && errno != ENOTDIR) {
			free(copy);
			return NULL;
		}
	}
	prefix = slash == copy ? "/" : copy;
	r = sbx_memo_realpath(b->memo, prefix);
	if (r == NULL) {
		free(copy);
		return NULL;
	}
	rest = (size_t)(slash - copy);
	*missing = strcmp(r, "/") == 0 ? 0 : strlen(r);
	if (asprintf(&out, "%s%s", strcmp(r, "/") == 0 ? "" : r, p + rest) < 0)
		out = NULL;
	free(r);
	free(copy);
	return out;
}

/* Appends an op; takes ownership of path and src (freed on failure). */
static int add_op(struct sbx_builder *b, enum sbx_op_kind kind, char *path, char *src, bool is_dir)
{
	struct sbx_op *n;

	if (b->n_ops == b->cap_ops) {
		b->cap_ops = b->cap_ops ? 2 * b->cap_ops : 16;
		n = realloc(b->ops, b->cap_ops * sizeof(*n));
		if (n == NULL) {
			free(path);
			free(src);
			return -1;
		}
		b->ops = n;
	}
	b->ops[b->n_ops].kind = kind;
	b->ops[b->n_ops].path = path;
	b->ops[b->n_ops].src = src;
	b->ops[b->n_ops].is_dir = is_dir;
	/* The look the child checks its handle against (round 42: a path
	 * swapped between the plan and the mounts). */
	{
		struct stat st;

		b->ops[b->n_ops].looked = lstat(path, &st) == 0;
		b->ops[b->n_ops].dev = b->ops[b->n_ops].looked ? st.st_dev : 0;
		b->ops[b->n_ops].ino = b->ops[b->n_ops].looked ? st.st_ino : 0;
	}
	b->n_ops++;
	return 0;
}

void sbx_ops_free(struct sbx_op *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ops[i].path);
		free(ops[i].src);
	}
	free(ops);
}

/*
 * Removes dir/name (a directory when is_dir) through dirfd d. When the
 * directory is ours but not writable (the command can chmod its own
 * directories, chmod 0500 ~; root bypasses this, a user does not), owner
 * write and search are added for the removal and the mode put back, as
 * gitquarantine.c rename_aside() does. d may be an O_PATH descriptor:
 * its mode is changed through /proc/self/fd. 0, or -1 with errno set.
 */
static int remove_entry(int d, const char *name, bool is_dir)
{
	const mode_t wx = S_IWUSR | S_IXUSR;
	const int flags = is_dir ? AT_REMOVEDIR : 0;
	char fdp[32];
	struct stat st;
	int rc, saved;

	if (unlinkat(d, name, flags) == 0)
		return 0;
	saved = errno;
	if ((saved != EACCES && saved != EPERM) || fstat(d, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & wx) == wx || snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", d) >= (int)sizeof(fdp) ||
	    chmod(fdp, (st.st_mode & 07777) | wx) < 0) {
		errno = saved;
		return -1;
	}
	rc = unlinkat(d, name, flags);
	saved = errno;
	if (chmod(fdp, st.st_mode & 07777) < 0 && rc == 0) {
		/* Removed, but the directory keeps owner write. */
		(void)fprintf(stderr,
			      "passavant: warning: cannot put back the mode %04o of %s (fd %d) after removing %s: %s\n",
			      (unsigned)(st.st_mode & 07777), fdp, d, name, strerror(errno));
	}
	errno = saved;
	return rc;
}

/* Removes the placeholders, newest first, if they are still ours and
 * still empty. One that cannot be removed (its directory made
 * read-only by someone else, a file written into it) is reported on
 * stderr, naming it and what to do: an empty ~/.bash_profile left behind
 * stops login shells reading ~/.profile. Frees ph; returns how many were
 * left so (the caller's status says so too). */
size_t sbx_placeholders_remove(struct sbx_placeholder *ph, size_t n)
{
	struct stat st;
	size_t i, left = 0;

	for (i = n; i-- > 0;) {
		char *slash = strrchr(ph[i].path, '/');
		int d = -1, rc = 0;

		if (slash != NULL && lstat(ph[i].path, &st) == 0 && st.st_dev == ph[i].dev &&
		    st.st_ino == ph[i].ino && (ph[i].is_dir || (S_ISREG(st.st_mode) && st.st_size == 0))) {
			*slash = '\0';
			d = open(slash == ph[i].path ? "/" : ph[i].path,
				 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			*slash = '/';
			rc = d < 0 ? -1 : remove_entry(d, slash + 1, ph[i].is_dir);
			if (d >= 0)
				(void)close(d);
			/* A directory the command filled is its own. */
			if (rc < 0 && !(ph[i].is_dir && (errno == ENOTEMPTY || errno == EEXIST))) {
				left++;
				(void)fprintf(stderr,
					      "passavant: warning: cannot remove the empty %s %s that the sandbox "
					      "made to protect that path: %s; remove it by hand (%s %s), as it may "
					      "change what reads that path (an empty ~/.bash_profile stops login "
					      "shells reading ~/.profile)\n",
					      ph[i].is_dir ? "directory" : "file", ph[i].path, strerror(errno),
					      ph[i].is_dir ? "rmdir" : "rm", ph[i].path);
			}
		}
		free(ph[i].path);
	}
	free(ph);
	return left;
}

/* Would the command be able to create entries in dir (canonical)? */
bool sbx_plan_writable(const struct sbx_builder *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->n_writable; i++)
		if (sbx_path_under(dir, b->writable[i]))
			return true;
	return false;
}

/* Does a writable tree lie strictly below path (canonical)? Then
 * protecting path still matters though path itself is read-only. */
static bool writable_below(const struct sbx_builder *b, const char *path)
{
	size_t i;

	for (i = 0; i < b->n_writable; i++)
		if (strcmp(b->writable[i], path) != 0 && sbx_path_under(b->writable[i], path))
			return true;
	return false;
}

/* Is dir one of our placeholders (or below one)? */
static bool in_placeholder(const struct sbx_builder *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->n_ph; i++)
		if (b->ph[i].is_dir && sbx_path_under(dir, b->ph[i].path))
			return true;
	return false;
}

/*
 * Plans the write protection of p (deny_write or a mandatory deny).
 * Existing: protect its canonical path. A symlink in a writable directory
 * cannot be pinned (mounts follow symlinks), so that fails closed.
 * Missing, in a directory the command may write: the first missing
 * component gets a placeholder on the host (an empty file when it is p
 * itself, an empty directory when it is a parent of p), which the child
 * covers read-only, so the command can create neither p nor any parent
 * of it. The parent removes the placeholders after the run.
 */
static int plan_protect(struct sbx_builder *b, const char *p, unsigned depth, char *err, size_t errlen);

/*
 * p, missing, goes through the dangling symlink lnk (p itself, or an
 * existing component of it, in a read-only directory) and goes on with
 * rest (NULL: lnk is p): whoever creates the link's target changes what
 * p says, so p is protected as the link will read it, the target
 * followed by rest (with a placeholder if its directory is writable).
 * Targets with "." or ".." components, or chains deeper than 8 links,
 * fail closed.
 */
static int protect_through_link(struct sbx_builder *b, const char *p, const char *lnk, const char *rest,
				unsigned depth, char *err, size_t errlen)
{
	char target[PATH_MAX], *abs = NULL;
	const char *slash = strrchr(lnk, '/');
	ssize_t n = sbx_memo_readlink(b->memo, lnk, target, sizeof(target) - 1);
	int rc;

	if (n < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read the symbolic link %s", lnk);
		return -1;
	}
	target[n] = '\0';
	if (asprintf(&abs, "%.*s%s%s%s%s", target[0] == '/' ? 0 : (int)(slash - lnk), lnk,
		     target[0] == '/' ? "" : "/", target, rest != NULL ? "/" : "", rest != NULL ? rest : "") < 0)
		abs = NULL;
	if (abs == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
		return -1;
	}
	if (depth >= 8 || bad_path(abs) != NULL) {
		if (rest == NULL)
			errbuf_set_errno(err, errlen, 0, "cannot protect %s: it is a dangling symbolic link to %s",
					 p, target);
		else
			errbuf_set_errno(err, errlen, 0,
					 "cannot protect %s: it goes through the dangling symbolic link %s to %s",
					 p, lnk, target);
		free(abs);
		return -1;
	}
	rc = plan_protect(b, abs, depth + 1, err, errlen);
	free(abs);
	return rc;
}

/*
 * plan_protect() of an existing path p (st: its lstat). A symlink in a
 * writable directory fails closed; a dangling one protects its target;
 * a file with more hard links on a writable filesystem is kept for the
 * walk that looks for its other names there (links.c); a path
 * read-only in the sandbox's view already, with no writable tree below
 * it, needs nothing (a protection would add mounts and nothing else: the
 * mandatory table holds a hundred paths, most of them in a read-only
 * HOME).
 */
static int protect_existing(struct sbx_builder *b, const char *p, struct stat *st, unsigned depth,
			    char *err, size_t errlen)
{
	size_t missing;
	char *c, *dir;
	bool writable;

	if (S_ISLNK(st->st_mode)) {
		dir = strdup(p);
		if (dir == NULL) {
			errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
			return -1;
		}
		*strrchr(dir, '/') = '\0';
		c = canon(b, dir[0] ? dir : "/", &missing);
		free(dir);
		if (c == NULL) {
			errbuf_set_errno(err, errlen, errno, "cannot resolve %s", p);
			return -1;
		}
		writable = sbx_plan_writable(b, c);
		free(c);
		if (writable) {
			errbuf_set_errno(err, errlen, 0,
				   "cannot protect %s: it is a symbolic link in a writable directory", p);
			return -1;
		}
	}
	c = sbx_memo_realpath(b->memo, p);
	if (c == NULL && errno == ENOENT && S_ISLNK(st->st_mode))
		return protect_through_link(b, p, p, NULL, depth, err, errlen);
	if (c == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot resolve %s", p);
		return -1;
	}
	/* A cover is of this name only (sbx_config.cover): the file's
	 * other names are covered, or not, by their own rules. */
	if (!b->cover && sbx_memo_stat(b->memo, c, st) == 0 &&
	    sbx_check_hard_links(b, "a write deny", p, st, false, err, errlen) < 0) {
		free(c);
		return -1;
	}
	if (!sbx_plan_writable(b, c) && !writable_below(b, c)) {
		free(c);
		return 0;
	}
	return add_op(b, SBX_OP_PROTECT, c, NULL, false) < 0 ? -1 : 0;
}

/* Makes the placeholder first (an empty directory when is_dir, else an
 * empty file), read-only, records it and plans its protection. Takes
 * first. 0 or -1 with err set (p: the path it protects). */
static int make_placeholder(struct sbx_builder *b, const char *p, char *first, bool is_dir,
			    char *err, size_t errlen)
{
	struct sbx_placeholder *nph;
	struct stat st;
	char *c;
	int fd;

	if (b->n_ph == b->cap_ph) {
		b->cap_ph = b->cap_ph ? 2 * b->cap_ph : 8;
		nph = realloc(b->ph, b->cap_ph * sizeof(*nph));
		if (nph == NULL) {
			free(first);
			goto nomem;
		}
		b->ph = nph;
	}
	if (is_dir)
		fd = mkdir(first, 0755);
	else {
		fd = open(first, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			fd = close(fd);
	}
	/* Something new on the host: the memo's failed looks may be stale
	 * now, under any spelling (and so for the cleanup if this fails). */
	sbx_memo_changed(b->memo);
	/* The kernel's own look: what we made is what we remove after. */
	if (fd < 0 || lstat(first, &st) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create a placeholder to protect %s at %s", p, first);
		free(first);
		return -1;
	}
	b->ph[b->n_ph].path = first;
	b->ph[b->n_ph].dev = st.st_dev;
	b->ph[b->n_ph].ino = st.st_ino;
	b->ph[b->n_ph].is_dir = is_dir;
	b->n_ph++;
	c = strdup(first);
	if (c == NULL)
		goto nomem;
	return add_op(b, SBX_OP_PROTECT, c, NULL, is_dir);
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/*
 * True when p lies below a directory of another user that this uid may
 * not search (EACCES from lstat(p)): `passavant run` as a user, with
 * PYENV_ROOT=/root/.pyenv or a PATH entry under /root inherited. Neither
 * passavant nor the command, which has no more rights over another
 * user's files than this uid, can reach p, so there is nothing there to
 * protect. A directory of this uid's own is not enough: the command
 * could give itself the search right back (chmod u+x).
 */
static bool below_foreign_unsearchable(const char *p)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", p) >= (int)sizeof(dir))
		return false;
	while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (lstat(dir, &st) == 0)
			return S_ISDIR(st.st_mode) && st.st_uid != geteuid() && access(dir, X_OK) < 0 &&
			       errno == EACCES;
		if (errno != EACCES)
			return false;
	}
	return false;
}

static int plan_protect(struct sbx_builder *b, const char *p, unsigned depth, char *err, size_t errlen)
{
	char *c, *first, *slash, *dir;
	size_t missing;
	struct stat st;
	bool is_dir;

	if (sbx_memo_lstat(b->memo, p, &st) == 0)
		return protect_existing(b, p, &st, depth, err, errlen);
	if (errno == EACCES) {
		if (below_foreign_unsearchable(p))
			return 0;
		errno = EACCES;
	}
	if (errno != ENOENT && errno != ENOTDIR) {
		errbuf_set_errno(err, errlen, errno, "cannot check %s", p);
		return -1;
	}
	c = canon(b, p, &missing);
	if (c == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot resolve %s", p);
		return -1;
	}
	/* c[0..missing) exists; the first missing component follows. */
	dir = strndup(c, missing ? missing : 1);
	first = strdup(c);
	free(c);
	if (dir == NULL || first == NULL) {
		free(dir);
		free(first);
		errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
		return -1;
	}
	/* The deepest existing component is not a directory: a .git *file*
	 * (worktrees, submodules) when .git/hooks is protected. Nothing can
	 * be created under it, but it could be replaced by a directory with
	 * hooks: protect the file itself. */
	if (sbx_memo_stat(b->memo, dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		free(first);
		return add_op(b, SBX_OP_PROTECT, dir, NULL, false) < 0 ? -1 : 0;
	}
	slash = strchr(first + missing + 1, '/');
	is_dir = slash != NULL;
	/* A scratch directory of the session (round 43): its own
	 * placeholder is the directory its tmpfs is mounted on. */
	for (size_t i = 0; !is_dir && b->scratch != NULL && b->scratch[i] != NULL; i++) {
		size_t n = strlen(b->scratch[i]);

		while (n > 1 && b->scratch[i][n - 1] == '/')
			n--;
		is_dir = strncmp(b->scratch[i], p, n) == 0 && p[n] == '\0';
	}
	if (slash != NULL)
		*slash = '\0';
	/* The first missing component is a dangling link (~/.config ->
	 * /w/cfg, /w writable): creating what it names creates p, wherever
	 * the link itself lies. Protect p as the link will read it. */
	if (slash != NULL && sbx_memo_lstat(b->memo, first, &st) == 0 && S_ISLNK(st.st_mode)) {
		int rc = protect_through_link(b, p, first, slash + 1, depth, err, errlen);

		free(dir);
		free(first);
		return rc;
	}
	if (!sbx_plan_writable(b, dir) || in_placeholder(b, dir)) {
		/* Read-only there (or inside a read-only placeholder): the
		 * command cannot create it. */
		free(dir);
		free(first);
		return 0;
	}
	free(dir);
	return make_placeholder(b, p, first, is_dir, err, errlen);
}

/* A deny_read path s that does not exist: the path that would be
 * created, walked as the kernel resolves it (every link followed, a
 * dangling one on the way too: ~/.config -> /elsewhere/cfg records
 * /elsewhere/cfg/gh), recorded for unseen.c. A path under a file
 * (ENOTDIR) can never appear, one that cannot be looked at cannot be
 * reached: nothing recorded. 0 or -1 with err. */
static int unseen(struct sbx_builder *b, const char *s, char *err, size_t errlen)
{
	char would[PATH_MAX];
	size_t existing = 0;
	int rc = sbx_memo_walk(b->memo, s, NULL, NULL, would, &existing);

	if (rc == 0) {
		errbuf_set_errno(err, errlen, 0,
				 "deny_read path %s appeared while the sandbox was planned; run again", s);
		return -1;
	}
	if (rc != SBX_WALK_MISSING) {
		errbuf_set_errno(err, errlen, errno, "deny_read path %s", s);
		return -1;
	}
	if (errno != ENOENT)
		return 0;
	if (sbx_unseen_add(b, would, existing, false) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot plan the sandbox");
		return -1;
	}
	return 0;
}

/*
 * Round 31 of the attack: a deny_read or deny_write directory (~/.ssh,
 * ~/.aws, ~/.config/git) covers its own entries, not what its symbolic
 * links point to: ~/.ssh/id_work -> ~/keys/id_work was read through the
 * target, ~/.ssh/config -> ~/dotfiles/ssh/config written through it from
 * a session in ~/dotfiles. The walk below gives every link found under
 * such a directory (any depth) the directory's protection at its target,
 * a target directory walked in turn; links pointing inside the directory
 * need nothing. Its bounds fail closed: the start is refused, naming the
 * path, past them.
 */
#define LINK_WALK_DEPTH 64	 /* directory levels below a path */
#define LINK_WALK_ENTRIES 500000 /* entries looked at, in all */
#define LINK_WALK_TARGETS 512	 /* links followed, in all */
/* Regular files a walk stats for their hard links: credential stores and
 * start-up directories hold a few hundred; a browser profile's caches
 * 100000, which cost 0.5 s a start (the review of round 32). Past it the
 * rest of the row's files are not looked at. */
#define LINK_WALK_STATS 4096

struct link_walk {
	enum sbx_op_kind kind; /* SBX_OP_DENY_READ or SBX_OP_PROTECT */
	const char *list;      /* "deny_read" or "deny_write", for messages */
	const char *row;       /* canonical path of the list's directory */
	char **seen;	       /* canonical directories walked (owned) */
	size_t n_seen, cap_seen;
	size_t entries, targets;
	size_t stats; /* regular files stat'ed for hard links (LINK_WALK_STATS) */
	bool links_only; /* a follow_also directory outside the homes: no stats */
};

static int walk_dir(struct sbx_builder *b, struct link_walk *w, const char *dir, unsigned depth,
		    char *err, size_t errlen);

/* Whether the filesystem dev holds a tree the sandbox can write. */
static bool writable_dev(const struct sbx_builder *b, dev_t dev)
{
	struct stat st;

	for (size_t i = 0; i < b->n_writable; i++)
		if (sbx_memo_stat(b->memo, b->writable[i], &st) == 0 && st.st_dev == dev)
			return true;
	return false;
}

/* Keeps path, a name of the hard-linked file st met by the walk w, for
 * walk_names_check(). */
static int walk_name_add(struct sbx_builder *b, const struct link_walk *w, const struct stat *st, const char *path)
{
	if (b->n_names == b->cap_names) {
		size_t cap = b->cap_names ? 2 * b->cap_names : 16;
		struct sbx_walk_name *nn = realloc(b->names, cap * sizeof(*nn));

		if (nn == NULL)
			return -1;
		b->names = nn;
		b->cap_names = cap;
	}
	if ((b->names[b->n_names].path = strdup(path)) == NULL)
		return -1;
	b->names[b->n_names].dev = st->st_dev;
	b->names[b->n_names].ino = st->st_ino;
	b->names[b->n_names].read_deny = w->kind == SBX_OP_DENY_READ;
	b->n_names++;
	return 0;
}

static int walk_name_cmp(const void *a, const void *b)
{
	const struct sbx_walk_name *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void walk_names_free(struct sbx_builder *b)
{
	for (size_t i = 0; i < b->n_names; i++)
		free(b->names[i].path);
	free(b->names);
	b->names = NULL;
	b->n_names = b->cap_names = 0;
	sbx_hard_links_free(b);
}

/*
 * A file under a walked directory with more hard links than the names
 * of it the plan covers, on a writable tree's filesystem: the others may
 * lie in that tree, where the command would read or write the file past
 * the row's mount (round 32: ~/.ssh/config hard-linked from a dotfiles
 * project, as round 31's symbolic links were). Covered names are the
 * walks' (rustup's proxies in ~/.cargo/bin, all in the row) and the
 * files the plan covers by name (a writable HOME's hard-linked entries,
 * plan.c's cover list): hidden ones for a file met under a deny_read
 * directory, hidden or read-only ones for a deny_write one. Fails naming
 * the file, as for a path of the list (sbx_check_hard_links()); 0 when
 * none is so. Run once every list is planned; ends with the walk for the
 * other names of the write-denied files (sbx_hard_links_resolve()).
 */
static int walk_names_check(struct sbx_builder *b, char *err, size_t errlen)
{
	size_t i = 0;

	if (b->n_names > 1)
		qsort(b->names, b->n_names, sizeof(*b->names), walk_name_cmp);
	while (i < b->n_names) {
		size_t j = i + 1, covered = 1;
		bool read_deny = b->names[i].read_deny;
		struct stat st;

		for (; j < b->n_names && b->names[j].dev == b->names[i].dev && b->names[j].ino == b->names[i].ino; j++) {
			read_deny = read_deny || b->names[j].read_deny;
			if (strcmp(b->names[j].path, b->names[j - 1].path) != 0)
				covered++;
		}
		for (size_t k = 0; k < b->n_ops; k++) {
			struct stat ost;
			bool named = false;

			if (b->ops[k].is_dir || (b->ops[k].kind != SBX_OP_DENY_READ &&
						 (read_deny || b->ops[k].kind != SBX_OP_PROTECT)))
				continue;
			if (sbx_memo_lstat(b->memo, b->ops[k].path, &ost) < 0 || ost.st_dev != b->names[i].dev ||
			    ost.st_ino != b->names[i].ino)
				continue;
			for (size_t m = i; m < j && !named; m++)
				named = strcmp(b->names[m].path, b->ops[k].path) == 0;
			if (!named)
				covered++;
		}
		if (lstat(b->names[i].path, &st) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot check %s", b->names[i].path);
			return -1;
		}
		if (st.st_dev == b->names[i].dev && st.st_ino == b->names[i].ino && st.st_nlink > covered &&
		    sbx_check_hard_links(b, read_deny ? "a read deny" : "a write deny", b->names[i].path, &st,
					 read_deny, err, errlen) < 0)
			return -1;
		i = j;
	}
	/* The write-denied files kept by sbx_check_hard_links(), these and
	 * the lists' own: one walk of the writable trees for their names. */
	return sbx_hard_links_resolve(b, err, errlen);
}

/* Whether an op of kind covers the canonical path c already. */
static bool op_covers(const struct sbx_builder *b, enum sbx_op_kind kind, const char *c)
{
	for (size_t i = 0; i < b->n_ops; i++)
		if (b->ops[i].kind == kind && sbx_path_under(c, b->ops[i].path))
			return true;
	return false;
}

/* The deny_read of the link lnk's existing target c (canonical, not
 * covered yet; st its stat), as plan_list() does for a path of the list. */
static int deny_target(struct sbx_builder *b, const char *lnk, const char *c, const struct stat *st,
		       char *err, size_t errlen)
{
	char *copy;

	if (sbx_check_hard_links(b, "a read deny", lnk, st, true, err, errlen) < 0)
		return -1;
	copy = strdup(c);
	if (copy == NULL || (strcmp(c, "/") != 0 && sbx_unseen_add(b, c, (size_t)(strrchr(c, '/') - c), true) < 0) ||
	    add_op(b, SBX_OP_DENY_READ, copy, NULL, S_ISDIR(st->st_mode)) < 0) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
		return -1;
	}
	return 0;
}

/* Whether the canonical c is not the host's in the sandbox (its own /tmp,
 * /dev, /proc, /sys; as unseen.c's not_host[]): nothing to cover there. */
static bool not_host_path(const char *c)
{
	static const char *const own[] = {"/tmp", "/dev", "/proc", "/sys"};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (sbx_path_under(c, own[i]))
			return true;
	return false;
}

/* The dangling link lnk's target abs, under a deny_write directory: the
 * path the kernel would create (walked as it resolves it, ".." and
 * further links included) gets plan_protect()'s placeholder where the
 * command could create it. 0, or -1 with err set. */
static int protect_missing(struct sbx_builder *b, const char *lnk, const char *abs, char *err, size_t errlen)
{
	char would[PATH_MAX];
	size_t existing = 0;
	int rc = sbx_memo_walk(b->memo, abs, NULL, NULL, would, &existing);

	if (rc == SBX_WALK_MISSING && errno == ENOENT)
		return not_host_path(would) ? 0 : plan_protect(b, would, 0, err, errlen);
	if (rc == SBX_WALK_MISSING)
		return 0; /* under a file: it can never appear */
	errbuf_set_errno(err, errlen, rc == 0 ? 0 : errno,
			 rc == 0 ? "the target %s of the symbolic link %s appeared while the sandbox was planned; run again"
				 : "cannot resolve the target %s of the symbolic link %s",
			 abs, lnk);
	return -1;
}

/*
 * The link lnk, found under w->row: its target gets w's protection. The
 * way to the target may not go through a link the command can write (as
 * for a path of the list, links.c). A target that is "/", an ancestor of
 * the row, or holds a writable tree cannot be covered without hiding or
 * freezing the session's own work: refused. A dangling one: a deny_read
 * keeps the path it would create unseen (unseen.c), a deny_write gets a
 * placeholder where the command could create it (protect_through_link()).
 */
static int walk_link(struct sbx_builder *b, struct link_walk *w, const char *lnk, char *err, size_t errlen)
{
	char target[PATH_MAX], *abs = NULL, *what = NULL, *c;
	const char *slash = strrchr(lnk, '/');
	struct stat st;
	size_t ops = b->n_ops;
	ssize_t n;
	int rc = -1;

	n = sbx_memo_readlink(b->memo, lnk, target, sizeof(target) - 1);
	if (n < 0 && errno == ENOENT)
		return 0; /* removed on the host since the listing: nothing to follow */
	if (n < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read the symbolic link %s", lnk);
		return -1;
	}
	target[n] = '\0';
	if (asprintf(&abs, "%.*s%s%s", target[0] == '/' ? 0 : (int)(slash - lnk), lnk, target[0] == '/' ? "" : "/",
		     target) < 0 ||
	    asprintf(&what, "the target of the link %s under the %s", lnk, w->list) < 0) {
		free(abs);
		errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
		return -1;
	}
	/* A PATH directory's link the user cannot resolve (a system
	 * command linked into root's 0700 home, for another user) leads to
	 * nothing the user's trees hold: nothing to protect (it refused
	 * every start of every other user in the first version). */
	if (w->links_only && sbx_memo_stat(b->memo, abs, &st) < 0 && errno != ENOENT && errno != ENOTDIR) {
		rc = 0;
		goto out;
	}
	if (sbx_check_links(b, what, abs, err, errlen) < 0)
		goto out;
	if (sbx_memo_stat(b->memo, abs, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR) {
			errbuf_set_errno(err, errlen, errno, "cannot check the target %s of the symbolic link %s",
					 target, lnk);
			goto out;
		}
		rc = w->kind == SBX_OP_DENY_READ ? unseen(b, abs, err, errlen) : protect_missing(b, lnk, abs, err, errlen);
		goto out;
	}
	c = sbx_memo_realpath(b->memo, abs);
	if (c == NULL && not_host_path(abs)) {
		/* /dev/stdout, /proc/self/fd/N: a pipe or socket of whoever
		 * opens it, never the host's file (the third review of round
		 * 31: Chrome's chrome_debug.log -> /dev/stdout refused the
		 * start). */
		rc = 0;
		goto out;
	}
	if (c == NULL && w->links_only && errno == EACCES) {
		rc = 0;
		goto out;
	}
	if (c == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot resolve the target %s of the symbolic link %s", target,
				 lnk);
		goto out;
	}
	/* Inside the directory; the sandbox's own /tmp; a socket or a
	 * device behind a deny_read (Chrome's SingletonSocket): nothing to
	 * read or cover. */
	if (sbx_path_under(c, w->row) || not_host_path(c) ||
	    (w->kind == SBX_OP_DENY_READ && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		free(c);
		rc = 0;
		goto out;
	}
	/* A PATH directory outside the homes (/usr/bin: its links into
	 * the system's own trees, read-only already): only a target in a
	 * writable tree needs anything, and the row itself is not covered. */
	if (w->links_only) {
		bool in = false;

		for (size_t i = 0; i < b->n_writable && !in; i++)
			in = sbx_path_under(c, b->writable[i]);
		if (!in) {
			free(c);
			rc = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < b->n_writable + (w->links_only ? 0 : 1); i++) {
		const char *held = i < b->n_writable ? b->writable[i] : w->row;

		if (sbx_path_under(held, c)) {
			errbuf_set_errno(err, errlen, 0,
					 "the symbolic link %s under the %s path %s points to %s, which holds %s: "
					 "its target cannot be made %s without the session's own files; point the "
					 "link at the file it means, or replace it by a copy",
					 lnk, w->list, w->row, c, held,
					 w->kind == SBX_OP_DENY_READ ? "unreadable" : "read-only");
			free(c);
			goto out;
		}
	}
	/* Covered already (an earlier link, a path of the list): walked
	 * already too. */
	if (w->kind == SBX_OP_DENY_READ && op_covers(b, SBX_OP_DENY_READ, c))
		rc = 0;
	else if ((w->kind == SBX_OP_DENY_READ ? deny_target(b, lnk, c, &st, err, errlen)
					      : plan_protect(b, c, 0, err, errlen)) == 0)
		rc = S_ISDIR(st.st_mode) ? walk_dir(b, w, c, 0, err, errlen) : 0;
	free(c);
out:
	free(abs);
	free(what);
	/* Counted when it cost a mount: a read-only target (most of
	 * /usr/bin's links) costs nothing. */
	if (rc == 0 && b->n_ops > ops && ++w->targets > LINK_WALK_TARGETS) {
		errbuf_set_errno(err, errlen, 0,
				 "%s path %s holds more than %d symbolic links whose targets need a mount "
				 "of their own (in all, with their targets' links); they cannot all be "
				 "covered: replace links there by what they point to",
				 w->list, w->row, LINK_WALK_TARGETS);
		rc = -1;
	}
	return rc;
}

/* sbx_package_links()'s callback for walk_package(): the link to
 * walk_link(). */
struct package_walk {
	struct sbx_builder *b;
	struct link_walk *w;
	char *err;
	size_t errlen;
	bool failed; /* walk_link() failed: err says why */
};

static int package_link(const char *path, void *arg)
{
	struct package_walk *pw = arg;

	if (walk_link(pw->b, pw->w, path, pw->err, pw->errlen) == 0)
		return 0;
	pw->failed = true;
	return -1;
}

/* The package tree dir/name, not walked: its links (and its @scope
 * directories' links) to walk_link() (round 32 of the attack: an `npm
 * link`ed dependency of a ~/.vscode extension, a project's code the
 * editor loads). 0, or -1 with err set. */
static int walk_package(struct sbx_builder *b, struct link_walk *w, const char *dir, const char *name, char *err,
			size_t errlen)
{
	struct package_walk pw = {b, w, err, errlen, false};
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name) >= (int)sizeof(path)) {
		errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot check the symbolic links under %s", dir);
		return -1;
	}
	if (sbx_package_links(path, package_link, &pw) == 0)
		return 0;
	if (!pw.failed) {
		int e = errno;
		struct stat st;

		/* Another user's, not searchable: as in walk_dir(). */
		if (e == EACCES && lstat(path, &st) == 0 && st.st_uid != geteuid() && access(path, X_OK) < 0)
			return 0;
		/* Removed on the host since the listing: no links left in it. */
		if (e == ENOENT)
			return 0;
		errbuf_set_errno(err, errlen, e, "cannot list %s to check its symbolic links (%s path %s)", path,
				 w->list, w->row);
	}
	return -1;
}

/*
 * Walks the canonical directory dir (depth levels below the start) for
 * symbolic links, each handed to walk_link(). A directory a walk started
 * at before (or one below it) is not walked again: links between two
 * directories end there. One the user cannot list holds no link the user's programs
 * follow by name there either. 0, or -1 with err set.
 */
static int walk_dir(struct sbx_builder *b, struct link_walk *w, const char *dir, unsigned depth,
		    char *err, size_t errlen)
{
	struct dirent *de;
	char **ns, path[PATH_MAX];
	bool shared_fs;
	int fd, rc = 0;
	DIR *d;

	/* A walk's own subdirectories are reached by readdir only, never
	 * through a link: only where a walk starts can it meet one done. */
	for (size_t i = 0; depth == 0 && i < w->n_seen; i++)
		if (sbx_path_under(dir, w->seen[i]))
			return 0;
	if (depth > LINK_WALK_DEPTH) {
		errbuf_set_errno(err, errlen, 0,
				 "%s path %s is deeper than %d directories at %s; the symbolic links below "
				 "cannot all be checked: flatten it, or remove the links there",
				 w->list, w->row, LINK_WALK_DEPTH, dir);
		return -1;
	}
	if (depth == 0 && w->n_seen == w->cap_seen) {
		w->cap_seen = w->cap_seen ? 2 * w->cap_seen : 8;
		ns = realloc(w->seen, w->cap_seen * sizeof(*ns));
		if (ns == NULL)
			goto nomem;
		w->seen = ns;
	}
	if (depth == 0 && (w->seen[w->n_seen++] = strdup(dir)) == NULL)
		goto nomem;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Removed on the host between the look and the walk (a snapshot
	 * rotated, a program's temporary directory): no links left in it,
	 * as when it was absent at the look; its row stays planned. */
	if (fd < 0 && errno == ENOENT)
		return 0;
	/* Not listable: the host's programs still open the links in it by
	 * name (a 0311 ~/.ssh/vault holding id_vault -> ~/keys/id_vault;
	 * review of round 31). Only one the command can neither enter nor
	 * chmod (another user's, not searchable) holds nothing for it. */
	if (fd < 0 && errno == EACCES) {
		struct stat st;

		if (lstat(dir, &st) == 0 && st.st_uid != geteuid() && access(dir, X_OK) < 0)
			return 0;
		errbuf_set_errno(err, errlen, 0,
				 "cannot list %s to check its symbolic links (%s path %s): programs still open "
				 "the links in it by name; give it read permission (chmod u+r %s) or remove it",
				 dir, w->list, w->row, dir);
		return -1;
	}
	d = fd < 0 ? NULL : fdopendir(fd);
	if (d == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot list %s to check its symbolic links (%s path %s)",
				 dir, w->list, w->row);
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	{
		struct stat dst;

		if (fstat(fd, &dst) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot check %s", dir);
			(void)closedir(d);
			return -1;
		}
		shared_fs = writable_dev(b, dst.st_dev);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* Package trees (an editor's extensions' node_modules under
		 * ~/.vscode, npm's _cacache): 100000 entries and 0.5 s a
		 * start on a developer's home (measured after the third
		 * review of round 31): not walked, only their links looked
		 * at (an `npm link`ed package is code the editor loads
		 * through one: round 32 of the attack). */
		if (sbx_package_tree(de->d_name)) {
			rc = walk_package(b, w, dir, de->d_name, err, errlen);
			continue;
		}
		if (++w->entries > LINK_WALK_ENTRIES) {
			errbuf_set_errno(err, errlen, 0,
					 "%s path %s holds more than %d entries (in all, with its links' "
					 "targets), stopped at %s; the symbolic links below cannot all be "
					 "checked: remove what is not needed there",
					 w->list, w->row, LINK_WALK_ENTRIES, dir);
			rc = -1;
			break;
		}
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, de->d_name) >=
		    (int)sizeof(path)) {
			errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot check the symbolic links under %s", dir);
			rc = -1;
			break;
		}
		if (type == DT_UNKNOWN || (type == DT_REG && !w->links_only &&
					   (shared_fs || w->kind == SBX_OP_DENY_READ) && w->stats++ < LINK_WALK_STATS)) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue; /* removed since the listing: as above */
				errbuf_set_errno(err, errlen, errno, "cannot check %s", path);
				rc = -1;
				break;
			}
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR
				 : S_ISREG(st.st_mode)			   ? DT_REG
									   : DT_UNKNOWN;
			if (type == DT_REG && st.st_nlink > 1 &&
			    (w->kind == SBX_OP_DENY_READ || writable_dev(b, st.st_dev)) &&
			    walk_name_add(b, w, &st, path) < 0) {
				errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
				rc = -1;
				break;
			}
		}
		if (type == DT_LNK)
			rc = walk_link(b, w, path, err, errlen);
		else if (type == DT_DIR)
			rc = walk_dir(b, w, path, depth + 1, err, errlen);
	}
	if (rc == 0 && errno != 0) {
		errbuf_set_errno(err, errlen, errno, "cannot list %s to check its symbolic links", dir);
		rc = -1;
	}
	(void)closedir(d);
	return rc;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/* The walk of the links under the list path s (kind: SBX_OP_DENY_READ or
 * SBX_OP_PROTECT), when it is a directory; written: the path as the list
 * gives it (before links are resolved). 0, or -1 with err set. */
static int follow_links(struct sbx_builder *b, const char *s, const char *written, enum sbx_op_kind kind,
			const char *list, char *err, size_t errlen)
{
	struct link_walk w = {.kind = kind, .list = list};
	bool under = false;
	struct stat st;
	char *c;
	int rc;

	if (sbx_memo_stat(b->memo, s, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	c = sbx_memo_realpath(b->memo, s);
	if (c == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot resolve %s", s);
		return -1;
	}
	/* Only strictly inside a home: the system's denied trees
	 * (/var/lib/docker, a container's layers) hold links that mean
	 * paths of another root, and another user's whole home denied
	 * (/root) is not a store but a tree of any size. Inside it as
	 * written, or where it leads (review of round 31: ~/.ssh ->
	 * /srv/keys, or ~/.config -> /data/cfg with the row ~/.config/git,
	 * a store linked out of the home, was not walked and its links'
	 * targets stayed readable or writable). */
	for (size_t i = 0; b->follow_under != NULL && b->follow_under[i] != NULL && !under; i++)
		under = (sbx_path_under(c, b->follow_under[i]) && strcmp(c, b->follow_under[i]) != 0) ||
			(sbx_path_under(written, b->follow_under[i]) && strcmp(written, b->follow_under[i]) != 0);
	/* A PATH directory, or one of the system's usual ones, wherever it
	 * lies (round 32 of the attack: npm link, sudo ln -s made
	 * /usr/local/bin/tool -> ~/proj/cli.js; a session in ~/proj
	 * rewrote what root's next `tool` ran). Its links only: /usr/bin's
	 * hard-linked programs are the system's own. */
	for (size_t i = 0; !under && b->follow_also != NULL && b->follow_also[i] != NULL; i++) {
		w.links_only = under = strcmp(c, b->follow_also[i]) == 0 || strcmp(written, b->follow_also[i]) == 0;
		/* Once: /bin and /usr/bin are one directory on a merged /usr,
		 * and PATH names both. */
		if (under && i < 64 && (b->also_walked & (1ULL << i)) != 0) {
			free(c);
			return 0;
		}
		if (under && i < 64)
			b->also_walked |= 1ULL << i;
	}
	if (!under) {
		free(c);
		return 0;
	}
	w.row = c;
	rc = walk_dir(b, &w, c, 0, err, errlen);
	for (size_t i = 0; i < w.n_seen; i++)
		free(w.seen[i]);
	free(w.seen);
	free(c);
	return rc;
}

/* Plans one path list of the config. */
static int plan_list(struct sbx_builder *b, const char *const *list, enum sbx_op_kind kind,
		     const char *name, char *err, size_t errlen)
{
	const char *why;
	char *s, *c;
	struct stat st;
	size_t i, missing;
	int rc;

	for (i = 0; list != NULL && list[i] != NULL; i++) {
		why = bad_path(list[i]);
		if (why != NULL) {
			errbuf_set_errno(err, errlen, 0, "%s path %s %s", name, list[i], why);
			return -1;
		}
		s = strip_slashes(list[i]);
		if (s == NULL)
			goto nomem;
		if (kind == SBX_OP_PROTECT) {
			rc = plan_protect(b, s, 0, err, errlen);
			/* A deny_write directory's links: their targets too. */
			if (rc == 0 && strcmp(name, "deny_write") == 0)
				rc = follow_links(b, s, s, SBX_OP_PROTECT, name, err, errlen);
			free(s);
			if (rc < 0)
				return -1;
			continue;
		}
		/* Nothing there (through any link): nothing to hide or
		 * re-allow; an allow_write is reported below. A deny_read
		 * one is kept unreadable should it appear (unseen.c). */
		if (kind != SBX_OP_ALLOW_WRITE && sbx_memo_stat(b->memo, s, &st) < 0 &&
		    (errno == ENOENT || errno == ENOTDIR)) {
			if (kind == SBX_OP_DENY_READ && unseen(b, s, err, errlen) < 0) {
				free(s);
				return -1;
			}
			free(s);
			continue;
		}
		c = canon(b, s, &missing);
		if (c == NULL || sbx_memo_stat(b->memo, c, &st) < 0) {
			rc = errno;
			free(c);
			/* Review44d: EACCES below a directory of this uid's
			 * own is no reason to skip: the command, its owner,
			 * chmods it (u+x) and reads the path. Only another
			 * user's directory keeps it out of reach. */
			if (kind == SBX_OP_DENY_READ && rc == EACCES && !below_foreign_unsearchable(s)) {
				errbuf_set_errno(err, errlen, EACCES,
						 "cannot check deny_read path %s: a directory of yours on its path cannot be "
						 "searched, and the command could give the right back (chmod u+x) and read "
						 "it; make the directory searchable (chmod u+x) so that the path is hidden",
						 s);
				free(s);
				return -1;
			}
			if (kind == SBX_OP_DENY_READ && unseen(b, s, err, errlen) < 0) {
				free(s);
				return -1;
			}
			if (kind == SBX_OP_ALLOW_WRITE) {
				errbuf_set_errno(err, errlen, rc, "allow_write path %s", s);
				free(s);
				return -1;
			}
			free(s);
			continue; /* nothing to hide or re-allow */
		}
		if (kind == SBX_OP_DENY_READ && sbx_check_hard_links(b, "a read deny", c, &st, true, err, errlen) < 0) {
			free(c);
			free(s);
			return -1;
		}
		/* Landlock keeps a covered path unreadable should the host
		 * replace it (unseen.c); what is shown again inside gets a
		 * grant of its own. */
		if ((kind == SBX_OP_DENY_READ && strcmp(c, "/") != 0 &&
		     sbx_unseen_add(b, c, (size_t)(strrchr(c, '/') - c), true) < 0) ||
		    ((kind == SBX_OP_ALLOW_READ || kind == SBX_OP_ALLOW_WRITE) && sbx_unseen_grant(b, c) < 0)) {
			free(c);
			free(s);
			goto nomem;
		}
		if (add_op(b, kind, c, NULL, S_ISDIR(st.st_mode)) < 0) {
			free(s);
			goto nomem;
		}
		/* A deny_read directory's links: their targets too (c is the
		 * op's now, freed with the plan). */
		rc = kind == SBX_OP_DENY_READ && S_ISDIR(st.st_mode)
			     ? follow_links(b, c, s, SBX_OP_DENY_READ, name, err, errlen)
			     : 0;
		free(s);
		if (rc < 0)
			return -1;
	}
	return 0;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/* Order of application: phase (allow/deny read and write by depth, then
 * substituted files, then protections, then the session's scratch
 * directories on top of theirs), depth (parents first), kind, list order. */
static int op_phase(const struct sbx_op *o)
{
	return o->kind == SBX_OP_FILE ? 1 : o->kind == SBX_OP_PROTECT ? 2 : o->kind == SBX_OP_SCRATCH ? 3 : 0;
}

/*
 * The scratch directories of cfg (sandbox.h): each one that exists once
 * the protections are planned (their placeholders made) as a directory,
 * is protected and lies in a writable tree gets a tmpfs of the session
 * over its protection; any other stays as the lists say. 0 or -1.
 */
static int plan_scratch(struct sbx_builder *b, const struct sbx_config *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; cfg->scratch != NULL && cfg->scratch[i] != NULL; i++) {
		struct stat st;
		bool protected = false;
		char *c;

		/* Not through the memo: the placeholders are new. */
		if (bad_path(cfg->scratch[i]) != NULL)
			continue;
		c = realpath(cfg->scratch[i], NULL);
		if (c == NULL && errno == ENOMEM)
			goto nomem;
		if (c == NULL || lstat(c, &st) < 0 || !S_ISDIR(st.st_mode) || !sbx_plan_writable(b, c)) {
			free(c);
			continue;
		}
		for (size_t k = 0; k < b->n_ops && !protected; k++)
			protected = b->ops[k].kind == SBX_OP_PROTECT && strcmp(b->ops[k].path, c) == 0;
		if (!protected) {
			free(c);
			continue;
		}
		if (add_op(b, SBX_OP_SCRATCH, c, NULL, true) < 0)
			goto nomem;
	}
	return 0;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

static size_t op_depth(const struct sbx_op *o)
{
	size_t d = 0;
	const char *c;

	for (c = o->path; *c != '\0'; c++)
		d += *c == '/';
	return strcmp(o->path, "/") == 0 ? 0 : d;
}

/* Stable insertion sort: plans hold tens of paths. */
static void sort_ops(struct sbx_op *ops, size_t n)
{
	struct sbx_op t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		t = ops[i];
		for (j = i; j > 0; j--) {
			const struct sbx_op *p = &ops[j - 1];
			int pa = op_phase(p), pb = op_phase(&t);
			size_t da = op_depth(p), db = op_depth(&t);

			if (pa < pb || (pa == pb && (da < db || (da == db && p->kind <= t.kind))))
				break;
			ops[j] = ops[j - 1];
		}
		ops[j] = t;
	}
}

/* The substituted files of cfg: each path (an existing regular file, no
 * second hard link on a writable filesystem unless its content is public,
 * or an existing directory)
 * shown with its source's content (a regular file for a file; for a
 * directory, the union of the source directory's entries and its own,
 * mountns.c union_dir()). Both are canonicalised: a path behind a symlink
 * (/etc/resolv.conf -> /run/...) is substituted where the link leads.
 * 0 or -1 with err set. */
static int plan_files(struct sbx_builder *b, const struct sbx_config *cfg, char *err, size_t errlen)
{
	size_t missing;
	struct stat st, sst;
	char *h, *s;

	for (size_t i = 0; i < cfg->n_files; i++) {
		if (bad_path(cfg->files[i].path) || bad_path(cfg->files[i].source)) {
			errbuf_set_errno(err, errlen, 0, "substituted file paths must be absolute: %s",
				   cfg->files[i].path);
			return -1;
		}
		h = canon(b, cfg->files[i].path, &missing);
		s = sbx_memo_realpath(b->memo, cfg->files[i].source);
		if (h != NULL && s != NULL && missing != 0 && cfg->files[i].may_be_missing &&
		    h[missing] == '/' && strchr(h + missing + 1, '/') == NULL && sbx_memo_stat(b->memo, s, &sst) == 0 &&
		    (S_ISDIR(sst.st_mode) || S_ISREG(sst.st_mode))) {
			/* Only the last component missing: a placeholder
			 * (a directory or a file, as the source) where the
			 * command could make one. */
			char *parent = strndup(h, missing > 0 ? missing : 1), *first = strdup(h);

			if (parent == NULL || first == NULL) {
				free(parent);
				free(first);
				free(h);
				free(s);
				errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
				return -1;
			}
			if (sbx_plan_writable(b, parent) && !in_placeholder(b, parent)) {
				free(parent);
				if (make_placeholder(b, h, first, S_ISDIR(sst.st_mode), err, errlen) < 0) {
					free(h);
					free(s);
					return -1;
				}
				missing = 0;
			} else {
				free(parent);
				free(first);
			}
		}
		if (h != NULL && missing != 0 && cfg->files[i].may_be_missing) {
			/* Nowhere the command could make it either: nothing
			 * to show. */
			free(h);
			free(s);
			continue;
		}
		if (h == NULL || s == NULL || missing != 0 || sbx_memo_stat(b->memo, h, &st) < 0 ||
		    sbx_memo_stat(b->memo, s, &sst) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
			errbuf_set_errno(err, errlen, errno, "cannot show %s with the content of %s",
				   cfg->files[i].path, cfg->files[i].source);
			free(h);
			free(s);
			return -1;
		}
		if (S_ISDIR(st.st_mode) != S_ISDIR(sst.st_mode) ||
		    (!S_ISDIR(sst.st_mode) && !S_ISREG(sst.st_mode))) {
			errbuf_set_errno(err, errlen, 0,
				   "cannot show %s with the content of %s: a %s must be shown with a %s",
				   cfg->files[i].path, cfg->files[i].source,
				   S_ISDIR(st.st_mode) ? "directory" : "file",
				   S_ISDIR(st.st_mode) ? "directory" : "regular file");
			free(h);
			free(s);
			return -1;
		}
		/* A directory's union shows the host's own entries: where
		 * the path leads into a denied directory it would show them
		 * over the cover (review of round 42: the links were checked
		 * before this look, so a directory of a writable tree
		 * exchanged for a link to a denied one in between was
		 * followed here). */
		if (S_ISDIR(st.st_mode) && op_covers(b, SBX_OP_DENY_READ, h)) {
			errbuf_set_errno(err, errlen, 0,
				   "cannot show %s with the content of %s: it leads to %s, whose content is "
				   "denied (a symbolic link swapped in since the plan looked at it? start again)",
				   cfg->files[i].path, cfg->files[i].source, h);
			free(h);
			free(s);
			return -1;
		}
		if (!cfg->files[i].public_content &&
		    sbx_check_hard_links(b, "a file substitution", h, &st, true, err, errlen) < 0) {
			free(h);
			free(s);
			return -1;
		}
		/* Granted (it shows a copy), and kept like a cover: a real
		 * file the host saves anew by rename drops the substitution
		 * (a refreshed token showed in clear). */
		if (sbx_unseen_grant(b, h) < 0 ||
		    (!cfg->files[i].public_content && strcmp(h, "/") != 0 &&
		     sbx_unseen_add(b, h, (size_t)(strrchr(h, '/') - h), true) < 0)) {
			free(h);
			free(s);
			errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
			return -1;
		}
		if (add_op(b, SBX_OP_FILE, h, s, S_ISDIR(st.st_mode)) < 0) {
			errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
			return -1;
		}
	}
	return 0;
}

/* Contract in sbx_int.h. */
int sbx_plan_build(const struct sbx_config *cfg, struct sbx_plan *pl, struct sbx_builder *b,
		   char *err, size_t errlen)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	/* Without memory for the memo the plan asks the kernel every time:
	 * slower, the same answers. */
	b->memo = sbx_memo_new();
	b->follow_under = cfg->follow_under;
	b->follow_also = cfg->follow_also;
	b->scratch = cfg->scratch;
	if (plan_list(b, cfg->allow_write, SBX_OP_ALLOW_WRITE, "allow_write", err, errlen) < 0)
		goto fail;
	b->n_writable = b->n_ops;
	b->writable = calloc(b->n_writable + 1, sizeof(char *));
	if (b->writable == NULL)
		goto nomem;
	for (i = 0; i < b->n_writable; i++)
		b->writable[i] = b->ops[i].path;
	/* The writable set is known: refuse any path that goes through a
	 * symlink the command could have planted, before anything is bound
	 * or created (allow_write itself included). */
	if (sbx_check_list_links(b, cfg->allow_write, "allow_write", err, errlen) < 0 ||
	    sbx_check_list_links(b, cfg->deny_read, "deny_read", err, errlen) < 0 ||
	    sbx_check_list_links(b, cfg->allow_read, "allow_read", err, errlen) < 0 ||
	    sbx_check_list_links(b, cfg->deny_write, "deny_write", err, errlen) < 0 ||
	    sbx_check_list_links(b, cfg->protect, "mandatory deny", err, errlen) < 0 ||
	    sbx_check_list_links(b, cfg->cover, "home entry", err, errlen) < 0)
		goto fail;
	for (i = 0; i < cfg->n_files; i++)
		if (sbx_check_links(b, "substituted file", cfg->files[i].path, err, errlen) < 0)
			goto fail;
	if (plan_list(b, cfg->deny_read, SBX_OP_DENY_READ, "deny_read", err, errlen) < 0 ||
	    plan_list(b, cfg->allow_read, SBX_OP_ALLOW_READ, "allow_read", err, errlen) < 0)
		goto fail;
	if (plan_files(b, cfg, err, errlen) < 0)
		goto fail;
	/* What is hidden is known, and what is read: a copy of a hidden
	 * file in a git object store the sandbox reads (round 32, b10). */
	{
		char *cwd = cfg->cwd == NULL ? getcwd(NULL, 0) : NULL;
		int grc = sbx_check_git_copies(b, cfg, cfg->cwd != NULL ? cfg->cwd : cwd, err, errlen);

		free(cwd);
		if (grc < 0)
			goto fail;
	}
	/* The writable set is known: plan the protections (and make their
	 * placeholders) last. */
	if (plan_list(b, cfg->deny_write, SBX_OP_PROTECT, "deny_write", err, errlen) < 0 ||
	    plan_list(b, cfg->protect, SBX_OP_PROTECT, "protect", err, errlen) < 0)
		goto fail;
	b->cover = true;
	if (plan_list(b, cfg->cover, SBX_OP_PROTECT, "cover", err, errlen) < 0)
		goto fail;
	b->cover = false;
	if (plan_scratch(b, cfg, err, errlen) < 0 || walk_names_check(b, err, errlen) < 0)
		goto fail;
	walk_names_free(b);
	free(b->writable);
	b->writable = NULL;
	sbx_memo_free(b->memo);
	b->memo = NULL;
	sort_ops(b->ops, b->n_ops);
	pl->ops = b->ops;
	pl->n_ops = b->n_ops;
	pl->unseen = b->unseen;
	memset(&b->unseen, 0, sizeof(b->unseen));
	pl->envp = sbx_env_build(cfg->env_base, cfg->env_remove, cfg->env_add);
	if (pl->envp == NULL) {
		errbuf_set_errno(err, errlen, 0, "cannot build the environment (out of memory or an entry without '=')");
		goto fail;
	}
	if (sbx_seccomp_compile(cfg->allow_unix_sockets, &pl->prog, err, errlen) < 0)
		goto fail;
	return 0;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
fail:
	walk_names_free(b);
	free(b->writable);
	b->writable = NULL;
	sbx_memo_free(b->memo);
	b->memo = NULL;
	sbx_env_free(pl->envp);
	pl->envp = NULL;
	sbx_ops_free(b->ops, b->n_ops);
	pl->ops = NULL;
	pl->n_ops = 0;
	sbx_unseen_free(&b->unseen);
	(void)sbx_placeholders_remove(b->ph, b->n_ph);
	b->ph = NULL;
	b->n_ph = 0;
	return -1;
}


/*
 * launch.c - the parent's side of the sandbox: plan, clone, maps, fd,
 * status (STYLE.md "Launcher path").
 *
 * sbx_start() does all the privileged and allocating work first (paths
 * checked and canonicalised, placeholders made, environment built, seccomp
 * compiled), then clones the child into its namespaces, writes its id
 * maps, receives its listener and waits for the report pipe to tell it the
 * command was exec'd (EOF: the pipe is close-on-exec) or what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* The namespaces of SPEC §7. */
#define SBX_CLONE_FLAGS \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

struct sbx {
	pid_t pid;                  /* the sandbox's init, as seen outside */
	int listen_fd;              /* until sbx_take_listen_fd() */
	int status;                 /* -1 until reaped */
	char *exec_err;             /* execve failure message, or NULL */
	struct sbx_placeholder *ph; /* made on the host, removed after */
	size_t n_ph;
};

void sbx_seterr(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;
	int n;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (n < 0)
		err[0] = '\0';
	len = strlen(err);
	/* strerrordesc_np: a constant string, no locale, no allocation. */
	if (errnum != 0 && len < errlen)
		snprintf(err + len, errlen - len, ": %s",
			 strerrordesc_np(errnum) ? strerrordesc_np(errnum) : "unknown error");
}

/* ------------------------------------------------------------ the plan */

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
static bool under(const char *path, const char *prefix)
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
 * host's. Returns malloc'd or NULL (errno).
 */
static char *canon(const char *p, size_t *missing)
{
	char *copy, *slash, *r, *out;
	struct stat pst;
	size_t rest;

	*missing = 0;
	if (stat(p, &pst) == 0)
		return realpath(p, NULL);
	if (errno != ENOENT && errno != ENOTDIR)
		return NULL;
	copy = strdup(p);
	if (copy == NULL)
		return NULL;
	/* The longest existing prefix by stat (one call each), then one
	 * realpath of it: realpath reads every component, and the mandatory
	 * denies are a hundred mostly missing paths. */
	for (;;) {
		struct stat st;

		slash = strrchr(copy, '/');
		if (slash == NULL) {
			free(copy);
			errno = ENOENT;
			return NULL;
		}
		*slash = '\0';
		if (stat(slash == copy ? "/" : copy, &st) == 0)
			break;
		if (errno != ENOENT && errno != ENOTDIR) {
			free(copy);
			return NULL;
		}
	}
	r = realpath(slash == copy ? "/" : copy, NULL);
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

/* Growable arrays of the plan. */
struct builder {
	struct sbx_op *ops;
	size_t n_ops, cap_ops;
	struct sbx_placeholder *ph;
	size_t n_ph, cap_ph;
	char **writable; /* canonical allow_write paths (borrowed from ops) */
	size_t n_writable;
	/* check_links(): the last directory the last walk reached, made of
	 * existing non-link components only ("" none); a later path under it
	 * needs no second look at them (the table's paths share HOME). */
	char clean[PATH_MAX];
};

/* Appends an op; takes ownership of path and src (freed on failure). */
static int add_op(struct builder *b, enum sbx_op_kind kind, char *path, char *src, bool is_dir)
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
	b->n_ops++;
	return 0;
}

static void free_ops(struct sbx_op *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ops[i].path);
		free(ops[i].src);
	}
	free(ops);
}

/* Removes the placeholders, newest first, if they are still ours and
 * still empty. */
static void remove_placeholders(struct sbx_placeholder *ph, size_t n)
{
	struct stat st;
	size_t i;

	for (i = n; i-- > 0;) {
		if (lstat(ph[i].path, &st) == 0 && st.st_dev == ph[i].dev && st.st_ino == ph[i].ino) {
			if (ph[i].is_dir)
				(void)rmdir(ph[i].path);
			else if (S_ISREG(st.st_mode) && st.st_size == 0)
				(void)unlink(ph[i].path);
		}
		free(ph[i].path);
	}
	free(ph);
}

/* Would the command be able to create entries in dir (canonical)? */
static bool sandbox_writable(const struct builder *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->n_writable; i++)
		if (under(dir, b->writable[i]))
			return true;
	return false;
}

/* Does a writable tree lie strictly below path (canonical)? Then
 * protecting path still matters though path itself is read-only. */
static bool writable_below(const struct builder *b, const char *path)
{
	size_t i;

	for (i = 0; i < b->n_writable; i++)
		if (strcmp(b->writable[i], path) != 0 && under(b->writable[i], path))
			return true;
	return false;
}

/* Is dir one of our placeholders (or below one)? */
static bool in_placeholder(const struct builder *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->n_ph; i++)
		if (b->ph[i].is_dir && under(dir, b->ph[i].path))
			return true;
	return false;
}

/* Links followed while walking one path before giving up (the kernel's
 * own limit is 40). */
#define SBX_MAX_LINKS 40

/*
 * SPEC §3.3: no policy path is resolved through a symlink the sandbox
 * could have written. Walks p (absolute) component by component as the
 * kernel would, following each symlink met, and fails when one lies in a
 * directory the command can write (under an allow_write tree): an earlier
 * run may have planted it (an allowWrite path turned into a link to
 * $HOME, an allowRead one into a link to ~/.ssh), and the bind would
 * follow it. Links in read-only directories are followed. A path that
 * stops existing part-way is fine: there is nothing left to follow.
 * what names the list for the message. 0, or -1 with err set.
 */
static int check_links(struct builder *b, const char *what, const char *p, char *err,
		       size_t errlen)
{
	char cur[PATH_MAX], rest[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	size_t clen = 0, keep = strlen(b->clean);
	unsigned links = 0;
	struct stat st;
	ssize_t n;
	char *comp, *tail;

	if (snprintf(rest, sizeof(rest), "%s", p) >= (int)sizeof(rest))
		goto toolong;
	cur[0] = '\0'; /* "" is "/": cur never ends with a slash */
	tail = rest;
	/* Start below the last walk's link-free prefix when p shares it. */
	if (keep > 0 && strncmp(p, b->clean, keep) == 0 && (p[keep] == '/' || p[keep] == '\0')) {
		memcpy(cur, b->clean, keep + 1);
		clen = keep;
		tail = rest + keep;
	}
	for (;;) {
		/* cur is always an existing path of non-link components. */
		memcpy(b->clean, cur, clen + 1);
		while (*tail == '/')
			tail++;
		if (*tail == '\0')
			return 0;
		comp = tail;
		tail += strcspn(tail, "/");
		if (*tail != '\0')
			*tail++ = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(cur, '/');
			if (slash != NULL)
				*slash = '\0';
			clen = strlen(cur);
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%s", cur, comp) >= (int)sizeof(next))
			goto toolong;
		if (lstat(next, &st) < 0)
			return 0; /* missing (or unreadable): nothing to follow */
		if (!S_ISLNK(st.st_mode)) {
			memcpy(cur, next, strlen(next) + 1);
			clen = strlen(cur);
			continue;
		}
		if (sandbox_writable(b, clen ? cur : "/")) {
			sbx_seterr(err, errlen, 0,
				   "%s path %s goes through %s, a symbolic link in %s, which the "
				   "sandbox can write (an earlier run may have planted it); replace the "
				   "link by what it points to, or do not allow writes to %s",
				   what, p, next, clen ? cur : "/", clen ? cur : "/");
			return -1;
		}
		if (++links > SBX_MAX_LINKS) {
			sbx_seterr(err, errlen, ELOOP, "%s path %s", what, p);
			return -1;
		}
		n = readlink(next, target, sizeof(target) - 1);
		if (n < 0) {
			sbx_seterr(err, errlen, errno, "cannot read the symbolic link %s", next);
			return -1;
		}
		target[n] = '\0';
		/* The rest of the walk: the link's target, then what followed. */
		if (snprintf(next, sizeof(next), "%s/%s", target, tail) >= (int)sizeof(next))
			goto toolong;
		memcpy(rest, next, strlen(next) + 1);
		tail = rest;
		if (target[0] == '/') {
			cur[0] = '\0';
			clen = 0;
		}
	}
toolong:
	sbx_seterr(err, errlen, ENAMETOOLONG, "%s path %s", what, p);
	return -1;
}

/* check_links() on every path of a NULL-terminated list. */
static int check_list_links(struct builder *b, const char *const *list, const char *what,
			    char *err, size_t errlen)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++)
		if (check_links(b, what, list[i], err, errlen) < 0)
			return -1;
	return 0;
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
static int plan_protect(struct builder *b, const char *p, unsigned depth, char *err, size_t errlen);

/*
 * A regular file st (at path p, under the rule what) with more than one
 * name, on the filesystem of a writable tree: another name may lie in
 * that tree, where a write (or, for a read deny, a read) would reach the
 * file past the rule, and no mount can cover a name nobody knows. Fails
 * naming the file; 0 when it is not so.
 */
static int check_hard_links(const struct builder *b, const char *what, const char *p, const struct stat *st,
			    char *err, size_t errlen)
{
	struct stat wst;

	if (!S_ISREG(st->st_mode) || st->st_nlink < 2)
		return 0;
	for (size_t i = 0; i < b->n_writable; i++) {
		if (stat(b->writable[i], &wst) < 0 || wst.st_dev != st->st_dev)
			continue;
		sbx_seterr(err, errlen, 0,
			   "cannot apply %s to %s: it has %lu hard links, and another may lie in %s, which "
			   "the sandbox can write (same filesystem); replace the extra links by copies",
			   what, p, (unsigned long)st->st_nlink, b->writable[i]);
		return -1;
	}
	return 0;
}

/*
 * A dangling symlink p (in a read-only directory): whoever creates its
 * target changes what p says, so the target is protected in its place
 * (with a placeholder if its directory is writable). Targets with "." or
 * ".." components, or chains deeper than 8 links, fail closed.
 */
static int protect_link_target(struct builder *b, const char *p, unsigned depth, char *err,
			       size_t errlen)
{
	char target[PATH_MAX], *abs = NULL;
	const char *slash;
	ssize_t n;
	int rc;

	n = readlink(p, target, sizeof(target) - 1);
	if (n < 0) {
		sbx_seterr(err, errlen, errno, "cannot read the symbolic link %s", p);
		return -1;
	}
	target[n] = '\0';
	slash = strrchr(p, '/');
	if (target[0] == '/')
		abs = strdup(target);
	else if (asprintf(&abs, "%.*s/%s", (int)(slash - p), p, target) < 0)
		abs = NULL;
	if (abs == NULL) {
		sbx_seterr(err, errlen, ENOMEM, "cannot plan the sandbox");
		return -1;
	}
	if (depth >= 8 || bad_path(abs) != NULL) {
		sbx_seterr(err, errlen, 0, "cannot protect %s: it is a dangling symbolic link to %s", p, target);
		free(abs);
		return -1;
	}
	rc = plan_protect(b, abs, depth + 1, err, errlen);
	free(abs);
	return rc;
}

static int plan_protect(struct builder *b, const char *p, unsigned depth, char *err, size_t errlen)
{
	char *c, *first, *slash, *dir;
	struct sbx_placeholder *nph;
	size_t missing;
	struct stat st;
	bool is_dir;
	int fd;

	if (lstat(p, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			dir = strdup(p);
			if (dir == NULL)
				goto nomem;
			*strrchr(dir, '/') = '\0';
			c = canon(dir[0] ? dir : "/", &missing);
			free(dir);
			if (c == NULL) {
				sbx_seterr(err, errlen, errno, "cannot resolve %s", p);
				return -1;
			}
			is_dir = sandbox_writable(b, c);
			free(c);
			if (is_dir) {
				sbx_seterr(err, errlen, 0,
					   "cannot protect %s: it is a symbolic link in a writable directory", p);
				return -1;
			}
		}
		c = realpath(p, NULL);
		if (c == NULL && errno == ENOENT && S_ISLNK(st.st_mode))
			return protect_link_target(b, p, depth, err, errlen);
		if (c == NULL) {
			sbx_seterr(err, errlen, errno, "cannot resolve %s", p);
			return -1;
		}
		if (stat(c, &st) == 0 && check_hard_links(b, "a write deny", p, &st, err, errlen) < 0) {
			free(c);
			return -1;
		}
		/* Read-only in the sandbox's view already, and no writable
		 * tree below it: a protection would add mounts and nothing
		 * else (the mandatory table holds a hundred paths, most of
		 * them in a read-only HOME). */
		if (!sandbox_writable(b, c) && !writable_below(b, c)) {
			free(c);
			return 0;
		}
		return add_op(b, SBX_OP_PROTECT, c, NULL, false) < 0 ? -1 : 0;
	}
	if (errno != ENOENT && errno != ENOTDIR) {
		sbx_seterr(err, errlen, errno, "cannot check %s", p);
		return -1;
	}
	c = canon(p, &missing);
	if (c == NULL) {
		sbx_seterr(err, errlen, errno, "cannot resolve %s", p);
		return -1;
	}
	/* c[0..missing) exists; the first missing component follows. */
	dir = strndup(c, missing ? missing : 1);
	first = strdup(c);
	free(c);
	if (dir == NULL || first == NULL) {
		free(dir);
		free(first);
		goto nomem;
	}
	/* The deepest existing component is not a directory: a .git *file*
	 * (worktrees, submodules) when .git/hooks is protected. Nothing can
	 * be created under it, but it could be replaced by a directory with
	 * hooks: protect the file itself. */
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		free(first);
		return add_op(b, SBX_OP_PROTECT, dir, NULL, false) < 0 ? -1 : 0;
	}
	slash = strchr(first + missing + 1, '/');
	is_dir = slash != NULL;
	if (slash != NULL)
		*slash = '\0';
	if (!sandbox_writable(b, dir) || in_placeholder(b, dir)) {
		/* Read-only there (or inside a read-only placeholder): the
		 * command cannot create it. */
		free(dir);
		free(first);
		return 0;
	}
	free(dir);
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
		fd = mkdir(first, 0555);
	else {
		fd = open(first, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd >= 0)
			fd = close(fd);
	}
	if (fd < 0 || lstat(first, &st) < 0) {
		sbx_seterr(err, errlen, errno, "cannot create a placeholder to protect %s at %s", p, first);
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
	sbx_seterr(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/* Plans one path list of the config. */
static int plan_list(struct builder *b, const char *const *list, enum sbx_op_kind kind,
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
			sbx_seterr(err, errlen, 0, "%s path %s %s", name, list[i], why);
			return -1;
		}
		s = strip_slashes(list[i]);
		if (s == NULL)
			goto nomem;
		if (kind == SBX_OP_PROTECT) {
			rc = plan_protect(b, s, 0, err, errlen);
			free(s);
			if (rc < 0)
				return -1;
			continue;
		}
		/* Nothing there (through any link): nothing to hide or
		 * re-allow; an allow_write is reported below. */
		if (kind != SBX_OP_ALLOW_WRITE && stat(s, &st) < 0 &&
		    (errno == ENOENT || errno == ENOTDIR)) {
			free(s);
			continue;
		}
		c = canon(s, &missing);
		if (c == NULL || stat(c, &st) < 0) {
			rc = errno;
			free(c);
			if (kind == SBX_OP_ALLOW_WRITE) {
				sbx_seterr(err, errlen, rc, "allow_write path %s", s);
				free(s);
				return -1;
			}
			free(s);
			continue; /* nothing to hide or re-allow */
		}
		free(s);
		if (kind == SBX_OP_DENY_READ && check_hard_links(b, "a read deny", c, &st, err, errlen) < 0) {
			free(c);
			return -1;
		}
		if (add_op(b, kind, c, NULL, S_ISDIR(st.st_mode)) < 0)
			goto nomem;
	}
	return 0;
nomem:
	sbx_seterr(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/* Order of application: phase (allow/deny read and write by depth, then
 * substituted files, then protections), depth (parents first), kind, list order. */
static int op_phase(const struct sbx_op *o)
{
	return o->kind == SBX_OP_FILE ? 1 : o->kind == SBX_OP_PROTECT ? 2 : 0;
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

/* Builds everything the child needs. On failure, placeholders already
 * made are removed. */
static int plan_build(const struct sbx_config *cfg, struct sbx_plan *pl, struct builder *b,
		      char *err, size_t errlen)
{
	size_t i, missing;
	char *h, *s;
	struct stat st;

	memset(b, 0, sizeof(*b));
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
	if (check_list_links(b, cfg->allow_write, "allow_write", err, errlen) < 0 ||
	    check_list_links(b, cfg->deny_read, "deny_read", err, errlen) < 0 ||
	    check_list_links(b, cfg->allow_read, "allow_read", err, errlen) < 0 ||
	    check_list_links(b, cfg->deny_write, "deny_write", err, errlen) < 0 ||
	    check_list_links(b, cfg->protect, "mandatory deny", err, errlen) < 0)
		goto fail;
	for (i = 0; i < cfg->n_files; i++)
		if (check_links(b, "substituted file", cfg->files[i].path, err, errlen) < 0)
			goto fail;
	if (plan_list(b, cfg->deny_read, SBX_OP_DENY_READ, "deny_read", err, errlen) < 0 ||
	    plan_list(b, cfg->allow_read, SBX_OP_ALLOW_READ, "allow_read", err, errlen) < 0)
		goto fail;
	for (i = 0; i < cfg->n_files; i++) {
		if (bad_path(cfg->files[i].path) || bad_path(cfg->files[i].source)) {
			sbx_seterr(err, errlen, 0, "substituted file paths must be absolute: %s",
				   cfg->files[i].path);
			goto fail;
		}
		h = canon(cfg->files[i].path, &missing);
		s = realpath(cfg->files[i].source, NULL);
		if (h == NULL || s == NULL || missing != 0 || stat(h, &st) < 0 || !S_ISREG(st.st_mode)) {
			sbx_seterr(err, errlen, errno, "cannot show %s with the content of %s",
				   cfg->files[i].path, cfg->files[i].source);
			free(h);
			free(s);
			goto fail;
		}
		if (check_hard_links(b, "a file substitution", h, &st, err, errlen) < 0) {
			free(h);
			free(s);
			goto fail;
		}
		if (add_op(b, SBX_OP_FILE, h, s, false) < 0)
			goto nomem;
	}
	/* The writable set is known: plan the protections (and make their
	 * placeholders) last. */
	if (plan_list(b, cfg->deny_write, SBX_OP_PROTECT, "deny_write", err, errlen) < 0 ||
	    plan_list(b, cfg->protect, SBX_OP_PROTECT, "protect", err, errlen) < 0)
		goto fail;
	free(b->writable);
	b->writable = NULL;
	sort_ops(b->ops, b->n_ops);
	pl->ops = b->ops;
	pl->n_ops = b->n_ops;
	pl->envp = sbx_env_build(cfg->env_base, cfg->env_remove, cfg->env_add);
	if (pl->envp == NULL) {
		sbx_seterr(err, errlen, 0, "cannot build the environment (out of memory or an entry without '=')");
		goto fail;
	}
	if (sbx_seccomp_compile(cfg->allow_unix_sockets, &pl->prog, err, errlen) < 0)
		goto fail;
	return 0;
nomem:
	sbx_seterr(err, errlen, ENOMEM, "cannot plan the sandbox");
fail:
	free(b->writable);
	b->writable = NULL;
	sbx_env_free(pl->envp);
	pl->envp = NULL;
	free_ops(b->ops, b->n_ops);
	pl->ops = NULL;
	pl->n_ops = 0;
	remove_placeholders(b->ph, b->n_ph);
	b->ph = NULL;
	b->n_ph = 0;
	return -1;
}

/* ------------------------------------------------------------ running */

/* waitpid without EINTR; maps the status per SPEC §2. */
static int reap(pid_t pid, int flags, int *status)
{
	pid_t r;
	int st;

	do
		r = waitpid(pid, &st, flags);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return (int)r;
	if (WIFEXITED(st))
		*status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status = 128 + WTERMSIG(st);
	else
		*status = 125;
	return 1;
}

/* Reads one report: 1 got it, 0 EOF (the command was exec'd), -1 error. */
static int read_report(int fd, struct sbx_report *r)
{
	ssize_t n;

	do
		n = read(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	if ((size_t)n != sizeof(*r)) {
		errno = EPROTO;
		return -1;
	}
	r->msg[sizeof(r->msg) - 1] = '\0';
	return 1;
}

/* Closes *fd if open. */
static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int sbx_start(const struct sbx_config *cfg, struct sbx **out, char *err, size_t errlen)
{
	struct sbx_plan pl;
	struct builder b;
	struct sbx_report rep;
	struct sbx *s = NULL;
	char *cwd_copy = NULL;
	int sp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	pid_t pid = -1;
	int rc, status;
	char c = 'M';

	*out = NULL;
	memset(&pl, 0, sizeof(pl));
	if (cfg->argv == NULL || cfg->argv[0] == NULL || cfg->argv[0][0] == '\0') {
		sbx_seterr(err, errlen, 0, "no command to run");
		return -1;
	}
	if (cfg->cwd != NULL && cfg->cwd[0] != '/') {
		sbx_seterr(err, errlen, 0, "working directory %s is not absolute", cfg->cwd);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		sbx_seterr(err, errlen, ENOMEM, "cannot start the sandbox");
		return -1;
	}
	s->listen_fd = -1;
	s->status = -1;
	/* 1. Everything that allocates or needs the host's view. */
	if (plan_build(cfg, &pl, &b, err, errlen) < 0) {
		free(s);
		return -1;
	}
	s->ph = b.ph;
	s->n_ph = b.n_ph;
	pl.argv = cfg->argv;
	/* NULL: the caller's directory, by name (the child's old cwd is on
	 * the detached tree after pivot_root). */
	cwd_copy = cfg->cwd == NULL ? getcwd(NULL, 0) : NULL;
	if (cfg->cwd == NULL && cwd_copy == NULL) {
		sbx_seterr(err, errlen, errno, "cannot get the working directory");
		goto fail;
	}
	pl.cwd = cfg->cwd != NULL ? cfg->cwd : cwd_copy;
	pl.port = cfg->listen_port ? cfg->listen_port : SBX_DEFAULT_PORT;
	pl.no_mount_setattr = getenv("PASSAVANT_SBX_NO_MOUNT_SETATTR") != NULL;
	/* 2. The channels: a socketpair ("maps ready" one way, the listener
	 * the other) and the report pipe. All CLOEXEC: the command inherits
	 * none of them. The "go" byte travels on the socket, not a pipe, so
	 * that a child that died early costs us an EPIPE, not a SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
	    pipe2(errp, O_CLOEXEC) < 0) {
		sbx_seterr(err, errlen, errno, "cannot create the sandbox's channels");
		goto fail;
	}
	pl.err_wr = errp[1];
	pl.sock = sp[1];
	/* 3. Clone into the namespaces. The raw syscall with no stack is a
	 * fork that also creates namespaces; unlike glibc's fork() it runs
	 * no atfork handlers (see sbx_int.h on allocation in the child). */
	pid = (pid_t)syscall(SYS_clone, SBX_CLONE_FLAGS | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0) {
		sbx_seterr(err, errlen, errno, "cannot create namespaces (user, mount, PID, network, IPC, UTS)");
		goto fail;
	}
	if (pid == 0) {
		close(sp[0]);
		close(errp[0]);
		sbx_child_main(&pl);
	}
	s->pid = pid;
	close_fd(&sp[1]);
	close_fd(&errp[1]);
	/* 4. The maps, then "go". */
	if (sbx_userns_write_maps(pid, getuid(), getgid(), err, errlen) < 0)
		goto fail;
	if (send(sp[0], &c, 1, MSG_NOSIGNAL) != 1) {
		rc = errno;
		if (read_report(errp[0], &rep) == 1)
			sbx_seterr(err, errlen, 0, "%s", rep.msg);
		else
			sbx_seterr(err, errlen, rc, "cannot signal the sandbox child");
		goto fail;
	}
	/* 5. The listener. If the child failed first, its report says why. */
	s->listen_fd = fdpass_recv(sp[0]);
	if (s->listen_fd < 0) {
		rc = errno;
		if (read_report(errp[0], &rep) == 1)
			sbx_seterr(err, errlen, 0, "%s", rep.msg);
		else
			sbx_seterr(err, errlen, rc, "cannot receive the sandbox's listener");
		goto fail;
	}
	close_fd(&sp[0]);
	/* 6. Wait until the command is exec'd (EOF) or a report comes. */
	rc = read_report(errp[0], &rep);
	if (rc < 0) {
		sbx_seterr(err, errlen, errno, "cannot read the sandbox's report");
		goto fail;
	}
	if (rc == 1 && rep.code == 125) {
		sbx_seterr(err, errlen, 0, "%s", rep.msg);
		goto fail;
	}
	if (rc == 1) {
		s->exec_err = strdup(rep.msg);
		if (s->exec_err == NULL) {
			sbx_seterr(err, errlen, ENOMEM, "cannot start the sandbox");
			goto fail;
		}
	}
	close_fd(&errp[0]);
	sbx_env_free(pl.envp);
	free_ops(pl.ops, pl.n_ops);
	sbx_seccomp_free(&pl.prog);
	free(cwd_copy);
	*out = s;
	return 0;
fail:
	if (pid > 0) {
		(void)kill(pid, SIGKILL);
		(void)reap(pid, 0, &status);
	}
	close_fd(&sp[0]);
	close_fd(&sp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&s->listen_fd);
	sbx_env_free(pl.envp);
	free_ops(pl.ops, pl.n_ops);
	sbx_seccomp_free(&pl.prog);
	free(cwd_copy);
	remove_placeholders(s->ph, s->n_ph);
	free(s);
	return -1;
}

pid_t sbx_pid(const struct sbx *s)
{
	return s->pid;
}

int sbx_take_listen_fd(struct sbx *s)
{
	int fd = s->listen_fd;

	s->listen_fd = -1;
	return fd;
}

const char *sbx_exec_error(const struct sbx *s)
{
	return s->exec_err;
}

int sbx_kill(struct sbx *s, int sig)
{
	if (s->status >= 0) {
		errno = ESRCH;
		return -1;
	}
	return kill(s->pid, sig);
}

/* After the sandbox ended: the placeholders go. */
static void finish(struct sbx *s)
{
	remove_placeholders(s->ph, s->n_ph);
	s->ph = NULL;
	s->n_ph = 0;
}

int sbx_wait(struct sbx *s)
{
	int status;

	if (s->status >= 0)
		return s->status;
	if (reap(s->pid, 0, &status) != 1)
		return -1;
	s->status = status;
	finish(s);
	return status;
}

int sbx_try_wait(struct sbx *s, int *status)
{
	int rc;

	if (s->status >= 0) {
		*status = s->status;
		return 1;
	}
	rc = reap(s->pid, WNOHANG, status);
	if (rc == 1) {
		s->status = *status;
		finish(s);
	}
	return rc;
}

void sbx_free(struct sbx *s)
{
	if (s == NULL)
		return;
	if (s->status < 0) {
		(void)kill(s->pid, SIGKILL);
		(void)sbx_wait(s);
	}
	finish(s);
	close_fd(&s->listen_fd);
	free(s->exec_err);
	free(s);
}

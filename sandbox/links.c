/*
 * links.c - the refusals of SPEC §3.3 for links the sandbox could have
 * planted: a policy path resolved through a symbolic link in a writable
 * tree, and a denied file with a second name (a hard link): anywhere for
 * a read deny, in a writable tree for a write deny (looked for there by
 * one bounded walk, sbx_hard_links_resolve()). Used by the mount plan
 * (mountplan.c) once the writable set is known, before anything is bound
 * or created.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* What sbx_check_links() tells link_seen(). */
struct link_check {
	struct sbx_builder *b;
	const char *what, *p;
	char *err;
	size_t errlen;
};

/* sbx_memo_walk()'s on_link: a link in a directory the command can write
 * stops the walk (-2, err set). */
static int link_seen(void *arg, const char *dir, const char *lnk)
{
	struct link_check *c = arg;

	if (!sbx_plan_writable(c->b, dir))
		return 0;
	errbuf_set_errno(c->err, c->errlen, 0,
			 "%s path %s goes through %s, a symbolic link in %s, which the "
			 "sandbox can write (an earlier run may have planted it); replace the "
			 "link by what it points to, or do not allow writes to %s",
			 c->what, c->p, lnk, dir, dir);
	return -2;
}

/*
 * SPEC §3.3: no policy path is resolved through a symlink the sandbox
 * could have written. Walks p (absolute) component by component as the
 * kernel would, following each symlink met, and fails when one lies in a
 * directory the command can write (under an allow_write tree): an earlier
 * run may have planted it (an allowWrite path turned into a link to
 * $HOME, an allowRead one into a link to ~/.ssh), and the bind would
 * follow it. Links in read-only directories are followed. A path that
 * stops existing part-way is fine: there is nothing left to follow.
 * Every path is walked from /, each component as the kernel meets it
 * (sbx_memo_walk()): the plan's memo answers the looks at directories an
 * earlier path went through, so no link is judged without its walk.
 * what names the list for the message. 0, or -1 with err set.
 */
int sbx_check_links(struct sbx_builder *b, const char *what, const char *p, char *err,
		       size_t errlen)
{
	struct link_check c = {b, what, p, err, errlen};
	char real[PATH_MAX];
	int rc = sbx_memo_walk(b->memo, p, link_seen, &c, real, NULL);

	if (rc == 0 || rc == SBX_WALK_MISSING)
		return 0;
	if (rc == -1)
		errbuf_set_errno(err, errlen, errno, "%s path %s", what, p);
	return -1;
}

/* sbx_check_links() on every path of a NULL-terminated list. */
int sbx_check_list_links(struct sbx_builder *b, const char *const *list, const char *what,
			    char *err, size_t errlen)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++)
		if (sbx_check_links(b, what, list[i], err, errlen) < 0)
			return -1;
	return 0;
}

/*
 * A regular file st (at path p, under the rule what) with more than one
 * name. For a read deny or a substitution (read), anywhere: every name
 * outside the denied ones is readable in the sandbox (round 32 of the
 * attack: a denyRead or masked file's second name in the home, not
 * writable, was read in clear); fails naming the file. For a write deny,
 * when anything is writable: another name may lie in a writable tree,
 * where a write would reach the file past the rule, and no mount can
 * cover a name nobody knows. The file is kept (b->hl) and
 * sbx_hard_links_resolve() looks for its other names in those trees (and
 * the mounts in them) once the plan is complete: only a name found there
 * refuses the start. The command cannot give it a new name there
 * (below). 0, or -1 with err set.
 */
int sbx_check_hard_links(struct sbx_builder *b, const char *what, const char *p, const struct stat *st,
			 bool read, char *err, size_t errlen)
{
	struct sbx_hl_file *f;

	if (!S_ISREG(st->st_mode) || st->st_nlink < 2)
		return 0;
	if (read) {
		errbuf_set_errno(err, errlen, 0,
			   "cannot apply %s to %s: it has %lu hard links, and the sandbox reads the file "
			   "by any other name; replace the extra links by copies",
			   what, p, (unsigned long)st->st_nlink);
		return -1;
	}
	if (b->n_writable == 0)
		return 0;
	/* Round 49: kept whatever the trees' own filesystems; a tree may
	 * hold a mount of this one (sbx_hard_links_resolve()). */
	if (b->n_hl == b->cap_hl) {
		size_t cap = b->cap_hl ? 2 * b->cap_hl : 8;

		f = realloc(b->hl, cap * sizeof(*f));
		if (f == NULL)
			goto nomem;
		b->hl = f;
		b->cap_hl = cap;
	}
	f = &b->hl[b->n_hl];
	if ((f->path = strdup(p)) == NULL)
		goto nomem;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->nlink = st->st_nlink;
	f->what = what;
	b->n_hl++;
	return 0;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/*
 * Why only the names a file has when the session starts matter: inside
 * the sandbox a write-denied file is reached through a read-only mount
 * (the read-only view of /, or its protection's own bind), and every
 * writable tree is a bind mount of its own. link(2) and linkat(2)
 * (AT_EMPTY_PATH, or /proc/self/fd/N with AT_SYMLINK_FOLLOW, included)
 * refuse a new name on another mount than the old one's with EXDEV
 * before anything else is checked (fs/namei.c do_linkat(): old and new
 * vfsmount compared ahead of may_linkat()), and no capability lifts that:
 * the sandbox's root (uid 0 in its user namespace, with CAP_FOWNER
 * there) gets EXDEV as any user does. The host's
 * /proc/sys/fs/protected_hardlinks only refuses more (a link to a file
 * the caller does not own), after that check, so its value changes
 * nothing here. A rename keeps a name in its mount too. So the other
 * names to fear are the ones in a writable tree now (suite hardlinks,
 * "... ln into the tree fails with EXDEV", runs ln as uid 0 inside).
 *
 * The walk: each writable tree, and each mount point below one (from
 * /proc/self/mountinfo), on the filesystem of a kept file (one inside
 * another on the same filesystem only once), every entry, without
 * following symbolic links and without entering another filesystem, by
 * openat()/fdopendir() from there down. The sandbox binds the trees
 * with their mounts, writable: what a mount hides on the host it hides
 * there too, and what it shows is writable there. Round 49 (attack49s):
 * a mount of the kept file's filesystem in a tree on another one (a
 * bind mount of /usr/bin, or of the home's partition, into a work tree
 * on a tmpfs) was not walked (the tree's filesystem was not the file's)
 * and its second name there was written in the sandbox. A
 * regular file with a kept file's (st_dev, st_ino) there, not covered by
 * the plan (a protection, a cover or a session tmpfs over it or above
 * it, and no writable tree bound again below that), refuses the start
 * naming it. Bounded: past HL_WALK_ENTRIES entries in all, HL_WALK_DEPTH
 * levels, or at any directory that cannot be read, the start is refused
 * (fail closed) with what to do. On filesystems whose directory entries
 * carry the inode number stat gives (ext2/3/4, XFS, btrfs, tmpfs) only
 * the entries whose d_ino is a kept file's are stat'ed; elsewhere
 * (overlayfs, network filesystems) every regular file.
 */
#define HL_WALK_ENTRIES 200000
#define HL_WALK_DEPTH 128
/* The bytes of a name a message shows (its end, after "..."). */
#define HL_SHOWN 160

struct hl_walk {
	struct sbx_builder *b;
	dev_t dev;	     /* the tree's filesystem */
	bool by_dino;	     /* d_ino is st_ino there */
	size_t entries;	     /* in all the trees */
	const char *tree;    /* the tree walked (canonical) */
	char path[PATH_MAX]; /* the entry looked at (canonical; covers, messages) */
	size_t len;
	char *err;
	size_t errlen;
};

static int hl_cmp(const void *a, const void *b)
{
	const struct sbx_hl_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino ? 1 : 0;
}

/* The kept file (dev, ino), or NULL (b->hl sorted). */
static const struct sbx_hl_file *hl_find(const struct sbx_builder *b, dev_t dev, ino_t ino)
{
	struct sbx_hl_file key = {.dev = dev, .ino = ino};

	return bsearch(&key, b->hl, b->n_hl, sizeof(*b->hl), hl_cmp);
}

/* The first kept file on dev, or NULL. */
static const struct sbx_hl_file *hl_on(const struct sbx_builder *b, dev_t dev)
{
	for (size_t i = 0; i < b->n_hl; i++)
		if (b->hl[i].dev == dev)
			return &b->hl[i];
	return NULL;
}

/* s with every byte that is not printable ASCII as \xNN (run_shown()'s
 * form: a name in a writable tree is the command's choice, escapes
 * included), its last HL_SHOWN bytes after "..." when longer. */
static void hl_shown(char *out, size_t cap, const char *s)
{
	size_t len = strlen(s), n = 0;

	if (len > HL_SHOWN) {
		s += len - HL_SHOWN;
		len = HL_SHOWN;
		n = (size_t)snprintf(out, cap, "...");
	}
	for (size_t i = 0; i < len && n + 5 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch < 0x7f)
			out[n++] = (char)ch;
		else
			n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
	}
	out[n] = '\0';
}

/* Whether the name n (canonical, in a writable tree) is covered in the
 * sandbox: a protection, a read deny's cover or a session tmpfs over it
 * or a directory above it, or a substitution of n itself, with no
 * writable tree bound again below that (then it counts as writable:
 * fail closed). */
static bool hl_covered(const struct sbx_builder *b, const char *n)
{
	for (size_t i = 0; i < b->n_ops; i++) {
		const struct sbx_op *o = &b->ops[i];
		bool again = false;

		if (!(o->kind == SBX_OP_PROTECT || o->kind == SBX_OP_DENY_READ || o->kind == SBX_OP_SCRATCH ||
		      (o->kind == SBX_OP_FILE && strcmp(o->path, n) == 0)) ||
		    !sbx_path_under(n, o->path))
			continue;
		for (size_t k = 0; k < b->n_ops && !again; k++)
			again = b->ops[k].kind == SBX_OP_ALLOW_WRITE && strcmp(b->ops[k].path, o->path) != 0 &&
				sbx_path_under(b->ops[k].path, o->path) && sbx_path_under(n, b->ops[k].path);
		if (!again)
			return true;
	}
	return false;
}

enum hl_stop { HL_MANY, HL_DEEP, HL_UNREAD };

/* Fails the walk w closed: today's refusal of the first kept file on
 * its filesystem, why the tree was not looked through, and what to do. */
static int hl_stop(struct hl_walk *w, enum hl_stop why, int e)
{
	const struct sbx_hl_file *f = hl_on(w->b, w->dev);
	char at[4 * HL_SHOWN + 8], cause[sizeof(at) + 160];
	const char *fix;

	hl_shown(at, sizeof(at), w->path);
	if (why == HL_MANY) {
		(void)snprintf(cause, sizeof(cause),
			       "the writable trees hold more than %d entries (stopped at %s), more than are looked "
			       "through",
			       HL_WALK_ENTRIES, at);
		fix = "allow writes to a smaller tree";
	} else if (why == HL_DEEP) {
		(void)snprintf(cause, sizeof(cause),
			       "it is deeper than %d directories at %s, deeper than is looked through",
			       HL_WALK_DEPTH, at);
		fix = "flatten the tree";
	} else {
		(void)snprintf(cause, sizeof(cause), "%s cannot be read to look", at);
		fix = "make it readable";
	}
	errbuf_set_errno(w->err, w->errlen, why == HL_UNREAD ? e : 0,
			 "cannot apply %s to %s: it has %lu hard links, and another may lie in %s, which the "
			 "sandbox can write (same filesystem); %s for its other names: replace the extra links "
			 "by copies, or %s",
			 f->what, f->path, (unsigned long)f->nlink, w->tree, cause, fix);
	return -1;
}

/* Refuses the kept file f, whose other name w->path the walk found. */
static int hl_found(struct hl_walk *w, const struct sbx_hl_file *f)
{
	size_t t = strlen(w->tree);
	char name[4 * HL_SHOWN + 8];

	hl_shown(name, sizeof(name), w->path + (strcmp(w->tree, "/") == 0 ? 1 : t < w->len ? t + 1 : 0));
	errbuf_set_errno(w->err, w->errlen, 0,
			 "cannot apply %s to %s: it has %lu hard links, and another name of it, %s, lies in %s, "
			 "which the sandbox can write; replace the extra links by copies, or remove that name",
			 f->what, f->path, (unsigned long)f->nlink, name, w->tree);
	return -1;
}

/* Appends "/name" to w->path. 0, or -1 when it does not fit. */
static int hl_push(struct hl_walk *w, const char *name)
{
	size_t n = strlen(name), sep = w->len > 0 && w->path[w->len - 1] == '/' ? 0 : 1;

	if (w->len + sep + n >= sizeof(w->path))
		return -1;
	if (sep)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	return 0;
}

static int hl_walk_dir(struct hl_walk *w, int fd, unsigned depth);

/* The directory name of dfd (w->path names it): entered when it is on
 * the tree's filesystem. */
static int hl_enter(struct hl_walk *w, int dfd, const char *name, unsigned depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e;
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? 0 : hl_stop(w, HL_UNREAD, errno); /* ENOENT: gone since the listing */
	if (fstat(fd, &st) < 0) {
		e = errno;
		(void)close(fd);
		return hl_stop(w, HL_UNREAD, e);
	}
	if (st.st_dev != w->dev) {
		(void)close(fd); /* another filesystem mounted there: none of its names is one of ours */
		return 0;
	}
	if (depth + 1 > HL_WALK_DEPTH) {
		(void)close(fd);
		return hl_stop(w, HL_DEEP, 0);
	}
	return hl_walk_dir(w, fd, depth + 1);
}

/* The entries of the directory fd (taken; w->path names it). */
static int hl_walk_dir(struct hl_walk *w, int fd, unsigned depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		int e = errno;

		(void)close(fd);
		return hl_stop(w, HL_UNREAD, e);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;
		size_t len = w->len;
		const struct sbx_hl_file *f;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > HL_WALK_ENTRIES) {
			rc = hl_stop(w, HL_MANY, 0);
			break;
		}
		if ((type != DT_REG && type != DT_DIR && type != DT_UNKNOWN) ||
		    (type == DT_REG && w->by_dino && hl_find(w->b, w->dev, de->d_ino) == NULL))
			continue;
		if (hl_push(w, de->d_name) < 0) {
			rc = hl_stop(w, HL_UNREAD, ENAMETOOLONG);
			break;
		}
		if (type == DT_DIR) {
			rc = hl_enter(w, dirfd(d), de->d_name, depth);
		} else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT) /* ENOENT: gone since the listing */
				rc = hl_stop(w, HL_UNREAD, errno);
		} else if (S_ISDIR(st.st_mode)) {
			rc = hl_enter(w, dirfd(d), de->d_name, depth);
		} else if (S_ISREG(st.st_mode) && (f = hl_find(w->b, st.st_dev, st.st_ino)) != NULL &&
			   !hl_covered(w->b, w->path)) {
			rc = hl_found(w, f);
		}
		if (rc == 0) {
			w->len = len;
			w->path[len] = '\0';
		}
	}
	if (rc == 0 && errno != 0) {
		w->path[w->len] = '\0';
		rc = hl_stop(w, HL_UNREAD, errno);
	}
	(void)closedir(d);
	return rc;
}

/* Whether the walk root i lies in another one, j, on the filesystem dev,
 * every directory from j down to it on dev too: j's walk meets it. */
static bool hl_inside(struct sbx_builder *b, char *const *roots, size_t n, size_t i, dev_t dev)
{
	const char *p = roots[i];
	size_t plen = strlen(p);
	char sub[PATH_MAX];
	struct stat st;

	if (plen >= sizeof(sub))
		return false;
	for (size_t j = 0; j < n; j++) {
		const char *t = roots[j];
		bool same = true;

		if (j == i || !sbx_path_under(p, t) || (strcmp(p, t) == 0 && j > i) ||
		    sbx_memo_stat(b->memo, t, &st) < 0 || st.st_dev != dev)
			continue;
		memcpy(sub, p, plen + 1);
		for (size_t k = strcmp(t, "/") == 0 ? 1 : strlen(t) + 1; same && k <= plen; k++) {
			if (sub[k] != '/' && sub[k] != '\0')
				continue;
			sub[k] = '\0';
			same = sbx_memo_lstat(b->memo, sub, &st) == 0 && st.st_dev == dev;
			sub[k] = p[k];
		}
		if (same)
			return true;
	}
	return false;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void hl_unescape(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* Appends a copy of p to *roots (*n of them, room for *cap). 0, or -1. */
static int hl_root_add(char ***roots, size_t *n, size_t *cap, const char *p)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		char **r = realloc(*roots, c * sizeof(*r));

		if (r == NULL)
			return -1;
		*roots = r;
		*cap = c;
	}
	if (((*roots)[*n] = strdup(p)) == NULL)
		return -1;
	(*n)++;
	return 0;
}

/*
 * The walk's roots: the writable trees, then every mount point strictly
 * below one (/proc/self/mountinfo's fifth field). 0, or -1 with err set:
 * a mountinfo that cannot be read fails closed (a mount of a kept file's
 * filesystem in a tree would go unseen).
 */
static int hl_roots(const struct sbx_builder *b, char ***roots, size_t *n, char *err, size_t errlen)
{
	size_t cap = 0, len = 0;
	char *line = NULL;
	FILE *f;
	int rc = 0;

	*roots = NULL;
	*n = 0;
	for (size_t i = 0; i < b->n_writable; i++)
		if (hl_root_add(roots, n, &cap, b->writable[i]) < 0)
			goto nomem;
	f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL) {
		errbuf_set_errno(err, errlen, errno,
				 "cannot read /proc/self/mountinfo to look for mounts in the writable trees (where a "
				 "write-denied file's other name may lie); mount /proc");
		return -1;
	}
	while (rc == 0 && getline(&line, &len, f) > 0) {
		char *save = NULL, *mp = strtok_r(line, " ", &save);

		for (int k = 0; k < 4 && mp != NULL; k++)
			mp = strtok_r(NULL, " ", &save);
		if (mp == NULL)
			continue;
		hl_unescape(mp);
		for (size_t i = 0; i < b->n_writable; i++)
			if (strcmp(mp, b->writable[i]) != 0 && sbx_path_under(mp, b->writable[i])) {
				if (hl_root_add(roots, n, &cap, mp) < 0)
					rc = -1;
				break;
			}
	}
	free(line);
	(void)fclose(f);
	if (rc == 0)
		return 0;
nomem:
	errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
	return -1;
}

/* Contract in sbx_int.h (the walk: above). */
int sbx_hard_links_resolve(struct sbx_builder *b, char *err, size_t errlen)
{
	struct hl_walk *w;
	char **roots = NULL;
	size_t n = 0;
	int rc = 0;

	if (b->n_hl == 0)
		return 0;
	qsort(b->hl, b->n_hl, sizeof(*b->hl), hl_cmp);
	w = calloc(1, sizeof(*w));
	if (w == NULL || hl_roots(b, &roots, &n, err, errlen) < 0) {
		if (w == NULL)
			errbuf_set_errno(err, errlen, ENOMEM, "cannot plan the sandbox");
		rc = -1;
		goto out;
	}
	w->b = b;
	w->err = err;
	w->errlen = errlen;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct sbx_hl_file *f;
		struct statfs sf;
		struct stat st;
		int fd;

		if (sbx_memo_stat(b->memo, roots[i], &st) < 0 || hl_on(b, st.st_dev) == NULL ||
		    hl_inside(b, roots, n, i, st.st_dev))
			continue;
		w->dev = st.st_dev;
		w->tree = roots[i];
		w->len = 0;
		w->path[0] = '\0';
		if (hl_push(w, roots[i][1] == '\0' ? "" : roots[i] + 1) < 0) {
			rc = hl_stop(w, HL_UNREAD, ENAMETOOLONG);
			break;
		}
		if (S_ISREG(st.st_mode)) {
			/* A writable file: it is the other name itself. */
			if ((f = hl_find(b, st.st_dev, st.st_ino)) != NULL && !hl_covered(b, w->path))
				rc = hl_found(w, f);
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0) {
			int e = errno;

			if (fd >= 0)
				(void)close(fd);
			rc = hl_stop(w, HL_UNREAD, e);
			break;
		}
		if (st.st_dev != w->dev) { /* replaced since the plan looked */
			(void)close(fd);
			rc = hl_stop(w, HL_UNREAD, ESTALE);
			break;
		}
		w->by_dino = sf.f_type == EXT4_SUPER_MAGIC || sf.f_type == XFS_SUPER_MAGIC ||
			     sf.f_type == BTRFS_SUPER_MAGIC || sf.f_type == TMPFS_MAGIC;
		rc = hl_walk_dir(w, fd, 0);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(roots[i]);
	free(roots);
	free(w);
	return rc;
}

void sbx_hard_links_free(struct sbx_builder *b)
{
	for (size_t i = 0; i < b->n_hl; i++)
		free(b->hl[i].path);
	free(b->hl);
	b->hl = NULL;
	b->n_hl = b->cap_hl = 0;
}

/* Contract in sandbox.h. */
int sbx_check_host_path(const char *const *allow_write, const char *what, const char *path,
			char *err, size_t errlen)
{
	struct sbx_builder *b;
	size_t n = 0;
	int rc = -1;

	if (path[0] != '/') {
		errbuf_set_errno(err, errlen, EINVAL, "%s path %s is not absolute", what, path);
		return -1;
	}
	for (size_t i = 0; allow_write != NULL && allow_write[i] != NULL; i++)
		n++;
	b = calloc(1, sizeof(*b));
	if (b == NULL || (b->writable = calloc(n + 1, sizeof(char *))) == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot check the %s path %s", what, path);
		goto out;
	}
	/* The same canonical trees the mount plan binds. */
	for (size_t i = 0; i < n; i++) {
		char *real = realpath(allow_write[i], NULL);

		if (real != NULL) {
			b->writable[b->n_writable++] = real;
		} else if (errno != ENOENT && errno != ENOTDIR) {
			/* Fail closed: a tree we cannot resolve may be writable. */
			errbuf_set_errno(err, errlen, errno, "cannot resolve the writable tree %s",
					 allow_write[i]);
			goto out;
		}
	}
	rc = sbx_check_links(b, what, path, err, errlen);
out:
	if (b != NULL) {
		for (size_t i = 0; i < b->n_writable; i++)
			free(b->writable[i]);
		free(b->writable);
		free(b);
	}
	return rc;
}

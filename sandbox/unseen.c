/*
 * unseen.c - a denied path that does not exist at launch stays unreadable
 * when it appears during the session (SPEC §3.3: "a denied file or
 * directory discloses nothing").
 *
 * A deny_read path that exists is covered by a mount (mountns.c). One
 * that does not exist cannot be: a mount needs something to sit on, and
 * a placeholder made on the host would stand in the host user's way
 * (their own `aws configure` would meet a directory it did not make).
 * So a credential store the host creates while the command runs
 * (`gh auth login`, `docker login`, `aws configure` in another terminal)
 * would be readable in the sandbox, as would a `denyRead` file of the
 * policy written later.
 *
 * The same holds for a denied path that exists: its cover mount sits on
 * one dentry, and when the host renames a new file over it (an atomic
 * save: `docker login`, a refreshed OAuth token) the kernel drops the
 * mount in the sandbox and the new file shows.
 *
 * Landlock closes both (the command only; the init reads nothing). The
 * command's process gets a domain that handles one right, reading files,
 * and grants it beneath every entry the directories on the way to each
 * denied path hold when it starts, except the entries on that way and a
 * missing path's first component. A cover is such an entry, and the
 * grant is taken through it, so it holds the cover (an empty file, an
 * empty tmpfs), not what lies under; the allow_read paths, the writable
 * trees and substituted files get grants of their own. What exists when
 * the command starts reads as before; an entry that appears later
 * directly in one of those directories, or replaces a cover (the kernel
 * then drops the cover), is not beneath any grant, so no file in it can
 * be opened for reading (EACCES).
 * Writing, listing and executing are not handled, so the mounts alone
 * decide them, as before. Landlock grants by inode, not by name: an
 * entry that is a directory on the way under another name (a bind mount
 * of "/" or of the home's parent seen from below itself) is not granted,
 * or the way would be granted whole through it.
 *
 * The directories are never writable in the sandbox: a missing path
 * whose last existing directory the command may write is left out (the
 * command's own new files there must stay readable to it; the mandatory
 * placeholders cover the protected names there). The plan is built by
 * the parent (paths canonical, the same in the sandbox's root); the child
 * only lists directories into a stack buffer and allocates nothing
 * (sbx_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/* Where s[0..len) is, or would go, in the sorted set v[0..n): true when
 * it is there (*at its index), else *at is where to insert it. The child
 * looks up every entry it lists (a HOME of thousands): a binary search. */
static bool set_find(char *const *v, size_t n, const char *s, size_t len, size_t *at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(v[mid], s, len);

		if (c == 0 && v[mid][len] != '\0')
			c = 1; /* v[mid] is longer: after s */
		if (c == 0) {
			*at = mid;
			return true;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return false;
}

/* Adds a copy of s[0..len) to the sorted set v (n, cap) unless it holds
 * it. 0 or -1. */
static int set_add(char ***v, size_t *n, size_t *cap, const char *s, size_t len)
{
	size_t at;
	char *c;

	if (set_find(*v, *n, s, len, &at))
		return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, nc * sizeof(*nv));

		if (nv == NULL)
			return -1;
		*v = nv;
		*cap = nc;
	}
	c = strndup(s, len);
	if (c == NULL)
		return -1;
	memmove(*v + at + 1, *v + at, (*n - at) * sizeof(**v));
	(*v)[at] = c;
	(*n)++;
	return 0;
}

/* Trees the sandbox does not show from the host (a private /tmp, its
 * own /dev and /proc, sysfs): a path there is not the host's, and the
 * private /tmp is the command's to write. */
static const char *const not_host[] = {"/tmp", "/dev", "/proc", "/sys"};

/* Contract in sbx_int.h. */
int sbx_unseen_add(struct sbx_builder *b, const char *path, size_t existing, bool exists)
{
	struct sbx_unseen *u = &b->unseen;
	size_t dlen = existing, nlen;
	char dir[PATH_MAX];

	if (path[0] != '/' || existing >= strlen(path) || path[existing] != '/' ||
	    existing >= sizeof(dir) || (nlen = strcspn(path + existing + 1, "/")) == 0) {
		errno = EINVAL;
		return -1;
	}
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	if (dlen == 0) {
		dir[0] = '/';
		dir[1] = '\0';
	}
	for (size_t i = 0; i < sizeof(not_host) / sizeof(not_host[0]); i++)
		if (sbx_path_under(path, not_host[i]))
			return 0;
	if (sbx_plan_writable(b, dir))
		return 0;
	if (!exists && set_add(&u->skip, &u->n_skip, &u->cap_skip, path, existing + 1 + nlen) < 0)
		return -1;
	/* dir and each of its ancestors, "/" included */
	for (size_t k = dlen; k > 0; k--)
		if ((k == dlen || path[k] == '/') && set_add(&u->dirs, &u->n_dirs, &u->cap_dirs, path, k) < 0)
			return -1;
	if (set_add(&u->dirs, &u->n_dirs, &u->cap_dirs, "/", 1) < 0)
		return -1;
	/* the child's room for their identities (sbx_unseen_apply()) */
	{
		struct sbx_unseen_id *ids = realloc(u->ids, u->cap_dirs * sizeof(*ids));

		if (ids == NULL)
			return -1;
		u->ids = ids;
	}
	return 0;
}

/* Contract in sbx_int.h. */
int sbx_unseen_grant(struct sbx_builder *b, const char *path)
{
	struct sbx_unseen *u = &b->unseen;

	return set_add(&u->grant, &u->n_grant, &u->cap_grant, path, strlen(path));
}

/* Contract in sbx_int.h. */
void sbx_unseen_free(struct sbx_unseen *u)
{
	for (size_t i = 0; i < u->n_dirs; i++)
		free(u->dirs[i]);
	for (size_t i = 0; i < u->n_skip; i++)
		free(u->skip[i]);
	for (size_t i = 0; i < u->n_grant; i++)
		free(u->grant[i]);
	free(u->dirs);
	free(u->skip);
	free(u->grant);
	free(u->ids);
	memset(u, 0, sizeof(*u));
}

/* Contract in sbx_int.h. */
int sbx_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi > 0 ? (int)abi : 0;
}

/* Whether p is in the sorted set v[0..n). */
static bool in_list(char *const *v, size_t n, const char *p)
{
	size_t at;

	return set_find(v, n, p, strlen(p), &at);
}

/* Whether st is one of the directories on the way (u->ids, filled). */
static bool is_way_dir(const struct sbx_unseen *u, const struct stat *st)
{
	if (u == NULL)
		return false;
	for (size_t i = 0; i < u->n_dirs; i++)
		if (u->ids[i].dev == st->st_dev && u->ids[i].ino == st->st_ino)
			return true;
	return false;
}

/* Grants reading beneath the entry name of dir (open as dfd), whose full
 * path is p. Links are skipped: what they name is granted (or not) where
 * it lies. A directory that is one on the way under another name (a bind
 * mount of / or of the home's parent below itself, which round 40's
 * mount aliases list as ways of their own) is not granted: Landlock
 * grants by inode, so a grant through that name would grant the way
 * itself and every new entry the listing leaves out (review of round 40:
 * with / mounted a second time, a store the host made during the session
 * was read). 0 or -1 with err set. */
static int grant_fd(int rs, int fd, const char *p, char *err, size_t errlen)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE, .parent_fd = fd };

	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot add the Landlock rule for %s", p);
		return -1;
	}
	return 0;
}

static int grant(const struct sbx_unseen *u, int rs, int dfd, const char *name, const char *p,
		 unsigned char type, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (type == DT_LNK)
		return 0;
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* gone since the listing */
		errbuf_set_errno(err, errlen, errno, "cannot open %s for the Landlock rules", p);
		return -1;
	}
	if (type == DT_UNKNOWN || type == DT_DIR) {
		if (fstat(fd, &st) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot check %s for the Landlock rules", p);
			(void)close(fd);
			return -1;
		}
		if (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) && is_way_dir(u, &st))) {
			(void)close(fd);
			return 0;
		}
	}
	rc = grant_fd(rs, fd, p, err, errlen);
	(void)close(fd);
	return rc;
}

/* Grants every entry of dir except those of the plan's lists. */
static int grant_entries(const struct sbx_plan *pl, int rs, const char *dir, char *err, size_t errlen)
{
	const struct sbx_unseen *u = &pl->unseen;
	char buf[8192] __attribute__((aligned(8)));
	char p[PATH_MAX];
	size_t dlen = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	long n;

	if (dfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0; /* not in the sandbox's view */
		if (errno == EACCES) {
			/* Not listable (a 0711 directory of another user),
			 * or not even searchable (a 0700 home of another
			 * user, where root's launcher in its user namespace
			 * has no override for an unmapped owner): what lies
			 * in it stays readable as the mounts and the modes
			 * say, new entries too. The directory's own
			 * descriptor is granted: an openat() of "." in it
			 * needs the search right a 0700 one does not give
			 * (round 46: every start as root was refused while
			 * another user's home was 0700). */
			dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd >= 0) {
				/* granted whole, as before: no way check */
				int rc = grant_fd(rs, dfd, dir, err, errlen);

				(void)close(dfd);
				return rc;
			}
		}
		errbuf_set_errno(err, errlen, errno,
				 "cannot list %s to keep denied paths that do not exist yet unreadable", dir);
		return -1;
	}
	memcpy(p, dir, dlen);
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(const void *)(buf + off);
			size_t nl = strlen(d->d_name);

			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			if (dlen + 1 + nl >= sizeof(p)) {
				errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot name an entry of %s", dir);
				(void)close(dfd);
				return -1;
			}
			p[dlen] = '/';
			memcpy(p + dlen + 1, d->d_name, nl + 1);
			if (in_list(u->dirs, u->n_dirs, p) || in_list(u->skip, u->n_skip, p))
				continue;
			if (grant(u, rs, dfd, d->d_name, p, d->d_type, err, errlen) < 0) {
				(void)close(dfd);
				return -1;
			}
		}
	}
	if (n < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot list %s", dir);
		(void)close(dfd);
		return -1;
	}
	(void)close(dfd);
	return 0;
}

/* Contract in sbx_int.h. */
int sbx_unseen_apply(const struct sbx_plan *pl, char *err, size_t errlen)
{
	struct landlock_ruleset_attr ra = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
	int rs;

	if (pl->unseen.n_dirs == 0 || pl->landlock_abi < 1)
		return 0; /* none: the parent warned (sbx_unseen_unguarded()) */
	/* From ABI 2 on, a domain refuses every link or rename to another
	 * directory (EXDEV: `git mv a sub/`, `ln d1/f d2/`) unless it handles
	 * REFER and grants it: granted beneath "/", Landlock still refuses
	 * one that would give a file more rights (an ungranted store linked
	 * into a granted directory). */
	if (pl->landlock_abi >= 2)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	/* The ways' identities, as the sandbox shows them (a missing one
	 * matches nothing); into the parent's room, nothing allocated. */
	for (size_t i = 0; i < pl->unseen.n_dirs; i++) {
		struct stat st;

		if (stat(pl->unseen.dirs[i], &st) == 0) {
			pl->unseen.ids[i].dev = st.st_dev;
			pl->unseen.ids[i].ino = st.st_ino;
		} else {
			pl->unseen.ids[i].dev = (dev_t)-1;
			pl->unseen.ids[i].ino = (ino_t)-1;
		}
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (rs < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create the Landlock rule set");
		return -1;
	}
	for (size_t i = 0; i < pl->unseen.n_dirs; i++)
		if (grant_entries(pl, rs, pl->unseen.dirs[i], err, errlen) < 0) {
			(void)close(rs);
			return -1;
		}
	/* What the mounts show again inside a covered path: allow_read
	 * paths, writable trees, substituted files. One that is a directory
	 * on the way (or above one: its ancestors are all listed) is not
	 * granted whole, or what the listing left out would be granted with
	 * it (allowRead ~/.docker above a covered config.json); its entries
	 * are granted by the listing. */
	for (size_t i = 0; i < pl->unseen.n_grant; i++) {
		if (in_list(pl->unseen.dirs, pl->unseen.n_dirs, pl->unseen.grant[i]))
			continue;
		if (grant(&pl->unseen, rs, AT_FDCWD, pl->unseen.grant[i], pl->unseen.grant[i], DT_UNKNOWN, err,
			  errlen) < 0) {
			(void)close(rs);
			return -1;
		}
	}
	if (pl->landlock_abi >= 2) {
		struct landlock_path_beneath_attr pb = { .allowed_access = LANDLOCK_ACCESS_FS_REFER };
		int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		pb.parent_fd = fd;
		if (fd < 0 || syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot add the Landlock rule for links and renames");
			if (fd >= 0)
				(void)close(fd);
			(void)close(rs);
			return -1;
		}
		(void)close(fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot apply the Landlock rule set");
		(void)close(rs);
		return -1;
	}
	(void)close(rs);
	return 0;
}

/*
 * fileio.c - whole-file reading (contracts in fileio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/pathwalk.h"

int fileio_open_regular(const char *path, unsigned flags, struct stat *st)
{
	return fileio_open_regular_at(AT_FDCWD, path, flags, st);
}

int fileio_open_regular_at(int dfd, const char *path, unsigned flags, struct stat *st)
{
	int oflags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int fd;

	if (fstatat(dfd, path, st, (flags & FILEIO_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) != 0)
		return -1;
	if (!S_ISREG(st->st_mode)) {
		errno = S_ISLNK(st->st_mode) ? ELOOP : EINVAL;
		return -1;
	}
	if (flags & FILEIO_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = openat(dfd, path, oflags);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int saved = S_ISREG(st->st_mode) ? errno : EINVAL;

		(void)close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int fileio_open_nolinks(const char *path, int oflags, mode_t mode)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *end;
	int dfd, fd, saved;
	struct stat st;
	size_t n;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	for (;;) {
		while (*p == '/')
			p++;
		end = p + strcspn(p, "/");
		n = (size_t)(end - p);
		if (n == 0 || n > NAME_MAX) {
			/* "/" itself, a trailing slash, or a name too long. */
			(void)close(dfd);
			errno = n == 0 ? EISDIR : ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p = end;
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		/* Why O_DIRECTORY as well: with O_PATH, O_NOFOLLOW alone opens a
		 * link itself; O_DIRECTORY makes that fail (ENOTDIR). */
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			saved = errno;
			if (saved == ENOTDIR && fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				saved = ELOOP;
			(void)close(dfd);
			errno = saved;
			return -1;
		}
		(void)close(dfd);
		dfd = fd;
	}
	fd = openat(dfd, comp, oflags | O_NOFOLLOW | O_CLOEXEC, mode);
	saved = errno;
	(void)close(dfd);
	errno = saved;
	return fd;
}

ssize_t fileio_read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

char *fileio_read(const char *path, size_t max, unsigned flags, size_t *len, struct stat *st)
{
	return fileio_read_at(AT_FDCWD, path, max, flags, len, st);
}

char *fileio_read_at(int dfd, const char *path, size_t max, unsigned flags, size_t *len,
		     struct stat *st)
{
	struct stat local;
	char *buf;
	ssize_t n;
	size_t size;
	int fd, saved;

	if (st == NULL)
		st = &local;
	fd = fileio_open_regular_at(dfd, path, flags, st);
	if (fd < 0)
		return NULL;
	if (st->st_size < 0 || (unsigned long long)st->st_size > max) {
		(void)close(fd);
		errno = EFBIG;
		return NULL;
	}
	size = (size_t)st->st_size;
	buf = malloc(size + 1);
	if (buf == NULL) {
		(void)close(fd);
		errno = ENOMEM;
		return NULL;
	}
	n = fileio_read_full(fd, buf, size);
	saved = errno;
	(void)close(fd);
	if (n < 0) {
		if (flags & FILEIO_SECRET)
			explicit_bzero(buf, size);
		free(buf);
		errno = saved;
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/*
 * Whether the link comp in the directory dfd (depth components below "/")
 * is the system's own, one a session cannot have planted: owned by root,
 * in a directory owned by root that neither its group nor others may
 * write (Debian's /var/run -> /run, /var/lock -> /run/lock). A session
 * of an ordinary user cannot make such a link anywhere. A session run by
 * root could, in a writable tree of its own, so for root only a link in
 * "/" or in a directory right below it is taken (the places the file
 * system hierarchy puts its compatibility links); a writable tree that
 * is a whole top-level directory is the one case left (docs/sandbox.md).
 */
static bool system_link(int dfd, const char *comp, unsigned depth)
{
	struct stat dir, link;

	if (fstat(dfd, &dir) != 0 || fstatat(dfd, comp, &link, AT_SYMLINK_NOFOLLOW) != 0)
		return false;
	if (!S_ISLNK(link.st_mode) || link.st_uid != 0 || dir.st_uid != 0 || (dir.st_mode & 022) != 0)
		return false;
	return geteuid() != 0 || depth <= 1;
}

/* fileio_mkdirs_nolinks()'s step: makes a missing directory, takes a
 * link the system keeps (outside trusted). */
struct mkdirs_ctx {
	const char *path;
	mode_t mode;
	bool create, from_root;
	char *made;
	size_t madelen;
};

static enum pathwalk_act mkdirs_step(void *ctx, struct pathwalk_step *s)
{
	struct mkdirs_ctx *m = ctx;

	if (s->fd < 0 && s->err == ENOENT && m->create) {
		if (mkdirat(s->dfd, s->name, m->mode) == 0) {
			if (m->made != NULL && m->madelen > 0 && m->made[0] == '\0' &&
			    snprintf(m->made, m->madelen, "%.*s", (int)(s->end - m->path), m->path) >= (int)m->madelen)
				m->made[0] = '\0';
			return PATHWALK_AGAIN;
		}
		if (errno == EEXIST)
			return PATHWALK_AGAIN;
		s->err = errno;
		return PATHWALK_GO;
	}
	/* The walker opened it O_DIRECTORY: a link failed, lstat'ed. */
	if (s->fd < 0 && s->have_st && S_ISLNK(s->st.st_mode) && m->from_root &&
	    system_link(s->dfd, s->name, s->depth)) {
		s->have_st = false;
		s->fd = openat(s->dfd, s->name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->fd < 0)
			s->err = errno;
	}
	return PATHWALK_GO;
}

int fileio_mkdirs_nolinks(const char *path, const char *trusted, mode_t mode, bool create, char *made,
			  size_t madelen)
{
	struct mkdirs_ctx m = {.path = path, .mode = mode, .create = create, .made = made, .madelen = madelen};
	size_t tl = trusted != NULL ? strlen(trusted) : 0;
	struct pathwalk_result res;
	int fd;

	if (made != NULL && madelen > 0)
		made[0] = '\0';
	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	while (tl > 1 && trusted[tl - 1] == '/')
		tl--;
	if (tl > 1 && trusted[0] == '/' && strncmp(path, trusted, tl) == 0 && (path[tl] == '/' || path[tl] == '\0')) {
		char base[PATH_MAX];

		if (tl >= sizeof(base)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(base, trusted, tl);
		base[tl] = '\0';
		fd = pathwalk(base, path + tl, PATHWALK_DIR | PATHWALK_DOT, mkdirs_step, &m, &res);
	} else {
		m.from_root = true;
		fd = pathwalk("/", path, PATHWALK_DIR | PATHWALK_DOT, mkdirs_step, &m, &res);
	}
	if (fd < 0 && res.fd >= 0) {
		(void)close(res.fd);
		errno = res.err;
	}
	return fd;
}

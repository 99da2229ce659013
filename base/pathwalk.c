/*
 * pathwalk.c - the component walk (contracts in pathwalk.h). It does not
 * allocate: the sandbox's set-up child calls it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "base/pathwalk.h"

/* Ends the walk not REACHED: res keeps dfd (the last directory reached). */
static int stop(struct pathwalk_result *res, enum pathwalk_end end, int err, const char *at)
{
	res->end = end;
	res->err = err;
	res->at = at;
	errno = err;
	return -1;
}

/*
 * Opens name in dfd into s. A directory to pass through (not the last
 * component, or PATHWALK_DIR) is opened O_DIRECTORY as well, with no
 * fstat: a link or a file there fails (ENOTDIR; with O_PATH, O_NOFOLLOW
 * alone would open a link itself), and only then is the entry lstat'ed
 * to tell which (have_st). The last component is opened as it is and
 * fstat'ed. One system call saved a directory: the set-up walks some
 * hundred paths at each start.
 */
static void open_step(struct pathwalk_step *s, unsigned flags)
{
	s->have_st = false;
	if ((flags & PATHWALK_NOAUTOMOUNT) == 0 && (!s->last || (flags & PATHWALK_DIR) != 0)) {
		s->fd = openat(s->dfd, s->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s->fd >= 0)
			return;
		s->err = errno;
		if ((s->err == ENOTDIR || s->err == ELOOP) &&
		    fstatat(s->dfd, s->name, &s->st, AT_SYMLINK_NOFOLLOW) == 0)
			s->have_st = true;
		return;
	}
	s->fd = openat(s->dfd, s->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (s->fd < 0) {
		s->err = errno;
		return;
	}
	if (fstat(s->fd, &s->st) < 0) {
		s->err = errno;
		(void)close(s->fd);
		s->fd = -1;
		return;
	}
	s->have_st = true;
}

/* stop(), with res->st made the stat of the directory it stopped in
 * (not taken on the way). */
static int stop_at(struct pathwalk_result *res, bool have_st, enum pathwalk_end end, int err, const char *at)
{
	if (!have_st && fstat(res->fd, &res->st) < 0) {
		(void)close(res->fd);
		res->fd = -1;
	}
	return stop(res, end, err, at);
}

int pathwalk(const char *start, const char *path, unsigned flags, pathwalk_fn step, void *ctx,
	     struct pathwalk_result *res)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	struct pathwalk_step s;
	bool have_st = false; /* res->st is fd's */

	memset(res, 0, sizeof(*res));
	res->fd = open(start, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (res->fd < 0)
		return stop(res, PATHWALK_FAILED, errno, path);
	for (;;) {
		const char *name, *q;
		size_t n;
		bool again = false;

		while (*p == '/')
			p++;
		if (*p == '\0') {
			if (!have_st && fstat(res->fd, &res->st) < 0) {
				const int saved = errno;

				(void)close(res->fd);
				res->fd = -1;
				return stop(res, PATHWALK_FAILED, saved, path);
			}
			res->end = PATHWALK_REACHED;
			return res->fd;
		}
		name = p;
		n = strcspn(p, "/");
		p += n;
		for (q = p; *q == '/'; q++)
			;
		if (n == 1 && name[0] == '.' && (flags & PATHWALK_DOT) != 0)
			continue;
		if (n > NAME_MAX || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
			return stop_at(res, have_st, PATHWALK_BADNAME, n > NAME_MAX ? ENAMETOOLONG : EINVAL, name);
		memcpy(comp, name, n);
		comp[n] = '\0';
		memset(&s, 0, sizeof(s));
		s.dfd = res->fd;
		s.name = comp;
		s.end = p;
		s.depth = res->depth;
		s.last = *q == '\0';
		if (step != NULL && (flags & PATHWALK_BEFORE) != 0) {
			s.before = true;
			s.fd = -1;
			if (step(ctx, &s) == PATHWALK_STOP)
				return stop_at(res, have_st, PATHWALK_STOPPED, ECANCELED, name);
			s.before = false;
		}
		for (;;) {
			enum pathwalk_act act;

			open_step(&s, flags);
			act = step != NULL ? step(ctx, &s) : PATHWALK_GO;
			if (act == PATHWALK_AGAIN && !again) {
				again = true;
				if (s.fd >= 0)
					(void)close(s.fd);
				continue;
			}
			if (act == PATHWALK_STOP) {
				if (s.fd >= 0)
					(void)close(s.fd);
				return stop_at(res, have_st, PATHWALK_STOPPED, ECANCELED, name);
			}
			break;
		}
		if (s.fd < 0 && (s.err == ENOTDIR || s.err == ELOOP) && s.have_st)
			return S_ISLNK(s.st.st_mode) ? stop_at(res, have_st, PATHWALK_LINK, ELOOP, name)
						     : stop_at(res, have_st, PATHWALK_NOTDIR, ENOTDIR, name);
		if (s.fd < 0)
			return stop_at(res, have_st, PATHWALK_FAILED, s.err, name);
		if (s.have_st &&
		    (S_ISLNK(s.st.st_mode) || (!S_ISDIR(s.st.st_mode) && (!s.last || (flags & PATHWALK_DIR) != 0)))) {
			(void)close(s.fd);
			return S_ISLNK(s.st.st_mode) ? stop_at(res, have_st, PATHWALK_LINK, ELOOP, name)
						     : stop_at(res, have_st, PATHWALK_NOTDIR, ENOTDIR, name);
		}
		(void)close(res->fd);
		res->fd = s.fd;
		res->depth++;
		have_st = s.have_st;
		if (have_st)
			res->st = s.st;
	}
}

int pathwalk_open(const char *path)
{
	struct pathwalk_result res;
	int fd = pathwalk("/", path, 0, NULL, NULL, &res);

	if (fd < 0 && res.fd >= 0) {
		(void)close(res.fd);
		errno = res.err;
	}
	return fd;
}

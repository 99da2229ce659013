/*
 * rununchecked.c - a session that ended without its check (round 37 of
 * the attack). The check after the run (run_git_check()) is what moves
 * aside the settings, hooks and start-up files a session planted where
 * the mount plan does not reach (nested .vscode, a new repository's
 * hooks, a new entry of a writable HOME...). A passavant killed with
 * SIGKILL (the user's `kill -9`, a CI job's timeout, the OOM killer where
 * passavant could not lower its own score) never runs it, and the next
 * session checked only what changed during itself: a nested
 * `sub/.vscode/tasks.json` planted before the kill stayed, for good.
 *
 * So each session leaves a mark per writable tree in the state directory
 * (read- and write-denied in every sandbox: policy_bind()) from just
 * before the command starts until its check has ended:
 * STATE/unchecked/HASH, "SEC NSEC\nROOT\n", SEC.NSEC the session's start
 * (the check's `since`). The next session on that tree, holding its lock
 * (so that session is gone), finds the mark and runs the check for it
 * first, with the old start: whatever changed in the tree since then is
 * checked, what the user changed on the host meanwhile too (it may be
 * moved aside; every line names it). A mark of a tree below one of the
 * session's is taken too (the lock covers it); one above is left for a
 * session there. Once the sandbox is up, the mark also lists the
 * placeholders made in the tree ("F|D DEV INO PATH" lines): the next
 * session removes those still empty and the same before that check, as
 * the killed one would have (else each would be taken for the killed
 * session's and moved aside). Files and directories of the state
 * directory are opened without following links (fileio_open_nolinks()).
 *
 * The mark's first line also holds the tree's device and inode ("SEC
 * NSEC DEV INO"; review of round 37): a tree the user moved on the host
 * after the kill (proj -> proj2) is checked by the next session in its
 * new place, and a directory made anew at the tree's path (removed and
 * cloned again: the same inode number is often given back, so one born
 * after the session's start is another) is not checked as the killed
 * session's (every file of a fresh clone is newer than that start: its
 * nested settings were moved aside); its mark goes, with a line. A tree
 * moved below one of a later session's trees is found there by device
 * and inode (find_below(); round 41).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fileio.h"
#include "proxy/cli/cli.h"
#include "proxy/cli/run.h"
#include "proxy/log.h"

/* The state directory's "unchecked" into out; false when there is none. */
static bool marks_dir(char *out, size_t len)
{
	char err[256];
	int n;

	if (cli_state_dir(getenv("XDG_STATE_HOME"), getenv("HOME"), out, len, err, sizeof(err)) < 0)
		return false;
	n = (int)strlen(out);
	return (size_t)snprintf(out + n, len - (size_t)n, "/unchecked") < len - (size_t)n;
}

/* dir made canonical in place where it exists (a home reached through a
 * link: the marks are opened without following one). */
static void canon(char *dir, size_t len)
{
	char *r = realpath(dir, NULL);

	if (r != NULL && strlen(r) < len)
		memcpy(dir, r, strlen(r) + 1);
	free(r);
}

/* FNV-1a of root, as the mark's name. */
static void mark_path(char *out, size_t len, const char *dir, const char *root)
{
	uint64_t h = 1469598103934665603ULL;

	for (const unsigned char *p = (const unsigned char *)root; *p != '\0'; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	snprintf(out, len, "%s/%016llx", dir, (unsigned long long)h);
}

/* A mark's first two lines for root into out: the start, the tree's
 * device and inode (0 0 when it cannot be read), the tree. snprintf's
 * result. */
static int mark_head(char *out, size_t len, const struct timespec *since, const char *root)
{
	struct stat st;

	if (stat(root, &st) != 0)
		memset(&st, 0, sizeof(st));
	return snprintf(out, len, "%lld %ld %llu %llu\n%s\n", (long long)since->tv_sec, since->tv_nsec,
			(unsigned long long)st.st_dev, (unsigned long long)st.st_ino, root);
}

/* Whether the directory at path is the tree a mark (start since, dev and
 * ino; 0 0: a mark without them) was made for: the same device and inode,
 * not born after that start. */
static bool same_tree(const char *path, unsigned long long dev, unsigned long long ino, const struct timespec *since)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME, &sx) != 0 ||
	    !S_ISDIR(sx.stx_mode))
		return false;
	if (dev == 0 && ino == 0)
		return true;
	if ((unsigned long long)makedev(sx.stx_dev_major, sx.stx_dev_minor) != dev || sx.stx_ino != ino)
		return false;
	return (sx.stx_mask & STATX_BTIME) == 0 || sx.stx_btime.tv_sec < since->tv_sec ||
	       (sx.stx_btime.tv_sec == since->tv_sec && sx.stx_btime.tv_nsec <= (unsigned)since->tv_nsec);
}

/* path holding text, made anew (0600) through a temporary name and a
 * rename, so that a kill in the middle leaves the old mark whole. 0 or
 * -1 (errno). */
static int mark_write(const char *path, const char *text)
{
	char tmp[PATH_MAX + 48];
	size_t len = strlen(text), off = 0;
	int fd, e;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = fileio_open_nolinks(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			(void)close(fd);
			(void)unlink(tmp);
			errno = e;
			return -1;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		e = errno;
		(void)unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* mkdir -p of path, 0700; the first directory it made into made (""
 * when none). Round 42: without following a link below the home (a
 * $XDG_STATE_HOME a session could swap for one: nothing made through
 * it), the home's own path as it resolves (base/fileio.h). 0 or -1
 * (errno). */
static int mkdirs(const char *path, char made[PATH_MAX])
{
	int fd = fileio_mkdirs_nolinks(path, getenv("HOME"), 0700, true, made, PATH_MAX);

	if (fd < 0)
		return -1;
	(void)close(fd);
	return 0;
}

/* rmdir of path; when its parent denies it (a session that made a
 * writable home 0500), the parent opened for it if it is ours, its mode
 * put back. */
static int rmdir_opened(const char *path)
{
	char parent[PATH_MAX], *slash;
	struct stat st;
	int rc, e;

	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	if (errno != EACCES && errno != EPERM)
		return -1;
	if (snprintf(parent, sizeof(parent), "%s", path) >= (int)sizeof(parent) ||
	    (slash = strrchr(parent, '/')) == NULL || slash == parent)
		return -1;
	*slash = '\0';
	if (lstat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    chmod(parent, (st.st_mode & 07777) | 0300) != 0)
		return -1;
	rc = rmdir(path);
	e = errno;
	(void)chmod(parent, st.st_mode & 07777);
	errno = e;
	return rc;
}

/* Marks are small: a start, a tree and its placeholders. */
#define MARK_MAX ((size_t)4 * 1024 * 1024)

/* The mark at path, read whole (malloc'd; NULL when there is none, it
 * does not parse or names another tree than root): its start into
 * *since, its placeholder lines from *phs (inside the buffer). */
static char *mark_read(const char *path, const char *root, struct timespec *since, unsigned long long *dev,
		       unsigned long long *ino, char **phs)
{
	char *buf, *nl, *end;
	long long sec, nsec;
	size_t len;
	int got;

	buf = fileio_read(path, MARK_MAX, 0, &len, NULL);
	if (buf == NULL)
		return NULL;
	nl = strchr(buf, '\n');
	*dev = *ino = 0;
	if (nl == NULL)
		goto bad;
	*nl = '\0';
	got = sscanf(buf, "%lld %lld %llu %llu", &sec, &nsec, dev, ino);
	*nl = '\n';
	if ((got != 2 && got != 4) || sec < 0 || nsec < 0 || nsec >= 1000000000LL)
		goto bad;
	if (got == 2)
		*dev = *ino = 0;
	nl++;
	end = strchr(nl, '\n');
	if (end == NULL)
		goto bad;
	*end = '\0';
	if (strcmp(nl, root) != 0)
		goto bad;
	since->tv_sec = (time_t)sec;
	since->tv_nsec = (long)nsec;
	*phs = end + 1;
	return buf;
bad:
	free(buf);
	return NULL;
}

/* Removes the placeholder lines' files and directories that are still
 * the same and still empty, the last made first. */
static void drop_placeholders(char *phs, const char *was, const char *now)
{
	char moved[PATH_MAX];
	size_t wl = strlen(was);

	char *lines[4096];
	size_t n = 0;

	for (char *p = phs; *p != '\0' && n < sizeof(lines) / sizeof(lines[0]);) {
		char *nl = strchr(p, '\n');

		if (nl == NULL)
			break;
		*nl = '\0';
		lines[n++] = p;
		p = nl + 1;
	}
	while (n-- > 0) {
		unsigned long long dev, ino;
		char kind;
		int off = 0;
		struct stat st;
		const char *path;

		if (sscanf(lines[n], "%c %llu %llu %n", &kind, &dev, &ino, &off) != 3 || off == 0)
			continue;
		path = lines[n] + off;
		/* A tree moved since: its placeholders moved with it. */
		if (strcmp(was, now) != 0) {
			if (strncmp(path, was, wl) != 0 || path[wl] != '/' ||
			    (size_t)snprintf(moved, sizeof(moved), "%s%s", now, path + wl) >= sizeof(moved))
				continue;
			path = moved;
		}
		if (path[0] != '/' || lstat(path, &st) != 0 || (unsigned long long)st.st_dev != dev ||
		    (unsigned long long)st.st_ino != ino)
			continue;
		if (kind == 'D' && S_ISDIR(st.st_mode))
			(void)rmdir(path); /* fails when not empty: then checked */
		else if (kind == 'F' && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_nlink == 1)
			(void)unlink(path);
	}
}

/* Whether path is dir or below it (both canonical). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The tree a mark names (its second line) into out; false when it has none. */
static bool mark_root(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX + 64], *nl, *end;
	ssize_t n;
	int fd = fileio_open_nolinks(path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return false;
	n = fileio_read_full(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL || (end = strchr(nl + 1, '\n')) == NULL ||
	    (size_t)(end - nl - 1) >= len)
		return false;
	memcpy(out, nl + 1, (size_t)(end - nl - 1));
	out[end - nl - 1] = '\0';
	return out[0] == '/';
}

/* Directories looked through, at most, in one session's start for the
 * trees of killed sessions moved below its own (find_below()), and how
 * deep. */
#define UNCHECKED_FIND_DIRS 20000
#define UNCHECKED_FIND_DEPTH 8

/*
 * The line naming a killed session's tree found moved (round 47: with
 * run_shown()'s \xNN, whole): tree is made of names found below one of
 * ours, which that session's command may have chosen (a terminal's
 * escapes, a title or a colour, sent to the user's terminal raw before).
 */
static void moved_line(const char *tree, const char *root)
{
	char *t = run_shown(tree), *r = run_shown(root);

	fprintf(stderr, "passavant: %s is the directory an earlier session ran in as %s (moved since)\n",
		t != NULL ? t : "(a directory)", r != NULL ? r : "(its path)");
	free(t);
	free(r);
}

/*
 * Whether the directory fd (its path in path, PATH_MAX bytes, extended in
 * place) holds, at most depth levels below it, the tree a mark names
 * (dev, ino, not born after since: same_tree()); path is then its path.
 * Links are not followed, other file systems not entered; *budget
 * directories at most (round 41: a tree moved below ANOTHER session's
 * tree was found only by a session in the tree itself).
 */
static bool find_below(int fd, char *path, unsigned long long dev, unsigned long long ino, const struct timespec *since,
		       unsigned depth, size_t *budget)
{
	struct dirent *de;
	size_t n = strlen(path);
	bool hit = false;
	DIR *d = fdopendir(fd);

	if (d == NULL) {
		(void)close(fd);
		return false;
	}
	while (!hit && *budget > 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    (unsigned long long)st.st_dev != dev)
			continue;
		(*budget)--;
		if ((size_t)snprintf(path + n, PATH_MAX - n, "%s%s", n > 1 ? "/" : "", de->d_name) >= PATH_MAX - n)
			continue;
		if ((unsigned long long)st.st_ino == ino && same_tree(path, dev, ino, since)) {
			hit = true;
			break;
		}
		if (depth > 0 &&
		    (sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
		    find_below(sub, path, dev, ino, since, depth - 1, budget))
			hit = true;
		if (!hit)
			path[n] = '\0';
	}
	(void)closedir(d);
	return hit;
}

void run_unchecked_check(struct run *run, const struct strv *roots)
{
	char below[PATH_MAX];
	size_t budget = UNCHECKED_FIND_DIRS;
	char dir[PATH_MAX], path[PATH_MAX + 32], root[PATH_MAX];
	struct strv old = {0}, used = {0};
	struct timespec first = {0, 0}, t0, t;
	struct dirent *de;
	bool any = false;
	DIR *d;

	if (roots->n == 0 || !marks_dir(dir, sizeof(dir)))
		return;
	canon(dir, sizeof(dir));
	if ((d = opendir(dir)) == NULL)
		return;
	/* Every mark of a tree at or below one of ours: we hold each of
	 * ours, so whoever made it is gone (a session in proj/sub killed,
	 * this one in proj). One above ours is left for a session there. */
	while ((de = readdir(d)) != NULL) {
		unsigned long long dev, ino;
		const char *tree = root;
		char *buf, *phs;
		bool ours = false, other = false, moved;

		if (de->d_name[0] == '.' || strchr(de->d_name, '.') != NULL ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path) ||
		    !mark_root(path, root, sizeof(root)))
			continue;
		buf = mark_read(path, root, &t, &dev, &ino, &phs);
		if (buf == NULL)
			continue;
		for (size_t i = 0; i < roots->n && !ours; i++)
			ours = under(root, roots->v[i]);
		/* Another directory at the tree's path (or none): not the
		 * killed session's tree. One of ours may be it, moved; only
		 * when its path no longer holds it (the same tree at two
		 * paths, a bind mount, may be another session's, running
		 * under a lock of its path). */
		moved = dev != 0 && ino != 0 && !same_tree(root, dev, ino, &t);
		if (ours && moved) {
			ours = false;
			other = access(root, F_OK) == 0;
		}
		for (size_t i = 0; i < roots->n && !ours && moved; i++)
			if (same_tree(roots->v[i], dev, ino, &t)) {
				ours = true;
				tree = roots->v[i];
				moved_line(tree, root);
			}
		/* Moved below one of ours (round 41): found by its device and
		 * inode, as deep as UNCHECKED_FIND_DEPTH. */
		for (size_t i = 0; i < roots->n && !ours && moved; i++) {
			int fd = open(roots->v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0 || snprintf(below, sizeof(below), "%s", roots->v[i]) >= (int)sizeof(below)) {
				if (fd >= 0)
					(void)close(fd);
				continue;
			}
			if (find_below(fd, below, dev, ino, &t, UNCHECKED_FIND_DEPTH, &budget)) {
				ours = true;
				tree = below;
				moved_line(tree, root);
			}
		}
		if (!ours) {
			if (other) {
				char *r = run_shown(root);

				fprintf(stderr,
					"passavant: a session in %s ended without its check after the run (passavant was "
					"killed), but %s is now another directory (the one it ran in was removed or moved "
					"since): not checked; if it was moved, look there for what the session may have "
					"planted (nested editor or agent settings, hooks of repositories it made)\n",
					r != NULL ? r : "(a directory)", r != NULL ? r : "its path");
				free(r);
				if (unlink(path) < 0 && errno != ENOENT)
					log_warn("cannot remove %s", path);
			}
			free(buf);
			continue;
		}
		drop_placeholders(phs, root, tree);
		free(buf);
		if (strv_add(&old, tree) < 0 || strv_add(&used, path) < 0) {
			log_warnx("out of memory, expected to check %s for an earlier session", tree);
			continue;
		}
		if (!any || t.tv_sec < first.tv_sec || (t.tv_sec == first.tv_sec && t.tv_nsec < first.tv_nsec))
			first = t;
		any = true;
	}
	(void)closedir(d);
	if (any) {
		char when[64], *shown = run_shown(old.v[0]);
		struct tm tm;

		if (localtime_r(&first.tv_sec, &tm) == NULL || strftime(when, sizeof(when), "%F %T", &tm) == 0)
			snprintf(when, sizeof(when), "%lld", (long long)first.tv_sec);

		fprintf(stderr,
			"passavant: a session started %s in %s%s ended without its check after the run "
			"(passavant was killed: kill -9, a timeout, the OOM killer); checking what changed there "
			"since then now, before the command (what you changed on the host since then is "
			"checked too; each file moved aside is named)\n",
			when, shown != NULL ? shown : "a writable tree", old.n > 1 ? " (and other writable trees)" : "");
		free(shown);
		/* Files left in place or unread: a failure the caller sees,
		 * as after this session's own check (its line says the
		 * status is not 0). */
		if (run_git_check(run, &old, &first) > 0)
			run->unchecked_left = true;
		/* Checked: those marks are done with (ours are written anew). */
		for (size_t i = 0; i < used.n; i++)
			if (unlink(used.v[i]) < 0 && errno != ENOENT)
				log_warn("cannot remove %s (the next session will check %s again)", used.v[i],
					 old.v[i]);
		/* This session's start comes after every change that check
		 * made (it compares ctimes, stamped by the coarse clock). */
		if (clock_gettime(CLOCK_REALTIME_COARSE, &t0) == 0)
			do {
				(void)nanosleep(&(struct timespec){0, 1000000}, NULL);
			} while (clock_gettime(CLOCK_REALTIME_COARSE, &t) == 0 && t.tv_sec == t0.tv_sec &&
				 t.tv_nsec == t0.tv_nsec);
	}
	strv_free(&old);
	strv_free(&used);
}

void run_unchecked_mark(struct run *run, const struct strv *roots, const struct timespec *since)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], text[PATH_MAX + 128], made[PATH_MAX];

	run->unchecked_marked = false;
	if (roots->n == 0 || !marks_dir(dir, sizeof(dir)))
		return;
	if (mkdirs(dir, run->unchecked_made) < 0) {
		log_warn("cannot make %s to note that this session's check is due (if passavant is killed, "
			 "the next session would not know)",
			 dir);
		return;
	}
	canon(dir, sizeof(dir));
	made[0] = '\0';
	for (size_t i = 0; i < roots->n; i++) {
		int w = mark_head(text, sizeof(text), since, roots->v[i]);

		mark_path(path, sizeof(path), dir, roots->v[i]);
		/* Another session may have just removed the directory it
		 * made (empty then): made again once. */
		if (w < 0 || (size_t)w >= sizeof(text) ||
		    (mark_write(path, text) < 0 &&
		     (errno != ENOENT || mkdirs(dir, made) < 0 || mark_write(path, text) < 0)))
			log_warn("cannot write %s, the note that this session's check of %s is due", path,
				 roots->v[i]);
		else
			run->unchecked_marked = true;
	}
}

void run_unchecked_placeholders(struct run *run, const struct strv *roots, const struct timespec *since)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	if (!run->unchecked_marked || run->sbx == NULL || !marks_dir(dir, sizeof(dir)))
		return;
	canon(dir, sizeof(dir));
	for (size_t i = 0; i < roots->n; i++) {
		const char *root = roots->v[i], *ph;
		size_t rl = strlen(root), len = 0, cap = 0;
		char *text = NULL;
		bool any = false, nomem = false;
		dev_t dev;
		ino_t ino;
		bool is_dir;

		for (size_t k = 0; (ph = sbx_placeholder(run->sbx, k, &dev, &ino, &is_dir)) != NULL; k++) {
			size_t need;

			if (strncmp(ph, root, rl) != 0 || (ph[rl] != '/' && strcmp(root, "/") != 0) ||
			    strchr(ph, '\n') != NULL)
				continue;
			if (!any) {
				need = (size_t)mark_head(NULL, 0, since, root);
				if (need + 1 > cap) {
					char *t = realloc(text, cap = need + 4096);

					if (t == NULL) {
						nomem = true;
						break;
					}
					text = t;
				}
				len = (size_t)mark_head(text, cap, since, root);
				any = true;
			}
			need = (size_t)snprintf(NULL, 0, "%c %llu %llu %s\n", is_dir ? 'D' : 'F',
						(unsigned long long)dev, (unsigned long long)ino, ph);
			if (len + need + 1 > cap) {
				char *t = realloc(text, cap = 2 * (len + need + 1));

				if (t == NULL) {
					nomem = true;
					break;
				}
				text = t;
			}
			len += (size_t)snprintf(text + len, cap - len, "%c %llu %llu %s\n", is_dir ? 'D' : 'F',
						(unsigned long long)dev, (unsigned long long)ino, ph);
		}
		mark_path(path, sizeof(path), dir, root);
		/* Without the list the mark stays as it was: the next session
		 * then takes the placeholders for the command's. */
		if (any && !nomem && mark_write(path, text) < 0)
			log_warn("cannot write the placeholders of %s into %s", root, path);
		free(text);
	}
}

void run_unchecked_end(struct run *run, const struct strv *roots)
{
	char dir[PATH_MAX], cdir[PATH_MAX], path[PATH_MAX + 32];

	if (!run->unchecked_marked || !marks_dir(dir, sizeof(dir)))
		return;
	run->unchecked_marked = false;
	memcpy(cdir, dir, sizeof(cdir));
	canon(cdir, sizeof(cdir));
	for (size_t i = 0; i < roots->n; i++) {
		mark_path(path, sizeof(path), cdir, roots->v[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			log_warn("cannot remove %s (the next session in %s will check it again)", path,
				 roots->v[i]);
	}
	/* The directories this session made for its mark go again (a
	 * home that had no ~/.local keeps none), deepest first, each only
	 * when empty. */
	for (size_t n = strlen(run->unchecked_made); n > 0 && strlen(dir) >= n;) {
		char *slash;

		if (rmdir_opened(dir) < 0) {
			if (errno != ENOTEMPTY && errno != EEXIST)
				log_warn("cannot remove %s, made for this session's mark", dir);
			break;
		}
		if (strlen(dir) == n)
			break;
		slash = strrchr(dir, '/');
		if (slash == NULL)
			break;
		*slash = '\0';
	}
	run->unchecked_made[0] = '\0';
}

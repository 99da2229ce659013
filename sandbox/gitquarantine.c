/*
 * gitquarantine.c - what the post-run check does with a finding: was the
 * entry changed during the session (its ctime at or after the session
 * start: the kernel sets it on every write, chmod, link and rename, and
 * no unprivileged process can set it back), move it aside to
 * NAME.passavant-quarantine (unless --keep-git-config), report it.
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
#include <sys/sysmacros.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/gitguard_int.h"
#include "sandbox/sandbox.h"


bool gg_ts_fresh(const struct gg *g, const struct statx_timestamp *t)
{
	return t->tv_sec > g->since.tv_sec ||
	       (t->tv_sec == g->since.tv_sec && (long)t->tv_nsec >= g->since.tv_nsec);
}

/* statx of dfd/name, not following a final symlink. */
int gg_statx(int dfd, const char *name, int flags, struct statx *sx)
{
	return statx(dfd, name, flags | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME, sx);
}

/* Was dfd/name (the link and, for a symlink, what it points to) created
 * or changed during the session? Missing: false. */
bool gg_changed(const struct gg *g, int dfd, const char *name)
{
	struct statx sx;

	if (gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return false;
	if (gg_ts_fresh(g, &sx.stx_ctime))
		return true;
	return S_ISLNK(sx.stx_mode) && gg_statx(dfd, name, 0, &sx) == 0 && gg_ts_fresh(g, &sx.stx_ctime);
}

bool gg_dir_fresh(const struct gg *g, int fd)
{
	struct statx sx;

	return gg_statx(fd, "", AT_EMPTY_PATH, &sx) == 0 && gg_ts_fresh(g, &sx.stx_ctime);
}

void gg_report_error(struct gg *g, const char *dir, const char *name, const char *what, int errnum)
{
	char path[PATH_MAX], msg[256];
	struct sbx_git_finding f = {0};

	if (name[0] == '\0')
		snprintf(path, sizeof(path), "%s", dir[0] ? dir : "/");
	else if (!gg_join(path, sizeof(path), dir, name))
		snprintf(path, sizeof(path), "%s/...", dir);
	snprintf(msg, sizeof(msg), "%s%s%s", what, errnum ? ": " : "", errnum ? strerror(errnum) : "");
	f.path = path;
	f.setting = NULL;
	f.error = msg;
	g->rc = -1;
	g->report(g->arg, &f);
}

void gg_report_unread(struct gg *g, const char *dir, const char *name, const char *what, int errnum)
{
	if (errnum == ENOENT || errnum == ENOTDIR)
		return;
	g->st->unread++;
	gg_report_error(g, dir, name, what, errnum);
}

int gg_dir_open_up(int pfd, const char *name, bool nofollow, mode_t *mode)
{
	int fl = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	int fd = openat(pfd, name, fl), saved;
	struct stat st;

	*mode = (mode_t)-1;
	if (fd >= 0 || errno != EACCES)
		return fd;
	saved = errno;
	/* Only one of ours: chmod on any other fails anyway, and a
	 * directory the session could not chmod it could not close to us
	 * either. */
	if (fstatat(pfd, name, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || fchmodat(pfd, name, (st.st_mode & 07777) | S_IRUSR | S_IXUSR, 0) < 0) {
		errno = saved;
		return -1;
	}
	/* set on failure too: the caller puts it back and says when not */
	*mode = st.st_mode & 07777;
	return openat(pfd, name, fl);
}

void gg_dir_mode_back(struct gg *g, int pfd, const char *name, const char *path, mode_t mode)
{
	if (mode != (mode_t)-1 && fchmodat(pfd, name, mode, 0) < 0)
		gg_report_error(g, path, "", "cannot put back the mode the check opened up (chmod it by hand) of", errno);
}

/* The directory that holds abs (an absolute path), opened into *pfd,
 * its path into parent, and the last name into *base. false (nothing
 * opened) when it cannot be. */
static bool open_parent(const char *abs, char *parent, size_t len, const char **base, int *pfd)
{
	const char *slash = strrchr(abs, '/');

	if (slash == NULL || slash[1] == '\0' ||
	    (size_t)snprintf(parent, len, "%.*s", (int)(slash - abs), slash == abs ? "/" : abs) >= len)
		return false;
	*base = slash + 1;
	*pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *pfd >= 0;
}

int gg_dir_open(struct gg *g, struct gg_dir *d)
{
	char parent[PATH_MAX];
	const char *base;
	int fd = gg_dir_open_up(d->pfd, d->name, d->nofollow, &d->mode), e, ppfd;

	if (fd >= 0)
		return fd;
	e = errno;
	gg_dir_mode_back(g, d->pfd, d->name, d->name[0] == '/' ? d->name : d->dir, d->mode);
	d->mode = (mode_t)-1;
	/* Nothing there to check (or a link where the caller opens no
	 * link, or a loop of links, which no one goes through either). */
	if (e == ENOENT || e == ENOTDIR || e == ELOOP)
		return -1;
	/* Not opened even opened up (one not ours; a cap on descriptors):
	 * git or Python may still go through it. Changed in the session:
	 * aside whole, which nothing the check could not read survives;
	 * else it is counted as unread, and run's status says so. */
	if (d->setting != NULL && g->record == NULL && (d->is_new || gg_changed(g, d->pfd, d->name))) {
		if (d->name[0] != '/') {
			gg_quarantine(g, d->pfd, d->dir, d->name, d->setting);
		} else if (open_parent(d->name, parent, sizeof(parent), &base, &ppfd)) {
			gg_quarantine(g, ppfd, parent, base, d->setting);
			(void)close(ppfd);
		} else {
			gg_report_unread(g, d->name, "", d->what != NULL ? d->what : "cannot open to check", e);
		}
	} else if (d->what != NULL) {
		gg_report_unread(g, d->dir, d->name[0] == '/' ? "" : d->name, d->what, e);
	}
	errno = e;
	return -1;
}

void gg_dir_close(struct gg *g, const struct gg_dir *d, int fd)
{
	char path[PATH_MAX];

	if (fd >= 0)
		(void)close(fd);
	if (d->mode == (mode_t)-1)
		return;
	if (d->name[0] == '/' || !gg_join(path, sizeof(path), d->dir, d->name))
		(void)snprintf(path, sizeof(path), "%s", d->name);
	gg_dir_mode_back(g, d->pfd, d->name, path, d->mode);
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
 * Mode 000 on dfd/name, never through a link (AT_SYMLINK_NOFOLLOW: glibc
 * refuses a link with EOPNOTSUPP and changes anything else through an
 * O_PATH descriptor, so no read permission is needed). Needs no room on
 * the filesystem. 0, or -1 with errno set.
 */
static int lock_out(int dfd, const char *name)
{
	return fchmodat(dfd, name, 0, AT_SYMLINK_NOFOLLOW);
}

bool gg_is_quarantine_name(const char *name)
{
	const size_t sl = strlen(SBX_GIT_QUARANTINE_SUFFIX);
	const char *p, *t;
	size_t tl, k;

	/* Every occurrence: "a.passavant-quarantine.passavant-quarantine"
	 * is a copy of a copy, its first occurrence in the middle. */
	for (p = strstr(name, SBX_GIT_QUARANTINE_SUFFIX); p != NULL; p = strstr(p + 1, SBX_GIT_QUARANTINE_SUFFIX)) {
		t = p + sl;
		if (*t == '\0') {
			if (p > name)
				return true;
			continue;
		}
		if (*t++ != '.')
			continue;
		tl = strlen(t);
		/* %016llx: exactly 16 lower-case hex digits, with or without
		 * the name before */
		for (k = 0; k < tl && ((t[k] >= '0' && t[k] <= '9') || (t[k] >= 'a' && t[k] <= 'f')); k++)
			;
		if (tl == 16 && k == 16)
			return true;
		/* %d for 2 ... 99: no sign, no leading zero, after a name */
		if (p > name && (tl == 1 ? t[0] >= '2' && t[0] <= '9'
					 : tl == 2 && t[0] >= '1' && t[0] <= '9' && t[1] >= '0' && t[1] <= '9'))
			return true;
	}
	return false;
}

/* Slot of dev:ino in g->moved (its own, or the free one it would take);
 * capmoved is a power of two, never full. */
static size_t moved_slot(const struct gg *g, uint64_t dev, uint64_t ino)
{
	size_t mask = g->capmoved - 1;
	size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ULL) ^ dev) & mask;

	while (g->moved[i].ino != 0 && (g->moved[i].ino != ino || g->moved[i].dev != dev))
		i = (i + 1) & mask;
	return i;
}

/* Notes dfd/to, just moved aside, as this walk's own copy. A note that
 * cannot be kept is reported (the run fails), and from then on every
 * name of a quarantine copy's shape is left alone: never moving the
 * walk's own copies over and over again. */
static void moved_note(struct gg *g, int dfd, const char *dir, const char *to)
{
	struct statx sx;
	size_t i;

	if (gg_statx(dfd, to, AT_SYMLINK_NOFOLLOW, &sx) < 0 || sx.stx_ino == 0) {
		gg_report_error(g, dir, to, "cannot note what was moved aside", errno);
		g->moved_lost = true;
		return;
	}
	if (2 * (g->nmoved + 1) > g->capmoved) {
		size_t cap = g->capmoved ? 2 * g->capmoved : 64;
		struct gg_moved *old = g->moved, *n = calloc(cap, sizeof(*n));
		size_t oldcap = g->capmoved;

		if (n == NULL) {
			if (!g->moved_lost)
				gg_report_error(g, dir, to, "cannot note what was moved aside", ENOMEM);
			g->moved_lost = true;
			return;
		}
		g->moved = n;
		g->capmoved = cap;
		for (i = 0; i < oldcap; i++)
			if (old[i].ino != 0)
				g->moved[moved_slot(g, old[i].dev, old[i].ino)] = old[i];
		free(old);
	}
	i = moved_slot(g, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino);
	if (g->moved[i].ino == 0) {
		g->moved[i].dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
		g->moved[i].ino = sx.stx_ino;
		g->nmoved++;
	}
}

/*
 * Why a name of a copy's shape is not enough: the command can plant
 * hooks/pre-commit.passavant-quarantine.1 or .claude/agents/x.md
 * .passavant-quarantine.2 itself. Most are read by no tool (git runs a
 * hook by its exact name, agents load *.md, *.js, *.json), but a
 * directory some tool reads whole (a .bashrc.d sourcing every file)
 * would run it. Fail closed: a copy-shaped entry made or changed in the
 * session is checked like any other unless this walk itself moved it
 * there (noted by identity when moved: renaming while a directory is
 * read may show the new name again, with a fresh ctime). One not changed
 * in the session is an earlier check's copy (that check saw it made, and
 * checked it unless this walk's copy) and stays, unless the caller counts
 * every entry as new whatever its ctime (a hooks directory renamed into
 * place, a new git directory, a row's directory changed on its way): an
 * old file renamed in with its directory keeps its old ctime.
 */
bool gg_quarantined(const struct gg *g, int dfd, const char *name, bool all_new)
{
	struct statx sx;

	if (!gg_is_quarantine_name(name))
		return false;
	if (g->moved_lost)
		return true;
	if (!all_new && !gg_changed(g, dfd, name))
		return true;
	if (g->capmoved == 0 || gg_statx(dfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return false;
	/* An identity is not a name: a hard link the command gave a copy's
	 * name to a file this walk moved would pass as that copy (review of
	 * round 20). A file with other links is checked again. */
	if (sx.stx_nlink > 1 && !S_ISDIR(sx.stx_mode))
		return false;
	return g->moved[moved_slot(g, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino)].ino != 0;
}

/*
 * Moves dfd/name (in the directory dir) aside to name.passavant-quarantine
 * (.2 ... .99 when taken; then a random suffix, so that names planted in
 * advance cannot keep the file in place), or only reports it under keep.
 * setting says what makes it run a program; why, when not NULL, what the
 * program is (a settings row's reason: the kind alone, "editor or agent
 * settings", misnamed a version file; review of round 36).
 */
void gg_quarantine_why(struct gg *g, int dfd, const char *dir, const char *name, const char *setting,
		       const char *row_why)
{
	char path[PATH_MAX], to[NAME_MAX + 1], moved[PATH_MAX], why[160];
	struct sbx_git_finding f = {0};
	unsigned long long rnd;
	int i, n, e;

	/* The walk before the session only notes: nothing is moved then
	 * (its clock is not the session's). */
	if (g->record != NULL)
		return;
	/* The move goes by dfd and name; the path is for the report. One
	 * past PATH_MAX (a directory too deep to check, round 20) is still
	 * moved, and reported by its name under the start of its path. */
	if (!gg_join(path, sizeof(path), dir, name))
		(void)snprintf(path, sizeof(path), "%.256s.../%s", dir, name);
	f.path = path;
	f.setting = setting;
	f.why = row_why;
	g->st->findings++;
	if (g->keep) {
		g->report(g->arg, &f);
		return;
	}
	for (i = 1; i < 116; i++) {
		if (i >= 100 && getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			break;
		n = i == 1   ? snprintf(to, sizeof(to), "%s%s", name, SBX_GIT_QUARANTINE_SUFFIX)
		    : i < 100 ? snprintf(to, sizeof(to), "%s%s.%d", name, SBX_GIT_QUARANTINE_SUFFIX, i)
		    : i < 108 ? snprintf(to, sizeof(to), "%s%s.%016llx", name, SBX_GIT_QUARANTINE_SUFFIX, rnd)
			      : snprintf(to, sizeof(to), "%s.%016llx", SBX_GIT_QUARANTINE_SUFFIX, rnd);
		/* A name too long to take the suffix (round 5 of the attack:
		 * it stayed in place) goes to a short random name; the report
		 * says what it was called. */
		if (n < 0 || (size_t)n >= sizeof(to)) {
			if (i < 108) {
				i = 107;
				continue;
			}
			errno = ENAMETOOLONG;
			break;
		}
		/* RENAME_NOREPLACE: never over an earlier quarantined copy. */
		if (rename_aside(dfd, name, to) == 0) {
			if (gg_join(moved, sizeof(moved), dir, to) ||
			    snprintf(moved, sizeof(moved), "%.256s.../%s", dir, to) > 0)
				f.moved_to = moved;
			g->report(g->arg, &f);
			moved_note(g, dfd, dir, to);
			return;
		}
		if (errno == ENAMETOOLONG && i < 108) {
			/* The filesystem's own name limit is shorter. */
			i = 107;
			continue;
		}
		if (errno != EEXIST)
			break;
	}
	/* Left in place (round 21 of the attack: a full disk, every
	 * directory's slack taken by hard links, so no rename had a slot).
	 * What still needs no room: its mode to 000, so that a host user
	 * other than root can no longer read or enter it; the count makes
	 * run's exit status say so. */
	e = errno;
	(void)snprintf(why, sizeof(why), "%s%s", strerror(e),
		       lock_out(dfd, name) == 0 ? "; made unreadable (mode 000) in place, not for root" : "");
	f.error = why;
	g->st->stuck++;
	g->rc = -1;
	g->report(g->arg, &f);
}

void gg_quarantine(struct gg *g, int dfd, const char *dir, const char *name, const char *setting)
{
	gg_quarantine_why(g, dfd, dir, name, setting, NULL);
}


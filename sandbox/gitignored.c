/*
 * gitignored.c - what the session wrote where git status does not look
 * (round 32 of the attack, family R): a .gitignore written in the
 * session hides the files its rules match, itself included ("*"), and a
 * project's virtual environment is ignored whole while the host runs it
 * (a .pth in site-packages runs at every start of its python, bin/
 * activate when sourced: VS Code sources it in every new terminal).
 *
 * Part of the post-run walk (gitguard.c calls these for a directory
 * holding a .gitignore, or what may make it a Python environment: a
 * pyvenv.cfg, conda-meta/, lib/, bin/; round 33 of the attack, c4:
 * recognised by its layout, links in it followed while they stay in the
 * tree, the walk's bound always said). What git would show is left to
 * git; what it hides is named in the report, as a line that tells the
 * user to look there before using it (the report's "cannot check" form:
 * runreport.c has no other form for a line that moves nothing). The
 * activation scripts of an environment older than the session move
 * aside: nothing rewrites them but making the environment again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "sandbox/gitguard_int.h"

/* Names one report line lists at most. */
#define GI_NAMES_SHOWN 5
/* Entries of an environment the check looks at, at most (a stat each; a
 * large environment holds 20,000 to 50,000 files, about 40 ms per
 * 10,000 here, docs/sandbox.md). Past it the line says the look
 * stopped, whatever it found before (round 33's c4b: a .pth that readdir
 * returned after the 50,000th entry gave no line at all). */
#define GI_VENV_ENTRIES_MAX 50000
/* Directory depth below lib/ (or bin/, etc/conda, Lib/) walked: 14 below
 * lib/python3.X/site-packages; deeper ones are said, not walked. */
#define GI_VENV_DEPTH 16

/* What a look found: a count and the first names, comma-separated. */
struct found {
	unsigned long n;
	char names[1024];
	unsigned long seen; /* entries looked at */
	bool cut;           /* stopped at GI_VENV_ENTRIES_MAX */
	bool deep;          /* a directory past GI_VENV_DEPTH not walked */
	bool names_cut;     /* a name left out of names[] for want of room */
	/* The environment's path from the root being walked ("" when it is
	 * the root): where a link inside it is resolved from. */
	const char *envrel;
	/* Directories walked (device, inode; open-addressed, ino 0 free):
	 * each once, whatever leads there (lib64 -> lib, a link to a
	 * directory walked already, a loop). */
	struct gi_dir {
		uint64_t dev, ino;
	} *dirs;
	size_t ndirs, capdirs;
};

/* A name that does not fit whole is left out and the list ends in
 * ", ...": the names are the command's choice (255 bytes each), and four
 * long ones cut the list silently, the fifth left out with nothing to
 * say so (review of round 45). A first name too long shows cut. */
static void found_add(struct found *f, const char *name)
{
	size_t len = strlen(f->names);
	int w;

	if (f->n++ >= GI_NAMES_SHOWN)
		return;
	w = snprintf(f->names + len, sizeof(f->names) - len, "%s%s", len ? ", " : "", name);
	if (w < 0 || (size_t)w >= sizeof(f->names) - len) {
		f->names_cut = true;
		if (len > 0)
			f->names[len] = '\0';
	}
}

/* One line of the report on path: what, and the names found. Nothing is
 * moved, nothing counted as a failure of the check. */
static void report_hidden(struct gg *g, const char *path, const char *what, const struct found *f)
{
	char msg[2048];
	struct sbx_git_finding fi = {0};

	if (g->record != NULL)
		return;
	snprintf(msg, sizeof(msg), "%s%s%s%s%s%s", what, f != NULL && f->n > 0 ? ": " : "",
		 f != NULL && f->n > 0 ? f->names : "", f != NULL && (f->n > GI_NAMES_SHOWN || f->names_cut) ? ", ..." : "",
		 f != NULL && f->cut ? " (the look stopped after " GG_STR(GI_VENV_ENTRIES_MAX)
				       " entries: what it did not reach is not named)"
				     : "",
		 f != NULL && f->deep ? " (directories deeper than " GG_STR(GI_VENV_DEPTH)
					" below lib/ were not looked into)"
				      : "");
	fi.path = path;
	fi.error = msg;
	g->report(g->arg, &fi);
}

void gg_check_gitignore(struct gg *g, int fd)
{
	char path[PATH_MAX];
	struct found f = {0};
	struct dirent *de;
	DIR *dp;
	int dfd;
	/* Round 34 (d10): a directory renamed into place keeps its
	 * .gitignore's old ctime (pytest's .pytest_cache, mypy's, ruff's
	 * caches and a venv ignore themselves with "*"): its directory made
	 * or renamed there in the session counts it as written
	 * (gg_dir_whole(): not one that only had an entry added beside the
	 * project's own). One the walk before the session did not see at
	 * this place is new whatever its ctimes (a directory above
	 * renamed). */
	bool written = gg_changed(g, fd, ".gitignore");
	bool whole = gg_dir_whole(g, fd, g->path) ||
		     (!written && g->before != NULL && !gg_py_old(g, NULL, ".gitignore"));

	if ((!whole && !written) || !gg_join(path, sizeof(path), g->path, ".gitignore"))
		return;
	/* The entries of its directory written in the session (all of them
	 * when it came with the directory): the likely ones its rules hide
	 * (one readdir, a statx each). */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (dp == NULL) {
		if (dfd >= 0)
			(void)close(dfd);
	} else {
		while ((de = readdir(dp)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    strcmp(de->d_name, ".gitignore") != 0 && strcmp(de->d_name, ".git") != 0 &&
			    (whole || gg_changed(g, fd, de->d_name)))
				found_add(&f, de->d_name);
		(void)closedir(dp);
	}
	report_hidden(g, path,
		      !written ? "new at this place in the session (its directory made or renamed there): git status "
			      "does not show what its rules ignore (itself included; `git status --ignored` lists "
			      "them); review it, and what came or was written beside it"
			    : "written in the session: git status does not show what its rules ignore (itself "
			      "included; `git status --ignored` lists them); review it, and what the session wrote "
			      "beside it",
		      &f);
}

/* Whether the directory open as fd was walked already in this look;
 * notes it when not. false also when it cannot be noted (ENOMEM: walked
 * again then, within the entries' bound). */
static bool dir_seen(struct found *f, int fd)
{
	struct statx sx;
	uint64_t dev, ino;
	size_t h;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_INO, &sx) < 0 || sx.stx_ino == 0)
		return false;
	dev = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
	ino = sx.stx_ino;
	if ((f->ndirs + 1) * 2 > f->capdirs) {
		size_t cap = f->capdirs != 0 ? f->capdirs * 2 : 256;
		struct gi_dir *d = calloc(cap, sizeof(*d));

		if (d == NULL)
			return false;
		for (size_t i = 0; i < f->capdirs; i++) {
			if (f->dirs[i].ino == 0)
				continue;
			h = (size_t)((f->dirs[i].dev * 0x9E3779B97F4A7C15ULL) ^ f->dirs[i].ino) & (cap - 1);
			while (d[h].ino != 0)
				h = (h + 1) & (cap - 1);
			d[h] = f->dirs[i];
		}
		free(f->dirs);
		f->dirs = d;
		f->capdirs = cap;
	}
	h = (size_t)((dev * 0x9E3779B97F4A7C15ULL) ^ ino) & (f->capdirs - 1);
	for (; f->dirs[h].ino != 0; h = (h + 1) & (f->capdirs - 1))
		if (f->dirs[h].dev == dev && f->dirs[h].ino == ino)
			return true;
	f->dirs[h].dev = dev;
	f->dirs[h].ino = ino;
	f->ndirs++;
	return false;
}

/*
 * Opens the directory pfd/name (rel: its path in the environment) for
 * the look. A directory: through no link, opened up when one of ours
 * was made unreadable (*mode: to put back, gg_dir_mode_back()). A link
 * (round 33's c4a: site-packages or lib/ made a link, the walk's
 * O_NOFOLLOW open failed and it said nothing, while Python follows it):
 * followed from the root being walked, as Python follows it, and only
 * while it stays beneath that root (openat2 RESOLVE_BENEATH); one that
 * leads out of the tree, or cannot be followed, is named in f instead:
 * fail closed. A directory that cannot be opened is reported as unread.
 * -1: nothing to walk.
 */
static int env_open(struct gg *g, struct found *f, int pfd, const char *name, const char *rel, bool link,
		    mode_t *mode)
{
	char p[PATH_MAX], note[PATH_MAX + 96];
	struct open_how how;
	int fd, e;

	*mode = (mode_t)-1;
	if (!link) {
		fd = gg_dir_open_up(pfd, name, true, mode);
		if (fd >= 0)
			return fd;
		e = errno;
		if (gg_join(p, sizeof(p), g->path, rel))
			gg_dir_mode_back(g, pfd, name, p, *mode);
		*mode = (mode_t)-1;
		if (e != ENOENT && e != ENOTDIR)
			gg_report_unread(g, g->path, rel,
					 "cannot look into this directory of a Python environment (what the session "
					 "wrote there is not named)",
					 e);
		return -1;
	}
	if ((size_t)snprintf(p, sizeof(p), "%s%s%s", f->envrel, f->envrel[0] ? "/" : "", rel) >= sizeof(p)) {
		snprintf(note, sizeof(note), "%s (a link not followed: its path is too long)", rel);
		found_add(f, note);
		return -1;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, g->rootfd, p, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	e = errno;
	/* gone, or no directory behind it after all: nothing Python reads
	 * as one */
	if (e == ENOENT || e == ENOTDIR)
		return -1;
	if (e == EXDEV)
		snprintf(note, sizeof(note), "%s (a link out of the writable tree, not looked into)", rel);
	else
		snprintf(note, sizeof(note), "%s (a link that cannot be followed: %s)", rel, strerror(e));
	found_add(f, note);
	return -1;
}

/* Whether a directory of lib/ is one of Python's: python3.X, python3
 * (Debian's dist-packages), pypy3.X. */
static bool py_lib_name(const char *name)
{
	return strncmp(name, "python", 6) == 0 || strncmp(name, "pypy", 4) == 0;
}

/* The order subdirectories are walked in: site-packages and
 * dist-packages first (their top holds the .pth files, run at every
 * start), then the others. */
static int sub_order(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	bool sx = strcmp(x + 1, "site-packages") == 0 || strcmp(x + 1, "dist-packages") == 0;
	bool sy = strcmp(y + 1, "site-packages") == 0 || strcmp(y + 1, "dist-packages") == 0;

	return (int)sy - (int)sx;
}

/*
 * Walks the directory open as fd (rel: its path in the environment):
 * its files changed in the session go to f by their path, then its
 * subdirectories are walked (site-packages first), links to directories
 * followed as env_open() says. only_py: of the subdirectories only
 * Python's (lib/'s). A file link whose target the session wrote is
 * named too. Bounded by GI_VENV_ENTRIES_MAX entries and GI_VENV_DEPTH,
 * both said when reached. whole: a directory above made or renamed
 * into place in the session; with fd itself so (gg_dir_whole(); round
 * 34's d10c: site-packages swapped for a copy staged in an earlier
 * session), every entry here and below counts as written, whatever its
 * own ctime.
 */
static void venv_walk(struct gg *g, int fd, const char *rel, unsigned depth, bool only_py, bool whole,
		      struct found *f)
{
	char **subs = NULL; /* first byte: 'l' a link, 'd' a directory; then the name */
	char sub0[PATH_MAX];
	size_t nsub = 0, capsub = 0;
	struct dirent *de;
	DIR *dp;
	int dfd = dup(fd);

	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (dp == NULL) {
		if (dfd >= 0)
			(void)close(dfd);
		gg_report_unread(g, g->path, rel,
				 "cannot look into this directory of a Python environment (what the session wrote "
				 "there is not named)",
				 errno);
		return;
	}
	if (!whole && gg_join(sub0, sizeof(sub0), g->path, rel))
		whole = gg_dir_whole(g, fd, rel[0] ? sub0 : g->path);
	while ((de = readdir(dp)) != NULL) {
		char sub[PATH_MAX];
		struct statx sx, tx;
		bool dir = false, link;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (f->seen++ >= GI_VENV_ENTRIES_MAX) {
			f->cut = true;
			break;
		}
		if (gg_statx(fd, de->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
			continue;
		link = S_ISLNK(sx.stx_mode);
		/* Compiled files are gg_py_drop_compiled()'s. */
		if (S_ISREG(sx.stx_mode) && strlen(de->d_name) > 4 &&
		    strcmp(de->d_name + strlen(de->d_name) - 4, ".pyc") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= (int)sizeof(sub))
			continue;
		if (link && gg_statx(fd, de->d_name, 0, &tx) == 0) {
			dir = S_ISDIR(tx.stx_mode);
			/* an old link to a file the session wrote: Python
			 * reads that file */
			if (!dir && !whole && !gg_ts_fresh(g, &sx.stx_ctime) && gg_ts_fresh(g, &tx.stx_ctime))
				found_add(f, sub);
		}
		if (!S_ISDIR(sx.stx_mode) && (whole || gg_ts_fresh(g, &sx.stx_ctime)))
			found_add(f, sub);
		if (!S_ISDIR(sx.stx_mode) && !dir)
			continue;
		if (only_py && !py_lib_name(de->d_name))
			continue;
		if (nsub == capsub) {
			size_t cap = capsub != 0 ? capsub * 2 : 16;
			char **n = realloc(subs, cap * sizeof(*n));

			if (n == NULL) {
				gg_report_error(g, g->path, rel, "cannot look into all of this directory of a "
						"Python environment", ENOMEM);
				break;
			}
			subs = n;
			capsub = cap;
		}
		if ((subs[nsub] = malloc(strlen(de->d_name) + 2)) == NULL) {
			gg_report_error(g, g->path, rel, "cannot look into all of this directory of a Python environment",
					ENOMEM);
			break;
		}
		subs[nsub][0] = link ? 'l' : 'd';
		strcpy(subs[nsub] + 1, de->d_name);
		nsub++;
	}
	(void)closedir(dp);
	if (nsub > 1)
		qsort(subs, nsub, sizeof(*subs), sub_order);
	for (size_t i = 0; i < nsub; i++) {
		char sub[PATH_MAX];
		mode_t mode;
		int cfd;

		if (f->cut)
			break;
		if (depth >= GI_VENV_DEPTH) {
			f->deep = true;
			break;
		}
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", subs[i] + 1) >= (int)sizeof(sub))
			continue;
		cfd = env_open(g, f, fd, subs[i] + 1, sub, subs[i][0] == 'l', &mode);
		if (cfd < 0)
			continue;
		if (!dir_seen(f, cfd))
			venv_walk(g, cfd, sub, depth + 1, false, whole, f);
		(void)close(cfd);
		if (mode != (mode_t)-1) {
			char p[PATH_MAX];

			if (gg_join(p, sizeof(p), g->path, sub))
				gg_dir_mode_back(g, fd, subs[i] + 1, p, mode);
		}
	}
	for (size_t i = 0; i < nsub; i++)
		free(subs[i]);
	free(subs);
}

/* Opens the directory pfd/name (rel: its path in the environment) for
 * the look, following a link as env_open() does; a link made in the
 * session is named. -1: nothing there. *mode: for env_mode_back(). */
static int env_open_at(struct gg *g, struct found *f, int pfd, const char *name, const char *rel, mode_t *mode)
{
	struct statx sx;

	*mode = (mode_t)-1;
	if (gg_statx(pfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return -1;
	if (S_ISLNK(sx.stx_mode) && gg_ts_fresh(g, &sx.stx_ctime))
		found_add(f, rel);
	return env_open(g, f, pfd, name, rel, S_ISLNK(sx.stx_mode), mode);
}

/* Puts back the mode of pfd/name (rel in the environment) that the look
 * opened up. */
static void env_mode_back(struct gg *g, int pfd, const char *name, const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	if (mode != (mode_t)-1 && gg_join(p, sizeof(p), g->path, rel))
		gg_dir_mode_back(g, pfd, name, p, mode);
}

/* Walks the directory path (a name, or two: "local/lib") of the
 * environment fd whole (only_py: lib/, Python's directories in it),
 * each directory once. whole: as venv_walk()'s (the environment's own
 * directory, or the first of two, changed in the session). */
static void env_walk_top(struct gg *g, struct found *f, int fd, const char *path, bool only_py, bool whole)
{
	const char *slash = strchr(path, '/');
	char first[NAME_MAX + 1], p[PATH_MAX];
	mode_t mode, fmode = (mode_t)-1;
	int pfd = fd, dfd;

	if (slash != NULL) {
		snprintf(first, sizeof(first), "%.*s", (int)(slash - path), path);
		if ((pfd = env_open_at(g, f, fd, first, first, &fmode)) < 0)
			return;
		if (!whole && gg_join(p, sizeof(p), g->path, first))
			whole = gg_dir_whole(g, pfd, p);
	}
	dfd = env_open_at(g, f, pfd, slash != NULL ? slash + 1 : path, path, &mode);
	if (dfd >= 0) {
		if (!dir_seen(f, dfd) && !f->cut)
			venv_walk(g, dfd, path, 0, only_py, whole, f);
		(void)close(dfd);
		env_mode_back(g, pfd, slash != NULL ? slash + 1 : path, path, mode);
	}
	if (pfd != fd) {
		(void)close(pfd);
		env_mode_back(g, fd, first, first, fmode);
	}
}

/* Whether the directory fd/dir holds one of Python's directories (a
 * py_lib_name()) holding site-packages. One getdents64 into the stack
 * (no DIR: this runs for every directory holding a lib/, every package
 * of a node_modules that has one). */
static bool lib_has_site(int fd, const char *dir)
{
	_Alignas(8) char buf[4096];
	bool yes = false;
	ssize_t n;
	int dfd = openat(fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return false;
	while (!yes && (n = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n && !yes;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			char p[NAME_MAX + 32];

			off += d->d_reclen;
			yes = py_lib_name(d->d_name) &&
			      snprintf(p, sizeof(p), "%s/site-packages", d->d_name) < (int)sizeof(p) &&
			      faccessat(dfd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		}
		/* less than a full buffer: the end (saves a read) */
		if (n < (ssize_t)sizeof(buf) - (ssize_t)sizeof(struct dirent64) - NAME_MAX)
			break;
	}
	(void)close(dfd);
	return yes;
}

/* Whether the directory fd, whose entries the walk saw as marks, is a
 * Python environment. */
static bool is_pyenv(int fd, unsigned marks)
{
	/* By its layout (round 33's c4c: a conda environment has no
	 * pyvenv.cfg): any one of these. Not dist-packages alone: Debian's
	 * layout of a system prefix (a conda environment's local/, walked
	 * as part of it). */
	return (marks & (GG_PY_CFG | GG_PY_CONDA)) != 0 ||
	       ((marks & GG_PY_BIN) != 0 && (faccessat(fd, "bin/python", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
					    faccessat(fd, "bin/python3", F_OK, AT_SYMLINK_NOFOLLOW) == 0)) ||
	       ((marks & GG_PY_WLIB) != 0 && faccessat(fd, "Lib/site-packages", F_OK, AT_SYMLINK_NOFOLLOW) == 0) ||
	       ((marks & GG_PY_LIB) != 0 && lib_has_site(fd, "lib")) ||
	       ((marks & GG_PY_LIB64) != 0 && lib_has_site(fd, "lib64"));
}

void gg_check_venv(struct gg *g, int fd, unsigned marks)
{
	static const char *const activate[] = {"activate", "activate.fish", "activate.csh", "activate.nu",
					       "Activate.ps1", "activate_this.py", "activate.bat"};
	static const char *const bins[] = {"bin", "Scripts"};
	struct found f = {0};
	struct statx sx;
	bool made, whole;

	if (g->record != NULL || !is_pyenv(fd, marks))
		return;
	f.envrel = g->path + g->rootlen;
	while (*f.envrel == '/')
		f.envrel++;
	/* Made (or made again) in the session: new whole; the user asked
	 * for it, and git ignores it whole: one line. Made: the directory
	 * was born in the session (a pyvenv.cfg or conda-meta/ rewritten in
	 * an older one is named below, the rest looked at); without birth
	 * times, its pyvenv.cfg or conda-meta/ changed. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BTIME, &sx) == 0 &&
	    (sx.stx_mask & STATX_BTIME) != 0)
		made = gg_ts_fresh(g, &sx.stx_btime);
	else
		made = gg_changed(g, fd, "pyvenv.cfg") || gg_changed(g, fd, "conda-meta");
	if (made) {
		report_hidden(g, g->path,
			      "a Python environment made in the session (git ignores it; its python runs what the "
			      "session put in it)",
			      NULL);
		return;
	}
	/* Older than the session: its activation scripts are rewritten by
	 * nothing but making it again. What a directory of it made or
	 * renamed there in the session holds counts as written
	 * (gg_dir_whole(), round 34's d10c: a directory renamed into place
	 * keeps its entries' ctimes). */
	whole = gg_dir_whole(g, fd, g->path);
	for (size_t b = 0; b < sizeof(bins) / sizeof(bins[0]); b++) {
		char bin[PATH_MAX];
		struct dirent *de;
		mode_t mode;
		int bfd = env_open_at(g, &f, fd, bins[b], bins[b], &mode), dfd;
		bool bwhole;
		DIR *bp;

		if (bfd < 0)
			continue;
		if (!gg_join(bin, sizeof(bin), g->path, bins[b]))
			bin[0] = '\0';
		if (bin[0] == '\0' || dir_seen(&f, bfd)) {
			(void)close(bfd);
			env_mode_back(g, fd, bins[b], bins[b], mode);
			continue;
		}
		bwhole = whole || gg_dir_whole(g, bfd, bin);
		for (size_t i = 0; i < sizeof(activate) / sizeof(activate[0]); i++) {
			char sub[NAME_MAX + 16];

			if (faccessat(bfd, activate[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (gg_changed(g, bfd, activate[i]))
				gg_quarantine(g, bfd, bin, activate[i],
					      "a virtual environment's activation script rewritten in the session (it "
					      "runs when sourced: an editor's terminal, `source .venv/bin/activate`; git "
					      "ignores it)");
			/* its directory changed (pip writes a program there):
			 * named, not moved */
			else if (bwhole && snprintf(sub, sizeof(sub), "%s/%s", bins[b], activate[i]) < (int)sizeof(sub))
				found_add(&f, sub);
		}
		/* Its other programs (pip, pytest, a console script)
		 * written in the session run as directly (the review of
		 * round 32): named with the site-packages files below;
		 * `pip install` writes them too, so they stay. */
		dfd = dup(bfd);
		bp = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (bp == NULL && dfd >= 0)
			(void)close(dfd);
		while (bp != NULL && (de = readdir(bp)) != NULL) {
			char sub[NAME_MAX + 16];
			bool act = false;

			for (size_t i = 0; i < sizeof(activate) / sizeof(activate[0]); i++)
				act = act || strcmp(de->d_name, activate[i]) == 0;
			if (act || de->d_name[0] == '.' || gg_is_quarantine_name(de->d_name) ||
			    gg_statx(bfd, de->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || S_ISDIR(sx.stx_mode) ||
			    !(bwhole || gg_ts_fresh(g, &sx.stx_ctime)))
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", bins[b], de->d_name) < (int)sizeof(sub))
				found_add(&f, sub);
		}
		if (bp != NULL)
			(void)closedir(bp);
		(void)close(bfd);
		env_mode_back(g, fd, bins[b], bins[b], mode);
	}
	/* Which python the environment starts (pyvenv.cfg's home) and what
	 * conda exports when activating it (conda-meta/state's env_vars),
	 * rewritten in an older environment. */
	if (gg_changed(g, fd, "pyvenv.cfg") ||
	    (whole && faccessat(fd, "pyvenv.cfg", F_OK, AT_SYMLINK_NOFOLLOW) == 0))
		found_add(&f, "pyvenv.cfg");
	if (gg_changed(g, fd, "conda-meta/state") ||
	    (whole && faccessat(fd, "conda-meta/state", F_OK, AT_SYMLINK_NOFOLLOW) == 0))
		found_add(&f, "conda-meta/state");
	/* What runs from it: its etc/ (conda's activation and deactivation
	 * scripts, etc/conda/activate.d/NAME.sh, sourced by `conda
	 * activate`; Jupyter's and IPython's configs, Python run at their
	 * start, etc/jupyter, etc/ipython; OpenSSL's openssl.cnf, which
	 * loads modules); then
	 * Python's directories of lib/ whole (site-packages first: a .pth
	 * at every start; a module when imported; a conda environment's
	 * own standard library, sitecustomize.py, usercustomize.py);
	 * lib64/ (a venv's is a link to lib/: walked once); Debian's
	 * local/lib/python3.X/dist-packages; Windows' Lib/; last Jupyter's
	 * share/jupyter (a kernel's kernel.json names the program run for
	 * it). */
	env_walk_top(g, &f, fd, "etc", false, whole);
	env_walk_top(g, &f, fd, "lib", true, whole);
	env_walk_top(g, &f, fd, "lib64", true, whole);
	env_walk_top(g, &f, fd, "local/lib", true, whole);
	env_walk_top(g, &f, fd, "Lib", false, whole);
	env_walk_top(g, &f, fd, "share/jupyter", false, whole);
	free(f.dirs);
	if (f.n > 0)
		report_hidden(g, g->path,
			      "a Python environment (a venv, a conda environment or a prefix of that layout; git "
			      "ignores it) with files the session wrote, that its python runs (a .pth at every "
			      "start, a module when imported, a program in bin/, an activation script); reinstall "
			      "what you did not ask for",
			      &f);
	else if (f.cut || f.deep)
		report_hidden(g, g->path,
			      "a Python environment (a venv, a conda environment or a prefix of that layout; git "
			      "ignores it) too large or deep to look at whole: the files the session wrote in it "
			      "may not all be named; reinstall it if the session may have written there",
			      &f);
}

/* ------------------------------------------------ Mercurial's .hgignore */

/* Entries of a .hgignore's tree looked at, at most, and directories deep
 * (one statx each: a bound on the cost, said in the line when reached). */
#define GI_HG_ENTRIES_MAX 20000
#define GI_HG_DEPTH 16

/* The files (and links) below dfd written in the session, as paths from
 * the .hgignore's directory (rel: "" at its top), into f. The repositories
 * inside (.hg, .git) are not walked: theirs are not the rules' files. */
static void hg_written(struct gg *g, int dfd, const char *rel, unsigned depth, struct found *f)
{
	struct dirent *de;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;

	if (dp == NULL) {
		if (fd >= 0)
			(void)close(fd);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		char sub[PATH_MAX];
		unsigned char t;
		struct stat st;
		int cfd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".hg") == 0 || strcmp(de->d_name, ".git") == 0 ||
		    (rel[0] == '\0' && strcmp(de->d_name, ".hgignore") == 0))
			continue;
		if (++f->seen > GI_HG_ENTRIES_MAX) {
			f->cut = true;
			break;
		}
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= (int)sizeof(sub))
			continue;
		t = de->d_type;
		if (t == DT_UNKNOWN)
			t = fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)
				    ? DT_DIR
				    : DT_REG;
		if (t == DT_DIR) {
			if (depth + 1 >= GI_HG_DEPTH) {
				f->deep = true;
				continue;
			}
			cfd = openat(dirfd(dp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				hg_written(g, cfd, sub, depth + 1, f);
				(void)close(cfd);
			}
			continue;
		}
		if (gg_changed(g, dirfd(dp), de->d_name))
			found_add(f, sub);
	}
	(void)closedir(dp);
}

void gg_check_hgignore(struct gg *g, int fd)
{
	char path[PATH_MAX], what[512];
	struct found f = {0};

	if (!gg_changed(g, fd, ".hgignore") || !gg_join(path, sizeof(path), g->path, ".hgignore"))
		return;
	/* Its rules reach the whole repository (a rule with a '/' too): the
	 * files the session wrote anywhere below are the likely ones it
	 * hides. */
	hg_written(g, fd, "", 0, &f);
	snprintf(what, sizeof(what),
		 "written in the session: hg status does not show what its rules ignore (itself included; `hg "
		 "status -i` lists them); review it, and what the session wrote below it%s%s",
		 f.cut ? " (the look stopped after " GG_STR(GI_HG_ENTRIES_MAX) " entries)" : "",
		 f.deep ? " (directories deeper than " GG_STR(GI_HG_DEPTH) " were not looked into)" : "");
	f.cut = f.deep = false;
	report_hidden(g, path, what, &f);
}

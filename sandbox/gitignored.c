/*
 * gitignored.c - what the session wrote where git status does not look
 * (round 32 of the attack, family R): a .gitignore written in the
 * session hides the files its rules match, itself included ("*"), and a
 * project's virtual environment is ignored whole while the host runs it
 * (a .pth in site-packages runs at every start of its python, bin/
 * activate when sourced: VS Code sources it in every new terminal).
 *
 * Part of the post-run walk (gitguard.c calls these for a directory
 * holding a .gitignore or a pyvenv.cfg). What git would show is left to
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
#include <unistd.h>

#include "sandbox/gitguard_int.h"

/* Names one report line lists at most. */
#define GI_NAMES_SHOWN 5
/* Entries of an environment's site-packages the check looks at, at most
 * (a stat each; a large environment holds 20,000 to 50,000 files, about
 * 40 ms per 10,000 here, docs/sandbox.md). Past it the line says the walk
 * stopped. */
#define GI_VENV_ENTRIES_MAX 50000
/* Directory depth below site-packages walked. */
#define GI_VENV_DEPTH 12

/* What a look found: a count and the first names, comma-separated. */
struct found {
	unsigned long n;
	char names[1024];
	unsigned long seen; /* entries looked at */
	bool cut;           /* stopped at GI_VENV_ENTRIES_MAX */
};

static void found_add(struct found *f, const char *name)
{
	size_t len = strlen(f->names);

	if (f->n++ < GI_NAMES_SHOWN)
		snprintf(f->names + len, sizeof(f->names) - len, "%s%s", len ? ", " : "", name);
}

/* One line of the report on path: what, and the names found. Nothing is
 * moved, nothing counted as a failure of the check. */
static void report_hidden(struct gg *g, const char *path, const char *what, const struct found *f)
{
	char msg[2048];
	struct sbx_git_finding fi = {0};

	if (g->record != NULL)
		return;
	snprintf(msg, sizeof(msg), "%s%s%s%s%s", what, f != NULL && f->n > 0 ? ": " : "",
		 f != NULL && f->n > 0 ? f->names : "", f != NULL && f->n > GI_NAMES_SHOWN ? ", ..." : "",
		 f != NULL && f->cut ? " (the look stopped after " GG_STR(GI_VENV_ENTRIES_MAX) " entries)" : "");
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

	if (!gg_changed(g, fd, ".gitignore") || !gg_join(path, sizeof(path), g->path, ".gitignore"))
		return;
	/* The entries of its directory written in the session: the likely
	 * ones its rules hide (one readdir, a statx each). */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (dp == NULL) {
		if (dfd >= 0)
			(void)close(dfd);
	} else {
		while ((de = readdir(dp)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    strcmp(de->d_name, ".gitignore") != 0 && strcmp(de->d_name, ".git") != 0 &&
			    gg_changed(g, fd, de->d_name))
				found_add(&f, de->d_name);
		(void)closedir(dp);
	}
	report_hidden(g, path,
		      "written in the session: git status does not show what its rules ignore (itself "
		      "included; `git status --ignored` lists them); review it, and what the session wrote "
		      "beside it",
		      &f);
}

/* Walks dir (open as fd, path) below an environment's site-packages:
 * files changed in the session go to f, by their path from rel. */
static void venv_walk(struct gg *g, int fd, const char *rel, unsigned depth, struct found *f)
{
	struct dirent *de;
	DIR *dp;
	int dfd = dup(fd);

	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (dp == NULL) {
		if (dfd >= 0)
			(void)close(dfd);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		char sub[PATH_MAX];
		struct statx sx;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (f->seen++ >= GI_VENV_ENTRIES_MAX) {
			f->cut = true;
			break;
		}
		if (gg_statx(fd, de->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
			continue;
		/* Compiled files are gg_py_drop_compiled()'s. */
		if (S_ISREG(sx.stx_mode) && strlen(de->d_name) > 4 &&
		    strcmp(de->d_name + strlen(de->d_name) - 4, ".pyc") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= (int)sizeof(sub))
			continue;
		if (!S_ISDIR(sx.stx_mode)) {
			if (gg_ts_fresh(g, &sx.stx_ctime))
				found_add(f, sub);
		} else if (depth < GI_VENV_DEPTH) {
			int cfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (cfd >= 0) {
				venv_walk(g, cfd, sub, depth + 1, f);
				(void)close(cfd);
			}
		}
		if (f->cut)
			break;
	}
	(void)closedir(dp);
}

void gg_check_venv(struct gg *g, int fd)
{
	static const char *const activate[] = {"activate", "activate.fish", "activate.csh", "activate.nu",
					       "Activate.ps1", "activate_this.py", "activate.bat"};
	char bin[PATH_MAX];
	struct found f = {0};
	struct dirent *de;
	DIR *dp;
	int lfd, bfd;

	if (g->record != NULL)
		return;
	/* Made (or made again) in the session: new whole; the user asked
	 * for it, and git ignores it whole: one line. */
	if (gg_changed(g, fd, "pyvenv.cfg")) {
		report_hidden(g, g->path,
			      "a Python virtual environment made in the session (git ignores it; its python runs "
			      "what the session put in it)",
			      NULL);
		return;
	}
	/* Older than the session: its activation scripts are rewritten by
	 * nothing but making it again. */
	bfd = openat(fd, "bin", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd >= 0) {
		if (gg_join(bin, sizeof(bin), g->path, "bin"))
			for (size_t i = 0; i < sizeof(activate) / sizeof(activate[0]); i++)
				if (faccessat(bfd, activate[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
				    gg_changed(g, bfd, activate[i]))
					gg_quarantine(g, bfd, bin, activate[i],
						      "a virtual environment's activation script rewritten in the "
						      "session (it runs when sourced: an editor's terminal, `source "
						      ".venv/bin/activate`; git ignores it)");
		/* Its other programs (pip, pytest, a console script)
		 * written in the session run as directly (the review of
		 * round 32): named with the site-packages files below;
		 * `pip install` writes them too, so they stay. */
		{
			int dfd = dup(bfd);
			DIR *bp = dfd >= 0 ? fdopendir(dfd) : NULL;

			if (bp == NULL && dfd >= 0)
				(void)close(dfd);
			while (bp != NULL && (de = readdir(bp)) != NULL) {
				struct statx sx;
				char sub[NAME_MAX + 8];
				bool act = false;

				for (size_t i = 0; i < sizeof(activate) / sizeof(activate[0]); i++)
					act = act || strcmp(de->d_name, activate[i]) == 0;
				if (act || de->d_name[0] == '.' || gg_is_quarantine_name(de->d_name) ||
				    gg_statx(bfd, de->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || S_ISDIR(sx.stx_mode) ||
				    !gg_ts_fresh(g, &sx.stx_ctime))
					continue;
				if (snprintf(sub, sizeof(sub), "bin/%s", de->d_name) < (int)sizeof(sub))
					found_add(&f, sub);
			}
			if (bp != NULL)
				(void)closedir(bp);
		}
		(void)close(bfd);
	}
	/* lib/pythonX.Y/site-packages: what the session changed there
	 * (a .pth runs at every start of the environment's python; a
	 * module edited in place runs when imported). */
	lfd = openat(fd, "lib", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return;
	dp = fdopendir(lfd);
	if (dp == NULL) {
		(void)close(lfd);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		char rel[NAME_MAX + 32];
		int pfd, sfd;

		if (strncmp(de->d_name, "python", 6) != 0)
			continue;
		pfd = openat(lfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			continue;
		sfd = openat(pfd, "site-packages", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		(void)close(pfd);
		if (sfd < 0)
			continue;
		snprintf(rel, sizeof(rel), "lib/%s/site-packages", de->d_name);
		venv_walk(g, sfd, rel, 0, &f);
		(void)close(sfd);
	}
	(void)closedir(dp);
	if (f.n > 0)
		report_hidden(g, g->path,
			      "a Python virtual environment (git ignores it) with files the session wrote, that its "
			      "python runs (a .pth at every start, a module when imported, a program in bin/); "
			      "reinstall what you did not ask for",
			      &f);
}

/*
 * githg.c - what in a Mercurial repository's .hg a shell prompt prints
 * raw (round 34 of the attack, d9; round 32's b13 for git's HEAD): the
 * working directory's branch (.hg/branch), the bookmarks and the active
 * one (.hg/bookmarks, .hg/bookmarks.current) and the topic extension's
 * topic (.hg/topic, .hg/topic-namespace). `hg branch`, `hg bookmarks`,
 * oh-my-zsh's mercurial plugin and starship's hg_branch module (which
 * reads .hg/branch itself) print them at every prompt in the
 * repository. Part of the post-run check (SPEC §3.3), called by the walk
 * (gitguard.c) for every directory; only a .hg is looked into.
 *
 * One of them written in the session holding a control character (C0
 * but the newline ending each line, DEL, C1 as UTF-8: an escape sequence
 * such as OSC 52, which sets the host's clipboard) moves aside
 * (gg_quarantine(), reported): hg then says "default" for the branch, no
 * active bookmark, no topic. Control characters are gitviews.c's
 * gg_has_control(), the test git's HEAD gets.
 *
 * The files a kept .hg/hgrc (or hgrc-not-shared) reads by %include are
 * part of it (round 34, d3's family: a team's "%include ../.hgrc-team"):
 * one in a writable tree written in the session moves aside, as git's
 * includes do (gitrules.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/gitguard_int.h"

/* A file of these larger than this, written in the session, moves aside
 * unread (hg writes a few bytes a name; thousands of bookmarks stay far
 * below). */
#define GH_MAX_BYTES (16u * 1024 * 1024)

/* Does a line of [s, s + n) hold a control character? */
static bool lines_have_control(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl != NULL ? (size_t)(nl - s) + 1 : n;

		if (gg_has_control(s + i, end - i))
			return true;
		i = end;
	}
	return false;
}

void gg_check_hg_prompt(struct gg *g, int fd)
{
	static const char *const files[] = {"branch", "bookmarks", "bookmarks.current", "topic", "topic-namespace"};
	const char *slash = strrchr(g->path, '/');

	if (slash == NULL || strcmp(slash, "/.hg") != 0)
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *text;

		if (!gg_changed(g, fd, files[i]))
			continue;
		text = gg_read_all(fd, files[i], GH_MAX_BYTES, &len);
		if (text == NULL) {
			if (errno == EFBIG)
				gg_quarantine(g, fd, g->path, files[i],
					      "a Mercurial prompt file written in the session, too large to check for "
					      "control characters");
			else if (errno != ENOENT)
				gg_report_unread(g, g->path, files[i], "cannot read to check it for control characters",
						 errno);
			continue;
		}
		if (lines_have_control(text, len))
			gg_quarantine(g, fd, g->path, files[i],
				      strcmp(files[i], "branch") == 0
					      ? "a Mercurial branch name holding control characters (hg branch and the "
						"shell prompt print it raw to the terminal); hg says \"default\" without it"
					      : "a Mercurial bookmark or topic file holding control characters (hg and "
						"the shell prompt print it raw to the terminal)");
		free(text);
	}
}

/* ------------------------------------------------- a kept hgrc's includes */

/* Included files followed inside included files, at most. */
#define GH_INCLUDE_DEPTH 8

/*
 * The %include lines of the config name in dfd (a directory at path
 * base): hg reads each target (relative to the including file's
 * directory, a missing one skipped) as part of the config. A target in a
 * writable tree written in the session moves aside (its hooks would run
 * at the host's next hg command, as the hgrc's own); one kept is followed
 * for its own includes.
 */
static void hg_includes(struct gg *g, int dfd, const char *base, const char *name, unsigned depth)
{
	size_t len, i = 0;
	char *text;

	if (depth >= GH_INCLUDE_DEPTH || (text = gg_read_all(dfd, name, 1024 * 1024, &len)) == NULL)
		return;
	while (i < len) {
		char *line = text + i, *nl = memchr(line, '\n', len - i), *v, *e;
		char target[PATH_MAX], dir[PATH_MAX];
		const char *slash;
		int tfd;

		i = nl != NULL ? (size_t)(nl - text) + 1 : len;
		if (nl != NULL)
			*nl = '\0';
		if (strncmp(line, "%include", 8) != 0 || (line[8] != ' ' && line[8] != '\t'))
			continue;
		v = line + 8 + strspn(line + 8, " \t");
		for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
			;
		*e = '\0';
		/* hg expands $VARS and ~ with its own environment: not known
		 * here but for HOME, which a writable tree is rarely under. */
		if (*v == '\0' || strchr(v, '$') != NULL || v[0] == '~' ||
		    !gg_resolve_pointer(base, v, target) || !gg_under_roots(g, target) ||
		    (slash = strrchr(target, '/')) == NULL)
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target), target);
		tfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tfd < 0)
			continue;
		if (gg_changed(g, tfd, slash + 1))
			gg_quarantine(g, tfd, dir[0] ? dir : "/", slash + 1,
				      "a file a Mercurial repository config includes (%include), written in the session "
				      "(its hooks run at the host's next hg command)");
		else
			hg_includes(g, tfd, dir[0] ? dir : "/", slash + 1, depth + 1);
		(void)close(tfd);
	}
	free(text);
}

void gg_check_hg_includes(struct gg *g, int fd)
{
	const char *slash = strrchr(g->path, '/');

	if (slash == NULL || strcmp(slash, "/.hg") != 0)
		return;
	/* One written in the session was moved aside already (a row). */
	hg_includes(g, fd, g->path, "hgrc", 0);
	hg_includes(g, fd, g->path, "hgrc-not-shared", 0);
}

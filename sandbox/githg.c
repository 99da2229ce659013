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
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

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

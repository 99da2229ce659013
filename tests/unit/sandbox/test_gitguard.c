/*
 * test_gitguard.c - sandbox/gitrules.c: the allowlist of harmless config
 * settings, and gitprotect.c: the paths the mount plan protects. Suite
 * "sandbox_gitguard". The wire tests of the post-run check are in
 * tests/integration/test_gitguard.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../sandbox/gitrules.c"
#include "tests/support/testlib.h"

static void test_allowlist(void)
{
	static const struct {
		const char *key;
		bool in_modules;
		bool harmless;
	} rows[] = {
		{"core.repositoryformatversion", false, true},
		{"core.filemode", false, true},
		{"core.bare", false, true},
		{"core.logallrefupdates", false, true},
		{"remote.origin.url", false, true},
		{"remote.a.b.url", false, true}, /* a subsection with dots */
		{"remote.origin.fetch", false, true},
		{"branch.main.merge", false, true},
		{"branch.main.remote", false, true},
		{"user.email", false, true},
		{"submodule.lib.url", false, true},
		{"advice.detachedhead", false, true},
		{"core.worktree", true, true}, /* git submodule writes it */
		/* what names a program, or points git elsewhere */
		{"core.fsmonitor", false, false},
		{"core.hookspath", false, false},
		{"core.sshcommand", false, false},
		{"core.pager", false, false},
		{"pager.log", false, false},
		{"core.editor", false, false},
		{"sequence.editor", false, false},
		{"core.askpass", false, false},
		{"credential.helper", false, false},
		{"credential.https://example.org.helper", false, false},
		{"filter.x.clean", false, false},
		{"filter.x.process", false, false},
		{"diff.x.command", false, false},
		{"diff.external", false, false},
		{"merge.x.driver", false, false},
		{"include.path", false, false},
		{"includeif.gitdir:/x/.path", false, false},
		{"alias.st", false, false},
		{"gpg.program", false, false},
		{"remote.origin.uploadpack", false, false},
		{"remote.origin.receivepack", false, false},
		{"remote.origin.vcs", false, false},
		{"submodule.lib.update", false, false},
		{"protocol.ext.allow", false, false},
		{"core.worktree", false, false},
		{"url.x.insteadof", false, false},
		{"init.templatedir", false, false},
		/* the right names in the wrong shape */
		{"remote.url", false, false},
		{"core.x.filemode", false, false},
		{"user.x.name", false, false},
		{"", false, false},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ROW(setting_harmless(rows[i].key, rows[i].in_modules) == rows[i].harmless,
		    "%s (in modules: %d): expected %s", rows[i].key, rows[i].in_modules,
		    rows[i].harmless ? "harmless" : "suspect");
}

static void test_parent_named(void)
{
	CU_ASSERT(parent_named("/r/.git/worktrees/wt", "worktrees"));
	CU_ASSERT(!parent_named("/r/.git/myworktrees/wt", "worktrees"));
	CU_ASSERT(!parent_named("/worktrees", "worktrees"));
	CU_ASSERT(!parent_named("/r/.git/modules/wt", "worktrees"));
}

/* sbx_path_fn collecting paths, relative to a prefix, one per line. */
struct collect {
	const char *prefix;
	char buf[8192];
};

static int collect(void *arg, const char *path)
{
	struct collect *c = arg;
	size_t pl = strlen(c->prefix), used = strlen(c->buf);

	if (strncmp(path, c->prefix, pl) == 0)
		path += pl;
	snprintf(c->buf + used, sizeof(c->buf) - used, "%s\n", path);
	return 0;
}

static void test_protect_paths(void)
{
	char *dir = test_mkdtemp(), p[4096];
	struct collect c;

	CU_ASSERT_FATAL(dir != NULL);
	memset(&c, 0, sizeof(c));
	c.prefix = dir;
	/* No repository: the .git that cannot be created. */
	CU_ASSERT(sbx_git_protect(dir, collect, &c) == 0);
	CU_ASSERT_STRING_EQUAL(c.buf, "/.git/config\n");
	/* A repository with a submodule git directory. */
	snprintf(p, sizeof(p), "%s/.git", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/.git/modules", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/.git/modules/lib", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	c.buf[0] = '\0';
	CU_ASSERT(sbx_git_protect(dir, collect, &c) == 0);
	CU_ASSERT_STRING_EQUAL(c.buf, "/.git/config\n/.git/config.worktree\n/.git/hooks\n/.git/info\n"
				      "/.git/modules/lib/config\n/.git/modules/lib/config.worktree\n"
				      "/.git/modules/lib/hooks\n/.git/modules/lib/info\n/.git/worktrees\n");
	/* A .git file: itself, then what it names. */
	snprintf(p, sizeof(p), "%s/wt", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/wt/.git", dir);
	CU_ASSERT_FATAL(test_write_file(p, "gitdir: ../.git/modules/lib\n", 28) == 0);
	snprintf(p, sizeof(p), "%s/wt", dir);
	c.buf[0] = '\0';
	CU_ASSERT(sbx_git_protect(p, collect, &c) == 0);
	CU_ASSERT_STRING_EQUAL(c.buf, "/wt/.git\n/.git/modules/lib/config\n/.git/modules/lib/config.worktree\n"
				      "/.git/modules/lib/hooks\n/.git/modules/lib/info\n"
				      "/.git/modules/lib/modules\n/.git/modules/lib/worktrees\n");
	test_rmtree(dir);
	free(dir);
}

TEST_REGISTRAR(sandbox_gitguard_register)
{
	CU_pSuite s = test_suite("sandbox_gitguard", NULL, NULL);

	test_add(s, "allowlist: harmless settings, and what names a program", test_allowlist);
	test_add(s, "commondir shape: parent named worktrees", test_parent_named);
	test_add(s, "mount plan: the control paths of a repository", test_protect_paths);
}

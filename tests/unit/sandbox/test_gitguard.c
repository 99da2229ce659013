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

/* gitquarantine.c: the names the check gives its copies, exactly; the
 * suffix anywhere else is an ordinary name. */
static void test_quarantine_name(void)
{
	static const struct {
		const char *name;
		bool copy;
	} rows[] = {
		{"config.passavant-quarantine", true},
		{"config.passavant-quarantine.2", true},
		{"config.passavant-quarantine.99", true},
		{"config.passavant-quarantine.0123456789abcdef", true},
		{".passavant-quarantine.0123456789abcdef", true},
		{"a.passavant-quarantine.passavant-quarantine", true},
		{".passavant-quarantine", false},
		{"x.passavant-quarantine.js", false},
		{"x.passavant-quarantine.kiro.hook", false},
		{"pre-commit.passavant-quarantine-x", false},
		{"config.passavant-quarantine.1", false}, /* .2 is the first */
		{"config.passavant-quarantine.0", false},
		{"config.passavant-quarantine.02", false},
		{"config.passavant-quarantine.100", false},
		{"config.passavant-quarantine.", false},
		{"config.passavant-quarantine.0123456789ABCDEF", false},
		{"config.passavant-quarantine.0123456789abcde", false},
		{".passavant-quarantine.5", false},
		{"config", false},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool got = gg_is_quarantine_name(rows[i].name);

		if (got != rows[i].copy)
			fprintf(stderr, "\n  %s: %d\n", rows[i].name, got);
		CU_ASSERT(got == rows[i].copy);
	}
}

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
		{"core.worktree", true, false}, /* a submodule's only where it points in (below) */
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
		ROW(setting_harmless(rows[i].key, rows[i].in_modules ? "/nonexistent/.git/modules/lib" : "/r/.git",
				     "../../../lib", 12) == rows[i].harmless,
		    "%s (in modules: %d): expected %s", rows[i].key, rows[i].in_modules,
		    rows[i].harmless ? "harmless" : "suspect");
}

/*
 * core.worktree: harmless only in SUPER/.git/modules/NAME, pointing at an
 * existing directory inside SUPER that is not SUPER/.git, links followed
 * (round 9 of the attack: a repository planted at proj/modules/lib kept
 * core.worktree = $HOME, and a checkout on the host wrote there).
 */
static void test_submodule_worktree(void)
{
	char root[] = "/tmp/pv-ggwt.XXXXXX", gd[PATH_MAX], p[PATH_MAX], home[PATH_MAX];
	static const struct {
		const char *gitdir; /* relative to root */
		const char *val;
		bool harmless;
	} rows[] = {
		{"super/.git/modules/lib", "../../../lib", true},
		{"super/.git/modules/a/modules/b", "../../../../../a/b", true}, /* nested */
		{"super/.git/modules/lib", "../../../missing", false},
		{"super/.git/modules/lib", "../../..", false},          /* the superproject itself */
		{"super/.git/modules/lib", "../..", false},             /* its .git */
		{"super/.git/modules/lib", "../../../../home", false},  /* out of it */
		{"super/.git/modules/lib", "../../../lnk", false},      /* a link out of it */
		{"super/modules/lib/.git", "../../../lib", false},      /* a directory named modules */
		{"super/x/modules/lib", "../../../lib", false},
		{"super/.git/modules/lib", "../../../n/.git", false},       /* a nested repository's .git */
		{"super/.git/modules/lib", "../../../n/.git/hooks", false}, /* inside it */
		{"super/.git/modules/lib", "../../../n/.gitx", true},       /* only the name .git */
		{"super/.git/modules/lib", "../../../gd/hooks", false},     /* a separate git dir */
		{"super/.git/modules/lib", "../../../v/b.git/hooks", false}, /* a bare repository */
	};

	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	static const char *const dirs[] = {"super", "super/.git", "super/.git/modules", "super/.git/modules/lib",
					   "super/.git/modules/a", "super/.git/modules/a/modules",
					   "super/.git/modules/a/modules/b", "super/lib", "super/a", "super/a/b", "home",
					   "super/modules", "super/modules/lib", "super/modules/lib/.git", "super/x",
					   "super/x/modules", "super/x/modules/lib", "super/n", "super/n/.git",
					   "super/n/.git/hooks", "super/n/.gitx", "super/gd", "super/gd/objects",
					   "super/gd/hooks", "super/v", "super/v/b.git", "super/v/b.git/objects",
					   "super/v/b.git/refs", "super/v/b.git/hooks"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	}
	/* gd: git init --separate-git-dir's (HEAD, objects); v/b.git: a
	 * bare repository (HEAD, objects, refs). */
	snprintf(p, sizeof(p), "%s/super/gd/HEAD", root);
	CU_ASSERT_FATAL(test_write_file(p, "ref: refs/heads/main\n", 21) == 0);
	snprintf(p, sizeof(p), "%s/super/v/b.git/HEAD", root);
	CU_ASSERT_FATAL(test_write_file(p, "ref: refs/heads/main\n", 21) == 0);
	snprintf(p, sizeof(p), "%s/super/lnk", root);
	snprintf(home, sizeof(home), "%s/home", root);
	CU_ASSERT_FATAL(symlink(home, p) == 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(gd, sizeof(gd), "%s/%s", root, rows[i].gitdir);
		ROW(setting_harmless("core.worktree", gd, rows[i].val, strlen(rows[i].val)) == rows[i].harmless,
		    "core.worktree = %s in %s: expected %s", rows[i].val, rows[i].gitdir,
		    rows[i].harmless ? "harmless" : "suspect");
	}
	/* An absolute value that points in is a submodule's too. */
	snprintf(gd, sizeof(gd), "%s/super/.git/modules/lib", root);
	snprintf(p, sizeof(p), "%s/super/lib", root);
	CU_ASSERT(setting_harmless("core.worktree", gd, p, strlen(p)));
	CU_ASSERT(!setting_harmless("core.worktree", gd, home, strlen(home)));
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	CU_ASSERT(system(p) == 0);
}

/* The filter before a git run on a kept config: a key or a section can
 * name an include or a hooks path; a word in a value cannot (round 14 of
 * the attack filled the walk's budget with `name = include` configs). */
static void test_file_mentions(void)
{
	static const char *const words[] = {"hookspath", "include", NULL};
	static const struct {
		const char *text;
		bool mentions;
	} rows[] = {
		{"[user]\n\tname = include\n\temail = hookspath@x\n", false},
		{"[include]\n\tpath = x.cfg\n", true},
		{"[includeIf \"gitdir:/w/\"]\n  PATH=y\n", true},
		{"[core]\n\thooksPath = .githooks\n", true},
		{"[core] hookspath = .githooks\n", true},
		{"[core]\n\tHOOKSPATH\n", true},
		{"[core]\n\tbare = false\n# include.path = x\n", false},
		{"", false},
		/* git reads on past a NUL in a value, and skips a byte order mark */
		{"\xEF\xBB\xBF[include]path=x.cfg\n", true},
	};
	char dir[] = "/tmp/pv-ggfm.XXXXXX", p[PATH_MAX];

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/config", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CU_ASSERT_FATAL(test_write_file(p, rows[i].text, strlen(rows[i].text)) == 0);
		ROW(file_mentions(AT_FDCWD, p, false, words) == rows[i].mentions, "config %zu ('%s'): expected %s", i,
		    rows[i].text, rows[i].mentions ? "a git run" : "none");
	}
	(void)unlink(p);
	(void)rmdir(dir);
}

/* Config paths as git expands them: "~/" from HOME, "~user/" from the
 * password database (root's home, which every system has). */
static void test_expand_home(void)
{
	char out[PATH_MAX];
	const char *home = getenv("HOME");

	CU_ASSERT(expand_home("~root/x.cfg", out, sizeof(out)) && strcmp(out, "/root/x.cfg") == 0);
	CU_ASSERT(!expand_home("~no-such-user-here/x", out, sizeof(out)));
	CU_ASSERT(expand_home("rel/x", out, sizeof(out)) && strcmp(out, "rel/x") == 0);
	CU_ASSERT(expand_home("~root", out, sizeof(out)) && strcmp(out, "/root") == 0);
	if (home != NULL) {
		char want[PATH_MAX];

		snprintf(want, sizeof(want), "%s/y", home);
		CU_ASSERT(expand_home("~/y", out, sizeof(out)) && strcmp(out, want) == 0);
	}
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
	CU_ASSERT_STRING_EQUAL(c.buf, "/.git/config\n/.git/config.worktree\n/.git/hooks\n/.git/info\n/.git/sl\n"
				      "/.git/modules/lib/config\n/.git/modules/lib/config.worktree\n"
				      "/.git/modules/lib/hooks\n/.git/modules/lib/info\n/.git/modules/lib/sl\n"
				      "/.git/worktrees\n");
	/* Sapling's sl/ there (round 36 of the attack, f4): its config
	 * and sharedpath, not the directory. */
	snprintf(p, sizeof(p), "%s/.git/sl", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	c.buf[0] = '\0';
	CU_ASSERT(sbx_git_protect(dir, collect, &c) == 0);
	{
		static const char want[] = "/.git/config\n/.git/config.worktree\n/.git/hooks\n/.git/info\n"
					   "/.git/sl/config\n/.git/sl/sharedpath\n/.git/modules/lib/config\n";

		CU_ASSERT(strncmp(c.buf, want, strlen(want)) == 0);
	}
	CU_ASSERT_FATAL(rmdir(p) == 0);
	/* A .git file: itself, then what it names. */
	snprintf(p, sizeof(p), "%s/wt", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/wt/.git", dir);
	CU_ASSERT_FATAL(test_write_file(p, "gitdir: ../.git/modules/lib\n", 28) == 0);
	snprintf(p, sizeof(p), "%s/wt", dir);
	c.buf[0] = '\0';
	CU_ASSERT(sbx_git_protect(p, collect, &c) == 0);
	CU_ASSERT_STRING_EQUAL(c.buf, "/wt/.git\n/.git/modules/lib/config\n/.git/modules/lib/config.worktree\n"
				      "/.git/modules/lib/hooks\n/.git/modules/lib/info\n/.git/modules/lib/sl\n"
				      "/.git/modules/lib/modules\n/.git/modules/lib/worktrees\n");
	test_rmtree(dir);
	free(dir);
}

/* The environment of test_global_settings(): HOME and a system config
 * of the test's (GIT_CONFIG_SYSTEM), nothing else. */
struct fake_env {
	char home[2048], sys[2048];
};

static const char *fake_env(void *arg, const char *name)
{
	struct fake_env *e = arg;

	if (strcmp(name, "HOME") == 0)
		return e->home;
	if (strcmp(name, "GIT_CONFIG_SYSTEM") == 0)
		return e->sys;
	return NULL;
}

/* Lines of the file at path (0 when it does not exist). */
static unsigned count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned n = 0;
	int ch;

	if (f == NULL)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/*
 * sbx_git_protect_global(): git is run on a global or system config only
 * when its bytes can name a setting the protection acts on; whatever the
 * case the settings are written in, their paths are protected (git itself
 * parses them); a config without such a word costs no run of git and
 * protects the same (the default templates only). A git that logs each
 * run stands first on PATH.
 */
static void test_global_settings(void)
{
	static const struct {
		const char *global, *sys;
		const char *want; /* the paths added after the default templates */
		unsigned runs;    /* runs of git */
	} rows[] = {
		{"[user]\n\tname = x\n[alias]\n\tst = status\n", "[credential]\n\thelper = store\n", "", 0},
		{"[INCLUDE]\n\tPath = inc.cfg\n", "", "/home/inc.cfg\n", 1},
		{"[Core]\n\tHooksPath = /abs/hooks\n", "", "/abs/hooks\n", 1},
		{"[init]\n\ttemplateDIR = ~/tpl\n", "", "/home/tpl\n", 1},
		{"[includeIf \"gitdir:/x/\"]\n\tpath = /y/inc\n", "", "/y/inc\n", 1},
		/* both configs name one: git runs on both, side by side */
		{"[core]\n\thookspath = ~/h\n", "[init]\n\ttemplatedir = /t\n", "/t\n/home/h\n", 2},
		/* the word in a comment: git runs, and lists nothing */
		{"# hooksPath once\n[user]\n\tname = x\n", "", "", 1},
	};
	char *dir = test_mkdtemp(), p[8192], log[2048], bin[2048], script[8192], real[2048];
	const char *old_path = getenv("PATH");
	char *saved = old_path != NULL ? strdup(old_path) : NULL;
	struct fake_env e;
	FILE *f;

	CU_ASSERT_FATAL(dir != NULL);
	/* The real git, or skip. */
	f = popen("command -v git", "r");
	CU_ASSERT_FATAL(f != NULL);
	real[0] = '\0';
	if (fgets(real, sizeof(real), f) != NULL)
		real[strcspn(real, "\n")] = '\0';
	pclose(f);
	if (real[0] != '/') {
		TEST_SKIP("no git on PATH");
		test_rmtree(dir);
		free(dir);
		free(saved);
		return;
	}
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	CU_ASSERT_FATAL(mkdir(bin, 0755) == 0);
	snprintf(log, sizeof(log), "%s/runs", dir);
	snprintf(script, sizeof(script), "#!/bin/sh\necho run >> '%s'\nexec '%s' \"$@\"\n", log, real);
	snprintf(p, sizeof(p), "%s/git", bin);
	CU_ASSERT_FATAL(test_write_file(p, script, strlen(script)) == 0);
	CU_ASSERT_FATAL(chmod(p, 0755) == 0);
	CU_ASSERT_FATAL(setenv("PATH", bin, 1) == 0);
	snprintf(e.home, sizeof(e.home), "%s/home", dir);
	CU_ASSERT_FATAL(mkdir(e.home, 0755) == 0);
	snprintf(e.sys, sizeof(e.sys), "%s/sys.cfg", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct collect c;
		char want[1024];

		memset(&c, 0, sizeof(c));
		c.prefix = dir;
		(void)unlink(log);
		snprintf(p, sizeof(p), "%s/.gitconfig", e.home);
		CU_ASSERT_FATAL(test_write_file(p, rows[i].global, strlen(rows[i].global)) == 0);
		CU_ASSERT_FATAL(test_write_file(e.sys, rows[i].sys, strlen(rows[i].sys)) == 0);
		CU_ASSERT(sbx_git_protect_global(fake_env, &e, collect, &c) == 0);
		snprintf(want, sizeof(want), "/usr/share/git-core/templates\n%s", rows[i].want);
		CU_ASSERT_STRING_EQUAL(c.buf, want);
		CU_ASSERT_EQUAL(count_lines(log), rows[i].runs);
		if (strcmp(c.buf, want) != 0 || count_lines(log) != rows[i].runs)
			fprintf(stderr, "row %zu: got %s (%u runs)\n", i, c.buf, count_lines(log));
	}
	if (saved != NULL)
		CU_ASSERT(setenv("PATH", saved, 1) == 0);
	free(saved);
	test_rmtree(dir);
	free(dir);
}

TEST_REGISTRAR(sandbox_gitguard_register)
{
	CU_pSuite s = test_suite("sandbox_gitguard", NULL, NULL);

	test_add(s, "allowlist: harmless settings, and what names a program", test_allowlist);
	test_add(s, "quarantine copies: only the exact names the check gives them", test_quarantine_name);
	test_add(s, "commondir shape: parent named worktrees", test_parent_named);
	test_add(s, "config paths: ~/ and ~user/ expanded as git does", test_expand_home);
	test_add(s, "kept config: git runs only where a key or section can name an include or hooks path",
		 test_file_mentions);
	test_add(s, "core.worktree: a submodule's own, pointing into its superproject", test_submodule_worktree);
	test_add(s, "mount plan: the control paths of a repository", test_protect_paths);
	test_add(s, "global config: git run only where a setting can be named", test_global_settings);
}

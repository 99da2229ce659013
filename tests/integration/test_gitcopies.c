/*
 * test_gitcopies.c - copies of hidden files in git's object stores, end
 * to end (SPEC §3.3; round 32 of the attack, b10): the real `passavant
 * run` binary, real repositories made by the host's git, and a script
 * that reads what git keeps.
 *
 *  - a masked file the repository tracks (index versions 2 and 4, a
 *    split index whose entries lie in the shared index), a denyRead file
 *    it tracks, one in a linked worktree, one in a SHA-256 repository:
 *    the start is refused, naming the file and the repository, the
 *    secret printed nowhere;
 *  - a masked file no longer tracked (git rm --cached) whose content is
 *    in a pack after git gc (SHA-1 and SHA-256) or in the store a --shared
 *    clone's alternates name, and a masked or denyRead
 *    file outside every repository whose content the working directory's
 *    repository holds: refused; a file of the mandatory table (~/.npmrc)
 *    a dotfiles repository in the home tracks: refused;
 *  - a denyRead directory (round 34, d8) whose files the repository
 *    tracks, whose files' content is in a pack, or under a sparse index's
 *    directory entry, and one of more than 1,024 files: refused; a
 *    directory row of the mandatory table (~/.aws, d8b) a repository at
 *    the home tracks, or whose file's content its store holds, and one
 *    in a bare dotfiles repository (~/.dotfiles used with --work-tree=~,
 *    yadm's): refused; a bare mirror in the home starts;
 *  - the copies editors leave beside a masked or denyRead file (d2b:
 *    .env~, #.env#, .env.swp, ...): unreadable in the sandbox;
 *  - an index or a pack index that does not parse: refused, said so;
 *  - an untracked (ignored) masked file in a repository, a masked file
 *    with no repository above it, a repository whose .git the policy
 *    denies, and a file of the mandatory table (~/.yarnrc.yml) byte for
 *    byte like one the project commits, a denied directory never
 *    committed: the command starts.
 *
 * Suite "gitcopies". Without user namespaces every test is skipped with
 * the reason printed, unless PASSAVANT_SANDBOX_MUST_WORK=1. The tree
 * lives under /var/tmp: the sandbox's /tmp is private.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define RUN_TIMEOUT_MS 60000

static bool skip;   /* no user namespaces */
static bool ready;  /* fixtures up */
static char *root;  /* /var/tmp/pv-gcp.XXXXXX */
static unsigned nrun;
static char secret[48]; /* the hidden files' value: sk-proj- and 32 random characters */
static const char *run_home = "home"; /* HOME of run_gc(), under root */
static const char *run_script;        /* run_gc()'s script, NULL: its own */

/* root/rel into buf (PATH_MAX bytes); "" if it does not fit. */
static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

/* A git setup script in root (test_git_sh()). */
#define sh(...) test_git_sh(root, true, __VA_ARGS__)

static int suite_init(void)
{
	char buf[PATH_MAX];
	int gate;

	if (ready || skip)
		return 0;
	gate = test_sandbox_gate("gitcopies");
	if (gate <= 0) {
		skip = gate == 0;
		return gate;
	}
	if (access("/usr/bin/git", X_OK) < 0) {
		fprintf(stderr, "gitcopies: SKIP: no /usr/bin/git\n");
		skip = true;
		return 0;
	}
	root = strdup("/var/tmp/pv-gcp.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	memcpy(secret, "sk-proj-", 8);
	if (test_random_alnum(secret + 8, 32) < 0)
		return -1;
	secret[40] = '\0';
	if (mkdir(at(buf, "home"), 0755) < 0 || mkdir(at(buf, "githome"), 0755) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	test_root_done(&root, &ready);
	return 0;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* Writes root/rel holding "OPENAI_API_KEY=<secret>\n" (0600). */
static int secret_file(const char *rel)
{
	char buf[PATH_MAX], text[128];

	snprintf(text, sizeof(text), "OPENAI_API_KEY=%s\n", secret);
	if (test_write_file(at(buf, rel), text, strlen(text)) < 0)
		return -1;
	return chmod(buf, 0600);
}

/*
 * One `passavant run` in root/cwd (HOME=root/home) under a policy that
 * masks root/mask (NULL: none) and denies reading root/deny (NULL:
 * none), and the extra denyRead root/deny2 (NULL: none); the script
 * (written to root/run-N.sh) prints "ran", then what git shows of the
 * repository's objects. The exit status.
 */
static int run_gc(const char *cwd, const char *mask, const char *deny, const char *deny2, char **out, char **err)
{
	char home[PATH_MAX], pol[PATH_MAX], wd[PATH_MAX], m[PATH_MAX], d[PATH_MAX], d2[PATH_MAX];
	char text[4 * PATH_MAX + 512], name[64], sc[PATH_MAX];
	static const char script[] = "echo ran; cat .env 2>/dev/null; git log --all -p 2>/dev/null | cat; "
				     "git cat-file --batch-all-objects --batch-check 2>/dev/null | cat; echo done\n";
	struct test_sbx_run r = {at(wd, cwd), at(home, run_home), NULL, pol, sc, NULL, NULL};
	int n = 0;

	snprintf(name, sizeof(name), "run-%u.sh", nrun);
	if (test_write_file(at(sc, name), run_script != NULL ? run_script : script,
			    run_script != NULL ? strlen(run_script) : sizeof(script) - 1) < 0)
		return -1;
	snprintf(name, sizeof(name), "pol-%u.yaml", nrun++);
	at(pol, name);
	if (mask != NULL)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "credentials:\n  files:\n    - {path: \"%s\", mode: mask, injectHosts: [\"127.0.0.1\"]}\n"
			      "network:\n  allowedDomains: [\"127.0.0.1\"]\n",
			      at(m, mask));
	if (deny != NULL || deny2 != NULL)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "filesystem:\n  denyRead: [\"%s\"%s%s%s]\n",
			      deny != NULL ? at(d, deny) : at(d, deny2), deny != NULL && deny2 != NULL ? ", \"" : "",
			      deny != NULL && deny2 != NULL ? at(d2, deny2) : "",
			      deny != NULL && deny2 != NULL ? "\"" : "");
	if (n == 0)
		n = snprintf(text, sizeof(text), "network:\n  allowedDomains: [\"127.0.0.1\"]\n");
	if (n < 0 || (size_t)n >= sizeof(text) || test_write_file(pol, text, (size_t)n) < 0)
		return -1;
	return test_sbx_run(&r, out, err, RUN_TIMEOUT_MS);
}

/* A refused start: status 125, nothing ran, err naming each of the
 * words, and the secret in neither stream. */
static void refused(const char *what, int st, const char *out, const char *err, const char *w1, const char *w2)
{
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, w1) && test_has(err, w2) &&
		    !test_has(out, secret + 8) && !test_has(err, secret + 8),
	    "%s: status %d, stdout %s, stderr %s", what, st, test_nz(out), test_nz(err));
}

/* A start: status 0, the script ran to its end, the secret not read. */
static void started(const char *what, int st, const char *out, const char *err)
{
	ROW(st == 0 && test_has(out, "ran") && test_has(out, "done") && !test_has(out, secret + 8),
	    "%s: status %d, stdout %s, stderr %s", what, st, test_nz(out), test_nz(err));
}

/* A masked .env the repository tracks: index version 2, then 4, then a
 * split index (its entries in the shared index); a denyRead file it
 * tracks. */
static void test_tracked(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at((char[PATH_MAX]){0}, "r1"), 0755) == 0 && secret_file("r1/.env") == 0 &&
			secret_file("r1/secrets.yml") == 0);
	CU_ASSERT_FATAL(sh("cd r1 && git init -q . && echo app > app.py && git add -A && git commit -qm init") == 0);
	st = run_gc("r1", "r1/.env", NULL, NULL, &out, &err);
	refused("a tracked masked .env (index v2)", st, out, err, "/r1/.env", "tracks it as .env");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r1 && git update-index --index-version 4 && mkdir -p d/e && echo x > d/e/f && "
			   "echo y > d/e/g && git add -A && git commit -qm more") == 0);
	st = run_gc("r1", "r1/.env", NULL, NULL, &out, &err);
	refused("a tracked masked .env (index v4)", st, out, err, "/r1/.env", "tracks it as .env");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r1 && git update-index --split-index && ls .git/sharedindex.* >/dev/null && "
			   "echo z > d/e/h && git add d/e/h && git commit -qm split") == 0);
	st = run_gc("r1", "r1/.env", NULL, NULL, &out, &err);
	refused("a tracked masked .env (split index)", st, out, err, "/r1/.env", "tracks it as .env");
	free(out);
	free(err);
	out = err = NULL;

	st = run_gc("r1", NULL, "r1/secrets.yml", NULL, &out, &err);
	refused("a tracked denyRead file", st, out, err, "/r1/secrets.yml", "tracks it as secrets.yml");
	free(out);
	free(err);
	out = err = NULL;

	/* The policy denies the repository's .git: nothing of it is read. */
	st = run_gc("r1", "r1/.env", NULL, "r1/.git", &out, &err);
	started("a tracked masked .env, the repository's .git denied", st, out, err);
	free(out);
	free(err);
}

/* Untracked, but the content is an object: committed, then git rm
 * --cached and ignored, then gc'd into a pack (no loose object left);
 * a file outside every repository whose content the working directory's
 * repository holds. */
static void test_in_pack(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r2"), 0755) == 0 && secret_file("r2/.env") == 0);
	CU_ASSERT_FATAL(sh("cd r2 && git init -q . && echo app > app.py && git add -A && git commit -qm init && "
			   "git rm -q --cached .env && echo .env > .gitignore && git add .gitignore && "
			   "git commit -qm untrack && git gc -q && test -z \"$(ls -d .git/objects/?? 2>/dev/null)\" && "
			   "ls .git/objects/pack/*.idx >/dev/null") == 0);
	st = run_gc("r2", "r2/.env", NULL, NULL, &out, &err);
	refused("an untracked masked .env whose content is in a pack", st, out, err, "/r2/.env", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	/* A masked file in no repository; the working directory's holds a
	 * copy (loose, as committed). */
	CU_ASSERT_FATAL(mkdir(at(buf, "plain"), 0755) == 0 && secret_file("plain/token") == 0 &&
			mkdir(at(buf, "r3"), 0755) == 0 && secret_file("r3/backup.txt") == 0);
	CU_ASSERT_FATAL(sh("cd r3 && git init -q . && git add -A && git commit -qm init") == 0);
	st = run_gc("r3", "plain/token", NULL, NULL, &out, &err);
	refused("a masked file whose content the working directory's repository holds", st, out, err,
		"/plain/token", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	/* A clone made with --shared holds the object through its
	 * alternates only (objects/info/alternates names r2's store). */
	CU_ASSERT_FATAL(sh("git clone -q --shared r2 r2s && test -s r2s/.git/objects/info/alternates && "
			   "test -z \"$(ls -d r2s/.git/objects/?? 2>/dev/null)\"") == 0);
	CU_ASSERT_FATAL(secret_file("r2s/.env") == 0);
	st = run_gc("r2s", "r2s/.env", NULL, NULL, &out, &err);
	refused("a masked .env whose content is in the store an alternates file names", st, out, err, "/r2s/.env",
		"is an object in");
	free(out);
	free(err);
	out = err = NULL;

	/* The same for a file the policy's denyRead names. */
	st = run_gc("r3", NULL, "plain/token", NULL, &out, &err);
	refused("a denyRead file whose content the working directory's repository holds", st, out, err,
		"/plain/token", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	/* A file of the mandatory table (~/.npmrc) that a dotfiles
	 * repository in the home tracks: refused, run from a project
	 * outside it. */
	CU_ASSERT_FATAL(mkdir(at(buf, "home9"), 0755) == 0 && secret_file("home9/.npmrc") == 0 &&
			mkdir(at(buf, "proj9"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd home9 && git init -q . && git add .npmrc && git commit -qm dotfiles") == 0);
	run_home = "home9";
	st = run_gc("proj9", NULL, NULL, NULL, &out, &err);
	run_home = "home";
	refused("~/.npmrc tracked by a dotfiles repository in the home", st, out, err, "/home9/.npmrc",
		"tracks it as .npmrc");
	free(out);
	free(err);
}

/* What starts: an ignored, never committed masked .env in a repository;
 * a masked file with no repository above it. */
static void test_starts(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r4"), 0755) == 0 && secret_file("r4/.env") == 0);
	CU_ASSERT_FATAL(sh("cd r4 && git init -q . && echo .env > .gitignore && echo app > app.py && git add -A && "
			   "git commit -qm init && git gc -q && echo more >> app.py && git commit -qam more") == 0);
	st = run_gc("r4", "r4/.env", NULL, NULL, &out, &err);
	started("an ignored masked .env never committed", st, out, err);
	ROW(test_has(out, "+app"), "git log in the sandbox did not run: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;

	/* A file of the mandatory table (~/.yarnrc.yml) byte for byte like
	 * one the project commits, no secret in either: not looked for in
	 * the project's repository. */
	CU_ASSERT_FATAL(mkdir(at(buf, "home10"), 0755) == 0 &&
			test_write_file(at(buf, "home10/.yarnrc.yml"), "nodeLinker: node-modules\n", 25) == 0 &&
			mkdir(at(buf, "r10"), 0755) == 0 &&
			test_write_file(at(buf, "r10/.yarnrc.yml"), "nodeLinker: node-modules\n", 25) == 0);
	CU_ASSERT_FATAL(sh("cd r10 && git init -q . && git add -A && git commit -qm init") == 0);
	run_home = "home10";
	st = run_gc("r10", NULL, NULL, NULL, &out, &err);
	run_home = "home";
	started("~/.yarnrc.yml like the project's committed .yarnrc.yml", st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(mkdir(at(buf, "norepo"), 0755) == 0 && secret_file("norepo/.env") == 0);
	st = run_gc("norepo", "norepo/.env", "norepo/.env2", NULL, &out, &err);
	started("a masked .env with no repository", st, out, err);
	free(out);
	free(err);
}

/* SHA-256 repositories: tracked, and in a pack only. */
static void test_sha256(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r5"), 0755) == 0 && secret_file("r5/.env") == 0 &&
			mkdir(at(buf, "r6"), 0755) == 0 && secret_file("r6/.env") == 0);
	CU_ASSERT_FATAL(sh("cd r5 && git init -q --object-format=sha256 . && git add -A && git commit -qm init") == 0);
	st = run_gc("r5", "r5/.env", NULL, NULL, &out, &err);
	refused("a tracked masked .env, SHA-256 repository", st, out, err, "/r5/.env", "tracks it as .env");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r6 && git init -q --object-format=sha256 . && echo a > a && git add -A && "
			   "git commit -qm init && git rm -q --cached .env && echo .env > .gitignore && git add -A && "
			   "git commit -qm untrack && git gc -q && test -z \"$(ls -d .git/objects/?? 2>/dev/null)\"") == 0);
	st = run_gc("r6", "r6/.env", NULL, NULL, &out, &err);
	refused("an untracked masked .env in a SHA-256 pack", st, out, err, "/r6/.env", "is an object in");
	free(out);
	free(err);
}

/* A linked worktree: its own index (in .git/worktrees/NAME), the common
 * directory's objects. */
static void test_worktree(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r7"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd r7 && git init -q . && echo a > a && git add -A && git commit -qm init && "
			   "git worktree add -q -b side ../wt7") == 0);
	CU_ASSERT_FATAL(secret_file("wt7/.env") == 0);
	CU_ASSERT_FATAL(sh("cd wt7 && git add .env && git commit -qm secret && test -f .git") == 0);
	st = run_gc("wt7", "wt7/.env", NULL, NULL, &out, &err);
	refused("a masked .env a linked worktree tracks", st, out, err, "/wt7/.env", "tracks it as .env");
	free(out);
	free(err);
	out = err = NULL;

	/* Untracked there since, the blob in the common directory's objects. */
	CU_ASSERT_FATAL(sh("cd wt7 && git rm -q --cached .env && git commit -qm untrack") == 0);
	st = run_gc("wt7", "wt7/.env", NULL, NULL, &out, &err);
	refused("an untracked masked .env of a linked worktree, in the common objects", st, out, err, "/wt7/.env",
		"is an object in");
	free(out);
	free(err);
}

/* Fail closed: an index, a pack index that does not parse. */
static void test_garbled(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r8"), 0755) == 0 && secret_file("r8/.env") == 0);
	CU_ASSERT_FATAL(sh("cd r8 && git init -q . && echo .env > .gitignore && git add -A && git commit -qm init && "
			   "printf 'DIRC\\0\\0\\0\\2\\0\\0\\0\\5garbage' > .git/index") == 0);
	st = run_gc("r8", "r8/.env", NULL, NULL, &out, &err);
	refused("an index that does not parse", st, out, err, "/r8/.git", "does not parse");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r8 && rm .git/index && git reset -q && git gc -q && "
			   "f=$(ls .git/objects/pack/*.idx) && chmod u+w $f && head -c 1100 $f > $f.t && mv $f.t $f") == 0);
	st = run_gc("r8", "r8/.env", NULL, NULL, &out, &err);
	refused("a pack index cut short", st, out, err, ".idx", "holds a copy");
	free(out);
	free(err);
}

/*
 * The review of round 33: copies under another object name. A denyRead
 * file committed with CRLF line ends under core.autocrlf (Git for
 * Windows, a checkout under WSL), then untracked: git stores it with LF,
 * so its bytes' blob name is in no store and `git log -p` printed it; the
 * same file's bytes kept by Git LFS in .git/lfs/objects/ab/cd/SHA256
 * (the LFS pointer is all git stores): `cat` read it. Both refused.
 */
static void test_other_names(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r20"), 0755) == 0 && mkdir(at(buf, "r21"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd r20 && git init -q . && git config core.autocrlf true && "
			   "printf 'OPENAI_API_KEY=%s\\r\\n' > secrets.env && git add secrets.env 2>/dev/null && "
			   "git commit -qm s && git rm -q --cached secrets.env && echo secrets.env > .gitignore && "
			   "git add .gitignore 2>/dev/null && git commit -qm rm && "
			   "test \"$(git hash-object --no-filters secrets.env)\" != \"$(git rev-parse HEAD~1:secrets.env)\"",
			   secret) == 0);
	st = run_gc("r20", NULL, "r20/secrets.env", NULL, &out, &err);
	refused("a denyRead file committed with its CRLFs made LF (core.autocrlf)", st, out, err,
		"/r20/secrets.env", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r21 && git init -q . && printf 'OPENAI_API_KEY=%s\\n' > secrets.env && "
			   "o=$(sha256sum secrets.env | cut -c1-64) && d=.git/lfs/objects/$(echo $o | cut -c1-2)/"
			   "$(echo $o | cut -c3-4) && mkdir -p $d && cp secrets.env $d/$o && "
			   "echo secrets.env > .gitignore && git add .gitignore && git commit -qm lfs",
			   secret) == 0);
	st = run_gc("r21", NULL, "r21/secrets.env", NULL, &out, &err);
	refused("a denyRead file whose bytes are a Git LFS object", st, out, err, "/r21/secrets.env",
		"is a Git LFS object in");
	free(out);
	free(err);
}

/*
 * The review of round 33 (R6a): a pack git has no index for is not
 * looked up by git, but the session can index it (git index-pack) and
 * read it. A denyRead file's content, untracked, kept only in such a
 * pack: an interrupted fetch's tmp_pack_*, a .pack without .idx, a .pack
 * beside another pack's .idx; and in a loose object left under git's
 * temporary name (tmp_obj_*). Each is refused (the pack indexed into a
 * temporary directory and looked up); a pack cut short that git cannot
 * index refuses the start with what to do; once removed, the command
 * starts.
 */
static void test_unindexed(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r22"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd r22 && git init -q . && printf 'OPENAI_API_KEY=%s\\n' > secrets.env && "
			   "git add secrets.env && git commit -qm s && git rm -q --cached secrets.env && "
			   "echo secrets.env > .gitignore && git add .gitignore && git commit -qm rm && "
			   "b=$(git rev-parse HEAD~1:secrets.env) && echo $b > ../r22.blob && "
			   "q=$(echo $b | git pack-objects -q ../r22q) && "
			   "cp .git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-) ../r22.loose && "
			   "rm .git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-) && "
			   "mv ../r22q-$q.pack .git/objects/pack/tmp_pack_Ab12Cd && "
			   "git rev-parse HEAD | git pack-objects -q ../r22o >/dev/null && "
			   "test -z \"$(find .git/objects -type f -name '*.idx')\"",
			   secret) == 0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	refused("a denyRead file's content in a tmp_pack_* (no index)", st, out, err, "/r22/secrets.env",
		"is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r22/.git/objects/pack && mv tmp_pack_Ab12Cd pack-q.pack") == 0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	refused("a denyRead file's content in a .pack without .idx", st, out, err, "/r22/secrets.env",
		"is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r22/.git/objects/pack && cp ../../../../r22o-*.idx pack-q.idx") == 0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	refused("a denyRead file's content in a .pack beside another pack's .idx", st, out, err, "/r22/secrets.env",
		"is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r22/.git/objects/pack && rm pack-q.idx && head -c 40 pack-q.pack > t && mv t pack-q.pack") ==
			0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	refused("a pack without index cut short (git cannot index it)", st, out, err, "/pack-q.pack",
		"a pack git has no index for");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r22 && rm .git/objects/pack/pack-q.pack && b=$(cat ../r22.blob) && "
			   "cp ../r22.loose .git/objects/$(echo $b | cut -c1-2)/tmp_obj_Zq81Yw") == 0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	refused("a denyRead file's content in a loose object under git's temporary name", st, out, err,
		"/r22/secrets.env", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd r22 && rm .git/objects/*/tmp_obj_Zq81Yw") == 0);
	st = run_gc("r22", NULL, "r22/secrets.env", NULL, &out, &err);
	started("the copies removed", st, out, err);
	free(out);
	free(err);
}

/*
 * Round 34 of the attack, d8: a denyRead DIRECTORY was skipped; its files
 * tracked (git show HEAD:secrets/prod.env), or committed and untracked
 * since (in a pack), or under a sparse index's directory entry, were read
 * in clear. Refused; a denied directory that was never committed starts;
 * one too large to look up fails closed.
 */
static void test_denied_dir(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "r30"), 0755) == 0 && mkdir(at(buf, "r30/secrets"), 0700) == 0 &&
			secret_file("r30/secrets/prod.env") == 0 && secret_file("r30/secrets/deploy_key") == 0);
	CU_ASSERT_FATAL(sh("cd r30 && git init -q . && echo app > app.py && git add -A && git commit -qm init") == 0);
	st = run_gc("r30", NULL, "r30/secrets", NULL, &out, &err);
	refused("a denyRead directory whose files the repository tracks", st, out, err, "directory",
		"/r30/secrets: the git repository");
	ROW(test_has(err, "secrets/"), "the refusal names no tracked path: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;

	/* Untracked since, its files in a pack after gc. */
	CU_ASSERT_FATAL(sh("cd r30 && git rm -rq --cached secrets && echo secrets/ > .gitignore && "
			   "git add .gitignore && git commit -qm untrack && git gc -q && "
			   "test -z \"$(git ls-files secrets)\" && test -z \"$(ls -d .git/objects/?? 2>/dev/null)\"") == 0);
	st = run_gc("r30", NULL, "r30/secrets", NULL, &out, &err);
	refused("a denyRead directory whose files' content is in a pack", st, out, err,
		"a read deny of the directory", "is an object in");
	free(out);
	free(err);
	out = err = NULL;

	/* A sparse index: "conf/" one directory entry, the secrets under it
	 * in the tree only; the directory made again by hand. */
	CU_ASSERT_FATAL(mkdir(at(buf, "r31"), 0755) == 0 && mkdir(at(buf, "r31/conf"), 0755) == 0 &&
			mkdir(at(buf, "r31/conf/keys"), 0700) == 0 && secret_file("r31/conf/keys/prod.env") == 0 &&
			mkdir(at(buf, "r31/src"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd r31 && git init -q . && echo app > src/app.py && git add -A && git commit -qm init && "
			   "git sparse-checkout set --cone --sparse-index src && test ! -e conf && "
			   "git ls-files --sparse | grep -qx conf/ && mkdir -p conf/keys && "
			   "printf 'OPENAI_API_KEY=%s\\nX=1\\n' > conf/keys/prod.env", secret) == 0);
	st = run_gc("r31", NULL, "r31/conf/keys", NULL, &out, &err);
	refused("a denyRead directory under a sparse index's directory entry", st, out, err,
		"/r31/conf/keys: the git repository", "tracks conf/ in it");
	free(out);
	free(err);
	out = err = NULL;

	/* The denied directory is a linked worktree's top (its git
	 * directory elsewhere): every entry is under it. */
	CU_ASSERT_FATAL(sh("cd r30 && git worktree add -q ../wt30 && test -f ../wt30/.git && "
			   "mkdir -p ../wt30/x && cp secrets/prod.env ../wt30/x/ && cd ../wt30 && git add -f x && "
			   "git commit -qm x") == 0);
	CU_ASSERT_FATAL(mkdir(at(buf, "proj30"), 0755) == 0);
	st = run_gc("proj30", NULL, "wt30", NULL, &out, &err);
	refused("a denyRead directory that is a linked worktree's top", st, out, err, "/wt30: the git repository",
		"git rm -r --cached .");
	free(out);
	free(err);
	out = err = NULL;

	/* Never committed, ignored: starts, and the objects git shows are
	 * not the secrets. */
	CU_ASSERT_FATAL(mkdir(at(buf, "r32"), 0755) == 0 && mkdir(at(buf, "r32/secrets"), 0700) == 0 &&
			secret_file("r32/secrets/prod.env") == 0);
	CU_ASSERT_FATAL(sh("cd r32 && git init -q . && echo secrets/ > .gitignore && echo app > app.py && "
			   "git add -A && git commit -qm init") == 0);
	st = run_gc("r32", NULL, "r32/secrets", NULL, &out, &err);
	started("a denyRead directory never committed", st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* Past the bound (1,024 files): refused, saying what to do. */
	CU_ASSERT_FATAL(sh("cd r32 && mkdir -p secrets/many && i=0; while [ $i -lt 1100 ]; do "
			   "echo $i > secrets/many/f$i; i=$((i+1)); done") == 0);
	st = run_gc("r32", NULL, "r32/secrets", NULL, &out, &err);
	refused("a denyRead directory of 1,100 files in a repository", st, out, err, "more than 1024 files",
		"deny its secret files themselves");
	free(out);
	free(err);
}

/*
 * Round 34, d8b: a plain dotfiles repository at the home (~/.git) tracking
 * ~/.aws/credentials: ~/.aws, a directory row of the mandatory table, was
 * skipped, and `git -C ~ show HEAD:.aws/credentials` printed the key.
 * Refused, run from a project outside the home's repository; so is the
 * key committed once and untracked since (its blob in the home's store).
 */
static void test_home_dir_rows(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "home11"), 0755) == 0 && mkdir(at(buf, "home11/.aws"), 0700) == 0 &&
			secret_file("home11/.aws/credentials") == 0 && mkdir(at(buf, "proj11"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd home11 && git init -q . && git add .aws/credentials && git commit -qm dotfiles && "
			   "cd ../proj11 && git init -q . && echo a > a && git add a && git commit -qm a") == 0);
	run_home = "home11";
	run_script = "echo ran; git -C \"$HOME\" show HEAD:.aws/credentials 2>&1; echo done\n";
	st = run_gc("proj11", NULL, NULL, NULL, &out, &err);
	refused("~/.aws/credentials tracked by a repository at the home", st, out, err, "/home11/.aws: the git",
		"tracks .aws/credentials");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd home11 && git rm -q --cached .aws/credentials && echo .aws/ > .gitignore && "
			   "git add .gitignore && git commit -qm untrack && test -z \"$(git ls-files .aws)\"") == 0);
	run_script = "echo ran; git -C \"$HOME\" log -p --all 2>&1 | cat; echo done\n";
	st = run_gc("proj11", NULL, NULL, NULL, &out, &err);
	refused("~/.aws/credentials once committed to the home's repository", st, out, err, "/home11/.aws/credentials",
		"is an object in");
	run_home = "home";
	run_script = NULL;
	free(out);
	free(err);
}

/*
 * Round 34, d8b's other half: the bare repositories dotfiles live in,
 * which git finds from no path: the alias form (git --git-dir=~/.dotfiles
 * --work-tree=~, an index in the bare directory) tracking ~/.aws/
 * credentials, and yadm's (~/.local/share/yadm/repo.git, core.worktree
 * naming the home) whose store holds ~/.npmrc's content: both refused; a
 * bare mirror in the home (no index, no work tree): starts.
 */
static void test_home_bare_repos(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "home12"), 0755) == 0 && mkdir(at(buf, "home12/.aws"), 0700) == 0 &&
			secret_file("home12/.aws/credentials") == 0 && secret_file("home12/.npmrc") == 0 &&
			mkdir(at(buf, "proj12"), 0755) == 0);
	CU_ASSERT_FATAL(sh("cd home12 && git init -q --bare .dotfiles && "
			   "git --git-dir=.dotfiles --work-tree=. add .aws/credentials && "
			   "git --git-dir=.dotfiles --work-tree=. commit -qm dotfiles") == 0);
	run_home = "home12";
	run_script = "echo ran; git --git-dir=\"$HOME/.dotfiles\" show HEAD:.aws/credentials 2>&1; echo done\n";
	st = run_gc("proj12", NULL, NULL, NULL, &out, &err);
	refused("~/.aws/credentials tracked by a bare ~/.dotfiles (--git-dir, --work-tree=~)", st, out, err,
		"tracks .aws/credentials", "/home12/.dotfiles to filesystem.denyRead");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd home12 && rm -rf .dotfiles && mkdir -p .local/share/yadm && "
			   "printf '//r/:_authToken=%s-npm\\n' > .npmrc && "
			   "git init -q --bare .local/share/yadm/repo.git && y=.local/share/yadm/repo.git && "
			   "git --git-dir=$y config core.bare false && git --git-dir=$y config core.worktree \"$PWD\" && "
			   "git --git-dir=$y add .npmrc && git --git-dir=$y commit -qm y && "
			   "git --git-dir=$y rm -q --cached .npmrc && git --git-dir=$y commit -qm untrack",
			   secret) == 0);
	run_script = "echo ran; git --git-dir=\"$HOME/.local/share/yadm/repo.git\" log -p 2>&1 | cat; echo done\n";
	st = run_gc("proj12", NULL, NULL, NULL, &out, &err);
	refused("~/.npmrc once committed to yadm's repository (core.worktree)", st, out, err, "/home12/.npmrc",
		"is an object in");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(sh("cd home12 && rm -rf .local && git init -q --bare mirror.git") == 0);
	run_script = NULL;
	st = run_gc("proj12", NULL, NULL, NULL, &out, &err);
	started("a bare mirror in the home, no index, no work tree", st, out, err);
	run_home = "home";
	free(out);
	free(err);
}

/*
 * Round 34, d2b: a masked .env hid at its path only; the copies editors
 * leave beside it (Emacs' .env~ and #.env#, vim's swap and undo files,
 * nano's .env.save, a merge's .env.orig, .bak, .old, .tmp) were read in
 * clear; the same beside a denyRead file. Each is unreadable now, the
 * masked file still shows its sentinel, and a file of another name
 * beside them is read as before.
 */
static void test_editor_copies(void)
{
	static const char *const names[] = {".env~", "#.env#", ".env.swp", ".env.swo", "..env.un~", ".env.save",
					    ".env.orig", ".env.bak", ".env.old", ".env.tmp", "creds.json~",
					    ".creds.json.swp", "creds.json.bak"};
	char buf[PATH_MAX], rel[64], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "plain40"), 0755) == 0 && secret_file("plain40/.env") == 0 &&
			secret_file("plain40/creds.json") == 0 &&
			test_write_file(at(buf, "plain40/notes.txt"), "visible\n", 8) == 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(rel, sizeof(rel), "plain40/%s", names[i]);
		CU_ASSERT_FATAL(secret_file(rel) == 0);
	}
	run_script = "echo ran; head -c 24 .env; echo; for f in .env~ '#.env#' .env.swp .env.swo ..env.un~ "
		     ".env.save .env.orig .env.bak .env.old .env.tmp creds.json~ .creds.json.swp creds.json.bak; do "
		     "cat \"$f\" 2>/dev/null; done; cat notes.txt; echo done\n";
	st = run_gc("plain40", "plain40/.env", "plain40/creds.json", NULL, &out, &err);
	run_script = NULL;
	started("a masked .env and a denyRead file with their editors' copies beside them", st, out, err);
	ROW(!test_has(out, "ran\n\n") && test_has(out, "visible"),
	    "the masked file's sentinel or the plain file not read: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 35, e3: the copies beside a hidden file are a family, not a list
 * of twelve names. Beside a masked .env and a denyRead creds.json, files
 * holding an EARLIER value (the value scan cannot know it): vim's third
 * swap, Kate's swap, patch's reject, git mergetool's four versions (for
 * creds.json named creds_BACKUP_N.json), JetBrains' safe-write copies,
 * hand-made .backup, .bk, .BAK, a case variant, LibreOffice's lock. Each
 * is unreadable; the file's neighbours that are no copies (.envrc,
 * .env.example, a directory creds.json.d, creds.yaml) are read as before.
 */
static void test_copy_family(void)
{
	static const char *const names[] = {
	    ".env.swn",		 ".env.swa",	     ".env.kate-swp",	  ".env.rej",	    ".env_BACKUP_12345",
	    ".env_LOCAL_12345",	 ".env_REMOTE_12345", ".env_BASE_12345",   ".env___jb_old___", ".env___jb_tmp___",
	    ".env.backup",	 ".env.bk",	     ".env.BAK",	  ".ENV",	    ".env.save.1",
	    ".~lock..env#",	 "creds_BACKUP_77.json", "creds_LOCAL_77.json", "creds.old.json", "creds copy.json",
	    "creds.json.rej",	 "CREDS.JSON.orig",
	    /* the review of round 35: the copies sync tools leave */
	    ".env.sync-conflict-20240101-120000-ABCDEFG", "creds.sync-conflict-20240101-120000-ABCDEFG.json",
	    ".env (conflicted copy 2024-01-01)", ".env-host-safeBackup-0001"};
	char buf[PATH_MAX], rel[96], old[48], text[128], script[4096], *out = NULL, *err = NULL;
	size_t n;
	int st;

	SKIP_IF_NEEDED();
	memcpy(old, "sk-proj-", 8);
	CU_ASSERT_FATAL(test_random_alnum(old + 8, 32) == 0);
	old[40] = '\0';
	snprintf(text, sizeof(text), "OPENAI_API_KEY=%s\n", old);
	CU_ASSERT_FATAL(mkdir(at(buf, "plain41"), 0755) == 0 && secret_file("plain41/.env") == 0 &&
			secret_file("plain41/creds.json") == 0 &&
			test_write_file(at(buf, "plain41/.envrc"), "envrc-visible\n", 14) == 0 &&
			test_write_file(at(buf, "plain41/.env.example"), "example-visible\n", 16) == 0 &&
			test_write_file(at(buf, "plain41/creds.yaml"), "yaml-visible\n", 13) == 0 &&
			mkdir(at(buf, "plain41/creds.json.d"), 0755) == 0 &&
			test_write_file(at(buf, "plain41/creds.json.d/a.json"), "dir-visible\n", 12) == 0);
	n = (size_t)snprintf(script, sizeof(script), "echo ran; head -c 24 .env; echo; for f in");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(rel, sizeof(rel), "plain41/%s", names[i]);
		CU_ASSERT_FATAL(test_write_file(at(buf, rel), text, strlen(text)) == 0);
		n += (size_t)snprintf(script + n, sizeof(script) - n, " '%s'", names[i]);
	}
	snprintf(script + n, sizeof(script) - n,
		 "; do cat \"$f\" 2>/dev/null; done; cat .envrc .env.example creds.yaml creds.json.d/a.json; "
		 "echo done\n");
	run_script = script;
	st = run_gc("plain41", "plain41/.env", "plain41/creds.json", NULL, &out, &err);
	run_script = NULL;
	started("a masked .env and a denyRead creds.json with copies of an earlier value beside them", st, out, err);
	ROW(!test_has(out, old + 8) && !test_has(err, old + 8), "a copy's earlier value was read: %s", test_nz(out));
	ROW(test_has(out, "envrc-visible") && test_has(out, "example-visible") && test_has(out, "yaml-visible") &&
		test_has(out, "dir-visible") && !test_has(out, "ran\n\n"),
	    "a neighbour that is no copy, or the masked file's sentinel, not read: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;

	/* The variants a project commits beside its .env (Next.js'
	 * .env.development, ASP.NET's appsettings.Development.json) are no
	 * copies: named as copies, the repository tracking them would refuse
	 * the start. */
	CU_ASSERT_FATAL(mkdir(at(buf, "plain44"), 0755) == 0 && secret_file("plain44/.env") == 0 &&
			secret_file("plain44/appsettings.json") == 0);
	/* The review of round 35: and the variants named by a word after
	 * _ or - (config_test.json, .env-sample, appsettings-dev.json). */
	CU_ASSERT_FATAL(sh("cd plain44 && git init -q . && printf '.env\\nappsettings.json\\n' > .gitignore && "
			   "echo devenv-visible > .env.development && echo devjson-visible > "
			   "appsettings.Development.json && echo testjson-visible > appsettings_test.json && "
			   "echo sample-visible > .env-sample && echo djson-visible > appsettings-dev.json && "
			   "git add -A && git commit -qm init") == 0);
	run_script = "echo ran; cat .env.development appsettings.Development.json appsettings_test.json .env-sample "
		     "appsettings-dev.json; echo done\n";
	st = run_gc("plain44", "plain44/.env", "plain44/appsettings.json", NULL, &out, &err);
	run_script = NULL;
	started("a repository tracking .env.development, appsettings.Development.json, appsettings_test.json, "
		".env-sample and appsettings-dev.json",
		st, out, err);
	ROW(test_has(out, "devenv-visible") && test_has(out, "devjson-visible") && test_has(out, "testjson-visible") &&
		test_has(out, "sample-visible") && test_has(out, "djson-visible"),
	    "the tracked variants not read: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * The review of round 35: the copies editors keep away from the file, in
 * the home, named by its whole path: a real Vim's undo file under a
 * vimrc's undodir=~/.vim/undo// (it holds the line's earlier value), a
 * swap file where Neovim keeps them by default
 * (~/.local/state/nvim/swap/%...%.env.swp) and an Emacs backup under a
 * backup-directory-alist (~/.emacs.d/backups/!...!.env~), each holding
 * an earlier value: unreadable in the sandbox; another file's undo file
 * there is read.
 */
static void test_central_copies(void)
{
	char buf[PATH_MAX], rel[PATH_MAX], mangled[PATH_MAX - 64], old[48], text[128], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/vim", X_OK) != 0) {
		TEST_SKIP("no /usr/bin/vim");
		return;
	}
	memcpy(old, "sk-proj-", 8);
	CU_ASSERT_FATAL(test_random_alnum(old + 8, 32) == 0);
	old[40] = '\0';
	snprintf(text, sizeof(text), "OPENAI_API_KEY=%s\n", old);
	CU_ASSERT_FATAL(mkdir(at(buf, "plain45"), 0755) == 0 &&
			test_write_file(at(buf, "plain45/.env"), text, strlen(text)) == 0 &&
			test_write_file(at(buf, "plain45/notes.txt"), "undo-visible\n", 13) == 0);
	CU_ASSERT_FATAL(sh("mkdir -p %1$s/home/.vim/undo %1$s/home/.local/state/nvim/swap %1$s/home/.emacs.d/backups && "
			   "cd %1$s/plain45 && for f in .env notes.txt; do HOME=%1$s/home vim -u NONE -i NONE -N -es "
			   "-c 'set undofile undodir=%1$s/home/.vim/undo//' -c '%%s/%2$s/%3$s/e' -c '%%s/undo-visible/x/e' "
			   "-c wq $f </dev/null; done && chmod 600 .env && ls %1$s/home/.vim/undo | grep -q 'plain45%%.env$'",
			   root, old + 8, secret + 8) == 0);
	snprintf(buf, sizeof(buf), "%s/plain45/.env", root);
	snprintf(mangled, sizeof(mangled), "%.*s", (int)sizeof(mangled) - 1, buf);
	for (char *c = mangled; *c != '\0'; c++)
		*c = *c == '/' ? '%' : *c;
	snprintf(rel, sizeof(rel), "home/.local/state/nvim/swap/%s.swp", mangled);
	CU_ASSERT_FATAL(test_write_file(at(buf, rel), text, strlen(text)) == 0);
	for (char *c = mangled; *c != '\0'; c++)
		*c = *c == '%' ? '!' : *c;
	snprintf(rel, sizeof(rel), "home/.emacs.d/backups/%s~", mangled);
	CU_ASSERT_FATAL(test_write_file(at(buf, rel), text, strlen(text)) == 0);
	/* an undo file of ~/.aws/credentials, under a denied directory row */
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p %1$s/home/.aws && echo 'aws_secret_access_key = awsnow' > "
				 "%1$s/home/.aws/credentials && cd %1$s/home && HOME=%1$s/home vim -u NONE -i NONE -N -es "
				 "-c 'set undofile undodir=%1$s/home/.vim/undo//' -c '%%s/awsnow/x/e' -c wq "
				 ".aws/credentials </dev/null && echo 'aws_secret_access_key = awsnow' > .aws/credentials",
				 root),
			      0);
	run_script = "echo ran; for f in \"$HOME\"/.vim/undo/* \"$HOME\"/.local/state/nvim/swap/* "
		     "\"$HOME\"/.emacs.d/backups/*; do tr -d '\\000' < \"$f\"; echo; done; echo done\n";
	st = run_gc("plain45", "plain45/.env", NULL, NULL, &out, &err);
	run_script = NULL;
	started("a masked .env with an undo file, a swap file and a backup of an earlier value in the home", st, out,
		err);
	ROW(!test_has(out, old + 8) && !test_has(err, old + 8), "an editor's copy in the home was read: %s",
	    test_nz(out));
	ROW(test_has(out, "undo-visible"), "another file's undo file was not read: %s", test_nz(out));
	ROW(!test_has(out, "awsnow"), "the undo file of ~/.aws/credentials was read: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * The scan for copies is bounded: a directory of more than 100,000
 * entries beside a masked .env, or more than 256 files named like its
 * copies, refuses the start with the reason (a session could otherwise
 * fill a writable directory to push a copy past the bound), quickly.
 */
static void test_copy_bounds(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	struct timespec t0, t1;
	double ms;
	int st, made = 0;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdir(at(buf, "plain42"), 0755) == 0 && secret_file("plain42/.env") == 0);
	for (int i = 0; i < 100001 && made == i; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "plain42/f%06d", i);
		made += test_write_file(at(buf, rel), "", 0) == 0;
	}
	CU_ASSERT_FATAL(made == 100001);
	run_script = "echo ran; head -c 24 .env; echo; echo done\n";
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	st = run_gc("plain42", "plain42/.env", NULL, NULL, &out, &err);
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	refused("a masked .env in a directory of 100,001 entries", st, out, err, "/plain42/ holds more than 100000 entries",
		"/plain42/.env");
	ROW(ms < 20000, "the refusal took %.0f ms", ms);
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(mkdir(at(buf, "plain43"), 0755) == 0 && secret_file("plain43/.env") == 0);
	for (int i = 0; i < 257; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "plain43/.env.%d", i);
		CU_ASSERT_FATAL(test_write_file(at(buf, rel), "x\n", 2) == 0);
	}
	st = run_gc("plain43", "plain43/.env", NULL, NULL, &out, &err);
	refused("a masked .env beside 257 files named like its copies", st, out, err,
		"/plain43/ holds more than 256 files named like the copies of", "/plain43/.env");
	run_script = NULL;
	free(out);
	free(err);
}

TEST_REGISTRAR(register_gitcopies)
{
	CU_pSuite s = test_suite("gitcopies", suite_init, suite_cleanup);

	test_add(s, "a masked or denyRead file the repository tracks (index v2, v4, split): refused; its .git "
		 "denied: starts",
		 test_tracked);
	test_add(s, "untracked, its content in a pack after gc, or in the working directory's repository; "
		 "~/.npmrc in a dotfiles repository: refused",
		 test_in_pack);
	test_add(s, "an ignored masked file never committed, no repository, a mandatory row like a project's "
		 "file: starts",
		 test_starts);
	test_add(s, "SHA-256 repositories: tracked, in a pack: refused", test_sha256);
	test_add(s, "a linked worktree: tracked, in the common objects: refused", test_worktree);
	test_add(s, "an index, a pack index that does not parse: refused", test_garbled);
	test_add(s, "copies under another name (CRLF made LF, a Git LFS object): refused", test_other_names);
	test_add(s, "a copy in a pack git has no index for (tmp_pack_*, no .idx, another pack's .idx), in a "
		 "tmp_obj_*: refused; a pack git cannot index: refused, said so",
		 test_unindexed);
	test_add(s, "a denyRead directory: tracked, in a pack, under a sparse entry: refused; never committed: "
		 "starts; past the bound: refused",
		 test_denied_dir);
	test_add(s, "a directory row of the mandatory table (~/.aws) in a repository at the home: refused",
		 test_home_dir_rows);
	test_add(s, "a bare dotfiles repository of the home (~/.dotfiles with --work-tree=~, yadm's): refused; a "
		 "bare mirror: starts",
		 test_home_bare_repos);
	test_add(s, "editors' copies beside a masked or denyRead file (.env~, #.env#, .env.swp, ...): unreadable",
		 test_editor_copies);
	test_add(s, "the family of copies beside a masked or denyRead file (.env.swn, .env.kate-swp, .env.rej, "
		 ".env_BACKUP_N, creds_LOCAL_N.json, .env.BAK, ...): unreadable; .envrc, .env.example read; a "
		 "tracked .env.development starts",
		 test_copy_family);
	test_add(s, "editors' copies in the home named by the file's path (a real Vim's undo file under "
		 "~/.vim/undo//, Neovim's swap, an Emacs backup): unreadable",
		 test_central_copies);
	test_add(s, "copies beside a file in a directory of 100,001 entries, or 257 of them: refused, said so",
		 test_copy_bounds);
}

/*
 * test_run_tools.c - `passavant run` and the tools' homes of code (SPEC
 * §3.3, §7; round 44): go install's directory (~/go/bin, $GOBIN, each
 * $GOPATH entry's bin/) read-only with the real go; a writable home's
 * read-only placeholders named at the start; corepack's home and pnpm's
 * workspace file's cache the session's own, its store read-only; a
 * GOCACHE in the project the session's own (go build works inside, the
 * host's cache is not written). Suite "run_tools".
 *
 * Each test runs
 *   env -C CWD -u PWD HOME=HOME PATH=... [VARS] passavant run -p POLICY -- sh SCRIPT
 * and checks what the script printed, passavant's stderr and the host's
 * files afterwards. The tree lives under /var/tmp (the sandbox's /tmp is
 * private). Without user namespaces every test is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define RUN_TIMEOUT_MS 120000
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* go offline: the module has no dependency; the build cache in the
 * sandbox's /tmp unless the test sets GOCACHE itself */
#define GO_ENV "export GOFLAGS='-mod=mod -buildvcs=false' GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local\n"

static bool skip;   /* no user namespaces */
static bool ready;  /* fixtures up */
static char *root;  /* /var/tmp/pv-runtools.XXXXXX */
static unsigned nscript;

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

static bool exists(const char *rel)
{
	return test_exists_at(root, rel);
}

/* mkdir -p root/rel */
static int mkdirs(const char *rel)
{
	return test_mkdirs_at(root, rel);
}

static int put(const char *rel, const char *text)
{
	return test_put_at(root, rel, text);
}

/* A policy at root/name: filesystem.allowWrite the ',' list of paths
 * under root in aw ("a,b"). */
static char *policy(char *buf, const char *name, const char *aw)
{
	char text[4096], item[PATH_MAX];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [");
	for (const char *s = aw; *s != '\0';) {
		size_t len = strcspn(s, ",");

		snprintf(item, sizeof(item), "%s\"%s/%.*s\"", s == aw ? "" : ", ", root, (int)len, s);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", item);
		s += len + (s[len] == ',');
	}
	snprintf(text + n, sizeof(text) - n, "]\n");
	at(buf, name);
	return test_write_file_mode(buf, text, 0644) == 0 ? buf : NULL;
}

/*
 * Runs `passavant run -p pol -- sh SCRIPT` in root/cwd with HOME
 * root/home and the "NAME=value" entries of env (NULL-terminated, may be
 * NULL; a value starting with '@' is a path under root). Returns the exit
 * status.
 */
static int run_tool(const char *home, const char *cwd, const char *const *env, const char *pol,
		    const char *script, char **out, char **err)
{
	char h[PATH_MAX + 8], c[PATH_MAX], sc[PATH_MAX], vars[8][PATH_MAX + 64], *argv[40];
	size_t n = 0, nv = 0;

	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	if (test_write_file_mode(sc, script, 0644) < 0)
		return -1;
	snprintf(h, sizeof(h), "HOME=%s/%s", root, home);
	at(c, cwd);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = c;
	argv[n++] = "-u";
	argv[n++] = "PWD";
	argv[n++] = "-u";
	argv[n++] = "GOPATH";
	argv[n++] = "-u";
	argv[n++] = "GOBIN";
	argv[n++] = "-u";
	argv[n++] = "GOCACHE";
	argv[n++] = "-u";
	argv[n++] = "COREPACK_HOME";
	argv[n++] = "-u";
	argv[n++] = "XDG_STATE_HOME";
	argv[n++] = "-u";
	argv[n++] = "XDG_CACHE_HOME";
	argv[n++] = "-u";
	argv[n++] = "GOENV";
	argv[n++] = h;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = "TMPDIR=/tmp";
	for (size_t i = 0; env != NULL && env[i] != NULL && nv < 8; i++, nv++) {
		const char *eq = strchr(env[i], '=');

		if (eq != NULL && eq[1] == '@')
			snprintf(vars[nv], sizeof(vars[nv]), "%.*s=%s/%s", (int)(eq - env[i]), env[i], root, eq + 2);
		else
			snprintf(vars[nv], sizeof(vars[nv]), "%s", env[i]);
		argv[n++] = vars[nv];
	}
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = (char *)pol;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = sc;
	argv[n] = NULL;
	return test_run_capture(argv, out, err, RUN_TIMEOUT_MS);
}

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

static int suite_init(void)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	char why[256], buf[PATH_MAX];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why))) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "run_tools: namespaces unavailable (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n",
				why);
			return -1;
		}
		fprintf(stderr, "run_tools: SKIP: user namespaces unavailable: %s\n", why);
		skip = true;
		return 0;
	}
	root = strdup("/var/tmp/pv-runtools.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0 || mkdir(at(buf, "scripts"), 0755) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	if (root != NULL)
		test_rmtree(root);
	free(root);
	root = NULL;
	ready = false;
	return 0;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* A Go module in root/dir: `go install` makes the program hello. */
static int go_module(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/go.mod", dir);
	if (mkdirs(dir) < 0 || put(p, "module example.com/hello\n\ngo 1.18\n") < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/main.go", dir);
	return put(p, "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello-ran\") }\n");
}

/*
 * Round 44 (item 1): go install's programs are on the host's PATH (the
 * usual setup adds ~/go/bin, $GOBIN or $GOPATH/bin), so the next shell
 * runs what a session installed there. ~/go/bin is read-only where
 * allowWrite hands ~/go over, $GOBIN in the writable project and a
 * $GOPATH entry's bin/ too; the rest of ~/go stays writable, go build
 * works, and a writable home without ~/go still lets go make one (no
 * placeholder ~/go: the check after the run moves a new ~/go aside).
 * On the code before, go install wrote ~/go/bin/hello, $GOBIN/hello and
 * the GOPATH's bin/plant.
 */
static void test_go_bin(void)
{
	const char *script = GO_ENV "export GOCACHE=/tmp/gocache\n"
				    "go install . >/dev/null 2>&1; echo install=$?\n"
				    "go build -o /tmp/hello . && /tmp/hello; echo build=$?\n";
	const char *gobin[] = {"GOBIN=@w1/bin", NULL};
	const char *gopath[] = {"GOPATH=@gp", NULL};
	char pol[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/go", X_OK) != 0) {
		TEST_SKIP("no /usr/bin/go");
		return;
	}
	CU_ASSERT_FATAL(go_module("w1") == 0 && mkdirs("h1/go/bin") == 0 && mkdirs("h1/go/pkg") == 0 &&
			mkdirs("gp/bin") == 0 && mkdirs("h2") == 0);

	/* allowWrite ~/go: its bin/ read-only, its pkg/ writable */
	CU_ASSERT_FATAL(policy(pol, "go1.yaml", "h1/go,w1") != NULL);
	st = run_tool("h1", "w1", NULL, pol,
		      "echo x > ~/go/bin/plant 2>/dev/null; echo plant=$?\n"
		      "mkdir -p ~/go/pkg/mod/x && echo x > ~/go/pkg/mod/x/f; echo mod=$?\n",
		      &out, &err);
	ROW(st == 0 && test_has(out, "mod=0\n"), "allowWrite ~/go: its pkg/ not writable: status %d", st);
	ROW(test_has(out, "plant=") && !test_has(out, "plant=0"), "~/go/bin was writable");
	ROW(!exists("h1/go/bin/plant"), "a file planted in ~/go/bin reached the host");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	st = run_tool("h1", "w1", NULL, pol, script, &out, &err);
	ROW(test_has(out, "install=") && !test_has(out, "install=0"), "go install into ~/go/bin succeeded");
	ROW(!exists("h1/go/bin/hello"), "go install's program reached the host's ~/go/bin");
	ROW(test_has(out, "hello-ran\nbuild=0\n"), "go build failed beside a read-only ~/go/bin");
	if (!test_has(out, "build=0"))
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* $GOBIN in the writable project, missing: not creatable */
	CU_ASSERT_FATAL(policy(pol, "go2.yaml", "w1") != NULL);
	st = run_tool("h1", "w1", gobin, pol, script, &out, &err);
	ROW(test_has(out, "install=") && !test_has(out, "install=0"), "go install into $GOBIN succeeded");
	ROW(!exists("w1/bin/hello"), "go install's program reached $GOBIN on the host");
	ROW(test_has(out, "build=0\n"), "go build failed beside $GOBIN: %s", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* a GOPATH named exactly by allowWrite: its bin/ read-only */
	CU_ASSERT_FATAL(policy(pol, "go3.yaml", "gp,w1") != NULL);
	st = run_tool("h1", "w1", gopath, pol,
		      GO_ENV "export GOCACHE=/tmp/gocache\n"
			     "echo x > $GOPATH/bin/plant 2>/dev/null; echo plant=$?\n"
			     "mkdir -p $GOPATH/pkg && echo x > $GOPATH/pkg/f; echo pkg=$?\n"
			     "go install . >/dev/null 2>&1; echo install=$?\n",
		      &out, &err);
	ROW(test_has(out, "pkg=0\n"), "a GOPATH named by allowWrite was not writable: %s", out ? out : "");
	ROW(test_has(out, "plant=") && !test_has(out, "plant=0"), "$GOPATH/bin was writable");
	ROW(test_has(out, "install=") && !test_has(out, "install=0") && !exists("gp/bin/hello") &&
		    !exists("gp/bin/plant"),
	    "go install into $GOPATH/bin reached the host");
	free(out);
	free(err);
	out = err = NULL;

	/* a writable home without ~/go: go makes it (no placeholder) */
	CU_ASSERT_FATAL(policy(pol, "go4.yaml", "h2") != NULL);
	st = run_tool("h2", "h2", NULL, pol, "mkdir -p ~/go/pkg/mod/y && echo x > ~/go/pkg/mod/y/f; echo newgo=$?\n",
		      &out, &err);
	ROW(st == 0 && test_has(out, "newgo=0\n"), "a writable home without ~/go: ~/go could not be made: %s",
	    err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 44 (item 3): with allowWrite "~", the table's rows missing from
 * the home get read-only placeholders (~/.bun, ~/.nvm): kept, and named
 * at the start with the way to allow one. Fails on the code before: no
 * such line. A created ~/.bun named by allowWrite is writable but for
 * its bin/, and no longer named.
 */
static void test_placeholder_notice(void)
{
	char pol[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h3") == 0 && policy(pol, "h3.yaml", "h3") != NULL);
	st = run_tool("h3", "h3", NULL, pol, "mkdir -p ~/.bun/install 2>/dev/null; echo bun=$?\n", &out, &err);
	ROW(st == 0 && test_has(out, "bun=") && !test_has(out, "bun=0"), "a missing ~/.bun could be made: %s",
	    out ? out : "");
	ROW(test_has(err, "are read-only placeholders in the sandbox"), "no notice of the placeholders: %s",
	    err ? err : "");
	ROW(test_has(err, "~/.bun") && test_has(err, "~/.nvm") && test_has(err, "~/.volta") &&
		    test_has(err, "~/.cargo"),
	    "the notice misses ~/.bun, ~/.nvm, ~/.volta or ~/.cargo: %s", err ? err : "");
	ROW(test_hasf(err, "create the directory on the host (mkdir %s/h3/", root) &&
		    test_has(err, "and name it in filesystem.allowWrite"),
	    "the notice does not say how to allow one: %s", err ? err : "");
	ROW(!test_has(err, "~/go,") && !test_has(err, "~/go "), "the notice names ~/go: %s", err ? err : "");
	ROW(!exists("h3/.bun"), "a placeholder stayed on the host");
	free(out);
	free(err);
	out = err = NULL;

	CU_ASSERT_FATAL(mkdirs("h3/.bun") == 0 && policy(pol, "h3b.yaml", "h3,h3/.bun") != NULL);
	st = run_tool("h3", "h3", NULL, pol,
		      "mkdir -p ~/.bun/cache && echo x > ~/.bun/cache/f; echo cache=$?\n"
		      "mkdir -p ~/.bun/bin 2>/dev/null && echo x > ~/.bun/bin/plant 2>/dev/null; echo bin=$?\n",
		      &out, &err);
	ROW(st == 0 && test_has(out, "cache=0\n"), "~/.bun named by allowWrite was not writable: %s", out ? out : "");
	ROW(test_has(out, "bin=") && !test_has(out, "bin=0") && !exists("h3/.bun/bin/plant"),
	    "~/.bun/bin was writable");
	ROW(!test_has(err, "~/.bun,") && !test_has(err, "~/.bun ("), "the notice names the existing ~/.bun: %s",
	    err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 44 (item 2): corepack's home named elsewhere than
 * ~/.cache/node/corepack, and pnpm-workspace.yaml's cacheDir, are the
 * session's own where a writable tree holds them (corepack and pnpm dlx
 * work inside, the host's stay as they were); its storeDir is read-only
 * as $npm_config_store_dir is. On the code before: COREPACK_HOME was
 * read-only (corepack failed), the dlx/ plant and the store's reached
 * the host.
 */
static void test_corepack_pnpm_workspace(void)
{
	const char *env[] = {"COREPACK_HOME=@h4/cp", NULL};
	char pol[PATH_MAX], text[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h4/cp") == 0 && mkdirs("h4/store") == 0 && mkdirs("pc") == 0 && mkdirs("w4") == 0);
	CU_ASSERT_FATAL(put("w4/pnpm-workspace.yaml",
			    "packages:\n  - 'p/*'\ncacheDir: ../pc   # the cache\nstoreDir: \"~/store\"\n") == 0);
	CU_ASSERT_FATAL(policy(pol, "w4.yaml", "h4/cp,h4/store,pc,w4") != NULL);
	snprintf(text, sizeof(text),
		 "mkdir -p $COREPACK_HOME/pnpm/9 && echo x > $COREPACK_HOME/pnpm/9/plant; echo cp=$?\n"
		 "mkdir -p %1$s/pc/dlx/abc && echo x > %1$s/pc/dlx/abc/plant; echo dlx=$?\n"
		 "mkdir -p %1$s/pc/metadata && echo x > %1$s/pc/metadata/f; echo meta=$?\n"
		 "echo x > ~/store/plant 2>/dev/null; echo store=$?\n",
		 root);
	st = run_tool("h4", "w4", env, pol, text, &out, &err);
	ROW(st == 0 && test_has(out, "cp=0\n"), "COREPACK_HOME elsewhere was not writable in the session: %s",
	    out ? out : "");
	ROW(!exists("h4/cp/pnpm"), "a file the session wrote in COREPACK_HOME reached the host");
	ROW(test_has(out, "dlx=0\n") && !exists("pc/dlx"), "pnpm-workspace.yaml's cacheDir: dlx/ written on the host");
	ROW(test_has(out, "meta=0\n") && exists("pc/metadata/f"), "the rest of the cacheDir was not writable");
	ROW(test_has(out, "store=") && !test_has(out, "store=0") && !exists("h4/store/plant"),
	    "pnpm-workspace.yaml's storeDir was writable");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

/*
 * Round 44 (item 5) and its review (review44c): go's build cache is the
 * session's own where a writable tree holds it, wherever it is: a
 * GOCACHE in the writable project (GitLab's templates keep it there), the
 * default ~/.cache/go-build ($XDG_CACHE_HOME/go-build) with allowWrite
 * ["~/.cache"] (a usual way to let tools work), or where `go env -w
 * GOCACHE=...` put it (~/.config/go/env). go links the objects it finds
 * there under an action's hash as they are, so a plant there ran in the
 * host's next go build. go build works inside, the host's cache is not
 * written, and the notice of the homes of code does not name it. On the
 * code before round 44 go build failed with "read-only file system" in
 * the project's GOCACHE; on fix44c's the defaults and the go env file's
 * cache were the host's, the plant reached them. One table (round 45,
 * item 7: the two tests were one loop written twice).
 */
static void test_gocache(void)
{
	static const struct {
		const char *env; /* NULL: none */
		const char *dir; /* the cache, under root */
		bool goenv;	 /* named by h6/.config/go/env */
	} rows[] = {
		{"GOCACHE=@w6/.gocache", "w6/.gocache", false},
		{NULL, "h6/.cache/go-build", false},
		{"XDG_CACHE_HOME=@h6/xc", "h6/xc/go-build", false},
		{NULL, "h6/gc", true},
	};
	const char *script = GO_ENV "go build -o /tmp/hello . && /tmp/hello; echo build=$?\n"
				    "echo x > \"$(go env GOCACHE)/README\"; echo readme=$?\n"
				    "mkdir -p \"$(go env GOCACHE)/00\" && echo x > \"$(go env GOCACHE)/00/plant-d\"; "
				    "echo plant=$?\n";
	char pol[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (access("/usr/bin/go", X_OK) != 0) {
		TEST_SKIP("no /usr/bin/go");
		return;
	}
	CU_ASSERT_FATAL(go_module("w6") == 0 && mkdirs("h6/.config/go") == 0 && mkdirs("h6/xc") == 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/README", rows[i].dir);
		CU_ASSERT_FATAL(mkdirs(rows[i].dir) == 0 && put(p, "host\n") == 0);
	}
	CU_ASSERT_FATAL(policy(pol, "w6.yaml", "h6/.cache,h6/xc,h6/gc,w6") != NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *env[] = {rows[i].env, NULL};
		char p[PATH_MAX], full[PATH_MAX], text[PATH_MAX + 16], *t;

		if (rows[i].goenv) {
			snprintf(text, sizeof(text), "GOCACHE=%s/%s\n", root, rows[i].dir);
			CU_ASSERT_FATAL(put("h6/.config/go/env", text) == 0);
		}
		st = run_tool("h6", "w6", env, pol, script, &out, &err);
		ROW(st == 0 && test_has(out, "hello-ran\nbuild=0\n"), "go build with the cache in %s failed: %s",
		    rows[i].dir, err ? err : "");
		ROW(test_has(out, "readme=0\n") && test_has(out, "plant=0\n"), "the session's cache in %s not writable: %s",
		    rows[i].dir, out ? out : "");
		snprintf(p, sizeof(p), "%s/README", rows[i].dir);
		t = test_read_file(at(full, p), NULL);
		ROW(t != NULL && strcmp(t, "host\n") == 0, "the host's go build cache %s was written", rows[i].dir);
		free(t);
		snprintf(p, sizeof(p), "%s/00/plant-d", rows[i].dir);
		ROW(!exists(p), "the session's plant reached the host's go build cache %s", rows[i].dir);
		snprintf(p, sizeof(p), "%s/trim.txt", rows[i].dir);
		ROW(!exists(p), "go's cache reached the host's %s", rows[i].dir);
		ROW(!test_has(err, "GOCACHE="), "the notice names GOCACHE as read-only: %s", err ? err : "");
		if (st != 0 || !test_has(out, "build=0"))
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
	}
}

/*
 * Review of round 44 (review44c), round 45 (fix45v, item 6):
 * pnpm-workspace.yaml's cacheDir and storeDir in the forms pnpm's YAML
 * reader takes (the value on the next line, a quoted key, an anchor, a
 * key after a space, a flow mapping, a whole indented mapping, escapes, a
 * byte order mark) are read now that the file is parsed as YAML: the
 * dlx/ plant stays in the session, the start goes on. The forms
 * passavant cannot follow as pnpm would (an alias, a merge key, a block
 * scalar, a binary tag, a sequence, a second document, a file that is no
 * YAML) refuse it, naming the file; cacheDir deeper than the top (a
 * catalog's) and in a comment is no key. On fix44c's 0f94340 the read
 * forms started with the dlx/ plant reaching the host; on review44c's
 * line reader they refused the start (the indented one a false refusal),
 * and "  cacheDir: ../pc7" in a nested mapping refused it too.
 */
static void test_pnpm_workspace_forms(void)
{
	const char *read[] = {"cacheDir:\n  ../pc7\n",
			      "\"cacheDir\": ../pc7\n",
			      "cacheDir: &c ../pc7\n",
			      "storeDir : ../st7\ncacheDir: ../pc7\n",
			      "{cacheDir: ../pc7, packages: [a]}\n",
			      "  packages:\n    - 'p/*'\n  cacheDir: ../pc7\n",
			      "\"cache\\x44ir\": \"../p\\x637\"\n",
			      "\xef\xbb\xbf" "cacheDir: ../pc7\n# cacheDir: elsewhere\n"};
	const char *odd[] = {"base: &b ../pc7\ncacheDir: *b\n", "<<: {cacheDir: ../pc7}\n", "cacheDir: |\n  ../pc7\n",
			     "cacheDir: !!binary Li4vcGM3\n", "cacheDir: [../pc7]\n", "cacheDir: ../x\n---\ncacheDir: ../pc7\n",
			     "cacheDir: [../pc7\n",
			     /* review45v: a key pnpm's reader makes the string
			      * "cacheDir" of (a sequence's items, a tag decoded) */
			     "[cacheDir]: ../pc7\n", "? [cacheDir]\n: ../pc7\n", "!!binary Y2FjaGVEaXI=: ../pc7\n"};
	const char *ignored[] = {"catalog:\n  cacheDir: ../pc7\n", "# cacheDir: ../pc7\npackages: [a]\n", "cacheDir: ~\n"};
	char pol[PATH_MAX], text[PATH_MAX], tmp[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h7") == 0 && mkdirs("pc7") == 0 && mkdirs("st7") == 0 && mkdirs("w7") == 0 &&
			policy(pol, "w7.yaml", "pc7,st7,w7") != NULL);
	snprintf(text, sizeof(text),
		 "mkdir -p %1$s/pc7/dlx/abc && echo x > %1$s/pc7/dlx/abc/plant; echo dlx=$?\n"
		 "echo x > %1$s/st7/plant 2>/dev/null; echo store=$?\n",
		 root);
	for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++) {
		CU_ASSERT_FATAL(put("w7/pnpm-workspace.yaml", read[i]) == 0);
		st = run_tool("h7", "w7", NULL, pol, text, &out, &err);
		ROW(st == 0 && test_has(out, "dlx=0\n") && !exists("pc7/dlx/abc/plant"),
		    "pnpm-workspace.yaml %zu (%s): not started, or dlx/ written on the host: %s %s", i, read[i],
		    out ? out : "", err ? err : "");
		if (i == 3)
			ROW(test_has(out, "store=") && !test_has(out, "store=0") && !exists("st7/plant"),
			    "storeDir after a space was writable");
		test_rmtree(at(tmp, "pc7/dlx"));
		test_rmtree(at(tmp, "st7/plant"));
		free(out);
		free(err);
		out = err = NULL;
	}
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		CU_ASSERT_FATAL(put("w7/pnpm-workspace.yaml", odd[i]) == 0);
		st = run_tool("h7", "w7", NULL, pol, "echo started\n", &out, &err);
		ROW(st != 0 && !test_has(out, "started") && test_has(err, "pnpm-workspace.yaml") &&
			    test_has(err, "not started"),
		    "pnpm-workspace.yaml %zu (%s) started, or no reason: %s", i, odd[i], err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		CU_ASSERT_FATAL(put("w7/pnpm-workspace.yaml", ignored[i]) == 0);
		st = run_tool("h7", "w7", NULL, pol, text, &out, &err);
		ROW(st == 0 && test_has(out, "dlx=0\n") && exists("pc7/dlx/abc/plant"),
		    "pnpm-workspace.yaml %zu (%s): no key of pnpm's, but not started or pc7 not the host's: %s", i,
		    ignored[i], err ? err : "");
		test_rmtree(at(tmp, "pc7/dlx"));
		free(out);
		free(err);
		out = err = NULL;
	}
}

/*
 * Review of round 45 (review45v): a pnpm-workspace.yaml or .npmrc
 * passavant could not read whole, or a cache name too long for its
 * buffer, was skipped: pnpm reads a file over 1 MiB (a long comment)
 * and folds a "./" run away, so the cacheDir it named stayed the
 * host's writable tree. On fix45v's 5251ce5 the three started (and
 * the plant of the first reached pc7/dlx); now each refuses the start.
 */
static void test_pnpm_workspace_unread(void)
{
	static const char *const files[] = {"w7/pnpm-workspace.yaml", "w7/pnpm-workspace.yaml", "w7/.npmrc"};
	char pol[PATH_MAX], text[PATH_MAX], tmp[PATH_MAX], *big, *out = NULL, *err = NULL;
	size_t n = (1u << 20) + 64, o;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h7") == 0 && mkdirs("pc7") == 0 && mkdirs("w7") == 0 &&
			policy(pol, "w7.yaml", "pc7,w7") != NULL);
	big = malloc(n + 64);
	CU_ASSERT_FATAL(big != NULL);
	snprintf(text, sizeof(text), "mkdir -p %1$s/pc7/dlx/abc && echo x > %1$s/pc7/dlx/abc/plant; echo dlx=$?\n",
		 root);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (i == 1) {
			o = (size_t)snprintf(big, n, "cacheDir: ");
			while (o < 2200 * 2)
				o += (size_t)snprintf(big + o, n - o, "./");
			snprintf(big + o, n - o, "../pc7\n");
		} else {
			o = (size_t)snprintf(big, n, i == 0 ? "cacheDir: ../pc7\n#" : "cache-dir=../pc7\n#");
			memset(big + o, 'x', n - o);
			memcpy(big + n - 2, "\n", 2);
		}
		CU_ASSERT_FATAL(put(files[i], big) == 0);
		st = run_tool("h7", "w7", NULL, pol, text, &out, &err);
		ROW(st != 0 && !test_has(out, "dlx=") && !exists("pc7/dlx/abc/plant") && test_has(err, "not started") &&
			    test_has(err, i == 1 ? "PATH_MAX" : "over 1 MiB"),
		    "%s %zu: started, the plant reaching the host, or no reason: %s", files[i], i, err ? err : "");
		test_rmtree(at(tmp, "pc7/dlx"));
		CU_ASSERT(unlink(at(tmp, files[i])) == 0);
		free(out);
		free(err);
		out = err = NULL;
	}
	free(big);
}

/*
 * Round 45 (fix45v, items 1 and 5): NuGet's packages folder and
 * MSBuild's places, with a fake tree (no dotnet here). NUGET_PACKAGES in
 * the writable project stays read-only (a package's build/x.targets is
 * imported into every later build; a new package neither) and the start
 * names it; MSBuild reads every environment variable as a property
 * whatever its case, so msbuildextensionspath, MSBUILDSDKSPATH,
 * restorepackagespath (NuGet's folder as a property) and
 * custombeforemicrosoftcommontargets are its places as the canonical
 * spellings are: read-only, a relative one refuses the start. On the
 * code before, the other cases were no variable of passavant's: their
 * plants reached the host (4 checks) and the relative one started.
 */
static void test_dotnet_homes(void)
{
	const char *env[] = {"NUGET_PACKAGES=@w8/nuget",	"msbuildextensionspath=@w8/ext",
			     "MSBUILDSDKSPATH=@w8/sdks",	"restorepackagespath=@w8/rp",
			     "custombeforemicrosoftcommontargets=@w8/b.targets", NULL};
	static const char *const plants[][2] = {
		{"nuget/x/1.0.0/build/x.targets", "nuget"}, {"nuget/y/plant", "nuget-new"},
		{"ext/Microsoft/plant.targets", "ext"},	    {"sdks/Sdk/plant.props", "sdks"},
		{"rp/x/1.0.0/build/x.targets", "rp"},	    {"b.targets", "targets"},
	};
	const char *rel[] = {"msbuildExtensionsPath=ext", "DIRECTORYBUILDPROPSPATH=./D.props", NULL};
	char pol[PATH_MAX], text[4096], *out = NULL, *err = NULL;
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h8") == 0 && mkdirs("w8/nuget/x/1.0.0/build") == 0 && mkdirs("w8/ext/Microsoft") == 0 &&
			mkdirs("w8/sdks/Sdk") == 0 && mkdirs("w8/rp/x/1.0.0/build") == 0 &&
			put("w8/nuget/x/1.0.0/build/x.targets", "host\n") == 0 &&
			put("w8/rp/x/1.0.0/build/x.targets", "host\n") == 0 && put("w8/b.targets", "host\n") == 0 &&
			policy(pol, "w8.yaml", "w8") != NULL);
	for (size_t i = 0; i < sizeof(plants) / sizeof(plants[0]); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "mkdir -p \"$(dirname %1$s/w8/%2$s)\" 2>/dev/null; "
				      "echo plant > %1$s/w8/%2$s 2>/dev/null; echo %3$s=$?\n",
				      root, plants[i][0], plants[i][1]);
	snprintf(text + n, sizeof(text) - n, "echo x > %s/w8/other; echo other=$?\n", root);
	st = run_tool("h8", "w8", env, pol, text, &out, &err);
	ROW(st == 0 && test_has(out, "other=0\n"), "the project with .NET's places was not writable: %s %s",
	    out ? out : "", err ? err : "");
	for (size_t i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		char p[PATH_MAX], want[64], *t;

		snprintf(want, sizeof(want), "%s=0\n", plants[i][1]);
		snprintf(p, sizeof(p), "w8/%s", plants[i][0]);
		t = exists(p) ? test_read_file(at(text, p), NULL) : NULL;
		ROW(!test_has(out, want) && (t == NULL || strcmp(t, "host\n") == 0),
		    "the session wrote %s (%s) on the host", p, plants[i][1]);
		free(t);
	}
	ROW(test_has(err, "NUGET_PACKAGES="), "the start did not name NUGET_PACKAGES read-only: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	for (size_t i = 0; rel[i] != NULL; i++) {
		const char *one[] = {rel[i], NULL};

		out = err = NULL;
		st = run_tool("h8", "w8", one, pol, "echo started\n", &out, &err);
		ROW(st != 0 && !test_has(out, "started") && test_has(err, "not started"),
		    "a relative %s started: %s", rel[i], err ? err : "");
		free(out);
		free(err);
	}
}

/*
 * Round 45 (fix45v, item 3): the tools' own temporary directories, where
 * a tool writes what it runs next (go run's programs in $GOTMPDIR, a
 * JVM library's native code in java.io.tmpdir, npm's tmp), are the
 * session's private /tmp even where the host's lies in the writable
 * project: go run works with the real go and leaves the host's GOTMPDIR
 * as it was, the real java reads java.io.tmpdir as /tmp, a plant in each
 * stays in the sandbox, and the start says so. On the code before, the
 * three plants reached the host's directories and java read the host's.
 */
static void test_tool_tmpdirs(void)
{
	char pol[PATH_MAX], jopt[PATH_MAX + 32], text[2048], *out = NULL, *err = NULL;
	const char *env[] = {"GOTMPDIR=@w9/gotmp", "NPM_CONFIG_TMP=@w9/npmtmp", jopt, NULL};
	static const char *const dirs[] = {"gotmp", "npmtmp", "jtmp"};
	bool go = access("/usr/bin/go", X_OK) == 0, java = access("/usr/bin/java", X_OK) == 0;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(go_module("w9") == 0 && mkdirs("h9") == 0 && mkdirs("w9/gotmp") == 0 &&
			mkdirs("w9/npmtmp") == 0 && mkdirs("w9/jtmp") == 0 && policy(pol, "w9.yaml", "w9") != NULL);
	snprintf(jopt, sizeof(jopt), "JAVA_TOOL_OPTIONS=-Xss1m -Djava.io.tmpdir=%s/w9/jtmp", root);
	snprintf(text, sizeof(text),
		 GO_ENV "export GOCACHE=/tmp/gocache\n"
			"echo plant > \"$GOTMPDIR/plant\"; echo go=$?\n"
			"echo plant > \"$NPM_CONFIG_TMP/plant\"; echo npm=$?\n"
			"%s%s"
			"echo x > %s/w9/other; echo other=$?\n",
		 go ? "go run . ; echo run=$?\n" : "",
		 java ? "java -XshowSettings:properties -version 2>&1 | grep 'java.io.tmpdir = '\n" : "", root);
	st = run_tool("h9", "w9", env, pol, text, &out, &err);
	ROW(st == 0 && test_has(out, "go=0\n") && test_has(out, "npm=0\n") && test_has(out, "other=0\n"),
	    "the tools' temporary directories were not writable in the session: %s", out ? out : "");
	if (go)
		ROW(test_has(out, "hello-ran\nrun=0\n"), "go run with GOTMPDIR in the project failed: %s", err ? err : "");
	if (java)
		ROW(test_has(out, "java.io.tmpdir = /tmp\n"), "java's java.io.tmpdir was not /tmp: %s", out ? out : "");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[PATH_MAX], d[PATH_MAX];
		DIR *dp;
		struct dirent *e;
		size_t n = 0;

		snprintf(p, sizeof(p), "w9/%s", dirs[i]);
		dp = opendir(at(d, p));
		while (dp != NULL && (e = readdir(dp)) != NULL)
			n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
		if (dp != NULL)
			closedir(dp);
		ROW(dp != NULL && n == 0, "the session wrote %zu entries in the host's %s", n, p);
	}
	ROW(test_has(err, "GOTMPDIR names") && test_has(err, "NPM_CONFIG_TMP names") &&
		    test_has(err, "JAVA_TOOL_OPTIONS names java.io.tmpdir=") && !test_has(err, "-Xss1m"),
	    "the start did not name the temporary directories: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	/* review45v: a JAVA_TOOL_OPTIONS holding a token is dropped (SPEC
	 * §3.6) whatever its java.io.tmpdir; on 5251ce5 the tmpdir's rewrite
	 * set it, which kept it from the drop, the token with it */
	snprintf(jopt, sizeof(jopt), "JAVA_TOOL_OPTIONS=-Dapi.token=ghp_%s -Djava.io.tmpdir=%s/w9/jtmp",
		 "0123456789abcdefghijABCDEFGHIJ012345", root);
	st = run_tool("h9", "w9", env, pol, "echo \"jto=[$JAVA_TOOL_OPTIONS]\"\n", &out, &err);
	ROW(st == 0 && test_has(out, "jto=[]\n") && !test_has(out, "ghp_"),
	    "a JAVA_TOOL_OPTIONS holding a token reached the command: %s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	/* the launch scripts' options (mvn's MAVEN_OPTS, ...), which java
	 * takes after JAVA_TOOL_OPTIONS': on a6058c1 passed as they were,
	 * java.io.tmpdir the host's */
	static const char *const scripts[] = {"MAVEN_OPTS", "GRADLE_OPTS", "JAVA_OPTS", "SBT_OPTS", "ANT_OPTS"};
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		snprintf(jopt, sizeof(jopt), "%s=-Xss1m -Djava.io.tmpdir=%s/w9/jtmp", scripts[i], root);
		if (java)
			snprintf(text, sizeof(text),
				 "echo \"opts=[$%s]\"\njava $%s -XshowSettings:properties -version 2>&1 | grep "
				 "'java.io.tmpdir = '\n",
				 scripts[i], scripts[i]);
		else
			snprintf(text, sizeof(text), "echo \"opts=[$%s]\"\n", scripts[i]);
		st = run_tool("h9", "w9", env, pol, text, &out, &err);
		ROW(st == 0 && test_has(out, " -Djava.io.tmpdir=/tmp]\n") && (!java || test_has(out, "java.io.tmpdir = /tmp\n")) &&
			    test_has(err, "names java.io.tmpdir="),
		    "%s's java.io.tmpdir in the project was the command's: %s / %s", scripts[i], out ? out : "",
		    err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
}

/*
 * Round 45 (fix45v, item 4): a placeholder no shell expanded in a tool's
 * home (a .env's or an image's literal "$HOME/...", "~/...", "${VAR}",
 * or a slash-less "$GOENV_FILE" naming a file) is a relative name to
 * the tool: the start is refused naming it as a placeholder, for the
 * table's variables and for those taken by their name's ending; the
 * homes of base/envnames.c the table lacked (the canonical
 * MSBuildExtensionsPath, OCAMLLIB) are judged too. On the code before:
 * WORKON_HOME=$HOME/x, MSBuildExtensionsPath=ext, OCAMLLIB=lib and
 * DOTNET_BUNDLE_EXTRACT_BASE_DIR=${HOME}/x started, and the table's
 * rows were refused as "the relative path" with no word of the
 * placeholder.
 */
static void test_placeholders(void)
{
	static const char *const rows[][2] = {
		{"GOCACHE=$HOME/.cache/go-build", "\"$HOME\" (a file or directory"},
		{"NUGET_PACKAGES=~/.nuget/packages", "\"~\" (a file or directory"},
		{"GOENV=$GOENV_FILE", "\"$GOENV_FILE\" (a file or directory"},
		{"WORKON_HOME=$HOME/.venvs", "placeholder no shell expanded"},
		{"DOTNET_BUNDLE_EXTRACT_BASE_DIR=${HOME}/x", "placeholder no shell expanded"},
		{"MSBuildExtensionsPath=ext", "MSBuildExtensionsPath holds the relative path \"ext\""},
		{"OCAMLLIB=lib", "OCAMLLIB holds the relative path \"lib\""},
	};
	const char *ok[] = {"GOCACHE=/var/tmp/gc10", "WORKON_HOME=/var/tmp/venvs10", "OPAMROOT=/var/tmp/opam10", NULL};
	char pol[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h10") == 0 && mkdirs("w10") == 0 && policy(pol, "w10.yaml", "w10") != NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *env[] = {rows[i][0], NULL};

		st = run_tool("h10", "w10", env, pol, "echo started\n", &out, &err);
		ROW(st != 0 && !test_has(out, "started") && test_has(err, "not started") && test_has(err, rows[i][1]),
		    "%s started, or not said as expected (%s): %s", rows[i][0], rows[i][1], err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	st = run_tool("h10", "w10", ok, pol, "echo started\n", &out, &err);
	ROW(st == 0 && test_has(out, "started\n"), "absolute homes did not start: %s", err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 45 (fix45v, item 2): go's environment file and go's and opam's
 * trees. `go env -w GOFLAGS=-toolexec=...` writes ~/.config/go/env, read
 * by every later go build (the real go fails to write it under
 * allowWrite ["~/.config"], which stays writable otherwise); ~/.opam
 * (its switches' bin/ on PATH), $OPAMROOT and $GOROOT (bin/go, go.env)
 * in a writable tree are read-only. On the code before, the real go
 * wrote the host's go env file and the three plants reached the host.
 */
static void test_go_env_opam(void)
{
	const char *env[] = {"OPAMROOT=@w11/opamroot", "GOROOT=@w11/goroot", NULL};
	char pol[PATH_MAX], *out = NULL, *err = NULL;
	bool go = access("/usr/bin/go", X_OK) == 0;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("h11/.config/go") == 0 && mkdirs("h11/.opam/default/bin") == 0 &&
			mkdirs("w11/opamroot/default/bin") == 0 && mkdirs("w11/goroot/bin") == 0 &&
			put("w11/goroot/go.env", "GOTOOLCHAIN=local\n") == 0 &&
			policy(pol, "w11.yaml", "h11/.config,h11/.opam,w11") != NULL);
	st = run_tool("h11", "w11", env, pol,
		      "echo x > ~/.config/other; echo config=$?\n"
		      "echo plant > ~/.config/go/env 2>/dev/null; echo goenv=$?\n"
		      "echo plant > ~/.opam/default/bin/ocaml 2>/dev/null; echo opam=$?\n"
		      "echo plant > $OPAMROOT/default/bin/ocaml 2>/dev/null; echo opamroot=$?\n"
		      "echo GOFLAGS=-toolexec=/x >> $GOROOT/go.env 2>/dev/null; echo goroot=$?\n"
		      "if command -v go >/dev/null; then env -u GOROOT go env -w GOFLAGS=-toolexec=/x >/dev/null 2>&1; "
		      "echo gow=$?; fi\n",
		      &out, &err);
	ROW(st == 0 && test_has(out, "config=0\n"), "~/.config was not writable: %s %s", out ? out : "", err ? err : "");
	ROW(test_has(out, "goenv=") && !test_has(out, "goenv=0") && !exists("h11/.config/go/env"),
	    "~/.config/go/env was writable");
	ROW(test_has(out, "opam=") && !test_has(out, "opam=0") && !exists("h11/.opam/default/bin/ocaml"),
	    "~/.opam was writable");
	ROW(test_has(out, "opamroot=") && !test_has(out, "opamroot=0") && !exists("w11/opamroot/default/bin/ocaml"),
	    "$OPAMROOT was writable");
	{
		char p[PATH_MAX], *t = test_read_file(at(p, "w11/goroot/go.env"), NULL);

		ROW(test_has(out, "goroot=") && !test_has(out, "goroot=0") && t != NULL &&
			    strcmp(t, "GOTOOLCHAIN=local\n") == 0,
		    "$GOROOT/go.env was writable");
		free(t);
	}
	if (go)
		ROW(test_has(out, "gow=") && !test_has(out, "gow=0"), "go env -w wrote the host's go env file");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

TEST_REGISTRAR(register_run_tools)
{
	CU_pSuite s = test_suite("run_tools", suite_init, suite_cleanup);

	test_add(s, "round 44: ~/go/bin, $GOBIN and $GOPATH/bin read-only (go install fails, go build works); "
		    "a writable home still lets go make ~/go",
		 test_go_bin);
	test_add(s, "round 44: a writable home's read-only placeholders (~/.bun, ~/.nvm) named at the start with "
		    "the way to allow one",
		 test_placeholder_notice);
	test_add(s, "round 44: COREPACK_HOME elsewhere and pnpm-workspace.yaml's cacheDir the session's own, its "
		    "storeDir read-only",
		 test_corepack_pnpm_workspace);
	test_add(s, "round 44 and its review: go's build cache the session's own (GOCACHE in the project, "
		    "~/.cache/go-build, $XDG_CACHE_HOME/go-build, go env -w GOCACHE): go build works, the host's unwritten",
		 test_gocache);
	test_add(s, "round 45: pnpm-workspace.yaml read as YAML: cacheDir and storeDir in every form pnpm reads "
		    "taken, the forms passavant cannot follow refuse the start",
		 test_pnpm_workspace_forms);
	test_add(s, "review of round 45: a pnpm-workspace.yaml or .npmrc over 1 MiB, a cacheDir over PATH_MAX, "
		    "refuse the start",
		 test_pnpm_workspace_unread);
	test_add(s, "round 45: NUGET_PACKAGES read-only and named; MSBuild's places in any case read-only, a "
		    "relative one refused",
		 test_dotnet_homes);
	test_add(s, "round 45: GOTMPDIR, npm_config_tmp and java.io.tmpdir the session's /tmp (go run works, the "
		    "host's stay empty)",
		 test_tool_tmpdirs);
	test_add(s, "round 45: an unexpanded placeholder in a tool's home refuses the start naming it; the homes the "
		    "relative table lacked judged",
		 test_placeholders);
	test_add(s, "round 45: ~/.config/go/env (go env -w), ~/.opam, $OPAMROOT and $GOROOT read-only",
		 test_go_env_opam);
}

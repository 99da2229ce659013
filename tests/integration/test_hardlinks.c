/*
 * test_hardlinks.c - a write-denied file with a second hard link on the
 * filesystem of a writable tree (SPEC §3.3, sandbox/links.c), end to end
 * with the real `passavant run`. Before round 48 the start was refused
 * whenever such a file had two links and shared the filesystem of a
 * writable tree, wherever the other name lay: on a one-partition Debian
 * a denyWrite of /usr/bin/perl (or of a directory holding it) refused
 * every run. Now the writable trees are walked for the other names:
 *
 *  - the other name outside the writable trees: the run starts, and the
 *    command cannot give the file a name in its tree (ln, and ln -L of
 *    /proc/self/fd/N, fail with EXDEV, as uid 0 of the sandbox);
 *  - the other name deep inside the working directory, or below a
 *    directory named with a newline and an escape: refused, naming it
 *    (shown with \xNN); the other name covered by a denyWrite of its
 *    own or of a directory above it, or behind a mount of another
 *    filesystem: starts;
 *  - more than 200,000 entries, or more than 128 levels: refused with
 *    the bound in the message;
 *  - on overlayfs (no d_ino shortcut: every regular file stat'ed): the
 *    second name outside starts, inside is refused;
 *  - round 49: the second name in a bind mount of the file's filesystem
 *    inside a working directory on another filesystem: refused; a
 *    directory the walk cannot read (as uid 65534): refused, named.
 *
 * Both names must lie on one filesystem with the writable tree: the
 * suite mounts a tmpfs of its own (unmounted at its end) under /var/tmp.
 * Suite "hardlinks". Without user namespaces, or without the right to
 * mount, every test is skipped with the reason printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define RUN_TIMEOUT_MS 120000

static bool skip;    /* no user namespaces, or no mount */
static bool ready;   /* fixtures up */
static bool mounted; /* root/fs is our tmpfs */
static bool inner;   /* root/fs/w5/mnt is our second tmpfs */
static bool ovl;     /* root/fs/ovl/m is our overlay */
static bool bnd;     /* root/wb/m is our bind of root/fs/bsrc */
static char *root;   /* /var/tmp/pv-hl.XXXXXX */
static unsigned nrun;

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

static int suite_cleanup(void)
{
	char buf[PATH_MAX];

	if (inner && umount2(at(buf, "fs/w5/mnt"), MNT_DETACH) == 0)
		inner = false;
	if (ovl && umount2(at(buf, "fs/ovl/m"), MNT_DETACH) == 0)
		ovl = false;
	if (bnd && umount2(at(buf, "wb/m"), MNT_DETACH) == 0)
		bnd = false;
	if (mounted && umount2(at(buf, "fs"), MNT_DETACH) == 0)
		mounted = false;
	if (mounted || inner || ovl || bnd)
		fprintf(stderr, "hardlinks: cannot unmount the tmpfs under %s: %s\n", root, strerror(errno));
	else
		test_root_done(&root, &ready);
	return 0;
}

static int fixtures_up(void)
{
	char buf[PATH_MAX];

	root = strdup("/var/tmp/pv-hl.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0 || mkdir(at(buf, "fs"), 0755) < 0)
		return -1;
	/* nr_inodes=0: tmpfs counts a hard link as an inode. */
	if (mount("tmpfs", buf, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=256m,nr_inodes=0") < 0) {
		fprintf(stderr, "hardlinks: SKIP: cannot mount a tmpfs at %s: %s\n", buf, strerror(errno));
		skip = true;
		return 0;
	}
	mounted = true;
	return test_mkdirs_at(root, "fs/home") < 0 || test_mkdirs_at(root, "fs/keep") < 0 ||
			       test_mkdirs_at(root, "fs/other") < 0
		       ? -1
		       : 0;
}

static int suite_init(void)
{
	int gate;

	if (ready || skip)
		return 0;
	gate = test_sandbox_gate("hardlinks");
	if (gate <= 0) {
		skip = gate == 0;
		return gate;
	}
	if (test_suite_fixtures(&ready, "hardlinks", fixtures_up, suite_cleanup) < 0)
		return -1;
	if (skip) /* no tmpfs: the tree goes, the tests skip */
		(void)suite_cleanup();
	return 0;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* Makes root/rel holding text, and the hard link root/other of it. */
static int linked(const char *rel, const char *other, const char *text)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (test_write_file(at(a, rel), text, strlen(text)) < 0)
		return -1;
	return link(a, at(b, other));
}

/*
 * `passavant run` in root/cwd (HOME root/fs/home) under a policy whose
 * filesystem section allows writes to root/cwd, then holds fs (each %1$s
 * the root), the script (written to
 * root/hl-N.sh). The exit status.
 */
static int run_hl(const char *cwd, const char *fs, const char *script, char **out, char **err)
{
	char wd[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], name[64], text[8192];
	struct test_sbx_run r = {at(wd, cwd), at(home, "fs/home"), NULL, pol, sc, NULL, NULL};
	int n;

	*out = *err = NULL;
	snprintf(name, sizeof(name), "hl-%u.sh", nrun);
	if (test_write_file(at(sc, name), script, strlen(script)) < 0)
		return -1;
	snprintf(name, sizeof(name), "hl-%u.yaml", nrun++);
	n = snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [\"%s\"]\n", wd);
	n += snprintf(text + n, sizeof(text) - (size_t)n, fs, root);
	if (n >= (int)sizeof(text) || test_write_file(at(pol, name), text, (size_t)n) < 0)
		return -1;
	return test_sbx_run(&r, out, err, RUN_TIMEOUT_MS);
}

static void started(const char *what, int st, const char *out, const char *err)
{
	ROW(st == 0 && test_has(out, "ran"), "%s: status %d, stdout %s, stderr %s", what, st, test_nz(out),
	    test_nz(err));
}

static void refused(const char *what, int st, const char *out, const char *err, const char *w1, const char *w2)
{
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, w1) && test_has(err, w2),
	    "%s: status %d, stdout %s, stderr %s", what, st, test_nz(out), test_nz(err));
}

/*
 * (1) A denyWrite file with a second name outside every writable tree on
 * the writable tree's filesystem (/usr/bin/perl and /usr/bin/perl5.36.0
 * on a one-partition machine): the run starts (refused before: "another
 * may lie in ..."). The command, uid 0 in the sandbox, cannot make a new
 * name in its tree: ln from the denied name, from the other (read-only)
 * one, and ln -L of /proc/self/fd/3 open on it all fail with EXDEV; the
 * file is unchanged.
 */
static void test_other_name_outside(void)
{
	char buf[PATH_MAX], *out, *err, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w1") == 0 &&
			linked("fs/keep/perl", "fs/other/perl5.36.0", "#!/bin/sh\necho host-perl\n") == 0);
	st = run_hl("fs/w1", "  denyWrite: [\"%1$s/fs/keep/perl\"]\n",
		    "echo ran; echo uid=$(id -u)\n"
		    "ln ../keep/perl x1 2>&1; echo ln1=$?\n"
		    "ln ../other/perl5.36.0 x2 2>&1; echo ln2=$?\n"
		    "exec 3<../keep/perl; ln -L /proc/self/fd/3 x3 2>&1; echo ln3=$?\n"
		    "echo evil >> ../keep/perl 2>/dev/null; ls; echo done\n",
		    &out, &err);
	started("a denyWrite file whose second name lies outside the writable tree", st, out, err);
	ROW(test_has(out, "uid=0"), "the command is not uid 0 in the sandbox: %s", test_nz(out));
	ROW(test_has(out, "ln1=1") && test_has(out, "ln2=1") && test_has(out, "ln3=1") &&
		    test_has(out, "cross-device") && !test_has(out, "x1\n") && !test_has(out, "x3\n"),
	    "a new name of the file in the writable tree did not fail with EXDEV: %s", test_nz(out));
	text = test_read_file(at(buf, "fs/keep/perl"), NULL);
	ROW(text != NULL && strcmp(text, "#!/bin/sh\necho host-perl\n") == 0, "the denied file changed: %s",
	    test_nz(text));
	free(text);
	free(out);
	free(err);
}

/*
 * (2) The second name deep in the working directory: refused, naming it
 * (relative to the tree) and the tree; the file unchanged. (3) Below a
 * directory named with a newline and an ESC (a terminal escape): refused,
 * both shown as \xNN, no raw ESC on stderr.
 */
static void test_other_name_inside(void)
{
	char buf[PATH_MAX], *out, *err, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w2/a/b/c/d/e/f/g") == 0 &&
			linked("fs/keep/gunzip", "fs/w2/a/b/c/d/e/f/g/gz", "#!/bin/sh\necho host-gunzip\n") == 0);
	st = run_hl("fs/w2", "  denyWrite: [\"%1$s/fs/keep/gunzip\"]\n",
		    "echo ran; echo evil >> a/b/c/d/e/f/g/gz; echo done\n", &out, &err);
	refused("the second name deep in the working directory", st, out, err, "a/b/c/d/e/f/g/gz",
		"another name of it");
	ROW(test_has(err, "/fs/keep/gunzip") && test_has(err, "/fs/w2") && test_has(err, "hard links"),
	    "the refusal names neither the file nor the tree: %s", test_nz(err));
	text = test_read_file(at(buf, "fs/keep/gunzip"), NULL);
	ROW(text != NULL && strcmp(text, "#!/bin/sh\necho host-gunzip\n") == 0, "the denied file changed: %s",
	    test_nz(text));
	free(text);
	free(out);
	free(err);

	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w3/n\nl/\033[31mx/y") == 0 &&
			linked("fs/keep/bzip2", "fs/w3/n\nl/\033[31mx/y/bz", "#!/bin/sh\n") == 0);
	st = run_hl("fs/w3", "  denyWrite: [\"%1$s/fs/keep/bzip2\"]\n", "echo ran\n", &out, &err);
	refused("the second name below a directory named with a newline and ESC", st, out, err,
		"n\\x0al/\\x1b[31mx/y/bz", "/fs/keep/bzip2");
	ROW(!test_has(err, "\033"), "a raw ESC on stderr: %s", test_nz(err));
	free(out);
	free(err);
}

/*
 * The second names in the writable tree but covered by the plan: a
 * denyWrite of the name itself, or of a directory above it (not so
 * covered: refused); and a second name behind a mount of another
 * filesystem inside the tree (the walk does not enter it, and the name
 * it hides is hidden in the sandbox too): the run starts, the file
 * unchanged through every name.
 */
static void test_other_name_covered(void)
{
	char buf[PATH_MAX], b2[PATH_MAX], *out, *err, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w4/sub") == 0 && test_mkdirs_at(root, "fs/w4/hid") == 0 &&
			linked("fs/keep/unzip", "fs/w4/sub/unzip", "unzip\n") == 0 &&
			link(at(buf, "fs/keep/unzip"), at(b2, "fs/w4/hid/uz")) == 0);
	st = run_hl("fs/w4",
		    "  denyWrite: [\"%1$s/fs/keep/unzip\", \"%1$s/fs/w4/sub/unzip\", \"%1$s/fs/w4/hid\"]\n",
		    "echo ran; echo evil >> sub/unzip; echo evil >> hid/uz; echo done\n", &out, &err);
	started("the second names denied by rules of their own", st, out, err);
	text = test_read_file(at(buf, "fs/keep/unzip"), NULL);
	ROW(text != NULL && strcmp(text, "unzip\n") == 0, "the denied file changed: %s", test_nz(text));
	free(text);
	free(out);
	free(err);

	/* The same without the directory's rule: hid/uz is found. */
	st = run_hl("fs/w4", "  denyWrite: [\"%1$s/fs/keep/unzip\", \"%1$s/fs/w4/sub/unzip\"]\n", "echo ran\n", &out,
		    &err);
	refused("a second name not covered beside one covered", st, out, err, "another name of it, hid/uz, lies in", "unzip: it has 3 hard links");
	free(out);
	free(err);

	/* Behind a tmpfs mounted inside the tree: not entered, hidden. */
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w5/mnt") == 0 && linked("fs/keep/zcat", "fs/w5/mnt/zc", "zcat\n") == 0);
	CU_ASSERT_FATAL(mount("tmpfs", at(buf, "fs/w5/mnt"), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") == 0);
	inner = true;
	st = run_hl("fs/w5", "  denyWrite: [\"%1$s/fs/keep/zcat\"]\n",
		    "echo ran; echo evil >> mnt/zc; ls mnt; echo done\n", &out, &err);
	started("a second name hidden by a mount of another filesystem in the tree", st, out, err);
	if (umount2(at(buf, "fs/w5/mnt"), MNT_DETACH) == 0)
		inner = false;
	text = test_read_file(at(buf, "fs/keep/zcat"), NULL);
	ROW(text != NULL && strcmp(text, "zcat\n") == 0, "the denied file changed: %s", test_nz(text));
	free(text);
	free(out);
	free(err);
}

/*
 * (4) The walk's bounds, each failing closed with the limit in the
 * message: 200,001 entries in the working directory (hard links of one
 * unrelated file: a dentry each), the second name outside; a tree 129
 * directories deep.
 */
static void test_bounds(void)
{
	char buf[PATH_MAX], b2[PATH_MAX], rel[64], *out, *err;
	struct timespec t0, t1;
	int st, made = 0;
	double ms;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w6") == 0 && linked("fs/keep/xz", "fs/other/xz", "xz\n") == 0 &&
			test_write_file(at(buf, "fs/w6/f0"), "", 0) == 0);
	for (int i = 1; i < 200001 && made == i - 1; i++) {
		snprintf(rel, sizeof(rel), "fs/w6/f%d", i);
		made += link(buf, at(b2, rel)) == 0;
	}
	CU_ASSERT_FATAL(made == 200000);
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	st = run_hl("fs/w6", "  denyWrite: [\"%1$s/fs/keep/xz\"]\n", "echo ran\n", &out, &err);
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	refused("a working directory of 200,001 entries", st, out, err, "more than 200000 entries", "/fs/keep/xz");
	ROW(test_has(err, "replace the extra links by copies"), "the refusal says not what to do: %s", test_nz(err));
	ROW(ms < 30000, "the refusal took %.0f ms", ms);
	free(out);
	free(err);

	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w7") == 0);
	{
		char deep[PATH_MAX] = "fs/w7";
		size_t n = strlen(deep);

		for (int i = 0; i < 129; i++)
			n += (size_t)snprintf(deep + n, sizeof(deep) - n, "/d");
		CU_ASSERT_FATAL(test_mkdirs_at(root, deep) == 0);
	}
	st = run_hl("fs/w7", "  denyWrite: [\"%1$s/fs/keep/xz\"]\n", "echo ran\n", &out, &err);
	refused("a working directory 129 levels deep", st, out, err, "deeper than 128 directories", "/fs/keep/xz");
	free(out);
	free(err);
}

/*
 * On overlayfs, whose d_ino the walk does not trust (every regular file
 * is stat'ed there): the second name outside the writable tree starts,
 * inside it is refused, naming it.
 */
static void test_overlay(void)
{
	char lo[PATH_MAX], up[PATH_MAX], wk[PATH_MAX], m[PATH_MAX], opts[4 * PATH_MAX], *out, *err;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/ovl/lower") == 0 && test_mkdirs_at(root, "fs/ovl/upper") == 0 &&
			test_mkdirs_at(root, "fs/ovl/work") == 0 && test_mkdirs_at(root, "fs/ovl/m") == 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", at(lo, "fs/ovl/lower"),
		 at(up, "fs/ovl/upper"), at(wk, "fs/ovl/work"));
	if (mount("overlay", at(m, "fs/ovl/m"), "overlay", 0, opts) < 0) {
		TEST_SKIP("cannot mount an overlay: %s", strerror(errno));
		return;
	}
	ovl = true;
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/ovl/m/keep") == 0 && test_mkdirs_at(root, "fs/ovl/m/w/p/q") == 0 &&
			test_mkdirs_at(root, "fs/ovl/m/other") == 0 &&
			linked("fs/ovl/m/keep/lib.so", "fs/ovl/m/other/lib.so.1", "ELF\n") == 0);
	st = run_hl("fs/ovl/m/w", "  denyWrite: [\"%1$s/fs/ovl/m/keep/lib.so\"]\n", "echo ran\n", &out, &err);
	started("on overlayfs, the second name outside the writable tree", st, out, err);
	free(out);
	free(err);
	CU_ASSERT_FATAL(link(at(lo, "fs/ovl/m/keep/lib.so"), at(up, "fs/ovl/m/w/p/q/lib.so.2")) == 0);
	st = run_hl("fs/ovl/m/w", "  denyWrite: [\"%1$s/fs/ovl/m/keep/lib.so\"]\n", "echo ran\n", &out, &err);
	refused("on overlayfs, the second name in the writable tree", st, out, err, "another name of it, p/q/lib.so.2",
		"/fs/ovl/m/keep/lib.so");
	free(out);
	free(err);
	if (umount2(m, MNT_DETACH) == 0)
		ovl = false;
}

/*
 * Round 49 (attack49s): a writable tree on another filesystem than the
 * write-denied file's, holding a mount of the file's filesystem (a bind
 * mount of a directory of it): the second name there was not looked for
 * (the walk took only trees on the file's own filesystem, and did not
 * enter a mount of another one), the run started, and the command wrote
 * the denied file through it. Now the mounts in a writable tree are
 * walked too: refused, naming the name and the mount. The working
 * directory root/wb is on /var/tmp's filesystem, the file and its second
 * name on the suite's tmpfs, root/fs/bsrc bound on root/wb/m. Checked
 * failing on 176e287: "started", and the file holds "evil".
 */
static void test_other_name_in_a_mount(void)
{
	char buf[PATH_MAX], b2[PATH_MAX], *out, *err, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/bsrc/sub") == 0 && test_mkdirs_at(root, "wb/m") == 0 &&
			linked("fs/keep/nano", "fs/bsrc/sub/nano", "#!/bin/sh\necho host-nano\n") == 0);
	CU_ASSERT_FATAL(mount(at(buf, "fs/bsrc"), at(b2, "wb/m"), NULL, MS_BIND, NULL) == 0);
	bnd = true;
	st = run_hl("wb", "  denyWrite: [\"%1$s/fs/keep/nano\"]\n",
		    "echo ran; echo evil >> m/sub/nano; echo done\n", &out, &err);
	if (umount2(at(buf, "wb/m"), MNT_DETACH) == 0)
		bnd = false;
	refused("a second name in a bind mount of the file's filesystem in a tree on another one", st, out, err,
		"another name of it, sub/nano, lies in", "/wb/m");
	ROW(test_has(err, "/fs/keep/nano"), "the refusal does not name the denied file: %s", test_nz(err));
	text = test_read_file(at(buf, "fs/keep/nano"), NULL);
	ROW(text != NULL && strcmp(text, "#!/bin/sh\necho host-nano\n") == 0, "the denied file changed: %s",
	    test_nz(text));
	free(text);
	free(out);
	free(err);
}

/*
 * links48's other untested branch: a directory of the writable tree that
 * the walk cannot read (mode 000, the user's own: the command could
 * chmod it and write a second name inside). As uid 65534 (setpriv; the
 * walk runs as the user, and root reads any directory): the start is
 * refused naming the directory and what to do, whether a second name
 * lies in it or outside the tree (fail closed); the same tree readable with the second
 * name in it is refused naming that name.
 */
static void test_unreadable_dir(void)
{
	char wd[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], st_env[PATH_MAX + 32], home[PATH_MAX + 8], bin[PATH_MAX];
	char buf[PATH_MAX], text[PATH_MAX + 128], *out = NULL, *err = NULL;
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", "-C", wd, home,
			"PATH=" TEST_SAFE_PATH, "TMPDIR=/tmp", st_env, bin, "run", "-p", pol, "--", "sh", sc, NULL};
	int st, n;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("needs root and setpriv to become uid 65534");
		return;
	}
	CU_ASSERT_FATAL(test_mkdirs_at(root, "fs/w9/locked") == 0 && test_mkdirs_at(root, "fs/st9") == 0 &&
			linked("fs/keep/less", "fs/w9/locked/less", "less\n") == 0);
	CU_ASSERT_FATAL(chown(at(buf, "fs/w9"), 65534, 65534) == 0 && chown(at(buf, "fs/w9/locked"), 65534, 65534) == 0 &&
			chown(at(buf, "fs/st9"), 65534, 65534) == 0 && chmod(at(buf, "fs/w9/locked"), 0) == 0);
	CU_ASSERT_FATAL(test_copy_file(test_passavant_bin(), at(bin, "passavant"), 0755) == 0);
	at(wd, "fs/w9");
	snprintf(home, sizeof(home), "HOME=%s", at(buf, "fs/home"));
	snprintf(st_env, sizeof(st_env), "XDG_STATE_HOME=%s", at(buf, "fs/st9"));
	CU_ASSERT_FATAL(test_write_file(at(sc, "hl-u.sh"), "echo ran\n", 9) == 0 && chmod(sc, 0644) == 0);
	n = snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [\"%s\"]\n  denyWrite: [\"%s\"]\n", wd,
		     at(buf, "fs/keep/less"));
	CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof(text) && test_write_file(at(pol, "hl-u.yaml"), text, (size_t)n) == 0 &&
			chmod(pol, 0644) == 0);
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	refused("a directory the walk cannot read, the second name in it", st, out, err, "/fs/w9/locked cannot be read",
		"make it readable");
	free(out);
	free(err);
	/* the second name outside, none in it: refused all the same (what
	 * it holds is unknown) */
	CU_ASSERT_FATAL(link(at(buf, "fs/keep/less"), at(sc, "fs/other/less9")) == 0);
	CU_ASSERT_FATAL(chmod(at(buf, "fs/w9/locked"), 0755) == 0 && unlink(at(buf, "fs/w9/locked/less")) == 0 &&
			chmod(at(buf, "fs/w9/locked"), 0) == 0);
	at(sc, "hl-u.sh");
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	refused("a directory the walk cannot read, empty", st, out, err, "/fs/w9/locked cannot be read", "/fs/keep/less");
	free(out);
	free(err);
	/* readable, the second name in it: named */
	CU_ASSERT_FATAL(chmod(at(buf, "fs/w9/locked"), 0755) == 0 &&
			link(at(buf, "fs/keep/less"), at(sc, "fs/w9/locked/less")) == 0);
	at(sc, "hl-u.sh");
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	refused("a readable directory, the second name in it", st, out, err, "another name of it, locked/less, lies in",
		"/fs/keep/less");
	free(out);
	free(err);
}

TEST_REGISTRAR(register_hardlinks)
{
	CU_pSuite s = test_suite("hardlinks", suite_init, suite_cleanup);

	test_add(s, "a denyWrite file whose second name lies outside the writable trees: starts; ln into the tree "
		 "fails with EXDEV",
		 test_other_name_outside);
	test_add(s, "a second name deep in the working directory, or below a name with a newline and ESC: refused, "
		 "named, shown with \\xNN",
		 test_other_name_inside);
	test_add(s, "a second name covered by a rule of its own, or behind a mount in the tree: starts",
		 test_other_name_covered);
	test_add(s, "the walk's bounds: 200,001 entries, 129 levels: refused with the limit", test_bounds);
	test_add(s, "on overlayfs (every file stat'ed): outside starts, inside refused", test_overlay);
	test_add(s, "round 49: a second name in a bind mount of the file's filesystem in a tree on another one: refused",
		 test_other_name_in_a_mount);
	test_add(s, "a directory of the tree the walk cannot read (uid 65534): refused, named", test_unreadable_dir);
}

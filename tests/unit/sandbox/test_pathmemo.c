/*
 * test_pathmemo.c - sandbox/pathmemo.c, the mount plan's memo of what it
 * has seen of the host, and sandbox/links.c walking with it. Suite
 * "sandbox_pathmemo". The memo must answer as the kernel does, look at
 * each path once, and never let the link check of SPEC §3.3 pass where
 * a walk without it would refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"
#include "tests/support/testlib.h"

/* The test tree (made by tree_new()):
 *   T/ro/dir/file        a read-only place (not in the writable set)
 *   T/ro/rel -> dir      a relative link to a directory
 *   T/ro/abs -> T/ro/dir an absolute one
 *   T/ro/dangling -> missing
 *   T/ro/loop -> loop
 *   T/ro/empty -> ""     (not made: symlink() refuses an empty target)
 *   T/w/                 the writable tree
 *   T/w/sub/deep/
 *   T/w/home -> T/ro/dir a link the sandbox could have planted
 */
static char *tree_new(void)
{
	char *t = test_mkdtemp();
	char p[PATH_MAX], q[PATH_MAX];

	CU_ASSERT_FATAL(t != NULL);
	snprintf(p, sizeof(p), "%s/ro", t);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/ro/dir", t);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/ro/dir/file", t);
	CU_ASSERT_FATAL(test_write_file(p, "x", 1) == 0);
	snprintf(p, sizeof(p), "%s/ro/rel", t);
	CU_ASSERT_FATAL(symlink("dir", p) == 0);
	snprintf(p, sizeof(p), "%s/ro/abs", t);
	snprintf(q, sizeof(q), "%s/ro/dir", t);
	CU_ASSERT_FATAL(symlink(q, p) == 0);
	snprintf(p, sizeof(p), "%s/ro/dangling", t);
	CU_ASSERT_FATAL(symlink("missing", p) == 0);
	snprintf(p, sizeof(p), "%s/ro/loop", t);
	CU_ASSERT_FATAL(symlink("loop", p) == 0);
	snprintf(p, sizeof(p), "%s/w", t);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/w/sub", t);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/w/sub/deep", t);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/w/home", t);
	CU_ASSERT_FATAL(symlink(q, p) == 0);
	return t;
}

static void tree_free(char *t)
{
	test_rmtree(t);
	free(t);
}

/* sbx_memo_realpath() against realpath(3), sbx_memo_stat() against
 * stat(2) and sbx_memo_lstat() against lstat(2): same result and errno,
 * asked twice (the second answer comes from the memo). */
static void test_same_as_kernel(void)
{
	static const char *const rel[] = {
		"", "/ro", "/ro/dir", "/ro/dir/file", "/ro/rel", "/ro/rel/file", "/ro/abs/file",
		"/ro/rel/../dir/file", "/ro/abs/..", "/ro/dangling", "/ro/dangling/x", "/ro/loop",
		"/ro/loop/x", "/ro/dir/file/x", "/ro/dir/file/", "/ro/dir/file/.", "/ro/dir/file/..",
		"/ro/missing", "/ro/missing/x/y", "/ro/missing/../dir", "/ro//dir/./file",
		"/w/home/file", "/w/sub/deep/../../home", "/ro/rel/",
	};
	char *t = tree_new();
	struct sbx_memo *m = sbx_memo_new();

	CU_ASSERT_FATAL(m != NULL);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < ARRAY_LEN(rel); i++) {
			char p[PATH_MAX];
			struct stat a, b;
			char *ra, *rb;
			int ea, eb, sa, sb;

			snprintf(p, sizeof(p), "%s%s", t, rel[i]);
			errno = 0;
			ra = realpath(p, NULL);
			ea = errno;
			errno = 0;
			rb = sbx_memo_realpath(m, p);
			eb = errno;
			CU_ASSERT((ra == NULL) == (rb == NULL));
			if (ra != NULL && rb != NULL)
				CU_ASSERT_STRING_EQUAL(ra, rb);
			if (ra == NULL && rb == NULL)
				CU_ASSERT_EQUAL(ea, eb);
			if ((ra == NULL) != (rb == NULL) || (ra == NULL && ea != eb) ||
			    (ra != NULL && rb != NULL && strcmp(ra, rb) != 0))
				fprintf(stderr, "realpath %s: %s (%d) vs %s (%d)\n", rel[i],
					ra ? ra : "NULL", ea, rb ? rb : "NULL", eb);
			free(ra);
			free(rb);
			sa = stat(p, &a) == 0 ? 0 : errno;
			sb = sbx_memo_stat(m, p, &b) == 0 ? 0 : errno;
			CU_ASSERT_EQUAL(sa, sb);
			if (sa == 0 && sb == 0)
				CU_ASSERT(a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_mode == b.st_mode);
			sa = lstat(p, &a) == 0 ? 0 : errno;
			sb = sbx_memo_lstat(m, p, &b) == 0 ? 0 : errno;
			CU_ASSERT_EQUAL(sa, sb);
			if (sa == 0 && sb == 0)
				CU_ASSERT(a.st_ino == b.st_ino && a.st_mode == b.st_mode);
		}
	}
	/* readlink: the target, truncated like readlink(2); EINVAL for a
	 * non-link, the lstat error for a missing path. */
	{
		char p[PATH_MAX], buf[8];
		ssize_t n;

		snprintf(p, sizeof(p), "%s/ro/dangling", t);
		n = sbx_memo_readlink(m, p, buf, sizeof(buf));
		CU_ASSERT(n == 7 && memcmp(buf, "missing", 7) == 0);
		n = sbx_memo_readlink(m, p, buf, 3);
		CU_ASSERT(n == 3 && memcmp(buf, "mis", 3) == 0);
		snprintf(p, sizeof(p), "%s/ro/dir", t);
		errno = 0;
		CU_ASSERT(sbx_memo_readlink(m, p, buf, sizeof(buf)) == -1 && errno == EINVAL);
		snprintf(p, sizeof(p), "%s/ro/nothing", t);
		errno = 0;
		CU_ASSERT(sbx_memo_readlink(m, p, buf, sizeof(buf)) == -1 && errno == ENOENT);
	}
	sbx_memo_free(m);
	sbx_memo_free(NULL);
	tree_free(t);
}

/* Each path is looked at once: a hundred rows under one directory cost
 * one look each and none at the directories above them, however often
 * they are asked; rows under a missing directory cost nothing more. */
static void test_looks_once(void)
{
	char *t = tree_new();
	struct sbx_memo *m = sbx_memo_new();
	char p[PATH_MAX], *r;
	struct stat st;
	size_t before, depth = 0;

	CU_ASSERT_FATAL(m != NULL);
	for (const char *c = t; *c != '\0'; c++)
		depth += *c == '/';
	snprintf(p, sizeof(p), "%s/ro/dir/file", t);
	r = sbx_memo_realpath(m, p);
	CU_ASSERT_PTR_NOT_NULL(r);
	free(r);
	/* Every component of T, then ro, dir, file. */
	CU_ASSERT_EQUAL(sbx_memo_calls(m), depth + 3);
	before = sbx_memo_calls(m);
	for (int i = 0; i < 100; i++) {
		snprintf(p, sizeof(p), "%s/ro/dir/.row%d", t, i);
		CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOENT);
		CU_ASSERT(sbx_memo_stat(m, p, &st) == -1 && errno == ENOENT);
		r = sbx_memo_realpath(m, p);
		CU_ASSERT(r == NULL && errno == ENOENT);
	}
	CU_ASSERT_EQUAL(sbx_memo_calls(m) - before, 100);
	/* Under a missing directory: known missing without a look. */
	snprintf(p, sizeof(p), "%s/ro/dir/.row7/a/b", t);
	CU_ASSERT(sbx_memo_stat(m, p, &st) == -1 && errno == ENOENT);
	/* Under a regular file: ENOTDIR, as the kernel says. */
	snprintf(p, sizeof(p), "%s/ro/dir/file/a", t);
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOTDIR);
	snprintf(p, sizeof(p), "%s/ro/dir/file/a/b", t);
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOTDIR);
	CU_ASSERT_EQUAL(sbx_memo_calls(m) - before, 101);
	sbx_memo_free(m);
	tree_free(t);
}

/* After sbx_memo_changed(), what was missing is looked at again: the
 * plan's own placeholder is seen, under its name and under another
 * spelling (through a link); what existed is not looked at again. */
static void test_changed(void)
{
	char *t = tree_new();
	struct sbx_memo *m = sbx_memo_new();
	char p[PATH_MAX], via[PATH_MAX];
	struct stat st;
	size_t before;

	CU_ASSERT_FATAL(m != NULL);
	snprintf(p, sizeof(p), "%s/ro/dir/new", t);
	snprintf(via, sizeof(via), "%s/ro/rel/new/x", t);
	/* Walked: T's components, ro, dir are in the memo, new missing. */
	CU_ASSERT(sbx_memo_realpath(m, p) == NULL && errno == ENOENT);
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOENT);
	CU_ASSERT(sbx_memo_stat(m, via, &st) == -1 && errno == ENOENT);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	/* Not told yet: the memo still answers from its look. */
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOENT);
	sbx_memo_changed(m);
	before = sbx_memo_calls(m);
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == 0 && S_ISDIR(st.st_mode));
	/* The directory above is not looked at again. */
	snprintf(p, sizeof(p), "%s/ro/dir", t);
	CU_ASSERT(sbx_memo_lstat(m, p, &st) == 0);
	CU_ASSERT_EQUAL(sbx_memo_calls(m) - before, 1);
	/* via's parent, through the link, exists now: via is looked at
	 * (missing still, but from the kernel, not from the old look). */
	CU_ASSERT(sbx_memo_stat(m, via, &st) == -1 && errno == ENOENT);
	CU_ASSERT_EQUAL(sbx_memo_calls(m) - before, 2);
	snprintf(via, sizeof(via), "%s/ro/rel/new", t);
	CU_ASSERT(sbx_memo_stat(m, via, &st) == 0 && S_ISDIR(st.st_mode));
	sbx_memo_free(m);
	tree_free(t);
}

/* A builder whose writable set is T/w (canonical), with a memo. */
static void builder_init(struct sbx_builder *b, const char *t, char *w, size_t wlen, char **wl)
{
	char *real;

	memset(b, 0, sizeof(*b));
	snprintf(w, wlen, "%s/w", t);
	real = realpath(w, NULL);
	CU_ASSERT_FATAL(real != NULL);
	snprintf(w, wlen, "%s", real);
	free(real);
	wl[0] = w;
	b->writable = wl;
	b->n_writable = 1;
	b->memo = sbx_memo_new();
	CU_ASSERT_FATAL(b->memo != NULL);
}

/*
 * SPEC §3.3 with the memo: once a directory is known link-free, a path
 * through a link below it, or through a link that sits where the memo
 * saw nothing, is still refused, every time it is asked; and a link
 * planted between two plans is refused by the next one.
 */
static void test_links_refused(void)
{
	char *t = tree_new();
	struct sbx_builder b;
	char w[PATH_MAX], p[PATH_MAX], q[PATH_MAX], err[512], *wl[2] = {NULL, NULL};

	builder_init(&b, t, w, sizeof(w), wl);
	/* The writable tree and a path below it: no link, fine, and every
	 * directory of it is in the memo now. */
	snprintf(p, sizeof(p), "%s/w/sub/deep/x", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), 0);
	/* A link in the writable tree below the clean prefix: refused, and
	 * again when asked a second time (no verdict is remembered). */
	snprintf(p, sizeof(p), "%s/w/home/file", t);
	for (int i = 0; i < 2; i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "a symbolic link in"));
	}
	/* Through a link in a read-only place into the writable tree, then
	 * the planted one: refused too. */
	snprintf(q, sizeof(q), "%s/ro/w2", t);
	CU_ASSERT_FATAL(symlink(w, q) == 0);
	snprintf(p, sizeof(p), "%s/ro/w2/home/file", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), -1);
	/* Seen missing, then a link made there (only the plan's own
	 * placeholders are made during a plan, and each is announced): the
	 * walk below it is refused. */
	snprintf(p, sizeof(p), "%s/w/sub/later/x", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), 0);
	snprintf(q, sizeof(q), "%s/w/sub/later", t);
	CU_ASSERT_FATAL(symlink("/", q) == 0);
	sbx_memo_changed(b.memo);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), -1);
	sbx_memo_free(b.memo);
	/* A prefix the last plan saw as a directory is a link now (planted
	 * between two runs): the next plan has a new memo and refuses. */
	snprintf(p, sizeof(p), "%s/w/sub/deep", t);
	snprintf(q, sizeof(q), "%s/w/sub/deep.old", t);
	CU_ASSERT_FATAL(rename(p, q) == 0);
	snprintf(q, sizeof(q), "%s/ro/dir", t);
	CU_ASSERT_FATAL(symlink(q, p) == 0);
	builder_init(&b, t, w, sizeof(w), wl);
	snprintf(p, sizeof(p), "%s/w/sub/deep/x", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), -1);
	/* A link in the read-only place is followed (and the memo makes no
	 * difference to that). */
	snprintf(p, sizeof(p), "%s/ro/rel/file", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), 0);
	sbx_memo_free(b.memo);
	/* The same answers without a memo. */
	b.memo = NULL;
	snprintf(p, sizeof(p), "%s/w/home/file", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), -1);
	snprintf(p, sizeof(p), "%s/ro/rel/file", t);
	CU_ASSERT_EQUAL(sbx_check_links(&b, "deny_write", p, err, sizeof(err)), 0);
	tree_free(t);
}

/* The table grows past its first size and keeps every entry. */
static void test_many(void)
{
	char *t = tree_new();
	struct sbx_memo *m = sbx_memo_new();
	char p[PATH_MAX];
	struct stat st;
	size_t before;

	CU_ASSERT_FATAL(m != NULL);
	for (int i = 0; i < 2000; i++) {
		snprintf(p, sizeof(p), "%s/ro/dir/n%d", t, i);
		CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1);
	}
	before = sbx_memo_calls(m);
	for (int i = 0; i < 2000; i++) {
		snprintf(p, sizeof(p), "%s/ro/dir/n%d", t, i);
		CU_ASSERT(sbx_memo_lstat(m, p, &st) == -1 && errno == ENOENT);
	}
	CU_ASSERT_EQUAL(sbx_memo_calls(m), before);
	sbx_memo_free(m);
	tree_free(t);
}

TEST_REGISTRAR(sandbox_pathmemo_register)
{
	CU_pSuite s = test_suite("sandbox_pathmemo", NULL, NULL);

	test_add(s, "memo answers as lstat, stat, readlink, realpath do", test_same_as_kernel);
	test_add(s, "each path looked at once", test_looks_once);
	test_add(s, "sbx_memo_changed redoes failed looks only", test_changed);
	test_add(s, "links in writable trees refused with the memo", test_links_refused);
	test_add(s, "the table grows", test_many);
}

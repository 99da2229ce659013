/*
 * test_gitindex.c - sandbox/gitindex.c: an index written in the session
 * rewritten (file and link sizes 0, optional extensions dropped, the
 * checksum new, the mode kept), one whose checksum does not match moved
 * aside, bits with no work tree moved aside, every cut of an index
 * refused without a read past it, and a Mercurial dirstate's normal
 * entries set to be looked up. Suite "sandbox_gitindex". The wire tests
 * are in tests/integration/test_gitguard.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../sandbox/gitindex.c"
#include "tests/support/testlib.h"

static unsigned nreports;
static char last_report[1024];

static void on_report(void *arg, const struct sbx_git_finding *f)
{
	(void)arg;
	nreports++;
	snprintf(last_report, sizeof(last_report), "%s: %s", f->path, f->setting ? f->setting : f->error);
}

/* Writes [buf, buf + len) to dfd/name (replaced) with mode. 0, or -1. */
static int write_at(int dfd, const char *name, const unsigned char *buf, size_t len, mode_t mode)
{
	int fd, rc;

	(void)unlinkat(dfd, name, 0);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	rc = fchmod(fd, mode) == 0 && write(fd, buf, len) == (ssize_t)len ? 0 : -1;
	(void)close(fd);
	return rc;
}

/* One version 2 entry: mode, size, flags (name length added), name. */
static size_t entry(unsigned char *b, size_t off, uint32_t mode, uint32_t size, uint16_t flags, const char *name)
{
	size_t start = off, nl = strlen(name);

	memset(b + off, 0, 62);
	put_be32(b + off + 8, 1700000000u); /* mtime */
	put_be32(b + off + 24, mode);
	put_be32(b + off + 36, size);
	memset(b + off + 40, 0xab, 20);
	flags = (uint16_t)(flags | nl);
	b[off + 60] = (unsigned char)(flags >> 8);
	b[off + 61] = (unsigned char)flags;
	off += 62;
	memcpy(b + off, name, nl);
	off += nl;
	do
		b[off++] = 0;
	while ((off - start) % 8 != 0);
	return off;
}

static size_t ext(unsigned char *b, size_t off, const char *sig, size_t len)
{
	memcpy(b + off, sig, 4);
	put_be32(b + off + 4, (uint32_t)len);
	memset(b + off + 8, 'x', len);
	return off + 8 + len;
}

/* An index of a file (size 5), a link (3), a gitlink (0), flags on the
 * file; TREE, a required "sdir", UNTR, REUC; its SHA-1. Its length. */
static size_t make_index(unsigned char *b, uint16_t file_flags)
{
	size_t off = 12;
	unsigned int n;

	memcpy(b, "DIRC", 4);
	put_be32(b + 4, 2);
	put_be32(b + 8, 3);
	off = entry(b, off, 0100644, 5, file_flags, "a.py");
	off = entry(b, off, 0120000, 3, 0, "link");
	off = entry(b, off, 0160000, 0, 0, "sub");
	off = ext(b, off, "TREE", 10);
	off = ext(b, off, "sdir", 0);
	off = ext(b, off, "UNTR", 7);
	off = ext(b, off, "REUC", 6);
	CU_ASSERT_FATAL(EVP_Digest(b, off, b + off, &n, EVP_sha1(), NULL) == 1);
	return off + 20;
}

struct fixture {
	char *dir;
	int gfd;
	struct gg g;
	struct sbx_git_stats st;
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->dir = test_mkdtemp();
	CU_ASSERT_FATAL(f->dir != NULL);
	snprintf(f->g.path, sizeof(f->g.path), "%s/.git", f->dir);
	CU_ASSERT_FATAL(mkdir(f->g.path, 0755) == 0);
	f->gfd = open(f->g.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(f->gfd >= 0);
	f->g.report = on_report;
	f->g.st = &f->st; /* since 0: everything counts as written in the session */
	nreports = 0;
	last_report[0] = '\0';
}

static void fixture_free(struct fixture *f)
{
	(void)close(f->gfd);
	gg_listed_free(&f->g);
	test_rmtree(f->dir);
	free(f->dir);
}

static unsigned char *read_back(struct fixture *f, const char *name, size_t *len, struct stat *st)
{
	return (unsigned char *)gg_read_all_st(f->gfd, name, 1u << 20, len, st);
}

/* The index rewritten: sizes 0 but the gitlink's, TREE and UNTR gone,
 * sdir and REUC (resolve-undo, which git cannot rebuild) kept, a
 * checksum git accepts, the mode kept; no line. */
static void test_index_rewritten(void)
{
	unsigned char b[1024], *got, sum[20];
	struct fixture f;
	struct stat st;
	size_t len, glen;
	unsigned int n;

	fixture_init(&f);
	len = make_index(b, 0);
	CU_ASSERT_FATAL(write_at(f.gfd, "index", b, len, 0640) == 0);
	gg_index_settle(&f.g, f.gfd, "/nonexistent-work-tree", -1, false);
	CU_ASSERT(nreports == 0);
	got = read_back(&f, "index", &glen, &st);
	CU_ASSERT_FATAL(got != NULL);
	CU_ASSERT((st.st_mode & 07777) == 0640);
	/* the three entries are 72, 72, 72 bytes: 12 + 216, then sdir, REUC */
	CU_ASSERT(glen == 12 + 3 * 72 + 8 + 14 + 20);
	CU_ASSERT(memcmp(got + 12 + 216 + 8, "REUC", 4) == 0 && be32(got + 12 + 216 + 12) == 6);
	CU_ASSERT(be32(got + 12 + 36) == 0);
	CU_ASSERT(be32(got + 12 + 72 + 36) == 0);
	CU_ASSERT(be32(got + 12 + 144 + 24) == 0160000);
	CU_ASSERT(memcmp(got + 12 + 216, "sdir", 4) == 0);
	CU_ASSERT(EVP_Digest(got, glen - 20, sum, &n, EVP_sha1(), NULL) == 1 && memcmp(sum, got + glen - 20, 20) == 0);
	/* the rest as it was: mtime and object names */
	CU_ASSERT(be32(got + 12 + 8) == 1700000000u && got[12 + 40] == 0xab);
	free(got);
	/* a second pass finds nothing to do: the file stays */
	CU_ASSERT(fstatat(f.gfd, "index", &st, 0) == 0);
	{
		ino_t ino = st.st_ino;

		gg_index_settle(&f.g, f.gfd, "/nonexistent-work-tree", -1, false);
		CU_ASSERT(fstatat(f.gfd, "index", &st, 0) == 0 && st.st_ino == ino);
	}
	fixture_free(&f);
}

/* A checksum that does not match: git 2.39 reads the index all the same
 * (it checks the checksum only in fsck): moved aside, not mended. */
static void test_index_bad_checksum(void)
{
	unsigned char b[1024], *got;
	struct fixture f;
	struct stat st;
	size_t len, glen;

	fixture_init(&f);
	len = make_index(b, 0);
	b[len - 1] ^= 1;
	CU_ASSERT_FATAL(write_at(f.gfd, "index", b, len, 0644) == 0);
	gg_index_settle(&f.g, f.gfd, "/nonexistent-work-tree", -1, false);
	CU_ASSERT(faccessat(f.gfd, "index", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	got = read_back(&f, "index.passavant-quarantine", &glen, &st);
	CU_ASSERT_FATAL(got != NULL);
	CU_ASSERT(glen == len && memcmp(got, b, len) == 0);
	CU_ASSERT(strstr(last_report, "checksum does not match") != NULL);
	free(got);
	fixture_free(&f);
}

/* Skip-worktree with no work tree known: moved aside, said why. */
static void test_index_bits_no_worktree(void)
{
	unsigned char b[1024];
	struct fixture f;
	size_t len;

	fixture_init(&f);
	len = make_index(b, 0x8000);
	CU_ASSERT_FATAL(write_at(f.gfd, "index", b, len, 0644) == 0);
	gg_index_settle(&f.g, f.gfd, NULL, -1, false);
	CU_ASSERT(faccessat(f.gfd, "index", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	CU_ASSERT(faccessat(f.gfd, "index.passavant-quarantine", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	CU_ASSERT(nreports == 1 && strstr(last_report, "whose work tree the check cannot find") != NULL);
	if (nreports != 1)
		fprintf(stderr, "\n  %u reports, last: %s\n", nreports, last_report);
	fixture_free(&f);
}

/* Every cut of an index (and every byte changed) is refused or parsed
 * within its bounds (run under ASan). */
static void test_index_cuts(void)
{
	unsigned char b[1024], *c;
	struct gg g;
	size_t len = make_index(b, 0x8000);

	memset(&g, 0, sizeof(g));
	for (size_t cut = 0; cut <= len; cut++) {
		struct ix x = {0};

		c = malloc(cut ? cut : 1);
		CU_ASSERT_FATAL(c != NULL);
		memcpy(c, b, cut);
		(void)scan(&g, c, cut, 20, -1, &x);
		free(c);
	}
	for (size_t i = 0; i < len; i++) {
		struct ix x = {0};

		c = malloc(len);
		CU_ASSERT_FATAL(c != NULL);
		memcpy(c, b, len);
		c[i] ^= 0xff;
		(void)scan(&g, c, len, 20, -1, &x);
		free(c);
	}
}

/* A dirstate v1: the normal entry gets mtime -1, an added one and one
 * already -1 stay; a cut one moves aside. */
static void test_hg_dirstate(void)
{
	unsigned char b[256], *got;
	struct fixture f;
	struct stat st;
	size_t off = 40, glen;
	static const struct {
		char state;
		int32_t size, mtime;
		const char *name;
	} rows[] = {{'n', 12, 1700000000, "app.py"}, {'a', -1, -1, "new.py"}, {'n', -1, 1700000000, "dirty.py"}};
	int fd;

	fixture_init(&f);
	snprintf(f.g.path, sizeof(f.g.path), "%s/.hg", f.dir);
	CU_ASSERT_FATAL(mkdir(f.g.path, 0755) == 0);
	fd = open(f.g.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	memset(b, 0x11, 40);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t nl = strlen(rows[i].name);

		b[off] = (unsigned char)rows[i].state;
		put_be32(b + off + 1, 0100644);
		put_be32(b + off + 5, (uint32_t)rows[i].size);
		put_be32(b + off + 9, (uint32_t)rows[i].mtime);
		put_be32(b + off + 13, (uint32_t)nl);
		memcpy(b + off + 17, rows[i].name, nl);
		off += 17 + nl;
	}
	CU_ASSERT_FATAL(write_at(fd, "dirstate", b, off, 0644) == 0);
	gg_check_hg(&f.g, fd);
	got = (unsigned char *)gg_read_all_st(fd, "dirstate", 4096, &glen, &st);
	CU_ASSERT_FATAL(got != NULL);
	CU_ASSERT(glen == off);
	CU_ASSERT(be32(got + 40 + 9) == 0xffffffffu);                /* app.py: look it up */
	CU_ASSERT(be32(got + 40 + 23 + 9) == 0xffffffffu);           /* new.py: as it was */
	CU_ASSERT(be32(got + 40 + 46 + 9) == 1700000000u);           /* dirty.py: size -1, hg reads it */
	CU_ASSERT(nreports == 0);
	free(got);
	/* cut in a name: moved aside */
	CU_ASSERT_FATAL(write_at(fd, "dirstate", b, off - 2, 0644) == 0);
	gg_check_hg(&f.g, fd);
	CU_ASSERT(faccessat(fd, "dirstate", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	CU_ASSERT(nreports == 1);
	(void)close(fd);
	fixture_free(&f);
}

TEST_REGISTRAR(sandbox_gitindex_register)
{
	CU_pSuite s = test_suite("sandbox_gitindex", NULL, NULL);

	test_add(s, "an index rewritten: sizes 0, optional extensions dropped, checksum new, mode kept",
		 test_index_rewritten);
	test_add(s, "an index whose checksum does not match moves aside", test_index_bad_checksum);
	test_add(s, "skip-worktree bits with no work tree: moved aside", test_index_bits_no_worktree);
	test_add(s, "every cut and every changed byte of an index parses within bounds", test_index_cuts);
	test_add(s, "a Mercurial dirstate v1: normal entries looked up, a cut one moved aside", test_hg_dirstate);
}

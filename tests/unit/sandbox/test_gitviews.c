/*
 * test_gitviews.c - sandbox/gitviews.c: the index parser (versions 2 and
 * 4, the bits that hide a file, names rebuilt from their prefixes), the
 * SHA-1 of a blob, and what HEAD and the prompt's files may hold. Suite
 * "sandbox_gitviews". The wire tests are in tests/integration/
 * test_gitguard.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../sandbox/gitviews.c"
#include "tests/support/testlib.h"

/* git's object names of blobs (git hash-object, and with
 * --object-format=sha256), through gg_blob_id() from a file. */
static void test_blob_id(void)
{
	static const struct {
		const char *in;
		size_t hsz;
		const char *hex;
	} rows[] = {
		{"", 20, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
		{"hello\n", 20, "ce013625030ba8dba906f756967f9e9ca394464a"},
		{"", 32, "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"},
		{"hello\n", 32, "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"},
	};
	char *dir = test_mkdtemp(), p[PATH_MAX];

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(p, sizeof(p), "%s/f", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned char out[32];
		char hex[65];
		size_t len = strlen(rows[i].in);
		int fd;

		CU_ASSERT_FATAL(test_write_file(p, rows[i].in, len) == 0);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_FATAL(gg_blob_id(fd, len, rows[i].hsz, out) == 0);
		(void)close(fd);
		for (size_t k = 0; k < rows[i].hsz; k++)
			snprintf(hex + 2 * k, 3, "%02x", out[k]);
		CU_ASSERT_STRING_EQUAL(hex, rows[i].hex);
		/* another size than the file's: an error */
		fd = open(p, O_RDONLY | O_CLOEXEC);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT(gg_blob_id(fd, len + 1, rows[i].hsz, out) < 0);
		(void)close(fd);
	}
	test_rmtree(dir);
	free(dir);
}

/* check_index()'s scan, as it was called before gg_index_scan() took a
 * callback: 0, or -1 when the index does not parse. */
static int scan_index(const struct gg *g, const unsigned char *b, size_t len, size_t hsz, int wfd, struct hidden *h)
{
	struct index_walk w = {g, wfd, h};
	unsigned char shared[32];
	int rc = gg_index_scan(b, len, hsz, index_entry, NULL, &w, shared);

	h->split = h->split || rc == 1;
	return rc < 0 ? -1 : 0;
}

/* What HEAD may hold, and what a terminal takes for a control. */
static void test_head_values(void)
{
	static const struct {
		const char *v;
		bool ok;
	} rows[] = {
		{"refs/heads/main", true},
		{"refs/heads/feature/x-1.2", true},
		{"refs/heads/caf\xc3\xa9", true},
		{"0123456789abcdef0123456789abcdef01234567", true},
		{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"0123456789ABCDEF0123456789abcdef01234567", false},
		{"refs/heads/main\033]52;c;eA==\007", false},
		{"refs/heads/ma in", false},
		{"refs/heads/x\xc2\x9b" "2J", false},
		{"refs/heads/", false},
		{"heads/main", false},
		{"refs/heads/a:b", false},
		{"refs/heads/a.", false},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool got = head_value_ok(rows[i].v, strlen(rows[i].v));

		if (got != rows[i].ok)
			fprintf(stderr, "\n  head value %zu: %d\n", i, got);
		CU_ASSERT(got == rows[i].ok);
	}
	CU_ASSERT(!has_control("refs/heads/x\n", 13));
	CU_ASSERT(has_control("x\ny\n", 4));
	CU_ASSERT(has_control("a\x7f", 2));
}

/* Appends one index entry: mode, flags (name length added), extended
 * flags (when flags has 0x4000), the name as written (v4: the varint and
 * the suffix, NUL-ended; v2: the name, padded). */
static size_t entry(unsigned char *b, size_t off, unsigned ver, uint16_t flags, uint16_t ext, const char *name,
		    unsigned strip)
{
	size_t start = off, nl = strlen(name);

	memset(b + off, 0, 62);
	b[off + 24] = 0x00; /* mode 0100644, big-endian */
	b[off + 25] = 0x00;
	b[off + 26] = 0x81;
	b[off + 27] = 0xa4;
	flags = (uint16_t)(flags | (nl < 0xfff ? nl : 0xfff));
	b[off + 60] = (unsigned char)(flags >> 8);
	b[off + 61] = (unsigned char)flags;
	off += 62;
	if (flags & 0x4000) {
		b[off++] = (unsigned char)(ext >> 8);
		b[off++] = (unsigned char)ext;
	}
	if (ver == 4) {
		b[off++] = (unsigned char)strip;
		memcpy(b + off, name, nl + 1);
		return off + nl + 1;
	}
	memcpy(b + off, name, nl);
	off += nl;
	do
		b[off++] = 0;
	while ((off - start) % 8 != 0);
	return off;
}

static size_t header(unsigned char *b, unsigned ver, unsigned count)
{
	memcpy(b, "DIRC", 4);
	b[4] = b[5] = b[6] = 0;
	b[7] = (unsigned char)ver;
	b[8] = b[9] = b[10] = 0;
	b[11] = (unsigned char)count;
	return 12;
}

/* Versions 3 and 4: the bits are found on the right names (a/c rebuilt
 * from a/b in version 4); a cut index does not parse. */
static void test_index_parse(void)
{
	char *dir = test_mkdtemp(), p[PATH_MAX];
	unsigned char b[1024];
	struct gg g;
	struct hidden h;
	size_t off;
	int wfd;

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(p, sizeof(p), "%s/a", dir);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/a/c", dir);
	CU_ASSERT_FATAL(test_write_file(p, "x", 1) == 0);
	snprintf(p, sizeof(p), "%s/a/b", dir);
	CU_ASSERT_FATAL(test_write_file(p, "y", 1) == 0);
	wfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(wfd >= 0);
	memset(&g, 0, sizeof(g)); /* since 0: every file counts as written in the session */

	/* version 4: a/b (no bit), a/c = strip 1 of "a/b" + "c", skip-worktree */
	off = header(b, 4, 2);
	off = entry(b, off, 4, 0, 0, "a/b", 0);
	off = entry(b, off, 4, 0x4000, 0x4000, "c", 1);
	memset(b + off, 0, 20);
	memset(&h, 0, sizeof(h));
	h.hsz = 20;
	CU_ASSERT(scan_index(&g, b, off + 20, 20, wfd, &h) == 0);
	CU_ASSERT(h.n == 1);
	CU_ASSERT_STRING_EQUAL(h.first, "a/c");
	/* cut in the last name */
	memset(&h, 0, sizeof(h));
	CU_ASSERT(scan_index(&g, b, off - 2, 20, wfd, &h) < 0);

	/* version 3: assume-unchanged on a/b, padded names */
	off = header(b, 3, 2);
	off = entry(b, off, 3, 0x8000, 0, "a/b", 0);
	off = entry(b, off, 3, 0, 0, "a/c", 0);
	memset(b + off, 0, 20);
	memset(&h, 0, sizeof(h));
	h.hsz = 20;
	CU_ASSERT(scan_index(&g, b, off + 20, 20, wfd, &h) == 0);
	CU_ASSERT(h.n == 1);
	CU_ASSERT_STRING_EQUAL(h.first, "a/b");
	/* an extended flag in version 2 does not parse */
	b[7] = 2;
	CU_ASSERT(scan_index(&g, b, off + 20, 20, wfd, &h) == 0); /* no entry has it */
	off = header(b, 2, 1);
	off = entry(b, off, 2, 0x4000, 0x4000, "a/c", 0);
	memset(b + off, 0, 20);
	CU_ASSERT(scan_index(&g, b, off + 20, 20, wfd, &h) < 0);
	/* not an index */
	memset(b, 0, 32);
	memcpy(b, "DIRX", 4);
	b[7] = 2;
	CU_ASSERT(scan_index(&g, b, 32, 20, wfd, &h) < 0);

	(void)close(wfd);
	test_rmtree(dir);
	free(dir);
}

/* core.worktree of a submodule's config: the last one of [core]. */
static void test_config_worktree(void)
{
	char *dir = test_mkdtemp(), gd[PATH_MAX], wt[PATH_MAX], out[PATH_MAX], cfg[3 * PATH_MAX];

	CU_ASSERT_FATAL(dir != NULL);
	snprintf(gd, sizeof(gd), "%s/g", dir);
	snprintf(wt, sizeof(wt), "%s/w", dir);
	CU_ASSERT_FATAL(mkdir(gd, 0755) == 0 && mkdir(wt, 0755) == 0);
	snprintf(cfg, sizeof(cfg), "[core]\n\tbare = false\n\tworktree = /nowhere\n[remote \"o\"]\n\tworktree = x\n"
				   "[core]\n\tworktree = \"../w\"\n");
	CU_ASSERT(config_worktree(cfg, gd, out));
	CU_ASSERT_STRING_EQUAL(out, wt);
	CU_ASSERT(!config_worktree("[core]\n\tbare = true\n", gd, out));
	test_rmtree(dir);
	free(dir);
}

TEST_REGISTRAR(sandbox_gitviews_register)
{
	CU_pSuite s = test_suite("sandbox_gitviews", NULL, NULL);

	test_add(s, "git blob names, SHA-1 and SHA-256", test_blob_id);
	test_add(s, "HEAD values and control bytes", test_head_values);
	test_add(s, "index versions 3 and 4: hiding bits on the right names, cut indexes refused", test_index_parse);
	test_add(s, "core.worktree of a submodule's config", test_config_worktree);
}

/*
 * test_base.c - the base helpers (suite "base"): authority splitting,
 * whole-file reading, error buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/authority.h"
#include "base/errbuf.h"
#include "base/fileio.h"
#include "tests/support/testlib.h"

struct split_case {
	const char *in;
	const char *host; /* NULL: refused */
	bool bracketed;
	int port; /* -1: none */
};

static void test_authority_split(void)
{
	static const struct split_case cases[] = {
		{"example.com", "example.com", false, -1},
		{"example.com:443", "example.com", false, 443},
		{"[2001:db8::1]", "2001:db8::1", true, -1},
		{"[2001:db8::1]:8443", "2001:db8::1", true, 8443},
		{"h:1", "h", false, 1},
		{"h:65535", "h", false, 65535},
		{"", NULL, false, 0},
		{":443", NULL, false, 0},
		{"[]:443", NULL, false, 0},
		{"h:", NULL, false, 0},
		{"h:0", NULL, false, 0},
		{"h:65536", NULL, false, 0},
		{"h:004430", NULL, false, 0},
		{"h:+443", NULL, false, 0},
		{"h:44 3", NULL, false, 0},
		{"h:-1", NULL, false, 0},
		{"2001:db8::1", NULL, false, 0},
		{"a:b:443", NULL, false, 0},
		{"[::1", NULL, false, 0},
		{"[::1]443", NULL, false, 0},
		{"[::1]:", NULL, false, 0},
	};
	struct authority a;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct split_case *c = &cases[i];
		const char *err = authority_split(c->in, strlen(c->in), &a);

		if (c->host == NULL) {
			if (err == NULL)
				fprintf(stderr, "accepted: '%s'\n", c->in);
			CU_ASSERT_PTR_NOT_NULL(err);
			continue;
		}
		if (err != NULL)
			fprintf(stderr, "refused: '%s': %s\n", c->in, err);
		CU_ASSERT_PTR_NULL_FATAL(err);
		CU_ASSERT_EQUAL(a.host_len, strlen(c->host));
		CU_ASSERT(strncmp(a.host, c->host, a.host_len) == 0);
		CU_ASSERT_EQUAL(a.bracketed, c->bracketed);
		CU_ASSERT_EQUAL(a.has_port, c->port >= 0);
		if (c->port >= 0)
			CU_ASSERT_EQUAL(a.port, (uint16_t)c->port);
	}
	/* The length bounds the input: a port past len is not read. */
	CU_ASSERT_PTR_NULL(authority_split("h:443", 1, &a));
	CU_ASSERT_FALSE(a.has_port);
}

static void test_fileio_read(void)
{
	char dir[] = "/tmp/pv-base-XXXXXX", path[256], fifo[256], link[256];
	struct stat st;
	size_t len = 99;
	char *buf;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "hello\0world", 11), 11);
	CU_ASSERT_EQUAL(close(fd), 0);

	buf = fileio_read(path, 64, 0, &len, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_EQUAL(len, 11);
	CU_ASSERT(memcmp(buf, "hello\0world", 12) == 0); /* NUL after the content */
	CU_ASSERT_EQUAL(st.st_size, 11);
	free(buf);

	/* Over the cap: EFBIG, and the size is reported. */
	errno = 0;
	CU_ASSERT_PTR_NULL(fileio_read(path, 10, 0, &len, &st));
	CU_ASSERT_EQUAL(errno, EFBIG);
	CU_ASSERT_EQUAL(st.st_size, 11);

	/* A FIFO is refused without blocking (no writer exists). */
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	errno = 0;
	CU_ASSERT_PTR_NULL(fileio_read(fifo, 64, 0, &len, NULL));
	CU_ASSERT_EQUAL(errno, EINVAL);
	errno = 0;
	CU_ASSERT_PTR_NULL(fileio_read(dir, 64, 0, &len, NULL));
	CU_ASSERT_EQUAL(errno, EINVAL);
	errno = 0;
	CU_ASSERT_PTR_NULL(fileio_read("/nonexistent/pv-base", 64, 0, &len, NULL));
	CU_ASSERT_EQUAL(errno, ENOENT);

	/* A link is followed unless FILEIO_NOFOLLOW. */
	CU_ASSERT_EQUAL_FATAL(symlink(path, link), 0);
	buf = fileio_read(link, 64, FILEIO_SECRET, &len, NULL);
	CU_ASSERT_PTR_NOT_NULL(buf);
	free(buf);
	errno = 0;
	CU_ASSERT_PTR_NULL(fileio_read(link, 64, FILEIO_NOFOLLOW, &len, NULL));
	CU_ASSERT_EQUAL(errno, ELOOP);

	(void)unlink(link);
	(void)unlink(fifo);
	(void)unlink(path);
	(void)rmdir(dir);
}

static void test_errbuf(void)
{
	char err[16];

	errbuf_set(err, sizeof(err), "a %s", "b");
	CU_ASSERT_STRING_EQUAL(err, "a b");
	errbuf_append(err, sizeof(err), "%s", " c");
	CU_ASSERT_STRING_EQUAL(err, "a b c");
	errbuf_set_errno(err, sizeof(err), ENOENT, "open %s", "x");
	CU_ASSERT(strncmp(err, "open x: No such", 15) == 0);
	CU_ASSERT_EQUAL(strlen(err), sizeof(err) - 1); /* truncated, terminated */
	errbuf_set(err, sizeof(err), "%s", "0123456789abcdefghij");
	CU_ASSERT_STRING_EQUAL(err, "0123456789abcde");
	errbuf_append(err, sizeof(err), "more");
	CU_ASSERT_STRING_EQUAL(err, "0123456789abcde");
	errbuf_set(NULL, 0, "nothing");
	errbuf_set(err, 0, "nothing");
}

TEST_REGISTRAR(base_suite)
{
	CU_pSuite s = test_suite("base", NULL, NULL);

	test_add(s, "authority_split: hosts, ports, brackets", test_authority_split);
	test_add(s, "fileio_read: caps, FIFOs, links", test_fileio_read);
	test_add(s, "errbuf: set, append, errno, truncation", test_errbuf);
}

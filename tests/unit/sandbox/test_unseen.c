/*
 * test_unseen.c - sandbox/unseen.c, the parent's half: which directories
 * the Landlock domain lists and which first missing components it leaves
 * out, for denied paths that do not exist at launch. Suite
 * "sandbox_unseen". The wire test (a store the host creates during the
 * session) is credstores' in tests/integration/test_credstores.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sbx_int.h"
#include "tests/support/testlib.h"

static bool has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static void test_unseen_sets(void)
{
	static const char *gh = "/home/u/.config/gh/hosts.yml", *aws = "/home/u/.aws/credentials";
	char *writable[] = {"/work", NULL};
	struct sbx_builder *b = calloc(1, sizeof(*b));

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	b->writable = writable;
	b->n_writable = 1;
	/* a store two levels below its last existing directory */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, gh, strlen("/home/u/.config"), false), 0);
	CU_ASSERT_EQUAL(b->unseen.n_dirs, 4);
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/home/u/.config"));
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/home/u"));
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/home"));
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/"));
	CU_ASSERT_EQUAL(b->unseen.n_skip, 1);
	CU_ASSERT(has(b->unseen.skip, b->unseen.n_skip, "/home/u/.config/gh"));
	/* a second one shares the directories: no duplicates */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, aws, strlen("/home/u"), false), 0);
	CU_ASSERT_EQUAL(b->unseen.n_dirs, 4);
	CU_ASSERT_EQUAL(b->unseen.n_skip, 2);
	CU_ASSERT(has(b->unseen.skip, b->unseen.n_skip, "/home/u/.aws"));
	CU_ASSERT_EQUAL(sbx_unseen_add(b, aws, strlen("/home/u"), false), 0);
	CU_ASSERT_EQUAL(b->unseen.n_skip, 2);
	/* where the command may write: left out */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/work/.env", strlen("/work"), false), 0);
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/work/sub/x/.env", strlen("/work/sub"), false), 0);
	CU_ASSERT_EQUAL(b->unseen.n_skip, 2);
	CU_ASSERT(!has(b->unseen.dirs, b->unseen.n_dirs, "/work"));
	/* right under "/" (its last existing directory is "/", length 0) */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/newdir/x", 0, false), 0);
	CU_ASSERT(has(b->unseen.skip, b->unseen.n_skip, "/newdir"));
	CU_ASSERT_EQUAL(b->unseen.n_dirs, 4);
	CU_ASSERT_EQUAL(sbx_unseen_grant(b, "/srv/keys/pub"), 0);
	CU_ASSERT_EQUAL(b->unseen.n_grant, 1);
	/* a path that exists (a cover): the directories on its way only */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/srv/keys/id", strlen("/srv/keys"), true), 0);
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/srv/keys"));
	CU_ASSERT(has(b->unseen.dirs, b->unseen.n_dirs, "/srv"));
	CU_ASSERT(!has(b->unseen.skip, b->unseen.n_skip, "/srv/keys/id"));
	/* not the host's in the sandbox: the private /tmp, /dev, /proc, /sys */
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/tmp/kubeconfig", strlen("/tmp"), false), 0);
	CU_ASSERT_EQUAL(sbx_unseen_add(b, "/dev/shm/x", strlen("/dev/shm"), false), 0);
	CU_ASSERT(!has(b->unseen.dirs, b->unseen.n_dirs, "/tmp"));
	CU_ASSERT(!has(b->unseen.skip, b->unseen.n_skip, "/tmp/kubeconfig"));
	/* a length that does not end at a separator is a caller's error */
	errno = 0;
	CU_ASSERT_EQUAL(sbx_unseen_add(b, gh, 3, false), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_EQUAL(sbx_unseen_add(b, gh, strlen(gh), false), -1);
	sbx_unseen_free(&b->unseen);
	CU_ASSERT_EQUAL(b->unseen.n_dirs, 0);
	CU_ASSERT_PTR_NULL(b->unseen.dirs);
	free(b);
}

TEST_REGISTRAR(sandbox_unseen_register)
{
	CU_pSuite s = test_suite("sandbox_unseen", NULL, NULL);

	test_add(s, "directories and first missing components, writable ones left out", test_unseen_sets);
}

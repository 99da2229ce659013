/*
 * test_cmask.c - cmask_wipe_drain() (suite "proxy_cmask"): the bytes a
 * buffer held are zeroed where they lie, in every chain, before the
 * chains go; a copy wiped instead would leave the originals in freed
 * memory.
 */
#include <string.h>

#include <event2/buffer.h>

#include "proxy/cmask.h"
#include "tests/support/testlib.h"

static bool all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* Three chains whose memory the test owns (references), so that what is
 * left in them after the drain can be read. */
static void test_wipe_in_place(void)
{
	static unsigned char a[100], b[3000], c[7];
	struct evbuffer *buf = evbuffer_new();

	CU_ASSERT_FATAL(buf != NULL);
	memset(a, 'g', sizeof(a));
	memset(b, 'h', sizeof(b));
	memset(c, 'p', sizeof(c));
	CU_ASSERT_FATAL(evbuffer_add_reference(buf, a, sizeof(a), NULL, NULL) == 0);
	CU_ASSERT_FATAL(evbuffer_add_reference(buf, b, sizeof(b), NULL, NULL) == 0);
	CU_ASSERT_FATAL(evbuffer_add_reference(buf, c, sizeof(c), NULL, NULL) == 0);
	/* a chain partly drained already: only what is left is wiped */
	CU_ASSERT_FATAL(evbuffer_drain(buf, 10) == 0);
	cmask_wipe_drain(buf);
	CU_ASSERT_EQUAL(evbuffer_get_length(buf), 0);
	CU_ASSERT(a[9] == 'g');
	CU_ASSERT(all_zero(a + 10, sizeof(a) - 10));
	CU_ASSERT(all_zero(b, sizeof(b)));
	CU_ASSERT(all_zero(c, sizeof(c)));
	/* empty: nothing to do */
	cmask_wipe_drain(buf);
	CU_ASSERT_EQUAL(evbuffer_get_length(buf), 0);
	evbuffer_free(buf);
}

/* Ordinary chains: the buffer ends empty and usable. */
static void test_wipe_owned_chains(void)
{
	struct evbuffer *buf = evbuffer_new();
	char big[70000];
	int i;

	CU_ASSERT_FATAL(buf != NULL);
	memset(big, 'x', sizeof(big));
	for (i = 0; i < 5; i++)
		CU_ASSERT_FATAL(evbuffer_add(buf, big, sizeof(big) - (size_t)i * 1000) == 0);
	CU_ASSERT_FATAL(evbuffer_add(buf, "tail", 4) == 0);
	cmask_wipe_drain(buf);
	CU_ASSERT_EQUAL(evbuffer_get_length(buf), 0);
	CU_ASSERT_FATAL(evbuffer_add(buf, "again", 5) == 0);
	CU_ASSERT_EQUAL(evbuffer_get_length(buf), 5);
	evbuffer_free(buf);
}

TEST_REGISTRAR(proxy_cmask_suite)
{
	CU_pSuite s = test_suite("proxy_cmask", NULL, NULL);

	test_add(s, "wipe: every chain zeroed where it lies, then drained", test_wipe_in_place);
	test_add(s, "wipe: owned chains of any size, the buffer stays usable", test_wipe_owned_chains);
}

/*
 * test_cmask.c - cmask_wipe_drain() (suite "proxy_cmask"): the bytes a
 * buffer held are zeroed where they lie, in every chain, before the
 * chains go; a copy wiped instead would leave the originals in freed
 * memory.
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

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

/* A socket bufferevent's output has its front frozen outside libevent's
 * own writes; every drain of it fails. Round 19: after EPIPE on a reused
 * upstream the wipe of that output spun for ever (100% CPU). The alarm
 * ends a spinning run instead of hanging the suite. */
static void test_wipe_socket_output(void)
{
	static unsigned char held[5000];
	struct event_base *base = event_base_new();
	struct bufferevent *bev;
	struct evbuffer *out;
	int sv[2];

	CU_ASSERT_FATAL(base != NULL);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	CU_ASSERT_FATAL(bev != NULL);
	out = bufferevent_get_output(bev);
	memset(held, 'r', sizeof(held));
	CU_ASSERT_FATAL(evbuffer_add_reference(out, held, sizeof(held), NULL, NULL) == 0);
	CU_ASSERT_FATAL(evbuffer_add(out, "more", 4) == 0);
	/* the premise: the front is frozen, a plain drain fails */
	CU_ASSERT(evbuffer_drain(out, 1) < 0);
	(void)alarm(10);
	cmask_wipe_drain(out);
	(void)alarm(0);
	CU_ASSERT_EQUAL(evbuffer_get_length(out), 0);
	CU_ASSERT(all_zero(held, sizeof(held)));
	bufferevent_free(bev);
	(void)close(sv[1]);
	event_base_free(base);
}

/* Whether name[0..len) holds word, ASCII case folded, at any offset. */
static bool holds_word(const char *name, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (size_t at = 0; at + w <= len; at++) {
		size_t k = 0;

		while (k < w && (name[at + k] | 0x20) == word[k] && name[at + k] != 0)
			k++;
		if (k == w)
			return true;
	}
	return false;
}

/*
 * Round 47: cmask_digest_field() lower-cases the name into a buffer of
 * 128 bytes and looks at longer names in overlapping windows. Each word
 * of the family, in either case, at every offset of a name of up to 300
 * bytes (across each window's edge), is found; names that hold none are
 * not (a window that drops the word's last bytes fails here).
 */
static void test_digest_field_windows(void)
{
	static const char *const words[] = {"digest", "checksum", "hash", "md5", "sha1", "sha2", "sha3",
					    "sha-", "sha5", "crc32", "crc64"};
	char name[300];
	unsigned bad = 0;

	for (size_t len = 0; len <= sizeof(name); len += len < 140 ? 1 : 7) {
		memset(name, 'x', sizeof(name));
		if (cmask_digest_field(name, len))
			bad++;
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			size_t w = strlen(words[i]);

			for (size_t at = 0; at + w <= len; at++) {
				memset(name, 'x', sizeof(name));
				for (size_t k = 0; k < w; k++)
					name[at + k] = (char)(at % 2 != 0 && words[i][k] >= 'a' ? words[i][k] - 32
											 : words[i][k]);
				if (!cmask_digest_field(name, len) || !holds_word(name, len, words[i]))
					bad++;
			}
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(!cmask_digest_field("ETag", 4));
	CU_ASSERT(!cmask_digest_field("Content-Type", 12));
	CU_ASSERT(cmask_digest_field("Docker-Content-Digest", 21));
	CU_ASSERT(!cmask_digest_field("X-Digest", 3)); /* its length, not its NUL */
	/* The fields of round 46's list by name, which the words cover since
	 * round 48 (the list is gone), and names near a word that hold none. */
	static const char *const named[] = {
		"Digest", "Content-Digest", "Repr-Digest", "Want-Digest", "Want-Content-Digest",
		"Want-Repr-Digest", "Content-MD5", "x-goog-hash", "x-ms-content-md5", "x-ms-content-crc64",
		"x-amz-content-sha256", "x-checksum-sha1", "X-Checksum-Sha256", "x-checksum-md5", "MD5", "sha-1"};
	static const char *const near[] = {"Shake", "X-Sha", "md", "crc", "Dig", "CheckSun", "Hasp", "crc16",
					   "sha0", "Cache-Control", "Set-Cookie", "Server", "Date", "Connection"};

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		CU_ASSERT(cmask_digest_field(named[i], strlen(named[i])));
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		CU_ASSERT(!cmask_digest_field(near[i], strlen(near[i])));
}

TEST_REGISTRAR(proxy_cmask_suite)
{
	CU_pSuite s = test_suite("proxy_cmask", NULL, NULL);

	test_add(s, "wipe: every chain zeroed where it lies, then drained", test_wipe_in_place);
	test_add(s, "wipe: owned chains of any size, the buffer stays usable", test_wipe_owned_chains);
	test_add(s, "wipe: a socket bufferevent's output, its front frozen, ends empty and zeroed",
		 test_wipe_socket_output);
	test_add(s, "digest fields: each word at every offset, across the lower-casing windows",
		 test_digest_field_windows);
}

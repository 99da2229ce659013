/*
 * test_proxy.c - proxy/proxy.c (suite "proxy_proxy"): adopting an
 * already-listening socket (what the launcher passes from the sandbox),
 * refusing one that is not listening, interception listeners, the
 * refcounted policy holder, and the heap settings (issue 16).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "tests/support/testlib.h"

static policy_t *small_policy(void)
{
	static const char yaml[] = "network:\n  allowedDomains: [\"127.0.0.1\"]\n";
	unsigned n = 0;

	return policy_load_buffer("test.yaml", yaml, sizeof(yaml) - 1, stderr, &n);
}

static void test_adopt(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char host[64];
	uint16_t port = 0;
	proxy_t *px;
	int fd;

	px = proxy_new(small_policy(), NULL, NULL, "0000000000000000");
	CU_ASSERT_FATAL(px != NULL);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CU_ASSERT_FATAL(listen(fd, 16) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	CU_ASSERT_EQUAL(proxy_adopt_listener(px, fd), 0);
	CU_ASSERT_EQUAL(proxy_local_addr(px, host, sizeof(host), &port), 0);
	CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
	CU_ASSERT_EQUAL(port, ntohs(sa.sin_port));
	proxy_free(px); /* closes fd */
	CU_ASSERT_EQUAL(fcntl(fd, F_GETFD), -1);
}

static void test_adopt_refuses_non_listener(void)
{
	proxy_t *px = proxy_new(small_policy(), NULL, NULL, "0000000000000000");
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CU_ASSERT_FATAL(px != NULL && fd >= 0);
	CU_ASSERT_EQUAL(proxy_adopt_listener(px, fd), -1); /* fd closed by it */
	proxy_free(px);
}

/* A listening socket on 127.0.0.1 or ::1 (port 0), or -1. */
static int listener(int family, int type)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET6) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
		len = sizeof(struct sockaddr_in6);
	} else {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(struct sockaddr_in);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0)) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Interception listeners: IPv4 and IPv6 adopted (closed with the proxy),
 * a third refused, and neither a non-listening TCP socket nor a UDP one
 * nor a Unix one taken (each closed by the refusal). */
static void test_adopt_intercept(void)
{
	proxy_t *px = proxy_new(small_policy(), NULL, NULL, "0000000000000000");
	int v4 = listener(AF_INET, SOCK_STREAM), v6 = listener(AF_INET6, SOCK_STREAM);
	int third = listener(AF_INET, SOCK_STREAM), udp = listener(AF_INET, SOCK_DGRAM);
	int plain = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ux[2];

	CU_ASSERT_FATAL(px != NULL && v4 >= 0 && third >= 0 && udp >= 0 && plain >= 0);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ux) == 0);
	CU_ASSERT_EQUAL(proxy_adopt_intercept(px, plain), -1);
	CU_ASSERT_EQUAL(fcntl(plain, F_GETFD), -1);
	CU_ASSERT_EQUAL(proxy_adopt_intercept(px, udp), -1);
	CU_ASSERT_EQUAL(fcntl(udp, F_GETFD), -1);
	CU_ASSERT_EQUAL(proxy_adopt_intercept(px, ux[0]), -1);
	CU_ASSERT_EQUAL(fcntl(ux[0], F_GETFD), -1);
	(void)close(ux[1]);
	CU_ASSERT_EQUAL(proxy_adopt_intercept(px, v4), 0);
	if (v6 >= 0) { /* no IPv6 here: one family is enough */
		CU_ASSERT_EQUAL(proxy_adopt_intercept(px, v6), 0);
		CU_ASSERT_EQUAL(proxy_adopt_intercept(px, third), -1);
		CU_ASSERT_EQUAL(fcntl(third, F_GETFD), -1);
	} else {
		(void)close(third);
	}
	/* Non-blocking, as the loop needs it. */
	CU_ASSERT((fcntl(v4, F_GETFL) & O_NONBLOCK) != 0);
	proxy_free(px);
	CU_ASSERT_EQUAL(fcntl(v4, F_GETFD), -1);
	if (v6 >= 0)
		CU_ASSERT_EQUAL(fcntl(v6, F_GETFD), -1);
}

static void test_policy_refs(void)
{
	proxy_t *px = proxy_new(small_policy(), NULL, NULL, "0000000000000000");
	proxy_policy_t *a, *b;

	CU_ASSERT_FATAL(px != NULL);
	a = proxy_policy_get(px);
	b = proxy_policy_get(px);
	CU_ASSERT_PTR_EQUAL(a, b);
	CU_ASSERT_EQUAL(policy_limits(proxy_policy(a))->max_tunnels, 256);
	/* No policy file (built from a buffer): nothing to re-read. */
	CU_ASSERT_EQUAL(proxy_reload(px), 0);
	proxy_policy_put(a);
	proxy_free(px);
	/* b outlives the proxy: the policy is freed with the last ref. */
	CU_ASSERT_EQUAL(policy_limits(proxy_policy(b))->max_tunnels, 256);
	proxy_policy_put(b);
}

/*
 * A proxy keeps the top of its heap through steady traffic: blocks freed
 * at the top (as OpenSSL's record buffers and the write BIO's batch are,
 * per request) stay in the allocator instead of going back with brk()
 * and coming again with page faults. With glibc's defaults, freeing 8 MiB
 * at the top shrinks the heap at once. malloc_trim(), what the proxy
 * calls once connections settle, still gives the pages back. ASan's
 * allocator (and valgrind's) has no brk heap and ignores mallopt():
 * nothing to check there.
 */
static void test_heap_keeps_top(void)
{
#if defined(__SANITIZE_ADDRESS__)
	CU_PASS("ASan build: no brk heap");
#else
	enum { BLOCK = 64 * 1024, MAXB = 256 };
	proxy_t *px = proxy_new(small_policy(), NULL, NULL, "0000000000000000");
	void *b[MAXB];
	char *top0, *grown;
	int n = 0;

	CU_ASSERT_FATAL(px != NULL);
	(void)malloc_trim(0);
	top0 = sbrk(0);
	/* Grow the heap by 8 MiB in blocks of the size of the data path's
	 * buffers (below any mmap threshold: from the heap; free space
	 * already there is used first). */
	while (n < MAXB && (char *)sbrk(0) < top0 + (8 << 20)) {
		b[n] = malloc(BLOCK);
		CU_ASSERT_FATAL(b[n] != NULL);
		memset(b[n], 1, BLOCK);
		n++;
	}
	grown = sbrk(0);
	if (grown == top0) {
		/* Not glibc's brk heap (valgrind's allocator, say). */
		for (int i = 0; i < n; i++)
			free(b[i]);
		proxy_free(px);
		CU_PASS("this allocator has no brk heap");
		return;
	}
	CU_ASSERT_FATAL(grown >= top0 + (8 << 20));
	while (n > 0)
		free(b[--n]);
	/* Freed, the top is kept: no brk() now, no page faults next time. */
	CU_ASSERT_PTR_EQUAL(sbrk(0), grown);
	/* The trim of a settled proxy returns it. */
	(void)malloc_trim(0);
	CU_ASSERT_TRUE((char *)sbrk(0) < grown - (4 << 20));
	proxy_free(px);
#endif
}

TEST_REGISTRAR(proxy_proxy_suite)
{
	CU_pSuite s = test_suite("proxy_proxy", NULL, NULL);

	test_add(s, "adopt an already-listening fd", test_adopt);
	test_add(s, "refuse a descriptor that is not listening", test_adopt_refuses_non_listener);
	test_add(s, "adopt interception listeners", test_adopt_intercept);
	test_add(s, "policy holder outlives reloads and the proxy", test_policy_refs);
	test_add(s, "the heap keeps its top under traffic, gives it back on trim",
		 test_heap_keeps_top);
}

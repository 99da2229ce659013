/*
 * test_proxy.c - proxy/proxy.c (suite "proxy_proxy"): adopting an
 * already-listening socket (what the launcher passes from the sandbox),
 * refusing one that is not listening, and the refcounted policy holder.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
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

TEST_REGISTRAR(proxy_proxy_suite)
{
	CU_pSuite s = test_suite("proxy_proxy", NULL, NULL);

	test_add(s, "adopt an already-listening fd", test_adopt);
	test_add(s, "refuse a descriptor that is not listening", test_adopt_refuses_non_listener);
	test_add(s, "policy holder outlives reloads and the proxy", test_policy_refs);
}

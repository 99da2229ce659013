/*
 * test_localaddr.c - proxy/localaddr.c (suite "proxy_localaddr"): which
 * netlink notices make the set be read again, which routes count as this
 * machine's, and the watcher on a real event base (loopback is in the
 * set; an unchanged machine is not re-read).
 *
 * Includes the source to reach its statics (STYLE.md 18).
 */
#include "../../../proxy/localaddr.c"
#include "../../support/testlib.h"

#include <arpa/inet.h>

/* One netlink message: header, rtmsg or ifaddrmsg, an optional RTA_DST. */
struct msg {
	struct nlmsghdr nh;
	struct rtmsg rtm;
	char attrs[64];
};

static size_t mkroute(struct msg *m, int type, int family, int rtype, unsigned table,
		      const char *dst, unsigned dst_len)
{
	struct rtattr *rta = (struct rtattr *)m->attrs;
	size_t alen = 0;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_type = (unsigned short)type;
	m->rtm.rtm_family = (unsigned char)family;
	m->rtm.rtm_type = (unsigned char)rtype;
	m->rtm.rtm_table = (unsigned char)table;
	m->rtm.rtm_dst_len = (unsigned char)dst_len;
	if (dst != NULL) {
		size_t bytes = family == AF_INET ? 4 : 16;

		rta->rta_type = RTA_DST;
		rta->rta_len = (unsigned short)RTA_LENGTH(bytes);
		if (inet_pton(family, dst, RTA_DATA(rta)) != 1)
			CU_FAIL_FATAL("fixture address refused");
		alen = RTA_SPACE(bytes);
	}
	m->nh.nlmsg_len = (unsigned)(NLMSG_LENGTH(sizeof(m->rtm)) + alen);
	return m->nh.nlmsg_len;
}

static void test_notices(void)
{
	struct msg m[2];
	size_t n;

	n = mkroute(&m[0], RTM_NEWADDR, AF_INET, 0, 0, NULL, 0);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	n = mkroute(&m[0], RTM_DELADDR, AF_INET6, 0, 0, NULL, 0);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	/* a router's ordinary route churn costs nothing */
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_UNICAST, RT_TABLE_MAIN, "192.0.2.0", 24);
	CU_ASSERT_FALSE(notices_matter(&m[0], (ssize_t)n));
	n = mkroute(&m[0], RTM_DELROUTE, AF_INET6, RTN_UNICAST, RT_TABLE_MAIN, "2001:db8::", 32);
	CU_ASSERT_FALSE(notices_matter(&m[0], (ssize_t)n));
	/* local and anycast routes, and anything in the local table, matter */
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_LOCAL, RT_TABLE_LOCAL, "10.0.0.0", 8);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	n = mkroute(&m[0], RTM_DELROUTE, AF_INET6, RTN_ANYCAST, RT_TABLE_LOCAL, "2001:db8::", 128);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_LOCAL, RT_TABLE_MAIN, "10.0.0.0", 8);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_BROADCAST, RT_TABLE_LOCAL, "10.0.0.255", 32);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)n));
	/* a relevant one after an irrelevant one in the same datagram */
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_UNICAST, RT_TABLE_MAIN, "192.0.2.0", 24);
	(void)mkroute(&m[1], RTM_NEWADDR, AF_INET, 0, 0, NULL, 0);
	memmove((char *)&m[0] + NLMSG_ALIGN(n), &m[1], m[1].nh.nlmsg_len);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)(NLMSG_ALIGN(n) + m[1].nh.nlmsg_len)));
	/* a route message too short to read: assume it matters */
	n = mkroute(&m[0], RTM_NEWROUTE, AF_INET, RTN_UNICAST, RT_TABLE_MAIN, NULL, 0);
	m[0].nh.nlmsg_len = NLMSG_LENGTH(2);
	CU_ASSERT_TRUE(notices_matter(&m[0], (ssize_t)m[0].nh.nlmsg_len));
	CU_ASSERT_FALSE(notices_matter(&m[0], 0));
}

static void test_routes(void)
{
	struct entries e = { NULL, 0, 0 };
	struct msg m;

	(void)mkroute(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, RT_TABLE_LOCAL, "10.215.0.0", 24);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET6, RTN_ANYCAST, RT_TABLE_LOCAL, "fd42:213::", 128);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	/* not this machine's: unicast, broadcast, multicast */
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET, RTN_UNICAST, RT_TABLE_MAIN, "192.0.2.0", 24);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET, RTN_BROADCAST, RT_TABLE_LOCAL, "10.215.0.255", 32);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET6, RTN_MULTICAST, RT_TABLE_LOCAL, "ff00::", 8);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	/* a prefix longer than the family's is ignored */
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, RT_TABLE_LOCAL, "10.0.0.1", 33);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	/* no destination: 0/0, every address */
	(void)mkroute(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, RT_TABLE_LOCAL, NULL, 0);
	CU_ASSERT_EQUAL(add_route(&e, &m.nh), 0);
	CU_ASSERT_EQUAL_FATAL(e.n, 3);
	CU_ASSERT_EQUAL(e.v[0].family, AF_INET);
	CU_ASSERT_EQUAL(e.v[0].prefix, 24);
	CU_ASSERT(memcmp(e.v[0].addr, "\x0a\xd7\x00\x00", 4) == 0);
	CU_ASSERT_EQUAL(e.v[1].family, AF_INET6);
	CU_ASSERT_EQUAL(e.v[1].prefix, 128);
	CU_ASSERT(e.v[1].addr[0] == 0xfd && e.v[1].addr[1] == 0x42);
	CU_ASSERT_EQUAL(e.v[2].prefix, 0);
	free(e.v);
}

/* The watcher on a real loop: 127.0.0.1 is this machine's (lo always has
 * it), 192.0.2.1 (TEST-NET-1) is not; asking twice with nothing changed
 * gives the same array (no re-read). */
static void test_watcher(void)
{
	struct event_base *base = event_base_new();
	const struct policy_addrset *a, *b;
	struct sockaddr_in sin;
	localaddr_t *la;
	char err[512];

	CU_ASSERT_FATAL(base != NULL);
	la = localaddr_new(base, err, sizeof(err));
	CU_ASSERT_FATAL(la != NULL);
	a = localaddr_get(la);
	CU_ASSERT(a->n > 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_TRUE(policy_addr_is_local((struct sockaddr *)&sin, a));
	CU_ASSERT(inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr) == 1);
	CU_ASSERT_FALSE(policy_addr_is_local((struct sockaddr *)&sin, a));
	b = localaddr_get(la);
	CU_ASSERT_PTR_EQUAL(a->v, b->v);
	localaddr_free(la);
	localaddr_free(NULL);
	event_base_free(base);
}

TEST_REGISTRAR(proxy_localaddr_register)
{
	CU_pSuite s = test_suite("proxy_localaddr", NULL, NULL);

	test_add(s, "which notices make the set be read again", test_notices);
	test_add(s, "local and anycast routes, prefixes", test_routes);
	test_add(s, "watcher on a real loop: loopback in, TEST-NET out, no needless re-read",
		 test_watcher);
}

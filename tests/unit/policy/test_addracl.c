/*
 * test_addracl.c - table-driven tests of policy/addracl.c: the address
 * classes (native and IPv4-embedded-in-IPv6 forms), the class names, and
 * the resolved-address guard (SPEC §3.1, §3.5 step 4): the IP-literal
 * exception of allowedDomains, deniedDomains literals winning over it,
 * the always-denied classes and deniedResolvedAddresses CIDRs at their
 * edge bits.
 *
 * Policies are built by hand through policy_int.h.
 */
#include "../../../policy/policy_int.h"
#include "../../support/testlib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>


#define S(x) ((x) != NULL ? (x) : "(null)")

static bool str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Builds a sockaddr from address text (IPv4 or IPv6) and a port. */
static const struct sockaddr *mksa(struct sockaddr_storage *ss, const char *text, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		fprintf(stderr, "test address \"%s\" does not parse\n", text);
		abort();
	}
	return (const struct sockaddr *)ss;
}

/* ------------------------------------------------------------------ */
/* policy_addr_classify                                                 */
/* ------------------------------------------------------------------ */

struct class_case {
	const char *addr;
	enum policy_addr_class cls;
};

#define PUB ADDR_PUBLIC
#define LOOP ADDR_LOOPBACK
#define UNSP ADDR_UNSPECIFIED
#define LL ADDR_LINK_LOCAL
#define MC ADDR_MULTICAST
#define BC ADDR_BROADCAST
#define META ADDR_METADATA

static const struct class_case class_cases[] = {
	/* IPv4, with the edges of each block */
	{ "127.0.0.1", LOOP },
	{ "127.255.255.254", LOOP },
	{ "127.0.0.0", LOOP },
	{ "126.255.255.255", PUB },
	{ "128.0.0.0", PUB },
	{ "0.0.0.0", UNSP },
	{ "0.1.2.3", UNSP },
	{ "0.255.255.255", UNSP },
	{ "1.0.0.0", PUB },
	{ "169.254.0.0", LL },
	{ "169.254.1.1", LL },
	{ "169.254.255.255", LL },
	{ "169.253.255.255", PUB },
	{ "169.255.0.0", PUB },
	{ "224.0.0.0", MC },
	{ "224.0.0.251", MC },
	{ "239.255.255.255", MC },
	{ "223.255.255.255", PUB },
	{ "240.0.0.0", BC },
	{ "250.1.2.3", BC },
	{ "255.255.255.254", BC },
	{ "255.255.255.255", BC },
	/* metadata endpoints, and their neighbours */
	{ "169.254.169.254", META },
	{ "169.254.169.253", LL },
	{ "169.254.169.255", LL },
	{ "169.254.170.2", META },
	{ "100.100.100.200", META },
	{ "100.100.100.201", PUB },
	{ "168.63.129.16", META },
	{ "168.63.129.17", PUB },
	/* private ranges are not always denied */
	{ "10.0.0.1", PUB },
	{ "172.16.0.1", PUB },
	{ "192.168.1.1", PUB },
	{ "100.64.0.1", PUB },
	{ "8.8.8.8", PUB },
	{ "192.0.2.1", PUB },
	/* native IPv6 */
	{ "::1", LOOP },
	{ "::", UNSP },
	{ "fe80::1", LL },
	{ "fe80::", LL },
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", LL },
	{ "fe7f:ffff::1", PUB },
	{ "fec0::1", PUB },
	{ "ff00::", MC },
	{ "ff02::1", MC },
	{ "ff0e::101", MC },
	{ "feff::1", PUB },
	{ "fd00:ec2::254", META },
	{ "fd00:ec2::253", PUB },
	{ "fd00:ec2::23", META },	/* EKS Pod Identity (round 42) */
	{ "fd00:ec2::22", PUB },
	{ "fd20:ce::254", META },
	{ "fd00:42::42", META },	/* Scaleway (round 42) */
	{ "fd00:42::43", PUB },
	{ "fd00:c1::a9fe:a9fe", META },	/* Oracle IMDS (review of round 42) */
	{ "fd00:c1::a9fe:a9ff", PUB },
	{ "fd00:a9fe:a9fe::1", META },	/* Akamai (review of round 42) */
	{ "fd00:a9fe:a9fe::2", PUB },
	{ "fd00:100::100:200", META },	/* Alibaba (round 43) */
	{ "fd00:100::100:201", PUB },
	{ "fc00::1", PUB },
	{ "2001:db8::1", PUB },
	{ "2606:4700:4700::1111", PUB },
	{ "::2", UNSP }, /* IPv4-compatible 0.0.0.2 */
	{ "::0.0.0.1", LOOP }, /* that is ::1, not an embedded form */
	/* IPv4-mapped ::ffff:0:0/96 */
	{ "::ffff:127.0.0.1", LOOP },
	{ "::ffff:7f00:1", LOOP },
	{ "::ffff:0.0.0.0", UNSP },
	{ "::ffff:169.254.1.1", LL },
	{ "::ffff:224.0.0.251", MC },
	{ "::ffff:255.255.255.255", BC },
	{ "::ffff:169.254.169.254", META },
	{ "::ffff:100.100.100.200", META },
	{ "::ffff:168.63.129.16", META },
	{ "::ffff:8.8.8.8", PUB },
	{ "::fffe:127.0.0.1", PUB },
	{ "::1:ffff:127.0.0.1", PUB },
	/* IPv4-translated (SIIT) ::ffff:0:0:0/96 */
	{ "::ffff:0:127.0.0.1", LOOP },
	{ "::ffff:0:169.254.169.254", META },
	{ "::ffff:0:8.8.8.8", PUB },
	/* IPv4-compatible ::/96 */
	{ "::127.0.0.1", LOOP },
	{ "::169.254.1.1", LL },
	{ "::224.0.0.1", MC },
	{ "::255.255.255.255", BC },
	{ "::169.254.169.254", META },
	{ "::8.8.8.8", PUB },
	/* NAT64 well-known 64:ff9b::/96 */
	{ "64:ff9b::127.0.0.1", LOOP },
	{ "64:ff9b::7f00:1", LOOP },
	{ "64:ff9b::0.0.0.0", UNSP },
	{ "64:ff9b::169.254.1.1", LL },
	{ "64:ff9b::224.0.0.251", MC },
	{ "64:ff9b::255.255.255.255", BC },
	{ "64:ff9b::169.254.169.254", META },
	{ "64:ff9b::100.100.100.200", META },
	{ "64:ff9b::8.8.8.8", PUB },
	{ "64:ff9b:0:0:0:1:7f00:1", PUB }, /* outside the /96 */
	{ "64:ff9a::7f00:1", PUB },
	/* NAT64 local-use 64:ff9b:1::/48 */
	{ "64:ff9b:1::127.0.0.1", LOOP },
	{ "64:ff9b:1:ffff:ffff:ffff:7f00:1", LOOP },
	{ "64:ff9b:1::169.254.169.254", META },
	{ "64:ff9b:1::224.0.0.1", MC },
	{ "64:ff9b:1::8.8.8.8", PUB },
	{ "64:ff9b:2::7f00:1", PUB },
	/* 6to4 2002::/16, IPv4 in bits 16-47 */
	{ "2002:7f00:1::", LOOP },
	{ "2002:7f00:1:ffff::1", LOOP },
	{ "2002:0:0::1", UNSP },
	{ "2002:a9fe:101::1", LL },
	{ "2002:e000:fb::1", MC },
	{ "2002:ffff:ffff::1", BC },
	{ "2002:a9fe:a9fe::1", META },
	{ "2002:6464:64c8::1", META },
	{ "2002:a83f:8110::1", META },
	{ "2002:808:808::1", PUB },
	{ "2003:7f00:1::", PUB },
	/* Teredo 2001:0::/32: server IPv4 in bits 32-63, client IPv4 inverted
	 * in the last 32 bits; both judged */
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", PUB }, /* RFC 4380 example */
	{ "2001:0:4136:e378:8000:63bf:80ff:fffe", LOOP }, /* client 127.0.0.1 */
	{ "2001:0:4136:e378::5601:5601", META },	   /* client 169.254.169.254 */
	{ "2001:0:4136:e378::1fff:ff04", MC },		   /* client 224.0.0.251 */
	{ "2001:0:7f00:1::3fff:fdd2", LOOP },		   /* server 127.0.0.1 */
	{ "2001:0:a9fe:101::3fff:fdd2", LL },		   /* server 169.254.1.1 */
	{ "2001:0:7f00:1::", BC },			   /* client 255.255.255.255 */
	{ "2001:1:7f00:1::80ff:fffe", PUB },		   /* not Teredo */
	/* ISATAP: any /64, interface ID 0[0-3]00:5efe, IPv4 in the last 32 bits */
	{ "2001:db8:1:2:0:5efe:127.0.0.1", LOOP },
	{ "fe80::5efe:169.254.169.254", LL },		   /* link-local first */
	{ "2001:db8::200:5efe:a9fe:a9fe", META },
	{ "2a00:1:2:3:300:5efe:224.0.0.1", MC },
	{ "2001:db8::200:5efe:8.8.8.8", PUB },
	{ "2001:db8::400:5efe:127.0.0.1", PUB },	   /* not ISATAP */
	{ "2001:db8::200:5eff:127.0.0.1", PUB },
	{ "2002:808:808:1:0:5efe:7f00:1", LOOP },	   /* ISATAP under 6to4 */
	{ "2002:808:808:1:200:5efe:a9fe:a9fe", META },
	{ "2001:0:4136:e378:0:5efe:7f00:1", LOOP },	   /* ISATAP under Teredo */
	/* Oracle Cloud's legacy metadata address */
	{ "192.0.0.192", META },
	{ "192.0.0.191", PUB },
	{ "::ffff:192.0.0.192", META },
};

static void test_classify(void)
{
	struct sockaddr_storage ss;
	size_t i;

	for (i = 0; i < ARRAY_LEN(class_cases); i++) {
		const struct class_case *c = &class_cases[i];
		enum policy_addr_class got = policy_addr_classify(mksa(&ss, c->addr, 443));

		ROW(got == c->cls, "classify row %zu %s: expected %s, got %s", i, c->addr,
		    policy_addr_class_name(c->cls), policy_addr_class_name(got));
	}
}

/* Every class has its own name; a family without classes is public. */
static void test_class_names(void)
{
	static const struct {
		enum policy_addr_class cls;
		const char *name;
	} names[] = {
		{ ADDR_PUBLIC, "public" },
		{ ADDR_LOOPBACK, "loopback" },
		{ ADDR_UNSPECIFIED, "unspecified" },
		{ ADDR_LINK_LOCAL, "link-local" },
		{ ADDR_MULTICAST, "multicast" },
		{ ADDR_BROADCAST, "broadcast/reserved" },
		{ ADDR_METADATA, "cloud metadata endpoint" },
	};
	struct sockaddr_un sun;
	size_t i;

	for (i = 0; i < ARRAY_LEN(names); i++)
		ROW(strcmp(policy_addr_class_name(names[i].cls), names[i].name) == 0,
		    "class name row %zu: expected \"%s\", got \"%s\"", i, names[i].name,
		    policy_addr_class_name(names[i].cls));
	CU_ASSERT_STRING_EQUAL(policy_addr_class_name((enum policy_addr_class)99), "unknown");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	CU_ASSERT_EQUAL(policy_addr_classify((const struct sockaddr *)&sun), ADDR_PUBLIC);
}

/* ------------------------------------------------------------------ */
/* policy_addr_allowed                                                  */
/* ------------------------------------------------------------------ */

#define FIX_MAX 16

static struct {
	struct policy p;
	struct policy_hostent allowed[FIX_MAX], denied[FIX_MAX];
	struct policy_cidr cidr[FIX_MAX];
	char text[3 * FIX_MAX][80];
	char rule[3 * FIX_MAX][120];
	size_t n_str;
} fx;

static void fx_reset(void)
{
	memset(&fx, 0, sizeof(fx));
	fx.p.allowed.v = fx.allowed;
	fx.p.denied.v = fx.denied;
	fx.p.denied_addrs = fx.cidr;
	fx.p.tls_terminate = true;
}

/* Stores text and "<list>: <text>"; returns the index of both. */
static size_t fx_str(const char *list, const char *text)
{
	snprintf(fx.text[fx.n_str], sizeof(fx.text[0]), "%s", text);
	snprintf(fx.rule[fx.n_str], sizeof(fx.rule[0]), "%s: %s", list, text);
	return fx.n_str++;
}

static void fx_host(struct policy_hostlist *l, const char *list, const char *text)
{
	struct policy_hostent *e = &l->v[l->n++];
	const char *err = policy_hostpat_parse(text, true, &e->pat);
	size_t k;

	if (err != NULL) {
		fprintf(stderr, "fixture pattern \"%s\": %s\n", text, err);
		CU_FAIL_FATAL("fixture pattern refused");
	}
	k = fx_str(list, text);
	e->text = fx.text[k];
	e->rule = fx.rule[k];
}

/* Adds a deniedResolvedAddresses entry "ADDR/PREFIX". */
static void fx_cidr(const char *text)
{
	struct policy_cidr *c = &fx.cidr[fx.p.n_denied_addrs++];
	char addr[64];
	const char *slash = strchr(text, '/');
	size_t k;

	snprintf(addr, sizeof(addr), "%.*s", (int)(slash - text), text);
	c->family = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(c->family, addr, c->addr) != 1)
		CU_FAIL_FATAL("fixture CIDR refused");
	c->prefix = (unsigned)atoi(slash + 1);
	k = fx_str("deniedResolvedAddresses", text);
	c->text = fx.text[k];
	c->rule = fx.rule[k];
}

static void fx_main(void)
{
	static const char *const allowed[] = {
		"127.0.0.1:8080", "[::1]",	  "169.254.169.254:80", "10.1.2.3",
		"198.51.100.7",	  "example.com", "203.0.113.9:443",	"*.example.org",
		"[fd00:ec2::254]:80",
	};
	static const char *const denied[] = {
		"198.51.100.7",	  "192.0.2.66", "[2001:db8::66]", "203.0.113.5:25",
		"[::ffff:192.0.2.77]", "[::1]:9", "*.bad.example", "[64:ff9b::c633:6405]",
	};
	static const char *const cidrs[] = {
		"10.0.0.0/8",	      "172.16.0.0/12",	   "192.168.0.0/16",	 "100.64.0.0/10",
		"fc00::/7",	      "2001:db8:dead::/48", "2001:db8:beef::1/128", "198.18.0.0/15",
		"203.0.113.128/25",   "192.0.2.200/31",	   "::ffff:192.0.2.240/124",
	};
	size_t i;

	fx_reset();
	for (i = 0; i < ARRAY_LEN(allowed); i++)
		fx_host(&fx.p.allowed, "allowedDomains", allowed[i]);
	for (i = 0; i < ARRAY_LEN(denied); i++)
		fx_host(&fx.p.denied, "deniedDomains", denied[i]);
	for (i = 0; i < ARRAY_LEN(cidrs); i++)
		fx_cidr(cidrs[i]);
}

struct guard_case {
	const char *addr;
	uint16_t port;
	bool allowed;
	const char *rule; /* NULL: allowed with no deciding rule */
};

#define A(x) "allowedDomains: " x
#define D(x) "deniedDomains: " x
#define R(x) "deniedResolvedAddresses: " x
#define C_LOOP "resolved address is loopback"
#define C_UNSP "resolved address is unspecified"
#define C_LL "resolved address is link-local"
#define C_MC "resolved address is multicast"
#define C_BC "resolved address is broadcast/reserved"
#define C_META "resolved address is a cloud metadata endpoint"

static const struct guard_case guard_cases[] = {
	/* public, nothing to say */
	{ "8.8.8.8", 443, true, NULL },
	{ "2606:4700:4700::1111", 443, true, NULL },
	{ "::ffff:8.8.8.8", 443, true, NULL },
	/* the literal exception, with and without its port */
	{ "127.0.0.1", 8080, true, A("127.0.0.1:8080") },
	{ "127.0.0.1", 8081, false, C_LOOP },
	{ "127.0.0.2", 8080, false, C_LOOP },
	{ "::ffff:127.0.0.1", 8080, false, C_LOOP }, /* exception is exact */
	{ "64:ff9b::7f00:1", 8080, false, C_LOOP },
	{ "::1", 443, true, A("[::1]") },
	{ "::1", 1, true, A("[::1]") },
	{ "169.254.169.254", 80, true, A("169.254.169.254:80") },
	{ "169.254.169.254", 443, false, C_META },
	{ "::ffff:169.254.169.254", 80, false, C_META },
	{ "fd00:ec2::254", 80, true, A("[fd00:ec2::254]:80") },
	{ "fd00:ec2::254", 443, false, C_META },
	{ "10.1.2.3", 443, true, A("10.1.2.3") }, /* over a denied CIDR */
	{ "203.0.113.9", 443, true, A("203.0.113.9:443") },
	{ "203.0.113.9", 80, true, NULL },
	/* a denied literal wins over everything */
	{ "198.51.100.7", 443, false, D("198.51.100.7") },
	{ "192.0.2.66", 443, false, D("192.0.2.66") },
	{ "::ffff:192.0.2.66", 443, false, D("192.0.2.66") },
	{ "64:ff9b::c000:242", 443, false, D("192.0.2.66") },
	{ "2002:c000:242::1", 443, false, D("192.0.2.66") },
	{ "192.0.2.67", 443, true, NULL },
	{ "2001:db8::66", 443, false, D("[2001:db8::66]") },
	{ "2001:db8::67", 443, true, NULL },
	{ "203.0.113.5", 25, false, D("203.0.113.5:25") },
	{ "203.0.113.5", 587, true, NULL },
	{ "192.0.2.77", 443, false, D("[::ffff:192.0.2.77]") },
	{ "::ffff:192.0.2.77", 443, false, D("[::ffff:192.0.2.77]") },
	{ "198.51.100.5", 443, false, D("[64:ff9b::c633:6405]") },
	{ "::ffff:198.51.100.5", 443, false, D("[64:ff9b::c633:6405]") },
	{ "64:ff9b::c633:6405", 443, false, D("[64:ff9b::c633:6405]") },
	{ "198.51.100.6", 443, true, NULL },
	{ "::1", 9, false, D("[::1]:9") },
	{ "::1", 10, true, A("[::1]") },
	/* always-denied classes */
	{ "0.0.0.0", 80, false, C_UNSP },
	{ "::", 80, false, C_UNSP },
	{ "::ffff:0.0.0.0", 80, false, C_UNSP },
	{ "169.254.1.1", 80, false, C_LL },
	{ "fe80::1", 80, false, C_LL },
	{ "224.0.0.1", 80, false, C_MC },
	{ "ff02::1", 80, false, C_MC },
	{ "255.255.255.255", 80, false, C_BC },
	{ "240.1.2.3", 80, false, C_BC },
	{ "168.63.129.16", 80, false, C_META },
	{ "100.100.100.200", 80, false, C_META },
	{ "64:ff9b::a9fe:a9fe", 80, false, C_META },
	{ "2002:a9fe:a9fe::1", 80, false, C_META },
	{ "::ffff:127.0.0.1", 80, false, C_LOOP },
	{ "::127.0.0.1", 80, false, C_LOOP },
	{ "2002:7f00:1::1", 80, false, C_LOOP },
	{ "64:ff9b:1::7f00:1", 80, false, C_LOOP },
	/* IPv4 CIDRs, edge bits, and embedded forms */
	{ "10.1.2.4", 443, false, R("10.0.0.0/8") },
	{ "10.0.0.0", 443, false, R("10.0.0.0/8") },
	{ "10.255.255.255", 443, false, R("10.0.0.0/8") },
	{ "9.255.255.255", 443, true, NULL },
	{ "11.0.0.0", 443, true, NULL },
	{ "::ffff:10.1.2.4", 443, false, R("10.0.0.0/8") },
	{ "::10.1.2.4", 443, false, R("10.0.0.0/8") },
	{ "64:ff9b::a01:204", 443, false, R("10.0.0.0/8") },
	{ "64:ff9b:1::a01:204", 443, false, R("10.0.0.0/8") },
	{ "2002:a01:204::1", 443, false, R("10.0.0.0/8") },
	{ "::ffff:0:10.1.2.4", 443, false, R("10.0.0.0/8") },
	{ "172.16.0.0", 443, false, R("172.16.0.0/12") },
	{ "172.31.255.255", 443, false, R("172.16.0.0/12") },
	{ "172.15.255.255", 443, true, NULL },
	{ "172.32.0.0", 443, true, NULL },
	{ "192.168.0.1", 443, false, R("192.168.0.0/16") },
	{ "192.169.0.1", 443, true, NULL },
	{ "192.167.255.255", 443, true, NULL },
	{ "100.64.0.0", 443, false, R("100.64.0.0/10") },
	{ "100.127.255.255", 443, false, R("100.64.0.0/10") },
	{ "100.63.255.255", 443, true, NULL },
	{ "100.128.0.0", 443, true, NULL },
	{ "198.18.0.0", 443, false, R("198.18.0.0/15") },
	{ "198.19.255.255", 443, false, R("198.18.0.0/15") },
	{ "198.17.255.255", 443, true, NULL },
	{ "198.20.0.0", 443, true, NULL },
	{ "203.0.113.128", 443, false, R("203.0.113.128/25") },
	{ "203.0.113.255", 443, false, R("203.0.113.128/25") },
	{ "203.0.113.127", 443, true, NULL },
	{ "192.0.2.200", 443, false, R("192.0.2.200/31") },
	{ "192.0.2.201", 443, false, R("192.0.2.200/31") },
	{ "192.0.2.199", 443, true, NULL },
	{ "192.0.2.202", 443, true, NULL },
	/* IPv6 CIDRs, edge bits; an IPv6 CIDR also covers IPv4 as ::ffff:a.b.c.d */
	{ "fc00::1", 443, false, R("fc00::/7") },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, false, R("fc00::/7") },
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, true, NULL },
	{ "fe00::1", 443, true, NULL },
	{ "2001:db8:dead::1", 443, false, R("2001:db8:dead::/48") },
	{ "2001:db8:dead:ffff:ffff:ffff:ffff:ffff", 443, false, R("2001:db8:dead::/48") },
	{ "2001:db8:deae::", 443, true, NULL },
	{ "2001:db8:deac:ffff::1", 443, true, NULL },
	{ "2001:db8:beef::1", 443, false, R("2001:db8:beef::1/128") },
	{ "2001:db8:beef::2", 443, true, NULL },
	{ "2001:db8:beef::", 443, true, NULL },
	{ "192.0.2.240", 443, false, R("::ffff:192.0.2.240/124") },
	{ "192.0.2.255", 443, false, R("::ffff:192.0.2.240/124") },
	{ "::ffff:192.0.2.250", 443, false, R("::ffff:192.0.2.240/124") },
	{ "192.0.2.239", 443, true, NULL },
	/* round 42: that CIDR is the IPv4 range 192.0.2.240/28 in every
	 * embedded form, as the IPv4 CIDR would be */
	{ "64:ff9b::192.0.2.241", 443, false, R("::ffff:192.0.2.240/124") },
	{ "64:ff9b:1::192.0.2.241", 443, false, R("::ffff:192.0.2.240/124") },
	{ "::192.0.2.242", 443, false, R("::ffff:192.0.2.240/124") },
	{ "::ffff:0:192.0.2.242", 443, false, R("::ffff:192.0.2.240/124") },
	{ "2002:c000:2f3::1", 443, false, R("::ffff:192.0.2.240/124") },
	{ "2001:0:c000:2f4::f7f7:f7f7", 443, false, R("::ffff:192.0.2.240/124") },
	{ "2001:db8::5efe:192.0.2.245", 443, false, R("::ffff:192.0.2.240/124") },
	{ "64:ff9b::192.0.2.239", 443, true, NULL },
	{ "2002:c000:2ef::1", 443, true, NULL },
	/* a public IPv6 address whose last 32 bits read like 10.0.0.1 is no
	 * embedded form: 10.0.0.0/8 leaves it */
	{ "2001:db8::a00:1", 443, true, NULL },
	{ "2606:4700::a00:1", 443, true, NULL },
};

static void run_guard(const char *name, const struct guard_case *cases, size_t n)
{
	struct sockaddr_storage ss;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct guard_case *c = &cases[i];
		const char *rule = "unset";
		bool got = policy_addr_allowed(&fx.p, mksa(&ss, c->addr, c->port), &rule);

		ROW(got == c->allowed && str_eq(rule, c->rule),
		    "%s row %zu [%s]:%u: expected %s by \"%s\", got %s by \"%s\"", name, i, c->addr,
		    c->port, c->allowed ? "allowed" : "refused", S(c->rule),
		    got ? "allowed" : "refused", S(rule));
	}
}

static void test_guard_main(void)
{
	fx_main();
	run_guard("guard", guard_cases, ARRAY_LEN(guard_cases));
}

/* Prefix 0 covers a whole family (and, for IPv4, every embedded form). */
static const struct guard_case v4all_cases[] = {
	{ "8.8.8.8", 443, false, R("0.0.0.0/0") },
	{ "::ffff:8.8.8.8", 443, false, R("0.0.0.0/0") },
	{ "2002:808:808::1", 443, false, R("0.0.0.0/0") },
	{ "2606:4700:4700::1111", 443, true, NULL },
	{ "127.0.0.1", 443, false, C_LOOP },
};
static const struct guard_case v6all_cases[] = {
	{ "2606:4700:4700::1111", 443, false, R("::/0") },
	{ "8.8.8.8", 443, false, R("::/0") },
	{ "fe80::1", 443, false, C_LL },
};

/*
 * An IPv6 CIDR that is an IPv4 range in an embedded form whose IPv4 part
 * is not its last 32 bits (6to4, Teredo's server and inverted client),
 * and the whole of a form, which is no IPv4 range (review of round 42).
 */
struct form_cidr {
	const char *cidr;
	const struct guard_case *cases;
	size_t n;
};
static const struct guard_case sixtofour_cases[] = {
	/* 2002:a00::/24 is 10.0.0.0/8 */
	{ "10.1.2.3", 443, false, R("2002:a00::/24") },
	{ "::ffff:10.1.2.3", 443, false, R("2002:a00::/24") },
	{ "64:ff9b::a01:203", 443, false, R("2002:a00::/24") },
	{ "2002:a01:203::1", 443, false, R("2002:a00::/24") },
	{ "11.1.2.3", 443, true, NULL },
	{ "2002:b01:203::1", 443, true, NULL },
};
static const struct guard_case sixtofour48_cases[] = {
	/* /48 and longer: the one address 192.0.2.1 */
	{ "192.0.2.1", 443, false, R("2002:c000:201:7::/64") },
	{ "64:ff9b::c000:201", 443, false, R("2002:c000:201:7::/64") },
	{ "192.0.2.2", 443, true, NULL },
};
static const struct guard_case teredo_server_cases[] = {
	/* 2001:0:a00::/40 is the server 10.0.0.0/8 */
	{ "10.9.9.9", 443, false, R("2001:0:a00::/40") },
	{ "64:ff9b::a09:909", 443, false, R("2001:0:a00::/40") },
	{ "11.9.9.9", 443, true, NULL },
};
static const struct guard_case teredo_client_cases[] = {
	/* the client, inverted: f5ff:ff00/120 is 10.0.0.0/24 (and the
	 * server 65.54.227.120 itself) */
	{ "10.0.0.77", 443, false, R("2001:0:4136:e378:8000:63bf:f5ff:ff00/120") },
	{ "::ffff:10.0.0.78", 443, false, R("2001:0:4136:e378:8000:63bf:f5ff:ff00/120") },
	{ "65.54.227.120", 443, false, R("2001:0:4136:e378:8000:63bf:f5ff:ff00/120") },
	{ "10.0.1.77", 443, true, NULL },
};
static const struct guard_case isatap6to4_cases[] = {
	/* an ISATAP interface ID under a 6to4 prefix: its tail too */
	{ "172.20.0.9", 443, false, R("2002:c000:201:1:200:5efe:ac14:0/112") },
	{ "172.21.0.9", 443, true, NULL },
};
static const struct guard_case nat64_whole_cases[] = {
	/* the whole of a form is no IPv4 range: the form only */
	{ "8.8.8.8", 443, true, NULL },
	{ "10.1.2.3", 443, true, NULL },
	{ "2002:808:808::1", 443, true, NULL },
	{ "64:ff9b::808:808", 443, false, R("64:ff9b::/96") },
};
static const struct guard_case siit_whole_cases[] = {
	{ "8.8.8.8", 443, true, NULL },
	{ "::ffff:0:808:808", 443, false, R("::ffff:0:0:0/96") },
};
static const struct guard_case sixtofour_whole_cases[] = {
	{ "8.8.8.8", 443, true, NULL },
	{ "64:ff9b::808:808", 443, true, NULL },
	{ "2002:808:808::1", 443, false, R("2002::/16") },
};
static const struct guard_case teredo_whole_cases[] = {
	{ "8.8.8.8", 443, true, NULL },
	{ "2001:0:808:808::f7f7:f7f7", 443, false, R("2001::/32") },
};

static const struct guard_case nat64_nsp_cases[] = {
	/* NAT64 with a network-specific prefix (RFC 6052, round 43): no
	 * setting names the prefix, so its addresses are IPv6 only. The
	 * documented way: the range in the prefix's form, which covers the
	 * IPv6 addresses under it (not the IPv4 range itself). */
	{ "2001:db8:64::a01:203", 443, false, R("2001:db8:64::a00:0/104") },
	{ "2001:db8:64::b01:203", 443, true, NULL },
	{ "10.1.2.3", 443, true, NULL },
};

static void test_guard_form_cidrs(void)
{
#define FC(c, t) { c, t, ARRAY_LEN(t) }
	static const struct form_cidr forms[] = {
		FC("2002:a00::/24", sixtofour_cases),
		FC("2002:c000:201:7::/64", sixtofour48_cases),
		FC("2001:0:a00::/40", teredo_server_cases),
		FC("2001:0:4136:e378:8000:63bf:f5ff:ff00/120", teredo_client_cases),
		FC("2002:c000:201:1:200:5efe:ac14:0/112", isatap6to4_cases),
		FC("64:ff9b::/96", nat64_whole_cases),
		FC("::ffff:0:0:0/96", siit_whole_cases),
		FC("2002::/16", sixtofour_whole_cases),
		FC("2001::/32", teredo_whole_cases),
		FC("2001:db8:64::a00:0/104", nat64_nsp_cases),
	};
#undef FC
	size_t i;

	for (i = 0; i < ARRAY_LEN(forms); i++) {
		fx_reset();
		fx_cidr(forms[i].cidr);
		run_guard(forms[i].cidr, forms[i].cases, forms[i].n);
	}
}

static void test_guard_prefix0(void)
{
	fx_reset();
	fx_cidr("0.0.0.0/0");
	run_guard("guard 0.0.0.0/0", v4all_cases, ARRAY_LEN(v4all_cases));
	fx_reset();
	fx_cidr("::/0");
	run_guard("guard ::/0", v6all_cases, ARRAY_LEN(v6all_cases));
}

/*
 * Every embedded form of the header table of addracl.c against a denied
 * IPv4 literal (198.51.100.7 = c633:6407) and a denied IPv4 CIDR
 * (203.0.113.0/24 = cb00:71xx), each next to a neighbour outside; a
 * Teredo address embeds two IPv4 addresses, its server (bits 32-63) and
 * its client (inverted, last 32 bits), and either is judged. A denied
 * Teredo literal reads broadly too: both of its IPv4 addresses.
 */
static const struct guard_case embedded_cases[] = {
	/* the literal 198.51.100.7 */
	{ "198.51.100.7", 443, false, D("198.51.100.7") },
	{ "::ffff:198.51.100.7", 443, false, D("198.51.100.7") },
	{ "::ffff:0:198.51.100.7", 443, false, D("198.51.100.7") },
	{ "::198.51.100.7", 443, false, D("198.51.100.7") },
	{ "64:ff9b::c633:6407", 443, false, D("198.51.100.7") },
	{ "64:ff9b:1::c633:6407", 443, false, D("198.51.100.7") },
	{ "2002:c633:6407::1", 443, false, D("198.51.100.7") },
	{ "2001:0:c633:6407:8000:63bf:3fff:fdd2", 443, false, D("198.51.100.7") }, /* server */
	{ "2001:0:4136:e378:8000:63bf:39cc:9bf8", 443, false, D("198.51.100.7") }, /* client */
	{ "2001:db8:5:6:200:5efe:c633:6407", 443, false, D("198.51.100.7") },	     /* ISATAP */
	{ "2001:db8:5:6:200:5efe:c633:6408", 443, true, NULL },
	{ "198.51.100.8", 443, true, NULL },
	{ "::ffff:198.51.100.8", 443, true, NULL },
	{ "2001:0:c633:6408:8000:63bf:3fff:fdd2", 443, true, NULL },
	{ "2001:0:4136:e378:8000:63bf:39cc:9bf7", 443, true, NULL },
	{ "2001:1:c633:6407:8000:63bf:39cc:9bf8", 443, true, NULL }, /* not Teredo */
	/* the CIDR 203.0.113.0/24 */
	{ "203.0.113.9", 443, false, R("203.0.113.0/24") },
	{ "::ffff:203.0.113.9", 443, false, R("203.0.113.0/24") },
	{ "::ffff:0:203.0.113.9", 443, false, R("203.0.113.0/24") },
	{ "::203.0.113.9", 443, false, R("203.0.113.0/24") },
	{ "64:ff9b::cb00:7109", 443, false, R("203.0.113.0/24") },
	{ "64:ff9b:1::cb00:7109", 443, false, R("203.0.113.0/24") },
	{ "2002:cb00:7109::1", 443, false, R("203.0.113.0/24") },
	{ "2001:0:cb00:7109:8000:63bf:3fff:fdd2", 443, false, R("203.0.113.0/24") }, /* server */
	{ "2001:0:4136:e378:8000:63bf:34ff:8ef6", 443, false, R("203.0.113.0/24") }, /* client */
	{ "fd00:1::5efe:203.0.113.9", 443, false, R("203.0.113.0/24") },		/* ISATAP */
	{ "203.0.114.9", 443, true, NULL },
	{ "2002:cb00:7209::1", 443, true, NULL },
	{ "2001:0:cb00:7209:8000:63bf:3fff:fdd2", 443, true, NULL },
	{ "2001:0:4136:e378:8000:63bf:34ff:8df6", 443, true, NULL },
	/* a denied Teredo literal: server 192.0.2.55, client 192.0.2.56 */
	{ "2001:0:c000:237:8000:63bf:3fff:fdc7", 443, false,
	  D("[2001:0:c000:237:8000:63bf:3fff:fdc7]") },
	{ "192.0.2.55", 443, false, D("[2001:0:c000:237:8000:63bf:3fff:fdc7]") },
	{ "::ffff:192.0.2.56", 443, false, D("[2001:0:c000:237:8000:63bf:3fff:fdc7]") },
	{ "192.0.2.57", 443, true, NULL },
};

/* A local IPv4 address as either part of a Teredo address is local. */
static const struct guard_case embedded_local_cases[] = {
	{ "2001:0:ad5:1:8000:63bf:3fff:fdd2", 443, false, POLICY_RULE_LOCAL_ADDR }, /* server */
	{ "2001:0:4136:e378:8000:63bf:f52a:fffe", 443, false, POLICY_RULE_LOCAL_ADDR }, /* client */
	{ "2001:0:ad5:2:8000:63bf:3fff:fdd2", 443, true, NULL },
	{ "2001:db8::200:5efe:ad5:1", 443, false, POLICY_RULE_LOCAL_ADDR }, /* ISATAP */
};

static void test_guard_embedded(void)
{
	static const char *const texts[] = { "10.213.0.1" };
	struct policy_ipaddr v[ARRAY_LEN(texts)];
	struct policy_addrset set;
	struct sockaddr_storage ss;
	size_t i;

	fx_reset();
	fx_host(&fx.p.denied, "deniedDomains", "198.51.100.7");
	fx_host(&fx.p.denied, "deniedDomains", "[2001:0:c000:237:8000:63bf:3fff:fdc7]");
	fx_cidr("203.0.113.0/24");
	run_guard("guard embedded", embedded_cases, ARRAY_LEN(embedded_cases));

	fx_reset();
	for (i = 0; i < ARRAY_LEN(texts); i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].family = AF_INET;
		v[i].prefix = 32;
		if (inet_pton(AF_INET, texts[i], v[i].addr) != 1)
			CU_FAIL_FATAL("fixture local address refused");
	}
	set.n = ARRAY_LEN(texts);
	set.v = v;
	for (i = 0; i < ARRAY_LEN(embedded_local_cases); i++) {
		const struct guard_case *c = &embedded_local_cases[i];
		const char *rule = "unset";
		bool got = policy_addr_allowed_local(&fx.p, mksa(&ss, c->addr, c->port), &set, &rule);

		ROW(got == c->allowed && str_eq(rule, c->rule),
		    "embedded local row %zu [%s]:%u: expected %s by \"%s\", got %s by \"%s\"", i,
		    c->addr, c->port, c->allowed ? "allowed" : "refused", S(c->rule),
		    got ? "allowed" : "refused", S(rule));
	}
}

/* No policy entries: only the classes refuse. rule may be NULL. Another
 * family is refused. */
static void test_guard_misc(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_un sun;
	const char *rule = "unset";

	fx_reset();
	CU_ASSERT_TRUE(policy_addr_allowed(&fx.p, mksa(&ss, "10.0.0.1", 80), &rule));
	CU_ASSERT_PTR_NULL(rule);
	CU_ASSERT_FALSE(policy_addr_allowed(&fx.p, mksa(&ss, "127.0.0.1", 80), NULL));
	CU_ASSERT_TRUE(policy_addr_allowed(&fx.p, mksa(&ss, "192.0.2.1", 80), NULL));

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	CU_ASSERT_FALSE(policy_addr_allowed(&fx.p, (const struct sockaddr *)&sun, &rule));
	CU_ASSERT_STRING_EQUAL(rule, "resolved address is not IPv4 or IPv6");

	/* entries without rule strings still name their list */
	fx_main();
	fx.denied[1].rule = NULL;
	fx.allowed[3].rule = NULL;
	fx.cidr[0].rule = NULL;
	CU_ASSERT_FALSE(policy_addr_allowed(&fx.p, mksa(&ss, "192.0.2.66", 80), &rule));
	CU_ASSERT_STRING_EQUAL(rule, "network.deniedDomains");
	CU_ASSERT_TRUE(policy_addr_allowed(&fx.p, mksa(&ss, "10.1.2.3", 80), &rule));
	CU_ASSERT_STRING_EQUAL(rule, "network.allowedDomains");
	CU_ASSERT_FALSE(policy_addr_allowed(&fx.p, mksa(&ss, "10.1.2.4", 80), &rule));
	CU_ASSERT_STRING_EQUAL(rule, "network.deniedResolvedAddresses");
}

/* ------------------------------------------------------------------ */
/* policy_addr_allowed_local: this machine's own addresses (issue 13.4) */
/* ------------------------------------------------------------------ */

#define C_LOCAL POLICY_RULE_LOCAL_ADDR
#define A(x) "allowedDomains: " x
#define D(x) "deniedDomains: " x

/* Fills set from address texts. */
static void mkset(struct policy_addrset *set, struct policy_ipaddr *v, const char *const *texts,
		  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		char a[64];
		const char *slash = strchr(texts[i], '/');

		snprintf(a, sizeof(a), "%.*s", slash ? (int)(slash - texts[i]) : 63, texts[i]);
		v[i].family = strchr(a, ':') != NULL ? AF_INET6 : AF_INET;
		v[i].prefix = slash ? (unsigned)atoi(slash + 1) : v[i].family == AF_INET ? 32 : 128;
		if (inet_pton(v[i].family, a, v[i].addr) != 1)
			CU_FAIL_FATAL("fixture local address refused");
	}
	set->n = n;
	set->v = v;
}

static const struct guard_case local_cases[] = {
	/* the addresses themselves, v4 and v6, public-looking ones too */
	{ "10.213.0.1", 443, false, C_LOCAL },
	{ "198.51.100.7", 443, false, C_LOCAL },
	{ "fd42:213::1", 443, false, C_LOCAL },
	{ "2001:db8:5::5", 443, false, C_LOCAL },
	/* a local IPv4 address in every IPv6 form that reaches it */
	{ "::ffff:10.213.0.1", 443, false, C_LOCAL },
	{ "::ffff:0:10.213.0.1", 443, false, C_LOCAL },
	{ "::10.213.0.1", 443, false, C_LOCAL },
	{ "64:ff9b::10.213.0.1", 443, false, C_LOCAL },
	{ "64:ff9b:1::10.213.0.1", 443, false, C_LOCAL },
	{ "2002:0ad5:0001::1", 443, false, C_LOCAL },
	{ "::ffff:198.51.100.7", 443, false, C_LOCAL },
	/* neighbours are not local */
	{ "10.213.0.2", 443, true, NULL },
	{ "198.51.100.8", 443, true, NULL },
	{ "fd42:213::2", 443, true, NULL },
	{ "2001:db8:5::6", 443, true, NULL },
	{ "::ffff:10.213.0.2", 443, true, NULL },
	/* the classes keep their own reasons */
	{ "127.0.0.1", 443, false, C_LOOP },
	{ "::1", 443, false, C_LOOP },
	/* a listed IP literal is the exception (exact family and bytes, its
	 * port); a deniedDomains literal wins over everything */
	{ "10.213.0.3", 443, true, A("10.213.0.3") },
	{ "::ffff:10.213.0.3", 443, false, C_LOCAL },
	{ "fd42:213::3", 8080, true, A("[fd42:213::3]:8080") },
	{ "fd42:213::3", 443, false, C_LOCAL },
	{ "10.213.0.4", 443, false, D("10.213.0.4") },
	/* a deniedResolvedAddresses CIDR comes after */
	{ "10.213.0.5", 443, false, C_LOCAL },
	{ "10.213.0.6", 443, false, R("10.213.0.6/32") },
	/* local and anycast routes: prefixes, edge bits */
	{ "10.215.0.0", 443, false, C_LOCAL },
	{ "10.215.0.255", 443, false, C_LOCAL },
	{ "::ffff:10.215.0.77", 443, false, C_LOCAL },
	{ "10.215.1.0", 443, true, NULL },
	{ "10.214.255.255", 443, true, NULL },
	{ "fd42:214::", 443, false, C_LOCAL },
	{ "fd42:214::1", 443, true, NULL },
	{ "fd42:216:0:ff::1", 443, false, C_LOCAL },
	{ "fd42:216:1::1", 443, true, NULL },
};

static void test_guard_local(void)
{
	static const char *const texts[] = {
		"10.213.0.1", "198.51.100.7", "fd42:213::1", "2001:db8:5::5", "10.213.0.3",
		"fd42:213::3", "10.213.0.4", "10.213.0.5", "10.215.0.0/24", "fd42:214::/128",
		"fd42:216::/48",
	};
	struct policy_ipaddr v[ARRAY_LEN(texts)];
	struct policy_addrset set;
	struct sockaddr_storage ss;
	size_t i;

	fx_reset();
	fx_host(&fx.p.allowed, "allowedDomains", "*");
	fx_host(&fx.p.allowed, "allowedDomains", "10.213.0.3");
	fx_host(&fx.p.allowed, "allowedDomains", "[fd42:213::3]:8080");
	fx_host(&fx.p.denied, "deniedDomains", "10.213.0.4");
	fx_cidr("10.213.0.5/32");
	fx_cidr("10.213.0.6/32");
	mkset(&set, v, texts, ARRAY_LEN(texts));
	for (i = 0; i < ARRAY_LEN(local_cases); i++) {
		const struct guard_case *c = &local_cases[i];
		const char *rule = "unset";
		bool got = policy_addr_allowed_local(&fx.p, mksa(&ss, c->addr, c->port), &set, &rule);

		ROW(got == c->allowed && str_eq(rule, c->rule),
		    "local row %zu [%s]:%u: expected %s by \"%s\", got %s by \"%s\"", i, c->addr,
		    c->port, c->allowed ? "allowed" : "refused", S(c->rule),
		    got ? "allowed" : "refused", S(rule));
	}
	/* is_local: the same comparison, without the policy */
	CU_ASSERT_TRUE(policy_addr_is_local(mksa(&ss, "64:ff9b::10.213.0.1", 1), &set));
	CU_ASSERT_FALSE(policy_addr_is_local(mksa(&ss, "10.213.0.2", 1), &set));
	CU_ASSERT_FALSE(policy_addr_is_local(mksa(&ss, "10.213.0.1", 1), NULL));
	/* without a set (or an empty one) nothing is local */
	CU_ASSERT_TRUE(policy_addr_allowed_local(&fx.p, mksa(&ss, "10.213.0.1", 443), NULL, NULL));
	set.n = 0;
	CU_ASSERT_TRUE(policy_addr_allowed_local(&fx.p, mksa(&ss, "10.213.0.1", 443), &set, NULL));
	CU_ASSERT_TRUE(policy_addr_allowed(&fx.p, mksa(&ss, "10.213.0.1", 443), NULL));
}

TEST_REGISTRAR(policy_addr_register)
{
	CU_pSuite s = test_suite("policy_addr", NULL, NULL);

	test_add(s, "classify table (IPv4, IPv6, embedded forms)", test_classify);
	test_add(s, "class names", test_class_names);
	test_add(s, "guard table: exception, denied literals, classes, CIDRs", test_guard_main);
	test_add(s, "guard: prefix 0", test_guard_prefix0);
	test_add(s, "guard: an IPv6 CIDR in the 6to4 or Teredo form; the whole of a form", test_guard_form_cidrs);
	test_add(s, "guard: every embedded form (Teredo: both parts) vs literal, CIDR, local",
		 test_guard_embedded);
	test_add(s, "guard: empty policy, other families, missing rules", test_guard_misc);
	test_add(s, "guard: this machine's own addresses like loopback", test_guard_local);
}

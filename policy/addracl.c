/*
 * addracl.c - the resolved-address guard of SPEC §3.1 / §3.5 step 4: the
 * always-denied address classes, deniedResolvedAddresses, and the IP
 * literals of allowedDomains / deniedDomains.
 *
 * Always denied: loopback, unspecified, link-local, multicast, broadcast
 * (with the rest of 240.0.0.0/4, which no host can be reached at), and
 * cloud metadata endpoints. Private ranges (RFC 1918, fc00::/7, CGNAT
 * 100.64/10) are NOT always denied: the spec leaves them reachable so that
 * a name inside a company network can be allowed; a policy that wants them
 * closed lists them in deniedResolvedAddresses (10.0.0.0/8, 172.16.0.0/12,
 * 192.168.0.0/16, fc00::/7, ...).
 *
 * IPv4 embedded in IPv6 is judged by its IPv4 part, because a dual-stack
 * socket, a NAT64 gateway or a 6to4 relay delivers it there:
 *   ::ffff:0:0/96       IPv4-mapped            last 32 bits
 *   ::ffff:0:0:0/96     IPv4-translated (SIIT) last 32 bits
 *   ::/96               IPv4-compatible        last 32 bits (not :: or ::1)
 *   64:ff9b::/96        NAT64 well-known       last 32 bits
 *   64:ff9b:1::/48      NAT64 local-use        last 32 bits
 *   2002::/16           6to4                   bits 16-47
 *   2001:0::/32         Teredo                 bits 32-63 (server) and the
 *                                              last 32 bits, inverted (client)
 *   any /64 prefix with  ISATAP                 last 32 bits
 *   interface ID
 *   0[0-3]00:5efe::/32
 * An ISATAP interface (Linux's sit mode isatap) sends such an address to
 * its IPv4 part, whatever the prefix; a global address whose interface ID
 * happens to read 0200:5efe is judged by that IPv4 part too (deny
 * broadly, as for Teredo).
 * Teredo is reached only through a Teredo relay (UDP), so it is no channel
 * to a local TCP service; still, it names two IPv4 hosts, and no real
 * Teredo address embeds an always-denied or a denied one, so every check
 * judges both (deny broadly; nothing legitimate is lost). The classes, the
 * deniedDomains literals, the deniedResolvedAddresses CIDRs and this
 * machine's own addresses all compare every form of the table.
 *
 * This machine's own interface addresses are refused like loopback
 * (policy_addr_allowed_local()): the caller passes the set in, so these
 * stay pure functions: no allocation, no global state; callable from
 * callbacks.
 */
#include "policy_int.h"

#include <netinet/in.h>
#include <string.h>

/*
 * Cloud metadata endpoints (instance credentials live there: the classic
 * SSRF target). Checked before the ranges they sit in, so that a refusal
 * names them for what they are.
 *   169.254.169.254   AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, OCI...
 *   169.254.170.2     AWS ECS task metadata / credentials
 *   100.100.100.200   Alibaba Cloud
 *   168.63.129.16     Azure WireServer (host agent; not link-local)
 *   192.0.0.192       Oracle Cloud, legacy metadata (IETF protocol block)
 *   fd00:ec2::254     AWS IMDS over IPv6 (Nitro)
 *   fd00:ec2::23      AWS EKS Pod Identity Agent over IPv6 (role
 *                     credentials; its IPv4 169.254.170.23 is link-local)
 *   fd20:ce::254      GCP metadata server over IPv6
 *   fd00:42::42       Scaleway metadata over IPv6 (169.254.42.42)
 *   fd00:c1::a9fe:a9fe  Oracle Cloud IMDS over IPv6 (instance principals'
 *                     certificates; its SDKs fall back to it)
 *   fd00:a9fe:a9fe::1 Akamai (Linode) metadata over IPv6 (tokens,
 *                     user data; cloud-init's Akamai source)
 *   fd00:100::100:200 Alibaba Cloud ECS metadata over IPv6 (the twin of
 *                     100.100.100.200; STS role credentials; cloud-init's
 *                     AliYun source asks for /latest/api/token there)
 * The IPv6 ones sit in fc00::/7, which is not always denied (private
 * ranges stay reachable, see the top): each credential service a cloud
 * serves at a fixed IPv6 address must be listed here, as its IPv4 twin
 * (link-local, or listed above) is refused (round 42 of the attack: the
 * Pod Identity and Scaleway addresses were reachable through any allowed
 * name resolving there, or as a literal under allowedDomains "*"; its
 * review: Oracle's and Akamai's likewise; round 43: Alibaba's). AWS's other fixed services (fd00:ec2::253 DNS, ::123 NTP) serve no
 * credentials and stay reachable.
 */
static const uint8_t metadata_v4[][4] = {
	{ 169, 254, 169, 254 },
	{ 169, 254, 170, 2 },
	{ 100, 100, 100, 200 },
	{ 168, 63, 129, 16 },
	{ 192, 0, 0, 192 },
};
static const uint8_t metadata_v6[][16] = {
	{ 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 },
	{ 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x23 },
	{ 0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 },
	{ 0xfd, 0x00, 0x00, 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x42 },
	{ 0xfd, 0x00, 0x00, 0xc1, 0, 0, 0, 0, 0, 0, 0, 0, 0xa9, 0xfe, 0xa9, 0xfe },
	{ 0xfd, 0x00, 0xa9, 0xfe, 0xa9, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01 },
	{ 0xfd, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x02, 0x00 },
};

/* Static refusal reasons, one per class (index = enum value). */
static const char *const class_rule[] = {
	[ADDR_PUBLIC] = NULL,
	[ADDR_LOOPBACK] = "resolved address is loopback",
	[ADDR_UNSPECIFIED] = "resolved address is unspecified",
	[ADDR_LINK_LOCAL] = "resolved address is link-local",
	[ADDR_MULTICAST] = "resolved address is multicast",
	[ADDR_BROADCAST] = "resolved address is broadcast/reserved",
	[ADDR_METADATA] = "resolved address is a cloud metadata endpoint",
};

#define RULE_FAMILY "resolved address is not IPv4 or IPv6"
#define RULE_DENIED_LITERAL "network.deniedDomains"
#define RULE_ALLOWED_LITERAL "network.allowedDomains"
#define RULE_DENIED_CIDR "network.deniedResolvedAddresses"

static enum policy_addr_class classify_v4(const uint8_t a[4])
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(metadata_v4); i++)
		if (memcmp(a, metadata_v4[i], 4) == 0)
			return ADDR_METADATA;
	if (a[0] == 0)
		return ADDR_UNSPECIFIED; /* 0.0.0.0/8, "this network" */
	if (a[0] == 127)
		return ADDR_LOOPBACK;
	if (a[0] == 169 && a[1] == 254)
		return ADDR_LINK_LOCAL;
	if ((a[0] & 0xf0) == 224)
		return ADDR_MULTICAST;
	/* 240.0.0.0/4 (reserved, "class E") ends with the limited broadcast
	 * address 255.255.255.255; none of it is a reachable host, so the whole
	 * block shares the broadcast class rather than growing the enum. */
	if ((a[0] & 0xf0) == 240)
		return ADDR_BROADCAST;
	return ADDR_PUBLIC;
}

/* The most IPv4 addresses one address embeds (Teredo: server, client;
 * and an ISATAP interface ID under it, or under a 6to4 prefix). */
#define V4_VIEWS_MAX 3

/*
 * The IPv4 addresses embedded in an IPv6 one (see the table at the top):
 * fills v4[0..n-1] and returns n, 0 for none. :: and ::1 are not embedded
 * forms. Teredo gives its client first, then its server.
 */
static size_t embedded_v4(const uint8_t a[16], uint8_t v4[V4_VIEWS_MAX][4])
{
	static const uint8_t zero[12];
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t nat64_local[6] = { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 };
	size_t i, n;

	if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff) {
		memcpy(v4[0], a + 12, 4); /* ::ffff:a.b.c.d, mapped */
		return 1;
	}
	if (memcmp(a, zero, 8) == 0 && a[8] == 0xff && a[9] == 0xff && a[10] == 0 && a[11] == 0) {
		memcpy(v4[0], a + 12, 4); /* ::ffff:0:a.b.c.d, SIIT translated */
		return 1;
	}
	if (memcmp(a, zero, 12) == 0) {
		/* ::a.b.c.d, compatible; :: and ::1 are themselves. */
		if (a[12] == 0 && a[13] == 0 && a[14] == 0 && a[15] <= 1)
			return 0;
		memcpy(v4[0], a + 12, 4);
		return 1;
	}
	if (memcmp(a, nat64, 12) == 0 || memcmp(a, nat64_local, 6) == 0) {
		memcpy(v4[0], a + 12, 4); /* 64:ff9b::a.b.c.d, 64:ff9b:1:...:a.b.c.d */
		return 1;
	}
	n = 0;
	if (a[0] == 0x20 && a[1] == 0x02) {
		memcpy(v4[n++], a + 2, 4); /* 2002:AABB:CCDD::/48, 6to4 */
	} else if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) {
		for (i = 0; i < 4; i++)
			v4[n][i] = (uint8_t)~a[12 + i]; /* Teredo client, obfuscated */
		n++;
		memcpy(v4[n++], a + 4, 4); /* Teredo server */
	}
	/* ISATAP, under any prefix (a 6to4 one was its usual deployment) */
	if ((a[8] & 0xfc) == 0 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe)
		memcpy(v4[n++], a + 12, 4); /* PREFIX:0[0-3]00:5efe:a.b.c.d */
	return n;
}

static enum policy_addr_class classify_v6(const uint8_t a[16])
{
	static const uint8_t zero[16];
	uint8_t v4[V4_VIEWS_MAX][4];
	size_t i, n;

	for (i = 0; i < ARRAY_LEN(metadata_v6); i++)
		if (memcmp(a, metadata_v6[i], 16) == 0)
			return ADDR_METADATA;
	if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
		return a[15] == 0 ? ADDR_UNSPECIFIED : ADDR_LOOPBACK;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return ADDR_LINK_LOCAL; /* fe80::/10 */
	if (a[0] == 0xff)
		return ADDR_MULTICAST; /* ff00::/8 */
	n = embedded_v4(a, v4);
	for (i = 0; i < n; i++) {
		enum policy_addr_class c = classify_v4(v4[i]);

		if (c != ADDR_PUBLIC)
			return c;
	}
	return ADDR_PUBLIC;
}

/*
 * The address of a sockaddr: family, bytes (4 or 16) and port in host
 * order. Returns false for any family other than AF_INET / AF_INET6.
 */
static bool sa_addr(const struct sockaddr *sa, int *family, uint8_t addr[16], uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)sa;

		*family = AF_INET;
		memcpy(addr, &sin->sin_addr, 4);
		*port = ntohs(sin->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)sa;

		*family = AF_INET6;
		memcpy(addr, &sin6->sin6_addr, 16);
		*port = ntohs(sin6->sin6_port);
		return true;
	}
	return false;
}

/*
 * Contract in policy.h. A family other than AF_INET / AF_INET6 is
 * ADDR_PUBLIC here (it has no class); policy_addr_allowed() refuses it.
 */
enum policy_addr_class policy_addr_classify(const struct sockaddr *sa)
{
	uint8_t addr[16];
	uint16_t port;
	int family;

	if (!sa_addr(sa, &family, addr, &port))
		return ADDR_PUBLIC;
	return family == AF_INET ? classify_v4(addr) : classify_v6(addr);
}

/* Contract in policy.h. Static strings; "unknown" for a value out of range. */
const char *policy_addr_class_name(enum policy_addr_class c)
{
	switch (c) {
	case ADDR_PUBLIC:
		return "public";
	case ADDR_LOOPBACK:
		return "loopback";
	case ADDR_UNSPECIFIED:
		return "unspecified";
	case ADDR_LINK_LOCAL:
		return "link-local";
	case ADDR_MULTICAST:
		return "multicast";
	case ADDR_BROADCAST:
		return "broadcast/reserved";
	case ADDR_METADATA:
		return "cloud metadata endpoint";
	}
	return "unknown";
}

/* Whether the first prefix bits of a and b are equal. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	unsigned whole = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/*
 * The IPv4 views of an address: itself, or the IPv4 addresses embedded in
 * an IPv6 one. Fills v4[0..n-1] and returns n, 0 for none.
 */
static size_t v4_views(int family, const uint8_t addr[16], uint8_t v4[V4_VIEWS_MAX][4])
{
	if (family == AF_INET) {
		memcpy(v4[0], addr, 4);
		return 1;
	}
	return embedded_v4(addr, v4);
}

/*
 * Whether an IP-literal pattern names the address. strict: only the same
 * family and bytes (the allow exception); otherwise the IPv4 views are
 * compared too, each against each, so a denied 192.0.2.1 also refuses
 * ::ffff:192.0.2.1, 64:ff9b::c000:201, a Teredo address with 192.0.2.1 as
 * its server or its client and the rest, and a denied IPv6 literal
 * embedding an IPv4 address (mapped, NAT64, 6to4, Teredo: both) refuses
 * that IPv4 address in every form: a deny is read broadly, an exception
 * narrowly. The port is checked by the caller.
 */
static bool literal_names(const struct policy_hostpat *pat, int family, const uint8_t addr[16],
			  bool strict)
{
	uint8_t a4[V4_VIEWS_MAX][4], p4[V4_VIEWS_MAX][4];
	size_t na, np, i, j;

	if (pat->kind == HOSTPAT_IPV4 && family == AF_INET && memcmp(pat->addr, addr, 4) == 0)
		return true;
	if (pat->kind == HOSTPAT_IPV6 && family == AF_INET6 && memcmp(pat->addr, addr, 16) == 0)
		return true;
	if (strict || (pat->kind != HOSTPAT_IPV4 && pat->kind != HOSTPAT_IPV6))
		return false;
	na = v4_views(family, addr, a4);
	np = v4_views(pat->kind == HOSTPAT_IPV4 ? AF_INET : AF_INET6, pat->addr, p4);
	for (i = 0; i < na; i++)
		for (j = 0; j < np; j++)
			if (memcmp(a4[i], p4[j], 4) == 0)
				return true;
	return false;
}

/* The first IP-literal entry of l naming addr:port, or NULL. */
static const struct policy_hostent *literal_match(const struct policy_hostlist *l, int family,
						  const uint8_t addr[16], uint16_t port, bool strict)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct policy_hostpat *pat = &l->v[i].pat;

		if ((pat->port == 0 || pat->port == port) && literal_names(pat, family, addr, strict))
			return &l->v[i];
	}
	return NULL;
}

/*
 * Whether an IPv6 network address embeds an IPv4 one in its last 32 bits
 * (mapped, SIIT, compatible, NAT64, and an ISATAP interface ID under any
 * prefix, a 6to4 one too; not 6to4's or Teredo's own places, which
 * cidr_v4_ranges() reads).
 */
static bool embeds_v4_tail(const uint8_t a[16])
{
	uint8_t v4[V4_VIEWS_MAX][4];
	size_t n;

	if ((a[8] & 0xfc) == 0 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe)
		return true;
	if (a[0] == 0x20 && (a[1] == 0x02 || (a[1] == 0x01 && a[2] == 0 && a[3] == 0)))
		return false;
	n = embedded_v4(a, v4);
	return n == 1 && memcmp(v4[0], a + 12, 4) == 0;
}

/* The most IPv4 ranges one IPv6 CIDR is (Teredo: server and client). */
#define V4_RANGES_MAX 3

/* Adds the IPv4 range ADDR/PREFIX (PREFIX capped at 32) to r[*n]. */
static void v4_range(struct policy_cidr *r, size_t *n, const uint8_t addr[4], unsigned prefix, bool invert)
{
	size_t i;

	memset(&r[*n], 0, sizeof(r[*n]));
	r[*n].family = AF_INET;
	r[*n].prefix = prefix > 32 ? 32 : prefix;
	for (i = 0; i < 4; i++)
		r[*n].addr[i] = invert ? (uint8_t)~addr[i] : addr[i];
	(*n)++;
}

/*
 * The IPv4 ranges an IPv6 CIDR is, written in an embedded form (deny
 * broadly, as for a denied IPv6 literal embedding IPv4): fills r[0..n-1]
 * and returns n, 0 for none.
 *   a prefix over the last 32 bits of a tail form (embeds_v4_tail()):
 *     ::ffff:10.0.0.0/104, 64:ff9b::a00:0/104 -> 10.0.0.0/8;
 *   6to4 over bits 16-47: 2002:a00::/24 -> 10.0.0.0/8 (/48 or longer: the
 *     one IPv4 address);
 *   Teredo: the server over bits 32-63, 2001:0:a00::/40 -> 10.0.0.0/8;
 *     the client, inverted in the last 32 bits, from /97.
 * The whole of a form (64:ff9b::/96, ::ffff:0:0:0/96, 2002::/16,
 * 2001::/32: each IPv4 address through a translator or a relay) is no
 * IPv4 range: lists of special-purpose ranges carry these prefixes, and
 * read as 0.0.0.0/0 they refused every IPv4 address (review of round 42).
 * Such a CIDR refuses the IPv6 addresses of that form, as any IPv6 CIDR;
 * the mapped form ::ffff:0:0/96 is IPv4 itself (cidr_covers()).
 */
static size_t cidr_v4_ranges(const struct policy_cidr *c, struct policy_cidr r[V4_RANGES_MAX])
{
	const uint8_t *a = c->addr;
	size_t n = 0;

	if (c->family != AF_INET6 || c->prefix > 128)
		return 0;
	if (c->prefix > 96 && embeds_v4_tail(a))
		v4_range(r, &n, a + 12, c->prefix - 96, false);
	if (a[0] == 0x20 && a[1] == 0x02 && c->prefix > 16)
		v4_range(r, &n, a + 2, c->prefix - 16, false);
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0 && c->prefix > 32) {
		v4_range(r, &n, a + 4, c->prefix - 32, false);
		if (c->prefix > 96)
			v4_range(r, &n, a + 12, c->prefix - 96, true);
	}
	return n;
}

/*
 * Whether a deniedResolvedAddresses CIDR covers the address. An IPv4 CIDR
 * also covers each IPv4 address embedded in an IPv6 one (mapped, SIIT,
 * compatible, NAT64, 6to4, both parts of Teredo: see the top of the file);
 * an IPv6 CIDR also covers an IPv4 address in its mapped form
 * ::ffff:a.b.c.d. An IPv6 CIDR that is an IPv4 range written in an
 * embedded form (cidr_v4_ranges(): ::ffff:10.0.0.0/104,
 * 64:ff9b::a00:0/104, 2002:a00::/24) is also that IPv4 range, in every
 * form, as a denied IPv6 literal embedding IPv4 is (round 42: such a CIDR
 * refused 10.1.2.3 and its mapped form only, not 64:ff9b::a01:203 or
 * 2002:a01:203::).
 */
static bool cidr_covers(const struct policy_cidr *c, int family, const uint8_t addr[16])
{
	uint8_t v4[V4_VIEWS_MAX][4], mapped[16] = { [10] = 0xff, [11] = 0xff };
	struct policy_cidr r[V4_RANGES_MAX];
	size_t n, i;

	n = cidr_v4_ranges(c, r);
	for (i = 0; i < n; i++)
		if (cidr_covers(&r[i], family, addr))
			return true;

	if (c->family == AF_INET) {
		if (c->prefix > 32)
			return false;
		n = v4_views(family, addr, v4);
		for (i = 0; i < n; i++)
			if (prefix_equal(v4[i], c->addr, c->prefix))
				return true;
		return false;
	}
	if (c->family != AF_INET6 || c->prefix > 128)
		return false;
	if (family == AF_INET6)
		return prefix_equal(addr, c->addr, c->prefix);
	memcpy(mapped + 12, addr, 4);
	return prefix_equal(mapped, c->addr, c->prefix);
}

/* Whether an entry of local covers (family, addr): IPv4 entries through
 * the IPv4 view of the address (see policy_addr_is_local()). */
static bool local_names(const struct policy_addrset *local, int family, const uint8_t addr[16])
{
	uint8_t a4[V4_VIEWS_MAX][4];
	size_t n4, i, j;

	if (local == NULL)
		return false;
	n4 = v4_views(family, addr, a4);
	for (i = 0; i < local->n; i++) {
		const struct policy_ipaddr *e = &local->v[i];

		if (e->family == AF_INET && e->prefix <= 32)
			for (j = 0; j < n4; j++)
				if (prefix_equal(a4[j], e->addr, e->prefix))
					return true;
		if (e->family == AF_INET6 && e->prefix <= 128 && family == AF_INET6 &&
		    prefix_equal(addr, e->addr, e->prefix))
			return true;
	}
	return false;
}

/* Contract in policy.h. */
bool policy_addr_is_local(const struct sockaddr *sa, const struct policy_addrset *local)
{
	uint8_t addr[16] = { 0 };
	uint16_t port;
	int family;

	return sa_addr(sa, &family, addr, &port) && local_names(local, family, addr);
}

/*
 * Contract in policy.h. Order, first to decide wins:
 *   1. an IP literal of deniedDomains naming the address (and port; the
 *      IPv4 views compared, every embedded form) -> refused, its rule;
 *   2. an IP literal of allowedDomains naming exactly the address (same
 *      family and bytes; its port 0 or the sockaddr's) -> allowed, its
 *      rule: the one explicit exception, over the classes and the CIDRs;
 *   3. an always-denied class -> refused, "resolved address is CLASS";
 *   4. one of this machine's own addresses (local) -> refused,
 *      POLICY_RULE_LOCAL_ADDR: loopback by another name;
 *   5. a deniedResolvedAddresses CIDR -> refused, its rule;
 *   6. otherwise allowed, *rule = NULL.
 * A family other than IPv4/IPv6 is refused. Pure; callable from callbacks.
 */
bool policy_addr_allowed_local(const policy_t *p, const struct sockaddr *sa,
			       const struct policy_addrset *local, const char **rule)
{
	const struct policy_hostent *e;
	enum policy_addr_class c;
	const char *dummy;
	uint8_t addr[16] = { 0 };
	uint16_t port;
	int family;
	size_t i;

	if (rule == NULL)
		rule = &dummy;
	*rule = NULL;
	if (!sa_addr(sa, &family, addr, &port)) {
		*rule = RULE_FAMILY;
		return false;
	}
	if ((e = literal_match(&p->denied, family, addr, port, false)) != NULL) {
		*rule = e->rule != NULL ? e->rule : RULE_DENIED_LITERAL;
		return false;
	}
	if ((e = literal_match(&p->allowed, family, addr, port, true)) != NULL) {
		*rule = e->rule != NULL ? e->rule : RULE_ALLOWED_LITERAL;
		return true;
	}
	c = family == AF_INET ? classify_v4(addr) : classify_v6(addr);
	if (c != ADDR_PUBLIC) {
		*rule = (size_t)c < ARRAY_LEN(class_rule) && class_rule[c] != NULL
				? class_rule[c]
				: "resolved address is in an always-denied class";
		return false;
	}
	if (local_names(local, family, addr)) {
		*rule = POLICY_RULE_LOCAL_ADDR;
		return false;
	}
	for (i = 0; i < p->n_denied_addrs; i++) {
		if (cidr_covers(&p->denied_addrs[i], family, addr)) {
			*rule = p->denied_addrs[i].rule != NULL ? p->denied_addrs[i].rule
								: RULE_DENIED_CIDR;
			return false;
		}
	}
	return true;
}

/* Contract in policy.h: the guard without a set of local addresses. */
bool policy_addr_allowed(const policy_t *p, const struct sockaddr *sa, const char **rule)
{
	return policy_addr_allowed_local(p, sa, NULL, rule);
}

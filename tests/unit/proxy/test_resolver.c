/*
 * test_resolver.c - proxy/resolver.c (suite "proxy_resolver"): the
 * in-sandbox resolver served by a real proxy_t on its loop, over a real
 * UDP socket on loopback, asked with hand-built DNS packets (and once with
 * libevent's own evdns client). Covers the answers (synthetic A/AAAA, the
 * same address twice, other types, PTR), the refusals (NXDOMAIN, audit
 * record, stderr throttle flag), names allowed only on a port, wildcards
 * against the apex, denies with and without ports, the full map, a SIGHUP
 * reload, and garbage that must not crash it or stop it answering.
 */
#include "../../../proxy/resolver.c"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "tests/support/testlib.h"

/* ------------------------------------------------------------------ */
/* Fixture: a proxy serving DNS on 127.0.0.1:PORT                       */
/* ------------------------------------------------------------------ */

static const char policy_yaml[] =
	"network:\n"
	"  allowedDomains: [\"api.test\", \"*.x.test\", \"port.test:8443\", \"porty.test\",\n"
	"                   \"both.test\", \"covered.test:8443\", \"192.0.2.7\"]\n"
	"  deniedDomains: [\"porty.test:22\", \"bad.x.test\", \"both.test\", \"covered.test:8443\"]\n";

#define MAX_RECS 64

/* What the observer saw (copied: the record lives only during the call). */
struct seen {
	char kind[16], method[16], host[300], decision[8], reason[64], rule[128];
	bool repeat;
};

struct fix {
	proxy_t *px;
	int client;                   /* UDP socket connected to the server */
	struct sockaddr_in srv;       /* the server's address */
	struct seen recs[MAX_RECS];
	size_t n_recs;
	char *dir;                    /* temporary directory */
	char audit_path[512];
};

static void cp(char *dst, size_t len, const char *src)
{
	(void)snprintf(dst, len, "%s", src != NULL ? src : "(null)");
}

static void observer(void *arg, const struct audit_rec *r)
{
	struct fix *f = arg;
	struct seen *s;

	if (f->n_recs >= MAX_RECS)
		return;
	s = &f->recs[f->n_recs++];
	cp(s->kind, sizeof(s->kind), r->kind);
	cp(s->method, sizeof(s->method), r->method);
	cp(s->host, sizeof(s->host), r->host);
	cp(s->decision, sizeof(s->decision), r->decision);
	cp(s->reason, sizeof(s->reason), r->reason);
	cp(s->rule, sizeof(s->rule), r->rule);
	s->repeat = r->repeat;
}

/* A UDP socket bound to 127.0.0.1 on a free port; its address in sa. */
static int udp_bound(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	CU_ASSERT_FATAL(fd >= 0);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)sa, sizeof(*sa)) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)sa, &len) == 0);
	return fd;
}

/* Sets up f with a policy (from a file when path is set, for reloads). */
static void fix_start(struct fix *f, const char *policy_path)
{
	unsigned nerr = 0;
	policy_t *p;
	audit_t *a;
	int fd;

	memset(f, 0, sizeof(*f));
	f->dir = test_mkdtemp();
	CU_ASSERT_FATAL(f->dir != NULL);
	(void)snprintf(f->audit_path, sizeof(f->audit_path), "%s/audit.jsonl", f->dir);
	a = audit_open(f->audit_path, "0000000000000000");
	CU_ASSERT_FATAL(a != NULL);
	p = policy_path != NULL ? policy_load_file(policy_path, stderr, &nerr)
				: policy_load_buffer("test.yaml", policy_yaml, sizeof(policy_yaml) - 1,
						     stderr, &nerr);
	CU_ASSERT_FATAL(p != NULL && nerr == 0);
	f->px = proxy_new(p, policy_path, a, "0000000000000000");
	CU_ASSERT_FATAL(f->px != NULL);
	proxy_set_observer(f->px, observer, f);
	fd = udp_bound(&f->srv);
	CU_ASSERT_FATAL(proxy_adopt_resolver(f->px, fd) == 0);
	CU_ASSERT_FATAL(proxy_resolver(f->px) != NULL);
	f->client = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(f->client >= 0);
	CU_ASSERT_FATAL(connect(f->client, (struct sockaddr *)&f->srv, sizeof(f->srv)) == 0);
}

static void fix_stop(struct fix *f)
{
	proxy_free(f->px);
	(void)close(f->client);
	test_rmtree(f->dir);
	free(f->dir);
}

/* Runs the proxy's loop until the client has a datagram (or timeout_ms
 * passed); returns its length, or -1 when none came. */
static ssize_t fix_recv(struct fix *f, uint8_t *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = {.fd = f->client, .events = POLLIN};
	int waited;

	for (waited = 0; waited <= timeout_ms; waited += 5) {
		CU_ASSERT_FATAL(event_base_loop(proxy_base(f->px), EVLOOP_NONBLOCK) >= 0);
		if (poll(&pfd, 1, 5) > 0)
			return recv(f->client, buf, len, MSG_DONTWAIT);
	}
	return -1;
}

static void fix_send(struct fix *f, const uint8_t *pkt, size_t len)
{
	CU_ASSERT_FATAL(send(f->client, pkt, len, 0) == (ssize_t)len);
}

/* ------------------------------------------------------------------ */
/* DNS packets                                                          */
/* ------------------------------------------------------------------ */

#define T_A 1
#define T_MX 15
#define T_TXT 16
#define T_AAAA 28
#define T_PTR 12
#define T_HTTPS 65

#define RC_NOERROR 0
#define RC_FORMERR 1
#define RC_SERVFAIL 2
#define RC_NXDOMAIN 3
#define RC_NOTIMPL 4

/* Appends name as labels at buf[*n]; returns false if it does not fit. */
static bool put_name(uint8_t *buf, size_t cap, size_t *n, const char *name)
{
	while (*name != '\0') {
		size_t l = strcspn(name, ".");

		if (l > 63 || *n + 1 + l >= cap)
			return false;
		buf[(*n)++] = (uint8_t)l;
		memcpy(buf + *n, name, l);
		*n += l;
		name += l;
		if (*name == '.')
			name++;
	}
	if (*n >= cap)
		return false;
	buf[(*n)++] = 0;
	return true;
}

static void put16(uint8_t *buf, size_t *n, unsigned v)
{
	buf[(*n)++] = (uint8_t)(v >> 8);
	buf[(*n)++] = (uint8_t)v;
}

/* A standard query (RD set) for name/type/class; returns its length. */
static size_t build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, unsigned type,
			  unsigned cls)
{
	size_t n = 0;

	put16(buf, &n, id);
	put16(buf, &n, 0x0100); /* RD */
	put16(buf, &n, 1);
	put16(buf, &n, 0);
	put16(buf, &n, 0);
	put16(buf, &n, 0);
	CU_ASSERT_FATAL(put_name(buf, cap, &n, name));
	put16(buf, &n, type);
	put16(buf, &n, cls);
	return n;
}

struct answer {
	unsigned type;
	uint32_t ttl;
	uint8_t data[64];
	size_t len;
	char name[300];     /* the owner name */
	char target[300];   /* PTR: the name pointed to */
};

struct response {
	uint16_t id, flags, qd, an;
	int rcode;
	char qname[300];
	struct answer ans[4];
	size_t n_ans;
};

static uint16_t get16(const uint8_t *b, size_t i)
{
	return (uint16_t)(b[i] << 8 | b[i + 1]);
}

/* Reads a (possibly compressed) name at *i into out; false if malformed. */
static bool get_name(const uint8_t *b, size_t len, size_t *i, char *out, size_t cap)
{
	size_t j = *i, o = 0, hops = 0;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (j >= len)
			return false;
		l = b[j];
		if ((l & 0xc0) == 0xc0) {
			if (j + 1 >= len || ++hops > 32)
				return false;
			if (!jumped)
				*i = j + 2;
			jumped = true;
			j = (size_t)((l & 0x3f) << 8 | b[j + 1]);
			continue;
		}
		j++;
		if (l == 0)
			break;
		if (j + l > len || o + l + 2 > cap)
			return false;
		if (o > 0)
			out[o++] = '.';
		memcpy(out + o, b + j, l);
		o += l;
		j += l;
	}
	out[o] = '\0';
	if (!jumped)
		*i = j;
	return true;
}

/* Parses a response; false (and a CUnit failure) if it is malformed. */
static bool parse_response(const uint8_t *b, size_t len, struct response *r)
{
	size_t i = 12, k;

	memset(r, 0, sizeof(*r));
	if (len < 12)
		return false;
	r->id = get16(b, 0);
	r->flags = get16(b, 2);
	r->rcode = r->flags & 0xf;
	r->qd = get16(b, 4);
	r->an = get16(b, 6);
	if (r->qd >= 1) {
		if (!get_name(b, len, &i, r->qname, sizeof(r->qname)) || i + 4 > len)
			return false;
		i += 4;
	}
	for (k = 1; k < r->qd; k++) {
		char skip[300];

		if (!get_name(b, len, &i, skip, sizeof(skip)) || i + 4 > len)
			return false;
		i += 4;
	}
	for (k = 0; k < r->an && k < 4; k++) {
		struct answer *a = &r->ans[k];
		size_t rd;

		if (!get_name(b, len, &i, a->name, sizeof(a->name)) || i + 10 > len)
			return false;
		a->type = get16(b, i);
		a->ttl = (uint32_t)get16(b, i + 4) << 16 | get16(b, i + 6);
		a->len = get16(b, i + 8);
		i += 10;
		if (i + a->len > len)
			return false;
		memcpy(a->data, b + i, a->len < sizeof(a->data) ? a->len : sizeof(a->data));
		if (a->type == T_PTR) {
			rd = i;
			if (!get_name(b, len, &rd, a->target, sizeof(a->target)))
				return false;
		}
		i += a->len;
		r->n_ans++;
	}
	return true;
}

static uint16_t next_id = 0x1000;

/* Asks one question and parses the response (fatal if none comes). */
static void ask(struct fix *f, const char *name, unsigned type, struct response *r)
{
	uint8_t q[512], buf[1500];
	uint16_t id = next_id++;
	size_t n = build_query(q, sizeof(q), id, name, type, 1);
	ssize_t got;

	fix_send(f, q, n);
	got = fix_recv(f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0);
	CU_ASSERT_FATAL(parse_response(buf, (size_t)got, r));
	CU_ASSERT_EQUAL(r->id, id);
	CU_ASSERT(r->flags & 0x8000);        /* a response */
	CU_ASSERT(r->flags & 0x0400);        /* authoritative */
	CU_ASSERT(r->flags & 0x0100);        /* RD echoed */
	CU_ASSERT(r->flags & 0x0080);        /* RA */
	CU_ASSERT_EQUAL(r->qd, 1);
	CU_ASSERT_STRING_EQUAL(r->qname, name);
}

/* The A answer of name, as host-order uint32 (0 when not NOERROR/1 A). */
static uint32_t ask_a(struct fix *f, const char *name)
{
	struct response r;

	ask(f, name, T_A, &r);
	if (r.rcode != RC_NOERROR || r.n_ans != 1 || r.ans[0].type != T_A || r.ans[0].len != 4)
		return 0;
	CU_ASSERT_EQUAL(r.ans[0].ttl, RESOLVER_TTL_S);
	CU_ASSERT_STRING_EQUAL(r.ans[0].name, name);
	return (uint32_t)r.ans[0].data[0] << 24 | (uint32_t)r.ans[0].data[1] << 16 |
	       (uint32_t)r.ans[0].data[2] << 8 | r.ans[0].data[3];
}

static int ask_rcode(struct fix *f, const char *name, unsigned type, size_t *n_ans)
{
	struct response r;

	ask(f, name, type, &r);
	if (n_ans != NULL)
		*n_ans = r.n_ans;
	return r.rcode;
}

static const char *name_of_v4(struct fix *f, uint32_t a)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(a)};

	return resolver_name_of(proxy_resolver(f->px), (struct sockaddr *)&sin);
}

static const char *name_of_v6(struct fix *f, const uint8_t a[16])
{
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};

	memcpy(sin6.sin6_addr.s6_addr, a, 16);
	return resolver_name_of(proxy_resolver(f->px), (struct sockaddr *)&sin6);
}

static bool str_is(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

#define V4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static void client_cb_ignore(int result, char type, int count, int ttl, void *addresses, void *arg)
{
	(void)result, (void)type, (void)count, (void)ttl, (void)addresses, (void)arg;
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

/* Allowed names: A and AAAA from the pools, the same address for the
 * same name (any case), another for another name, and the map back. */
static void test_allowed(void)
{
	static const uint8_t v6_api[16] = {0xfd, 0x70, 0x61, 0x73, 0x73, 0x76, 0, 1,
					   0,    0,    0,    0,    0,    0,    0, 2};
	static const uint8_t v6_other[16] = {0xfd, 0x70, 0x61, 0x73, 0x73, 0x76, 0, 1,
					     0,    0,    0,    0,    0,    0,    0, 3};
	uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct response r;
	struct fix f;

	fix_start(&f, NULL);
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	/* 0x20 case randomisation: same name, echoed as asked */
	CU_ASSERT_EQUAL(ask_a(&f, "ApI.TeSt"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_a(&f, "a.x.test"), V4(198, 18, 0, 3));
	CU_ASSERT_EQUAL(ask_a(&f, "deep.b.x.test"), V4(198, 18, 0, 4));
	ask(&f, "api.test", T_AAAA, &r);
	CU_ASSERT_EQUAL(r.rcode, RC_NOERROR);
	CU_ASSERT_FATAL(r.n_ans == 1);
	CU_ASSERT_EQUAL(r.ans[0].type, T_AAAA);
	CU_ASSERT_EQUAL(r.ans[0].ttl, RESOLVER_TTL_S);
	CU_ASSERT(r.ans[0].len == 16 && memcmp(r.ans[0].data, v6_api, 16) == 0);
	ask(&f, "a.x.test", T_AAAA, &r);
	CU_ASSERT(r.n_ans == 1 && r.ans[0].len == 16 && memcmp(r.ans[0].data, v6_other, 16) == 0);
	/* AAAA first for a new name: the next index, shared by its A */
	ask(&f, "c.x.test", T_AAAA, &r);
	CU_ASSERT(r.n_ans == 1 && r.ans[0].len == 16 && r.ans[0].data[15] == 5);
	CU_ASSERT_EQUAL(ask_a(&f, "c.x.test"), V4(198, 18, 0, 5));

	/* resolver_name_of: v4, v6, v4-mapped v6; nothing else */
	CU_ASSERT(str_is(name_of_v4(&f, V4(198, 18, 0, 2)), "api.test"));
	CU_ASSERT(str_is(name_of_v4(&f, V4(198, 18, 0, 3)), "a.x.test"));
	CU_ASSERT(str_is(name_of_v6(&f, v6_api), "api.test"));
	CU_ASSERT(str_is(name_of_v6(&f, mapped), "api.test"));
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(198, 18, 0, 6)));   /* never handed out */
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(198, 18, 0, 1)));   /* the sandbox's lo */
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(198, 18, 0, 0)));
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(198, 19, 0, 2)));
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(10, 0, 0, 2)));
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(255, 255, 255, 255)));
	{
		uint8_t v6[16];

		memcpy(v6, v6_api, 16);
		v6[15] = 6; /* never handed out */
		CU_ASSERT_PTR_NULL(name_of_v6(&f, v6));
		v6[15] = 1;
		CU_ASSERT_PTR_NULL(name_of_v6(&f, v6));
		memcpy(v6, v6_api, 16);
		v6[8] = 1; /* high bits of the interface id set */
		CU_ASSERT_PTR_NULL(name_of_v6(&f, v6));
		memcpy(v6, v6_api, 16);
		v6[7] = 2; /* another /64 */
		CU_ASSERT_PTR_NULL(name_of_v6(&f, v6));
		mapped[12] = 10; /* ::ffff:10.18.0.2 */
		CU_ASSERT_PTR_NULL(name_of_v6(&f, mapped));
	}
	CU_ASSERT_EQUAL(f.n_recs, 0); /* allowed lookups are not audited */
	fix_stop(&f);
}

/* Which names the policy lets the resolver answer. */
static void test_policy_names(void)
{
	struct fix f;

	fix_start(&f, NULL);
	/* a name allowed only on a port is a name */
	CU_ASSERT_NOT_EQUAL(ask_a(&f, "port.test"), 0);
	/* a deny with a port does not NXDOMAIN the name */
	CU_ASSERT_NOT_EQUAL(ask_a(&f, "porty.test"), 0);
	/* wildcard: subdomains, not the apex */
	CU_ASSERT_EQUAL(ask_rcode(&f, "x.test", T_A, NULL), RC_NXDOMAIN);
	/* deny wins: port-less, and a deny covering the only allowed port */
	CU_ASSERT_EQUAL(ask_rcode(&f, "both.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "bad.x.test", T_AAAA, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "covered.test", T_A, NULL), RC_NXDOMAIN);
	/* an allowed IP literal is not a name */
	CU_ASSERT_EQUAL(ask_rcode(&f, "192.0.2.7", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_FATAL(f.n_recs == 5);
	CU_ASSERT_STRING_EQUAL(f.recs[0].host, "x.test");
	CU_ASSERT_STRING_EQUAL(f.recs[0].reason, "not in allowedDomains");
	CU_ASSERT_STRING_EQUAL(f.recs[0].rule, "network.allowedDomains (no entry matches)");
	CU_ASSERT_STRING_EQUAL(f.recs[1].rule, "network.deniedDomains: both.test");
	CU_ASSERT_STRING_EQUAL(f.recs[1].reason, "denied by network.deniedDomains: both.test");
	CU_ASSERT_STRING_EQUAL(f.recs[2].rule, "network.deniedDomains: bad.x.test");
	CU_ASSERT_STRING_EQUAL(f.recs[2].method, "AAAA");
	CU_ASSERT_STRING_EQUAL(f.recs[3].rule, "network.deniedDomains: covered.test:8443");
	CU_ASSERT_STRING_EQUAL(f.recs[4].host, "192.0.2.7");
	CU_ASSERT_STRING_EQUAL(f.recs[4].reason, "not a valid DNS name");
	fix_stop(&f);
}

/* A denied name: NXDOMAIN for every type, one audit line per question,
 * the observer told which ones repeat within a second. */
static void test_denied(void)
{
	char *audit, *p;
	size_t n_ans = 9, lines = 0;
	struct fix f;

	fix_start(&f, NULL);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_A, &n_ans), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(n_ans, 0);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_AAAA, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "EVIL.test", T_TXT, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_MX, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_HTTPS, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "other.evil.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_FATAL(f.n_recs == 6);
	CU_ASSERT_STRING_EQUAL(f.recs[0].kind, "dns");
	CU_ASSERT_STRING_EQUAL(f.recs[0].method, "A");
	CU_ASSERT_STRING_EQUAL(f.recs[0].host, "evil.test");
	CU_ASSERT_STRING_EQUAL(f.recs[0].decision, "deny");
	CU_ASSERT_STRING_EQUAL(f.recs[0].reason, "not in allowedDomains");
	CU_ASSERT_FALSE(f.recs[0].repeat);
	CU_ASSERT_TRUE(f.recs[1].repeat);
	CU_ASSERT_STRING_EQUAL(f.recs[2].host, "evil.test"); /* normalised */
	CU_ASSERT_STRING_EQUAL(f.recs[2].method, "TXT");
	CU_ASSERT_TRUE(f.recs[2].repeat);
	CU_ASSERT_STRING_EQUAL(f.recs[4].method, "HTTPS");
	CU_ASSERT_FALSE(f.recs[5].repeat); /* another name */
	/* a second later it is news again */
	usleep(1100 * 1000);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_FATAL(f.n_recs == 7);
	CU_ASSERT_FALSE(f.recs[6].repeat);
	/* the audit has every one of them */
	audit = test_read_file(f.audit_path, NULL);
	CU_ASSERT_FATAL(audit != NULL);
	for (p = audit; (p = strstr(p, "\"kind\":\"dns\"")) != NULL; p++)
		lines++;
	CU_ASSERT_EQUAL(lines, 7);
	CU_ASSERT_PTR_NOT_NULL(strstr(audit, "\"method\":\"HTTPS\",\"scheme\":null,\"host\":\"evil.test\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(audit, "\"decision\":\"deny\",\"reason\":\"not in allowedDomains\""));
	CU_ASSERT_PTR_NULL(strstr(audit, "repeat"));
	free(audit);
	fix_stop(&f);
}

/* Round 4 of the attack: a flood of refused names must not fill the
 * audit's filesystem (a refused question sends nothing anywhere). At most
 * RESOLVER_AUDIT_PER_S (100) a second are recorded one by one; one
 * record sums up the rest when the second is over. Every question is
 * accounted for: the lines plus the sums. */
static void test_denied_flood(void)
{
	char name[64], *audit, *p;
	size_t lines = 0, sums = 0;
	unsigned long summed = 0;
	struct fix f;

	fix_start(&f, NULL);
	for (int i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "f%d.evil.test", i);
		CU_ASSERT_EQUAL(ask_rcode(&f, name, T_TXT, NULL), RC_NXDOMAIN);
	}
	usleep(1100 * 1000);
	CU_ASSERT_EQUAL(ask_rcode(&f, "last.evil.test", T_A, NULL), RC_NXDOMAIN);
	audit = test_read_file(f.audit_path, NULL);
	CU_ASSERT_FATAL(audit != NULL);
	for (p = audit; (p = strstr(p, "\"host\":\"")) != NULL; p++)
		if (strncmp(p + 8, "f", 1) == 0 || strncmp(p + 8, "last.", 5) == 0)
			lines++;
	for (p = audit; (p = strstr(p, "\"reason\":\"passavant: ")) != NULL; p++) {
		unsigned long n = strtoul(p + 21, NULL, 10);

		if (strstr(p, " more refused DNS questions came within a second") != NULL && n > 0) {
			summed += n;
			sums++;
		}
	}
	CU_ASSERT(sums >= 1);
	CU_ASSERT(lines < 251);
	CU_ASSERT_EQUAL(lines + summed, 251);
	if (lines + summed != 251 || sums == 0)
		fprintf(stderr, "\n    %zu lines, %zu sums of %lu\n", lines, sums, summed);
	free(audit);
	fix_stop(&f);
}

/* The resolver never asks anyone: with the proxy's own (host) resolver
 * pointed at a socket of ours, neither allowed nor denied questions
 * reach it. */
static void test_never_resolves(void)
{
	struct sockaddr_in up;
	uint8_t buf[1500];
	char ns[64];
	struct fix f;
	int upfd;

	fix_start(&f, NULL);
	upfd = udp_bound(&up);
	(void)snprintf(ns, sizeof(ns), "127.0.0.1:%u", (unsigned)ntohs(up.sin_port));
	CU_ASSERT_FATAL(evdns_base_clear_nameservers_and_suspend(proxy_dns(f.px)) == 0);
	CU_ASSERT_FATAL(evdns_base_nameserver_ip_add(proxy_dns(f.px), ns) == 0);
	CU_ASSERT_FATAL(evdns_base_resume(proxy_dns(f.px)) == 0);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "evil.test", T_AAAA, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_rcode(&f, "api.test", T_TXT, NULL), RC_NOERROR);
	(void)fix_recv(&f, buf, sizeof(buf), 100); /* let the loop run a little more */
	CU_ASSERT_EQUAL(recv(upfd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	CU_ASSERT_EQUAL(errno, EAGAIN);
	/* the test's own check can fail: the host resolver does reach it */
	CU_ASSERT_PTR_NOT_NULL(evdns_base_resolve_ipv4(proxy_dns(f.px), "probe.test",
						       DNS_QUERY_NO_SEARCH, client_cb_ignore, NULL));
	(void)fix_recv(&f, buf, sizeof(buf), 100);
	CU_ASSERT(recv(upfd, buf, sizeof(buf), MSG_DONTWAIT) > 0);
	(void)close(upfd);
	fix_stop(&f);
}

/* Other types for an allowed name: NOERROR, no answer, nothing mapped. */
static void test_other_types(void)
{
	size_t n_ans = 9;
	struct fix f;

	fix_start(&f, NULL);
	CU_ASSERT_EQUAL(ask_rcode(&f, "api.test", T_TXT, &n_ans), RC_NOERROR);
	CU_ASSERT_EQUAL(n_ans, 0);
	n_ans = 9;
	CU_ASSERT_EQUAL(ask_rcode(&f, "api.test", T_MX, &n_ans), RC_NOERROR);
	CU_ASSERT_EQUAL(n_ans, 0);
	n_ans = 9;
	CU_ASSERT_EQUAL(ask_rcode(&f, "a.x.test", T_HTTPS, &n_ans), RC_NOERROR);
	CU_ASSERT_EQUAL(n_ans, 0);
	CU_ASSERT_EQUAL(proxy_resolver(f.px)->n, 0);
	CU_ASSERT_EQUAL(f.n_recs, 0);
	fix_stop(&f);
}

/* PTR: the name of a handed-out address (v4 and v6), NXDOMAIN otherwise. */
static void test_ptr(void)
{
	static const char v6rev[] =
		"2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.6.7.3.7.3.7.1.6.0.7.d.f.ip6.arpa";
	struct response r;
	struct fix f;

	fix_start(&f, NULL);
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	ask(&f, "2.0.18.198.in-addr.arpa", T_PTR, &r);
	CU_ASSERT_EQUAL(r.rcode, RC_NOERROR);
	CU_ASSERT_FATAL(r.n_ans == 1);
	CU_ASSERT_EQUAL(r.ans[0].type, T_PTR);
	CU_ASSERT_STRING_EQUAL(r.ans[0].target, "api.test");
	CU_ASSERT_STRING_EQUAL(r.ans[0].name, "2.0.18.198.in-addr.arpa");
	ask(&f, v6rev, T_PTR, &r);
	CU_ASSERT_EQUAL(r.rcode, RC_NOERROR);
	CU_ASSERT(r.n_ans == 1 && strcmp(r.ans[0].target, "api.test") == 0);
	CU_ASSERT_EQUAL(ask_rcode(&f, "3.0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "1.0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "1.0.0.127.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "02.0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "2.2.0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "258.0.18.198.in-addr.arpa", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, "api.test", T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_rcode(&f, v6rev + 2, T_PTR, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(f.n_recs, 0); /* PTR asks about no name: not audited */
	fix_stop(&f);
}

/* The map is bounded: the next new name gets SERVFAIL, addresses are not
 * recycled, names already mapped keep working. */
static void test_full(void)
{
	struct fix f;

	fix_start(&f, NULL);
	proxy_resolver(f.px)->max = 2;
	CU_ASSERT_EQUAL(ask_a(&f, "a.x.test"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_a(&f, "b.x.test"), V4(198, 18, 0, 3));
	CU_ASSERT_EQUAL(ask_rcode(&f, "c.x.test", T_A, NULL), RC_SERVFAIL);
	CU_ASSERT_EQUAL(ask_rcode(&f, "c.x.test", T_AAAA, NULL), RC_SERVFAIL);
	/* other types need no address */
	CU_ASSERT_EQUAL(ask_rcode(&f, "c.x.test", T_TXT, NULL), RC_NOERROR);
	CU_ASSERT_EQUAL(ask_a(&f, "a.x.test"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_a(&f, "b.x.test"), V4(198, 18, 0, 3));
	CU_ASSERT_PTR_NULL(name_of_v4(&f, V4(198, 18, 0, 4)));
	CU_ASSERT_EQUAL(proxy_resolver(f.px)->n, 2);
	fix_stop(&f);
}

/* Grows the map past its first allocation and checks both directions. */
static void test_many(void)
{
	char name[64];
	struct fix f;
	unsigned i;

	fix_start(&f, NULL);
	for (i = 0; i < 300; i++) {
		(void)snprintf(name, sizeof(name), "n%u.x.test", i);
		CU_ASSERT_EQUAL(ask_a(&f, name), PASSAVANT_SYNTH_V4_FIRST + i);
	}
	for (i = 0; i < 300; i += 37) {
		(void)snprintf(name, sizeof(name), "n%u.x.test", i);
		CU_ASSERT(str_is(name_of_v4(&f, PASSAVANT_SYNTH_V4_FIRST + i), name));
	}
	fix_stop(&f);
}

/* SIGHUP: the next question is decided with the new policy; addresses
 * already handed out stay mapped. */
static void test_reload(void)
{
	static const char before[] = "network:\n  allowedDomains: [\"api.test\"]\n";
	static const char after[] = "network:\n  allowedDomains: [\"new.test\"]\n";
	char path[600];
	char *dir = test_mkdtemp();
	struct fix f;

	CU_ASSERT_FATAL(dir != NULL);
	(void)snprintf(path, sizeof(path), "%s/policy.yaml", dir);
	CU_ASSERT_FATAL(test_write_file(path, before, sizeof(before) - 1) == 0);
	fix_start(&f, path);
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	CU_ASSERT_EQUAL(ask_rcode(&f, "new.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_FATAL(test_write_file(path, after, sizeof(after) - 1) == 0);
	CU_ASSERT_EQUAL(proxy_reload(f.px), 0);
	CU_ASSERT_EQUAL(ask_rcode(&f, "api.test", T_A, NULL), RC_NXDOMAIN);
	CU_ASSERT_EQUAL(ask_a(&f, "new.test"), V4(198, 18, 0, 3));
	CU_ASSERT(str_is(name_of_v4(&f, V4(198, 18, 0, 2)), "api.test"));
	CU_ASSERT_FATAL(f.n_recs == 2);
	CU_ASSERT_STRING_EQUAL(f.recs[1].host, "api.test");
	fix_stop(&f);
	test_rmtree(dir);
	free(dir);
}

/* Garbage: nothing crashes, nothing is mapped or audited, and the server
 * still answers afterwards. evdns drops what it cannot parse; what it
 * parses but we do not serve gets FORMERR or NOTIMPL. */
static void test_garbage(void)
{
	uint8_t pkt[5000], buf[1500];
	struct response r;
	struct fix f;
	size_t n, i;
	ssize_t got;

	fix_start(&f, NULL);
	/* random bytes of many lengths, 0 to past the 1500-byte read */
	srand(7);
	for (i = 0; i < 200; i++) {
		size_t len = (i * 37) % 4800;

		for (n = 0; n < len; n++)
			pkt[n] = (uint8_t)rand();
		if (len > 2)
			pkt[2] &= 0x7f; /* a query, so evdns parses further */
		fix_send(&f, pkt, len);
	}
	/* shorter than a DNS header: libevent 2.1.12 would crash on these
	 * (the socket's packet filter drops them) */
	for (i = 0; i < 12; i++) {
		memset(pkt, 0, i);
		fix_send(&f, pkt, i);
	}
	/* a header and nothing else, with and without a question count */
	memset(pkt, 0, 12);
	fix_send(&f, pkt, 12);
	pkt[5] = 1;
	fix_send(&f, pkt, 12);
	/* every truncation of a valid query */
	n = build_query(pkt, sizeof(pkt), 0x4242, "evil.test", T_A, 1);
	for (i = 0; i < n; i++)
		fix_send(&f, pkt, i);
	/* a compression pointer to itself, and one past the end */
	n = build_query(pkt, sizeof(pkt), 0x4243, "a", T_A, 1);
	pkt[12] = 0xc0, pkt[13] = 12;
	fix_send(&f, pkt, n);
	pkt[12] = 0xc0, pkt[13] = 0xff;
	fix_send(&f, pkt, n);
	/* a name of 255+ characters (labels of 63) */
	{
		char longname[400];
		size_t o = 0;

		for (i = 0; i < 5; i++) {
			memset(longname + o, 'a' + (char)i, 63);
			o += 63;
			longname[o++] = '.';
		}
		memcpy(longname + o, "x.test", 7);
		n = build_query(pkt, sizeof(pkt), 0x4244, longname, T_A, 1);
		fix_send(&f, pkt, n);
	}
	/* drain: none of the above is answered (all dropped by evdns) */
	got = fix_recv(&f, buf, sizeof(buf), 200);
	CU_ASSERT_EQUAL(got, -1);

	/* two questions in one packet: FORMERR, nothing audited */
	n = build_query(pkt, sizeof(pkt), 0x4245, "evil.test", T_A, 1);
	pkt[5] = 2;
	CU_ASSERT_FATAL(put_name(pkt, sizeof(pkt), &n, "api.test"));
	put16(pkt, &n, T_A);
	put16(pkt, &n, 1);
	fix_send(&f, pkt, n);
	got = fix_recv(&f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0 && parse_response(buf, (size_t)got, &r));
	CU_ASSERT_EQUAL(r.rcode, RC_FORMERR);
	CU_ASSERT_EQUAL(r.n_ans, 0);
	/* many questions (compressed, to fit): FORMERR, truncated at 512 */
	n = build_query(pkt, sizeof(pkt), 0x4246, "api.test", T_A, 1);
	for (i = 1; i < 200; i++) {
		pkt[n++] = 0xc0, pkt[n++] = 12;
		put16(pkt, &n, T_A);
		put16(pkt, &n, 1);
	}
	pkt[4] = 0, pkt[5] = 200;
	fix_send(&f, pkt, n);
	got = fix_recv(&f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0);
	CU_ASSERT((buf[3] & 0xf) == RC_FORMERR);
	CU_ASSERT(got <= 512);
	/* class CHAOS: NOTIMPL */
	n = build_query(pkt, sizeof(pkt), 0x4247, "version.bind", T_TXT, 3);
	fix_send(&f, pkt, n);
	got = fix_recv(&f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0 && parse_response(buf, (size_t)got, &r));
	CU_ASSERT_EQUAL(r.rcode, RC_NOTIMPL);
	/* opcode STATUS: libevent 2.1 masks the opcode off before it checks
	 * it, so it comes as a query and is decided like one */
	n = build_query(pkt, sizeof(pkt), 0x4248, "evil.test", T_A, 1);
	pkt[2] |= 0x10; /* opcode 2 */
	fix_send(&f, pkt, n);
	got = fix_recv(&f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0 && parse_response(buf, (size_t)got, &r));
	CU_ASSERT_EQUAL(r.rcode, RC_NXDOMAIN);
	CU_ASSERT_EQUAL(r.n_ans, 0);
	/* a name with bytes no host name has: refused as invalid, recorded
	 * as asked (the observer and the audit escape it) */
	n = build_query(pkt, sizeof(pkt), 0x4249, "a\x1b[2J.x.test", T_A, 1);
	fix_send(&f, pkt, n);
	got = fix_recv(&f, buf, sizeof(buf), 2000);
	CU_ASSERT_FATAL(got > 0 && parse_response(buf, (size_t)got, &r));
	CU_ASSERT_EQUAL(r.rcode, RC_NXDOMAIN);
	/* the root */
	CU_ASSERT_EQUAL(ask_rcode(&f, "", T_A, NULL), RC_NXDOMAIN);

	CU_ASSERT_EQUAL(proxy_resolver(f.px)->n, 0);
	CU_ASSERT_FATAL(f.n_recs == 3);
	CU_ASSERT_STRING_EQUAL(f.recs[0].host, "evil.test");
	CU_ASSERT_STRING_EQUAL(f.recs[1].host, "a\x1b[2J.x.test");
	CU_ASSERT_STRING_EQUAL(f.recs[1].reason, "not a valid DNS name");
	CU_ASSERT_STRING_EQUAL(f.recs[2].host, ".");
	/* still serving */
	CU_ASSERT_EQUAL(ask_a(&f, "api.test"), V4(198, 18, 0, 2));
	fix_stop(&f);
}

/* libevent's own client, as a program would ask. */
struct client_result {
	int done, err, count;
	uint32_t addr;
};

static void client_cb(int result, char type, int count, int ttl, void *addresses, void *arg)
{
	struct client_result *c = arg;

	(void)ttl;
	c->done = 1;
	c->err = result;
	c->count = count;
	if (result == DNS_ERR_NONE && type == DNS_IPv4_A && count >= 1)
		c->addr = ntohl(((const uint32_t *)addresses)[0]);
}

static void client_ask(struct fix *f, struct evdns_base *cl, const char *name,
		       struct client_result *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	CU_ASSERT_FATAL(evdns_base_resolve_ipv4(cl, name, DNS_QUERY_NO_SEARCH, client_cb, c) != NULL);
	for (i = 0; i < 400 && !c->done; i++) {
		CU_ASSERT_FATAL(event_base_loop(proxy_base(f->px), EVLOOP_NONBLOCK) >= 0);
		usleep(5000);
	}
	CU_ASSERT_FATAL(c->done);
}

static void test_evdns_client(void)
{
	struct client_result c;
	struct evdns_base *cl;
	char ns[64];
	struct fix f;

	fix_start(&f, NULL);
	cl = evdns_base_new(proxy_base(f.px), 0);
	CU_ASSERT_FATAL(cl != NULL);
	(void)snprintf(ns, sizeof(ns), "127.0.0.1:%u", (unsigned)ntohs(f.srv.sin_port));
	CU_ASSERT_FATAL(evdns_base_nameserver_ip_add(cl, ns) == 0);
	client_ask(&f, cl, "api.test", &c);
	CU_ASSERT_EQUAL(c.err, DNS_ERR_NONE);
	CU_ASSERT_EQUAL(c.count, 1);
	CU_ASSERT_EQUAL(c.addr, V4(198, 18, 0, 2));
	client_ask(&f, cl, "evil.test", &c);
	CU_ASSERT_EQUAL(c.err, DNS_ERR_NOTEXIST);
	CU_ASSERT_EQUAL(f.n_recs, 1);
	evdns_base_free(cl, 0);
	fix_stop(&f);
}

/* Datagrams queued before the proxy adopted the socket bypassed its
 * filter: a short one among them must not reach evdns (it would crash
 * libevent 2.1.12). They are all dropped; later questions are answered. */
static void test_queued_before_adopt(void)
{
	uint8_t pkt[512], buf[1500];
	struct sockaddr_in sa;
	proxy_t *px;
	unsigned nerr = 0;
	int fd, cl;
	size_t n;
	int i;

	px = proxy_new(policy_load_buffer("t.yaml", policy_yaml, sizeof(policy_yaml) - 1, stderr,
					  &nerr),
		       NULL, NULL, "0000000000000000");
	CU_ASSERT_FATAL(px != NULL);
	fd = udp_bound(&sa);
	cl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(cl >= 0 && connect(cl, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	n = build_query(pkt, sizeof(pkt), 0x5151, "api.test", T_A, 1);
	CU_ASSERT_FATAL(send(cl, pkt, n, 0) == (ssize_t)n);
	CU_ASSERT_FATAL(send(cl, pkt, 3, 0) == 3);
	CU_ASSERT_FATAL(send(cl, pkt, n, 0) == (ssize_t)n);
	CU_ASSERT_FATAL(proxy_adopt_resolver(px, fd) == 0);
	for (i = 0; i < 20; i++) {
		CU_ASSERT_FATAL(event_base_loop(proxy_base(px), EVLOOP_NONBLOCK) >= 0);
		usleep(5000);
	}
	CU_ASSERT_EQUAL(recv(cl, buf, sizeof(buf), MSG_DONTWAIT), -1); /* dropped */
	pkt[1] = 0x52;
	CU_ASSERT_FATAL(send(cl, pkt, n, 0) == (ssize_t)n);
	for (i = 0; i < 400; i++) {
		CU_ASSERT_FATAL(event_base_loop(proxy_base(px), EVLOOP_NONBLOCK) >= 0);
		if (recv(cl, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			break;
		usleep(5000);
	}
	CU_ASSERT(i < 400 && buf[0] == 0x51 && buf[1] == 0x52 && (buf[3] & 0xf) == RC_NOERROR);
	(void)close(cl);
	proxy_free(px);
}

/* proxy_adopt_resolver() takes only a bound UDP socket, once. */
static void test_adopt(void)
{
	struct sockaddr_in sa;
	proxy_t *px;
	unsigned nerr = 0;
	int fd;

	px = proxy_new(policy_load_buffer("t.yaml", policy_yaml, sizeof(policy_yaml) - 1, stderr,
					  &nerr),
		       NULL, NULL, "0000000000000000");
	CU_ASSERT_FATAL(px != NULL);
	CU_ASSERT_PTR_NULL(proxy_resolver(px));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(proxy_adopt_resolver(px, fd), -1);
	CU_ASSERT_EQUAL(fcntl(fd, F_GETFD), -1); /* closed */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(proxy_adopt_resolver(px, fd), -1); /* not bound */
	CU_ASSERT_EQUAL(fcntl(fd, F_GETFD), -1);
	fd = udp_bound(&sa);
	CU_ASSERT_EQUAL(proxy_adopt_resolver(px, fd), 0);
	CU_ASSERT_PTR_NOT_NULL(proxy_resolver(px));
	CU_ASSERT(fcntl(fd, F_GETFL) & O_NONBLOCK);
	{
		int fd2 = udp_bound(&sa);

		CU_ASSERT_EQUAL(proxy_adopt_resolver(px, fd2), -1); /* one per proxy */
		CU_ASSERT_EQUAL(fcntl(fd2, F_GETFD), -1);
	}
	proxy_free(px);
	CU_ASSERT_EQUAL(fcntl(fd, F_GETFD), -1); /* closed with the proxy */
}

TEST_REGISTRAR(proxy_resolver_suite)
{
	CU_pSuite s = test_suite("proxy_resolver", NULL, NULL);

	test_add(s, "allowed names: synthetic A/AAAA, stable, mapped back", test_allowed);
	test_add(s, "names allowed on a port, wildcards, denies with and without ports",
		 test_policy_names);
	test_add(s, "denied names: NXDOMAIN, audit, stderr throttle", test_denied);
	test_add(s, "a flood of refused names: 100 records a second, then one sum", test_denied_flood);
	test_add(s, "nothing is ever resolved on the host", test_never_resolves);
	test_add(s, "other types of an allowed name: NOERROR, no answer", test_other_types);
	test_add(s, "PTR of synthetic addresses", test_ptr);
	test_add(s, "the map is bounded and never recycles", test_full);
	test_add(s, "the map grows", test_many);
	test_add(s, "SIGHUP reload decides the next question", test_reload);
	test_add(s, "garbage, truncated, oversized, many questions", test_garbage);
	test_add(s, "libevent's evdns client", test_evdns_client);
	test_add(s, "questions queued before adoption are dropped", test_queued_before_adopt);
	test_add(s, "adopting the socket", test_adopt);
}

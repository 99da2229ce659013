/*
 * resolver.c - the in-sandbox resolver of `run` (SPEC §3.5, §7; issue 15):
 * DNS over the UDP socket the sandbox bound on its 127.0.0.1:53, served
 * with libevent's evdns server API on the proxy's loop.
 *
 * It never resolves anything. A name the current policy allows gets a
 * synthetic address that stands for the name for the rest of the session;
 * the connection the workload then opens to it is redirected to the proxy,
 * which asks resolver_name_of() which name it stands for, decides the
 * connection again and resolves the real name on the host when it dials
 * (upstream.c). A name the policy refuses gets NXDOMAIN, an audit record
 * (kind "dns") and, through the observer, a line on stderr.
 *
 * Answers, per question:
 *   A / AAAA, allowed name    the name's synthetic address (TTL 60 s)
 *   other type, allowed name  NOERROR, no answer (MX, TXT, HTTPS/SVCB...)
 *   any type, refused name    NXDOMAIN, audited
 *   PTR                       the name of a handed-out synthetic address
 *                             (in-addr.arpa and ip6.arpa), else NXDOMAIN,
 *                             never audited: it asks about no name
 *   map full (new name)       SERVFAIL and a warning on stderr
 *   class other than IN       NOTIMPL; not exactly one question: FORMERR
 *
 * Addresses: the name mapped i-th (from 0) gets PASSAVANT_SYNTH_V4_FIRST + i
 * and PASSAVANT_SYNTH_V6_PREFIX::(PASSAVANT_SYNTH_V4_FIRST -
 * PASSAVANT_SYNTH_V4_NET + i), so 198.18.0.2 and fd70:6173:7376:1::2 are
 * the same name. The map only grows: an address handed out is never given
 * to another name, because a connection decided for one name must never
 * reach another (a client may hold an address past its TTL).
 *
 * Everything runs on the loop thread.
 */
#include "resolver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/dns_struct.h>

#include "base/defaults.h"
#include "log.h"
#include "proxy.h"

/*
 * TTL of a synthetic answer. The address of a name never changes within a
 * session, so the TTL only bounds how long a client that caches answers
 * (the JVM, a caching stub) keeps using a name after a SIGHUP reload
 * refused it: it then gets a refused connection instead of NXDOMAIN. A
 * minute keeps that short while sparing the round trips of clients that
 * resolve the same name for every request. Refusals carry no SOA record,
 * so they are not cached at all (RFC 2308 §5): a name a reload allows
 * resolves at once.
 */
#define RESOLVER_TTL_S 60

/* A refused name is reported on stderr at most once per this interval
 * (resolvers retry, and ask A and AAAA together); the audit gets all. */
#define RESOLVER_QUIET_MS 1000
/* Refused names remembered for that. */
#define RESOLVER_RECENT 16
/* Refused questions audited one by one per second at most; beyond, one
 * record says how many more came (a flood of refused names from the
 * sandbox must not fill the audit's filesystem: nothing of them left). */
#define RESOLVER_AUDIT_PER_S 100
/* First allocation of the index array (names). */
#define RESOLVER_INITIAL_CAP 64

/* The pool must hold every name without leaving 198.18.0.0/15. */
_Static_assert(PASSAVANT_SYNTH_V4_FIRST > PASSAVANT_SANDBOX_V4 &&
		       (uint64_t)PASSAVANT_SYNTH_V4_FIRST + PASSAVANT_SYNTH_MAX_NAMES <=
			       (uint64_t)PASSAVANT_SYNTH_V4_NET + (1u << (32 - PASSAVANT_SYNTH_V4_PREFIXLEN)) - 1,
	       "the synthetic IPv4 pool does not fit 198.18.0.0/15");

/* Offset of the first synthetic address in the network (both families). */
#define SYNTH_OFFSET (PASSAVANT_SYNTH_V4_FIRST - PASSAVANT_SYNTH_V4_NET)

/* One mapped name; entries are found by name through the tree (which
 * holds pointers to name) and by address through the index array. */
struct resolver_name {
	uint32_t idx;   /* offset from PASSAVANT_SYNTH_V4_FIRST */
	char name[];    /* normalised (policy_host_normalize()) */
};

/* A refused name recently reported on stderr. */
struct resolver_recent {
	char name[256];        /* as recorded (the question's bytes, NUL-terminated) */
	struct timespec at;    /* when reported (CLOCK_MONOTONIC) */
};

struct resolver {
	proxy_t *px;                       /* the proxy (policy, audit, observer) */
	struct evdns_server_port *port;    /* the evdns server on the adopted fd */
	struct resolver_name **v;          /* by index: the i-th name mapped */
	size_t n;                          /* names mapped */
	size_t cap;                        /* slots in v */
	size_t max;                        /* PASSAVANT_SYNTH_MAX_NAMES (tests lower it) */
	void *tree;                        /* tsearch() tree of v[i]->name */
	struct resolver_recent recent[RESOLVER_RECENT]; /* stderr throttle */
	unsigned recent_next;              /* next slot of recent to reuse */
	struct timespec full_warned;       /* last "map full" warning */
	bool full_warned_once;             /* full_warned is set */
	struct timespec win;               /* start of the audit window (RESOLVER_AUDIT_PER_S) */
	unsigned win_count;                /* refusals audited in it */
	uint64_t unrecorded;               /* refusals beyond it, not yet summed up in a record */
	struct event *sum_ev;              /* writes that sum when no refusal comes to do it */
};

static const uint8_t synth_v6_prefix[8] = PASSAVANT_SYNTH_V6_PREFIX;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static struct resolver_name *entry_of(const char *name)
{
	return (struct resolver_name *)(void *)(name - offsetof(struct resolver_name, name));
}

/* Milliseconds from a to b. */
static int64_t ms_between(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* ------------------------------------------------------------------ */
/* The map                                                              */
/* ------------------------------------------------------------------ */

/* The index of a mapped name, or -1. */
static int64_t map_find(const resolver_t *r, const char *name)
{
	void *const *node = tfind(name, &r->tree, name_cmp);

	return node != NULL ? (int64_t)entry_of(*(char *const *)node)->idx : -1;
}

/*
 * The index of name (normalised), mapping it if new. -1 when the map is
 * full (*full set) or memory ran out (logged).
 */
static int64_t map_get(resolver_t *r, const char *name, bool *full)
{
	struct resolver_name *e;
	size_t len;
	int64_t idx;
	void *node;

	*full = false;
	if ((idx = map_find(r, name)) >= 0)
		return idx;
	if (r->n >= r->max) {
		*full = true;
		return -1;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap != 0 ? r->cap * 2 : RESOLVER_INITIAL_CAP;
		struct resolver_name **nv;

		if (cap > r->max)
			cap = r->max;
		nv = reallocarray(r->v, cap, sizeof(*nv));
		if (nv == NULL) {
			log_warn("in-sandbox resolver: cannot map %s", name);
			return -1;
		}
		r->v = nv;
		r->cap = cap;
	}
	len = strlen(name);
	e = malloc(sizeof(*e) + len + 1);
	if (e == NULL) {
		log_warn("in-sandbox resolver: cannot map %s", name);
		return -1;
	}
	e->idx = (uint32_t)r->n;
	memcpy(e->name, name, len + 1);
	node = tsearch(e->name, &r->tree, name_cmp);
	if (node == NULL) {
		log_warn("in-sandbox resolver: cannot map %s", name);
		free(e);
		return -1;
	}
	r->v[r->n++] = e;
	return e->idx;
}

const char *resolver_name_of(const resolver_t *r, const struct sockaddr *sa)
{
	const uint8_t *b;
	uint64_t off = 0;
	uint32_t v4;
	size_t i;

	if (sa->sa_family == AF_INET) {
		v4 = ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr);
		goto v4;
	}
	if (sa->sa_family != AF_INET6)
		return NULL;
	b = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
	if (memcmp(b, synth_v6_prefix, sizeof(synth_v6_prefix)) == 0) {
		for (i = 8; i < 16; i++)
			off = (off << 8) | b[i];
		if (off < SYNTH_OFFSET || off - SYNTH_OFFSET >= r->n)
			return NULL;
		return r->v[off - SYNTH_OFFSET]->name;
	}
	/* ::ffff:a.b.c.d, how a dual-stack socket sees an IPv4 peer. */
	for (i = 0; i < 10; i++)
		if (b[i] != 0)
			return NULL;
	if (b[10] != 0xff || b[11] != 0xff)
		return NULL;
	v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
v4:
	if (v4 < PASSAVANT_SYNTH_V4_FIRST || v4 - PASSAVANT_SYNTH_V4_FIRST >= r->n)
		return NULL;
	return r->v[v4 - PASSAVANT_SYNTH_V4_FIRST]->name;
}

/* The synthetic addresses of index idx. */
static void synth_v4(int64_t idx, struct in_addr *a)
{
	a->s_addr = htonl(PASSAVANT_SYNTH_V4_FIRST + (uint32_t)idx);
}

static void synth_v6(int64_t idx, struct in6_addr *a)
{
	uint64_t off = SYNTH_OFFSET + (uint64_t)idx;
	int i;

	memcpy(a->s6_addr, synth_v6_prefix, sizeof(synth_v6_prefix));
	for (i = 15; i >= 8; i--, off >>= 8)
		a->s6_addr[i] = (uint8_t)(off & 0xff);
}

/* ------------------------------------------------------------------ */
/* PTR                                                                  */
/* ------------------------------------------------------------------ */

/* Whether name (length len) ends with suffix, ignoring ASCII case; *head
 * gets the length before it. */
static bool ends_with(const char *name, size_t len, const char *suffix, size_t *head)
{
	size_t sl = strlen(suffix);

	if (len < sl || strcasecmp(name + len - sl, suffix) != 0)
		return false;
	*head = len - sl;
	return true;
}

/*
 * Parses a reverse name ("4.3.2.1.in-addr.arpa", or 32 nibbles then
 * "ip6.arpa") into ss. Only the full forms: a partial one (a zone) names
 * no address. Returns false when name is neither.
 */
static bool parse_reverse(const char *name, struct sockaddr_storage *ss)
{
	size_t len = strlen(name), head, i;

	memset(ss, 0, sizeof(*ss));
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (ends_with(name, len, ".in-addr.arpa", &head)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		uint32_t a = 0;
		unsigned part = 0, val = 0, digits = 0;

		for (i = 0; i <= head; i++) {
			if (i == head || name[i] == '.') {
				/* no empty label, no leading zero, 0..255 */
				if (digits == 0 || val > 255 || (digits > 1 && name[i - digits] == '0') ||
				    part == 4)
					return false;
				a |= (uint32_t)val << (8 * part++);
				val = digits = 0;
			} else if (name[i] >= '0' && name[i] <= '9' && digits < 3) {
				val = val * 10 + (unsigned)(name[i] - '0');
				digits++;
			} else {
				return false;
			}
		}
		if (part != 4)
			return false;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(a);
		return true;
	}
	if (ends_with(name, len, ".ip6.arpa", &head)) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		/* 32 nibbles, each one hex digit and a dot: 64 bytes. */
		if (head != 63)
			return false;
		for (i = 0; i < 32; i++) {
			char c = name[2 * i];
			unsigned nib;

			if (i < 31 && name[2 * i + 1] != '.')
				return false;
			if (c >= '0' && c <= '9')
				nib = (unsigned)(c - '0');
			else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
				nib = (unsigned)((c | 0x20) - 'a' + 10);
			else
				return false;
			/* The first nibble is the lowest of the last byte. */
			sin6->sin6_addr.s6_addr[15 - i / 2] |= (uint8_t)(i % 2 == 0 ? nib : nib << 4);
		}
		sin6->sin6_family = AF_INET6;
		return true;
	}
	return false;
}

/* A PTR question: the name of a handed-out address, else NXDOMAIN. */
static int answer_ptr(resolver_t *r, struct evdns_server_request *req,
		      const struct evdns_server_question *q)
{
	struct sockaddr_storage ss;
	const char *name;

	if (!parse_reverse(q->name, &ss) || (name = resolver_name_of(r, (struct sockaddr *)&ss)) == NULL)
		return DNS_ERR_NOTEXIST;
	if (evdns_server_request_add_ptr_reply(req, NULL, q->name, name, RESOLVER_TTL_S) < 0) {
		log_warnx("in-sandbox resolver: cannot build the answer for %s (out of memory?)",
			  name);
		return DNS_ERR_SERVERFAILED;
	}
	return DNS_ERR_NONE;
}

/* ------------------------------------------------------------------ */
/* Refusals                                                             */
/* ------------------------------------------------------------------ */

/* The question type as text, for the audit record's method. */
static const char *type_name(int type, char *buf, size_t len)
{
	switch (type) {
	case EVDNS_TYPE_A:
		return "A";
	case EVDNS_TYPE_NS:
		return "NS";
	case EVDNS_TYPE_CNAME:
		return "CNAME";
	case EVDNS_TYPE_SOA:
		return "SOA";
	case EVDNS_TYPE_PTR:
		return "PTR";
	case EVDNS_TYPE_MX:
		return "MX";
	case EVDNS_TYPE_TXT:
		return "TXT";
	case EVDNS_TYPE_AAAA:
		return "AAAA";
	case 33:
		return "SRV";
	case 64:
		return "SVCB";
	case 65:
		return "HTTPS";
	case EVDNS_QTYPE_ALL:
		return "ANY";
	default:
		(void)snprintf(buf, len, "TYPE%d", type);
		return buf;
	}
}

/* The reason of a refusal, as the stderr line shows it in parentheses. */
static const char *verdict_reason(enum policy_name_verdict v, const char *rule, char *buf,
				  size_t len)
{
	switch (v) {
	case POLICY_NAME_ALLOWED:
		break;
	case POLICY_NAME_DENIED:
		(void)snprintf(buf, len, "denied by %s", rule != NULL ? rule : "network.deniedDomains");
		return buf;
	case POLICY_NAME_NOT_ALLOWED:
		return "not in allowedDomains";
	case POLICY_NAME_INVALID:
		return "not a valid DNS name";
	}
	return "refused";
}

/*
 * Whether host was reported on stderr less than RESOLVER_QUIET_MS ago;
 * when not, it is remembered as reported now. A name asked again and
 * again is thus reported once per interval.
 */
static bool recently_reported(resolver_t *r, const char *host)
{
	struct timespec now;
	size_t i;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return false;
	for (i = 0; i < RESOLVER_RECENT; i++) {
		struct resolver_recent *e = &r->recent[i];

		if (e->name[0] == '\0' || strcmp(e->name, host) != 0)
			continue;
		if (ms_between(&e->at, &now) < RESOLVER_QUIET_MS)
			return true;
		e->at = now;
		return false;
	}
	i = r->recent_next++ % RESOLVER_RECENT;
	(void)snprintf(r->recent[i].name, sizeof(r->recent[i].name), "%s", host);
	r->recent[i].at = now;
	return false;
}

/* The record of the refusals a full window left unrecorded, if any. */
static void record_unrecorded(resolver_t *r)
{
	struct audit_rec rec;
	char why[200];

	if (r->unrecorded == 0)
		return;
	audit_sum_record(&rec, why, sizeof(why), "dns", "refused DNS questions", r->unrecorded, RESOLVER_AUDIT_PER_S);
	r->unrecorded = 0;
	proxy_record(r->px, &rec);
}

static void sum_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	record_unrecorded(arg);
}

/* Whether this refusal gets its own record: the first
 * RESOLVER_AUDIT_PER_S of each second do; the others are counted and
 * summed up in one record when the second is over. */
static bool audit_window_open(resolver_t *r)
{
	struct timespec now;
	struct timeval sec = {1, 0};

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return true;
	if ((r->win.tv_sec == 0 && r->win.tv_nsec == 0) || ms_between(&r->win, &now) >= 1000) {
		record_unrecorded(r);
		r->win = now;
		r->win_count = 0;
	}
	if (r->win_count < RESOLVER_AUDIT_PER_S) {
		r->win_count++;
		return true;
	}
	r->unrecorded++;
	if (r->sum_ev != NULL && !evtimer_pending(r->sum_ev, NULL))
		(void)evtimer_add(r->sum_ev, &sec);
	return false;
}

/* The audit record (and observer call) of a refused question. */
static void record_refusal(resolver_t *r, const struct evdns_server_question *q,
			   const char *norm, enum policy_name_verdict v, const char *rule)
{
	struct audit_rec rec;
	char tbuf[16], why[POLICY_HOST_MAX + 64];

	if (!audit_window_open(r))
		return;
	memset(&rec, 0, sizeof(rec));
	rec.kind = "dns";
	rec.method = type_name(q->type, tbuf, sizeof(tbuf));
	/* An invalid name is recorded as asked (the audit escapes it, the
	 * stderr line sanitises it); the root as ".". */
	rec.host = norm[0] != '\0' ? norm : q->name[0] != '\0' ? q->name : ".";
	rec.decision = "deny";
	rec.reason = verdict_reason(v, rule, why, sizeof(why));
	rec.rule = rule;
	rec.bytes_up = rec.bytes_down = rec.ms = -1;
	rec.repeat = recently_reported(r, rec.host);
	proxy_record(r->px, &rec);
}

/* The record of a question whose name carries a real value of cred: the
 * name is written nowhere. */
static void record_real(resolver_t *r, const struct evdns_server_question *q, const char *cred)
{
	struct audit_rec rec;
	char tbuf[16], why[160];

	if (!audit_window_open(r))
		return;
	memset(&rec, 0, sizeof(rec));
	rec.kind = "dns";
	rec.method = type_name(q->type, tbuf, sizeof(tbuf));
	rec.host = "[redacted: it carries a real value]";
	rec.decision = "deny";
	(void)snprintf(why, sizeof(why), "the name carries a real value of %s", cred);
	rec.reason = why;
	rec.rule = "credentials (a real value on its way out)";
	rec.bytes_up = rec.bytes_down = rec.ms = -1;
	rec.repeat = recently_reported(r, rec.host);
	proxy_record(r->px, &rec);
}

/* The map is full: one warning per RESOLVER_QUIET_MS. */
static void warn_full(resolver_t *r, const char *name)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) == 0 && r->full_warned_once &&
	    ms_between(&r->full_warned, &now) < RESOLVER_QUIET_MS)
		return;
	r->full_warned = now;
	r->full_warned_once = true;
	log_warnx("in-sandbox resolver: no synthetic address left for %s: all %zu were handed out "
		  "in this session and are never reused (SERVFAIL); start a new session to reach "
		  "new names",
		  name, r->max);
}

/* ------------------------------------------------------------------ */
/* Questions                                                            */
/* ------------------------------------------------------------------ */

/* Answers one IN-class question; returns the response code. */
static int answer(resolver_t *r, struct evdns_server_request *req,
		  const struct evdns_server_question *q)
{
	char norm[POLICY_HOST_MAX + 1];
	enum policy_name_verdict v;
	proxy_policy_t *pp;
	const char *rule;
	struct in6_addr a6;
	struct in_addr a4;
	int64_t idx;
	bool full;
	int rc;

	if (q->type == EVDNS_TYPE_PTR)
		return answer_ptr(r, req, q);
	/* A name carrying a real value is refused before any decision
	 * (round 15 of the attack): never mapped, so never dialled, and
	 * recorded without it. */
	if ((rule = proxy_real_in_name(r->px, q->name, strlen(q->name))) != NULL) {
		record_real(r, q, rule);
		return DNS_ERR_NOTEXIST;
	}
	/* The current policy: a SIGHUP reload applies to the next question.
	 * Addresses handed out stay mapped; their connections are decided
	 * again by the intercepting listener anyway. */
	pp = proxy_policy_get(r->px);
	v = policy_name_decide(proxy_policy(pp), q->name, &rule);
	/* Decided on this same normalisation, so it succeeds for every
	 * verdict but INVALID (where the name is recorded as asked). */
	if (v == POLICY_NAME_INVALID ||
	    policy_host_normalize(q->name, strlen(q->name), norm, sizeof(norm)) != NULL)
		norm[0] = '\0';
	if (v != POLICY_NAME_ALLOWED) {
		record_refusal(r, q, norm, v, rule); /* rule points into the policy */
		proxy_policy_put(pp);
		return DNS_ERR_NOTEXIST;
	}
	proxy_policy_put(pp);
	if (norm[0] == '\0')
		return DNS_ERR_SERVERFAILED; /* cannot happen (see above) */
	if (q->type != EVDNS_TYPE_A && q->type != EVDNS_TYPE_AAAA)
		return DNS_ERR_NONE; /* the name exists; it has no such record */
	idx = map_get(r, norm, &full);
	if (idx < 0) {
		if (full)
			warn_full(r, norm);
		return DNS_ERR_SERVERFAILED;
	}
	/* The answer carries the question's own spelling: clients that
	 * randomise the case of their questions (0x20) compare it. */
	if (q->type == EVDNS_TYPE_A) {
		synth_v4(idx, &a4);
		rc = evdns_server_request_add_a_reply(req, q->name, 1, &a4, RESOLVER_TTL_S);
	} else {
		synth_v6(idx, &a6);
		rc = evdns_server_request_add_aaaa_reply(req, q->name, 1, &a6, RESOLVER_TTL_S);
	}
	if (rc < 0) {
		log_warnx("in-sandbox resolver: cannot build the answer for %s (out of memory?)", norm);
		return DNS_ERR_SERVERFAILED;
	}
	return DNS_ERR_NONE;
}

/*
 * evdns calls this for every well-formed query (it drops what does not
 * parse: truncated packets, bad names, responses; and answers other
 * opcodes NOTIMPL itself). One question per query is all stub resolvers
 * send; any other count gets FORMERR, as most servers answer.
 */
static void server_cb(struct evdns_server_request *req, void *arg)
{
	resolver_t *r = arg;
	const struct evdns_server_question *q;
	int rcode;

	/* AA: we are the authority for every name the sandbox can ask
	 * about (Go's resolver takes an empty NOERROR answer without AA or
	 * RA for a lame referral). libevent's EVDNS_FLAGS_RD is 0x080, the
	 * RA bit on the wire (recursion available); RD is kept from the
	 * query. */
	evdns_server_request_set_flags(req, EVDNS_FLAGS_AA | EVDNS_FLAGS_RD);
	if (req->nquestions != 1) {
		rcode = DNS_ERR_FORMAT;
	} else {
		q = req->questions[0];
		rcode = q->dns_question_class == EVDNS_CLASS_INET ? answer(r, req, q) : DNS_ERR_NOTIMPL;
	}
	/* libevent 2.1 keeps the request when it could not format the reply
	 * or when sendto() would block (then it also forgets it): free it.
	 * A reply it queued after another error returns 1 and is its own. */
	if (evdns_server_request_respond(req, rcode) < 0) {
		log_debug("in-sandbox resolver: a reply could not be sent; dropped");
		(void)evdns_server_request_drop(req);
	}
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */
/* ------------------------------------------------------------------ */

/*
 * libevent 2.1.12 (Debian 12) dereferences NULL in its DNS server when a
 * datagram is shorter than a DNS header (request_parse() jumps to a
 * cleanup that reads the request it has not allocated yet; libevent
 * issue 1231, fixed after 2.1.12): one byte sent to the sandbox's port 53
 * would kill the proxy. The kernel drops such datagrams before evdns can
 * read them: a classic BPF filter on the socket, which sees the datagram
 * from its UDP header on (8 bytes), keeps those of at least 8 + 12 bytes.
 */
#define DNS_HEADER_BYTES 12
#define UDP_HEADER_BYTES 8
#define RESOLVER_DRAIN_MAX 4096
#define RESOLVER_DRAIN_ERRORS_MAX 64

static int attach_short_filter(int fd)
{
	static struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, UDP_HEADER_BYTES + DNS_HEADER_BYTES, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu), /* keep it whole */
		BPF_STMT(BPF_RET | BPF_K, 0),           /* drop it */
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
	unsigned dropped = 0, errors = 0;
	uint8_t buf[1];

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		return -1;
	/*
	 * Datagrams queued before the filter (the command may already run
	 * when the proxy adopts the socket) were not filtered: drop them; a
	 * client whose question is among them asks again. The queue is FIFO
	 * and a receive buffer holds a few hundred datagrams at most, so past
	 * RESOLVER_DRAIN_MAX every one left was filtered: stop there rather
	 * than spin on a command that keeps sending. A pending socket error
	 * fails one recv() and is cleared by it.
	 */
	while (dropped < RESOLVER_DRAIN_MAX) {
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) >= 0) {
			dropped++;
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		if (errno != EINTR && ++errors > RESOLVER_DRAIN_ERRORS_MAX)
			return -1;
	}
	if (dropped > 0)
		log_debug("in-sandbox resolver: dropped %u question%s sent before it started", dropped,
			  dropped == 1 ? "" : "s");
	return 0;
}

resolver_t *resolver_new(proxy_t *px, int fd)
{
	resolver_t *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		log_warn("in-sandbox resolver");
		(void)close(fd);
		return NULL;
	}
	r->px = px;
	r->max = PASSAVANT_SYNTH_MAX_NAMES;
	r->sum_ev = evtimer_new(proxy_base(px), sum_cb, r);
	if (r->sum_ev == NULL) {
		log_warn("in-sandbox resolver");
		(void)close(fd);
		free(r);
		return NULL;
	}
	if (attach_short_filter(fd) < 0) {
		log_warn("cannot protect the DNS socket (descriptor %d) with its packet filter "
			 "(SO_ATTACH_FILTER); the in-sandbox resolver is not started",
			 fd);
		(void)close(fd);
		event_free(r->sum_ev);
		free(r);
		return NULL;
	}
	/* From here the port owns fd (closed when the port is freed). */
	r->port = evdns_add_server_port_with_base(proxy_base(px), fd, 0, server_cb, r);
	if (r->port == NULL) {
		log_warnx("cannot serve DNS on descriptor %d (libevent refused it)", fd);
		(void)close(fd);
		event_free(r->sum_ev);
		free(r);
		return NULL;
	}
	return r;
}

void resolver_flush(resolver_t *r)
{
	record_unrecorded(r);
}

static void no_free(void *p)
{
	(void)p;
}

void resolver_free(resolver_t *r)
{
	size_t i;

	if (r == NULL)
		return;
	if (r->port != NULL)
		evdns_close_server_port(r->port);
	if (r->sum_ev != NULL) {
		record_unrecorded(r);
		event_free(r->sum_ev);
	}
	tdestroy(r->tree, no_free);
	for (i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	free(r);
}

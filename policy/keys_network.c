/*
 * keys_network.c - the network section of a policy (SPEC §3.1): host
 * lists, allowedMethods, deniedResolvedAddresses, tlsTerminate, limits.
 * Each key's handler reads its node into struct policy and reports what
 * is wrong with its position; cross-checks wait for validate.c.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "base/defaults.h"
#include "loader_int.h"

/* ------------------------------------------------------------------ */
/* network                                                             */
/* ------------------------------------------------------------------ */

static void k_allowed(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_hostlist(l, v, "network.allowedDomains", true, &l->p->allowed);
}

/* network.deniedDomains: bare "*" allowed (deny everything not allowed
 * elsewhere is the default anyway, but srt files use it). */
static void k_denied(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_hostlist(l, v, "network.deniedDomains", true, &l->p->denied);
}

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Parses the method list of one allowedMethods entry into r. */
static void parse_methods(struct ldr *l, const struct ynode *v, struct policy_method_rule *r)
{
	static const char where[] = "network.allowedMethods";

	if (v->type != YN_SEQ) {
		ldr_wrong_type(l, v, "a list of HTTP methods", where);
		return;
	}
	if (v->n == 0) {
		ldr_error(l, v->mark,
			  "an empty list, expected at least one HTTP method for %s (to block a "
			  "host, list it in network.deniedDomains)",
			  where);
		return;
	}
	r->methods = calloc(v->n, sizeof(*r->methods));
	if (r->methods == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *m = v->kids[i];
		const char *s = ldr_want_string(l, m, "an HTTP method", where);
		char ex[200], *up;
		bool ok = true, dup = false;
		size_t n;
		if (s == NULL)
			continue;
		if (strcmp(s, "*") == 0) {
			r->any_method = true;
			continue;
		}
		n = strlen(s);
		for (size_t j = 0; j < n; j++)
			if (!is_tchar((unsigned char)s[j]))
				ok = false;
		if (!ok || n > 32) {
			ldr_excerpt(s, ex, sizeof(ex));
			ldr_error(l, m->mark,
				  "\"%s\" in %s, expected an HTTP method token (RFC 9110 token "
				  "characters, at most 32) or \"*\"",
				  ex, where);
			continue;
		}
		up = strdup(s);
		if (up == NULL) {
			ldr_error(l, m->mark, "out of memory, expected to read %s", where);
			continue;
		}
		for (size_t j = 0; j < n; j++)
			if (up[j] >= 'a' && up[j] <= 'z')
				up[j] = (char)(up[j] - 'a' + 'A');
		for (size_t j = 0; j < r->n_methods; j++)
			if (strcmp(r->methods[j], up) == 0)
				dup = true;
		if (dup)
			free(up);
		else
			r->methods[r->n_methods++] = up;
	}
}

/*
 * network.allowedMethods: a mapping pattern -> methods. Two spellings of the
 * same pattern ("a.com", "A.COM.") are an error, not a merge: which list
 * applies would otherwise depend on the order in the file.
 */
static void k_methods(struct ldr *l, const struct ynode *v, void *ctx)
{
	static const char where[] = "network.allowedMethods";
	struct policy *p = l->p;

	(void)ctx;
	p->methods = calloc(v->n / 2 + 1, sizeof(*p->methods));
	if (p->methods == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		struct policy_method_rule *r = &p->methods[p->n_methods];
		bool dup = false;
		if (yn_key_seen_before(v, i))
			continue; /* reported as a duplicate key already */
		if (ldr_hostent(l, v->kids[i], where, true, &r->host) != 0)
			continue;
		for (size_t j = 0; j < p->n_methods; j++)
			if (ldr_hostpat_same(&p->methods[j].host.pat, &r->host.pat)) {
				ldr_error(l, r->host.mark,
					  "\"%s\" in %s again (same hosts as \"%s\" at line %u), "
					  "expected each host pattern once",
					  r->host.text, where, p->methods[j].host.text,
					  p->methods[j].host.mark.line);
				dup = true;
				break;
			}
		if (dup) {
			free(r->host.text);
			free(r->host.rule);
			memset(r, 0, sizeof(*r));
			continue;
		}
		p->n_methods++;
		parse_methods(l, v->kids[i + 1], r);
	}
}

/* Parses "ADDR/PREFIX" (or a bare address: a /32 or /128) into c. Returns
 * NULL or a static message saying what was expected. */
static const char *cidr_parse(const char *s, struct policy_cidr *c)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long prefix, max;

	if (alen == 0 || alen >= sizeof(addr))
		return "expected an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8";
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	memset(c->addr, 0, sizeof(c->addr));
	if (inet_pton(AF_INET, addr, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return "expected an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8";
	}
	prefix = max;
	if (slash != NULL) {
		const char *d = slash + 1;
		if (*d == '\0' || strlen(d) > 3)
			return "expected a prefix length after '/'";
		prefix = 0;
		for (; *d != '\0'; d++) {
			if (*d < '0' || *d > '9')
				return "expected a decimal prefix length after '/'";
			prefix = prefix * 10 + (unsigned long)(*d - '0');
		}
		if (prefix > max)
			return c->family == AF_INET ? "expected a prefix length from 0 to 32"
						    : "expected a prefix length from 0 to 128";
	}
	c->prefix = (unsigned)prefix;
	/* Host bits must be zero: "10.1.2.3/8" is most likely a typo. */
	for (unsigned bit = c->prefix; bit < max; bit++)
		if (c->addr[bit / 8] & (0x80u >> (bit % 8)))
			return "expected the bits after the prefix length to be zero (e.g. "
			       "10.0.0.0/8, not 10.1.2.3/8)";
	return NULL;
}

/* network.deniedResolvedAddresses: a list of CIDRs (cidr_parse). */
static void k_denied_addrs(struct ldr *l, const struct ynode *v, void *ctx)
{
	static const char where[] = "network.deniedResolvedAddresses";
	struct policy *p = l->p;

	(void)ctx;
	p->denied_addrs = calloc(v->n ? v->n : 1, sizeof(*p->denied_addrs));
	if (p->denied_addrs == NULL) {
		ldr_error(l, v->mark, "out of memory, expected to read %s", where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *n = v->kids[i];
		struct policy_cidr *c = &p->denied_addrs[p->n_denied_addrs];
		const char *s = ldr_want_string(l, n, "a CIDR", where), *msg;
		char ex[200];
		if (s == NULL)
			continue;
		msg = cidr_parse(s, c);
		if (msg != NULL) {
			ldr_excerpt(s, ex, sizeof(ex));
			ldr_error(l, n->mark, "\"%s\" in %s, %s", ex, where, msg);
			continue;
		}
		c->text = strdup(s);
		if (c->text == NULL || asprintf(&c->rule, "%s: %s", where, s) < 0) {
			free(c->text);
			memset(c, 0, sizeof(*c));
			ldr_error(l, n->mark, "out of memory, expected to read %s", where);
			continue;
		}
		c->mark = n->mark;
		p->n_denied_addrs++;
	}
}

/* tlsTerminate.enabled (mapping form). */
static void k_tls_enabled(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	(void)ldr_want_bool(l, v, "network.tlsTerminate.enabled", &l->p->tls_terminate);
}

/* tlsTerminate.excludeDomains: no bare "*" (that is tlsTerminate: false,
 * and saying so is clearer). */
static void k_tls_exclude(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_hostlist(l, v, "network.tlsTerminate.excludeDomains", false, &l->p->tls_exclude);
}

/* tlsTerminate.extraCaCertPaths: their positions are kept, since whether
 * each is readable is checked against the machine (policy_bind()). */
static void k_tls_extra_ca(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	ldr_pathlist(l, v, "network.tlsTerminate.extraCaCertPaths", &l->p->extra_ca,
		     &l->p->extra_ca_marks);
}

static const struct keydef tls_keys[] = {
	{"enabled", YN_SCALAR, k_tls_enabled, "true or false", NULL},
	{"excludeDomains", YN_SEQ, k_tls_exclude, "a list of host patterns", NULL},
	{"extraCaCertPaths", YN_SEQ, k_tls_extra_ca, "a list of paths", NULL},
};
const struct keytab ldr_tls_tab = {"network.tlsTerminate", tls_keys, ARRAY_LEN(tls_keys)};

/* tlsTerminate: a boolean, or a mapping {enabled, excludeDomains,
 * extraCaCertPaths} (decision recorded in docs/config.md). */
static void k_tls(struct ldr *l, const struct ynode *v, void *ctx)
{
	if (v->type == YN_MAP) {
		ldr_walk_map(l, v, &ldr_tls_tab, ctx);
		return;
	}
	if (v->type == YN_SCALAR && yn_class(v) == SC_BOOL) {
		(void)ldr_want_bool(l, v, "network.tlsTerminate", &l->p->tls_terminate);
		return;
	}
	ldr_wrong_type(l, v, "true, false or a mapping {enabled, excludeDomains, extraCaCertPaths}",
		   "network.tlsTerminate");
}

/* network.limits.*: ranges from base/defaults.h; out of range is an
 * error, never a clamp. */
static void k_lim_tunnels(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (ldr_want_uint(l, v, "network.limits.maxTunnels", 1, POLICY_MAX_TUNNELS_MAX, &x) == 0)
		l->p->limits.max_tunnels = (unsigned)x;
}

static void k_lim_handshake(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (ldr_want_uint(l, v, "network.limits.handshakeTimeoutMs", 1, POLICY_TIMEOUT_MS_MAX, &x) == 0)
		l->p->limits.handshake_timeout_ms = (unsigned)x;
}

static void k_lim_idle(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (ldr_want_uint(l, v, "network.limits.idleTimeoutMs", 1, POLICY_TIMEOUT_MS_MAX, &x) == 0)
		l->p->limits.idle_timeout_ms = (unsigned)x;
}

/* 0 is a value, not "unset": an idle upstream then stays until
 * idleTimeoutMs, as before this key existed. */
static void k_lim_upkeep(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (ldr_want_uint(l, v, "network.limits.upstreamKeepAliveMs", 0, POLICY_TIMEOUT_MS_MAX, &x) == 0)
		l->p->limits.upstream_keepalive_ms = (unsigned)x;
}

static void k_lim_header(struct ldr *l, const struct ynode *v, void *ctx)
{
	unsigned long x;

	(void)ctx;
	if (ldr_want_uint(l, v, "network.limits.maxHeaderBytes", POLICY_MAX_HEADER_BYTES_MIN,
		      POLICY_MAX_HEADER_BYTES_MAX, &x) == 0)
		l->p->limits.max_header_bytes = (size_t)x;
}

static const struct keydef limit_keys[] = {
	{"maxTunnels", YN_SCALAR, k_lim_tunnels, NULL, NULL},
	{"handshakeTimeoutMs", YN_SCALAR, k_lim_handshake, NULL, NULL},
	{"idleTimeoutMs", YN_SCALAR, k_lim_idle, NULL, NULL},
	{"upstreamKeepAliveMs", YN_SCALAR, k_lim_upkeep, NULL, NULL},
	{"maxHeaderBytes", YN_SCALAR, k_lim_header, NULL, NULL},
};
const struct keytab ldr_limit_tab = {"network.limits", limit_keys, ARRAY_LEN(limit_keys)};

/* network.limits: a mapping of the five limits above. */
static void k_limits(struct ldr *l, const struct ynode *v, void *ctx)
{
	ldr_walk_map(l, v, &ldr_limit_tab, ctx);
}

/* network.allowAllUnixSockets (same key and meaning as sandbox-runtime). */
static void k_unix(struct ldr *l, const struct ynode *v, void *ctx)
{
	(void)ctx;
	(void)ldr_want_bool(l, v, "network.allowAllUnixSockets", &l->p->allow_unix_sockets);
}

static const struct keydef network_keys[] = {
	{"allowedDomains", YN_SEQ, k_allowed, "a list of host patterns", NULL},
	{"deniedDomains", YN_SEQ, k_denied, "a list of host patterns", NULL},
	{"allowedMethods", YN_MAP, k_methods, "a mapping from host pattern to a list of methods",
	 NULL},
	{"deniedResolvedAddresses", YN_SEQ, k_denied_addrs, "a list of CIDRs", NULL},
	{"tlsTerminate", YN_ANY, k_tls, NULL, NULL},
	{"limits", YN_MAP, k_limits, "a mapping", NULL},
	{"allowAllUnixSockets", YN_SCALAR, k_unix, "true or false", NULL},
	/* sandbox-runtime keys without a passavant equivalent */
	{"allowUnixSockets", YN_ANY, NULL, NULL,
	 "per-path socket rules cannot be enforced by seccomp; use allowAllUnixSockets"},
	{"allowLocalBinding", YN_ANY, NULL, NULL,
	 "the sandbox has its own loopback; binding there is always possible"},
	{"httpProxyPort", YN_ANY, NULL, NULL, "passavant runs its own proxy"},
	{"socksProxyPort", YN_ANY, NULL, NULL, "passavant has no SOCKS proxy"},
};
const struct keytab ldr_network_tab = {"network", network_keys, ARRAY_LEN(network_keys)};

/* The network section (the top-level table in load.c dispatches here). */
void ldr_k_network(struct ldr *l, const struct ynode *v, void *ctx)
{
	ldr_walk_map(l, v, &ldr_network_tab, ctx);
}


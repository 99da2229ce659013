/*
 * decide.c - the connection and request decisions of SPEC §3.5, steps 1-3:
 * deniedDomains, allowedDomains, tlsTerminate/excludeDomains and
 * allowedMethods, over a policy the loader built.
 *
 * Pure functions of (policy, host, port[, method]): no allocation, no
 * global state, safe from event-loop callbacks. Hosts are expected already
 * normalised by policy_host_normalize(); they are normalised again here
 * (idempotent), and one that does not normalise is refused. Returned rule strings point into
 * the policy (the `rule` of the deciding entry, built by the loader as
 * "<list>: <text>") or to static storage.
 */
#include "policy_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

/* Used when an entry carries no prebuilt rule string (hand-built policies). */
#define RULE_DENIED "network.deniedDomains"
#define RULE_ALLOWED "network.allowedDomains"
#define RULE_METHODS "network.allowedMethods"
#define RULE_NO_ALLOW "network.allowedDomains (no entry matches)"
#define RULE_BAD_HOST "host is not a valid DNS name or IP literal"
#define RULE_NOT_A_NAME "an IP address is not a DNS name"

/*
 * Normalises host into out (POLICY_HOST_MAX + 1 bytes). The decisions are
 * specified on normalised hosts, but they are the last line: a caller that
 * passes a raw host (an SNI, a Host header) must not get "x..a.com" or
 * "evil/x.a.com" matched by "*.a.com", or any garbage by "*". Normalising
 * is idempotent, so a normalised host is unchanged. Returns whether host
 * is a valid name or IP literal.
 */
static bool host_norm(const char *host, char *out)
{
	size_t len = strnlen(host, POLICY_HOST_MAX + 2);

	return len <= POLICY_HOST_MAX + 1 &&
	       policy_host_normalize(host, len, out, POLICY_HOST_MAX + 1) == NULL;
}

/* The first entry of a list that matches host:port, or NULL. */
static const struct policy_hostent *list_match(const struct policy_hostlist *l, const char *host,
					       uint16_t port)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (policy_hostpat_match(&l->v[i].pat, host, port))
			return &l->v[i];
	return NULL;
}

/*
 * Specificity of a pattern, for allowedMethods: a larger value is more
 * specific. Ordered by, most significant first:
 *   1. kind: exact name or IP literal > wildcard > bare "*";
 *   2. for wildcards, the length of the suffix (longest wins);
 *   3. a pattern with a port beats the same pattern without one (it names
 *      a narrower set of connections; the port is never weighed against
 *      the kind, so "api.example.com" beats "*.example.com:443").
 */
unsigned long policy_hostpat_specificity(const struct policy_hostpat *pat)
{
	unsigned long kind = 0, len = 0;

	switch (pat->kind) {
	case HOSTPAT_ANY:
		kind = 1;
		break;
	case HOSTPAT_WILDCARD:
		kind = 2;
		len = strlen(pat->host);
		break;
	case HOSTPAT_EXACT:
	case HOSTPAT_IPV4:
	case HOSTPAT_IPV6:
		kind = 3;
		break;
	}
	return (kind << 16) | (len << 1) | (pat->port != 0 ? 1u : 0u);
}

/*
 * The most specific allowedMethods rule matching host:port, or NULL. On a
 * tie (the same pattern twice, which the loader refuses anyway) the first
 * in the file wins.
 */
static const struct policy_method_rule *method_rule(const policy_t *p, const char *host,
						    uint16_t port)
{
	const struct policy_method_rule *best = NULL;
	unsigned long best_spec = 0, spec;
	size_t i;

	for (i = 0; i < p->n_methods; i++) {
		const struct policy_method_rule *r = &p->methods[i];

		if (!policy_hostpat_match(&r->host.pat, host, port))
			continue;
		spec = policy_hostpat_specificity(&r->host.pat);
		if (best == NULL || spec > best_spec) {
			best = r;
			best_spec = spec;
		}
	}
	return best;
}

/*
 * Contract in policy.h. Precedence: a host that does not normalise is
 * denied; a deniedDomains match denies whatever allowedDomains says; then
 * an allowedDomains match allows; nothing matching denies. terminate_tls and method_restricted are filled only on
 * ALLOW (false on DENY). Pure; callable from callbacks.
 */
void policy_decide(const policy_t *p, const char *host, uint16_t port, struct policy_decision *out)
{
	const struct policy_hostent *e;
	const struct policy_method_rule *mr;
	char norm[POLICY_HOST_MAX + 1];

	memset(out, 0, sizeof(*out));
	out->verdict = POLICY_DENY;
	if (!host_norm(host, norm)) {
		out->rule = RULE_BAD_HOST;
		return;
	}
	host = norm;

	if ((e = list_match(&p->denied, host, port)) != NULL) {
		out->rule = e->rule != NULL ? e->rule : RULE_DENIED;
		return;
	}
	if ((e = list_match(&p->allowed, host, port)) == NULL) {
		out->rule = RULE_NO_ALLOW;
		return;
	}
	out->verdict = POLICY_ALLOW;
	out->rule = e->rule != NULL ? e->rule : RULE_ALLOWED;
	out->terminate_tls = p->tls_terminate && list_match(&p->tls_exclude, host, port) == NULL;
	mr = method_rule(p, host, port);
	out->method_restricted = mr != NULL && !mr->any_method;
	out->methods = mr;
}

/* Whether rule mr (NULL: none matched) lets method through; *rule (may
 * be NULL) as policy_method_allowed() says. */
static bool rule_allows(const struct policy_method_rule *mr, const char *method, const char **rule)
{
	size_t i;

	if (rule != NULL)
		*rule = NULL;
	if (mr == NULL)
		return true;
	if (rule != NULL)
		*rule = mr->host.rule != NULL ? mr->host.rule : RULE_METHODS;
	if (mr->any_method)
		return true;
	for (i = 0; i < mr->n_methods; i++)
		if (strcmp(mr->methods[i], method) == 0 || strcmp(mr->methods[i], "*") == 0)
			return true;
	return false;
}

/*
 * Contract in policy.h. Methods are compared case-sensitively: RFC 9110
 * §9.1 makes method names case-sensitive ("get" is not GET), and the
 * loader stores the tokens it loads upper-cased, so a client sending "get"
 * to a host limited to [GET] is refused rather than waved through as a
 * method the upstream may treat differently. *rule gets the deciding
 * entry's rule ("allowedMethods: PATTERN") whether it allows or refuses,
 * NULL when no pattern matched (every method allowed). A host that does
 * not normalise is refused. Pure.
 */
bool policy_method_allowed(const policy_t *p, const char *host, uint16_t port, const char *method,
			   const char **rule)
{
	char norm[POLICY_HOST_MAX + 1];

	if (!host_norm(host, norm)) {
		if (rule != NULL)
			*rule = RULE_BAD_HOST;
		return false;
	}
	return rule_allows(method_rule(p, norm, port), method, rule);
}

/* Contract in policy.h: the rule policy_decide() found (a DENY carries
 * none, and is refused as a host that does not normalise would be). */
bool policy_decision_method_allowed(const struct policy_decision *d, const char *method, const char **rule)
{
	if (d->verdict != POLICY_ALLOW) {
		if (rule != NULL)
			*rule = d->rule;
		return false;
	}
	return rule_allows(d->methods, method, rule);
}

/*
 * Contract in policy.h. For an allow entry with a port, the name is
 * allowed when no deny matches it on that port; for one without a port,
 * when no port-less deny matches it (a deny with a port leaves the other
 * ports open). A port-less deny is checked first so that it is the rule
 * named whatever the allow entries say. Pure.
 */
enum policy_name_verdict policy_name_decide(const policy_t *p, const char *host, const char **rule)
{
	const struct policy_hostent *e, *d, *covered = NULL;
	char norm[POLICY_HOST_MAX + 1];
	struct in_addr a4;
	const char *dummy;
	size_t i;

	if (rule == NULL)
		rule = &dummy;
	*rule = RULE_BAD_HOST;
	if (!host_norm(host, norm))
		return POLICY_NAME_INVALID;
	if (strchr(norm, ':') != NULL || inet_pton(AF_INET, norm, &a4) == 1) {
		*rule = RULE_NOT_A_NAME;
		return POLICY_NAME_INVALID;
	}
	for (i = 0; i < p->denied.n; i++) {
		d = &p->denied.v[i];
		if (d->pat.port == 0 && policy_hostpat_match(&d->pat, norm, 0)) {
			*rule = d->rule != NULL ? d->rule : RULE_DENIED;
			return POLICY_NAME_DENIED;
		}
	}
	for (i = 0; i < p->allowed.n; i++) {
		e = &p->allowed.v[i];
		if (!policy_hostpat_match(&e->pat, norm, e->pat.port))
			continue;
		/* Port-less: some port is left (port-less denies are out). */
		if (e->pat.port == 0 || (d = list_match(&p->denied, norm, e->pat.port)) == NULL) {
			*rule = e->rule != NULL ? e->rule : RULE_ALLOWED;
			return POLICY_NAME_ALLOWED;
		}
		covered = d;
	}
	if (covered != NULL) {
		*rule = covered->rule != NULL ? covered->rule : RULE_DENIED;
		return POLICY_NAME_DENIED;
	}
	*rule = RULE_NO_ALLOW;
	return POLICY_NAME_NOT_ALLOWED;
}

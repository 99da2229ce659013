/*
 * validate.c - the semantic pass of the policy loader (SPEC §3), run after
 * the key tables (keys_*.c) have filled struct policy from the document:
 *
 *  - credentials: duplicates, injectHosts defaulted to allowedDomains, each
 *    injectHosts entry reachable through allowedDomains and not denied;
 *  - rules the proxy could not enforce (a method restriction on a host whose
 *    TLS is not terminated, masking without TLS termination);
 *  - the warnings of §3.7.
 *
 * Errors and warnings carry the position of the entry they are about. The
 * pass is pure: the filesystem denies that depend on the machine are added
 * by policy_bind() (bind.c), and masked values are checked by mask/ when it
 * reads them (mask_table_new()), so loading never reads a secret.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_int.h"

/* ------------------------------------------------------------------ */
/* Pattern coverage                                                    */
/* ------------------------------------------------------------------ */

/* Whether host lies strictly under suffix ("a.b.c" under "b.c"). */
static bool under_suffix(const char *host, const char *suffix)
{
	size_t h = strlen(host), s = strlen(suffix);

	return h > s + 1 && host[h - s - 1] == '.' && strcmp(host + h - s, suffix) == 0;
}

/*
 * Whether every host matched by inner is matched by outer, ignoring ports
 * (callers compare ports as they need). A wildcard covers exact names and
 * narrower wildcards under its suffix; bare "*" covers everything.
 */
static bool covers_hosts(const struct policy_hostpat *outer, const struct policy_hostpat *inner)
{
	switch (outer->kind) {
	case HOSTPAT_ANY:
		return true;
	case HOSTPAT_WILDCARD:
		if (inner->kind == HOSTPAT_EXACT)
			return under_suffix(inner->host, outer->host);
		if (inner->kind == HOSTPAT_WILDCARD)
			return strcmp(inner->host, outer->host) == 0 ||
			       under_suffix(inner->host, outer->host);
		return false;
	case HOSTPAT_EXACT:
	case HOSTPAT_IPV4:
	case HOSTPAT_IPV6:
		return inner->kind == outer->kind && strcmp(inner->host, outer->host) == 0;
	}
	return false;
}

/* Ports that can both hold (either is "every port", or they are equal). */
static bool ports_meet(uint16_t a, uint16_t b)
{
	return a == 0 || b == 0 || a == b;
}

/* Whether outer covers inner's hosts and every port inner names. */
static bool covers(const struct policy_hostpat *outer, const struct policy_hostpat *inner)
{
	return covers_hosts(outer, inner) && (outer->port == 0 || outer->port == inner->port);
}

/* Whether some host and port match both patterns. */
static bool overlaps(const struct policy_hostpat *a, const struct policy_hostpat *b)
{
	return ports_meet(a->port, b->port) && (covers_hosts(a, b) || covers_hosts(b, a));
}

/* ------------------------------------------------------------------ */
/* Credentials                                                         */
/* ------------------------------------------------------------------ */

/* Sets the public view of every credential and fills defaulted
 * injectHosts from allowedDomains. */
static void creds_finish(struct ldr *l)
{
	struct policy *p = l->p;

	for (size_t i = 0; i < p->n_creds; i++) {
		struct policy_cred_ent *c = &p->creds[i];
		const struct policy_hostlist *src = &c->inject_hosts;

		c->pub.name = c->name;
		c->pub.path = c->path;
		c->pub.extract = c->extract;
		if (c->pub.mode != CRED_MASK)
			continue;
		if (c->inject_hosts.n == 0) {
			c->pub.inject_hosts_defaulted = true;
			src = &p->allowed;
		}
		if (src->n == 0)
			continue;
		c->inject_pats = calloc(src->n, sizeof(*c->inject_pats));
		if (c->inject_pats == NULL) {
			ldr_error(l, c->mark, "out of memory, expected to load the credentials");
			return;
		}
		for (size_t j = 0; j < src->n; j++)
			c->inject_pats[j] = src->v[j].pat;
		c->pub.inject_hosts = c->inject_pats;
		c->pub.n_inject_hosts = src->n;
	}
}

/* Same variable or file listed twice: ambiguous, refuse. */
static void creds_dups(struct ldr *l)
{
	struct policy *p = l->p;

	for (size_t i = 0; i < p->n_creds; i++)
		for (size_t j = 0; j < i; j++) {
			const struct policy_cred_ent *a = &p->creds[j], *b = &p->creds[i];
			if (a->pub.kind != b->pub.kind || a->name == NULL || b->name == NULL)
				continue;
			if (a->pub.kind == CRED_ENV ? strcmp(a->name, b->name) != 0
						    : (a->path == NULL || b->path == NULL ||
						       strcmp(a->path, b->path) != 0))
				continue;
			ldr_error(l, b->mark,
				  "credential %s again (first at line %u), expected each credential "
				  "once",
				  b->name, a->mark.line);
			break;
		}
}

/* Every injectHosts entry must be reachable through allowedDomains and
 * not denied; explicit entries may not be tunnelled opaquely. */
static void creds_reach(struct ldr *l)
{
	struct policy *p = l->p;
	const struct policy_hostent *any = NULL;

	for (size_t k = 0; k < p->allowed.n && any == NULL; k++)
		if (p->allowed.v[k].pat.kind == HOSTPAT_ANY)
			any = &p->allowed.v[k];
	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_cred_ent *c = &p->creds[i];
		/* Defaulted to an allowlist holding a bare "*", the real value
		 * would go to any host the sandbox names: masking would protect
		 * nothing. Saying so takes an explicit injectHosts: ["*"]. */
		if (any != NULL && c->pub.mode == CRED_MASK && c->inject_hosts.n == 0 &&
		    c->name != NULL)
			ldr_error(l, c->mark,
				  "credential %s without injectHosts while %s (line %u) allows every "
				  "host: its real value would go anywhere, expected an injectHosts "
				  "list of the hosts that need it",
				  c->name, any->rule ? any->rule : "network.allowedDomains \"*\"",
				  any->mark.line);
		for (size_t j = 0; j < c->inject_hosts.n; j++) {
			const struct policy_hostent *h = &c->inject_hosts.v[j];
			bool reach = false;
			for (size_t k = 0; k < p->allowed.n && !reach; k++) {
				const struct policy_hostpat *a = &p->allowed.v[k].pat;
				reach = covers_hosts(a, &h->pat) && ports_meet(a->port, h->pat.port);
			}
			if (!reach) {
				ldr_error(l, h->mark,
					  "injectHosts entry \"%s\" of credential %s that no "
					  "network.allowedDomains entry reaches, expected a host that "
					  "allowedDomains allows",
					  h->text, c->name ? c->name : "?");
				continue;
			}
			for (size_t k = 0; k < p->denied.n; k++)
				if (covers(&p->denied.v[k].pat, &h->pat)) {
					ldr_error(l, h->mark,
						  "injectHosts entry \"%s\" of credential %s denied by "
						  "%s, expected a host that is not denied",
						  h->text, c->name ? c->name : "?",
						  p->denied.v[k].rule);
					break;
				}
			for (size_t k = 0; k < p->tls_exclude.n; k++)
				if (overlaps(&p->tls_exclude.v[k].pat, &h->pat)) {
					ldr_error(l, h->mark,
						  "injectHosts entry \"%s\" of credential %s also in "
						  "%s (an opaque tunnel: nothing can be injected), "
						  "expected hosts whose TLS is terminated",
						  h->text, c->name ? c->name : "?",
						  p->tls_exclude.v[k].rule);
					break;
				}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Unenforceable method rules (§3.1)                                   */
/* ------------------------------------------------------------------ */

/* The allowedMethods rule that decides for every host of pattern e, among
 * the rules covering all of e; NULL when none does. */
static const struct policy_method_rule *method_decider(const struct policy *p,
						       const struct policy_hostpat *e)
{
	const struct policy_method_rule *best = NULL;

	for (size_t i = 0; i < p->n_methods; i++) {
		const struct policy_method_rule *r = &p->methods[i];
		if (!covers_hosts(&r->host.pat, e) || !ports_meet(r->host.pat.port, e->port))
			continue;
		if (best == NULL || policy_hostpat_specificity(&r->host.pat) > policy_hostpat_specificity(&best->host.pat))
			best = r;
	}
	return best;
}

/*
 * SPEC §3.1: a rule the proxy cannot enforce is refused. Without TLS
 * termination no request is seen, so every method restriction and every
 * mask is unenforceable; with it, an excluded host is unenforceable when
 * the rule deciding for it restricts methods, or when a narrower
 * restricted rule lies inside an excluded wildcard.
 */
static void methods_enforceable(struct ldr *l)
{
	const struct policy *p = l->p;

	if (!p->tls_terminate) {
		for (size_t i = 0; i < p->n_methods; i++)
			if (!p->methods[i].any_method)
				ldr_error(l, p->methods[i].host.mark,
					  "a method restriction on \"%s\" with tlsTerminate off, "
					  "expected tlsTerminate on (methods inside TLS cannot be "
					  "seen otherwise)",
					  p->methods[i].host.text);
		for (size_t i = 0; i < p->n_creds; i++)
			if (p->creds[i].pub.mode == CRED_MASK)
				ldr_error(l, p->creds[i].mark,
					  "credential %s with mode: mask and tlsTerminate off, "
					  "expected tlsTerminate on (or mode: deny)",
					  p->creds[i].name ? p->creds[i].name : "?");
		return;
	}
	for (size_t i = 0; i < p->tls_exclude.n; i++) {
		const struct policy_hostent *e = &p->tls_exclude.v[i];
		const struct policy_method_rule *d = method_decider(p, &e->pat);
		if (d != NULL && !d->any_method) {
			ldr_error(l, e->mark,
				  "\"%s\" in network.tlsTerminate.excludeDomains restricted by "
				  "%s, expected a host without a method restriction (an opaque "
				  "tunnel cannot enforce one)",
				  e->text, d->host.rule);
			continue;
		}
		/* A narrower restricted rule inside an excluded wildcard. */
		for (size_t j = 0; j < p->n_methods; j++) {
			const struct policy_method_rule *r = &p->methods[j];
			if (r->any_method || r == d || !covers_hosts(&e->pat, &r->host.pat) ||
			    !ports_meet(e->pat.port, r->host.pat.port))
				continue;
			ldr_error(l, e->mark,
				  "\"%s\" in network.tlsTerminate.excludeDomains covers %s, expected "
				  "no method restriction on excluded hosts",
				  e->text, r->host.rule);
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Warnings (§3.7)                                                     */
/* ------------------------------------------------------------------ */

/*
 * Domains that serve content anyone can upload or host: a wildcard allow
 * reaching them is an exfiltration channel (post a gist, push to a bucket,
 * deploy a worker). The list is documented in docs/config.md.
 */
static const char *const user_content_domains[] = {
	"github.com", "githubusercontent.com", "github.io", "gitlab.com", "gitlab.io",
	"bitbucket.org", "bitbucket.io", "amazonaws.com", "cloudfront.net",
	"storage.googleapis.com", "googleusercontent.com", "appspot.com", "web.app",
	"firebaseapp.com", "run.app", "cloudfunctions.net", "blob.core.windows.net",
	"azurewebsites.net", "windows.net", "r2.dev", "r2.cloudflarestorage.com",
	"digitaloceanspaces.com", "backblazeb2.com", "pastebin.com", "paste.ee",
	"hastebin.com", "dpaste.org", "ghostbin.com", "termbin.com", "transfer.sh", "file.io",
	"herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "workers.dev", "fly.dev",
	"glitch.me", "replit.dev", "repl.co", "ngrok.io", "ngrok.app", "ngrok-free.app",
	"trycloudflare.com", "loca.lt", "serveo.net", "webhook.site", "pipedream.net",
	"requestbin.com", "discord.com", "discordapp.com", "hooks.slack.com", "huggingface.co",
	"dropbox.com", "dropboxusercontent.com", "docs.google.com", "drive.google.com",
	"supabase.co",
};

/* Warns when a wildcard entry reaches a user-content domain: equal to it,
 * broader than it ("*.com"), or inside it ("*.s3.amazonaws.com"). */
static void warn_user_content(struct ldr *l, const struct policy_hostent *e)
{
	if (e->pat.kind != HOSTPAT_WILDCARD)
		return;
	for (size_t i = 0; i < ARRAY_LEN(user_content_domains); i++) {
		const char *d = user_content_domains[i];
		if (strcmp(e->pat.host, d) == 0 || under_suffix(d, e->pat.host) ||
		    under_suffix(e->pat.host, d)) {
			(void)ldr_warn(l, e->mark,
				       "allowedDomains entry \"%s\" reaches %s, which hosts content "
				       "anyone can upload (an exfiltration channel); allow the exact "
				       "hosts you need",
				       e->text, d);
			return;
		}
	}
}

/* Whether an explicit injectHosts list is exactly the allowlist. */
static bool same_as_allowlist(const struct policy *p, const struct policy_hostlist *h)
{
	if (h->n != p->allowed.n || h->n < 2)
		return false;
	for (size_t i = 0; i < h->n; i++) {
		bool found = false;
		for (size_t j = 0; j < p->allowed.n && !found; j++)
			found = covers(&h->v[i].pat, &p->allowed.v[j].pat) &&
				covers(&p->allowed.v[j].pat, &h->v[i].pat);
		if (!found)
			return false;
	}
	return true;
}

/* The warnings of SPEC §3.7 (plus a few the loader adds). */
static void warnings(struct ldr *l)
{
	const struct policy *p = l->p;

	for (size_t i = 0; i < p->allowed.n; i++) {
		const struct policy_hostent *e = &p->allowed.v[i];
		if (e->pat.kind == HOSTPAT_ANY)
			(void)ldr_warn(l, e->mark,
				       "allowedDomains has a bare \"*\": every host is reachable "
				       "(only deniedDomains and allowedMethods restrict egress)");
		else
			warn_user_content(l, e);
	}
	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_cred_ent *c = &p->creds[i];
		const char *name = c->name ? c->name : "?";
		if (c->pub.mode != CRED_MASK)
			continue;
		for (size_t j = 0; j < c->inject_hosts.n; j++)
			if (c->inject_hosts.v[j].pat.kind == HOSTPAT_ANY)
				(void)ldr_warn(l, c->inject_hosts.v[j].mark,
					       "credential %s: injectHosts \"*\" sends its real value to "
					       "every allowed host",
					       name);
		if (c->pub.inject_hosts_defaulted && p->allowed.n > 0)
			(void)ldr_warn(l, c->mark,
				       "credential %s has no injectHosts: its real value goes to "
				       "every allowed domain; list the hosts that need it",
				       name);
		else if (same_as_allowlist(p, &c->inject_hosts))
			(void)ldr_warn(l, c->mark,
				       "credential %s: injectHosts is the whole allowlist; list only "
				       "the hosts that need it",
				       name);
		if (c->pub.inject_in & INJECT_BODY)
			(void)ldr_warn(l, c->inject_in_mark.line ? c->inject_in_mark : c->mark,
				       "credential %s may be injected into request bodies: a "
				       "sandboxed process can store the real value on an inject host "
				       "(a gist, an issue) and read it back",
				       name);
	}
	/* STYLE 10: unreachable rules. A method rule no allowed host can
	 * match never applies, which is most likely a typo. */
	for (size_t i = 0; i < p->n_methods; i++) {
		const struct policy_hostent *e = &p->methods[i].host;
		bool reach = e->pat.kind == HOSTPAT_ANY;
		for (size_t k = 0; k < p->allowed.n && !reach; k++)
			reach = overlaps(&p->allowed.v[k].pat, &e->pat);
		if (!reach)
			(void)ldr_warn(l, e->mark,
				       "allowedMethods entry \"%s\" matches no allowed host, so it "
				       "never applies",
				       e->text);
	}
	if (p->allow_plaintext_inject)
		(void)ldr_warn(l, p->plaintext_mark,
			       "allowPlaintextInject: real values may be sent over plain HTTP or to "
			       "unverified upstreams, where anyone on the path can read them");
	for (size_t i = 0; i < p->tls_exclude.n; i++)
		(void)ldr_warn(l, p->tls_exclude.v[i].mark,
			       "\"%s\" is tunnelled opaquely (excludeDomains): its requests are not "
			       "seen, audited, method-checked or masked",
			       p->tls_exclude.v[i].text);
	for (size_t i = 0; i < p->tls_exclude.n; i++) {
		const struct policy_hostent *e = &p->tls_exclude.v[i];
		bool reach = false;
		for (size_t k = 0; k < p->allowed.n && !reach; k++)
			reach = overlaps(&p->allowed.v[k].pat, &e->pat);
		if (!reach)
			(void)ldr_warn(l, e->mark,
				       "excludeDomains entry \"%s\" is not in allowedDomains, so it "
				       "is never reached",
				       e->text);
	}
}

/* Contract in loader_int.h. */
void policy_validate(struct ldr *l)
{
	creds_finish(l);
	creds_dups(l);
	creds_reach(l);
	methods_enforceable(l);
	warnings(l);
}

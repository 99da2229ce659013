/*
 * print.c - `passavant check` output: the effective policy as YAML, every
 * default filled in, and the warnings. The output is itself a valid policy
 * (loading it again gives the same policy). Secret values are never held
 * by struct policy, so they cannot be printed here.
 */
#include <stdio.h>
#include <string.h>

#include "loader_int.h"

/* Writes s as a double-quoted YAML scalar. */
static void put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* A host list as a block sequence of the patterns as written (quoted:
 * "*" and "[::1]" are YAML indicators), or "[]". */
static void put_hostlist(FILE *out, const char *indent, const char *key,
			 const struct policy_hostlist *l)
{
	if (l->n == 0) {
		fprintf(out, "%s%s: []\n", indent, key);
		return;
	}
	fprintf(out, "%s%s:\n", indent, key);
	for (size_t i = 0; i < l->n; i++) {
		fprintf(out, "%s  - ", indent);
		put_quoted(out, l->v[i].text);
		fputc('\n', out);
	}
}

/* A path or string list, same layout. */
static void put_strlist(FILE *out, const char *indent, const char *key,
			const struct policy_strlist *l)
{
	if (l->n == 0) {
		fprintf(out, "%s%s: []\n", indent, key);
		return;
	}
	fprintf(out, "%s%s:\n", indent, key);
	for (size_t i = 0; i < l->n; i++) {
		fprintf(out, "%s  - ", indent);
		put_quoted(out, l->v[i]);
		fputc('\n', out);
	}
}

/* The network section with every default spelt out; comments say what an
 * empty value means, since "[]" reads differently per key. */
static void put_network(const struct policy *p, FILE *out)
{
	fputs("network:\n", out);
	put_hostlist(out, "  ", "allowedDomains", &p->allowed);
	put_hostlist(out, "  ", "deniedDomains", &p->denied);
	if (p->n_methods == 0) {
		fputs("  allowedMethods: {}  # every host allows every method\n", out);
	} else {
		fputs("  allowedMethods:\n", out);
		for (size_t i = 0; i < p->n_methods; i++) {
			const struct policy_method_rule *r = &p->methods[i];
			fputs("    ", out);
			put_quoted(out, r->host.text);
			fputs(": [", out);
			for (size_t j = 0; j < r->n_methods; j++) {
				/* Quoted: tchar allows YAML indicators such as '#'. */
				fputs(j ? ", " : "", out);
				put_quoted(out, r->methods[j]);
			}
			if (r->any_method)
				fprintf(out, "%s\"*\"", r->n_methods ? ", " : "");
			fputs("]\n", out);
		}
	}
	if (p->n_denied_addrs == 0) {
		fputs("  deniedResolvedAddresses: []  # loopback, link-local, metadata... are "
		      "always denied\n",
		      out);
	} else {
		fputs("  deniedResolvedAddresses:\n", out);
		for (size_t i = 0; i < p->n_denied_addrs; i++) {
			fputs("    - ", out);
			put_quoted(out, p->denied_addrs[i].text);
			fputc('\n', out);
		}
	}
	fputs("  tlsTerminate:\n", out);
	fprintf(out, "    enabled: %s\n", p->tls_terminate ? "true" : "false");
	put_hostlist(out, "    ", "excludeDomains", &p->tls_exclude);
	put_strlist(out, "    ", "extraCaCertPaths", &p->extra_ca);
	fputs("  limits:\n", out);
	fprintf(out, "    maxTunnels: %u\n", p->limits.max_tunnels);
	fprintf(out, "    handshakeTimeoutMs: %u\n", p->limits.handshake_timeout_ms);
	fprintf(out, "    idleTimeoutMs: %u\n", p->limits.idle_timeout_ms);
	fprintf(out, "    maxHeaderBytes: %zu\n", p->limits.max_header_bytes);
	fprintf(out, "  allowAllUnixSockets: %s\n", p->allow_unix_sockets ? "true" : "false");
}

/* One credential: name or expanded path, mode, and for mask entries the
 * effective extract, injectHosts and injectIn. A defaulted injectHosts is
 * printed as a comment so the output loads back to the same policy. */
static void put_cred(const struct policy *p, const struct policy_cred_ent *c, FILE *out)
{
	static const char *const where[] = {"header", "query", "body"};
	bool first = true;

	if (c->pub.kind == CRED_ENV) {
		fputs("    - name: ", out);
		put_quoted(out, c->name ? c->name : "");
	} else {
		fputs("    - path: ", out);
		put_quoted(out, c->path ? c->path : "");
	}
	fprintf(out, "\n      mode: %s\n", c->pub.mode == CRED_MASK ? "mask" : "deny");
	if (c->pub.mode != CRED_MASK)
		return;
	if (c->extract != NULL) {
		fputs("      extract: ", out);
		put_quoted(out, c->extract);
		fputc('\n', out);
	}
	if (!c->pub.inject_hosts_defaulted)
		put_hostlist(out, "      ", "injectHosts", &c->inject_hosts);
	else if (p->allowed.n == 0)
		fputs("      # injectHosts: not set; allowedDomains is empty, so no host\n", out);
	else
		fputs("      # injectHosts not set: every allowedDomains entry\n", out);
	fputs("      injectIn: [", out);
	for (unsigned i = 0; i < ARRAY_LEN(where); i++)
		if (c->pub.inject_in & (1u << i)) {
			fprintf(out, "%s%s", first ? "" : ", ", where[i]);
			first = false;
		}
	fputs("]\n", out);
}

/* The credentials section, envVars first, then files (order kept). */
static void put_credentials(const struct policy *p, FILE *out)
{
	bool any[2] = {false, false};

	fputs("credentials:\n", out);
	for (size_t i = 0; i < p->n_creds; i++)
		any[p->creds[i].pub.kind == CRED_FILE] = true;
	for (int k = 0; k < 2; k++) {
		fprintf(out, "  %s:%s\n", k == 0 ? "envVars" : "files", any[k] ? "" : " []");
		for (size_t i = 0; i < p->n_creds; i++)
			if ((p->creds[i].pub.kind == CRED_FILE) == (k == 1))
				put_cred(p, &p->creds[i], out);
	}
	fprintf(out, "  allowPlaintextInject: %s\n", p->allow_plaintext_inject ? "true" : "false");
	/* SPEC §3.6: what happens to the variables not listed here. */
	fputs("  # Variables not listed in envVars pass through, except those whose name or value\n"
	      "  # looks like a credential: dropped (check -v shows the rule).\n",
	      out);
}

/* Contract in policy.h. */
int policy_print(const policy_t *p, FILE *out)
{
	static const char *const fs_names[FS_LIST_COUNT] = {"denyRead", "allowRead", "allowWrite",
							     "denyWrite"};

	put_network(p, out);
	put_credentials(p, out);
	fputs("filesystem:  # /tmp is always a private tmpfs\n", out);
	for (int i = 0; i < FS_LIST_COUNT; i++)
		put_strlist(out, "  ", fs_names[i], &p->fs[i]);
	fputs("audit:\n", out);
	if (p->audit_path != NULL) {
		fputs("  path: ", out);
		put_quoted(out, p->audit_path);
		fputc('\n', out);
	} else {
		fputs("  # path: not set, no audit log\n", out);
	}
	fprintf(out, "  bodies: %s\n", p->audit_bodies == AUDIT_BODIES_HEADERS ? "headers" : "none");
	return ferror(out) ? -1 : 0;
}

/* Contract in policy.h. */
size_t policy_print_warnings(const policy_t *p, FILE *out)
{
	for (size_t i = 0; i < p->warnings.n; i++)
		fprintf(out, "warning: %s\n", p->warnings.v[i]);
	return p->warnings.n;
}

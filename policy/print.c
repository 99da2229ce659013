/*
 * print.c - `passavant check` output: the effective policy as YAML, every
 * default filled in, and the warnings. The YAML is written by libyaml's
 * emitter, so quoting and escaping are libyaml's; the output is itself a
 * valid policy (loading it again gives the same policy). Secret values are
 * never held by struct policy, so they cannot be printed here.
 *
 * libyaml has no comment events; the few comments that say what a default
 * means are written straight to the stream between events, after
 * yaml_emitter_flush(): the emitter writes a line's break before the next
 * node, so a comment written after a value ends that line.
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "loader_int.h"

/* One emitter run; ok turns false at the first failed event. */
struct pr {
	yaml_emitter_t em;
	FILE *out;
	bool ok;
};

/* Emits ev (consumed either way). */
static void emit(struct pr *w, yaml_event_t *ev, int made)
{
	if (!made || !yaml_emitter_emit(&w->em, ev))
		w->ok = false;
}

/* A scalar; quoted: double-quoted (host patterns, paths and methods may
 * hold YAML indicators such as '*', '#', '[' or ':'), else plain. */
static void scalar(struct pr *w, const char *s, bool quoted)
{
	yaml_event_t ev;

	if (!w->ok)
		return;
	emit(w, &ev,
	     yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), !quoted, 1,
					  quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						 : YAML_PLAIN_SCALAR_STYLE));
}

static void key(struct pr *w, const char *k)
{
	scalar(w, k, false);
}

/* Starts a mapping or a sequence, block or flow style. */
static void coll_start(struct pr *w, bool map, bool flow)
{
	yaml_event_t ev;

	if (!w->ok)
		return;
	if (map)
		emit(w, &ev,
		     yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 flow ? YAML_FLOW_MAPPING_STYLE
							      : YAML_BLOCK_MAPPING_STYLE));
	else
		emit(w, &ev,
		     yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  flow ? YAML_FLOW_SEQUENCE_STYLE
							       : YAML_BLOCK_SEQUENCE_STYLE));
}

/* Ends the innermost mapping or sequence. */
static void coll_end(struct pr *w, bool map)
{
	yaml_event_t ev;

	if (w->ok)
		emit(w, &ev, map ? yaml_mapping_end_event_initialize(&ev)
				 : yaml_sequence_end_event_initialize(&ev));
}

#define map_start(w, flow) coll_start((w), true, (flow))
#define map_end(w) coll_end((w), true)
#define seq_start(w, flow) coll_start((w), false, (flow))
#define seq_end(w) coll_end((w), false)

/* Writes text (comments) after what was emitted so far. */
static void comment(struct pr *w, const char *text)
{
	if (!w->ok)
		return;
	if (!yaml_emitter_flush(&w->em)) {
		w->ok = false;
		return;
	}
	fputs(text, w->out);
}

/* "key: value" with a plain value (numbers, booleans, keywords). */
static void kv_plain(struct pr *w, const char *k, const char *v)
{
	key(w, k);
	scalar(w, v, false);
}

static void kv_bool(struct pr *w, const char *k, bool v)
{
	kv_plain(w, k, v ? "true" : "false");
}

static void kv_uint(struct pr *w, const char *k, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	kv_plain(w, k, buf);
}

/* A host list as a block sequence of the patterns as written, or []. */
static void put_hostlist(struct pr *w, const char *k, const struct policy_hostlist *l)
{
	key(w, k);
	seq_start(w, l->n == 0);
	for (size_t i = 0; i < l->n; i++)
		scalar(w, l->v[i].text, true);
	seq_end(w);
}

/* A path or string list, same layout. */
static void put_strlist(struct pr *w, const char *k, const struct policy_strlist *l)
{
	key(w, k);
	seq_start(w, l->n == 0);
	for (size_t i = 0; i < l->n; i++)
		scalar(w, l->v[i], true);
	seq_end(w);
}

/* network.allowedMethods: pattern -> methods, "*" last. */
static void put_methods(struct pr *w, const struct policy *p)
{
	key(w, "allowedMethods");
	map_start(w, p->n_methods == 0);
	for (size_t i = 0; i < p->n_methods; i++) {
		const struct policy_method_rule *r = &p->methods[i];
		scalar(w, r->host.text, true);
		seq_start(w, true);
		for (size_t j = 0; j < r->n_methods; j++)
			scalar(w, r->methods[j], true);
		if (r->any_method)
			scalar(w, "*", true);
		seq_end(w);
	}
	map_end(w);
	if (p->n_methods == 0)
		comment(w, "  # every host allows every method");
}

/* The network section with every default spelt out; comments say what an
 * empty value means, since "[]" reads differently per key. */
static void put_network(struct pr *w, const struct policy *p)
{
	key(w, "network");
	map_start(w, false);
	put_hostlist(w, "allowedDomains", &p->allowed);
	put_hostlist(w, "deniedDomains", &p->denied);
	put_methods(w, p);
	key(w, "deniedResolvedAddresses");
	seq_start(w, p->n_denied_addrs == 0);
	for (size_t i = 0; i < p->n_denied_addrs; i++)
		scalar(w, p->denied_addrs[i].text, true);
	seq_end(w);
	if (p->n_denied_addrs == 0)
		comment(w, "  # loopback, link-local, metadata... are always denied");
	key(w, "tlsTerminate");
	map_start(w, false);
	kv_bool(w, "enabled", p->tls_terminate);
	put_hostlist(w, "excludeDomains", &p->tls_exclude);
	put_strlist(w, "extraCaCertPaths", &p->extra_ca);
	map_end(w);
	key(w, "limits");
	map_start(w, false);
	kv_uint(w, "maxTunnels", p->limits.max_tunnels);
	kv_uint(w, "handshakeTimeoutMs", p->limits.handshake_timeout_ms);
	kv_uint(w, "idleTimeoutMs", p->limits.idle_timeout_ms);
	kv_uint(w, "upstreamKeepAliveMs", p->limits.upstream_keepalive_ms);
	kv_uint(w, "maxHeaderBytes", p->limits.max_header_bytes);
	map_end(w);
	kv_bool(w, "allowAllUnixSockets", p->allow_unix_sockets);
	map_end(w);
}

/* One credential: name or path, mode, and for mask entries the effective
 * extract, injectHosts and injectIn. A defaulted injectHosts is written as
 * a comment so the output loads back to the same policy. */
static void put_cred(struct pr *w, const struct policy *p, const struct policy_cred_ent *c)
{
	static const char *const where[] = {"header", "query", "body"};

	map_start(w, false);
	key(w, c->pub.kind == CRED_ENV ? "name" : "path");
	scalar(w, c->pub.kind == CRED_ENV ? (c->name ? c->name : "") : (c->path ? c->path : ""), true);
	kv_plain(w, "mode", c->pub.mode == CRED_MASK ? "mask" : "deny");
	if (c->pub.mode == CRED_MASK) {
		if (c->extract != NULL) {
			key(w, "extract");
			scalar(w, c->extract, true);
		}
		if (!c->pub.inject_hosts_defaulted)
			put_hostlist(w, "injectHosts", &c->inject_hosts);
		else if (p->allowed.n == 0)
			comment(w, "  # injectHosts: not set; allowedDomains is empty, so no host");
		else
			comment(w, "  # injectHosts not set: every allowedDomains entry");
		key(w, "injectIn");
		seq_start(w, true);
		for (unsigned i = 0; i < ARRAY_LEN(where); i++)
			if (c->pub.inject_in & (1u << i))
				scalar(w, where[i], false);
		seq_end(w);
	}
	map_end(w);
}

/* The credentials section, envVars first, then files (order kept). */
static void put_credentials(struct pr *w, const struct policy *p)
{
	bool any[2] = {false, false};

	key(w, "credentials");
	map_start(w, false);
	for (size_t i = 0; i < p->n_creds; i++)
		any[p->creds[i].pub.kind == CRED_FILE] = true;
	for (int k = 0; k < 2; k++) {
		key(w, k == 0 ? "envVars" : "files");
		seq_start(w, !any[k]);
		for (size_t i = 0; i < p->n_creds; i++)
			if ((p->creds[i].pub.kind == CRED_FILE) == (k == 1))
				put_cred(w, p, &p->creds[i]);
		seq_end(w);
	}
	kv_bool(w, "allowPlaintextInject", p->allow_plaintext_inject);
	/* SPEC §4.1: the effective mode, also when defaulted. */
	kv_plain(w, "sentinels",
		 p->sentinels == POLICY_SENTINELS_PER_SESSION ? "per-session" : "stable");
	/* SPEC §3.6: what happens to the variables not listed here. */
	comment(w, "\n  # Variables not listed in envVars pass through, except those whose name or "
		   "value\n  # looks like a credential: dropped (check -v shows the rule).");
	map_end(w);
}

/* The filesystem and audit sections. */
static void put_fs_audit(struct pr *w, const struct policy *p)
{
	static const char *const fs_names[FS_LIST_COUNT] = {"denyRead", "allowRead", "allowWrite",
							     "denyWrite"};

	comment(w, "\n# filesystem: /tmp is always a private tmpfs");
	key(w, "filesystem");
	map_start(w, false);
	for (int i = 0; i < FS_LIST_COUNT; i++)
		put_strlist(w, fs_names[i], &p->fs[i]);
	map_end(w);
	key(w, "audit");
	map_start(w, false);
	if (p->audit_path != NULL) {
		key(w, "path");
		scalar(w, p->audit_path, true);
	}
	kv_plain(w, "bodies", p->audit_bodies == AUDIT_BODIES_HEADERS ? "headers" : "none");
	map_end(w);
	if (p->audit_path == NULL)
		comment(w, "\n# audit.path: not set, no audit log");
}

/* Contract in policy.h. */
int policy_print(const policy_t *p, FILE *out)
{
	struct pr w = {.out = out, .ok = true};
	yaml_event_t ev;

	if (!yaml_emitter_initialize(&w.em))
		return -1;
	yaml_emitter_set_output_file(&w.em, out);
	yaml_emitter_set_unicode(&w.em, 1);
	yaml_emitter_set_width(&w.em, -1); /* no folding: comments shift its columns */
	yaml_emitter_set_indent(&w.em, 2);
	emit(&w, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	if (w.ok)
		emit(&w, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	map_start(&w, false);
	put_network(&w, p);
	put_credentials(&w, p);
	put_fs_audit(&w, p);
	map_end(&w);
	if (w.ok)
		emit(&w, &ev, yaml_document_end_event_initialize(&ev, 1));
	if (w.ok)
		emit(&w, &ev, yaml_stream_end_event_initialize(&ev));
	if (w.ok && !yaml_emitter_flush(&w.em))
		w.ok = false;
	yaml_emitter_delete(&w.em);
	return w.ok && !ferror(out) ? 0 : -1;
}

/* Contract in policy.h. */
size_t policy_print_warnings(const policy_t *p, FILE *out)
{
	for (size_t i = 0; i < p->warnings.n; i++)
		fprintf(out, "warning: %s\n", p->warnings.v[i]);
	return p->warnings.n;
}

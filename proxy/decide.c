/*
 * decide.c - what a complete request head gets (SPEC §3, §4.2, §5): the
 * search for real values on their way out, the CONNECT decision, and one
 * pipeline for every HTTP request, plain (absolute form) or inside a
 * terminated tunnel (origin form): methods, target, Host and SNI,
 * allowedDomains, allowedMethods (also the methods a request names in
 * override fields and _method parameters), the head prepared with
 * masking, then sent on a reused or a new upstream.
 *
 * The checks themselves are conn_verdict(), which HTTP/2 streams get too
 * (h2req.c): it reads what both protocols know of a request (struct
 * req_facts) and returns a verdict (struct verdict) that each protocol
 * only answers its own way (conn_refuse() here, h2s_answer() there);
 * conn_verdict_real() and conn_verdict_sentinel() word the credential
 * refusals for both. What only HTTP/1.1 has stays here: the request
 * line's absolute form (and an intercepted connection's origin form),
 * the maxTunnels slot of plain HTTP, the WebSocket upgrade, an upstream
 * certificate that did not verify.
 */
#include "conn_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "base/defaults.h"
#include "base/hex.h"
#include "sockio.h"

/* Answers a refusal (HTTP/1.1): the rule it decided by becomes the
 * connection's, then conn_refuse(). */

/* The refusal while the audit cannot be written (proxy_audit_down()),
 * the same for requests, streams and tunnels. */
#define AUDIT_DOWN_XERR "audit-unavailable"
#define AUDIT_DOWN_WHY                                                                                      \
	"the audit file cannot be written, and nothing leaves unrecorded (free space where --audit points)"

static enum step refuse_verdict(conn_t *c, const struct verdict *v)
{
	if (v->decided)
		c->rule = v->rule;
	return conn_refuse(c, v->status, v->xerr, v->kind, v->rule, "%s", v->reason);
}

/*
 * The allowed request's head for the upstream, into c->head_out: hop-by-
 * hop fields removed, Accept-Encoding: identity towards inject hosts, and
 * credential masking (SPEC §4.2): sentinels in the target and the header
 * values replaced where the policy allows it, the request refused (403)
 * when a sentinel sits where it may not go; the body substituter armed
 * when a body follows. Real values go only into verified TLS (plain HTTP
 * only with allowPlaintextInject: the table decides with verified false).
 * Returns true to go on (send the head); false when the request was
 * refused or the conn closed, with *st the step to return (a refusal's
 * STEP_AGAIN drives the DRAINING conn on).
 */
bool conn_prepare_request(conn_t *c, enum step *st)
{
	char reason[512], w[512];
	const char *rule = NULL;
	bool oom = false, verified = terminated(c);
	struct verdict v;
	int r;

	if (c->head_out == NULL && (c->head_out = evbuffer_new()) == NULL)
		goto oom;
	/* A head never sent (a 502 after a failed verification). */
	cmask_wipe_drain(c->head_out);
	if (c->mask == NULL && proxy_masks(c->px) != NULL) {
		c->mask = cmask_new(proxy_masks(c->px), &oom);
		if (oom)
			goto oom;
	}
	/* a masking session's requests may carry real values: never copied
	 * (the only place the upstream side's may_join is set) */
	c->up.may_join = c->mask == NULL;
	c->ex.mask_req_body = false;
	c->ex.identity = c->mask != NULL && cmask_inject_host(c->mask, c->tgt.host, c->tgt.port);
	if (http1_write_request_head(c->client.http, c->head_out, c->tgt.path, c->tgt.path_len,
				     c->tgt.authority, c->ex.kind == EX_KIND_UPGRADE,
				     c->ex.identity, c->ex.up_close) < 0)
		goto oom;
	if (c->mask == NULL)
		return true;
	r = cmask_request_head(c->mask, c->head_out, c->tgt.host, c->tgt.port, verified, reason,
			       sizeof(reason), &rule);
	if (r < 0)
		goto oom;
	if (r == 1) {
		cmask_begin_request(c->mask); /* nothing was injected */
		conn_verdict_sentinel(&v, conn_what(c, w, sizeof(w)), rule, reason);
		*st = refuse_verdict(c, &v);
		return false;
	}
	if (!c->ex.req_done) {
		if (cmask_body_begin(c->mask, CMASK_OUT, c->tgt.host, c->tgt.port, verified,
				     http1_chunked(c->client.http)) < 0)
			goto oom;
		if (http1_chunked(c->client.http))
			http1_set_body_sink(c->client.http, cmask_body_sink,
					    cmask_sink_arg(c->mask, CMASK_OUT));
		c->ex.mask_req_body = true;
	}
	return true;
oom:
	conn_close(c, "out of memory preparing a request head", true);
	*st = STEP_CLOSED;
	return false;
}

/*
 * The decision of a tunnel to tgt: a CONNECT, or an intercepted TLS
 * connection whose ClientHello named the host (intercept.c; mode RAW, so
 * a refusal closes instead of answering). allowedDomains, the method
 * rule against an opaque tunnel, the plan for TLS_SNIFF, a maxTunnels
 * slot, then the dial (TUNNEL_CONNECTING).
 */
enum step conn_decide_tunnel(conn_t *c)
{
	struct policy_decision d;
	const char *mrule = NULL;
	char w[512];

	if (proxy_audit_down(c->px))
		return conn_refuse(c, 503, AUDIT_DOWN_XERR, "connect", "audit", "passavant: %s refused: " AUDIT_DOWN_WHY,
				   conn_what(c, w, sizeof(w)));
	policy_decide(pol(c), c->tgt.host, c->tgt.port, &d);
	/* The tunnel's requests are decided on the same target: under the
	 * same policy, this decision is theirs too (request_facts()). */
	c->tun_decision.d = d;
	c->tun_decision.valid = true;
	c->rule = d.rule;
	if (d.verdict != POLICY_ALLOW)
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", d.rule,
				   "passavant: %s refused by %s", conn_what(c, w, sizeof(w)), d.rule);
	if (!d.terminate_tls || proxy_tls(c->px) == NULL)
		c->plan = TUNNEL_OPAQUE;
	else
		c->plan = d.method_restricted ? TUNNEL_TERMINATE_ONLY : TUNNEL_TERMINATE;
	if (d.method_restricted && c->plan == TUNNEL_OPAQUE) {
		/* SPEC §3.1: a method rule cannot be enforced inside an
		 * opaque tunnel; refuse rather than skip it. (With TLS
		 * termination the tunnel is refused later if it does not
		 * carry TLS: conn_step_tls_sniff().) */
		(void)policy_method_allowed(pol(c), c->tgt.host, c->tgt.port, "CONNECT", &mrule);
		if (mrule == NULL)
			mrule = "allowedMethods";
		return conn_refuse(c, 403, "blocked-by-sandbox-runtime", "connect", mrule,
				   "passavant: %s refused by %s: methods cannot be enforced in an opaque tunnel",
				   conn_what(c, w, sizeof(w)), mrule);
	}
	if (!c->slot) {
		if (!proxy_tunnel_acquire(c->px, policy_limits(pol(c))->max_tunnels))
			return conn_refuse(c, 503, "too-many-tunnels", "connect", "limits: maxTunnels",
					   "passavant: %s refused: too many tunnels (maxTunnels %u)",
					   conn_what(c, w, sizeof(w)), policy_limits(pol(c))->max_tunnels);
		conn_slot_taken(c);
	}
	/* A keep-alive connection may have carried plain requests before:
	 * their idle upstream is not the tunnel's (their byte counts went
	 * with their exchange). */
	conn_drop_upstream(c);
	return conn_dial(c, CONN_TUNNEL_CONNECTING);
}

static enum step decide_connect(conn_t *c, const char *url, size_t ulen)
{
	const char *err;

	c->ex.kind = EX_KIND_CONNECT;
	if ((err = conn_target_connect(c, url, ulen)) != NULL)
		return conn_refuse(c, err == conn_target_nomem ? 503 : 400, NULL, "connect", NULL,
				   "passavant: CONNECT %.*s: %s",
				   (int)(ulen > 200 ? 200 : ulen), url, err);
	c->ex.have_target = true;
	return conn_decide_tunnel(c);
}

/* Whether the request's Upgrade field is exactly "websocket". */
static bool is_websocket_upgrade(const http1_t *h)
{
	const char *name, *val;
	size_t nlen, vlen, i;

	if (http1_header_find(h, "upgrade", &i) != 1)
		return false;
	http1_header(h, i, &name, &nlen, &val, &vlen);
	return vlen == 9 && strncasecmp(val, "websocket", 9) == 0;
}

/*
 * The target of a plain HTTP request: the absolute form, parsed into tgt;
 * on a connection with a destination (intercepted, or a CONNECT tunnel
 * carrying plain HTTP) also the origin form (conn_intercept_target():
 * Host and the destination's port).
 * Inside a terminated tunnel the target is the CONNECT's and conn_verdict()
 * judges the request's form. Returns true to go on, else false with *st
 * the refusal's step.
 */
static bool take_plain_target(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *err, *m = http1_method(c->client.http);
	int cut = (int)(ulen > 200 ? 200 : ulen);

	if (c->orig != NULL && ulen > 0 &&
	    (url[0] == '/' || (ulen == 1 && url[0] == '*' && http1_method_is(c->client.http, "OPTIONS"))))
		return conn_intercept_target(c, url, ulen, st);
	if ((err = conn_target_absolute(c, url, ulen)) != NULL) {
		*st = conn_refuse(c, err == conn_target_nomem ? 503 : 400, NULL, "request", NULL,
				  "passavant: %s %.*s: %s", m, cut, url, err);
		return false;
	}
	c->ex.have_target = true;
	return true;
}

/*
 * What clients send, without parsing: the target's host as it was
 * normalised (a name or an IPv4 address, which normalise to themselves),
 * alone when the port is 443, or with ":" and the port in decimal. True
 * only where the parse below says the same; false: not this form.
 */
static bool names_target_as_normalised(const char *v, size_t vlen, const struct conn_target *t)
{
	size_t hlen = strlen(t->host), i;
	unsigned port = 0;

	if (t->is_ipv6 || hlen == 0 || vlen < hlen || memcmp(v, t->host, hlen) != 0)
		return false;
	if (vlen == hlen)
		return t->port == 443;
	if (v[hlen] != ':' || vlen - hlen < 2 || vlen - hlen > 6 || v[hlen + 1] == '0')
		return false;
	for (i = hlen + 1; i < vlen; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		port = port * 10 + (unsigned)(v[i] - '0');
	}
	return port == t->port;
}

/*
 * Whether a Host field value names the CONNECT target t: "host[:port]" or
 * "[v6][:port]", the port 443 when absent, the host normalised
 * (target_parse_connect(); a value without a port is parsed again with
 * ":443", which changes nothing for one that fails otherwise).
 */
static bool names_target_parsed(const char *v, size_t vlen, const struct conn_target *t)
{
	char buf[TARGET_AUTHORITY_MAX + 8];
	struct target h;

	if (vlen + sizeof(":443") > sizeof(buf))
		return false;
	if (target_parse_connect(v, vlen, &h) != NULL) {
		memcpy(buf, v, vlen);
		memcpy(buf + vlen, ":443", sizeof(":443"));
		if (target_parse_connect(buf, vlen + 4, &h) != NULL)
			return false;
	}
	return h.port == t->port && strcmp(h.host, t->host) == 0;
}

bool conn_host_names_target(const char *v, size_t vlen, const struct conn_target *t)
{
	return names_target_as_normalised(v, vlen, t) || names_target_parsed(v, vlen, t);
}

/* ---- the verdict of a request (HTTP/1.1 and HTTP/2) ---------------------- */

/* How much of a value a reason shows. */
static int cut200(size_t len)
{
	return (int)(len > 200 ? 200 : len);
}

/* The refusal into v; returns false (the request is refused). */
static bool PRINTF(5, 6) refuse_with(struct verdict *v, int status, const char *xerr, const char *rule,
				     const char *fmt, ...)
{
	va_list ap;

	v->status = status;
	v->xerr = xerr;
	v->rule = rule;
	va_start(ap, fmt);
	(void)vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	return false;
}

/* "GET https://host/path" (inside a tunnel) or "GET http://host/path" for
 * reasons: what conn_what() and h2s_what() say of a request whose target
 * passed (never redacted: a real value was refused before). */
static const char *facts_what(const struct req_facts *f, char *buf, size_t len)
{
	(void)snprintf(buf, len, "%.*s%s %s://%s%s%.*s", CONN_METHOD_CUT(f->method), f->method,
		       CONN_METHOD_MORE(f->method), f->tunnel ? "https" : "http", f->tgt->authority,
		       f->path_len > 0 && f->path[0] == '?' ? "/" : "", cut200(f->path_len), f->path);
	return buf;
}

/*
 * TRACE and TRACK (every request, once its target is known: a plain
 * request's first pass has none); inside a tunnel CONNECT, then the
 * origin form (or "*" for OPTIONS), the host and port staying the
 * tunnel's. True to go on.
 */
static bool judge_form(const struct req_facts *f, struct verdict *v)
{
	const char *m = f->method, *p = f->path != NULL ? f->path : "(no :path)";

	/* RFC 9112 and 9113 targets have no fragment, and servers read what
	 * follows a '#' differently: Go's ParseRequestURI keeps it in the
	 * query, so "/x?a#&_method=DELETE" was a DELETE to a Go service
	 * while the override judge stopped at the '#' (round 36 of the
	 * attack, F2). Refused everywhere, as the absolute form already is,
	 * once the target is known (a plain request's first pass has none:
	 * its audit line then names the host). */
	if (f->tgt == NULL)
		return true;
	/* TRACE and TRACK once the target is known too, so that the audit
	 * line of an intercepted or plain one names its host and port
	 * (round 36, N1: "host":null) */
	if (strcmp(m, "TRACE") == 0 || strcmp(m, "TRACK") == 0)
		return refuse_with(v, 405, NULL, NULL, "passavant: %s refused: method not allowed through the proxy", m);
	if (f->path != NULL && memchr(f->path, '#', f->path_len) != NULL) {
		char w[512];

		return refuse_with(v, 400, NULL, NULL,
				   "passavant: %s: a request target with a fragment (#) is refused: servers read "
				   "what follows it differently (part of the query to some), so it cannot be "
				   "decided; send the target without it",
				   facts_what(f, w, sizeof(w)));
	}
	if (!f->tunnel)
		return true;
	if (strcmp(m, "CONNECT") == 0)
		return refuse_with(v, 400, NULL, NULL, "passavant: CONNECT inside the TLS tunnel to %s:%u refused",
				   f->tgt->host, (unsigned)f->tgt->port);
	if (f->path == NULL || !((f->path_len > 0 && p[0] == '/') ||
				 (f->path_len == 1 && p[0] == '*' && strcmp(m, "OPTIONS") == 0)))
		return refuse_with(v, 400, NULL, NULL,
				   "passavant: %s %.*s: a request inside a tunnel must have an origin-form target", m,
				   cut200(f->path != NULL ? f->path_len : strlen(p)), p);
	v->form_ok = true;
	return true;
}

/*
 * One Host field at most (RFC 9112 §3.2.2: with an absolute-form target
 * the proxy replaces Host with the URL's authority; two are ambiguous).
 * Inside a terminated tunnel, :authority and Host (when sent) and SNI
 * (when sent) must name the tunnel's target (421), because the policy
 * decided that target and the leaf names it. The rule a 421 names is the
 * check itself, not the allow rule the tunnel was opened by (which did
 * not refuse anything). True to go on.
 */
static bool judge_host(const struct req_facts *f, struct verdict *v)
{
	const char *bad = NULL;
	size_t blen = 0;
	char w[512];

	if (f->nhost > 1)
		return refuse_with(v, 400, NULL, NULL, "passavant: %s: more than one Host field",
				   facts_what(f, w, sizeof(w)));
	if (!f->tunnel)
		return true;
	if (f->authority != NULL && !conn_host_names_target(f->authority, strlen(f->authority), f->tgt)) {
		bad = f->authority;
		blen = strlen(bad);
	} else if (f->host != NULL && !conn_host_names_target(f->host, f->host_len, f->tgt)) {
		bad = f->host;
		blen = f->host_len;
	}
	if (bad != NULL)
		return refuse_with(v, 421, NULL, f->intercepted ? CONN_RULE_HOST_INTERCEPT : CONN_RULE_HOST_TUNNEL,
				   "passavant: %s: Host %.*s does not name the %s %s:%u", facts_what(f, w, sizeof(w)),
				   cut200(blen), bad, f->intercepted ? "intercepted target" : "CONNECT target",
				   f->tgt->host, (unsigned)f->tgt->port);
	if (f->sni_mismatch)
		return refuse_with(v, 421, NULL, CONN_RULE_SNI,
				   "passavant: %s: TLS server name %s does not name the CONNECT target %s:%u",
				   facts_what(f, w, sizeof(w)), f->sni, f->tgt->host, (unsigned)f->tgt->port);
	return true;
}

/* ---- method overrides: a request that names another method ------------ */

/*
 * A request can name a method other than its own, and many frameworks
 * (Rails, Laravel, Symfony, Express's method-override, ASP.NET, Google's
 * APIs) then act on that one: a GET or POST with X-HTTP-Method-Override:
 * DELETE is a DELETE to them. On a host with a method rule, each method
 * these name is judged against the same rule; the frameworks upper-case
 * it, as the loader does the rule's methods. A _method in the body is
 * read as the body streams (formmethod.c, conn_body_method_begin()).
 */
static const struct {
	const char *lower;  /* compared case-insensitively */
	const char *spelled; /* for reasons */
} override_fields[] = {
	{ "x-http-method-override", "X-HTTP-Method-Override" },
	{ "x-http-method", "X-HTTP-Method" },
	{ "x-method-override", "X-Method-Override" },
};

/* Whether name[0..n) is lower (of length n) in any case, with '_' for
 * '-': servers that map fields to CGI-style variables (HTTP_X_HTTP_...,
 * WEBrick, Puma, Rack) take X_HTTP_Method_Override for the dashed one. */
static bool override_name_is(const char *name, const char *lower, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = (char)tolower((unsigned char)name[i]);

		if (c != lower[i] && !(c == '_' && lower[i] == '-'))
			return false;
	}
	return true;
}

/* The decision of f's target under f's policy: the one kept for the
 * tunnel (made now when there is none yet), else a new one into *mine. */
static const struct policy_decision *decide_target(const struct req_facts *f, struct policy_decision *mine)
{
	struct host_decision *kept = f->tgt_decision;

	if (kept == NULL) {
		policy_decide(f->pol, f->tgt->host, f->tgt->port, mine);
		return mine;
	}
	if (!kept->valid) {
		policy_decide(f->pol, f->tgt->host, f->tgt->port, &kept->d);
		kept->valid = true;
	}
	return &kept->d;
}

/*
 * Ends an element: one that names a method the host's rule does not
 * allow refuses the request (403, the rule, what named it); an empty one
 * names none. True to go on. The element is reset for the next.
 */
static bool tok_judge(struct method_tok *t, const struct req_facts *f, struct verdict *v, const char *where)
{
	bool too_long;
	const char *mrule = NULL;
	struct policy_decision mine;
	char w[512];

	if (!method_tok_end(t, &too_long))
		return true;
	/* Longer than any method the rule can list: "" matches none, and
	 * still yields the deciding rule. */
	if (policy_decision_method_allowed(decide_target(f, &mine), too_long ? "" : t->m, &mrule))
		return true;
	if (mrule == NULL)
		mrule = "allowedMethods";
	return refuse_with(v, 403, "blocked-by-sandbox-runtime", mrule,
			   "passavant: %s refused by %s: %s names the method %s%s, which the rule does not allow",
			   facts_what(f, w, sizeof(w)), mrule, where, t->m, too_long ? "..." : "");
}

/* Each element of a field value's comma-separated list. True to go on. */
static bool judge_override_value(const struct req_facts *f, struct verdict *v, const char *where,
				 const char *val, size_t vlen)
{
	struct method_tok t = { .len = 0, .end = 0 };
	size_t i;

	for (i = 0; i < vlen; i++) {
		if (val[i] == ',') {
			if (!tok_judge(&t, f, v, where))
				return false;
		} else {
			method_tok_put(&t, (unsigned char)val[i]);
		}
	}
	return tok_judge(&t, f, v, where);
}

/* The byte of a query component at *i, %XX decoded and '+' a space (as
 * form decoders read it); *i moves past it. */
static unsigned char query_byte(const char *s, size_t end, size_t *i)
{
	unsigned char ch = (unsigned char)s[*i];
	int hi, lo;

	if (ch == '%' && *i + 2 < end && (hi = hex_digit((unsigned char)s[*i + 1])) >= 0 && (lo = hex_digit((unsigned char)s[*i + 2])) >= 0) {
		*i += 3;
		return (unsigned char)(hi << 4 | lo);
	}
	(*i)++;
	return ch == '+' ? ' ' : ch;
}

/* Whether the query parameter name s[from, to) is "_method" once
 * decoded, in any case, or "_method[...": PHP, Rack and qs read
 * _method[]=DELETE and _method[0]=DELETE as a list holding the method,
 * and a framework that takes a list's first element acts on it. Read as
 * PHP reads names: leading spaces dropped, '.' and ' ' taken for '_', a
 * NUL ending the name (" _method", ".method" and "_method%00x" are
 * $_GET['_method'] there). */
static bool is_method_param(const char *s, size_t from, size_t to)
{
	static const char want[] = "_method";
	size_t i = from, n = 0;
	bool lead = true;

	while (i < to) {
		unsigned char ch = query_byte(s, to, &i);

		/* leading blanks (PHP), '[' and ']' (Rack 2's normalize_params,
		 * \A[\[\]]*([^\[\]]+)\]*, reads "[_method]" as _method) */
		if (lead && (ch == ' ' || ch == '[' || ch == ']'))
			continue;
		lead = false;
		if (ch == '\0')
			break;
		if (ch >= 'A' && ch <= 'Z')
			ch = (unsigned char)(ch - 'A' + 'a');
		if (ch == '.' || ch == ' ')
			ch = '_';
		if (n == sizeof(want) - 1)
			return ch == '[' || ch == ']';
		if (ch != (unsigned char)want[n])
			return false;
		n++;
	}
	return n == sizeof(want) - 1;
}

/*
 * Every _method parameter of the query (from the first '?' to the end:
 * a target with a '#' was refused by judge_form(); split at '&' and ';'
 * as lenient parsers do): its value decoded, then judged as a field
 * value. True to go on.
 */
static bool judge_override_query(const struct req_facts *f, struct verdict *v)
{
	const char *s = f->path, *q;
	size_t end = f->path_len, i;

	if (s == NULL || (q = memchr(s, '?', f->path_len)) == NULL)
		return true;
	i = (size_t)(q - s) + 1;
	while (i < end) {
		size_t from = i, eq = i, stop;

		while (i < end && s[i] != '&' && s[i] != ';')
			i++;
		stop = i++;
		while (eq < stop && s[eq] != '=')
			eq++;
		if (eq < stop && is_method_param(s, from, eq)) {
			struct method_tok t = { .len = 0, .end = 0 };
			size_t k = eq + 1;

			while (k < stop) {
				unsigned char ch = query_byte(s, stop, &k);

				if (ch == ',') {
					if (!tok_judge(&t, f, v, "the query parameter _method"))
						return false;
				} else {
					method_tok_put(&t, ch);
				}
			}
			if (!tok_judge(&t, f, v, "the query parameter _method"))
				return false;
		}
	}
	return true;
}

/* Every method-override field (each occurrence, each list element), then
 * the query's _method parameters. True to go on. */
static bool judge_overrides(const struct req_facts *f, struct verdict *v)
{
	const char *name, *val;
	size_t nlen, vlen, i = 0, k;

	while (f->next_field != NULL && f->next_field(f->fields, &i, &name, &nlen, &val, &vlen)) {
		for (k = 0; k < ARRAY_LEN(override_fields); k++) {
			if (nlen != strlen(override_fields[k].lower) ||
			    !override_name_is(name, override_fields[k].lower, nlen))
				continue;
			if (!judge_override_value(f, v, override_fields[k].spelled, val, vlen))
				return false;
		}
	}
	return judge_override_query(f, v);
}

/* allowedDomains, then allowedMethods (and, on a host with a method rule,
 * the methods the request names besides its own), under the request's
 * policy. True to go on. */
static bool judge_policy(const struct req_facts *f, struct verdict *v)
{
	struct policy_decision mine;
	const struct policy_decision *d = decide_target(f, &mine);
	const char *mrule = NULL;
	char w[512];

	v->decided = true;
	v->rule = d->rule;
	v->restricted = d->method_restricted;
	if (d->verdict != POLICY_ALLOW)
		return refuse_with(v, 403, "blocked-by-sandbox-runtime", d->rule, "passavant: %s refused by %s",
				   facts_what(f, w, sizeof(w)), d->rule);
	if (!policy_decision_method_allowed(d, f->method, &mrule)) {
		if (mrule == NULL)
			mrule = "allowedMethods";
		return refuse_with(v, 403, "blocked-by-sandbox-runtime", mrule, "passavant: %s refused by %s",
				   facts_what(f, w, sizeof(w)), mrule);
	}
	return !d->method_restricted || judge_overrides(f, v);
}

/* An allowed request's verdict, so far. */
static void verdict_clear(struct verdict *v)
{
	v->status = 0;
	v->xerr = NULL;
	v->kind = "request";
	v->rule = NULL;
	v->decided = false;
	v->form_ok = false;
	v->restricted = false;
	v->reason[0] = '\0';
}

bool conn_verdict(const struct req_facts *f, struct verdict *v)
{
	verdict_clear(v);
	if (f->audit_down)
		return refuse_with(v, 503, AUDIT_DOWN_XERR, "audit", "passavant: %.*s%s refused: " AUDIT_DOWN_WHY,
				   CONN_METHOD_CUT(f->method), f->method, CONN_METHOD_MORE(f->method));
	if (!judge_form(f, v))
		return false;
	return f->tgt == NULL || (judge_host(f, v) && judge_policy(f, v));
}

void conn_verdict_real(struct verdict *v, const char *what, const char *cred, const char *where, char *rule,
		       size_t rule_len)
{
	(void)snprintf(rule, rule_len, "credentials %s: real value", cred != NULL ? cred : "?");
	verdict_clear(v);
	v->decided = true;
	(void)refuse_with(v, 403, "blocked-by-sandbox-runtime", rule,
			  "passavant: %s refused by %s: a real value of %s is on its way out in %s "
			  "(the sandbox should never hold one)",
			  what, rule, cred != NULL ? cred : "a masked credential", where);
}

void conn_verdict_sentinel(struct verdict *v, const char *what, const char *rule, const char *why)
{
	verdict_clear(v);
	v->decided = true;
	(void)refuse_with(v, 403, "blocked-by-sandbox-runtime", rule, "passavant: %s refused by %s: %s", what, rule,
			  why);
}

/* Whether a Content-Encoding value v[0..n) names no coding but identity
 * (each comma-separated element, blanks around it dropped, any case; an
 * empty one names none). */
static bool coding_identity(const char *v, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t from, to;

		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		from = i;
		while (i < n && v[i] != ',')
			i++;
		to = i++;
		while (to > from && (v[to - 1] == ' ' || v[to - 1] == '\t'))
			to--;
		if (to > from && !(to - from == 8 && strncasecmp(v + from, "identity", 8) == 0))
			return false;
	}
	return true;
}

/* formmethod's judge: arg is the request's policy decision. */
static bool body_method_allowed(const void *arg, const char *method, const char **rule)
{
	return policy_decision_method_allowed(arg, method, rule);
}

bool conn_body_method_begin(const struct req_facts *f, struct formmethod *fm, struct verdict *v)
{
	struct policy_decision mine;
	const struct policy_decision *d = decide_target(f, &mine);
	const char *name, *val, *ct = NULL, *mrule = NULL, *why;
	size_t nlen, vlen, ctlen = 0, i = 0;
	unsigned nct = 0;
	bool coded = false;
	char w[512];

	formmethod_off(fm);
	if (d->verdict != POLICY_ALLOW || !d->method_restricted)
		return true;
	while (f->next_field != NULL && f->next_field(f->fields, &i, &name, &nlen, &val, &vlen)) {
		if (nlen == 12 && strncasecmp(name, "content-type", 12) == 0 && nct++ == 0) {
			ct = val;
			ctlen = vlen;
		}
		if (nlen == 16 && strncasecmp(name, "content-encoding", 16) == 0 && !coding_identity(val, vlen))
			coded = true;
	}
	/* Servers read one of several differently (the first, the last,
	 * all joined with ", "): which one a framework parses cannot be
	 * told. */
	if (nct > 1) {
		why = "it has more than one Content-Type field (servers read different ones)";
	} else {
		switch (formmethod_begin(fm, ct, ctlen, body_method_allowed, &fm->d)) {
		case FM_ON:
			/* A coded body of a type read for a _method: Express's
			 * body-parser (gzip, deflate, br, by default), Apache's
			 * DEFLATE input filter before PHP and Jetty's
			 * GzipHandler decode it before the form is read; the
			 * proxy reads no coding. */
			if (coded) {
				why = "its body is coded (a Content-Encoding other than identity: servers decode "
				      "the body before reading its form or JSON; send it uncoded: an SDK's request "
				      "compression off, e.g. OTEL_EXPORTER_OTLP_COMPRESSION=none)";
				goto refuse;
			}
			fm->d = *d; /* the policy outlives the request (the connection's or the stream's reference) */
			return true;
		case FM_OFF:
			return true;
		case FM_UNREADABLE:
			break;
		case FM_CHARSET:
			why = "its Content-Type names a charset whose bytes are not ASCII's (UTF-16, EBCDIC, "
			      "ISO-2022-JP: a server decoding the form or JSON with it reads names the proxy "
			      "cannot) or an RFC 2231 charset*= (Django reads it, the proxy does not); send it "
			      "in UTF-8 with a plain charset=";
			goto refuse;
		}
		why = "its multipart Content-Type has no boundary, one longer than 70 bytes (RFC 2046), or "
		      "one servers may read differently (\"boundary\" twice; an RFC 2231 boundary*= Go reads; "
		      "a ',', ';', '\"', '\\' or blank in it)";
	}
refuse:
	formmethod_off(fm);
	(void)policy_decision_method_allowed(d, f->method, &mrule);
	if (mrule == NULL)
		mrule = "allowedMethods";
	v->decided = true;
	return refuse_with(v, 403, "blocked-by-sandbox-runtime", mrule,
			   "passavant: %s refused by %s: %s, so a _method in its body cannot be read",
			   facts_what(f, w, sizeof(w)), mrule, why);
}

void conn_verdict_body_method(struct verdict *v, const char *what, const struct formmethod *fm, const char *then)
{
	const char *rule = "allowedMethods", *where = "the body parameter _method";
	const char *m = formmethod_refused(fm, &rule, &where);

	verdict_clear(v);
	v->decided = true;
	(void)refuse_with(v, 403, "blocked-by-sandbox-runtime", rule,
			  "passavant: %s refused by %s: %s names the method %s, which the rule does not allow; %s",
			  what, rule, where, m != NULL ? m : "?", then);
}

/* req_facts.next_field of an HTTP/1.1 head: the parser's field i. */
static bool http1_next_field(const void *fields, size_t *i, const char **name, size_t *nlen, const char **val,
			     size_t *vlen)
{
	const http1_t *h = fields;

	if (*i >= http1_header_count(h))
		return false;
	http1_header(h, (*i)++, name, nlen, val, vlen);
	return true;
}

/* What the HTTP/1.1 head says of the request, for conn_verdict(): inside
 * a terminated tunnel the target is the tunnel's; plain HTTP's is not
 * parsed yet (tgt NULL). */
static void request_facts(conn_t *c, const char *url, size_t ulen, struct req_facts *f)
{
	const char *name;
	size_t nlen, hi;

	memset(f, 0, sizeof(*f));
	f->method = http1_method(c->client.http);
	f->path = url;
	f->path_len = ulen;
	f->tunnel = c->mode == CONN_MODE_TERMINATED;
	f->tgt = f->tunnel ? &c->tgt : NULL;
	f->intercepted = intercepted(c);
	f->sni_mismatch = c->sni_mismatch;
	f->sni = c->sni != NULL ? c->sni : "";
	f->nhost = http1_header_find(c->client.http, "host", &hi);
	if (f->nhost > 0)
		http1_header(c->client.http, hi, &name, &nlen, &f->host, &f->host_len);
	f->pol = pol(c);
	f->tgt_decision = f->tunnel ? &c->tun_decision : NULL;
	f->audit_down = proxy_audit_down(c->px);
	f->next_field = http1_next_field;
	f->fields = c->client.http;
}

/* Plain HTTP takes a maxTunnels slot (once a connection). True to go on,
 * else false with *st the refusal's step. */
static bool take_slot(conn_t *c, enum step *st)
{
	char w[512];

	if (c->slot)
		return true;
	if (!proxy_tunnel_acquire(c->px, policy_limits(pol(c))->max_tunnels)) {
		*st = conn_refuse(c, 503, "too-many-tunnels", "request", "limits: maxTunnels",
				  "passavant: %s refused: too many connections (maxTunnels %u)",
				  conn_what(c, w, sizeof(w)), policy_limits(pol(c))->max_tunnels);
		return false;
	}
	conn_slot_taken(c);
	return true;
}

/*
 * The verdict on an HTTP/1.1 request (conn_verdict()), answered with
 * conn_refuse(). Plain HTTP has its method judged before its target is
 * parsed (take_plain_target()), then the rest, then takes a slot. Inside
 * a tunnel the request's path is its target once its form passed.
 * *restricted says whether a method rule applies to the host. Returns
 * true to go on, else false with *st the refusal's step.
 */
static bool judge_request(conn_t *c, const char *url, size_t ulen, bool *restricted, enum step *st)
{
	struct req_facts f;
	struct verdict v;
	bool ok;

	request_facts(c, url, ulen, &f);
	ok = conn_verdict(&f, &v);
	if (ok && !f.tunnel) {
		if (!take_plain_target(c, url, ulen, st))
			return false;
		f.tgt = &c->tgt;
		f.path = c->tgt.path;
		f.path_len = c->tgt.path_len;
		ok = conn_verdict(&f, &v);
	}
	if (f.tunnel) {
		c->tgt.path = v.form_ok ? url : "";
		c->tgt.path_len = v.form_ok ? ulen : 0;
	}
	/* A body names a method too (a form's _method): read as it
	 * streams, on a host with a method rule (relay_request_body()). */
	if (ok && v.restricted && !http1_message_done(c->client.http)) {
		ok = conn_body_method_begin(&f, &c->ex.fm, &v);
		http1_refuse_trailers(c->client.http);
		if (formmethod_on(&c->ex.fm))
			http1_set_body_watch(c->client.http, formmethod_sink, &c->ex.fm);
	}
	if (!ok) {
		*st = refuse_verdict(c, &v);
		return false;
	}
	c->rule = v.rule;
	*restricted = v.restricted;
	return f.tunnel || take_slot(c, st);
}

/* Sends the prepared request: plain HTTP on the idle upstream kept for
 * the same host and port, else on a new connection. */
static enum step send_plain(conn_t *c)
{
	if (c->up.bev != NULL && c->up.reusable && !c->up.eof && c->up_port == c->tgt.port &&
	    c->up_host != NULL && strcmp(c->up_host, c->tgt.host) == 0) {
		c->ex.up_use = EX_UP_REUSED;
		return conn_send_request(c);
	}
	conn_drop_upstream(c);
	return conn_dial(c, CONN_UPSTREAM_CONNECTING);
}

/* Sends the prepared request inside a terminated tunnel: on the verified
 * upstream, reused while it keeps alive, re-dialled (with TLS) when not. */
static enum step send_inner(conn_t *c)
{
	if (c->up.bev == NULL || c->up.eof) {
		conn_drop_upstream(c);
		return conn_dial(c, CONN_UPSTREAM_CONNECTING);
	}
	if (c->up.reusable && c->up.tls_ready)
		c->ex.up_use = EX_UP_REUSED;
	if (!c->up.tls_ready) {
		/* The handshake started with the client's; up_tls_done()
		 * sends the request. */
		conn_set_state(c, CONN_UPSTREAM_CONNECTING);
		conn_arm_timer(c, PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS);
		return STEP_STOP;
	}
	return conn_send_request(c);
}

/*
 * The one pipeline of every HTTP request, plain (absolute form) or inside
 * a terminated tunnel (origin form, the CONNECT target fixed): TRACE and
 * TRACK refused, the target, Host (and SNI), allowedDomains and
 * allowedMethods, then the head prepared (masking) and sent.
 */
static enum step decide_request(conn_t *c, const char *url, size_t ulen)
{
	bool restricted = false;
	enum step st;

	if (!judge_request(c, url, ulen, &restricted, &st))
		return st;
	c->ex.req_done = http1_message_done(c->client.http);
	/* A WebSocket upgrade is relayed (SPEC §5) unless a method rule
	 * applies to the host: like a CONNECT, an opaque relay could not
	 * enforce it, so the Upgrade is then dropped as hop-by-hop and the
	 * upstream answers the plain request. Other upgrades (h2c, ...) would
	 * hide requests from the policy and are always dropped. */
	if (http1_upgrade(c->client.http) && c->ex.req_done && !restricted &&
	    is_websocket_upgrade(c->client.http))
		c->ex.kind = EX_KIND_UPGRADE;
	/* A body the upstream leaves unread (a GET handler that never
	 * reads one) would be read as the next request on a kept-alive
	 * connection: a DELETE inside a GET's body ran on a [GET] host, and
	 * only the GET was decided and audited (round 17 of the attack);
	 * round 18 sent it to an unrestricted name of the same server with
	 * "Host:" a restricted one. A request with a body goes with
	 * "Connection: close", its upstream connection never used again,
	 * on a host with a method rule, and on every host for every method
	 * but POST, PUT and PATCH, whose handlers read what they are sent:
	 * round 21 hid a DELETE in a PROPFIND's body, so the methods that
	 * keep their connection are named, not those that lose it. */
	c->ex.up_close = http1_has_body(c->client.http) &&
			 (restricted || !(http1_method_is(c->client.http, "POST") ||
					  http1_method_is(c->client.http, "PUT") ||
					  http1_method_is(c->client.http, "PATCH")));
	if (c->mode == CONN_MODE_TERMINATED && c->up_tls_err != NULL && c->up_tls_err[0] != '\0')
		return conn_refuse_up_tls(c);
	if (!conn_prepare_request(c, &st))
		return st;
	return c->mode == CONN_MODE_TERMINATED ? send_inner(c) : send_plain(c);
}

/*
 * SPEC §4.2: the sandbox should never hold a real value, so one on its
 * way out, to any host, means something leaked. Before any decision (a
 * refusal's reason could echo the target), the target and every header
 * field are searched for one, in every form the remask set knows, as
 * sent and with every %XX decoded; if one is there, the request is
 * refused with a 403 naming the credential, and its target is written
 * nowhere (c->ex.redact). Returns false when there is none (go on), else
 * true with *st the step the refusal (or a failure) returned.
 */
/*
 * A real value with its case changed in a target that is not in origin
 * form (round 17): a CONNECT's authority, an absolute URL (its host is a
 * name, and a 400 quotes the target whole, inside a tunnel too). Names
 * are case-insensitive, so a resolver or server takes them in any case,
 * and the exact search misses them. The credential, or NULL.
 */
static const char *target_names_real(conn_t *c, const char *url, size_t ulen)
{
	return ulen > 0 && url[0] != '/' ? proxy_real_in_name(c->px, url, ulen) : NULL;
}

/* The same in the Host field (a 421 quotes it). The credential, or NULL. */
static const char *host_field_real(conn_t *c)
{
	const char *name, *val;
	size_t hi, nlen, vlen;

	if (http1_header_find(c->client.http, "host", &hi) == 0)
		return NULL;
	http1_header(c->client.http, hi, &name, &nlen, &val, &vlen);
	return proxy_real_in_name(c->px, val, vlen);
}

static bool refuse_real_values(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *cred = NULL, *where = "the request target", *name = NULL, *text;
	size_t tlen;
	bool oom = false, in_header = false;
	struct verdict v;
	char w[512], rule[CONN_RULE_BYTES];
	int r;

	*st = STEP_CLOSED;
	if (c->mask == NULL && (c->mask = cmask_new(proxy_masks(c->px), &oom)) == NULL) {
		if (!oom)
			return false;
		conn_close(c, "out of memory checking a request head", true);
		return true;
	}
	/* One search over the target, names and values as the parser keeps
	 * them (one buffer); where it was is only looked up for the reason. */
	text = http1_head_text(c->client.http, &tlen);
	r = cmask_find_real(c->mask, text, tlen, &cred);
	if (r == 1 && cmask_find_real(c->mask, url, ulen, &name) == 0) {
		where = "a header";
		in_header = true;
	}
	if (r < 0) {
		conn_close(c, "out of memory checking a request head", true);
		return true;
	}
	if (r == 0) {
		if ((cred = target_names_real(c, url, ulen)) == NULL && (cred = host_field_real(c)) == NULL)
			return false;
		where = "a host name (its case changed)";
		in_header = false;
	} else if (in_header && target_names_real(c, url, ulen) != NULL) {
		/* the target holds it too, with its case changed: not
		 * parsed for the audit below */
		in_header = false;
	}
	c->ex.redact = true;
	if (http1_method_is(c->client.http, "CONNECT"))
		c->ex.kind = EX_KIND_CONNECT;
	if (!terminated(c)) {
		/* The host, for the audit, only when the value sits in a
		 * header: in the target it may be in the authority, and the
		 * normalised host (lower case) would no longer match it. */
		c->ex.have_target = in_header &&
				 (c->ex.kind == EX_KIND_CONNECT ? conn_target_connect(c, url, ulen)
					    : conn_target_absolute(c, url, ulen)) == NULL;
	}
	conn_verdict_real(&v, conn_what(c, w, sizeof(w)), cred, where, rule, sizeof(rule));
	/* The rule outlives this call (c->rule, the audit line). */
	v.rule = conn_set_mask_rule(c, "%s", rule);
	v.kind = refusal_kind(c);
	*st = refuse_verdict(c, &v);
	return true;
}

/*
 * Inside a tunnel that carries plain HTTP (tunnel_plain()), as inside a
 * terminated one: the origin form (or "*" for OPTIONS), no CONNECT. The
 * CONNECT's host and port are the destination; an absolute form naming
 * another, or a CONNECT in the tunnel, went there (round 31 of the
 * attack: decided under its own host, while the tunnel's audit line
 * named the CONNECT's). True to go on, else false with *st the 400.
 */
static bool plain_tunnel_form(conn_t *c, const char *url, size_t ulen, enum step *st)
{
	const char *m = http1_method(c->client.http);
	int cut = (int)(ulen > 200 ? 200 : ulen);

	if (http1_method_is(c->client.http, "CONNECT")) {
		*st = conn_refuse(c, 400, NULL, "request", NULL,
				  "passavant: CONNECT %.*s inside the tunnel to %s:%u refused", cut, url, c->orig->name,
				  (unsigned)c->orig->port);
		return false;
	}
	if (ulen > 0 && (url[0] == '/' || (ulen == 1 && url[0] == '*' && http1_method_is(c->client.http, "OPTIONS"))))
		return true;
	*st = conn_refuse(c, 400, NULL, "request", NULL,
			  "passavant: %s %.*s: a request inside a tunnel must have an origin-form target", m, cut, url);
	return false;
}

/* A complete head is in client.http: decide what to do with it. */
enum step conn_decide(conn_t *c)
{
	const char *url;
	size_t ulen;

	conn_set_state(c, CONN_DECIDE);
	conn_now(&c->ex.t0);
	/* Each request is decided under the current policy: a SIGHUP
	 * reload applies from the next request on (live tunnels keep the
	 * policy they were decided with). */
	conn_use_policy(c);
	if (c->mask != NULL)
		cmask_begin_request(c->mask);
	url = http1_url(c->client.http, &ulen);
	if (proxy_masks(c->px) != NULL) {
		enum step st;

		if (refuse_real_values(c, url, ulen, &st))
			return st;
	}
	if (c->orig != NULL && c->orig->tunnel) {
		enum step st;

		if (!plain_tunnel_form(c, url, ulen, &st))
			return st;
	}
	if (c->mode != CONN_MODE_TERMINATED && http1_method_is(c->client.http, "CONNECT"))
		return decide_connect(c, url, ulen);
	return decide_request(c, url, ulen);
}

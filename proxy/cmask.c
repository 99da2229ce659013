/*
 * cmask.c - credential masking on one connection: see cmask.h.
 */
#include "cmask.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../policy/policy.h"

/* One direction of body substitution. */
struct cdir {
	cmask_t *m;              /* back pointer (sink argument is the dir) */
	enum cmask_dir d;
	mask_stream_t *st;       /* stream on set, or NULL */
	const mask_set_t *set;   /* set st runs on */
	struct mask_outbound ob; /* CMASK_OUT: eligibility of the body set */
	struct evbuffer *out;    /* substituted (and framed) bytes to pass on */
	struct evbuffer *chunk;  /* chunked: substituted data not yet framed */
	bool on;                 /* the current message is being substituted */
	bool chunked;            /* re-frame as chunks */
	bool release;            /* inbound: the tail was released, send it all */
};

struct cmask {
	mask_table_t *t;       /* the session's table (not owned) */
	size_t npairs;         /* values: pairs of every set */
	size_t ncreds;         /* credentials */
	uint64_t *counts;      /* [npairs] scratch for one location */
	unsigned char *inj;    /* [ncreds] injected on the current request */
	long body_left;        /* credential of a sentinel left in a body, or -1 */
	uint64_t remasked;     /* real values turned into sentinels */
	struct cdir dir[2];
	char rule[POLICY_HOST_MAX + 96]; /* rule string of the last refusal */
};

cmask_t *cmask_new(mask_table_t *t, bool *oom)
{
	cmask_t *m;
	int i;

	*oom = false;
	if (mask_table_value_count(t) == 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		goto fail;
	m->t = t;
	m->npairs = mask_table_value_count(t);
	m->ncreds = mask_table_cred_count(t);
	m->counts = calloc(m->npairs, sizeof(*m->counts));
	m->inj = calloc(m->ncreds > 0 ? m->ncreds : 1, 1);
	if (m->counts == NULL || m->inj == NULL)
		goto fail;
	for (i = 0; i < 2; i++) {
		m->dir[i].m = m;
		m->dir[i].d = (enum cmask_dir)i;
		m->dir[i].out = evbuffer_new();
		m->dir[i].chunk = evbuffer_new();
		if (m->dir[i].out == NULL || m->dir[i].chunk == NULL)
			goto fail;
	}
	m->body_left = -1;
	return m;
fail:
	*oom = true;
	cmask_free(m);
	return NULL;
}

void cmask_free(cmask_t *m)
{
	int i;

	if (m == NULL)
		return;
	for (i = 0; i < 2; i++) {
		mask_stream_free(m->dir[i].st);
		if (m->dir[i].out != NULL)
			evbuffer_free(m->dir[i].out);
		if (m->dir[i].chunk != NULL)
			evbuffer_free(m->dir[i].chunk);
	}
	free(m->counts);
	free(m->inj);
	free(m);
}

void cmask_wipe_drain(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	unsigned char *p;

	if (n == 0)
		return;
	if ((p = evbuffer_pullup(b, -1)) != NULL)
		explicit_bzero(p, n);
	(void)evbuffer_drain(b, n);
}

void cmask_begin_request(cmask_t *m)
{
	int i;

	memset(m->inj, 0, m->ncreds > 0 ? m->ncreds : 1);
	m->body_left = -1;
	m->remasked = 0;
	for (i = 0; i < 2; i++) {
		struct cdir *d = &m->dir[i];

		d->on = false;
		if (d->st != NULL)
			mask_stream_reset(d->st);
		cmask_wipe_drain(d->out);
		cmask_wipe_drain(d->chunk);
	}
}

bool cmask_inject_host(cmask_t *m, const char *host, uint16_t port)
{
	static const unsigned where[] = {INJECT_HEADER, INJECT_QUERY, INJECT_BODY};
	struct mask_outbound ob;
	size_t i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (mask_table_outbound(m->t, host, port, true, where[i], &ob) == 0 && ob.any)
			return true;
	return false;
}

/* Where a refused sentinel went, for reasons. */
static const char *where_name(unsigned where)
{
	switch (where) {
	case INJECT_QUERY:
		return "the request target";
	case INJECT_BODY:
		return "the body";
	default:
		return "a header";
	}
}

/*
 * Why pair i may not be injected at `where` towards host:port: plain HTTP
 * without allowPlaintextInject, a place injectIn does not list, or a host
 * outside injectHosts. Fills m->rule; returns it.
 */
static const char *refusal_rule(cmask_t *m, size_t pair, uint32_t cred, const char *host,
				uint16_t port, bool verified, unsigned where)
{
	static const unsigned all[] = {INJECT_HEADER, INJECT_QUERY, INJECT_BODY};
	const char *name = mask_table_cred_name(m->t, cred);
	const char *why = "injectHosts";
	struct mask_outbound ob;
	size_t k;

	if (!verified && mask_table_outbound(m->t, host, port, true, where, &ob) == 0 &&
	    pair < ob.npairs && ob.inject[pair]) {
		why = "allowPlaintextInject";
	} else {
		for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			if (mask_table_outbound(m->t, host, port, true, all[k], &ob) == 0 &&
			    pair < ob.npairs && ob.inject[pair]) {
				why = "injectIn";
				break;
			}
		}
	}
	if (strcmp(why, "allowPlaintextInject") == 0)
		(void)snprintf(m->rule, sizeof(m->rule), "credentials.allowPlaintextInject (%s)",
			       name != NULL ? name : "?");
	else
		(void)snprintf(m->rule, sizeof(m->rule), "credentials %s: %s", name != NULL ? name : "?",
			       why);
	return m->rule;
}

/*
 * After one location was substituted with ob: records injected
 * credentials; returns the first pair whose sentinel may not go there, or
 * -1.
 */
static long settle(cmask_t *m, const struct mask_outbound *ob)
{
	long bad = -1;
	size_t i;

	for (i = 0; i < ob->npairs && i < m->npairs; i++) {
		if (m->counts[i] == 0)
			continue;
		if (ob->inject[i]) {
			if (ob->cred[i] < m->ncreds)
				m->inj[ob->cred[i]] = 1;
		} else if (bad < 0) {
			bad = (long)i;
		}
	}
	return bad;
}

static void clear_counts(cmask_t *m)
{
	memset(m->counts, 0, m->npairs * sizeof(*m->counts));
}

/* Ends of the line starting at p (CRLF-terminated, inside [p, end)). */
static char *line_end(char *p, char *end)
{
	char *q = memchr(p, '\r', (size_t)(end - p));

	return q != NULL ? q : end;
}

int cmask_request_head(cmask_t *m, struct evbuffer *head, const char *host, uint16_t port,
		       bool verified, char *reason, size_t reasonlen, const char **rule)
{
	struct mask_outbound q, h;
	size_t len = evbuffer_get_length(head), total;
	char *buf, *end, *p, *le, *sp1, *sp2;
	unsigned where = INJECT_HEADER;
	long bad = -1;
	const struct mask_outbound *badob = NULL;

	*rule = NULL;
	if (len == 0)
		return 0;
	buf = (char *)evbuffer_pullup(head, -1);
	if (buf == NULL)
		goto oom;
	end = buf + len;
	if (mask_table_outbound(m->t, host, port, verified, INJECT_QUERY, &q) < 0 ||
	    mask_table_outbound(m->t, host, port, verified, INJECT_HEADER, &h) < 0)
		goto oom;
	/* Request line: METHOD SP target SP HTTP/1.x */
	le = line_end(buf, end);
	sp1 = memchr(buf, ' ', (size_t)(le - buf));
	sp2 = le;
	while (sp2 > buf && sp2[-1] != ' ')
		sp2--;
	if (sp1 != NULL && sp2 - 1 > sp1) {
		clear_counts(m);
		if (mask_replace_inplace(q.set, sp1 + 1, (size_t)(sp2 - 1 - (sp1 + 1)), m->counts,
					 &total) < 0)
			goto oom;
		if (total > 0 && (bad = settle(m, &q)) >= 0) {
			badob = &q;
			where = INJECT_QUERY;
		}
	}
	/* Fields: "Name: value" lines up to the empty line. */
	for (p = le + 2; bad < 0 && p < end && *p != '\r'; p = le + 2) {
		char *colon, *v;
		size_t vlen;
		int br = 1;

		le = line_end(p, end);
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon == NULL)
			continue;
		v = colon + 1;
		while (v < le && (*v == ' ' || *v == '\t'))
			v++;
		vlen = (size_t)(le - v);
		if (colon - p == 4 && strncasecmp(p, "host", 4) == 0) {
			/* The authority the policy decided: never substituted;
			 * a sentinel there goes nowhere. */
			long cred = mask_table_find_sentinel(m->t, p, (size_t)(le - p));

			if (cred >= 0) {
				const char *name = mask_table_cred_name(m->t, (size_t)cred);

				(void)snprintf(m->rule, sizeof(m->rule), "credentials %s: injectIn",
					       name != NULL ? name : "?");
				*rule = m->rule;
				(void)snprintf(reason, reasonlen,
					       "the sentinel of %s may not be sent to %s:%u in the host name",
					       name != NULL ? name : "a masked credential", host,
					       (unsigned)port);
				cmask_wipe_drain(head);
				return 1;
			}
			continue;
		}
		clear_counts(m);
		if (colon - p == 13 && strncasecmp(p, "authorization", 13) == 0 && vlen > 6 &&
		    strncasecmp(v, "basic ", 6) == 0) {
			/* The decoded user:password (git's x-access-token:TOKEN). */
			br = mask_basic_replace(h.set, v + 6, vlen - 6, m->counts, &total);
			if (br < 0)
				goto oom;
		}
		/* The whole field: a sentinel in a name goes nowhere either. */
		if (mask_replace_inplace(h.set, p, (size_t)(le - p), m->counts, &total) < 0)
			goto oom;
		if ((bad = settle(m, &h)) >= 0)
			badob = &h;
	}
	if (bad < 0)
		return 0;
	{
		uint32_t cred = badob->cred[bad];
		const char *name = mask_table_cred_name(m->t, cred);

		*rule = refusal_rule(m, (size_t)bad, cred, host, port, verified, where);
		(void)snprintf(reason, reasonlen, "the sentinel of %s may not be sent to %s:%u in %s",
			       name != NULL ? name : "a masked credential", host, (unsigned)port,
			       where_name(where));
	}
	cmask_wipe_drain(head);
	return 1;
oom:
	cmask_wipe_drain(head);
	errno = ENOMEM;
	return -1;
}

int cmask_response_head(cmask_t *m, struct evbuffer *buf, size_t from)
{
	size_t len = evbuffer_get_length(buf), total = 0;
	unsigned char *p;

	if (from >= len)
		return 0;
	p = evbuffer_pullup(buf, -1);
	if (p == NULL)
		return -1;
	if (mask_replace_inplace(mask_table_inbound_set(m->t), p + from, len - from, NULL, &total) < 0)
		return -1;
	m->remasked += total;
	return 0;
}

int cmask_body_begin(cmask_t *m, enum cmask_dir dd, const char *host, uint16_t port, bool verified,
		     bool chunked)
{
	struct cdir *d = &m->dir[dd];
	const mask_set_t *set;

	if (dd == CMASK_OUT) {
		if (host == NULL ||
		    mask_table_outbound(m->t, host, port, verified, INJECT_BODY, &d->ob) < 0)
			return -1;
		set = d->ob.set;
	} else {
		set = mask_table_inbound_set(m->t);
	}
	if (d->st != NULL && d->set != set) {
		mask_stream_free(d->st);
		d->st = NULL;
	}
	if (d->st == NULL) {
		d->st = mask_stream_new(set);
		if (d->st == NULL)
			return -1;
		d->set = set;
	} else {
		mask_stream_reset(d->st);
	}
	d->on = true;
	d->chunked = chunked;
	d->release = false;
	return 0;
}

void *cmask_sink_arg(cmask_t *m, enum cmask_dir d)
{
	return &m->dir[d];
}

struct evbuffer *cmask_out(cmask_t *m, enum cmask_dir d)
{
	return m->dir[d].out;
}

int cmask_body_sink(void *arg, const char *data, size_t len)
{
	struct cdir *d = arg;

	if (!d->on)
		return -1;
	d->release = false;
	return mask_stream_feed(d->st, data, len, d->chunked ? d->chunk : d->out);
}

int cmask_body_take(cmask_t *m, enum cmask_dir dd, struct evbuffer *src, size_t n)
{
	struct cdir *d = &m->dir[dd];

	if (!d->on)
		return -1;
	if (d->chunked) {
		/* The sink already took the decoded spans. */
		return evbuffer_drain(src, n);
	}
	d->release = false;
	return mask_stream_feed_buffer(d->st, src, n, d->out);
}

int cmask_tunnel_begin(cmask_t *m)
{
	struct cdir *d = &m->dir[CMASK_OUT];

	/* A host that does not normalise is eligible for nothing: every pair
	 * maps a sentinel to itself. Nothing is ever injected in a tunnel. */
	if (mask_table_outbound(m->t, "", 0, false, INJECT_HEADER, &d->ob) < 0)
		return -1;
	if (d->st != NULL && d->set != d->ob.set) {
		mask_stream_free(d->st);
		d->st = NULL;
	}
	if (d->st == NULL && (d->st = mask_stream_new(d->ob.set)) == NULL)
		return -1;
	d->set = d->ob.set;
	mask_stream_reset(d->st);
	d->on = true;
	d->chunked = false;
	d->release = false;
	return 0;
}

int cmask_tunnel_out(cmask_t *m, struct evbuffer *src, size_t n, const char **cred)
{
	struct cdir *d = &m->dir[CMASK_OUT];
	size_t i;

	*cred = NULL;
	if (!d->on || mask_stream_feed_buffer(d->st, src, n, d->out) < 0)
		return -1;
	if (mask_stream_total(d->st) == 0)
		return 0;
	for (i = 0; i < d->ob.npairs; i++) {
		if (mask_stream_count(d->st, i) > 0) {
			*cred = mask_table_cred_name(m->t, d->ob.cred[i]);
			break;
		}
	}
	(void)evbuffer_drain(d->out, evbuffer_get_length(d->out));
	return 1;
}

int cmask_stream_in(cmask_t *m, struct evbuffer *src, size_t n)
{
	struct cdir *d = &m->dir[CMASK_IN];

	if (!d->on)
		return -1;
	d->release = false;
	return mask_stream_feed_buffer(d->st, src, n, d->out);
}

/* Chunked: frames the first n bytes of d->chunk as one chunk into out. */
static int frame_n(struct cdir *d, size_t n)
{
	if (n == 0)
		return 0;
	if (evbuffer_add_printf(d->out, "%zx\r\n", n) < 0 ||
	    evbuffer_remove_buffer(d->chunk, d->out, n) != (int)n || evbuffer_add(d->out, "\r\n", 2) < 0)
		return -1;
	return 0;
}

int cmask_ready(cmask_t *m, enum cmask_dir dd, size_t *n)
{
	struct cdir *d = &m->dir[dd];
	struct evbuffer *raw = d->chunked ? d->chunk : d->out;
	size_t pending, keep = 0, go;

	*n = evbuffer_get_length(d->out);
	if (!d->on) {
		/* Message over: cmask_body_end() framed everything. */
		return 0;
	}
	if (dd == CMASK_IN && !d->release) {
		/*
		 * Hold the last maxlen - 1 bytes of what the upstream sent:
		 * the stream itself holds those that could begin a real value,
		 * the rest waits here. The amount depends only on how many
		 * bytes came, never on whether they match, so neither timing
		 * nor chunk sizes tell the sandbox that its bytes begin a real
		 * value (which would let it guess one byte at a time).
		 */
		size_t k = mask_set_maxlen(d->set), held = mask_stream_held(d->st);

		k = k > 0 ? k - 1 : 0;
		keep = k > held ? k - held : 0;
	}
	pending = evbuffer_get_length(raw);
	go = pending > keep ? pending - keep : 0;
	if (!d->chunked) {
		*n = go;
		return 0;
	}
	if (frame_n(d, go) < 0)
		return -1;
	*n = evbuffer_get_length(d->out);
	return 0;
}

bool cmask_waiting(const cmask_t *m, enum cmask_dir dd)
{
	const struct cdir *d = &m->dir[dd];

	if (!d->on)
		return false;
	return mask_stream_held(d->st) > 0 ||
	       evbuffer_get_length(d->chunked ? d->chunk : d->out) > 0;
}

int cmask_release(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];

	if (!d->on)
		return 0;
	/* What is held is resolved as at the end of a message: a partial
	 * value goes as it is (the same bytes whether or not it begins a
	 * real value), and the stream starts afresh. */
	if (mask_stream_finish(d->st, d->chunked ? d->chunk : d->out) < 0)
		return -1;
	d->release = true;
	return 0;
}

int cmask_body_end(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];
	size_t i;

	if (!d->on)
		return 0;
	d->on = false;
	if (mask_stream_finish(d->st, d->chunked ? d->chunk : d->out) < 0)
		return -1;
	if (d->chunked && (frame_n(d, evbuffer_get_length(d->chunk)) < 0 ||
			   evbuffer_add(d->out, "0\r\n\r\n", 5) < 0))
		return -1;
	if (dd == CMASK_IN) {
		m->remasked += mask_stream_total(d->st);
		return 0;
	}
	for (i = 0; i < d->ob.npairs; i++) {
		if (mask_stream_count(d->st, i) == 0)
			continue;
		if (d->ob.inject[i]) {
			if (d->ob.cred[i] < m->ncreds)
				m->inj[d->ob.cred[i]] = 1;
		} else if (m->body_left < 0) {
			m->body_left = (long)d->ob.cred[i];
		}
	}
	return 0;
}

size_t cmask_injected(const cmask_t *m, const char **names, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < m->ncreds && n < max; i++)
		if (m->inj[i])
			names[n++] = mask_table_cred_name(m->t, i);
	return n;
}

uint64_t cmask_remasked(const cmask_t *m)
{
	return m->remasked;
}

const char *cmask_body_left(const cmask_t *m)
{
	return m->body_left >= 0 ? mask_table_cred_name(m->t, (size_t)m->body_left) : NULL;
}

size_t cmask_cred_count(const cmask_t *m)
{
	return m->ncreds;
}

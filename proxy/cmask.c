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

/* Most WebSocket frame headers (and control frames) queued behind held
 * payload bytes before what is held is released anyway. */
#define CMASK_WS_QUEUE_MAX (64 * 1024)

/* WebSocket framing of one direction (RFC 6455 §5.2): the payloads of the
 * data frames are one continuous stream for the substituter, so a value
 * split across frames, fragments or messages is found; headers and
 * control frames wait in a queue and go out at their place. */
struct wsdir {
	unsigned char hb[14];  /* header of the frame being read */
	size_t hn;             /* bytes in hb */
	uint64_t left;         /* payload bytes of the current frame still to read */
	bool in_payload;       /* reading a payload (hb complete) */
	bool masked;           /* the current frame is masked (client to server) */
	unsigned char key[4];  /* its masking key */
	uint64_t koff;         /* key offset of the next payload byte */
	bool control;          /* the current frame is a control frame */
	unsigned char cf[14 + 125]; /* control frame collected whole: header + payload */
	size_t cfn;            /* bytes in cf */
	size_t cfh;            /* header bytes in cf */
	struct evbuffer *q;    /* queue of struct wsseg records (+ their bytes) */
	size_t qbytes;         /* header and control bytes in q */
};

/* A queued piece of output: literal bytes (a header, a control frame)
 * that follow, or n payload bytes taken from the substituted stream and
 * masked again with key from key offset koff. */
struct wsseg {
	uint64_t n;
	uint64_t koff;
	unsigned char key[4];
	unsigned char masked;
	unsigned char literal;
	unsigned char pad[2];
};

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
	bool ws;                 /* a WebSocket stream: framed by wsd */
	struct wsdir wsd;
};

static int frame_n(struct cdir *d, size_t n);
static int ws_emit(struct cdir *d, size_t go);

struct cmask {
	mask_table_t *t;       /* the session's table (not owned) */
	size_t npairs;         /* values: pairs of every set */
	size_t ncreds;         /* credentials */
	size_t ncounts;        /* pairs of the largest outbound set: values + forms */
	uint64_t *counts;      /* [ncounts] scratch for one location */
	unsigned char *inj;    /* [ncreds] injected on the current request */
	long body_left;        /* credential of a sentinel left in a body, or -1 */
	long ws_leak;          /* credential of a real value in an outbound control frame, or -1 */
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
	m->ncounts = m->npairs + mask_table_form_count(t);
	m->counts = calloc(m->ncounts, sizeof(*m->counts));
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
		if (m->dir[i].wsd.q != NULL) {
			cmask_wipe_drain(m->dir[i].wsd.q);
			evbuffer_free(m->dir[i].wsd.q);
		}
		explicit_bzero(m->dir[i].wsd.cf, sizeof(m->dir[i].wsd.cf));
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
		d->ws = false;
		if (d->st != NULL)
			mask_stream_reset(d->st);
		cmask_wipe_drain(d->out);
		cmask_wipe_drain(d->chunk);
		if (d->wsd.q != NULL)
			cmask_wipe_drain(d->wsd.q);
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
	memset(m->counts, 0, m->ncounts * sizeof(*m->counts));
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
		size_t tlen = (size_t)(sp2 - 1 - (sp1 + 1)), i;

		/* A sentinel spelled with escapes no encoder writes (%67hp_)
		 * is not substituted, but it is found with every %XX decoded
		 * (SPEC §4.2): refused where it may not go. */
		clear_counts(m);
		if (mask_table_sentinels_decoded(m->t, sp1 + 1, tlen, m->counts) < 0)
			goto oom;
		for (i = 0; i < q.npairs && i < m->npairs && bad < 0; i++)
			if (m->counts[i] != 0 && !q.inject[i])
				bad = (long)i;
		if (bad >= 0) {
			badob = &q;
			where = INJECT_QUERY;
		} else {
			clear_counts(m);
			if (mask_replace_inplace(q.set, sp1 + 1, tlen, m->counts, &total) < 0)
				goto oom;
			if (total > 0 && (bad = settle(m, &q)) >= 0) {
				badob = &q;
				where = INJECT_QUERY;
			}
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
		/* The whole field: a sentinel in a name goes nowhere either.
		 * Before the Basic decode: the header set also holds the
		 * base64 forms of real values (a real value going out), which
		 * the re-encoded user:password would now match. */
		if (mask_replace_inplace(h.set, p, (size_t)(le - p), m->counts, &total) < 0)
			goto oom;
		if (colon - p == 13 && strncasecmp(p, "authorization", 13) == 0 && vlen > 6 &&
		    strncasecmp(v, "basic ", 6) == 0) {
			/* The decoded user:password (git's x-access-token:TOKEN). */
			br = mask_basic_replace(h.set, v + 6, vlen - 6, m->counts, &total);
			if (br < 0)
				goto oom;
		}
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
	d->ws = false;
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
	cmask_wipe_drain(d->out);
	if ((*cred = cmask_leak(m, CMASK_OUT)) != NULL)
		return 2;
	for (i = 0; i < d->ob.npairs; i++) {
		if (mask_stream_count(d->st, i) > 0) {
			*cred = mask_table_cred_name(m->t, d->ob.cred[i]);
			break;
		}
	}
	return 1;
}

const char *cmask_leak(const cmask_t *m, enum cmask_dir dd)
{
	const struct cdir *d = &m->dir[dd];
	size_t k;

	if (dd != CMASK_OUT || d->st == NULL || mask_stream_total(d->st) == 0)
		return NULL;
	for (k = 0; k < d->ob.nforms; k++)
		if (mask_stream_count(d->st, d->ob.npairs + k) != 0)
			return mask_table_cred_name(
				m->t, mask_table_value_cred(m->t, d->ob.form_value[k]));
	return NULL;
}

int cmask_find_real(cmask_t *m, const void *buf, size_t len, const char **cred)
{
	long c;

	*cred = NULL;
	errno = 0;
	c = mask_table_find_real(m->t, buf, len);
	if (c < 0)
		return errno == ENOMEM ? -1 : 0;
	*cred = mask_table_cred_name(m->t, (size_t)c);
	return 1;
}

int cmask_body_cut(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];

	if (!d->on)
		return 0;
	d->on = false;
	if (dd == CMASK_IN)
		m->remasked += mask_stream_total(d->st);
	/* The hold-back may begin a real value: wiped, never sent. What
	 * waits in the output was resolved already and may go. */
	mask_stream_reset(d->st);
	if (d->chunked && frame_n(d, evbuffer_get_length(d->chunk)) < 0)
		return -1;
	/* Frames go as far as their payload came; what follows a cut
	 * payload is dropped with it. */
	if (d->ws && ws_emit(d, evbuffer_get_length(d->chunk)) < 0)
		return -1;
	if (d->ws && evbuffer_get_length(d->wsd.q) > 0) {
		cmask_wipe_drain(d->wsd.q);
		d->wsd.qbytes = 0;
	}
	return 0;
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
	struct evbuffer *raw = d->chunked || d->ws ? d->chunk : d->out;
	size_t pending, keep = 0, go;

	*n = evbuffer_get_length(d->out);
	if (!d->on) {
		/* Message over: cmask_body_end() framed everything. */
		return 0;
	}
	if ((dd == CMASK_IN || d->ws) && !d->release) {
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
	if (d->ws) {
		if (ws_emit(d, go) < 0)
			return -1;
		*n = evbuffer_get_length(d->out);
		return 0;
	}
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
	       evbuffer_get_length(d->chunked || d->ws ? d->chunk : d->out) > 0 ||
	       (d->ws && evbuffer_get_length(d->wsd.q) > 0);
}

int cmask_release(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];

	if (!d->on)
		return 0;
	/* What is held is resolved as at the end of a message: a partial
	 * value goes as it is (the same bytes whether or not it begins a
	 * real value), and the stream starts afresh. */
	if (mask_stream_finish(d->st, d->chunked || d->ws ? d->chunk : d->out) < 0)
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
	if (mask_stream_finish(d->st, d->chunked || d->ws ? d->chunk : d->out) < 0)
		return -1;
	if (d->ws && ws_emit(d, evbuffer_get_length(d->chunk)) < 0)
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

/* ------------------------------------------------------------------ */
/* WebSocket framing                                                    */
/* ------------------------------------------------------------------ */

/* Queues a record (and len literal bytes after it). 0 or -1. */
static int ws_queue(struct cdir *d, const struct wsseg *sg, const void *bytes, size_t len)
{
	if (evbuffer_add(d->wsd.q, sg, sizeof(*sg)) < 0 || (len > 0 && evbuffer_add(d->wsd.q, bytes, len) < 0))
		return -1;
	d->wsd.qbytes += len;
	return 0;
}

/*
 * Moves up to go substituted payload bytes (and the headers and control
 * frames queued between them) from d->chunk to d->out, in order. Payload
 * of a masked frame is masked again with its key, at its offset.
 */
static int ws_emit(struct cdir *d, size_t go)
{
	struct wsdir *w = &d->wsd;
	unsigned char tmp[4096];

	while (evbuffer_get_length(w->q) >= sizeof(struct wsseg)) {
		/* Records sit at any alignment in the queue: copied out, and
		 * back when a payload is only partly sent. */
		unsigned char *at = evbuffer_pullup(w->q, sizeof(struct wsseg));
		struct wsseg seg, *sg = &seg;
		size_t take;

		if (at == NULL)
			return -1;
		memcpy(&seg, at, sizeof(seg));
		if (sg->literal) {
			size_t len = (size_t)sg->n;

			if (evbuffer_drain(w->q, sizeof(*sg)) < 0 ||
			    evbuffer_remove_buffer(w->q, d->out, len) != (int)len)
				return -1;
			w->qbytes -= len;
			continue;
		}
		take = sg->n < go ? (size_t)sg->n : go;
		if (take == 0 && sg->n != 0)
			break;
		go -= take;
		if (!sg->masked) {
			if (take > 0 && evbuffer_remove_buffer(d->chunk, d->out, take) != (int)take)
				return -1;
		} else {
			size_t done = 0;

			while (done < take) {
				size_t k = take - done < sizeof(tmp) ? take - done : sizeof(tmp);

				if (evbuffer_remove(d->chunk, tmp, k) != (int)k)
					return -1;
				for (size_t i = 0; i < k; i++)
					tmp[i] ^= sg->key[(sg->koff + i) % 4];
				sg->koff += k;
				if (evbuffer_add(d->out, tmp, k) < 0)
					return -1;
				done += k;
			}
			explicit_bzero(tmp, sizeof(tmp));
		}
		sg->n -= take;
		if (sg->n != 0) {
			memcpy(at, &seg, sizeof(seg));
			break;
		}
		if (evbuffer_drain(w->q, sizeof(*sg)) < 0)
			return -1;
	}
	return 0;
}

/* A complete control frame in w->cf: unmasked, remasked (inbound: real ->
 * sentinel; outbound: counted, see cmask_leak()), masked again, queued. */
static int ws_control(cmask_t *m, struct cdir *d)
{
	struct wsdir *w = &d->wsd;
	unsigned char *pl = w->cf + w->cfh;
	size_t plen = w->cfn - w->cfh, total = 0;
	struct wsseg sg;

	for (size_t i = 0; w->masked && i < plen; i++)
		pl[i] ^= w->key[i % 4];
	memset(m->counts, 0, m->ncounts * sizeof(*m->counts));
	if (plen > 0 && mask_replace_inplace(d->set, pl, plen, m->counts, &total) < 0)
		return -1;
	if (d->d == CMASK_IN) {
		m->remasked += total;
	} else if (total > 0) {
		for (size_t k = 0; k < d->ob.nforms && m->ws_leak < 0; k++)
			if (m->counts[d->ob.npairs + k] != 0)
				m->ws_leak = (long)mask_table_value_cred(m->t, d->ob.form_value[k]);
	}
	for (size_t i = 0; w->masked && i < plen; i++)
		pl[i] ^= w->key[i % 4];
	memset(&sg, 0, sizeof(sg));
	sg.literal = 1;
	sg.n = w->cfn;
	if (ws_queue(d, &sg, w->cf, w->cfn) < 0)
		return -1;
	explicit_bzero(w->cf, sizeof(w->cf));
	w->cfn = 0;
	return 0;
}

/* Header bytes a frame needs, from its first two (0: not known yet). */
static size_t ws_hlen(const unsigned char *hb, size_t hn)
{
	size_t n = 2, l7;

	if (hn < 2)
		return 0;
	l7 = hb[1] & 0x7f;
	n += l7 == 126 ? 2 : l7 == 127 ? 8 : 0;
	n += (hb[1] & 0x80) ? 4 : 0;
	return n;
}

/* Takes a complete header from w->hb: payload length, key, kind. 0, or
 * -1 for a frame that breaks RFC 6455 (a control frame fragmented or over
 * 125 bytes). */
static int ws_header(struct cdir *d)
{
	struct wsdir *w = &d->wsd;
	const unsigned char *hb = w->hb;
	size_t l7 = hb[1] & 0x7f, p = 2;
	uint64_t len = l7;
	struct wsseg sg;

	if (l7 == 126) {
		len = (uint64_t)hb[2] << 8 | hb[3];
		p = 4;
	} else if (l7 == 127) {
		len = 0;
		for (int i = 0; i < 8; i++)
			len = len << 8 | hb[2 + i];
		p = 10;
	}
	w->masked = (hb[1] & 0x80) != 0;
	if (w->masked)
		memcpy(w->key, hb + p, 4);
	w->koff = 0;
	w->left = len;
	w->control = (hb[0] & 0x08) != 0;
	w->in_payload = true;
	if (w->control) {
		if (len > 125 || (hb[0] & 0x80) == 0)
			return -1;
		memcpy(w->cf, hb, w->hn);
		w->cfh = w->cfn = w->hn;
		return 0;
	}
	/* A data frame: its header, then its payload from the stream. */
	memset(&sg, 0, sizeof(sg));
	sg.literal = 1;
	sg.n = w->hn;
	if (ws_queue(d, &sg, hb, w->hn) < 0)
		return -1;
	memset(&sg, 0, sizeof(sg));
	sg.n = len;
	sg.masked = w->masked;
	memcpy(sg.key, w->key, 4);
	return ws_queue(d, &sg, NULL, 0);
}

int cmask_ws_begin(cmask_t *m)
{
	struct cdir *o = &m->dir[CMASK_OUT], *i = &m->dir[CMASK_IN];

	/* Outbound: nothing is injected into frames, real values are
	 * counted (cmask_tunnel_begin()'s set); inbound: remasked. */
	if (cmask_body_begin(m, CMASK_IN, NULL, 0, false, false) < 0 || cmask_tunnel_begin(m) < 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		struct cdir *d = k == 0 ? o : i;

		if (d->wsd.q == NULL && (d->wsd.q = evbuffer_new()) == NULL)
			return -1;
		cmask_wipe_drain(d->wsd.q);
		memset(d->wsd.hb, 0, sizeof(d->wsd.hb));
		d->wsd.hn = 0;
		d->wsd.in_payload = false;
		d->wsd.cfn = 0;
		d->wsd.qbytes = 0;
		d->ws = true;
	}
	m->ws_leak = -1;
	return 0;
}

int cmask_ws_feed(cmask_t *m, enum cmask_dir dd, struct evbuffer *src, size_t n)
{
	struct cdir *d = &m->dir[dd];
	struct wsdir *w = &d->wsd;
	unsigned char tmp[4096];

	if (!d->on || !d->ws)
		return -1;
	d->release = false;
	while (n > 0) {
		if (!w->in_payload) {
			size_t need = ws_hlen(w->hb, w->hn), k;

			if (need == 0)
				need = 2;
			k = need - w->hn < n ? need - w->hn : n;
			if (evbuffer_remove(src, w->hb + w->hn, k) != (int)k)
				return -1;
			w->hn += k;
			n -= k;
			if (w->hn < 2 || w->hn < ws_hlen(w->hb, w->hn))
				continue;
			if (ws_header(d) < 0)
				return 1;
			w->hn = 0;
		} else if (w->control) {
			size_t k = w->left < n ? (size_t)w->left : n;

			if (evbuffer_remove(src, w->cf + w->cfn, k) != (int)k)
				return -1;
			w->cfn += k;
			w->left -= k;
			n -= k;
		} else {
			size_t k = w->left < n ? (size_t)w->left : n;

			if (!w->masked) {
				if (k > 0 && mask_stream_feed_buffer(d->st, src, k, d->chunk) < 0)
					return -1;
			} else {
				size_t done = 0;

				while (done < k) {
					size_t c = k - done < sizeof(tmp) ? k - done : sizeof(tmp);

					if (evbuffer_remove(src, tmp, c) != (int)c)
						return -1;
					for (size_t i = 0; i < c; i++)
						tmp[i] ^= w->key[(w->koff + i) % 4];
					w->koff += c;
					if (mask_stream_feed(d->st, tmp, c, d->chunk) < 0) {
						explicit_bzero(tmp, sizeof(tmp));
						return -1;
					}
					done += c;
				}
				explicit_bzero(tmp, sizeof(tmp));
			}
			w->left -= k;
			n -= k;
		}
		if (w->in_payload && w->left == 0) {
			w->in_payload = false;
			if (w->control && ws_control(m, d) < 0)
				return -1;
		}
	}
	/* Many frames behind a held tail: what is held goes now, rather
	 * than the queue growing without bound. */
	if (w->qbytes > CMASK_WS_QUEUE_MAX && cmask_release(m, dd) < 0)
		return -1;
	return 0;
}

const char *cmask_ws_leak(const cmask_t *m)
{
	if (m->ws_leak >= 0)
		return mask_table_cred_name(m->t, (size_t)m->ws_leak);
	return cmask_leak(m, CMASK_OUT);
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

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
#include "formmethod.h"

/* Most bytes of WebSocket frame headers and control frames queued behind
 * held payload bytes, with the records that place them (struct wsseg),
 * besides one frame for each byte that may be held: past it the
 * connection is closed (cmask_ws_feed()). The records count:
 * counting only the frames' bytes let 32,000 empty frames queue 1.6 MB
 * of records on each connection (round 33 of the attack, 412 MB for 250
 * connections). */
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
	bool ext;              /* an extension was agreed: RSV bits may be set */
	unsigned char cf[14 + 125]; /* control frame collected whole: header + payload */
	size_t cfn;            /* bytes in cf */
	size_t cfh;            /* header bytes in cf */
	struct evbuffer *q;    /* queue of struct wsseg records (+ their bytes) */
	bool closed;           /* a close frame went by (RFC 6455 §5.5.1): the stream ended there */
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

/* One direction's framing and output around its body stream (the stream
 * itself is the exchange's, mask_exch_body_*()). */
struct cdir {
	cmask_t *m;              /* back pointer (sink argument is the dir) */
	enum cmask_dir d;
	struct evbuffer *out;    /* substituted (and framed) bytes to pass on */
	struct evbuffer *chunk;  /* chunked or WebSocket: substituted data not yet framed */
	bool chunked;            /* re-frame as chunks */
	bool release;            /* the tail was released, send it all */
	bool ws;                 /* a WebSocket stream: framed by wsd */
	bool lead_watch;         /* inbound from an inject host: its first bytes are looked at (lead_wide()) */
	bool wide;               /* they were UTF-16 or UTF-32's: the body is refused (cmask_in_refused()) */
	uint8_t nlead;           /* the body's first bytes seen, at most 4 */
	unsigned char lead[4];
	struct wsdir wsd;
};

static int frame_n(struct cdir *d, size_t n);
static int ws_emit(struct cdir *d, size_t go);

struct cmask {
	mask_exch_t *x;        /* the exchange state: heads, streams, figures */
	size_t ncreds;         /* credentials */
	bool lead;             /* some value's UTF-16 is no form the remask set knows: the first
				* bytes of an inject host's body are looked at (lead_wide()) */
	struct cdir dir[2];
	char rule[POLICY_HOST_MAX + 96]; /* rule string of the last refusal */
};

_Static_assert((int)CMASK_OUT == (int)MASK_OUT && (int)CMASK_IN == (int)MASK_IN,
	       "cmask directions are mask directions");

/* The exchange's direction for d. */
static enum mask_dir xd(enum cmask_dir d)
{
	return (enum mask_dir)d;
}

/* Where the stream of d writes: the framing queue, or straight out. */
static struct evbuffer *raw_out(struct cdir *d)
{
	return d->chunked || d->ws ? d->chunk : d->out;
}

/*
 * After a feed, a release or the end of an inbound body: when the fold
 * found a real value with its case changed, nothing more of the response
 * may go: what waits (unsent, framed or not) is wiped, and -1 with
 * EACCES tells the caller, which cuts the response (cmask_case_real()
 * names the credential). rc: the feed's own result, passed on.
 */
static int case_cut(cmask_t *m, struct cdir *d, int rc)
{
	if (rc != 0 || d->d != CMASK_IN || (mask_exch_body_case_real(m->x) == NULL && !d->wide))
		return rc;
	cmask_wipe_drain(raw_out(d));
	cmask_wipe_drain(d->out);
	if (d->ws)
		cmask_wipe_drain(d->wsd.q);
	errno = EACCES;
	return -1;
}

const char *cmask_range_note(char *buf, size_t cap, const char *host, uint16_t port)
{
	(void)snprintf(buf, cap,
		       "passavant: the request's range was not passed on to %s:%u, a host a credential is injected "
		       "towards (SPEC 4.3): the whole representation came back; fetch it without resuming",
		       host, (unsigned)port);
	return buf;
}

const char *cmask_case_real(const cmask_t *m)
{
	return mask_exch_body_case_real(m->x);
}

/* A byte of ASCII's printable range, or a blank a text begins with (tab,
 * CR, LF: pretty JSON's "{\n", a leading newline; review44p2): a text's
 * first characters. */
static bool printable(unsigned char b)
{
	return (b >= 0x20 && b < 0x7f) || b == '\t' || b == '\n' || b == '\r';
}

/*
 * Only for a table whose values are not all wide (mask_table_wide_forms():
 * one not ASCII, one over 4 KiB, the sets past their bound with them):
 * takes the first bytes of an inbound body of an inject host (up to 4 in
 * all, data[0..len) the next ones): true once they are UTF-16's or
 * UTF-32's, whatever the Content-Type said, or none: a byte order mark
 * (FE FF, FF FE, which UTF-32LE's FF FE 00 00 begins with, 00 00 FE FF),
 * or two printable ASCII characters (or tab, CR, LF) each with a NUL
 * after it (UTF-16LE) or before it (UTF-16BE). A real value in such a body is no byte string
 * the re-masker knows (its NUL-interleaved form), so the body is cut.
 */
static bool lead_wide(struct cdir *d, const unsigned char *data, size_t len)
{
	const unsigned char *l = d->lead;

	if (!d->lead_watch || d->wide)
		return d->wide;
	while (d->nlead < sizeof(d->lead) && len > 0)
		d->lead[d->nlead++] = *data++, len--;
	if (d->nlead >= 2 && ((l[0] == 0xfe && l[1] == 0xff) || (l[0] == 0xff && l[1] == 0xfe)))
		d->wide = true;
	if (d->nlead == 4 &&
	    ((l[0] == 0 && l[1] == 0 && l[2] == 0xfe && l[3] == 0xff) ||
	     (printable(l[0]) && l[1] == 0 && printable(l[2]) && l[3] == 0) ||
	     (l[0] == 0 && printable(l[1]) && l[2] == 0 && printable(l[3]))))
		d->wide = true;
	if (d->nlead == sizeof(d->lead))
		d->lead_watch = d->wide;
	return d->wide;
}

const char *cmask_in_refused(const cmask_t *m)
{
	return m->dir[CMASK_IN].wide ? "its body is UTF-16 or UTF-32 text (a byte order mark, or ASCII characters "
				       "between NULs, whatever its Content-Type says): a real value in it is no byte "
				       "string the re-masker knows, so the response was cut"
				     : NULL;
}

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
	m->ncreds = mask_table_cred_count(t);
	m->lead = !mask_table_wide_forms(t);
	if ((m->x = mask_exch_new(t)) == NULL)
		goto fail;
	for (i = 0; i < 2; i++) {
		m->dir[i].m = m;
		m->dir[i].d = (enum cmask_dir)i;
		m->dir[i].out = evbuffer_new();
		m->dir[i].chunk = evbuffer_new();
		if (m->dir[i].out == NULL || m->dir[i].chunk == NULL)
			goto fail;
	}
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
	mask_exch_free(m->x);
	for (i = 0; i < 2; i++) {
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
	free(m);
}

/* In place, chain by chain: a pullup would copy the bytes into a new
 * chain and free the old ones unwiped. */
void cmask_wipe_drain(struct evbuffer *b)
{
	struct evbuffer_iovec v;

	/* A socket bufferevent's output may have its front frozen (round
	 * 19: after EPIPE on a reused upstream); a drain then fails and the
	 * length never falls: unfrozen first, and a failed drain ends the
	 * loop rather than spinning for ever. */
	(void)evbuffer_unfreeze(b, 1);
	while (evbuffer_get_length(b) > 0) {
		if (evbuffer_peek(b, -1, NULL, &v, 1) < 1 || v.iov_len == 0) {
			(void)evbuffer_drain(b, evbuffer_get_length(b));
			return;
		}
		explicit_bzero(v.iov_base, v.iov_len);
		if (evbuffer_drain(b, v.iov_len) < 0)
			return;
	}
}

void cmask_begin_request(cmask_t *m)
{
	int i;

	mask_exch_begin(m->x);
	for (i = 0; i < 2; i++) {
		struct cdir *d = &m->dir[i];

		d->ws = false;
		cmask_wipe_drain(d->out);
		cmask_wipe_drain(d->chunk);
		if (d->wsd.q != NULL)
			cmask_wipe_drain(d->wsd.q);
	}
}

bool cmask_inject_host(cmask_t *m, const char *host, uint16_t port)
{
	return mask_exch_inject_host(m->x, host, port);
}

bool cmask_coding_scannable(const char *val, size_t len)
{
	while (len > 0 && (val[len - 1] == ' ' || val[len - 1] == '\t'))
		len--;
	return len == 0 || (len == 8 && strncasecmp(val, "identity", 8) == 0);
}

bool cmask_coding_field(const char *name, size_t len)
{
	/* "im": RFC 3229 delta encoding, asked for with A-IM (not sent to
	 * an inject host: http1.c write_fields(), h2req.c dropped()) and
	 * answered 226 with the manipulations applied, which no scan reads
	 * through (round 44 of the attack). */
	static const char *const names[] = {"content-encoding", "grpc-encoding", "connect-content-encoding", "im"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (len == strlen(names[i]) && strncasecmp(name, names[i], len) == 0)
			return true;
	return false;
}

static bool name_is(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && strncasecmp(name, want, nlen) == 0;
}

/* val[0..len) without its leading and trailing blanks. */
static void trim(const char **val, size_t *len)
{
	while (*len > 0 && ((*val)[*len - 1] == ' ' || (*val)[*len - 1] == '\t'))
		(*len)--;
	while (*len > 0 && ((*val)[0] == ' ' || (*val)[0] == '\t'))
		(*val)++, (*len)--;
}

void cmask_head_field(struct cmask_head *hc, const char *name, size_t nlen, const char *val, size_t vlen)
{
	if (name_is(name, nlen, "transfer-encoding")) {
		trim(&val, &vlen);
		if (!(vlen == 7 && strncasecmp(val, "chunked", 7) == 0))
			hc->transfer_coded = true;
	} else if (cmask_coding_field(name, nlen)) {
		if (!cmask_coding_scannable(val, vlen))
			hc->content_coded = true;
	} else if (name_is(name, nlen, "content-type")) {
		if (!formmethod_charsets_ascii(val, vlen))
			hc->charset = true;
		trim(&val, &vlen);
		/* multipart/byteranges: parts of a representation under any
		 * status (a prefix, as a reader taking the media type by one) */
		if (vlen >= 20 && strncasecmp(val, "multipart/byteranges", 20) == 0)
			hc->partial = true;
	} else if (name_is(name, nlen, "content-range")) {
		/* whatever its value or status: the body is a part, or none */
		hc->partial = true;
	}
}

enum cmask_head_verdict cmask_head_judge(const struct cmask_head *hc, int status, bool masked, bool identity,
					 bool body)
{
	if (!body)
		return CMASK_HEAD_PASS;
	if (masked && hc->transfer_coded)
		return CMASK_HEAD_TRANSFER;
	if (!identity)
		return CMASK_HEAD_PASS;
	if (hc->content_coded)
		return CMASK_HEAD_CODED;
	if (hc->charset)
		return CMASK_HEAD_CHARSET;
	if (status == 206)
		return CMASK_HEAD_PARTIAL;
	/* the same part under another status (a 200 with a Content-Range,
	 * multipart/byteranges): round 44 */
	if (hc->partial)
		return CMASK_HEAD_PART;
	return CMASK_HEAD_PASS;
}

const char *cmask_head_why(enum cmask_head_verdict v)
{
	switch (v) {
	case CMASK_HEAD_TRANSFER:
		return "answered with a Transfer-Encoding other than chunked, which was not asked for: a coded body "
		       "cannot be scanned for real values";
	case CMASK_HEAD_CODED:
		return "answered with a Content-Encoding (or an RFC 3229 IM) although asked for identity: a coded "
		       "body cannot be scanned for real values";
	case CMASK_HEAD_CHARSET:
		return "answered in a charset whose bytes are not ASCII's (UTF-16, UTF-32, EBCDIC, or one not "
		       "known): its body cannot be scanned for real values; ask for UTF-8";
	case CMASK_HEAD_PARTIAL:
		return "answered 206 (Partial Content) although no range was asked: a part of a body may hold "
		       "part of a real value, which cannot be re-masked; ask for the whole";
	case CMASK_HEAD_PART:
		return "answered with a part of a body (a Content-Range, or multipart/byteranges) under a status "
		       "other than 206 although no range was asked: a part may hold part of a real value, which "
		       "cannot be re-masked; ask for the whole";
	case CMASK_HEAD_PASS:
		break;
	}
	return NULL;
}

/* Where a refused sentinel went, for reasons. */
static const char *where_name(enum mask_where where)
{
	switch (where) {
	case MASK_WHERE_TARGET:
		return "the request target";
	case MASK_WHERE_HOST:
		return "the host name";
	case MASK_WHERE_NAME:
		return "a header's name";
	case MASK_WHERE_EDGE:
		return "a header's colon or the white space around its value";
	case MASK_WHERE_HEADER:
		break;
	}
	return "a header";
}

/* The rule string of a refusal into m->rule; returns it. */
static const char *refusal_rule(cmask_t *m, const struct mask_refusal *why)
{
	const char *name = why->cred != NULL ? why->cred : "?";

	switch (why->rule) {
	case MASK_RULE_PLAINTEXT:
		(void)snprintf(m->rule, sizeof(m->rule), "credentials.allowPlaintextInject (%s)", name);
		break;
	case MASK_RULE_INJECT_IN:
		(void)snprintf(m->rule, sizeof(m->rule), "credentials %s: injectIn", name);
		break;
	case MASK_RULE_INJECT_HOSTS:
		(void)snprintf(m->rule, sizeof(m->rule), "credentials %s: injectHosts", name);
		break;
	case MASK_RULE_STALE:
		/* The stderr line of `run` shows the rule: say what to do. */
		(void)snprintf(m->rule, sizeof(m->rule),
			       "stale sentinel of credential %s (made for an earlier value or key): "
			       "update where it was saved (a git remote URL, .npmrc, a config file) "
			       "with the current %s%s",
			       name, why->env ? "$" : "sentinel of ", name);
		break;
	case MASK_RULE_URL_RAW:
		(void)snprintf(m->rule, sizeof(m->rule), "credentials %s: a '#' or %%XX in its value, raw in the request target",
			       name);
		break;
	}
	return m->rule;
}

int cmask_request_head(cmask_t *m, struct evbuffer *head, const char *host, uint16_t port,
		       bool verified, char *reason, size_t reasonlen, const char **rule)
{
	size_t len = evbuffer_get_length(head);
	struct mask_refusal why;
	char *buf;

	*rule = NULL;
	if (len == 0)
		return 0;
	buf = (char *)evbuffer_pullup(head, -1);
	if (buf == NULL)
		goto oom;
	switch (mask_exch_request_head(m->x, buf, len, host, port, verified, &why)) {
	case MASK_HEAD_OK:
		/* towards an inject host, no validator or digest a guess could
		 * be checked against (cmask_drop_digests()) */
		if (mask_exch_inject_host(m->x, host, port) && cmask_drop_digests(head, 0, true, true) < 0)
			goto oom;
		return 0;
	case MASK_HEAD_NOMEM:
		goto oom;
	case MASK_HEAD_REFUSED:
		break;
	}
	*rule = refusal_rule(m, &why);
	if (why.rule == MASK_RULE_STALE) {
		/* SPEC §4.1: it cannot be injected; say where to fix it. */
		const char *name = why.cred != NULL ? why.cred : "?";
		(void)snprintf(reason, reasonlen,
			       "stale sentinel of credential %s in %s (made for an earlier value or "
			       "key): update where it was saved (a git remote URL, .npmrc, a config "
			       "file) with the current %s%s",
			       name, where_name(why.where), why.env ? "$" : "sentinel of ", name);
	} else if (why.rule == MASK_RULE_URL_RAW) {
		/* Round 45: swapped raw, a server's URL parser would end the
		 * query at its '#' (and echo a part of the value) or decode
		 * its %XX. */
		(void)snprintf(reason, reasonlen,
			       "the sentinel of %s stands unencoded in the request target to %s:%u and its value holds "
			       "a '#' or a %%XX escape, or a '%%' stands just before it, which a server would take as the "
			       "end of the query or decode: percent-encode the sentinel there ('#' as %%23, '%%' as %%25) "
			       "and a '%%' before it as %%25",
			       why.cred != NULL ? why.cred : "a masked credential", host, (unsigned)port);
	} else {
		(void)snprintf(reason, reasonlen, "the sentinel of %s may not be sent to %s:%u in %s",
			       why.cred != NULL ? why.cred : "a masked credential", host,
			       (unsigned)port, where_name(why.where));
	}
	cmask_wipe_drain(head);
	return 1;
oom:
	cmask_wipe_drain(head);
	errno = ENOMEM;
	return -1;
}

int cmask_response_head(cmask_t *m, struct evbuffer *buf, size_t from, const char **cred)
{
	size_t len = evbuffer_get_length(buf);
	struct evbuffer *keep;
	unsigned char *p;
	int rc;

	*cred = NULL;
	if (from >= len)
		return 0;
	p = evbuffer_pullup(buf, -1);
	if (p == NULL)
		return -1;
	rc = mask_exch_response_head(m->x, p + from, len - from, cred);
	if (rc <= 0)
		return rc;
	/* The head is never sent: what came before it stays. */
	explicit_bzero(p + from, len - from);
	if ((keep = evbuffer_new()) == NULL) {
		cmask_wipe_drain(buf);
		return -1;
	}
	if (evbuffer_remove_buffer(buf, keep, from) != (int)from) {
		evbuffer_free(keep);
		cmask_wipe_drain(buf);
		return -1;
	}
	if (evbuffer_drain(buf, evbuffer_get_length(buf)) < 0 || evbuffer_add_buffer(buf, keep) < 0) {
		evbuffer_free(keep);
		cmask_wipe_drain(buf);
		return -1;
	}
	evbuffer_free(keep);
	return 1;
}

/* The words cmask_digest_field() looks for, by their first byte. */
struct digest_word {
	const char *w;
	size_t n;
};
#define DIGEST_WORD(s) {s, sizeof(s) - 1}

/* c in lower case (ASCII letters only, as the words are). */
static unsigned char ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* Whether the word w (lower case, n bytes) begins name[at..len), any case. */
static bool word_at(const char *name, size_t len, size_t at, const char *w, size_t n)
{
	if (n > len - at)
		return false;
	for (size_t i = 1; i < n; i++)
		if (ascii_lower((unsigned char)name[at + i]) != (unsigned char)w[i])
			return false;
	return true;
}

/* Whether one of the digest words occurs in name[0..len), ASCII case
 * ignored: one pass, a word compared only where its first byte is. */
static bool digest_word_in(const char *name, size_t len)
{
	/* The family, not its known members (review46q): any name holding
	 * one of these words states or asks for a hash of a body --
	 * Digest, Content-Digest, Repr-Digest, Want-*-Digest, Content-MD5,
	 * x-goog-hash, x-ms-content-md5/crc64, x-amz-content-sha256,
	 * x-checksum-*, Docker-Content-Digest (registries), X-Linked-ETag
	 * (model hubs), x-bz-content-sha1, x-oss-hash-crc64ecma,
	 * x-cos-hash-crc64ecma, x-ms-blob-content-md5, x-amz-checksum-*,
	 * x-amz-meta-sha256, ... */
	static const struct digest_word words[] = {
		DIGEST_WORD("digest"), DIGEST_WORD("checksum"), DIGEST_WORD("crc32"), DIGEST_WORD("crc64"),
		DIGEST_WORD("hash"),   DIGEST_WORD("md5"),      DIGEST_WORD("sha1"),  DIGEST_WORD("sha2"),
		DIGEST_WORD("sha3"),   DIGEST_WORD("sha-"),     DIGEST_WORD("sha5")};

	/* Every word is at least 3 bytes; a byte that begins none (most)
	 * costs one test, one that begins some is compared with those only
	 * (words[from, to): they are grouped by their first byte). */
	for (size_t k = 0; k + 3 <= len; k++) {
		size_t from, to;

		switch (ascii_lower((unsigned char)name[k])) {
		case 'd':
			from = 0, to = 1;
			break;
		case 'c':
			from = 1, to = 4;
			break;
		case 'h':
			from = 4, to = 5;
			break;
		case 'm':
			from = 5, to = 6;
			break;
		case 's':
			from = 6, to = 11;
			break;
		default:
			continue;
		}
		for (size_t i = from; i < to; i++)
			if (word_at(name, len, k, words[i].w, words[i].n))
				return true;
	}
	return false;
}

/*
 * Whether a response field states a digest or a validator of the body
 * (or asks for one): from an inject host such a field was computed over
 * the body the host sent, which may hold a real value the re-masker then
 * turned into its sentinel, so the sandbox could hash its guesses of the
 * real body and compare (round 46). The head leaves before the body is
 * scanned, so it is dropped from every answer of an inject host.
 * Not ETag nor X-Linked-ETag (lead, round 46): clients need them
 * (huggingface_hub refuses a file without one; conditional requests and
 * caches), many are opaque ids, and where one is a hash of a body that
 * held a real value it checks a guess only of a secret one can guess:
 * an API token's 160 and more random bits are out of reach. Dropping
 * them broke real downloads for no gain against such tokens.
 */
bool cmask_digest_field(const char *name, size_t len)
{
	/* One pass over the name as it is, case folded byte by byte (a
	 * strncasecmp() at every offset for every word was some 150 libc
	 * calls a field, 3.6% of a masking proxy's CPU in round 47; a
	 * memmem() a word still 5 us a request in round 48; a lower-cased
	 * copy, in windows of 128 bytes, then a pass over it, 570
	 * instructions a field in round 49). */
	if (name_is(name, len, "etag") || name_is(name, len, "x-linked-etag"))
		return false;
	return digest_word_in(name, len);
}

/* A request's field stating a digest of the request body the server
 * checks, which the proxy may have changed by swapping a real value in
 * (a 400 answers a guess of the body). If-Match and If-None-Match go, as
 * the ETags they name do (cmask_digest_field()): dropping If-Match made a
 * conditional write unconditional. val runs to the line's end. */
static bool request_oracle(const char *name, size_t len, const char *val, size_t vlen)
{
	(void)val;
	(void)vlen;
	return cmask_digest_field(name, len);
}

int cmask_drop_digests(struct evbuffer *buf, size_t from, bool start_line, bool request)
{
	size_t len = evbuffer_get_length(buf), off, kept;
	char *p;

	if (from >= len)
		return 0;
	if ((p = (char *)evbuffer_pullup(buf, -1)) == NULL)
		return -1;
	off = from;
	kept = from;
	while (off < len) {
		char *eol = memchr(p + off, '\n', len - off), *colon;
		size_t n = eol != NULL ? (size_t)(eol - (p + off)) + 1 : len - off;

		colon = memchr(p + off, ':', n);
		size_t nlen = colon != NULL ? (size_t)(colon - (p + off)) : 0;

		if (!(start_line && off == from) && colon != NULL &&
		    (request ? request_oracle(p + off, nlen, colon + 1, n - nlen - 1) : cmask_digest_field(p + off, nlen))) {
			explicit_bzero(p + off, n);
		} else {
			if (kept != off)
				memmove(p + kept, p + off, n);
			kept += n;
		}
		off += n;
	}
	if (kept == len)
		return 0;
	explicit_bzero(p + kept, len - kept);
	/* the freed tail goes: the kept bytes move aside and back */
	{
		struct evbuffer *keep = evbuffer_new();
		int rc;

		if (keep == NULL)
			return -1;
		rc = evbuffer_remove_buffer(buf, keep, kept) == (int)kept && evbuffer_drain(buf, len - kept) == 0 &&
				     evbuffer_add_buffer(buf, keep) == 0
			     ? 0
			     : -1;
		evbuffer_free(keep);
		return rc;
	}
}

/* Arms direction dd's framing for a new message. */
static void dir_arm(struct cdir *d, bool chunked)
{
	d->chunked = chunked;
	d->release = false;
	d->ws = false;
	d->lead_watch = false;
	d->wide = false;
	d->nlead = 0;
}

int cmask_body_begin(cmask_t *m, enum cmask_dir dd, const char *host, uint16_t port, bool verified,
		     bool chunked)
{
	if (dd == CMASK_OUT && host == NULL)
		return -1;
	if (mask_exch_body_begin(m->x, xd(dd), host, port, verified) < 0)
		return -1;
	dir_arm(&m->dir[dd], chunked);
	/* an inject host's body: its first bytes say whether it is UTF-16,
	 * when some value's UTF-16 is no form the remask set knows (round 45:
	 * else such a body is re-masked as any other, mask_table_wide_forms(),
	 * and a binary that begins as "\n\0X\0" is not cut) */
	m->dir[dd].lead_watch = m->lead && dd == CMASK_IN && host != NULL && cmask_inject_host(m, host, port);
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

	d->release = false;
	if (lead_wide(d, (const unsigned char *)data, len))
		return case_cut(d->m, d, 0);
	return case_cut(d->m, d, mask_exch_body_feed(d->m->x, xd(d->d), data, len, d->chunked ? d->chunk : d->out));
}

int cmask_body_take(cmask_t *m, enum cmask_dir dd, struct evbuffer *src, size_t n)
{
	struct cdir *d = &m->dir[dd];

	if (!mask_exch_body_active(m->x, xd(dd)))
		return -1;
	if (d->chunked) {
		/* The sink already took the decoded spans. */
		return evbuffer_drain(src, n);
	}
	d->release = false;
	if (d->lead_watch) {
		unsigned char lead[sizeof(d->lead)];
		ev_ssize_t k = evbuffer_copyout(src, lead, n < sizeof(lead) ? n : sizeof(lead));

		if (k < 0)
			return -1;
		if (lead_wide(d, lead, (size_t)k)) {
			if (evbuffer_drain(src, n) < 0)
				return -1;
			return case_cut(m, d, 0);
		}
	}
	return case_cut(m, d, mask_exch_body_feed_buffer(m->x, xd(dd), src, n, d->out));
}

int cmask_tunnel_begin(cmask_t *m)
{
	struct cdir *d = &m->dir[CMASK_OUT];

	/* Nothing is ever injected in a tunnel: no host, every pair maps a
	 * sentinel to itself. */
	if (mask_exch_body_begin(m->x, MASK_OUT, NULL, 0, false) < 0)
		return -1;
	d->chunked = false;
	d->release = false;
	return 0;
}

const char *cmask_leak(const cmask_t *m, enum cmask_dir dd)
{
	return dd == CMASK_OUT ? mask_exch_leak(m->x) : NULL;
}

int cmask_find_real(cmask_t *m, const void *buf, size_t len, const char **cred)
{
	return mask_exch_find_real(m->x, buf, len, cred);
}

int cmask_body_cut(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];
	struct evbuffer *raw = raw_out(d), *front;
	size_t k, held, keep, pending;

	if (!mask_exch_body_active(m->x, xd(dd)))
		return 0;
	/*
	 * The hold-back may begin a real value: wiped, never sent (SPEC
	 * §4.3). With it goes the rest of the last maxlen - 1 bytes that
	 * came (cmask_ready()'s tail), whatever they are: the same amount
	 * at every cut, so what reaches the other side does not tell the
	 * sandbox whether its bytes began a real value (round 32 of the
	 * attack: dropping only the held ones answered that, one guessed
	 * byte at a time, through an upstream that echoes). What came
	 * before the tail was resolved already and may go.
	 */
	k = mask_exch_body_holdmax(m->x, xd(dd));
	held = mask_exch_body_held(m->x, xd(dd));
	keep = d->release || k <= held ? 0 : k - held;
	mask_exch_body_cut(m->x, xd(dd));
	pending = evbuffer_get_length(raw);
	if (keep > pending)
		keep = pending;
	if (keep > 0) {
		if ((front = evbuffer_new()) == NULL)
			return -1;
		if (evbuffer_remove_buffer(raw, front, pending - keep) != (int)(pending - keep)) {
			cmask_wipe_drain(front);
			evbuffer_free(front);
			return -1;
		}
		cmask_wipe_drain(raw);
		if (evbuffer_add_buffer(raw, front) < 0) {
			cmask_wipe_drain(front);
			evbuffer_free(front);
			return -1;
		}
		evbuffer_free(front);
	}
	if (d->chunked && frame_n(d, evbuffer_get_length(d->chunk)) < 0)
		return -1;
	/* Frames go as far as their payload came; what follows a cut
	 * payload is dropped with it. */
	if (d->ws && ws_emit(d, evbuffer_get_length(d->chunk)) < 0)
		return -1;
	if (d->ws && evbuffer_get_length(d->wsd.q) > 0) {
		cmask_wipe_drain(d->wsd.q);
	}
	return 0;
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
	struct evbuffer *raw = raw_out(d);
	size_t pending, keep = 0, go;

	*n = 0;
	if (case_cut(m, d, 0) != 0)
		return -1;
	*n = evbuffer_get_length(d->out);
	if (!mask_exch_body_active(m->x, xd(dd))) {
		/* Message over: cmask_body_end() framed everything. */
		return 0;
	}
	if (!d->release) {
		/*
		 * Hold the last maxlen - 1 bytes of what came, both ways:
		 * the stream itself holds those that could begin a real value,
		 * the rest waits here. The amount depends only on how many
		 * bytes came, never on whether they match, so neither timing
		 * nor chunk sizes tell the sandbox that its bytes begin a real
		 * value (which would let it guess one byte at a time). A
		 * request body too (round 32 of the attack: held only when
		 * they could begin a real value, its bytes were a prefix
		 * oracle through any upstream that echoes what it reads, and
		 * through HTTP/2's WINDOW_UPDATEs, which acknowledge what the
		 * upstream took). A pause of the sender releases them
		 * (cmask_release()).
		 */
		size_t k = mask_exch_body_holdmax(m->x, xd(dd)), held = mask_exch_body_held(m->x, xd(dd));

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

size_t cmask_held(const cmask_t *m, enum cmask_dir dd)
{
	const struct cdir *d = &m->dir[dd];
	size_t n;

	if (!mask_exch_body_active(m->x, xd(dd)))
		return 0;
	n = mask_exch_body_held(m->x, xd(dd)) + evbuffer_get_length(d->out);
	if (d->chunked || d->ws)
		n += evbuffer_get_length(d->chunk);
	return n;
}

size_t cmask_in_holdmax(mask_table_t *t, const char *host, uint16_t port)
{
	return mask_table_in_holdmax(t, host, port);
}

bool cmask_waiting(const cmask_t *m, enum cmask_dir dd)
{
	const struct cdir *d = &m->dir[dd];

	if (!mask_exch_body_active(m->x, xd(dd)))
		return false;
	return mask_exch_body_held(m->x, xd(dd)) > 0 ||
	       evbuffer_get_length(d->chunked || d->ws ? d->chunk : d->out) > 0 ||
	       (d->ws && evbuffer_get_length(d->wsd.q) > 0);
}

int cmask_release(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];

	if (!mask_exch_body_active(m->x, xd(dd)))
		return 0;
	/* What is held is resolved as at the end of a message: a partial
	 * value goes as it is (the same bytes whether or not it begins a
	 * real value), and the stream starts afresh. */
	if (case_cut(m, d, mask_exch_body_release(m->x, xd(dd), raw_out(d))) < 0)
		return -1;
	d->release = true;
	return 0;
}

int cmask_body_end(cmask_t *m, enum cmask_dir dd)
{
	struct cdir *d = &m->dir[dd];

	if (!mask_exch_body_active(m->x, xd(dd)))
		return 0;
	/* Held bytes resolved, figures settled (injected, a sentinel left,
	 * remasked), then the framing closed. */
	if (case_cut(m, d, mask_exch_body_end(m->x, xd(dd), raw_out(d))) < 0)
		return -1;
	if (d->ws && ws_emit(d, evbuffer_get_length(d->chunk)) < 0)
		return -1;
	if (d->chunked && (frame_n(d, evbuffer_get_length(d->chunk)) < 0 ||
			   evbuffer_add(d->out, "0\r\n\r\n", 5) < 0))
		return -1;
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
 * sentinel; outbound: counted, see cmask_ws_leak()), masked again, queued. */
static int ws_control(cmask_t *m, struct cdir *d)
{
	struct wsdir *w = &d->wsd;
	unsigned char *pl = w->cf + w->cfh;
	size_t plen = w->cfn - w->cfh;
	struct wsseg sg;

	if ((w->cf[0] & 0x0f) == 0x8)
		w->closed = true;
	for (size_t i = 0; w->masked && i < plen; i++)
		pl[i] ^= w->key[i % 4];
	if (mask_exch_control(m->x, xd(d->d), pl, plen) < 0)
		return -1;
	/* Inbound from an inject host: a real value with its case changed
	 * in it cuts the stream, the frame never queued (case_cut()). */
	if (case_cut(m, d, 0) != 0) {
		int e = errno;

		explicit_bzero(w->cf, sizeof(w->cf));
		w->cfn = 0;
		errno = e;
		return -1;
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
	/* RSV1-3 without an agreed extension (RFC 6455 §5.2): a frame coded
	 * in a way nobody can read, a compressed one among them, which
	 * could not be scanned either. */
	if ((hb[0] & 0x70) != 0 && !w->ext)
		return -1;
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

int cmask_ws_begin(cmask_t *m, const char *host, uint16_t port, bool extensions)
{
	struct cdir *o = &m->dir[CMASK_OUT], *i = &m->dir[CMASK_IN];

	/* Outbound: nothing is injected into frames, real values are
	 * counted (cmask_tunnel_begin()'s set); inbound: remasked, and from
	 * an inject host searched with case ignored too. */
	if (cmask_body_begin(m, CMASK_IN, host, port, true, false) < 0 || cmask_tunnel_begin(m) < 0)
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
		d->wsd.ext = extensions;
		d->ws = true;
	}
	return 0;
}

int cmask_ws_feed(cmask_t *m, enum cmask_dir dd, struct evbuffer *src, size_t n)
{
	struct cdir *d = &m->dir[dd];
	struct wsdir *w = &d->wsd;
	unsigned char tmp[4096];

	if (!mask_exch_body_active(m->x, xd(dd)) || !d->ws)
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
				if (k > 0 && mask_exch_body_feed_buffer(m->x, xd(dd), src, k, d->chunk) < 0)
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
					if (mask_exch_body_feed(m->x, xd(dd), tmp, c, d->chunk) < 0) {
						explicit_bzero(tmp, sizeof(tmp));
						return -1;
					}
					done += c;
				}
				explicit_bzero(tmp, sizeof(tmp));
			}
			w->left -= k;
			n -= k;
			if (case_cut(m, d, 0) != 0)
				return -1;
		}
		if (w->in_payload && w->left == 0) {
			w->in_payload = false;
			if (w->control && ws_control(m, d) < 0)
				return -1;
		}
		/* Many frames behind a held tail. Releasing what is held (as
		 * this did) let a real value through (round 20 of the attack:
		 * the client's pings made the inject host's pongs pile up
		 * between two halves of a value, no pause needed); letting the
		 * queue grow has no bound. The caller closes; the held bytes
		 * are wiped with the connection. Only what stays queued once
		 * everything not held is out counts (cmask_ready(), the same
		 * amount whatever the bytes are): counted over a whole read,
		 * a burst of some 1,300 one-byte frames (10 KB) from a real
		 * client closed the stream with any credential masked (the
		 * review of round 33). Each byte held back may end a frame of
		 * its own (a header and two records): those are allowed on
		 * top, so a long masked value (a key) held one byte a frame
		 * does not close a real client's stream either. */
		if (evbuffer_get_length(w->q) > CMASK_WS_QUEUE_MAX) {
			size_t ready, max = CMASK_WS_QUEUE_MAX + mask_exch_body_holdmax(m->x, xd(dd)) *
									 (2 * sizeof(struct wsseg) + sizeof(w->hb));

			if (cmask_ready(m, dd, &ready) < 0)
				return -1;
			if (evbuffer_get_length(w->q) > max)
				return 2;
		}
	}
	return 0;
}

bool cmask_ws_closed(const cmask_t *m, enum cmask_dir dd)
{
	return m->dir[dd].ws && m->dir[dd].wsd.closed;
}

const char *cmask_ws_leak(const cmask_t *m)
{
	const char *cred = mask_exch_control_leak(m->x);

	return cred != NULL ? cred : mask_exch_leak(m->x);
}

size_t cmask_injected(const cmask_t *m, const char **names, size_t max)
{
	return mask_exch_injected(m->x, names, max);
}

bool cmask_body_injected(const cmask_t *m)
{
	return mask_exch_body_injected(m->x);
}

uint64_t cmask_remasked(const cmask_t *m)
{
	return mask_exch_remasked(m->x);
}

const char *cmask_body_left(const cmask_t *m)
{
	return mask_exch_body_left(m->x);
}

size_t cmask_cred_count(const cmask_t *m)
{
	return m->ncreds;
}

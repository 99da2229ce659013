/*
 * http1.c - llhttp glue with head limits and the head rewriter.
 *
 * llhttp is built with LLHTTP_STRICT_MODE (GNUmakefile). The head is fed
 * to it only up to its end, found by our own scanner, which also refuses
 * what strict llhttp still lets through: obs-fold and a bare LF ending the
 * request line or the head (test_http1.c's test_head_layers() shows which
 * layer refuses what). So HTTP1_HEAD always reports the exact head
 * length; body bytes are then fed in place and on_message_complete
 * pauses llhttp at the message boundary, so pipelined bytes are never
 * consumed with the current message.
 */
#include "http1.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <llhttp.h>

#include "base/defaults.h"
#include "formmethod.h"

/* Where the head scanner is within the current line. */
enum scan_state {
	SCAN_LINE,       /* inside a line */
	SCAN_CR,         /* after CR: only LF may follow */
	SCAN_LINE_START, /* after CRLF: SP/HT here would be obs-fold */
	SCAN_END_CR,     /* CR at the start of a line: the empty line */
	SCAN_DONE        /* the head is complete */
};

/* Offsets into h->buf of one header field. */
struct hdr {
	uint32_t noff, nlen, voff, vlen;
};

/* Which span callback ran last (a field or value may arrive in pieces). */
enum last_cb { LAST_NONE, LAST_FIELD, LAST_VALUE };

struct http1 {
	llhttp_t parser;             /* llhttp state; parser.data points here */
	enum http1_kind kind;        /* requests or responses */
	size_t max_head;             /* head byte limit (maxHeaderBytes) */
	char *buf;                   /* URL, reason, names and values */
	size_t len, cap;             /* bytes used / allocated in buf */
	struct hdr *hdr;             /* fields in order */
	size_t nhdr, hcap;           /* fields used / allocated (grows to PASSAVANT_MAX_HEADER_COUNT) */
	enum last_cb last;           /* for joining split spans */
	uint32_t url_off, url_len;   /* request target in buf */
	uint32_t reason_off, reason_len; /* response reason phrase in buf */
	enum scan_state scan;        /* head scanner state */
	size_t head_bytes;           /* head bytes scanned so far */
	bool head_done;              /* on_headers_complete ran */
	bool has_body;               /* the head announced a body (chunked, or Content-Length > 0) */
	size_t trailer_bytes;        /* trailer field bytes seen (not kept) */
	bool no_trailers;            /* a trailer field is an error (http1_refuse_trailers()) */
	bool msg_done;               /* on_message_complete ran */
	bool in_chunk;               /* chunked body: inside a chunk (size line read, data + CRLF not yet) */
	bool in_trailers;            /* a chunked request after its last chunk's size line: the trailer section */
	bool trailers_begin;         /* llhttp paused at the last chunk's size line (on_chunk_header()) */
	enum scan_state tscan;       /* the trailer section's line scanner */
	size_t tsection_bytes;       /* a request's trailer section bytes scanned (all of them, OWS too) */
	bool is_head_req;            /* response to HEAD: no body */
	char start[8];               /* first bytes of the head (method) */
	size_t start_len;            /* bytes in start */
	http1_body_fn sink;          /* body span sink, or NULL */
	void *sink_arg;
	http1_body_fn watch;         /* body span reader before the sink, or NULL */
	void *watch_arg;
	int err_status;              /* 0, or 400/405/431 after an error */
	const char *err_reason;      /* static reason of the error */
};

static void set_error(http1_t *h, int status, const char *reason)
{
	if (h->err_status == 0) {
		h->err_status = status;
		h->err_reason = reason;
	}
}

/*
 * Head bytes and field slots are allocated at a message's first bytes and
 * grow on demand; http1_release() frees them while a connection waits for
 * its next message (memory per open tunnel, docs/tls.md).
 */
#define HTTP1_BUF_INITIAL 1024
#define HTTP1_FIELDS_INITIAL 16

/* Appends to buf within the head limit; -1 (and a 431) past it. Never
 * once the head is complete: the head's strings (the target the request
 * was decided on, which the audit record and the refusals quote later)
 * must stay where they are until http1_reset() (round 9 of the attack:
 * chunked trailers grew the buffer, and a 504 quoted the freed target,
 * by then another connection's response holding a real value). */
static int append(http1_t *h, const char *at, size_t n)
{
	if (n == 0)
		return 0; /* llhttp may pass an empty span: nothing to keep, no buffer needed */
	if (h->head_done) {
		set_error(h, 400, "internal error: head buffer grown after the head");
		return -1;
	}
	if (h->len + n > h->max_head) {
		set_error(h, 431, "header fields too large");
		return -1;
	}
	if (h->len + n > h->cap) {
		size_t cap = h->cap > 0 ? h->cap * 2 : HTTP1_BUF_INITIAL;
		char *nb;

		while (cap < h->len + n)
			cap *= 2;
		if (cap > h->max_head)
			cap = h->max_head;
		nb = realloc(h->buf, cap);
		if (nb == NULL) {
			set_error(h, 400, "out of memory");
			return -1;
		}
		h->buf = nb;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, at, n);
	h->len += n;
	return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
	http1_t *h = p->data;

	if (h->url_len == 0)
		h->url_off = (uint32_t)h->len;
	if (append(h, at, n) < 0)
		return HPE_USER;
	h->url_len += (uint32_t)n;
	return 0;
}

static int on_status(llhttp_t *p, const char *at, size_t n)
{
	http1_t *h = p->data;

	/* reason-phrase = *( HTAB / SP / VCHAR / obs-text ) (RFC 9112 §4):
	 * llhttp lets other control bytes through, a NUL included. */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)at[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			set_error(h, 400, "control character in the reason phrase");
			return HPE_USER;
		}
	}
	if (h->reason_len == 0)
		h->reason_off = (uint32_t)h->len;
	if (append(h, at, n) < 0)
		return HPE_USER;
	h->reason_len += (uint32_t)n;
	return 0;
}

static int grow_fields(http1_t *h)
{
	size_t cap = h->hcap > 0 ? h->hcap * 2 : HTTP1_FIELDS_INITIAL;
	struct hdr *nh;

	if (cap > PASSAVANT_MAX_HEADER_COUNT)
		cap = PASSAVANT_MAX_HEADER_COUNT;
	nh = realloc(h->hdr, cap * sizeof(*nh));
	if (nh == NULL) {
		set_error(h, 431, "out of memory for header fields");
		return -1;
	}
	h->hdr = nh;
	h->hcap = cap;
	return 0;
}

/*
 * Trailer fields (after a chunked body's last chunk): counted against the
 * head limit, not kept. Nothing reads them (the head is what was
 * decided; a re-framed body ends without them), and keeping them would
 * grow the buffer the head's strings live in.
 */
static int trailer(http1_t *h, size_t n)
{
	if (h->no_trailers) {
		set_error(h, 403, "a trailer field after its chunked body, on a host with a method list (a server "
				  "merging trailers into the head would read a method override the proxy did not judge)");
		return HPE_USER;
	}
	h->trailer_bytes += n;
	if (h->trailer_bytes > h->max_head) {
		set_error(h, 431, "trailer fields too large");
		return HPE_USER;
	}
	return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
	http1_t *h = p->data;

	if (h->head_done)
		return trailer(h, n);
	if (h->last != LAST_FIELD) {
		if (h->nhdr == PASSAVANT_MAX_HEADER_COUNT) {
			set_error(h, 431, "too many header fields");
			return HPE_USER;
		}
		if (h->nhdr == h->hcap && grow_fields(h) < 0)
			return HPE_USER;
		h->hdr[h->nhdr].noff = (uint32_t)h->len;
		h->hdr[h->nhdr].nlen = 0;
		h->hdr[h->nhdr].voff = (uint32_t)h->len;
		h->hdr[h->nhdr].vlen = 0;
		h->nhdr++;
		h->last = LAST_FIELD;
	}
	if (append(h, at, n) < 0)
		return HPE_USER;
	h->hdr[h->nhdr - 1].nlen += (uint32_t)n;
	return 0;
}

/* RFC 9110 tchar: ALPHA, DIGIT and "!#$%&'*+-.^_`|~". */
static const bool tchar[256] = {
	['0' ... '9'] = true, ['A' ... 'Z'] = true, ['a' ... 'z'] = true,
	['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true, ['\''] = true,
	['*'] = true, ['+'] = true, ['-'] = true, ['.'] = true, ['^'] = true, ['_'] = true,
	['`'] = true, ['|'] = true, ['~'] = true,
};

static bool is_tchar(unsigned char c)
{
	return tchar[c];
}

/* Field names must be tokens. Strict llhttp refuses spaces in names
 * ("Ho st", "Host :", a classic smuggling vector) too; this check holds
 * whichever llhttp build is linked. */
static int on_header_field_complete(llhttp_t *p)
{
	http1_t *h = p->data;
	const struct hdr *f;
	uint32_t i;

	if (h->head_done)
		return 0; /* a trailer's name: llhttp checked it is a token */
	f = &h->hdr[h->nhdr - 1];
	if (f->nlen == 0) {
		set_error(h, 400, "empty header field name");
		return HPE_USER;
	}
	for (i = 0; i < f->nlen; i++) {
		if (!is_tchar((unsigned char)h->buf[f->noff + i])) {
			set_error(h, 400, "invalid character in a header field name");
			return HPE_USER;
		}
	}
	return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
	http1_t *h = p->data;

	if (h->head_done)
		return trailer(h, n);
	if (h->nhdr == 0)
		return HPE_USER;
	if (h->last != LAST_VALUE) {
		h->hdr[h->nhdr - 1].voff = (uint32_t)h->len;
		h->last = LAST_VALUE;
	}
	if (append(h, at, n) < 0)
		return HPE_USER;
	h->hdr[h->nhdr - 1].vlen += (uint32_t)n;
	return 0;
}

static int on_headers_complete(llhttp_t *p)
{
	http1_t *h = p->data;

	h->head_done = true;
	h->has_body = (p->flags & F_CHUNKED) != 0 || ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > 0);
	if (h->kind != HTTP1_RESPONSE)
		return 0;
	/* 1: "this message has no body" (llhttp settings contract). A 1xx
	 * (not 101: the upgrade takes its bytes), 204 or 304 response has
	 * none whatever its framing fields say (RFC 9112 §6.3); llhttp would
	 * take the bytes announced as its body. One that announces a body
	 * (a Transfer-Encoding or a Content-Length above 0, but on a 304,
	 * which may carry both, RFC 9110 §8.6, RFC 9112 §6.1) is read in two
	 * ways by clients (curl and Go skip the bytes, so a response forged
	 * in them answers their next request; Python reads a chunked one):
	 * refused. A 304's Transfer-Encoding is not passed on
	 * (http1_write_response_head()): Python would wait for chunks. */
	if ((p->status_code / 100 == 1 && p->status_code != 101) || p->status_code == 204 || p->status_code == 304) {
		if (p->status_code != 304 &&
		    ((p->flags & F_TRANSFER_ENCODING) != 0 ||
		     ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > 0))) {
			set_error(h, 502, "a response whose status has no body announced one (Content-Length or "
					  "Transfer-Encoding)");
			return HPE_USER;
		}
		h->has_body = false;
		return 1;
	}
	return h->is_head_req ? 1 : 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n)
{
	http1_t *h = p->data;

	if ((h->watch != NULL && h->watch(h->watch_arg, at, n) != 0) ||
	    (h->sink != NULL && h->sink(h->sink_arg, at, n) != 0)) {
		set_error(h, 400, "body substitution failed");
		return HPE_USER;
	}
	return 0;
}

/*
 * The last chunk's size line of a request: llhttp pauses, so that
 * http1_feed() holds the trailer section that follows to the head's line
 * rules before llhttp reads it. llhttp's own are laxer there: it ends
 * the section at a bare LF ("0\r\n\n") and takes obs-fold in a trailer
 * field, bytes the head scanner refuses, and the section goes upstream as
 * received, where a server that wants CRLF reads the message's end
 * elsewhere (round 41 of the attack).
 */
static int on_chunk_header(llhttp_t *p)
{
	http1_t *h = p->data;

	h->in_chunk = true;
	if (h->kind == HTTP1_REQUEST && p->content_length == 0) {
		h->in_trailers = true;
		h->trailers_begin = true;
		h->tscan = SCAN_LINE_START;
		return HPE_PAUSED;
	}
	return 0;
}

static int on_chunk_complete(llhttp_t *p)
{
	((http1_t *)p->data)->in_chunk = false;
	return 0;
}

/* Pausing here stops llhttp exactly at the message boundary. */
static int on_message_complete(llhttp_t *p)
{
	http1_t *h = p->data;

	h->msg_done = true;
	return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
	.on_url = on_url,
	.on_status = on_status,
	.on_header_field = on_header_field,
	.on_header_field_complete = on_header_field_complete,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_chunk_header = on_chunk_header,
	.on_chunk_complete = on_chunk_complete,
	.on_message_complete = on_message_complete,
};

http1_t *http1_new(enum http1_kind kind, size_t max_header_bytes)
{
	http1_t *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->kind = kind;
	h->max_head = max_header_bytes < 256 ? 256 : max_header_bytes;
	llhttp_init(&h->parser, kind == HTTP1_REQUEST ? HTTP_REQUEST : HTTP_RESPONSE, &settings);
	h->parser.data = h;
	return h;
}

void http1_free(http1_t *h)
{
	if (h == NULL)
		return;
	free(h->buf);
	free(h->hdr);
	free(h);
}

void http1_reset(http1_t *h)
{
	llhttp_init(&h->parser, h->kind == HTTP1_REQUEST ? HTTP_REQUEST : HTTP_RESPONSE, &settings);
	h->parser.data = h;
	h->len = 0;
	h->nhdr = 0;
	h->last = LAST_NONE;
	h->url_off = h->url_len = 0;
	h->reason_off = h->reason_len = 0;
	h->scan = SCAN_LINE;
	h->head_bytes = 0;
	h->start_len = 0;
	h->head_done = h->msg_done = h->is_head_req = h->in_chunk = h->has_body = false;
	h->in_trailers = h->trailers_begin = false;
	h->tscan = SCAN_LINE_START;
	h->tsection_bytes = 0;
	h->trailer_bytes = 0;
	h->no_trailers = false;
	h->err_status = 0;
	h->err_reason = NULL;
	h->sink = NULL;
	h->sink_arg = NULL;
	h->watch = NULL;
	h->watch_arg = NULL;
}

void http1_release(http1_t *h)
{
	http1_reset(h);
	free(h->buf);
	free(h->hdr);
	h->buf = NULL;
	h->hdr = NULL;
	h->cap = h->hcap = 0;
}

void http1_set_body_sink(http1_t *h, http1_body_fn fn, void *arg)
{
	h->sink = fn;
	h->sink_arg = arg;
}

void http1_refuse_trailers(http1_t *h)
{
	h->no_trailers = true;
}

void http1_set_body_watch(http1_t *h, http1_body_fn fn, void *arg)
{
	h->watch = fn;
	h->watch_arg = arg;
}

bool http1_between_chunks(const http1_t *h)
{
	return http1_chunked(h) && !h->in_chunk;
}

bool http1_chunked(const http1_t *h)
{
	return (h->parser.flags & F_CHUNKED) != 0;
}

void http1_set_head_request(http1_t *h, bool is_head)
{
	h->is_head_req = is_head;
}

/*
 * The line rules of a head, and of a chunked request's trailer section
 * (the same field syntax, relayed as received): every line ends in CRLF
 * (no bare CR, no bare LF), none starts with SP or HT (obs-fold), and the
 * empty line ends it. Reads from *st over at most len bytes and stops
 * after the empty line (*st SCAN_DONE). Returns how many bytes it read,
 * or (size_t)-1 with *why the rule broken (where says "head" or
 * "trailer section").
 */
static size_t scan_lines(enum scan_state *st, const char *data, size_t len, bool trailers, const char **why)
{
	size_t i;

	for (i = 0; i < len && *st != SCAN_DONE; i++) {
		unsigned char c = (unsigned char)data[i];

		switch (*st) {
		case SCAN_LINE: {
			/* Most bytes are inside a line: find its CR with
			 * memchr(), and refuse an LF before it. */
			const char *cr = memchr(data + i, '\r', len - i);
			size_t stop = cr != NULL ? (size_t)(cr - data) : len;

			if (memchr(data + i, '\n', stop - i) != NULL)
				goto bare_lf;
			if (cr == NULL) {
				i = len - 1;
				break;
			}
			i = stop;
			*st = SCAN_CR;
			break;
		}
		case SCAN_CR:
			if (c != '\n')
				goto bare_cr;
			*st = SCAN_LINE_START;
			break;
		case SCAN_LINE_START:
			if (c == ' ' || c == '\t') {
				*why = trailers ? "obsolete line folding (or a line starting with white space) in the "
						  "chunked body's trailer section"
						: "obsolete line folding in the head";
				return (size_t)-1;
			}
			if (c == '\r')
				*st = SCAN_END_CR;
			else if (c == '\n')
				goto bare_lf;
			else
				*st = SCAN_LINE;
			break;
		case SCAN_END_CR:
			if (c != '\n')
				goto bare_cr;
			*st = SCAN_DONE;
			break;
		case SCAN_DONE:
			break;
		}
	}
	return i;
bare_cr:
	*why = trailers ? "bare CR in the chunked body's trailer section" : "bare CR in the head";
	return (size_t)-1;
bare_lf:
	*why = trailers ? "bare LF in the chunked body's trailer section (after the last chunk, every line ends "
			  "in CRLF)"
			: "bare LF in the head";
	return (size_t)-1;
}

/*
 * Scans head bytes for the end of the head; returns how many of the len
 * bytes belong to the head, or (size_t)-1 on a framing error (set).
 */
static size_t scan_head(http1_t *h, const char *data, size_t len)
{
	const char *why = NULL;
	size_t i;

	/* The first bytes of the head (the method), for TRACK. */
	while (h->start_len < sizeof(h->start) && h->start_len - h->head_bytes < len)
		h->start[h->start_len] = data[h->start_len - h->head_bytes], h->start_len++;
	i = scan_lines(&h->scan, data, len, false, &why);
	if (i == (size_t)-1) {
		set_error(h, 400, why);
		return (size_t)-1;
	}
	h->head_bytes += i;
	if (h->head_bytes > h->max_head) {
		set_error(h, 431, "header fields too large");
		return (size_t)-1;
	}
	return i;
}

/* Tokens of the Connection fields that name framing fields cannot be
 * honoured (removing Content-Length would desynchronise the framing). */
static bool connection_names_framing(const http1_t *h)
{
	static const char *const framing[] = {"content-length", "transfer-encoding", "host"};
	size_t i, k;

	for (i = 0; i < h->nhdr; i++) {
		const char *v;
		size_t vl, p = 0;

		if (h->hdr[i].nlen != 10 || strncasecmp(h->buf + h->hdr[i].noff, "connection", 10) != 0)
			continue;
		v = h->buf + h->hdr[i].voff;
		vl = h->hdr[i].vlen;
		while (p < vl) {
			size_t s, e;

			while (p < vl && (v[p] == ' ' || v[p] == '\t' || v[p] == ','))
				p++;
			s = p;
			while (p < vl && v[p] != ',' && v[p] != ' ' && v[p] != '\t')
				p++;
			e = p;
			for (k = 0; k < ARRAY_LEN(framing); k++)
				if (e - s == strlen(framing[k]) && strncasecmp(v + s, framing[k], e - s) == 0)
					return true;
		}
	}
	return false;
}

/*
 * SPEC §5, checks llhttp leaves to lenient parsing: a request line must
 * end in HTTP/1.0 or HTTP/1.1 (llhttp takes a line without a version as
 * HTTP/0.9 and any digit pair as a version, which the head writer would
 * turn into another); Transfer-Encoding must be one field that is exactly
 * "chunked" (llhttp accepts "identity, chunked", "chunked, chunked",
 * "gzip, chunked" as chunked, which an upstream may read otherwise), and
 * none at all on HTTP/1.0, which has no chunked coding. Returns 0, or -1
 * with the error set (505 for a version, 400 for the rest).
 */
static int request_strict(http1_t *h)
{
	const char *v;
	size_t i, vl, nte = 0;

	if (h->parser.http_major == 0 && h->parser.http_minor == 9) {
		set_error(h, 400, "request line without an HTTP version");
		return -1;
	}
	if (h->parser.http_major != 1 || h->parser.http_minor > 1) {
		set_error(h, 505, "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)");
		return -1;
	}
	for (i = 0; i < h->nhdr; i++) {
		if (h->hdr[i].nlen != 17 || strncasecmp(h->buf + h->hdr[i].noff, "transfer-encoding", 17) != 0)
			continue;
		nte++;
		v = h->buf + h->hdr[i].voff;
		vl = h->hdr[i].vlen;
		while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		while (vl > 0 && (v[0] == ' ' || v[0] == '\t'))
			v++, vl--;
		if (!(vl == 7 && strncasecmp(v, "chunked", 7) == 0)) {
			set_error(h, 400, "Transfer-Encoding other than exactly chunked");
			return -1;
		}
	}
	if (nte > 1) {
		set_error(h, 400, "more than one Transfer-Encoding field");
		return -1;
	}
	if (nte == 1 && h->parser.http_minor == 0) {
		set_error(h, 400, "Transfer-Encoding in an HTTP/1.0 request");
		return -1;
	}
	return 0;
}

enum http1_result http1_feed(http1_t *h, const char *data, size_t len, size_t *consumed)
{
	llhttp_errno_t e;
	size_t n;

	*consumed = 0;
	if (h->err_status != 0)
		return HTTP1_ERROR;
	if (h->msg_done)
		return HTTP1_DONE;
	if (!h->head_done) {
		n = scan_head(h, data, len);
		if (n == (size_t)-1)
			return HTTP1_ERROR;
		e = llhttp_execute(&h->parser, data, n);
		/* llhttp fails at the K: with the head arriving a byte at a
		 * time, the 5 bytes read so far are all there is. */
		if (e == HPE_INVALID_METHOD && ((h->start_len >= 6 && memcmp(h->start, "TRACK ", 6) == 0) ||
						(h->start_len == 5 && memcmp(h->start, "TRACK", 5) == 0))) {
			/* llhttp does not know TRACK; SPEC §5 wants it refused
			 * like TRACE, not as malformed. */
			set_error(h, 405, "TRACK is not allowed through the proxy");
			return HTTP1_ERROR;
		}
		if (((e != HPE_OK && e != HPE_PAUSED && e != HPE_PAUSED_UPGRADE) ||
		     (h->scan == SCAN_DONE && !h->head_done)) &&
		    h->start_len == sizeof(h->start) && memcmp(h->start, "PRI * HT", 8) == 0) {
			/* HTTP/2's preface in clear (h2c with prior knowledge,
			 * as gRPC's insecure channels send it through a proxy
			 * or a redirected connection): no HTTP/1 head, and
			 * nothing the proxy decides. Said as such, not as a
			 * malformed head. */
			set_error(h, 505,
				  "HTTP/2 without TLS (h2c, prior knowledge) is not decided by the proxy: use TLS "
				  "(HTTP/2 is terminated and decided there) or HTTP/1.1");
			return HTTP1_ERROR;
		}
		if (e != HPE_OK && e != HPE_PAUSED && e != HPE_PAUSED_UPGRADE) {
			/* Our callbacks set a more precise error first. */
			set_error(h, 400, llhttp_get_error_reason(&h->parser) != NULL
						  ? llhttp_get_error_reason(&h->parser)
						  : "malformed head");
			return HTTP1_ERROR;
		}
		*consumed = n;
		if (h->scan != SCAN_DONE)
			return HTTP1_MORE;
		if (!h->head_done) {
			set_error(h, 400, "malformed head");
			return HTTP1_ERROR;
		}
		if (connection_names_framing(h)) {
			set_error(h, 400, "Connection names a framing header");
			return HTTP1_ERROR;
		}
		if (h->kind == HTTP1_REQUEST && request_strict(h) < 0)
			return HTTP1_ERROR;
		return HTTP1_HEAD;
	}
	for (size_t off = 0;;) {
		const char *why = NULL;

		/* A request's trailer section: llhttp reads only what the
		 * line rules passed, so it ends where they say it ends. */
		n = len - off;
		if (h->in_trailers && (n = scan_lines(&h->tscan, data + off, len - off, true, &why)) == (size_t)-1) {
			set_error(h, 400, why);
			return HTTP1_ERROR;
		}
		/* Bounded like a head, every byte of it: llhttp reports no
		 * white space before a field's value, so the callbacks'
		 * count (trailer()) let "X:" and endless spaces through. */
		if (h->in_trailers && (h->tsection_bytes += n) > h->max_head) {
			set_error(h, 431, "the chunked body's trailer section is larger than maxHeaderBytes");
			return HTTP1_ERROR;
		}
		e = llhttp_execute(&h->parser, data + off, n);
		if (e == HPE_PAUSED && h->trailers_begin && !h->msg_done) {
			/* on_chunk_header(): the last chunk's size line read */
			h->trailers_begin = false;
			off = (size_t)(llhttp_get_error_pos(&h->parser) - data);
			llhttp_resume(&h->parser);
			continue;
		}
		if (e == HPE_OK && !(h->in_trailers && h->tscan == SCAN_DONE)) {
			*consumed = len;
			return HTTP1_MORE;
		}
		if (e == HPE_OK) {
			/* The section's empty line read, and llhttp goes on:
			 * the two do not agree on where the message ends. */
			set_error(h, 400, "the chunked body's trailer section does not end where it should");
			return HTTP1_ERROR;
		}
		if (e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) {
			*consumed = (size_t)(llhttp_get_error_pos(&h->parser) - data);
			return HTTP1_DONE;
		}
		set_error(h, 400, llhttp_get_error_reason(&h->parser) != NULL ? llhttp_get_error_reason(&h->parser)
									      : "malformed body");
		return HTTP1_ERROR;
	}
}

enum http1_result http1_finish(http1_t *h)
{
	llhttp_errno_t e;

	if (h->msg_done)
		return HTTP1_DONE;
	if (h->err_status != 0 || !h->head_done)
		return HTTP1_ERROR;
	e = llhttp_finish(&h->parser);
	if ((e == HPE_OK || e == HPE_PAUSED) && h->msg_done)
		return HTTP1_DONE;
	set_error(h, 400, "message cut short by end of stream");
	return HTTP1_ERROR;
}

int http1_error_status(const http1_t *h)
{
	return h->err_status != 0 ? h->err_status : 400;
}

const char *http1_error_reason(const http1_t *h)
{
	return h->err_reason != NULL ? h->err_reason : "malformed message";
}

bool http1_head_done(const http1_t *h)
{
	return h->head_done;
}

bool http1_has_body(const http1_t *h)
{
	return h->head_done && h->has_body;
}

bool http1_message_done(const http1_t *h)
{
	return h->msg_done;
}

bool http1_keep_alive(const http1_t *h)
{
	return llhttp_should_keep_alive(&h->parser) != 0;
}

bool http1_needs_eof(const http1_t *h)
{
	return llhttp_message_needs_eof(&h->parser) != 0;
}

bool http1_upgrade(const http1_t *h)
{
	return h->parser.upgrade != 0;
}

size_t http1_head_bytes(const http1_t *h)
{
	return h->head_bytes;
}

const char *http1_method(const http1_t *h)
{
	return llhttp_method_name((llhttp_method_t)h->parser.method);
}

bool http1_method_is(const http1_t *h, const char *m)
{
	return strcmp(http1_method(h), m) == 0;
}

const char *http1_url(const http1_t *h, size_t *len)
{
	*len = h->url_len;
	return h->buf != NULL ? h->buf + h->url_off : ""; /* a head with no byte kept */
}

const char *http1_head_text(const http1_t *h, size_t *len)
{
	*len = h->len - h->url_off;
	return h->buf != NULL ? h->buf + h->url_off : "";
}

int http1_status(const http1_t *h)
{
	return h->parser.status_code;
}

unsigned http1_version_minor(const http1_t *h)
{
	return h->parser.http_minor;
}

size_t http1_header_count(const http1_t *h)
{
	return h->nhdr;
}

void http1_header(const http1_t *h, size_t i, const char **name, size_t *nlen, const char **val,
		  size_t *vlen)
{
	*name = h->buf + h->hdr[i].noff;
	*nlen = h->hdr[i].nlen;
	*val = h->buf + h->hdr[i].voff;
	*vlen = h->hdr[i].vlen;
}

static bool name_is_n(const http1_t *h, size_t i, const char *name, size_t n)
{
	return h->hdr[i].nlen == n && strncasecmp(h->buf + h->hdr[i].noff, name, n) == 0;
}

static bool name_is(const http1_t *h, size_t i, const char *name)
{
	return name_is_n(h, i, name, strlen(name));
}

/* A literal name: its length is known at compile time. */
#define NAME_IS(h, i, lit) name_is_n((h), (i), "" lit, sizeof(lit) - 1)

size_t http1_header_find(const http1_t *h, const char *name, size_t *first)
{
	size_t i, count = 0;

	for (i = 0; i < h->nhdr; i++) {
		if (!name_is(h, i, name))
			continue;
		if (count == 0 && first != NULL)
			*first = i;
		count++;
	}
	return count;
}

/* Whether a Connection field of h lists the field name of index i. */
static bool named_by_connection(const http1_t *h, size_t i)
{
	const char *name = h->buf + h->hdr[i].noff;
	size_t nlen = h->hdr[i].nlen, j;

	for (j = 0; j < h->nhdr; j++) {
		const char *v;
		size_t vl, p = 0;

		if (!NAME_IS(h, j, "connection"))
			continue;
		v = h->buf + h->hdr[j].voff;
		vl = h->hdr[j].vlen;
		while (p < vl) {
			size_t s;

			while (p < vl && (v[p] == ' ' || v[p] == '\t' || v[p] == ','))
				p++;
			s = p;
			while (p < vl && v[p] != ',' && v[p] != ' ' && v[p] != '\t')
				p++;
			if (p - s == nlen && strncasecmp(v + s, name, nlen) == 0)
				return true;
		}
	}
	return false;
}

/* Hop-by-hop per RFC 9110 §7.6.1, plus Proxy-Authorization (SPEC §5: it
 * never goes upstream; it is meant for us). With keep_upgrade, Upgrade is
 * end-to-end (an upgrade being relayed) and Connection is rewritten by
 * the caller. has_connection: the head has a Connection field (whose
 * tokens name more hop-by-hop fields). */
static bool is_hop_by_hop(const http1_t *h, size_t i, bool keep_upgrade, bool has_connection)
{
	if (keep_upgrade && NAME_IS(h, i, "upgrade"))
		return false;
	if (NAME_IS(h, i, "connection") || NAME_IS(h, i, "keep-alive") || NAME_IS(h, i, "proxy-connection") ||
	    NAME_IS(h, i, "te") || NAME_IS(h, i, "trailer") || NAME_IS(h, i, "upgrade") ||
	    NAME_IS(h, i, "proxy-authorization"))
		return true;
	return has_connection && named_by_connection(h, i);
}

/*
 * A head is serialised with one evbuffer reservation sized from the
 * parsed head (every field's bytes plus ": " and CRLF, the start line and
 * the fields added here) and plain copies into it: no formatting, one
 * chain.
 */
struct head_writer {
	char *p, *end; /* next byte, end of the reservation */
	bool overflow; /* a put() did not fit: head_commit() refuses */
};

static void put(struct head_writer *w, const void *src, size_t n)
{
	/* Sized beforehand (head_reserve()): never past end. */
	if (w->overflow || n > (size_t)(w->end - w->p)) {
		w->overflow = true;
		return;
	}
	memcpy(w->p, src, n);
	w->p += n;
}

static void put_str(struct head_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static int head_reserve(struct evbuffer *out, size_t size, struct head_writer *w, struct evbuffer_iovec *v)
{
	if (evbuffer_reserve_space(out, (ev_ssize_t)size, v, 1) < 1 || v->iov_len < size)
		return -1;
	w->p = v->iov_base;
	w->end = w->p + size;
	w->overflow = false;
	return 0;
}

static int head_commit(struct evbuffer *out, const struct head_writer *w, struct evbuffer_iovec *v)
{
	if (w->overflow)
		return -1;
	v->iov_len = (size_t)(w->p - (char *)v->iov_base);
	return evbuffer_commit_space(out, v, 1);
}

/* The bytes write_fields() can write at most. */
static size_t fields_size(const http1_t *h)
{
	return h->len + 4 * h->nhdr;
}

/* Writes every end-to-end field of h, skipping "skip" too, and with
 * identity the fields that negotiate compression. */
static void write_fields(const http1_t *h, struct head_writer *w, const char *skip, bool keep_upgrade,
			 bool identity)
{
	bool has_connection = false;
	/* A PUT's range names what it writes (Azure's Put Page and
	 * Put Range require x-ms-range or Range), not a part to read: it
	 * goes up (review43b); a 206 it got is refused as any other. */
	bool ranges = identity && !http1_method_is(h, "PUT");
	size_t i;

	for (i = 0; i < h->nhdr && !has_connection; i++)
		has_connection = NAME_IS(h, i, "connection");
	for (i = 0; i < h->nhdr; i++) {
		if (is_hop_by_hop(h, i, keep_upgrade, has_connection) || (skip != NULL && name_is(h, i, skip)))
			continue;
		if (identity &&
		    (NAME_IS(h, i, "accept-encoding") || NAME_IS(h, i, "sec-websocket-extensions") ||
		     NAME_IS(h, i, "grpc-accept-encoding") || NAME_IS(h, i, "connect-accept-encoding") ||
		     NAME_IS(h, i, "accept-charset") || NAME_IS(h, i, "a-im")))
			continue;
		/* Ranges too (SPEC §4.3): two partial responses could each
		 * hold part of a real value, which no scan would see whole;
		 * Azure Storage's x-ms-range is one (it wins over Range there).
		 * A 206 that comes anyway is refused (exchange.c). */
		if (ranges && (NAME_IS(h, i, "range") || NAME_IS(h, i, "if-range") || NAME_IS(h, i, "request-range") ||
			       NAME_IS(h, i, "x-ms-range")))
			continue;
		put(w, h->buf + h->hdr[i].noff, h->hdr[i].nlen);
		put(w, ": ", 2);
		/* Accept's charset parameters too, when they name one whose
		 * bytes are not ASCII's (formmethod_accept_narrow()): as
		 * Accept-Charset, an answer in it cannot be scanned. */
		if (identity && NAME_IS(h, i, "accept") && !w->overflow && h->hdr[i].vlen <= (size_t)(w->end - w->p))
			w->p += formmethod_accept_narrow(h->buf + h->hdr[i].voff, h->hdr[i].vlen, w->p);
		else
			put(w, h->buf + h->hdr[i].voff, h->hdr[i].vlen);
		put(w, "\r\n", 2);
	}
}

#define ACCEPT_IDENTITY "Accept-Encoding: identity\r\n"
#define CONNECTION_UPGRADE "Connection: Upgrade\r\n"
#define CONNECTION_CLOSE "Connection: close\r\n"
#define TE_CHUNKED "Transfer-Encoding: chunked\r\n"
#define RANGE_DROPPED                                                                                       \
	"Passavant-Range: dropped; passavant does not pass a range to a host a credential is injected "   \
	"towards (SPEC 4.3): the whole representation follows, fetch it without resuming\r\n"
/* Start line and added fields: the room they need beyond the parts. */
#define HEAD_EXTRA                                                                                          \
	(sizeof(ACCEPT_IDENTITY) + sizeof(CONNECTION_UPGRADE) + sizeof(CONNECTION_CLOSE) + sizeof(TE_CHUNKED) + \
	 sizeof(RANGE_DROPPED) + 64)

int http1_write_request_head(const http1_t *h, struct evbuffer *out, const char *path,
			     size_t path_len, const char *authority, bool keep_upgrade,
			     bool identity, bool close)
{
	const char *method = http1_method(h);
	char version[] = " HTTP/1.0\r\nHost: ";
	struct head_writer w;
	struct evbuffer_iovec v;

	if (head_reserve(out, strlen(method) + path_len + strlen(authority) + fields_size(h) + HEAD_EXTRA, &w,
			 &v) < 0)
		return -1;
	version[8] = (char)('0' + (h->parser.http_minor % 10));
	put_str(&w, method);
	put(&w, " ", 1);
	if (path_len > 0 && path[0] == '?')
		put(&w, "/", 1);
	put(&w, path, path_len);
	put(&w, version, sizeof(version) - 1);
	put_str(&w, authority);
	put(&w, "\r\n", 2);
	write_fields(h, &w, "host", keep_upgrade, identity);
	if (identity)
		put(&w, ACCEPT_IDENTITY, sizeof(ACCEPT_IDENTITY) - 1);
	if (keep_upgrade)
		put(&w, CONNECTION_UPGRADE, sizeof(CONNECTION_UPGRADE) - 1);
	else if (close)
		put(&w, CONNECTION_CLOSE, sizeof(CONNECTION_CLOSE) - 1);
	put(&w, "\r\n", 2);
	return head_commit(out, &w, &v);
}

int http1_write_response_head(const http1_t *h, struct evbuffer *out, unsigned add)
{
	bool keep_upgrade = (add & HTTP1_HEAD_UPGRADE) != 0, chunked = (add & HTTP1_HEAD_CHUNKED) != 0;
	char line[] = "HTTP/1.1 000 ";
	unsigned status = (unsigned)h->parser.status_code % 1000;
	struct head_writer w;
	struct evbuffer_iovec v;

	if (head_reserve(out, h->reason_len + fields_size(h) + HEAD_EXTRA, &w, &v) < 0)
		return -1;
	line[7] = chunked ? '1' : (char)('0' + (h->parser.http_minor % 10));
	line[9] = (char)('0' + status / 100);
	line[10] = (char)('0' + status / 10 % 10);
	line[11] = (char)('0' + status % 10);
	put(&w, line, sizeof(line) - 1);
	if (h->reason_len > 0)
		put(&w, h->buf + h->reason_off, h->reason_len);
	put(&w, "\r\n", 2);
	/* A 304 has no body: its Transfer-Encoding only names the coding
	 * a 200 would have had, and Python's client would read chunks. */
	write_fields(h, &w, status == 304 ? "transfer-encoding" : NULL, keep_upgrade, false);
	if (keep_upgrade)
		put(&w, CONNECTION_UPGRADE, sizeof(CONNECTION_UPGRADE) - 1);
	if ((add & HTTP1_HEAD_CLOSE) != 0)
		put(&w, CONNECTION_CLOSE, sizeof(CONNECTION_CLOSE) - 1);
	if (chunked)
		put(&w, TE_CHUNKED, sizeof(TE_CHUNKED) - 1);
	if ((add & HTTP1_HEAD_RANGE_DROPPED) != 0)
		put(&w, RANGE_DROPPED, sizeof(RANGE_DROPPED) - 1);
	put(&w, "\r\n", 2);
	return head_commit(out, &w, &v);
}

bool http1_range_dropped(const http1_t *h)
{
	if (http1_method_is(h, "PUT"))
		return false;
	for (size_t i = 0; i < h->nhdr; i++)
		if (NAME_IS(h, i, "range") || NAME_IS(h, i, "request-range") || NAME_IS(h, i, "x-ms-range"))
			return true;
	return false;
}

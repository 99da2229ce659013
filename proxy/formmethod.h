/*
 * formmethod.h - the methods a request body names in a `_method`
 * parameter (Rails' Rack::MethodOverride, Laravel, Symfony, Spring's
 * HiddenHttpMethodFilter act on it: a POST whose form says
 * _method=DELETE is a DELETE to them), found as the body streams by: a
 * byte state machine fed each decoded span (chunked framing removed) in
 * any split, in fixed-size state, with no allocation and no copy.
 *
 * Read, by the request's Content-Type (its media type ends at ';', ','
 * or a blank, as PHP and Rack end it):
 *  - none (or empty), application/x-www-form-urlencoded (or a media type
 *    beginning so: Undertow and Vert.x match a prefix): parameters split
 *    at '&' and ';', name and value %XX-decoded, '+' a space; the name
 *    read as the query judge reads one (any case, leading spaces dropped,
 *    '.' and ' ' as '_', a NUL ending it, `_method[...` a list; leading
 *    '[' and ']' dropped and `_method]...` the name too, as Rack 2 reads
 *    one);
 *  - multipart/form-data (and every other multipart/ type: Rack reads
 *    multipart/mixed and multipart/related too): a part whose Content-Disposition (anywhere in
 *    a head line, as Rack finds it; folded lines go on) has
 *    name="_method" (quoted or not, read as above), or whose head holds,
 *    anywhere, `;` blanks `name=` and a value reading _method (Rack 2's
 *    regular expression: inside another parameter's quotes, in a line
 *    with no ':') or `Content-ID:` and _method (Rack names a part so),
 *    or whose Content-Disposition has an RFC 2231 name (name*=...,
 *    name*0=...: Go decodes and joins one; not decoded here, so any),
 *    or a name holding an RFC 2047 encoded word (=?utf-8?q?=5Fmethod?=:
 *    Commons FileUpload and Tomcat decode one; not decoded either; "=?"
 *    then "?B?" or "?Q?" anywhere after it counts),
 *    its body to the next boundary line the value;
 *  - JSON (a Content-Type holding "/json" or "+json" anywhere, as
 *    Laravel tells one): any object key that decodes (escapes, \u005f too) to
 *    `_method` in any case; its string value, or every string inside an
 *    array value, nested ones and object keys too (an array nested over
 *    254 deep is refused: its end would be lost) (in a charset whose
 *    bytes are not ASCII's: FM_CHARSET, as a form's; a NUL byte, UTF-16
 *    or UTF-32 with no charset as Jackson and Python's json guess it:
 *    refused);
 *  - any other type: not read.
 * Each value is judged element by element (',' splits), blanks around it
 * dropped, upper-cased (struct method_tok), against the judge the caller
 * gave. The first element the judge refuses stops the scan: the method
 * and the rule are kept for the refusal.
 *
 * The struct is public so that it can sit in an exchange or a stream:
 * its fields are the scanner's, never read outside formmethod.c but
 * through the functions below. Not thread-safe per object; every
 * function may be called from event-loop callbacks.
 */
#ifndef PASSAVANT_FORMMETHOD_H
#define PASSAVANT_FORMMETHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/attrib.h"
#include "policy/policy.h"

/* The longest method the loader accepts (keys_network.c). */
#define METHOD_TOK_MAX 32

/* One comma-separated element naming a method, read a byte at a time:
 * leading and trailing blanks dropped, upper-cased, a byte that is no
 * tchar kept as '?' (so that it can match no method of a rule, and a NUL
 * or a control byte reaches neither the comparison nor a reason). */
struct method_tok {
	char m[METHOD_TOK_MAX + 1]; /* the first METHOD_TOK_MAX bytes */
	size_t len;                 /* bytes since the first non-blank */
	size_t end;                 /* len up to the last non-blank */
};

/* Adds one byte to t. */
void method_tok_put(struct method_tok *t, unsigned char ch) NONNULL(1);

/*
 * Ends t's element and resets t for the next: false when it named
 * nothing (empty or blanks only); else true, t->m the method
 * NUL-terminated (cut at METHOD_TOK_MAX bytes, *too_long then true: it is
 * longer than any method a rule can list).
 */
bool method_tok_end(struct method_tok *t, bool *too_long) NONNULL(1, 2) WUNRES;

/* A `_method` name read a byte at a time (decoded bytes). */
struct fm_name {
	uint8_t n;  /* bytes of "_method" matched */
	uint8_t st; /* formmethod.c's enum */
	bool php;   /* PHP's and Rack's reading (spaces, '.', NUL, '[', ']'), else exact in any case */
};

/* The largest multipart boundary read (RFC 2046: 1 to 70 bytes; Rack
 * refuses a longer one). */
#define FM_BOUNDARY_MAX 70

/*
 * Judges one method named in the body: true when arg's rule allows it,
 * else false with *rule the rule that refuses it (or NULL: "allowedMethods").
 * method is "" for one too long for any rule.
 */
typedef bool (*fm_judge_fn)(const void *arg, const char *method, const char **rule);

/* How far a multipart parameter value has gone toward an RFC 2047 encoded
 * word ("=?" and, after it, "?B?" or "?Q?"; pvalue_put()). */
enum fm_ew {
	EW_NONE,  /* nothing of one */
	EW_EQ,    /* the last byte '=' */
	EW_QM,    /* "=?" seen, the last byte '?' */
	EW_OPEN,  /* "=?" seen, the last byte another */
	EW_ENC,   /* "=?" seen, the last two "?B" or "?Q" */
	EW_WORD,  /* "=?" and then "?B?" or "?Q?": taken for an encoded word */
};

struct formmethod {
	uint8_t kind;               /* formmethod.c's enum: 0 not scanning */
	bool refused;               /* a method was refused: see formmethod_refused() */
	uint8_t st;                 /* the kind's state */
	uint8_t sub;                /* a sub-state (multipart headers, JSON escapes) */
	bool judging;               /* bytes go to tok (a _method value) */
	bool held_cr;               /* multipart value: a CR waits (it may be the delimiter's) */
	uint8_t pct;                /* %XX decoding: 0, 1 ('%' seen), 2 (and hi) */
	uint8_t pct_hi;             /* the raw hex digit after '%' */
	uint32_t u;                 /* JSON \uXXXX: the code point so far */
	uint8_t un;                 /* JSON \uXXXX: hex digits read */
	uint8_t depth;              /* JSON array value: nesting (deeper than UINT8_MAX: refused) */
	uint8_t plen;               /* multipart: delimiter length ("\n--" + boundary) */
	uint8_t j;                  /* multipart: delimiter bytes matched */
	uint8_t hn;                 /* multipart header: name bytes matched / param name length */
	bool named;                 /* multipart: the current part is named _method */
	uint8_t ew;                 /* multipart: the parameter value's RFC 2047 look-out (enum fm_ew) */
	bool fold;                  /* multipart: a Content-Disposition may go on in the next line */
	char pname[8];              /* multipart: the Content-Disposition parameter name */
	uint8_t rsep;               /* multipart head, raw: after ';' (1), matching "name=" (2) */
	uint8_t rn;                 /* multipart head, raw: bytes of "name=" matched */
	uint8_t ri;                 /* multipart head, raw: bytes of "content-id:" matched */
	uint8_t rv;                 /* multipart head, raw: the value being read (formmethod.c's enum) */
	struct fm_name rname;       /* multipart head, raw: that value as a name */
	char delim[FM_BOUNDARY_MAX + 4];   /* multipart: "\n--" boundary */
	uint8_t fail[FM_BOUNDARY_MAX + 4]; /* multipart: the delimiter's KMP failure table */
	struct fm_name name;        /* the name being read */
	struct method_tok tok;      /* the value element being read */
	fm_judge_fn judge;
	const void *judge_arg;
	struct policy_decision d;   /* the caller's, when judge_arg points here */
	const char *rule;           /* refused: the rule that refused */
	char method[METHOD_TOK_MAX + 4]; /* refused: the method ("..." when cut) */
	const char *where;          /* refused: what named it, for the reason */
};

/*
 * Whether every charset the Content-Type value ct[0..len) names (as a
 * form's is read: any "charset=" in it, and no RFC 2231 "charset*") keeps
 * ASCII's bytes for ASCII's characters (UTF-8, ISO-8859-*, windows-125*,
 * the multibyte ones whose ASCII bytes stand for themselves): true too
 * when it names none. UTF-16, UTF-32, UTF-7, EBCDIC, ISO-2022-* and names
 * not known: false. The response side asks it of an inject host's body
 * (exchange.c, h2stream.c): a real value in UTF-16 is no byte string the
 * re-masker knows.
 */
bool formmethod_charsets_ascii(const char *ct, size_t len) NONNULL(1);

/*
 * An Accept value v[0..len) narrowed into out (room for len bytes; out
 * may be v): each media range's parameter that names a charset
 * formmethod_charsets_ascii() refuses ("text/plain; charset=utf-16", an
 * RFC 2231 "charset*=") is left out, the rest copied as it is. Returns
 * the length written. Towards an inject host (http1.c, h2req.c): a
 * server that takes its answer's charset from Accept (ASP.NET Core,
 * JAX-RS) answers in one the re-masker reads, not with a 502.
 */
size_t formmethod_accept_narrow(const char *v, size_t len, char *out) NONNULL(1, 3);

/* How formmethod_begin() went. */
enum fm_begin {
	FM_OFF,       /* the body is not read (a type no framework takes a _method from) */
	FM_ON,        /* the body is read */
	FM_UNREADABLE, /* multipart whose boundary is missing, longer than FM_BOUNDARY_MAX, or
		       * one the frameworks may read differently, an RFC 2231 boundary*= among
		       * them (formmethod.c mp_boundary()) */
	FM_CHARSET     /* a form, multipart or JSON body in a charset whose bytes are not
			* ASCII's (UTF-16, EBCDIC, ISO-2022-JP: Tomcat decodes a form's names
			* with it, Express's body-parser a JSON body) */
};

/*
 * Starts reading a body of Content-Type ct[0..ctlen) (ct NULL: none).
 * Each method found is judged by judge(judge_arg, ...). fm is reset first.
 */
enum fm_begin formmethod_begin(struct formmethod *fm, const char *ct, size_t ctlen, fm_judge_fn judge,
			       const void *judge_arg) NONNULL(1, 4);

/* Stops reading (fm reads nothing more; refused stays false). */
void formmethod_off(struct formmethod *fm) NONNULL(1);

/* Whether fm reads the body. */
bool formmethod_on(const struct formmethod *fm) NONNULL(1);

/*
 * Reads the next decoded span of the body. True to go on; false once a
 * method was refused (then and ever after: formmethod_refused()).
 * Usable as an http1_body_fn through formmethod_sink().
 */
bool formmethod_feed(struct formmethod *fm, const char *data, size_t len) NONNULL(1);

/* An http1_body_fn feeding arg (a struct formmethod): always 0 (the
 * caller looks at formmethod_refused() after the feed). */
int formmethod_sink(void *arg, const char *data, size_t len);

/* The body ended: the value being read is judged. False when refused. */
bool formmethod_end(struct formmethod *fm) NONNULL(1);

/* After a refusal: the method, the rule, and what named it ("the body
 * parameter _method", "the body's multipart part _method", "the body's
 * JSON key _method"). NULL when nothing was refused. */
const char *formmethod_refused(const struct formmethod *fm, const char **rule, const char **where)
	NONNULL(1, 2, 3);

#endif

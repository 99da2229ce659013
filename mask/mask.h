/*
 * mask.h - credential masking (SPEC §4): the public face of mask/ for the
 * whole module.
 *
 *  - The streaming substituter: pattern sets compiled by set.c into the
 *    automaton of automaton.h (private), scanned by stream.c per message.
 *  - Sentinel shape rules and generation (sentinel.c, §4.1).
 *  - Secret storage (secret.c, §4.4): a locked, undumpable arena over
 *    base/secmem.h that holds real values and sentinels and is wiped
 *    when freed.
 *  - The credential table (§3.2, §4.2, §4.3; layout in tablepriv.h): real
 *    values read from passavant's own environment and files and checked
 *    (table.c), one sentinel per distinct real value, the sandbox-facing
 *    outputs (env lines and pairs, sentinel copies of files), and the
 *    substitution and detection sets per host eligibility (tablesets.c).
 *  - Base64 and Authorization: Basic (basic.c).
 *  - One connection's exchanges (exchange.c): the coarse API the proxy
 *    uses, one call per head and one per body chunk.
 *
 * Nothing in mask/ logs, and no error message or output of this module
 * carries a real value, except the `to` side of outbound sets.
 */
#ifndef PASSAVANT_MASK_H
#define PASSAVANT_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/buffer.h>

#include "../policy/policy.h"
#include "base/attrib.h"

/* ------------------------------------------------------------------ */
/* Streaming substitution (set.c, stream.c)                            */
/* ------------------------------------------------------------------ */

/*
 * The streaming multi-pattern substituter (stream.c, SPEC §4.2, §4.3).
 * The design, the exact matching semantics and how the proxy uses it are
 * in docs/masking.md.
 *
 * A mask_set_t is a compiled, immutable set of (from -> to) byte-string
 * pairs. Its memory holds the secret bytes: it is one base/secmem.h arena,
 * mlock'ed and MADV_DONTDUMP'ed, wiped with explicit_bzero and unmapped by
 * mask_set_free(). A set may be shared read-only by any number of streams
 * and threads.
 *
 * A mask_stream_t is the per-direction (per-message) state: it finds
 * patterns split across chunks of any size, replaces them with
 * leftmost-longest non-overlapping semantics, writes to a libevent
 * evbuffer and retains at most mask_set_holdmax() input bytes between
 * calls (the longest pattern - 1, plus the gap budget of line-broken
 * forms). It allocates nothing after mask_stream_new().
 *
 * Semantics (the reference implementation in the tests is exactly this):
 * scan the whole message from position p = 0; at p, if one or more
 * patterns' `from` strings occur starting at p, take the longest one
 * (equal `from` strings: the lowest pair index), emit its `to`, count it
 * for its pair and continue at p + length(from); otherwise emit the byte
 * at p and continue at p + 1. Chunking never changes the output. A gap
 * pair (struct mask_pair gaps) also occurs with gap bytes between its
 * bytes; "longest" then counts input bytes, and a match with gaps wins a
 * tie (docs/masking.md "Line-broken forms").
 *
 * Nothing here logs, and no function ever formats a pattern's bytes.
 */

/* Longest `from` or `to` accepted in a pair, in bytes (before percent
 * expansion, which may triple it). Bounds hold-back and per-stream memory. */
#define MASK_PATTERN_MAX_BYTES 16384
/* Most pairs in one set. */
#define MASK_SET_MAX_PAIRS 4096
/* Most `from` + `to` bytes in one set, percent forms included. */
#define MASK_SET_MAX_BYTES (4u << 20)
/* A `from` with up to this many bytes that a URL encoder escapes gets
 * every mix of raw and escaped forms of them (MASK_SET_PERCENT), a space
 * also as '+'; with more, by byte value, each subset of the optional
 * bytes it holds (those some encoders keep: / + = : @ ...) escaped when
 * there are at most MASK_PCT_CLASS_MAX distinct ones, else none or all of
 * them, the other bytes always escaped. Whatever the number, also the
 * form each known encoder writes (set.c pct_profiles[]: Python quote()
 * and quote_plus(), JavaScript encodeURIComponent, Go QueryEscape, Java
 * URLEncoder, PHP urlencode, ...), without duplicates. */
#define MASK_PCT_MIX_MAX 4
#define MASK_PCT_CLASS_MAX 4
/* A `from` longer than this (a key file, a certificate, their JSON and
 * base64 forms) gets only the forms the known encoders write, not the
 * mixes above: each percent form costs its length in every set
 * (docs/masking.md "What the forms cost"). */
#define MASK_PCT_FULL_MAX 1024

/* One substitution: occurrences of from[0..from_len) become to[0..to_len).
 * from_len >= 1. Sentinels and real values have equal lengths, but any
 * lengths work (to_len may be 0). The bytes are copied into the set. */
struct mask_pair {
	const void *from;
	size_t from_len;
	const void *to;
	size_t to_len;
	/* Which percent forms of this pair the set makes, where it makes
	 * them (MASK_SET_PERCENT, pct_from): MASK_PCT_ALL (zero, the
	 * default), MASK_PCT_ENCODERS (only what the known encoders write)
	 * or MASK_PCT_NONE (a form too unlikely in a URL to pay for them;
	 * tablesets.c). */
	unsigned char pct;
	/* Also find `from` with line breaks inside, as a line-broken
	 * encoding writes it (base64 at 60, 64 or 76 columns: GitHub's
	 * contents API, PEM, MIME): CR and LF, and JSON's "\n", "\r" and
	 * "\/" escapes, between any two of its bytes. The gap bytes stay in
	 * place and the others become `to`. Only where `from` holds none of
	 * those bytes itself, from_len == to_len and from_len <=
	 * MASK_GAP_MAX_BYTES; never for its percent forms. docs/masking.md
	 * "Line-broken forms". */
	bool gaps;
};

/* Longest `from` that may be found with gaps (struct mask_pair gaps). */
#define MASK_GAP_MAX_BYTES 8192

/* struct mask_pair pct. */
enum { MASK_PCT_ALL = 0, MASK_PCT_ENCODERS = 1, MASK_PCT_NONE = 2 };

/* mask_set_new() flags. */
enum {
	/* Also match the percent-encoded forms of each `from` in a request
	 * target and replace them by `to` encoded the same way (upper- or
	 * lower-case hex); see docs/masking.md "Percent-encoded forms". */
	MASK_SET_PERCENT = 1u << 0,
	/* Do not mlock the arena (tests, `check`); MADV_DONTDUMP and wiping
	 * still apply. */
	MASK_SET_NO_MLOCK = 1u << 1,
};

/* mask_set_hygiene() bits: what protection the secret arena really has. */
enum {
	MASK_HYG_LOCKED = 1u << 0,   /* mlock succeeded */
	MASK_HYG_DONTDUMP = 1u << 1, /* MADV_DONTDUMP applied */
	MASK_HYG_WIPEONFORK = 1u << 2, /* MADV_WIPEONFORK applied (Linux >= 4.14) */
};

/* Why mask_set_new() failed (STYLE.md 8: result enum + strerror). */
enum mask_set_result {
	MASK_SET_OK = 0,
	MASK_SET_ERR_ARGS,        /* too many pairs, or a NULL pointer with a length */
	MASK_SET_ERR_EMPTY,       /* a pair with from_len == 0 */
	MASK_SET_ERR_TOO_LONG,    /* from_len or to_len > MASK_PATTERN_MAX_BYTES */
	MASK_SET_ERR_TOO_BIG,     /* all patterns together > MASK_SET_MAX_BYTES */
	MASK_SET_ERR_NOMEM,       /* malloc or mmap failed */
	MASK_SET_ERR_MLOCK,       /* mlock failed other than EPERM/ENOMEM/EAGAIN */
	MASK_SET_ERR_MADVISE,     /* madvise(MADV_DONTDUMP) failed */
};

typedef struct mask_set mask_set_t;
typedef struct mask_stream mask_stream_t;

/*
 * Compiles npairs pairs (npairs may be 0: a set that matches nothing)
 * into an immutable set. flags: MASK_SET_* above. Returns the set, owned
 * by the caller who frees it with mask_set_free(), or NULL with *res set
 * (errno is preserved from the failing call for NOMEM/MLOCK/MADVISE).
 * When mlock is refused for lack of privilege or quota (EPERM, ENOMEM,
 * EAGAIN) the set is still returned, without MASK_HYG_LOCKED in
 * mask_set_hygiene(): the caller must warn. Not for event-loop callbacks
 * (it mmaps and may take milliseconds for large sets).
 */
mask_set_t *mask_set_new(const struct mask_pair *pairs, size_t npairs, unsigned flags,
			 enum mask_set_result *res) NONNULL(4) WUNRES MALLOC;

/*
 * The same, where only the pairs from index pct_from on also match their
 * percent-encoded forms (mask_set_new() with MASK_SET_PERCENT is
 * pct_from 0, without it pct_from npairs); MASK_SET_PERCENT in flags is
 * ignored. The outbound sets use it: sentinels raw only, the real-value
 * forms that refuse a request in every encoding (tablesets.c).
 */
mask_set_t *mask_set_new_pct(const struct mask_pair *pairs, size_t npairs, size_t pct_from,
			     unsigned flags, enum mask_set_result *res) NONNULL(5) WUNRES MALLOC;

/*
 * What the pairs weigh against MASK_SET_MAX_BYTES as mask_set_new_pct()
 * counts it (from and to of each pattern, percent forms of the pairs
 * from pct_from on): the total, and pair i's share in each[i] when each
 * is not NULL. Nothing is built. SIZE_MAX on ENOMEM.
 */
size_t mask_set_pairs_bytes(const struct mask_pair *pairs, size_t npairs, size_t pct_from, size_t *each);

/* Wipes the arena (explicit_bzero), unlocks and unmaps it, frees the set.
 * NULL is a no-op. Every stream on the set must be freed first. */
void mask_set_free(mask_set_t *set);

/* Static English text for a result; never NULL, never names a secret. */
const char *mask_set_strerror(enum mask_set_result res);

/* MASK_HYG_* bits actually achieved for the set's arena. Pure. */
unsigned mask_set_hygiene(const mask_set_t *set) NONNULL(1);

/* Number of pairs given to mask_set_new(): the size of count arrays. */
size_t mask_set_npairs(const mask_set_t *set) NONNULL(1);

/* Whether every pattern's `to` has its `from`'s length (percent forms
 * included): what mask_replace_inplace() needs. Pure. */
bool mask_set_equal_len(const mask_set_t *set) NONNULL(1);

/* Whether some pair's `from` holds ':' or begins or ends with a space or
 * tab: a match could then take in a header field's colon or the white
 * space around its value, which the next hop strips (percent forms hold
 * neither raw). Pure. */
bool mask_set_field_syntax(const mask_set_t *set) NONNULL(1);

/* Length of the longest `from` in the set, percent forms included (0 for
 * an empty set). A stream holds back at most mask_set_holdmax(). */
size_t mask_set_maxlen(const mask_set_t *set) NONNULL(1);

/* Most input bytes a stream on the set holds back between calls: the
 * longest `from` minus one, plus the gap bytes a match may span (struct
 * mask_pair gaps); 0 for an empty set. Pure. */
size_t mask_set_holdmax(const mask_set_t *set) NONNULL(1);

/*
 * Creates a stream on set, which must outlive it. Allocates its hold-back
 * buffer, pending ring and per-pair counters now, so feeding never
 * allocates except inside libevent. Returns NULL on ENOMEM. The caller
 * owns the stream and frees it with mask_stream_free().
 */
mask_stream_t *mask_stream_new(const mask_set_t *set) NONNULL(1) WUNRES MALLOC;

/* Wipes the hold-back (it may hold part of a secret) and frees. NULL: no-op. */
void mask_stream_free(mask_stream_t *st);

/*
 * Scans len bytes at data (len may be 0) and appends the substituted
 * output to out: runs of unmatched bytes with one evbuffer_add() each,
 * replacements with one evbuffer_add() of `to`. Up to mask_set_holdmax()
 * bytes that may begin a match are copied into the stream and come out with a later
 * call or with mask_stream_finish(). Returns 0, or -1 if libevent failed
 * to append (ENOMEM): the stream is then failed and only
 * mask_stream_reset() or mask_stream_free() may follow. Safe to call from
 * libevent callbacks; data may point into out's source but not into out.
 */
int mask_stream_feed(mask_stream_t *st, const void *data, size_t len, struct evbuffer *out)
	NONNULL(1, 4) WUNRES;

/*
 * Like mask_stream_feed() on the first len bytes of in, which it drains
 * (len must not exceed evbuffer_get_length(in); in != out). Runs of
 * unmatched bytes move from in to out with evbuffer_remove_buffer(), which
 * relinks whole libevent chains instead of copying them; only the
 * hold-back and the partial chains at run edges are copied. Returns 0 or
 * -1 as mask_stream_feed() (and -1 with EINVAL if len is too large, before
 * anything is drained).
 */
int mask_stream_feed_buffer(mask_stream_t *st, struct evbuffer *in, size_t len,
			    struct evbuffer *out) NONNULL(1, 2, 4) WUNRES;

/*
 * End of message: the held-back bytes can no longer grow into a longer
 * match, so they are resolved and appended to out. The stream then starts
 * a new message (counters are kept; see mask_stream_reset()). Returns 0 or
 * -1 as mask_stream_feed().
 */
int mask_stream_finish(mask_stream_t *st, struct evbuffer *out) NONNULL(1, 2) WUNRES;

/*
 * A scan with case ignored, for a set of folded patterns (the table's
 * folded set, mask_fold()): len bytes at data are folded (mask_fold())
 * a piece at a time into a stack copy, wiped after, and run through the
 * automaton; a match is only counted (mask_stream_count(),
 * mask_stream_total()), nothing is written anywhere. Across calls the
 * stream holds back (mask_stream_held(), folded) what may begin a
 * match, as a feed does, and up to 2 input bytes that began a wide form
 * (their end decides): the caller keeps mask_table_folded_holdmax()
 * of the last input bytes it scanned from going on until the next call
 * tells. Gap patterns are
 * counted as found, without their gaps rebuilt. Returns 0 or -1 (a
 * failed stream). mask_stream_scan_end(): the end of the text, the held
 * bytes settled (counted) and dropped, the stream ready for a new one
 * (counters kept).
 */
int mask_stream_scan_folded(mask_stream_t *st, const void *data, size_t len) NONNULL(1) WUNRES;
int mask_stream_scan_end(mask_stream_t *st) NONNULL(1) WUNRES;

/*
 * The fold of a scan with case ignored (round 41): dst = src[0..len)
 * with ASCII A-Z lower-cased and the UTF-8 forms of the four code points
 * a case mapping or fold takes to or from an ASCII letter as that
 * letter: U+0130 and U+0131 (the Turkish and Azeri dotted capital I and
 * dotless small i) as 'i', U+017F (long s) as 's', U+212A (Kelvin sign)
 * as 'k'; and one U+0307 (combining dot above) right after what folded
 * to 'i' dropped (the root lower case of U+0130 is "i" U+0307, its NFD
 * "I" U+0307; review41d). Returns the length written (at most len; dst
 * may be src). mask_fold_rawmax(): the most input bytes a text whose
 * fold is folded[0..len) can take (an 'i' four, U+0130 U+0307; a 'k'
 * three, an 's' two). Pure.
 */
size_t mask_fold(void *dst, const void *src, size_t len) NONNULL(1, 2);
size_t mask_fold_rawmax(const void *folded, size_t len) NONNULL(1);

/* Discards any held-back bytes (wiped), clears the failed flag and zeroes
 * the counters: ready for a new message. */
void mask_stream_reset(mask_stream_t *st) NONNULL(1);

/* Input bytes currently held back (<= mask_set_holdmax()). Pure. */
size_t mask_stream_held(const mask_stream_t *st) NONNULL(1);

/* Replacements of pair `pair` since creation or the last reset; 0 for an
 * index out of range. Pure. */
uint64_t mask_stream_count(const mask_stream_t *st, size_t pair) NONNULL(1);

/* Sum of all replacements since creation or the last reset. Pure. */
uint64_t mask_stream_total(const mask_stream_t *st) NONNULL(1);

/*
 * One-shot substitution of a complete buffer (a header value, a request
 * target): same semantics as feed + finish on a fresh stream. Appends to
 * out. counts, when not NULL, has mask_set_npairs() entries and is
 * incremented per replacement; *total, when not NULL, is set to the number
 * of replacements. Allocates a scratch of O(maxlen) per call. Returns 0 or
 * -1 (ENOMEM; out may then hold a partial result).
 */
int mask_replace_buf(const mask_set_t *set, const void *in, size_t len, struct evbuffer *out,
		     uint64_t *counts, size_t *total) NONNULL(1, 4) WUNRES;

/*
 * The same, in place, for sets whose every pair has from_len == to_len
 * (the sentinel <-> real value sets): buf keeps its length. Returns 0, or
 * -1 with EINVAL for a set with unequal lengths (buf untouched) or ENOMEM.
 */
int mask_replace_inplace(const mask_set_t *set, void *buf, size_t len, uint64_t *counts,
			 size_t *total) NONNULL(1) WUNRES;

/* ------------------------------------------------------------------ */
/* Sentinels (sentinel.c)                                               */
/* ------------------------------------------------------------------ */

/* A sentinel keeps a value's well-known type prefix and carries at least
 * POLICY_MIN_SENTINEL_BITS random bits: the token shapes are policy's
 * (policy_token_prefix_len(), policy_sentinel_bits(), policy/tokens.c). */

/* Why mask_sentinel_make() failed (STYLE.md 8). */
enum mask_sentinel_result {
	MASK_SENTINEL_OK = 0,
	MASK_SENTINEL_TOO_SHORT, /* < POLICY_MIN_SENTINEL_BITS random bits */
	MASK_SENTINEL_RANDOM,    /* getrandom() failed (errno kept) */
	MASK_SENTINEL_CRYPTO,    /* the keyed hash (OpenSSL) failed */
	MASK_SENTINEL_EQUAL,     /* kept drawing the real value (cannot happen
				    with >= 64 bits unless the CSPRNG is broken) */
};

/*
 * Writes to out (len bytes, no NUL added) a fresh sentinel for value:
 * the known prefix kept, every other ASCII letter and digit replaced by
 * one drawn uniformly (rejection sampling, no modulo bias) from its class
 * (a-z, A-Z, 0-9) with the kernel CSPRNG (getrandom), every other byte
 * kept. Never equal to value (redrawn). On failure out is wiped. Not for
 * event-loop callbacks (it may block until the CSPRNG is seeded, at boot).
 */
enum mask_sentinel_result mask_sentinel_make(const char *value, size_t len, char *out)
	NONNULL(1, 3) WUNRES;

/* Bytes of the host-held sentinel key (SPEC §4.1). */
#define MASK_KEY_BYTES 32

/*
 * Writes to out (len bytes, no NUL added) the stable sentinel of value
 * for the credential `name` (docs/masking.md: "env:VAR", "file:PATH",
 * "file:PATH#N" for extract match N): the same shape rules as
 * mask_sentinel_make(), with the bytes drawn from HMAC-SHA256 under key
 * in counter mode (HKDF-expand) instead of the CSPRNG, from an input that
 * encodes (name, value, attempt) unambiguously. A function of its inputs:
 * the same key, name, value and attempt give the same sentinel in every
 * session. attempt: 0, or the next one when the caller needs another
 * (a clash with another value). Never equal to value. On failure out is
 * wiped. Pure apart from OpenSSL.
 */
enum mask_sentinel_result mask_sentinel_derive(const unsigned char key[MASK_KEY_BYTES],
					       const char *name, const char *value, size_t len,
					       unsigned attempt, char *out) NONNULL(1, 2, 3, 6) WUNRES;

/* Static English text for a result; never NULL, never names a value. */
const char *mask_sentinel_strerror(enum mask_sentinel_result res);

/* ------------------------------------------------------------------ */
/* Secret storage (secret.c)                                            */
/* ------------------------------------------------------------------ */

/*
 * An append-only arena of anonymous mmap'd chunks, each MADV_DONTDUMP
 * (required), MADV_WIPEONFORK (best effort) and mlock'ed when the kernel
 * allows it. Allocations live until mask_secrets_free(), which wipes
 * every chunk (explicit_bzero), unlocks and unmaps it. There is no
 * function that prints or formats the contents.
 */
typedef struct mask_secrets mask_secrets_t;

/* Creates an empty arena. Returns NULL with errno on failure. The caller
 * owns it and frees it with mask_secrets_free(). */
mask_secrets_t *mask_secrets_new(void) WUNRES MALLOC;

/*
 * Returns len zeroed bytes in the arena (len may be 0: one byte is
 * reserved), 16-byte aligned, owned by the arena. NULL with errno on
 * failure: ENOMEM (mmap), or what madvise(MADV_DONTDUMP) or mlock said
 * when mlock failed other than for lack of privilege or quota.
 */
void *mask_secrets_alloc(mask_secrets_t *s, size_t len) NONNULL(1) WUNRES;

/*
 * MASK_HYG_* bits that hold for every chunk mapped so far
 * (all of them for an arena with no chunk yet). Without MASK_HYG_LOCKED
 * the caller must warn: mlock was refused (EPERM/ENOMEM/EAGAIN).
 */
unsigned mask_secrets_hygiene(const mask_secrets_t *s) NONNULL(1);

/* Bytes mapped (and locked, if MASK_HYG_LOCKED) so far. Pure. */
size_t mask_secrets_mapped(const mask_secrets_t *s) NONNULL(1);

/* Wipes, unlocks and unmaps every chunk and frees the arena. NULL: no-op. */
void mask_secrets_free(mask_secrets_t *s);

/* ------------------------------------------------------------------ */
/* The sentinel ledger (ledger.c)                                        */
/* ------------------------------------------------------------------ */

/* Sentinels kept per credential name, names kept, longest sentinel
 * recorded (longer ones, whole files, are not), and the largest ledger
 * file the CLI reads. */
#define MASK_LEDGER_PER_NAME 4
#define MASK_LEDGER_NAMES 128
#define MASK_LEDGER_SENTINEL_MAX 2048
#define MASK_LEDGER_FILE_MAX (4u << 20)

/*
 * For each credential name, the last MASK_LEDGER_PER_NAME stable
 * sentinels issued for it (SPEC §4.1, docs/masking.md "Stable
 * sentinels"): those that are no longer its sentinel are stale. Holds
 * sentinels only, never a real value. Pure: the CLI reads and writes the
 * file.
 */
typedef struct mask_ledger mask_ledger_t;

/* An empty ledger; NULL on ENOMEM. Freed with mask_ledger_free(). */
mask_ledger_t *mask_ledger_new(void) WUNRES MALLOC;

/* Parses the file format (mask_ledger_format()); len may be 0. NULL with
 * a message in err ("line N: expected ...", "out of memory"). */
mask_ledger_t *mask_ledger_parse(const char *text, size_t len, char *err, size_t errlen)
	NONNULL(3) WUNRES MALLOC;

/* NULL is a no-op. */
void mask_ledger_free(mask_ledger_t *lg);

/* The sentinels recorded for name, oldest first: how many, and the i-th
 * (NUL-terminated, *len bytes; NULL when out of range). Pure. */
size_t mask_ledger_count(const mask_ledger_t *lg, const char *name) NONNULL(1, 2);
const char *mask_ledger_get(const mask_ledger_t *lg, const char *name, size_t i, size_t *len)
	NONNULL(1, 2, 4);
/* Names recorded. Pure. */
size_t mask_ledger_names(const mask_ledger_t *lg) NONNULL(1);

/* The ledger's text (comment lines, then one line per name), malloc'd,
 * NUL-terminated, *len bytes; NULL on ENOMEM. */
char *mask_ledger_format(const mask_ledger_t *lg, size_t *len) NONNULL(1, 2) WUNRES MALLOC;

/* What a stable table needs (mask_table_new_stable()): the host-held key
 * (MASK_KEY_BYTES, the caller's locked memory, only read while the table
 * is built) and the ledger read at start (NULL: none). */
struct mask_stable {
	const unsigned char *key;
	const mask_ledger_t *ledger;
};

/* ------------------------------------------------------------------ */
/* The credential table (table.c, tablesets.c)                          */
/* ------------------------------------------------------------------ */

/*
 * A mask_table_t is built once from a policy at start (privileged setup,
 * before the event loop). It copies what it needs (names, paths, inject
 * hosts), so the policy may be freed or reloaded afterwards. Not
 * thread-safe: mask_table_outbound() fills a cache. One event loop.
 *
 * Terms: a *credential* is a policy credential in mode mask whose source
 * exists (set variable, readable file); a *value* is a distinct real
 * value (a whole variable, a whole file, or one extract group 1 match);
 * each value has one sentinel. Several credentials may share a value.
 */
typedef struct mask_table mask_table_t;

/*
 * Reads every masked credential of p: env vars from this process's
 * environment, files whole or through `extract` (group 1 of each match).
 * An unset variable or a missing file is skipped (mask_table_check()
 * warns about it). Generates the sentinels. Returns the table (the
 * caller frees it with mask_table_free()), or NULL with a one-line
 * message in err naming the credential, never its value (e.g. "credential
 * NAME: too short to mask; use mode: deny", "credential NAME: cannot read
 * it: ..."). Setup code only.
 */
mask_table_t *mask_table_new(const policy_t *p, char *err, size_t errlen) NONNULL(1, 2) WUNRES MALLOC;

/*
 * The same with stable sentinels (SPEC §4.1) when st is not NULL: each
 * value's sentinel is mask_sentinel_derive() under st->key and the
 * value's name (its first holder's, mask_table_value_name()), and every
 * sentinel st->ledger recorded under that name that is not its sentinel
 * now (nor any current sentinel or real value, and with a sentinel's
 * entropy) is stale: in a request head, on any host, it gets the request
 * refused (MASK_RULE_STALE). st NULL: mask_table_new() (`sentinels:
 * per-session`, CSPRNG). The key is not kept.
 */
mask_table_t *mask_table_new_stable(const policy_t *p, const struct mask_stable *st, char *err,
				    size_t errlen) NONNULL(1, 3) WUNRES MALLOC;

/* Records the current sentinel of every value of a stable table under its
 * name as the newest (a per-session table records nothing). 0 or -1
 * (ENOMEM). */
int mask_ledger_record(mask_ledger_t *lg, const mask_table_t *t) NONNULL(1, 2) WUNRES;

/*
 * One finding of mask_table_check() about credential policy_cred(p, cred):
 * an error (the value cannot be masked: `check`, `proxy` and `run` must
 * refuse the policy) or a warning. msg is one line without location or
 * newline, naming the credential and never its value; it lives until
 * the callback returns.
 */
typedef void mask_diag_fn(void *arg, size_t cred, bool error, const char *msg);

/*
 * The checks of SPEC §3.2 and §4.1 on the real values (the policy loader
 * no longer reads secrets): reads every masked value as mask_table_new()
 * does and reports through fn, in policy order, with these wordings:
 *  - error "credential NAME: the value is | the file content is | a value
 *    extracted (group 1) is too short to mask (N random bits in a
 *    sentinel), expected at least 64; use mode: deny";
 *  - error "credential NAME cannot be read (ERRNO TEXT), expected a
 *    readable regular file of at most 1048576 bytes";
 *  - warning "credential NAME is not set in this environment; its length
 *    could not be checked", "credential NAME does not exist; its length
 *    could not be checked", "credential NAME is accessible to group or
 *    others (mode 644); chmod 600 it", "credential NAME: extract matches
 *    nothing in the file now, so nothing would be masked".
 * Returns the number of errors. Values are read into the secret arena and
 * wiped before it returns; nothing is kept. Setup code only.
 */
unsigned mask_table_check(const policy_t *p, mask_diag_fn *fn, void *arg) NONNULL(1, 2);

/* Wipes every real value and sentinel, frees every set. NULL: no-op.
 * Sets returned by the table must no longer be in use. */
void mask_table_free(mask_table_t *t);

/* MASK_HYG_* bits of the secret storage and of every set built so far. */
unsigned mask_table_hygiene(const mask_table_t *t) NONNULL(1);

/* Credentials (index order is policy order among those kept) and values. */
size_t mask_table_cred_count(const mask_table_t *t) NONNULL(1);
/* The env var name or the file path as written in the policy. */
const char *mask_table_cred_name(const mask_table_t *t, size_t cred) NONNULL(1);
size_t mask_table_value_count(const mask_table_t *t) NONNULL(1);
/* The first credential holding value i (for naming it). */
size_t mask_table_value_cred(const mask_table_t *t, size_t value) NONNULL(1);
/* Value i's name for derivation and the ledger (return value) and its
 * sentinel (*sentinel, *len bytes); NULL when out of range. Owned by the
 * table. */
const char *mask_table_value_name(const mask_table_t *t, size_t value, const char **sentinel,
				  size_t *len) NONNULL(1, 3, 4);
/* Whether the sentinels were derived from a key (mask_table_new_stable()). */
bool mask_table_stable(const mask_table_t *t) NONNULL(1);
/* Whether the forms of some values over 4 KiB (their base64 and their
 * line-broken pieces past 8 KiB, PHP's JSON) were left out of the sets, which held
 * too much with them (docs/masking.md "What the forms cost"): such a
 * value is then re-masked as it is, joined onto one line, or with line
 * breaks up to 8 KiB only. The caller tells the user (review39b: it was
 * silent). */
bool mask_table_forms_small(const mask_table_t *t) NONNULL(1);
/* The k-th value (from 0) that goes without those forms: the name of the
 * first credential holding it (a variable's name or a file's path, no
 * value); NULL past the last. Only the largest values go without them,
 * as many as the sets' bound needs (round 40: all of them did). */
const char *mask_table_forms_small_cred(const mask_table_t *t, size_t k) NONNULL(1);
/* Stale sentinels the table refuses (from the ledger). */
size_t mask_table_stale_count(const mask_table_t *t) NONNULL(1);

/*
 * The masked variables the sandbox sees, in policy order: how many, and
 * the i-th one's name (return value) with its sentinel (*sentinel,
 * NUL-terminated, the real value's length). Strings owned by the table,
 * valid until mask_table_free(). NULL (and *sentinel NULL) when i is out
 * of range. Pure.
 */
size_t mask_table_env_count(const mask_table_t *t) NONNULL(1);
const char *mask_table_env_get(const mask_table_t *t, size_t i, const char **sentinel) NONNULL(1, 3);

/*
 * Overwrites, in place, the value of each masked variable in this
 * process's environment with its sentinel (same length), when it still
 * holds the real value read by mask_table_new(). The real value then
 * lives only in the locked arena: not in /proc/self/environ (initial
 * variables are rewritten where the kernel put them), and not in the
 * environment any child inherits, which sees the sentinel. Returns the
 * number of variables rewritten. Setup code only (not thread-safe with
 * getenv/setenv in other threads).
 */
size_t mask_table_scrub_environ(const mask_table_t *t) NONNULL(1);

/*
 * Writes into dir (which must exist) one 0600 file per masked file
 * credential: the original content with each secret replaced by its
 * sentinel, byte for byte. Names are "N-BASENAME" (N: credential index);
 * an existing entry of that name is replaced (unlinked first, then
 * created O_EXCL|O_NOFOLLOW). Returns 0, or -1 with a message in err.
 * The mapping is then available through mask_table_file_copy().
 */
int mask_table_write_files(mask_table_t *t, const char *dir, char *err, size_t errlen)
	NONNULL(1, 2, 3) WUNRES;

/* Number of masked file credentials, and the i-th: its host path (return
 * value) and, once mask_table_write_files() succeeded, its copy (*copy,
 * else NULL). Strings owned by the table. NULL when i is out of range. */
size_t mask_table_file_count(const mask_table_t *t) NONNULL(1);
const char *mask_table_file_copy(const mask_table_t *t, size_t i, const char **copy) NONNULL(1, 3);

/*
 * What may be injected on one request: set has one pair per value,
 * pair i = value i. For a value some credential may inject here
 * (inject[i] != 0) the pair is sentinel -> real; for any other value it is
 * sentinel -> sentinel, so its count reveals a sentinel going where it
 * may not (403 in headers and the target, recorded in bodies).
 * cred[i] names the credential of pair i: the injecting one, else the
 * first holder. Everything is owned by the table and lives until
 * mask_table_free(); sets have equal-length pairs (mask_replace_inplace).
 */
struct mask_outbound {
	const mask_set_t *set;
	size_t npairs;
	const unsigned char *inject; /* [npairs] */
	const uint32_t *cred;        /* [npairs] */
	bool any;                    /* some inject[i] != 0 */
	/* Pairs npairs .. npairs + nforms - 1 of set are the real values in
	 * every form the remask set knows (raw, JSON-escaped, base64; with
	 * their percent forms in every set), each mapped to the same form of
	 * its sentinel: a count there is a real value on its way out (SPEC
	 * §4.2: refused). form_value[k] is the value of pair npairs + k. */
	size_t nforms;
	const uint32_t *form_value;  /* [nforms] */
	/* Pairs npairs + nforms .. + nstale - 1 are the stale sentinels
	 * (each mapped to itself): a count there is a stale sentinel in the
	 * request (refused in heads, MASK_RULE_STALE). stale_value[k] is the
	 * value whose name recorded it. */
	size_t nstale;
	const uint32_t *stale_value; /* [nstale] */
};

/*
 * Eligibility of a request to host:port (host as the client sent it; it
 * is normalised here, one that does not normalise gets no injection),
 * over TLS whose upstream certificate was verified (tls_verified) or not
 * (then only with allowPlaintextInject), for one place `where` (one of
 * INJECT_HEADER, INJECT_QUERY, INJECT_BODY; the INJECT_QUERY set also
 * matches the percent-encoded forms, MASK_SET_PERCENT). A credential is
 * eligible when one of its injectHosts matches and its injectIn has
 * `where`. Sets are cached by (eligible credentials, percent): exact
 * inject hosts are built by mask_table_new(), any other combination on
 * first use; after that no allocation. Returns 0, or -1 with errno when
 * a set could not be built (ENOMEM). Event-loop safe once warm.
 */
int mask_table_outbound(mask_table_t *t, const char *host, uint16_t port, bool tls_verified,
			unsigned where, struct mask_outbound *out) NONNULL(1, 2, 6) WUNRES;

/*
 * The remask set for every response from every host (§4.3): real ->
 * sentinel for every value, pair i = value i, percent forms included.
 * Owned by the table.
 */
const mask_set_t *mask_table_inbound_set(const mask_table_t *t) NONNULL(1);

/*
 * The folded set: every raw real value folded (mask_fold()), once (two
 * values differing only in case are one pair), and the pieces a form
 * reader splits a value holding '&' or ';' into (those the remask set
 * has as forms), each mapped to itself; for a scan with case ignored
 * (mask_stream_scan_folded()). Owned by the table.
 * mask_table_folded_cred(): the credential of pair `pair`, -1 when out
 * of range. mask_table_folded_holdmax(): the input bytes a scan with it
 * may hold back (a wide form is longer than its letter), 0 without it.
 */
const mask_set_t *mask_table_folded_set(const mask_table_t *t) NONNULL(1);
size_t mask_table_folded_holdmax(const mask_table_t *t) NONNULL(1);
long mask_table_folded_cred(const mask_table_t *t, size_t pair) NONNULL(1);

/*
 * Whether every real value's UTF-16LE, UTF-16BE, UTF-32LE and UTF-32BE
 * forms are in the remask set (-> its sentinel's) and, folded, in the
 * folded set (round 45; UTF-32's folded since perf46m): true when every value is UTF-8 text
 * (perf46m: non-ASCII and over 1 KiB too, the latter in pieces) and the
 * sets stayed within their bounds with them. Then a
 * body in UTF-16 or UTF-32 is re-masked like any other; else the proxy
 * cuts a body of an inject host that begins as such text (proxy/cmask.c
 * lead_wide()).
 */
bool mask_table_wide_forms(const mask_table_t *t) NONNULL(1);

/*
 * Whether value `value`'s real value holds a '#' or a %XX escape (two hex
 * digits after a '%'). Its sentinel raw in a request target is refused
 * (MASK_RULE_URL_RAW), not swapped: a server's URL parser would end the
 * query at the '#' (Python's urlsplit(), and the prefix of the value came
 * back in an echo, a form no re-masker knows) or decode the escape. Its
 * percent-encoded sentinel (%23, %25) is swapped as any other.
 */
bool mask_table_value_url_raw(const mask_table_t *t, size_t value) NONNULL(1);

/*
 * Re-masks the len bytes at in through the inbound set (every form of
 * every real value -> its sentinel in that form), for what `run` hands
 * the command besides the masked credentials themselves: other
 * variables' values, the command's arguments, files it reads (round 34
 * of the attack, M1). Returns 1 with *out a new NUL-terminated buffer of
 * *outlen bytes (the caller frees it) when anything was replaced, 0
 * (*out NULL) when in holds no real value, -1 with errno (ENOMEM). What
 * the stream held back is wiped; *out holds no real value.
 */
int mask_table_remask(const mask_table_t *t, const void *in, size_t len, char **out, size_t *outlen)
	NONNULL(1, 4, 5) WUNRES;

/*
 * Whether a real value of at least 8 bytes occurs in the len bytes at in
 * in a form mask_table_remask() does not rewrite (the review of round 35,
 * F5; session 36): in another case (hex, base32, and the value itself
 * when it has 16 bytes or more, compared without case), hex, base32,
 * base64 (either alphabet, at any offset in the decoded bytes) of the
 * value or of its UTF-16LE, rot13, reversed, in in as it is or with its
 * white space and backslash-newlines removed, then with its escapes
 * decoded and quotes taken out up to three times (%XX, %uHHHH, C, JSON,
 * JavaScript, shell and HTML escapes, the shell's quotes: table.c
 * enc_unescape()), where the whole value is looked for as it is too; a
 * part of the value too (every 12-byte window, table.c enc_value_in()),
 * not a vendor's public prefix (enc_secret_start()) nor a private key's
 * public structure (enc_key_in()). For what `run` hands the command: a
 * variable found is dropped, an argument or a file searched refuses the
 * start. -1 with errno (ENOMEM), 0, or 1. Its scratch copies are wiped.
 * The first call builds the table's needles into its arena (t is
 * logically const): call it from one thread at a time (run's start-up).
 */
int mask_table_encoded_real(const mask_table_t *t, const void *in, size_t len) NONNULL(1) WUNRES;

/*
 * Whether a sentinel (raw or percent-encoded) occurs in buf: returns the
 * credential index of the first value found (lowest value index), or -1
 * when none (or on ENOMEM, errno set). Meant for a header value or target
 * *after* the eligible substitution, so what is left may not go there.
 */
long mask_table_find_sentinel(mask_table_t *t, const void *buf, size_t len) NONNULL(1);

/*
 * Whether a real value, in any form the remask set knows (raw,
 * JSON-escaped, with changed line ends, base64, and their percent forms),
 * occurs in buf as it is or, when buf holds a '%', in buf with every %XX
 * decoded (%67hp_ for ghp_), or, when buf holds a '+' and some value a
 * space, with '+' as a space too: returns the credential index of the
 * value found, or -1 when none
 * (or on ENOMEM, errno set). For a request head, before anything of it
 * goes anywhere (SPEC §4.2). Copies into a scratch of the table that is
 * wiped after use.
 */
long mask_table_find_real(mask_table_t *t, const void *buf, size_t len) NONNULL(1);

/*
 * mask_table_find_real() for a name (a DNS question, a server name, a
 * URL's host) or a line that quotes one, which any resolver or server may
 * take in any case: then every raw real value (each of them: the table
 * holds none over MASK_PATTERN_MAX_BYTES) is
 * also looked for with ASCII case ignored (one pass over a lower-cased
 * copy, linear in len). Returns the credential index, or -1 (errno ENOMEM
 * on failure, else 0).
 */
long mask_table_find_real_name(mask_table_t *t, const void *buf, size_t len) NONNULL(1);

/*
 * mask_table_find_real_name() for buf just remasked in place with the
 * inbound set, which made `replaced` replacements: with none, the exact
 * pass over buf as it is (the detect set) is skipped, since it cannot
 * find a form the remask set did not (it holds them all); the %XX and
 * '+' passes and the case-folded pass run as there. A response head.
 */
long mask_table_find_real_remasked(mask_table_t *t, const void *buf, size_t len, size_t replaced) NONNULL(1);

/*
 * Adds to counts[v] the sentinels of each value v in buf with every %XX
 * decoded, and the stale sentinels where an outbound set counts them
 * (struct mask_outbound); nothing when buf has no '%'. counts has
 * mask_table_value_count() + mask_table_form_count() +
 * mask_table_stale_count() entries. For the request target after substitution: a sentinel spelled with
 * escapes no encoder writes is found too. Returns 0 or -1 (ENOMEM).
 */
int mask_table_sentinels_decoded(mask_table_t *t, const void *buf, size_t len, uint64_t *counts)
	NONNULL(1, 4) WUNRES;

/* Number of real-value forms (pairs of mask_table_inbound_set()); an
 * outbound set has at most mask_table_value_count() + this many pairs. */
size_t mask_table_form_count(const mask_table_t *t) NONNULL(1);

/* ------------------------------------------------------------------ */
/* Authorization: Basic (basic.c)                                       */
/* ------------------------------------------------------------------ */

/* Strict standard base64 (RFC 4648 §4, padded, no whitespace). Decodes
 * into out (room for len / 4 * 3 bytes); returns the decoded length, or
 * -1 when in is not base64. Pure. */
long mask_b64_decode(const char *in, size_t len, unsigned char *out, size_t outcap) NONNULL(1, 3);

/* Encodes len bytes into out (room for 4 * ((len + 2) / 3) bytes, no NUL
 * added); returns the encoded length, or -1 if out is too small. Pure. */
long mask_b64_encode(const unsigned char *in, size_t len, char *out, size_t outcap) NONNULL(1, 3);

/*
 * Substitutes in place inside the base64 credentials of an
 * `Authorization: Basic` value (b64 points after "Basic "; its length is
 * kept, since set has equal-length pairs): decodes user:password,
 * mask_replace_inplace() with counts/total as there, re-encodes. The
 * decoded scratch is wiped. Returns 0 (also when nothing matched), 1
 * when b64 is not strict base64 (left untouched), -1 on ENOMEM or a set
 * with unequal pairs (errno).
 */
int mask_basic_replace(const mask_set_t *set, char *b64, size_t len, uint64_t *counts,
		       size_t *total) NONNULL(1, 2) WUNRES;

/* ------------------------------------------------------------------ */
/* One connection's exchanges (exchange.c)                              */
/* ------------------------------------------------------------------ */

/*
 * The coarse API the proxy uses (SPEC §4.2, §4.3): one call per request
 * head, one per response head, one per body chunk, and the audit figures
 * of the current request. A mask_exch_t holds, for one connection on a
 * table (not owned, which must outlive it), the scratch counts, the
 * credentials injected on the current request and one body stream per
 * direction. One event loop; every function below may be called from
 * event-loop callbacks (mask_exch_body_begin() builds a stream the first
 * time a set is met, and mask_table_outbound() may build a set for a
 * host combination no exact inject host warmed).
 */
typedef struct mask_exch mask_exch_t;

/* Body directions: towards the upstream (inject, detect), towards the
 * client (remask). */
enum mask_dir { MASK_OUT = 0, MASK_IN = 1 };

/* Creates the state for one connection. NULL on ENOMEM. The caller owns
 * it and frees it with mask_exch_free(). */
mask_exch_t *mask_exch_new(mask_table_t *t) NONNULL(1) WUNRES MALLOC;

/* Frees (wiping the streams' hold-back). NULL is a no-op. */
void mask_exch_free(mask_exch_t *x);

/* A new request: forgets the previous one's figures; both body streams
 * are reset (held bytes wiped) and inactive. */
void mask_exch_begin(mask_exch_t *x) NONNULL(1);

/* Whether some credential may be injected towards host:port anywhere. */
bool mask_exch_inject_host(mask_exch_t *x, const char *host, uint16_t port) NONNULL(1, 2);

/* Where a refused sentinel sat, and which policy setting refuses it. */
enum mask_where { MASK_WHERE_HEADER, MASK_WHERE_TARGET, MASK_WHERE_HOST, MASK_WHERE_NAME, MASK_WHERE_EDGE };
enum mask_rule {
	MASK_RULE_INJECT_HOSTS, /* host:port is not in the credential's injectHosts */
	MASK_RULE_INJECT_IN,    /* its injectIn does not list the place (or the Host field) */
	MASK_RULE_PLAINTEXT,    /* plain HTTP without credentials.allowPlaintextInject */
	MASK_RULE_STALE,        /* a stale sentinel (earlier key or value, SPEC §4.1), any host */
	MASK_RULE_URL_RAW,      /* raw in the target, its value holding '#' or %XX (round 45) */
};
struct mask_refusal {
	const char *cred; /* credential name (owned by the table), or NULL */
	bool env;         /* cred is an environment variable (for the stale reason) */
	enum mask_where where;
	enum mask_rule rule;
};

enum mask_head_result { MASK_HEAD_OK = 0, MASK_HEAD_REFUSED, MASK_HEAD_NOMEM };

/*
 * Checks and substitutes in place, for host:port over verified TLS or
 * not, the serialised request head head[0..len) (request line, CRLF
 * fields, the empty line): the target (its percent forms too, and a
 * sentinel spelled with any %XX escapes is found), every field, the
 * decoded user:password of Authorization: Basic; the Host field is never
 * substituted and may carry no sentinel, and neither may a field's name
 * (nor any form of one: a hop that folds a name's case would hand the
 * real value back unrecognised). Sentinels become real values
 * where a credential may be injected (recorded for mask_exch_injected());
 * a real value in any form becomes its sentinel's form (bodies and heads
 * are refused for that by the caller's mask_exch_find_real()). Returns
 * MASK_HEAD_OK; MASK_HEAD_REFUSED when a sentinel sits where it may not
 * go (*why says which credential, where and why; head is then partly
 * substituted and must be wiped, never sent); MASK_HEAD_NOMEM (errno).
 */
enum mask_head_result mask_exch_request_head(mask_exch_t *x, char *head, size_t len, const char *host,
					     uint16_t port, bool verified, struct mask_refusal *why)
	NONNULL(1, 2, 4, 7) WUNRES;

/* Remasks (real -> sentinel) a response head in place; the count goes to
 * mask_exch_remasked(). Then searches what is left with ASCII case
 * ignored (mask_table_find_real_name()): a field name is
 * case-insensitive, and HTTP/2 writes every one in lower case, Go's
 * net/http in its canonical form, so a real value an upstream echoes in
 * a name comes with its case changed, which no form of the remask set
 * matches. Returns 0; 1 when a real value is left so (*cred names its
 * credential: the head must be wiped, never sent); -1 (ENOMEM). */
int mask_exch_response_head(mask_exch_t *x, void *buf, size_t len, const char **cred) NONNULL(1, 2, 4) WUNRES;

/*
 * Whether buf (a request target or one header field) holds a real value,
 * raw or in any form the remask set knows, as it is or with every %XX
 * decoded: 1 with *cred naming the credential, 0 (none), or -1 (ENOMEM).
 */
int mask_exch_find_real(mask_exch_t *x, const void *buf, size_t len, const char **cred)
	NONNULL(1, 2, 4) WUNRES;

/*
 * Starts the body of the current message in direction d: MASK_OUT with
 * the body set of host:port (injection where injectIn has body,
 * detection elsewhere; host NULL: nothing is injected, as in an opaque
 * tunnel or a WebSocket stream), MASK_IN with the remask set, and when
 * host:port is one some credential may be injected to, the case-folding
 * search after it (mask_exch_body_case_real(); host NULL: none). Returns 0
 * or -1 (ENOMEM).
 */
int mask_exch_body_begin(mask_exch_t *x, enum mask_dir d, const char *host, uint16_t port,
			 bool verified) NONNULL(1) WUNRES;

/* Whether direction d has a body begun and not yet ended or cut. Pure. */
bool mask_exch_body_active(const mask_exch_t *x, enum mask_dir d) NONNULL(1);

/*
 * One chunk of the body in direction d: len bytes at data, or the first
 * len bytes of in (drained; runs without a match move as libevent
 * chains), scanned across chunk boundaries and appended substituted to
 * out (mask_stream_feed(), mask_stream_feed_buffer()). Bytes that may
 * begin a value are held (mask_exch_body_held()) until the next chunk,
 * mask_exch_body_release() or the end. Returns 0 or -1 (no body active,
 * or ENOMEM).
 */
int mask_exch_body_feed(mask_exch_t *x, enum mask_dir d, const void *data, size_t len,
			struct evbuffer *out) NONNULL(1, 5) WUNRES;
int mask_exch_body_feed_buffer(mask_exch_t *x, enum mask_dir d, struct evbuffer *in, size_t len,
			       struct evbuffer *out) NONNULL(1, 3, 5) WUNRES;

/* The held bytes go to out as they are resolved now (a value cut by the
 * pause is not recognised); the body goes on. Returns 0 or -1. */
int mask_exch_body_release(mask_exch_t *x, enum mask_dir d, struct evbuffer *out) NONNULL(1, 3) WUNRES;

/* Input bytes held in direction d now, and the most ever held
 * (longest pattern - 1) by the set last begun there, plus, while the
 * case-folding search runs, its own hold-back, which lies in what the
 * feeds wrote: keeping the last holdmax - held bytes written back
 * (cmask_ready()) covers both. Pure. */
size_t mask_exch_body_held(const mask_exch_t *x, enum mask_dir d) NONNULL(1);
size_t mask_exch_body_holdmax(const mask_exch_t *x, enum mask_dir d) NONNULL(1);
/* The mask_exch_body_holdmax(MASK_IN) of every response body from
 * host:port (NULL: none) with table t: the remask set's hold-back, plus
 * the fold's toward an inject host. What an HTTP/2 connection to it may
 * hold back per stream (proxy/h2.c's stream limit). Pure. */
size_t mask_table_in_holdmax(mask_table_t *t, const char *host, uint16_t port) NONNULL(1);

/* The sender cut the message off: the held bytes, which may begin a real
 * value, are wiped and never sent; inbound replacements are counted. */
void mask_exch_body_cut(mask_exch_t *x, enum mask_dir d) NONNULL(1);

/* End of the message: the held bytes are resolved into out; outbound,
 * the injected credentials and a sentinel left where it may not go
 * (mask_exch_body_left()) are recorded; inbound, the remasked count.
 * Returns 0 or -1. */
int mask_exch_body_end(mask_exch_t *x, enum mask_dir d, struct evbuffer *out) NONNULL(1, 3) WUNRES;

/*
 * Inbound, from an inject host (mask_exch_body_begin() with its host): the
 * credential whose real value the second, case-folding search found with
 * its case changed in what the remask stream wrote, or NULL. Once set,
 * the response must be cut, nothing more of it sent: the bytes from the
 * match's start on are still in the output the feed wrote to, within
 * the last mask_exch_body_holdmax() - mask_exch_body_held() bytes the
 * caller keeps back (a pause's release aside, which sends what the
 * fold held; its state goes on, so a value begun before a pause is
 * still found at its end).
 */
const char *mask_exch_body_case_real(const mask_exch_t *x) NONNULL(1);

/* The credential whose real value, in any form, the outbound stream met
 * since it began (its sentinel's form was written instead), or NULL. */
const char *mask_exch_leak(const mask_exch_t *x) NONNULL(1);

/* Whether the outbound stream replaced anything since it began (*met),
 * and the credential of the first sentinel among them, or NULL. */
const char *mask_exch_sentinel_met(const mask_exch_t *x, bool *met) NONNULL(1, 2);

/*
 * A whole control message of direction d (a WebSocket control frame's
 * unmasked payload), substituted in place with the set last begun there:
 * inbound remasked, and, from an inject host (the fold on), searched for
 * a real value with its case changed (mask_exch_body_case_real() then
 * names it: the stream must be cut); outbound a real value is recorded
 * (mask_exch_control_leak()). Returns 0 or -1.
 */
int mask_exch_control(mask_exch_t *x, enum mask_dir d, void *buf, size_t len) NONNULL(1) WUNRES;
const char *mask_exch_control_leak(const mask_exch_t *x) NONNULL(1);

/* Audit figures of the current request: names gets up to max credential
 * names (owned by the table), how many is returned; real values remasked;
 * the credential of a sentinel left in the request body where it may not
 * be injected (recorded, not refused), or NULL. */
size_t mask_exch_injected(const mask_exch_t *x, const char **names, size_t max) NONNULL(1);
uint64_t mask_exch_remasked(const mask_exch_t *x) NONNULL(1);
const char *mask_exch_body_left(const mask_exch_t *x) NONNULL(1);

/* Whether a real value went into the current request's body so far (its
 * outbound stream, as it runs, or once finished; the head's injections
 * do not count): its echo's pauses may be the sandbox's doing. */
bool mask_exch_body_injected(const mask_exch_t *x) NONNULL(1);

#endif

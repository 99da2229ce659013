/*
 * stream.h - streaming multi-pattern substituter (SPEC §4.2, §4.3).
 *
 * Temporary public header of mask/stream.c; it is to be merged into
 * mask/mask.h. The design, the exact matching semantics and how the proxy
 * is meant to use it are in docs/masking.md.
 *
 * A mask_set_t is a compiled, immutable set of (from -> to) byte-string
 * pairs. Its memory holds the secret bytes: it is one mmap'd arena,
 * mlock'ed and MADV_DONTDUMP'ed, wiped with explicit_bzero and unmapped by
 * mask_set_free(). A set may be shared read-only by any number of streams
 * and threads.
 *
 * A mask_stream_t is the per-direction (per-message) state: it finds
 * patterns split across chunks of any size, replaces them with
 * leftmost-longest non-overlapping semantics, writes to a libevent
 * evbuffer and retains at most (longest pattern - 1) input bytes between
 * calls. It allocates nothing after mask_stream_new().
 *
 * Semantics (the reference implementation in the tests is exactly this):
 * scan the whole message from position p = 0; at p, if one or more
 * patterns' `from` strings occur starting at p, take the longest one
 * (equal `from` strings: the lowest pair index), emit its `to`, count it
 * for its pair and continue at p + length(from); otherwise emit the byte
 * at p and continue at p + 1. Chunking never changes the output.
 *
 * Nothing here logs, and no function ever formats a pattern's bytes.
 */
#ifndef PASSAVANT_MASK_STREAM_H
#define PASSAVANT_MASK_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "../proxy/attrib.h"

/* Longest `from` or `to` accepted in a pair, in bytes (before percent
 * expansion, which may triple it). Bounds hold-back and per-stream memory. */
#define MASK_PATTERN_MAX_BYTES 16384
/* Most pairs in one set. */
#define MASK_SET_MAX_PAIRS 4096
/* Most `from` + `to` bytes in one set, percent forms included. */
#define MASK_SET_MAX_BYTES (4u << 20)
/* A `from` with up to this many bytes that a URL encoder escapes gets
 * every mix of raw and escaped forms of them; more: all raw or all
 * escaped only (MASK_SET_PERCENT). */
#define MASK_PCT_MIX_MAX 4

/* One substitution: occurrences of from[0..from_len) become to[0..to_len).
 * from_len >= 1. Sentinels and real values have equal lengths, but any
 * lengths work (to_len may be 0). The bytes are copied into the set. */
struct mask_pair {
	const void *from;
	size_t from_len;
	const void *to;
	size_t to_len;
};

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

/* Wipes the arena (explicit_bzero), unlocks and unmaps it, frees the set.
 * NULL is a no-op. Every stream on the set must be freed first. */
void mask_set_free(mask_set_t *set);

/* Static English text for a result; never NULL, never names a secret. */
const char *mask_set_strerror(enum mask_set_result res);

/* MASK_HYG_* bits actually achieved for the set's arena. Pure. */
unsigned mask_set_hygiene(const mask_set_t *set) NONNULL(1);

/* Number of pairs given to mask_set_new(): the size of count arrays. */
size_t mask_set_npairs(const mask_set_t *set) NONNULL(1);

/* Length of the longest `from` in the set, percent forms included (0 for
 * an empty set). A stream never holds back more than this minus one. */
size_t mask_set_maxlen(const mask_set_t *set) NONNULL(1);

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
 * replacements with one evbuffer_add() of `to`. Up to maxlen - 1 bytes that
 * may begin a match are copied into the stream and come out with a later
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

/* Discards any held-back bytes (wiped), clears the failed flag and zeroes
 * the counters: ready for a new message. */
void mask_stream_reset(mask_stream_t *st) NONNULL(1);

/* Input bytes currently held back (<= mask_set_maxlen() - 1). Pure. */
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

#endif

/*
 * audit.h - the JSON Lines audit log of SPEC §6: one object per request or
 * refused connection, the exact field set, null for fields that do not
 * apply, flushed per line with one write(2) to an O_APPEND file.
 *
 * Never pass a secret to these functions: there is no redaction inside.
 * Every function may be called from event-loop callbacks.
 */
#ifndef PASSAVANT_AUDIT_H
#define PASSAVANT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/attrib.h"

typedef struct audit audit_t;

/* One audit line. NULL strings, port 0, status 0 and negative numbers are
 * written as null. */
struct audit_rec {
	const char *kind;     /* "request", "connect", "tunnel", "git" or "dns" */
	const char *method;   /* request method, "CONNECT" */
	const char *scheme;   /* "http", "https" or NULL */
	const char *host;     /* normalised host */
	uint16_t port;
	const char *target;   /* path and query (not NUL-terminated) */
	size_t target_len;
	int status;           /* status sent to the client */
	const char *decision; /* "allow" or "deny" */
	const char *reason;   /* why refused or failed, NULL otherwise */
	const char *rule;     /* the deciding policy rule */
	bool inspected;       /* request seen in clear: injected and remasked written */
	const char *const *injected; /* credential names injected (n_injected of them) */
	size_t n_injected;
	uint64_t remasked;    /* real values turned back into sentinels */
	int64_t bytes_up;     /* client to upstream body or tunnel bytes; <0: null */
	int64_t bytes_down;   /* upstream to client; <0: null */
	int64_t ms;           /* duration; <0: null */
	const char *tls;      /* "terminated", "passthrough", "none" */
	const char *proto;    /* "http/1.1" or "h2" for requests, else NULL */
	/* Not written: for observers only. The same refusal was reported
	 * less than a second ago (a resolver retrying a denied name), so a
	 * line on a terminal would repeat it. */
	bool repeat;
	bool reason_is_line;  /* not written: reason is the whole stderr line `run` prints (an
			       * intercepted connection refused before any HTTP, TLS on the proxy port) */
	uint64_t summed;      /* not written: how many refusals this record sums up (a flood's
			       * tail, audit_sum_record()); 0 for a record of one */
};

/*
 * Opens (creates 0600, appends to) the audit file at path for session id
 * session (copied). No symbolic link is followed: the file's own name
 * must not be one (ELOOP), and the directories are resolved once, then
 * walked without following a link put there meanwhile. A path that is
 * not a regular file fails with EINVAL. Returns an audit_t the caller
 * frees with audit_free(), or NULL with errno set.
 */
audit_t *audit_open(const char *path, const char *session) NONNULL(1, 2) WUNRES;

/* Closes the file and frees. NULL is a no-op. */
void audit_free(audit_t *a);

/* Writes one line. Returns 0, or -1 with errno set (the caller logs it;
 * the request is not failed for it). */
int audit_write(audit_t *a, const struct audit_rec *r) NONNULL(1, 2);

/*
 * Fills r (and why, cap bytes, its reason) as the record that sums up n
 * refusals of kind, "what" (a plural: "refused DNS questions") that came
 * within a second beyond the per_s recorded one by one: decision deny,
 * host null. Pure.
 */
void audit_sum_record(struct audit_rec *r, char *why, size_t cap, const char *kind, const char *what, uint64_t n,
		      unsigned per_s) NONNULL(1, 2, 4, 5);

/*
 * JSON-escapes len bytes of s into out as the inside of a JSON string
 * (quotes not included): ", \ and control characters escaped, invalid
 * UTF-8 replaced by U+FFFD. Writes at most outlen - 1 bytes plus NUL,
 * never splitting an escape; returns the length written. An outlen of
 * 6 * len + 1 always suffices.
 */
size_t audit_json_escape(char *out, size_t outlen, const char *s, size_t len) NONNULL(1, 3);

#endif

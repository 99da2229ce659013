/*
 * session.h - the session directory of SPEC §2 (`passavant proxy`): created
 * 0700 (a fresh temporary one if none is given), holding `env` now, and
 * `ca.pem`, `trust.pem` and `files/` once TLS termination and masking land.
 *
 * Setup code: called from main() before the event loop, never from
 * callbacks.
 */
#ifndef PASSAVANT_SESSION_H
#define PASSAVANT_SESSION_H

#include <stdint.h>

#include "attrib.h"

typedef struct session session_t;

/*
 * Creates or adopts the session directory dir (NULL: a fresh mkdtemp
 * directory under $TMPDIR or /tmp). An existing dir must be a directory
 * owned by us; its mode is set to 0700. Also draws the session id (16 hex
 * digits from the kernel CSPRNG). Returns a session_t the caller frees with
 * session_free(), or NULL after logging why.
 */
session_t *session_new(const char *dir) WUNRES;

/* Frees the session. A directory given to session_new() stays with its
 * files; a temporary one it created is removed (with the files written
 * here). NULL is a no-op. */
void session_free(session_t *s);

/* Absolute or given path of the directory; the session id. */
const char *session_dir(const session_t *s) NONNULL(1);
const char *session_id(const session_t *s) NONNULL(1);

/*
 * Writes <dir>/env (0600, replaced atomically): `export` lines for every
 * proxy variable of SPEC §7 pointing at http://host:port (host may be an
 * IPv6 literal without brackets). Returns 0, or -1 after logging why.
 */
int session_write_env(session_t *s, const char *host, uint16_t port) NONNULL(1, 2) WUNRES;

#endif

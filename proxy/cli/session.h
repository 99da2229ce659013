/*
 * session.h - the session directory of SPEC §2 (`passavant proxy`, and the
 * one `passavant run` shows the sandbox read-only): created 0700 (a fresh
 * temporary one if none is given), holding `env`, `ca.pem`, `trust.pem`
 * (written by proxy/tls.c), `files/` (sentinel copies of masked files,
 * written by mask/) and, for `run`, `sys/` (the trust and resolver files
 * of the plan, plan.h PLAN_SYS_SUBDIR).
 *
 * Setup code: called from main() before the event loop, never from
 * callbacks.
 */
#ifndef PASSAVANT_SESSION_H
#define PASSAVANT_SESSION_H

#include <stdint.h>

#include "base/attrib.h"

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
 * files; a temporary one it created is removed: env, ca.pem, trust.pem,
 * the entries of files/ and the tree sys/ are removed, then files/ and the
 * directory (rmdir: anything else put there keeps it). NULL is a no-op. */
void session_free(session_t *s);

/* Absolute or given path of the directory; the session id. */
const char *session_dir(const session_t *s) NONNULL(1);
const char *session_id(const session_t *s) NONNULL(1);

/*
 * Creates <dir>/files (0700; an existing directory must be ours and is set
 * to 0700) for the sentinel copies of masked files. Returns its path,
 * owned by the session, or NULL after logging why.
 */
const char *session_files_dir(session_t *s) NONNULL(1) WUNRES;

/*
 * Writes <dir>/env (0600, replaced atomically): one `export NAME='value'`
 * line for each "NAME=value" entry of vars (the variables of SPEC §7,
 * plan_env_vars(); a value of letters and digits only is written
 * unquoted), then one for each entry of sentinels (the sentinels of
 * masked variables, plan_sentinel_env(); never a real value; always
 * quoted). Either list may be NULL. Returns 0, or -1 after logging why.
 */
int session_write_env(session_t *s, const char *const *vars, const char *const *sentinels)
	NONNULL(1) WUNRES;

#endif

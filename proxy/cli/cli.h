/*
 * cli.h - the top layer's private interface: the subcommands of SPEC §2
 * and the setup they share. Nothing outside proxy/cli/ includes this.
 * Each cmd_* returns the process status; only main() exits.
 */
#ifndef PASSAVANT_CLI_H
#define PASSAVANT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/attrib.h"
#include "base/secmem.h"
#include "mask/mask.h"
#include "policy/policy.h"
#include "proxy/cli/plan.h"
#include "proxy/cli/session.h"
#include "proxy/proxy.h"

#define EXIT_USAGE 2
/* SPEC §2: run exits 125 when passavant failed before the command started. */
#define EXIT_RUN_SETUP 125

/* usage.c: the usage lines, to out; the text --help adds to them. */
void cli_usage(FILE *out) NONNULL(1);
extern const char cli_help_text[];
/* After getopt: 0 when no operand is left (optind == argc), else prints
 * "passavant CMD: unexpected argument 'X'" and the usage, and returns
 * EXIT_USAGE. */
int cli_no_operands(const char *cmd, int argc, char **argv) NONNULL(1, 3);

int cmd_check(int argc, char **argv) NONNULL(2);
int cmd_proxy(int argc, char **argv) NONNULL(2);
int cmd_run(int argc, char **argv) NONNULL(2);

/* setup.c: what the subcommands share. */

/*
 * Finds and loads the policy per SPEC §2. On failure prints why and
 * returns NULL; *invalid tells whether the policy itself was invalid
 * (errors printed) rather than missing.
 */
policy_t *cli_load_policy(const char *cli_path, bool *invalid) NONNULL(2) WUNRES;

/* policy_bind() with this machine (cli_host_read(), $PATH and the other
 * variables from our environment): for cli_load_policy() and SIGHUP
 * reloads. Returns the number of errors printed. */
unsigned cli_bind_policy(policy_t *p) NONNULL(1);

/* Does a session of p read (and on first use create) the sentinel key
 * in the state directory (cli_state_dir())? Only a policy that masks a
 * credential with stable sentinels does. */
bool cli_uses_state_dir(const policy_t *p) NONNULL(1) WUNRES;

/*
 * The session's proxy, for `proxy` and `run`: the credential table
 * (real values in locked memory, our own masked variables rewritten to
 * their sentinels, the sentinel copies of masked files written to
 * <session>/files/), the audit log (*audit_path, else the policy's; the
 * path used is left in *audit_path), the session CA with ca.pem and
 * trust.pem (SPEC §2, §5: before anything listens, a client must never
 * meet a proxy without its trust file), then the proxy with TLS set.
 * Takes p (freed on failure too). *masks gets the table, still the
 * caller's: it writes the env file with it, then hands it to the proxy.
 * Returns the proxy, or NULL after printing why (*masks is then NULL).
 */
proxy_t *cli_session_proxy(policy_t *p, session_t *sess, const char **audit_path,
			   mask_table_t **masks) NONNULL(1, 2, 3, 4) WUNRES;

/*
 * Writes the session's env file for a proxy at host:port: the variables
 * of SPEC §7 (trust ones naming the canonical <session>/trust.pem; left
 * out with a warning if the directory cannot be resolved) and the
 * sentinels of masks (may be NULL). 0, or -1 after logging.
 */
int cli_write_session_env(session_t *sess, const char *host, uint16_t port,
			  const mask_table_t *masks) NONNULL(1, 2) WUNRES;

/* The machine facts of struct plan_host, read once: HOME (else the
 * password database's home), that home (h.pw_home points to h.home when
 * both name the same directory: same device and inode), the working
 * directory, our binary, environ. Strings are copies in h's storage;
 * never fails (an unknown fact is NULL). */
struct cli_host {
	struct plan_host h;
	char home[PATH_MAX], pw_home[PATH_MAX], cwd[PATH_MAX], self[PATH_MAX];
};
void cli_host_read(struct cli_host *ch) NONNULL(1);

/* sentinels.c: the host-held state of stable sentinels (SPEC §4.1). */

/* File names in the state directory: the key and the ledger. */
#define CLI_SENTINEL_KEY "sentinel.key"
#define CLI_SENTINEL_LEDGER "sentinels"

/* The state directory into out: xdg_state_home/passavant when it is
 * absolute, else home/.local/state/passavant. 0, or -1 with a message
 * (neither absolute; too long). Pure. */
int cli_state_dir(const char *xdg_state_home, const char *home, char *out, size_t outlen,
		  char *err, size_t errlen) NONNULL(3, 5) WUNRES;

/* Creates dir (missing components mode 0700) and opens it
 * (O_DIRECTORY|O_NOFOLLOW): a directory of ours, not writable by group or
 * others. Returns the fd (the caller closes it) or -1 with a message. */
int cli_state_open(const char *dir, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/*
 * The key in the state directory dfd (named dir in messages): read, or
 * created first (32 bytes of getrandom(), a 0600 temporary linked into
 * place: two sessions starting at once get the same key), into key, a
 * fresh locked mapping (base/secmem.h) the caller frees with
 * secmem_unmap() (which wipes it). Refused: a symbolic link, not a
 * regular file, another owner, group or other permission bits, a size
 * other than MASK_KEY_BYTES. 0, or -1 with a message (key unmapped).
 */
int cli_sentinel_key(int dfd, const char *dir, struct secmem *key, char *err, size_t errlen)
	NONNULL(2, 3, 4) WUNRES;

/* The ledger in dfd (empty when it does not exist; the key's checks);
 * NULL with a message. The caller holds the directory's lock. */
mask_ledger_t *cli_ledger_read(int dfd, const char *dir, char *err, size_t errlen)
	NONNULL(2, 3) WUNRES;

/* Rewrites the ledger: a 0600 temporary renamed into place. 0 or -1. */
int cli_ledger_write(int dfd, const char *dir, const mask_ledger_t *lg, char *err, size_t errlen)
	NONNULL(2, 3, 4) WUNRES;

/*
 * The stable credential table of p: under an exclusive flock on dir
 * (cli_state_open()), the key and the ledger read, the table built with
 * them (mask_table_new_stable()), its sentinels recorded and the ledger
 * rewritten; the key wiped. NULL with a message; no session then.
 */
mask_table_t *cli_stable_table(const policy_t *p, const char *dir, char *err, size_t errlen)
	NONNULL(1, 2, 3) WUNRES;

#endif

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
 * password database's home), that home, the working directory, our
 * binary, environ. Strings are copies in h's storage; never fails (an
 * unknown fact is NULL). */
struct cli_host {
	struct plan_host h;
	char home[PATH_MAX], pw_home[PATH_MAX], cwd[PATH_MAX], self[PATH_MAX];
};
void cli_host_read(struct cli_host *ch) NONNULL(1);

#endif

/*
 * plan.h - the policy-to-sandbox plan of `passavant run` (SPEC §3.3, §7):
 * everything that turns a policy into a struct sbx_config, in one place.
 *
 *   - the filesystem lists of the policy with `~` expanded against the
 *     home read once by the CLI, plus the HOME rows of the mandatory
 *     table (policy.h) under that home and under the password database's;
 *   - the protections: the session directory, the audit file, our own
 *     binary, and, in the working directory, in every allowWrite
 *     directory and in the repositories they are in, the git control
 *     files and the workspace rows of the mandatory table;
 *   - the masked files (each shown read-only with its sentinel copy);
 *   - the environment: the variables of SPEC §7 (one table, also used for
 *     the session's env file), the sentinels of masked variables, the
 *     denied variables and the unnamed ones that look like credentials
 *     removed.
 *
 * sandbox/ knows nothing of policies or masking: it gets the result.
 * Setup code, never called from event-loop callbacks.
 */
#ifndef PASSAVANT_CLI_PLAN_H
#define PASSAVANT_CLI_PLAN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/attrib.h"
#include "mask/mask.h"
#include "policy/policy.h"
#include "proxy/cli/strv.h"
#include "sandbox/sandbox.h"

/* The facts about this machine and process the plan uses, read once by
 * the CLI (cli_host_read()); the plan itself reads no environment
 * variable, so a test can hand it a fake home. */
struct plan_host {
	const char *home;     /* $HOME, else the password database's; NULL: none */
	const char *pw_home;  /* the password database's home; NULL: unknown */
	const char *cwd;      /* the working directory; NULL: unknown */
	const char *self_exe; /* our own binary; NULL: unknown */
	char *const *env;     /* the environment the command would inherit */
};

/*
 * The system paths the trust and resolver files cover (SPEC §7), each
 * list NULL-terminated, each entry a glob(3) pattern resolved through
 * symbolic links to the real file or directory on the host, which is
 * covered once; what does not exist is skipped. NULL in struct
 * plan_session: plan_sys_paths_default(), this machine's well-known
 * paths (a test gives a fake tree).
 */
struct plan_sys_paths {
	const char *const *bundles;   /* PEM root bundles: trust.pem over each */
	const char *const *cert_dirs; /* hashed certificate directories */
	const char *const *cacerts;   /* JDK cacerts: the PKCS12 truststore over each */
	const char *resolv_conf;      /* /etc/resolv.conf (intercept only) */
	const char *hosts;            /* /etc/hosts (intercept only) */
};

/* What the session adds to the plan. */
struct plan_session {
	const char *dir;        /* canonical session directory (holds ca.pem, trust.pem) */
	const char *audit_path; /* the audit file in use, or NULL */
	bool quiet;             /* -q: no line about dropped variables or a home's read-only entries */
	unsigned verbose;       /* -v: each dropped variable and the rule */
	/* Transparent interception (the sandbox's resolver on 127.0.0.1:53):
	 * the command's /etc/resolv.conf names it and /etc/hosts holds only
	 * localhost. */
	bool intercept;
	const struct plan_sys_paths *sys; /* NULL: plan_sys_paths_default() */
};

/* Where the plan writes its session files, under the session directory
 * (removed with it): the hashed directory copies (sys/certs, sys/certs-2
 * ...), sys/cacerts.p12, sys/resolv.conf, sys/hosts. */
#define PLAN_SYS_SUBDIR "sys"

/* The plan: every list of the sbx_config, owned here. */
struct run_plan {
	struct strv deny_read, allow_read, allow_write, deny_write, protect;
	/* Covered read-only by name, other hard links not refused
	 * (sbx_config.cover): the hard-linked files of a writable home. */
	struct strv cover;
	/* The package runners' install trees of the mandatory denies
	 * (policy_mandatory_session()): an empty directory of the session
	 * where a writable tree holds them (sbx_config.scratch). */
	struct strv scratch;
	/* The canonical homes: the links under a denyRead or denyWrite
	 * directory inside one are followed (sbx_config.follow_under). */
	struct strv follow;
	/* The PATH directories outside the writable trees and the system's
	 * usual ones, canonical, in deny_write too: their links are
	 * followed wherever they lie (sbx_config.follow_also). */
	struct strv follow_also;
	/* The denyRead paths the policy names itself and its credential
	 * files in mode deny (sbx_config.named_secrets). */
	struct strv named;
	struct strv env_add, env_remove;
	/* Substituted files: masked files (path -> sentinel copy), then the
	 * trust and resolver files (system path -> session file). */
	struct sbx_file *files;
	size_t n_files, cap_files;
	struct strv file_strs; /* the strings files[] points to that are ours */
	char trust[PATH_MAX + 16]; /* <session dir>/trust.pem */
	/* <session dir>/sys/cacerts.p12 when a JDK cacerts is covered,
	 * else "": made empty by plan_build(), filled by plan_fill() (the
	 * sandbox calls it while it builds itself: sbx_config.meanwhile). */
	char truststore[PATH_MAX];
	/* Round 42: the "VAR=path" entries of the homes-of-code notice not
	 * named before, recorded by plan_code_homes_record() once the
	 * command has started (a refused start names them again). */
	struct strv code_homes_new;
};

/* This machine's well-known trust and resolver paths (docs/run.md
 * "Trust"): static, never NULL. */
const struct plan_sys_paths *plan_sys_paths_default(void) WUNRES;

/*
 * Builds the plan for policy p (masks: its credential table, NULL for
 * none) on host h for session s. Reads the filesystem (realpath, the
 * .git of each writable directory, the system paths of s->sys) but never
 * the environment; writes the session files of PLAN_SYS_SUBDIR (the
 * trust and resolver files the system paths are shown with). Prints
 * one notice about dropped variables (s->quiet, s->verbose), never a
 * value, and one for each writable home whose entries without a dot the
 * HOME class rule made read-only (unless s->quiet). Returns 0, or -1 after logging why; pl is then empty. Free
 * with plan_free() in both cases.
 */
int plan_build(struct run_plan *pl, const policy_t *p, const mask_table_t *masks,
	       const struct plan_host *h, const struct plan_session *s) NONNULL(1, 2, 4, 5) WUNRES;

/*
 * The plan's work that only the command needs done: the content of the
 * PKCS12 truststore (pl->truststore), which takes a few ms; nothing when
 * there is none. plan_sbx_config() makes it the config's meanwhile
 * (arg: pl), so it runs while the sandbox builds itself. 0, or -1 with
 * err set.
 */
int plan_fill(void *pl, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* Fills cfg (zeroed first) from pl for argv: the lists stay pl's;
 * cfg->meanwhile is plan_fill() when there is a truststore to fill. */
void plan_sbx_config(const struct run_plan *pl, const policy_t *p, char *const *argv,
		     struct sbx_config *cfg) NONNULL(1, 2, 3, 4);

/* Frees every list of pl. */
/*
 * Round 42: appends the homes of code the notice named for the first time
 * (pl->code_homes_new) to the state directory's code-homes, made without
 * following a link below the home; called once the command has started.
 * A failure is logged, never fatal.
 */
void plan_code_homes_record(const struct run_plan *pl, const struct plan_host *h) NONNULL(1, 2);

void plan_free(struct run_plan *pl) NONNULL(1);

/*
 * The variables of SPEC §7 as "NAME=value" entries appended to out: the
 * proxy variables (both cases) for http://host:port (host may be an IPv6
 * literal without brackets), NO_PROXY, NODE_USE_ENV_PROXY and, unless
 * trust_pem is NULL, every trust variable naming trust_pem. The one table
 * of them, for the sandbox and the session's env file. 0 or -1 (logged).
 */
int plan_env_vars(struct strv *out, const char *host, uint16_t port, const char *trust_pem)
	NONNULL(1, 2) WUNRES;

/* The sentinel of every masked variable of t as "NAME=SENTINEL" entries
 * appended to out. 0 or -1 (logged). */
int plan_sentinel_env(struct strv *out, const mask_table_t *t) NONNULL(1, 2) WUNRES;

/*
 * The writable trees the post-run git check walks: each existing
 * allowWrite path of the bound policy p, canonical, appended to
 * roots. 0 or -1 (logged).
 */
int plan_git_roots(struct strv *roots, const policy_t *p) NONNULL(1, 2) WUNRES;

/*
 * The settings rows of the post-run check: every workspace row of the
 * mandatory table, which the mount plan protects only at the top of each
 * writable tree, with the kind the report names. A calloc'd list ended by
 * a NULL path (the caller frees it; the strings are the table's), or
 * NULL after logging.
 */
struct sbx_ctl_path *plan_ctl_paths(void) MALLOC WUNRES;

#endif

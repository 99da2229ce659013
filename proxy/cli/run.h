/*
 * run.h - the state of one `passavant run`, shared by run.c (the command,
 * the sandbox, signals) and runreport.c (what is said about it: refusal
 * lines, the post-run git check's findings). proxy/cli/ only.
 */
#ifndef PASSAVANT_CLI_RUN_H
#define PASSAVANT_CLI_RUN_H

#include <stdbool.h>
#include <time.h>

#include "proxy/audit.h"
#include "proxy/cli/strv.h"
#include "proxy/proxy.h"
#include "sandbox/sandbox.h"

struct event;

/* State of one `passavant run`, shared by the event callbacks. */
struct run {
	proxy_t *px;
	struct sbx *sbx;
	struct event *sigchld;
	bool quiet;             /* -q: no refusal lines */
	bool keep_git;          /* --keep-git-config: report, do not move */
	bool no_intercept;      /* --no-intercept: the proxy variables only (no nftables, no resolver) */
	unsigned verbose;       /* -v count */
	bool ended;             /* the sandbox has ended: status is final */
	bool tty_fg;            /* our group was the terminal's foreground at the start */
	int status;             /* its SPEC §2 status once ended */
	unsigned long allowed;  /* audit records with decision "allow" */
	unsigned long refused;  /* ... with decision "deny" */
	unsigned long injected; /* credentials injected, over all requests */
	sbx_tree_lock_t *tree_lock;   /* the writable trees, held from the session's start to the
				       * end of its check (sbx_tree_lock()); NULL: none */
	sbx_git_before_t *git_before; /* the git directories of the writable trees before the
				       * command (sbx_git_before()); NULL: not known */
	char **home_before;     /* the home directory's dot entries before the command, when it is
				 * writable (sbx_home_before()); NULL: not */
};

/* proxy observer: counts every record, prints each refusal (SPEC §2:
 * the host, method and rule), e.g.
 * "passavant: blocked POST https://host/path: allowedMethods". */
void run_observer(void *arg, const struct audit_rec *r) NONNULL(1, 2);

/*
 * The post-run check (SPEC §3.3) over the writable trees roots, for
 * what changed since `since`: git control files, and the editor and
 * agent settings of plan_ctl_paths() in every directory. Prints and
 * audits each finding; with -v a line with the work done. Call it once
 * every process of the sandbox is gone, before the proxy goes (its
 * audit).
 */
void run_git_check(struct run *run, const struct strv *roots, const struct timespec *since)
	NONNULL(1, 2, 3);

#endif

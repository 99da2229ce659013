/*
 * run.h - the state of one `passavant run`, shared by run.c (the command,
 * the sandbox, signals) and runreport.c (what is said about it: refusal
 * lines, the post-run git check's findings). proxy/cli/ only.
 */
#ifndef PASSAVANT_CLI_RUN_H
#define PASSAVANT_CLI_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <termios.h>
#include <time.h>
#include <sys/types.h>

#include "proxy/audit.h"
#include "proxy/cli/strv.h"
#include "proxy/proxy.h"
#include "sandbox/sandbox.h"

struct event;

/* Terminals whose state a run saves: standard input, output, error and
 * our controlling terminal (/dev/tty) when none of those is it. */
#define RUN_TTY_MAX 4
/* A second SIGINT/SIGTERM/SIGHUP this long after the first ends the sandbox
 * (run_signal_hook()); one sooner is the same signal sent twice. */
#define RUN_SIGNAL_AGAIN_MS 300

/* One descriptor of a terminal the command shares, and the terminal's
 * state when the run started (run.c, docs/run.md "Terminal"). */
struct run_tty {
	int fd;             /* 0, 1, 2, or run->tty_fd */
	int fl;             /* its file status flags (O_NONBLOCK: the description is shared) */
	struct termios tio; /* the terminal's settings */
};

/* State of one `passavant run`, shared by the event callbacks. */
struct run {
	proxy_t *px;
	struct sbx *sbx;
	struct event *sigchld;
	struct event *sigtstp;  /* SIGTSTP: the terminal given back, then stopped */
	bool quiet;             /* -q: no refusal lines */
	bool keep_git;          /* --keep-git-config: report, do not move */
	bool no_intercept;      /* --no-intercept: the proxy variables only (no nftables, no resolver) */
	unsigned verbose;       /* -v count */
	bool ended;             /* the sandbox has ended: status is final */
	unsigned signals_passed; /* SIGINT/SIGTERM/SIGHUP passed on to the command (run_signal_hook()) */
	struct timespec first_signal; /* CLOCK_MONOTONIC when the first of them came */
	bool tty_fg;            /* our group was the terminal's foreground at the start */
	struct run_tty ttys[RUN_TTY_MAX]; /* the terminals saved at the start (tty_fg only) */
	size_t n_ttys;          /* entries of ttys in use */
	int tty_fd;             /* our descriptor of /dev/tty, or -1 */
	char *held;             /* the post-run check's report lines, held until it has moved
				 * every file (run_git_check()); malloc'd, ours */
	size_t held_len, held_cap;
	int status;             /* its SPEC §2 status once ended */
	unsigned long allowed;  /* audit records with decision "allow" */
	unsigned long refused;  /* ... with decision "deny" */
	unsigned long injected; /* credentials injected, over all requests */
	sbx_tree_lock_t *tree_lock;   /* the writable trees, held from the session's start to the
				       * end of its check (sbx_tree_lock()); NULL: none */
	sbx_git_before_t *git_before; /* the git directories of the writable trees before the
				       * command (sbx_git_before()); NULL: not known */
	bool unchecked_marked;  /* a mark of this session's due check is in the state directory
				 * (run_unchecked_mark()) */
	char unchecked_made[PATH_MAX]; /* the first directory made for it, removed after
					* (""): none */
	bool unchecked_left;    /* the check of an earlier, killed session left planted files
				 * in place or unread (run_unchecked_check()): the status is not 0 */
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
 * audit). Returns how many findings could not be moved aside (left in
 * place, their mode set to 000 where that worked), plus how many files
 * the check had to read to follow what they name and could not (round
 * 30): either makes run's status not 0.
 */
/*
 * Round 37 of the attack (rununchecked.c): a session killed before its
 * check. run_unchecked_check(), with the trees locked, before this
 * session's start is taken: runs the check for each of roots that an
 * earlier session left marked (it ended without its check), from that
 * session's start. run_unchecked_mark(), before the command starts:
 * marks roots with since. run_unchecked_placeholders(), once the
 * sandbox is up: adds the placeholders made in each tree to its mark.
 * run_unchecked_end(), after this session's check: removes the marks.
 */
void run_unchecked_check(struct run *run, const struct strv *roots) NONNULL(1, 2);
void run_unchecked_mark(struct run *run, const struct strv *roots, const struct timespec *since) NONNULL(1, 2, 3);
void run_unchecked_placeholders(struct run *run, const struct strv *roots, const struct timespec *since)
	NONNULL(1, 2, 3);
void run_unchecked_end(struct run *run, const struct strv *roots) NONNULL(1, 2);

unsigned long run_git_check(struct run *run, const struct strv *roots, const struct timespec *since)
	NONNULL(1, 2, 3);

/*
 * Keeps the whole line (len bytes, newline included) in run->held, to be
 * written by run_git_check() once every planted file has been moved: a
 * terminal the command left unable to take output cannot stop the check
 * half-way. Out of memory, the line is written at once instead.
 */
void run_report_hold(struct run *run, const char *line, size_t len) NONNULL(1, 2);

/* s with every byte that is not printable ASCII written as \xNN, whole
 * (no cut), in a new string the caller frees; NULL out of memory. For a
 * path the command may have chosen a part of, in a line of ours. */
char *run_shown(const char *s) NONNULL(1) WUNRES;

#endif

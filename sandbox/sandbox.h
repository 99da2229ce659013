/*
 * sandbox.h - the namespace launcher of `passavant run` (SPEC §7, §3.3).
 *
 * sbx_start() runs a command in fresh user, mount, PID, network, IPC and
 * UTS namespaces. Inside, loopback is up and a socket listens on
 * 127.0.0.1:<listen_port>; its fd comes back to the caller over
 * SCM_RIGHTS, and the caller (the proxy) accepts on it from outside. With
 * interception, every other TCP connection of the command is redirected
 * to listeners on 127.0.0.1 and [::1]:<intercept_port>, a UDP socket on
 * 127.0.0.1:53 is the command's resolver, and every other UDP send fails;
 * those fds come back too. The
 * filesystem is a read-only view of / with the binds the config asks for,
 * a private /tmp, a fresh /proc and a minimal /dev; a seccomp filter and an
 * empty capability set are in force before the command's first
 * instruction. docs/sandbox.md explains every decision.
 *
 * The module never weakens the boundary: when any step cannot be done,
 * sbx_start() fails with a message naming the step, and the caller exits
 * 125 (SPEC §2).
 */
#ifndef PASSAVANT_SANDBOX_H
#define PASSAVANT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/attrib.h"

/* Default port of the in-sandbox listener (SPEC §7). */
#define SBX_DEFAULT_PORT 3128

/* One file shown with another's bytes, or one directory shown with more
 * entries: the command sees source's content at path, read-only (the
 * caller's uses: a masked credential file and its sentinel copy; a
 * system trust bundle and the session's; /etc/resolv.conf). Both are
 * absolute host paths; both must exist and be of one kind. Two regular
 * files: source's bytes at path. Two directories: path shows the union
 * of source's entries and its own (source's win where both have a name),
 * made in a tmpfs of the sandbox (links recreated, files and
 * subdirectories bound read-only; nothing written on the host): a hashed
 * certificate directory plus the session CA. A path behind symbolic
 * links is substituted where they lead (its canonical path), so the link
 * keeps working inside; that place may be in the sandbox's private /run,
 * where the mount point is made. Entries are applied parents first: a
 * file substituted inside a substituted directory lands on top of it. */
struct sbx_file {
	const char *path;
	const char *source;
	/* path's own content is no secret (a system trust bundle, a JDK
	 * cacerts, /etc/hosts): another name of it (a hard link, ostree's
	 * /usr) only shows that public content, so it is no reason to
	 * refuse, as it is for a masked file, whose other name would show
	 * the real value. */
	bool public_content;
	/* A substitution whose path may be missing: when only its last
	 * component is and its parent is writable in the sandbox, an empty
	 * placeholder (a directory or a file, as source is) is made there,
	 * removed after the run as the others are, and shown with source
	 * (a directory as the union), read-only; elsewhere the entry is
	 * left out. A repository without info/ gets the placeholders' list
	 * this way, a Mercurial one without .hg/hgrc its ignore file. */
	bool may_be_missing;
};

/*
 * What to run and how to confine it. Path lists are NULL-terminated arrays
 * of absolute paths (NULL: empty list). Nothing here is copied past
 * sbx_start(): the caller may free it once sbx_start() returns.
 */
struct sbx_config {
	/** NULL-terminated argv; argv[0] is searched in the new PATH. */
	char *const *argv;
	/** Working directory inside the sandbox (NULL: the caller's). */
	const char *cwd;
	/** Covered: a directory by an empty read-only tmpfs, a file by an
	 *  empty read-only file. A missing path is kept unreadable should it
	 *  appear during the session (Landlock; not where the command may
	 *  write its directory). */
	const char *const *deny_read;
	/** Re-allowed (read-only) inside a deny_read region. */
	const char *const *allow_read;
	/** Bound writable; each must exist (else sbx_start() fails). */
	const char *const *allow_write;
	/** Read-only over everything else, whether or not it exists yet. */
	const char *const *deny_write;
	/** The mandatory write denies of SPEC §3.3 (shell start-up files,
	 *  .git/hooks, ..., the policy file, the session dir): treated as
	 *  deny_write, kept apart so the caller can list them separately. */
	const char *const *protect;
	/** Read-only by name, as protect, but a file with other hard links
	 *  is not refused: each other name is covered, or not, by its own
	 *  rules (the entries without a dot of a writable home). */
	const char *const *cover;
	/** Directories shown as an empty writable directory of the session
	 *  (a tmpfs, gone with the sandbox; nothing written on the host):
	 *  each one that is also in protect or deny_write and lies in an
	 *  allow_write tree (else it stays read-only as they say). A
	 *  package runner's install tree (npx's _npx), which the host runs
	 *  as found later, so the command's own runs work (round 43). */
	const char *const *scratch;
	/** Directories (the homes, canonical and as written) under which
	 *  the symbolic links found in a deny_read or deny_write directory
	 *  are followed and their targets given its protection: a directory
	 *  strictly inside one by its canonical path or by its path as the
	 *  list writes it (~/.ssh -> /srv/keys) (mountplan.c
	 *  follow_links()); NULL or empty: none. */
	const char *const *follow_under;
	/** Directories of deny_write whose symbolic links are followed
	 *  wherever they lie (the host's PATH directories and the system's
	 *  usual ones: /usr/local/bin -> a project's cli.js, from npm link),
	 *  matched exactly by canonical path or as the list writes them;
	 *  outside follow_under their regular files are not stat'ed for
	 *  hard links. NULL or empty: none. */
	const char *const *follow_also;
	/** Paths of deny_read the user named as secret (a policy's own
	 *  denyRead entries, its credential files in mode deny), as
	 *  deny_read writes them: a copy of such a file's content is looked
	 *  for in the git object stores of the working directory and the
	 *  writable trees too, as for a substituted file whose content is
	 *  not public. Every other deny_read file (the mandatory table's) is
	 *  looked for only in the repository that holds it (mountplan.c,
	 *  gitcopies.c). NULL or empty: none. */
	const char *const *named_secrets;
	/** Files shown with another file's content, n_files entries. */
	const struct sbx_file *files;
	size_t n_files;
	/** Base environment (NULL: the caller's environ). */
	char *const *env_base;
	/** "NAME=value" entries set (replacing) in the command's env. */
	const char *const *env_add;
	/** Names removed from the command's env (before env_add applies). */
	const char *const *env_remove;
	/** Let the command create AF_UNIX sockets (allowAllUnixSockets). */
	bool allow_unix_sockets;
	/** Port of the in-sandbox listener on 127.0.0.1 (0: 3128). */
	uint16_t listen_port;
	/** Transparent interception (docs/sandbox.md "Network"): an
	 *  address and default routes on lo, an nftables rule set that
	 *  redirects every non-loopback TCP connection to the interception
	 *  listeners and rejects every other non-loopback packet, and the
	 *  resolver socket on 127.0.0.1:53. Needs nf_tables in the kernel. */
	bool intercept;
	/** Port of the interception listeners on 127.0.0.1 and [::1]
	 *  (0: PASSAVANT_INTERCEPT_PORT); must differ from listen_port. */
	uint16_t intercept_port;
	/** Work of the caller's that only the command needs done (the
	 *  content of a substituted file: the file itself must exist
	 *  before, the plan checks it, and the mount shows its inode, so it
	 *  is written in place). sbx_start() runs it once the child is
	 *  cloned, in a thread of its own with every signal blocked (in the
	 *  calling thread if none can be made), while the child builds its
	 *  network and filesystem and the calling thread takes its sockets
	 *  and installs the rules; it must not touch what sbx_start() uses.
	 *  The command starts only after it returned 0; -1 (err set) ends
	 *  the sandbox and fails sbx_start() with err. NULL: none. */
	int (*meanwhile)(void *arg, char *err, size_t errlen);
	void *meanwhile_arg;
};

/* A running sandbox; opaque. */
struct sbx;

/*
 * Starts cfg->argv in a new sandbox. Returns 0 once the boundary is
 * complete and the command was handed to execve: *out is the running
 * sandbox (free with sbx_free()). If execve itself failed, the sandbox
 * still returns 0; sbx_exec_error() holds the message and sbx_wait()
 * returns 126 or 127. Returns -1 when anything failed before that
 * (validation, namespaces, mounts, seccomp): err holds one line naming
 * what, e.g. "cannot create namespaces: Operation not permitted", nothing
 * is left running, and the caller should exit 125.
 *
 * The calling thread must outlive the sandbox: the kernel's parent-death
 * signal follows the thread that forked (PR_SET_PDEATHSIG). SIGCHLD must
 * not be ignored (SIG_IGN), or the kernel reaps the sandbox behind
 * sbx_wait()'s back. Not for use from event-loop callbacks: it blocks
 * until the child has set up (a few ms). An allow_read path under the
 * host's /tmp is bound read-only into the private /tmp: the way to show
 * the command a session directory that lives there.
 */
int sbx_start(const struct sbx_config *cfg, struct sbx **out, char *err, size_t errlen)
	NONNULL(1, 2, 3) WUNRES;

/* The in-sandbox init's pid, as seen from outside. */
pid_t sbx_pid(const struct sbx *s) NONNULL(1);

/*
 * Hands over the listening socket (non-blocking, CLOEXEC, AF_INET,
 * already listening, validated): the caller owns and closes it. Returns -1
 * if it was already taken.
 */
int sbx_take_listen_fd(struct sbx *s) NONNULL(1) WUNRES;

/*
 * Hands over an interception listener of family (AF_INET: 127.0.0.1, or
 * AF_INET6: [::1] with IPV6_V6ONLY; non-blocking, CLOEXEC, listening,
 * validated). Accepted connections carry the command's destination in
 * SO_ORIGINAL_DST (SOL_IP, or SOL_IPV6 with IP6T_SO_ORIGINAL_DST). The
 * caller owns and closes it. Returns -1 when interception is off, when
 * the sandbox has no IPv6 (AF_INET6 only), for another family, or when it
 * was already taken.
 */
int sbx_take_intercept_fd(struct sbx *s, int family) NONNULL(1) WUNRES;

/*
 * Hands over the resolver socket: UDP bound to 127.0.0.1:53 in the
 * sandbox (the address its /etc/resolv.conf should name), non-blocking,
 * CLOEXEC, validated. The caller owns and closes it, and answers the
 * command's queries on it. Returns -1 when interception is off or when it
 * was already taken.
 */
int sbx_take_dns_fd(struct sbx *s) NONNULL(1) WUNRES;

/*
 * After sbx_wait(): 0, or the errno of a write into the file given as
 * the command's fd (1: standard output, 2: standard error) that failed
 * (ENOSPC, EDQUOT, EIO, EFBIG). Such a file reaches the command as a pipe
 * copied by passavant (stdio.c), so the command never saw the error: the
 * caller must report it.
 */
int sbx_stdio_errno(const struct sbx *s, int fd) NONNULL(1);

/*
 * After sbx_wait(): NULL, or what passavant could not do for fds 0-2
 * once the command ended: a copy process it could not wait for (what the
 * command wrote may not all have reached its file), or a pipe shared with
 * the host whose flags, size, owner, signal or locks, as the command left
 * them, could not be put back. The caller must report it and not exit 0.
 */
const char *sbx_stdio_failure(const struct sbx *s) NONNULL(1);

/*
 * Whether `run` is in a pipeline whose keys are another program's:
 * standard input is a terminal and standard output a pipe or socket
 * (`passavant run -- CMD | less`). Then the terminal's keys are not
 * relayed to the command (its standard input is /dev/null) and the
 * terminal is not put in raw mode; output and error that are the
 * terminal are still relayed through the escape filter.
 */
bool sbx_stdio_pipeline(void);

/*
 * Whether standard input is a terminal that is another session's
 * controlling terminal (review of round 39): `setsid passavant run ...`
 * typed at an interactive shell leaves passavant in a session of its own
 * with the shell's terminal as its standard input, the shell reading it
 * at its prompt; the relay read the same keys in raw mode, and a line
 * typed at the prompt (a sudo password) went to the command. Then the
 * keys are not relayed (the command's standard input is /dev/null, as in
 * a pipeline) and the terminal is not put in raw mode; output is still
 * relayed through the filter. A terminal of no session is claimed as
 * passavant's controlling terminal when passavant leads a session without
 * one (TIOCSCTTY: a harness's fresh pty, start_new_session), else read
 * as before; whether it is another session's is asked by a child in a
 * session of its own (a terminal's session cannot be read from outside
 * it). Fails closed: true when it cannot tell.
 * Round 40: a terminal that is not our session's (of no session, or
 * another's) is also not read while another program has it as its
 * standard input (sbx_stdio_tty_reader()): a harness's own reader, or a
 * sibling's, took a line's bytes in turns with the relay (a line meant
 * for it reached the command). Our session's terminal is not looked at:
 * there job control says who reads (a shell's background jobs hold it).
 */
bool sbx_stdio_keys_foreign(void);

/*
 * Another process, not passavant, one of its ancestors (which wait for
 * it) nor a child of its, whose standard input is the terminal on
 * passavant's (looked up in /proc: processes of other users are not
 * seen): its pid, 0 if none (or fd 0 is no terminal), -1 if /proc
 * cannot be read.
 */
pid_t sbx_stdio_tty_reader(void);

/*
 * After sbx_wait(): how many of the empty files and directories made on
 * the host to protect paths that did not exist could not be removed
 * (each named on stderr with what to do). Left behind, an empty
 * ~/.bash_profile stops login shells reading ~/.profile: the caller's
 * status must say so.
 */
size_t sbx_placeholders_left(const struct sbx *s) NONNULL(1);

/*
 * The i-th of the empty files and directories made on the host for
 * protected paths that did not exist (from 0, in the order made), with
 * its device, inode and kind; NULL past the last. For a record that must
 * outlive passavant: a passavant killed with SIGKILL leaves them behind,
 * and the next session removes those still empty and the same (round 37
 * of the attack, proxy/cli/rununchecked.c).
 */
const char *sbx_placeholder(const struct sbx *s, size_t i, dev_t *dev, ino_t *ino, bool *is_dir)
	NONNULL(1, 3, 4, 5);

/* The execve failure message, or NULL when the command was started. */
const char *sbx_exec_error(const struct sbx *s) NONNULL(1);

/* How many deny_read paths that did not exist at launch would be
 * readable if they appeared during the session: 0 when the kernel's
 * Landlock keeps them unreadable (docs/sandbox.md "Denied paths that do
 * not exist yet"), else every one of them; the caller warns. */
size_t sbx_unseen_unguarded(const struct sbx *s) NONNULL(1);

/*
 * Forwards sig to the sandbox: the init passes SIGINT, SIGTERM and SIGHUP
 * on to the command; SIGKILL ends the whole sandbox. Returns 0 or -1
 * (errno). Safe from a signal handler or event callback.
 */
int sbx_kill(struct sbx *s, int sig) NONNULL(1);

/*
 * passavant is about to stop (SIGTSTP): the command's terminal relay, if
 * any, gives the user's terminal back as it found it (the user's
 * settings, the command's modes that make the terminal send what was not
 * typed, or keys in its encoding, off: sandbox/ttyrelay.c) and stops
 * itself, before the shell sees the stop; the job's SIGCONT (`fg`, `bg`)
 * continues it. Waits for that at most 500 ms. 0, or -1 (no relay, or it
 * did not stop in time).
 */
int sbx_tty_pause(struct sbx *s) NONNULL(1);
/* passavant continued after sbx_tty_pause(): the relay continued too
 * (SIGCONT; a parent may continue our process alone). 0, or -1. */
int sbx_tty_resume(struct sbx *s) NONNULL(1);

/*
 * Waits for the sandbox to end and returns the exit status of SPEC §2: the
 * command's own, 128+N if it died of signal N, 126/127 for exec failures.
 * Removes the placeholders made for not-yet-existing protected paths.
 * Returns -1 only if waitpid fails. Calling it again returns the same.
 */
int sbx_wait(struct sbx *s) NONNULL(1);

/*
 * Non-blocking sbx_wait(): returns 1 and stores the status in *status when
 * the sandbox has ended, 0 while it runs, -1 on error. For the caller's
 * SIGCHLD handling in an event loop.
 */
int sbx_try_wait(struct sbx *s, int *status) NONNULL(1, 2) WUNRES;

/* Kills (SIGKILL) and reaps a sandbox still running, removes placeholders,
 * closes the listeners and the resolver socket not taken, frees. NULL is a
 * no-op. */
void sbx_free(struct sbx *s);

/*
 * The command's environment: base minus the names in remove, then add
 * applied (replacing a variable of the same name, in add's order). Pure.
 * Returns a NULL-terminated malloc'd array (free with sbx_env_free()),
 * NULL on ENOMEM or an add entry without '='.
 */
char **sbx_env_build(char *const *base, const char *const *remove, const char *const *add)
	MALLOC WUNRES;

/* Frees an array of sbx_env_build(). NULL is a no-op. */
void sbx_env_free(char **env);

/*
 * SPEC §3.3 for a path the caller itself will create or write on the
 * host (an audit file, the session directory's parent, the state
 * directory) or take as the directory it was started in: fails when
 * path, walked as the kernel would, goes through a symbolic link in a
 * directory under one of allow_write (the writable trees the sandbox
 * gets; NULL-terminated, each resolved here, a missing one skipped),
 * because a sandbox of this policy could have planted it. Links in
 * other directories are followed. path must be absolute; what names it
 * in the message ("audit file"). Reads the filesystem only: call it
 * before creating anything. 0, or -1 with err set (the path, the link,
 * what to do).
 */
int sbx_check_host_path(const char *const *allow_write, const char *what, const char *path,
			char *err, size_t errlen) NONNULL(2, 3, 4) WUNRES;

/* ------------------------------------------------------------------ */
/* git control files (SPEC §3.3; sandbox/gitguard.c)                    */
/* ------------------------------------------------------------------ */

/* Receives one path; returns 0, or -1 to stop (the caller's error). */
typedef int (*sbx_path_fn)(void *arg, const char *path);

/*
 * Names to add(), for the mount plan's protect list, every control path
 * of the repository at dir (canonical; its work tree, or the git
 * directory itself when bare): config, config.worktree, hooks, info and an
 * existing commondir of its git directory and of the common directory
 * commondir names; modules/ and worktrees/ when missing, else the control
 * paths of each git directory in them; a .git file itself and the git
 * directory it names. With no repository at dir, dir/.git/config (so a
 * .git cannot be created there). Reads a few entries; no walk. Returns 0,
 * or -1 when add() did.
 */
int sbx_git_protect(const char *dir, sbx_path_fn add, void *arg) NONNULL(1, 2) WUNRES;

/* A variable of the environment the host had at `run` start, or NULL. */
typedef const char *(*sbx_env_fn)(void *arg, const char *name);

/*
 * SPEC §3.3: every place the host's git reads global config, templates
 * or hooks from, named by its global and system configs, for the mount
 * plan (add() each, missing ones included): the template directories
 * ($GIT_TEMPLATE_DIR, the default /usr/share/git-core/templates, and
 * init.templateDir), the absolute and "~/" core.hooksPath, and every
 * include.path and includeIf.*.path target, whose own settings count in
 * turn (at most 16 files). The configs read are $GIT_CONFIG_SYSTEM or
 * /etc/gitconfig, and $GIT_CONFIG_GLOBAL or ~/.gitconfig and
 * $XDG_CONFIG_HOME/git/config (~/.config/git/config without it), as env
 * gives the variables (HOME among them), parsed by the host's git. A
 * config git cannot parse names nothing git would use; one whose bytes do
 * not hold "include", "templatedir" or "hookspath" (in any case) cannot
 * name such a setting, and git is not run for it. Returns 0, or -1 when
 * add() did, on ENOMEM, or when git could not be run on a config that
 * may name one. Blocks (runs git: on the configs known at once side by
 * side, then on what they include).
 */
int sbx_git_protect_global(sbx_env_fn env, void *envarg, sbx_path_fn add, void *arg) NONNULL(1, 3) WUNRES;

/* What a quarantined control file is renamed to: its name plus this
 * (then ".2", ".3"... if taken). git reads no such name. */
#define SBX_GIT_QUARANTINE_SUFFIX ".passavant-quarantine"
/* World-writable entries named one line each after the run; past them
 * only counted (sbx_git_stats.ww) and written to the audit. */
#define SBX_WW_LINES 20

/* The git directories before the session (sbx_git_before()). */
typedef struct sbx_git_before sbx_git_before_t;

/* One finding of sbx_gitguard_check(). */
struct sbx_git_finding {
	const char *path;     /* absolute path of the control file */
	const char *setting;  /* what can make git run a program ("core.fsmonitor",
				 "hook pre-commit", ...); NULL with error */
	const char *moved_to; /* where it is now; NULL when kept or failed */
	const char *why;      /* the settings row's own reason (what runs:
				 "mise (idiomatic version file): a path:
				 version puts a directory on PATH"), or NULL */
	const char *error;    /* why it could not be moved or checked, else NULL */
	bool named;           /* with setting: named only, nothing moved (what
				 git shows may not be what runs or is pushed:
				 refs moved, .git/shallow) */
	bool quiet;           /* the audit only, no stderr line (past the
				 first lines of a kind; counted in the stats) */
};

typedef void (*sbx_git_report_fn)(void *arg, const struct sbx_git_finding *f);

/*
 * A settings path that makes a program run commands when it is opened in
 * a directory (an editor's or agent's settings, .gitmodules): relative,
 * one or more components ("/"-separated, no "." or ".." and no trailing
 * "/"), e.g. ".vscode" (a whole directory) or ".claude/settings.json";
 * or a name pattern: one component holding '*' (fnmatch(3)), matched in
 * every directory, e.g. "*.code-workspace" or "mise.*.toml", or a '*' in
 * the last component after literal directories ("mise/config.*.toml").
 * kind is the phrase the report gives as the finding's setting ("editor
 * or agent settings"). A list ends with a NULL path.
 */
struct sbx_ctl_path {
	const char *path;
	const char *kind;
	const char *why; /* the row's own reason, for the report; or NULL */
	/* At the top of a root the mount plan covers the row read-only
	 * unless if_dir (it covers it only where its first directory
	 * exists): the command cannot have written it there, and a change
	 * there (the host's own editor) is not spread to what the row's
	 * directories hold. */
	bool if_dir;
	/* The row's directory may be a file naming it elsewhere (jj's
	 * `.jj/repo`): such a file made or changed in the session counts
	 * as the row itself. */
	bool pointer;
};

/* Work done by one sbx_gitguard_check(). */
struct sbx_git_stats {
	unsigned long dirs;     /* directories read */
	unsigned long entries;  /* entries seen */
	unsigned long repos;    /* git directories checked */
	unsigned long configs;  /* config files parsed */
	unsigned long findings; /* control files quarantined (or kept) */
	unsigned long stuck;    /* of those, left in place: the move aside failed */
	unsigned long unread;   /* files the check had to read to follow what they name
				 * (a kept config, a .git file, a hooks directory) and
				 * could not: reported; run's status is not 0 */
	unsigned long pyc;      /* compiled Python files written in the session,
				 * removed (Python compiles them again) */
	unsigned long ww;       /* world-writable entries made or changed in
				 * the session (o+w cleared, or named with
				 * --keep-git-config) */
};

/*
 * The post-run check of SPEC §3.3. Call it after the sandbox has ended
 * (nothing may write under roots meanwhile). Walks each root (a
 * NULL-terminated list of canonical absolute paths: the writable trees),
 * never through a symlink, finds every git directory (HEAD and objects or
 * commondir, bare ones and those in .git/modules and .git/worktrees
 * included), and for each control file created or changed since `since`
 * (CLOCK_REALTIME_COARSE, taken before the sandbox started; compared with
 * ctime) that can make git run a program: hooks, a config with any
 * setting outside the allowlist (parsed by the host's git), a commondir
 * other than the one `git worktree add` writes, info/attributes, a rebase
 * todo list with exec lines, a rebase-merge/strategy or sequencer/opts
 * options.strategy naming a strategy not built into git, a .git file
 * pointing out of the roots or a .git symlink; and, for a config that
 * stays (a repository's, the one of the repository a root lies in, or
 * the global and system configs of HOME, XDG_CONFIG_HOME,
 * GIT_CONFIG_GLOBAL), hooks changed in its
 * core.hooksPath directory and included files that name a program, when
 * they are under roots; new dot entries of the home directory
 * (home_before, NULL: not checked; sbx_home_before()); with git_before
 * (NULL: not known), a git directory not in it counts as new whole. The git run is the first on PATH outside the
 * roots. And, in every directory of the roots (nested ones included),
 * each settings path of ctl (NULL: none) created or changed since
 * `since`: the file of a file row; every file, symlink or other
 * non-directory below a directory row (".vscode/tasks.json"); a symlink
 * standing for a row or for a directory on a row's way (".claude" as a
 * symlink). Names are compared only against the rows' first components,
 * so a directory without such an entry costs no extra syscall. Each is
 * renamed to
 * NAME SBX_GIT_QUARANTINE_SUFFIX, unless keep (then only reported), and
 * passed to report(). Errors are reported too (finding.error). Returns 0,
 * or -1 when something could not be checked or moved (reported) or on
 * ENOMEM. stats may be NULL. Blocks; runs `git config` for each config
 * it parses; not for event-loop callbacks.
 */
int sbx_gitguard_check(const char *const *roots, const struct timespec *since, bool keep,
		       const struct sbx_ctl_path *ctl, const char *const *home_before,
		       const sbx_git_before_t *git_before, sbx_git_report_fn report, void *arg,
		       struct sbx_git_stats *stats) NONNULL(1, 2, 7) WUNRES;

/*
 * The git directories of roots (as sbx_gitguard_check() takes them)
 * before the sandbox starts: the same walk, which notes, by device and
 * inode, every directory git would take or that one file more would make
 * one, and checks nothing. sbx_gitguard_check()'s git_before then counts
 * every control file of a git directory that is not in it as new (it
 * became one in the session: parts staged in an earlier session and
 * completed now, a .git swapped in by rename). 0 with *out to free with
 * sbx_git_before_free(), or -1 on ENOMEM. A directory it could not read
 * is simply not in it (then checked as new). roots NULL: no writable
 * tree, an empty set. ctl (may be NULL): the settings rows, whose
 * entries in each index are noted (what the user staged before the
 * session is not named after it).
 */
int sbx_git_before(const char *const *roots, const struct sbx_ctl_path *ctl, sbx_git_before_t **out) NONNULL(3)
	WUNRES;
void sbx_git_before_free(sbx_git_before_t *b);

/*
 * One session's hold on its writable trees (SPEC §3.3): the check after
 * the run compares them with the walk before it, which holds only if no
 * other session writes them in between (round 12 of the attack: two
 * sessions on one tree, each hiding from its own check what the other
 * put back). Each root is locked exclusively (flock(2) on the directory)
 * and each directory above it shared, so two sessions whose trees
 * overlap (the same, one inside the other) cannot both hold theirs;
 * sessions in separate trees can. Taken before the session's start time,
 * released after its check (sbx_tree_unlock()). 0 with *out; 1 when
 * another session holds an overlapping tree; -1 (errno) when a root
 * cannot be opened or locked; *busy (busylen at most) names the
 * directory of either. roots NULL: nothing to hold.
 */
typedef struct sbx_tree_lock sbx_tree_lock_t;
int sbx_tree_lock(const char *const *roots, sbx_tree_lock_t **out, char *busy, size_t busylen)
	NONNULL(2, 3) WUNRES;
void sbx_tree_unlock(sbx_tree_lock_t *l);

/*
 * What the class rule of a writable home covers, taken before the sandbox
 * starts: for each of homes (NULL-terminated: $HOME and the password
 * database's home; canonicalised here, each once) that lies in one of
 * roots (the writable trees; NULL: none), all of its entries (the
 * check moves a new one aside when it is not a directory (round 31 of
 * the attack: ~/go.work, ~/Cargo.toml), when sbx_home_class_entry()
 * names it: dot entries, node_modules, go, R, texmf...; or when a
 * start-up file of the home names it: ~/miniconda3 under conda's
 * block); for each configuration or data directory in
 * roots (each home's .config and .local/share, and xdg, NULL-terminated:
 * $XDG_CONFIG_HOME and $XDG_DATA_HOME where absolute; NULL: none) all of
 * its entries. sbx_gitguard_check()'s home_before, which
 * then moves aside (and reports) each non-empty such entry that is not in
 * the list and that no root names or lies in (a new start-up file:
 * ~/.mavenrc, ~/.lessfilter, a new tool's rc, ~/.config/kitty.conf, a
 * module cache in a new ~/go; the ones that existed were covered
 * read-only). The list holds each
 * directory as "H:PATH" or "C:PATH" followed by its entries' absolute
 * paths. 0 with *out a NULL-terminated list to free with
 * sbx_home_before_free(), or NULL when none of them is writable; -1
 * (errno) when one could not be listed.
 */
int sbx_home_before(const char *const *roots, const char *const *homes, const char *const *xdg, char ***out)
	NONNULL(4) WUNRES;

/* At most this many directories in sbx_home_before()'s list. */
#define SBX_CLASS_DIRS 8

/* Whether a directory named name is a package tree (node_modules, npm's
 * _cacache): the link walks at the start skip it, for its size, as it
 * holds no configuration the host reads through a link. Pure. */
bool sbx_package_tree(const char *name) NONNULL(1);

/* What sbx_package_links() hands each link to: path, the link's path;
 * 0 to go on, anything else stops the listing and is returned. */
typedef int (*sbx_package_link_fn)(const char *path, void *arg);

/* The symbolic links at the top of the package tree dir (a path whose
 * last component sbx_package_tree() names), not walked: its entries, and
 * those of each @scope directory, one level each; fn gets each link (an
 * `npm link`ed package: code the host loads through it), and dir itself
 * when dir is a link. A real package directory is never entered, nor is
 * anything stat'ed where the filesystem gives d_type. Returns 0, fn's
 * first nonzero result, or -1 with errno when a directory cannot be
 * listed (fn not called for the rest). Not for the sandbox child. */
int sbx_package_links(const char *dir, sbx_package_link_fn fn, void *arg) NONNULL(1, 2) WUNRES;

/* Whether name, an entry of a home directory, is one that the HOME class
 * rule (docs/config.md) moves aside after the run when the session made
 * it (every existing entry, whatever its name, is read-only in the
 * session): every dot entry, and the ones a tool reads from HOME with no
 * start-up file of the home naming them: node_modules (require() from
 * any script under HOME looks there), go (GOPATH's default: the module
 * cache every project's build runs code from, go install's commands), R
 * (R_LIBS_USER's default), texmf (TEXMFHOME's), bin (on PATH by system
 * start-up files), snap (each snap's HOME), sdk (golang.org/dl's
 * toolchains), and objects and refs (with a HEAD, HOME is a bare git
 * directory for every directory under it). A new entry that is not a
 * directory is moved aside whatever its name. "." and ".." are not. */
bool sbx_home_class_entry(const char *name) NONNULL(1);
void sbx_home_before_free(char **names);

#endif

/*
 * sbx_int.h - private interfaces between the files of sandbox/.
 *
 * mountplan.c builds a struct sbx_plan in the parent, before launch.c
 * clones: every string, the environment, the mount operations in their
 * order and the compiled seccomp program. The child only reads the plan. It calls no
 * malloc: it was cloned from a process that may have other threads, and
 * one of them may have held the allocator's lock at that instant.
 */
#ifndef PASSAVANT_SBX_INT_H
#define PASSAVANT_SBX_INT_H

#include <limits.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/attrib.h"
#include "base/errbuf.h"

/* Where the child builds the new root, and where the host root sits while
 * it does (both inside the setup tmpfs, gone after the final pivot). */
#define SBX_NEWROOT "/newroot"
#define SBX_OLDROOT "/oldroot"
/* Error messages are one line of at most this many bytes. */
#define SBX_ERRLEN 512
/* Appended to every failure of a step that only interception needs. */
#define SBX_NO_INTERCEPT_HINT "; run with --no-intercept to use the proxy variables only"

/* Mount operations, in the order of application for one path depth. */
enum sbx_op_kind {
	SBX_OP_ALLOW_WRITE, /* bind host path writable */
	SBX_OP_DENY_READ,   /* cover: empty ro tmpfs / empty ro file */
	SBX_OP_ALLOW_READ,  /* bind host path back, read-only */
	SBX_OP_FILE,        /* bind another file read-only over the path */
	SBX_OP_PROTECT,     /* self-bind read-only, pin writable ancestors */
	SBX_OP_SCRATCH,     /* an empty writable tmpfs of the session */
};

/* One mount operation on a canonical host path. */
struct sbx_op {
	enum sbx_op_kind kind;
	char *path;   /* canonical absolute host path (owned by the plan) */
	char *src;    /* SBX_OP_FILE: canonical path of the file shown */
	bool is_dir;  /* the host path is a directory */
	/* The plan's look at path (lstat, in the parent): the object the
	 * child must find there when it binds host content in (mountns.c
	 * open_view()); looked false when path was absent then. */
	bool looked;
	dev_t dev;
	ino_t ino;
};

/* A file or directory made on the host so a protected path that did not
 * exist can be covered; removed again by the parent after the run. */
struct sbx_placeholder {
	char *path;
	dev_t dev;
	ino_t ino;
	bool is_dir;
};

/* Denied paths kept unreadable by Landlock (unseen.c): the directories
 * on the way to each (its last existing directory, or its parent when it
 * exists, and every ancestor, canonical) and each one's first missing
 * component; sorted sets, no duplicates. Owned
 * by the builder, then by the plan. */
struct sbx_unseen {
	char **dirs;
	size_t n_dirs, cap_dirs;
	char **skip;
	size_t n_skip, cap_skip;
	char **grant; /* allow_read paths, substituted files: granted */
	size_t n_grant, cap_grant;
	/* Room for the device and inode of each of dirs, allocated by the
	 * parent (cap_dirs entries), filled by the child (unseen.c). */
	struct sbx_unseen_id {
		dev_t dev;
		ino_t ino;
	} *ids;
};

/* Everything the child needs, prepared by the parent. */
struct sbx_plan {
	char *const *argv;
	const char *cwd;          /* NULL: stay in the caller's directory */
	char **envp;              /* the command's complete environment */
	struct sbx_op *ops;       /* in application order */
	size_t n_ops;
	struct sock_fprog prog;   /* compiled seccomp filter */
	uint16_t port;
	bool intercept;           /* sbx_config.intercept */
	bool hold;                /* wait for "release" after the mounts:
				     intercept or sbx_config.meanwhile */
	uint16_t icpt_port;       /* the interception listeners' port */
	bool no_mount_setattr;    /* test hook: use the remount fallback */
	bool no_overlay;          /* test hook: directory unions in a tmpfs */
	int landlock_abi;         /* the kernel's Landlock ABI; 0: none (or the
				     test hook PASSAVANT_SBX_NO_LANDLOCK) */
	struct sbx_unseen unseen; /* unseen.c: kept unreadable if they appear */
	int sock;                 /* SOCK_SEQPACKET: "maps ready" in, fds out,
				     "release" in (hold) */
	int err_wr;               /* CLOEXEC: setup/exec failure reports */
	int stdio_fd[3];          /* -1, or the pipe to put at fd i (stdio.c) */
	bool new_session;         /* setsid() first: no controlling terminal
				     (sbx_stdio.new_session) */
	int ctty_fd;              /* -1, or the pty slave the new session
				     takes as its terminal (TIOCSCTTY) */
};

/*
 * stdio.c (parent, before the clone): fds 0-2 as the command gets them.
 * child_fd[i] is -1 (fd i is passed as it is) or the pipe end the child
 * puts in its place; pump[i] the process copying between that pipe and
 * the file, or -1.
 */
/* The locks an open file holds, from its /proc/self/fdinfo "lock:"
 * lines (stdio.c): n lines (-1: unread), its flock (0, LOCK_SH,
 * LOCK_EX), its OFD locks' count, and a sum over the lines of a hash of
 * their kind, type and range: a lock converted (shared to exclusive) or
 * moved to another range changes it, where the count stays. */
struct sbx_locks {
	int n;
	int flock;
	int ofd;
	uint64_t sum;
};

struct sbx_stdio {
	int child_fd[3];
	pid_t pump[3];
	int err[3];       /* after sbx_stdio_end(): errno of a failed write into fd 1 or 2 */
	bool in_seekable; /* stdin's copy puts the file's offset back (SIGUSR1) */
	bool new_session; /* the sandbox gets a session of its own */
	int ctty;         /* -1, or the pty slave (one of child_fd[]) that
			     is the sandbox's terminal (ttyrelay.c) */
	pid_t relay;      /* the terminal's relay, or -1 */
	/* A descriptor passed as it is (a pipe) is one open file with the
	 * host's holders: a copy of it, its file status flags and its pipe
	 * size (-1: none) when the command got it, put back by
	 * sbx_stdio_end() (round 44 of the attack). */
	int kept_fd[3];
	int kept_fl[3];
	int kept_psz[3];
	/* ... its owner for SIGIO (F_GETOWN_EX: type, pid) and signal
	 * (F_GETSIG), and the flock and OFD locks it held (kept_lk), put
	 * back the same way (round 45). */
	int kept_own_type[3];
	int kept_own_pid[3];
	int kept_sig[3];
	struct sbx_locks kept_lk[3];
	/* ... and its inode's mode and owner (fchmod, fchown through the
	 * fd: the mode decides who reopens it through /proc/PID/fd/N,
	 * /dev/stdin); kept_mode -1: none kept. */
	int kept_mode[3];
	uid_t kept_uid[3];
	gid_t kept_gid[3];
	/* The first failure of sbx_stdio_end(): what could not be reaped or
	 * put back, for the caller to report (sbx_stdio_failure()); "". */
	char end_msg[384];
};

/* Every field of io at its "nothing kept" value (no copies, no relay,
 * nothing to put back): sbx_stdio_end() on it does nothing and returns
 * 0. Called where the sbx is made, before anything can fail. */
void sbx_stdio_init(struct sbx_stdio *io) NONNULL(1);

/* Judges fds 0-2 and starts a copy for each that names a file the
 * command could reopen on the host's mount (stdio.c says which). 0, or
 * -1 with err set (a directory: refused) and nothing left running. */
int sbx_stdio_guard(struct sbx_stdio *io, char *err, size_t errlen) NONNULL(1, 2) WUNRES;
/* Closes the child's ends (the parent's copies, after the clone). */
void sbx_stdio_close(struct sbx_stdio *io) NONNULL(1);
/* After the sandbox ended: the input copy is asked to put the file's
 * offset where the command stopped reading (a device's is killed), the
 * output copies are waited for (all written, or err[] set), and a pipe
 * passed as it is gets its file status flags, size, owner, signal and
 * locks back. 0, or -1 when one could not be reaped or put back (the
 * first such failure described in io->end_msg). Safe on an io that
 * sbx_stdio_init() set and sbx_stdio_guard() never saw. */
int sbx_stdio_end(struct sbx_stdio *io) NONNULL(1);

/* The copying processes' start (stdio.c): every signal it can ignore
 * ignored, dying with passavant, holding only the fds in keep (-1
 * entries skipped). */
void sbx_pump_setup(const int *keep, size_t n) NONNULL(1);
/* The raw fork of a copying process (no atfork handlers): 0 in the
 * child, its pid, or -1. */
pid_t sbx_pump_fork(void);

/*
 * ttyrelay.c: for the fds i of 0-2 with tty[i] (the user's terminal), a
 * new pty whose slave (CLOEXEC) goes to *slave, and the relay process
 * (io->relay) between its master and the user's terminal, through the
 * filter below. 0, or -1 with err set and nothing left open or running.
 */
int sbx_tty_start(struct sbx_stdio *io, const bool tty[3], int *slave, char *err, size_t errlen)
	NONNULL(1, 2, 3) WUNRES;

/*
 * ttyfilter.c: what the command writes to its terminal, reduced to what
 * may reach the user's (text, harmless controls, the screen's own
 * sequences); see the file's comment. State carries across calls.
 */
#define SBX_TTYF_SEQ 512     /* a sequence kept whole up to this; longer: dropped */
#define SBX_TTYF_CSI_MAX 64  /* a CSI longer than this is dropped */
#define SBX_TTYF_RESET 2048  /* room for sbx_ttyf_reset()'s bytes (tab stops
				for up to SBX_TTYF_COLS columns included) */
#define SBX_TTYF_COLS 1024   /* tab stops put back up to this column */
/* Room sbx_ttyf_feed() needs for n bytes in (a C1 byte in 8-bit mode
 * becomes two; a sequence held from before is sent whole; report modes
 * withheld before are sent first). */
#define SBX_TTYF_OUT(n) (2 * (n) + SBX_TTYF_SEQ + SBX_TTYF_REPLAY)
/* The most send_withheld() writes: the 15 report modes (136 bytes), the
 * keypad, for each screen kitty's pops, flags set and SBX_TTYF_KITTY
 * pushes, the other screen visited (? 47 h/l), eight XTMODKEYS resources
 * (about 430 bytes); and the most sbx_ttyf_withdraw() writes. */
#define SBX_TTYF_REPLAY 512
#define SBX_TTYF_KITTY 8     /* kitty keyboard flags' entries replayed (kitty's
				own stack holds 8) */
#define SBX_TTYF_MODKEYS 8   /* XTMODKEYS resources 0-7 kept */
/* How the user's terminal reads bytes 0x80 and up. */
enum sbx_ttyf_cs {
	SBX_TTYF_UTF8,   /* UTF-8 (the locale says so) */
	SBX_TTYF_8BIT,   /* one byte a character: 0x80-0x9f are C1 controls */
	SBX_TTYF_EITHER, /* unknown (C, POSIX, no locale): either; UTF-8 is
			    decoded, and no byte 0x80-0x9f is sent */
	SBX_TTYF_UTF8_ONLY, /* UTF-8, read by a terminal that has no 8-bit
			       mode (TERM names one: ttyrelay.c
			       term_utf8_only()): a byte inside a
			       character is never a C1 control there */
	SBX_TTYF_UTF8_MUX,  /* UTF-8, read by a multiplexer that reads UTF-8
			       only (TERM=tmux*) and passes a title on, as
			       it is, to a terminal TERM does not name
			       (tmux's set-titles): text as UTF8_ONLY, a
			       title as UTF8 (review of round 40) */
};
struct sbx_ttyf {
	int state;                        /* enum ttyf_state (ttyfilter.c) */
	int cs;                           /* enum sbx_ttyf_cs */
	bool answers;                     /* what the terminal answers reaches the
					     command (the relay reads keys): else
					     no query is sent (set by the relay) */
	unsigned char seq[SBX_TTYF_SEQ];  /* the sequence held */
	size_t n_seq;
	bool over, bad, inter;            /* too long; malformed; intermediates seen */
	unsigned char u8[4];              /* a UTF-8 character held */
	size_t n_u8;
	uint64_t dec_set, dec_val;        /* DEC private modes changed, their values */
	uint32_t ansi_set, ansi_val;      /* ANSI modes changed, their values */
	/* kitty keeps a keyboard flags stack for each screen (the main and
	 * the alternate: [0] and [1] below), switched with the screen
	 * (? 47, ? 1047, ? 1049); alt is the screen the command left the
	 * terminal on */
	bool alt;
	unsigned kitty_push[2];           /* kitty keyboard flags pushed on the
					     terminal (sent), net, each screen */
	bool kitty_set[2];                /* flags set (CSI = u) on the terminal */
	uint8_t modkeys_sent;             /* XTMODKEYS resources the terminal got
					     from us since the keys were last
					     withdrawn: only those are put back */
	bool sgr, margins, cursor_style, keypad, g0;
	/* What keys send as the command left it, sent or withheld (the
	 * keypad, kitty's keyboard flags, xterm's modify*Keys): sent again
	 * by send_withheld() once the keys are read (ttyfilter.c
	 * key_mode()) */
	bool keypad_on;                   /* DECKPAM (ESC =) */
	/* What of the modes that change what the terminal sends (the
	 * reports: mouse, focus...; the shell's own: bracketed paste, the
	 * cursor keys' and keypad's application mode) the terminal got from
	 * us since the shell last had the keys: only those are turned off
	 * when withdrawn and at the end (a run in the background, or one
	 * whose keys were taken back, would turn off the shell's own, or a
	 * foreground program's mouse) */
	uint64_t mode_sent;               /* dec_modes[] bits */
	bool keypad_sent;
	bool kitty_base[2];               /* flags set below the command's pushes */
	unsigned kitty_depth[2];          /* the command's pushes in effect, at
					     most SBX_TTYF_KITTY */
	uint16_t kitty_flags[2][SBX_TTYF_KITTY + 1]; /* [0] the base's, then each push */
	uint8_t modkeys_set;              /* XTMODKEYS resources changed */
	int32_t modkeys_val[SBX_TTYF_MODKEYS]; /* their values (-1: disabled, > n) */
	bool g123;                        /* G1, G2 or G3 designated */
	bool saved_g0, saved_origin, saved_nowrap; /* the cursor saved (DECSC,
					     SCOSC, ? 1048 h, ? 1049 h) with a charset not ASCII
					     (G0-G3, or SO), origin
					     mode on, autowrap off: a restore
					     (DECRC, CSI u, ? 1048 l, ? 1049 l)
					     brings them back unseen */
	bool shifted;                     /* SO (G1 in GL) seen */
	bool tabs;                        /* tab stops set or cleared */
	bool protect, sace;               /* DECSCA, DECSACE set */
	bool queried;                     /* a query passed, or a report mode
					     was sent: an answer or a report may
					     come after the command's end */
	unsigned asked;                   /* queries passed, a count (the relay
					     times the terminal's answer) */
	bool title;                       /* the user's title pushed (CSI 22;0 t) */
	bool withheld;                    /* a report mode set while nothing read the
					     keys: sent once the relay reads them */
};
/* Starts f: cs (enum sbx_ttyf_cs), how the user's terminal reads bytes;
 * answers as in struct sbx_ttyf. */
void sbx_ttyf_init(struct sbx_ttyf *f, int cs, bool answers) NONNULL(1);
/* Filters n bytes of in into out (room for SBX_TTYF_OUT(n)); returns how
 * many were written. First, when answers is set and report modes were
 * withheld before, the ones on now (n may be 0 for those alone). */
size_t sbx_ttyf_feed(struct sbx_ttyf *f, const unsigned char *in, size_t n, unsigned char *out) NONNULL(1, 4);
/* The bytes that undo what the command changed on the terminal's modes
 * (without clearing the screen) into out, for a terminal cols wide (0:
 * unknown); their count, 0 when none or room is short. */
size_t sbx_ttyf_reset(const struct sbx_ttyf *f, unsigned cols, unsigned char *out, size_t room) NONNULL(1, 3);
/* The keys are no longer read (the run stopped, or put in the
 * background, while the command's modes were on): the bytes that turn
 * off what the command's modes make the terminal send into out (room for
 * SBX_TTYF_REPLAY): all of them when before is set (the shell has not
 * taken the terminal yet), else those the shell neither sets nor reads
 * (reports, Meta, kitty's flags, XTMODKEYS); all are sent again once the
 * keys are (sbx_ttyf_feed() with answers). Their count. */
size_t sbx_ttyf_withdraw(struct sbx_ttyf *f, bool before, unsigned char *out) NONNULL(1, 3);

/* A failure report on the err pipe: exit status the parent should give
 * (125 setup, 126/127 exec), errno as the child had it when the step
 * failed (0: none) and a NUL-terminated one-line message. */
struct sbx_report {
	int code;
	int err_no;
	char msg[SBX_ERRLEN];
};

/* A running sandbox (sandbox.h), made by sbx_start() (launch.c), run to
 * its end by status.c. */
struct sbx {
	pid_t pid;                  /* the sandbox's init, as seen outside */
	int listen_fd;              /* until sbx_take_listen_fd() */
	int icpt4_fd, icpt6_fd;     /* until sbx_take_intercept_fd(); -1: none */
	int dns_fd;                 /* until sbx_take_dns_fd(); -1: none */
	int status;                 /* -1 until reaped */
	char *exec_err;             /* execve failure message, or NULL */
	struct sbx_placeholder *ph; /* made on the host, removed after */
	size_t n_ph;
	size_t ph_left;             /* sbx_placeholders_left() */
	size_t n_unguarded;         /* sbx_unseen_unguarded() */
	struct sbx_stdio io;        /* the copies of fds 0-2 (stdio.c) */
};

/*
 * pathmemo.c (parent): what one mount plan has seen of the host, so that
 * each path is looked at once per plan (the reasons it decides nothing a
 * second look would not are at the top of pathmemo.c). Every function
 * takes a NULL memo, or one without memory for a new entry, as "ask the
 * kernel": the answer is the same, only slower.
 */
struct sbx_memo;

/* A new, empty memo; NULL when out of memory. Freed by sbx_memo_free(). */
struct sbx_memo *sbx_memo_new(void) MALLOC WUNRES;
/* Frees m and everything it holds; NULL is a no-op. */
void sbx_memo_free(struct sbx_memo *m);
/* lstat(2), stat(2) and readlink(2) of p, from the memo when p was looked
 * at already: same returns and errno as the call. */
int sbx_memo_lstat(struct sbx_memo *m, const char *p, struct stat *st) NONNULL(2, 3) WUNRES;
int sbx_memo_stat(struct sbx_memo *m, const char *p, struct stat *st) NONNULL(2, 3) WUNRES;
ssize_t sbx_memo_readlink(struct sbx_memo *m, const char *p, char *buf, size_t len)
	NONNULL(2, 3) WUNRES;
/* realpath(p, NULL) of an absolute p, walked component by component with
 * the memo's looks (a relative p goes to realpath(3)). Returns malloc'd
 * (the caller frees it) or NULL with errno. */
char *sbx_memo_realpath(struct sbx_memo *m, const char *p) NONNULL(2) MALLOC WUNRES;
/* sbx_memo_walk(): called with each symlink met (dir: the directory that
 * holds it, "/" for the root; lnk: its path) before it is followed; a
 * non-zero return stops the walk and is its result. */
typedef int (*sbx_link_seen_fn)(void *arg, const char *dir, const char *lnk);
/* sbx_memo_walk(): a component of the path is missing, not a directory,
 * or cannot be looked at (errno says which). */
#define SBX_WALK_MISSING 1
/* Walks p component by component as the kernel resolves it, with the
 * memo's looks (m may be NULL), following each symlink (40 at most),
 * dangling ones too. Returns 0 with out (PATH_MAX bytes) the real path
 * when p exists whole; SBX_WALK_MISSING (errno set; with existing not
 * NULL, out is the path that would be created, real up to *existing
 * bytes, its last existing directory, "" for "/"); what on_link returned
 * when it stopped the walk; or -1 with errno (ELOOP, ENAMETOOLONG, an
 * unreadable link). */
int sbx_memo_walk(struct sbx_memo *m, const char *p, sbx_link_seen_fn on_link, void *arg,
		  char out[PATH_MAX], size_t *existing) NONNULL(2, 5) WUNRES;
/* The caller has created something on the host: every failed look is
 * redone when next asked (successful ones stay). */
void sbx_memo_changed(struct sbx_memo *m);
/* How many lstat/stat/readlink calls m made (tests). */
size_t sbx_memo_calls(const struct sbx_memo *m);

/* One name of a file with several hard links, on a writable tree's
 * filesystem, met under a protected directory (mountplan.c). */
struct sbx_walk_name {
	dev_t dev;
	ino_t ino;
	bool read_deny; /* met under a deny_read directory (else deny_write) */
	char *path;	/* owned */
};

/* A write-denied regular file with more than one name on the filesystem
 * of a writable tree, whose other names sbx_hard_links_resolve() looks
 * for (links.c). */
struct sbx_hl_file {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	const char *what; /* the rule, for messages (a string literal) */
	char *path;	  /* the name the rule gave (owned) */
};

/* The growing plan while mountplan.c builds it. */
struct sbx_builder {
	struct sbx_op *ops;
	size_t n_ops, cap_ops;
	struct sbx_placeholder *ph;
	size_t n_ph, cap_ph;
	char **writable; /* canonical allow_write paths (borrowed from ops) */
	size_t n_writable;
	/* sbx_config.scratch (borrowed): a missing one's placeholder is a
	 * directory, the mount point of the session's directory. */
	const char *const *scratch;
	/* Every lstat, stat, readlink and realpath of the plan (links.c,
	 * mountplan.c) goes through it: the mandatory table's hundreds of
	 * paths share HOME, ~/.config, the working directory. Owned by
	 * sbx_plan_build(), freed before it returns; NULL: none (plain calls,
	 * as sbx_check_host_path() makes for its one path). */
	struct sbx_memo *memo;
	struct sbx_unseen unseen; /* moved to the plan when it is complete */
	bool cover; /* planning sbx_config.cover: other hard links not refused */
	const char *const *follow_under; /* sbx_config.follow_under (borrowed) */
	const char *const *follow_also;	 /* sbx_config.follow_also (borrowed) */
	unsigned long long also_walked;	 /* bit i: follow_also[i] walked (the first 64) */
	/* Names of hard-linked files met by the link walks under protected
	 * directories (mountplan.c), checked once every list is planned. */
	struct sbx_walk_name *names;
	size_t n_names, cap_names;
	/* Write-denied files with more than one name on a writable tree's
	 * filesystem (links.c): their other names are looked for in those
	 * trees, in one walk, once every list is planned. */
	struct sbx_hl_file *hl;
	size_t n_hl, cap_hl;
};

struct sbx_config;

/* mountplan.c (parent): builds everything the child needs into pl (ops,
 * envp, seccomp program), b keeping the placeholders made. On failure,
 * placeholders already made are removed. 0 or -1 with err set. */
int sbx_plan_build(const struct sbx_config *cfg, struct sbx_plan *pl, struct sbx_builder *b,
		   char *err, size_t errlen) NONNULL(1, 2, 3, 4) WUNRES;
/* gitcopies.c (parent): refuses a hidden file (a deny_read op on a
 * file, a substituted file whose content is not public) that the git
 * repository holding it tracks, or whose content is an object in that
 * repository's store or in the store of a repository holding a writable
 * tree or cwd (the working directory, canonical or not; NULL: none),
 * where the plan lets the sandbox read it. Run once the deny_read and
 * allow_read lists and the files are planned. 0 or -1 with err set. */
int sbx_check_git_copies(struct sbx_builder *b, const struct sbx_config *cfg, const char *cwd, char *err,
			 size_t errlen) NONNULL(1, 2, 4) WUNRES;
/* Frees n ops and their paths. */
void sbx_ops_free(struct sbx_op *ops, size_t n);
/* Removes the placeholders, newest first, if they are still ours and
 * still empty; frees the array. */
size_t sbx_placeholders_remove(struct sbx_placeholder *ph, size_t n);
/* Is path equal to prefix or below it (component-wise)? */
bool sbx_path_under(const char *path, const char *prefix) NONNULL(1, 2);
/* Would the command be able to create entries in dir (canonical)? */
bool sbx_plan_writable(const struct sbx_builder *b, const char *dir) NONNULL(1, 2);

/* unseen.c (parent): records the canonical deny_read path whose first
 * `existing` bytes name its last existing directory ("" for "/"; for a
 * path that exists, its parent, and then only the directories on its
 * way: the cover is granted through), unless the command may write that
 * directory or the path is not the host's in the sandbox (/tmp, /dev,
 * /proc, /sys). 0 or -1 (errno). */
int sbx_unseen_add(struct sbx_builder *b, const char *path, size_t existing, bool exists)
	NONNULL(1, 2) WUNRES;
/* unseen.c (parent): records a canonical path the mounts show again
 * inside a denied one (allow_read, a substituted file). 0 or -1. */
int sbx_unseen_grant(struct sbx_builder *b, const char *path) NONNULL(1, 2) WUNRES;
/* unseen.c: frees the sets and empties u. */
void sbx_unseen_free(struct sbx_unseen *u) NONNULL(1);
/* unseen.c: the kernel's Landlock ABI version, 0 when it has none. */
int sbx_landlock_abi(void);
/* unseen.c (child, the command's process, no_new_privs set): the
 * Landlock domain that keeps pl->unseen unreadable; nothing without
 * Landlock (the parent warned). 0 or -1 with err set. */
int sbx_unseen_apply(const struct sbx_plan *pl, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* links.c (parent): the symlink and hard-link refusals of SPEC §3.3
 * (contracts at the definitions). 0, or -1 with err set. */
int sbx_check_links(struct sbx_builder *b, const char *what, const char *p, char *err,
		    size_t errlen) NONNULL(1, 2, 3, 4) WUNRES;
int sbx_check_list_links(struct sbx_builder *b, const char *const *list, const char *what,
			 char *err, size_t errlen) NONNULL(1, 3, 4) WUNRES;
int sbx_check_hard_links(struct sbx_builder *b, const char *what, const char *p,
			 const struct stat *st, bool read, char *err, size_t errlen) NONNULL(1, 2, 3, 4, 6) WUNRES;
/* The walk of the writable trees for the other names of the files
 * sbx_check_hard_links() kept (b->hl), once every list is planned. */
int sbx_hard_links_resolve(struct sbx_builder *b, char *err, size_t errlen) NONNULL(1, 2) WUNRES;
/* Frees b->hl. */
void sbx_hard_links_free(struct sbx_builder *b) NONNULL(1);

/* status.c: waitpid without EINTR, the status mapped per SPEC §2
 * (128+N for signal N). 1 reaped, 0 still running (WNOHANG), -1 error. */
int sbx_reap(pid_t pid, int flags, int *status) NONNULL(3);
/* Closes *fd if open and sets it to -1. */
void sbx_close_fd(int *fd) NONNULL(1);

/* child.c: the child's pipeline; never returns. */
NORETURN void sbx_child_main(const struct sbx_plan *pl) NONNULL(1);

/*
 * userns.c (parent): the OOM killer takes the sandbox first: oom_score_adj 1000 on the child
 * (its init and every process of the command inherit it). Its private
 * /tmp and /dev/shm are tmpfs, whose pages count in no process's RSS: a
 * command filling them looks small, and the biggest process, passavant,
 * went instead, and the checks after the run with it (round 7 of the
 * attack). With CAP_SYS_RESOURCE the write also sets the command's floor
 * (it cannot lower its score), and passavant lowers its own to
 * SBX_OOM_SELF; without it, a process may lower its own score back to 0
 * (the init's files are read-only in the sandbox, setup_proc()). 0 or -1
 * (err).
 */
#define SBX_OOM_SELF "-900"
int sbx_oom_first(pid_t pid, char *err, size_t errlen) WUNRES;

/* userns.c (parent): setgroups deny, then uid_map and gid_map of pid,
 * mapping uid and gid to themselves. 0 or -1 with err set. */
int sbx_userns_write_maps(pid_t pid, uid_t uid, gid_t gid, char *err, size_t errlen)
	NONNULL(4) WUNRES;

struct fdpass_set;

/* netns.c (child): brings lo up and fills out with a CLOEXEC socket
 * listening on 127.0.0.1:pl->port; with pl->intercept also adds the
 * address and default routes and fills in the interception listeners
 * (the IPv6 one only where IPv6 works), the resolver socket and the user
 * and network namespace fds. 0, or -1 with err set and nothing left open. */
int sbx_netns_setup(const struct sbx_plan *pl, struct fdpass_set *out, char *err, size_t errlen)
	NONNULL(1, 2, 3) WUNRES;

/* nft.c (parent): installs the interception rule set (docs/sandbox.md
 * "Network") into the network namespace netns_fd, whose owner is userns_fd,
 * redirecting TCP to port; with v6 the IPv6 loopback rules too. Runs
 * libnftables (the child may not allocate) in a thread that joins the
 * network namespace when we are root, else (or when that setns() is
 * refused, or PASSAVANT_SBX_NFT_FORK is set) in a forked helper that joins
 * both namespaces. Blocks until it is done. 0, or -1 with err set
 * (what nft said, and the --no-intercept hint). test_break adds a rule
 * nft refuses (test hook). before_fork(arg), when not NULL, runs just
 * before the helper is forked: the caller ends its other threads' work
 * there (no thread may be inside an allocator that fork() does not lock). */
int sbx_nft_install(int userns_fd, int netns_fd, uint16_t port, bool v6, bool test_break,
		    void (*before_fork)(void *), void *arg, char *err, size_t errlen) NONNULL(8) WUNRES;

/* mountns.c (child): builds the new root from pl->ops, pivots into it,
 * mounts /proc, /dev, /tmp, chdirs to pl->cwd. 0 or -1 with err set. */
int sbx_mountns_setup(const struct sbx_plan *pl, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* seccomp.c (parent): compiles the filter of SPEC §7 into out->filter
 * (malloc'd; free with sbx_seccomp_free()). 0 or -1 with err set. */
int sbx_seccomp_compile(bool allow_unix, struct sock_fprog *out, char *err, size_t errlen)
	NONNULL(2, 3) WUNRES;
void sbx_seccomp_free(struct sock_fprog *prog) NONNULL(1);
/* seccomp.c (child): installs prog; no_new_privs must be set. 0 or -1. */
int sbx_seccomp_install(const struct sock_fprog *prog, char *err, size_t errlen) NONNULL(1, 2) WUNRES;

/* caps.c (child): empties the bounding, ambient, effective, permitted and
 * inheritable sets and locks the securebits. 0 or -1 with err set. */
int sbx_caps_drop(char *err, size_t errlen) NONNULL(1) WUNRES;
/* caps.c (child): sets no_new_privs and the parent-death signal. */
int sbx_caps_nnp_pdeathsig(char *err, size_t errlen) NONNULL(1) WUNRES;
/* caps.c (child): closes every fd above 2 except keep (-1: none). */
int sbx_close_stray_fds(int keep, char *err, size_t errlen) NONNULL(2) WUNRES;

/* init.c (child, PID 1): reaps, forwards SIGINT/SIGTERM/SIGHUP to cmd,
 * exits with cmd's status (128+N for signal N). The signals must be
 * blocked by the caller before it forked cmd. */
NORETURN void sbx_init_run(pid_t cmd);
/* The signal set init forwards, plus SIGCHLD. */
void sbx_init_sigset(sigset_t *set) NONNULL(1);

#endif

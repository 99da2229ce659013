/*
 * child.c - the sandbox child: one ordered pipeline (STYLE.md 13).
 *
 * The child was cloned into new user, mount, PID, network, IPC and UTS
 * namespaces. Each step below says why it sits where it does. Any failure
 * is reported to the parent over the CLOEXEC report pipe, with a message
 * naming the step, and the child exits 125 before the command ever runs:
 * the command never starts with less of a boundary than planned.
 *
 * The child reads the plan the parent prepared and allocates nothing (see
 * sbx_int.h). It forks with the raw clone syscall for the same reason:
 * glibc's fork() takes the allocator's locks, which another thread of the
 * parent may have held when we were cloned.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "sandbox/sbx_int.h"

extern char **environ;

/* Sends the report and exits with its code. */
NORETURN static void child_fail(const struct sbx_plan *pl, int code, const char *msg)
{
	int e = errno; /* the failed step's, before anything here */
	struct sbx_report r;
	ssize_t n;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.err_no = e;
	strncpy(r.msg, msg, sizeof(r.msg) - 1);
	/* One write below PIPE_BUF: atomic, the parent reads it whole. */
	do
		n = write(pl->err_wr, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	_exit(code);
}

/*
 * After execvp failed: is there a file named argv[0] at all? execvp
 * reports EACCES when some PATH directory was unreadable even though no
 * file of that name exists anywhere; a shell calls that "not found" (127),
 * and so do we. A name with a slash is looked up as is.
 */
static bool found_in_path(const struct sbx_plan *pl)
{
	const char *name = pl->argv[0], *path = "/bin:/usr/bin", *p, *end;
	char buf[PATH_MAX];
	struct stat st;
	size_t i, len;

	if (strchr(name, '/') != NULL)
		return stat(name, &st) == 0;
	for (i = 0; pl->envp[i] != NULL; i++)
		if (strncmp(pl->envp[i], "PATH=", 5) == 0)
			path = pl->envp[i] + 5;
	for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		/* An empty entry is the current directory. */
		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)(len ? len : 1), len ? p : ".", name) <
			    (int)sizeof(buf) &&
		    stat(buf, &st) == 0)
			return true;
	}
	return false;
}

/*
 * The host's devices at fds 0-2, each put back through its read-only bind
 * in the sandbox's /dev (round 41 of the attack and its review). An fd
 * names its inode on the mount it was opened on, the host's writable one,
 * not the sandbox's view, and the command, its owner when run as root
 * (root mapped to root), could chmod, chown or touch the host's inode
 * through /proc/self/fd/N or fchmod() without any capability:
 * - the terminal, the pty slave opened on the host's devpts: `chmod 0666`
 *   made passavant's pty open to every user of the host for the session
 *   (its keys read, text typed in past the escape filter); reopened
 *   through /dev/console, all of fds 0-2 that are it sharing one open;
 * - the memory devices stdio.c hands over as they are (/dev/null, zero,
 *   full, random, urandom; the review: `CMD < /dev/null`, what every
 *   harness gives, and stdio.c's own /dev/null in a pipeline): `chmod
 *   0600 /proc/self/fd/0` took the host's /dev/null from every other user
 *   until its next boot. Each is reopened at its own /dev path with its
 *   access mode and status flags.
 * The bind's mount refuses the chmod (EROFS). A terminal that was not
 * bound (mountns.c: best effort) is left as it is; a memory device whose
 * bind is missing stops the start (the host's node at that fd would be
 * the command's).
 */
static const struct {
	unsigned minor;
	const char *path;
} mem_devs[] = { { 3, "/dev/null" }, { 5, "/dev/zero" }, { 7, "/dev/full" }, { 8, "/dev/random" },
		 { 9, "/dev/urandom" } };

/* Opens path (a device of the sandbox's /dev) with the access mode and
 * status flags of fd; the new fd, or -1 with errno. */
static int reopen_like(int fd, const char *path, dev_t rdev)
{
	struct stat got;
	int flags, nfd, e;

	flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return -1;
	if (stat(path, &got) < 0)
		return -1;
	if (!S_ISCHR(got.st_mode) || got.st_rdev != rdev) {
		errno = ENODEV;
		return -1;
	}
	nfd = open(path, (flags & O_ACCMODE) | O_NOCTTY | O_CLOEXEC);
	if (nfd < 0)
		return -1;
	if (fcntl(nfd, F_SETFL, flags) < 0) {
		e = errno;
		(void)close(nfd);
		errno = e;
		return -1;
	}
	return nfd;
}

static void reopen_host_devices(const struct sbx_plan *pl)
{
	char err[SBX_ERRLEN];
	struct stat want, got, cur;
	int tty = -1, fd;
	bool have_tty;

	have_tty = pl->ctty_fd >= 0 && fstat(pl->ctty_fd, &want) == 0 && stat("/dev/console", &got) == 0 &&
		   got.st_ino == want.st_ino && got.st_dev == want.st_dev && got.st_rdev == want.st_rdev;
	for (int i = 0; i < 3; i++) {
		const char *path = NULL;

		if (fstat(i, &cur) < 0 || !S_ISCHR(cur.st_mode))
			continue;
		if (have_tty && cur.st_ino == want.st_ino && cur.st_dev == want.st_dev &&
		    cur.st_rdev == want.st_rdev) {
			if (tty < 0)
				tty = reopen_like(pl->ctty_fd, "/dev/console", want.st_rdev);
			if (tty < 0 || dup2(tty, i) < 0) {
				errbuf_set_errno(err, sizeof(err), errno, "cannot put the terminal at fd %d", i);
				child_fail(pl, 125, err);
			}
			continue;
		}
		for (size_t k = 0; k < ARRAY_LEN(mem_devs); k++)
			if (major(cur.st_rdev) == 1 && minor(cur.st_rdev) == mem_devs[k].minor)
				path = mem_devs[k].path;
		if (path == NULL)
			continue;
		fd = reopen_like(i, path, cur.st_rdev);
		if (fd < 0 || dup2(fd, i) < 0) {
			errbuf_set_errno(err, sizeof(err), errno,
					 "cannot give fd %d through the sandbox's %s (the host's device would be the "
					 "command's to chmod)",
					 i, path);
			child_fail(pl, 125, err);
		}
		(void)close(fd);
	}
	if (tty >= 0)
		(void)close(tty);
}

/*
 * The user's other per-user budgets (review46s, round 46's family): the
 * kernel charges the sandbox's processes (RLIMIT_NPROC), queued signals
 * (RLIMIT_SIGPENDING), POSIX message queue bytes (RLIMIT_MSGQUEUE) and
 * SHM_LOCKed memory (RLIMIT_MEMLOCK) to the host user's count too, so a
 * fork bomb or a pile of queued real-time signals left the same user on
 * the host without a fork or a sigqueue for the rest of the session. The
 * command gets half of each (soft and hard: it cannot raise the hard
 * limit back), so the host keeps the other half, as halve_inotify_budget()
 * does for inotify. An unlimited value has no budget to share and stays.
 */
static int halve_user_rlimits(char *err, size_t errlen)
{
	static const struct {
		int res;
		const char *name;
	} lim[] = {
		{RLIMIT_NPROC, "RLIMIT_NPROC"},
		{RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING"},
		{RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE"},
		{RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK"},
	};
	struct rlimit rl;
	rlim_t v;
	size_t i;

	for (i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		if (getrlimit(lim[i].res, &rl) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot read the user's %s", lim[i].name);
			return -1;
		}
		v = rl.rlim_cur;
		if (rl.rlim_max != RLIM_INFINITY && (v == RLIM_INFINITY || rl.rlim_max < v))
			v = rl.rlim_max;
		if (v == RLIM_INFINITY)
			continue;
		rl.rlim_cur = rl.rlim_max = v / 2 > 0 ? v / 2 : v;
		if (setrlimit(lim[i].res, &rl) < 0) {
			errbuf_set_errno(err, errlen, errno,
					 "cannot limit the sandbox's %s: the command could use up the user's on the host",
					 lim[i].name);
			return -1;
		}
	}
	return 0;
}

/*
 * Round 48 (attack48s): no core dump of the command or of what it runs.
 * A crash inside dumps through /proc/sys/kernel/core_pattern, which is
 * the host's: a pattern starting with '|' (systemd-coredump, apport,
 * ABRT) makes the host kernel run that helper as root in the host's
 * namespaces, outside the sandbox, fed the crashed process's memory and
 * names it chose (its comm, its exe's path), and the helper looks at
 * the crashed pid's /proc (apport's and systemd-coredump's container
 * paths, each a history of CVEs). The kernel ignores RLIMIT_CORE for a
 * pipe but for one value: 1 aborts the dump ("RLIMIT_CORE is set to 1,
 * aborting core"), and it is below any file dump's minimum (a page) too.
 * PR_SET_DUMPABLE 0 is reset by every execve. Soft and hard 1: raising
 * the hard limit takes CAP_SYS_RESOURCE in the host's user namespace,
 * which the command never has.
 */
static int no_core_dumps(char *err, size_t errlen)
{
	struct rlimit rl = {.rlim_cur = 1, .rlim_max = 1};

	if (setrlimit(RLIMIT_CORE, &rl) < 0) {
		errbuf_set_errno(err, errlen, errno,
				 "cannot set the sandbox's RLIMIT_CORE to 1: a crash inside could run the host's core "
				 "dump helper (kernel.core_pattern) outside the sandbox");
		return -1;
	}
	return 0;
}

/* The command's process: the last cuts, then execve. */
NORETURN static void run_command(const struct sbx_plan *pl)
{
	char err[SBX_ERRLEN];
	sigset_t none;
	int sig, saved;

	/* The init above us keeps its handlers and mask; the command starts
	 * with default dispositions and nothing blocked, whatever the
	 * caller's thread had: an ignored SIGPIPE or a blocked SIGTERM
	 * would change how the command behaves and defeat forwarding. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(pl, 125, "cannot restore the signal mask");
	/* PDEATHSIG is not inherited through fork: set it again, with
	 * no_new_privs (already set, idempotent). */
	if (sbx_caps_nnp_pdeathsig(err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* The pipes in place of the host files at fds 0-2 (stdio.c): dup2
	 * drops CLOEXEC on the copy, the original closes at exec. */
	for (int i = 0; i < 3; i++) {
		if (pl->stdio_fd[i] >= 0 && dup2(pl->stdio_fd[i], i) < 0) {
			errbuf_set_errno(err, sizeof(err), errno, "cannot put the copy's pipe at fd %d", i);
			child_fail(pl, 125, err);
		}
	}
	reopen_host_devices(pl);
	/* Denied paths that do not exist yet stay unreadable should they
	 * appear (unseen.c): listed with our capabilities still held, in
	 * the final view, before the command's first file. */
	if (sbx_unseen_apply(pl, err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	if (halve_user_rlimits(err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	if (no_core_dumps(err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* Capabilities after everything that needed them (mounts, netns),
	 * before seccomp (capset is not filtered, but order keeps the
	 * filter the very last call). */
	if (sbx_caps_drop(err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* Stray fds: everything but stdio and the report pipe. */
	if (sbx_close_stray_fds(pl->err_wr, err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* Seccomp last: from here on, even a bug of ours cannot mount or
	 * unshare. execvp needs none of the refused calls. */
	if (sbx_seccomp_install(&pl->prog, err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	environ = pl->envp;
	execvp(pl->argv[0], pl->argv);
	saved = errno;
	/* 127 when the command was not found, 126 when found but not
	 * runnable: what a shell reports (SPEC §2). */
	errbuf_set_errno(err, sizeof(err), saved, "cannot run %s", pl->argv[0]);
	child_fail(pl, saved == ENOENT || saved == ENOTDIR || !found_in_path(pl) ? 127 : 126, err);
}

NORETURN void sbx_child_main(const struct sbx_plan *pl)
{
	char err[SBX_ERRLEN];
	sigset_t set;
	ssize_t n;
	struct fdpass_set fds;
	pid_t cmd;
	char c;

	/* 0. no_new_privs first (bubblewrap.c 2914): nothing we run from
	 * here can gain privileges. Parent-death signal: if the proxy dies
	 * during setup, we die (the sync read below also sees EOF). */
	if (sbx_caps_nnp_pdeathsig(err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* A session of our own (stdio.c): its terminal is passavant's pty
	 * when the caller gave the command a terminal, relayed through the
	 * escape filter (ttyrelay.c), else none, and /dev/tty is ENXIO for
	 * every process of the sandbox. Before anything that could open a
	 * terminal. The init takes the pty as the session's leader; the
	 * command, forked in its group, is the terminal's foreground. */
	if (pl->new_session && setsid() < 0) {
		errbuf_set_errno(err, sizeof(err), errno, "cannot start a session without a terminal");
		child_fail(pl, 125, err);
	}
	if (pl->ctty_fd >= 0 && ioctl(pl->ctty_fd, TIOCSCTTY, 0) < 0) {
		errbuf_set_errno(err, sizeof(err), errno, "cannot give the sandbox its terminal (TIOCSCTTY)");
		child_fail(pl, 125, err);
	}
	/* 1. Wait for the maps: until the parent wrote uid_map, we have no
	 * uid in our namespace and mount and netns calls would fail. */
	do
		n = recv(pl->sock, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		child_fail(pl, 125, "the parent did not finish the user namespace maps");
	/* The UTS namespace is ours: a neutral hostname hides the host's. */
	if (sethostname("passavant", strlen("passavant")) < 0) {
		errbuf_set_errno(err, sizeof(err), errno, "cannot set the hostname in the UTS namespace");
		child_fail(pl, 125, err);
	}
	/* 2. Network before mounts: the sockets need nothing from the
	 * filesystem, and the proxy can adopt them while we keep working.
	 * With interception also the address, the routes, and the
	 * namespace fds the parent's nftables helper joins. */
	if (sbx_netns_setup(pl, &fds, err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* 3. Hand everything out in one message and drop our copies: the
	 * command must not be able to accept its own connections or read
	 * the resolver's queries. */
	if (fdpass_send(pl->sock, &fds) < 0) {
		errbuf_set_errno(err, sizeof(err), errno, "cannot pass the sandbox's sockets to the proxy");
		child_fail(pl, 125, err);
	}
	fdpass_set_close(&fds);
	if (!pl->hold)
		close(pl->sock);
	/* 4. The filesystem view; /proc needs us to be PID 1 of the new PID
	 * namespace, which we are since clone. With interception, the
	 * parent installs the rules meanwhile (and the caller's meanwhile
	 * work, sbx_config.meanwhile, runs from "go" on). */
	if (sbx_mountns_setup(pl, err, sizeof(err)) < 0)
		child_fail(pl, 125, err);
	/* 4b. The command must never run without the rules, or before the
	 * parent's meanwhile work (a file's content) is done: wait for its
	 * "release" (EOF: it failed, and it reports why; we only end). */
	if (pl->hold) {
		do
			n = recv(pl->sock, &c, 1, 0);
		while (n < 0 && errno == EINTR);
		if (n != 1 || c != 'R')
			child_fail(pl, 125, pl->intercept ? "the interception rules were not installed" SBX_NO_INTERCEPT_HINT
						   : "the sandbox's parent did not release the command");
		close(pl->sock);
	}
	/* 5. The environment is the parent's prepared array: assigned in
	 * run_command() just before execvp, so PATH lookup uses it. */
	/* 6. Fork the command; we stay as PID 1. Signals are blocked before
	 * the fork so none is lost between fork and init's sigwaitinfo. */
	sbx_init_sigset(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		child_fail(pl, 125, "cannot block signals for the init");
	cmd = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
	if (cmd < 0) {
		errbuf_set_errno(err, sizeof(err), errno, "cannot fork the command");
		child_fail(pl, 125, err);
	}
	if (cmd == 0)
		run_command(pl); /* 7., 8. */
	/* The init keeps no fd but stdio: the report pipe must reach EOF
	 * when the command execs. It is not dumpable, so the command cannot
	 * open /proc/1/mem, and it drops its capabilities; it needs none to
	 * signal and reap its own child. */
	(void)close_range(3, ~0U, 0);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (sbx_caps_drop(err, sizeof(err)) < 0) {
		/* Defence in depth only: the command is confined on its own,
		 * and undumpable, capable init is out of its reach anyway. */
	}
	sbx_init_run(cmd);
}

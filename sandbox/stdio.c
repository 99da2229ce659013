/*
 * stdio.c - the command's standard input, output and error, kept from
 * reaching the host's files (parent side, before the clone).
 *
 * A descriptor the command inherits names its file on the host's mount,
 * not on the sandbox's view: `open("/proc/self/fd/0", O_WRONLY)` reopens
 * a file given as standard input for writing, whatever the view makes
 * read-only (round 15 of the attack: `passavant run -- CMD < ~/.bashrc`
 * let CMD append to it), and a directory given as one reaches every file
 * below it (`/proc/self/fd/0/...`). So a regular file, a block device or
 * a character device other than a terminal or one of the harmless
 * memory devices (/dev/null, zero, full, random, urandom) is not handed
 * to the command: it gets a pipe, and a small process of ours outside
 * the sandbox copies the file into it (standard input) or out of it
 * (output, error; one pipe when both share one open file, so their
 * order is kept). A directory and a listening socket are refused.
 * Anonymous pipes are passed as they are when no other process holds
 * the same end (round 46: one that another process reads or writes too
 * is copied, pipe_held_elsewhere()): reopening them reaches nothing
 * new; their file status flags and size, which the command shares with
 * the host's holders of the same open file, are put back when it ends
 * (round 44 of the attack: `fcntl(0, F_SETFL, O_NONBLOCK)` outlasted the
 * run, the shell's next reader of the pipe got EAGAIN). Every socket is
 * copied (socket_judge()): a connected Unix stream socket too since
 * round 44, whose other end is a host process (a Node or libuv parent's
 * stdio, journald's stream): passed, the command shut it down for
 * passavant's own report, sent descriptors into the host process's
 * queue and took its pidfd (SO_PEERPIDFD). So is a named FIFO (its node
 * is the host's, on a writable mount: review of round 41). The memory devices passed are
 * reopened in the sandbox through its read-only binds (child.c
 * reopen_host_devices()): the host's node would be the command's to
 * chmod when run as root.
 *
 * The copying processes are forked with the raw clone syscall (no
 * atfork handlers, as launch.c's clone) and call only system calls.
 *
 * Terminals: a terminal among fds 0-2 is never handed over either. The
 * command gets the slave of a pseudo-terminal of ours in its place, and
 * the relay (ttyrelay.c) copies between it and the user's terminal
 * through the escape filter. The sandbox always has a session of its own
 * (new_session: setsid() in the child, the init and the command after
 * it): with that pty as its controlling terminal (ctty: TIOCSCTTY in the
 * child), else with none. The sandbox's /dev has the `tty` device, which
 * is whatever terminal the opener's session controls: it is then the
 * pty, or ENXIO. Round 32 of the attack: with fds 0-2 piped, the command
 * opened /dev/tty, the caller's terminal, and wrote OSC 52 there, or drew
 * a false password prompt and read the keys typed; given the terminal,
 * it wrote to it unfiltered.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/kcmp.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* What the guard does with one of fds 0-2. */
enum stdio_how { STDIO_PASS, STDIO_COPY, STDIO_TTY, STDIO_REFUSE_DIR, STDIO_REFUSE_LISTEN };

/*
 * A socket: a listening one is refused (the command would accept the
 * host's connections); any other is copied. An inet or Unix datagram
 * socket lives in the host's network namespace, and `connect(AF_UNSPEC)`
 * then `connect()` took it anywhere, past the proxy (round 16 of the
 * attack: inetd, systemd Accept=yes, `socat EXEC:` hand such a socket
 * over as stdio). A connected Unix stream or seqpacket socket cannot be
 * connected again, but it is one object with a host process at its
 * other end (round 44 of the attack: libuv, so Node, gives its children
 * such sockets as stdio; journald's stream is one): `shutdown()` on it
 * cut passavant's own report after the run (EPIPE), `sendmsg()` put
 * descriptors of the sandbox in the host process's queue, and
 * `SO_PEERPIDFD` handed the command a pidfd of the host process (the
 * kernel refuses signals and PIDFD_GET_INFO through it across the PID
 * namespace, EINVAL and EREMOTE; poll() still says when it ends).
 */
static enum stdio_how socket_judge(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == 0 && v != 0)
		return STDIO_REFUSE_LISTEN;
	return STDIO_COPY;
}

static const char *const stdio_name[3] = {"standard input", "standard output", "standard error"};

/* Whether fd may be handed to the command as it is. */
static enum stdio_how stdio_judge(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return STDIO_PASS; /* closed: stays closed */
	/* An anonymous pipe passes; a named FIFO is an inode of the host's
	 * file system on its writable mount, whose owner the command is
	 * when run as root: through its fd it chmod'ed, chowned and touched
	 * the host's node (review of round 41: `CMD > /run/x.fifo` left it
	 * 0666). Copied like a device, its bytes the same. */
	if (S_ISFIFO(st.st_mode)) {
		struct statfs sf;

		if (fstatfs(fd, &sf) == 0 && sf.f_type == PIPEFS_MAGIC)
			return STDIO_PASS;
		return STDIO_COPY;
	}
	if (S_ISSOCK(st.st_mode))
		return socket_judge(fd);
	if (S_ISDIR(st.st_mode))
		return STDIO_REFUSE_DIR;
	if (S_ISCHR(st.st_mode)) {
		unsigned mj = major(st.st_rdev), mn = minor(st.st_rdev);

		/* /dev/null, zero, full, random, urandom: nothing to reach */
		if (mj == 1 && (mn == 3 || mn == 5 || mn == 7 || mn == 8 || mn == 9))
			return STDIO_PASS;
		if (isatty(fd))
			return STDIO_TTY;
		return STDIO_COPY;
	}
	/* Anything else (a file without a type: a pidfd, an eventfd, a
	 * timerfd, an inotify or signalfd descriptor) is copied too: the
	 * command is handed no object of the host's it was not meant to
	 * reach (round 44 of the attack: a pidfd of a host process given
	 * as stdin was the command's; the kernel refuses it signals and
	 * PIDFD_GET_INFO across the PID namespace, not poll() for the
	 * process's end). */
	return STDIO_COPY;
}

/* Whether fd is an anonymous pipe (pipefs). */
static bool is_pipe(int fd)
{
	struct stat st;
	struct statfs sf;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fstatfs(fd, &sf) == 0 && sf.f_type == PIPEFS_MAGIC;
}

/* Whether fds a and b write into one stream: one open file description
 * (`>f 2>&1`), or two appending to one file (`>>f 2>>f`, where the kernel
 * kept their order). */
static bool same_stream(int a, int b)
{
	struct stat sa, sb;
	long r = syscall(SYS_kcmp, (long)getpid(), (long)getpid(), (long)KCMP_FILE, (long)a, (long)b);
	int fa, fb;

	if (r == 0)
		return true;
	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino)
		return false;
	fa = fcntl(a, F_GETFL);
	fb = fcntl(b, F_GETFL);
	if (fa < 0 || fb < 0)
		return false;
	if ((fa & O_APPEND) && (fb & O_APPEND))
		return true;
	/* No kcmp (CONFIG_KCMP off): the same file, one flags word. */
	return r < 0 && fa == fb;
}

/* Closes every fd but the (up to three) in keep, each -1 or >= 0. */
static void close_all_but(const int *keep, size_t n)
{
	int k[3], lo = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (keep[i] >= 0)
			k[m++] = keep[i];
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && k[j - 1] > k[j]; j--) {
			int t = k[j];

			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	for (size_t i = 0; i < m; i++) {
		if (k[i] > lo)
			(void)close_range((unsigned)lo, (unsigned)k[i] - 1, 0);
		lo = k[i] + 1;
	}
	(void)close_range((unsigned)lo, ~0U, 0);
}

/*
 * A copying process's start: every signal it can ignore ignored (the
 * terminal's ^C goes to the whole group, `timeout` sends SIGTERM to it,
 * SIGXFSZ would end it at a size limit: the sandbox decides how it ends,
 * and what it wrote still reaches the file or is reported), dying with
 * passavant, holding only its own descriptors, and not dumpable (round
 * 45): it holds the host's file and the command's pipe, and its buffer
 * what passed between them. The command cannot name it (another PID
 * namespace; seccomp refuses ptrace outside), but a process of the same
 * user on the host could ptrace it, read /proc/PID/mem, environ (the
 * caller's environment, copied from passavant) and take its fds through
 * /proc/PID/fd; not dumpable, only CAP_SYS_PTRACE can, and no core dump
 * of it is written. passavant itself becomes non-dumpable only after the
 * sandbox started (proxy.c), too late for the copies forked before.
 */
void sbx_pump_setup(const int *keep, size_t n)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGUSR1)
			(void)signal(sig, SIG_IGN);
	(void)sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(EIO); /* reported as a failed copy: fail closed */
	close_all_but(keep, n);
}

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* A copying process's stop: SIGUSR1 blocked but for *none, the mask its
 * waits (ppoll, sigsuspend) let it in with; no SA_RESTART, so they end. */
static void stop_by_usr1(sigset_t *none)
{
	struct sigaction sa;
	sigset_t usr1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	(void)sigaction(SIGUSR1, &sa, NULL);
	(void)sigemptyset(&usr1);
	(void)sigaddset(&usr1, SIGUSR1);
	(void)sigemptyset(none);
	(void)sigprocmask(SIG_BLOCK, &usr1, NULL);
}

/*
 * Output: the pipe into the file until EOF. read(2) and write(2), not
 * splice(2): into a file splice takes the file's offset before it waits
 * for data, and passavant's own lines written to the same file meanwhile
 * were overwritten. A write that fails (ENOSPC, EDQUOT, EIO, EFBIG) is
 * not the command's to see any more: the rest is read and dropped, so it
 * ends as it would have, and the exit status is that errno, which `run`
 * reports (0: all written). A reader that is gone (EPIPE, ECONNRESET,
 * ENOTCONN) ends the copy at once: the command sees it at its next
 * write, as it would have without the copy.
 */
NORETURN static void copy_out(int in, int out)
{
	static char buf[65536];
	int keep[2] = {in, out}, failed = 0;
	sigset_t none;

	sbx_pump_setup(keep, 2);
	/* The stop (SIGUSR1, let in only while waiting for data): the
	 * sandbox ended but the pipe has no EOF, since the command sent its
	 * write end away in a descriptor message that only the kernel's
	 * garbage collection frees (round 16 of the attack). What is in
	 * the pipe is copied, then we end. */
	stop_by_usr1(&none);
	(void)fcntl(in, F_SETFL, O_NONBLOCK);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = in, .events = POLLIN};

			if (stop_asked)
				_exit(failed);
			(void)ppoll(&pf, 1, NULL, &none);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(failed);
		while (failed == 0 && off < (size_t)n) {
			ssize_t w = write(out, buf + off, (size_t)n - off);

			if (w > 0) {
				off += (size_t)w;
			} else if (w < 0 && errno == EAGAIN) {
				struct pollfd pf = {.fd = out, .events = POLLOUT};

				(void)poll(&pf, 1, -1);
			} else if (w < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)) {
				/* The reader is gone (a socket's peer, a
				 * FIFO's reader): we end, so the command's
				 * next write gets EPIPE or SIGPIPE as it did
				 * from the socket or FIFO itself; dropped, a
				 * producer that ends on it (`yes`, `find /`)
				 * ran on for nothing (review of round 44). */
				_exit(errno);
			} else if (w < 0 && errno != EINTR) {
				failed = errno > 0 && errno < 256 ? errno : EIO;
			} else if (w == 0) {
				failed = EIO;
			}
		}
	}
}

/*
 * Input from a file that can seek: read at an offset of our own (pread),
 * into the pipe, until passavant asks us to stop (SIGUSR1, once the
 * sandbox ended). Then the file's offset, which the caller shares (`while
 * read f; do passavant run ...; done < list`), is put where the command
 * stopped reading: where it started, plus what went into the pipe, less
 * what is still in it. We hold a read end ourselves so that the count
 * survives the command (and so no EPIPE ends us: the writes wait, without
 * blocking, in ppoll, where the stop is let in).
 */
NORETURN static void copy_in_seekable(int in, int wr, int rd, off_t start)
{
	static char buf[65536];
	int keep[3] = {in, wr, rd}, unread = 0;
	sigset_t none;
	size_t have = 0, off = 0;
	off_t pos = start, pushed = 0;
	bool eof = false;

	sbx_pump_setup(keep, 3);
	stop_by_usr1(&none);
	(void)fcntl(wr, F_SETFL, O_NONBLOCK);
	while (!stop_asked) {
		ssize_t n;

		if (eof) {
			(void)sigsuspend(&none);
			continue;
		}
		if (off == have) {
			n = pread(in, buf, sizeof(buf), pos);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* The end (or an error): the command sees EOF
				 * once it has read what is in the pipe. */
				eof = true;
				(void)close(wr);
				continue;
			}
			pos += n;
			have = (size_t)n;
			off = 0;
		}
		n = write(wr, buf + off, have - off);
		if (n > 0) {
			off += (size_t)n;
			pushed += n;
		} else if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = wr, .events = POLLOUT};

			(void)ppoll(&pf, 1, NULL, &none);
		} else if (n < 0 && errno != EINTR) {
			eof = true;
			(void)close(wr);
		}
	}
	if (ioctl(rd, FIONREAD, &unread) < 0 || unread < 0)
		unread = 0;
	(void)lseek(in, start + pushed - unread, SEEK_SET);
	_exit(0);
}

/* Input that cannot seek (a device): copied as it comes; what the copy
 * read ahead is lost to the caller. Killed when the sandbox ends. */
NORETURN static void copy_in_stream(int in, int wr)
{
	static char buf[65536];
	int keep[2] = {in, wr};

	sbx_pump_setup(keep, 2);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		while (off < (size_t)n) {
			ssize_t w = write(wr, buf + off, (size_t)n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(0); /* the command is gone */
			off += (size_t)w;
		}
	}
}

/* n bytes read from in into buf (65536 bytes) and dropped: 0, or -1. */
static int drop_read(int in, char *buf, size_t n)
{
	while (n > 0) {
		ssize_t r = read(in, buf, n < 65536 ? n : 65536);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Input from a pipe that other host processes read too (round 46): the
 * command must not get the pipe itself (it reopened it for writing
 * through /proc/self/fd/0 and put lines into it that the host's next
 * reader took for its own), and a copy must not read ahead either
 * (`producer | while read f; do passavant run -- CMD; done`: each run
 * would eat the lines of the next ones). So nothing is taken from the
 * host's pipe that the command did not read: tee(2) puts a copy of the
 * pipe's first buffer into the command's pipe, which holds one buffer
 * (F_SETPIPE_SZ one page: writable again means empty), and only once
 * the command read all of it is it dropped from the host's pipe, then
 * the next one. When passavant asks us to stop (SIGUSR1, the sandbox
 * ended), what the command read of the last buffer is dropped, the rest
 * stays for the host's next reader. We hold a read end of the command's
 * pipe (its count survives the command, and no EPIPE ends us).
 */
NORETURN static void copy_in_pipe(int in, int wr, int rd)
{
	static char buf[65536];
	int keep[3] = {in, wr, rd}, unread = 0;
	sigset_t none;
	size_t teed = 0;
	bool eof = false;

	sbx_pump_setup(keep, 3);
	stop_by_usr1(&none);
	if (fcntl(wr, F_SETPIPE_SZ, 4096) < 0)
		_exit(EIO); /* a larger pipe would read ahead: fail closed */
	while (!stop_asked) {
		struct pollfd pf;
		ssize_t n;

		if (eof) {
			(void)sigsuspend(&none);
			continue;
		}
		if (teed == 0) {
			n = tee(in, wr, sizeof(buf), SPLICE_F_NONBLOCK);
			if (n > 0) {
				teed = (size_t)n;
				continue;
			}
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				/* no writer left (or an error): EOF for the command */
				eof = true;
				(void)close(wr);
				continue;
			}
			/* Nothing to take, or the command's pipe holds what
			 * the command wrote into it itself (/dev/stdin): that
			 * read back first. It can only make the copy drop
			 * less (the host's own bytes read twice), never put
			 * a byte of its own into the host's pipe. */
			if (ioctl(rd, FIONREAD, &unread) == 0 && unread > 0) {
				pf.fd = wr;
				pf.events = POLLOUT;
			} else {
				pf.fd = in;
				pf.events = POLLIN;
			}
		} else {
			if (ioctl(rd, FIONREAD, &unread) < 0)
				unread = 1;
			if (unread == 0) {
				/* all read by the command: dropped from the host's */
				if (drop_read(in, buf, teed) < 0)
					_exit(EIO);
				teed = 0;
				continue;
			}
			/* one buffer's pipe: writable again means empty */
			pf.fd = wr;
			pf.events = POLLOUT;
		}
		(void)ppoll(&pf, 1, NULL, &none);
	}
	if (ioctl(rd, FIONREAD, &unread) < 0 || unread < 0)
		unread = 0;
	(void)drop_read(in, buf, teed > (size_t)unread ? teed - (size_t)unread : 0);
	_exit(0);
}

/* The parent and session of pid, from /proc/PID/stat: 0, or -1 (errno;
 * ENOENT: gone). */
static int proc_ids(pid_t pid, pid_t *ppid, pid_t *sid)
{
	char path[64], buf[512], *p;
	long pp, ss;
	ssize_t n;
	int fd;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0) {
		errno = n == 0 ? ENOENT : errno;
		return -1;
	}
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp session ...": comm may hold ')' */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %ld %*d %ld", &pp, &ss) != 2 || pp < 0 || ss < 0) {
		errno = EINVAL;
		return -1;
	}
	*ppid = (pid_t)pp;
	*sid = (pid_t)ss;
	return 0;
}

/*
 * Round 47: whether pid, a process whose fds passavant cannot read
 * (another user's: a `sudo` in the pipeline, or one of its own made
 * non-dumpable), may hold a pipe passavant was given: it, or one of its
 * ancestors, is in passavant's session (sudo with use_pty starts the
 * command in a session of its own, below sudo in the caller's). One of
 * passavant's own ancestors counts too: a root loop that reads the pipe
 * and runs passavant through `su` holds it. The cost: under an
 * interactive `su USER` (the root su in the session) every pipe at fds
 * 0-2 is copied. Its stat not readable (hidepid=1): true, fail closed;
 * gone: false.
 */
static bool near_session(pid_t pid, pid_t sid)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		pid_t pp, ps;

		if (proc_ids(pid, &pp, &ps) < 0)
			return errno != ENOENT;
		if (ps == sid)
			return true;
		pid = pp;
	}
	return false;
}

/*
 * Whether all processes that may hold a pipe are in the /proc
 * pipe_held_elsewhere() reads (round 47): /proc is of passavant's PID
 * namespace (/proc/self is its pid) and shows other users' processes
 * (PID 1 is listed: not hidepid=2 or hidepid=invisible for a user other
 * than root).
 */
static bool proc_shows_all(void)
{
	char self[32], link[32];
	struct stat st;
	ssize_t n;

	n = readlink("/proc/self", link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	(void)snprintf(self, sizeof(self), "%ld", (long)getpid());
	return strcmp(link, self) == 0 && stat("/proc/1", &st) == 0;
}

/*
 * Whether another process holds the same end of the pipe at fd i (a
 * read end for 0, a write end for 1 and 2) as an fd of its own (round
 * 46): /proc/PID/fd of every process this one may read but this one (its
 * fds are the caller's, and keep_passed()'s copies are among them). Such
 * a holder is what the command reached by reopening its fd the other way
 * through /proc/self/fd/N: a reader of the same
 * standard input got what the command wrote into it, a writer of the
 * same standard output had its bytes read by the command. Processes
 * whose fds are closed to us (other users', non-dumpable ones) are
 * taken for holders when they are of our session or below a process of
 * it (round 47: what the command wrote into the pipe a root `sudo` of
 * the same pipeline read as its own input); /proc not readable, of
 * another PID namespace or hiding other users' processes: true.
 */
static bool pipe_held_elsewhere(int i)
{
	char want[64], path[64], link[64];
	struct stat st;
	pid_t self = getpid(), sid = getsid(0);
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (fstat(i, &st) < 0)
		return false;
	(void)snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)st.st_ino);
	if (!proc_shows_all())
		return true;
	d = opendir("/proc");
	if (d == NULL)
		return true;
	while (!found && (e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		struct dirent *f;
		DIR *fds;
		int dfd;

		if (pid <= 0 || *end != '\0' || (pid_t)pid == self)
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			/* gone: nothing; closed to us: unknown fds */
			if (errno != ENOENT && near_session((pid_t)pid, sid))
				found = true;
			continue;
		}
		fds = fdopendir(dfd);
		if (fds == NULL) {
			(void)close(dfd);
			continue;
		}
		while (!found && (f = readdir(fds)) != NULL) {
			long fd = strtol(f->d_name, &end, 10);
			ssize_t n;
			char info[64], text[256];
			int ifd;

			if (f->d_name[0] == '.' || *end != '\0')
				continue;
			n = readlinkat(dfd, f->d_name, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, want) != 0)
				continue;
			/* the same pipe: which end, from its flags (octal) */
			(void)snprintf(info, sizeof(info), "/proc/%ld/fdinfo/%ld", pid, fd);
			ifd = open(info, O_RDONLY | O_CLOEXEC);
			n = ifd >= 0 ? read(ifd, text, sizeof(text) - 1) : -1;
			if (ifd >= 0)
				(void)close(ifd);
			if (n > 0) {
				char *fl;

				text[n] = '\0';
				fl = strstr(text, "flags:");
				if (fl != NULL) {
					long flags = strtol(fl + 6, NULL, 8);

					/* O_RDWR (`exec 3<>/dev/stdin`) holds both */
					found = (flags & O_ACCMODE) == (i == 0 ? O_RDONLY : O_WRONLY) ||
						(flags & O_ACCMODE) == O_RDWR;
					continue;
				}
			}
			found = true; /* the same pipe, its end unknown: fail closed */
		}
		(void)closedir(fds);
	}
	(void)closedir(d);
	return found;
}

/* The raw fork of a copying process (no atfork handlers, as launch.c's
 * clone): 0 in the child, its pid, or -1. */
pid_t sbx_pump_fork(void)
{
	return (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
}

/* Starts the copy of stdin (fd 0) into a new pipe; the read end for the
 * command into *child. 0 or -1 (errno). */
static int start_input(struct sbx_stdio *io, int *child)
{
	int p[2], rd;
	off_t start = -1;
	struct stat st;
	bool pipe_in = false;

	if (fstat(0, &st) == 0 && S_ISREG(st.st_mode))
		start = lseek(0, 0, SEEK_CUR);
	if (S_ISFIFO(st.st_mode)) {
		struct statfs sf;

		pipe_in = fstatfs(0, &sf) == 0 && sf.f_type == PIPEFS_MAGIC;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	rd = start >= 0 || pipe_in ? fcntl(p[0], F_DUPFD_CLOEXEC, 3) : -1;
	if ((start >= 0 || pipe_in) && rd < 0) {
		int e = errno;

		(void)close(p[0]);
		(void)close(p[1]);
		errno = e;
		return -1;
	}
	io->pump[0] = sbx_pump_fork();
	if (io->pump[0] == 0) {
		if (start >= 0)
			copy_in_seekable(0, p[1], rd, start);
		if (pipe_in)
			copy_in_pipe(0, p[1], rd);
		copy_in_stream(0, p[1]);
	}
	{
		int e = errno;

		(void)close(p[1]);
		if (rd >= 0)
			(void)close(rd);
		if (io->pump[0] < 0) {
			(void)close(p[0]);
			errno = e;
			return -1;
		}
	}
	io->in_seekable = start >= 0 || pipe_in;
	*child = p[0];
	return 0;
}

/* Starts the copy of the pipe into fd i (1, 2); the write end for the
 * command into *child. 0 or -1 (errno). */
static int start_output(struct sbx_stdio *io, int i, int *child)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	io->pump[i] = sbx_pump_fork();
	if (io->pump[i] == 0)
		copy_out(p[0], i);
	if (io->pump[i] < 0) {
		int e = errno;

		(void)close(p[0]);
		(void)close(p[1]);
		errno = e;
		return -1;
	}
	(void)close(p[0]);
	*child = p[1];
	return 0;
}

bool sbx_stdio_pipeline(void)
{
	struct stat st;

	return isatty(0) && !isatty(1) && fstat(1, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/* The parent of pid, from /proc/PID/stat (0: none, or not readable). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;
	long pp;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold spaces and ')' */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %ld", &pp) != 1 || pp < 0)
		return 0;
	return (pid_t)pp;
}

pid_t sbx_stdio_tty_reader(void)
{
	struct stat tty, st;
	pid_t up[64], self = getpid();
	size_t n_up = 0;
	DIR *d;
	struct dirent *e;
	pid_t found = 0;

	if (fstat(0, &tty) < 0 || !S_ISCHR(tty.st_mode))
		return 0;
	for (pid_t p = getppid(); p > 0 && n_up < sizeof(up) / sizeof(up[0]); p = parent_of(p))
		up[n_up++] = p;
	d = opendir("/proc");
	if (d == NULL)
		return -1;
	while (found == 0 && (e = readdir(d)) != NULL) {
		char path[64], *end;
		long v = strtol(e->d_name, &end, 10);
		bool skip = v <= 0 || *end != '\0' || (pid_t)v == self;

		for (size_t i = 0; !skip && i < n_up; i++)
			skip = up[i] == (pid_t)v;
		if (skip)
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%ld/fd/0", v);
		/* another user's: EACCES, not seen */
		if (stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == tty.st_rdev &&
		    parent_of((pid_t)v) != self)
			found = (pid_t)v;
	}
	(void)closedir(d);
	return found;
}

bool sbx_stdio_keys_foreign(void)
{
	pid_t sid = getsid(0), pid;
	int st;

	if (!isatty(0))
		return false;
	if (sid > 0 && tcgetsid(0) == sid)
		return false; /* ours: job control says when (ttyrelay.c may_take()) */
	/* no session's but ours to arbitrate: another program reading it
	 * (round 40) makes it not ours to read */
	if (sbx_stdio_tty_reader() != 0)
		return true;
	/* a session of our own without a terminal: this one becomes ours
	 * if it is no other session's (EPERM if it is, or if we have one) */
	if (sid == getpid() && ioctl(0, TIOCSCTTY, 0) == 0)
		return false;
	/* asked from a session of its own: a child that takes it as its
	 * controlling terminal, and gives it up (TIOCNOTTY: SIGHUP to its
	 * own group, ignored), succeeds only on a terminal of no session */
	pid = sbx_pump_fork();
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = SIG_IGN};

		if (sigaction(SIGHUP, &sa, NULL) < 0 || setsid() < 0)
			_exit(2);
		if (ioctl(0, TIOCSCTTY, 0) < 0)
			_exit(1);
		(void)ioctl(0, TIOCNOTTY);
		_exit(0);
	}
	if (pid < 0)
		return true;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return true;
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

void sbx_stdio_init(struct sbx_stdio *io)
{
	for (int i = 0; i < 3; i++) {
		io->child_fd[i] = -1;
		io->pump[i] = -1;
		io->err[i] = 0;
		io->kept_fd[i] = -1;
		io->kept_fl[i] = -1;
		io->kept_psz[i] = -1;
		io->kept_own_type[i] = -1;
		io->kept_own_pid[i] = 0;
		io->kept_sig[i] = -1;
		io->kept_lk[i].n = -1;
		io->kept_mode[i] = -1;
		io->kept_uid[i] = (uid_t)-1;
		io->kept_gid[i] = (gid_t)-1;
	}
	io->in_seekable = false;
	io->new_session = false;
	io->ctty = -1;
	io->relay = -1;
	io->end_msg[0] = '\0';
}

/* The first failure of sbx_stdio_end(), in io->end_msg: the text, then
 * ": strerror(errnum)" when errnum is not 0, then tail. */
PRINTF(4, 5) static void end_failed(struct sbx_stdio *io, int errnum, const char *tail, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (io->end_msg[0] != '\0')
		return;
	va_start(ap, fmt);
	(void)vsnprintf(io->end_msg, sizeof(io->end_msg), fmt, ap);
	va_end(ap);
	n = strlen(io->end_msg);
	if (errnum != 0 && n < sizeof(io->end_msg))
		(void)snprintf(io->end_msg + n, sizeof(io->end_msg) - n, ": %s", strerror(errnum));
	n = strlen(io->end_msg);
	if (n < sizeof(io->end_msg))
		(void)snprintf(io->end_msg + n, sizeof(io->end_msg) - n, "%s", tail);
}

/*
 * The locks held through the open file of fd (its /proc/self/fdinfo
 * "lock:" lines: "1: FLOCK  ADVISORY  WRITE 1234 00:0f:567 0 EOF", an
 * OFDLCK with its range, passavant's own POSIX locks) in *lk. Each line
 * hashed without its number and pid, which change when nothing else
 * did; the hashes summed, in whatever order the kernel lists them.
 * 0, or -1 (lk->n -1) when they cannot be read.
 */
static int fd_locks(int fd, struct sbx_locks *lk)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int fdi, rc = 0;

	lk->n = -1;
	lk->flock = 0;
	lk->ofd = 0;
	lk->sum = 0;
	(void)snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	fdi = open(path, O_RDONLY | O_CLOEXEC);
	if (fdi < 0)
		return -1;
	f = fdopen(fdi, "r");
	if (f == NULL) {
		(void)close(fdi);
		return -1;
	}
	lk->n = 0;
	errno = 0;
	while (getline(&line, &cap, f) >= 0) {
		char *save = NULL, *tok = strncmp(line, "lock:", 5) == 0 ? strtok_r(line + 5, " \t\n", &save) : NULL;
		uint64_t h = 1469598103934665603ULL;
		int t = 0;
		bool flk = false;

		if (tok == NULL)
			continue;
		lk->n++;
		/* 0 number, 1 kind, 2 ADVISORY, 3 type, 4 pid, 5 dev:ino, 6-7 range */
		for (; tok != NULL; tok = strtok_r(NULL, " \t\n", &save), t++) {
			if (t == 0 || t == 4)
				continue;
			if (t == 1 && strcmp(tok, "FLOCK") == 0)
				flk = true;
			if (t == 1 && strcmp(tok, "OFDLCK") == 0)
				lk->ofd++;
			if (t == 3 && flk)
				lk->flock = strcmp(tok, "READ") == 0 ? LOCK_SH : LOCK_EX;
			for (const char *c = tok; *c != '\0'; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			h = (h ^ (unsigned char)' ') * 1099511628211ULL;
		}
		lk->sum += h;
	}
	if (ferror(f)) {
		lk->n = -1;
		rc = -1;
	}
	free(line);
	(void)fclose(f);
	return rc;
}

static bool locks_same(const struct sbx_locks *a, const struct sbx_locks *b)
{
	return a->n == b->n && a->flock == b->flock && a->ofd == b->ofd && a->sum == b->sum;
}

/*
 * A descriptor passed as it is (an anonymous pipe; a memory device, which
 * the child reopens anyway) is the open file the host's other holders
 * write or read through: the
 * file status flags the command sets with F_SETFL (O_NONBLOCK, O_APPEND,
 * O_ASYNC, O_DIRECT) and a pipe's size (F_SETPIPE_SZ) are theirs too and
 * outlasted the run (round 44 of the attack: O_NONBLOCK left on the
 * shell's pipe, its next reader or writer got EAGAIN and lost lines).
 * So are its SIGIO owner and signal (F_SETOWN, F_SETSIG: with O_ASYNC
 * left by a host holder, the signals went to the command's dead pid),
 * its inode's mode and owner (fchmod 0: the host's other users of the
 * pipe could no longer reopen it through /proc/PID/fd/N, /dev/stdin) and
 * the flock and OFD locks taken through it, which belong to the open
 * file, not the process, and held the host's other openers of the pipe
 * (a reopen of /proc/PID/fd/N, `flock` on /dev/stdin) out after the run
 * (round 45). Kept here, by a copy of our own (the caller's fd i may be
 * another file by the end), and put back by sbx_stdio_end(). 0, or -1
 * with errno.
 */
static int keep_passed(struct sbx_stdio *io, int i)
{
	int fl = fcntl(i, F_GETFL);
	struct f_owner_ex own;
	struct stat st;

	if (fl < 0)
		return 0; /* closed: stays closed */
	io->kept_fd[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
	if (io->kept_fd[i] < 0)
		return -1;
	io->kept_fl[i] = fl;
	io->kept_psz[i] = fcntl(i, F_GETPIPE_SZ);
	if (fcntl(i, F_GETOWN_EX, &own) < 0 || (io->kept_sig[i] = fcntl(i, F_GETSIG)) < 0) {
		sbx_close_fd(&io->kept_fd[i]);
		return -1;
	}
	io->kept_own_type[i] = (int)own.type;
	io->kept_own_pid[i] = own.pid;
	(void)fd_locks(io->kept_fd[i], &io->kept_lk[i]); /* unread: n -1, left */
	/* the inode's mode and owner: a pipe's only (a memory device is
	 * reopened in the sandbox, the host's node out of its reach) */
	if (fstat(i, &st) == 0 && S_ISFIFO(st.st_mode)) {
		io->kept_mode[i] = (int)(st.st_mode & 07777);
		io->kept_uid[i] = st.st_uid;
		io->kept_gid[i] = st.st_gid;
	}
	return 0;
}

static const char *const kept_tail = "; the host's other holders of that pipe see the command's setting";

/* The owner, signal and locks kept by keep_passed() put back on fd, the
 * copy of fd i. 0, or -1 with io->end_msg set. */
static int restore_owner_locks(struct sbx_stdio *io, int i, int fd)
{
	struct f_owner_ex own;
	struct sbx_locks now;
	struct stat st;
	int rc = 0, sig;

	if (io->kept_own_type[i] >= 0) {
		if (fcntl(fd, F_GETOWN_EX, &own) < 0) {
			end_failed(io, errno, kept_tail, "the pipe given as the command's %s: its owner cannot be read",
				   stdio_name[i]);
			rc = -1;
		} else if ((int)own.type != io->kept_own_type[i] || own.pid != io->kept_own_pid[i]) {
			struct f_owner_ex want = {.type = io->kept_own_type[i], .pid = io->kept_own_pid[i]};
			int r = fcntl(fd, F_SETOWN_EX, &want);

			if (r < 0 && errno == ESRCH) {
				/* the old owner gone meanwhile: none, not the command */
				want.pid = 0;
				r = fcntl(fd, F_SETOWN_EX, &want);
			}
			if (r < 0) {
				end_failed(io, errno, kept_tail,
					   "the pipe given as the command's %s could not be given its SIGIO owner back",
					   stdio_name[i]);
				rc = -1;
			}
		}
	}
	sig = io->kept_sig[i] >= 0 ? fcntl(fd, F_GETSIG) : -1;
	if (sig >= 0 && sig != io->kept_sig[i] && fcntl(fd, F_SETSIG, io->kept_sig[i]) < 0) {
		end_failed(io, errno, kept_tail,
			   "the pipe given as the command's %s could not be given its SIGIO signal back", stdio_name[i]);
		rc = -1;
	}
	if (io->kept_mode[i] >= 0 && fstat(fd, &st) == 0) {
		if ((st.st_uid != io->kept_uid[i] || st.st_gid != io->kept_gid[i]) &&
		    fchown(fd, io->kept_uid[i], io->kept_gid[i]) < 0) {
			end_failed(io, errno, kept_tail,
				   "the pipe given as the command's %s could not be given its owner (%ld:%ld) back",
				   stdio_name[i], (long)io->kept_uid[i], (long)io->kept_gid[i]);
			rc = -1;
		}
		/* after the chown, which clears set-id bits */
		if (fstat(fd, &st) == 0 && (int)(st.st_mode & 07777) != io->kept_mode[i] &&
		    fchmod(fd, (mode_t)io->kept_mode[i]) < 0) {
			end_failed(io, errno, kept_tail,
				   "the pipe given as the command's %s could not be given its mode %04o back",
				   stdio_name[i], (unsigned)io->kept_mode[i]);
			rc = -1;
		}
	}
	if (io->kept_lk[i].n < 0)
		return rc;
	(void)fd_locks(fd, &now);
	if (now.n >= 0 && !locks_same(&now, &io->kept_lk[i])) {
		/* The command's doing: its flock (one an open file) given
		 * back the host's type or dropped, a conversion from shared
		 * to exclusive too; its OFD locks dropped where the host held
		 * none. OFD locks the host held and the command changed
		 * cannot be told from the command's: reported below. */
		struct flock whole = {.l_type = F_UNLCK, .l_whence = SEEK_SET};

		if (now.flock != io->kept_lk[i].flock)
			(void)flock(fd, io->kept_lk[i].flock != 0 ? io->kept_lk[i].flock | LOCK_NB : LOCK_UN);
		if (now.ofd > 0 && io->kept_lk[i].ofd == 0)
			(void)fcntl(fd, F_OFD_SETLK, &whole);
		(void)fd_locks(fd, &now);
	}
	if (now.n < 0) {
		end_failed(io, errno, kept_tail, "the pipe given as the command's %s: its locks cannot be read",
			   stdio_name[i]);
		rc = -1;
	} else if (!locks_same(&now, &io->kept_lk[i])) {
		end_failed(io, 0, kept_tail,
			   "the pipe given as the command's %s holds %d flock or OFD lock(s) after the run, %d before, "
			   "not the same, and passavant cannot put them back",
			   stdio_name[i], now.n, io->kept_lk[i].n);
		rc = -1;
	}
	return rc;
}

/* The flags, size, owner, signal and locks kept by keep_passed() put
 * back. 0, or -1 with io->end_msg set. */
static int restore_passed(struct sbx_stdio *io)
{
	int rc = 0;

	for (int i = 0; i < 3; i++) {
		int fd = io->kept_fd[i], sz;

		if (fd < 0)
			continue;
		sz = io->kept_psz[i] >= 0 ? fcntl(fd, F_GETPIPE_SZ) : -1;
		/* A pipe that holds more than its old size stays larger:
		 * the kernel refuses (EBUSY), the data is not ours to drop. */
		if (sz >= 0 && sz != io->kept_psz[i] && fcntl(fd, F_SETPIPE_SZ, io->kept_psz[i]) < 0 &&
		    errno != EBUSY) {
			end_failed(io, errno, kept_tail,
				   "the pipe given as the command's %s could not be given its size (%d bytes) back",
				   stdio_name[i], io->kept_psz[i]);
			rc = -1;
		}
		if (fcntl(fd, F_GETFL) != io->kept_fl[i] && fcntl(fd, F_SETFL, io->kept_fl[i]) < 0) {
			end_failed(io, errno, kept_tail,
				   "the pipe given as the command's %s could not be given its file status flags back",
				   stdio_name[i]);
			rc = -1;
		}
		if (restore_owner_locks(io, i, fd) < 0)
			rc = -1;
		sbx_close_fd(&io->kept_fd[i]);
	}
	return rc;
}

int sbx_stdio_guard(struct sbx_stdio *io, char *err, size_t errlen)
{
	bool tty[3];
	int slave;

	sbx_stdio_init(io);
	/* A session of its own for the sandbox, always: with a terminal
	 * among fds 0-2 the pty below is its controlling terminal, else it
	 * has none. */
	io->new_session = true;
	io->ctty = -1;
	for (int i = 0; i < 3; i++) {
		enum stdio_how how = stdio_judge(i);

		/* an anonymous pipe another process reads (0) or writes (1,
		 * 2) as well: copied (copy_in_pipe(), copy_out()) */
		if (how == STDIO_PASS && is_pipe(i) && pipe_held_elsewhere(i))
			how = STDIO_COPY;
		tty[i] = how == STDIO_TTY;
		if (how == STDIO_PASS && keep_passed(io, i) < 0)
			goto fail;
		if (how == STDIO_PASS || how == STDIO_TTY)
			continue;
		if (how == STDIO_REFUSE_DIR) {
			errbuf_set_errno(err, errlen, 0,
					 "%s is a directory: through /proc/self/fd/%d the command would reach every "
					 "file below it on the host; give it a file, a pipe or /dev/null",
					 stdio_name[i], i);
			return -1;
		}
		if (how == STDIO_REFUSE_LISTEN) {
			errbuf_set_errno(err, errlen, 0,
					 "%s is a listening socket: the command would accept connections on the "
					 "host's network, past the proxy; give it a connected socket, a file or a pipe",
					 stdio_name[i]);
			return -1;
		}
		if (i == 2 && io->child_fd[1] >= 0 && same_stream(1, 2)) {
			/* one pipe, one copy: their order kept */
			io->child_fd[2] = fcntl(io->child_fd[1], F_DUPFD_CLOEXEC, 3);
			if (io->child_fd[2] < 0)
				goto fail;
			continue;
		}
		if ((i == 0 ? start_input(io, &io->child_fd[0]) : start_output(io, i, &io->child_fd[i])) < 0)
			goto fail;
	}
	/* In a pipeline (`run -- CMD | less`) the terminal's keys are the
	 * pager's: the relay does not read them, and the command's standard
	 * input is /dev/null (read as EOF), not a terminal that would wait
	 * for keys it never gets. Likewise a terminal that is another
	 * session's (sbx_stdio_keys_foreign(): setsid at a shell's prompt):
	 * its keys are that session's. */
	if (tty[0] && (sbx_stdio_pipeline() || sbx_stdio_keys_foreign())) {
		tty[0] = false;
		io->child_fd[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (io->child_fd[0] < 0)
			goto fail;
	}
	if (!tty[0] && !tty[1] && !tty[2])
		return 0;
	/* The terminals: the slave of a pty of ours, relayed (ttyrelay.c). */
	if (sbx_tty_start(io, tty, &slave, err, errlen) < 0) {
		sbx_stdio_close(io);
		(void)sbx_stdio_end(io);
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		if (!tty[i])
			continue;
		if (io->ctty < 0) {
			io->child_fd[i] = io->ctty = slave;
			continue;
		}
		io->child_fd[i] = fcntl(slave, F_DUPFD_CLOEXEC, 3);
		if (io->child_fd[i] < 0)
			goto fail;
	}
	return 0;
fail:
	errbuf_set_errno(err, errlen, errno, "cannot set up the copy of the command's standard input and output");
	sbx_stdio_close(io);
	(void)sbx_stdio_end(io);
	return -1;
}

void sbx_stdio_close(struct sbx_stdio *io)
{
	for (int i = 0; i < 3; i++)
		sbx_close_fd(&io->child_fd[i]);
	io->ctty = -1;
}

/* waitpid() of pid for at most ms, then sig to it and a wait for as long
 * as it takes: its status, or -1. */
static int reap_within(pid_t pid, int ms, int sig)
{
	pid_t r;
	int st;

	for (int waited = 0; waited < ms; waited += 10) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		(void)usleep(10 * 1000);
	}
	(void)kill(pid, sig);
	for (;;) {
		r = waitpid(pid, &st, 0);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

int sbx_stdio_end(struct sbx_stdio *io)
{
	int rc = 0;

	/* Standard input's copy: asked to put the file's offset where the
	 * command stopped reading (a file), else killed (a device it may
	 * wait on). The output copies end at the pipes' EOF, all written. */
	if (io->pump[0] > 0)
		(void)kill(io->pump[0], io->in_seekable ? SIGUSR1 : SIGKILL);
	/* The terminal's relay ends when every slave descriptor is gone
	 * (EIO), all output written; asked to stop after 1 s (the command
	 * left a process holding one, which the sandbox's end kills). */
	if (io->relay > 0) {
		int st;
		pid_t r = 0;

		for (int waited = 0; waited < 1000 && r == 0; waited += 10) {
			r = waitpid(io->relay, &st, WNOHANG);
			if (r < 0 && errno == EINTR)
				r = 0;
			if (r == 0)
				(void)usleep(10 * 1000);
		}
		/* Asked to stop, it writes what the pty still holds; a
		 * write blocked on the user's terminal (its output stopped
		 * with ^S) is not waited for past 3 s more: killed, the
		 * terminal's settings are put back by run.c. */
		if (r == 0) {
			(void)kill(io->relay, SIGUSR1);
			r = reap_within(io->relay, 3000, SIGKILL) < 0 ? -1 : io->relay;
		}
		if (r < 0) {
			end_failed(io, errno, "; the terminal may not have got all the command wrote",
				   "the relay of the command's terminal (pid %ld) could not be waited for", (long)io->relay);
			rc = -1;
		}
		io->relay = -1;
	}
	for (int i = 0; i < 3; i++) {
		int st;

		if (io->pump[i] <= 0)
			continue;
		/* An output copy gets 1 s to see its EOF (at once, unless
		 * the command sent its pipe away), then the stop. */
		st = reap_within(io->pump[i], i == 0 ? 2000 : 1000, i == 0 ? SIGKILL : SIGUSR1);
		if (st < 0) {
			/* Another waiter took it (SIGCHLD ignored, a
			 * waitpid(-1) of the caller's): how it ended is
			 * unknown, so is whether all was copied. */
			end_failed(io, errno,
				   i == 0 ? "; the input file's offset may not be where the command stopped reading"
					  : "; what the command wrote may not all have reached its file",
				   "the copy of the command's %s (pid %ld) could not be waited for", stdio_name[i],
				   (long)io->pump[i]);
			rc = -1;
		} else if (i > 0 && WIFEXITED(st) && WEXITSTATUS(st) != 0)
			io->err[i] = WEXITSTATUS(st);
		else if (i > 0 && WIFSIGNALED(st))
			io->err[i] = EIO;
		io->pump[i] = -1;
	}
	if (restore_passed(io) < 0)
		rc = -1;
	return rc;
}

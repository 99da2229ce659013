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
 * order is kept). A directory is refused. Pipes, sockets and terminals
 * are passed as they are: reopening them reaches nothing new.
 *
 * The copying processes are forked with the raw clone syscall (no
 * atfork handlers, as launch.c's clone) and call only system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/kcmp.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/* What the guard does with one of fds 0-2. */
enum stdio_how { STDIO_PASS, STDIO_COPY, STDIO_REFUSE };

static const char *const stdio_name[3] = {"standard input", "standard output", "standard error"};

/* Whether fd may be handed to the command as it is. */
static enum stdio_how stdio_judge(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return STDIO_PASS; /* closed: stays closed */
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return STDIO_PASS;
	if (S_ISDIR(st.st_mode))
		return STDIO_REFUSE;
	if (S_ISCHR(st.st_mode)) {
		unsigned mj = major(st.st_rdev), mn = minor(st.st_rdev);

		/* /dev/null, zero, full, random, urandom: nothing to reach */
		if (mj == 1 && (mn == 3 || mn == 5 || mn == 7 || mn == 8 || mn == 9))
			return STDIO_PASS;
		if (isatty(fd))
			return STDIO_PASS;
		return STDIO_COPY;
	}
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return STDIO_COPY;
	return STDIO_PASS; /* anonymous inodes: no path to reopen */
}

/* Whether fds a and b are one open file description (`>f 2>&1`). */
static bool same_open_file(int a, int b)
{
	struct stat sa, sb;
	long r = syscall(SYS_kcmp, (long)getpid(), (long)getpid(), (long)KCMP_FILE, (long)a, (long)b);

	if (r >= 0)
		return r == 0;
	/* No kcmp (CONFIG_KCMP off): the same file, one flags word. */
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
	       fcntl(a, F_GETFL) == fcntl(b, F_GETFL);
}

/* Closes every fd but keep_a and keep_b. */
static void close_all_but(int keep_a, int keep_b)
{
	int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;

	if (lo > 0)
		(void)close_range(0, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	(void)close_range((unsigned)hi + 1, ~0U, 0);
}

/* Writes all of buf to fd; -1 when it cannot (EPIPE: the reader is gone). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The copying process: from in to out until EOF or an error. Never
 * returns. splice(2) only into the pipe: into a file it takes the file's
 * offset before it waits for data, and passavant's own lines written to
 * the same file meanwhile would be overwritten; write(2) takes it when
 * it writes. */
NORETURN static void copy_main(int in, int out, bool to_pipe)
{
	static char buf[65536];
	bool splicing = to_pipe;
	sigset_t none;

	/* The terminal's ^C and ^\ go to the whole foreground group: the
	 * sandbox decides what they do, and what it wrote still reaches
	 * the file. Our end comes with the sandbox's (EOF, EPIPE) or,
	 * if passavant dies, with it. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGQUIT, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	(void)signal(SIGPIPE, SIG_IGN);
	(void)sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close_all_but(in, out);
	for (;;) {
		ssize_t n;

		if (splicing) {
			n = splice(in, NULL, out, NULL, 1 << 20, SPLICE_F_MOVE);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
				splicing = false; /* O_APPEND, a device: read and write */
				continue;
			}
			if (n <= 0)
				_exit(0);
			continue;
		}
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || write_all(out, buf, (size_t)n) < 0)
			_exit(0);
	}
}

/* Forks the copying process from in to out: its pid, or -1. */
static pid_t copy_start(int in, int out, bool to_pipe)
{
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);

	if (pid == 0)
		copy_main(in, out, to_pipe);
	return pid;
}

int sbx_stdio_guard(struct sbx_stdio *io, char *err, size_t errlen)
{
	int p[2];

	for (int i = 0; i < 3; i++) {
		io->child_fd[i] = -1;
		io->pump[i] = -1;
	}
	for (int i = 0; i < 3; i++) {
		enum stdio_how how = stdio_judge(i);

		if (how == STDIO_PASS)
			continue;
		if (how == STDIO_REFUSE) {
			errbuf_set_errno(err, errlen, 0,
					 "%s is a directory: through /proc/self/fd/%d the command would reach every "
					 "file below it on the host; give it a file, a pipe or /dev/null",
					 stdio_name[i], i);
			return -1;
		}
		if (i == 2 && io->child_fd[1] >= 0 && same_open_file(1, 2)) {
			/* `>f 2>&1`: one pipe, one copy, their order kept */
			io->child_fd[2] = fcntl(io->child_fd[1], F_DUPFD_CLOEXEC, 3);
			if (io->child_fd[2] < 0)
				goto fail;
			continue;
		}
		if (pipe2(p, O_CLOEXEC) < 0)
			goto fail;
		/* 0: the file into the pipe, the command reads p[0];
		 * 1, 2: the pipe into the file, the command writes p[1]. */
		io->pump[i] = i == 0 ? copy_start(i, p[1], true) : copy_start(p[0], i, false);
		if (io->pump[i] < 0) {
			int e = errno;

			(void)close(p[0]);
			(void)close(p[1]);
			errno = e;
			goto fail;
		}
		if (i == 0) {
			(void)close(p[1]);
			io->child_fd[0] = p[0];
		} else {
			(void)close(p[0]);
			io->child_fd[i] = p[1];
		}
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
}

int sbx_stdio_end(struct sbx_stdio *io)
{
	int rc = 0;

	/* Standard input's copy may wait on its device (or on a command
	 * that never read): the command is gone, it has nothing to do.
	 * The output copies end at the pipes' EOF, all written. */
	if (io->pump[0] > 0)
		(void)kill(io->pump[0], SIGKILL);
	for (int i = 0; i < 3; i++) {
		if (io->pump[i] <= 0)
			continue;
		while (waitpid(io->pump[i], NULL, 0) < 0) {
			if (errno != EINTR) {
				rc = -1;
				break;
			}
		}
		io->pump[i] = -1;
	}
	return rc;
}

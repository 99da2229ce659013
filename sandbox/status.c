/*
 * status.c - a running sandbox after sbx_start(): its exit status as
 * SPEC §2 maps it, signals, the hand-over of the listeners and the
 * resolver socket, and the end (the placeholders removed once nothing
 * runs in it).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* waitpid without EINTR; maps the status per SPEC §2. */
int sbx_reap(pid_t pid, int flags, int *status)
{
	pid_t r;
	int st;

	do
		r = waitpid(pid, &st, flags);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return (int)r;
	if (WIFEXITED(st))
		*status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status = 128 + WTERMSIG(st);
	else
		*status = 125;
	return 1;
}

void sbx_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

pid_t sbx_pid(const struct sbx *s)
{
	return s->pid;
}

int sbx_take_listen_fd(struct sbx *s)
{
	int fd = s->listen_fd;

	s->listen_fd = -1;
	return fd;
}

int sbx_take_intercept_fd(struct sbx *s, int family)
{
	int *slot, fd;

	if (family == AF_INET)
		slot = &s->icpt4_fd;
	else if (family == AF_INET6)
		slot = &s->icpt6_fd;
	else
		return -1;
	fd = *slot;
	*slot = -1;
	return fd;
}

int sbx_take_dns_fd(struct sbx *s)
{
	int fd = s->dns_fd;

	s->dns_fd = -1;
	return fd;
}

const char *sbx_exec_error(const struct sbx *s)
{
	return s->exec_err;
}

size_t sbx_unseen_unguarded(const struct sbx *s)
{
	return s->n_unguarded;
}

int sbx_kill(struct sbx *s, int sig)
{
	if (s->status >= 0) {
		errno = ESRCH;
		return -1;
	}
	return kill(s->pid, sig);
}

int sbx_tty_pause(struct sbx *s)
{
	pid_t r = s->io.relay;

	if (s->status >= 0 || r <= 0) {
		errno = ESRCH;
		return -1;
	}
	if (kill(r, SIGUSR2) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		siginfo_t si;
		struct timespec ten = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};

		memset(&si, 0, sizeof(si));
		/* WNOWAIT: the stop is only looked at, the relay reaped
		 * later as before (sbx_stdio_end()) */
		if (waitid(P_PID, (id_t)r, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 && si.si_pid == r)
			return 0;
		(void)nanosleep(&ten, NULL);
	}
	errno = ETIMEDOUT;
	return -1;
}

int sbx_tty_resume(struct sbx *s)
{
	if (s->status >= 0 || s->io.relay <= 0) {
		errno = ESRCH;
		return -1;
	}
	return kill(s->io.relay, SIGCONT);
}

/* After the sandbox ended: the placeholders go. */
static void finish(struct sbx *s)
{
	/* What the command wrote reaches its file before anything of ours
	 * that follows (the checks' messages). A failure (a copy not
	 * reaped, a shared pipe not put back) is in io.end_msg, which the
	 * caller reports (sbx_stdio_failure()); a second call finds
	 * nothing left to do and keeps it. */
	(void)sbx_stdio_end(&s->io);
	s->ph_left += sbx_placeholders_remove(s->ph, s->n_ph);
	s->ph = NULL;
	s->n_ph = 0;
}

int sbx_wait(struct sbx *s)
{
	int status;

	if (s->status >= 0)
		return s->status;
	if (sbx_reap(s->pid, 0, &status) != 1)
		return -1;
	s->status = status;
	finish(s);
	return status;
}

int sbx_try_wait(struct sbx *s, int *status)
{
	int rc;

	if (s->status >= 0) {
		*status = s->status;
		return 1;
	}
	rc = sbx_reap(s->pid, WNOHANG, status);
	if (rc == 1) {
		s->status = *status;
		finish(s);
	}
	return rc;
}

void sbx_free(struct sbx *s)
{
	if (s == NULL)
		return;
	if (s->status < 0) {
		(void)kill(s->pid, SIGKILL);
		(void)sbx_wait(s);
	}
	finish(s);
	sbx_close_fd(&s->listen_fd);
	sbx_close_fd(&s->icpt4_fd);
	sbx_close_fd(&s->icpt6_fd);
	sbx_close_fd(&s->dns_fd);
	free(s->exec_err);
	free(s);
}

size_t sbx_placeholders_left(const struct sbx *s)
{
	return s->ph_left;
}

const char *sbx_placeholder(const struct sbx *s, size_t i, dev_t *dev, ino_t *ino, bool *is_dir)
{
	if (i >= s->n_ph || s->ph == NULL)
		return NULL;
	*dev = s->ph[i].dev;
	*ino = s->ph[i].ino;
	*is_dir = s->ph[i].is_dir;
	return s->ph[i].path;
}

int sbx_stdio_errno(const struct sbx *s, int fd)
{
	return fd == 1 || fd == 2 ? s->io.err[fd] : 0;
}

const char *sbx_stdio_failure(const struct sbx *s)
{
	return s->io.end_msg[0] != '\0' ? s->io.end_msg : NULL;
}

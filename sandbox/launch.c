/*
 * launch.c - the parent's side of the sandbox: clone, maps, sync, the
 * listener and the report (STYLE.md "Launcher path").
 *
 * sbx_start() does all the privileged and allocating work first (the
 * plan of mountplan.c: paths checked and canonicalised, placeholders
 * made, environment built, seccomp compiled), then clones the child into
 * its namespaces, writes its id maps, receives its listener and waits for
 * the report pipe to tell it the command was exec'd (EOF: the pipe is
 * close-on-exec) or what failed. status.c runs the sandbox to its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* The namespaces of SPEC §7. */
#define SBX_CLONE_FLAGS \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

/* Reads one report: 1 got it, 0 EOF (the command was exec'd), -1 error. */
static int read_report(int fd, struct sbx_report *r)
{
	ssize_t n;

	do
		n = read(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	if ((size_t)n != sizeof(*r)) {
		errno = EPROTO;
		return -1;
	}
	r->msg[sizeof(r->msg) - 1] = '\0';
	return 1;
}

/* The parent's ends of the channels and what the start holds. */
struct launch {
	struct sbx_plan pl;
	char *cwd_copy;
	int sp[2];   /* socketpair: [0] ours, [1] the child's */
	int errp[2]; /* report pipe: [0] ours, [1] the child's */
	pid_t pid;
};

/* The failure message after the child stopped talking: its report when
 * it sent one (it failed first), else what went wrong here (errnum). */
static void child_failed(struct launch *l, int errnum, const char *what, char *err, size_t errlen)
{
	struct sbx_report rep;

	if (read_report(l->errp[0], &rep) == 1)
		errbuf_set_errno(err, errlen, 0, "%s", rep.msg);
	else
		errbuf_set_errno(err, errlen, errnum, "%s", what);
}

/*
 * Creates the channels and clones the child into the namespaces: a
 * socketpair ("maps ready" one way, the listener the other) and the
 * report pipe, all CLOEXEC (the command inherits none of them). The "go"
 * byte travels on the socket, not a pipe, so that a child that died early
 * costs us an EPIPE, not a SIGPIPE. 0 or -1 with err set.
 */
static int launch_clone(struct launch *l, char *err, size_t errlen)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->sp) < 0 ||
	    pipe2(l->errp, O_CLOEXEC) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create the sandbox's channels");
		return -1;
	}
	l->pl.err_wr = l->errp[1];
	l->pl.sock = l->sp[1];
	/* The raw syscall with no stack is a fork that also creates
	 * namespaces; unlike glibc's fork() it runs no atfork handlers (see
	 * sbx_int.h on allocation in the child). */
	l->pid = (pid_t)syscall(SYS_clone, SBX_CLONE_FLAGS | SIGCHLD, NULL, NULL, NULL, 0);
	if (l->pid < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create namespaces (user, mount, PID, network, IPC, UTS)");
		return -1;
	}
	if (l->pid == 0) {
		close(l->sp[0]);
		close(l->errp[0]);
		sbx_child_main(&l->pl);
	}
	sbx_close_fd(&l->sp[1]);
	sbx_close_fd(&l->errp[1]);
	return 0;
}

/*
 * The parent's half of the handshake: the maps, then "go"; the listener
 * (if the child failed first, its report says why); then the wait until
 * the command is exec'd (EOF) or a report comes. 0 or -1 with err set.
 */
static int launch_handshake(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	struct sbx_report rep;
	char c = 'M';
	int rc;

	if (sbx_userns_write_maps(l->pid, getuid(), getgid(), err, errlen) < 0)
		return -1;
	if (send(l->sp[0], &c, 1, MSG_NOSIGNAL) != 1) {
		child_failed(l, errno, "cannot signal the sandbox child", err, errlen);
		return -1;
	}
	s->listen_fd = fdpass_recv(l->sp[0]);
	if (s->listen_fd < 0) {
		child_failed(l, errno, "cannot receive the sandbox's listener", err, errlen);
		return -1;
	}
	sbx_close_fd(&l->sp[0]);
	rc = read_report(l->errp[0], &rep);
	if (rc < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read the sandbox's report");
		return -1;
	}
	if (rc == 1 && rep.code == 125) {
		errbuf_set_errno(err, errlen, 0, "%s", rep.msg);
		return -1;
	}
	if (rc == 1) {
		s->exec_err = strdup(rep.msg);
		if (s->exec_err == NULL) {
			errbuf_set_errno(err, errlen, ENOMEM, "cannot start the sandbox");
			return -1;
		}
	}
	return 0;
}

/* Everything that allocates or needs the host's view, before clone:
 * the plan, the working directory by name (NULL cwd: the caller's; the
 * child's old cwd is on the detached tree after pivot_root). 0 or -1. */
static int launch_plan(const struct sbx_config *cfg, struct launch *l, struct sbx *s, char *err,
		       size_t errlen)
{
	struct sbx_builder b;

	if (sbx_plan_build(cfg, &l->pl, &b, err, errlen) < 0)
		return -1;
	s->ph = b.ph;
	s->n_ph = b.n_ph;
	l->pl.argv = cfg->argv;
	l->cwd_copy = cfg->cwd == NULL ? getcwd(NULL, 0) : NULL;
	if (cfg->cwd == NULL && l->cwd_copy == NULL) {
		errbuf_set_errno(err, errlen, errno, "cannot get the working directory");
		return -1;
	}
	l->pl.cwd = cfg->cwd != NULL ? cfg->cwd : l->cwd_copy;
	l->pl.port = cfg->listen_port ? cfg->listen_port : SBX_DEFAULT_PORT;
	l->pl.no_mount_setattr = getenv("PASSAVANT_SBX_NO_MOUNT_SETATTR") != NULL;
	return 0;
}

/* Frees what the start held; after a failure also kills and reaps the
 * child, closes the listener and removes the placeholders. */
static void launch_end(struct launch *l, struct sbx *s, bool failed)
{
	int status;

	if (failed && l->pid > 0) {
		(void)kill(l->pid, SIGKILL);
		(void)sbx_reap(l->pid, 0, &status);
	}
	sbx_close_fd(&l->sp[0]);
	sbx_close_fd(&l->sp[1]);
	sbx_close_fd(&l->errp[0]);
	sbx_close_fd(&l->errp[1]);
	sbx_env_free(l->pl.envp);
	sbx_ops_free(l->pl.ops, l->pl.n_ops);
	sbx_seccomp_free(&l->pl.prog);
	free(l->cwd_copy);
	if (failed) {
		sbx_close_fd(&s->listen_fd);
		sbx_placeholders_remove(s->ph, s->n_ph);
		free(s);
	}
}

int sbx_start(const struct sbx_config *cfg, struct sbx **out, char *err, size_t errlen)
{
	struct launch l = {.sp = {-1, -1}, .errp = {-1, -1}, .pid = -1};
	struct sbx *s;

	*out = NULL;
	if (cfg->argv == NULL || cfg->argv[0] == NULL || cfg->argv[0][0] == '\0') {
		errbuf_set_errno(err, errlen, 0, "no command to run");
		return -1;
	}
	if (cfg->cwd != NULL && cfg->cwd[0] != '/') {
		errbuf_set_errno(err, errlen, 0, "working directory %s is not absolute", cfg->cwd);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot start the sandbox");
		return -1;
	}
	s->listen_fd = -1;
	s->status = -1;
	/* 1. Everything that allocates or needs the host's view; 2. the
	 * channels and the clone; 3. the maps, "go", the listener, the
	 * report. */
	if (launch_plan(cfg, &l, s, err, errlen) < 0 || launch_clone(&l, err, errlen) < 0)
		goto fail;
	s->pid = l.pid;
	if (launch_handshake(&l, s, err, errlen) < 0)
		goto fail;
	launch_end(&l, s, false);
	*out = s;
	return 0;
fail:
	launch_end(&l, s, true);
	return -1;
}

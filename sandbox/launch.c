/*
 * launch.c - the parent's side of the sandbox: clone, maps, sync, the
 * listener and the report (STYLE.md "Launcher path").
 *
 * sbx_start() does all the privileged and allocating work first (the
 * plan of mountplan.c: paths checked and canonicalised, placeholders
 * made, environment built, seccomp compiled), then clones the child into
 * its namespaces, writes its id maps, receives its sockets (with
 * interception, installs the rule set through the namespaces that come
 * with them: nft.c) while a thread of its own does the caller's meanwhile
 * work, releases the command, and
 * waits for the report pipe to tell it the command was exec'd (EOF: the
 * pipe is close-on-exec) or what failed. status.c runs the sandbox to
 * its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/defaults.h"
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
	struct fdpass_set fds; /* what the child passed, until handed on */
	bool nft_break;        /* test hook: make the nftables step fail */
	int (*meanwhile)(void *arg, char *err, size_t errlen); /* sbx_config's */
	void *meanwhile_arg;
	pthread_t mw_thread;   /* the meanwhile work's thread, */
	bool mw_running;       /* while not joined */
};

/* Joins the meanwhile thread if it still runs. */
static void meanwhile_join(struct launch *l)
{
	if (l->mw_running) {
		(void)pthread_join(l->mw_thread, NULL);
		l->mw_running = false;
	}
}

/* sbx_nft_install()'s hook before it forks its helper: no thread of ours
 * may be inside the allocator at the fork. glibc's fork() takes its own
 * malloc's locks; ASan's allocator (make test) gets no such care, and a
 * helper forked while the meanwhile thread allocated hung on its first
 * malloc (run_unprivileged, "setpriv killed after 60000 ms", about one
 * ASan run in three under load). */
static void before_nft_fork(void *arg)
{
	meanwhile_join(arg);
}

/* The number in the /proc/sys file path, or -1 (absent, unreadable). */
static long sysctl_num(const char *path)
{
	char buf[32];
	long v = -1;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n > 0) {
		char *end;

		buf[n] = '\0';
		v = strtol(buf, &end, 10);
		if (end == buf)
			v = -1;
	}
	return v;
}

/*
 * Round 46 (machines unlike ours): why this machine refuses the sandbox,
 * and what to do, after the message of a refused clone (child false, e
 * its errno) or of a child step refused with e (EACCES, EPERM). "No
 * space left on device" and "Operation not permitted" said neither.
 */
static void ns_hint(int e, bool child, char *err, size_t errlen)
{
	if (!child && e == ENOSPC) {
		if (sysctl_num("/proc/sys/user/max_user_namespaces") == 0)
			errbuf_append(err, errlen,
				      "; user namespaces are turned off here (user.max_user_namespaces is 0): as root, "
				      "sysctl -w user.max_user_namespaces=15000, or run passavant where they are allowed");
		else
			errbuf_append(err, errlen,
				      "; the limit of user namespaces is reached (user.max_user_namespaces, here or in "
				      "a namespace above): end other sandboxes or raise the limit");
	} else if (!child && e == EPERM) {
		if (geteuid() != 0 && sysctl_num("/proc/sys/kernel/unprivileged_userns_clone") == 0)
			errbuf_append(err, errlen,
				      "; unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone "
				      "is 0): as root, sysctl -w kernel.unprivileged_userns_clone=1");
		else
			errbuf_append(err, errlen,
				      "; a seccomp filter or the container forbids creating namespaces (Docker's "
				      "default profile does: run the container with --security-opt seccomp=unconfined, "
				      "or a profile that allows clone and unshare with namespace flags)");
	} else if (child && e == EACCES && geteuid() == 0) {
		/* The sandbox's user namespace maps root only: in it, root
		 * has no override on an unmapped owner's inode, so `sudo
		 * passavant run` from a project in a 0700 or 0750 home (the
		 * default of Debian 12's adduser, Fedora, Ubuntu) cannot
		 * enter the directory it runs in. */
		errbuf_append(err, errlen,
			      "; as root, the sandbox cannot enter a directory of another user that others cannot "
			      "search (a 0700 or 0750 home: its user namespace maps root only, so root has no "
			      "override there): run passavant as that user (without sudo), or let others search "
			      "the directories on the way (chmod o+x)");
	} else if (child && geteuid() != 0 &&
		   sysctl_num("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
		/* AppArmor's restriction (Ubuntu 23.10 and later) lets the
		 * clone succeed with no capability inside: the child's first
		 * mount is refused. */
		errbuf_append(err, errlen,
			      "; AppArmor restricts unprivileged user namespaces here "
			      "(kernel.apparmor_restrict_unprivileged_userns is 1): give passavant a profile with "
			      "\"userns,\" (docs/sandbox.md, \"Machines that restrict namespaces\"), or as root "
			      "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
	}
}

/* The child's report of a failed step as the message, with ns_hint()'s
 * reason where the step was refused (EACCES, EPERM): the errno the
 * child reports, taken only where its message names that errno (a step
 * that failed with no errno of its own, "the parent did not finish the
 * maps", leaves an older one behind). */
static void report_failed(const struct sbx_report *rep, char *err, size_t errlen)
{
	char named[96];

	errbuf_set_errno(err, errlen, 0, "%s", rep->msg);
	if (rep->err_no != EACCES && rep->err_no != EPERM)
		return;
	named[0] = '\0';
	errbuf_set_errno(named, sizeof(named), rep->err_no, "%s", "");
	if (memmem(rep->msg, strnlen(rep->msg, sizeof(rep->msg)), named, strlen(named)) != NULL)
		ns_hint(rep->err_no, true, err, errlen);
}

/* The failure message after the child stopped talking: its report when
 * it sent one (it failed first), else what went wrong here (errnum). */
static void child_failed(struct launch *l, int errnum, const char *what, char *err, size_t errlen)
{
	struct sbx_report rep;

	if (read_report(l->errp[0], &rep) == 1) {
		report_failed(&rep, err, errlen);
	} else {
		errbuf_set_errno(err, errlen, errnum, "%s", what);
	}
}

/*
 * Creates the channels and clones the child into the namespaces: a
 * socketpair ("maps ready" and "rules installed" one way, the
 * sockets the other) and the
 * report pipe, all CLOEXEC (the command inherits none of them). The "go"
 * byte travels on the socket, not a pipe, so that a child that died early
 * costs us an EPIPE, not a SIGPIPE. 0 or -1 with err set.
 */
static int launch_clone(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	if (sbx_stdio_guard(&s->io, err, errlen) < 0)
		return -1;
	memcpy(l->pl.stdio_fd, s->io.child_fd, sizeof(l->pl.stdio_fd));
	l->pl.new_session = s->io.new_session;
	l->pl.ctty_fd = s->io.ctty;
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
		int e = errno;

		errbuf_set_errno(err, errlen, e, "cannot create namespaces (user, mount, PID, network, IPC, UTS)");
		ns_hint(e, false, err, errlen);
		return -1;
	}
	if (l->pid == 0) {
		close(l->sp[0]);
		close(l->errp[0]);
		sbx_child_main(&l->pl);
	}
	sbx_close_fd(&l->sp[1]);
	sbx_close_fd(&l->errp[1]);
	sbx_stdio_close(&s->io);
	return 0;
}

/*
 * Takes the child's fds: exactly the kinds the plan calls for (the
 * listener; with interception the IPv4 interception listener, the
 * resolver and both namespaces, the IPv6 listener where IPv6 works).
 * Sockets move into s, the namespaces stay in l. 0 or -1 with err set.
 */
static int launch_take_fds(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	struct fdpass_set *f = &l->fds;
	bool missing = false, extra = false, required, allowed;

	if (fdpass_recv(l->sp[0], f) < 0) {
		child_failed(l, errno, "cannot receive the sandbox's sockets", err, errlen);
		return -1;
	}
	for (size_t k = 0; k < FDPASS_NKINDS; k++) {
		allowed = k == FDPASS_LISTENER || l->pl.intercept;
		required = allowed && k != FDPASS_INTERCEPT6;
		missing |= required && f->fd[k] < 0;
		extra |= !allowed && f->fd[k] >= 0;
	}
	if (missing || extra) {
		errbuf_set_errno(err, errlen, EBADMSG, "the sandbox passed %s sockets than planned",
				 missing ? "fewer" : "more");
		return -1;
	}
	s->listen_fd = f->fd[FDPASS_LISTENER];
	s->icpt4_fd = f->fd[FDPASS_INTERCEPT4];
	s->icpt6_fd = f->fd[FDPASS_INTERCEPT6];
	s->dns_fd = f->fd[FDPASS_RESOLVER];
	f->fd[FDPASS_LISTENER] = f->fd[FDPASS_INTERCEPT4] = f->fd[FDPASS_INTERCEPT6] = -1;
	f->fd[FDPASS_RESOLVER] = -1;
	return 0;
}

/*
 * Interception: the rule set into the sandbox's network namespace. The
 * namespace fds are closed either way (holding them would keep the
 * namespaces alive after the sandbox). 0 or -1 with err set.
 */
static int launch_rules(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	int rc;

	rc = sbx_nft_install(l->fds.fd[FDPASS_USERNS], l->fds.fd[FDPASS_NETNS], l->pl.icpt_port,
			     s->icpt6_fd >= 0, l->nft_break, before_nft_fork, l, err, errlen);
	fdpass_set_close(&l->fds);
	return rc < 0 ? -1 : 0;
}

/* The caller's meanwhile work, run by meanwhile_thread(). */
struct meanwhile_job {
	int (*fn)(void *arg, char *err, size_t errlen);
	void *arg;
	int rc;
	char err[SBX_ERRLEN];
};

static void *meanwhile_thread(void *arg)
{
	struct meanwhile_job *j = arg;

	j->rc = j->fn(j->arg, j->err, sizeof(j->err));
	return NULL;
}

/* Starts j in a thread of ours with every signal blocked (they stay the
 * caller's threads'). 0, or an errno value (then the caller runs it). */
static int meanwhile_start(pthread_t *t, struct meanwhile_job *j)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	e = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (e != 0)
		return e;
	e = pthread_create(t, NULL, meanwhile_thread, j);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}

/* The maps, then "go"; the sockets (if the child failed first, its
 * report says why) and, with interception, the rules, while the child
 * builds its filesystem. 0 or -1 with err set. */
static int launch_setup(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	char c = 'M';

	if (sbx_oom_first(l->pid, err, errlen) < 0 ||
	    sbx_userns_write_maps(l->pid, getuid(), getgid(), err, errlen) < 0)
		return -1;
	if (send(l->sp[0], &c, 1, MSG_NOSIGNAL) != 1) {
		child_failed(l, errno, "cannot signal the sandbox child", err, errlen);
		return -1;
	}
	if (launch_take_fds(l, s, err, errlen) < 0)
		return -1;
	if (l->pl.intercept && launch_rules(l, s, err, errlen) < 0)
		return -1;
	return 0;
}

/*
 * The parent's half of the handshake: the caller's meanwhile work in a
 * thread of ours (or here, after launch_setup(), if no thread can be
 * made) while this thread does launch_setup(); both done, "release" (R),
 * which the child waits for before it forks the command when it holds;
 * then the wait until the command is exec'd (EOF) or a report comes. 0
 * or -1 with err set (launch_setup()'s failure first, then the work's).
 */
static int launch_handshake(struct launch *l, struct sbx *s, char *err, size_t errlen)
{
	struct meanwhile_job job = {.fn = l->meanwhile, .arg = l->meanwhile_arg};
	struct sbx_report rep;
	bool threaded = false;
	char c = 'R';
	int rc;

	if (job.fn != NULL)
		threaded = l->mw_running = meanwhile_start(&l->mw_thread, &job) == 0;
	rc = launch_setup(l, s, err, errlen);
	meanwhile_join(l);
	if (!threaded && job.fn != NULL && rc == 0)
		job.rc = job.fn(job.arg, job.err, sizeof(job.err));
	if (rc < 0)
		return -1;
	if (job.rc < 0) {
		errbuf_set_errno(err, errlen, 0, "%s", job.err);
		return -1;
	}
	if (l->pl.hold && send(l->sp[0], &c, 1, MSG_NOSIGNAL) != 1) {
		child_failed(l, errno, "cannot release the command in the sandbox", err, errlen);
		return -1;
	}
	sbx_close_fd(&l->sp[0]);
	rc = read_report(l->errp[0], &rep);
	if (rc < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read the sandbox's report");
		return -1;
	}
	if (rc == 1 && rep.code == 125) {
		report_failed(&rep, err, errlen);
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
	l->pl.intercept = cfg->intercept;
	l->pl.hold = cfg->intercept || cfg->meanwhile != NULL;
	l->meanwhile = cfg->meanwhile;
	l->meanwhile_arg = cfg->meanwhile_arg;
	l->pl.icpt_port = cfg->intercept_port ? cfg->intercept_port : PASSAVANT_INTERCEPT_PORT;
	l->nft_break = getenv("PASSAVANT_SBX_NFT_TEST_BREAK") != NULL;
	l->pl.no_mount_setattr = getenv("PASSAVANT_SBX_NO_MOUNT_SETATTR") != NULL;
	l->pl.no_overlay = getenv("PASSAVANT_SBX_NO_OVERLAY") != NULL;
	l->pl.landlock_abi = getenv("PASSAVANT_SBX_NO_LANDLOCK") != NULL ? 0 : sbx_landlock_abi();
	if (l->pl.landlock_abi < 1)
		s->n_unguarded = l->pl.unseen.n_skip;
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
	sbx_unseen_free(&l->pl.unseen);
	sbx_seccomp_free(&l->pl.prog);
	free(l->cwd_copy);
	fdpass_set_close(&l->fds);
	if (failed) {
		sbx_close_fd(&s->listen_fd);
		sbx_close_fd(&s->icpt4_fd);
		sbx_close_fd(&s->icpt6_fd);
		sbx_close_fd(&s->dns_fd);
		(void)sbx_placeholders_remove(s->ph, s->n_ph);
		sbx_stdio_close(&s->io);
		(void)sbx_stdio_end(&s->io);
		free(s);
	}
}

int sbx_start(const struct sbx_config *cfg, struct sbx **out, char *err, size_t errlen)
{
	struct launch l = {.sp = {-1, -1}, .errp = {-1, -1}, .pid = -1};
	struct sbx *s;
	uint16_t port;

	*out = NULL;
	if (cfg->argv == NULL || cfg->argv[0] == NULL || cfg->argv[0][0] == '\0') {
		errbuf_set_errno(err, errlen, 0, "no command to run");
		return -1;
	}
	if (cfg->cwd != NULL && cfg->cwd[0] != '/') {
		errbuf_set_errno(err, errlen, 0, "working directory %s is not absolute", cfg->cwd);
		return -1;
	}
	port = cfg->listen_port ? cfg->listen_port : SBX_DEFAULT_PORT;
	if (cfg->intercept &&
	    (cfg->intercept_port ? cfg->intercept_port : PASSAVANT_INTERCEPT_PORT) == port) {
		errbuf_set_errno(err, errlen, 0,
				 "the interception port and the proxy listener's port are both %u; "
				 "give them different ports",
				 (unsigned)port);
		return -1;
	}
	fdpass_set_init(&l.fds);
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot start the sandbox");
		return -1;
	}
	s->listen_fd = -1;
	/* before anything can fail: launch_end() runs sbx_stdio_end() */
	sbx_stdio_init(&s->io);
	s->icpt4_fd = -1;
	s->icpt6_fd = -1;
	s->dns_fd = -1;
	s->status = -1;
	/* 1. Everything that allocates or needs the host's view; 2. the
	 * channels and the clone; 3. the maps, "go", the sockets, the rules,
	 * the report. */
	if (launch_plan(cfg, &l, s, err, errlen) < 0 || launch_clone(&l, s, err, errlen) < 0)
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

/*
 * nft.c - the interception rule set, installed into the sandbox's
 * network namespace through libnftables (issue 15; docs/sandbox.md
 * "Network").
 *
 * Why from the parent and not from the child: the child was cloned from
 * a process that may have other threads and must not allocate
 * (sbx_int.h), and libnftables allocates at every step (parser, cache,
 * netlink batch). So the child opens its user and network namespaces
 * (/proc/self/ns, no allocation) and passes them out with its sockets.
 * As root, a thread of ours joins the network namespace (root has every
 * capability over the sandbox's user namespace) and runs nft there: no
 * fork, and the namespace is per thread, so the caller's stay home.
 * Otherwise the parent forks a helper with glibc's fork(), which leaves
 * the allocator usable in the new process, and the helper joins the
 * sandbox's user namespace (where it has every capability: its uid owns
 * it; a thread cannot join a user namespace) and then its network
 * namespace, and runs nft there. Either is done before the command
 * exists: the child waits for the parent's "rules installed" byte before
 * it forks the command.
 *
 * The product never runs the nft program: everything is libnftables.
 */
#include <errno.h>
#include <fcntl.h>
#include <nftables/libnftables.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/*
 * The rule set. nat output (priority -100, before filter): loopback
 * destinations return untouched (the proxy listener, the resolver, the
 * command's own servers), every other TCP connection is redirected to the
 * interception listener (127.0.0.1:port, or [::1]:port for IPv6), where
 * SO_ORIGINAL_DST still gives the address the command asked for. filter
 * output: loopback accepted, TCP accepted (after nat: redirected
 * connections and their replies), everything else rejected, so a UDP
 * send fails at once with EPERM and QUIC falls back to TCP. %s are the
 * IPv6 lines (or nothing), %u the port, the last %s the test hook's rule.
 */
static const char RULES[] =
	"table inet passavant {\n"
	"\tchain nat {\n"
	"\t\ttype nat hook output priority -100; policy accept;\n"
	"\t\tip daddr 127.0.0.0/8 return\n"
	"%s"
	"\t\tmeta l4proto tcp redirect to :%u\n"
	"\t}\n"
	"\tchain filter {\n"
	"\t\ttype filter hook output priority 0; policy accept;\n"
	"\t\tip daddr 127.0.0.0/8 accept\n"
	"%s"
	"\t\tmeta l4proto tcp accept\n"
	"\t\treject\n"
	"\t}\n"
	"}\n"
	"%s";

/* Writes msg to fd and ends the helper with status 1. */
NORETURN static void helper_fail(int fd, const char *msg)
{
	size_t len = strlen(msg);
	ssize_t n;

	do
		n = write(fd, msg, len);
	while (n < 0 && errno == EINTR);
	_exit(1);
}

/*
 * Runs rules through libnftables in the calling thread's network
 * namespace. 0, or -1 with the first line of what nft said in msg.
 * Opened here, after the caller's setns(): with NFT_CTX_DEFAULT the
 * context opens its netlink socket at once, and a socket belongs to the
 * network namespace it was opened in (opened before setns(), it would
 * change the rules of the caller's namespace).
 */
static int nft_apply(const char *rules, char *msg, size_t msglen)
{
	struct nft_ctx *ctx;
	const char *e, *end;

	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (ctx == NULL) {
		(void)snprintf(msg, msglen, "nftables: cannot create a context");
		return -1;
	}
	if (nft_ctx_buffer_output(ctx) < 0 || nft_ctx_buffer_error(ctx) < 0) {
		nft_ctx_free(ctx);
		(void)snprintf(msg, msglen, "nftables: cannot buffer its messages");
		return -1;
	}
	if (nft_run_cmd_from_buffer(ctx, rules) == 0) {
		nft_ctx_free(ctx);
		return 0;
	}
	/* "Error: Could not process rule: No such file or directory" then
	 * the input line and a marker: the first line says it. */
	e = nft_ctx_get_error_buffer(ctx);
	if (e == NULL || *e == '\0')
		e = "failed without a message";
	if (strncmp(e, "Error: ", 7) == 0)
		e += 7;
	end = strchr(e, '\n');
	(void)snprintf(msg, msglen, "nftables: %.*s", (int)(end ? end - e : (long)strlen(e)), e);
	nft_ctx_free(ctx);
	return -1;
}

/* The helper: join the namespaces, run nft, report on fd. Exit status 0
 * when the rules are in. _exit throughout: nothing of the parent's (stdio
 * buffers, atexit handlers, LeakSanitizer) runs twice. */
NORETURN static void helper_main(int userns_fd, int netns_fd, const char *rules, int fd)
{
	char msg[SBX_ERRLEN];

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* The user namespace first: joining it gives the capabilities that
	 * setns() of its network namespace and nftables then check. */
	if (setns(userns_fd, CLONE_NEWUSER) < 0) {
		errbuf_set_errno(msg, sizeof(msg), errno, "cannot enter its user namespace");
		helper_fail(fd, msg);
	}
	if (setns(netns_fd, CLONE_NEWNET) < 0) {
		errbuf_set_errno(msg, sizeof(msg), errno, "cannot enter its network namespace");
		helper_fail(fd, msg);
	}
	if (nft_apply(rules, msg, sizeof(msg)) < 0)
		helper_fail(fd, msg);
	_exit(0);
}

/* The forked helper's way: 0, or -1 with the reason in msg. */
static int install_forked(int userns_fd, int netns_fd, const char *rules, void (*before_fork)(void *),
			  void *arg, char *msg, size_t msglen)
{
	size_t got = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid, r;

	if (pipe2(p, O_CLOEXEC) < 0) {
		errbuf_set_errno(msg, msglen, errno, "cannot create a pipe for the nftables helper");
		return -1;
	}
	if (before_fork != NULL)
		before_fork(arg);
	pid = fork();
	if (pid < 0) {
		errbuf_set_errno(msg, msglen, errno, "cannot fork the nftables helper");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		helper_main(userns_fd, netns_fd, rules, p[1]);
	}
	close(p[1]);
	/* Until EOF: the helper's exit (or death) closes its end. */
	while (got < msglen - 1) {
		n = read(p[0], msg + got, msglen - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	msg[got] = '\0';
	close(p[0]);
	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		errbuf_set_errno(msg, msglen, errno, "cannot wait for the nftables helper");
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (got == 0)
		(void)snprintf(msg, msglen, "the helper %s %d",
			       WIFSIGNALED(status) ? "died of signal" : "exited",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return -1;
}

/* What the thread of install_threaded() is given and answers. */
struct nft_job {
	int netns_fd;
	const char *rules;
	int setns_errno; /* 0: it entered the namespace */
	int rc;
	char msg[SBX_ERRLEN];
};

/* The thread: the network namespace is per thread, so only this one
 * enters the sandbox's; it ends there, and its namespace reference with
 * it. The caller's threads never leave their own. */
static void *nft_thread(void *arg)
{
	struct nft_job *j = arg;

	if (setns(j->netns_fd, CLONE_NEWNET) < 0) {
		j->setns_errno = errno;
		errbuf_set_errno(j->msg, sizeof(j->msg), errno, "cannot enter its network namespace");
		j->rc = -1;
		return NULL;
	}
	j->rc = nft_apply(j->rules, j->msg, sizeof(j->msg));
	return NULL;
}

/*
 * The threaded way, for a caller with CAP_SYS_ADMIN over the sandbox's
 * user namespace (root of the initial one): no fork, no user namespace
 * to join (a thread could not: setns(CLONE_NEWUSER) wants a single-
 * threaded process). Signals stay with the caller's threads. 0; -1 with
 * msg; 1 when setns() was refused (EPERM: root of a container's user
 * namespace, not ours): the caller forks the helper instead.
 */
static int install_threaded(int netns_fd, const char *rules, char *msg, size_t msglen)
{
	struct nft_job j = {.netns_fd = netns_fd, .rules = rules, .rc = -1};
	sigset_t all, old;
	pthread_t t;
	int e;

	sigfillset(&all);
	e = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (e == 0) {
		e = pthread_create(&t, NULL, nft_thread, &j);
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (e == 0)
		e = pthread_join(t, NULL);
	if (e != 0) {
		errbuf_set_errno(msg, msglen, e, "cannot start the nftables thread");
		return -1;
	}
	if (j.setns_errno == EPERM)
		return 1;
	if (j.rc < 0)
		(void)snprintf(msg, msglen, "%s", j.msg);
	return j.rc;
}

int sbx_nft_install(int userns_fd, int netns_fd, uint16_t port, bool v6, bool test_break,
		    void (*before_fork)(void *), void *arg, char *err, size_t errlen)
{
	static const char v6_nat[] = "\t\tip6 daddr ::1 return\n";
	static const char v6_filter[] = "\t\tip6 daddr ::1 accept\n";
	char rules[sizeof(RULES) + 256], msg[SBX_ERRLEN];
	int rc;

	rc = snprintf(rules, sizeof(rules), RULES, v6 ? v6_nat : "", (unsigned)port, v6 ? v6_filter : "",
		      test_break ? "add rule inet passavant filter passavant-test-bogus\n" : "");
	if (rc < 0 || (size_t)rc >= sizeof(rules)) {
		errbuf_set_errno(err, errlen, 0, "cannot format the interception rules");
		return -1;
	}
	/* Root: a thread (no fork); refused there, or not root, or the test
	 * hook: the forked helper. */
	rc = 1;
	if (geteuid() == 0 && getenv("PASSAVANT_SBX_NFT_FORK") == NULL)
		rc = install_threaded(netns_fd, rules, msg, sizeof(msg));
	if (rc > 0)
		rc = install_forked(userns_fd, netns_fd, rules, before_fork, arg, msg, sizeof(msg));
	if (rc == 0)
		return 0;
	errbuf_set_errno(err, errlen, 0,
			 "cannot install the interception rules in the sandbox's network namespace (%s)%s", msg,
			 SBX_NO_INTERCEPT_HINT);
	return -1;
}

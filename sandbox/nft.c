/*
 * nft.c - the interception rule set, installed into the sandbox's
 * network namespace through libnftables (issue 15; docs/sandbox.md
 * "Network").
 *
 * Why from a helper of the parent and not from the child: the child was
 * cloned from a process that may have other threads and must not
 * allocate (sbx_int.h), and libnftables allocates at every step (parser,
 * cache, netlink batch). So the child opens its user and network
 * namespaces (/proc/self/ns, no allocation) and passes them out with its
 * sockets; the parent forks a helper with glibc's fork(), which leaves
 * the allocator usable in the new process, and the helper joins the
 * sandbox's user namespace (where it has every capability: its uid owns
 * it) and then its network namespace, and runs nft there. The helper is
 * gone before the command exists: the child waits for the parent's
 * "rules installed" byte before it forks the command.
 *
 * The product never runs the nft program: everything is libnftables.
 */
#include <errno.h>
#include <fcntl.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
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

/* The helper: join the namespaces, run nft, report on fd. Exit status 0
 * when the rules are in. _exit throughout: nothing of the parent's (stdio
 * buffers, atexit handlers, LeakSanitizer) runs twice. */
NORETURN static void helper_main(int userns_fd, int netns_fd, const char *rules, int fd)
{
	char msg[SBX_ERRLEN];
	struct nft_ctx *ctx;
	const char *e, *end;

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
	/* Only now: with NFT_CTX_DEFAULT the context opens its netlink
	 * socket at once, and a socket belongs to the network namespace it
	 * was opened in. Opened before setns(), it would change the rules of
	 * the caller's namespace. */
	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (ctx == NULL)
		helper_fail(fd, "nftables: cannot create a context");
	if (nft_ctx_buffer_output(ctx) < 0 || nft_ctx_buffer_error(ctx) < 0) {
		nft_ctx_free(ctx);
		helper_fail(fd, "nftables: cannot buffer its messages");
	}
	if (nft_run_cmd_from_buffer(ctx, rules) == 0) {
		nft_ctx_free(ctx);
		_exit(0);
	}
	/* "Error: Could not process rule: No such file or directory" then
	 * the input line and a marker: the first line says it. */
	e = nft_ctx_get_error_buffer(ctx);
	if (e == NULL || *e == '\0')
		e = "failed without a message";
	if (strncmp(e, "Error: ", 7) == 0)
		e += 7;
	end = strchr(e, '\n');
	(void)snprintf(msg, sizeof(msg), "nftables: %.*s", (int)(end ? end - e : (long)strlen(e)), e);
	nft_ctx_free(ctx);
	helper_fail(fd, msg);
}

int sbx_nft_install(int userns_fd, int netns_fd, uint16_t port, bool v6, bool test_break, char *err,
		    size_t errlen)
{
	static const char v6_nat[] = "\t\tip6 daddr ::1 return\n";
	static const char v6_filter[] = "\t\tip6 daddr ::1 accept\n";
	char rules[sizeof(RULES) + 256], msg[SBX_ERRLEN];
	size_t got = 0;
	int p[2], status, rc;
	ssize_t n;
	pid_t pid, r;

	rc = snprintf(rules, sizeof(rules), RULES, v6 ? v6_nat : "", (unsigned)port, v6 ? v6_filter : "",
		      test_break ? "add rule inet passavant filter passavant-test-bogus\n" : "");
	if (rc < 0 || (size_t)rc >= sizeof(rules)) {
		errbuf_set_errno(err, errlen, 0, "cannot format the interception rules");
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create a pipe for the nftables helper");
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot fork the nftables helper");
		errbuf_append(err, errlen, "%s", SBX_NO_INTERCEPT_HINT);
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
	while (got < sizeof(msg) - 1) {
		n = read(p[0], msg + got, sizeof(msg) - 1 - got);
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
		errbuf_set_errno(err, errlen, errno, "cannot wait for the nftables helper");
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (got == 0)
		(void)snprintf(msg, sizeof(msg), "the helper %s %d", WIFSIGNALED(status) ? "died of signal" : "exited",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	errbuf_set_errno(err, errlen, 0,
			 "cannot install the interception rules in the sandbox's network namespace (%s)%s", msg,
			 SBX_NO_INTERCEPT_HINT);
	return -1;
}

/*
 * pv-intercept - a test harness for interception (tests/integration/
 * test_intercept.c): `passavant run` reduced to its network namespace.
 *
 *   pv-intercept -p POLICY -s SESSION_DIR [-a AUDIT] [-v] -- CMD [ARG...]
 *
 * The proxy is set up as `passavant proxy` sets it up (the CLI's own
 * functions: policy, session, CA, masks, audit) and stays in this
 * network namespace; a child enters a new network namespace (a user
 * namespace too when not root), brings lo up with 198.18.0.1/32 and
 * default routes through it, installs the nftables redirect the sandbox
 * installs (with the nft program: tests only), creates the interception
 * listeners 127.0.0.1:3129 and [::1]:3129 and the proxy listener
 * 127.0.0.1:3128, passes them out over a socketpair (SCM_RIGHTS), then
 * runs CMD there. Refusals are printed by `run`'s own observer, so stderr
 * shows exactly the lines `passavant run` prints. Exits with CMD's status;
 * 77 when the namespace cannot be made (the test skips), 70 on other
 * set-up failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <event2/event.h>

#include "base/defaults.h"
#include "mask/mask.h"
#include "proxy/cli/cli.h"
#include "proxy/cli/run.h"
#include "proxy/cli/session.h"
#include "proxy/log.h"
#include "proxy/proxy.h"

#define EXIT_SKIP 77
#define EXIT_SETUP 70

/* The sandbox's rule set (common interface of issue 15), nat part. */
static const char nft_rules[] =
	"table inet passavant {\n"
	"  chain nat_out {\n"
	"    type nat hook output priority -100; policy accept;\n"
	"    ip daddr 127.0.0.0/8 return\n"
	"    ip6 daddr ::1 return\n"
	"    meta l4proto tcp redirect to :3129\n"
	"  }\n"
	"}\n";

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	(void)close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int listen_on(int family, const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		(void)inet_pton(AF_INET, ip, &s4->sin_addr);
		len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		(void)inet_pton(AF_INET6, ip, &s6->sin6_addr);
		len = sizeof(*s6);
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* The child: namespace, network, rules, listeners out, then CMD. */
static void child(int sock, char **cmd)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64], ack;
	int fds[3], st;
	struct msghdr mh;
	struct iovec iov;
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct cmsghdr *cm;
	pid_t pid;
	char script[1024];

	if (unshare(uid == 0 ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET) < 0) {
		fprintf(stderr, "pv-intercept: unshare: %s\n", strerror(errno));
		_exit(EXIT_SKIP);
	}
	if (uid != 0) {
		(void)snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
		if (write_str("/proc/self/setgroups", "deny") < 0 || write_str("/proc/self/uid_map", map) < 0)
			_exit(EXIT_SKIP);
		(void)snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		if (write_str("/proc/self/gid_map", map) < 0)
			_exit(EXIT_SKIP);
	}
	(void)snprintf(script, sizeof(script),
		       "ip link set lo up && ip addr add 198.18.0.1/32 dev lo && "
		       "ip route add default dev lo && { ip -6 route add default dev lo 2>/dev/null || true; } && "
		       "nft -f - <<'EOF'\n%sEOF\n",
		       nft_rules);
	st = system(script);
	if (st != 0) {
		fprintf(stderr, "pv-intercept: network set-up failed (status %d)\n", st);
		_exit(EXIT_SKIP);
	}
	fds[0] = listen_on(AF_INET, "127.0.0.1", PASSAVANT_INTERCEPT_PORT);
	fds[1] = listen_on(AF_INET6, "::1", PASSAVANT_INTERCEPT_PORT);
	fds[2] = listen_on(AF_INET, "127.0.0.1", 3128);
	if (fds[0] < 0 || fds[2] < 0) {
		fprintf(stderr, "pv-intercept: listen: %s\n", strerror(errno));
		_exit(EXIT_SETUP);
	}
	if (fds[1] < 0)
		fds[1] = fds[0]; /* no IPv6: the parent sees the same fd twice and adopts one */
	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = "L";
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(sock, &mh, 0) != 1 || read(sock, &ack, 1) != 1) {
		fprintf(stderr, "pv-intercept: passing the listeners failed\n");
		_exit(EXIT_SETUP);
	}
	(void)close(fds[0]);
	if (fds[1] != fds[0])
		(void)close(fds[1]);
	(void)close(fds[2]);
	pid = fork();
	if (pid < 0)
		_exit(EXIT_SETUP);
	if (pid == 0) {
		(void)close(sock);
		execvp(cmd[0], cmd);
		fprintf(stderr, "pv-intercept: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

struct waiter {
	proxy_t *px;
	pid_t pid;
	int status;
};

static void chld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct waiter *w = arg;
	int st;

	(void)sig;
	(void)what;
	if (waitpid(w->pid, &st, WNOHANG) != w->pid)
		return;
	w->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	proxy_stop(w->px);
}

int main(int argc, char **argv)
{
	const char *policy = NULL, *sessdir = NULL, *audit = NULL;
	struct run run;
	struct waiter w = {.status = EXIT_SETUP};
	struct event *ev = NULL;
	mask_table_t *masks = NULL;
	session_t *sess = NULL;
	proxy_t *px = NULL;
	bool invalid;
	policy_t *p;
	int sv[2], fds[3], c;
	char b;
	struct msghdr mh;
	struct iovec iov;
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct cmsghdr *cm;

	while ((c = getopt(argc, argv, "+p:s:a:v")) != -1) {
		switch (c) {
		case 'p':
			policy = optarg;
			break;
		case 's':
			sessdir = optarg;
			break;
		case 'a':
			audit = optarg;
			break;
		case 'v':
			log_set_level(log_get_level() >= LOG_LEVEL_INFO ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
			break;
		default:
			return 2;
		}
	}
	if (policy == NULL || sessdir == NULL || optind >= argc) {
		fprintf(stderr, "usage: pv-intercept -p POLICY -s SESSION_DIR [-a AUDIT] [-v] -- CMD [ARG...]\n");
		return 2;
	}
	p = cli_load_policy(policy, &invalid);
	if (p == NULL)
		return EXIT_SETUP;
	sess = session_new(sessdir);
	if (sess == NULL) {
		policy_free(p);
		return EXIT_SETUP;
	}
	px = cli_session_proxy(p, sess, &audit, &masks);
	if (px == NULL || cli_write_session_env(sess, "127.0.0.1", 3128, masks) < 0)
		goto out;
	proxy_set_masks(px, masks);
	masks = NULL;
	memset(&run, 0, sizeof(run));
	run.px = px;
	proxy_set_observer(px, run_observer, &run);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		goto out;
	(void)fflush(NULL);
	w.pid = fork();
	if (w.pid < 0)
		goto out;
	if (w.pid == 0) {
		(void)close(sv[0]);
		child(sv[1], argv + optind);
	}
	(void)close(sv[1]);
	w.px = px;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = &b;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) != 1 || (cm = CMSG_FIRSTHDR(&mh)) == NULL ||
	    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(fds))) {
		/* The child failed before passing them: its status says why. */
		while (waitpid(w.pid, &c, 0) < 0 && errno == EINTR)
			;
		w.status = WIFEXITED(c) ? WEXITSTATUS(c) : EXIT_SETUP;
		goto out;
	}
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	if (proxy_adopt_intercept(px, fds[0]) < 0 ||
	    (fds[1] != fds[0] && proxy_adopt_intercept(px, fds[1]) < 0) ||
	    proxy_adopt_listener(px, fds[2]) < 0)
		goto out;
	if (fds[1] == fds[0])
		fprintf(stderr, "pv-intercept: no IPv6 in the namespace; IPv4 only\n");
	ev = evsignal_new(proxy_base(px), SIGCHLD, chld_cb, &w);
	if (ev == NULL || event_add(ev, NULL) < 0 || write(sv[0], "g", 1) != 1)
		goto out;
	(void)proxy_run(px);
out:
	if (ev != NULL)
		event_free(ev);
	proxy_free(px);
	mask_table_free(masks);
	session_free(sess);
	return w.status;
}

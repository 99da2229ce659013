/*
 * test_nethard.c - issue 13, classes 3 and 4, on the wire and on the host.
 *
 * Suite "nethard_sockets" (class 3): `passavant run -- pv-probe ...` tries
 * socket families and every way to a host unix socket it knows; the test
 * then looks on the host at what arrived. Host sockets are bound in the
 * working directory (writable inside) and in a directory the sandbox sees
 * read-only: a socket file can lie anywhere, so the defence must be the
 * mechanism (seccomp), not the place. A control run of the same probe
 * outside the sandbox proves that the check sees a delivery when there is
 * one.
 *
 * Suite "nethard_local" (class 4): `passavant proxy` with allowedDomains
 * ["*"] runs in a fresh user + network namespace where the test gives a
 * veth interface addresses (v4 and v6) and a service listens on all of
 * them. The proxy must refuse the machine's own addresses like loopback,
 * including an address added after it started, and still reach one whose
 * IP literal the policy lists.
 *
 * Without user namespaces every test is skipped with the reason printed,
 * unless PASSAVANT_SANDBOX_MUST_WORK=1 (then that is a failure). The tree
 * lives under /var/tmp: the sandbox's /tmp is private.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/net.h"
#include "tests/support/proc.h"
#include "tests/support/testlib.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define RUN_TIMEOUT_MS 30000

static bool skip;           /* no user namespaces */
static bool ready;          /* fixtures up */
static char *root;          /* /var/tmp/pv-nethard.XXXXXX */
static char probe[PATH_MAX]; /* $PASSAVANT_TOOLS/pv-probe */
static char p_work[PATH_MAX], p_ro[PATH_MAX], p_policy[PATH_MAX], p_unix_policy[PATH_MAX];

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

/* Skips (false) without namespaces, or fails when they must work. */
static int check_userns(const char *suite)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	char why[256];

	if (test_userns_available(why, sizeof(why)))
		return 0;
	if (must != NULL && strcmp(must, "1") == 0) {
		fprintf(stderr, "%s: namespaces unavailable (%s) and PASSAVANT_SANDBOX_MUST_WORK=1\n",
			suite, why);
		return -1;
	}
	fprintf(stderr, "%s: SKIP: user namespaces unavailable: %s\n", suite, why);
	skip = true;
	return 0;
}

static int sockets_init(void)
{
	char text[2 * PATH_MAX], buf[PATH_MAX];

	if (ready || skip)
		return 0;
	if (check_userns("nethard_sockets") < 0)
		return -1;
	if (skip)
		return 0;
	root = strdup("/var/tmp/pv-nethard.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	/* The probe runs inside the sandbox, where the host's /tmp (where the
	 * clone may live) is private: a copy in the test tree. */
	snprintf(buf, sizeof(buf), "%s/pv-probe", test_tools_dir());
	if (test_copy_file(buf, at(probe, "pv-probe"), 0755) < 0) {
		fprintf(stderr, "nethard: cannot copy %s into %s: %s\n", buf, root, strerror(errno));
		return -1;
	}
	at(p_work, "work");
	at(p_ro, "ro");
	at(p_policy, "policy.yaml");
	at(p_unix_policy, "unix.yaml");
	if (mkdir(p_work, 0755) < 0 || mkdir(p_ro, 0755) < 0 || mkdir(at(buf, "home"), 0755) < 0)
		return -1;
	snprintf(text, sizeof(text), "filesystem:\n  allowWrite: [\"%s\"]\n", p_work);
	if (test_write_file(p_policy, text, strlen(text)) < 0)
		return -1;
	snprintf(text, sizeof(text),
		 "network:\n  allowAllUnixSockets: true\nfilesystem:\n  allowWrite: [\"%s\"]\n", p_work);
	if (test_write_file(p_unix_policy, text, strlen(text)) < 0)
		return -1;
	ready = true;
	return 0;
}

static int sockets_cleanup(void)
{
	if (root != NULL) {
		test_rmtree(root);
		free(root);
		root = NULL;
	}
	ready = false;
	return 0;
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* Whether out has the line "KEY=VAL". */
static bool line_is(const char *out, const char *key, const char *val)
{
	char want[PATH_MAX + 64];
	const char *p;
	size_t n;

	snprintf(want, sizeof(want), "%s=%s\n", key, val);
	n = strlen(want);
	for (p = out; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, want, n) == 0)
			return true;
	return false;
}

/* Whether out has a line starting "KEY=". */
static bool has_line(const char *out, const char *key)
{
	const char *p;
	size_t n = strlen(key);

	for (p = out; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == '=')
			return true;
	return false;
}

/*
 * Runs `passavant run -p POLICY -- ARGS...` in the work directory with
 * HOME = root/home. args NULL-terminated. Returns the exit status; out
 * and err are the captured streams (caller frees).
 */
static int run_probe(const char *policy, char **out, char **err, ...)
{
	char home[PATH_MAX + 8], *argv[40];
	const char *a;
	size_t n = 0;
	va_list ap;

	snprintf(home, sizeof(home), "HOME=%s/home", root);
	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = p_work;
	argv[n++] = home;
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "-p";
	argv[n++] = (char *)policy;
	argv[n++] = "--";
	va_start(ap, err);
	while ((a = va_arg(ap, const char *)) != NULL && n < 38)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	return test_run_capture(argv, out, err, RUN_TIMEOUT_MS);
}

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

/* ------------------------------------------------------------------ */
/* Class 3: socket families                                            */
/* ------------------------------------------------------------------ */

static void test_families(void)
{
	/* What must be refused, and what must keep working. */
	static const char *const refused[] = {
		"netlink-audit", "netlink-uevent", "netlink-diag", "netlink-route-hi", "unix",
		"unix-dgram", "unix-hi", "vsock", "vsock-hi", "packet", "inet-sock-packet", "alg",
		"key", "bluetooth", "xdp", "tipc", "can", "unspec", "family-63", "family-neg",
		"pair-dgram", "pair-dgram-flags", "pair-raw", "pair-dgram-hi", "pair-tipc",
		"pair-vsock",
	};
	static const char *const allowed[] = {
		"inet", "inet6", "netlink-route", "pair-stream", "pair-stream-flags", "pair-seqpacket",
	};
	char *out = NULL, *err = NULL;
	size_t i;
	int st;

	SKIP_IF_NEEDED();
	st = run_probe(p_policy, &out, &err, probe, "sockets", NULL);
	ROW(st == 0, "pv-probe sockets: status %d: %s", st, err ? err : "");
	for (i = 0; i < ARRAY_LEN(refused); i++)
		ROW(line_is(out, refused[i], "EPERM"), "%s not refused with EPERM", refused[i]);
	for (i = 0; i < ARRAY_LEN(allowed); i++)
		ROW(line_is(out, allowed[i], "ok"), "%s refused", allowed[i]);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

/* allowAllUnixSockets opens AF_UNIX, and nothing else. */
static void test_families_allow_unix(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_probe(p_unix_policy, &out, &err, probe, "sockets", NULL);
	ROW(st == 0, "pv-probe sockets: status %d: %s", st, err ? err : "");
	ROW(line_is(out, "unix", "ok") && line_is(out, "unix-dgram", "ok") &&
		    line_is(out, "pair-dgram", "ok"),
	    "allowAllUnixSockets: AF_UNIX still refused: %s", out ? out : "");
	ROW(line_is(out, "vsock", "EPERM") && line_is(out, "packet", "EPERM") &&
		    line_is(out, "netlink-audit", "EPERM") && line_is(out, "pair-vsock", "EPERM"),
	    "allowAllUnixSockets opened another family: %s", out ? out : "");
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* Class 3: host socket files                                          */
/* ------------------------------------------------------------------ */

/* A bound unix socket of type at path (listening for the connected
 * types), non-blocking. -1 on error. */
static int host_socket(const char *path, int type)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path));
	(void)unlink(path);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, 0777) < 0 || (type != SOCK_DGRAM && listen(fd, 16) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What reached a host socket since the last call: datagrams received,
 * connections accepted (each connection's first bytes appended). Returns
 * the count; what holds the messages. */
static int drain(int fd, int type, char *what, size_t len)
{
	char buf[256];
	ssize_t n;
	int c, count = 0;

	what[0] = '\0';
	for (;;) {
		if (type == SOCK_DGRAM) {
			n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (n < 0)
				break;
		} else {
			c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (c < 0)
				break;
			n = recv(c, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			close(c);
			if (n < 0)
				n = 0;
		}
		buf[n] = '\0';
		if (strlen(what) + (size_t)n + 2 < len) {
			strcat(what, buf);
			strcat(what, n > 0 && buf[n - 1] == '\n' ? "" : "\n");
		}
		count++;
	}
	return count;
}

/*
 * Host datagram and stream sockets in the working directory and in a
 * read-only directory: nothing the sandbox sends reaches them, by any
 * route pv-probe knows (socketpair of every type with sendto, sendmsg
 * with a name, connect, connect or sendto after the peer closed;
 * socket()).
 */
static void test_host_sockets(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM, SOCK_SEQPACKET };
	static const char *const tnames[] = { "dgram", "stream", "seqpacket" };
	char paths[6][108], what[2048], *out = NULL, *err = NULL, *argv[12];
	int fds[6], i, n, st;

	SKIP_IF_NEEDED();
	for (i = 0; i < 6; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%.80s/%.9s.sock", i < 3 ? p_work : p_ro, tnames[i % 3]);
		fds[i] = host_socket(paths[i], types[i % 3]);
		CU_ASSERT_FATAL(fds[i] >= 0);
	}
	/* Control: outside the sandbox the same probe reaches them, so the
	 * check below can see a delivery. */
	argv[0] = probe;
	argv[1] = "unix-reach";
	for (i = 0; i < 6; i++)
		argv[2 + i] = paths[i];
	argv[8] = NULL;
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0, "control probe: status %d", st);
	for (i = 0; i < 6; i++) {
		n = drain(fds[i], types[i % 3], what, sizeof(what));
		ROW(n > 0, "control: nothing reached %s outside the sandbox: %s", paths[i],
		    out ? out : "");
	}
	free(out);
	free(err);
	out = err = NULL;
	/* The sandbox. */
	st = run_probe(p_policy, &out, &err, probe, "unix-reach", paths[0], paths[1], paths[2],
		       paths[3], paths[4], paths[5], NULL);
	ROW(st == 0, "unix-reach: status %d: %s", st, err ? err : "");
	for (i = 0; i < 6; i++) {
		n = drain(fds[i], types[i % 3], what, sizeof(what));
		ROW(n == 0, "%d message(s) or connection(s) reached the host socket %s: %s", n,
		    paths[i], what);
	}
	/* The routes themselves, as the probe saw them. */
	for (i = 0; i < 6; i++) {
		char key[160];

		snprintf(key, sizeof(key), "dgram-sendto:%.107s", paths[i]);
		ROW(line_is(out, key, "EPERM"), "socketpair(SOCK_DGRAM) not refused (%s)", key);
		snprintf(key, sizeof(key), "raw-sendmsg:%.107s", paths[i]);
		ROW(line_is(out, key, "EPERM"), "socketpair(SOCK_RAW) not refused (%s)", key);
		/* A connected pair never connects again: EISCONN on a socket
		 * of its own type (EPROTOTYPE on another), also after its
		 * peer closed. */
		for (int t = 1; t < 3; t++) {
			for (int h = 0; h < 2; h++) {
				snprintf(key, sizeof(key), "%s-%sconnect:%.100s", tnames[t],
					 h ? "closed-" : "", paths[i]);
				ROW(has_line(out, key) && !line_is(out, key, "ok"),
				    "%s: connect() worked", key);
				if (i % 3 == t)
					ROW(line_is(out, key, "err106"), "%s: connect() not EISCONN", key);
			}
		}
		snprintf(key, sizeof(key), "socket-dgram:%.107s", paths[i]);
		ROW(line_is(out, key, "EPERM"), "socket(AF_UNIX) not refused (%s)", key);
	}
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	for (i = 0; i < 6; i++) {
		close(fds[i]);
		(void)unlink(paths[i]);
	}
}

/* /run (and /var/run through it) is a private, empty tmpfs inside. */
static void test_private_run(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_probe(p_policy, &out, &err, probe, "ls", "/run", NULL);
	ROW(st == 1, "/run inside is not empty (status %d): %s", st, out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	st = run_probe(p_policy, &out, &err, probe, "ls", "/var/run", NULL);
	ROW(st == 1 || st == 13, "/var/run inside is not empty (status %d): %s", st, out ? out : "");
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* Class 4: this machine's own addresses                               */
/* ------------------------------------------------------------------ */

static const char *ip_bin;   /* the ip(8) binary, or NULL */
static char *ldir;           /* /var/tmp/pv-nethard-local.XXXXXX */

static int local_init(void)
{
	static const char *const ips[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };
	size_t i;

	if (check_userns("nethard_local") < 0)
		return -1;
	if (skip)
		return 0;
	for (i = 0; i < ARRAY_LEN(ips) && ip_bin == NULL; i++)
		if (access(ips[i], X_OK) == 0)
			ip_bin = ips[i];
	ldir = strdup("/var/tmp/pv-nethard-local.XXXXXX");
	if (ldir == NULL || mkdtemp(ldir) == NULL)
		return -1;
	return 0;
}

static int local_cleanup(void)
{
	if (ldir != NULL) {
		test_rmtree(ldir);
		free(ldir);
		ldir = NULL;
	}
	return 0;
}

/* Writes text to a /proc file of this process. */
static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Runs ip(8) with the arguments (NULL-terminated); 0 when it exits 0. */
static int run_ip(const char *first, ...)
{
	char *argv[16];
	const char *a;
	size_t n = 0;
	va_list ap;
	pid_t pid;
	int st;

	argv[n++] = (char *)ip_bin;
	argv[n++] = (char *)first;
	va_start(ap, first);
	while ((a = va_arg(ap, const char *)) != NULL && n < 15)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(ip_bin, argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "nethard_local: ip %s ... failed\n", first);
		return -1;
	}
	return 0;
}

/* One request through the proxy at paddr: "GET http://AUTH/hello" or,
 * with connect, "CONNECT AUTH". Writes "NAME=STATUS[,xpe][,local]" to
 * out: xpe when X-Proxy-Error is there, local when the reason names the
 * rule for this machine's addresses. */
static void probe_req(int out, const char *paddr, const char *name, const char *auth, bool connect)
{
	char req[512], line[256];
	char *resp = NULL;
	int fd, status = 0;

	if (connect)
		snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", auth, auth);
	else
		snprintf(req, sizeof(req),
			 "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", auth,
			 auth);
	fd = test_tcp_connect(paddr, 5000);
	if (fd >= 0 && test_send_all(fd, req, strlen(req)) == 0)
		resp = test_recv_until(fd, connect ? "\r\n\r\n" : NULL, 10000, NULL, NULL);
	if (fd >= 0)
		close(fd);
	if (resp != NULL && strncmp(resp, "HTTP/1.1 ", 9) == 0)
		status = atoi(resp + 9);
	snprintf(line, sizeof(line), "%s=%d%s%s%s%s\n", name, status,
		 resp != NULL && strstr(resp, "\r\nX-Proxy-Error: ") != NULL ? ",xpe" : "",
		 resp != NULL && (strstr(resp, "(this machine)") != NULL ||
				  strstr(resp, "this machine's own addresses") != NULL)
			 ? ",local"
			 : "",
		 resp != NULL && strstr(resp, "cloud metadata endpoint") != NULL ? ",meta" : "",
		 resp != NULL && strstr(resp, "deniedResolvedAddresses") != NULL ? ",cidr" : "");
	if (write(out, line, strlen(line)) < 0)
		_exit(3);
	free(resp);
}

/* GET /hello straight to the upstream at auth: "NAME=ok" when it answers
 * 200 (the address works without the proxy), "NAME=fail" otherwise. */
static void direct_req(int out, const char *name, const char *auth)
{
	char req[256], line[128], *resp = NULL;
	int fd = test_tcp_connect(auth, 5000);

	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	if (fd >= 0 && test_send_all(fd, req, strlen(req)) == 0)
		resp = test_recv_until(fd, NULL, 5000, NULL, NULL);
	if (fd >= 0)
		close(fd);
	snprintf(line, sizeof(line), "%s=%s\n", name,
		 resp != NULL && strncmp(resp, "HTTP/1.1 200", 12) == 0 ? "ok" : "fail");
	if (write(out, line, strlen(line)) < 0)
		_exit(3);
	free(resp);
}

/* The answer of serve_loop(). */
static const char any_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\n"
			       "hello\n";

/* Each connection to fd: its first read (the request's head), then
 * "200 hello" and closed; forever. */
static void serve_loop(int fd)
{
	char buf[2048];
	int c;

	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		(void)!read(c, buf, sizeof(buf));
		(void)!write(c, any_resp, sizeof(any_resp) - 1);
		close(c);
	}
}

/*
 * A service on [::]:0 with IPV6_V6ONLY off, so on every address of every
 * interface, v4 and v6, like a host daemon bound to all interfaces: each
 * connection gets "200 hello" and is closed. Runs in a forked process;
 * returns its pid (to kill) and the port, or -1.
 */
static pid_t start_any_server(uint16_t *port)
{
	struct sockaddr_in6 sin6;
	socklen_t len = sizeof(sin6);
	int fd, off = 0;
	pid_t pid;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin6, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin6.sin6_port);
	pid = fork();
	if (pid != 0) {
		close(fd);
		return pid;
	}
	serve_loop(fd);
	_exit(0);
}

/*
 * Round 42: a second network namespace (a child unsharing it) that takes
 * v1, the peer of v0, with the fixed IPv6 addresses at which clouds serve
 * credentials (AWS EKS Pod Identity fd00:ec2::23, Scaleway's metadata
 * fd00:42::42; its review: Oracle's IMDS fd00:c1::a9fe:a9fe, Akamai's
 * fd00:a9fe:a9fe::1) and a service on [::]:PORT there: reachable from the
 * proxy's namespace through v0 (fd00:ec2::1/64, fd00:42::1/64, ...), and none
 * of its own addresses, as on a node where such an agent runs. Returns
 * the child's pid (to kill) and the port, or -1.
 */
static pid_t start_peer(uint16_t *port)
{
	static const char *const addrs[] = { "fd00:ec2::23/64", "fd00:42::42/64", "fd00:c1::a9fe:a9fe/64",
					     "fd00:a9fe:a9fe::1/64" };
	struct sockaddr_in6 sin6;
	socklen_t len = sizeof(sin6);
	int up[2], down[2], fd, off = 0;
	char pidtext[32], b = 0;
	uint16_t p = 0;
	size_t i;
	pid_t pid;

	if (pipe2(up, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(down, O_CLOEXEC) < 0) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		if (unshare(CLONE_NEWNET) < 0 || write(up[1], &b, 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(20);
		if (run_ip("link", "set", "lo", "up", NULL) < 0 || run_ip("link", "set", "v1", "up", NULL) < 0)
			_exit(21);
		for (i = 0; i < ARRAY_LEN(addrs); i++)
			if (run_ip("-6", "addr", "add", addrs[i], "dev", "v1", "nodad", NULL) < 0)
				_exit(22);
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		if (fd < 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
		    bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) < 0 || listen(fd, 64) < 0 ||
		    getsockname(fd, (struct sockaddr *)&sin6, &len) < 0)
			_exit(23);
		p = ntohs(sin6.sin6_port);
		if (write(up[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
			_exit(24);
		serve_loop(fd);
	}
	close(up[1]);
	close(down[0]);
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)pid);
	if (read(up[0], &b, 1) != 1 || run_ip("link", "set", "v1", "netns", pidtext, NULL) < 0 ||
	    write(down[1], &b, 1) != 1 || read(up[0], &p, sizeof(p)) != (ssize_t)sizeof(p)) {
		close(up[0]);
		close(down[1]);
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return -1;
	}
	close(up[0]);
	close(down[1]);
	*port = p;
	return pid;
}

/*
 * The child: a user, network and mount namespace of its own; a veth pair
 * with 10.213.0.1, 10.213.0.9, fd42:213::1, fd42:213::9 on v0, an AnyIP
 * route (local 10.215.0.0/24: no interface's address, delivered here all
 * the same); /etc/hosts
 * naming them; a service on [::]:0 (every address); `passavant proxy`
 * with allowedDomains ["*", "10.213.0.9", "[fd42:213::9]"]. Requests, then
 * 10.214.0.2, fd43::2 and local 10.216.0.0/24 are added while the proxy
 * runs, and requests
 * again. Results go to out, one line each. Exit 0 when it could run.
 */
static int local_child(int out)
{
	char buf[256], policy[PATH_MAX], hosts[PATH_MAX], session[PATH_MAX], paddr[128];
	char auth[128];
	struct test_proc *pxp = NULL;
	char *argv[12];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	uint16_t uport = 0, mport = 0;
	pid_t srv = -1, peer = -1;
	int rc = 1;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0)
		return 10;
	snprintf(buf, sizeof(buf), "0 %lu 1\n", (unsigned long)uid);
	if (write_proc("/proc/self/setgroups", "deny") < 0 || write_proc("/proc/self/uid_map", buf) < 0)
		return 11;
	snprintf(buf, sizeof(buf), "0 %lu 1\n", (unsigned long)gid);
	if (write_proc("/proc/self/gid_map", buf) < 0)
		return 12;
	/* Names that resolve to the machine's own addresses. */
	snprintf(hosts, sizeof(hosts), "%s/hosts", ldir);
	snprintf(buf, sizeof(buf),
		 "10.213.0.1 own4.test\nfd42:213::1 own6.test\n10.214.0.2 later4.test\n"
		 "fd00:ec2::23 pod-identity.test\n");
	if (test_write_file(hosts, buf, strlen(buf)) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0)
		return 13;
	if (run_ip("link", "set", "lo", "up", NULL) < 0 ||
	    run_ip("link", "add", "v0", "type", "veth", "peer", "name", "v1", NULL) < 0 ||
	    run_ip("link", "set", "v0", "up", NULL) < 0 || run_ip("link", "set", "v1", "up", NULL) < 0 ||
	    run_ip("addr", "add", "10.213.0.1/24", "dev", "v0", NULL) < 0 ||
	    run_ip("addr", "add", "10.213.0.9/24", "dev", "v0", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd42:213::1/64", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd42:213::9/64", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("route", "add", "local", "10.215.0.0/24", "dev", "lo", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd00:ec2::1/64", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd00:42::1/64", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd00:c1::1/64", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd00:a9fe:a9fe::2/64", "dev", "v0", "nodad", NULL) < 0)
		return 14;
	peer = start_peer(&mport);
	if (peer < 0)
		return 15;
	/* The service bound to all interfaces. */
	srv = start_any_server(&uport);
	if (srv < 0)
		goto out;
	snprintf(policy, sizeof(policy), "%s/policy.yaml", ldir);
	snprintf(buf, sizeof(buf),
		 "network:\n  allowedDomains: [\"*\", \"10.213.0.9\", \"[fd42:213::9]\"]\n"
		 "  deniedResolvedAddresses: [\"::ffff:10.217.0.0/120\", \"2002:ada::/32\", "
		 "\"64:ff9b::/96\", \"2002::/16\"]\n");
	if (test_write_file(policy, buf, strlen(buf)) < 0)
		goto out;
	snprintf(session, sizeof(session), "%s/session", ldir);
	argv[0] = (char *)test_passavant_bin();
	argv[1] = "proxy";
	argv[2] = "-p";
	argv[3] = policy;
	argv[4] = "--listen";
	argv[5] = "127.0.0.1:0";
	argv[6] = "--session-dir";
	argv[7] = session;
	argv[8] = NULL;
	pxp = test_proc_start(argv, "listening on ", paddr, sizeof(paddr), 10000);
	if (pxp == NULL)
		goto out;
#define AUTH(fmt) (snprintf(auth, sizeof(auth), fmt, (unsigned)uport), auth)
	direct_req(out, "direct-v4", AUTH("10.213.0.1:%u"));
	direct_req(out, "direct-v6", AUTH("[fd42:213::1]:%u"));
	probe_req(out, paddr, "v4", AUTH("10.213.0.1:%u"), false);
	probe_req(out, paddr, "v6", AUTH("[fd42:213::1]:%u"), false);
	probe_req(out, paddr, "v4-connect", AUTH("10.213.0.1:%u"), true);
	probe_req(out, paddr, "v6-connect", AUTH("[fd42:213::1]:%u"), true);
	probe_req(out, paddr, "v4-mapped", AUTH("[::ffff:10.213.0.1]:%u"), false);
	probe_req(out, paddr, "name4", AUTH("own4.test:%u"), false);
	probe_req(out, paddr, "name6", AUTH("own6.test:%u"), false);
	probe_req(out, paddr, "listed4", AUTH("10.213.0.9:%u"), false);
	probe_req(out, paddr, "listed6", AUTH("[fd42:213::9]:%u"), false);
	probe_req(out, paddr, "loopback", AUTH("127.0.0.1:%u"), false);
	direct_req(out, "direct-anyip", AUTH("10.215.0.7:%u"));
	probe_req(out, paddr, "anyip", AUTH("10.215.0.7:%u"), false);
#define MAUTH(fmt) (snprintf(auth, sizeof(auth), fmt, (unsigned)mport), auth)
	/* Round 42: the clouds' fixed IPv6 credential services. */
	direct_req(out, "direct-eks6", MAUTH("[fd00:ec2::23]:%u"));
	direct_req(out, "direct-scw6", MAUTH("[fd00:42::42]:%u"));
	probe_req(out, paddr, "eks6", MAUTH("[fd00:ec2::23]:%u"), false);
	probe_req(out, paddr, "eks6-connect", MAUTH("[fd00:ec2::23]:%u"), true);
	probe_req(out, paddr, "eks6-name", MAUTH("pod-identity.test:%u"), false);
	probe_req(out, paddr, "scw6", MAUTH("[fd00:42::42]:%u"), false);
	/* Its review: Oracle's and Akamai's too. */
	direct_req(out, "direct-oci6", MAUTH("[fd00:c1::a9fe:a9fe]:%u"));
	direct_req(out, "direct-akamai6", MAUTH("[fd00:a9fe:a9fe::1]:%u"));
	probe_req(out, paddr, "oci6", MAUTH("[fd00:c1::a9fe:a9fe]:%u"), false);
	probe_req(out, paddr, "akamai6", MAUTH("[fd00:a9fe:a9fe::1]:%u"), false);
#undef MAUTH
	/* Round 42: an IPv4 range written as an IPv6 CIDR in the mapped form
	 * is that range in every embedded form (no route here: 502 when not
	 * refused). */
	probe_req(out, paddr, "cidr-v4", AUTH("10.217.0.5:%u"), false);
	probe_req(out, paddr, "cidr-nat64", AUTH("[64:ff9b::10.217.0.5]:%u"), false);
	probe_req(out, paddr, "cidr-6to4", AUTH("[2002:ad9:5::1]:%u"), false);
	/* Its review: 2002:ada::/32 is 10.218.0.0/16 in the 6to4 form, that
	 * range in every form; 64:ff9b::/96 and 2002::/16, the whole of a
	 * form (as lists of special-purpose ranges carry them), refuse that
	 * form only, not every IPv4 address (no route: 502). */
	probe_req(out, paddr, "cidr6to4-v4", AUTH("10.218.0.5:%u"), false);
	probe_req(out, paddr, "cidr6to4-nat64", AUTH("[64:ff9b:1::10.218.0.5]:%u"), false);
	probe_req(out, paddr, "whole-nat64", AUTH("[64:ff9b::10.219.0.5]:%u"), false);
	probe_req(out, paddr, "whole-6to4", AUTH("[2002:adb:5::1]:%u"), false);
	probe_req(out, paddr, "whole-v4", AUTH("10.219.0.5:%u"), false);
	/* New addresses while the proxy runs. */
	if (run_ip("addr", "add", "10.214.0.2/32", "dev", "v0", NULL) < 0 ||
	    run_ip("-6", "addr", "add", "fd43::2/128", "dev", "v0", "nodad", NULL) < 0 ||
	    run_ip("route", "add", "local", "10.216.0.0/24", "dev", "lo", NULL) < 0)
		goto out;
	direct_req(out, "direct-later-anyip", AUTH("10.216.0.5:%u"));
	probe_req(out, paddr, "later-anyip", AUTH("10.216.0.5:%u"), false);
	direct_req(out, "direct-later4", AUTH("10.214.0.2:%u"));
	direct_req(out, "direct-later6", AUTH("[fd43::2]:%u"));
	probe_req(out, paddr, "later4", AUTH("10.214.0.2:%u"), false);
	probe_req(out, paddr, "later6", AUTH("[fd43::2]:%u"), false);
	probe_req(out, paddr, "later4-connect", AUTH("10.214.0.2:%u"), true);
	probe_req(out, paddr, "later-name4", AUTH("later4.test:%u"), false);
	/* And one taken away is no longer the machine's: 502 (nothing
	 * answers there), not 403. */
	if (run_ip("addr", "del", "10.214.0.2/32", "dev", "v0", NULL) < 0)
		goto out;
	probe_req(out, paddr, "removed4", AUTH("10.214.0.2:%u"), false);
#undef AUTH
	rc = 0;
out:
	if (pxp != NULL && test_proc_stop(pxp, SIGTERM, 5000) != 0 && rc == 0) {
		char *e = test_proc_stderr(pxp);

		fprintf(stderr, "nethard_local: proxy stderr:\n%s\n", e ? e : "");
		free(e);
		rc = 2;
	}
	test_proc_free(pxp);
	if (srv > 0) {
		(void)kill(srv, SIGKILL);
		(void)waitpid(srv, NULL, 0);
	}
	if (peer > 0) {
		(void)kill(peer, SIGKILL);
		(void)waitpid(peer, NULL, 0);
	}
	return rc;
}

/*
 * allowedDomains ["*"]: the machine's own addresses, v4 and v6, by
 * literal, by name, through CONNECT and in the IPv4-mapped form, are
 * refused with 403 like loopback, also for addresses added after the
 * proxy started; listed IP literals still work.
 */
static void test_own_addresses(void)
{
	static const char *const refused[] = {
		"v4", "v6", "v4-connect", "v6-connect", "v4-mapped", "name4", "name6",
		"later4", "later6", "later4-connect", "later-name4", "anyip", "later-anyip",
	};
	static const char *const cidr[] = { "cidr-v4",	   "cidr-nat64",	"cidr-6to4",  "cidr6to4-v4",
					    "cidr6to4-nat64", "whole-nat64", "whole-6to4" };
	static const char *const meta[] = { "eks6", "eks6-connect", "eks6-name", "scw6", "oci6", "akamai6" };
	static const char *const directs[] = {
		"direct-v4", "direct-v6", "direct-later4", "direct-later6", "direct-anyip",
		"direct-later-anyip",
	};
	char out[4096], key[64];
	size_t len = 0, i;
	struct pollfd pf;
	int pfd[2], st;
	ssize_t n;
	pid_t pid;

	if (skip) {
		TEST_SKIP("user namespaces unavailable");
		return;
	}
	if (ip_bin == NULL) {
		TEST_SKIP("no ip(8) binary (iproute2)");
		return;
	}
	CU_ASSERT_FATAL(pipe2(pfd, O_CLOEXEC) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		_exit(local_child(pfd[1]));
	}
	close(pfd[1]);
	pf.fd = pfd[0];
	pf.events = POLLIN;
	while (len < sizeof(out) - 1 && poll(&pf, 1, 60000) > 0) {
		n = read(pfd[0], out + len, sizeof(out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0)
		st = -1;
	ROW(WIFEXITED(st) && WEXITSTATUS(st) == 0, "namespace child failed (status %d): %s", st, out);
	for (i = 0; i < ARRAY_LEN(directs); i++)
		ROW(line_is(out, directs[i], "ok"), "%s: the upstream does not answer there: %s",
		    directs[i], out);
	for (i = 0; i < ARRAY_LEN(refused); i++) {
		snprintf(key, sizeof(key), "%s", refused[i]);
		ROW(line_is(out, key, "403,xpe,local"),
		    "%s: not refused as one of this machine's addresses: %s", key, out);
	}
	ROW(line_is(out, "listed4", "200"), "listed IPv4 literal refused: %s", out);
	ROW(line_is(out, "listed6", "200"), "listed IPv6 literal refused: %s", out);
	ROW(has_line(out, "loopback") && strstr(out, "loopback=403,xpe") != NULL,
	    "loopback not refused: %s", out);
	ROW(line_is(out, "removed4", "502"), "a removed address is still treated as local: %s",
	    out);
	/* Round 42: reachable without the proxy, refused through it. */
	ROW(line_is(out, "direct-eks6", "ok") && line_is(out, "direct-scw6", "ok") &&
		    line_is(out, "direct-oci6", "ok") && line_is(out, "direct-akamai6", "ok"),
	    "the peer namespace's credential services do not answer: %s", out);
	ROW(line_is(out, "whole-v4", "502"),
	    "an IPv4 address refused by 64:ff9b::/96 or 2002::/16 (the whole of a form): %s", out);
	for (i = 0; i < ARRAY_LEN(cidr); i++)
		ROW(line_is(out, cidr[i], "403,xpe,cidr"),
		    "%s: not refused by the IPv6 CIDR that is an IPv4 range: %s", cidr[i], out);
	for (i = 0; i < ARRAY_LEN(meta); i++)
		ROW(line_is(out, meta[i], "403,xpe,meta"), "%s: a cloud's IPv6 credential service reached: %s",
		    meta[i], out);
}

TEST_REGISTRAR(register_nethard)
{
	CU_pSuite s = test_suite("nethard_sockets", sockets_init, sockets_cleanup);

	test_add(s, "only inet, inet6, netlink-route; socketpair(AF_UNIX) stream/seqpacket",
		 test_families);
	test_add(s, "allowAllUnixSockets opens AF_UNIX only", test_families_allow_unix);
	test_add(s, "host unix sockets in the work and a read-only dir: nothing arrives",
		 test_host_sockets);
	test_add(s, "/run and /var/run private", test_private_run);
	s = test_suite("nethard_local", local_init, local_cleanup);
	test_add(s, "proxy: own v4/v6 addresses refused like loopback, also added later; listed "
		    "literal works",
		 test_own_addresses);
}

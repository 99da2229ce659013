/*
 * test_fdpass.c - sandbox/fdpass.c: what the receiver accepts (each fd
 * what its kind byte says: loopback listeners, the IPv6 one V6ONLY, a
 * bound loopback UDP socket, user and network namespaces; sockets made
 * non-blocking, all CLOEXEC) and refuses, without leaking fds. Suite
 * "sandbox_fdpass".
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "tests/support/testlib.h"

/* A TCP (listening or not) or UDP socket of family bound to loopback, or
 * to the any address, port chosen by the kernel; v6only for AF_INET6.
 * -1 on failure. */
static int sock_at(int family, int type, bool listening, bool any, int v6only)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(any ? INADDR_ANY : INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = any ? in6addr_any : in6addr_loopback;
		len = sizeof(*sin6);
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0)
			goto fail;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (listening && listen(fd, 4) < 0))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static int listener4(void)
{
	return sock_at(AF_INET, SOCK_STREAM, true, false, 0);
}

/* The lowest free fd number: if a refused message leaked an fd, the
 * lowest free number afterwards is higher. */
static int lowest_free(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

/* Sends n fds with the kind bytes kinds (may differ in count) by hand. */
static ssize_t send_raw(int sock, const char *kinds, size_t nk, const int *fds, size_t n)
{
	char buf[CMSG_SPACE(8 * sizeof(int))];
	struct iovec iov = { .iov_base = (void *)kinds, .iov_len = nk };
	struct msghdr msg;
	struct cmsghdr *c;

	memset(&msg, 0, sizeof(msg));
	memset(buf, 0, sizeof(buf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n > 0) {
		msg.msg_control = buf;
		msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	return sendmsg(sock, &msg, 0);
}

/* Sends fd as kind k alone and returns what the receiver said: 0, or the
 * errno of the refusal. The received fd is closed; a refusal must leave
 * no fd behind. */
static int one(int sp[2], int k, int fd)
{
	struct fdpass_set set, got;
	int before = lowest_free(), rc;

	fdpass_set_init(&set);
	set.fd[k] = fd;
	CU_ASSERT_FATAL(fdpass_send(sp[0], &set) == 0);
	rc = fdpass_recv(sp[1], &got) == 0 ? 0 : errno;
	if (rc == 0) {
		CU_ASSERT(got.fd[k] >= 0);
		fdpass_set_close(&got);
	} else {
		for (size_t i = 0; i < FDPASS_NKINDS; i++)
			CU_ASSERT_EQUAL(got.fd[i], -1);
	}
	CU_ASSERT_EQUAL(lowest_free(), before);
	return rc;
}

static void test_accepts(void)
{
	struct fdpass_set set, got;
	int sp[2], fl;
	bool v6;

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	/* The listener alone (interception off). */
	fdpass_set_init(&set);
	set.fd[FDPASS_LISTENER] = listener4();
	CU_ASSERT_FATAL(set.fd[FDPASS_LISTENER] >= 0);
	CU_ASSERT(fdpass_send(sp[0], &set) == 0);
	CU_ASSERT_FATAL(fdpass_recv(sp[1], &got) == 0);
	for (size_t k = 0; k < FDPASS_NKINDS; k++)
		CU_ASSERT(k == FDPASS_LISTENER ? got.fd[k] >= 0 : got.fd[k] == -1);
	fl = fcntl(got.fd[FDPASS_LISTENER], F_GETFL);
	CU_ASSERT(fl >= 0 && (fl & O_NONBLOCK));
	CU_ASSERT(fcntl(got.fd[FDPASS_LISTENER], F_GETFD) & FD_CLOEXEC);
	fdpass_set_close(&got);
	fdpass_set_close(&set);
	/* Everything at once, in one message. */
	set.fd[FDPASS_LISTENER] = listener4();
	set.fd[FDPASS_INTERCEPT4] = listener4();
	set.fd[FDPASS_INTERCEPT6] = sock_at(AF_INET6, SOCK_STREAM, true, false, 1);
	v6 = set.fd[FDPASS_INTERCEPT6] >= 0;
	if (!v6)
		fprintf(stderr, "sandbox_fdpass: no IPv6 on this host: the IPv6 listener is not tried\n");
	set.fd[FDPASS_RESOLVER] = sock_at(AF_INET, SOCK_DGRAM, false, false, 0);
	set.fd[FDPASS_USERNS] = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	set.fd[FDPASS_NETNS] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(set.fd[FDPASS_INTERCEPT4] >= 0 && set.fd[FDPASS_RESOLVER] >= 0 &&
			set.fd[FDPASS_USERNS] >= 0 && set.fd[FDPASS_NETNS] >= 0);
	CU_ASSERT(fdpass_send(sp[0], &set) == 0);
	CU_ASSERT_FATAL(fdpass_recv(sp[1], &got) == 0);
	for (size_t k = 0; k < FDPASS_NKINDS; k++) {
		CU_ASSERT(k == FDPASS_INTERCEPT6 && !v6 ? got.fd[k] == -1 : got.fd[k] >= 0);
		if (got.fd[k] >= 0)
			CU_ASSERT(fcntl(got.fd[k], F_GETFD) & FD_CLOEXEC);
	}
	fl = fcntl(got.fd[FDPASS_RESOLVER], F_GETFL);
	CU_ASSERT(fl >= 0 && (fl & O_NONBLOCK));
	fdpass_set_close(&got);
	fdpass_set_close(&set);
	/* An empty set is not sent. */
	CU_ASSERT(fdpass_send(sp[0], &set) < 0 && errno == EINVAL);
	close(sp[0]);
	close(sp[1]);
}

/* Each kind refuses what it is not. */
static void test_refuses_wrong_kind(void)
{
	int sp[2], p[2], fd, ns_net, ns_user, reg;

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC) == 0);
	ns_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	reg = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(ns_net >= 0 && ns_user >= 0 && reg >= 0);
	/* Not a socket. */
	CU_ASSERT_EQUAL(one(sp, FDPASS_LISTENER, p[0]), ENOTSOCK);
	CU_ASSERT_EQUAL(one(sp, FDPASS_RESOLVER, reg), ENOTSOCK);
	/* A TCP socket that does not listen. */
	fd = sock_at(AF_INET, SOCK_STREAM, false, false, 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_LISTENER, fd), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT4, fd), EINVAL);
	close(fd);
	/* A listener on 0.0.0.0: the sandbox's listeners are loopback only. */
	fd = sock_at(AF_INET, SOCK_STREAM, true, true, 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_LISTENER, fd), EINVAL);
	close(fd);
	/* An IPv4 listener is not the IPv6 one, nor a resolver. */
	fd = listener4();
	CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT6, fd), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_RESOLVER, fd), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_NETNS, fd), EINVAL);
	close(fd);
	/* IPv6: a listener on [::] (dual-stack or not) is refused; one
	 * on ::1 is not an IPv4 listener. */
	fd = sock_at(AF_INET6, SOCK_STREAM, true, true, 0);
	if (fd >= 0) {
		CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT6, fd), EINVAL);
		close(fd);
		fd = sock_at(AF_INET6, SOCK_STREAM, true, true, 1);
		CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT6, fd), EINVAL);
		close(fd);
		fd = sock_at(AF_INET6, SOCK_STREAM, true, false, 1);
		CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT6, fd), 0);
		CU_ASSERT_EQUAL(one(sp, FDPASS_INTERCEPT4, fd), EINVAL);
		close(fd);
	} else {
		fprintf(stderr, "sandbox_fdpass: no IPv6 on this host: IPv6 refusals not tried\n");
	}
	/* The resolver: an unbound UDP socket, one on 0.0.0.0, a stream. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_RESOLVER, fd), EINVAL);
	close(fd);
	fd = sock_at(AF_INET, SOCK_DGRAM, false, true, 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_RESOLVER, fd), EINVAL);
	close(fd);
	fd = sock_at(AF_INET, SOCK_DGRAM, false, false, 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_RESOLVER, fd), 0);
	CU_ASSERT_EQUAL(one(sp, FDPASS_LISTENER, fd), EINVAL);
	close(fd);
	/* Namespaces: of the wrong type, or not a namespace at all. */
	CU_ASSERT_EQUAL(one(sp, FDPASS_USERNS, ns_net), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_NETNS, ns_user), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_NETNS, reg), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_USERNS, p[1]), EINVAL);
	CU_ASSERT_EQUAL(one(sp, FDPASS_NETNS, ns_net), 0);
	close(p[0]);
	close(p[1]);
	close(ns_net);
	close(ns_user);
	close(reg);
	close(sp[0]);
	close(sp[1]);
}

/* Messages that are wrong as a whole: every fd in them is closed. */
static void test_refuses_bad_message(void)
{
	struct fdpass_set got, set;
	int sp[2], fds[3], before;
	char b = 'L';

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	fds[0] = listener4();
	fds[1] = listener4();
	fds[2] = sock_at(AF_INET, SOCK_DGRAM, false, false, 0);
	CU_ASSERT_FATAL(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);
	before = lowest_free();
	/* Two fds, one kind byte; one fd, two kind bytes. */
	CU_ASSERT(send_raw(sp[0], "L", 1, fds, 2) == 1);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EBADMSG);
	CU_ASSERT(send_raw(sp[0], "L4", 2, fds, 1) == 2);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EBADMSG);
	/* An unknown kind; a kind twice. */
	CU_ASSERT(send_raw(sp[0], "LX", 2, fds, 2) == 2);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EBADMSG);
	CU_ASSERT(send_raw(sp[0], "LL", 2, fds, 2) == 2);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EBADMSG);
	/* Good ones first, a bad one last: all closed, none kept. */
	CU_ASSERT(send_raw(sp[0], "L4N", 3, fds, 3) == 3);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EINVAL);
	for (size_t k = 0; k < FDPASS_NKINDS; k++)
		CU_ASSERT_EQUAL(got.fd[k], -1);
	CU_ASSERT_EQUAL(lowest_free(), before);
	/* No fd at all, then the peer closing. */
	CU_ASSERT(send(sp[0], &b, 1, 0) == 1);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == EBADMSG);
	CU_ASSERT_EQUAL(lowest_free(), before);
	close(sp[0]);
	CU_ASSERT(fdpass_recv(sp[1], &got) < 0 && errno == ECONNRESET);
	close(sp[1]);
	for (size_t i = 0; i < 3; i++)
		close(fds[i]);
	fdpass_set_init(&set);
	fdpass_set_close(&set); /* all -1: a no-op */
}

TEST_REGISTRAR(sandbox_fdpass_register)
{
	CU_pSuite s = test_suite("sandbox_fdpass", NULL, NULL);

	test_add(s, "accepts each kind, one message", test_accepts);
	test_add(s, "refuses an fd that is not its kind", test_refuses_wrong_kind);
	test_add(s, "refuses malformed messages, closes every fd", test_refuses_bad_message);
}

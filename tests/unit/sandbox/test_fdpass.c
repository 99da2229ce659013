/*
 * test_fdpass.c - sandbox/fdpass.c: what the receiver accepts (one
 * listening AF_INET stream socket, made non-blocking and CLOEXEC) and
 * refuses, without leaking fds. Suite "sandbox_fdpass".
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "tests/support/testlib.h"

/* A listening TCP socket on 127.0.0.1, port chosen by the kernel. */
static int listener(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4) < 0)
		return -1;
	return fd;
}

static void test_fdpass(void)
{
	int sp[2], l, got, fl, p[2], two[2], lowest;
	char buf[CMSG_SPACE(2 * sizeof(int))];
	struct msghdr msg;
	struct iovec iov;
	struct cmsghdr *c;
	char b = 'x';

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	/* A listener passes, non-blocking and CLOEXEC. */
	l = listener();
	CU_ASSERT_FATAL(l >= 0);
	CU_ASSERT(fdpass_send(sp[0], l) == 0);
	got = fdpass_recv(sp[1]);
	CU_ASSERT(got >= 0);
	fl = fcntl(got, F_GETFL);
	CU_ASSERT(fl >= 0 && (fl & O_NONBLOCK));
	CU_ASSERT(fcntl(got, F_GETFD) & FD_CLOEXEC);
	close(got);
	close(l);
	/* A pipe is refused (not a socket). */
	CU_ASSERT_FATAL(pipe(p) == 0);
	CU_ASSERT(fdpass_send(sp[0], p[0]) == 0);
	CU_ASSERT(fdpass_recv(sp[1]) < 0 && errno == ENOTSOCK);
	/* A TCP socket that is not listening is refused. */
	l = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT(fdpass_send(sp[0], l) == 0);
	CU_ASSERT(fdpass_recv(sp[1]) < 0 && errno == EINVAL);
	close(l);
	/* Two fds in one message: refused, both closed by the receiver. */
	two[0] = p[0];
	two[1] = p[1];
	memset(&msg, 0, sizeof(msg));
	memset(buf, 0, sizeof(buf));
	iov.iov_base = &b;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = buf;
	msg.msg_controllen = sizeof(buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(two));
	memcpy(CMSG_DATA(c), two, sizeof(two));
	CU_ASSERT(sendmsg(sp[0], &msg, 0) == 1);
	close(p[0]);
	close(p[1]);
	/* The received fds take the lowest free numbers: if the receiver
	 * kept them, the lowest free number afterwards would be higher. */
	lowest = dup(0);
	close(lowest);
	CU_ASSERT(fdpass_recv(sp[1]) < 0 && errno == EBADMSG);
	fl = dup(0);
	close(fl);
	CU_ASSERT_EQUAL(fl, lowest);
	/* No fd at all, then the peer closing. */
	CU_ASSERT(send(sp[0], &b, 1, 0) == 1);
	CU_ASSERT(fdpass_recv(sp[1]) < 0 && errno == EBADMSG);
	close(sp[0]);
	CU_ASSERT(fdpass_recv(sp[1]) < 0 && errno == ECONNRESET);
	close(sp[1]);
}

TEST_REGISTRAR(sandbox_fdpass_register)
{
	CU_pSuite s = test_suite("sandbox_fdpass", NULL, NULL);

	test_add(s, "accepts a listener, refuses the rest", test_fdpass);
}

/*
 * test_env.c - sandbox/env.c (the SPEC §7 variable list, environment
 * building) and sandbox/fdpass.c (what the receiver accepts and refuses).
 * Suite "sandbox_unit".
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/fdpass.h"
#include "sandbox/sandbox.h"
#include "tests/support/testlib.h"

/* Index of "NAME=" in env, or -1. */
static int find(char **env, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return i;
	return -1;
}

static int count(char **env)
{
	int i = 0;

	while (env[i] != NULL)
		i++;
	return i;
}

static void test_proxy_env(void)
{
	static const char *const proxy[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY",
					     "http_proxy", "https_proxy", "all_proxy", "grpc_proxy" };
	static const char *const trust[] = {
		"SSL_CERT_FILE", "NIX_SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
		"PIP_CERT", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
		"CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
	};
	char **env = sbx_proxy_env(3128, "/s/trust.pem");
	size_t i;
	int k;

	CU_ASSERT_FATAL(env != NULL);
	for (i = 0; i < ARRAY_LEN(proxy); i++) {
		k = find(env, proxy[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "http://127.0.0.1:3128") == 0);
	}
	for (i = 0; i < ARRAY_LEN(trust); i++) {
		k = find(env, trust[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "/s/trust.pem") == 0);
	}
	k = find(env, "NO_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NO_PROXY=localhost,127.0.0.1,::1") == 0);
	CU_ASSERT(find(env, "no_proxy") >= 0);
	k = find(env, "NODE_USE_ENV_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NODE_USE_ENV_PROXY=1") == 0);
	CU_ASSERT_EQUAL(count(env), (int)(ARRAY_LEN(proxy) + ARRAY_LEN(trust) + 3));
	sbx_env_free(env);
}

static void test_env_build(void)
{
	char *base[] = { "PATH=/bin", "SECRET=x", "HOME=/h", "KEEP=1", "NOEQUALS", NULL };
	const char *rem[] = { "SECRET", "NOPE", NULL };
	const char *add[] = { "HOME=/new", "A=1", "A=2", "EMPTY=", NULL };
	const char *bad[] = { "NOVALUE", NULL };
	char **env;

	env = sbx_env_build(base, rem, add);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT(find(env, "SECRET") < 0);
	CU_ASSERT(find(env, "PATH") >= 0 && find(env, "KEEP") >= 0);
	CU_ASSERT(find(env, "HOME") >= 0 && strcmp(env[find(env, "HOME")], "HOME=/new") == 0);
	/* The last of two adds wins, and only one copy is kept. */
	CU_ASSERT(find(env, "A") >= 0 && strcmp(env[find(env, "A")], "A=2") == 0);
	CU_ASSERT(find(env, "EMPTY") >= 0);
	/* An entry without '=' in the base is dropped. */
	CU_ASSERT_EQUAL(count(env), 5); /* PATH KEEP HOME A EMPTY */
	sbx_env_free(env);
	CU_ASSERT_PTR_NULL(sbx_env_build(base, NULL, bad));
	env = sbx_env_build(base, NULL, NULL);
	CU_ASSERT_FATAL(env != NULL);
	CU_ASSERT_EQUAL(count(env), 4);
	sbx_env_free(env);
	sbx_env_free(NULL);
}

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

TEST_REGISTRAR(sandbox_unit_register)
{
	CU_pSuite s = test_suite("sandbox_unit", NULL, NULL);

	test_add(s, "sbx_proxy_env lists every SPEC 7 variable", test_proxy_env);
	test_add(s, "sbx_env_build removes, replaces, adds", test_env_build);
	test_add(s, "fdpass accepts a listener and refuses the rest", test_fdpass);
}

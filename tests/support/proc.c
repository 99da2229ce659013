/*
 * proc.c - child processes for integration tests and benchmarks (proc.h).
 *
 * Layout: the child's stdout is a pipe. test_proc_start() reads it itself
 * until the ready line, then hands the descriptor to a drain thread that
 * appends everything to p->out under p->mu until end of file. The drain
 * thread polls with a short timeout so that it also ends when the child was
 * reaped but a grandchild still holds the pipe open (it then gives up after
 * DRAIN_LINGER_MS without data).
 */
#include "tests/support/proc.h"
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_LINGER_MS 200

struct test_proc {
	pid_t pid;
	int out_fd;                /* read end of the stdout pipe, -1 when closed */
	char err_path[256];        /* stderr temporary file */
	pthread_mutex_t mu;        /* protects out, out_len, out_cap */
	char *out;
	size_t out_len, out_cap;
	pthread_t drain;
	bool drain_started;
	atomic_bool child_gone;    /* set once the child was reaped */
	bool reaped;
	int status;                /* exit status once reaped (proc.h encoding) */
};

long long test_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends n bytes to p->out; the caller holds p->mu. Returns 0 or -1. */
static int out_append_locked(struct test_proc *p, const char *buf, size_t n)
{
	if (p->out_len + n + 1 > p->out_cap) {
		size_t ncap = p->out_cap ? p->out_cap : 4096;
		char *nb;

		while (ncap < p->out_len + n + 1)
			ncap *= 2;
		nb = realloc(p->out, ncap);
		if (nb == NULL)
			return -1;
		p->out = nb;
		p->out_cap = ncap;
	}
	memcpy(p->out + p->out_len, buf, n);
	p->out_len += n;
	p->out[p->out_len] = '\0';
	return 0;
}

/* Reads once from out_fd into p->out. Returns bytes read, 0 at end of
 * file (out_fd closed), -1 if nothing was available (EAGAIN/EINTR). */
static ssize_t out_read_once(struct test_proc *p)
{
	char buf[16384];
	ssize_t n = read(p->out_fd, buf, sizeof(buf));

	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return -1;
		n = 0; /* a read error ends the stream like EOF */
	}
	if (n == 0) {
		close(p->out_fd);
		p->out_fd = -1;
		return 0;
	}
	pthread_mutex_lock(&p->mu);
	if (out_append_locked(p, buf, (size_t)n) < 0)
		fprintf(stderr, "proc: out of memory keeping child stdout\n");
	pthread_mutex_unlock(&p->mu);
	return n;
}

static void *drain_main(void *arg)
{
	struct test_proc *p = arg;
	long long idle_since = 0;

	while (p->out_fd >= 0) {
		struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
		int r = poll(&pfd, 1, 50);

		if (r < 0 && errno != EINTR)
			break;
		if (r > 0) {
			if (out_read_once(p) != 0)
				idle_since = 0;
			continue;
		}
		if (atomic_load(&p->child_gone)) {
			/* The child is gone; only a grandchild can hold the pipe. */
			if (idle_since == 0)
				idle_since = test_mono_ms();
			else if (test_mono_ms() - idle_since > DRAIN_LINGER_MS)
				break;
		}
	}
	if (p->out_fd >= 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
	return NULL;
}

/* Converts a waitpid status to the proc.h encoding. */
static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Waits for the child up to timeout_ms (<0: forever). Returns 1 reaped,
 * 0 still running, -1 error. */
static int reap(struct test_proc *p, int timeout_ms)
{
	long long deadline = test_mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);

	if (p->reaped)
		return 1;
	for (;;) {
		int st;
		pid_t r = waitpid(p->pid, &st, timeout_ms < 0 ? 0 : WNOHANG);

		if (r == p->pid) {
			p->reaped = true;
			p->status = decode_status(st);
			atomic_store(&p->child_gone, true);
			return 1;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0) {
			if (test_mono_ms() >= deadline)
				return 0;
			struct timespec ts = { 0, 5 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
}

static void dump_child_output(struct test_proc *p, const char *why)
{
	char *out = test_proc_stdout(p);
	char *err = test_proc_stderr(p);

	fprintf(stderr, "proc: child %d %s\n--- its stdout ---\n%s\n--- its stderr ---\n%s\n---\n",
		(int)p->pid, why, out ? out : "(unavailable)", err ? err : "(unavailable)");
	free(out);
	free(err);
}

/* Looks for a complete line starting with prefix in p->out from *scan on.
 * Returns 1 and copies the rest, 0 not yet; *scan advances over lines
 * already checked. Single-threaded use (before the drain thread). */
static int find_ready(struct test_proc *p, size_t *scan, const char *prefix,
		      char *rest, size_t rest_len)
{
	size_t plen = strlen(prefix);

	while (*scan < p->out_len) {
		char *line = p->out + *scan;
		char *nl = memchr(line, '\n', p->out_len - *scan);
		size_t llen;

		if (nl == NULL)
			return 0;
		llen = (size_t)(nl - line);
		*scan += llen + 1;
		if (llen > 0 && line[llen - 1] == '\r')
			llen--;
		if (llen >= plen && memcmp(line, prefix, plen) == 0) {
			if (rest != NULL && rest_len > 0) {
				size_t n = llen - plen;

				if (n > rest_len - 1)
					n = rest_len - 1;
				memcpy(rest, line + plen, n);
				rest[n] = '\0';
			}
			return 1;
		}
	}
	return 0;
}

struct test_proc *test_proc_start(char *const argv[], const char *ready_prefix,
				  char *ready_rest, size_t rest_len, int timeout_ms)
{
	struct test_proc *p;
	const char *tmp = getenv("TMPDIR");
	int pipefd[2], errfd, devnull;
	pid_t parent = getpid();
	long long deadline;
	size_t scan = 0;

	if (ready_rest != NULL && rest_len > 0)
		ready_rest[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->out_fd = -1;
	p->pid = -1;
	atomic_init(&p->child_gone, false);
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return NULL;
	}
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	if (snprintf(p->err_path, sizeof(p->err_path), "%s/pv-proc-stderr.XXXXXX", tmp) >=
	    (int)sizeof(p->err_path))
		goto fail_early;
	errfd = mkostemp(p->err_path, O_CLOEXEC);
	if (errfd < 0) {
		fprintf(stderr, "proc: mkostemp %s: %s\n", p->err_path, strerror(errno));
		p->err_path[0] = '\0';
		goto fail_early;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "proc: pipe: %s\n", strerror(errno));
		close(errfd);
		goto fail_early;
	}
	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0) {
		fprintf(stderr, "proc: fork: %s\n", strerror(errno));
		close(errfd);
		close(pipefd[0]);
		close(pipefd[1]);
		goto fail_early;
	}
	if (p->pid == 0) {
		/* Child: die with the test runner, whatever happens to it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pipefd[1], 1) < 0 ||
		    dup2(errfd, 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(errfd);
	close(pipefd[1]);
	p->out_fd = pipefd[0];
	if (fcntl(p->out_fd, F_SETFL, O_NONBLOCK) < 0) {
		fprintf(stderr, "proc: fcntl: %s\n", strerror(errno));
		goto fail;
	}

	deadline = test_mono_ms() + timeout_ms;
	while (ready_prefix != NULL && !find_ready(p, &scan, ready_prefix, ready_rest, rest_len)) {
		struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
		long long left = deadline - test_mono_ms();
		int r;

		if (p->out_fd < 0) {
			reap(p, 1000);
			dump_child_output(p, "closed stdout (exited?) before its ready line");
			goto fail;
		}
		if (left <= 0) {
			dump_child_output(p, "did not print its ready line in time");
			goto fail;
		}
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "proc: poll: %s\n", strerror(errno));
			goto fail;
		}
		if (r > 0)
			out_read_once(p);
	}
	if (p->out_fd >= 0) {
		/* Blocking reads from here on: the drain thread polls anyway. */
		if (fcntl(p->out_fd, F_SETFL, 0) < 0) {
			fprintf(stderr, "proc: fcntl: %s\n", strerror(errno));
			goto fail;
		}
		if (pthread_create(&p->drain, NULL, drain_main, p) != 0) {
			fprintf(stderr, "proc: pthread_create failed\n");
			goto fail;
		}
		p->drain_started = true;
	}
	return p;

fail:
	test_proc_free(p);
	return NULL;
fail_early:
	if (p->err_path[0] != '\0')
		unlink(p->err_path);
	pthread_mutex_destroy(&p->mu);
	free(p);
	return NULL;
}

pid_t test_proc_pid(const struct test_proc *p)
{
	return p->pid;
}

int test_proc_stop(struct test_proc *p, int sig, int timeout_ms)
{
	int r;

	if (p == NULL)
		return -1;
	if (!p->reaped) {
		if (sig != 0 && kill(p->pid, sig) < 0 && errno != ESRCH)
			fprintf(stderr, "proc: kill %d: %s\n", (int)p->pid, strerror(errno));
		r = reap(p, timeout_ms);
		if (r == 0) {
			fprintf(stderr, "proc: child %d still running after %d ms: SIGKILL\n",
				(int)p->pid, timeout_ms);
			kill(p->pid, SIGKILL);
			r = reap(p, -1);
		}
		if (r < 0)
			return -1;
	}
	if (p->drain_started) {
		pthread_join(p->drain, NULL);
		p->drain_started = false;
	}
	return p->status;
}

char *test_proc_stdout(struct test_proc *p)
{
	char *s;

	pthread_mutex_lock(&p->mu);
	s = malloc(p->out_len + 1);
	if (s != NULL) {
		if (p->out_len > 0)
			memcpy(s, p->out, p->out_len);
		s[p->out_len] = '\0';
	}
	pthread_mutex_unlock(&p->mu);
	return s;
}

char *test_proc_stderr(struct test_proc *p)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	if (p->err_path[0] == '\0')
		return NULL;
	f = fopen(p->err_path, "rb");
	if (f == NULL)
		return NULL;
	for (;;) {
		char *nb = realloc(buf, len + 65536 + 1);
		size_t n;

		if (nb == NULL) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = nb;
		n = fread(buf + len, 1, 65536, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

const char *test_proc_stderr_path(const struct test_proc *p)
{
	return p->err_path;
}

void test_proc_free(struct test_proc *p)
{
	if (p == NULL)
		return;
	if (p->pid > 0 && !p->reaped) {
		kill(p->pid, SIGKILL);
		reap(p, -1);
	}
	atomic_store(&p->child_gone, true);
	if (p->drain_started)
		pthread_join(p->drain, NULL);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_path[0] != '\0')
		unlink(p->err_path);
	pthread_mutex_destroy(&p->mu);
	free(p->out);
	free(p);
}

/* test_parse_hostport(), with port 0 accepted when port0_ok. */
static int split_hostport(const char *s, char *host, size_t hostlen, uint16_t *port, bool port0_ok)
{
	const char *h, *colon, *end;
	size_t n;
	char *ep;
	unsigned long v;

	if (s == NULL || *s == '\0')
		return -1;
	if (s[0] == '[') {
		h = s + 1;
		end = strchr(h, ']');
		if (end == NULL || end[1] != ':')
			return -1;
		colon = end + 1;
	} else {
		h = s;
		colon = strrchr(s, ':');
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL)
			return -1; /* none, or an unbracketed IPv6 literal */
		end = colon;
	}
	n = (size_t)(end - h);
	if (n == 0 || n >= hostlen)
		return -1;
	if (colon[1] < '0' || colon[1] > '9')
		return -1;
	errno = 0;
	v = strtoul(colon + 1, &ep, 10);
	if (errno != 0 || *ep != '\0' || (v == 0 && !port0_ok) || v > 65535)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (uint16_t)v;
	return 0;
}

int test_parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	return split_hostport(s, host, hostlen, port, false);
}

int test_parse_sockaddr(const char *s, bool port0_ok, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN];
	uint16_t port;

	if (split_hostport(s, host, sizeof(host), &port, port0_ok) < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

long test_read_small(const char *path, char *buf, size_t cap)
{
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, buf, cap - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	return (long)len;
}

/*
 * Adds the CPU time (ns, /proc/PID/task/TID/schedstat) of every thread of
 * pid to *run_ns; returns whether one of them runs or waits to (state R)
 * or is in an uninterruptible wait (D). A process that is gone adds
 * nothing and is not busy.
 */
static bool proc_busy(pid_t pid, unsigned long long *run_ns)
{
	char path[64];
	struct dirent *e;
	bool busy = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return false;
	while ((e = readdir(d)) != NULL) {
		char buf[512], *rp;
		unsigned long long ns = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", (int)pid, e->d_name);
		if (test_read_small(path, buf, sizeof(buf)) < 0)
			continue;
		/* "pid (comm) S ...": comm may hold spaces and parentheses. */
		rp = strrchr(buf, ')');
		if (rp != NULL && rp[1] == ' ' && (rp[2] == 'R' || rp[2] == 'D'))
			busy = true;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/schedstat", (int)pid, e->d_name);
		if (test_read_small(path, buf, sizeof(buf)) >= 0 && sscanf(buf, "%llu", &ns) == 1)
			*run_ns += ns;
	}
	closedir(d);
	return busy;
}

int test_wait_quiet(const pid_t *pids, size_t n, int fd, int cap_ms)
{
	long long deadline = test_mono_ms() + cap_ms;
	unsigned long long last_ns = 0;
	int last = -1, calm = 0;

	while (calm < 3) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		unsigned long long ns = 0;
		bool busy = false;
		int q = 0;

		if (test_mono_ms() >= deadline)
			return -1;
		nanosleep(&ts, NULL);
		for (size_t i = 0; i < n; i++)
			if (pids[i] > 0 && proc_busy(pids[i], &ns))
				busy = true;
		if (fd >= 0 && ioctl(fd, FIONREAD, &q) < 0)
			q = -2;
		calm = !busy && q == last && ns == last_ns ? calm + 1 : 0;
		last = q;
		last_ns = ns;
	}
	return 0;
}

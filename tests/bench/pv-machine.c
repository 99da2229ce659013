/*
 * pv-machine - what this machine's kernel charges for the things every relay
 * does, for `make bench`'s header.
 *
 *   pv-machine [--pin]
 *
 * Prints one line:
 *
 *   machine: a system call 0.98 us; a loopback TCP round trip 20.4 us wall,
 *   11.2 us of one side's CPU (its peer on another CPU)
 *
 * - a system call: getppid(2) through syscall(2), which does no work in the
 *   kernel, so what it costs is the entry and the exit (page-table isolation,
 *   a paravirtualised guest's trap to its host);
 * - a loopback TCP round trip: a 32-byte message sent to an echoing child
 *   and read back (TCP_NODELAY, one send and one read on each side), wall
 *   time and this side's CPU per round trip. A kept-alive request through a
 *   relay makes two of these halves per peer, so twice this CPU is about
 *   what a relay's kernel work per request is before it does anything of
 *   its own (docs/bench.md, "The machine line").
 *
 * With --pin, this process runs on CPU 0 and the echoing child on CPU 1 (the
 * layout of PIN=1); without it, where the scheduler puts them.
 *
 * Exit status: 0, or 1 with a message on stderr if a measurement failed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYSCALLS 200000
#define WARMUP 1000
#define ROUND_TRIPS 20000
#define MESSAGE 32

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double self_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		fprintf(stderr, "pv-machine: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static double syscall_ns(void)
{
	double t0 = now_ns();

	for (int i = 0; i < SYSCALLS; i++)
		(void)syscall(SYS_getppid);
	return (now_ns() - t0) / SYSCALLS;
}

/* The echoing child: returns what a message comes back, until end of file. */
static void echo_child(int lfd, int cpu)
{
	char buf[MESSAGE * 4];
	int one = 1;
	int fd;

	if (cpu >= 0 && pin_to(cpu) < 0)
		_exit(1);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		_exit(1);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0)
			_exit(0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (write(fd, buf, (size_t)n) != n)
			_exit(1);
	}
}

/* One message out and its echo back, whole. */
static int round_trip(int fd, char *buf)
{
	size_t got = 0;

	if (write(fd, buf, MESSAGE) != MESSAGE)
		return -1;
	while (got < MESSAGE) {
		ssize_t n = read(fd, buf + got, MESSAGE - got);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

static int tcp_round_trip(int peer_cpu, double *wall_us, double *cpu_us)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	char buf[MESSAGE] = { 0 };
	int one = 1, status = 0, rc = -1;
	double t0, c0;
	int lfd, fd = -1;
	pid_t pid;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
		fprintf(stderr, "pv-machine: loopback listener: %s\n", strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "pv-machine: fork: %s\n", strerror(errno));
		close(lfd);
		return -1;
	}
	if (pid == 0)
		echo_child(lfd, peer_cpu);
	close(lfd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
		fprintf(stderr, "pv-machine: loopback connection: %s\n", strerror(errno));
		goto out;
	}
	for (int i = 0; i < WARMUP; i++)
		if (round_trip(fd, buf) < 0)
			goto broken;
	t0 = now_ns();
	c0 = self_cpu_ns();
	for (int i = 0; i < ROUND_TRIPS; i++)
		if (round_trip(fd, buf) < 0)
			goto broken;
	*cpu_us = (self_cpu_ns() - c0) / ROUND_TRIPS / 1000.0;
	*wall_us = (now_ns() - t0) / ROUND_TRIPS / 1000.0;
	rc = 0;
	goto out;
broken:
	fprintf(stderr, "pv-machine: loopback round trip failed: %s\n", strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "pv-machine: the echoing child failed\n");
		rc = -1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	bool pin = argc == 2 && strcmp(argv[1], "--pin") == 0;
	double sys_ns, wall_us, cpu_us;

	if (argc > 2 || (argc == 2 && !pin)) {
		fprintf(stderr, "usage: pv-machine [--pin]\n");
		return 1;
	}
	if (pin && pin_to(0) < 0)
		return 1;
	sys_ns = syscall_ns();
	if (tcp_round_trip(pin ? 1 : -1, &wall_us, &cpu_us) < 0)
		return 1;
	printf("machine: a system call %.2f us; a loopback TCP round trip %.1f us wall, "
	       "%.1f us of one side's CPU (its peer on %s)\n",
	       sys_ns / 1000.0, wall_us, cpu_us, pin ? "CPU 1, this side on CPU 0" : "any CPU");
	return 0;
}

/*
 * hostsns.c - a command in a mount namespace with our hosts file
 * (hostsns.h).
 */
#include "tests/support/hostsns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/proc.h"

/* A message from the forked child before exec (async-signal-safe). */
static void child_fail(const char *what)
{
	static const char pre[] = "hostsns: spawn: ";

	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, what, strlen(what));
	(void)!write(2, "\n", 1);
	_exit(122);
}

static int write_proc_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void close_if(int fd)
{
	if (fd >= 0)
		close(fd);
}

int test_spawn_hosts(char *const argv[], char *const envp[], const char *cwd, const char *hosts_path,
		     const char *out_path, const char *err_path, int timeout_ms)
{
	char uidmap[64], gidmap[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	long long deadline = test_mono_ms() + timeout_ms;
	int fo, fe, fi, st = 0;
	pid_t pid, w;

	snprintf(uidmap, sizeof(uidmap), "%lu %lu 1\n", (unsigned long)uid, (unsigned long)uid);
	snprintf(gidmap, sizeof(gidmap), "%lu %lu 1\n", (unsigned long)gid, (unsigned long)gid);
	fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fi = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fo < 0 || fe < 0 || fi < 0) {
		fprintf(stderr, "hostsns: cannot open %s or %s: %s\n", out_path, err_path, strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "hostsns: fork: %s\n", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			child_fail("prctl(PR_SET_PDEATHSIG)");
		if (dup2(fi, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			child_fail("dup2");
		if (uid == 0) {
			if (unshare(CLONE_NEWNS) < 0)
				child_fail("unshare(CLONE_NEWNS)");
		} else {
			if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
				child_fail("unshare(CLONE_NEWUSER|CLONE_NEWNS)");
			if (write_proc_file("/proc/self/setgroups", "deny") < 0 ||
			    write_proc_file("/proc/self/uid_map", uidmap) < 0 ||
			    write_proc_file("/proc/self/gid_map", gidmap) < 0)
				child_fail("uid/gid map of the user namespace");
		}
		/* The kernel ignores the type of these two (valgrind does
		 * not like a NULL one). */
		if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
			child_fail("mount(/, MS_REC|MS_PRIVATE)");
		if (mount(hosts_path, "/etc/hosts", "none", MS_BIND, NULL) < 0)
			child_fail("bind-mount of the test hosts file over /etc/hosts");
		if (chdir(cwd) < 0)
			child_fail("chdir to the work directory");
		execve(argv[0], argv, envp);
		child_fail("execve");
	}
	close(fo);
	close(fe);
	close(fi);
	for (;;) {
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "hostsns: waitpid: %s\n", strerror(errno));
			return -1;
		}
		if (test_mono_ms() > deadline) {
			fprintf(stderr, "hostsns: %s ran past %d ms: killed\n", argv[0], timeout_ms);
			(void)kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		usleep(20000);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
fail:
	close_if(fo);
	close_if(fe);
	close_if(fi);
	return -1;
}

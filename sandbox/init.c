/*
 * init.c - PID 1 of the sandbox's PID namespace.
 *
 * The command must not be PID 1 itself: PID 1 gets no default signal
 * actions (a SIGTERM without a handler would be ignored) and inherits every
 * orphan, which most programs never reap. So the child that built the
 * sandbox stays as a small init (bubblewrap's do_init): it reaps
 * everything, passes SIGINT, SIGTERM and SIGHUP to the command, and exits
 * with the command's status when the command ends. Its exit tears the
 * namespace down: the kernel kills every process left in it, so nothing
 * the command started outlives the run.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

void sbx_init_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
}

/* Never runs: the signals stay blocked and are taken by sigwaitinfo. A
 * handler must exist all the same, because the kernel drops a signal sent
 * to a namespace's init whose action is the default. */
static void on_signal(int sig)
{
	(void)sig;
}

NORETURN void sbx_init_run(pid_t cmd)
{
	struct sigaction sa;
	siginfo_t si;
	sigset_t set;
	pid_t pid;
	int status, sig;

	sbx_init_sigset(&set);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			(void)sigaction(sig, &sa, NULL);
	for (;;) {
		sig = sigwaitinfo(&set, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot wait for signals: fall back to a plain wait
			 * for the command, still reaping what we can. */
			for (;;) {
				pid = waitpid(-1, &status, 0);
				if (pid == cmd)
					goto done;
				if (pid < 0 && errno != EINTR)
					_exit(125);
			}
		}
		if (sig != SIGCHLD) {
			/* A signal from the terminal (^C, hangup: SI_KERNEL)
			 * goes to its whole foreground process group. When
			 * the command is still in ours it got this one from
			 * the kernel already: passing it on would deliver it
			 * twice. A command that moved to a process group of
			 * its own gets it from us. */
			if (si.si_code == SI_KERNEL && getpgid(cmd) == getpgrp())
				continue;
			(void)kill(cmd, sig);
			continue;
		}
		/* Several children may have ended behind one SIGCHLD. The
		 * command itself stopped (^Z, SIGTTIN on the sandbox's
		 * terminal): nothing in the sandbox would ever continue it,
		 * and passavant's own terminal is raw, so the run would hang
		 * (ttyrelay.c). It continues at once: ^Z is for the job
		 * control of a shell inside, which keeps its jobs in groups
		 * of their own and handles their stops itself. */
		while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
			if (pid == cmd && WIFSTOPPED(status)) {
				(void)kill(cmd, SIGCONT);
				continue;
			}
			if (pid == cmd)
				goto done;
		}
	}
done:
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		_exit(128 + WTERMSIG(status));
	_exit(125);
}

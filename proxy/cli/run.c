/*
 * run.c - `passavant run` (SPEC §2, §7): the session's proxy, the plan
 * (plan.c) handed to the sandbox, the event loop until the command ends,
 * then the post-run git check. docs/run.md tells the whole path.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "proxy/cli/cli.h"
#include "proxy/cli/run.h"
#include "proxy/log.h"

/* The options of cmd_run() that have no short form. */
enum { OPT_KEEP_GIT_CONFIG = 256, OPT_NO_INTERCEPT };

/* SIGCHLD (and one forced check at start): has the sandbox ended? */
static void run_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct run *run = arg;
	int st;

	(void)sig;
	(void)what;
	if (run->ended)
		return;
	switch (sbx_try_wait(run->sbx, &st)) {
	case 1:
		run->ended = true;
		run->status = st;
		proxy_stop(run->px);
		break;
	case 0:
		break;
	default:
		log_warn("run: waiting for the sandbox");
		(void)sbx_kill(run->sbx, SIGKILL);
		proxy_stop(run->px);
		break;
	}
}

/*
 * SIGTSTP (`kill -TSTP`, a job-control shell's stop of the job): the
 * command's terminal relay gives the user's terminal back first (its
 * settings, the command's modes off: sbx_tty_pause()), then we stop as
 * the default action would. Before (round 38) the shell took a terminal
 * left raw, with the command's mouse reports and kitty's flags on. A
 * SIGSTOP cannot be caught: the relay sees that one after the shell's
 * prompt (sandbox/ttyrelay.c relay_lose()).
 */
static void run_sigtstp_cb(evutil_socket_t sig, short what, void *arg)
{
	struct run *run = arg;
	sigset_t tstp, old;
	bool masked;

	(void)sig;
	(void)what;
	/* One stop for the SIGTSTPs that come before it, as the default
	 * action gives (review of round 40): caught, a second one sent
	 * while the relay gave the terminal back ran this again after the
	 * fg, and passavant stopped a second time with the shell no longer
	 * waiting for it (run "passavant stopped" row tstp2 failed under
	 * load). Blocked until we are continued, it is pending while we
	 * are stopped, and the SIGCONT discards it; those caught before
	 * this call (libevent calls it once for each) are dropped by
	 * event_del(). Only the loop's thread takes signals (the workers
	 * block them all). */
	masked = sigemptyset(&tstp) == 0 && sigaddset(&tstp, SIGTSTP) == 0 &&
		 pthread_sigmask(SIG_BLOCK, &tstp, &old) == 0;
	if (run->sigtstp != NULL && event_del(run->sigtstp) == 0 && event_add(run->sigtstp, NULL) < 0)
		log_warnx("run: cannot watch SIGTSTP again: a stop of passavant is not passed to the terminal first");
	if (!run->ended && run->sbx != NULL)
		(void)sbx_tty_pause(run->sbx);
	(void)kill(getpid(), SIGSTOP);
	/* Continued: the relay too. A job-control shell's SIGCONT goes to
	 * the group, the relay's included; a parent that continues only
	 * the process it stopped (`kill -CONT PID`, a supervisor) left the
	 * relay stopped, and with it the command's output and keys, for
	 * ever (review of round 38). */
	if (!run->ended && run->sbx != NULL)
		(void)sbx_tty_resume(run->sbx);
	if (masked)
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Is our process group the foreground group of our terminal? Then a
 * SIGINT most likely came from ^C, which the kernel sent to the whole
 * group: the sandbox's init is in it and passes it on (or the command,
 * still in it, got it directly).
 */
static bool terminal_foreground(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return tcgetpgrp(fd) == getpgrp();
	return false;
}

/* When our group was the terminal's foreground at the start (run->tty_fg)
 * and the command moved another there (a shell's job control, or to stop
 * us: TOSTOP), the terminal goes back to our group once it has ended. */
static void reclaim_terminal(const struct run *run)
{
	for (int fd = 0; run->tty_fg && fd <= 2; fd++)
		if (isatty(fd)) {
			pid_t fg = tcgetpgrp(fd);

			/* Only from a group left empty by the sandbox: not from
			 * the user's shell (^Z and bg put us in the
			 * background), nor from a group still alive. */
			if (fg > 0 && fg != getpgrp() && fg != tcgetsid(fd) && kill(-fg, 0) < 0 && errno == ESRCH)
				(void)tcsetpgrp(fd, getpgrp());
			return;
		}
}

/*
 * Saves what the command could change on the terminals it shares with us
 * and that would block or change our own output after it (docs/run.md
 * "Terminal"): the settings (termios: IXON, ISIG, TOSTOP...) and the file
 * status flags (O_NONBLOCK: the open file description is the command's
 * too) of standard input, output and error that are terminals, when our
 * group is their foreground (else the settings are the shell's, not ours
 * to put back); and our controlling terminal when none of those is it
 * (which the command could open as /dev/tty before round 32; now the
 * sandbox then has a session of its own, without one: sandbox/stdio.c,
 * so this is a second line only). A terminal whose state cannot be
 * read is left out. Before the command starts.
 */
static void run_tty_save(struct run *run)
{
	bool ctty = false;
	struct run_tty *t;
	int fd;

	for (fd = 0; run->tty_fg && fd <= 2; fd++) {
		t = &run->ttys[run->n_ttys];
		if (!isatty(fd) || tcgetattr(fd, &t->tio) < 0 || (t->fl = fcntl(fd, F_GETFL)) < 0)
			continue;
		t->fd = fd;
		run->n_ttys++;
		if (tcgetsid(fd) == getsid(0))
			ctty = true;
	}
	if (ctty)
		return;
	/* Our own description: O_NONBLOCK so that opening a serial line
	 * does not wait for its carrier; only ioctls go through it. */
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	t = &run->ttys[run->n_ttys];
	if (tcgetpgrp(fd) != getpgrp() || tcgetattr(fd, &t->tio) < 0) {
		(void)close(fd);
		return;
	}
	t->fd = run->tty_fd = fd;
	t->fl = -1; /* its flags are ours alone */
	run->n_ttys++;
}

/*
 * Once the command has ended (every process of the sandbox gone), and
 * before anything is written there: the terminals saved by run_tty_save()
 * get their settings and file status flags back, and their output
 * restarted (tcflow TCOON: the command may have suspended it with TCOOFF,
 * and turned off IXON so that ^Q would not restart it). TCSANOW: waiting
 * for output to drain is what a stopped terminal never does. Only where
 * our group is the foreground again (reclaim_terminal() ran); a user who
 * put us in the background gave the terminal to the shell. This is also
 * the terminal left to the user after the run, as ssh and script leave
 * it. An output stopped by an XOFF from the terminal itself is the
 * user's to restart (^Q, with IXON back); the report after the check
 * does not wait for it for ever (runreport.c). A failure is held for the
 * report: a line now could block on the very terminal that failed.
 */
static void run_tty_restore(struct run *run)
{
	for (size_t i = 0; i < run->n_ttys; i++) {
		struct run_tty *t = &run->ttys[i];
		char line[256];
		int n;

		if (tcgetpgrp(t->fd) != getpgrp())
			continue;
		if ((t->fl >= 0 && fcntl(t->fd, F_SETFL, t->fl) < 0) ||
		    tcsetattr(t->fd, TCSANOW, &t->tio) < 0 || tcflow(t->fd, TCOON) < 0) {
			n = snprintf(line, sizeof(line),
				     "passavant: cannot restore the terminal's settings as they were before the "
				     "run (%s): %s; `stty sane` resets them\n",
				     t->fd == run->tty_fd ? "/dev/tty" : t->fd == 0 ? "standard input"
						: t->fd == 1 ? "standard output" : "standard error",
				     strerror(errno));
			if (n > 0)
				run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		}
	}
}

/*
 * SIGINT, SIGTERM and SIGHUP go to the command (SPEC §2), not to the proxy:
 * it stops when the command ends. The first one is passed on; a second
 * one while the command still runs, RUN_SIGNAL_AGAIN_MS or more after the
 * first (a repeat sooner is passed on too), ends the sandbox with SIGKILL (round
 * 41 of the attack): a command that ignores the three (`trap '' INT TERM
 * HUP`) could only be stopped by `kill -9` of passavant itself, which
 * skips the check after the run, the one path past it a hostile command
 * can push the user to (docs/run.md "Signals"). The check follows the
 * forced end as any other.
 */
static bool run_signal_hook(void *arg, int sig)
{
	struct run *run = arg;
	struct timespec now;
	long long ms;

	if (run->ended)
		return true;
	(void)clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - run->first_signal.tv_sec) * 1000LL + (now.tv_nsec - run->first_signal.tv_nsec) / 1000000;
	/* One signal sent twice at once is one: GNU timeout sends its TERM
	 * to the command and then to its whole process group, passavant
	 * again (review of round 41: `timeout 5 passavant run -- CMD` ended
	 * CMD with SIGKILL, its TERM handler never run). Only a repeat at
	 * least RUN_SIGNAL_AGAIN_MS after the first forces the end. */
	if (run->signals_passed > 0 && ms >= RUN_SIGNAL_AGAIN_MS) {
		fprintf(stderr,
			"passavant: %s again while the command still runs: the sandbox is ended (SIGKILL); "
			"the check after the run follows\n",
			sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal");
		if (sbx_kill(run->sbx, SIGKILL) < 0)
			log_warn("run: cannot end the sandbox (SIGKILL)");
		return true;
	}
	/* The command is never in our session (sandbox/ttyrelay.c: a
	 * terminal it is given is a pty of ours, where its ^C is a key): a
	 * SIGINT here came from elsewhere, or from a terminal that is only
	 * our output and input, and is passed on. */
	if (run->signals_passed++ == 0)
		run->first_signal = now;
	if (sbx_kill(run->sbx, sig) < 0)
		log_warn("run: cannot pass signal %d to the command", sig);
	return true;
}

/* Parses the options into run and *policy_path, *audit_path; the command
 * starts at argv[optind]. Returns -1 to go on, else the status. */
static int run_parse(int argc, char **argv, struct run *run, const char **policy_path,
		     const char **audit_path)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"keep-git-config", no_argument, NULL, OPT_KEEP_GIT_CONFIG},
		{"no-intercept", no_argument, NULL, OPT_NO_INTERCEPT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+p:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			*policy_path = optarg;
			break;
		case 'a':
			*audit_path = optarg;
			break;
		case 'v':
			if (++run->verbose >= 2)
				log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'q':
			run->quiet = true;
			break;
		case OPT_KEEP_GIT_CONFIG:
			run->keep_git = true;
			break;
		case OPT_NO_INTERCEPT:
			run->no_intercept = true;
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		default:
			cli_usage(stderr);
			return EXIT_RUN_SETUP;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "passavant run: no command given\n");
		cli_usage(stderr);
		return EXIT_RUN_SETUP;
	}
	return -1;
}

/*
 * The command's arguments with every masked credential's real value (in
 * any form the re-masker knows) replaced by its sentinel: a shell that
 * expanded $TOKEN into `run -- git clone https://x:$TOKEN@host/` put the
 * real value there, which every process of the sandbox reads in
 * /proc/PID/cmdline (round 34 of the attack, M1b). A new NULL-terminated
 * array (*out, free with free_remasked_argv()) whose changed entries are
 * ours; one line names their positions. An argument holding a real value
 * in a form the re-masker does not rewrite (mask_table_encoded_real(),
 * the review of round 35, F5) refuses the start, naming its position,
 * not its value. 0, or -1 after logging.
 */
static int remask_argv(const mask_table_t *masks, char **argv, char ***out, bool quiet)
{
	size_t n = 0;
	char **v, pos[256] = "";
	size_t plen = 0;

	while (argv[n] != NULL)
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (v == NULL) {
		log_warn("run: arguments");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char *r = NULL;
		size_t rlen;
		int rc = masks != NULL ? mask_table_remask(masks, argv[i], strlen(argv[i]), &r, &rlen) : 0, enc;

		if (rc < 0) {
			log_warn("run: re-masking the command's arguments");
			for (size_t k = 0; k < i; k++)
				if (v[k] != argv[k])
					free(v[k]);
			free(v);
			return -1;
		}
		v[i] = rc == 1 ? r : argv[i];
		enc = masks != NULL ? mask_table_encoded_real(masks, v[i], strlen(v[i])) : 0;
		if (enc != 0) {
			if (enc < 0)
				log_warn("run: re-masking the command's arguments");
			else
				log_warnx("the command's argument %zu holds a masked credential's real value "
					  "encoded (hex, base32, base64 of it or of its UTF-16, escaped, percent-encoded, "
					  "split by quotes or a backslash-newline, rot13, reversed, in another case, or a "
					  "part of it); the command was "
					  "not started",
					  i);
			for (size_t k = 0; k <= i; k++)
				if (v[k] != argv[k])
					free(v[k]);
			free(v);
			return -1;
		}
		if (rc == 1 && plen < sizeof(pos) - 16)
			plen += (size_t)snprintf(pos + plen, sizeof(pos) - plen, "%s%zu", plen ? ", " : "", i);
	}
	if (plen > 0 && !quiet)
		fprintf(stderr,
			"passavant: the command's argument%s %s held a masked credential's real value: "
			"the command gets the sentinel in its place (the proxy puts the value back on "
			"requests to its injectHosts)\n",
			strchr(pos, ',') != NULL ? "s" : "", pos);
	*out = v;
	return 0;
}

/* Frees remask_argv()'s array: the entries that are not argv's. */
static void free_remasked_argv(char **v, char **argv)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		if (v[i] != argv[i])
			free(v[i]);
	free(v);
}

/*
 * Builds the plan (plan.c) of policy p for argv and starts the sandbox.
 * Returns the running sandbox, or NULL after printing why.
 */
static struct sbx *run_start_sandbox(const struct run *run, const policy_t *p,
				     const session_t *sess, const mask_table_t *masks,
				     const struct plan_host *h, const char *audit_path,
				     char **argv)
{
	struct plan_session ps = {.audit_path = audit_path, .quiet = run->quiet,
				  .verbose = run->verbose};
	char sessdir[PATH_MAX], err[1024];
	struct sbx_config cfg;
	struct run_plan pl;
	struct sbx *s = NULL;
	char **args = NULL;

	if (realpath(session_dir(sess), sessdir) == NULL) {
		log_warn("session directory %s", session_dir(sess));
		return NULL;
	}
	ps.dir = sessdir;
	/* The resolver files (resolv.conf, hosts) go with interception. */
	ps.intercept = !run->no_intercept;
	if (remask_argv(masks, argv, &args, run->quiet) < 0)
		return NULL;
	if (plan_build(&pl, p, masks, h, &ps) < 0) {
		free_remasked_argv(args, argv);
		return NULL;
	}
	plan_sbx_config(&pl, p, args, &cfg);
	/* SPEC §7: connections that ignore the proxy variables are
	 * redirected to the proxy, and names resolve through ours. */
	cfg.intercept = !run->no_intercept;
	if (sbx_start(&cfg, &s, err, sizeof(err)) < 0) {
		log_warnx("%s; the command was not started", err);
		s = NULL;
	} else {
		plan_code_homes_record(&pl, h);
	}
	if (s != NULL && sbx_unseen_unguarded(s) > 0) {
		log_warnx("warning: this kernel offers no Landlock: %zu denied paths that do not exist now "
			  "(credential stores, denyRead entries) would be readable in the sandbox if "
			  "created during the session; a kernel with Landlock (Linux 5.13 or later, "
			  "landlock in its LSM list) keeps them unreadable",
			  sbx_unseen_unguarded(s));
	}
	plan_free(&pl);
	free_remasked_argv(args, argv);
	return s;
}

/*
 * Everything before the loop: the env file, the git roots and the
 * session's start time, the sandbox (the secret arena is wiped in
 * children, MADV_WIPEONFORK, so the plan is built here, before the
 * fork). The policy stays alive through our reference while the config
 * is built. 0, or -1 after printing why.
 */
static int run_prepare(struct run *run, session_t *sess, mask_table_t *masks,
		       const char *audit_path, char **argv, struct strv *roots,
		       struct timespec *since)
{
	struct cli_host ch;
	proxy_policy_t *pp;
	const char *homes[3] = {NULL, NULL, NULL}, *xdg[3] = {NULL, NULL, NULL};
	struct sbx_ctl_path *ctl;
	int rc;

	/* The env file, for reference inside (the session directory is
	 * visible read-only there): the in-sandbox listener's address. */
	if (cli_write_session_env(sess, "127.0.0.1", SBX_DEFAULT_PORT, masks) < 0)
		return -1;
	/* After the credential table rewrote our masked variables. */
	cli_host_read(&ch);
	pp = proxy_policy_get(run->px);
	/* The session starts here for the git check: whatever the command
	 * writes gets a ctime at or after this (the coarse clock is the one
	 * the kernel stamps inodes with). */
	if (plan_git_roots(roots, proxy_policy(pp)) < 0) {
		proxy_policy_put(pp);
		return -1;
	}
	/* No other session may write these trees from here to the end of
	 * our check: the walk before and the check after would each miss
	 * what the other put back (round 12 of the attack). */
	{
		char busy[PATH_MAX];
		int lr = sbx_tree_lock(strv_list(roots), &run->tree_lock, busy, sizeof(busy));

		if (lr == 1) {
			log_warnx("another passavant session is running with a writable tree that overlaps "
				  "this session's (at %s; or another process holds flock(2) on that directory): "
				  "each one's check after the run would miss what the other changed. The command "
				  "was not started; wait for that session to end, or give each session a tree of "
				  "its own (a git worktree, a copy, a TMPDIR of its own rather than a shared /tmp)",
				  busy);
			proxy_policy_put(pp);
			return -1;
		}
		if (lr < 0) {
			log_warn("cannot hold the writable tree %s for this session (if a session made it "
				 "unreadable, restore its mode: chmod u+rx); the command was not started",
				 busy[0] ? busy : "(out of memory)");
			proxy_policy_put(pp);
			return -1;
		}
	}
	/* Round 37 of the attack: an earlier session on these trees that
	 * was killed before its check is checked now, before our start. */
	run_unchecked_check(run, roots);
	if (clock_gettime(CLOCK_REALTIME_COARSE, since) < 0) {
		proxy_policy_put(pp);
		return -1;
	}
	run_unchecked_mark(run, roots, since);
	/* Before the mount plan's placeholders: the names that exist now,
	 * in the homes and configuration directories the plan covers. */
	homes[0] = ch.h.home;
	homes[1] = ch.h.pw_home;
	/* The first of each name, as getenv() finds it (the plan's too). */
	for (size_t i = 0; ch.h.env != NULL && ch.h.env[i] != NULL; i++) {
		if (xdg[0] == NULL && strncmp(ch.h.env[i], "XDG_CONFIG_HOME=", 16) == 0)
			xdg[0] = ch.h.env[i] + 16;
		else if (xdg[1] == NULL && strncmp(ch.h.env[i], "XDG_DATA_HOME=", 14) == 0)
			xdg[1] = ch.h.env[i] + 14;
	}
	if (xdg[0] == NULL) {
		xdg[0] = xdg[1];
		xdg[1] = NULL;
	}
	if (sbx_home_before(strv_list(roots), homes, xdg, &run->home_before) < 0) {
		log_warn("cannot list the home directory for the check of new start-up files; the "
			 "command was not started");
		proxy_policy_put(pp);
		return -1;
	}
	/* Which directories are git directories now: one that becomes one
	 * in the session has every control file checked after it. */
	ctl = plan_ctl_paths();
	rc = sbx_git_before(strv_list(roots), ctl, &run->git_before);
	free(ctl);
	if (rc < 0) {
		log_warn("cannot list the git repositories of the writable trees for the check after the "
			 "run; the command was not started");
		proxy_policy_put(pp);
		return -1;
	}
	run->sbx = run_start_sandbox(run, proxy_policy(pp), sess, masks, &ch.h, audit_path, argv);
	proxy_policy_put(pp);
	if (run->sbx == NULL)
		return -1;
	run_unchecked_placeholders(run, roots, since);
	return 0;
}

/* The proxy adopts the sandbox's listener and runs until the command
 * ends. 0, or -1 when the command could not be served (to be killed). */
static int run_loop(struct run *run)
{
	struct sigaction old_tstp;
	int fd;

	if (proxy_adopt_listener(run->px, sbx_take_listen_fd(run->sbx)) < 0)
		return -1;
	if (!run->no_intercept) {
		/* The IPv4 listener and the resolver always come with
		 * interception; the IPv6 listener only where the sandbox has
		 * IPv6. */
		if (proxy_adopt_intercept(run->px, sbx_take_intercept_fd(run->sbx, AF_INET)) < 0)
			return -1;
		fd = sbx_take_intercept_fd(run->sbx, AF_INET6);
		if (fd >= 0 && proxy_adopt_intercept(run->px, fd) < 0)
			return -1;
		if (proxy_adopt_resolver(run->px, sbx_take_dns_fd(run->sbx)) < 0)
			return -1;
	}
	proxy_set_observer(run->px, run_observer, run);
	proxy_set_signal_hook(run->px, run_signal_hook, run);
	run->sigchld = evsignal_new(proxy_base(run->px), SIGCHLD, run_sigchld_cb, run);
	if (run->sigchld == NULL || event_add(run->sigchld, NULL) < 0) {
		log_warnx("run: cannot watch SIGCHLD");
		return -1;
	}
	/* not where our parent has it ignored (we were not to be stopped) */
	if (sigaction(SIGTSTP, NULL, &old_tstp) == 0 && old_tstp.sa_handler != SIG_IGN) {
		run->sigtstp = evsignal_new(proxy_base(run->px), SIGTSTP, run_sigtstp_cb, run);
		if (run->sigtstp == NULL || event_add(run->sigtstp, NULL) < 0) {
			log_warnx("run: cannot watch SIGTSTP");
			return -1;
		}
	}
	/* The command may have ended before the handler was in place: check
	 * once from inside the loop (a stop before the loop runs is lost). */
	event_active(run->sigchld, EV_SIGNAL, 1);
	if (proxy_run(run->px) < 0)
		log_warnx("run: the proxy failed; ending the command");
	/* no loop from here: SIGTSTP's default action back (libevent puts
	 * back the disposition it found) */
	if (run->sigtstp != NULL)
		event_free(run->sigtstp);
	run->sigtstp = NULL;
	if (!run->ended) {
		(void)sbx_kill(run->sbx, SIGKILL);
		run->status = sbx_wait(run->sbx);
	}
	return 0;
}

/*
 * SPEC §3.3 for what run itself writes on the host and for where it
 * stands, checked before anything is created (the session directory, the
 * audit file, the sentinel key: no file is made at a planted link's
 * target before the refusal). what, path (relative: to our working
 * directory, as open(2) takes it): refused when it goes through a link
 * in a tree this policy makes writable. 0, or -1 after printing why.
 */
static int run_check_host_path(const char *const *writable, const char *what, const char *path,
			       const char *cwd, const char *hint)
{
	char abs[PATH_MAX], err[1024];

	if (path[0] != '/') {
		if (cwd == NULL) {
			log_warnx("%s %s: the working directory is unknown, so it cannot be checked for "
				  "links; give an absolute path; the command was not started",
				  what, path);
			return -1;
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= (int)sizeof(abs)) {
			log_warnx("%s %s: path too long; the command was not started", what, path);
			return -1;
		}
		path = abs;
	}
	if (sbx_check_host_path(writable, what, path, err, sizeof(err)) < 0) {
		log_warnx("%s%s; the command was not started", err, hint);
		return -1;
	}
	return 0;
}

/*
 * $PWD reaches the working directory cwd through a link, and cwd holds the
 * home directory (is it, or an ancestor of it): refused, wherever the link
 * lies. The link may have been planted by an earlier session whose
 * writable tree the present policy does not make writable (so
 * run_check_host_path() does not see it), and the policy's "." would then
 * be the whole home directory while the user's prompt shows a project.
 * Links right under "/" (/home -> /var/home) are the system's layout, not
 * a sandbox's. 0, or -1 after printing why.
 */
/* Whether a component of the absolute path pwd is a symbolic link whose
 * directory is not "/" (a system layout's /home -> /var/home is one; no
 * sandbox ever writes "/"). */
static bool pwd_has_deep_link(const char *pwd)
{
	char cur[PATH_MAX];
	const char *p = pwd;
	size_t len = 0;
	struct stat st;

	while (*p != '\0') {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || len + 1 + n >= sizeof(cur))
			break;
		cur[len] = '/';
		memcpy(cur + len + 1, p, n);
		cur[len + 1 + n] = '\0';
		if (len > 0 && lstat(cur, &st) == 0 && S_ISLNK(st.st_mode))
			return true;
		len += 1 + n;
		p += n;
	}
	return false;
}

static int run_check_pwd_home(const char *pwd, const char *cwd)
{
	const char *home = getenv("HOME");
	char rhome[PATH_MAX];
	size_t n = strlen(cwd);

	if (strcmp(pwd, cwd) == 0 || home == NULL || home[0] != '/' || realpath(home, rhome) == NULL ||
	    !pwd_has_deep_link(pwd))
		return 0;
	if (strcmp(cwd, "/") != 0 && (strncmp(rhome, cwd, n) != 0 || (rhome[n] != '\0' && rhome[n] != '/')))
		return 0;
	log_warnx("working directory ($PWD) %s: it is %s through a symbolic link, and that holds the "
		  "home directory %s: the policy's \".\" and relative paths would name it (a link an "
		  "earlier session planted does this); run from the directory you mean, by its real "
		  "path; the command was not started",
		  pwd, cwd, rhome);
	return -1;
}

/*
 * The host paths of a run that a sandbox of policy p could redirect with
 * a symbolic link planted in one of its writable trees (docs/run.md
 * "Links"): the working directory as the shell names it ($PWD: the
 * policy's "." and relative paths were expanded against the real
 * directory, which a link in the way makes another one than the user
 * sees), the audit file (audit_path, else the policy's), the parent of
 * the session directory ($TMPDIR), the state directory of the sentinel
 * key when the policy uses it. 0, or -1 after printing why.
 */
static int run_check_host_paths(const policy_t *p, const char *audit_path)
{
	const char *pwd = getenv("PWD"), *tmp = getenv("TMPDIR");
	char cwd[PATH_MAX], hint[PATH_MAX + 128], dir[PATH_MAX], err[1024];
	struct strv writable = {0};
	struct stat pst, cst;
	bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
	int rc = -1;

	for (size_t i = 0; i < policy_fs_count(p, FS_ALLOW_WRITE); i++)
		if (strv_add(&writable, policy_fs_path(p, FS_ALLOW_WRITE, i)) < 0)
			goto out;
	/* $PWD only when it names the directory we are in (else the shell's
	 * value is stale, and nothing was expanded against it). */
	if (have_cwd && pwd != NULL && pwd[0] == '/' && stat(pwd, &pst) == 0 &&
	    stat(".", &cst) == 0 && pst.st_dev == cst.st_dev && pst.st_ino == cst.st_ino) {
		(void)snprintf(hint, sizeof(hint),
			       "; the policy's \".\" and relative paths would name %s: run from the "
			       "real directory (cd -P .) if that is the one you mean",
			       cwd);
		if (run_check_host_path(strv_list(&writable), "working directory ($PWD)", pwd, cwd,
					hint) < 0)
			goto out;
		if (run_check_pwd_home(pwd, cwd) < 0)
			goto out;
	}
	if (audit_path == NULL)
		audit_path = policy_audit_path(p);
	if (audit_path != NULL &&
	    run_check_host_path(strv_list(&writable), "audit file", audit_path,
				have_cwd ? cwd : NULL, "") < 0)
		goto out;
	/* session_new(): mkdtemp under $TMPDIR when absolute, else /tmp. */
	if (run_check_host_path(strv_list(&writable), "session directory parent ($TMPDIR)",
				tmp != NULL && tmp[0] == '/' ? tmp : "/tmp", NULL, "") < 0)
		goto out;
	if (cli_uses_state_dir(p)) {
		struct cli_host ch;

		cli_host_read(&ch);
		if (cli_state_dir(getenv("XDG_STATE_HOME"), ch.h.home, dir, sizeof(dir), err,
				  sizeof(err)) < 0) {
			log_warnx("credentials: %s", err);
			goto out;
		}
		if (run_check_host_path(strv_list(&writable), "sentinel state directory", dir, NULL,
					"") < 0)
			goto out;
	}
	rc = 0;
out:
	strv_free(&writable);
	return rc;
}

/* Starts the command and serves it; returns the status of SPEC §2. */
static int run_session(struct run *run, session_t *sess, mask_table_t **masks,
		       const char *audit_path, char **argv)
{
	struct strv roots = {0};
	struct timespec since;
	int rc = EXIT_RUN_SETUP;

	if (run_prepare(run, sess, *masks, audit_path, argv, &roots, &since) < 0)
		goto out;
	if (sbx_exec_error(run->sbx) != NULL)
		log_warnx("%s", sbx_exec_error(run->sbx));
	proxy_set_masks(run->px, *masks);
	*masks = NULL;
	if (run_loop(run) < 0) {
		/* The command was started but cannot reach its proxy: end it. */
		log_warnx("the command was stopped");
		(void)sbx_kill(run->sbx, SIGKILL);
		(void)sbx_wait(run->sbx);
		reclaim_terminal(run);
		run_tty_restore(run);
		(void)run_git_check(run, &roots, &since);
		goto out;
	}
	rc = run->status < 0 ? EXIT_RUN_SETUP : run->status;
	/* A file given as the command's output reached it as a pipe we
	 * copied: a write into the file that failed was never the
	 * command's to see. Said here, and a status of 0 becomes 1. */
	for (int fd = 1; fd <= 2; fd++) {
		int e = sbx_stdio_errno(run->sbx, fd);

		if (e == 0)
			continue;
		log_warnx("the command's %s could not all be written to its file: %s; the rest was dropped",
			  fd == 1 ? "standard output" : "standard error", strerror(e));
		if (rc == 0)
			rc = 1;
	}
	/* A copy of fds 0-2 not waited for, or a pipe shared with the host
	 * left as the command set it (sbx_stdio_failure()): said, and a
	 * status of 0 becomes 1, as for lost output. */
	if (sbx_stdio_failure(run->sbx) != NULL) {
		log_warnx("%s", sbx_stdio_failure(run->sbx));
		if (rc == 0)
			rc = 1;
	}
	/* A placeholder left on the host (named above) changes what reads
	 * that path later: the caller learns of it, as of lost output. */
	if (sbx_placeholders_left(run->sbx) > 0 && rc == 0)
		rc = 1;
	/* The terminal back to our group if the command took it, and as
	 * it was before the command: the check's report goes there. */
	reclaim_terminal(run);
	run_tty_restore(run);
	/* Every process of the sandbox is gone: nothing writes under the
	 * trees while they are checked. Before the proxy goes (its audit).
	 * A planted file left in place (a full disk, round 21 of the
	 * attack) is a failure the caller must see, not only the command's
	 * stderr readers: a status of 0 becomes 1, as for lost output. */
	if ((run_git_check(run, &roots, &since) > 0 || run->unchecked_left) && rc == 0)
		rc = 1;
	/* The sums of a flood's tail, so the count below has them. */
	proxy_flush_refusals(run->px);
	if (run->verbose > 0)
		fprintf(stderr, "passavant: %lu request%s allowed, %lu refused, %lu credential%s injected\n",
			run->allowed, run->allowed == 1 ? "" : "s", run->refused, run->injected,
			run->injected == 1 ? "" : "s");
out:
	/* The check has run, or the command never started. */
	run_unchecked_end(run, &roots);
	/* After the check: another session may write these trees now. */
	sbx_tree_unlock(run->tree_lock);
	run->tree_lock = NULL;
	sbx_home_before_free(run->home_before);
	run->home_before = NULL;
	sbx_git_before_free(run->git_before);
	run->git_before = NULL;
	strv_free(&roots);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	const char *policy_path = NULL, *audit_path = NULL;
	struct run run = {.tty_fd = -1};
	session_t *sess = NULL;
	mask_table_t *masks = NULL;
	bool invalid;
	policy_t *p;
	int rc;

	rc = run_parse(argc, argv, &run, &policy_path, &audit_path);
	if (rc >= 0)
		return rc;
	/* The command shares our terminal: with TOSTOP set and its own
	 * process group in the foreground (tcsetattr, tcsetpgrp), our next
	 * line on the terminal would stop us with SIGTTOU, in the middle of
	 * the checks after the run (round 8 of the attack). Ignored here,
	 * the write goes through; the command gets default dispositions
	 * back before it starts (sandbox/child.c). */
	(void)signal(SIGTTOU, SIG_IGN);
	(void)signal(SIGTTIN, SIG_IGN);
	run.tty_fg = terminal_foreground();
	p = cli_load_policy(policy_path, &invalid);
	if (p == NULL) {
		log_warnx("the command was not started");
		return EXIT_RUN_SETUP;
	}
	/* Before the session directory, the audit file and the key exist. */
	if (run_check_host_paths(p, audit_path) < 0) {
		policy_free(p);
		return EXIT_RUN_SETUP;
	}
	sess = session_new(NULL);
	if (sess == NULL) {
		policy_free(p);
		return EXIT_RUN_SETUP;
	}
	rc = EXIT_RUN_SETUP;
	/* Past the last return before the cleanup below (it closes
	 * run.tty_fd). */
	/* In a pipeline the terminal is the pager's as much as ours: its
	 * settings are neither saved nor put back (the relay leaves them
	 * alone there), or we would restore a pager's raw mode under the
	 * shell, or cooked mode under the pager. */
	if (sbx_stdio_pipeline()) {
		if (!run.quiet)
			(void)fputs("passavant: standard output is a pipe: the command's standard input is "
				    "/dev/null, not the terminal's keys (give it input with < FILE)\n",
				    stderr);
	} else {
		/* a terminal of no session becomes ours here, when we lead a
		 * session without one (sbx_stdio_keys_foreign()) */
		if (sbx_stdio_keys_foreign()) {
			pid_t other = sbx_stdio_tty_reader();

			if (other > 0 && tcgetsid(0) < 0)
				(void)fprintf(stderr,
					      "passavant: standard input is a terminal of no session that another "
					      "program (pid %ld) reads too: the command's standard input is /dev/null, "
					      "not the terminal's keys, which may be that program's; give passavant the "
					      "terminal alone to type to the command, or its input with < FILE\n",
					      (long)other);
			else
				(void)fputs("passavant: standard input is a terminal of another session (passavant "
					    "runs in a session of its own, as setsid leaves it, while a shell reads "
					    "that terminal): the command's standard input is /dev/null, not the "
					    "terminal's keys, which are the shell's; run it without setsid to type to "
					    "it, or give it input with < FILE\n",
					    stderr);
		}
		run_tty_save(&run);
	}
	/* The proxy's signal handlers are in place before the command
	 * starts, so a SIGTERM from now on is passed on, not lost. */
	run.px = cli_session_proxy(p, sess, &audit_path, &masks);
	if (run.px != NULL)
		rc = run_session(&run, sess, &masks, audit_path, argv + optind);
	if (run.sigchld != NULL)
		event_free(run.sigchld);
	if (run.sigtstp != NULL)
		event_free(run.sigtstp);
	/* The proxy first (its connections), then the sandbox (reaped,
	 * placeholders removed), then the session directory. */
	proxy_free(run.px);
	sbx_free(run.sbx);
	mask_table_free(masks);
	session_free(sess);
	if (run.tty_fd >= 0)
		(void)close(run.tty_fd);
	free(run.held);
	return rc;
}

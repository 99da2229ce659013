/*
 * runreport.c - what `passavant run` says on stderr and in the audit log
 * about the command's session: one line per refusal, and the findings of
 * the post-run git check. Every line is one write, with bytes the command
 * chose sanitised.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/defaults.h"
#include "proxy/cli/plan.h"
#include "proxy/cli/run.h"
#include "proxy/log.h"

/* The most bytes of a method and of a target a refusal line shows. */
#define RUN_LINE_METHOD_MAX 32
#define RUN_LINE_TARGET_MAX 200

/* Appends len bytes of s to out (at *n, cap bytes) with every byte that
 * is not printable ASCII written as \xNN: a refusal line must not carry
 * terminal escapes the command chose. */
static void put_sanitized(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < len && *n + 5 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f) {
			out[(*n)++] = (char)ch;
		} else {
			(void)snprintf(out + *n, cap - *n, "\\x%02x", ch);
			*n += 4;
		}
	}
}

char *run_shown(const char *s)
{
	size_t len = strlen(s), cap = 4 * len + 6, n = 0;
	char *out = malloc(cap);

	if (out == NULL)
		return NULL;
	put_sanitized(out, cap, &n, s, len);
	out[n] = '\0';
	return out;
}

static void put_str(char *out, size_t cap, size_t *n, const char *s)
{
	put_sanitized(out, cap, n, s, strlen(s));
}

/* As put_sanitized(), but at most max bytes of s, then "..." when s is
 * longer: a part the command chose (an HTTP/2 method, a target) must not
 * fill the line and push what follows it (the host, the rule) out. */
static void put_cut(char *out, size_t cap, size_t *n, const char *s, size_t len, size_t max)
{
	put_sanitized(out, cap, n, s, len > max ? max : len);
	if (len > max)
		put_str(out, cap, n, "...");
}

/* Ends the line at *n with a newline and writes it in one write, like
 * log.c: no interleaving with the command. */
static void put_line(char *line, size_t cap, size_t n)
{
	if (n >= cap - 1)
		n = cap - 2;
	line[n++] = '\n';
	(void)fwrite(line, 1, n, stderr);
	(void)fflush(stderr);
}

void run_report_hold(struct run *run, const char *line, size_t len)
{
	if (run->held_cap - run->held_len < len) {
		size_t cap = run->held_cap > 0 ? run->held_cap : 4096;
		char *p;

		while (cap - run->held_len < len && cap < SIZE_MAX / 2)
			cap *= 2;
		p = cap - run->held_len >= len ? realloc(run->held, cap) : NULL;
		if (p == NULL) {
			/* Better a line that may wait on the terminal than a
			 * finding the user never hears of. */
			(void)fwrite(line, 1, len, stderr);
			(void)fflush(stderr);
			return;
		}
		run->held = p;
		run->held_cap = cap;
	}
	memcpy(run->held + run->held_len, line, len);
	run->held_len += len;
}

/* SIGALRM while report_write() runs: a handler (not SIG_IGN) only so that
 * a blocked write(2) returns EINTR. */
static void report_tick(int sig)
{
	(void)sig;
}

static long report_ms_since(const struct timespec *t0)
{
	struct timespec t;

	if (clock_gettime(CLOCK_MONOTONIC, &t) < 0)
		return PASSAVANT_REPORT_STALL_MS; /* no clock: give up rather than wait for ever */
	return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Writes len bytes of buf to stderr, which may be a terminal the command
 * shared and left stopped (an XOFF from the terminal, a reader that went
 * away) or non-blocking (O_NONBLOCK on the shared file description).
 * Gives up on the rest when no byte went out for
 * PASSAVANT_REPORT_STALL_MS. A write(2) blocked on a terminal sleeps
 * interruptibly: a periodic SIGALRM without SA_RESTART makes it return
 * EINTR, and being periodic, one that lands between the clock test and
 * the write() only delays the next. SIGALRM and ITIMER_REAL are used by
 * nothing else in passavant; both are put back.
 */
static void report_write(const char *buf, size_t len)
{
	struct itimerval tick = {{0, PASSAVANT_REPORT_TICK_MS * 1000}, {0, PASSAVANT_REPORT_TICK_MS * 1000}};
	struct itimerval off = {{0, 0}, {0, 0}};
	struct sigaction sa, old;
	sigset_t alrm, oldmask;
	struct timespec last;
	bool timed;

	(void)fflush(stderr);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = report_tick;
	(void)sigemptyset(&sa.sa_mask);
	timed = sigaction(SIGALRM, &sa, &old) == 0;
	/* A SIGALRM blocked in the mask passavant was started with would
	 * stay pending and never interrupt the write (review of round 20). */
	(void)sigemptyset(&alrm);
	(void)sigaddset(&alrm, SIGALRM);
	if (timed && pthread_sigmask(SIG_UNBLOCK, &alrm, &oldmask) != 0) {
		(void)sigaction(SIGALRM, &old, NULL);
		timed = false;
	} else if (timed && setitimer(ITIMER_REAL, &tick, NULL) < 0) {
		(void)pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
		(void)sigaction(SIGALRM, &old, NULL);
		timed = false;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &last) < 0)
		memset(&last, 0, sizeof(last));
	while (len > 0) {
		ssize_t w;

		if (report_ms_since(&last) >= PASSAVANT_REPORT_STALL_MS)
			break;
		/* Without the timer, only a write that cannot block. */
		if (!timed) {
			struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};

			if (poll(&pfd, 1, PASSAVANT_REPORT_TICK_MS) <= 0)
				continue;
		}
		w = write(STDERR_FILENO, buf, len);
		if (w > 0) {
			buf += w;
			len -= (size_t)w;
			if (clock_gettime(CLOCK_MONOTONIC, &last) < 0)
				break;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};

			(void)poll(&pfd, 1, PASSAVANT_REPORT_TICK_MS);
		} else if (w == 0 || errno != EINTR) {
			break;
		}
	}
	if (timed) {
		(void)setitimer(ITIMER_REAL, &off, NULL);
		(void)pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
		(void)sigaction(SIGALRM, &old, NULL);
	}
}

/* The "[host]:port" part of a refusal line (default ports left out). */
static void put_host(char *line, size_t cap, size_t *n, const struct audit_rec *r, bool connect)
{
	char port[16];
	bool v6 = strchr(r->host, ':') != NULL;
	bool dflt = !connect && ((strcmp(r->scheme, "https") == 0 && r->port == 443) ||
				 (strcmp(r->scheme, "http") == 0 && r->port == 80));

	if (v6)
		put_str(line, cap, n, "[");
	put_str(line, cap, n, r->host);
	if (v6)
		put_str(line, cap, n, "]");
	if (!dflt && r->port != 0) {
		(void)snprintf(port, sizeof(port), ":%u", (unsigned)r->port);
		put_str(line, cap, n, port);
	}
}

void run_observer(void *arg, const struct audit_rec *r)
{
	struct run *run = arg;
	/* Room for every part at its bound, each byte written \xNN: the
	 * prefix, a method of RUN_LINE_METHOD_MAX, a host of
	 * POLICY_HOST_MAX with brackets and port, a target of
	 * RUN_LINE_TARGET_MAX (or a DNS name of 253), and the rule. */
	char line[4096];
	const char *why;
	size_t n = 0;
	bool connect;

	if (r->decision != NULL && strcmp(r->decision, "allow") == 0)
		run->allowed++;
	else if (r->decision != NULL && strcmp(r->decision, "deny") == 0)
		run->refused += r->summed > 0 ? r->summed : 1; /* a flood's sum counts what it sums */
	run->injected += r->n_injected;
	if (run->quiet || r->decision == NULL || strcmp(r->decision, "deny") != 0)
		return;
	if (r->reason_is_line && r->reason != NULL) {
		/* The proxy wrote the whole line (an intercepted connection
		 * refused before any HTTP, TLS on the proxy port). */
		put_sanitized(line, sizeof(line), &n, r->reason, strlen(r->reason));
		put_line(line, sizeof(line), n);
		return;
	}
	if (r->kind != NULL && strcmp(r->kind, "dns") == 0) {
		/* The resolver flags a name it reported less than a second
		 * ago: resolvers ask A and AAAA together, and ask again. */
		if (r->repeat)
			return;
		if (r->host == NULL && r->reason != NULL) {
			/* The resolver's sum of refusals it did not record
			 * one by one (a flood): its reason says it all. */
			put_sanitized(line, sizeof(line), &n, r->reason, strlen(r->reason));
			put_line(line, sizeof(line), n);
			return;
		}
		put_str(line, sizeof(line), &n, "passavant: blocked DNS lookup of ");
		if (r->host != NULL)
			put_sanitized(line, sizeof(line), &n, r->host, strlen(r->host));
		else
			put_str(line, sizeof(line), &n, "?");
		put_str(line, sizeof(line), &n, " (");
		put_str(line, sizeof(line), &n, r->reason != NULL ? r->reason : "refused");
		put_str(line, sizeof(line), &n, ")");
		put_line(line, sizeof(line), n);
		return;
	}
	if (r->host == NULL && r->method == NULL && r->reason != NULL) {
		/* Nothing was parsed (a malformed head): the reason is all
		 * there is to say, not "blocked CONNECT". */
		if (strncmp(r->reason, "passavant: ", 11) != 0)
			put_str(line, sizeof(line), &n, "passavant: ");
		put_sanitized(line, sizeof(line), &n, r->reason, strlen(r->reason));
		put_line(line, sizeof(line), n);
		return;
	}
	connect = (r->kind != NULL && strcmp(r->kind, "connect") == 0) ||
		  (r->method != NULL && strcmp(r->method, "CONNECT") == 0) || r->scheme == NULL;
	why = r->rule != NULL ? r->rule : r->reason != NULL ? r->reason : "refused";
	put_str(line, sizeof(line), &n, "passavant: blocked ");
	/* HTTP/2 takes any token as the method, of any length up to
	 * maxHeaderBytes: uncut, 1,000 bytes of it filled the line and the
	 * host and rule never showed (round 45 of the attack). The audit
	 * has it whole. */
	if (r->method != NULL)
		put_cut(line, sizeof(line), &n, r->method, strlen(r->method), RUN_LINE_METHOD_MAX);
	else
		put_str(line, sizeof(line), &n, connect ? "CONNECT" : "?");
	put_str(line, sizeof(line), &n, " ");
	if (!connect) {
		put_str(line, sizeof(line), &n, r->scheme);
		put_str(line, sizeof(line), &n, "://");
	}
	if (r->host != NULL)
		put_host(line, sizeof(line), &n, r, connect);
	if (!connect && r->target != NULL) {
		/* Long targets are cut: the audit log has them in full. */
		put_cut(line, sizeof(line), &n, r->target, r->target_len, RUN_LINE_TARGET_MAX);
	}
	put_str(line, sizeof(line), &n, ": ");
	put_str(line, sizeof(line), &n, why);
	put_line(line, sizeof(line), n);
}

/* The length of s, 0 for NULL. */
static size_t len0(const char *s)
{
	return s != NULL ? strlen(s) : 0;
}

/* The stderr line of one finding (path and setting, never contents),
 * held (run_report_hold()). Its buffer is sized to its parts, each byte
 * at most \xNN: the path is the command's choice (directories of 255
 * bytes, deeper than PATH_MAX), and in a fixed 2,048 bytes a long one
 * ended the line inside itself, without the setting, where it was moved
 * or the advice (review of round 45). Out of memory: the fixed buffer,
 * a cut line rather than none. */
static void git_finding_line(struct run *run, const struct sbx_git_finding *f)
{
	char fixed[2048], *line;
	size_t n = 0, cap;

	cap = 4 * (len0(f->path) + len0(f->setting) + len0(f->moved_to) + len0(f->error) + len0(f->why)) + 512;
	line = malloc(cap);
	if (line == NULL) {
		line = fixed;
		cap = sizeof(fixed);
	}

	if (f->setting == NULL) {
		put_str(line, cap, &n, "passavant: cannot check ");
		put_str(line, cap, &n, f->path);
		put_str(line, cap, &n, " for planted programs: ");
		put_str(line, cap, &n, f->error != NULL ? f->error : "?");
		/* the git checks and the home's (start-up files, links) alike */
		put_str(line, cap, &n,
			"; look there for what git, a shell, Python or an editor would run before using it");
	} else {
		put_str(line, cap, &n,
			f->moved_to != NULL ? "passavant: quarantined "
			: f->error != NULL  ? "passavant: cannot quarantine "
			: f->named	    ? "passavant: look at "
					    : "passavant: kept (--keep-git-config) ");
		put_str(line, cap, &n, f->path);
		put_str(line, cap, &n, ": ");
		put_str(line, cap, &n, f->setting);
		if (f->moved_to != NULL) {
			put_str(line, cap, &n, " (moved to ");
			put_str(line, cap, &n, f->moved_to);
			put_str(line, cap, &n, ")");
		} else if (f->error != NULL) {
			put_str(line, cap, &n, ": ");
			put_str(line, cap, &n, f->error);
			put_str(line, cap, &n, "; move it aside before running git or opening an editor or agent there");
		}
		/* what the settings row says runs (a version file is no
		 * editor's settings; review of round 36) */
		if (f->why != NULL && f->error == NULL) {
			put_str(line, cap, &n, ": ");
			put_str(line, cap, &n, f->why);
		}
	}
	if (n >= cap - 1)
		n = cap - 2;
	line[n++] = '\n';
	run_report_hold(run, line, n);
	if (line != fixed)
		free(line);
}

/* sbx_git_report_fn of the post-run git check: one stderr line per
 * control file (sanitised like the refusal lines), one audit record
 * (kind "git"). */
static void run_git_report(void *arg, const struct sbx_git_finding *f)
{
	struct run *run = arg;
	struct audit_rec r;
	audit_t *audit = proxy_audit(run->px);

	if (!f->quiet)
		git_finding_line(run, f);
	if (audit == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.kind = "git";
	r.target = f->path;
	r.target_len = strlen(f->path);
	r.decision = f->setting != NULL && f->moved_to == NULL && f->error == NULL ? "allow" : "deny";
	r.reason = f->setting != NULL ? f->setting : f->error;
	r.rule = f->setting == NULL ? "git check failed"
		 : f->moved_to != NULL ? "quarantined"
		 : f->error != NULL    ? "quarantine failed"
		 : f->named	       ? "named"
				       : "--keep-git-config";
	r.bytes_up = r.bytes_down = r.ms = -1;
	if (audit_write(audit, &r) < 0)
		log_warn("audit write");
}

unsigned long run_git_check(struct run *run, const struct strv *roots, const struct timespec *since)
{
	struct sbx_ctl_path *ctl;
	struct sbx_git_stats st;
	struct timespec t0, t1;
	char line[512];
	int rc, n;

	memset(&st, 0, sizeof(st));
	if (roots->n == 0)
		goto say;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	ctl = plan_ctl_paths();
	rc = sbx_gitguard_check(strv_list(roots), since, run->keep_git, ctl,
				(const char *const *)run->home_before, run->git_before, run_git_report, run, &st);
	if (ctl == NULL)
		rc = -1;
	free(ctl);
	if (rc < 0) {
		static const char warn[] =
			"passavant: the check for planted programs (git, shell start-up files, Python) and "
			"editor or agent settings did not "
			"finish everywhere (lines above, or out of memory): look for planted hooks, "
			"config and settings (.vscode, .claude, .mcp.json...) before running git or "
			"opening an editor or agent in the writable trees\n";

		run_report_hold(run, warn, sizeof(warn) - 1);
	}
	if (st.pyc > 0) {
		n = snprintf(line, sizeof(line),
			     "passavant: removed %lu compiled Python file%s (.pyc) written in the session: Python "
			     "compiles %s again from the sources, which are what you review (a .pyc can hold "
			     "code its source does not)\n",
			     st.pyc, st.pyc == 1 ? "" : "s", st.pyc == 1 ? "it" : "them");
		if (n > 0)
			run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	if (st.ww > SBX_WW_LINES) {
		n = snprintf(line, sizeof(line),
			     "passavant: %lu more world-writable files and directories made or changed in the session "
			     "%s, not named above (the audit names each; a umask of 000? `umask 022` before the run "
			     "makes none)\n",
			     st.ww - SBX_WW_LINES, run->keep_git ? "kept as they are" : "lost o+w");
		if (n > 0)
			run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	if (st.stuck > 0) {
		n = snprintf(line, sizeof(line),
			     "passavant: %lu planted file%s could not be moved aside and %s still in place "
			     "(lines above); the exit status is not 0\n",
			     st.stuck, st.stuck == 1 ? "" : "s", st.stuck == 1 ? "is" : "are");
		if (n > 0)
			run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	/* Round 30 of the attack: a file the check could not read (a lease
	 * on .git/config) had meant "nothing to follow", status 0; what it
	 * includes or names was never checked. */
	if (st.unread > 0) {
		n = snprintf(line, sizeof(line),
			     "passavant: %lu file%s the check had to read to follow what %s could not be "
			     "read (lines above), and what %s was not checked; the exit status is not 0\n",
			     st.unread, st.unread == 1 ? "" : "s", st.unread == 1 ? "it names" : "they name",
			     st.unread == 1 ? "it names" : "they name");
		if (n > 0)
			run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	if (run->verbose > 0) {
		n = snprintf(line, sizeof(line),
			     "passavant: git check: %lu directories, %lu git directories, %lu configs, "
			     "%lu control files %s, %.1f ms\n",
			     st.dirs, st.repos, st.configs, st.findings, run->keep_git ? "kept" : "quarantined",
			     (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		if (n > 0)
			run_report_hold(run, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
say:
	/* Every file is moved aside by now: what the check found goes to
	 * the terminal, with a bound on how long that may take. */
	if (run->held_len > 0)
		report_write(run->held, run->held_len);
	free(run->held);
	run->held = NULL;
	run->held_len = run->held_cap = 0;
	return st.stuck + st.unread;
}

/*
 * ttyrelay.c - the command's terminal: a pseudo-terminal of passavant's,
 * relayed to the user's terminal through the escape filter (parent side,
 * before the clone).
 *
 * Given the user's terminal as fd 0, 1 or 2, the command used to write to
 * it directly: an OSC 52 sequence set the clipboard the user pastes from
 * next, a report the terminal types back (a title, DECRQSS) reached the
 * shell after the run, and what the command left on the terminal (its
 * settings, line discipline, window size) stayed after it (rounds 30 and
 * 32 of the attack). Now those fds get the slave of a new pty instead,
 * which is also the sandbox's controlling terminal (child.c: setsid, then
 * TIOCSCTTY), so ^C, ^Z, job control and /dev/tty work inside as on any
 * terminal, on the sandbox's own. A process of ours outside the sandbox
 * (the relay) copies:
 *   - the user's keys (standard input, when it is a terminal) into the
 *     master, the user's terminal in raw mode meanwhile, as ssh -t and
 *     script(1) do: ^C and ^Z are keys for the command's terminal;
 *   - the master's output to the user's terminal through ttyfilter.c:
 *     text and the screen's own sequences only;
 *   - the window size, at the start and on each SIGWINCH;
 * and at the end puts back what the command changed on the screen's
 * modes (sbx_ttyf_reset()) and the user's settings.
 *
 * Raw mode and input only while passavant's group is the terminal's
 * foreground (or the terminal is not passavant's controlling one): a run
 * started in the background relays output only, and takes the keys when
 * it is brought to the foreground (SIGCONT, or seen within 200 ms: bash's
 * fg of a running job sends no SIGCONT); and gives them up when it is no
 * longer (passavant stopped, or put in the background: looked at every
 * 200 ms), the command's report and key modes turned off meanwhile
 * (relay_lose()); told first on a SIGTSTP, it gives the terminal back
 * whole and stops (relay_pause_now()); seeing passavant stopped while
 * the terminal is still ours (SIGSTOP, a parent without job control),
 * it gives the terminal back and waits (relay_hold()). The parent saved the
 * settings before (proxy/cli/run.c run_tty_save()) and restores them
 * again after the run, should the relay have been killed.
 *
 * Like stdio.c's copies, the relay is forked with the raw clone syscall
 * and calls only system calls and the filter (no allocation).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

static volatile sig_atomic_t relay_winch, relay_cont, relay_stop, relay_pause;

static void on_relay_signal(int sig)
{
	if (sig == SIGWINCH)
		relay_winch = 1;
	else if (sig == SIGCONT)
		relay_cont = 1;
	else if (sig == SIGUSR2)
		relay_pause = 1;
	else
		relay_stop = 1;
}

/* Whether we may read fd's keys and set its modes: our group is its
 * foreground, or it is not our controlling terminal (no job control). */
static bool may_take(int fd)
{
	pid_t sid = getsid(0);

	return tcgetpgrp(fd) == getpgrp() || (sid > 0 && tcgetsid(fd) != sid);
}

/* Writes all of buf to fd, waiting in poll when fd is non-blocking (the
 * user's open file description: its flags are not ours to change). A
 * stop asked meanwhile ends the wait. false when fd failed. */
static bool write_all(int fd, const unsigned char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w > 0) {
			buf += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = fd, .events = POLLOUT};

			if (relay_stop)
				return false;
			(void)poll(&pf, 1, 100);
		} else if (w < 0 && errno == EINTR) {
			if (relay_stop)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

/* The window size of the user's terminal onto the master (the kernel
 * sends SIGWINCH to the command's foreground group). */
static void copy_winsize(int from, int master)
{
	struct winsize ws;

	if (from >= 0 && ioctl(from, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(master, TIOCSWINSZ, &ws);
}

struct relay {
	int master;           /* ours, non-blocking */
	int in;               /* the user's terminal we read keys from, or -1 */
	int out;              /* the user's terminal the output goes to, or -1 */
	int size_from;        /* the terminal whose window size we copy */
	bool reading;         /* keys are read (may_take(in) held) */
	bool in_done;         /* in ended (EOF, hangup): not read again */
	bool raw;             /* we put in raw mode (saved holds its settings) */
	bool held;            /* passavant seen stopped with the terminal ours:
				 given back until it runs again (relay_hold()) */
	pid_t parent;         /* passavant's process */
	long rtt;             /* the slowest answer to a query seen, ms (-1: none) */
	bool timing;          /* a query passed, its answer not yet seen */
	unsigned asked;       /* the filter's count of queries when last looked */
	struct timespec asked_at; /* when the query timed was sent */
	struct termios saved; /* in's settings before raw mode */
	struct sbx_ttyf filter;
};

/* The keys when we may take them: raw mode first (again after a stop:
 * the shell that took the terminal meanwhile put its own settings back;
 * what we save is the user's from before the first time). */
static void relay_take(struct relay *r)
{
	struct termios t;

	if (r->in < 0 || r->in_done)
		return;
	r->reading = !r->held && may_take(r->in);
	if (!r->reading || (!r->raw && tcgetattr(r->in, &r->saved) < 0))
		return;
	t = r->saved;
	cfmakeraw(&t);
	if (tcsetattr(r->in, TCSADRAIN, &t) == 0)
		r->raw = true;
}

/* The keys are read now: the report modes the command set while they
 * were not (mouse, focus, bracketed paste: withheld by the filter, their
 * reports would have been the shell's) go to the terminal. */
static void relay_send_withheld(struct relay *r)
{
	static unsigned char out[SBX_TTYF_OUT(0)];
	size_t n;

	r->filter.answers = r->reading;
	n = sbx_ttyf_feed(&r->filter, out, 0, out);
	if (r->out >= 0 && n > 0 && !write_all(r->out, out, n))
		r->out = -1;
}

/*
 * The keys are no longer ours (passavant stopped by SIGSTOP or SIGTSTP,
 * or put in the background with bg, while the command's modes were on):
 * the shell has the terminal. What the command's modes make the terminal
 * send that the shell neither sets nor reads (mouse and focus reports,
 * the wheel's keys, Meta, kitty's flags, modifyOtherKeys) goes off, and
 * all of the command's modes come back on once the keys are ours again
 * (relay_send_withheld(); sbx_ttyf_withdraw() says what is left).
 * Before (round 38), they stayed on: a click typed `^[[<0;12;5M` into
 * the shell, and with kitty's flags every key was an escape sequence
 * there. The settings are the shell's to put back (bash and zsh restore
 * theirs on a stop; ours are taken again by relay_take()).
 */
static void relay_lose(struct relay *r, bool before)
{
	static unsigned char out[SBX_TTYF_REPLAY];
	size_t n;

	r->reading = false;
	n = sbx_ttyf_withdraw(&r->filter, before, out);
	if (r->out >= 0 && n > 0 && !write_all(r->out, out, n))
		r->out = -1;
}

/*
 * passavant is stopping (SIGTSTP, sbx_tty_pause()): before the shell
 * sees the stop, as ssh does for ~^Z, the terminal is given back as it
 * was: every mode of the command's that changes what the terminal sends
 * off, the user's settings (raw mode off: a parent that does not put its
 * own back, not a job-control shell, got a raw terminal). Then the relay
 * stops itself, which is what the parent waits for; the job's SIGCONT
 * (fg, bg) continues it, and relay_take() sees whose the terminal is.
 */
static void relay_pause_now(struct relay *r)
{
	/* Only a terminal still ours is given back: once the shell has it
	 * (passavant stopped before, or in the background, and `kill -TSTP
	 * %1`; or our stop seen late, the pause timed out), its settings
	 * and its prompt's modes are its own. Before (review of round 38),
	 * the user's settings from before the run went over the line
	 * editor's (-icanon -echo: each key echoed twice, a line read only
	 * at Enter) and ?2004l over the shell's bracketed paste. */
	bool ours = r->in >= 0 && may_take(r->in);

	if (r->reading)
		relay_lose(r, ours);
	r->reading = false;
	if (r->raw && ours)
		(void)tcsetattr(r->in, TCSANOW, &r->saved);
	(void)raise(SIGSTOP);
}

/* Whether process pid is stopped by a signal (/proc/PID/stat's state T;
 * not t, a tracer's stop: under strace each system call is one). */
static bool stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, len;

	len = snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (len < 0 || (size_t)len >= sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
	return p != NULL && p[1] == ' ' && p[2] == 'T';
}

/*
 * passavant stopped (SIGSTOP, which cannot be caught) while the terminal
 * is still ours: no job-control shell took it (passavant under `script
 * -c`, `sh -c`, ssh -t's command, a harness: a parent that does not ask
 * for stops), or not yet. Round 40: before, the terminal stayed raw, the
 * command's modes on, for as long as passavant was stopped: no echo, ^C
 * a byte nobody read. Now, seen within 200 ms (the relay looks at
 * passavant's state while it reads the keys), it is given back as on a
 * SIGTSTP (relay_pause_now(): every mode of the command's off that
 * changes what the terminal sends, the user's settings), but the relay
 * runs on: the command's output still reaches the screen, and once
 * passavant runs again (SIGCONT) relay_take() takes the keys back. A
 * SIGSTOP to passavant's whole group stops the relay too: nothing of
 * ours runs then, and the terminal stays as it is until the group is
 * continued (a job-control shell takes it meanwhile).
 */
static void relay_hold(struct relay *r)
{
	relay_lose(r, true);
	r->held = true;
	if (r->raw)
		(void)tcsetattr(r->in, TCSANOW, &r->saved);
}

/* The master's output, filtered, to the user's terminal. false when the
 * command's side is closed (EIO: every slave descriptor gone). */
static bool relay_output(struct relay *r)
{
	static unsigned char buf[16384], out[SBX_TTYF_OUT(16384)];
	ssize_t n = read(r->master, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0)
		return false;
	/* queries only while their answers reach the command: else the
	 * user's shell reads them as typed */
	r->filter.answers = r->reading;
	n = (ssize_t)sbx_ttyf_feed(&r->filter, buf, (size_t)n, out);
	if (r->out >= 0 && n > 0 && !write_all(r->out, out, (size_t)n))
		r->out = -1; /* the terminal went away: the rest is dropped */
	/* a query sent: its answer timed (relay_keys()) */
	if (r->filter.asked != r->asked) {
		r->asked = r->filter.asked;
		if (!r->timing && clock_gettime(CLOCK_MONOTONIC, &r->asked_at) == 0)
			r->timing = true;
	}
	return true;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return 0;
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Keys read while a query's answer is awaited: the first ESC among them
 * is taken for the answer, and the time since the query for how slow the
 * terminal answers (over ssh, a terminal busy drawing): the slowest is
 * kept for drain_answers(). */
static void relay_keys(struct relay *r, const unsigned char *k, size_t n)
{
	long t;

	if (!r->timing || memchr(k, 0x1b, n) == NULL)
		return;
	r->timing = false;
	t = ms_since(&r->asked_at);
	if (t > r->rtt)
		r->rtt = t;
}

/*
 * After the command's end, when it sent queries (device attributes, the
 * cursor's position, a colour...) or turned reports on (mouse, focus):
 * their answers, or a report sent before the terminal read our reset, may
 * still be on their way, and the shell would read them as typed
 * (^[[12;1R, ^[[I on its line).
 * We ask the terminal's status (DSR 5, which the filter keeps for us)
 * and read, still raw, until its answer: the terminal answers in order,
 * so every answer before it is the command's, and dropped. Bounded, and
 * by how slow the terminal was seen to be (round 38: a fixed second left
 * the answers of a terminal 1.5 s away, over ssh, for the shell): 1 s,
 * or three times the slowest answer seen in the run and half a second;
 * while bytes come in (the answers, slowly) the wait goes on for as long
 * again after each; never past 10 s. A terminal that does not answer
 * costs the first bound.
 */
static void drain_answers(struct relay *r)
{
	static const char want[] = "\x1b[0n";
	unsigned char buf[256];
	size_t got = 0;
	struct timespec t0;
	long bound = r->rtt > 0 ? 3 * r->rtt + 500 : 1000, until;

	if (bound < 1000)
		bound = 1000;
	if (bound > 10000)
		bound = 10000;
	until = bound;
	if (!write_all(r->out, (const unsigned char *)"\x1b[5n", 4) ||
	    clock_gettime(CLOCK_MONOTONIC, &t0) < 0)
		return;
	for (;;) {
		struct pollfd pf = {.fd = r->in, .events = POLLIN};
		long left = until - ms_since(&t0);
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return;
		n = read(r->in, buf, sizeof(buf));
		if (n <= 0)
			return;
		until = ms_since(&t0) + bound;
		if (until > 10000)
			until = 10000;
		/* "\x1b[0n" (or 3n: a malfunction, still the answer) */
		for (ssize_t i = 0; i < n; i++) {
			unsigned char c = buf[i];

			if (got == 2 && (c == '0' || c == '3'))
				got++;
			else if (c == (unsigned char)want[got])
				got++;
			else
				got = c == 0x1b;
			if (got == 4)
				return;
		}
	}
}

NORETURN static void relay_main(struct relay *r)
{
	static unsigned char keys[4096];
	unsigned char reset[SBX_TTYF_RESET];
	size_t have = 0, nreset;
	int keep[3] = {r->master, r->in, r->out};
	struct sigaction sa;
	struct timespec looked = {0};
	sigset_t sigs, none;

	sbx_pump_setup(keep, 3);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_relay_signal; /* no SA_RESTART: ppoll ends */
	(void)sigaction(SIGWINCH, &sa, NULL);
	(void)sigaction(SIGCONT, &sa, NULL);
	(void)sigaction(SIGUSR1, &sa, NULL);
	(void)sigaction(SIGUSR2, &sa, NULL);
	(void)sigemptyset(&sigs);
	(void)sigaddset(&sigs, SIGWINCH);
	(void)sigaddset(&sigs, SIGCONT);
	(void)sigaddset(&sigs, SIGUSR1);
	(void)sigaddset(&sigs, SIGUSR2);
	(void)sigemptyset(&none);
	(void)sigprocmask(SIG_BLOCK, &sigs, NULL);
	relay_take(r);
	while (!relay_stop) {
		struct pollfd pf[2] = {{.fd = r->master, .events = POLLIN}, {.fd = -1}};
		struct timespec look = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};

		if (relay_winch) {
			relay_winch = 0;
			copy_winsize(r->size_from, r->master);
		}
		if (relay_pause) {
			relay_pause = 0;
			relay_pause_now(r);
		}
		/* Continued (fg of a stopped run), or brought to the
		 * foreground without a SIGCONT: bash's fg of a job that runs
		 * in the background sends none, so not reading keys we look
		 * again every 200 ms (before, the keys typed after that fg
		 * stayed in the user's terminal, cooked, and the command
		 * waited for them for ever). */
		/* Reading, the keys are looked at every 200 ms too: passavant
		 * stopped (SIGSTOP, SIGTSTP: the shell takes the terminal and
		 * says nothing to us) or put in the background (bg). */
		/* passavant stopped, the terminal still ours; or running
		 * again: looked at every 200 ms at most */
		if ((r->reading || r->held) && ms_since(&looked) >= 200 &&
		    clock_gettime(CLOCK_MONOTONIC, &looked) == 0) {
			if (r->reading && stopped(r->parent) && may_take(r->in))
				relay_hold(r);
			else if (r->held && !stopped(r->parent))
				r->held = false;
		}
		if (relay_cont || (r->in >= 0 && !r->in_done)) {
			bool was = r->reading;

			if (relay_cont || !was)
				relay_take(r);
			else
				r->reading = may_take(r->in);
			if (relay_cont || (r->reading && !was))
				copy_winsize(r->size_from, r->master);
			if (r->reading && !was)
				relay_send_withheld(r);
			else if (was && !r->reading)
				relay_lose(r, false);
			relay_cont = 0;
		}
		if (have > 0)
			pf[0].events |= POLLOUT;
		if (r->reading && have < sizeof(keys))
			pf[1] = (struct pollfd){.fd = r->in, .events = POLLIN};
		if (ppoll(pf, 2, r->in >= 0 && !r->in_done ? &look : NULL, &none) < 0)
			continue;
		if ((pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && !relay_output(r))
			break;
		if (pf[0].revents & POLLOUT) {
			ssize_t w = write(r->master, keys, have);

			if (w > 0) {
				memmove(keys, keys + w, have - (size_t)w);
				have -= (size_t)w;
			}
		}
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(r->in, keys + have, sizeof(keys) - have);

			if (n > 0) {
				relay_keys(r, keys + have, (size_t)n);
				have += (size_t)n;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				/* EOF, hangup; or EIO in the background: read
				 * again once in the foreground */
				bool bg = n < 0 && errno == EIO && !may_take(r->in);

				if (bg)
					relay_lose(r, false);
				r->reading = false;
				r->in_done = !bg;
			}
		}
	}
	/* Asked to stop: what the master still holds, then the end. */
	for (int i = 0; relay_stop && i < 64 && relay_output(r); i++)
		;
	{
		struct winsize ws;

		if (r->size_from < 0 || ioctl(r->size_from, TIOCGWINSZ, &ws) < 0)
			ws.ws_col = 0;
		nreset = sbx_ttyf_reset(&r->filter, ws.ws_col, reset, sizeof(reset));
	}
	if (r->out >= 0 && nreset > 0)
		(void)write_all(r->out, reset, nreset);
	if (r->out >= 0 && r->filter.queried && r->reading && r->raw && may_take(r->in))
		drain_answers(r);
	if (r->raw && may_take(r->in))
		(void)tcsetattr(r->in, TCSADRAIN, &r->saved);
	_exit(0);
}

/*
 * Whether TERM names a terminal that reads UTF-8 only, with no 8-bit mode
 * in which a byte 0x80-0x9f inside a character is a C1 control: kitty,
 * tmux (its panes' parser is 7-bit and UTF-8), alacritty, foot, ghostty,
 * WezTerm; a name, or one of its variants (tmux-256color, foot-extra).
 * The user's statement, not the command's (passavant's environment);
 * xterm, VTE, konsole, PuTTY, iTerm2 and GNU screen (TERM=screen is also
 * old tmux) have such a mode, and are not named. A wrong TERM breaks
 * more than this; a terminal named here that reads 0x9a as DECID would
 * answer as to DA, its fixed reply typed into the shell (round 40).
 * SBX_TTYF_UTF8_ONLY, or SBX_TTYF_UTF8_MUX for tmux: a multiplexer draws
 * on a terminal outside it that TERM does not name, and with set-titles
 * on passes a pane's title to it as it is (tmux 3.3a: OSC 0 with the
 * pane's U+00DC, C3 9C, whose 0x9c is ST to an 8-bit terminal, the rest
 * of the title text there); its text it draws again (a CAN is dropped:
 * round 39's never reached that terminal) and a DA answer it reads
 * itself (review of round 40). -1: none named.
 */
static int term_utf8_only(void)
{
	static const char *const names[] = {"xterm-kitty", "tmux",	"alacritty", "foot",
					    "xterm-ghostty", "ghostty", "wezterm"};
	const char *t = getenv("TERM");

	for (size_t i = 0; t != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (strncmp(t, names[i], n) == 0 && (t[n] == '\0' || t[n] == '-'))
			return strcmp(names[i], "tmux") == 0 ? SBX_TTYF_UTF8_MUX : SBX_TTYF_UTF8_ONLY;
	}
	return -1;
}

/* How the user's terminal reads bytes 0x80 and up, from the locale: UTF-8
 * when it says so, 8-bit when it names another character set (the filter
 * reads 0x80-0x9F as C1 controls). With none (C, POSIX, unset) the
 * terminal may be either: xterm started in a C locale reads 0x9D as an
 * OSC introducer, so the filter decodes UTF-8 and sends no byte
 * 0x80-0x9F at all (before, U+00DD, C3 9D, passed as text). Either of
 * those, under a terminal that reads UTF-8 only (term_utf8_only()):
 * SBX_TTYF_UTF8_ONLY (tmux: _MUX), whose characters pass whole (round 40: in a run
 * that read no keys, 6 % of a Chinese text's characters were '?', those
 * holding 0x9a, DECID to an 8-bit terminal; in a title more). */
static int locale_cs(void)
{
	const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"}, *v = NULL;
	int only = term_utf8_only();

	for (size_t i = 0; i < 3 && (v == NULL || *v == '\0'); i++)
		v = getenv(names[i]);
	if (v == NULL || *v == '\0' || strcmp(v, "C") == 0 || strcmp(v, "POSIX") == 0)
		return only >= 0 ? only : SBX_TTYF_EITHER;
	for (const char *p = v; *p != '\0'; p++)
		if (strncasecmp(p, "utf", 3) == 0)
			return only >= 0 ? only : SBX_TTYF_UTF8;
	return SBX_TTYF_8BIT;
}

int sbx_tty_start(struct sbx_stdio *io, const bool tty[3], int *slave, char *err, size_t errlen)
{
	struct relay r;
	struct termios t;
	int first = tty[0] ? 0 : tty[1] ? 1 : 2;
	const char *step;

	memset(&r, 0, sizeof(r));
	r.rtt = -1;
	r.parent = getpid();
	r.in = tty[0] ? 0 : -1;
	r.out = tty[1] ? 1 : tty[2] ? 2 : 0; /* only stdin: the echo goes back to it */
	r.size_from = tty[1] ? 1 : first;
	sbx_ttyf_init(&r.filter, locale_cs(), false);
	*slave = -1;
	step = "open a pseudo-terminal (/dev/ptmx)";
	r.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (r.master < 0)
		goto fail;
	step = "unlock the pseudo-terminal";
	if (unlockpt(r.master) < 0)
		goto fail;
	step = "open the pseudo-terminal's slave";
	*slave = ioctl(r.master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		goto fail;
	/* The user's settings and window size: the command sees the
	 * terminal it was given. With no keys to relay the user's terminal
	 * keeps its own output processing, and the slave passes bytes as
	 * written. A run started in the background (`CMD &`) does not copy
	 * them: the shell's line editor has the terminal then, in its own
	 * mode (readline: -icanon -echo -icrnl), and the pty kept that after
	 * `fg` (the keys' CR never ended the command's line, nothing was
	 * echoed); the pty's defaults instead (cooked, echo, ICRNL). */
	if (tcgetattr(may_take(first) ? first : *slave, &t) == 0) {
		if (!tty[0])
			t.c_oflag &= ~(tcflag_t)OPOST;
		step = "give the pseudo-terminal the terminal's settings";
		if (tcsetattr(*slave, TCSANOW, &t) < 0)
			goto fail;
	}
	copy_winsize(r.size_from, r.master);
	step = "make the pseudo-terminal non-blocking";
	if (fcntl(r.master, F_SETFL, O_NONBLOCK) < 0)
		goto fail;
	step = "start the terminal's relay";
	io->relay = sbx_pump_fork();
	if (io->relay == 0)
		relay_main(&r);
	if (io->relay < 0)
		goto fail;
	/* The master is the relay's alone: the sandbox, cloned after us,
	 * never holds it. */
	(void)close(r.master);
	return 0;
fail:
	errbuf_set_errno(err, errlen, errno, "cannot %s for the command's terminal", step);
	if (r.master >= 0)
		(void)close(r.master);
	if (*slave >= 0)
		(void)close(*slave);
	*slave = -1;
	io->relay = -1;
	return -1;
}

/*
 * proc.h - child processes for integration tests and benchmarks.
 *
 * test_proc_start() runs a server-like child (pv-upstream, passavant proxy)
 * and waits for the one line on its stdout that says it is ready, e.g.
 * "listening on 127.0.0.1:41234". After that, a background thread keeps
 * draining the child's stdout into memory, so the child never blocks on a
 * full pipe; everything it printed stays readable with test_proc_stdout().
 * The child's stderr goes to a temporary file (test_proc_stderr()).
 *
 * Every function is safe to call from the CUnit thread; one test_proc must
 * not be used from two threads at once.
 */
#ifndef PASSAVANT_TEST_PROC_H
#define PASSAVANT_TEST_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct test_proc;

/*
 * Starts argv[0] (execvp) with argv; stdin is /dev/null, stdout a pipe read
 * by us, stderr a temporary file. Reads stdout until a line that starts with
 * ready_prefix (e.g. "listening on "), copies the rest of that line, without
 * the newline, into ready_rest (NUL-terminated, truncated to rest_len - 1;
 * ready_rest may be NULL when rest_len is 0).
 *
 * ready_prefix NULL means "do not wait": return as soon as the child runs.
 *
 * The child gets PR_SET_PDEATHSIG(SIGKILL): it dies when the calling
 * thread ends (so a crashed test run leaves no server behind). Start
 * children from a thread that lives as long as they should (the CUnit
 * thread).
 *
 * Returns NULL if the child cannot be started, exits, or does not print
 * the line within timeout_ms; in that case the child is killed and reaped,
 * and what it wrote to stdout and stderr is printed to our stderr, so the
 * failing test shows why.
 */
struct test_proc *test_proc_start(char *const argv[], const char *ready_prefix,
				  char *ready_rest, size_t rest_len, int timeout_ms);

/* The child's pid (it stays valid until test_proc_stop()/test_proc_free()). */
pid_t test_proc_pid(const struct test_proc *p);

/*
 * Sends sig (0: none, just wait) and waits up to timeout_ms for the child
 * to exit; past the timeout sends SIGKILL and waits for that. Returns the
 * exit status 0-255, 128+N if a signal N ended it, -1 on error. Calling it
 * again after the child was reaped returns the same status. Afterwards the
 * stdout drain has reached end of file: test_proc_stdout() is complete.
 */
int test_proc_stop(struct test_proc *p, int sig, int timeout_ms);

/*
 * Everything the child wrote to stdout so far (NUL-terminated; includes the
 * ready line). Returns a malloc'd copy the caller frees, NULL on ENOMEM.
 */
char *test_proc_stdout(struct test_proc *p);

/* Everything the child wrote to stderr so far: malloc'd, caller frees,
 * NULL on error. */
char *test_proc_stderr(struct test_proc *p);

/* Path of the stderr temporary file (valid until test_proc_free()). */
const char *test_proc_stderr_path(const struct test_proc *p);

/* Stops the child if it still runs (SIGKILL), joins the drain thread,
 * removes the stderr file, frees everything. NULL is a no-op. */
void test_proc_free(struct test_proc *p);

/* CLOCK_MONOTONIC in milliseconds. */
long long test_mono_ms(void);

/* One read(2) of at most cap - 1 bytes of a small file (a /proc entry) into
 * buf, NUL-terminated. Returns the length, or -1 if it cannot be opened,
 * read, or is empty. */
long test_read_small(const char *path, char *buf, size_t cap);

/*
 * Waits until no thread of the n processes in pids (entries <= 0 are
 * skipped) has run (CPU time in /proc/PID/task/TID/schedstat unchanged)
 * or waits to run, and the receive queue of fd (FIONREAD; fd < 0: not
 * looked at) has not changed, over three looks 10 ms apart; at most
 * cap_ms. That is the moment a fixed sleep used to wait for: the proxy has
 * done all it can (read what was sent, or filled its buffers against a
 * client that does not read). Returns 0 once quiet, -1 at cap_ms.
 */
int test_wait_quiet(const pid_t *pids, size_t n, int fd, int cap_ms);

/*
 * Splits "HOST:PORT" or "[V6]:PORT" into host (NUL-terminated, brackets
 * removed) and port (1-65535). Returns 0, or -1 if malformed or host does
 * not fit in hostlen.
 */
int test_parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);

/* The same "HOST:PORT" or "[V6]:PORT" as a socket address, HOST an IP
 * literal; port 0 ("any free port", for a listener) only when port0_ok.
 * Returns 0 (*ss and *len set), or -1 if malformed or not an IP literal. */
int test_parse_sockaddr(const char *s, bool port0_ok, struct sockaddr_storage *ss, socklen_t *len);

#endif

/*
 * pyscript.h - the Python helper scripts of the integration tests (TLS
 * clients, edge cases) share one prelude: their argument convention and a
 * CONNECT through the proxy.
 */
#ifndef PASSAVANT_TEST_PYSCRIPT_H
#define PASSAVANT_TEST_PYSCRIPT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Writes test_py_prelude then body (len bytes) to path. The prelude
 * imports socket, ssl and sys, reads `mode, proxy, target, cafile` from
 * argv[1:5], splits them into ph, pp (proxy) and th, tp (target; th is ""
 * when target has no ':'), and defines tunnel(first=b''): a TCP socket
 * (TCP_NODELAY) that sent "CONNECT target" with first appended in the same
 * write, read the proxy's head a byte at a time (nothing after it is
 * consumed) and asserted a 200, and read_all(t, also=()): t's bytes up
 * to end of file, a reset, an ssl.SSLEOFError or an exception in also.
 * It also imports fcntl, os, struct, termios and time, and defines
 * settle(s, cap): returns once no thread
 * of the processes in $PV_SETTLE_PIDS (space-separated pids, set with
 * test_py_settle_pids(); none: only the queue is watched) has run (CPU
 * time in schedstat unchanged) or waits to run, and s's receive queue
 * (FIONREAD) has not changed, over three looks 10 ms apart, or after cap
 * seconds (the same test as test_wait_quiet() in proc.h). That is the moment a fixed sleep used to
 * wait for: the proxy has read what was sent, or is backed up against a
 * client that does not read. Returns 0 or -1.
 */
int test_write_py(const char *path, const char *body, size_t len);

/*
 * Sets $PV_SETTLE_PIDS (read by settle() in the helpers) to the given
 * pids; pids <= 0 are left out. Returns 0 or -1 (setenv failed).
 */
int test_py_settle_pids(pid_t a, pid_t b, pid_t c);

/*
 * The Python interpreter to run the helpers with: /usr/bin/python3 (the
 * Debian package `make deps` installs) when it is executable, else
 * "python3" from PATH. A version manager's shim first on PATH (pyenv's is
 * a shell script) costs about a second per start on a busy machine; the
 * helpers need only the standard library. A static string.
 */
const char *test_python(void);

#endif

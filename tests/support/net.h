/*
 * net.h - raw TCP client helpers for tests that must put exact bytes on the
 * wire (smuggling cases, partial requests, pipelining), where curl would
 * normalise them.
 */
#ifndef PASSAVANT_TEST_NET_H
#define PASSAVANT_TEST_NET_H

#include <stdbool.h>
#include <stddef.h>

/* Connects to "HOST:PORT" or "[V6]:PORT" (IP literals only), waiting at
 * most timeout_ms; sets TCP_NODELAY. Returns a blocking fd, or -1 (reason
 * on stderr). */
int test_tcp_connect(const char *hostport, int timeout_ms);

/* Writes all len bytes (retrying on EINTR/short writes). Returns 0 or -1
 * (EPIPE included: SIGPIPE is ignored by the test runner). */
int test_send_all(int fd, const void *buf, size_t len);

/*
 * Reads until the bytes read so far contain stop (NULL: until end of
 * file), the peer closes, or timeout_ms passes in total. Returns what was
 * read as a malloc'd NUL-terminated buffer (NULL only on ENOMEM); *len (may
 * be NULL) gets its length, *eof (may be NULL) whether the peer closed.
 */
char *test_recv_until(int fd, const char *stop, int timeout_ms, size_t *len, bool *eof);

/*
 * For the bench's relays: a non-blocking listening socket on "IP:PORT" or
 * "[V6]:PORT" (port 0: any free one), SO_REUSEADDR, backlog 1024; prints
 * "listening on HOST:PORT" (the port bound) on stdout and flushes it.
 * Returns the fd, or -1 with "WHO: cannot listen on SPEC: reason" on
 * stderr.
 */
int test_listen(const char *spec, const char *who);

#endif

/*
 * upstream.h - starting the project's own upstream server (pv-upstream,
 * tests/tools/pv-upstream.c) from a CUnit test.
 *
 * pv-upstream endpoints (see the top of pv-upstream.c for details):
 *   /hello          200 "hello\n"
 *   /bytes/N        N bytes of a repeating pattern, Content-Length
 *   /chunked/N      the same bytes, Transfer-Encoding: chunked
 *   /echo           200, body = the raw request head + body as received
 *   /status/N       status N, short body
 *   /close          200 with Connection: close, then closes
 *   /headers?k=v&.. 200 with each k: v as a response header (percent-
 *                   decoded; framing headers not filtered, on purpose)
 *   /sink           reads a request body of any size, replies "N\n"
 *   /delay/MS       200 "delayed MS\n" after MS ms (at most 600000)
 *   /rawhex/HEX     the bytes HEX encodes, verbatim, as the whole response
 *                   (at most 32 KiB), then close: malformed responses
 *   /ws             WebSocket upgrade (101), then echoes frames unmodified
 *                   (/ws?x=HEX: first pushes one text frame of those bytes)
 *   /reflect/MODE?x=HEX or ?h=NAME
 *                   200 with "X-Reflect: VALUE" and body "reflect:VALUE\n";
 *                   VALUE = the bytes HEX encodes or the request's NAME
 *                   header value; MODE cl | chunked (one byte per chunk) |
 *                   close (close-delimited) | trailer (chunked, the value
 *                   also in trailer X-Reflect-Trailer); &drip=MS writes the
 *                   response one byte every MS ms (split across reads);
 *                   &pause=MS (cl, close) stops MS ms in the middle of the
 *                   value
 *   /repeat/MODE/COUNT?x=HEX
 *                   body = COUNT x (bytes of HEX + "\n"); MODE cl | chunked
 *                   (997-byte chunks)
 *   /git/...        git http-backend (only with --git-root)
 *   anything else   a file under --files DIR (a directory: its index.html,
 *                   else index.json), else 404
 * Every response carries X-Upstream-Conn: <connection number, from 1>.
 * --git-auth USER (with --git-root): /git/ needs Basic auth for USER, else
 * 401 with WWW-Authenticate: Basic (git then sends its URL's user:password).
 * --git-auth USER:PASSWORD: the password must match too. http-backend gets
 * REMOTE_USER=USER, so pushes are accepted.
 * --record FILE appends each request as received on the wire, preceded by
 * a line "=== conn N req M ===\n".
 *
 * The pattern byte at offset i of /bytes and /chunked bodies is
 * test_upstream_pattern(i).
 */
#ifndef PASSAVANT_TEST_UPSTREAM_H
#define PASSAVANT_TEST_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "tests/support/proc.h"

/* Byte i of the /bytes/N and /chunked/N bodies: "0123456789abcdef..."
 * (the 62 characters 0-9a-zA-Z followed by '\n', repeating every 63). */
char test_upstream_pattern(uint64_t i);

struct test_upstream {
	struct test_proc *proc;
	char host[64];  /* "127.0.0.1" */
	uint16_t port;
	char addr[80];  /* "127.0.0.1:PORT" */
	char url[96];   /* "http://127.0.0.1:PORT" or "https://..." (no slash) */
};

/* Options; zero-initialise and set what you need. */
struct test_upstream_opts {
	const char *tls_certdir; /* NULL: plain HTTP; else dir of test_certs_make() */
	const char *cert_name;   /* with tls: "server" (default) or "bad" */
	const char *record_path; /* NULL: no --record */
	const char *git_root;    /* NULL: no --git-root */
	const char *git_auth;    /* with git_root: --git-auth USER or USER:PASSWORD (else 401) */
	const char *files_root;  /* NULL: no --files; else static files served from it */
};

/*
 * Starts $PASSAVANT_TOOLS/pv-upstream on 127.0.0.1:0 and fills u. Returns 0,
 * or -1 (the reason and the child's stderr are printed).
 */
int test_upstream_start(struct test_upstream *u, const struct test_upstream_opts *o);

/* SIGTERM, waits (5 s, then SIGKILL), frees. Returns the exit status
 * (0 on a clean stop). Safe on a zeroed or already stopped struct. */
int test_upstream_stop(struct test_upstream *u);

/*
 * Creates ROOT/NAME.git, a bare repository for --git-root, with one commit
 * on branch main (its HEAD) holding hello.txt ("hello from git\n") and, when
 * big_bytes > 0, big.bin of that many pseudo-random (incompressible)
 * bytes, so a clone moves a pack of about that size. ROOT must exist.
 * Uses the git CLI. Returns 0, or -1 with the reason on stderr.
 */
int test_git_fixture(const char *root, const char *name, size_t big_bytes);

/* Writes "/rawhex/<hex of bytes>" into path (cap bytes). Returns 0, or -1
 * if it does not fit. */
int test_upstream_rawhex_path(char *path, size_t cap, const void *bytes, size_t len);

/* u's URL followed by path, in one of 4 static buffers used in turn (so
 * up to 4 can be arguments of one call). */
char *test_upstream_url(const struct test_upstream *u, const char *path);

/* "$PASSAVANT_TOOLS/<name>" in a static buffer (overwritten on each call). */
const char *test_tool_path(const char *name);

#endif

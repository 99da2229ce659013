/*
 * pxproc.h - one running `passavant proxy` for integration tests, and the
 * curl and session-file helpers the suites share around it.
 */
#ifndef PASSAVANT_TEST_PXPROC_H
#define PASSAVANT_TEST_PXPROC_H

#include <stdbool.h>
#include <stddef.h>

struct test_proc;

/* An argv prefix: `env` without the variables that would otherwise decide
 * what a client trusts or which proxy it uses. */
#define TEST_ENV_CLEAN "env", "-u", "SSL_CERT_FILE", "-u", "SSL_CERT_DIR", "-u", "CURL_CA_BUNDLE", \
		       "-u", "REQUESTS_CA_BUNDLE", "-u", "GIT_SSL_CAINFO", "-u", "HTTPS_PROXY",       \
		       "-u", "https_proxy", "-u", "HTTP_PROXY", "-u", "http_proxy", "-u", "ALL_PROXY", \
		       "-u", "all_proxy", "-u", "NO_PROXY", "-u", "no_proxy"

/* One running `passavant proxy`; the paths are filled by test_px_start(). */
struct test_px {
	struct test_proc *proc;
	char addr[80];      /* 127.0.0.1:PORT */
	char url[96];       /* http://127.0.0.1:PORT */
	char policy[4096];  /* policy file */
	char session[4096]; /* session directory */
	char audit[4096];   /* audit file */
	char trust[4200];   /* <session>/trust.pem */
	char ca[4200];      /* <session>/ca.pem */
};

/*
 * Writes yaml to DIR/policy-N.yaml (N counts the starts of this process)
 * and runs `[WRAP...] passavant proxy -p POLICY --listen 127.0.0.1:0
 * --session-dir DIR/session-N --audit DIR/audit-N.jsonl`, waiting at most
 * 10 s for its "listening on " line. wrap (NULL-terminated, may be NULL)
 * goes before the binary (e.g. "env", "NAME=VALUE"). Clears *p first.
 * Returns 0 or -1.
 */
int test_px_start(struct test_px *p, const char *dir, char *const *wrap, const char *yaml);

/* test_px_start() without a wrapper, on a printf-formatted policy. */
int test_px_startf(struct test_px *p, const char *dir, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* SIGTERM (5 s), the proxy's stderr on our stderr unless it exited 0, then
 * frees p->proc. Returns the exit status (0: clean stop), -1 if not running. */
int test_px_stop(struct test_px *p);

/* Writes yaml as p's policy and sends SIGHUP; waits (at most 10 s) for
 * one more "SIGHUP: reloaded the network policy" line than before on its
 * stderr, which a proxy prints with -v. Returns 0, or -1 when it did not
 * come. */
int test_px_reload(struct test_px *p, const char *yaml);

/*
 * Copies the VALUE of the line `export NAME='VALUE'` in env (NULL: none)
 * into out (cap bytes). false if there is no such line or it does not fit.
 */
bool test_env_export(const char *env, const char *name, char *out, size_t cap);

/* curl -sS --max-time 20 followed by the arguments up to a NULL (at most
 * 24); returns the exit status, the stdout in *out (caller frees), and
 * prints curl's stderr when it fails. */
int test_curl(char **out, ...) __attribute__((sentinel));

/*
 * Starts argv, a server that prints "listening on HOST:PORT" (e.g.
 * tests/tools/pv-h2-upstream.py), waiting at most timeout_ms for that
 * line; its PORT into *port. NULL when it does not start or names no
 * port (said on stderr after "who: "); the child is then gone.
 */
struct test_proc *test_listener_start(char *const argv[], const char *who, unsigned *port, int timeout_ms);

/* SIGTERM (5 s), frees *p and sets it to NULL; nothing when *p is NULL. */
void test_listener_stop(struct test_proc **p);

/*
 * The policy the HTTPS suites on loopback start from, into out (cap
 * bytes): 127.0.0.1 the only domain allowed, TLS terminated trusting
 * CERTDIR/ca.pem, the environment variable name masked and injected into
 * 127.0.0.1 (inject_in NULL: in its default places; else the list inside
 * "injectIn: [...]"), then tail (NULL: nothing) as it is. Returns 0, or
 * -1 (said on stderr) when it does not fit.
 */
int test_policy_loopback_mask(char *out, size_t cap, const char *certdir, const char *name, const char *inject_in,
			      const char *tail);

#endif

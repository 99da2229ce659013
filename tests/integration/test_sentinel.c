/*
 * test_sentinel.c - stable sentinels end to end (SPEC §4.1, issue 15
 * item 4) with the real `passavant run`, HOME and XDG_STATE_HOME in a
 * temporary tree, against the project's HTTPS upstream (pv-upstream
 * --tls --record). Suite "sentinel".
 *
 *  - two sessions with the same real value see the same sentinel inside;
 *    a changed value gives a new one; the old one sent in a header (and
 *    in git's Authorization: Basic) to the inject host is refused 403
 *    with "stale" in the reason and passavant's stderr line, and the
 *    upstream receives nothing; the current one is still injected;
 *  - `sentinels: per-session` gives a different one each run;
 *  - inside, the key and the ledger cannot be read (cat fails), under
 *    $XDG_STATE_HOME and under ~/.local/state;
 *  - the real values and the key bytes (hex) appear in no stderr, stdout
 *    or audit line;
 *  - a key open to others: no session (exit 125), a message saying why.
 *
 * Without user namespaces every test is skipped with the reason printed,
 * unless PASSAVANT_SANDBOX_MUST_WORK=1. The tree lives under /var/tmp:
 * the sandbox's /tmp is private.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mask/mask.h"
#include "tests/support/certs.h"
#include "tests/support/pxproc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"
#include "tests/support/upstream.h"

#define ST_TIMEOUT_MS 60000
#define VIA_PROXY "NO_PROXY= no_proxy= "
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool skip, ready;
static char *root;
static struct test_upstream up;
static char p_home[PATH_MAX], p_work[PATH_MAX], p_state[PATH_MAX], p_stable[PATH_MAX];
static char p_persess[PATH_MAX], p_record[PATH_MAX], p_certs[PATH_MAX], p_audit[PATH_MAX];
static char v1[41], v2[41]; /* two real values of GH_TOKEN */
static unsigned nscript;

static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

static int write_policy(const char *path, const char *mode)
{
	char text[4 * PATH_MAX], tail[3 * PATH_MAX];

	snprintf(tail, sizeof(tail),
		 "  sentinels: %s\n"
		 "filesystem:\n"
		 "  allowWrite: [\"%s\"]\n"
		 "audit:\n"
		 "  path: %s\n",
		 mode, p_work, p_audit);
	if (test_policy_loopback_mask(text, sizeof(text), p_certs, "GH_TOKEN", NULL, tail) < 0)
		return -1;
	return test_write_file_mode(path, text, 0644);
}

static int suite_init(void)
{
	static const char *const names[] = {"127.0.0.1", "localhost", NULL};
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	struct test_upstream_opts o;
	char why[256], buf[PATH_MAX];

	if (ready || skip)
		return 0;
	if (!test_userns_available(why, sizeof(why))) {
		if (must != NULL && strcmp(must, "1") == 0) {
			fprintf(stderr, "sentinel: namespaces unavailable (%s) and "
					"PASSAVANT_SANDBOX_MUST_WORK=1\n", why);
			return -1;
		}
		fprintf(stderr, "sentinel: SKIP: user namespaces unavailable: %s\n", why);
		skip = true;
		return 0;
	}
	root = strdup("/var/tmp/pv-sent.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	at(p_home, "home");
	at(p_work, "work");
	at(p_state, "state");
	at(p_stable, "stable.yaml");
	at(p_persess, "persession.yaml");
	at(p_record, "record.txt");
	at(p_certs, "certs");
	at(p_audit, "audit.jsonl");
	if (mkdir(p_home, 0755) < 0 || mkdir(p_work, 0755) < 0 || mkdir(at(buf, "scripts"), 0755) < 0 ||
	    mkdir(p_certs, 0755) < 0)
		return -1;
	if (test_random_alnum(v1 + 4, 36) < 0 || test_random_alnum(v2 + 4, 36) < 0)
		return -1;
	memcpy(v1, "ghp_", 4);
	memcpy(v2, "ghp_", 4);
	if (test_certs_make(p_certs, names) < 0 || write_policy(p_stable, "stable") < 0 ||
	    write_policy(p_persess, "per-session") < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.tls_certdir = p_certs;
	o.record_path = p_record;
	if (test_upstream_start(&up, &o) < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	if (ready)
		(void)test_upstream_stop(&up);
	if (root != NULL) {
		test_rmtree(root);
		free(root);
		root = NULL;
	}
	ready = false;
	return 0;
}

/*
 * Runs `passavant run -p policy -- sh SCRIPT` in the work directory with
 * the test HOME, GH_TOKEN = value and XDG_STATE_HOME = p_state (state
 * false: unset, so the key lives under ~/.local/state). Returns the exit
 * status; *out and *err get what was printed.
 */
static int run_sh(const char *policy, const char *value, bool state, char **out, char **err,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int run_sh(const char *policy, const char *value, bool state, char **out, char **err,
		  const char *fmt, ...)
{
	char home[PATH_MAX + 8], tok[64], xdg[PATH_MAX + 32], path[PATH_MAX], script[8192], *argv[20];
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/scripts/%u.sh", root, nscript++);
	if (test_write_file_mode(path, script, 0644) < 0)
		return -1;
	snprintf(home, sizeof(home), "HOME=%s", p_home);
	snprintf(tok, sizeof(tok), "GH_TOKEN=%s", value);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s", p_state);
	argv[n++] = "env";
	if (!state) {
		argv[n++] = "-u";
		argv[n++] = "XDG_STATE_HOME";
	}
	argv[n++] = "-C";
	argv[n++] = p_work;
	argv[n++] = home;
	argv[n++] = "PATH=" SAFE_PATH;
	argv[n++] = tok;
	if (state)
		argv[n++] = xdg;
	argv[n++] = "TMPDIR=/tmp";
	argv[n++] = (char *)test_passavant_bin();
	argv[n++] = "run";
	argv[n++] = "-p";
	argv[n++] = (char *)policy;
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = path;
	argv[n] = NULL;
	return test_run_capture(argv, out, err, ST_TIMEOUT_MS);
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

/* The sentinel the sandbox printed as "TOK=..." (static copy; "" if none). */
static const char *tok_of(const char *out)
{
	static char val[4][64];
	static unsigned k;
	const char *p = out != NULL ? strstr(out, "TOK=") : NULL;
	char *v = val[k++ % 4];
	size_t n = 0;

	v[0] = '\0';
	if (p == NULL)
		return v;
	p += 4;
	while (p[n] != '\0' && p[n] != '\n' && n < 63)
		n++;
	memcpy(v, p, n);
	v[n] = '\0';
	return v;
}

/* One session printing its sentinel; returns it ("" on failure). */
static const char *session_tok(const char *policy, const char *value)
{
	char *out = NULL, *err = NULL;
	const char *t;
	int st = run_sh(policy, value, true, &out, &err, "echo \"TOK=$GH_TOKEN\"\n");

	ROW(st == 0, "status %d: %s", st, err != NULL ? err : "");
	t = tok_of(out);
	ROW(!test_has(out, value) && !test_has(err, value), "a real value reached the sandbox or stderr");
	free(out);
	free(err);
	return t;
}

/* The real values and the key bytes (hex) in none of the texts given. */
static void no_secret_in(const char *what, const char *text)
{
	char path[PATH_MAX + 32], hex[2 * MASK_KEY_BYTES + 1];
	size_t len = 0;
	char *key;

	if (text == NULL)
		return;
	ROW(!test_has(text, v1) && !test_has(text, v2), "a real value in %s", what);
	snprintf(path, sizeof(path), "%s/passavant/sentinel.key", p_state);
	key = test_read_file(path, &len);
	if (key != NULL && len == MASK_KEY_BYTES) {
		for (size_t i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", (unsigned char)key[i]);
		ROW(!test_has(text, hex), "the key (hex) in %s", what);
	}
	free(key);
}

static void test_same_across_sessions(void)
{
	const char *a, *b;
	char s1[64];
	struct stat st;
	char path[PATH_MAX + 32];

	SKIP_IF_NEEDED();
	a = session_tok(p_stable, v1);
	snprintf(s1, sizeof(s1), "%s", a);
	b = session_tok(p_stable, v1);
	ROW(strlen(s1) == strlen(v1) && strncmp(s1, "ghp_", 4) == 0 && strcmp(s1, v1) != 0,
	    "the sentinel has the value's shape and is not the value");
	ROW(strcmp(s1, b) == 0, "two sessions, one value: the same sentinel");
	/* The key: created on first use, 0600 in a 0700 directory. */
	snprintf(path, sizeof(path), "%s/passavant/sentinel.key", p_state);
	ROW(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == MASK_KEY_BYTES,
	    "the key file is 32 bytes, mode 0600");
	snprintf(path, sizeof(path), "%s/passavant", p_state);
	ROW(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700, "the state directory is 0700");
}

static void test_changed_value_and_stale(void)
{
	char s1[64], s2[64], up_basic[128], enc[192], *out = NULL, *err = NULL, *rec;
	size_t mark;
	int st;

	SKIP_IF_NEEDED();
	snprintf(s1, sizeof(s1), "%s", session_tok(p_stable, v1));
	snprintf(s2, sizeof(s2), "%s", session_tok(p_stable, v2));
	ROW(s1[0] != '\0' && s2[0] != '\0' && strcmp(s1, s2) != 0,
	    "a changed value gives a new sentinel");
	/* The old sentinel in a header to the inject host: refused. */
	mark = test_file_size(p_record);
	st = run_sh(p_stable, v2, true, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 -o /dev/null -w 'code=%%{http_code}\\n' "
			      "-H 'X-Token: %s' %s/stale-hdr\n",
		    s1, up.url);
	ROW(st == 0 && test_has(out, "code=403"), "the stale sentinel is refused with 403: %s",
	    out != NULL ? out : "");
	ROW(test_has(err, "stale sentinel of credential GH_TOKEN") && test_has(err, "$GH_TOKEN"),
	    "stderr says it is stale and where to update it: %s", err != NULL ? err : "");
	rec = test_file_since(p_record, mark);
	ROW(!test_has(rec, "stale-hdr"), "the upstream received the refused request");
	free(rec);
	no_secret_in("stderr", err);
	no_secret_in("stdout", out);
	free(out);
	free(err);
	/* In git's user:password (a remote URL saved in session 1). */
	snprintf(up_basic, sizeof(up_basic), "x-access-token:%s", s1);
	test_b64(up_basic, strlen(up_basic), enc);
	mark = test_file_size(p_record);
	st = run_sh(p_stable, v2, true, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 -o body.txt -w 'code=%%{http_code}\\n' "
			      "-H 'Authorization: Basic %s' %s/stale-basic\ncat body.txt; echo\n",
		    enc, up.url);
	ROW(test_has(out, "code=403") && test_has(out, "stale"), "Basic: 403 with \"stale\" in the reason: %s",
	    out != NULL ? out : "");
	rec = test_file_since(p_record, mark);
	ROW(!test_has(rec, "stale-basic"), "the upstream received the refused request");
	free(rec);
	free(out);
	free(err);
	/* The current sentinel is still injected. */
	mark = test_file_size(p_record);
	st = run_sh(p_stable, v2, true, &out, &err,
		    VIA_PROXY "curl -sS --max-time 20 -o /dev/null -w 'code=%%{http_code}\\n' "
			      "-H \"X-Token: $GH_TOKEN\" %s/echo\n",
		    up.url);
	rec = test_file_since(p_record, mark);
	ROW(test_has(out, "code=200") && test_has(rec, v2), "the current sentinel is injected: %s",
	    out != NULL ? out : "");
	free(rec);
	free(out);
	free(err);
	/* The audit log: never a real value or the key. */
	rec = test_read_file(p_audit, NULL);
	ROW(test_has(rec, "stale sentinel"), "the audit line names the stale sentinel");
	no_secret_in("the audit log", rec);
	free(rec);
}

static void test_per_session(void)
{
	char a[64], b[64], s[64];

	SKIP_IF_NEEDED();
	snprintf(s, sizeof(s), "%s", session_tok(p_stable, v1));
	snprintf(a, sizeof(a), "%s", session_tok(p_persess, v1));
	snprintf(b, sizeof(b), "%s", session_tok(p_persess, v1));
	ROW(a[0] != '\0' && strcmp(a, b) != 0, "per-session: a new sentinel each run");
	ROW(strcmp(a, s) != 0 && strcmp(b, s) != 0, "per-session: not the stable sentinel");
	ROW(strncmp(a, "ghp_", 4) == 0 && strlen(a) == strlen(v1), "per-session: the value's shape");
}

static void test_key_unreadable(void)
{
	char *out = NULL, *err = NULL, path[PATH_MAX + 64];
	struct stat st;
	int rc;

	SKIP_IF_NEEDED();
	rc = run_sh(p_stable, v1, true, &out, &err,
		    "cat \"$XDG_STATE_HOME/passavant/sentinel.key\" >/dev/null 2>&1; echo key=$?\n"
		    "cat \"$XDG_STATE_HOME/passavant/sentinels\" >/dev/null 2>&1; echo ledger=$?\n"
		    "echo x > \"$XDG_STATE_HOME/passavant/sentinel.key\" 2>/dev/null; echo wkey=$?\n");
	ROW(rc == 0 && test_has(out, "key=") && !test_has(out, "key=0\n") && !test_has(out, "ledger=0\n") &&
		    !test_has(out, "wkey=0\n"),
	    "the key and ledger under $XDG_STATE_HOME are unreadable and unwritable: %s",
	    out != NULL ? out : "");
	free(out);
	free(err);
	/* XDG_STATE_HOME unset: ~/.local/state/passavant, created and hidden. */
	rc = run_sh(p_stable, v1, false, &out, &err,
		    "cat \"$HOME/.local/state/passavant/sentinel.key\" >/dev/null 2>&1; echo key=$?\n"
		    "cat \"$HOME/.local/state/passavant/sentinels\" >/dev/null 2>&1; echo ledger=$?\n"
		    "echo \"TOK=$GH_TOKEN\"\n");
	ROW(rc == 0 && test_has(out, "key=") && !test_has(out, "key=0\n") && !test_has(out, "ledger=0\n"),
	    "the key and ledger under ~/.local/state are unreadable: %s", out != NULL ? out : "");
	snprintf(path, sizeof(path), "%s/.local/state/passavant/sentinel.key", p_home);
	ROW(stat(path, &st) == 0 && st.st_size == MASK_KEY_BYTES, "the key is under ~/.local/state");
	ROW(tok_of(out)[0] != '\0', "a sentinel from that key");
	free(out);
	free(err);
}

/* A key open to others: no session, a message that says what to do. */
static void test_bad_key_no_session(void)
{
	char *out = NULL, *err = NULL, path[PATH_MAX + 32];
	int rc;

	SKIP_IF_NEEDED();
	(void)session_tok(p_stable, v1); /* the key exists */
	snprintf(path, sizeof(path), "%s/passavant/sentinel.key", p_state);
	CU_ASSERT_FATAL(chmod(path, 0644) == 0);
	rc = run_sh(p_stable, v1, true, &out, &err, "echo ran\n");
	ROW(rc == 125 && !test_has(out, "ran"), "a key open to others: exit 125, nothing run (got %d)", rc);
	ROW(test_has(err, "sentinel key") && test_has(err, "mode 644") && test_has(err, "per-session"),
	    "the message names the key, its mode and the way out: %s", err != NULL ? err : "");
	no_secret_in("stderr", err);
	CU_ASSERT(chmod(path, 0600) == 0);
	free(out);
	free(err);
}

TEST_REGISTRAR(register_sentinel)
{
	CU_pSuite s = test_suite("sentinel", suite_init, suite_cleanup);

	test_add(s, "two sessions, one value: the same sentinel; the key 0600", test_same_across_sessions);
	test_add(s, "a changed value: new sentinel, the old one refused as stale", test_changed_value_and_stale);
	test_add(s, "sentinels: per-session: a new one each run", test_per_session);
	test_add(s, "the sandbox cannot read the key or the ledger", test_key_unreadable);
	test_add(s, "a key open to others: no session", test_bad_key_no_session);
}

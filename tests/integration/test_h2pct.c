/*
 * test_h2pct.c - round 46 (review46p of attack46p): over HTTP/2, the
 * sentinel of a value holding a %XX escape in a percent form of :path
 * whose '%' stands raw (the value's '/' escaped as %2F) is refused; with
 * its '%' as %25 it is swapped. HTTP/2 shares HTTP/1.1's head substituter
 * (mask/exchange.c head_target(), url_raw_form()); this suite proves it
 * on the wire, where attack46p left a script.
 *
 * Suite "h2pct". One proxy (a PV_HASH whose value holds %4A and a '/',
 * masked and injected into 127.0.0.1 in the query), the upstream
 * tests/tools/pv-h2-upstream.py (records every request head), the client
 * tests/tools/pv-h2-client.py. The tree lives under /var/tmp.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/certs.h"
#include "tests/support/proc.h"
#include "tests/support/pxproc.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define PY "/usr/bin/python3"

static bool ready;
static char *root;
static char p_certs[PATH_MAX], p_client[PATH_MAX], p_up[PATH_MAX], p_rec[PATH_MAX];
static struct test_proc *up;
static unsigned upport;
static struct test_px px;
static char val[64], sent[64];

static int fixtures_up(void)
{
	static const char *const names[] = {"127.0.0.1", NULL};
	char src[PATH_MAX], policy[2 * PATH_MAX], cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char envv[96], a[17], b[17], c[7], path[4200];
	char *wrap[] = {"env", envv, NULL};
	char *argv[] = {TEST_ENV_CLEAN, PY, p_up, "--cert", cert, "--key", key, "--record", p_rec, NULL};
	char *env;
	bool got;

	root = strdup("/var/tmp/pv-h2pct.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0)
		return -1;
	snprintf(p_certs, sizeof(p_certs), "%s/certs", root);
	snprintf(p_client, sizeof(p_client), "%s/pv-h2-client.py", root);
	snprintf(p_up, sizeof(p_up), "%s/pv-h2-upstream.py", root);
	snprintf(p_rec, sizeof(p_rec), "%s/rec.txt", root);
	if (mkdir(p_certs, 0755) < 0 || test_certs_make(p_certs, names) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/tests/tools/pv-h2-client.py", test_srcdir());
	if (test_copy_file(src, p_client, 0755) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/tests/tools/pv-h2-upstream.py", test_srcdir());
	if (test_copy_file(src, p_up, 0755) < 0)
		return -1;
	snprintf(cert, sizeof(cert), "%s/server.pem", p_certs);
	snprintf(key, sizeof(key), "%s/server.key", p_certs);
	if ((up = test_listener_start(argv, "h2pct", &upport, 20000)) == NULL)
		return -1;
	if (test_random_alnum(a, 16) < 0 || test_random_alnum(b, 16) < 0 || test_random_alnum(c, 6) < 0)
		return -1;
	snprintf(val, sizeof(val), "hq_%s%%4A%s/%s", a, b, c);
	snprintf(envv, sizeof(envv), "PV_HASH=%s", val);
	if (test_policy_loopback_mask(policy, sizeof(policy), p_certs, "PV_HASH", "header, query", NULL) < 0 ||
	    test_px_start(&px, root, wrap, policy) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/env", px.session);
	env = test_read_file(path, NULL);
	got = env != NULL && test_env_export(env, "PV_HASH", sent, sizeof(sent));
	free(env);
	explicit_bzero(envv, sizeof(envv));
	if (!got || strlen(sent) != strlen(val) || strchr(sent, '%') == NULL || strchr(sent, '/') == NULL) {
		fprintf(stderr, "h2pct: no PV_HASH sentinel with its '%%' and '/' in %s\n", path);
		return -1;
	}
	return 0;
}

static int suite_cleanup(void)
{
	int bad = 0;

	if (px.proc != NULL)
		bad |= test_px_stop(&px) != 0;
	test_listener_stop(&up);
	if (root != NULL)
		test_rmtree(root);
	free(root);
	root = NULL;
	explicit_bzero(val, sizeof(val));
	ready = false;
	return bad ? -1 : 0;
}

static int suite_init(void)
{
	return test_suite_fixtures(&ready, "h2pct", fixtures_up, suite_cleanup);
}

/* GET path over h2 through the proxy; the client's stdout in *out. */
static int h2get(const char *path, char **out)
{
	char target[64], spec[512];
	char *argv[] = {TEST_ENV_CLEAN, PY, p_client, "--proxy", px.addr, "--target", target, "--cafile",
			px.trust, "--timeout", "20", "req", spec, NULL};

	snprintf(target, sizeof(target), "127.0.0.1:%u", upport);
	snprintf(spec, sizeof(spec), "{\"method\":\"GET\",\"path\":\"%s\",\"end\":true}", path);
	*out = NULL;
	return test_run_capture(argv, out, NULL, 60000);
}

/* s with its '/' as slash and, pct, its '%' as %25, into out. */
static void form_of(const char *s, const char *slash, bool pct, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s != '\0' && n + 4 < cap; s++)
		n += (size_t)snprintf(out + n, cap - n, "%s",
				      *s == '/' ? slash : (*s == '%' && pct) ? "%25" : (char[2]){*s, '\0'});
}

/*
 * Rows: '/' as %2F and as %2f with the '%' raw, and the sentinel as it
 * is: 403, nothing reaches the upstream. Then the '%' as %25 (the '/'
 * escaped or not): swapped, the upstream gets the real value with its
 * '%' as %25. Before attack46p's fix (627b13e) the first two rows went
 * up with the real value's %4A raw.
 */
static void test_h2_pct_mix(void)
{
	static const char *const slash[] = {"%2F", "%2f", "/"};
	char form[192], want[192], path[256], *out = NULL, *rec;
	size_t mark;

	CU_ASSERT_FATAL(ready);
	for (int row = 0; row < 3; row++) {
		form_of(sent, slash[row], false, form, sizeof(form));
		snprintf(path, sizeof(path), "/echo?k=%s&z=%d", form, row);
		mark = test_file_size(p_rec);
		(void)h2get(path, &out);
		ROW(test_hasf(out, "status 403"), "row %d: %s with its '%%' raw over h2 was not refused: %.600s", row,
		    form, test_nz(out));
		free(out);
		out = NULL;
		rec = test_file_since(p_rec, mark);
		ROW(rec == NULL || strstr(rec, "/echo?k=") == NULL, "row %d: the target went up: %.400s", row,
		    test_nz(rec));
		free(rec);
	}
	for (int row = 0; row < 2; row++) {
		form_of(sent, slash[row * 2], true, form, sizeof(form));
		form_of(val, slash[row * 2], true, want, sizeof(want));
		snprintf(path, sizeof(path), "/echo?k=%s&z=%d", form, 10 + row);
		mark = test_file_size(p_rec);
		(void)h2get(path, &out);
		ROW(test_hasf(out, "status 200"), "row %d: its '%%' as %%25 over h2 was not passed: %.600s", 10 + row,
		    test_nz(out));
		free(out);
		out = NULL;
		rec = test_file_since(p_rec, mark);
		ROW(rec != NULL && strstr(rec, want) != NULL,
		    "row %d: the real value did not go up with its '%%' as %%25: %.400s", 10 + row, test_nz(rec));
		free(rec);
		explicit_bzero(want, sizeof(want));
	}
}

TEST_REGISTRAR(h2pct_suite)
{
	CU_pSuite s = test_suite("h2pct", suite_init, suite_cleanup);

	test_add(s, "h2: a sentinel whose value holds %XX, its '%' raw in a percent form of :path: refused; as %25: swapped",
		 test_h2_pct_mix);
}

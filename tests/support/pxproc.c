/*
 * pxproc.c - one running `passavant proxy` for integration tests (pxproc.h).
 */
#include "tests/support/pxproc.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/proc.h"
#include "tests/support/testlib.h"

int test_px_start(struct test_px *p, const char *dir, char *const *wrap, const char *yaml)
{
	static int n;
	char *argv[32];
	int i = 0;

	memset(p, 0, sizeof(*p));
	n++;
	snprintf(p->policy, sizeof(p->policy), "%s/policy-%d.yaml", dir, n);
	snprintf(p->session, sizeof(p->session), "%s/session-%d", dir, n);
	snprintf(p->audit, sizeof(p->audit), "%s/audit-%d.jsonl", dir, n);
	snprintf(p->trust, sizeof(p->trust), "%s/trust.pem", p->session);
	snprintf(p->ca, sizeof(p->ca), "%s/ca.pem", p->session);
	if (test_write_file(p->policy, yaml, strlen(yaml)) < 0)
		return -1;
	for (size_t k = 0; wrap != NULL && wrap[k] != NULL && i < 20; k++)
		argv[i++] = wrap[k];
	argv[i++] = (char *)test_passavant_bin();
	argv[i++] = "proxy";
	argv[i++] = "-p";
	argv[i++] = p->policy;
	argv[i++] = "--listen";
	argv[i++] = "127.0.0.1:0";
	argv[i++] = "--session-dir";
	argv[i++] = p->session;
	argv[i++] = "--audit";
	argv[i++] = p->audit;
	argv[i] = NULL;
	p->proc = test_proc_start(argv, "listening on ", p->addr, sizeof(p->addr), 10000);
	if (p->proc == NULL)
		return -1;
	snprintf(p->url, sizeof(p->url), "http://%s", p->addr);
	return 0;
}

int test_px_startf(struct test_px *p, const char *dir, const char *fmt, ...)
{
	char yaml[8192];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(yaml, sizeof(yaml), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(yaml)) {
		fprintf(stderr, "test_px_startf: the policy does not fit in %zu bytes\n", sizeof(yaml));
		return -1;
	}
	return test_px_start(p, dir, NULL, yaml);
}

int test_px_stop(struct test_px *p)
{
	int st;

	if (p->proc == NULL)
		return -1;
	st = test_proc_stop(p->proc, SIGTERM, 5000);
	if (st != 0) {
		char *err = test_proc_stderr(p->proc);

		fprintf(stderr, "proxy exited %d; stderr:\n%s\n", st, err ? err : "");
		free(err);
	}
	test_proc_free(p->proc);
	p->proc = NULL;
	return st;
}

/* How many times err says the policy was reloaded. */
static int reloads(const char *err)
{
	int n = 0;

	while (err != NULL && (err = strstr(err, "SIGHUP: reloaded the network policy")) != NULL) {
		n++;
		err++;
	}
	return n;
}

int test_px_reload(struct test_px *p, const char *yaml)
{
	char *err = test_proc_stderr(p->proc);
	int before = reloads(err);

	free(err);
	if (test_write_file(p->policy, yaml, strlen(yaml)) < 0 || kill(test_proc_pid(p->proc), SIGHUP) < 0)
		return -1;
	for (long long deadline = test_mono_ms() + 10000; test_mono_ms() < deadline; usleep(20000)) {
		int now;

		err = test_proc_stderr(p->proc);
		now = reloads(err);
		free(err);
		if (now > before)
			return 0;
	}
	return -1;
}

bool test_env_export(const char *env, const char *name, char *out, size_t cap)
{
	char key[128];
	const char *p, *q;

	snprintf(key, sizeof(key), "export %s='", name);
	p = env != NULL ? strstr(env, key) : NULL;
	if (p == NULL)
		return false;
	p += strlen(key);
	q = strchr(p, '\'');
	if (q == NULL || (size_t)(q - p) >= cap)
		return false;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return true;
}

int test_curl(char **out, ...)
{
	char *argv[32];
	char *err = NULL, *a;
	int n = 0, rc;
	va_list ap;

	argv[n++] = "curl";
	argv[n++] = "-sS";
	argv[n++] = "--max-time";
	argv[n++] = "20";
	va_start(ap, out);
	while ((a = va_arg(ap, char *)) != NULL && n < 28)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	rc = test_run_capture(argv, out, &err, 30000);
	if (rc != 0)
		fprintf(stderr, "curl exited %d: %s\n", rc, err ? err : "");
	free(err);
	return rc;
}

struct test_proc *test_listener_start(char *const argv[], const char *who, unsigned *port, int timeout_ms)
{
	char rest[128];
	struct test_proc *p;
	const char *colon;

	*port = 0;
	if ((p = test_proc_start(argv, "listening on ", rest, sizeof(rest), timeout_ms)) == NULL)
		return NULL;
	colon = strrchr(rest, ':');
	*port = colon != NULL ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
	if (*port == 0) {
		fprintf(stderr, "%s: the upstream said 'listening on %s': no port\n", who, rest);
		test_proc_free(p);
		return NULL;
	}
	return p;
}

void test_listener_stop(struct test_proc **p)
{
	if (*p == NULL)
		return;
	(void)test_proc_stop(*p, SIGTERM, 5000);
	test_proc_free(*p);
	*p = NULL;
}

int test_policy_loopback_mask(char *out, size_t cap, const char *certdir, const char *name, const char *inject_in,
			      const char *tail)
{
	int n = snprintf(out, cap,
			 "network:\n"
			 "  allowedDomains: [\"127.0.0.1\"]\n"
			 "  tlsTerminate:\n"
			 "    extraCaCertPaths: [\"%s/ca.pem\"]\n"
			 "credentials:\n"
			 "  envVars:\n"
			 "    - {name: %s, mode: mask, injectHosts: [\"127.0.0.1\"]%s%s%s}\n"
			 "%s",
			 certdir, name, inject_in != NULL ? ", injectIn: [" : "", inject_in != NULL ? inject_in : "",
			 inject_in != NULL ? "]" : "", tail != NULL ? tail : "");

	if (n < 0 || (size_t)n >= cap) {
		fprintf(stderr, "test_policy_loopback_mask: the policy does not fit in %zu bytes\n", cap);
		return -1;
	}
	return 0;
}

/*
 * upstream.c - starting pv-upstream from tests (upstream.h).
 */
#include "tests/support/upstream.h"

#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/testlib.h"

static const char pattern_chars[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n";

char test_upstream_pattern(uint64_t i)
{
	return pattern_chars[i % (sizeof(pattern_chars) - 1)];
}

int test_upstream_rawhex_path(char *path, size_t cap, const void *bytes, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = bytes;
	size_t i, o;

	if (cap < 8 + 2 * len + 1)
		return -1;
	memcpy(path, "/rawhex/", 8);
	o = 8;
	for (i = 0; i < len; i++) {
		path[o++] = hex[b[i] >> 4];
		path[o++] = hex[b[i] & 15];
	}
	path[o] = '\0';
	return 0;
}

const char *test_tool_path(const char *name)
{
	static char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", test_tools_dir(), name) >= (int)sizeof(path)) {
		fprintf(stderr, "upstream: tool path too long\n");
		path[0] = '\0';
	}
	return path;
}

int test_upstream_start(struct test_upstream *u, const struct test_upstream_opts *o)
{
	char bin[4096], rest[128];
	char *argv[16];
	int n = 0;

	memset(u, 0, sizeof(*u));
	snprintf(bin, sizeof(bin), "%s", test_tool_path("pv-upstream"));
	argv[n++] = bin;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	if (o != NULL && o->tls_certdir != NULL) {
		argv[n++] = "--tls";
		argv[n++] = (char *)o->tls_certdir;
		if (o->cert_name != NULL) {
			argv[n++] = "--cert-name";
			argv[n++] = (char *)o->cert_name;
		}
	}
	if (o != NULL && o->record_path != NULL) {
		argv[n++] = "--record";
		argv[n++] = (char *)o->record_path;
	}
	if (o != NULL && o->git_root != NULL) {
		argv[n++] = "--git-root";
		argv[n++] = (char *)o->git_root;
		if (o->git_auth != NULL) {
			argv[n++] = "--git-auth";
			argv[n++] = (char *)o->git_auth;
		}
	}
	if (o != NULL && o->files_root != NULL) {
		argv[n++] = "--files";
		argv[n++] = (char *)o->files_root;
	}
	argv[n] = NULL;
	u->proc = test_proc_start(argv, "listening on ", rest, sizeof(rest), 10000);
	if (u->proc == NULL) {
		fprintf(stderr, "upstream: pv-upstream did not start\n");
		return -1;
	}
	if (test_parse_hostport(rest, u->host, sizeof(u->host), &u->port) < 0) {
		fprintf(stderr, "upstream: bad listening line '%s'\n", rest);
		test_upstream_stop(u);
		return -1;
	}
	snprintf(u->addr, sizeof(u->addr), "%s:%u", u->host, (unsigned)u->port);
	snprintf(u->url, sizeof(u->url), "%s://%s",
		 o != NULL && o->tls_certdir != NULL ? "https" : "http", u->addr);
	return 0;
}

int test_upstream_stop(struct test_upstream *u)
{
	int st;

	if (u == NULL || u->proc == NULL)
		return 0;
	st = test_proc_stop(u->proc, SIGTERM, 5000);
	if (st != 0) {
		char *err = test_proc_stderr(u->proc);

		fprintf(stderr, "upstream: pv-upstream exited with %d; stderr:\n%s\n", st,
			err ? err : "(unavailable)");
		free(err);
	}
	test_proc_free(u->proc);
	u->proc = NULL;
	return st;
}

/* Runs a git command line; returns 0 or -1 (printing its stderr). */
static int run_git(char *const argv[])
{
	char *err = NULL;
	int rc = test_run_capture(argv, NULL, &err, 60000);

	if (rc != 0)
		fprintf(stderr, "upstream: %s %s failed (%d): %s\n", argv[0], argv[1], rc,
			err ? err : "");
	free(err);
	return rc == 0 ? 0 : -1;
}

int test_git_fixture(const char *root, const char *name, size_t big_bytes)
{
	char work[4000], file[4096], bare[4096];
	int rc = -1;

	if (snprintf(work, sizeof(work), "%s/%s.work", root, name) >= (int)sizeof(work) ||
	    snprintf(bare, sizeof(bare), "%s/%s.git", root, name) >= (int)sizeof(bare))
		return -1;
	{
		char *init[] = { "git", "init", "-q", "-b", "main", work, NULL };

		if (run_git(init) < 0)
			return -1;
	}
	snprintf(file, sizeof(file), "%s/hello.txt", work);
	if (test_write_file(file, "hello from git\n", 15) < 0)
		goto out;
	if (big_bytes > 0) {
		char *big = malloc(big_bytes);
		uint64_t x = 0x9e3779b97f4a7c15ULL;

		if (big == NULL)
			goto out;
		for (size_t i = 0; i < big_bytes; i++) {
			/* xorshift64: incompressible enough for zlib */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			big[i] = (char)(x >> 56);
		}
		snprintf(file, sizeof(file), "%s/big.bin", work);
		if (test_write_file(file, big, big_bytes) < 0) {
			free(big);
			goto out;
		}
		free(big);
	}
	{
		char *add[] = { "git", "-C", work, "add", "-A", NULL };
		char *commit[] = { "git", "-C", work, "-c", "user.name=passavant tests",
				   "-c", "user.email=tests@passavant.invalid", "-c",
				   "commit.gpgsign=false", "commit", "-q", "-m", "fixture", NULL };
		char *clone[] = { "git", "clone", "-q", "--bare", work, bare, NULL };

		if (run_git(add) < 0 || run_git(commit) < 0 || run_git(clone) < 0)
			goto out;
	}
	rc = 0;
out:
	test_rmtree(work);
	return rc;
}

char *test_upstream_url(const struct test_upstream *u, const char *path)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", u->url, path);
	return buf[i];
}

/*
 * fuzz_policy.c - libFuzzer driver for the policy loader: any byte string
 * goes through policy_load_buffer() (YAML or JSON, the whole syntactic and
 * semantic pass); a policy that loads is printed (round trip), bound to a
 * fixed made-up machine with policy_bind(), printed again and freed.
 * Build with `make fuzz`; run with `make fuzz-run` or directly:
 *   build/fuzz/fuzz_policy -dict=tests/fuzz/fuzz_policy.dict \
 *       build/fuzz/corpus-fuzz_policy tests/fuzz/corpus/fuzz_policy
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static FILE *sink;

/* Diagnostics and output go to /dev/null: only crashes, leaks and
 * sanitizer reports matter here. The loader reads nothing of the machine,
 * and the binding gets a made-up one (fuzz_host), so runs reproduce. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	if (sink == NULL)
		abort();
	return 0;
}

/* The made-up machine's environment: a PATH with relative, empty and "~"
 * entries, and the other variables policy_bind() asks for. */
static const char *fuzz_env(const char *name)
{
	if (strcmp(name, "PATH") == 0)
		return "/usr/bin::bin:~/bin:~x/y:/a/../b";
	if (strcmp(name, "XDG_CONFIG_HOME") == 0)
		return "/fuzz-home/.cfg";
	if (strcmp(name, "LD_LIBRARY_PATH") == 0)
		return "lib:/opt/lib";
	return NULL;
}

static const char *fuzz_file_problem(const char *path)
{
	return strstr(path, "bad") != NULL ? "not a regular file" : NULL;
}

static const struct policy_host fuzz_host = {
	.home = "/fuzz-home",
	.pw_home = "/fuzz-pw-home",
	.cwd = "/fuzz-cwd/sub",
	.policy_real = "/fuzz-cwd/real.yaml",
	.env = fuzz_env,
	.file_problem = fuzz_file_problem,
};

/*
 * The printed effective policy is itself a policy: it must load without
 * errors and print the same text again (catches quoting and escaping bugs
 * in print.c, and defaults that do not survive a reload).
 */
static void round_trip(const policy_t *p)
{
	char *one = NULL, *two = NULL;
	size_t n1 = 0, n2 = 0;
	unsigned nerrors = 0;
	policy_t *q;
	FILE *f;

	f = open_memstream(&one, &n1);
	if (f == NULL || policy_print(p, f) != 0 || fclose(f) != 0)
		abort();
	q = policy_load_buffer("fuzz.yaml", one, n1, sink, &nerrors);
	if (q == NULL) {
		fprintf(stderr, "printed policy does not load:\n%s\n", one);
		abort();
	}
	f = open_memstream(&two, &n2);
	if (f == NULL || policy_print(q, f) != 0 || fclose(f) != 0)
		abort();
	if (n1 != n2 || memcmp(one, two, n1) != 0) {
		fprintf(stderr, "print differs after a reload:\n%s\n---\n%s\n", one, two);
		abort();
	}
	policy_free(q);
	free(one);
	free(two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned nerrors = 0;
	policy_t *p;

	p = policy_load_buffer("fuzz.yaml", (const char *)data, size, sink, &nerrors);
	if (p == NULL) {
		if (nerrors == 0)
			abort(); /* NULL must come with at least one error */
		return 0;
	}
	if (nerrors != 0)
		abort(); /* a policy is returned only without errors */
	round_trip(p);
	(void)policy_print_warnings(p, sink);
	if (policy_bind(p, &fuzz_host, sink) == 0 && policy_print(p, sink) != 0)
		abort();
	policy_free(p);
	return 0;
}

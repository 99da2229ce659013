/*
 * fuzz_policy.c - libFuzzer driver for the policy loader: any byte string
 * goes through policy_load_buffer() (YAML or JSON, the whole syntactic and
 * semantic pass); a policy that loads is printed to /dev/null and freed.
 * Build with `make fuzz`; run with `make fuzz-run` or directly:
 *   build/fuzz/fuzz_policy build/fuzz/corpus-fuzz_policy tests/fuzz/corpus/fuzz_policy
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
 * sanitizer reports matter here. HOME is pinned so "~" always expands. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	if (sink == NULL)
		abort();
	if (setenv("HOME", "/nonexistent-fuzz-home", 1) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned nerrors = 0;
	policy_t *p;

	p = policy_load_buffer("fuzz.yaml", (const char *)data, size, sink, &nerrors);
	if (p != NULL) {
		if (nerrors != 0)
			abort(); /* a policy is returned only without errors */
		(void)policy_print(p, sink);
		(void)policy_print_warnings(p, sink);
		policy_free(p);
	} else if (nerrors == 0) {
		abort(); /* NULL must come with at least one error */
	}
	return 0;
}

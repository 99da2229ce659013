/*
 * check.c - `passavant check` (SPEC §2): validate the policy, print the
 * effective policy and its warnings.
 */
#include <getopt.h>
#include <stdio.h>

#include "proxy/cli/cli.h"
#include "proxy/log.h"

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_path = NULL;
	bool invalid, verbose = false;
	policy_t *p;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+p:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_path = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		default:
			cli_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (cli_no_operands("check", argc, argv) != 0)
		return EXIT_USAGE;
	p = cli_load_policy(policy_path, &invalid);
	if (p == NULL)
		return 1;
	printf("# effective policy from %s\n", policy_file(p) ? policy_file(p) : "the embedded default");
	rc = policy_print(p, stdout);
	/* SPEC §3.3: the one table of mandatory denies, and the environment
	 * rule of §3.6, as comments (the output stays a loadable policy). */
	if (verbose)
		policy_print_mandatory(p, stdout);
	policy_print_warnings(p, stderr);
	policy_free(p);
	if (rc != 0 || fflush(stdout) != 0) {
		log_warn("cannot write the effective policy to stdout");
		return 1;
	}
	return 0;
}

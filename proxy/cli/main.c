/*
 * main.c - main(): the subcommands of SPEC §2 (check.c, proxycmd.c,
 * run.c). The only file where exit() is allowed (STYLE.md 8): each cmd_*
 * returns the process status, and main() returns it.
 */
#include <stdio.h>
#include <string.h>

#include "proxy/cli/cli.h"
#include "proxy/zone.h"

int main(int argc, char **argv)
{
	const char *cmd;

	/* Before anything allocates through OpenSSL (zone.h). Without it
	 * OpenSSL keeps malloc(): only the memory an idle tunnel leaves
	 * behind differs. */
	if (zone_install() < 0) {
		/* tested: a refused reservation only changes the memory an
		 * idle tunnel leaves behind; nothing to tell the user */
	}
	if (argc < 2) {
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("passavant %s\n", PASSAVANT_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		cli_usage(stdout);
		fputs(cli_help_text, stdout);
		return 0;
	}
	/* Subcommands parse their own options: shift argv so getopt sees them. */
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "proxy") == 0)
		return cmd_proxy(argc - 1, argv + 1);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	fprintf(stderr, "passavant: unknown command '%s'\n", cmd);
	cli_usage(stderr);
	return EXIT_USAGE;
}

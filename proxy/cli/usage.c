/*
 * usage.c - the usage lines and the help text of SPEC §2, apart from
 * main() so that every subcommand (and a fuzz build, which links no
 * main.c) can print them.
 */
#include <getopt.h>
#include <stdio.h>

#include "proxy/cli/cli.h"

static const char usage_text[] =
	"usage: passavant run   [-p POLICY] [--audit FILE] [--keep-git-config] [--no-intercept] [-v|-q] [--] COMMAND [ARG...]\n"
	"       passavant proxy [-p POLICY] [--listen HOST:PORT] [--session-dir DIR] [--audit FILE] [--loops N] [--busy-poll-us N]\n"
	"       passavant check [-p POLICY] [-v]\n"
	"       passavant --version | --help\n";

const char cli_help_text[] =
	"\n"
	"passavant runs a command behind an egress boundary: fresh Linux namespaces\n"
	"whose only way out is passavant's own proxy, which terminates TLS with a\n"
	"per-session CA, enforces domain and method allowlists, swaps placeholder\n"
	"secrets for real ones only towards their allowed hosts, and writes a JSON\n"
	"Lines audit of the decrypted egress.\n"
	"\n"
	"Commands:\n"
	"  run      run COMMAND in the sandbox, behind the proxy\n"
	"  proxy    run the proxy alone; prints 'listening on HOST:PORT' when ready\n"
	"  check    validate the policy, print the effective policy and warnings;\n"
	"           exit 0 if valid, 1 if not; with -v also the mandatory denies\n"
	"           and the environment rule every policy gets\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE     policy file (YAML, or a sandbox-runtime JSON file)\n"
	"      --listen HOST:PORT  proxy: address to listen on (default 127.0.0.1:3128;\n"
	"                        port 0 picks a free one)\n"
	"      --session-dir DIR proxy: session directory (default: a fresh temporary one)\n"
	"      --audit FILE      JSON Lines audit log (overrides audit.path)\n"
	"      --loops N         proxy: event loops, one thread each (default: the CPUs it\n"
	"                        may use, at most 16; 1 when the policy masks credentials)\n"
	"      --busy-poll-us N  proxy: after each wake-up, poll N microseconds (0-10000)\n"
	"                        before sleeping: lower latency for a proxy on a core of\n"
	"                        its own, at the price of a busy core (default 0)\n"
	"      --keep-git-config run: leave in place the control files the command wrote\n"
	"                        that can make the host run a program (git hooks and\n"
	"                        config, editor and agent settings such as .vscode,\n"
	"                        .claude/settings.json, .mcp.json; by default they are\n"
	"                        renamed to NAME.passavant-quarantine after the run)\n"
	"      --no-intercept    run: no transparent interception and no in-sandbox resolver;\n"
	"                        only clients that honour the proxy variables get out\n"
	"  -v, --verbose         more diagnostics on stderr (twice: debug)\n"
	"  -h, --help            this help\n"
	"      --version         print the version\n"
	"\n"
	"Policy lookup: -p FILE, else $PASSAVANT_POLICY, else\n"
	"$XDG_CONFIG_HOME/passavant/policy.yaml (~/.config/passavant/policy.yaml),\n"
	"else the embedded default (no network, writes only to the working\n"
	"directory and a private /tmp). Never a file in the working directory.\n";

void cli_usage(FILE *out)
{
	fputs(usage_text, out);
}

int cli_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		return 0;
	fprintf(stderr, "passavant %s: unexpected argument '%s'\n", cmd, argv[optind]);
	cli_usage(stderr);
	return EXIT_USAGE;
}

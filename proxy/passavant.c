/*
 * passavant.c - main(): the subcommands of SPEC §2. The only file where
 * exit() is allowed (STYLE.md 8). Each cmd_* returns the process status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mask/mask.h"
#include "../policy/policy.h"
#include "audit.h"
#include "log.h"
#include "proxy.h"
#include "session.h"
#include "tls.h"

#define EXIT_USAGE 2
/* SPEC §2: run exits 125 when passavant failed before the command started. */
#define EXIT_RUN_SETUP 125

static const char usage_text[] =
	"usage: passavant run   [-p POLICY] [--audit FILE] [-v|-q] [--] COMMAND [ARG...]\n"
	"       passavant proxy [-p POLICY] [--listen HOST:PORT] [--session-dir DIR] [--audit FILE]\n"
	"       passavant check [-p POLICY]\n"
	"       passavant --version | --help\n";

static const char help_text[] =
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
	"           exit 0 if valid, 1 if not\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE     policy file (YAML, or a sandbox-runtime JSON file)\n"
	"      --listen HOST:PORT  proxy: address to listen on (default 127.0.0.1:3128;\n"
	"                        port 0 picks a free one)\n"
	"      --session-dir DIR proxy: session directory (default: a fresh temporary one)\n"
	"      --audit FILE      JSON Lines audit log (overrides audit.path)\n"
	"  -v, --verbose         more diagnostics on stderr (twice: debug)\n"
	"  -h, --help            this help\n"
	"      --version         print the version\n"
	"\n"
	"Policy lookup: -p FILE, else $PASSAVANT_POLICY, else\n"
	"$XDG_CONFIG_HOME/passavant/policy.yaml (~/.config/passavant/policy.yaml),\n"
	"else the embedded default (no network, writes only to the working\n"
	"directory and a private /tmp). Never a file in the working directory.\n";

static void usage(FILE *out)
{
	fputs(usage_text, out);
}

/*
 * Finds and loads the policy per SPEC §2. On failure prints why and
 * returns NULL; *invalid tells whether the policy itself was invalid
 * (errors printed) rather than missing.
 */
static policy_t *load_policy(const char *cli_path, bool *invalid)
{
	char path[4096];
	unsigned nerrors = 0;
	policy_t *p;

	*invalid = false;
	switch (policy_lookup(cli_path, path, sizeof(path))) {
	case POLICY_SOURCE_EMBEDDED:
		p = policy_load_default(stderr);
		if (p == NULL)
			log_warnx("cannot build the embedded default policy (out of memory)");
		return p;
	case POLICY_SOURCE_ERROR:
		log_warnx("%s", path);
		return NULL;
	case POLICY_SOURCE_FILE:
		break;
	}
	p = policy_load_file(path, stderr, &nerrors);
	if (p == NULL) {
		*invalid = true;
		fprintf(stderr, "%s: %u error%s; the policy was not loaded\n", path, nerrors,
			nerrors == 1 ? "" : "s");
	}
	return p;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_path = NULL;
	bool invalid;
	policy_t *p;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "passavant check: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	p = load_policy(policy_path, &invalid);
	if (p == NULL)
		return 1;
	printf("# effective policy from %s\n", policy_file(p) ? policy_file(p) : "the embedded default");
	rc = policy_print(p, stdout);
	policy_print_warnings(p, stderr);
	policy_free(p);
	if (rc != 0 || fflush(stdout) != 0) {
		log_warn("cannot write the effective policy to stdout");
		return 1;
	}
	return 0;
}

/*
 * The credential side of a session (SPEC §2, §4), shared by proxy and run:
 * reads every masked credential of p into a table (real values in locked
 * memory), warns once when that memory cannot be locked, rewrites the
 * masked variables of our own environment to their sentinels (so no child
 * and no /proc/PID/environ reader sees a real value), and writes the
 * sentinel copies of masked files into <session>/files/. The caller writes
 * the env file with the table, then hands it to the proxy
 * (proxy_set_masks) or frees it. Returns NULL after printing why; the
 * message never carries a value.
 */
static mask_table_t *masks_setup(const policy_t *p, session_t *sess)
{
	char err[1024];
	const char *files;
	mask_table_t *t;

	t = mask_table_new(p, err, sizeof(err));
	if (t == NULL) {
		log_warnx("credentials: %s", err);
		return NULL;
	}
	if ((mask_table_hygiene(t) & MASK_HYG_LOCKED) == 0)
		log_warnx("warning: cannot lock secret memory (mlock): real credential values may "
			  "be swapped to disk; raise the locked-memory limit (ulimit -l) or grant "
			  "CAP_IPC_LOCK");
	(void)mask_table_scrub_environ(t);
	files = session_files_dir(sess);
	if (files == NULL)
		goto fail;
	if (mask_table_write_files(t, files, err, sizeof(err)) < 0) {
		log_warnx("credentials: %s", err);
		goto fail;
	}
	return t;
fail:
	mask_table_free(t);
	return NULL;
}

/* Default for `passavant proxy --listen`: loopback on the conventional
 * proxy port, the same port the sandbox listens on inside (SPEC §7).
 * Port 0 picks a free one; the "listening on" line always tells. */
#define PROXY_DEFAULT_LISTEN "127.0.0.1:3128"

/* Splits "HOST:PORT" or "[V6]:PORT"; port 0 allowed. Returns 0 or -1. */
static int parse_listen(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long v;

	colon = strrchr(s, ':');
	if (colon == NULL || colon[1] == '\0')
		return -1;
	hl = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hl < 2 || s[hl - 1] != ']')
			return -1;
		h = s + 1;
		hl -= 2;
	}
	if (hl == 0 || hl >= hostlen)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535 || colon[1] < '0' || colon[1] > '9')
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int cmd_proxy(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"listen", required_argument, NULL, 'l'},
		{"session-dir", required_argument, NULL, 's'},
		{"audit", required_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_path = NULL, *listen_arg = PROXY_DEFAULT_LISTEN, *session_dir_arg = NULL;
	const char *audit_path = NULL;
	char host[INET6_ADDRSTRLEN + 2], bound[INET6_ADDRSTRLEN];
	uint16_t port = 0, bound_port = 0;
	session_t *sess = NULL;
	audit_t *audit = NULL;
	mask_table_t *masks = NULL;
	tls_session_t *tls;
	char err[1024];
	proxy_t *px = NULL;
	bool invalid;
	policy_t *p;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "+p:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_path = optarg;
			break;
		case 'l':
			listen_arg = optarg;
			break;
		case 's':
			session_dir_arg = optarg;
			break;
		case 'a':
			audit_path = optarg;
			break;
		case 'v':
			log_set_level(log_get_level() >= LOG_LEVEL_INFO ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
			break;
		case 'q':
			log_set_level(LOG_LEVEL_QUIET);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "passavant proxy: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (parse_listen(listen_arg, host, sizeof(host), &port) < 0) {
		fprintf(stderr, "passavant proxy: --listen: expected HOST:PORT or [V6]:PORT, got '%s'\n",
			listen_arg);
		return EXIT_USAGE;
	}
	p = load_policy(policy_path, &invalid);
	if (p == NULL)
		return 1;
	sess = session_new(session_dir_arg);
	if (sess == NULL) {
		policy_free(p);
		return 1;
	}
	masks = masks_setup(p, sess);
	if (masks == NULL) {
		policy_free(p);
		goto out;
	}
	if (audit_path == NULL)
		audit_path = policy_audit_path(p);
	if (audit_path != NULL) {
		audit = audit_open(audit_path, session_id(sess));
		if (audit == NULL) {
			log_warn("audit log %s", audit_path);
			policy_free(p);
			goto out;
		}
	}
	/* The session CA, ca.pem and trust.pem (SPEC §2, §5) before anything
	 * listens: a client must never meet a proxy without its trust file. */
	tls = tls_session_new(p, session_dir(sess), err, sizeof(err));
	if (tls == NULL) {
		log_warnx("session CA: %s", err);
		policy_free(p);
		audit_free(audit);
		goto out;
	}
	/* proxy_new takes p and audit, also on failure. */
	px = proxy_new(p, policy_file(p), audit, session_id(sess));
	if (px == NULL) {
		tls_session_free(tls);
		goto out;
	}
	proxy_set_tls(px, tls);
	if (proxy_listen(px, host, port) < 0 ||
	    proxy_local_addr(px, bound, sizeof(bound), &bound_port) < 0 ||
	    session_write_env(sess, bound, bound_port, masks) < 0)
		goto out;
	/* The proxy owns the table from here (freed after every connection). */
	proxy_set_masks(px, masks);
	masks = NULL;
	/* The one line on stdout (SPEC §2); everything else goes to stderr. */
	if (printf(strchr(bound, ':') ? "listening on [%s]:%u\n" : "listening on %s:%u\n", bound,
		   (unsigned)bound_port) < 0 ||
	    fflush(stdout) != 0) {
		log_warn("stdout");
		goto out;
	}
	log_info("session %s in %s", session_id(sess), session_dir(sess));
	rc = proxy_run(px) == 0 ? 0 : 1;
out:
	proxy_free(px);
	mask_table_free(masks);
	session_free(sess);
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	log_warnx("run: the sandbox launcher is not available in this build yet; "
		  "the command was not started");
	return EXIT_RUN_SETUP;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("passavant %s\n", PASSAVANT_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		fputs(help_text, stdout);
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
	usage(stderr);
	return EXIT_USAGE;
}

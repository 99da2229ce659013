/*
 * proxycmd.c - `passavant proxy` (SPEC §2): the proxy alone, on a
 * listener of its own, with a session directory whose env file points
 * clients at it.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/authority.h"
#include "proxy/cli/cli.h"
#include "proxy/log.h"

/* Default for `passavant proxy --listen`: loopback on the conventional
 * proxy port, the same port the sandbox listens on inside (SPEC §7).
 * Port 0 picks a free one; the "listening on" line always tells. */
#define PROXY_DEFAULT_LISTEN "127.0.0.1:3128"

/* The options of `passavant proxy`. */
struct proxy_opts {
	const char *policy_path, *listen, *session_dir, *audit_path;
	unsigned loops; /* --loops; 0: the default (proxy_loops_default(), 1 when masking) */
	unsigned busy_poll_us; /* --busy-poll-us; 0: none */
};

/* The value of --NAME, a decimal number from lo to hi (--loops,
 * --busy-poll-us); what names its unit in the error ("a number of event
 * loops"). Returns 0, or -1 after saying what was expected. */
static int parse_count(const char *name, const char *what, const char *s, unsigned lo, unsigned hi,
		       unsigned *n)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (s[0] < '0' || s[0] > '9' || errno != 0 || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "passavant proxy: --%s: expected %s from %u to %u, got '%s'\n", name, what, lo, hi,
			s);
		return -1;
	}
	*n = (unsigned)v;
	return 0;
}

/* Splits "HOST:PORT" or "[V6]:PORT" (authority_split()); port 0 (any
 * free port) allowed. Returns 0 or -1. */
static int parse_listen(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	size_t len = strlen(s);
	bool any = len > 2 && strcmp(s + len - 2, ":0") == 0;
	struct authority a;

	if (authority_split(s, any ? len - 2 : len, &a) != NULL || a.has_port == any ||
	    a.host_len >= hostlen)
		return -1;
	memcpy(host, a.host, a.host_len);
	host[a.host_len] = '\0';
	*port = any ? 0 : a.port;
	return 0;
}

/* Parses the options into o. Returns -1 to go on, else the status. */
static int proxy_parse(int argc, char **argv, struct proxy_opts *o)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"listen", required_argument, NULL, 'l'},
		{"session-dir", required_argument, NULL, 's'},
		{"audit", required_argument, NULL, 'a'},
		{"loops", required_argument, NULL, 'L'},
		{"busy-poll-us", required_argument, NULL, 'B'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+p:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy_path = optarg;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 's':
			o->session_dir = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 'L':
			if (parse_count("loops", "a number of event loops", optarg, 1, PROXY_LOOPS_MAX,
					&o->loops) < 0)
				return EXIT_USAGE;
			break;
		case 'B':
			if (parse_count("busy-poll-us", "microseconds", optarg, 0, PROXY_BUSY_POLL_US_MAX,
					&o->busy_poll_us) < 0)
				return EXIT_USAGE;
			break;
		case 'v':
			log_set_level(log_get_level() >= LOG_LEVEL_INFO ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
			break;
		case 'q':
			log_set_level(LOG_LEVEL_QUIET);
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		default:
			cli_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (cli_no_operands("proxy", argc, argv) != 0)
		return EXIT_USAGE;
	return -1;
}

/*
 * The number of event loops: --loops, or the CPUs this process may use
 * (capped, proxy_loops_default()). With masked credentials one loop: the
 * credential table serves one thread (mask/), so an explicit --loops above
 * 1 is refused then rather than quietly lowered. Returns 0, or -1 after
 * saying why.
 */
static int choose_loops(unsigned asked, const mask_table_t *masks, unsigned *n)
{
	bool masking = masks != NULL && mask_table_value_count(masks) > 0;

	if (asked > 1 && masking) {
		log_warnx("--loops %u: the policy masks credentials, and the credential table "
			  "serves one event loop only; use --loops 1 or leave --loops out",
			  asked);
		return -1;
	}
	*n = asked != 0 ? asked : masking ? 1 : proxy_loops_default();
	return 0;
}

/* Listens on host:port, writes the env file, hands the table to the
 * proxy (*masks NULL then), prints the one line on stdout and runs the
 * loops. Returns the status. */
static int proxy_serve(proxy_t *px, session_t *sess, const char *host, uint16_t port,
		       const struct proxy_opts *o, mask_table_t **masks)
{
	char bound[INET6_ADDRSTRLEN];
	uint16_t bound_port = 0;
	unsigned loops = 1;

	if (choose_loops(o->loops, *masks, &loops) < 0 || proxy_set_loops(px, loops) < 0 ||
	    proxy_set_busy_poll(px, o->busy_poll_us) < 0 ||
	    proxy_listen(px, host, port) < 0 ||
	    proxy_local_addr(px, bound, sizeof(bound), &bound_port) < 0 ||
	    cli_write_session_env(sess, bound, bound_port, *masks) < 0)
		return 1;
	/* The proxy owns the table from here (freed after every connection). */
	proxy_set_masks(px, *masks);
	*masks = NULL;
	/* Every loop runs before the line says the proxy is ready. */
	if (proxy_start(px) < 0)
		return 1;
	/* The one line on stdout (SPEC §2); everything else goes to stderr. */
	if (printf(strchr(bound, ':') ? "listening on [%s]:%u\n" : "listening on %s:%u\n", bound,
		   (unsigned)bound_port) < 0 ||
	    fflush(stdout) != 0) {
		log_warn("stdout");
		return 1;
	}
	log_info("session %s in %s, %u event loop%s", session_id(sess), session_dir(sess), loops,
		 loops == 1 ? "" : "s");
	return proxy_run(px) == 0 ? 0 : 1;
}

int cmd_proxy(int argc, char **argv)
{
	struct proxy_opts o = {.listen = PROXY_DEFAULT_LISTEN};
	char host[INET6_ADDRSTRLEN + 2];
	uint16_t port = 0;
	session_t *sess = NULL;
	mask_table_t *masks = NULL;
	proxy_t *px = NULL;
	bool invalid;
	policy_t *p;
	int rc;

	rc = proxy_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (parse_listen(o.listen, host, sizeof(host), &port) < 0) {
		fprintf(stderr, "passavant proxy: --listen: expected HOST:PORT or [V6]:PORT, got '%s'\n",
			o.listen);
		return EXIT_USAGE;
	}
	p = cli_load_policy(o.policy_path, &invalid);
	if (p == NULL)
		return 1;
	sess = session_new(o.session_dir);
	if (sess == NULL) {
		policy_free(p);
		return 1;
	}
	rc = 1;
	px = cli_session_proxy(p, sess, &o.audit_path, &masks);
	if (px != NULL)
		rc = proxy_serve(px, sess, host, port, &o, &masks);
	proxy_free(px);
	mask_table_free(masks);
	session_free(sess);
	return rc;
}

/*
 * passavant.c - main(): the subcommands of SPEC §2. The only file where
 * exit() is allowed (STYLE.md 8). Each cmd_* returns the process status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pwd.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "../mask/mask.h"
#include "../policy/policy.h"
#include "../sandbox/sandbox.h"
#include "audit.h"
#include "log.h"
#include "proxy.h"
#include "session.h"
#include "tls.h"

#define EXIT_USAGE 2
/* SPEC §2: run exits 125 when passavant failed before the command started. */
#define EXIT_RUN_SETUP 125

static const char usage_text[] =
	"usage: passavant run   [-p POLICY] [--audit FILE] [--keep-git-config] [-v|-q] [--] COMMAND [ARG...]\n"
	"       passavant proxy [-p POLICY] [--listen HOST:PORT] [--session-dir DIR] [--audit FILE]\n"
	"       passavant check [-p POLICY] [-v]\n"
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
	"           exit 0 if valid, 1 if not; with -v also the mandatory denies\n"
	"           and the environment rule every policy gets\n"
	"\n"
	"Options:\n"
	"  -p, --policy FILE     policy file (YAML, or a sandbox-runtime JSON file)\n"
	"      --listen HOST:PORT  proxy: address to listen on (default 127.0.0.1:3128;\n"
	"                        port 0 picks a free one)\n"
	"      --session-dir DIR proxy: session directory (default: a fresh temporary one)\n"
	"      --audit FILE      JSON Lines audit log (overrides audit.path)\n"
	"      --keep-git-config run: leave in place the control files the command wrote\n"
	"                        that can make the host run a program (git hooks and\n"
	"                        config, editor and agent settings such as .vscode,\n"
	"                        .claude/settings.json, .mcp.json; by default they are\n"
	"                        renamed to NAME.passavant-quarantine after the run)\n"
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

/* 0 when path exists, else stat(2)'s errno (policy_lookup()). */
static int path_probe(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? 0 : errno;
}

/* Why path cannot be read as a file now, or NULL (policy_bind(): the
 * extraCaCertPaths are read when the proxy starts). stat first: opening a
 * device node can have side effects. */
static const char *file_problem(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) != 0)
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return strerror(errno);
	close(fd);
	return NULL;
}

static const char *host_env(const char *name)
{
	return getenv(name);
}

/* The password database's home of our uid, or NULL. */
static const char *pw_home(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : NULL;
}

/* policy_bind() with this machine: "~" is $HOME, as the shell does, else
 * the password database's home. Returns the number of errors printed. */
static unsigned bind_policy(policy_t *p)
{
	const char *home = getenv("HOME"), *pwh = pw_home();
	char *cwd = getcwd(NULL, 0);
	char *real = policy_file(p) != NULL ? realpath(policy_file(p), NULL) : NULL;
	struct policy_host h = {
		.home = home != NULL && home[0] != '\0' ? home : pwh,
		.pw_home = pwh,
		.cwd = cwd,
		.policy_real = real,
		.env = host_env,
		.file_problem = file_problem,
	};
	unsigned n = policy_bind(p, &h, stderr);

	free(cwd);
	free(real);
	return n;
}

/*
 * Finds and loads the policy per SPEC §2, and binds it to this machine.
 * On failure prints why and returns NULL; *invalid tells whether the
 * policy itself was invalid (errors printed) rather than missing.
 */
static policy_t *load_policy(const char *cli_path, bool *invalid)
{
	struct policy_lookup_env le = {
		.passavant_policy = getenv("PASSAVANT_POLICY"),
		.xdg_config_home = getenv("XDG_CONFIG_HOME"),
		.home = getenv("HOME"),
		.pw_home = pw_home(),
		.probe = path_probe,
	};
	char path[4096];
	unsigned nerrors = 0;
	policy_t *p;

	*invalid = false;
	switch (policy_lookup(cli_path, &le, path, sizeof(path))) {
	case POLICY_SOURCE_EMBEDDED:
		p = policy_load_default(stderr);
		if (p == NULL || bind_policy(p) != 0) {
			log_warnx("cannot build the embedded default policy");
			policy_free(p);
			return NULL;
		}
		return p;
	case POLICY_SOURCE_ERROR:
		log_warnx("%s", path);
		return NULL;
	case POLICY_SOURCE_FILE:
		break;
	}
	p = policy_load_file(path, stderr, &nerrors);
	if (p != NULL && (nerrors = bind_policy(p)) != 0) {
		policy_free(p);
		p = NULL;
	}
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
	/* Masked values are checked where they are read (mask/): build the
	 * table once, as run would, so check reports what run would refuse. */
	{
		char err[1024];
		mask_table_t *t = mask_table_new(p, err, sizeof(err));
		if (t == NULL) {
			log_warnx("credentials: %s", err);
			policy_free(p);
			return 1;
		}
		mask_table_free(t);
	}
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

/*
 * The session's proxy, for `proxy` and `run`: the credential table
 * (masks_setup()), the audit log (*audit_path, else the policy's; the
 * path used is left in *audit_path), the session CA with ca.pem and
 * trust.pem (SPEC §2, §5: before anything listens, a client must never
 * meet a proxy without its trust file), then the proxy with TLS set.
 * Takes p (freed on failure too). *masks gets the table, still the
 * caller's: it writes the env file with it, then hands it to the proxy.
 * Returns the proxy, or NULL after printing why (*masks is then NULL).
 */
static proxy_t *session_proxy(policy_t *p, session_t *sess, const char **audit_path,
			      mask_table_t **masks)
{
	audit_t *audit = NULL;
	tls_session_t *tls;
	char err[1024];
	proxy_t *px;

	*masks = masks_setup(p, sess);
	if (*masks == NULL) {
		policy_free(p);
		return NULL;
	}
	if (*audit_path == NULL)
		*audit_path = policy_audit_path(p);
	if (*audit_path != NULL && (audit = audit_open(*audit_path, session_id(sess))) == NULL) {
		log_warn("audit log %s", *audit_path);
		policy_free(p);
		goto fail;
	}
	tls = tls_session_new(p, session_dir(sess), err, sizeof(err));
	if (tls == NULL) {
		log_warnx("session CA: %s", err);
		policy_free(p);
		audit_free(audit);
		goto fail;
	}
	/* proxy_new takes p and audit, also on failure. */
	px = proxy_new(p, policy_file(p), audit, session_id(sess));
	if (px == NULL) {
		tls_session_free(tls);
		goto fail;
	}
	proxy_set_tls(px, tls);
	return px;
fail:
	mask_table_free(*masks);
	*masks = NULL;
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
	mask_table_t *masks = NULL;
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
	px = session_proxy(p, sess, &audit_path, &masks);
	if (px == NULL)
		goto out;
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

/* ------------------------------------------------------------------ */
/* passavant run                                                        */
/* ------------------------------------------------------------------ */

/* A growable NULL-terminated array of malloc'd strings. */
struct strv {
	char **v;
	size_t n, cap;
};

/* Appends a copy of str; 0, or -1 after logging (ENOMEM). */
static int strv_add(struct strv *sv, const char *str)
{
	char *copy;

	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap != 0 ? 2 * sv->cap : 16;
		char **v = realloc(sv->v, cap * sizeof(*v));
		if (v == NULL) {
			log_warn("run");
			return -1;
		}
		sv->v = v;
		sv->cap = cap;
	}
	copy = strdup(str);
	if (copy == NULL) {
		log_warn("run");
		return -1;
	}
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

/* Appends "dir/name" unless already there; 0 or -1. */
static int strv_add_join(struct strv *sv, const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name) >=
	    (int)sizeof(path)) {
		log_warnx("path too long: %s/%s", dir, name);
		return -1;
	}
	/* The working directory is often an allowWrite directory too: one
	 * protection per path (each costs mounts in the sandbox). */
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], path) == 0)
			return 0;
	return strv_add(sv, path);
}

/* sbx_path_fn: appends path (arg: a struct strv) unless already there;
 * 0 or -1. */
static int strv_add_unique(void *arg, const char *path)
{
	struct strv *sv = arg;

	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], path) == 0)
			return 0;
	return strv_add(sv, path);
}

/* The array for an sbx_config field: never NULL once something was
 * added, NULL (an empty list) otherwise. */
static const char *const *strv_list(const struct strv *sv)
{
	return (const char *const *)sv->v;
}

static void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

/* Every path of one filesystem list of the policy. */
static int strv_add_fs(struct strv *sv, const policy_t *p, enum policy_fs_list which)
{
	for (size_t i = 0; i < policy_fs_count(p, which); i++)
		if (strv_add(sv, policy_fs_path(p, which, i)) < 0)
			return -1;
	return 0;
}

/*
 * SPEC §3.3: the per-directory mandatory write denies under dir and under
 * the nearest ancestor of dir that holds a .git (the repository dir is
 * in), whether or not they exist (the sandbox makes placeholders for
 * missing ones in writable places, so they cannot be created): .git/hooks
 * and .git/config, every git control file of sbx_git_protect()
 * (config.worktree, commondir, info/, modules/, worktrees/, what a .git
 * file points to, a bare repository's own), and the workspace rows of the
 * mandatory table (policy.h: .claude/settings.json, .vscode, .mcp.json...).
 */
static int protect_dir(struct strv *sv, const char *dir)
{
	static const char *const git_names[] = {".git/hooks", ".git/config"};
	char real[PATH_MAX], up[PATH_MAX], probe[PATH_MAX];
	const char *roots[2] = {real, NULL};
	char *slash;

	if (realpath(dir, real) == NULL)
		return 0; /* missing: sbx_start() reports an allow_write that is */
	memcpy(up, real, sizeof(up));
	while ((slash = strrchr(up, '/')) != NULL && slash != up) {
		*slash = '\0';
		if (snprintf(probe, sizeof(probe), "%s/.git", up) >= (int)sizeof(probe))
			break;
		if (access(probe, F_OK) == 0) {
			roots[1] = up;
			break;
		}
	}
	for (size_t r = 0; r < ARRAY_LEN(roots) && roots[r] != NULL; r++) {
		for (size_t i = 0; i < ARRAY_LEN(git_names); i++)
			if (strv_add_join(sv, roots[r], git_names[i]) < 0)
				return -1;
		if (sbx_git_protect(roots[r], strv_add_unique, sv) < 0)
			return -1;
		for (size_t i = 0; i < policy_mandatory_count(); i++) {
			const struct policy_mandatory *m = policy_mandatory_get(i);
			if ((m->where & POLICY_MAND_WORKSPACE) && strv_add_join(sv, roots[r], m->path) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * SPEC §3.6: the variables of our environment the command does not get
 * because their name or value looks like a credential and the policy does
 * not name them; added to env_remove. Variables env_add sets anyway
 * (proxy, trust, sentinels) are left to it. Prints one notice line with
 * the names, never a value, unless quiet; with verbose, the rule and each
 * name's reason. Returns 0, or -1 after logging.
 */
static int drop_secret_env(struct strv *env_remove, const struct strv *env_add,
			   const policy_t *p, bool quiet, unsigned verbose)
{
	struct strv dropped = {0};
	char *names = NULL;
	size_t nlen = 0;
	FILE *f;
	int rc = -1;

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		const char *why = policy_env_secret_reason(*e);
		size_t len = strcspn(*e, "=");
		bool set = false;
		char *name;

		if (why == NULL || len == 0 || policy_env_named(p, *e, len))
			continue;
		for (size_t i = 0; i < env_add->n && !set; i++)
			set = strncmp(env_add->v[i], *e, len) == 0 && env_add->v[i][len] == '=';
		if (set)
			continue;
		name = strndup(*e, len);
		if (name == NULL) {
			log_warn("run: environment");
			goto out;
		}
		if (strv_add(env_remove, name) < 0 || strv_add(&dropped, name) < 0) {
			free(name);
			goto out;
		}
		if (verbose > 0)
			fprintf(stderr, "passavant: environment: %s dropped: %s\n", name, why);
		free(name);
	}
	if (verbose > 0) {
		fputs("passavant: environment rule:\n", stderr);
		policy_print_env_rule(stderr, "passavant:   ");
	}
	if (dropped.n == 0 || quiet) {
		rc = 0;
		goto out;
	}
	f = open_memstream(&names, &nlen);
	if (f == NULL) {
		log_warn("run: environment");
		goto out;
	}
	for (size_t i = 0; i < dropped.n; i++)
		fprintf(f, "%s%s", i ? ", " : "", dropped.v[i]);
	if (fclose(f) != 0) {
		log_warn("run: environment");
		goto out;
	}
	/* One line, one write (log.c's rule): no interleaving. */
	fprintf(stderr,
		"passavant: not passed to the command, as their names or values look like "
		"credentials: %s (to pass one masked, list it in credentials.envVars)\n",
		names);
	rc = 0;
out:
	free(names);
	strv_free(&dropped);
	return rc;
}

/*
 * The sentinel of every masked variable as "NAME=SENTINEL" entries, parsed
 * back from mask_table_env_lines() (`export NAME='...'`, a quote written
 * '\''), so the command gets them whatever our environment holds.
 */
static int add_sentinel_env(struct strv *sv, const mask_table_t *t)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = -1;

	if (f == NULL) {
		log_warn("run: masked variables");
		return -1;
	}
	if (mask_table_env_lines(t, f) != 0) {
		log_warn("run: masked variables");
		(void)fclose(f);
		free(buf);
		return -1;
	}
	if (fclose(f) != 0) {
		log_warn("run: masked variables");
		free(buf);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *eq, *r, *w;

		if (strncmp(line, "export ", 7) != 0 || (eq = strchr(line, '=')) == NULL ||
		    eq[1] != '\'') {
			log_warnx("run: unexpected masked variable line (internal error)");
			goto out;
		}
		/* Unquote in place: NAME=value. */
		w = eq + 1;
		for (r = eq + 2; *r != '\0';) {
			if (strncmp(r, "'\\''", 4) == 0) {
				*w++ = '\'';
				r += 4;
			} else if (*r == '\'' && r[1] == '\0') {
				r++;
			} else {
				*w++ = *r++;
			}
		}
		*w = '\0';
		if (strv_add(sv, line + 7) < 0)
			goto out;
	}
	rc = 0;
out:
	/* Sentinels only, but wipe the scratch like any credential text. */
	if (buf != NULL)
		explicit_bzero(buf, len);
	free(buf);
	return rc;
}

/* Is path dir itself or inside it? Both absolute and normalised. */
static bool path_under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, dl) == 0 && (path[dl] == '\0' || path[dl] == '/');
}

/* State of one `passavant run`, shared by the event callbacks. */
struct run {
	proxy_t *px;
	struct sbx *sbx;
	struct event *sigchld;
	bool quiet;             /* -q: no refusal lines */
	bool keep_git;          /* --keep-git-config: report, do not move */
	bool ended;             /* the sandbox has ended: status is final */
	int status;             /* its SPEC §2 status once ended */
	unsigned long allowed;  /* audit records with decision "allow" */
	unsigned long refused;  /* ... with decision "deny" */
	unsigned long injected; /* credentials injected, over all requests */
};

/* Appends len bytes of s to out (at *n, cap bytes) with every byte that
 * is not printable ASCII written as \xNN: a refusal line must not carry
 * terminal escapes the command chose. */
static void put_sanitized(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < len && *n + 5 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f) {
			out[(*n)++] = (char)ch;
		} else {
			(void)snprintf(out + *n, cap - *n, "\\x%02x", ch);
			*n += 4;
		}
	}
}

static void put_str(char *out, size_t cap, size_t *n, const char *s)
{
	put_sanitized(out, cap, n, s, strlen(s));
}

/* proxy observer: counts every record, prints each refusal (SPEC §2:
 * the host, method and rule), e.g.
 * "passavant: blocked POST https://host/path: allowedMethods". */
static void run_observer(void *arg, const struct audit_rec *r)
{
	struct run *run = arg;
	char line[1024], port[16];
	const char *why;
	size_t n = 0;
	bool connect;

	if (r->decision != NULL && strcmp(r->decision, "allow") == 0)
		run->allowed++;
	else if (r->decision != NULL && strcmp(r->decision, "deny") == 0)
		run->refused++;
	run->injected += r->n_injected;
	if (run->quiet || r->decision == NULL || strcmp(r->decision, "deny") != 0)
		return;
	connect = (r->kind != NULL && strcmp(r->kind, "connect") == 0) ||
		  (r->method != NULL && strcmp(r->method, "CONNECT") == 0) || r->scheme == NULL;
	why = r->rule != NULL ? r->rule : r->reason != NULL ? r->reason : "refused";
	put_str(line, sizeof(line), &n, "passavant: blocked ");
	put_str(line, sizeof(line), &n, r->method != NULL ? r->method : connect ? "CONNECT" : "?");
	put_str(line, sizeof(line), &n, " ");
	if (!connect) {
		put_str(line, sizeof(line), &n, r->scheme);
		put_str(line, sizeof(line), &n, "://");
	}
	if (r->host != NULL) {
		bool v6 = strchr(r->host, ':') != NULL;
		bool dflt = !connect && ((strcmp(r->scheme, "https") == 0 && r->port == 443) ||
					 (strcmp(r->scheme, "http") == 0 && r->port == 80));
		if (v6)
			put_str(line, sizeof(line), &n, "[");
		put_str(line, sizeof(line), &n, r->host);
		if (v6)
			put_str(line, sizeof(line), &n, "]");
		if (!dflt && r->port != 0) {
			(void)snprintf(port, sizeof(port), ":%u", (unsigned)r->port);
			put_str(line, sizeof(line), &n, port);
		}
	}
	if (!connect && r->target != NULL) {
		/* Long targets are cut: the audit log has them in full. */
		size_t tl = r->target_len > 200 ? 200 : r->target_len;
		put_sanitized(line, sizeof(line), &n, r->target, tl);
		if (tl < r->target_len)
			put_str(line, sizeof(line), &n, "...");
	}
	put_str(line, sizeof(line), &n, ": ");
	put_str(line, sizeof(line), &n, why);
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line, like log.c: no interleaving with the command. */
	(void)fwrite(line, 1, n, stderr);
	(void)fflush(stderr);
}

/* SIGCHLD (and one forced check at start): has the sandbox ended? */
static void run_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct run *run = arg;
	int st;

	(void)sig;
	(void)what;
	if (run->ended)
		return;
	switch (sbx_try_wait(run->sbx, &st)) {
	case 1:
		run->ended = true;
		run->status = st;
		proxy_stop(run->px);
		break;
	case 0:
		break;
	default:
		log_warn("run: waiting for the sandbox");
		(void)sbx_kill(run->sbx, SIGKILL);
		proxy_stop(run->px);
		break;
	}
}

/*
 * Is our process group the foreground group of our terminal? Then a
 * SIGINT most likely came from ^C, which the kernel sent to the whole
 * group: the sandbox's init is in it and passes it on (or the command,
 * still in it, got it directly).
 */
static bool terminal_foreground(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return tcgetpgrp(fd) == getpgrp();
	return false;
}

/* SIGINT, SIGTERM and SIGHUP go to the command (SPEC §2), not to the proxy:
 * it stops when the command ends. */
static bool run_signal_hook(void *arg, int sig)
{
	struct run *run = arg;

	/* ^C: delivered once, by the kernel and the init (docs/run.md). */
	if (sig == SIGINT && terminal_foreground())
		return true;
	if (!run->ended && sbx_kill(run->sbx, sig) < 0)
		log_warn("run: cannot pass signal %d to the command", sig);
	return true;
}

/* The options of cmd_run() that have no short form. */
enum { OPT_KEEP_GIT_CONFIG = 256 };

/* sbx_git_report_fn of the post-run git check: one stderr line per
 * control file (path and setting, never contents; sanitised like the
 * refusal lines), one audit record (kind "git"). */
static void run_git_report(void *arg, const struct sbx_git_finding *f)
{
	struct run *run = arg;
	struct audit_rec r;
	audit_t *audit = proxy_audit(run->px);
	char line[2048];
	size_t n = 0;

	if (f->setting == NULL) {
		put_str(line, sizeof(line), &n, "passavant: cannot check ");
		put_str(line, sizeof(line), &n, f->path);
		put_str(line, sizeof(line), &n, " for planted git programs: ");
		put_str(line, sizeof(line), &n, f->error != NULL ? f->error : "?");
		put_str(line, sizeof(line), &n, "; look for planted hooks and config there before running git");
	} else {
		put_str(line, sizeof(line), &n,
			f->moved_to != NULL ? "passavant: quarantined "
			: f->error != NULL  ? "passavant: cannot quarantine "
					    : "passavant: kept (--keep-git-config) ");
		put_str(line, sizeof(line), &n, f->path);
		put_str(line, sizeof(line), &n, ": ");
		put_str(line, sizeof(line), &n, f->setting);
		if (f->moved_to != NULL) {
			put_str(line, sizeof(line), &n, " (moved to ");
			put_str(line, sizeof(line), &n, f->moved_to);
			put_str(line, sizeof(line), &n, ")");
		} else if (f->error != NULL) {
			put_str(line, sizeof(line), &n, ": ");
			put_str(line, sizeof(line), &n, f->error);
			put_str(line, sizeof(line), &n, "; move it aside before running git or opening an editor or agent there");
		}
	}
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)fwrite(line, 1, n, stderr);
	(void)fflush(stderr);
	if (audit == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.kind = "git";
	r.target = f->path;
	r.target_len = strlen(f->path);
	r.decision = f->setting != NULL && f->moved_to == NULL && f->error == NULL ? "allow" : "deny";
	r.reason = f->setting != NULL ? f->setting : f->error;
	r.rule = f->setting == NULL ? "git check failed"
		 : f->moved_to != NULL ? "quarantined"
		 : f->error != NULL    ? "quarantine failed"
				       : "--keep-git-config";
	r.bytes_up = r.bytes_down = r.ms = -1;
	if (audit_write(audit, &r) < 0)
		log_warn("audit write");
}

/*
 * The settings rows of the post-run check: every workspace row of the
 * mandatory table (policy.h), which the mount plan protects only at the
 * top of each writable tree, with the kind the report names. Returns a
 * calloc'd list ended by a NULL path (the caller frees it; the strings
 * are the table's), or NULL after logging.
 */
static struct sbx_ctl_path *run_ctl_paths(void)
{
	struct sbx_ctl_path *ctl = calloc(policy_mandatory_count() + 1, sizeof(*ctl));
	size_t n = 0;

	if (ctl == NULL) {
		log_warn("the list of editor and agent settings to check");
		return NULL;
	}
	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);

		if (!(m->where & POLICY_MAND_WORKSPACE))
			continue;
		ctl[n].path = m->path;
		ctl[n++].kind = strcmp(m->path, ".gitmodules") == 0 ? "git submodule settings"
								     : "editor or agent settings";
	}
	return ctl;
}

/*
 * The post-run check (SPEC §3.3) over the writable trees roots, for
 * what changed since `since`: git control files, and the editor and
 * agent settings of run_ctl_paths() in every directory. Prints and
 * audits each finding (run_git_report); with -v a line with the work
 * done.
 */
static void run_git_check(struct run *run, const struct strv *roots, const struct timespec *since,
			  unsigned verbose)
{
	struct sbx_ctl_path *ctl;
	struct sbx_git_stats st;
	struct timespec t0, t1;
	int rc;

	if (roots->n == 0)
		return;
	memset(&st, 0, sizeof(st));
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	ctl = run_ctl_paths();
	rc = sbx_gitguard_check(strv_list(roots), since, run->keep_git, ctl, run_git_report, run, &st);
	if (ctl == NULL)
		rc = -1;
	free(ctl);
	if (rc < 0)
		log_warnx("the check for planted git programs and editor or agent settings did not "
			  "finish everywhere (lines above, or out of memory): look for planted hooks, "
			  "config and settings (.vscode, .claude, .mcp.json...) before running git or "
			  "opening an editor or agent in the writable trees");
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	if (verbose > 0)
		fprintf(stderr,
			"passavant: git check: %lu directories, %lu git directories, %lu configs, "
			"%lu control files %s, %.1f ms\n",
			st.dirs, st.repos, st.configs, st.findings, run->keep_git ? "kept" : "quarantined",
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* The writable trees the post-run git check walks: each existing
 * allowWrite path of p, canonical. */
static int git_roots(const policy_t *p, struct strv *roots)
{
	char real[PATH_MAX];

	for (size_t i = 0; i < policy_fs_count(p, FS_ALLOW_WRITE); i++)
		if (realpath(policy_fs_path(p, FS_ALLOW_WRITE, i), real) != NULL &&
		    strv_add_unique(roots, real) < 0)
			return -1;
	return 0;
}

/*
 * Builds the sandbox of SPEC §7 for policy p and starts argv in it:
 * filesystem lists of the policy plus the launcher's mandatory denies
 * (audit_path, may be NULL, among them),
 * masked files, the environment (proxy and trust variables for the
 * in-sandbox listener, sentinels, denied variables and unnamed ones that
 * look like credentials removed; quiet and verbose as -q and -v say how
 * much is said about those). Returns the
 * running sandbox, or NULL after printing why.
 */
static struct sbx *run_start_sandbox(const policy_t *p, const session_t *sess,
				     const mask_table_t *masks, const char *audit_path, char **argv,
				     bool quiet, unsigned verbose)
{
	struct strv deny_read = {0}, allow_read = {0}, allow_write = {0}, deny_write = {0};
	struct strv protect = {0}, env_add = {0}, env_remove = {0};
	struct sbx_mask *mv = NULL;
	struct sbx_config cfg;
	struct sbx *s = NULL;
	char sessdir[PATH_MAX], trust[PATH_MAX + 16], self[PATH_MAX], err[1024];
	char **proxy_env = NULL;
	size_t i, nfiles;
	ssize_t sl;

	memset(&cfg, 0, sizeof(cfg));
	if (realpath(session_dir(sess), sessdir) == NULL) {
		log_warn("session directory %s", session_dir(sess));
		return NULL;
	}
	(void)snprintf(trust, sizeof(trust), "%s/trust.pem", sessdir);
	if (strv_add_fs(&deny_read, p, FS_DENY_READ) < 0 ||
	    strv_add_fs(&allow_read, p, FS_ALLOW_READ) < 0 ||
	    strv_add_fs(&deny_write, p, FS_DENY_WRITE) < 0)
		goto out;
	/* A missing allowWrite path is left out, with a warning: it would
	 * have to be created on the host to be bound, and leaving it out
	 * only makes the sandbox stricter. */
	for (i = 0; i < policy_fs_count(p, FS_ALLOW_WRITE); i++) {
		const char *w = policy_fs_path(p, FS_ALLOW_WRITE, i);
		if (access(w, F_OK) < 0 && errno == ENOENT) {
			log_warnx("allowWrite %s does not exist: not writable in the sandbox "
				  "(create it first to allow writes there)",
				  w);
			continue;
		}
		if (strv_add(&allow_write, w) < 0)
			goto out;
	}
	/* The session directory: readable (trust.pem, the sentinel copies;
	 * under the host's /tmp it is bound into the private /tmp), never
	 * writable. */
	if (strv_add(&allow_read, sessdir) < 0 || strv_add(&protect, sessdir) < 0)
		goto out;
	/* A working directory under the host's /tmp is not in the sandbox's
	 * view (its /tmp is private): bind it in read-only, as it would be
	 * seen anywhere else, unless a denyRead covers it. (An allowWrite
	 * "." under /tmp is bound writable by the sandbox itself.) */
	if (getcwd(self, sizeof(self)) != NULL && strncmp(self, "/tmp/", 5) == 0) {
		bool skip = false;
		for (i = 0; i < deny_read.n; i++)
			skip = skip || path_under(self, deny_read.v[i]);
		/* Under an allowWrite: bound writable already. */
		for (i = 0; i < allow_write.n; i++)
			skip = skip || path_under(self, allow_write.v[i]);
		if (!skip && strv_add(&allow_read, self) < 0)
			goto out;
	}
	/* The audit file (also when named by --audit, which the policy's
	 * own denies do not know): the command must not rewrite the record
	 * of its own egress. audit_open() has created it. */
	if (audit_path != NULL && realpath(audit_path, self) != NULL && strv_add(&protect, self) < 0)
		goto out;
	/* Our own binary: the next run would trust what the command wrote. */
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl > 0) {
		self[sl] = '\0';
		if (self[0] == '/' && strv_add(&protect, self) < 0)
			goto out;
	}
	/* Git control files, agent and editor settings that run commands: in
	 * the working directory and in every writable directory, and in the
	 * repositories they are in. */
	if (protect_dir(&protect, ".") < 0)
		goto out;
	for (i = 0; i < allow_write.n; i++)
		if (protect_dir(&protect, allow_write.v[i]) < 0)
			goto out;
	/* Masked files: the command sees the sentinel copy, read-only. */
	nfiles = mask_table_file_count(masks);
	if (nfiles > 0) {
		mv = calloc(nfiles, sizeof(*mv));
		if (mv == NULL) {
			log_warn("run");
			goto out;
		}
	}
	for (i = 0; i < nfiles; i++) {
		const char *copy = NULL;
		const char *host = mask_table_file_copy(masks, i, &copy);
		if (host == NULL || copy == NULL) {
			log_warnx("masked file %s: no sentinel copy; the command was not started",
				  host != NULL ? host : "?");
			goto out;
		}
		mv[cfg.n_masks].host_path = host;
		mv[cfg.n_masks].sentinel_path = copy;
		cfg.n_masks++;
	}
	/* Environment: SPEC §7 variables, then the sentinels; mode: deny
	 * variables removed. */
	proxy_env = sbx_proxy_env(SBX_DEFAULT_PORT, trust);
	if (proxy_env == NULL) {
		log_warn("run: environment");
		goto out;
	}
	for (i = 0; proxy_env[i] != NULL; i++)
		if (strv_add(&env_add, proxy_env[i]) < 0)
			goto out;
	if (add_sentinel_env(&env_add, masks) < 0)
		goto out;
	for (i = 0; i < policy_cred_count(p); i++) {
		const struct policy_cred *c = policy_cred(p, i);
		if (c->kind == CRED_ENV && c->mode == CRED_DENY && c->name != NULL &&
		    strv_add(&env_remove, c->name) < 0)
			goto out;
	}
	/* Variables the policy does not name that look like credentials. */
	if (drop_secret_env(&env_remove, &env_add, p, quiet, verbose) < 0)
		goto out;
	cfg.argv = argv;
	cfg.cwd = NULL;
	cfg.deny_read = strv_list(&deny_read);
	cfg.allow_read = strv_list(&allow_read);
	cfg.allow_write = strv_list(&allow_write);
	cfg.deny_write = strv_list(&deny_write);
	cfg.protect = strv_list(&protect);
	cfg.masks = mv;
	cfg.env_base = NULL;
	cfg.env_add = strv_list(&env_add);
	cfg.env_remove = strv_list(&env_remove);
	cfg.allow_unix_sockets = policy_allow_unix_sockets(p);
	cfg.listen_port = SBX_DEFAULT_PORT;
	if (sbx_start(&cfg, &s, err, sizeof(err)) < 0) {
		log_warnx("%s; the command was not started", err);
		s = NULL;
	}
out:
	sbx_env_free(proxy_env);
	free(mv);
	strv_free(&deny_read);
	strv_free(&allow_read);
	strv_free(&allow_write);
	strv_free(&deny_write);
	strv_free(&protect);
	strv_free(&env_add);
	strv_free(&env_remove);
	return s;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"audit", required_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"keep-git-config", no_argument, NULL, OPT_KEEP_GIT_CONFIG},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_path = NULL, *audit_path = NULL;
	struct strv git_trees = {0};
	struct timespec since;
	struct run run = {0};
	session_t *sess = NULL;
	mask_table_t *masks = NULL;
	proxy_policy_t *pp = NULL;
	unsigned verbose = 0;
	bool invalid;
	policy_t *p;
	int c, rc = EXIT_RUN_SETUP;

	while ((c = getopt_long(argc, argv, "+p:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_path = optarg;
			break;
		case 'a':
			audit_path = optarg;
			break;
		case 'v':
			verbose++;
			if (verbose >= 2)
				log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'q':
			run.quiet = true;
			break;
		case OPT_KEEP_GIT_CONFIG:
			run.keep_git = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_RUN_SETUP;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "passavant run: no command given\n");
		usage(stderr);
		return EXIT_RUN_SETUP;
	}
	p = load_policy(policy_path, &invalid);
	if (p == NULL) {
		log_warnx("the command was not started");
		return EXIT_RUN_SETUP;
	}
	sess = session_new(NULL);
	if (sess == NULL) {
		policy_free(p);
		return EXIT_RUN_SETUP;
	}
	/* The proxy's signal handlers are in place before the command
	 * starts, so a SIGTERM from now on is passed on, not lost. */
	run.px = session_proxy(p, sess, &audit_path, &masks);
	if (run.px == NULL)
		goto out;
	/* The env file, for reference inside (the session directory is
	 * visible read-only there): the in-sandbox listener's address. */
	if (session_write_env(sess, "127.0.0.1", SBX_DEFAULT_PORT, masks) < 0)
		goto out;
	/* Everything the child needs is prepared here, before the fork: the
	 * secret arena is wiped in children (MADV_WIPEONFORK). The policy
	 * stays alive through our reference while the config is built. */
	pp = proxy_policy_get(run.px);
	/* The session starts here for the git check: whatever the command
	 * writes gets a ctime at or after this (the coarse clock is the one
	 * the kernel stamps inodes with). */
	if (git_roots(proxy_policy(pp), &git_trees) < 0 ||
	    clock_gettime(CLOCK_REALTIME_COARSE, &since) < 0) {
		proxy_policy_put(pp);
		goto out;
	}
	run.sbx = run_start_sandbox(proxy_policy(pp), sess, masks, audit_path, argv + optind,
				    run.quiet, verbose);
	proxy_policy_put(pp);
	if (run.sbx == NULL)
		goto out;
	if (sbx_exec_error(run.sbx) != NULL)
		log_warnx("%s", sbx_exec_error(run.sbx));
	proxy_set_masks(run.px, masks);
	masks = NULL;
	if (proxy_adopt_listener(run.px, sbx_take_listen_fd(run.sbx)) < 0)
		goto kill;
	proxy_set_observer(run.px, run_observer, &run);
	proxy_set_signal_hook(run.px, run_signal_hook, &run);
	run.sigchld = evsignal_new(proxy_base(run.px), SIGCHLD, run_sigchld_cb, &run);
	if (run.sigchld == NULL || event_add(run.sigchld, NULL) < 0) {
		log_warnx("run: cannot watch SIGCHLD");
		goto kill;
	}
	/* The command may have ended before the handler was in place: check
	 * once from inside the loop (a stop before the loop runs is lost). */
	event_active(run.sigchld, EV_SIGNAL, 1);
	if (proxy_run(run.px) < 0)
		log_warnx("run: the proxy failed; ending the command");
	if (!run.ended) {
		(void)sbx_kill(run.sbx, SIGKILL);
		run.status = sbx_wait(run.sbx);
	}
	rc = run.status < 0 ? EXIT_RUN_SETUP : run.status;
	/* Every process of the sandbox is gone: nothing writes under the
	 * trees while they are checked. Before the proxy goes (its audit). */
	run_git_check(&run, &git_trees, &since, verbose);
	if (verbose > 0)
		fprintf(stderr, "passavant: %lu request%s allowed, %lu refused, %lu credential%s injected\n",
			run.allowed, run.allowed == 1 ? "" : "s", run.refused, run.injected,
			run.injected == 1 ? "" : "s");
	goto out;
kill:
	/* The command was started but cannot reach its proxy: end it. */
	log_warnx("the command was stopped");
	(void)sbx_kill(run.sbx, SIGKILL);
	(void)sbx_wait(run.sbx);
	run_git_check(&run, &git_trees, &since, verbose);
	rc = EXIT_RUN_SETUP;
out:
	strv_free(&git_trees);
	if (run.sigchld != NULL)
		event_free(run.sigchld);
	/* The proxy first (its connections), then the sandbox (reaped,
	 * placeholders removed), then the session directory. */
	proxy_free(run.px);
	sbx_free(run.sbx);
	mask_table_free(masks);
	session_free(sess);
	return rc;
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

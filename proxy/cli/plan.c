/*
 * plan.c - the policy-to-sandbox plan of `passavant run` (plan.h).
 *
 * Order of the work: the policy's lists (`~` expanded) and the HOME rows
 * of the mandatory table; the allowWrite paths that exist; the session
 * directory, the working directory under /tmp, the audit file and our
 * binary; the workspace protections of every writable directory; the
 * masked files; the environment. docs/run.md has the table of what each
 * sbx_config field gets.
 */
#include "proxy/cli/plan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/x509.h>
#include <yaml.h>
#include <zlib.h>

#include "base/envnames.h"
#include "base/fileio.h"
#include "base/fstype.h"
#include "base/knob.h"
#include "base/pathwalk.h"
#include "ca/ca.h"
#include "proxy/log.h"

/* ------------------------------------------------ the environment */

/* SPEC §7: the one table of the variables every command (and the
 * session's env file) gets, in this order. */
enum plan_var_kind { PV_PROXY, PV_FIXED, PV_TRUST };
static const struct {
	const char *name;
	enum plan_var_kind kind;
	const char *value; /* PV_FIXED */
} s7_vars[] = {
	{"HTTP_PROXY", PV_PROXY, NULL},
	{"HTTPS_PROXY", PV_PROXY, NULL},
	{"ALL_PROXY", PV_PROXY, NULL},
	{"GRPC_PROXY", PV_PROXY, NULL},
	{"http_proxy", PV_PROXY, NULL},
	{"https_proxy", PV_PROXY, NULL},
	{"all_proxy", PV_PROXY, NULL},
	{"grpc_proxy", PV_PROXY, NULL},
	{"NO_PROXY", PV_FIXED, "localhost,127.0.0.1,::1"},
	{"no_proxy", PV_FIXED, "localhost,127.0.0.1,::1"},
	{"NODE_USE_ENV_PROXY", PV_FIXED, "1"},
	/* Every variable that names a trust bundle. */
	{"SSL_CERT_FILE", PV_TRUST, NULL},
	{"NIX_SSL_CERT_FILE", PV_TRUST, NULL},
	{"CURL_CA_BUNDLE", PV_TRUST, NULL},
	{"REQUESTS_CA_BUNDLE", PV_TRUST, NULL},
	{"PIP_CERT", PV_TRUST, NULL},
	{"GIT_SSL_CAINFO", PV_TRUST, NULL},
	{"NODE_EXTRA_CA_CERTS", PV_TRUST, NULL},
	{"AWS_CA_BUNDLE", PV_TRUST, NULL},
	{"CARGO_HTTP_CAINFO", PV_TRUST, NULL},
	{"DENO_CERT", PV_TRUST, NULL},
	{"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", PV_TRUST, NULL},
	/* npm's cafile (replaces its roots: trust.pem holds them): the
	 * environment outranks every npmrc, also Debian's global one that
	 * names the system bundle; npm reads both cases. */
	{"NPM_CONFIG_CAFILE", PV_TRUST, NULL},
	{"npm_config_cafile", PV_TRUST, NULL},
	/* Yarn 2+ (caFilePath). */
	{"YARN_CA_FILE_PATH", PV_TRUST, NULL},
	/* gRPC's C core and grpc-js: their own roots otherwise. */
	{"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", PV_TRUST, NULL},
	/* Python httplib2 (Google API clients): certifi otherwise. */
	{"HTTPLIB2_CA_CERTS", PV_TRUST, NULL},
};

int plan_env_vars(struct strv *out, const char *host, uint16_t port, const char *trust_pem)
{
	char url[128], entry[PATH_MAX + 64];
	const char *value;

	(void)snprintf(url, sizeof(url), strchr(host, ':') ? "http://[%s]:%u" : "http://%s:%u", host,
		       (unsigned)port);
	for (size_t i = 0; i < ARRAY_LEN(s7_vars); i++) {
		switch (s7_vars[i].kind) {
		case PV_PROXY:
			value = url;
			break;
		case PV_FIXED:
			value = s7_vars[i].value;
			break;
		case PV_TRUST:
			value = trust_pem;
			break;
		default:
			value = NULL;
			break;
		}
		if (value == NULL)
			continue;
		if (snprintf(entry, sizeof(entry), "%s=%s", s7_vars[i].name, value) >= (int)sizeof(entry)) {
			log_warnx("%s: value too long", s7_vars[i].name);
			return -1;
		}
		if (strv_add(out, entry) < 0)
			return -1;
	}
	return 0;
}

/* The sentinel of every masked variable, as NAME=SENTINEL entries. */
int plan_sentinel_env(struct strv *out, const mask_table_t *t)
{
	for (size_t i = 0; i < mask_table_env_count(t); i++) {
		const char *sentinel, *name = mask_table_env_get(t, i, &sentinel);
		char *entry = NULL;
		int rc;

		if (asprintf(&entry, "%s=%s", name, sentinel) < 0) {
			log_warn("run: masked variable %s", name);
			return -1;
		}
		rc = strv_add(out, entry);
		/* Sentinels only, but wipe the scratch like any credential text. */
		explicit_bzero(entry, strlen(entry));
		free(entry);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/*
 * Closes a notice's stream f (open_memstream()'s, into *text): 0, or -1
 * after logging (what: the notice) with *text freed.
 */
static int notice_close(FILE *f, char **text, const char *what)
{
	if (fclose(f) == 0)
		return 0;
	log_warn("run: %s", what);
	free(*text);
	*text = NULL;
	return -1;
}

/* fix45h: the one list of a notice, "a, b, c and 3 more": the items of
 * names, each after prefix, at most max of them (0: all). The text
 * (the caller frees it), or NULL after logging (out of memory: what). */
static char *notice_list(const struct strv *names, const char *prefix, size_t max, const char *what)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);

	if (f == NULL) {
		log_warn("run: %s", what);
		return NULL;
	}
	for (size_t i = 0; i < names->n && (max == 0 || i < max); i++)
		fprintf(f, "%s%s%s", i ? ", " : "", prefix, names->v[i]);
	if (max != 0 && names->n > max)
		fprintf(f, " and %zu more", names->n - max);
	if (notice_close(f, &text, what) < 0)
		return NULL;
	return text;
}

/* Prints the names of dropped (one line, one write: log.c's rule). */
static int print_dropped(const struct strv *dropped)
{
	char *names = NULL;
	size_t nlen = 0;
	FILE *f = open_memstream(&names, &nlen);

	if (f == NULL) {
		log_warn("run: environment");
		return -1;
	}
	for (size_t i = 0; i < dropped->n; i++)
		fprintf(f, "%s%s", i ? ", " : "", dropped->v[i]);
	if (notice_close(f, &names, "environment") < 0)
		return -1;
	fprintf(stderr,
		"passavant: not passed to the command, as their names or values look like "
		"credentials: %s (to pass one masked, list it in credentials.envVars)\n",
		names);
	free(names);
	return 0;
}

/* Does env_add set the variable name[0..len)? */
static bool env_sets(const struct strv *env_add, const char *name, size_t len)
{
	for (size_t i = 0; i < env_add->n; i++)
		if (strncmp(env_add->v[i], name, len) == 0 && env_add->v[i][len] == '=')
			return true;
	return false;
}

/*
 * SPEC §3.6: the variables of env the command does not get because their
 * name or value looks like a credential and the policy does not name
 * them; added to pl->env_remove. Variables env_add sets anyway (proxy,
 * trust, sentinels) are left to it. Prints one notice line with the
 * names, never a value, unless quiet; with verbose, the rule and each
 * name's reason. Returns 0, or -1 after logging.
 */
static int drop_secret_env(struct run_plan *pl, const policy_t *p, char *const *env, bool quiet,
			   unsigned verbose)
{
	struct strv dropped = {0};
	int rc = -1;

	for (char *const *e = env; e != NULL && *e != NULL; e++) {
		const char *why = policy_env_secret_reason(*e);
		size_t len = strcspn(*e, "=");
		char *name;

		if (why == NULL || len == 0 || policy_env_named(p, *e, len) ||
		    env_sets(&pl->env_add, *e, len))
			continue;
		name = strndup(*e, len);
		if (name == NULL) {
			log_warn("run: environment");
			goto out;
		}
		if (strv_add(&pl->env_remove, name) < 0 || strv_add(&dropped, name) < 0) {
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
	rc = dropped.n == 0 || quiet ? 0 : print_dropped(&dropped);
out:
	strv_free(&dropped);
	return rc;
}

static void say_paths(const struct strv *paths, const char *lead, const char *tail);

/*
 * The variables the command gets from env whose values hold a masked
 * credential's real value in any form the re-masker knows (the value
 * itself under another name, inside a line, in a URL, base64 of
 * "user:VALUE"): the command gets them with the sentinel in its place,
 * set through pl->env_add (round 34 of the attack, M1a: SPEC §4, the
 * sandbox never holds a real value). A variable holding one in a form
 * the re-masker does not rewrite (mask_table_encoded_real(): hex,
 * base32, UTF-16, escaped, split by quotes, ...; the review of round 35,
 * F5; session 36) is dropped. One
 * notice line for each with the names, always (a changed value is not
 * the user's to miss). 0 or -1.
 */
static int remask_env(struct run_plan *pl, const mask_table_t *masks, char *const *env)
{
	struct strv names = {0}, dropped = {0};
	int rc = -1;

	for (char *const *e = env; e != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq != NULL ? (size_t)(eq - *e) : 0, vlen, nlen = 0;
		char *val = NULL, *entry, *name;
		int r, enc;

		if (len == 0 || env_sets(&pl->env_add, *e, len))
			continue;
		name = strndup(*e, len);
		if (name == NULL) {
			log_warn("run: environment");
			goto out;
		}
		if (strv_has(&pl->env_remove, name)) {
			free(name);
			continue;
		}
		vlen = strlen(eq + 1);
		r = mask_table_remask(masks, eq + 1, vlen, &val, &nlen);
		if (r < 0) {
			log_warn("run: re-masking the environment");
			free(name);
			goto out;
		}
		enc = mask_table_encoded_real(masks, r == 1 ? val : eq + 1, r == 1 ? nlen : vlen);
		if (enc < 0) {
			log_warn("run: re-masking the environment");
			free(val);
			free(name);
			goto out;
		}
		if (enc == 1) {
			free(val);
			if (strv_add(&pl->env_remove, name) < 0 || strv_add(&dropped, name) < 0) {
				free(name);
				goto out;
			}
			free(name);
			continue;
		}
		if (r == 0) {
			free(name);
			continue;
		}
		entry = NULL;
		if (asprintf(&entry, "%s=%s", name, val) < 0 || strv_add(&pl->env_add, entry) < 0 ||
		    strv_add(&names, name) < 0) {
			log_warn("run: re-masking the environment");
			free(entry);
			free(val);
			free(name);
			goto out;
		}
		free(entry);
		free(val);
		free(name);
	}
	if (names.n > 0)
		say_paths(&names, "",
			  " held a masked credential's real value: the command gets the sentinel in its place "
			  "(the proxy puts the value back on requests to its injectHosts)");
	if (dropped.n > 0)
		say_paths(&dropped, "",
			  " held a masked credential's real value encoded (hex, base32, base64 of it or of "
			  "its UTF-16, escaped, percent-encoded, split by quotes or a backslash-newline, rot13, reversed, "
			  "in another case, or a part of it): "
			  "not passed to the command");
	rc = 0;
out:
	strv_free(&names);
	strv_free(&dropped);
	return rc;
}

/* Environment: SPEC §7 variables, then the sentinels; the variables the
 * policy denies and the unnamed credential-looking ones removed. */
static bool path_under(const char *path, const char *dir);

/* The value of NAME in the host's environment, or NULL. */
static const char *host_env_get(const struct plan_host *h, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++)
		if (strncmp(h->env[i], name, n) == 0 && h->env[i][n] == '=')
			return h->env[i] + n + 1;
	return NULL;
}

/*
 * TMPDIR, TMP and TEMP of the host's environment (h->env) that point
 * inside a path the plan protects (pl->protect: read-only in the
 * session), typically an entry of a writable home that the HOME class
 * rule covers (TMPDIR=~/tmp, run from ~: mktemp failed, round 30's
 * review): the command gets /tmp instead, the sandbox's private one.
 * Making the entry writable instead would undo the rule for it (a
 * directory the host's tools also use); the command's temporary files
 * are its own.
 *
 * Round 44 (fix44t), the class: a temporary directory the command
 * cannot use as the host's. Also redirected: one outside every
 * writable tree (/var/tmp, a sticky shared directory, read-only in the
 * session; /run/user/UID, XDG_RUNTIME_DIR and /run, the sandbox's
 * small private /run; a directory below /tmp or /dev/shm, which the
 * sandbox's private ones do not have; /dev/shm itself, shared memory
 * rather than a temporary directory), so that every such TMPDIR gets
 * the session's private /tmp and tools (python3's tempfile, mktemp,
 * node's os.tmpdir()) work. Only /tmp itself and a directory of a
 * writable tree that the plan leaves writable are kept. One notice per
 * variable unless quiet, saying which case it is. 0, or -1 after
 * logging (ENOMEM).
 */
static bool shared_real(const char *real, const char *runtime, const char *own_run);
static void shared_runtime(const char *xdg, char runtime[PATH_MAX], char own_run[PATH_MAX]);

static int plan_tmpdir(struct run_plan *pl, const struct plan_host *h, const struct plan_session *s)
{
	static const char *const vars[] = {"TMPDIR", "TMP", "TEMP"};
	char real[PATH_MAX], parent[PATH_MAX], runtime[PATH_MAX], own_run[PATH_MAX], set[16];
	char *slash;

	/* The directory that holds the session directories: plan_protect()
	 * made it read-only when it lies in a writable tree. */
	parent[0] = '\0';
	if (s->dir != NULL && strlen(s->dir) < sizeof(parent)) {
		memcpy(parent, s->dir, strlen(s->dir) + 1);
		slash = strrchr(parent, '/');
		if (slash != NULL && slash != parent)
			*slash = '\0';
		else
			parent[0] = '\0';
	}
	shared_runtime(host_env_get(h, "XDG_RUNTIME_DIR"), runtime, own_run);
	for (size_t v = 0; v < ARRAY_LEN(vars); v++) {
		const char *val = host_env_get(h, vars[v]), *by = NULL, *tree = NULL, *denied = NULL;
		bool shared = false;

		if (val == NULL || val[0] != '/' || realpath(val, real) == NULL || strcmp(real, "/tmp") == 0)
			continue;
		for (size_t j = 0; j < pl->protect.n && by == NULL; j++)
			if (path_under(real, pl->protect.v[j]))
				by = pl->protect.v[j];
		for (size_t j = 0; j < pl->allow_write.n && tree == NULL; j++) {
			char w[PATH_MAX];

			if (realpath(pl->allow_write.v[j], w) != NULL && path_under(real, w))
				tree = pl->allow_write.v[j];
		}
		/* review44t: in a tree but below a policy denyWrite or denyRead
		 * (allowWrite ".", denyWrite "./build-tmp"): read-only or
		 * hidden there, mktemp failed as before round 44. */
		for (size_t j = 0; tree != NULL && by == NULL && denied == NULL &&
				   j < pl->deny_write.n + pl->deny_read.n;
		     j++) {
			const char *d = j < pl->deny_write.n ? pl->deny_write.v[j] : pl->deny_read.v[j - pl->deny_write.n];
			char dr[PATH_MAX];

			if (path_under(real, d) || (realpath(d, dr) != NULL && path_under(real, dr)))
				denied = d;
		}
		if (by == NULL && tree != NULL && denied == NULL)
			continue;
		if (by == NULL && denied == NULL) {
			/* real or a directory above it (/var/tmp/u1000). */
			char up[PATH_MAX], *cut;

			memcpy(up, real, strlen(real) + 1);
			while (!(shared = shared_real(up, runtime, own_run)) && (cut = strrchr(up, '/')) != NULL &&
			       cut != up)
				*cut = '\0';
		}
		(void)snprintf(set, sizeof(set), "%s=/tmp", vars[v]);
		if (strv_add(&pl->env_add, set) < 0) {
			log_warn("run: setting %s for the command", vars[v]);
			return -1;
		}
		if (s->quiet)
			continue;
		if (by != NULL && parent[0] != '\0' && strcmp(by, parent) == 0)
			fprintf(stderr,
				"passavant: %s=%s holds passavant's session directories (this session's and those of "
				"your other running sessions) and lies in the writable tree %s: it is read-only in this "
				"session, and the command's %s is /tmp, the sandbox's own (gone when the command ends); "
				"to give the command a %s of the tree, run passavant with a TMPDIR outside the writable "
				"trees\n",
				vars[v], val, tree != NULL ? tree : by, vars[v], vars[v]);
		else if (by != NULL)
			fprintf(stderr,
				"passavant: %s=%s lies in %s, which is read-only in this session; the command's %s "
				"is /tmp, the sandbox's own (to keep yours, name %s in filesystem.allowWrite)\n",
				vars[v], val, by, vars[v], by);
		else if (denied != NULL)
			fprintf(stderr,
				"passavant: %s=%s lies in %s, which the policy denies (filesystem.denyWrite or "
				"denyRead) in this session; the command's %s is /tmp, the sandbox's own (private to "
				"this session, gone when the command ends)\n",
				vars[v], val, denied, vars[v]);
		else if (shared)
			fprintf(stderr,
				"passavant: %s=%s is in a directory the host's other programs and users share (a "
				"temporary, shared-memory or runtime directory), of which the sandbox has its own or "
				"none; the command's %s is /tmp, the sandbox's own (private to this session, gone when "
				"the command ends)\n",
				vars[v], val, vars[v]);
		else
			fprintf(stderr,
				"passavant: %s=%s is outside filesystem.allowWrite, read-only in this session; the "
				"command's %s is /tmp, the sandbox's own (private to this session, gone when the "
				"command ends; to keep yours, name it in filesystem.allowWrite)\n",
				vars[v], val, vars[v]);
	}
	return 0;
}

/*
 * Round 45 (fix45v): the tools' own temporary directories, where a tool
 * writes what it runs or loads next (go run's and go test's programs in
 * $GOTMPDIR, a JVM library's native code extracted to java.io.tmpdir,
 * npm's $npm_config_tmp, any case, '-' or '_'; the launch scripts'
 * MAVEN_OPTS, GRADLE_OPTS, JAVA_OPTS, SBT_OPTS, ANT_OPTS, whose options
 * come after JAVA_TOOL_OPTIONS' on java's command line: review of round
 * 45): the session's are the
 * sandbox's private /tmp, whatever the host's names (in a writable tree
 * a plant there waited for the host's next run). GOTMPDIR and
 * npm_config_tmp are set to /tmp; JAVA_TOOL_OPTIONS, _JAVA_OPTIONS and
 * JDK_JAVA_OPTIONS holding -Djava.io.tmpdir= get -Djava.io.tmpdir=/tmp
 * after it (the JVM takes a property's last value; the command's own
 * java options come later still). One notice per variable unless
 * quiet, naming the directory (not the options, which may hold a
 * password). 0, or -1 after logging (ENOMEM).
 */
static int plan_tool_tmpdirs(struct run_plan *pl, const policy_t *p, const struct plan_host *h,
			     const struct plan_session *s)
{
	/* the JVM's own, and the launch scripts' that put theirs on java's
	 * command line (mvn, gradle, catalina/java wrappers, sbt, ant) */
	static const char *const jvm[] = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS",
					  "GRADLE_OPTS",       "JAVA_OPTS",     "SBT_OPTS",         "ANT_OPTS"};
	static const char jprop[] = "-Djava.io.tmpdir=";

	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		const char *kv = h->env[i], *eq = strchr(kv, '='), *val, *dir = NULL, *j;
		size_t n, dlen = 0;
		bool java = false;
		char *set;
		int r;

		if (eq == NULL)
			continue;
		n = (size_t)(eq - kv);
		val = eq + 1;
		/* review45v: a value drop_secret_env() drops is left to it
		 * (env_add setting the name kept it, the secret with it) */
		if (policy_env_secret_reason(kv) != NULL && !policy_env_named(p, kv, n))
			continue;
		for (size_t k = 0; k < ARRAY_LEN(jvm) && !java; k++)
			java = n == strlen(jvm[k]) && memcmp(kv, jvm[k], n) == 0;
		if (java) {
			/* the last one, its value up to white space */
			for (j = strstr(val, jprop); j != NULL; j = strstr(j + 1, jprop))
				dir = j + strlen(jprop);
			if (dir != NULL)
				dlen = strcspn(dir, " \t\n");
		} else if ((n == 8 && memcmp(kv, "GOTMPDIR", 8) == 0) ||
			   (n == 14 && strncasecmp(kv, "npm_config", 10) == 0 && (kv[10] == '_' || kv[10] == '-') &&
			    strncasecmp(kv + 11, "tmp", 3) == 0)) {
			dir = val;
			dlen = strlen(val);
		}
		/* unset or empty: the tool's default, os.TempDir() ($TMPDIR) */
		if (dir == NULL || dlen == 0 || (dlen == 4 && memcmp(dir, "/tmp", 4) == 0))
			continue;
		r = java ? asprintf(&set, "%.*s=%s %s/tmp", (int)n, kv, val, jprop) : asprintf(&set, "%.*s=/tmp", (int)n, kv);
		if (r < 0 || strv_add(&pl->env_add, set) < 0) {
			if (r >= 0)
				free(set);
			log_warn("run: setting %.*s for the command", (int)n, kv);
			return -1;
		}
		free(set);
		if (!s->quiet)
			fprintf(stderr,
				"passavant: %.*s names %s%.*s as a tool's temporary directory, where the tool writes "
				"what it runs next; the command's is /tmp, the sandbox's own (private to this session, "
				"gone when the command ends)\n",
				(int)n, kv, java ? "java.io.tmpdir=" : "", (int)dlen, dir);
	}
	return 0;
}

static int plan_env(struct run_plan *pl, const policy_t *p, const mask_table_t *masks,
		    const struct plan_host *h, const struct plan_session *s)
{
	if (plan_tmpdir(pl, h, s) < 0 || plan_tool_tmpdirs(pl, p, h, s) < 0)
		return -1;
	if (plan_env_vars(&pl->env_add, "127.0.0.1", SBX_DEFAULT_PORT, pl->trust) < 0)
		return -1;
	if (masks != NULL && plan_sentinel_env(&pl->env_add, masks) < 0)
		return -1;
	for (size_t i = 0; i < policy_cred_count(p); i++) {
		const struct policy_cred *c = policy_cred(p, i);
		if (c->kind == CRED_ENV && c->mode == CRED_DENY && c->name != NULL &&
		    strv_add(&pl->env_remove, c->name) < 0)
			return -1;
	}
	if (drop_secret_env(pl, p, h->env, s->quiet, s->verbose) < 0)
		return -1;
	return masks != NULL ? remask_env(pl, masks, h->env) : 0;
}

/* ------------------------------------------------ paths */

/*
 * Every path of one filesystem list of the policy. policy_bind() made
 * them absolute and normalised, and added the mandatory denies of SPEC
 * §3.3 that depend on the machine (HOME rows, $PATH and the code-path
 * variables, the policy file, $XDG_CONFIG_HOME/passavant): the lists
 * `passavant check` prints are the ones the sandbox gets.
 */
static int add_fs(struct strv *sv, const policy_t *p, enum policy_fs_list which)
{
	for (size_t i = 0; i < policy_fs_count(p, which); i++)
		if (strv_add_unique(sv, policy_fs_path(p, which, i)) < 0)
			return -1;
	return 0;
}

/* Is path dir itself or inside it? Both absolute and normalised. */
static bool path_under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, dl) == 0 && (path[dl] == '\0' || path[dl] == '/');
}

/*
 * The filesystem lists of the bound policy. A missing allowWrite path is
 * left out, with a warning: it would have to be created on the host to be
 * bound, and leaving it out only makes the sandbox stricter.
 */
static int plan_fs(struct run_plan *pl, const policy_t *p)
{
	struct strv writes = {0};
	int rc = -1;

	for (size_t i = 0; i < policy_fs_named_count(p, FS_DENY_READ); i++)
		if (strv_add_unique(&pl->named, policy_fs_path(p, FS_DENY_READ, i)) < 0)
			goto out;
	for (size_t i = 0; i < policy_cred_count(p); i++) {
		const struct policy_cred *c = policy_cred(p, i);

		if (c->kind == CRED_FILE && c->mode == CRED_DENY && c->path != NULL &&
		    strv_add_unique(&pl->named, c->path) < 0)
			goto out;
	}
	if (add_fs(&pl->deny_read, p, FS_DENY_READ) < 0 ||
	    add_fs(&pl->allow_read, p, FS_ALLOW_READ) < 0 ||
	    add_fs(&pl->deny_write, p, FS_DENY_WRITE) < 0 || add_fs(&writes, p, FS_ALLOW_WRITE) < 0)
		goto out;
	/* Round 43: the package runners' install trees among the mandatory
	 * denies get a directory of the session where they are writable
	 * (the sandbox checks that): npx works in a session whose npm cache
	 * is writable, and the host's _npx is never written. */
	for (size_t i = policy_fs_named_count(p, FS_DENY_WRITE); i < policy_fs_count(p, FS_DENY_WRITE); i++)
		if (policy_mandatory_session(policy_fs_path(p, FS_DENY_WRITE, i)) &&
		    strv_add_unique(&pl->scratch, policy_fs_path(p, FS_DENY_WRITE, i)) < 0)
			goto out;
	for (size_t i = 0; i < writes.n; i++) {
		if (access(writes.v[i], F_OK) < 0 && errno == ENOENT) {
			log_warnx("allowWrite %s does not exist: not writable in the sandbox "
				  "(create it first to allow writes there)",
				  writes.v[i]);
			continue;
		}
		if (strv_add(&pl->allow_write, writes.v[i]) < 0)
			goto out;
	}
	rc = 0;
out:
	strv_free(&writes);
	return rc;
}


/* As node's path.resolve() leaves an absolute path: no empty, '.' or '..'
 * component, no trailing slash (the sandbox refuses a protected path
 * with one, and with it the whole run: review43f). In place. */
static void npmrc_normalize(char *p)
{
	size_t o = 0;

	for (const char *c = p; *c != '\0';) {
		size_t n;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if (n == 0)
			break;
		if (n == 1 && c[0] == '.') {
			c += n;
			continue;
		}
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && p[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			c += n;
			continue;
		}
		p[o++] = '/';
		memmove(p + o, c, n);
		o += n;
		c += n;
	}
	if (o == 0)
		p[o++] = '/';
	p[o] = '\0';
}

/*
 * Round 43: the caches an npmrc moves. npm takes its cache (and so npx's
 * install tree, <cache>/_npx) from a "cache=" line of the project's
 * .npmrc, the user's (~/.npmrc, or the file $npm_config_userconfig
 * names) or the global one, pnpm its cache-dir (and so dlx's tree) from
 * "cache-dir=", as from the variables policy_bind() reads. Each tree an
 * npmrc names this way is write-denied as the home rows' are, and a
 * directory of the session where its cache is writable. Read: the user's
 * files, the global ones (also $npm_config_globalconfig's and
 * $npm_config_prefix/etc/npmrc), pnpm's global rc, and the .npmrc of the
 * working directory and of each directory above it (npm reads the
 * project's at its root: more places denied, never fewer). Values: absolute, "~/...", ${VAR} of the
 * host's environment at the start (${VAR?}: empty when unset), a relative
 * one against the working directory, as node's path.resolve() leaves them
 * (review43f: a trailing slash or a '..' no longer refuses the run).
 * A value that does not fit in PATH_MAX, as written, once its ${VAR}s are
 * put in or once joined to the working directory, refuses the start, as
 * pnpm-workspace.yaml's (review45v): it had been skipped without a word,
 * and a run of "./" (which path.resolve() folds away) named a short tree
 * npm uses that was left writable. The error names the file and the key,
 * never the value (a ${VAR} may hold anything).
 */
static int npmrc_long(const char *file, const char *key, const char *what)
{
	log_warnx("%s: its %s= value is longer than PATH_MAX %s, so the tree npm or pnpm would take as its "
		  "cache (which holds the programs npx and `pnpm dlx` run) is unknown: not started; shorten the "
		  "value",
		  file, key, what);
	return -1;
}

static int npmrc_tree(struct run_plan *pl, const struct plan_host *h, const char *file, const char *key,
		      const char *val, size_t n, const char *sub)
{
	char path[PATH_MAX], out[PATH_MAX];
	size_t o = 0;

	while (n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\t' || val[n - 1] == '\r'))
		n--;
	if (n >= 2 && (val[0] == '"' || val[0] == '\'') && val[n - 1] == val[0]) {
		val++;
		n -= 2;
	}
	if (n >= sizeof(path))
		return npmrc_long(file, key, "as written");
	memcpy(path, val, n);
	path[n] = '\0';
	for (const char *c = path; *c != '\0';) {
		const char *end, *v = NULL;
		char name[PATH_MAX];

		if (o + 1 >= sizeof(out))
			return npmrc_long(file, key, "once its ${VAR}s are put in");

		if (c == path && c[0] == '~' && (c[1] == '/' || c[1] == '\0')) {
			v = h->home;
			c++;
		} else if (c[0] == '$' && c[1] == '{' && (end = strchr(c, '}')) != NULL &&
			   (size_t)(end - c - 2) < sizeof(name)) {
			size_t k = (size_t)(end - c - 2);
			bool opt = k > 0 && c[1 + k] == '?';

			/* npm's envReplace(): ${VAR?} is VAR or nothing,
			 * an unset ${VAR} stays as written. */
			memcpy(name, c + 2, k - (opt ? 1 : 0));
			name[k - (opt ? 1 : 0)] = '\0';
			v = host_env_get(h, name);
			if (v == NULL && !opt) {
				out[o++] = *c++;
				continue;
			}
			c = end + 1;
			if (v == NULL)
				v = "";
		} else {
			out[o++] = *c++;
			continue;
		}
		if (v == NULL)
			return 0;
		for (; *v != '\0'; v++) {
			if (o + 1 >= sizeof(out))
				return npmrc_long(file, key, "once its ${VAR}s are put in");
			out[o++] = *v;
		}
	}
	out[o] = '\0';
	/* A relative value: npm resolves it against its working directory
	 * (path.resolve()), here the session's. */
	if (out[0] != '/' && out[0] != '\0' && h->cwd != NULL && h->cwd[0] == '/') {
		if (snprintf(path, sizeof(path), "%s/%s", h->cwd, out) >= (int)sizeof(path) ||
		    snprintf(out, sizeof(out), "%s", path) >= (int)sizeof(out))
			return npmrc_long(file, key, "once joined to the working directory");
	}
	if (out[0] != '/')
		return 0;
	npmrc_normalize(out);
	if (snprintf(path, sizeof(path), "%s/%s", strcmp(out, "/") == 0 ? "" : out, sub) >= (int)sizeof(path))
		return npmrc_long(file, key, "once its tree's name is added");
	if (strv_add_unique(&pl->protect, path) < 0 || strv_add_unique(&pl->scratch, path) < 0)
		return -1;
	return 0;
}

/* The cache= and cache-dir= lines of the npmrc at path (missing: none). */
static int npmrc_caches_of(struct run_plan *pl, const struct plan_host *h, const char *path)
{
	size_t len = 0;
	char *text = fileio_read(path, 1u << 20, FILEIO_SECRET, &len, NULL);
	int rc = 0;

	/* review45v: as pnpm-workspace.yaml's (pnpm_workspace_of()) */
	if (text == NULL && (errno == EFBIG || errno == ENOMEM || errno == EIO)) {
		log_warnx("%s: not read (%s): its cache and cache-dir, which npm and pnpm read, are unknown; "
			  "not started",
			  path, errno == EFBIG ? "over 1 MiB" : strerror(errno));
		return -1;
	}
	if (text == NULL)
		return 0;
	for (char *line = text; rc == 0 && line != NULL && *line != '\0';) {
		char *nl = strchr(line, '\n');
		size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line), k = 0, e;

		while (k < n && (line[k] == ' ' || line[k] == '\t'))
			k++;
		e = k;
		while (e < n && line[e] != '=' && line[e] != ' ' && line[e] != '\t')
			e++;
		{
			size_t key = e - k, v = e;

			while (v < n && (line[v] == ' ' || line[v] == '\t'))
				v++;
			if (v < n && line[v] == '=') {
				v++;
				while (v < n && (line[v] == ' ' || line[v] == '\t'))
					v++;
				if (key == 5 && strncmp(line + k, "cache", 5) == 0)
					rc = npmrc_tree(pl, h, path, "cache", line + v, n - v, "_npx");
				else if (key == 9 && strncmp(line + k, "cache-dir", 9) == 0)
					rc = npmrc_tree(pl, h, path, "cache-dir", line + v, n - v, "dlx");
			}
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	explicit_bzero(text, len);
	free(text);
	return rc;
}

/* fn on the working directory and each directory above it (npm reads
 * the project's .npmrc at its root, pnpm its pnpm-workspace.yaml).
 * 0, or -1 when fn fails. */
static int each_dir_up(struct run_plan *pl, const struct plan_host *h,
		       int (*fn)(struct run_plan *, const struct plan_host *, const char *))
{
	char dir[PATH_MAX];

	if (h->cwd == NULL || h->cwd[0] != '/' || strlen(h->cwd) >= sizeof(dir))
		return 0;
	strcpy(dir, h->cwd);
	/* up to the root, however deep: each turn cuts a component (a cap
	 * of 128 had left the .npmrc of a project above a deeper working
	 * directory unread) */
	for (;;) {
		char *slash;

		if (fn(pl, h, dir) < 0)
			return -1;
		slash = strrchr(dir, '/');
		if (slash == NULL || strcmp(dir, "/") == 0)
			break;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	return 0;
}

/* The .npmrc of dir (each_dir_up()'s fn). */
static int npmrc_in_dir(struct run_plan *pl, const struct plan_host *h, const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/.npmrc", strcmp(dir, "/") == 0 ? "" : dir) >= (int)sizeof(path))
		return 0;
	return npmrc_caches_of(pl, h, path);
}

/*
 * Round 44: the same trees where the variables and pnpm's workspace file
 * move them. COREPACK_HOME named elsewhere than ~/.cache/node/corepack
 * (policy_mandatory_session() matches the last component: "corepack"),
 * and GOCACHE, go's build cache (go links the objects it finds under an
 * action's hash without checking them again), are the session's own
 * directory where a writable tree holds them: corepack and go build work
 * in the session, the host's stay as they were. pnpm-workspace.yaml's
 * cacheDir (its dlx/, as an npmrc's cache-dir=) and storeDir (a write
 * deny, as $npm_config_store_dir's), in the working directory and each
 * one above it; "~/" is the home, a relative value the file's directory.
 * Values as npmrc_normalize() leaves them. 0, or -1 (ENOMEM; or, review
 * 45v, after logging a name longer than PATH_MAX).
 */
static int session_tree(struct run_plan *pl, const char *dir, size_t n, const char *sub, bool scratch)
{
	char path[PATH_MAX];

	if (n == 0 || dir[0] != '/')
		return 0;
	/* review45v: too long a name refuses (a "./" run the tool folds
	 * away named the same tree; skipping it left that writable) */
	if (snprintf(path, sizeof(path), "%.*s%s%s", (int)n, dir, sub != NULL ? "/" : "", sub != NULL ? sub : "") >=
	    (int)sizeof(path)) {
		log_warnx("run: a tool's cache named in a setting (\"%.*s...\") is longer than PATH_MAX: not "
			  "started; write it without \"./\" or \"dir/..\" runs",
			  (int)(n > 200 ? 200 : n), dir);
		return -1;
	}
	npmrc_normalize(path);
	if (strcmp(path, "/") == 0)
		return 0;
	if (strv_add_unique(&pl->protect, path) < 0 || (scratch && strv_add_unique(&pl->scratch, path) < 0))
		return -1;
	return 0;
}

/*
 * Round 45 (fix45v): pnpm-workspace.yaml read as YAML (libyaml), as pnpm
 * reads it: cacheDir and storeDir are the keys of the first document's
 * top-level mapping, in any form YAML allows (quoted, on the next line,
 * indented, a flow mapping, an anchor, escapes decoded); the same words
 * deeper (catalog:, a comment) are no key. What passavant cannot follow
 * the way pnpm would refuses the start, naming the file (review of round
 * 44: fail closed): a value that is an alias, a block scalar, tagged
 * other than as a string, not a scalar, or holding a NUL; a key that is
 * an alias or the merge key "<<"; a second document; a file libyaml
 * cannot parse. The review of round 44's line reader refused every
 * indented key, a rare false refusal.
 */
struct pnpm_ws {
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_ev;
};

/* The next event of w into w->ev (the previous one freed). 0, or -1. */
static int pnpm_next(struct pnpm_ws *w)
{
	if (w->have_ev)
		yaml_event_delete(&w->ev);
	w->have_ev = yaml_parser_parse(&w->parser, &w->ev) != 0;
	return w->have_ev ? 0 : -1;
}

/* Skips the node whose first event is w->ev (a scalar, an alias, or a
 * whole sequence or mapping). 0, or -1. */
static int pnpm_skip(struct pnpm_ws *w)
{
	unsigned depth = 0;

	do {
		if (w->ev.type == YAML_SEQUENCE_START_EVENT || w->ev.type == YAML_MAPPING_START_EVENT)
			depth++;
		else if (w->ev.type == YAML_SEQUENCE_END_EVENT || w->ev.type == YAML_MAPPING_END_EVENT)
			depth--;
		if (depth == 0)
			return 0;
	} while (pnpm_next(w) == 0 && w->ev.type != YAML_STREAM_END_EVENT);
	return -1;
}

static int pnpm_odd(const char *path, const char *what)
{
	log_warnx("%s: %s, which passavant cannot read as pnpm would (its cacheDir holds the programs `pnpm "
		  "dlx` runs, its storeDir the files linked into every project): not started; write cacheDir and "
		  "storeDir as plain or quoted values at the top of the file (cacheDir: /path)",
		  path, what);
	return -1;
}

static int pnpm_workspace_of(struct run_plan *pl, const struct plan_host *h, const char *dir)
{
	char path[PATH_MAX], val[PATH_MAX];
	struct pnpm_ws w = {.have_ev = false};
	size_t len = 0;
	char *text;
	int rc = 0;

	if (snprintf(path, sizeof(path), "%s/pnpm-workspace.yaml", strcmp(dir, "/") == 0 ? "" : dir) >=
	    (int)sizeof(path))
		return 0;
	text = fileio_read(path, 1u << 20, 0, &len, NULL);
	/* review45v: a file over 1 MiB (a long comment), which pnpm reads
	 * whole, or one not read for want of memory, refuses; a missing or
	 * unreadable one (unreadable to pnpm too) is none */
	if (text == NULL && (errno == EFBIG || errno == ENOMEM || errno == EIO)) {
		log_warnx("%s: not read (%s): its cacheDir and storeDir, which pnpm reads, are unknown; not "
			  "started",
			  path, errno == EFBIG ? "over 1 MiB" : strerror(errno));
		return -1;
	}
	if (text == NULL)
		return 0;
	if (yaml_parser_initialize(&w.parser) == 0) {
		free(text);
		log_warnx("run: reading %s: out of memory", path);
		return -1;
	}
	yaml_parser_set_input_string(&w.parser, (const unsigned char *)text, len);
	/* stream start, then the first document's start, or the end */
	if (pnpm_next(&w) < 0 || pnpm_next(&w) < 0)
		goto bad;
	if (w.ev.type == YAML_STREAM_END_EVENT)
		goto out;
	if (pnpm_next(&w) < 0)
		goto bad;
	if (w.ev.type == YAML_MAPPING_START_EVENT) {
		for (;;) {
			bool cache, store;
			const char *v;
			size_t vl, k;

			if (pnpm_next(&w) < 0)
				goto bad;
			if (w.ev.type == YAML_MAPPING_END_EVENT)
				break;
			if (w.ev.type == YAML_ALIAS_EVENT) {
				rc = pnpm_odd(path, "a top-level key is an alias");
				goto out;
			}
			/* review45v: a key that is a sequence or mapping is
			 * the string of its items to pnpm's reader
			 * ([cacheDir]: x is cacheDir), one tagged otherwise
			 * than as a string is decoded (!!binary) */
			if (w.ev.type != YAML_SCALAR_EVENT) {
				rc = pnpm_odd(path, "a top-level key is a sequence or a mapping");
				goto out;
			}
			if (w.ev.data.scalar.tag != NULL && strcmp((const char *)w.ev.data.scalar.tag, "!") != 0 &&
			    strcmp((const char *)w.ev.data.scalar.tag, YAML_STR_TAG) != 0) {
				rc = pnpm_odd(path, "a top-level key is tagged other than as a string");
				goto out;
			}
			v = (const char *)w.ev.data.scalar.value;
			vl = w.ev.data.scalar.length;
			cache = vl == 8 && memcmp(v, "cacheDir", 8) == 0;
			store = vl == 8 && memcmp(v, "storeDir", 8) == 0;
			if (vl == 2 && memcmp(v, "<<", 2) == 0 && w.ev.data.scalar.plain_implicit) {
				rc = pnpm_odd(path, "a merge key (<<) at the top level");
				goto out;
			}
			if (pnpm_next(&w) < 0)
				goto bad;
			if (!cache && !store) {
				if (pnpm_skip(&w) < 0)
					goto bad;
				continue;
			}
			if (w.ev.type != YAML_SCALAR_EVENT) {
				rc = pnpm_odd(path, w.ev.type == YAML_ALIAS_EVENT ? "cacheDir or storeDir is an alias"
										 : "cacheDir or storeDir is not a string");
				goto out;
			}
			v = (const char *)w.ev.data.scalar.value;
			vl = w.ev.data.scalar.length;
			if (w.ev.data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
			    w.ev.data.scalar.style == YAML_FOLDED_SCALAR_STYLE ||
			    (w.ev.data.scalar.tag != NULL && strcmp((const char *)w.ev.data.scalar.tag, "!") != 0 &&
			     strcmp((const char *)w.ev.data.scalar.tag, YAML_STR_TAG) != 0) ||
			    memchr(v, '\0', vl) != NULL) {
				rc = pnpm_odd(path, "cacheDir or storeDir is a block scalar, tagged, or holds a NUL");
				goto out;
			}
			/* a plain null (~, null) leaves pnpm's default */
			if (w.ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
			    ((vl == 1 && v[0] == '~') || (vl == 4 && (memcmp(v, "null", 4) == 0 || memcmp(v, "Null", 4) == 0 ||
								      memcmp(v, "NULL", 4) == 0))))
				continue;
			if (vl > 0 && v[0] == '~' && v[1] == '/' && h->home != NULL)
				k = (size_t)snprintf(val, sizeof(val), "%s%.*s", h->home, (int)(vl - 1), v + 1);
			else if (vl > 0 && v[0] != '/')
				k = (size_t)snprintf(val, sizeof(val), "%s/%.*s", dir, (int)vl, v);
			else
				k = (size_t)snprintf(val, sizeof(val), "%.*s", (int)vl, v);
			/* review45v: a value too long for val (a "./" run,
			 * which pnpm's path.resolve() folds away) refuses */
			if (vl > 0 && k >= sizeof(val)) {
				rc = pnpm_odd(path, "cacheDir or storeDir is longer than PATH_MAX");
				goto out;
			}
			if (vl > 0 && (rc = session_tree(pl, val, strlen(val), cache ? "dlx" : NULL, cache)) < 0)
				goto out;
		}
	} else if (pnpm_skip(&w) < 0) {
		goto bad;
	}
	/* document end, then the stream's end: a second document is odd */
	if (pnpm_next(&w) < 0 || pnpm_next(&w) < 0)
		goto bad;
	if (w.ev.type != YAML_STREAM_END_EVENT)
		rc = pnpm_odd(path, "more than one YAML document");
	goto out;
bad:
	if (w.parser.error == YAML_MEMORY_ERROR) {
		log_warnx("run: reading %s: out of memory", path);
		rc = -1;
	} else {
		char what[256];

		(void)snprintf(what, sizeof(what), "not YAML passavant can read (line %zu: %s)",
			       w.parser.problem_mark.line + 1, w.parser.problem != NULL ? w.parser.problem : "?");
		rc = pnpm_odd(path, what);
	}
out:
	if (w.have_ev)
		yaml_event_delete(&w.ev);
	yaml_parser_delete(&w.parser);
	free(text);
	return rc;
}

/*
 * Review of round 44: go's build cache where no GOCACHE of the
 * environment names it is as much the host's code: the GOCACHE= of go's
 * environment file (go env -w: $GOENV, else $XDG_CONFIG_HOME/go/env,
 * else ~/.config/go/env; its first GOCACHE= line, as go reads it), else
 * $XDG_CACHE_HOME/go-build, else ~/.cache/go-build (os.UserCacheDir()).
 * With allowWrite ["~/.cache"] the session's objects were linked as
 * found by the host's next go build. Absolute values only (go refuses
 * the others). path: PATH_MAX bytes. true when there is one.
 */
static bool go_cache_default(const struct plan_host *h, char *path)
{
	const char *genv = host_env_get(h, "GOENV"), *cfg = host_env_get(h, "XDG_CONFIG_HOME"),
		   *cache = host_env_get(h, "XDG_CACHE_HOME");
	char file[PATH_MAX];
	bool found = false;
	size_t len = 0;
	char *text = NULL;

	if (genv != NULL && genv[0] != '\0')
		found = strcmp(genv, "off") != 0 && genv[0] == '/' &&
			snprintf(file, sizeof(file), "%s", genv) < (int)sizeof(file);
	else if (cfg != NULL && cfg[0] == '/')
		found = snprintf(file, sizeof(file), "%s/go/env", cfg) < (int)sizeof(file);
	else if (h->home != NULL && h->home[0] == '/')
		found = snprintf(file, sizeof(file), "%s/.config/go/env", h->home) < (int)sizeof(file);
	if (found)
		text = fileio_read(file, 4u << 20, 0, &len, NULL);
	found = false;
	for (char *line = text; line != NULL && *line != '\0' && !found;) {
		char *nl = strchr(line, '\n');
		size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line);

		if (n > 8 && strncmp(line, "GOCACHE=", 8) == 0) {
			/* the first one wins; a relative one go refuses */
			if (line[8] != '/')
				break;
			found = snprintf(path, PATH_MAX, "%.*s", (int)(n - 8), line + 8) < PATH_MAX;
			break;
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	free(text);
	if (found)
		return true;
	if (cache != NULL && cache[0] == '/')
		return snprintf(path, PATH_MAX, "%s/go-build", cache) < PATH_MAX;
	return h->home != NULL && h->home[0] == '/' &&
	       snprintf(path, PATH_MAX, "%s/.cache/go-build", h->home) < PATH_MAX;
}

static int plan_session_homes(struct run_plan *pl, const struct plan_host *h)
{
	static const char *const vars[] = {"COREPACK_HOME", "GOCACHE"};
	const char *gocache = host_env_get(h, "GOCACHE");
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_LEN(vars); i++) {
		const char *v = host_env_get(h, vars[i]);

		if (v != NULL && session_tree(pl, v, strlen(v), NULL, true) < 0)
			return -1;
	}
	if ((gocache == NULL || gocache[0] == '\0') && go_cache_default(h, path) &&
	    session_tree(pl, path, strlen(path), NULL, true) < 0)
		return -1;
	return each_dir_up(pl, h, pnpm_workspace_of);
}

static int plan_npmrc_caches(struct run_plan *pl, const struct plan_host *h)
{
	const char *user = host_env_get(h, "npm_config_userconfig"), *homes[2] = {h->home, h->pw_home};
	char path[PATH_MAX];

	if (plan_session_homes(pl, h) < 0)
		return -1;
	if (user == NULL)
		user = host_env_get(h, "NPM_CONFIG_USERCONFIG");
	if (user != NULL && user[0] == '/' && npmrc_caches_of(pl, h, user) < 0)
		return -1;
	for (size_t i = 0; i < 2; i++)
		if (homes[i] != NULL && snprintf(path, sizeof(path), "%s/.npmrc", homes[i]) < (int)sizeof(path) &&
		    npmrc_caches_of(pl, h, path) < 0)
			return -1;
	if (npmrc_caches_of(pl, h, "/etc/npmrc") < 0 || npmrc_caches_of(pl, h, "/usr/etc/npmrc") < 0 ||
	    npmrc_caches_of(pl, h, "/usr/local/etc/npmrc") < 0)
		return -1;
	/* review43f: the global npmrc a variable names ($npm_config_globalconfig,
	 * else $npm_config_prefix/etc/npmrc), and pnpm's own global rc, where
	 * `pnpm config set --global cache-dir` writes it: $XDG_CONFIG_HOME/pnpm/rc,
	 * else ~/.config/pnpm/rc. */
	{
		static const char *const vars[] = {"npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG"};
		static const char *const prefixes[] = {"npm_config_prefix", "NPM_CONFIG_PREFIX"};
		const char *xdg = host_env_get(h, "XDG_CONFIG_HOME");

		for (size_t i = 0; i < ARRAY_LEN(vars); i++) {
			const char *v = host_env_get(h, vars[i]), *pre = host_env_get(h, prefixes[i]);

			if (v != NULL && v[0] == '/' && npmrc_caches_of(pl, h, v) < 0)
				return -1;
			if (pre != NULL && pre[0] == '/' &&
			    snprintf(path, sizeof(path), "%s/etc/npmrc", pre) < (int)sizeof(path) &&
			    npmrc_caches_of(pl, h, path) < 0)
				return -1;
		}
		if (xdg != NULL && xdg[0] == '/' &&
		    snprintf(path, sizeof(path), "%s/pnpm/rc", xdg) < (int)sizeof(path) &&
		    npmrc_caches_of(pl, h, path) < 0)
			return -1;
		for (size_t i = 0; i < 2; i++)
			if (homes[i] != NULL &&
			    snprintf(path, sizeof(path), "%s/.config/pnpm/rc", homes[i]) < (int)sizeof(path) &&
			    npmrc_caches_of(pl, h, path) < 0)
				return -1;
	}
	return each_dir_up(pl, h, npmrc_in_dir);
}

/*
 * Round 43 of the attack: a writable tree that is a directory the host's
 * other programs and users share. `run` started in /tmp (or /dev/shm,
 * /var/tmp, /run/user/UID) with the default allowWrite ["."] bound the
 * host's own directory over the sandbox's private one: every file there
 * was the command's to change, the running sessions' directories of the
 * same user (their trust.pem, resolver files, sentinel copies), the
 * shared memory of host processes in /dev/shm, the user's systemd unit
 * and agent directories in the runtime directory; and the start-up
 * placeholders were made in the shared /tmp. The family is decided by
 * property, not by name: a world-writable directory with the sticky bit
 * (any shared scratch directory), the runtime directories (/run, the
 * user's XDG_RUNTIME_DIR and /run/user/UID, 0700 and not sticky) and the
 * kernel's own trees. Such a tree is left out of allowWrite, with a
 * warning: the sandbox has private ones (/tmp, /dev/shm, /run), and
 * leaving it out only makes the sandbox stricter. A writable tree that
 * holds one (`/` as the working directory, /var, /run/user) cannot be
 * left out without losing what the user meant: the start is refused.
 */
static const char *const shared_names[] = {
	"/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock", "/run", "/var/run",
	"/run/user", "/dev", "/proc", "/sys", NULL,
};

/* The runtime directories: XDG_RUNTIME_DIR's, /run/user/UID. */
static void shared_runtime(const char *xdg, char runtime[PATH_MAX], char own_run[PATH_MAX])
{
	char name[64];

	if (xdg == NULL || xdg[0] != '/' || realpath(xdg, runtime) == NULL)
		runtime[0] = '\0';
	if ((size_t)snprintf(name, sizeof(name), "/run/user/%u", (unsigned)geteuid()) >= sizeof(name) ||
	    realpath(name, own_run) == NULL)
		own_run[0] = '\0';
}

static bool shared_same(const char *path, const char *runtime, const char *own_run);

static bool shared_real(const char *real, const char *runtime, const char *own_run)
{
	struct stat st;

	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH) != 0 &&
	    (st.st_mode & S_ISVTX) != 0)
		return true;
	for (size_t i = 0; shared_names[i] != NULL; i++) {
		char r[PATH_MAX];

		if (realpath(shared_names[i], r) != NULL && strcmp(r, real) == 0)
			return true;
	}
	return (runtime[0] != '\0' && strcmp(runtime, real) == 0) ||
	       (own_run[0] != '\0' && strcmp(own_run, real) == 0) || shared_same(real, runtime, own_run);
}

/* Whether the directory at path is one of the shared directories by
 * identity (the same dev and inode: a bind mount of /tmp elsewhere). */
static bool shared_same(const char *path, const char *runtime, const char *own_run)
{
	struct stat a, b;

	if (stat(path, &a) < 0 || !S_ISDIR(a.st_mode))
		return false;
	for (size_t i = 0; shared_names[i] != NULL; i++)
		if (stat(shared_names[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return (runtime[0] != '\0' && stat(runtime, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
	       (own_run[0] != '\0' && stat(own_run, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * Review of round 43 (review43e): a mount strictly below real that is a
 * shared directory, a bind mount of /tmp, /dev/shm or the runtime
 * directory elsewhere (cd /srv/x, /srv/x/tmp bound from /tmp: the host's
 * /tmp was writable again, by the recursive bind of the tree), or any
 * sticky world-writable mount. Copied to buf; NULL when none (or
 * mountinfo cannot be read: the named ones were checked).
 */
static const char *shared_mount_inside(const char *real, const char *runtime, const char *own_run,
				       char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	const char *found = NULL;

	if (f == NULL)
		return NULL;
	while (found == NULL && getline(&line, &cap, f) > 0) {
		char *save = NULL, *mp = NULL, *tok = strtok_r(line, " ", &save);
		struct stat st;

		for (int field = 1; tok != NULL && field < 5; field++)
			tok = strtok_r(NULL, " ", &save);
		if (tok == NULL)
			continue;
		mp = tok;
		mountinfo_unescape(mp);
		if (mp[0] != '/' || strcmp(mp, real) == 0 || !path_under(mp, real) || strlen(mp) >= len)
			continue;
		if ((stat(mp, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH) != 0 &&
		     (st.st_mode & S_ISVTX) != 0) ||
		    shared_same(mp, runtime, own_run)) {
			memcpy(buf, mp, strlen(mp) + 1);
			found = buf;
		}
	}
	free(line);
	(void)fclose(f);
	return found;
}

/* The shared directory real holds, or NULL. */
static const char *shared_inside(const char *real, const char *runtime, const char *own_run,
				 char *buf, size_t len)
{
	for (size_t i = 0; shared_names[i] != NULL; i++) {
		char r[PATH_MAX];

		if (realpath(shared_names[i], r) != NULL && strcmp(r, real) != 0 && path_under(r, real) &&
		    strlen(r) < len) {
			memcpy(buf, r, strlen(r) + 1);
			return buf;
		}
	}
	if (runtime[0] != '\0' && strcmp(runtime, real) != 0 && path_under(runtime, real))
		return runtime;
	if (own_run[0] != '\0' && strcmp(own_run, real) != 0 && path_under(own_run, real))
		return own_run;
	return shared_mount_inside(real, runtime, own_run, buf, len);
}

/* A writable tree path (real) holding a shared directory: true after
 * saying so. */
static bool shared_refused(const char *path, const char *real, const char *runtime,
			   const char *own_run)
{
	char held[PATH_MAX];
	const char *in = shared_inside(real, runtime, own_run, held, sizeof(held));

	if (in == NULL)
		return false;
	log_warnx("allowWrite %s holds %s, a directory the host's other programs and users share "
		  "(a temporary, shared-memory or runtime directory), whose files the command could "
		  "change; the command was not started: run from the project's own directory, or name "
		  "narrower paths in filesystem.allowWrite",
		  path, in);
	return true;
}

static int plan_shared(struct run_plan *pl, const struct plan_host *h)
{
	char runtime[PATH_MAX], own_run[PATH_MAX];
	size_t out = 0;

	shared_runtime(host_env_get(h, "XDG_RUNTIME_DIR"), runtime, own_run);
	for (size_t i = 0; i < pl->allow_write.n; i++) {
		char real[PATH_MAX];

		if (realpath(pl->allow_write.v[i], real) == NULL) {
			pl->allow_write.v[out++] = pl->allow_write.v[i];
			continue; /* sbx_start() names a missing one */
		}
		if (shared_real(real, runtime, own_run)) {
			char cwd_real[PATH_MAX];
			bool is_cwd = h->cwd != NULL && realpath(h->cwd, cwd_real) != NULL &&
				      strcmp(cwd_real, real) == 0;

			/* Review (review43e): named in the policy (an imported
			 * sandbox-runtime "/tmp"), the advice to change directory
			 * was beside the point, and "not writable" read as if the
			 * command could not write /tmp at all. */
			const char *named = pl->allow_write.v[i], *arrow = strcmp(real, named) != 0 ? " -> " : "",
				   *shown = strcmp(real, named) != 0 ? real : "";

			if (is_cwd)
				log_warnx("allowWrite %s%s%s (the working directory) is a directory the host's other "
					  "programs and users share (a temporary, shared-memory or runtime directory): "
					  "the host's is not writable in the sandbox, which has its own /tmp, /dev/shm "
					  "and /run (writable, gone when the command ends); to keep what the command "
					  "writes, run from a directory of the project's own (mkdir %s/work && cd %s/work)",
					  named, arrow, shown, real, real);
			else
				log_warnx("allowWrite %s%s%s is a directory the host's other programs and users share "
					  "(a temporary, shared-memory or runtime directory): the host's is not writable "
					  "in the sandbox, which has its own /tmp, /dev/shm and /run (writable, gone when "
					  "the command ends); drop it from filesystem.allowWrite, or name a directory of "
					  "the project's own there",
					  named, arrow, shown);
			free(pl->allow_write.v[i]);
			continue;
		}
		if (shared_refused(pl->allow_write.v[i], real, runtime, own_run)) {
			for (size_t k = i; k < pl->allow_write.n; k++)
				pl->allow_write.v[out++] = pl->allow_write.v[k];
			pl->allow_write.n = out;
			pl->allow_write.v[out] = NULL;
			return -1;
		}
		pl->allow_write.v[out++] = pl->allow_write.v[i];
	}
	pl->allow_write.n = out;
	if (pl->allow_write.v != NULL)
		pl->allow_write.v[out] = NULL;
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
/* The existing entries of root matching a pattern row ("*.code-workspace":
 * a name suffix): the mount plan can cover only what exists; new ones are
 * the post-run check's (sbx_gitguard_check()). */
static int protect_pattern(struct strv *sv, const char *root, const char *pattern)
{
	char pat[PATH_MAX];
	size_t o = 0;
	glob_t gl;
	int rc = 0, g;

	/* The root is a path, not a pattern: a workspace named proj[1]
	 * must not match proj1's files. */
	for (const char *r = root; *r != '\0' && o + 2 < sizeof(pat); r++) {
		if (strchr("*?[]\\", *r) != NULL)
			pat[o++] = '\\';
		pat[o++] = *r;
	}
	if (o + 2 >= sizeof(pat) || snprintf(pat + o, sizeof(pat) - o, "/%s", pattern) >= (int)(sizeof(pat) - o))
		return 0;
	g = glob(pat, GLOB_NOSORT | GLOB_PERIOD, NULL, &gl);
	if (g == GLOB_NOSPACE) {
		log_warnx("out of memory listing %s", pat);
		return -1;
	}
	for (size_t i = 0; g == 0 && i < gl.gl_pathc && rc == 0; i++)
		rc = strv_add_unique(sv, gl.gl_pathv[i]);
	if (g == 0)
		globfree(&gl);
	return rc;
}

/* Whether row m applies under root now: always, except an IF_DIR row
 * whose first directory is not there (POLICY_MAND_WS_IF_DIR; the post-run
 * check moves one made in the session aside). */
/* Whether root/rel[0, len) exists (lstat: a link there is refused at
 * start like any other on a row's way); true when the path is too long
 * to ask (the row then applies, as everywhere). */
static bool exists_under(const char *root, const char *rel, size_t len)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%.*s", root, (int)len, rel) >= (int)sizeof(p))
		return true;
	return lstat(p, &st) == 0;
}

static bool ws_dir_exists(const char *root, const struct policy_mandatory *m)
{
	const char *slash = strchr(m->path, '/');

	if (!(m->where & POLICY_MAND_WS_IF_DIR) || slash == NULL)
		return true;
	return exists_under(root, m->path, (size_t)(slash - m->path));
}

/*
 * Round 37 of the attack (the review's lead): the rows a project keeps
 * as its own files, read-only only where they exist (POLICY_MAND_WS_
 * EXISTING: the version files, .direnv, .run, .project), at the top of
 * the working directory: ordinary work writes them (`pyenv local`, `nvm
 * alias`, `echo 20 > .nvmrc`), and inside the write fails with a bare
 * "Read-only file system" that says nothing of why. One line names them
 * before the command starts, with what each row says runs, and where to
 * change them. Nothing when there is none. 0, or -1 after logging.
 */
static int print_existing_rows_notice(const char *dir)
{
	char real[PATH_MAX], *text = NULL;
	size_t tlen = 0, n = 0;
	FILE *f;

	if (realpath(dir, real) == NULL)
		return 0;
	f = open_memstream(&text, &tlen);
	if (f == NULL) {
		log_warn("run: the notice of the read-only project files");
		return -1;
	}
	/* Names that share what runs (the version files) share its
	 * phrase: "a, b (why), c (why2)". */
	const char *why = NULL;

	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);

		if (!(m->where & POLICY_MAND_WORKSPACE) || !(m->where & POLICY_MAND_WS_EXISTING) ||
		    strchr(m->path, '*') != NULL || !exists_under(real, m->path, strlen(m->path)))
			continue;
		if (n >= 8) {
			n++;
			continue;
		}
		if (why != NULL && strcmp(why, m->why) != 0)
			fprintf(f, " (%s)", why);
		fprintf(f, "%s%s", n ? ", " : "", m->path);
		why = m->why;
		n++;
	}
	if (why != NULL)
		fprintf(f, " (%s)%s", why, n > 8 ? " and more" : "");
	if (notice_close(f, &text, "the notice of the read-only project files") < 0)
		return -1;
	if (n > 0)
		fprintf(stderr,
			"passavant: read-only in the sandbox, as a tool on the host runs what %s names: %s; a write "
			"there fails with \"Read-only file system\" (a rename over it with \"Device or resource "
			"busy\"): change %s on the host\n",
			n == 1 ? "it" : "each", text, n == 1 ? "it" : "them");
	free(text);
	return 0;
}

static int protect_dir(struct strv *sv, const char *dir)
{
	static const char *const git_names[] = {".git/hooks", ".git/config"};
	char real[PATH_MAX], up[PATH_MAX], probe[PATH_MAX];
	const char *roots[2] = {real, NULL};
	struct stat st;
	char *slash;

	if (realpath(dir, real) == NULL)
		return 0; /* missing: sbx_start() reports an allow_write that is */
	/* A file named by allowWrite (~/notes.txt) holds no rows: joined to
	 * it, each row's path had its nearest existing part, the file
	 * itself, covered read-only (118 mounts on it, round 31). */
	if (stat(real, &st) == 0 && !S_ISDIR(st.st_mode))
		return 0;
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
			if (!(m->where & POLICY_MAND_WORKSPACE) || !ws_dir_exists(roots[r], m) ||
			    ((m->where & POLICY_MAND_WS_EXISTING) && !exists_under(roots[r], m->path, strlen(m->path))))
				continue;
			if (strchr(m->path, '*') != NULL ? protect_pattern(sv, roots[r], m->path) < 0
					      : strv_add_join(sv, roots[r], m->path) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * SPEC §3.3, the HOME class rule: when a writable tree holds the home
 * directory home itself (allowWrite "~", a parent of it, or the working
 * directory run from ~), every existing entry of home is write-denied
 * unless an allowWrite entry (or the working directory) names it
 * exactly: the host runs code and reads configuration from the entries
 * of a home, and no list of names can enumerate them (dot files and dot
 * directories, and tool roots with no dot: ~/miniconda3, whose
 * site-packages conda's .bashrc block runs at every shell, ~/go/pkg/mod,
 * ~/perl5, ~/google-cloud-sdk; round 30 of the attack). The table names
 * the ones that do not exist yet, which no mount can cover. An entry
 * that holds an allowWrite entry deeper down (allowWrite "~" and
 * "~/.local/src/proj", or run from ~/work/proj) is not covered whole,
 * which would make that entry read-only too: its own entries are, by
 * the same rule, except the ones on the way. aw: the allowWrite list and
 * the working directory. Each entry of home without a leading dot it
 * covers whole is added to plain when that is not NULL (for the notice).
 */
static int protect_home_entries(struct strv *sv, struct strv *cover, const struct strv *aw, const char *dir,
				struct strv *plain, unsigned depth)
{
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX];
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (d == NULL) {
		log_warn("cannot read %s to protect its entries (check its permissions)", dir);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		bool named = false, holds = false;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		for (size_t i = 0; i < aw->n; i++) {
			named = named || strcmp(aw->v[i], path) == 0;
			holds = holds || (path_under(aw->v[i], path) && strcmp(aw->v[i], path) != 0);
		}
		if (named)
			continue;
		/* One holding an allowWrite entry is a directory (its path
		 * is canonical); past 16 levels it is covered whole. */
		if (holds && depth < 16) {
			rc = protect_home_entries(sv, cover, aw, path, NULL, depth + 1);
			continue;
		}
		/* An entry of a home without a dot that is a symbolic link
		 * (~/Downloads -> /mnt/x) cannot be covered read-only (the
		 * link could be replaced before the mount: links.c refuses
		 * the start), and refusing made run from ~ impossible for
		 * ordinary homes: it stays writable, its identity noted by
		 * sbx_home_before(), and the check after the run moves it
		 * aside when it was replaced or retargeted. What it points to
		 * keeps its own protections (read-only unless allowWrite
		 * holds it). A file without a dot with another hard link is
		 * covered read-only by this name like any other entry
		 * (cover: the mount plan does not refuse it for its other
		 * names, each covered or not by its own rules): left
		 * writable, a write through it changed the same inode the
		 * host runs through another name (~/aliases.sh and
		 * ~/.bashrc.d/aliases.sh, round 30's review). */
		if (plain != NULL && lstat(path, &st) == 0 &&
		    (S_ISLNK(st.st_mode) || (!S_ISDIR(st.st_mode) && st.st_nlink > 1))) {
			if (de->d_name[0] != '.' && S_ISLNK(st.st_mode))
				continue;
			if (de->d_name[0] != '.') {
				if ((rc = strv_add_unique(cover, path)) == 0)
					rc = strv_add(plain, de->d_name);
				continue;
			}
			/* A dot entry is a start-up file or a tool's: the
			 * start is refused, as links.c would, but saying
			 * what to do about a home (before the notice, which
			 * is then not printed). */
			if (S_ISLNK(st.st_mode))
				log_warnx("~/%s is a symbolic link among the dot entries of the home directory %s, "
					  "which is writable in this session; links there cannot be protected: run "
					  "from the project's own directory instead of the home directory, or replace "
					  "the link by what it points to; the command was not started",
					  de->d_name, dir);
			else
				log_warnx("~/%s has %lu hard links and is a dot entry of the home directory %s, "
					  "which is writable in this session; its other names cannot be protected: run "
					  "from the project's own directory instead of the home directory, or replace "
					  "the extra links by copies; the command was not started",
					  de->d_name, (unsigned long)st.st_nlink, dir);
			rc = -1;
			break;
		}
		if ((rc = strv_add_unique(sv, path)) == 0 && plain != NULL && de->d_name[0] != '.')
			rc = strv_add(plain, de->d_name);
	}
	if (rc == 0 && errno != 0) {
		log_warn("cannot read %s to protect its entries", dir);
		rc = -1;
	}
	(void)closedir(d);
	return rc;
}

/* Whether a writable tree of awr holds the canonical path p. */
static bool held_by(const struct strv *awr, const char *p)
{
	for (size_t i = 0; i < awr->n; i++)
		if (path_under(p, awr->v[i]))
			return true;
	return false;
}

/*
 * Whether the HOME class rule of one of the held homes already covers the
 * canonical directory p whole: p lies under an entry of that home (the
 * rule covers every one) that no allowWrite entry names or lies in. Then its entries need no cover of their own (each
 * would be one more mount, and a symbolic link among them would refuse
 * the start for nothing: the directory is read-only already).
 */
static bool covered_whole(const struct strv *awr, char held[][PATH_MAX], size_t nheld, const char *p)
{
	for (size_t k = 0; k < nheld; k++) {
		size_t hl = strlen(held[k]), el;
		char entry[PATH_MAX];
		const char *c;
		bool open = false;

		if (strcmp(held[k], "/") == 0 || strncmp(p, held[k], hl) != 0 || p[hl] != '/')
			continue;
		/* entry: the home's entry p lies in, whole path. */
		c = p + hl + 1;
		el = strchr(c, '/') != NULL ? (size_t)(strchr(c, '/') - c) : strlen(c);
		if (snprintf(entry, sizeof(entry), "%s/%.*s", held[k], (int)el, c) >= (int)sizeof(entry))
			continue;
		for (size_t i = 0; i < awr->n && !open; i++)
			open = path_under(awr->v[i], entry);
		if (!open)
			return true;
	}
	return false;
}

/* qsort(3) order of two entries of a struct strv: by name. */
static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The notice of the HOME class rule for the writable home home: the
 * entries without a leading dot it made read-only (plain, maybe none;
 * sorted here, as readdir(3) order is the filesystem's), the first few by
 * name, and how to write one. Dot entries are not
 * listed: the rule has covered them since the first release. And what
 * the check after the run moves aside: a new file at the top (round 31
 * of the attack), a new dot entry. 0, or -1 after logging (out of
 * memory).
 */
static int print_home_notice(const char *home, struct strv *plain)
{
	char *names = NULL;
	size_t nlen = 0, shown = plain->n > 6 ? 5 : plain->n;
	FILE *f;

	if (plain->n > 1)
		qsort(plain->v, plain->n, sizeof(*plain->v), name_cmp);
	f = open_memstream(&names, &nlen);

	if (f == NULL) {
		log_warn("run: the notice of the HOME class rule");
		return -1;
	}
	for (size_t i = 0; i < shown; i++)
		fprintf(f, "%s~/%s", i ? ", " : "", plain->v[i]);
	if (shown < plain->n)
		fprintf(f, " and %zu more", plain->n - shown);
	if (notice_close(f, &names, "the notice of the HOME class rule") < 0)
		return -1;
	fprintf(stderr,
		"passavant: the home directory %s is writable, but the entries it already had are "
		"read-only in the sandbox, as the host runs code and reads configuration from them: "
		"every dot entry%s%s (to write one, name it in filesystem.allowWrite, or run from "
		"the project's own directory instead of the home directory); a new file at its top "
		"(not a directory), and a new dot entry, are moved aside after the run, as tools "
		"look for their project files in every directory above the one they run in\n",
		home, plain->n > 0 ? ", and " : "", names);
	free(names);
	return 0;
}

/*
 * Round 44: a writable home's read-only placeholders. A write row of the
 * table (policy/mandatory.c) whose place is missing gets an empty
 * placeholder at its first missing component, read-only in the session,
 * so that nothing the host runs later can be made there; a tool that
 * makes its home at its first use (~/.bun, ~/.nvm, ~/.volta) then failed
 * with a bare "Read-only file system". One line names each such
 * directory of the home (a row's first directory, or a row that is a
 * tool's directory: POLICY_MAND_HOME_DIR) and the way to allow it. 0, or
 * -1 after logging (out of memory).
 */
static int print_placeholder_notice(const char *home)
{
	struct strv names = {0};
	char *list = NULL;
	int rc = 0;

	for (size_t i = 0; i < policy_mandatory_count() && rc == 0; i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		size_t n = strcspn(m->path, "/");
		char path[PATH_MAX], name[PATH_MAX];
		struct stat st;

		if (!(m->where & POLICY_MAND_HOME) || m->deny != POLICY_MAND_WRITE ||
		    (m->path[n] != '/' && !(m->where & POLICY_MAND_HOME_DIR)) ||
		    memchr(m->path, '*', n) != NULL || n >= sizeof(name))
			continue;
		memcpy(name, m->path, n);
		name[n] = '\0';
		if (snprintf(path, sizeof(path), "%s/%s", home, name) >= (int)sizeof(path) ||
		    lstat(path, &st) == 0 || errno != ENOENT)
			continue;
		/* go/bin (POLICY_MAND_WS_IF_DIR): no placeholder without ~/go */
		if (m->where & POLICY_MAND_WS_IF_DIR)
			continue;
		rc = strv_add_unique(&names, name);
	}
	if (rc < 0 || names.n == 0)
		goto out;
	qsort(names.v, names.n, sizeof(*names.v), name_cmp);
	if ((list = notice_list(&names, "~/", 0, "the notice of the home's placeholders")) == NULL) {
		rc = -1;
		goto out;
	}
	fprintf(stderr,
		"passavant: the home directory %s is writable, but these tools' directories it does not have "
		"are read-only placeholders in the sandbox, as the host runs code from them later: %s (a tool "
		"making one fails with \"Read-only file system\"; to let it, create the directory on the host "
		"(mkdir %s/%s) and name it in filesystem.allowWrite: the places of code in it stay read-only)\n",
		home, list, home, names.v[0]);
out:
	free(list);
	strv_free(&names);
	return rc;
}

/*
 * Round 31 of the attack: a home that no writable tree holds, whose dot
 * entries are symbolic links into one (stow: ~/.lesskey ->
 * dotfiles/less/.lesskey, ~/.config/kitty -> ../dotfiles/kitty/...,
 * run in ~/dotfiles). The host reads and runs them later, as it does the
 * table's rows, whose links are covered at their targets already: every
 * such link is added to sv (the mount plan covers it read-only where it
 * leads, links.c refusing a way through a link the command can write).
 * The walk lists home's dot entries and dot directories HOME_LINK_LEVELS
 * levels down (~/.config/nvim/lua/x), HOME_LINK_ENTRIES entries in all;
 * past that the start is refused, naming the largest dot entry. The
 * cache (~/.cache; not $XDG_CACHE_HOME, which the environment sets) and
 * package trees (node_modules, npm's _cacache) are not walked:
 * regenerable data, no configuration read through links (a Go build
 * cache passed 200000 entries and refused every run). A link to a
 * directory of the user's own is entered as a directory (~/.config ->
 * /data/cfg; review of round 31; the system's trees, /usr, /var, a nix
 * store, are not), and so is the target of a link into a writable tree when it
 * is a directory, for the links inside it leading elsewhere in the tree
 * (~/.config/kitty -> ../dotfiles/kitty, whose kitty.conf ->
 * ../shared/kitty.conf), at the level of the link (again from a
 * shallower one: entered()). A directory of the user's own that the
 * user cannot list refuses the start; another user's is skipped. A link to a writable tree itself or one
 * of its ancestors (that would make the session's whole tree read-only)
 * is refused too, naming it. A dangling link whose target
 * would lie in a writable tree is added as well (the plan puts a
 * placeholder there, or refuses it). awr: canonical writable trees.
 */
#define HOME_LINK_LEVELS 6
#define HOME_LINK_ENTRIES 400000

/* The canonical path the link lnk's target would have (realpath of its
 * longest existing prefix, then the rest), into out; false when there
 * is none to say (then the link is treated as leading anywhere). */
static bool link_would_be(const char *lnk, char out[PATH_MAX])
{
	char target[PATH_MAX], abs[PATH_MAX], head[PATH_MAX];
	const char *ls = strrchr(lnk, '/'), *slash;
	ssize_t n = readlink(lnk, target, sizeof(target) - 1);
	size_t cut;

	if (n < 0 || ls == NULL)
		return false;
	target[n] = '\0';
	if (snprintf(abs, sizeof(abs), "%.*s%s%s", target[0] == '/' ? 0 : (int)(ls - lnk), lnk,
		     target[0] == '/' ? "" : "/", target) >= (int)sizeof(abs))
		return false;
	for (cut = strlen(abs); (slash = memrchr(abs, '/', cut)) != NULL;) {
		cut = (size_t)(slash - abs);
		memcpy(head, abs, cut);
		head[cut] = '\0';
		if (realpath(cut == 0 ? "/" : head, out) == NULL)
			continue;
		/* A ".." after a missing component: unknown. */
		if (strstr(abs + cut, "/..") != NULL)
			return false;
		if (strcmp(out, "/") == 0)
			out[0] = '\0';
		if (strlen(out) + strlen(abs + cut) >= PATH_MAX)
			return false;
		strcat(out, abs + cut);
		return true;
	}
	return false;
}

/* One walk of protect_home_links(): sv and awr as there; home: the
 * canonical home; prot: the protected target directory being walked (the
 * links inside it need nothing), or NULL; entered: canonical directories
 * entered through a link (each once). */
struct home_walk {
	struct strv *sv;
	const struct strv *awr;
	const char *home;
	const char *prot;
	struct strv entered;
	unsigned *entered_at; /* per entered path: the shallowest level it was walked from */
	size_t entries;
	char cache[PATH_MAX];	/* canonical $XDG_CACHE_HOME inside the home, or "" */
	char top[NAME_MAX + 1]; /* the dot entry walked; and the largest walked */
	size_t top_from;	/* entries when it began */
	char big[NAME_MAX + 1];
	size_t big_n;
};

/* Whether the canonical c is the home's cache directory (~/.cache, or
 * $XDG_CACHE_HOME inside the home): not walked. */
static bool home_cache(const struct home_walk *hw, const char *c)
{
	size_t hl = strlen(hw->home);

	return (hw->cache[0] != '\0' && strcmp(c, hw->cache) == 0) ||
	       (strncmp(c, hw->home, hl) == 0 && strcmp(c + hl, "/.cache") == 0);
}

static int home_walk_dir(struct home_walk *hw, const char *dir, unsigned level);

/* Whether the directory real, reached through a link, is to be walked
 * from level: 1 when it was not walked yet or only from deeper (a
 * deeper walk lists fewer of its levels: the third review of round 31
 * linked one directory four levels down and at the top, and the first,
 * read first, hid what the second reaches), 0 when walked from as high
 * already, -1 (out of memory). */
static int entered(struct home_walk *hw, const char *real, unsigned level)
{
	unsigned *nv;

	for (size_t i = 0; i < hw->entered.n; i++)
		if (strcmp(hw->entered.v[i], real) == 0) {
			if (hw->entered_at[i] <= level)
				return 0;
			hw->entered_at[i] = level;
			return 1;
		}
	nv = realloc(hw->entered_at, (hw->entered.n + 1) * sizeof(*nv));
	if (nv == NULL)
		return -1;
	hw->entered_at = nv;
	if (strv_add(&hw->entered, real) < 0)
		return -1;
	nv[hw->entered.n - 1] = level;
	return 1;
}

/* The link path found level levels below the home. */
static int home_walk_link(struct home_walk *hw, const char *path, unsigned level)
{
	char real[PATH_MAX];
	const char *saved = hw->prot;
	struct stat st;
	bool exists = realpath(path, real) != NULL;
	bool known = exists || link_would_be(path, real);
	bool dir = exists && stat(real, &st) == 0 && S_ISDIR(st.st_mode);
	int rc = 0;

	/* The kernel's /proc and /sys hold nothing the session writes
	 * (an allowWrite there is left out or refused: plan_shared()).
	 * Inside the protected target being walked: read-only with it.
	 * Round 44 (fix44t): /tmp and /dev are judged like any other
	 * place. The sandbox's own are private, but a writable tree can
	 * lie in the host's (run from /tmp/proj or /dev/shm/proj: the
	 * tree is bound into the private one), and ~/.bashrc ->
	 * /tmp/proj/rc was then the command's to write, for the host's
	 * next shell to read. */
	if (known && (path_under(real, "/proc") || path_under(real, "/sys") ||
		      (hw->prot != NULL && path_under(real, hw->prot))))
		return 0;
	if (known && !held_by(hw->awr, real)) {
		/* A directory out of the writable trees (~/.config ->
		 * /data/cfg, ~/.config/nvim -> /srv/nvim): the host reads
		 * through it as through a dot directory; its links are
		 * walked the same (review of round 31). Not the home or an
		 * ancestor of it: the walk is there already. */
		/* Only the user's own: the system's trees (~/.sysusr -> /usr,
		 * wine's d: -> /usr, a nix store) hold no link the session
		 * planted or could aim, and walking them cost up to 0.9 s a
		 * start (the third review of round 31). */
		if (!dir || st.st_uid != geteuid() || level + 1 >= HOME_LINK_LEVELS || path_under(hw->home, real) ||
		    home_cache(hw, real) || entered(hw, real, level + 1) != 1)
			return 0;
		hw->prot = NULL;
		rc = home_walk_dir(hw, real, level + 1);
		hw->prot = saved;
		return rc;
	}
	for (size_t i = 0; known && i < hw->awr->n; i++) {
		if (!path_under(hw->awr->v[i], real))
			continue;
		log_warnx("%s is a symbolic link to %s, which holds %s, writable in this session: the "
			  "host reads what that link leads to, which cannot be made read-only without "
			  "the session's whole tree; point the link at the file it means, or run from "
			  "another directory; the command was not started",
			  path, real, hw->awr->v[i]);
		return -1;
	}
	/* Missing: where it would be made (a placeholder there). Inside a
	 * protected target: the link is in a writable tree (read-only
	 * with the target, but links.c refuses a way through it), its
	 * target is named. */
	if (strv_add_unique(hw->sv, known && (!exists || hw->prot != NULL) ? real : path) < 0)
		return -1;
	/* A directory of the writable tree made read-only (~/.config/kitty
	 * -> ../dotfiles/kitty): its own links lead on, into the tree
	 * (kitty/kitty.conf -> ../shared/kitty.conf; review of round 31). */
	if (!dir || level + 1 >= HOME_LINK_LEVELS)
		return 0;
	if ((rc = entered(hw, real, level + 1)) != 1)
		return rc;
	hw->prot = real;
	rc = home_walk_dir(hw, real, level + 1);
	hw->prot = saved;
	return rc;
}

/* sbx_package_links()'s callback for home_walk_package(). */
struct home_package {
	struct home_walk *hw;
	unsigned level;
	bool failed; /* home_walk_link() failed and said why */
};

static int home_package_link(const char *path, void *arg)
{
	struct home_package *hp = arg;

	if (home_walk_link(hp->hw, path, hp->level) == 0)
		return 0;
	hp->failed = true;
	return -1;
}

/* The package tree path, an entry level levels below the home: its links
 * (and its @scope directories') to home_walk_link(), one level below;
 * the packages are not entered. 0, or -1 when the command is not to
 * start (said). */
static int home_walk_package(struct home_walk *hw, const char *path, unsigned level)
{
	struct home_package hp = {hw, level + 1, false};
	struct stat st;
	int e;

	if (sbx_package_links(path, home_package_link, &hp) == 0)
		return 0;
	if (hp.failed)
		return -1;
	e = errno;
	/* Another user's, as in home_walk_dir(). */
	if (e == EACCES && lstat(path, &st) == 0 && st.st_uid != geteuid())
		return 0;
	errno = e;
	log_warn("cannot list %s to check the links among the home's dot entries", path);
	return -1;
}

static int home_walk_dir(struct home_walk *hw, const char *dir, unsigned level)
{
	struct dirent *de;
	char path[PATH_MAX];
	int rc = 0;
	DIR *d;

	/* A writable directory (allowWrite "~/.cache"): the command can
	 * make or change links there anyway; what the host does with them
	 * is the HOME class rule's and the check after the run's. A
	 * protected target is walked though. */
	if (hw->prot == NULL && held_by(hw->awr, dir))
		return 0;
	d = opendir(dir);
	if (d == NULL) {
		struct stat st;
		int e = errno;

		if (e == ENOENT)
			return 0;
		/* Not listable (a 0311 directory): the host's programs still
		 * open the links in it by name; one the command can neither
		 * enter nor chmod (another user's) holds nothing for it. */
		/* Another user's (root's 0711 or 1733 directories, /var's
		 * reached through a link): the command cannot make or aim a
		 * link there, and chmod is not the user's to give (the third
		 * review of round 31). */
		if (e == EACCES && lstat(dir, &st) == 0 && st.st_uid != geteuid())
			return 0;
		errno = e;
		if (e == EACCES) {
			log_warnx("cannot list %s to check the links among the home's dot entries: programs still "
				  "open the links in it by name; give it read permission (chmod u+r %s) or remove "
				  "it; the command was not started",
				  dir, dir);
			return -1;
		}
		log_warn("cannot list %s to check the links among the home's dot entries", dir);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (level == 0 && de->d_name[0] != '.'))
			continue;
		if (level == 0) {
			if (hw->entries - hw->top_from > hw->big_n) {
				hw->big_n = hw->entries - hw->top_from;
				memcpy(hw->big, hw->top, sizeof(hw->big));
			}
			snprintf(hw->top, sizeof(hw->top), "%s", de->d_name);
			hw->top_from = hw->entries;
		}
		if (++hw->entries > HOME_LINK_ENTRIES) {
			bool cur = hw->entries - hw->top_from >= hw->big_n;

			log_warnx("the home's dot entries hold more than %d entries %d levels down, %zu of them in "
				  "%s/%s (stopped at %s); their symbolic links into the session's writable trees "
				  "cannot all be checked: remove what is not needed there, or move a cache under "
				  "%s/.cache, which is not walked; the command was not started",
				  HOME_LINK_ENTRIES, HOME_LINK_LEVELS, cur ? hw->entries - hw->top_from : hw->big_n,
				  hw->home, cur ? hw->top : hw->big, dir, hw->home);
			rc = -1;
			break;
		}
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		/* The cache: regenerable data, which no program reads its
		 * configuration from through a link (a Go build cache holds
		 * 200000 files: review of round 31). */
		if (home_cache(hw, path))
			continue;
		/* Packages (an editor's extensions' node_modules, npm's
		 * _cacache): hundreds of thousands of entries six levels
		 * down, 1.7 s a start in the third review of round 31: not
		 * walked, only their links looked at (an `npm link`ed
		 * package is code the host loads through one: round 32). */
		if (sbx_package_tree(de->d_name)) {
			rc = home_walk_package(hw, path, level);
			continue;
		}
		if (type == DT_UNKNOWN) {
			if (lstat(path, &st) < 0)
				continue;
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type == DT_DIR) {
			if (level + 1 < HOME_LINK_LEVELS)
				rc = home_walk_dir(hw, path, level + 1);
		} else if (type == DT_LNK) {
			rc = home_walk_link(hw, path, level);
		}
	}
	if (rc == 0 && errno != 0) {
		log_warn("cannot list %s to check the links among the home's dot entries", dir);
		rc = -1;
	}
	(void)closedir(d);
	return rc;
}

/* The walk of the canonical home's dot entries (above); cache: the
 * command's $XDG_CACHE_HOME, or NULL. */
static int protect_home_links(struct strv *sv, const struct strv *awr, const char *home, const char *cache)
{
	struct home_walk hw = {.sv = sv, .awr = awr, .home = home};
	int rc;

	/* ~/.cache only: $XDG_CACHE_HOME comes from the environment, which a
	 * project's .envrc sets (XDG_CACHE_HOME=~/.config skipped the walk
	 * of ~/.config: the third review of round 31). */
	(void)cache;
	hw.cache[0] = '\0';
	rc = home_walk_dir(&hw, home, 0);

	strv_free(&hw.entered);
	free(hw.entered_at);
	return rc;
}

/*
 * Round 45 (fix45h), the class of the homes of others a look would
 * mount or wait on: a home of another user on an automounted or network
 * filesystem (autofs, NFS, CIFS, a FUSE mount such as sshfs) was
 * resolved and its stores stat'ed at every start, which mounted it (an
 * autofs map) or waited on its server (down: every `passavant run`
 * hung). The host's mounts are read once from /proc/self/mountinfo; a
 * path is looked at only while the mount it lies on (the longest mount
 * point above it, the top one of a stack) is of a local filesystem.
 * Each mount point is kept as "R/path" (a filesystem that is not cheap
 * to look at) or "L/path".
 */
struct host_mounts {
	struct strv at;
	bool unread; /* mountinfo could not be read: nothing is cheap */
};

/* Whether a filesystem type is one whose lookups may mount (autofs) or
 * wait on another machine or process (network and cluster filesystems,
 * FUSE and its kin, whose daemon may hang). Round 46 (fix46h): every
 * type but the local ones of base/fstype.h's allowlist, one unknown
 * included (it was a list of the remote ones: a type missing from it,
 * orangefs's kin or a new network filesystem, was looked into). */
static bool fs_type_remote(const char *type)
{
	return !fstype_local(type);
}

/* The mounts of the mountinfo text f into m. 0, or -1 (ENOMEM, said). */
static int host_mounts_parse(struct host_mounts *m, FILE *f)
{
	char *line = NULL, entry[PATH_MAX + 2];
	size_t cap = 0;
	int rc = 0;

	while (rc == 0 && getline(&line, &cap, f) > 0) {
		char *save = NULL, *mp, *type, *tok = strtok_r(line, " \n", &save);

		/* id parent dev root MOUNTPOINT options [optional...] - TYPE source super */
		for (int field = 1; tok != NULL && field < 5; field++)
			tok = strtok_r(NULL, " \n", &save);
		if ((mp = tok) == NULL)
			continue;
		while ((tok = strtok_r(NULL, " \n", &save)) != NULL && strcmp(tok, "-") != 0)
			;
		if (tok == NULL || (type = strtok_r(NULL, " \n", &save)) == NULL)
			continue;
		mountinfo_unescape(mp);
		if (mp[0] != '/' || strlen(mp) >= PATH_MAX)
			continue;
		(void)snprintf(entry, sizeof(entry), "%c%s", fs_type_remote(type) ? 'R' : 'L', mp);
		rc = strv_add(&m->at, entry);
	}
	free(line);
	if (rc < 0)
		log_warn("run: the host's mounts");
	return rc;
}

/* The host's mounts, read once. 0, or -1 (ENOMEM, said); one that cannot
 * be read leaves m->unread set (every path of another's home is then
 * taken as not cheap to look at: fail closed). */
static int host_mounts_read(struct host_mounts *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int rc;

	memset(m, 0, sizeof(*m));
	if (f == NULL) {
		m->unread = true;
		return 0;
	}
	rc = host_mounts_parse(m, f);
	(void)fclose(f);
	return rc;
}

/* Whether the absolute, canonical-so-far path lies on a mount that is
 * not cheap to look at (the longest mount point above it or at it; the
 * last listed of equals, which is on top). */
static bool host_mounts_remote(const struct host_mounts *m, const char *path)
{
	size_t best = 0;
	bool remote;

	if (m == NULL)
		return false; /* the caller knows it is live: in the session's use */
	remote = m->unread;
	for (size_t i = 0; i < m->at.n; i++) {
		const char *mp = m->at.v[i] + 1;
		size_t len = strlen(mp);

		if (len >= best && path_under(path, mp)) {
			best = len;
			remote = m->at.v[i][0] == 'R';
		}
	}
	return remote;
}

/* What path_look() found. */
enum path_look {
	LOOK_NONE,   /* not there (or too long, or a loop of links) */
	LOOK_LOCAL,  /* resolved on local filesystems: out canonical, st its lstat */
	LOOK_REMOTE, /* reaches a mount not cheap to look at: out is the path as far as it was
		      * resolved, the rest as written, nothing looked at there */
};

/* path_look()'s walk: the path walked (cur) and the mounts. */
struct look_walk {
	const struct host_mounts *m;
	const char *cur;
};

/* The canonical path of cur up to end into out (PATH_MAX): the walk
 * passed it, so it holds no link and no ".." (the walk stops at both):
 * only "//" and "." to drop. false when too long. */
static bool look_prefix(const char *cur, const char *end, char *out)
{
	size_t n = (size_t)(end - cur);

	if (n >= PATH_MAX)
		return false;
	memcpy(out, cur, n);
	out[n] = '\0';
	npmrc_normalize(out);
	return true;
}

/* PATHWALK_BEFORE: a component on a mount not cheap to look at is not
 * looked up (the walk stops before it: nothing of it opened). */
static enum pathwalk_act look_step(void *ctx, struct pathwalk_step *s)
{
	const struct look_walk *lw = ctx;
	char cand[PATH_MAX];

	if (!s->before)
		return PATHWALK_GO;
	if (!look_prefix(lw->cur, s->end, cand) || host_mounts_remote(lw->m, cand))
		return PATHWALK_STOP;
	return PATHWALK_GO;
}

/*
 * realpath() of the absolute path on pathwalk() (round 46, fix46h: it
 * was a walk of its own), a component at a time, each one looked at
 * (openat O_PATH|O_NOFOLLOW and fstat, which mount no automount point:
 * PATHWALK_NOAUTOMOUNT) only when host_mounts_remote() says the mount it
 * lies on is local (PATHWALK_BEFORE: a link on the way into /net
 * (autofs) or an NFS mount stops the walk there, before anything of it
 * is looked up). A link stops the walk; its target (readlinkat() from
 * the directory reached) and the rest make the path walked next, from
 * "/"; a ".." the parent of the canonical path so far. out: PATH_MAX.
 */
static enum path_look path_look(const struct host_mounts *m, const char *path, char *out, struct stat *st)
{
	char cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	unsigned links = 0;

	if (path[0] != '/' || strlen(path) >= sizeof(cur))
		return LOOK_NONE;
	memcpy(cur, path, strlen(path) + 1);
	for (;;) {
		struct look_walk lw = {.m = m, .cur = cur};
		struct pathwalk_result res;
		int fd = pathwalk("/", cur, PATHWALK_DOT | PATHWALK_BEFORE | PATHWALK_NOAUTOMOUNT, look_step, &lw, &res);
		const char *at = res.at, *rest;
		size_t n;
		ssize_t tn = -1;

		if (fd >= 0) {
			(void)close(fd);
			if (!look_prefix(cur, cur + strlen(cur), out))
				return LOOK_NONE;
			if (host_mounts_remote(m, out)) /* "/" itself */
				return LOOK_REMOTE;
			*st = res.st;
			return LOOK_LOCAL;
		}
		n = at != NULL ? strcspn(at, "/") : 0;
		rest = at != NULL ? at + n : NULL;
		if (res.end == PATHWALK_LINK && res.fd >= 0 && n <= NAME_MAX) {
			char name[NAME_MAX + 1];

			memcpy(name, at, n);
			name[n] = '\0';
			tn = readlinkat(res.fd, name, target, sizeof(target) - 1);
		}
		if (res.fd >= 0)
			(void)close(res.fd);
		if (res.end == PATHWALK_STOPPED) {
			if (!look_prefix(cur, at, out) ||
			    (size_t)snprintf(next, sizeof(next), "%s/%s", strcmp(out, "/") == 0 ? "" : out, at) >=
				    sizeof(next))
				return LOOK_NONE;
			/* review45h: the rest as written held "//", "." and
			 * ".." (a link to /nfs/bob/./ssh): the sandbox refuses
			 * a denied path with one, and with it every run of
			 * the host. Taken lexically, as the kernel takes it
			 * but for a link on that mount before a "..". */
			npmrc_normalize(next);
			memcpy(out, next, strlen(next) + 1);
			return LOOK_REMOTE;
		}
		if (res.end == PATHWALK_BADNAME && res.err == EINVAL && n == 2) {
			/* "..": the parent of the canonical path so far */
			char *cut;

			if (!look_prefix(cur, at, next))
				return LOOK_NONE;
			cut = strrchr(next, '/');
			if (cut != NULL)
				cut[cut == next ? 1 : 0] = '\0';
			if (strlen(next) + strlen(rest) + 2 > sizeof(next))
				return LOOK_NONE;
			strcat(strcat(next, "/"), rest);
			memcpy(cur, next, strlen(next) + 1);
			continue;
		}
		if (res.end != PATHWALK_LINK || tn <= 0 || ++links > 40)
			return LOOK_NONE;
		target[tn] = '\0';
		if (target[0] == '/') {
			if ((size_t)snprintf(next, sizeof(next), "%s%s", target, rest) >= sizeof(next))
				return LOOK_NONE;
		} else {
			char dir[PATH_MAX];

			if (!look_prefix(cur, at, dir) ||
			    (size_t)snprintf(next, sizeof(next), "%s/%s%s", dir, target, rest) >= sizeof(next))
				return LOOK_NONE;
		}
		memcpy(cur, next, strlen(next) + 1);
	}
}

/*
 * The homes of the host's other users, each once: each home of
 * /etc/passwd (the local file: no directory service is listed at every
 * start, as NSS enumeration of LDAP or SSSD is slow and may hang) and
 * each entry of the usual roots of homes (home_roots: a directory
 * service's users have theirs there), other than the user's own (HOME,
 * the password database's) and "/". A home on a local filesystem goes
 * to out, canonical; one that lies on a mount not cheap to look at
 * (fix45h: path_look()) goes to remote, as far as it was resolved,
 * nothing of it looked at. At most OTHER_USER_HOMES of them, counted on
 * the distinct directories (review44t: the system accounts of
 * /etc/passwd, most with no home, and a home listed by both counted
 * against the limit, which past it left the rest readable without a
 * word); past the limit a warning names it. 0, or -1 after logging.
 */
#define OTHER_USER_HOMES 256

static const char *const home_roots[] = {"/home", "/export/home", "/srv/home", "/var/home",
					 "/Users", "/usr/home", "/home2", NULL};

/* The entries of each root of home_roots, as root/name, into cands (a
 * root on a mount not cheap to look at is listed all the same: an
 * autofs directory lists what it holds without mounting anything; its
 * entries are not looked at). 0, or -1 (ENOMEM, said). */
static int home_root_entries(struct strv *cands, const struct host_mounts *m)
{
	int rc = 0;

	for (size_t r = 0; rc == 0 && home_roots[r] != NULL; r++) {
		char real[PATH_MAX], p[PATH_MAX];
		struct stat st;
		struct dirent *de;
		enum path_look look = path_look(m, home_roots[r], real, &st);
		DIR *d;

		if (look == LOOK_NONE || (look == LOOK_LOCAL && !S_ISDIR(st.st_mode)) || (d = opendir(real)) == NULL)
			continue;
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    (de->d_type != DT_DIR && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN))
				continue;
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", home_roots[r], de->d_name) < sizeof(p))
				rc = strv_add(cands, p);
		}
		(void)closedir(d);
	}
	if (rc < 0)
		log_warn("run: the homes of the other users");
	return rc;
}

/*
 * The user's own homes (HOME, the password database's) in every form a
 * candidate's path_look() may give: realpath() (the home is in the
 * session's use: looked at in full), and path_look()'s own (round 46,
 * fix46h: a HOME reached through a link onto NFS, /home/alice ->
 * /nfs/a/alice with /nfs/a/alice a link on that mount: path_look() stops
 * at the mount, "/nfs/a/alice" as written, where realpath() went on, and
 * the user's own home was taken for another's and denied whole). Empty
 * strings for the forms there are not.
 */
struct own_homes {
	char form[4][PATH_MAX];
};

static void own_homes_get(struct own_homes *o, const struct host_mounts *m, const struct plan_host *h)
{
	const char *homes[2] = {h->home, h->pw_home};

	for (size_t i = 0; i < 2; i++) {
		struct stat st;

		o->form[2 * i][0] = o->form[2 * i + 1][0] = '\0';
		if (homes[i] == NULL)
			continue;
		if (realpath(homes[i], o->form[2 * i]) == NULL)
			o->form[2 * i][0] = '\0';
		if (path_look(m, homes[i], o->form[2 * i + 1], &st) == LOOK_NONE)
			o->form[2 * i + 1][0] = '\0';
	}
}

/* Whether real is one of the user's own homes (exactly), or holds one
 * (*holds). */
static bool own_home_is(const struct own_homes *o, const char *real, bool *holds)
{
	*holds = false;
	for (size_t i = 0; i < 4; i++) {
		if (o->form[i][0] == '\0')
			continue;
		if (strcmp(o->form[i], real) == 0)
			return true;
		if (path_under(o->form[i], real))
			*holds = true;
	}
	return false;
}

/* The candidates cands sorted into out and remote (other_user_homes()).
 * A remote one that holds one of the user's own homes (a shared NFS
 * /home listed as a home of its own) goes to out: not denied whole
 * (the user's home with it), each of its stores denied where path_look()
 * stops, nothing looked at. *over set past OTHER_USER_HOMES. 0, or -1
 * (ENOMEM). */
static int other_user_sort(struct strv *out, struct strv *remote, const struct host_mounts *m,
			   const struct own_homes *own, const struct strv *cands, bool *over)
{
	char real[PATH_MAX];
	int rc = 0;

	for (size_t i = 0; rc == 0 && !*over && i < cands->n; i++) {
		struct stat st;
		enum path_look look = path_look(m, cands->v[i], real, &st);
		bool holds = false;
		struct strv *to;

		if (look == LOOK_NONE || strcmp(real, "/") == 0 || (look == LOOK_LOCAL && !S_ISDIR(st.st_mode)) ||
		    own_home_is(own, real, &holds) || strv_has(out, real) || strv_has(remote, real))
			continue;
		to = look == LOOK_REMOTE && !holds ? remote : out;
		if (out->n + remote->n >= OTHER_USER_HOMES)
			*over = true;
		else
			rc = strv_add(to, real);
	}
	return rc;
}

static int other_user_homes(struct strv *out, struct strv *remote, const struct host_mounts *m,
			    const struct plan_host *h)
{
	struct own_homes own;
	struct strv cands = {0};
	bool over = false;
	FILE *f;
	int rc;

	own_homes_get(&own, m, h);
	rc = 0;
	if ((f = fopen("/etc/passwd", "re")) != NULL) {
		struct passwd *pw;

		while (rc == 0 && (pw = fgetpwent(f)) != NULL)
			if (pw->pw_uid != geteuid() && pw->pw_dir != NULL && pw->pw_dir[0] == '/')
				rc = strv_add(&cands, pw->pw_dir);
		(void)fclose(f);
	}
	if (rc == 0)
		rc = home_root_entries(&cands, m);
	if (rc == 0)
		rc = other_user_sort(out, remote, m, &own, &cands, &over);
	strv_free(&cands);
	if (rc < 0) {
		log_warn("run: the homes of the other users");
		return -1;
	}
	if (over)
		log_warnx("run: more than %d homes of other users (/etc/passwd, /home and the other roots of homes): "
			  "the stores of the ones past %s are not covered in this session",
			  OTHER_USER_HOMES, out->n > 0 ? out->v[out->n - 1] : remote->v[remote->n - 1]);
	return 0;
}

/* The HOME class rule for each home (home, pw_home: canonical or NULL)
 * that a writable tree holds; the working directory counts as one. And
 * for the configuration directory of the host's programs (~/.config,
 * $XDG_CONFIG_HOME) that a writable tree holds: all of its entries, dot
 * or not, are covered the same way (a shell's rc, a terminal's "shell =",
 * an editor's plugins: round 7 of the attack planted 19 of them with
 * allowWrite naming ~/.config). Unless quiet, one notice line for each
 * writable home (round 31 of the attack: also when it has no entry
 * without a dot, as it says what the check after the run moves aside). */
static int protect_homes(struct strv *sv, struct strv *cover, struct strv *follow, const struct strv *aw,
			 const struct plan_host *h, bool quiet)
{
	const char *homes[2] = {h->home, h->pw_home};
	char real[PATH_MAX], cwd[PATH_MAX];
	bool cwd_real = h->cwd != NULL && realpath(h->cwd, cwd) != NULL;
	struct strv awr = {0};
	int rc = 0;

	/* Canonical, as the entries' paths are. */
	for (size_t i = 0; i < aw->n && rc == 0; i++)
		if (realpath(aw->v[i], real) != NULL)
			rc = strv_add_unique(&awr, real);
	if (rc == 0 && cwd_real)
		rc = strv_add_unique(&awr, cwd);
	char held[2][PATH_MAX], cfg[PATH_MAX + 16];
	size_t nheld = 0;

	for (size_t k = 0; k < 2 && rc == 0; k++) {
		if (homes[k] == NULL || homes[k][0] != '/' || realpath(homes[k], real) == NULL ||
		    (k == 1 && h->home != NULL && strcmp(homes[0], homes[1]) == 0))
			continue;
		/* Canonical, and as written (the rows' paths start so: a
		 * row under a link out of the home is walked by it). */
		if ((rc = strv_add_unique(follow, real)) < 0 ||
		    (strcmp(homes[k], real) != 0 && homes[k][strlen(homes[k]) - 1] != '/' &&
		     (rc = strv_add_unique(follow, homes[k])) < 0))
			break;
		if (held_by(&awr, real)) {
			struct strv plain = {0};

			rc = protect_home_entries(sv, cover, &awr, real, &plain, 0);
			if (rc == 0 && !quiet)
				rc = print_home_notice(real, &plain);
			if (rc == 0 && !quiet)
				rc = print_placeholder_notice(real);
			strv_free(&plain);
			memcpy(held[nheld++], real, sizeof(real));
		} else {
			rc = protect_home_links(sv, &awr, real, host_env_get(h, "XDG_CACHE_HOME"));
		}
		/* Its configuration and data directories: every entry, dot or
		 * not. */
		for (size_t d = 0; d < 2 && rc == 0; d++) {
			char dir[PATH_MAX];

			if (snprintf(cfg, sizeof(cfg), "%s/%s", real, d == 0 ? ".config" : ".local/share") <
				    (int)sizeof(cfg) &&
			    realpath(cfg, dir) != NULL && held_by(&awr, dir) && !covered_whole(&awr, held, nheld, dir))
				rc = protect_home_entries(sv, cover, &awr, dir, NULL, 0);
		}
	}
	/* review44t: the home of another user that a writable tree holds
	 * (root run from /home, or from /home/bob; a tree holding the home
	 * of a service account, /srv/git): the same rule, as that user's
	 * shell runs its start-up files and sshd reads its
	 * ~/.ssh/authorized_keys, outside the sandbox and as that user.
	 * One the process cannot list is left (it cannot make an entry
	 * there; an existing one writable through its mode is not covered:
	 * docs/sandbox.md). */
	if (rc == 0) {
		struct strv others = {0}, remote = {0};
		struct host_mounts m;

		rc = host_mounts_read(&m);
		if (rc == 0)
			rc = other_user_homes(&others, &remote, &m, h);
		for (size_t i = 0; rc == 0 && i < others.n; i++)
			if (held_by(&awr, others.v[i]) && access(others.v[i], R_OK | X_OK) == 0)
				rc = protect_home_entries(sv, cover, &awr, others.v[i], NULL, 0);
		/* fix45h: one on a mount not cheap to look at (NFS, autofs,
		 * FUSE), which a writable tree holds: read-only whole, its
		 * entries not listed. */
		for (size_t i = 0; rc == 0 && i < remote.n; i++)
			if (held_by(&awr, remote.v[i]))
				rc = strv_add_unique(sv, remote.v[i]);
		strv_free(&others);
		strv_free(&remote);
		strv_free(&m.at);
	}
	/* $XDG_CONFIG_HOME and $XDG_DATA_HOME where the command's
	 * environment puts them. */
	for (size_t i = 0; rc == 0 && h->env != NULL && h->env[i] != NULL; i++) {
		const char *e = h->env[i], *v = strchr(e, '=');

		if ((strncmp(e, "XDG_CONFIG_HOME=/", 17) == 0 || strncmp(e, "XDG_DATA_HOME=/", 15) == 0) &&
		    realpath(v + 1, real) != NULL && held_by(&awr, real) && !covered_whole(&awr, held, nheld, real))
			rc = protect_home_entries(sv, cover, &awr, real, NULL, 0);
	}
	strv_free(&awr);
	return rc;
}

/*
 * The protections of the session: the session directory readable (trust
 * .pem, the sentinel copies; under the host's /tmp it is bound into the
 * private /tmp) and never writable; a working directory under the host's
 * /tmp bound read-only (the sandbox's /tmp is private) unless a denyRead
 * covers it or an allowWrite binds it writable already; the audit file
 * (also when named by --audit, which the policy's own denies do not
 * know): the command must not rewrite the record of its own egress; our
 * binary: the next run would trust what the command wrote; then the
 * workspace protections of the working directory and every writable one.
 */
/* A variable of the host's environment at `run` start (arg: the
 * struct plan_host), for sbx_git_protect_global(). */
static const char *git_global_env(void *arg, const char *name)
{
	const struct plan_host *h = arg;

	if (strcmp(name, "HOME") == 0 && h->home != NULL)
		return h->home;
	return host_env_get(h, name);
}

/*
 * How plan_relative_config() reads one variable of its table: one path
 * (empty is unset), a ':' list whose empty
 * entries are the tool's default (XDG_*_DIRS, HGRCPATH, PHP_INI_SCAN_DIR,
 * KUBECONFIG, ...), a ' ' list (MAKEFILES), and GOFLAGS' -toolexec= and
 * -exec= (a program: a relative one with a '/' is run from the package's
 * directory; a bare name is looked up on PATH).
 */
enum relcfg_kind { RC_ONE, RC_LIST, RC_WORDS, RC_GOFLAGS, RC_URLS };

/*
 * Whether var[0..n) names the pip option PIP_NAME (name, upper case):
 * pip reads every PIP_* variable, the rest lower-cased and its '_' made
 * '-' (PIP_find_links, PIP_FIND-LINKS are PIP_FIND_LINKS; review of
 * round 39: only the upper-case spelling was read). PIP_CONFIG_FILE is
 * read by its exact name.
 */
static bool pip_option_is(const char *var, size_t n, const char *name)
{
	if (n != strlen(name) || n < 5 || strncmp(var, "PIP_", 4) != 0 || strncmp(name, "PIP_", 4) != 0 ||
	    strcmp(name, "PIP_CONFIG_FILE") == 0)
		return false;
	for (size_t k = 4; k < n; k++)
		if (toupper((unsigned char)var[k]) != name[k] && !(var[k] == '-' && name[k] == '_'))
			return false;
	return true;
}

/* The value (e, len) of the variable (var, vlen) refused: logs why,
 * control bytes shown as '?'. rule says which rule matched. Always -1. */
static int relcfg_refuse(const char *var, size_t vlen, const char *e, size_t len, const char *rule)
{
	char what[640], shown[201];
	size_t n = len > 200 ? 200 : len;

	for (size_t i = 0; i < n; i++)
		shown[i] = (unsigned char)e[i] < 0x20 || e[i] == 0x7f ? '?' : e[i];
	shown[n] = '\0';
	(void)snprintf(what, sizeof(what), "the relative path \"%s\"", shown);
	/* round 45: a placeholder no shell expanded ($HOME/x, ${VAR}, ~
	 * where the reader does not expand it: a .env file, a CI's or an
	 * image's literal value) is a relative name to its program */
	if (len > 0 && (e[0] == '$' || e[0] == '~'))
		(void)snprintf(what, sizeof(what), "\"%s\", a placeholder no shell expanded: its program reads "
			       "no %s there but the relative name \"%.*s\" (a file or directory of that name)", shown,
			       e[0] == '$' ? "variable" : "home", (int)strcspn(shown, "/"), shown);
	log_warnx("%.*s holds %s (%s), which names a place under wherever a program runs: in any directory "
		  "this session could write, what the command leaves there under that name is what the "
		  "host's next program started there reads as its settings or code; not started. Start "
		  "passavant with %.*s naming an absolute path (unset it, or write $PWD/... instead%s)",
		  (int)vlen, var, what, rule, (int)vlen, var,
		  len > 0 && (e[0] == '$' || e[0] == '~') ? "; export it from a shell, which expands $HOME and ~"
							   : "");
	return -1;
}

/* Whether the variable name (len bytes) falls under the suffix rule of
 * plan_relative_config(). */
static bool relcfg_suffix(const char *name, size_t len)
{
	static const char *const suffixes[] = {"HOME", "PATH", "RC", "CONFIG", "_CONFIG_FILE", "_CONFIG_DIR", "_DIRS"};

	/* bash's cd search path: "." first is the manual's own example, and
	 * it names where `cd` looks, not code. GitLab CI's CI_CONFIG_PATH
	 * (".gitlab-ci.yml" by default, set in every job) names the
	 * pipeline's file in the repository, read by the server only. */
	static const char *const exempt[] = {"CDPATH", "CI_CONFIG_PATH"};

	for (size_t i = 0; i < ARRAY_LEN(exempt); i++)
		if (len == strlen(exempt[i]) && strncmp(name, exempt[i], len) == 0)
			return false;
	for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);

		if (len >= sl && strncmp(name + len - sl, suffixes[i], sl) == 0)
			return true;
	}
	return false;
}

/* GOFLAGS: the program of each -toolexec= or -exec= (go reads only the
 * -flag=value form there, ' ' separated). */
static int relcfg_goflags(const char *val)
{
	for (const char *s = val; *s != '\0';) {
		size_t len;
		const char *w;

		s += strspn(s, " \t\n");
		len = strcspn(s, " \t\n");
		w = s;
		s += len;
		if (len > 1 && w[0] == '-' && w[1] == '-')
			w++, len--;
		if (len > 1 && w[0] == '-') {
			size_t fl = len >= 10 && strncmp(w, "-toolexec=", 10) == 0 ? 10
				    : len >= 6 && strncmp(w, "-exec=", 6) == 0 ? 6
									      : 0;

			if (fl > 0 && w[fl] != '/' && memchr(w + fl, '/', len - fl) != NULL)
				return relcfg_refuse("GOFLAGS", 7, w + fl, len - fl, "the program go runs");
		}
	}
	return 0;
}

/*
 * Round 35 of the attack, e1/e1b/e2/e2b: the variables that name WHERE a
 * later host program reads its settings (or its home of code) from. A
 * relative value names that place under every directory the program
 * starts in: git opens a relative $XDG_CONFIG_HOME/git/config,
 * $GIT_CONFIG_GLOBAL or $GIT_CONFIG_SYSTEM from the work tree's top, and
 * the session wrote core.fsmonitor there (run at the next `git status`,
 * which a prompt runs); HGRCPATH's relative entry gave hg a hook; PHPRC,
 * PHP_INI_SCAN_DIR an auto_prepend_file; GEM_HOME a gem; GOENV a
 * -toolexec; PYTHONHOME a stdlib with a sitecustomize.py; INPUTRC a key
 * binding that ran a command at the user's Enter. The writable trees
 * cannot be made read-only at those names everywhere, nor searched
 * after every run: the start is refused, naming the variable and the
 * value, as plan_relative_path() does for the code path lists (which
 * owns the code places alone: PYTHONHOME, PYTHONUSERBASE, GEM_HOME,
 * GIT_EXEC_PATH, GCONV_PATH, ... are not in this table).
 *
 * Two rules. The table: a value (or a list entry) not starting with '/'
 * (nor, for the variables whose reader expands it, with "~/": that is
 * the home, as $HOME/... is).
 * The suffix rule, for the names the table does not know: a variable
 * whose name ends in HOME, PATH, RC, CONFIG, _CONFIG_FILE, _CONFIG_DIR or
 * _DIRS (GRADLE_USER_HOME, WORKON_HOME, KUBECONFIG, PKG_CONFIG_PATH, ...)
 * and whose value, or a ':' entry of it, starts with '.', '~' or (round
 * 45) '$' ("./x", ".config", "~/x" or "$HOME/x" left unexpanded); not a value holding "://", '=' or
 * white space (a URL, options), not an empty entry (MANPATH=":/opt/man"
 * means the default), and not CDPATH (".:~" is common, and names no
 * code) or GitLab CI's CI_CONFIG_PATH (".gitlab-ci.yml" in every job).
 * Round 45: every variable of base/envnames.c env_startup_vars is in the
 * table. Only a value starting with '.', '~' or '$' is taken on the name
 * alone: a relative value without them may be anything (a word, a
 * token), and is never printed. 0, or -1 after logging.
 */
static int plan_relative_config(const struct plan_host *h)
{
	static const struct {
		const char *name;
		enum relcfg_kind kind;
	} vars[] = {
		{"XDG_CONFIG_HOME", RC_ONE}, {"XDG_DATA_HOME", RC_ONE}, {"XDG_STATE_HOME", RC_ONE},
		{"XDG_CACHE_HOME", RC_ONE}, {"XDG_CONFIG_DIRS", RC_LIST}, {"XDG_DATA_DIRS", RC_LIST},
		{"GIT_CONFIG_GLOBAL", RC_ONE}, {"GIT_CONFIG_SYSTEM", RC_ONE}, {"GIT_CONFIG", RC_ONE},
		{"GIT_TEMPLATE_DIR", RC_ONE}, {"HGRCPATH", RC_LIST},
		{"PHPRC", RC_ONE}, {"PHP_INI_SCAN_DIR", RC_LIST}, {"GOENV", RC_ONE},
		{"GOROOT", RC_ONE}, {"GOFLAGS", RC_GOFLAGS}, {"IPYTHONDIR", RC_ONE},
		{"JUPYTER_CONFIG_DIR", RC_ONE}, {"JUPYTER_PATH", RC_LIST},
		{"BUNDLE_USER_HOME", RC_ONE}, {"BUNDLE_APP_CONFIG", RC_ONE}, {"BUNDLE_GEMFILE", RC_ONE},
		{"INPUTRC", RC_ONE}, {"NPM_CONFIG_USERCONFIG", RC_ONE},
		{"NPM_CONFIG_GLOBALCONFIG", RC_ONE}, {"NPM_CONFIG_PREFIX", RC_ONE}, {"PIP_CONFIG_FILE", RC_ONE},
		{"CARGO_HOME", RC_ONE}, {"RUSTUP_HOME", RC_ONE}, {"R_ENVIRON", RC_ONE},
		{"R_ENVIRON_USER", RC_ONE}, {"R_PROFILE", RC_ONE}, {"R_PROFILE_USER", RC_ONE},
		{"R_LIBS", RC_LIST}, {"R_LIBS_USER", RC_LIST}, {"R_LIBS_SITE", RC_LIST},
		{"JULIA_DEPOT_PATH", RC_LIST}, {"JULIA_LOAD_PATH", RC_LIST}, {"MYVIMRC", RC_ONE},
		{"LESSKEY", RC_ONE}, {"LESSKEYIN", RC_ONE}, {"GNUPGHOME", RC_ONE},
		{"MAKEFILES", RC_WORDS}, {"KUBECONFIG", RC_LIST}, {"DOCKER_CONFIG", RC_ONE},
		{"AWS_CONFIG_FILE", RC_ONE}, {"AWS_SHARED_CREDENTIALS_FILE", RC_ONE}, {"BOTO_CONFIG", RC_ONE},
		{"CLOUDSDK_CONFIG", RC_ONE}, {"WGETRC", RC_ONE}, {"CURL_HOME", RC_ONE},
		{"JAVA_HOME", RC_ONE}, {"GRADLE_USER_HOME", RC_ONE}, {"NVM_DIR", RC_ONE},
		{"PYENV_ROOT", RC_ONE}, {"RBENV_ROOT", RC_ONE}, {"VOLTA_HOME", RC_ONE},
		{"DENO_DIR", RC_ONE}, {"PNPM_HOME", RC_ONE}, {"BUN_INSTALL", RC_ONE},
		/* Round 39: where pip takes what it installs from (a package
		 * there runs its build at `pip install`: a local directory of
		 * find-links, an index that is a path, a requirements or
		 * constraints file, an editable project, the cache of the
		 * wheels it built), ' ' lists whose URLs name no place here;
		 * bundler's user config and plugins, and a local override of a
		 * git gem (BUNDLE_LOCAL__<GEM>, below); composer's home (its
		 * global plugins load into every composer) and cache */
		{"PIP_FIND_LINKS", RC_URLS}, {"PIP_INDEX_URL", RC_URLS}, {"PIP_EXTRA_INDEX_URL", RC_URLS},
		{"PIP_REQUIREMENT", RC_URLS}, {"PIP_CONSTRAINT", RC_URLS}, {"PIP_BUILD_CONSTRAINT", RC_URLS},
		{"PIP_EDITABLE", RC_URLS}, {"PIP_SRC", RC_ONE}, {"PIP_CACHE_DIR", RC_ONE},
		{"BUNDLE_USER_CONFIG", RC_ONE}, {"BUNDLE_USER_PLUGIN", RC_ONE}, {"BUNDLE_USER_CACHE", RC_ONE},
		{"COMPOSER_HOME", RC_ONE}, {"COMPOSER_CACHE_DIR", RC_ONE},
		/* round 39: where vim, bash-completion and Emacs read code at
		 * their start, and start-up files moved out of the home
		 * (base/envnames.c env_startup_vars) */
		{"VIMRUNTIME", RC_ONE}, {"VIM", RC_ONE}, {"BASH_COMPLETION_USER_DIR", RC_LIST},
		{"EMACSLOADPATH", RC_LIST}, {"PSQLRC", RC_ONE}, {"SCREENRC", RC_ONE}, {"SYSSCREENRC", RC_ONE},
		{"STARSHIP_CONFIG", RC_ONE}, {"RIPGREP_CONFIG_PATH", RC_ONE}, {"BAT_CONFIG_PATH", RC_ONE},
		{"WEZTERM_CONFIG_FILE", RC_ONE}, {"KITTY_CONFIG_DIRECTORY", RC_ONE}, {"ZELLIJ_CONFIG_DIR", RC_ONE},
		{"ZELLIJ_CONFIG_FILE", RC_ONE}, {"TIGRC_USER", RC_ONE},
		/* round 40: the homes of code and the search lists
		 * base/envnames.c env_startup_vars adds */
		{"MAVEN_USER_HOME", RC_ONE}, {"GOMODCACHE", RC_ONE}, {"GOCACHE", RC_ONE},
		{"COURSIER_CACHE", RC_ONE}, {"SDKMAN_DIR", RC_ONE}, {"ASDF_DATA_DIR", RC_ONE},
		{"BUN_INSTALL_CACHE_DIR", RC_ONE}, {"BUN_INSTALL_GLOBAL_DIR", RC_ONE}, {"FPATH", RC_LIST},
		{"PSModulePath", RC_LIST},
		/* round 41: TeX's trees (kpathsea's lists) and bun's places */
		{"TEXMFHOME", RC_LIST}, {"TEXMFVAR", RC_LIST}, {"TEXMFCONFIG", RC_LIST}, {"TEXMFCNF", RC_LIST},
		{"TEXMFLOCAL", RC_LIST}, {"TEXMFSYSVAR", RC_LIST}, {"TEXMFSYSCONFIG", RC_LIST},
		{"TEXMFAUXTREES", RC_LIST}, {"TEXMF", RC_LIST}, {"TEXMFDIST", RC_LIST}, {"TEXMFMAIN", RC_LIST},
		{"BUN_INSTALL_BIN", RC_ONE}, {"BUN_RUNTIME_TRANSPILER_CACHE_PATH", RC_ONE},
		/* round 42: Elixir's, Racket's, Haskell's, Dart's, deno's,
		 * Nix's and Octave's homes and start-up files
		 * (base/envnames.c env_startup_vars) */
		{"MIX_HOME", RC_ONE}, {"MIX_ARCHIVES", RC_ONE}, {"HEX_HOME", RC_ONE}, {"PLTADDONDIR", RC_ONE},
		{"PLTUSERHOME", RC_ONE}, {"CABAL_DIR", RC_ONE}, {"CABAL_CONFIG", RC_ONE}, {"STACK_ROOT", RC_ONE},
		{"PUB_CACHE", RC_ONE}, {"DENO_INSTALL_ROOT", RC_ONE}, {"NIX_CONF_DIR", RC_ONE},
		{"NIX_USER_CONF_FILES", RC_LIST}, {"NIX_PATH", RC_LIST}, {"OCTAVE_SITE_INITFILE", RC_ONE},
		{"OCTAVE_VERSION_INITFILE", RC_ONE},
		/* round 43: mix's dependencies, build directories, extra code
		 * paths and Mix.install's cache, Racket's compiled-file roots
		 * (a relative one without ".." is under each source's own
		 * directory: skipped, base/envnames.c env_list_entry()) and
		 * configuration directory, the Erlang installation erl starts */
		{"MIX_DEPS_PATH", RC_ONE}, {"MIX_BUILD_PATH", RC_ONE}, {"MIX_BUILD_ROOT", RC_ONE},
		{"MIX_PATH", RC_LIST}, {"MIX_INSTALL_DIR", RC_ONE}, {"PLTCOMPILEDROOTS", RC_LIST},
		{"PLTCONFIGDIR", RC_ONE}, {"ERL_ROOTDIR", RC_ONE},
		/* review of round 43: .NET's installation, extra deps files,
		 * package stores, NuGet's packages folder and plugins */
		{"DOTNET_ROOT", RC_ONE}, {"DOTNET_ROOT_X64", RC_ONE}, {"DOTNET_ROOT_X86", RC_ONE},
		{"DOTNET_ROOT_ARM64", RC_ONE}, {"DOTNET_ROOT_ARM", RC_ONE}, {"DOTNET_ADDITIONAL_DEPS", RC_LIST},
		{"DOTNET_SHARED_STORE", RC_LIST}, {"NUGET_PACKAGES", RC_ONE}, {"NUGET_PLUGIN_PATHS", RC_LIST},
		/* round 45: opam's root */
		{"OPAMROOT", RC_ONE},
	};
	/* Their readers take a leading "~/" as the home, as an absolute
	 * $HOME/... (readline's tilde_expand(), R's R_ExpandFileName() and
	 * path.expand() of .libPaths(), mercurial's expandpath, gpg's
	 * make_filename): R itself sets R_LIBS_USER="~/R/..." for the
	 * programs it starts. */
	static const char *const home_tilde[] = {"INPUTRC",        "HGRCPATH",  "GNUPGHOME", "R_ENVIRON",
						 "R_ENVIRON_USER", "R_PROFILE", "R_PROFILE_USER", "R_LIBS",
						 "R_LIBS_USER",    "R_LIBS_SITE", "TEXMFHOME", "TEXMFVAR",
						 "TEXMFCONFIG",    "TEXMFCNF",  "TEXMFLOCAL", "TEXMFSYSVAR",
						 "TEXMFSYSCONFIG", "TEXMFAUXTREES", "TEXMF",
						 "TEXMFDIST",      "TEXMFMAIN"};
	/* npm reads every npm_config_* whatever its case, '-' or '_'. */
	static const char *const npm[] = {"userconfig", "globalconfig", "prefix", "init-module", "init_module"};

	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		const char *var = h->env[i], *eq = strchr(var, '='), *val;
		enum relcfg_kind kind = RC_ONE;
		const char *rule = "where a program reads its settings or code";
		bool table = false, tilde = false, suffix;
		size_t n;

		if (eq == NULL || eq == var)
			continue;
		n = (size_t)(eq - var);
		val = eq + 1;
		for (size_t v = 0; v < ARRAY_LEN(vars) && !table; v++)
			if (strlen(vars[v].name) == n &&
			    (strncmp(var, vars[v].name, n) == 0 || pip_option_is(var, n, vars[v].name))) {
				table = true;
				kind = vars[v].kind;
			}
		for (size_t v = 0; v < ARRAY_LEN(home_tilde) && table && !tilde; v++)
			if (strlen(home_tilde[v]) == n && strncmp(var, home_tilde[v], n) == 0)
				tilde = true;
		if (!table && n > 14 && strncmp(var, "BUNDLE_LOCAL__", 14) == 0)
			table = true;
		/* round 40: npm's, pnpm's and yarn's places of code, any case */
		if (!table) {
			bool one = true;

			if (env_startup_family(var, n, &one)) {
				table = true;
				kind = one ? RC_ONE : RC_LIST;
				/* review 41e: a TeX tree by program
				 * (TEXMFHOME_pdflatex): kpathsea's '~' */
				tilde = n > 5 && strncmp(var, "TEXMF", 5) == 0;
			}
		}
		/* round 40: the name of yarn's settings file, joined to each
		 * directory from where it starts up: a bare name is a file of
		 * each project (as .yarnrc.yml), one with a '/' a place of the
		 * session's */
		if (n == 16 && strncasecmp(var, "YARN_RC_FILENAME", 16) == 0 && strchr(val, '/') != NULL)
			return relcfg_refuse(var, n, val, strlen(val),
					     "the name of yarn's settings file, joined to each directory from "
					     "where yarn starts up, so that \"/\" names no absolute place either");
		for (size_t v = 0; v < ARRAY_LEN(npm) && !table; v++)
			if (n == 11 + strlen(npm[v]) && strncasecmp(var, "npm_config_", 11) == 0 &&
			    strncasecmp(var + 11, npm[v], n - 11) == 0)
				table = true;
		/* round 45: every home of code base/envnames.c knows (the
		 * canonical MSBuildExtensionsPath=ext, OCAMLLIB=lib started) */
		for (size_t v = 0; !table && env_startup_vars[v].name != NULL; v++)
			if (strlen(env_startup_vars[v].name) == n && strncmp(var, env_startup_vars[v].name, n) == 0) {
				table = true;
				kind = env_startup_vars[v].one ? RC_ONE : RC_LIST;
			}
		suffix = !table && relcfg_suffix(var, n);
		if (!table && !suffix)
			continue;
		if (kind == RC_GOFLAGS) {
			if (relcfg_goflags(val) < 0)
				return -1;
			continue;
		}
		if (val[0] == '\0')
			continue;
		if (suffix) {
			rule = "taken by its name's ending, the value starting with '.', '~' or '$'";
			if (strstr(val, "://") != NULL || strpbrk(val, "= \t\n") != NULL)
				continue;
			kind = RC_LIST;
		}
		for (const char *e = val;;) {
			size_t len = kind == RC_LIST		       ? env_list_len(var, n, e)
				     : kind == RC_WORDS || kind == RC_URLS ? strcspn(e, " \t\n")
									   : strlen(e);
			const char *p = e;
			size_t pl = len;
			bool home;

			/* round 41: a TeX tree's "!!" and "//" marks; one that
			 * kpathsea expands ($VAR, {a,b}) is no place to judge */
			if (pl > 0 && !env_list_entry(var, n, &p, &pl)) {
				log_warnx("%.*s holds \"%.*s\", which kpathsea expands ($VAR, {a,b}) to places "
					  "passavant cannot see before TeX runs, so it cannot keep the TeX code there "
					  "read-only; not started. Start passavant with %.*s naming the directories "
					  "themselves (absolute paths), or unset it",
					  (int)n, var, (int)(len > 200 ? 200 : len), e, (int)n, var);
				return -1;
			}
			home = tilde && p[0] == '~' && (pl == 1 || p[1] == '/');

			/* a URL names no place here, but a file: one its path
			 * (file:x, file://x relative; file:///x absolute) */
			if (kind == RC_URLS && pl > 5 && strncmp(p, "file:", 5) == 0) {
				p += 5, pl -= 5;
				if (pl > 2 && p[0] == '/' && p[1] == '/' && p[2] == '/')
					p += 2, pl -= 2;
				else if (pl > 2 && p[0] == '/' && p[1] == '/')
					p += 2, pl -= 2;
			} else if (kind == RC_URLS && memmem(e, len, "://", 3) != NULL) {
				pl = 0;
			}
			/* Julia's load path: "@", "@v#.#", "@stdlib" name its own
			 * places (the active project, the depots' environments) */
			if (n == 15 && strncmp(var, "JULIA_LOAD_PATH", 15) == 0 && pl > 0 && p[0] == '@')
				pl = 0;
			if (pl > 0 && p[0] != '/' && !home && (!suffix || e[0] == '.' || e[0] == '~' || e[0] == '$'))
				return relcfg_refuse(var, n, e, len, rule);
			if (e[len] == '\0')
				break;
			e += len + 1;
		}
	}
	return 0;
}

/*
 * The PATH directories (absolute entries) and the system's usual ones,
 * whether PATH names them or not, outside the writable trees: each
 * canonical one goes to follow_also and deny_write, so that its symbolic
 * links into a writable tree make their targets read-only, wherever the
 * directory lies (round 32 of the attack, b12: `npm link` or `sudo ln -s`
 * made /usr/local/bin/tool -> ~/proj/cli.js; a session in ~/proj
 * rewrote what the next `tool` typed ran; only the home's PATH
 * directories were followed). A directory that is missing, or lies in a
 * writable tree (its links point at the project's own files), is left
 * out. 0, or -1 after logging (ENOMEM).
 */
static int plan_path_links(struct run_plan *pl, const struct plan_host *h)
{
	static const char *const usual[] = {
		"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
		"/usr/local/games", "/usr/games", "/snap/bin", "/home/linuxbrew/.linuxbrew/bin",
		"/opt/homebrew/bin", "/nix/var/nix/profiles/default/bin", "/run/current-system/sw/bin",
	};
	const char *path = git_global_env((void *)h, "PATH");
	char dir[PATH_MAX], real[PATH_MAX];
	size_t k = 0;

	for (const char *s = path;;) {
		size_t len;
		bool mine = false;

		if (s != NULL) {
			len = strcspn(s, ":");
			if (len < sizeof(dir)) {
				memcpy(dir, s, len);
				dir[len] = '\0';
			} else {
				dir[0] = '\0';
			}
			s = s[len] == ':' ? s + len + 1 : NULL;
		} else if (k < ARRAY_LEN(usual)) {
			(void)snprintf(dir, sizeof(dir), "%s", usual[k++]);
		} else {
			break;
		}
		if (dir[0] != '/' || realpath(dir, real) == NULL)
			continue;
		for (size_t i = 0; i < pl->allow_write.n && !mine; i++)
			mine = path_under(real, pl->allow_write.v[i]);
		/* The homes' are walked as rows already (follow_under). */
		for (size_t i = 0; i < pl->follow.n && !mine; i++)
			mine = path_under(real, pl->follow.v[i]);
		if (mine || (h->cwd != NULL && path_under(real, h->cwd)))
			continue;
		if (strv_add_unique(&pl->follow_also, real) < 0 || strv_add_unique(&pl->deny_write, real) < 0) {
			log_warn("run");
			return -1;
		}
	}
	return 0;
}

/*
 * How plan_relative_path() reads one variable: a colon list whose empty
 * entry means "." (PATH, LD_LIBRARY_PATH, PYTHONPATH), one path, the
 * dynamic linker's preload lists (':' or ' ' for LD_PRELOAD; an empty
 * entry is nothing, a name without '/' is searched for in the library
 * path), one path whose empty value is "." (rubygems takes an empty
 * GEM_HOME as the working directory), a colon list whose empty entries
 * are skipped (the module paths of perl, ruby, node, gem, java, go; the
 * plugin paths), a ' ' list (TCLLIBPATH), Lua's ';' list of '?'
 * templates (";;" is the default path), a ',' list (Raku's RAKULIB, round
 * 41: an entry may name its kind, "inst#/dir", "file#/dir": the path is
 * after the '#'). The option variables (NODE_OPTIONS,
 * PERL5OPT, RUBYOPT, the JVM's) are read by policy_code_options().
 */
enum relvar_kind { RV_LIST_DOT, RV_ONE, RV_ONE_DOT, RV_PRELOAD, RV_LIST, RV_WORDS, RV_LUA, RV_COMMA };

/* The entry (e, len) of var refused: logs why (whole: the value is
 * empty, and read as "."). Always -1. */
static int relvar_refuse(const char *var, const char *e, size_t len, bool path, bool whole)
{
	char what[640];

	if (whole)
		(void)snprintf(what, sizeof(what), "an empty value (read as \".\")");
	else if (len == 0)
		(void)snprintf(what, sizeof(what), "an empty entry (a leading, trailing or doubled ':', read as \".\")");
	else if (e[0] == '$' || e[0] == '~')
		/* round 45: a placeholder no shell expanded */
		(void)snprintf(what, sizeof(what),
			       "\"%.*s\", a placeholder no shell expanded (read as the relative name \"%.*s\", "
			       "a file or directory of that name; export it from a shell, which expands $HOME and ~)",
			       (int)(len > 200 ? 200 : len), e, (int)strcspn(e, "/:"), e);
	else
		(void)snprintf(what, sizeof(what), "the relative entry \"%.*s\"", (int)(len > 200 ? 200 : len), e);
	log_warnx("%s holds %s, which names a place under wherever a shell or program runs: in any "
		  "directory this session could write, what the command leaves there under that name would "
		  "run at your next command in it; not started. Start passavant with %s naming absolute "
		  "paths only (%s)",
		  var, what, var,
		  path ? "e.g. PATH=/usr/local/bin:/usr/bin:/bin passavant run ..." : "unset it, or write $PWD/... instead");
	return -1;
}

/*
 * An entry of LD_LIBRARY_PATH, LD_PRELOAD or LD_AUDIT with a '$': the
 * dynamic linker expands $ORIGIN (${ORIGIN}) to the directory of each
 * program it loads, $LIB and $PLATFORM to directories of its own choice
 * (lib/x86_64-linux-gnu, haswell). The entry then names a place for
 * every program, the ones in a writable tree among them (a project's
 * bin/tool, read-only as a PATH directory, loaded $ORIGIN/../lib/x.so,
 * which the session wrote), or a directory the protection of its literal
 * text misses: refused, with what to write instead. Always -1.
 */
static int relvar_token(const char *var, const char *e, size_t len)
{
	log_warnx("%s holds \"%.*s\", whose dynamic linker token ($ORIGIN: the directory of each program "
		  "loaded, $LIB, $PLATFORM: a directory the linker picks) passavant cannot protect for every "
		  "program; not started. Start passavant with %s naming the directories themselves (e.g. "
		  "/usr/lib/x86_64-linux-gnu for $LIB), or unset it",
		  var, (int)(len > 200 ? 200 : len), e, var);
	return -1;
}

/*
 * policy_code_options()'s walk for plan_relative_path() (arg: the
 * variable's value): a path an option variable names that is not
 * absolute refuses the start (perl's -Ilib, ruby's -r ./x, node's
 * --require x, the JVM's -javaagent:a.jar and -cp .), whether loaded
 * into every run or searched. Two get their own words (round 37): a
 * module node looks for by its bare name (NODE_OPTIONS="-r
 * ts-node/register": in node_modules of the directory node starts in
 * and each one above, so a node_modules the session leaves in any
 * directory it could write loads into the host's next node there), and
 * python's -m module or -c's imports (looked for in the working
 * directory first).
 */
static int relvar_opt(void *arg, const char *var, const char *path, bool loaded)
{
	const char *val = arg;
	size_t pl = strlen(path);

	(void)loaded;
	if (path[0] == '/')
		return 0;
	if (strcmp(var, "NODE_OPTIONS") == 0 && path[0] != '\0' && path[0] != '.' && path[0] != '~' &&
	    strncmp(path, "file:", 5) != 0) {
		log_warnx("NODE_OPTIONS loads the module \"%.*s\" by its name, which node looks for in "
			  "node_modules of whatever directory it starts in and of each directory above: in any "
			  "directory this session could write, a node_modules/%.*s left there would load into "
			  "every node you start in it; not started. Start passavant with the module's absolute "
			  "path (NODE_OPTIONS=\"--require $(node -p \"require.resolve('%.*s')\")\" passavant "
			  "run ...: it is then read-only in the session), or without NODE_OPTIONS (env -u "
			  "NODE_OPTIONS passavant run ...)",
			  (int)(pl > 200 ? 200 : pl), path, (int)(pl > 200 ? 200 : pl), path, (int)(pl > 200 ? 200 : pl),
			  path);
		return -1;
	}
	/* PYTHONBREAKPOINT's module (ipdb.set_trace, pudb.set_trace,
	 * IPython.embed: common values) is imported at breakpoint() from where
	 * python starts, as `python3 -m TOOL` imports its tool: the after-run
	 * check counts its top name as a tool's (sandbox/pyshadow.c
	 * breakpoint_top(): made at that name in the session at the top of a
	 * writable tree or beside a notebook, it moves aside), so the start
	 * is not refused (review of round 39: fix39v refused every value but
	 * 0, "" and pdb.set_trace). */
	if (strcmp(var, "PYTHONBREAKPOINT") == 0)
		return 0;
	if (val != NULL && strncmp(path, "./", 2) == 0 && pl > 5 && strcmp(path + pl - 3, ".py") == 0 &&
	    strstr(val, "python") != NULL && (strstr(val, "-m") != NULL || strstr(val, "c") != NULL) &&
	    strstr(val, path) == NULL) {
		log_warnx("%s runs python with the module %.*s (-m, or imported by -c's code), which python "
			  "looks for first in whatever directory it starts in (%s): in any directory this session "
			  "could write, a %s left there would run at your next command in it; not started. Start "
			  "passavant with %s running python with -P or -I before -m or -c (the working directory "
			  "stays off sys.path), or naming the script by its absolute path",
			  var, (int)(pl - 5), path + 2, path, path + 2, var);
		return -1;
	}
	/* gcc's -Bstatic is its program prefix "static", not the linker's */
	if (strstr(var, "FLAGS") != NULL && val != NULL && pl < 100 &&
	    (strcmp(path, "static") == 0 || strcmp(path, "dynamic") == 0 || strncmp(path, "symbolic", 8) == 0)) {
		log_warnx("%s holds -B%s, which gcc reads as the prefix of the programs it runs (as, ld, cc1: "
			  "./%s/as or ./%sas of whatever directory it starts in), not as the linker's -B%s: in any "
			  "directory this session could write, an %s/as left there would run at your next build in "
			  "it; not started. Start passavant with %s writing -Wl,-B%s (the linker's option) instead",
			  var, path, path, path, path, path, var, path);
		return -1;
	}
	return relvar_refuse(var, path, pl, false, false);
}

/*
 * A relative entry of PATH ("./node_modules/.bin", ".", "bin", "~/bin" as
 * a shell other than bash or execvp() reads it) or an empty one (a
 * leading, trailing or doubled ':', which means ".") names a directory
 * of wherever the host's shell is: every directory of a writable tree is
 * then a PATH directory once the shell enters it, and a program the
 * command leaves there under a command's name (sub/node_modules/.bin/git,
 * git-ignored) runs at the user's next `git status` there (round 32 of
 * the attack, b9). The writable trees cannot all be made read-only at
 * those names, nor searched after every run: the start is refused,
 * naming the entry. The same for the other variables that name where a
 * later program loads code from: LD_LIBRARY_PATH (glibc takes an empty
 * entry as "."), LD_PRELOAD and LD_AUDIT (an entry with a '/'), the
 * single paths ENV, BASH_ENV, ZDOTDIR, PYTHONSTARTUP (policy/bind.c's
 * code_path_vars; round 34 of the attack, P2: LD_PRELOAD=./libshim.so,
 * rewritten by the session, ran in the host's next program), the places
 * a runtime loads code from whatever program starts it (round 35:
 * PYTHONUSERBASE, PYTHONHOME and GCONV_PATH, whose empty entry is
 * refused as PATH's, PYTHONPYCACHEPREFIX, GIT_EXEC_PATH, OPENSSL_CONF,
 * OPENSSL_MODULES, OPENSSL_ENGINES; and GEM_HOME, a gem path), an
 * entry of the dynamic linker's variables with a token ($ORIGIN, $LIB,
 * $PLATFORM: relvar_token()), the places a library loads plugins or
 * drivers from in every program using it (round 36: GTK, GStreamer, Qt,
 * GIO, Mesa, Vulkan, ...; Tcl's TCLLIBPATH), and the
 * interpreters' module paths (P3: PERL5LIB=lib, and the host's next
 * perl started in a subdirectory the session wrote loaded its
 * strict.pm). Their absolute entries are not made read-only: they
 * usually name the project itself, whose code the user runs anyway.
 * 0, or -1 after logging.
 */
/*
 * The variable a git config entry that runs a program is read as (its
 * value a shell command, as GIT_SSH_COMMAND's, or a program, as
 * GIT_SSH's), or NULL: core.sshCommand, core.pager and pager.<cmd>,
 * core.editor, sequence.editor, core.askPass, core.fsmonitor,
 * diff.external, gpg.program and gpg.<format>.program,
 * credential[.<url>].helper (a command after '!'),
 * alias.<name> after '!', and the drivers: diff.<d>.textconv and
 * .command, difftool/mergetool.<t>.cmd, filter.<d>.clean, .smudge,
 * .process, merge.<d>.driver, interactive.diffFilter,
 * uploadpack.packObjectsHook. *val is moved past a leading '!'.
 */
static const char *git_entry_var(const char *key, const char **val)
{
	static const char *const shell_last[] = {"sshcommand", "editor", "fsmonitor", "external", "textconv",
						 "command", "cmd", "clean", "smudge", "process", "driver",
						 "difffilter", "packobjectshook"};
	const char *last = strrchr(key, '.');

	if (last == NULL)
		return NULL;
	last++;
	if (strncasecmp(key, "alias.", 6) == 0 || strncasecmp(key, "credential.", 11) == 0) {
		if (strncasecmp(key, "credential.", 11) == 0 && strcasecmp(last, "helper") != 0)
			return NULL;
		if ((*val)[0] == '!') {
			(*val)++;
			return "GIT_SSH_COMMAND";
		}
		return NULL; /* a helper's name (git runs git credential-NAME) or an
			      * absolute path; an alias of git's own commands */
	}
	if (strncasecmp(key, "pager.", 6) == 0 || strcasecmp(key, "core.pager") == 0)
		return "GIT_PAGER";
	if (strcasecmp(last, "askpass") == 0)
		return "GIT_ASKPASS";
	if (strncasecmp(key, "gpg.", 4) == 0 && strcasecmp(last, "program") == 0)
		return "GIT_SSH";
	for (size_t i = 0; i < ARRAY_LEN(shell_last); i++)
		if (strcasecmp(last, shell_last[i]) == 0)
			return "GIT_SSH_COMMAND";
	return NULL;
}

/* One entry of git's config in the environment, set by the variable
 * set, from where (both said when it refuses): 0, or -1 after logging. */
static int plan_git_entry(const char *key, const char *val, const char *set, const char *where)
{
	const char *as = git_entry_var(key, &val);
	int r;

	/* the refusal names the variable the user set (round 39: it named
	 * the stand-in, "GIT_SSH_COMMAND holds ...") */
	if (as == NULL || (r = policy_code_options_as(set, as, val, relvar_opt, (void *)val)) == 0)
		return 0;
	if (r == -1 && errno == ENOMEM)
		log_warn("run");
	else
		log_warnx("(that is the git config entry %s in %s, which git reads as it reads %s: unset it, or "
			  "write its path absolute)", key, where, as);
	return -1;
}

/*
 * The next single-quoted word of GIT_CONFIG_PARAMETERS at *p (git's
 * sq_quote(): ' written '\'' and ! written '\!') into out (size n): 1,
 * or 0 at the end or on a malformed one (git refuses to run then).
 */
static int git_sq_word(const char **p, char *out, size_t n)
{
	const char *c = *p;
	size_t o = 0;

	if (*c != '\'')
		return 0;
	for (c++;;) {
		if (*c == '\0')
			return 0;
		if (*c == '\'') {
			if (c[1] == '\\' && c[2] != '\0' && c[3] == '\'') {
				if (o + 1 >= n)
					return 0;
				out[o++] = c[2];
				c += 4;
				continue;
			}
			c++;
			break;
		}
		if (o + 1 >= n)
			return 0;
		out[o++] = *c++;
	}
	out[o] = '\0';
	*p = c;
	return 1;
}

/*
 * The review of round 38: git's config entries set in the environment
 * (GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>, and
 * GIT_CONFIG_PARAMETERS, which `git -c` passes on) are read wherever git
 * runs, so core.fsmonitor=./fsmon.sh or core.sshCommand=./ssh made the
 * host's git run what the session leaves in its working directory, as
 * GIT_SSH_COMMAND=./ssh does (refused): each entry that runs a program
 * is read as the variable git reads it as (git_entry_var()).
 */
static int plan_git_env_config(const struct plan_host *h)
{
	const char *count = NULL, *params = NULL;
	char *key = NULL, *val = NULL;
	long n = 0;
	int rc = 0;

	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		if (strncmp(h->env[i], "GIT_CONFIG_COUNT=", 17) == 0)
			count = h->env[i] + 17;
		else if (strncmp(h->env[i], "GIT_CONFIG_PARAMETERS=", 22) == 0)
			params = h->env[i] + 22;
	}
	if (count != NULL)
		n = strtol(count, NULL, 10);
	for (long k = 0; k < n && k < 4096 && rc == 0; k++) {
		char kn[40], vn[40], set[40], where[96];
		const char *kv = NULL, *vv = NULL;

		snprintf(kn, sizeof(kn), "GIT_CONFIG_KEY_%ld=", k);
		snprintf(vn, sizeof(vn), "GIT_CONFIG_VALUE_%ld=", k);
		for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
			if (strncmp(h->env[i], kn, strlen(kn)) == 0)
				kv = h->env[i] + strlen(kn);
			else if (strncmp(h->env[i], vn, strlen(vn)) == 0)
				vv = h->env[i] + strlen(vn);
		}
		snprintf(where, sizeof(where), "GIT_CONFIG_KEY_%ld/GIT_CONFIG_VALUE_%ld", k, k);
		snprintf(set, sizeof(set), "GIT_CONFIG_VALUE_%ld", k);
		if (kv != NULL && vv != NULL)
			rc = plan_git_entry(kv, vv, set, where);
	}
	if (rc < 0 || params == NULL)
		return rc;
	key = malloc(strlen(params) + 1);
	val = malloc(strlen(params) + 1);
	if (key == NULL || val == NULL) {
		log_warn("run");
		rc = -1;
		goto out;
	}
	for (const char *p = params; rc == 0;) {
		char *eq;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!git_sq_word(&p, key, strlen(params) + 1))
			break;
		if (p[0] == '=' && p[1] == '\'') { /* 'key'='value' */
			p++;
			if (!git_sq_word(&p, val, strlen(params) + 1))
				break;
		} else if ((eq = strchr(key, '=')) != NULL) { /* 'key=value' */
			*eq = '\0';
			memmove(val, eq + 1, strlen(eq + 1) + 1);
		} else {
			continue; /* a key alone: a boolean */
		}
		rc = plan_git_entry(key, val, "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_PARAMETERS");
	}
out:
	free(key);
	free(val);
	return rc;
}

static int plan_relative_path(const struct plan_host *h)
{
	static const struct {
		const char *name;
		enum relvar_kind kind;
	} vars[] = {
		{"PATH", RV_LIST_DOT},
		{"LD_LIBRARY_PATH", RV_LIST_DOT},
		{"LD_PRELOAD", RV_PRELOAD},
		{"LD_AUDIT", RV_PRELOAD},
		{"ENV", RV_ONE},
		{"BASH_ENV", RV_ONE},
		{"ZDOTDIR", RV_ONE},
		{"PYTHONSTARTUP", RV_ONE},
		{"PYTHONUSERBASE", RV_ONE},
		{"PYTHONHOME", RV_LIST_DOT},
		{"PYTHONPYCACHEPREFIX", RV_ONE},
		{"GIT_EXEC_PATH", RV_ONE},
		{"GCONV_PATH", RV_LIST_DOT},
		{"OPENSSL_CONF", RV_ONE},
		{"OPENSSL_MODULES", RV_ONE},
		{"OPENSSL_ENGINES", RV_ONE},
		/* review of round 37: gcc's own -B in the environment: the
		 * directories it runs as, ld, cc1 from (an empty entry is
		 * "./"), and the prefix of its subprograms */
		{"COMPILER_PATH", RV_LIST_DOT},
		{"GCC_EXEC_PREFIX", RV_ONE},
		{"GEM_HOME", RV_ONE_DOT},
		{"PYTHONPATH", RV_LIST_DOT},
		{"PERL5LIB", RV_LIST},
		{"PERLLIB", RV_LIST},
		{"RUBYLIB", RV_LIST},
		{"NODE_PATH", RV_LIST},
		{"GEM_PATH", RV_LIST},
		{"CLASSPATH", RV_LIST},
		{"GOPATH", RV_LIST},
		{"LUA_PATH", RV_LUA},
		{"LUA_CPATH", RV_LUA},
		{"LUA_PATH_5_2", RV_LUA},
		{"LUA_CPATH_5_2", RV_LUA},
		{"LUA_PATH_5_3", RV_LUA},
		{"LUA_CPATH_5_3", RV_LUA},
		{"LUA_PATH_5_4", RV_LUA},
		{"LUA_CPATH_5_4", RV_LUA},
		/* Round 36: Tcl's package path (a Tcl list: ' ' separated);
		 * the places a library loads its plugins, drivers or modules
		 * from in every program using it are policy.h's
		 * base/envnames.h env_plugin_path_vars, read after this table. */
		{"TCLLIBPATH", RV_WORDS},
		/* Round 41: the other interpreters' module search lists
		 * (Guile's sources, compiled .go files and extensions, OCaml's
		 * findlib packages and stub libraries, Erlang's libraries,
		 * Raku's (',' lists), GHC's package databases, Racket's
		 * collections, Chez Scheme's libraries, Octave's path) */
		{"GUILE_LOAD_PATH", RV_LIST},
		{"GUILE_LOAD_COMPILED_PATH", RV_LIST},
		{"GUILE_EXTENSIONS_PATH", RV_LIST},
		{"OCAMLPATH", RV_LIST},
		{"CAML_LD_LIBRARY_PATH", RV_LIST},
		{"ERL_LIBS", RV_LIST},
		{"RAKULIB", RV_COMMA},
		{"PERL6LIB", RV_COMMA},
		{"GHC_PACKAGE_PATH", RV_LIST},
		{"PLTCOLLECTS", RV_LIST},
		{"CHEZSCHEMELIBDIRS", RV_LIST},
		{"OCTAVE_PATH", RV_LIST},
	};

	size_t nplug = 0;

	/* Round 39: perl's switch that puts "." last on @INC for every
	 * perl: each `use X` or `require X` not found first loads ./X.pm
	 * of whatever directory perl starts in. */
	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++)
		if (strcmp(h->env[i], "PERL_USE_UNSAFE_INC=1") == 0) {
			log_warnx("PERL_USE_UNSAFE_INC=1 puts \".\" on the module path of every perl: a module "
				  "perl does not find first in its own directories is loaded from whatever "
				  "directory it starts in, so in any directory this session could write, a .pm "
				  "file left there would run in your next perl there; not started. Start "
				  "passavant without it (env -u PERL_USE_UNSAFE_INC passavant run ...), or with "
				  "PERL5LIB naming the absolute directory of the modules");
			return -1;
		}
	while (env_plugin_path_vars[nplug].name != NULL)
		nplug++;
	for (size_t v = 0; v < ARRAY_LEN(vars) + nplug; v++) {
		const struct env_plugin_var *pv = v < ARRAY_LEN(vars) ? NULL : &env_plugin_path_vars[v - ARRAY_LEN(vars)];
		enum relvar_kind kind = pv == NULL ? vars[v].kind : pv->one ? RV_ONE : RV_LIST;
		const char *name = pv == NULL ? vars[v].name : pv->name, *val = host_env_get(h, name);
		const char *seps = kind == RV_LUA ? ";" : kind == RV_WORDS ? " \t\n" : kind == RV_COMMA ? ","
				   : strcmp(name, "LD_PRELOAD") == 0 ? ": " : ":";
		if (val == NULL || (v != 0 && val[0] == '\0' && kind != RV_ONE_DOT))
			continue;
		for (const char *e = val;;) {
			size_t len = kind == RV_ONE || kind == RV_ONE_DOT ? strlen(e) : strcspn(e, seps);
			bool skip = false;

			if (len > 0 && strncmp(name, "LD_", 3) == 0 && memchr(e, '$', len) != NULL)
				return relvar_token(name, e, len);
			if (kind == RV_COMMA && len > 0 && memchr(e, '#', len) != NULL) {
				const char *h2 = memchr(e, '#', len);

				if (h2[1] != '/' || (size_t)(h2 + 1 - e) >= len)
					return relvar_refuse(name, e, len, false, false);
				e = h2 + 1;
				len = strcspn(e, seps);
			}
			if (len == 0)
				skip = kind != RV_LIST_DOT && kind != RV_ONE_DOT;
			else if (kind == RV_PRELOAD)
				skip = memchr(e, '/', len) == NULL;
			if (!skip && (len == 0 || e[0] != '/'))
				return relvar_refuse(name, e, len, v == 0, kind == RV_ONE_DOT && len == 0);
			if (kind == RV_ONE || kind == RV_ONE_DOT || e[len] == '\0')
				break;
			e += len + 1;
		}
	}
	/* The option and command variables, and the families known by a
	 * pattern (round 38: CARGO_TARGET_<triple>_LINKER, CC_<target>, ...;
	 * base/envnames.h env_code_var_as()), in the environment's order. */
	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		const char *eq = strchr(h->env[i], '=');
		char *name;
		int r;

		if (eq == NULL || env_code_var_as(h->env[i], (size_t)(eq - h->env[i])) == NULL)
			continue;
		if ((name = strndup(h->env[i], (size_t)(eq - h->env[i]))) == NULL) {
			log_warn("run");
			return -1;
		}
		r = policy_code_options(name, eq + 1, relvar_opt, (void *)(eq + 1));
		free(name);
		if (r == 0)
			continue;
		if (r == -1 && errno == ENOMEM)
			log_warn("run");
		return -1;
	}
	return plan_git_env_config(h);
}

/*
 * Review of round 40 (fix40v): a home of code a variable names inside a
 * writable tree (CARGO_HOME=$CI_PROJECT_DIR/.cargo, GRADLE_USER_HOME=
 * ./.gradle's absolute form, GOCACHE, GOPATH, a pnpm store, ...) is
 * read-only in the session (policy/bind.c fs_path_denies()), and a build
 * that fills it failed with a bare "Read-only file system" naming a file
 * of the cache, which says nothing of why: CI images keep these homes in
 * the project so that the job's cache keeps them. One line names them
 * (variable and value, up to six) before the command starts, with the
 * two ways out: allowWrite naming the exact path (the host's next build
 * then runs what the command left there), or the command's own home for
 * the run (env VAR=/tmp/..., the sandbox's /tmp). Nothing when there is
 * none. 0, or -1 after logging.
 */
static bool code_home_held(const struct strv *aw, const char *p, const char *real)
{
	bool held = false;

	for (size_t i = 0; i < aw->n; i++) {
		if (strcmp(aw->v[i], p) == 0)
			return false;
		held = held || path_under(p, aw->v[i]) || path_under(real, aw->v[i]);
	}
	return held;
}

/* The entries of var's value (a list when list: its separators and a TeX
 * tree's marks as base/envnames.h says) held read-only in a writable
 * tree, each "VAR=path" added to out. 0, or -1 after logging. */
static int code_home_one(struct strv *out, const struct strv *aw, const char *var, size_t vlen, const char *val,
			 bool list)
{
	for (const char *e = val;;) {
		size_t len = list ? env_list_len(var, vlen, e) : strlen(e), pl = len;
		const char *d = e;
		char p[PATH_MAX], real[PATH_MAX], kv[2 * PATH_MAX];

		if (len > 0 && env_list_entry(var, vlen, &d, &pl) && pl > 0 && pl < sizeof(p) && d[0] == '/') {
			memcpy(p, d, pl);
			p[pl] = '\0';
			if (realpath(p, real) == NULL)
				snprintf(real, sizeof(real), "%s", p);
			if (code_home_held(aw, p, real)) {
				if (snprintf(kv, sizeof(kv), "%.*s=%s", (int)vlen, var, p) >= (int)sizeof(kv))
					return 0;
				if (!strv_has(out, kv) && strv_add(out, kv) < 0)
					return -1;
				return 0;
			}
		}
		if (!list || e[len] == '\0')
			return 0;
		e += len + 1;
	}
}

/*
 * Round 41: the homes named before, so that each is named once (the
 * review of round 40's line named pixi's XDG_DATA_DIRS=$PWD/.pixi/...
 * and a CI job's GOCACHE on every run: noise users learn to skip). The
 * state directory's file code-homes (passavant's own: $XDG_STATE_HOME/
 * passavant, else ~/.local/state/passavant, denied to every session)
 * holds one "VAR=path" a line; an entry not there is named, then
 * appended. Unreadable or unwritable: every entry is named, as before.
 * The state directory's path into dir (for messages), and a descriptor of
 * it, or -1 when there is none. Review 41e: each component is opened,
 * and a missing one made, from the one before without following a
 * symbolic link (a $XDG_STATE_HOME in a writable tree a session swapped
 * for a link: no directory made, nothing read or written through it);
 * a link (round 42: but in the home's own path, a linked /home) is no
 * state directory: every entry is named, as before. Round 42: the
 * entries are only read here (the directory not made); the new ones
 * are kept in pl->code_homes_new and appended by plan_code_homes_record()
 * once the command has started, so that a start refused after the
 * notice (a relative variable, a refused sandbox) names them again on
 * the next start.
 */
static int code_homes_state(const struct plan_host *h, char *dir, size_t len, bool create)
{
	const char *x = host_env_get(h, "XDG_STATE_HOME");
	int n;

	if (x != NULL && x[0] == '/')
		n = snprintf(dir, len, "%s/passavant", x);
	else if (h->home != NULL && h->home[0] == '/')
		n = snprintf(dir, len, "%s/.local/state/passavant", h->home);
	else
		return -1;
	if (n < 0 || (size_t)n >= len)
		return -1;
	/* round 42: the home's own path as the system gives it (a linked
	 * /home), nothing under it through a link (base/fileio.h) */
	return fileio_mkdirs_nolinks(dir, h->home, 0700, create, NULL, 0);
}

static int print_code_homes_notice(struct run_plan *pl, const struct plan_host *h, bool all)
{
	struct strv found = {0}, shown = {0};
	char dir[PATH_MAX], *seen = NULL, *text = NULL;
	int rc = -1, fd = -1, dfd = -1;

	for (size_t i = 0; env_startup_vars[i].name != NULL; i++) {
		const char *val = host_env_get(h, env_startup_vars[i].name);

		if (val != NULL && code_home_one(&found, &pl->allow_write, env_startup_vars[i].name,
						 strlen(env_startup_vars[i].name), val, !env_startup_vars[i].one) < 0)
			goto out;
	}
	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		const char *kv = h->env[i], *eq = strchr(kv, '=');
		bool one = true;

		if (eq != NULL && env_startup_family(kv, (size_t)(eq - kv), &one) &&
		    code_home_one(&found, &pl->allow_write, kv, (size_t)(eq - kv), eq + 1, !one) < 0)
			goto out;
	}
	/* round 44: a home that is the session's own (GOCACHE:
	 * plan_session_homes()) is writable there */
	for (size_t i = found.n; i-- > 0;) {
		char p[PATH_MAX];

		if (snprintf(p, sizeof(p), "%s", strchr(found.v[i], '=') + 1) >= (int)sizeof(p))
			continue;
		npmrc_normalize(p);
		if (strv_has(&pl->scratch, p)) {
			free(found.v[i]);
			/* the NULL after the last one too */
			memmove(&found.v[i], &found.v[i + 1], (found.n - i) * sizeof(*found.v));
			found.n--;
		}
	}
	rc = 0;
	if (found.n == 0)
		goto out;
	if ((dfd = code_homes_state(h, dir, sizeof(dir), false)) >= 0) {
		struct stat st;

		/* O_NONBLOCK: a FIFO put there opens and is refused below */
		fd = openat(dfd, "code-homes", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		/* read from the file opened, not from its name again; a line
		 * cut short by a full disk reads as no line */
		if (fd < 0 && errno == ENOENT)
			seen = strdup(""); /* none named yet */
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
		    st.st_size < (1 << 20) && (seen = malloc((size_t)st.st_size + 1)) != NULL) {
			ssize_t got = fileio_read_full(fd, seen, (size_t)st.st_size);

			if (got < 0) {
				free(seen);
				seen = NULL;
			} else {
				seen[got] = '\0';
			}
		}
	} else if (errno == ENOENT) {
		seen = strdup(""); /* no state directory yet: made at the record */
	}
	if (dfd >= 0)
		(void)close(dfd);
	for (size_t i = 0; i < found.n; i++) {
		size_t kl = strlen(found.v[i]);
		bool known = false;

		for (const char *l = seen; l != NULL && *l != '\0' && !known;) {
			const char *nl = strchr(l, '\n');

			if (nl == NULL)
				break;
			known = (size_t)(nl - l) == kl && memcmp(l, found.v[i], kl) == 0;
			l = nl + 1;
		}
		if ((!known || all) && strv_add(&shown, found.v[i]) < 0) {
			rc = -1;
			goto out;
		}
		if (!known && seen != NULL && strv_add(&pl->code_homes_new, found.v[i]) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (shown.n == 0)
		goto out;
	if ((text = notice_list(&shown, "", 6, "the notice of the read-only homes of code")) == NULL) {
		rc = -1;
		goto out;
	}
	fprintf(stderr,
		"passavant: read-only in the sandbox, as the host's next build or shell runs the code they "
		"hold: %s; a build that writes there fails (\"Read-only file system\", or \"not a directory\" "
		"where a missing one is held by an empty file): name the exact "
		"path in filesystem.allowWrite to let the command fill it (the host then runs what the "
		"command left there), or give the command its own for the run (passavant run -- env "
		"VAR=/tmp/NAME ...: /tmp is the sandbox's)%s\n",
		text, all ? "" : "; each is named once (passavant run -v names them every time)");
out:
	if (fd >= 0)
		(void)close(fd);
	free(seen);
	free(text);
	strv_free(&found);
	strv_free(&shown);
	return rc;
}

void plan_code_homes_record(const struct run_plan *pl, const struct plan_host *h)
{
	char dir[PATH_MAX];
	int dfd, fd;

	if (pl->code_homes_new.n == 0)
		return;
	if ((dfd = code_homes_state(h, dir, sizeof(dir), true)) < 0) {
		log_warn("run: the state directory for the homes of code named (they are named again next time)");
		return;
	}
	fd = openat(dfd, "code-homes", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	(void)close(dfd);
	if (fd >= 0) {
		struct stat st;

		for (size_t i = 0; i < pl->code_homes_new.n && fstat(fd, &st) == 0 && S_ISREG(st.st_mode); i++) {
			char line[2 * PATH_MAX + 2];
			int ll = snprintf(line, sizeof(line), "%s\n", pl->code_homes_new.v[i]);

			if (ll > 0 && (size_t)ll < sizeof(line) && write(fd, line, (size_t)ll) != ll) {
				log_warn("run: %s/code-homes (the homes of code named before: they are named again "
					 "next time)",
					 dir);
				break;
			}
		}
		(void)close(fd);
	} else {
		log_warn("run: %s/code-homes (the homes of code named before: they are named again next time)", dir);
	}
}

static int plan_protect(struct run_plan *pl, const struct plan_host *h,
			const struct plan_session *s)
{
	char real[PATH_MAX];
	bool skip = false;

	if (plan_relative_path(h) < 0)
		return -1;
	if (strv_add(&pl->allow_read, s->dir) < 0 || strv_add(&pl->protect, s->dir) < 0)
		return -1;
	/* Review of round 43 (review43e): the directory that holds the
	 * session directories ($TMPDIR) inside a writable tree (cd ~/proj,
	 * TMPDIR=~/proj/tmp) handed the command the directories of the
	 * user's other running sessions, started from elsewhere (their
	 * trust.pem, env, resolver files), as the host's /tmp did before
	 * 5725d16. It is read-only in the session; plan_tmpdir() then gives
	 * the command the sandbox's own /tmp as its TMPDIR. */
	{
		char parent[PATH_MAX];
		char *slash;

		if (strlen(s->dir) < sizeof(parent)) {
			memcpy(parent, s->dir, strlen(s->dir) + 1);
			slash = strrchr(parent, '/');
			if (slash != NULL && slash != parent) {
				bool inside = false;

				*slash = '\0';
				for (size_t i = 0; i < pl->allow_write.n && !inside; i++)
					inside = strcmp(parent, pl->allow_write.v[i]) != 0 &&
						 path_under(parent, pl->allow_write.v[i]);
				if (inside && strv_add_unique(&pl->protect, parent) < 0)
					return -1;
			}
		}
	}
	if (h->cwd != NULL && strncmp(h->cwd, "/tmp/", 5) == 0) {
		for (size_t i = 0; i < pl->deny_read.n; i++)
			skip = skip || path_under(h->cwd, pl->deny_read.v[i]);
		for (size_t i = 0; i < pl->allow_write.n; i++)
			skip = skip || path_under(h->cwd, pl->allow_write.v[i]);
		if (!skip && strv_add(&pl->allow_read, h->cwd) < 0)
			return -1;
	}
	/* audit_open() has created it. */
	if (s->audit_path != NULL && realpath(s->audit_path, real) != NULL &&
	    strv_add(&pl->protect, real) < 0)
		return -1;
	if (h->self_exe != NULL && h->self_exe[0] == '/' && strv_add(&pl->protect, h->self_exe) < 0)
		return -1;
	if (protect_dir(&pl->protect, h->cwd != NULL ? h->cwd : ".") < 0)
		return -1;
	if (!s->quiet && print_existing_rows_notice(h->cwd != NULL ? h->cwd : ".") < 0)
		return -1;
	for (size_t i = 0; i < pl->allow_write.n; i++)
		if (protect_dir(&pl->protect, pl->allow_write.v[i]) < 0)
			return -1;
	if (protect_homes(&pl->protect, &pl->cover, &pl->follow, &pl->allow_write, h, s->quiet) < 0)
		return -1;
	if (!s->quiet && print_code_homes_notice(pl, h, s->verbose > 0) < 0)
		return -1;
	/* Before git reads the global config its variables name. */
	if (plan_relative_config(h) < 0)
		return -1;
	if (plan_path_links(pl, h) < 0)
		return -1;
	if (sbx_git_protect_global(git_global_env, (void *)h, strv_add_unique, &pl->protect) < 0) {
		log_warnx("cannot read the host's global or system git configuration with git (out of "
			  "memory, no process, or too large) to protect the hooks, templates and includes "
			  "it names; the command was not started");
		return -1;
	}
	return 0;
}

/*
 * Appends the substitution path -> source to pl->files. With own, both
 * strings are copied into pl->file_strs; else they must outlive pl (the
 * mask table's: a credential file). public: path's content is no secret
 * (a system file, sbx_file.public_content). 0, or -1 after logging.
 */
static int add_file_as(struct run_plan *pl, const char *path, const char *source, bool own, bool public)
{
	if (pl->n_files == pl->cap_files) {
		size_t cap = pl->cap_files ? 2 * pl->cap_files : 8;
		struct sbx_file *n = realloc(pl->files, cap * sizeof(*n));

		if (n == NULL) {
			log_warn("run");
			return -1;
		}
		pl->files = n;
		pl->cap_files = cap;
	}
	if (own) {
		if (strv_add(&pl->file_strs, path) < 0 || strv_add(&pl->file_strs, source) < 0)
			return -1;
		path = pl->file_strs.v[pl->file_strs.n - 2];
		source = pl->file_strs.v[pl->file_strs.n - 1];
	}
	pl->files[pl->n_files].path = path;
	pl->files[pl->n_files].source = source;
	pl->files[pl->n_files].public_content = public;
	pl->files[pl->n_files].may_be_missing = false;
	pl->n_files++;
	return 0;
}

/* add_file_as(): our own strings hold public content, the caller's a
 * masked file's copy. */
static int add_file(struct run_plan *pl, const char *path, const char *source, bool own)
{
	return add_file_as(pl, path, source, own, own);
}

/* Masked files: the command sees the sentinel copy, read-only. */
static int plan_files(struct run_plan *pl, const mask_table_t *masks)
{
	size_t n = masks != NULL ? mask_table_file_count(masks) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *copy = NULL;
		const char *host = mask_table_file_copy(masks, i, &copy);
		if (host == NULL || copy == NULL) {
			log_warnx("masked file %s: no sentinel copy; the command was not started",
				  host != NULL ? host : "?");
			return -1;
		}
		if (add_file(pl, host, copy, false) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------ files holding real values */

/* The largest file, and the most files, searched for real values: 8 MiB
 * of text, 1 MiB of anything else (review38c: a 2 MiB dot file with
 * `export GH_TOKEN=...` in it went to the command unsearched at 1 MiB;
 * the executables of ~/.local/bin, ~/bin and ~/.cargo/bin, rows of the
 * mandatory table searched whole, are binary, and searching those of
 * 1 to 8 MiB would spend the budget below and refuse ordinary homes).
 * Text: no NUL byte in the first REMASK_TEXT_PROBE bytes. */
#define REMASK_FILE_MAX (8 * 1024 * 1024)
#define REMASK_BINARY_MAX (1024 * 1024)
#define REMASK_TEXT_PROBE 8192
#define REMASK_FILES_MAX 2048

/* A compressed file searched (remask_inflated()): the most bytes it
 * inflates to, and the most bytes inflated in one search; past either,
 * the file refuses the start (it could hold a real value past the
 * bound; fix38m). */
#define REMASK_INFLATE_MAX (8 * 1024 * 1024)
#define REMASK_INFLATE_TOTAL (64 * 1024 * 1024)
/* The most compressed streams tried in one start (review38c: a header
 * wherever it is is tried, and 1 MiB of gzip headers cost 0.6 s; past
 * this the file refuses the start, as past the bounds above). */
#define REMASK_STREAMS_MAX 4096
/* zlib's default header in the middle of a file (78 9c, ...) is tried
 * wherever it is (fix39m); one that inflates to fewer than
 * REMASK_ZLIB_MISS bytes (x86 code holds 78 01 as `js`) is counted
 * apart, up to REMASK_TRIES_MAX in one start (then as past the bounds
 * above). */
#define REMASK_ZLIB_MISS 64
#define REMASK_TRIES_MAX 65536
/* A header of another window (08 .. 68, or 78 with another level's
 * check) is tried too (round 40): one in 325 bytes of the binaries of
 * /usr is one (1.5 million in 490 MB, against 32,049 of the default's),
 * so these are counted apart, up to REMASK_WIDE_MAX in one start (the
 * session's 32 MiB of files hold about 100,000; then as past the bounds
 * above), each at the cost of a failing inflate. */
#define REMASK_WIDE_MAX (1024 * 1024)
/* Streams inside what a stream inflated to (gzip in base64 in gzip) are
 * searched to this depth; one deeper is as past the bounds above. */
#define REMASK_NEST_MAX 4

/*
 * The most bytes of files searched in one start (their sizes, as read).
 * The search's cost grows with the text and with the needles (fix38m,
 * fix38m-repro/bench.c, 1 MiB of adversarial text: 150 ms with one
 * 4 KiB key masked, 430 ms with 64 credentials, whose needles fill the
 * filter's bitmap), so 2,048 files of 1 MiB planted at the top of a
 * cloned project held the start for minutes. Past this budget a file
 * is not searched and the start is refused (fail closed: its content
 * is unknown). Lowered, never raised, by PASSAVANT_REMASK_BYTES_MAX in
 * passavant's own environment (the tests' knob).
 */
#define REMASK_BYTES_MAX (32 * 1024 * 1024)

/*
 * Binaries over REMASK_BINARY_MAX and files over REMASK_FILE_MAX are
 * searched for the real values in the forms the re-masker knows only
 * (mask_table_remask(): raw, JSON, line ends, base64, joined; no encoded
 * form, no stream inflated), a chunk at a time with the set's hold-back
 * over the edge: up to REMASK_LITERAL_MAX bytes in one start (the
 * automaton's speed, not the encoded search's: 110-170 MB/s over
 * executables, 650 MB/s over random bytes, so 64 MiB cost 0.6 s at
 * most; fix39m-repro/literal.c, docs/masking.md). One
 * holding a real value refuses the start (no re-masked copy is made of
 * it); past the budget a file is named as not searched, as before
 * fix39m, when every such file was (an executable in ~/.local/bin with
 * a token built in reached the command).
 */
#define REMASK_LITERAL_MAX ((size_t)64 * 1024 * 1024)
#define REMASK_LITERAL_CHUNK (4 * 1024 * 1024)

static size_t remask_bytes_max(void)
{
	return (size_t)knob_lowered("PASSAVANT_REMASK_BYTES_MAX", REMASK_BYTES_MAX);
}

/* What plan_remask_files() collects while it searches. */
struct remask_walk {
	struct run_plan *pl;
	const mask_table_t *masks;
	const char *dir; /* where the copies go */
	struct strv seen, said, big, gitdirs, sourced, encoded, zbig, unread, bigreal, lit, over;
	struct strv cfg_over; /* configuration files past their own budget */
	size_t made, looked, bytes, bytes_max, over_more, cfg_bytes, cfg_over_more;
	/* What was inflated (bytes, streams tried) for the session's files
	 * [0] and for the home's, the user's [1] (remask_home_lenient()):
	 * apart, as the byte budgets, so the home's compressed files do not
	 * spend the bounds that refuse the start for the session's. */
	struct {
		size_t inflated, streams, tries, wide;
	} z[2];
	size_t zi; /* which of z[] the file being searched counts in */
	size_t literal; /* bytes searched by remask_literal() */
	bool cut; /* a bound left files unsearched */
	bool home; /* the home's files: see remask_home_lenient() */
	bool quiet_big; /* the configuration directories (remask_config_dirs()):
			 * see remask_home_lenient() */
};

/*
 * Whether real, found among the home's files (w->home: the table's
 * readable rows, the top dot files, the configuration directories), is
 * the user's: not under a tree the command may write (whose files the
 * session chose: they keep every bound that refuses, as the working
 * directory's). Such a file has a budget of its own (w->cfg_bytes, as
 * large as the other), past which it is named in a line and the start
 * goes on; compressed and inflating past the bounds (a rotated log), it
 * is named with the files over REMASK_FILE_MAX (unnamed in the
 * configuration directories, w->quiet_big, as those); and there a binary
 * file (a NUL in its first 4 KiB and no byte order mark: an
 * application's database, Chromium's .pma, not a start-up file) is not
 * searched. The review of round 38: an ordinary home (Electron
 * applications' Cookies and CrashpadMetrics at the top of ~/.config/APP,
 * a .gz log in ~/.emacs.d or a dot directory) refused to start on the
 * budget or the inflation bound fix38m made refuse for the session's
 * files.
 */
static bool remask_home_lenient(const struct remask_walk *w, const char *real)
{
	if (!w->home)
		return false;
	for (size_t i = 0; i < w->pl->allow_write.n; i++)
		if (path_under(real, w->pl->allow_write.v[i]))
			return false;
	return true;
}

/* Whether the first n bytes of a file, c, are binary: a NUL, and no
 * UTF-16 byte order mark. */
static bool remask_binary(const unsigned char *c, size_t n)
{
	if (n >= 2 && ((c[0] == 0xff && c[1] == 0xfe) || (c[0] == 0xfe && c[1] == 0xff)))
		return false;
	return memchr(c, '\0', n) != NULL;
}

/* Whether c[0..n) begins as gzip (RFC 1952) or zlib (RFC 1950) data. */
static bool remask_compressed(const unsigned char *c, size_t n)
{
	if (n >= 3 && c[0] == 0x1f && c[1] == 0x8b && c[2] == 8)
		return true;
	return n >= 2 && (c[0] & 0x0f) == 8 && (c[0] >> 4) <= 7 && ((unsigned)c[0] << 8 | c[1]) % 31 == 0 &&
	       !(c[1] & 0x20);
}

/* zlib's own allocations (its window holds the last 32 KiB inflated, a
 * real value among them), wiped before they are freed (review38c:
 * inflateEnd() freed them as they were). */
#define REMASK_ZHDR sizeof(max_align_t)

static voidpf remask_zalloc(voidpf opaque, uInt items, uInt size)
{
	unsigned char *p;
	size_t n;

	(void)opaque;
	if (size != 0 && items > (SIZE_MAX - REMASK_ZHDR) / size)
		return NULL;
	n = (size_t)items * size;
	p = malloc(n + REMASK_ZHDR);
	if (p == NULL)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + REMASK_ZHDR;
}

static void remask_zfree(voidpf opaque, voidpf a)
{
	unsigned char *p;
	size_t n;

	(void)opaque;
	if (a == NULL)
		return;
	p = (unsigned char *)a - REMASK_ZHDR;
	memcpy(&n, p, sizeof(n));
	explicit_bzero(p, n + REMASK_ZHDR);
	free(p);
}

/*
 * The compressed stream at c[0..n) (gzip, its members one after the
 * other, or zlib) inflated into buf, at most cap bytes (buf holds cap + 1),
 * and searched as a file is (mask_table_remask(),
 * mask_table_encoded_real()): 1 when it holds a real value, 0 when not
 * (also when the data stops inflating: what came out before is
 * searched, as gzip -dc prints it), 2 when the bound stopped it, -1
 * after logging. *used is the input bytes the stream took when it
 * ended cleanly, 0 when not. fix38m: a compressed file was searched as
 * its bytes are, so `gzip .env` or a .env.gz put the value before the
 * command, which only has to inflate it.
 */
static int remask_packed(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			 unsigned depth);

static int remask_inflated(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			   unsigned char *buf, size_t cap, size_t *used, size_t *made, bool raw, unsigned depth,
			   unsigned char *members, size_t base)
{
	size_t got = 0, outlen = 0;
	char *out = NULL;
	z_stream z;
	int zr = Z_OK, r, rc = -1;

	*used = 0;
	*made = 0;
	memset(&z, 0, sizeof(z));
	z.zalloc = remask_zalloc;
	z.zfree = remask_zfree;
	/* gzip or zlib, by the header; raw deflate (a zip member) */
	if (inflateInit2(&z, raw ? -15 : 15 + 32) != Z_OK) {
		log_warnx("run: inflating %s: zlib could not start", path);
		return -1;
	}
	z.next_in = (unsigned char *)c;
	z.avail_in = (uInt)n;
	while (got < cap + 1) {
		z.next_out = buf + got;
		z.avail_out = (uInt)(cap + 1 - got);
		zr = inflate(&z, Z_NO_FLUSH);
		got = (size_t)(z.next_out - buf);
		if (zr == Z_STREAM_END && !raw && z.avail_in >= 3 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
			/* gzip's next member (cat a.gz b.gz), marked in
			 * members (a bit per byte of the buffer c is at base
			 * in, when given): remask_streams() does not inflate
			 * again from where this inflate went on (members *
			 * members work) */
			size_t at = base + (size_t)(z.next_in - c);

			if (members != NULL)
				members[at / 8] |= (unsigned char)(1u << (at % 8));
			if (inflateReset(&z) != Z_OK)
				break;
			continue;
		}
		if (zr != Z_OK)
			break;
	}
	if (zr == Z_STREAM_END)
		*used = n - z.avail_in;
	inflateEnd(&z);
	w->z[w->zi].inflated += got;
	*made = got;
	if (got > cap) {
		rc = 2;
		goto done;
	}
	r = mask_table_remask(w->masks, buf, got, &out, &outlen);
	if (r < 0) {
		log_warn("run: searching %s (inflated) for real values", path);
		goto done;
	}
	rc = r == 1 ? 1 : mask_table_encoded_real(w->masks, buf, got);
	if (rc < 0)
		log_warn("run: searching %s (inflated) for real values", path);
	/* what it inflated to searched as a file is: a stream in it, in its
	 * bytes, base64 or hex (fix39m: gzip in base64 in gzip passed) */
	if (rc == 0 && got >= 8 && depth < REMASK_NEST_MAX)
		rc = remask_packed(w, path, buf, got, depth + 1);
done:
	explicit_bzero(buf, got);
	if (out != NULL)
		explicit_bzero(out, outlen);
	free(out);
	return rc;
}

/* The compressed formats zlib does not read: a stream of one found in a
 * file searched refuses the start (fail closed: what it packs is unknown;
 * fix39m). Each is recognised by its signature and what a compressor
 * always writes after it (review39b: the signature alone is a constant
 * in the programs that read the format: tar, sqlite3, gpg, libarchive,
 * libmagic, a third of a percent of the binaries under 1 MiB of a Debian
 * system, each of which refused the start as "packed"):
 * remask_unread_at(). */
static const struct {
	const char *magic;
	size_t len;
} remask_unread[] = {
	{"\x28\xb5\x2f\xfd", 4},                     /* zstd (RFC 8878) */
	{"\xfd" "7zXZ\x00", 6},                      /* xz */
	{"BZh", 3},                                  /* bzip2 */
	{"\x04\x22\x4d\x18", 4},                     /* lz4's frame */
	{"\x02\x21\x4c\x18", 4},                     /* lz4's legacy frame (lz4 -l) */
	{"7z\xbc\xaf\x27\x1c", 6},                   /* 7-Zip */
	{"LZIP\x01", 5},                             /* lzip */
	{"\x89LZO\x00\r\n\x1a\n", 9},                /* lzop */
	{"\x5d\x00\x00", 3},                         /* lzma (xz --format=lzma) */
	{"\x1f\x9d", 2},                             /* Unix compress (.Z), LZW */
};

static uint32_t le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A zstd frame's header and its first block's header at c[off..n),
 * off past the magic (RFC 8878 3.1.1): reserved bit clear, a window of
 * at most 2 GiB, a block of a known type of at most 128 KiB, an empty one
 * only last. */
static bool remask_zstd_frame(const unsigned char *c, size_t n, size_t off)
{
	static const size_t did[4] = {0, 1, 2, 4}, fcs[4] = {0, 2, 4, 8};
	unsigned fhd, single;
	uint32_t bh;

	if (off >= n || (c[off] & 0x08) != 0)
		return false;
	fhd = c[off++];
	single = fhd >> 5 & 1;
	if (!single) {
		if (off >= n || c[off] >> 3 > 21)
			return false;
		off++;
	}
	off += did[fhd & 3] + (fhd >> 6 == 0 ? single : fcs[fhd >> 6]);
	if (off + 3 > n)
		return false;
	bh = (uint32_t)c[off] | (uint32_t)c[off + 1] << 8 | (uint32_t)c[off + 2] << 16;
	return (bh >> 1 & 3) != 3 && bh >> 3 <= 128 * 1024 && (bh >> 3 != 0 || (bh & 1) != 0 || (bh >> 1 & 3) == 1);
}

/* Whether c[off..n) begins a stream of a format of remask_unread[]: the
 * signature and what follows it, checked as far as the format allows
 * without its library (a CRC for xz and 7-Zip, the block magic for
 * bzip2, the frame header for zstd and lz4, the dictionary size for lzip
 * and lzma, which counts at c's start only). */
static bool remask_unread_at(const unsigned char *c, size_t n, size_t off)
{
	const unsigned char *p = c + off;
	size_t left = n - off;
	size_t i;

	/* every offset of every file searched comes here: the first byte
	 * first (a memcmp per signature per byte was a third of the search
	 * of a home's binaries) */
	switch (*p) {
	case 0x28: case 0xfd: case 'B': case 0x04: case 0x02: case '7': case 'L': case 0x89: case 0x5d: case 0x1f:
		break;
	default:
		return false;
	}
	for (i = 0; i < ARRAY_LEN(remask_unread); i++)
		if (remask_unread[i].len <= left && memcmp(p, remask_unread[i].magic, remask_unread[i].len) == 0)
			break;
	switch (i) {
	case 0:
		return remask_zstd_frame(c, n, off + 4);
	case 1: /* stream flags 00 0x, then their CRC32 */
		return left >= 12 && p[6] == 0 && p[7] < 16 && crc32(0L, p + 6, 2) == le32_at(p + 8);
	case 2: /* "BZh", the level, the first block's magic (or the end's: empty) */
		return left >= 10 && p[3] >= '1' && p[3] <= '9' &&
		       (memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 || memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0);
	case 3: /* FLG: version 01, reserved bit clear; BD: reserved bits clear, 64 KiB to 4 MiB blocks */
		return left >= 7 && p[4] >> 6 == 1 && (p[4] & 2) == 0 && (p[5] & 0x8f) == 0 && (p[5] >> 4 & 7) >= 4;
	case 4: /* a block's compressed size, at most LZ4_compressBound(8 MiB) */
		return left >= 8 && le32_at(p + 4) != 0 && le32_at(p + 4) <= 8421504;
	case 5: /* version 0.x, the start header's CRC32 */
		return left >= 32 && p[6] == 0 && crc32(0L, p + 12, 20) == le32_at(p + 8);
	case 6: /* a dictionary of 4 KiB to 512 MiB */
		return left >= 6 && (p[5] & 0x1f) >= 12 && (p[5] & 0x1f) <= 29;
	case 7:
		return true;
	case 8: { /* at the start only (its 3 bytes are common in binaries): lc=3 lp=0 pb=2 (xz's
		  * default), a dictionary of 2^n or 3 * 2^(n-1), a size or -1 */
		uint32_t d = le32_at(p + 1);
		uint64_t size = 0;

		uint32_t odd = d;

		if (off != 0 || left < 13 || d < 4096)
			return false;
		while ((odd & 1) == 0)
			odd >>= 1;
		if (odd != 1 && odd != 3)
			return false;
		for (unsigned k = 0; k < 8; k++)
			size |= (uint64_t)p[5 + k] << (8 * k);
		return size == UINT64_MAX || size < ((uint64_t)1 << 40);
	}
	case 9: /* at the start only, as lzma (round 40): the flags (block mode
		 * or not, reserved bits clear, 9 to 16 bits a code) and a first
		 * code that is a byte (LZW's first code always is) */
		return off == 0 && left >= 5 && (p[2] & 0x60) == 0 && (p[2] & 0x1f) >= 9 && (p[2] & 0x1f) <= 16 &&
		       (p[4] & 1) == 0;
	default:
		return false;
	}
}

/* Whether c[off..n) begins as a zlib stream with a 32 KiB window and no
 * dictionary, as zlib writes it by default (78 01, 78 5e, 78 9c, 78 da). */
static bool remask_zlib_at(const unsigned char *c, size_t n, size_t off)
{
	return off + 2 < n && c[off] == 0x78 && (c[off + 1] == 0x01 || c[off + 1] == 0x5e || c[off + 1] == 0x9c ||
						  c[off + 1] == 0xda);
}

/* Whether c[off..n) begins as a zlib stream as zlib writes it with any
 * window (CMF 08 to 78: windowBits 8 to 15; fix39m took the default's
 * four headers only, so zlib.compress(data, 9, 9) after a line of text
 * passed): no dictionary, the header's check, any level, a first block
 * of a defined type, a stored one with its length's complement (round
 * 40). */
static bool remask_zlib_wide_at(const unsigned char *c, size_t n, size_t off)
{
	unsigned bt;

	if (off + 2 >= n || (c[off] & 0x0f) != 8 || c[off] >> 4 > 7 || (c[off + 1] & 0x20) != 0 ||
	    ((unsigned)c[off] << 8 | c[off + 1]) % 31 != 0)
		return false;
	bt = c[off + 2] >> 1 & 3;
	if (bt == 3)
		return false;
	return bt != 0 || (off + 7 <= n && (c[off + 3] ^ c[off + 5]) == 0xff && (c[off + 4] ^ c[off + 6]) == 0xff);
}

/* Whether a zip method is one the format defines (APPNOTE 4.4.5): 1 to
 * 20 (shrink, reduce, implode, deflate64, bzip2, LZMA, ...) and 93 to 99
 * (zstd, MP3, xz, JPEG, WavPack, PPMd, AES); "PK 3 4" followed by another
 * number is a constant in a program (gpg, sqlite3, zip), not a member
 * any reader unpacks (review39b). */
static bool remask_zip_method_known(unsigned method)
{
	return (method >= 1 && method <= 20) || (method >= 93 && method <= 99);
}

/* A zip member's local header at c[off..n) (PK 3 4): 1 with *data the
 * offset of its data and *method its method, 0 when not one. */
static int remask_zip_at(const unsigned char *c, size_t n, size_t off, size_t *data, unsigned *method,
			 bool *crypt)
{
	size_t nl, el;

	if (c[off] != 'P' || off + 30 > n || memcmp(c + off, "PK\x03\x04", 4) != 0)
		return 0;
	*method = (unsigned)c[off + 8] | (unsigned)c[off + 9] << 8;
	*crypt = (c[off + 6] & 1) != 0;
	nl = (size_t)c[off + 26] | (size_t)c[off + 27] << 8;
	el = (size_t)c[off + 28] | (size_t)c[off + 29] << 8;
	*data = off + 30 + nl + el;
	return 1;
}

/*
 * Every compressed stream in c[0..n): gzip wherever its header is, zlib
 * at the start (any header) and wherever zlib's default header is (78
 * 01/5e/9c/da), a zip archive's deflated members (raw deflate after each
 * local header), each inflated and searched (remask_inflated(), which
 * searches what came out as a file, to REMASK_NEST_MAX levels); a stream
 * that ended cleanly is skipped past. A stored zip member is searched
 * as the file's bytes are. A format zlib does not read (remask_unread[],
 * a zip member packed another way or encrypted) returns 3. The most
 * bytes inflated for one stream are REMASK_INFLATE_MAX and what is left
 * of the walk's REMASK_INFLATE_TOTAL, the streams tried in one start
 * REMASK_STREAMS_MAX; a zlib header found in the middle that inflates
 * to less than REMASK_ZLIB_MISS bytes (code, an image) is counted apart,
 * up to REMASK_TRIES_MAX. 1 when one holds a real value, 2 when a bound
 * stopped one, 3 as said, 0 when none, -1 after logging. review38c:
 * fix38m inflated only a file that began as gzip, so the same bytes
 * after a line of text (a self-extracting script) or after a byte of
 * garbage behind a member reached the command unsearched; fix39m: a
 * zip's deflated member, zlib after other bytes, xz, bzip2 and zstd
 * did.
 */
static int remask_streams_in(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			     unsigned char **buf, unsigned depth, unsigned char **members);

static int remask_streams(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			  unsigned char **buf, unsigned depth)
{
	unsigned char *members = NULL;
	int rc = remask_streams_in(w, path, c, n, buf, depth, &members);

	free(members);
	return rc;
}

static int remask_streams_in(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			     unsigned char **buf, unsigned depth, unsigned char **members)
{
	unsigned char small[4096];

	for (size_t off = 0; off < n; off++) {
		size_t cap = REMASK_INFLATE_MAX, done, left, used, made, at = off;
		unsigned method = 0;
		bool raw = false, mid = false, crypt = false, wide = false;
		int r;

		/* a format not read: wherever its stream is, in the file's
		 * bytes or what a run of base64 or hex decoded to (review39b:
		 * 04f94e8 counted it at a decoded run's start only, so a tar
		 * in base64 holding a .zst passed; the header checks of
		 * remask_unread_at() make a chance match in decoded text
		 * rarer than one in 100 GB) */
		if (remask_unread_at(c, n, off))
			return 3;
		/* a gzip member an inflate from an earlier header already went
		 * on into (and searched with what came before it) */
		if (*members != NULL && ((*members)[off / 8] >> (off % 8) & 1) != 0)
			continue;
		if (remask_zip_at(c, n, off, &at, &method, &crypt)) {
			if (method != 0 && method != 8 && !remask_zip_method_known(method))
				continue; /* not a member */
			if (crypt || (method != 0 && method != 8))
				return 3;
			if (method == 0 || at >= n)
				continue;
			raw = true;
		} else if (!(off + 3 < n && c[off] == 0x1f && c[off + 1] == 0x8b && c[off + 2] == 8 &&
			     (c[off + 3] & 0xe0) == 0) &&
			   !(off == 0 && remask_compressed(c, n))) {
			if (remask_zlib_at(c, n, off)) {
				mid = true;
			} else if (remask_zlib_wide_at(c, n, off)) {
				mid = wide = true;
			} else if (off == 0 && n >= 8) {
				/* raw deflate (no header) where a file or a
				 * decoded run starts: PHP's gzdeflate() in base64,
				 * .NET's DeflateStream (round 40); tried as a
				 * header in the middle is */
				raw = mid = true;
			} else {
				continue;
			}
		}
		/* nested past REMASK_NEST_MAX: not searched (a header in
		 * the middle is tried: most are not one) */
		if (depth >= REMASK_NEST_MAX && !mid)
			return 2;
		if (wide ? ++w->z[w->zi].wide > REMASK_WIDE_MAX
			 : mid ? ++w->z[w->zi].tries > REMASK_TRIES_MAX : ++w->z[w->zi].streams > REMASK_STREAMS_MAX)
			return 2;
		done = w->z[w->zi].inflated;
		left = done < REMASK_INFLATE_TOTAL ? REMASK_INFLATE_TOTAL - done : 0;
		if (cap > left)
			cap = left;
		if (!raw && *members == NULL && (*members = calloc(n / 8 + 1, 1)) == NULL) {
			log_warn("run: inflating %s", path);
			return -1;
		}
		/* into a small buffer first: most headers tried (raw deflate
		 * at every start, a header in the middle) come to less
		 * (round 40: an 8 MiB buffer mapped for each doubled a
		 * home's start-up) */
		r = remask_inflated(w, path, c + at, n - at, small, cap < sizeof(small) - 1 ? cap : sizeof(small) - 1,
				    &used, &made, raw, depth, raw ? NULL : *members, at);
		if (r == 2 && cap > sizeof(small) - 1) {
			if (*buf == NULL && (*buf = malloc(REMASK_INFLATE_MAX + 1)) == NULL) {
				log_warn("run: inflating %s", path);
				return -1;
			}
			r = remask_inflated(w, path, c + at, n - at, *buf, cap, &used, &made, raw, depth,
					    raw ? NULL : *members, at);
		}
		if (r != 0)
			return r;
		/* a header in the middle that inflated to more: counted as
		 * a stream */
		if (mid && made >= REMASK_ZLIB_MISS &&
		    (depth >= REMASK_NEST_MAX || ++w->z[w->zi].streams > REMASK_STREAMS_MAX))
			return 2;
		/* the search goes on at the next byte, not past the stream
		 * (round 40: a stream that ended cleanly was skipped, so a
		 * crafted one, or a gzip header's name, comment or extra
		 * field, swallowed a gzip stream that followed it: the
		 * inflater went on past it and it was never tried) */
	}
	return 0;
}

static int b64_digit(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

/* The shortest base64 run decoded to look for a compressed stream in
 * (the smallest gzip member is 20 bytes, a zlib stream 8). */
#define REMASK_B64_RUN_MIN 12

/*
 * A compressed file searched (remask_streams()), and every run of
 * base64 in it (standard or URL-safe; wrapped lines joined) decoded and
 * searched the same way, from the run's start and from each H4sI in it
 * (gzip's header in base64): 1, 2, 0 or -1 as remask_streams(). The
 * decoded bytes and every buffer inflated into are wiped. review38c:
 * gzip or zlib written in base64 (a Helm release, a Kubernetes value, an
 * .env's BLOB=H4sI...) reached the command, which only had to decode it
 * before inflating it.
 */
static int hex_digit(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* The shortest hex run decoded to look for a compressed stream in. */
#define REMASK_HEX_RUN_MIN 16

/*
 * Every run of hex in c[0..n) (pairs of digits, white space and ':'
 * between them: xxd -p, od -tx1) decoded into dec and searched for
 * streams (remask_streams()); dec is wiped. 1, 2, 3, 0 or -1 as that.
 * fix39m: gzip or zlib written in hex reached the command.
 */
static int remask_hex_runs(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			   unsigned char **buf, unsigned char *dec, unsigned depth)
{
	size_t i = 0;
	int rc = 0;

	while (rc == 0 && i < n) {
		size_t declen = 0;
		int hi = -1;

		if (hex_digit(c[i]) < 0) {
			i++;
			continue;
		}
		for (; i < n; i++) {
			int d = hex_digit(c[i]);

			if (d >= 0) {
				if (hi < 0) {
					hi = d;
				} else {
					dec[declen++] = (unsigned char)(hi << 4 | d);
					hi = -1;
				}
				continue;
			}
			if (hi < 0 && (c[i] == ' ' || c[i] == '\n' || c[i] == '\r' || c[i] == '\t' || c[i] == ':')) {
				size_t k = i;

				while (k < n && (c[k] == ' ' || c[k] == '\n' || c[k] == '\r' || c[k] == '\t' || c[k] == ':'))
					k++;
				if (k < n && hex_digit(c[k]) >= 0) {
					i = k - 1;
					continue;
				}
			}
			break;
		}
		if (declen * 2 >= REMASK_HEX_RUN_MIN)
			rc = remask_streams(w, path, dec, declen, buf, depth);
		explicit_bzero(dec, declen);
	}
	return rc;
}

static int remask_packed(struct remask_walk *w, const char *path, const unsigned char *c, size_t n,
			 unsigned depth)
{
	unsigned char *buf = NULL, *dec = NULL;
	size_t i = 0, declen = 0;
	int rc;

	rc = remask_streams(w, path, c, n, &buf, depth);
	while (rc == 0 && i < n) {
		size_t s, e, digits = 0;

		if (b64_digit(c[i]) < 0) {
			i++;
			continue;
		}
		/* a run: digits, with line ends inside when digits follow */
		for (s = e = i; e < n; e++) {
			if (b64_digit(c[e]) >= 0) {
				digits++;
				continue;
			}
			if ((c[e] == '\n' || c[e] == '\r') && e + 1 < n &&
			    (b64_digit(c[e + 1]) >= 0 || (c[e + 1] == '\n' && e + 2 < n && b64_digit(c[e + 2]) >= 0)))
				continue;
			break;
		}
		i = e;
		if (digits < REMASK_B64_RUN_MIN)
			continue;
		/* aligned from the run's start; when an H4sI is in the run,
		 * from each of the other three digits too (one that is not
		 * on the run's 4-digit grid) */
		for (size_t a = 0; a < 4 && rc == 0; a++) {
			unsigned acc = 0;
			size_t skip = a;
			int bits = 0;

			if (a > 0 && memmem(c + s, e - s, "H4sI", 4) == NULL)
				break;
			if (dec == NULL && (dec = malloc(n / 4 * 3 + 3)) == NULL) {
				log_warn("run: decoding %s", path);
				rc = -1;
				break;
			}
			declen = 0;
			for (size_t k = s; k < e; k++) {
				int d = b64_digit(c[k]);

				if (d < 0)
					continue;
				if (skip > 0) {
					skip--;
					continue;
				}
				acc = (acc << 6 | (unsigned)d) & 0xffffff;
				bits += 6;
				if (bits >= 8) {
					bits -= 8;
					dec[declen++] = (unsigned char)(acc >> bits);
				}
			}
			if (declen >= 8)
				rc = remask_streams(w, path, dec, declen, &buf, depth);
			explicit_bzero(dec, declen);
		}
	}
	if (rc == 0 && dec == NULL && n >= REMASK_HEX_RUN_MIN && (dec = malloc(n / 2 + 1)) == NULL) {
		log_warn("run: decoding %s", path);
		rc = -1;
	}
	if (rc == 0 && n >= REMASK_HEX_RUN_MIN)
		rc = remask_hex_runs(w, path, c, n, &buf, dec, depth);
	if (buf != NULL)
		free(buf); /* wiped by remask_inflated() */
	free(dec);
	return rc;
}

/* Whether real (canonical) is under a read-denied path of the plan, or
 * is already shown with other content. */
static bool remask_skip(const struct run_plan *pl, const char *real)
{
	for (size_t i = 0; i < pl->deny_read.n; i++)
		if (path_under(real, pl->deny_read.v[i]))
			return true;
	for (size_t i = 0; i < pl->n_files; i++)
		if (strcmp(pl->files[i].path, real) == 0)
			return true;
	return false;
}

/*
 * The size bytes of the file open at fd searched for real values in the
 * re-masker's forms (REMASK_LITERAL_MAX above): 1 when one is there, 0
 * when not, 2 past the budget (not searched), -1 after logging. What
 * was read is wiped.
 */
static int remask_literal(struct remask_walk *w, int fd, const char *path, size_t size)
{
	size_t hold = mask_set_holdmax(mask_table_inbound_set(w->masks)) + 1, off = 0;
	unsigned char *buf;
	int rc = 0;

	if (size > REMASK_LITERAL_MAX - w->literal)
		return 2;
	w->literal += size;
	buf = malloc(REMASK_LITERAL_CHUNK + hold);
	if (buf == NULL) {
		log_warn("run: searching %s for real values", path);
		return -1;
	}
	while (rc == 0 && off < size) {
		size_t want = size - off < REMASK_LITERAL_CHUNK + hold ? size - off : REMASK_LITERAL_CHUNK + hold;
		size_t got = 0, outlen = 0;
		char *out = NULL;
		int r;

		while (got < want) {
			ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		r = got > 0 ? mask_table_remask(w->masks, buf, got, &out, &outlen) : 0;
		if (r < 0) {
			log_warn("run: searching %s for real values", path);
			rc = -1;
		} else {
			rc = r;
		}
		if (out != NULL)
			explicit_bzero(out, outlen);
		free(out);
		explicit_bzero(buf, got);
		if (got < want)
			break;
		off += REMASK_LITERAL_CHUNK;
	}
	free(buf);
	return rc;
}

/* A binary over REMASK_BINARY_MAX or a file over REMASK_FILE_MAX, open
 * at fd (closed here): remask_literal(), then named in w->bigreal when
 * it holds a real value, in w->lit when it does not (searched in part),
 * in w->big when it was not searched (none of them in the configuration
 * directories, w->quiet_big, which are not searched). 0 or -1. */
static int remask_big(struct remask_walk *w, int fd, const char *path, size_t size)
{
	int r = w->quiet_big ? 2 : remask_literal(w, fd, path, size);

	close(fd);
	if (r < 0)
		return -1;
	if (r == 1)
		return strv_add(&w->bigreal, path);
	return w->quiet_big ? 0 : strv_add(r == 0 ? &w->lit : &w->big, path);
}

/*
 * Searches the file at path (through its links) for a masked credential's
 * real value; when one is there, writes a copy with the sentinels in their
 * place into w->dir and shows it in the file's place, read-only. 0, or -1
 * after logging.
 */
static int remask_file(struct remask_walk *w, const char *path, bool first)
{
	char real[PATH_MAX], copy[PATH_MAX];
	char *content = NULL, *out = NULL;
	struct stat st;
	size_t got = 0, outlen = 0;
	int fd, r, enc, rc = -1;
	bool lenient;

	if (realpath(path, real) == NULL || strv_has(&w->seen, real))
		return 0;
	if (strv_add(&w->seen, real) < 0)
		return -1;
	if (remask_skip(w->pl, real))
		return 0;
	if (!first && w->looked >= REMASK_FILES_MAX) {
		w->cut = true;
		return 0;
	}
	w->looked++;
	fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return 0;
	}
	lenient = remask_home_lenient(w, real);
	if (st.st_size > REMASK_FILE_MAX)
		return remask_big(w, fd, path, (size_t)st.st_size);
	if (st.st_size > REMASK_BINARY_MAX) {
		char probe[REMASK_TEXT_PROBE];
		ssize_t pn = pread(fd, probe, sizeof(probe), 0);

		bool binary = pn < 0 || memchr(probe, '\0', (size_t)pn) != NULL;

		if (pn > 0)
			explicit_bzero(probe, (size_t)pn);
		if (binary)
			return remask_big(w, fd, path, (size_t)st.st_size);
	}
	if (lenient) {
		unsigned char head[4096];
		ssize_t n;

		do
			n = pread(fd, head, sizeof(head), 0);
		while (n < 0 && errno == EINTR);
		if (n <= 0 ||
		    (w->quiet_big && !remask_compressed(head, (size_t)n) && remask_binary(head, (size_t)n))) {
			if (n > 0)
				explicit_bzero(head, (size_t)n);
			close(fd);
			return 0;
		}
		explicit_bzero(head, (size_t)n);
		if ((size_t)st.st_size > w->bytes_max - w->cfg_bytes) {
			close(fd);
			if (w->cfg_over.n < 16) /* named: the first 16 */
				return strv_add(&w->cfg_over, path);
			w->cfg_over_more++;
			return 0;
		}
		w->cfg_bytes += (size_t)st.st_size;
	} else if ((size_t)st.st_size > w->bytes_max - w->bytes) {
		close(fd);
		if (w->over.n < 16) /* named: the first 16 */
			return strv_add(&w->over, path);
		w->over_more++;
		return 0;
	} else {
		w->bytes += (size_t)st.st_size;
	}
	content = malloc((size_t)st.st_size);
	if (content == NULL) {
		log_warn("run: reading %s", path);
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, content + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	r = mask_table_remask(w->masks, content, got, &out, &outlen);
	if (r < 0) {
		log_warn("run: searching %s for real values", path);
		goto done;
	}
	/* a real value in a form the re-masker does not rewrite (hex,
	 * base32, escaped, a part of it: mask_table_encoded_real()) refuses
	 * the start, as in an argument (fix37m: only variables and
	 * arguments were searched for them) */
	enc = mask_table_encoded_real(w->masks, r == 1 ? out : content, r == 1 ? outlen : got);
	if (enc < 0) {
		log_warn("run: searching %s for real values", path);
		goto done;
	}
	/* a compressed stream in the file, in its bytes or in base64
	 * (remask_packed()): inflated and searched; a real value inside, or
	 * a bound reached, refuses the start (no copy: the file cannot be
	 * re-masked in place) */
	if (enc == 0) {
		int z;

		w->zi = lenient ? 1 : 0;
		z = remask_packed(w, path, (const unsigned char *)content, got, 0);

		if (z < 0)
			goto done;
		if (z == 2 || z == 3) {
			rc = lenient ? (w->quiet_big ? 0 : strv_add(&w->big, path))
				     : strv_add(z == 2 ? &w->zbig : &w->unread, path);
			goto done;
		}
		enc = z;
	}
	if (enc == 1) {
		rc = strv_add(&w->encoded, path);
		goto done;
	}
	if (r == 0) {
		rc = 0;
		goto done;
	}
	if ((size_t)snprintf(copy, sizeof(copy), "%s/%zu-%s", w->dir, w->made++, strrchr(real, '/') + 1) >=
	    sizeof(copy)) {
		log_warnx("run: session directory path too long for a copy of %s", path);
		goto done;
	}
	fd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_warn("run: cannot write %s", copy);
		goto done;
	}
	for (size_t off = 0; off < outlen;) {
		ssize_t n = write(fd, out + off, outlen - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("run: cannot write %s", copy);
			close(fd);
			goto done;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0) {
		log_warn("run: cannot write %s", copy);
		goto done;
	}
	if (add_file_as(w->pl, real, copy, true, false) < 0 || strv_add(&w->said, path) < 0)
		goto done;
	rc = 0;
done:
	if (content != NULL) {
		explicit_bzero(content, got);
		free(content);
	}
	free(out);
	return rc;
}

/* The names tokens are usually written under: checked in each searched
 * directory by name, before and whatever its listing (the review of
 * round 34, M1, pushed .env past the bound with 100,000 dot files; of
 * round 35, F4, past the listing bound in the directory's order). */
static const char *const remask_names[] = {
	".env", ".envrc", ".npmrc", ".netrc", ".pypirc", ".yarnrc", ".yarnrc.yml", ".secrets", ".credentials",
	".profile", ".bashrc", ".zshrc", ".zshenv", ".gitconfig", ".git-credentials", ".pgpass", ".env.local",
	".env.development", ".env.production", ".env.test", ".env.staging", ".env.development.local",
	".env.production.local", ".env.test.local", ".env.secret", ".env.secrets"};

/* Whether a dot file's name is one of remask_names[] (0), another .env*
 * (1) or any other (2). */
static int remask_first(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(remask_names); i++)
		if (strcmp(name, remask_names[i]) == 0)
			return 0;
	return strncmp(name, ".env", 4) == 0 ? 1 : 2;
}

/* The most entries of one directory listed for the search (lowered, never
 * raised, by PASSAVANT_REMASK_LIST_MAX in passavant's own environment: the
 * tests' knob, as PASSAVANT_SBX_OBJ_BYTES_MAX), and the other .env* of one
 * directory searched whatever the REMASK_FILES_MAX bound (planted .env*
 * in one directory do not starve another's: the review of round 35, F4). */
#define REMASK_LIST_MAX 65536
#define REMASK_DIR_ENV_MAX 32

static size_t remask_list_max(void)
{
	return (size_t)knob_lowered("PASSAVANT_REMASK_LIST_MAX", REMASK_LIST_MAX);
}

/*
 * remask_file() on dir/name for the usual token names (remask_names[],
 * by name), then for each entry of dir whose name starts with '.'
 * (dots_only) or every entry, regular files only (through links): other
 * .env* first (the first REMASK_DIR_ENV_MAX whatever the bound), then
 * the others in the directory's order, while the bounds last. 0 or -1.
 */
static int remask_dir(struct remask_walk *w, const char *dir, bool dots_only)
{
	const char *sep = strcmp(dir, "/") == 0 ? "" : dir;
	struct strv tier[3] = {{0}, {0}, {0}};
	size_t listed = 0, max = remask_list_max();
	struct dirent *de;
	int rc = 0;
	DIR *d;

	for (size_t i = 0; i < ARRAY_LEN(remask_names) && rc == 0; i++) {
		char p[PATH_MAX];
		struct stat st;

		if ((size_t)snprintf(p, sizeof(p), "%s/%s", sep, remask_names[i]) < sizeof(p) &&
		    stat(p, &st) == 0 && S_ISREG(st.st_mode))
			rc = remask_file(w, p, true);
	}
	if (rc < 0 || (d = opendir(dir)) == NULL)
		return rc;
	while ((de = readdir(d)) != NULL) {
		int t;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (dots_only && de->d_name[0] != '.') || de->d_type == DT_DIR ||
		    (t = remask_first(de->d_name)) == 0)
			continue;
		if (++listed > max) {
			w->cut = true;
			break;
		}
		if (strv_add(&tier[t], de->d_name) < 0) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	for (int pass = 1; pass < 3 && rc == 0; pass++) {
		const struct strv *names = &tier[pass];

		for (size_t i = 0; i < names->n && rc == 0; i++) {
			bool free_pass = pass == 1 && i < REMASK_DIR_ENV_MAX;
			char p[PATH_MAX];
			struct stat st;

			if (!free_pass && w->looked >= REMASK_FILES_MAX) {
				w->cut = true;
				break;
			}
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", sep, names->v[i]) >= sizeof(p) ||
			    stat(p, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			rc = remask_file(w, p, free_pass);
		}
	}
	for (int i = 0; i < 3; i++)
		strv_free(&tier[i]);
	return rc;
}

/* Prints "passavant: LEAD a, b, c TAIL" (one write); a byte of a path
 * that is no printable character is written \xHH (a name the session
 * chose: the review of round 34, M6, drew on the terminal through it). */
static void say_paths(const struct strv *paths, const char *lead, const char *tail)
{
	char *list = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&list, &len);

	if (f == NULL)
		return;
	for (size_t i = 0; i < paths->n; i++) {
		fputs(i ? ", " : "", f);
		for (const unsigned char *c = (const unsigned char *)paths->v[i]; *c != '\0'; c++)
			if (*c < 0x20 || *c >= 0x7f || *c == '\\')
				fprintf(f, "\\x%02x", *c);
			else
				fputc(*c, f);
	}
	if (fclose(f) == 0)
		fprintf(stderr, "passavant: %s%s%s\n", lead, list, tail);
	free(list);
}

/* The most git directories, and the most submodule git directories below
 * one git directory, searched for the repository configs. */
#define REMASK_GITDIRS_MAX 512
#define REMASK_MODULES_MAX 256

/*
 * Reads the path a git pointer file names (a work tree's `.git` file:
 * "gitdir: PATH", or a linked worktree's `commondir`: "PATH"), relative
 * to base when not absolute, into out (PATH_MAX). prefix: "gitdir: " or
 * "". false when the file is not one.
 */
static bool remask_git_pointer(const char *file, const char *prefix, const char *base, char *out)
{
	char buf[PATH_MAX + 16];
	size_t pl = strlen(prefix);
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, prefix, pl) != 0 || buf[pl] == '\0')
		return false;
	if (buf[pl] == '/')
		return (size_t)snprintf(out, PATH_MAX, "%s", buf + pl) < PATH_MAX;
	return (size_t)snprintf(out, PATH_MAX, "%s/%s", base, buf + pl) < PATH_MAX;
}

/*
 * The configs of the git directory gd, the way git reads them (the review
 * of round 35, F1, F2): gd's `config` and `config.worktree`; for a linked
 * worktree's git directory, its common directory's (`commondir`) too; and
 * each submodule's git directory under `modules/` (`modules/NAME/config`,
 * a NAME with slashes, nested `modules/A/modules/B/`:
 * remask_git_modules()), depth bounded. 0 or -1.
 */
static int remask_git_modules(struct remask_walk *w, const char *dir, int depth);

static int remask_git_dir(struct remask_walk *w, const char *gd, int depth)
{
	static const char *const files[] = {"config", "config.worktree"};
	char real[PATH_MAX], p[PATH_MAX + 32], common[PATH_MAX];
	struct stat st;

	if (realpath(gd, real) == NULL || stat(real, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    strv_has(&w->gitdirs, real))
		return 0;
	if (w->gitdirs.n >= REMASK_GITDIRS_MAX) {
		w->cut = true;
		return 0;
	}
	if (strv_add(&w->gitdirs, real) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(files); i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", real, files[i]) < sizeof(p) &&
		    remask_file(w, p, true) < 0)
			return -1;
	if ((size_t)snprintf(p, sizeof(p), "%s/commondir", real) < sizeof(p) &&
	    remask_git_pointer(p, "", real, common) && remask_git_dir(w, common, depth) < 0)
		return -1;
	if ((size_t)snprintf(p, sizeof(p), "%s/modules", real) >= sizeof(p))
		return 0;
	return remask_git_modules(w, p, depth);
}

/*
 * The submodules' git directories under dir (a git directory's
 * `modules/`): each entry holding a HEAD is one (remask_git_dir()); any
 * other directory is a part of a submodule's name (`modules/vendor/lib`
 * for the submodule named vendor/lib), searched below. Six levels and
 * REMASK_MODULES_MAX entries a directory at most. 0 or -1.
 */
static int remask_git_modules(struct remask_walk *w, const char *dir, int depth)
{
	struct dirent *de;
	size_t mods = 0;
	int rc = 0;
	DIR *d;

	if (depth >= 6 || (d = opendir(dir)) == NULL)
		return 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char sub[PATH_MAX], head[PATH_MAX + 8];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++mods > REMASK_MODULES_MAX) {
			w->cut = true;
			break;
		}
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= sizeof(sub) ||
		    stat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if ((size_t)snprintf(head, sizeof(head), "%s/HEAD", sub) < sizeof(head) && access(head, F_OK) == 0)
			rc = remask_git_dir(w, sub, depth + 1);
		else
			rc = remask_git_modules(w, sub, depth + 1);
	}
	closedir(d);
	return rc;
}

/*
 * Every git repository holding dir, from dir up to /: the dot files at
 * the top of each and its git directory's configs (remask_git_dir()),
 * the `.git` directory or the file naming it (`gitdir: PATH`, a linked
 * worktree's or a submodule's work tree) resolved as git does (the
 * review of round 34, M2: a remote URL https://x:TOKEN@host/ a clone
 * with $TOKEN wrote; of round 35, F1, F2, F2b: a linked worktree, a
 * submodule, a repository nested in another). 0 or -1.
 */
/* Whether dir is a bare repository's git directory (remask_git_up()). */
static bool remask_bare(const char *dir)
{
	static const char *const parts[] = {"HEAD", "objects", "refs"};
	char p[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < ARRAY_LEN(parts); i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, parts[i]) >= sizeof(p) ||
		    stat(p, &st) < 0 || (i == 0) != S_ISREG(st.st_mode))
			return false;
	return true;
}

static int remask_git_up(struct remask_walk *w, const char *dir)
{
	char top[PATH_MAX];

	if (dir == NULL || dir[0] != '/' || snprintf(top, sizeof(top), "%s", dir) >= (int)sizeof(top))
		return 0;
	for (;;) {
		char g[PATH_MAX + 8], gd[PATH_MAX];
		struct stat st;
		char *slash;

		/* a bare repository (git's is_git_directory(): HEAD, objects/
		 * and refs/), git's own directory when the command runs in it
		 * or below it (`git clone --bare https://x:$TOKEN@host/`) */
		if (remask_bare(top) && remask_git_dir(w, top, 0) < 0)
			return -1;
		if ((size_t)snprintf(g, sizeof(g), "%s/.git", strcmp(top, "/") == 0 ? "" : top) < sizeof(g) &&
		    stat(g, &st) == 0) {
			if (remask_dir(w, top, true) < 0)
				return -1;
			if (S_ISDIR(st.st_mode) ? remask_git_dir(w, g, 0) < 0
						: (remask_git_pointer(g, "gitdir: ", top, gd) &&
						   remask_git_dir(w, gd, 0) < 0))
				return -1;
		}
		slash = strrchr(top, '/');
		if (slash == NULL || strcmp(top, "/") == 0)
			return 0;
		if (slash == top)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/* The shell start-up files of a home whose `source FILE` and `. FILE`
 * lines are followed (remask_sourced()), and how deep. */
static const char *const remask_shell_files[] = {".profile",  ".bashrc",  ".bash_profile", ".bash_login",
						 ".bash_aliases", ".zshrc", ".zshenv", ".zprofile",
						 ".zlogin",  ".kshrc",  ".mkshrc"};
#define REMASK_SOURCE_DEPTH 4
#define REMASK_SOURCED_MAX 64

/*
 * The files the shell file at path sources (`source FILE`, `. FILE`,
 * after `[ -f FILE ] &&` or `then`), each searched (remask_file()) and
 * followed in turn once, REMASK_SOURCE_DEPTH deep and REMASK_SOURCED_MAX
 * files in all: `export GH_TOKEN=...` in
 * a ~/.config/secrets.sh that ~/.bashrc sources (the last round's
 * "Not done": a file a dot file sources). A name with ~/, $HOME/ or
 * ${HOME}/ in front is under home; one still holding $, `, a glob
 * character or no leading / is not followed (nothing here runs a
 * shell). 0, or -1 after logging.
 */
static int remask_sourced(struct remask_walk *w, const char *home, const char *path, int depth)
{
	char line[4096], tok[PATH_MAX], file[PATH_MAX];
	bool next = false;
	struct stat st;
	FILE *f;
	int fd, rc = 0;

	if (depth > REMASK_SOURCE_DEPTH || realpath(path, file) == NULL || strv_has(&w->sourced, file) ||
	    w->sourced.n >= REMASK_SOURCED_MAX)
		return 0;
	if (strv_add(&w->sourced, file) < 0)
		return -1;
	/* Not blocking, and a regular file of a bounded size only: a FIFO,
	 * a terminal (/dev/stdin) or /dev/zero that a start-up file sources
	 * (or that stands at a start-up file's name) would hang the start,
	 * or read for ever, as remask_file()'s open() does not. */
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > REMASK_FILE_MAX ||
	    (f = fdopen(fd, "re")) == NULL) {
		close(fd);
		return 0;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		next = false;
		for (;;) {
			size_t n = 0;

			while (*p != '\0' && strchr(" \t\r\n;&|()", *p) != NULL)
				p++;
			if (*p == '\0' || *p == '#')
				break;
			while (*p != '\0' && strchr(" \t\r\n;&|()", *p) == NULL && n + 1 < sizeof(tok))
				if (*p == '"' || *p == '\'')
					p++;
				else
					tok[n++] = *p++;
			tok[n] = '\0';
			if (!next) {
				next = strcmp(tok, "source") == 0 || strcmp(tok, ".") == 0;
				continue;
			}
			next = false;
			if (strncmp(tok, "~/", 2) == 0)
				n = (size_t)snprintf(file, sizeof(file), "%s/%s", home, tok + 2);
			else if (strncmp(tok, "$HOME/", 6) == 0)
				n = (size_t)snprintf(file, sizeof(file), "%s/%s", home, tok + 6);
			else if (strncmp(tok, "${HOME}/", 8) == 0)
				n = (size_t)snprintf(file, sizeof(file), "%s/%s", home, tok + 8);
			else
				n = (size_t)snprintf(file, sizeof(file), "%s", tok);
			if (n >= sizeof(file) || file[0] != '/' || strpbrk(file, "$`*?[") != NULL)
				continue;
			/* searched once (w->seen), followed once (w->sourced) */
			if (remask_file(w, file, true) < 0 || remask_sourced(w, home, file, depth + 1) < 0)
				rc = -1;
		}
	}
	fclose(f);
	return rc;
}

/*
 * The directories directly in dir (dot ones only when dots), each by its
 * canonical path, not read-denied, and not named skip: into subs. 0, or
 * -1 after logging.
 */
static int remask_subdirs(struct remask_walk *w, const char *dir, bool dots, const char *skip, struct strv *subs)
{
	size_t listed = 0, max = remask_list_max();
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && rc == 0) {
		char p[PATH_MAX], real[PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (dots && de->d_name[0] != '.') || (skip != NULL && strcmp(de->d_name, skip) == 0) ||
		    (de->d_type != DT_DIR && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN))
			continue;
		if (++listed > max) {
			w->cut = true;
			break;
		}
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= sizeof(p) || stat(p, &st) < 0 ||
		    !S_ISDIR(st.st_mode) || realpath(p, real) == NULL || remask_skip(w->pl, real))
			continue;
		rc = strv_add(subs, p);
	}
	closedir(d);
	return rc;
}

/*
 * Round 38 of the attack: the configuration directories of the home,
 * where shells and terminals the table has no row for keep the lines
 * that set a session's variables (nushell's env.nu, elvish's rc.elv and
 * ~/.elvish/rc.elv, PowerShell's profile.ps1, xonsh's rc.xsh, oils'
 * oshrc, ion's initrc; kitty's `env`, alacritty's `[env]`, wezterm's
 * set_environment_variables, zellij's `env`; fish's conf.d files): a
 * masked credential's real value there was read in clear. Searched: the
 * files at the top of $HOME/.config and $XDG_CONFIG_HOME, of each
 * directory in them and of each dot directory of the home (.cache
 * aside), and of each *.d directory in those (fragments: conf.d,
 * profile.d). After the working directory and the writable trees, so
 * that their files come first within REMASK_FILES_MAX; read-denied
 * stores are skipped (remask_skip()), and files over REMASK_FILE_MAX
 * unnamed (w->quiet_big). 0, or -1 after logging.
 */
static int remask_config_dirs(struct remask_walk *w, const char *home, const char *const *env)
{
	struct strv dirs = {0};
	char cfg[PATH_MAX];
	int rc = 0;

	if ((size_t)snprintf(cfg, sizeof(cfg), "%s/.config", home) < sizeof(cfg)) {
		rc = remask_dir(w, cfg, false);
		if (rc == 0)
			rc = remask_subdirs(w, cfg, false, NULL, &dirs);
	}
	for (size_t i = 0; rc == 0 && env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], "XDG_CONFIG_HOME=/", 17) == 0) {
			rc = remask_dir(w, env[i] + 16, false);
			if (rc == 0)
				rc = remask_subdirs(w, env[i] + 16, false, NULL, &dirs);
		}
	if (rc == 0)
		rc = remask_subdirs(w, home, true, ".cache", &dirs);
	for (size_t i = 0, n = dirs.n; rc == 0 && i < n; i++) {
		struct strv frag = {0};

		rc = remask_dir(w, dirs.v[i], false);
		if (rc == 0)
			rc = remask_subdirs(w, dirs.v[i], false, NULL, &frag);
		for (size_t j = 0; rc == 0 && j < frag.n; j++) {
			size_t len = strlen(frag.v[j]);

			if (len > 2 && strcmp(frag.v[j] + len - 2, ".d") == 0)
				rc = remask_dir(w, frag.v[j], false);
		}
		strv_free(&frag);
	}
	strv_free(&dirs);
	return rc;
}

/*
 * The files the command can read that hold a masked credential's real
 * value in any form the re-masker knows, the way users define a token
 * (`export GH_TOKEN=ghp_...` in ~/.bashrc, a project's .env): each is
 * shown with the sentinel in its place, read-only, like a masked file
 * (round 34 of the attack: SPEC §4, the sandbox never holds a real
 * value). Searched: the home's rows of the mandatory table that stay
 * readable (a directory row: its files), every dot file at the top of the
 * home, of the working directory, of each writable tree and of every
 * repository holding one of them (remask_git_up()), and those
 * repositories' configs, with the git directory GIT_DIR or GIT_COMMON_DIR
 * names. Not searched: files past
 * REMASK_FILE_MAX (named in a line) and past the REMASK_FILES_MAX-th; any
 * other file (docs/masking.md). 0, or -1 after logging.
 */
static int plan_remask_files(struct run_plan *pl, const mask_table_t *masks, const struct plan_host *h,
			     const struct plan_session *s)
{
	struct remask_walk w = {.pl = pl, .masks = masks, .bytes_max = remask_bytes_max()};
	char dir[PATH_MAX];
	int rc = -1;

	if (masks == NULL || mask_table_value_count(masks) == 0)
		return 0;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s/remasked", s->dir, PLAN_SYS_SUBDIR) >= sizeof(dir)) {
		log_warnx("session directory path too long: %s", s->dir);
		return -1;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_warn("cannot create %s", dir);
		return -1;
	}
	w.dir = dir;
	w.home = true;
	if (h->home != NULL && h->home[0] == '/') {
		for (size_t i = 0; i < policy_mandatory_count(); i++) {
			const struct policy_mandatory *m = policy_mandatory_get(i);
			char p[PATH_MAX];
			struct stat st;

			if ((m->where & POLICY_MAND_HOME) == 0 || (m->deny & POLICY_MAND_READ) != 0 ||
			    (size_t)snprintf(p, sizeof(p), "%s/%s", h->home, m->path) >= sizeof(p) ||
			    stat(p, &st) < 0)
				continue;
			if ((S_ISDIR(st.st_mode) ? remask_dir(&w, p, false) : remask_file(&w, p, true)) < 0)
				goto out;
		}
		if (remask_dir(&w, h->home, true) < 0)
			goto out;
		for (size_t i = 0; i < ARRAY_LEN(remask_shell_files); i++) {
			char p[PATH_MAX];

			if ((size_t)snprintf(p, sizeof(p), "%s/%s", h->home, remask_shell_files[i]) < sizeof(p) &&
			    remask_sourced(&w, h->home, p, 1) < 0)
				goto out;
		}
	}
	w.home = false;
	/* The working directory; every repository holding it or a writable
	 * tree, with its configs (remask_git_up()); the top of each writable
	 * tree. */
	if (h->cwd != NULL && (remask_dir(&w, h->cwd, true) < 0 || remask_git_up(&w, h->cwd) < 0))
		goto out;
	/* The git directory the host's GIT_DIR or GIT_COMMON_DIR names (the
	 * command inherits them: git uses that repository wherever it runs). */
	for (size_t i = 0; h->env != NULL && h->env[i] != NULL; i++) {
		const char *e = h->env[i], *val = NULL;
		char gd[PATH_MAX];

		if (strncmp(e, "GIT_DIR=", 8) == 0)
			val = e + 8;
		else if (strncmp(e, "GIT_COMMON_DIR=", 15) == 0)
			val = e + 15;
		if (val == NULL || val[0] == '\0' || (val[0] != '/' && h->cwd == NULL) ||
		    (size_t)snprintf(gd, sizeof(gd), "%s%s%s", val[0] == '/' ? "" : h->cwd, val[0] == '/' ? "" : "/",
				     val) >= sizeof(gd))
			continue;
		if (remask_git_dir(&w, gd, 0) < 0)
			goto out;
	}
	for (size_t i = 0; i < pl->allow_write.n; i++)
		if (remask_dir(&w, pl->allow_write.v[i], true) < 0 ||
		    remask_git_up(&w, pl->allow_write.v[i]) < 0)
			goto out;
	w.home = w.quiet_big = true;
	if (h->home != NULL && h->home[0] == '/' && remask_config_dirs(&w, h->home, (const char *const *)h->env) < 0)
		goto out;
	w.home = w.quiet_big = false;
	/* The files that refuse the start, in this order: the first kind
	 * found is named, with what to do. */
	const struct {
		const struct strv *paths;
		const char *why;
	} refusals[] = {
		{&w.encoded, " held a masked credential's real value encoded (hex, base32, base64 of it or of "
			     "its UTF-16, escaped, split by quotes, rot13, reversed, in another case, compressed, "
			     "or a part of it), which the command would read: not starting; remove it from there, "
			     "or deny the file (filesystem.denyRead), or name it in credentials.files"},
		{&w.zbig, " is compressed and inflates past what is searched for masked credentials' real values "
			  "(8 MiB a stream, 64 MiB or 4,096 streams in all, 4 streams deep): not starting; remove it "
			  "from there, or deny the file (filesystem.denyRead)"},
		{&w.bigreal, " held a masked credential's real value and is a binary over 1 MiB or a file over 8 "
			     "MiB, of which no re-masked copy is made: not starting; remove the value from it, or "
			     "deny the file (filesystem.denyRead)"},
		{&w.unread, " holds data packed in a form not searched for masked credentials' real values (xz, "
			    "lzma, bzip2, zstd, lz4, lzip, lzop, 7-Zip, or a zip member packed other than deflate or "
			    "encrypted): not starting; unpack it, remove it from there, or deny the file "
			    "(filesystem.denyRead)"},
	};

	for (size_t i = 0; i < ARRAY_LEN(refusals); i++)
		if (refusals[i].paths->n > 0) {
			say_paths(refusals[i].paths, "", refusals[i].why);
			goto out;
		}
	if (w.over.n > 0) {
		char more[64] = "";

		if (w.over_more > 0)
			snprintf(more, sizeof(more), " and %zu more files", w.over_more);
		say_paths(&w.over, "", more);
		fprintf(stderr, "passavant: these files were not searched for masked credentials' real values: the "
			"search's budget (%zu bytes of files in one start) was spent before them; not starting; "
			"deny the files the command does not need (filesystem.denyRead), or move them\n",
			w.bytes_max);
		goto out;
	}
	if (w.said.n > 0 && !s->quiet)
		say_paths(&w.said, "",
			  " held a masked credential's real value: the command reads the sentinel in "
			  "its place (read-only in this session)");
	if (w.big.n > 0 && !s->quiet)
		say_paths(&w.big, "not searched for masked credentials' real values (binary over 1 MiB or over 8 MiB "
			  "past 64 MiB of them in one start, packed in a form not searched, or inflating past 8 MiB): ",
			  "");
	if (w.lit.n > 0 && !s->quiet)
		say_paths(&w.lit, "searched for masked credentials' real values only as they are, in JSON and in base64, "
			  "not encoded otherwise nor compressed (binary over 1 MiB, over 8 MiB): ", "");
	if (w.cut && !s->quiet)
		fprintf(stderr, "passavant: searched the usual token files and %d others for masked credentials' "
			"real values, not the rest\n", REMASK_FILES_MAX);
	if (w.cfg_over.n > 0 && !s->quiet) {
		char more[64] = "";

		if (w.cfg_over_more > 0)
			snprintf(more, sizeof(more), " and %zu more files", w.cfg_over_more);
		say_paths(&w.cfg_over, "not searched for masked credentials' real values (the search's budget for "
			  "the home's files was spent): ", more);
	}
	rc = 0;
out:
	strv_free(&w.cfg_over);
	strv_free(&w.sourced);
	strv_free(&w.encoded);
	strv_free(&w.zbig);
	strv_free(&w.unread);
	strv_free(&w.bigreal);
	strv_free(&w.lit);
	strv_free(&w.over);
	strv_free(&w.seen);
	strv_free(&w.said);
	strv_free(&w.big);
	strv_free(&w.gitdirs);
	return rc;
}

/*
 * The copies editors and tools leave beside a file, holding an earlier
 * value in clear: round 34 of the attack (d2b) found Emacs' .env~ beside
 * a masked .env; round 35 (e3) found that a fixed list of twelve names
 * missed the rest of the family: vim's third swap .env.swn, Kate's
 * .env.kate-swp, patch's .env.rej, git mergetool's .env_BACKUP_NNN,
 * _LOCAL_, _REMOTE_, _BASE_, JetBrains' .env___jb_old___, a user's
 * .env.backup, .env.bk, .env.BAK. So the family is told by the shape of
 * the name, in any case (sib_copy_name()): beside NAME, an entry named
 * NAME, .NAME, #NAME, .#NAME or .~lock.NAME, then anything that does not
 * begin with a letter (NAME~, NAME.swn, NAME_BACKUP_1, #NAME#, .NAME.swp,
 * a case variant .ENV; not NAME's longer neighbours, .envrc beside .env,
 * configure beside config); and for NAME = STEM.EXT, STEM then one of
 * ". _ - (" or a space, anything, then .EXT (mergetool's
 * config_LOCAL_7.json, config.old.json, "config copy.json"). After a dot
 * the words decide (sib_rest_ok()): NAME.bak, .swn, .rej, .1 are copies,
 * NAME.development, .local, .example, .pub are not (the variants a
 * project commits beside its .env, appsettings.Development.json beside
 * appsettings.json: named as copies, a tracked one would refuse the
 * start; the public half of a key, /etc/ssh/ssh_host_ed25519_key.pub).
 * Nor are the files masked in their own right. Regular files only: a
 * directory so named (config.json.d/) is real configuration, not a copy,
 * and a symbolic link (Emacs' lock .#NAME) holds none.
 */
/* The words that make NAME.WORD a copy (any case, digits may follow:
 * .bak2); vim's swap names .swa to .swp are told apart below. */
static const char *const sib_words[] = {
	"bak",	  "backup", "bk",      "bkp",	   "bck",     "old",	    "orig",	  "original", "save",
	"saved",  "sav",    "tmp",     "temp",	   "rej",     "kate",	    "copy",	  "prev",     "previous",
	"new",	  "dpkg",   "rpmsave", "rpmnew",   "pacsave", "pacnew",	    "ucf",	  "conflict", "conflicted",
	"safebackup", "jb"};

/* git mergetool's words, in upper case only (config_LOCAL_7.json; a
 * project's config_local.json is a variant, not a copy). */
static const char *const sib_upper_words[] = {"BACKUP", "BASE", "LOCAL", "REMOTE"};

/* Is the word w[0..n) (between the dots, underscores, hyphens and spaces
 * after NAME) one of a copy's? A word with a byte that is no letter or
 * digit ("(1)", "~"), digits alone, a copy's word (any case, digits may
 * follow: .bak2), vim's swap names .swa to .swp, mergetool's upper-case
 * words. */
static bool sib_copy_word(const char *w, size_t n)
{
	size_t k = n;

	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)w[i]))
			return true;
	if (n == 3 && strncasecmp(w, "sw", 2) == 0 && ((w[2] >= 'a' && w[2] <= 'p') || (w[2] >= 'A' && w[2] <= 'P')))
		return true;
	while (k > 0 && w[k - 1] >= '0' && w[k - 1] <= '9')
		k--;
	if (k == 0)
		return true;
	for (size_t i = 0; i < ARRAY_LEN(sib_words); i++)
		if (k == strlen(sib_words[i]) && strncasecmp(w, sib_words[i], k) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_LEN(sib_upper_words); i++)
		if (k == strlen(sib_upper_words[i]) && strncmp(w, sib_upper_words[i], k) == 0)
			return true;
	return false;
}

/* Does rest (what follows NAME, or STEM up to .EXT) make a copy's name?
 * Nothing (a case variant, #NAME), or a start that is no letter (NAME~,
 * NAME2, "NAME (1)"), then words split at . _ - and spaces one of which
 * is a copy's (NAME.swn, NAME.BAK, NAME.production.bak, NAME.1,
 * NAME_BACKUP_1, NAME___jb_old___, NAME.sync-conflict-DATE-ID, NAME-old),
 * or only separators (/etc/shadow-); not NAME's longer neighbours
 * (.envrc) nor its variants by other words (.env.development,
 * .env.local, .env.example, NAME.pub, config_test.json, .env-sample: a
 * project's files, which named as copies refused the start when
 * tracked; the review of round 35). */
static bool sib_rest_ok(const char *rest, size_t len)
{
	bool word = false;

	if (len == 0)
		return true;
	if (isalpha((unsigned char)rest[0]))
		return false;
	if (strchr("._- ", rest[0]) == NULL)
		return true;
	for (size_t i = 0; i < len;) {
		size_t e = i;

		while (e < len && strchr("._- ", rest[e]) == NULL)
			e++;
		if (e > i && sib_copy_word(rest + i, e - i))
			return true;
		word = word || e > i;
		i = e + 1;
	}
	return !word;
}

/* Is the entry e of a directory a copy of the file base beside it (not
 * base itself)? See above. */
static bool sib_copy_name(const char *e, const char *base)
{
	static const char *const pre[] = {"", ".", "#", ".#", ".~lock."};
	size_t bl = strlen(base), el = strlen(e);
	const char *dot = strrchr(base, '.');

	if (strcmp(e, base) == 0)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(pre); i++) {
		size_t pl = strlen(pre[i]);

		if (strncasecmp(e, pre[i], pl) != 0)
			continue;
		if (strncasecmp(e + pl, base, bl) == 0 && sib_rest_ok(e + pl + bl, el - pl - bl))
			return true;
		/* LibreOffice's lock .~lock.env# beside .env */
		if (base[0] == '.' && pl > 1 && strncasecmp(e + pl, base + 1, bl - 1) == 0 &&
		    sib_rest_ok(e + pl + bl - 1, el - pl - bl + 1))
			return true;
	}
	if (dot != NULL && dot > base && dot[1] != '\0') {
		size_t sl = (size_t)(dot - base), xl = bl - sl;

		if (el > sl + xl && strncasecmp(e, base, sl) == 0 && strchr("._- (", e[sl]) != NULL &&
		    strcasecmp(e + el - xl, dot) == 0 && sib_rest_ok(e + sl, el - sl - xl))
			return true;
	}
	return false;
}

/* The names looked up one by one when the directory cannot be listed
 * (search permission without read): NAME~, NAME.bak, NAME.orig, NAME.old,
 * NAME.save, NAME.tmp, vim's NAME.swp / .swo and .NAME.swp / .swo, its
 * undo file .NAME.un~, Emacs' auto-save #NAME#. */
static const struct {
	const char *pre, *suf;
} sibling_names[] = {
	{"", "~"},	  {"", ".bak"},	  {"", ".orig"},   {"", ".old"},    {"", ".save"},   {"", ".tmp"},
	{"", ".swp"},	  {"", ".swo"},	  {".", ".swp"},   {".", ".swo"},   {".", ".un~"},   {"#", "#"},
};

/* Most entries read in one directory, and most copies denied in it:
 * past either the start is refused, not the rest left readable (a
 * session could fill a writable directory to push a copy past a bound
 * that only warned). Reading 100,000 names takes some 20 ms. */
#define SIBLING_SCAN_MAX 100000
#define SIBLING_COPIES_MAX 256

/* A file whose copies are looked for, and whether its name is one of
 * the user's secrets (the copies' then are too). */
struct sib_target {
	const char *path;
	bool named, done;
};

/* Is path masked in its own right (it keeps its sentinel, not a deny)? */
static bool sib_masked(const struct run_plan *pl, const char *path)
{
	for (size_t i = 0; i < pl->n_files; i++)
		if (strcmp(pl->files[i].path, path) == 0)
			return true;
	return false;
}

/* Denies dir/name (dirlen bytes of dir, its slash included) when it is
 * a regular file now, not masked itself. 1 when denied, 0 when not, -1
 * after logging. */
static int sib_deny(struct run_plan *pl, const char *dir, size_t dirlen, const char *name, bool named)
{
	char sib[PATH_MAX];
	struct stat st;
	int n = snprintf(sib, sizeof(sib), "%.*s%s", (int)dirlen, dir, name);

	if (n < 0 || (size_t)n >= sizeof(sib) || lstat(sib, &st) < 0 || !S_ISREG(st.st_mode) ||
	    sib_masked(pl, sib))
		return 0;
	if (strv_add_unique(&pl->deny_read, sib) < 0 || (named && strv_add_unique(&pl->named, sib) < 0)) {
		log_warn("run");
		return -1;
	}
	return 1;
}

/*
 * The copies beside t[i] and every later target in the same directory
 * (marked done): one pass over the directory, an lstat per name that
 * matches. A directory that cannot be listed gets the fixed names of
 * sibling_names[]. A copy made later (by the host's editor while the
 * command runs) is not hidden. 0, or -1 after logging (the start is
 * refused).
 */
static int sib_scan_dir(struct run_plan *pl, struct sib_target *t, size_t nt, size_t i)
{
	size_t dirlen = (size_t)(strrchr(t[i].path, '/') - t[i].path) + 1, seen = 0, copies = 0;
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = -1;

	for (size_t j = i; j < nt; j++)
		if (strncmp(t[j].path, t[i].path, dirlen) == 0 && strchr(t[j].path + dirlen, '/') == NULL)
			t[j].done = true;
	snprintf(dir, sizeof(dir), "%.*s", (int)dirlen, t[i].path);
	d = opendir(dir);
	if (d == NULL) {
		for (size_t j = i; j < nt; j++) {
			char name[NAME_MAX + 8];

			if (!t[j].done || strncmp(t[j].path, dir, dirlen) != 0 || strchr(t[j].path + dirlen, '/') != NULL)
				continue;
			for (size_t k = 0; k < ARRAY_LEN(sibling_names); k++) {
				if ((size_t)snprintf(name, sizeof(name), "%s%s%s", sibling_names[k].pre, t[j].path + dirlen,
						     sibling_names[k].suf) >= sizeof(name))
					continue;
				if (sib_deny(pl, dir, dirlen, name, t[j].named) < 0)
					return -1;
			}
		}
		return 0;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++seen > SIBLING_SCAN_MAX) {
			log_warnx("%.*s holds more than %d entries: the copies editors leave beside %s cannot all be "
				  "looked for; move it to a smaller directory (or the entries away); the command was "
				  "not started",
				  (int)dirlen, dir, SIBLING_SCAN_MAX, t[i].path);
			goto out;
		}
		for (size_t j = i; j < nt; j++) {
			int r;

			if (!t[j].done || strncmp(t[j].path, dir, dirlen) != 0 || strchr(t[j].path + dirlen, '/') != NULL ||
			    !sib_copy_name(de->d_name, t[j].path + dirlen))
				continue;
			r = sib_deny(pl, dir, dirlen, de->d_name, t[j].named);
			if (r < 0)
				goto out;
			if (r > 0 && ++copies > SIBLING_COPIES_MAX) {
				log_warnx("%.*s holds more than %d files named like the copies of %s: too many to hide "
					  "one by one; move it to a directory of its own; the command was not started",
					  (int)dirlen, dir, SIBLING_COPIES_MAX, t[j].path);
				goto out;
			}
			break;
		}
		errno = 0;
	}
	if (errno != 0) {
		log_warn("cannot list %s to hide the copies of %s", dir, t[i].path);
		goto out;
	}
	rc = 0;
out:
	(void)closedir(d);
	return rc;
}

/*
 * The copies editors keep of a file away from it, in one directory of the
 * home, under a name made of the file's whole path (the review of round
 * 35 read a masked .env's in clear there): Neovim's swap files by
 * default (~/.local/state/nvim/swap/%home%u%proj%.env.swp, while the
 * file is open in it, and after a crash), its and Vim's backup and undo
 * files with a "//" directory (a common vimrc's ~/.vim/swap//,
 * ~/.vim/backup//, ~/.vim/undo//: the undo file holds the text's old
 * lines), Emacs' backups under a backup-directory-alist
 * (~/.emacs.d/backups/!home!u!proj!.env~, .~1~) and Doom's. An entry is
 * one when its name is the path with its slashes made % (Vim's) or !
 * (Emacs', a ! in the path doubled), optionally after #, then nothing
 * (an undo file) or a copy's rest (sib_rest_ok(): .swp, ~, .~1~); and
 * the copies of every file under a read-denied directory
 * (%home%u%.aws%credentials, an undo file of ~/.aws/credentials).
 */
static const char *const central_copy_dirs[] = {
	".local/state/nvim/swap", ".local/state/nvim/backup", ".local/state/nvim/undo",
	".local/share/nvim/swap", ".local/share/nvim/backup", ".local/share/nvim/undo",
	".vim/swap",		  ".vim/swapfiles",	    ".vim/.swap",	     ".vim/backup",
	".vim/backups",		  ".vim/.backup",	    ".vim/undo",	     ".vim/undodir",
	".vim/.undo",		  ".vim/tmp",		    ".cache/vim/swap",	     ".cache/vim/backup",
	".cache/vim/undo",	  ".emacs.d/backups",	    ".emacs.d/backup",	     ".emacs.d/auto-save",
	".emacs.d/.local/cache/backup", ".emacs.d/.local/cache/autosave", ".config/emacs/backups",
	".config/emacs/.local/cache/backup", ".config/emacs/.local/cache/autosave"};

/* Is the entry e a central copy of path (see above), or with under, of a
 * file under the directory path? */
static bool central_copy_name(const char *e, const char *path, bool under)
{
	for (int form = 0; form < 2; form++) {
		char sep = form == 0 ? '%' : '!';
		const char *c = e + (e[0] == '#');
		const char *p = path;

		for (; *p != '\0'; p++) {
			if (*p == '/') {
				if (*c != sep)
					break;
				c++;
			} else if (form == 1 && *p == '!') {
				if (c[0] != '!' || c[1] != '!')
					break;
				c += 2;
			} else {
				if (*c != *p)
					break;
				c++;
			}
		}
		if (*p == '\0' && (under ? *c == sep && c[1] != '\0' : sib_rest_ok(c, strlen(c))))
			return true;
	}
	return false;
}

/* The central copies (above) of the nt targets t and of the files
 * under the read-denied directories under home. 0, or -1 after
 * logging. */
static int plan_central_copies(struct run_plan *pl, const struct sib_target *t, size_t nt, const char *home)
{
	struct sib_target *dirs = NULL;
	size_t ndirs = 0;
	int rc = -1;

	for (size_t k = 0; home != NULL && k < ARRAY_LEN(central_copy_dirs); k++) {
		char dir[PATH_MAX];
		size_t dirlen, seen = 0;
		struct dirent *de;
		struct stat st;
		DIR *d;
		int n = snprintf(dir, sizeof(dir), "%s/%s/", home, central_copy_dirs[k]);

		if (n < 0 || (size_t)n >= sizeof(dir) || (d = opendir(dir)) == NULL)
			continue;
		dirlen = (size_t)n;
		/* the read-denied directories, once, when a place exists */
		if (dirs == NULL) {
			dirs = calloc(pl->deny_read.n + 1, sizeof(*dirs));
			if (dirs == NULL) {
				log_warn("run");
				(void)closedir(d);
				goto out;
			}
			for (size_t i = 0; i < pl->deny_read.n; i++) {
				const char *p = pl->deny_read.v[i];

				if (strcmp(p, "/") != 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
					dirs[ndirs++] = (struct sib_target){p, strv_has(&pl->named, p), false};
			}
		}
		while ((de = readdir(d)) != NULL && ++seen <= SIBLING_SCAN_MAX) {
			bool hit = false;

			if (de->d_name[0] != '%' && de->d_name[0] != '!' && de->d_name[0] != '#')
				continue;
			for (size_t j = 0; j < nt + ndirs && !hit; j++) {
				const struct sib_target *x = j < nt ? &t[j] : &dirs[j - nt];

				/* a read-denied directory's files (~/.aws/credentials) */
				if (!central_copy_name(de->d_name, x->path, j >= nt))
					continue;
				hit = true;
				if (sib_deny(pl, dir, dirlen, de->d_name, x->named) < 0) {
					(void)closedir(d);
					goto out;
				}
			}
		}
		(void)closedir(d);
		if (seen > SIBLING_SCAN_MAX) {
			log_warnx("%s holds more than %d entries: the copies editors keep there of the hidden files "
				  "cannot all be looked for; empty it; the command was not started",
				  dir, SIBLING_SCAN_MAX);
			goto out;
		}
	}
	rc = 0;
out:
	free(dirs);
	return rc;
}

/* The copies beside each read-denied file and each masked file that is a
 * regular file now, and those editors keep in the home (h->home and
 * the password database's). 0, or -1 after logging. */
static int plan_siblings(struct run_plan *pl, const struct plan_host *h)
{
	size_t n = pl->deny_read.n, nt = 0, ndirs = 0;
	struct sib_target *t = calloc(n + pl->n_files + 1, sizeof(*t));
	struct timespec t0, t1;
	struct stat st;
	int rc = -1;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	if (t == NULL) {
		log_warn("run");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *p = pl->deny_read.v[i];

		if (strrchr(p, '/') == NULL || stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		t[nt] = (struct sib_target){p, strv_has(&pl->named, p), false};
		nt++;
	}
	for (size_t i = 0; i < pl->n_files; i++) {
		const char *p = pl->files[i].path;

		if (pl->files[i].public_content || strrchr(p, '/') == NULL || stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		t[nt++] = (struct sib_target){p, true, false};
	}
	for (size_t i = 0; i < nt; i++) {
		if (t[i].done)
			continue;
		ndirs++;
		if (sib_scan_dir(pl, t, nt, i) < 0)
			goto out;
	}
	if (plan_central_copies(pl, t, nt, h->home) < 0 ||
	    (h->pw_home != NULL && (h->home == NULL || strcmp(h->home, h->pw_home) != 0) &&
	     plan_central_copies(pl, t, nt, h->pw_home) < 0))
		goto out;
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("run: the copies beside %zu hidden files, %zu directories read, in %.1f ms", nt, ndirs,
		  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	rc = 0;
out:
	free(t);
	return rc;
}

/* ------------------------------------------------ trust and resolver files */

/* SPEC §7 Trust: the bundles of the distributions we know, then
 * OpenSSL's default file (added by plan_sys_paths_default()). */
static const char *sys_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",                /* Debian, Ubuntu, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",                  /* RHEL, Fedora */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL, Fedora */
	"/etc/ssl/cert.pem",                                 /* Alpine, BSD-like */
	"/etc/ssl/ca-bundle.pem",                            /* SUSE */
	"/etc/pki/tls/cacert.pem",                           /* older RHEL, Mageia */
	NULL, /* X509_get_default_cert_file() */
	NULL,
};
static const char *sys_cert_dirs[] = {
	NULL, /* X509_get_default_cert_dir() */
	"/etc/ssl/certs",
	NULL,
};
static const char *const sys_cacerts[] = {
	"/etc/ssl/certs/java/cacerts",          /* Debian, Ubuntu */
	"/etc/pki/java/cacerts",                /* RHEL, Fedora */
	"/usr/lib/jvm/*/lib/security/cacerts",  /* each JDK's own */
	NULL,
};

const struct plan_sys_paths *plan_sys_paths_default(void)
{
	static struct plan_sys_paths sys = {
		.bundles = sys_bundles,
		.cert_dirs = sys_cert_dirs,
		.cacerts = sys_cacerts,
		.resolv_conf = "/etc/resolv.conf",
		.hosts = "/etc/hosts",
	};

	/* OpenSSL's compiled-in defaults (/usr/lib/ssl/cert.pem and
	 * /usr/lib/ssl/certs on Debian, links into /etc/ssl). Not
	 * $SSL_CERT_FILE or $SSL_CERT_DIR: the sandbox sets the first
	 * itself, and the second names a directory the user chose. */
	sys_bundles[ARRAY_LEN(sys_bundles) - 2] = X509_get_default_cert_file();
	sys_cert_dirs[0] = X509_get_default_cert_dir();
	return &sys;
}

/*
 * The real paths of the existing entries of each pattern of list (glob,
 * then realpath), of the kind asked (a regular file, else a directory),
 * appended to out once each. A pattern that matches nothing, or a path
 * that does not exist through its links, is skipped; any other error is
 * one (logged). 0 or -1.
 */
static int sys_resolve(struct strv *out, const char *const *list, bool want_dir)
{
	char real[PATH_MAX];
	struct stat st;
	glob_t g;

	for (size_t i = 0; list != NULL && list[i] != NULL; i++) {
		int rc = glob(list[i], GLOB_NOSORT, NULL, &g);

		if (rc == GLOB_NOMATCH)
			continue;
		if (rc != 0) {
			log_warnx("cannot list %s (glob error %d)", list[i], rc);
			return -1;
		}
		for (size_t k = 0; k < g.gl_pathc; k++) {
			const char *p = g.gl_pathv[k];

			if (realpath(p, real) == NULL || stat(real, &st) < 0) {
				if (errno == ENOENT || errno == ENOTDIR)
					continue; /* a dangling link: nothing to cover */
				log_warn("cannot resolve %s", p);
				globfree(&g);
				return -1;
			}
			if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
				continue; /* not what the list is about */
			if (!strv_has(out, real) && strv_add(out, real) < 0) {
				globfree(&g);
				return -1;
			}
		}
		globfree(&g);
	}
	return 0;
}

/* Writes text to dir/name, mode 0644. 0, or -1 after logging. */
static int write_session_file(const char *dir, const char *name, const char *text, char *out,
			      size_t outlen)
{
	size_t len = strlen(text);
	int fd;

	if ((size_t)snprintf(out, outlen, "%s/%s", dir, name) >= outlen) {
		log_warnx("session directory path too long: %s", dir);
		return -1;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len) {
		log_warn("cannot write %s", out);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (close(fd) < 0) {
		log_warn("cannot write %s", out);
		return -1;
	}
	return 0;
}

/*
 * SPEC §7 Trust, for clients that read no variable. Every bundle file
 * shows trust.pem; every hashed directory shows the union of its own
 * entries and the session CA's (one file written here; the sandbox makes
 * the union in its own mount namespace, so nothing else is written on
 * the host);
 * every JDK cacerts shows the PKCS12 truststore, only when one exists:
 * made empty here, its content (a few ms) written by plan_fill() while
 * the sandbox builds itself, before the command starts. Each real file
 * or directory once.
 */
static int plan_trust(struct run_plan *pl, const struct plan_session *s,
		      const struct plan_sys_paths *sys, const char *sysdir)
{
	struct strv bundles = {0}, dirs = {0}, cacerts = {0};
	char ca_pem[PATH_MAX], out[PATH_MAX], err[1024];
	int rc = -1;

	if (sys_resolve(&bundles, sys->bundles, false) < 0 ||
	    sys_resolve(&dirs, sys->cert_dirs, true) < 0 ||
	    sys_resolve(&cacerts, sys->cacerts, false) < 0)
		goto out;
	for (size_t i = 0; i < bundles.n; i++)
		if (add_file(pl, bundles.v[i], pl->trust, true) < 0)
			goto out;
	if (cacerts.n > 0) {
		if (write_session_file(sysdir, "cacerts.p12", "", pl->truststore,
				       sizeof(pl->truststore)) < 0)
			goto out;
		for (size_t i = 0; i < cacerts.n; i++)
			if (add_file(pl, cacerts.v[i], pl->truststore, true) < 0)
				goto out;
	}
	if ((size_t)snprintf(ca_pem, sizeof(ca_pem), "%s/ca.pem", s->dir) >= sizeof(ca_pem)) {
		log_warnx("session directory path too long: %s", s->dir);
		goto out;
	}
	for (size_t i = 0; i < dirs.n; i++) {
		if ((size_t)snprintf(out, sizeof(out), i ? "%s/certs-%zu" : "%s/certs", sysdir,
				     i + 1) >= sizeof(out)) {
			log_warnx("session directory path too long: %s", sysdir);
			goto out;
		}
		if (ca_write_hashed_entry(dirs.v[i], ca_pem, out, err, sizeof(err)) < 0) {
			log_warnx("%s (the session CA for the hashed directory %s); the command was "
				  "not started",
				  err, dirs.v[i]);
			goto out;
		}
		if (add_file(pl, dirs.v[i], out, true) < 0)
			goto out;
	}
	rc = 0;
out:
	strv_free(&bundles);
	strv_free(&dirs);
	strv_free(&cacerts);
	return rc;
}

/*
 * SPEC §7 Interception: the command's resolver is the sandbox's
 * 127.0.0.1:53 (served by the proxy), and /etc/hosts names localhost
 * only, so every other name goes to it. No "search" or "domain" line: a
 * short name is asked as it is, not once per host search domain (each a
 * refusal line for a name nobody typed). timeout:2 attempts:3: the
 * resolver is local and answers from memory, so a lost answer is retried
 * sooner than glibc's 5 s, and three tries ride out a busy proxy. A
 * system path that does not exist is left alone: glibc, musl and Go then
 * ask 127.0.0.1:53 anyway, and localhost still resolves through
 * nss-myhostname or the resolver.
 */
static const char resolv_text[] =
	"# passavant: the sandbox's resolver (the proxy answers for allowed names)\n"
	"nameserver 127.0.0.1\n"
	"options timeout:2 attempts:3\n";
static const char hosts_text[] =
	"127.0.0.1 localhost\n"
	"::1 localhost ip6-localhost ip6-loopback\n";

static int plan_resolver(struct run_plan *pl, const struct plan_sys_paths *sys, const char *sysdir)
{
	const char *const files[][3] = {
		{sys->resolv_conf, "resolv.conf", resolv_text},
		{sys->hosts, "hosts", hosts_text},
	};
	char out[PATH_MAX];

	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		const char *const one[] = {files[i][0], NULL};
		struct strv real = {0};
		int rc;

		if (files[i][0] == NULL)
			continue;
		rc = sys_resolve(&real, one, false);
		if (rc == 0 && real.n > 0) {
			rc = write_session_file(sysdir, files[i][1], files[i][2], out, sizeof(out));
			if (rc == 0)
				rc = add_file(pl, real.v[0], out, true);
		}
		strv_free(&real);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The largest info/exclude shown with the placeholders added (1 MiB);
 * a larger one is left as it is. */
#define PLAN_EXCLUDE_MAX (1024 * 1024)

/* The first line of the small file path (a .git file, a commondir),
 * newline cut, into buf. 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

/* For a work tree whose .git is a file (a linked worktree, a
 * submodule): the info/exclude git reads, in the common git directory
 * ("gitdir: X" in .git, then X's commondir when it has one), into ex.
 * 0 or -1. */
static int git_common_exclude(const char *top, char *ex, size_t exlen)
{
	char line[PATH_MAX], path[2 * PATH_MAX + 16], gitdir[PATH_MAX], common[PATH_MAX];

	snprintf(path, sizeof(path), "%s/.git", top);
	if (read_line(path, line, sizeof(line)) < 0 || strncmp(line, "gitdir: ", 8) != 0)
		return -1;
	if (line[8] == '/')
		snprintf(path, sizeof(path), "%s", line + 8);
	else
		snprintf(path, sizeof(path), "%s/%s", top, line + 8);
	if (realpath(path, gitdir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/commondir", gitdir);
	if (read_line(path, line, sizeof(line)) == 0) {
		if (line[0] == '/')
			snprintf(path, sizeof(path), "%s", line);
		else
			snprintf(path, sizeof(path), "%s/%s", gitdir, line);
		if (realpath(path, common) == NULL)
			return -1;
	} else {
		snprintf(common, sizeof(common), "%s", gitdir);
	}
	return (size_t)snprintf(ex, exlen, "%s/info/exclude", common) >= exlen ? -1 : 0;
}

/* The info/exclude git reads for the work tree top (which has a .git
 * entry): top/.git/info/exclude, or the common git directory's for a
 * .git file. 0 or -1 (not a repository passavant lists for). */
static int repo_exclude(const char *top, char *ex, size_t exlen)
{
	const char *t = strcmp(top, "/") == 0 ? "" : top;
	char git[PATH_MAX + 8];
	struct stat st;

	if ((size_t)snprintf(git, sizeof(git), "%s/.git", t) >= sizeof(git) || lstat(git, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode))
		return (size_t)snprintf(ex, exlen, "%s/.git/info/exclude", t) >= exlen ? -1 : 0;
	if (S_ISREG(st.st_mode))
		return git_common_exclude(top, ex, exlen);
	return -1;
}

/* The work tree top of the repository dir (canonical, existing) is in:
 * the nearest ancestor (dir included) holding a .git entry (mark
 * ".git"), or a .hg directory (mark ".hg"), into top. 0, or -1 when
 * none. */
static int repo_top(const char *dir, const char *mark, char *top, size_t len)
{
	char git[PATH_MAX + 8];
	struct stat st;

	if ((size_t)snprintf(top, len, "%s", dir) >= len)
		return -1;
	for (;;) {
		if ((size_t)snprintf(git, sizeof(git), "%s/%s", strcmp(top, "/") == 0 ? "" : top, mark) < sizeof(git) &&
		    lstat(git, &st) == 0 && (strcmp(mark, ".git") == 0 || S_ISDIR(st.st_mode)))
			return 0;
		if (strcmp(top, "/") == 0)
			return -1;
		*strrchr(top, '/') = '\0';
		if (top[0] == '\0')
			strcpy(top, "/");
	}
}

/* One repository's list: the info/exclude git reads for it (ex) and the
 * anchored paths of its work trees' placeholders. */
struct repo_list {
	char ex[PATH_MAX + 32];
	struct strv lines;
};

/*
 * Shows the info/exclude ex in the session with, after its own lines,
 * lines (the placeholders). n numbers the session files. A missing
 * info/exclude: info/ shown as the union of its own entries and a session
 * directory holding one; a missing info/ too: the same on an empty
 * placeholder directory the sandbox makes (sbx_file.may_be_missing).
 * 0, or -1 after logging.
 */
static int show_exclude(struct run_plan *pl, const char *sysdir, unsigned n, char *ex, const struct strv *lines)
{
	char out[PATH_MAX], name[64], info[PATH_MAX + 32];
	struct stat st;
	char *text = NULL, *all = NULL;
	size_t tlen = 0, alen = 0;
	bool union_info = false, no_info = false;
	FILE *mf;
	int fd, rc = -1;

	fd = open(ex, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* No info/exclude (`git init --template=`, or removed): the
		 * session's info/ is shown with one (the union of info/'s own
		 * entries and a session directory holding it: the review of
		 * round 33); no info/ either: on a placeholder directory
		 * (round 34), when the git directory is there. */
		snprintf(info, sizeof(info), "%s", ex);
		*strrchr(info, '/') = '\0';
		if (lstat(info, &st) < 0) {
			char gitdir[PATH_MAX + 32];

			snprintf(gitdir, sizeof(gitdir), "%s", info);
			*strrchr(gitdir, '/') = '\0';
			if (errno != ENOENT || lstat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode))
				return 0;
			no_info = true;
		} else if (!S_ISDIR(st.st_mode)) {
			return 0;
		}
		union_info = true;
		text = strdup("");
		if (text == NULL)
			goto oom;
	} else if (fd < 0) {
		return 0;
	} else {
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > PLAN_EXCLUDE_MAX) {
			(void)close(fd);
			return 0;
		}
		text = calloc(1, (size_t)st.st_size + 1);
		if (text == NULL || (tlen = (size_t)read(fd, text, (size_t)st.st_size)) != (size_t)st.st_size) {
			(void)close(fd);
			free(text);
			log_warnx("cannot read %s", ex);
			return -1;
		}
		(void)close(fd);
	}
	mf = open_memstream(&all, &alen);
	if (mf == NULL)
		goto oom;
	fputs(text, mf);
	if (tlen > 0 && text[tlen - 1] != '\n')
		fputc('\n', mf);
	fputs("# passavant run: the empty files and directories this session made to protect these\n"
	      "# paths (removed after it; shown here in the session only, the repository's file is\n"
	      "# not changed)\n", mf);
	for (size_t i = 0; i < lines->n; i++) {
		/* gitignore syntax: a leading "#" or "!", "\\", "*", "?", "["
		 * and trailing spaces are escaped with a backslash. */
		for (const char *c = lines->v[i]; *c != '\0'; c++) {
			if (strchr("\\*?[#! ", *c) != NULL)
				fputc('\\', mf);
			fputc(*c, mf);
		}
		fputc('\n', mf);
	}
	if (fclose(mf) != 0)
		goto oom;
	if (union_info) {
		char dir[PATH_MAX];

		if ((size_t)snprintf(dir, sizeof(dir), "%s/git-info-%u", sysdir, n) >= sizeof(dir) ||
		    mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0) {
			log_warn("cannot create %s/git-info-%u", sysdir, n);
			goto done;
		}
		*strrchr(ex, '/') = '\0'; /* info/ */
		if (write_session_file(dir, "exclude", all, out, sizeof(out)) == 0 && add_file(pl, ex, dir, true) == 0) {
			pl->files[pl->n_files - 1].may_be_missing = no_info;
			rc = 0;
		}
	} else if (snprintf(name, sizeof(name), "git-info-exclude-%u", n) > 0 &&
		   write_session_file(sysdir, name, all, out, sizeof(out)) == 0 && add_file(pl, ex, out, true) == 0) {
		rc = 0;
	}
	goto done;
oom:
	log_warn("run");
done:
	free(all);
	free(text);
	return rc;
}

/* The most repositories whose placeholders are listed (the rest keep
 * theirs shown untracked; a plan has a few hundred placeholders). */
#define PLAN_EXCLUDE_REPOS 64

/* Adds cur (a placeholder below top) to the list of the repository
 * keyed key in *repos (made when new, up to PLAN_EXCLUDE_REPOS). 0, or
 * -1 after logging. */
static int add_line(struct repo_list **repos, size_t *n, const char *key, const char *top, const char *cur)
{
	size_t r, tl = strcmp(top, "/") == 0 ? 0 : strlen(top);

	for (r = 0; r < *n && strcmp((*repos)[r].ex, key) != 0; r++)
		;
	if (r == *n) {
		struct repo_list *nr;

		if (*n == PLAN_EXCLUDE_REPOS)
			return 0;
		nr = realloc(*repos, (*n + 1) * sizeof(*nr));
		if (nr == NULL) {
			log_warn("run");
			return -1;
		}
		*repos = nr;
		memset(&nr[*n], 0, sizeof(nr[*n]));
		snprintf(nr[*n].ex, sizeof(nr[*n].ex), "%s", key);
		(*n)++;
	}
	return strv_add_unique(&(*repos)[r].lines, cur + tl) < 0 ? -1 : 0;
}

/*
 * The same for a Mercurial work tree top (round 34: `hg status` showed
 * the placeholders untracked, `hg commit -A` took them): the session's
 * top/.hg/hgrc is its own text and a [ui] section naming a session file
 * of anchored patterns (`ignore.passavant`), shown read-only (the row
 * .hg/hgrc is protected anyway); a missing hgrc on a placeholder file the
 * sandbox makes (sbx_file.may_be_missing). The host's file is not
 * changed. 0, or -1 after logging.
 */
static int show_hgignore(struct run_plan *pl, const char *sysdir, unsigned n, const char *top,
			 const struct strv *lines)
{
	char hgrc[PATH_MAX + 16], ign[PATH_MAX], out[PATH_MAX], name[64];
	char *text = NULL, *all = NULL, *pat = NULL;
	size_t tlen = 0, alen = 0, plen = 0;
	bool missing = false;
	struct stat st;
	FILE *mf;
	int fd, rc = -1;

	if ((size_t)snprintf(hgrc, sizeof(hgrc), "%s/.hg/hgrc", strcmp(top, "/") == 0 ? "" : top) >= sizeof(hgrc))
		return 0;
	fd = open(hgrc, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return 0;
	if (fd < 0) {
		missing = true;
		text = strdup("");
	} else {
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > PLAN_EXCLUDE_MAX) {
			(void)close(fd);
			return 0;
		}
		text = calloc(1, (size_t)st.st_size + 1);
		if (text != NULL && (tlen = (size_t)read(fd, text, (size_t)st.st_size)) != (size_t)st.st_size) {
			(void)close(fd);
			free(text);
			log_warnx("cannot read %s", hgrc);
			return -1;
		}
		(void)close(fd);
	}
	if (text == NULL)
		goto oom;
	/* the patterns: regular expressions, every character but letters,
	 * digits, '_' and '/' escaped */
	mf = open_memstream(&pat, &plen);
	if (mf == NULL)
		goto oom;
	fputs("# passavant run: the empty files and directories this session made to protect these paths\n"
	      "syntax: regexp\n", mf);
	for (size_t i = 0; i < lines->n; i++) {
		fputc('^', mf);
		for (const char *c = lines->v[i] + 1; *c != '\0'; c++) {
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			      *c == '_' || *c == '/'))
				fputc('\\', mf);
			fputc(*c, mf);
		}
		fputs("$\n", mf);
	}
	if (fclose(mf) != 0)
		goto oom;
	if (snprintf(name, sizeof(name), "hg-ignore-%u", n) < 0 ||
	    write_session_file(sysdir, name, pat, ign, sizeof(ign)) < 0)
		goto done;
	mf = open_memstream(&all, &alen);
	if (mf == NULL)
		goto oom;
	fputs(text, mf);
	if (tlen > 0 && text[tlen - 1] != '\n')
		fputc('\n', mf);
	fprintf(mf, "# passavant run: shown in the session only, the repository's file is not changed\n"
		    "[ui]\nignore.passavant = %s\n", ign);
	if (fclose(mf) != 0)
		goto oom;
	if (snprintf(name, sizeof(name), "hgrc-%u", n) > 0 &&
	    write_session_file(sysdir, name, all, out, sizeof(out)) == 0 && add_file(pl, hgrc, out, true) == 0) {
		pl->files[pl->n_files - 1].may_be_missing = missing;
		rc = 0;
	}
	goto done;
oom:
	log_warn("run");
done:
	free(pat);
	free(all);
	free(text);
	return rc;
}

/*
 * The placeholders, kept out of git status in the session. The sandbox
 * covers a protected path that does not exist (`.envrc`, `.vscode`,
 * `.gitmodules`, about a hundred in a fresh project) with an empty file
 * or directory it makes, removed after the run; git saw them untracked,
 * and an agent's `git add -A && git commit` committed them (the review
 * of round 32). Each placeholder the plan will make (the first missing
 * component of a protected path whose parent the command may write, none
 * inside a .git) belongs to the repository of the nearest ancestor with
 * a .git entry: the working directory's, a nested one or a submodule,
 * another writable tree's (round 34). That repository's info/exclude
 * (its common git directory's, for a linked worktree or a submodule) is
 * shown in the session (read-only, as info/ is) with one anchored line
 * per placeholder after its own lines. The host's file is not changed.
 * Nothing for an info/exclude that is not a regular file. The same for
 * the Mercurial work tree of the nearest ancestor with a .hg directory
 * (show_hgignore()). 0, or -1 after logging.
 */
static int plan_git_exclude(struct run_plan *pl, const struct plan_host *h, const char *sysdir)
{
	struct repo_list *repos = NULL, *hgrepos = NULL;
	char lastdir[PATH_MAX] = "", top[PATH_MAX] = "", hgtop[PATH_MAX] = "", ex[PATH_MAX + 32];
	bool have_ex = false, have_hg = false;
	size_t nrepos = 0, nhg = 0;
	int rc = -1;

	(void)h;
	for (size_t i = 0; i < pl->protect.n; i++) {
		const char *p = pl->protect.v[i];
		char cur[PATH_MAX], parent[PATH_MAX];
		struct stat st;
		bool writable = false, found = false;

		if (p[0] != '/' || strlen(p) >= sizeof(cur))
			continue;
		/* the first missing component */
		for (const char *c = p + 1;; c++) {
			if (*c != '/' && *c != '\0')
				continue;
			memcpy(cur, p, (size_t)(c - p));
			cur[c - p] = '\0';
			if (lstat(cur, &st) < 0) {
				found = errno == ENOENT;
				break;
			}
			if (*c == '\0' || !S_ISDIR(st.st_mode))
				break;
		}
		if (!found || strstr(cur, "/.git/") != NULL || strcmp(strrchr(cur, '/'), "/.git") == 0)
			continue;
		snprintf(parent, sizeof(parent), "%s", cur);
		*strrchr(parent, '/') = '\0';
		if (parent[0] == '\0')
			strcpy(parent, "/");
		for (size_t k = 0; k < pl->allow_write.n && !writable; k++)
			writable = path_under(parent, pl->allow_write.v[k]);
		if (!writable)
			continue;
		if (strcmp(parent, lastdir) != 0) {
			snprintf(lastdir, sizeof(lastdir), "%s", parent);
			have_ex = repo_top(parent, ".git", top, sizeof(top)) == 0 &&
				  repo_exclude(top, ex, sizeof(ex)) == 0;
			have_hg = repo_top(parent, ".hg", hgtop, sizeof(hgtop)) == 0;
		}
		if (have_hg && strstr(cur, "/.hg/") == NULL && strcmp(strrchr(cur, '/'), "/.hg") != 0 &&
		    add_line(&hgrepos, &nhg, hgtop, hgtop, cur) < 0)
			goto done;
		if (have_ex && add_line(&repos, &nrepos, ex, top, cur) < 0)
			goto done;
	}
	for (size_t r = 0; r < nrepos; r++)
		if (show_exclude(pl, sysdir, (unsigned)r, repos[r].ex, &repos[r].lines) < 0)
			goto done;
	for (size_t r = 0; r < nhg; r++)
		if (show_hgignore(pl, sysdir, (unsigned)r, hgrepos[r].ex, &hgrepos[r].lines) < 0)
			goto done;
	rc = 0;
done:
	for (size_t r = 0; r < nrepos; r++)
		strv_free(&repos[r].lines);
	free(repos);
	for (size_t r = 0; r < nhg; r++)
		strv_free(&hgrepos[r].lines);
	free(hgrepos);
	return rc;
}

/* The session files the system paths are shown with, in
 * <session>/PLAN_SYS_SUBDIR (made here, 0755: the command reads them). */
static int plan_sys(struct run_plan *pl, const struct plan_host *h, const struct plan_session *s)
{
	const struct plan_sys_paths *sys = s->sys != NULL ? s->sys : plan_sys_paths_default();
	char sysdir[PATH_MAX];

	if ((size_t)snprintf(sysdir, sizeof(sysdir), "%s/%s", s->dir, PLAN_SYS_SUBDIR) >=
	    sizeof(sysdir)) {
		log_warnx("session directory path too long: %s", s->dir);
		return -1;
	}
	if (mkdir(sysdir, 0755) < 0 || chmod(sysdir, 0755) < 0) {
		log_warn("cannot create %s", sysdir);
		return -1;
	}
	struct timespec t0, t1;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	if (plan_trust(pl, s, sys, sysdir) < 0)
		return -1;
	if (s->intercept && plan_resolver(pl, sys, sysdir) < 0)
		return -1;
	if (plan_git_exclude(pl, h, sysdir) < 0)
		return -1;
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("run: trust and resolver files in %.1f ms",
		  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}

/* Whether rp is denied whole for reading already. */
static bool under_deny_read(const struct run_plan *pl, const char *rp)
{
	for (size_t i = 0; i < pl->deny_read.n; i++)
		if (path_under(rp, pl->deny_read.v[i]))
			return true;
	return false;
}

/* Whether rp holds the work: the working directory or a writable tree. */
static bool holds_work(const struct run_plan *pl, const char *cwd, const char *rp)
{
	bool holds = cwd != NULL && cwd[0] == '/' && path_under(cwd, rp);

	for (size_t k = 0; k < pl->allow_write.n && !holds; k++)
		holds = path_under(pl->allow_write.v[k], rp);
	return holds;
}

/*
 * Round 44 (fix44t), the class of secret files the command can read only
 * through their group or other bits: the store rows of another user's
 * home (bob's ~/.netrc 0644, a ~/.ssh 0711 holding an id_rsa 0644; as
 * root, every one). The HOME rows were denied only in HOME, the password
 * database's home of the user and the Windows and Mac homes
 * (other_homes()): another Linux user's were read in clear. Each home of
 * /etc/passwd (the local file: no directory service is listed at every
 * start) and each directory of /home, other than the user's, gets a read
 * deny for each of its HOME read rows that exists and that the process
 * can read or search (so the cost is a mount per store actually
 * readable: none for a user who cannot reach other homes), unless
 * allowRead names that path. At most OTHER_USER_HOMES homes. 0, or -1
 * after logging (ENOMEM).
 */
/* m: the host's mounts (fix45h: a store on a mount not cheap to look at,
 * ~bob/.ssh an autofs or NFS mount of its own, is denied whole, not
 * looked at), NULL when the home is in the session's use. */
/* strcasecmp() for qsort() and bsearch() of a strv's strings (review46h:
 * it was strcmp(); see home_entries()). */
static int home_entry_cmp(const void *a, const void *b)
{
	return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Round 46 (fix46h): the entries of the home real, sorted, into names;
 * false when it cannot be listed (EACCES of a 0711 home: every row is
 * then looked at), or one entry's name is not ASCII (review46h). A row whose first component is not among them is not
 * there: one getdents of the home in place of a walk of each of the
 * table's some hundreds of HOME rows (measured with 100 homes: the walks
 * took about a second of every start).
 */
static bool home_entries(const char *real, struct strv *names)
{
	DIR *d = opendir(real);
	struct dirent *de;
	bool ok = d != NULL;

	while (ok && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* review46h: a name the lookup finds may not be the one the
		 * listing gives: a case-insensitive home (ext4, f2fs or tmpfs
		 * casefold, vfat, exfat, ntfs3, XFS ascii-ci, ZFS) finds
		 * ".SSH" for ".ssh", and Unicode folding finds ASCII letters
		 * for others (U+017F LONG S for "s", U+212A KELVIN SIGN for
		 * "k"). Compared with ASCII case
		 * folded, and a name with a byte not ASCII makes every row
		 * looked at. */
		for (const unsigned char *c = (const unsigned char *)de->d_name; ok && *c != '\0'; c++)
			ok = *c < 0x80;
		if (ok)
			ok = strv_add(names, de->d_name) == 0;
	}
	if (ok && errno != 0)
		ok = false;
	if (d != NULL)
		(void)closedir(d);
	if (ok && names->n > 1)
		qsort(names->v, names->n, sizeof(*names->v), home_entry_cmp);
	return ok;
}

/* Whether the first component of the row path rel is among names. */
static bool home_has_entry(const struct strv *names, const char *rel)
{
	char first[NAME_MAX + 1];
	const char *key = first;
	size_t n = strcspn(rel, "/");

	if (n > NAME_MAX)
		return true; /* looked at: the walk says */
	memcpy(first, rel, n);
	first[n] = '\0';
	return names->n > 0 && bsearch(&key, names->v, names->n, sizeof(*names->v), home_entry_cmp) != NULL;
}

static int other_user_home(struct run_plan *pl, const char *real, const char *cwd, const struct host_mounts *m)
{
	char path[PATH_MAX], rp[PATH_MAX];
	struct strv names = {0};
	bool listed;

	for (size_t i = 0; i < pl->deny_read.n; i++)
		if (path_under(real, pl->deny_read.v[i]))
			return 0; /* denied whole already (/root) */
	/* Listed only on a local mount (m says so) or one in use (m NULL). */
	listed = !host_mounts_remote(m, real) && home_entries(real, &names);
	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m_row = policy_mandatory_get(i);
		struct stat ps;
		enum path_look look;

		if (!(m_row->where & POLICY_MAND_HOME) || !(m_row->deny & POLICY_MAND_READ) ||
		    (listed && !home_has_entry(&names, m_row->path)) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", real, m_row->path) >= sizeof(path) ||
		    strv_has(&pl->allow_read, path))
			continue;
		/* A link (~bob/.netrc -> dotfiles/netrc): denied where it
		 * leads, as the policy's own paths are (path_look(): the
		 * canonical path, or where it reaches a mount not cheap to
		 * look at). Not one that holds the work (the working
		 * directory, a writable tree). */
		look = path_look(m, path, rp, &ps);
		if (look == LOOK_NONE || strcmp(rp, "/") == 0)
			continue;
		if (look == LOOK_LOCAL && access(rp, S_ISDIR(ps.st_mode) ? X_OK : R_OK) < 0 && access(rp, R_OK) < 0)
			continue;
		if (holds_work(pl, cwd, rp) || under_deny_read(pl, rp))
			continue;
		if (strv_add_unique(&pl->deny_read, rp) < 0) {
			log_warn("run: the stores of other users' homes");
			strv_free(&names);
			return -1;
		}
	}
	strv_free(&names);
	return 0;
}

/*
 * fix45h: a home of another user on a mount not cheap to look at (an
 * autofs map's, NFS, CIFS, FUSE): denied whole for reading, nothing of
 * it looked at here (the sandbox's cover looks at the path itself once:
 * docs/sandbox.md). Unless a path the policy lets the command read holds
 * it, or it holds the work (run from /home/bob/proj as root): the mount is
 * in the session's use, and its stores are checked one by one.
 */
static int other_user_remote(struct run_plan *pl, const char *rp, const char *cwd, struct strv *denied)
{
	bool in_use = holds_work(pl, cwd, rp);

	if (under_deny_read(pl, rp))
		return 0;
	/* review45h: one an allowRead holds (allowRead: ["/home"]) was
	 * left readable whole, ~/.netrc and ~/.ssh with it, where a local
	 * home under the same allowRead has its stores denied: its stores
	 * are checked one by one too. */
	for (size_t i = 0; i < pl->allow_read.n && !in_use; i++)
		in_use = path_under(rp, pl->allow_read.v[i]);
	if (in_use)
		return other_user_home(pl, rp, cwd, NULL);
	if (strv_add_unique(&pl->deny_read, rp) < 0 || strv_add(denied, rp) < 0) {
		log_warn("run: the homes of other users");
		return -1;
	}
	return 0;
}

/*
 * The remote homes first, and each only once with what it holds (a home
 * linked into another's: /home/x -> /home/bob/sub): the sandbox's cover
 * of a path inside a denied one would look it up. review45h: the ones
 * inside another come after it, not skipped: the outer one in the
 * session's use (root run from /home/bob/proj) is not denied, and the
 * inner one's stores were left readable; it has them checked one by
 * one (the mount is in use). 0, or -1 after logging.
 */
static int plan_remote_homes(struct run_plan *pl, const struct strv *remote, const char *cwd, struct strv *denied)
{
	int rc = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; rc == 0 && i < remote->n; i++) {
			bool inside = false;

			for (size_t j = 0; j < remote->n && !inside; j++)
				inside = j != i && strcmp(remote->v[i], remote->v[j]) != 0 &&
					 path_under(remote->v[i], remote->v[j]);
			if (inside != (pass == 1))
				continue;
			rc = inside ? other_user_home(pl, remote->v[i], cwd, NULL)
				    : other_user_remote(pl, remote->v[i], cwd, denied);
		}
	}
	return rc;
}

/*
 * Round 46 (fix46h): the one notice line of the remote homes denied
 * whole (a shared NFS /home made every colleague's home unreadable in
 * the session with no word): which, why, what to do. Unless quiet.
 * 0, or -1 after logging (ENOMEM).
 */
static int print_remote_homes_notice(const struct strv *denied)
{
	char *list;

	if (denied->n == 0)
		return 0;
	if ((list = notice_list(denied, "", 4, "the notice of the remote homes")) == NULL)
		return -1;
	fprintf(stderr,
		"passavant: %zu home%s of other users on network or automounted filesystems (NFS, CIFS, autofs, "
		"FUSE) %s unreadable whole in the sandbox, as looking for their stores could mount them or wait "
		"on their server: %s (to read one, name it in filesystem.allowRead: its stores are then denied "
		"one by one)\n",
		denied->n, denied->n == 1 ? "" : "s", denied->n == 1 ? "is" : "are", list);
	free(list);
	return 0;
}

static int plan_other_users(struct run_plan *pl, const struct plan_host *h, bool quiet)
{
	char cwd_buf[PATH_MAX];
	const char *cwd = h->cwd != NULL && realpath(h->cwd, cwd_buf) != NULL ? cwd_buf : NULL;
	struct strv homes = {0}, remote = {0}, denied = {0};
	struct host_mounts m;
	int rc = host_mounts_read(&m);

	if (rc == 0)
		rc = other_user_homes(&homes, &remote, &m, h);
	if (rc == 0)
		rc = plan_remote_homes(pl, &remote, cwd, &denied);
	for (size_t i = 0; rc == 0 && i < homes.n; i++)
		rc = other_user_home(pl, homes.v[i], cwd, &m);
	if (rc == 0 && !quiet)
		rc = print_remote_homes_notice(&denied);
	strv_free(&homes);
	strv_free(&remote);
	strv_free(&denied);
	strv_free(&m.at);
	return rc;
}

int plan_build(struct run_plan *pl, const policy_t *p, const mask_table_t *masks,
	       const struct plan_host *h, const struct plan_session *s)
{
	memset(pl, 0, sizeof(*pl));
	if (snprintf(pl->trust, sizeof(pl->trust), "%s/trust.pem", s->dir) >= (int)sizeof(pl->trust)) {
		log_warnx("session directory path too long");
		return -1;
	}
	if (plan_fs(pl, p) < 0 || plan_shared(pl, h) < 0 || plan_other_users(pl, h, s->quiet) < 0 || plan_npmrc_caches(pl, h) < 0 ||
	    plan_protect(pl, h, s) < 0 ||
	    plan_files(pl, masks) < 0 ||
	    plan_siblings(pl, h) < 0 || plan_sys(pl, h, s) < 0 || plan_remask_files(pl, masks, h, s) < 0 ||
	    plan_env(pl, p, masks, h, s) < 0) {
		plan_free(pl);
		return -1;
	}
	return 0;
}

int plan_fill(void *arg, char *err, size_t errlen)
{
	const struct run_plan *pl = arg;
	struct timespec t0, t1;

	if (pl->truststore[0] == '\0')
		return 0;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ca_fill_truststore(pl->trust, pl->truststore, err, errlen) < 0)
		return -1;
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("run: the Java truststore in %.1f ms, while the sandbox builds itself",
		  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}

void plan_sbx_config(const struct run_plan *pl, const policy_t *p, char *const *argv,
		     struct sbx_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->argv = argv;
	cfg->cwd = NULL;
	cfg->deny_read = strv_list(&pl->deny_read);
	cfg->allow_read = strv_list(&pl->allow_read);
	cfg->allow_write = strv_list(&pl->allow_write);
	cfg->deny_write = strv_list(&pl->deny_write);
	cfg->protect = strv_list(&pl->protect);
	cfg->cover = strv_list(&pl->cover);
	cfg->scratch = strv_list(&pl->scratch);
	cfg->follow_under = strv_list(&pl->follow);
	cfg->follow_also = strv_list(&pl->follow_also);
	cfg->named_secrets = strv_list(&pl->named);
	cfg->files = pl->files;
	cfg->n_files = pl->n_files;
	cfg->env_base = NULL;
	cfg->env_add = strv_list(&pl->env_add);
	cfg->env_remove = strv_list(&pl->env_remove);
	cfg->allow_unix_sockets = policy_allow_unix_sockets(p);
	cfg->listen_port = SBX_DEFAULT_PORT;
	if (pl->truststore[0] != '\0') {
		cfg->meanwhile = plan_fill;
		cfg->meanwhile_arg = (void *)pl; /* plan_fill() only reads it */
	}
}

void plan_free(struct run_plan *pl)
{
	strv_free(&pl->deny_read);
	strv_free(&pl->named);
	strv_free(&pl->allow_read);
	strv_free(&pl->allow_write);
	strv_free(&pl->deny_write);
	strv_free(&pl->protect);
	strv_free(&pl->cover);
	strv_free(&pl->scratch);
	strv_free(&pl->follow);
	strv_free(&pl->follow_also);
	strv_free(&pl->env_add);
	strv_free(&pl->env_remove);
	strv_free(&pl->file_strs);
	strv_free(&pl->code_homes_new);
	free(pl->files);
	pl->files = NULL;
	pl->n_files = pl->cap_files = 0;
}

/* ------------------------------------------------ the post-run check */

int plan_git_roots(struct strv *roots, const policy_t *p)
{
	char real[PATH_MAX], runtime[PATH_MAX], own_run[PATH_MAX];

	/* Not a shared directory plan_shared() leaves out (round 43): it
	 * is not writable, and its walk would go through every user's
	 * files there. */
	shared_runtime(getenv("XDG_RUNTIME_DIR"), runtime, own_run);
	for (size_t i = 0; i < policy_fs_count(p, FS_ALLOW_WRITE); i++) {
		if (realpath(policy_fs_path(p, FS_ALLOW_WRITE, i), real) == NULL ||
		    shared_real(real, runtime, own_run))
			continue;
		if (shared_refused(policy_fs_path(p, FS_ALLOW_WRITE, i), real, runtime, own_run) ||
		    strv_add_unique(roots, real) < 0)
			return -1;
	}
	return 0;
}

struct sbx_ctl_path *plan_ctl_paths(void)
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
		ctl[n].why = m->why;
		ctl[n].if_dir = (m->where & POLICY_MAND_WS_IF_DIR) != 0;
		ctl[n].pointer = (m->where & POLICY_MAND_WS_POINTER) != 0;
		ctl[n++].kind = strcmp(m->path, ".gitmodules") == 0  ? "git submodule settings"
				: strncmp(m->path, ".hg/hgrc", 8) == 0 ? "Mercurial repository settings"
								     : "editor or agent settings";
	}
	return ctl;
}

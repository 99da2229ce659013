/*
 * lookup.c - where the policy comes from (SPEC §2): -p, $PASSAVANT_POLICY,
 * $XDG_CONFIG_HOME/passavant/policy.yaml (~/.config/passavant/...), else
 * the embedded default. Never a file in the working directory by
 * implication: the sandboxed agent can write there, and a policy it wrote
 * would apply to the next run.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader_int.h"

/* Writes a formatted line into buf (truncating). Returns src. */
static enum policy_source put(char *buf, size_t buflen, enum policy_source src, const char *fmt,
			      const char *a, const char *b) PRINTF(4, 0);
static enum policy_source put(char *buf, size_t buflen, enum policy_source src, const char *fmt,
			      const char *a, const char *b)
{
	if (buflen > 0)
		snprintf(buf, buflen, fmt, a, b);
	return src;
}

/* An explicitly named policy must exist: a typo must not silently fall
 * back to a weaker or stronger policy than the user meant. */
static enum policy_source named(const char *path, const char *how, char *buf, size_t buflen)
{
	struct stat st;

	if (strlen(path) >= buflen)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: policy path too long (%s)", how,
			   "");
	if (stat(path, &st) != 0)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: %s", path, strerror(errno));
	(void)how;
	return put(buf, buflen, POLICY_SOURCE_FILE, "%s%s", path, "");
}

/* Contract in policy.h. */
enum policy_source policy_lookup(const char *cli_path, char *buf, size_t buflen)
{
	const char *env = getenv("PASSAVANT_POLICY");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char path[4096];
	struct stat st;
	int n;

	if (cli_path != NULL)
		return named(cli_path, "-p", buf, buflen);
	/* A relative $PASSAVANT_POLICY names a file in whatever directory
	 * passavant happens to start in, which the agent may write: the
	 * working directory by implication. -p is typed for one run and may
	 * be relative; a variable set once for every run may not. */
	if (env != NULL && env[0] != '\0' && env[0] != '/')
		return put(buf, buflen, POLICY_SOURCE_ERROR,
			   "$PASSAVANT_POLICY=%s: expected an absolute path (a relative one names a "
			   "file in the working directory)%s",
			   env, "");
	if (env != NULL && env[0] != '\0')
		return named(env, "$PASSAVANT_POLICY", buf, buflen);
	/* The XDG base directory spec ignores a relative $XDG_CONFIG_HOME. */
	if (xdg != NULL && xdg[0] == '/') {
		n = snprintf(path, sizeof(path), "%s/passavant/policy.yaml", xdg);
	} else {
		if (home == NULL || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home == NULL || home[0] != '/')
			return put(buf, buflen, POLICY_SOURCE_EMBEDDED, "%s%s", "", "");
		n = snprintf(path, sizeof(path), "%s/.config/passavant/policy.yaml", home);
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		return put(buf, buflen, POLICY_SOURCE_ERROR,
			   "configuration directory path too long%s%s", "", "");
	/* A configured file that exists but cannot be read is an error the
	 * loader reports; only a file that is not there falls back. */
	if (stat(path, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return put(buf, buflen, POLICY_SOURCE_EMBEDDED, "%s%s", "", "");
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: %s", path, strerror(errno));
	}
	if (strlen(path) >= buflen)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "policy path too long%s%s", "", "");
	return put(buf, buflen, POLICY_SOURCE_FILE, "%s%s", path, "");
}

/*
 * lookup.c - where the policy comes from (SPEC §2): -p, $PASSAVANT_POLICY,
 * $XDG_CONFIG_HOME/passavant/policy.yaml (~/.config/passavant/...), else
 * the embedded default. Never a file in the working directory by
 * implication: the sandboxed agent can write there, and a policy it wrote
 * would apply to the next run. Pure: the environment, the home of the
 * password database and whether a file exists come from the caller.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
static enum policy_source named(const struct policy_lookup_env *env, const char *path,
			       const char *how, char *buf, size_t buflen)
{
	int e;

	if (strlen(path) >= buflen)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: policy path too long (%s)", how,
			   "");
	if ((e = env->probe(path)) != 0)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: %s", path, strerror(e));
	(void)how;
	return put(buf, buflen, POLICY_SOURCE_FILE, "%s%s", path, "");
}

/* Contract in policy.h. */
enum policy_source policy_lookup(const char *cli_path, const struct policy_lookup_env *le,
				 char *buf, size_t buflen)
{
	const char *env = le->passavant_policy;
	const char *xdg = le->xdg_config_home;
	const char *home = le->home;
	char path[4096];
	int n, e;

	if (cli_path != NULL)
		return named(le, cli_path, "-p", buf, buflen);
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
		return named(le, env, "$PASSAVANT_POLICY", buf, buflen);
	/* The XDG base directory spec ignores a relative $XDG_CONFIG_HOME. */
	if (xdg != NULL && xdg[0] == '/') {
		n = snprintf(path, sizeof(path), "%s/passavant/policy.yaml", xdg);
	} else {
		if (home == NULL || home[0] != '/')
			home = le->pw_home;
		if (home == NULL || home[0] != '/')
			return put(buf, buflen, POLICY_SOURCE_EMBEDDED, "%s%s", "", "");
		n = snprintf(path, sizeof(path), "%s/.config/passavant/policy.yaml", home);
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		return put(buf, buflen, POLICY_SOURCE_ERROR,
			   "configuration directory path too long%s%s", "", "");
	/* A configured file that exists but cannot be read is an error the
	 * loader reports; only a file that is not there falls back. */
	if ((e = le->probe(path)) != 0) {
		if (e == ENOENT || e == ENOTDIR)
			return put(buf, buflen, POLICY_SOURCE_EMBEDDED, "%s%s", "", "");
		return put(buf, buflen, POLICY_SOURCE_ERROR, "%s: %s", path, strerror(e));
	}
	if (strlen(path) >= buflen)
		return put(buf, buflen, POLICY_SOURCE_ERROR, "policy path too long%s%s", "", "");
	return put(buf, buflen, POLICY_SOURCE_FILE, "%s%s", path, "");
}

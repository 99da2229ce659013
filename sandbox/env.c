/*
 * env.c - the command's environment (SPEC §7): pure functions.
 *
 * The launcher does not decide which variables the command gets; its
 * caller does (proxy and trust variables, sentinels, removals of denied
 * variables). sbx_proxy_env() builds the fixed part of SPEC §7 so that
 * every caller sets the same list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

extern char **environ;

/* SPEC §7: the proxy variables, in both cases. */
static const char *const proxy_vars[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "grpc_proxy",
};

/* SPEC §7: every variable that names a trust bundle. */
static const char *const trust_vars[] = {
	"SSL_CERT_FILE", "NIX_SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
	"PIP_CERT", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
	"CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
};

void sbx_env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

char **sbx_proxy_env(uint16_t port, const char *trust_pem)
{
	size_t n = ARRAY_LEN(proxy_vars) + ARRAY_LEN(trust_vars) + 4, k = 0, i;
	char **env = calloc(n + 1, sizeof(*env));

	if (env == NULL)
		return NULL;
	for (i = 0; i < ARRAY_LEN(proxy_vars); i++)
		if (asprintf(&env[k++], "%s=http://127.0.0.1:%u", proxy_vars[i], (unsigned)port) < 0)
			goto fail;
	if (asprintf(&env[k++], "NO_PROXY=localhost,127.0.0.1,::1") < 0 ||
	    asprintf(&env[k++], "no_proxy=localhost,127.0.0.1,::1") < 0 ||
	    asprintf(&env[k++], "NODE_USE_ENV_PROXY=1") < 0)
		goto fail;
	for (i = 0; i < ARRAY_LEN(trust_vars); i++)
		if (asprintf(&env[k++], "%s=%s", trust_vars[i], trust_pem) < 0)
			goto fail;
	return env;
fail:
	/* asprintf leaves its pointer undefined on failure. */
	env[k - 1] = NULL;
	sbx_env_free(env);
	return NULL;
}

/* Does entry ("NAME=value") have the name name (length len)? */
static bool has_name(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

char **sbx_env_build(char *const *base, const char *const *remove, const char *const *add)
{
	size_t nb = 0, na = 0, k = 0, i, j, len;
	char **env;
	bool drop;

	if (base == NULL)
		base = environ;
	while (base != NULL && base[nb] != NULL)
		nb++;
	while (add != NULL && add[na] != NULL)
		na++;
	for (i = 0; i < na; i++)
		if (strchr(add[i], '=') == NULL || add[i][0] == '=')
			return NULL;
	env = calloc(nb + na + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; i < nb; i++) {
		len = strcspn(base[i], "=");
		drop = base[i][len] != '=';
		for (j = 0; !drop && remove != NULL && remove[j] != NULL; j++)
			drop = strlen(remove[j]) == len && strncmp(base[i], remove[j], len) == 0;
		/* A variable add sets again is dropped here and added below. */
		for (j = 0; !drop && j < na; j++)
			drop = has_name(add[j], base[i], len);
		if (drop)
			continue;
		env[k] = strdup(base[i]);
		if (env[k++] == NULL)
			goto fail;
	}
	for (i = 0; i < na; i++) {
		len = strcspn(add[i], "=");
		/* A later add of the same name wins. */
		for (j = i + 1; j < na; j++)
			if (has_name(add[j], add[i], len))
				break;
		if (j < na)
			continue;
		env[k] = strdup(add[i]);
		if (env[k++] == NULL)
			goto fail;
	}
	return env;
fail:
	sbx_env_free(env);
	return NULL;
}

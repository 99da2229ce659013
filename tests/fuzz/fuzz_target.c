/*
 * fuzz_target.c - libFuzzer driver for proxy/target.c.
 *
 * Invariants: no crash; on success the host is normalised (re-normalising
 * it is the identity), the port is non-zero, and the authority the proxy
 * would send as Host parses back to the same host and port.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/target.h"

static void check_roundtrip(const struct target *t, uint16_t default_port)
{
	char again[POLICY_HOST_MAX + 1], url[TARGET_AUTHORITY_MAX + 16];
	struct target u;

	if (t->port == 0 || strlen(t->host) > POLICY_HOST_MAX)
		abort();
	if (policy_host_normalize(t->host, strlen(t->host), again, sizeof(again)) != NULL ||
	    strcmp(again, t->host) != 0)
		abort();
	snprintf(url, sizeof(url), "http://%s/", t->authority);
	if (target_parse_absolute(url, strlen(url), &u) != NULL || strcmp(u.host, t->host) != 0 ||
	    (u.port != t->port && !(default_port == 0 && t->port == 80)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct target t;

	if (target_parse_connect(s, size, &t) == NULL)
		check_roundtrip(&t, 0);
	if (target_parse_absolute(s, size, &t) == NULL) {
		if (t.path_len == 0 || t.path < s || t.path + t.path_len > s + size)
			if (!(t.path_len == 1 && t.path[0] == '/'))
				abort();
		check_roundtrip(&t, 80);
	}
	return 0;
}

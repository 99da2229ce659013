/*
 * fuzz_formmethod.c - libFuzzer driver for proxy/formmethod.c, the
 * reader of the methods a request body names in a `_method` parameter.
 *
 * Input: the request's Content-Type up to the first '\n' (a first byte
 * 0x00: no Content-Type), then the body.
 * Invariants: no crash, no read outside the spans fed; the verdict (the
 * refused method and what named it, or none) is the same whether the
 * body comes whole, a byte at a time, or in spans of 1 to 7 bytes whose
 * lengths the body's own bytes choose: the proxy feeds what TLS records,
 * chunks and DATA frames hand it, split anywhere. A refused method is
 * upper-case tchars or '?' and at most METHOD_TOK_MAX bytes ("..." when
 * cut), and the judge allowed none that was refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/formmethod.h"

/* A [GET, POST] host. */
static bool judge(const void *arg, const char *m, const char **rule)
{
	(void)arg;
	*rule = "allowedMethods";
	return strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0;
}

/* 0: whole; 1: a byte at a time; 2: spans chosen by the body's bytes. */
static void verdict(struct formmethod *fm, const char *ct, size_t ctlen, const uint8_t *b, size_t n, int how,
		    char *out, size_t outlen)
{
	const char *m, *rule = NULL, *where = NULL;
	enum fm_begin r = formmethod_begin(fm, ct, ctlen, judge, NULL);
	bool go = true;
	size_t i = 0;

	if (r != FM_ON) {
		snprintf(out, outlen, "begin %d", (int)r);
		return;
	}
	while (i < n && go) {
		size_t k = how == 0 ? n - i : how == 1 ? 1 : 1 + (size_t)(b[i] % 7);

		if (k > n - i)
			k = n - i;
		go = formmethod_feed(fm, (const char *)b + i, k);
		i += k;
	}
	if (go)
		(void)formmethod_end(fm);
	m = formmethod_refused(fm, &rule, &where);
	if (m == NULL) {
		snprintf(out, outlen, "none");
		return;
	}
	if (strlen(m) > METHOD_TOK_MAX + 3 || rule == NULL || where == NULL)
		abort();
	for (const char *p = m; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("!#$%&'*+-.^_`|~?", *p) != NULL))
			abort();
	if (strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0)
		abort();
	snprintf(out, outlen, "%s|%s|%s", m, rule, where);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct formmethod fm;
	char whole[256], bytes[256], spans[256];
	const uint8_t *nl = memchr(data, '\n', size);
	const char *ct = NULL;
	size_t ctlen = 0, off;

	if (nl == NULL)
		return 0;
	if (size > 0 && data[0] != 0) {
		ct = (const char *)data;
		ctlen = (size_t)(nl - data);
	}
	off = (size_t)(nl - data) + 1;
	verdict(&fm, ct, ctlen, data + off, size - off, 0, whole, sizeof(whole));
	verdict(&fm, ct, ctlen, data + off, size - off, 1, bytes, sizeof(bytes));
	verdict(&fm, ct, ctlen, data + off, size - off, 2, spans, sizeof(spans));
	if (strcmp(whole, bytes) != 0 || strcmp(whole, spans) != 0) {
		fprintf(stderr, "fuzz_formmethod: whole \"%s\", a byte at a time \"%s\", spans \"%s\"\n", whole, bytes,
			spans);
		abort();
	}
	return 0;
}

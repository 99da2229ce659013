/*
 * basic.c - base64 (RFC 4648) and the user:password of
 * `Authorization: Basic` (SPEC §4.2): substituted inside the decoded
 * credentials, re-encoded at the same length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"

/* Decoded Basic credentials up to this size use a stack scratch. */
#define BASIC_STACK_BYTES 3072

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value of a base64 digit, or -1. */
static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long mask_b64_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	size_t n = 0;

	if (len % 4 != 0 || len / 4 * 3 > outcap)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int d[4];
		size_t pad = 0;
		for (size_t k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)in[i + k];
			/* '=' only in the last quad, only as its last one or
			 * two digits. */
			if (c == '=' && i + 4 == len && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				d[k] = 0;
				pad++;
				continue;
			}
			d[k] = b64_val(c);
			if (d[k] < 0)
				return -1;
		}
		out[n++] = (unsigned char)(d[0] << 2 | d[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)((d[1] & 15) << 4 | d[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)((d[2] & 3) << 6 | d[3]);
	}
	return (long)n;
}

long mask_b64_encode(const unsigned char *in, size_t len, char *out, size_t outcap)
{
	size_t n = 0;

	if ((len + 2) / 3 * 4 > outcap)
		return -1;
	for (size_t i = 0; i < len; i += 3) {
		unsigned b0 = in[i], b1 = i + 1 < len ? in[i + 1] : 0, b2 = i + 2 < len ? in[i + 2] : 0;
		out[n++] = b64_alphabet[b0 >> 2];
		out[n++] = b64_alphabet[(b0 & 3) << 4 | b1 >> 4];
		out[n++] = i + 1 < len ? b64_alphabet[(b1 & 15) << 2 | b2 >> 6] : '=';
		out[n++] = i + 2 < len ? b64_alphabet[b2 & 63] : '=';
	}
	return (long)n;
}

int mask_basic_replace(const mask_set_t *set, char *b64, size_t len, uint64_t *counts, size_t *total)
{
	unsigned char stackbuf[BASIC_STACK_BYTES];
	unsigned char *dec = stackbuf;
	size_t cap = len / 4 * 3, n_total = 0;
	long n;
	int rc = 0;

	if (total != NULL)
		*total = 0;
	if (len == 0 || len % 4 != 0)
		return 1;
	if (cap > sizeof(stackbuf)) {
		dec = malloc(cap);
		if (dec == NULL)
			return -1;
	}
	n = mask_b64_decode(b64, len, dec, cap);
	if (n < 0) {
		rc = 1;
		goto out;
	}
	if (mask_replace_inplace(set, dec, (size_t)n, counts, &n_total) != 0) {
		rc = -1;
		goto out;
	}
	/* Equal-length pairs keep the decoded length, so the encoding has
	 * the same length as before and fits where it was. */
	if (n_total != 0 && mask_b64_encode(dec, (size_t)n, b64, len) != (long)len) {
		errno = EINVAL;
		rc = -1;
		goto out;
	}
	if (total != NULL)
		*total = n_total;
out:
	/* The decoded form holds the user:password, maybe the real value. */
	explicit_bzero(dec, cap);
	if (dec != stackbuf)
		free(dec);
	return rc;
}

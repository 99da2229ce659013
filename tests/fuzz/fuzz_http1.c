/*
 * fuzz_http1.c - libFuzzer driver for proxy/http1.c.
 *
 * The first byte picks requests or responses and the chunking; the rest is
 * a byte stream fed in chunks, message after message (pipelining), as
 * conn.c does. Invariants: no crash; consumed never exceeds what was
 * offered; a finished head serialises; an error stops consumption; the
 * head's strings stay where they are, unchanged, until the next message
 * (conn.c keeps pointers to the target: round 9 of the attack made
 * trailers move them, and ASan sees a read of the old place here).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proxy/http1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer *out;
	http1_t *h;
	const char *head0 = NULL; /* the head's text when the head was done */
	char *copy = NULL;
	size_t head0_len = 0;
	size_t off = 1, chunk;
	bool response;
	int messages = 0;

	if (size < 1)
		return 0;
	response = data[0] & 1;
	chunk = (size_t)(data[0] >> 1) + 1;
	h = http1_new(response ? HTTP1_RESPONSE : HTTP1_REQUEST, 2048);
	out = evbuffer_new();
	if (h == NULL || out == NULL)
		abort();
	http1_set_head_request(h, (data[0] & 0x80) != 0);
	while (off < size && messages < 64) {
		size_t len = size - off < chunk ? size - off : chunk, n = 0;
		enum http1_result r = http1_feed(h, (const char *)data + off, len, &n);

		if (n > len)
			abort();
		off += n;
		if (head0 != NULL) {
			const char *t;
			size_t tl;

			/* Read at the old place first: ASan reports it freed. */
			if (memcmp(head0, copy, head0_len) != 0)
				abort();
			t = http1_head_text(h, &tl);
			if (t != head0 || tl != head0_len)
				abort();
		}
		if (r == HTTP1_ERROR) {
			size_t m = 1;

			if (http1_error_status(h) < 400 || http1_feed(h, "x", 1, &m) != HTTP1_ERROR || m != 0)
				abort();
			break;
		}
		if (r == HTTP1_HEAD) {
			size_t ul;

			(void)http1_url(h, &ul);
			head0 = http1_head_text(h, &head0_len);
			free(copy);
			copy = malloc(head0_len + 1);
			if (copy == NULL)
				abort();
			memcpy(copy, head0, head0_len);
			if (response ? http1_write_response_head(h, out, 0) < 0
				     : http1_write_request_head(h, out, "/", 1, "example.com", false, false, (data[0] & 2) != 0) < 0)
				abort();
			evbuffer_drain(out, evbuffer_get_length(out));
		}
		if (r == HTTP1_DONE || (r == HTTP1_HEAD && http1_message_done(h))) {
			head0 = NULL;
			http1_reset(h);
			http1_set_head_request(h, (data[0] & 0x80) != 0);
			messages++;
			continue;
		}
		if (r == HTTP1_MORE && n < len)
			abort(); /* MORE means all of it was taken */
	}
	if (off >= size && response && http1_head_done(h) && !http1_message_done(h))
		if (http1_finish(h) != 0) {
			/* a cut body: refused, nothing to check */
		}
	free(copy);
	evbuffer_free(out);
	http1_free(h);
	return 0;
}

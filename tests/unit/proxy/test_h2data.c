/*
 * test_h2data.c - h2s_data_misplaced() (suite "proxy_h2data"): the
 * proxy's own refusal of response DATA where RFC 9113 §8.1 allows none.
 * Over the wire nghttp2's HTTP checks reset such a stream before
 * h2_up_data() sees a byte (the h2 suite's bodyless test), so only this
 * test fails should the proxy's check go (review46q, round 47).
 */
#include <string.h>

#include "proxy/h2_int.h"
#include "tests/support/testlib.h"

/* A stream as h2_up_data() finds it: forwarding, masked (mask is only
 * compared with NULL here), its final head sent with a body to come. */
static void ready(struct h2s *s, char *method, int status, cmask_t *mask)
{
	memset(s, 0, sizeof(*s));
	s->phase = H2S_FORWARD;
	s->cl_open = true;
	s->up_open = true;
	s->method = method;
	s->mask = mask;
	s->mask_resp = mask != NULL;
	s->resp_started = true;
	s->status = status;
	s->rstatus = status;
}

static void test_misplaced(void)
{
	char get[] = "GET", head[] = "HEAD", post[] = "POST", fake;
	cmask_t *m = (cmask_t *)(void *)&fake;
	struct h2s s;

	/* a body where one may be: passed to the substituter */
	ready(&s, get, 200, m);
	CU_ASSERT_PTR_NULL(h2s_data_misplaced(&s, 5));
	ready(&s, post, 201, NULL);
	CU_ASSERT_PTR_NULL(h2s_data_misplaced(&s, 5));
	ready(&s, get, 404, m);
	CU_ASSERT_PTR_NULL(h2s_data_misplaced(&s, 0));
	/* before any head, or after only a 1xx (a 103): not scanned */
	ready(&s, get, 0, m);
	s.resp_started = false;
	s.mask_resp = false;
	CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 5));
	CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 0));
	s.rstatus = 103;
	CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 1));
	ready(&s, get, 0, NULL);
	s.resp_started = false;
	CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 1));
	/* after a masked head that ended the stream: no substituter armed */
	ready(&s, get, 200, m);
	s.mask_resp = false;
	CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 1));
	/* a byte of a HEAD's answer, a 204, a 304 (masked or not) */
	for (int masked = 0; masked < 2; masked++) {
		ready(&s, head, 200, masked ? m : NULL);
		CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 1));
		CU_ASSERT_PTR_NULL(h2s_data_misplaced(&s, 0));
		ready(&s, get, 204, masked ? m : NULL);
		CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 1));
		ready(&s, post, 304, masked ? m : NULL);
		CU_ASSERT_PTR_NOT_NULL(h2s_data_misplaced(&s, 9));
		CU_ASSERT_PTR_NULL(h2s_data_misplaced(&s, 0));
	}
}

/* The reason names where the bytes came, for the audit line. */
static void test_reasons(void)
{
	char get[] = "GET", head[] = "HEAD", fake;
	cmask_t *m = (cmask_t *)(void *)&fake;
	const char *why;
	struct h2s s;

	ready(&s, get, 0, m);
	s.resp_started = false;
	why = h2s_data_misplaced(&s, 1);
	CU_ASSERT(why != NULL && strstr(why, "before the response head") != NULL);
	ready(&s, head, 200, m);
	why = h2s_data_misplaced(&s, 1);
	CU_ASSERT(why != NULL && strstr(why, "no body") != NULL);
}

TEST_REGISTRAR(proxy_h2data_suite)
{
	CU_pSuite s = test_suite("proxy_h2data", NULL, NULL);

	test_add(s, "DATA where none may be: before the head, after a 103, a HEAD, 204, 304", test_misplaced);
	test_add(s, "DATA where none may be: the reason names where", test_reasons);
}

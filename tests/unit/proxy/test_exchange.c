/*
 * test_exchange.c - exchange_reset() (suite "proxy_exchange"): after a
 * reset every field of struct exchange is back to its initial value,
 * whatever the exchange before it left there.
 */
#include <string.h>

#include "proxy/conn_int.h"
#include "tests/support/testlib.h"

/* Every field as a finished exchange could leave it. */
static void dirty(struct exchange *ex)
{
	memset(ex, 0xa5, sizeof(*ex));
	ex->phase = EX_DONE;
	ex->kind = EX_KIND_CONNECT;
	ex->up_use = EX_UP_RETRIED;
	ex->req_done = true;
	ex->client_close = true;
	ex->audited = true;
	ex->have_target = true;
	ex->redact = true;
	ex->identity = true;
	ex->mask_req_body = true;
	ex->mask_resp_body = true;
	ex->status = 502;
	ex->t0.tv_sec = 1234;
	ex->t0.tv_usec = 5678;
	ex->bytes_up = 99;
	ex->bytes_down = 12345;
}

static void check_initial(const struct exchange *ex)
{
	CU_ASSERT_EQUAL(ex->phase, EX_IDLE);
	CU_ASSERT_EQUAL(ex->kind, EX_KIND_REQUEST);
	CU_ASSERT_EQUAL(ex->up_use, EX_UP_FRESH);
	CU_ASSERT_FALSE(ex->req_done);
	CU_ASSERT_FALSE(ex->client_close);
	CU_ASSERT_FALSE(ex->audited);
	CU_ASSERT_FALSE(ex->have_target);
	CU_ASSERT_FALSE(ex->redact);
	CU_ASSERT_FALSE(ex->identity);
	CU_ASSERT_FALSE(ex->mask_req_body);
	CU_ASSERT_FALSE(ex->mask_resp_body);
	CU_ASSERT_EQUAL(ex->status, 0);
	CU_ASSERT_EQUAL(ex->t0.tv_sec, 0);
	CU_ASSERT_EQUAL(ex->t0.tv_usec, 0);
	CU_ASSERT_EQUAL(ex->bytes_up, 0);
	CU_ASSERT_EQUAL(ex->bytes_down, 0);
}

static void test_reset_fields(void)
{
	struct exchange ex;

	dirty(&ex);
	exchange_reset(&ex);
	check_initial(&ex);
	/* Twice in a row changes nothing. */
	exchange_reset(&ex);
	check_initial(&ex);
}

/* The whole struct, padding included, equals a fresh one: a field added
 * later and forgotten in check_initial() is still reset. */
static void test_reset_whole(void)
{
	struct exchange a, b;

	memset(&b, 0, sizeof(b));
	exchange_reset(&b);
	dirty(&a);
	exchange_reset(&a);
	CU_ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	/* The initial phase, kind and upstream use are the zero values, so a
	 * calloc'ed conn starts with a reset exchange too. */
	CU_ASSERT_EQUAL(EX_IDLE, 0);
	CU_ASSERT_EQUAL(EX_KIND_REQUEST, 0);
	CU_ASSERT_EQUAL(EX_UP_FRESH, 0);
}

/* The phases are ordered: responding() is phase >= EX_RESPONDING. */
static void test_phase_order(void)
{
	CU_ASSERT(EX_IDLE < EX_REQ_HEAD);
	CU_ASSERT(EX_REQ_HEAD < EX_WAIT_RESPONSE);
	CU_ASSERT(EX_WAIT_RESPONSE < EX_RESPONDING);
	CU_ASSERT(EX_RESPONDING < EX_DONE);
}

TEST_REGISTRAR(proxy_exchange_suite)
{
	CU_pSuite s = test_suite("proxy_exchange", NULL, NULL);

	test_add(s, "reset: every field back to its initial value", test_reset_fields);
	test_add(s, "reset: the whole struct equals a fresh one", test_reset_whole);
	test_add(s, "phases ordered", test_phase_order);
}

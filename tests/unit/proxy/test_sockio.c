/*
 * test_sockio.c - proxy/sockio: sockio_peer_quiet(), on a real socket pair.
 *
 * A pause counts as the peer's, so that held bytes may be released after
 * it (relay.c tail_cb(), h2.c h2_release_ok()), only while the side is
 * read, has been read for the time asked since its reading was last
 * switched on, and nothing of the peer waits: not in the side's input,
 * not in the socket. Round 26 of the attack released a real value's first
 * bytes while the upstream was not read and the rest waited in the socket.
 */
#include "../../../proxy/sockio.h"

#include "../../support/net.h"
#include "../../support/testlib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#define QUIET_MS 40

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void test_peer_quiet(void)
{
	struct event_base *base = event_base_new();
	struct conn_side s;
	int fd[2];
	char b[8];

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
	CU_ASSERT_FATAL(fcntl(fd[0], F_SETFL, O_NONBLOCK) == 0);
	memset(&s, 0, sizeof(s));
	s.bev = bufferevent_socket_new(base, fd[0], BEV_OPT_CLOSE_ON_FREE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s.bev);
	(void)bufferevent_disable(s.bev, EV_READ);

	/* not read */
	sleep_ms(QUIET_MS + 10);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "a side not read: its peer's pause is ours");
	/* read again, but not for long enough */
	sockio_set_reading(&s, true);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "a side read again just now: not yet the peer's pause");
	sleep_ms(QUIET_MS + 10);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "a side read for %d ms with nothing waiting: the peer's pause", QUIET_MS);
	/* bytes in the socket */
	CU_ASSERT_FATAL(write(fd[1], "x", 1) == 1);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "a byte waiting in the socket: not a pause");
	CU_ASSERT_FATAL(read(fd[0], b, sizeof(b)) == 1);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "the socket read empty: a pause again");
	/* bytes in the input */
	/* (libevent freezes the end of a socket bufferevent's input between its reads) */
	(void)evbuffer_unfreeze(bufferevent_get_input(s.bev), 0);
	CU_ASSERT_FATAL(evbuffer_add(bufferevent_get_input(s.bev), "y", 1) == 0);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "a byte waiting in the input: not a pause");
	CU_ASSERT_FATAL(evbuffer_drain(bufferevent_get_input(s.bev), 1) == 0);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "the input empty: a pause again");
	/* reading switched off (back-pressure), then on again */
	sockio_set_reading(&s, false);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "reading off: the pause is ours");
	sockio_set_reading(&s, true);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "reading back on just now: the time counts from there");
	ROW(sockio_peer_quiet(&s, 0), "a socket pair (no round trip) and no pause asked: nothing to wait");
	sleep_ms(QUIET_MS + 10);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "reading back on for %d ms: the peer's pause", QUIET_MS);
	/* no socket any more */
	bufferevent_free(s.bev);
	s.bev = NULL;
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "a side gone: never a pause");
	close(fd[1]);
	event_base_free(base);
}

/* A connected TCP pair on loopback: fd[0] accepted, fd[1] the client. */
static void tcp_pair(int fd[2])
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	char hostport[64];
	int l = socket(AF_INET, SOCK_STREAM, 0);

	CU_ASSERT_FATAL(l >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
	CU_ASSERT_FATAL(listen(l, 1) == 0);
	CU_ASSERT_FATAL(getsockname(l, (struct sockaddr *)&a, &al) == 0);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	fd[1] = test_tcp_connect(hostport, 5000);
	CU_ASSERT_FATAL(fd[1] >= 0);
	fd[0] = accept(l, NULL, NULL);
	CU_ASSERT_FATAL(fd[0] >= 0);
	close(l);
}

/* On TCP the wait is the longer of ms and two smoothed round trips
 * (TCP_INFO): on loopback, ms. */
static void test_peer_quiet_tcp(void)
{
	struct event_base *base = event_base_new();
	struct conn_side s;
	int fd[2];
	char b[8];

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	tcp_pair(fd);
	CU_ASSERT_FATAL(fcntl(fd[0], F_SETFL, O_NONBLOCK) == 0);
	memset(&s, 0, sizeof(s));
	s.bev = bufferevent_socket_new(base, fd[0], BEV_OPT_CLOSE_ON_FREE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s.bev);
	(void)bufferevent_disable(s.bev, EV_READ);
	sockio_set_reading(&s, true);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "TCP: read again just now: not yet the peer's pause");
	/* no pause asked: still two round trips, each counted as at least 1
	 * ms. Re-armed before each try: a loaded machine (ASan, a build
	 * beside it) may stop the test for 2 ms between the two calls, or
	 * the clock tick there; one try of five must see it. */
	{
		bool waited = false;

		for (int t = 0; t < 5 && !waited; t++) {
			sockio_set_reading(&s, false);
			sockio_set_reading(&s, true);
			waited = !sockio_peer_quiet(&s, 0);
		}
		ROW(waited, "TCP: read again just now, no pause asked: two round trips are still waited");
	}
	sleep_ms(QUIET_MS + 10);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "TCP: read for %d ms (loopback's round trip is shorter): the peer's pause",
	    QUIET_MS);
	CU_ASSERT_FATAL(write(fd[1], "x", 1) == 1);
	sleep_ms(5);
	ROW(!sockio_peer_quiet(&s, QUIET_MS), "TCP: a byte waiting in the socket: not a pause");
	CU_ASSERT_FATAL(read(fd[0], b, sizeof(b)) == 1);
	ROW(sockio_peer_quiet(&s, QUIET_MS), "TCP: the socket read empty: a pause again");
	bufferevent_free(s.bev);
	close(fd[1]);
	event_base_free(base);
}

TEST_REGISTRAR(register_proxy_sockio)
{
	CU_pSuite s = test_suite("proxy_sockio", NULL, NULL);

	test_add(s, "peer_quiet: read, long enough since reading came back, nothing in the input or socket",
		 test_peer_quiet);
	test_add(s, "peer_quiet on TCP: the same, waiting the longer of the pause and two round trips",
		 test_peer_quiet_tcp);
}

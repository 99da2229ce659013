/*
 * sockio.c - the connection's I/O layer (sockio.h): the only file that
 * knows how libevent's bufferevents work inside, checked against the
 * versions it was verified with below. docs/notes-proxy-io.md has the
 * measurements behind each piece.
 */
#include "sockio.h"

#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/defaults.h"
#include "cmask.h"
#include "log.h"
#include "tls.h"
#include "wbio.h"

/*
 * event_active() on a bufferevent's ev_read/ev_write (struct bufferevent,
 * bufferevent_struct.h) and the behaviour of its socket and OpenSSL
 * implementations were verified with libevent 2.1.12-stable (Debian 12).
 * Another 2.1 release must be checked again (docs/notes-proxy-io.md says
 * what to check); 2.2 reorganised the SSL bufferevent.
 */
#if !defined(LIBEVENT_VERSION_NUMBER) || LIBEVENT_VERSION_NUMBER < 0x02010c00 || \
	LIBEVENT_VERSION_NUMBER >= 0x02020000
#error "sockio.c was verified with libevent 2.1.12 only: see docs/notes-proxy-io.md"
#endif

/* The most plaintext one TLS record carries. */
#define TLS_RECORD_BYTES 16384

/* Moves n bytes from src to dst (chains are moved, not copies). */
static int sockio_move(struct evbuffer *src, struct evbuffer *dst, size_t n)
{
	return evbuffer_remove_buffer(src, dst, n) == (int)n ? 0 : -1;
}

/* What a record adds to its plaintext, with room to spare: TLS 1.3's
 * header, type and tag (22 bytes), TLS 1.2's CBC suites (up to 85), a
 * KeyUpdate OpenSSL owes the peer before it. */
#define TLS_RECORD_SLACK 512

/*
 * SSL_write() beside bufferevent_openssl: the first n bytes of src, n at
 * most 16 KiB, nothing queued for the TLS side s on a socket, go through
 * OpenSSL into the write BIO now, a chain at a time while the BIO has
 * room for its record (wbio_room(): copied, no send needed). libevent's
 * own write of them (its write event made active) called
 * ERR_clear_error() first, about 930 instructions in OpenSSL 3.0, and then
 * the conn's write callback: twice per kept-alive request. Returns how
 * many bytes went (drained from src). A write can still be refused or
 * told to retry (a KeyUpdate owed to the peer flushed into a full socket,
 * a peer that negotiated small fragments, a send error kept in the BIO):
 * its bytes and the rest go through libevent's output as before, which
 * meets the error or retries the write where OpenSSL stopped
 * (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, which libevent sets too), and
 * the error queue is cleared for whoever reads it next.
 */
static size_t tls_write_now(struct conn_side *s, struct evbuffer *src, size_t n)
{
	struct evbuffer_iovec v[4];
	int nv = evbuffer_peek(src, (ev_ssize_t)n, NULL, v, 4);
	size_t done = 0;

	if (nv <= 0 || nv > 4 || !SSL_is_init_finished(s->ssl))
		return 0;
	for (int i = 0; i < nv && done < n; i++) {
		size_t len = v[i].iov_len < n - done ? v[i].iov_len : n - done;

		if (len + TLS_RECORD_SLACK > wbio_room(s->ssl))
			break;
		if (SSL_write(s->ssl, v[i].iov_base, (int)len) != (int)len) {
			ERR_clear_error();
			break;
		}
		done += len;
	}
	if (done > 0 && evbuffer_drain(src, done) < 0)
		return 0;
	return done;
}

/*
 * Passes the first n bytes of src to side s. When nothing is queued for a
 * plain side they go straight to its socket (no EPOLLOUT armed and
 * disarmed per message); whatever the socket does not take is queued, and
 * a write error is then met by the bufferevent. A TLS side's bytes go
 * through OpenSSL, its write run in this loop iteration. Returns 0 or -1.
 * docs/notes-proxy-io.md: what each saves.
 */
int sockio_send(struct conn_side *s, struct evbuffer *src, size_t n)
{
	struct evbuffer *out;
	bool was_empty;
	int w;

	/* A side already freed takes nothing: the caller's error path
	 * closes the connection (never a write through a NULL). */
	if (s->bev == NULL)
		return -1;
	out = bufferevent_get_output(s->bev);
	was_empty = evbuffer_get_length(out) == 0;
	if (n > 0 && s->ssl == NULL && was_empty) {
		w = evbuffer_write_atmost(src, bufferevent_getfd(s->bev), (ev_ssize_t)n);
		if (w > 0)
			n -= (size_t)w;
	}
	if (n == 0)
		return 0;
	/* A TLS side's message of one record's size or less leaves as one
	 * record: libevent calls SSL_write() once per chain, so a rewritten
	 * head and the body behind it were two records (one SSL_write() and,
	 * for the peer, one decryption more: about 8,000 instructions and 22
	 * bytes). Joining them copies at most 16 KiB; larger writes, bulk
	 * data, are moved as they are. Not where real credential values may
	 * go (may_join false): the chains a copy leaves are freed unwiped.
	 * (evbuffer_pullup() may write into the first chain's free space:
	 * the proxy makes no reference or multicast chains.) */
	if (s->ssl != NULL && s->may_join && n <= TLS_RECORD_BYTES &&
	    evbuffer_peek(src, (ev_ssize_t)n, NULL, NULL, 0) > 1 && evbuffer_pullup(src, (ev_ssize_t)n) == NULL)
		return -1;
	if (s->ssl != NULL && was_empty && !s->filter && n <= TLS_RECORD_BYTES &&
	    (n -= tls_write_now(s, src, n)) == 0)
		return 0;
	if (sockio_move(src, out, n) < 0)
		return -1;
	/* TLS on a socket would write on the next EPOLLOUT only; a filter
	 * writes at once anyway. */
	if (s->ssl != NULL && was_empty && !s->filter)
		event_active(&s->bev->ev_write, EV_WRITE, 1);
	return 0;
}

/* Body bytes follow a head still pending for s in the same buffer, so
 * head and body leave in one writev; otherwise straight on. */
int sockio_pass_on(struct conn_side *s, struct evbuffer *src, size_t n)
{
	if (evbuffer_get_length(s->pending) > 0)
		return sockio_move(src, s->pending, n);
	return sockio_send(s, src, n);
}

/* Sends what a step assembled for s. */
int sockio_flush_pending(struct conn_side *s)
{
	size_t n = evbuffer_get_length(s->pending);

	if (n == 0)
		return 0;
	if (s->bev == NULL) {
		cmask_wipe_drain(s->pending); /* may hold real values */
		return 0;
	}
	return sockio_send(s, s->pending, n);
}

/*
 * libevent's SSL bufferevent stops writing when it reads the peer's
 * close_notify (or EOF), and starts again only when bytes go into an
 * empty output: what is already queued would wait forever. A TLS
 * half-close from a client still reading is legal; the answer must go.
 */
void sockio_rearm_tls_write(struct conn_side *s)
{
	if (s->bev != NULL && s->ssl != NULL && evbuffer_get_length(bufferevent_get_output(s->bev)) > 0)
		(void)bufferevent_enable(s->bev, EV_WRITE);
}

/* Larger reads and writes than libevent's 16 KiB (bulk transfers are
 * faster); memory stays bounded by the watermarks. */
#define CONN_MAX_SINGLE_IO_BYTES (128 * 1024)

/* A whole TLS record's plaintext per SSL_read, so that records stay whole
 * on the other side; the reserve an idle side keeps is freed
 * (sockio_release_idle()). docs/notes-proxy-io.md: the measurements. */
#define CONN_TLS_SINGLE_READ_BYTES TLS_RECORD_BYTES

void sockio_tune_tls(struct bufferevent *bev)
{
	(void)bufferevent_set_max_single_read(bev, CONN_TLS_SINGLE_READ_BYTES);
	(void)bufferevent_set_max_single_write(bev, CONN_MAX_SINGLE_IO_BYTES);
}

void sockio_tune(struct bufferevent *bev)
{
	(void)bufferevent_set_max_single_read(bev, CONN_MAX_SINGLE_IO_BYTES);
	(void)bufferevent_set_max_single_write(bev, CONN_MAX_SINGLE_IO_BYTES);
}

/*
 * For a TLS filter: the bytes it encrypts wait in the underlying
 * bufferevent's output, which libevent lets grow without bound unless its
 * write high watermark is set (be_underlying_writebuf_full()); with it the
 * filter stops at HIGH and its own output (which sockio_update() watches) fills
 * instead. STYLE.md 5: back-pressure through both layers.
 */
void sockio_bound_underlying(struct bufferevent *bev)
{
	struct bufferevent *under = bufferevent_get_underlying(bev);

	if (under == NULL)
		return;
	sockio_tune(under);
	bufferevent_setwatermark(under, EV_WRITE, PASSAVANT_OUTBUF_HIGH_BYTES / 2,
				 PASSAVANT_OUTBUF_HIGH_BYTES);
}

/* Encrypted bytes of a TLS filter client still in its underlying
 * bufferevent's output (0 for TLS on the socket, or plain). */
size_t sockio_under_left(const conn_t *c)
{
	struct bufferevent *under = c->client.bev != NULL ? bufferevent_get_underlying(c->client.bev) : NULL;

	return under != NULL ? evbuffer_get_length(bufferevent_get_output(under)) : 0;
}

/* Encrypted bytes for a TLS client not yet handed to its socket. */
size_t sockio_tls_unsent(const conn_t *c)
{
	return c->client.ssl != NULL ? wbio_pending(c->client.ssl) + sockio_under_left(c) : 0;
}

/*
 * An idle TLS side holds no buffer memory: the chain libevent reserved
 * in its empty input for a read that found nothing, and OpenSSL's record
 * buffers (tls_release_buffers()), are freed. Only reads leave them, so
 * a side that has not read since the last release (held false: its read
 * and event callbacks and sockio_pull_tls() set it) is skipped; the
 * release costs about 1,700 instructions, and each request drives the
 * connection four times (docs/architecture.md "Request cost"). A read
 * that decrypts no data (a TLS 1.3 ticket or key update, half a record)
 * calls back nothing: the chain it reserved stays until that side's next
 * read, or until the upstream goes (upstreamKeepAliveMs).
 */
void sockio_release_idle(conn_t *c, struct conn_side *s)
{
	struct evbuffer *in;

	if (s->bev == NULL || s->ssl == NULL || !s->held)
		return;
	s->held = false;
	in = bufferevent_get_input(s->bev);
	/* evbuffer_drain() leaves an empty buffer's chains and no public
	 * call frees them: one byte added (into the reserved chain) and
	 * drained frees every chain (docs/notes-proxy-io.md). */
	if (evbuffer_get_length(in) == 0 && evbuffer_add(in, "", 1) == 0)
		(void)evbuffer_drain(in, 1);
	if (SSL_is_init_finished(s->ssl) == 1)
		tls_release_buffers(proxy_tls(c->px), s->ssl);
}

/*
 * Busy connections keep their record buffers. Releasing them after every
 * drive (sockio_release_idle()) and letting OpenSSL free its buffers as
 * each empties (SSL_MODE_RELEASE_BUFFERS) keeps an idle tunnel small, but
 * a kept-alive connection then allocates and frees four record buffers,
 * and walks OpenSSL's record slots twice, for every request: about 7,000
 * of some 70,000 instructions per request (docs/architecture.md "Busy
 * connections keep their buffers"). A connection driven
 * SOCKIO_BUSY_DRIVES times between two buffer ticks of its loop
 * (PROXY_BUFS_TICK_MS, proxy.c; a kept-alive request drives it twice, a
 * read of each side, since its small writes no longer call back
 * (tls_write_now()), so about 64 requests a second: below that, buffers
 * freed and taken again from the heap's hot free list cost less than
 * each connection keeping
 * its own, 200 tunnels at 12 requests a second in round 23) is
 * busy: until two ticks in a row find it quiet, nothing is released (one
 * quiet tick would let a client that alternates short busy and quiet
 * spells make the proxy free, trim and fault its buffers back in at each
 * spell: 20-45% more CPU per request in round 23 of the attack). Only where
 * SSL_free_buffers() is safe (tls_release_buffers()): the tick that ends
 * it needs it.
 */
#define SOCKIO_BUSY_DRIVES 128

/* Both sides' idle buffers go (sockio_release_idle()). */
static void release_sides(conn_t *c)
{
	sockio_release_idle(c, &c->client);
	sockio_release_idle(c, &c->up);
}

void sockio_drive_done(conn_t *c)
{
	if (c->client.ssl == NULL && c->up.ssl == NULL)
		return;
	/* Only requests and relayed bytes count: a handshake's drives
	 * (a dozen or more, each callback of each side) would make every
	 * tunnel of a burst busy. */
	if ((c->state == CONN_READ_HEAD || c->state == CONN_RELAY) && c->drives < SOCKIO_BUSY_DRIVES &&
	    c->drives++ == 0)
		proxy_bufs_arm(c->px);
	if (c->bufs == CONN_BUFS_RELEASE)
		release_sides(c);
}

/* OpenSSL frees s's record buffers as they empty (release) or keeps them. */
static void bufs_mode(struct conn_side *s, bool release)
{
	if (s->ssl == NULL)
		return;
	if (release)
		(void)SSL_set_mode(s->ssl, SSL_MODE_RELEASE_BUFFERS);
	else
		(void)SSL_clear_mode(s->ssl, SSL_MODE_RELEASE_BUFFERS);
}

enum sockio_tick sockio_bufs_tick(conn_t *c, bool may_keep)
{
	bool busy = c->drives >= SOCKIO_BUSY_DRIVES;
	const tls_session_t *t = proxy_tls(c->px);

	c->drives = 0;
	if (busy && may_keep && t != NULL && tls_buffers_releasable(t)) {
		/* Every tick: an upstream dialled since the last one came
		 * with its context's mode. */
		bufs_mode(&c->client, false);
		bufs_mode(&c->up, false);
		c->bufs = CONN_BUFS_KEEP;
		return SOCKIO_TICK_BUSY;
	}
	switch (c->bufs) {
	case CONN_BUFS_RELEASE:
		return SOCKIO_TICK_IDLE;
	case CONN_BUFS_KEEP:
		c->bufs = CONN_BUFS_COOL;
		return SOCKIO_TICK_BUSY;
	case CONN_BUFS_COOL:
		break;
	}
	c->bufs = CONN_BUFS_RELEASE;
	bufs_mode(&c->client, true);
	bufs_mode(&c->up, true);
	/* Either side may hold buffers, read or written. */
	c->client.held = c->client.ssl != NULL;
	c->up.held = c->up.ssl != NULL;
	release_sides(c);
	return SOCKIO_TICK_RELEASED;
}

/* Enables or disables reading on s; a side whose reading comes back may
 * need a kick again (sockio_kick_tls_read()). */
void sockio_set_reading(struct conn_side *s, bool on)
{
	bool enabled;

	if (s->rd != NULL) {
		if (on && !s->reading) {
			s->kicked = false;
			s->reading = event_add(s->rd, NULL) == 0;
			conn_now(&s->read_on);
		} else if (!on && s->reading && event_del(s->rd) == 0) {
			s->reading = false;
		}
		return;
	}
	enabled = (bufferevent_get_enabled(s->bev) & EV_READ) != 0;

	/* libevent adds the event again on every enable: only a change is
	 * passed on. A filter's enable also reads what its underlying holds,
	 * so it is always passed on. */
	if (on) {
		if (!enabled) {
			s->kicked = false;
			conn_now(&s->read_on);
		}
		if (!enabled || s->filter)
			(void)bufferevent_enable(s->bev, EV_READ);
	} else if (enabled || s->filter) {
		(void)bufferevent_disable(s->bev, EV_READ);
	}
}

/* Whether s reads now: our read event added, or libevent's reading on. */
static bool is_reading(struct conn_side *s)
{
	if (s->rd != NULL)
		return s->reading;
	return (bufferevent_get_enabled(s->bev) & EV_READ) != 0;
}

/*
 * How long s must have been read again before a pause is its peer's: ms,
 * or two of the kernel's smoothed round trips on a TCP socket when that is
 * longer. A peer that TCP stopped (a zero window while we did not read)
 * learns that we read again half a round trip later, and its next bytes
 * come a whole one after: with a far upstream (more than 100 ms away) the
 * socket is empty for that long although the pause is ours (the reviewer
 * of round 26 of the attack, from the code; not reproduced, no netem here).
 */
static int64_t quiet_ms(evutil_socket_t fd, int64_t ms)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int64_t rtt2;

	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_rtt) + sizeof(ti.tcpi_rtt))
		return ms;
	rtt2 = 2 * ((int64_t)ti.tcpi_rtt / 1000 + 1);
	return rtt2 > ms ? rtt2 : ms;
}

bool sockio_peer_quiet(struct conn_side *s, int64_t ms)
{
	struct bufferevent *under;
	evutil_socket_t fd;
	int unread = 0;

	if (s->bev == NULL || !is_reading(s))
		return false;
	under = bufferevent_get_underlying(s->bev);
	if (evbuffer_get_length(in_of(s)) > 0 || (s->ssl != NULL && SSL_has_pending(s->ssl) == 1) ||
	    (under != NULL && evbuffer_get_length(bufferevent_get_input(under)) > 0))
		return false;
	fd = bufferevent_getfd(s->bev);
	if (fd < 0 || ioctl(fd, FIONREAD, &unread) != 0 || unread != 0)
		return false;
	return conn_ms_since(&s->read_on) >= quiet_ms(fd, ms);
}

/*
 * A TLS side whose SSL_read() must write first while the write BIO is
 * full goes back to libevent's reader for good, which waits for the
 * socket to take bytes and reads again (read_blocked_on_write in
 * bufferevent_openssl.c). Its read event runs in this loop iteration.
 * OpenSSL 3.0 with these contexts never gets here (no renegotiation; a
 * peer's KeyUpdate is answered with the next write): docs/notes-proxy-io.md.
 */
static void give_reads_to_libevent(struct conn_side *s)
{
	bool on = is_reading(s);

	log_info("TLS read from %s must write first: libevent reads that side from here on", s->peer);
	sockio_reader_free(s);
	if (on)
		(void)bufferevent_enable(s->bev, EV_READ);
	event_active(&s->bev->ev_read, EV_READ, 1);
}

/*
 * Records OpenSSL read ahead wait inside the SSL object, where epoll
 * cannot see them, and a TLS side's read event fires again only when the
 * socket is readable: when reading is on, the input has room and OpenSSL
 * holds bytes, that read event (ours, or libevent's before the handshake
 * ended) is made active: its SSL_read loop runs in this iteration. kicked
 * stops a kick that found only part of a record from repeating; the next
 * read callback, or reading switched back on, clears it.
 */
static void sockio_kick_tls_read(struct conn_side *s)
{
	/* During a handshake OpenSSL consumes what it buffered itself. */
	if (s->bev == NULL || s->ssl == NULL || s->kicked || s->filter ||
	    SSL_is_init_finished(s->ssl) != 1)
		return;
	if (!is_reading(s) || evbuffer_get_length(bufferevent_get_input(s->bev)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		return;
	if (SSL_has_pending(s->ssl) != 1)
		return;
	s->kicked = true;
	event_active(s->rd != NULL ? s->rd : &s->bev->ev_read, EV_READ, 1);
}

/* The thread's OpenSSL error queue emptied before an SSL_read(), whose
 * SSL_get_error() reads it: ERR_clear_error() walks all 16 slots (about
 * 930 instructions in OpenSSL 3.0), ERR_peek_error() only looks. */
static void clear_errors(void)
{
	if (ERR_peek_error() != 0)
		ERR_clear_error();
}

/*
 * Whether a TLS read that ended in err (SSL_ERROR_SSL or _SYSCALL; ret
 * SSL_read()'s return) was the peer's FIN without close_notify, not a
 * reset or an alert: OpenSSL 3 says SSL_R_UNEXPECTED_EOF_WHILE_READING,
 * 1.1 a syscall error with ret 0 and nothing queued (a reset: ret -1,
 * errno ECONNRESET). Looks at the error queue, so before it is emptied.
 */
static bool tls_end_is_fin(int err, int ret)
{
	unsigned long e = ERR_peek_error();

#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
	if (err == SSL_ERROR_SSL && ERR_GET_LIB(e) == ERR_LIB_SSL &&
	    ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
		return true;
#endif
	return err == SSL_ERROR_SYSCALL && ret == 0 && e == 0;
}

/* Logs why a TLS read ended (a protocol error, a cut connection), then
 * empties the error queue. */
static void log_tls_end(const struct conn_side *s)
{
	unsigned long e = ERR_peek_error();
	char why[160] = "connection closed without close_notify";

	if (e != 0)
		ERR_error_string_n(e, why, sizeof(why));
	log_debug("TLS read from %s: %s", s->peer, why);
	ERR_clear_error();
}

/*
 * OpenSSL 3.0 as a TLS 1.3 server answers a KeyUpdate that asks for ours
 * inside SSL_read(), and that write fails (SSL_R_BAD_LENGTH: the
 * connection is lost) while a record of ours is only partly written,
 * which a full socket leaves behind (wbio_holding()). A server side, the
 * client's, is therefore not read while its write BIO holds such a
 * record: its read event goes until the record is out (reads_resume(),
 * from inside the write that completes it), then reads at once. A client
 * that does not read is not read either; what it sends waits in the
 * socket, as behind any back-pressure.
 */
static bool read_must_wait(struct conn_side *s)
{
	return s->rd != NULL && SSL_is_server(s->ssl) == 1 && wbio_holding(s->ssl);
}

static void reads_resume(void *arg)
{
	struct conn_side *s = arg;

	if (s->rd == NULL || !s->reading)
		return;
	if (event_add(s->rd, NULL) != 0) {
		s->reading = false; /* sockio_update() tries again */
		return;
	}
	conn_now(&s->read_on);
	s->kicked = false;
	event_active(s->rd, EV_READ, 1);
}

static void reads_wait(struct conn_side *s)
{
	(void)event_del(s->rd);
	s->kicked = true; /* no kick while the event is away */
	wbio_on_sent(s->ssl, reads_resume, s);
}

/* A chain for bulk records: three whole records (libevent allocates it
 * as 64 KiB with its header). */
#define TLS_BULK_CHAIN_BYTES (3 * CONN_TLS_SINGLE_READ_BYTES)

/* The plaintext bytes OpenSSL hands out next: what is left of the record
 * it has open (SSL_pending()), else the whole of the next one, which
 * SSL_peek() opens (decrypted in place, nothing taken). <= 0 when there is
 * none yet, *err and *ret then as for an SSL_read() that failed so. */
static int next_record_bytes(SSL *ssl, int *err, int *ret)
{
	unsigned char b;
	int n = SSL_pending(ssl);

	if (n > 0)
		return n;
	clear_errors();
	n = SSL_peek(ssl, &b, 1);
	if (n <= 0) {
		*err = SSL_get_error(ssl, n);
		*ret = n;
		return n;
	}
	return SSL_pending(ssl);
}

/*
 * One reserve of s's input read through OpenSSL: SSL_read() into up to
 * two vectors, the free end of the last chain and then a new chain, as
 * libevent's do_read() reserves them (with one vector libevent may move
 * or copy what the last chain holds to make room, and free the old chain
 * unwiped, evbuffer_expand_singlechain(): an upstream's unread bytes may
 * hold a real value), at most a record's plaintext per call, the second
 * only while OpenSSL holds more.
 *
 * Records stay whole in the input: libevent writes the other side a
 * chain at a time (one SSL_write() each), so a record cut between two
 * chains left as two, one more for the peer to decrypt, the small one
 * gathered by the write BIO. When the last chain's free end is shorter
 * than a record, the next record's size is looked at first; one that
 * does not fit goes into a new chain of TLS_BULK_CHAIN_BYTES (the short
 * end stays unused: a quarter of such a chain at most), and a second
 * vector shorter than a record (libevent sizes the new chain for what the
 * last one lacks) is not read into: the next call looks first. The
 * second vector is never made larger on the chance that it is needed: a
 * burst of new tunnels held 15 KB more each when it was.
 *
 * Returns the bytes read and committed (0 with *err set when OpenSSL
 * had nothing), or -1 when out of memory. *err is SSL_ERROR_NONE, or
 * SSL_get_error() of an SSL_read() or SSL_peek() that returned *ret <= 0;
 * *more: OpenSSL holds more.
 */
static int tls_read_some(struct conn_side *s, struct evbuffer *in, int *err, int *ret, bool *more)
{
	struct evbuffer_iovec v[2];
	int nv = evbuffer_reserve_space(in, CONN_TLS_SINGLE_READ_BYTES, v, 2), first = 0, used = 0, total = 0;

	*err = SSL_ERROR_NONE;
	*more = false;
	if (nv == 2 && v[0].iov_len < CONN_TLS_SINGLE_READ_BYTES) {
		int next = next_record_bytes(s->ssl, err, ret);
		size_t want;

		if (next <= 0)
			return 0;
		/* Only behind bytes: a skipped chain is never the first (a
		 * peek of the input's first chain would find it empty). */
		if ((size_t)next > v[0].iov_len && evbuffer_get_length(in) > 0) {
			first = 1;
			want = v[0].iov_len + TLS_BULK_CHAIN_BYTES;
			nv = evbuffer_reserve_space(in, (ev_ssize_t)want, v, 2);
			if (nv != 2)
				first = 0;
		}
	}
	if (nv < 1 || nv > 2)
		return -1;
	if (first == 1)
		v[0].iov_len = 0; /* committed empty */
	for (int i = first; i < nv; i++) {
		int n;

		/* A second vector shorter than a record (libevent sized it
		 * for what the first lacked) could cut the next one: the
		 * next call looks at it first (*more is set). */
		if (i > first && v[i].iov_len < CONN_TLS_SINGLE_READ_BYTES)
			break;
		clear_errors();
		n = SSL_read(s->ssl, v[i].iov_base,
			     v[i].iov_len < CONN_TLS_SINGLE_READ_BYTES ? (int)v[i].iov_len : CONN_TLS_SINGLE_READ_BYTES);
		if (n <= 0) {
			*err = SSL_get_error(s->ssl, n);
			*ret = n;
			break;
		}
		v[i].iov_len = (size_t)n;
		used++;
		total += n;
		*more = SSL_has_pending(s->ssl) == 1;
		if (!*more)
			break;
	}
	if (used > 0 && evbuffer_commit_space(in, v, first + used) < 0)
		return -1;
	return total;
}

/*
 * Decrypts the records OpenSSL already holds (read-ahead) into s's input
 * now, rather than one record per trip through the event loop: a step
 * then passes several records on at once, and the other side's TLS writes
 * them with one send (wbio.h). A record only partly buffered makes
 * SSL_read() try the socket once (non-blocking); "need more" then sets
 * kicked, so no further pull or kick tries again before the socket brings
 * bytes (the read callback clears it). close_notify and errors are
 * handled here, not left to libevent: its read event could be switched
 * off (sockio_update()) before it runs, and the socket, drained, would never
 * wake it again.
 * Returns 0, 1 when s ended cleanly (close_notify), 2 when it failed
 * (eof set in both cases), -1 when out of memory.
 */
int sockio_pull_tls(struct conn_side *s)
{
	struct evbuffer *in;
	int err, ret = 0;
	bool more;

	if (s->bev == NULL || s->ssl == NULL || s->eof || s->kicked || s->filter || !is_reading(s) ||
	    SSL_is_init_finished(s->ssl) != 1)
		return 0;
	if (read_must_wait(s)) {
		reads_wait(s);
		return 0;
	}
	in = bufferevent_get_input(s->bev);
	while (evbuffer_get_length(in) < PASSAVANT_OUTBUF_HIGH_BYTES && SSL_has_pending(s->ssl) == 1) {
		s->held = true;
		if (tls_read_some(s, in, &err, &ret, &more) < 0)
			return -1;
		switch (err) {
		case SSL_ERROR_NONE:
			continue;
		case SSL_ERROR_WANT_READ:
			s->kicked = true;
			return 0;
		case SSL_ERROR_ZERO_RETURN:
			/* close_notify: the peer sends nothing more. */
			s->eof = true;
			return 1;
		case SSL_ERROR_SSL:
		case SSL_ERROR_SYSCALL:
			s->fin_end = tls_end_is_fin(err, ret);
			log_tls_end(s);
			s->eof = true;
			return 2;
		default:
			/* WANT_WRITE (a key update to answer while the socket
			 * is full) and the like: libevent's handler retries. */
			ERR_clear_error();
			if (s->rd != NULL)
				give_reads_to_libevent(s);
			else
				event_active(&s->bev->ev_read, EV_READ, 1);
			return 0;
		}
	}
	return 0;
}

/*
 * Plain sockets are read here, with one recv() of up to
 * CONN_PLAIN_READ_BYTES into a chain sized to the bytes (libevent's
 * reader asks FIONREAD first and reads 4 KiB: docs/notes-proxy-io.md).
 * The bufferevent keeps writing. EOF and errors reach the event callbacks
 * as libevent reports them (BEV_EVENT_READING with EOF or ERROR), reading
 * stopped.
 */
#define CONN_PLAIN_READ_BYTES (64 * 1024)


static void sockio_plain_read(conn_t *c, struct conn_side *s)
{
	char buf[CONN_PLAIN_READ_BYTES];
	size_t len = evbuffer_get_length(in_of(s)), room;
	ssize_t n;

	room = len < PASSAVANT_OUTBUF_HIGH_BYTES ? PASSAVANT_OUTBUF_HIGH_BYTES - len : 0;
	if (room > sizeof(buf))
		room = sizeof(buf);
	if (room == 0) {
		sockio_update(c);
		return;
	}
	n = recv(event_get_fd(s->rd), buf, room, 0);
	if (n > 0) {
		int r;

		/* libevent freezes the end of a socket bufferevent's input
		 * and unfreezes it around its own reads; so do we. */
		(void)evbuffer_unfreeze(in_of(s), 0);
		r = evbuffer_add(in_of(s), buf, (size_t)n);
		(void)evbuffer_freeze(in_of(s), 0);

		/* Plain bytes may carry real values (an upstream's answer
		 * before remasking): no copy stays behind. */
		if (proxy_masks(c->px) != NULL)
			explicit_bzero(buf, (size_t)n);
		if (r < 0) {
			conn_close(c, "out of memory reading a socket", true);
			return;
		}
		conn_drive(c);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	sockio_set_reading(s, false);
	if (s == &c->client)
		conn_client_event_cb(s->bev, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
	else
		conn_up_event_cb(s->bev, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
}

/* Passes the end of s's stream to its event callback, as libevent does. */
static void side_event(conn_t *c, struct conn_side *s, short what)
{
	if (s == &c->client)
		conn_client_event_cb(s->bev, what, c);
	else
		conn_up_event_cb(s->bev, what, c);
}

/*
 * How libevent 2.1.12 reports the end of a TLS read (conn_closed() in
 * bufferevent_openssl.c), with a dirty shutdown allowed, as on every TLS
 * side here (tls.c): close_notify, or a connection closed without it, is
 * EOF; a protocol error, or a socket error with OpenSSL's reason queued,
 * is ERROR.
 */
static short tls_end_what(int err, int ret)
{
	switch (err) {
	case SSL_ERROR_ZERO_RETURN:
		return BEV_EVENT_EOF;
	case SSL_ERROR_SYSCALL:
		return (ret == 0 || ret == -1) && ERR_peek_error() == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR;
	default:
		return BEV_EVENT_ERROR;
	}
}

/*
 * A TLS side on a socket, its handshake done, is read here
 * (sockio_tls_reader_new()): SSL_read() into the input's reserved space,
 * the read BIO's recv() underneath, until OpenSSL holds nothing more of
 * what that recv() brought (no second recv() that finds the socket empty).
 * libevent's reader (do_read() in bufferevent_openssl.c) emptied the
 * error queue before every SSL_read() (clear_errors()) and went through
 * its read callback, and the write event for the reply, twice per
 * kept-alive request. Ends are reported as libevent does (tls_end_what());
 * a read that must write first goes back to libevent
 * (give_reads_to_libevent()). May free c.
 */
static void sockio_tls_read(conn_t *c, struct conn_side *s)
{
	struct evbuffer *in = in_of(s);
	bool got = false, more;
	int n, err, ret = 0;

	s->kicked = false;
	if (read_must_wait(s)) {
		reads_wait(s);
		return;
	}
	s->held = true;
	while (evbuffer_get_length(in) < PASSAVANT_OUTBUF_HIGH_BYTES) {
		n = tls_read_some(s, in, &err, &ret, &more);
		if (n < 0) {
			conn_close(c, "out of memory reading TLS records", true);
			return;
		}
		got = got || n > 0;
		if (err == SSL_ERROR_NONE) {
			if (more)
				continue;
			break;
		}
		if (err == SSL_ERROR_WANT_READ)
			break;
		if (err == SSL_ERROR_WANT_WRITE) {
			ERR_clear_error();
			give_reads_to_libevent(s);
			break;
		}
		/* What came before the end is in the input: the event
		 * callback drives the connection once more. */
		{
			short what = tls_end_what(err, ret);

			if (err != SSL_ERROR_ZERO_RETURN) {
				s->fin_end = tls_end_is_fin(err, ret);
				log_tls_end(s);
			}
			ERR_clear_error();
			sockio_set_reading(s, false);
			side_event(c, s, BEV_EVENT_READING | what);
		}
		return;
	}
	if (got)
		conn_drive(c);
	else if (evbuffer_get_length(in) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		sockio_update(c);
}

/* The read event of either side with our reader: the socket tells which. */
static void sockio_read_cb(evutil_socket_t fd, short events, void *arg)
{
	conn_t *c = arg;
	struct conn_side *s = c->client.rd != NULL && event_get_fd(c->client.rd) == fd ? &c->client : &c->up;

	(void)events;
	if (s->ssl != NULL)
		sockio_tls_read(c, s);
	else
		sockio_plain_read(c, s);
}

/* Gives the plain side s (bev connected, no TLS) its read event; reading
 * starts with sockio_set_reading(). */
int sockio_reader_new(conn_t *c, struct conn_side *s)
{
	evutil_socket_t fd = bufferevent_getfd(s->bev);

	if (fd < 0)
		return -1;
	sockio_reader_free(s);
	(void)bufferevent_disable(s->bev, EV_READ);
	s->rd = event_new(proxy_base(c->px), fd, EV_READ | EV_PERSIST, sockio_read_cb, c);
	return s->rd != NULL ? 0 : -1;
}

int sockio_tls_reader_new(conn_t *c, struct conn_side *s)
{
	evutil_socket_t fd;
	bool on;

	if (s->bev == NULL || s->ssl == NULL || s->filter || s->rd != NULL || SSL_is_init_finished(s->ssl) != 1)
		return 0;
	fd = bufferevent_getfd(s->bev);
	if (fd < 0)
		return -1;
	on = (bufferevent_get_enabled(s->bev) & EV_READ) != 0;
	s->rd = event_new(proxy_base(c->px), fd, EV_READ | EV_PERSIST, sockio_read_cb, c);
	if (s->rd == NULL)
		return -1;
	(void)bufferevent_disable(s->bev, EV_READ);
	s->reading = false;
	if (on)
		sockio_set_reading(s, true);
	return 0;
}

void sockio_reader_free(struct conn_side *s)
{
	if (s->rd != NULL) {
		event_free(s->rd);
		s->rd = NULL;
	}
	s->reading = false;
}

/* Which sides may read: the back-pressure rule of the file comment. */
void sockio_update(conn_t *c)
{
	bool client_read, up_read;

	/* In peek mode the socket's bytes stay unread (peek_cb()), and while
	 * the upstream's handshake decides ALPN (TLS_UPSTREAM). */
	client_read = !c->client.eof && c->peek_ev == NULL && c->state != CONN_TLS_UPSTREAM &&
		      evbuffer_get_length(in_of(&c->client)) < PASSAVANT_OUTBUF_HIGH_BYTES;
	if (c->up.bev != NULL && evbuffer_get_length(out_of(&c->up)) >= PASSAVANT_OUTBUF_HIGH_BYTES)
		client_read = false;
	sockio_set_reading(&c->client, client_read);
	sockio_kick_tls_read(&c->client);
	if (c->up.bev == NULL)
		return;
	up_read = !c->up.eof && evbuffer_get_length(out_of(&c->client)) < PASSAVANT_OUTBUF_HIGH_BYTES &&
		  evbuffer_get_length(in_of(&c->up)) < PASSAVANT_OUTBUF_HIGH_BYTES;
	sockio_set_reading(&c->up, up_read);
	sockio_kick_tls_read(&c->up);
}

int sockio_shutdown_wr(struct conn_side *s)
{
	if (s->bev == NULL)
		return -1;
	return shutdown(bufferevent_getfd(s->bev), SHUT_WR);
}

void sockio_reset_on_close(struct conn_side *s)
{
	struct linger lg = {1, 0};

	struct bufferevent *b = s->bev;

	/* A TLS filter's socket is its underlying bufferevent's. */
	while (b != NULL && bufferevent_getfd(b) < 0)
		b = bufferevent_get_underlying(b);
	if (b != NULL)
		(void)setsockopt(bufferevent_getfd(b), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

void sockio_side_free(struct conn_side *s)
{
	sockio_reader_free(s);
	if (s->bev == NULL)
		return;
	if (s->ssl != NULL)
		wbio_detach(s->ssl);
	bufferevent_free(s->bev);
	s->bev = NULL;
	s->filter = false;
}

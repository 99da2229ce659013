/*
 * wbio.c - the gathering write BIO of wbio.h.
 *
 * State per BIO (struct wbio): the socket, the buffer (NULL while empty),
 * the send event, the kept error. The send event is one non-persistent
 * EV_WRITE event on the socket: made active to send within the current
 * loop iteration, added to wait until the socket takes more.
 */
#include "wbio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <openssl/err.h>

#include "zone.h"

struct wbio {
	evutil_socket_t fd;       /* the socket (not ours to close) */
	bool notify;              /* run bev's write callback once the buffer is empty */
	bool over;                /* an answer found WBIO_ANSWERS_MAX past the buffer (the write failed) */
	bool upstream;            /* OpenSSL's allocations from here on: the upstream zone (zone.h) */
	struct event *send_ev;    /* sends the buffer (active) or waits for room (added) */
	struct bufferevent *bev;  /* owner of the SSL, for error events; may be NULL */
	unsigned char *buf;       /* gathered bytes, NULL when empty */
	size_t off, len;          /* unsent bytes are buf[off, len) */
	size_t cap;               /* buf's size: WBIO_BUFFER_BYTES, more with answers */
	uint64_t sent;            /* bytes sent so far */
	int err;                  /* errno of a failed send, 0 */
	bool scheduled;           /* send_ev is active or added */
	bool direct;              /* a record went out in part from OpenSSL's buffer: its rest goes so too */
	bool blocked;             /* that part filled the socket: OpenSSL's next try waits for room */
	bool held;                /* OpenSSL holds a record not all written (short write or retry) */
	void (*on_sent)(void *);  /* runs once when that record is out (wbio_on_sent()) */
	void *on_sent_arg;
	SSL *ssl;                 /* the SSL writing through this BIO (wbio_set_ssl()), or NULL */
};

/* The read BIO: the socket, its end, and the zone as for struct wbio. */
struct rbio {
	evutil_socket_t fd;
	bool eof;
	bool upstream;
};

#define WBIO_NAME "passavant gathering writer"

/* ssl's write BIO state, or NULL when that BIO is not a wbio. */
static struct wbio *of_ssl(SSL *ssl)
{
	BIO *b = SSL_get_wbio(ssl);

	if (b == NULL || BIO_method_name(b) == NULL || strcmp(BIO_method_name(b), WBIO_NAME) != 0)
		return NULL;
	return BIO_get_data(b);
}

/* Sends what the socket takes. 0: all sent; 1: the socket is full; -1: a
 * send failed (w->err set, the buffer dropped). */
static int send_some(struct wbio *w)
{
	ssize_t n;

	while (w->off < w->len) {
		n = send(w->fd, w->buf + w->off, w->len - w->off, MSG_NOSIGNAL);
		if (n > 0) {
			w->off += (size_t)n;
			w->sent += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		w->err = n < 0 ? errno : EPIPE;
		w->off = w->len;
		break;
	}
	/* Empty: no buffer is kept (memory of an idle connection). */
	free(w->buf);
	w->buf = NULL;
	w->off = w->len = 0;
	return w->err != 0 ? -1 : 0;
}

/* One send of what is gathered, then len bytes of data (sendmsg(2) with
 * two vectors, no copy): the bytes of data the socket took (0 when it
 * took none of them; the gathered ones it took are consumed, the buffer
 * freed once empty), or -1 when the send failed (w->err set, the buffer
 * dropped). */
static ssize_t send_direct(struct wbio *w, const char *data, size_t len)
{
	size_t held = w->len - w->off;
	struct iovec iov[2] = {
		{.iov_base = w->buf != NULL ? w->buf + w->off : NULL, .iov_len = held},
		{.iov_base = (void *)data, .iov_len = len},
	};
	struct msghdr msg = {.msg_iov = held > 0 ? iov : iov + 1, .msg_iovlen = held > 0 ? 2 : 1};
	ssize_t n;

	do
		n = sendmsg(w->fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		n = 0;
	else if (n < 0)
		w->err = errno;
	if (n < 0 || (size_t)n >= held) {
		/* The gathered bytes are gone (sent, or dropped with the
		 * error): no buffer is kept. */
		free(w->buf);
		w->buf = NULL;
		w->off = w->len = 0;
	} else {
		w->off += (size_t)n;
	}
	if (n < 0)
		return -1;
	w->sent += (uint64_t)n;
	return (size_t)n > held ? n - (ssize_t)held : 0;
}

static void send_cb(evutil_socket_t fd, short what, void *arg)
{
	struct wbio *w = arg;
	int r;

	(void)fd;
	(void)what;
	w->scheduled = false;
	r = send_some(w);
	if (r > 0) {
		if (event_add(w->send_ev, NULL) == 0)
			w->scheduled = true;
		else
			w->err = ENOMEM;
	}
	/* Last, and deferred: the callbacks may free the bufferevent, the
	 * SSL and this BIO (not from inside this call). */
	if (w->bev == NULL)
		return;
	if (w->err != 0) {
		bufferevent_trigger_event(w->bev, BEV_EVENT_ERROR | BEV_EVENT_WRITING, BEV_TRIG_DEFER_CALLBACKS);
	} else if (r == 0 && w->notify) {
		w->notify = false;
		bufferevent_trigger(w->bev, EV_WRITE, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
}

static void schedule(struct wbio *w)
{
	if (w->scheduled)
		return;
	w->scheduled = true;
	event_active(w->send_ev, EV_WRITE, 1);
}

/*
 * An answer OpenSSL writes inside SSL_read() (a KeyUpdate's, the
 * handshake's state machine running: SSL_in_init()) is one small record.
 * Refused or taken in part, it made that SSL_read() fail with
 * SSL_ERROR_WANT_WRITE and handed the side to libevent's reader, which
 * has no wait for held records (sockio.c): a later KeyUpdate then lost
 * the connection. So it is taken whole past WBIO_BUFFER_BYTES, up to
 * WBIO_ANSWERS_MAX per buffer (a peer asking without reading); the write
 * past that fails, and with it the connection.
 */
static bool is_answer(const struct wbio *w, int dlen)
{
	return (size_t)dlen <= WBIO_ANSWER_BYTES && w->ssl != NULL && SSL_in_init(w->ssl);
}

static int take_answer(struct wbio *w, size_t dlen)
{
	unsigned char *p;

	if (w->len + dlen > WBIO_BUFFER_BYTES + WBIO_ANSWERS_MAX) {
		w->over = true;
		w->err = ENOBUFS;
		errno = ENOBUFS;
		/* Read by the reader's end (an ERROR, not a clean EOF) and by
		 * wbio_overflowed(). */
		ERR_raise(ERR_LIB_SYS, ENOBUFS);
		return -1;
	}
	if (w->len + dlen > w->cap) {
		size_t cap = w->cap + 4096 > w->len + dlen ? w->cap + 4096 : w->len + dlen;

		if ((p = realloc(w->buf, cap)) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		w->buf = p;
		w->cap = cap;
	}
	return 0;
}

static int write_some(BIO *b, struct wbio *w, const char *data, int dlen)
{
	size_t n, room;

	if (dlen < 0)
		return -1;
	(void)zone_select(w->upstream);
	if (w->err != 0) {
		errno = w->err;
		return -1;
	}
	if (dlen == 0)
		return 0;
	if (w->direct || (size_t)dlen >= WBIO_DIRECT_BYTES) {
		/* A large record goes from OpenSSL's buffer, behind what is
		 * gathered (one send, no copy), as on a socket BIO. What the
		 * socket does not take stays there: OpenSSL keeps the record
		 * and writes its rest again once libevent's write event finds
		 * room. Never copied. */
		ssize_t sent;

		if (w->blocked) {
			/* The socket took part of this record a moment ago:
			 * no send that would only find it full. */
			w->blocked = false;
			BIO_set_retry_write(b);
			return -1;
		}
		sent = send_direct(w, data, (size_t)dlen);
		if (sent < 0) {
			w->direct = false;
			errno = w->err;
			return -1;
		}
		if (w->buf != NULL) {
			/* Not even the gathered bytes all went: they go
			 * first, from the send event. */
			BIO_set_retry_write(b);
			schedule(w);
			return -1;
		}
		w->direct = (size_t)sent < (size_t)dlen;
		if (sent == 0) {
			BIO_set_retry_write(b);
			return -1;
		}
		w->blocked = w->direct;
		return (int)sent;
	}
	if (w->buf != NULL && w->len + (size_t)dlen > WBIO_BUFFER_BYTES) {
		/* Full: send now, then take what fits. */
		if (send_some(w) < 0) {
			errno = w->err;
			return -1;
		}
		if (w->buf != NULL && w->off > 0) {
			memmove(w->buf, w->buf + w->off, w->len - w->off);
			w->len -= w->off;
			w->off = 0;
		}
	}
	if (w->buf == NULL) {
		w->buf = malloc(WBIO_BUFFER_BYTES);
		if (w->buf == NULL) {
			errno = ENOMEM;
			return -1;
		}
		w->off = w->len = 0;
		w->cap = WBIO_BUFFER_BYTES;
	}
	room = w->len < WBIO_BUFFER_BYTES ? WBIO_BUFFER_BYTES - w->len : 0;
	if (room < (size_t)dlen && is_answer(w, dlen)) {
		if (take_answer(w, (size_t)dlen) < 0)
			return -1;
		room = (size_t)dlen;
	}
	if (room == 0) {
		/* The socket is full: libevent retries on EPOLLOUT. */
		BIO_set_retry_write(b);
		schedule(w);
		return -1;
	}
	n = (size_t)dlen < room ? (size_t)dlen : room;
	memcpy(w->buf + w->len, data, n);
	w->len += n;
	schedule(w);
	return (int)n;
}

/* The BIO's write: write_some(), and whether OpenSSL now holds a record
 * of which only part, or nothing, was taken (it writes its rest again,
 * before anything else). */
static int wbio_write(BIO *b, const char *data, int dlen)
{
	struct wbio *w = BIO_get_data(b);
	void (*fn)(void *);
	int n;

	BIO_clear_retry_flags(b);
	if (w == NULL)
		return -1;
	n = write_some(b, w, data, dlen);
	if (w->err != 0) {
		w->held = false; /* the connection fails: nothing to wait for */
	} else if (n == dlen && dlen > 0 && w->held) {
		w->held = false;
		fn = w->on_sent;
		w->on_sent = NULL;
		if (fn != NULL)
			fn(w->on_sent_arg);
	} else if (n != dlen && (n >= 0 || BIO_should_retry(b))) {
		w->held = true;
	}
	return n;
}

/* The controls both BIOs answer alike for their socket fd: *ret set and
 * true when cmd is one of them. The socket is never a BIO's to close. */
static bool fd_ctrl(evutil_socket_t fd, int cmd, void *ptr, long *ret)
{
	switch (cmd) {
	case BIO_C_GET_FD:
		if (ptr != NULL)
			*(int *)ptr = (int)fd;
		*ret = (long)fd;
		return true;
	case BIO_CTRL_GET_CLOSE:
		*ret = BIO_NOCLOSE;
		return true;
	case BIO_CTRL_SET_CLOSE:
	case BIO_CTRL_DUP:
		*ret = 1;
		return true;
	default:
		return false;
	}
}

static long wbio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct wbio *w = BIO_get_data(b);
	long ret;
	int r;

	(void)num;
	if (w == NULL)
		return 0;
	if (fd_ctrl(w->fd, cmd, ptr, &ret))
		return ret;
	switch (cmd) {
	case BIO_CTRL_WPENDING:
		return (long)(w->len - w->off);
	case BIO_CTRL_PENDING:
		return 0;
	case BIO_CTRL_FLUSH:
		/* What the socket does not take now stays with the BIO, whose
		 * send event writes it once there is room: the flush is done
		 * for OpenSSL. A retry here made an SSL_read() that answers a
		 * client's KeyUpdate (a flush after the message) fail with
		 * SSL_ERROR_WANT_WRITE, whose reader then went to libevent
		 * (the session's second reviewer). */
		BIO_clear_retry_flags(b);
		if (w->buf == NULL)
			return w->err != 0 ? 0 : 1;
		r = send_some(w);
		if (r > 0)
			schedule(w);
		return r >= 0 ? 1 : 0;
	default:
		return 0;
	}
}

static int wbio_create(BIO *b)
{
	BIO_set_init(b, 0);
	BIO_set_data(b, NULL);
	return 1;
}

static int wbio_destroy(BIO *b)
{
	struct wbio *w;

	if (b == NULL)
		return 0;
	w = BIO_get_data(b);
	if (w != NULL) {
		if (w->send_ev != NULL)
			event_free(w->send_ev);
		free(w->buf);
		free(w);
	}
	BIO_set_data(b, NULL);
	BIO_set_init(b, 0);
	return 1;
}

/* A source/sink descriptor BIO method named name, whose one data
 * operation is write (wr) or read (rd); NULL when OpenSSL cannot make it. */
static BIO_METHOD *method_new(const char *name, int type, int (*wr)(BIO *, const char *, int),
			      int (*rd)(BIO *, char *, int), long (*ctrl)(BIO *, int, long, void *),
			      int (*destroy)(BIO *))
{
	int idx = BIO_get_new_index();
	BIO_METHOD *m;

	if (idx < 0 || (m = BIO_meth_new(idx | type, name)) == NULL)
		return NULL;
	if ((wr != NULL && BIO_meth_set_write(m, wr) != 1) || (rd != NULL && BIO_meth_set_read(m, rd) != 1) ||
	    BIO_meth_set_ctrl(m, ctrl) != 1 || BIO_meth_set_create(m, wbio_create) != 1 ||
	    BIO_meth_set_destroy(m, destroy) != 1) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

BIO_METHOD *wbio_method_new(void)
{
	return method_new(WBIO_NAME, BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, wbio_write, NULL, wbio_ctrl, wbio_destroy);
}

void wbio_method_free(BIO_METHOD *m)
{
	BIO_meth_free(m);
}

BIO *wbio_new(BIO_METHOD *m, struct event_base *base, evutil_socket_t fd)
{
	struct wbio *w = calloc(1, sizeof(*w));
	BIO *b;

	if (w == NULL)
		return NULL;
	w->fd = fd;
	w->send_ev = event_new(base, fd, EV_WRITE, send_cb, w);
	b = BIO_new(m);
	if (w->send_ev == NULL || b == NULL) {
		if (w->send_ev != NULL)
			event_free(w->send_ev);
		free(w);
		BIO_free(b);
		return NULL;
	}
	BIO_set_data(b, w);
	BIO_set_init(b, 1);
	return b;
}

void wbio_set_zone(BIO *b, bool upstream)
{
	struct wbio *w = BIO_get_data(b);

	if (w != NULL)
		w->upstream = upstream;
}

void wbio_set_ssl(BIO *b, SSL *ssl)
{
	struct wbio *w = BIO_get_data(b);

	if (w != NULL)
		w->ssl = ssl;
}

void wbio_set_bufferevent(BIO *b, struct bufferevent *bev)
{
	struct wbio *w = BIO_get_data(b);

	if (w != NULL)
		w->bev = bev;
}

size_t wbio_room(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	if (w == NULL || w->err != 0 || w->direct)
		return 0;
	if (w->buf == NULL)
		return WBIO_BUFFER_BYTES;
	return w->len < WBIO_BUFFER_BYTES ? WBIO_BUFFER_BYTES - w->len : 0;
}

size_t wbio_pending(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	return w != NULL ? w->len - w->off : 0;
}

uint64_t wbio_sent(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	return w != NULL ? w->sent : 0;
}

void wbio_notify_empty(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	if (w != NULL && w->len > w->off)
		w->notify = true;
}

bool wbio_holding(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	return w != NULL && w->held;
}

void wbio_on_sent(SSL *ssl, void (*fn)(void *), void *arg)
{
	struct wbio *w = of_ssl(ssl);

	if (w == NULL)
		return;
	w->on_sent = fn;
	w->on_sent_arg = arg;
}

void wbio_detach(SSL *ssl)
{
	struct wbio *w = of_ssl(ssl);

	if (w == NULL)
		return;
	w->bev = NULL;
	w->on_sent = NULL;
	w->notify = false;
	if (w->buf != NULL && w->err == 0)
		(void)send_some(w);
	/* The socket is closed before the BIO is freed: no send after. */
	(void)event_del(w->send_ev);
	w->scheduled = false;
}

/* ---- the read BIO --------------------------------------------------------- */

#define RBIO_NAME "passavant socket reader"

/* As OpenSSL's socket BIO (BIO_sock_non_fatal_error()): errors after
 * which a read may be tried again. */
static bool read_retry(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == EINPROGRESS || e == EALREADY ||
	       e == ENOTCONN || e == EPROTO;
}

static int rbio_read(BIO *b, char *buf, int len)
{
	struct rbio *r = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	if (r == NULL || len < 0)
		return -1;
	(void)zone_select(r->upstream);
	if (len == 0)
		return 0;
	do
		n = recv(r->fd, buf, (size_t)len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return (int)n;
	if (n == 0)
		r->eof = true;
	else if (read_retry(errno))
		BIO_set_retry_read(b);
	return (int)n;
}

static long rbio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct rbio *r = BIO_get_data(b);
	long ret;

	(void)num;
	if (r == NULL)
		return 0;
	if (fd_ctrl(r->fd, cmd, ptr, &ret))
		return ret;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_EOF:
		/* OpenSSL tells a peer that closed without close_notify
		 * (SSL_R_UNEXPECTED_EOF_WHILE_READING) by this. */
		return r->eof ? 1 : 0;
	default:
		return 0;
	}
}

/* The read BIO's and the filter writer's destroy: their state is one
 * plain allocation. */
static int plain_destroy(BIO *b)
{
	if (b == NULL)
		return 0;
	free(BIO_get_data(b));
	BIO_set_data(b, NULL);
	BIO_set_init(b, 0);
	return 1;
}

/* A BIO of m owning data (freed here when BIO_new() fails), or NULL. */
static BIO *plain_new(BIO_METHOD *m, void *data)
{
	BIO *b;

	if (data == NULL)
		return NULL;
	if ((b = BIO_new(m)) == NULL) {
		free(data);
		return NULL;
	}
	BIO_set_data(b, data);
	BIO_set_init(b, 1);
	return b;
}

BIO_METHOD *rbio_method_new(void)
{
	return method_new(RBIO_NAME, BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, NULL, rbio_read, rbio_ctrl, plain_destroy);
}

BIO *rbio_new(BIO_METHOD *m, evutil_socket_t fd, bool upstream)
{
	struct rbio *r = calloc(1, sizeof(*r));

	if (r != NULL) {
		r->fd = fd;
		r->upstream = upstream;
	}
	return plain_new(m, r);
}

/* ---- the filter writer ---------------------------------------------------- */

#define FWBIO_NAME "passavant filter writer"

struct fwbio {
	struct bufferevent *under; /* not ours */
	size_t answers;            /* bytes of small records written at or above under's watermark */
	bool over;                 /* a write failed on WBIO_ANSWERS_MAX */
};

static int fwbio_write(BIO *b, const char *buf, int len)
{
	struct fwbio *f = BIO_get_data(b);
	struct evbuffer *out;
	size_t high = 0;

	BIO_clear_retry_flags(b);
	if (f == NULL || len < 0)
		return -1;
	if (len == 0)
		return 0;
	out = bufferevent_get_output(f->under);
	if (bufferevent_getwatermark(f->under, EV_WRITE, NULL, &high) != 0 || high == 0)
		high = PASSAVANT_OUTBUF_HIGH_BYTES;
	if (evbuffer_get_length(out) < high) {
		f->answers = 0;
	} else if ((size_t)len <= WBIO_ANSWER_BYTES) {
		if (f->answers + (size_t)len > WBIO_ANSWERS_MAX) {
			f->over = true;
			ERR_raise(ERR_LIB_SYS, ENOBUFS);
			return -1;
		}
		f->answers += (size_t)len;
	}
	if (evbuffer_add(out, buf, (size_t)len) != 0) {
		ERR_raise(ERR_LIB_SYS, ENOMEM);
		return -1;
	}
	return len;
}

static long fwbio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct fwbio *f = BIO_get_data(b);

	(void)num;
	(void)ptr;
	if (f == NULL)
		return 0;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		/* The bufferevent under sends as the socket takes it. */
		return 1;
	case BIO_CTRL_WPENDING:
		return (long)evbuffer_get_length(bufferevent_get_output(f->under));
	case BIO_CTRL_GET_CLOSE:
		return BIO_NOCLOSE;
	case BIO_CTRL_SET_CLOSE:
	case BIO_CTRL_DUP:
		return 1;
	default:
		return 0;
	}
}

BIO_METHOD *fwbio_method_new(void)
{
	return method_new(FWBIO_NAME, BIO_TYPE_SOURCE_SINK, fwbio_write, NULL, fwbio_ctrl, plain_destroy);
}

BIO *fwbio_new(BIO_METHOD *m, struct bufferevent *under)
{
	struct fwbio *f = calloc(1, sizeof(*f));

	if (f != NULL)
		f->under = under;
	return plain_new(m, f);
}

bool wbio_overflowed(SSL *ssl)
{
	BIO *b = SSL_get_wbio(ssl);

	/* The handshake's buffering BIO may sit on top. */
	for (; b != NULL; b = BIO_next(b)) {
		const char *name = BIO_method_name(b);
		void *data = BIO_get_data(b);

		if (name == NULL || data == NULL)
			continue;
		if (strcmp(name, FWBIO_NAME) == 0)
			return ((struct fwbio *)data)->over;
		if (strcmp(name, WBIO_NAME) == 0)
			return ((struct wbio *)data)->over;
	}
	return false;
}

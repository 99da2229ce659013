/*
 * conn_int.h - the connection's insides, shared by the files that make up
 * one connection (private to proxy/; conn.h is the public face):
 *
 *   conn.c      state and mode, audit line, refusals, conn_drive(), draining,
 *               callbacks of the client side and the timer, new and close
 *   exchange.c  one request/response: the head read, the HTTP relay, the end
 *   decide.c    the decisions: CONNECT, one pipeline for every request,
 *               and the verdict HTTP/1.1 and HTTP/2 requests share
 *   dial.c      the upstream side: dialling, adopting, its callbacks
 *   mitm.c      TLS termination: sniffing the first bytes, the handshakes
 *   intercept.c intercepted connections: the original destination, what
 *               the first bytes are (ClientHello SNI, HTTP, other)
 *   relay.c     byte streams (tunnels, upgraded streams) and their masking
 *   h2*.c       HTTP/2 inside a terminated tunnel: streams (h2.h, h2_int.h)
 *   sockio.c    the I/O layer: sockets, TLS records and buffers (sockio.h)
 *
 * The state machine is drawn in conn.c; docs/architecture.md tells the
 * whole path of a request.
 */
#ifndef PASSAVANT_PROXY_CONN_INT_H
#define PASSAVANT_PROXY_CONN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "base/attrib.h"
#include "cmask.h"
#include "conn.h"
#include "formmethod.h"
#include "http1.h"
#include "proxy.h"
#include "target.h"
#include "upstream.h"

/* Room for a reason line; the policy refusals of SPEC §5 start with it. */
#define REASON_MAX 1024

struct ssl_st;

/* Where the connection is; changed only by conn_set_state(). */
enum conn_state {
	CONN_ACCEPTED,            /* socket taken over, nothing read */
	CONN_INTERCEPT_SNIFF,     /* intercepted: waiting for the first bytes (TLS, HTTP or other) */
	CONN_READ_HEAD,           /* reading a request head (first or next) */
	CONN_DECIDE,              /* head complete: policy decisions */
	CONN_TUNNEL_CONNECTING,   /* CONNECT allowed: resolving/connecting */
	CONN_TLS_SNIFF,           /* 200 sent: waiting for the tunnel's first bytes (TLS, HTTP or other) */
	CONN_PASS_HELLO,          /* excluded host: its ClientHello went; the rest waits for TLS from the server */
	CONN_PASS_RETRY,          /* excluded host: the server asked for a second ClientHello (HelloRetryRequest) */
	CONN_TLS_UPSTREAM,        /* the client offers h2: the upstream's handshake first (its ALPN decides) */
	CONN_TLS_ACCEPT,          /* TLS handshakes with the client (and the upstream) running */
	CONN_UPSTREAM_CONNECTING, /* request allowed: resolving/connecting (or upstream TLS) */
	CONN_RELAY,               /* request/response or tunnel bytes flowing */
	CONN_DRAINING,            /* flushing one side before closing */
	CONN_CLOSED               /* torn down; never observed after free */
};

/* What the client's bytes are; changed only by conn_set_mode(). */
enum conn_mode {
	CONN_MODE_HTTP,       /* plain proxy requests (absolute form), one exchange at a time */
	CONN_MODE_TUNNEL,     /* after a CONNECT's 200 (or an intercepted ClientHello): TLS_SNIFF, then
			       * TLS relayed as it is (excludeDomains) */
	CONN_MODE_TERMINATED, /* TLS with the client terminated: origin-form requests inside */
	CONN_MODE_UPGRADED,   /* after a 101: an opaque WebSocket stream (inside TLS if client.ssl) */
	CONN_MODE_RAW,        /* intercepted, no HTTP spoken (first bytes, a ClientHello before its
			       * tunnel is up): a refusal closes, it cannot be answered */
	CONN_MODE_H2          /* TLS with the client terminated, HTTP/2 inside (h2.c): streams */
};

/* What a drive step asks for next. */
enum step { STEP_STOP, STEP_AGAIN, STEP_CLOSED };

/* Where one request/response exchange is. The request body may still
 * flow in the later phases (exchange.req_done says when it ended). */
enum exchange_phase {
	EX_IDLE,          /* no byte of a request head yet */
	EX_REQ_HEAD,      /* bytes of a request head have arrived */
	EX_WAIT_RESPONSE, /* decided and sent on; nothing went to the client yet */
	EX_RESPONDING,    /* a response head or an answer went to the client */
	EX_DONE           /* the response was passed on in full */
};

/* What the current request is. */
enum exchange_kind {
	EX_KIND_REQUEST, /* an HTTP request (absolute form, or origin form inside TLS) */
	EX_KIND_UPGRADE, /* a request asking for a WebSocket upgrade we relay */
	EX_KIND_CONNECT  /* a CONNECT (audited as "connect", then "tunnel") */
};

/* How the current request uses the upstream connection. */
enum exchange_upstream {
	EX_UP_FRESH,   /* a new connection (or none yet) */
	EX_UP_REUSED,  /* an idle kept-alive connection: re-sent once if it closes at once */
	EX_UP_RETRIED  /* already re-sent once on a fresh connection */
};

/* How the TLS stream to the client ends (DRAINING, conn_step_drain()). */
enum tls_end {
	TLS_END_OPEN,     /* not ending yet: close_notify will end it */
	TLS_END_TRUNCATE, /* the upstream cut a close-delimited body: end without close_notify */
	TLS_END_NOTIFIED, /* close_notify queued */
	TLS_END_CUT       /* everything sent, then FIN without close_notify */
};

/* What a CONNECT to a host decided, for TLS_SNIFF. */
enum tunnel_plan {
	TUNNEL_OPAQUE,          /* relay TLS as it is; plain HTTP decided per request, else refused (mitm.c) */
	TUNNEL_TERMINATE,       /* terminate TLS; plain HTTP decided per request, else refused */
	TUNNEL_TERMINATE_ONLY   /* terminate TLS; refuse anything else (method rule, SPEC §3.1) */
};

/*
 * One request and its response on a connection; exchange_reset() makes a
 * new one (keep-alive, a new TLS stream). The booleans are independent of
 * the phase and of each other: the request body runs beside the response,
 * and masking is decided per direction.
 */
struct exchange {
	enum exchange_phase phase;  /** how far the exchange went */
	enum exchange_kind kind;    /** request, WebSocket upgrade or CONNECT */
	enum exchange_upstream up_use; /** fresh, reused or retried upstream connection */
	bool req_done;              /** the request was passed on in full */
	bool client_close;          /** close the client after this response */
	bool audited;               /** the exchange has its audit line */
	bool have_target;           /** tgt was parsed for this request (inside TLS it is always the CONNECT's) */
	bool redact;                /** the request carries a real value: its target is never written anywhere */
	bool identity;              /** the request to an inject host asked for Accept-Encoding: identity */
	bool mask_req_body;         /** the request body goes through the outbound substituter */
	bool mask_resp_body;        /** the response body goes through the inbound substituter */
	bool raw_line;              /** the refusal reason is the whole stderr line (audit reason_is_line) */
	bool cut;                   /** audited as it ended early: the byte counts are what left */
	bool up_close;              /** sent with "Connection: close": the upstream connection is not reused */
	bool reframed;              /** a close-delimited response body goes to the client chunked */
	int status;                 /** status sent for the request */
	struct timeval t0;          /** start of the request or tunnel */
	uint64_t bytes_up;          /** bytes passed on from the client */
	uint64_t bytes_down;        /** bytes passed on from the upstream */
	struct formmethod fm;       /** the request body read for a _method (a host with a method rule) */
};

/*
 * What a TLS connection does with its record buffers (OpenSSL's read and
 * write buffers, the input chain libevent reserves) between requests
 * (sockio_drive_done(), sockio_bufs_tick()). A connection starts in
 * RELEASE; one driven at least SOCKIO_BUSY_DRIVES times between two of its
 * loop's buffer ticks is busy and KEEPs them; a tick that finds it quiet
 * makes it COOL (still kept), and a second quiet tick in a row releases
 * them and puts it back in RELEASE. A busy tick in between makes it KEEP
 * again: a client that alternates short busy and quiet spells does not
 * make the proxy free, trim and fault its buffers back in each time.
 */
enum conn_bufs {
	CONN_BUFS_RELEASE, /* freed whenever a side goes idle (SSL_MODE_RELEASE_BUFFERS) */
	CONN_BUFS_KEEP,    /* busy: kept from one request to the next */
	CONN_BUFS_COOL     /* kept, one quiet tick seen: the next quiet tick releases them */
};

/* One side of the connection: its socket, TLS and parser. */
struct conn_side {
	struct bufferevent *bev;  /** socket bufferevent, NULL when not connected */
	struct ssl_st *ssl;       /** TLS on this side (bev is then the SSL filter), else NULL */
	http1_t *http;            /** client: request parser; upstream: response parser */
	char peer[64];            /** "addr:port" or "host:port" for logs */
	struct evbuffer *pending; /** head (+ body) assembled in a step, flushed after it */
	struct event *rd;         /** our read event (sockio.c): a plain socket's, a TLS socket's once its
	                           *  handshake is done; NULL before, on a TLS filter, or handed back to
	                           *  libevent */
	bool reading;             /** rd is added */
	struct timeval read_on;   /** when reading it was last switched on (sockio_set_reading(); zero: never
	                           *  by it), for sockio_peer_quiet() */
	bool kicked;              /** TLS: a read was started for bytes OpenSSL holds (sockio.c) */
	bool held;                /** TLS: read since its buffers were last released (sockio_release_idle()) */
	bool filter;              /** TLS: bev is an SSL filter over a socket bufferevent (set with bev) */
	bool may_join;            /** TLS: a small write may be copied into one record (sockio_send()); never
	                           *  where real credential values go (the upstream of a masking session:
	                           *  the copied chains would be freed unwiped). Upstream: set by
	                           *  conn_prepare_request() for each request, kept across re-dials */
	bool eof;                 /** this side will send nothing more (EOF or error) */
	bool shut_wr;             /** our write side to it is shut (half-close, lingering close) */
	bool failed;              /** upstream: ended in an error, not a clean EOF */
	bool fin_end;             /** TLS: its end was a FIN without close_notify, not a reset or an alert
	                           *  (sockio.c's reader tells them apart; failed is set for all three) */
	bool reusable;            /** upstream: may carry the next request */
	bool tls_ready;           /** upstream: TLS handshake done and verified */
	bool cert_bad;            /** upstream: its TLS failed on its certificate (up_tls_err says why) */
};

/* Where a connection of origin-form plain HTTP requests goes: an
 * intercepted connection's original destination (SO_ORIGINAL_DST), or
 * the target of a CONNECT whose tunnel carries plain HTTP (mitm.c,
 * tunnel_plain()). Allocated for those only, as are the other texts
 * a connection needs only sometimes (struct conn), so that an idle tunnel
 * holds none of them (docs/architecture.md "The upstream zone"). */
struct conn_orig {
	struct sockaddr_storage sa;     /** the address (intercepted only; zero for a tunnel) */
	char ip[48];                    /** the address as text (IPv6 without brackets) */
	uint16_t port;                  /** the port */
	char name[POLICY_HOST_MAX + 1]; /** the name its synthetic address stands for (a tunnel: the
					  * CONNECT host, name or address), or "" */
	bool tunnel;                    /** a CONNECT's target, not an intercepted destination */
};

/* Sizes of struct conn's texts allocated when first needed. */
#define CONN_RULE_BYTES (POLICY_HOST_MAX + 64)
#define CONN_TLS_ERR_BYTES 256

/* How much of a method a reason shows: HTTP/2 takes any token as one, of
 * any length, and uncut it filled the reason's buffer so that the host
 * and path after it never showed (round 45 of the attack). Used as
 * "%.*s%s", CONN_METHOD_CUT(m), m, CONN_METHOD_MORE(m). */
#define CONN_METHOD_SHOWN 32
#define CONN_METHOD_CUT(m) ((int)(strlen(m) > CONN_METHOD_SHOWN ? CONN_METHOD_SHOWN : strlen(m)))
#define CONN_METHOD_MORE(m) (strlen(m) > CONN_METHOD_SHOWN ? "..." : "")

/*
 * The decision of one host and port (policy_decide()) kept for the
 * requests that follow: a terminated tunnel's target is fixed, and its
 * policy changes only with conn_use_policy(), which forgets it.
 */
struct host_decision {
	bool valid;
	struct policy_decision d;
};

/*
 * The target of a connection's current request or tunnel: what struct
 * target holds, with the host and the authority in one allocation sized
 * to them (an idle tunnel keeps a few dozen bytes of it, not struct
 * target's 544). Both are "" until set.
 */
struct conn_target {
	const char *host;          /** normalised host (struct target's) */
	const char *authority;     /** what the Host field must say */
	uint16_t port;
	bool is_ip;
	bool is_ipv6;
	const char *path;          /** absolute form: into the request head */
	size_t path_len;
	char *text;                /** owns host and authority; NULL while both are "" */
	size_t cap;                /** bytes at text */
};

/*
 * One client connection. What it is doing is state, mode and ex.phase;
 * the booleans left are each one fact of their own that no enum orders:
 * the slot held, the first head, the first answer inside TLS, a remasked
 * tunnel, the SNI check, and a drain waiting for the write BIO.
 */
struct conn {
	struct conn *next;          /** registry: next connection */
	struct conn **pprev;        /** registry: the pointer that points to us */
	proxy_t *px;                /** the proxy (loop, resolver, audit, slots) */
	proxy_policy_t *pol;        /** policy reference this connection decides with */
	struct host_decision tun_decision; /** the tunnel's target decided under pol (conn_use_policy()) */
	enum conn_state state;      /** where we are; changed only by conn_set_state() */
	enum conn_mode mode;        /** what the client's bytes are; changed only by conn_set_mode() */
	struct exchange ex;         /** the current request/response */
	struct conn_side client;    /** the workload's side */
	struct conn_side up;        /** the upstream's side */
	struct event *timer;        /** head, idle, drain or linger deadline */
	upstream_req_t *dial;       /** pending resolve+connect, or NULL */
	struct conn_target tgt;     /** target of the current request or tunnel (conn_target_set()) */
	const char *rule;           /** rule of the last decision (policy or static storage) */
	enum tunnel_plan plan;      /** CONNECT: what TLS_SNIFF does with the first bytes */
	bool slot;                  /** holds one of the proxy's maxTunnels slots */
	bool waiting;               /** counted among the conns holding no slot (proxy_waiting_acquire()) */
	bool body_inj;              /** its request's body got a real value: counted by
				     *  proxy_body_injected_open() until the exchange ends */
	bool first_request;         /** the first head is still awaited */
	bool answered;              /** a terminated tunnel completed its first request */
	bool sni_mismatch;          /** the client's SNI does not name the CONNECT host */
	enum tls_end tls_end;       /** how the TLS stream to the client ends */
	bool drain_wait;            /** DRAINING: waited for the write BIO; the linger restarts when it is empty */
	bool client_rst;            /** DRAINING: a close-delimited body to the client was cut: once all is
	                             *  sent, its connection ends with an RST, not a FIN (an end to it) */
	char *sni;                  /** SNI the client sent, normalised (malloc'd), or NULL if none */
	char *up_tls_err;           /** why the upstream TLS handshake failed (CONN_TLS_ERR_BYTES, malloc'd at
	                             *  the first failure; "" or NULL if not) */
	struct event *peek_ev;      /** TLS_SNIFF: MSG_PEEK watch of the client socket, or NULL */
	char *up_host;              /** host the upstream bev is connected for (malloc'd), or NULL */
	uint16_t up_port;           /** port the upstream bev is connected for */
	struct timeval last;        /** last time bytes moved (idle timeout) */
	unsigned head_ms;           /** handshakeTimeoutMs of our policy */
	unsigned idle_ms;           /** idleTimeoutMs of our policy */
	unsigned up_keep_ms;        /** upstreamKeepAliveMs of our policy (0: until idle_ms) */
	struct timeval between;     /** READ_HEAD between requests: when that began (conn_now()), else cleared */
	cmask_t *mask;              /** credential masking state, or NULL (none in this session) */
	struct evbuffer *head_out;  /** the request head for the upstream, substituted, until sent */
	struct event *tail_ev;      /** masking: releases held bytes after a pause, or NULL */
	char *mask_rule;            /** rule of a refusal for a real value or a sentinel (CONN_RULE_BYTES,
	                             *  malloc'd at the first: conn_set_mask_rule()), or NULL */
	uint64_t drain_sent;        /** DRAINING: wbio_sent() of the client when the timer last fired */
	struct evbuffer_cb_entry *under_cb; /** DRAINING, TLS filter: under_drained_cb() on its underlying output */
	const struct intercept *icpt; /** the intercept listener it came from, or NULL (the proxy port) */
	struct conn_orig *orig;     /** intercepted: the original destination (malloc'd), else NULL */
	bool client_h2;             /** the client's ClientHello offers ALPN h2 */
	enum conn_bufs bufs;        /** TLS record buffers: released per drive or kept while busy */
	uint16_t drives;            /** drives since the loop's last buffer tick (saturating, sockio.c) */
	struct h2 *h2;              /** mode H2: the sessions and streams (h2.c), else NULL */
};

/* The 502 of a request whose upstream TLS failed (c->up_tls_err): "the
 * certificate of HOST:PORT does not verify: ..." when its certificate was
 * the reason (c->up.cert_bad), else "TLS with HOST:PORT failed: ...". */
enum step conn_refuse_up_tls(conn_t *c) NONNULL(1);

/*
 * Formats the rule of a credential refusal into c->mask_rule (allocated
 * at the first call, kept until conn_close(); each call overwrites it, as
 * every rule that names it is set anew) and returns it; out of memory, a
 * fixed text that names no credential.
 */
const char *conn_set_mask_rule(conn_t *c, const char *fmt, ...) PRINTF(2, 3) NONNULL(1, 2);

/* ---- inline helpers -------------------------------------------------- */

/* Whether the connection came through an intercept listener (its
 * destination is orig, not a proxy request). */
static inline bool intercepted(const conn_t *c)
{
	return c->icpt != NULL;
}

/* The policy this connection decides with. */
static inline const policy_t *pol(const conn_t *c)
{
	return proxy_policy(c->pol);
}

/* Whether TLS with the client is terminated here (mode TERMINATED, or
 * UPGRADED inside it). */
static inline bool terminated(const conn_t *c)
{
	/* (mode H2 too) */
	return c->client.ssl != NULL;
}

/* Whether something (an answer, a response head) went to the client in
 * this exchange. */
static inline bool responding(const conn_t *c)
{
	return c->ex.phase >= EX_RESPONDING;
}

/* Whether tgt holds the current request's target: parsed for it, or the
 * CONNECT's inside a terminated tunnel. */
static inline bool have_target(const conn_t *c)
{
	return c->ex.have_target || terminated(c);
}

/* The audit kind of a refusal of the current request. */
static inline const char *refusal_kind(const conn_t *c)
{
	return c->ex.kind == EX_KIND_CONNECT ? "connect" : "request";
}

static inline struct evbuffer *in_of(struct conn_side *s)
{
	return bufferevent_get_input(s->bev);
}

static inline struct evbuffer *out_of(struct conn_side *s)
{
	return bufferevent_get_output(s->bev);
}

/* ---- conn.c ------------------------------------------------------------ */

/* The only places the state and the mode change (debug log old -> new). */
void conn_set_state(conn_t *c, enum conn_state s) NONNULL(1);
void conn_set_mode(conn_t *c, enum conn_mode m) NONNULL(1);

/* c decides from now on under the proxy's current policy (a SIGHUP
 * reload applies from the next decision on); the tunnel decision kept
 * under the old one is forgotten. */
void conn_use_policy(conn_t *c) NONNULL(1);

/* HTTP/1.1: the current request's body got a real value (counted once,
 * proxy_body_injected_open()); the exchange ended (done). */
void conn_body_injected_note(conn_t *c) NONNULL(1);
void conn_body_injected_done(conn_t *c) NONNULL(1);

/* Bytes moved now (idle timeout); (re)arms the conn's timer for ms. */
void conn_touch(conn_t *c) NONNULL(1);
void conn_arm_timer(conn_t *c, unsigned ms) NONNULL(1);

/* c now holds a maxTunnels slot (taken by the caller): it no longer counts
 * among the conns waiting for a first allowed request. */
void conn_slot_taken(conn_t *c) NONNULL(1);

/* READ_HEAD between requests (after a response, or a TLS handshake with
 * the client): from now, idleTimeoutMs for the client, and
 * upstreamKeepAliveMs for an upstream kept for the next request (then it
 * is released: timer_cb()). Measured on the monotonic clock. */
void conn_arm_between(conn_t *c) NONNULL(1);

/* The audit line of the current exchange (once: ex.audited); kind is
 * "request", "connect" or "tunnel". */
void conn_audit(conn_t *c, const char *kind, const char *decision, const char *reason, const char *rule)
	NONNULL(1, 2, 3);

/* Answer sent or response complete: flush the client, close lingering. */
enum step conn_enter_draining(conn_t *c) NONNULL(1);

/*
 * Answers the current request with an error and drains: audit line, the
 * response of SPEC §5 (xerr: X-Proxy-Error value or NULL), then close. If
 * a response already started, the connection is just closed.
 */
enum step conn_refuse(conn_t *c, int status, const char *xerr, const char *kind, const char *rule,
		      const char *fmt, ...) NONNULL(1, 4, 6) PRINTF(6, 7);

/*
 * The clock of every duration and deadline a connection keeps (idle
 * times, audit durations, HTTP/2 hold-back and reset budgets): the
 * monotonic clock, so that a wall-clock step (NTP, a VM resumed) can
 * neither end a timeout early nor release held bytes early. conn_now()
 * reads it; conn_ms_since() is the milliseconds since t, read from it.
 */
void conn_now(struct timeval *tv) NONNULL(1);
int64_t conn_ms_since(const struct timeval *t) NONNULL(1);

/* "GET http://host:port/path" or "CONNECT host:port" for reasons. */
const char *conn_what(const conn_t *c, char *buf, size_t len) NONNULL(1, 2);

/* Makes all the progress the buffers allow. May free c. */
void conn_drive(conn_t *c) NONNULL(1);

/* The client bufferevent's callbacks (arg is the conn). */
void conn_client_read_cb(struct bufferevent *bev, void *arg);
void conn_client_write_cb(struct bufferevent *bev, void *arg);
void conn_client_event_cb(struct bufferevent *bev, short events, void *arg);

/* ---- exchange.c -------------------------------------------------------- */

/* A new exchange: every field back to its initial value. */
void exchange_reset(struct exchange *ex) NONNULL(1);

/* READ_HEAD: parse the client's bytes up to a whole head, then decide. */
enum step conn_step_read_head(conn_t *c) NONNULL(1);

/* RELAY of an HTTP exchange: request body up, response down. */
enum step conn_step_http(conn_t *c) NONNULL(1);

/* A real value was on its way out: wipe what waits for the upstream and
 * make its close an RST. */
void conn_wipe_reset_upstream(conn_t *c) NONNULL(1);

/* ---- relay.c ----------------------------------------------------------- */

/* Passes on what the substituter of direction d may send now; 0 or -1. */
int conn_mask_pass(conn_t *c, enum cmask_dir d) NONNULL(1) WUNRES;

/* RELAY of a byte stream (TUNNEL, UPGRADED), half-close included. */
enum step conn_step_tunnel(conn_t *c) NONNULL(1);

/* ---- decide.c ---------------------------------------------------------- */

/* A complete head is in client.http: decide what to do with it. */
enum step conn_decide(conn_t *c) NONNULL(1);

/* The allowed request's head for the upstream, into c->head_out (masked);
 * true to go on, else false with *st the step to return. */
bool conn_prepare_request(conn_t *c, enum step *st) NONNULL(1, 2);

/* Whether a Host field value (or :authority) names the CONNECT target t:
 * "host[:port]" or "[v6][:port]", the port 443 when absent. */
bool conn_host_names_target(const char *v, size_t vlen, const struct conn_target *t) NONNULL(1, 3);

/* c->tgt = t (its host, authority, port, kinds and path). 0, or -1 on
 * ENOMEM, c->tgt unchanged. */
int conn_target_set(conn_t *c, const struct target *t) NONNULL(1, 2) WUNRES;
/* target_parse_connect() / target_parse_absolute() into c->tgt: NULL, or
 * a static message (c->tgt unchanged): conn_target_nomem itself when
 * memory ran out (a 503, not the client's fault), else the parser's. */
extern const char conn_target_nomem[];
const char *conn_target_connect(conn_t *c, const char *s, size_t len) NONNULL(1, 2) WUNRES;
const char *conn_target_absolute(conn_t *c, const char *s, size_t len) NONNULL(1, 2) WUNRES;
/* c->tgt's authority made again from its host and port (target_set_authority()). 0 or -1 (ENOMEM). */
int conn_target_authority(conn_t *c, uint16_t default_port) NONNULL(1) WUNRES;
/* Frees what c->tgt holds; both strings are "" again. */
void conn_target_free(conn_t *c) NONNULL(1);

/*
 * What both protocols know of a request when it is judged (conn_verdict()):
 * HTTP/1.1 from its head (decide.c), HTTP/2 from a stream's (h2req.c).
 * Values with a length need not be NUL-terminated.
 */
struct req_facts {
	const char *method;        /** the method (NUL-terminated) */
	const char *path;          /** tunnel: the target as sent; plain: the parsed URL's path; NULL: none (no :path) */
	size_t path_len;
	const struct conn_target *tgt; /** the tunnel's target, or the plain request's; NULL: plain, not parsed yet
				    * (only the method is judged) */
	bool tunnel;               /** inside a terminated tunnel: origin form, Host and SNI must name tgt */
	bool intercepted;          /** the tunnel came through an intercept listener (tgt is the SNI's) */
	bool sni_mismatch;         /** the client's SNI does not name tgt */
	const char *sni;           /** the SNI the client sent (reasons) */
	unsigned nhost;            /** Host fields in the head */
	const char *host;          /** the first Host value, or NULL */
	size_t host_len;
	const char *authority;     /** HTTP/2 :authority (NUL-terminated), or NULL */
	const policy_t *pol;       /** the policy the request is decided under */
	struct host_decision *tgt_decision; /** tgt decided under pol, kept between requests (filled when not
					     * valid); NULL: decided afresh */
	bool audit_down;           /** the audit file cannot be written: refused (proxy_audit_down()) */
	/** the head's fields: next_field(fields, &i, ...) gives the field at cursor i (0 first) and moves i
	 * on; false after the last. NULL: no fields. Read only on a host with a method rule (overrides). */
	bool (*next_field)(const void *fields, size_t *i, const char **name, size_t *nlen, const char **val,
			   size_t *vlen);
	const void *fields;
};

/* What conn_verdict() decided: allowed (status 0), or the refusal each
 * protocol answers its own way (conn_refuse(), h2s_answer()). */
struct verdict {
	int status;                /** 0: allowed; else the refusal's status */
	const char *xerr;          /** X-Proxy-Error value, or NULL */
	const char *kind;          /** audit kind ("request") */
	const char *rule;          /** the rule the refusal names, or NULL; allowed: the allowing rule */
	bool decided;              /** rule is the request's rule from now on (the policy was asked, or a
				    * credential rule refused it) */
	bool form_ok;              /** tunnel: the target's form passed (it is the request's path) */
	bool restricted;           /** decided: a method rule applies to the host */
	char reason[REASON_MAX];   /** the refusal's reason line (stderr, audit, body) */
};

/*
 * The checks every request gets, in this order: TRACE/TRACK 405; inside a
 * tunnel CONNECT 400 and the origin form 400; more than one Host 400;
 * inside a tunnel :authority, Host and SNI naming tgt (421, CONN_RULE_*);
 * allowedDomains, then allowedMethods (403): on a host with a method rule
 * also every method a method-override field (X-HTTP-Method-Override,
 * X-HTTP-Method, X-Method-Override) or a `_method` query parameter names.
 * Returns true when allowed;
 * v says why not (and, once decided, the rule). Formats only a refusal.
 */
bool conn_verdict(const struct req_facts *f, struct verdict *v) NONNULL(1, 2);

/*
 * The credential refusals (SPEC §4.2, 403), as both protocols word them;
 * what is conn_what() or h2s_what(). conn_verdict_real(): a real value of
 * cred (NULL: not known) on its way out in where ("the request target",
 * "a header", "the request body"); its rule "credentials <cred>: real
 * value" is written into rule (the caller's storage, which later lines
 * name). conn_verdict_sentinel(): a sentinel where the policy does not let
 * it go (cmask_request_head()'s rule and why).
 */
void conn_verdict_real(struct verdict *v, const char *what, const char *cred, const char *where, char *rule,
		       size_t rule_len) NONNULL(1, 2, 4, 5);
void conn_verdict_sentinel(struct verdict *v, const char *what, const char *rule, const char *why)
	NONNULL(1, 2, 3, 4);

/*
 * On a host a method rule applies to (f's decision), arms fm to read the
 * request body for a _method (formmethod.h) by the head's Content-Type;
 * elsewhere fm reads nothing. True to go on; false with v a 403 when the
 * body cannot be read (more than one Content-Type field, multipart/form-
 * data without a usable boundary).
 */
bool conn_body_method_begin(const struct req_facts *f, struct formmethod *fm, struct verdict *v)
	NONNULL(1, 2, 3) WUNRES;

/* The refusal of a request whose body named a method the rule does not
 * allow (fm refused it); then says what became of the upstream. */
void conn_verdict_body_method(struct verdict *v, const char *what, const struct formmethod *fm, const char *then)
	NONNULL(1, 2, 3, 4);

/* The rules a 421 inside a tunnel names. */
#define CONN_RULE_HOST_TUNNEL "tunnel: Host must name the CONNECT target"
/* The rule of a tunnel refused for carrying neither HTTP nor TLS. */
#define CONN_RULE_TUNNEL_OTHER "tunnel: neither HTTP nor TLS"
#define CONN_RULE_HOST_INTERCEPT "interception: Host must name the TLS server name"
#define CONN_RULE_SNI "tunnel: the TLS server name must name the CONNECT target"

/* ---- dial.c ------------------------------------------------------------ */

/* Frees the upstream side (connection and parser state), keeping the
 * parser object for reuse. */
void conn_drop_upstream(conn_t *c) NONNULL(1);

/* Starts resolving/connecting for tgt in state connecting. */
enum step conn_dial(conn_t *c, enum conn_state connecting) NONNULL(1);

/* Sends the prepared request head upstream and starts relaying. */
enum step conn_send_request(conn_t *c) NONNULL(1);

/* Layers verified TLS over bev (the connected upstream of a terminated
 * tunnel, ALPN offering h2 first when h2) and adopts it; 0, or -1 after
 * closing c. */
int conn_adopt_upstream_tls(conn_t *c, struct bufferevent *bev, bool h2) NONNULL(1, 2);

/* The upstream bufferevent's event callback (arg is the conn). */
void conn_up_event_cb(struct bufferevent *bev, short events, void *arg);

/* The policy decision of a tunnel whose target is in tgt (a CONNECT, or
 * an intercepted ClientHello): allowed -> TUNNEL_CONNECTING. */
enum step conn_decide_tunnel(conn_t *c) NONNULL(1);

/* ---- intercept.c ------------------------------------------------------- */

/* The target of an origin-form request on a plain-HTTP connection with a
 * destination (c->orig: intercepted, or a CONNECT tunnel carrying plain
 * HTTP): the Host field's host (or the destination's name or address
 * without one), the destination's port; 421 when Host names another
 * port, or another host than the synthetic address stands for or the
 * CONNECT named. Returns true to go on, else false with *st the
 * refusal's step. */
bool conn_intercept_target(conn_t *c, const char *url, size_t ulen, enum step *st) NONNULL(1, 2, 4);

/* 1: the bytes in `in` start an HTTP request line ("METHOD " in upper
 * case), 0: they do not, -1: too few to tell. */
int conn_http_start(struct evbuffer *in) NONNULL(1);

/* INTERCEPT_SNIFF: what the first bytes of an intercepted connection are. */
enum step conn_step_intercept(conn_t *c) NONNULL(1);

/* INTERCEPT_SNIFF timed out: nothing (a protocol whose server speaks
 * first) or an incomplete start came. Closes c. */
void conn_intercept_timeout(conn_t *c) NONNULL(1);

/*
 * Refuses the connection without an answer (no HTTP was spoken, or TLS
 * came to the proxy port): line is the whole stderr line of `run` and
 * the audit reason (kind "connect", deny, its own line: reason_is_line),
 * logged at info level; then closes c.
 */
void conn_refuse_raw(conn_t *c, const char *fmt, ...) NONNULL(1, 2) PRINTF(2, 3);

/* ---- mitm.c ------------------------------------------------------------ */

/* TLS_SNIFF: what the first bytes of a tunnel are (TLS, HTTP or other). */
enum step conn_step_tls_sniff(conn_t *c) NONNULL(1);

/* PASS_HELLO: an excluded host's ClientHello went upstream; the server's
 * first bytes must be TLS before anything else is relayed. */
enum step conn_step_pass_hello(conn_t *c) NONNULL(1);
enum step conn_step_pass_retry(conn_t *c) NONNULL(1);
bool conn_up_closed_cleanly(const conn_t *c) NONNULL(1);

/* Peek mode of TLS_SNIFF: watch the client socket with MSG_PEEK. */
void conn_start_peek(conn_t *c) NONNULL(1);
void conn_stop_peek(conn_t *c) NONNULL(1);

/* The client's TLS handshake completed: read requests inside (HTTP/1.1)
 * or start HTTP/2 (h2.c). */
void conn_tls_accepted(conn_t *c) NONNULL(1);

/* TLS_UPSTREAM: the upstream's handshake ended (h2: it negotiated h2);
 * TLS with the client starts, offering h2 only then. STEP_STOP, or
 * STEP_CLOSED when it failed and c is freed (not to be touched). */
enum step conn_mitm_client(conn_t *c, bool h2) NONNULL(1);

#endif

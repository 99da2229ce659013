/*
 * proxy.c - the event loops, listeners, signals, the refcounted policy
 * holder, the tunnel slots, the EMFILE pause and the watcher of this
 * machine's own addresses (localaddr.c).
 *
 * Loops (docs/architecture.md "Loops"): a proxy_t is one event loop. The
 * first (the one proxy_new() returns, "loop 0") owns what every loop
 * shares: the current policy, the audit log, the TLS session, the
 * credential table, the tunnel count, the signals and the listeners.
 * proxy_set_loops() adds worker loops, each with its own event base,
 * resolver, address watcher, connection registry and heap-trim timer,
 * run by a thread of its own from proxy_run(). Loop 0 accepts every
 * connection and hands each, round robin, to a loop (itself included)
 * through that loop's inbox: a locked queue and an eventfd the loop
 * watches. A connection lives on the loop it was handed to until it
 * closes, so conn.c and below see one proxy_t and one thread.
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include "../mask/mask.h"
#include "conn.h"
#include "base/defaults.h"
#include "intercept.h"
#include "log.h"
#include "resolver.h"
#include "zone.h"

/* A policy and the number of holders: the proxy (while current) and every
 * connection that decided with it. */
struct proxy_policy {
	policy_t *p;          /* the policy (owned) */
	atomic_uint refs;     /* holders (on any loop) */
};

/* A connection accepted by loop 0 for another loop. */
struct handoff {
	struct handoff *next;
	int fd;
	socklen_t len;
	struct sockaddr_storage sa;
};

struct proxy {
	/* --- this loop --- */
	struct proxy *main;             /* loop 0 (itself for loop 0) */
	unsigned index;                 /* 0 for loop 0 */
	struct event_base *base;        /* the loop */
	struct evdns_base *dns;         /* resolver (never blocks the loop) */
	localaddr_t *local;             /* this machine's own addresses, kept current */
	struct evconnlistener *lis;     /* the listener (bound or adopted) */
	struct event *sig_int, *sig_term, *sig_hup; /* signal events */
	struct event *accept_pause;     /* re-enables the listener after EMFILE */
	struct event *settle;           /* returns freed heap pages once accepting settles */
	bool churned;                   /* an accept, close or TLS handshake end since the last trim */
	int64_t last_churn_us;          /* the last of them (mono_us(): a wall-clock step moves no trim) */
	int64_t last_trim_us;           /* the last trim after churn (mono_us()) */
	struct event *bufs_tick;        /* busy connections' record buffers: kept or released */
	bool bufs_armed;                /* bufs_tick is pending */
	bool bufs_freed;                /* a busy connection freed its buffers since the last trim it asked for */
	struct conn *conns;             /* registry of this loop's live connections */
	int inbox_fd;                   /* eventfd: handoffs or a stop request wait; -1: none */
	struct event *inbox;            /* reads inbox_fd */
	pthread_mutex_t q_lock;         /* guards q_head, q_tail */
	struct handoff *q_head, *q_tail; /* handed-off connections, oldest first */
	atomic_bool stop;               /* stop at the next inbox wake-up */
	atomic_bool audit_down;         /* main: the last audit write failed (proxy_audit_down()) */
	_Atomic int64_t deny_win;       /* main: the second (monotonic) deny_count is for */
	atomic_uint deny_count;         /* main: refusal records in it (PROXY_DENY_RECORDS_PER_S) */
	_Atomic uint64_t deny_unrecorded; /* main: refusals beyond that, not yet summed up */
	pthread_t thread;               /* workers: the thread running the loop */
	bool started;                   /* workers: thread is running (to join) */
	int rc;                         /* workers: 0, or -1 when the loop failed */

	/* --- shared by every loop, held by loop 0 (unused in workers) --- */
	pthread_mutex_t pol_lock;       /* guards cur against a concurrent reload */
	proxy_policy_t *cur;            /* current policy (our reference) */
	char *policy_path;              /* re-read on SIGHUP; NULL: embedded */
	proxy_bind_fn *bind;            /* applied to a re-read policy, or NULL */
	audit_t *audit;                 /* audit log or NULL */
	char *session;                  /* session id */
	atomic_uint tunnels;            /* tunnel slots in use, on every loop */
	atomic_uint waiting;            /* client connections holding no slot, on every loop */
	atomic_uint body_inj_open;      /* requests open upstream whose body got a real value, every loop */
	atomic_llong body_inj_end_us;   /* when the last of them ended (mono_us()) */
	tls_session_t *tls;             /* session CA + upstream context, or NULL */
	mask_table_t *masks;            /* credential table, or NULL */
	proxy_observer_fn observer;     /* audit record observer, or NULL */
	void *observer_arg;
	proxy_signal_fn sig_hook;       /* signal hook, or NULL */
	void *sig_hook_arg;
	resolver_t *resolver;           /* the in-sandbox resolver, or NULL */
	intercept_t *icpt[2];           /* interception listeners (IPv4, IPv6), or NULL */
	struct proxy **workers;         /* loops 1 .. nloops-1 */
	unsigned busy_poll_us;          /* every loop polls this long after a wake-up (0: sleeps at once) */
	unsigned nloops;                /* loops, loop 0 included */
	unsigned next;                  /* the loop the next connection goes to */
	bool running;                   /* proxy_start() done: the workers run */
};

static proxy_policy_t *holder_new(policy_t *p)
{
	proxy_policy_t *pp = calloc(1, sizeof(*pp));

	if (pp == NULL)
		return NULL;
	pp->p = p;
	atomic_init(&pp->refs, 1);
	return pp;
}

/* The lock makes reading cur and taking a reference one step: a reload
 * on loop 0 cannot drop the last reference in between. */
proxy_policy_t *proxy_policy_get(proxy_t *px)
{
	proxy_t *m = px->main;
	proxy_policy_t *pp;

	(void)pthread_mutex_lock(&m->pol_lock);
	pp = m->cur;
	atomic_fetch_add_explicit(&pp->refs, 1, memory_order_relaxed);
	(void)pthread_mutex_unlock(&m->pol_lock);
	return pp;
}

void proxy_policy_put(proxy_policy_t *pp)
{
	if (pp == NULL || atomic_fetch_sub_explicit(&pp->refs, 1, memory_order_acq_rel) > 1)
		return;
	policy_free(pp->p);
	free(pp);
}

const policy_t *proxy_policy(const proxy_policy_t *pp)
{
	return pp->p;
}

struct event_base *proxy_base(proxy_t *px)
{
	return px->base;
}

struct evdns_base *proxy_dns(proxy_t *px)
{
	return px->dns;
}

localaddr_t *proxy_local(proxy_t *px)
{
	return px->local;
}

audit_t *proxy_audit(proxy_t *px)
{
	return px->main->audit;
}

void proxy_set_tls(proxy_t *px, tls_session_t *tls)
{
	tls_session_free(px->tls);
	px->tls = tls;
}

tls_session_t *proxy_tls(proxy_t *px)
{
	return px->main->tls;
}

/* A count of the process (every loop adds to loop 0's): one more if it
 * stays at most max. */
static bool count_acquire(atomic_uint *t, unsigned max)
{
	unsigned n = atomic_load_explicit(t, memory_order_relaxed);

	do {
		if (n >= max)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(t, &n, n + 1, memory_order_relaxed,
							memory_order_relaxed));
	return true;
}

static void count_release(atomic_uint *t)
{
	unsigned n = atomic_load_explicit(t, memory_order_relaxed);

	while (n > 0 && !atomic_compare_exchange_weak_explicit(t, &n, n - 1, memory_order_relaxed,
							       memory_order_relaxed))
		;
}

/* One count for every loop, so maxTunnels stays a limit of the process. */
bool proxy_tunnel_acquire(proxy_t *px, unsigned max)
{
	return count_acquire(&px->main->tunnels, max);
}

void proxy_tunnel_release(proxy_t *px)
{
	count_release(&px->main->tunnels);
}

static int64_t mono_us(void);

void proxy_body_injected_open(proxy_t *px)
{
	atomic_fetch_add(&px->main->body_inj_open, 1);
}

/* The end time is stored before the count goes down, and read after the
 * count (sequentially consistent): a loop that sees the count at 0 sees
 * the end of the last one, so the grace is never skipped. */
void proxy_body_injected_done(proxy_t *px)
{
	unsigned n = atomic_load(&px->main->body_inj_open);

	atomic_store(&px->main->body_inj_end_us, mono_us());
	while (n > 0 && !atomic_compare_exchange_weak(&px->main->body_inj_open, &n, n - 1))
		;
}

bool proxy_body_injected_lately(proxy_t *px)
{
	long long end;

	if (atomic_load(&px->main->body_inj_open) > 0)
		return true;
	end = atomic_load(&px->main->body_inj_end_us);
	return end != 0 && mono_us() - end < (int64_t)PASSAVANT_BODY_INJECTED_GRACE_MS * 1000;
}

bool proxy_waiting_acquire(proxy_t *px, unsigned max)
{
	return count_acquire(&px->main->waiting, max);
}

void proxy_waiting_release(proxy_t *px)
{
	count_release(&px->main->waiting);
}

struct conn **proxy_conn_list(proxy_t *px)
{
	return &px->conns;
}

/* Wakes loop l's inbox (handoffs or a stop request). Any thread. */
static int inbox_wake(proxy_t *l)
{
	uint64_t one = 1;

	if (write(l->inbox_fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
		return 0;
	log_warn("cannot wake event loop %u", l->index);
	return -1;
}

void proxy_stop(proxy_t *px)
{
	/* Loop 0 stops on its own thread; from a worker's, it is asked to. */
	if (px == px->main) {
		(void)event_base_loopbreak(px->base);
		return;
	}
	atomic_store(&px->main->stop, true);
	(void)inbox_wake(px->main);
}

void proxy_set_binder(proxy_t *px, proxy_bind_fn *fn)
{
	px->bind = fn;
}

int proxy_reload(proxy_t *px)
{
	proxy_policy_t *pp, *old;
	unsigned nerrors = 0;
	policy_t *p;

	px = px->main;
	if (px->policy_path == NULL) {
		log_info("SIGHUP: the embedded default policy has nothing to re-read");
		return 0;
	}
	p = policy_load_file(px->policy_path, stderr, &nerrors);
	if (p != NULL && px->bind != NULL && (nerrors = px->bind(p)) != 0) {
		policy_free(p);
		p = NULL;
	}
	if (p == NULL) {
		log_warnx("SIGHUP: %s: %u error%s; keeping the previous policy", px->policy_path, nerrors,
			  nerrors == 1 ? "" : "s");
		return -1;
	}
	pp = holder_new(p);
	if (pp == NULL) {
		log_warn("SIGHUP: keeping the previous policy");
		policy_free(p);
		return -1;
	}
	/* New decisions on every loop use pp from here; connections
	 * holding the old policy keep it alive until they close. */
	(void)pthread_mutex_lock(&px->pol_lock);
	old = px->cur;
	px->cur = pp;
	(void)pthread_mutex_unlock(&px->pol_lock);
	proxy_policy_put(old);
	log_info("SIGHUP: reloaded the network policy from %s", px->policy_path);
	/* SPEC §2: only the network part is re-read. The credential table
	 * (values, sentinels, injectHosts, injectIn) stays as it was loaded:
	 * say so, since an operator narrowing injectHosts expects it to apply. */
	if (px->masks != NULL && mask_table_value_count(px->masks) > 0)
		log_warnx("SIGHUP: credentials are read only at start; a change to the credentials "
			  "section (injectHosts, injectIn, allowPlaintextInject) applies after a restart");
	/* The session CA's name constraints are signed into it (tls.c): a
	 * domain this reload allows anew gets no leaf, and its terminated
	 * tunnels are closed at the client's handshake (docs/tls.md). */
	if (px->tls != NULL)
		log_warnx("SIGHUP: the session CA's name constraints stay as made at start; a domain "
			  "added to allowedDomains is reached through terminated TLS only after a restart");
	return 0;
}

void proxy_set_masks(proxy_t *px, mask_table_t *masks)
{
	mask_table_free(px->masks);
	px->masks = masks;
}

mask_table_t *proxy_masks(proxy_t *px)
{
	return px->main->masks;
}

bool proxy_masking(proxy_t *px)
{
	return px->main->masks != NULL && mask_table_value_count(px->main->masks) > 0;
}

void proxy_set_observer(proxy_t *px, proxy_observer_fn fn, void *arg)
{
	px->observer = fn;
	px->observer_arg = arg;
}

void proxy_set_signal_hook(proxy_t *px, proxy_signal_fn fn, void *arg)
{
	px->sig_hook = fn;
	px->sig_hook_arg = arg;
}

/*
 * Refusal records written one by one per second at most; beyond, one
 * record sums up the rest when a later second begins (or the proxy
 * stops). Nothing of a refused request left the machine, and a sandbox
 * that sends refused requests in a loop must not fill the audit's
 * filesystem (round 5 of the attack: 60 KB targets, 260 MB/s). A
 * refusal's target is recorded up to PROXY_DENY_TARGET_KEEP bytes when
 * it is longer than PROXY_DENY_TARGET_MAX.
 */
#define PROXY_DENY_RECORDS_PER_S 200
#define PROXY_DENY_TARGET_MAX 1024
#define PROXY_DENY_TARGET_KEEP 960

static int64_t mono_us(void);

static void record_out(proxy_t *m, const struct audit_rec *r);

/* The record of the refusals the last full second left unrecorded. */
static void deny_sum(proxy_t *m)
{
	uint64_t n = atomic_exchange(&m->deny_unrecorded, 0);
	struct audit_rec rec;
	char why[200];

	if (n == 0)
		return;
	audit_sum_record(&rec, why, sizeof(why), "refusals", "refusals", n, PROXY_DENY_RECORDS_PER_S);
	record_out(m, &rec);
}

void proxy_flush_refusals(proxy_t *px)
{
	if (px->main->resolver != NULL)
		resolver_flush(px->main->resolver);
	deny_sum(px->main);
}

bool proxy_audit_down(proxy_t *px)
{
	return atomic_load(&px->main->audit_down);
}

/* proxy_real_in() and proxy_real_in_name(): the search as it is, or
 * with case ignored too. */
static const char *real_in(proxy_t *px, const char *text, size_t len, bool any_case)
{
	mask_table_t *t = px->main->masks;
	long c;

	if (t == NULL || mask_table_value_count(t) == 0 || len == 0)
		return NULL;
	errno = 0;
	c = any_case ? mask_table_find_real_name(t, text, len) : mask_table_find_real(t, text, len);
	if (c < 0)
		return errno == ENOMEM ? "a credential (out of memory while searching)" : NULL;
	return mask_table_cred_name(t, (size_t)c);
}

const char *proxy_real_in(proxy_t *px, const char *text, size_t len)
{
	return real_in(px, text, len, false);
}

const char *proxy_real_in_name(proxy_t *px, const char *name, size_t len)
{
	return real_in(px, name, len, true);
}

#define RECORD_REDACTED "[redacted: it carries a real value]"

/* The credential whose real value field (len bytes) holds: as the remask
 * set knows it, and with its case changed too when any_case. */
static const char *field_real(proxy_t *px, const char *field, size_t len, bool any_case)
{
	return field != NULL ? real_in(px, field, len, any_case) : NULL;
}

/* r with each field that holds a real value replaced, into *copy (which
 * reason_buf backs); r itself when none does. A refusal's fields are
 * also searched with case ignored: a reason quotes names (a Host, a
 * server name) that a resolver or server takes in any case, and
 * refusals are few. */
static const struct audit_rec *record_scrub(proxy_t *px, const struct audit_rec *r, struct audit_rec *copy,
					    char *reason_buf, size_t reason_len)
{
	const char *cred = NULL, *c;
	const char *const parts[] = {r->host, r->method, r->rule, r->reason};
	char joined[2048];
	size_t n = 0;
	bool any = false, deny = r->decision != NULL && strcmp(r->decision, "deny") == 0;

	if (px->main->masks == NULL || mask_table_value_count(px->main->masks) == 0)
		return r;
	/* One search over the fields joined by NULs (no real value holds
	 * one, so no match spans two) when they fit; each field is looked
	 * at only when that finds something. Every request makes a record:
	 * one search, not five. */
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && n < sizeof(joined); i++) {
		size_t l = parts[i] != NULL ? strlen(parts[i]) : 0;

		if (n + l + 1 > sizeof(joined)) {
			n = sizeof(joined);
			break;
		}
		memcpy(joined + n, parts[i] != NULL ? parts[i] : "", l);
		n += l;
		joined[n++] = '\0';
	}
	if (n < sizeof(joined) && r->target != NULL && n + r->target_len <= sizeof(joined)) {
		memcpy(joined + n, r->target, r->target_len);
		n += r->target_len;
	} else if (r->target != NULL) {
		n = sizeof(joined);
	}
	if (n < sizeof(joined) && field_real(px, joined, n, deny) == NULL &&
	    (r->host == NULL || proxy_real_in_name(px, r->host, strlen(r->host)) == NULL)) {
		explicit_bzero(joined, n);
		return r;
	}
	explicit_bzero(joined, sizeof(joined));
	*copy = *r;
#define SCRUB(field, any_case)                                                                        \
	if ((c = field_real(px, copy->field, copy->field != NULL ? strlen(copy->field) : 0, any_case)) != NULL) { \
		copy->field = RECORD_REDACTED;                                                        \
		cred = c;                                                                             \
		any = true;                                                                           \
	}
	SCRUB(host, true)
	SCRUB(method, deny)
	SCRUB(rule, deny)
#undef SCRUB
	if ((c = field_real(px, copy->target, copy->target_len, deny)) != NULL) {
		copy->target = "/" RECORD_REDACTED;
		copy->target_len = strlen(copy->target);
		cred = c;
		any = true;
	}
	if ((c = field_real(px, copy->reason, copy->reason != NULL ? strlen(copy->reason) : 0, deny)) != NULL) {
		cred = c;
		any = true;
	}
	if (!any)
		return r;
	/* The reason may quote any of them: replaced whole, naming what
	 * was found (a credential's name is not secret). */
	if (copy->reason != NULL) {
		(void)snprintf(reason_buf, reason_len,
			       "passavant: %s: what this line would quote carries a real value of %s; not written",
			       copy->kind != NULL ? copy->kind : "connection", cred);
		copy->reason = reason_buf;
	}
	return copy;
}

void proxy_record(proxy_t *px, const struct audit_rec *r)
{
	proxy_t *m = px->main;
	struct audit_rec cut, clean;
	char tbuf[PROXY_DENY_TARGET_KEEP + 64], rbuf[256];

	r = record_scrub(px, r, &clean, rbuf, sizeof(rbuf));
	/* A sum of refusals (the resolver's, host null) is never held
	 * back: it stands for many. */
	if (r->decision != NULL && strcmp(r->decision, "deny") == 0 && !(r->host == NULL && r->kind != NULL &&
									 strcmp(r->kind, "dns") == 0)) {
		int64_t sec = mono_us() / 1000000, w = atomic_load(&m->deny_win);

		/* The window only moves forward: a loop that read the clock
		 * before another moved it on must not move it back. */
		while (w < sec) {
			if (atomic_compare_exchange_weak(&m->deny_win, &w, sec)) {
				atomic_store(&m->deny_count, 0);
				deny_sum(m);
				break;
			}
		}
		if (atomic_fetch_add(&m->deny_count, 1) >= PROXY_DENY_RECORDS_PER_S) {
			atomic_fetch_add(&m->deny_unrecorded, 1);
			return;
		}
		if (r->target != NULL && r->target_len > PROXY_DENY_TARGET_MAX) {
			int n;

			cut = *r;
			memcpy(tbuf, r->target, PROXY_DENY_TARGET_KEEP);
			n = snprintf(tbuf + PROXY_DENY_TARGET_KEEP, sizeof(tbuf) - PROXY_DENY_TARGET_KEEP,
				     "...[%zu more bytes not recorded]", r->target_len - PROXY_DENY_TARGET_KEEP);
			cut.target = tbuf;
			cut.target_len = PROXY_DENY_TARGET_KEEP + (size_t)(n > 0 ? n : 0);
			r = &cut;
		}
	}
	record_out(m, r);
}

void proxy_record_line(proxy_t *px, const char *host, uint16_t port, int status, const char *rule,
		       const char *line)
{
	struct audit_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = "connect";
	r.host = host;
	r.port = port;
	r.status = status;
	r.decision = "deny";
	r.reason = line;
	r.rule = rule;
	r.bytes_up = -1;
	r.bytes_down = -1;
	r.ms = 0;
	r.tls = "none";
	r.reason_is_line = true;
	log_info("%s", line);
	proxy_record(px, &r);
}

static void record_out(proxy_t *m, const struct audit_rec *r)
{
	/* audit_write() is safe from any loop (one locked write per line);
	 * an observer exists only with one loop (proxy_run()). A record that
	 * cannot be written closes the proxy to new requests and tunnels
	 * (proxy_audit_down()) until one can: said once each way. */
	if (m->audit != NULL) {
		if (audit_write(m->audit, r) < 0) {
			int e = errno;

			if (!atomic_exchange(&m->audit_down, true))
				log_warnx("cannot write to the audit file: %s; new requests and tunnels are "
					  "refused (503) until a record can be written again (free space "
					  "where --audit points)",
					  strerror(e));
		} else if (atomic_exchange(&m->audit_down, false)) {
			log_warnx("the audit file can be written again: requests and tunnels are served again");
		}
	}
	if (m->observer != NULL)
		m->observer(m->observer_arg, r);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	proxy_t *px = arg;

	(void)what;
	if (px->sig_hook != NULL && px->sig_hook(px->sig_hook_arg, (int)sig))
		return;
	if (sig == SIGHUP) {
		(void)proxy_reload(px);
		return;
	}
	log_info("signal %d: stopping", (int)sig);
	proxy_stop(px);
}

/*
 * Heap pages freed by TLS handshakes. A burst of connections leaves holes
 * between the long-lived allocations of the tunnels it opened (handshake
 * buffers, certificate parsing, key shares); glibc gives back only the top
 * of the heap, so the holes stay resident. When accepts, closes and ends
 * of TLS handshakes (proxy_note_churn()) pause for PROXY_TRIM_MS,
 * malloc_trim() returns their whole pages; while they go on without such
 * a pause, every PROXY_TRIM_EVERY_MS (each trim hands pages back that the
 * next handshakes take again, one page fault each: trimming every
 * PROXY_TRIM_MS under a steady stream of new tunnels cost a madvise() and
 * two page faults per tunnel); once more PROXY_SETTLE_MS after the last
 * of them, for what the first requests of the new tunnels freed
 * (measured: about 25 KiB per open terminated tunnel after 1000 opened at
 * once, docs/tls.md). Armed by those events only: an idle proxy wakes up
 * for it at most four times (two trims) after its last connection came
 * or went.
 */
#define PROXY_TRIM_MS 100
#define PROXY_TRIM_EVERY_MS 1000
#define PROXY_SETTLE_MS 1000

/* Microseconds of the monotonic clock. */
static int64_t mono_us(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_MONOTONIC, &t) < 0)
		return 0;
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void trim_heap(void);

static void settle_cb(evutil_socket_t fd, short what, void *arg)
{
	proxy_t *px = arg;
	struct timeval left, trim = {0, PROXY_TRIM_MS * 1000};
	struct zone_stats zs;
	int64_t since;

	(void)fd;
	(void)what;
	if (px->churned) {
		int64_t now = mono_us(), quiet = now - px->last_churn_us;

		if (quiet >= 0 && quiet < (int64_t)PROXY_TRIM_MS * 1000 &&
		    now - px->last_trim_us < (int64_t)PROXY_TRIM_EVERY_MS * 1000) {
			/* Still churning: trim at the next pause, or once
			 * PROXY_TRIM_EVERY_MS has passed since the last trim. */
			trim.tv_usec = (suseconds_t)((int64_t)PROXY_TRIM_MS * 1000 - quiet);
			(void)event_add(px->settle, &trim);
			return;
		}
		/* Churn, then a pause (or a long stream): trim, and look
		 * again soon. */
		px->churned = false;
		px->last_trim_us = now;
		trim_heap();
		zone_process_trim();
		(void)event_add(px->settle, &trim);
		return;
	}
	since = mono_us() - px->last_churn_us;
	if (since >= 0 && since < (int64_t)PROXY_SETTLE_MS * 1000) {
		/* Quiet since the last trim: the settling one comes
		 * PROXY_SETTLE_MS after the last churn. */
		since = (int64_t)PROXY_SETTLE_MS * 1000 - since;
		left.tv_sec = (time_t)(since / 1000000);
		left.tv_usec = (suseconds_t)(since % 1000000);
		(void)event_add(px->settle, &left);
		return;
	}
	trim_heap();
	zone_process_trim();
	zone_process_stats(&zs);
	log_debug("heap settled: the upstream zone holds %zu objects in %zu pages (%zu ever used)", zs.objects,
		  zs.pages, zs.touched);
}

/* Queues a connection loop 0 accepted for loop l and wakes l. On failure
 * the connection is closed (it cannot be served). */
static void hand_off(proxy_t *l, int fd, const struct sockaddr *sa, int len)
{
	struct handoff *h = malloc(sizeof(*h));

	if (h == NULL || len < 0 || (size_t)len > sizeof(h->sa)) {
		log_warn("cannot hand a connection to event loop %u; closing it", l->index);
		free(h);
		(void)close(fd);
		return;
	}
	h->next = NULL;
	h->fd = fd;
	h->len = (socklen_t)len;
	memcpy(&h->sa, sa, (size_t)len);
	(void)pthread_mutex_lock(&l->q_lock);
	if (l->q_tail != NULL)
		l->q_tail->next = h;
	else
		l->q_head = h;
	l->q_tail = h;
	(void)pthread_mutex_unlock(&l->q_lock);
	/* A failed wake leaves the connection queued; the next one's wake
	 * (or the stop) takes it. */
	(void)inbox_wake(l);
}

static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int len,
		      void *arg)
{
	proxy_t *px = arg;
	unsigned i = px->next;

	(void)lis;
	if (px->nloops > 1) {
		px->next = (i + 1) % px->nloops;
		if (i != 0) {
			hand_off(px->workers[i - 1], fd, sa, len);
			return;
		}
	}
	proxy_note_churn(px);
	(void)conn_new(px, fd, sa, len, true);
}

/* A loop's inbox: takes the queued connections, then stops if asked. */
static void inbox_cb(evutil_socket_t fd, short what, void *arg)
{
	proxy_t *l = arg;
	struct handoff *h, *next;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("event loop %u: reading its wake-up counter", l->index);
	(void)pthread_mutex_lock(&l->q_lock);
	h = l->q_head;
	l->q_head = l->q_tail = NULL;
	(void)pthread_mutex_unlock(&l->q_lock);
	for (; h != NULL; h = next) {
		next = h->next;
		proxy_note_churn(l);
		(void)conn_new(l, h->fd, (struct sockaddr *)&h->sa, (int)h->len, true);
		free(h);
	}
	if (atomic_load(&l->stop))
		(void)event_base_loopbreak(l->base);
}

void proxy_note_churn(proxy_t *px)
{
	struct timeval tv = {PROXY_TRIM_MS / 1000, (PROXY_TRIM_MS % 1000) * 1000};

	if (px->settle == NULL)
		return;
	px->churned = true;
	px->last_churn_us = mono_us();
	if (!evtimer_pending(px->settle, NULL)) {
		/* Churn after a settled heap: the first trim comes at its
		 * first pause, or PROXY_TRIM_EVERY_MS from now. */
		px->last_trim_us = px->last_churn_us;
		(void)event_add(px->settle, &tv);
	}
}

/*
 * Every PROXY_BUFS_TICK_MS while TLS connections are driven: each
 * connection is found busy (it keeps its record buffers) or quiet
 * (sockio_bufs_tick()). Buffers freed by connections that were busy go
 * back to the system as churn does, once no connection of the loop is
 * busy any more: trimming while others still run would hand back pages
 * their next requests fault in again (round 23 of the attack). Armed by
 * drives only: an idle proxy does not wake for it.
 */
#define PROXY_BUFS_TICK_MS 1000

static void bufs_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	proxy_t *px = arg;
	bool again = false, freed = false;

	(void)fd;
	(void)what;
	px->bufs_armed = false;
	conn_bufs_tick(px->conns, &again, &freed);
	if (again)
		proxy_bufs_arm(px);
	px->bufs_freed |= freed;
	if (px->bufs_freed && !again) {
		/* The loop's busy spell is over: what it freed goes back. */
		px->bufs_freed = false;
		proxy_note_churn(px);
	}
}

void proxy_bufs_arm(proxy_t *px)
{
	struct timeval tv = {PROXY_BUFS_TICK_MS / 1000, (PROXY_BUFS_TICK_MS % 1000) * 1000};

	if (px->bufs_armed || px->bufs_tick == NULL)
		return;
	px->bufs_armed = event_add(px->bufs_tick, &tv) == 0;
}

static void accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	proxy_t *px = arg;

	(void)fd;
	(void)what;
	if (px->lis != NULL && evconnlistener_enable(px->lis) < 0)
		log_warnx("cannot re-enable the listener");
}

/* Out of descriptors: accepting again at once would spin on the same
 * error, so pause the listener for a moment (relayd does the same). */
static void accept_error_cb(struct evconnlistener *lis, void *arg)
{
	struct timeval tv = {0, PASSAVANT_ACCEPT_PAUSE_MS * 1000};
	proxy_t *px = arg;
	int err = EVUTIL_SOCKET_ERROR();

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		log_warnx("accept: %s; pausing the listener for %d ms", strerror(err),
			  PASSAVANT_ACCEPT_PAUSE_MS);
		(void)evconnlistener_disable(lis);
		if (event_add(px->accept_pause, &tv) < 0)
			(void)evconnlistener_enable(lis);
		return;
	}
	log_warnx("accept: %s", strerror(err));
}

/*
 * The heap under steady traffic. Each request allocates and frees a few
 * large buffers: OpenSSL's record buffers (released when empty,
 * SSL_MODE_RELEASE_BUFFERS, so that idle tunnels hold none), the write
 * BIO's batch (wbio.c), the input chains an SSL read reserves. With
 * glibc's defaults a free that leaves more than 128 KiB at the top of the
 * heap returns it with brk(), and the next request takes it back with
 * brk() and page faults: about 5,000 brk per 10,000 kept-alive HTTPS
 * requests at 32 connections, a sixth of the proxy's CPU (issue 16). With
 * these settings the freed top stays in the allocator: about 0.0015 brk
 * and 0.03 page faults per request remain, from the heap's slow growth
 * and the trims below (docs/architecture.md, "Request cost"). The
 * threshold: at 32 connections the top moves by more than 1 MiB (still
 * 6,700 brk per 10,000 requests at 1 MiB), by less than 4 MiB; 16 MiB
 * leaves room for more connections. Idle memory still goes
 * back: malloc_trim() after churn (settle_cb()) ignores the threshold.
 * Setting it also stops glibc's sliding mmap threshold, so that one is
 * set too: only allocations of a MiB or more (none on the data path) get
 * their own mapping. M_TOP_PAD stays at its default: 1 MiB cost 1 KiB
 * per idle tunnel (1,000 open) and saved nothing per request.
 * Best effort: a C library without them (or ASan's, which ignores
 * mallopt()) works as before, only slower; the reason is logged.
 */
#define PROXY_HEAP_TRIM_BYTES (16 << 20)
#define PROXY_HEAP_MMAP_BYTES (1 << 20)

static void tune_heap(void)
{
	/* mallopt() returns 1 on success, 0 on error. */
	if (mallopt(M_TRIM_THRESHOLD, PROXY_HEAP_TRIM_BYTES) != 1 ||
	    mallopt(M_MMAP_THRESHOLD, PROXY_HEAP_MMAP_BYTES) != 1)
		log_debug("mallopt() refused the heap settings: the heap grows and shrinks "
			  "with each request (slower, same behaviour)");
}

/*
 * Returns the calling thread's free heap pages. malloc_trim() gives back
 * the free pages of every arena, and the top of the main one, but not the
 * top of a thread's own arena: glibc shrinks that only when a large free
 * finds the top above M_TRIM_THRESHOLD (16 MiB here). A worker loop's
 * peak (busy tunnels' record buffers, a burst of handshakes) then stayed
 * resident: 48 busy tunnels on 2 loops left 1 MiB behind. So the
 * threshold is lowered to glibc's default for one large free of the
 * thread's own: its arena's top is trimmed down to it. Under a lock: two
 * loops trimming at once must not restore each other's threshold early.
 * settle_cb() runs on the loop's own thread.
 */
#define PROXY_TOP_TRIM_BYTES (128 << 10)
#define PROXY_TOP_POKE_BYTES (128 << 10)

static void trim_heap(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	void *volatile poke;

	(void)malloc_trim(0);
	if (pthread_mutex_lock(&lock) != 0)
		return;
	if (mallopt(M_TRIM_THRESHOLD, PROXY_TOP_TRIM_BYTES) == 1) {
		poke = malloc(PROXY_TOP_POKE_BYTES);
		free(poke);
		(void)mallopt(M_TRIM_THRESHOLD, PROXY_HEAP_TRIM_BYTES);
	}
	(void)pthread_mutex_unlock(&lock);
}

/*
 * The loop, with epoll's change list: libevent then applies the changes of
 * one iteration in a batch when it next waits, and an add undone in the
 * same iteration costs no system call. Every TLS write adds and then
 * removes its write event (bufferevent_openssl arms EPOLLOUT when bytes
 * are queued and disarms it once SSL_write took them): two epoll_ctl per
 * response and side without it. libevent warns that the change list
 * misbehaves with fds that share a file description (dup()); the proxy
 * never dups a socket it registers. Without the base's lock: only the
 * loop's own thread touches its base (other threads hand connections over
 * and ask it to stop through its inbox, an eventfd the loop reads), and
 * with N > 1 loops the lock cost about 1,500 instructions per kept-alive
 * request (docs/architecture.md "Loops"). Falls back to a default base.
 */
static struct event_base *new_base(void)
{
	struct event_config *cfg = event_config_new();
	struct event_base *b = NULL;

	if (cfg != NULL && event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST) == 0 &&
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK) == 0)
		b = event_base_new_with_config(cfg);
	if (cfg != NULL)
		event_config_free(cfg);
	return b != NULL ? b : event_base_new();
}

/* pthread_once() body: evthread_use_pthreads() for the process. */
static int threads_ok_result = -1;

static void threads_init(void)
{
	threads_ok_result = evthread_use_pthreads() == 0 ? 0 : -1;
}

static void loop_fini(proxy_t *l);
static int stop_workers(proxy_t *px);

/* Frees the worker loops of loop 0 (their threads already joined). */
static void free_workers(proxy_t *px)
{
	if (px->workers == NULL)
		return;
	for (unsigned i = 0; i + 1 < px->nloops; i++) {
		if (px->workers[i] == NULL)
			continue;
		loop_fini(px->workers[i]);
		free(px->workers[i]);
	}
	free(px->workers);
	px->workers = NULL;
	px->nloops = 1;
}

/*
 * Sets up the per-loop part of l: event base, resolver, address watcher,
 * heap-trim and accept-pause timers, the inbox lock. Returns 0, or -1
 * after logging why.
 */
static int loop_init(proxy_t *l)
{
	char err[512];

	/* The loop's resolver, timers and base outlive every connection. */
	(void)zone_select(false);
	l->inbox_fd = -1;
	if (pthread_mutex_init(&l->q_lock, NULL) != 0) {
		log_warnx("cannot create the lock of event loop %u", l->index);
		return -1;
	}
	l->base = new_base();
	if (l->base == NULL) {
		log_warnx("cannot create the event base");
		return -1;
	}
	/* Reads /etc/resolv.conf and /etc/hosts; DISABLE_WHEN_INACTIVE lets
	 * the loop end when nothing is pending. */
	l->dns = evdns_base_new(l->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
						 EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (l->dns == NULL) {
		/* No resolv.conf: still usable for /etc/hosts and literals. */
		l->dns = evdns_base_new(l->base, EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		if (l->dns == NULL || evdns_base_load_hosts(l->dns, NULL) < 0) {
			log_warnx("cannot create the resolver");
			return -1;
		}
	}
	/* Query exactly the name the policy allowed: a resolv.conf "search"
	 * list would also send "name.corp.example" and the like to the
	 * resolver, names no rule was asked about. */
	evdns_base_search_clear(l->dns);
	/* The guard refuses this machine's own addresses like loopback; the
	 * watcher keeps them current as interfaces come and go (one per
	 * loop: its netlink socket is read from the loop's own thread). */
	l->local = localaddr_new(l->base, err, sizeof(err));
	if (l->local == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	l->accept_pause = evtimer_new(l->base, accept_resume_cb, l);
	l->settle = evtimer_new(l->base, settle_cb, l);
	l->bufs_tick = evtimer_new(l->base, bufs_tick_cb, l);
	if (l->accept_pause == NULL || l->settle == NULL || l->bufs_tick == NULL) {
		log_warnx("cannot create the timers of event loop %u", l->index);
		return -1;
	}
	return 0;
}

/* Gives loop l its inbox: an eventfd that other threads write to. */
static int loop_inbox(proxy_t *l)
{
	l->inbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->inbox_fd < 0) {
		log_warn("event loop %u: eventfd", l->index);
		return -1;
	}
	l->inbox = event_new(l->base, l->inbox_fd, EV_READ | EV_PERSIST, inbox_cb, l);
	if (l->inbox == NULL || event_add(l->inbox, NULL) < 0) {
		log_warnx("event loop %u: cannot watch its inbox", l->index);
		return -1;
	}
	return 0;
}

/* Frees what loop_init() and loop_inbox() made, and l's connections. */
static void loop_fini(proxy_t *l)
{
	struct handoff *h, *next;

	conn_close_all(&l->conns);
	for (h = l->q_head; h != NULL; h = next) {
		next = h->next;
		(void)close(h->fd);
		free(h);
	}
	l->q_head = l->q_tail = NULL;
	if (l->inbox != NULL)
		event_free(l->inbox);
	if (l->inbox_fd >= 0)
		(void)close(l->inbox_fd);
	if (l->lis != NULL)
		evconnlistener_free(l->lis);
	if (l->accept_pause != NULL)
		event_free(l->accept_pause);
	if (l->settle != NULL)
		event_free(l->settle);
	if (l->bufs_tick != NULL)
		event_free(l->bufs_tick);
	/* Before the base: the resolver's server port has an event on it. */
	if (l->index == 0)
		resolver_free(l->resolver);
	if (l->dns != NULL)
		evdns_base_free(l->dns, 0);
	localaddr_free(l->local);
	if (l->base != NULL)
		event_base_free(l->base);
	(void)pthread_mutex_destroy(&l->q_lock);
}

proxy_t *proxy_new(policy_t *pol, const char *policy_path, audit_t *audit, const char *session)
{
	proxy_t *px = calloc(1, sizeof(*px));

	if (px == NULL) {
		log_warn("proxy");
		policy_free(pol);
		audit_free(audit);
		return NULL;
	}
	px->main = px;
	px->nloops = 1;
	px->audit = audit;
	if (pthread_mutex_init(&px->pol_lock, NULL) != 0) {
		log_warnx("cannot create the policy lock");
		policy_free(pol);
		audit_free(audit);
		free(px);
		return NULL;
	}
	px->cur = holder_new(pol);
	if (px->cur == NULL) {
		log_warn("proxy");
		policy_free(pol);
		goto fail;
	}
	px->session = strdup(session);
	px->policy_path = policy_path != NULL ? strdup(policy_path) : NULL;
	if (px->session == NULL || (policy_path != NULL && px->policy_path == NULL)) {
		log_warn("proxy");
		goto fail;
	}
	/* A peer that closes while we write must not kill the process. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		log_warn("signal(SIGPIPE)");
		goto fail;
	}
	tune_heap();
	if (loop_init(px) < 0)
		goto fail;
	px->sig_int = evsignal_new(px->base, SIGINT, signal_cb, px);
	px->sig_term = evsignal_new(px->base, SIGTERM, signal_cb, px);
	px->sig_hup = evsignal_new(px->base, SIGHUP, signal_cb, px);
	if (px->sig_int == NULL || px->sig_term == NULL || px->sig_hup == NULL ||
	    event_add(px->sig_int, NULL) < 0 || event_add(px->sig_term, NULL) < 0 ||
	    event_add(px->sig_hup, NULL) < 0) {
		log_warnx("cannot install the signal handlers");
		goto fail;
	}
	return px;
fail:
	proxy_free(px);
	return NULL;
}

unsigned proxy_loops_default(void)
{
	cpu_set_t set;
	int n;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	if (n < 1)
		return 1;
	return (unsigned)n < PROXY_LOOPS_DEFAULT_MAX ? (unsigned)n : PROXY_LOOPS_DEFAULT_MAX;
}

int proxy_set_loops(proxy_t *px, unsigned n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (px != px->main || px->nloops != 1 || px->workers != NULL) {
		log_warnx("the event loops of a proxy are set once, on the proxy, before it runs");
		return -1;
	}
	if (n < 1 || n > PROXY_LOOPS_MAX) {
		log_warnx("--loops: expected 1 to %u event loops, got %u", PROXY_LOOPS_MAX, n);
		return -1;
	}
	if (n == 1)
		return 0;
	/* libevent's own shared state (its random numbers for DNS ids, the
	 * signal pipe) takes locks only once threads are declared. The bases
	 * take none (new_base()): each is touched by its own thread only. */
	if (pthread_once(&once, threads_init) != 0 || threads_ok_result < 0) {
		log_warnx("cannot make libevent thread-safe (evthread_use_pthreads)");
		return -1;
	}
	px->workers = calloc(n - 1, sizeof(*px->workers));
	if (px->workers == NULL) {
		log_warn("event loops");
		return -1;
	}
	if (loop_inbox(px) < 0)
		goto fail;
	for (unsigned i = 1; i < n; i++) {
		proxy_t *l = calloc(1, sizeof(*l));

		if (l == NULL) {
			log_warn("event loop %u", i);
			goto fail;
		}
		l->main = px;
		l->index = i;
		px->workers[i - 1] = l;
		px->nloops = i + 1;
		if (loop_init(l) < 0 || loop_inbox(l) < 0)
			goto fail;
	}
	return 0;
fail:
	free_workers(px);
	return -1;
}

unsigned proxy_loops(const proxy_t *px)
{
	return px->main->nloops;
}

void proxy_free(proxy_t *px)
{
	if (px == NULL)
		return;
	/* Started but not run (or run stopped early): join the workers
	 * before anything they use goes. */
	if (px->running) {
		(void)stop_workers(px);
		px->running = false;
	}
	/* Every loop's connections first: they hold policy references and
	 * SSLs of the shared TLS session. */
	free_workers(px);
	conn_close_all(&px->conns);
	for (size_t i = 0; i < sizeof(px->icpt) / sizeof(px->icpt[0]); i++)
		intercept_free(px->icpt[i]);
	if (px->sig_int != NULL)
		event_free(px->sig_int);
	if (px->sig_term != NULL)
		event_free(px->sig_term);
	if (px->sig_hup != NULL)
		event_free(px->sig_hup);
	loop_fini(px);
	/* The tail of a flood of refusals (the resolver's last sum came in
	 * loop_fini()), before the audit goes. */
	deny_sum(px);
	proxy_policy_put(px->cur);
	(void)pthread_mutex_destroy(&px->pol_lock);
	/* After every conn: their SSLs hold their own context references. */
	tls_session_free(px->tls);
	mask_table_free(px->masks);
	audit_free(px->audit);
	free(px->policy_path);
	free(px->session);
	free(px);
}

/* Backlog: the kernel's maximum (SOMAXCONN caps it). */
#define PROXY_BACKLOG 4096

int proxy_listen(proxy_t *px, const char *host, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		len = sizeof(struct sockaddr_in6);
	} else {
		log_warnx("--listen: expected an IP address, got '%s'", host);
		return -1;
	}
	px->lis = evconnlistener_new_bind(px->base, accept_cb, px,
					  LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
					  PROXY_BACKLOG, (struct sockaddr *)&ss, (int)len);
	if (px->lis == NULL) {
		log_warn("cannot listen on %s:%u", host, (unsigned)port);
		return -1;
	}
	evconnlistener_set_error_cb(px->lis, accept_error_cb);
	return 0;
}

int proxy_adopt_listener(proxy_t *px, int fd)
{
	int accepting = 0;
	socklen_t len = sizeof(accepting);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0 || !accepting) {
		log_warnx("adopted descriptor %d is not a listening socket", fd);
		(void)close(fd);
		return -1;
	}
	if (evutil_make_socket_nonblocking(fd) < 0 || evutil_make_socket_closeonexec(fd) < 0) {
		log_warn("adopted listener");
		(void)close(fd);
		return -1;
	}
	/* Backlog 0: the socket is already listening; do not call listen(). */
	px->lis = evconnlistener_new(px->base, accept_cb, px, LEV_OPT_CLOSE_ON_FREE, 0, fd);
	if (px->lis == NULL) {
		log_warnx("cannot adopt listener %d", fd);
		(void)close(fd);
		return -1;
	}
	evconnlistener_set_error_cb(px->lis, accept_error_cb);
	return 0;
}

int proxy_adopt_intercept(proxy_t *px, int fd)
{
	size_t i;

	for (i = 0; i < sizeof(px->icpt) / sizeof(px->icpt[0]) && px->icpt[i] != NULL; i++)
		;
	if (i == sizeof(px->icpt) / sizeof(px->icpt[0])) {
		log_warnx("interception: already two listeners (IPv4 and IPv6); descriptor %d refused", fd);
		(void)close(fd);
		return -1;
	}
	px->icpt[i] = intercept_new(px, fd);
	return px->icpt[i] != NULL ? 0 : -1;
}

int proxy_local_addr(const proxy_t *px, char *host, size_t hostlen, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	const void *bits;

	if (px->lis == NULL ||
	    getsockname(evconnlistener_get_fd(px->lis), (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		bits = &((struct sockaddr_in *)&ss)->sin_addr;
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		bits = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		return -1;
	}
	return inet_ntop(ss.ss_family, bits, host, (socklen_t)hostlen) != NULL ? 0 : -1;
}

int proxy_set_busy_poll(proxy_t *px, unsigned us)
{
	if (px != px->main || px->running) {
		log_warnx("the busy poll of a proxy is set once, on the proxy, before it runs");
		return -1;
	}
	if (us > PROXY_BUSY_POLL_US_MAX) {
		log_warnx("--busy-poll-us: expected 0 to %u microseconds, got %u", PROXY_BUSY_POLL_US_MAX, us);
		return -1;
	}
	px->busy_poll_us = us;
	return 0;
}

/* Whether loop l was asked to end its run (loopbreak or loopexit). */
static bool loop_ended(proxy_t *l)
{
	return event_base_got_break(l->base) || event_base_got_exit(l->base);
}

/*
 * Runs loop l until it is asked to end, as event_base_dispatch() does;
 * with a busy poll (proxy_set_busy_poll()), each wake-up is followed by
 * non-blocking passes for busy_poll_us before the loop sleeps again.
 * Returns -1 when libevent failed, else 0.
 */
static int loop_run(proxy_t *l)
{
	unsigned us = l->main->busy_poll_us;
	int r;

	if (us == 0)
		return event_base_dispatch(l->base) < 0 ? -1 : 0;
	for (;;) {
		int64_t t0;

		r = event_base_loop(l->base, EVLOOP_ONCE);
		if (r != 0 || loop_ended(l))
			return r < 0 ? -1 : 0;
		t0 = mono_us();
		do {
			r = event_base_loop(l->base, EVLOOP_NONBLOCK);
			if (r != 0 || loop_ended(l))
				return r < 0 ? -1 : 0;
		} while (mono_us() - t0 < (int64_t)us);
	}
}

/* A worker's thread: runs its loop until loop 0 asks it to stop. */
static void *worker_main(void *arg)
{
	proxy_t *l = arg;

	if (loop_run(l) < 0 || !atomic_load(&l->stop)) {
		log_warnx("event loop %u ended unexpectedly; stopping the proxy", l->index);
		l->rc = -1;
		proxy_stop(l);
	}
	return NULL;
}

/* Stops and joins every started worker; returns -1 if one failed. */
static int stop_workers(proxy_t *px)
{
	int rc = 0, err;

	for (unsigned i = 0; i + 1 < px->nloops; i++) {
		proxy_t *l = px->workers[i];

		if (!l->started)
			continue;
		atomic_store(&l->stop, true);
		if (inbox_wake(l) < 0) {
			/* Without its wake-up the loop would never see the
			 * request: waiting for it would hang the process. */
			log_warnx("event loop %u cannot be told to stop; exiting without it", l->index);
			_exit(1);
		}
		err = pthread_join(l->thread, NULL);
		if (err != 0) {
			log_warnx("event loop %u: pthread_join: %s", l->index, strerror(err));
			rc = -1;
		}
		l->started = false;
		if (l->rc < 0)
			rc = -1;
	}
	return rc;
}

/* Starts a thread per worker loop, with every signal blocked there: only
 * loop 0's thread takes SIGINT, SIGTERM and SIGHUP. */
static int start_workers(proxy_t *px)
{
	sigset_t all, old;
	int err = 0;

	if (sigfillset(&all) < 0 || pthread_sigmask(SIG_BLOCK, &all, &old) != 0) {
		log_warnx("cannot block signals for the event loop threads");
		return -1;
	}
	for (unsigned i = 0; i + 1 < px->nloops && err == 0; i++) {
		proxy_t *l = px->workers[i];

		atomic_store(&l->stop, false);
		l->rc = 0;
		err = pthread_create(&l->thread, NULL, worker_main, l);
		if (err == 0)
			l->started = true;
		else
			log_warnx("event loop %u: cannot start its thread: %s", l->index, strerror(err));
	}
	if (pthread_sigmask(SIG_SETMASK, &old, NULL) != 0 && err == 0) {
		log_warnx("cannot restore the signal mask of the main thread");
		err = -1;
	}
	return err == 0 ? 0 : -1;
}

int proxy_start(proxy_t *px)
{
	if (px != px->main) {
		log_warnx("proxy_start: only loop 0 starts the proxy");
		return -1;
	}
	if (px->running)
		return 0;
	/* Both keep state that is not safe to share between threads: the
	 * observer (`run`'s counters) and the credential table (its scratch
	 * and set cache, mask/). */
	if (px->nloops > 1 && px->observer != NULL) {
		log_warnx("an observer of audit records needs a single event loop; use --loops 1");
		return -1;
	}
	if (px->nloops > 1 && px->masks != NULL && mask_table_value_count(px->masks) > 0) {
		log_warnx("--loops %u: the policy masks credentials, and the credential table serves "
			  "one event loop only; use --loops 1 (the default with masked credentials)",
			  px->nloops);
		return -1;
	}
	/* SPEC §4.4: real values pass through libevent's buffers in the
	 * ordinary heap (an injected request head, a response body before it
	 * is remasked), which MADV_DONTDUMP cannot cover. A process that is
	 * not dumpable writes no core dump at all (even to a core_pattern
	 * pipe) and cannot be ptraced or have its memory read through
	 * /proc/PID/mem by processes of the same user. Set here, after any
	 * sandbox was started: a child forked later would inherit it. */
	if (px->masks != NULL && mask_table_value_count(px->masks) > 0 &&
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		log_warn("cannot make the proxy non-dumpable (prctl PR_SET_DUMPABLE)");
	if (px->nloops > 1 && px->tls != NULL) {
		char err[512];

		if (tls_session_prepare(px->tls, err, sizeof(err)) < 0) {
			log_warnx("upstream TLS: %s", err);
			return -1;
		}
	}
	/* Every loop trims the heap after churn (settle_cb()). glibc sets
	 * up its arena lazily, in the first malloc() or malloc_trim(), and
	 * that set-up is not safe against a second thread: when the
	 * program's allocations go to another allocator (ASan's, or an
	 * LD_PRELOADed one), the loops' first trims would race into it (seen:
	 * a SEGV in mtrim() with 2 loops under ASan). Done here, before any
	 * worker thread exists. */
	if (px->nloops > 1)
		(void)malloc_trim(0);
	atomic_store(&px->stop, false);
	if (start_workers(px) < 0) {
		(void)stop_workers(px);
		return -1;
	}
	px->running = true;
	return 0;
}

int proxy_run(proxy_t *px)
{
	int rc = 0;

	if (proxy_start(px) < 0)
		return -1;
	if (loop_run(px) < 0) {
		log_warnx("event loop failed");
		rc = -1;
	}
	if (stop_workers(px) < 0)
		rc = -1;
	px->running = false;
	return rc;
}

int proxy_adopt_resolver(proxy_t *px, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int), slen = sizeof(ss);
	int type = 0, domain = 0;
	uint16_t port = 0;

	if (px->resolver != NULL) {
		log_warnx("adopted descriptor %d: the proxy already serves DNS; one resolver per proxy",
			  fd);
		(void)close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		type = 0;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		domain = 0;
	if (type != SOCK_DGRAM || (domain != AF_INET && domain != AF_INET6)) {
		log_warnx("adopted descriptor %d is not a UDP socket; cannot serve DNS on it", fd);
		(void)close(fd);
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &slen) == 0)
		port = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
		       : ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
						  : 0;
	if (port == 0) {
		log_warnx("adopted UDP socket %d is not bound to a port; cannot serve DNS on it", fd);
		(void)close(fd);
		return -1;
	}
	if (evutil_make_socket_nonblocking(fd) < 0 || evutil_make_socket_closeonexec(fd) < 0) {
		log_warn("adopted resolver socket");
		(void)close(fd);
		return -1;
	}
	px->resolver = resolver_new(px, fd); /* closes fd on failure */
	return px->resolver != NULL ? 0 : -1;
}

resolver_t *proxy_resolver(proxy_t *px)
{
	return px->resolver;
}

/*
 * proxy.h - the proxy process: its event loops, listeners, signals, the
 * current network policy, the connection registries and global limits.
 *
 * The policy is held in a refcounted proxy_policy_t: SIGHUP loads a new
 * policy and makes it current for new decisions, while connections that
 * hold the old one (opaque tunnels) keep it alive until they close.
 * Credentials are not reloaded (SPEC §2: SIGHUP re-reads the network part).
 *
 * A proxy_t is one event loop. proxy_new() makes loop 0, which holds
 * what every loop shares and runs on the caller's thread; proxy_set_loops()
 * adds worker loops, each run by its own thread (docs/architecture.md
 * "Loops"). A connection is served by one loop from accept to close, and
 * the functions "for conn.c" take that loop's proxy_t: per loop (base,
 * resolver, address watcher, registry, heap trim) or shared and safe from
 * any loop (policy references, tunnel slots, audit records, TLS session,
 * credential table). Setup functions and the signal handling run on loop
 * 0's thread only; those marked so may be called from callbacks.
 */
#ifndef PASSAVANT_PROXY_H
#define PASSAVANT_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/dns.h>
#include <event2/event.h>

#include "../policy/policy.h"
#include "base/attrib.h"
#include "audit.h"
#include "localaddr.h"
#include "tls.h"

struct mask_table;

typedef struct proxy proxy_t;
typedef struct proxy_policy proxy_policy_t;
struct conn;

/*
 * Creates the proxy: event base, resolver, signal handlers (SIGINT/SIGTERM
 * stop, SIGHUP reload), SIGPIPE ignored. Takes ownership of pol (freed
 * when the last reference goes) and of audit (may be NULL). policy_path is
 * re-read on SIGHUP (NULL: the embedded default, nothing to re-read);
 * session is the session id for logs. Returns NULL after logging why (pol
 * and audit are freed then too).
 */
proxy_t *proxy_new(policy_t *pol, const char *policy_path, audit_t *audit, const char *session)
	NONNULL(1, 4) WUNRES;

/* Stops and joins the worker loops if they run, closes every connection
 * and listener, frees everything. NULL: no-op. */
void proxy_free(proxy_t *px);

/*
 * Binds and listens on host:port (an IPv4 or IPv6 literal; port 0 picks
 * one). Returns 0, or -1 after logging why.
 */
int proxy_listen(proxy_t *px, const char *host, uint16_t port) NONNULL(1, 2) WUNRES;

/*
 * Adopts fd, a socket already bound and listening (the launcher's, passed
 * from the sandbox); it is made non-blocking and close-on-exec and is
 * closed with the proxy. Returns 0, or -1 after logging why (fd is closed
 * then too).
 */
int proxy_adopt_listener(proxy_t *px, int fd) NONNULL(1) WUNRES;

/*
 * Adopts fd like proxy_adopt_listener(), as a listener of intercepted
 * connections (SPEC §5, §7): each accepted connection was redirected by
 * the sandbox's nftables rule, its original destination is read with
 * SO_ORIGINAL_DST (IP6T_SO_ORIGINAL_DST for AF_INET6), and the proxy
 * decides from its first bytes (TLS ClientHello SNI, plain HTTP Host,
 * anything else refused). AF_INET or AF_INET6. Returns 0, or -1 after
 * logging why (fd is closed then too).
 */
int proxy_adopt_intercept(proxy_t *px, int fd) NONNULL(1) WUNRES;

/*
 * Serves DNS on fd, a bound UDP socket (the sandbox's 127.0.0.1:53):
 * allowed names get synthetic addresses (base/defaults.h) that intercepted
 * connections map back to the name; denied names get NXDOMAIN and a
 * stderr/audit line, never a lookup (SPEC §3.5, §7). fd is closed with
 * the proxy. Returns 0, or -1 after logging why (fd is closed then too).
 */
int proxy_adopt_resolver(proxy_t *px, int fd) NONNULL(1) WUNRES;

/* The address the (first) listener is bound to, for the "listening on"
 * line and the env file. Returns 0 or -1. host gets the bare address. */
int proxy_local_addr(const proxy_t *px, char *host, size_t hostlen, uint16_t *port) NONNULL(1, 2, 4);

/* The most event loops proxy_set_loops() takes, and the cap of the
 * default (proxy_loops_default()). */
#define PROXY_LOOPS_MAX 256u
#define PROXY_LOOPS_DEFAULT_MAX 16u

/*
 * Gives the proxy n event loops in all (loop 0 included): n - 1 worker
 * loops are made now and their threads started by proxy_run(). Loop 0
 * keeps accepting on every listener and hands each accepted proxy
 * connection to a loop in turn (itself included); interception listeners
 * and the resolver stay on loop 0. n > 1 declares libevent threaded for
 * the process (evthread_use_pthreads()). Setup code: once, on the proxy
 * proxy_new() returned, before proxy_run(). Returns 0, or -1 after
 * logging why (n outside 1 .. PROXY_LOOPS_MAX, out of memory).
 */
int proxy_set_loops(proxy_t *px, unsigned n) NONNULL(1) WUNRES;

/* The longest busy poll proxy_set_busy_poll() takes, in microseconds. */
#define PROXY_BUSY_POLL_US_MAX 10000u

/*
 * After each wake-up, every loop polls for events without sleeping for
 * us microseconds before it sleeps again (0, the default: it sleeps at
 * once). For a proxy on a core of its own: the next request or response
 * then finds the loop awake, without the wake-up of an idle CPU (tens of
 * microseconds in a VM); the core is busy for those microseconds after
 * every wake-up, so under steady traffic it is always busy. Setup code:
 * on the proxy proxy_new() returned, before proxy_run(). Returns 0, or -1
 * after logging why (us above PROXY_BUSY_POLL_US_MAX).
 */
int proxy_set_busy_poll(proxy_t *px, unsigned us) NONNULL(1) WUNRES;

/* The number of event loops, loop 0 included. */
unsigned proxy_loops(const proxy_t *px) NONNULL(1);

/* The CPUs this process may run on (sched_getaffinity()), at most
 * PROXY_LOOPS_DEFAULT_MAX; 1 when that cannot be read. */
unsigned proxy_loops_default(void);

/*
 * Starts the worker loops' threads (they serve connections handed to them
 * from then on; loop 0 accepts once proxy_run() runs it), so that a
 * "listening on" line printed afterwards means every loop runs. Refuses
 * (-1, logged) several loops with an observer or with a credential table
 * that masks values: both are single-threaded. Once; proxy_run() calls
 * it when it was not. Returns 0 or -1.
 */
int proxy_start(proxy_t *px) NONNULL(1) WUNRES;

/*
 * Runs loop 0 on the calling thread (after proxy_start() if not done)
 * until SIGINT/SIGTERM (or proxy_stop()); then stops and joins the
 * workers. Returns 0, -1 on a refusal of proxy_start() or an event-loop
 * failure (of any loop).
 */
int proxy_run(proxy_t *px) NONNULL(1);

/* Stops every loop: loop 0 at its next iteration (px is loop 0), or asks
 * loop 0 to (px is a worker, from its thread). From callbacks: yes. */
void proxy_stop(proxy_t *px) NONNULL(1);

/*
 * Re-reads the policy file and makes it current; on error keeps the old
 * one and logs every error. Returns 0 or -1. From callbacks: yes.
 */
int proxy_reload(proxy_t *px) NONNULL(1);

/* Binds a freshly loaded policy to the machine (policy_bind() with the
 * CLI's facts); returns the number of errors it printed. */
typedef unsigned proxy_bind_fn(policy_t *p);

/* The binder proxy_reload() applies to a re-read policy before it becomes
 * current (a policy with bind errors is refused like one with load
 * errors). NULL: none. Setup code. */
void proxy_set_binder(proxy_t *px, proxy_bind_fn *fn) NONNULL(1);

/*
 * Gives the proxy the session's TLS termination context (ownership moves;
 * freed with the proxy). Without one, CONNECT tunnels are opaque. Setup
 * code, before proxy_run().
 */
void proxy_set_tls(proxy_t *px, tls_session_t *tls) NONNULL(1);

/*
 * Gives the proxy the session's credential table (ownership moves; freed
 * with the proxy, after every connection). Without one, nothing is
 * masked. Setup code, before proxy_run().
 */
void proxy_set_masks(proxy_t *px, struct mask_table *masks) NONNULL(1);

/*
 * Observer of every audit record (written to the audit file or not): the
 * `run` command prints refusals and counts requests with it. The record
 * and its strings live only during the call; fn must not call back into
 * the proxy except proxy_stop(). NULL fn removes it. One loop only
 * (proxy_run() refuses an observer with several).
 */
typedef void (*proxy_observer_fn)(void *arg, const struct audit_rec *r);
void proxy_set_observer(proxy_t *px, proxy_observer_fn fn, void *arg) NONNULL(1);

/*
 * Signal hook: SIGINT, SIGTERM and SIGHUP are first offered to fn; when it
 * returns true the proxy does nothing more with the signal (the `run`
 * command forwards them to the command instead of stopping or reloading).
 * NULL fn restores the default (stop, stop, reload).
 */
typedef bool (*proxy_signal_fn)(void *arg, int sig);
void proxy_set_signal_hook(proxy_t *px, proxy_signal_fn fn, void *arg) NONNULL(1);

/*
 * Writes now the records that sum up refusals not yet summed (the
 * resolver's and the proxy's, normally written a second later or when the
 * proxy stops), so an observer has counted every refusal. `run` calls it
 * once the command has ended, before its summary.
 */
void proxy_flush_refusals(proxy_t *px) NONNULL(1);

/* --- for conn.c (callbacks: yes) --- */
struct mask_table *proxy_masks(proxy_t *px) NONNULL(1); /* NULL: no masking */
/* Whether some credential is masked (the table holds a value): `run` and
 * `proxy` always set a table, empty without masked credentials. */
bool proxy_masking(proxy_t *px) NONNULL(1);
/* Writes r to the audit file (if any) and passes it to the observer
 * (`run`'s stderr line). A write that fails makes proxy_audit_down() true
 * until one succeeds. A field holding a real value (a name the sandbox
 * chose: a DNS question, a server name, a target) is written as
 * "[redacted: ...]" instead, and the reason then names only the
 * credential: the callers search what they decide on, this is the last
 * check (SPEC §6). */
void proxy_record(proxy_t *px, const struct audit_rec *r) NONNULL(1, 2);
/* A connection refused or closed before any request (at accept, on its
 * first bytes): line, the whole reason, to stderr at info level and as a
 * "connect" deny record (host NULL and status 0 when unknown, written
 * null), through proxy_record(). */
void proxy_record_line(proxy_t *px, const char *host, uint16_t port, int status, const char *rule,
		       const char *line) NONNULL(1, 6);
/*
 * The credential whose real value text (len bytes) holds, in any form the
 * remask set knows (mask_table_find_real()), or NULL when none or when
 * nothing is masked. Out of memory counts as found (fail closed): the
 * name is then "a credential (out of memory while searching)".
 */
const char *proxy_real_in(proxy_t *px, const char *text, size_t len) NONNULL(1, 2);
/* proxy_real_in() for a host or server name, which may reach a resolver
 * or server in any case: a raw real value is also found with its ASCII
 * case changed (mask_table_find_real_name()). */
const char *proxy_real_in_name(proxy_t *px, const char *name, size_t len) NONNULL(1, 2);

/* Whether the last audit record could not be written: the proxy then
 * refuses new requests and tunnels (503), since nothing may leave
 * unrecorded (SPEC §6); each refusal's record tries the file again. */
bool proxy_audit_down(proxy_t *px) NONNULL(1);
tls_session_t *proxy_tls(proxy_t *px) NONNULL(1); /* NULL: no termination */

/* Connections came, went or finished a TLS handshake: freed heap pages
 * are returned (malloc_trim) once this has been quiet for a second. */
void proxy_note_churn(proxy_t *px) NONNULL(1);
/* A TLS connection of this loop was driven since the last buffer tick:
 * the tick (sockio_bufs_tick() for each connection) is due. */
void proxy_bufs_arm(proxy_t *px) NONNULL(1);
struct event_base *proxy_base(proxy_t *px) NONNULL(1);
struct evdns_base *proxy_dns(proxy_t *px) NONNULL(1);
/* This machine's own addresses for the guard (owned by the proxy). */
localaddr_t *proxy_local(proxy_t *px) NONNULL(1);
audit_t *proxy_audit(proxy_t *px) NONNULL(1); /* NULL: no audit */

/* A new reference to the current policy; release with proxy_policy_put(). */
proxy_policy_t *proxy_policy_get(proxy_t *px) NONNULL(1);
/* Drops a reference; the last one frees the policy. NULL is a no-op. */
void proxy_policy_put(proxy_policy_t *pp);
const policy_t *proxy_policy(const proxy_policy_t *pp) NONNULL(1);

/* Takes a tunnel slot if fewer than max are in use on every loop. */
bool proxy_tunnel_acquire(proxy_t *px, unsigned max) NONNULL(1);
void proxy_tunnel_release(proxy_t *px) NONNULL(1);
/*
 * Requests whose body got a real value (round 25 of the attack): an
 * upstream may echo such a body on any connection (a relay service, its
 * download stream on another connection, another stream), pausing where
 * it paused reading, which the sandbox chose. While one is open upstream
 * on any loop, and PASSAVANT_BODY_INJECTED_GRACE_MS after the last one
 * ended, no held bytes are released after a pause (relay.c, h2.c).
 * open/done are paired per request; lately is that test.
 */
void proxy_body_injected_open(proxy_t *px) NONNULL(1);
void proxy_body_injected_done(proxy_t *px) NONNULL(1);
bool proxy_body_injected_lately(proxy_t *px) NONNULL(1);

/* Counts a client connection that holds no tunnel slot (still reading its
 * first head or TLS handshake, or refused and closing) if fewer than max
 * are, on every loop: each may buffer a head of maxHeaderBytes, or a TLS
 * handshake, before any decision. */
bool proxy_waiting_acquire(proxy_t *px, unsigned max) NONNULL(1);
void proxy_waiting_release(proxy_t *px) NONNULL(1);

/* Head of this loop's connection registry (conn.c links and unlinks). */
struct conn **proxy_conn_list(proxy_t *px) NONNULL(1);

#endif

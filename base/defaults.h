/*
 * defaults.h - every default limit and timeout, with its unit in the name
 * (STYLE.md 7). Policy values (SPEC §3.1) override the POLICY_ ones.
 */
#ifndef PASSAVANT_DEFAULTS_H
#define PASSAVANT_DEFAULTS_H

/* SPEC §3.1 limits: defaults for keys the policy may set. */
#define POLICY_DEFAULT_MAX_TUNNELS 256
#define POLICY_DEFAULT_HANDSHAKE_TIMEOUT_MS 10000
#define POLICY_DEFAULT_IDLE_TIMEOUT_MS 60000
#define POLICY_DEFAULT_MAX_HEADER_BYTES (64 * 1024)
/* How long an upstream connection idle between the requests of its
 * tunnel is kept for the next one (0: until idleTimeoutMs). */
#define POLICY_DEFAULT_UPSTREAM_KEEPALIVE_MS 5000

/* Accepted ranges for those keys (outside: load error). */
#define POLICY_MAX_TUNNELS_MAX 1000000
#define POLICY_TIMEOUT_MS_MAX (24 * 3600 * 1000)
#define POLICY_MAX_HEADER_BYTES_MIN 1024
#define POLICY_MAX_HEADER_BYTES_MAX (1024 * 1024)

/* Proxy internals not exposed in the policy. */
#define PASSAVANT_MAX_HEADER_COUNT 256
#define PASSAVANT_UPSTREAM_CONNECT_TIMEOUT_MS 10000
#define PASSAVANT_UPSTREAM_RESPONSE_TIMEOUT_MS 60000
#define PASSAVANT_OUTBUF_HIGH_BYTES (256 * 1024)
#define PASSAVANT_ACCEPT_PAUSE_MS 100
/* After the last request whose body got a real value ended, held bytes
 * of responses wait this long more before pauses release them again
 * (proxy_body_injected_lately(): a relay that echoes the body on another
 * connection is still forwarding its last pieces). */
#define PASSAVANT_BODY_INJECTED_GRACE_MS 10000
#define PASSAVANT_DNS_TIMEOUT_MS 5000
/* `run`'s report after the post-run check goes to a terminal the command
 * shared: when no byte of it goes out for this long, the rest is dropped
 * (the audit log has every finding) rather than passavant waiting for
 * ever (docs/run.md "Terminal"). */
#define PASSAVANT_REPORT_STALL_MS 30000
/* How often a blocked report write is interrupted to look at the clock. */
#define PASSAVANT_REPORT_TICK_MS 250

/*
 * Interception in `run` (SPEC §7, docs/run.md): the in-sandbox transparent
 * listener, the in-sandbox resolver, and the synthetic addresses the
 * resolver hands out (RFC 2544's benchmarking block 198.18.0.0/15, and a
 * ULA /64 for AAAA). The sandbox's lo also carries PASSAVANT_SANDBOX_V4 so
 * that getaddrinfo(AI_ADDRCONFIG) sees an IPv4 address; the pool starts
 * after it. Values in host byte order.
 */
#define PASSAVANT_INTERCEPT_PORT 3129
#define PASSAVANT_DNS_PORT 53
#define PASSAVANT_SYNTH_V4_NET 0xC6120000u      /* 198.18.0.0 */
#define PASSAVANT_SYNTH_V4_PREFIXLEN 15
#define PASSAVANT_SANDBOX_V4 0xC6120001u        /* 198.18.0.1, on the sandbox's lo */
#define PASSAVANT_SYNTH_V4_FIRST 0xC6120002u    /* first address handed out */
/* fd70:6173:7376:1::/64 ("pasv"): the first 8 bytes of every synthetic AAAA. */
#define PASSAVANT_SYNTH_V6_PREFIX {0xfd, 0x70, 0x61, 0x73, 0x73, 0x76, 0x00, 0x01}
#define PASSAVANT_SYNTH_MAX_NAMES 65536         /* names mapped per session */

/*
 * How long an intercepted connection may stay silent before it is refused
 * as "neither HTTP nor TLS". HTTP and TLS clients send their first bytes
 * at once (the request line, the ClientHello); a client that sends nothing
 * speaks a protocol whose server talks first (SMTP, SSH's banner exchange,
 * FTP, POP3...), which passavant refuses anyway: waiting the whole
 * handshakeTimeoutMs (10 s) would only make the refusal line late. 3 s
 * still covers a client whose first write is delayed by a slow start-up
 * between connect() and send(). From the first byte on, the head or
 * ClientHello has handshakeTimeoutMs to complete.
 */
#define PASSAVANT_INTERCEPT_FIRST_BYTE_MS 3000

/* Policy file size cap: a policy is a few KiB; refuse absurd inputs. */
#define POLICY_FILE_MAX_BYTES (4 * 1024 * 1024)

#endif

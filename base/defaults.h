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
#define PASSAVANT_DNS_TIMEOUT_MS 5000

/* Policy file size cap: a policy is a few KiB; refuse absurd inputs. */
#define POLICY_FILE_MAX_BYTES (4 * 1024 * 1024)

#endif

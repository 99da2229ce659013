# shellcheck shell=bash disable=SC2034,SC2154  # sourced: run.sh defines and reads these
# tests/bench/bench-peer.sh - the peer comparison of issue 16, sourced by
# tests/bench/run.sh (BENCH_MODE=peer runs it alone; docs/bench.md). It
# shares run.sh's fixtures and helpers ($tmp, certs, start_bg, load,
# median, field, row, spread, cpu_suffix, with_cpu, scenario, memory, die,
# $ONLY, $SECS, $ROUNDS) and shadows, for its own rows, run.sh's upstream,
# proxy and pinning variables with function-local ones (bash scoping is
# dynamic: scenario() and memory() then use this file's values).
#
# The configuration, as a user comparing proxies would set it up:
#   - the proxy (passavant proxy, its own policy: 127.0.0.1 allowed, TLS
#     terminated, extraCaCertPaths = the test CA) pinned to CPU 0;
#   - pv-load and an nginx upstream (ONE worker, worker_cpu_affinity and
#     taskset on CPU 1) both on CPU 1. nginx runs from a temporary prefix
#     with its own configuration (no system service): TLS with the test
#     certificates, keep-alive without a request limit, a small static
#     body (/hello, /auth) and a 64 MiB file (/64m.bin).
#   - uploads go to pv-upstream's /sink (TLS, also on CPU 1), which reads
#     the whole body and replies with its length: nginx's `return 200`
#     replies before it has read a request body (it discards the body
#     afterwards), and reading it first (echo_read_request_body) spools
#     it to a temporary file. See docs/bench.md.
# Each figure is the median of ROUNDS rounds; every proxied run is compared
# with the direct run just before it (same round).
#
# Rows (names start with "peer"):
#   kept-alive GET c=1 / c=32   req/s ratio, p50/p99 against direct, proxy
#                               CPU us per request and its core's load;
#     masked                    the same requests, in the same rounds,
#                               through a second proxy whose policy masks
#                               PV_BENCH_TOKEN (injectHosts 127.0.0.1,
#                               injectIn header): the requests carry the
#                               sentinel in Authorization, the proxy puts
#                               the real value back, nginx answers 403
#                               (counted as errors) to anything else;
#                               masked/unmasked is printed (target >= 0.90).
#                               The direct and unmasked runs send the real
#                               value, so all three send the same request.
#     --busy-poll-us 200 (c=1)  the same requests, in the same rounds,
#                               through a third proxy started with
#                               --busy-poll-us 200 (polls 200 us after each
#                               wake-up before sleeping: no wake-up of an
#                               idle CPU 0 per hop; its core is busy)
#     bare TLS relay (floor)    the same requests, in the same rounds,
#                               through pv-tlsrelay on CPU 0: TLS
#                               terminated on both sides with passavant's
#                               settings, one SSL_read and one SSL_write
#                               per record, nothing parsed, no event
#                               library (tests/bench/pv-tlsrelay.c). What
#                               OpenSSL 3.0 and the kernel cost for a
#                               terminated hop here; proxy/floor is what
#                               the proxy's own work leaves of it.
#   new CONNECT+TLS c=8         one new connection (CONNECT, TLS) per
#                               request, 8 at a time; proxy CPU per tunnel
#   download / upload 64MiB     MB/s, one tunnel, 3 transfers per run
#                               (these three rows also have a TLS floor)
#   tunnels open x1000          proxy RSS per held terminated tunnel,
#                               1,000 opened at once
#   tunnels x1000 over 20s      the same, the 1,000 spread over 20 s

# --busy-poll-us of the third proxy of the c=1 row
PEER_POLL_US=200

PEER_ROWS=("peer kept-alive GET c=1" "peer kept-alive GET c=32" "peer new CONNECT+TLS c=8"
	"peer download 64MiB" "peer upload 64MiB (/sink)" "peer tunnels open x1000"
	"peer tunnels x1000 over 20s")

# peer_wanted: BENCH_ONLY names one of the rows (or is empty)
peer_wanted() {
	local n
	[ -z "$ONLY" ] && return 0
	for n in "${PEER_ROWS[@]}" "peer masked"; do
		[[ "$n" == *"$ONLY"* ]] && return 0
	done
	return 1
}

# peer_ready PORT: nginx_start()'s check: /hello over TLS, verified with
# the test CA.
peer_ready() {
	[ "$(curl -s --max-time 2 --cacert "$tmp/certs/ca.pem" "https://127.0.0.1:$1/hello" 2>/dev/null)" = hello ]
}

# peer_lat DIRECT... -- PROXIED...: "; p50 +A us, p99 +B us over direct",
# from the medians of each side's p50 and p99.
peer_lat() {
	local d=() p=() seen=0 l
	for l in "$@"; do
		if [ "$l" = -- ]; then
			seen=1
		elif [ "$seen" = 0 ]; then
			d+=("$l")
		else
			p+=("$l")
		fi
	done
	local d50 p50 d99 p99
	d50=$(field p50_ms "$(median p50_ms "${d[@]}")")
	p50=$(field p50_ms "$(median p50_ms "${p[@]}")")
	d99=$(field p99_ms "$(median p99_ms "${d[@]}")")
	p99=$(field p99_ms "$(median p99_ms "${p[@]}")")
	[ -n "$d50" ] && [ -n "$p50" ] || return 0
	awk -v a="$d50" -v b="$p50" -v c="$d99" -v e="$p99" \
		'BEGIN { printf "; p50 %+.0f us, p99 %+.0f us over direct", (b - a) * 1000, (e - c) * 1000 }'
}

# peer_keepalive NAME CONC: kept-alive GET /auth, direct, through the plain
# proxy and through the masking proxy, alternating in each round; two rows.
peer_keepalive() {
	local name=$1 conc=$2 d p m b f ds=() ps=() ms=() bs=() fs=()
	if [ -n "$ONLY" ] && [[ "$name" != *"$ONLY"* ]] && [[ "peer masked" != *"$ONLY"* ]]; then
		return 0
	fi
	local url="https://$HTTPS_ADDR/auth" args=(-c "$conc" -d "$SECS" --path /auth)
	for _ in $(seq "$ROUNDS"); do
		load d --url "$url" "${args[@]}" --tls "$tmp/certs/ca.pem" -H "Authorization: Bearer $PEER_TOKEN"
		ds+=("$d")
		load_cpu p "$peer_plain_pid" rps --url "$url" "${args[@]}" --proxy "$peer_plain_addr" \
			--tls "$peer_plain_trust" -H "Authorization: Bearer $PEER_TOKEN"
		ps+=("$p")
		m=""
		if [ -n "$peer_mask_addr" ]; then
			load_cpu m "$peer_mask_pid" rps --url "$url" "${args[@]}" --proxy "$peer_mask_addr" \
				--tls "$peer_mask_trust" -H "Authorization: Bearer $peer_sentinel"
			if [ -z "$m" ]; then
				echo "bench: $name masked: no request completed through the masking" \
					"proxy (pv-load's errors above; HTTP status 403 means the real" \
					"value did not replace the sentinel)" >&2
			elif [ "$(field errors "$m")" != 0 ]; then
				echo "bench: $name masked: $(field errors "$m") requests failed" \
					"(pv-load's errors above; HTTP status 403 means the real value" \
					"did not replace the sentinel)" >&2
			fi
		fi
		ms+=("$m")
		if [ "$conc" = 1 ] && [ -n "$peer_poll_addr" ]; then
			load_cpu b "$peer_poll_pid" rps --url "$url" "${args[@]}" --proxy "$peer_poll_addr" \
				--tls "$peer_poll_trust" -H "Authorization: Bearer $PEER_TOKEN"
			bs+=("$b")
		fi
		if [ -n "$TLS_FLOOR_ADDR" ]; then
			load_cpu f "$TLS_FLOOR_PID" rps --url "$url" "${args[@]}" --proxy "$TLS_FLOOR_ADDR" \
				--tls "$tmp/certs/ca.pem" -H "Authorization: Bearer $PEER_TOKEN"
			fs+=("$f")
		fi
	done
	row "$name" rps "$(cpu_suffix "${ps[@]}")$(peer_lat "${ds[@]}" -- "${ps[@]}")" \
		"${#ds[@]}" "${ds[@]}" "${ps[@]}"
	local q
	q=$(ratio_of rps "$(median rps "${ps[@]}")" "$(median rps "${ms[@]}")")
	row "  masked" rps "$(cpu_suffix "${ms[@]}"); masked/unmasked ${q:-n/a} (target >= 0.90)" \
		"${#ds[@]}" "${ds[@]}" "${ms[@]}"
	if [ "${#bs[@]}" -gt 0 ]; then
		row "  --busy-poll-us $PEER_POLL_US" rps \
			"$(cpu_suffix "${bs[@]}")$(peer_lat "${ds[@]}" -- "${bs[@]}")" \
			"${#ds[@]}" "${ds[@]}" "${bs[@]}"
	fi
	if [ "${#fs[@]}" -gt 0 ]; then
		q=$(ratio_of rps "$(median rps "${fs[@]}")" "$(median rps "${ps[@]}")")
		row "  bare TLS relay (floor)" rps \
			"$(cpu_suffix "${fs[@]}" | sed 's/^; proxy CPU/; floor CPU/'); proxy/floor ${q:-n/a}" \
			"${#ds[@]}" "${ds[@]}" "${fs[@]}"
	fi
}

peer_bench() {
	peer_wanted || return 0
	local pin_proxy=() pin_other=() affinity=""
	bench_pin peer client || return 0
	command -v nginx >/dev/null || die "peer: no nginx; 'make bench-deps' (root) installs nginx-light"
	command -v curl >/dev/null || die "peer: no curl; 'make deps' (root) installs it"

	local prefix="$tmp/nginx"
	mkdir -p "$prefix/html" "$prefix/tmp"
	printf 'hello\n' >"$prefix/html/hello"
	printf 'hello\n' >"$prefix/html/auth"
	head -c 67108864 /dev/urandom >"$prefix/html/64m.bin" || die "peer: cannot write $prefix/html/64m.bin"
	# The credential the masking proxy hides (random, this run only).
	PEER_TOKEN="ghp_$(openssl rand -hex 18)" || die "peer: openssl rand failed"
	# /auth answers 403 to anything but the real value (the masking check).
	nginx_start peer "$prefix" "$tmp/certs" "$affinity" ssl \
		"		location = /auth {
			if (\$http_authorization != \"Bearer $PEER_TOKEN\") { return 403; }
		}" peer_ready || die "peer: nginx failed (see above)"
	local HTTPS_ADDR=127.0.0.1:$NGINX_PORT
	start_bg peer-sink "${pin_other[@]}" "$PASSAVANT_TOOLS/pv-upstream" --listen 127.0.0.1:0 \
		--tls "$tmp/certs" || die "peer: pv-upstream (/sink) failed"
	local sink_addr=$ADDR

	cat >"$tmp/policy-peer.yaml" <<EOF
network:
  allowedDomains: ["127.0.0.1"]
  tlsTerminate:
    extraCaCertPaths: ["$tmp/certs/ca.pem"]
  limits:
    maxTunnels: 4096
EOF
	cp "$tmp/policy-peer.yaml" "$tmp/policy-peer-mask.yaml"
	cat >>"$tmp/policy-peer-mask.yaml" <<EOF
credentials:
  envVars:
    - {name: PV_BENCH_TOKEN, mode: mask, injectHosts: ["127.0.0.1"], injectIn: [header]}
EOF
	local peer_plain_addr peer_plain_pid peer_plain_trust="$tmp/session-peer/trust.pem"
	local peer_mask_addr="" peer_mask_pid="" peer_mask_trust="$tmp/session-peer-mask/trust.pem"
	local peer_sentinel=""
	local peer_poll_addr="" peer_poll_pid="" peer_poll_trust="$tmp/session-peer-poll/trust.pem"
	start_bg proxy-peer "${pin_proxy[@]}" "$PASSAVANT_BIN" proxy -p "$tmp/policy-peer.yaml" \
		--listen 127.0.0.1:0 --session-dir "$tmp/session-peer" || die "peer: the proxy did not start"
	peer_plain_addr=$ADDR
	peer_plain_pid=${pids[-1]}
	if start_bg proxy-peer-mask "${pin_proxy[@]}" env PV_BENCH_TOKEN="$PEER_TOKEN" "$PASSAVANT_BIN" proxy \
		-p "$tmp/policy-peer-mask.yaml" --listen 127.0.0.1:0 --session-dir "$tmp/session-peer-mask"; then
		peer_mask_addr=$ADDR
		peer_mask_pid=${pids[-1]}
		peer_sentinel=$(sed -n "s/^export PV_BENCH_TOKEN='\\(.*\\)'\$/\\1/p" \
			"$tmp/session-peer-mask/env" 2>/dev/null)
		if [ -z "$peer_sentinel" ] || [ "$peer_sentinel" = "$PEER_TOKEN" ]; then
			echo "bench: peer: the masking proxy handed out no PV_BENCH_TOKEN sentinel" \
				"in $tmp/session-peer-mask/env: masked rows are n/a" >&2
			peer_mask_addr=""
		fi
	else
		echo "bench: peer: the masking proxy did not start: masked rows are n/a" >&2
	fi
	# The c=1 row again through a proxy that polls after each wake-up
	# (README: --busy-poll-us), the way a proxy on a core of its own may run.
	if start_bg proxy-peer-poll "${pin_proxy[@]}" "$PASSAVANT_BIN" proxy -p "$tmp/policy-peer.yaml" \
		--listen 127.0.0.1:0 --session-dir "$tmp/session-peer-poll" --busy-poll-us "$PEER_POLL_US"; then
		peer_poll_addr=$ADDR
		peer_poll_pid=${pids[-1]}
	else
		echo "bench: peer: the busy-polling proxy did not start: its row is left out" >&2
	fi
	# The floor: a bare TLS-terminating relay on the proxy's CPU.
	local TLS_FLOOR_ADDR="" TLS_FLOOR_PID=""
	if start_bg tls-floor "${pin_proxy[@]}" "$PASSAVANT_TOOLS/pv-tlsrelay" --listen 127.0.0.1:0 \
		--certs "$tmp/certs"; then
		TLS_FLOOR_ADDR=$ADDR
		TLS_FLOOR_PID=${pids[-1]}
	else
		echo "bench: peer: pv-tlsrelay did not start: no TLS floor rows" >&2
	fi
	# scenario() and memory() read these
	local PROXY_ADDR=$peer_plain_addr PROXY_PID=$peer_plain_pid PROXY_TRUST=$peer_plain_trust

	echo
	echo "peer comparison (issue 16): passavant proxy on CPU 0; pv-load and" \
		"$(nginx -v 2>&1 | sed 's/^nginx version: //') (1 worker) on CPU 1; TLS terminated;" \
		"uploads to pv-upstream /sink on CPU 1; ratio = proxied / direct, median of $ROUNDS"
	header_printed=0
	print_header
	peer_keepalive "peer kept-alive GET c=1" 1
	peer_keepalive "peer kept-alive GET c=32" 32
	scenario "peer new CONNECT+TLS c=8" https+floor -c 8 --new-conn --path /hello
	scenario "peer download 64MiB" https+floor --download 67108864 -n 3 --path /64m.bin
	HTTPS_ADDR=$sink_addr scenario "peer upload 64MiB (/sink)" https+floor --upload 67108864 -n 3
	memory "peer tunnels open x1000" 1000 https
	memory "peer tunnels x1000 over 20s" 1000 https 20
}

peer_bench

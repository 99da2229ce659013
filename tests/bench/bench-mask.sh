# tests/bench/bench-mask.sh - credential masking cost (issue 5), sourced by
# tests/bench/run.sh after its own scenarios: it uses run.sh's fixtures
# ($tmp, certs, $HTTPS_ADDR) and helpers (start_bg, load, median, field,
# cell, print_header), and $ONLY, $ROUNDS, the pinning arrays.
#
# Two fresh proxies, started here with the same flags and the same network
# policy; they differ only in the credentials section:
#   mask off  no credentials
#   mask on   one masked variable (PV_BENCH_TOKEN, a random 40-byte
#             ghp_ token set in that proxy's environment only) whose inject
#             host is the upstream, injectIn [header, body]: so the upload
#             body is scanned outbound and the download is remasked inbound,
#             the worst case for bulk transfers.
# Rows "[header]" use a third proxy whose credential has injectIn [header]
# (the default): uploads are then not scanned for sentinels, downloads are
# still remasked (every response from every host is).
# Each row is 64 MiB transfers (-n 5, one connection: one terminated
# tunnel) through each proxy, alternating off/on ROUNDS times; the medians
# and the ratio on/off are printed (the issue's target: at least 0.90,
# i.e. at most 10% throughput cost). On a shared 2-CPU machine single
# rounds vary by 20%: use BENCH_ROUNDS=5 or more, and PIN=1.

mask_bench() {
	local off_addr="" on_addr="" hdr_addr="" off_trust on_trust hdr_trust token active=1
	if [ -n "$ONLY" ] && [[ "mask download 64MiB [header]" != *"$ONLY"* ]] &&
		[[ "mask upload 64MiB [header]" != *"$ONLY"* ]]; then
		return 0
	fi
	# 36 hex digits: well above the 64 random bits a sentinel needs.
	token="ghp_$(openssl rand -hex 18)"
	cat >"$tmp/policy-mask-off.yaml" <<EOF
network:
  allowedDomains: ["127.0.0.1"]
  tlsTerminate:
    extraCaCertPaths: ["$tmp/certs/ca.pem"]
EOF
	cp "$tmp/policy-mask-off.yaml" "$tmp/policy-mask-on.yaml"
	cp "$tmp/policy-mask-off.yaml" "$tmp/policy-mask-hdr.yaml"
	cat >>"$tmp/policy-mask-hdr.yaml" <<EOF
credentials:
  envVars:
    - {name: PV_BENCH_TOKEN, mode: mask, injectHosts: ["127.0.0.1"], injectIn: [header]}
EOF
	cat >>"$tmp/policy-mask-on.yaml" <<EOF
credentials:
  envVars:
    - {name: PV_BENCH_TOKEN, mode: mask, injectHosts: ["127.0.0.1"], injectIn: [header, body]}
EOF
	if start_bg proxy-mask-off "${pin_proxy[@]}" "$PASSAVANT_BIN" proxy -p "$tmp/policy-mask-off.yaml" \
		--listen 127.0.0.1:0 --session-dir "$tmp/session-mask-off"; then
		off_addr=$ADDR
	fi
	if start_bg proxy-mask-on "${pin_proxy[@]}" env PV_BENCH_TOKEN="$token" "$PASSAVANT_BIN" proxy \
		-p "$tmp/policy-mask-on.yaml" --listen 127.0.0.1:0 --session-dir "$tmp/session-mask-on"; then
		on_addr=$ADDR
	fi
	if start_bg proxy-mask-hdr "${pin_proxy[@]}" env PV_BENCH_TOKEN="$token" "$PASSAVANT_BIN" proxy \
		-p "$tmp/policy-mask-hdr.yaml" --listen 127.0.0.1:0 --session-dir "$tmp/session-mask-hdr"; then
		hdr_addr=$ADDR
	fi
	hdr_trust="$tmp/session-mask-hdr/trust.pem"
	off_trust="$tmp/session-mask-off/trust.pem"
	on_trust="$tmp/session-mask-on/trust.pem"
	# Masking is only really on when the proxy handed out a sentinel.
	if [ -n "$on_addr" ] && ! grep -qs "^export PV_BENCH_TOKEN='ghp_" "$tmp/session-mask-on/env"; then
		echo "bench: mask on: no PV_BENCH_TOKEN sentinel in the session env; masking may not be active" >&2
		active=0
	fi

	printf '\n%-28s %-32s %-32s %s\n' "scenario" "mask off (MB/s)" "mask on (MB/s)" "on/off (>= 0.90)"
	printf '%-28s %-32s %-32s %s\n' "--------" "--------" "-------" "------"
	local kind row bytes=67108864 r off on o p ratio offs ons paddr ptrust name
	for row in "download" "upload" "download [header]" "upload [header]"; do
		kind=${row%% *}
		name="mask $kind 64MiB"
		paddr=$on_addr
		ptrust=$on_trust
		if [[ "$row" == *"[header]"* ]]; then
			paddr=$hdr_addr
			ptrust=$hdr_trust
			name="mask $kind 64MiB [header]"
		fi
		if [ -n "$ONLY" ] && [[ "$name" != *"$ONLY"* ]]; then
			continue
		fi
		offs=()
		ons=()
		for r in $(seq "$ROUNDS"); do
			off=""
			on=""
			[ -n "$off_addr" ] && load off --url "https://$HTTPS_ADDR/hello" --proxy "$off_addr" \
				--tls "$off_trust" "--$kind" "$bytes" -n 5
			[ -n "$paddr" ] && load on --url "https://$HTTPS_ADDR/hello" --proxy "$paddr" \
				--tls "$ptrust" "--$kind" "$bytes" -n 5
			offs+=("$off")
			ons+=("$on")
		done
		off=$(median mbps "${offs[@]}")
		on=$(median mbps "${ons[@]}")
		ratio="n/a"
		if [ -n "$off" ] && [ -n "$on" ]; then
			o=$(field mbps "$off")
			p=$(field mbps "$on")
			ratio=$(awk -v o="$o" -v p="$p" 'BEGIN {
				if (o > 0) printf "%.2f %s", p / o, (p / o >= 0.90 ? "ok" : "MISSED"); else print "n/a" }')
		fi
		[ "$active" = 1 ] || ratio="$ratio (masking not active)"
		printf '%-28s %s %s %s\n' "$name" "$(cell "$off" mbps)" "$(cell "$on" mbps)" "$ratio"
	done
}

mask_bench

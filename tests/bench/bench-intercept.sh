# tests/bench/bench-intercept.sh - sourced by tests/bench/run.sh (shares its
# fixtures and helpers: $tmp, $PASSAVANT_BIN, $PASSAVANT_TOOLS, $SECS,
# $ROUNDS, $ONLY, pin_proxy/pin_other, load-line helpers, die).
#
# Interception against CONNECT (issue 15), in the same run: pv-load runs
# INSIDE `passavant run` and opens a new TLS connection per request to
# https://bench.test:PORT/hello, 32 at a time, either through the proxy
# variables' route (CONNECT to 127.0.0.1:3128) or straight to the name (the
# in-sandbox resolver hands out a synthetic address, the nftables rule
# redirects the connection, the proxy reads the SNI). Both rounds alternate
# in one session, so the proxy, its leaf cache and the machine are the same.
# The host side resolves bench.test to 127.0.0.1 through a hosts file bound
# in a private mount namespace (unshare -m), as the integration tests do.

bench_intercept() {
	local name="https new tunnel c=32" i line via_connect=() via_icpt=()
	if [ -n "$ONLY" ] && [[ "intercept" != *"$ONLY"* ]]; then
		return 0
	fi
	if ! command -v unshare >/dev/null; then
		echo "bench: intercept: needs unshare (util-linux); skipped" >&2
		return 0
	fi
	# Under /var/tmp: the sandbox's /tmp is private, and the script it
	# runs lives here.
	local dir
	dir=$(mktemp -d /var/tmp/pv-bench-icpt.XXXXXX) || die "intercept: mktemp failed"
	chmod 755 "$dir"
	mkdir -p "$dir/certs"
	"$PASSAVANT_TOOLS/pv-certs" "$dir/certs" bench.test >/dev/null ||
		die "intercept: pv-certs failed"
	start_bg upstream-icpt "${pin_other[@]}" "$PASSAVANT_TOOLS/pv-upstream" \
		--listen 127.0.0.1:0 --tls "$dir/certs" || die "intercept: pv-upstream failed"
	local port=${ADDR##*:}
	printf '127.0.0.1 localhost\n127.0.0.1 bench.test\n' >"$dir/hosts"
	cat >"$dir/policy.yaml" <<EOP
network:
  allowedDomains: ["bench.test", "127.0.0.1"]
  tlsTerminate:
    extraCaCertPaths: ["$dir/certs/ca.pem"]
  limits:
    maxTunnels: 4096
EOP
	# The script inside: ROUNDS alternations, one result line each,
	# prefixed with the route.
	local load="${pin_other[*]} $PASSAVANT_TOOLS/pv-load"
	cat >"$dir/inside.sh" <<EOS
set -u
url=https://bench.test:$port/hello
for i in \$(seq $ROUNDS); do
	printf 'connect %s\n' "\$($load --url \$url --proxy 127.0.0.1:3128 --tls "\$SSL_CERT_FILE" -c 32 --new-conn -d $SECS 2>>/tmp/load.err)"
	printf 'intercept %s\n' "\$(env -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy $load --url \$url --tls "\$SSL_CERT_FILE" -c 32 --new-conn -d $SECS 2>>/tmp/load.err)"
done
head -n 5 /tmp/load.err >&2
EOS
	unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$dir/hosts" "${pin_proxy[@]}" "$PASSAVANT_BIN" run -q -p "$dir/policy.yaml" \
		-- sh "$dir/inside.sh" >"$dir/out" 2>"$dir/err" ||
		echo "bench: intercept: passavant run failed: $(tail -n 3 "$dir/err")" >&2
	while read -r route line; do
		case $route in
		connect) via_connect+=("$line") ;;
		intercept) via_icpt+=("$line") ;;
		esac
	done <"$dir/out"
	if [ -s "$dir/err" ]; then
		sed 's/^/    run: /' "$dir/err" | head -n 5 >&2
	fi
	printf '\n%-28s %-32s %-32s %s\n' "interception (in run)" "CONNECT (req/s p50ms p99ms)" \
		"intercepted (req/s p50ms p99ms)" "intercepted/CONNECT"
	printf '%-28s %-32s %-32s %s\n' "--------" "------" "-----" "-----"
	if [ "${#via_connect[@]}" -eq 0 ] || [ "${#via_icpt[@]}" -eq 0 ]; then
		printf '%-28s %s\n' "$name" "n/a (no result lines; see above)"
		rm -rf "$dir"
		return 0
	fi
	row "$name" rps "" "${#via_connect[@]}" "${via_connect[@]}" "${via_icpt[@]}"
	rm -rf "$dir"
}

bench_intercept

# shellcheck shell=bash disable=SC2034,SC2154  # sourced: run.sh defines and reads these
# tests/bench/bench-h2.sh - the HTTP/2 rows of issue 17, sourced by
# tests/bench/run.sh (BENCH_MODE=h2 runs it alone; docs/bench.md "HTTP/2").
# It shares run.sh's fixtures and helpers ($tmp, start_bg, median, field,
# row, cell, ratio_of, spread, with_cpu, cpu_suffix, proxy_ticks, die,
# $ONLY, $SECS, $ROUNDS, $MODE, pids) and shadows run.sh's PROXY_PID and
# pinning variables with function-local ones (bash scoping is dynamic:
# with_cpu() and proxy_ticks() then read this file's values).
#
# The configuration:
#   - upstream: nginx (ONE worker, worker_cpu_affinity and taskset on
#     CPU 1) from a temporary prefix, TLS (1.2 and 1.3) with `http2` on a
#     loopback listener, the test CA's leaf for bench.test, the small static
#     body of the peer rows (/hello, 6 bytes);
#   - direct: h2load (nghttp2-client) on CPU 1, to https://bench.test:PORT
#     with --connect-to 127.0.0.1:PORT (same SNI and :authority as the
#     proxied run);
#   - proxied: h2load cannot use an HTTP proxy, so it runs INSIDE
#     `passavant run` (pinned to CPU 0: the proxy runs in that process),
#     re-pinned to CPU 1 with taskset, and connects to bench.test:PORT by
#     name: the in-sandbox resolver and the nftables rule send it to the
#     proxy (interception), which terminates TLS and verifies nginx against
#     the test CA (extraCaCertPaths). The host resolves bench.test through a
#     hosts file bound in a private mount namespace (unshare -m), as
#     bench-intercept.sh does.
#   - h2load offers ALPN h2,h2-16,h2-14,http/1.1 (its default) on both
#     routes; the protocol each run negotiated ("Application protocol:")
#     is read from its output. A proxied run that did not get h2 shows no
#     ratio but "h2 not negotiated through the proxy".
# One `passavant run` session serves every round: the script inside reads
# one command per line on its stdin ("run C M"), runs h2load and answers
# with one result line; the host reads the proxy's CPU ticks
# (/proc/PID/stat of `passavant run`) before the command and after the
# answer. Each round: the direct run, then the proxied run. Median of
# ROUNDS rounds.
#
# Rows (names start with "h2"):
#   h2 c=1 m=32    one connection, 32 concurrent streams on it (issue 17's
#                  target: proxied >= 0.50 of direct)
#   h2 c=8 m=16    8 connections, 16 concurrent streams on each

H2_ROWS=("h2 c=1 m=32" "h2 c=8 m=16")

# h2_wanted: BENCH_ONLY names one of the rows (or is empty)
h2_wanted() {
	local n
	[ -z "$ONLY" ] && return 0
	for n in "${H2_ROWS[@]}"; do
		[[ "$n" == *"$ONLY"* ]] && return 0
	done
	return 1
}

# h2_summary OUT LOG: one result line in pv-load's format (rps= reqs=
# errors= secs= p50_ms= p99_ms=, plus mean_ms=, proto=, tls=) from h2load's
# output OUT and its --log-file LOG (one line per request: start, status,
# microseconds to the end of the response); nothing if no request got a
# 2xx. errors = requests without a 2xx. Percentiles are over the 2xx
# requests. Also runs inside the sandbox (declare -f): awk, sort only.
h2_summary() {
	local out=$1 log=$2 head pct
	head=$(awk '
		/^TLS Protocol:/ && tls == "" { tls = $3 }
		/^Application protocol:/ && proto == "" { proto = $3 }
		/^finished in / {
			d = $3; sub(/,$/, "", d)
			secs = d + 0
			if (d ~ /ms$/) secs /= 1000; else if (d ~ /us$/) secs /= 1e6
			rps = $4
		}
		/^requests: / { total = $2 }
		/^status codes: / { ok = $3 }
		END {
			if (secs == "" || ok + 0 == 0) exit 1
			printf "rps=%s reqs=%d errors=%d secs=%.3f proto=%s tls=%s", rps, total,
				total - ok, secs, (proto == "" ? "none" : proto), (tls == "" ? "none" : tls)
		}' "$out") || return 0
	pct=$(awk -F'\t' '$2 >= 200 && $2 < 300 { print $3 }' "$log" | sort -n | awk '
		function at(p,   i) { i = int(NR * p); if (i < NR * p) i++; if (i < 1) i = 1; return v[i] }
		{ v[NR] = $1; s += $1 }
		END {
			if (NR) printf "p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f", at(0.50) / 1000,
				at(0.99) / 1000, s / NR / 1000
		}')
	printf '%s %s\n' "$head" "$pct"
}

# h2_ready PORT: nginx_start()'s check: /hello over HTTP/2 by the name the
# rows use (h2_cert_dir: the test CA).
h2_ready() {
	local got
	got=$(curl -s --max-time 2 --http2 --cacert "$h2_cert_dir/ca.pem" -w ' %{http_version}' \
		--resolve "bench.test:$1:127.0.0.1" "https://bench.test:$1/hello" 2>/dev/null) || true
	if [ "$got" = "hello"$'\n'" 2" ]; then
		return 0
	fi
	# " 0": curl got no answer at all (nginx not listening yet): not ready
	if [ -n "$got" ] && [ "$got" != " 0" ]; then
		echo "bench: h2: nginx answered /hello without HTTP/2 (curl: '$got')" >&2
		return 2
	fi
	return 1
}

# h2_direct OUTVAR C M: h2load straight to nginx; its result line or "".
h2_direct() {
	local __out=$1 c=$2 m=$3 line rc=0
	timeout $((SECS + 60)) "${pin_other[@]}" h2load -c "$c" -m "$m" -D "$SECS" \
		--log-file="$h2_dir/direct.log" --connect-to="127.0.0.1:$H2_NGINX_PORT" "$h2_url" \
		</dev/null >"$h2_dir/direct.out" 2>&1 || rc=$?
	line=$(h2_summary "$h2_dir/direct.out" "$h2_dir/direct.log")
	if [ -z "$line" ] || [ "$rc" != 0 ]; then
		if [ -z "$line" ]; then
			echo "bench: h2: direct h2load -c $c -m $m completed no request (exit $rc); its output:" >&2
		else
			echo "bench: h2: direct h2load -c $c -m $m exited with $rc; its output:" >&2
		fi
		grep -v -E '^(starting|spawning|progress|Warm-up|Main benchmark|Stopped|time |req/s|traffic| )' \
			"$h2_dir/direct.out" | grep . | head -n 8 | sed 's/^/    h2load: /' >&2
	fi
	printf -v "$__out" '%s' "$line"
}

# h2_show_err: the lines of the session's stderr not shown yet (at most
# 12 of them), prefixed with "run: ".
h2_err_shown=0
h2_show_err() {
	local n
	n=$(wc -l <"$h2_dir/err" 2>/dev/null) || return 0
	if [ "$n" -gt "$h2_err_shown" ]; then
		tail -n +$((h2_err_shown + 1)) "$h2_dir/err" | head -n 12 | sed 's/^/    run: /' >&2
		h2_err_shown=$n
	fi
}

# h2_alive: the `passavant run` process is there and not a zombie (a
# zombie's /proc/PID/stat no longer counts the CPU it used).
h2_alive() {
	local state
	state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$PROXY_PID/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# h2_proxied OUTVAR C M: the same inside the `passavant run` session, with
# the proxy's CPU per request appended; "" if the session is gone or
# completed no request.
h2_proxied() {
	local __out=$1 c=$2 m=$3 t0 reply="" line=""
	if [ -n "$h2_in" ] && ! h2_alive; then
		echo "bench: h2: passavant run has ended; its stderr:" >&2
		h2_show_err
		h2_in=""
	fi
	if [ -n "$h2_in" ]; then
		t0=$(proxy_ticks)
		if { printf 'run %s %s\n' "$c" "$m" >&"$h2_in"; } 2>/dev/null &&
			read -r -t $((SECS + 90)) reply <&"$h2_out" && [[ "$reply" == result* ]]; then
			reply=${reply#result}
			line=$(with_cpu "${reply# }" "$t0" rps)
			# alive after with_cpu read the ticks: they were the live
			# process's
			if ! h2_alive; then
				echo "bench: h2: passavant run ended during 'run $c $m': no proxy CPU figure" >&2
				line=${reply# }
				h2_in=""
			fi
			if [ -z "$line" ]; then
				# the script inside said why on its stderr
				h2_show_err
			fi
		else
			echo "bench: h2: the passavant run session did not answer 'run $c $m'" \
				"with a result line (it said: \"$reply\"); its stderr:" >&2
			h2_show_err
			h2_in=""
		fi
	fi
	printf -v "$__out" '%s' "$line"
}

# h2_protos LINE...: the distinct proto= values of the non-empty lines,
# joined with "," (nothing if every line is empty).
h2_protos() {
	local l
	for l in "$@"; do
		if [ -n "$l" ]; then
			field proto "$l"
		fi
	done | sort -u | paste -sd,
}

# h2_row NAME C M [TARGET]: ROUNDS rounds of direct then proxied; one
# table row (TARGET, the ratio issue 17 asks for, is shown after the ratio).
h2_row() {
	local name=$1 c=$2 m=$3 target=${4:-} r d p ds=() ps=() protos dproto suffix
	if [ -n "$ONLY" ] && [[ "$name" != *"$ONLY"* ]]; then
		return 0
	fi
	for r in $(seq "$ROUNDS"); do
		h2_direct d "$c" "$m"
		ds+=("$d")
		h2_proxied p "$c" "$m"
		ps+=("$p")
		# a session that cannot do it once will not do it in later rounds
		if [ -z "$p" ] && [ "$r" = 1 ] && [ -n "$d" ]; then
			break
		fi
	done
	# protocol (and TLS version) of every run that completed, per side
	dproto=$(h2_protos "${ds[@]}")
	protos=$(h2_protos "${ps[@]}")
	local dm pm
	dm=$(field mean_ms "$(median rps "${ds[@]}")")
	pm=$(field mean_ms "$(median rps "${ps[@]}")")
	local dt pt
	dt=$(field tls "$(median rps "${ds[@]}")")
	pt=$(field tls "$(median rps "${ps[@]}")")
	suffix="; mean ${dm:-n/a} / ${pm:-n/a} ms; direct ${dproto:-none}${dt:+ $dt}"
	suffix="$suffix, proxied ${protos:-none}${pt:+ $pt}"
	if [ -n "$protos" ] && [ "$protos" = h2 ] && [ "$dproto" = h2 ]; then
		row "$name" rps "${target:+ (target >= $target)}$suffix$(cpu_suffix "${ps[@]}")" \
			"${#ds[@]}" "${ds[@]}" "${ps[@]}"
		return 0
	fi
	local why
	if [ -z "$protos" ]; then
		why="n/a: no request completed through the proxy (see above)"
	elif [ "$dproto" != h2 ]; then
		why="n/a: h2 not negotiated with nginx directly (${dproto:-no run completed})"
	else
		why="n/a: h2 not negotiated through the proxy (it used $protos)"
	fi
	printf '%-28s %s %s %s\n' "$name" "$(cell "$(median rps "${ds[@]}")" rps)" \
		"$(cell "$(median rps "${ps[@]}")" rps)" "$why$suffix$(cpu_suffix "${ps[@]}")"
}

h2_bench() {
	h2_wanted || return 0
	local pin_proxy=() pin_other=() affinity=""
	bench_pin h2 h2load || return 0
	command -v h2load >/dev/null || die "h2: no h2load; 'make bench-deps' (root) installs nghttp2-client"
	command -v nginx >/dev/null || die "h2: no nginx; 'make bench-deps' (root) installs nginx-light"
	command -v curl >/dev/null || die "h2: no curl; 'make deps' (root) installs it"
	command -v unshare >/dev/null || die "h2: no unshare; 'make deps' (root) installs util-linux"

	# Everything lives under run.sh's $tmp (removed by its cleanup): the
	# script the sandbox runs is passed as an argument (the sandbox's /tmp
	# is private), the rest is read on the host side.
	local h2_dir=$tmp/h2
	mkdir -p "$h2_dir/certs" "$h2_dir/nginx/html" "$h2_dir/nginx/tmp"
	"$PASSAVANT_TOOLS/pv-certs" "$h2_dir/certs" bench.test >/dev/null || die "h2: pv-certs failed"
	printf 'hello\n' >"$h2_dir/nginx/html/hello"
	local h2_cert_dir="$h2_dir/certs"
	nginx_start h2 "$h2_dir/nginx" "$h2_cert_dir" "$affinity" "ssl http2" \
		"		ssl_protocols TLSv1.2 TLSv1.3;" h2_ready || die "h2: nginx failed (see above)"
	local H2_NGINX_PORT=$NGINX_PORT
	local h2_url="https://bench.test:$H2_NGINX_PORT/hello"
	printf '127.0.0.1 localhost\n127.0.0.1 bench.test\n' >"$h2_dir/hosts"
	cat >"$h2_dir/policy.yaml" <<EOP
network:
  allowedDomains: ["bench.test", "127.0.0.1"]
  tlsTerminate:
    extraCaCertPaths: ["$h2_dir/certs/ca.pem"]
  limits:
    maxTunnels: 4096
EOP
	# The script inside: first one TLS-verified request with curl (the
	# session CA through the run's trust), which shows the protocol and the
	# issuer of the leaf it got (the session CA: the proxy terminated TLS)
	# and has the proxy make and cache the leaf for bench.test before any
	# timed run; then one h2load run per command. h2load itself does not
	# verify certificates.
	local inside
	inside=$(
		cat <<EOS
set -u
$(declare -f h2_summary)
if v=\$(curl -sS -v --http2 -o /dev/null -w '%{http_version}' $h2_url 2>/tmp/curl.err); then
	v="HTTP/\$v, leaf issued by \$(sed -n 's/^\*  issuer: //p' /tmp/curl.err | head -n 1)"
else
	v="failed: \$(grep -v '^[*<>{}]' /tmp/curl.err | head -c 300)"
fi
echo "ready curl \$v"
while read -r cmd c m; do
	[ "\$cmd" = run ] || exit 0
	timeout $((SECS + 60)) ${pin_other[*]} h2load -c "\$c" -m "\$m" -D $SECS --log-file=/tmp/h2.log \
		$h2_url </dev/null >/tmp/h2.out 2>&1
	line=\$(h2_summary /tmp/h2.out /tmp/h2.log)
	if [ -z "\$line" ]; then
		echo "h2load -c \$c -m \$m through the proxy completed no request; its output:" >&2
		grep -v -E '^(starting|spawning|progress|Warm-up|Main benchmark|Stopped|time |req/s|traffic| )' \
			/tmp/h2.out | grep . | head -n 8 >&2
	fi
	echo "result \$line"
done
EOS
	)
	# shellcheck disable=SC2016 # $1 and $@ are the inner sh's
	coproc H2RUN {
		exec unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" /etc/hosts && shift && exec "$@"' \
			sh "$h2_dir/hosts" "${pin_proxy[@]}" "$PASSAVANT_BIN" run -q -p "$h2_dir/policy.yaml" \
			-- bash -c "$inside" 2>"$h2_dir/err"
	}
	# h2_in is emptied when the session stops answering; h2_fd stays
	local PROXY_PID=$H2RUN_PID h2_in=${H2RUN[1]} h2_out=${H2RUN[0]} h2_fd=${H2RUN[1]} ready=""
	pids+=("$PROXY_PID")
	if ! read -r -t 60 ready <&"$h2_out" || [[ "$ready" != "ready curl "* ]]; then
		echo "bench: h2: passavant run did not start the script inside; its stderr:" >&2
		h2_show_err
		h2_in=""
		ready="ready curl (no session)"
	elif [ "$(cat "/proc/$PROXY_PID/comm" 2>/dev/null)" != passavant ]; then
		echo "bench: h2: process $PROXY_PID is not passavant run (its CPU would not be the" \
			"proxy's): the proxied runs are skipped" >&2
		h2_in=""
	fi

	echo
	echo "HTTP/2 (issue 17): h2load $(h2load --version | sed -n 's/.*nghttp2\///p') and" \
		"$(nginx -v 2>&1 | sed 's/^nginx version: //') (1 worker, http2) on CPU 1; proxied:" \
		"h2load inside passavant run (interception, TLS terminated), proxy on CPU 0;" \
		"ratio = proxied / direct, median of $ROUNDS; curl inside the run, verifying TLS:" \
		"${ready#ready curl }"
	printf '\n%-28s %-32s %-32s %s\n' "scenario" "direct  (req/s p50ms p99ms)" \
		"proxy   (req/s p50ms p99ms)" "ratio; mean ms; protocols"
	printf '%-28s %-32s %-32s %s\n' "--------" "------" "-----" "-----"
	h2_row "h2 c=1 m=32" 1 32 0.50
	h2_row "h2 c=8 m=16" 8 16

	if [ -n "$h2_in" ] && h2_alive; then
		{ printf 'quit\n' >&"$h2_in"; } 2>/dev/null || true
	fi
	# Closing our end ends the loop inside even without "quit". bash has
	# closed it already if the session ended.
	if [ -n "${H2RUN[1]:-}" ]; then
		exec {h2_fd}>&-
	fi
	local i
	for i in $(seq 100); do
		kill -0 "$PROXY_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$PROXY_PID" 2>/dev/null || true
	wait "$PROXY_PID" 2>/dev/null || true
	# what the session printed and was not shown yet (warnings)
	h2_show_err
}

h2_bench

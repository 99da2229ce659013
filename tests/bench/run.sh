#!/usr/bin/env bash
# tests/bench/run.sh - `make bench`: direct vs through-the-proxy figures,
# measured in the same run with the project's own load client (pv-load) and
# upstream (pv-upstream). Benchmarks are not timed tests: this prints
# figures and ratios; it fails only if the fixtures themselves cannot run.
#
# Environment:
#   PASSAVANT_BIN    passavant binary (required; the GNUmakefile sets it)
#   PASSAVANT_TOOLS  directory holding pv-upstream, pv-load, pv-certs, pv-relay,
#                    pv-tlsrelay, pv-machine (required)
#   BENCH_SECS       seconds per measurement (default 3)
#   BENCH_ROUNDS     direct and proxied measurements alternate this many
#                    times per scenario; the median of each side is shown,
#                    and the ratio is followed by the range of the rounds'
#                    own ratios (the machine's noise)
#                    (default 3; the machine is shared, one round is noisy)
#   PIN=1            pin the proxy, pv-relay, pv-tlsrelay to CPU 0 (taskset -c 0), pv-load
#                    and the upstreams to CPU 1; needs 2 CPUs and taskset
#   BENCH_ONLY       only scenarios whose name contains this string
#   BENCH_MODE       all (default): every scenario below and every
#                    tests/bench/bench-*.sh file; peer: only the peer
#                    comparison of tests/bench/bench-peer.sh (nginx upstream,
#                    proxy on CPU 0, client and nginx on CPU 1; docs/bench.md);
#                    h2: only the HTTP/2 rows of tests/bench/bench-h2.sh
#                    (h2load and nginx with http2 on CPU 1, h2load inside
#                    passavant run pinned to CPU 0; docs/bench.md)
#
# Request rows also show the proxy's CPU time (user+system, from
# /proc/PID/stat) per request, or per tunnel with --new-conn, and how busy
# that made the proxy's core (CPU time over the run's wall time), median of
# the proxied rounds.
# A scenario the proxy cannot do yet (pv-load completes no request through
# it) shows "n/a" in the proxy columns; errors are always shown.
# Adding a scenario is one line at the bottom: scenario NAME SCHEME ARGS...
# (or memory NAME COUNT SCHEME for the proxy's resident memory per open
# connection).
set -euo pipefail

: "${PASSAVANT_BIN:?PASSAVANT_BIN must name the passavant binary}"
: "${PASSAVANT_TOOLS:?PASSAVANT_TOOLS must name the test tools directory}"
SECS=${BENCH_SECS:-3}
HZ=$(getconf CLK_TCK)
ROUNDS=${BENCH_ROUNDS:-3}
PIN=${PIN:-0}
ONLY=${BENCH_ONLY:-}
MODE=${BENCH_MODE:-all}
case "$MODE" in
all | peer | h2) ;;
*)
	echo "bench: BENCH_MODE=$MODE is not a mode; use all (default), peer or h2" >&2
	exit 1
	;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pv-bench.XXXXXX")
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		# bounded wait: SIGKILL whatever has not stopped within 5 s
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "bench: $*" >&2
	exit 1
}

for t in pv-upstream pv-load pv-certs pv-relay pv-tlsrelay pv-machine; do
	[ -x "$PASSAVANT_TOOLS/$t" ] || die "missing $PASSAVANT_TOOLS/$t"
done

# CPU pinning
pin_proxy=()
pin_other=()
if [ "$PIN" = 1 ]; then
	if ! command -v taskset >/dev/null; then
		die "PIN=1 needs taskset"
	fi
	if [ "$(nproc)" -lt 2 ]; then
		die "PIN=1 needs 2 CPUs, this machine has $(nproc)"
	fi
	pin_proxy=(taskset -c 0)
	pin_other=(taskset -c 1)
fi

# start_bg NAME CMD... : runs CMD in the background (stdout to
# $tmp/NAME.out, stderr to $tmp/NAME.err), waits up to 10 s for its
# "listening on HOST:PORT" line and sets ADDR. Returns 1 if it never came.
ADDR=
start_bg() {
	local name=$1 pid
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do
		ADDR=$(sed -n 's/^listening on //p' "$tmp/$name.out" | head -n 1)
		[ -n "$ADDR" ] && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "bench: $name did not start; its stderr:" >&2
	sed 's/^/  /' "$tmp/$name.err" >&2
	return 1
}

# bench_pin NAME WHO: for rows that need the proxy on CPU 0 and WHO with
# nginx on CPU 1, sets the caller's pin_proxy, pin_other and affinity
# (nginx's CPU mask). Without taskset or a second CPU: ends the bench when
# BENCH_MODE is NAME, else says the rows are skipped and returns 1.
bench_pin() {
	if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
		pin_proxy=(taskset -c 0)
		pin_other=(taskset -c 1)
		affinity=10
		return 0
	fi
	[ "$MODE" = "$1" ] && die "$1: needs taskset and 2 CPUs (proxy on CPU 0, $2 and nginx on CPU 1)"
	echo "bench: $1: skipped: needs taskset and 2 CPUs (proxy on CPU 0, $2 and nginx on CPU 1)" >&2
	return 1
}

# nginx_start NAME PREFIX CERTS AFFINITY LISTEN EXTRA READY: the upstream
# nginx of the peer and HTTP/2 rows (the Debian package's binary, ONE
# worker, worker_cpu_affinity AFFINITY ("" for none), under
# ${pin_other[@]}), from PREFIX (html/ and tmp/ there) with its own
# nginx.conf: TLS with CERTS/server.pem, keep-alive without a request
# limit, no session cache or tickets, no access log; "listen
# 127.0.0.1:PORT LISTEN;" and the server lines EXTRA. READY PORT says
# whether it serves: 0 yes, 1 not yet, 2 wrongly (it says why). Sets
# NGINX_PORT. A port taken by someone else is retried with another one;
# any other failure returns 1 after showing nginx's log.
NGINX_PORT=
nginx_start() {
	local name=$1 prefix=$2 certs=$3 affinity=$4 listen=$5 extra=$6 ready=$7 port pid user="" st
	if [ "$(id -u)" = 0 ]; then
		# Workers would otherwise run as nobody, who cannot read $tmp.
		user="user $(id -un) $(id -gn);"
	fi
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		cat >"$prefix/nginx.conf" <<EOF
# written by tests/bench/run.sh for the $name rows
$user
worker_processes 1;
${affinity:+worker_cpu_affinity $affinity;}
worker_rlimit_nofile 8192;
pid $prefix/nginx.pid;
error_log $prefix/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $prefix/tmp/body;
	proxy_temp_path $prefix/tmp/proxy;
	fastcgi_temp_path $prefix/tmp/fastcgi;
	uwsgi_temp_path $prefix/tmp/uwsgi;
	scgi_temp_path $prefix/tmp/scgi;
	default_type application/octet-stream;
	keepalive_requests 1000000000;
	keepalive_timeout 600s;
	server {
		listen 127.0.0.1:$port $listen;
		ssl_certificate $certs/server.pem;
		ssl_certificate_key $certs/server.key;
		ssl_session_cache off;
		ssl_session_tickets off;
		root $prefix/html;
$extra
	}
}
EOF
		: >"$prefix/error.log"
		"${pin_other[@]}" nginx -p "$prefix/" -c "$prefix/nginx.conf" -e "$prefix/error.log" \
			-g 'daemon off;' >"$prefix/stdout" 2>&1 &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 100); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			st=0
			"$ready" "$port" || st=$?
			if [ "$st" = 0 ]; then
				NGINX_PORT=$port
				return 0
			fi
			[ "$st" = 2 ] && return 1
			sleep 0.1
		done
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		unset 'pids[-1]' # gone: cleanup must not signal a reused pid
		if ! grep -qs 'Address already in use' "$prefix/error.log" "$prefix/stdout"; then
			break
		fi
	done
	echo "bench: $name: nginx did not start from $prefix; its log:" >&2
	sed 's/^/  /' "$prefix/error.log" "$prefix/stdout" | head -n 20 >&2
	return 1
}

# ---------------------------------------------------------------- fixtures
mkdir -p "$tmp/certs"
"$PASSAVANT_TOOLS/pv-certs" "$tmp/certs" 127.0.0.1 localhost || die "pv-certs failed"

start_bg upstream-http "${pin_other[@]}" "$PASSAVANT_TOOLS/pv-upstream" --listen 127.0.0.1:0 ||
	die "pv-upstream (http) failed"
HTTP_ADDR=$ADDR
start_bg upstream-https "${pin_other[@]}" "$PASSAVANT_TOOLS/pv-upstream" --listen 127.0.0.1:0 \
	--tls "$tmp/certs" || die "pv-upstream (https) failed"
HTTPS_ADDR=$ADDR
RELAY_ADDR=
if start_bg relay "${pin_proxy[@]}" "$PASSAVANT_TOOLS/pv-relay" --listen 127.0.0.1:0 \
	--to "$HTTP_ADDR"; then
	RELAY_ADDR=$ADDR
else
	echo "bench: pv-relay did not start: no floor row" >&2
fi

cat >"$tmp/policy.yaml" <<EOF
network:
  allowedDomains: ["127.0.0.1"]
  tlsTerminate:
    extraCaCertPaths: ["$tmp/certs/ca.pem"]
  limits:
    maxTunnels: 4096
EOF

PROXY_ADDR=
PROXY_PID=
if start_bg proxy "${pin_proxy[@]}" "$PASSAVANT_BIN" proxy -p "$tmp/policy.yaml" \
	--listen 127.0.0.1:0 --session-dir "$tmp/session"; then
	PROXY_ADDR=$ADDR
	PROXY_PID=${pids[-1]}
else
	echo "bench: the proxy did not start: proxy columns are n/a" >&2
fi
# What a client of the proxy trusts: the session's trust.pem (session CA,
# system roots, extraCaCertPaths); without it, only the test CA (then TLS
# through the proxy works only for tunnels the proxy does not terminate).
PROXY_TRUST="$tmp/session/trust.pem"
[ -f "$PROXY_TRUST" ] || PROXY_TRUST="$tmp/certs/ca.pem"

# ---------------------------------------------------------------- measuring
# field NAME LINE: the value of NAME=... in a pv-load result line.
field() {
	sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"
}

# load OUTVAR ARGS...: runs pv-load, stores its result line in OUTVAR ("" if
# it completed no request); its stderr goes to $tmp/load.err and is shown
# when there were errors.
load() {
	local __out=$1 line rc=0
	shift
	line=$(timeout $((SECS + 120)) "${pin_other[@]}" "$PASSAVANT_TOOLS/pv-load" "$@" \
		2>"$tmp/load.err") || rc=$?
	if [ "$rc" != 0 ]; then
		line=""
	fi
	if [ -s "$tmp/load.err" ]; then
		sed 's/^/    pv-load: /' "$tmp/load.err" | head -n 5 >&2
	fi
	printf -v "$__out" '%s' "$line"
}

# median METRIC LINE...: the line whose METRIC is the median among the
# non-empty lines ("" if every line is empty).
median() {
	local metric=$1 l
	shift
	for l in "$@"; do
		if [ -n "$l" ]; then
			printf '%s\t%s\n' "$(field "$metric" "$l")" "$l"
		fi
	done | sort -g -k1,1 | awk -F'\t' '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

# cell LINE METRIC: "VALUE p50 p99 [E err]" or "n/a"
cell() {
	local line=$1 metric=$2 errs
	if [ -z "$line" ]; then
		printf '%-32s' "n/a"
		return
	fi
	errs=$(field errors "$line")
	if [ "$metric" = mbps ]; then
		printf '%-32s' "$(printf '%8s MB/s %s' "$(field mbps "$line")" \
			"$([ "$errs" != 0 ] && echo "($errs err)")")"
	else
		printf '%-32s' "$(printf '%8s %6s %7s %s' "$(field rps "$line")" \
			"$(field p50_ms "$line")" "$(field p99_ms "$line")" \
			"$([ "$errs" != 0 ] && echo "($errs err)")")"
	fi
}

header_printed=0
print_header() {
	[ "$header_printed" = 1 ] && return
	header_printed=1
	printf '\n%-28s %-32s %-32s %s\n' "scenario" "direct  (req/s p50ms p99ms)" \
		"proxy   (req/s p50ms p99ms)" "ratio"
	printf '%-28s %-32s %-32s %s\n' "--------" "------" "-----" "-----"
}

# ratio_of METRIC DIRECT_LINE PROXIED_LINE: proxied over direct ("" if either
# is missing or direct is 0).
ratio_of() {
	[ -n "$2" ] && [ -n "$3" ] || return 0
	awk -v d="$(field "$1" "$2")" -v p="$(field "$1" "$3")" \
		'BEGIN { if (d > 0) printf "%.2f", p / d }'
}

# spread METRIC N D1..DN P1..PN: "(rounds LO-HI)", the range of each round's
# own ratio (each proxied run over the direct run just before it): how much
# the machine moved. Empty with one round.
spread() {
	local metric=$1 n=$2 i q lo="" hi=""
	shift 2
	local all=("$@")
	for ((i = 0; i < n; i++)); do
		q=$(ratio_of "$metric" "${all[$i]}" "${all[$((n + i))]}")
		[ -n "$q" ] || continue
		if [ -z "$lo" ] || awk -v a="$q" -v b="$lo" 'BEGIN { exit !(a < b) }'; then lo=$q; fi
		if [ -z "$hi" ] || awk -v a="$q" -v b="$hi" 'BEGIN { exit !(a > b) }'; then hi=$q; fi
	done
	if [ "$ROUNDS" -gt 1 ] && [ -n "$lo" ]; then
		printf '(rounds %s-%s)' "$lo" "$hi"
	fi
}

# row NAME METRIC SUFFIX N D1..DN P1..PN: one table row, the medians of
# the direct and the proxied runs, their ratio, the rounds' spread and
# SUFFIX (after the ratio, when there is one).
row() {
	local name=$1 metric=$2 suffix=$3 n=$4 direct proxied ratio sp
	shift 4
	local all=("$@")
	direct=$(median "$metric" "${all[@]:0:n}")
	proxied=$(median "$metric" "${all[@]:n}")
	ratio=$(ratio_of "$metric" "$direct" "$proxied")
	if [ -n "$ratio" ]; then
		sp=$(spread "$metric" "$n" "$@")
		ratio="$ratio${sp:+ $sp}$suffix"
	else
		ratio="n/a"
	fi
	printf '%-28s %s %s %s\n' "$name" "$(cell "$direct" "$metric")" \
		"$(cell "$proxied" "$metric")" "$ratio"
}

# proxy_ticks: the proxy's user+system CPU so far, in clock ticks.
proxy_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PROXY_PID/stat" 2>/dev/null || echo 0
}

# with_cpu LINE T0 METRIC: LINE with "cpu_us=N" appended, the proxy's CPU
# per request (per tunnel with --new-conn) since T0 ticks, and "busy=P",
# that CPU time in percent of the run's wall time (secs=); LINE unchanged
# for transfers or when nothing completed.
with_cpu() {
	local line=$1 t0=$2 metric=$3 reqs
	if [ -z "$line" ] || [ "$metric" != rps ]; then
		printf '%s' "$line"
		return
	fi
	reqs=$(field reqs "$line")
	printf '%s %s' "$line" "$(awk -v a="$t0" -v b="$(proxy_ticks)" -v hz="$HZ" -v n="$reqs" \
		-v s="$(field secs "$line")" 'BEGIN {
			printf "cpu_us=%.1f busy=%.0f", (n > 0 ? (b - a) * 1e6 / hz / n : 0),
				(s > 0 ? (b - a) * 100 / hz / s : 0) }')"
}

# load_cpu VAR PID METRIC ARGS...: load VAR ARGS, then with_cpu for process
# PID over that run (nothing appended when PID is empty).
load_cpu() {
	local __v=$1 __pid=$2 __metric=$3 __t0=0 __line
	shift 3
	[ -z "$__pid" ] || __t0=$(PROXY_PID=$__pid proxy_ticks)
	load __line "$@"
	[ -z "$__pid" ] || __line=$(PROXY_PID=$__pid with_cpu "$__line" "$__t0" "$__metric")
	printf -v "$__v" '%s' "$__line"
}

# cpu_suffix [-t] LINE...: "; proxy CPU N us/req, core P% busy" (us/tunnel
# with -t), the median over the proxied rounds that carry cpu_us, or
# nothing. The CPU figure is clock ticks (1/HZ s) over the requests: with
# BENCH_SECS=1 and few requests it is coarse.
cpu_suffix() {
	local l unit=req
	if [ "${1:-}" = -t ]; then
		unit=tunnel
		shift
	fi
	l=$(median cpu_us "$@")
	[ -n "$l" ] && [ -n "$(field cpu_us "$l")" ] || return 0
	printf '; proxy CPU %s us/%s, core %s%% busy' "$(field cpu_us "$l")" "$unit" \
		"$(field busy "$l")"
}

# scenario NAME SCHEME [pv-load args...]
#   SCHEME http|https|http-tunnel (plain HTTP inside a CONNECT tunnel)
#   http+floor: http, and each round also measures pv-relay (a bare TCP
#   relay: one recv and one send per event, nothing parsed) between the
#   direct and the proxied run; a second row shows it. What the relay
#   loses against direct is the cost of one more loopback hop on this
#   machine, which no user-space proxy can avoid; proxy/relay is what is
#   left for the proxy's own work.
#   https+floor: https, and each round also measures pv-tlsrelay at
#   $TLS_FLOOR_ADDR (pid $TLS_FLOOR_PID; a bare TLS-terminating relay: one
#   SSL_read and one SSL_write per record, same TLS settings, nothing
#   parsed), with its CPU per request: what OpenSSL and the kernel cost
#   for a terminated hop; proxy/floor is what is left for the proxy.
# Runs pv-load directly against the upstream, then through the proxy, and
# prints one table row. --download/--upload rows compare MB/s, others req/s.
scenario() {
	local name=$1 scheme=$2 url direct proxied relayed metric=rps floor=0
	local floor_args=() floor_name="  bare TCP relay (floor)" floor_pid="" floor_vs=proxy/relay
	shift 2
	if [ -n "$ONLY" ] && [[ "$name" != *"$ONLY"* ]]; then
		return 0
	fi
	local direct_args=() proxy_args=()
	case "$scheme" in
	http | http+floor)
		url="http://$HTTP_ADDR/hello"
		proxy_args=(--proxy "$PROXY_ADDR")
		if [ "$scheme" = http+floor ] && [ -n "$RELAY_ADDR" ]; then
			floor=1
			# the relay forwards bytes to the upstream: the request is
			# the direct one, only the address differs
			floor_args=(--url "http://$RELAY_ADDR/hello")
		fi
		;;
	http-tunnel)
		url="http://$HTTP_ADDR/hello"
		proxy_args=(--proxy "$PROXY_ADDR" --connect-tunnel)
		;;
	https | https+floor)
		url="https://$HTTPS_ADDR/hello"
		direct_args=(--tls "$tmp/certs/ca.pem")
		proxy_args=(--proxy "$PROXY_ADDR" --tls "$PROXY_TRUST")
		if [ "$scheme" = https+floor ] && [ -n "${TLS_FLOOR_ADDR:-}" ]; then
			floor=1
			floor_name="  bare TLS relay (floor)"
			floor_vs=proxy/floor
			floor_pid=$TLS_FLOOR_PID
			floor_args=(--url "$url" --proxy "$TLS_FLOOR_ADDR" --tls "$tmp/certs/ca.pem")
		fi
		;;
	*) die "scenario $name: unknown scheme $scheme" ;;
	esac
	local time_args=(-d "$SECS")
	case " $* " in
	*" --download "* | *" --upload "*)
		metric=mbps
		time_args=() # transfers run to completion (pv-load's own bound)
		;;
	esac
	print_header
	local r ds=() ps=() rs=()
	for r in $(seq "$ROUNDS"); do
		load direct --url "$url" "${time_args[@]}" "${direct_args[@]}" "$@"
		ds+=("$direct")
		if [ "$floor" = 1 ]; then
			load_cpu relayed "$floor_pid" "$metric" "${floor_args[@]}" "${time_args[@]}" "$@"
			rs+=("$relayed")
		fi
		proxied=""
		if [ -n "$PROXY_ADDR" ]; then
			if ! kill -0 "$PROXY_PID" 2>/dev/null; then
				echo "bench: the proxy has exited; its stderr:" >&2
				tail -n 20 "$tmp/proxy.err" >&2
				PROXY_ADDR=""
			else
				load_cpu proxied "$PROXY_PID" "$metric" --url "$url" "${time_args[@]}" "${proxy_args[@]}" "$@"
			fi
		fi
		ps+=("$proxied")
		# a proxy that cannot do it once will not do it in later rounds
		if [ -z "$proxied" ] && [ "$r" = 1 ] && [ -n "$direct" ]; then
			break
		fi
	done
	local unit=()
	case " $* " in *" --new-conn "*) unit=(-t) ;; esac
	row "$name" "$metric" "$(cpu_suffix "${unit[@]}" "${ps[@]}")" "${#ds[@]}" "${ds[@]}" "${ps[@]}"
	[ "$floor" = 1 ] || return 0
	local pr
	pr=$(ratio_of "$metric" "$(median "$metric" "${rs[@]}")" "$(median "$metric" "${ps[@]}")")
	row "$floor_name" "$metric" "$(cpu_suffix "${unit[@]}" "${rs[@]}" | sed 's/^; proxy CPU/; floor CPU/')${pr:+; $floor_vs $pr}" \
		"${#ds[@]}" "${ds[@]}" "${rs[@]}"
}

# memory NAME COUNT SCHEME: the proxy's resident memory per open connection.
mem_runs=0
# A fresh proxy (so memory freed by earlier scenarios does not hide the
# cost) is started; pv-load opens COUNT connections through it, one request
# each, and holds them; VmRSS of the proxy is read before and while they
# are held.
memory() {
	local name=$1 n=$2 scheme=$3 ramp=${4:-} url base held settled released per sper rper rc=0
	local args=()
	if [ -n "$ONLY" ] && [[ "$name" != *"$ONLY"* ]]; then
		return 0
	fi
	print_header
	case "$scheme" in
	http) url="http://$HTTP_ADDR/hello" ;;
	http-tunnel)
		url="http://$HTTP_ADDR/hello"
		args=(--connect-tunnel)
		;;
	https)
		url="https://$HTTPS_ADDR/hello"
		args=(--tls "$PROXY_TRUST")
		;;
	*) die "memory $name: unknown scheme $scheme" ;;
	esac
	local mp maddr sdir
	mem_runs=$((mem_runs + 1))
	sdir="$tmp/session-mem-$mem_runs"
	if ! start_bg "proxy-mem-$mem_runs" "${pin_proxy[@]}" "$PASSAVANT_BIN" proxy \
		-p "$tmp/policy.yaml" --listen 127.0.0.1:0 --session-dir "$sdir"; then
		printf '%-28s %-32s %-32s %s\n' "$name" "-" "n/a" "-"
		return 0
	fi
	mp=${pids[-1]}
	maddr=$ADDR
	# A fresh proxy has its own session CA: trust its trust.pem.
	if [ "$scheme" = https ] && [ -f "$sdir/trust.pem" ]; then
		args=(--tls "$sdir/trust.pem")
	fi
	sleep 0.5
	base=$(awk '/^VmRSS/ { print $2 }' "/proc/$mp/status")
	# RAMP: the tunnels arrive over RAMP seconds instead of in one burst.
	[ -n "$ramp" ] && args+=(--ramp "$ramp")
	"${pin_other[@]}" "$PASSAVANT_TOOLS/pv-load" --url "$url" --proxy "$maddr" \
		-c "$n" --hold 8 "${args[@]}" >"$tmp/hold.out" 2>"$tmp/hold.err" &
	local lp=$!
	held=""
	for _ in $(seq 600); do
		if grep -qs '^pv-load: holding' "$tmp/hold.err"; then
			held=$(awk '/^VmRSS/ { print $2 }' "/proc/$mp/status")
			# Steady state: the proxy returns heap pages freed by
			# the handshakes 1 s after accepting stops (proxy.c).
			sleep 1.6
			settled=$(awk '/^VmRSS/ { print $2 }' "/proc/$mp/status" 2>/dev/null || true)
			# Each tunnel's upstream goes upstreamKeepAliveMs (5 s by
			# default) after its request, then the heap is trimmed 1 s
			# later: 6.6 s after the last tunnel was up.
			sleep 5
			released=$(awk '/^VmRSS/ { print $2 }' "/proc/$mp/status" 2>/dev/null || true)
			break
		fi
		kill -0 "$lp" 2>/dev/null || break
		sleep 0.1
	done
	wait "$lp" || rc=$?
	kill -TERM "$mp" 2>/dev/null || true
	wait "$mp" 2>/dev/null || true
	if [ -z "$held" ] || [ "$rc" != 0 ]; then
		{ grep -v '^pv-load: holding' "$tmp/hold.err" || true; } | head -n 5 | sed 's/^/    pv-load: /' >&2
		printf '%-28s %-32s %-32s %s\n' "$name" "-" "n/a" "-"
		return 0
	fi
	per=$(awk -v b="$base" -v h="$held" -v n="$n" 'BEGIN { printf "%.1f", (h - b) / n }')
	sper=$(awk -v b="$base" -v h="${settled:-0}" -v n="$n" 'BEGIN { if (h > 0) printf "%.1f", (h - b) / n; else printf "n/a" }')
	rper=$(awk -v b="$base" -v h="${released:-0}" -v n="$n" 'BEGIN { if (h > 0) printf "%.1f", (h - b) / n; else printf "n/a" }')
	printf '%-28s %-32s %-32s %s\n' "$name" "-" \
		"$(printf '%8s KiB/conn (RSS %s->%s KiB)' "$per" "$base" "$held")" \
		"settled 1.6 s later: $sper KiB/conn; 6.6 s later (idle upstreams closed, upstreamKeepAliveMs 5000): $rper KiB/conn"
}

echo "bench: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -srm), $(nproc) CPUs, ${SECS}s per measurement," \
	"median of $ROUNDS alternating rounds, PIN=$PIN, BENCH_MODE=$MODE, load $(cut -d' ' -f1-3 /proc/loadavg)"
version=$("$PASSAVANT_BIN" --version 2>/dev/null) || version="version unknown"
echo "bench: upstream http $HTTP_ADDR, https $HTTPS_ADDR; proxy ${PROXY_ADDR:-none}" \
	"(${version%%$'\n'*})"
# What the kernel charges here for a system call and a loopback round trip:
# the figures that move a relay's floor from one machine to another
# (docs/bench.md, "The machine line").
machine_args=()
[ "$PIN" = 1 ] && machine_args=(--pin)
if machine=$("$PASSAVANT_TOOLS/pv-machine" "${machine_args[@]}"); then
	echo "bench: $machine"
else
	echo "bench: pv-machine failed: no machine line" >&2
fi

# ---------------------------------------------------------------- scenarios
# One line each. SCHEME: http (absolute-form through the proxy), http-tunnel
# (CONNECT, plain HTTP inside), https (CONNECT + TLS, terminated by the proxy).
# memory NAME COUNT SCHEME [RAMP]: proxy RSS per held-open connection, the
# connections opened at once or, with RAMP, spread over RAMP seconds.
if [ "$MODE" = all ]; then
	scenario "http keep-alive c=1" http -c 1
	scenario "http keep-alive c=32" http+floor -c 32
	scenario "http in tunnel c=32" http-tunnel -c 32
	scenario "https keep-alive c=32" https -c 32
	scenario "https new tunnel c=32" https -c 32 --new-conn
	scenario "https download 64MiB" https --download 67108864 -n 3
	scenario "https upload 64MiB" https --upload 67108864 -n 3
	memory "http tunnels open x1000" 1000 http-tunnel
	memory "https tunnels open x1000" 1000 https
	memory "https tunnels x1000 over 20s" 1000 https 20
fi

# Further scenario files, one per feature (tests/bench/bench-*.sh), sourced
# here so they share the fixtures above (upstreams, proxy, helpers).
# BENCH_MODE=peer sources bench-peer.sh only, BENCH_MODE=h2 bench-h2.sh only.
for extra in "$(dirname "$0")"/bench-*.sh; do
	[ -f "$extra" ] || continue
	if [ "$MODE" != all ] && [ "$(basename "$extra")" != "bench-$MODE.sh" ]; then
		continue
	fi
	# shellcheck source=/dev/null
	. "$extra"
done

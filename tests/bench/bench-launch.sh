# tests/bench/bench-launch.sh - sourced by tests/bench/run.sh (shares its
# fixtures and helpers: $tmp, $PASSAVANT_BIN, $ONLY, die).
#
# Launch overhead of `passavant run`: wall time of
#   passavant run -p POLICY -- true
# against running true directly, each BENCH_LAUNCH_RUNS times (default 50),
# alternating, timed with bash's $EPOCHREALTIME (no fork for the clock).
# Prints the medians and the fastest runs; the issue's target is under
# 20 ms added. The policy is run.sh's (one allowed host, an extra CA), so
# the figure includes loading it, the session CA and trust.pem, the
# sandbox (namespaces, mounts, seccomp) and the teardown.

bench_launch() {
	local n=${BENCH_LAUNCH_RUNS:-50} i t0 t1 rc
	local direct=() sandboxed=()
	if [ -n "$ONLY" ] && [[ "launch" != *"$ONLY"* ]]; then
		return 0
	fi
	if [ -z "${EPOCHREALTIME:-}" ]; then
		echo "bench: launch: needs bash 5 (EPOCHREALTIME); skipped" >&2
		return 0
	fi
	rc=0
	"$PASSAVANT_BIN" run -q -p "$tmp/policy.yaml" -- true 2>"$tmp/launch.err" || rc=$?
	if [ "$rc" != 0 ]; then
		printf '\n%-28s %s\n' "launch: passavant run" "n/a (exit $rc: $(head -n 1 "$tmp/launch.err"))"
		return 0
	fi
	for i in $(seq "$n"); do
		t0=$EPOCHREALTIME
		true_bin=$(command -v true)
		"$true_bin"
		t1=$EPOCHREALTIME
		direct+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
		t0=$EPOCHREALTIME
		"$PASSAVANT_BIN" run -q -p "$tmp/policy.yaml" -- "$true_bin" 2>>"$tmp/launch.err" ||
			die "launch: passavant run failed on run $i: $(tail -n 1 "$tmp/launch.err")"
		t1=$EPOCHREALTIME
		sandboxed+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
	done
	local dmed smed dmin smin
	dmed=$(printf '%s\n' "${direct[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	smed=$(printf '%s\n' "${sandboxed[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	dmin=$(printf '%s\n' "${direct[@]}" | sort -g | head -n 1)
	smin=$(printf '%s\n' "${sandboxed[@]}" | sort -g | head -n 1)
	printf '\n%-28s %-32s %-32s %s\n' "launch (median of $n)" "direct true (ms)" \
		"passavant run -- true (ms)" "added (ms)"
	printf '%-28s %-32s %-32s %s\n' "--------" "------" "-----" "-----"
	printf '%-28s %-32s %-32s %s\n' "median" "$dmed" "$smed" \
		"$(awk -v d="$dmed" -v s="$smed" 'BEGIN { printf "%.1f (target < 20)", s - d }')"
	printf '%-28s %-32s %-32s %s\n' "fastest" "$dmin" "$smin" \
		"$(awk -v d="$dmin" -v s="$smin" 'BEGIN { printf "%.1f", s - d }')"
}

bench_launch

#!/usr/bin/env bash
# tests/build/fresh-machine.sh - the README's first commands on a machine
# that has none of the build packages, without needing such a machine.
#
# Stand-ins for pkg-config, dpkg-query and apt-get come first on PATH. They
# report every package missing (pkg-config finds nothing, dpkg-query knows
# no package, the llhttp sources are absent) until the stand-in apt-get has
# "installed" them; from then on they pass through to the real tools and
# llhttp's sources appear. So a GNUmakefile that reads its probed settings
# before installing the packages fails here as it fails on a fresh Debian.
#
# Scenarios, each from an empty build directory in a copy of the tree:
#   1. `make demo` as the very first command: installs, builds, runs the
#      demo (only the build step when user namespaces are unavailable).
#   2. A bare `make` (the default goal builds ./passavant), then `make
#      test-build` (make test's build step), interrupted once it has
#      compiled some objects, then `make test-build` again: the second run
#      must build everything that links, and nothing from the first run may
#      be trusted wrongly.
#   3. `make demo` again after 1: nothing left to build, the demo still runs.
# Environment: FRESH_OPT (compiler optimisation for the copies, default -O0:
# what is proved is the order of the build, not the code's speed), JOBS.
set -uo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
opt=${FRESH_OPT:--O0}
jobs=${JOBS:-2}
real_pkgconfig=$(command -v pkg-config) || { echo "fresh-machine: pkg-config is not installed; run 'make deps'" >&2; exit 1; }
real_llhttp_src=${LLHTTP_SRC:-/usr/share/llhttp}
real_llhttp_inc=${LLHTTP_INC:-/usr/share/include/llhttp}
[ -f "$real_llhttp_inc/llhttp.h" ] || { echo "fresh-machine: no llhttp.h in $real_llhttp_inc; run 'make deps'" >&2; exit 1; }

skip() { # REASON: counted like a CUnit skip (TEST_SKIP_LOG), refused in CI.
	echo "fresh-machine: SKIP: $1"
	if [ "${PASSAVANT_SANDBOX_MUST_WORK:-}" = 1 ]; then
		echo "fresh-machine: FAILED: a skip is refused with PASSAVANT_SANDBOX_MUST_WORK=1"
		exit 1
	fi
	[ -n "${TEST_SKIP_LOG:-}" ] && echo "fresh-machine: $1" >> "$TEST_SKIP_LOG"
	exit 0
}
# make deps installs only as root (the stand-in apt-get is reached after
# the same check as the real one).
[ "$(id -u)" = 0 ] || skip "needs root: make deps refuses to install otherwise"
demo_goal=demo
if ! unshare -Urmnpf --mount-proc true 2>/dev/null; then
	echo "fresh-machine: user namespaces unavailable: 'make demo-build' instead of 'make demo'"
	demo_goal=demo-build
fi

work=$(mktemp -d /var/tmp/pv-fresh.XXXXXX) || exit 1
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
fail=0
say() { printf 'fresh-machine: %s\n' "$*"; }
bad() { printf 'fresh-machine: FAILED: %s\n' "$*"; fail=1; }

# A fresh "machine": stand-in tools, an empty package state, no llhttp.
new_machine() {
	rm -rf "$work/bin" "$work/state" "$work/llhttp"
	mkdir -p "$work/bin" "$work/state" "$work/llhttp/src" "$work/llhttp/include"
	cat > "$work/bin/pkg-config" <<SH
#!/bin/sh
[ -e "$work/state/installed" ] && exec "$real_pkgconfig" "\$@"
echo "Package \$* was not found in the pkg-config search path (stand-in: not installed yet)" >&2
exit 1
SH
	cat > "$work/bin/dpkg-query" <<SH
#!/bin/sh
[ -e "$work/state/installed" ] && { printf 'install ok installed'; exit 0; }
echo "dpkg-query: no packages found matching (stand-in)" >&2
exit 1
SH
	cat > "$work/bin/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >> "$work/state/apt.log"
case "\$1" in
update) exit 0 ;;
install)
	cp "$real_llhttp_src"/*.c "$work/llhttp/src/" &&
	cp "$real_llhttp_inc"/*.h "$work/llhttp/include/" &&
	touch "$work/state/installed" ;;
*) exit 1 ;;
esac
SH
	chmod 755 "$work/bin/"*
}

# A copy of the tree with no build products.
new_tree() {
	rm -rf "$work/tree"
	mkdir -p "$work/tree"
	# The whole tree as a clone has it (every top-level folder, also ones
	# added later), without build products.
	(cd "$src" && tar cf - --exclude=./build --exclude='./build*' --exclude=./passavant \
		--exclude=./.git .) |
		(cd "$work/tree" && tar xf -) || return 1
}

run_make() { # LOG ARGS...
	local log=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$work/bin:$PATH" make -C "$work/tree" --no-print-directory -j"$jobs" OPT="$opt" \
		LLHTTP_SRC="$work/llhttp/src" LLHTTP_INC="$work/llhttp/include" "$@" >"$log" 2>&1
}

tail_log() { sed 's/^/    /' "$1" | tail -n 15; }

# 1. make demo, first command on a fresh machine.
new_machine
new_tree || { bad "cannot copy the tree"; exit 1; }
if run_make "$work/demo1.log" "$demo_goal"; then
	say "ok: 'make demo' as the first command on a machine without the packages"
else
	bad "'make demo' as the first command"
	tail_log "$work/demo1.log"
fi
grep -q "install" "$work/state/apt.log" 2>/dev/null || bad "the stand-in apt-get was never asked to install"

# 3. make demo again: nothing to rebuild, the demo still runs.
if run_make "$work/demo2.log" "$demo_goal"; then
	if grep -E '^(cc|gcc|ar) ' "$work/demo2.log" >/dev/null; then
		bad "'make demo' a second time rebuilt something"
		grep -E '^(cc|gcc|ar) ' "$work/demo2.log" | head -5 | sed 's/^/    /'
	else
		say "ok: 'make demo' a second time rebuilds nothing and runs"
	fi
else
	bad "'make demo' a second time"
	tail_log "$work/demo2.log"
fi

# 2. A bare `make` as the first command builds ./passavant (the default
# goal), then make test's build step, interrupted, then again.
new_machine
new_tree || { bad "cannot copy the tree"; exit 1; }
if run_make "$work/make.log" && "$work/tree/passavant" --version >/dev/null 2>&1; then
	say "ok: 'make' as the first command builds ./passavant"
else
	bad "'make' as the first command did not build a working ./passavant"
	tail_log "$work/make.log"
fi
(
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$work/bin:$PATH" make -C "$work/tree" --no-print-directory -j"$jobs" OPT="$opt" \
		LLHTTP_SRC="$work/llhttp/src" LLHTTP_INC="$work/llhttp/include" test-build \
		>"$work/int.log" 2>&1 &
	mpid=$!
	# Interrupt once a few objects exist (or the make ended on its own).
	for _ in $(seq 1 600); do
		n=$(find "$work/tree/build/asan" -name '*.o' 2>/dev/null | wc -l)
		[ "$n" -ge 8 ] && break
		kill -0 "$mpid" 2>/dev/null || break
		sleep 0.1
	done
	pkill -KILL -P "$mpid" 2>/dev/null
	kill -KILL "$mpid" 2>/dev/null
	# The compilers it started die with their make (SIGKILL leaves them
	# orphaned: kill what still runs in the copy).
	pkill -KILL -f "$work/tree" 2>/dev/null
	wait "$mpid" 2>/dev/null
	exit 0
)
n=$(find "$work/tree/build/asan" -name '*.o' 2>/dev/null | wc -l)
say "interrupted the first 'make test-build' with $n ASan objects built"
if run_make "$work/build2.log" test-build; then
	ok=1
	for f in plain/passavant plain/unit_tests plain/integration_tests asan/passavant \
		asan/unit_tests asan/integration_tests plain/tools/pv-upstream asan/tools/pv-probe; do
		[ -x "$work/tree/build/$f" ] || { bad "build/$f missing after 'make test-build'"; ok=0; }
	done
	if [ "$ok" = 1 ] && "$work/tree/build/plain/passavant" --version >/dev/null 2>&1; then
		say "ok: 'make test-build' after an interrupted first run"
	else
		bad "the binaries of 'make test-build' do not run"
	fi
else
	bad "'make test-build' after an interrupted first run"
	tail_log "$work/build2.log"
fi

if [ "$fail" = 0 ]; then say "all scenarios passed"; else say "some scenarios failed"; fi
exit "$fail"

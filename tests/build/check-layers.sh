#!/bin/bash
# check-layers.sh - fails when a source file includes against the layering
# of docs/architecture.md. An arrow is "may include"; a lower layer never
# includes a higher one, and a module is entered only through its public
# header:
#
#   base      <- every module                (base includes only base)
#   policy    <- mask, proxy, proxy/cli      (policy: base only)
#   ca        <- proxy, proxy/cli            (ca: base only)
#   sandbox   <- proxy/cli                   (sandbox: base only)
#   mask      <- proxy, proxy/cli            (mask: base, policy)
#   proxy     <- proxy/cli                   (proxy: base, policy, ca, mask)
#   proxy/cli: the top (the CLI and the policy-to-sandbox plan)
#   event2/bufferevent_struct.h (libevent internals): proxy/sockio.c only
#
# Usage: check-layers.sh [ROOT]       check the tree at ROOT (default: .)
#        check-layers.sh --self-test  plant bad includes in a copy of the
#                                     rules' examples and expect failures
set -u

# layer_of PATH (relative to the root): the layer a file belongs to.
layer_of() {
	case "$1" in
	base/*) echo base ;;
	policy/*) echo policy ;;
	ca/*) echo ca ;;
	sandbox/*) echo sandbox ;;
	mask/*) echo mask ;;
	proxy/cli/*) echo cli ;;
	proxy/*) echo proxy ;;
	*) echo other ;;
	esac
}

# allowed FROM TO: whether layer FROM may include layer TO.
allowed() {
	[ "$1" = "$2" ] && return 0
	case "$1:$2" in
	*:base) return 0 ;;
	mask:policy) return 0 ;;
	proxy:policy | proxy:ca | proxy:mask) return 0 ;;
	cli:*) return 0 ;;
	esac
	return 1
}

# public TO PATH: a header another module may include.
public() {
	case "$2" in
	base/*.h | policy/policy.h | mask/mask.h | ca/ca.h | sandbox/sandbox.h) return 0 ;;
	proxy/*.h) [ "$1" = cli ] ;; # the CLI is part of proxy/: it sees its headers
	*) return 1 ;;
	esac
}

check_tree() {
	local root=$1 bad=0 n=0 f inc dir target from to
	cd "$root" || return 2
	while IFS= read -r f; do
		n=$((n + 1))
		from=$(layer_of "$f")
		dir=$(dirname "$f")
		while IFS= read -r inc; do
			# "x.h" is looked up beside the file, then from the root (-I.).
			if [ -e "$dir/$inc" ]; then
				target=$(realpath -m --relative-to=. "$dir/$inc")
			else
				target=$(realpath -m --relative-to=. "$inc")
			fi
			to=$(layer_of "$target")
			if [ "$to" = other ]; then
				echo "check-layers: $f includes \"$inc\", outside every module" >&2
				bad=$((bad + 1))
			elif ! allowed "$from" "$to"; then
				echo "check-layers: $f ($from) includes \"$inc\" ($to): $from may not depend on $to" >&2
				bad=$((bad + 1))
			elif [ "$from" != "$to" ] && ! public "$from" "$target"; then
				echo "check-layers: $f includes \"$inc\", not the public header of $to" >&2
				bad=$((bad + 1))
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done < <(find base policy ca sandbox mask proxy -name '*.[ch]' 2>/dev/null | sort)
	# libevent's private layout: one file, behind its version check.
	while IFS= read -r f; do
		[ "$f" = proxy/sockio.c ] && continue
		echo "check-layers: $f includes event2/bufferevent_struct.h (libevent internals belong to proxy/sockio.c alone)" >&2
		bad=$((bad + 1))
	done < <(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<event2/bufferevent_struct\.h>' base policy ca sandbox mask proxy 2>/dev/null | sort)
	if [ "$bad" -gt 0 ]; then
		echo "check-layers: $bad include(s) against the layering of docs/architecture.md" >&2
		return 1
	fi
	echo "check-layers: $n files, every include goes down the layers"
}

self_test() {
	local fail=0 plant
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	for plant in 'policy/x.c:#include "../mask/mask.h"' \
		'sandbox/x.c:#include "policy/policy.h"' \
		'ca/x.c:#include "../proxy/conn.h"' \
		'base/x.c:#include "../policy/policy.h"' \
		'proxy/x.c:#include "../sandbox/sandbox.h"' \
		'proxy/x.c:#include "cli/main.h"' \
		'mask/x.c:#include "../ca/ca_int.h"' \
		'proxy/x.c:#include "../ca/ca_int.h"' \
		'proxy/x.c:#include <event2/bufferevent_struct.h>'; do
		rm -rf "$tmp/t" && mkdir -p "$tmp/t" || exit 2
		(cd "$(dirname "$0")/../.." && cp -r base policy ca sandbox mask proxy "$tmp/t/") || exit 2
		mkdir -p "$tmp/t/proxy/cli" && : > "$tmp/t/proxy/cli/main.h"
		printf '%s\n' "${plant#*:}" > "$tmp/t/${plant%%:*}"
		if (check_tree "$tmp/t") 2>/dev/null >/dev/null; then
			echo "check-layers self-test: planted ${plant} was not reported" >&2
			fail=1
		fi
	done
	rm -rf "$tmp/t" && mkdir -p "$tmp/t" && (cd "$(dirname "$0")/../.." && cp -r base policy ca sandbox mask proxy "$tmp/t/")
	if ! (check_tree "$tmp/t") >/dev/null; then
		echo "check-layers self-test: the unchanged tree fails" >&2
		fail=1
	fi
	[ $fail = 0 ] && echo "check-layers self-test: 9 planted bad includes reported, the tree itself passes"
	return $fail
}

if [ "${1:-}" = --self-test ]; then
	self_test
else
	check_tree "${1:-.}"
fi

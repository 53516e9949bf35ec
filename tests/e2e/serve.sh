#!/usr/bin/env bash
# kbench serve over a store-fixture store: the index lists what the store
# holds, /compare and /trend render the html reports, bad requests are 400 with the
# message, unknown paths 404, other methods 405; the store file is never
# written; a store that does not exist is refused before serving.
source "$(dirname "$0")/lib.bash"
: "${STORE_FIXTURE:?path to store-fixture}"
DB="$WORK/results.db"
cat >"$WORK/spec.json" <<'JSON'
{"sut": "vm", "sut_class": "lab-small", "sessions": [
  {"swprofile": "base", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [100, 101, 99, 100]}]}]},
  {"swprofile": "base", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [100, 102, 98, 101]}]}]},
  {"swprofile": "slow", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [130, 131, 129, 130]}]}]},
  {"swprofile": "slow", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [131, 130, 132, 129]}]}]}]}
JSON
"$STORE_FIXTURE" "$DB" "$WORK/spec.json" >"$WORK/fixture.out" 2>&1 || { cat "$WORK/fixture.out" >&2; exit 1; }
before=$(sha256sum <"$DB")

# Silent connections are kept 10 minutes, longer than any page here takes
# on a loaded machine (see the idle connections below).
start_serve "sqlite://$DB" --idle-timeout 600
[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]] && pass || fail "first line is not the URL: $URL"

# fetch PATH [curl options]: the body in $WORK/body, the status echoed.
fetch() {
  local path=$1; shift
  curl -s -o "$WORK/body" -w '%{http_code}' "$@" "${URL%/}$path"
}
expect_status() {
  local want=$1 got=$2 what=$3
  [ "$got" = "$want" ] && pass || { fail "$what: HTTP $got, expected $want"; grep -o '<p class="error">[^<]*' "$WORK/body" >&2; }
}

expect_status 200 "$(fetch /)" "GET /"
expect_contains "$WORK/body" "<td>base</td>"
expect_contains "$WORK/body" "<td>slow</td>"
expect_contains "$WORK/body" "lab-small"            # the SUT's class
expect_contains "$WORK/body" 'name="base"'          # the forms
expect_contains "$WORK/body" 'action="/trend"'
cp "$WORK/body" "$WORK/index.html"

expect_status 200 "$(fetch '/compare?base=base&test=slow&benchmark=syscall/*')" "GET /compare"
expect_contains "$WORK/body" "<html"
expect_contains "$WORK/body" "syscall/getpid"
grep -qi 'content-type: text/html' <(curl -sI "${URL%/}/compare?base=base&test=slow") && pass \
  || fail "/compare is not served as text/html"

expect_status 200 "$(fetch '/trend?swprofile=*&order=store&benchmark=')" "GET /trend"
expect_contains "$WORK/body" "syscall/getpid"
expect_contains "$WORK/body" '<a href="/">'          # the way back to the index
expect_status 400 "$(fetch '/trend?swprofile=nosuch')" "a trend of no swprofile"
expect_contains "$WORK/body" "--swprofile nosuch: matches no swprofile"
expect_status 400 "$(fetch '/trend?benchmark=x')" "a trend without swprofile"
expect_contains "$WORK/body" "parameter &#39;swprofile&#39;: expected a glob"

expect_status 400 "$(fetch '/compare?base=base&test=nosuch')" "a swprofile the store lacks"
expect_contains "$WORK/body" "swprofile &#39;nosuch&#39; is not in"
expect_status 400 "$(fetch '/compare?base=base')" "no test"
expect_contains "$WORK/body" "parameter &#39;test&#39;: expected at least one swprofile"
# The rule compare's command line follows too: no profile against itself.
# (A test given twice never reaches it: cpp-httplib keeps one of identical
# key=value pairs, so ?test=slow&test=slow is one column.)
expect_status 400 "$(fetch '/compare?base=base&test=base')" "the base as test"
expect_contains "$WORK/body" "compare: &#39;base&#39; is the base and a test swprofile"
expect_status 400 "$(fetch '/compare?base=base&test=slow&benchmark=%5Bx')" "a bad glob"
expect_contains "$WORK/body" "benchmark &#39;[x&#39;: expected a glob"
expect_status 400 "$(fetch '/compare?base=base&test=slow&bench=x')" "an unknown parameter"
expect_contains "$WORK/body" "unknown parameter &#39;bench&#39;"
expect_status 404 "$(fetch /nosuch)" "an unknown path"
expect_status 405 "$(fetch /compare -X POST -d x=1)" "POST"
expect_status 405 "$(fetch / -X TRACE)" "TRACE"
grep -qi '^allow: GET, HEAD' <(curl -s -D - -o /dev/null -X DELETE "${URL%/}/") && pass || fail "405 without Allow"
# A store that goes away under the server is the store's fault: 500, with the message.
mv "$DB" "$WORK/moved.db"
expect_status 500 "$(fetch /)" "the store gone"
expect_contains "$WORK/body" "results.db does not exist"
expect_status 500 "$(fetch '/compare?base=base&test=slow')" "compare, the store gone"
mv "$WORK/moved.db" "$DB"
expect_status 200 "$(fetch /)" "GET / after the errors"   # still serving

# Idle connections (a browser's kept-alive ones, a port scan) must not hold
# up a page: with 40 open and silent, the page comes while all 40 are still
# open. With --idle-timeout 600 the server gives up on none of them before
# the fetch's own 120 s timeout, so a pool too small for 40 would make the
# fetch fail, however fast or slow the machine is.
idle=$(/usr/bin/python3 - "$URL" <<'PY'
import socket, sys, urllib.parse, urllib.request
url = urllib.parse.urlparse(sys.argv[1])
idle = [socket.create_connection((url.hostname, url.port)) for _ in range(40)]
urllib.request.urlopen(sys.argv[1], timeout=120).read()
still_open = 0
for s in idle:
    s.setblocking(False)
    try:
        still_open += s.recv(1) != b""
    except BlockingIOError:
        still_open += 1
print(still_open)
PY
)
[ "$idle" = 40 ] && pass || fail "the page came after the server had closed $((40 - ${idle:-0})) of 40 idle connections"

kill -TERM "$SERVER"
wait "$SERVER"
status=$?
SERVER=
[ "$status" -eq 0 ] && pass || fail "serve exited $status on SIGTERM: $(cat "$WORK/serve.err")"
[ "$(sha256sum <"$DB")" = "$before" ] && pass || fail "the store file changed while served"

expect_bad_input "serve a store that does not exist" "$KBENCH" serve --store "sqlite://$WORK/nosuch.db" --listen 127.0.0.1:0
[ -e "$WORK/nosuch.db" ] && fail "serve created the missing store" || pass
expect_bad_input "serve --listen without a port" "$KBENCH" serve --store "sqlite://$DB" --listen 127.0.0.1
expect_bad_input "serve --listen port out of range" "$KBENCH" serve --store "sqlite://$DB" --listen 127.0.0.1:70000

# A non-loopback address only when asked for, and then with a warning.
"$KBENCH" serve --store "sqlite://$DB" --listen 0.0.0.0:0 >"$WORK/any.out" 2>"$WORK/any.err" &
ANY=$!
for _ in $(seq 600); do [ -s "$WORK/any.out" ] && break; kill -0 "$ANY" 2>/dev/null || break; sleep 0.1; done
kill -INT "$ANY"; wait "$ANY"
status=$?
[ "$status" -eq 0 ] && pass || fail "serve exited $status on SIGINT"
expect_contains "$WORK/any.err" "warning: listening on 0.0.0.0, not loopback"
grep -q warning "$WORK/serve.err" && fail "a warning on loopback: $(cat "$WORK/serve.err")" || pass
finish

#!/usr/bin/env bash
# kbench serve over a PostgreSQL store (the store-fixture store merged into
# one): the index lists its swprofiles, /compare renders the report, and the
# store's content is the same afterwards (it is opened read-only).
source "$(dirname "$0")/lib.bash"
: "${STORE_FIXTURE:?path to store-fixture}"
postgres_store PG kbench_serve
cat >"$WORK/spec.json" <<'JSON'
{"sut": "pg-vm", "sessions": [
  {"swprofile": "base", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [100, 101, 99]}]}]},
  {"swprofile": "base", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [100, 102, 98]}]}]},
  {"swprofile": "slow", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [130, 131, 129]}]}]},
  {"swprofile": "slow", "benchmarks": [{"name": "syscall/getpid", "results": [
    {"class": "mean", "unit": "ns", "better": "lower", "values": [131, 130, 132]}]}]}]}
JSON
"$STORE_FIXTURE" "$WORK/fixture.db" "$WORK/spec.json" >"$WORK/fixture.out" 2>&1 || { cat "$WORK/fixture.out" >&2; exit 1; }
"$KBENCH" merge "sqlite://$WORK/fixture.db" "$PG" >"$WORK/merge.out" 2>&1 || { cat "$WORK/merge.out" >&2; exit 1; }
"$KBENCH" export --store "$PG" --format json >"$WORK/before.json" || fail "export before exited $?"

start_serve "$PG"

status=$(curl -s -o "$WORK/index.html" -w '%{http_code}' "$URL")
[ "$status" = 200 ] && pass || fail "GET / over PostgreSQL: HTTP $status"
expect_contains "$WORK/index.html" "<td>slow</td>"
expect_contains "$WORK/index.html" "<td>pg-vm</td>"
status=$(curl -s -o "$WORK/compare.html" -w '%{http_code}' "${URL}compare?base=base&test=slow")
[ "$status" = 200 ] && pass || { fail "GET /compare over PostgreSQL: HTTP $status"; grep -o '<p class="error">[^<]*' "$WORK/compare.html" >&2; }
expect_contains "$WORK/compare.html" "syscall/getpid"

kill -TERM "$SERVER"
wait "$SERVER" && pass || fail "serve exited $? on SIGTERM: $(cat "$WORK/serve.err")"
SERVER=
"$KBENCH" export --store "$PG" --format json >"$WORK/after.json" || fail "export after exited $?"
cmp -s "$WORK/before.json" "$WORK/after.json" && pass || fail "the PostgreSQL store changed while served"
finish

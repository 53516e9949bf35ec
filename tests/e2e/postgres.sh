#!/usr/bin/env bash
# Every command against a PostgreSQL store (a fresh database on the server of
# scripts/pg-test-server.sh; make test starts one): run, list, show, compare,
# export, noise, session show/delete; a password in the URL and a missing
# database are bad input that echo no password, an unreachable server a failure.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
postgres_store S kbench_e2e
DBNAME=${S##*/}
sql() { psql "$S" -Atqc "$1"; }

# A database without kbench's tables holds nothing to resume: said as such,
# not as a store that cannot be read.
printf 'swprofiles:\n  - {name: A}\nbenchmarks:\n  - {name: selftest/sleep, params: {ms: "2"}, repeats: 1, warmups: 0}\n' \
  >"$WORK/resume.yaml"
expect_bad_input "plan exec --resume on an empty database" "$KBENCH" plan exec "$WORK/resume.yaml" --resume --store "$S"
expect_contains "$WORK/err" "no interrupted run of plan"

run_profile() {
  "$KBENCH" run --swprofile "$1" --benchmark selftest/sleep --param ms=2 --sessions 2 --repeats 3 --warmups 0 \
    --store "$S" >"$WORK/run-$1.out" 2>"$WORK/run-$1.err" || fail "kbench run $1 exited $?: $(tail -3 "$WORK/run-$1.err")"
}
run_profile A
run_profile B
[ "$(sql "select count(*) from session")" -eq 4 ] && pass || fail "expected 4 sessions in $DBNAME"

"$KBENCH" list sessions --store "$S" >"$WORK/sessions.out" 2>&1 || fail "list sessions exited $?"
[ "$(grep -c '^A ' "$WORK/sessions.out")" -eq 2 ] && pass || fail "list sessions: $(cat "$WORK/sessions.out")"
for what in sut swprofile benchmark; do
  "$KBENCH" list "$what" --store "$S" >"$WORK/list-$what.out" 2>&1 || fail "list $what exited $?"
done
expect_contains "$WORK/list-swprofile.out" "B"
expect_contains "$WORK/list-benchmark.out" "selftest/sleep"
"$KBENCH" show A --store "$S" >"$WORK/show.out" 2>&1 || fail "show exited $?: $(cat "$WORK/show.out")"
expect_contains "$WORK/show.out" "selftest/sleep"
"$KBENCH" compare A B --store "$S" >"$WORK/compare.out" 2>&1 || fail "compare exited $?: $(cat "$WORK/compare.out")"
expect_contains "$WORK/compare.out" "selftest/sleep"
"$KBENCH" noise A --store "$S" >"$WORK/noise.out" 2>&1 || fail "noise exited $?: $(cat "$WORK/noise.out")"
expect_contains "$WORK/noise.out" "(2 sessions"
"$KBENCH" export --store "$S" >"$WORK/export.csv" 2>"$WORK/export.err" || fail "export exited $?"
rows=$(($(wc -l <"$WORK/export.csv") - 1))
stored=$(sql "select count(*) from result")
[ "$rows" -eq "$stored" ] && [ "$rows" -gt 0 ] && pass || fail "export wrote $rows rows, the store has $stored"
"$KBENCH" session show A 1 --store "$S" >"$WORK/session.out" 2>&1 || fail "session show exited $?"
expect_contains "$WORK/session.out" "selftest/sleep"
"$KBENCH" session delete A 2 --yes --store "$S" >"$WORK/delete.out" 2>&1 || fail "session delete exited $?: $(cat "$WORK/delete.out")"
[ "$(sql "select count(*) from session")" -eq 3 ] && pass || fail "session delete left $(sql "select count(*) from session") sessions"

# --- bad input: one line, exit 2, no password anywhere ------------------------------
expect_bad_input "password in the URL" "$KBENCH" list sessions --store "postgresql://kbench:hunter2@127.0.0.1:1/x"
if grep -q hunter2 "$WORK/err"; then fail "the password was echoed: $(cat "$WORK/err")"; else pass; fi
expect_bad_input "password parameter" "$KBENCH" run --swprofile A --benchmark selftest/sleep \
  --store "postgres://kbench@127.0.0.1:1/x?password=hunter2"
if grep -q hunter2 "$WORK/err"; then fail "the password was echoed: $(cat "$WORK/err")"; else pass; fi
# A server that cannot be reached is a failure (exit 1), not bad input; one
# that answers and refuses the URL's database is bad input.
for command in "list sessions" "run --swprofile A --benchmark selftest/sleep"; do
  # shellcheck disable=SC2086
  "$KBENCH" $command --store "postgresql://kbench@127.0.0.1:1/results" >"$WORK/out" 2>"$WORK/err"
  status=$?
  [ "$status" -eq 1 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && [ ! -s "$WORK/out" ] && pass \
    || fail "$command on an unreachable server: exit $status, expected 1 with one line: $(cat "$WORK/err")"
  expect_contains "$WORK/err" "postgresql://kbench@127.0.0.1:1/results: cannot connect"
done
expect_bad_input "missing database" "$KBENCH" list sessions --store "${S%/*}/kbench_e2e_missing_$$"
expect_contains "$WORK/err" "cannot connect"
expect_contains "$WORK/err" "kbench_e2e_missing_$$"
EMPTY="kbench_e2e_empty_$$_$RANDOM"
psql "$KBENCH_TEST_POSTGRES" -qc "CREATE DATABASE $EMPTY"
expect_bad_input "database without a store" "$KBENCH" compare A B --store "${S%/*}/$EMPTY"
[ "$(psql "${S%/*}/$EMPTY" -Atqc "select count(*) from pg_tables where schemaname = 'public'")" -eq 0 ] && pass \
  || fail "compare created tables in an empty database"
psql "$KBENCH_TEST_POSTGRES" -qc "DROP DATABASE $EMPTY WITH (FORCE)"
finish

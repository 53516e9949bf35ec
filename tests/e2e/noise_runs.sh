#!/usr/bin/env bash
# `kbench noise` reports the run-to-run noise: with swprofile A measured by one
# `kbench run` it says plainly that the noise between runs is unknown; a second
# `kbench run --swprofile A` appends sessions to A in a run of their own (same
# kernel), and noise then shows the run cv and the floor of separate runs.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
export KBENCH_STORE="sqlite://$DB"

run_a() {
  "$KBENCH" run --swprofile A --benchmark selftest/sleep --param ms=5 --sessions 2 --repeats 2 --warmups 0 \
    >"$WORK/run.out" 2>"$WORK/run.err" || fail "kbench run A exited $?: $(tail -3 "$WORK/run.err")"
}

# --- one run: the run-to-run noise is unknown, and noise says so once --------------
run_a
"$KBENCH" noise A >"$WORK/one.out" 2>"$WORK/err" || fail "noise A (1 run) exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/one.out" "(2 sessions; 0 other profiles"
expect_contains "$WORK/one.out" "Run-to-run noise: unknown (no kernel on this SUT was measured in 2 runs; kbench calibrate measures it) - comparisons of separate runs are not tested."
[ "$(grep -c 'Run-to-run noise' "$WORK/one.out")" -eq 1 ] && pass || fail "the unknown run noise is not said exactly once"
"$KBENCH" noise A --format json >"$WORK/one.json" 2>&1 || fail "noise A --format json exited $?"
/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tables"][0]
assert t["rows_runs_unknown"] == 1 and "2 runs" in t["run_noise_unknown"], t
assert t["rows"][0]["run_noise"] is None and t["rows"][0]["noise_floor_runs_pct"] is None, t["rows"][0]
' "$WORK/one.json" && pass || fail "noise json of one run: run noise not null/unknown"

# --- a second run of the same kernel: sessions appended to A, 2 runs -------------------
run_a
"$KBENCH" list sessions --swprofile A >"$WORK/sessions.out" 2>&1 || fail "list sessions exited $?"
[ "$(grep -c '^A ' "$WORK/sessions.out")" -eq 4 ] && pass \
  || fail "two kbench runs of 2 sessions left A with $(grep -c '^A ' "$WORK/sessions.out") sessions, expected 4: $(cat "$WORK/sessions.out")"
runs=$(sqlite3 "$DB" "select count(distinct json_extract(fingerprint, '\$.plan.run')) from session")
[ "$runs" -eq 2 ] && pass || fail "the two kbench runs are $runs runs in the fingerprints, expected 2"
"$KBENCH" noise A >"$WORK/two.out" 2>"$WORK/err" || fail "noise A (2 runs) exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/two.out" "(4 sessions; 0 other profiles"
expect_contains "$WORK/two.out" " run cv |"
expect_contains "$WORK/two.out" " floor runs |"
expect_contains "$WORK/two.out" "2 runs, "
expect_contains "$WORK/two.out" "floor runs: the floor for two separate runs"
grep -q "Run-to-run noise" "$WORK/two.out" && fail "noise A still calls the run noise unknown with 2 runs" || pass
"$KBENCH" noise A --format csv >"$WORK/two.csv" 2>&1 || fail "noise A --format csv exited $?"
/usr/bin/python3 -c '
import csv, sys
header = next(csv.reader(open(sys.argv[1])))
assert header[-4:] == ["run_cv_pct", "run_df", "runs", "noise_floor_runs_pct"], header
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
assert float(r["run_df"]) == 1 and int(r["runs"]) == 2, r
assert float(r["run_cv_pct"]) >= 0, r
assert float(r["noise_floor_runs_pct"]) >= float(r["noise_floor_pct"]) > 0, r
' "$WORK/two.csv" && pass || fail "noise csv of 2 runs: run noise missing or wrong: $(cat "$WORK/two.csv")"

finish

#!/usr/bin/env bash
# Runs in compare (docs/statistics.md, "Runs"), end to end on real sessions:
# two separate `kbench run`s are not tested while no kernel on the SUT was
# measured in 2 runs; `kbench calibrate` (paused sessions are runs of their
# own) gives the run noise, after which the same comparison is tested with a
# run term; a run under a seccomp filter is another kernel, and says so.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
TAXER="$(dirname "$KBENCH")/bench/seccomp-tax"
run_sleep() {  # run_sleep PROFILE [wrapper...]: 2 sessions of selftest/sleep, one run
  local profile=$1; shift
  "$@" "$KBENCH" run --swprofile "$profile" --suite quick --benchmark selftest/sleep --sessions 2 --sut vm \
    --store "$S" >"$WORK/$profile.out" 2>"$WORK/$profile.err" ||
    fail "kbench run $profile exited $?: $(tail -3 "$WORK/$profile.err")"
}
# One column of the compare csv, by header name (fields may be quoted).
csv_column() {  # csv_column FILE NAME
  /usr/bin/python3 -c 'import csv, sys
for row in csv.DictReader(open(sys.argv[1])): print(row[sys.argv[2]])' "$1" "$2"
}

run_sleep A
run_sleep B
"$KBENCH" compare A B --store "$S" >"$WORK/cmp1.txt" 2>&1 || fail "compare A B exited $?"
expect_contains "$WORK/cmp1.txt" "the sides come from different runs and no kernel on this SUT was measured in 2 runs"
expect_contains "$WORK/cmp1.txt" "kbench calibrate, or a second run of the base, measures it"
# Nothing was tested, so a blank cell must not read as "unchanged".
expect_contains "$WORK/cmp1.txt" "No mark: not tested; each cell's note says why."
grep -q "No mark: unchanged" "$WORK/cmp1.txt" && fail "the legend of a table with no tested cell says unchanged" || pass

# Two paused sessions of the same kernel: two runs of it.
"$KBENCH" calibrate --benchmark selftest/sleep --sessions 2 --spread 1s --sut vm --store "$S" >"$WORK/cal.out" 2>"$WORK/cal.err" || fail "calibrate exited $?: $(tail -3 "$WORK/cal.err")"
blocks=$(sqlite3 "$DB" "select count(distinct json_extract(s.fingerprint, '\$.plan.block')) from session s
                       join swprofile w on w.id = s.swprofile_id where w.name like 'calibrate-%'")
[ "$blocks" = 2 ] && pass || fail "calibrate's paused sessions are not 2 runs (plan.block): $blocks"
"$KBENCH" compare A B --store "$S" --format csv >"$WORK/cmp2.csv" 2>"$WORK/cmp2.err" || fail "compare csv exited $?"
[ "$(csv_column "$WORK/cmp2.csv" run_df | sort -u)" = 1 ] && pass ||
  fail "compare A B after calibrate: run_df $(csv_column "$WORK/cmp2.csv" run_df | sort -u | paste -sd' '), expected 1"
[ -z "$(csv_column "$WORK/cmp2.csv" note | sort -u)" ] && pass ||
  fail "compare A B after calibrate still not tested: $(csv_column "$WORK/cmp2.csv" note | sort -u)"
"$KBENCH" compare A B --store "$S" >"$WORK/cmp2.txt" 2>&1
expect_contains "$WORK/cmp2.txt" "the sides come from different runs: 1 cell carries the run-to-run noise"

# Under a seccomp filter: another kernel as far as runs go, and a listed difference.
if [ -x "$TAXER" ]; then
  run_sleep T "$TAXER" 10
  [ "$(sqlite3 "$DB" "select distinct json_extract(s.fingerprint, '\$.seccomp') from session s
                      join swprofile w on w.id = s.swprofile_id where w.name = 'T'")" = filter ] && pass ||
    fail "the taxed run's fingerprint does not say seccomp: filter"
  "$KBENCH" compare A T --store "$S" >"$WORK/cmp3.txt" 2>&1 || fail "compare A T exited $?"
  expect_contains "$WORK/cmp3.txt" "seccomp: A none, T filter"
else
  fail "$TAXER missing: the build makes it"
fi
# A first comparison on a fresh store: two runs whose sessions are spread
# (each paused session a run of its own) are tested across runs at once.
S2="sqlite://$WORK/spread.db"
for profile in C D; do
  "$KBENCH" run --swprofile "$profile" --suite quick --benchmark selftest/sleep --sessions 3 --spread 1s --sut vm \
    --store "$S2" >"$WORK/$profile.out" 2>"$WORK/$profile.err" || fail "kbench run --spread $profile exited $?: $(tail -3 "$WORK/$profile.err")"
done
"$KBENCH" compare C D --store "$S2" --format csv >"$WORK/spread.csv" 2>"$WORK/spread.err" || fail "compare C D exited $?"
[ -z "$(csv_column "$WORK/spread.csv" note | sort -u)" ] && pass ||
  fail "two spread runs are not tested: $(csv_column "$WORK/spread.csv" note | sort -u)"
"$KBENCH" run --swprofile E --spread 10 --store "$S2" >"$WORK/bad.out" 2>"$WORK/bad.err"
[ $? -eq 2 ] && grep -q "^kbench: --spread '10': expected 0 or a duration" "$WORK/bad.err" && pass ||
  fail "--spread 10 is not one line of bad input: $(cat "$WORK/bad.err")"
finish

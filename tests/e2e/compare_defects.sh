#!/usr/bin/env bash
# Issue 10's defects, through the real programs and a real store: results
# measured with different parameters are different rows in show and compare,
# the geomean of one row is that row's change, and profiles measured on
# different SUTs are refused with one line and exit 2.
source "$(dirname "$0")/lib.bash"
export KBENCH_STORE="sqlite://$WORK/results.db"

run() {
  "$KBENCH" run --benchmark syscall/getpid --size quick --repeats 2 --warmups 0 --sessions 1 "$@" \
    >"$WORK/run.out" 2>"$WORK/run.err" || fail "kbench run $* exited $?: $(tail -3 "$WORK/run.err")"
}
run --swprofile A --sut lab --param calls=20000
run --swprofile A --sut lab --param calls=2000
run --swprofile B --sut lab --param calls=20000
run --swprofile B --sut lab --param calls=2000
run --swprofile C --sut lab --param calls=20000
run --swprofile D --sut lab --param calls=2000
run --swprofile E --sut lab --param calls=2000
run --swprofile X --sut x --param calls=2000
run --swprofile Y --sut y --param calls=2000

# --- show: one row per parameter set, named so they can be told apart ---------------
"$KBENCH" show A >"$WORK/show.out" 2>"$WORK/err" || fail "show A exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/show.out" "[calls=2000]"
expect_contains "$WORK/show.out" "[calls=20000]"
# Each mean row pools the 2 repeats of its own set, not 4.
rows=$(grep -c "mean (ns) .* 2 |$" "$WORK/show.out")
[ "$rows" -eq 2 ] && pass || fail "show A has $rows mean rows of 2 repeats, expected 2: $(cat "$WORK/show.out")"

# --- compare: each set against itself, every format names or carries it -------------
for format in grid markdown delta mail; do
  "$KBENCH" compare A B --format "$format" >"$WORK/cmp.$format" 2>"$WORK/err" \
    || fail "compare --format $format exited $?: $(cat "$WORK/err")"
  expect_contains "$WORK/cmp.$format" "syscall/getpid [calls=2000]"
  expect_contains "$WORK/cmp.$format" "syscall/getpid [calls=20000]"
done
"$KBENCH" compare A B --format csv >"$WORK/cmp.csv" 2>"$WORK/err" || fail "compare csv exited $?"
# params and run_df, then the SUT class columns (sut_class, suts, machines).
head -1 "$WORK/cmp.csv" | grep -q ',params,run_df,sut_class,suts,machines$' && pass || fail "compare csv has no params column"
[ "$(grep -c ',calls=2000,[0-9.]*,[^,]*,[^,]*,[0-9]*$' "$WORK/cmp.csv")" -ge 1 ] && pass || fail "compare csv lacks calls=2000 rows"
[ "$(grep -c ',calls=20000,[0-9.]*,[^,]*,[^,]*,[0-9]*$' "$WORK/cmp.csv")" -ge 1 ] && pass || fail "compare csv lacks calls=20000 rows"

# C ran only calls=20000, D only calls=2000: nothing to compare, so no mark.
"$KBENCH" compare C D --format csv >"$WORK/cd.csv" 2>"$WORK/err" || fail "compare C D exited $?: $(cat "$WORK/err")"
grep -q ',improvement,\|,regression,' "$WORK/cd.csv" && fail "calls=20000 was compared with calls=2000: $(cat "$WORK/cd.csv")" || pass
"$KBENCH" compare C D >"$WORK/cd.grid" 2>&1
grep -Eq "\((I|R)\) -?[0-9]" "$WORK/cd.grid" && fail "compare C D marked a row: $(cat "$WORK/cd.grid")" || pass

# --- geomean: with one row, the row's own change --------------------------------
"$KBENCH" compare D E --resultclass 'mean *' --format json >"$WORK/one.json" 2>"$WORK/err" \
  || fail "compare D E json exited $?: $(cat "$WORK/err")"
/usr/bin/python3 - "$WORK/one.json" <<'PY' && pass || fail "the geomean of one row is not that row's change: $(cat "$WORK/one.json")"
import json, sys
table = json.load(open(sys.argv[1]))["tables"][0]
assert len(table["rows"]) == 1, len(table["rows"])
row = table["rows"][0]["cells"][0]["signed_change_pct"]
geomean = table["columns"][0]["geomean_change_pct"]
assert abs(row - geomean) <= 1e-9 * max(1.0, abs(row)), (row, geomean)
PY

# --- different SUTs: one line, exit 2 ---------------------------------------------
expect_bad_input "compare across SUTs" "$KBENCH" compare X Y
expect_contains "$WORK/err" "compare: base 'X' was measured on SUT 'x', 'Y' only on SUT 'y'"

finish

#!/usr/bin/env bash
# Defects of compare, through the real programs and a real store: results
# measured with different parameters are different rows in show and compare,
# the geomean of one row is that row's change; profiles measured on
# different SUTs, sharing no row, given twice or against themselves, a
# --min-change that prints as no margin, and a stored value that is not a
# number are refused with one line and exit 2; values near the ends of the
# double range give the ordinary result or say why not.
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
# params and run_df, then the SUT class columns (sut_class, suts, machines) and pairs.
head -1 "$WORK/cmp.csv" | grep -q ',params,run_df,sut_class,suts,machines,pairs$' && pass || fail "compare csv has no params column"
[ "$(grep -c ',calls=2000,[0-9.]*,[^,]*,[^,]*,[0-9]*,[0-9]*$' "$WORK/cmp.csv")" -ge 1 ] && pass || fail "compare csv lacks calls=2000 rows"
[ "$(grep -c ',calls=20000,[0-9.]*,[^,]*,[^,]*,[0-9]*,[0-9]*$' "$WORK/cmp.csv")" -ge 1 ] && pass || fail "compare csv lacks calls=20000 rows"

# C ran only calls=20000, D only calls=2000: no row is on both sides. An
# empty table with exit 0 would let --fail-on pass on a comparison of nothing.
for format in grid csv; do
  expect_bad_input "compare C D --format $format (no shared row)" "$KBENCH" compare C D --format "$format" --fail-on regression
  expect_contains "$WORK/err" "compare: base 'C' and 'D' share no row"
done
# A second test column that shares rows does not hide the one that shares none.
expect_bad_input "compare C A D" "$KBENCH" compare C A D
expect_contains "$WORK/err" "compare: base 'C' and 'D' share no row"

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

# --- the same samples on both sides, or one column twice: one line, exit 2 -----------
expect_bad_input "compare A A" "$KBENCH" compare A A
expect_contains "$WORK/err" "compare: 'A' is the base and a test swprofile"
expect_bad_input "compare A B A" "$KBENCH" compare A B A
expect_contains "$WORK/err" "compare: 'A' is the base and a test swprofile"
expect_bad_input "compare A B B" "$KBENCH" compare A B B
expect_contains "$WORK/err" "compare: test swprofile 'B' is given twice"
expect_bad_input "scenario A:A" "$KBENCH" compare --format delta --scenario same=A:A
expect_contains "$WORK/err" "compare: 'A' is the base and a test swprofile"

# --- --min-change: 0, or a margin that prints, up to 1000 % ---------------------
for bad in 1e308 1e-320 0.001 -1 1000.5 nan inf ''; do
  expect_bad_input "compare --min-change '$bad'" "$KBENCH" compare A B --min-change "$bad"
  expect_contains "$WORK/err" "--min-change '$bad': expected 0 (no margin) or a percentage from 0.01 to 1000"
  expect_bad_input "trend --min-change '$bad'" "$KBENCH" trend --swprofile '*' --min-change "$bad"
  expect_contains "$WORK/err" "--min-change '$bad': expected 0 (no margin) or a percentage from 0.01 to 1000"
done
for good in 0 0.01 1000; do
  "$KBENCH" compare A B --min-change "$good" >"$WORK/good.out" 2>"$WORK/err" \
    && pass || fail "compare --min-change $good exited $?: $(cat "$WORK/err")"
done
expect_contains "$WORK/good.out" "+/-1000.00%"

# --- stored values: not a number, not finite, near the ends of the range --------
/usr/bin/python3 - "$WORK/extremes.json" <<'PY'
import json, sys
def sessions(profile, scale, factor):
    out = []
    for s in range(3):
        values = [scale * factor * (100 + s + 0.5 * r) for r in range(3)]
        out.append({"swprofile": profile, "benchmarks": [{"name": "x/y", "results": [
            {"class": "mean", "unit": "ns", "better": "lower", "values": values}]}]})
    return out
spec = []
# P/Q ordinary, 5 % slower; R/S the same times 2^1016 (near 1.7e308: a sum
# of three overflows); T/U times 2^-1000 (near 1e-300: squares vanish).
for base, test, scale in (("P", "Q", 1.0), ("R", "S", 2.0 ** 1016), ("T", "U", 2.0 ** -1000)):
    spec += sessions(base, scale, 1.0) + sessions(test, scale, 1.05)
json.dump({"sut": "vm", "sessions": spec}, open(sys.argv[1], "w"))
PY
fixture_store "$WORK/extremes.json"
"$KBENCH" compare P Q --store "$STORE" --format csv >"$WORK/pq.csv" 2>"$WORK/err" || fail "compare P Q exited $?: $(cat "$WORK/err")"
for pair in "R S" "T U"; do
  for sessions in sessions pooled; do
    # shellcheck disable=SC2086
    "$KBENCH" compare $pair --store "$STORE" --sessions "$sessions" --format csv >"$WORK/extreme.csv" 2>"$WORK/err" \
      || fail "compare $pair exited $?: $(cat "$WORK/err")"
    "$KBENCH" compare P Q --store "$STORE" --sessions "$sessions" --format csv >"$WORK/pq.csv" 2>/dev/null
    /usr/bin/python3 - "$WORK/pq.csv" "$WORK/extreme.csv" <<'PY' && pass || fail "compare $pair --sessions $sessions differs from the ordinary values: $(cat "$WORK/extreme.csv")"
import csv, sys
want, got = (next(csv.DictReader(open(f))) for f in sys.argv[1:3])
for key in ("change_pct", "p_value", "change_ci95_low_pct", "change_ci95_high_pct"):
    assert abs(float(got[key]) - float(want[key])) <= 1e-9 * max(1.0, abs(float(want[key]))), (key, got[key], want[key])
assert got["verdict"] == want["verdict"] and got["note"] == want["note"], (got, want)
PY
  done
done
plant() {  # plant SQL: the fixture store with one value replaced, as a hand edit would
  fixture_store "$WORK/extremes.json"
  /usr/bin/python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' \
    "$WORK/store.db" "$1" || fail "cannot plant: $1"
}
first_p="session_id = (SELECT min(session_id) FROM result) AND repeat = 1"
plant "UPDATE result SET value = 'NaN' WHERE $first_p"
expect_bad_input "a stored 'NaN'" "$KBENCH" compare P Q --store "$STORE"
expect_contains "$WORK/err" "x/y mean (ns) repeat 1: the stored value is the text 'NaN', not a number"
"$KBENCH" export --store "$STORE" >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && pass || fail "export of a stored 'NaN' did not exit 2"
expect_contains "$WORK/err" "the stored value is the text 'NaN', not a number"
plant "UPDATE result SET value = X'0102' WHERE $first_p"
expect_bad_input "a stored blob" "$KBENCH" compare P Q --store "$STORE"
expect_contains "$WORK/err" "the stored value is a blob of 2 bytes, not a number"
plant "UPDATE result SET value = 9e999 WHERE $first_p"
"$KBENCH" compare P Q --store "$STORE" >"$WORK/inf.out" 2>&1 || fail "compare with an infinite value exited $?"
expect_contains "$WORK/inf.out" "a value is not finite (NaN or infinite): no change computed"
grep -q "base mean is 0" "$WORK/inf.out" && fail "an infinite value said 'base mean is 0'" || pass

finish

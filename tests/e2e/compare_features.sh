#!/usr/bin/env bash
# compare's options and formats, noise, export and show --relative on a small
# real store: profiles A and B with two sessions each, C with one.
source "$(dirname "$0")/lib.bash"
STORE="sqlite://$WORK/results.db"
DB="$WORK/results.db"
export KBENCH_STORE="$STORE"

run() {
  "$KBENCH" run --swprofile "$1" --suite quick --benchmark 'syscall/get*' --param calls=20000 --sessions 1 --repeats 3 --warmups 0 \
    >"$WORK/run.out" 2>"$WORK/run.err" || fail "kbench run $1 exited $?: $(tail -3 "$WORK/run.err")"
}
run A; run A; run B; run B; run C

# --- compare: every format, several test columns --------------------------------
for format in grid markdown delta mail csv json; do
  "$KBENCH" compare A B C --format "$format" >"$WORK/cmp.$format" 2>"$WORK/err" \
    || fail "compare --format $format exited $?: $(cat "$WORK/err")"
done
expect_contains "$WORK/cmp.grid" "A (base)"
expect_contains "$WORK/cmp.grid" "| syscall/getppid"
expect_contains "$WORK/cmp.grid" "B: "                 # one summary line per test column
expect_contains "$WORK/cmp.grid" "C: "
expect_contains "$WORK/cmp.markdown" "| Metric"
expect_contains "$WORK/cmp.delta" "| scenario"
expect_contains "$WORK/cmp.delta" "new2: C"
expect_contains "$WORK/cmp.mail" "B: B"              # keys never name another profile (base is A)
expect_contains "$WORK/cmp.mail" "C: C"
long=$(awk 'length > 80' "$WORK/cmp.mail" | wc -l)
[ "$long" -eq 0 ] && pass || fail "mail has $long lines over 80 columns"
expect_contains "$WORK/cmp.csv" "session_noisy"
# 2 benchmarks x 4 classes x 2 test columns + header.
lines=$(wc -l <"$WORK/cmp.csv")
[ "$lines" -eq 17 ] && pass || fail "compare csv has $lines lines, expected 17"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tables"][0]["test_profiles"]==["B","C"]; assert d["legend"]["method"]=="welch"' \
  "$WORK/cmp.json" && pass || fail "compare json does not parse or lacks its test profiles"

# --- compare: filters and options ------------------------------------------------
"$KBENCH" compare A B --resultclass 'p99 *' --format csv >"$WORK/f.csv" 2>&1 || fail "--resultclass exited $?"
[ "$(wc -l <"$WORK/f.csv")" -eq 3 ] && pass || fail "--resultclass 'p99 *' gave $(($(wc -l <"$WORK/f.csv") - 1)) rows, expected 2"
grep -q ',mean,ns,' "$WORK/f.csv" && fail "--resultclass 'p99 *' kept a mean row" || pass
"$KBENCH" compare A B --benchmark 'syscall/getpid' --format csv >"$WORK/f.csv" 2>&1 || fail "--benchmark exited $?"
[ "$(wc -l <"$WORK/f.csv")" -eq 5 ] && pass || fail "--benchmark syscall/getpid gave $(($(wc -l <"$WORK/f.csv") - 1)) rows, expected 4"
grep -q getppid "$WORK/f.csv" && fail "--benchmark syscall/getpid kept getppid" || pass
"$KBENCH" compare A B --sut '*' --format csv >"$WORK/f.csv" 2>&1 && pass || fail "--sut '*' exited $?"
"$KBENCH" compare A B --min-change 50 >"$WORK/f.out" 2>&1 || fail "--min-change exited $?"
# "unchanged within +/-50.00%" once cells get the equivalence verdict, "at least 50.00%" before.
grep -Eq "No mark: (unchanged, the CI of the change lies within \+/-|no significant change of at least )50\.00%" \
  "$WORK/f.out" && pass || fail "--min-change 50 not in the legend: $(grep 'No mark' "$WORK/f.out")"
"$KBENCH" compare A B --sessions pooled >"$WORK/f.out" 2>&1 || fail "--sessions pooled exited $?"
expect_contains "$WORK/f.out" "Sessions: every repeat tested as an independent sample"
"$KBENCH" compare A B --sessions sessions >"$WORK/f.out" 2>&1 || fail "--sessions sessions exited $?"
expect_contains "$WORK/f.out" "Sessions: tested on session means, 2+2 sessions (base+test)"
"$KBENCH" compare A B --sessions means >"$WORK/f.out" 2>&1 && fail "--sessions means (the old name) was accepted" || pass
expect_contains "$WORK/f.out" "--sessions means: expected sessions or pooled"
"$KBENCH" compare A B --method mwu --fdr off --sign raw >"$WORK/f.out" 2>&1 || fail "mwu/fdr off/raw exited $?"
expect_contains "$WORK/f.out" "Mann-Whitney"

# --- noise -----------------------------------------------------------------------
# A and B have 2 sessions each, C has 1: A's model comes from B, C's from A and B.
"$KBENCH" noise A >"$WORK/noise.out" 2>"$WORK/err" || fail "noise A exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/noise.out" "(2 sessions; 2 other profiles on this SUT for the noise model)"
expect_contains "$WORK/noise.out" "between cv"
expect_contains "$WORK/noise.out" "floor alone"
expect_contains "$WORK/noise.out" "no A/A comparison: it needs 4 sessions (2 a half), this profile has 2"
grep -q "A/A marks" "$WORK/noise.out" && fail "noise A printed an A/A comparison of 1 session a half" || pass
"$KBENCH" noise C --format csv >"$WORK/noise.csv" 2>"$WORK/err" || fail "noise C exited $?: $(cat "$WORK/err")"
/usr/bin/python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)  # 2 benchmarks x 4 classes
for r in rows:
    assert int(r["sessions"]) == 1 and r["floor_basis"] == "model" and float(r["model_df"]) == 2, r
    assert float(r["noise_floor_pct"]) > 0 and float(r["noise_floor_alone_pct"]) >= float(r["noise_floor_pct"]), r
' "$WORK/noise.csv" && pass || fail "noise C csv: the model of A and B not used"
"$KBENCH" noise A --format csv >"$WORK/noise.csv" 2>&1 || fail "noise --format csv exited $?"
/usr/bin/python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)  # 2 benchmarks x 4 classes
for r in rows:
    assert int(r["n"]) == 6 and int(r["sessions"]) == 2 and r["floor_basis"] == "sessions+model", r
    assert float(r["noise_floor_pct"]) > 0 and float(r["noise_floor_alone_pct"]) >= float(r["noise_floor_pct"]), r
' "$WORK/noise.csv" && pass || fail "noise csv: wrong rows or floors"
"$KBENCH" noise B --format json >"$WORK/noise.json" 2>&1 || fail "noise --format json exited $?"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["tables"][0]["rows"]) == 8' \
  "$WORK/noise.json" && pass || fail "noise json does not parse or has the wrong rows"
# The model's query names the SUT literally: a SUT called "lab[1]" is not the glob [1].
cp "$DB" "$WORK/bracket.db"
sqlite3 "$WORK/bracket.db" "update sut set name = 'lab[1]'"
"$KBENCH" noise C --format csv --store "sqlite://$WORK/bracket.db" >"$WORK/noise.csv" 2>"$WORK/err" \
  || fail "noise C on SUT lab[1] exited $?: $(cat "$WORK/err")"
/usr/bin/python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8 and all(r["sut"] == "lab[1]" and r["floor_basis"] == "model" for r in rows), rows
' "$WORK/noise.csv" && pass || fail "noise on SUT lab[1]: the other profiles were not found"
# Alone in its store with one session: the between-session noise is unknown.
ALONE="sqlite://$WORK/alone.db"
"$KBENCH" run --swprofile solo --suite quick --benchmark 'syscall/getpid' --param calls=20000 --repeats 3 --warmups 0 --sessions 1 --store "$ALONE" \
  >"$WORK/run.out" 2>"$WORK/run.err" || fail "kbench run solo exited $?: $(tail -3 "$WORK/run.err")"
"$KBENCH" noise solo --store "$ALONE" >"$WORK/noise.out" 2>"$WORK/err" || fail "noise solo exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/noise.out" "unknown (1 session)"
expect_contains "$WORK/noise.out" "1 session: the noise between sessions, which decides every verdict, is unknown; run kbench run again under this profile or kbench calibrate"

# --- export ----------------------------------------------------------------------
stored=$(sqlite3 "$DB" 'select count(*) from result')
"$KBENCH" export >"$WORK/export.csv" 2>"$WORK/err" || fail "export exited $?: $(cat "$WORK/err")"
/usr/bin/python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["sut","swprofile","session_uid","session_index","benchmark","params","result_class","unit","direction","repeat","value","sut_class"], rows[0]
assert len(rows) - 1 == int(sys.argv[2]), (len(rows) - 1, sys.argv[2])
assert {r[1] for r in rows[1:]} == {"A", "B", "C"}
assert all(r[8] in ("lower", "higher") for r in rows[1:])
' "$WORK/export.csv" "$stored" && pass || fail "export csv: header or row count ($stored samples stored)"
stored_a=$(sqlite3 "$DB" "select count(*) from result r join session s on s.id=r.session_id
                          join swprofile w on w.id=s.swprofile_id where w.name='A'")
"$KBENCH" export --format json --swprofile A >"$WORK/export.json" 2>&1 || fail "export --format json exited $?"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == int(sys.argv[2]) and all(s["swprofile"] == "A" for s in d)
assert {s["session_index"] for s in d} == {0, 1}
' "$WORK/export.json" "$stored_a" && pass || fail "export json: not the $stored_a samples of A"
# Unrounded: the exported values are exactly the stored doubles.
/usr/bin/python3 -c '
import csv, sqlite3, sys
exported = sorted(float(r["value"]) for r in csv.DictReader(open(sys.argv[1])))
stored = sorted(v for (v,) in sqlite3.connect(sys.argv[2]).execute("select value from result"))
assert exported == stored
' "$WORK/export.csv" "$DB" && pass || fail "export values differ from the stored doubles"

# --- show --relative ---------------------------------------------------------------
"$KBENCH" show A --relative >"$WORK/show.out" 2>&1 || fail "show --relative exited $?"
expect_contains "$WORK/show.out" "in percent of the mean"
expect_contains "$WORK/show.out" "| syscall/getpid"
grep -Eq '^\| syscall/getpid +\| mean \(ns\) +\| +-[0-9.]+% \| +-[0-9.]+% \| +[0-9.]+ \| +\+[0-9.]+% \| +\+[0-9.]+% \|' \
  "$WORK/show.out" && pass || fail "show --relative: min/CI/max are not percentages around an absolute mean"

# --- bad inputs of the new options: exit 2, one line ------------------------------
expect_bad_input "compare --sessions" "$KBENCH" compare A B --sessions sometimes
expect_bad_input "noise unknown profile" "$KBENCH" noise nosuch
expect_bad_input "noise --format" "$KBENCH" noise A --format mail
expect_bad_input "noise --sessions" "$KBENCH" noise A --sessions x
expect_bad_input "noise --fdr" "$KBENCH" noise A --fdr 2
expect_bad_input "noise no rows" "$KBENCH" noise A --benchmark 'nothing/*'
expect_bad_input "noise missing store" "$KBENCH" noise A --store "sqlite://$WORK/missing.db"
expect_bad_input "export --format" "$KBENCH" export --format xml
expect_bad_input "export unknown profile" "$KBENCH" export --swprofile nosuch
expect_bad_input "export missing store" "$KBENCH" export --store "sqlite://$WORK/missing.db"
expect_bad_input "show --relative unknown profile" "$KBENCH" show nosuch --relative
[ ! -e "$WORK/missing.db" ] && pass || fail "a missing store was created"
finish

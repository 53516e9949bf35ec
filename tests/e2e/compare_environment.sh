#!/usr/bin/env bash
# compare lists the fingerprint differences the swprofiles do not declare, in
# the text and machine formats. Two real `kbench run` profiles; the test side's
# stored THP setting is then changed, as if it had run with another one.
source "$(dirname "$0")/lib.bash"
DB="$WORK/results.db"
export KBENCH_STORE="sqlite://$DB"

for profile in A B; do
  "$KBENCH" run --swprofile "$profile" --suite quick --benchmark 'syscall/getpid' --param calls=20000 --repeats 3 --warmups 0 \
    >"$WORK/run.out" 2>"$WORK/run.err" || fail "kbench run $profile exited $?: $(tail -3 "$WORK/run.err")"
done
sqlite3 "$DB" "UPDATE session SET fingerprint = json_set(fingerprint, '\$.thp', 'madvise')
                 WHERE swprofile_id = (SELECT id FROM swprofile WHERE name = 'A');
               UPDATE session SET fingerprint = json_set(fingerprint, '\$.thp', 'always')
                 WHERE swprofile_id = (SELECT id FROM swprofile WHERE name = 'B');" \
  || fail "could not edit the stored fingerprints"

for format in grid mail csv json; do
  "$KBENCH" compare A B --format "$format" >"$WORK/cmp.$format" 2>"$WORK/err" \
    || fail "compare --format $format exited $?: $(cat "$WORK/err")"
done
expect_contains "$WORK/cmp.grid" "Environment differences not declared by the swprofiles:"
expect_contains "$WORK/cmp.grid" "  thp: A madvise, B always"
expect_contains "$WORK/cmp.mail" "  thp: A madvise, B always"
expect_contains "$WORK/cmp.csv" "thp: A madvise, B always"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "thp: A madvise, B always" in d["tables"][0]["environment_differences"]' \
  "$WORK/cmp.json" && pass || fail "compare json lacks the thp difference"

# The same setting on both sides: no thp line.
sqlite3 "$DB" "UPDATE session SET fingerprint = json_set(fingerprint, '\$.thp', 'madvise')" || fail "could not edit"
"$KBENCH" compare A B >"$WORK/same.grid" 2>"$WORK/err" || fail "compare exited $?: $(cat "$WORK/err")"
grep -q "thp:" "$WORK/same.grid" && fail "thp listed although both sides have madvise" || pass
finish

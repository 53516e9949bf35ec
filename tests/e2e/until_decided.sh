#!/usr/bin/env bash
# plan exec --until-decided: bad values are refused before anything
# runs; a run adds whole rounds (every swprofile one more session) and stops
# within --max-looks, saying how many benchmarks are still undecided and how
# to compare at the split level. Whether a round is added depends on the
# machine's noise, so only the invariants are checked.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
cat >"$WORK/ab.yaml" <<'YAML'
swprofiles: [{name: A}, {name: B}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 2, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1", at: "99"}}
YAML
cat >"$WORK/one.yaml" <<'YAML'
swprofiles: [{name: A}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 2, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1", at: "99"}}
YAML

expect_bad_input "--max-looks 1" "$KBENCH" plan exec "$WORK/ab.yaml" --until-decided --max-looks 1 --store "$S"
expect_contains "$WORK/err" "--max-looks"
expect_bad_input "--budget soon" "$KBENCH" plan exec "$WORK/ab.yaml" --until-decided --budget soon --store "$S"
expect_contains "$WORK/err" "--budget"
expect_bad_input "one swprofile" "$KBENCH" plan exec "$WORK/one.yaml" --until-decided --store "$S"
expect_contains "$WORK/err" "at least two swprofiles"
[ -e "$DB" ] && fail "a refused --until-decided wrote the store" || pass
expect_bad_input "compare --looks 0" "$KBENCH" compare A B --looks 0 --store "$S"

"$KBENCH" plan exec "$WORK/ab.yaml" --until-decided --max-looks 3 --store "$S" >"$WORK/out" 2>"$WORK/err" ||
  fail "plan exec --until-decided exited $?: $(tail -3 "$WORK/err")"
expect_contains "$WORK/err" "look(s) of at most 3"
expect_contains "$WORK/err" "kbench compare 'A' 'B' --looks 3"
sessions_of() { sqlite3 "$DB" "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='$1'"; }
a=$(sessions_of A) b=$(sessions_of B)
[ "$a" = "$b" ] && pass || fail "A has $a sessions, B $b: rounds must alternate both"
[ "$a" -ge 2 ] && [ "$a" -le 4 ] && pass || fail "A has $a sessions; 2 planned plus at most 2 more looks"
rounds=$(grep -c "until-decided: look" "$WORK/err")
[ "$a" -eq $((2 + rounds)) ] && pass || fail "$rounds rounds announced but A has $a sessions"
# The added rounds go on with the balanced order where the planned ones
# stopped (A B, B A, A B, B A), not back at the plan's listed order.
expected="A B B A"; [ "$rounds" -ge 1 ] && expected+=" A B"; [ "$rounds" -ge 2 ] && expected+=" B A"
order=$(sqlite3 "$DB" "select group_concat(w.name, ' ') from (select * from session order by id) s join swprofile w on w.id=s.swprofile_id")
[ "$order" = "$expected" ] && pass || fail "sessions ran '$order', expected '$expected'"
"$KBENCH" compare A B --looks 3 --store "$S" >"$WORK/cmp" 2>&1 || fail "compare --looks 3 exited $?"
expect_contains "$WORK/cmp" "Until decided: 3 looks at the data"
finish

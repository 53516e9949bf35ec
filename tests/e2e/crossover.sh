#!/usr/bin/env bash
# design: crossover with two local SUTs of one class: bad designs refused by
# plan check and plan exec; the two workers measure the two swprofiles side
# by side, each pair of sessions one of each swprofile on different SUTs,
# swapping within a round; a worker killed mid-plan leaves the other to
# finish alone; --resume measures without pairs.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1            # selftest/sleep: a benchmark whose cost is known
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
q() { sqlite3 "$DB" "$1"; }
write_plan() {  # write_plan FILE MS SESSIONS [DESIGN_LINES...]
  local file=$1 ms=$2 sessions=$3
  shift 3
  {
    printf '%s\n' "${@:-design: crossover}"
    cat <<YAML
suts:
  - {name: alpha, class: lab}
  - {name: beta, class: lab}
swprofiles: [{name: base}, {name: patched}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: $sessions, size: quick}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "$ms"}}
  - {name: syscall/getppid, params: {calls: "20000"}}
YAML
  } >"$file"
}

# --- bad designs: refused by check and exec, nothing written ---------------------
write_plan "$WORK/three.yaml" 1 1 "design: crossover"
sed -i 's/^swprofiles: .*/swprofiles: [{name: base}, {name: patched}, {name: third}]/' "$WORK/three.yaml"
expect_bad_input "crossover with 3 swprofiles (check)" "$KBENCH" plan check "$WORK/three.yaml"
expect_contains "$WORK/err" "three.yaml:1: design: expected crossover with exactly 2 swprofiles, got 3"
expect_bad_input "crossover with 3 swprofiles (exec)" "$KBENCH" plan exec "$WORK/three.yaml" --store "$S"
write_plan "$WORK/classes.yaml" 1 1 "design: crossover"
sed -i 's/{name: beta, class: lab}/{name: beta, class: other}/' "$WORK/classes.yaml"
expect_bad_input "crossover of two classes" "$KBENCH" plan exec "$WORK/classes.yaml" --store "$S"
expect_contains "$WORK/err" "classes.yaml:1: design: expected crossover's 2 SUTs to declare the same class:, got 'lab' and 'other'"
printf 'design: crossover\nsut: {name: a, class: lab}\nswprofiles: [{name: A}, {name: B}]\nbenchmarks: [syscall/getppid]\n' \
  >"$WORK/one.yaml"
expect_bad_input "crossover of one sut" "$KBENCH" plan check "$WORK/one.yaml"
expect_contains "$WORK/err" "one.yaml:1: design: expected crossover with a suts: list of exactly 2 SUTs of one class, got a single sut:"
write_plan "$WORK/odd.yaml" 1 1 "design: crossed"
expect_bad_input "an unknown design" "$KBENCH" plan check "$WORK/odd.yaml"
expect_contains "$WORK/err" "odd.yaml:1: design: expected interleaved, crossover or duet, got 'crossed'"
write_plan "$WORK/pair.yaml" 1 3
expect_bad_input "crossover with --sut selecting one" "$KBENCH" plan exec "$WORK/pair.yaml" --sut beta --store "$S"
expect_contains "$WORK/err" "pair.yaml:1: design: expected crossover's 2 SUTs measured together, got --sut selecting beta"
expect_bad_input "crossover with --swprofile selecting one" "$KBENCH" plan exec "$WORK/pair.yaml" --swprofile base --store "$S"
[ ! -e "$DB" ] && pass || fail "refused input created the store"
"$KBENCH" plan check "$WORK/pair.yaml" >"$WORK/check.out" 2>&1 && pass || fail "plan check: $(cat "$WORK/check.out")"

# --- two local SUTs, 3 rounds: pairs of one session of each swprofile ----------
"$KBENCH" plan exec "$WORK/pair.yaml" --store "$S" >"$WORK/pair.out" 2>"$WORK/pair.err"
status=$?
[ $status -eq 0 ] && pass || { fail "crossover: exit $status"; tail -20 "$WORK/pair.err" >&2; }
grep -q "unpaired" "$WORK/pair.err" && fail "a worker went on unpaired: $(grep unpaired "$WORK/pair.err")" || pass
[ "$(q "select count(*) from session where finished_at is not null")" = 12 ] && pass \
  || fail "sessions: $(q "select count(*) from session")"
# Every session paired, its unit its SUT.
[ "$(q "select count(*) from session s join sut t on t.id = s.sut_id
        where json_extract(s.fingerprint, '$.plan.pair_unit') = t.name
          and json_extract(s.fingerprint, '$.plan.pair') like json_extract(s.fingerprint, '$.plan.run') || '/_/_'")" = 12 ] \
  && pass || fail "pairs: $(q "select json_extract(fingerprint, '$.plan') from session limit 2")"
# 6 pairs (3 rounds x 2 slots), each alpha and beta under different swprofiles;
# alpha's rounds go base patched, patched base, base patched, and beta's the
# other way.
run=$(q "select distinct json_extract(fingerprint, '$.plan.run') from session")
expect_pairs "$DB" "$run/0/0|alpha:base,beta:patched
$run/0/1|alpha:patched,beta:base
$run/1/0|alpha:patched,beta:base
$run/1/1|alpha:base,beta:patched
$run/2/0|alpha:base,beta:patched
$run/2/1|alpha:patched,beta:base"
# Both sides of a pair ran the benchmarks in one order.
[ "$(q "select count(distinct json_extract(fingerprint, '$.plan.pair') || json_extract(fingerprint, '$.plan.order')) from session")" = 6 ] \
  && pass || fail "a pair's two sessions ran the benchmarks in different orders"
expect_contains "$WORK/pair.err" "kbench: crossover: alpha and beta measure the other swprofile at the same moment"
"$KBENCH" compare base patched --store "$S" >"$WORK/compare.out" 2>&1 && pass || fail "compare exited $?: $(tail -5 "$WORK/compare.out")"
# The class table tests every row on its 6 pairs, and its legend says so.
expect_contains "$WORK/compare.out" "Paired:"
"$KBENCH" compare base patched --store "$S" --format json >"$WORK/compare.json" 2>&1
[ "$(jq '[.tables[] | select(.sut_scope == "class" or .sut == "lab") | .rows[].cells[].pairs] | unique' -c "$WORK/compare.json")" = "[6]" ] \
  && pass || fail "class cells' pairs: $(jq -c '[.tables[] | {sut, pairs: [.rows[].cells[].pairs]}]' "$WORK/compare.json")"
ls -d /tmp/kbench-pair-* 2>/dev/null | while read -r dir; do
  grep -qF "$dir" "$WORK/pair.err" && echo "left behind: $dir"
done | grep -q . && fail "the pairing directory was left behind" || pass

# --- beta's worker killed: alpha finishes alone, saying so once ------------------
rm -f "$DB"*
write_plan "$WORK/slow.yaml" 300 3
"$KBENCH" plan exec "$WORK/slow.yaml" --store "$S" >"$WORK/slow.out" 2>"$WORK/slow.err" &
controller=$!
rounds=0
until [ "$(q "select count(*) from session s join sut t on t.id = s.sut_id where t.name = 'beta'" 2>/dev/null || echo 0)" -ge 1 ] \
  || [ $rounds -ge 600 ]; do
  sleep 0.1; rounds=$((rounds + 1))
done
beta=$(pgrep_ours -f -- "--fleet-worker --sut beta --store $S")
[ -n "$beta" ] && kill -KILL $beta
rounds=0
while kill -0 $controller 2>/dev/null && [ $rounds -lt 1200 ]; do sleep 0.1; rounds=$((rounds + 1)); done
kill -0 $controller 2>/dev/null && { fail "the fleet still runs 2 minutes after beta's worker was killed"; kill -TERM $controller; }
wait $controller
status=$?
[ $status -eq 1 ] && pass || { fail "killed worker: exit $status, expected 1"; tail -20 "$WORK/slow.err" >&2; }
expect_contains "$WORK/slow.err" "kbench: SUT beta: stopped by signal 9"
expect_contains "$WORK/slow.err" "alpha: kbench: paired: the other worker has ended; going on unpaired"
[ "$(grep -c "going on unpaired" "$WORK/slow.err")" = 1 ] && pass || fail "the unpaired notice not said once"
[ "$(q "select count(*) from session s join sut t on t.id = s.sut_id where t.name = 'alpha' and finished_at is not null")" = 6 ] \
  && pass || fail "alpha did not finish its 6 sessions"

# --- --resume: beta alone, its new sessions without pairs -----------------------
"$KBENCH" plan exec "$WORK/slow.yaml" --resume --sut beta --store "$S" >"$WORK/resumed.out" 2>"$WORK/resumed.err"
status=$?
[ $status -eq 0 ] && pass || { fail "resume of beta: exit $status"; tail -8 "$WORK/resumed.err" >&2; }
[ "$(q "select count(*) from session s join sut t on t.id = s.sut_id where t.name = 'beta' and finished_at is not null")" = 6 ] \
  && pass || fail "beta's resume did not finish its sessions"
begun=$(q "select count(*) from session s join sut t on t.id = s.sut_id where t.name = 'beta' and json_extract(s.fingerprint, '$.plan.pair') is not null")
[ "$(q "select count(*) from session s join sut t on t.id = s.sut_id where t.name = 'beta' and json_extract(s.fingerprint, '$.plan.pair') is null")" = $((6 - begun)) ] \
  && [ "$begun" -ge 1 ] && pass || fail "beta: $begun sessions with a pair"
finish

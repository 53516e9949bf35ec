#!/usr/bin/env bash
# Sessions: an interrupted or killed session is marked incomplete
# and says what it lacks; its interrupted benchmark does not feed compare;
# `run --resume` and `plan exec --resume` continue it, and refuse an edited
# plan; one session number everywhere; list/show/delete of sessions; store
# URLs and read-only stores.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
count() { sqlite3 "$DB" "$1"; }
# Waits (by polling the store, not by sleeping a fixed time) until swprofile
# $1 has at least $2 samples.
wait_for_samples() {
  local rounds=0
  until [ "$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w
                    on w.id=s.swprofile_id where w.name='$1'" 2>/dev/null || echo 0)" -ge "$2" ] || [ $rounds -ge 600 ]; do
    sleep 0.1; rounds=$((rounds + 1))
  done
}

# --- malformed store URLs ----------------------------------------------------------
cd "$WORK"
expect_bad_input "scheme without //" "$KBENCH" list sessions --store sqlite:rel.db
[ -e "$WORK/sqlite:rel.db" ] && fail "sqlite:rel.db created a file" || pass
expect_bad_input "unknown scheme" "$KBENCH" run --swprofile x --benchmark 'selftest/sleep' --store mysql://h/db
expect_contains "$WORK/err" "sqlite:///abs/path.db"

# --- SIGINT in the middle of a benchmark -------------------------------------------------
# order: listed, so the slow benchmark runs first and the interrupt lands in it.
cat >"$WORK/plan.yaml" <<'YAML'
order: listed
swprofiles: [{name: base}]
defaults: {benchmark: {warmups: 0, repeats: 3, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "400", at: "99"}}
  - {name: selftest/sleep, params: {ms: "10", at: "99"}}
YAML
"$KBENCH" plan exec "$WORK/plan.yaml" --store "$S" >"$WORK/int.out" 2>"$WORK/int.err" &
controller=$!
wait_for_samples base 1
kill -INT $controller
wait $controller
status=$?
[ $status -eq 130 ] && pass || fail "SIGINT: exit $status, expected 130"
expect_contains "$WORK/int.err" "--resume --store '$S'"
expect_contains "$WORK/int.err" "base session 1 selftest/sleep: interrupted"
"$KBENCH" list sessions --store "$S" >"$WORK/list1.out" 2>&1 || fail "list sessions exited $?"
expect_contains "$WORK/list1.out" "incomplete: not finished"
expect_contains "$WORK/list1.out" "selftest/sleep (interrupted after"
# The interrupted benchmark has no outcome (it is not "failed"), and its
# repeats stay but do not feed compare or show.
[ "$(count "select count(*) from outcome")" -eq 0 ] && pass || fail "an interrupted benchmark got an outcome"
# compare refuses a profile against itself: a copy of the store gets a
# second profile, so the counts below stay the plan's.
sqlite3 "$DB" ".backup '$WORK/copy.db'"
"$KBENCH" run --swprofile other --benchmark selftest/sleep --param ms=10 --param at=99 --repeats 1 --warmups 0 \
  --sessions 1 --store "sqlite://$WORK/copy.db" >/dev/null 2>"$WORK/other.err" \
  || fail "run other exited $?: $(tail -3 "$WORK/other.err")"
"$KBENCH" compare base other --store "sqlite://$WORK/copy.db" >"$WORK/cmp1.out" 2>&1
expect_contains "$WORK/cmp1.out" "incomplete: swprofile base session 1 on"
if grep -q "selftest/sleep *|" "$WORK/cmp1.out"; then fail "compare used the interrupted repeats"; else pass; fi
"$KBENCH" show base --store "$S" >"$WORK/show1.out" 2>&1
expect_contains "$WORK/show1.out" "incomplete: swprofile base session 1"
"$KBENCH" noise base --store "$S" --format csv >"$WORK/noise1.out" 2>&1
if grep -q "selftest/sleep" "$WORK/noise1.out"; then fail "noise used the interrupted repeats: $(cat "$WORK/noise1.out")"; else pass; fi

# --- an edited plan is refused by --resume, with the difference -----------------------------
sed -i 's/repeats: 3/repeats: 4/' "$WORK/plan.yaml"
expect_bad_input "edited plan" "$KBENCH" plan exec "$WORK/plan.yaml" --store "$S" --resume
expect_contains "$WORK/err" "plan changed since the interrupted run: benchmark selftest/sleep repeats 3 -> 4"
sed -i 's/repeats: 4/repeats: 3/' "$WORK/plan.yaml"
"$KBENCH" plan exec "$WORK/plan.yaml" --store "$S" --resume >"$WORK/res.out" 2>"$WORK/res.err" \
  || fail "--resume exited $?: $(tail -3 "$WORK/res.err")"
expect_contains "$WORK/res.err" "resuming session 1 of swprofile base"
expect_contains "$WORK/res.out" "swprofile base, session 1"
[ "$(count "select count(*) from result")" -eq 6 ] && pass || fail "after --resume $(count "select count(*) from result") samples, expected 6"
[ "$(count "select count(*) from session")" -eq 1 ] && pass || fail "--resume started a new session"
"$KBENCH" list sessions --store "$S" >"$WORK/list2.out" 2>&1
expect_contains "$WORK/list2.out" "complete"
if grep -q incomplete "$WORK/list2.out"; then fail "resumed session still incomplete"; else pass; fi

# --- kill -9: no outcome rows, and still not "complete" ------------------------------------
"$KBENCH" plan exec "$WORK/plan.yaml" --store "$S" >/dev/null 2>"$WORK/kill.err" &
controller=$!
wait_for_samples base 7
kill -9 $controller
wait $controller 2>/dev/null
"$KBENCH" list sessions --swprofile 'ba*' --store "$S" >"$WORK/list3.out" 2>&1
expect_contains "$WORK/list3.out" "incomplete: not finished"
# One number for the session everywhere: the second session of base is 2.
grep -E "^base +[^ ]+ +2 " "$WORK/list3.out" | grep -q incomplete && pass || fail "session 2 not listed as incomplete: $(cat "$WORK/list3.out")"
"$KBENCH" session show base 2 --store "$S" >"$WORK/sshow.out" 2>&1 || fail "session show exited $?"
expect_contains "$WORK/sshow.out" "session 2 of swprofile base on"
expect_contains "$WORK/sshow.out" "incomplete"
expect_contains "$WORK/sshow.out" "interrupted"
# The governor line is there also where the SUT has no cpufreq (the agent's null).
governor=$(sqlite3 "$DB" "select coalesce(json_extract(fingerprint, '\$.governor'), 'none (the SUT has no cpufreq)') from session s join swprofile w on w.id = s.swprofile_id where w.name = 'base' limit 1")
grep -qxE " +governor: +${governor//[()]/.}" "$WORK/sshow.out" && pass || fail "session show lacks 'governor: $governor': $(cat "$WORK/sshow.out")"

# --- kbench run --resume --------------------------------------------------------------------
# Each repeat sleeps 400 ms, so the interrupt lands after the first sample and before the last.
run_args=(run --swprofile solo --benchmark 'selftest/sleep' --param ms=400 --repeats 4 --sessions 1 --warmups 0 --store "$S")
"$KBENCH" "${run_args[@]}" >/dev/null 2>"$WORK/run-int.err" &
controller=$!
wait_for_samples solo 1
kill -INT $controller
wait $controller
[ $? -eq 130 ] && pass || fail "run SIGINT: exit status, expected 130"
expect_contains "$WORK/run-int.err" "continue with: kbench run --swprofile 'solo' --benchmark 'selftest/sleep' --warmups 0 --repeats 4 --sessions 1 --param 'ms=400' --resume --store '$S'"
expect_bad_input "run --resume with other repeats" "$KBENCH" run --swprofile solo --benchmark 'selftest/sleep' \
  --param ms=400 --repeats 5 --sessions 1 --warmups 0 --store "$S" --resume
expect_contains "$WORK/err" "benchmark selftest/sleep repeats 4 -> 5"
"$KBENCH" "${run_args[@]}" --resume >"$WORK/run-res.out" 2>"$WORK/run-res.err" || fail "run --resume exited $?"
expect_contains "$WORK/run-res.err" "resuming session 1 of swprofile solo"
solo=$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name='solo'")
[ "$solo" -eq 4 ] && pass || fail "run --resume left $solo samples of solo, expected 4"
[ "$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='solo'")" -eq 1 ] \
  && pass || fail "run --resume started a new session"

# --- session delete ---------------------------------------------------------------------------
before=$(count "select count(*) from result")
expect_bad_input "delete without --yes off a terminal" "$KBENCH" session delete base 2 --store "$S" </dev/null
expect_contains "$WORK/err" "pass --yes"
[ "$(count "select count(*) from result")" -eq "$before" ] && pass || fail "a refused delete deleted samples"
expect_bad_input "delete of a missing session" "$KBENCH" session delete base 9 --yes --store "$S"
expect_contains "$WORK/err" "swprofile base has sessions 1 to 2"
"$KBENCH" session delete base 2 --yes --store "$S" >"$WORK/del.out" 2>&1 || fail "delete exited $?"
expect_contains "$WORK/del.out" "deleted session 2 of swprofile base"
[ "$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='base'")" -eq 1 ] \
  && pass || fail "delete left $(count "select count(*) from session") sessions"
[ "$(count "select count(*) from result r left join session s on s.id=r.session_id where s.id is null")" -eq 0 ] \
  && pass || fail "delete left orphan samples"
[ "$(count 'pragma foreign_key_check' | wc -l)" -eq 0 ] && pass || fail "foreign keys broken after delete"
# On a terminal it asks; "n" keeps the session.
script -qec "$KBENCH session delete base 1 --store $S" /dev/null <<<"n" >"$WORK/ask.out" 2>&1
expect_contains "$WORK/ask.out" "[y/N]"
[ "$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='base'")" -eq 1 ] \
  && pass || fail "answering n deleted the session"

# --- read-only store: readable, and refused for writing as what it is -------------------------------
MNT="$WORK/ro"
mkdir -p "$MNT"
if mount -t tmpfs -o size=1m tmpfs "$MNT" 2>/dev/null; then
  cp "$DB" "$MNT/store.db"
  mount -o remount,ro "$MNT"
  "$KBENCH" list sessions --store "$MNT/store.db" >"$WORK/ro.out" 2>&1 || fail "list on a read-only file system exited $?: $(cat "$WORK/ro.out")"
  expect_contains "$WORK/ro.out" "solo"
  # base and solo ran selftest/sleep with other parameters: compare reads every
  # sample of both, then refuses the pair, sharing no row, as bad input.
  "$KBENCH" compare base solo --store "$MNT/store.db" >"$WORK/ro-cmp.out" 2>&1
  [ $? -eq 2 ] && pass || fail "compare on a read-only file system: $(cat "$WORK/ro-cmp.out")"
  expect_contains "$WORK/ro-cmp.out" "compare: base 'base' and 'solo' share no row"
  "$KBENCH" "${run_args[@]/$S/$MNT/store.db}" >"$WORK/ro-run.out" 2>"$WORK/ro-run.err"
  [ $? -ne 0 ] && pass || fail "run wrote to a read-only file system"
  expect_contains "$WORK/ro-run.err" "read-only file system"
  if grep -q "not a kbench store" "$WORK/ro-run.err"; then fail "a read-only store was called not a kbench store"; else pass; fi
  umount "$MNT"
else
  echo "skipped: read-only store checks (cannot mount a tmpfs here; store_hardening_test covers the store)"
fi

finish

#!/usr/bin/env bash
# Sessions as replicates: kbench run --sessions, the quick suite's
# sessions (5, and 12 for its syscall family), the shuffled
# benchmark order per session (stored, and kept by --resume), plan order:
# listed, kbench calibrate with its interruptible pause, the load at a
# session's end and the microcode revision in the fingerprint.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
count() { sqlite3 "$DB" "$1"; }
# The benchmark names of one session as stored (plan.order), one line.
stored_order() {
  count "select group_concat(j.value, ' ') from session s join swprofile w on w.id = s.swprofile_id,
         json_each(s.fingerprint, '\$.plan.order') j where w.name = '$1' and s.idx = $(($2 - 1))"
}
# The benchmarks of session N of swprofile P in the order the progress lines of file F show them.
progress_order() {
  grep -oE "\] $1 session $2 selftest/[a-z-]+" "$3" | awk '{print $5}' | paste -sd' '
}

# --- bad input: one line, exit 2, nothing written ---------------------------------------
expect_bad_input "run --sessions 0" "$KBENCH" run --swprofile A --sessions 0 --store "$S"
expect_contains "$WORK/err" "--sessions '0': expected a whole number from 1 to 10000"
expect_bad_input "run --sessions x" "$KBENCH" run --swprofile A --sessions x --store "$S"
expect_bad_input "calibrate --sessions 1" "$KBENCH" calibrate --sessions 1 --store "$S"
expect_bad_input "calibrate --spread soon" "$KBENCH" calibrate --spread soon --store "$S"
expect_contains "$WORK/err" "--spread 'soon': expected 0 or a duration such as 90s, 10m or 1h30m"
printf 'order: random\nbenchmarks: [selftest/sleep]\n' >"$WORK/bad-order.yaml"
expect_bad_input "plan check order: random" "$KBENCH" plan check "$WORK/bad-order.yaml"
expect_contains "$WORK/err" "bad-order.yaml:1: order: expected listed or shuffled, got 'random'"
expect_bad_input "plan exec order: random" "$KBENCH" plan exec "$WORK/bad-order.yaml" --swprofile A --store "$S"
[ ! -e "$DB" ] && pass || fail "bad input created the store"

# --- kbench run --sessions: several sessions, one table over them --------------------------
"$KBENCH" run --swprofile R --benchmark selftest/sleep --param ms=5 --sessions 2 --repeats 2 --warmups 0 \
  --store "$S" >"$WORK/run.out" 2>"$WORK/run.err" || fail "run --sessions 2 exited $?: $(tail -3 "$WORK/run.err")"
[ "$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='R'")" -eq 2 ] \
  && pass || fail "run --sessions 2 stored $(count "select count(*) from session") sessions"
expect_contains "$WORK/run.err" "R session 1 selftest/sleep: 2 repeats"
expect_contains "$WORK/run.err" "R session 2 selftest/sleep: 2 repeats"
expect_contains "$WORK/run.out" "swprofile R, sessions 1 to 2"
grep -E "selftest/sleep .*\| +4 +\|" "$WORK/run.out" >/dev/null && pass || fail "the run table does not pool both sessions' 4 repeats: $(cat "$WORK/run.out")"
# The quick suite's default is 5 sessions.
"$KBENCH" run --swprofile D --suite quick --benchmark selftest/sleep --param ms=1 --repeats 1 --warmups 0 \
  --store "$S" >"$WORK/d.out" 2>&1 || fail "run without --sessions exited $?"
expect_contains "$WORK/d.out" "swprofile D, sessions 1 to 5"
# Its syscall family's: 12 sessions of one repeat (defaults.families).
"$KBENCH" run --swprofile Y --suite quick --benchmark syscall/getpid --param calls=2000 --warmups 0 \
  --store "sqlite://$WORK/syscall.db" >"$WORK/y.out" 2>&1 || fail "the quick suite's syscall/getpid exited $?"
expect_contains "$WORK/y.out" "swprofile Y, sessions 1 to 12"
expect_contains "$WORK/y.out" "Y session 12 syscall/getpid: 1 repeats"
# The end of each session: the load then, and the microcode revision.
[ "$(count "select count(*) from session where json_type(fingerprint, '\$.loadavg_end') = 'array'")" -eq 7 ] \
  && pass || fail "not every finished session has loadavg_end: $(count "select json_extract(fingerprint, '\$.loadavg_end') from session")"
microcode=$(awk -F': ' '/^microcode/ {print $2; exit}' /proc/cpuinfo)
stored=$(count "select ifnull(json_extract(fingerprint, '\$.microcode'), 'null') from session limit 1")
[ "$stored" = "${microcode:-null}" ] && pass || fail "microcode stored '$stored', /proc/cpuinfo says '${microcode:-null}'"

# --- shuffled per session, stored, and followed ----------------------------------------------
cat >"$WORK/five.yaml" <<'YAML'
swprofiles: [{name: P}]
defaults: {benchmark: {warmups: 0, repeats: 1, sessions: 4, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "5", at: "99"}}
  - {name: selftest/crash, params: {ms: "5", at: "99"}}
  - {name: selftest/exit, params: {ms: "5", at: "99"}}
  - {name: selftest/throw, params: {ms: "5", at: "99"}}
  - {name: selftest/hang, params: {ms: "5", at: "99"}}
YAML
"$KBENCH" plan exec "$WORK/five.yaml" --store "$S" >"$WORK/five.out" 2>"$WORK/five.err" \
  || fail "plan exec exited $?: $(tail -3 "$WORK/five.err")"
orders=()
for n in 1 2 3 4; do
  orders+=("$(stored_order P $n)")
  [ "$(progress_order P $n "$WORK/five.err")" = "${orders[-1]}" ] && pass \
    || fail "session $n ran '$(progress_order P $n "$WORK/five.err")', its fingerprint says '${orders[-1]}'"
  [ "$(echo "${orders[-1]}" | tr ' ' '\n' | sort | paste -sd' ')" = \
    "selftest/crash selftest/exit selftest/hang selftest/sleep selftest/throw" ] && pass || fail "order '${orders[-1]}' is not the plan's five"
done
# 4 sessions of 5 benchmarks: all in one order has probability 1/120^3.
[ "$(printf '%s\n' "${orders[@]}" | sort -u | wc -l)" -gt 1 ] && pass || fail "four sessions ran one order: ${orders[0]}"
[ "$(count "select distinct json_extract(fingerprint, '\$.plan.ordering') from session s join swprofile w on w.id=s.swprofile_id where w.name='P'")" = shuffled ] \
  && pass || fail "plan.ordering not stored as shuffled"

# order: listed keeps the plan's order in every session.
sed -e '1i order: listed' -e 's/name: P}/name: L}/' "$WORK/five.yaml" >"$WORK/listed.yaml"
"$KBENCH" plan exec "$WORK/listed.yaml" --store "$S" >/dev/null 2>"$WORK/listed.err" || fail "listed plan exited $?"
for n in 1 2 3 4; do
  [ "$(stored_order L $n)" = "selftest/sleep selftest/crash selftest/exit selftest/throw selftest/hang" ] && pass \
    || fail "order: listed session $n ran '$(stored_order L $n)'"
done

# --- --resume finds the same order again ---------------------------------------------------------
sed -e 's/name: P}/name: Q}/' -e 's/ms: "5"/ms: "300"/' -e 's/sessions: 4/sessions: 2/' -e 's/repeats: 1/repeats: 2/' \
  "$WORK/five.yaml" >"$WORK/slow.yaml"
"$KBENCH" plan exec "$WORK/slow.yaml" --store "$S" >/dev/null 2>"$WORK/slow.err" &
controller=$!
# Interrupt once the first session has stored 3 samples (polling, not a fixed sleep).
rounds=0
until [ "$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name='Q'" 2>/dev/null || echo 0)" -ge 3 ] \
      || [ $rounds -ge 600 ]; do sleep 0.1; rounds=$((rounds + 1)); done
kill -INT $controller
wait $controller
[ $? -eq 130 ] && pass || fail "SIGINT: expected exit 130"
interrupted_order=$(stored_order Q 1)
"$KBENCH" plan exec "$WORK/slow.yaml" --store "$S" --resume >/dev/null 2>"$WORK/resume.err" \
  || fail "--resume exited $?: $(tail -3 "$WORK/resume.err")"
expect_contains "$WORK/resume.err" "resuming session 1 of swprofile Q"
[ "$(progress_order Q 1 "$WORK/resume.err")" = "$interrupted_order" ] && pass \
  || fail "--resume ran session 1 as '$(progress_order Q 1 "$WORK/resume.err")', it began as '$interrupted_order'"
[ "$(progress_order Q 2 "$WORK/resume.err")" = "$(stored_order Q 2)" ] && pass || fail "session 2 after --resume did not follow its stored order"

# The resume command of kbench run keeps --sessions.
"$KBENCH" run --swprofile RS --benchmark selftest/sleep --param ms=400 --sessions 3 --repeats 3 --warmups 0 \
  --store "$S" >/dev/null 2>"$WORK/rs.err" &
controller=$!
rounds=0
until [ "$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name='RS'" 2>/dev/null || echo 0)" -ge 1 ] \
      || [ $rounds -ge 600 ]; do sleep 0.1; rounds=$((rounds + 1)); done
kill -INT $controller
wait $controller
expect_contains "$WORK/rs.err" "continue with: kbench run --swprofile 'RS' --benchmark 'selftest/sleep' --warmups 0 --repeats 3 --sessions 3 --param 'ms=400' --resume --store '$S'"

# --- kbench calibrate ---------------------------------------------------------------------------
"$KBENCH" calibrate --benchmark selftest/sleep --sessions 2 --spread 1s --sut calib-sut --store "$S" \
  >"$WORK/cal.out" 2>"$WORK/cal.err" || fail "calibrate exited $?: $(tail -3 "$WORK/cal.err")"
expect_contains "$WORK/cal.err" "pausing 1.0s before session round 2 of 2"
expect_contains "$WORK/cal.out" "calibration: 2 sessions of swprofile calibrate-"
expect_contains "$WORK/cal.out" "on SUT calib-sut in $S"
expect_contains "$WORK/cal.out" "kbench noise calibrate-"
profile=$(grep -oE "calibrate-[0-9]{8}T[0-9]{6}Z" "$WORK/cal.out" | head -1)
[ -n "$profile" ] && pass || fail "no calibrate-<UTC date-time> profile named: $(cat "$WORK/cal.out")"
[ "$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='$profile'")" -eq 2 ] \
  && pass || fail "calibrate stored other than 2 sessions of $profile"
"$KBENCH" noise "$profile" --store "$S" >"$WORK/noise.out" 2>&1 || fail "kbench noise $profile exited $?"
# SIGINT during the pause ends it at once (an hour's pause would time the test out).
"$KBENCH" calibrate --benchmark selftest/sleep --sessions 2 --spread 1h --store "$S" >/dev/null 2>"$WORK/cal2.err" &
controller=$!
rounds=0
until grep -q "pausing" "$WORK/cal2.err" || [ $rounds -ge 600 ]; do sleep 0.1; rounds=$((rounds + 1)); done
kill -INT $controller
wait $controller
[ $? -eq 130 ] && pass || fail "SIGINT in the pause: expected exit 130"
"$KBENCH" calibrate --help >"$WORK/help.out" 2>&1
expect_contains "$WORK/help.out" "each paused session counts as a run of its own"

finish

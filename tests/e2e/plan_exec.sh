#!/usr/bin/env bash
# Plans and the execution engine: validation with line numbers, isolation of
# crashing / failing / hanging benchmarks, kill -9 then --resume with exact
# sample counts, sysctls restored after SIGTERM and after kill -9, progress
# output on and off a terminal, cmdline requirements.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1            # registers the deliberately broken selftest/* benchmarks
export KBENCH_STATE_DIR="$WORK/state" # the sysctl journal of this test only
S="sqlite://$WORK/store.db"
DB="$WORK/store.db"
count() { sqlite3 "$DB" "$1"; }

# --- validation ---------------------------------------------------------------
cat >"$WORK/bad-name.yaml" <<'YAML'
benchmarks:
  - include: syscall/getpid
  - include: nosuch/thing
YAML
expect_bad_input "plan check: unknown benchmark" "$KBENCH" plan check "$WORK/bad-name.yaml"
grep -q "bad-name.yaml:3: benchmark 'nosuch/thing'" "$WORK/err" && pass || fail "no file:line in: $(cat "$WORK/err")"
cat >"$WORK/bad-param.yaml" <<'YAML'
benchmarks:
  - {name: syscall/getpid, params: {cals: "10"}}
YAML
expect_bad_input "plan check: unknown parameter" "$KBENCH" plan check "$WORK/bad-param.yaml"
grep -q "bad-param.yaml:2: params: syscall/getpid: no parameter 'cals'" "$WORK/err" && pass || fail "got: $(cat "$WORK/err")"
printf 'benchmarks: [syscall/getpid]\nrepeats: 3\n' >"$WORK/bad-key.yaml"
expect_bad_input "plan check: unknown key" "$KBENCH" plan check "$WORK/bad-key.yaml"
grep -q "bad-key.yaml:2: repeats: expected one of the keys" "$WORK/err" && pass || fail "got: $(cat "$WORK/err")"
printf 'swprofiles:\n  - {name: a, cmdline: [kbench.not.booted.with=1]}\nbenchmarks: [syscall/getpid]\n' >"$WORK/cmdline.yaml"
expect_bad_input "cmdline requirement" "$KBENCH" plan exec "$WORK/cmdline.yaml" --store "$S"
[ ! -e "$DB" ] && pass || fail "a refused plan created the store"

# --- isolation: crash, non-zero exit, exception, hang with a child -------------
cat >"$WORK/broken.yaml" <<'YAML'
swprofiles: [{name: broken}]
defaults: {benchmark: {warmups: 0, repeats: 3, timeout: 3s}}
benchmarks:
  - selftest/crash
  - selftest/exit
  - selftest/throw
  - selftest/hang-child
  - selftest/sleep
YAML
"$KBENCH" plan exec "$WORK/broken.yaml" --store "$S" >"$WORK/broken.out" 2>"$WORK/broken.err"
status=$?
[ "$status" -eq 1 ] && pass || fail "plan with failing benchmarks exited $status, expected 1"
for pattern in "selftest/crash: FAILED: killed by signal 6" "selftest/exit: FAILED: agent exited with status 3" \
                "selftest/throw: FAILED: selftest: deliberate failure" "selftest/hang-child: FAILED: timed out after 3s" \
                "selftest/sleep: 3 repeats"; do
  expect_contains "$WORK/broken.err" "$pattern"
done
expect_contains "$WORK/broken.out" "failed: selftest/crash"
[ "$(count "select count(*) from outcome where status='failed'")" -eq 4 ] && pass || fail "expected 4 failed outcomes"
[ "$(count "select count(*) from outcome where status='ok'")" -eq 1 ] && pass || fail "expected 1 ok outcome"
# Completed repeats of a benchmark that crashed later stay stored (crash at repeat 1: repeat 0 kept).
[ "$(count "select count(*) from result r join resultclass c on c.id=r.resultclass_id join benchmark b on b.id=c.benchmark_id where b.name='selftest/crash'")" -eq 1 ] \
  && pass || fail "selftest/crash should keep its one completed repeat"
sleep 0.5
if pgrep_ours -f 'selftest/hang-child' >/dev/null; then fail "a timed-out benchmark left processes: $(pgrep -af selftest/hang-child)"; else pass; fi
"$KBENCH" show broken --store "$S" >"$WORK/show.out" 2>&1
expect_contains "$WORK/show.out" "failed: selftest/hang-child: timed out after 3s"
# compare refuses a profile against itself: a copy of the store gets a
# second profile with selftest/sleep, so the counts below stay the plan's.
sqlite3 "$DB" ".backup '$WORK/copy.db'"
"$KBENCH" run --swprofile other --benchmark selftest/sleep --repeats 2 --warmups 0 --sessions 1 \
  --store "sqlite://$WORK/copy.db" >/dev/null 2>"$WORK/other.err" || fail "run other exited $?: $(tail -3 "$WORK/other.err")"
"$KBENCH" compare broken other --store "sqlite://$WORK/copy.db" >"$WORK/compare.out" 2>&1
expect_contains "$WORK/compare.out" "failed: selftest/crash (broken, session 1): killed by signal 6"

# --- kill -9, then --resume ------------------------------------------------------
cat >"$WORK/long.yaml" <<'YAML'
swprofiles: [{name: r1}, {name: r2}]
defaults: {benchmark: {warmups: 0, repeats: 3, sessions: 2, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "150", at: "99"}}
  - {name: selftest/sleep, params: {ms: "151", at: "99"}}
  - {name: selftest/sleep, params: {ms: "152", at: "99"}}
YAML
"$KBENCH" plan exec "$WORK/long.yaml" --store "$S" >/dev/null 2>"$WORK/long1.err" &
controller=$!
rounds=0
# Kill it once some but not all of the 36 samples are in.
until [ "$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2')" 2>/dev/null || echo 0)" -ge 8 ] \
      || [ $rounds -ge 300 ]; do sleep 0.1; rounds=$((rounds + 1)); done
kill -9 $controller
wait $controller 2>/dev/null
before=$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2')")
[ "$before" -ge 8 ] && [ "$before" -lt 36 ] && pass || fail "killed run stored $before samples, expected some of 36"
sleep 0.3
pgrep_ours -f 'selftest/sleep' >/dev/null && fail "kill -9 of the controller left an agent running" || pass
"$KBENCH" plan exec "$WORK/long.yaml" --store "$S" --resume >/dev/null 2>"$WORK/long2.err" || fail "--resume exited $?"
expect_contains "$WORK/long2.err" "resuming session"
after=$(count "select count(*) from result r join session s on s.id=r.session_id join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2')")
[ "$after" -eq 36 ] && pass || fail "after --resume $after samples, expected exactly 36 (2 swprofiles x 2 sessions x 3 benchmarks x 3 repeats)"
sessions=$(count "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2')")
[ "$sessions" -eq 4 ] && pass || fail "after --resume $sessions sessions, expected 4"
outcomes=$(count "select count(*) from outcome o join session s on s.id=o.session_id join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2') and o.status='ok'")
[ "$outcomes" -eq 12 ] && pass || fail "after --resume $outcomes ok outcomes, expected 12"
[ "$(count 'pragma integrity_check')" = "ok" ] && pass || fail "integrity check failed"
# Sessions alternate between the swprofiles, each round in the balanced
# order (round_order): r1 r2, then r2 r1.
order=$(count "select group_concat(w.name, ' ') from (select * from session order by id) s join swprofile w on w.id=s.swprofile_id where w.name in ('r1','r2')")
[ "$order" = "r1 r2 r2 r1" ] && pass || fail "session order '$order', expected 'r1 r2 r2 r1'"

# --- a swprofile's wrapper: the agent runs under it, in that swprofile only -------
cat >"$WORK/wrap.sh" <<'SH'
#!/bin/sh
echo "$@" >>"$WRAP_LOG"
exec "$@"
SH
chmod +x "$WORK/wrap.sh"
cat >"$WORK/wrapper.yaml" <<YAML
swprofiles:
  - {name: plain}
  - {name: wrapped, wrapper: [$WORK/wrap.sh]}
defaults: {benchmark: {warmups: 0, repeats: 1, sessions: 2, timeout: 1m}}
benchmarks: [{name: selftest/sleep, params: {ms: "1"}}]
YAML
WRAP_LOG="$WORK/wrap.log" "$KBENCH" plan exec "$WORK/wrapper.yaml" --store "$S" >/dev/null 2>"$WORK/wrapper.err" \
  || fail "plan exec with a wrapper exited $?: $(tail -3 "$WORK/wrapper.err")"
# Each wrapped session starts the agent for its fingerprint, its benchmark and its end state.
runs=$(grep -c 'kbench-agent run ' "$WORK/wrap.log" 2>/dev/null)
[ "$runs" = 2 ] && pass || fail "the wrapper ran the agent's benchmark $runs times, expected 2 (the wrapped sessions): $(cat "$WORK/wrap.log" 2>&1)"
grep -q 'kbench-agent fingerprint' "$WORK/wrap.log" && pass || fail "the wrapped sessions' fingerprints were not taken under the wrapper"
declared=$(count "select group_concat(w.name || '=' || coalesce(json_extract(s.fingerprint, '\$.swprofile.wrapper[0]'), '-'), ' ') from (select * from session order by id) s join swprofile w on w.id=s.swprofile_id where w.name in ('plain','wrapped')")
[ "$declared" = "plain=- wrapped=$WORK/wrap.sh wrapped=$WORK/wrap.sh plain=-" ] && pass || fail "fingerprints declare the wrapper as '$declared'"
printf 'swprofiles:\n  - {name: a, wrapper: taskset}\nbenchmarks: [syscall/getpid]\n' >"$WORK/wrapper-scalar.yaml"
expect_bad_input "a wrapper that is not a list" "$KBENCH" plan check "$WORK/wrapper-scalar.yaml"
expect_contains "$WORK/err" "wrapper-scalar.yaml:2: swprofiles[].wrapper: expected a list of words"
printf 'sut: {name: vm, connection: {method: qemu, params: {}}}\nswprofiles:\n  - {name: a, kernel: /boot/vmlinuz, wrapper: [taskset, -c, "1"]}\nbenchmarks: [syscall/getpid]\n' >"$WORK/wrapper-qemu.yaml"
expect_bad_input "a wrapper on a qemu SUT" "$KBENCH" plan check "$WORK/wrapper-qemu.yaml"
expect_contains "$WORK/err" "swprofile a: wrapper: expected a local or ssh SUT"

# --- sysctls restored ------------------------------------------------------------
TTL=/proc/sys/net/ipv4/ip_default_ttl   # harmless: the default TTL of new IPv4 packets
if [ -w "$TTL" ]; then
  original=$(cat "$TTL")
  cat >"$WORK/sysctl.yaml" <<YAML
swprofiles: [{name: ttl, sysctl: {net.ipv4.ip_default_ttl: "77"}}]
defaults: {benchmark: {warmups: 0, repeats: 50, timeout: 1m}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "200", at: "999"}}
YAML
  for how in TERM KILL; do
    "$KBENCH" plan exec "$WORK/sysctl.yaml" --store "$S" >/dev/null 2>"$WORK/sysctl-$how.err" &
    controller=$!
    rounds=0
    until [ "$(cat "$TTL")" = 77 ] || [ $rounds -ge 100 ]; do sleep 0.1; rounds=$((rounds + 1)); done
    [ "$(cat "$TTL")" = 77 ] && pass || fail "the swprofile's sysctl was not applied"
    sleep 0.5
    kill -$how $controller
    wait $controller
    status=$?
    if [ $how = TERM ]; then
      [ $status -eq 143 ] && pass || fail "SIGTERM: exit $status, expected 143"
      [ "$(cat "$TTL")" = "$original" ] && pass || fail "SIGTERM left ip_default_ttl at $(cat "$TTL")"
    else
      [ "$(cat "$TTL")" = 77 ] && pass || fail "kill -9 cannot restore; expected 77 until the next run"
      # The next invocation restores from the journal before it does anything else.
      "$KBENCH" plan exec "$WORK/long.yaml" --swprofile r1 --store "sqlite://$WORK/other.db" \
        >/dev/null 2>"$WORK/restore.err"
      [ "$(cat "$TTL")" = "$original" ] && pass || fail "journal did not restore ip_default_ttl ($(cat "$TTL"))"
      expect_contains "$WORK/restore.err" "restored sysctl net.ipv4.ip_default_ttl=$original"
    fi
  done
  echo "$original" >"$TTL"
else
  echo "skipped: sysctl restore checks ($TTL is not writable here)"
fi

# --- progress on and off a terminal ------------------------------------------------
cat >"$WORK/progress.yaml" <<'YAML'
swprofiles: [{name: p}]
defaults: {benchmark: {warmups: 0, repeats: 3}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "100", at: "99"}}
  - {name: selftest/sleep, params: {ms: "101", at: "99"}}
YAML
"$KBENCH" plan exec "$WORK/progress.yaml" --store "$S" >/dev/null 2>"$WORK/plain.err" || fail "progress plan exited $?"
grep -q $'\r' "$WORK/plain.err" && fail "off a terminal the progress must not redraw lines" || pass
[ "$(grep -c '^\[[12]/2\] p session 1 selftest/sleep: 3 repeats in' "$WORK/plain.err")" -eq 2 ] && pass \
  || fail "off a terminal expected one line per step: $(cat "$WORK/plain.err")"
script -qec "$KBENCH plan exec $WORK/progress.yaml --store $S" /dev/null >"$WORK/tty.out" 2>&1 </dev/null
grep -q $'\r' "$WORK/tty.out" && pass || fail "on a terminal the progress line should redraw"
expect_contains "$WORK/tty.out" "ETA"
expect_contains "$WORK/tty.out" "repeat 2/3"
expect_contains "$WORK/tty.out" "elapsed"
finish

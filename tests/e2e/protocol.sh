#!/usr/bin/env bash
# The controller does not trust the agent's stream. A fake agent (a real
# script the controller runs as KBENCH_AGENT) passes `list` and `fingerprint`
# to the real agent and rewrites the real `run` stream with one fault in
# repeat 1 of 2. Each fault must fail the benchmark (exit 1) with one reason
# naming it, on stderr and in `kbench show`, with repeat 1 not stored; an
# agent that refuses its input (exit 2) must have its own message shown and
# make kbench exit 2.
source "$(dirname "$0")/lib.bash"
unset KBENCH_STORE
export REAL_AGENT="$KBENCH_AGENT"
FAKE="$WORK/fake-agent"
cat >"$FAKE" <<'SH'
#!/usr/bin/env bash
case "$1" in list | fingerprint) exec "$REAL_AGENT" "$@" ;; esac
# The real agent's records, one fault injected by awk. Keys come sorted, so
# a sample line reads {"benchmark":..,"better":..,"repeat":N,"resultclass":..,"type":"sample",..}.
first_of_repeat_1='/"type":"sample"/ && /"repeat":1,/ && !done'
rewrite() { "$REAL_AGENT" "$@" | awk "$PROGRAM"; exit "${PIPESTATUS[0]}"; }
case "$FAULT" in
  none) PROGRAM='{print}' ;;
  no-end) PROGRAM='!/"type":"end"/' ;;
  other-benchmark) PROGRAM="$first_of_repeat_1"' {sub(/"benchmark":"syscall\/getpid"/, "\"benchmark\":\"syscall/getppid\""); done=1} {print}' ;;
  undeclared) PROGRAM="$first_of_repeat_1"' {print; sub(/"resultclass":"[^"]*"/, "\"resultclass\":\"bogus\""); done=1} {print}' ;;
  negative) PROGRAM="$first_of_repeat_1"' {sub(/"value":/, "\"value\":-"); done=1} {print}' ;;
  fractional) PROGRAM="$first_of_repeat_1"' {sub(/"repeat":1,/, "\"repeat\":1.5,"); done=1} {print}' ;;
  duplicate) PROGRAM="$first_of_repeat_1"' {print; done=1} {print}' ;;
  missing-class) PROGRAM="$first_of_repeat_1"' {done=1; next} {print}' ;;
  renumbered) PROGRAM='/"repeat":1,/ {sub(/"repeat":1,/, "\"repeat\":2,")} {print}' ;;
  unknown-type) PROGRAM="$first_of_repeat_1"' {print "{\"type\":\"telemetry\",\"benchmark\":\"syscall/getpid\"}"; done=1} {print}' ;;
  not-json) PROGRAM="$first_of_repeat_1"' {print "hello, not JSON"; done=1} {print}' ;;
  huge-line)
    # 50 MB of text without a newline in the middle of repeat 1.
    "$REAL_AGENT" "$@" | while IFS= read -r line; do
      printf '%s\n' "$line"
      if [ -z "${sent:-}" ] && [[ $line == *'"type":"repeat_end"'*'"repeat":0,'* || $line == *'"repeat":0,'*'"type":"repeat_end"'* ]]; then
        head -c 50000000 /dev/zero | tr '\0' x; echo; sent=1
      fi
    done
    exit "${PIPESTATUS[0]}" ;;
  short-run) PROGRAM='/"repeat":1,/ {next} {print}' ;;
  other-unit) PROGRAM='{gsub(/"unit":"ns"/, "\"unit\":\"ms\"")} {print}' ;;
  other-params) PROGRAM='/"type":"benchmark"/ {sub(/"calls":"20000"/, "\"calls\":\"20001\"")} {print}' ;;
  refuse-stderr) echo "kbench-agent: --param calls=abc: expected a whole number of calls" >&2; exit 2 ;;
  refuse-record)
    # A parameter the benchmark only rejects mid-run: error and end records, exit 2.
    "$REAL_AGENT" "$@" | awk '{print} /"type":"repeat_end"/ {exit}'
    echo '{"type":"error","benchmark":"syscall/getpid","message":"size 3XB: expected a size such as 4KB"}'
    echo '{"type":"end","benchmark":"syscall/getpid","status":"error"}'
    echo "kbench-agent: syscall/getpid: size 3XB: expected a size such as 4KB" >&2
    exit 2 ;;
  *) echo "fake agent: unknown FAULT '$FAULT'" >&2; exit 99 ;;
esac
rewrite "$@"
SH
chmod +x "$FAKE"

cat >"$WORK/plan.yaml" <<'YAML'
swprofiles: [{name: P}]
defaults: {benchmark: {warmups: 0, repeats: 2}}
benchmarks:
  - {name: syscall/getpid, params: {calls: "20000"}}
YAML

# run_with FAULT: plan exec with the fake agent into the store $WORK/FAULT.db.
run_with() {
  FAULT=$1 KBENCH_AGENT="$FAKE" "$KBENCH" plan exec "$WORK/plan.yaml" --store "sqlite://$WORK/$1.db" \
    >"$WORK/$1.out" 2>"$WORK/$1.err"
}
samples_of_repeat() { sqlite3 "$WORK/$1.db" "select count(*) from result where repeat = $2"; }

# expect_broken FAULT REASON KEPT0 KEPT1: exit 1; REASON on stderr, in the
# run's table and in `kbench show`; KEPT0 and KEPT1 samples of repeats 0 and 1
# stored (a repeat the fault broke keeps none).
expect_broken() {
  local fault=$1 reason=$2 kept0=$3 kept1=$4
  run_with "$fault"
  local status=$?
  [ "$status" -eq 1 ] && pass || fail "$fault: exit status $status, expected 1 ($(tail -2 "$WORK/$fault.err"))"
  expect_contains "$WORK/$fault.err" "syscall/getpid: FAILED: $reason"
  expect_contains "$WORK/$fault.out" "failed: syscall/getpid: $reason"
  "$KBENCH" show P --store "sqlite://$WORK/$fault.db" >"$WORK/$fault.show" 2>&1 || fail "$fault: show exited $?"
  expect_contains "$WORK/$fault.show" "failed: syscall/getpid: $reason"
  local repeat0 repeat1
  repeat0=$(samples_of_repeat "$fault" 0)
  repeat1=$(samples_of_repeat "$fault" 1)
  [ "$repeat0" -eq "$kept0" ] && pass || fail "$fault: $repeat0 samples of repeat 0 stored, expected $kept0"
  [ "$repeat1" -eq "$kept1" ] && pass || fail "$fault: $repeat1 samples of repeat 1 stored, expected $kept1"
  echo "$fault -> $(grep -o 'FAILED: .*' "$WORK/$fault.err")"
}

# The fake agent itself is faithful when it injects nothing.
run_with none && pass || fail "the unchanged stream failed: $(tail -2 "$WORK/none.err")"
[ "$(samples_of_repeat none 1)" -eq 4 ] && pass || fail "the unchanged stream stored $(samples_of_repeat none 1) samples of repeat 1"

expect_broken no-end "agent exited with status 0 without an 'end' record (after 2 of 2 repeats)" 4 4
expect_broken other-benchmark "agent wrote a 'sample' record for benchmark 'syscall/getppid' while running 'syscall/getpid'" 4 0
expect_broken undeclared "agent reported the undeclared result class 'bogus (ns)' (lower is better) in repeat 1" 4 0
expect_broken negative "agent wrote a bad record: 'sample' record: field 'value': expected a value >= 0 for a quantity in ns" 4 0
expect_broken fractional "agent wrote a bad record: 'sample' record: field 'repeat': expected an integer" 4 0
expect_broken duplicate "agent reported 'mean (ns)' twice in repeat 1" 4 0
expect_broken missing-class "agent ended repeat 1 without the result class 'mean (ns)'" 4 0
expect_broken renumbered "agent wrote a sample of repeat 2 where repeat 1 was due" 4 0
expect_broken unknown-type "agent wrote a bad record: a record of unknown type \"telemetry\"" 4 0
expect_broken not-json "agent wrote a line that is not a JSON record: hello, not JSON" 4 0
expect_broken short-run "agent ended with status ok after 1 of 2 repeats" 4 0
expect_broken other-unit "agent declares the result class 'mean (ms)' (lower is better), unlike every result class of syscall/getpid in the catalogue" 0 0
expect_broken other-params "agent ran syscall/getpid with the parameters {calls=20001}, not the {calls=20000} asked for" 0 0

# A 50 MB line is never held whole: under a 256 MiB address-space limit
# kbench reads past it (it held it three times over before).
( before=$FAILURES; ulimit -v 262144; expect_broken huge-line "agent wrote a line of more than 1 MiB" 4 0
  exit $((FAILURES - before)) )
FAILURES=$((FAILURES + $?))
[ "$(wc -c <"$WORK/huge-line.err")" -lt 10000 ] && pass || fail "huge-line: $(wc -c <"$WORK/huge-line.err") bytes on stderr"

# An agent that refuses its input: its own message, exit 2, nothing stored.
for fault in refuse-stderr refuse-record; do
  run_with "$fault"
  status=$?
  [ "$status" -eq 2 ] && pass || fail "$fault: exit status $status, expected 2"
  [ "$(samples_of_repeat "$fault" 0)" -eq 0 ] && pass || fail "$fault: samples of a refused benchmark were stored"
  [ "$(sqlite3 "$WORK/$fault.db" 'select count(*) from outcome')" -eq 0 ] && pass || fail "$fault: an outcome was stored"
  echo "$fault -> $(tail -1 "$WORK/$fault.err")"
done
[ "$(tail -1 "$WORK/refuse-stderr.err")" = "kbench: syscall/getpid: --param calls=abc: expected a whole number of calls" ] \
  && pass || fail "refuse-stderr: last line: $(tail -1 "$WORK/refuse-stderr.err")"
[ "$(tail -1 "$WORK/refuse-record.err")" = "kbench: syscall/getpid: size 3XB: expected a size such as 4KB" ] \
  && pass || fail "refuse-record: last line: $(tail -1 "$WORK/refuse-record.err")"
# kbench run shows it the same way.
FAULT=refuse-stderr KBENCH_AGENT="$FAKE" "$KBENCH" run --swprofile R --benchmark syscall/getpid \
  --store "sqlite://$WORK/run.db" >"$WORK/run.out" 2>"$WORK/run.err"
status=$?
[ "$status" -eq 2 ] && pass || fail "kbench run with a refusing agent: exit status $status, expected 2"
[ "$(tail -1 "$WORK/run.err")" = "kbench: syscall/getpid: --param calls=abc: expected a whole number of calls" ] \
  && pass || fail "kbench run: last line: $(tail -1 "$WORK/run.err")"
finish

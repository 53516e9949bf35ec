#!/usr/bin/env bash
# Several SUTs in one plan (suts:): measured in parallel into one store, each
# session's fingerprint carrying its SUT's declared class; a SUT that cannot
# be reached fails alone (exit 1, named, with the resume command); --resume
# --sut runs only what that SUT lacks; an interrupt stops every worker and
# --resume finishes each SUT's own sessions.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1            # selftest/sleep: a benchmark whose cost is known
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
S="sqlite://$DB"
q() { sqlite3 "$DB" "$1"; }
per_sut="select t.name || '|' || json_extract(s.fingerprint, '$.sut_class') || '|' || count(*) || '|' ||
         sum(s.finished_at is not null) from session s join sut t on t.id = s.sut_id group by t.name order by t.name"

write_plan() {  # write_plan FILE BETA_CONNECTION [MS]
  cat >"$1" <<YAML
suts:
  - {name: alpha, class: aws-m7g}
  - {name: beta, class: AmpereOne, connection: $2}
swprofiles: [{name: base}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 2, size: quick}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "${3:-5}"}}
  - {name: syscall/getppid, params: {calls: "100000"}}
YAML
}

# --- bad input: nothing runs, nothing is written --------------------------------
write_plan "$WORK/two.yaml" "{method: local}"
expect_bad_input "--sut naming no SUT of the plan" "$KBENCH" plan exec "$WORK/two.yaml" --sut gamma --store "$S"
expect_contains "$WORK/err" "--sut gamma: plan $WORK/two.yaml has no such SUT (known: alpha, beta)"
printf 'sut: {name: a}\nsuts:\n  - {name: b}\nbenchmarks: [syscall/getppid]\n' >"$WORK/both.yaml"
expect_bad_input "sut and suts together" "$KBENCH" plan exec "$WORK/both.yaml" --store "$S"
expect_contains "$WORK/err" "both.yaml:3: suts: expected either sut (one SUT) or suts (a list), not both"
expect_bad_input "--until-decided with suts" "$KBENCH" plan exec "$WORK/two.yaml" --until-decided --store "$S"
expect_bad_input "--resume with no SUT's run to resume" "$KBENCH" plan exec "$WORK/two.yaml" --resume --store "$S"
expect_contains "$WORK/err" "--resume: no interrupted run of plan $WORK/two.yaml to resume in $S"
[ ! -e "$DB" ] && pass || fail "refused input created the store"
"$KBENCH" plan check "$WORK/two.yaml" >"$WORK/check.out" 2>&1 && pass || fail "plan check: $(cat "$WORK/check.out")"
expect_contains "$WORK/check.out" "ok: 2 SUTs, 1 swprofile, 2 benchmarks"

# --- two local SUTs in parallel, one store ---------------------------------------
"$KBENCH" plan exec "$WORK/two.yaml" --store "$S" >"$WORK/two.out" 2>"$WORK/two.err"
status=$?
[ $status -eq 0 ] && pass || { fail "two SUTs: exit $status"; cat "$WORK/two.err" >&2; }
[ "$(q "$per_sut" | tr '\n' ' ')" = "alpha|aws-m7g|2|2 beta|AmpereOne|2|2 " ] && pass \
  || fail "sessions per SUT: $(q "$per_sut" | tr '\n' ' ')"
# The agent's own derivation is kept beside the declared class.
[ "$(q "select count(*) from session where json_extract(fingerprint, '$.sut_class_derived') is not null")" = 4 ] \
  && pass || fail "sut_class_derived missing"
# 2 sessions x 2 repeats x 2 benchmarks per SUT, each repeat one sample per result class.
[ "$(q "select count(distinct session_id || '/' || repeat) from result")" -ge 8 ] && pass || fail "too few repeats"
# Off a terminal every progress line names its SUT.
expect_contains "$WORK/two.err" "alpha: [1/4] base session 1"
expect_contains "$WORK/two.err" "beta: [4/4] base session 2"
# A worker also announces each step's start, for the terminal view only.
grep -q '^alpha: \[.*\.\.\.$' "$WORK/two.err" && fail "a step's start line reached the log" || pass
grep -E '^alpha +aws-m7g +ok +2/2 +0 +0$' "$WORK/two.err" >/dev/null && pass || fail "summary: $(tail -4 "$WORK/two.err")"
grep -E '^beta +AmpereOne +ok +2/2 +0 +0$' "$WORK/two.err" >/dev/null && pass || fail "summary: $(tail -4 "$WORK/two.err")"
expect_contains "$WORK/two.out" "== SUT alpha (class aws-m7g)"
expect_contains "$WORK/two.out" "== SUT beta (class AmpereOne)"

# --- one SUT unreachable: the other completes, exit 1 naming it ------------------
rm -f "$DB"*
# A port nothing listens on: bind one, note it, close it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
write_plan "$WORK/broken.yaml" "{method: ssh, params: {host: 127.0.0.1, port: \"$port\", connect_timeout: \"5\"}}"
"$KBENCH" plan exec "$WORK/broken.yaml" --store "$S" >"$WORK/broken.out" 2>"$WORK/broken.err"
status=$?
[ $status -eq 1 ] && pass || fail "unreachable SUT: exit $status, expected 1"
[ "$(q "$per_sut" | tr '\n' ' ')" = "alpha|aws-m7g|2|2 " ] && pass || fail "after the failure: $(q "$per_sut")"
expect_contains "$WORK/broken.err" "kbench: SUT beta: exit status 1: "
grep -F "SUT beta: exit status 1:" "$WORK/broken.err" | grep -q "Connection refused" && pass \
  || fail "the reason is not ssh's: $(grep -F 'SUT beta' "$WORK/broken.err")"
expect_contains "$WORK/broken.err" "kbench: 1 of 2 SUTs failed: beta; the others went on. Continue the failed ones with: kbench plan exec '$WORK/broken.yaml' --resume --sut 'beta' --store '$S'"
grep -E '^beta +AmpereOne +FAILED +0/2 +0 +2$' "$WORK/broken.err" >/dev/null && pass || fail "summary: $(tail -6 "$WORK/broken.err")"
alpha_samples=$(q "select count(*) from result r join session s on s.id = r.session_id join sut t on t.id = s.sut_id where t.name = 'alpha'")

# Fixed (the same plan file, beta now reachable): only beta runs.
write_plan "$WORK/broken.yaml" "{method: local}"
"$KBENCH" plan exec "$WORK/broken.yaml" --resume --sut beta --store "$S" >"$WORK/fixed.out" 2>"$WORK/fixed.err"
status=$?
[ $status -eq 0 ] && pass || { fail "resume of beta: exit $status"; cat "$WORK/fixed.err" >&2; }
[ "$(q "$per_sut" | tr '\n' ' ')" = "alpha|aws-m7g|2|2 beta|AmpereOne|2|2 " ] && pass \
  || fail "after resuming beta: $(q "$per_sut" | tr '\n' ' ')"
grep -q '^alpha: ' "$WORK/fixed.err" && fail "--sut beta ran alpha too" || pass
# Everything done: a --resume of all SUTs measures nothing again.
"$KBENCH" plan exec "$WORK/broken.yaml" --resume --store "$S" >"$WORK/again.out" 2>"$WORK/again.err"
status=$?
[ $status -eq 0 ] && pass || { fail "resume of both: exit $status"; cat "$WORK/again.err" >&2; }
[ "$(q "$per_sut" | tr '\n' ' ')" = "alpha|aws-m7g|2|2 beta|AmpereOne|2|2 " ] && pass \
  || fail "a second resume added sessions: $(q "$per_sut" | tr '\n' ' ')"
[ "$(q "select count(*) from result r join session s on s.id = r.session_id join sut t on t.id = s.sut_id where t.name = 'alpha'")" = "$alpha_samples" ] \
  && pass || fail "a second resume changed alpha's samples"
expect_contains "$WORK/again.err" "already done (ok)"

# --- an interrupt stops every worker; --resume finishes each SUT ----------------
rm -f "$DB"*
# One session of one 2 s benchmark per SUT: a session row exists only once its
# benchmarks are about to run, so when both SUTs have one, both are measuring.
cat >"$WORK/slow.yaml" <<'YAML'
suts:
  - {name: alpha, class: aws-m7g}
  - {name: beta, class: AmpereOne}
swprofiles: [{name: base}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 1}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1000"}}
YAML
"$KBENCH" plan exec "$WORK/slow.yaml" --store "$S" >"$WORK/slow.out" 2>"$WORK/slow.err" &
controller=$!
rounds=0
until [ "$(q "select count(distinct sut_id) from session" 2>/dev/null || echo 0)" = 2 ] || [ $rounds -ge 300 ]; do
  sleep 0.1; rounds=$((rounds + 1))
done
kill -INT $controller
wait $controller
status=$?
[ $status -eq 130 ] && pass || fail "SIGINT: exit $status, expected 130"
expect_contains "$WORK/slow.err" "alpha: kbench: interrupted by signal 2"
expect_contains "$WORK/slow.err" "beta: kbench: interrupted by signal 2"
expect_contains "$WORK/slow.err" "kbench: interrupted by signal 2; continue with: kbench plan exec '$WORK/slow.yaml' --resume --sut 'alpha' --sut 'beta'"
pgrep -f -- "--fleet-worker --sut .* --store $S" >/dev/null && fail "a worker outlived the interrupt" || pass
[ "$(q "select count(*) from session where finished_at is not null")" = 0 ] && pass || fail "a session finished despite the interrupt"
"$KBENCH" plan exec "$WORK/slow.yaml" --resume --store "$S" >"$WORK/resumed.out" 2>"$WORK/resumed.err"
status=$?
[ $status -eq 0 ] && pass || { fail "resume after SIGINT: exit $status"; tail -8 "$WORK/resumed.err" >&2; }
[ "$(q "$per_sut" | tr '\n' ' ')" = "alpha|aws-m7g|1|1 beta|AmpereOne|1|1 " ] && pass \
  || fail "after the resume: $(q "$per_sut" | tr '\n' ' ')"
expect_contains "$WORK/resumed.err" "alpha: resuming session 1 of swprofile base"
expect_contains "$WORK/resumed.err" "beta: resuming session 1 of swprofile base"

# --- compare: one table per declared class, --class selects -------------------
rm -f "$DB"*
cat >"$WORK/classes.yaml" <<YAML
suts:
  - {name: alpha, class: aws-m7g}
  - {name: beta, class: AmpereOne}
swprofiles: [{name: base}, {name: other}]
defaults: {benchmark: {warmups: 0, repeats: 3, sessions: 1}}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1"}}
YAML
"$KBENCH" plan exec "$WORK/classes.yaml" --store "$S" >/dev/null 2>"$WORK/classes.err" || fail "the class plan exited $?: $(tail -3 "$WORK/classes.err")"
"$KBENCH" compare base other --store "$S" >"$WORK/classes.out" 2>&1 || fail "compare exited $?: $(cat "$WORK/classes.out")"
expect_contains "$WORK/classes.out" "Results for SUT Class AmpereOne:"
expect_contains "$WORK/classes.out" "Results for SUT Class aws-m7g:"
"$KBENCH" compare base other --class 'aws*' --store "$S" >"$WORK/one-class.out" 2>&1 || fail "compare --class exited $?"
expect_contains "$WORK/one-class.out" "Results for SUT Class aws-m7g:"
grep -q "AmpereOne" "$WORK/one-class.out" && fail "--class 'aws*' printed AmpereOne's table" || pass
finish

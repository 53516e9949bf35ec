#!/usr/bin/env bash
# Containment of a benchmark's tasks: selftest/escape-setsid starts a
# grandchild that leaves the agent's session and process group, is
# reparented away from the benchmark and ignores SIGTERM/SIGINT/SIGHUP. After
# --timeout, SIGINT to kbench or kill -9 of kbench it must be gone, with the
# cgroup (where this machine has a writable cgroup v2) and with the subreaper
# fallback (KBENCH_CONTAINMENT=subreaper); no kbench cgroup may be left.
# Every wait below is a generous upper bound, never a guess at a duration.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
S="sqlite://$WORK/store.db"
CGROUP2=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -1)

# wait_until SECONDS CMD...: polls CMD every 0.1s; false if it never succeeds.
wait_until() {
  local rounds=$(($1 * 10)); shift
  until "$@"; do
    rounds=$((rounds - 1))
    [ "$rounds" -le 0 ] && return 1
    sleep 0.1
  done
}
escapee() { pgrep_ours -x kb-escapee; }
no_escapee() { ! pgrep_ours -x kb-escapee >/dev/null; }

pkill_leftovers() { local p; for p in $(pgrep_ours -x kb-escapee); do kill -KILL "$p"; done; }

# start_escape NAME: kbench runs selftest/escape-setsid in the background
# ($controller); waits for the escapee ($escaped) and checks it really left
# the agent's process group and session.
start_escape() {
  "$KBENCH" run --swprofile "$1" --benchmark selftest/escape-setsid --warmups 0 --repeats 2 --timeout 10s \
    --store "$S" >"$WORK/$1.out" 2>"$WORK/$1.err" &
  controller=$!
  escaped=""
  if ! wait_until 60 escapee >/dev/null; then fail "$1: the escapee never started: $(cat "$WORK/$1.err")"; return 1; fi
  escaped=$(escapee | head -1)
  # The escapee's cgroup (the agent's, kbench-agent-<pid>, when contained by
  # cgroup2): it must be gone at the end. Only this one is looked at, as
  # other tests' agents may run beside this script.
  escaped_cgroup=$(sed -n 's/^0:://p' "/proc/$escaped/cgroup")
  local group session agents
  group=$(ps -o pgid= -p "$escaped" | tr -d ' ')
  session=$(ps -o sid= -p "$escaped" | tr -d ' ')
  agents=" $(pgrep -d ' ' -x kbench-agent) "
  if [[ "$agents" != *" $group "* && "$session" != "$(ps -o sid= -p $controller | tr -d ' ')" ]]; then pass
  else fail "$1: the escapee stayed in the agent's group $group / session $session"; fi
}

# expect_contained NAME: after the controller ended, nothing is left.
expect_contained() {
  if wait_until 30 no_escapee; then pass
  else fail "$1: the setsid'd grandchild survived: $(ps -o pid,ppid,pgid,sid,cmd -p "$escaped")"; pkill_leftovers; fi
  if [ -n "$CGROUP2" ] && [[ "$escaped_cgroup" == */kbench-agent-* ]] && [ -d "$CGROUP2$escaped_cgroup" ]; then
    fail "$1: cgroup left behind: $CGROUP2$escaped_cgroup"
  else pass; fi
}

# --- fallback: subreaper -----------------------------------------------------------
KBENCH_CONTAINMENT=subreaper "$KBENCH_AGENT" fingerprint >"$WORK/fp-subreaper.json"
expect_contains "$WORK/fp-subreaper.json" '"containment":"subreaper (forced by KBENCH_CONTAINMENT=subreaper)"'
expect_bad_input "KBENCH_CONTAINMENT=bogus" env KBENCH_CONTAINMENT=bogus "$KBENCH_AGENT" run --benchmark selftest/sleep

export KBENCH_CONTAINMENT=subreaper
if start_escape fallback-timeout; then
  if grep -q '^0::.*kbench-agent-' "/proc/$escaped/cgroup"; then fail "fallback-timeout: the escapee is in a kbench cgroup"; else pass; fi
  wait $controller; status=$?
  [ "$status" -eq 1 ] && pass || fail "fallback-timeout: kbench exited $status, expected 1"
  expect_contains "$WORK/fallback-timeout.err" "selftest/escape-setsid: FAILED: timed out after 10s"
  expect_contained fallback-timeout
fi

if start_escape fallback-sigint; then
  kill -INT $controller
  wait $controller; status=$?
  [ "$status" -eq 130 ] && pass || fail "fallback-sigint: kbench exited $status, expected 130"
  expect_contained fallback-sigint
fi

if start_escape fallback-kill9; then
  kill -KILL $controller
  wait $controller 2>/dev/null
  expect_contained fallback-kill9
fi
unset KBENCH_CONTAINMENT

# --- cgroup v2 -------------------------------------------------------------------------
"$KBENCH_AGENT" fingerprint >"$WORK/fp-auto.json"
if [ -n "$CGROUP2" ] && [ "$(id -u)" -eq 0 ]; then
  expect_contains "$WORK/fp-auto.json" "\"containment\":\"cgroup2 $CGROUP2"
  if start_escape cgroup-timeout; then
    group_dir=$(sed -n 's/^0:://p' "/proc/$escaped/cgroup")
    [[ "$group_dir" == */kbench-agent-* ]] && pass || fail "cgroup-timeout: the escapee is in cgroup '$group_dir', expected kbench-agent-<pid>"
    [ -d "$CGROUP2$group_dir" ] && pass || fail "cgroup-timeout: no directory $CGROUP2$group_dir"
    wait $controller; status=$?
    [ "$status" -eq 1 ] && pass || fail "cgroup-timeout: kbench exited $status, expected 1"
    expect_contains "$WORK/cgroup-timeout.err" "selftest/escape-setsid: FAILED: timed out after 10s"
    expect_contained cgroup-timeout
  fi
  # The method is stored with the session's fingerprint.
  sqlite3 "$WORK/store.db" "select fingerprint from session" >"$WORK/fingerprints"
  expect_contains "$WORK/fingerprints" "\"containment\":\"cgroup2 $CGROUP2"
  expect_contains "$WORK/fingerprints" '"containment":"subreaper (forced by KBENCH_CONTAINMENT=subreaper)"'
else
  echo "cgroup part not run: no cgroup2 mount or not root ($(grep -o '"containment":"[^"]*"' "$WORK/fp-auto.json"))"
fi

pkill_leftovers
finish

#!/usr/bin/env bash
# kbench run --kernel-profile: the agent samples the kernel during the
# measured repeats, the controller stores the profile beside the samples, a
# plan's kernel_profile setting does the same, and kbench profile compares
# two swprofiles' profiles.
source "$(dirname "$0")/lib.bash"
STORE="sqlite://$WORK/results.db"
export KBENCH_STORE="$STORE"
DB="$WORK/results.db"

# The agent alone: the record comes last before the end, or says why there is none.
"$KBENCH_AGENT" run --benchmark syscall/getppid --size quick --warmups 0 --repeats 2 --kernel-profile \
  >"$WORK/agent.out" 2>"$WORK/agent.err" || fail "kbench-agent --kernel-profile exited $?: $(cat "$WORK/agent.err")"
profile_type=$(tail -2 "$WORK/agent.out" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["type"])')
[ "$profile_type" = kernel_profile ] && pass || fail "the record before the end is '$profile_type', not kernel_profile"
if grep -q '"unavailable"' "$WORK/agent.out"; then
  echo "profile unavailable here: $(grep -o '"unavailable":"[^"]*"' "$WORK/agent.out")"
else
  samples=$(tail -2 "$WORK/agent.out" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
  [ "$samples" -gt 0 ] && pass || fail "the profile of syscall/getppid has no samples"
fi

run() {
  "$KBENCH" run --swprofile "$1" --suite quick --benchmark 'syscall/getppid' --sessions 1 --repeats 2 --warmups 0 \
    "${@:2}" >"$WORK/run-$1.out" 2>"$WORK/run-$1.err"
}
run A --kernel-profile || fail "kbench run --kernel-profile exited $?: $(tail -5 "$WORK/run-A.err")"
run B --kernel-profile || fail "kbench run B --kernel-profile exited $?: $(tail -5 "$WORK/run-B.err")"
run C || fail "kbench run C exited $?: $(tail -5 "$WORK/run-C.err")"
profiles=$(sqlite3 "$DB" "select count(*) from kernel_profile")
[ "$profiles" -eq 2 ] && pass || fail "$profiles kernel profiles stored, expected 2 (A and B, not C)"
expect_contains "$WORK/run-A.out" "syscall/getppid"
n=$(sqlite3 "$DB" "select count(*) from result r join session s on s.id=r.session_id
                    join swprofile w on w.id=s.swprofile_id where w.name='A'")
[ "$n" -eq 8 ] && pass || fail "swprofile A has $n samples, expected 8 (4 classes, 2 repeats)"

# A plan's setting: the agent is asked for the profile (its command line).
cat >"$WORK/plan.yaml" <<PLAN
swprofiles: [{name: P}]
benchmarks: [{name: syscall/getppid, params: {calls: 20000}}]
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 1, size: quick, kernel_profile: true}}
PLAN
"$KBENCH" plan exec "$WORK/plan.yaml" --store "$STORE" >"$WORK/plan.out" 2>"$WORK/plan.err" \
  || fail "kbench plan exec with kernel_profile: true exited $?: $(tail -5 "$WORK/plan.err")"
profiles=$(sqlite3 "$DB" "select count(*) from kernel_profile k join session s on s.id = k.session_id
                          join swprofile w on w.id = s.swprofile_id where w.name = 'P'")
[ "$profiles" -eq 1 ] && pass || fail "the plan's session has $profiles kernel profiles, expected 1"

# kbench profile: the table of shares, or the reason there is none.
if sqlite3 "$DB" "select unavailable from kernel_profile where unavailable is not null" | grep -q .; then
  "$KBENCH" profile A B --benchmark syscall/getppid >"$WORK/profile.out" 2>"$WORK/profile.err"
  [ $? -eq 1 ] && pass || fail "kbench profile of unavailable profiles did not exit 1"
  expect_contains "$WORK/profile.err" "profile unavailable: "
else
  "$KBENCH" profile A B --benchmark syscall/getppid --top 5 >"$WORK/profile.out" 2>"$WORK/profile.err" \
    || fail "kbench profile exited $?: $(cat "$WORK/profile.err")"
  for text in "Kernel profile of syscall/getppid" "A: 1 session, " "B: 1 session, " "function" "change"; do
    expect_contains "$WORK/profile.out" "$text"
  done
  # The function that gained the most share, to time; none only when the
  # two profiles have the very same shares.
  grep -Eq '^  kbench compare A B --benchmark kfunc/|No function gained share from A to B' \
    "$WORK/profile.out" && pass || fail "no function to time, nor why: $(cat "$WORK/profile.out")"
  cat "$WORK/profile.out"
  # getppid's own work is sampled (every function listed: which changed most
  # between two runs of one kernel is noise).
  "$KBENCH" profile A B --benchmark syscall/getppid --top 100000 >"$WORK/all.out" 2>&1
  grep -Eq '^(__task_pid_nr_ns|__do_sys_getppid|__x64_sys_getppid|do_syscall_64|x64_sys_call|entry_SYSCALL_64) ' \
    "$WORK/all.out" && pass || fail "no function of getppid's path in: $(head -20 "$WORK/all.out")"
fi
expect_bad_input "profile of an unprofiled swprofile" "$KBENCH" profile A C --benchmark syscall/getppid
expect_contains "$WORK/err" "swprofile 'C' has no kernel profile of syscall/getppid"
expect_bad_input "profile of an unknown swprofile" "$KBENCH" profile A nosuch --benchmark syscall/getppid
expect_bad_input "profile of one swprofile" "$KBENCH" profile A --benchmark syscall/getppid
expect_bad_input "profile without --benchmark" "$KBENCH" profile A B
sed 's/kernel_profile: true/kernel_profile: maybe/' "$WORK/plan.yaml" >"$WORK/maybe.yaml"
expect_bad_input "kernel_profile: maybe" "$KBENCH" plan check "$WORK/maybe.yaml"
expect_contains "$WORK/err" "defaults.benchmark.kernel_profile: expected true or false, got 'maybe'"
finish

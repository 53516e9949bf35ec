#!/usr/bin/env bash
# A stock Debian kernel booted in QEMU twice, default cmdline and
# mitigations=off, syscall/getppid measured in each, compared: the default
# profile must come out slower (PTI), and never be marked an improvement. TCG with -cpu max and an Intel
# vendor string, so that the guest kernel turns on PTI (with QEMU's own AMD-ish
# default it reports Meltdown "Not affected" and only retpolines remain, whose
# cost under TCG is lost in the noise).
source "$(dirname "$0")/lib.bash"

started=$(date +%s)
x86_test_kernel
kernel=$KERNEL

store="sqlite://$WORK/qemu.db"
KBENCH_TEST_CPU=${KBENCH_TEST_CPU:-max,vendor=GenuineIntel}
# The two measured swprofiles, under TCG as the comparison is about, through
# the user's path: a plan with a qemu SUT, kbench plan exec.
cat >"$WORK/qemu-plan.yaml" <<YAML
sut:
  name: qemu-tcg
  connection: {method: qemu, params: {memory: 1G, cpus: "1", accel: ${KBENCH_TEST_ACCEL:-tcg}, cpu: "$KBENCH_TEST_CPU"}}
swprofiles:
  - {name: mitigations-off, kernel: $kernel, cmdline: [mitigations=off]}
  - {name: default, kernel: $kernel}
benchmarks:
  - {name: syscall/getppid, params: {calls: "200000"}}
defaults: {benchmark: {warmups: 1, repeats: 5, timeout: 5m}}
YAML
cat "$WORK/qemu-plan.yaml"
plan_started=$(date +%s)
if "$KBENCH" plan exec "$WORK/qemu-plan.yaml" --store "$store" >"$WORK/plan.out" 2>"$WORK/plan.err"; then pass; else
  fail "kbench plan exec of the qemu plan exited $?"; tail -40 "$WORK/plan.err" >&2
fi
cat "$WORK/plan.err"
echo "plan exec (two boots, two runs): $(( $(date +%s) - plan_started ))s"
kernels=$(sqlite3 "$WORK/qemu.db" "select count(*) from session where json_extract(fingerprint, '$.cmdline') like '%mitigations=off%'")
[ "$kernels" -eq 1 ] && pass || fail "the mitigations=off session's /proc/cmdline (taken inside the VM) lacks mitigations=off"
# One boot per profile: too few sessions for the session test, so the repeats
# inside each boot are tested (--sessions pooled), as the field does.
"$KBENCH" compare --store "$store" mitigations-off default --sessions pooled >"$WORK/compare.txt" 2>&1
cat "$WORK/compare.txt"
# The direction, not the significance: one boot a side under TCG on a
# machine that may be busy decides nothing reliably (the marks' logic is
# tested on fixture stores). PTI's page-table switch on every system call
# makes the default profile slower; it must never come out faster, nor be
# marked an improvement.
row=$(grep -E '^\| syscall/getppid +\| mean \(ns\) ' "$WORK/compare.txt")
change=$(echo "$row" | grep -oE '[-+]?[0-9]+\.[0-9]+%' | tail -1 | tr -d '%+')
if [ -n "$change" ] && awk -v c="$change" 'BEGIN { exit !(c < 0) }' && ! echo "$row" | grep -qF '(I)'; then
  pass
  echo "$row" | grep -qF '(R)' || echo "note: the slowdown ($change%) is not marked (R) in this run"
else
  fail "the default-cmdline profile is not slower than mitigations=off on syscall/getppid: $row"
fi

# A kernel that does not come up (no such init: it panics, and panic=-1
# makes QEMU exit) is the kernel's failure, not the plan's: its session is a
# failed boot in the store with the console's tail, its next session is not
# booted again, the other swprofile is measured, and plan exec exits 1.
cat >"$WORK/panic-plan.yaml" <<YAML
sut:
  name: qemu-tcg
  connection: {method: qemu, params: {memory: 1G, cpus: "1", accel: ${KBENCH_TEST_ACCEL:-tcg}, cpu: "$KBENCH_TEST_CPU"}}
swprofiles:
  - {name: panics, kernel: $kernel, cmdline: [rdinit=/no/such/init, init=/no/such]}
  - {name: boots, kernel: $kernel}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 2, timeout: 5m}}
YAML
panic_store="sqlite://$WORK/panic.db"
"$KBENCH" plan exec "$WORK/panic-plan.yaml" --store "$panic_store" >"$WORK/panic.out" 2>"$WORK/panic.err"
status=$?
cat "$WORK/panic.err"
[ "$status" -eq 1 ] && pass || fail "plan exec with a kernel that panics exited $status, expected 1"
expect_contains "$WORK/panic.err" "session 1 of panics: its kernel did not come up by qemu"
expect_contains "$WORK/panic.err" "session 2 of panics not measured: its kernel failed to boot in session 1"
"$KBENCH" list boots --store "$panic_store" >"$WORK/boots.txt" 2>&1
cat "$WORK/boots.txt"
[ "$(grep -c ' panics .*FAILED: ' "$WORK/boots.txt")" -eq 1 ] && pass || fail "list boots: expected one failed boot of panics"
grep -q "console: .*Kernel panic" "$WORK/boots.txt" && pass || fail "list boots: the failed boot lacks the console's panic"
[ "$(grep -c ' boots .* ok, session id ' "$WORK/boots.txt")" -eq 2 ] && pass ||
  fail "list boots: expected the two sessions of boots, each with its session"
measured=$(sqlite3 "$WORK/panic.db" "select swprofile.name || ':' || count(*) from session join swprofile on swprofile.id = session.swprofile_id group by swprofile.name")
[ "$measured" = "boots:2" ] && pass || fail "sessions stored: expected boots:2 only, got '$measured'"

echo "qemu e2e took $(( $(date +%s) - started ))s"
finish

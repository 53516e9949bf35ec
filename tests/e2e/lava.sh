#!/usr/bin/env bash
# The lava connection against a real LAVA server (scripts/lava-test-server.sh:
# one qemu device under TCG): a plan of two swprofiles of the Debian test
# kernel, with and without mitigations=off, 2 sessions of syscall/getpid each,
# every agent run a LAVA job; then kbench compare. As in qemu.sh, an Intel
# vendor string, so that the guest kernel turns on PTI and mitigations=off
# has something to turn off (it also checks that QEMU's commas reach it). Each session must be
# stored with the id of the job that ran it. The same plan has a swprofile
# whose "kernel" is not one and one whose kernel panics: each must be
# recorded as a failed boot (or the lab's failure), naming the job and
# LAVA's reason, while the plan goes on and measures the good two. One plan
# for all: every LAVA job is a boot under TCG (10-25 s), and the good
# swprofiles already show the plan going on past the failures, so a
# separate plan with a good swprofile of its own would only boot more.
# Needs root (the server's start installs packages and starts services):
# labelled `check`.
source "$(dirname "$0")/lib.bash"

started=$(date +%s)
x86_test_kernel
kernel=$KERNEL
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
lava_test_server

store="sqlite://$WORK/lava.db"
# A "kernel" that is not one: QEMU cannot load it, the job ends Incomplete
# with what LAVA classes as an Infrastructure error (the connection to the
# device closed), as a device or dispatcher failing would: the job is
# submitted again once (infra_retries), then the session is not measured
# and not counted against the kernel, whose second session tries again.
# And a kernel that panics (no such init), LAVA's Job error: the kernel's
# failure, a failed boot in the store naming the job and LAVA's reason, the
# kernel not submitted again for its second session. Together they cost
# about one boot: QEMU refuses the garbage at once (2 s a job), and the
# panic comes once the kernel has booted, as a session's fingerprint does.
head -c 100000 /dev/urandom >"$WORK/vmlinuz-garbage"
cat >"$WORK/lava-plan.yaml" <<YAML
sut:
  name: farm
  connection:
    method: lava
    params: {url: "$KBENCH_TEST_LAVA_URL", token_file: "$KBENCH_TEST_LAVA_TOKEN_FILE", device_type: "$KBENCH_TEST_LAVA_DEVICE_TYPE", job_timeout: "900",
             extra_options: "-cpu max,vendor=GenuineIntel"}
swprofiles:
  - {name: A, kernel: $kernel}
  - {name: B, kernel: $kernel, cmdline: [mitigations=off]}
  - {name: garbage, kernel: $WORK/vmlinuz-garbage}
  - {name: panics, kernel: $kernel, cmdline: [rdinit=/no/such/init, init=/no/such]}
benchmarks:
  - {name: syscall/getpid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 3, sessions: 2, timeout: 15m}}
YAML
# Exit 1: the kernels that do not boot.
lava_plan_exec "$WORK/lava-plan.yaml" "$store" 1
expect_lava_jobs "$WORK/lava.db" 4
sqlite3 "$WORK/lava.db" "select json_extract(fingerprint, '$.lava_job_id'), json_extract(fingerprint, '$.lava_device'),
                                json_extract(fingerprint, '$.cmdline') from session"
off=$(sqlite3 "$WORK/lava.db" "select count(*) from session where json_extract(fingerprint, '$.cmdline') like '%mitigations=off%'")
[ "$off" -eq 2 ] && pass || fail "expected 2 sessions whose /proc/cmdline has mitigations=off, found $off"

if "$KBENCH" compare --store "$store" A B >"$WORK/compare.txt" 2>&1; then pass; else
  fail "kbench compare A B exited $?"
fi
cat "$WORK/compare.txt"
grep -qE '^\| syscall/getpid ' "$WORK/compare.txt" && pass || fail "no syscall/getpid row in kbench compare A B"

grep -qE 'kbench: lava: job [0-9]+ Finished/Incomplete: the agent never started: .+; last console line: qemu: ' "$WORK/plan.err" && pass ||
  fail "no one-line failure naming the job, its health and LAVA's reason"
grep -qE 'kbench: lava: job [0-9]+ Finished/Incomplete: LAVA ended it on an Infrastructure error before the agent started: .*submitting the job again \(retry 1 of 1\)' "$WORK/plan.err" &&
  pass || fail "garbage's job was not submitted again after LAVA's Infrastructure error"
for session in 1 2; do
  expect_contains "$WORK/plan.err" "session $session of garbage not measured: the lab failed its run"
done
expect_contains "$WORK/plan.err" "(LAVA: Infrastructure error); after the lab failed job "
expect_contains "$WORK/plan.err" "session 1 of panics: its kernel did not come up by lava"
expect_contains "$WORK/plan.err" "(LAVA: Job error)"
expect_contains "$WORK/plan.err" "session 2 of panics not measured: its kernel failed to boot in session 1"
"$KBENCH" list boots --store "$store" >"$WORK/boots.txt" 2>&1
cat "$WORK/boots.txt"
[ "$(grep -cE ' panics .* lava .*FAILED: .*job [0-9]+ ' "$WORK/boots.txt")" -eq 1 ] && pass ||
  fail "list boots: expected a failed boot of panics naming its job"
[ "$(grep -cE ' garbage ' "$WORK/boots.txt")" -eq 0 ] && pass ||
  fail "list boots: the lab's failures of garbage's runs were recorded as boots"
for good in A B; do
  [ "$(grep -c " $good .* ok, session id " "$WORK/boots.txt")" -eq 2 ] && pass ||
    fail "list boots: expected the two sessions of $good, each with its session"
done

echo "lava e2e took $(($(date +%s) - started))s"
stop_lava_test_server
finish

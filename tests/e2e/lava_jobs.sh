#!/usr/bin/env bash
# What the lava connection says of its jobs, against the real LAVA server of
# scripts/lava-test-server.sh.
#
# Each benchmark's job must be in the store, as `kbench session show` prints
# it: a benchmark that fails (selftest/exit, which the guest's agent has
# through KBENCH_SELFTEST=1 on the kernel's command line: the kernel hands it
# to /init's environment) with a reason naming its job and the job's URL, one
# that succeeds (selftest/sleep) with its job in place of a reason. These
# jobs get their kernel and initramfs over HTTP from kbench (serve_files),
# not as file:// URLs. The first kbench is killed while its first
# benchmark's job runs; `plan exec --resume` must follow that job, not submit
# another.
#
# queue_timeout and offline_timeout: a job for a device type whose only
# device is in Maintenance can never start. kbench must cancel it after
# queue_timeout (offline_timeout set longer) and fail the agent run with one
# line naming the job, the wait, what LAVA says of the type's devices and the
# job's URL; and after offline_timeout (queue_timeout set longer) with one
# line naming the device's health. Either is the lab's failure, not the
# kernel's: the session is not measured, no failed boot is recorded, and the
# plan exits 1. A bad queue_timeout is a bad plan (exit 2, one line).
# The device type and its device are this script's own, made and removed
# through the REST API: the server's test device stays available to the
# tests that share the server. Nothing waits on a duration: the job cannot
# start, whatever the machine's load.
# Needs root (the server's start installs packages and starts services):
# labelled `check`.
source "$(dirname "$0")/lib.bash"

x86_test_kernel
kernel=$KERNEL
command -v curl >/dev/null || skip "curl missing"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
lava_test_server

# api METHOD PATH [JSON]: the REST API as the test superuser; the body on stdout.
api() {
  curl -sS --max-time 30 -X "$1" -H "Authorization: Token $(cat "$KBENCH_TEST_LAVA_TOKEN_FILE")" \
    -H 'Content-Type: application/json' ${3:+-d "$3"} "${KBENCH_TEST_LAVA_URL}api/v0.2/$2"
}

# The session's jobs: on the server's test device, like tests/e2e/lava.sh's.
cat >"$WORK/fails-plan.yaml" <<YAML
sut:
  name: farm
  connection:
    method: lava
    params: {url: "$KBENCH_TEST_LAVA_URL", token_file: "$KBENCH_TEST_LAVA_TOKEN_FILE", device_type: "$KBENCH_TEST_LAVA_DEVICE_TYPE", job_timeout: "300",
             serve_files: "127.0.0.1:0"}
swprofiles:
  - {name: jobs, kernel: $kernel, cmdline: [KBENCH_SELFTEST=1]}
benchmarks:
  - {name: selftest/sleep, params: {ms: "10000"}}
  - {name: selftest/exit, params: {ms: "1", at: "0"}}
defaults: {benchmark: {warmups: 0, repeats: 1, sessions: 1, timeout: 10m}}
YAML
# plan check asks the server: the device type exists (what LAVA says of its
# devices is said), and a type the server lacks is bad input.
if KBENCH_SELFTEST=1 "$KBENCH" plan check "$WORK/fails-plan.yaml" >"$WORK/out" 2>"$WORK/err"; then pass; else
  fail "plan check of the jobs plan exited $?: $(cat "$WORK/err")"
fi
expect_contains "$WORK/err" "kbench: plan check: LAVA server $KBENCH_TEST_LAVA_URL: device type $KBENCH_TEST_LAVA_DEVICE_TYPE: 1 device"
sed "s/device_type: \"$KBENCH_TEST_LAVA_DEVICE_TYPE\"/device_type: \"no-such-type\"/" "$WORK/fails-plan.yaml" >"$WORK/typo-plan.yaml"
KBENCH_SELFTEST=1 expect_bad_input "plan check: a device type the server lacks" "$KBENCH" plan check "$WORK/typo-plan.yaml"
expect_contains "$WORK/err" "sut.connection.params.device_type: expected a device type of the LAVA server at $KBENCH_TEST_LAVA_URL, got 'no-such-type' (it has: "

# kbench killed while its first benchmark's job runs (a terminal closed,
# kill -9): the job goes on in LAVA, and `plan exec --resume` follows it to
# its end rather than submitting another (the resumed session's fingerprint
# takes the first fingerprint's job, which finished Complete before). Killed
# once the sleep's job's kernel boots, so that the dispatcher has fetched the
# files kbench served, and 10 s before its agent's end, which the log may
# show seconds late (LAVA writes console lines in batches): its results
# cannot have been stored.
KBENCH_SELFTEST=1 nice -n 19 "$KBENCH" plan exec "$WORK/fails-plan.yaml" --store "sqlite://$WORK/fails.db" \
  >"$WORK/killed.out" 2>"$WORK/killed.err" &
kbench_pid=$!
first_job=""
for _ in $(seq 900); do
  if [ -z "$first_job" ]; then
    first_job=$(api GET "jobs/?state=Running&limit=100" | python3 -c '
import json, sys
for job in json.load(sys.stdin)["results"]:
    if job["description"].startswith("kbench jobs run --benchmark selftest/sleep "): print(job["id"])')
  fi
  [ -n "$first_job" ] && api GET "jobs/$first_job/logs/" | grep -q "Linux version" && break
  kill -0 "$kbench_pid" 2>/dev/null || break
  sleep 1
done
# Stopped first: killed after its relay, kbench would have time to record
# the relay's death as the benchmark's failure, and --resume would then
# take the session's benchmark as done.
kill -STOP "$kbench_pid"
pkill -KILL -P "$kbench_pid"
kill -KILL "$kbench_pid"
wait "$kbench_pid" 2>/dev/null
cat "$WORK/killed.err"
[ -n "$first_job" ] && pass || fail "no running benchmark job of the killed kbench"
KBENCH_SELFTEST=1 nice -n 19 "$KBENCH" plan exec "$WORK/fails-plan.yaml" --resume --store "sqlite://$WORK/fails.db" \
  >"$WORK/fails.out" 2>"$WORK/fails.err"
status=$?
cat "$WORK/fails.err"
# The session's order of its benchmarks is its own: the failing one ran
# before the kill or runs now.
expected=1
grep -q "selftest/exit: FAILED" "$WORK/killed.err" && expected=0
[ "$status" -eq "$expected" ] && pass || fail "the resumed plan exec exited $status, expected $expected"
"$KBENCH" session show --store "sqlite://$WORK/fails.db" jobs 1 >"$WORK/show.txt" 2>&1
cat "$WORK/show.txt"
job_re="^selftest/exit +failed .*agent exited with status 3 \(kbench: lava: job ([0-9]+) Finished/Complete on $KBENCH_TEST_LAVA_DEVICE: the agent exited with status 3(; followed after the kbench that submitted it was stopped)? \(${KBENCH_TEST_LAVA_URL}scheduler/job/([0-9]+)\)\)"
ok_re="^selftest/sleep +ok .*; kbench: lava: job ([0-9]+) Finished/Complete on $KBENCH_TEST_LAVA_DEVICE: the agent exited with status 0(; followed after the kbench that submitted it was stopped)? \(${KBENCH_TEST_LAVA_URL}scheduler/job/([0-9]+)\)$"
jobs=$(sqlite3 "$WORK/fails.db" "select json_extract(fingerprint, '$.lava_job_id') from session")
for benchmark in exit sleep; do
  re=$job_re
  [ "$benchmark" = sleep ] && re=$ok_re
  if [[ "$(grep "^selftest/$benchmark" "$WORK/show.txt")" =~ $re ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}" ]; then
    pass
    jobs="$jobs ${BASH_REMATCH[1]}"
  else
    fail "kbench session show: selftest/$benchmark does not name its job and the job's URL"
  fi
done
[ "$(echo "$jobs" | tr ' ' '\n' | sort -u | wc -l)" -eq 3 ] && pass ||
  fail "expected three jobs (the fingerprint's and one a benchmark), found: $jobs"
grep -qE "kbench: lava: job $first_job Finished/Complete on $KBENCH_TEST_LAVA_DEVICE: the agent exited with status [03]; followed after the kbench that submitted it was stopped" "$WORK/show.txt" && pass ||
  fail "no benchmark of the session says it took the killed kbench's job $first_job"
for job in $jobs; do
  definition=$(api GET "jobs/$job/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["definition"])')
  for image in vmlinuz 'initramfs-[0-9]+\.cpio'; do
    grep -qE "url: '?http://127\.0\.0\.1:[0-9]+/[0-9a-f]{24}/$image'?\$" <<<"$definition" && pass ||
      fail "job $job does not get $image from kbench over HTTP: $definition"
  done
done

queue_type=kbench-queue-test
queue_device=kbench-queue-01
# Deleting the device type deletes its jobs too (a job kbench failed to
# cancel included): the server is left as it was.
remove_queue_device() {
  api DELETE "devices/$queue_device/" >/dev/null 2>&1
  api DELETE "devicetypes/$queue_type/" >/dev/null 2>&1
}
trap 'remove_queue_device; cleanup' EXIT
remove_queue_device
api POST devicetypes/ "{\"name\": \"$queue_type\", \"aliases\": []}" >"$WORK/type.json"
api POST devices/ "{\"hostname\": \"$queue_device\", \"device_type\": \"$queue_type\",
                    \"worker_host\": \"kbench-test-worker\", \"health\": \"Maintenance\"}" >"$WORK/device.json"
grep -q '"health":"Maintenance"' "$WORK/device.json" || {
  echo "FAIL: could not make the device $queue_device in Maintenance: $(cat "$WORK/type.json" "$WORK/device.json")" >&2
  exit 1
}

plan() {  # plan QUEUE_TIMEOUT [OFFLINE_TIMEOUT]: the plan, on stdout
  cat <<YAML
sut:
  name: farm
  connection:
    method: lava
    params: {url: "$KBENCH_TEST_LAVA_URL", token_file: "$KBENCH_TEST_LAVA_TOKEN_FILE", device_type: "$queue_type",
             queue_timeout: "$1", offline_timeout: "${2:-1000}", job_timeout: "300"}
swprofiles:
  - {name: queued, kernel: $kernel}
benchmarks:
  - {name: syscall/getpid, size: quick}
defaults: {benchmark: {warmups: 0, repeats: 1, sessions: 1, timeout: 10m}}
YAML
}

for bad in 0 20s; do
  plan "$bad" >"$WORK/bad-$bad.yaml"
  expect_bad_input "queue_timeout $bad" "$KBENCH" plan check "$WORK/bad-$bad.yaml"
  expect_contains "$WORK/err" "sut.connection.params.queue_timeout: expected an integer from 1 to 1000000000, got '$bad'"
done

# gave_up PLAN STORE WHAT LINE_RE: the plan's one job can never start. kbench
# must exit 1 with LINE_RE (its first and last groups: the job's id in the
# text and in its URL), have canceled the job, and count the session as the
# lab's failure, not its kernel's.
gave_up() {
  nice -n 19 "$KBENCH" plan exec "$1" --store "$2" >"$WORK/plan.out" 2>"$WORK/plan.err"
  local status=$?
  cat "$WORK/plan.err"
  [ "$status" -eq 1 ] && pass || fail "plan exec with $3 exited $status, expected 1"
  if [[ "$(cat "$WORK/plan.err")" =~ $4 ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
    pass
    local job=${BASH_REMATCH[1]}
    # kbench canceled it: LAVA ends a canceled job that never started at once.
    api GET "jobs/$job/" >"$WORK/job.json"
    grep -q '"state":"Finished"' "$WORK/job.json" && grep -q '"health":"Canceled"' "$WORK/job.json" && pass ||
      fail "job $job was not canceled: $(cat "$WORK/job.json")"
  else
    fail "$3: no one line naming the job, why kbench gave it up, and the job's URL"
  fi
  expect_contains "$WORK/plan.err" "session 1 of queued not measured: the lab failed its run"
}

# Timeouts of a few seconds: the job cannot start however long it waits,
# so a longer wait would prove nothing more, and costs CI its seconds.
plan 2 >"$WORK/queue-plan.yaml"
gave_up "$WORK/queue-plan.yaml" "sqlite://$WORK/queue.db" "a job that cannot leave the queue" \
  "kbench: lava: job ([0-9]+) waited in the queue for more than 2s \(device type $queue_type: 1 device, 0 Idle and Good: $queue_device Idle/Maintenance\) \(${KBENCH_TEST_LAVA_URL}scheduler/job/([0-9]+)\)"
"$KBENCH" list boots --store "sqlite://$WORK/queue.db" >"$WORK/boots.txt" 2>&1
cat "$WORK/boots.txt"
# Not the kernel's failure: no failed boot.
grep -q FAILED "$WORK/boots.txt" && fail "a failed boot recorded for a job the lab never started" || pass

# The device in Maintenance is seen as such: after offline_timeout, not the
# queue's hour.
plan 1000000 2 >"$WORK/offline-plan.yaml"
gave_up "$WORK/offline-plan.yaml" "sqlite://$WORK/offline.db" "a job no device can run" \
  "kbench: lava: job ([0-9]+) waited [0-9]+s with no device of type $queue_type able to run it \($queue_device Maintenance\) \(${KBENCH_TEST_LAVA_URL}scheduler/job/([0-9]+)\)"

stop_lava_test_server
finish

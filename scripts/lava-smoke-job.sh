#!/usr/bin/env bash
# Submits one real job to the LAVA test server (scripts/lava-test-server.sh)
# through its REST API and follows it to its end: QEMU (x86_64, TCG) boots the
# stock Debian test kernel (scripts/fetch-test-kernel.sh) with a busybox
# initramfs made here, deploy to tmpfs, and an interactive test runs
# `uname -r` at the shell prompt and expects the kernel's release.
#
#   eval "$(scripts/lava-test-server.sh start)"
#   scripts/lava-smoke-job.sh [TIMEOUT_SECONDS]   (default 900)
#
# Prints the job id, its state and health at the end, the seconds from
# submission to start and from start to end, the results of its test suite,
# and exits 0 only for a job that ended Complete. Needs busybox (static,
# Debian package busybox-static or busybox), cpio and gzip.
set -euo pipefail

scripts=$(cd "$(dirname "$0")" && pwd)
timeout=${1:-900}
: "${KBENCH_TEST_LAVA_URL:?run eval \"\$(scripts/lava-test-server.sh start)\" first}"
: "${KBENCH_TEST_LAVA_TOKEN_FILE:?run eval \"\$(scripts/lava-test-server.sh start)\" first}"
device_type=${KBENCH_TEST_LAVA_DEVICE_TYPE:-qemu}

die() { echo "lava-smoke-job: $*" >&2; exit 1; }

kernel=${KBENCH_TEST_KERNEL:-$("$scripts/fetch-test-kernel.sh")}
[ -r "$kernel" ] || die "no test kernel at $kernel"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "no busybox (Debian package busybox-static)"
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not statically linked (Debian package busybox-static)"
token=$(cat "$KBENCH_TEST_LAVA_TOKEN_FILE")
api="${KBENCH_TEST_LAVA_URL}api/v0.2"

# The initramfs is downloaded by the worker when the job starts, so it lives
# until the script ends.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kbench-lava-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/root/bin" "$tmp/root/proc" "$tmp/root/sys" "$tmp/root/dev"
cp "$busybox" "$tmp/root/bin/busybox"
# A prompt of its own, so that LAVA's prompt matching cannot take a line of
# the kernel's output for it.
cat >"$tmp/root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
echo "kbench-lava-smoke: initramfs up"
export PS1='kbench-smoke# '
exec setsid cttyhack sh
EOF
chmod 755 "$tmp/root/init"
(cd "$tmp/root" && find . | cpio -o -H newc --quiet | gzip -1 >"$tmp/initramfs.cpio.gz")
release=$(basename "$kernel" | sed 's/^vmlinuz-//')
# LAVA matches successes as regular expressions: a release has dots and a `+`.
release_re=$(python3 -c 'import re, sys; print(re.escape(sys.argv[1]))' "$release")

cat >"$tmp/job.yaml" <<EOF
device_type: $device_type
job_name: kbench lava-test-server smoke job
visibility: public
priority: medium
timeouts:
  job: {minutes: 15}
  action: {minutes: 5}
  connection: {minutes: 2}
context:
  arch: amd64
actions:
- deploy:
    to: tmpfs
    timeout: {minutes: 2}
    images:
      kernel:
        image_arg: -kernel {kernel} -append "console=ttyS0,115200 rdinit=/init"
        url: file://$kernel
      initrd:
        image_arg: -initrd {initrd}
        url: file://$tmp/initramfs.cpio.gz
- boot:
    method: qemu
    media: tmpfs
    timeout: {minutes: 8}
    prompts: ['kbench-smoke# ']
- test:
    timeout: {minutes: 2}
    interactive:
    - name: smoke
      prompts: ['kbench-smoke# ']
      script:
      - name: uname
        command: uname -r
        successes:
        - message: '$release_re'
EOF

submitted=$(date +%s)
reply=$(python3 -c 'import json, sys; print(json.dumps({"definition": open(sys.argv[1]).read()}))' "$tmp/job.yaml" \
  | curl -sS --max-time 30 -H "Authorization: Token $token" -H 'Content-Type: application/json' \
      -X POST --data-binary @- "$api/jobs/")
job=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["job_ids"][0])' "$reply" 2>/dev/null) \
  || die "submission refused: $reply"
echo "lava-smoke-job: job $job submitted to $KBENCH_TEST_LAVA_URL"

state=
health=
while :; do
  info=$(curl -fsS --max-time 10 -H "Authorization: Token $token" "$api/jobs/$job/")
  read -r state health < <(python3 -c 'import json, sys; j=json.loads(sys.argv[1]); print(j["state"], j["health"])' "$info")
  [ "$state" = Finished ] && break
  [ $(($(date +%s) - submitted)) -ge "$timeout" ] && die "job $job still $state after $timeout s"
  sleep 2
done

python3 - "$info" <<'EOF'
import json, sys
from datetime import datetime
j = json.loads(sys.argv[1])
t = {k: datetime.fromisoformat(j[k].replace("Z", "+00:00")) for k in ("submit_time", "start_time", "end_time")}
print(f"lava-smoke-job: job {j['id']} state {j['state']} health {j['health']}")
print(f"lava-smoke-job: queued {(t['start_time'] - t['submit_time']).total_seconds():.1f} s, "
      f"ran {(t['end_time'] - t['start_time']).total_seconds():.1f} s")
EOF
# A job ends Complete when its actions ran, whatever its tests found: the
# test cases are checked too.
tests=$(curl -fsS --max-time 10 -H "Authorization: Token $token" "$api/jobs/$job/tests/?limit=1000")
suites=$(curl -fsS --max-time 10 -H "Authorization: Token $token" "$api/jobs/$job/suites/?limit=100")
failed=$(python3 - "$tests" "$suites" <<'EOF'
import json, sys
tests, suites = json.loads(sys.argv[1])["results"], json.loads(sys.argv[2])["results"]
names = {s["id"]: s["name"] for s in suites}
failed = 0
for r in tests:
    print("lava-smoke-job:   %s/%s %s" % (names.get(r["suite"], r["suite"]), r["name"], r["result"]), file=sys.stderr)
    failed += r["result"] == "fail"
print(failed)
EOF
)
[ "$health" = Complete ] || die "job $job ended $health (log: ${KBENCH_TEST_LAVA_URL}scheduler/job/$job, or api/v0.2/jobs/$job/logs/)"
[ "$failed" -eq 0 ] || die "job $job: $failed test case(s) failed"

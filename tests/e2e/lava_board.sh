#!/usr/bin/env bash
# The lava connection on a board that boots as a lab's arm64 boards do
# (scripts/lava-test-server.sh's kbench-uboot-qemu: U-Boot as firmware, a
# telnet console, power commands; QEMU's virt machine under TCG): each
# job deploys the swprofile's kernel, kbench's initramfs (with U-Boot's
# header) and, where the swprofile has one, its device tree to LAVA's TFTP
# directory, and boots them with the device type's U-Boot commands. A plan of
# the Debian arm64 test kernel with two command lines, as tests/e2e/qemu_arm64.sh
# compares them under the qemu connection (kpti=1 makes every syscall several
# times dearer under TCG), the fast side with a device tree of its own (QEMU's
# for the board, its model marked); and a swprofile whose kernel panics, which
# must be a failed boot naming its job while the plan goes on.
# Needs root (the server's start installs packages and starts services):
# labelled `check`. The board is the server's own: this script runs beside
# tests/e2e/lava.sh, which uses the server's qemu device.
source "$(dirname "$0")/lib.bash"

CMDLINE_FAST="arm64.nopauth"
CMDLINE_SLOW="arm64.nopauth kpti=1"

command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 missing (Debian package qemu-system-arm)"
command -v dtc >/dev/null || skip "dtc missing (Debian package device-tree-compiler)"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
command -v curl >/dev/null || skip "curl missing"
agent_arm64=${KBENCH_AGENT_AARCH64:-$(dirname "$KBENCH_AGENT")/kbench-agent-aarch64}
[ -x "$agent_arm64" ] || skip "no aarch64 agent at $agent_arm64 (the build makes it when g++-aarch64-linux-gnu is installed)"

started=$(date +%s)
kernel=$("$KBENCH_SOURCE_DIR/scripts/fetch-test-kernel.sh" --arch arm64 2>"$WORK/fetch.err") ||
  skip "could not fetch a Debian arm64 kernel: $(tail -1 "$WORK/fetch.err")"
busybox=$(dirname "$kernel")/busybox
lava_test_server

# The board's own device tree (QEMU's for its machine, kept by the server
# script), its model marked.
DT_MARK="kbench marked board"
dtc -q -I dtb -O dts -o "$WORK/virt.dts" "$KBENCH_TEST_LAVA_BOARD_DTB" || fail "dtc could not read the board's dtb"
sed "s/^\tmodel = .*/\tmodel = \"$DT_MARK\";/" "$WORK/virt.dts" >"$WORK/marked.dts"
dtc -q -I dts -O dtb -o "$WORK/marked.dtb" "$WORK/marked.dts" || fail "dtc could not write the marked dtb"
board_model=$(sed -n 's/^\tmodel = "\(.*\)";/\1/p' "$WORK/virt.dts")

store="sqlite://$WORK/board.db"
cat >"$WORK/board-plan.yaml" <<YAML
sut:
  name: board
  connection:
    method: lava
    params: {url: "$KBENCH_TEST_LAVA_URL", token_file: "$KBENCH_TEST_LAVA_TOKEN_FILE",
             device_type: "$KBENCH_TEST_LAVA_BOARD_TYPE", boot_method: u-boot, arch: arm64, busybox: $busybox,
             job_timeout: "600", serve_files: "127.0.0.1:0"}
swprofiles:
  - {name: fast, kernel: {image: $kernel, dtb: $WORK/marked.dtb}, cmdline: $(yaml_cmdline "$CMDLINE_FAST")}
  - {name: slow, kernel: $kernel, cmdline: $(yaml_cmdline "$CMDLINE_SLOW")}
  - {name: panics, kernel: $kernel, cmdline: [rdinit=/no/such/init, init=/no/such]}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 3, sessions: 2, timeout: 10m}}
YAML
# Exit 1: the kernel that panics.
lava_plan_exec "$WORK/board-plan.yaml" "$store" 1

db=$WORK/board.db
expect_lava_jobs "$db" 4
machines=$(sqlite3 "$db" "select distinct json_extract(fingerprint, '$.arch') from session")
[ "$machines" = aarch64 ] && pass || fail "the sessions' fingerprints say machine '$machines', expected aarch64"
devices=$(sqlite3 "$db" "select distinct json_extract(fingerprint, '$.lava_device') from session")
[ "$devices" = "$KBENCH_TEST_LAVA_BOARD" ] && pass || fail "the sessions ran on '$devices', expected $KBENCH_TEST_LAVA_BOARD"
slow=$(sqlite3 "$db" "select count(*) from session where json_extract(fingerprint, '$.cmdline') like '%kpti=1%'")
[ "$slow" -eq 2 ] && pass || fail "expected 2 sessions whose /proc/cmdline has kpti=1, found $slow"
# Each guest saw the device tree its swprofile gave, fetched by U-Boot.
expect_device_tree_models "$db" fast "$DT_MARK" slow "$board_model"

# The job kbench submitted, as LAVA holds it (its own YAML of the job's):
# TFTP and U-Boot, the swprofile's words in the context U-Boot's commands
# are rendered with.
job=$(sqlite3 "$db" "select json_extract(fingerprint, '$.lava_job_id') from session s join swprofile w
                     on w.id = s.swprofile_id where w.name = 'fast' limit 1")
curl -sS --max-time 30 -H "Authorization: Token $(cat "$KBENCH_TEST_LAVA_TOKEN_FILE")" \
  "${KBENCH_TEST_LAVA_URL}api/v0.2/jobs/$job/" >"$WORK/job.json"
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["definition"])' "$WORK/job.json" >"$WORK/job.yaml"
cat "$WORK/job.yaml"
for line in "    to: tftp" "    method: u-boot" "    commands: ramdisk" "      header: u-boot" "    dtb:" \
  "  extra_kernel_args: rdinit=/init arm64.nopauth"; do
  expect_contains "$WORK/job.yaml" "$line"
done

expect_contains "$WORK/plan.err" "session 1 of panics: its kernel did not come up by lava"
expect_contains "$WORK/plan.err" "(LAVA: Job error)"
"$KBENCH" list boots --store "$store" >"$WORK/boots.txt" 2>&1
cat "$WORK/boots.txt"
[ "$(grep -cE ' panics .* lava .*FAILED: .*job [0-9]+ ' "$WORK/boots.txt")" -eq 1 ] && pass ||
  fail "list boots: expected a failed boot of panics naming its job"

"$KBENCH" compare --store "$store" fast slow >"$WORK/compare.txt" 2>&1
cat "$WORK/compare.txt"
expect_getppid_slowdown "$WORK/compare.txt" "kpti=1"
echo "lava board e2e took $(($(date +%s) - started))s"
stop_lava_test_server
finish

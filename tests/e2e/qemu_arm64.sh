#!/usr/bin/env bash
# A stock Debian arm64 kernel booted under qemu-system-aarch64 (virt board,
# -cpu max, TCG) with two command lines, syscall/getppid and
# ctxsw/pipe-threads measured in each, compared: the command line that makes
# a syscall dearer must show as a large slowdown, (R) or, when 2 sessions a
# side scatter on a loaded machine, (?), never an improvement. The fingerprint,
# taken inside the VM, must say aarch64 and name its counter (cntvct_el0).
# The switch, chosen by measurement (docs/remote.md, "arm64 guests"): kpti=1
# forces kernel page-table isolation, which QEMU's max CPU (CSV3) does not
# need; each syscall entry and return then writes TTBR1 with another ASID,
# and TCG, which tracks no ASIDs, flushes its whole software TLB on every such
# write: about 7x on syscall/getppid. Both sides carry arm64.nopauth, as
# TCG's QARMA5 pointer authentication makes every kernel path (and the boot)
# several times slower and would only cost time here.
# The fast side also boots with a device tree of its own (kernel: {image,
# dtb}): the virt board's, as QEMU makes it for this VM, with the root's
# model changed to a mark; its fingerprints must show the mark, the slow
# side's the board's own model. No boot of its own: the sessions above are it.
source "$(dirname "$0")/lib.bash"

CMDLINE_FAST=${KBENCH_TEST_ARM64_FAST:-arm64.nopauth}
CMDLINE_SLOW=${KBENCH_TEST_ARM64_SLOW:-arm64.nopauth kpti=1}

command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 missing (Debian package qemu-system-arm)"
command -v dtc >/dev/null || skip "dtc missing (Debian package device-tree-compiler)"
agent_arm64=${KBENCH_AGENT_AARCH64:-$(dirname "$KBENCH_AGENT")/kbench-agent-aarch64}
[ -x "$agent_arm64" ] || skip "no aarch64 agent at $agent_arm64 (the build makes it when g++-aarch64-linux-gnu is installed)"

started=$(date +%s)
# The kernel and the aarch64 busybox beside it, cached between runs;
# KBENCH_TEST_KERNEL_ARM64 names another kernel (its busybox still from the cache).
kernel=${KBENCH_TEST_KERNEL_ARM64:-}
if [ -z "$kernel" ] || [ ! -x "$(dirname "$kernel")/busybox" ]; then
  fetched=$("$KBENCH_SOURCE_DIR/scripts/fetch-test-kernel.sh" --arch arm64 2>"$WORK/fetch.err") ||
    skip "could not fetch a Debian arm64 kernel: $(tail -1 "$WORK/fetch.err")"
  kernel=${kernel:-$fetched}
  busybox=$(dirname "$fetched")/busybox
else
  busybox=$(dirname "$kernel")/busybox
fi
echo "kernel: $kernel, busybox: $busybox (found in $(( $(date +%s) - started ))s)"

# Bad input first, without a boot: an x86-64 busybox for the aarch64 guest.
if [ -x /bin/busybox ]; then
  cat >"$WORK/bad-busybox.yaml" <<YAML
sut: {name: a64, connection: {method: qemu, params: {arch: aarch64, busybox: /bin/busybox}}}
swprofiles: [{name: a, kernel: $kernel}]
benchmarks: [{name: syscall/getppid}]
YAML
  expect_bad_input "x86-64 busybox for an aarch64 guest" "$KBENCH" plan exec "$WORK/bad-busybox.yaml" \
    --store "sqlite://$WORK/bad.db"
  [ ! -e "$WORK/bad.db" ] && pass || fail "a store was written for a plan with a bad busybox"
fi

# The virt board's device tree for the plan's VM (its -cpu, -m and -smp; TCG,
# whose GIC is the board's default), with a marked model.
MEMORY=512M
DT_MARK="kbench marked virt"
qemu-system-aarch64 -machine "virt,dumpdtb=$WORK/virt.dtb" -cpu max -m "$MEMORY" -smp 1 -accel tcg -nodefaults \
  -display none >"$WORK/dumpdtb.out" 2>&1 || fail "qemu-system-aarch64 dumpdtb: $(tail -1 "$WORK/dumpdtb.out")"
dtc -q -I dtb -O dts -o "$WORK/virt.dts" "$WORK/virt.dtb" || fail "dtc could not read QEMU's dtb"
# The root node's properties are the ones indented once.
sed "s/^\tmodel = .*/\tmodel = \"$DT_MARK\";/" "$WORK/virt.dts" >"$WORK/marked.dts"
grep -q "^.model = \"$DT_MARK\";" "$WORK/marked.dts" || fail "no root model in QEMU's device tree to mark"
dtc -q -I dts -O dtb -o "$WORK/marked.dtb" "$WORK/marked.dts" || fail "dtc could not write the marked dtb"
board_model=$(sed -n 's/^\tmodel = "\(.*\)";/\1/p' "$WORK/virt.dts")
echo "virt board's model: $board_model; marked: $DT_MARK"

# A dtb that is not one is refused with the plan's line, before any boot.
cat >"$WORK/bad-dtb.yaml" <<YAML
sut: {name: a64, connection: {method: qemu, params: {arch: aarch64, busybox: $busybox}}}
swprofiles: [{name: a, kernel: {image: $kernel, dtb: $kernel}}]
benchmarks: [{name: syscall/getppid}]
YAML
expect_bad_input "the kernel image given as its dtb" "$KBENCH" plan exec "$WORK/bad-dtb.yaml" --store "sqlite://$WORK/bad.db"
expect_contains "$WORK/err" "swprofile a, got $kernel (it starts with"

store="sqlite://$WORK/arm64.db"
cat >"$WORK/arm64-plan.yaml" <<YAML
sut:
  name: qemu-arm64
  connection: {method: qemu, params: {arch: aarch64, memory: $MEMORY, cpus: "1", busybox: $busybox}}
swprofiles:
  - {name: fast, kernel: {image: $kernel, dtb: $WORK/marked.dtb}, cmdline: $(yaml_cmdline "$CMDLINE_FAST")}
  - {name: slow, kernel: $kernel, cmdline: $(yaml_cmdline "$CMDLINE_SLOW")}
benchmarks:
  - {name: syscall/getppid, params: {calls: "100000"}}
  - {name: ctxsw/pipe-threads, size: quick}
defaults: {benchmark: {warmups: 1, repeats: 3, sessions: ${KBENCH_TEST_ARM64_SESSIONS:-2}, timeout: 3m}}
YAML
cat "$WORK/arm64-plan.yaml"
plan_started=$(date +%s)
if "$KBENCH" plan exec "$WORK/arm64-plan.yaml" --store "$store" >"$WORK/plan.out" 2>"$WORK/plan.err"; then pass; else
  fail "kbench plan exec of the arm64 plan exited $?"; tail -40 "$WORK/plan.err" >&2
fi
grep -E 'reached /init|qemu:' "$WORK/plan.err"
echo "plan exec: $(( $(date +%s) - plan_started ))s"

db=$WORK/arm64.db
machines=$(sqlite3 "$db" "select distinct json_extract(fingerprint, '$.arch') from session")
[ "$machines" = aarch64 ] && pass || fail "the sessions' fingerprints say machine '$machines', expected aarch64"
counter=$(sqlite3 "$db" "select distinct json_extract(fingerprint, '$.timer.counter') from session")
[ "$counter" = cntvct_el0 ] && pass || fail "the fingerprint's timer counter is '$counter', expected cntvct_el0"
sqlite3 "$db" "select json_extract(fingerprint, '$.cmdline') from session" >"$WORK/cmdlines"
cat "$WORK/cmdlines"
for word in $CMDLINE_FAST $CMDLINE_SLOW; do expect_contains "$WORK/cmdlines" "$word"; done
echo "per session (swprofile, seconds to /init, counter, its rate and cost inside the VM):"
sqlite3 -separator ' ' "$db" "select json_extract(fingerprint, '$.swprofile.cmdline'), json_extract(fingerprint, '$.qemu_boot_seconds') || ' s', json_extract(fingerprint, '$.timer.counter'), printf('%.0f Hz', json_extract(fingerprint, '$.timer.ticks_per_second')), printf('%.1f ns', json_extract(fingerprint, '$.timer.overhead_ns')) from session"
boots=$(sqlite3 "$db" "select count(*) from session where json_extract(fingerprint, '$.qemu_boot_seconds') > 0")
[ "$boots" -ge 2 ] && pass || fail "the fingerprints lack qemu_boot_seconds"
# The guest saw the device tree it was given: the fast side the marked one
# (and its hash is the swprofile's identity), the slow side the board's.
expect_device_tree_models "$db" fast "$DT_MARK" slow "$board_model"
fast_dtb=$(swprofile_values "$db" "json_extract(s.fingerprint, '\$.swprofile.dtb_sha256')" fast)
slow_dtb=$(swprofile_values "$db" "ifnull(json_extract(s.fingerprint, '\$.swprofile.dtb_sha256'), 'none')" slow)
[ "$fast_dtb" = "$(sha256sum <"$WORK/marked.dtb" | cut -d' ' -f1)" ] && [ "$slow_dtb" = none ] && pass ||
  fail "swprofile.dtb_sha256 is '$fast_dtb' (fast) and '$slow_dtb' (slow), expected the marked dtb's hash and none"

"$KBENCH" compare --store "$store" fast slow >"$WORK/compare.txt" 2>&1
cat "$WORK/compare.txt"
# The model differs as the fast swprofile declares: no environment note of it.
if grep -q device_tree_model "$WORK/compare.txt"; then fail "compare lists the declared device tree model"; else pass; fi
expect_getppid_slowdown "$WORK/compare.txt" "the slow command line ($CMDLINE_SLOW) against $CMDLINE_FAST"
echo "qemu arm64 e2e took $(( $(date +%s) - started ))s"
finish

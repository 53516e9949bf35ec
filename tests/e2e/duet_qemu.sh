#!/usr/bin/env bash
# design: duet on one QEMU SUT (TCG): two VMs at once, each pinned to one half
# of this machine's CPUs, swapping halves every round; a stock Debian kernel
# under two cmdlines, syscall/getpid at the quick size, 2 sessions. Each
# round's two slots are pairs of one session of each swprofile on different
# CPU halves; the QEMU processes run on their half; compare runs on the
# result. A duet of a SUT that is not a VM here is refused.
source "$(dirname "$0")/lib.bash"

started=$(date +%s)
[ "$(nproc)" -ge 2 ] || skip "a duet needs at least 2 CPUs"
x86_test_kernel
DB="$WORK/store.db"
S="sqlite://$DB"
q() { sqlite3 "$DB" "$1"; }

printf 'design: duet\nsut: {name: here}\nswprofiles: [{name: A}, {name: B}]\nbenchmarks: [syscall/getpid]\n' \
  >"$WORK/local.yaml"
expect_bad_input "duet of a local SUT" "$KBENCH" plan check "$WORK/local.yaml"
expect_contains "$WORK/err" "local.yaml:1: design: expected duet with one sut: whose connection boots a VM on this machine (method qemu), got method local"

cat >"$WORK/duet.yaml" <<YAML
design: duet
sut: {name: vm, class: tcg-vm, connection: {method: qemu, params: {memory: 512M, cpus: "1", accel: ${KBENCH_TEST_ACCEL:-tcg}}}}
YAML
kernel_pair_plan_tail >>"$WORK/duet.yaml"
expect_bad_input "duet with one swprofile selected" "$KBENCH" plan exec "$WORK/duet.yaml" --swprofile base --store "$S"
expect_contains "$WORK/err" "duet.yaml:1: design: expected duet's 2 swprofiles measured together, got --swprofile selecting base"

"$KBENCH" plan exec "$WORK/duet.yaml" --store "$S" >"$WORK/plan.out" 2>"$WORK/plan.err" &
controller=$!
# While it runs: every QEMU of this plan runs on one half of the CPUs, never
# on all of them.
allowed=$(taskset -pc $$ | sed 's/.*: //')
seen=0
while kill -0 $controller 2>/dev/null; do
  for pid in $(pgrep_ours -f qemu-system 2>/dev/null); do
    list=$(taskset -pc "$pid" 2>/dev/null | sed 's/.*: //') || continue
    [ -n "$list" ] || continue
    seen=$((seen + 1))
    [ "$list" != "$allowed" ] || { fail "a QEMU ran on all of CPUs $allowed"; break 2; }
  done
  sleep 0.5
done
wait $controller && pass || { fail "plan exec of the duet exited $?"; tail -30 "$WORK/plan.err" >&2; }
echo "plan exec (8 boots, two at a time): $(( $(date +%s) - started ))s; QEMU affinity looked at $seen times"
[ $seen -gt 0 ] && pass || fail "no QEMU of the duet was seen running"
grep -q "unpaired" "$WORK/plan.err" && fail "a worker went on unpaired: $(grep unpaired "$WORK/plan.err")" || pass
expect_contains "$WORK/plan.err" "kbench: duet: two VMs of vm at once"
[ "$(q "select count(*) from session s join sut t on t.id = s.sut_id where finished_at is not null and t.name = 'vm'")" = 8 ] \
  && pass || fail "complete sessions of vm: $(q "select count(*) from session where finished_at is not null"), expected 8"
run=$(q "select distinct json_extract(fingerprint, '$.plan.run') from session")
# The halves as the workers split them: this script's CPUs, first half the smaller.
read -r half0 half1 < <(python3 -c "
import os
cpus = sorted(os.sched_getaffinity(0))
def fmt(c):
    out, i = [], 0
    while i < len(c):
        j = i
        while j + 1 < len(c) and c[j + 1] == c[j] + 1: j += 1
        out.append(str(c[i]) if i == j else f'{c[i]}-{c[j]}'); i = j + 1
    return ','.join(out)
m = len(cpus) // 2
print(fmt(cpus[:m]), fmt(cpus[m:]))")
expected="$run/0/0|cpus $half0:base,cpus $half1:patched
$run/0/1|cpus $half0:patched,cpus $half1:base
$run/1/0|cpus $half0:base,cpus $half1:patched
$run/1/1|cpus $half0:patched,cpus $half1:base"
expect_pairs "$DB" "$expected"
"$KBENCH" compare base patched --store "$S" >"$WORK/compare.out" 2>&1 && pass \
  || fail "compare exited $?: $(tail -5 "$WORK/compare.out")"
echo "in all: $(( $(date +%s) - started ))s"
finish

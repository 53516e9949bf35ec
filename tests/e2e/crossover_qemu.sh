#!/usr/bin/env bash
# design: crossover on two QEMU SUTs (TCG) standing in for two lab machines of
# one class: a stock Debian kernel under two cmdlines, syscall/getpid at the
# quick size, 2 sessions. Each round's two slots are pairs of one session of
# each swprofile on different SUTs, swapped between the slots; compare runs
# on the result (its paired verdict is the analysis's, not checked here).
source "$(dirname "$0")/lib.bash"

started=$(date +%s)
x86_test_kernel
DB="$WORK/store.db"
S="sqlite://$DB"
q() { sqlite3 "$DB" "$1"; }
vm="{method: qemu, params: {memory: 512M, cpus: \"1\", accel: ${KBENCH_TEST_ACCEL:-tcg}}}"
cat >"$WORK/crossover.yaml" <<YAML
design: crossover
suts:
  - {name: lab-1, class: lab-vm, connection: $vm}
  - {name: lab-2, class: lab-vm, connection: $vm}
YAML
kernel_pair_plan_tail >>"$WORK/crossover.yaml"
if "$KBENCH" plan exec "$WORK/crossover.yaml" --store "$S" >"$WORK/plan.out" 2>"$WORK/plan.err"; then pass; else
  fail "plan exec of the crossover exited $?"; tail -30 "$WORK/plan.err" >&2
fi
echo "plan exec (8 boots, two at a time): $(( $(date +%s) - started ))s"
grep -q "unpaired" "$WORK/plan.err" && fail "a worker went on unpaired: $(grep unpaired "$WORK/plan.err")" || pass
[ "$(q "select count(*) from session where finished_at is not null")" = 8 ] && pass \
  || fail "complete sessions: $(q "select count(*) from session where finished_at is not null"), expected 8"
# The swprofile's cmdline reached the guest: the sessions are what they say.
[ "$(q "select count(*) from session s join swprofile w on w.id = s.swprofile_id
        where w.name = 'patched' and json_extract(s.fingerprint, '$.cmdline') like '%mitigations=off%'")" = 4 ] \
  && pass || fail "patched's sessions lack mitigations=off in the guest's /proc/cmdline"
run=$(q "select distinct json_extract(fingerprint, '$.plan.run') from session")
expected="$run/0/0|lab-1:base,lab-2:patched
$run/0/1|lab-1:patched,lab-2:base
$run/1/0|lab-1:patched,lab-2:base
$run/1/1|lab-1:base,lab-2:patched"
expect_pairs "$DB" "$expected"
"$KBENCH" compare base patched --store "$S" >"$WORK/compare.out" 2>&1 && pass \
  || fail "compare exited $?: $(tail -5 "$WORK/compare.out")"
cat "$WORK/compare.out"
echo "in all: $(( $(date +%s) - started ))s"
finish

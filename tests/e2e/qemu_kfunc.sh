#!/usr/bin/env bash
# kfunc/finish_task_switch end to end: one stock Debian kernel booted in QEMU
# (TCG, 2 vCPUs) under two command lines, the default and nohz_full=1
# (plans/kfunc-qemu.yaml), each measured through `kbench plan exec --cpus 1`,
# then compared. nohz_full=1 makes CPU 1, where the ping-pong runs, an
# adaptive-tick CPU: finish_task_switch then also does the vtime accounting
# and the tick-dependency check on every switch, which made it 30-50 % slower
# in every boot of the search (docs/benchmarks/kfunc-cmdline.md). The test
# checks that both profiles have the kfunc rows, that the tracer's floor and
# overhead rows are there, and that nohz-full is marked a regression (R)
# against default on the median per call; `compare nohz-full default` marks
# the same row an improvement (I).
source "$(dirname "$0")/lib.bash"

if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ]; then
  skip "qemu-system-x86_64 or /bin/busybox missing (Debian packages qemu-system-x86, busybox-static)"
fi

started=$(date +%s)
# The same cached Debian kernel as the other QEMU tests (make test hands it
# over in KBENCH_TEST_KERNEL; run alone, the script fetches it).
kernel=${KBENCH_TEST_KERNEL:-}
if [ -z "$kernel" ]; then
  kernel=$("$KBENCH_SOURCE_DIR/scripts/fetch-test-kernel.sh") || { echo "FAIL: could not fetch a test kernel" >&2; exit 1; }
fi
[ -f "$kernel" ] || { echo "FAIL: KBENCH_TEST_KERNEL=$kernel is not a file" >&2; exit 1; }
echo "kernel: $kernel"

# The shipped plan, with the kernel this machine has (the plan names the one
# root's cache holds).
plan="$WORK/kfunc-qemu.yaml"
sed -e "s|&kernel /[^}]*}|\\&kernel $kernel}|" \
  "$KBENCH_SOURCE_DIR/plans/kfunc-qemu.yaml" >"$plan"
grep -qF "&kernel $kernel}" "$plan" || { echo "FAIL: could not put the kernel path into the plan" >&2; exit 1; }
cat "$plan"

store="sqlite://$WORK/kfunc.db"
"$KBENCH" plan check "$plan" >"$WORK/check.out" 2>&1 && pass || { fail "plan check refused the plan"; cat "$WORK/check.out" >&2; }
plan_started=$(date +%s)
if "$KBENCH" plan exec "$plan" --cpus 1 --store "$store" >"$WORK/plan.out" 2>"$WORK/plan.err"; then pass; else
  fail "kbench plan exec of the kfunc plan exited $?"; tail -40 "$WORK/plan.err" >&2
fi
cat "$WORK/plan.err"
echo "plan exec (two boots): $(( $(date +%s) - plan_started ))s"

# The nohz_full boot really had it on its command line (/proc/cmdline, taken
# inside the VM).
nohz=$(sqlite3 "$WORK/kfunc.db" "select count(*) from session where json_extract(fingerprint, '$.cmdline') like '%nohz_full=1%'")
[ "$nohz" -eq 1 ] && pass || fail "the nohz-full session's /proc/cmdline lacks nohz_full=1 ($nohz sessions have it)"

# One boot per profile: the repeats inside each boot are tested (--sessions
# pooled), as qemu.sh does.
compare() {
  "$KBENCH" compare --store "$store" "$1" "$2" --sessions pooled --benchmark 'kfunc/*' --format csv >"$3" 2>&1
  local status=$?
  cat "$3"
  [ "$status" -eq 0 ] && pass || fail "kbench compare $1 $2 exited $status"
}
compare default nohz-full "$WORK/compare.csv"
compare nohz-full default "$WORK/reverse.csv"

# row FILE CLASS: the csv line of kfunc/finish_task_switch with that result class.
row() { grep -F 'kfunc/finish_task_switch' "$1" | grep -F ",$2," | head -n 1; }
for class in 'time per call (ns)' 'median per call (ns)' 'tracer floor (ns)' 'tracer overhead per switch (ns)'; do
  line=$(row "$WORK/compare.csv" "$class")
  if [ -z "$line" ]; then fail "compare default nohz-full has no row '$class'"; continue; fi
  pass
  # Both profiles have a value: the base mean and the test column's change.
  if echo "$line" | grep -qE ',,|,$'; then fail "row '$class' lacks a value of one profile: $line"; else pass; fi
done
mark() { row "$1" 'median per call (ns)' | grep -oE '\((R|I)\)' | head -n 1; }
[ "$(mark "$WORK/compare.csv")" = "(R)" ] && pass ||
  fail "nohz-full is not marked (R) against default on kfunc/finish_task_switch median per call"
[ "$(mark "$WORK/reverse.csv")" = "(I)" ] && pass ||
  fail "default is not marked (I) against nohz-full on kfunc/finish_task_switch median per call"
echo "qemu kfunc e2e took $(( $(date +%s) - started ))s"
finish

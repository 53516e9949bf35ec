#!/usr/bin/env bash
# The whole path: run the quick syscall benchmarks twice into a temporary
# SQLite store, compare the two swprofiles, and check what was stored.
source "$(dirname "$0")/lib.bash"
STORE="sqlite://$WORK/results.db"
export KBENCH_STORE="$STORE"

run() {
  "$KBENCH" run --swprofile "$1" --suite quick --benchmark '*syscall*' --sessions 1 --repeats 3 --warmups 0 \
    >"$WORK/run-$1.out" 2>"$WORK/run-$1.err"
}

run A || fail "kbench run A exited $?: $(tail -5 "$WORK/run-A.err")"
run B || fail "kbench run B exited $?: $(tail -5 "$WORK/run-B.err")"
for p in A B; do
  for text in "Results for SUT " "| Benchmark" "±ci95" "syscall/getpid" "syscall/getppid" \
              "syscall/invalid" "perf/syscall" "mean (ns)" "p99.9 (ns)" "basic (ops/sec)" "execve (ops/sec)"; do
    expect_contains "$WORK/run-$p.out" "$text"
  done
done

# Every sample is stored: 3 syscall benchmarks x 4 classes (mean, median, p99, p99.9) + perf/syscall x 4 classes, 3 repeats each.
DB="$WORK/results.db"
for p in A B; do
  n=$(sqlite3 "$DB" "select count(*) from result r join session s on s.id=r.session_id
                      join swprofile w on w.id=s.swprofile_id where w.name='$p'")
  [ "$n" -eq 48 ] && pass || fail "swprofile $p has $n samples, expected 48"
done

# A second run of a swprofile is a new session, never an overwrite.
"$KBENCH" run --swprofile A --suite quick --benchmark 'syscall/getpid' --sessions 1 --repeats 2 --warmups 0 >/dev/null 2>&1 \
  || fail "third run exited $?"
sessions=$(sqlite3 "$DB" "select count(*) from session s join swprofile w on w.id=s.swprofile_id where w.name='A'")
[ "$sessions" -eq 2 ] && pass || fail "swprofile A has $sessions sessions, expected 2"
n=$(sqlite3 "$DB" "select count(*) from result r join session s on s.id=r.session_id
                    join swprofile w on w.id=s.swprofile_id where w.name='A'")
[ "$n" -eq 56 ] && pass || fail "swprofile A has $n samples after its second session, expected 56"

"$KBENCH" compare A B >"$WORK/grid.out" 2>"$WORK/grid.err" || fail "compare exited $?: $(cat "$WORK/grid.err")"
for text in "Results for SUT " "| Benchmark " "| Result Class " "A (base)" "+=====" \
            "| syscall/getpid " "| perf/syscall " "t-test on session means" "Benjamini-Hochberg" "positive = better"; do
  expect_contains "$WORK/grid.out" "$text"
done
# The benchmark name stands only on the first row of its group.
rows=$(grep -c '^| syscall/getpid ' "$WORK/grid.out")
[ "$rows" -eq 1 ] && pass || fail "syscall/getpid appears on $rows rows, expected 1"

"$KBENCH" compare A B --format markdown >"$WORK/md.out" 2>&1 || fail "compare --format markdown exited $?"
expect_contains "$WORK/md.out" "| Metric"
expect_contains "$WORK/md.out" "| syscall/getpid mean (ns)"

"$KBENCH" list swprofile >"$WORK/list.out" 2>&1 || fail "list swprofile exited $?"
expect_contains "$WORK/list.out" "A"
"$KBENCH" list benchmark --id 'perf/*' >"$WORK/listb.out" 2>&1 || fail "list benchmark exited $?"
expect_contains "$WORK/listb.out" "perf/syscall"
"$KBENCH" list sut >"$WORK/lists.out" 2>&1 || fail "list sut exited $?"
expect_contains "$WORK/lists.out" "$(uname -m)"

[ "$(sqlite3 "$DB" 'pragma integrity_check')" = "ok" ] && pass || fail "integrity check"
finish

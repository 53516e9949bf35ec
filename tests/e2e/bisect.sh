#!/usr/bin/env bash
# kbench bisect without a kernel build: a fake kernel tree
# (tests/data/fake-kernel-tree, whose Makefile "builds" by copying files)
# in a git history of 6 commits, measured on a local SUT with
# selftest/value-file, which reports the milliseconds the commit's DELAY_MS
# holds ($KBENCH_BISECT_TREE is the commit's checkout), spread by at most
# 1 %, with no timing in it: a sleep's wake-up delays on a busy machine (tens
# of milliseconds at a load of 6) leave commits unsettled.
# One commit raises the value from 20 to 200 ms, ten times: bisect
# run and git bisect run ... bisect step must both name it, and bisect run's
# A/B/A sandwich must confirm it; a planted delay that does not last must
# not be confirmed. Covers the build calls, git bisect in a kbench-owned
# worktree, the endpoint check, sequential sessions, the confirmation, the
# report and the stored log; not a kernel build or a boot
# (bench/bisect-kernel does those, docs/bisect.md).
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
export KBENCH_BUILD_CACHE="$WORK/build-cache"
S="sqlite://$WORK/store.db"
tree="$WORK/linux"
cp -r "$KBENCH_SOURCE_DIR/tests/data/fake-kernel-tree" "$tree"
g() { git -C "$tree" -c user.name=kbench -c user.email=kbench@test.invalid "$@"; }
echo 20 >"$tree/DELAY_MS"
g init -q && g add -A && g commit -qm "base" && g tag base
commit_edit() { echo "/* $1 */" >>"$tree/kernel/$2" && g commit -qam "$1"; }
commit_edit "one: a comment in syscall.c" syscall.c
commit_edit "two: a comment in sched.c" sched.c
echo 200 >"$tree/DELAY_MS" && g commit -qam "three: the planted delay" && g tag planted
commit_edit "four: another comment" sched.c
commit_edit "five: yet another comment" syscall.c && g tag last
planted=$(g rev-parse planted)
user_head=$(g rev-parse HEAD)

cat >"$WORK/bisect.yaml" <<YAML
swprofiles:
  - name: fake
    build: {source: $tree, config: tinyconfig}
benchmarks:
  - {name: selftest/value-file, params: {file: DELAY_MS}}
defaults: {benchmark: {warmups: 0, repeats: 4, timeout: 1m}}
YAML
ROW='selftest/value-file:value (ms)'

# Bad input: one line, exit 2, nothing stored.
expect_bad_input "--row without a class" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last --row nocolon --store "$S"
expect_bad_input "--max-sessions below --sessions" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last \
  --sessions 4 --max-sessions 3 --store "$S"
expect_bad_input "unknown --good" "$KBENCH" bisect run "$WORK/bisect.yaml" --good no-such-rev --bad last --store "$S"
expect_bad_input "--alpha 1" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last --alpha 1 --store "$S"
expect_bad_input "--confirm-sessions 1" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last \
  --confirm-sessions 1 --store "$S"
expect_contains "$WORK/err" "--confirm-sessions '1': expected 0 (no confirmation) or a whole number from 2 to"
expect_bad_input "--time-functions 4" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last \
  --time-functions 4 --store "$S"
expect_contains "$WORK/err" "--time-functions '4'"
expect_bad_input "--confirm-max-sessions below --confirm-sessions" "$KBENCH" bisect run "$WORK/bisect.yaml" \
  --good base --bad last --confirm-sessions 4 --confirm-max-sessions 3 --store "$S"
expect_contains "$WORK/err" "--confirm-max-sessions 3: expected at least --confirm-sessions (4)"
expect_bad_input "--confirm-sessions x" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last \
  --confirm-sessions x --store "$S"
expect_contains "$WORK/err" "--confirm-sessions 'x': expected a whole number"
cat >"$WORK/two.yaml" <<YAML
swprofiles:
  - {name: a, build: {source: $tree, config: tinyconfig}}
  - {name: b, build: {source: $tree, config: tinyconfig}}
benchmarks: [{name: selftest/value-file}]
YAML
expect_bad_input "two swprofiles" "$KBENCH" bisect run "$WORK/two.yaml" --good base --bad last --store "$S"
cat >"$WORK/boots-here.yaml" <<YAML
sut: {connection: {method: local}, boot: {method: kexec}}
swprofiles: [{name: fake, build: {source: $tree, config: tinyconfig}}]
benchmarks: [{name: selftest/value-file}]
YAML
expect_bad_input "a plan booting this machine" "$KBENCH" bisect run "$WORK/boots-here.yaml" --good base --bad last \
  --store "$S"
expect_contains "$WORK/err" "sut.boot: expected a SUT kbench reaches over ssh"
[ -e "$WORK/store.db" ] && fail "refused bisects wrote the store" || pass

# Endpoints that do not differ: exit 1 with why, after one more session of
# each (the check is sequential, 2 looks with --max-sessions 4). At --alpha
# 0.001: two equal values, each session's spread by its process id, must not
# be called different by chance (at 0.05 one run in twenty would be).
expect_bad_input "--good and --bad one commit" "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad 'last~5' --store "$S"
"$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad 'planted~1' --row "$ROW" --alpha 0.001 --max-sessions 4 \
  --store "$S" >"$WORK/same.out" 2>"$WORK/same.err"
status=$?
[ "$status" -eq 1 ] && pass || fail "endpoints without a difference: exit $status, expected 1"
expect_contains "$WORK/same.err" "endpoints: one more session each (now 4 good, 4 bad): bad does not differ from good yet"
expect_contains "$WORK/same.err" "nothing to bisect"

# bisect run with --row.
"$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last --row "$ROW" --alpha 0.05 --max-sessions 8 \
  --store "$S" >"$WORK/run.out" 2>"$WORK/run.err"
status=$?
[ "$status" -eq 0 ] && pass || { fail "bisect run exited $status"; tail -30 "$WORK/run.err" >&2; }
cat "$WORK/run.out"
expect_contains "$WORK/run.out" "first bad commit: $planted three: the planted delay — confirmed by A/B/A (4 sessions of the parent, 3 of the culprit"
expect_contains "$WORK/run.out" "A/B/A sandwich: culprit vs parent +"
expect_contains "$WORK/run.out" "confirmation: A/B/A sandwich of parent $(g rev-parse --short=12 planted~1) and culprit ${planted:0:12}"
expect_contains "$WORK/run.out" "steps (3 to 8 sessions a commit; every look tests at alpha' = alpha / looks = 0.05 / 6 = 0.00833):"
grep -q -- "-> bad: .*; settled at look [1-6] of 6, each look a 99.17% interval (alpha' 0.00833)" "$WORK/run.out" && pass \
  || fail "no step says at which look it settled"
grep -q "^  step 1 [0-9a-f]\{12\} \".*\": \(good\|bad\), [0-9]* sessions, settled at look" "$WORK/run.out" && pass \
  || fail "the report does not summarize step 1 with its confidence"
expect_contains "$WORK/run.out" "parent (good)"
expect_contains "$WORK/run.out" "bad endpoint"
expect_contains "$WORK/run.out" "step 1: "
expect_contains "$WORK/run.out" "endpoints: row $ROW: bad vs good +"
expect_contains "$WORK/run.out" "build "
grep -q -- "-> bad: " "$WORK/run.out" && pass || fail "no step decided bad"
grep -q -- "-> good: " "$WORK/run.out" && pass || fail "no step decided good"
# The user's checkout is untouched: same HEAD, no bisect in progress, no worktree left.
[ "$(g rev-parse HEAD)" = "$user_head" ] && pass || fail "bisect run moved the user's HEAD"
# (the build cache keeps a worktree of its own for refs; bisect's are kbench-bisect-*)
g worktree list | grep -q kbench-bisect- && fail "a bisect worktree was left: $(g worktree list)" || pass
g bisect log >/dev/null 2>&1 && fail "a bisect is in progress in the user's tree" || pass
# The log is stored, and the sessions under bisect-<12 hex>.
sqlite3 "$WORK/store.db" "select name, text from log where kind = 'bisect'" >"$WORK/logs" 2>&1 || fail "reading the log table failed"
expect_contains "$WORK/logs" "base..last"
expect_contains "$WORK/logs" "first bad commit: $planted three: the planted delay — confirmed by A/B/A"
"$KBENCH" list swprofile --store "$S" >"$WORK/profiles" 2>&1
expect_contains "$WORK/profiles" "bisect-${planted:0:12}"
# The sandwich's sessions are under swprofiles of their own.
expect_contains "$WORK/profiles" "bisect-confirm-${planted:0:12}"

# Without --row: the rows compare marks (R) between the endpoints. And
# --confirm-sessions 0: no sandwich, said so, exit 0.
"$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last --alpha 0.05 --max-sessions 8 --confirm-sessions 0 \
  --store "$S" >"$WORK/rows.out" 2>"$WORK/rows.err" || fail "bisect run without --row exited $?"
expect_contains "$WORK/rows.out" "rows marked (R) by compare: $ROW"
expect_contains "$WORK/rows.out" "first bad commit: $planted three: the planted delay — unconfirmed: --confirm-sessions 0 skipped the A/B/A sandwich"
grep -q "confirmation:" "$WORK/rows.out" && fail "--confirm-sessions 0 measured a sandwich" || pass

# A delay that does not last: the planted commit reports its 200 ms in its
# first 3 sessions only (all the search measures of it, --max-sessions 3) and
# 2 ms afterwards, as a kernel whose cost was a transient would. The wrapper
# counts the planted commit's benchmark runs (one a session), so what changes
# is the session's rank, never a time. Git still names it; the sandwich's
# fresh sessions do not confirm it: exit 1, and the report never calls it
# found. 2 ms, ten times below the parent's 20, and not the parent's own
# value: two equal values could be marked (R) by chance, a tenfold drop
# cannot, so the default alpha serves.
mkdir -p "$WORK/calm" && echo 2 >"$WORK/calm/DELAY_MS"
cat >"$WORK/transient.sh" <<SH
#!/bin/sh
if [ "\$2" = run ] && [ "\$KBENCH_BISECT_COMMIT" = "$planted" ]; then
  n=\$(( \$(cat "$WORK/transient.count" 2>/dev/null || echo 0) + 1 ))
  echo "\$n" >"$WORK/transient.count"
  [ "\$n" -gt 3 ] && export KBENCH_BISECT_TREE="$WORK/calm"
fi
exec "\$@"
SH
chmod +x "$WORK/transient.sh"
cat >"$WORK/transient.yaml" <<YAML
swprofiles:
  - name: fake
    build: {source: $tree, config: tinyconfig}
    wrapper: [$WORK/transient.sh]
benchmarks:
  - {name: selftest/value-file, params: {file: DELAY_MS}}
defaults: {benchmark: {warmups: 0, repeats: 4, timeout: 1m}}
YAML
"$KBENCH" bisect run "$WORK/transient.yaml" --good base --bad last --row "$ROW" --alpha 0.05 --sessions 3 \
  --max-sessions 3 --store "$S" >"$WORK/transient.out" 2>"$WORK/transient.err"
status=$?
[ "$status" -eq 1 ] && pass || { fail "an unconfirmed culprit: exit $status, expected 1"; tail -30 "$WORK/transient.err" >&2; }
cat "$WORK/transient.out"
[ "$(cat "$WORK/transient.count" 2>/dev/null)" = 6 ] && pass \
  || fail "the planted commit ran $(cat "$WORK/transient.count" 2>/dev/null) sessions, expected 3 in the search and 3 in the sandwich"
expect_contains "$WORK/transient.out" "first bad commit: $planted three: the planted delay — NOT confirmed: A/B/A (4 sessions of the parent, 3 of the culprit"
grep -q "first bad commit: .*\(improved\|unchanged\|undecided\).*$ROW" "$WORK/transient.out" && pass \
  || fail "the report does not say the row was improved, unchanged or undecided in the sandwich"
grep -q "confirmed by A/B/A" "$WORK/transient.out" && fail "an unconfirmed culprit reported as confirmed" || pass
sqlite3 "$WORK/store.db" "select text from log where kind = 'bisect' order by id desc limit 1" >"$WORK/transient.log" 2>&1
expect_contains "$WORK/transient.log" "first bad commit: $planted three: the planted delay — NOT confirmed"

# git bisect run ... bisect step, in the user's tree.
g bisect start last base >/dev/null
(cd "$tree" && git bisect run "$KBENCH" bisect step "$WORK/bisect.yaml" --good base --bad last --row "$ROW" \
  --alpha 0.05 --max-sessions 8 --store "$S") >"$WORK/step.out" 2>"$WORK/step.err"
status=$?
[ "$status" -eq 0 ] && pass || { fail "git bisect run exited $status"; tail -30 "$WORK/step.err" >&2; }
expect_contains "$WORK/step.out" "$planted is the first bad commit"
g bisect reset >/dev/null
finish

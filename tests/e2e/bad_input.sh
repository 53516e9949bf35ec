#!/usr/bin/env bash
# Bad input: one line naming the input and what was expected, exit 2, nothing
# written to stdout, no store created or changed.
source "$(dirname "$0")/lib.bash"
unset KBENCH_STORE
S="$WORK/store.db"

# A real store with two profiles to compare against.
"$KBENCH" run --swprofile A --suite quick --benchmark 'syscall/getpid' --param calls=20000 --repeats 2 --warmups 0 \
  --store "sqlite://$S" >/dev/null 2>&1 || fail "setting up the store failed"
before=$(md5sum "$S")

# kbench run
expect_bad_input "unknown benchmark" "$KBENCH" run --swprofile A --benchmark 'nosuch/*' --store "sqlite://$WORK/new.db"
[ ! -e "$WORK/new.db" ] && pass || fail "run with an unknown benchmark created the store"
expect_bad_input "missing --swprofile" "$KBENCH" run --store "sqlite://$WORK/new.db"
expect_bad_input "empty --swprofile" "$KBENCH" run --swprofile '' --store "sqlite://$WORK/new.db"
expect_bad_input "zero repeats" "$KBENCH" run --swprofile A --repeats 0 --store "sqlite://$WORK/new.db"
expect_bad_input "bad --repeats" "$KBENCH" run --swprofile A --repeats many --store "sqlite://$WORK/new.db"
expect_bad_input "bad --timeout" "$KBENCH" run --swprofile A --timeout soon --store "sqlite://$WORK/new.db"
expect_bad_input "bad --suite" "$KBENCH" run --swprofile A --suite huge --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "--suite 'huge': expected quick or default"
expect_bad_input "bad catalogue --format" "$KBENCH" catalogue --format yaml
expect_contains "$WORK/err" "--format 'yaml': expected text or json"
expect_bad_input "bad list kind" "$KBENCH" list kernels --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "kind 'kernels': expected sut, swprofile, benchmark, sessions or boots"
expect_bad_input "bad store scheme" "$KBENCH" run --swprofile A --store "mysql://x/y"
[ ! -e "$WORK/new.db" ] && pass || fail "a refused run created the store"
# Names follow a plan's rule; an empty --sut is refused, not read as the hostname.
QUICK=(--suite quick --benchmark syscall/getpid --param calls=20000 --repeats 2 --warmups 0 --sessions 1)
expect_bad_input "blank --swprofile" "$KBENCH" run --swprofile ' ' "${QUICK[@]}" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "--swprofile ' ': expected a non-blank name without control characters"
expect_bad_input "empty --sut" "$KBENCH" run --swprofile A --sut '' "${QUICK[@]}" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "--sut '': expected a non-blank name without control characters"
expect_bad_input "calibrate: empty --sut" "$KBENCH" calibrate --sut '' --sessions 2 --spread 0 --benchmark syscall/getpid \
  --store "sqlite://$WORK/new.db"
printf 'sut: {name: " "}\nbenchmarks: [syscall/getpid]\n' >"$WORK/blank-sut.yaml"
expect_bad_input "plan: blank sut.name" "$KBENCH" plan check "$WORK/blank-sut.yaml"
expect_contains "$WORK/err" "blank-sut.yaml:1: sut.name: expected a non-blank name without control characters"
# Names that are not UTF-8 would break every json output later.
expect_bad_input "--swprofile not UTF-8" "$KBENCH" run --swprofile $'a\xff' "${QUICK[@]}" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "expected a name in UTF-8 (byte 2 is not)"
expect_bad_input "--sut not UTF-8" "$KBENCH" run --swprofile A --sut $'\xc0\xaf' "${QUICK[@]}" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "expected a name in UTF-8 (byte 1 is not)"
printf 'swprofiles: [{name: "a\xff"}]\nbenchmarks: [syscall/getpid]\n' >"$WORK/latin1.yaml"
expect_bad_input "plan check: a swprofile name not UTF-8" "$KBENCH" plan check "$WORK/latin1.yaml"
expect_contains "$WORK/err" "latin1.yaml:1: swprofiles[].name: expected a name in UTF-8 (byte 2 is not)"
expect_bad_input "plan exec: a swprofile name not UTF-8" "$KBENCH" plan exec "$WORK/latin1.yaml" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "latin1.yaml:1: swprofiles[].name: expected a name in UTF-8 (byte 2 is not)"
printf 'benchmarks: [{name: syscall/getpid, params: {calls: "20000"}, repeats: 2}]\n' >"$WORK/unnamed.yaml"
for command in check "exec --store sqlite://$WORK/new.db"; do
  # shellcheck disable=SC2086
  expect_bad_input "plan $command --swprofile not UTF-8" "$KBENCH" plan $command "$WORK/unnamed.yaml" --swprofile $'a\xff'
  expect_contains "$WORK/err" "--swprofile 'a"
  expect_contains "$WORK/err" "expected a name in UTF-8 (byte 2 is not)"
done
# An option given twice is named, in kbench's words, not CLI11's "At Most 1 required but received 2".
expect_bad_input "--swprofile twice" "$KBENCH" run --swprofile a --swprofile b "${QUICK[@]}" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "kbench: --swprofile given 2 times: expected it once"
expect_bad_input "compare --fdr twice" "$KBENCH" compare A B --fdr 0.1 --fdr 0.2 --store "sqlite://$S"
expect_contains "$WORK/err" "kbench: --fdr given 2 times: expected it once"
[ ! -e "$WORK/new.db" ] && pass || fail "a run with a refused name or repeated option created the store"
# --resume with nothing to resume, in a new store and in one without that swprofile's runs.
for store in "$WORK/new.db" "$S"; do
  expect_bad_input "run --resume with nothing to resume in $store" "$KBENCH" run --swprofile B --suite quick \
    --benchmark 'syscall/getpid' --param calls=20000 --repeats 2 --warmups 0 --resume --store "sqlite://$store"
  expect_contains "$WORK/err" "--resume: no interrupted run of swprofile 'B' to resume in sqlite://$store"
done
[ ! -e "$WORK/new.db" ] && pass || fail "run --resume with nothing to resume created the store"

# kbench compare
expect_bad_input "unknown swprofile" "$KBENCH" compare A NOPE --store "sqlite://$S"
expect_bad_input "one profile only" "$KBENCH" compare A --store "sqlite://$S"
expect_bad_input "bad --method" "$KBENCH" compare A B --method bayes --store "sqlite://$S"
expect_bad_input "bad --fdr" "$KBENCH" compare A B --fdr 2 --store "sqlite://$S"
expect_bad_input "bad --format" "$KBENCH" compare A B --format pdf --store "sqlite://$S"
expect_bad_input "bad --sign" "$KBENCH" compare A B --sign up --store "sqlite://$S"
# markdown prints the raw change with arrows: a sign it would not honour is refused.
expect_bad_input "--sign better with markdown" "$KBENCH" compare A B --format markdown --sign better --store "sqlite://$S"
expect_contains "$WORK/err" "--sign better: --format markdown prints the raw change"
expect_bad_input "missing store" "$KBENCH" compare A B --store "sqlite://$WORK/missing.db"
[ ! -e "$WORK/missing.db" ] && pass || fail "compare created a missing store"

# Files that are not kbench stores are refused and left as they were.
echo "hello, not a database" >"$WORK/text.db"
sqlite3 "$WORK/other.db" "create table t(x); insert into t values (1);"
cp "$S" "$WORK/newer.db"
sqlite3 "$WORK/newer.db" "update kbench_meta set value='99' where key='schema_version'"
# Damaged copies of a real store: cut inside its first page, and after it.
head -c 100 "$S" >"$WORK/cut.db"
head -c 4096 "$S" >"$WORK/cut4k.db"
for f in text other newer cut cut4k; do
  sum=$(md5sum <"$WORK/$f.db")
  expect_bad_input "$f.db as a store (compare)" "$KBENCH" compare A B --store "sqlite://$WORK/$f.db"
  # A store from a newer kbench is named as such, never as "not a kbench store".
  [ $f = newer ] && expect_contains "$WORK/err" "has schema version 99"
  expect_bad_input "$f.db as a store (run)" "$KBENCH" run --swprofile A --benchmark 'syscall/getpid' \
    --store "sqlite://$WORK/$f.db"
  [ $f = newer ] && expect_contains "$WORK/err" "has schema version 99"
  [ $f = cut ] && expect_contains "$WORK/err" "cut.db is damaged (an SQLite database cut off after 100 bytes"
  [ $f = cut4k ] && expect_contains "$WORK/err" "cut4k.db is damaged (SQLite cannot read it: "
  [ "$(md5sum <"$WORK/$f.db")" = "$sum" ] && pass || fail "$f.db was changed"
  [ ! -e "$WORK/$f.db-wal" ] && [ ! -e "$WORK/$f.db-shm" ] && pass || fail "$f.db was left with -wal or -shm files"
done
# A new store on a read-only file system is named as such (SQLite said "No such
# file or directory"). The file system is a tmpfs of this test's own mount namespace.
mkdir "$WORK/ro"
# shellcheck disable=SC2016  # $0 and $@ are the inner shell's
read_only() { unshare -Urm sh -c 'mount -t tmpfs none "$0" && mount -o remount,ro "$0" && exec "$@"' "$WORK/ro" "$@"; }
if read_only true 2>/dev/null; then
  expect_bad_input "run into a read-only file system" read_only "$KBENCH" run --swprofile A "${QUICK[@]}" \
    --store "sqlite://$WORK/ro/new.db"
  expect_contains "$WORK/err" "cannot create $WORK/ro/new.db: read-only file system"
else
  echo "skipped: a store on a read-only file system (no user namespace here to mount one in)"
fi

# kbench list / show
expect_bad_input "bad list kind" "$KBENCH" list widgets --store "sqlite://$S"
expect_bad_input "show unknown profile" "$KBENCH" show NOPE --store "sqlite://$S"
expect_bad_input "unknown command" "$KBENCH" frobnicate
expect_contains "$WORK/err" "kbench: command 'frobnicate': expected one of run, calibrate, compare,"
# A misspelt command is named, with the nearest one, not "A subcommand is required".
expect_bad_input "misspelt command" "$KBENCH" compaer A B --store "sqlite://$S"
expect_contains "$WORK/err" "command 'compaer': expected one of run, calibrate, compare,"
expect_contains "$WORK/err" "(did you mean compare?)"
expect_bad_input "misspelt plan command" "$KBENCH" plan exce my-plan.yaml --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "plan command 'exce': expected one of check, exec, status (did you mean exec?)"
[ ! -e "$WORK/new.db" ] && pass || fail "a misspelt plan command created the store"
expect_bad_input "no command" "$KBENCH"
expect_contains "$WORK/err" "kbench: command missing: expected one of run, calibrate, compare,"
expect_bad_input "an option before the command" "$KBENCH" --store "sqlite://$S" compare A B
expect_contains "$WORK/err" "kbench: command missing before '--store': expected one of run, calibrate, compare,"
expect_bad_input "session without its command" "$KBENCH" session
expect_contains "$WORK/err" "kbench: session command missing: expected one of show, delete"
# --version is no command: it prints the version and exits 0.
"$KBENCH" --version >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] && [ ! -s "$WORK/err" ] && grep -qE '^kbench [0-9]+\.[0-9]+\.[0-9]+$' "$WORK/out" && pass \
  || fail "--version: exit $status, stdout '$(cat "$WORK/out")', stderr '$(cat "$WORK/err")'"

# kbench plan check / exec: a plan's faults are found before anything is written.
# expect_plan_refused NAME PLAN TEXT: check and exec both refuse PLAN, with TEXT, within seconds.
expect_plan_refused() {
  local name=$1 plan=$2 text=$3
  expect_bad_input "plan check: $name" timeout 10 "$KBENCH" plan check "$plan"
  expect_contains "$WORK/err" "$text"
  expect_bad_input "plan exec: $name" timeout 10 "$KBENCH" plan exec "$plan" --swprofile A --store "sqlite://$WORK/new.db"
  expect_contains "$WORK/err" "$text"
  [ ! -e "$WORK/new.db" ] && pass || fail "plan exec of a refused plan ($name) created the store"
}
printf 'benchmarks: &a [*a]\n' >"$WORK/self-alias.yaml"
expect_plan_refused "an alias inside the node it names" "$WORK/self-alias.yaml" \
  "self-alias.yaml:1: expected an alias of a node that ends before it"
# Nine levels of nine aliases: 387 million nodes from 1 KB ("billion laughs").
{
  echo "l0: &l0 [a, a, a, a, a, a, a, a, a]"
  for level in 1 2 3 4 5 6 7 8; do
    p="*l$((level - 1))"
    echo "l$level: &l$level [$p, $p, $p, $p, $p, $p, $p, $p, $p]"
  done
  echo "benchmarks: [syscall/getpid]"
} >"$WORK/laughs.yaml"
expect_plan_refused "nested aliases" "$WORK/laughs.yaml" \
  "laughs.yaml:6: expected aliases that repeat at most 100000 nodes in all"
printf 'swprofiles: []\nbenchmarks: [syscall/getpid]\n' >"$WORK/no-swprofiles.yaml"
expect_bad_input "plan check: swprofiles: []" "$KBENCH" plan check "$WORK/no-swprofiles.yaml"
expect_contains "$WORK/err" "no-swprofiles.yaml:1: swprofiles: expected at least one swprofile"
expect_bad_input "plan exec: swprofiles: []" "$KBENCH" plan exec "$WORK/no-swprofiles.yaml" --store "sqlite://$WORK/new.db"
expect_contains "$WORK/err" "no-swprofiles.yaml:1: swprofiles: expected at least one swprofile"
printf 'swprofiles: [{name: A}]\nbenchmarks: []\n' >"$WORK/no-benchmarks.yaml"
expect_plan_refused "benchmarks: []" "$WORK/no-benchmarks.yaml" "no-benchmarks.yaml:2: benchmarks: expected at least one benchmark"
expect_bad_input "plan exec into a store: benchmarks: []" "$KBENCH" plan exec "$WORK/no-benchmarks.yaml" --store "sqlite://$S"
# A plan that runs in a second, for the refusals below.
printf 'swprofiles: [{name: A}]\nbenchmarks: [{name: syscall/getpid, params: {calls: "20000"}, repeats: 2}]\n' \
  >"$WORK/getpid.yaml"
# --budget and --max-looks limit what --until-decided adds: alone they are refused.
for option in "--budget 1h" "--max-looks 3"; do
  # shellcheck disable=SC2086
  expect_bad_input "plan exec $option without --until-decided" "$KBENCH" plan exec "$WORK/getpid.yaml" $option \
    --store "sqlite://$WORK/new.db"
  expect_contains "$WORK/err" "${option% *} requires --until-decided"
done
[ ! -e "$WORK/new.db" ] && pass || fail "plan exec with --budget or --max-looks alone created the store"
# plan exec --resume with nothing to resume, as run's: in a new store and in one without the plan's runs.
for store in "$WORK/new.db" "$S"; do
  expect_bad_input "plan exec --resume with nothing to resume in $store" "$KBENCH" plan exec "$WORK/getpid.yaml" \
    --resume --store "sqlite://$store"
  expect_contains "$WORK/err" \
    "--resume: no interrupted run of plan $WORK/getpid.yaml (swprofile A) to resume in sqlite://$store"
done
[ ! -e "$WORK/new.db" ] && pass || fail "plan exec --resume with nothing to resume created the store"

# --strict on a busy machine refuses (exit 1) before the store is created. The
# load average is faked in a mount namespace of this test's own.
printf '9999.00 9999.00 9999.00 1/100 1\n' >"$WORK/busy-loadavg"
# shellcheck disable=SC2016  # $0 and $@ are the inner shell's
busy() { unshare -Urm sh -c 'mount --bind "$0" /proc/loadavg && exec "$@"' "$WORK/busy-loadavg" "$@"; }
if busy true 2>/dev/null; then
  for command in "run --swprofile A ${QUICK[*]}" "plan exec $WORK/getpid.yaml"; do
    # shellcheck disable=SC2086
    busy "$KBENCH" $command --strict --store "sqlite://$WORK/new.db" >"$WORK/out" 2>"$WORK/err"
    status=$?
    [ "$status" -eq 1 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && pass \
      || fail "$command --strict on a busy machine: exit $status, expected 1 with one line: $(cat "$WORK/err")"
    expect_contains "$WORK/err" "machine busy: 1-minute load average 9999.00"
    [ ! -e "$WORK/new.db" ] && pass || fail "$command --strict on a busy machine created the store"
    rm -f "$WORK/new.db"
  done
else
  echo "skipped: --strict on a busy machine (no user namespace here to fake the load average in)"
fi

# kbench-agent
expect_bad_input "agent unknown benchmark" "$KBENCH_AGENT" run --benchmark nosuch/thing --repeats 1
expect_bad_input "agent --param without =" "$KBENCH_AGENT" run --benchmark syscall/getpid --param calls --repeats 1
expect_bad_input "agent unknown param" "$KBENCH_AGENT" run --benchmark syscall/getpid --param nosuch=1 --repeats 1
expect_bad_input "agent non-numeric param" "$KBENCH_AGENT" run --benchmark syscall/getpid --param calls=abc --repeats 1

[ "$(md5sum "$S")" = "$before" ] && pass || fail "the real store was changed by refused commands"
finish

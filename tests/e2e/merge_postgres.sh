#!/usr/bin/env bash
# kbench merge in every direction that involves PostgreSQL (sqlite->sqlite is
# tests/merge_test.cpp): sqlite -> postgresql, postgresql -> sqlite, and
# postgresql -> postgresql. Each merge is idempotent, and afterwards the
# merged part exports byte-identically on both sides. A conflict (same
# session uid, different content) is one line, exit 2, nothing written.
source "$(dirname "$0")/lib.bash"
export KBENCH_SELFTEST=1
export KBENCH_STATE_DIR="$WORK/state"
postgres_store PG1 kbench_merge_a
postgres_store PG2 kbench_merge_b
DB2=${PG2##*/}
LOCAL="sqlite://$WORK/local.db"
BACK="sqlite://$WORK/back.db"

run_into() {  # STORE SUT SWPROFILE
  "$KBENCH" run --store "$1" --sut "$2" --swprofile "$3" --benchmark selftest/sleep --param ms=1 \
    --sessions 2 --repeats 3 --warmups 0 >"$WORK/run.out" 2>"$WORK/run.err" ||
    fail "kbench run $2/$3 into $1 exited $?: $(tail -3 "$WORK/run.err")"
}
# Two colleagues: one measured into SQLite, one into PostgreSQL.
run_into "$LOCAL" lab-1 base
run_into "$LOCAL" lab-1 patched
run_into "$PG1" lab-2 base

merge() {  # SRC DST [options]: the summary in $WORK/merge.out
  "$KBENCH" merge "$@" >"$WORK/merge.out" 2>&1 || fail "kbench merge $* exited $?: $(cat "$WORK/merge.out")"
}
same_export() {  # A B SELECTION...: the selected part exports identically from both
  local a=$1 b=$2
  shift 2
  "$KBENCH" export --store "$a" "$@" >"$WORK/a.csv" 2>&1 || fail "export from $a exited $?"
  "$KBENCH" export --store "$b" "$@" >"$WORK/b.csv" 2>&1 || fail "export from $b exited $?"
  [ "$(wc -l <"$WORK/a.csv")" -gt 1 ] || fail "export from $a $* is empty"
  cmp -s "$WORK/a.csv" "$WORK/b.csv" && pass || fail "export $* differs between $a and $b: $(diff "$WORK/a.csv" "$WORK/b.csv" | head -5)"
}
samples() { "$KBENCH" export --store "$1" | tail -n +2 | wc -l; }

# sqlite -> postgresql, twice: the second adds nothing.
own=$(samples "$PG1")
merge "$LOCAL" "$PG1"
cat "$WORK/merge.out"
[ "$(samples "$PG1")" -eq $(( $(samples "$LOCAL") + own )) ] && pass || fail "PG1 has $(samples "$PG1") samples after the merge, expected $own + $(samples "$LOCAL")"
same_export "$LOCAL" "$PG1" --sut lab-1
before=$(samples "$PG1")
merge "$LOCAL" "$PG1"
expect_contains "$WORK/merge.out" "sessions already present: 4"
[ "$(samples "$PG1")" -eq "$before" ] && pass || fail "merging twice changed PG1 from $before to $(samples "$PG1") samples"

# postgresql -> sqlite (a new file): everything, then the same again.
merge "$PG1" "$BACK"
same_export "$PG1" "$BACK"
merge "$PG1" "$BACK"
expect_contains "$WORK/merge.out" "sessions already present: 6"

# postgresql -> postgresql, selective.
merge "$PG1" "$PG2" --swprofile patched
same_export "$PG1" "$PG2" --swprofile patched
patched=$("$KBENCH" export --store "$LOCAL" --swprofile patched | tail -n +2 | wc -l)
[ "$(samples "$PG2")" -eq "$patched" ] && pass || fail "the selective merge copied $(samples "$PG2") samples, expected $patched (patched only)"

# A conflict: the same session (uid) with another value in DST.
uid=$("$KBENCH" export --store "$PG2" | sed -n '2p' | cut -d, -f3)
psql "$PG2" -qc "UPDATE result SET value = value + 1 WHERE session_id = (SELECT id FROM session WHERE uid = '$uid') AND repeat = 0" ||
  fail "could not alter a result in $DB2"
before=$(samples "$PG2")
expect_bad_input "a conflicting session" "$KBENCH" merge "$PG1" "$PG2"
expect_contains "$WORK/err" "conflict"
expect_contains "$WORK/err" "$uid"
[ "$(samples "$PG2")" -eq "$before" ] && pass || fail "the refused merge wrote to $DB2"
finish

#!/usr/bin/env bash
# Option values of every command: a bad one is one line naming the option, the
# value and what is expected, exit 2, nothing on stdout, no store created or
# changed. And output that cannot be written is a failure, not exit 0.
source "$(dirname "$0")/lib.bash"
unset KBENCH_STORE
S="$WORK/store.db"
NEW="sqlite://$WORK/new.db"

"$KBENCH" run --swprofile A --suite quick --benchmark 'syscall/getpid' --param calls=20000 --sessions 1 --repeats 2 --warmups 0 \
  --store "sqlite://$S" >/dev/null 2>&1 || fail "setting up the store failed"
"$KBENCH" run --swprofile B --suite quick --benchmark 'syscall/getpid' --param calls=20000 --sessions 1 --repeats 2 --warmups 0 \
  --store "sqlite://$S" >/dev/null 2>&1 || fail "setting up the store failed"
before=$(md5sum "$S")

# expect_message NAME TEXT CMD...: bad input whose one line contains TEXT.
expect_message() {
  local name=$1 text=$2; shift 2
  expect_bad_input "$name" "$@" && expect_contains "$WORK/err" "$text"
}

# An explicitly empty --store is refused on every command that has one; HOME
# points at an empty directory so that a fallback to the default store would
# be seen (it would be created there, or reported missing there).
export HOME="$WORK/home" XDG_DATA_HOME=
mkdir -p "$HOME"
for cmd in "run --swprofile A --benchmark syscall/getpid" "compare A B" "show A" "list sut" "noise A" "export" \
           "plan exec $KBENCH_SOURCE_DIR/plans/quick.yaml --swprofile A"; do
  # shellcheck disable=SC2086
  expect_message "empty --store ($cmd)" "--store '': expected a store URL" "$KBENCH" $cmd --store ''
done
[ ! -e "$HOME/.local/share/kbench/results.db" ] && pass || fail "an empty --store created the default store"
# An empty KBENCH_STORE still means the default store (here: missing, so named).
KBENCH_STORE= expect_message "empty KBENCH_STORE is the default" "$HOME/.local/share/kbench/results.db" \
  "$KBENCH" compare A B

# Globs: empty and malformed ones are named as such, not "no rows match".
expect_message "run empty --benchmark" "--benchmark '': expected a non-empty glob" \
  "$KBENCH" run --swprofile A --benchmark '' --store "$NEW"
expect_message "run unclosed [" "--benchmark '[': expected a glob whose '[' (character 1) is closed by a ']'" \
  "$KBENCH" run --swprofile A --benchmark '[' --store "$NEW"
for cmd in "compare A B" "noise A" "export"; do
  for option in --sut --benchmark --resultclass; do
    # shellcheck disable=SC2086
    expect_message "$cmd empty $option" "$option '': expected a non-empty glob" \
      "$KBENCH" $cmd "$option" '' --store "sqlite://$S"
    # shellcheck disable=SC2086
    expect_message "$cmd unclosed [ in $option" "$option 'sys[': expected a glob whose '['" \
      "$KBENCH" $cmd "$option" 'sys[' --store "sqlite://$S"
  done
done
expect_message "list empty --id" "--id '': expected a non-empty glob" "$KBENCH" list benchmark --id '' --store "sqlite://$S"
expect_message "list unclosed [" "--id '[': expected a glob" "$KBENCH" list benchmark --id '[' --store "sqlite://$S"
expect_message "backslash in a glob" "without backslashes" \
  "$KBENCH" compare A B --benchmark 'syscall\*' --store "sqlite://$S"
expect_message "catalogue unclosed [" "GLOB '[': expected a glob whose '[' (character 1) is closed by a ']'" \
  "$KBENCH" catalogue '['
expect_message "catalogue backslash" "GLOB 'syscall\*': expected a glob without backslashes" "$KBENCH" catalogue 'syscall\*'
"$KBENCH" catalogue 'syscall/[!i]*' >"$WORK/out" 2>"$WORK/err" && grep -qx 'syscall/getpid' "$WORK/out" \
  && ! grep -q 'syscall/invalid' "$WORK/out" && pass || fail "catalogue 'syscall/[!i]*': $(grep -v '^ ' "$WORK/out")"
# fnmatch's "[!...]" negates in the store's queries too (SQLite reads only "[^...]").
"$KBENCH" export --benchmark 'syscall/[!g]*' --store "sqlite://$S" >"$WORK/out" 2>"$WORK/err"
[ "$(wc -l <"$WORK/out")" -eq 1 ] && pass || fail "[!g]* matched getpid: $(head -3 "$WORK/out")"
"$KBENCH" export --benchmark 'syscall/[!x]*' --store "sqlite://$S" >"$WORK/out" 2>"$WORK/err"
[ "$(wc -l <"$WORK/out")" -gt 1 ] && pass || fail "[!x]* matched nothing"

# Numbers: the accepted range in the message, not CLI11's "Could not convert".
expect_message "huge --repeats" "--repeats '99999999999': expected a whole number from 1 to 10000" \
  "$KBENCH" run --swprofile A --repeats 99999999999 --store "$NEW"
expect_message "hex --repeats" "--repeats '0x10': expected a whole number from 1 to 10000" \
  "$KBENCH" run --swprofile A --repeats 0x10 --store "$NEW"
expect_message "huge --warmups" "--warmups '99999999999': expected a whole number from 0 to 10000" \
  "$KBENCH" run --swprofile A --warmups 99999999999 --store "$NEW"
expect_message "negative --warmups" "--warmups '-1': expected a whole number from 0 to 10000" \
  "$KBENCH" run --swprofile A --warmups -1 --store "$NEW"
for t in 1ms 1500ms 25h 99999999999999999999h; do
  expect_message "--timeout $t" "--timeout '$t': expected a duration in whole seconds from 1s to 24h" \
    "$KBENCH" run --swprofile A --timeout "$t" --store "$NEW"
done
"$KBENCH" run --help >"$WORK/out" 2>&1
expect_contains "$WORK/out" "(1s to 24h, whole seconds)"
expect_contains "$WORK/out" "(1 to 10000)"
for v in nan inf abc -1; do
  expect_message "--min-change $v" "--min-change '$v': expected 0 (no margin) or a percentage from 0.01 to 1000" \
    "$KBENCH" compare A B --min-change "$v" --store "sqlite://$S"
done
expect_message "hex --fdr" "--fdr 0x0.1p0: expected a level" "$KBENCH" compare A B --fdr 0x0.1p0 --store "sqlite://$S"
# A session number: a short line (CLI11's printed the largest double in full).
for command in show "delete --yes"; do
  for n in 0 -1 1.5; do
    # shellcheck disable=SC2086
    expect_message "session $command $n" "session number '$n': expected a whole number from 1 to 2147483647" \
      "$KBENCH" session $command A "$n" --store "sqlite://$S"
    [ "$(wc -c <"$WORK/err")" -lt 100 ] && pass || fail "session $command $n: $(wc -c <"$WORK/err") bytes on stderr"
  done
done
[ ! -e "$WORK/new.db" ] && pass || fail "a refused run created the store"

# Output that cannot be written: one line naming why, exit 1 (it used to be 0).
# expect_write_failure NAME REASON CMD... (stdout redirected by the caller's CMD)
expect_write_failure() {
  local name=$1 reason=$2 status=$3
  if [ "$status" -ne 1 ]; then fail "$name: exit status $status, expected 1"; return; fi
  if [ "$(wc -l <"$WORK/err")" -ne 1 ]; then fail "$name: stderr is not one line:"; cat "$WORK/err" >&2; return; fi
  expect_contains "$WORK/err" "kbench: cannot write to standard output: $reason"
}
"$KBENCH" export --store "sqlite://$S" >/dev/full 2>"$WORK/err"
expect_write_failure "export > /dev/full" "No space left on device" $?
"$KBENCH" compare A B --store "sqlite://$S" >/dev/full 2>"$WORK/err"
expect_write_failure "compare > /dev/full" "No space left on device" $?
"$KBENCH" noise A --format json --store "sqlite://$S" >/dev/full 2>"$WORK/err"
expect_write_failure "noise > /dev/full" "No space left on device" $?
"$KBENCH" list swprofile --store "sqlite://$S" >&- 2>"$WORK/err"
expect_write_failure "list with stdout closed" "Bad file descriptor" $?
"$KBENCH" --help >/dev/full 2>"$WORK/err"
expect_write_failure "--help > /dev/full" "No space left on device" $?
# Bad input keeps its own status and line when nothing was written.
expect_bad_input "bad input to /dev/full" bash -c '"$0" compare A --store "sqlite://$1" >/dev/full' "$KBENCH" "$S"

# A reader that went away: quiet, status 141 (SIGPIPE), as coreutils; also when
# kbench was started with SIGPIPE ignored. A FIFO whose only reader has been
# closed makes every write fail at once, with no race against a reader.
mkfifo "$WORK/fifo"
exec 3<>"$WORK/fifo" 4>"$WORK/fifo" 3<&-
for ignore in no yes; do
  if [ $ignore = yes ]; then (trap '' PIPE; exec "$KBENCH" export --store "sqlite://$S" >&4 2>"$WORK/err")
  else "$KBENCH" export --store "sqlite://$S" >&4 2>"$WORK/err"; fi
  status=$?
  [ "$status" -eq 141 ] && pass || fail "export to a closed pipe (SIGPIPE ignored: $ignore): status $status, expected 141"
  [ ! -s "$WORK/err" ] && pass || fail "export to a closed pipe (SIGPIPE ignored: $ignore) said: $(cat "$WORK/err")"
done
exec 4>&-
# An ordinary pipe still gets everything, exit 0.
"$KBENCH" export --store "sqlite://$S" 2>"$WORK/err" | cat >"$WORK/out"
[ "${PIPESTATUS[0]}" -eq 0 ] && [ "$(wc -l <"$WORK/out")" -eq 17 ] && pass || fail "export through a pipe: $(wc -l <"$WORK/out") lines"

[ "$(md5sum "$S")" = "$before" ] && pass || fail "the store was changed by refused commands"

finish

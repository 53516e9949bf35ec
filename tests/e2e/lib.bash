# Shared helpers for the bash end-to-end tests. Sourced, not run.
set -uo pipefail
: "${KBENCH:?path to the kbench binary}"
: "${KBENCH_AGENT:?path to kbench-agent}"
WORK=$(mktemp -d /tmp/kbench-e2e.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILURES=0
CHECKS=0

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }
pass() { CHECKS=$((CHECKS + 1)); }

# expect_contains FILE TEXT: the file contains the literal text.
expect_contains() {
  if grep -qF -- "$2" "$1"; then pass; else fail "$1 lacks '$2'"; echo "--- $1:" >&2; head -40 "$1" >&2; fi
}

# expect_bad_input NAME CMD...: exit 2, exactly one line on stderr, nothing on stdout.
expect_bad_input() {
  local name=$1; shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local status=$?
  local lines
  lines=$(wc -l <"$WORK/err")
  if [ "$status" -ne 2 ]; then fail "$name: exit status $status, expected 2 ($(cat "$WORK/err"))"; return; fi
  if [ "$lines" -ne 1 ]; then fail "$name: $lines lines on stderr, expected 1:"; cat "$WORK/err" >&2; return; fi
  if [ -s "$WORK/out" ]; then fail "$name: wrote to stdout: $(head -3 "$WORK/out")"; return; fi
  echo "ok: $name -> $(cat "$WORK/err")"
  pass
}

# skip REASON: the whole script cannot run here. Exit 77 is the SKIP_RETURN_CODE
# tests/CMakeLists.txt gives every e2e test, so ctest reports it as skipped,
# never as passed.
KBENCH_SKIP_STATUS=77
skip() { echo "skipped: $*"; exit "$KBENCH_SKIP_STATUS"; }

finish() {
  echo "$CHECKS passed, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
}

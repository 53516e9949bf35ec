#!/usr/bin/env bash
# scripts/npm-ci.sh, which the build runs to install the HTML pages' plotting
# libraries (web/package-lock.json): offline from npm's cache once fetched;
# without npm, or with the registry unreachable and nothing cached, one line
# on stderr naming the lock, exit 1, and no stamp (the build stops).
source "$(dirname "$0")/lib.bash"
npm_ci=$KBENCH_SOURCE_DIR/scripts/npm-ci.sh
web=$KBENCH_SOURCE_DIR/web
command -v npm >/dev/null || skip "no npm"

# expect_one_line_failure NAME CMD...: exit 1, one stderr line naming the lock.
expect_one_line_failure() {
  local name=$1; shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local status=$? lines
  lines=$(wc -l <"$WORK/err")
  if [ "$status" -ne 1 ]; then fail "$name: exit status $status, expected 1 ($(cat "$WORK/err"))"; return; fi
  if [ "$lines" -ne 1 ]; then fail "$name: $lines lines on stderr, expected 1:"; cat "$WORK/err" >&2; return; fi
  if ! grep -qF "$web/package-lock.json" "$WORK/err"; then fail "$name: the line does not name the lock: $(cat "$WORK/err")"; return; fi
  echo "ok: $name -> $(cat "$WORK/err")"
  pass
}

# Registry unreachable, empty cache (no retries: the refusal is immediate).
npm_config_cache=$WORK/empty-cache npm_config_registry=http://127.0.0.1:9/ npm_config_fetch_retries=0 \
  expect_one_line_failure "registry unreachable, nothing cached" "$npm_ci" "$web" "$WORK/unreachable"
[ ! -e "$WORK/unreachable/node_modules/.kbench-installed" ] && pass || fail "a failed install left the stamp"
grep -q ECONNREFUSED "$WORK/unreachable/npm-ci.log" && pass || fail "npm's output is not in npm-ci.log"

# No npm on PATH (only the tools the script needs besides it).
mkdir -p "$WORK/bin"
for tool in cp mkdir grep sed touch; do ln -s "$(command -v $tool)" "$WORK/bin/$tool"; done
expect_one_line_failure "npm missing" env PATH="$WORK/bin" "$(command -v bash)" "$npm_ci" "$web" "$WORK/no-npm"

# The build has filled npm's cache: installing again needs no network.
if npm_config_offline=true "$npm_ci" "$web" "$WORK/offline" 2>"$WORK/err"; then
  [ -s "$WORK/offline/node_modules/vega-lite/build/vega-lite.min.js" ] && pass || fail "offline install has no vega-lite"
  [ -e "$WORK/offline/node_modules/.kbench-installed" ] && pass || fail "offline install left no stamp"
else
  fail "offline install from npm's cache failed: $(cat "$WORK/err")"
fi
finish

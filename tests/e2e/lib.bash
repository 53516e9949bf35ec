# Shared helpers for the bash end-to-end tests. Sourced, not run.
set -uo pipefail
: "${KBENCH:?path to the kbench binary}"
: "${KBENCH_AGENT:?path to kbench-agent}"
WORK=$(mktemp -d /tmp/kbench-e2e.XXXXXX)
POSTGRES_DATABASES=()
SERVER=
# At exit, whatever failed: a server start_serve started is stopped, the
# PostgreSQL databases postgres_store made are dropped, WORK is removed.
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; fi
  for db in "${POSTGRES_DATABASES[@]}"; do
    psql "$KBENCH_TEST_POSTGRES" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
FAILURES=0
CHECKS=0
# Every process this script starts inherits this mark (kbench passes its
# environment on to the agents it starts), so that pgrep_ours can tell them
# from those of the scripts ctest runs beside it.
export KBENCH_E2E_RUN=$WORK

# pgrep_ours PGREP_ARGS...: pgrep's pids, only those of this script's
# processes; false when there are none.
pgrep_ours() {
  local pid found=1
  for pid in $(pgrep "$@"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "KBENCH_E2E_RUN=$KBENCH_E2E_RUN"; then
      echo "$pid"
      found=0
    fi
  done
  return $found
}

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

# kernel_pair_plan_tail: the swprofiles, benchmark and defaults of the paired
# designs' VM tests (crossover_qemu, duet_qemu): the test kernel ($KERNEL, from
# x86_test_kernel) as base and with mitigations=off as patched, 2 sessions of
# syscall/getpid at the quick size.
kernel_pair_plan_tail() {
  cat <<YAML
swprofiles:
  - {name: base, kernel: $KERNEL}
  - {name: patched, kernel: $KERNEL, cmdline: [mitigations=off]}
benchmarks: [syscall/getpid]
defaults: {benchmark: {warmups: 0, repeats: 3, sessions: 2, size: quick, timeout: 5m}}
YAML
}

# expect_pairs DB EXPECTED: the sessions of the SQLite store DB grouped by
# their plan.pair (design: crossover or duet), one line per pair,
# "PAIR|UNIT:SWPROFILE,UNIT:SWPROFILE" in order, are EXPECTED's lines.
expect_pairs() {
  local got
  got=$(sqlite3 "$1" "select pair || '|' || group_concat(who, ',') from (
           select json_extract(s.fingerprint, '\$.plan.pair') as pair,
                  json_extract(s.fingerprint, '\$.plan.pair_unit') || ':' || w.name as who
           from session s join swprofile w on w.id = s.swprofile_id order by pair, who)
         group by pair order by pair")
  if [ "$got" = "$2" ]; then pass; else fail "pairs: got
$got
expected
$2"; fi
}

# swprofile_values DB EXPR SWPROFILE: the distinct values of the SQL
# expression EXPR over the sessions of SWPROFILE in the SQLite store DB
# (EXPR names the session s and the swprofile w).
swprofile_values() {
  sqlite3 "$1" "select distinct $2 from session s join swprofile w on w.id = s.swprofile_id where w.name = '$3'"
}

# expect_device_tree_models DB SWPROFILE MODEL SWPROFILE MODEL: each
# swprofile's guests saw the device tree model given (the marked tree of a
# kernel: {image, dtb}, or the board's own).
expect_device_tree_models() {
  local db=$1 models
  shift
  while [ "$#" -ge 2 ]; do
    models=$(swprofile_values "$db" "json_extract(s.fingerprint, '\$.device_tree_model')" "$1")
    [ "$models" = "$2" ] && pass || fail "$1's guests saw model '$models', expected '$2'"
    shift 2
  done
}

# lava_plan_exec PLAN STORE STATUS: PLAN run by plan exec at nice 19 into
# STORE (its stderr printed, its time said), which must exit STATUS.
lava_plan_exec() {
  local started status
  started=$(date +%s)
  nice -n 19 "$KBENCH" plan exec "$1" --store "$2" >"$WORK/plan.out" 2>"$WORK/plan.err"
  status=$?
  cat "$WORK/plan.err"
  echo "plan exec: $(($(date +%s) - started))s"
  [ "$status" -eq "$3" ] && pass || fail "plan exec $1 exited $status, expected $3"
}

# expect_lava_jobs DB N: N sessions of the SQLite store DB, each with a LAVA
# job of its own.
expect_lava_jobs() {
  local jobs
  jobs=$(sqlite3 "$1" "select count(distinct json_extract(fingerprint, '\$.lava_job_id')) from session
                       where json_extract(fingerprint, '\$.lava_job_id') > 0")
  [ "$jobs" -eq "$2" ] && pass || fail "expected $2 sessions with distinct LAVA job ids, found $jobs"
}

# yaml_cmdline "WORDS": the blank-separated WORDS as a YAML flow list.
yaml_cmdline() { local words=""; for w in $1; do words+="${words:+, }$w"; done; echo "[$words]"; }

# expect_getppid_slowdown COMPARE_FILE WHAT: the syscall/getppid mean row of
# a compare table (the test side's command line makes each syscall several
# times dearer under TCG) shows more than a doubling, marked (R) or (?):
# with 2 sessions a side on a loaded machine the sessions can scatter enough
# that the honest verdict is (?) (undecided: more sessions needed); what must
# never appear is an improvement, no mark, or a change that is not a large
# slowdown. WHAT names the change in the failure.
expect_getppid_slowdown() {
  local row change
  row=$(grep -E '^\| syscall/getppid +\| mean \(ns\) ' "$1")
  change=$(echo "$row" | grep -oE '[-+]?[0-9]+\.[0-9]+%' | tail -1 | tr -d '%+')
  if echo "$row" | grep -qE '\((R|\?)\)' && [ -n "$change" ] && [ "$(echo "$change < -100" | bc)" -eq 1 ]; then
    pass
    echo "$row" | grep -qF '(R)' || echo "note: the slowdown ($change%) is undecided (?) with these sessions, not (R)"
  else
    fail "$2 is not a large slowdown marked (R) or (?) on syscall/getppid: $row"
  fi
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

# fixture_store SPEC.json: writes $WORK/store.db from SPEC with store-fixture
# (tests/support/store_fixture.cpp) and sets STORE to its URL; a failing
# store-fixture fails the script and ends it.
fixture_store() {
  : "${STORE_FIXTURE:?path to store-fixture}"
  "$STORE_FIXTURE" "$WORK/store.db" "$1" >"$WORK/fixture.out" 2>&1 \
    || { fail "store-fixture exited $?: $(cat "$WORK/fixture.out")"; finish; exit; }
  STORE="sqlite://$WORK/store.db"
}

# PostgreSQL stores on the test server of scripts/pg-test-server.sh (make test
# starts one). postgres_store VAR PREFIX: a new database, dropped at exit;
# VAR is set to its store URL. Without a server the script fails, saying how
# to start one.
postgres_store() {
  if [ -z "${KBENCH_TEST_POSTGRES:-}" ]; then
    echo "FAIL: KBENCH_TEST_POSTGRES is not set: start a test server with" \
         "eval \"\$(scripts/pg-test-server.sh start)\" (make test does this itself)" >&2
    exit 1
  fi
  local database="${2}_$$_$RANDOM"
  psql "$KBENCH_TEST_POSTGRES" -qc "CREATE DATABASE $database" || { echo "FAIL: cannot create database $database" >&2; exit 1; }
  POSTGRES_DATABASES+=("$database")
  local server="${KBENCH_TEST_POSTGRES%%\?*}"
  printf -v "$1" '%s' "${server%/*}/$database"
}

# start_serve STORE_URL [OPTION...]: starts `kbench serve` on a free loopback
# port in the background, with the options given; SERVER is its pid, URL the
# address it printed as its first line.
# Fails the script (and finishes it) when no URL comes.
start_serve() {
  "$KBENCH" serve --store "$1" --listen 127.0.0.1:0 "${@:2}" >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER=$!
  URL=
  for _ in $(seq 600); do
    URL=$(head -1 "$WORK/serve.out")
    [ -n "$URL" ] && break
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$URL" ] || { fail "no URL printed: $(cat "$WORK/serve.err")"; finish; exit 1; }
}

# x86_test_kernel: for the scripts that boot the Debian test kernel on
# qemu-system-x86_64. Skips the script without QEMU or /bin/busybox (the VM's
# initramfs); else sets KERNEL: `make test` fetches the kernel once and hands
# it to every test in KBENCH_TEST_KERNEL (the QemuBoot tests of sut_qemu_test
# boot it too); run alone, a script fetches it through the same script.
x86_test_kernel() {
  if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ]; then
    skip "qemu-system-x86_64 or /bin/busybox missing (Debian packages qemu-system-x86, busybox-static)"
  fi
  local started
  started=$(date +%s)
  KERNEL=${KBENCH_TEST_KERNEL:-}
  if [ -z "$KERNEL" ]; then
    KERNEL=$("$KBENCH_SOURCE_DIR/scripts/fetch-test-kernel.sh") || { echo "FAIL: could not fetch a test kernel" >&2; exit 1; }
  fi
  [ -f "$KERNEL" ] || { echo "FAIL: KBENCH_TEST_KERNEL=$KERNEL is not a file" >&2; exit 1; }
  echo "kernel: $KERNEL (found in $(( $(date +%s) - started ))s)"
}

# lava_test_server: the LAVA test server of scripts/lava-test-server.sh,
# started or found running, its KBENCH_TEST_LAVA_* variables exported; skips
# the script without root. stop_lava_test_server at the script's end stops it
# unless KBENCH_TEST_LAVA_KEEP=1 (to look at its jobs); tests/CMakeLists.txt
# keeps the scripts that use it from running beside each other.
lava_test_server() {
  [ "$(id -u)" -eq 0 ] || skip "the LAVA test server needs root"
  local exports
  exports=$(nice -n 19 "$KBENCH_SOURCE_DIR/scripts/lava-test-server.sh" start) || {
    echo "FAIL: the LAVA test server did not start" >&2
    exit 1
  }
  eval "$exports"
  echo "LAVA test server: $KBENCH_TEST_LAVA_URL"
}
stop_lava_test_server() {
  [ -n "${KBENCH_TEST_LAVA_KEEP:-}" ] || nice -n 19 "$KBENCH_SOURCE_DIR/scripts/lava-test-server.sh" stop >/dev/null
}

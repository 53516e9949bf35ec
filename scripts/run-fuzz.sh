#!/usr/bin/env bash
# Runs every libFuzzer target of a KBENCH_FUZZ build for a bounded time on its
# seeds (tests/fuzz/corpus/<target>/, never written to: new inputs go to a
# scratch corpus). Fails on the first crash, leak, sanitizer report or
# uncaught exception, leaving the input that caused it in ARTIFACT_DIR.
# Usage: run-fuzz.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]  (FUZZ_JOBS at a time)
set -euo pipefail
build=${1:?build dir of a -DKBENCH_FUZZ=ON build}
seconds=${2:?seconds per target}
shift 2
source_dir=$(cd "$(dirname "$0")/.." && pwd)
artifacts=${ARTIFACT_DIR:-$build/fuzz-artifacts}
mkdir -p "$artifacts"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for source in "$source_dir"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# fuzz_one TARGET: one target's bounded run; its status is the run's.
fuzz_one() {
  local target=$1 binary=$build/tests/fuzz/$1 scratch log started status runs
  [ -x "$binary" ] || { echo "run-fuzz: $binary is not built" >&2; return 1; }
  scratch=$(mktemp -d /tmp/kbench-fuzz-$target.XXXXXX)
  log=$artifacts/$target.log
  started=$(date +%s)
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb bounds memory.
  if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$scratch" "$source_dir/tests/fuzz/corpus/$target" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  echo "fuzz $target: $status, ${runs:-?} inputs in $(( $(date +%s) - started ))s, corpus $(ls "$scratch" | wc -l) (log $log)"
  if [ $status = FAILED ]; then grep -E -A30 '^==[0-9]+==ERROR|runtime error|deadly signal|uncaught|Test unit written' "$log" | head -60 >&2; fi
  rm -rf "$scratch"
  [ $status = ok ]
}

# The targets run FUZZ_JOBS at a time (default: one per CPU): each is one
# single-threaded process, and CI waits for the slowest batch only.
jobs=${FUZZ_JOBS:-$(nproc)}
failed=0
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done
echo "fuzz: $(( ${#targets[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]

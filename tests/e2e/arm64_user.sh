#!/usr/bin/env bash
# The cross-built aarch64 agent (build/kbench-agent-aarch64) under qemu-aarch64
# user emulation: its cntvct_el0 timing, fingerprint and JSON Lines protocol
# run as arm64 code, so an arm64 regression shows without booting an arm64
# kernel. qemu-user emulates the instructions, not the kernel: system calls go
# to this x86-64 kernel, so the numbers say nothing about arm64 kernels; the
# checks are about the agent's arm64 code paths and its stream.
source "$(dirname "$0")/lib.bash"
AGENT64="$(dirname "$KBENCH_AGENT")/kbench-agent-aarch64"
QEMU=$(command -v qemu-aarch64-static) || skip "qemu-aarch64-static not installed (Debian qemu-user-static)"
[ -x "$AGENT64" ] || skip "no $AGENT64 (build kbench with aarch64-linux-gnu-g++ installed: scripts/install-deps.sh)"
run64() { "$QEMU" "$AGENT64" "$@"; }

# expect_jq NAME FILE FILTER: the jq filter is true of the file (slurped lines).
expect_jq() {
  if jq -e -s "$3" "$2" >/dev/null 2>"$WORK/jq.err"; then pass; else
    fail "$1: $3 is not true of $2"; head -c 3000 "$2" >&2; echo >&2; cat "$WORK/jq.err" >&2
  fi
}

# --- the binary -----------------------------------------------------------------
file "$AGENT64" >"$WORK/file.txt"
expect_contains "$WORK/file.txt" "ARM aarch64"
expect_contains "$WORK/file.txt" "statically linked"
run64 --version >"$WORK/version.txt" 2>&1 || fail "--version: exit status $?"
expect_contains "$WORK/version.txt" "(aarch64)"

# --- fingerprint: counter frequency, calibration, timer cost, MIDR --------------
run64 fingerprint >"$WORK/fp.jsonl" 2>"$WORK/fp.err" || fail "fingerprint: exit status $? ($(cat "$WORK/fp.err"))"
expect_jq "one fingerprint line" "$WORK/fp.jsonl" 'length == 1 and .[0].type == "fingerprint"'
expect_jq "arch" "$WORK/fp.jsonl" '.[0].data.arch == "aarch64"'
expect_jq "counter" "$WORK/fp.jsonl" '.[0].data.timer.counter == "cntvct_el0"'
# CNTFRQ_EL0 read by the agent; the calibration against CLOCK_MONOTONIC agrees.
# qemu-user derives the counter from the host's clock, so the two match closely.
expect_jq "CNTFRQ_EL0" "$WORK/fp.jsonl" '.[0].data.timer.nominal_hz > 1e6'
expect_jq "calibration near CNTFRQ_EL0" "$WORK/fp.jsonl" \
  '.[0].data.timer.nominal_deviation | fabs < 0.05'
expect_jq "timer cost" "$WORK/fp.jsonl" '.[0].data.timer.overhead_ticks > 0 and .[0].data.timer.overhead_ns > 0'
# No arm64 /proc/cpuinfo under qemu-user: the MIDR comes from the emulated register.
expect_jq "MIDR" "$WORK/fp.jsonl" \
  '.[0].data.cpu_midr.core | type == "string" and length > 0'
expect_jq "cpu_model from MIDR" "$WORK/fp.jsonl" \
  '.[0].data as $d | $d.cpu_model | startswith($d.cpu_midr.core)'
expect_jq "sut_class" "$WORK/fp.jsonl" '.[0].data.sut_class | startswith("aarch64-")'
jq -c '.data.timer' "$WORK/fp.jsonl"
jq -c '{cpu_model: .data.cpu_model, cpu_midr: .data.cpu_midr, sut_class: .data.sut_class}' "$WORK/fp.jsonl"

# expect_stream NAME FILE CLASSES REPEATS: the framing the controller checks
# (docs/agent-protocol.md): every line JSON with a type, benchmark first and
# end (ok) last, CLASSES samples per repeat, each finite and > 0, REPEATS
# repeat_ends numbered 0..REPEATS-1.
expect_stream() {
  local name=$1 file=$2 classes=$3 repeats=$4
  expect_jq "$name: every line has a type" "$file" 'all(.[]; type == "object" and (.type | type == "string"))'
  expect_jq "$name: benchmark first" "$file" '.[0].type == "benchmark"'
  expect_jq "$name: end ok last" "$file" '.[-1] == {"type": "end", "benchmark": .[0].benchmark, "status": "ok"}'
  expect_jq "$name: samples" "$file" \
    "[.[] | select(.type == \"sample\")] | length == $((classes * repeats)) and all(.[]; .value > 0 and .value < 1e12)"
  expect_jq "$name: repeat ends" "$file" "[.[] | select(.type == \"repeat_end\") | .repeat] == [range($repeats)]"
  expect_jq "$name: declared classes" "$file" ".[0].result_classes | length == $classes"
}

# --- syscall/getppid: each call timed with cntvct_el0, the bracket's in-call cost subtracted
run64 run -b syscall/getppid -p calls=20000 -w 1 -r 2 --cpu 0 >"$WORK/getppid.jsonl" 2>"$WORK/getppid.err" ||
  fail "syscall/getppid: exit status $? ($(cat "$WORK/getppid.err"))"
expect_stream syscall/getppid "$WORK/getppid.jsonl" 4 2  # mean, median, p99, p99.9
info() { echo "[.[] | select(.type == \"info\" and .key == \"$1\") | .value][0]"; }
expect_jq "getppid: counter" "$WORK/getppid.jsonl" "$(info counter) == \"cntvct_el0\""
expect_jq "getppid: nominal hz" "$WORK/getppid.jsonl" "$(info counter_nominal_hz) | tonumber > 1e6"
expect_jq "getppid: timer cost" "$WORK/getppid.jsonl" "$(info timer_overhead_ticks) | tonumber > 0"
# What is subtracted: measured in the call loop, in fractions of the coarse counter's tick.
expect_jq "getppid: in-call cost" "$WORK/getppid.jsonl" "$(info timer_cost_in_call_ticks) | tonumber >= 0"
jq -c 'select(.type == "info" or .type == "sample") | [.key // .resultclass, .value]' "$WORK/getppid.jsonl" | paste -sd' '

# --- ctxsw/pipe-threads: ns and counter ticks of one loop -----------------------
run64 run -b ctxsw/pipe-threads -p loops=2000 -w 0 -r 2 --cpu 0 >"$WORK/ctxsw.jsonl" 2>"$WORK/ctxsw.err" ||
  fail "ctxsw/pipe-threads: exit status $? ($(cat "$WORK/ctxsw.err"))"
expect_stream ctxsw/pipe-threads "$WORK/ctxsw.jsonl" 2 2
expect_jq "ctxsw: ns and ticks" "$WORK/ctxsw.jsonl" '[.[0].result_classes[].unit] == ["ns", "ticks"]'
# Both read around the same loop: ticks / ns is the counter's rate.
hz=$(jq '.data.timer.ticks_per_second' "$WORK/fp.jsonl")
expect_jq "ctxsw: ticks agree with ns at the counter's rate" "$WORK/ctxsw.jsonl" \
  "[.[] | select(.type == \"sample\")] | [.[0].value, .[1].value] as [\$ns, \$ticks]
   | (\$ticks / (\$ns * $hz / 1e9) - 1) | fabs < 0.1"
jq -c 'select(.type == "sample") | [.resultclass, .unit, .value]' "$WORK/ctxsw.jsonl" | paste -sd' '

# --- perf/syscall: the aarch64 agent picks the aarch64 exec helper ----------------
# Without a binfmt_misc entry for aarch64 this kernel cannot exec it: then the
# benchmark skips and says so; with one, it runs.
run64 run -b perf/syscall -p loops=1000 -p fork_loops=5 -p execve_loops=5 -w 0 -r 1 \
  >"$WORK/perf.jsonl" 2>"$WORK/perf.err"
expect_jq "perf/syscall: the aarch64 helper" "$WORK/perf.jsonl" \
  '(.[] | select(.type == "skipped") | .reason | test("kbench-exec-helper-aarch64 fails: Exec format error"))
   // ((.[] | select(.type == "info" and .key == "execve_program") | .value | endswith("/kbench-exec-helper-aarch64"))
       and .[-1].status == "ok")'
jq -c 'select(.type == "skipped" or .type == "end")' "$WORK/perf.jsonl" | paste -sd' '

finish

#!/usr/bin/env bash
# compare --fail-on (the CI gate) on a store with a planted regression, a
# planted improvement and a profile that is the base again (store-fixture):
# exit 3 exactly when the printed table holds the marks the gate names, 0
# otherwise, with every format and with several test profiles or scenarios;
# the output is the same with and without the flag; a bad word is bad input.
source "$(dirname "$0")/lib.bash"

# Five boots a profile. syscall/getpid mean (lower is better): base about
# 100 ns, "regressed" 20% slower, "improved" 20% faster, "same" the base's
# very values. perf/syscall basic (higher is better) is the same everywhere.
/usr/bin/python3 - "$WORK/spec.json" <<'EOF'
import json, sys
factor = {"base": 1.0, "same": 1.0, "regressed": 1.2, "improved": 0.8}
sessions = []
for profile in ("base", "same", "regressed", "improved"):
    for boot in range(5):
        getpid = [(100 + boot * 0.3 + r * 0.1) * factor[profile] for r in range(5)]
        basic = [4.0e6 + boot * 1.0e3 + r * 2.0e2 for r in range(5)]
        sessions.append({"swprofile": profile, "benchmarks": [
            {"name": "syscall/getpid", "results": [{"class": "mean", "unit": "ns", "better": "lower", "values": getpid}]},
            {"name": "perf/syscall", "results": [{"class": "basic", "unit": "ops/sec", "better": "higher",
                                                  "values": basic}]}]})
json.dump({"sut": "vm", "sessions": sessions}, open(sys.argv[1], "w"))
EOF
fixture_store "$WORK/spec.json"

# expect_status NAME STATUS CMD...: the command exits with STATUS.
expect_status() {
  local name=$1 expected=$2; shift 2
  "$@" >"$WORK/status.out" 2>"$WORK/status.err"
  local status=$?
  if [ "$status" -eq "$expected" ]; then pass; echo "ok: $name -> $status"; else
    fail "$name: exit status $status, expected $expected"; head -20 "$WORK/status.out" "$WORK/status.err" >&2; fi
}

# The planted marks are there (else the gate would have nothing to see).
"$KBENCH" compare base same regressed improved --store "$STORE" >"$WORK/all.txt" 2>&1
expect_contains "$WORK/all.txt" "(R) -20.00%"
expect_contains "$WORK/all.txt" "(I) 20.00%"

# Each profile against the base, each gate: 0 or 3.
for fail_on in regression change; do
  expect_status "same, --fail-on $fail_on" 0 "$KBENCH" compare base same --store "$STORE" --fail-on "$fail_on"
  expect_status "regressed, --fail-on $fail_on" 3 "$KBENCH" compare base regressed --store "$STORE" --fail-on "$fail_on"
done
expect_status "improved, --fail-on regression" 0 "$KBENCH" compare base improved --store "$STORE" --fail-on regression
expect_status "improved, --fail-on change" 3 "$KBENCH" compare base improved --store "$STORE" --fail-on change
# Without the flag marks never change the status.
expect_status "regressed, no gate" 0 "$KBENCH" compare base regressed --store "$STORE"
# Several test profiles: any column counts.
expect_status "same+improved, regression" 0 "$KBENCH" compare base same improved --store "$STORE" --fail-on regression
expect_status "same+improved, change" 3 "$KBENCH" compare base same improved --store "$STORE" --fail-on change
expect_status "improved+regressed, regression" 3 \
  "$KBENCH" compare base improved regressed --store "$STORE" --fail-on regression
# Scenarios: each its own comparison, any of them counts.
expect_status "scenarios without a regression" 0 "$KBENCH" compare --format delta --store "$STORE" \
  --scenario a=base:same --scenario b=base:improved --fail-on regression
expect_status "scenarios with a regression" 3 "$KBENCH" compare --format delta --store "$STORE" \
  --scenario a=base:same --scenario b=base:regressed --fail-on regression

# The output is the same with and without the flag, in every format, on
# stdout and stderr, also when the gate trips. The html page shows the
# command line as typed, so that one line differs: it is left out.
for format in grid markdown delta mail csv json html; do
  for fail_on in regression change; do
    "$KBENCH" compare base same regressed improved --store "$STORE" --format "$format" \
      >"$WORK/plain.out" 2>"$WORK/plain.err"
    "$KBENCH" compare base same regressed improved --store "$STORE" --format "$format" --fail-on "$fail_on" \
      >"$WORK/gated.out" 2>"$WORK/gated.err"
    status=$?
    [ "$status" -eq 3 ] && pass || fail "$format, --fail-on $fail_on: exit status $status, expected 3"
    if [ "$format" = html ]; then
      grep -v '<pre><code>kbench compare' "$WORK/plain.out" >"$WORK/plain.cmp"
      grep -v '<pre><code>kbench compare' "$WORK/gated.out" >"$WORK/gated.cmp"
      [ "$(grep -c '<pre><code>kbench compare' "$WORK/gated.out")" -eq 1 ] && pass \
        || fail "html: the command line is not on one line of its own"
    else
      cp "$WORK/plain.out" "$WORK/plain.cmp"
      cp "$WORK/gated.out" "$WORK/gated.cmp"
    fi
    [ -s "$WORK/plain.cmp" ] && pass || fail "$format: no output"
    cmp -s "$WORK/plain.cmp" "$WORK/gated.cmp" && pass \
      || { fail "$format, --fail-on $fail_on: stdout differs"; diff "$WORK/plain.cmp" "$WORK/gated.cmp" | head >&2; }
    cmp -s "$WORK/plain.err" "$WORK/gated.err" && pass || fail "$format, --fail-on $fail_on: stderr differs"
  done
done

# Bad input: one line, exit 2, nothing printed (not even the table).
expect_bad_input "--fail-on bogus" "$KBENCH" compare base regressed --store "$STORE" --fail-on bogus
expect_contains "$WORK/err" "--fail-on bogus: expected regression or change"
expect_bad_input "--fail-on ''" "$KBENCH" compare base regressed --store "$STORE" --fail-on ''
expect_bad_input "--fail-on Regression" "$KBENCH" compare base regressed --store "$STORE" --fail-on Regression
# A failure is 1, also when the gate would have tripped: the table was not printed.
"$KBENCH" compare base regressed --store "$STORE" --fail-on regression >/dev/full 2>"$WORK/full.err"
status=$?
[ "$status" -eq 1 ] && pass || fail "output to /dev/full with a tripped gate: exit status $status, expected 1"
expect_contains "$WORK/full.err" "cannot write to standard output"

# --help documents the statuses and the CI use.
"$KBENCH" compare --help >"$WORK/help.txt" 2>&1
expect_contains "$WORK/help.txt" "--fail-on"
expect_contains "$WORK/help.txt" "3 --fail-on's gate tripped"
expect_contains "$WORK/help.txt" "--fail-on regression > report.md || status=\$?"

finish

#!/usr/bin/env bash
# compare --format delta --scenario LABEL=BASE:TEST (the seed-003 shape) on a
# store-fixture store of the gcc/clang x spectre_v2 matrix: golden files pin
# every byte (KBENCH_UPDATE_GOLDEN=1 rewrites them), one row per scenario with
# its own compare's mark; bad --scenario values are bad input.
source "$(dirname "$0")/lib.bash"
: "${KBENCH_SOURCE_DIR:?the source tree, for tests/golden}"
GOLDEN="$KBENCH_SOURCE_DIR/tests/golden"

# Five boots a profile of ctxsw/pipe-threads, switch in ticks and in ns.
# gcc-spectre_v2 is 27.7% slower than gcc (planted regression); clang-spectre_v2
# is 1% slower than clang (inside --min-change 2: unchanged, no mark).
/usr/bin/python3 - "$WORK/spec.json" <<'EOF'
import json, sys
ticks = {"gcc": 4210.0, "gcc-spectre_v2": 4210.0 * 1.277, "clang": 4185.0, "clang-spectre_v2": 4185.0 * 1.01}
sessions = []
for boot in range(5):
    for profile in ("gcc", "gcc-spectre_v2", "clang", "clang-spectre_v2"):
        t = [ticks[profile] + boot * 3.0 + r * 1.5 for r in range(5)]
        sessions.append({"swprofile": profile, "benchmarks": [
            {"name": "ctxsw/pipe-threads", "params": {"loops": "100000"}, "results": [
                {"class": "switch", "unit": "ticks", "better": "lower", "values": t},
                {"class": "switch", "unit": "ns", "better": "lower", "values": [v / 2.5 for v in t]}]}]})
json.dump({"sut": "seed-003-qemu", "sessions": sessions}, open(sys.argv[1], "w"))
EOF
fixture_store "$WORK/spec.json"

# expect_golden NAME FILE: FILE is byte for byte tests/golden/NAME.
expect_golden() {
  if [ -n "${KBENCH_UPDATE_GOLDEN:-}" ]; then cp "$2" "$GOLDEN/$1"; pass; return; fi
  if cmp -s "$GOLDEN/$1" "$2"; then pass; else
    fail "$2 differs from golden $1 (KBENCH_UPDATE_GOLDEN=1 rewrites it)"; diff "$GOLDEN/$1" "$2" >&2; fi
}

scenarios=(--scenario gcc=gcc:gcc-spectre_v2 --scenario clang=clang:clang-spectre_v2)
"$KBENCH" compare --format delta --store "$STORE" --resultclass 'switch (ticks)' "${scenarios[@]}" \
  >"$WORK/one.txt" 2>"$WORK/one.err"
status=$?
[ "$status" -eq 0 ] && pass || fail "compare --scenario exited $status: $(cat "$WORK/one.err")"
[ ! -s "$WORK/one.err" ] && pass || fail "stderr not empty: $(cat "$WORK/one.err")"
expect_golden scenario-delta-ctxsw.txt "$WORK/one.txt"
# The seed's header and one row per scenario, with compare's own marks.
expect_contains "$WORK/one.txt" "| test scenario | old "
grep -qE '^\| gcc +\| 4219\.00 +\| 5385\.17 +\| 1166\.17 \(\+27\.6%\) \(R\)' "$WORK/one.txt" && pass \
  || fail "the gcc row is not old 4219.00, new 5385.17, +27.6% (R): $(grep '^| gcc ' "$WORK/one.txt")"
grep -E '^\| clang ' "$WORK/one.txt" | grep -qvF '(R)' && pass || fail "the clang row (1%) is marked"
# The marks are compare's own: the same as `kbench compare BASE TEST`.
"$KBENCH" compare gcc gcc-spectre_v2 --format delta --store "$STORE" --resultclass 'switch (ticks)' >"$WORK/pair.txt"
expect_contains "$WORK/pair.txt" "1166.17 (+27.6%) (R)"

# Both classes: one table per row, the row's name above it.
"$KBENCH" compare --format delta --store "$STORE" "${scenarios[@]}" >"$WORK/two.txt" 2>"$WORK/two.err"
status=$?
[ "$status" -eq 0 ] && pass || fail "compare --scenario (two rows) exited $status: $(cat "$WORK/two.err")"
expect_golden scenario-delta-ctxsw-two-rows.txt "$WORK/two.txt"
[ "$(grep -c '^| test scenario ' "$WORK/two.txt")" -eq 2 ] && pass || fail "expected two tables"
expect_contains "$WORK/two.txt" "ctxsw/pipe-threads switch (ns):"
expect_contains "$WORK/two.txt" "ctxsw/pipe-threads switch (ticks):"

# Bad input: one line, exit 2, nothing printed.
expect_bad_input "--scenario without '='" "$KBENCH" compare --format delta --store "$STORE" --scenario gcc:clang
expect_contains "$WORK/err" "expected LABEL=BASE:TEST"
expect_bad_input "--scenario without ':'" "$KBENCH" compare --format delta --store "$STORE" --scenario x=gcc
expect_bad_input "--scenario with an empty side" "$KBENCH" compare --format delta --store "$STORE" --scenario x=gcc:
expect_bad_input "--scenario with three profiles" "$KBENCH" compare --format delta --store "$STORE" \
  --scenario x=gcc:clang:gcc-spectre_v2
expect_bad_input "--scenario label twice" "$KBENCH" compare --format delta --store "$STORE" \
  --scenario x=gcc:clang --scenario x=clang:gcc
expect_contains "$WORK/err" "given twice"
expect_bad_input "--scenario with grid" "$KBENCH" compare --store "$STORE" --scenario x=gcc:clang
expect_contains "$WORK/err" "only with --format delta"
expect_bad_input "--scenario and BASE TEST" "$KBENCH" compare gcc clang --format delta --store "$STORE" \
  --scenario x=gcc:clang
expect_bad_input "--scenario of a missing swprofile" "$KBENCH" compare --format delta --store "$STORE" \
  --scenario x=gcc:icc
expect_contains "$WORK/err" "icc"
expect_bad_input "no profiles, no scenario" "$KBENCH" compare --format delta --store "$STORE"

finish

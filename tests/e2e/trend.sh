#!/usr/bin/env bash
# kbench trend on a store written by store-fixture: ten kernels, a 10 % step
# planted at 6.13-rc1 in one row and none in another; the text marks exactly
# the planted change point, in kernel-version order although the store holds
# the kernels newest first; bad input is one line, exit 2.
source "$(dirname "$0")/lib.bash"
: "${STORE_FIXTURE:?path to the store-fixture program}"
unset KBENCH_STORE
S="$WORK/trend.db"

# Newest first, so store order is not version order.
kernels="v6.15 6.14 6.13 6.13-rc1 6.12 6.12-rc2 6.11 6.11-rc3 6.11-rc1 6.10"
{
  echo '{"sut": "vm", "sessions": ['
  k=0; first=1
  for kernel in $kernels base; do
    step=1.0
    case $kernel in v6.15|6.14|6.13|6.13-rc1) step=1.10 ;; esac
    for s in 0 1 2; do
      # A small deterministic wobble per kernel, session and repeat (no RNG:
      # the same store on every machine).
      values=$(awk -v k="$k" -v s="$s" -v step="$step" 'BEGIN {
        level = 100 * step * (1 + 0.004 * sin(k * 2.1)) * (1 + 0.003 * sin(k * 5.3 + s * 1.7));
        out = ""; for (r = 0; r < 5; r++) out = out (r ? ", " : "") sprintf("%.6f", level * (1 + 0.002 * sin(r * 3.9 + s + k)));
        print out }')
      flat=$(awk -v k="$k" -v s="$s" 'BEGIN {
        out = ""; for (r = 0; r < 5; r++) out = out (r ? ", " : "") sprintf("%.6f", 250 * (1 + 0.005 * sin(k * 1.3 + s * 2.9 + r)));
        print out }')
      [ $first = 1 ] || echo ','
      first=0
      printf '{"swprofile": "%s", "benchmarks": [{"name": "syscall/getpid", "results": [' "$kernel"
      printf '{"class": "mean", "unit": "ns", "better": "lower", "values": [%s]},' "$values"
      printf '{"class": "p99", "unit": "ns", "better": "lower", "values": [%s]}]}]}' "$flat"
    done
    k=$((k + 1))
  done
  echo ']}'
} >"$WORK/spec.json"
"$STORE_FIXTURE" "$S" "$WORK/spec.json" || fail "store-fixture failed"

"$KBENCH" trend --swprofile '[6v]*' --benchmark syscall/getpid --store "sqlite://$S" >"$WORK/out" 2>"$WORK/err" \
  || fail "trend failed: $(cat "$WORK/err")"
cat "$WORK/out"
expect_contains "$WORK/out" "Trend of syscall/getpid mean (ns) on SUT vm (lower is better):"
expect_contains "$WORK/out" "Order: 10 swprofiles by kernel version"
# The one change point, where it was planted, and no other in that row.
expect_contains "$WORK/out" "Change points: 1 (6.10..6.12 -> 6.13-rc1..v6.15)."
expect_contains "$WORK/out" "| 6.13-rc1    |          3 | 109.94 |"
[ "$(grep -c 'change point: (R) -' "$WORK/out")" -eq 1 ] && pass || fail "expected exactly one change point marked (R)"
# Version order: the release candidates before their release.
order=$(awk -F'|' '/^\| [6v]/ && !seen[$2]++ { gsub(/ /, "", $2); printf "%s ", $2 }' "$WORK/out")
[ "$order" = "6.10 6.11-rc1 6.11-rc3 6.11 6.12-rc2 6.12 6.13-rc1 6.13 6.14 v6.15 " ] && pass \
  || fail "version order: '$order'"
# The flat row: no change point.
expect_contains "$WORK/out" "Trend of syscall/getpid p99 (ns) on SUT vm (lower is better):"
[ "$(grep -c '^Change points: none.' "$WORK/out")" -eq 1 ] && pass || fail "expected the p99 row to have no change point"
# The step table, seed style.
expect_contains "$WORK/out" "Steps at the change points, SUT vm:"
grep -E '^\| syscall/getpid +\| mean \(ns\) +\| 6\.10\.\.6\.12 -> 6\.13-rc1\.\.v6\.15 +\| +10[0-9]\.[0-9]+ \| +\(R\) -(9|10|11)\.[0-9]+%' \
  "$WORK/out" >/dev/null && pass || fail "the step table lacks the planted step"

# The page: one plot and section per row, the step table's one row at the planted place.
"$KBENCH" trend --swprofile '[6v]*' --benchmark syscall/getpid --format html --store "sqlite://$S" >"$WORK/trend.html" \
  2>"$WORK/err" || fail "trend --format html failed: $(cat "$WORK/err")"
expect_contains "$WORK/trend.html" '<div id="trend-plot-0" class="plot trend-plot"></div>'
expect_contains "$WORK/trend.html" '<div id="trend-plot-1" class="plot trend-plot"></div>'
expect_contains "$WORK/trend.html" '<tr class="trend-step" data-at="6.13-rc1" data-verdict="R">'
[ "$(grep -c 'class="trend-step"' "$WORK/trend.html")" -eq 1 ] && pass || fail "expected one step row in the page"
expect_contains "$WORK/trend.html" '"changepoints":[{"after":"6.13-rc1..v6.15","at":"6.13-rc1","before":"6.10..6.12"'

# Store order: the store holds the kernels newest first, so the step is an improvement there.
"$KBENCH" trend --swprofile '[6v]*' --resultclass 'mean*' --order store --store "sqlite://$S" >"$WORK/store" 2>&1 \
  || fail "trend --order store failed"
expect_contains "$WORK/store" "Order: 10 swprofiles by store order (first session)."
expect_contains "$WORK/store" "Change points: 1 (v6.15..6.13-rc1 -> 6.12..6.10)."
expect_contains "$WORK/store" "change point: (I) "

# A name that is no version: store order, said.
"$KBENCH" trend --swprofile '*' --resultclass 'mean*' --store "sqlite://$S" >"$WORK/mixed" 2>&1 || fail "trend '*' failed"
expect_contains "$WORK/mixed" "--order version: 'base' is not a kernel version (such as 6.12.0-rc3 or v6.13): ordered by store order (first session) instead."

# Names that read as one number are still two: SUTs node1 and node01, and on
# node1 the parameter sets calls=10 and calls=010. Three rows, each with its
# own two sessions a kernel.
{
  echo '{"sut": "node1", "sessions": ['
  first=1
  for kernel in 6.10 6.11 6.12; do
    for sut in node1 node01; do
      for s in 0 1; do
        [ $first = 1 ] || echo ','
        first=0
        printf '{"swprofile": "%s", "sut": "%s", "benchmarks": [' "$kernel" "$sut"
        printf '{"name": "syscall/getpid", "params": {"calls": "10"}, "results": [{"class": "mean", "values": [%s, %s]}]}' \
          "$([ $sut = node1 ] && echo 100 || echo 200)" "$([ $sut = node1 ] && echo 101 || echo 201)"
        [ $sut = node1 ] && printf ', {"name": "syscall/getpid", "params": {"calls": "010"}, "results": [{"class": "mean", "values": [300, 301]}]}'
        printf ']}'
      done
    done
  done
  echo ']}'
} >"$WORK/names.json"
"$STORE_FIXTURE" "$WORK/names.db" "$WORK/names.json" || fail "store-fixture failed on names.json"
"$KBENCH" trend --swprofile '6*' --store "sqlite://$WORK/names.db" >"$WORK/names" 2>&1 || fail "trend of names.db failed"
expect_contains "$WORK/names" "Trend of syscall/getpid [calls=10] mean (ns) on SUT node01 (lower is better):"
expect_contains "$WORK/names" "Trend of syscall/getpid [calls=010] mean (ns) on SUT node1 (lower is better):"
expect_contains "$WORK/names" "Trend of syscall/getpid [calls=10] mean (ns) on SUT node1 (lower is better):"
[ "$(grep -c '^Trend of' "$WORK/names")" -eq 3 ] && pass || fail "expected 3 rows: $(grep '^Trend of' "$WORK/names")"
# Every point of every row: 2 sessions at its own level (pooled, a point has 4 or 6).
[ "$(grep -cE '^\| 6\.1[012] +\| +2 \| +(100|200|300)\.50 \|' "$WORK/names")" -eq 9 ] && pass \
  || fail "expected 9 points of 2 sessions each: $(grep -E '^\| 6\.' "$WORK/names")"

# Bad input: one line, exit 2, nothing on stdout.
expect_bad_input "trend: no swprofile matches" "$KBENCH" trend --swprofile 'nosuch*' --store "sqlite://$S"
expect_bad_input "trend: bad --order" "$KBENCH" trend --swprofile '6*' --order time --store "sqlite://$S"
expect_bad_input "trend: bad --format" "$KBENCH" trend --swprofile '6*' --format pdf --store "sqlite://$S"
expect_bad_input "trend: bad --min-segment" "$KBENCH" trend --swprofile '6*' --min-segment 0 --store "sqlite://$S"
expect_bad_input "trend: no rows" "$KBENCH" trend --swprofile '6*' --benchmark 'nosuch/*' --store "sqlite://$S"
expect_bad_input "trend: missing --swprofile" "$KBENCH" trend --store "sqlite://$S"
expect_bad_input "trend: missing store" "$KBENCH" trend --swprofile '6*' --store "sqlite://$WORK/missing.db"
[ ! -e "$WORK/missing.db" ] && pass || fail "trend created a missing store"
"$KBENCH" trend --help >"$WORK/help" 2>&1 || fail "trend --help failed"
expect_contains "$WORK/help" "Examples:"
finish

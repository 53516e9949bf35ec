#!/usr/bin/env bash
# Where the kernel time went, on a store with planted kernel profiles
# (store-fixture): `kbench compare` lists, under a table, the functions that
# gained the most share for a regression row and lost the most for an
# improvement, only for marked rows whose benchmark both sides profiled on
# the table's SUT; a side whose profile was unavailable gets one line.
# `kbench profile` suggests timing the function that gained the most share,
# by its bare name, not the one whose share changed most.
source "$(dirname "$0")/lib.bash"

# Five boots a swprofile on SUT vm. syscall/getpid (lower is better) and
# syscall/getppid: "regressed", "blind" and "thin" 20% slower, "improved" 20%
# faster, "same" the base's values; perf/syscall is the same everywhere.
# getpid's profile per session: on "regressed" pid_helper [pidmod] gains the
# most share, __task_pid_nr_ns and audit_filter less, while entry_SYSCALL_64
# loses more than any gains; on "improved" __task_pid_nr_ns and pid_helper
# lose 5 points each, entry_SYSCALL_64 gains; "blind"'s profile was
# unavailable; "thin"'s has 12 samples a session. getppid has no profile
# anywhere. At the end SUT other gets
# base and regressed sessions, where other_fn gains.
/usr/bin/python3 - "$WORK/spec.json" "$WORK/other.json" <<'EOF'
import json, sys
factor = {"base": 1.0, "same": 1.0, "regressed": 1.2, "improved": 0.8, "blind": 1.2, "thin": 1.2}
getpid_profile = {
    "base": {"functions": {"entry_SYSCALL_64": 600, "__task_pid_nr_ns": 100, "do_syscall_64": 200,
                           "pid_helper [pidmod]": 100}},
    "regressed": {"functions": {"entry_SYSCALL_64": 500, "__task_pid_nr_ns": 200, "do_syscall_64": 150,
                                "pid_helper [pidmod]": 250, "audit_filter": 50}},
    "improved": {"functions": {"entry_SYSCALL_64": 700, "__task_pid_nr_ns": 50, "do_syscall_64": 200,
                               "pid_helper [pidmod]": 50}},
    "blind": {"unavailable": "perf_event_open refused (Permission denied)"},
    "thin": {"functions": {"entry_SYSCALL_64": 8, "pid_helper [pidmod]": 4}},
}
getpid_profile["same"] = getpid_profile["base"]
other_profile = {"base": {"functions": {"entry_SYSCALL_64": 900, "other_fn": 100}},
                 "regressed": {"functions": {"entry_SYSCALL_64": 700, "other_fn": 300}}}
syscall_profile = {"functions": {"entry_SYSCALL_64": 10, "do_syscall_64": 10}}
sessions = []
def session(sut, profile, boot, kernel):
    getpid = [(100 + boot * 0.3 + r * 0.1) * factor[profile] for r in range(5)]
    basic = [4.0e6 + boot * 1.0e3 + r * 2.0e2 for r in range(5)]
    return {"swprofile": profile, "sut": sut, "benchmarks": [
        {"name": "syscall/getpid", "results": [{"class": "mean", "unit": "ns", "better": "lower", "values": getpid}],
         "kernel_profile": kernel[profile]},
        {"name": "syscall/getppid", "results": [{"class": "mean", "unit": "ns", "better": "lower",
                                                 "values": getpid}]},
        {"name": "perf/syscall", "results": [{"class": "basic", "unit": "ops/sec", "better": "higher",
                                              "values": basic}], "kernel_profile": syscall_profile}]}
for profile in ("base", "same", "regressed", "improved", "blind", "thin"):
    for boot in range(5):
        sessions.append(session("vm", profile, boot, getpid_profile))
json.dump({"sut": "vm", "sessions": sessions}, open(sys.argv[1], "w"))
# Added to the store later, for the check of each SUT's own profiles.
json.dump({"sessions": [session("other", profile, boot, other_profile)
                        for profile in ("base", "regressed") for boot in range(5)]}, open(sys.argv[2], "w"))
EOF
fixture_store "$WORK/spec.json"

# compare_to NAME ARGS...: kbench compare ARGS into $WORK/NAME, failing the script's check when it fails.
compare_to() {
  local name=$1; shift
  "$KBENCH" compare "$@" --store "$STORE" >"$WORK/$name" 2>"$WORK/$name.err" \
    || fail "kbench compare $* exited $?: $(cat "$WORK/$name.err")"
}

# expect_block FILE: the lines on stdin stand in FILE one after the other.
expect_block() {
  local block
  block=$(cat)
  if /usr/bin/python3 -c 'import sys; sys.exit(sys.argv[2] + "\n" not in open(sys.argv[1]).read())' "$1" "$block"; then
    pass
  else
    fail "$1 lacks the block:"; echo "$block" >&2; echo "--- $1:" >&2; cat "$1" >&2
  fi
}
# expect_absent FILE TEXT: the file does not contain the literal text.
expect_absent() {
  if grep -qF -- "$2" "$1"; then fail "$1 holds '$2'"; cat "$1" >&2; else pass; fi
}

# A regression: the functions that gained share, the most first (not the
# one that changed most, which lost share), and the bare name to time.
compare_to regressed.txt base regressed
expect_contains "$WORK/regressed.txt" "(R) -20.00%"
expect_block "$WORK/regressed.txt" <<'EOF'
Where the kernel time went (kernel profiles: each function's share of a side's kernel samples):
  syscall/getpid (R) in regressed: the functions that gained the most share (base: 5 sessions, 5000 kernel samples; regressed: 5 sessions, 5750 kernel samples)
    pid_helper [pidmod]  10.0% → 21.7%  (500 → 1250 samples)
    __task_pid_nr_ns     10.0% → 17.4%  (500 → 1000 samples)
    audit_filter          0.0% →  4.3%  (0 → 250 samples)
    time it: kbench run --swprofile base|regressed --benchmark kfunc/pid_helper --param workload=getpid, then kbench compare base regressed --benchmark kfunc/pid_helper

EOF
# getppid regressed too, but without profiles; perf/syscall has profiles but did not change.
expect_absent "$WORK/regressed.txt" "syscall/getppid (R) in"
expect_absent "$WORK/regressed.txt" "perf/syscall (R)"
expect_absent "$WORK/regressed.txt" "other_fn"

# An improvement: the functions that lost share; do_syscall_64's share did not move.
compare_to improved.txt base improved
expect_block "$WORK/improved.txt" <<'EOF'
  syscall/getpid (I) in improved: the functions that lost the most share (base: 5 sessions, 5000 kernel samples; improved: 5 sessions, 5000 kernel samples)
    __task_pid_nr_ns     10.0% → 5.0%  (500 → 250 samples)
    pid_helper [pidmod]  10.0% → 5.0%  (500 → 250 samples)
    time it: kbench run --swprofile base|improved --benchmark kfunc/__task_pid_nr_ns --param workload=getpid, then kbench compare base improved --benchmark kfunc/__task_pid_nr_ns
EOF
expect_absent "$WORK/improved.txt" "do_syscall_64"

# A side with fewer than 100 kernel samples: its shares are rough, and one
# line says so; thick sides say nothing.
compare_to thin.txt base thin
expect_block "$WORK/thin.txt" <<'EOF'
  syscall/getpid (R) in thin: the functions that gained the most share (base: 5 sessions, 5000 kernel samples; thin: 5 sessions, 60 kernel samples)
    The shares rest on 5000 and 60 kernel samples and are rough (fewer than 100 on a side)
EOF
expect_absent "$WORK/regressed.txt" "rough"
"$KBENCH" profile base thin --benchmark syscall/getpid --store "$STORE" >"$WORK/profile-thin.txt" 2>&1 \
  || fail "kbench profile base thin exited $?: $(cat "$WORK/profile-thin.txt")"
expect_block "$WORK/profile-thin.txt" <<'EOF'
thin: 5 sessions, 60 kernel samples
The shares rest on 5000 and 60 kernel samples and are rough (fewer than 100 on a side)
EOF

# Unchanged rows with profiles on both sides: no section.
compare_to same.txt base same
expect_absent "$WORK/same.txt" "Where the kernel time went"
# A regressed row whose test side's profile was unavailable: one line.
compare_to blind.txt base blind
expect_block "$WORK/blind.txt" <<'EOF'
  syscall/getpid (R) in blind: profile unavailable: blind: perf_event_open refused (Permission denied)
EOF
expect_absent "$WORK/blind.txt" "time it"
# Rows without profiles: no section.
compare_to unprofiled.txt base regressed --benchmark syscall/getppid
expect_absent "$WORK/unprofiled.txt" "Where the kernel time went"

# Several test columns: a block per marked cell, in column order.
compare_to columns.txt base improved regressed
python3 -c '
import sys
text = open(sys.argv[1]).read()
first, second = text.find("syscall/getpid (I) in improved"), text.find("syscall/getpid (R) in regressed")
sys.exit(not 0 <= first < second)' "$WORK/columns.txt" && pass || fail "columns: the blocks are not in column order: $(cat "$WORK/columns.txt")"

# markdown: a list, names and commands as code.
compare_to regressed.md base regressed --format markdown
expect_block "$WORK/regressed.md" <<'EOF'
`syscall/getpid` (R) in regressed: the functions that gained the most share (base: 5 sessions, 5000 kernel samples; regressed: 5 sessions, 5750 kernel samples)
- `pid_helper [pidmod]`  10.0% → 21.7%  (500 → 1250 samples)
- `__task_pid_nr_ns`     10.0% → 17.4%  (500 → 1000 samples)
- `audit_filter`          0.0% →  4.3%  (0 → 250 samples)
- time it: `kbench run --swprofile base|regressed --benchmark kfunc/pid_helper --param workload=getpid`, then `kbench compare base regressed --benchmark kfunc/pid_helper`
EOF
compare_to regressed.mail base regressed --format mail
# (mail wraps its lines at 80 columns)
expect_block "$WORK/regressed.mail" <<'EOF'
    time it: kbench run --swprofile base|regressed --benchmark kfunc/pid_helper
      --param workload=getpid, then kbench compare base regressed --benchmark
      kfunc/pid_helper
EOF
compare_to regressed.delta base regressed --format delta
expect_contains "$WORK/regressed.delta" '- time it: `kbench run --swprofile base|regressed --benchmark kfunc/pid_helper --param workload=getpid`, then `kbench compare base regressed --benchmark kfunc/pid_helper`'

# json: the same as data.
compare_to regressed.json base regressed --format json
python3 - "$WORK/regressed.json" <<'EOF' && pass || fail "json kernel_time: $(cat "$WORK/regressed.json.check")"
import json, sys
tables = json.load(open(sys.argv[1]))["tables"]
shifts = tables[0]["kernel_time"]
problems = []
if len(shifts) != 1: problems.append(f"{len(shifts)} entries, expected 1")
shift = shifts[0]
expected = {"benchmark": "syscall/getpid", "test_profile": "regressed", "verdict": "regression", "share": "gained",
            "base_sessions": 5, "test_sessions": 5, "base_samples": 5000, "test_samples": 5750, "unavailable": None,
            "kfunc_commands": ["kbench run --swprofile base --benchmark kfunc/pid_helper --param workload=getpid",
                               "kbench run --swprofile regressed --benchmark kfunc/pid_helper --param workload=getpid",
                               "kbench compare base regressed --benchmark kfunc/pid_helper"]}
for key, value in expected.items():
    if shift.get(key) != value: problems.append(f"{key}: {shift.get(key)!r}, expected {value!r}")
names = [f["function"] for f in shift["functions"]]
if names != ["pid_helper [pidmod]", "__task_pid_nr_ns", "audit_filter"]: problems.append(f"functions {names}")
first = shift["functions"][0]
if (first["base_samples"], first["test_samples"], first["base_share"]) != (500, 1250, 0.1):
    problems.append(f"first function {first}")
open(sys.argv[1] + ".check", "w").write("; ".join(problems))
sys.exit(bool(problems))
EOF
compare_to same.json base same --format json
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["tables"][0]["kernel_time"] != [])' "$WORK/same.json" \
  && pass || fail "json of unchanged rows has kernel_time entries"
# html (the page kbench serve's compare shows too): paragraphs and lists, escaped.
compare_to regressed.html base regressed --format html
expect_block "$WORK/regressed.html" <<'EOF'
<div class="kernel-time">
<p>Where the kernel time went (kernel profiles: each function&#39;s share of a side&#39;s kernel samples):</p>
<p>syscall/getpid (R) in regressed: the functions that gained the most share (base: 5 sessions, 5000 kernel samples; regressed: 5 sessions, 5750 kernel samples)</p>
<ul>
<li>pid_helper [pidmod]  10.0% → 21.7%  (500 → 1250 samples)</li>
EOF
expect_contains "$WORK/regressed.html" \
  "<li>time it: kbench run --swprofile base|regressed --benchmark kfunc/pid_helper --param workload=getpid, then kbench compare base regressed --benchmark kfunc/pid_helper</li>"
compare_to same.html base same --format html
expect_absent "$WORK/same.html" "kernel-time"
# csv cannot show it: the same columns as ever.
compare_to regressed.csv base regressed --format csv
expect_absent "$WORK/regressed.csv" "pid_helper"

# kbench profile: the function that gained most, not entry_SYSCALL_64
# (the largest change, a loss), timed by its bare name.
"$KBENCH" profile base regressed --benchmark syscall/getpid --store "$STORE" >"$WORK/profile.txt" 2>&1 \
  || fail "kbench profile exited $?: $(cat "$WORK/profile.txt")"
sed -n 6p "$WORK/profile.txt" | grep -q '^entry_SYSCALL_64 ' && pass \
  || fail "the first row is not entry_SYSCALL_64: $(cat "$WORK/profile.txt")"
expect_block "$WORK/profile.txt" <<'EOF'
Gained the most share: pid_helper [pidmod] (+11.7pp). Time it on both swprofiles, then compare:
  kbench run --swprofile base --benchmark kfunc/pid_helper --param workload=getpid
  kbench run --swprofile regressed --benchmark kfunc/pid_helper --param workload=getpid
  kbench compare base regressed --benchmark kfunc/pid_helper
EOF
expect_absent "$WORK/profile.txt" "rough"
expect_absent "$WORK/profile.txt" "kfunc/entry_SYSCALL_64"
"$KBENCH" profile base same --benchmark syscall/getpid --store "$STORE" >"$WORK/profile-same.txt" 2>&1 \
  || fail "kbench profile base same exited $?: $(cat "$WORK/profile-same.txt")"
expect_contains "$WORK/profile-same.txt" "No function gained share from base to same: none to time."
expect_absent "$WORK/profile-same.txt" "kfunc/"
# Each SUT's table uses its own sessions' profiles (store-fixture adds SUT other's
# sessions to the store).
fixture_store "$WORK/other.json"
compare_to suts.txt base regressed
expect_contains "$WORK/suts.txt" "    other_fn  10.0% → 30.0%  (500 → 1500 samples)"
expect_contains "$WORK/suts.txt" "    pid_helper [pidmod]  10.0% → 21.7%  (500 → 1250 samples)"
[ "$(grep -c 'other_fn' "$WORK/suts.txt")" -eq 2 ] && pass || fail "suts: other_fn in vm's block: $(cat "$WORK/suts.txt")"
[ "$(grep -c 'time it: ' "$WORK/suts.txt")" -eq 2 ] && pass || fail "suts: expected a block per SUT: $(cat "$WORK/suts.txt")"
# kbench profile sums one SUT's profiles: with two, it names them and asks for --sut.
expect_bad_input "profile of two SUTs" "$KBENCH" profile base regressed --benchmark syscall/getpid --store "$STORE"
expect_contains "$WORK/err" \
  "--benchmark syscall/getpid: the kernel profiles of base and regressed come from 2 SUTs (other, vm); choose one with --sut"
for sut in vm other; do
  "$KBENCH" profile base regressed --benchmark syscall/getpid --sut "$sut" --store "$STORE" >"$WORK/profile-$sut.txt" 2>&1 \
    || fail "kbench profile --sut $sut exited $?: $(cat "$WORK/profile-$sut.txt")"
done
expect_contains "$WORK/profile-vm.txt" "base: 5 sessions, 5000 kernel samples"
expect_contains "$WORK/profile-vm.txt" "--benchmark kfunc/pid_helper"
expect_absent "$WORK/profile-vm.txt" "other_fn"
expect_contains "$WORK/profile-other.txt" "--benchmark kfunc/other_fn"
expect_absent "$WORK/profile-other.txt" "pid_helper"
expect_bad_input "profile --sut matching none" "$KBENCH" profile base regressed --benchmark syscall/getpid \
  --sut 'lab-*' --store "$STORE"
expect_contains "$WORK/err" \
  "--sut lab-*: swprofile 'base' has no kernel profile of syscall/getpid on a matching SUT (its profiles are from other, vm)"

# When the table has the listed functions timed by kfunc/ under the profiled
# benchmark's workload, each function's line carries its own time's change
# and verdict, and the "time it" line is not needed. A timing under another
# workload (the ping-pong, which getpid's path is not) is not joined.
/usr/bin/python3 - "$WORK/timed.json" <<'EOF2'
import json, sys
profile = {"base": {"entry_SYSCALL_64": 600, "__task_pid_nr_ns": 100, "pid_helper [pidmod]": 100},
           "regressed": {"entry_SYSCALL_64": 500, "__task_pid_nr_ns": 200, "pid_helper [pidmod]": 250}}
factor = {"base": 1.0, "regressed": 1.2}
def session(name, boot):
    getpid = [(100 + boot * 0.3 + r * 0.1) * factor[name] for r in range(5)]
    helper = [(40 + boot * 0.2 + r * 0.1) * (1.5 if name == "regressed" else 1.0) for r in range(5)]
    pid_nr = [50 + boot * 0.2 + r * 0.1 for r in range(5)]
    timed = lambda values: [{"class": "time per call", "unit": "ns", "better": "lower", "values": values}]
    return {"swprofile": name, "benchmarks": [
        {"name": "syscall/getpid", "results": [{"class": "mean", "unit": "ns", "better": "lower", "values": getpid}],
         "kernel_profile": {"functions": profile[name]}},
        {"name": "kfunc/pid_helper", "params": {"workload": "getpid"}, "results": timed(helper)},
        {"name": "kfunc/__task_pid_nr_ns", "params": {"workload": "pingpong"}, "results": timed(pid_nr)}]}
json.dump({"sut": "vm", "sessions": [session(name, boot) for name in ("base", "regressed") for boot in range(5)]},
          open(sys.argv[1], "w"))
EOF2
"$STORE_FIXTURE" "$WORK/timed.db" "$WORK/timed.json" >"$WORK/timed-fixture.out" 2>&1 ||
  fail "store-fixture of the timed store exited $?: $(cat "$WORK/timed-fixture.out")"
"$KBENCH" compare base regressed --store "sqlite://$WORK/timed.db" >"$WORK/timed.txt" 2>&1 ||
  fail "kbench compare of the timed store exited $?: $(cat "$WORK/timed.txt")"
expect_contains "$WORK/timed.txt" "    pid_helper [pidmod]  12.5% → 26.3%  (500 → 1250 samples); its kfunc/ time per call +50."
grep -E '^    pid_helper .*time per call \+50\.[0-9]+% \(R\)$' "$WORK/timed.txt" >/dev/null && pass ||
  fail "pid_helper's timing is not marked (R): $(cat "$WORK/timed.txt")"
grep -E '^    __task_pid_nr_ns .*samples\)$' "$WORK/timed.txt" >/dev/null && pass ||
  fail "__task_pid_nr_ns's ping-pong timing was joined to getpid's profile: $(cat "$WORK/timed.txt")"
expect_absent "$WORK/timed.txt" "time it: "

finish

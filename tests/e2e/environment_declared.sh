#!/usr/bin/env bash
# A plan swprofile's declarations are stored with its sessions, and compare
# leaves what they declare out of the environment differences: a cmdline word
# the test profile declares is expected, one it does not declare is listed.
source "$(dirname "$0")/lib.bash"
export KBENCH_STATE_DIR="$WORK/state"
DB="$WORK/store.db"
# A word this boot has, so a local SUT accepts the requirement.
word=$(tr ' ' '\n' </proc/cmdline | grep -m1 -v '^$')
[ -n "$word" ] || skip "/proc/cmdline is empty"
cat >"$WORK/plan.yaml" <<YAML
swprofiles:
  - {name: base}
  - {name: declared, cmdline: ['$word']}
defaults: {benchmark: {warmups: 0, repeats: 3}}
benchmarks: [{name: syscall/getpid, params: {calls: "20000"}}]
YAML
"$KBENCH" plan exec "$WORK/plan.yaml" --store "sqlite://$DB" >"$WORK/exec.out" 2>"$WORK/exec.err" \
  || fail "plan exec exited $?: $(tail -3 "$WORK/exec.err")"
stored=$(sqlite3 "$DB" "SELECT json_extract(fingerprint, '\$.swprofile.cmdline[0]') FROM session s
                        JOIN swprofile p ON p.id = s.swprofile_id WHERE p.name = 'declared'")
[ "$stored" = "$word" ] && pass || fail "declared cmdline stored as '$stored', expected '$word'"

# As if base had booted without the word: declared, so not listed.
sqlite3 "$DB" "UPDATE session SET fingerprint = json_set(fingerprint, '\$.cmdline', 'kbench-base-only')
               WHERE swprofile_id = (SELECT id FROM swprofile WHERE name = 'base');
               UPDATE session SET fingerprint = json_set(fingerprint, '\$.cmdline', '$word')
               WHERE swprofile_id = (SELECT id FROM swprofile WHERE name = 'declared');" || fail "could not edit"
"$KBENCH" compare base declared --store "sqlite://$DB" >"$WORK/cmp" 2>"$WORK/err" || fail "compare exited $?: $(cat "$WORK/err")"
expect_contains "$WORK/cmp" "cmdline: only base has kbench-base-only"
grep -q "only declared has" "$WORK/cmp" && fail "the declared word is listed: $(grep cmdline "$WORK/cmp")" || pass
finish

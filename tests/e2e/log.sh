#!/usr/bin/env bash
# kbench log list|show on a store with stored logs (store-fixture writes them
# through ResultStore::add_log): one line per log, oldest first, --kind
# filters, show prints the text byte for byte; a store without logs lists
# none; bad ids are bad input; the store is never written.
source "$(dirname "$0")/lib.bash"

# The bisect log ends without a newline: show adds one, nothing else.
printf 'step 1: 1a2b3c4d5e6f good (p=0.0004)\n\tbuilt in 41 s\nfirst bad commit: 9f8e7d6c5b4a' >"$WORK/bisect.txt"
/usr/bin/python3 - "$WORK/spec.json" "$WORK/bisect.txt" <<'EOF'
import json, sys
text = open(sys.argv[2]).read()
json.dump({"sut": "vm", "sessions": [
    {"swprofile": "base", "benchmarks": [
        {"name": "syscall/getpid", "results": [{"class": "mean", "unit": "ns", "values": [100, 101]}]}]}],
    "logs": [{"kind": "bisect", "name": "v6.1..v6.2", "text": text},
             {"kind": "note", "name": "lab", "text": "one line\n"},
             {"kind": "bisect", "name": "a..b", "text": ""}]}, open(sys.argv[1], "w"))
EOF
fixture_store "$WORK/spec.json"
before=$(sha256sum <"$WORK/store.db")

"$KBENCH" log list --store "$STORE" >"$WORK/list.txt" 2>"$WORK/list.err" && pass || fail "log list exited $?"
cat "$WORK/list.txt"
[ "$(wc -l <"$WORK/list.txt")" -eq 4 ] && pass || fail "expected a header and 3 logs"
head -1 "$WORK/list.txt" | grep -qE '^ +id +kind +created +lines +name$' && pass || fail "header: $(head -1 "$WORK/list.txt")"
grep -qE '^ +1 +bisect +20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z +3 +v6\.1\.\.v6\.2$' "$WORK/list.txt" && pass \
  || fail "the first log's line"
grep -qE '^ +2 +note .* 1 +lab$' "$WORK/list.txt" && pass || fail "the second log's line"
grep -qE '^ +3 +bisect .* 0 +a\.\.b$' "$WORK/list.txt" && pass || fail "the third log's line"

"$KBENCH" log list --kind bisect --store "$STORE" >"$WORK/bisect-list.txt"
[ "$(tail -n +2 "$WORK/bisect-list.txt" | awk '{print $1}' | tr '\n' ' ')" = "1 3 " ] && pass \
  || fail "--kind bisect: $(cat "$WORK/bisect-list.txt")"
"$KBENCH" log list --kind none --store "$STORE" >"$WORK/none.txt"
[ "$(wc -l <"$WORK/none.txt")" -eq 1 ] && pass || fail "--kind none lists logs"

"$KBENCH" log show 1 --store "$STORE" >"$WORK/show.txt" && pass || fail "log show 1 exited $?"
{ cat "$WORK/bisect.txt"; echo; } | cmp -s - "$WORK/show.txt" && pass || fail "log show 1 is not the text + a newline"
"$KBENCH" log show 2 --store "$STORE" >"$WORK/show2.txt"
[ "$(cat "$WORK/show2.txt")" = "one line" ] && [ "$(wc -c <"$WORK/show2.txt")" -eq 9 ] && pass \
  || fail "log show 2 added or lost bytes"
"$KBENCH" log show 3 --store "$STORE" >"$WORK/show3.txt" && [ ! -s "$WORK/show3.txt" ] && pass \
  || fail "an empty log shows as nothing"

expect_bad_input "log show 4 (no such log)" "$KBENCH" log show 4 --store "$STORE"
expect_contains "$WORK/err" "no log with this id"
expect_bad_input "log show x" "$KBENCH" log show x --store "$STORE"
expect_bad_input "log show 0" "$KBENCH" log show 0 --store "$STORE"
expect_bad_input "log show on a missing store" "$KBENCH" log show 1 --store "sqlite://$WORK/missing.db"
[ ! -e "$WORK/missing.db" ] && pass || fail "a missing store was created"
[ "$(sha256sum <"$WORK/store.db")" = "$before" ] && pass || fail "reading logs changed the store"

# A version-4 store (before logs) reads as one without any, and is not migrated.
cp "$WORK/store.db" "$WORK/v4.db"
sqlite3 "$WORK/v4.db" "PRAGMA journal_mode = DELETE; DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; DROP TABLE log; UPDATE kbench_meta SET value = '4' WHERE key = 'schema_version'" >/dev/null
"$KBENCH" log list --store "sqlite://$WORK/v4.db" >"$WORK/v4.txt" && pass || fail "log list on a v4 store exited $?"
[ "$(wc -l <"$WORK/v4.txt")" -eq 1 ] && pass || fail "a v4 store lists logs"
[ "$(sqlite3 "$WORK/v4.db" "SELECT value FROM kbench_meta WHERE key = 'schema_version'")" = 4 ] && pass \
  || fail "log list migrated a v4 store"

"$KBENCH" log --help >"$WORK/help.txt" 2>&1
expect_contains "$WORK/help.txt" "kbench log show 3"
finish

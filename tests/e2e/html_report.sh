#!/usr/bin/env bash
# compare --format html on a store with a planted outlier boot
# (store-fixture): one self-contained page on stdout, exit 0, nothing else
# written; its data holds every session's samples, the outlier boot among
# them; bad input writes nothing.
source "$(dirname "$0")/lib.bash"
: "${STORE_FIXTURE:?path to store-fixture}"

# base: 4 boots of syscall/getpid at about 100 ns; patched: the same, but
# boot 3 is an outlier at about 130 ns. sched/pipe moves 10% in patched.
/usr/bin/python3 - "$WORK/spec.json" <<'EOF'
import json, sys
sessions = []
for profile in ("base", "patched"):
    for boot in range(4):
        getpid = [100 + boot * 0.2 + r * 0.1 for r in range(5)]
        if profile == "patched" and boot == 2:
            getpid = [130 + r * 0.1 for r in range(5)]
        pipe = [50 + boot * 0.1 + r * 0.05 + (5 if profile == "patched" else 0) for r in range(5)]
        sessions.append({"swprofile": profile, "benchmarks": [
            {"name": "syscall/getpid", "results": [{"class": "mean", "unit": "ns", "better": "lower", "values": getpid}]},
            {"name": "sched/pipe", "results": [{"class": "latency", "unit": "us", "better": "lower", "values": pipe}]}]})
json.dump({"sut": "vm", "sessions": sessions}, open(sys.argv[1], "w"))
EOF
"$STORE_FIXTURE" "$WORK/store.db" "$WORK/spec.json" >"$WORK/fixture.out" 2>&1 \
  || { fail "store-fixture exited $?: $(cat "$WORK/fixture.out")"; finish; exit; }
STORE="sqlite://$WORK/store.db"

mkdir "$WORK/page"
(cd "$WORK/page" && "$KBENCH" compare base patched --format html --store "$STORE" >report.html 2>err)
status=$?
[ "$status" -eq 0 ] && pass || fail "compare --format html exited $status: $(cat "$WORK/page/err")"
[ "$(ls -A "$WORK/page")" = "$(printf 'err\nreport.html')" ] && pass || fail "wrote more than its page: $(ls -A "$WORK/page")"
[ ! -s "$WORK/page/err" ] && pass || fail "stderr not empty: $(cat "$WORK/page/err")"
head -c 15 "$WORK/page/report.html" | grep -q '<!DOCTYPE html>' && pass || fail "the page does not start with <!DOCTYPE html>"
[ "$(tail -n 1 "$WORK/page/report.html")" = "</html>" ] && pass || fail "stdout holds more than the page"
expect_contains "$WORK/page/report.html" "<pre><code>kbench compare base patched --format html --store sqlite://"
expect_contains "$WORK/page/report.html" "Results for SUT vm:"
expect_contains "$WORK/page/report.html" 'title="regression">(R) -9.95%</td>'

# The data: every session's samples, the outlier boot visible as boot #3.
/usr/bin/python3 - "$WORK/page/report.html" <<'EOF' && pass || fail "the page's data lacks the sessions or the outlier boot"
import json, sys
page = open(sys.argv[1]).read()
start = page.index("window.kbenchData = ") + len("window.kbenchData = ")
data = json.loads(page[start:page.index(";\n", start)])
table = data["tables"][0]
assert table["profiles"] == ["base", "patched"], table["profiles"]
rows = {row["name"] + " " + row["class"]: row for row in table["rows"]}
getpid = rows["syscall/getpid mean (ns)"]
base, patched = getpid["sides"]
assert [s[0] for s in base["s"]] == ["#1", "#2", "#3", "#4"], base["s"]
assert all(len(s[1]) == 5 for s in base["s"] + patched["s"])
outlier = dict(patched["s"])["#3"]
assert min(outlier) >= 130 and max(dict(patched["s"])["#2"]) < 101, patched["s"]
start = page.index("window.kbenchPlots = ") + len("window.kbenchPlots = ")
plots = json.loads(page[start:page.index(";\n", start)])
assert plots[0]["spec"]["data"]["name"] == "rows" and len(plots[0]["spec"]["data"]["values"]) == 2
EOF

# Bad input: one line, exit 2, no page.
expect_bad_input "html: unknown test profile" "$KBENCH" compare base nosuch --format html --store "$STORE"
expect_bad_input "html: misspelt format" "$KBENCH" compare base patched --format htm --store "$STORE"
finish

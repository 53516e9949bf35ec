#!/usr/bin/env bash
# Parameters and input validated before anything is written: one line, exit 2,
# the store unchanged (byte for byte); --param, --size and the catalogue.
source "$(dirname "$0")/lib.bash"
unset KBENCH_STORE
S="$WORK/store.db"

"$KBENCH" run --swprofile A --benchmark 'syscall/getpid' --param calls=20000 --repeats 1 --warmups 0 \
  --store "sqlite://$S" >/dev/null 2>"$WORK/setup.err" || fail "setting up the store failed: $(cat "$WORK/setup.err")"
before=$(md5sum <"$S")
sessions_before=$(sqlite3 "$S" "select count(*) from session")

# Values the agent would refuse are refused by the controller, before a session.
expect_bad_input "run --cpus 99" "$KBENCH" run --swprofile A --benchmark syscall/getpid --cpus 99 --store "sqlite://$S"
expect_contains "$WORK/err" "--cpus '99': CPU 99 is not one of the CPUs of SUT"
expect_bad_input "run --cpus garbage" "$KBENCH" run --swprofile A --benchmark syscall/getpid --cpus 0-x --store "sqlite://$S"
expect_bad_input "run --param calls=abc" "$KBENCH" run --swprofile A --benchmark syscall/getpid --param calls=abc \
  --store "sqlite://$S"
expect_contains "$WORK/err" "syscall/getpid: parameter 'calls' = 'abc': expected an integer from 1 to"
expect_bad_input "run --param unknown key" "$KBENCH" run --swprofile A --benchmark syscall/getpid --param nosuch=1 \
  --store "sqlite://$S"
expect_contains "$WORK/err" "syscall/getpid: no parameter 'nosuch' (known: calls)"
expect_bad_input "run --param without =" "$KBENCH" run --swprofile A --benchmark syscall/getpid --param calls \
  --store "sqlite://$S"
expect_bad_input "run --size huge" "$KBENCH" run --swprofile A --benchmark syscall/getpid --size huge --store "sqlite://$S"
cat >"$WORK/abc.yaml" <<'YAML'
benchmarks:
  - {name: syscall/getpid, params: {calls: "abc"}}
YAML
expect_bad_input "plan exec calls: abc" "$KBENCH" plan exec "$WORK/abc.yaml" --swprofile A --store "sqlite://$S"
expect_contains "$WORK/err" "abc.yaml:2: params: syscall/getpid: parameter 'calls' = 'abc'"
expect_bad_input "plan exec --cpus 99" "$KBENCH" plan exec "$WORK/abc.yaml" --swprofile A --cpus 99 --store "sqlite://$S"
[ "$(md5sum <"$S")" = "$before" ] && pass || fail "a refused run changed the store"
[ "$(sqlite3 "$S" "select count(*) from session" 2>/dev/null || echo "?")" = "$sessions_before" ] && pass ||
  fail "a refused run added a session"
[ ! -e "$WORK/new.db" ] && pass || fail "unexpected store"
expect_bad_input "run --cpus 99, new store" "$KBENCH" run --swprofile A --benchmark syscall/getpid --cpus 99 \
  --store "sqlite://$WORK/new.db"
[ ! -e "$WORK/new.db" ] && pass || fail "run --cpus 99 created the store"

# plan check catches what plan exec would reject.
expect_bad_input "plan check calls: abc" "$KBENCH" plan check "$WORK/abc.yaml"
expect_contains "$WORK/err" "abc.yaml:2: params: syscall/getpid: parameter 'calls' = 'abc'"
printf 'swprofiles:\n  - name: "  "\nbenchmarks: [syscall/getpid]\n' >"$WORK/blank.yaml"
expect_bad_input "plan check blank swprofile" "$KBENCH" plan check "$WORK/blank.yaml"
expect_contains "$WORK/err" "blank.yaml:2: swprofiles[].name"
printf 'sut:\n  connection:\n    method: ssh\n    params: {host: "-oProxyCommand=touch x"}\nbenchmarks: [syscall/getpid]\n' \
  >"$WORK/host.yaml"
expect_bad_input "plan check ssh host -o" "$KBENCH" plan check "$WORK/host.yaml"
expect_contains "$WORK/err" "host.yaml:4: sut.connection.params.host: expected a host name"
expect_bad_input "plan exec ssh host -o" "$KBENCH" plan exec "$WORK/host.yaml" --swprofile A --store "sqlite://$S"
printf 'defaults:\n  benchmark: {repeats: 3}\nbenchmarks:\n  - name: syscall/getpid\n    repeats: 2\n    repeats: 9\n' \
  >"$WORK/dup.yaml"
expect_bad_input "plan check duplicate key" "$KBENCH" plan check "$WORK/dup.yaml"
expect_contains "$WORK/err" "dup.yaml:6: duplicate key 'repeats'"
expect_bad_input "plan check /dev/zero" "$KBENCH" plan check /dev/zero
expect_contains "$WORK/err" "plan /dev/zero: larger than 1 MiB"
[ "$(md5sum <"$S")" = "$before" ] && pass || fail "refused plans changed the store"

# --param and --size reach the agent: the stored parameters say so.
"$KBENCH" run --swprofile B --benchmark syscall/getpid --param calls=12345 --size quick --repeats 1 --warmups 0 \
  --store "sqlite://$S" >/dev/null 2>"$WORK/run.err" && pass || fail "run --param failed: $(cat "$WORK/run.err")"
"$KBENCH" export --store "sqlite://$S" --format csv >"$WORK/export.csv" 2>&1
expect_contains "$WORK/export.csv" "calls=12345"

# The catalogue lists what the agent offers, with kinds and ranges.
"$KBENCH" catalogue >"$WORK/catalogue.txt" 2>&1 && pass || fail "kbench catalogue failed"
expect_contains "$WORK/catalogue.txt" "--param calls=...  integer 1..100000000000"
expect_contains "$WORK/catalogue.txt" "perf/sched"
expect_contains "$WORK/catalogue.txt" "result classes (default size): mean [ns, lower is better]"
"$KBENCH" catalogue 'syscall/getpid' --format json >"$WORK/catalogue.json" && pass || fail "catalogue --format json failed"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['benchmarks'][0]['params'][0]['kind']=='integer'" \
  "$WORK/catalogue.json" && pass || fail "catalogue json lacks the kind"
expect_bad_input "catalogue no match" "$KBENCH" catalogue 'nosuch/*'

finish

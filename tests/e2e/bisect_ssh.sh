#!/usr/bin/env bash
# kbench bisect on a lab machine: the QEMU VM of scripts/test-vm.sh (Debian
# 12 with sshd and kexec-tools) as an ssh SUT with sut.boot. The history's
# "kernel tree" (tests/data/packaged-kernel-tree) builds a Debian kernel
# package's image and modules, so every commit's kernel boots the VM without
# compiling one; the commits differ in the number the build writes beside
# the modules, which selftest/value-file on the SUT reports: 20 before the
# planted commit, 200 from it on, with no timing in it. Every session is a
# kexec boot into its commit's kernel, verified before it is measured; the
# SUT stays in the kernel of the last boot between sessions (no boot back
# between them, which would double the boots) and is booted back into its
# own kernel once, at the end. Covers the build, staging, boot and
# measurement of each commit on the SUT; the search's and the sandwich's
# statistics are e2e_bisect's.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/lab_vm.bash"
started=$(date +%s)
lab_vm_image
command -v git >/dev/null || skip "git missing"

export KBENCH_STATE_DIR="$WORK/state"
export KBENCH_BUILD_CACHE="$WORK/build-cache"
store_file=$WORK/bisect.db
S="sqlite://$store_file"
package=$WORK/package
# The smaller of the two packages (here 6.1: 27 MB against 34 MB).
deb=${debs[0]}
[[ "$release_b" == 6.1.* ]] && deb=${debs[1]}
release=$(deb_release "$deb")
mkdir -p "$package" && dpkg-deb -x "$deb" "$package"
tree=$WORK/linux
cp -r "$KBENCH_SOURCE_DIR/tests/data/packaged-kernel-tree" "$tree"
echo "$package" >"$tree/PACKAGE"
g() { git -C "$tree" -c user.name=kbench -c user.email=kbench@test.invalid "$@"; }
echo 20 >"$tree/VALUE"
g init -q && g add -A && g commit -qm "base" && g tag base
echo 200 >"$tree/VALUE" && g commit -qam "planted: the value tenfold" && g tag planted
echo "a comment" >"$tree/NOTES" && g add NOTES && g commit -qm "after: a comment" && g tag last
planted=$(g rev-parse planted)

lab_vm_start
modules_before=$(vm_ssh 'ls /lib/modules')

# A kexec boot takes about a minute alone and up to six times that beside
# make check's other guests and builds (one took over 5 minutes there).
{ lab_vm_sut_yaml qemu-lab kexec 10m; cat <<YAML
swprofiles:
  - name: packaged
    build: {source: $tree, config: defconfig}
    wrapper: [env, KBENCH_SELFTEST=1]
benchmarks:
  - {name: selftest/value-file, params: {file: /lib/modules/$release/kbench-value}}
defaults: {benchmark: {warmups: 0, repeats: 3, timeout: 1m}}
YAML
} >"$WORK/bisect.yaml"
ROW='selftest/value-file:value (ms)'

# Two sessions of each endpoint, two of the one commit between them (the
# planted one), no sandwich: 6 boots, then 1 back.
bisect_started=$(date +%s)
KBENCH_SELFTEST=1 "$KBENCH" bisect run "$WORK/bisect.yaml" --good base --bad last --row "$ROW" --sessions 2 \
  --max-sessions 2 --confirm-sessions 0 --store "$S" >"$WORK/run.out" 2>"$WORK/run.err"
status=$?
grep -E '^kbench: (boot|booting|building)|^console' "$WORK/run.err" | head -40
echo "bisect (2 kernels staged, 6 boots, 1 back): $(( $(date +%s) - bisect_started ))s"
[ "$status" -eq 0 ] && pass || { fail "bisect run on the lab machine exited $status"; tail -40 "$WORK/run.err" >&2; }
cat "$WORK/run.out"
expect_contains "$WORK/run.out" "first bad commit: $planted planted: the value tenfold — unconfirmed: --confirm-sessions 0"
expect_contains "$WORK/run.out" "endpoint good $(g rev-parse --short=12 base) \"base\": build "
grep -q "endpoint bad [0-9a-f]\{12\} \"after: a comment\": build [^,]*, boots 2, sessions 2" "$WORK/run.out" && pass ||
  fail "the bad endpoint's line does not count its 2 boots and 2 sessions"

# Every session ran in a kexec boot of its own into the commit's kernel,
# verified, and measured the value of that commit's build.
sessions=$(sqlite3 "$store_file" "select count(*) from session")
[ "$sessions" -eq 6 ] && pass || fail "$sessions sessions stored, expected 6"
booted=$(sqlite3 "$store_file" "select count(*) from session where kernel_release = '$release' and json_extract(fingerprint, '\$.boot.ok') = 1 and json_extract(fingerprint, '\$.boot.method') = 'kexec'")
[ "$booted" -eq 6 ] && pass || fail "$booted of 6 sessions record a verified kexec boot into $release"
order=$(sqlite3 "$store_file" "select group_concat(x, ' ') from (select w.name || '=' || cast(round(avg(v.value) / 10) * 10 as int) as x from session s join swprofile w on w.id = s.swprofile_id join result v on v.session_id = s.id group by s.id order by s.id)")
base12=$(g rev-parse --short=12 base) last12=$(g rev-parse --short=12 last) planted12=${planted:0:12}
expected="bisect-$base12=20 bisect-$last12=200 bisect-$base12=20 bisect-$last12=200 bisect-$planted12=200 bisect-$planted12=200"
[ "$order" = "$expected" ] && pass || fail "sessions went '$order', expected '$expected'"

# One boot back, at the end; the SUT runs its own kernel, and kbench's
# module copies are gone.
backs=$(grep -c "^kbench: boot back: (the SUT's own kernel) by kexec: ssh ready" "$WORK/run.err")
[ "$backs" -eq 1 ] && pass || fail "$backs boots back into the SUT's own kernel, expected 1 (at the end)"
boots=$(grep -c "^kbench: boot 1/1: bisect-[0-9a-f]\{12\} by kexec: ssh ready" "$WORK/run.err")
[ "$boots" -eq 6 ] && pass || fail "$boots verified boots into the commits' kernels, expected 6"
[ "$(vm_ssh 'uname -r')" = "$default_release" ] && pass || fail "the SUT runs $(vm_ssh 'uname -r'), not its own $default_release"
[ "$(vm_ssh 'ls /lib/modules')" = "$modules_before" ] && pass || fail "kbench's module copies were left in /lib/modules"

echo "whole test: $(( $(date +%s) - started ))s"
finish

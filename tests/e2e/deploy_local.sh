#!/usr/bin/env bash
# Kernels on the machine kbench runs on: kbench runs INSIDE the QEMU VM
# (scripts/test-vm.sh: Debian 12 with systemd and kexec-tools), with a plan
# whose SUT is that machine (connection local, boot kexec). Three
# swprofiles, one session each, all of one Debian kernel package (staged
# once: each staging costs a minute and more under TCG; two releases staged
# and swapped are deploy_kexec's): a, b on another cmdline, and panics, on a
# cmdline where it panics.
# The ssh session that starts the plan dies with the first kexec; from then
# on a systemd unit resumes the plan after each boot. Kexec boots go a b
# panics: panics reboots by the panic= kbench adds, the VM comes back on its
# own kernel, the resumed plan records that boot as failed, and, the machine
# being on its own kernel already, ends without another boot; the unit and
# the state file are gone. (One session each, the failed kernel last: every
# step of the local path is crossed once in 3 boots; that a failed kernel is
# not booted for its later sessions and the plan goes on is the plan
# executor's, shown by deploy_kexec.) The test polls `kbench plan status`
# over ssh until it says the plan finished, then reads the VM's store.
source "$(dirname "$0")/lib.bash"

source "$(dirname "$0")/lab_vm.bash"
command -v sqlite3 >/dev/null || skip "sqlite3 missing (Debian package sqlite3)"
started=$(date +%s)
lab_vm_image
lab_vm_start
vm_scp() { scp -q -F "$vm/ssh_config" "$@"; }
# What kbench must leave as it found it.
listing='ls -l /boot; ls /etc/grub.d /lib/modules /etc/systemd/system /etc/systemd/system/multi-user.target.wants'
listing_before=$(vm_ssh "$listing")
cmdline_before=$(vm_ssh cat /proc/cmdline)

# kbench as a user would have it on the machine: built here (the same
# Debian release), its runtime libraries in the image (test-vm.sh).
dir=/root/kbench-local
vm_ssh "mkdir -p $dir" || { fail "ssh into the VM failed"; finish; exit; }
vm_scp "$KBENCH" "$KBENCH_AGENT" "vm:$dir/" || { fail "copying kbench into the VM failed"; finish; exit; }
vm_scp "${debs[0]}" "vm:$dir/a.deb" || { fail "copying the kernel failed"; finish; exit; }
release_b=$release_a
vm_ssh "$dir/kbench --help >/dev/null" || { fail "kbench does not start in the VM:"; vm_ssh "ldd $dir/kbench | grep 'not found'"; finish; exit; }

plan_text() {
  cat <<YAML
sut: {name: vm-self, connection: {method: local}, boot: {method: kexec}}
swprofiles:
  - {name: a, kernel: {deb: $dir/a.deb}}
  - {name: b, kernel: {deb: $dir/a.deb}, cmdline: [mitigations=off]}
  - {name: panics, kernel: {deb: $dir/a.deb}, cmdline_mode: replace, cmdline: [rdinit=/nonexistent, root=/dev/nonexistent, console=ttyS0$1]}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 3, sessions: 1, timeout: 3m}}
YAML
}
plan_text "" | vm_ssh "cat > $dir/ab.yaml"
plan_text ", panic=0" | vm_ssh "cat > $dir/hangs.yaml; mkdir -p /tmp/plans; cat $dir/ab.yaml > /tmp/plans/ab.yaml"

# Refusals: one line, exit 2, and nothing installed or written.
expect_bad_input "a swprofile whose panic would hang the machine" vm_ssh "$dir/kbench plan exec $dir/hangs.yaml --store $dir/bad.db"
expect_bad_input "a plan in /tmp" vm_ssh "$dir/kbench plan exec /tmp/plans/ab.yaml --store $dir/bad.db"
expect_bad_input "a store in /tmp" vm_ssh "$dir/kbench plan exec $dir/ab.yaml --store /tmp/bad.db"
[ "$(vm_ssh "ls $dir/bad.db /tmp/bad.db /root/.local/state/kbench/local-boot /etc/systemd/system/kbench-resume-* 2>/dev/null")" = "" ] &&
  pass || fail "a refused plan left files behind"

# The plan: this ssh session ends with the first kexec.
plan_started=$(date +%s)
vm_ssh "cd $dir && ./kbench plan exec ab.yaml --store $dir/store.db" >"$WORK/first.out" 2>"$WORK/first.err"
echo "first run (staging the kernel, the first kexec) ended with status $? after $(( $(date +%s) - plan_started ))s:"
grep -E '^kbench: ' "$WORK/first.err"
# (Its last lines may be lost with the connection: the boot itself is
# checked in the store below.)
expect_contains "$WORK/first.err" "kbench: installed kbench-resume-"

# Where the plan stands, over ssh while the VM boots and measures.
status=
last=
deadline=$(( $(date +%s) + 1200 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 10
  timeout 60 ssh -F "$vm/ssh_config" -o ConnectTimeout=5 vm "$dir/kbench plan status $dir/ab.yaml" >"$WORK/status.txt" 2>&1 || continue
  status=$(sed -n 's/^status: //p' "$WORK/status.txt")
  [ "$status" != "$last" ] && echo "$(( $(date +%s) - plan_started ))s: ${status%%,*}"
  last=$status
  [ "$status" = finished ] && break
  case $status in stopped:*) break ;; esac
done
echo "plan (1 kernel staged, 3 boots by kexec, the last a panic and its reboot, unit runs after each): $(( $(date +%s) - plan_started ))s"
cat "$WORK/status.txt"
[ "$status" = finished ] && pass || { fail "kbench plan status says '$status' (20 minutes at most)"; vm_ssh "tail -n 40 /root/.local/state/kbench/local-boot/*.log"; tail -n 30 "$vm/console.log"; }
expect_contains "$WORK/status.txt" "sessions: a 1/1, b 1/1, panics 0/1 (its kernel failed to boot in session 1)"
expect_contains "$WORK/status.txt" "boots: 3 (2 ok, 1 failed)"
expect_contains "$WORK/status.txt" ".service: not installed"
expect_contains "$WORK/status.txt" "pending: no boot"
vm_ssh 'cat /root/.local/state/kbench/local-boot/*.log' >"$WORK/unit.log"
grep -E '^kbench: ' "$WORK/unit.log"
expect_contains "$WORK/unit.log" "kbench: boot 3/3: panics by kexec FAILED: this machine came back"
expect_contains "$WORK/unit.log" "on its own kernel $default_release"
expect_contains "$WORK/unit.log" "kbench: plan done: this machine runs its own kernel $default_release"
expect_contains "$vm/console.log" "Kernel panic"

# The store with its write-ahead log: the last boot's record may still be
# only in store.db-wal, when a `plan status` poll (a read-only connection,
# which never checkpoints) had the store open as the writer closed it.
vm_scp vm:$dir/store.db "$WORK/store.db" || fail "copying the store out of the VM failed"
if vm_ssh "test -e $dir/store.db-wal"; then
  vm_scp vm:$dir/store.db-wal "$WORK/store.db-wal" || fail "copying the store's -wal out of the VM failed"
fi
store_file=$WORK/store.db
check_alternated_boots "$store_file" "a:1 b:1 panics:0" ""
cmdline_b=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'b' and json_extract(s.fingerprint, '\$.cmdline') like '%mitigations=off%panic=10%'")
[ "$cmdline_b" -eq 1 ] && pass || fail "the fingerprints of b lack mitigations=off and panic=10 on its cmdline"
vm_ssh "$dir/kbench compare a b --store $dir/store.db" >"$WORK/compare.txt" 2>&1 && pass || fail "compare a b failed"
grep -qE '^\| syscall/getppid +\| mean \(ns\)' "$WORK/compare.txt" && pass || { fail "the comparison lacks the getppid row"; cat "$WORK/compare.txt"; }

# The VM is back on its own kernel and cmdline, as it was.
[ "$(vm_ssh uname -r)" = "$default_release" ] && pass || fail "the VM runs $(vm_ssh uname -r) after the plan, expected $default_release"
[ "$(vm_ssh cat /proc/cmdline)" = "$cmdline_before" ] && pass || fail "the VM's cmdline is '$(vm_ssh cat /proc/cmdline)', expected '$cmdline_before'"
listing_after=$(vm_ssh "$listing")
[ "$listing_after" = "$listing_before" ] && pass || {
  fail "the VM's /boot, /etc/grub.d, /lib/modules or systemd units changed:"; diff <(echo "$listing_before") <(echo "$listing_after") >&2; }
[ "$(vm_ssh 'ls /root/.local/state/kbench/local-boot/*.json 2>/dev/null')" = "" ] && pass || fail "the state file is still there"
[ "$(vm_ssh "systemctl list-unit-files 'kbench-resume-*' --no-legend")" = "" ] && pass || fail "systemd still knows the resume unit"

"$vm_script" stop "$vm"
echo "deploy_local e2e took $(( $(date +%s) - started ))s"
finish

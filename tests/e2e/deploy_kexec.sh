#!/usr/bin/env bash
# Kernels onto a lab machine: a QEMU VM (Debian 12 with sshd and kexec-tools,
# scripts/test-vm.sh, cached between runs) is an ssh SUT with sut.boot. Two
# Debian kernel packages of two releases are installed as swprofiles a and b,
# 2 sessions each: 4 kexec boots alternating a b a b, each verified (uname -r,
# uname -v, /proc/cmdline) before syscall/getppid is measured, then the SUT is
# booted back into its own kernel. Then a swprofile whose kernel panics
# (panic=0: it hangs) is recovered by power_cycle (QEMU system_reset) as soon
# as the console shows the panic, its session failed with the console's
# panic, and the next swprofile measured.
source "$(dirname "$0")/lib.bash"

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (Debian package qemu-system-x86)"
[ "$(id -u)" -eq 0 ] || skip "building the VM image needs root (mmdebstrap, mkfs.ext4 -d)"
vm_script="$KBENCH_SOURCE_DIR/scripts/test-vm.sh"
expect_bad_input "test-vm.sh: an unknown subcommand" "$vm_script" frobnicate
expect_bad_input "test-vm.sh: start without an image" "$vm_script" start "$WORK/no-vm" "$WORK/no-cache"
started=$(date +%s)
cache=$("$vm_script" build) || { fail "test-vm.sh build failed"; finish; exit; }
mapfile -t debs < <("$vm_script" kernels "$cache")
[ "${#debs[@]}" -eq 2 ] || { fail "test-vm.sh kernels gave ${#debs[@]} packages, expected 2"; finish; exit; }
release_of() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed -n 's|^\./boot/vmlinuz-||p' | head -n 1; }
release_a=$(release_of "${debs[0]}")
release_b=$(release_of "${debs[1]}")
default_release=$(cat "$cache/release")
echo "VM default kernel $default_release; a = $release_a, b = $release_b (image ready after $(( $(date +%s) - started ))s)"

image_mtime=$(stat -c %Y "$cache/image.raw")
vm=$WORK/vm
trap '"$vm_script" stop "$vm" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
"$vm_script" start "$vm" "$cache" || { fail "test-vm.sh start failed"; finish; exit; }
first_boot=$("$vm_script" wait "$vm" 600) || { fail "the VM did not come up"; finish; exit; }
echo "VM up: ssh ready after ${first_boot}s"
vm_ssh() { ssh -F "$vm/ssh_config" vm "$@"; }
boot_listing_before=$(vm_ssh 'ls -l /boot; ls /etc/grub.d 2>/dev/null; ls /lib/modules')

store_file=$WORK/deploy.db
store="sqlite://$store_file"
sut_yaml() {
  cat <<YAML
sut:
  name: qemu-lab
  connection:
    method: ssh
    params: {host: 127.0.0.1, port: "$(cat "$vm/ssh_port")", user: root, keyfile: $cache/id_ed25519,
             known_hosts: $vm/known_hosts, strict_host_key_checking: accept-new}
  boot: {method: kexec, timeout: $1, power_cycle: "$vm_script reset $vm", console_log: $vm/console.log}
YAML
}
{ sut_yaml 5m; cat <<YAML
swprofiles:
  - {name: a, kernel: {deb: ${debs[0]}}}
  - {name: b, kernel: {deb: ${debs[1]}}, cmdline: [mitigations=off], sysctl: {kernel.randomize_va_space: "0"}}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 5, sessions: 2, timeout: 3m}}
YAML
} >"$WORK/ab.yaml"
cat "$WORK/ab.yaml"
plan_started=$(date +%s)
if "$KBENCH" plan exec "$WORK/ab.yaml" --store "$store" >"$WORK/ab.out" 2>"$WORK/ab.err"; then pass; else
  fail "plan exec of the a/b plan exited $?"
fi
grep -E '^kbench: (boot|copying|unpacking|.* staged|booting)' "$WORK/ab.err"
echo "a/b plan (staging two kernels, 4 boots + 1 back): $(( $(date +%s) - plan_started ))s"

order=$(sqlite3 "$store_file" "select group_concat(swprofile || ':' || ok, ' ') from (select * from boot order by id)")
[ "$order" = "a:1 b:1 a:1 b:1 (the SUT's own kernel):1" ] && pass || fail "boots were '$order', expected a b a b then back, all ok"
for profile in a b; do
  want=$release_a; [ $profile = b ] && want=$release_b
  got=$(sqlite3 "$store_file" "select group_concat(distinct s.kernel_release) from session s join swprofile w on w.id = s.swprofile_id where w.name = '$profile'")
  [ "$got" = "$want" ] && pass || fail "sessions of $profile ran kernel '$got', expected $want"
  boots=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = '$profile' and json_extract(s.fingerprint, '\$.boot.ok') = 1 and json_extract(s.fingerprint, '\$.boot.method') = 'kexec'")
  [ "$boots" -eq 2 ] && pass || fail "$profile: $boots sessions record their kexec boot, expected 2"
done
cmdline_b=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'b' and json_extract(s.fingerprint, '\$.cmdline') like '%mitigations=off%'")
[ "$cmdline_b" -eq 2 ] && pass || fail "the fingerprints of b lack mitigations=off from its cmdline"
# b's sysctl is written after each of its boots, before the fingerprint.
aslr=$(sqlite3 "$store_file" "select group_concat(x, ' ') from (select w.name || '=' || json_extract(s.fingerprint, '\$.aslr') as x from session s join swprofile w on w.id = s.swprofile_id order by s.id)")
[ "$aslr" = "a=2 b=0 a=2 b=0" ] && pass || fail "ASLR per session was '$aslr', expected b's sysctl randomize_va_space=0 in b only"
"$KBENCH" list boots --store "$store" | tee "$WORK/boots.txt"
expect_contains "$WORK/boots.txt" "kexec"
"$KBENCH" compare a b --store "$store" >"$WORK/compare.txt" 2>&1 && pass || fail "compare a b failed"
cat "$WORK/compare.txt"
grep -qE '^\| syscall/getppid +\| mean \(ns\)' "$WORK/compare.txt" && pass || fail "the comparison lacks the getppid row"

# The SUT is back on its own kernel, its boot files as they were.
[ "$(vm_ssh uname -r)" = "$default_release" ] && pass || fail "the VM runs $(vm_ssh uname -r) after the plan, expected $default_release"
boot_listing_after=$(vm_ssh 'ls -l /boot; ls /etc/grub.d 2>/dev/null; ls /lib/modules')
[ "$boot_listing_after" = "$boot_listing_before" ] && pass || {
  fail "the VM's /boot, /etc/grub.d or /lib/modules changed:"; diff <(echo "$boot_listing_before") <(echo "$boot_listing_after") >&2; }

# A kernel that panics and hangs (panic=0): no init in the initramfs, no root.
{ sut_yaml 5m; cat <<YAML
swprofiles:
  - {name: panics, kernel: {deb: ${debs[0]}}, cmdline_mode: replace, cmdline: [rdinit=/nonexistent, root=/dev/nonexistent, panic=0, console=ttyS0]}
  - {name: a, kernel: {deb: ${debs[0]}}}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 5, sessions: 1, timeout: 3m}}
YAML
} >"$WORK/panic.yaml"
panic_started=$(date +%s)
"$KBENCH" plan exec "$WORK/panic.yaml" --store "$store" >"$WORK/panic.out" 2>"$WORK/panic.err"
status=$?
grep -E '^kbench: |^console|Kernel panic' "$WORK/panic.err" | head -40
echo "panic plan (one failed boot, a power cycle, one good boot, 1 back): $(( $(date +%s) - panic_started ))s"
[ $status -eq 1 ] && pass || fail "the plan with a failed boot exited $status, expected 1"
# The console shows the panic: kbench power-cycles at once instead of
# waiting out the 5-minute timeout.
expect_contains "$WORK/panic.err" "boot 1/2: panics by kexec FAILED: the console shows a kernel panic"
expect_contains "$WORK/panic.err" "power-cycled, back after"
expect_contains "$WORK/panic.err" "Kernel panic"
expect_contains "$WORK/panic.err" "1 session(s) not measured"
panics=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'panics'")
[ "$panics" -eq 0 ] && pass || fail "the failed boot stored $panics session(s) under swprofile panics"
a_sessions=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'a' and s.finished_at is not null")
[ "$a_sessions" -eq 3 ] && pass || fail "a has $a_sessions finished sessions, expected 3 (the plan went on after the failed boot)"
"$KBENCH" list boots --store "$store" --swprofile panics >"$WORK/panic-boots.txt"
cat "$WORK/panic-boots.txt"
expect_contains "$WORK/panic-boots.txt" "console: "
[ "$(vm_ssh uname -r)" = "$default_release" ] && pass || fail "the VM is not back on $default_release after the panic plan"

# --resume of the finished panic plan: the failed boot is not retried, the
# finished session not redone, and the SUT, never booted, not booted back.
boots_before=$(sqlite3 "$store_file" "select count(*) from boot")
"$KBENCH" plan exec "$WORK/panic.yaml" --store "$store" --resume >"$WORK/resume.out" 2>"$WORK/resume.err"
cat "$WORK/resume.err"
expect_contains "$WORK/resume.err" "session 1 of panics failed to boot before"
expect_contains "$WORK/resume.err" "not retried"
[ "$(sqlite3 "$store_file" "select count(*) from boot")" = "$boots_before" ] && pass ||
  fail "the resumed, finished plan booted the SUT"
[ "$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'a'")" -eq 3 ] &&
  pass || fail "the resumed plan measured a again"

# The lab machine's disk was a throwaway overlay: the cached image is as built.
pid=$(cat "$vm/qemu.pid")
"$vm_script" stop "$vm"
kill -0 "$pid" 2>/dev/null && fail "QEMU (pid $pid) still runs after test-vm.sh stop" || pass
[ "$(stat -c %Y "$cache/image.raw")" = "$image_mtime" ] && pass || fail "the cached image.raw was modified"

echo "deploy e2e took $(( $(date +%s) - started ))s"
finish

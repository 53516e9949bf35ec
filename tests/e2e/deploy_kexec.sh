#!/usr/bin/env bash
# Kernels onto a lab machine: a QEMU VM (Debian 12 with sshd and kexec-tools,
# scripts/test-vm.sh, cached between runs) is an ssh SUT with sut.boot. One
# plan, 2 sessions, three swprofiles: two Debian kernel packages of two
# releases as a and b, and panics, a's kernel on a cmdline where it panics
# and hangs (panic=0). Kexec boots go a b panics, then b a (the second
# round's balanced order is b panics a, and panics is not booted again),
# each verified (uname -r, uname -v, /proc/cmdline) before syscall/getppid
# is measured; panics is
# recovered by power_cycle (QEMU system_reset) as soon as the console shows
# the panic, its session failed with the console's panic, its second session
# not booted, and the plan goes on; then the SUT is booted back into its own
# kernel.
source "$(dirname "$0")/lib.bash"

source "$(dirname "$0")/lab_vm.bash"
expect_bad_input "test-vm.sh: an unknown subcommand" "$vm_script" frobnicate
expect_bad_input "test-vm.sh: start without an image" "$vm_script" start "$WORK/no-vm" "$WORK/no-cache"
started=$(date +%s)
lab_vm_image
image_mtime=$(stat -c %Y "$cache/image.raw")
lab_vm_start
boot_listing_before=$(vm_ssh 'ls -l /boot; ls /etc/grub.d 2>/dev/null; ls /lib/modules')

store_file=$WORK/deploy.db
store="sqlite://$store_file"
{ lab_vm_sut_yaml qemu-lab kexec 5m; cat <<YAML
swprofiles:
  - {name: a, kernel: {deb: ${debs[0]}}}
  - {name: b, kernel: {deb: ${debs[1]}}, cmdline: [mitigations=off], sysctl: {kernel.randomize_va_space: "0"}}
  - {name: panics, kernel: {deb: ${debs[0]}}, cmdline_mode: replace, cmdline: [rdinit=/nonexistent, root=/dev/nonexistent, panic=0, console=ttyS0]}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 5, sessions: 2, timeout: 3m}}
YAML
} >"$WORK/ab.yaml"
cat "$WORK/ab.yaml"
plan_started=$(date +%s)
"$KBENCH" plan exec "$WORK/ab.yaml" --store "$store" >"$WORK/ab.out" 2>"$WORK/ab.err"
status=$?
grep -E '^kbench: |^console|Kernel panic' "$WORK/ab.err" | head -60
echo "plan (staging two kernels, 5 boots, a panic and its power cycle, 1 back): $(( $(date +%s) - plan_started ))s"
[ $status -eq 1 ] && pass || fail "the plan with a failed boot exited $status, expected 1"

check_alternated_boots "$store_file" "a:1 b:1 panics:0 b:1 a:1"
cmdline_b=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'b' and json_extract(s.fingerprint, '\$.cmdline') like '%mitigations=off%'")
[ "$cmdline_b" -eq 2 ] && pass || fail "the fingerprints of b lack mitigations=off from its cmdline"
# b's sysctl is written after each of its boots, before the fingerprint.
aslr=$(sqlite3 "$store_file" "select group_concat(x, ' ') from (select w.name || '=' || json_extract(s.fingerprint, '\$.aslr') as x from session s join swprofile w on w.id = s.swprofile_id order by s.id)")
[ "$aslr" = "a=2 b=0 b=0 a=2" ] && pass || fail "ASLR per session was '$aslr', expected b's sysctl randomize_va_space=0 in b only"

# The panic: the console shows it, so kbench power-cycles at once instead
# of waiting out the 5-minute timeout; the kernel is not booted again.
expect_contains "$WORK/ab.err" "boot 3/6: panics by kexec FAILED: the console shows a kernel panic"
expect_contains "$WORK/ab.err" "power-cycled, back after"
expect_contains "$WORK/ab.err" "Kernel panic"
expect_contains "$WORK/ab.err" "session 2 of panics not measured: its kernel failed to boot in session 1"
expect_contains "$WORK/ab.err" "2 session(s) not measured"
"$KBENCH" list boots --store "$store" | tee "$WORK/boots.txt"
expect_contains "$WORK/boots.txt" "kexec"
"$KBENCH" list boots --store "$store" --swprofile panics >"$WORK/panic-boots.txt"
cat "$WORK/panic-boots.txt"
expect_contains "$WORK/panic-boots.txt" "console: "
"$KBENCH" compare a b --store "$store" >"$WORK/compare.txt" 2>&1 && pass || fail "compare a b failed"
cat "$WORK/compare.txt"
grep -qE '^\| syscall/getppid +\| mean \(ns\)' "$WORK/compare.txt" && pass || fail "the comparison lacks the getppid row"

# The SUT is back on its own kernel, its boot files as they were.
[ "$(vm_ssh uname -r)" = "$default_release" ] && pass || fail "the VM runs $(vm_ssh uname -r) after the plan, expected $default_release"
boot_listing_after=$(vm_ssh 'ls -l /boot; ls /etc/grub.d 2>/dev/null; ls /lib/modules')
[ "$boot_listing_after" = "$boot_listing_before" ] && pass || {
  fail "the VM's /boot, /etc/grub.d or /lib/modules changed:"; diff <(echo "$boot_listing_before") <(echo "$boot_listing_after") >&2; }

# --resume of the finished plan: the failed kernel is not booted again, the
# finished sessions not redone, and the SUT, never booted, not booted back.
boots_before=$(sqlite3 "$store_file" "select count(*) from boot")
"$KBENCH" plan exec "$WORK/ab.yaml" --store "$store" --resume >"$WORK/resume.out" 2>"$WORK/resume.err"
cat "$WORK/resume.err"
expect_contains "$WORK/resume.err" "session 1 of panics failed to boot before"
expect_contains "$WORK/resume.err" "not retried"
expect_contains "$WORK/resume.err" "session 2 of panics not measured: its kernel failed to boot in session 1"
[ "$(sqlite3 "$store_file" "select count(*) from boot")" = "$boots_before" ] && pass ||
  fail "the resumed, finished plan booted the SUT"
[ "$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'a'")" -eq 2 ] &&
  pass || fail "the resumed plan measured a again"

# The lab machine's disk was a throwaway overlay: the cached image is as built.
pid=$(cat "$vm/qemu.pid")
"$vm_script" stop "$vm"
kill -0 "$pid" 2>/dev/null && fail "QEMU (pid $pid) still runs after test-vm.sh stop" || pass
[ "$(stat -c %Y "$cache/image.raw")" = "$image_mtime" ] && pass || fail "the cached image.raw was modified"

echo "deploy e2e took $(( $(date +%s) - started ))s"
finish

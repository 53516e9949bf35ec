#!/usr/bin/env bash
# The reboot boot method on a lab machine that boots through real GRUB: the
# QEMU VM of scripts/test-vm.sh started with KBENCH_TEST_VM_BOOT=grub
# (SeaBIOS, GRUB from grub.iso, the disk's own grub.cfg and grubenv). One
# swprofile with one of the Debian kernel packages and a cmdline word GRUB's
# script syntax would mangle unquoted, one session: kbench adds
# its one-shot GRUB entry (/etc/grub.d/45_kbench, update-grub, grub-reboot),
# reboots, verifies the boot (uname -r, /proc/cmdline), measures, then
# removes its entry and reboots into the default entry. Checked on the VM:
# its own kernel again, grub.cfg without kbench's entries, no pending
# grub-reboot (GRUB cleared next_entry at the one-shot boot). Then the same
# swprofile on a qemu SUT, which boots the package's image.
source "$(dirname "$0")/lib.bash"

source "$(dirname "$0")/lab_vm.bash"
KBENCH_TEST_VM_BOOT=bios expect_bad_input "test-vm.sh: an unknown boot mode" "$vm_script" start "$WORK/no-vm"
started=$(date +%s)
lab_vm_image
deb=${debs[1]}
lab_vm_start grub
grep -qF "Booting \`" "$vm/console.log" && pass || fail "the console shows no GRUB menu entry being booted"
sut_cmdline=$(vm_ssh cat /proc/cmdline)

store_file=$WORK/deploy.db
store="sqlite://$store_file"
{ lab_vm_sut_yaml qemu-grub reboot 6m; cat <<YAML
swprofiles:
  - {name: other, kernel: {deb: $deb}, cmdline: ["kbench.check=\$x;y"]}
benchmarks:
  - {name: syscall/getppid, params: {calls: "20000"}}
defaults: {benchmark: {warmups: 1, repeats: 3, sessions: 1, timeout: 3m}}
YAML
} >"$WORK/reboot.yaml"
cat "$WORK/reboot.yaml"
plan_started=$(date +%s)
if "$KBENCH" plan exec "$WORK/reboot.yaml" --store "$store" >"$WORK/plan.out" 2>"$WORK/plan.err"; then pass; else
  fail "plan exec with boot method reboot exited $?"; cat "$WORK/plan.err" >&2
fi
grep -E '^kbench: (boot|copying|unpacking|.* staged|booting)' "$WORK/plan.err"
echo "reboot plan (staging, one GRUB one-shot boot, one back): $(( $(date +%s) - plan_started ))s"

boots=$(sqlite3 "$store_file" "select group_concat(swprofile || ':' || method || ':' || ok, ' ') from (select * from boot order by id)")
[ "$boots" = "other:reboot:1 (the SUT's own kernel):default:1" ] && pass ||
  fail "boots were '$boots', expected other:reboot:1 then (the SUT's own kernel):default:1"
"$KBENCH" list boots --store "$store" | tee "$WORK/boots.txt"
got=$(sqlite3 "$store_file" "select group_concat(s.kernel_release) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'other' and s.finished_at is not null")
[ "$got" = "$release_b" ] && pass || fail "the session of other ran kernel '$got', expected $release_b"
method=$(sqlite3 "$store_file" "select json_extract(s.fingerprint, '\$.boot.method') || ':' || json_extract(s.fingerprint, '\$.boot.ok') from session s")
[ "$method" = "reboot:1" ] && pass || fail "the session's fingerprint records its boot as '$method', expected reboot:1"

# GRUB's script syntax would have expanded \$x and split at the ';'.
words=$(sqlite3 "$store_file" "select count(*) from session where json_extract(fingerprint, '\$.cmdline') like '%kbench.check=\$x;y%'")
[ "$words" -eq 1 ] && pass || fail "the session's cmdline lacks the word kbench.check=\$x;y as given"

# Back on its own kernel and cmdline, GRUB as before kbench came.
[ "$(vm_ssh uname -r)" = "$default_release" ] && pass || fail "the VM runs $(vm_ssh uname -r) after the plan, expected $default_release"
[ "$(vm_ssh cat /proc/cmdline)" = "$sut_cmdline" ] && pass || fail "the VM's cmdline after the plan is '$(vm_ssh cat /proc/cmdline)', expected '$sut_cmdline'"
vm_ssh 'test -e /etc/grub.d/45_kbench || test -e /boot/kbench' && fail "/etc/grub.d/45_kbench or /boot/kbench is still on the VM" || pass
vm_ssh 'grep -q kbench /boot/grub/grub.cfg' && fail "/boot/grub/grub.cfg still has kbench's entries" || pass
grubenv=$(vm_ssh grub-editenv list)
echo "grubenv after the plan: ${grubenv:-(empty)}"
echo "$grubenv" | grep -q '^next_entry=.' && fail "a grub-reboot entry is still pending: $grubenv" || pass

# The same swprofiles on a SUT that boots an image (sut: changed alone):
# kbench unpacks the package's boot/vmlinuz-* into its build cache and boots
# it under QEMU with its own initramfs.
{ cat <<YAML
sut: {name: vm, connection: {method: qemu, params: {memory: 512M}}}
YAML
  sed -n '/^swprofiles:/,$p' "$WORK/reboot.yaml"; } >"$WORK/qemu.yaml"
if KBENCH_BUILD_CACHE="$WORK/build-cache" "$KBENCH" plan exec "$WORK/qemu.yaml" --store "sqlite://$WORK/qemu.db" \
  >"$WORK/qemu.out" 2>"$WORK/qemu.err"; then pass; else
  fail "plan exec of the package on a qemu SUT exited $?"; tail -20 "$WORK/qemu.err" >&2
fi
ls "$WORK"/build-cache/deb/*/"vmlinuz-$release_b" >/dev/null 2>&1 && pass ||
  fail "no vmlinuz-$release_b unpacked into the build cache: $(find "$WORK/build-cache" -type f 2>/dev/null)"
got=$(sqlite3 "$WORK/qemu.db" "select group_concat(kernel_release) from session where finished_at is not null")
[ "$got" = "$release_b" ] && pass || fail "the qemu session ran kernel '$got', expected $release_b"

echo "deploy_reboot e2e took $(( $(date +%s) - started ))s"
finish

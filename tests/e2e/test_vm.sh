#!/usr/bin/env bash
# scripts/test-vm.sh, the QEMU "lab machine" the kernel deployment tests
# install kernels onto: built (or taken from its cache), booted under TCG,
# reached over ssh, power-cycled through the QEMU monitor (what a plan's
# power_cycle command does), reached again, stopped. The cached image must stay
# unchanged: every VM writes into its own overlay.
source "$(dirname "$0")/lib.bash"

vm_script="$KBENCH_SOURCE_DIR/scripts/test-vm.sh"
if ! command -v qemu-system-x86_64 >/dev/null; then
  skip "qemu-system-x86_64 missing (Debian package qemu-system-x86)"
fi

expect_bad_input "unknown subcommand" "$vm_script" frobnicate
expect_bad_input "start without an image" "$vm_script" start "$WORK/no-vm" "$WORK/no-cache"

started=$SECONDS
if ! cache_dir=$("$vm_script" build); then
  # Building needs root (mmdebstrap); anyone else uses root's or their own cache.
  [ "$(id -u)" -ne 0 ] && skip "no cached VM image and not root: run scripts/test-vm.sh build as root"
  fail "test-vm.sh build failed"; finish; exit 1
fi
echo "image: $cache_dir (ready in $((SECONDS - started))s)"
release=$(cat "$cache_dir/release")
image_mtime=$(stat -c %Y "$cache_dir/image.raw")

vm="$WORK/vm"
trap '"$vm_script" stop "$vm"; rm -rf "$WORK"' EXIT
"$vm_script" start "$vm" || { fail "test-vm.sh start failed"; cat "$vm/qemu.err" >&2; finish; exit 1; }
if seconds=$("$vm_script" wait "$vm" 300); then pass; echo "ssh ready after ${seconds}s"; else
  fail "the VM did not answer ssh"; finish; exit 1
fi
booted=$(ssh -F "$vm/ssh_config" vm uname -r)
[ "$booted" = "$release" ] && pass || fail "the VM runs '$booted', expected the image's default kernel '$release'"
first_boot=$(ssh -F "$vm/ssh_config" vm cat /proc/sys/kernel/random/boot_id)

"$vm_script" reset "$vm" && pass || fail "test-vm.sh reset failed"
if seconds=$("$vm_script" wait "$vm" 300); then pass; echo "ssh ready ${seconds}s after the reset"; else
  fail "the VM did not come back after the reset"
fi
second_boot=$(ssh -F "$vm/ssh_config" vm cat /proc/sys/kernel/random/boot_id)
[ -n "$second_boot" ] && [ "$second_boot" != "$first_boot" ] && pass ||
  fail "the boot id did not change across the reset ('$first_boot', then '$second_boot')"
booted=$(ssh -F "$vm/ssh_config" vm uname -r)
[ "$booted" = "$release" ] && pass || fail "after the reset the VM runs '$booted', expected '$release'"
[ "$(grep -c 'kbench-vm login:' "$vm/console.log")" -ge 2 ] && pass ||
  fail "console.log does not hold both boots (it is appended to across resets)"

pid=$(cat "$vm/qemu.pid")
"$vm_script" stop "$vm"
if kill -0 "$pid" 2>/dev/null; then fail "QEMU (pid $pid) still runs after test-vm.sh stop"; else pass; fi
[ "$(stat -c %Y "$cache_dir/image.raw")" = "$image_mtime" ] && pass || fail "the cached image.raw was modified"
echo "test-vm e2e took $((SECONDS - started))s"
finish

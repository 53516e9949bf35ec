method=$1; img=$2; initrd=$3; cmdline=$4; d=$5; start=$6
if [ -n "$d" ]; then activate "$d" "$(cat "$d/release")"; fi
case $method in
  kexec)
    command -v kexec >/dev/null 2>&1 || { echo "boot method kexec needs kexec-tools on the SUT" >&2; exit 3; }
    if [ -n "$initrd" ]; then kexec -l "$img" --initrd="$initrd" --command-line="$cmdline" || exit 3
    else kexec -l "$img" --command-line="$cmdline" || exit 3; fi
    if [ -r /sys/kernel/kexec_loaded ] && [ "$(cat /sys/kernel/kexec_loaded)" != 1 ]; then echo "kexec -l did not load the kernel (/sys/kernel/kexec_loaded is 0; Secure Boot lockdown refuses unsigned kernels)" >&2; exit 3; fi
    if command -v systemctl >/dev/null 2>&1; then go="systemctl kexec || kexec -e"; else go="kexec -e"; fi ;;
  reboot)
    command -v grub-reboot >/dev/null 2>&1 || { echo "boot method reboot needs GRUB (grub-reboot) on the SUT" >&2; exit 3; }
    e=/boot/kbench/entry-$(printf %s "$img $initrd $cmdline" | sha256sum | cut -c1-16)
    # One entry at a time: an earlier one was booted once already, and /boot
    # is often a small partition.
    for o in /boot/kbench/entry-*; do [ "$o" = "$e" ] || rm -rf "$o"; done
    nospace="(is /boot full? $(df -h /boot 2>/dev/null | awk 'NR == 2 { print $4 " free" }'))"
    mkdir -p "$e" && cp "$img" "$e/vmlinuz" || { echo "copying the kernel to $e failed $nospace" >&2; exit 3; }
    if [ -n "$initrd" ]; then cp "$initrd" "$e/initrd.img" || { echo "copying the initramfs to $e failed $nospace" >&2; exit 3; }; fi
    # GRUB's script syntax would expand $ and choke on quotes in a word:
    # each word single-quoted, so the kernel gets exactly $cmdline.
    set -f
    q=
    for w in $cmdline; do q="$q '$(printf %s "$w" | sed "s/'/'\\\\''/g")'"; done
    set +f
    printf %s "${q# }" > "$e/cmdline"
    cat > /etc/grub.d/45_kbench <<EOF2
#!/bin/sh
# Menu entries for the kernels kbench boots once each (grub-reboot); the
# default entry is not changed. Removed when kbench restores the SUT.
set -e
. /usr/share/grub/grub-mkconfig_lib
for e in /boot/kbench/entry-*; do
  [ -f "\$e/vmlinuz" ] || continue
  p=\$(make_system_path_relative_to_its_root "\$e")
  echo "menuentry \"kbench \${e##*/}\" --id \"kbench-\${e##*/}\" {"
  prepare_grub_to_access_device "\$GRUB_DEVICE_BOOT" | sed "s/^/\t/"
  echo "	linux \$p/vmlinuz \$(cat "\$e/cmdline")"
  [ -f "\$e/initrd.img" ] && echo "	initrd \$p/initrd.img"
  echo "}"
done
EOF2
    chmod 755 /etc/grub.d/45_kbench
    if command -v update-grub >/dev/null 2>&1; then update-grub >&2; else grub-mkconfig -o /boot/grub/grub.cfg >&2; fi ||
      { echo "update-grub failed: the one-shot GRUB entry for $img is not in /boot/grub/grub.cfg" >&2; exit 3; }
    grub-reboot "kbench-${e##*/}" || { echo "grub-reboot kbench-${e##*/} failed" >&2; exit 3; }
    go="systemctl reboot || reboot" ;;
  default)
    go="systemctl reboot || reboot" ;;
esac
if [ "$start" = queue ]; then
  # The target itself, not `systemctl kexec`: that asks logind over D-Bus
  # first, and on a machine without D-Bus it reports a failure and then
  # boots all the same.
  case $method in
    kexec) target=kexec.target ;;
    *) target=reboot.target ;;
  esac
  # The shutdown this starts stops the resume unit (or the ssh session)
  # kbench runs in at once: its SIGTERM must not end this script before it
  # reports that the boot was queued.
  trap '' TERM HUP INT
  systemctl --no-block start --job-mode=replace-irreversibly "$target" ||
    { echo "systemctl did not take the $method job ($target)" >&2; exit 3; }
  echo booting
  exit 0
fi
nohup sh -c "sleep 1; $go" >/dev/null 2>&1 </dev/null &
echo booting
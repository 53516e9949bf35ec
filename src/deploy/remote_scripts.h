#pragma once
// The POSIX sh that runs on an ssh SUT to install and boot kernels. Each is
// run as `sh -c SCRIPT kbench ARGS...` through kAsRoot. Exit status 3 means
// the SUT cannot do what was asked (a missing tool, a clash): its stderr's
// last line says why, for the user.
namespace kbench::deploy::scripts {

// Runs the script in $1 with the remaining arguments as root: directly, or
// through sudo -n (never prompts) for a non-root ssh user.
inline constexpr const char* kAsRoot = R"sh(s=$1; shift
if [ "$(id -u)" -eq 0 ]; then exec sh -c "$s" kbench "$@"; fi
command -v sudo >/dev/null 2>&1 || { echo "kbench needs root on the SUT to install kernels: log in as root or allow passwordless sudo" >&2; exit 3; }
exec sudo -n sh -c "$s" kbench "$@")sh";

// Where the SUT keeps what kbench staged: one directory per kernel content.
inline constexpr const char* kStageRoot = "/var/lib/kbench/kernels";

// What the SUT runs now and what it has: key=value lines.
inline constexpr const char* kProbe = R"sh(r=$(uname -r)
echo "release=$r"
echo "version=$(uname -v)"
echo "machine=$(uname -m)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
echo "cmdline=$(cat /proc/cmdline)"
for t in kexec systemctl mkinitramfs dracut grub-reboot grub-mkconfig update-grub dpkg-deb depmod tar sha256sum; do
  command -v "$t" >/dev/null 2>&1 && echo "tool=$t"
done
[ -e "/boot/vmlinuz-$r" ] && echo "image=/boot/vmlinuz-$r"
[ -e "/boot/initrd.img-$r" ] && echo "initrd=/boot/initrd.img-$r"
[ -e "/boot/initramfs-$r.img" ] && echo "initrd=/boot/initramfs-$r.img"
exit 0)sh";

// $1 stage dir, $2 file name: stdin into the stage dir, then its sha256.
// A stage dir with "ready" in it is complete and is reused as it is.
inline constexpr const char* kReceiveFile = R"sh(d=$1; f=$2
umask 022
mkdir -p "$d" || exit 1
cat > "$d/$f.part" || exit 1
mv "$d/$f.part" "$d/$f"
sha256sum "$d/$f")sh";

// $1 stage dir: prints "ready RELEASE" when staged before, else "missing".
inline constexpr const char* kStageState = R"sh(d=$1
if [ -f "$d/ready" ]; then echo "ready $(cat "$d/release")"; else echo missing; fi)sh";

// Puts the stage's modules at /lib/modules/RELEASE, where the kernel, depmod
// and the initramfs tools look: a copy, not a link, so that module loading
// never depends on /var being mounted. The copy is marked as kbench's; a
// release the SUT has installed itself (no mark) is never replaced. A copy of
// the same stage is kept, so only two builds of one release alternating cost
// a copy per boot. Defines activate(); $1 stage dir, $2 release.
inline constexpr const char* kActivateFunction = R"sh(activate() {
  m=/lib/modules/$2
  if [ -e "$m" ] || [ -L "$m" ]; then
    if [ ! -f "$m/.kbench-stage" ]; then echo "release $2 is installed on the SUT itself ($m is not kbench's); a deployed kernel needs a release of its own (CONFIG_LOCALVERSION)" >&2; exit 3; fi
    [ "$(cat "$m/.kbench-stage")" = "$1" ] && return 0
    rm -rf "$m"
  fi
  mkdir -p /lib/modules
  cp -a "$1/modules" "$m.kbench-part"
  echo "$1" > "$m.kbench-part/.kbench-stage"
  mv "$m.kbench-part" "$m"
  if command -v depmod >/dev/null 2>&1; then depmod "$2"; fi
}
)sh";

// $1 stage dir, $2 kind (deb | image), $3 release the controller read from
// the image ("" when it could not). Unpacks what was received into
// vmlinuz, modules/ (with the config in it, where the fingerprint finds it)
// and initrd.img made by the SUT's own tool, then marks the stage ready.
inline constexpr const char* kUnpack = R"sh(set -e
d=$1; kind=$2; rel=$3
cd "$d"
rm -rf unpacked modules vmlinuz initrd.img ready release
mkdir unpacked
case $kind in
  deb)
    command -v dpkg-deb >/dev/null 2>&1 || { echo "a .deb kernel needs dpkg-deb on the SUT; give the image and a modules tarball instead" >&2; exit 3; }
    dpkg-deb -x kernel.deb unpacked
    img=$(ls unpacked/boot/vmlinuz-* 2>/dev/null | head -n 1)
    [ -n "$img" ] || { echo "the .deb holds no boot/vmlinuz-*: not a kernel image package" >&2; exit 3; }
    rel=${img##*/vmlinuz-}
    mv "$img" vmlinuz
    if [ -f "unpacked/boot/config-$rel" ]; then cp "unpacked/boot/config-$rel" config; fi ;;
  image)
    mv image vmlinuz
    if [ -f modules.tar ]; then
      tar -xf modules.tar -C unpacked
      m=$(ls -d unpacked/lib/modules/* unpacked/usr/lib/modules/* 2>/dev/null | head -n 1)
      [ -n "$m" ] || { echo "the modules tarball holds no lib/modules/RELEASE directory" >&2; exit 3; }
      mrel=${m##*/}
      if [ -n "$rel" ] && [ "$rel" != "$mrel" ]; then echo "the modules are for release $mrel but the image is $rel" >&2; exit 3; fi
      rel=$mrel
    fi ;;
esac
[ -n "$rel" ] || { echo "cannot tell the kernel release: give kernel.release in the swprofile, or a modules tarball" >&2; exit 3; }
for m in "unpacked/lib/modules/$rel" "unpacked/usr/lib/modules/$rel"; do
  if [ -d "$m" ]; then mv "$m" modules; fi
done
mkdir -p modules
if [ -f config ]; then cp config modules/config; fi
rm -rf unpacked kernel.deb modules.tar
)sh";

// Continues kUnpack (after kActivateFunction): modules in place, initramfs.
inline constexpr const char* kUnpackFinish = R"sh(activate "$d" "$rel"
# initramfs-tools reads the kernel's config from /boot to pick a compression
# the kernel can unpack: lent there for the run when the SUT has none.
lent=
if [ -f config ] && [ ! -e "/boot/config-$rel" ]; then cp config "/boot/config-$rel"; lent="/boot/config-$rel"; fi
status=0
if command -v mkinitramfs >/dev/null 2>&1; then
  mkinitramfs -o initrd.img "$rel" >&2 || status=$?
elif command -v dracut >/dev/null 2>&1; then
  dracut --force --kver "$rel" initrd.img >&2 || status=$?
else
  echo "no mkinitramfs or dracut on the SUT: booting without an initramfs" >&2
fi
if [ -n "$lent" ]; then rm -f "$lent"; fi
if [ "$status" -ne 0 ] || { [ -e initrd.img ] && [ ! -s initrd.img ]; }; then
  rm -f initrd.img
  if [ -f config ]; then echo "making the initramfs for $rel failed (status $status)" >&2
  else echo "making the initramfs for $rel failed (status $status); give kernel.config: initramfs tools read the kernel config" >&2; fi
  exit 3
fi
echo "$rel" > release
touch ready
echo "staged $rel")sh";

// $1 method (kexec | reboot | default: a plain reboot into the SUT's
// default entry), $2 image, $3 initrd ("" for none), $4 the
// whole cmdline, $5 stage dir ("" for a kernel the SUT has installed),
// $6 how the boot starts: "" (ssh) in the background after a second, so the
// ssh session ends before the SUT goes down; "queue" (the machine kbench
// runs on) as a systemd job, so the boot needs no process of kbench's: the
// kbench that asked for it exits, and a resume unit's cgroup is stopped with
// nothing left in it that the boot depends on.
// Loads the kernel, starts the boot and returns.
inline constexpr const char* kBoot = R"sh(method=$1; img=$2; initrd=$3; cmdline=$4; d=$5; start=$6
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
echo booting)sh";

// Waits (at most 150 s) for the boot's start-up jobs to finish: systemd's
// is-system-running --wait returns once the system is running or degraded.
inline constexpr const char* kSettle = R"sh(if command -v systemctl >/dev/null 2>&1; then
  timeout 150 systemctl is-system-running --wait >/dev/null 2>&1
fi
exit 0)sh";

// What the booted SUT runs: uname -r, uname -v, /proc/cmdline, boot id.
inline constexpr const char* kIdentify = R"sh(echo "release=$(uname -r)"
echo "version=$(uname -v)"
echo "cmdline=$(cat /proc/cmdline)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)")sh";

// After the plan: the one-shot GRUB entries go, and the modules kbench put
// in /lib/modules (the stages stay for the next plan).
inline constexpr const char* kCleanup = R"sh(if [ -f /etc/grub.d/45_kbench ]; then
  rm -f /etc/grub.d/45_kbench; rm -rf /boot/kbench
  if command -v update-grub >/dev/null 2>&1; then update-grub >&2; else grub-mkconfig -o /boot/grub/grub.cfg >&2; fi
fi
for m in /lib/modules/*; do
  [ -f "$m/.kbench-stage" ] && [ "${m##*/}" != "$(uname -r)" ] && rm -rf "$m"
done
exit 0)sh";

// $1..: name=value sysctls to set after a boot (a fresh boot has the
// defaults, so nothing needs restoring).
inline constexpr const char* kSysctl = R"sh(for kv in "$@"; do
  k=${kv%%=*}; v=${kv#*=}
  p=/proc/sys/$(printf %s "$k" | tr . /)
  [ -e "$p" ] || { echo "sysctl $k: $p does not exist on the SUT's kernel" >&2; exit 3; }
  printf "%s\n" "$v" > "$p" || { echo "sysctl $k: writing $p failed" >&2; exit 3; }
done)sh";

}  // namespace kbench::deploy::scripts

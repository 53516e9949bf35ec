#!/usr/bin/env bash
# A QEMU "lab machine" for the end-to-end tests of kernel deployment: a small
# Debian 12 (bookworm) system with sshd, kexec-tools and initramfs-tools,
# booted under TCG with a virtio disk and ssh forwarded to a loopback port.
#
#   test-vm.sh build [CACHE_DIR]   build the root filesystem image once (cached;
#                                  an edit of this script rebuilds it); prints
#                                  CACHE_DIR, which then holds image.raw, vmlinuz,
#                                  initrd.img, release (the default kernel's
#                                  uname -r), id_ed25519{,.pub} (root's key),
#                                  grub.iso (the boot medium of the grub mode)
#   test-vm.sh kernels [CACHE_DIR] `apt-get download` two other Debian cloud
#                                  kernel packages of two different releases
#                                  (cached); prints their two .deb paths
#   test-vm.sh start DIR [CACHE_DIR]
#                                  boot the VM in the background: DIR/disk.qcow2
#                                  is an overlay on the cached image (which stays
#                                  unchanged); writes DIR/ssh_port, DIR/qemu.pid,
#                                  DIR/ssh_config (`ssh -F DIR/ssh_config vm`),
#                                  DIR/console.log (appended across reboots),
#                                  DIR/qmp.sock (the QEMU monitor). QEMU quits
#                                  when the calling process (or the pid in
#                                  $KBENCH_TEST_VM_OWNER) is gone
#   test-vm.sh wait DIR [SECONDS]  wait until ssh answers (default 300 s); prints
#                                  the seconds it took; on timeout exits 1 with
#                                  the console tail on stderr
#   test-vm.sh reset DIR           QEMU monitor system_reset: a power cycle. The
#                                  VM comes back up in the default kernel (QEMU's
#                                  -kernel; in the grub mode GRUB's default entry,
#                                  or a pending grub-reboot entry), whatever was
#                                  kexec'ed before
#   test-vm.sh stop DIR            quit QEMU and wait for it to exit
#
# CACHE_DIR defaults to $KBENCH_TEST_VM_CACHE, else /var/cache/kbench-test/vm
# for root, else ~/.cache/kbench/test-vm. `build` needs root (mmdebstrap,
# mkfs.ext4 -d with root-owned files); it installs mmdebstrap, qemu-utils,
# grub-common and xorriso (grub-mkrescue) when missing.
# KBENCH_TEST_ACCEL picks QEMU's accelerator (default tcg), KBENCH_TEST_VM_CPUS the
# guest's vCPUs (default 1), KBENCH_TEST_VM_CPU their model (default
# max).
#
# KBENCH_TEST_VM_BOOT=grub (for `start`) boots through real GRUB instead of
# QEMU's -kernel, so that update-grub, grub-reboot and a reboot pick the next
# kernel as on a lab machine: SeaBIOS starts GRUB from grub.iso (grub-mkrescue),
# whose config finds the disk by its label (the image is a bare ext4, no
# partition table), points $prefix at its /boot/grub and runs the disk's own
# grub.cfg; that one loads and saves /boot/grub/grubenv (next_entry) as an
# installed GRUB does. The image carries GRUB's userspace (grub-pc-bin,
# grub2-common: update-grub, grub-reboot, ...) and the modules in
# /boot/grub/i386-pc, but nothing is written to a boot sector. Its first
# grub.cfg is written at build (grub-probe cannot probe a chroot) with the
# cmdline update-grub makes in the VM: root=/dev/vda ro console=ttyS0 quiet.
set -euo pipefail

script_path=$(readlink -f "$0")
python=/usr/bin/python3

die() { echo "test-vm: $*" >&2; exit 2; }

default_cache_dir() {
  if [ -n "${KBENCH_TEST_VM_CACHE:-}" ]; then echo "$KBENCH_TEST_VM_CACHE"
  elif [ "$(id -u)" -eq 0 ]; then echo /var/cache/kbench-test/vm
  else echo "${XDG_CACHE_HOME:-$HOME/.cache}/kbench/test-vm"; fi
}

# Installs the Debian packages providing the given commands (command:package).
need_commands() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair##*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages: ${missing[*]} (run as root, or install them)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
}

# The bookworm suites this machine's apt uses, as one-line sources for
# mmdebstrap ("deb URI SUITE main"): only Debian's mirror is reachable in CI,
# and it is whatever apt here is configured with. Both the one-line and the
# deb822 formats; disabled files (other suffixes) are ignored.
host_sources() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                       print $i, $(i + 1) }' "$file"
  done
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk 'function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no")
                              for (u in uris) for (s in suites) print uris[u], suites[s]
                            delete uris; delete suites; types = ""; enabled = "" }
         /^[ \t]*$/ { flush(); next }
         /^#/ { next }
         tolower($1) == "types:" { $1 = ""; types = $0 }
         tolower($1) == "enabled:" { enabled = tolower($2) }
         tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris[i] = $i }
         tolower($1) == "suites:" { for (i = 2; i <= NF; i++) suites[i] = $i }
         END { flush() }' "$file"
  done
}

mmdebstrap_sources() {
  local lines
  lines=$(host_sources | awk '$2 ~ /^bookworm(-updates|-security)?$/ { print "deb " $1 " " $2 " main" }' | sort -u)
  if [ -z "$lines" ]; then
    lines="deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main"
  fi
  echo "$lines"
}

apt_names() {  # apt_names REGEX: package names apt knows, version-sorted
  apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V
}

# The VM's default kernel: the newest 6.1 cloud kernel ABI.
default_kernel_package() {
  apt_names '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' | tail -n 1
}

ensure_package_lists() {
  if [ -z "$(default_kernel_package)" ] && [ "$(id -u)" -eq 0 ]; then apt-get update -qq >&2; fi
  [ -n "$(default_kernel_package)" ] ||
    { echo "test-vm: no linux-image-6.1.0-*-cloud-amd64 package known to apt (run apt-get update)" >&2; exit 1; }
}

# The image depends on these functions only: editing start, wait or reset
# does not rebuild it.
script_hash() {
  declare -f need_commands host_sources mmdebstrap_sources apt_names default_kernel_package \
    ensure_package_lists cmd_build | sha256sum | cut -c1-16
}

cmd_build() {
  local cache_dir=${1:-$(default_cache_dir)}
  mkdir -p "$cache_dir"
  cache_dir=$(readlink -f "$cache_dir")
  # Two test runs building at once: the second waits and then finds the image.
  exec {lock}>"$cache_dir/.lock"
  flock "$lock"
  local hash; hash=$(script_hash)
  if [ "$(cat "$cache_dir/built-by" 2>/dev/null)" = "$hash" ] && [ -f "$cache_dir/image.raw" ]; then
    echo "$cache_dir"
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || die "build needs root (mmdebstrap, root-owned files in the image); not cached in $cache_dir"
  need_commands mmdebstrap:mmdebstrap qemu-img:qemu-utils mkfs.ext4:e2fsprogs \
    grub-mkrescue:grub-common xorriso:xorriso
  ensure_package_lists
  local started=$SECONDS kernel_package
  kernel_package=$(default_kernel_package)
  echo "test-vm: building the bookworm image with $kernel_package into $cache_dir" >&2
  rm -f "$cache_dir"/{built-by,image.raw,vmlinuz,initrd.img,release,id_ed25519,id_ed25519.pub,grub.iso}
  ssh-keygen -q -t ed25519 -N '' -C kbench-test-vm -f "$cache_dir/id_ed25519"

  local work; work=$(mktemp -d "$cache_dir/build.XXXXXX")
  # shellcheck disable=SC2064  # expand now: $work is local
  trap "rm -rf '$work'" EXIT
  local root=$work/root
  mmdebstrap_sources >"$work/sources.list"

  # Before any package is installed: kexec-tools must not load a kernel at
  # every reboot (which would turn each reboot into a kexec of the default),
  # and initramfs-tools builds small images with an explicit module list (the
  # build host's hardware says nothing about the VM's) and no resume device
  # to look for (the VM has no swap) — conf.d, since initramfs.conf itself
  # is a conffile.
  local essential_hook
  essential_hook=$(cat <<'HOOK'
set -e
printf '%s\n' 'kexec-tools kexec-tools/load_kexec boolean false' \
  'kexec-tools kexec-tools/use_grub_config boolean false' | chroot "$1" debconf-set-selections
mkdir -p "$1/etc/initramfs-tools/conf.d"
printf '%s\n' 'MODULES=list' 'COMPRESS=gzip' 'RESUME=none' >"$1/etc/initramfs-tools/conf.d/kbench-test-vm.conf"
HOOK
)
  local customize_hook
  customize_hook=$(cat <<'HOOK'
set -e
echo kbench-vm >"$1/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tkbench-vm\n' >"$1/etc/hosts"
# No fsck pass: every test boots a throwaway overlay, and with none the
# initramfs-tools fsck hook copies nothing (under TCG it cost ~9 s of each
# kernel staged, besides the check at each boot).
echo '/dev/vda / ext4 rw,errors=remount-ro 0 0' >"$1/etc/fstab"
printf '%s\n' '[Match]' 'Name=en* eth*' '' '[Network]' 'DHCP=ipv4' >"$1/etc/systemd/network/20-wired.network"
chroot "$1" systemctl enable systemd-networkd.service
# Nothing in the VM waits for "network online"; its wait would only delay boots.
chroot "$1" systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_all.timer e2scrub_reap.service fstrim.timer man-db.timer
# Every unit costs seconds of each boot under TCG (7 boots per deploy test),
# and a timer firing mid-session is noise the tests do not need: no gettys
# (ssh is the way in), no module probes the VM has no use for, no utmp
# runlevel record, no kexec-load (LOAD_KEXEC=false makes it a no-op that
# still costs a shell start), no daily cleanups.
chroot "$1" systemctl mask getty-static.service getty@tty1.service serial-getty@ttyS0.service \
  modprobe@loop.service modprobe@dm_mod.service modprobe@fuse.service modprobe@drm.service \
  modprobe@configfs.service modprobe@efi_pstore.service systemd-update-utmp-runlevel.service \
  kexec-load.service dpkg-db-backup.timer systemd-tmpfiles-clean.timer
echo 'LOAD_KEXEC=false' >"$1/etc/default/kexec"
# The modules the VM's kernel needs to find its root, for any kernel release
# (the network's and the rest udev loads from the root file system).
printf '%s\n' virtio_pci virtio_blk crc32c_generic ext4 >>"$1/etc/initramfs-tools/modules"
chroot "$1" update-initramfs -u -k all
mkdir -p -m 700 "$1/root/.ssh"
# GRUB as update-grub should configure it in the VM: no menu wait, serial
# console, root by device (/dev/vda) as the -kernel mode boots it.
mkdir -p "$1/etc/default/grub.d"
cat >"$1/etc/default/grub.d/kbench-test-vm.cfg" <<'CFG'
GRUB_DEFAULT=0
GRUB_TIMEOUT=0
GRUB_TERMINAL="serial console"
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_CMDLINE_LINUX="console=ttyS0"
GRUB_CMDLINE_LINUX_DEFAULT="quiet"
GRUB_DISABLE_LINUX_UUID=true
GRUB_DISABLE_RECOVERY=true
GRUB_DISABLE_OS_PROBER=true
CFG
# What grub-install would put there: the modules GRUB loads from $prefix.
mkdir -p "$1/boot/grub"
cp -r "$1/usr/lib/grub/i386-pc" "$1/boot/grub/"
chroot "$1" grub-editenv /boot/grub/grubenv create
release=$(ls "$1"/boot/vmlinuz-* | head -n 1); release=${release##*/vmlinuz-}
cat >"$1/boot/grub/grub.cfg" <<CFG
# Written by kbench's test-vm.sh at image build; update-grub replaces it.
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
if [ -s \$prefix/grubenv ]; then
  load_env
fi
if [ "\${next_entry}" ] ; then
  set default="\${next_entry}"
  set next_entry=
  save_env next_entry
else
  set default="0"
fi
set timeout=0
menuentry 'Debian GNU/Linux' --id gnulinux-simple {
	insmod gzio
	insmod ext2
	linux /boot/vmlinuz-$release root=/dev/vda ro console=ttyS0 quiet
	initrd /boot/initrd.img-$release
}
CFG
HOOK
)
  # kbench's runtime libraries (ldd build/kbench) and sqlite3: the local-SUT
  # deploy test runs a host-built kbench inside the VM and reads its store there.
  local kbench_runtime=libyaml-cpp0.7,libfmt9,libsqlite3-0,libpq5,libcpp-httplib0.11,sqlite3
  mmdebstrap --variant=minbase --mode=root --format=directory \
    --aptopt='APT::Install-Recommends "false"' \
    --include=systemd-sysv,udev,openssh-server,kexec-tools,initramfs-tools,kmod,iproute2,procps,grub-pc-bin,grub2-common,"$kbench_runtime","$kernel_package" \
    --essential-hook="$essential_hook" \
    --customize-hook="$customize_hook" \
    --customize-hook="copy-in $cache_dir/id_ed25519.pub /root/.ssh" \
    --customize-hook='mv "$1/root/.ssh/id_ed25519.pub" "$1/root/.ssh/authorized_keys"; chmod 600 "$1/root/.ssh/authorized_keys"' \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages' \
    bookworm "$root" "$work/sources.list" >"$work/mmdebstrap.log" 2>&1 ||
    { tail -n 40 "$work/mmdebstrap.log" >&2; echo "test-vm: mmdebstrap failed" >&2; exit 1; }

  local release
  release=$(ls "$root"/boot/vmlinuz-* | head -n 1); release=${release##*/vmlinuz-}
  cp "$root/boot/vmlinuz-$release" "$cache_dir/vmlinuz"
  cp "$root/boot/initrd.img-$release" "$cache_dir/initrd.img"
  # The grub mode's boot medium, from the image's own GRUB (the same build as
  # the modules in its /boot/grub): finds the disk by label, hands over to it.
  cat >"$work/iso-grub.cfg" <<'CFG'
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
search --no-floppy --label kbench-vm --set=root
set prefix=($root)/boot/grub
configfile $prefix/grub.cfg
CFG
  grub-mkrescue -d "$root/usr/lib/grub/i386-pc" -o "$work/grub.iso" \
    "boot/grub/grub.cfg=$work/iso-grub.cfg" >"$work/grub-mkrescue.log" 2>&1 ||
    { cat "$work/grub-mkrescue.log" >&2; echo "test-vm: grub-mkrescue failed" >&2; exit 1; }
  mv "$work/grub.iso" "$cache_dir/grub.iso"
  # Deployed kernels (modules, initramfs) go into the image: 1.5 GiB spare.
  local used_mib
  used_mib=$(du -sm "$root" | cut -f1)
  mkfs.ext4 -q -F -L kbench-vm -d "$root" "$work/image.raw" "$((used_mib + 1536))M" >&2
  mv "$work/image.raw" "$cache_dir/image.raw"
  echo "$release" >"$cache_dir/release"
  echo "$hash" >"$cache_dir/built-by"
  rm -rf "$work"
  trap - EXIT
  echo "test-vm: built in $((SECONDS - started))s" >&2
  echo "$cache_dir"
}

# Two other cloud kernels of two different releases than the default: the
# newest 6.12 and the newest older 6.1 ABI. -unsigned: the same kernels without
# the Secure Boot signature, which is all kexec needs.
cmd_kernels() {
  local cache_dir=${1:-$(default_cache_dir)}
  mkdir -p "$cache_dir/debs"
  cache_dir=$(readlink -f "$cache_dir")
  exec {lock}>"$cache_dir/.lock"
  flock "$lock"
  ensure_package_lists
  local default_abi packages
  default_abi=$(default_kernel_package); default_abi=${default_abi#linux-image-}
  packages=(
    "$(apt_names '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' | tail -n 1)"
    "$(apt_names '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' | grep -vF "$default_abi" | tail -n 1)"
  )
  local package deb
  for package in "${packages[@]}"; do
    [ -n "$package" ] || { echo "test-vm: apt knows no second cloud kernel release" >&2; exit 1; }
    deb=$(ls "$cache_dir/debs/${package}"_*.deb 2>/dev/null | head -n 1 || true)
    if [ -z "$deb" ]; then
      chmod 755 "$cache_dir/debs"  # apt downloads as the _apt user when it can
      (cd "$cache_dir/debs" && apt-get download -q "$package" >&2)
      deb=$(ls "$cache_dir/debs/${package}"_*.deb | head -n 1)
    fi
    echo "$deb"
  done
}

free_loopback_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# qmp DIR COMMAND: one QMP command to the VM's monitor; returns once QEMU
# answered it.
qmp() {
  "$python" - "$1/qmp.sock" "$2" <<'PY'
import json, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
sock.connect(sys.argv[1])
stream = sock.makefile("rw")
def reply():
    while True:
        line = stream.readline()
        if not line:
            raise SystemExit("QEMU closed the monitor")
        message = json.loads(line)
        if "return" in message or "error" in message:
            return message
stream.readline()  # the greeting
for command in ("qmp_capabilities", sys.argv[2]):
    stream.write(json.dumps({"execute": command}) + "\n"); stream.flush()
    message = reply()
    if "error" in message:
        raise SystemExit(f"QEMU refused {command}: {message['error']}")
PY
}

qemu_running() { [ -f "$1/qemu.pid" ] && kill -0 "$(cat "$1/qemu.pid")" 2>/dev/null; }

cmd_start() {
  local dir=${1:?usage: test-vm.sh start DIR [CACHE_DIR]}
  local cache_dir=${2:-$(default_cache_dir)}
  local boot=${KBENCH_TEST_VM_BOOT:-kernel}
  case $boot in
    kernel | grub) ;;
    *) die "KBENCH_TEST_VM_BOOT is '$boot': expected kernel or grub" ;;
  esac
  [ -f "$cache_dir/image.raw" ] || die "no VM image in $cache_dir (run test-vm.sh build first)"
  [ "$boot" != grub ] || [ -f "$cache_dir/grub.iso" ] ||
    die "no grub.iso in $cache_dir (an image built before the grub mode: run test-vm.sh build)"
  mkdir -p "$dir"
  dir=$(readlink -f "$dir"); cache_dir=$(readlink -f "$cache_dir")
  local boot_args=(-kernel "$cache_dir/vmlinuz" -initrd "$cache_dir/initrd.img" -append "root=/dev/vda rw console=ttyS0 quiet")
  # SeaBIOS boots the CD (GRUB), which boots the virtio disk's grub.cfg.
  [ "$boot" = grub ] && boot_args=(-drive file="$cache_dir/grub.iso",media=cdrom,readonly=on,if=ide -boot order=d)
  if qemu_running "$dir"; then die "a VM already runs from $dir (pid $(cat "$dir/qemu.pid"))"; fi
  rm -f "$dir/disk.qcow2" "$dir/qmp.sock" "$dir/qemu.pid" "$dir/known_hosts"
  qemu-img create -q -f qcow2 -F raw -b "$cache_dir/image.raw" "$dir/disk.qcow2"
  local port attempt
  for attempt in 1 2 3; do
    port=$(free_loopback_port)
    # One vCPU: the VM tests run two at a time on two host cores, and there a
    # guest with two vCPUs (two TCG threads) ran a fork+exec and gzip loop in
    # 31-33 s where a guest with one ran it in 12-15 s (likely: four TCG
    # threads on two cores wait on each other for the guest's cross-CPU TLB
    # flushes; not traced). Alone,
    # two vCPUs are a little faster (ssh up in 15-18 s instead of 22-35 s):
    # KBENCH_TEST_VM_CPUS=2.
    # The CPU model is max. qemu64 with rdtscp boots a quarter faster alone (ssh
    # after 17.5-21.7 s against 23.7-28.8 s), but e2e_deploy_reboot failed
    # on it in two of three runs: once the GRUB one-shot boot of the staged
    # kernel gave no ssh answer within 6 minutes (console: GRUB's "Booting"
    # line, then nothing under `quiet`; max's took 40 s), once the test hit
    # ctest's 15-minute limit. Not traced further.
    if qemu-system-x86_64 -name kbench-test-vm -machine q35,accel="${KBENCH_TEST_ACCEL:-tcg}" \
        -cpu "${KBENCH_TEST_VM_CPU:-max}" -m 1G -smp "${KBENCH_TEST_VM_CPUS:-1}" -nodefaults -display none -no-user-config \
        "${boot_args[@]}" \
        -drive file="$dir/disk.qcow2",if=virtio,format=qcow2,cache=unsafe \
        -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$port"-:22 -device virtio-net-pci,netdev=net0 \
        -chardev file,id=console,path="$dir/console.log",append=on -serial chardev:console \
        -qmp unix:"$dir/qmp.sock",server=on,wait=off \
        -pidfile "$dir/qemu.pid" -daemonize 2>"$dir/qemu.err"; then
      break
    fi
    grep -q 'host forwarding' "$dir/qemu.err" && [ "$attempt" -lt 3 ] && continue
    cat "$dir/qemu.err" >&2
    exit 1
  done
  echo "$port" >"$dir/ssh_port"
  # A test killed at its timeout (ctest's kill runs no EXIT trap) must not
  # leave its VM running beside the next tests: a watchdog quits QEMU once
  # the process that started it (KBENCH_TEST_VM_OWNER, default the caller)
  # is gone.
  local owner=${KBENCH_TEST_VM_OWNER:-$PPID} qemu_pid
  qemu_pid=$(cat "$dir/qemu.pid")
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do kill -0 "$2" 2>/dev/null || exit 0; sleep 5; done
                  kill "$2" 2>/dev/null' watchdog "$owner" "$qemu_pid" </dev/null >/dev/null 2>&1 &
  cat >"$dir/ssh_config" <<EOF
Host vm
  HostName 127.0.0.1
  Port $port
  User root
  IdentityFile $cache_dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking accept-new
  ConnectTimeout 10
  BatchMode yes
  LogLevel ERROR
EOF
  echo "test-vm: started, pid $(cat "$dir/qemu.pid"), ssh -F $dir/ssh_config vm" >&2
}

cmd_wait() {
  local dir=${1:?usage: test-vm.sh wait DIR [SECONDS]} timeout=${2:-300}
  [ -f "$dir/ssh_config" ] || die "no VM started in $dir (no ssh_config)"
  local started=$SECONDS
  while [ $((SECONDS - started)) -lt "$timeout" ]; do
    qemu_running "$dir" || { echo "test-vm: QEMU is not running" >&2; tail -n 30 "$dir/console.log" >&2 || true; exit 1; }
    # A short connect timeout: while the guest boots, QEMU's user network
    # accepts the connection and ssh would wait for the banner that long.
    if timeout 20 ssh -F "$dir/ssh_config" -o ConnectTimeout=3 vm true 2>/dev/null; then
      echo "$((SECONDS - started))"
      return 0
    fi
    sleep 1
  done
  echo "test-vm: no ssh after ${timeout}s; console tail:" >&2
  tail -n 30 "$dir/console.log" >&2 || true
  exit 1
}

cmd_reset() {
  local dir=${1:?usage: test-vm.sh reset DIR}
  qemu_running "$dir" || die "no VM runs from $dir"
  qmp "$dir" system_reset
}

cmd_stop() {
  local dir=${1:?usage: test-vm.sh stop DIR}
  qemu_running "$dir" || return 0
  local pid; pid=$(cat "$dir/qemu.pid")
  qmp "$dir" quit 2>/dev/null || kill "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 100 ]; then kill -9 "$pid" 2>/dev/null || true; fi
    sleep 0.1; waited=$((waited + 1))
  done
  rm -f "$dir/qemu.pid"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  build) cmd_build "$@" ;;
  kernels) cmd_kernels "$@" ;;
  start) cmd_start "$@" ;;
  wait) cmd_wait "$@" ;;
  reset) cmd_reset "$@" ;;
  stop) cmd_stop "$@" ;;
  *) die "unknown command '${command}': expected build, kernels, start, wait, reset or stop" ;;
esac

#!/usr/bin/env bash
# Fetches a stock Debian kernel image for the QEMU end-to-end tests:
# `apt-get download` of the newest linux-image-*-<arch>-unsigned package
# (download only, nothing is installed), vmlinuz (and its config) extracted
# with dpkg-deb into a cache dir.
# Prints the path of the kernel image.
# Usage: fetch-test-kernel.sh [--arch amd64|arm64] [CACHE_DIR]
# The cache lives outside the clone, so a fresh clone (CI) reuses it: root's
# is /var/cache/kbench-test, anyone else's under ~/.cache; arm64 goes to its
# arm64/ subdirectory (the amd64 lookup takes the newest vmlinuz-* of the
# top directory, which must stay amd64 only).
# `make test` calls this and hands the path to ctest as KBENCH_TEST_KERNEL.
#
# --arch arm64 (tests/e2e/qemu_arm64.sh, qemu-system-aarch64): the kernel of
# linux-image-*-arm64-unsigned plus the aarch64 busybox the VM's initramfs
# needs, from busybox-static:arm64 (downloaded, not installed), as
# <dir>/busybox. The qemu connection's results channel on aarch64 is a
# virtio-serial port; Debian builds VIRTIO_CONSOLE and VIRTIO_PCI into its
# arm64 kernel (=y), so no module is needed, and this script checks that
# instead of assuming it. Debian multiarch must know arm64
# (`dpkg --add-architecture arm64 && apt-get update`); as root the script
# does that itself.
set -euo pipefail

arch=amd64
if [ "${1:-}" = "--arch" ]; then
  arch=${2:-}
  shift 2 || true
fi
case "$arch" in
  amd64 | arm64) ;;
  *) echo "fetch-test-kernel: --arch: expected amd64 or arm64, got '$arch'" >&2; exit 2 ;;
esac

if [ "$(id -u)" -eq 0 ]; then default_cache=/var/cache/kbench-test
else default_cache=${XDG_CACHE_HOME:-$HOME/.cache}/kbench/test-kernel; fi
if [ "$arch" = arm64 ]; then default_cache=$default_cache/arm64; fi
cache_dir=${1:-$default_cache}
mkdir -p "$cache_dir"

existing=$(ls "$cache_dir"/vmlinuz-*-"$arch" 2>/dev/null | sort -V | tail -n 1 || true)
if [ -n "$existing" ] && { [ "$arch" = amd64 ] || [ -x "$cache_dir/busybox" ]; }; then
  echo "$existing"
  exit 0
fi

if [ "$arch" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "fetch-test-kernel: Debian multiarch lacks arm64 (as root: dpkg --add-architecture arm64 && apt-get update)" >&2
    exit 1
  fi
  dpkg --add-architecture arm64
  apt-get update -qq >&2
fi

# The flavour with the plain Debian config, not cloud or rt: the newest ABI.
newest_package() {
  apt-cache search --names-only "^linux-image-[0-9][0-9.+a-z-]*-$arch-unsigned\$" 2>/dev/null |
    awk '{print $1}' | grep -v -e cloud -e '-rt-' | sort -V | tail -n 1 || true
}
package=$(newest_package)
# A fresh Debian machine has no package lists yet.
if [ -z "$package" ] && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq >&2
  package=$(newest_package)
fi
if [ -z "$package" ]; then
  echo "fetch-test-kernel: no linux-image-*-$arch-unsigned package known to apt (run apt-get update)" >&2
  exit 1
fi

work=$(mktemp -d)
chmod 755 "$work"  # apt downloads as the _apt user when it can
trap 'rm -rf "$work"' EXIT
packages=("$package:$arch")
if [ "$arch" = arm64 ]; then packages+=(busybox-static:arm64); fi
(cd "$work" && apt-get download -q "${packages[@]}" >&2)
dpkg-deb -x "$(ls "$work"/linux-image-*.deb)" "$work/root"
image=$(ls "$work"/root/boot/vmlinuz-* | head -n 1)
release=${image##*/vmlinuz-}
config=$work/root/boot/config-$release
if [ "$arch" = arm64 ]; then
  for option in CONFIG_VIRTIO_CONSOLE CONFIG_VIRTIO_PCI CONFIG_PCI_HOST_GENERIC CONFIG_SERIAL_AMBA_PL011_CONSOLE; do
    if ! grep -qx "$option=y" "$config"; then
      echo "fetch-test-kernel: $package: $option is not built in ($(grep "^$option=" "$config" || echo unset));" \
        "the qemu connection's aarch64 results channel (virtio-serial over PCI) needs it" >&2
      exit 1
    fi
  done
  dpkg-deb -x "$(ls "$work"/busybox-static_*.deb)" "$work/busybox"
  cp "$work/busybox/bin/busybox" "$cache_dir/busybox"
fi
# The config next to the image: the qemu connection puts it into the VM, so
# that the swprofile's kernel config hash is recorded.
if [ -f "$config" ]; then cp "$config" "$cache_dir/"; fi
cp "$image" "$cache_dir/"
echo "$cache_dir/$(basename "$image")"

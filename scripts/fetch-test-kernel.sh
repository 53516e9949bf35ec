#!/usr/bin/env bash
# Fetches a stock Debian kernel image for the QEMU end-to-end test:
# `apt-get download` of the newest linux-image-*-amd64-unsigned package (download
# only, nothing is installed), vmlinuz (and its config) extracted with dpkg-deb
# into a cache dir.
# Prints the path of the kernel image. Usage: fetch-test-kernel.sh [CACHE_DIR]
# The cache lives outside the clone, so a fresh clone (CI) reuses it: root's
# is /var/cache/kbench-test, anyone else's under ~/.cache.
# `make test` calls this and hands the path to ctest as KBENCH_TEST_KERNEL.
set -euo pipefail

if [ "$(id -u)" -eq 0 ]; then default_cache=/var/cache/kbench-test
else default_cache=${XDG_CACHE_HOME:-$HOME/.cache}/kbench/test-kernel; fi
cache_dir=${1:-$default_cache}
mkdir -p "$cache_dir"

existing=$(ls "$cache_dir"/vmlinuz-* 2>/dev/null | sort -V | tail -n 1 || true)
if [ -n "$existing" ]; then
  echo "$existing"
  exit 0
fi

# The flavour with the plain Debian config, not cloud or rt: the newest ABI.
newest_package() {
  apt-cache search --names-only '^linux-image-[0-9][0-9.+a-z-]*-amd64-unsigned$' 2>/dev/null |
    awk '{print $1}' | grep -v -e cloud -e '-rt-' | sort -V | tail -n 1 || true
}
package=$(newest_package)
# A fresh Debian machine has no package lists yet.
if [ -z "$package" ] && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq >&2
  package=$(newest_package)
fi
if [ -z "$package" ]; then
  echo "fetch-test-kernel: no linux-image-*-amd64-unsigned package known to apt (run apt-get update)" >&2
  exit 1
fi

work=$(mktemp -d)
chmod 755 "$work"  # apt downloads as the _apt user when it can
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q "$package" >&2)
deb=$(ls "$work"/*.deb)
dpkg-deb -x "$deb" "$work/root"
image=$(ls "$work"/root/boot/vmlinuz-* | head -n 1)
release=${image##*/vmlinuz-}
# The config next to the image: the qemu connection puts it into the VM, so
# that the swprofile's kernel config hash is recorded.
if [ -f "$work/root/boot/config-$release" ]; then cp "$work/root/boot/config-$release" "$cache_dir/"; fi
cp "$image" "$cache_dir/"
echo "$cache_dir/$(basename "$image")"

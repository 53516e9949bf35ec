#!/bin/busybox sh
# The initramfs's /init in the VM that the qemu method boots: this file, then
# the results channel of the guest's architecture (init_results_*.sh), then
# init_run.sh, joined by src/sut/qemu.cpp. Busybox sh: POSIX sh and
# busybox's applets, which the next line installs.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
ip link set lo up 2>/dev/null

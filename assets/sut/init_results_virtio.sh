# aarch64: QEMU's virt board has one PL011 UART, which is the console. The
# results go over a virtio-serial port instead: Debian's arm64 kernel has
# VIRTIO_CONSOLE and VIRTIO_PCI built in (=y; only VIRTIO_MMIO is a module),
# and the virt board's PCIe host bridge (PCI_HOST_GENERIC=y) carries
# virtio-serial-pci, so no module has to be loaded. A virtserialport is a
# byte pipe, not a tty: nothing to set raw. The driver adds ports from a
# workqueue when QEMU announces them, which can be after /init starts, so
# /init waits for the port QEMU names org.kbench.results (kResultsPortName in
# src/sut/qemu.cpp) for up to 10 s and says on the console when it never came.
results=
for _ in $(seq 1 100); do
  for port in /sys/class/virtio-ports/vport*; do
    [ "$(cat "$port/name" 2>/dev/null)" = org.kbench.results ] && results=/dev/${port##*/}
  done
  [ -n "$results" ] && [ -c "$results" ] && break
  results=
  sleep 0.1
done
if [ -z "$results" ]; then
  echo "kbench /init: no virtio-serial port named org.kbench.results appeared (CONFIG_VIRTIO_CONSOLE?)" >/dev/console
  poweroff -f
fi

# qemu: after the exit frame the VM powers itself off, and QEMU exits.
sleep 0.2
poweroff -f

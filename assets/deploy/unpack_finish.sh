activate "$d" "$rel"
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
echo "staged $rel"
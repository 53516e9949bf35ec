set -e
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

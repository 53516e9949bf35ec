d=$1; f=$2
umask 022
mkdir -p "$d" || exit 1
cat > "$d/$f.part" || exit 1
mv "$d/$f.part" "$d/$f"
sha256sum "$d/$f"
# Reads the agent from stdin into a fresh private directory and prints the
# directory and the SUT's own checksum of what arrived.
umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/kbench.XXXXXXXX") || exit 1
cat > "$d/kbench-agent" || { rm -rf "$d"; exit 1; }
chmod 700 "$d/kbench-agent"
echo "dir $d"
command -v sha256sum >/dev/null 2>&1 || { echo "no sha256sum on the SUT" >&2; rm -rf "$d"; exit 3; }
sha256sum "$d/kbench-agent"
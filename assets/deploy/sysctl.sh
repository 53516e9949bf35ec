for kv in "$@"; do
  k=${kv%%=*}; v=${kv#*=}
  p=/proc/sys/$(printf %s "$k" | tr . /)
  [ -e "$p" ] || { echo "sysctl $k: $p does not exist on the SUT's kernel" >&2; exit 3; }
  printf "%s\n" "$v" > "$p" || { echo "sysctl $k: writing $p failed" >&2; exit 3; }
done
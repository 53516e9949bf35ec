activate() {
  m=/lib/modules/$2
  if [ -e "$m" ] || [ -L "$m" ]; then
    if [ ! -f "$m/.kbench-stage" ]; then echo "release $2 is installed on the SUT itself ($m is not kbench's); a deployed kernel needs a release of its own (CONFIG_LOCALVERSION)" >&2; exit 3; fi
    [ "$(cat "$m/.kbench-stage")" = "$1" ] && return 0
    rm -rf "$m"
  fi
  mkdir -p /lib/modules
  cp -al "$1/modules" "$m.kbench-part" 2>/dev/null || { rm -rf "$m.kbench-part"; cp -a "$1/modules" "$m.kbench-part"; }
  echo "$1" > "$m.kbench-part/.kbench-stage"
  mv "$m.kbench-part" "$m"
  if command -v depmod >/dev/null 2>&1; then depmod "$2"; fi
}

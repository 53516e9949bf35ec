# Runs the agent with the arguments in /kbench/args and sends what it says
# over the results channel ($results), one frame a line:
# "<tag> <crc32 of payload> <payload>", tags KBS1 (init started), KBO1 (agent
# stdout line), KBE1 (agent stderr line), KBX1 (agent exit status). The relay
# in src/sut/qemu.cpp (lava.cpp) passes on only frames whose checksum holds,
# so kernel console noise or a corrupted line never reaches the store. An
# init_end_*.sh fragment follows: how the boot ends.
frame() {
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s %s %s\n' "$1" "$(printf '%s' "$line" | crc32)" "$line"
  done
}
exec 3>$results
echo "init $(uname -r)" | frame KBS1 >&3
. /kbench/args
# /tmp was made and mounted above; should it still be missing, the console
# says so rather than the agent running somewhere unexpected.
cd /tmp || { echo "kbench /init: cannot cd to /tmp" >/dev/console; poweroff -f; }
{ /kbench/kbench-agent "$@" 2>/tmp/agent.err </dev/null; echo $? > /tmp/agent.status; } | frame KBO1 >&3
frame KBE1 < /tmp/agent.err >&3
frame KBX1 < /tmp/agent.status >&3
exec 3>&-
